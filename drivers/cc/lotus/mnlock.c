/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ablation steps before lock sharding (paper Fig. 14, "+Full Record
 * Store" and "+Log & Visible"; options locks=mn, doc/guides/lotus.md
 * "Ablation"): Lotus's memory store with Motor's concurrency control.
 * Locks are words in MN memory (the CVT's lock word; an index bucket's
 * header lock for inserts), taken with RDMA CAS in the same doorbell as the
 * CVT READ by lib/txn's locating steps, as FORD's and Motor's are
 * (execute.c: dtxn_loc_ops without cn_locks), and released with a WRITE
 * of 0 (dtxn_txn_unlock_held()); read-only items are read without locks
 * and validated under SR after T_commit (their CVT is read again:
 * unlocked and the version read still the newest, past the txn's own
 * INVISIBLE version of a record it also writes; an absent key's bucket
 * unlocked and at the version seen).
 *
 * With commit=direct (the first step) a writer takes T_commit before it
 * writes, so a lock-free reader cannot rely on INVISIBLE: like Motor, a
 * read that saw another transaction's lock on its CVT is checked again
 * once the lock is gone (the version chosen at T_start must not change).
 */
#include <errno.h>
#include <string.h>

#include "lotus_private.h"

/* ------------------------------------------------------------------ */
/* Execute                                                            */
/* ------------------------------------------------------------------ */

void
lotus_mn_sight(struct dtxn_txn *t, struct dtxn_item *it)
{
	const struct lotus_cvt *cvt = lotus_cvt_of(it->slot);

	if (lotus_cvt_locked_by_other(it->table, cvt, t->id)) {
		lotus_item_of(it)->sighted = 1;
		t->cc[LOTUS_TX_FLAGS] |= LOTUS_TX_SIGHTED;
	}
}

/* ------------------------------------------------------------------ */
/* Validation and recheck                                             */
/* ------------------------------------------------------------------ */

/* The version a read saw, as lotus_mn_check() compares it. */
static uint64_t
mn_seen(const struct dtxn_item *it)
{
	const struct lotus_item *li = lotus_item_of(it);

	if (!(it->flags & DTXN_ITEM_F_EXISTS) || li->cell < 0)
		return UINT64_MAX;
	return lotus_meta_ver(lotus_cvt_of(it->slot)->cells[li->cell].meta);
}

/* What a reader at @p ts sees in a CVT copy, for the same comparison. */
static int
mn_seen_in(const struct dtxn_table *tab, const struct lotus_cvt *cvt, uint64_t ts, uint64_t *ver)
{
	int idx;

	switch (lotus_cvt_pick(tab, cvt, ts, &idx)) {
	case LOTUS_PICK_FOUND:
		*ver = (lotus_meta_flags(cvt->cells[idx].meta) & LOTUS_CELL_TOMB) ? UINT64_MAX :
			lotus_meta_ver(cvt->cells[idx].meta);
		return 0;
	case LOTUS_PICK_ABSENT:
		*ver = UINT64_MAX;
		return 0;
	default:
		return -EAGAIN; /* INVISIBLE or gone: the read no longer holds */
	}
}

/* One validation READ per read item: its CVT, or an absent key's home bucket header. */
static int
mn_reread(struct dtxn_txn *t, bool sighted_only, void **bufs)
{
	struct dtxn_batch b;
	unsigned n = 0;

	dtxn_batch_init(&b, t->coord);
	for (uint32_t i = 0; i < t->n_items; i++) {
		struct dtxn_item *it = &t->items[i];
		struct lotus_item *li = lotus_item_of(it);

		bufs[i] = NULL;
		if (it->kind != DTXN_ITEM_RO || (sighted_only && !li->sighted))
			continue;
		if (it->slot_raddr != 0) {
			bufs[i] = dtxn_txn_alloc(t, it->table->slot_size);
			if (bufs[i] == NULL)
				return DTXN_ABORT(DTXN_ABORT_TOO_LARGE);
			dtxn_batch_read(&b, it->slot_raddr, bufs[i], it->table->slot_size, true);
		} else if (it->bucket_raddr != 0) {
			bufs[i] = dtxn_txn_alloc(t, DTXN_BUCKET_HDR_SIZE);
			if (bufs[i] == NULL)
				return DTXN_ABORT(DTXN_ABORT_TOO_LARGE);
			dtxn_batch_read(&b, it->bucket_raddr, bufs[i], DTXN_BUCKET_HDR_SIZE, true);
		}
		n++;
	}
	if (n == 0) {
		dtxn_batch_done(&b);
		return DTXN_OK;
	}
	return dtxn_batch_run_reason(&b);
}

/*
 * The cell this txn's own write of @p it's record took in its first batch
 * (a write item on the same slot, commit=visible: INVISIBLE there until
 * the visible round), or -1.
 */
static int
mn_own_cell(const struct dtxn_txn *t, const struct dtxn_item *it)
{
	for (uint32_t i = 0; i < t->n_items; i++) {
		const struct dtxn_item *w = &t->items[i];

		if (lotus_is_write(w) && w->slot_raddr == it->slot_raddr &&
		    lotus_item_of(w)->new_cell >= 0)
			return lotus_item_of(w)->new_cell;
	}
	return -1;
}

int
lotus_mn_validate(struct dtxn_txn *t)
{
	void **bufs = dtxn_txn_alloc(t, sizeof(*bufs) * t->n_items);
	int reason;

	if (bufs == NULL)
		return DTXN_ABORT(DTXN_ABORT_TOO_LARGE);
	reason = mn_reread(t, false, bufs);
	for (uint32_t i = 0; i < t->n_items && reason == DTXN_OK; i++) {
		struct dtxn_item *it = &t->items[i];

		if (bufs[i] == NULL)
			continue;
		if (it->slot_raddr != 0) {
			struct lotus_cvt *cvt = bufs[i];
			int n, own = lotus_cvt_lock(it->table, cvt) == t->id ? mn_own_cell(t, it) : -1;
			uint64_t now_ver;

			/*
			 * A record this txn also writes (TPC-C Delivery reads
			 * a NEW-ORDER row, then deletes it): our lock has kept
			 * it as it was but for our own INVISIBLE version, which
			 * the read must not be compared with
			 */
			if (own >= 0)
				cvt->cells[own].meta = 0;
			n = lotus_cvt_newest(it->table, cvt);
			if (lotus_cvt_locked_by_other(it->table, cvt, t->id))
				reason = DTXN_ABORT(DTXN_ABORT_LOCKED_READ);
			else if (n < 0 || lotus_meta_ver(cvt->cells[n].meta) == LOTUS_INVISIBLE)
				reason = DTXN_ABORT(DTXN_ABORT_VALIDATION);
			else {
				/* the newest version is still the one read */
				now_ver = (lotus_meta_flags(cvt->cells[n].meta) & LOTUS_CELL_TOMB) ?
						  UINT64_MAX : lotus_meta_ver(cvt->cells[n].meta);
				if (now_ver != mn_seen(it))
					reason = DTXN_ABORT(DTXN_ABORT_VALIDATION);
			}
		} else {
			const struct dtxn_bucket_hdr *bh = bufs[i];

			if (bh->lock != 0 && bh->lock != t->id)
				reason = DTXN_ABORT(DTXN_ABORT_LOCKED_READ);
			else if (bh->version != it->bucket_version)
				reason = DTXN_ABORT(DTXN_ABORT_VALIDATION);
		}
	}
	return reason;
}

int
lotus_mn_recheck(struct dtxn_txn *t, bool wait)
{
	void **bufs = dtxn_txn_alloc(t, sizeof(*bufs) * t->n_items);

	if (bufs == NULL)
		return DTXN_ABORT(DTXN_ABORT_TOO_LARGE);
	for (unsigned round = 0; round < LOTUS_READ_RETRIES; round++) {
		bool locked = false;
		int reason = mn_reread(t, true, bufs);

		for (uint32_t i = 0; i < t->n_items && reason == DTXN_OK; i++) {
			struct dtxn_item *it = &t->items[i];
			struct lotus_item *li = lotus_item_of(it);
			uint64_t ver;

			if (bufs[i] == NULL || !li->sighted)
				continue;
			if (it->slot_raddr == 0)
				continue;
			{
				const struct lotus_cvt *cvt = bufs[i];

				if (lotus_cvt_locked_by_other(it->table, cvt, t->id)) {
					locked = true;
					continue;
				}
				if (mn_seen_in(it->table, cvt, t->cc[LOTUS_TS_START], &ver) != 0 ||
				    ver != mn_seen(it))
					reason = DTXN_ABORT(DTXN_ABORT_VALIDATION);
				else
					li->sighted = 0;
			}
		}
		if (reason != DTXN_OK)
			return reason;
		if (!locked)
			return DTXN_OK;
		if (!wait)
			return DTXN_ABORT(DTXN_ABORT_LOCKED_READ);
		dtxn_co_sleep_until_lc(t->coord->co, dtxn_now_ns() + LOTUS_REREAD_PAUSE_NS);
	}
	return DTXN_ABORT(DTXN_ABORT_LOCKED_READ);
}

/* ------------------------------------------------------------------ */
/* Release                                                            */
/* ------------------------------------------------------------------ */

void
lotus_mn_unlocks(struct dtxn_txn *t, struct dtxn_batch *b, bool bump)
{
	for (uint32_t i = 0; i < t->n_items; i++) {
		struct dtxn_item *it = &t->items[i];
		struct lotus_item *li = lotus_item_of(it);

		if (bump && (it->flags & DTXN_ITEM_F_BLOCKED)) {
			/* a committed insert: {lock 0, version + 1} on every replica
			 * (absent reads validate against the version) */
			li->bimg[0] = 0;
			li->bimg[1] = it->bucket_version + 1;
			dtxn_batch_write_replicas(b, it->table, it->block_raddr, li->bimg,
						  sizeof(li->bimg));
			it->flags &= ~DTXN_ITEM_F_BLOCKED;
		}
	}
	dtxn_txn_unlock_held(t, b);
}
