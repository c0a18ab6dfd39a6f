/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * shm driver: CQ and QP life cycle. The k-th QP created from node a to
 * node b is paired with the k-th QP from b to a, for SEND/RECV. Destroying
 * a QP flushes its outstanding WRs and RECVs into its CQ.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "shm_private.h"

struct dtxn_cq *
shm_cq_create(struct dtxn_fabric *f, int socket_id, unsigned depth)
{
	struct shm_cq *cq;

	RTE_SET_USED(f);
	cq = (struct shm_cq *)dtxn_cq_core_alloc("shm_cq", sizeof(*cq), depth, socket_id);
	if (cq == NULL)
		return NULL;
	TAILQ_INIT(&cq->qps);
	cq->nic_cap = rte_get_tsc_hz() / 1000000 * SHM_NIC_SAMPLE_CAP_US;
	if (cq->nic_cap == 0)
		cq->nic_cap = UINT64_MAX; /* TSC rate unknown: keep every sample */
	return &cq->core.base;
}

void
shm_cq_destroy(struct dtxn_cq *c)
{
	struct shm_cq *cq = SHM_CQ(c);

	if (dtxn_cq_core_free(&cq->core) != 0)
		SHM_LOG(ERR, "CQ destroyed with %u QPs attached: not freed", cq->core.n_qps);
}

void
shm_msg_free(struct shm_msg *m)
{
	if (m->pooled)
		rte_mempool_put(rte_mempool_from_obj(m), m);
	else
		rte_free(m);
}

/*
 * Registers @p qp (CN -> CN, CN -> MN or MN -> CN) in the directory and pairs it with the
 * k-th QP remote -> local if that one exists, whichever process made it.
 * @return 0, or -ENOSPC (directory full).
 */
static int
shm_qp_pair(struct shm_fabric *sf, struct shm_qp *qp)
{
	struct shm_qpdir *d = sf->qpdir;
	struct shm_qpdir_ent *free_ent = NULL;
	int rc = 0;

	dtxn_plock_lock(&d->lock, "qpdir");
	for (unsigned i = 0; i < SHM_QPDIR_SIZE; i++) {
		struct shm_qpdir_ent *e = &d->ent[i];

		if (__atomic_load_n(&e->qp, __ATOMIC_ACQUIRE) == NULL) {
			if (free_ent == NULL)
				free_ent = e;
			continue;
		}
		if (e->local == qp->base.local_node && e->remote == qp->base.remote_node &&
		    e->seq == qp->seq) {
			/* an earlier incarnation's QP (its process died): this one replaces it */
			free_ent = e;
			continue;
		}
		if (e->local == qp->base.remote_node && e->remote == qp->base.local_node &&
		    e->seq == qp->seq) {
			__atomic_store_n(&qp->peer, e->qp, __ATOMIC_RELEASE);
			__atomic_store_n(&e->qp->peer, qp, __ATOMIC_RELEASE);
		}
	}
	if (free_ent != NULL) {
		/* the pointer last (and first cleared, unpair): a holder killed
		 * between these stores leaves a free entry or the old one, never
		 * a pointer with another QP's ids */
		__atomic_store_n(&free_ent->qp, NULL, __ATOMIC_RELEASE);
		free_ent->local = qp->base.local_node;
		free_ent->remote = qp->base.remote_node;
		free_ent->seq = qp->seq;
		__atomic_store_n(&free_ent->qp, qp, __ATOMIC_RELEASE);
	} else {
		rc = -ENOSPC;
	}
	dtxn_plock_unlock(&d->lock);
	return rc;
}

/* Removes @p qp from the directory and unpairs its peer. */
static void
shm_qp_unpair(struct shm_fabric *sf, struct shm_qp *qp)
{
	struct shm_qpdir *d = sf->qpdir;
	struct shm_qp *peer;

	dtxn_plock_lock(&d->lock, "qpdir");
	for (unsigned i = 0; i < SHM_QPDIR_SIZE; i++)
		if (__atomic_load_n(&d->ent[i].qp, __ATOMIC_ACQUIRE) == qp) {
			__atomic_store_n(&d->ent[i].qp, NULL, __ATOMIC_RELEASE);
			memset(&d->ent[i], 0, sizeof(d->ent[i]));
		}
	peer = qp->peer;
	if (peer != NULL)
		__atomic_store_n(&peer->peer, NULL, __ATOMIC_RELEASE);
	dtxn_plock_unlock(&d->lock);
}

struct dtxn_qp *
shm_qp_create(struct dtxn_fabric *f, struct dtxn_cq *c, uint16_t local_node,
	      uint16_t remote_node, unsigned max_wr)
{
	struct shm_fabric *sf = SHM_FABRIC(f);
	struct shm_cq *cq = SHM_CQ(c);
	const struct dtxn_nic_model *m = &f->conf.nic;
	char name[RTE_RING_NAMESIZE];
	struct shm_qp *qp;
	uint32_t seq;

	if (remote_node < sf->n_mn && sf->mn_mz[remote_node] == NULL) {
		rte_errno = ENXIO; /* multi-process: that region is not attached here */
		return NULL;
	}
	/* SOCKET_ID_ANY prefers the calling lcore's socket. */
	qp = rte_zmalloc_socket("shm_qp", sizeof(*qp), RTE_CACHE_LINE_SIZE, SOCKET_ID_ANY);
	if (qp == NULL)
		goto nomem;
	qp->sq = rte_zmalloc_socket("shm_sq", sizeof(*qp->sq) * max_wr, RTE_CACHE_LINE_SIZE,
				    SOCKET_ID_ANY);
	if (qp->sq == NULL || dtxn_wr_queue_init(&qp->rq, max_wr, SOCKET_ID_ANY) != 0)
		goto nomem;
	/* the k-th QP local -> remote: local's QPs are all made by one process */
	rte_spinlock_lock(&sf->lock);
	seq = sf->qp_seq[local_node][remote_node]++;
	rte_spinlock_unlock(&sf->lock);
	/* unique in the whole cluster (ring names are global to its processes) */
	if ((size_t)snprintf(name, sizeof(name), "%s_i%u.%u.%u.%u", f->name, local_node,
			     remote_node, seq, f->conf.incarnation) >= sizeof(name))
		goto nomem;
	/* max_wr slots, so a peer can have as many SENDs in flight as it may post. */
	qp->inbound = rte_ring_create(name, max_wr, SOCKET_ID_ANY,
				      RING_F_SP_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ);
	if (qp->inbound == NULL) {
		SHM_LOG(ERR, "ring %s: %s", name, rte_strerror(rte_errno));
		goto nomem;
	}
	dtxn_qp_init(&qp->base, f, c, local_node, remote_node, max_wr);
	qp->sf = sf;
	qp->cq = cq;
	qp->mask = max_wr - 1;
	if (remote_node < f->conf.n_mn) {
		qp->mn_base = sf->mn_mz[remote_node]->addr;
		qp->mn_size = f->conf.mn_region_size;
	}
	qp->rnic = sf->modelled ? &sf->nic[remote_node] : NULL;
	qp->rtt_out_ns = m->rtt_ns / 2;
	qp->rtt_back_ns = m->rtt_ns - qp->rtt_out_ns;

	qp->seq = seq;
	qp->inc = f->conf.incarnation;
	/* CN <-> CN, and CN <-> MN for an MN-side service (lib/rpc's dtxn_rpc_srv) */
	if (shm_qp_pair(sf, qp) != 0) {
		SHM_LOG(ERR, "QP %u->%u: more than %u QPs with SEND/RECV pairing", local_node,
			remote_node, SHM_QPDIR_SIZE);
		rte_ring_free(qp->inbound);
		goto nomem;
	}
	rte_spinlock_lock(&sf->lock);
	TAILQ_INSERT_TAIL(&sf->qps, qp, fab_next);
	rte_spinlock_unlock(&sf->lock);

	TAILQ_INSERT_TAIL(&cq->qps, qp, cq_next);
	cq->core.n_qps++;
	return &qp->base;
nomem:
	if (qp != NULL) {
		rte_free(qp->sq);
		dtxn_wr_queue_free(&qp->rq);
	}
	rte_free(qp);
	rte_errno = ENOMEM;
	return NULL;
}

/* Pushes a flush completion, counting it if the CQ has no room. */
static void
shm_flush_push(struct shm_cq *cq, uint64_t wr_id, uint32_t len, uint8_t op,
	       uint8_t status, uint16_t src)
{
	if (!dtxn_cqe_ring_push(&cq->core.ring, wr_id, len, op, status, src))
		cq->dropped++;
}

void
shm_qp_destroy(struct dtxn_qp *q)
{
	struct shm_qp *qp = SHM_QP(q);
	struct shm_fabric *sf = qp->sf;
	struct shm_cq *cq = qp->cq;
	uint64_t dropped = cq->dropped;
	const struct dtxn_wr *r;
	void *m;

	rte_spinlock_lock(&sf->lock);
	TAILQ_REMOVE(&sf->qps, qp, fab_next);
	rte_spinlock_unlock(&sf->lock);
	shm_qp_unpair(sf, qp);

	/* WRs that took effect complete normally; the others are flushed. */
	for (; qp->head != qp->exec; qp->head++) {
		struct shm_wqe *w = &qp->sq[qp->head & qp->mask];

		if ((w->wr.flags & DTXN_WR_F_SIGNALED) || w->status != DTXN_WC_SUCCESS)
			shm_flush_push(cq, w->wr.wr_id, w->wr.len, w->wr.opcode, w->status, 0);
	}
	for (; qp->head != qp->tail; qp->head++) {
		struct shm_wqe *w = &qp->sq[qp->head & qp->mask];

		shm_flush_push(cq, w->wr.wr_id, 0, w->wr.opcode, DTXN_WC_WR_FLUSH_ERR, 0);
	}
	while ((r = dtxn_wr_queue_pop(&qp->rq)) != NULL)
		shm_flush_push(cq, r->wr_id, 0, DTXN_WR_RECV, DTXN_WC_WR_FLUSH_ERR, 0);
	if (cq->dropped != dropped)
		SHM_LOG(WARNING, "QP %u->%u destroyed: %" PRIu64 " completions lost (CQ full)",
			q->local_node, q->remote_node, cq->dropped - dropped);
	while (rte_ring_dequeue(qp->inbound, &m) == 0)
		shm_msg_free(m);
	rte_ring_free(qp->inbound);
	TAILQ_REMOVE(&cq->qps, qp, cq_next);
	cq->core.n_qps--;
	rte_free(qp->sq);
	dtxn_wr_queue_free(&qp->rq);
	rte_free(qp);
}
