/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sim driver: the global event queue, a dtxn_timeq (lib/sched/dtxn_timeq.h)
 * ordered by (virtual time, sequence number). Sequence numbers are given in
 * push order, so events due at the same time run in the order they were
 * created: deterministic, whatever the addresses of the objects involved.
 * An event's QP id, send-queue index and kind travel in the entry's 64-bit
 * payload: qp_id (31 bits) | wqe (32 bits) | kind (1 bit).
 *
 * A QP's effects take place in posting order at non-decreasing times
 * (sim_qp_post()), so only its oldest pending effect (its head) is queued;
 * running it queues the next, with the sequence number that WR took when
 * posted. The queue pops what a queue of every effect would, in the same
 * order (each QP's effects are sorted by (time, sequence) already), and
 * holds a few entries per QP instead of every WR in flight: a saturated
 * RNIC in the lotus preset keeps some 35 000 WRs waiting (issue 30).
 *
 * Room: every pending effect may still push its successor's effect and its
 * own completion, so sim_qp_post() keeps room for twice the pending
 * effects; an event handler never fails to push.
 */
#include <errno.h>

#include <rte_common.h>

#include "sim_private.h"

int
sim_event_reserve(struct sim_fabric *sf, uint32_t extra)
{
	return dtxn_timeq_reserve(&sf->evq, extra);
}

int
sim_event_push(struct sim_fabric *sf, uint64_t t_ns, uint8_t kind, uint32_t qp_id,
	       uint32_t wqe)
{
	return dtxn_timeq_push(&sf->evq, t_ns,
			       (uint64_t)qp_id << 33 | (uint64_t)wqe << 1 | (kind & 1u));
}

int
sim_event_push_effect(struct sim_fabric *sf, const struct sim_qp *qp, uint32_t wqe)
{
	const struct sim_wqe *w = &qp->sq[wqe & qp->mask];

	return dtxn_timeq_push_seq(&sf->evq, w->effect_ns, w->seq,
				   (uint64_t)qp->id << 33 | (uint64_t)wqe << 1 | SIM_EV_EFFECT);
}

bool
sim_event_pop_due(struct sim_fabric *sf, uint64_t now_ns, struct sim_event *ev)
{
	const struct dtxn_timeq_ent *e = dtxn_timeq_top(&sf->evq);

	if (e == NULL || e->t_ns > now_ns)
		return false;
	ev->t_ns = e->t_ns;
	ev->qp_id = (uint32_t)(e->val >> 33);
	ev->wqe = (uint32_t)(e->val >> 1);
	ev->kind = (uint8_t)(e->val & 1u);
	dtxn_timeq_pop(&sf->evq);
	return true;
}

void
sim_event_fini(struct sim_fabric *sf)
{
	dtxn_timeq_fini(&sf->evq);
}
