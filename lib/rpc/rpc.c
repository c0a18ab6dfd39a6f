/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CN-to-CN messages over SEND/RECV (dtxn_rpc.h). Which part does what:
 * - create/destroy: a QP per other CN on the worker's CQ, RECV buffers,
 *   the worker's message hook and the timeout poller;
 * - endpoints: a coordinator's ring of request slots;
 * - sending: requests (synchronous batches and asynchronous sends) and
 *   their resends;
 * - receiving (rpc_msg_cqe, the worker's message hook, in its CQ poller):
 *   requests go to their handler and are answered at once; replies go to
 *   their slot.
 *
 * Wire format: struct dtxn_rpc_hdr (16 B) then the payload, checked by
 * rpc_msg_decode() (rpc_msg.c) before anything reads it. A request
 * names its endpoint, slot and sequence number; the reply echoes them, so
 * the requester finds the slot without a search and drops late replies
 * whose sequence is not the slot's.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_log.h>
#include <rte_malloc.h>

#include "dtxn_fabric.h"
#include "dtxn_sched.h"
#include "rpc_private.h"

RTE_LOG_REGISTER(dtxn_rpc_logtype, dtxn.rpc, INFO);
#define RPC_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_##level, dtxn_rpc_logtype, "dtxn.rpc: " fmt "\n", ##__VA_ARGS__)

_Static_assert(DTXN_RPC_RESP_MAX + sizeof(struct dtxn_rpc_hdr) <= DTXN_WR_INLINE_MAX,
	       "replies go inline");
_Static_assert(DTXN_RPC_SLOTS <= 255, "slot index is 8-bit");

/** Pause of a coordinator waiting for a free slot, ns. */
#define RPC_SLOT_PAUSE_NS 1000
/** Spare RECVs per QP besides two per slot of every endpoint. */
#define RPC_RECV_SPARE 16

enum rpc_slot_state {
	RPC_S_FREE = 0,
	RPC_S_SYNC,    /**< a dtxn_rpc_call_lc() call waits for the reply */
	RPC_S_ASYNC,   /**< dtxn_rpc_send_lc(): nobody waits */
	RPC_S_DONE,    /**< replied or failed; non-inline SENDs still in flight */
};

struct rpc_peer;

struct rpc_slot {
	struct dtxn_rpc_ep *ep;
	uint8_t idx;
	uint8_t state;          /**< enum rpc_slot_state */
	uint16_t sends;         /**< signaled SENDs not yet completed */
	uint32_t seq;
	struct rpc_peer *peer;
	uint64_t deadline_ns;
	unsigned retries;
	struct dtxn_rpc_call *call;
	uint32_t msg_len;
	uint8_t msg[RPC_MSG_MAX] __rte_aligned(8);
};

struct dtxn_rpc_ep {
	struct dtxn_rpc *rpc;
	struct dtxn_coord *c;
	uint16_t id;
	unsigned inflight;      /**< slots not FREE */
	uint32_t seq;
	struct rpc_slot slots[DTXN_RPC_SLOTS];
};


struct rpc_peer {
	struct dtxn_qp *qp;
	bool own_qp;            /**< false: the worker's QP to an MN (mn_peers), not ours to destroy */
	uint16_t node;
	bool down;              /**< dtxn_rpc_peer_down_lc(): no more messages to it */
	unsigned n_rbufs;
	struct rpc_rbuf *rbufs;
};

struct dtxn_rpc {
	struct dtxn_worker *w;
	uint64_t timeout_ns;
	unsigned max_retries;
	unsigned drop_every;
	uint64_t n_out;            /**< outbound messages (drop_every) */
	uint16_t n_peers;
	struct rpc_peer peer[DTXN_MAX_NODES];  /**< [0, n_peers) */
	struct rpc_peer *by_node[DTXN_MAX_NODES];
	struct rpc_handler handlers[DTXN_RPC_TYPES];
	unsigned max_eps;
	unsigned n_eps;
	struct dtxn_rpc_ep **eps;
	unsigned outstanding;      /**< slots waiting for a reply (SYNC/ASYNC) */
	uint64_t next_deadline_ns; /**< earliest deadline of those, or UINT64_MAX */
	struct dtxn_rpc_stats st;
};

/* ------------------------------------------------------------------ */
/* Sending                                                            */
/* ------------------------------------------------------------------ */

/* True if the drop_every test aid eats this outbound message. */
static bool
rpc_drop(struct dtxn_rpc *rpc)
{
	if (rpc->drop_every == 0)
		return false;
	if (++rpc->n_out % rpc->drop_every != 0)
		return false;
	rpc->st.dropped++;
	return true;
}

/* Posts one SEND of @p len bytes at @p msg on @p peer's QP. */
static int
rpc_post_send(struct dtxn_rpc *rpc, struct rpc_peer *peer, void *msg, uint32_t len,
	      struct rpc_slot *slot)
{
	struct dtxn_wr wr;
	int rc;

	dtxn_sched_charge_op(rpc->w->sched, DTXN_CPU_WR, 1);        /* sim only */
	dtxn_sched_charge_op(rpc->w->sched, DTXN_CPU_DOORBELL, 1);
	if (rpc_drop(rpc))
		return 0;
	memset(&wr, 0, sizeof(wr));
	wr.opcode = DTXN_WR_SEND;
	wr.local = msg;
	wr.len = len;
	if (len <= DTXN_WR_INLINE_MAX) {
		wr.flags = DTXN_WR_F_INLINE; /* copied now; completes silently */
	} else {
		wr.flags = DTXN_WR_F_SIGNALED; /* the slot keeps the buffer until done */
		wr.wr_id = (uintptr_t)slot;
	}
	rc = dtxn_qp_post(peer->qp, &wr);
	if (rc == 0 && (wr.flags & DTXN_WR_F_SIGNALED))
		slot->sends++;
	return rc;
}

static void
rpc_deadline(struct dtxn_rpc *rpc, struct rpc_slot *s)
{
	s->deadline_ns = dtxn_now_ns() + rpc->timeout_ns;
	if (s->deadline_ns < rpc->next_deadline_ns)
		rpc->next_deadline_ns = s->deadline_ns;
	dtxn_sched_wake_at(rpc->w->sched, rpc->next_deadline_ns);
}

/* A slot is done: free it once its SENDs have completed. */
static void
rpc_slot_done(struct dtxn_rpc *rpc, struct rpc_slot *s)
{
	if (s->state == RPC_S_SYNC || s->state == RPC_S_ASYNC)
		rpc->outstanding--;
	s->call = NULL;
	if (s->sends != 0) {
		s->state = RPC_S_DONE;
		return;
	}
	s->state = RPC_S_FREE;
	s->ep->inflight--;
}

/* Ends a synchronous call with @p status and wakes its coordinator. */
static void
rpc_call_end(struct rpc_slot *s, int status)
{
	struct dtxn_rpc_call *call = s->call;
	struct dtxn_co *co = s->ep->c->co;

	if (call != NULL)
		call->status = status;
	rpc_slot_done(s->ep->rpc, s);
	dtxn_co_complete_lc(co, 0);
}

static struct rpc_slot *
rpc_free_slot(struct dtxn_rpc_ep *ep)
{
	for (unsigned i = 0; i < DTXN_RPC_SLOTS; i++)
		if (ep->slots[i].state == RPC_S_FREE)
			return &ep->slots[i];
	return NULL;
}

/* Waits (yielding) for a free slot of @p ep. */
static struct rpc_slot *
rpc_take_slot(struct dtxn_rpc_ep *ep)
{
	struct rpc_slot *s;

	while ((s = rpc_free_slot(ep)) == NULL)
		dtxn_co_sleep_until_lc(ep->c->co, dtxn_now_ns() + RPC_SLOT_PAUSE_NS);
	return s;
}

/* Fills slot @p s with a request and posts it. */
static int
rpc_start(struct dtxn_rpc_ep *ep, struct rpc_slot *s, struct rpc_peer *peer, uint8_t type,
	  const void *req, uint32_t len, enum rpc_slot_state state)
{
	struct dtxn_rpc *rpc = ep->rpc;
	struct dtxn_rpc_hdr h = {
		.magic = RPC_MAGIC, .kind = RPC_KIND_REQ, .type = type, .ep = ep->id,
		.slot = s->idx, .seq = ++ep->seq, .worker = (uint16_t)rpc->w->index,
		.len = (uint16_t)len,
	};
	int rc;

	memcpy(s->msg, &h, sizeof(h));
	if (len != 0)
		memcpy(s->msg + sizeof(h), req, len);
	s->msg_len = (uint32_t)sizeof(h) + len;
	s->seq = h.seq;
	s->peer = peer;
	s->retries = 0;
	rc = rpc_post_send(rpc, peer, s->msg, s->msg_len, s);
	if (rc != 0)
		return rc;
	s->state = (uint8_t)state;
	ep->inflight++;
	rpc->outstanding++;
	rpc->st.req_sent++;
	rpc_deadline(rpc, s);
	return 0;
}

static struct rpc_peer *
rpc_peer_of(struct dtxn_rpc *rpc, uint16_t node)
{
	struct rpc_peer *p = node < DTXN_MAX_NODES ? rpc->by_node[node] : NULL;

	return p != NULL && !p->down ? p : NULL;
}

int
dtxn_rpc_peer_down_lc(struct dtxn_rpc *rpc, uint16_t node)
{
	struct rpc_peer *peer;
	int n = 0;

	if (rpc == NULL || node >= DTXN_MAX_NODES || rpc->by_node[node] == NULL)
		return -EINVAL;
	peer = rpc->by_node[node];
	peer->down = true;
	for (unsigned e = 0; e < rpc->n_eps; e++) {
		struct dtxn_rpc_ep *ep = rpc->eps[e];

		for (unsigned i = 0; ep != NULL && i < DTXN_RPC_SLOTS; i++) {
			struct rpc_slot *s = &ep->slots[i];

			if (s->peer != peer || (s->state != RPC_S_SYNC && s->state != RPC_S_ASYNC))
				continue;
			n++;
			if (s->state == RPC_S_SYNC)
				rpc_call_end(s, -ENOTCONN);
			else
				rpc_slot_done(rpc, s);
		}
	}
	return n;
}

int
dtxn_rpc_peer_up_lc(struct dtxn_rpc *rpc, uint16_t node)
{
	if (rpc == NULL || node >= DTXN_MAX_NODES || rpc->by_node[node] == NULL)
		return -EINVAL;
	rpc->by_node[node]->down = false;
	return 0;
}

int
dtxn_rpc_call_lc(struct dtxn_rpc_ep *ep, struct dtxn_rpc_call *calls, unsigned n)
{
	struct dtxn_co *co;
	unsigned i;
	int first = 0;

	if (ep == NULL || (calls == NULL && n != 0))
		return -EINVAL;
	co = ep->c->co;
	dtxn_co_settle_lc(co); /* virtual time: CPU spent before the messages leave */
	for (i = 0; i < n; i++) {
		struct dtxn_rpc_call *call = &calls[i];
		struct rpc_peer *peer = rpc_peer_of(ep->rpc, call->dst_node);
		struct rpc_slot *s;
		int rc;

		call->resp_len = 0;
		call->status = 0;
		if (peer == NULL || call->req_len > DTXN_RPC_REQ_MAX || call->resp == NULL ||
		    call->type >= DTXN_RPC_TYPES || (call->req == NULL && call->req_len != 0)) {
			call->status = peer == NULL && call->dst_node < DTXN_MAX_NODES &&
						call->req_len <= DTXN_RPC_REQ_MAX ?
					       -ENOTCONN :
					       -EINVAL;
			continue;
		}
		s = rpc_take_slot(ep);
		s->call = call;
		dtxn_co_expect_lc(co, 1);
		rc = rpc_start(ep, s, peer, call->type, call->req, call->req_len, RPC_S_SYNC);
		if (rc != 0) {
			s->call = NULL;
			call->status = rc;
			dtxn_co_complete_lc(co, 0);
		}
	}
	(void)dtxn_co_wait_lc(co);
	for (i = 0; i < n; i++)
		if (calls[i].status != 0 && first == 0)
			first = calls[i].status;
	return first;
}

int
dtxn_rpc_send_lc(struct dtxn_rpc_ep *ep, uint16_t dst_node, uint8_t type, const void *req,
		 uint32_t len)
{
	struct rpc_peer *peer;
	struct rpc_slot *s;

	if (ep == NULL || len > DTXN_RPC_REQ_MAX || type >= DTXN_RPC_TYPES ||
	    (req == NULL && len != 0))
		return -EINVAL;
	peer = rpc_peer_of(ep->rpc, dst_node);
	if (peer == NULL)
		return dst_node < DTXN_MAX_NODES ? -ENOTCONN : -EINVAL;
	dtxn_co_settle_lc(ep->c->co);
	s = rpc_take_slot(ep);
	s->call = NULL;
	return rpc_start(ep, s, peer, type, req, len, RPC_S_ASYNC);
}

/* Timeout poller: resends or fails the requests past their deadline. */
static unsigned
rpc_poll_timeouts(void *arg)
{
	struct dtxn_rpc *rpc = arg;
	uint64_t now, next = UINT64_MAX;
	unsigned work = 0;

	if (rpc->outstanding == 0)
		return 0;
	if ((now = dtxn_now_ns()) < rpc->next_deadline_ns) {
		dtxn_sched_wake_at(rpc->w->sched, rpc->next_deadline_ns);
		return 0;
	}
	for (unsigned e = 0; e < rpc->n_eps; e++) {
		struct dtxn_rpc_ep *ep = rpc->eps[e];

		if (ep == NULL || ep->inflight == 0)
			continue;
		for (unsigned i = 0; i < DTXN_RPC_SLOTS; i++) {
			struct rpc_slot *s = &ep->slots[i];

			if (s->state != RPC_S_SYNC && s->state != RPC_S_ASYNC)
				continue;
			if (s->deadline_ns > now) {
				next = RTE_MIN(next, s->deadline_ns);
				continue;
			}
			work++;
			if (s->retries >= rpc->max_retries) {
				rpc->st.failed++;
				RPC_LOG(WARNING, "request type %u to node %u: no reply after %u sends",
					s->msg[3], s->peer->node, s->retries + 1);
				if (s->state == RPC_S_SYNC)
					rpc_call_end(s, -ETIMEDOUT);
				else
					rpc_slot_done(rpc, s);
				continue;
			}
			s->retries++;
			rpc->st.resent++;
			if (rpc_post_send(rpc, s->peer, s->msg, s->msg_len, s) != 0)
				RPC_LOG(DEBUG, "resend to node %u not posted; next timeout retries",
					s->peer->node);
			s->deadline_ns = now + rpc->timeout_ns;
			next = RTE_MIN(next, s->deadline_ns);
		}
	}
	rpc->next_deadline_ns = next;
	if (rpc->outstanding != 0)
		dtxn_sched_wake_at(rpc->w->sched, next);
	return work;
}

/* ------------------------------------------------------------------ */
/* Receiving                                                          */
/* ------------------------------------------------------------------ */

static void
rpc_repost(struct rpc_peer *peer, struct rpc_rbuf *rb)
{
	rb->wr.next = NULL;
	if (dtxn_qp_post_recv(peer->qp, &rb->wr) != 0)
		RPC_LOG(ERR, "RECV to node %u not reposted", peer->node);
}

/* A request: run its handler, answer at once. */
static void
rpc_on_req(struct dtxn_rpc *rpc, struct rpc_peer *peer, const struct dtxn_rpc_hdr *h,
	   const uint8_t *payload)
{
	uint8_t out[DTXN_WR_INLINE_MAX] __rte_aligned(8);
	struct dtxn_rpc_hdr r;
	int n;

	rpc->st.req_handled++;
	n = rpc_handler_run(rpc->handlers, h->type, peer->node, payload, h->len, out + sizeof(r),
			    dtxn_rpc_logtype);
	if (n == RPC_HANDLER_BAD)
		rpc->st.bad++;
	if (n < 0)
		return;
	r = *h;
	r.kind = RPC_KIND_RESP;
	r.worker = (uint16_t)rpc->w->index;
	r.len = (uint16_t)n;
	memcpy(out, &r, sizeof(r));
	if (rpc_post_send(rpc, peer, out, (uint32_t)(sizeof(r) + (uint32_t)n), NULL) != 0)
		RPC_LOG(DEBUG, "reply to node %u not posted; it will resend", peer->node);
}

/* A reply: to its slot, if that still waits for it. */
static void
rpc_on_resp(struct dtxn_rpc *rpc, struct rpc_peer *peer, const struct dtxn_rpc_hdr *h,
	    const uint8_t *payload)
{
	struct dtxn_rpc_ep *ep = h->ep < rpc->n_eps ? rpc->eps[h->ep] : NULL;
	struct rpc_slot *s;

	if (ep == NULL || h->slot >= DTXN_RPC_SLOTS) {
		rpc->st.bad++;
		return;
	}
	s = &ep->slots[h->slot];
	if ((s->state != RPC_S_SYNC && s->state != RPC_S_ASYNC) || s->seq != h->seq ||
	    s->peer != peer) {
		rpc->st.stale++;
		return;
	}
	rpc->st.resp_recv++;
	if (s->state == RPC_S_ASYNC) {
		rpc_slot_done(rpc, s);
		return;
	}
	if (s->call != NULL) {
		uint32_t len = RTE_MIN((uint32_t)h->len, (uint32_t)DTXN_RPC_RESP_MAX);

		memcpy(s->call->resp, payload, len);
		s->call->resp_len = len;
	}
	rpc_call_end(s, 0);
}

/* The worker's message hook: SEND and RECV completions of its CQ. */
static void
rpc_msg_cqe(void *arg, const struct dtxn_cqe *cqe)
{
	struct dtxn_rpc *rpc = arg;
	struct rpc_rbuf *rb;
	struct dtxn_rpc_hdr h;

	if (cqe->opcode == DTXN_WR_SEND) {
		struct rpc_slot *s = (struct rpc_slot *)(uintptr_t)cqe->wr_id;

		if (cqe->status != DTXN_WC_SUCCESS)
			RPC_LOG(DEBUG, "SEND completed with status %u", cqe->status);
		if (s != NULL && s->sends > 0 && --s->sends == 0 && s->state == RPC_S_DONE) {
			s->state = RPC_S_FREE;
			s->ep->inflight--;
		}
		return;
	}
	rb = (struct rpc_rbuf *)(uintptr_t)cqe->wr_id;
	if (rb == NULL)
		return;
	if (cqe->status != DTXN_WC_SUCCESS) {
		if (cqe->status != DTXN_WC_WR_FLUSH_ERR) {
			rpc->st.bad++;
			rpc_repost(rb->owner, rb);
		}
		return;
	}
	dtxn_sched_charge_op(rpc->w->sched, DTXN_CPU_MSG, 1); /* sim only */
	switch (rpc_msg_decode(rb->data, RTE_MIN(cqe->byte_len, (uint32_t)RPC_MSG_MAX),
			       (uint16_t)rpc->w->index, &h)) {
	case RPC_KIND_REQ:
		rpc_on_req(rpc, rb->owner, &h, rb->data + sizeof(h));
		break;
	case RPC_KIND_RESP:
		rpc_on_resp(rpc, rb->owner, &h, rb->data + sizeof(h));
		break;
	default:
		rpc->st.bad++;
		RPC_LOG(WARNING, "malformed or misrouted message from node %u dropped",
			((struct rpc_peer *)rb->owner)->node);
		break;
	}
	rpc_repost(rb->owner, rb);
}

/* ------------------------------------------------------------------ */
/* Life cycle                                                         */
/* ------------------------------------------------------------------ */

static void
rpc_free(struct dtxn_rpc *rpc)
{
	for (unsigned i = 0; i < rpc->n_peers; i++) {
		if (rpc->peer[i].qp != NULL) {
			if (rpc->w->peer_qp[rpc->peer[i].node] == rpc->peer[i].qp)
				rpc->w->peer_qp[rpc->peer[i].node] = NULL;
			if (rpc->peer[i].own_qp)
				dtxn_qp_destroy(rpc->peer[i].qp);
		}
		rte_free(rpc->peer[i].rbufs);
	}
	rte_free(rpc->eps);
	rte_free(rpc);
}

static int
rpc_peer_init(struct dtxn_rpc *rpc, struct rpc_peer *p, uint16_t node, unsigned depth,
	      unsigned n_rbufs)
{
	struct dtxn_worker *w = rpc->w;

	p->node = node;
	if (node < dtxn_fabric_conf(w->db->fabric)->n_mn) {
		/* an MN: the worker's own RC QP to it carries the messages too */
		p->qp = w->qp[node];
		if (p->qp == NULL)
			return -EINVAL;
	} else {
		p->qp = dtxn_qp_create(w->db->fabric, w->cq, w->cn_node, node, depth);
		if (p->qp == NULL)
			return -rte_errno;
		p->own_qp = true;
		w->peer_qp[node] = p->qp; /* the report counts its SENDs (dtxn_worker_peer_counters()) */
	}
	p->n_rbufs = n_rbufs;
	return rpc_rbufs_post(p->qp, p, n_rbufs, w->socket_id, &p->rbufs);
}

/* RECV buffers per peer QP: requests from the peer's endpoints and replies to ours. */
static unsigned
rpc_n_rbufs(unsigned max_eps)
{
	return 2 * max_eps * DTXN_RPC_SLOTS + RPC_RECV_SPARE;
}

/* RECV buffers on a worker's QP to an MN (mn_peers): the replies to our endpoints. */
static unsigned
rpc_n_rbufs_mn(unsigned max_eps)
{
	return max_eps * DTXN_RPC_SLOTS + RPC_RECV_SPARE;
}

static unsigned
rpc_depth(unsigned n_rbufs)
{
	return rte_align32pow2(RTE_MAX(n_rbufs + 64, 64u));
}

int
dtxn_rpc_footprint(unsigned n_cn, unsigned max_eps, struct dtxn_footprint *fp)
{
	const uint64_t slack = DTXN_FOOTPRINT_ALLOC_SLACK;
	unsigned n_rbufs, depth, peers;

	if (fp == NULL || max_eps == 0 || max_eps > UINT16_MAX || n_cn == 0)
		return -EINVAL;
	n_rbufs = rpc_n_rbufs(max_eps);
	depth = rpc_depth(n_rbufs);
	if (depth > 65536)
		return -EINVAL;
	peers = n_cn - 1;
	fp->bytes += sizeof(struct dtxn_rpc) + slack + sizeof(struct dtxn_rpc_ep *) * max_eps +
		     slack + (uint64_t)max_eps * (sizeof(struct dtxn_rpc_ep) + slack) +
		     (uint64_t)peers * (sizeof(struct rpc_rbuf) * n_rbufs + slack);
	if (peers > 0)
		dtxn_fabric_queue_footprint(peers, depth, fp); /* a CQ too: an upper bound */
	return 0;
}

int
dtxn_rpc_footprint_mn(unsigned n_mn, unsigned max_eps, struct dtxn_footprint *fp)
{
	if (fp == NULL || max_eps == 0 || max_eps > UINT16_MAX || n_mn == 0 ||
	    rpc_depth(rpc_n_rbufs(max_eps)) > 65536)
		return -EINVAL;
	fp->bytes += (uint64_t)n_mn * (sizeof(struct rpc_rbuf) * rpc_n_rbufs_mn(max_eps) +
				       DTXN_FOOTPRINT_ALLOC_SLACK);
	return 0;
}

struct dtxn_rpc *
dtxn_rpc_create(struct dtxn_worker *w, const struct dtxn_rpc_conf *conf)
{
	const struct dtxn_fabric_conf *fc;
	struct dtxn_rpc *rpc;
	unsigned max_eps, n_rbufs, depth;
	int rc = -EINVAL;

	if (w == NULL || conf == NULL || conf->size < sizeof(*conf) || w->db == NULL ||
	    w->db->fabric == NULL || w->msg_cqe != NULL)
		goto fail0;
	fc = dtxn_fabric_conf(w->db->fabric);
	max_eps = dtxn_worker_max_coords(w);
	if (max_eps == 0 || max_eps > UINT16_MAX)
		goto fail0;
	rpc = rte_zmalloc_socket("dtxn_rpc", sizeof(*rpc), RTE_CACHE_LINE_SIZE, w->socket_id);
	if (rpc == NULL) {
		rc = -ENOMEM;
		goto fail0;
	}
	rpc->w = w;
	rpc->timeout_ns = conf->timeout_ns != 0 ? conf->timeout_ns : DTXN_RPC_TIMEOUT_NS_DEFAULT;
	rpc->max_retries = conf->max_retries != 0 ? conf->max_retries : DTXN_RPC_RETRIES_DEFAULT;
	rpc->drop_every = conf->drop_every;
	rpc->next_deadline_ns = UINT64_MAX;
	rpc->max_eps = max_eps;
	rpc->eps = rte_zmalloc_socket("dtxn_rpc_eps", sizeof(*rpc->eps) * max_eps, 0,
				      w->socket_id);
	if (rpc->eps == NULL) {
		rc = -ENOMEM;
		goto fail;
	}
	/* requests from the peer's endpoints and replies to ours, per QP */
	n_rbufs = rpc_n_rbufs(max_eps);
	depth = rpc_depth(n_rbufs);
	if (depth > 65536) {
		rc = -EINVAL;
		goto fail;
	}
	for (uint16_t n = fc->n_mn; n < fc->n_mn + fc->n_cn; n++) {
		struct rpc_peer *p;

		if (n == w->cn_node)
			continue;
		p = &rpc->peer[rpc->n_peers++];
		rpc->by_node[n] = p;
		rc = rpc_peer_init(rpc, p, n, depth, n_rbufs);
		if (rc != 0)
			goto fail;
	}
	for (uint16_t n = 0; conf->mn_peers && n < fc->n_mn; n++) {
		/* the MN answers requests only: replies to our endpoints */
		struct rpc_peer *p = &rpc->peer[rpc->n_peers++];

		rpc->by_node[n] = p;
		rc = rpc_peer_init(rpc, p, n, depth, rpc_n_rbufs_mn(max_eps));
		if (rc != 0)
			goto fail;
	}
	if (dtxn_sched_add_poller(w->sched, rpc_poll_timeouts, rpc) != 0) {
		rc = -ENOSPC;
		goto fail;
	}
	w->msg_arg = rpc;
	w->msg_cqe = rpc_msg_cqe;
	return rpc;
fail:
	rpc_free(rpc);
fail0:
	rte_errno = -rc;
	return NULL;
}

void
dtxn_rpc_destroy(struct dtxn_rpc *rpc)
{
	if (rpc == NULL)
		return;
	for (unsigned e = 0; e < rpc->n_eps; e++)
		if (rpc->eps[e] != NULL)
			dtxn_rpc_ep_destroy(rpc->eps[e]);
	if (rpc->w->msg_arg == rpc) {
		rpc->w->msg_cqe = NULL;
		rpc->w->msg_arg = NULL;
	}
	rpc_free(rpc);
}

int
dtxn_rpc_register(struct dtxn_rpc *rpc, uint8_t type, dtxn_rpc_handler_fn fn, void *arg)
{
	if (rpc == NULL)
		return -EINVAL;
	return rpc_handler_set(rpc->handlers, type, fn, arg);
}

struct dtxn_rpc_ep *
dtxn_rpc_ep_create(struct dtxn_rpc *rpc, struct dtxn_coord *c)
{
	struct dtxn_rpc_ep *ep;

	if (rpc == NULL || c == NULL) {
		rte_errno = EINVAL;
		return NULL;
	}
	if (rpc->n_eps >= rpc->max_eps) {
		rte_errno = ENOSPC;
		return NULL;
	}
	ep = rte_zmalloc_socket("dtxn_rpc_ep", sizeof(*ep), RTE_CACHE_LINE_SIZE,
				rpc->w->socket_id);
	if (ep == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	ep->rpc = rpc;
	ep->c = c;
	ep->id = (uint16_t)rpc->n_eps;
	for (unsigned i = 0; i < DTXN_RPC_SLOTS; i++) {
		ep->slots[i].ep = ep;
		ep->slots[i].idx = (uint8_t)i;
	}
	rpc->eps[rpc->n_eps++] = ep;
	return ep;
}

void
dtxn_rpc_ep_destroy(struct dtxn_rpc_ep *ep)
{
	struct dtxn_rpc *rpc;

	if (ep == NULL)
		return;
	rpc = ep->rpc;
	for (unsigned i = 0; i < DTXN_RPC_SLOTS; i++) {
		struct rpc_slot *s = &ep->slots[i];

		if (s->state == RPC_S_SYNC || s->state == RPC_S_ASYNC)
			rpc->outstanding--;
		/* a signaled SEND still in flight would name this slot */
		if (s->sends != 0)
			RPC_LOG(DEBUG, "endpoint %u freed with a SEND in flight", ep->id);
	}
	if (ep->id < rpc->n_eps && rpc->eps[ep->id] == ep)
		rpc->eps[ep->id] = NULL;
	rte_free(ep);
}

unsigned
dtxn_rpc_ep_inflight(const struct dtxn_rpc_ep *ep)
{
	return ep == NULL ? 0 : ep->inflight;
}

void
dtxn_rpc_stats_get(const struct dtxn_rpc *rpc, struct dtxn_rpc_stats *st)
{
	if (rpc != NULL && st != NULL)
		*st = rpc->st;
}

struct dtxn_worker *
dtxn_rpc_worker(const struct dtxn_rpc *rpc)
{
	return rpc == NULL ? NULL : rpc->w;
}
