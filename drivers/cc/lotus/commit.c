/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Lotus's commit phase (paper §5.1 phase 2; doc/guides/lotus.md,
 * "Protocol"), for a transaction that writes:
 *
 *   1. one doorbell batch: every new record and its CVT cells, version
 *      INVISIBLE, to the primary and the backups, and the log record to
 *      the coordinator's log region (metadata only: the old versions in
 *      the CVT are the undo);
 *   2. T_commit from the timestamp oracle;
 *   3. one batch: T_commit into every new cell's meta word, every replica
 *      ("write visible"), waited for, so that no unlock can overtake it;
 *   4. unlock: local locks at once, remote ones by one asynchronous
 *      message per CN (lock.c).
 *
 * The lightweight GC (§7.1) runs before step 1 on the CVT read under the
 * write lock: the new version takes a free cell, else overwrites the
 * oldest one (its record buffer with it); other versions whose commit is
 * older than gc_ms by the writer's clock are cleared, never the newest.
 * A row's records past cell 0's live in its delta area (format.c): a
 * version that is the row's first in a cell >= 1 takes the area then,
 * before the batch (commit_cells(): lib/txn's dtxn_txn_delta_take(), the
 * coordinator's chunk of the table's delta heap, one FAA round per
 * chunk), and names it in every cell >= 1 of the cell array that step 1
 * WRITEs with the record, so a reader sees no second record or, once the
 * cell is visible, a complete one. A used-up heap aborts the txn
 * (delta_full) before anything is written; an area whose batch was never
 * posted goes back to the coordinator; once posted it is the slot's for
 * good (an undo clears the cell's meta, not its Address). The same holds
 * for the aux area a new-key insert took (the slot header that step 1
 * WRITEs names it): once posted, an abort keeps it (dtxn_txn_aux_keep()).
 *
 * A txn whose step 1 was posted and whose step 3 failed is undone (its
 * new cells cleared on every replica); when the undo cannot land either
 * (the lease gate gave up on a stopping run; a lost MN), the txn is not
 * reported aborted with its INVISIBLE cells in memory: its CN fences
 * itself and the coordinator parks (dtxn_coord_unfinished()), so the
 * CN's recoverer rolls it back from its log as for a dead CN. Step 1 held
 * back by the lease gate before any chain left has nothing to undo.
 *
 * Read-only transactions have nothing to do here: their records' cacheline
 * versions were checked at execute (§5.1, "RO txn"). A read-write
 * transaction that wrote nothing only unlocks.
 *
 * The log record (a future recovery reads it, §6): [txn id, CN id, n,
 * entries {table, cell, key, slot}..., txn id again]: fully written iff
 * its last word equals its first.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "lotus_private.h"

/** Bytes at the end of each coordinator's log region kept for metrics (shard.c). */
#define LOTUS_LOG_MAILBOX 64

struct log_hdr {
	uint64_t txn;
	uint16_t cn;
	uint16_t n;
	uint32_t bytes;
};

struct log_ent {
	uint32_t table;
	int32_t cell;
	uint64_t key;
	uint64_t slot;
};

/* The cell a new version takes in the CVT image, after the GC pass. */
static int
commit_gc(const struct dtxn_txn *t, struct dtxn_item *it, uint64_t now)
{
	const struct dtxn_table *tab = it->table;
	struct lotus_cvt *cvt = lotus_cvt_of(it->slot);
	const uint32_t n = lotus_vnum(tab);
	const uint64_t age = (uint64_t)lotus_opts_t(t)->gc_ms * 1000000;
	int newest = lotus_cvt_newest(tab, cvt), free_c = -1, oldest = -1;

	for (uint32_t i = 0; i < n; i++) {
		struct lotus_cell *c = &cvt->cells[i];
		uint8_t fl = lotus_meta_flags(c->meta);

		if ((int)i != newest && (fl & LOTUS_CELL_VALID) &&
		    lotus_cell_aged(c->commit_t, now, age)) {
			/* too old for any reader we keep: clear it (§7.1) */
			c->meta = lotus_meta(0, lotus_meta_cv(c->meta), 0);
			fl = 0;
		}
		if ((fl & LOTUS_CELL_VALID) == 0) {
			if (free_c < 0)
				free_c = (int)i;
			continue;
		}
		if ((int)i != newest &&
		    (oldest < 0 || lotus_meta_ver(c->meta) < lotus_meta_ver(cvt->cells[oldest].meta)))
			oldest = (int)i;
	}
	return free_c >= 0 ? free_c : oldest;
}

/* New-key insert: a fresh CVT whose only version is ours. */
static void
commit_insert(struct dtxn_txn *t, struct dtxn_item *it, struct lotus_item *li, uint64_t now,
	      uint64_t ver, struct dtxn_batch *b)
{
	const struct dtxn_table *tab = it->table;
	struct lotus_cvt *cvt = lotus_cvt_of(it->slot);
	const uint32_t rec = lotus_rec_size(tab);
	const uint8_t cv = 1;

	/* cells' Address 0: a slot never used has no delta area */
	memset(cvt, 0, tab->slot_size);
	cvt->hdr.key = it->key;
	cvt->hdr.table_id = (uint16_t)tab->def.id;
	cvt->hdr.flags = DTXN_SLOT_VALID;
	cvt->hdr.aux = it->aux; /* the slot's area, or a new one (lib/txn) */
	cvt->cells[0].meta = lotus_meta(ver, cv, LOTUS_CELL_VALID | LOTUS_CELL_INSERT);
	cvt->cells[0].commit_t = lotus_age_stamp(now);
	li->new_cell = 0;
	li->meta_new = cvt->cells[0].meta;
	lotus_rec_pack(tab, lotus_local_rec(it), cv, t->id, it->value);
	/* the record before the CVT that makes it reachable */
	dtxn_batch_write_replicas(b, tab, lotus_rec_raddr(it, cvt, 0), lotus_local_rec(it),
			 rec);
	dtxn_batch_write_replicas(b, tab, it->slot_raddr, cvt, tab->slot_size);
}

/* The delta area taken for @p it goes back (its batch was never posted). */
static void
commit_delta_back(struct dtxn_txn *t, struct dtxn_item *it, struct lotus_item *li)
{
	struct lotus_cvt *cvt = lotus_cvt_of(it->slot);

	if (!li->delta_new)
		return;
	dtxn_txn_delta_put(t, it->table, it->slot_raddr, lotus_cvt_delta(it->table, cvt));
	for (uint32_t i = 1; i < lotus_vnum(it->table); i++)
		cvt->cells[i].addr = 0;
	li->delta_new = 0;
}

/* The row's delta area, if the version in cell @p c is its first past cell 0. */
static int
commit_delta(struct dtxn_txn *t, struct dtxn_item *it, struct lotus_item *li, int c)
{
	struct lotus_cvt *cvt = lotus_cvt_of(it->slot);
	uint32_t n;
	int rc;

	if (c == 0 || lotus_cvt_delta(it->table, cvt) != 0)
		return DTXN_OK;
	rc = dtxn_txn_delta_take(t, it->table, it->slot_raddr, &n);
	if (rc != DTXN_OK)
		return rc;
	if ((n & LOTUS_ADDR_DELTA) != 0) {
		dtxn_txn_delta_put(t, it->table, it->slot_raddr, n); /* 2^31 areas: not addressable */
		return DTXN_ABORT(DTXN_ABORT_DELTA_FULL);
	}
	for (uint32_t i = 1; i < lotus_vnum(it->table); i++)
		cvt->cells[i].addr = LOTUS_ADDR_DELTA | n;
	li->delta_new = 1;
	return DTXN_OK;
}

/*
 * Before step 1's batch: the cell each new version of an existing CVT
 * takes (the GC pass, into new_cell) and the delta area of a row whose
 * first version past cell 0 it is (may yield: a FAA round per chunk).
 */
static int
commit_cells(struct dtxn_txn *t, uint64_t now)
{
	int reason = DTXN_OK;

	for (uint32_t i = 0; i < t->n_items && reason == DTXN_OK; i++) {
		struct dtxn_item *it = &t->items[i];
		struct lotus_item *li = lotus_item_of(it);

		if (!lotus_is_write(it) || (it->kind == DTXN_ITEM_INSERT && !li->reinsert))
			continue;
		li->new_cell = commit_gc(t, it, now);
		if (li->new_cell < 0)
			reason = DTXN_ABORT(DTXN_ABORT_INDEX_FULL); /* cannot happen with VNum >= 2 */
		else
			reason = commit_delta(t, it, li, li->new_cell);
	}
	return reason;
}

/* Update, delete or re-insert of a CVT read under the write lock, into the
 * cell commit_cells() chose. */
static void
commit_version(struct dtxn_txn *t, struct dtxn_item *it, struct lotus_item *li, uint64_t now,
	       uint64_t ver, struct dtxn_batch *b)
{
	const struct dtxn_table *tab = it->table;
	struct lotus_cvt *cvt = lotus_cvt_of(it->slot);
	uint8_t flags = LOTUS_CELL_VALID, cv;
	const int c = li->new_cell;

	if (it->kind == DTXN_ITEM_DELETE)
		flags |= LOTUS_CELL_TOMB;
	cv = (uint8_t)(lotus_meta_cv(cvt->cells[c].meta) + 1);
	/* cell first: a reader of the version being overwritten then sees it
	 * INVISIBLE, or a record whose cacheline versions no longer match */
	cvt->cells[c].meta = lotus_meta(ver, cv, flags);
	cvt->cells[c].commit_t = lotus_age_stamp(now);
	li->meta_new = cvt->cells[c].meta;
	lotus_rec_pack(tab, lotus_local_rec(it), cv, t->id, it->value);
	dtxn_batch_write_replicas(b, tab, it->slot_raddr + LOTUS_CVT_HDR, cvt->cells,
			 lotus_vnum(tab) * LOTUS_CELL_SIZE);
	dtxn_batch_write_replicas(b, tab, lotus_rec_raddr(it, cvt, (unsigned)c),
			 lotus_local_rec(it), lotus_rec_size(tab));
}

/* The log record, to the coordinator's log region on the replicas of the first written table. */
static int
commit_log(struct dtxn_txn *t, struct dtxn_batch *b)
{
	struct lotus_coord *lc = t->coord->cc_priv;
	const struct dtxn_catalog *cat = &t->coord->worker->db->cat;
	const struct dtxn_table *first = NULL;
	dtxn_raddr_t first_slot = 0;
	struct log_hdr *h;
	struct log_ent *e;
	uint32_t n = 0, bytes;
	uint64_t *tail, room = cat->log_bytes - LOTUS_LOG_MAILBOX;
	uint8_t *rec;

	for (uint32_t i = 0; i < t->n_items; i++)
		if (lotus_is_write(&t->items[i])) {
			if (first == NULL) {
				first = t->items[i].table;
				first_slot = t->items[i].slot_raddr;
			}
			n++;
		}
	bytes = (uint32_t)RTE_ALIGN_CEIL(sizeof(*h) + n * sizeof(*e) + 8, 64);
	if (first == NULL || bytes > room)
		return first == NULL ? DTXN_OK : DTXN_ABORT(DTXN_ABORT_TOO_LARGE);
	rec = dtxn_txn_alloc(t, bytes);
	if (rec == NULL)
		return DTXN_ABORT(DTXN_ABORT_TOO_LARGE);
	memset(rec, 0, bytes);
	h = (struct log_hdr *)(void *)rec;
	h->txn = t->id;
	h->cn = t->coord->worker->cn_node;
	h->n = (uint16_t)RTE_MIN(n, (uint32_t)UINT16_MAX);
	h->bytes = bytes;
	e = (struct log_ent *)(void *)(rec + sizeof(*h));
	for (uint32_t i = 0; i < t->n_items; i++) {
		const struct dtxn_item *it = &t->items[i];

		if (!lotus_is_write(it))
			continue;
		e->table = it->table->def.id;
		e->cell = lotus_item_of(it)->new_cell;
		e->key = it->key;
		e->slot = it->slot_raddr;
		e++;
	}
	tail = (uint64_t *)(void *)(rec + bytes - 8);
	*tail = t->id;
	if (lc->log_head + bytes > room)
		lc->log_head = 0;
	for (uint16_t r = 0; r < first->n_replicas; r++) {
		/* the MNs of the first written row (of its stripe, --placement key) */
		dtxn_raddr_t ra = dtxn_store_log_raddr(cat, t->coord->gid,
						       dtxn_store_row_mn(first, r, first_slot));

		if (ra != 0)
			dtxn_batch_write(b, ra + lc->log_head, rec, bytes, false);
	}
	lc->log_head += bytes;
	return DTXN_OK;
}

/*
 * Step 1: new records, cells with version @p ver (INVISIBLE; or T_commit
 * with commit=direct, the ablation's first step, whose batch also carries
 * the MN unlocks), and the log.
 */
static int
commit_write(struct dtxn_txn *t, uint64_t now, uint64_t ver)
{
	struct dtxn_batch b;
	int reason = commit_cells(t, now), rc;

	dtxn_batch_init(&b, t->coord);
	for (uint32_t i = 0; i < t->n_items && reason == DTXN_OK; i++) {
		struct dtxn_item *it = &t->items[i];
		struct lotus_item *li = lotus_item_of(it);

		if (!lotus_is_write(it))
			continue;
		if (it->kind == DTXN_ITEM_INSERT && !li->reinsert)
			commit_insert(t, it, li, now, ver, &b);
		else
			commit_version(t, it, li, now, ver, &b);
	}
	if (reason == DTXN_OK && lotus_opts_t(t)->log)
		reason = commit_log(t, &b);
	if (reason == DTXN_OK && ver != LOTUS_INVISIBLE && lotus_mn_locks(t))
		lotus_mn_unlocks(t, &b, true); /* after the data, on the same QPs */
	if (reason != DTXN_OK) {
		/* nothing posted: nothing to undo either, and no delta area used */
		for (uint32_t i = 0; i < t->n_items; i++) {
			struct lotus_item *li = lotus_item_of(&t->items[i]);

			if (li == NULL)
				continue;
			li->new_cell = -1;
			commit_delta_back(t, &t->items[i], li);
		}
		dtxn_batch_done(&b);
		return reason;
	}
	/*
	 * posted: the delta areas are their slots' for good, and so are the
	 * new aux areas that inserts' slot headers name: an abort from here
	 * on (T_commit, locks=mn validation, the visible round) undoes the
	 * cells only, and a later re-insert of the key writes its record
	 * into the area its slot names, which must be no other row's
	 */
	for (uint32_t i = 0; i < t->n_items; i++) {
		if (lotus_item_of(&t->items[i]) == NULL)
			continue;
		lotus_item_of(&t->items[i])->delta_new = 0;
		dtxn_txn_aux_keep(t, &t->items[i], &b);
	}
	rc = dtxn_batch_run(&b);
	if (rc != 0 && b.error != 0) /* held back before any chain left (the lease gate) */
		for (uint32_t i = 0; i < t->n_items; i++)
			if (lotus_item_of(&t->items[i]) != NULL)
				lotus_item_of(&t->items[i])->new_cell = -1; /* nothing to undo */
	dtxn_batch_done(&b);
	return dtxn_batch_reason(rc);
}

/*
 * Test aid (DTXN_DEBUG_CRASH_MID_COMMIT): whether @p t is the txn of its CN
 * that dies with its commit visible on the backups only: the first one
 * that writes a record whose lock another CN granted (that CN's lock state
 * holds it for the dead CN: recovery releases it), with backups to write.
 */
static bool
commit_crash_here(struct dtxn_txn *t)
{
	const uint16_t me = t->coord->worker->cn_node;
	bool remote = false;

	if (!dtxn_txn_crash_point(t, DTXN_DEBUG_CRASH_MID_COMMIT))
		return false;
	for (uint32_t i = 0; i < t->n_items; i++) {
		const struct dtxn_item *it = &t->items[i];

		remote |= lotus_is_write(it) && (it->flags & DTXN_ITEM_F_LOCKED) &&
			  lotus_item_of(it)->owner != me && it->table->n_replicas > 1;
	}
	return remote && __atomic_exchange_n(&lotus_worker_of(t)->cn->crashed, 1, __ATOMIC_ACQ_REL) == 0;
}

/* Step 3 (or its undo with @p meta_of == NULL: the new cells become invalid). */
static int
commit_visible(struct dtxn_txn *t, bool undo)
{
	const uint64_t tc = t->cc[LOTUS_TS_COMMIT];
	const bool crash = !undo && commit_crash_here(t);
	struct dtxn_batch b;
	int rc;

	dtxn_batch_init(&b, t->coord);
	for (uint32_t i = 0; i < t->n_items; i++) {
		struct dtxn_item *it = &t->items[i];
		struct lotus_item *li = lotus_item_of(it);
		struct lotus_cvt *cvt = lotus_cvt_of(it->slot);
		struct lotus_cell *c;

		if (!lotus_is_write(it) || li->new_cell < 0)
			continue;
		c = &cvt->cells[li->new_cell];
		if (undo)
			c->meta = lotus_meta(0, lotus_meta_cv(li->meta_new), 0);
		else
			c->meta = lotus_meta(tc, lotus_meta_cv(li->meta_new), lotus_meta_flags(li->meta_new));
		for (uint16_t r = 1; crash && r < it->table->n_replicas; r++)
			dtxn_batch_write(&b, dtxn_store_replica_raddr(it->table, r, it->slot_raddr) +
						     LOTUS_CVT_HDR + (uint64_t)li->new_cell * LOTUS_CELL_SIZE,
					 &c->meta, sizeof(c->meta), true);
		if (!crash)
			dtxn_batch_write_replicas(&b, it->table,
					 it->slot_raddr + LOTUS_CVT_HDR +
						 (uint64_t)li->new_cell * LOTUS_CELL_SIZE,
					 &c->meta, sizeof(c->meta));
	}
	if (!undo && !crash && lotus_mn_locks(t))
		lotus_mn_unlocks(t, &b, true); /* after the visible WRITEs, on the same QPs */
	/* every replica's T_commit posted: committed, whatever happens to us next */
	rc = undo || crash ? dtxn_batch_run_reason(&b) : dtxn_batch_run_decide(&b, t);
	if (crash)
		dtxn_coord_park(t->coord); /* test aid: its CN "dies" here (--fault kills it later) */
	return rc;
}

/* After the commit: VT cache (locks this CN granted), address cache (inserts). */
static void
commit_caches(struct dtxn_txn *t)
{
	struct lotus_vtc *vtc = lotus_worker_of(t)->cn->vtc;
	struct dtxn_addr_cache *ac = t->coord->worker->addr_cache;
	const uint16_t me = t->coord->worker->cn_node;

	for (uint32_t i = 0; i < t->n_items; i++) {
		struct dtxn_item *it = &t->items[i];
		struct lotus_item *li = lotus_item_of(it);

		if (!lotus_is_write(it))
			continue;
		if (it->kind == DTXN_ITEM_INSERT)
			dtxn_addr_cache_insert(ac, it->table->def.id, it->key, it->slot_raddr);
		if (vtc != NULL && (it->flags & DTXN_ITEM_F_LOCKED) && li->owner == me)
			lotus_vtc_put(vtc, it->table->def.id, it->key, it->slot,
				      it->table->slot_size, it->slot_raddr);
	}
}

/* A failed commit: this CN's cached CVTs of its writes may no longer match memory. */
static void
commit_forget(struct dtxn_txn *t)
{
	struct lotus_vtc *vtc = lotus_worker_of(t)->cn->vtc;

	for (uint32_t i = 0; vtc != NULL && i < t->n_items; i++) {
		const struct dtxn_item *it = &t->items[i];

		if (lotus_is_write(it) && (it->flags & DTXN_ITEM_F_LOCKED))
			lotus_vtc_invalidate(vtc, it->table->def.id, it->key);
	}
}

/* The ablation's first step (commit=direct, locks=mn): Motor's order. */
static int
commit_direct(struct dtxn_txn *t, bool has_read)
{
	int reason = DTXN_OK;

	if (lotus_iso(t) == DTXN_ISO_SI && (t->cc[LOTUS_TX_FLAGS] & LOTUS_TX_SIGHTED))
		reason = lotus_mn_recheck(t, false); /* we hold locks: do not wait */
	if (reason == DTXN_OK)
		reason = lotus_timestamp(t, &t->cc[LOTUS_TS_COMMIT]);
	if (reason == DTXN_OK && lotus_iso(t) == DTXN_ISO_SR && has_read)
		reason = lotus_mn_validate(t);
	if (reason == DTXN_OK)
		reason = commit_write(t, dtxn_now_ns(), t->cc[LOTUS_TS_COMMIT]);
	return reason;
}

int
lotus_commit(struct dtxn_txn *t)
{
	const bool mn = lotus_mn_locks(t);
	bool has_write = false, has_read = false;
	int reason = DTXN_OK;

	for (uint32_t i = 0; i < t->n_items; i++) {
		if (lotus_is_write(&t->items[i]))
			has_write = true;
		else
			has_read = true;
	}
	if (!has_write) {
		/* a snapshot at T_start (read locks, if any, go now) */
		if (mn && (t->cc[LOTUS_TX_FLAGS] & LOTUS_TX_SIGHTED))
			reason = lotus_mn_recheck(t, true);
	} else if (lotus_opts_t(t)->commit == LOTUS_COMMIT_DIRECT) {
		reason = commit_direct(t, has_read);
	} else {
		reason = commit_write(t, dtxn_now_ns(), LOTUS_INVISIBLE);
		if (reason == DTXN_OK)
			reason = lotus_timestamp(t, &t->cc[LOTUS_TS_COMMIT]);
		/* locks=mn: read items are validated (with CN locks they are read-locked) */
		if (reason == DTXN_OK && mn && lotus_iso(t) == DTXN_ISO_SR && has_read)
			reason = lotus_mn_validate(t);
		if (reason == DTXN_OK)
			reason = commit_visible(t, false);
		/* what reached memory must not look committed; and a txn whose
		 * step 1 is in memory (INVISIBLE cells on every replica) must not
		 * count as aborted when its undo cannot land either: its CN
		 * fences itself and its recoverer rolls it back from the log */
		if (reason != DTXN_OK && commit_visible(t, true) != DTXN_OK)
			dtxn_coord_unfinished(t->coord);
	}
	if (reason != DTXN_OK) {
		commit_forget(t);
		lotus_release_all(t);
		return reason;
	}
	if (has_write)
		commit_caches(t);
	lotus_release_all(t);
	if (has_write && dtxn_txn_crash_point(t, DTXN_DEBUG_CRASH_UNLOCKED) &&
	    __atomic_exchange_n(&lotus_worker_of(t)->cn->crashed, 1, __ATOMIC_ACQ_REL) == 0)
		dtxn_coord_park(t->coord); /* test aid: dies before it records the commit */
	lotus_shard_latency(lotus_worker_of(t)->cn, dtxn_now_ns() - t->start_ns);
	return DTXN_OK;
}

void
lotus_abort(struct dtxn_txn *t)
{
	lotus_release_all(t);
}
