/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * shm driver: posting. Each WR gets its effect and completion times from
 * the NIC model at post time (ARCHITECTURE.md, "NIC performance model"):
 * arrive = now + rtt/2; served = reservation of the remote RNIC's unit;
 * effect = max(served, previous WR's effect on this QP) (RC order);
 * completion = effect + rtt/2. With the model "none" a WR takes effect
 * and completes at post time.
 */
#include <errno.h>
#include <string.h>

#include <rte_common.h>

#include "dtxn_sched.h"
#include "shm_private.h"

static struct dtxn_nic_unit *
shm_unit(struct dtxn_nic_state *rnic, unsigned opcode)
{
	switch (opcode) {
	case DTXN_WR_CAS:
	case DTXN_WR_FAA:
	case DTXN_WR_MASKED_CAS:
		return &rnic->atomic;
	default:
		return &rnic->rw;
	}
}

/* Times one WR: sets effect_ns and done_ns. */
static void
shm_wqe_time(struct shm_qp *qp, struct shm_wqe *w, uint64_t now)
{
	const struct dtxn_nic_model *m = &qp->base.fabric->conf.nic;
	uint64_t effect = now;

	if (qp->rnic != NULL) {
		uint64_t svc = dtxn_nic_service_ns(m, w->wr.opcode, w->wr.len, false);

		effect = dtxn_nic_reserve(shm_unit(qp->rnic, w->wr.opcode),
					  now + qp->rtt_out_ns, svc);
	}
	effect = RTE_MAX(effect, qp->last_effect_ns);
	qp->last_effect_ns = effect;
	w->effect_ns = effect;
	w->done_ns = effect + (qp->rnic != NULL ? qp->rtt_back_ns : 0);
}

int
shm_qp_post(struct dtxn_qp *q, struct dtxn_wr *wr_list)
{
	struct shm_qp *qp = SHM_QP(q);
	const struct dtxn_wr *wr;
	uint32_t n = 0;
	uint64_t now;

	for (wr = wr_list; wr != NULL; wr = wr->next) {
		n++;
		if (wr->opcode == DTXN_WR_SEND &&
		    __atomic_load_n(&qp->peer, __ATOMIC_ACQUIRE) == NULL)
			return -ENOTCONN;
	}
	if (n > q->max_wr - (qp->tail - qp->head))
		return -ENOBUFS;
	now = dtxn_now_ns();
	for (wr = wr_list; wr != NULL; wr = wr->next) {
		struct shm_wqe *w = &qp->sq[qp->tail & qp->mask];

		w->wr = *wr;
		w->wr.next = NULL;
		w->status = DTXN_WC_SUCCESS;
		if (wr->flags & DTXN_WR_F_INLINE) {
			memcpy(w->inl, wr->local, wr->len);
			w->wr.local = w->inl;
		}
		shm_wqe_time(qp, w, now);
		qp->tail++;
	}
	/* Model "none": everything is due now. */
	shm_qp_progress(qp, now);
	return 0;
}

int
shm_qp_post_recv(struct dtxn_qp *q, struct dtxn_wr *wr_list)
{
	struct shm_qp *qp = SHM_QP(q);
	const struct dtxn_wr *wr;
	uint32_t n = 0;

	for (wr = wr_list; wr != NULL; wr = wr->next)
		n++;
	if (n > q->max_wr - (qp->rq_tail - qp->rq_head))
		return -ENOBUFS;
	for (wr = wr_list; wr != NULL; wr = wr->next) {
		struct dtxn_wr *r = &qp->rq[qp->rq_tail & qp->mask];

		*r = *wr;
		r->next = NULL;
		qp->rq_tail++;
	}
	return 0;
}
