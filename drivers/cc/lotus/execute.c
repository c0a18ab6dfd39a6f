/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Lotus's execution phase (paper §5.1 phase 1; doc/guides/lotus.md,
 * "Protocol"): T_start, locks (lock.c), then per item
 *
 *   CVT    VT-cache hit (a lock this CN granted)   no WR
 *          address-cache hit                       READ CVT
 *          miss                                    READ bucket (probe chain)
 *          insert                                  READ home bucket (+ probes)
 *   data   READ the chosen version's record, check its cacheline versions
 *
 * Version choice. A locked item (write lock; read lock under SR) reads
 * the newest version, and aborts if it is >= T_start: a transaction that
 * committed after our start changed it (the paper's "a version larger
 * than T_start exists"; under SI this is first-committer-wins for the
 * write set). Nobody can change it until we unlock, so RW transactions
 * serialize at T_commit (§5.2). A lock-free read (read-only transaction,
 * or an RO item under SI) picks the largest visible version < T_start.
 *
 * INVISIBLE (the paper is silent; dtxn's choice, doc/guides/lotus.md): a
 * lock-free reader that meets a cell whose version is INVISIBLE cannot
 * tell whether its T_commit will be below its T_start, and skipping it
 * could read a snapshot that misses a committed write while another key
 * shows it (a fractured read the cacheline versions do not catch). So it
 * reads the CVT again after a short pause, until the writer has made the
 * version visible (one timestamp and one WRITE round trip), and aborts
 * (DTXN_ABORT_INVISIBLE) after LOTUS_READ_RETRIES tries. A record whose
 * cacheline versions do not all match its cell's (a version overwritten
 * by GC while read) is read again the same way.
 */
#include <errno.h>
#include <string.h>

#include "lotus_private.h"

static inline struct dtxn_addr_cache *
exe_cache(const struct dtxn_txn *t)
{
	return t->coord->worker->addr_cache;
}

static inline bool
exe_locked(const struct dtxn_item *it, const struct lotus_item *li)
{
	RTE_SET_USED(li);
	return (it->flags & DTXN_ITEM_F_LOCKED) != 0;
}

/* The item's CVT may live in this CN's VT cache: its lock was granted here. */
static inline bool
exe_vtc_ok(const struct dtxn_txn *t, const struct dtxn_item *it, const struct lotus_item *li)
{
	return lotus_worker_of(t)->cn->vtc != NULL && (it->flags & DTXN_ITEM_F_LOCKED) != 0 &&
	       li->owner == t->coord->worker->cn_node;
}

/* A lock-free read must be read again from its CVT after a pause. */
static int
exe_reread(struct dtxn_txn *t, struct dtxn_item *it, struct lotus_item *li)
{
	if (++li->retries > LOTUS_READ_RETRIES)
		return DTXN_ABORT(DTXN_ABORT_INVISIBLE);
	li->state = it->slot_raddr != 0 ? LOTUS_S_CVT : LOTUS_S_BKT;
	li->probe = 0;
	t->cc[LOTUS_TX_PAUSE] = 1;
	return DTXN_OK;
}

static void
exe_absent(struct dtxn_item *it, struct lotus_item *li)
{
	it->flags &= ~DTXN_ITEM_F_EXISTS;
	it->version = 0;
	li->state = LOTUS_S_DONE;
}

/* The CVT is in it->slot (VT cache, READ, or bucket): choose the version. */
static int
exe_on_cvt(struct dtxn_txn *t, struct dtxn_item *it, struct lotus_item *li)
{
	const struct dtxn_table *tab = it->table;
	const struct lotus_cvt *cvt = lotus_cvt_of(it->slot);
	const uint64_t ts = t->cc[LOTUS_TS_START];
	uint64_t m;
	int idx;

	if (!exe_locked(it, li)) {
		if (lotus_mn_locks(t) && lotus_opts_t(t)->commit == LOTUS_COMMIT_DIRECT)
			lotus_mn_sight(t, it);
		switch (lotus_cvt_pick(tab, cvt, ts, &idx)) {
		case LOTUS_PICK_INVISIBLE:
			return exe_reread(t, it, li);
		case LOTUS_PICK_GONE:
			if (lotus_cvt_newest(tab, cvt) < 0)
				return exe_reread(t, it, li); /* an insert is writing the slot */
			return DTXN_ABORT(DTXN_ABORT_VERSION_GONE);
		case LOTUS_PICK_ABSENT:
			exe_absent(it, li);
			return DTXN_OK;
		default:
			break;
		}
		if (lotus_meta_flags(cvt->cells[idx].meta) & LOTUS_CELL_TOMB) {
			exe_absent(it, li);
			return DTXN_OK;
		}
		li->cell = idx;
		li->state = LOTUS_S_REC;
		return DTXN_OK;
	}
	/* under our lock: the newest version, which must predate T_start */
	idx = lotus_cvt_newest(tab, cvt);
	if (it->kind == DTXN_ITEM_INSERT) {
		/* locks=mn: an insert over an existing CVT, now under its lock */
		m = idx >= 0 ? cvt->cells[idx].meta : 0;
		if (idx >= 0 && (lotus_meta_flags(m) & LOTUS_CELL_TOMB) == 0)
			return DTXN_ABORT(DTXN_ABORT_EXISTS);
		if (idx >= 0 && lotus_meta_ver(m) >= ts)
			return DTXN_ABORT(DTXN_ABORT_VALIDATION);
		li->reinsert = 1;
		li->cell = idx;
		li->state = LOTUS_S_DONE;
		return DTXN_OK;
	}
	if (idx < 0)
		return it->kind == DTXN_ITEM_RO ? (exe_absent(it, li), DTXN_OK) :
						  DTXN_ABORT(DTXN_ABORT_NOT_FOUND);
	m = cvt->cells[idx].meta;
	if (lotus_meta_ver(m) == LOTUS_INVISIBLE)
		return DTXN_ABORT(DTXN_ABORT_INVISIBLE); /* a writer died mid-commit */
	if (lotus_meta_ver(m) >= ts)
		return DTXN_ABORT(DTXN_ABORT_VALIDATION);
	if (exe_vtc_ok(t, it, li) && !li->cached)
		lotus_vtc_put(lotus_worker_of(t)->cn->vtc, tab->def.id, it->key, cvt, tab->slot_size,
			      it->slot_raddr);
	li->cell = idx;
	if (lotus_meta_flags(m) & LOTUS_CELL_TOMB) {
		if (it->kind != DTXN_ITEM_RO)
			return DTXN_ABORT(DTXN_ABORT_NOT_FOUND); /* deleted */
		exe_absent(it, li);
		return DTXN_OK;
	}
	li->state = LOTUS_S_REC;
	return DTXN_OK;
}

/* The record of the chosen version came back: check it, unpack it. */
static int
exe_on_rec(struct dtxn_txn *t, struct dtxn_item *it, struct lotus_item *li)
{
	const struct lotus_cvt *cvt = lotus_cvt_of(it->slot);
	uint64_t writer;

	if (lotus_rec_unpack(it->table, lotus_local_rec(it),
			     lotus_meta_cv(cvt->cells[li->cell].meta), &writer, it->value) != 0) {
		if (exe_locked(it, li))
			return DTXN_ABORT(DTXN_ABORT_INVISIBLE); /* cannot happen under our lock */
		return exe_reread(t, it, li);
	}
	it->version = writer;
	it->flags |= DTXN_ITEM_F_EXISTS;
	li->state = LOTUS_S_DONE;
	return DTXN_OK;
}

/* Lookup through the bucket chain (address-cache miss). */
static int
exe_on_bkt(struct dtxn_txn *t, struct dtxn_item *it, struct lotus_item *li)
{
	const struct dtxn_table *tab = it->table;
	const struct dtxn_bucket_hdr *bh = it->bucket;
	int idx = dtxn_store_bucket_find(tab, it->bucket, it->key);

	if (li->probe == 0)
		it->bucket_version = bh->version; /* inserts go to the home bucket */
	if (idx >= 0) {
		it->bucket_raddr = li->braddr[li->probe];
		it->slot_raddr = dtxn_store_slot_raddr(tab, it->bucket_raddr, (unsigned)idx);
		dtxn_addr_cache_insert(exe_cache(t), tab->def.id, it->key, it->slot_raddr);
		memcpy(it->slot, dtxn_store_bucket_slot(tab, it->bucket, (unsigned)idx),
		       tab->slot_size);
		if (lotus_mn_locks(t) && it->kind != DTXN_ITEM_RO) {
			li->state = LOTUS_S_MLOCK; /* lock it and read its CVT again */
			return DTXN_OK;
		}
		return exe_on_cvt(t, it, li);
	}
	if (bh->overflow != 0 && li->probe + 1 < DTXN_STORE_MAX_PROBE) {
		li->probe++;
		return DTXN_OK;
	}
	if (it->kind != DTXN_ITEM_RO)
		return DTXN_ABORT(DTXN_ABORT_NOT_FOUND);
	/* absent: under SR a read lock on the key keeps inserts out; a
	 * lock-free reader's snapshot predates any insert not yet here */
	it->bucket_raddr = li->braddr[0];
	exe_absent(it, li);
	return DTXN_OK;
}

/* Insert, under the key's and the home bucket's write locks. */
static int
exe_on_ins(struct dtxn_txn *t, uint32_t i, struct dtxn_item *it, struct lotus_item *li)
{
	const struct dtxn_table *tab = it->table;
	const struct dtxn_bucket_hdr *bh = it->bucket;
	int idx;

	if (li->state == LOTUS_S_INS) {
		if (lotus_mn_locks(t)) {
			int rc = lotus_mn_complete_block(it);

			if (rc != DTXN_OK)
				return rc;
		}
		it->bucket_version = bh->version;
		li->slot_idx = dtxn_txn_free_slot(t, i, it->bucket);
		if (li->slot_idx >= 0)
			it->slot_raddr = dtxn_store_slot_raddr(tab, it->bucket_raddr,
							       (unsigned)li->slot_idx);
	}
	idx = dtxn_store_bucket_find(tab, it->bucket, it->key);
	if (idx >= 0) {
		/* the key has a CVT: a re-insert if its newest version is a tombstone */
		const struct lotus_cvt *c = dtxn_store_bucket_slot(tab, it->bucket, (unsigned)idx);
		int n = lotus_cvt_newest(tab, c);

		/* (no valid cell: an insert that failed in its commit) */
		if (n >= 0 && (lotus_meta_flags(c->cells[n].meta) & LOTUS_CELL_TOMB) == 0)
			return DTXN_ABORT(DTXN_ABORT_EXISTS);
		if (n >= 0 && lotus_meta_ver(c->cells[n].meta) >= t->cc[LOTUS_TS_START])
			return DTXN_ABORT(DTXN_ABORT_VALIDATION);
		it->slot_raddr = dtxn_store_slot_raddr(tab, li->braddr[li->probe], (unsigned)idx);
		memcpy(it->slot, c, tab->slot_size);
		if (lotus_mn_locks(t)) {
			li->slot_idx = -1;
			li->state = LOTUS_S_MLOCK; /* its lock, then the checks above again */
			return DTXN_OK;
		}
		li->reinsert = 1;
		li->slot_idx = -1;
		li->cell = n;
		li->state = LOTUS_S_DONE;
		return DTXN_OK;
	}
	if (bh->overflow != 0 && li->probe + 1 < DTXN_STORE_MAX_PROBE) {
		li->probe++;
		li->state = LOTUS_S_INS_PROBE;
		return DTXN_OK;
	}
	if (li->slot_idx < 0)
		return DTXN_ABORT(DTXN_ABORT_INDEX_FULL);
	li->state = LOTUS_S_DONE;
	return DTXN_OK;
}

/* ------------------------------------------------------------------ */
/* Rounds                                                             */
/* ------------------------------------------------------------------ */

static int
exe_prelude(struct dtxn_txn *t, struct dtxn_batch *b)
{
	RTE_SET_USED(b);
	if (t->cc[LOTUS_TX_PAUSE]) {
		t->cc[LOTUS_TX_PAUSE] = 0;
		dtxn_co_sleep_until_lc(t->coord->co, dtxn_now_ns() + LOTUS_REREAD_PAUSE_NS);
	}
	return DTXN_OK;
}

static bool
exe_done(const struct dtxn_txn *t, uint32_t i)
{
	return lotus_item_of(&t->items[i])->state == LOTUS_S_DONE;
}

static int
exe_issue(struct dtxn_txn *t, uint32_t i, struct dtxn_batch *b)
{
	struct dtxn_item *it = &t->items[i];
	struct lotus_item *li = lotus_item_of(it);
	const struct dtxn_table *tab = it->table;
	dtxn_raddr_t ra;
	int rc;

	switch (li->state) {
	case LOTUS_S_CVT:
		dtxn_batch_read(b, it->slot_raddr, it->slot, tab->slot_size, true);
		break;
	case LOTUS_S_BKT:
	case LOTUS_S_INS_PROBE:
		rc = dtxn_txn_read_bucket(t, it, li->probe, &li->braddr[li->probe], b);
		if (rc != DTXN_OK)
			return rc;
		break;
	case LOTUS_S_INS:
		ra = dtxn_store_bucket_raddr(tab, 0, dtxn_store_bucket_of(tab, it->key));
		it->bucket_raddr = ra;
		li->braddr[0] = ra;
		if (lotus_mn_locks(t)) {
			li->own_block = 1;
			for (uint32_t j = 0; j < i && li->own_block; j++)
				li->own_block = !(t->items[j].kind == DTXN_ITEM_INSERT &&
						  t->items[j].bucket_raddr == ra &&
						  lotus_item_of(&t->items[j])->own_block);
			lotus_mn_issue_block(t, it, b);
		}
		rc = dtxn_txn_read_bucket(t, it, 0, &ra, b);
		if (rc != DTXN_OK)
			return rc;
		break;
	case LOTUS_S_MLOCK:
		lotus_mn_issue_lock(t, it, b);
		break;
	case LOTUS_S_REC:
		dtxn_batch_read(b, lotus_rec_raddr(tab, it->slot_raddr, lotus_cvt_of(it->slot),
						   (unsigned)li->cell),
				lotus_local_rec(it), lotus_rec_size(tab), true);
		break;
	default:
		return DTXN_OK;
	}
	li->inflight = 1;
	return DTXN_OK;
}

static int
exe_complete(struct dtxn_txn *t, uint32_t i)
{
	struct dtxn_item *it = &t->items[i];
	struct lotus_item *li = lotus_item_of(it);

	if (!li->inflight)
		return DTXN_OK;
	li->inflight = 0;
	switch (li->state) {
	case LOTUS_S_CVT:
		if (dtxn_store_slot_matches(it->table, it->slot, it->key))
			return exe_on_cvt(t, it, li);
		/* stale cached address: look the key up */
		dtxn_addr_cache_invalidate(exe_cache(t), it->table->def.id, it->key);
		it->flags &= ~DTXN_ITEM_F_CACHED;
		it->slot_raddr = 0;
		li->probe = 0;
		li->state = LOTUS_S_BKT;
		return DTXN_OK;
	case LOTUS_S_BKT:
		return exe_on_bkt(t, it, li);
	case LOTUS_S_INS:
	case LOTUS_S_INS_PROBE:
		return exe_on_ins(t, i, it, li);
	case LOTUS_S_REC:
		return exe_on_rec(t, it, li);
	case LOTUS_S_MLOCK: {
		int rc = lotus_mn_complete_lock(t, it);

		if (rc == -EAGAIN)
			return DTXN_OK; /* stale address: looked up again next round */
		return rc != DTXN_OK ? rc : exe_on_cvt(t, it, li);
	}
	default:
		return DTXN_OK;
	}
}

static const struct dtxn_round_ops exe_rounds = {
	.prelude = exe_prelude,
	.done = exe_done,
	.issue = exe_issue,
	.complete = exe_complete,
};

/* Sets up the protocol state of a new item. */
static int
exe_prepare(struct dtxn_txn *t, struct dtxn_item *it)
{
	const struct dtxn_table *tab = it->table;
	struct lotus_item *li;
	dtxn_raddr_t ra = 0;

	li = dtxn_txn_alloc(t, sizeof(*li));
	if (li == NULL)
		return DTXN_ABORT(DTXN_ABORT_TOO_LARGE);
	memset(li, 0, sizeof(*li));
	li->cell = -1;
	li->slot_idx = -1;
	li->new_cell = -1;
	it->cc[0] = (uintptr_t)li;
	if (it->kind == DTXN_ITEM_INSERT) {
		li->state = LOTUS_S_INS;
		return DTXN_OK;
	}
	ra = dtxn_addr_cache_lookup(exe_cache(t), tab->def.id, it->key);
	if (ra != 0) {
		it->flags |= DTXN_ITEM_F_CACHED;
		it->slot_raddr = ra;
		it->bucket_raddr = dtxn_store_bucket_of_slot(tab, ra);
	}
	li->state = ra != 0 ? LOTUS_S_CVT : LOTUS_S_BKT;
	if (ra != 0 && it->kind != DTXN_ITEM_RO && lotus_mn_locks(t))
		li->state = LOTUS_S_MLOCK;
	return DTXN_OK;
}

/* Locked items whose CVT this CN's VT cache holds skip the CVT READ. */
static int
exe_vtc(struct dtxn_txn *t)
{
	struct lotus_vtc *vtc = lotus_worker_of(t)->cn->vtc;
	int reason = DTXN_OK;

	for (uint32_t i = t->n_fetched; i < t->n_items && reason == DTXN_OK; i++) {
		struct dtxn_item *it = &t->items[i];
		struct lotus_item *li = lotus_item_of(it);
		dtxn_raddr_t slot;

		if (it->kind == DTXN_ITEM_INSERT || !exe_vtc_ok(t, it, li))
			continue;
		if (!lotus_vtc_get(vtc, it->table->def.id, it->key, it->slot, it->table->slot_size,
				   &slot))
			continue;
		li->cached = 1;
		it->slot_raddr = slot;
		it->bucket_raddr = dtxn_store_bucket_of_slot(it->table, slot);
		reason = exe_on_cvt(t, it, li);
	}
	return reason;
}

int
lotus_timestamp(struct dtxn_txn *t, uint64_t *ts)
{
	struct lotus_coord *lc = t->coord->cc_priv;
	int rc = dtxn_tso_txn_ts(lotus_worker_of(t)->tso, t, &lc->req, ts);

	if (rc == DTXN_OK && *ts >= LOTUS_INVISIBLE)
		return DTXN_ABORT(DTXN_ABORT_FABRIC); /* 2^48 timestamps: never in practice */
	return rc;
}

int
lotus_execute(struct dtxn_txn *t)
{
	int reason = DTXN_OK;

	if (t->cc[LOTUS_TS_START] == 0)
		reason = lotus_timestamp(t, &t->cc[LOTUS_TS_START]);
	for (uint32_t i = t->n_fetched; i < t->n_items && reason == DTXN_OK; i++)
		reason = exe_prepare(t, &t->items[i]);
	if (reason == DTXN_OK)
		reason = lotus_lock_items(t);
	if (reason == DTXN_OK)
		reason = exe_vtc(t);
	if (reason == DTXN_OK)
		reason = dtxn_txn_rounds(t, &exe_rounds);
	if (reason != DTXN_OK)
		lotus_release_all(t);
	return reason;
}
