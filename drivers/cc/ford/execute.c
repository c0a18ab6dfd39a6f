/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * FORD execution phase: one round of doorbell batches per call over all
 * MNs; further rounds only for address-cache misses (bucket lookups before
 * locking) and overflow buckets. Each item is lib/txn's locating state
 * machine (locate.c: cached slot, bucket chain, {CAS lock, READ slot},
 * inserts under the bucket lock); what is FORD's is here: a read checks
 * the slot's lock word, a delete also locks its bucket, the slot image
 * read under a lock (or an insert's free slot) is kept for the undo log,
 * and an insert takes only a free slot whose lock word is 0.
 *
 * Differences from the public code (doc/guides/ford.md): a lock counts as
 * held only when its CAS returned 0 (bug 1); an item re-found through the
 * bucket after a stale cached address is locked like any other (bug 2); no
 * version > txn id rule (bug 5). Published mode (published=1) reads
 * locked records that are not INVISIBLE, as the public code does, and
 * writes an undo record at the end of every execution (pub_log.c).
 */
#include <string.h>

#include "ford_private.h"

static int exe_keep_pre(struct dtxn_txn *t, struct dtxn_item *it, const void *img);

/* Read item (or published deferred RW item) found with an unlocked copy in it->slot. */
static int
exe_read(struct dtxn_txn *t, uint32_t i)
{
	struct dtxn_item *it = &t->items[i];
	const struct ford_slot *s = ford_slot_of(it);

	if (ford_published(t)) {
		/* locked but visible is readable; only a commit in progress aborts */
		if ((s->lock & FORD_INVISIBLE) != 0)
			return DTXN_ABORT(DTXN_ABORT_INVISIBLE);
	} else if (dtxn_txn_lock_foreign(t, s->lock) && !dtxn_txn_weakened(t, DTXN_DEBUG_SKIP_LOCK_CHECK) /* test aid */) {
		dtxn_fa_holder(t, it, s->lock);
		return DTXN_ABORT(DTXN_ABORT_LOCKED_READ);
	}
	it->version = s->version;
	it->flags = (it->flags | DTXN_ITEM_F_EXISTS) & ~DTXN_ITEM_F_TOMB;
	ford_item_of(it)->loc.step = DTXN_LOC_DONE;
	if (it->kind == DTXN_ITEM_RW) {
		/* published: found through its bucket, locked in validation */
		ford_item_of(it)->deferred = true;
		return exe_keep_pre(t, it, s);
	}
	return DTXN_OK;
}

/* Whether slot image @p s is @p it's key's tombstone (a never used slot has version 0). */
static bool
exe_is_tomb(const struct dtxn_item *it, const struct ford_slot *s)
{
	return (s->hdr.flags & DTXN_SLOT_VALID) == 0 && s->version != 0 &&
	       s->hdr.key == it->key && s->hdr.table_id == it->table->def.id;
}

/*
 * The key's tombstone in bucket copy @p bucket: a slot no longer valid
 * that still holds the key (a delete clears only DTXN_SLOT_VALID and
 * leaves the deleter's id as version, commit.c), or NULL.
 */
static const struct ford_slot *
exe_tomb(const struct dtxn_item *it, void *bucket)
{
	const struct dtxn_table *tab = it->table;

	for (unsigned k = 0; k < tab->def.slots_per_bucket; k++) {
		const struct ford_slot *s = dtxn_store_bucket_slot(tab, bucket, k);

		if (exe_is_tomb(it, s))
			return s;
	}
	return NULL;
}

/*
 * Lookup missed in a bucket: a read item that finds its key's tombstone in
 * the home bucket reports the delete (DTXN_ITEM_F_TOMB, deleter's id).
 * Only the home bucket: inserts take their slot there, their own
 * tombstone first (own_free_first), so the key has at most one tombstone
 * there and it is the key's last version; a tombstone left in an
 * overflow bucket by a loaded record may be older and is not reported.
 * The bucket versions validated for the absent read cover it.
 */
static int
exe_miss(struct dtxn_txn *t, uint32_t i)
{
	struct dtxn_item *it = &t->items[i];
	const struct ford_slot *s;

	if (it->kind != DTXN_ITEM_RO || ford_item_of(it)->loc.probe != 0)
		return DTXN_OK;
	s = exe_tomb(it, it->bucket);
	if (s != NULL) {
		it->version = s->version;
		it->flags |= DTXN_ITEM_F_TOMB;
	}
	return DTXN_OK;
}

/* Published: an RW item found through its bucket is not locked in execution (ford.md §3). */
static bool
exe_defer_lock(const struct dtxn_txn *t, uint32_t i)
{
	RTE_SET_USED(i);
	return ford_published(t);
}

/* Keeps the slot image as read under the lock, for the undo log. */
static int
exe_keep_pre(struct dtxn_txn *t, struct dtxn_item *it, const void *img)
{
	struct ford_item *fi = ford_item_of(it);

	if (fi->pre == NULL) {
		fi->pre = dtxn_txn_alloc(t, it->table->slot_size);
		if (fi->pre == NULL)
			return DTXN_ABORT(DTXN_ABORT_TOO_LARGE);
	}
	memcpy(fi->pre, img, it->table->slot_size);
	return DTXN_OK;
}

/* A delete also takes its bucket's lock and reads the bucket header. */
static void
exe_lock_issue(struct dtxn_txn *t, uint32_t i, struct dtxn_batch *b)
{
	dtxn_loc_delete_issue(t, i, b, &ford_item_of(&t->items[i])->bhdr);
}

/* RW/delete locked: the slot as read under the lock. */
static int
exe_locked(struct dtxn_txn *t, uint32_t i)
{
	struct dtxn_item *it = &t->items[i];
	struct ford_item *fi = ford_item_of(it);
	const struct ford_slot *s = ford_slot_of(it);

	it->version = s->version;
	it->bucket_version = fi->bhdr.version;
	it->flags |= DTXN_ITEM_F_EXISTS;
	fi->loc.step = DTXN_LOC_DONE;
	return exe_keep_pre(t, it, s);
}

/*
 * Insert: the free slot's old image goes to the undo log. Over the key's
 * own tombstone (taken first, own_free_first) the insert follows the
 * delete: DTXN_ITEM_F_TOMB, the deleter's id. Read under the bucket lock.
 */
static int
exe_ins_slot(struct dtxn_txn *t, uint32_t i, const void *slot)
{
	struct dtxn_item *it = &t->items[i];
	const struct ford_slot *s = slot;

	if (exe_is_tomb(it, s)) {
		it->version = s->version;
		it->flags |= DTXN_ITEM_F_TOMB;
	}
	return exe_keep_pre(t, it, slot);
}

/* A free slot whose lock word is 0: no commit of an insert is writing it. */
static bool
exe_slot_free(const struct dtxn_table *tab, const void *slot)
{
	RTE_SET_USED(tab);
	return ((const struct ford_slot *)slot)->lock == 0;
}

static const struct dtxn_loc_ops exe_loc = {
	.item_size = sizeof(struct ford_item),
	.lock_off = FORD_LOCK_OFF,
	.slot_free = exe_slot_free,
	.own_free_first = true,
	.miss = exe_miss,
	.defer_lock = exe_defer_lock,
	.read = exe_read,
	.lock_issue = exe_lock_issue,
	.locked = exe_locked,
	.ins_slot = exe_ins_slot,
};

/* True if the txn has a written item (FORD's ExeRW rather than ExeRO). */
static bool
exe_writes(const struct dtxn_txn *t)
{
	for (uint32_t i = 0; i < t->n_items; i++)
		if (ford_is_write(&t->items[i]))
			return true;
	return false;
}

int
ford_execute(struct dtxn_txn *t)
{
	int reason = dtxn_loc_execute(t, &exe_loc);

	if (ford_published(t) && exe_writes(t)) {
		/* the undo record of every execution, failed ones too (ford.md §3) */
		int lr = ford_pub_log(t);

		if (reason == DTXN_OK)
			reason = lr;
	}
	if (reason != DTXN_OK)
		ford_release(t);
	return reason;
}

void
ford_release(struct dtxn_txn *t)
{
	struct ford_coord *fc = t->coord->cc_priv;
	struct dtxn_batch b;
	uint32_t i;

	dtxn_batch_init(&b, t->coord);
	for (i = 0; i < t->n_items; i++) {
		struct dtxn_item *it = &t->items[i];

		if (it->kind == DTXN_ITEM_INSERT && it->cc[3] != 0) {
			/* commit failed after writing the new slot's lock word */
			dtxn_batch_cas(&b, it->slot_raddr + FORD_LOCK_OFF, &fc->sink,
				       ford_commit_lock(t), 0, false);
			it->cc[3] = 0;
		}
	}
	dtxn_txn_unlock_held(t, &b);
	dtxn_batch_post_forget(&b, t, "lock release");
}
