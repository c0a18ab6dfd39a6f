/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * FORD commit: validation + undo log (validate.c), then one round writing
 * every written item to its primary (lock kept) and backups, bumping and
 * unlocking the buckets of inserts and deletes, then fire-and-forget
 * unlocks. Read-only txns: validation only.
 *
 * Published mode (doc/guides/ford.md, "FORD as published"): validation
 * skipped without read items and for one-item read-only txns, version
 * only; the busy-wait on the undo records' ACKs; {WRITE lock word
 * (INVISIBLE), WRITE item} per replica; a 1-byte flush READ to each
 * backup of the last written item; the unlock on every replica.
 */
#include <errno.h>
#include <string.h>

#include "ford_private.h"

static const uint64_t g_ford_zero;

/*
 * Slot image for the backups: the primary's with the lock word cleared
 * (published: FORD_INVISIBLE, cleared by the unlock).
 */
static void *
commit_backup_image(struct dtxn_txn *t, const struct dtxn_item *it)
{
	return dtxn_txn_backup_image(t, it, FORD_LOCK_OFF, ford_published(t) ? FORD_INVISIBLE : 0);
}

/* Fills the slot copy as it must look after the txn (primary view). */
static void
commit_prepare_slot(const struct dtxn_txn *t, struct dtxn_item *it)
{
	struct ford_slot *s = ford_slot_of(it);

	if (it->kind == DTXN_ITEM_INSERT) {
		s->hdr.key = it->key;
		s->hdr.table_id = it->table->def.id;
		s->hdr.flags = DTXN_SLOT_VALID;
	} else if (it->kind == DTXN_ITEM_DELETE) {
		s->hdr.flags &= ~DTXN_SLOT_VALID;
	}
	s->lock = ford_commit_lock(t);
	s->version = t->id;
}

static int
commit_write_round(struct dtxn_txn *t)
{
	const struct dtxn_item *last = NULL;
	bool pub = ford_published(t);
	struct dtxn_batch b;
	uint32_t i;
	int rc;

	dtxn_batch_init(&b, t->coord);
	/* slots first, so each MN sees them before the bucket headers */
	for (i = 0; i < t->n_items; i++) {
		struct dtxn_item *it = &t->items[i];
		const struct dtxn_table *tab = it->table;
		struct ford_slot *s = ford_slot_of(it);
		void *bimg;
		unsigned r;

		if (!ford_is_write(it))
			continue;
		commit_prepare_slot(t, it);
		bimg = commit_backup_image(t, it);
		if (bimg == NULL)
			return DTXN_ABORT(DTXN_ABORT_TOO_LARGE);
		if (it->kind == DTXN_ITEM_INSERT || pub) {
			/* a free slot's lock is 0: take it before the slot turns valid;
			 * published: {lock word, item} on every replica (ford.md §3) */
			dtxn_batch_write(&b, it->slot_raddr + FORD_LOCK_OFF, &s->lock, 8, true);
			if (it->kind == DTXN_ITEM_INSERT)
				it->cc[3] = 1; /* ford_release must give it back */
		}
		dtxn_batch_write(&b, it->slot_raddr, s, tab->slot_size, true);
		for (r = 1; r < tab->n_replicas; r++) {
			dtxn_raddr_t ra = dtxn_store_replica_raddr(tab, (uint16_t)r, it->slot_raddr);

			if (pub)
				dtxn_batch_write(&b, ra + FORD_LOCK_OFF,
						 &((struct ford_slot *)bimg)->lock, 8, true);
			dtxn_batch_write(&b, ra, bimg, tab->slot_size, true);
		}
		last = it;
	}
	if (pub && last != NULL) {
		/* selective flush: a 1-byte READ to each backup of the last item only */
		struct ford_coord *fc = t->coord->cc_priv;
		unsigned r;

		for (r = 1; r < last->table->n_replicas; r++)
			dtxn_batch_read(&b, dtxn_store_replica_raddr(last->table, (uint16_t)r,
								     last->slot_raddr),
					fc->flush_buf, 1, true);
	}
	for (i = 0; i < t->n_items; i++) {
		struct dtxn_item *it = &t->items[i];
		struct ford_item *fi = ford_item_of(it);
		unsigned r;

		if (!(it->flags & DTXN_ITEM_F_BLOCKED))
			continue;
		fi->bimg[0] = 0;
		fi->bimg[1] = it->bucket_version + 1;
		for (r = 0; r < it->table->n_replicas; r++)
			dtxn_batch_write(&b, dtxn_store_replica_raddr(it->table, (uint16_t)r,
								      it->bucket_raddr),
					 fi->bimg, 16, true);
	}
	/* posted: committed unless a recovery rolls it back (its locks still
	 * held: struct dtxn_recovery.undone); once it unlocks, a survivor may
	 * overwrite its versions before a recovery looks (ford.md, "Recovery") */
	rc = dtxn_batch_run_decide(&b, t);
	if (rc != DTXN_OK)
		return rc;
	for (i = 0; i < t->n_items; i++)
		t->items[i].flags &= ~DTXN_ITEM_F_BLOCKED; /* the header write unlocked it */
	return DTXN_OK;
}

/* Unsignaled unlocks, not waited for; address-cache upkeep. */
static void
commit_unlock(struct dtxn_txn *t)
{
	struct ford_coord *fc = t->coord->cc_priv;
	struct dtxn_addr_cache *ac = t->coord->worker->addr_cache;
	struct dtxn_batch b;
	uint32_t i;

	dtxn_batch_init(&b, t->coord);
	for (i = 0; i < t->n_items; i++) {
		struct dtxn_item *it = &t->items[i];

		if (it->kind == DTXN_ITEM_INSERT) {
			/* the lock was written, not CASed: release it only if still ours */
			dtxn_batch_cas(&b, it->slot_raddr + FORD_LOCK_OFF, &fc->sink,
				       ford_commit_lock(t), 0, false);
			it->cc[3] = 0;
			dtxn_addr_cache_insert(ac, it->table->def.id, it->key, it->slot_raddr);
		}
		if (it->kind == DTXN_ITEM_DELETE)
			dtxn_addr_cache_invalidate(ac, it->table->def.id, it->key);
		if (ford_published(t) && ford_is_write(it)) {
			/* published: the unlock goes to every replica (ford.md §3) */
			for (unsigned r = 1; r < it->table->n_replicas; r++)
				dtxn_batch_write(&b, dtxn_store_replica_raddr(it->table, (uint16_t)r,
									      it->slot_raddr) +
							     FORD_LOCK_OFF,
						 &g_ford_zero, 8, false);
		}
	}
	dtxn_txn_unlock_held(t, &b);
	dtxn_batch_post_forget(&b, t, "unlocks");
}

/*
 * Published mode (ford.md §3): validation only with read items or RW
 * items found unlocked through their bucket, and not for a read-only txn
 * of one item; the undo records went out at each execution, and their
 * ACKs are busy-waited for before the writes.
 */
static int
commit_validate_pub(struct dtxn_txn *t, bool has_read, bool has_write)
{
	bool deferred = false;
	int reason = DTXN_OK;

	for (uint32_t i = 0; i < t->n_items; i++) {
		const struct ford_item *fi = ford_item_of(&t->items[i]);

		deferred |= fi != NULL && fi->deferred;
	}
	if ((has_read && (has_write || t->n_items > 1)) || deferred)
		reason = ford_validate_and_log(t, false);
	if (reason == DTXN_OK && has_write)
		reason = ford_pub_log_wait(t);
	return reason;
}

int
ford_commit(struct dtxn_txn *t)
{
	bool has_write = false, has_read = false;
	uint32_t i;
	int reason;

	for (i = 0; i < t->n_items; i++) {
		if (ford_is_write(&t->items[i]))
			has_write = true;
		else
			has_read = true;
	}
	if (ford_published(t))
		reason = commit_validate_pub(t, has_read, has_write);
	else if (has_read || has_write)
		reason = ford_validate_and_log(t, has_write);
	else
		reason = DTXN_OK;
	if (reason != DTXN_OK)
		goto abort;
	if (!has_write)
		return DTXN_OK;
	reason = commit_write_round(t);
	if (reason != DTXN_OK)
		goto abort;
	commit_unlock(t);
	return DTXN_OK;
abort:
	ford_release(t);
	return reason;
}

void
ford_abort(struct dtxn_txn *t)
{
	ford_release(t);
}
