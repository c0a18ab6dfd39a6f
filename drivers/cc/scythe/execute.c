/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Scythe's execution phase (scythe.md §1). Items are found with lib/txn's
 * locating steps as lock-free reads (dtxn_loc_ops.cn_locks: Scythe takes
 * no lock with CAS; its record locks are Takeout Locks, granted by the
 * MN's CPU). What differs by heat mode:
 * - COLD (OCC): a read that finds the record locked or queued aborts at
 *   once (§3.1, change 3; Fig. 17 case 1), and, if the queue is longer
 *   than ColdWatermark, the retry runs HOT. Writes are buffered until
 *   commit.
 * - HOT (TOCC): every read (RO and RW items) queues with Lock(ts, HOT) in
 *   timestamp order and is read under its lock: at a cached address the
 *   lock comes first and one READ after the grant; else the record is
 *   looked up, then locked and read again. No validation follows, except
 *   for reads of records never updated in place (scythe_free_read()):
 *   they are read as COLD reads are and validated at commit.
 * Inserts take their home bucket's lock (CAS, as FORD) before their
 * bucket is read, so that no other insert or delete changes it.
 */
#include <string.h>

#include "scythe_private.h"

/* HOT items at a cached address skip the lookup: locked first, read after. */
static void
exe_prepare(struct dtxn_txn *t, uint32_t i)
{
	struct dtxn_item *it = &t->items[i];
	struct scythe_item *si = scythe_item_of(it);

	if (scythe_coord_of(t)->mode == SCYTHE_HOT && !scythe_free_read(it) &&
	    (it->kind == DTXN_ITEM_RO || it->kind == DTXN_ITEM_RW) &&
	    (it->flags & DTXN_ITEM_F_CACHED) != 0) {
		si->direct = 1;
		si->loc.step = DTXN_LOC_DONE;
	}
}

/* A record read without a lock (lookup, or a COLD read at its address). */
static int
exe_read(struct dtxn_txn *t, uint32_t i)
{
	struct dtxn_item *it = &t->items[i];
	struct scythe_coord *sc = scythe_coord_of(t);
	const struct scythe_slot *s = scythe_slot_of(it);

	if (sc->mode == SCYTHE_COLD || scythe_free_read(it)) {
		uint16_t q = scythe_queue(s->lower, s->upper);

		if (q != 0) {
			struct scythe_wstats *st = &scythe_worker_of(t)->st;

			/* locked or queued: abort at once; a long queue: retry HOT */
			st->locked_by_table[RTE_MIN(it->table->def.id, SCYTHE_STAT_TABLES - 1)]++;
			if (q > scythe_opts_t(t)->cold_wm) {
				sc->hot_next = 1;
				st->cold_q_high++;
			} else {
				st->cold_q_low++;
			}
			return DTXN_ABORT(DTXN_ABORT_LOCKED_READ);
		}
	}
	if (sc->mode == SCYTHE_HOT)
		scythe_worker_of(t)->st.free_reads++;
	it->version = s->version;
	it->flags = (it->flags | DTXN_ITEM_F_EXISTS) & ~DTXN_ITEM_F_TOMB;
	scythe_item_of(it)->loc.step = DTXN_LOC_DONE;
	return DTXN_OK;
}

static const struct dtxn_loc_ops exe_loc = {
	.item_size = sizeof(struct scythe_item),
	.cn_locks = true,
	.prepare = exe_prepare,
	.read = exe_read,
};

/* Inserts among items[first..]: CAS their home buckets' locks (one round). */
static int
exe_insert_locks(struct dtxn_txn *t, uint32_t first)
{
	struct dtxn_batch b;
	int reason = DTXN_OK;

	dtxn_batch_init(&b, t->coord);
	for (uint32_t i = first; i < t->n_items; i++) {
		struct dtxn_item *it = &t->items[i];

		if (it->kind != DTXN_ITEM_INSERT)
			continue;
		it->bucket_raddr = dtxn_store_bucket_raddr(it->table, 0,
							   dtxn_store_bucket_of(it->table, it->key));
		dtxn_loc_block_cas(t, i, &b);
	}
	if (b.n_wr == 0)
		return DTXN_OK;
	reason = dtxn_batch_run_reason(&b);
	for (uint32_t i = first; i < t->n_items; i++) {
		struct dtxn_item *it = &t->items[i];
		struct dtxn_loc *l = dtxn_loc_of(it);

		if (it->kind != DTXN_ITEM_INSERT || !l->own_block)
			continue;
		if (l->block_old == 0)
			it->flags |= DTXN_ITEM_F_BLOCKED;
		else if (reason == DTXN_OK)
			reason = DTXN_ABORT(DTXN_ABORT_LOCK_CONFLICT);
	}
	return reason;
}

/* HOT: queue every read of items[first..] in ts order, then read it under its lock. */
static int
exe_hot_reads(struct dtxn_txn *t, uint32_t first)
{
	struct dtxn_batch b;
	int reason;

	for (uint32_t i = first; i < t->n_items; i++) {
		struct dtxn_item *it = &t->items[i];
		struct scythe_item *si = scythe_item_of(it);

		if ((it->kind == DTXN_ITEM_RO || it->kind == DTXN_ITEM_RW) && !scythe_free_read(it) &&
		    (si->direct || (it->flags & DTXN_ITEM_F_EXISTS) != 0))
			si->lk = SCYTHE_LK_NEED;
	}
	reason = scythe_lock_run(t);
	if (reason != DTXN_OK)
		return reason;
	dtxn_batch_init(&b, t->coord);
	for (uint32_t i = first; i < t->n_items; i++) {
		struct dtxn_item *it = &t->items[i];

		if (scythe_item_of(it)->lk != SCYTHE_LK_NONE && it->kind != DTXN_ITEM_INSERT &&
		    it->kind != DTXN_ITEM_DELETE)
			dtxn_batch_read(&b, it->slot_raddr, it->slot, it->table->slot_size, true);
	}
	reason = dtxn_batch_run_reason(&b);
	for (uint32_t i = first; i < t->n_items && reason == DTXN_OK; i++) {
		struct dtxn_item *it = &t->items[i];
		struct scythe_item *si = scythe_item_of(it);

		if (si->lk == SCYTHE_LK_NONE || it->kind == DTXN_ITEM_INSERT ||
		    it->kind == DTXN_ITEM_DELETE)
			continue;
		if (!dtxn_store_slot_matches(it->table, it->slot, it->key)) {
			/* a stale cached address, or the record went while we queued */
			dtxn_addr_cache_invalidate(t->coord->worker->addr_cache, it->table->def.id,
						   it->key);
			reason = DTXN_ABORT(DTXN_ABORT_LOCK_CONFLICT);
			break;
		}
		it->version = scythe_slot_of(it)->version;
		it->flags = (it->flags | DTXN_ITEM_F_EXISTS) & ~DTXN_ITEM_F_TOMB;
	}
	return reason;
}

int
scythe_execute(struct dtxn_txn *t)
{
	struct scythe_coord *sc = scythe_coord_of(t);
	uint32_t first = t->n_fetched;
	int reason = DTXN_OK;

	if (sc->mode == SCYTHE_HOT && sc->ts == 0)
		/* TOCC: execution follows the start timestamp (§3.2) */
		reason = dtxn_tso_txn_ts(scythe_worker_of(t)->tso, t, &sc->treq, &sc->ts);
	for (uint32_t i = first; i < t->n_items && reason == DTXN_OK; i++)
		if (dtxn_loc_prepare(t, i, &exe_loc) == NULL)
			reason = DTXN_ABORT(DTXN_ABORT_TOO_LARGE);
	if (reason == DTXN_OK)
		reason = exe_insert_locks(t, first);
	if (reason == DTXN_OK)
		reason = dtxn_loc_rounds(t, &exe_loc);
	if (reason == DTXN_OK && sc->mode == SCYTHE_HOT)
		reason = exe_hot_reads(t, first);
	if (reason != DTXN_OK)
		scythe_release(t);
	return reason;
}
