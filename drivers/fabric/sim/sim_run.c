/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sim driver: what the events do. An effect applies the WR (memory ops
 * through lib/fabric's dtxn_fabric_mem_exec(), shared with shm) or hands a
 * SEND's payload to the peer QP; it then schedules the WR's completion if a
 * CQE is owed (signaled, or failed). A completion puts the CQE in the CQ.
 * A WR dropped with its dead poster (dtxn_sim_node_kill()) does nothing
 * and completes with WR_FLUSH_ERR, in its QP's order.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_prefetch.h>

#include "sim_private.h"

void
sim_qp_deliver(struct sim_qp *qp)
{
	while (dtxn_wr_queue_count(&qp->rq) != 0 && qp->in_head != NULL) {
		const struct dtxn_wr *r = dtxn_wr_queue_front(&qp->rq);
		struct sim_msg *m = qp->in_head;
		uint8_t status;

		qp->in_head = m->next;
		if (qp->in_head == NULL)
			qp->in_tail = NULL;
		status = dtxn_fabric_recv_fill(r, m->data, m->len);
		sim_cq_push(qp->cq, r->wr_id, m->len, DTXN_WR_RECV, status, m->src_node);
		free(m);
		(void)dtxn_wr_queue_pop(&qp->rq);
	}
}

/* A SEND arrives at the peer: queued there, matched to its RECVs in order. */
static uint8_t
sim_send(struct sim_qp *qp, const struct sim_wqe *w)
{
	struct sim_qp *peer = qp->peer;
	struct sim_msg *m;

	if (peer == NULL)
		return DTXN_WC_WR_FLUSH_ERR; /* the peer QP is gone */
	/* libc: a message lives microseconds of virtual time; rte_malloc()
	 * would lock the heap and rte_free() zero it (issue 30) */
	m = malloc(sizeof(*m) + w->wr.len);
	if (m == NULL) {
		SIM_LOG(ERR, "QP %u->%u: no memory for a %u-byte message", qp->base.local_node,
			qp->base.remote_node, w->wr.len);
		return DTXN_WC_WR_FLUSH_ERR;
	}
	m->next = NULL;
	m->len = w->wr.len;
	m->src_node = qp->base.local_node;
	if (w->wr.len > 0)
		memcpy(m->data, w->wr.local, w->wr.len);
	if (peer->in_tail != NULL)
		peer->in_tail->next = m;
	else
		peer->in_head = m;
	peer->in_tail = m;
	sim_qp_deliver(peer);
	return DTXN_WC_SUCCESS;
}

static void
sim_effect(struct sim_fabric *sf, struct sim_qp *qp, uint32_t idx)
{
	struct sim_wqe *w = &qp->sq[idx & qp->mask];

	if (idx != qp->exec) {
		/* effects are pushed in posting order with non-decreasing times */
		SIM_LOG(ERR, "QP %u->%u: effect of WR %u out of order (next %u)",
			qp->base.local_node, qp->base.remote_node, idx, qp->exec);
		return;
	}
	if (w->dropped)
		w->status = DTXN_WC_WR_FLUSH_ERR; /* lost with its dead poster: never arrived */
	else if (w->wr.opcode == DTXN_WR_SEND)
		w->status = sim_send(qp, w);
	else
		w->status = dtxn_fabric_node_exec(&sf->base, qp->mn_base, qp->mn_size,
						  qp->base.remote_node, &w->wr);
	qp->exec++;
	sf->pending_effects--;
	w->owed = (w->wr.flags & DTXN_WR_F_SIGNALED) != 0 || w->status != DTXN_WC_SUCCESS;
	if (w->owed)
		(void)sim_event_push(sf, w->done_ns, SIM_EV_DONE, qp->id, idx);
	if (qp->exec != qp->tail) /* the QP's next effect: after the completion, as posted */
		(void)sim_event_push_effect(sf, qp, qp->exec);
}

static void
sim_done(struct sim_qp *qp, uint32_t idx, uint64_t now_ns)
{
	struct sim_wqe *w = &qp->sq[idx & qp->mask];

	w->completed = 1;
	sim_cq_push(qp->cq, w->wr.wr_id, w->status == DTXN_WC_SUCCESS ? w->wr.len : 0,
		    w->wr.opcode, w->status, qp->base.remote_node);
	sim_qp_reclaim(qp, now_ns);
}

/*
 * Prefetching (issue 30): the events of 540 coordinators' QPs miss the
 * caches on the QP, the WR and the memory the WR touches, one after the
 * other. While an event runs, the one after the next (the queue's second)
 * has its QP and WR fetched, and the next (whose QP and WR were fetched
 * one event earlier) the MN memory and local buffer it will touch. Hints
 * only: an event pushed meanwhile changes the order, never the result.
 */
static inline const struct sim_wqe *
sim_ent_wqe(const struct sim_fabric *sf, const struct dtxn_timeq_ent *e, uint32_t *id)
{
	const struct sim_sq_ref *r;

	if (e == NULL)
		return NULL;
	*id = (uint32_t)(e->val >> 33);
	if (*id >= sf->n_qps)
		return NULL;
	r = &sf->sqs[*id];
	return r->sq != NULL ? &r->sq[(uint32_t)(e->val >> 1) & r->mask] : NULL;
}

static inline void
sim_prefetch_ahead(const struct sim_fabric *sf)
{
	const struct dtxn_timeq_ent *e = dtxn_timeq_top(&sf->evq);
	const struct sim_wqe *w;
	const struct sim_qp *qp;
	uint32_t id;

	w = sim_ent_wqe(sf, e, &id);
	if (w != NULL) {
		qp = sf->qps[id];
		if ((e->val & 1u) == SIM_EV_EFFECT && w->wr.opcode != DTXN_WR_SEND) {
			uint64_t off = DTXN_RADDR_OFF(w->wr.raddr);

			if (qp->mn_base != NULL && off < qp->mn_size)
				rte_prefetch0(qp->mn_base + off);
			rte_prefetch0(w->wr.local);
		}
	}
	w = sim_ent_wqe(sf, dtxn_timeq_second(&sf->evq), &id);
	if (w != NULL) {
		qp = sf->qps[id];
		rte_prefetch0(qp); /* base: the nodes */
		rte_prefetch0(&qp->sf);
		rte_prefetch0(&qp->tail);
		rte_prefetch0(w);
		rte_prefetch0((const uint8_t *)w + RTE_CACHE_LINE_SIZE);
	}
}

uint64_t
sim_run_due(struct sim_fabric *sf, uint64_t now_ns)
{
	struct sim_event ev;
	uint64_t n = 0;

	if (sf->running)
		return 0; /* a notify callback polled: the outer call goes on */
	sf->running = true;
	while (sim_event_pop_due(sf, now_ns, &ev)) {
		struct sim_qp *qp = ev.qp_id < sf->n_qps ? sf->qps[ev.qp_id] : NULL;

		n++;
		if (qp == NULL)
			continue; /* destroyed: flushed already */
		sim_prefetch_ahead(sf);
		if (ev.kind == SIM_EV_EFFECT)
			sim_effect(sf, qp, ev.wqe);
		else
			sim_done(qp, ev.wqe, ev.t_ns);
	}
	sf->events += n;
	sf->running = false;
	return n;
}
