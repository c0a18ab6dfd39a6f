/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CREST commit (crest.md §1, "Commit, per record"): validation
 * (validate.c), then one round in which each written record gets, on its
 * primary's QP and in this order, the WRITE of each changed cell (its
 * lines, each with the new version: EN + 1, TS_commit), the WRITE of its
 * ENs in the header, and the masked CAS that clears its lock bits; RDMA
 * applies WRs of one QP in order, so a reader that finds the bits clear
 * finds the cells and ENs written. Backups get the same cell and EN
 * WRITEs. Only the txn's own cells and ENs are written: other txns may
 * hold and write the record's other cells meanwhile.
 *
 * With parallel_commit=1 (default) the chain of each MN starts with the
 * txn's redo entry (redo.c), so the entry is in place on an MN before any
 * of the txn's updates there.
 *
 * TS_commit is the writer's txn id (doc/guides/crest.md, "Decisions"):
 * unique, so the fallback validation sees every update, and it names the
 * writer for the history checker.
 *
 * Inserts and deletes: the record's every cell and the bucket's lock
 * (lib/txn) are held; the whole record is written (an insert first
 * WRITEs its lock word with every cell bit set, so that no reader takes
 * the new record before it is complete), the bucket header's version is
 * bumped and its lock released, and the unlock leaves the deleted bit set
 * for a delete.
 */
#include <string.h>

#include "crest_private.h"

/* Sets the new version (EN + 1, TS_commit = txn id) of cells @p cells in record image @p rec. */
static void
commit_stamp(const struct dtxn_txn *t, const struct crest_layout *lay, void *rec, uint32_t cells)
{
	struct crest_hdr *h = rec;

	for (; cells != 0; cells &= cells - 1) {
		unsigned c = (unsigned)__builtin_ctz(cells);

		h->en[c]++;
		for (unsigned k = 0; k < lay->n_lines[c]; k++)
			*crest_line_ver(rec, lay, c, k) = CREST_VER(h->en[c], t->id);
	}
}

/* WRITEs of cells @p cells and then of the header ENs @p ens, from image @p rec to the record at @p ra. */
static void
commit_cells(struct dtxn_batch *b, const struct crest_layout *lay, const void *rec,
	     dtxn_raddr_t ra, uint32_t cells, uint32_t ens)
{
	uint32_t m;

	for (m = cells; m != 0; m &= m - 1) {
		unsigned c = (unsigned)__builtin_ctz(m);

		dtxn_batch_write(b, ra + lay->rec_off[c], (const char *)rec + lay->rec_off[c],
				 crest_cell_span(lay, c), false);
	}
	/* ENs: one WRITE per run of adjacent cells */
	for (m = ens; m != 0;) {
		unsigned lo = (unsigned)__builtin_ctz(m), hi = lo;

		while (hi + 1 < CREST_MAX_CELLS && (m & (UINT32_C(1) << (hi + 1))))
			hi++;
		dtxn_batch_write(b, ra + CREST_EN_OFF + 2 * lo,
				 (const char *)rec + CREST_EN_OFF + 2 * lo, 2 * (hi - lo + 1), false);
		m &= ~(((UINT32_C(2) << hi) - 1) & ~((UINT32_C(1) << lo) - 1));
	}
}

/* Insert or delete of item @p it: its record image, whole, as it will be written. */
static void
commit_whole_prepare(struct dtxn_txn *t, struct dtxn_item *it)
{
	struct crest_item *ci = crest_item_of(it);
	const struct crest_layout *lay = crest_layout_of(t, it);
	struct crest_hdr *h = crest_hdr_of(it);

	if (it->kind == DTXN_ITEM_DELETE) {
		h->slot.flags &= ~DTXN_SLOT_VALID;
	} else {
		h->slot.key = it->key;
		h->slot.table_id = it->table->def.id;
		h->slot.flags = DTXN_SLOT_VALID;
		crest_scatter(lay, h, it->value, ci->wr);
	}
	commit_stamp(t, lay, h, ci->wr);
	crest_false_stamp(t, it, h);
	h->lock = crest_lock_bits(ci->wr);
}

/* Insert or delete of item @p it: the whole record, the bucket header, the unlock. */
static int
commit_whole(struct dtxn_txn *t, struct dtxn_item *it, struct dtxn_batch *b)
{
	struct crest_coord *cc = crest_coord_of(t);
	struct crest_item *ci = crest_item_of(it);
	const struct dtxn_table *tab = it->table;
	struct crest_hdr *h = crest_hdr_of(it);
	const uint64_t all = crest_lock_bits(ci->wr) | it->lock_bits; /* cell=0: shadow bits */
	const bool del = it->kind == DTXN_ITEM_DELETE;
	void *bimg;

	bimg = dtxn_txn_backup_image(t, it, CREST_LOCK_OFF, del ? CREST_LOCK_DELETED : 0);
	if (bimg == NULL)
		return DTXN_ABORT(DTXN_ABORT_TOO_LARGE);
	if (!del) /* take the record before it turns valid */
		dtxn_batch_write(b, it->slot_raddr + CREST_LOCK_OFF, &h->lock, 8, false);
	dtxn_batch_write(b, it->slot_raddr, h, tab->slot_size, false);
	for (uint16_t r = 1; r < tab->n_replicas; r++)
		dtxn_batch_write(b, dtxn_store_replica_raddr(tab, r, it->slot_raddr), bimg,
				 tab->slot_size, false);
	if (it->flags & DTXN_ITEM_F_BLOCKED) {
		ci->bimg[0] = 0;
		ci->bimg[1] = it->bucket_version + 1;
		dtxn_batch_write_replicas(b, tab, it->block_raddr, ci->bimg, 16);
	}
	dtxn_batch_masked_cas(b, it->slot_raddr + CREST_LOCK_OFF, &cc->sink, 0, 0,
			      del ? CREST_LOCK_DELETED : 0, all | CREST_LOCK_DELETED, false);
	return DTXN_OK;
}

/* RW item @p it: its changed cells, their ENs, the unlock of its bits. */
static void
commit_rw(struct dtxn_txn *t, struct dtxn_item *it, struct dtxn_batch *b)
{
	struct crest_coord *cc = crest_coord_of(t);
	struct crest_item *ci = crest_item_of(it);
	const struct crest_layout *lay = crest_layout_of(t, it);
	const struct dtxn_table *tab = it->table;

	for (uint16_t r = 1; r < tab->n_replicas; r++)
		commit_cells(b, lay, it->slot, dtxn_store_replica_raddr(tab, r, it->slot_raddr),
			     ci->wr, ci->en_wr);
	commit_cells(b, lay, it->slot, it->slot_raddr, ci->wr, ci->en_wr);
	dtxn_batch_masked_cas(b, it->lock_raddr, &cc->sink, 0, 0, 0, it->lock_bits, false);
}

void
crest_writeback_add(struct dtxn_txn *t, struct dtxn_batch *b, const struct dtxn_item *it,
		    const void *img, uint32_t cells)
{
	const struct crest_layout *lay = crest_layout_of(t, it);
	const struct dtxn_table *tab = it->table;

	for (uint16_t r = 1; r < tab->n_replicas; r++)
		commit_cells(b, lay, img, dtxn_store_replica_raddr(tab, r, it->slot_raddr), cells,
			     cells);
	commit_cells(b, lay, img, it->slot_raddr, cells, cells);
}

/*
 * Every written record's image as it will be written: cells scattered,
 * versions stamped (local=1: a cached record's version was, at its block's
 * end).
 */
static void
commit_prepare(struct dtxn_txn *t)
{
	for (uint32_t i = 0; i < t->n_items; i++) {
		struct dtxn_item *it = &t->items[i];
		struct crest_item *ci = crest_item_of(it);

		if (ci->obj != NULL)
			continue;
		if (it->kind == DTXN_ITEM_RW) {
			crest_scatter(crest_layout_of(t, it), it->slot, it->value, ci->wr);
			commit_stamp(t, crest_layout_of(t, it), it->slot, ci->wr);
			ci->en_wr = ci->wr | crest_false_stamp(t, it, it->slot);
		} else if (it->kind != DTXN_ITEM_RO) {
			commit_whole_prepare(t, it);
		}
	}
}

/*
 * The write round: the redo entry (parallel_commit=1), then every written
 * record, one ordered chain per MN QP. Without localized execution each
 * record has one writer on this CN (the MN cell locks are the txn's own),
 * which is always its last writer: last-writer-wins (lww.c) decides only
 * once a record cache lets several local txns write one record.
 */
static int
commit_write_round(struct dtxn_txn *t)
{
	struct dtxn_addr_cache *ac = t->coord->worker->addr_cache;
	struct dtxn_batch b;
	int rc = DTXN_OK, left = 0;

	commit_prepare(t);
	dtxn_batch_init(&b, t->coord);
	if (crest_coord_of(t)->opts.parallel_commit)
		rc = crest_redo_add(t, &b);
	for (uint32_t i = 0; i < t->n_items && rc == DTXN_OK; i++) {
		struct dtxn_item *it = &t->items[i];

		if (crest_item_of(it)->obj != NULL)
			continue;
		if (it->kind == DTXN_ITEM_RW)
			commit_rw(t, it, &b);
		else if (it->kind != DTXN_ITEM_RO)
			rc = commit_whole(t, it, &b);
	}
	if (rc == DTXN_OK && crest_coord_of(t)->opts.local) /* the last local writers write back */
		left = crest_local_leave(t, &b, true);
	if (rc != DTXN_OK) {
		dtxn_batch_done(&b);
		return rc;
	}
	/* validated and posted (redo entry first on each MN): committed
	 * (recover.c); where posted WRs may die with the CN, once acknowledged
	 * (a batch lost on every MN leaves no entry to find) */
	rc = dtxn_batch_run_decide_acked(&b, t);
	if (rc != DTXN_OK && left != 0)
		/* the local objects it left hold other coordinators' committed
		 * versions this batch was to write back: not aborted while the
		 * CN lives on with them lost; it fences itself and parks */
		dtxn_coord_unfinished(t->coord);
	if (crest_coord_of(t)->opts.local) {
		crest_local_persisted(t); /* its versions may go to the MN (cache=cn) */
		crest_local_unpin(t);     /* its write-backs landed (cache=cn) */
	}
	if (rc != DTXN_OK)
		return rc;
	for (uint32_t i = 0; i < t->n_items; i++) {
		struct dtxn_item *it = &t->items[i];

		/* the commit chain released the record and bucket locks */
		it->flags &= ~(DTXN_ITEM_F_LOCKED | DTXN_ITEM_F_BLOCKED);
		if (it->kind == DTXN_ITEM_INSERT)
			dtxn_addr_cache_insert(ac, it->table->def.id, it->key, it->slot_raddr);
		else if (it->kind == DTXN_ITEM_DELETE)
			dtxn_addr_cache_invalidate(ac, it->table->def.id, it->key);
		if ((it->kind == DTXN_ITEM_INSERT || it->kind == DTXN_ITEM_DELETE) &&
		    crest_coord_of(t)->opts.local)
			crest_local_whole_done(t, it); /* the record cache follows */
	}
	return DTXN_OK;
}

int
crest_commit(struct dtxn_txn *t)
{
	const bool local = crest_coord_of(t)->opts.local;
	bool writes = false;
	int reason = DTXN_OK;

	for (uint32_t i = 0; i < t->n_items; i++)
		writes |= dtxn_item_writes(&t->items[i]);
	if (local) { /* the last block ends; committable only once every dependency is */
		reason = crest_local_block_end(t);
		if (reason == DTXN_OK)
			reason = crest_local_wait(t);
	}
	if (reason == DTXN_OK)
		reason = crest_validate(t);
	if (reason == DTXN_OK && writes)
		reason = commit_write_round(t);
	if (reason != DTXN_OK) {
		crest_release(t); /* and leaves the fence: lib/txn calls no crest_abort() */
		return reason;
	}
	if (local)
		crest_local_end(t, true);
	crest_fence_leave(t);
	return reason;
}

void
crest_abort(struct dtxn_txn *t)
{
	crest_release(t);
}
