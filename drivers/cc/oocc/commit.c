/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * OOCC Validate&Logging and Commit (Algorithm 1, lines 11-26).
 *
 * Read-only txn: no round at all when its reads took at most rv and saw no
 * intention lock; else one round of validation READs (all read items when
 * the lease expired, else the intention-locked ones).
 *
 * Read-write txn, three round trips (four when R2 needs two rounds):
 *   R1 (execute.c)  READ read set, CAS intention locks;
 *   R2              the WRITEs that upgrade the intention locks to write
 *                   locks, the redo record to each MN that holds a replica
 *                   (signaled: acknowledged before any record changes),
 *                   and validation READs of the whole read set (dtxn
 *                   closes the paper's hole; --debug-weaken oocc-alg1
 *                   skips them inside the lease as Algorithm 1 does),
 *                   which take effect after the upgrades: in a round of
 *                   their own unless all of it goes to one MN
 *                   (commit_validate_log());
 *   (wait)          until ww after the locks were in effect;
 *   R3              per written record one WRITE of the whole slot whose
 *                   last word, the lock, is 0: update and unlock in one
 *                   op (§V); the same image to the backups; bucket headers
 *                   of inserts and deletes: version, then unlock.
 * Ablations (Fig. 11): write_unlock=0 writes the records with their lock
 * kept and unlocks after, fire-and-forget; delayed_lock=0 has no upgrade
 * (the CAS lock is a write lock); lease=0 has no skip and no wait.
 */
#include <string.h>

#include "oocc_private.h"

static const uint64_t g_oocc_zero;

/* Fills the local slot copy as the record must look after the txn. */
static void
commit_image(const struct dtxn_txn *t, struct dtxn_item *it)
{
	struct oocc_slot *s = it->slot;
	struct oocc_footer *f = oocc_footer_of(it->table, it->slot);

	if (it->kind == DTXN_ITEM_INSERT) {
		s->hdr.key = it->key;
		s->hdr.table_id = it->table->def.id;
		s->hdr.flags = DTXN_SLOT_VALID;
	} else if (it->kind == DTXN_ITEM_DELETE) {
		s->hdr.flags &= ~DTXN_SLOT_VALID;
	}
	s->version = t->id;
	f->tail = t->id;
	f->lock = oocc_opts_t(t)->write_unlock ? 0 : OOCC_WLOCK | t->id;
}

/* The redo image of a written item: its slot as the commit writes it (primary's). */
static const void *
commit_redo_image(const struct dtxn_txn *t, const struct dtxn_item *it)
{
	RTE_SET_USED(t);
	return it->slot;
}

/* Records the read-only outcome for the Lease Manager (adapt=1). */
static void
commit_ro_stats(struct dtxn_txn *t, bool skipped)
{
	struct oocc_ro_stats *s = oocc_coord_of(t)->ro;

	if (s != NULL)
		oocc_ro_stats_add(s, oocc_elapsed(t->cc[OOCC_CC_FIRST], t->cc[OOCC_CC_LAST]),
				  skipped);
}

/* Whether the read set's time is within the read lease the txn started with. */
static bool
commit_in_lease(const struct dtxn_txn *t)
{
	return oocc_opts_t(t)->lease &&
	       oocc_lease_skip(t->cc[OOCC_CC_FIRST], t->cc[OOCC_CC_LAST],
			       oocc_lease_rv(t->cc[OOCC_CC_WORD]), false);
}

static int
commit_ro(struct dtxn_txn *t)
{
	bool expired = !commit_in_lease(t);
	bool intent = (t->cc[OOCC_CC_FLAGS] & OOCC_T_INTENT) != 0;
	struct dtxn_batch b;
	int reason;

	commit_ro_stats(t, !expired && !intent);
	if (!expired && !intent)
		return DTXN_OK; /* one round trip in all: the lease covers the reads */
	dtxn_batch_init(&b, t->coord);
	oocc_validate_issue(t, &b, expired);
	if (b.n_wr == 0) {
		dtxn_batch_done(&b);
		return DTXN_OK;
	}
	reason = dtxn_batch_run_reason(&b);
	if (reason == DTXN_OK)
		reason = oocc_validate_check(t, expired, false);
	return reason;
}

/* Adds the WRITEs that upgrade the txn's intention locks to write locks. */
static void
commit_upgrade_issue(struct dtxn_txn *t, struct dtxn_batch *b)
{
	for (uint32_t i = 0; oocc_opts_t(t)->delayed_lock && i < t->n_items; i++) {
		struct dtxn_item *it = &t->items[i];
		struct oocc_item *oi = oocc_item_of(it);

		/* upgrade: the holder owns the intention lock, a WRITE will do */
		oi->wlock = OOCC_WLOCK | t->id;
		if (it->flags & DTXN_ITEM_F_LOCKED)
			dtxn_batch_write(b, it->lock_raddr, &oi->wlock, 8, false);
		if (it->flags & DTXN_ITEM_F_BLOCKED)
			dtxn_batch_write(b, it->block_raddr, &oi->wlock, 8, false);
	}
}

/*
 * R2: lock upgrades, the redo record, validation READs.
 *
 * A read-only txn that finds a record intention-locked orders itself
 * before the writer (validate.c, Fig. 5 case 2.1), so the writer's
 * validation must not take effect before its upgrades do: else a txn
 * that overwrites what the writer validated, and one that reads that
 * write and then passes the writer's intention lock, close a cycle
 * (doc/guides/oocc.md, "Upgrade before validation"). The WRs to one MN
 * take effect in order, so R2 is one round when every upgrade and every
 * validation READ go to one MN (the upgrades first in its chain), and
 * else two: the upgrades and the redo record, then the validation READs.
 * upgrade_first=0 posts all of it in one round, validation first: the
 * paper's order (a G2 cycle when the chains take effect far apart:
 * --debug-post-gap).
 */
static int
commit_validate_log(struct dtxn_txn *t)
{
	const struct oocc_opts *o = oocc_opts_t(t);
	struct oocc_coord *oc = oocc_coord_of(t);
	/* Algorithm 1 as printed (planted defect): inside the lease, no validation */
	bool all = !(dtxn_txn_weakened(t, DTXN_DEBUG_OOCC_ALG1) /* test aid */ &&
		     commit_in_lease(t));
	struct dtxn_batch b;
	uint64_t mns = 0, up;
	void *rec = NULL;
	int64_t bytes;
	int reason;

	for (uint32_t i = 0; i < t->n_items; i++)
		if (dtxn_item_writes(&t->items[i]))
			commit_image(t, &t->items[i]);
	bytes = dtxn_txn_log_build(t, commit_redo_image, &rec, &mns);
	if (bytes < 0)
		return DTXN_ABORT(DTXN_ABORT_TOO_LARGE);
	dtxn_batch_init(&b, t->coord);
	if (!o->upgrade_first)
		oocc_validate_issue(t, &b, all);
	commit_upgrade_issue(t, &b);
	up = b.mn_mask;
	if (bytes > 0) {
		t->cc[OOCC_CC_LOG_OFF] = dtxn_txn_log_write(t, &b, rec, (uint32_t)bytes, mns,
							    &oc->log_head);
		t->cc[OOCC_CC_LOG_MNS] = mns;
	}
	if (o->upgrade_first) {
		uint64_t val = oocc_validate_mns(t, all);

		if (up != 0 && val != 0 && ((up & (up - 1)) != 0 || (val & ~up) != 0)) {
			/* the upgrades in effect before any validation READ is posted */
			reason = dtxn_batch_run_reason(&b);
			if (reason != DTXN_OK)
				return reason;
			dtxn_batch_init(&b, t->coord);
		}
		oocc_validate_issue(t, &b, all);
	}
	reason = dtxn_batch_run_reason(&b);
	if (reason == DTXN_OK)
		reason = oocc_validate_check(t, all, true);
	return reason;
}

/* Adds item @p it's bucket header, version first, then the unlock, on every replica. */
static void
commit_bucket(struct dtxn_batch *b, struct dtxn_item *it)
{
	struct oocc_item *oi = oocc_item_of(it);

	oi->bver_new = it->bucket_version + 1;
	for (uint16_t r = 0; r < it->table->n_replicas; r++) {
		dtxn_raddr_t ra = dtxn_store_replica_raddr(it->table, r, it->bucket_raddr);

		dtxn_batch_write(b, ra + offsetof(struct dtxn_bucket_hdr, version), &oi->bver_new,
				 8, r == 0);
		dtxn_batch_write(b, ra + offsetof(struct dtxn_bucket_hdr, lock), &g_oocc_zero, 8,
				 false);
	}
}

/* R3: the records (update + unlock) and the bucket headers. */
static int
commit_write(struct dtxn_txn *t)
{
	const bool wu = oocc_opts_t(t)->write_unlock;
	struct dtxn_batch b;
	int reason;

	dtxn_batch_init(&b, t->coord);
	for (uint32_t i = 0; i < t->n_items; i++) {
		struct dtxn_item *it = &t->items[i];
		const struct dtxn_table *tab = it->table;
		const void *bimg = it->slot;

		if (!dtxn_item_writes(it))
			continue;
		if (!wu) {
			/* backups carry no lock: their image has lock 0 */
			void *img = dtxn_txn_alloc(t, tab->slot_size);

			if (img == NULL) {
				dtxn_batch_done(&b);
				return DTXN_ABORT(DTXN_ABORT_TOO_LARGE);
			}
			memcpy(img, it->slot, tab->slot_size);
			oocc_footer_of(tab, img)->lock = 0;
			bimg = img;
			if (it->kind == DTXN_ITEM_INSERT) {
				/* the new record is written locked: release it after */
				it->lock_raddr = it->slot_raddr + tab->slot_size - 8;
				it->flags |= DTXN_ITEM_F_LOCKED;
			}
		}
		dtxn_batch_write(&b, it->slot_raddr, it->slot, tab->slot_size, true);
		for (uint16_t r = 1; r < tab->n_replicas; r++)
			dtxn_batch_write(&b, dtxn_store_replica_raddr(tab, r, it->slot_raddr), bimg,
					 tab->slot_size, true);
	}
	for (uint32_t i = 0; i < t->n_items; i++)
		if (t->items[i].flags & DTXN_ITEM_F_BLOCKED)
			commit_bucket(&b, &t->items[i]);
	/*
	 * posted past validation, it reaches every replica: committed
	 * (recover.c). Decided before the first doorbell: each WRITE unlocks
	 * its record, so a process killed after a doorbell (or between two)
	 * leaves versions that survivors may overwrite before a recovery
	 * looks, which then finds no trace of X; one killed before any
	 * doorbell still write-locks its records, and the recovery lists it
	 * undone (soak run: a WriteCheck's -500 in memory, not counted)
	 */
	reason = dtxn_batch_run_decide_early(&b, t);
	if (reason != DTXN_OK)
		return reason;
	for (uint32_t i = 0; i < t->n_items; i++) {
		/* the bucket headers are unlocked; with write_unlock so are the records */
		t->items[i].flags &= ~DTXN_ITEM_F_BLOCKED;
		if (wu)
			t->items[i].flags &= ~DTXN_ITEM_F_LOCKED;
	}
	return DTXN_OK;
}

/* Waits (yielding) until ww after the locks were in effect. */
static void
commit_wait_lease(struct dtxn_txn *t)
{
	uint64_t at, now;

	if (!oocc_opts_t(t)->lease || (t->cc[OOCC_CC_FLAGS] & OOCC_T_LOCKED) == 0)
		return;
	at = oocc_lease_commit_at(t->cc[OOCC_CC_LOCKED], (uint32_t)t->cc[OOCC_CC_WW]);
	/* the wait is timed on the machine's clock, which may run off true time:
	 * sleep the remainder until that clock has reached @p at */
	for (now = oocc_clock_ns(t); (int64_t)(at - now) > 0; now = oocc_clock_ns(t))
		dtxn_co_sleep_until_lc(t->coord->co, dtxn_now_ns() + (at - now));
}

/* After the commit: unlocks left (write_unlock=0), the address cache. */
static void
commit_finish(struct dtxn_txn *t)
{
	struct dtxn_addr_cache *ac = t->coord->worker->addr_cache;
	struct dtxn_batch b;

	for (uint32_t i = 0; i < t->n_items; i++) {
		const struct dtxn_item *it = &t->items[i];

		if (it->kind == DTXN_ITEM_INSERT)
			dtxn_addr_cache_insert(ac, it->table->def.id, it->key, it->slot_raddr);
		else if (it->kind == DTXN_ITEM_DELETE)
			dtxn_addr_cache_invalidate(ac, it->table->def.id, it->key);
	}
	t->cc[OOCC_CC_LOG_MNS] = 0; /* committed: the record stays valid */
	dtxn_batch_init(&b, t->coord);
	dtxn_txn_unlock_held(t, &b);
	dtxn_batch_post_forget(&b, t, "unlocks");
}

static int
commit_rw(struct dtxn_txn *t)
{
	int reason = commit_validate_log(t);

	if (reason != DTXN_OK)
		goto abort;
	commit_wait_lease(t);
	reason = commit_write(t);
	if (reason != DTXN_OK)
		goto abort;
	commit_finish(t);
	return DTXN_OK;
abort:
	oocc_release(t);
	return reason;
}

int
oocc_commit(struct dtxn_txn *t)
{
	if (dtxn_txn_writes(t))
		return commit_rw(t);
	if (t->n_items == 0)
		return DTXN_OK;
	return commit_ro(t);
}

void
oocc_abort(struct dtxn_txn *t)
{
	oocc_release(t);
}
