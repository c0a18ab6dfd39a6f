/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Aux heaps (doc/guides/store.md, "Aux areas"): where an area lives on
 * each replica, the bump word a coordinator FAAs, and the chunk a FAA
 * hands out. The allocator that uses them runs on the CNs (lib/txn).
 */
#include <errno.h>

#include "store_private.h"

dtxn_raddr_t
dtxn_store_aux_area_raddr(const struct dtxn_table *t, uint16_t r, uint32_t aux)
{
	if (t == NULL || t->aux_size == 0 || r >= t->n_replicas || aux == 0 || aux > t->aux_areas)
		return 0;
	return DTXN_RADDR(t->mn[r], t->aux_off[r] + store_aux_area_off(t, aux));
}

dtxn_raddr_t
dtxn_store_aux_bump_raddr(const struct dtxn_table *t)
{
	if (t == NULL || t->aux_size == 0 || t->aux_areas == 0)
		return 0;
	return DTXN_RADDR(t->mn[0], t->aux_off[0]);
}

int
dtxn_store_aux_chunk(const struct dtxn_table *t, uint64_t old, uint32_t n, uint32_t *first,
		     uint32_t *end)
{
	if (t == NULL || t->aux_size == 0 || n == 0 || first == NULL || end == NULL)
		return -EINVAL;
	if (old >= t->aux_areas)
		return -ENOSPC;
	*first = (uint32_t)(old + 1);
	*end = (uint32_t)(RTE_MIN(old + n, t->aux_areas) + 1);
	return 0;
}
