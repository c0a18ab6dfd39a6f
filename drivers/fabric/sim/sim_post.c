/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sim driver: posting and polling. A posted WR is timed at once by
 * lib/fabric's NIC model (dtxn_fabric_wr_time_ex, with the models and units
 * of the node that posts it and of the node it goes to) and becomes an effect event; its completion event is
 * created when the effect runs (sim_run.c). Polling only reaps the CQ: the
 * events put the CQEs there when their time came.
 */
#include <errno.h>

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
	uint16_t rn = q->remote_node, ln = q->local_node;
	const struct dtxn_wr *wr;
	uint32_t n, n_send;
	uint64_t now, room;
	bool idle;

	n = dtxn_wr_chain_count(wr_list, &n_send);
	if (n_send != 0 && qp->peer == NULL)
		return -ENOTCONN;
	now = dtxn_now_ns();
	sim_qp_reclaim(qp, now);
	if (sim_qp_sq_room(qp, n) != 0)
		return -ENOBUFS;
	/* room for a successor's effect and a completion per pending effect,
	 * so that no event handler can fail (sim_event.c) */
	room = 2 * (sf->pending_effects + n);
	if (room > UINT32_MAX || sim_event_reserve(sf, (uint32_t)room) != 0)
		return -ENOBUFS;
	idle = qp->exec == qp->tail; /* no effect of this QP queued */
	for (wr = wr_list; wr != NULL; wr = wr->next) {
		struct sim_wqe *w = &qp->sq[qp->tail & qp->mask];

		dtxn_wr_copy(&w->wr, wr, w->inl);
		w->status = DTXN_WC_SUCCESS;
		w->owed = 0;
		w->completed = 0;
		w->chain_head = wr == wr_list;
		w->dropped = 0;
		dtxn_fabric_wr_time_ex(&sf->model[ln], sf->modelled[ln] ? &sf->nic[ln] : NULL,
				       &sf->model[rn], sf->modelled[rn] ? &sf->nic[rn] : NULL,
				       &w->wr, now, &qp->last_effect_ns, &w->effect_ns,
				       &w->done_ns);
		w->seq = dtxn_timeq_take_seq(&sf->evq);
		qp->tail++;
	}
	sf->pending_effects += n;
	if (idle)
		(void)sim_event_push_effect(sf, qp, qp->exec);
	return 0;
}

int
sim_qp_post_recv(struct dtxn_qp *q, struct dtxn_wr *wr_list)
{
	struct sim_qp *qp = SIM_QP(q);

	if (dtxn_wr_queue_post(&qp->rq, wr_list, q->max_wr) != 0)
		return -ENOBUFS;
	/* messages that waited for a RECV (RNR) are delivered now */
	sim_qp_deliver(qp);
	return 0;
}

unsigned
sim_cq_poll(struct dtxn_cq *c, struct dtxn_cqe *cqes, unsigned n)
{
	/* without the simulation loop (tests), events due by now run here */
	(void)sim_run_due(SIM_FABRIC(c->fabric), dtxn_now_ns());
	return dtxn_cqe_ring_pop(&SIM_CQ(c)->core.ring, cqes, n);
}
