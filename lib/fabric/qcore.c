/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The QP/CQ core the fabric drivers share (dtxn_fabric_driver.h): the
 * generic part of a new QP, the CQ's completion ring (and the CQ object
 * around it), the receive queue of posted RECVs and the masked-CAS loop.
 */
#include <errno.h>

#include <rte_common.h>
#include <rte_debug.h>
#include <rte_errno.h>
#include <rte_malloc.h>

#include "dtxn_fabric_driver.h"
#include "fabric_private.h"

int
dtxn_cqe_ring_init(struct dtxn_cqe_ring *r, unsigned depth, int socket_id)
{
	if (depth == 0 || !rte_is_power_of_2(depth))
		return -EINVAL;
	r->e = rte_zmalloc_socket("dtxn_cqe", sizeof(*r->e) * depth, RTE_CACHE_LINE_SIZE,
				  socket_id);
	if (r->e == NULL)
		return -ENOMEM;
	r->mask = depth - 1;
	r->head = r->tail = 0;
	return 0;
}

void
dtxn_cqe_ring_free(struct dtxn_cqe_ring *r)
{
	rte_free(r->e);
	r->e = NULL;
}

int
dtxn_cqe_ring_grow(struct dtxn_cqe_ring *r)
{
	uint32_t cap = (r->mask + 1) * 2, n = r->tail - r->head, i;
	struct dtxn_cqe *e;

	if (cap == 0)
		return -ENOSPC;
	e = rte_malloc("dtxn_cqe", sizeof(*e) * cap, RTE_CACHE_LINE_SIZE);
	if (e == NULL)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		e[i] = r->e[(r->head + i) & r->mask];
	rte_free(r->e);
	r->e = e;
	r->mask = cap - 1;
	r->head = 0;
	r->tail = n;
	return 0;
}

struct dtxn_cq_core *
dtxn_cq_core_alloc(const char *type, size_t size, unsigned depth, int socket_id)
{
	struct dtxn_cq_core *c;

	RTE_ASSERT(size >= sizeof(*c));
	c = rte_zmalloc_socket(type, size, RTE_CACHE_LINE_SIZE, socket_id);
	if (c == NULL || dtxn_cqe_ring_init(&c->ring, depth, socket_id) != 0) {
		rte_free(c);
		rte_errno = ENOMEM;
		return NULL;
	}
	return c;
}

int
dtxn_cq_core_free(struct dtxn_cq_core *c)
{
	if (c->n_qps != 0)
		return -EBUSY;
	dtxn_cqe_ring_free(&c->ring);
	rte_free(c);
	return 0;
}

void
dtxn_qp_init(struct dtxn_qp *qp, struct dtxn_fabric *f, struct dtxn_cq *cq,
	     uint16_t local_node, uint16_t remote_node, unsigned max_wr)
{
	qp->fabric = f;
	qp->cq = cq;
	qp->local_node = local_node;
	qp->remote_node = remote_node;
	qp->max_wr = max_wr;
	qp->err_state = FABRIC_QP_OK;
}

int
dtxn_wr_queue_init(struct dtxn_wr_queue *q, unsigned slots, int socket_id)
{
	if (slots == 0 || !rte_is_power_of_2(slots))
		return -EINVAL;
	q->e = rte_zmalloc_socket("dtxn_rq", sizeof(*q->e) * slots, RTE_CACHE_LINE_SIZE,
				  socket_id);
	if (q->e == NULL)
		return -ENOMEM;
	q->mask = slots - 1;
	q->head = q->tail = 0;
	return 0;
}

void
dtxn_wr_queue_free(struct dtxn_wr_queue *q)
{
	rte_free(q->e);
	q->e = NULL;
}

/* Makes room for @p n more WRs, at most @p max_wr in all. 0 or -ENOBUFS. */
static int
wr_queue_room(struct dtxn_wr_queue *q, uint32_t n, uint32_t max_wr)
{
	uint32_t used = q->tail - q->head, cap = q->mask + 1, i;
	struct dtxn_wr *e;

	if (n > max_wr - used)
		return -ENOBUFS;
	if (used + n <= q->mask + 1)
		return 0;
	while (cap < used + n)
		cap *= 2;
	e = rte_malloc("dtxn_rq", sizeof(*e) * cap, RTE_CACHE_LINE_SIZE);
	if (e == NULL)
		return -ENOBUFS;
	/* free-running indices stay valid: entry i moves to i & (cap - 1) */
	for (i = q->head; i != q->tail; i++)
		e[i & (cap - 1)] = q->e[i & q->mask];
	rte_free(q->e);
	q->e = e;
	q->mask = cap - 1;
	return 0;
}

int
dtxn_wr_queue_post(struct dtxn_wr_queue *q, const struct dtxn_wr *wr_list, uint32_t max_wr)
{
	if (wr_queue_room(q, dtxn_wr_chain_count(wr_list, NULL), max_wr) != 0)
		return -ENOBUFS;
	for (const struct dtxn_wr *wr = wr_list; wr != NULL; wr = wr->next) {
		struct dtxn_wr *r = &q->e[q->tail++ & q->mask];

		*r = *wr;
		r->next = NULL;
	}
	return 0;
}

void
dtxn_mcas_loop_start(struct dtxn_mcas_loop *l, const struct dtxn_wr *wr)
{
	l->compare = wr->compare_add;
	l->swap = wr->swap;
	l->compare_mask = wr->compare_mask;
	l->swap_mask = wr->swap_mask;
	l->expect = wr->compare_add & wr->compare_mask;
	l->desired = (l->expect & ~l->swap_mask) | (l->swap & l->swap_mask);
	l->cas_posted = 1;
}

bool
dtxn_mcas_loop_step(struct dtxn_mcas_loop *l, uint64_t got)
{
	if (got == l->expect)
		return true; /* the CAS swapped */
	if (((got ^ l->compare) & l->compare_mask) != 0)
		return true; /* masked compare fails: memory untouched */
	l->expect = got;
	l->desired = (got & ~l->swap_mask) | (l->swap & l->swap_mask);
	l->cas_posted++;
	return false;
}
