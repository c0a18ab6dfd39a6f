/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Motor's execution phase (paper §5.1, phase 1), one round of doorbell
 * batches over all MNs at a time, each item a small state machine:
 *
 *   round 1: T_start from the TSO (first execute only), then
 *            RO item, cached address    READ CVT
 *            RW/delete, cached          {CAS lock, READ CVT}
 *            address-cache miss         READ bucket (CVTs live in the index)
 *            insert                     {CAS bucket lock, READ home bucket}
 *   round 2: RO item                    READ pre-images, READ Vpkg
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
 */
#include <errno.h>
#include <string.h>

#include "motor_private.h"

static inline struct dtxn_addr_cache *
exe_cache(const struct dtxn_txn *t)
{
	return t->coord->worker->addr_cache;
}

static inline bool
exe_sr_rw(const struct dtxn_txn *t)
{
	return dtxn_txn_isolation(t) == DTXN_ISO_SR && t->mode == DTXN_TXN_RW;
}

/* A lock word held by another txn. */
static inline bool
exe_foreign(const struct dtxn_txn *t, uint64_t lock)
{
	return lock != 0 && lock != t->id;
}

/*
 * Another insert of this txn holds the lock of bucket @p braddr, or takes
 * it in this round (an earlier item: items are given their round's lock in
 * order, exe_round_lock()). A txn never conflicts with itself.
 */
static bool
exe_block_taken(const struct dtxn_txn *t, uint32_t self, dtxn_raddr_t braddr)
{
	uint32_t j;

	for (j = 0; j < t->n_items; j++) {
		const struct dtxn_item *o = &t->items[j];
		const struct motor_item *om = motor_item_of(o);

		if (j == self || om == NULL || o->kind != DTXN_ITEM_INSERT ||
		    o->block_raddr != braddr)
			continue;
		if ((o->flags & DTXN_ITEM_F_BLOCKED) != 0 ||
		    (j < self && om->state == MOTOR_S_INS && om->own_block))
			return true;
	}
	return false;
}

/* A free slot of the home bucket copy that no other insert of this txn took. */
static int
exe_free_slot(const struct dtxn_txn *t, uint32_t self, void *bucket)
{
	const struct dtxn_item *it = &t->items[self];
	const struct dtxn_table *tab = it->table;
	unsigned i;
	uint32_t j;

	for (i = 0; i < tab->def.slots_per_bucket; i++) {
		const struct dtxn_slot_hdr *h = dtxn_store_bucket_slot(tab, bucket, i);
		dtxn_raddr_t ra = dtxn_store_slot_raddr(tab, it->bucket_raddr, i);
		bool taken = false;

		if ((h->flags & DTXN_SLOT_VALID) != 0)
			continue;
		for (j = 0; j < t->n_items && !taken; j++)
			taken = j != self && t->items[j].kind == DTXN_ITEM_INSERT &&
				t->items[j].slot_raddr == ra;
		if (!taken)
			return (int)i;
	}
	return -ENOSPC;
}

/* ------------------------------------------------------------------ */
/* Issuing                                                            */
/* ------------------------------------------------------------------ */

/* The lock word item @p i CASes in this round, or 0. Decides bucket sharing. */
static dtxn_raddr_t
exe_round_lock(struct dtxn_txn *t, uint32_t i)
{
	struct dtxn_item *it = &t->items[i];
	struct motor_item *mi = motor_item_of(it);

	switch (mi->state) {
	case MOTOR_S_LOCK:
	case MOTOR_S_LOCK_VPKG:
		return it->slot_raddr + MOTOR_LOCK_OFF;
	case MOTOR_S_INS:
		it->bucket_raddr = dtxn_store_bucket_raddr(
			it->table, 0, dtxn_store_bucket_of(it->table, it->key));
		it->block_raddr = it->bucket_raddr;
		mi->own_block = !exe_block_taken(t, i, it->bucket_raddr);
		return mi->own_block ? it->bucket_raddr : 0;
	default:
		return 0;
	}
}

/* READs of the pre-images an RO item needs, then of its Vpkg. */
static void
exe_issue_value(struct dtxn_item *it, struct motor_item *mi, struct dtxn_batch *b)
{
	const struct dtxn_table *tab = it->table;
	const struct motor_cvt *cvt = motor_cvt_of(it->slot);
	uint32_t n = motor_vnum(tab), i;

	for (i = 0; i < n; i++) {
		const struct motor_cell *c = &cvt->cells[i];
		uint32_t len;

		if (!c->valid || c->version <= cvt->cells[mi->cell].version)
			continue;
		len = motor_seg_len(tab, c->bitmap);
		if (len != 0)
			dtxn_batch_read(b, motor_bar_raddr(tab, it->slot_raddr) + c->start_off,
					motor_local_bar(it) + c->start_off, len, true);
	}
	dtxn_batch_read(b, motor_vpkg_raddr(tab, it->slot_raddr), motor_local_vpkg(it),
			motor_vpkg_size(tab), true);
}

/* Where a written item's Vpkg is read: its local image, but a re-insert's
 * value buffer is the application's (filled before or after execute). */
static uint8_t *
exe_vpkg_in(const struct dtxn_item *it, const struct motor_item *mi)
{
	return mi->vpkg_in != NULL ? mi->vpkg_in : motor_local_vpkg(it);
}

/* Adds item @p i's WRs for its current state to the round's batch. */
static int
exe_issue(struct dtxn_txn *t, uint32_t i, struct dtxn_batch *b)
{
	struct dtxn_item *it = &t->items[i];
	struct motor_item *mi = motor_item_of(it);
	const struct dtxn_table *tab = it->table;
	dtxn_raddr_t ra;

	if (it->bucket == NULL && (mi->state == MOTOR_S_BKT || mi->state == MOTOR_S_INS)) {
		it->bucket = dtxn_txn_alloc(t, tab->bucket_size);
		if (it->bucket == NULL)
			return DTXN_ABORT(DTXN_ABORT_TOO_LARGE);
	}
	switch (mi->state) {
	case MOTOR_S_CVT:
		dtxn_batch_read(b, it->slot_raddr, it->slot, tab->slot_size, true);
		break;
	case MOTOR_S_BKT:
	case MOTOR_S_INS_PROBE:
		ra = dtxn_store_bucket_raddr(tab, 0,
					     dtxn_store_bucket_of(tab, it->key) + mi->probe);
		mi->braddr[mi->probe] = ra;
		dtxn_batch_read(b, ra, it->bucket, tab->bucket_size, true);
		break;
	case MOTOR_S_LOCK:
	case MOTOR_S_LOCK_VPKG:
		mi->lock_old = MOTOR_CAS_UNSET;
		it->lock_raddr = it->slot_raddr + MOTOR_LOCK_OFF;
		dtxn_batch_cas(b, it->lock_raddr, &mi->lock_old, 0, t->id, true);
		dtxn_batch_read(b, it->slot_raddr, it->slot, tab->slot_size, true);
		if (mi->state == MOTOR_S_LOCK_VPKG)
			dtxn_batch_read(b, motor_vpkg_raddr(tab, it->slot_raddr),
					exe_vpkg_in(it, mi), motor_vpkg_size(tab), true);
		break;
	case MOTOR_S_VPKG:
		dtxn_batch_read(b, motor_vpkg_raddr(tab, it->slot_raddr), exe_vpkg_in(it, mi),
				motor_vpkg_size(tab), true);
		break;
	case MOTOR_S_VALUE:
		exe_issue_value(it, mi, b);
		break;
	case MOTOR_S_INS:
		ra = it->bucket_raddr;
		mi->braddr[0] = ra;
		mi->block_old = MOTOR_CAS_UNSET;
		if (mi->own_block)
			dtxn_batch_cas(b, ra, &mi->block_old, 0, t->id, true);
		dtxn_batch_read(b, ra, it->bucket, tab->bucket_size, true);
		break;
	default:
		return DTXN_OK;
	}
	mi->inflight = 1;
	return DTXN_OK;
}

/* ------------------------------------------------------------------ */
/* Completion                                                         */
/* ------------------------------------------------------------------ */

/* A lock-free read must be read again from its CVT (torn or changed). */
static int
exe_reread(struct dtxn_item *it, struct motor_item *mi)
{
	if (++mi->retries > MOTOR_READ_RETRIES)
		return DTXN_ABORT(DTXN_ABORT_INVISIBLE);
	mi->state = it->slot_raddr != 0 ? MOTOR_S_CVT : MOTOR_S_BKT;
	mi->probe = 0;
	return DTXN_OK;
}

/* RO item with its CVT in it->slot: choose the version, plan the value READs. */
static int
exe_read_cvt(struct dtxn_txn *t, struct dtxn_item *it, struct motor_item *mi)
{
	const struct motor_cvt *cvt = motor_cvt_of(it->slot);
	const uint64_t ts = t->cc[MOTOR_TS_START];
	enum motor_pick res;
	int idx;

	if (motor_cvt_anchor(it->table, cvt) < 0)
		return exe_reread(it, mi); /* a commit was writing the Vcells */
	if (exe_foreign(t, cvt->lock)) {
		mi->sighted = 1;
		t->cc[MOTOR_TX_FLAGS] |= MOTOR_TX_SIGHTED;
	}
	if (exe_sr_rw(t) && motor_cvt_has_newer(it->table, cvt, ts))
		return DTXN_ABORT(DTXN_ABORT_VALIDATION); /* early abort (SR) */
	res = motor_cvt_pick(it->table, cvt, ts, &idx);
	if (res == MOTOR_PICK_GONE)
		return DTXN_ABORT(DTXN_ABORT_VERSION_GONE);
	mi->cell = idx;
	mi->seen = res == MOTOR_PICK_FOUND ? cvt->cells[idx].version : MOTOR_V_NONE;
	if (res == MOTOR_PICK_ABSENT || (cvt->cells[idx].flags & MOTOR_CELL_TOMB) != 0) {
		/* no record at the snapshot: inserted later, or deleted */
		it->flags &= ~DTXN_ITEM_F_EXISTS;
		it->version = 0;
		mi->state = MOTOR_S_DONE;
		return DTXN_OK;
	}
	mi->state = MOTOR_S_VALUE;
	return DTXN_OK;
}

/* RO item: pre-images and Vpkg read; check the anchors, rebuild the version. */
static int
exe_read_value(struct dtxn_txn *t, struct dtxn_item *it, struct motor_item *mi)
{
	const struct dtxn_table *tab = it->table;
	const struct motor_cvt *cvt = motor_cvt_of(it->slot);
	uint8_t *vpkg = motor_local_vpkg(it), *newest;
	int a = motor_cvt_anchor(tab, cvt);

	if (a < 0 || vpkg[0] != (uint8_t)a || motor_vpkg_ea(tab, vpkg) != (uint8_t)a)
		return exe_reread(it, mi); /* the value moved on since the CVT was read */
	if (motor_cvt_newest(tab, cvt) != mi->cell) {
		newest = dtxn_txn_alloc(t, tab->def.value_size);
		if (newest == NULL)
			return DTXN_ABORT(DTXN_ABORT_TOO_LARGE);
		memcpy(newest, vpkg + MOTOR_VPKG_VALUE_OFF, tab->def.value_size);
		motor_rebuild(tab, cvt, mi->cell, newest, motor_local_bar(it), it->value);
	}
	it->version = cvt->cells[mi->cell].writer;
	it->flags |= DTXN_ITEM_F_EXISTS;
	mi->state = MOTOR_S_DONE;
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

/* Lookup through the bucket chain (address-cache miss). */
static int
exe_complete_bkt(struct dtxn_txn *t, struct dtxn_item *it, struct motor_item *mi)
{
	const struct dtxn_table *tab = it->table;
	const struct dtxn_bucket_hdr *bh = it->bucket;
	int idx;

	mi->bver[mi->probe] = bh->version;
	idx = dtxn_store_bucket_find(tab, it->bucket, it->key);
	if (idx >= 0) {
		it->bucket_raddr = mi->braddr[mi->probe];
		it->slot_raddr = dtxn_store_slot_raddr(tab, it->bucket_raddr, (unsigned)idx);
		dtxn_addr_cache_insert(exe_cache(t), tab->def.id, it->key, it->slot_raddr);
		memcpy(it->slot, dtxn_store_bucket_slot(tab, it->bucket, (unsigned)idx),
		       tab->slot_size);
		if (it->kind == DTXN_ITEM_RO)
			return exe_read_cvt(t, it, mi);
		mi->state = MOTOR_S_LOCK_VPKG; /* lock, re-read and read the value in round 2 */
		return DTXN_OK;
	}
	if (mi->probe == 0 && exe_foreign(t, bh->lock)) {
		/* an insert into the home bucket may be committing */
		mi->sighted = 1;
		t->cc[MOTOR_TX_FLAGS] |= MOTOR_TX_SIGHTED;
	}
	if (bh->overflow != 0 && mi->probe + 1 < DTXN_STORE_MAX_PROBE) {
		mi->probe++;
		return DTXN_OK;
	}
	if (it->kind != DTXN_ITEM_RO)
		return DTXN_ABORT(DTXN_ABORT_NOT_FOUND);
	/* absent: validated through the versions of the buckets visited */
	mi->n_bkt = mi->probe + 1;
	mi->absent_bkt = 1;
	mi->seen = MOTOR_V_NONE;
	it->bucket_raddr = mi->braddr[0];
	it->bucket_version = mi->bver[0];
	it->flags &= ~DTXN_ITEM_F_EXISTS;
	mi->state = MOTOR_S_DONE;
	return DTXN_OK;
}

/* RW/delete/re-insert: {CAS, READ CVT} came back (and the Vpkg with LOCK_VPKG). */
static int
exe_complete_lock(struct dtxn_txn *t, struct dtxn_item *it, struct motor_item *mi)
{
	const struct dtxn_table *tab = it->table;
	const struct motor_cvt *cvt = motor_cvt_of(it->slot);
	const bool with_vpkg = mi->state == MOTOR_S_LOCK_VPKG;
	int n;

	if (mi->lock_old == 0)
		it->flags |= DTXN_ITEM_F_LOCKED;
	if (!dtxn_store_slot_matches(tab, cvt, it->key)) {
		/* stale cached address: drop the lock taken on it, look the key up */
		dtxn_txn_unlock_item(t, it);
		dtxn_addr_cache_invalidate(exe_cache(t), tab->def.id, it->key);
		it->flags &= ~DTXN_ITEM_F_CACHED;
		it->slot_raddr = 0;
		mi->probe = 0;
		mi->state = it->kind == DTXN_ITEM_INSERT ? MOTOR_S_INS : MOTOR_S_BKT;
		/* an insert found its key's CVT in the bucket it locked: cannot move */
		if (it->kind == DTXN_ITEM_INSERT)
			return DTXN_ABORT(DTXN_ABORT_LOCK_CONFLICT);
		return DTXN_OK;
	}
	if (mi->lock_old != 0)
		return DTXN_ABORT(DTXN_ABORT_LOCK_CONFLICT); /* no waiting: no deadlock */
	n = motor_cvt_newest(tab, cvt);
	if (n < 0 || motor_cvt_anchor(tab, cvt) < 0)
		return DTXN_ABORT(DTXN_ABORT_INVISIBLE);
	/* under our lock the newest version is the one we overwrite; it must
	 * be in our snapshot (SR: early abort; SI: first committer wins) */
	if (cvt->cells[n].version >= t->cc[MOTOR_TS_START])
		return DTXN_ABORT(DTXN_ABORT_VALIDATION);
	if (it->kind == DTXN_ITEM_INSERT) {
		if ((cvt->cells[n].flags & MOTOR_CELL_TOMB) == 0)
			return DTXN_ABORT(DTXN_ABORT_EXISTS);
	} else if ((cvt->cells[n].flags & MOTOR_CELL_TOMB) != 0) {
		return DTXN_ABORT(DTXN_ABORT_NOT_FOUND); /* deleted */
	}
	mi->cell = n;
	mi->seen = cvt->cells[n].version;
	it->version = cvt->cells[n].writer;
	if (!with_vpkg) {
		mi->state = MOTOR_S_VPKG;
		return DTXN_OK;
	}
	return DTXN_OK; /* caller goes on with the Vpkg that came in the same round */
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
	mi->state = MOTOR_S_DONE;
	return exe_keep_pre(t, it, mi, vpkg + MOTOR_VPKG_VALUE_OFF);
}

/* Insert: home bucket (under its lock) or an overflow bucket. */
static int
exe_complete_ins(struct dtxn_txn *t, uint32_t i, struct dtxn_item *it, struct motor_item *mi)
{
	const struct dtxn_table *tab = it->table;
	const struct dtxn_bucket_hdr *bh = it->bucket;
	int idx;

	if (mi->state == MOTOR_S_INS) {
		if (mi->own_block) {
			if (mi->block_old != 0)
				return DTXN_ABORT(DTXN_ABORT_LOCK_CONFLICT);
			it->flags |= DTXN_ITEM_F_BLOCKED;
		}
		it->bucket_version = bh->version;
		mi->slot_idx = exe_free_slot(t, i, it->bucket);
		if (mi->slot_idx >= 0)
			it->slot_raddr = dtxn_store_slot_raddr(tab, it->bucket_raddr,
							       (unsigned)mi->slot_idx);
	}
	idx = dtxn_store_bucket_find(tab, it->bucket, it->key);
	if (idx >= 0) {
		/* the key has a CVT: a re-insert if its newest version is a
		 * tombstone (checked under the record lock next round; the
		 * bucket lock stays held until commit, which bumps its version) */
		const struct motor_cvt *c = dtxn_store_bucket_slot(tab, it->bucket, (unsigned)idx);
		int n = motor_cvt_newest(tab, c);

		if (n >= 0 && (c->cells[n].flags & MOTOR_CELL_TOMB) == 0)
			return DTXN_ABORT(DTXN_ABORT_EXISTS);
		it->slot_raddr = dtxn_store_slot_raddr(tab, mi->braddr[mi->probe], (unsigned)idx);
		memcpy(it->slot, c, tab->slot_size);
		if (mi->vpkg_in == NULL) {
			mi->vpkg_in = dtxn_txn_alloc(t, motor_vpkg_size(tab));
			if (mi->vpkg_in == NULL)
				return DTXN_ABORT(DTXN_ABORT_TOO_LARGE);
		}
		mi->reinsert = 1;
		mi->slot_idx = -1;
		mi->state = MOTOR_S_LOCK_VPKG;
		return DTXN_OK;
	}
	if (bh->overflow != 0 && mi->probe + 1 < DTXN_STORE_MAX_PROBE) {
		mi->probe++;
		mi->state = MOTOR_S_INS_PROBE;
		return DTXN_OK;
	}
	if (mi->slot_idx < 0)
		return DTXN_ABORT(DTXN_ABORT_INDEX_FULL);
	mi->state = MOTOR_S_DONE;
	return DTXN_OK;
}

static int
exe_complete(struct dtxn_txn *t, uint32_t i)
{
	struct dtxn_item *it = &t->items[i];
	struct motor_item *mi = motor_item_of(it);
	int rc;

	if (!mi->inflight)
		return DTXN_OK;
	mi->inflight = 0;
	switch (mi->state) {
	case MOTOR_S_CVT:
		if (dtxn_store_slot_matches(it->table, it->slot, it->key))
			return exe_read_cvt(t, it, mi);
		dtxn_addr_cache_invalidate(exe_cache(t), it->table->def.id, it->key);
		it->flags &= ~DTXN_ITEM_F_CACHED;
		it->slot_raddr = 0;
		mi->probe = 0;
		mi->state = MOTOR_S_BKT;
		return DTXN_OK;
	case MOTOR_S_BKT:
		return exe_complete_bkt(t, it, mi);
	case MOTOR_S_LOCK:
		return exe_complete_lock(t, it, mi);
	case MOTOR_S_LOCK_VPKG:
		rc = exe_complete_lock(t, it, mi);
		if (rc != DTXN_OK || mi->state != MOTOR_S_LOCK_VPKG)
			return rc;
		return exe_complete_vpkg(t, it, mi);
	case MOTOR_S_VPKG:
		return exe_complete_vpkg(t, it, mi);
	case MOTOR_S_VALUE:
		return exe_read_value(t, it, mi);
	case MOTOR_S_INS:
	case MOTOR_S_INS_PROBE:
		return exe_complete_ins(t, i, it, mi);
	default:
		return DTXN_OK;
	}
}

/* Sets up the protocol state of a new item and its first step. */
static int
exe_prepare(struct dtxn_txn *t, struct dtxn_item *it)
{
	struct motor_item *mi = dtxn_txn_item_prepare(t, it, sizeof(*mi));
	bool cached;

	if (mi == NULL)
		return DTXN_ABORT(DTXN_ABORT_TOO_LARGE);
	cached = (it->flags & DTXN_ITEM_F_CACHED) != 0;
	mi->cell = -1;
	mi->slot_idx = -1;
	mi->lock_old = MOTOR_CAS_UNSET;
	mi->block_old = MOTOR_CAS_UNSET;
	if (it->kind == DTXN_ITEM_RO)
		mi->state = cached ? MOTOR_S_CVT : MOTOR_S_BKT;
	else if (it->kind == DTXN_ITEM_INSERT)
		mi->state = MOTOR_S_INS;
	else
		mi->state = cached ? MOTOR_S_LOCK : MOTOR_S_BKT;
	return DTXN_OK;
}

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

		if (motor_item_of(&t->items[i])->state == MOTOR_S_DONE)
			continue;
		lw = exe_round_lock(t, i);
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

static bool
exe_done(const struct dtxn_txn *t, uint32_t i)
{
	return motor_item_of(&t->items[i])->state == MOTOR_S_DONE;
}

static const struct dtxn_round_ops exe_rounds = {
	.prelude = exe_prelude,
	.done = exe_done,
	.issue = exe_issue,
	.complete = exe_complete,
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
	uint32_t i;
	int reason = DTXN_OK;

	if (t->cc[MOTOR_TS_START] == 0)
		reason = motor_timestamp(t, &t->cc[MOTOR_TS_START]);
	for (i = t->n_fetched; i < t->n_items && reason == DTXN_OK; i++)
		reason = exe_prepare(t, &t->items[i]);
	if (reason == DTXN_OK)
		reason = dtxn_txn_rounds(t, &exe_rounds);
	if (reason != DTXN_OK)
		motor_release(t);
	return reason;
}

void
motor_release(struct dtxn_txn *t)
{
	dtxn_txn_release_held(t);
}
