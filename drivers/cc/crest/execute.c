/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CREST execution phase (crest.md §1, Table 2): lib/txn's locating steps
 * (locate.c) with CREST's record: a read item is one READ of the record;
 * an RW item locks the cells it writes with one masked CAS on the lock
 * word (dtxn_item.lock_bits, MSB = cell 0) and READs the record behind it
 * on the same QP; a delete locks every cell (and its bucket); an insert
 * takes a free slot under its bucket lock. Every record read must pass
 * the snapshot rule of Fig. 7 for the cells the txn reads: none locked by
 * another txn (else abort: no waiting), and the header's EN of each equal
 * to the EN in each of its lines (else the READ overlapped a commit: read
 * it again). The cells read are then gathered into the contiguous value
 * the application sees.
 */
#include <string.h>

#include "crest_private.h"

/* Sets item @p i up: its CREST cells, the lock bits it takes, its history record. */
static void
exe_prepare(struct dtxn_txn *t, uint32_t i)
{
	struct dtxn_item *it = &t->items[i];
	struct crest_item *ci = crest_item_of(it);
	const struct crest_layout *lay = crest_layout_of(t, it);
	const uint32_t all = (uint32_t)((UINT64_C(1) << lay->n_cells) - 1);

	switch (it->kind) {
	case DTXN_ITEM_RO:
		ci->rd = crest_cells_of(&it->table->def, lay, it->rd_cells);
		ci->wr = 0;
		break;
	case DTXN_ITEM_RW:
		ci->rd = crest_cells_of(&it->table->def, lay, it->rd_cells);
		ci->wr = crest_cells_of(&it->table->def, lay, it->wr_cells);
		it->lock_bits = crest_lock_bits(ci->wr);
		break;
	case DTXN_ITEM_DELETE:
		ci->rd = all;
		ci->wr = all;
		it->lock_bits = crest_lock_bits(all);
		break;
	default: /* insert: the record is taken under its bucket lock */
		ci->rd = 0;
		ci->wr = all;
		break;
	}
	ci->vers.rd = ci->rd;
	ci->vers.wr = ci->wr;
	it->cell_vers = &ci->vers;
	if (crest_coord_of(t)->opts.cell == 0) { /* the cells it would lock (false_abort.c) */
		ci->shadow = crest_shadow_bits(&it->table->def, it->rd_cells | it->wr_cells);
		if (it->lock_bits != 0)
			it->lock_bits |= crest_shadow_bits(&it->table->def,
					  it->kind == DTXN_ITEM_DELETE ? DTXN_CELLS_ALL : it->wr_cells);
	}
}

int
crest_snapshot_take(struct dtxn_txn *t, uint32_t i, uint32_t cells, uint64_t foreign,
		    bool *again)
{
	struct dtxn_item *it = &t->items[i];
	int rc;

	*again = false;
	if (dtxn_txn_weakened(t, DTXN_DEBUG_SKIP_LOCK_CHECK)) /* test aid */
		foreign = 0;
	rc = crest_snapshot_check(crest_layout_of(t, it), crest_hdr_of(it), cells, foreign);
	if (rc == DTXN_ABORT(DTXN_ABORT_VALIDATION)) { /* torn: read it again */
		*again = true;
		return dtxn_loc_reread(t, i, CREST_MAX_REREAD);
	}
	if (rc == DTXN_ABORT(DTXN_ABORT_LOCKED_READ))
		crest_false_note(t, it, foreign);
	return rc;
}

/*
 * The record image in it->slot holds the key: check the snapshot rule for
 * the cells read, note what was seen, gather the value. Lock bits the
 * txn holds on the record (crest_own_bits()) are its own.
 */
static int
exe_take(struct dtxn_txn *t, uint32_t i)
{
	struct dtxn_item *it = &t->items[i];
	struct crest_item *ci = crest_item_of(it);
	const struct crest_layout *lay = crest_layout_of(t, it);
	const struct crest_hdr *h = crest_hdr_of(it);
	bool again;
	int rc;

	if (ci->obj != NULL) /* local=1: through the record cache */
		return crest_local_take(t, i);
	rc = crest_snapshot_take(t, i, ci->rd, h->lock & ~crest_own_bits(t, it), &again);
	if (rc != DTXN_OK || again)
		return rc;
	for (uint32_t m = ci->rd; m != 0; m &= m - 1) {
		unsigned c = (unsigned)__builtin_ctz(m);

		ci->en[c] = h->en[c];
		ci->vers.ver[c] = CREST_VER_TS(*crest_line_ver(it->slot, lay, c, 0));
	}
	crest_false_seen(t, ci, h);
	crest_gather(lay, h, it->value, ci->rd);
	it->version = ci->vers.ver[__builtin_ctz(ci->rd | 1)];
	it->flags = (it->flags | DTXN_ITEM_F_EXISTS) & ~DTXN_ITEM_F_TOMB;
	ci->loc.step = DTXN_LOC_DONE;
	return DTXN_OK;
}

/* A delete also takes its bucket's lock and reads the bucket header. */
static void
exe_lock_issue(struct dtxn_txn *t, uint32_t i, struct dtxn_batch *b)
{
	dtxn_loc_delete_issue(t, i, b, &crest_item_of(&t->items[i])->bhdr);
}

/* RW / delete: its cells are locked and it->slot was READ behind the masked CAS. */
static int
exe_locked(struct dtxn_txn *t, uint32_t i)
{
	struct dtxn_item *it = &t->items[i];

	if (it->kind == DTXN_ITEM_DELETE)
		it->bucket_version = crest_item_of(it)->bhdr.version;
	return exe_take(t, i);
}

/* Insert: the free slot's image (its ENs go on from there, commit.c). */
static int
exe_ins_slot(struct dtxn_txn *t, uint32_t i, const void *slot)
{
	struct dtxn_item *it = &t->items[i];

	memcpy(it->slot, slot, it->table->slot_size);
	return DTXN_OK;
}

/* A free slot no commit is writing: no cell locked (the deleted bit may be set). */
static bool
exe_slot_free(const struct dtxn_table *tab, const void *slot)
{
	RTE_SET_USED(tab);
	return (((const struct crest_hdr *)slot)->lock & ~CREST_LOCK_DELETED) == 0;
}

static const struct dtxn_loc_ops exe_loc = {
	.item_size = sizeof(struct crest_item),
	.lock_off = CREST_LOCK_OFF,
	.prepare = exe_prepare,
	.slot_free = exe_slot_free,
	.read = exe_take,
	.lock_issue = exe_lock_issue,
	.locked = exe_locked,
	.ins_slot = exe_ins_slot,
};

/* local=1: the items take their local objects and locks before the rounds (local.c). */
static int
exe_local(struct dtxn_txn *t)
{
	const uint32_t first = t->n_fetched;

	int rc;

	for (uint32_t i = first; i < t->n_items; i++)
		if (dtxn_loc_prepare(t, i, &exe_loc) == NULL)
			return DTXN_ABORT(DTXN_ABORT_TOO_LARGE);
	rc = crest_local_prepare(t, first);
	return rc != DTXN_OK ? rc : dtxn_loc_rounds(t, &exe_loc);
}

int
crest_execute(struct dtxn_txn *t)
{
	int reason = crest_coord_of(t)->opts.local ? exe_local(t) : dtxn_loc_execute(t, &exe_loc);

	if (reason == DTXN_ABORT(DTXN_ABORT_LOCK_CONFLICT))
		crest_false_note_lock(t);
	if (reason != DTXN_OK)
		crest_release(t);
	return reason;
}

void
crest_release(struct dtxn_txn *t)
{
	if (crest_coord_of(t)->opts.local) {
		struct dtxn_batch b;

		dtxn_batch_init(&b, t->coord);
		if (crest_local_leave(t, &b, false) != 0) {
			/* the others' committed cells, then unlocks: the objects
			 * were left, so a batch that does not land loses commits
			 * counted as done while the CN lives on: it fences itself
			 * and parks instead (its recoverer decides) */
			if (dtxn_batch_run_reason(&b) != DTXN_OK)
				dtxn_coord_unfinished(t->coord);
		} else
			dtxn_batch_done(&b);
		crest_local_unpin(t); /* cache=cn: the write-backs landed */
		crest_local_end(t, false);
	}
	dtxn_txn_release_held(t);
	/* the txn is over: a recovery's fence no longer waits for it (every
	 * failed step ends here, and lib/txn calls no crest_abort() after one) */
	crest_fence_leave(t);
}

int
crest_block_end(struct dtxn_txn *t)
{
	int rc;

	if (!crest_coord_of(t)->opts.local)
		return DTXN_OK;
	rc = crest_local_block_end(t);
	if (rc != DTXN_OK)
		crest_release(t);
	return rc;
}
