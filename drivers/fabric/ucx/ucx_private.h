/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DTXN_UCX_PRIVATE_H
#define DTXN_UCX_PRIVATE_H

/**
 * @file
 * The ucx fabric driver: lib/fabric's verbs-like API on UCX's UCP
 * (doc/guides/ucx.md). Over TCP UCX emulates one-sided operations on the
 * target's CPU; over rc_mlx5 the same calls are RDMA verbs.
 *
 * Mapping:
 * - a CQ is a UCP worker of its lcore (UCS_THREAD_MODE_SINGLE), progressed
 *   by dtxn_cq_poll(); a QP is a UCP endpoint from that worker to the
 *   remote process's serve worker;
 * - READ/WRITE/CAS/FAA: by default the driver's own active messages
 *   (ucx_verb.c), which the MN's serve thread executes after a fence
 *   check and answers; with DTXN_UCX_VERBS=rma, ucp_get_nbx/ucp_put_nbx
 *   and ucp_atomic_op_nbx (CSWAP/ADD with a reply buffer); masked CAS: a
 *   counted CAS loop (lib/fabric's dtxn_mcas_loop); SEND: an eager active
 *   message to the remote serve worker, routed to the paired QP's inbound
 *   ring;
 * - every process has one serve worker, progressed by the driver's control
 *   thread, which blocks on the worker's event fd (ucp_worker_arm + epoll)
 *   when idle: it executes the verbs other processes aim at the regions
 *   it serves, and receives their SENDs;
 * - the control thread also listens on each served node's address (the
 *   cluster file's addr=) for the connect message (ucx_pure.h), which
 *   carries the serve worker's address and an MN region's base, length
 *   and packed rkey, refuses a process started for another run, and
 *   takes a survivor's FENCE of a dead CN (dtxn_fabric_fence_node()).
 *
 * Order (the fabric API's promise that WRs of one QP take effect in
 * posting order, and that a completion means the WR took effect): verbs as
 * messages travel on one endpoint's lane and complete with the MN's
 * answer. Under DTXN_UCX_VERBS=rma, where UCX 1.13 promises no order
 * between operations of an endpoint, the driver calls ucp_worker_fence()
 * before a WR that follows one still in flight on its QP, and a signaled
 * WRITE completes only after ucp_ep_flush_nbx() says it reached the
 * target (a put's own callback is only local completion).
 *
 * Files: ucx.c (ops table, open/close, regions), ucx_conn.c (control
 * thread: listener, connect and fence messages, serve worker), ucx_qp.c
 * (CQ/QP life cycle, routes of inbound SENDs), ucx_post.c (posting),
 * ucx_verb.c (verbs as messages: both sides), ucx_poll.c (callbacks,
 * in-order retirement, delivery, the idle sleep), ucx_msg.c (pure codec).
 *
 * Ownership: a CQ, its QPs and their slots belong to the lcore that polls
 * the CQ; callbacks run inside that lcore's ucp_worker_progress(). The
 * control thread owns the serve worker and the listening sockets; the
 * fabric's lock guards the remote-node cache, the QP routes and parked
 * messages.
 */

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <netinet/in.h>
#include <sys/queue.h>

#include <ucp/api/ucp.h>

#include <rte_log.h>
#include <rte_ring.h>
#include <rte_spinlock.h>

#include "dtxn_fabric.h"
#include "dtxn_fabric_driver.h"
#include "ucx_pure.h"
#include "ucx_vmsg.h"

extern int dtxn_ucx_logtype;
#define UCX_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_##level, dtxn_ucx_logtype, "dtxn.fabric.ucx: " fmt "\n", ##__VA_ARGS__)

/** Active-message id of a SEND. */
#define UCX_AM_SEND 0x17
/** Active-message id of a verb message: one doorbell's one-sided verbs (ucx_vmsg.h). */
#define UCX_AM_VERB 0x18
/** Active-message id of its answer (ucx_vmsg.h), to the asking lcore's worker. */
#define UCX_AM_VERB_REP 0x19

/** Parked SENDs (their QP not created yet) the fabric holds at most. */
#define UCX_PARKED_MAX 65536
/** Inbound ring of a QP, messages (power of two). */
#define UCX_INBOUND_SIZE 4096

/** An MN region this process serves. */
struct ucx_region {
	uint8_t *base;          /**< rte_zmalloc memory, NULL: not served */
	uint64_t len;
	ucp_mem_h memh;
	void *rkey_buf;         /**< ucp_rkey_pack() */
	size_t rkey_len;
};

/** What the connect message told about a remote node (ucx_remote_get()). */
struct ucx_remote {
	bool known;
	uint32_t gen;           /**< one more at each fetch: a CN peer's restart is fetched again
				 *   (ucx_remote_refresh()) */
	uint8_t *waddr;         /**< its serve worker's address (malloc) */
	uint16_t waddr_len;
	uint8_t *rkey;          /**< MN: packed rkey (malloc) */
	uint16_t rkey_len;
	uint64_t base, len;     /**< MN: region */
};

/** What an active message carries (struct ucx_am_hdr.kind). */
enum ucx_am_kind {
	UCX_AM_MSG = 0,         /**< a SEND's payload */
	UCX_AM_CONNECT = 1,     /**< the sender's QP exists: its peer may SEND to it */
};

/** The header of a SEND's active message. */
struct ucx_am_hdr {
	uint16_t src_node, dst_node;
	uint32_t seq;           /**< the sender's QP is its seq-th from src to dst */
	uint32_t kind;          /**< enum ucx_am_kind */
};

/** A received message on its way to a RECV (malloc'd by the control thread). */
struct ucx_inmsg {
	STAILQ_ENTRY(ucx_inmsg) next; /**< parked list */
	struct ucx_am_hdr hdr;
	uint32_t len;
	uint8_t data[];
};

struct ucx_qp;

/** A route: where SENDs from remote to local with seq go. */
struct ucx_route {
	uint16_t local, remote;
	uint32_t seq;
	struct ucx_qp *qp;      /**< NULL: free entry */
};

#define UCX_ROUTES_MAX 4096

struct ucx_fabric {
	struct dtxn_fabric base;
	ucp_context_h ctx;
	ucp_worker_h serve;                   /**< the control thread's worker */
	ucp_address_t *serve_addr;
	size_t serve_addr_len;
	int serve_efd;
	uint16_t n_mn, n_nodes;
	uint64_t serve_mask;                  /**< nodes this process serves */
	uint64_t take_over;                   /**< of those, CNs taken over unfenced (no listener) */
	uint64_t digest;                      /**< ucx_msg_digest() of the run */
	uint64_t connect_timeout_ns;
	struct sockaddr_in addr[DTXN_MAX_NODES];
	struct ucx_region mn[DTXN_MAX_NODES];
	/* control thread (ucx_conn.c) */
	pthread_t ctl;
	bool ctl_up;
	int epfd, stop_fd;
	int listen_fd[DTXN_MAX_NODES];        /**< -1: not listening */
	/* under lock */
	rte_spinlock_t lock;
	pthread_mutex_t connect_lock;         /**< one connect exchange at a time */
	struct ucx_remote remote[DTXN_MAX_NODES];
	uint32_t qp_seq[DTXN_MAX_NODES][DTXN_MAX_NODES];
	struct ucx_route route[UCX_ROUTES_MAX];
	STAILQ_HEAD(, ucx_inmsg) parked;
	uint32_t n_parked;
	/* statistics (relaxed atomics) */
	uint64_t fences, flushes, mcas_loop_cas, dropped, wakeups;
	uint64_t verb_msgs, verbs_in_msgs, verb_refused; /**< verb messages sent; verbs they carried;
							  *   refused whole at this MN (fenced) */
	/** one-sided verbs as the driver's messages, executed by the MN's
	 *  serve thread with a fence check (over TCP: UCX would run them in
	 *  its own code, beyond a fence); false: UCP's RMA and AMO (RDMA) */
	bool am_verbs;
	bool published;                       /**< dtxn_fabric_publish(): MNs accept connects */
	uint64_t fenced;                      /**< CNs fenced at this process's MNs (bit = node) */
	/* incarnations (ucx_conn.c; doc/guides/ucx.md, "Connecting"). MN side,
	 * written by the control thread (and ucx_cut_node()), read by the
	 * serve thread's verb check (the same thread over TCP): */
	uint64_t admitted_mask;               /**< CNs an incarnation of which was admitted (bit = node) */
	uint32_t admitted[DTXN_MAX_NODES];    /**< that incarnation: its HELLOs and verbs pass */
	uint32_t fenced_inc[DTXN_MAX_NODES];  /**< the incarnation the last fence refused */
	/* CN side, under connect_lock: this process's incarnation of each CN
	 * node it serves, as MN 0 admitted it (its first HELLO said UCX_INC_NEXT) */
	uint64_t self_inc_known;              /**< bit = node: self_inc[node] is known */
	uint32_t self_inc[DTXN_MAX_NODES];
	bool block;                           /**< CQs sleep on their event fd when idle
					       *   (DTXN_UCX_BLOCK=0 turns it off) */
	uint64_t spin_ns;                     /**< an idle worker (serve or CQ) polls this long
					       *   before it sleeps (DTXN_UCX_SPIN_US) */
};

/** Empty polls in a row (WRs in flight), at least, before a CQ's lcore sleeps on its event fd. */
#define UCX_IDLE_POLLS 256
/** Default of DTXN_UCX_SPIN_US on a host of UCX_SPIN_MIN_CPUS CPUs or
 *  more: about two round trips over TCP between namespaces (ucx_perftest's
 *  8 B CAS P50: 13-15 us), so a verb that follows its predecessor's answer
 *  finds the MN awake. On a smaller host the default is 0: there the MN
 *  and CN processes of a cluster share the cores, and a spinning worker
 *  takes the CPU the others need (doc/guides/ucx.md, "Figures"). */
#define UCX_SPIN_US_DEFAULT 30
/** CPUs online from which a worker spins by default. */
#define UCX_SPIN_MIN_CPUS 4
/** Longest such sleep, ms. */
#define UCX_IDLE_SLEEP_MS 1

struct ucx_cq {
	struct dtxn_cq_core core;  /**< lib/fabric's CQ: its ring, its QP count */
	ucp_worker_h w;
	bool block;              /**< sleep when idle (struct ucx_fabric.block) */
	int efd;                 /**< the worker's event fd once asked (-1: not yet, -2: none) */
	uint32_t idle;           /**< empty polls in a row */
	uint64_t idle_since;     /**< dtxn_now_ns() of the first of them */
	uint64_t spin_ns;        /**< struct ucx_fabric.spin_ns */
	uint64_t sleeps;         /**< times it slept (relaxed) */
	TAILQ_HEAD(, ucx_qp) qps;
};

/** One posted WR, in posting order. */
struct ucx_slot {
	struct ucx_qp *qp;
	uint64_t wr_id;
	void *local;
	uint32_t len;
	uint8_t opcode;
	uint8_t flags;
	uint8_t status;          /**< enum dtxn_wc_status, final once done */
	uint8_t done;
	uint8_t pending;         /**< UCX requests in flight for it */
	uint8_t awaiting;        /**< a verb as a message: its answer is due */
	uint64_t operand;        /**< CAS: compare; FAA: addend */
	uint64_t result;         /**< CAS: swap in, old value out; FAA: old value */
	uint64_t raddr;          /**< remote virtual address (one-sided) */
	struct ucx_am_hdr hdr;   /**< SEND: its active message's header */
	uint8_t quiet;           /**< a verb as a message that asks for no answer */
	struct dtxn_mcas_loop mcas;
	uint8_t inl[DTXN_WR_INLINE_MAX] __attribute__((aligned(8)));
};

struct ucx_qp {
	struct dtxn_qp base;
	struct ucx_fabric *uf;
	struct ucx_cq *cq;
	TAILQ_ENTRY(ucx_qp) cq_next;
	ucp_ep_h ep;              /**< NULL: a QP to a CN whose process was not up yet */
	ucp_rkey_h rkey;          /**< MN: the region's unpacked rkey */
	uint64_t rbase, rlen;     /**< MN: region */
	uint32_t seq;
	bool lost;                /**< the endpoint failed (peer lost) */
	bool peer_up;             /**< its peer QP announced itself (atomic): SENDs may go */
	bool rejoin;              /**< its peer announced itself again (atomic): a restarted CN
				   *   process; the QP's lcore reconnects (ucx_qp_rejoin()) */
	uint32_t rem_gen;         /**< struct ucx_remote.gen its endpoint was opened on */
	struct ucx_am_hdr connect_hdr; /**< the CONNECT this QP sent at creation */
	bool fatal_said;          /**< the first error completion went out */
	/* send queue: head <= tail, free-running */
	struct ucx_slot *slots;
	uint32_t mask, head, tail;
	uint32_t in_flight;       /**< slots posted and not done */
	struct dtxn_wr_queue rq;  /**< posted RECVs */
	struct rte_ring *inbound; /**< struct ucx_inmsg *, producer: control thread */
};

#define UCX_FABRIC(f) ((struct ucx_fabric *)(f))
#define UCX_CQ(c) ((struct ucx_cq *)(c))
#define UCX_QP(q) ((struct ucx_qp *)(q))

/* ucx_conn.c */
int ucx_ctl_start(struct ucx_fabric *uf);
void ucx_ctl_stop(struct ucx_fabric *uf);
/**
 * The connect message of @p node (cached after the first), asked as
 * @p local. @p once: one attempt, -EAGAIN if its listener does not answer
 * (yet); else retries until the connect timeout (-ETIMEDOUT). Also
 * -ECONNREFUSED, -EPROTO, -ENOMEM, with dtxn_fabric_open_error() set.
 * A CN's HELLO to an MN carries its incarnation, or UCX_INC_NEXT until an
 * MN's ACCEPT named it (self_inc); "ask again" (NOT_READY, PREDECESSOR)
 * is retried like a silent listener. Control path; any thread.
 */
int ucx_remote_get(struct ucx_fabric *uf, uint16_t local, uint16_t node, bool once,
		   const struct ucx_remote **out);
void ucx_remote_forget(struct ucx_fabric *uf);
/**
 * A CN peer restarted (its QP announced itself again): fetches @p node's
 * connect message again, unless another QP did since generation *@p gen
 * (its endpoint's), and sets *@p gen to the one returned. The old
 * message's buffers are kept (another lcore may still read them; a few
 * hundred bytes per restart). Returns as ucx_remote_get(). Control path;
 * the QP's lcore.
 */
int ucx_remote_refresh(struct ucx_fabric *uf, uint16_t local, uint16_t node, uint32_t *gen,
		       const struct ucx_remote **out);
/**
 * MN side of a fence: marks CN @p node fenced (the incarnation admitted:
 * a newer one's HELLO un-fences it) and shuts down every TCP
 * connection of this process whose peer has that node's IP address (but
 * @p keep_fd), if no other node shares the address. @return how many.
 */
unsigned ucx_cut_node(struct ucx_fabric *uf, uint16_t node, int keep_fd);
/** The fabric op (dtxn_fabric_fence_node()): FENCE to every MN, FENCED back. */
int ucx_fence_node(struct dtxn_fabric *f, uint16_t node);
/**
 * At open, before the first HELLO (dtxn_fabric_rdma_conf.take_over): each
 * CN of uf->take_over fenced at every MN (ucx_fence_node()), then admitted
 * by a HELLO to every MN as its next incarnation (MN 0's answer names it;
 * the others are asked for that one), which becomes self_inc. Retries a
 * silent listener up to the connect timeout. @return 0, or -ETIMEDOUT,
 * -ECONNREFUSED, -EIO (a fence not confirmed), -ENOMEM, with
 * dtxn_fabric_open_error() set. Control path.
 */
int ucx_take_over(struct ucx_fabric *uf);

/* ucx_qp.c */
struct dtxn_cq *ucx_cq_create(struct dtxn_fabric *f, int socket_id, unsigned depth);
void ucx_cq_destroy(struct dtxn_cq *cq);
struct dtxn_qp *ucx_qp_create(struct dtxn_fabric *f, struct dtxn_cq *cq,
			      uint16_t local_node, uint16_t remote_node, unsigned max_wr);
void ucx_qp_destroy(struct dtxn_qp *qp);
void ucx_route_deliver(struct ucx_fabric *uf, struct ucx_inmsg *m);
int ucx_qp_connect_late(struct ucx_qp *q);
/**
 * @p q's peer CN restarted (a second CONNECT on its route): settles what
 * the old endpoint carried (flushed, as a lost peer's), closes it, and
 * connects to the new process. The QP's lcore.
 */
void ucx_qp_rejoin(struct ucx_qp *q);

/* ucx_post.c */
int ucx_qp_post(struct dtxn_qp *qp, struct dtxn_wr *wr_list);
int ucx_qp_post_recv(struct dtxn_qp *qp, struct dtxn_wr *wr_list);
void ucx_slot_issue_cas(struct ucx_slot *s);

/* ucx_poll.c */
unsigned ucx_cq_poll(struct dtxn_cq *cq, struct dtxn_cqe *cqes, unsigned n);
void ucx_req_done(void *request, ucs_status_t status, void *user_data);
void ucx_req_settle(struct ucx_slot *s, ucs_status_ptr_t sp);
void ucx_ep_error(void *arg, ucp_ep_h ep, ucs_status_t status);
void ucx_qp_retire(struct ucx_qp *qp);
ucs_status_t ucx_am_recv(void *arg, const void *header, size_t header_length, void *data,
			 size_t length, const ucp_am_recv_param_t *param);
ucs_status_t ucx_verb_serve(void *arg, const void *header, size_t header_length, void *data,
			    size_t length, const ucp_am_recv_param_t *param);
ucs_status_t ucx_verb_answer(void *arg, const void *header, size_t header_length, void *data,
			     size_t length, const ucp_am_recv_param_t *param);
/**
 * Sends slots [@p first, @p first + @p n) of @p q (ring positions; each
 * READ, WRITE, CAS or FAA with its raddr, operand and result set) as one
 * verb message: the MN executes them whole or refuses them whole.
 * @p n <= UCX_VMSG_MAX_VERBS. The QP's lcore.
 */
void ucx_verb_post(struct ucx_qp *q, uint32_t first, uint32_t n);
void ucx_slot_answered(struct ucx_slot *s);
/** One of the slot's UCX requests ended with @p st (the message's, for a verb message). */
void ucx_slot_status(struct ucx_slot *s, ucs_status_t st);

#endif /* DTXN_UCX_PRIVATE_H */
