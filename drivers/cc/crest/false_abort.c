/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * False aborts (CREST paper Fig. 3; doc/guides/crest.md, "False aborts"):
 * an abort on a conflict at a record's lock with a writer whose cells and
 * this txn's cells on that record were disjoint. Record-level CREST
 * (cell=0) takes, beside the record's lock bit, the shadow bits of the
 * cells cell-level CREST would lock (execute.c), so the lock word a
 * conflict returns names the holders' cells exactly.
 */
#include "crest_private.h"

uint64_t
crest_shadow_bits(const struct dtxn_table_def *def, uint32_t cols)
{
	unsigned n = dtxn_table_n_cells(def);
	uint64_t bits = 0;

	for (unsigned c = 0; c < n; c++)
		if (cols & DTXN_CELL(c))
			bits |= CREST_SHADOW_BIT(RTE_MIN(c, (unsigned)CREST_MAX_CELLS - 1));
	return bits;
}

void
crest_false_note(struct dtxn_txn *t, const struct dtxn_item *it, uint64_t held)
{
	const uint64_t others = held & CREST_SHADOW_MASK;

	if (crest_coord_of(t)->opts.cell != 0 || others == 0)
		return; /* cell-level: no false lock conflict; or the holder's cells unknown */
	if ((others & crest_item_of(it)->shadow) == 0)
		t->false_conflict = 1;
}

void
crest_false_note_lock(struct dtxn_txn *t)
{
	for (uint32_t i = 0; i < t->n_items; i++) {
		const struct dtxn_item *it = &t->items[i];
		const struct dtxn_loc *l = &crest_item_of(it)->loc;

		if (it->lock_bits == 0 || (it->flags & DTXN_ITEM_F_LOCKED) ||
		    l->lock_old == DTXN_LOC_CAS_UNSET || (l->lock_old & it->lock_bits) == 0)
			continue;
		crest_false_note(t, it, l->lock_old & ~crest_own_bits(t, it));
		return;
	}
}
