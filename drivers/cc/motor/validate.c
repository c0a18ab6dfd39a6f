/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Motor's checks of the read set (paper §5.1 phase 2, §5.2).
 *
 * SR validation, for a read-write txn with read-only items, after its
 * locks are held and T_commit is known: one round re-READs the CVT of
 * every RO item (the bucket headers for a key that was absent from its
 * bucket chain); it fails if the CVT is locked by another txn (lock != 0,
 * not "lock == 1" as in Motor's public code) or if the version chosen at
 * T_commit differs from the one chosen at T_start.
 *
 * Snapshot recheck, for reads that saw another txn's lock while they
 * read (execute.c): that txn may commit with a T_commit below our
 * T_start after we read, and a snapshot read at T_start must then see it.
 * The recheck checks the version chosen at T_start is still the one read
 * once the lock is gone. A read-only txn (it holds no lock) waits,
 * yielding, for the lock to go; an SI read-write txn, which holds its
 * write locks meanwhile, does not wait: it aborts if the lock is still
 * there (locked_read). It runs before a read-only or SI commit; SR
 * validation covers it for SR read-write txns.
 * The paper lets read-only txns skip validation altogether, which misses
 * exactly this case.
 */
#include <string.h>

#include "motor_private.h"

/* Adds the re-READs of read item @p it to a batch. */
static int
val_issue(struct dtxn_txn *t, struct dtxn_item *it, struct dtxn_batch *b)
{
	struct motor_item *mi = motor_item_of(it);
	unsigned p;

	if (motor_absent_bkt(mi)) {
		for (p = 0; p < mi->loc.n_bkt; p++)
			dtxn_batch_read(b, mi->loc.braddr[p], mi->vbuf[p], 16, true);
		return DTXN_OK;
	}
	if (mi->cvt2 == NULL) {
		mi->cvt2 = dtxn_txn_alloc(t, it->table->slot_size);
		if (mi->cvt2 == NULL)
			return DTXN_ABORT(DTXN_ABORT_TOO_LARGE);
	}
	dtxn_batch_read(b, it->slot_raddr, mi->cvt2, it->table->slot_size, true);
	return DTXN_OK;
}

int
motor_check_read(struct dtxn_txn *t, const struct dtxn_item *it, uint64_t ts, bool *locked)
{
	const struct motor_item *mi = motor_item_of(it);
	const struct motor_cvt *cvt = mi->cvt2;
	enum motor_pick res;
	unsigned p;

	*locked = false;
	if (motor_absent_bkt(mi)) {
		/* inserts go to the home bucket only: its lock and every version */
		*locked = dtxn_txn_lock_foreign(t, mi->vbuf[0][0]);
		for (p = 0; p < mi->loc.n_bkt; p++)
			if (mi->vbuf[p][1] != mi->loc.bver[p]) {
				dtxn_fa_verdict(t, false); /* an insert: every cell */
				return DTXN_ABORT(DTXN_ABORT_VALIDATION);
			}
		return DTXN_OK;
	}
	if (cvt->hdr.key != it->key || cvt->hdr.table_id != it->table->def.id) {
		dtxn_fa_verdict(t, false);
		return DTXN_ABORT(DTXN_ABORT_VALIDATION);
	}
	if (dtxn_txn_lock_foreign(t, cvt->lock) || motor_cvt_anchor(it->table, cvt) < 0) {
		*locked = true; /* a torn CVT: a commit is writing it */
		return DTXN_OK;
	}
	if (motor_cvt_seen(it->table, cvt, ts, &res) != mi->seen || res == MOTOR_PICK_GONE) {
		if (mi->seen == MOTOR_V_NONE || res == MOTOR_PICK_GONE)
			dtxn_fa_verdict(t, false); /* inserted since, or recycled */
		else
			motor_fa_newer(t, it, cvt, mi->seen);
		return DTXN_ABORT(DTXN_ABORT_VALIDATION);
	}
	return DTXN_OK;
}

/* False-abort verdict on read item @p it found locked (or torn) by its last re-read. */
static void
val_fa_locked(struct dtxn_txn *t, const struct dtxn_item *it)
{
	const struct motor_cvt *cvt = motor_item_of(it)->cvt2;

	if (motor_absent_bkt(motor_item_of(it)) || cvt == NULL || !dtxn_txn_lock_foreign(t, cvt->lock))
		dtxn_fa_verdict(t, false); /* a bucket lock (an insert), or a torn CVT */
	else
		dtxn_fa_holder(t, it, cvt->lock);
}

/* Runs one round re-reading the items of @p pick; DTXN_OK or a reason. */
static int
val_round(struct dtxn_txn *t, const uint8_t *pick)
{
	struct dtxn_batch b;
	uint32_t i;
	int reason = DTXN_OK;

	dtxn_batch_init(&b, t->coord);
	for (i = 0; i < t->n_items && reason == DTXN_OK; i++)
		if (pick[i])
			reason = val_issue(t, &t->items[i], &b);
	if (reason != DTXN_OK || b.n_wr == 0) {
		dtxn_batch_done(&b);
		return reason;
	}
	return dtxn_batch_run_reason(&b);
}

/* Marks the read items to re-read (all, or those that saw a lock); NULL: no arena. */
static uint8_t *
val_pick(struct dtxn_txn *t, bool sighted_only, uint32_t *n)
{
	uint8_t *pick = dtxn_txn_alloc(t, t->n_items);
	uint32_t i;

	*n = 0;
	if (pick == NULL)
		return NULL;
	for (i = 0; i < t->n_items; i++) {
		const struct dtxn_item *it = &t->items[i];

		pick[i] = it->kind == DTXN_ITEM_RO &&
			  (!sighted_only || motor_item_of(it)->sighted);
		*n += pick[i];
	}
	return pick;
}

int
motor_validate(struct dtxn_txn *t)
{
	uint32_t i, n;
	uint8_t *pick = val_pick(t, false, &n);
	int reason;

	if (pick == NULL)
		return DTXN_ABORT(DTXN_ABORT_TOO_LARGE);
	if (n == 0)
		return DTXN_OK; /* every item is locked: nothing can have changed */
	reason = val_round(t, pick);
	if (reason != DTXN_OK)
		return reason;
	/* every read item, past the first conflict: the false-abort verdict needs them all */
	for (i = 0; i < t->n_items; i++) {
		bool locked;
		int r;

		if (!pick[i])
			continue;
		r = motor_check_read(t, &t->items[i], t->cc[MOTOR_TS_COMMIT], &locked);
		if (r == DTXN_OK && locked) {
			val_fa_locked(t, &t->items[i]);
			r = DTXN_ABORT(DTXN_ABORT_LOCKED_READ);
		}
		if (reason == DTXN_OK)
			reason = r;
	}
	return reason;
}

int
motor_recheck(struct dtxn_txn *t, bool wait)
{
	uint32_t i, n;
	uint8_t *pick = val_pick(t, true, &n);
	unsigned round;

	if (pick == NULL)
		return DTXN_ABORT(DTXN_ABORT_TOO_LARGE);
	for (round = 0; n != 0; round++) {
		int reason;

		if (round == (wait ? MOTOR_RECHECK_MAX : 1)) {
			for (i = 0; i < t->n_items; i++)
				if (pick[i])
					val_fa_locked(t, &t->items[i]);
			return DTXN_ABORT(DTXN_ABORT_LOCKED_READ);
		}
		if (round != 0)
			dtxn_co_sleep_until_lc(t->coord->co,
					       dtxn_now_ns() + MOTOR_RECHECK_PAUSE_NS);
		reason = val_round(t, pick);
		if (reason != DTXN_OK)
			return reason;
		for (i = 0; i < t->n_items; i++) {
			bool locked;

			if (!pick[i])
				continue;
			reason = motor_check_read(t, &t->items[i], t->cc[MOTOR_TS_START], &locked);
			if (reason != DTXN_OK)
				return reason;
			if (!locked) {
				pick[i] = 0; /* settled: same version at T_start */
				n--;
			}
		}
	}
	return DTXN_OK;
}
