/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RRPC (dtxn_rrpc.h): the domain (CN message memory), a worker's Rockets
 * (one outbound ring per other CN), sending (calls, flushes with one
 * doorbell per CN), and the poller that takes complete buckets, runs
 * handlers and matches replies. The bucket format is rrpc_bucket.c's.
 *
 * Where the rings are: rrpc_peer.h; one Rocket's ring work: rrpc_peer.c.
 * A worker has a Rocket to every other CN and, when the domain has MN
 * rings (dtxn_rrpc_domain_conf mn_ring_off), to every MN, whose service
 * answers with rrpc_mn.c.
 */
#include <errno.h>
#include <string.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_hash_crc.h>
#include <rte_log.h>
#include <rte_malloc.h>

#include "dtxn_fabric.h"
#include "dtxn_rrpc.h"
#include "dtxn_sched.h"
#include "rpc_private.h"
#include "rrpc_peer.h"

_Static_assert(DTXN_RRPC_BUCKET_BYTES == RRPC_BUCKET_BYTES, "bucket size");
_Static_assert(DTXN_RRPC_REQ_MAX == RRPC_MSG_PAYLOAD_MAX, "largest request");
_Static_assert(DTXN_RPC_SLOTS <= 255, "slot index is 8-bit");

#define RRPC_MAX_WORKERS 1024u
/** Pause of a coordinator waiting for a slot or ring room, ns. */
#define RRPC_PAUSE_NS 1000

enum { RRPC_S_FREE = 0, RRPC_S_WAIT };

struct rrpc_slot {
	uint8_t state;
	uint32_t seq;
	uint16_t node;
	struct dtxn_rpc_call *call;        /**< mode (a), or */
	struct dtxn_rrpc_zc_call *zc;      /**< mode (c) */
};

struct dtxn_rrpc_ep {
	struct dtxn_rrpc *r;
	struct dtxn_coord *c;
	uint16_t id;
	uint32_t seq;
	struct rrpc_slot slots[DTXN_RPC_SLOTS];
};

struct dtxn_rrpc {
	struct dtxn_rrpc_domain *d;
	struct dtxn_worker *w;
	struct rrpc_io io;
	unsigned n_peers;
	struct rrpc_peer peer[DTXN_MAX_NODES];
	struct rrpc_peer *by_node[DTXN_MAX_NODES];
	struct rpc_handler handlers[DTXN_RPC_TYPES];
	struct {
		dtxn_rrpc_zc_fn fn;
		void *arg;
	} zc_handlers[DTXN_RPC_TYPES];
	unsigned max_eps, n_eps;
	struct dtxn_rrpc_ep **eps;
	bool flushing;                     /**< a coroutine yields before flushing */
	struct dtxn_rrpc_stats st;
};

/* ------------------------------------------------------------------ */
/* Domain                                                             */
/* ------------------------------------------------------------------ */

/* A WRITE landed in a CN's message memory: wake the worker whose ring it is. */
static void
rrpc_on_write(void *arg, uint64_t off, uint32_t len)
{
	const struct rrpc_row *row = arg;
	const struct dtxn_rrpc_domain *d = row->d;
	uint64_t k = off / ((uint64_t)d->n_nodes * d->ring_bytes);
	struct dtxn_rrpc *r;

	RTE_SET_USED(len);
	if (k >= d->max_workers)
		return;
	r = __atomic_load_n(&d->by_worker[(size_t)row->cn_idx * d->max_workers + k],
			    __ATOMIC_ACQUIRE);
	if (r != NULL)
		dtxn_cq_kick(r->w->cq);
}

void
dtxn_rrpc_domain_destroy(struct dtxn_rrpc_domain *d)
{
	if (d == NULL)
		return;
	for (unsigned n = d->n_mn; n < d->n_nodes && !d->shared; n++) {
		if (d->mem[n] == NULL)
			continue;
		dtxn_fabric_cn_mr_dereg(d->f, (uint16_t)n);
		rte_free(d->mem[n]);
	}
	rte_free(d->by_worker);
	rte_free(d);
}

struct dtxn_rrpc_domain *
dtxn_rrpc_domain_create(struct dtxn_fabric *f, const struct dtxn_rrpc_domain_conf *conf)
{
	const struct dtxn_fabric_conf *fc;
	struct dtxn_rrpc_domain *d;
	unsigned nb, n_cn;
	int rc = -EINVAL;

	if (f == NULL || conf == NULL || conf->size < sizeof(*conf) || conf->max_workers == 0 ||
	    conf->max_workers > RRPC_MAX_WORKERS)
		goto fail0;
	nb = conf->buckets != 0 ? conf->buckets : DTXN_RRPC_BUCKETS_DEFAULT;
	if (nb < 8 || nb > 4096 || (nb & (nb - 1)) != 0)
		goto fail0;
	if (conf->zc_bytes != 0 && ((conf->zc_bytes & 63u) != 0 ||
				    conf->zc_bytes > DTXN_RRPC_ZC_MAX || conf->zc_eps == 0 ||
				    conf->zc_eps > UINT16_MAX ||
				    (uint64_t)conf->max_workers * conf->zc_eps * DTXN_RPC_SLOTS *
						    conf->zc_bytes > (UINT64_C(1) << 32)))
		goto fail0;
	fc = dtxn_fabric_conf(f);
	/* across processes: RRPC to the MNs only, and no rejoin (a new incarnation's rings) */
	if (fc->multi_process && (conf->mn_ring_off == 0 || conf->zc_bytes != 0 ||
				  fc->incarnation != 0)) {
		rc = -ENOTSUP;
		goto fail0;
	}
	d = rte_zmalloc_socket("dtxn_rrpc_domain", sizeof(*d), RTE_CACHE_LINE_SIZE,
			       conf->socket_id);
	if (d == NULL) {
		rc = -ENOMEM;
		goto fail0;
	}
	d->f = f;
	d->n_mn = fc->n_mn;
	d->n_nodes = (unsigned)fc->n_mn + fc->n_cn;
	n_cn = fc->n_cn;
	d->max_workers = conf->max_workers;
	d->nb = nb;
	d->mn_ring_off = conf->mn_ring_off;
	d->ring_bytes = RRPC_CTRL_BYTES + (uint64_t)nb * RRPC_BUCKET_BYTES;
	d->zc_bytes = conf->zc_bytes;
	d->zc_eps = conf->zc_bytes != 0 ? conf->zc_eps : 0;
	d->zc_off = (uint64_t)d->max_workers * d->n_nodes * d->ring_bytes;
	d->region_bytes = d->zc_off + (uint64_t)d->max_workers * d->zc_eps * DTXN_RPC_SLOTS *
					      d->zc_bytes;
	d->by_worker = rte_zmalloc_socket("dtxn_rrpc_workers",
					  sizeof(*d->by_worker) * n_cn * d->max_workers, 0,
					  conf->socket_id);
	rc = -ENOMEM;
	if (d->by_worker == NULL)
		goto fail;
	d->shared = fc->multi_process != 0;
	for (unsigned n = d->n_mn; n < d->n_nodes && !d->shared; n++) {
		d->mem[n] = rte_zmalloc_socket("dtxn_rrpc_mem", d->region_bytes, RTE_CACHE_LINE_SIZE,
					       conf->socket_id);
		if (d->mem[n] == NULL) {
			rc = -ENOMEM;
			goto fail;
		}
		d->rows[n].d = d;
		d->rows[n].cn_idx = n - d->n_mn;
		rc = dtxn_fabric_cn_mr_reg(f, (uint16_t)n, d->mem[n], d->region_bytes,
					   rrpc_on_write, &d->rows[n]);
		if (rc != 0) {
			rte_free(d->mem[n]);
			d->mem[n] = NULL;
			goto fail;
		}
	}
	return d;
fail:
	dtxn_rrpc_domain_destroy(d);
fail0:
	rte_errno = -rc;
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Sending                                                            */
/* ------------------------------------------------------------------ */

static void
rrpc_flush_all(struct dtxn_rrpc *r)
{
	for (unsigned i = 0; i < r->n_peers; i++) {
		struct rrpc_peer *p = &r->peer[i];

		if (rrpc_peer_needs_flush(&r->io, p))
			rrpc_peer_flush(&r->io, p);
	}
}

static struct rrpc_slot *
rrpc_take_slot(struct dtxn_rrpc_ep *ep)
{
	for (;;) {
		for (unsigned i = 0; i < DTXN_RPC_SLOTS; i++)
			if (ep->slots[i].state == RRPC_S_FREE)
				return &ep->slots[i];
		dtxn_co_sleep_until_lc(ep->c->co, dtxn_now_ns() + RRPC_PAUSE_NS);
	}
}

/* Offset of (worker k, endpoint e, slot i)'s zero-copy buffer in its CN's memory. */
static inline uint64_t
rrpc_zc_off(const struct dtxn_rrpc_domain *d, unsigned k, unsigned e, unsigned i)
{
	return d->zc_off + (((uint64_t)k * d->zc_eps + e) * DTXN_RPC_SLOTS + i) * d->zc_bytes;
}

uint32_t
rrpc_zc_crc(const void *data, uint32_t len)
{
	return rte_hash_crc(data, len, 0xffffffffu);
}

/*
 * Puts one request in its Rocket (waiting, yielding, for room): mode (a)
 * for @p call, or mode (c) for @p zc (its head carries the slot's buffer).
 */
static int
rrpc_put_req(struct dtxn_rrpc_ep *ep, struct dtxn_rpc_call *call, struct dtxn_rrpc_zc_call *zc)
{
	struct dtxn_rrpc *r = ep->r;
	uint16_t dst = call != NULL ? call->dst_node : zc->dst_node;
	uint8_t type = call != NULL ? call->type : zc->type;
	const void *req = call != NULL ? call->req : zc->req;
	uint32_t req_len = call != NULL ? call->req_len : zc->req_len;
	struct rrpc_peer *p = dst < DTXN_MAX_NODES ? r->by_node[dst] : NULL;
	uint8_t buf[DTXN_RRPC_REQ_MAX] __rte_aligned(8);
	const void *payload = req;
	struct rrpc_msg_hdr h;
	struct rrpc_slot *s;
	int rc;

	if (p == NULL)
		return dst < DTXN_MAX_NODES ? -ENOTCONN : -EINVAL;
	if (type >= DTXN_RPC_TYPES || (req == NULL && req_len != 0) ||
	    req_len > (zc != NULL ? DTXN_RRPC_ZC_REQ_MAX : DTXN_RRPC_REQ_MAX) ||
	    (call != NULL && call->resp == NULL))
		return -EINVAL;
	if (zc != NULL && ep->id >= r->d->zc_eps)
		return -ENOSPC;
	s = rrpc_take_slot(ep);
	memset(&h, 0, sizeof(h));
	h.len = (uint16_t)req_len;
	h.kind = RRPC_KIND_REQ;
	h.type = type;
	h.ep = ep->id;
	h.slot = (uint8_t)(s - ep->slots);
	h.seq = ++ep->seq;
	if (zc != NULL) {
		struct rrpc_zc_req zr = {
			.raddr = DTXN_RADDR(r->w->cn_node,
					    rrpc_zc_off(r->d, r->w->index, ep->id, h.slot)),
			.cap = r->d->zc_bytes,
		};

		memcpy(buf, &zr, sizeof(zr));
		if (req_len != 0)
			memcpy(buf + sizeof(zr), req, req_len);
		payload = buf;
		h.len = (uint16_t)(sizeof(zr) + req_len);
		h.kind = RRPC_KIND_REQ_ZC;
	}
	while ((rc = rrpc_peer_append(&r->io, p, &h, payload)) == -EAGAIN) {
		rrpc_peer_flush(&r->io, p);
		dtxn_co_sleep_until_lc(ep->c->co, dtxn_now_ns() + RRPC_PAUSE_NS);
	}
	if (rc != 0)
		return rc;
	s->state = RRPC_S_WAIT;
	s->seq = h.seq;
	s->node = p->node;
	s->call = call;
	s->zc = zc;
	r->st.req_sent++;
	return 0;
}

/* Sends calls[] (mode (a)) or zcs[] (mode (c)), @p n of them, and waits for every reply. */
static int
rrpc_call(struct dtxn_rrpc_ep *ep, struct dtxn_rpc_call *calls, struct dtxn_rrpc_zc_call *zcs,
	  unsigned n)
{
	struct dtxn_co *co = ep->c->co;
	int first = 0;

	dtxn_co_settle_lc(co); /* virtual time: CPU spent before the messages leave */
	for (unsigned i = 0; i < n; i++) {
		int *status = calls != NULL ? &calls[i].status : &zcs[i].status;

		if (calls != NULL)
			calls[i].resp_len = 0;
		else
			zcs[i].data_len = 0;
		*status = 0;
		dtxn_co_expect_lc(co, 1);
		*status = rrpc_put_req(ep, calls != NULL ? &calls[i] : NULL,
				       calls != NULL ? NULL : &zcs[i]);
		if (*status != 0)
			dtxn_co_complete_lc(co, 0);
	}
	if (!ep->r->flushing) {
		/* lead the flush: let the lcore's ready coroutines add theirs first */
		ep->r->flushing = true;
		dtxn_co_yield_lc(co);
		ep->r->flushing = false;
		rrpc_flush_all(ep->r);
	}
	(void)dtxn_co_wait_lc(co);
	for (unsigned i = 0; i < n && first == 0; i++)
		first = calls != NULL ? calls[i].status : zcs[i].status;
	return first;
}

int
dtxn_rrpc_call_lc(struct dtxn_rrpc_ep *ep, struct dtxn_rpc_call *calls, unsigned n)
{
	if (ep == NULL || (calls == NULL && n != 0))
		return -EINVAL;
	return rrpc_call(ep, calls, NULL, n);
}

int
dtxn_rrpc_call_zc_lc(struct dtxn_rrpc_ep *ep, struct dtxn_rrpc_zc_call *calls, unsigned n)
{
	if (ep == NULL || (calls == NULL && n != 0))
		return -EINVAL;
	if (n == 0)
		return 0;
	return rrpc_call(ep, NULL, calls, n);
}

/* ------------------------------------------------------------------ */
/* Receiving                                                          */
/* ------------------------------------------------------------------ */

struct rrpc_rx_ctx {
	struct dtxn_rrpc *r;
	struct rrpc_peer *p;
	unsigned msgs;
};

static void
rrpc_on_req(struct dtxn_rrpc *r, struct rrpc_peer *p, const struct rrpc_msg_hdr *h,
	    const uint8_t *payload)
{
	uint8_t out[DTXN_RPC_RESP_MAX] __rte_aligned(8);
	struct rrpc_msg_hdr rh;
	int n;

	r->st.req_handled++;
	n = rpc_handler_run(r->handlers, h->type, p->node, payload, h->len, out, dtxn_rrpc_logtype);
	if (n == RPC_HANDLER_BAD)
		r->st.bad++;
	if (n < 0)
		return;
	rh = *h;
	rh.kind = RRPC_KIND_RESP;
	rh.len = (uint16_t)n;
	if (rrpc_peer_append(&r->io, p, &rh, out) != 0) {
		/* cannot happen while buckets >= outstanding requests / 2 (create checks) */
		r->st.bad++;
		RRPC_LOG(ERR, "no ring room for a reply to node %u", p->node);
	}
}

/*
 * Mode (c), server side: runs the zero-copy handler into the staging copy
 * of the requester's slot, WRITEs it to the address the request carries
 * (posted now, before the bucket that will carry the completion, on the
 * same RC QP), and appends the completion (length, CRC).
 */
static void
rrpc_on_req_zc(struct dtxn_rrpc *r, struct rrpc_peer *p, const struct rrpc_msg_hdr *h,
	       const uint8_t *payload)
{
	const struct dtxn_rrpc_domain *d = r->d;
	struct rrpc_zc_resp zr = { .len = -1 };
	struct rrpc_msg_hdr rh;
	struct rrpc_zc_req q;
	uint8_t *stage;
	int n = -1;

	r->st.req_handled++;
	if (h->len < sizeof(q) || p->zc_stage == NULL || h->ep >= d->zc_eps ||
	    h->slot >= DTXN_RPC_SLOTS) {
		r->st.bad++;
		goto reply;
	}
	memcpy(&q, payload, sizeof(q));
	/* the buffer must be the requester's own slot buffer on its node: never write elsewhere */
	if (DTXN_RADDR_MN(q.raddr) != p->node || q.cap != d->zc_bytes ||
	    DTXN_RADDR_OFF(q.raddr) != rrpc_zc_off(d, r->w->index, h->ep, h->slot)) {
		r->st.bad++;
		goto reply;
	}
	if (r->zc_handlers[h->type].fn == NULL) {
		r->st.bad++;
		RRPC_LOG(WARNING, "no zero-copy handler for type %u", h->type);
		goto reply;
	}
	stage = p->zc_stage + ((uint64_t)h->ep * DTXN_RPC_SLOTS + h->slot) * d->zc_bytes;
	n = r->zc_handlers[h->type].fn(r->zc_handlers[h->type].arg, p->node, payload + sizeof(q),
				       h->len - (uint32_t)sizeof(q), stage, d->zc_bytes);
	if (n > (int)d->zc_bytes) {
		r->st.bad++;
		RRPC_LOG(ERR, "zero-copy handler of type %u returned %d bytes", h->type, n);
		n = -1;
	}
	if (n > 0) {
		struct dtxn_wr wr;

		memset(&wr, 0, sizeof(wr));
		wr.opcode = DTXN_WR_WRITE;
		wr.local = stage;
		wr.len = (uint32_t)n;
		wr.raddr = q.raddr;
		dtxn_sched_charge_op(r->w->sched, DTXN_CPU_WR, 1); /* sim only */
		dtxn_sched_charge_op(r->w->sched, DTXN_CPU_DOORBELL, 1);
		if (dtxn_qp_post(p->qp, &wr) != 0) {
			RRPC_LOG(WARNING, "zero-copy WRITE to node %u not posted", p->node);
			n = -1;
		} else {
			r->st.zc_writes++;
			r->st.zc_bytes += (uint64_t)n;
			r->st.doorbells++;
		}
	}
	if (n >= 0) {
		zr.len = n;
		zr.crc = rrpc_zc_crc(stage, (uint32_t)n);
	}
reply:
	rh = *h;
	rh.kind = RRPC_KIND_RESP_ZC;
	rh.len = sizeof(zr);
	if (rrpc_peer_append(&r->io, p, &rh, &zr) != 0) {
		r->st.bad++;
		RRPC_LOG(ERR, "no ring room for a reply to node %u", p->node);
	}
}

/* The slot a reply of node @p p answers, or NULL (counted bad). */
static struct rrpc_slot *
rrpc_resp_slot(struct dtxn_rrpc *r, struct rrpc_peer *p, const struct rrpc_msg_hdr *h,
	       struct dtxn_rrpc_ep **epp)
{
	struct dtxn_rrpc_ep *ep = h->ep < r->n_eps ? r->eps[h->ep] : NULL;
	struct rrpc_slot *s;

	if (ep == NULL || h->slot >= DTXN_RPC_SLOTS) {
		r->st.bad++;
		return NULL;
	}
	s = &ep->slots[h->slot];
	if (s->state != RRPC_S_WAIT || s->seq != h->seq || s->node != p->node ||
	    (h->kind == RRPC_KIND_RESP_ZC) != (s->zc != NULL)) {
		r->st.bad++;
		return NULL;
	}
	*epp = ep;
	return s;
}

/* Frees a slot whose reply came and wakes its coordinator. */
static void
rrpc_slot_done(struct dtxn_rrpc *r, struct dtxn_rrpc_ep *ep, struct rrpc_slot *s)
{
	s->state = RRPC_S_FREE;
	s->call = NULL;
	s->zc = NULL;
	r->st.resp_recv++;
	dtxn_co_complete_lc(ep->c->co, 0);
}

/* Mode (c), requester side: the data is in the slot's buffer if the completion says so. */
static void
rrpc_on_resp_zc(struct dtxn_rrpc *r, struct rrpc_peer *p, const struct rrpc_msg_hdr *h,
		const uint8_t *payload)
{
	const struct dtxn_rrpc_domain *d = r->d;
	struct dtxn_rrpc_ep *ep = NULL;
	struct rrpc_slot *s = rrpc_resp_slot(r, p, h, &ep);
	struct rrpc_zc_resp zr;
	const uint8_t *buf;

	if (s == NULL)
		return;
	buf = d->mem[r->w->cn_node] + rrpc_zc_off(d, r->w->index, ep->id, h->slot);
	if (h->len != sizeof(zr)) {
		r->st.bad++;
		s->zc->status = -EIO;
	} else {
		memcpy(&zr, payload, sizeof(zr));
		if (zr.len < 0 || (uint32_t)zr.len > d->zc_bytes) {
			s->zc->status = -EIO; /* refused */
		} else if (rrpc_zc_crc(buf, (uint32_t)zr.len) != zr.crc) {
			r->st.zc_torn++;
			s->zc->status = -EIO; /* the data did not land whole: never deliver it */
		} else {
			s->zc->data = buf;
			s->zc->data_len = (uint32_t)zr.len;
			s->zc->status = 0;
		}
	}
	rrpc_slot_done(r, ep, s);
}

static void
rrpc_on_resp(struct dtxn_rrpc *r, struct rrpc_peer *p, const struct rrpc_msg_hdr *h,
	     const uint8_t *payload)
{
	struct dtxn_rrpc_ep *ep = NULL;
	struct rrpc_slot *s = rrpc_resp_slot(r, p, h, &ep);
	uint32_t len;

	if (s == NULL)
		return;
	len = RTE_MIN((uint32_t)h->len, (uint32_t)DTXN_RPC_RESP_MAX);
	memcpy(s->call->resp, payload, len);
	s->call->resp_len = len;
	s->call->status = 0;
	rrpc_slot_done(r, ep, s);
}

static void
rrpc_on_msg(void *arg, const struct rrpc_msg_hdr *h, const uint8_t *payload)
{
	struct rrpc_rx_ctx *x = arg;

	x->msgs++;
	if (h->type >= DTXN_RPC_TYPES) {
		x->r->st.bad++;
		return;
	}
	if (h->kind == RRPC_KIND_REQ)
		rrpc_on_req(x->r, x->p, h, payload);
	else if (h->kind == RRPC_KIND_RESP)
		rrpc_on_resp(x->r, x->p, h, payload);
	else if (h->kind == RRPC_KIND_REQ_ZC)
		rrpc_on_req_zc(x->r, x->p, h, payload);
	else if (h->kind == RRPC_KIND_RESP_ZC)
		rrpc_on_resp_zc(x->r, x->p, h, payload);
	else
		x->r->st.bad++;
}

/* Takes the complete buckets of @p p's inbound ring, in order. @return messages. */
static unsigned
rrpc_poll_peer(struct dtxn_rrpc *r, struct rrpc_peer *p)
{
	struct rrpc_rx_ctx x = { .r = r, .p = p };

	(void)rrpc_peer_take(&r->io, p, rrpc_on_msg, &x);
	return x.msgs;
}

/* The worker's poller: inbound buckets of every Rocket, then one flush. */
static unsigned
rrpc_poll(void *arg)
{
	struct dtxn_rrpc *r = arg;
	unsigned work = 0;

	for (unsigned i = 0; i < r->n_peers; i++)
		work += rrpc_poll_peer(r, &r->peer[i]);
	if (work != 0)
		dtxn_sched_charge_op(r->w->sched, DTXN_CPU_MSG, work); /* sim only */
	rrpc_flush_all(r);
	return work;
}

/* ------------------------------------------------------------------ */
/* Life cycle                                                         */
/* ------------------------------------------------------------------ */

static void
rrpc_free(struct dtxn_rrpc *r)
{
	for (unsigned i = 0; i < r->n_peers; i++)
		rrpc_peer_free(&r->peer[i]);
	rte_free(r->eps);
	rte_free(r);
}

/* The Rocket to CN @p node: a QP of its own on the worker's CQ, rings in both CNs' memory. */
static int
rrpc_peer_init(struct dtxn_rrpc *r, struct rrpc_peer *p, uint16_t node)
{
	struct dtxn_rrpc_domain *d = r->d;
	struct dtxn_worker *w = r->w;
	unsigned k = w->index, self = w->cn_node;
	uint64_t tx = rrpc_ring_off(d, k, self), rx = rrpc_ring_off(d, k, node);
	int rc;

	p->node = node;
	p->own_qp = true;
	p->qp = dtxn_qp_create(d->f, w->cq, w->cn_node, node,
			       rte_align32pow2(RTE_MAX(2 * r->io.nb + 64, 64u)));
	if (p->qp == NULL)
		return -rte_errno;
	rc = rrpc_peer_alloc(&r->io, p, w->socket_id);
	if (rc != 0)
		return rc;
	if (d->zc_eps != 0) {
		p->zc_stage = rte_zmalloc_socket("dtxn_rrpc_zc",
						 (size_t)d->zc_eps * DTXN_RPC_SLOTS * d->zc_bytes,
						 RTE_CACHE_LINE_SIZE, w->socket_id);
		if (p->zc_stage == NULL)
			return -ENOMEM;
	}
	/* ours -> node: in node's memory; its control line carries node's credit for node -> us */
	p->tx_ring = DTXN_RADDR(node, tx + RRPC_CTRL_BYTES);
	p->credit_raddr = DTXN_RADDR(node, tx);
	/* node -> ours: in our memory; its control line: node's consumption of our ring */
	p->rx_ring = d->mem[self] + rx + RRPC_CTRL_BYTES;
	p->credit_word = (const uint64_t *)(const void *)(d->mem[self] + rx);
	return 0;
}

/*
 * The Rocket to MN @p mn: WRITEs on the worker's own QP to the MN (its
 * lib/txn QP: no QP is added, so lib/rpc's QP pairing stays as it is),
 * into this worker's ring in the MN's message area; the MN's replies come
 * into this worker's ring for node @p mn in the CN's memory.
 */
static int
rrpc_peer_init_mn(struct dtxn_rrpc *r, struct rrpc_peer *p, uint16_t mn)
{
	struct dtxn_rrpc_domain *d = r->d;
	struct dtxn_worker *w = r->w;
	unsigned k = w->index, self = w->cn_node;
	uint64_t tx = rrpc_mn_ring_off(d, self - d->n_mn, k), rx = rrpc_ring_off(d, k, mn);
	int rc;

	p->node = mn;
	p->own_qp = false;
	p->qp = w->qp[mn];
	if (p->qp == NULL)
		return -EINVAL;
	rc = rrpc_peer_alloc(&r->io, p, w->socket_id);
	if (rc != 0)
		return rc;
	p->tx_ring = DTXN_RADDR(mn, tx + RRPC_CTRL_BYTES);
	p->credit_raddr = DTXN_RADDR(mn, tx);
	p->rx_ring = d->mem[self] + rx + RRPC_CTRL_BYTES;
	p->credit_word = (const uint64_t *)(const void *)(d->mem[self] + rx);
	return 0;
}

struct dtxn_rrpc *
dtxn_rrpc_create(struct dtxn_rrpc_domain *d, struct dtxn_worker *w)
{
	struct dtxn_rrpc **slot;
	struct dtxn_rrpc *r;
	unsigned max_eps;
	int rc = -EINVAL;

	if (d == NULL || w == NULL || w->db == NULL || w->db->fabric != d->f ||
	    w->index >= d->max_workers || w->cn_node < d->n_mn || w->cn_node >= d->n_nodes)
		goto fail0;
	max_eps = dtxn_worker_max_coords(w);
	if (max_eps == 0 || max_eps > UINT16_MAX || 2 * d->nb < max_eps * DTXN_RPC_SLOTS)
		goto fail0;
	slot = &d->by_worker[(size_t)(w->cn_node - d->n_mn) * d->max_workers + w->index];
	if (*slot != NULL) {
		rc = -EEXIST;
		goto fail0;
	}
	if (d->shared) {
		rc = rrpc_shared_own(d, w->cn_node, w->socket_id);
		if (rc != 0)
			goto fail0;
	}
	r = rte_zmalloc_socket("dtxn_rrpc", sizeof(*r), RTE_CACHE_LINE_SIZE, w->socket_id);
	if (r == NULL) {
		rc = -ENOMEM;
		goto fail0;
	}
	r->d = d;
	r->w = w;
	r->io.nb = d->nb;
	r->io.sched = w->sched;
	r->io.st = &r->st;
	r->max_eps = max_eps;
	r->eps = rte_zmalloc_socket("dtxn_rrpc_eps", sizeof(*r->eps) * max_eps, 0, w->socket_id);
	if (r->eps == NULL) {
		rc = -ENOMEM;
		goto fail;
	}
	for (unsigned n = d->mn_ring_off != 0 ? 0 : d->n_mn; n < d->n_nodes; n++) {
		struct rrpc_peer *p;

		if (n == w->cn_node || (d->shared && n >= d->n_mn))
			continue; /* across processes: no CN-to-CN rings */
		p = &r->peer[r->n_peers++];
		r->by_node[n] = p;
		rc = n < d->n_mn ? rrpc_peer_init_mn(r, p, (uint16_t)n)
				 : rrpc_peer_init(r, p, (uint16_t)n);
		if (rc != 0)
			goto fail;
	}
	if (dtxn_sched_add_poller(w->sched, rrpc_poll, r) != 0) {
		rc = -ENOSPC;
		goto fail;
	}
	__atomic_store_n(slot, r, __ATOMIC_RELEASE);
	return r;
fail:
	rrpc_free(r);
fail0:
	rte_errno = -rc;
	return NULL;
}

void
dtxn_rrpc_destroy(struct dtxn_rrpc *r)
{
	if (r == NULL)
		return;
	__atomic_store_n(&r->d->by_worker[(size_t)(r->w->cn_node - r->d->n_mn) * r->d->max_workers +
					  r->w->index],
			 NULL, __ATOMIC_RELEASE);
	for (unsigned e = 0; e < r->n_eps; e++)
		rte_free(r->eps[e]);
	rrpc_free(r);
}

int
dtxn_rrpc_register(struct dtxn_rrpc *r, uint8_t type, dtxn_rpc_handler_fn fn, void *arg)
{
	if (r == NULL)
		return -EINVAL;
	return rpc_handler_set(r->handlers, type, fn, arg);
}

int
dtxn_rrpc_register_zc(struct dtxn_rrpc *r, uint8_t type, dtxn_rrpc_zc_fn fn, void *arg)
{
	if (r == NULL || fn == NULL || type >= DTXN_RPC_TYPES)
		return -EINVAL;
	if (r->zc_handlers[type].fn != NULL)
		return -EEXIST;
	r->zc_handlers[type].fn = fn;
	r->zc_handlers[type].arg = arg;
	return 0;
}

struct dtxn_rrpc_ep *
dtxn_rrpc_ep_create(struct dtxn_rrpc *r, struct dtxn_coord *c)
{
	struct dtxn_rrpc_ep *ep;

	if (r == NULL || c == NULL) {
		rte_errno = EINVAL;
		return NULL;
	}
	if (r->n_eps >= r->max_eps) {
		rte_errno = ENOSPC;
		return NULL;
	}
	ep = rte_zmalloc_socket("dtxn_rrpc_ep", sizeof(*ep), RTE_CACHE_LINE_SIZE,
				r->w->socket_id);
	if (ep == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	ep->r = r;
	ep->c = c;
	ep->id = (uint16_t)r->n_eps;
	r->eps[r->n_eps++] = ep;
	return ep;
}

void
dtxn_rrpc_ep_destroy(struct dtxn_rrpc_ep *ep)
{
	if (ep == NULL)
		return;
	if (ep->id < ep->r->n_eps && ep->r->eps[ep->id] == ep)
		ep->r->eps[ep->id] = NULL;
	rte_free(ep);
}

void
dtxn_rrpc_stats_get(const struct dtxn_rrpc *r, struct dtxn_rrpc_stats *st)
{
	if (r != NULL && st != NULL)
		*st = r->st;
}

int
dtxn_rrpc_footprint(unsigned n_mn, unsigned n_cn, unsigned workers_per_cn, unsigned max_eps,
		    unsigned buckets, bool to_mns, struct dtxn_footprint *per_cn,
		    struct dtxn_footprint *per_worker)
{
	const uint64_t slack = DTXN_FOOTPRINT_ALLOC_SLACK;
	unsigned nb = buckets != 0 ? buckets : DTXN_RRPC_BUCKETS_DEFAULT;
	uint64_t n_nodes = (uint64_t)n_mn + n_cn, ring = RRPC_CTRL_BYTES + (uint64_t)nb * RRPC_BUCKET_BYTES;
	uint64_t rocket = sizeof(struct rrpc_bucket) * 2 * nb + slack +
			  sizeof(struct dtxn_wr) * (nb + 1) + slack;
	unsigned peers = n_cn - 1 + (to_mns ? n_mn : 0);

	if (per_cn == NULL || per_worker == NULL || n_cn == 0 || n_nodes > DTXN_MAX_NODES ||
	    workers_per_cn == 0 || workers_per_cn > RRPC_MAX_WORKERS || max_eps == 0 ||
	    nb < 8 || nb > 4096 || (nb & (nb - 1)) != 0)
		return -EINVAL;
	/* the domain: this CN's message memory, its share of the worker table */
	per_cn->bytes += (uint64_t)workers_per_cn * n_nodes * ring + slack +
			 sizeof(struct dtxn_rrpc_domain) + slack +
			 sizeof(struct dtxn_rrpc *) * workers_per_cn + slack;
	per_worker->bytes += sizeof(struct dtxn_rrpc) + slack + sizeof(void *) * max_eps + slack +
			     (uint64_t)max_eps * (sizeof(struct dtxn_rrpc_ep) + slack) +
			     (uint64_t)peers * rocket;
	dtxn_fabric_queue_footprint(n_cn - 1, rte_align32pow2(2 * nb + 64), per_worker);
	if (to_mns) {
		/* each MN's service as if it served this worker alone (its fixed part and a QP
		 * once per worker: a bound), and its Rocket to this worker */
		per_worker->bytes += (uint64_t)n_mn * (rocket + rrpc_mn_size() + slack);
		dtxn_fabric_queue_footprint(n_mn, rte_align32pow2(2 * nb + 64), per_worker);
	}
	return 0;
}
