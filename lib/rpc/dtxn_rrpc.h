/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DTXN_RRPC_H
#define DTXN_RRPC_H

/**
 * @file
 * RRPC: Scythe's RPC over RDMA WRITE into message rings (Scythe §4.6;
 * ../shared/papers/scythe.md §4; doc/guides/rpc.md), a second CN-to-CN
 * transport beside lib/rpc's SEND/RECV (dtxn_rpc.h), with the same call
 * and handler types, so a protocol picks one at run time.
 *
 * Shape:
 * - a domain (struct dtxn_rrpc_domain) per fabric: the registered message
 *   memory of every CN (dtxn_fabric_cn_mr_reg()), laid out as one ring
 *   per (receiving worker, sending node);
 * - one struct dtxn_rrpc per worker lcore, with one Rocket per other CN:
 *   the outbound ring state (buckets being filled, sealed, posted) and a
 *   one-sided QP to that CN on the worker's CQ. Worker k of one CN writes
 *   to worker k of the others, as in lib/rpc;
 * - messages are batched into 512 B buckets (rrpc_private.h): one bucket
 *   is one batch and one WRITE; the buckets one flush sends to one CN go
 *   out as one chain of WRITEs, one doorbell. A length label at the start
 *   and at the end of each bucket lets the receiver take only complete
 *   buckets (a torn WRITE is not delivered);
 * - the receiver's poller (on its worker's lcore) takes complete buckets
 *   in order, runs the handlers of requests and batches their replies into
 *   its own buckets back, flushed at the end of the poll; replies wake
 *   their coordinators;
 * - flow control: a bucket's header carries how many buckets of the
 *   reverse ring its sender has consumed (the producer's credit); a
 *   consumer with nothing to send back WRITEs its count (8 B, inline)
 *   into the producer's memory after half a ring;
 * - coordinators that call together share a flush: the first one yields
 *   once, so that every ready coroutine of the lcore can add its
 *   messages, then posts every ring's buckets (one doorbell per CN).
 *
 * Modes (Scythe §4.6): (a) pure RPC: dtxn_rrpc_call_lc(), requests up to
 * DTXN_RRPC_REQ_MAX bytes; (b) RPC + one-sided READ: a handler returns a
 * remote address and the caller READs it (a WR of the caller's own batch:
 * nothing RRPC-specific); (c) zero-copy: dtxn_rrpc_call_zc_lc(), the reply
 * WRITten by the server into the caller's registered buffer.
 *
 * RC WRITEs are reliable and in order, so there are no resends and no
 * timeouts: a call fails only when its WRITE cannot be posted.
 *
 * Thread-safety: a domain is built and destroyed on the main lcore; an
 * rrpc, its endpoints and handlers belong to the worker's lcore (calls
 * ending in _lc yield, from the endpoint's coordinator's coroutine).
 * Single process only (the embedded cluster on shm or sim). With
 * mn_ring_off, also to the MNs' CPUs (the MN side below, rrpc_mn.c).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dtxn_rpc.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Bytes of one bucket: one message batch, one WRITE. */
#define DTXN_RRPC_BUCKET_BYTES 512
/** Default buckets per ring. */
#define DTXN_RRPC_BUCKETS_DEFAULT 64
/** Largest request payload, bytes (a bucket holding only it). */
#define DTXN_RRPC_REQ_MAX 484

struct dtxn_rrpc_domain;
struct dtxn_rrpc;
struct dtxn_rrpc_ep;

/** Configuration of a domain. */
struct dtxn_rrpc_domain_conf {
	size_t size;           /**< sizeof(struct dtxn_rrpc_domain_conf) */
	unsigned max_workers;  /**< workers per CN that will create an rrpc, 1..1024 */
	unsigned buckets;      /**< per ring, power of two, 8..4096; 0: default */
	int socket_id;         /**< NUMA socket of the message memory */
	/**
	 * Mode (c), zero-copy (dtxn_rrpc_call_zc_lc()): bytes of the reply
	 * buffer of each slot of each zero-copy endpoint, in the CN's
	 * registered memory; a multiple of 64, up to DTXN_RRPC_ZC_MAX. 0:
	 * no zero-copy calls.
	 */
	uint32_t zc_bytes;
	/** Endpoints per worker that may make zero-copy calls (ids 0 .. zc_eps - 1), with zc_bytes. */
	unsigned zc_eps;
	/**
	 * RRPC to the MNs: offset of the message area in every MN region
	 * (struct dtxn_catalog msg_off, of at least dtxn_rrpc_mn_area_bytes()
	 * bytes), where each CN worker has a ring; its rrpc then also has a
	 * Rocket to every MN (requests only: an MN answers, through
	 * dtxn_rrpc_mn_create()'s service). 0: CN-to-CN only.
	 */
	uint64_t mn_ring_off;
};

/** Largest zero-copy reply, bytes. */
#define DTXN_RRPC_ZC_MAX (1u << 20)

/** Counters of one worker's rrpc (cumulative since create). */
struct dtxn_rrpc_stats {
	uint64_t req_sent;      /**< requests put in buckets */
	uint64_t req_handled;   /**< requests handled */
	uint64_t resp_recv;     /**< replies matched to a waiting call */
	uint64_t buckets;       /**< buckets sent (one WRITE each) */
	uint64_t doorbells;     /**< WR chains posted */
	uint64_t credits;       /**< standalone credit WRITEs */
	uint64_t bad;           /**< malformed buckets or messages dropped */
	uint64_t zc_writes;     /**< zero-copy reply WRITEs posted (server side) */
	uint64_t zc_bytes;      /**< their bytes */
	uint64_t zc_torn;       /**< zero-copy replies whose data did not match their completion (-EIO) */
};

/**
 * Creates the domain of fabric @p f: for each CN, max_workers x (n_mn +
 * n_cn) rings of 64 + buckets x DTXN_RRPC_BUCKET_BYTES bytes, zeroed and
 * registered (dtxn_fabric_cn_mr_reg()). Main lcore, before the workers.
 * On a multi-process fabric (--role cn / mn) nothing is allocated here:
 * a CN process reserves its own CN's memory as a named memzone when its
 * first rrpc is created, and an MN's service (dtxn_rrpc_mn_create())
 * looks it up and registers it when that CN's first request lands; the
 * rrpcs then have Rockets to the MNs only (no CN-to-CN rings).
 *
 * @return the domain, or NULL with rte_errno: EINVAL (NULL or short
 *   conf, max_workers or buckets out of range), ENOMEM, ENOTSUP (a
 *   multi-process fabric with no MN rings (mn_ring_off 0), with zc_bytes,
 *   or whose incarnation is not 0: a restarted CN cannot rejoin the
 *   rings), EEXIST (a CN's memory is registered already).
 */
struct dtxn_rrpc_domain *dtxn_rrpc_domain_create(struct dtxn_fabric *f,
						 const struct dtxn_rrpc_domain_conf *conf);

/** Deregisters and frees the domain (every rrpc destroyed). NULL is a no-op. */
void dtxn_rrpc_domain_destroy(struct dtxn_rrpc_domain *d);

/**
 * Creates the rrpc of worker @p w: a QP to every other CN on @p w's CQ
 * and a poller on its scheduler. On the worker's lcore or the main lcore
 * before the run.
 *
 * @return the rrpc, or NULL with rte_errno: EINVAL (NULL argument, worker
 *   index >= max_workers, worker of another fabric, or a ring too small
 *   for the worker's endpoints: buckets < dtxn_worker_max_coords(w) x
 *   DTXN_RPC_SLOTS / 2), EEXIST (that worker has one), ENOMEM, ENOSPC (no
 *   poller left), or the fabric's errno.
 */
struct dtxn_rrpc *dtxn_rrpc_create(struct dtxn_rrpc_domain *d, struct dtxn_worker *w);

/** Destroys an rrpc (the worker's loop has returned). NULL is a no-op. */
void dtxn_rrpc_destroy(struct dtxn_rrpc *r);

/**
 * Registers the handler of message type @p type (lib/rpc's handler type;
 * it runs in the poller, must not yield; RRPC never delivers a request
 * twice, so it need not be idempotent).
 * @return 0, -EINVAL (type >= DTXN_RPC_TYPES, NULL fn or rrpc), -EEXIST.
 */
int dtxn_rrpc_register(struct dtxn_rrpc *r, uint8_t type, dtxn_rpc_handler_fn fn, void *arg);

/**
 * Creates the endpoint of coordinator @p c (DTXN_RPC_SLOTS outstanding
 * requests). At most dtxn_worker_max_coords() per rrpc.
 * @return it, or NULL with rte_errno EINVAL, ENOSPC, ENOMEM.
 */
struct dtxn_rrpc_ep *dtxn_rrpc_ep_create(struct dtxn_rrpc *r, struct dtxn_coord *c);

/** Frees an endpoint with no call in flight. NULL is a no-op. */
void dtxn_rrpc_ep_destroy(struct dtxn_rrpc_ep *ep);

/**
 * Sends @p n requests (struct dtxn_rpc_call: req_len up to
 * DTXN_RRPC_REQ_MAX) and yields until every one has its reply: one round
 * trip for the batch, requests to one CN in as few buckets as fit, one
 * doorbell per CN. Waits (yielding) for a free slot or ring room.
 * From the endpoint's coordinator's coroutine.
 *
 * @return 0 if every call got a reply; else the first failing call's
 *   status (-EINVAL bad call, -ENOTCONN no such CN, or a post error).
 */
int dtxn_rrpc_call_lc(struct dtxn_rrpc_ep *ep, struct dtxn_rpc_call *calls, unsigned n);

/**
 * Mode (c), zero-copy (Scythe §4.6: "fixed-size > 512 B: the request
 * carries the CN address; the MN WRITEs the data there"). The handler of
 * a zero-copy request writes up to @p cap bytes of reply to @p out (the
 * server's staging copy of the requester's slot) and returns how many, or
 * a negative value to refuse (the call fails with -EIO). Runs in the
 * poller like any handler; must not yield; never called twice for one
 * request.
 */
typedef int (*dtxn_rrpc_zc_fn)(void *arg, uint16_t src_node, const void *req, uint32_t len,
			       void *out, uint32_t cap);

/**
 * Registers the zero-copy handler of message type @p type (a table apart
 * from dtxn_rrpc_register()'s: a type may have both).
 * @return 0, -EINVAL (type >= DTXN_RPC_TYPES, NULL fn or rrpc), -EEXIST.
 */
int dtxn_rrpc_register_zc(struct dtxn_rrpc *r, uint8_t type, dtxn_rrpc_zc_fn fn, void *arg);

/** One request of a dtxn_rrpc_call_zc_lc() batch. */
struct dtxn_rrpc_zc_call {
	uint16_t dst_node;   /**< a CN node id, not the caller's */
	uint8_t type;        /**< message type (a zero-copy handler there) */
	const void *req;     /**< payload (copied at the call) */
	uint32_t req_len;    /**< 0..DTXN_RRPC_ZC_REQ_MAX */
	const void *data;    /**< out: the reply, in the slot's registered buffer; valid until
			      *   the endpoint's next call */
	uint32_t data_len;   /**< out: its bytes, 0..zc_bytes */
	int status;          /**< out: 0, -EINVAL, -ENOTCONN, -ENOSPC (no zero-copy buffers),
			      *   -EIO (refused, or data that did not land whole), a post error */
};

/** Largest zero-copy request payload (a bucket holding it and the reply address). */
#define DTXN_RRPC_ZC_REQ_MAX (DTXN_RRPC_REQ_MAX - 16)

/**
 * Mode (c): sends @p n requests whose replies the servers WRITE into this
 * endpoint's registered reply buffers (one per slot, zc_bytes each), then
 * a small completion (length and CRC32-C of the data) in their ring
 * bucket behind it on the same RC QP, so the data has landed when the
 * completion is taken. The caller reads the reply in place (no copy, no
 * READ); a completion whose CRC does not match the buffer (data that did
 * not land whole) fails the call with -EIO instead of delivering torn
 * bytes. Yields until every call has its reply. From the endpoint's
 * coordinator's coroutine.
 *
 * @return 0 if every call got its reply; else the first failing call's
 *   status.
 */
int dtxn_rrpc_call_zc_lc(struct dtxn_rrpc_ep *ep, struct dtxn_rrpc_zc_call *calls, unsigned n);

/** Copies the counters into @p st. Owning lcore, or after it stopped. */
void dtxn_rrpc_stats_get(const struct dtxn_rrpc *r, struct dtxn_rrpc_stats *st);

struct dtxn_footprint;

/**
 * Adds what RRPC allocates on a fabric of @p n_mn MNs and @p n_cn CNs of
 * @p workers_per_cn workers with @p max_eps endpoints each, rings of
 * @p buckets buckets (0: the default), no zero-copy buffers: to
 * @p per_cn the CN's share of the domain (its registered message
 * memory); to @p per_worker one rrpc with its endpoints, a Rocket and a
 * QP per other CN, a Rocket per MN when @p to_mns, and then also its
 * Rocket in each MN's service (dtxn_rrpc_mn_create()). Upper bound. Any
 * thread, no EAL needed.
 * @return 0, or -EINVAL (a NULL footprint, an argument 0 or out of range).
 */
int dtxn_rrpc_footprint(unsigned n_mn, unsigned n_cn, unsigned workers_per_cn, unsigned max_eps,
			unsigned buckets, bool to_mns, struct dtxn_footprint *per_cn,
			struct dtxn_footprint *per_worker);

/* ------------------------------------------------------------------ */
/* RRPC to the MNs: the MN side (rrpc_mn.c)                           */
/* ------------------------------------------------------------------ */

/*
 * A CN worker's requests to an MN (dtxn_rrpc_call_lc() with an MN's node
 * id, in a domain with mn_ring_off) are WRITten, bucket by bucket, into
 * the worker's ring in the MN region's message area; the MN's CPU polls
 * those rings (dtxn_rrpc_mn_poll()), hands each batch of requests to one
 * batch handler (lib/rpc's struct dtxn_rpc_srv_msg and
 * dtxn_rpc_srv_batch_fn, so a service serves both transports with one
 * handler), and WRITEs the replies, batched into buckets, into the
 * worker's ring for that MN in the CN's registered memory: one chain of
 * WRITEs per CN worker per poll. The rings' credits flow as between CNs.
 * A WRITE into the message area wakes the MN's thread in the simulation
 * (dtxn_fabric_mn_watch() kicks the service's CQ).
 *
 * Thread-safety: a service belongs to the thread that polls it; create
 * it on the main lcore after the domain, destroy it there while no poll
 * runs (before or after the domain: it keeps nothing of it). Single
 * process (the domain's).
 */

struct dtxn_rrpc_mn;

/**
 * Bytes of the message area an MN region needs for the rings of @p n_cn
 * CNs of @p workers_per_cn workers with @p buckets buckets per ring (0:
 * the default), what a protocol returns from dtxn_cc_ops.mn_msg_bytes.
 * Any thread, no EAL needed.
 * @return the bytes, or 0 if an argument is 0 or out of range (buckets
 *   not a power of two in 8..4096, workers over 1024).
 */
uint64_t dtxn_rrpc_mn_area_bytes(unsigned n_cn, unsigned workers_per_cn, unsigned buckets);

/** Configuration of an MN's RRPC service. */
struct dtxn_rrpc_mn_conf {
	size_t size;              /**< sizeof(struct dtxn_rrpc_mn_conf) */
	uint16_t mn;              /**< the MN, < n_mn; its region is mapped in this process */
	/**
	 * The CQ the service's QPs (to every CN) complete on, kicked when a
	 * WRITE lands in the message area (the simulation steps the thread
	 * that polls it); e.g. the MN's lib/rpc server's (dtxn_rpc_srv_cq()).
	 */
	struct dtxn_cq *cq;
	/** Scheduler of the polling thread, charged in virtual time; NULL: none. */
	struct dtxn_sched *sched;
	/**
	 * The batch handler (at most DTXN_RPC_SRV_BURST messages a call).
	 * A message left with a negative resp_len is answered with an empty
	 * reply (RRPC never times out; deferring is not offered).
	 */
	dtxn_rpc_srv_batch_fn fn;
	void *arg;
	int socket_id;
};

/**
 * Creates MN @p conf->mn's RRPC service in domain @p d (which has
 * mn_ring_off): a QP to every CN on conf->cq, a Rocket per CN worker, and
 * the watch of the MN's message area. Main lcore, before the run.
 * @return the service, or NULL with rte_errno: EINVAL (NULL or short
 *   conf, no MN rings in @p d, mn not an MN or its region not mapped
 *   here, NULL fn or cq), EEXIST (the area is watched already), ENOMEM,
 *   or the fabric's errno.
 */
struct dtxn_rrpc_mn *dtxn_rrpc_mn_create(struct dtxn_rrpc_domain *d,
					 const struct dtxn_rrpc_mn_conf *conf);

/** Destroys a service no thread polls (before or after its domain). NULL is a no-op. */
void dtxn_rrpc_mn_destroy(struct dtxn_rrpc_mn *m);

/**
 * Takes the complete buckets of every ring, hands their requests to the
 * handler in batches of up to DTXN_RPC_SRV_BURST, puts the replies in
 * buckets and posts them, one chain per CN worker. Never blocks. The
 * polling thread.
 * @return requests handled (0: idle).
 */
unsigned dtxn_rrpc_mn_poll(struct dtxn_rrpc_mn *m);

/** Copies the service's counters into @p st (req_handled, buckets, doorbells, credits, bad). */
void dtxn_rrpc_mn_stats_get(const struct dtxn_rrpc_mn *m, struct dtxn_rrpc_stats *st);

#ifdef __cplusplus
}
#endif
#endif /* DTXN_RRPC_H */
