/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * FORD validation round: re-READ lock + version of every read-only item
 * (also in single-item read-only txns, and checking the lock: FORD bugs 3
 * and 4) and the header of every bucket an absent read visited, with the
 * undo-log record WRITEs in the same doorbell batch. Published mode
 * (commit.c decides when it runs; no log here): READ 8 B, the version
 * only, of each read item found, as the public code does.
 */
#include <errno.h>
#include <string.h>

#include <rte_common.h>

#include "ford_private.h"

/* The undo image of a written item: its slot as read under its lock (lib/txn's log record). */
static const void *
val_undo_image(const struct dtxn_txn *t, const struct dtxn_item *it)
{
	RTE_SET_USED(t);
	return ford_item_of(it)->pre;
}

/*
 * Lock and version of read item @p it against what it saw; @p it NULL for
 * a bucket header (an absent read). A conflict gets its false-abort
 * verdict (lib/txn's false_abort.c): a holder or the writers since
 * @p seen that wrote none of the item's cells make it false.
 */
static int
val_check_word(struct dtxn_txn *t, const struct dtxn_item *it, uint64_t lock, uint64_t version,
	       uint64_t seen)
{
	if (dtxn_txn_lock_foreign(t, lock) && !dtxn_txn_weakened(t, DTXN_DEBUG_SKIP_LOCK_CHECK) /* test aid */) {
		it != NULL ? dtxn_fa_holder(t, it, lock) : dtxn_fa_verdict(t, false);
		return DTXN_ABORT(DTXN_ABORT_LOCKED_READ);
	}
	if (version != seen) {
		it != NULL ? dtxn_fa_writers(t, it, seen, version) : dtxn_fa_verdict(t, false);
		return DTXN_ABORT(DTXN_ABORT_VALIDATION);
	}
	return DTXN_OK;
}

int
ford_validate_and_log(struct dtxn_txn *t, bool log)
{
	struct dtxn_coord *c = t->coord;
	struct ford_coord *fc = c->cc_priv;
	struct dtxn_batch b;
	uint64_t mask = 0;
	void *rec = NULL;
	int64_t bytes = 0;
	uint32_t i;
	int rc, reason = DTXN_OK;

	if (log) {
		bytes = dtxn_txn_log_build(t, val_undo_image, &rec, &mask);
		if (bytes < 0)
			return DTXN_ABORT(DTXN_ABORT_TOO_LARGE);
	}
	dtxn_batch_init(&b, c);
	for (i = 0; i < t->n_items; i++) {
		struct dtxn_item *it = &t->items[i];
		struct ford_item *fi = ford_item_of(it);
		unsigned p;

		if (fi != NULL && fi->deferred) {
			/* published: {CAS lock, READ 8 B version} of an RW item found unlocked */
			it->lock_raddr = it->slot_raddr + FORD_LOCK_OFF;
			fi->vbuf[0][0] = DTXN_LOC_CAS_UNSET;
			dtxn_batch_cas(&b, it->lock_raddr, &fi->vbuf[0][0], 0, t->id, true);
			dtxn_batch_read(&b, it->slot_raddr + FORD_VERSION_OFF, &fi->vbuf[0][1], 8,
					true);
			continue;
		}
		if (it->kind != DTXN_ITEM_RO)
			continue;
		if ((it->flags & DTXN_ITEM_F_EXISTS) && ford_published(t)) {
			/* the public code reads the version only: no lock check (§6 item 3) */
			fi->vbuf[0][0] = 0;
			dtxn_batch_read(&b, it->slot_raddr + FORD_VERSION_OFF, &fi->vbuf[0][1], 8,
					true);
			continue;
		}
		if (it->flags & DTXN_ITEM_F_EXISTS) {
			dtxn_batch_read(&b, it->slot_raddr + FORD_LOCK_OFF, fi->vbuf[0], 16, true);
			continue;
		}
		for (p = 0; p < fi->loc.n_bkt; p++)
			dtxn_batch_read(&b, fi->loc.braddr[p], fi->vbuf[p], 16, true);
	}
	if (bytes > 0)
		(void)dtxn_txn_log_write(t, &b, rec, (uint32_t)bytes, mask, &fc->log_head);
	if (b.n_wr == 0)
		return DTXN_OK;
	rc = dtxn_batch_run_reason(&b);
	/* a lock is held once its CAS returned 0, whatever else failed */
	for (i = 0; i < t->n_items; i++) {
		struct dtxn_item *it = &t->items[i];
		struct ford_item *fi = ford_item_of(it);

		if (fi == NULL || !fi->deferred)
			continue;
		if (fi->vbuf[0][0] == 0)
			it->flags |= DTXN_ITEM_F_LOCKED;
		else if (reason == DTXN_OK)
			reason = DTXN_ABORT(DTXN_ABORT_LOCK_CONFLICT);
		if (reason == DTXN_OK && fi->vbuf[0][1] != it->version)
			reason = DTXN_ABORT(DTXN_ABORT_VALIDATION);
		if (reason != DTXN_OK)
			dtxn_fa_verdict(t, false); /* published: not classified */
		fi->deferred = false;
	}
	if (rc != DTXN_OK)
		return rc;
	/* every read item, past the first conflict: the false-abort verdict needs them all */
	for (i = 0; i < t->n_items; i++) {
		const struct dtxn_item *it = &t->items[i];
		const struct ford_item *fi = ford_item_of(it);
		unsigned p;
		int r = DTXN_OK;

		if (it->kind != DTXN_ITEM_RO)
			continue;
		if (it->flags & DTXN_ITEM_F_EXISTS)
			r = val_check_word(t, it, fi->vbuf[0][0], fi->vbuf[0][1], it->version);
		for (p = 0; !(it->flags & DTXN_ITEM_F_EXISTS) && p < fi->loc.n_bkt && r == DTXN_OK; p++)
			r = val_check_word(t, NULL, fi->vbuf[p][0], fi->vbuf[p][1], fi->loc.bver[p]);
		if (reason == DTXN_OK)
			reason = r;
	}
	return reason;
}
