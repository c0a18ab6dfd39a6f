/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Motor's execution phase (paper §5.1, phase 1), one round of doorbell
 * batches over all MNs at a time, each item a small state machine: lib/txn's
 * locating steps (locate.c: cached CVT, bucket chain, {CAS lock, READ CVT},
 * inserts under the bucket lock) and Motor's own (Vpkg, pre-images):
 *
 *   round 1: T_start from the TSO (first execute only), then
 *            RO item, cached address    READ CVT
 *            RW/delete, cached          {CAS lock, READ CVT}
 *            address-cache miss         READ bucket (CVTs live in the index)
 *            insert                     {CAS bucket lock, READ home bucket}
 *   round 2: RO item                    READ pre-images (of its cells), READ Vpkg
 *            RW/delete, cached          READ Vpkg
 *            RW/delete found in round 1 {CAS lock, READ CVT, READ Vpkg}
 *
 * Version choice: an RO item reads the largest version < T_start (its
 * pre-images rebuild it from the newest value); an RW or delete item must
 * see, under its lock, a newest version < T_start (else a txn committed
 * after our snapshot: abort, under SR the paper's early abort, under SI
 * first-committer-wins). Under SR a read-write txn also aborts early when
 * an RO item shows a version > T_start (validation would fail anyway).
 *
 * Lock-free reads see a consistent CVT when every Vcell carries the same
 * anchors, and a value consistent with it when the Vpkg's anchors equal
 * them too (§4.4; the writer stamps every cell, gc.c). Pre-images are
 * READ before the Vpkg in the same batch: a commit that changed them
 * wrote the Vpkg first, so the Vpkg read after them shows a new anchor.
 * A read that fails the check is re-read from its CVT.
 *
 * A read that sees another txn's lock (on its CVT, or on the bucket of
 * an absent key) may miss an in-flight commit whose T_commit < T_start;
 * it is marked and checked again before commit (validate.c).
 *
 * Locks are held only when their CAS returned 0 (DTXN_ITEM_F_LOCKED /
 * F_BLOCKED, lock words in item->lock_raddr / block_raddr); on abort
 * exactly those are released (dtxn_txn_unlock_held()).
 *
 * An RW/delete item found through its bucket (not at a cached address)
 * reads its Vpkg in its lock round (round 2 above); a cached one in the
 * round after (MOTOR_S_VPKG).
 *
 * Deleted slots are reused (doc/guides/motor.md, "Slot reuse"): an insert
 * whose home bucket has no free slot may take the slot of a record whose
 * newest version is a tombstone committed before its T_start; it locks
 * that record ({CAS, READ CVT, READ Vpkg}, as a re-insert does) and at
 * commit writes a fresh CVT for its key and raises the bucket's reclaim
 * watermark to the tombstone's version. A reader whose key is missing
 * from its home bucket and whose T_start is at or below the watermark
 * may be missing a record its snapshot holds: it aborts (version_gone),
 * as a reader of a garbage-collected version does.
 */
#include <string.h>

#include "motor_private.h"

static const struct dtxn_loc_ops exe_loc;

static inline bool
exe_sr_rw(const struct dtxn_txn *t)
{
	return dtxn_txn_isolation(t) == DTXN_ISO_SR && t->mode == DTXN_TXN_RW;
}

/* A read saw another txn's lock: check it again before a snapshot commit. */
static void
exe_sighted(struct dtxn_txn *t, struct motor_item *mi)
{
	mi->sighted = 1;
	t->cc[MOTOR_TX_FLAGS] |= MOTOR_TX_SIGHTED;
}

/* ------------------------------------------------------------------ */
/* Issuing                                                            */
/* ------------------------------------------------------------------ */

/* READs of the pre-images an RO item needs (newer versions that changed a
 * cell it reads), then of its Vpkg. */
static void
exe_issue_value(struct dtxn_item *it, struct motor_item *mi, struct dtxn_batch *b)
{
	const struct dtxn_table *tab = it->table;
	const struct motor_cvt *cvt = motor_cvt_of(it->slot);
	uint32_t n = motor_vnum(tab), i;

	for (i = 0; i < n; i++) {
		const struct motor_cell *c = &cvt->cells[i];
		uint32_t len;

		if (!c->valid || c->version <= cvt->cells[mi->cell].version ||
		    (c->bitmap & it->rd_cells) == 0)
			continue;
		len = motor_seg_len(tab, c->bitmap);
		if (len != 0)
			dtxn_batch_read(b, motor_bar_raddr(it) + c->start_off,
					motor_local_bar(it) + c->start_off, len, true);
	}
	dtxn_batch_read(b, motor_vpkg_raddr(it), motor_local_vpkg(it),
			motor_vpkg_size(tab), true);
}

/* Where a written item's Vpkg is read: its local image, but a re-insert's
 * value buffer is the application's (filled before or after execute). */
static uint8_t *
exe_vpkg_in(const struct dtxn_item *it, const struct motor_item *mi)
{
	return mi->vpkg_in != NULL ? mi->vpkg_in : motor_local_vpkg(it);
}

/* A buffer for a Vpkg image read beside the local one: the image at
 * MOTOR_VPKG_LOCAL_OFF, as in the local copy. NULL: no room. */
static uint8_t *
exe_vpkg_buf(struct dtxn_txn *t, const struct dtxn_table *tab)
{
	uint8_t *buf = dtxn_txn_alloc(t, motor_vpkg_local_size(tab));

	return buf == NULL ? NULL : buf + MOTOR_VPKG_LOCAL_OFF;
}

/* READ of a written item's Vpkg. */
static void
exe_issue_vpkg(struct dtxn_item *it, struct motor_item *mi, struct dtxn_batch *b)
{
	const struct dtxn_table *tab = it->table;

	dtxn_batch_read(b, motor_vpkg_raddr(it), exe_vpkg_in(it, mi),
			motor_vpkg_size(tab), true);
}

/* Lock round: an item found through its bucket reads its Vpkg with it. */
static void
exe_lock_issue(struct dtxn_txn *t, uint32_t i, struct dtxn_batch *b)
{
	struct dtxn_item *it = &t->items[i];

	if ((it->flags & DTXN_ITEM_F_CACHED) == 0)
		exe_issue_vpkg(it, motor_item_of(it), b);
}

/* Motor's own steps. */
static int
exe_issue_step(struct dtxn_txn *t, uint32_t i, struct dtxn_batch *b)
{
	struct dtxn_item *it = &t->items[i];
	struct motor_item *mi = motor_item_of(it);

	if (mi->loc.step == MOTOR_S_VPKG)
		exe_issue_vpkg(it, mi, b);
	else
		exe_issue_value(it, mi, b);
	return DTXN_OK;
}

/* ------------------------------------------------------------------ */
/* Completion                                                         */
/* ------------------------------------------------------------------ */

/* RO item with its CVT in it->slot: choose the version, plan the value READs. */
static int
exe_read_cvt(struct dtxn_txn *t, uint32_t i)
{
	struct dtxn_item *it = &t->items[i];
	struct motor_item *mi = motor_item_of(it);
	const struct motor_cvt *cvt = motor_cvt_of(it->slot);
	const uint64_t ts = t->cc[MOTOR_TS_START];
	enum motor_pick res;
	int idx;

	if (motor_cvt_anchor(it->table, cvt) < 0)
		/* a commit was writing the Vcells */
		return dtxn_loc_reread(t, i, MOTOR_READ_RETRIES);
	if (dtxn_txn_lock_foreign(t, cvt->lock))
		exe_sighted(t, mi);
	if (exe_sr_rw(t) && motor_cvt_has_newer(it->table, cvt, ts)) {
		motor_fa_newer(t, it, cvt, ts);
		return DTXN_ABORT(DTXN_ABORT_VALIDATION); /* early abort (SR) */
	}
	res = motor_cvt_pick(it->table, cvt, ts, &idx);
	if (res == MOTOR_PICK_GONE)
		return DTXN_ABORT(DTXN_ABORT_VERSION_GONE);
	mi->cell = idx;
	mi->seen = res == MOTOR_PICK_FOUND ? cvt->cells[idx].version : MOTOR_V_NONE;
	if (res == MOTOR_PICK_ABSENT || (cvt->cells[idx].flags & MOTOR_CELL_TOMB) != 0) {
		/* no record at the snapshot: inserted later, or deleted (a tombstone) */
		it->flags &= ~DTXN_ITEM_F_EXISTS;
		it->version = res == MOTOR_PICK_ABSENT ? 0 : cvt->cells[idx].writer;
		if (res != MOTOR_PICK_ABSENT)
			it->flags |= DTXN_ITEM_F_TOMB;
		mi->loc.step = DTXN_LOC_DONE;
		return DTXN_OK;
	}
	mi->loc.step = MOTOR_S_VALUE;
	return DTXN_OK;
}

/* RO item: pre-images and Vpkg read; check the anchors, rebuild the version. */
static int
exe_read_value(struct dtxn_txn *t, uint32_t i)
{
	struct dtxn_item *it = &t->items[i];
	struct motor_item *mi = motor_item_of(it);
	const struct dtxn_table *tab = it->table;
	const struct motor_cvt *cvt = motor_cvt_of(it->slot);
	uint8_t *vpkg = motor_local_vpkg(it), *newest;
	int a = motor_cvt_anchor(tab, cvt);

	if (a < 0 || vpkg[0] != (uint8_t)a || motor_vpkg_ea(tab, vpkg) != (uint8_t)a)
		/* the value moved on since the CVT was read */
		return dtxn_loc_reread(t, i, MOTOR_READ_RETRIES);
	if (motor_cvt_newest(tab, cvt) != mi->cell) {
		newest = dtxn_txn_alloc(t, tab->def.value_size);
		if (newest == NULL)
			return DTXN_ABORT(DTXN_ABORT_TOO_LARGE);
		memcpy(newest, vpkg + MOTOR_VPKG_VALUE_OFF, tab->def.value_size);
		motor_rebuild(tab, cvt, mi->cell, it->rd_cells, newest, motor_local_bar(it),
			      it->value);
	}
	it->version = cvt->cells[mi->cell].writer;
	it->flags |= DTXN_ITEM_F_EXISTS;
	mi->loc.step = DTXN_LOC_DONE;
	return DTXN_OK;
}

/* Keeps the value as read under the lock: the pre-images come from it. */
static int
exe_keep_pre(struct dtxn_txn *t, struct dtxn_item *it, struct motor_item *mi,
	     const uint8_t *value)
{
	if (mi->pre == NULL) {
		mi->pre = dtxn_txn_alloc(t, it->table->def.value_size);
		if (mi->pre == NULL)
			return DTXN_ABORT(DTXN_ABORT_TOO_LARGE);
	}
	memcpy(mi->pre, value, it->table->def.value_size);
	return DTXN_OK;
}

/* Lookup missed in a bucket: an insert into the home bucket may be
 * committing, or may have reused the slot of a record our snapshot holds. */
static int
exe_miss(struct dtxn_txn *t, uint32_t i)
{
	struct dtxn_item *it = &t->items[i];
	struct motor_item *mi = motor_item_of(it);
	const struct dtxn_bucket_hdr *bh = it->bucket;
	uint64_t reclaimed = dtxn_bucket_reclaimed(it->table, it->bucket);

	if (mi->loc.probe != 0)
		return DTXN_OK;
	if (dtxn_txn_lock_foreign(t, bh->lock))
		exe_sighted(t, mi);
	if (reclaimed != 0 && t->cc[MOTOR_TS_START] <= reclaimed)
		return DTXN_ABORT(DTXN_ABORT_VERSION_GONE);
	return DTXN_OK;
}

/* A slot an insert may take over: its record's newest version is a
 * deletion in our snapshot, and nobody holds its lock. */
static bool
exe_slot_reuse(const struct dtxn_txn *t, const struct dtxn_table *tab, const void *slot)
{
	const struct motor_cvt *cvt = slot;
	int n = motor_cvt_newest(tab, cvt);

	return n >= 0 && (cvt->cells[n].flags & MOTOR_CELL_TOMB) != 0 && cvt->lock == 0 &&
	       motor_cvt_anchor(tab, cvt) >= 0 && cvt->cells[n].version < t->cc[MOTOR_TS_START];
}

/* Insert takes a slot: keep its home bucket's header words for the commit. */
static int
exe_ins_slot(struct dtxn_txn *t, uint32_t i, const void *slot)
{
	struct dtxn_item *it = &t->items[i];
	struct motor_item *mi = motor_item_of(it);

	mi->bimg[2] = dtxn_bucket_reclaimed(it->table, it->bucket);
	/* the slot keeps its bar in use, if a row it held had one
	 * (commit_insert() writes the whole CVT) */
	motor_cvt_of(it->slot)->hdr.flags =
		((const struct motor_cvt *)slot)->hdr.flags & DTXN_SLOT_DELTA;
	return DTXN_OK;
}

/* Insert into a deleted record's slot: lock that record next round. */
static int
exe_ins_reuse(struct dtxn_txn *t, uint32_t i)
{
	struct dtxn_item *it = &t->items[i];
	struct motor_item *mi = motor_item_of(it);

	if (mi->vpkg_in == NULL) {
		mi->vpkg_in = exe_vpkg_buf(t, it->table);
		if (mi->vpkg_in == NULL)
			return DTXN_ABORT(DTXN_ABORT_TOO_LARGE);
	}
	mi->reuse = 1;
	mi->loc.step = DTXN_LOC_LOCK;
	return DTXN_OK;
}

/* RW/delete/re-insert: the Vpkg read under the lock. */
static int
exe_complete_vpkg(struct dtxn_txn *t, struct dtxn_item *it, struct motor_item *mi)
{
	const struct dtxn_table *tab = it->table;
	const struct motor_cvt *cvt = motor_cvt_of(it->slot);
	const uint8_t *vpkg = exe_vpkg_in(it, mi);
	int a = motor_cvt_anchor(tab, cvt);

	if (a < 0 || vpkg[0] != (uint8_t)a || motor_vpkg_ea(tab, vpkg) != (uint8_t)a)
		return DTXN_ABORT(DTXN_ABORT_INVISIBLE); /* cannot happen under our lock */
	if (it->kind != DTXN_ITEM_INSERT)
		it->flags |= DTXN_ITEM_F_EXISTS;
	mi->loc.step = DTXN_LOC_DONE;
	return exe_keep_pre(t, it, mi, vpkg + MOTOR_VPKG_VALUE_OFF);
}

/* RW/delete/re-insert: {CAS, READ CVT} came back, the lock held (and the
 * Vpkg with it if the item was found through its bucket). */
static int
exe_locked(struct dtxn_txn *t, uint32_t i)
{
	struct dtxn_item *it = &t->items[i];
	struct motor_item *mi = motor_item_of(it);
	const struct dtxn_table *tab = it->table;
	const struct motor_cvt *cvt = motor_cvt_of(it->slot);
	int n;

	n = motor_cvt_newest(tab, cvt);
	if (n < 0 || motor_cvt_anchor(tab, cvt) < 0)
		return DTXN_ABORT(DTXN_ABORT_INVISIBLE);
	/* under our lock the newest version is the one we overwrite; it must
	 * be in our snapshot (SR: early abort; SI: first committer wins) */
	if (cvt->cells[n].version >= t->cc[MOTOR_TS_START] &&
	    !dtxn_txn_weakened(t, DTXN_DEBUG_SKIP_WW_CHECK)) { /* test aid, SI */
		motor_fa_newer(t, it, cvt, t->cc[MOTOR_TS_START] - 1);
		return DTXN_ABORT(DTXN_ABORT_VALIDATION);
	}
	if (it->kind == DTXN_ITEM_INSERT) {
		if ((cvt->cells[n].flags & MOTOR_CELL_TOMB) == 0)
			return DTXN_ABORT(DTXN_ABORT_EXISTS);
	} else if ((cvt->cells[n].flags & MOTOR_CELL_TOMB) != 0) {
		return DTXN_ABORT(DTXN_ABORT_NOT_FOUND); /* deleted */
	}
	mi->cell = n;
	mi->seen = cvt->cells[n].version;
	it->version = cvt->cells[n].writer;
	if (mi->reuse) {
		/* another key's deleted record: ours did not exist */
		mi->tomb = cvt->cells[n].version;
		it->version = 0;
	} else if (it->kind == DTXN_ITEM_INSERT) {
		it->flags |= DTXN_ITEM_F_TOMB; /* over the deleter's version */
	}
	if (it->flags & DTXN_ITEM_F_CACHED) {
		mi->loc.step = MOTOR_S_VPKG; /* round 2 */
		return DTXN_OK;
	}
	return exe_complete_vpkg(t, it, mi); /* it came in the same round */
}

/*
 * Insert whose key has a CVT in the bucket chain: a re-insert if its
 * newest version is a tombstone (checked under the record lock next round;
 * the bucket lock stays held until commit, which bumps its version).
 */
static int
exe_ins_found(struct dtxn_txn *t, uint32_t i, unsigned idx)
{
	struct dtxn_item *it = &t->items[i];
	struct motor_item *mi = motor_item_of(it);
	const struct dtxn_table *tab = it->table;
	const struct motor_cvt *c = dtxn_store_bucket_slot(tab, it->bucket, idx);
	int n = motor_cvt_newest(tab, c);

	if (n >= 0 && (c->cells[n].flags & MOTOR_CELL_TOMB) == 0)
		return DTXN_ABORT(DTXN_ABORT_EXISTS);
	it->slot_raddr = dtxn_store_slot_raddr(tab, mi->loc.braddr[mi->loc.probe], idx);
	memcpy(it->slot, c, tab->slot_size);
	if (mi->vpkg_in == NULL) {
		mi->vpkg_in = exe_vpkg_buf(t, tab);
		if (mi->vpkg_in == NULL)
			return DTXN_ABORT(DTXN_ABORT_TOO_LARGE);
	}
	mi->reinsert = 1;
	mi->loc.slot_idx = -1;
	mi->loc.step = DTXN_LOC_LOCK;
	return DTXN_OK;
}

/* Motor's own steps came back. */
static int
exe_complete_step(struct dtxn_txn *t, uint32_t i)
{
	struct dtxn_item *it = &t->items[i];
	struct motor_item *mi = motor_item_of(it);

	if (mi->loc.step == MOTOR_S_VPKG)
		return exe_complete_vpkg(t, it, mi);
	return exe_read_value(t, i);
}

/* ------------------------------------------------------------------ */
/* Rounds                                                             */
/* ------------------------------------------------------------------ */

/* The operation log leads each round: before any CAS on each MN. */
static int
exe_prelude(struct dtxn_txn *t, struct dtxn_batch *b)
{
	uint32_t n = t->n_items - t->n_fetched, k = 0, i;
	dtxn_raddr_t *locks = NULL;
	uint32_t *owners = NULL;
	uint64_t mask = 0;

	for (i = t->n_fetched; i < t->n_items; i++) {
		dtxn_raddr_t lw;

		if (dtxn_loc_done(t, i))
			continue;
		lw = dtxn_loc_round_lock(t, i, &exe_loc);
		if (lw == 0)
			continue;
		if (locks == NULL) {
			locks = dtxn_txn_alloc(t, n * sizeof(*locks));
			owners = dtxn_txn_alloc(t, n * sizeof(*owners));
			if (locks == NULL || owners == NULL)
				return DTXN_ABORT(DTXN_ABORT_TOO_LARGE);
		}
		locks[k] = lw;
		owners[k++] = i;
		mask |= UINT64_C(1) << DTXN_RADDR_MN(lw);
	}
	return k != 0 ? motor_oplog_add(t, b, mask, locks, owners, k) : DTXN_OK;
}

/* Sets up Motor's fields of a new item. */
static void
exe_prepare(struct dtxn_txn *t, uint32_t i)
{
	struct motor_item *mi = motor_item_of(&t->items[i]);

	mi->cell = -1;
	mi->seen = MOTOR_V_NONE; /* what a read that finds no key saw */
}

static const struct dtxn_loc_ops exe_loc = {
	.item_size = sizeof(struct motor_item),
	.lock_off = MOTOR_LOCK_OFF,
	.prepare = exe_prepare,
	.prelude = exe_prelude,
	.read = exe_read_cvt,
	.miss = exe_miss,
	.lock_issue = exe_lock_issue,
	.locked = exe_locked,
	.ins_found = exe_ins_found,
	.ins_slot = exe_ins_slot,
	.slot_reuse = exe_slot_reuse,
	.ins_reuse = exe_ins_reuse,
	.issue = exe_issue_step,
	.complete = exe_complete_step,
};

int
motor_timestamp(struct dtxn_txn *t, uint64_t *ts)
{
	struct motor_coord *mc = t->coord->cc_priv;

	return dtxn_tso_txn_ts(motor_tso(t), t, &mc->req, ts);
}

int
motor_execute(struct dtxn_txn *t)
{
	int reason = DTXN_OK;

	if (t->cc[MOTOR_TS_START] == 0)
		reason = motor_timestamp(t, &t->cc[MOTOR_TS_START]);
	if (reason == DTXN_OK)
		reason = dtxn_loc_execute(t, &exe_loc);
	if (reason != DTXN_OK)
		motor_release(t);
	return reason;
}

void
motor_release(struct dtxn_txn *t)
{
	dtxn_txn_release_held(t);
}
