/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * OOCC Execute&Locking (Algorithm 1, lines 1-10): one round of doorbell
 * batches READs the read set and, for a read-write txn, CASes the
 * intention locks of the write set (lib/txn's locating steps: {CAS lock,
 * READ slot} at a cached address, a bucket lookup before otherwise). What
 * is OOCC's is here:
 * - the READs of the read set lead each round, the CASes follow (lines 3
 *   and 8, in one doorbell per MN);
 * - a read-only txn aborts on a write-locked record and notes an
 *   intention-locked one (it must validate it, Fig. 5 case 2.1); a
 *   read-write txn aborts on any lock (line 4);
 * - the same holds for the bucket lock of a key read as absent;
 * - a READ whose header and tail versions differ overlapped a commit
 *   WRITE: it is read again;
 * - the lease times: the word and the time of the first READ posted, the
 *   time the last READ completed, and once locks are held the time they
 *   are in effect with the ww in force then (lease.c).
 */
#include "oocc_private.h"

/** Re-reads of a torn record before giving up. */
#define OOCC_REREAD_MAX 8

/*
 * A read item met lock word @p lock (its record's, or a bucket's for an
 * absent key): abort, note an intention lock, or go on.
 */
static int
exe_lock_seen(struct dtxn_txn *t, struct dtxn_item *it, uint64_t lock)
{
	enum oocc_lock_state st = oocc_lock_state(lock, t->id, oocc_opts_t(t)->delayed_lock);

	if (st == OOCC_LOCK_WRITE || (st == OOCC_LOCK_INTENT && t->mode == DTXN_TXN_RW))
		return DTXN_ABORT(DTXN_ABORT_LOCKED_READ);
	if (st == OOCC_LOCK_INTENT) {
		oocc_item_of(it)->intent = 1;
		t->cc[OOCC_CC_FLAGS] |= OOCC_T_INTENT;
	}
	return DTXN_OK;
}

/* Read item found: its slot image is in it->slot. */
static int
exe_read(struct dtxn_txn *t, uint32_t i)
{
	struct dtxn_item *it = &t->items[i];
	const struct oocc_slot *s = it->slot;
	int rc;

	rc = exe_lock_seen(t, it, oocc_footer_of(it->table, it->slot)->lock);
	if (rc != DTXN_OK)
		return rc;
	if (oocc_slot_torn(it->table, s)) {
		oocc_item_of(it)->intent = 0;
		return dtxn_loc_reread(t, i, OOCC_REREAD_MAX);
	}
	it->version = s->version;
	it->flags |= DTXN_ITEM_F_EXISTS;
	oocc_item_of(it)->loc.step = DTXN_LOC_DONE;
	return DTXN_OK;
}

/* A lookup missed in a bucket: a read of an absent key checks that bucket's lock. */
static int
exe_miss(struct dtxn_txn *t, uint32_t i)
{
	struct dtxn_item *it = &t->items[i];

	if (it->kind != DTXN_ITEM_RO)
		return DTXN_OK;
	return exe_lock_seen(t, it, ((const struct dtxn_bucket_hdr *)it->bucket)->lock);
}

/* A delete also takes its bucket's lock and reads the bucket header. */
static void
exe_lock_issue(struct dtxn_txn *t, uint32_t i, struct dtxn_batch *b)
{
	struct dtxn_item *it = &t->items[i];

	if (it->kind != DTXN_ITEM_DELETE)
		return;
	dtxn_loc_block_cas(t, i, b);
	dtxn_batch_read(b, it->bucket_raddr, &oocc_item_of(it)->bhdr,
			sizeof(struct dtxn_bucket_hdr), true);
}

/* RW / delete item under its intention lock: the version it overwrites. */
static int
exe_locked(struct dtxn_txn *t, uint32_t i)
{
	struct dtxn_item *it = &t->items[i];
	struct oocc_item *oi = oocc_item_of(it);

	RTE_SET_USED(t);
	it->version = ((const struct oocc_slot *)it->slot)->version;
	it->bucket_version = oi->bhdr.version;
	it->flags |= DTXN_ITEM_F_EXISTS;
	oi->loc.step = DTXN_LOC_DONE;
	return DTXN_OK;
}

/* An insert takes a free slot no commit is writing (lock word 0). */
static bool
exe_slot_free(const struct dtxn_table *tab, const void *slot)
{
	return oocc_footer_of(tab, (void *)(uintptr_t)slot)->lock == 0;
}

/*
 * --debug-weaken oocc-alg1 (a test aid): Algorithm 1 in the order it is
 * printed, the CASes of line 8 after the READs of line 3 came back and were
 * checked: an RW item at a cached address is looked up through its bucket
 * first (one READ), then locked. With line 13's skip this is the paper's
 * write skew at its widest (one round trip between a txn's reads and its
 * locks), so that the checker sees it in a short run.
 */
static void
exe_prepare(struct dtxn_txn *t, uint32_t i)
{
	struct oocc_item *oi = oocc_item_of(&t->items[i]);

	if (oi->loc.step == DTXN_LOC_LOCK && dtxn_txn_weakened(t, DTXN_DEBUG_OOCC_ALG1))
		oi->loc.step = DTXN_LOC_BKT;
}

static const struct dtxn_loc_ops exe_loc = {
	.prepare = exe_prepare,
	.item_size = sizeof(struct oocc_item),
	.lock_last = true,
	.reads_first = true,
	.slot_free = exe_slot_free,
	.miss = exe_miss,
	.read = exe_read,
	.lock_issue = exe_lock_issue,
	.locked = exe_locked,
};

/* True if an item of this execute (from n_fetched) holds a lock. */
static bool
exe_took_locks(const struct dtxn_txn *t)
{
	for (uint32_t i = t->n_fetched; i < t->n_items; i++)
		if (t->items[i].flags & (DTXN_ITEM_F_LOCKED | DTXN_ITEM_F_BLOCKED))
			return true;
	return false;
}

int
oocc_execute(struct dtxn_txn *t)
{
	uint64_t now = oocc_clock_ns(t);
	int reason;

	if ((t->cc[OOCC_CC_FLAGS] & OOCC_T_STARTED) == 0) {
		/* the implicit read lease starts with the first READ (§III) */
		t->cc[OOCC_CC_FLAGS] |= OOCC_T_STARTED;
		t->cc[OOCC_CC_FIRST] = now;
		t->cc[OOCC_CC_WORD] = oocc_lease_word_cn(t);
	}
	reason = dtxn_loc_execute(t, &exe_loc);
	if (reason != DTXN_OK) {
		oocc_release(t);
		return reason;
	}
	now = oocc_clock_ns(t);
	t->cc[OOCC_CC_LAST] = now;
	if (exe_took_locks(t)) {
		/* the writer's wait starts once its locks are in effect, with
		 * the ww in force then (lease.c) */
		t->cc[OOCC_CC_FLAGS] |= OOCC_T_LOCKED;
		t->cc[OOCC_CC_LOCKED] = now;
		t->cc[OOCC_CC_WW] = oocc_lease_ww(oocc_lease_word_cn(t));
	}
	return DTXN_OK;
}

void
oocc_release(struct dtxn_txn *t)
{
	struct oocc_coord *oc = oocc_coord_of(t);
	const struct dtxn_catalog *cat = &t->coord->worker->db->cat;
	struct dtxn_batch b;

	dtxn_batch_init(&b, t->coord);
	/* a redo record whose txn aborted is voided (never replayed), before the unlocks */
	for (uint64_t m = t->cc[OOCC_CC_LOG_MNS]; m != 0; m &= m - 1)
		dtxn_batch_write(&b,
				 dtxn_store_log_raddr(cat, t->coord->gid,
						      (uint16_t)__builtin_ctzll(m)) +
					 t->cc[OOCC_CC_LOG_OFF],
				 &oc->void_word, 8, false);
	t->cc[OOCC_CC_LOG_MNS] = 0;
	dtxn_txn_unlock_held(t, &b);
	dtxn_batch_post_forget(&b, t, "lock release");
}
