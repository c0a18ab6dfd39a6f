/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Motor's commit phase (paper §5.1 phase 3): after validation, one
 * doorbell batch writes every new version to every replica and unlocks
 * the primaries; the txn is committed when every replica has acked (the
 * last WR of each MN's chain is signaled; RC completes in order). No
 * undo or redo log: the old versions in the CVT and the attribute bar are
 * the undo information.
 *
 * Per written record and replica, in this order on the replica's QP
 * (§4.4 R1: Vpkg -> attributes -> Vcell):
 *   update/delete/re-insert  WRITE Vpkg, WRITE pre-images (if any),
 *                            WRITE TableID|flags|aux (the bar's first),
 *                            WRITE the Vcell array (every cell re-stamped)
 * A record's attribute bar is the delta area numbered as its Vpkg's
 * (DTXN_TABLE_F_DELTA_BY_SLOT): nothing to take; its first update that
 * keeps pre-images also WRITEs the slot header with DTXN_SLOT_DELTA (the
 * area is in use: the memory census counts it), after the pre-images.
 *   new-key insert           WRITE Vpkg, WRITE the whole slot (CVT)
 * then, on the primary, WRITE 0 to the record lock, and for inserts
 * WRITE {lock 0, version + 1} to the bucket header of every replica.
 *
 * Read-only txns commit without validation (the paper's "movable" start
 * time), after the recheck of any read that saw a lock (validate.c).
 */
#include <string.h>

#include "motor_private.h"

static const uint64_t g_zero;

/* New-key insert: a fresh CVT whose only version is ours (in a free slot,
 * or over another key's deleted record, whose anchors it moves on from). */
static void
commit_insert(struct dtxn_txn *t, struct dtxn_item *it, struct dtxn_batch *b)
{
	const struct dtxn_table *tab = it->table;
	struct motor_cvt *cvt = motor_cvt_of(it->slot);
	uint8_t *vpkg = motor_local_vpkg(it);
	uint32_t i, n = motor_vnum(tab);
	uint8_t anchor = 1;

	if (motor_item_of(it)->reuse)
		anchor = (uint8_t)(motor_cvt_anchor(tab, cvt) + 1);
	cvt->hdr.key = it->key;
	cvt->hdr.table_id = tab->def.id;
	/* a slot keeps its areas, and a bar in use stays so (exe_ins_slot()) */
	cvt->hdr.flags = DTXN_SLOT_VALID | (cvt->hdr.flags & DTXN_SLOT_DELTA);
	cvt->hdr.aux = it->aux; /* the slot's area, or a new one (lib/txn) */
	cvt->lock = 0;
	memset(cvt->cells, 0, (size_t)n * MOTOR_CELL_SIZE);
	cvt->cells[0].valid = 1;
	cvt->cells[0].flags = MOTOR_CELL_INSERT;
	cvt->cells[0].version = t->cc[MOTOR_TS_COMMIT];
	cvt->cells[0].writer = t->id;
	for (i = 0; i < n; i++)
		cvt->cells[i].sa = cvt->cells[i].ea = anchor;
	vpkg[0] = anchor;
	vpkg[motor_vpkg_size(tab) - 1] = anchor;
	dtxn_batch_write_replicas(b, tab, motor_vpkg_raddr(it), vpkg,
				  motor_vpkg_size(tab));
	dtxn_batch_write_replicas(b, tab, it->slot_raddr, cvt, tab->slot_size);
}

/* Update, delete or re-insert of a CVT read under our lock. */
static int
commit_version(struct dtxn_txn *t, struct dtxn_item *it, struct dtxn_batch *b)
{
	const struct dtxn_table *tab = it->table;
	struct motor_item *mi = motor_item_of(it);
	struct motor_cvt *cvt = motor_cvt_of(it->slot);
	uint8_t *vpkg = motor_local_vpkg(it), *seg = NULL, anchor;
	struct motor_cell nc;
	uint32_t len, start;
	unsigned cell;

	memset(&nc, 0, sizeof(nc));
	nc.version = t->cc[MOTOR_TS_COMMIT];
	nc.writer = t->id;
	if (it->kind == DTXN_ITEM_DELETE) {
		/* the value stays; the new version says the key is gone */
		memcpy(it->value, mi->pre, tab->def.value_size);
		nc.flags = MOTOR_CELL_TOMB;
	} else {
		/* only the cells the txn declared it writes change (the others
		 * keep the bytes read); the changed ones get pre-images */
		uint32_t keep = dtxn_table_cells_all(&tab->def) & ~it->wr_cells;

		if (keep != 0)
			dtxn_table_cells_copy(&tab->def, keep, mi->pre, it->value);
		nc.bitmap = dtxn_table_cells_diff(&tab->def, it->wr_cells, mi->pre, it->value);
	}
	anchor = (uint8_t)(motor_cvt_anchor(tab, cvt) + 1);
	(void)motor_gc_install(tab, cvt->cells, &nc, anchor, &cell, &start);
	/* what the bar keeps: nothing if the pre-images did not fit it (gc.c) */
	len = motor_seg_len(tab, cvt->cells[cell].bitmap);
	if (len != 0) {
		seg = dtxn_txn_alloc(t, len);
		if (seg == NULL)
			return DTXN_ABORT(DTXN_ABORT_TOO_LARGE);
		(void)dtxn_table_cells_pack(&tab->def, cvt->cells[cell].bitmap, mi->pre, seg);
	}
	vpkg[0] = anchor;
	vpkg[motor_vpkg_size(tab) - 1] = anchor;
	dtxn_batch_write_replicas(b, tab, motor_vpkg_raddr(it), vpkg,
				  motor_vpkg_size(tab));
	if (len != 0)
		dtxn_batch_write_replicas(b, tab, motor_bar_raddr(it) + start, seg, len);
	if (len != 0 && !(cvt->hdr.flags & DTXN_SLOT_DELTA)) {
		/* the bar's first pre-images: the slot says its delta area is
		 * in use (TableID, flags, aux: the same on every replica) */
		cvt->hdr.flags |= DTXN_SLOT_DELTA;
		dtxn_batch_write_replicas(b, tab, it->slot_raddr + MOTOR_HDR_FLAGS_OFF,
					  (const uint8_t *)cvt + MOTOR_HDR_FLAGS_OFF,
					  DTXN_SLOT_HDR_SIZE - MOTOR_HDR_FLAGS_OFF);
	}
	dtxn_batch_write_replicas(b, tab, it->slot_raddr + MOTOR_CELLS_OFF, cvt->cells,
				  motor_vnum(tab) * MOTOR_CELL_SIZE);
	return DTXN_OK;
}

/* The largest deletion version whose slot an insert into the bucket at
 * @p bucket took over (0: none): the bucket's new reclaim watermark. */
static uint64_t
commit_watermark(const struct dtxn_txn *t, dtxn_raddr_t bucket)
{
	uint64_t wm = 0;
	uint32_t i;

	for (i = 0; i < t->n_items; i++) {
		const struct dtxn_item *it = &t->items[i];
		const struct motor_item *mi = motor_item_of(it);

		if (it->kind == DTXN_ITEM_INSERT && mi->reuse && it->bucket_raddr == bucket)
			wm = RTE_MAX(wm, mi->tomb);
	}
	return wm;
}

static int
commit_round(struct dtxn_txn *t)
{
	struct dtxn_addr_cache *ac = t->coord->worker->addr_cache;
	struct dtxn_batch b;
	uint32_t i;
	int reason = DTXN_OK;

	dtxn_batch_init(&b, t->coord);
	for (i = 0; i < t->n_items && reason == DTXN_OK; i++) {
		struct dtxn_item *it = &t->items[i];

		if (!dtxn_item_writes(it))
			continue;
		if (it->kind == DTXN_ITEM_INSERT && !motor_item_of(it)->reinsert)
			commit_insert(t, it, &b);
		else
			reason = commit_version(t, it, &b);
	}
	/* after the data, on the same QPs: the unlocks; an insert's bucket
	 * header gets {lock 0, version + 1} on every replica */
	for (i = 0; i < t->n_items && reason == DTXN_OK; i++) {
		struct dtxn_item *it = &t->items[i];
		struct motor_item *mi = motor_item_of(it);

		if (it->flags & DTXN_ITEM_F_LOCKED)
			dtxn_batch_write(&b, it->lock_raddr, &g_zero, 8, false);
		if (it->flags & DTXN_ITEM_F_BLOCKED) {
			uint64_t wm = commit_watermark(t, it->block_raddr);

			mi->bimg[0] = 0;
			mi->bimg[1] = it->bucket_version + 1;
			mi->bimg[2] = RTE_MAX(mi->bimg[2], wm);
			/* {lock, version}, and the watermark when a slot was reused */
			dtxn_batch_write_replicas(&b, it->table, it->block_raddr, mi->bimg,
						  wm != 0 ? 3 * sizeof(uint64_t) : 2 * sizeof(uint64_t));
		}
	}
	if (reason != DTXN_OK) {
		dtxn_batch_done(&b);
		return reason;
	}
	/* once a chain is posted, its MN gets it: committed (recover.c).
	 * Decided before the first chain's doorbell, since a CN killed
	 * between two chains' doorbells left the first applied and their
	 * records unlocked: survivors may read and overwrite its versions
	 * before the recovery looks; the recovery completes the records it
	 * still holds from the replicas that got them (roll forward). One
	 * killed before the first doorbell still holds its locks, with its
	 * version on no replica, and the recovery lists it undone (recover.c:
	 * rec_apply() with oplog=mn, cn_verdicts() with oplog=cn) */
	reason = dtxn_batch_run_decide_early(&b, t);
	if (reason != DTXN_OK)
		return reason;
	for (i = 0; i < t->n_items; i++) {
		struct dtxn_item *it = &t->items[i];

		it->flags &= ~(DTXN_ITEM_F_LOCKED | DTXN_ITEM_F_BLOCKED);
		if (it->kind == DTXN_ITEM_INSERT)
			dtxn_addr_cache_insert(ac, it->table->def.id, it->key, it->slot_raddr);
	}
	return DTXN_OK;
}

int
motor_commit(struct dtxn_txn *t)
{
	bool has_write = false, has_read = false;
	uint32_t i;
	int reason = DTXN_OK;

	for (i = 0; i < t->n_items; i++) {
		if (dtxn_item_writes(&t->items[i]))
			has_write = true;
		else
			has_read = true;
	}
	if (!has_write) {
		/* read-only: a snapshot at T_start, no validation, no locks */
		if (t->cc[MOTOR_TX_FLAGS] & MOTOR_TX_SIGHTED)
			reason = motor_recheck(t, true);
		return reason;
	}
	if (dtxn_txn_isolation(t) == DTXN_ISO_SI && (t->cc[MOTOR_TX_FLAGS] & MOTOR_TX_SIGHTED))
		reason = motor_recheck(t, false); /* we hold locks: do not wait */
	if (reason == DTXN_OK)
		reason = motor_timestamp(t, &t->cc[MOTOR_TS_COMMIT]);
	/* test aid --debug-weaken skip-read-validation: SR without validation */
	if (reason == DTXN_OK && dtxn_txn_isolation(t) == DTXN_ISO_SR && has_read &&
	    !dtxn_txn_weakened(t, DTXN_DEBUG_SKIP_READ_VALIDATION))
		reason = motor_validate(t);
	if (reason == DTXN_OK)
		reason = commit_round(t);
	if (reason != DTXN_OK)
		motor_release(t);
	return reason;
}

void
motor_abort(struct dtxn_txn *t)
{
	motor_release(t);
}
