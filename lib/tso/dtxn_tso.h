/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DTXN_TSO_H
#define DTXN_TSO_H

/**
 * @file
 * The timestamp oracle (TSO) the MVCC protocols share (Motor, Lotus,
 * Scythe; ARCHITECTURE.md, "lib/rpc, lib/tso"): one 64-bit counter on an
 * MN, advanced with one-sided FAA, and leader batching of the concurrent
 * requests of the coordinators of one worker lcore (Scythe §4.5, "TSO
 * Group"; ../shared/papers/scythe.md §3).
 *
 * Timestamps are the integers 1, 2, 3, ... (Motor §5: "sequential numbers
 * as transaction timestamps ... also adopted as data versions"). Each
 * call returns a timestamp no other call in the cluster returns, larger
 * than every timestamp whose call returned before this call began (the
 * FAA that produces it is posted after the request): a coordinator that
 * got ts a, and then asks again, or another coordinator that asks after
 * a was returned, gets a larger one. That real-time order is what Motor's
 * snapshot reads and validation rely on (doc/guides/motor.md).
 *
 * Batching: Scythe's TSO Group (§4.5), one group per worker lcore. The
 * first coordinator that asks while no FAA of this worker is in flight
 * becomes the leader: it yields once, so that every coroutine of the
 * lcore that is ready at that moment can join the group (each one that
 * asks queues behind the leader), then takes the queued requests (up to
 * max_batch - 1), posts one FAA of n = 1 + that many on the counter,
 * yields until it completes, and hands out old + 1 (its own), old + 2,
 * ... in queue order. Requests that arrive while the FAA is in flight
 * queue for the next one; when the leader is done it makes the first
 * queued coordinator the next leader (no extra yield: its group formed
 * during the flight). So one worker has at most one FAA in flight, and n
 * requesters that ask together cost one FAA. With max_batch 1 there is no
 * group: every request posts its own FAA at once, several in flight (the
 * baseline that shows what the group saves: FAAs, not latency).
 *
 * Why per-lcore groups and not one lock-free (MPSC) list per CN, the
 * design choice of rule 3 (ARCHITECTURE.md: no locks and no cross-lcore
 * traffic on the data path): a CN-wide list would make a follower on
 * lcore B wait for a leader on lcore A: the leader would hand timestamps
 * across lcores (a cache-line transfer per follower) and B's scheduler
 * would have to poll a flag written by A, on the data path of every
 * timestamp. What it would save is FAAs, and FAAs are not the
 * bottleneck: the counter is in the RNIC's device memory, whose atomic
 * unit serves about 110 Mops (Scythe §4.5; config/nic/cx5.ini
 * dm_atomic_mops), while a group of C coroutines per lcore already needs
 * only 1/C FAA per timestamp (64 clients as 8 lcores x 8 coroutines: at
 * most 8 FAAs per round trip). Throughput is clients / latency either
 * way (each client waits for one FAA round trip), so the per-lcore group
 * loses nothing measurable (doc/guides/tso.md, Fig. 28) and keeps each
 * lcore's state its own.
 *
 * Where the counter lives: reserved word DTXN_STORE_RSVD_TSO of MN 0
 * (dtxn_tso_counter_raddr()), inside the first DTXN_FABRIC_DM_BYTES of the
 * region, which stand for the RNIC's device memory (ConnectX-5
 * ibv_alloc_dm): the NIC model of the shm and sim drivers serves its FAAs
 * with the device-memory atomic unit (doc/guides/fabric.md).
 *
 * Where else the counter may live: the fetch_add hook of struct
 * dtxn_tso_conf replaces the FAA, and struct dtxn_tso_cn below is the
 * service Motor §5 and Lotus §5 assume "in the compute pool": a counter in
 * one CN's memory, served to the other CNs by RPC.
 *
 * Thread-safety: a struct dtxn_tso belongs to one worker lcore; its
 * coordinators call dtxn_tso_get_lc() from their coroutines. A struct
 * dtxn_tso_cn is shared by every worker of the process.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dtxn_fabric.h"
#include "dtxn_rpc.h"
#include "dtxn_store.h"
#include "dtxn_txn_driver.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Default and largest number of timestamps one FAA hands out. */
#define DTXN_TSO_BATCH_DEFAULT 64
#define DTXN_TSO_BATCH_MAX 4096

/** Configuration of a worker's TSO client. */
struct dtxn_tso_conf {
	size_t size;            /**< sizeof(struct dtxn_tso_conf) */
	dtxn_raddr_t counter;   /**< the counter (dtxn_tso_counter_raddr()), != 0 */
	unsigned max_batch;     /**< most timestamps per FAA, 1..DTXN_TSO_BATCH_MAX (1: no group); 0: default */
	int socket_id;          /**< NUMA socket of the client's memory */
	/**
	 * Optional (additive, issue 7): a counter that is not an MN word,
	 * e.g. Lotus's timestamp service "deployed in the compute pool" (Lotus
	 * §5; doc/guides/lotus.md): the leader calls it instead of posting the
	 * FAA, from its own coroutine (it may yield), with the batch's size
	 * @p n; it stores the counter's value before adding @p n in @p old and
	 * returns 0, or -errno (-EIO, -ENOBUFS, -ETIMEDOUT: the whole batch
	 * fails with it). It must add atomically and after being called, so
	 * that the real-time order above holds. With it, @c counter may be 0.
	 * NULL: the FAA on @c counter.
	 */
	int (*fetch_add)(void *arg, struct dtxn_coord *c, uint64_t n, uint64_t *old);
	void *fetch_add_arg;    /**< fetch_add's first argument */
	/**
	 * Optional (TSO proxies, below): how many proxies a leader may pick
	 * besides the TSO, 0..DTXN_TSO_PROXIES_MAX. Each batch goes to the TSO
	 * (the FAA, or fetch_add) or to proxy i (proxy_fetch_add(arg, c, i, n,
	 * &old), same contract as fetch_add), uniformly at random among the
	 * n_proxies + 1. 0: the TSO only.
	 */
	unsigned n_proxies;
	int (*proxy_fetch_add)(void *arg, struct dtxn_coord *c, unsigned proxy, uint64_t n,
			       uint64_t *old);
	void *proxy_arg;        /**< proxy_fetch_add's first argument */
	uint64_t seed;          /**< of the random pick (a run is deterministic given it) */
};

/**
 * A request's place in the client's queue: one per coordinator, kept by
 * the caller (e.g. in its per-coordinator state) and passed to every
 * dtxn_tso_get_lc() of that coordinator. Its fields are the client's.
 */
struct dtxn_tso_req {
	struct dtxn_tso_req *next;
	struct dtxn_coord *c;
	uint64_t ts;
	int err;
	bool done;
	bool lead;
};

/** Counters of one TSO client (cumulative since create). */
struct dtxn_tso_stats {
	uint64_t requests;      /**< timestamps handed out */
	uint64_t faas;          /**< FAAs posted (batches) */
	uint64_t max_batch;     /**< largest batch served by one FAA */
	uint64_t errors;        /**< FAAs that completed with an error */
	uint64_t proxied;       /**< batches sent to a proxy instead of the TSO */
};

/**
 * Remote address of the cluster's timestamp counter: reserved word
 * DTXN_STORE_RSVD_TSO of MN 0 (dtxn_store_rsvd_raddr()). Zero at start,
 * so the first timestamp is 1. Any thread.
 *
 * @return the address, or 0 if @p cat is NULL or has no MN.
 */
dtxn_raddr_t dtxn_tso_counter_raddr(const struct dtxn_catalog *cat);

/**
 * Creates the TSO client of one worker lcore.
 *
 * @return the client, or NULL with rte_errno: EINVAL (NULL or short
 *   @p conf, counter 0 or not 8-byte aligned, max_batch over
 *   DTXN_TSO_BATCH_MAX, n_proxies over DTXN_TSO_PROXIES_MAX or without
 *   proxy_fetch_add), ENOMEM.
 */
struct dtxn_tso *dtxn_tso_create(const struct dtxn_tso_conf *conf);

struct dtxn_footprint;

/** Adds to @p fp (dtxn_sched.h) what one dtxn_tso_create() allocates. Any thread. */
void dtxn_tso_footprint(struct dtxn_footprint *fp);

/** Frees a client no coordinator is waiting in. NULL is a no-op. */
void dtxn_tso_destroy(struct dtxn_tso *tso);

/**
 * Gets one timestamp for coordinator @p c, yielding until it is known
 * (one FAA round trip, shared with the worker's other coordinators that
 * ask meanwhile). Called from @p c's own coroutine, on the worker's lcore
 * (no other batch of @p c may be under construction: the FAA is posted
 * through a struct dtxn_batch of @p c).
 *
 * @param req  @p c's request record (struct dtxn_tso_req), not in use by
 *   another call.
 * @param ts   out: the timestamp (>= 1), set only on success.
 * @return 0; -EINVAL (NULL argument); -EIO (the FAA failed; this and
 *   every request batched with it get -EIO); -ENOBUFS (no WR left in the
 *   leader's pool).
 */
int dtxn_tso_get_lc(struct dtxn_tso *tso, struct dtxn_coord *c, struct dtxn_tso_req *req,
		    uint64_t *ts);

/**
 * dtxn_tso_get_lc() for a transaction's coordinator, with its error as an
 * abort reason (dtxn_batch_reason(): what a protocol's execute or commit
 * returns).
 * @return DTXN_OK, DTXN_ABORT_TOO_LARGE (-ENOBUFS) or DTXN_ABORT_FABRIC.
 */
int dtxn_tso_txn_ts(struct dtxn_tso *tso, struct dtxn_txn *t, struct dtxn_tso_req *req,
		    uint64_t *ts);

/** Copies the client's counters into @p st. Owning lcore, or after it stopped. */
void dtxn_tso_stats_get(const struct dtxn_tso *tso, struct dtxn_tso_stats *st);

/* ------------------------------------------------------------------ */
/* The compute-pool service: a counter on one CN (tso_cn.c)           */
/* ------------------------------------------------------------------ */

/**
 * The timestamp service of Motor §5 ("a scalable timestamp service ... in
 * the compute pool to serve for all coordinators"; its artifact: one
 * process-wide atomic on its single CN) and Lotus §5: a 64-bit counter in
 * the memory of the host CN. A coordinator of the host takes timestamps
 * with a CPU atomic: no round trip. A coordinator of any other CN sends
 * one lib/rpc request per lib/tso batch (one CN-CN round trip: a SEND each
 * way); the host's handler adds while the request is in flight, so the
 * real-time order of dtxn_tso.h holds across every coordinator of every
 * CN. Plug it into lib/tso with dtxn_tso_conf.fetch_add (a hook that calls
 * dtxn_tso_cn_fetch_add_lc()).
 *
 * It survives its host's death (issue 12; doc/guides/tso.md, "When the
 * host dies"):
 * - **Blocks.** The host hands out a timestamp only below its limit, and
 *   the limit only grows to a value already stored in MN memory: the
 *   high-water mark (reserved word DTXN_STORE_RSVD_TSO_CN_MARK of MN 0),
 *   raised by one FAA of @c block (dtxn_tso_cn_conf) before any timestamp
 *   of the new block is handed out. Whoever finds the block used up
 *   raises it: a coordinator of the host, or a client whose request the
 *   host answered "used up" (its next request carries the raised mark,
 *   which the host adopts). So every timestamp ever handed out is at most
 *   the stored mark: one FAA per block of timestamps, on the word in the
 *   RNIC's device memory, and no wait on the handler's path.
 * - **Takeover.** The CN that recovers the dead host (the lowest live CN,
 *   doc/guides/cluster.md, "Recovery") calls dtxn_tso_cn_take_over_lc()
 *   from its protocol's recovery: one FAA on the mark gives it a block
 *   that starts above every timestamp the dead host handed out, then one
 *   WRITE names it in the host word (DTXN_STORE_RSVD_TSO_CN_HOST).
 * - **Clients follow.** A request that gets no reply (the host is dead:
 *   lib/rpc's -ETIMEDOUT, or -ENOTCONN once a recovery declared it down)
 *   makes the client READ the host word, so that its next request goes
 *   to the host named there, and fails with -ETIMEDOUT: the transaction
 *   in flight aborts (it may hold what the dead CN granted, e.g. Lotus's
 *   locks, that the recovery waits for) and is retried by its benchmark.
 *   If the word has not moved yet (detection and takeover take a lease),
 *   the client first waits @c retry_ns, so retried transactions do not
 *   spin. A CN that is not the host answers with the host it knows, and
 *   the client asks that one at once.
 *
 * One per process (the protocol's shared state); in a multi-process
 * cluster only the host's process's counter is used.
 */
struct dtxn_tso_cn;

/** Default timestamps per block of the high-water mark (one FAA each). */
#define DTXN_TSO_CN_BLOCK_DEFAULT 4096
/** Default wait of a request that found no host before it fails, ns. */
#define DTXN_TSO_CN_RETRY_NS_DEFAULT UINT64_C(1000000)
/**
 * lib/rpc timeout (dtxn_rpc_conf.timeout_ns) a protocol whose rpc serves
 * only timestamps gives it (Motor), ns: a request to a dead host fails
 * after 1 + DTXN_RPC_RETRIES_DEFAULT of them (12 ms), not 120 ms. A
 * resend costs a gap in the timestamps, never a duplicate.
 */
#define DTXN_TSO_CN_RPC_TIMEOUT_NS UINT64_C(2000000)

/** Configuration of the service. */
struct dtxn_tso_cn_conf {
	size_t size;          /**< sizeof(struct dtxn_tso_cn_conf) */
	uint16_t host;        /**< node id of the first host (the fabric's first CN, n_mn) */
	uint8_t rpc_type;     /**< lib/rpc message type of its requests, < DTXN_RPC_TYPES, used for nothing else */
	int socket_id;        /**< NUMA socket of its memory */
	const struct dtxn_catalog *cat; /**< where the mark and host words are (MN 0's reserved words) */
	uint32_t block;       /**< timestamps per FAA on the mark, 1..2^32-1; 0: DTXN_TSO_CN_BLOCK_DEFAULT */
	uint64_t retry_ns;    /**< wait of a request that found no host (the word not moved yet); 0: default */
	/**
	 * Keep the service recoverable: blocks on the stored high-water mark
	 * (one FAA each), so that dtxn_tso_cn_take_over_lc() may move it.
	 * false: no mark, no MN verb at all, and no takeover (a run without
	 * CN recovery: dtxn_db_conf.cn_recovery).
	 */
	bool failover;
	/**
	 * This process serves a CN that rejoins a running cluster (a restart:
	 * a later incarnation, doc/guides/cluster.md "Rejoin"; with
	 * @c failover only). It does not know the host: a dead host's service
	 * was taken over by its recoverer before the restart could claim the
	 * node, so the first host may be anyone, this CN included in its dead
	 * incarnation. Its first fetch_add READs the host word and it is a
	 * client of the host named there; until then its handler answers
	 * "not the host". It never takes the service back: the survivor that
	 * took it over keeps it (a hand-over would need the host to stop
	 * issuing first). false: the host is @c host.
	 */
	bool rejoin;
};

/** Counters of the service (this process's share; any thread, relaxed reads). */
struct dtxn_tso_cn_stats {
	uint64_t counter;     /**< the counter: the last timestamp handed out by this process as host */
	uint64_t limit;       /**< the highest timestamp it may hand out (a mark stored in MN memory) */
	uint64_t local;       /**< adds by the host's own coordinators */
	uint64_t remote;      /**< adds by requests from other CNs */
	uint64_t raises;      /**< FAAs on the mark posted by this process (blocks reserved) */
	uint64_t retries;     /**< requests asked again (block used up, not the host) or failed (no reply) */
	uint64_t takeovers;   /**< dtxn_tso_cn_take_over_lc() calls that made this process's CN the host */
	uint16_t host;        /**< the host as this process last knew it */
};

/**
 * Creates the service. Its counter and limit are 0: the first request
 * raises the mark, and the first timestamp is 1.
 * @return the service, or NULL with rte_errno: EINVAL (NULL or short
 *   @p conf, rpc_type, no catalog or no MN in it), ENOMEM.
 */
struct dtxn_tso_cn *dtxn_tso_cn_create(const struct dtxn_tso_cn_conf *conf);

/**
 * dtxn_tso_cn_create() with the defaults a protocol uses (Motor's tso=cn,
 * Lotus's ts=cn): the first host is the first CN of @p db's fabric (node
 * n_mn), the words on MN 0, memory on any socket, failover as
 * dtxn_db_conf.cn_recovery, and rejoin for a restarted CN process (the
 * fabric's dtxn_fabric_conf.incarnation > 0). From dtxn_cc_ops.db_init (the db is attached
 * to its fabric).
 * @return the service, or NULL with rte_errno: EINVAL (NULL @p db or no
 *   fabric), or as dtxn_tso_cn_create().
 */
struct dtxn_tso_cn *dtxn_tso_cn_create_db(const struct dtxn_db *db, uint8_t rpc_type);

/** Frees the service (no worker uses it any more). NULL is a no-op. */
void dtxn_tso_cn_destroy(struct dtxn_tso_cn *s);

/**
 * Registers the service's request handler on a worker's rpc, on every CN
 * (any CN may become the host): it answers in the worker's CQ poller,
 * without yielding, with timestamps if its CN is the host, else with the
 * host it knows. From the protocol's worker_init, after dtxn_rpc_create().
 * @return 0, -EINVAL (NULL argument or a worker that is no CN), or
 *   dtxn_rpc_register()'s -EEXIST.
 */
int dtxn_tso_cn_register(struct dtxn_tso_cn *s, struct dtxn_rpc *rpc);

/**
 * Adds @p n to the counter for coordinator @p c and returns its value
 * before the add: a CPU atomic when @p c's CN is the host; elsewhere one
 * request to the host through @p c's endpoint @p ep, yielding until the
 * reply. When the block is used up it raises the mark first (one FAA,
 * waited for); when the host does not answer it follows the host word
 * (above). The fetch_add of struct dtxn_tso_conf; from @p c's coroutine,
 * with no batch of @p c under construction.
 *
 * @param n    1..DTXN_TSO_BATCH_MAX.
 * @param old  out: the counter before the add.
 * A rejoined process (dtxn_tso_cn_conf.rejoin) READs the host word
 * before its first request. A CN that answers "not the host" without
 * naming another one (itself rejoining) is treated as a host that did not
 * answer.
 *
 * @return 0; -EINVAL (NULL @p s, @p c or @p old; @p n 0 or too big);
 *   -EIO (no endpoint off the host, a bad reply, or a WR on MN 0
 *   failed); -ENOBUFS (no WR left); -ETIMEDOUT (the host did not answer,
 *   or answered that it is no host and knows none: the next call asks
 *   the host the host word names).
 */
int dtxn_tso_cn_fetch_add_lc(struct dtxn_tso_cn *s, struct dtxn_coord *c,
			     struct dtxn_rpc_ep *ep, uint64_t n, uint64_t *old);

/**
 * Dead CN @p dead's recovery, by the recovering coordinator @p c (its
 * protocol's dtxn_cc_ops.recover, before anything else): if the host word
 * names @p dead, @p c's CN becomes the host: one FAA on the mark (the new
 * block starts above every timestamp @p dead handed out), then one WRITE
 * of the host word. Otherwise it only learns the host. Idempotent (a
 * second call finds the host moved). Coordinator's coroutine; yields.
 *
 * @param rec  if not NULL, gets a step "tso" (dtxn_recovery_step_begin())
 *   when the service moved.
 * @return 1 if @p c's CN took the service over, 0 if the host was not
 *   @p dead, -EINVAL (NULL @p s or @p c), -ENOTSUP (a service created
 *   without failover: its timestamps were never bounded by a stored
 *   mark), -EIO or -ENOBUFS (a WR).
 */
int dtxn_tso_cn_take_over_lc(struct dtxn_tso_cn *s, struct dtxn_coord *c, uint16_t dead,
			     struct dtxn_recovery *rec);

/**
 * The service's counter and how many adds came from the host's own
 * coordinators (@p local) and from other CNs' requests (@p remote). Any
 * out pointer may be NULL. Any thread (relaxed reads).
 */
void dtxn_tso_cn_stats(const struct dtxn_tso_cn *s, uint64_t *counter, uint64_t *local,
		       uint64_t *remote);

/* ------------------------------------------------------------------ */
/* TSO proxies on the MNs' CPUs (tso_proxy.c)                         */
/* ------------------------------------------------------------------ */

/**
 * Scythe's TSO Proxy (§4.5; ../shared/papers/scythe.md §3: "limits the
 * TSO's QP count, forwards batches, and records the max ts issued so a
 * single-point TSO failure recovers quickly"). dtxn hosts a proxy on an
 * MN's CPU, as the paper's deployment does (two proxies on the memory
 * machine that does not hold the TSO), at most one per MN and never on
 * the counter's MN (MN 0): proxy i runs on MN 1 + i.
 *
 * Protocol: a group leader (struct dtxn_tso with n_proxies > 0) picks the
 * TSO or one of the proxies at random (uniformly among n_proxies + 1);
 * to a proxy it sends one lib/rpc request to that MN (dtxn_rpc_conf
 * mn_peers) carrying its group's size n. The proxy's batch handler
 * takes every request its poll reaped and keeps them (dtxn_rpc_srv_defer());
 * with no FAA of its own in flight it posts ONE FAA(sum of the n) on the
 * counter over its own RC QP to MN 0, and when that completes hands each
 * leader its sub-range (old + the sizes before it) and records old + sum,
 * the largest timestamp it issued, in reserved word
 * DTXN_STORE_RSVD_TSO_MAX of its MN (a CPU store: only the proxy writes
 * that word). Requests that arrive during the FAA wait for the next one.
 * Real-time order holds: the FAA is posted after the request arrived and
 * the reply leaves after it completed.
 *
 * Recovery (a lost TSO): a new counter must start above every timestamp
 * handed out; the proxies' records (dtxn_tso_proxy_record_raddr(), one
 * READ each) bound the ranges that went through proxies. Leaders that
 * went to the TSO directly are not recorded (the paper's design too):
 * the bound is complete only when every leader uses a proxy.
 *
 * Thread-safety: a proxy belongs to the thread that polls it (the MN's
 * service lcore, or its simulated thread).
 */
struct dtxn_tso_proxy;

/** Most proxies (one per MN except MN 0). */
#define DTXN_TSO_PROXIES_MAX 15

/** Configuration of one proxy. */
struct dtxn_tso_proxy_conf {
	size_t size;              /**< sizeof(struct dtxn_tso_proxy_conf) */
	uint16_t mn;              /**< the MN whose CPU hosts it, 1..n_mn - 1 */
	dtxn_raddr_t counter;     /**< the TSO's counter (dtxn_tso_counter_raddr()), on another MN */
	uint8_t rpc_type;         /**< lib/rpc message type of its requests, < DTXN_RPC_TYPES */
	unsigned workers_per_cn;  /**< workers each CN runs (their rpc QPs pair with the proxy's), >= 1 */
	unsigned max_eps;         /**< rpc endpoints per worker, >= 1 */
	/** Scheduler of the polling thread, charged in virtual time (sim MN thread); NULL: none. */
	struct dtxn_sched *sched;
	int socket_id;            /**< NUMA socket of its memory */
};

/** Counters of one proxy (cumulative since create). */
struct dtxn_tso_proxy_stats {
	uint64_t requests;        /**< leader requests served */
	uint64_t timestamps;      /**< timestamps handed out (sum of their n) */
	uint64_t faas;            /**< FAAs posted on the counter */
	uint64_t max_combined;    /**< most leader requests one FAA served */
	uint64_t errors;          /**< FAAs that failed (their requests got an empty reply: -EIO) */
	uint64_t bad;             /**< malformed requests (empty reply) */
};

/**
 * Creates a proxy on MN conf->mn: a lib/rpc server there (dtxn_rpc_srv:
 * its CQ and one QP per (CN, worker)) and an RC QP to the counter's MN on
 * the same CQ. The MN may host no other dtxn_rpc_srv (the QP pairing).
 * Main lcore, once the fabric is attached.
 * @return the proxy, or NULL with rte_errno: EINVAL (NULL or short
 *   @p conf, @p f NULL, mn 0 or not an MN, the counter 0 or on the same
 *   MN, rpc_type out of range, a count 0), ENOMEM, or the fabric's errno.
 */
struct dtxn_tso_proxy *dtxn_tso_proxy_create(struct dtxn_fabric *f,
					     const struct dtxn_tso_proxy_conf *conf);

/**
 * Creates a proxy on a server another service of MN conf->mn owns (e.g.
 * Scythe's lock service): the proxy's QP to the counter's MN goes on
 * @p srv's CQ. The owner's batch handler passes each batch to
 * dtxn_tso_proxy_batch(), its server's cqe_fn passes completions to
 * dtxn_tso_proxy_cqe(), and it calls dtxn_tso_proxy_poll() after each
 * dtxn_rpc_srv_poll(). Main lcore.
 * @return the proxy, or NULL with rte_errno: as dtxn_tso_proxy_create()
 *   (EINVAL also for @p srv NULL).
 */
struct dtxn_tso_proxy *dtxn_tso_proxy_attach(struct dtxn_fabric *f, struct dtxn_rpc_srv *srv,
					     const struct dtxn_tso_proxy_conf *conf);

/**
 * For an attached proxy: takes the messages of its rpc_type from a batch
 * of the owner's server (keeps them for the next FAA, or gives a
 * malformed one an empty reply, setting their resp_len); leaves the
 * others untouched. From the owner's batch handler.
 * @return messages it took.
 */
unsigned dtxn_tso_proxy_batch(struct dtxn_tso_proxy *px, struct dtxn_rpc_srv_msg *msgs,
			      unsigned n);

/** For an attached proxy: a completion of the owner's server CQ (its FAA's); others ignored. */
void dtxn_tso_proxy_cqe(struct dtxn_tso_proxy *px, const struct dtxn_cqe *cqe);

/** Destroys a proxy no thread polls (not an attached proxy's server). NULL is a no-op. */
void dtxn_tso_proxy_destroy(struct dtxn_tso_proxy *px);

/**
 * One poll: the requests that arrived (kept; own server only), the FAA's
 * completion (replies), and the next FAA if requests wait. Never blocks.
 * @return requests handled (0: idle).
 */
unsigned dtxn_tso_proxy_poll(struct dtxn_tso_proxy *px);

/** @return the CQ the proxy polls (the simulation wakes its thread on it), or NULL. */
struct dtxn_cq *dtxn_tso_proxy_cq(const struct dtxn_tso_proxy *px);

/** Copies the proxy's counters into @p st. Polling thread, or after it stopped. */
void dtxn_tso_proxy_stats_get(const struct dtxn_tso_proxy *px, struct dtxn_tso_proxy_stats *st);

/**
 * Remote address of the record of the proxy on MN @p mn: the largest
 * timestamp it handed out (0: none yet). What a recovery READs. Any thread.
 * @return the address, or 0 (@p cat NULL, @p mn not an MN).
 */
dtxn_raddr_t dtxn_tso_proxy_record_raddr(const struct dtxn_catalog *cat, uint16_t mn);

/**
 * The leader's side: asks the proxy on MN @p mn for @p n timestamps
 * through @p c's endpoint @p ep (an rpc created with mn_peers), yielding
 * until the reply. The proxy_fetch_add of struct dtxn_tso_conf calls it.
 * @param old  out: the counter before the proxy's FAA plus the sizes of
 *   the requests served before this one: the range is old + 1 .. old + n.
 * @return 0; -EINVAL (NULL argument, @p n 0 or over DTXN_TSO_BATCH_MAX);
 *   -EIO (the proxy's FAA failed, or a malformed reply); -ETIMEDOUT.
 */
int dtxn_tso_proxy_fetch_add_lc(struct dtxn_rpc_ep *ep, uint16_t mn, uint8_t rpc_type, uint64_t n,
				uint64_t *old);
/** Copies every counter of the service into @p st (NULL arguments: no-op). Any thread. */
void dtxn_tso_cn_stats_get(const struct dtxn_tso_cn *s, struct dtxn_tso_cn_stats *st);

#ifdef __cplusplus
}
#endif
#endif /* DTXN_TSO_H */
