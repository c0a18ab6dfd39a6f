/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * False aborts (CREST paper Fig. 3; doc/guides/crest.md, "False aborts"):
 * an abort on a conflict at a record's lock with a writer whose cells and
 * this txn's cells on that record were disjoint. Record-level CREST
 * (cell=0) takes, beside the record's lock bit, the shadow bits of the
 * cells cell-level CREST would lock (execute.c), so the lock word a
 * conflict returns names the holders' cells exactly; and a writer bumps,
 * beside the record's EN (en[0]), a shadow EN per cell it writes in the
 * header's otherwise unused en[1..19] (cell c: en[1 + min(c, 18)]), so a
 * validation that finds the record's EN changed tells whether any cell it
 * read changed. Cells 18 and 19 (and those merged into 19) share a shadow
 * EN: a conflict between them counts true (never a false one too many).
 */
#include <string.h>

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

/* Header EN indexes of the shadow ENs of the cells in shadow bits @p shadow. */
static uint32_t
false_ens(uint64_t shadow)
{
	uint32_t ens = 0;

	for (unsigned c = 0; c < CREST_MAX_CELLS; c++)
		if (shadow & CREST_SHADOW_BIT(c))
			ens |= UINT32_C(1) << (1 + RTE_MIN(c, (unsigned)CREST_MAX_CELLS - 2));
	return ens;
}

uint32_t
crest_false_stamp(const struct dtxn_txn *t, const struct dtxn_item *it, struct crest_hdr *h)
{
	uint64_t wr = it->lock_bits & CREST_SHADOW_MASK;
	uint32_t ens;

	if (crest_coord_of(t)->opts.cell != 0)
		return 0;
	if (it->kind == DTXN_ITEM_INSERT || it->kind == DTXN_ITEM_DELETE)
		wr = CREST_SHADOW_MASK;
	ens = false_ens(wr);
	for (uint32_t m = ens; m != 0; m &= m - 1)
		h->en[__builtin_ctz(m)]++;
	/* one run from en[0]: a single EN WRITE with the record's own */
	return ens == 0 ? 0 : (UINT32_C(2) << (31 - __builtin_clz(ens))) - 1;
}

void
crest_false_seen(const struct dtxn_txn *t, struct crest_item *ci, const struct crest_hdr *h)
{
	if (crest_coord_of(t)->opts.cell == 0)
		memcpy(&ci->en[1], &h->en[1], sizeof(ci->en) - sizeof(ci->en[0]));
}

void
crest_false_note_en(struct dtxn_txn *t, const struct dtxn_item *it, const struct crest_hdr *h)
{
	const struct crest_item *ci = crest_item_of(it);

	if (crest_coord_of(t)->opts.cell != 0)
		return;
	for (uint32_t m = false_ens(ci->shadow); m != 0; m &= m - 1)
		if (h->en[__builtin_ctz(m)] != ci->en[__builtin_ctz(m)])
			return;
	t->false_conflict = 1;
}
