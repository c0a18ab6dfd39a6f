/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sim driver: posting and polling. A posted WR is timed at once by
 * lib/fabric's NIC model (dtxn_fabric_wr_time, with the model and units of
 * the node it goes to) and becomes an effect event; its completion event is
 * created when the effect runs (sim_run.c). Polling only reaps the CQ: the
 * events put the CQEs there when their time came.
 */
#include <errno.h>
#include <string.h>

#include <rte_common.h>

#include "dtxn_sched.h"
#include "sim_private.h"

void
sim_qp_reclaim(struct sim_qp *qp, uint64_t now_ns)
{
	while (qp->head != qp->exec) {
		const struct sim_wqe *w = &qp->sq[qp->head & qp->mask];

		/* a slot is free once its CQE went out, or, unsignaled, once it is done */
		if (w->owed ? !w->completed : w->done_ns > now_ns)
			break;
		qp->head++;
	}
}

int
sim_qp_post(struct dtxn_qp *q, struct dtxn_wr *wr_list)
{
	struct sim_qp *qp = SIM_QP(q);
	struct sim_fabric *sf = qp->sf;
	uint16_t rn = q->remote_node;
	const struct dtxn_wr *wr;
	uint32_t n = 0;
	uint64_t now;

	for (wr = wr_list; wr != NULL; wr = wr->next) {
		n++;
		if (wr->opcode == DTXN_WR_SEND && qp->peer == NULL)
			return -ENOTCONN;
	}
	now = dtxn_now_ns();
	sim_qp_reclaim(qp, now);
	if (sim_qp_sq_room(qp, n) != 0)
		return -ENOBUFS;
	/* room for both events of every WR, so that no event handler can fail */
	if (sim_event_reserve(sf, 2 * n) != 0)
		return -ENOBUFS;
	for (wr = wr_list; wr != NULL; wr = wr->next) {
		struct sim_wqe *w = &qp->sq[qp->tail & qp->mask];

		w->wr = *wr;
		w->wr.next = NULL;
		w->status = DTXN_WC_SUCCESS;
		w->owed = 0;
		w->completed = 0;
		if (wr->flags & DTXN_WR_F_INLINE) {
			memcpy(w->inl, wr->local, wr->len);
			w->wr.local = w->inl;
		}
		dtxn_fabric_wr_time(&sf->model[rn], sf->modelled[rn] ? &sf->nic[rn] : NULL,
				    &w->wr, now, &qp->last_effect_ns, &w->effect_ns, &w->done_ns);
		(void)sim_event_push(sf, w->effect_ns, SIM_EV_EFFECT, qp->id, qp->tail);
		qp->tail++;
	}
	return 0;
}

int
sim_qp_post_recv(struct dtxn_qp *q, struct dtxn_wr *wr_list)
{
	struct sim_qp *qp = SIM_QP(q);
	const struct dtxn_wr *wr;
	uint32_t n = 0;

	for (wr = wr_list; wr != NULL; wr = wr->next)
		n++;
	if (sim_qp_rq_room(qp, n) != 0)
		return -ENOBUFS;
	for (wr = wr_list; wr != NULL; wr = wr->next) {
		struct dtxn_wr *r = &qp->rq[qp->rq_tail & qp->rq_mask];

		*r = *wr;
		r->next = NULL;
		qp->rq_tail++;
	}
	/* messages that waited for a RECV (RNR) are delivered now */
	sim_qp_deliver(qp);
	return 0;
}

unsigned
sim_cq_poll(struct dtxn_cq *c, struct dtxn_cqe *cqes, unsigned n)
{
	struct sim_cq *cq = SIM_CQ(c);
	unsigned k = 0;

	/* without the simulation loop (tests), events due by now run here */
	(void)sim_run_due(SIM_FABRIC(c->fabric), dtxn_now_ns());
	while (k < n && cq->head != cq->tail) {
		cqes[k++] = cq->ring[cq->head & (cq->cap - 1)];
		cq->head++;
	}
	return k;
}
