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
 * The CVT steps are lib/txn's locating steps (locate.c), with the locks on
 * the CNs (dtxn_loc_ops.cn_locks: no lock round, no bucket CAS); with the
 * ablation's MN locks (locks=mn) the same steps as FORD's and Motor's take
 * them: {CAS the CVT's lock word, READ the CVT}, an insert's bucket lock
 * with its home-bucket READ. What is Lotus's is here: the VT cache, the
 * version choice and the record READ (LOTUS_S_REC).
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
#include <string.h>

#include "lotus_private.h"

static inline bool
exe_locked(const struct dtxn_item *it)
{
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
exe_reread(struct dtxn_txn *t, uint32_t i)
{
	int reason = dtxn_loc_reread(t, i, LOTUS_READ_RETRIES);

	if (reason == DTXN_OK)
		t->cc[LOTUS_TX_PAUSE] = 1;
	return reason;
}

static void
exe_absent(struct dtxn_item *it, struct lotus_item *li)
{
	it->flags &= ~DTXN_ITEM_F_EXISTS;
	it->version = 0;
	li->loc.step = DTXN_LOC_DONE;
}

/* The CVT is in it->slot (VT cache, READ, or bucket): choose the version. */
static int
exe_on_cvt(struct dtxn_txn *t, uint32_t i)
{
	struct dtxn_item *it = &t->items[i];
	struct lotus_item *li = lotus_item_of(it);
	const struct dtxn_table *tab = it->table;
	const struct lotus_cvt *cvt = lotus_cvt_of(it->slot);
	const uint64_t ts = t->cc[LOTUS_TS_START];
	uint64_t m;
	int idx;

	if (!exe_locked(it)) {
		if (lotus_mn_locks(t) && lotus_opts_t(t)->commit == LOTUS_COMMIT_DIRECT)
			lotus_mn_sight(t, it);
		switch (lotus_cvt_pick(tab, cvt, ts, &idx)) {
		case LOTUS_PICK_INVISIBLE:
			return exe_reread(t, i);
		case LOTUS_PICK_GONE:
			if (lotus_cvt_newest(tab, cvt) < 0)
				return exe_reread(t, i); /* an insert is writing the slot */
			return DTXN_ABORT(DTXN_ABORT_VERSION_GONE);
		case LOTUS_PICK_ABSENT:
			exe_absent(it, li);
			return DTXN_OK;
		default:
			break;
		}
		li->cell = idx; /* a tombstone too: its record names the deleter */
		li->loc.step = LOTUS_S_REC;
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
		li->loc.step = idx >= 0 ? LOTUS_S_REC : DTXN_LOC_DONE; /* the deleter, for the history */
		return DTXN_OK;
	}
	if (idx < 0)
		return it->kind == DTXN_ITEM_RO ? (exe_absent(it, li), DTXN_OK) :
						  DTXN_ABORT(DTXN_ABORT_NOT_FOUND);
	m = cvt->cells[idx].meta;
	if (lotus_meta_ver(m) == LOTUS_INVISIBLE)
		return DTXN_ABORT(DTXN_ABORT_INVISIBLE); /* a writer died mid-commit */
	if (lotus_meta_ver(m) >= ts && !dtxn_txn_weakened(t, DTXN_DEBUG_SKIP_WW_CHECK)) /* test aid, SI */
		return DTXN_ABORT(DTXN_ABORT_VALIDATION);
	if (exe_vtc_ok(t, it, li) && !li->cached)
		lotus_vtc_put(lotus_worker_of(t)->cn->vtc, tab->def.id, it->key, cvt, tab->slot_size,
			      it->slot_raddr);
	li->cell = idx;
	if ((lotus_meta_flags(m) & LOTUS_CELL_TOMB) && it->kind != DTXN_ITEM_RO)
		return DTXN_ABORT(DTXN_ABORT_NOT_FOUND); /* deleted */
	li->loc.step = LOTUS_S_REC;
	return DTXN_OK;
}

/*
 * The record of the chosen version came back: check it, unpack it. A
 * tombstone's record (a read of a deleted key, a re-insert) only names
 * its deleter, for the history (DTXN_ITEM_F_TOMB); an insert keeps the
 * value the application gave it.
 */
static int
exe_on_rec(struct dtxn_txn *t, uint32_t i)
{
	struct dtxn_item *it = &t->items[i];
	struct lotus_item *li = lotus_item_of(it);
	const struct lotus_cvt *cvt = lotus_cvt_of(it->slot);
	const bool tomb = (lotus_meta_flags(cvt->cells[li->cell].meta) & LOTUS_CELL_TOMB) != 0;
	uint64_t writer;

	if (lotus_rec_unpack(it->table, lotus_local_rec(it),
			     lotus_meta_cv(cvt->cells[li->cell].meta), &writer,
			     tomb || it->kind == DTXN_ITEM_INSERT ? NULL : it->value) != 0) {
		if (exe_locked(it))
			return DTXN_ABORT(DTXN_ABORT_INVISIBLE); /* cannot happen under our lock */
		return exe_reread(t, i);
	}
	if (tomb) {
		exe_absent(it, li);
		it->flags |= DTXN_ITEM_F_TOMB;
	} else {
		it->flags |= DTXN_ITEM_F_EXISTS;
	}
	it->version = writer;
	li->loc.step = DTXN_LOC_DONE;
	return DTXN_OK;
}

/*
 * Insert whose key has a CVT in the bucket chain (under the key's and the
 * home bucket's write locks): a re-insert if its newest version is a
 * tombstone. With locks=mn the key's lock comes next round, and the same
 * checks again under it (exe_on_cvt()).
 */
static int
exe_ins_found(struct dtxn_txn *t, uint32_t i, unsigned idx)
{
	struct dtxn_item *it = &t->items[i];
	struct lotus_item *li = lotus_item_of(it);
	const struct dtxn_table *tab = it->table;
	const struct lotus_cvt *c = dtxn_store_bucket_slot(tab, it->bucket, idx);
	int n = lotus_cvt_newest(tab, c);

	/* (no valid cell: an insert that failed in its commit) */
	if (n >= 0 && (lotus_meta_flags(c->cells[n].meta) & LOTUS_CELL_TOMB) == 0)
		return DTXN_ABORT(DTXN_ABORT_EXISTS);
	if (n >= 0 && lotus_meta_ver(c->cells[n].meta) >= t->cc[LOTUS_TS_START])
		return DTXN_ABORT(DTXN_ABORT_VALIDATION);
	it->slot_raddr = dtxn_store_slot_raddr(tab, li->loc.braddr[li->loc.probe], idx);
	memcpy(it->slot, c, tab->slot_size);
	li->loc.slot_idx = -1;
	if (lotus_mn_locks(t)) {
		li->loc.step = DTXN_LOC_LOCK;
		return DTXN_OK;
	}
	li->reinsert = 1;
	li->cell = n;
	li->loc.step = n >= 0 ? LOTUS_S_REC : DTXN_LOC_DONE; /* the deleter, for the history */
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

/* LOTUS_S_REC: READ the chosen version's record. */
static int
exe_issue_rec(struct dtxn_txn *t, uint32_t i, struct dtxn_batch *b)
{
	struct dtxn_item *it = &t->items[i];
	const struct dtxn_table *tab = it->table;

	dtxn_batch_read(b, lotus_rec_raddr(it, lotus_cvt_of(it->slot),
					   (unsigned)lotus_item_of(it)->cell),
			lotus_local_rec(it), lotus_rec_size(tab), true);
	return DTXN_OK;
}

/* Sets up Lotus's fields of a new item. */
static void
exe_prepare(struct dtxn_txn *t, uint32_t i)
{
	struct lotus_item *li = lotus_item_of(&t->items[i]);

	li->cell = -1;
	li->new_cell = -1;
	li->delta_new = 0;
}

/* Locks on the CNs, taken before the rounds (lock.c). */
static const struct dtxn_loc_ops exe_loc_cn = {
	.item_size = sizeof(struct lotus_item),
	.cn_locks = true,
	.aux_share = true, /* no MN atomic, for inserts' value areas either */
	.prepare = exe_prepare,
	.prelude = exe_prelude,
	.read = exe_on_cvt,
	.ins_found = exe_ins_found,
	.issue = exe_issue_rec,
	.complete = exe_on_rec,
};

/* locks=mn (ablation): Motor's locks, the CVT's lock word. */
static const struct dtxn_loc_ops exe_loc_mn = {
	.item_size = sizeof(struct lotus_item),
	.lock_last = true, /* the CVT's last 8 B (lotus_cvt_lock()) */
	.prepare = exe_prepare,
	.prelude = exe_prelude,
	.read = exe_on_cvt,
	.locked = exe_on_cvt,
	.ins_found = exe_ins_found,
	.issue = exe_issue_rec,
	.complete = exe_on_rec,
};

/* The locating ops of the txn's lock placement. */
static inline const struct dtxn_loc_ops *
exe_loc_of(const struct dtxn_txn *t)
{
	return lotus_mn_locks(t) ? &exe_loc_mn : &exe_loc_cn;
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
		it->aux = dtxn_store_slot_aux(it->slot); /* the cached CVT's header */
		it->bucket_raddr = dtxn_store_bucket_of_slot(it->table, slot);
		reason = exe_on_cvt(t, i);
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
	const struct dtxn_loc_ops *ops = exe_loc_of(t);
	int reason = DTXN_OK;

	if (t->cc[LOTUS_TS_START] == 0)
		reason = lotus_timestamp(t, &t->cc[LOTUS_TS_START]);
	for (uint32_t i = t->n_fetched; i < t->n_items && reason == DTXN_OK; i++)
		if (dtxn_loc_prepare(t, i, ops) == NULL)
			reason = DTXN_ABORT(DTXN_ABORT_TOO_LARGE);
	if (reason == DTXN_OK)
		reason = lotus_lock_items(t);
	if (reason == DTXN_OK)
		reason = exe_vtc(t);
	if (reason == DTXN_OK)
		reason = dtxn_loc_rounds(t, ops);
	if (reason != DTXN_OK)
		lotus_release_all(t);
	return reason;
}
