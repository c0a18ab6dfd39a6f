/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * OOCC validation READs (Algorithm 1, lines 13-16) and their checks: per
 * read item that exists, READ its footer (tail version + lock, 16 B); per
 * read of an absent key, READ the header (lock + version, 16 B) of every
 * bucket the lookup visited. A version that changed aborts; so does a
 * lock the txn's kind does not tolerate: a read-only txn validates past an
 * intention lock (Fig. 5 case 2.1: the writer has written nothing yet) but
 * not a write lock (case 2.2); a read-write txn aborts on any other txn's
 * lock, as OCC validation does once the txn's own locks are held: with
 * only write locks checked, two read-write txns whose read and write sets
 * cross both see the other's intention lock, pass, and commit a write
 * skew (doc/guides/oocc.md, "The paper's hole").
 */
#include "oocc_private.h"

/* Whether read item @p it is validated: all of them, or those seen intention-locked. */
static bool
val_wanted(const struct dtxn_item *it, bool all)
{
	return it->kind == DTXN_ITEM_RO && (all || oocc_item_of(it)->intent);
}

void
oocc_validate_issue(struct dtxn_txn *t, struct dtxn_batch *b, bool all)
{
	for (uint32_t i = 0; i < t->n_items; i++) {
		struct dtxn_item *it = &t->items[i];
		struct oocc_item *oi = oocc_item_of(it);

		if (!val_wanted(it, all))
			continue;
		if (it->flags & DTXN_ITEM_F_EXISTS) {
			dtxn_batch_read(b, it->slot_raddr + it->table->slot_size - OOCC_FOOTER,
					oi->vbuf[0], OOCC_FOOTER, true);
			continue;
		}
		for (unsigned p = 0; p < oi->loc.n_bkt; p++)
			dtxn_batch_read(b, oi->loc.braddr[p], oi->vbuf[p], 16, true);
	}
}

uint64_t
oocc_validate_mns(const struct dtxn_txn *t, bool all)
{
	uint64_t mask = 0;

	for (uint32_t i = 0; i < t->n_items; i++) {
		const struct dtxn_item *it = &t->items[i];
		const struct oocc_item *oi = oocc_item_of(it);

		if (!val_wanted(it, all))
			continue;
		if (it->flags & DTXN_ITEM_F_EXISTS) {
			mask |= UINT64_C(1) << DTXN_RADDR_MN(it->slot_raddr);
			continue;
		}
		for (unsigned p = 0; p < oi->loc.n_bkt; p++)
			mask |= UINT64_C(1) << DTXN_RADDR_MN(oi->loc.braddr[p]);
	}
	return mask;
}

/* One lock word and version as validated. */
static int
val_word(const struct dtxn_txn *t, bool rw, uint64_t lock, uint64_t version, uint64_t seen)
{
	enum oocc_lock_state st = oocc_lock_state(lock, t->id, oocc_opts_t(t)->delayed_lock);

	if (st == OOCC_LOCK_WRITE || (rw && st == OOCC_LOCK_INTENT))
		return DTXN_ABORT(DTXN_ABORT_LOCKED_READ);
	if (version != seen)
		return DTXN_ABORT(DTXN_ABORT_VALIDATION);
	return DTXN_OK;
}

int
oocc_validate_check(const struct dtxn_txn *t, bool all, bool rw)
{
	int reason = DTXN_OK;

	for (uint32_t i = 0; i < t->n_items && reason == DTXN_OK; i++) {
		const struct dtxn_item *it = &t->items[i];
		const struct oocc_item *oi = oocc_item_of(it);

		if (!val_wanted(it, all))
			continue;
		if (it->flags & DTXN_ITEM_F_EXISTS) {
			/* footer: [tail version, lock] */
			reason = val_word(t, rw, oi->vbuf[0][1], oi->vbuf[0][0], it->version);
			continue;
		}
		/* bucket header: [lock, version] */
		for (unsigned p = 0; p < oi->loc.n_bkt && reason == DTXN_OK; p++)
			reason = val_word(t, rw, oi->vbuf[p][0], oi->vbuf[p][1], oi->loc.bver[p]);
	}
	return reason;
}
