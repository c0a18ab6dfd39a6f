/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Aux areas for inserts (doc/guides/store.md, "Aux areas"): each
 * coordinator takes areas of a table's aux heap a chunk at a time (one
 * FAA of cat->aux_chunk on the heap's bump word on the primary,
 * DTXN_LOC_INS_AUX in locate.c), or (dtxn_loc_ops.aux_share, no MN
 * atomic) takes a fixed share of the insert room once, and hands them to
 * its inserts into slots that have none. A slot keeps its area for good (deletes and
 * re-inserts reuse it), so nothing is ever freed to the MN; an aborted
 * txn gives the areas its inserts took back to the coordinator (their
 * slots were never written: Motor and Lotus write an insert's slot only
 * in their commit round, which does not abort once posted).
 */
#include <rte_common.h>

#include "txn_private.h"

/* Pushes area @p n onto @p h's free list; false if the list is full. */
static bool
aux_push(struct txn_aux_heap *h, uint32_t n)
{
	if (h->n_free == TXN_AUX_FREE)
		return false;
	h->free[h->n_free++] = n;
	return true;
}

bool
txn_aux_take(struct txn_coord *tc, const struct dtxn_table *t, uint32_t *aux)
{
	struct txn_aux_heap *h = &tc->aux[t->def.id];

	if (h->n_free != 0) {
		*aux = h->free[--h->n_free];
		return true;
	}
	if (h->next == h->end)
		return false;
	*aux = h->next++;
	return true;
}

void
txn_aux_refill(struct txn_coord *tc, const struct dtxn_table *t, uint32_t first, uint32_t end)
{
	struct txn_aux_heap *h = &tc->aux[t->def.id];

	if (h->next == h->end) {
		h->next = first;
		h->end = end;
		return;
	}
	/* two inserts of one round each took a chunk: keep the second's areas */
	for (; first != end; first++)
		if (!aux_push(h, first))
			h->lost++;
}

void
txn_aux_share(const struct dtxn_coord *c, const struct dtxn_table *t, uint64_t loaded,
	      uint32_t *first, uint32_t *end)
{
	uint32_t n = RTE_MAX(c->worker->db->cat.n_logs, 1u);
	uint64_t room = loaded < t->aux_areas ? t->aux_areas - loaded : 0, per = room / n;
	uint64_t at = loaded + 1 + (uint64_t)(c->gid % n) * per;

	*first = (uint32_t)at;
	*end = (uint32_t)(at + per);
}

void
txn_aux_put(struct txn_coord *tc, const struct dtxn_table *t, uint32_t aux)
{
	if (!aux_push(&tc->aux[t->def.id], aux))
		tc->aux[t->def.id].lost++;
}

void
txn_aux_end(struct dtxn_txn *t, bool committed)
{
	struct txn_coord *tc = txn_coord_of(t->coord);

	for (uint32_t i = 0; i < t->n_items; i++) {
		struct dtxn_item *it = &t->items[i];

		if ((it->flags & DTXN_ITEM_F_AUX_NEW) == 0)
			continue;
		it->flags &= ~DTXN_ITEM_F_AUX_NEW;
		if (!committed)
			txn_aux_put(tc, it->table, it->aux);
	}
}
