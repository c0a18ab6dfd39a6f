/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * shm driver: dtxn_fabric_drain_node(). A real RNIC executes the WRs it
 * was given whatever happens to the process that posted them; shm's are
 * executed by the poller of the posting process (shm_poll.c), at their
 * modelled effect time, so a CN process killed between a post and that
 * time would leave them undone: a commit batch posted (Motor, OOCC,
 * Scythe and CREST mark the txn decided then, dtxn_batch_run_decide())
 * but never applied, or applied in part. The survivor that recovers the
 * dead CN calls this first, from its own process: every QP the dead node
 * made is in the shared pairing directory (shm_qp.c), its send queue in
 * DPDK memory mapped at the same address here, and its last stores final
 * (fail-stop).
 */
#include <errno.h>

#include <rte_memory.h>

#include "shm_private.h"

/* Whether [p, p + len) lies in DPDK memory (mapped in every process of
 * the cluster), not in the dead process's private memory. */
static bool
shm_shared_range(const void *p, uint64_t len)
{
	if (p == NULL || rte_mem_virt2memseg(p, NULL) == NULL)
		return false;
	return len == 0 || rte_mem_virt2memseg((const uint8_t *)p + len - 1, NULL) != NULL;
}

/* Applies the WRs of @p qp that have not taken effect; counts them. */
static void
shm_qp_drain(struct shm_fabric *sf, struct shm_qp *qp, unsigned *applied, unsigned *dropped)
{
	/* one load: the owner restarts an empty queue at slot 0 (shm_qp_post()) */
	uint64_t et = __atomic_load_n(&qp->exec_tail, __ATOMIC_ACQUIRE);
	uint32_t exec = (uint32_t)et;
	uint32_t tail = (uint32_t)(et >> 32);

	if (!shm_shared_range(qp->sq, sizeof(*qp->sq) * (uint64_t)(qp->mask + 1))) {
		*dropped += tail - exec;
		return;
	}
	for (; exec != tail; exec++) {
		struct shm_wqe *w = &qp->sq[exec & qp->mask];
		const struct dtxn_wr *wr = &w->wr;

		if (wr->opcode == DTXN_WR_READ || wr->opcode == DTXN_WR_SEND ||
		    qp->mn_base == NULL) {
			/* nothing to change in MN memory; the requester is gone */
			(*dropped)++;
			continue;
		}
		if (wr->opcode == DTXN_WR_WRITE && !shm_shared_range(wr->local, wr->len)) {
			(*dropped)++; /* the payload was in the dead process's own memory */
			continue;
		}
		/* the old value of an atomic goes to wr->local, also shared */
		if (wr->opcode != DTXN_WR_WRITE && !shm_shared_range(wr->local, 8)) {
			(*dropped)++;
			continue;
		}
		w->status = dtxn_fabric_node_exec(&sf->base, qp->mn_base, qp->mn_size,
						  qp->base.remote_node, wr);
		/* recorded WR by WR: a survivor that takes the drain over from a
		 * drainer killed here (the directory's lock, dtxn_plock.h) redoes
		 * at most this one WR (idempotent but for a FAA) */
		__atomic_store_n(&qp->exec, exec + 1, __ATOMIC_RELEASE);
		(*applied)++;
	}
	__atomic_store_n(&qp->exec, tail, __ATOMIC_RELEASE);
}

int
shm_drain_node(struct dtxn_fabric *f, uint16_t node)
{
	struct shm_fabric *sf = SHM_FABRIC(f);
	struct shm_qpdir *d = sf->qpdir;
	unsigned applied = 0, dropped = 0;

	if (node < sf->n_mn || node >= sf->n_nodes)
		return -EINVAL;
	dtxn_plock_lock(&d->lock, "qpdir");
	for (unsigned i = 0; i < SHM_QPDIR_SIZE; i++) {
		struct shm_qp *qp = __atomic_load_n(&d->ent[i].qp, __ATOMIC_ACQUIRE);

		if (qp != NULL && d->ent[i].local == node)
			shm_qp_drain(sf, qp, &applied, &dropped);
	}
	dtxn_plock_unlock(&d->lock);
	if (applied + dropped != 0)
		SHM_LOG(INFO, "node %u's dead process: %u posted WRs applied, %u dropped (READ, SEND, private payload)",
			node, applied, dropped);
	return (int)applied;
}
