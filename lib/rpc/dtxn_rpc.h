/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DTXN_RPC_H
#define DTXN_RPC_H

/**
 * @file
 * CN-to-CN and CN-to-MN messages over the fabric's SEND/RECV (ARCHITECTURE.md, "lib/rpc,
 * lib/tso"; doc/guides/lotus.md, "RPC"). Lotus §4.1 sends its remote lock
 * requests this way: "a transaction's requests to one CN are batched into
 * one RDMA message", coordinators are paired ("coordinator i sends RPCs
 * only to coordinator i" on the other CNs), and lost messages are handled
 * by timeouts (FaSST-style RPC over UD; ../shared/papers/lotus.md §0, §1).
 *
 * Shape:
 * - one struct dtxn_rpc per worker lcore (dtxn_worker): a QP to each other
 *   CN, attached to the worker's CQ (one poll serves WRs and messages, and
 *   the sim loop wakes the worker when a message lands). Worker k of one
 *   CN is paired with worker k of every other CN (the fabric pairs the
 *   k-th QP a->b with the k-th b->a, and every worker creates its QPs in
 *   worker order), so coordinator i of a CN, which runs on the same worker
 *   index as coordinator i of any other CN when CNs have the same shape,
 *   talks to that worker;
 * - one endpoint (struct dtxn_rpc_ep) per coordinator: a ring of
 *   DTXN_RPC_SLOTS request slots, the "per-coordinator ring": a slot holds
 *   one outstanding request (its message, for a resend, its deadline and
 *   retries);
 * - handlers (dtxn_rpc_register()) run inside the worker's CQ poller, on
 *   the receiving worker's lcore, and reply at once (inline SEND): a
 *   request never waits for a coroutine;
 * - delivery is at least once: a request whose reply does not come within
 *   the timeout is sent again (up to max_retries times), so a handler may
 *   see the same request twice and must be idempotent (Lotus's lock-state
 *   map makes lock requests so). Replies are matched to their slot by a
 *   sequence number; late duplicates are dropped.
 *
 * Wire format (struct dtxn_rpc_hdr, then the payload): see rpc.c.
 *
 * Thread-safety: an rpc, its endpoints and its handlers belong to the
 * worker's lcore; every call is made there (calls ending in _lc yield, from
 * the endpoint's coordinator's coroutine).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dtxn_txn_driver.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Largest request payload, bytes (a message is header + payload). */
#define DTXN_RPC_REQ_MAX 1024
/** Largest reply payload, bytes: replies go inline (DTXN_WR_INLINE_MAX). */
#define DTXN_RPC_RESP_MAX (DTXN_WR_INLINE_MAX - 16)
/** Message types: handlers are registered for 0 .. DTXN_RPC_TYPES-1. */
#define DTXN_RPC_TYPES 16
/** Outstanding requests per endpoint (its ring). */
#define DTXN_RPC_SLOTS 8
/** Default time before a request is sent again, ns. */
#define DTXN_RPC_TIMEOUT_NS_DEFAULT UINT64_C(20000000)
/** Default resends before a call fails with -ETIMEDOUT. */
#define DTXN_RPC_RETRIES_DEFAULT 5

struct dtxn_rpc;
struct dtxn_rpc_ep;

/** Configuration of a worker's rpc. */
struct dtxn_rpc_conf {
	size_t size;             /**< sizeof(struct dtxn_rpc_conf) */
	uint64_t timeout_ns;     /**< resend after this long without a reply; 0: default */
	unsigned max_retries;    /**< resends before failing; 0: default */
	/**
	 * Test aid: drop every drop_every-th outbound message (request or
	 * reply) before it is posted, as a lossy transport would; 0: never.
	 */
	unsigned drop_every;
	/**
	 * Also message the MNs (issue 14, Scythe's lock service): a request
	 * may name an MN node id (0 .. n_mn - 1), and goes over the worker's
	 * own RC QP to that MN (dtxn_worker qp[]), on which the rpc posts
	 * RECVs for the replies. The MN answers with a struct dtxn_rpc_srv.
	 * A handler of this rpc never sees a request from an MN (MNs only
	 * reply). Requests to an MN should not be resent (the MN's handlers
	 * need not be idempotent; RC delivery is reliable): give such an rpc
	 * a timeout longer than any reply may take. 0: CNs only.
	 */
	uint8_t mn_peers;
};

/** Counters of one worker's rpc (cumulative since create). */
struct dtxn_rpc_stats {
	uint64_t req_sent;       /**< requests posted (first sends) */
	uint64_t resent;         /**< requests posted again after a timeout */
	uint64_t req_handled;    /**< requests handled (duplicates included) */
	uint64_t resp_recv;      /**< replies matched to a waiting slot */
	uint64_t stale;          /**< replies for no waiting slot (late duplicates) */
	uint64_t failed;         /**< calls failed after max_retries resends */
	uint64_t dropped;        /**< messages dropped by the drop_every test aid */
	uint64_t bad;            /**< malformed or misrouted messages dropped */
};

/**
 * A request handler. Runs in the worker's CQ poller on the receiving
 * lcore; must not yield. May be called more than once for the same
 * request (a resend): it must be idempotent.
 *
 * @param arg       dtxn_rpc_register()'s argument.
 * @param src_node  the sender's CN node id.
 * @param req       payload, @p len bytes (valid during the call only).
 * @param resp      reply buffer, DTXN_RPC_RESP_MAX bytes.
 * @return reply bytes (0..DTXN_RPC_RESP_MAX), sent back at once; a
 *   negative value sends no reply (the sender will time out).
 */
typedef int (*dtxn_rpc_handler_fn)(void *arg, uint16_t src_node, const void *req,
				   uint32_t len, void *resp);

/**
 * Creates the rpc of worker @p w: a QP to every other CN of the fabric
 * (node ids n_mn .. n_mn + n_cn - 1), on @p w's CQ, sized for
 * dtxn_worker_max_coords(w) endpoints, with their RECVs posted, and a
 * poller for timeouts. Takes the worker's message hook (dtxn_worker
 * msg_cqe). Call from the protocol's worker_init, on the worker's lcore
 * or the main lcore before the run, for every worker of every CN in
 * worker order (the pairing relies on it).
 *
 * @return the rpc, or NULL with rte_errno: EINVAL (NULL or short conf,
 *   worker without a fabric, hook already taken), ENOMEM, or the fabric's
 *   errno.
 */
struct dtxn_rpc *dtxn_rpc_create(struct dtxn_worker *w, const struct dtxn_rpc_conf *conf);

struct dtxn_footprint;

/**
 * Adds to @p fp (dtxn_sched.h) what dtxn_rpc_create() on a worker of a
 * fabric with @p n_cn CNs, and @p max_eps dtxn_rpc_ep_create() on it,
 * allocate: the rpc, its endpoint table and endpoints, and per other CN a
 * QP of the rpc's depth with its RECV buffers (dtxn_fabric_queue_footprint()).
 * Any thread, no EAL needed.
 *
 * @param max_eps  endpoints (dtxn_worker_max_coords() of the worker).
 * @return 0, or -EINVAL (@p fp NULL, @p n_cn 0, @p max_eps 0 or more than
 *   dtxn_rpc_create() accepts).
 */
int dtxn_rpc_footprint(unsigned n_cn, unsigned max_eps, struct dtxn_footprint *fp);

/**
 * Adds to @p fp what dtxn_rpc_create() with dtxn_rpc_conf.mn_peers adds
 * on a fabric with @p n_mn MNs, on top of dtxn_rpc_footprint(): per MN the
 * RECV buffers for the replies to @p max_eps endpoints, posted on the
 * worker's own QP to that MN (the QP is the worker's: not counted here).
 * Any thread, no EAL needed.
 *
 * @return 0, or -EINVAL (@p fp NULL, @p n_mn 0, @p max_eps 0 or more than
 *   dtxn_rpc_create() accepts).
 */
int dtxn_rpc_footprint_mn(unsigned n_mn, unsigned max_eps, struct dtxn_footprint *fp);

/** Destroys an rpc (the worker's loop has returned). NULL is a no-op. */
void dtxn_rpc_destroy(struct dtxn_rpc *rpc);

/**
 * Registers the handler of message type @p type.
 * @return 0, -EINVAL (type >= DTXN_RPC_TYPES, NULL fn or rpc), -EEXIST.
 */
int dtxn_rpc_register(struct dtxn_rpc *rpc, uint8_t type, dtxn_rpc_handler_fn fn, void *arg);

/**
 * Creates the endpoint of coordinator @p c (its ring of DTXN_RPC_SLOTS
 * slots, in memory of the worker's socket). From the protocol's
 * coord_init. At most dtxn_worker_max_coords() endpoints per rpc.
 *
 * @return the endpoint, or NULL with rte_errno: EINVAL, ENOSPC (too many),
 *   ENOMEM.
 */
struct dtxn_rpc_ep *dtxn_rpc_ep_create(struct dtxn_rpc *rpc, struct dtxn_coord *c);

/** Frees an endpoint with no call in flight (asynchronous sends may be). NULL is a no-op. */
void dtxn_rpc_ep_destroy(struct dtxn_rpc_ep *ep);

/** One request of a dtxn_rpc_call_lc() batch. */
struct dtxn_rpc_call {
	uint16_t dst_node;   /**< a CN node id, not the caller's; or an MN's (dtxn_rpc_conf.mn_peers) */
	uint8_t type;        /**< message type */
	const void *req;     /**< payload (copied at the call) */
	uint32_t req_len;    /**< 0..DTXN_RPC_REQ_MAX */
	void *resp;          /**< reply buffer, DTXN_RPC_RESP_MAX bytes */
	uint32_t resp_len;   /**< out: reply bytes */
	int status;          /**< out: 0, -ETIMEDOUT, -EINVAL, -ENOTCONN, or a post error */
};

/**
 * Sends @p n requests (usually to different CNs) from endpoint @p ep and
 * yields until every one has its reply or has failed: one round trip for
 * the whole batch. Waits (yielding) for free slots when the ring is full.
 * Called from the endpoint's coordinator's coroutine.
 *
 * @return 0 if every call got a reply; else the first failing call's
 *   status (each call's own is in calls[i].status).
 */
int dtxn_rpc_call_lc(struct dtxn_rpc_ep *ep, struct dtxn_rpc_call *calls, unsigned n);

/**
 * Sends one request whose reply nobody waits for (Lotus's asynchronous
 * remote unlock): returns once it is posted; the slot stays taken until
 * the reply (an acknowledgement) comes, and the request is sent again on
 * a timeout, in the background. Called from the endpoint's coordinator's
 * coroutine (may yield while the ring is full).
 *
 * @return 0, -EINVAL (bad size or node), -ENOTCONN, or a post error.
 */
int dtxn_rpc_send_lc(struct dtxn_rpc_ep *ep, uint16_t dst_node, uint8_t type, const void *req,
		     uint32_t len);

/**
 * CN @p node is dead (its lease expired; doc/guides/cluster.md,
 * "Recovery"): the calls waiting for its replies end now with -ENOTCONN
 * (their coordinators wake up), the asynchronous requests to it are
 * dropped, and every later call or send to it fails at once with
 * -ENOTCONN instead of timing out. Idempotent. Owning lcore.
 * @return the requests ended, or -EINVAL (@p rpc NULL, @p node no peer).
 */
int dtxn_rpc_peer_down_lc(struct dtxn_rpc *rpc, uint16_t node);

/**
 * CN @p node is back: a new incarnation of it rejoined the cluster
 * (doc/guides/cluster.md, "Rejoin"), after dtxn_rpc_peer_down_lc(). Calls
 * and sends to it are posted again (on the QP the fabric re-paired with
 * the new incarnation); nothing of the dead incarnation's is resent.
 * Idempotent. Owning lcore.
 * @return 0, or -EINVAL (@p rpc NULL, @p node no peer).
 */
int dtxn_rpc_peer_up_lc(struct dtxn_rpc *rpc, uint16_t node);

/** @return requests of @p ep still waiting for a reply (asynchronous ones included). */
unsigned dtxn_rpc_ep_inflight(const struct dtxn_rpc_ep *ep);

/** Copies the rpc's counters into @p st. Owning lcore, or after it stopped. */
void dtxn_rpc_stats_get(const struct dtxn_rpc *rpc, struct dtxn_rpc_stats *st);

/** @return the worker the rpc belongs to. */
struct dtxn_worker *dtxn_rpc_worker(const struct dtxn_rpc *rpc);

/* ------------------------------------------------------------------ */
/* The MN side: a request server on an MN's CPU (rpc_srv.c)           */
/* ------------------------------------------------------------------ */

/*
 * An MN's CPU serves the requests that CN workers send it through an rpc
 * created with dtxn_rpc_conf.mn_peers (issue 14: Scythe's Lock RPC runs
 * on the MN, scythe.md §2). The server owns a CQ and, for every CN and
 * every worker index k of a CN, the RC QP MN -> CN that pairs with that
 * worker's QP to this MN (the fabric pairs the k-th QP a -> b with the
 * k-th b -> a; a CN's workers create their QPs to the MNs in worker
 * order, dtxn_worker_create()). It posts RECVs for as many requests as
 * the workers' endpoints may have outstanding, and each poll hands every
 * request it reaped to one batch handler, so that the handler sees the
 * batch whole (Scythe sorts a batch of lock requests by key and
 * timestamp and grants in one scan, Fig. 16), then answers each request
 * with an inline SEND, or keeps it for an answer later
 * (dtxn_rpc_srv_defer(): lib/tso's proxy answers when its FAA completes).
 *
 * Thread-safety: a server belongs to the lcore (or, in the simulation,
 * the simulated MN thread) that polls it; create and destroy it there or
 * on the main lcore while no poll runs.
 */

struct dtxn_rpc_srv;

/** One request of a batch, as the batch handler sees it. */
struct dtxn_rpc_srv_msg {
	uint16_t src_node;   /**< the sending CN's node id */
	uint16_t worker;     /**< the sending worker's index in its CN */
	uint8_t type;        /**< message type, < DTXN_RPC_TYPES */
	const void *req;     /**< payload, valid during the handler only */
	uint32_t len;        /**< payload bytes, 0..DTXN_RPC_REQ_MAX */
	void *resp;          /**< reply buffer, DTXN_RPC_RESP_MAX bytes */
	/** out: reply bytes (0..DTXN_RPC_RESP_MAX); negative: no reply now (deferred with
	 *  dtxn_rpc_srv_defer(), or none: the sender fails on its timeout) */
	int resp_len;
};

/**
 * The batch handler. Runs in dtxn_rpc_srv_poll() on the server's lcore;
 * must not yield. Fills each message's @c resp and @c resp_len.
 * @param arg   dtxn_rpc_srv_conf.arg.
 * @param msgs  the requests reaped by this poll, in arrival order.
 * @param n     1..DTXN_RPC_SRV_BURST.
 */
typedef void (*dtxn_rpc_srv_batch_fn)(void *arg, struct dtxn_rpc_srv_msg *msgs, unsigned n);

/** Most requests one poll reaps and hands to the handler. */
#define DTXN_RPC_SRV_BURST 32

/** Configuration of a server. */
struct dtxn_rpc_srv_conf {
	size_t size;              /**< sizeof(struct dtxn_rpc_srv_conf) */
	uint16_t mn_node;         /**< the MN it serves, < n_mn */
	unsigned workers_per_cn;  /**< worker QPs each CN has to this MN, >= 1 */
	unsigned max_eps;         /**< endpoints per worker (dtxn_worker_max_coords()), >= 1 */
	int socket_id;            /**< NUMA socket of its memory */
	/**
	 * Scheduler of the thread that polls it, charged DTXN_CPU_MSG per
	 * request in virtual time (the MN CPU of the simulation); NULL: none.
	 */
	struct dtxn_sched *sched;
	dtxn_rpc_srv_batch_fn fn; /**< the batch handler, != NULL */
	void *arg;                /**< its argument */
	/**
	 * Optional: the completions of WRs the handler's owner posted on QPs
	 * of this server's CQ (dtxn_rpc_srv_cq(); e.g. the TSO proxy's FAA on
	 * the counter, lib/tso), each with its own wr_id != 0. Called from
	 * dtxn_rpc_srv_poll() on the polling thread; must not block. NULL:
	 * such completions are dropped (as inline replies' errors are).
	 */
	void (*cqe_fn)(void *arg, const struct dtxn_cqe *cqe);
};

/**
 * A request answered later (dtxn_rpc_srv_defer()): what the reply needs
 * of it (its header and the QP it came on). Opaque; copyable.
 */
struct dtxn_rpc_srv_later {
	uint64_t opaque[3];
};

/**
 * Creates the server of an MN: its CQ, the QPs to every CN's workers and
 * their RECVs. On the main lcore, before or after the CN workers exist.
 * @return the server, or NULL with rte_errno: EINVAL (NULL or short
 *   @p conf, @p f NULL, mn_node not an MN, workers_per_cn or max_eps 0 or
 *   too many for one QP's queue), ENOMEM, or the fabric's errno.
 */
struct dtxn_rpc_srv *dtxn_rpc_srv_create(struct dtxn_fabric *f, const struct dtxn_rpc_srv_conf *conf);

/**
 * Adds to @p fp (dtxn_sched.h) what dtxn_rpc_srv_create() allocates for
 * an MN of a fabric with @p n_cn CNs of @p workers_per_cn workers, each
 * with @p max_eps endpoints: the server, its CQ, a QP per (CN, worker)
 * and its RECV buffers. Upper bound. Any thread, no EAL needed.
 *
 * @return 0, or -EINVAL (@p fp NULL, an argument 0, or more than
 *   dtxn_rpc_srv_create() accepts).
 */
int dtxn_rpc_srv_footprint(unsigned n_cn, unsigned workers_per_cn, unsigned max_eps,
			   struct dtxn_footprint *fp);

/** Destroys a server no thread polls. NULL is a no-op. */
void dtxn_rpc_srv_destroy(struct dtxn_rpc_srv *srv);

/**
 * Reaps up to DTXN_RPC_SRV_BURST completions, hands the requests among
 * them to the batch handler (one call), answers each, reposts the RECVs.
 * Malformed messages are counted (stats bad) and dropped. Never blocks.
 * @return requests handled (0: idle).
 */
unsigned dtxn_rpc_srv_poll(struct dtxn_rpc_srv *srv);

/**
 * Keeps request @p m of the batch being handled for an answer after the
 * handler returns (the reply needs another WR's completion first, e.g.
 * the TSO proxy's FAA). Call from the batch handler, then leave
 * m->resp_len negative (no reply now); answer exactly once with
 * dtxn_rpc_srv_reply_later(). The request's RECV is reposted at once.
 *
 * @param later  out: the request's reply context.
 * @return 0, or -EINVAL (@p srv, @p m or @p later NULL; @p m not a
 *   message of the batch being handled).
 */
int dtxn_rpc_srv_defer(struct dtxn_rpc_srv *srv, const struct dtxn_rpc_srv_msg *m,
		       struct dtxn_rpc_srv_later *later);

/**
 * Answers a deferred request (dtxn_rpc_srv_defer()) with @p len bytes at
 * @p resp: one inline SEND on the QP it came on. Polling thread only.
 * @return 0; -EINVAL (NULL argument, @p len over DTXN_RPC_RESP_MAX, a
 *   context of no QP of @p srv); or dtxn_qp_post()'s error.
 */
int dtxn_rpc_srv_reply_later(struct dtxn_rpc_srv *srv, const struct dtxn_rpc_srv_later *later,
			     const void *resp, uint32_t len);

/** @return the server's CQ (the simulation watches it to wake the MN thread). */
struct dtxn_cq *dtxn_rpc_srv_cq(const struct dtxn_rpc_srv *srv);

/** Copies the server's counters (req_handled, bad) into @p st. Polling lcore, or after it stopped. */
void dtxn_rpc_srv_stats_get(const struct dtxn_rpc_srv *srv, struct dtxn_rpc_stats *st);

#ifdef __cplusplus
}
#endif
#endif /* DTXN_RPC_H */
