/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * FORD execution phase: one round of doorbell batches per call over all
 * MNs; further rounds only for address-cache misses (bucket lookups before
 * locking) and overflow buckets. Each item is a small state machine:
 * issue() adds its WRs to the round's batch, complete() reads the result.
 *
 * Differences from the public code (doc/guides/ford.md): a lock counts as
 * held only when its CAS returned 0 (bug 1); an item re-found through the
 * bucket after a stale cached address is locked like any other (bug 2); no
 * version > txn id rule (bug 5).
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "ford_private.h"

static const uint64_t g_zero;

static inline struct dtxn_addr_cache *
exe_cache(const struct dtxn_txn *t)
{
	return t->coord->worker->addr_cache;
}

/*
 * Another insert/delete item of this txn that holds (or is acquiring) the
 * lock of the bucket at @p braddr: then this item shares it instead of
 * CASing it again (a txn never conflicts with itself).
 */
static bool
exe_bucket_lock_shared(const struct dtxn_txn *t, uint32_t self, dtxn_raddr_t braddr)
{
	uint32_t j;

	for (j = 0; j < t->n_items; j++) {
		const struct dtxn_item *o = &t->items[j];
		const struct ford_item *of = ford_item_of(o);

		if (j == self || of == NULL || o->bucket_raddr != braddr)
			continue;
		if (o->kind != DTXN_ITEM_INSERT && o->kind != DTXN_ITEM_DELETE)
			continue;
		if (of->release)
			continue; /* about to drop it */
		if ((o->flags & DTXN_ITEM_F_BLOCKED) != 0 ||
		    (of->own_block && of->inflight))
			return true;
	}
	return false;
}

/* Free slot of the bucket copy not taken by another insert of this txn. */
static int
exe_free_slot(const struct dtxn_txn *t, uint32_t self, void *bucket)
{
	const struct dtxn_item *it = &t->items[self];
	const struct dtxn_table *tab = it->table;
	unsigned i;
	uint32_t j;

	for (i = 0; i < tab->def.slots_per_bucket; i++) {
		const struct ford_slot *s = dtxn_store_bucket_slot(tab, bucket, i);
		dtxn_raddr_t ra = dtxn_store_slot_raddr(tab, it->bucket_raddr, i);
		bool taken = false;

		if ((s->hdr.flags & DTXN_SLOT_VALID) != 0 || s->lock != 0)
			continue;
		for (j = 0; j < t->n_items && !taken; j++)
			taken = j != self && t->items[j].kind == DTXN_ITEM_INSERT &&
				t->items[j].slot_raddr == ra;
		if (!taken)
			return (int)i;
	}
	return -ENOSPC;
}

/* Adds item @p i's WRs for its current state to the round's batch. */
static int
exe_issue(struct dtxn_txn *t, uint32_t i, struct dtxn_batch *b)
{
	struct dtxn_item *it = &t->items[i];
	struct ford_item *fi = ford_item_of(it);
	const struct dtxn_table *tab = it->table;
	dtxn_raddr_t ra;

	if (fi->release) {
		/* stale cached slot: drop the locks we took on it */
		if (it->flags & DTXN_ITEM_F_LOCKED)
			dtxn_batch_write(b, it->lock_raddr, &g_zero, 8, false);
		if (it->flags & DTXN_ITEM_F_BLOCKED)
			dtxn_batch_write(b, it->block_raddr, &g_zero, 8, false);
		it->flags &= ~(DTXN_ITEM_F_LOCKED | DTXN_ITEM_F_BLOCKED);
		fi->release = 0;
	}
	if (it->bucket == NULL && (fi->state == FORD_S_BKT || fi->state == FORD_S_INS)) {
		it->bucket = dtxn_txn_alloc(t, tab->bucket_size);
		if (it->bucket == NULL)
			return DTXN_ABORT(DTXN_ABORT_TOO_LARGE);
	}
	switch (fi->state) {
	case FORD_S_SLOT:
		dtxn_batch_read(b, it->slot_raddr, it->slot, tab->slot_size, true);
		break;
	case FORD_S_BKT:
	case FORD_S_INS_PROBE:
		ra = dtxn_store_bucket_raddr(tab, 0, dtxn_store_bucket_of(tab, it->key) + fi->probe);
		fi->braddr[fi->probe] = ra;
		dtxn_batch_read(b, ra, it->bucket, tab->bucket_size, true);
		break;
	case FORD_S_LOCK:
		fi->slot_lock_old = FORD_CAS_UNSET;
		dtxn_batch_cas(b, it->slot_raddr + FORD_LOCK_OFF, &fi->slot_lock_old, 0, t->id,
			       true);
		dtxn_batch_read(b, it->slot_raddr, it->slot, tab->slot_size, true);
		it->lock_raddr = it->slot_raddr + FORD_LOCK_OFF; /* where the lock was taken */
		if (it->kind == DTXN_ITEM_DELETE) {
			fi->own_block = !exe_bucket_lock_shared(t, i, it->bucket_raddr);
			fi->bkt_lock_old = FORD_CAS_UNSET;
			if (fi->own_block)
				dtxn_batch_cas(b, it->bucket_raddr, &fi->bkt_lock_old, 0, t->id,
					       true);
			dtxn_batch_read(b, it->bucket_raddr, &fi->bhdr, sizeof(fi->bhdr), true);
			it->block_raddr = it->bucket_raddr;
		}
		break;
	case FORD_S_INS:
		ra = dtxn_store_bucket_raddr(tab, 0, dtxn_store_bucket_of(tab, it->key));
		it->bucket_raddr = ra;
		fi->braddr[0] = ra;
		fi->own_block = !exe_bucket_lock_shared(t, i, ra);
		fi->bkt_lock_old = FORD_CAS_UNSET;
		if (fi->own_block)
			dtxn_batch_cas(b, ra, &fi->bkt_lock_old, 0, t->id, true);
		dtxn_batch_read(b, ra, it->bucket, tab->bucket_size, true);
		it->block_raddr = ra;
		break;
	default:
		return DTXN_OK;
	}
	fi->inflight = 1;
	return DTXN_OK;
}

/* Read item found with an unlocked copy in it->slot. */
static int
exe_read_found(struct dtxn_txn *t, struct dtxn_item *it)
{
	const struct ford_slot *s = ford_slot_of(it);

	if (s->lock != 0 && s->lock != t->id && !ford_skip_lock_check(t))
		return DTXN_ABORT(DTXN_ABORT_LOCKED_READ);
	it->version = s->version;
	it->flags |= DTXN_ITEM_F_EXISTS;
	ford_item_of(it)->state = FORD_S_DONE;
	return DTXN_OK;
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

static int
exe_complete_bkt(struct dtxn_txn *t, struct dtxn_item *it, struct ford_item *fi)
{
	const struct dtxn_table *tab = it->table;
	const struct dtxn_bucket_hdr *bh = it->bucket;
	int idx;

	fi->bver[fi->probe] = bh->version;
	idx = dtxn_store_bucket_find(tab, it->bucket, it->key);
	if (idx >= 0) {
		dtxn_raddr_t braddr = fi->braddr[fi->probe];

		it->bucket_raddr = braddr;
		it->slot_raddr = dtxn_store_slot_raddr(tab, braddr, (unsigned)idx);
		dtxn_addr_cache_insert(exe_cache(t), tab->def.id, it->key, it->slot_raddr);
		if (it->kind == DTXN_ITEM_RO) {
			memcpy(it->slot, dtxn_store_bucket_slot(tab, it->bucket, (unsigned)idx),
			       tab->slot_size);
			return exe_read_found(t, it);
		}
		fi->state = FORD_S_LOCK; /* RW, delete: lock it next round */
		return DTXN_OK;
	}
	if (bh->overflow != 0 && fi->probe + 1 < DTXN_STORE_MAX_PROBE) {
		fi->probe++;
		return DTXN_OK;
	}
	if (it->kind != DTXN_ITEM_RO)
		return DTXN_ABORT(DTXN_ABORT_NOT_FOUND);
	fi->n_bkt = fi->probe + 1; /* absent: validate these buckets */
	it->bucket_raddr = fi->braddr[0];
	it->bucket_version = fi->bver[0];
	fi->state = FORD_S_DONE;
	return DTXN_OK;
}

static int
exe_complete_lock(struct dtxn_txn *t, struct dtxn_item *it, struct ford_item *fi)
{
	const struct ford_slot *s = ford_slot_of(it);

	if (fi->slot_lock_old == 0)
		it->flags |= DTXN_ITEM_F_LOCKED;
	if (it->kind == DTXN_ITEM_DELETE && fi->own_block && fi->bkt_lock_old == 0)
		it->flags |= DTXN_ITEM_F_BLOCKED;
	if (!dtxn_store_slot_matches(it->table, s, it->key)) {
		/* stale address: unlock next round, find it through the bucket */
		fi->release = (it->flags & (DTXN_ITEM_F_LOCKED | DTXN_ITEM_F_BLOCKED)) != 0;
		dtxn_addr_cache_invalidate(exe_cache(t), it->table->def.id, it->key);
		it->flags &= ~DTXN_ITEM_F_CACHED;
		it->slot_raddr = 0;
		it->bucket_raddr = 0;
		fi->own_block = 0;
		fi->probe = 0;
		fi->state = FORD_S_BKT;
		return DTXN_OK;
	}
	if (fi->slot_lock_old != 0)
		return DTXN_ABORT(DTXN_ABORT_LOCK_CONFLICT);
	if (it->kind == DTXN_ITEM_DELETE && fi->own_block && fi->bkt_lock_old != 0)
		return DTXN_ABORT(DTXN_ABORT_LOCK_CONFLICT);
	it->version = s->version;
	it->bucket_version = fi->bhdr.version;
	it->flags |= DTXN_ITEM_F_EXISTS;
	fi->state = FORD_S_DONE;
	return exe_keep_pre(t, it, s);
}

/* Insert: home bucket (probe 0, under its lock) or an overflow bucket. */
static int
exe_complete_ins(struct dtxn_txn *t, uint32_t i, struct dtxn_item *it, struct ford_item *fi)
{
	const struct dtxn_table *tab = it->table;
	const struct dtxn_bucket_hdr *bh = it->bucket;

	if (fi->state == FORD_S_INS) {
		if (fi->own_block) {
			if (fi->bkt_lock_old != 0)
				return DTXN_ABORT(DTXN_ABORT_LOCK_CONFLICT);
			it->flags |= DTXN_ITEM_F_BLOCKED;
		}
		it->bucket_version = bh->version;
		fi->slot_idx = exe_free_slot(t, i, it->bucket);
		if (fi->slot_idx >= 0) {
			int rc;

			it->slot_raddr = dtxn_store_slot_raddr(tab, it->bucket_raddr,
							       (unsigned)fi->slot_idx);
			rc = exe_keep_pre(t, it, dtxn_store_bucket_slot(tab, it->bucket,
								       (unsigned)fi->slot_idx));
			if (rc != DTXN_OK)
				return rc;
		}
	}
	if (dtxn_store_bucket_find(tab, it->bucket, it->key) >= 0)
		return DTXN_ABORT(DTXN_ABORT_EXISTS);
	if (bh->overflow != 0 && fi->probe + 1 < DTXN_STORE_MAX_PROBE) {
		fi->probe++;
		fi->state = FORD_S_INS_PROBE;
		return DTXN_OK;
	}
	if (fi->slot_idx < 0)
		return DTXN_ABORT(DTXN_ABORT_INDEX_FULL);
	fi->state = FORD_S_DONE;
	return DTXN_OK;
}

static int
exe_complete(struct dtxn_txn *t, uint32_t i)
{
	struct dtxn_item *it = &t->items[i];
	struct ford_item *fi = ford_item_of(it);

	if (!fi->inflight)
		return DTXN_OK;
	fi->inflight = 0;
	switch (fi->state) {
	case FORD_S_SLOT:
		if (dtxn_store_slot_matches(it->table, it->slot, it->key))
			return exe_read_found(t, it);
		dtxn_addr_cache_invalidate(exe_cache(t), it->table->def.id, it->key);
		it->flags &= ~DTXN_ITEM_F_CACHED;
		it->slot_raddr = 0;
		fi->probe = 0;
		fi->state = FORD_S_BKT;
		return DTXN_OK;
	case FORD_S_BKT:
		return exe_complete_bkt(t, it, fi);
	case FORD_S_LOCK:
		return exe_complete_lock(t, it, fi);
	case FORD_S_INS:
	case FORD_S_INS_PROBE:
		return exe_complete_ins(t, i, it, fi);
	default:
		return DTXN_OK;
	}
}

/* Sets up the protocol state of a new item and its first step. */
static int
exe_prepare(struct dtxn_txn *t, struct dtxn_item *it)
{
	struct ford_item *fi = dtxn_txn_item_prepare(t, it, sizeof(*fi));
	bool cached;

	if (fi == NULL)
		return DTXN_ABORT(DTXN_ABORT_TOO_LARGE);
	cached = (it->flags & DTXN_ITEM_F_CACHED) != 0;
	fi->slot_idx = -1;
	fi->slot_lock_old = FORD_CAS_UNSET;
	fi->bkt_lock_old = FORD_CAS_UNSET;
	switch (it->kind) {
	case DTXN_ITEM_RO:
		fi->state = cached ? FORD_S_SLOT : FORD_S_BKT;
		break;
	case DTXN_ITEM_RW:
	case DTXN_ITEM_DELETE:
		fi->state = cached ? FORD_S_LOCK : FORD_S_BKT;
		break;
	default:
		fi->state = FORD_S_INS;
		break;
	}
	return DTXN_OK;
}

static bool
exe_done(const struct dtxn_txn *t, uint32_t i)
{
	return ford_item_of(&t->items[i])->state == FORD_S_DONE;
}

static const struct dtxn_round_ops exe_rounds = {
	.done = exe_done,
	.issue = exe_issue,
	.complete = exe_complete,
};

int
ford_execute(struct dtxn_txn *t)
{
	uint32_t i;
	int reason = DTXN_OK;

	for (i = t->n_fetched; i < t->n_items && reason == DTXN_OK; i++)
		reason = exe_prepare(t, &t->items[i]);
	if (reason == DTXN_OK)
		reason = dtxn_txn_rounds(t, &exe_rounds);
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
			dtxn_batch_cas(&b, it->slot_raddr + FORD_LOCK_OFF, &fc->sink, t->id, 0,
				       false);
			it->cc[3] = 0;
		}
	}
	dtxn_txn_unlock_held(t, &b);
	dtxn_batch_post_forget(&b, t, "lock release");
}
