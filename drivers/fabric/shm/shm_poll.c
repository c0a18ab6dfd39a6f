/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * shm driver: dtxn_cq_poll. For each QP of the CQ: execute, in order, the
 * WRs whose effect time has come; move due completions (signaled WRs and
 * any failed WR) to the CQ's ring, freeing their send-queue slots; match
 * inbound messages to posted RECVs. Then reap the ring.
 */
#include <string.h>

#include <rte_common.h>
#include <rte_ring.h>

#include "dtxn_sched.h"
#include "shm_private.h"

static void
shm_qp_deliver(struct shm_qp *qp)
{
	struct shm_cq *cq = qp->cq;
	struct shm_msg *m;

	while (dtxn_wr_queue_count(&qp->rq) != 0 && !dtxn_cqe_ring_full(&cq->core.ring)) {
		const struct dtxn_wr *r = dtxn_wr_queue_front(&qp->rq);
		struct shm_qp *peer;
		uint8_t status;

		if (rte_ring_dequeue(qp->inbound, (void **)&m) != 0)
			return;
		peer = __atomic_load_n(&qp->peer, __ATOMIC_ACQUIRE);
		if (peer == NULL || m->inc != (uint8_t)peer->inc) {
			/* sent by a dead incarnation of the peer: never to be delivered */
			qp->stale++;
			shm_msg_free(m);
			continue;
		}
		status = dtxn_fabric_recv_fill(r, m->data, m->len);
		dtxn_cqe_ring_push(&cq->core.ring, r->wr_id, m->len, DTXN_WR_RECV, status, m->src_node);
		shm_msg_free(m);
		(void)dtxn_wr_queue_pop(&qp->rq);
	}
}

void
shm_qp_progress(struct shm_qp *qp, uint64_t now)
{
	while (qp->exec != qp->tail) {
		struct shm_wqe *w = &qp->sq[qp->exec & qp->mask];

		if (w->effect_ns > now || !shm_wqe_execute(qp, w))
			break;
		__atomic_store_n(&qp->exec, qp->exec + 1, __ATOMIC_RELEASE); /* shm_drain.c reads it */
	}
	while (qp->head != qp->exec) {
		struct shm_wqe *w = &qp->sq[qp->head & qp->mask];
		uint32_t byte_len;

		if (w->done_ns > now)
			break;
		if ((w->wr.flags & DTXN_WR_F_SIGNALED) || w->status != DTXN_WC_SUCCESS) {
			byte_len = w->status == DTXN_WC_SUCCESS ? w->wr.len : 0;
			if (!dtxn_cqe_ring_push(&qp->cq->core.ring, w->wr.wr_id, byte_len, w->wr.opcode,
						w->status, qp->base.remote_node))
				break; /* CQ full: try again at the next poll */
		}
		qp->head++;
	}
	if (dtxn_wr_queue_count(&qp->rq) != 0)
		shm_qp_deliver(qp);
}

unsigned
shm_cq_poll(struct dtxn_cq *c, struct dtxn_cqe *cqes, unsigned n)
{
	struct shm_cq *cq = SHM_CQ(c);
	struct shm_qp *qp;

	if (dtxn_cqe_ring_count(&cq->core.ring) < n) {
		/* model "none": every WR's times are 0 (shm_post.c) */
		uint64_t now = SHM_FABRIC(c->fabric)->modelled ? dtxn_now_ns() : 0;
		bool timed = shm_cq_nic_sample(cq);
		uint64_t t0 = timed ? dtxn_cpu_cycles() : 0;

		TAILQ_FOREACH(qp, &cq->qps, cq_next)
			shm_qp_progress(qp, now);
		if (timed)
			shm_cq_nic_add(cq, t0);
	}
	return dtxn_cqe_ring_pop(&cq->core.ring, cqes, n);
}
