/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The QP/CQ core the fabric drivers share (dtxn_fabric_driver.h): the
 * CQ's completion ring and the masked-CAS loop.
 */
#include <errno.h>

#include <rte_common.h>
#include <rte_malloc.h>

#include "dtxn_fabric_driver.h"

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
