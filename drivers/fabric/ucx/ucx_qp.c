/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ucx driver: CQ and QP life cycle, and the routes of inbound SENDs.
 * A CQ is a UCP worker; a QP an endpoint from it to the remote process's
 * serve worker (whose address, and an MN's rkey, the connect exchange
 * gave). The k-th QP from a to b is paired with the k-th QP from b to a:
 * a SEND carries (a, b, k) in its header, and the receiving process's
 * control thread routes it to the QP (b -> a, k)'s inbound ring, or parks
 * it until that QP exists.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_malloc.h>

#include "dtxn_sched.h"
#include "ucx_private.h"

struct dtxn_cq *
ucx_cq_create(struct dtxn_fabric *f, int socket_id, unsigned depth)
{
	ucp_worker_params_t wp = { .field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
				   .thread_mode = UCS_THREAD_MODE_SINGLE };
	struct ucx_cq *cq;
	ucs_status_t st;

	cq = (struct ucx_cq *)dtxn_cq_core_alloc("ucx_cq", sizeof(*cq), depth, socket_id);
	if (cq == NULL)
		return NULL;
	TAILQ_INIT(&cq->qps);
	cq->block = UCX_FABRIC(f)->block;
	cq->spin_ns = UCX_FABRIC(f)->spin_ns;
	cq->efd = -1;
	st = ucp_worker_create(UCX_FABRIC(f)->ctx, &wp, &cq->w);
	if (st == UCS_OK) { /* the MNs' answers to verbs carried as messages */
		ucp_am_handler_param_t hp = {
			.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB,
			.id = UCX_AM_VERB_REP, .cb = ucx_verb_answer,
		};

		st = ucp_worker_set_am_recv_handler(cq->w, &hp);
		if (st != UCS_OK)
			ucp_worker_destroy(cq->w);
	}
	if (st != UCS_OK) {
		UCX_LOG(ERR, "ucp_worker_create: %s", ucs_status_string(st));
		(void)dtxn_cq_core_free(&cq->core);
		rte_errno = ENOMEM;
		return NULL;
	}
	return &cq->core.base;
}

void
ucx_cq_destroy(struct dtxn_cq *c)
{
	struct ucx_cq *cq = UCX_CQ(c);
	ucp_worker_h w = cq->w;

	if (dtxn_cq_core_free(&cq->core) != 0) {
		UCX_LOG(ERR, "CQ destroyed with %u QPs attached: not freed", cq->core.n_qps);
		return;
	}
	ucp_worker_destroy(w);
}

/* Under uf->lock: the route of (local, remote, seq), or a free one (NULL: full). */
static struct ucx_route *
route_find(struct ucx_fabric *uf, uint16_t local, uint16_t remote, uint32_t seq, bool want_free)
{
	struct ucx_route *free_r = NULL;

	for (unsigned i = 0; i < UCX_ROUTES_MAX; i++) {
		struct ucx_route *r = &uf->route[i];

		if (r->qp == NULL) {
			if (free_r == NULL)
				free_r = r;
			continue;
		}
		if (r->local == local && r->remote == remote && r->seq == seq)
			return r;
	}
	return want_free ? free_r : NULL;
}

void
ucx_route_deliver(struct ucx_fabric *uf, struct ucx_inmsg *m)
{
	struct ucx_route *r;

	rte_spinlock_lock(&uf->lock);
	r = route_find(uf, m->hdr.dst_node, m->hdr.src_node, m->hdr.seq, false);
	if (r != NULL && m->hdr.kind == UCX_AM_CONNECT) {
		/* a second CONNECT: the peer CN's process restarted (a new
		 * incarnation's QP): its lcore reconnects the QP to it */
		if (__atomic_load_n(&r->qp->peer_up, __ATOMIC_ACQUIRE) && r->qp->ep != NULL &&
		    m->hdr.src_node >= uf->n_mn)
			__atomic_store_n(&r->qp->rejoin, true, __ATOMIC_RELEASE);
		__atomic_store_n(&r->qp->peer_up, true, __ATOMIC_RELEASE);
		free(m);
		m = NULL;
	} else if (r != NULL && rte_ring_enqueue(r->qp->inbound, m) == 0)
		m = NULL;
	else if (r == NULL && uf->n_parked < UCX_PARKED_MAX) {
		STAILQ_INSERT_TAIL(&uf->parked, m, next); /* its QP is not created yet */
		uf->n_parked++;
		m = NULL;
	}
	rte_spinlock_unlock(&uf->lock);
	if (m != NULL) {
		__atomic_fetch_add(&uf->dropped, 1, __ATOMIC_RELAXED);
		free(m);
	}
}

/* Adds @p q's route and moves the messages parked for it to its ring. */
static int
route_add(struct ucx_fabric *uf, struct ucx_qp *q)
{
	struct ucx_inmsg *m;
	struct ucx_route *r;
	int rc = 0;

	rte_spinlock_lock(&uf->lock);
	r = route_find(uf, q->base.local_node, q->base.remote_node, q->seq, true);
	if (r == NULL) {
		rc = -ENOSPC;
	} else {
		*r = (struct ucx_route){ q->base.local_node, q->base.remote_node, q->seq, q };
		STAILQ_HEAD(, ucx_inmsg) keep = STAILQ_HEAD_INITIALIZER(keep);

		/* in arrival order: this QP's to its ring, the others back */
		while ((m = STAILQ_FIRST(&uf->parked)) != NULL) {
			STAILQ_REMOVE_HEAD(&uf->parked, next);
			if (m->hdr.dst_node != q->base.local_node ||
			    m->hdr.src_node != q->base.remote_node || m->hdr.seq != q->seq) {
				STAILQ_INSERT_TAIL(&keep, m, next);
				continue;
			}
			uf->n_parked--;
			if (m->hdr.kind == UCX_AM_CONNECT) {
				__atomic_store_n(&q->peer_up, true, __ATOMIC_RELEASE);
				free(m);
			} else if (rte_ring_enqueue(q->inbound, m) != 0) {
				__atomic_fetch_add(&uf->dropped, 1, __ATOMIC_RELAXED);
				free(m);
			}
		}
		STAILQ_CONCAT(&uf->parked, &keep);
	}
	rte_spinlock_unlock(&uf->lock);
	return rc;
}

static void
route_del(struct ucx_fabric *uf, struct ucx_qp *q)
{
	struct ucx_route *r;

	rte_spinlock_lock(&uf->lock);
	r = route_find(uf, q->base.local_node, q->base.remote_node, q->seq, false);
	if (r != NULL && r->qp == q)
		memset(r, 0, sizeof(*r));
	rte_spinlock_unlock(&uf->lock);
}

static int
qp_ep_open(struct ucx_qp *q, const struct ucx_remote *rem)
{
	ucp_ep_params_t ep = { 0 };
	ucs_status_t st;

	ep.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
			UCP_EP_PARAM_FIELD_ERR_HANDLER;
	ep.address = (const ucp_address_t *)rem->waddr;
	ep.err_mode = UCP_ERR_HANDLING_MODE_PEER;
	ep.err_handler.cb = ucx_ep_error;
	ep.err_handler.arg = q;
	st = ucp_ep_create(q->cq->w, &ep, &q->ep);
	if (st != UCS_OK) {
		q->ep = NULL;
		UCX_LOG(ERR, "node %u -> %u: ucp_ep_create: %s", q->base.local_node,
			q->base.remote_node, ucs_status_string(st));
		return -EIO;
	}
	if (rem->rkey_len == 0)
		return 0;
	st = ucp_ep_rkey_unpack(q->ep, rem->rkey, &q->rkey);
	if (st != UCS_OK) {
		q->rkey = NULL;
		UCX_LOG(ERR, "node %u -> %u: ucp_ep_rkey_unpack: %s", q->base.local_node,
			q->base.remote_node, ucs_status_string(st));
		return -EIO;
	}
	q->rbase = rem->base;
	q->rlen = rem->len;
	return 0;
}

/*
 * Tells the peer process that this QP exists (its peer QP may SEND now),
 * and waits, progressing the worker, until the message left: the
 * endpoint is then connected (wired up), as an RC QP is when created.
 * @return 0, -EIO (the peer refused or failed), -ETIMEDOUT.
 */
static int
qp_announce(struct ucx_qp *q)
{
	ucp_request_param_t p = { .op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
				  .flags = UCP_AM_SEND_FLAG_EAGER };
	uint64_t deadline = dtxn_now_ns() + q->uf->connect_timeout_ns;
	ucs_status_ptr_t sp;
	ucs_status_t st;

	q->connect_hdr = (struct ucx_am_hdr){ q->base.local_node, q->base.remote_node, q->seq,
					      UCX_AM_CONNECT };
	sp = ucp_am_send_nbx(q->ep, UCX_AM_SEND, &q->connect_hdr, sizeof(q->connect_hdr), NULL, 0,
			     &p);
	if (!UCS_PTR_IS_PTR(sp))
		return UCS_PTR_IS_ERR(sp) ? -EIO : 0;
	while ((st = ucp_request_check_status(sp)) == UCS_INPROGRESS && dtxn_now_ns() < deadline)
		ucp_worker_progress(q->cq->w);
	if (st == UCS_INPROGRESS) {
		ucp_request_cancel(q->cq->w, sp);
		while (ucp_request_check_status(sp) == UCS_INPROGRESS)
			ucp_worker_progress(q->cq->w);
	}
	ucp_request_free(sp);
	return st == UCS_OK ? 0 : st == UCS_INPROGRESS ? -ETIMEDOUT : -EIO;
}

/* Closes the endpoint, waiting (progressing its worker) until UCX let go of it. */
static void
qp_ep_close(struct ucx_qp *q)
{
	ucp_request_param_t p = { .op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
				  .flags = UCP_EP_CLOSE_FLAG_FORCE };
	ucs_status_ptr_t sp;

	if (q->rkey != NULL)
		ucp_rkey_destroy(q->rkey);
	if (q->ep == NULL)
		return;
	sp = ucp_ep_close_nbx(q->ep, &p);
	if (UCS_PTR_IS_PTR(sp)) {
		while (ucp_request_check_status(sp) == UCS_INPROGRESS)
			ucp_worker_progress(q->cq->w);
		ucp_request_free(sp);
	}
	q->ep = NULL;
}

/* Opens the endpoint and announces the QP to its peer. */
static int
qp_connect(struct ucx_qp *q, const struct ucx_remote *rem)
{
	int rc = qp_ep_open(q, rem);

	q->rem_gen = rem->gen;

	if (rc == 0)
		rc = qp_announce(q);
	return rc;
}

int
ucx_qp_connect_late(struct ucx_qp *q)
{
	const struct ucx_remote *rem;
	int rc;

	rc = ucx_remote_get(q->uf, q->base.local_node, q->base.remote_node, false, &rem);
	if (rc == 0)
		rc = qp_connect(q, rem);
	if (rc != 0) { /* its peer announced itself, so it listens: it is gone again */
		UCX_LOG(ERR, "node %u -> %u: late connect failed (%s)", q->base.local_node,
			q->base.remote_node, strerror(-rc));
		qp_ep_close(q);
		q->lost = true;
	}
	return rc;
}

void
ucx_qp_rejoin(struct ucx_qp *q)
{
	const struct ucx_remote *rem;
	uint32_t gen = q->rem_gen;
	int rc;

	__atomic_store_n(&q->rejoin, false, __ATOMIC_RELEASE);
	UCX_LOG(NOTICE, "node %u -> %u: its peer announced itself again (a restarted process): reconnecting",
		q->base.local_node, q->base.remote_node);
	qp_ep_close(q); /* in-flight requests complete (canceled) */
	q->lost = true;  /* what the old endpoint carried: flushed */
	ucx_qp_retire(q);
	rc = ucx_remote_refresh(q->uf, q->base.local_node, q->base.remote_node, &gen, &rem);
	q->fatal_said = false;
	q->lost = false;
	if (rc == 0)
		rc = qp_connect(q, rem);
	if (rc != 0) {
		UCX_LOG(ERR, "node %u -> %u: reconnect to the restarted peer failed (%s)",
			q->base.local_node, q->base.remote_node, strerror(-rc));
		qp_ep_close(q);
		q->lost = true;
	}
}

struct dtxn_qp *
ucx_qp_create(struct dtxn_fabric *f, struct dtxn_cq *c, uint16_t local_node,
	      uint16_t remote_node, unsigned max_wr)
{
	struct ucx_fabric *uf = UCX_FABRIC(f);
	const struct ucx_remote *rem;
	struct ucx_qp *q;
	char name[RTE_RING_NAMESIZE];
	ssize_t rsz = rte_ring_get_memsize(UCX_INBOUND_SIZE);
	int rc;

	q = rte_zmalloc("ucx_qp", sizeof(*q), RTE_CACHE_LINE_SIZE);
	if (q == NULL)
		goto nomem;
	q->uf = uf;
	q->cq = UCX_CQ(c);
	q->mask = max_wr - 1;
	q->slots = rte_zmalloc("ucx_sq", sizeof(*q->slots) * max_wr, RTE_CACHE_LINE_SIZE);
	q->inbound = rsz > 0 ? rte_zmalloc("ucx_in", (size_t)rsz, RTE_CACHE_LINE_SIZE) : NULL;
	if (q->slots == NULL || q->inbound == NULL ||
	    dtxn_wr_queue_init(&q->rq, max_wr, SOCKET_ID_ANY) != 0)
		goto nomem;
	snprintf(name, sizeof(name), "ucx_in_%u_%u", local_node, remote_node);
	if (rte_ring_init(q->inbound, name, UCX_INBOUND_SIZE, RING_F_SP_ENQ | RING_F_SC_DEQ) != 0)
		goto nomem;
	rte_spinlock_lock(&uf->lock);
	q->seq = uf->qp_seq[local_node][remote_node]++;
	rte_spinlock_unlock(&uf->lock);
	/* every slot knows its QP (the callbacks' user data is the slot) */
	for (unsigned i = 0; i < max_wr; i++)
		q->slots[i].qp = q;
	/* the QP's own fields as lib/fabric will fill them: the callbacks need them */
	dtxn_qp_init(&q->base, f, c, local_node, remote_node, max_wr);
	/* an MN must answer (it is published before any CN starts); a CN
	 * process may come later: its QP connects once its CONNECT arrived */
	rc = ucx_remote_get(uf, local_node, remote_node, remote_node >= uf->n_mn, &rem);
	if (rc != 0 && rc != -EAGAIN) {
		UCX_LOG(ERR, "%s", dtxn_fabric_open_error());
		rte_errno = rc == -ETIMEDOUT ? ETIMEDOUT : ENXIO;
		goto fail;
	}
	if (route_add(uf, q) != 0) {
		rte_errno = ENOMEM;
		goto fail;
	}
	if (rc == 0 && qp_connect(q, rem) != 0) {
		route_del(uf, q);
		rte_errno = EIO;
		goto fail;
	}
	TAILQ_INSERT_TAIL(&q->cq->qps, q, cq_next);
	q->cq->core.n_qps++;
	return &q->base;
nomem:
	rte_errno = ENOMEM;
fail:
	if (q != NULL) {
		qp_ep_close(q);
		rte_free(q->inbound);
		dtxn_wr_queue_free(&q->rq);
		rte_free(q->slots);
		rte_free(q);
	}
	return NULL;
}

void
ucx_qp_destroy(struct dtxn_qp *qp)
{
	struct ucx_qp *q = UCX_QP(qp);
	struct dtxn_cqe_ring *ring = &q->cq->core.ring;
	const struct dtxn_wr *r;
	struct ucx_inmsg *m;

	route_del(q->uf, q);
	qp_ep_close(q); /* in-flight requests complete (canceled) */
	/* what did not complete is flushed, as verbs does */
	for (; q->head != q->tail; q->head++) {
		struct ucx_slot *s = &q->slots[q->head & q->mask];

		if (s->flags & DTXN_WR_F_SIGNALED)
			dtxn_cqe_ring_push(ring, s->wr_id, 0, s->opcode, DTXN_WC_WR_FLUSH_ERR,
					   qp->remote_node);
	}
	while ((r = dtxn_wr_queue_pop(&q->rq)) != NULL)
		dtxn_cqe_ring_push(ring, r->wr_id, 0, DTXN_WR_RECV, DTXN_WC_WR_FLUSH_ERR,
				   qp->remote_node);
	while (rte_ring_dequeue(q->inbound, (void **)&m) == 0)
		free(m);
	TAILQ_REMOVE(&q->cq->qps, q, cq_next);
	q->cq->core.n_qps--;
	rte_free(q->inbound);
	dtxn_wr_queue_free(&q->rq);
	rte_free(q->slots);
	rte_free(q);
}
