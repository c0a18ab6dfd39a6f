/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Locating items in the hash index (dtxn_txn_driver.h, "Locating items"):
 * the steps an execution phase takes to find, read and lock an item's
 * slot on its primary MN, each item a small state machine run by
 * dtxn_txn_rounds(): issue adds its WRs for its step to the round's
 * batch, complete reads the results and picks the next step.
 *
 *   DTXN_LOC_SLOT       READ slot at the cached address; a header that
 *                       does not hold the key: forget it, look it up
 *   DTXN_LOC_BKT        READ bucket probe p; key there: cache its address
 *                       (read item: ops->read; RW/delete: lock it next
 *                       round); overflow flag: probe p + 1; else absent
 *   DTXN_LOC_LOCK       {CAS record lock, READ slot} (+ ops->lock_issue);
 *                       a stale slot gives its locks back next round and
 *                       is looked up; else ops->locked
 *   DTXN_LOC_INS        {CAS home bucket lock unless shared, READ bucket}:
 *                       free slot, then the key must be in no bucket
 *   DTXN_LOC_INS_PROBE  READ overflow bucket p (existence)
 *   DTXN_LOC_INS_AUX    FAA the aux heap's bump word: a chunk of areas
 *                       for an insert into a slot that has none (aux.c)
 *
 * A lock counts as held only when its CAS returned 0 (DTXN_ITEM_F_LOCKED,
 * F_BLOCKED); the protocols release exactly those (dtxn_txn_unlock_held()).
 * A protocol that locks on the CNs (dtxn_loc_ops.cn_locks) has no lock
 * round and no bucket CAS: every item is located as a read item is.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "txn_private.h"

static inline struct dtxn_addr_cache *
loc_cache(const struct dtxn_txn *t)
{
	return t->coord->worker->addr_cache;
}

/* Item @p it's slot is the one of image @p slot: note its aux area. */
static inline void
loc_aux_seen(struct dtxn_item *it, const void *slot)
{
	if (it->table->aux_size != 0)
		it->aux = dtxn_store_slot_aux(slot);
}

int
txn_bucket_buf(struct dtxn_txn *t, struct dtxn_item *it)
{
	if (it->bucket == NULL) {
		it->bucket = dtxn_txn_alloc(t, it->table->bucket_size);
		if (it->bucket == NULL)
			return DTXN_ABORT(DTXN_ABORT_TOO_LARGE);
	}
	return DTXN_OK;
}

int
dtxn_txn_read_bucket(struct dtxn_txn *t, struct dtxn_item *it, unsigned probe,
		     dtxn_raddr_t *raddr, struct dtxn_batch *b)
{
	const struct dtxn_table *tab = it->table;

	if (txn_bucket_buf(t, it) != DTXN_OK)
		return DTXN_ABORT(DTXN_ABORT_TOO_LARGE);
	*raddr = dtxn_store_bucket_raddr(tab, 0, dtxn_store_bucket_of(tab, it->key) + probe);
	dtxn_batch_read(b, *raddr, it->bucket, tab->bucket_size, true);
	return DTXN_OK;
}

/* Whether slot @p i of @p bucket suits insert @p self: free and accepted
 * by @p usable (NULL: any), or (@p reuse non-NULL) valid and accepted by
 * @p reuse; and no other insert of the txn took it. */
static bool
loc_slot_ok(const struct dtxn_txn *t, uint32_t self, const void *bucket, unsigned i,
	    bool (*usable)(const struct dtxn_table *, const void *),
	    bool (*reuse)(const struct dtxn_txn *, const struct dtxn_table *, const void *))
{
	const struct dtxn_item *it = &t->items[self];
	const struct dtxn_table *tab = it->table;
	const struct dtxn_slot_hdr *h = dtxn_store_bucket_slot(tab, (void *)(uintptr_t)bucket, i);
	dtxn_raddr_t ra = dtxn_store_slot_raddr(tab, it->bucket_raddr, i);

	if (reuse == NULL ? (h->flags & DTXN_SLOT_VALID) != 0 || (usable != NULL && !usable(tab, h))
			  : (h->flags & DTXN_SLOT_VALID) == 0 || !reuse(t, tab, h))
		return false;
	for (uint32_t j = 0; j < t->n_items; j++)
		if (j != self && t->items[j].kind == DTXN_ITEM_INSERT &&
		    t->items[j].slot_raddr == ra)
			return false;
	return true;
}

/* A free slot of @p bucket (read from item @p self's bucket_raddr) that
 * @p usable accepts (NULL: any) and no other insert of the txn took; else,
 * with @p reuse, a deleted record's slot it accepts (*reused set). */
static int
loc_free_slot(const struct dtxn_txn *t, uint32_t self, const void *bucket,
	      bool (*usable)(const struct dtxn_table *, const void *),
	      bool (*reuse)(const struct dtxn_txn *, const struct dtxn_table *, const void *),
	      uint8_t *reused)
{
	const struct dtxn_table *tab = t->items[self].table;
	unsigned i;

	/* a free slot that has an aux area first: it needs no new one */
	for (i = 0; tab->aux_size != 0 && i < tab->def.slots_per_bucket; i++)
		if (dtxn_store_slot_aux(dtxn_store_bucket_slot(tab, (void *)(uintptr_t)bucket, i)) != 0 &&
		    loc_slot_ok(t, self, bucket, i, usable, NULL))
			return (int)i;
	for (i = 0; i < tab->def.slots_per_bucket; i++)
		if (loc_slot_ok(t, self, bucket, i, usable, NULL))
			return (int)i;
	for (i = 0; reuse != NULL && i < tab->def.slots_per_bucket; i++)
		if (loc_slot_ok(t, self, bucket, i, NULL, reuse)) {
			*reused = 1;
			return (int)i;
		}
	return -ENOSPC;
}

/* The free slot of insert @p self's home bucket copy that still holds its
 * key (its own deleted record), or -ENOENT; -EBUSY if @p usable refuses it. */
static int
loc_own_free_slot(const struct dtxn_txn *t, uint32_t self,
		  bool (*usable)(const struct dtxn_table *, const void *))
{
	const struct dtxn_item *it = &t->items[self];
	const struct dtxn_table *tab = it->table;

	for (unsigned i = 0; i < tab->def.slots_per_bucket; i++) {
		const struct dtxn_slot_hdr *h = dtxn_store_bucket_slot(tab, it->bucket, i);

		if ((h->flags & DTXN_SLOT_VALID) != 0 || h->key != it->key ||
		    h->table_id != tab->def.id)
			continue;
		return loc_slot_ok(t, self, it->bucket, i, usable, NULL) ? (int)i : -EBUSY;
	}
	return -ENOENT;
}

int
dtxn_txn_free_slot(const struct dtxn_txn *t, uint32_t self, const void *bucket)
{
	return loc_free_slot(t, self, bucket, NULL, NULL, NULL);
}

void *
dtxn_loc_prepare(struct dtxn_txn *t, uint32_t i, const struct dtxn_loc_ops *ops)
{
	struct dtxn_item *it = &t->items[i];
	struct dtxn_loc *l = dtxn_txn_item_prepare(t, it, RTE_MAX(ops->item_size, sizeof(*l)));
	bool cached;

	if (l == NULL)
		return NULL;
	cached = (it->flags & DTXN_ITEM_F_CACHED) != 0;
	l->slot_idx = -1;
	l->lock_old = DTXN_LOC_CAS_UNSET;
	l->block_old = DTXN_LOC_CAS_UNSET;
	if (it->kind == DTXN_ITEM_INSERT)
		l->step = DTXN_LOC_INS;
	else if (!cached)
		l->step = DTXN_LOC_BKT;
	else if (it->kind == DTXN_ITEM_RO || ops->cn_locks)
		l->step = DTXN_LOC_SLOT;
	else
		l->step = DTXN_LOC_LOCK; /* RW, delete */
	if (ops->prepare != NULL)
		ops->prepare(t, i);
	return l;
}

int
dtxn_loc_reread(struct dtxn_txn *t, uint32_t i, unsigned max)
{
	struct dtxn_item *it = &t->items[i];
	struct dtxn_loc *l = dtxn_loc_of(it);

	if (++l->retries > max)
		return DTXN_ABORT(DTXN_ABORT_INVISIBLE);
	l->step = it->slot_raddr != 0 ? DTXN_LOC_SLOT : DTXN_LOC_BKT;
	l->probe = 0;
	return DTXN_OK;
}

bool
dtxn_loc_done(const struct dtxn_txn *t, uint32_t i)
{
	return dtxn_loc_of(&t->items[i])->step == DTXN_LOC_DONE;
}

/* Where item @p it's record lock word is: at ops->lock_off, or the slot's last 8 B. */
static inline dtxn_raddr_t
loc_lock_raddr(const struct dtxn_loc_ops *ops, const struct dtxn_item *it)
{
	return it->slot_raddr + (ops->lock_last ? it->table->slot_size - 8 : ops->lock_off);
}

/* ------------------------------------------------------------------ */
/* Bucket locks                                                       */
/* ------------------------------------------------------------------ */

bool
dtxn_loc_block_shared(const struct dtxn_txn *t, uint32_t self, dtxn_raddr_t braddr)
{
	for (uint32_t j = 0; j < t->n_items; j++) {
		const struct dtxn_item *o = &t->items[j];
		const struct dtxn_loc *ol = dtxn_loc_of(o);

		if (j == self || ol == NULL || o->block_raddr != braddr || ol->release)
			continue;
		if (o->kind != DTXN_ITEM_INSERT && o->kind != DTXN_ITEM_DELETE)
			continue;
		if ((o->flags & DTXN_ITEM_F_BLOCKED) != 0)
			return true;
		/* an earlier item CASes it in this round */
		if (j < self && ol->own_block &&
		    (ol->step == DTXN_LOC_INS || ol->step == DTXN_LOC_LOCK))
			return true;
		/*
		 * an earlier item's CAS is in the batch being built outside the
		 * rounds (a located delete whose bucket lock a protocol takes at
		 * commit, e.g. Scythe's): a second CAS behind it on the same word
		 * would find the txn's own lock and abort the txn, every time
		 * (TPC-C Delivery's NEW-ORDER rows of two districts in one bucket)
		 */
		if (j < self && ol->own_block && ol->block_old == DTXN_LOC_CAS_UNSET)
			return true;
	}
	return false;
}

/* Item @p i's bucket lock is the one of item->bucket_raddr: CAS it, or share it? */
static bool
loc_block_take(struct dtxn_txn *t, uint32_t i)
{
	struct dtxn_item *it = &t->items[i];
	struct dtxn_loc *l = dtxn_loc_of(it);

	it->block_raddr = it->bucket_raddr;
	l->own_block = !dtxn_loc_block_shared(t, i, it->bucket_raddr);
	return l->own_block;
}

void
dtxn_loc_block_cas(struct dtxn_txn *t, uint32_t i, struct dtxn_batch *b)
{
	struct dtxn_item *it = &t->items[i];
	struct dtxn_loc *l = dtxn_loc_of(it);

	l->block_old = DTXN_LOC_CAS_UNSET;
	if (loc_block_take(t, i))
		dtxn_batch_cas(b, it->block_raddr, &l->block_old, 0, t->id, true);
}

void
dtxn_loc_delete_issue(struct dtxn_txn *t, uint32_t i, struct dtxn_batch *b,
		      struct dtxn_bucket_hdr *hdr)
{
	struct dtxn_item *it = &t->items[i];

	if (it->kind != DTXN_ITEM_DELETE)
		return;
	dtxn_loc_block_cas(t, i, b);
	dtxn_batch_read(b, it->bucket_raddr, hdr, sizeof(*hdr), true);
}

/* An insert's bucket is its key's home bucket. */
static void
loc_ins_home(struct dtxn_item *it)
{
	it->bucket_raddr = dtxn_store_bucket_raddr(it->table, 0,
						   dtxn_store_bucket_of(it->table, it->key));
}

dtxn_raddr_t
dtxn_loc_round_lock(struct dtxn_txn *t, uint32_t i, const struct dtxn_loc_ops *ops)
{
	struct dtxn_item *it = &t->items[i];

	switch (dtxn_loc_of(it)->step) {
	case DTXN_LOC_LOCK:
		return loc_lock_raddr(ops, it);
	case DTXN_LOC_INS:
		loc_ins_home(it);
		return !ops->cn_locks && loc_block_take(t, i) ? it->bucket_raddr : 0;
	default:
		return 0;
	}
}

/* ------------------------------------------------------------------ */
/* Issuing                                                            */
/* ------------------------------------------------------------------ */

/*
 * Insert @p i into a direct-indexed table: 1 + the index of an earlier
 * insert of this round that READs the same home bucket (its copy serves
 * both), or 0. Hashed tables always READ their own: two inserts of a txn
 * rarely share a hashed bucket, and every figure before the direct index
 * stays as it was.
 */
static uint32_t
loc_ins_bucket_read_by(const struct dtxn_txn *t, uint32_t i)
{
	const struct dtxn_item *it = &t->items[i];

	if (!(it->table->def.flags & DTXN_TABLE_F_DIRECT_INDEX))
		return 0;
	for (uint32_t j = 0; j < i; j++) {
		const struct dtxn_item *o = &t->items[j];
		const struct dtxn_loc *ol = dtxn_loc_of(o);

		if (o->kind == DTXN_ITEM_INSERT && ol != NULL && ol->step == DTXN_LOC_INS &&
		    ol->inflight && ol->bkt_from == 0 && o->table == it->table &&
		    o->bucket_raddr == it->bucket_raddr)
			return j + 1;
	}
	return 0;
}

/* The ops of the protocol whose items the coordinator is locating. */
static inline const struct dtxn_loc_ops *
loc_ops_of(const struct dtxn_txn *t)
{
	return txn_coord_of(t->coord)->loc_ops;
}

/* Adds item @p i's WRs for its step to the round's batch. */
static int
loc_issue(struct dtxn_txn *t, uint32_t i, struct dtxn_batch *b)
{
	const struct dtxn_loc_ops *ops = loc_ops_of(t);
	struct dtxn_item *it = &t->items[i];
	struct dtxn_loc *l = dtxn_loc_of(it);
	const struct dtxn_table *tab = it->table;
	int rc = DTXN_OK;

	if (l->release) {
		/* stale cached slot: drop the locks we took on it */
		txn_unlock_into(it, b);
		l->release = 0;
	}
	switch (l->step) {
	case DTXN_LOC_SLOT:
		dtxn_batch_read(b, it->slot_raddr, it->slot, tab->slot_size, true);
		break;
	case DTXN_LOC_BKT:
	case DTXN_LOC_INS_PROBE:
		rc = dtxn_txn_read_bucket(t, it, l->probe, &l->braddr[l->probe], b);
		break;
	case DTXN_LOC_LOCK:
		l->lock_old = DTXN_LOC_CAS_UNSET;
		it->lock_raddr = loc_lock_raddr(ops, it); /* where the lock is taken */
		if (it->lock_bits != 0)
			dtxn_batch_masked_cas(b, it->lock_raddr, &l->lock_old, 0, it->lock_bits,
					      it->lock_bits, it->lock_bits, true);
		else
			dtxn_batch_cas(b, it->lock_raddr, &l->lock_old, 0, t->id, true);
		dtxn_batch_read(b, it->slot_raddr, it->slot, tab->slot_size, true);
		if (ops->lock_issue != NULL)
			ops->lock_issue(t, i, b);
		break;
	case DTXN_LOC_INS:
		rc = txn_bucket_buf(t, it); /* before the CAS: a CAS posted must complete */
		if (rc != DTXN_OK)
			break;
		loc_ins_home(it);
		l->braddr[0] = it->bucket_raddr;
		if (!ops->cn_locks)
			dtxn_loc_block_cas(t, i, b);
		l->bkt_from = loc_ins_bucket_read_by(t, i);
		if (l->bkt_from == 0)
			dtxn_batch_read(b, it->bucket_raddr, it->bucket, tab->bucket_size, true);
		break;
	case DTXN_LOC_INS_AUX:
		if (ops->aux_share) { /* no MN atomic: where the load stopped, where we stopped */
			uint32_t word = txn_aux_share_word(t->coord, tab);

			dtxn_batch_read(b, dtxn_store_aux_bump_raddr(tab, it->slot_raddr), &l->aux_old,
					sizeof(l->aux_old), true);
			l->aux_word = 0;
			if (word != 0)
				dtxn_batch_read(b, dtxn_store_aux_area_raddr(tab, 0, it->slot_raddr, word),
						&l->aux_word, sizeof(l->aux_word), true);
		} else
			dtxn_batch_faa(b, dtxn_store_aux_bump_raddr(tab, it->slot_raddr), &l->aux_old,
				       t->coord->worker->db->cat.aux_chunk, true);
		break;
	case DTXN_LOC_DONE:
		return DTXN_OK;
	default:
		rc = ops->issue(t, i, b);
		break;
	}
	if (rc == DTXN_OK)
		l->inflight = 1;
	return rc;
}

/* ------------------------------------------------------------------ */
/* Completion                                                         */
/* ------------------------------------------------------------------ */

/* The slot at it->slot_raddr is not the key's: forget it, look the key up. */
static void
loc_forget(struct dtxn_txn *t, struct dtxn_item *it, struct dtxn_loc *l)
{
	dtxn_addr_cache_invalidate(loc_cache(t), it->table->def.id, it->key);
	it->flags &= ~DTXN_ITEM_F_CACHED;
	it->slot_raddr = 0;
	l->probe = 0;
	l->step = DTXN_LOC_BKT;
}

/* Lookup through the bucket chain. */
static int
loc_on_bucket(struct dtxn_txn *t, uint32_t i, const struct dtxn_loc_ops *ops)
{
	struct dtxn_item *it = &t->items[i];
	struct dtxn_loc *l = dtxn_loc_of(it);
	const struct dtxn_table *tab = it->table;
	const struct dtxn_bucket_hdr *bh = it->bucket;
	int idx;

	l->bver[l->probe] = bh->version;
	idx = dtxn_store_bucket_find(tab, it->bucket, it->key);
	if (idx >= 0) {
		it->bucket_raddr = l->braddr[l->probe];
		it->slot_raddr = dtxn_store_slot_raddr(tab, it->bucket_raddr, (unsigned)idx);
		loc_aux_seen(it, dtxn_store_bucket_slot(tab, it->bucket, (unsigned)idx));
		dtxn_addr_cache_insert(loc_cache(t), tab->def.id, it->key, it->slot_raddr);
		if (it->kind != DTXN_ITEM_RO && !ops->cn_locks &&
		    !(it->kind == DTXN_ITEM_RW && ops->defer_lock != NULL && ops->defer_lock(t, i))) {
			l->step = DTXN_LOC_LOCK; /* RW, delete: lock it next round */
			return DTXN_OK;
		}
		memcpy(it->slot, dtxn_store_bucket_slot(tab, it->bucket, (unsigned)idx),
		       tab->slot_size);
		return ops->read(t, i);
	}
	if (ops->miss != NULL) {
		int rc = ops->miss(t, i);

		if (rc != DTXN_OK)
			return rc;
	}
	if (dtxn_bucket_overflows(bh) && l->probe + 1 < DTXN_STORE_MAX_PROBE) {
		l->probe++;
		return DTXN_OK;
	}
	if (it->kind != DTXN_ITEM_RO)
		return DTXN_ABORT(DTXN_ABORT_NOT_FOUND);
	/* absent: validated through the versions of the buckets visited */
	l->n_bkt = l->probe + 1;
	it->bucket_raddr = l->braddr[0];
	it->bucket_version = l->bver[0];
	it->flags &= ~DTXN_ITEM_F_EXISTS;
	l->step = DTXN_LOC_DONE;
	return DTXN_OK;
}

/*
 * Whether the lock round's CAS took the record lock: the whole word was 0,
 * or none of the item's lock bits was set (masked CAS, it->lock_bits).
 */
static bool
loc_record_locked(const struct dtxn_item *it, const struct dtxn_loc *l)
{
	return it->lock_bits != 0 ? l->lock_old != DTXN_LOC_CAS_UNSET &&
					    (l->lock_old & it->lock_bits) == 0 :
				    l->lock_old == 0;
}

/* Whether @p it's lock conflicts are classified (FORD, Motor: whole-word locks; false_abort.c). */
static bool
loc_fa(const struct dtxn_txn *t, const struct dtxn_item *it)
{
	return it->lock_bits == 0 && t->coord->worker->db->fa != NULL;
}

/* {CAS record lock, READ slot} (and the lock_issue WRs) came back. */
static int
loc_on_lock(struct dtxn_txn *t, uint32_t i, const struct dtxn_loc_ops *ops)
{
	struct dtxn_item *it = &t->items[i];
	struct dtxn_loc *l = dtxn_loc_of(it);

	if (loc_record_locked(it, l))
		it->flags |= DTXN_ITEM_F_LOCKED;
	if (l->own_block && l->block_old == 0)
		it->flags |= DTXN_ITEM_F_BLOCKED;
	/* (an insert reusing a deleted record's slot locks that record) */
	if (!l->reuse && !dtxn_store_slot_matches(it->table, it->slot, it->key)) {
		/* stale address: unlock next round, find it through the bucket */
		l->release = (it->flags & (DTXN_ITEM_F_LOCKED | DTXN_ITEM_F_BLOCKED)) != 0;
		loc_forget(t, it, l);
		it->bucket_raddr = 0;
		l->own_block = 0;
		/* an insert found its key's slot in the bucket it locked: cannot move */
		if (it->kind == DTXN_ITEM_INSERT)
			return DTXN_ABORT(DTXN_ABORT_LOCK_CONFLICT);
		return DTXN_OK;
	}
	if (!loc_record_locked(it, l) || (l->own_block && l->block_old != 0)) {
		if (loc_fa(t, it)) /* record-level: would a cell-level protocol conflict? */
			loc_record_locked(it, l) ? dtxn_fa_verdict(t, false) :
						   dtxn_fa_holder(t, it, l->lock_old);
		return DTXN_ABORT(DTXN_ABORT_LOCK_CONFLICT); /* no waiting: no deadlock */
	}
	if (loc_fa(t, it))
		dtxn_fa_locked(t, it);
	loc_aux_seen(it, it->slot);
	return ops->locked(t, i);
}

/* Insert: its home bucket came back under its lock (with cn_locks, one
 * the protocol took on a CN: own_block is then the protocol's): take a
 * free slot. */
static int
loc_ins_slot(struct dtxn_txn *t, uint32_t i, const struct dtxn_loc_ops *ops)
{
	struct dtxn_item *it = &t->items[i];
	struct dtxn_loc *l = dtxn_loc_of(it);
	const struct dtxn_table *tab = it->table;

	if (l->own_block && !ops->cn_locks) {
		if (l->block_old != 0)
			return DTXN_ABORT(DTXN_ABORT_LOCK_CONFLICT);
		it->flags |= DTXN_ITEM_F_BLOCKED;
	}
	it->bucket_version = ((const struct dtxn_bucket_hdr *)it->bucket)->version;
	l->reuse = 0;
	/* own_free_first: the key's own deleted record's slot, if still free */
	l->slot_idx = ops->own_free_first ? loc_own_free_slot(t, i, ops->slot_free) : -ENOENT;
	if (l->slot_idx == -EBUSY)
		return DTXN_ABORT(DTXN_ABORT_LOCK_CONFLICT);
	if (l->slot_idx < 0)
		l->slot_idx = loc_free_slot(t, i, it->bucket, ops->slot_free,
					    ops->ins_reuse != NULL ? ops->slot_reuse : NULL,
					    &l->reuse);
	if (l->slot_idx < 0)
		return DTXN_OK; /* index_full, unless the key turns out to exist */
	if (it->flags & DTXN_ITEM_F_AUX_NEW) { /* a slot taken before: its new area back */
		txn_aux_put(txn_coord_of(t->coord), tab, it->slot_raddr, it->aux);
		it->flags &= ~DTXN_ITEM_F_AUX_NEW;
	}
	it->slot_raddr = dtxn_store_slot_raddr(tab, it->bucket_raddr, (unsigned)l->slot_idx);
	loc_aux_seen(it, dtxn_store_bucket_slot(tab, it->bucket, (unsigned)l->slot_idx));
	if (ops->ins_slot == NULL)
		return DTXN_OK;
	return ops->ins_slot(t, i, dtxn_store_bucket_slot(tab, it->bucket, (unsigned)l->slot_idx));
}

/* Insert: no aux area left for it. */
static int
loc_aux_full(const struct dtxn_item *it)
{
	TXN_LOG(DEBUG, "table %s: aux heap full (%" PRIu64 " areas): insert aborts",
		it->table->def.name, it->table->aux_areas);
	return DTXN_ABORT(DTXN_ABORT_INDEX_FULL);
}

/* Insert: home bucket (probe 0) or an overflow bucket: the key must be in none. */
static int
loc_on_insert(struct dtxn_txn *t, uint32_t i, const struct dtxn_loc_ops *ops)
{
	struct dtxn_item *it = &t->items[i];
	struct dtxn_loc *l = dtxn_loc_of(it);
	int idx, rc;

	if (l->step == DTXN_LOC_INS) {
		rc = loc_ins_slot(t, i, ops);
		if (rc != DTXN_OK)
			return rc;
	}
	idx = dtxn_store_bucket_find(it->table, it->bucket, it->key);
	if (idx >= 0) {
		/* the key's own slot (ins_found may take it: a re-insert) */
		loc_aux_seen(it, dtxn_store_bucket_slot(it->table, it->bucket, (unsigned)idx));
		return ops->ins_found != NULL ? ops->ins_found(t, i, (unsigned)idx) :
						DTXN_ABORT(DTXN_ABORT_EXISTS);
	}
	if (dtxn_bucket_overflows(it->bucket) && l->probe + 1 < DTXN_STORE_MAX_PROBE) {
		l->probe++;
		l->step = DTXN_LOC_INS_PROBE;
		return DTXN_OK;
	}
	if (l->slot_idx < 0)
		return DTXN_ABORT(DTXN_ABORT_INDEX_FULL);
	l->step = DTXN_LOC_DONE;
	if (l->reuse)
		return ops->ins_reuse(t, i);
	if (it->table->aux_size != 0 && it->aux == 0) {
		/* a slot never used: a new area, from the coordinator's chunk */
		if (!txn_aux_take(txn_coord_of(t->coord), it->table, it->slot_raddr, &it->aux)) {
			if (ops->aux_share &&
			    txn_aux_heap_of(txn_coord_of(t->coord), it->table, it->slot_raddr)->shared)
				return loc_aux_full(it); /* the share is used up */
			l->step = DTXN_LOC_INS_AUX; /* used up: FAA another */
			return DTXN_OK;
		}
		it->flags |= DTXN_ITEM_F_AUX_NEW;
	}
	return DTXN_OK;
}

/* Insert: the FAA of a chunk of aux areas (or the READ of the bump word,
 * aux_share) came back; the insert takes the first area. */
static int
loc_on_aux(struct dtxn_txn *t, uint32_t i, const struct dtxn_loc_ops *ops)
{
	struct dtxn_item *it = &t->items[i];
	struct dtxn_loc *l = dtxn_loc_of(it);
	struct txn_coord *tc = txn_coord_of(t->coord);
	uint32_t first, end;

	if (ops->aux_share && txn_aux_heap_of(tc, it->table, it->slot_raddr)->shared) {
		/* another insert of the round took the share first: take from it */
		if (!txn_aux_take(tc, it->table, it->slot_raddr, &it->aux))
			return loc_aux_full(it);
		it->flags |= DTXN_ITEM_F_AUX_NEW;
		l->step = DTXN_LOC_DONE;
		return DTXN_OK;
	}
	if (ops->aux_share) {
		struct txn_aux_heap *h = txn_aux_heap_of(tc, it->table, it->slot_raddr);

		txn_aux_share(t->coord, it->table, l->aux_old, l->aux_word, h, &first, &end);
		h->shared = true;
		if (first == end)
			return loc_aux_full(it);
	} else if (dtxn_store_aux_chunk(it->table, l->aux_old, t->coord->worker->db->cat.aux_chunk,
					&first, &end) != 0) {
		return loc_aux_full(it);
	}
	it->aux = first;
	it->flags |= DTXN_ITEM_F_AUX_NEW;
	txn_aux_refill(tc, it->table, it->slot_raddr, first + 1, end);
	l->step = DTXN_LOC_DONE;
	return DTXN_OK;
}

/* Reads item @p i's results after a round, picks its next step. */
static int
loc_complete_step(struct dtxn_txn *t, uint32_t i)
{
	const struct dtxn_loc_ops *ops = loc_ops_of(t);
	struct dtxn_item *it = &t->items[i];
	struct dtxn_loc *l = dtxn_loc_of(it);

	if (!l->inflight)
		return DTXN_OK;
	l->inflight = 0;
	switch (l->step) {
	case DTXN_LOC_SLOT:
		if (dtxn_store_slot_matches(it->table, it->slot, it->key)) {
			loc_aux_seen(it, it->slot);
			return ops->read(t, i);
		}
		loc_forget(t, it, l);
		return DTXN_OK;
	case DTXN_LOC_BKT:
		return loc_on_bucket(t, i, ops);
	case DTXN_LOC_LOCK:
		return loc_on_lock(t, i, ops);
	case DTXN_LOC_INS:
		if (l->bkt_from != 0) { /* the READ of an earlier insert of the round */
			memcpy(it->bucket, t->items[l->bkt_from - 1].bucket, it->table->bucket_size);
			l->bkt_from = 0;
		}
		return loc_on_insert(t, i, ops);
	case DTXN_LOC_INS_PROBE:
		return loc_on_insert(t, i, ops);
	case DTXN_LOC_INS_AUX:
		return loc_on_aux(t, i, ops);
	case DTXN_LOC_DONE:
		return DTXN_OK;
	default:
		return ops->complete(t, i);
	}
}

/* loc_complete_step(); a failure without a false-abort verdict is a true one. */
static int
loc_complete(struct dtxn_txn *t, uint32_t i)
{
	uint16_t before = t->fa_verdicts;
	int rc = loc_complete_step(t, i);

	dtxn_fa_step(t, before, rc);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Rounds                                                             */
/* ------------------------------------------------------------------ */

static int
loc_prelude(struct dtxn_txn *t, struct dtxn_batch *b)
{
	const struct dtxn_loc_ops *ops = loc_ops_of(t);

	return ops->prelude != NULL ? ops->prelude(t, b) : DTXN_OK;
}

/* dtxn_loc_ops.reads_first: read items lead each round. */
static bool
loc_read_first(const struct dtxn_txn *t, uint32_t i)
{
	return t->items[i].kind == DTXN_ITEM_RO;
}

static const struct dtxn_round_ops loc_rounds = {
	.prelude = loc_prelude,
	.done = dtxn_loc_done,
	.issue = loc_issue,
	.complete = loc_complete,
};

static const struct dtxn_round_ops loc_rounds_reads_first = {
	.prelude = loc_prelude,
	.done = dtxn_loc_done,
	.issue = loc_issue,
	.complete = loc_complete,
	.first = loc_read_first,
};

int
dtxn_loc_rounds(struct dtxn_txn *t, const struct dtxn_loc_ops *ops)
{
	txn_coord_of(t->coord)->loc_ops = ops;
	return dtxn_txn_rounds(t, ops->reads_first ? &loc_rounds_reads_first : &loc_rounds);
}

int
dtxn_loc_execute(struct dtxn_txn *t, const struct dtxn_loc_ops *ops)
{
	for (uint32_t i = t->n_fetched; i < t->n_items; i++)
		if (dtxn_loc_prepare(t, i, ops) == NULL)
			return DTXN_ABORT(DTXN_ABORT_TOO_LARGE);
	return dtxn_loc_rounds(t, ops);
}
