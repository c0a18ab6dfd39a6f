/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sim driver: CQ and QP life cycle. As in shm, the k-th QP created from
 * node a to node b pairs with the k-th QP from b to a (SEND/RECV), and
 * destroying a QP flushes it: WRs that took effect complete normally, the
 * others and the posted RECVs complete with WR_FLUSH_ERR. Events still
 * queued for a destroyed QP find its table slot empty and do nothing.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_malloc.h>

#include "sim_private.h"

struct dtxn_cq *
sim_cq_create(struct dtxn_fabric *f, int socket_id, unsigned depth)
{
	struct dtxn_cq_core *cq;

	RTE_SET_USED(f);
	cq = dtxn_cq_core_alloc("sim_cq", sizeof(struct sim_cq), depth, socket_id);
	return cq != NULL ? &cq->base : NULL;
}

void
sim_cq_destroy(struct dtxn_cq *c)
{
	struct sim_cq *cq = SIM_CQ(c);

	if (dtxn_cq_core_free(&cq->core) != 0)
		SIM_LOG(ERR, "CQ destroyed with %u QPs attached: not freed", cq->core.n_qps);
}

void
sim_cq_push(struct sim_cq *cq, uint64_t wr_id, uint32_t byte_len, uint8_t opcode,
	    uint8_t status, uint16_t src_node)
{
	if (dtxn_cqe_ring_full(&cq->core.ring) && dtxn_cqe_ring_grow(&cq->core.ring) != 0) {
		/* never seen in practice: the ring starts at the CQ's depth */
		SIM_LOG(ERR, "CQ full and out of memory: completion of %#" PRIx64 " lost", wr_id);
		return;
	}
	(void)dtxn_cqe_ring_push(&cq->core.ring, wr_id, byte_len, opcode, status, src_node);
	if (cq->notify != NULL)
		cq->notify(&cq->core.base, cq->notify_arg);
}

static int
sim_qp_table_add(struct sim_fabric *sf, struct sim_qp *qp)
{
	if (sf->n_qps >= UINT32_C(1) << 31)
		return -ENOMEM; /* an event holds a QP id in 31 bits */
	if (sf->n_qps == sf->qps_cap) {
		uint32_t cap = sf->qps_cap ? sf->qps_cap * 2 : 64;
		struct sim_qp **t = rte_realloc(sf->qps, sizeof(*t) * cap, 0);
		struct sim_sq_ref *r;

		if (t == NULL)
			return -ENOMEM;
		sf->qps = t;
		r = rte_realloc(sf->sqs, sizeof(*r) * cap, 0);
		if (r == NULL)
			return -ENOMEM;
		sf->sqs = r;
		sf->qps_cap = cap;
	}
	qp->id = sf->n_qps;
	sf->sqs[qp->id] = (struct sim_sq_ref){ .sq = qp->sq, .mask = qp->mask };
	sf->qps[sf->n_qps++] = qp;
	return 0;
}

/* Pairs @p qp with the k-th QP remote -> local, if it exists. */
static void
sim_qp_pair(struct sim_fabric *sf, struct sim_qp *qp)
{
	uint32_t i;

	for (i = 0; i < sf->n_qps; i++) {
		struct sim_qp *o = sf->qps[i];

		if (o != NULL && o != qp && o->base.local_node == qp->base.remote_node &&
		    o->base.remote_node == qp->base.local_node && o->seq == qp->seq) {
			qp->peer = o;
			o->peer = qp;
			return;
		}
	}
}

struct dtxn_qp *
sim_qp_create(struct dtxn_fabric *f, struct dtxn_cq *c, uint16_t local_node,
	      uint16_t remote_node, unsigned max_wr)
{
	struct sim_fabric *sf = SIM_FABRIC(f);
	struct sim_cq *cq = SIM_CQ(c);
	struct sim_qp *qp;
	unsigned slots;

	qp = rte_zmalloc("sim_qp", sizeof(*qp), RTE_CACHE_LINE_SIZE);
	if (qp == NULL)
		goto nomem;
	slots = RTE_MIN(max_wr, SIM_QP_INIT_SLOTS);
	qp->sq = rte_zmalloc("sim_sq", sizeof(*qp->sq) * slots, RTE_CACHE_LINE_SIZE);
	qp->mask = slots - 1;
	if (qp->sq == NULL || dtxn_wr_queue_init(&qp->rq, slots, SOCKET_ID_ANY) != 0 ||
	    sim_qp_table_add(sf, qp) != 0)
		goto nomem;
	dtxn_qp_init(&qp->base, f, c, local_node, remote_node, max_wr);
	qp->sf = sf;
	qp->cq = cq;
	if (remote_node < f->conf.n_mn) {
		qp->mn_base = sf->mn[remote_node];
		qp->mn_size = f->conf.mn_region_size;
	}
	qp->seq = sf->qp_seq[local_node][remote_node]++;
	sim_qp_pair(sf, qp);
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

int
sim_qp_sq_room(struct sim_qp *qp, uint32_t n)
{
	uint32_t used = qp->tail - qp->head, size = qp->mask + 1, cap = size, i;
	struct sim_wqe *sq;

	if (n > qp->base.max_wr - used)
		return -ENOBUFS;
	if (used + n <= size)
		return 0;
	while (cap < used + n)
		cap *= 2;
	sq = rte_malloc("sim_sq", sizeof(*sq) * cap, RTE_CACHE_LINE_SIZE);
	if (sq == NULL)
		return -ENOBUFS;
	/* free-running indices stay valid: slot i moves to i & (cap - 1) */
	for (i = qp->head; i != qp->tail; i++) {
		struct sim_wqe *w = &sq[i & (cap - 1)];

		*w = qp->sq[i & qp->mask];
		if (w->wr.flags & DTXN_WR_F_INLINE)
			w->wr.local = w->inl;
	}
	rte_free(qp->sq);
	qp->sq = sq;
	qp->mask = cap - 1;
	qp->sf->sqs[qp->id] = (struct sim_sq_ref){ .sq = sq, .mask = qp->mask };
	return 0;
}

void
sim_qp_destroy(struct dtxn_qp *q)
{
	struct sim_qp *qp = SIM_QP(q);
	struct sim_cq *cq = qp->cq;
	const struct dtxn_wr *r;
	uint32_t pending = qp->tail - qp->exec;

	qp->sf->qps[qp->id] = NULL; /* its pending events now do nothing */
	qp->sf->sqs[qp->id] = (struct sim_sq_ref){ .sq = NULL, .mask = 0 };
	/* its effects not run: only the oldest is queued (sim_event.c); the
	 * others are counted now, as a queue of every effect would count them
	 * when popped (events count every effect, run or not) */
	qp->sf->pending_effects -= pending;
	qp->sf->events += pending > 0 ? pending - 1 : 0;
	if (qp->peer != NULL)
		qp->peer->peer = NULL;
	/* WRs that took effect complete normally; the others are flushed. */
	for (; qp->head != qp->exec; qp->head++) {
		struct sim_wqe *w = &qp->sq[qp->head & qp->mask];

		if (w->owed && !w->completed)
			sim_cq_push(cq, w->wr.wr_id, w->status == DTXN_WC_SUCCESS ? w->wr.len : 0,
				    w->wr.opcode, w->status, qp->base.remote_node);
	}
	for (; qp->head != qp->tail; qp->head++) {
		struct sim_wqe *w = &qp->sq[qp->head & qp->mask];

		sim_cq_push(cq, w->wr.wr_id, 0, w->wr.opcode, DTXN_WC_WR_FLUSH_ERR, 0);
	}
	while ((r = dtxn_wr_queue_pop(&qp->rq)) != NULL)
		sim_cq_push(cq, r->wr_id, 0, DTXN_WR_RECV, DTXN_WC_WR_FLUSH_ERR, 0);
	while (qp->in_head != NULL) {
		struct sim_msg *m = qp->in_head;

		qp->in_head = m->next;
		free(m); /* sim_send(): libc */
	}
	cq->core.n_qps--;
	rte_free(qp->sq);
	dtxn_wr_queue_free(&qp->rq);
	rte_free(qp);
}

uint64_t
dtxn_sim_node_drained_ns(const struct dtxn_fabric *f, uint16_t node)
{
	const struct sim_fabric *sf = SIM_FABRIC(f);
	uint64_t t = 0;

	if (f == NULL || !dtxn_sim_is(f))
		return 0;
	for (uint32_t i = 0; i < sf->n_qps; i++) {
		const struct sim_qp *qp = sf->qps[i];

		if (qp != NULL && qp->base.local_node == node && qp->last_effect_ns > t)
			t = qp->last_effect_ns;
	}
	return t;
}

/* The next draw in [0, 1) of the fault-drop stream (splitmix64). */
static double
sim_drop_draw(struct sim_fabric *sf)
{
	uint64_t z = (sf->drop_rng += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	z ^= z >> 31;
	return (double)(z >> 11) * 0x1.0p-53;
}

int64_t
dtxn_sim_node_kill(struct dtxn_fabric *f, uint16_t node, uint64_t *wrs_dropped)
{
	struct sim_fabric *sf = SIM_FABRIC(f);
	int64_t chains = 0;
	uint64_t wrs = 0;

	if (f == NULL || !dtxn_sim_is(f) || node >= sf->n_nodes)
		return -EINVAL;
	/* QPs by id and chains in posting order: the same draws every run */
	for (uint32_t i = 0; sf->drop_p > 0 && i < sf->n_qps; i++) {
		struct sim_qp *qp = sf->qps[i];
		uint32_t k;
		bool drop = false;

		if (qp == NULL || qp->base.local_node != node)
			continue;
		/* a chain whose first WR took effect has started at its MN: it
		 * runs to its end (k skips its rest); never split a chain */
		for (k = qp->exec; k != qp->tail && !qp->sq[k & qp->mask].chain_head; k++)
			;
		for (; k != qp->tail; k++) {
			struct sim_wqe *w = &qp->sq[k & qp->mask];

			/* once a chain is lost, so is every later one of its QP: the
			 * stream to that node was cut there (RC order: a later WR
			 * never takes effect without the earlier ones) */
			if (w->chain_head && !drop)
				drop = sim_drop_draw(sf) < sf->drop_p;
			chains += drop && w->chain_head;
			w->dropped = drop;
			wrs += drop;
		}
	}
	if (wrs_dropped != NULL)
		*wrs_dropped = wrs;
	return chains;
}
