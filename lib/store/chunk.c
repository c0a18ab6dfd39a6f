/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The CN side of a heap (doc/guides/store.md, "Delta heaps"): a
 * coordinator's chunk of one table's aux or delta heap, taken with one
 * FAA on the heap's bump word, from which it carves areas locally (the
 * paper's per-coordinator delta space, Motor §4.1-4.2), and the areas its
 * aborted txns give back. No WR here: the caller posts the FAA
 * (lib/txn: inserts' aux areas in locate.c, delta areas in aux.c).
 */
#include "store_private.h"

bool
dtxn_heap_chunk_take(struct dtxn_heap_chunk *c, uint32_t *n)
{
	if (c->n_free != 0) {
		*n = c->free[--c->n_free];
		return true;
	}
	if (c->next == c->end)
		return false;
	*n = c->next++;
	return true;
}

void
dtxn_heap_chunk_put(struct dtxn_heap_chunk *c, uint32_t n)
{
	if (c->n_free == DTXN_HEAP_CHUNK_FREE)
		c->lost++;
	else
		c->free[c->n_free++] = n;
}

void
dtxn_heap_chunk_refill(struct dtxn_heap_chunk *c, uint32_t first, uint32_t end)
{
	if (c->next == c->end) {
		c->next = first;
		c->end = end;
		return;
	}
	/* two txns of one round each took a chunk: keep the second's areas */
	for (; first != end; first++)
		dtxn_heap_chunk_put(c, first);
}
