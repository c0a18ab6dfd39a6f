/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A table's heaps (doc/guides/store.md, "Aux areas", "Delta heaps"): the
 * aux heap (an area per row, named by its slot header) and the delta
 * heap (areas a protocol takes on a row's first update, Motor's
 * attribute bars): where an area lives on each replica, the bump word a
 * coordinator FAAs, and the chunk a FAA hands out. The two have one
 * layout; the coordinator's side of a chunk is chunk.c.
 */
#include <errno.h>

#include "store_private.h"

/* Heap @p h of @p t: bytes per area, areas, offsets per replica (size 0: none). */
static void
aux_heap(const struct dtxn_table *t, enum dtxn_heap_kind h, uint32_t *size, uint64_t *areas,
	 const uint64_t **off)
{
	if (h == DTXN_HEAP_DELTA) {
		*size = t->delta_size;
		*areas = t->delta_areas;
		*off = t->delta_off;
	} else {
		*size = h == DTXN_HEAP_AUX ? t->aux_size : 0;
		*areas = t->aux_areas;
		*off = t->aux_off;
	}
	if (*areas == 0)
		*size = 0;
}

dtxn_raddr_t
dtxn_store_heap_area_raddr(const struct dtxn_table *t, enum dtxn_heap_kind h, uint16_t r,
			   dtxn_raddr_t at, uint32_t n)
{
	const uint64_t *off;
	uint64_t areas;
	uint32_t size;
	int s;

	if (t == NULL || r >= t->n_replicas)
		return 0;
	aux_heap(t, h, &size, &areas, &off);
	s = dtxn_store_stripe_of(t, at);
	if (size == 0 || n == 0 || n > areas || s < 0)
		return 0;
	return DTXN_RADDR(store_stripe_mn(t, r, (uint64_t)s),
			  off[r] + DTXN_AUX_HEAP_HDR + (uint64_t)(n - 1) * size);
}

dtxn_raddr_t
dtxn_store_heap_bump_raddr(const struct dtxn_table *t, enum dtxn_heap_kind h, dtxn_raddr_t at)
{
	const uint64_t *off;
	uint64_t areas;
	uint32_t size;
	int s;

	if (t == NULL)
		return 0;
	aux_heap(t, h, &size, &areas, &off);
	s = dtxn_store_stripe_of(t, at);
	return size == 0 || s < 0 ? 0 : DTXN_RADDR(store_stripe_mn(t, 0, (uint64_t)s), off[0]);
}

int
dtxn_store_heap_chunk(const struct dtxn_table *t, enum dtxn_heap_kind h, uint64_t old,
		      uint32_t n, uint32_t *first, uint32_t *end)
{
	const uint64_t *off;
	uint64_t areas;
	uint32_t size;

	if (t == NULL || n == 0 || first == NULL || end == NULL)
		return -EINVAL;
	aux_heap(t, h, &size, &areas, &off);
	if (size == 0)
		return -EINVAL;
	if (old >= areas)
		return -ENOSPC;
	*first = (uint32_t)(old + 1);
	*end = (uint32_t)(RTE_MIN(old + n, areas) + 1);
	return 0;
}
