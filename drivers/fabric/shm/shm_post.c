/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * shm driver: posting. Each WR gets its effect and completion times from
 * the NIC model at post time (ARCHITECTURE.md, "NIC performance model"):
 * arrive = now + rtt/2; served = reservation of the remote RNIC's unit;
 * effect = max(served, previous WR's effect on this QP) (RC order);
 * completion = effect + rtt/2 (model v1; v2 also reserves the posting
 * node's own RNIC: dtxn_fabric_wr_time_ex()). With the model "none" a WR takes effect
 * and completes at post time: its times are 0 (always due), so neither the
 * post nor the poll reads the clock; in one process, with nothing queued
 * before it, a chain even skips the send queue (shm_post_direct()). The time spent executing them is the
 * emulated NIC's (struct dtxn_cq.nic_cycles, dtxn_cq_nic_cycles(); sampled:
 * shm_cq_nic_sample()).
 */
#include <errno.h>

#include <rte_common.h>

#include "dtxn_sched.h"
#include "shm_private.h"

/* Times one WR (lib/fabric's shared model): sets effect_ns and done_ns. */
static void
shm_wqe_time(struct shm_qp *qp, struct shm_wqe *w, uint64_t now)
{
	const struct dtxn_nic_model *m = &qp->base.fabric->conf.nic;
	/* the posting node's own RNIC: modelled whenever the remote one is */
	struct dtxn_nic_state *lnic = qp->rnic != NULL ?
		&SHM_FABRIC(qp->base.fabric)->nic[qp->base.local_node] : NULL;

	dtxn_fabric_wr_time_ex(m, lnic, m, qp->rnic, &w->wr, now, &qp->last_effect_ns,
			       &w->effect_ns, &w->done_ns);
}

/*
 * Model "none" in one process, nothing queued on @p qp, no SEND, room for
 * @p n completions: the chain takes effect now, in order, from the
 * caller's WRs, without a copy into the send queue (what the queue path
 * does at once too: every WR is due at post). Across processes the queue
 * stays: a CN killed in the middle of a chain leaves the rest to
 * dtxn_fabric_drain_node() (shm_drain.c), as an RNIC would run it.
 */
static void
shm_post_direct(struct shm_qp *qp, const struct dtxn_wr *wr_list)
{
	struct dtxn_cqe_ring *ring = &qp->cq->core.ring;
	/* the checks of shm_wr_execute() once for the chain, when none applies */
	const bool plain = dtxn_fabric_node_plain(qp->base.fabric, qp->mn_base,
						  qp->base.remote_node);

	for (const struct dtxn_wr *wr = wr_list; wr != NULL; wr = wr->next) {
		uint8_t st = plain ? dtxn_fabric_mem_exec(qp->mn_base, qp->mn_size, wr) :
				     shm_wr_execute(qp, wr);

		if ((wr->flags & DTXN_WR_F_SIGNALED) || st != DTXN_WC_SUCCESS)
			dtxn_cqe_ring_push(ring, wr->wr_id, st == DTXN_WC_SUCCESS ? wr->len : 0,
					   wr->opcode, st, qp->base.remote_node);
	}
}

/* The emulated NIC's part of a post: chain @p direct (shm_post_direct()),
 * else the queue's due WRs at @p now; timed 1 in 2^SHM_NIC_SAMPLE_SHIFT. */
static void
shm_post_run(struct shm_qp *qp, const struct dtxn_wr *direct, uint64_t now)
{
	const bool timed = shm_cq_nic_sample(qp->cq);
	const uint64_t t0 = timed ? dtxn_cpu_cycles() : 0;

	if (direct != NULL)
		shm_post_direct(qp, direct);
	else
		shm_qp_progress(qp, now);
	if (timed)
		shm_cq_nic_add(qp->cq, t0);
}

int
shm_qp_post(struct dtxn_qp *q, struct dtxn_wr *wr_list)
{
	struct shm_qp *qp = SHM_QP(q);
	const struct dtxn_wr *wr;
	uint32_t n, n_send, tail;
	uint64_t now;

	n = dtxn_wr_chain_count(wr_list, &n_send);
	if (n_send != 0 && __atomic_load_n(&qp->peer, __ATOMIC_ACQUIRE) == NULL)
		return -ENOTCONN;
	if (n > q->max_wr - (qp->tail - qp->head))
		return -ENOBUFS;
	if (qp->rnic == NULL && n_send == 0 && !qp->sf->multi_process && qp->head == qp->tail &&
	    n <= qp->cq->core.ring.mask + 1 - dtxn_cqe_ring_count(&qp->cq->core.ring)) {
		shm_post_run(qp, wr_list, 0);
		return 0;
	}
	/* model "none" (no RNIC state): every WR is due at once, times 0 */
	now = qp->rnic != NULL ? dtxn_now_ns() : 0;
	tail = qp->tail;
	if (qp->head == tail && (tail & qp->mask) != 0) {
		/* empty: restart at slot 0, the next index that maps there (exec
		 * and tail in one store: a drain of this QP never sees them apart) */
		tail = (tail + qp->mask) & ~qp->mask;
		qp->head = tail;
		__atomic_store_n(&qp->exec_tail, (uint64_t)tail << 32 | tail, __ATOMIC_RELEASE);
	}
	for (wr = wr_list; wr != NULL; wr = wr->next) {
		struct shm_wqe *w = &qp->sq[tail & qp->mask];

		dtxn_wr_copy(&w->wr, wr, w->inl);
		w->status = DTXN_WC_SUCCESS;
		if (wr->opcode == DTXN_WR_SEND) /* checked above: paired */
			w->dst_inc = __atomic_load_n(&qp->peer, __ATOMIC_ACQUIRE)->inc;
		if (qp->rnic != NULL)
			shm_wqe_time(qp, w, now);
		else
			w->effect_ns = w->done_ns = 0;
		tail++;
	}
	/* one doorbell: the chain is posted whole or not at all, so a process
	 * killed while posting leaves none of it to dtxn_fabric_drain_node() */
	__atomic_store_n(&qp->tail, tail, __ATOMIC_RELEASE);
	/* Model "none": everything is due now. */
	shm_post_run(qp, NULL, now);
	return 0;
}

int
shm_qp_post_recv(struct dtxn_qp *q, struct dtxn_wr *wr_list)
{
	return dtxn_wr_queue_post(&SHM_QP(q)->rq, wr_list, q->max_wr);
}
