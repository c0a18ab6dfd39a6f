/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The baseline Scythe's Takeout Lock is measured against (cas_lock=1;
 * scythe.md, Fig. 27; paper §3.1 (3), Fig. 7): a 1-bit lock that a CN
 * takes with one one-sided CAS 0 -> 1 and retries when it finds it taken:
 * no queue, no order, no MN CPU, so a waiter may lose to later arrivals
 * again and again (unfair) and every retry is one more CAS round trip on
 * the MN's RNIC. The lock word is the record's @c lower word (the Lock
 * RPC is not used with this option, so the MN CPU never writes it);
 * @c upper stays 0, so the hotness every reader computes, lower - upper,
 * is 1 while the lock is held: COLD reads and validation abort on it as
 * on a held Takeout Lock. Everything else is Scythe unchanged.
 */
#include "scythe_private.h"

int
scythe_cas_lock_run(struct dtxn_txn *t)
{
	struct scythe_worker *sw = scythe_worker_of(t);
	uint64_t deadline = dtxn_now_ns() + SCYTHE_CAS_WAIT_NS;

	scythe_lk_alias(t);
	for (;;) {
		struct dtxn_batch b;
		int rc;

		dtxn_batch_init(&b, t->coord);
		for (uint32_t i = 0; i < t->n_items; i++) {
			struct dtxn_item *it = &t->items[i];
			struct scythe_item *si = scythe_item_of(it);

			if (si == NULL || si->lk != SCYTHE_LK_NEED)
				continue;
			dtxn_batch_cas(&b, it->slot_raddr + SCYTHE_LOWER_OFF, &si->cas_old, 0, 1, true);
			/* the version under the lock, behind the CAS on the same QP */
			dtxn_batch_read(&b, it->slot_raddr + SCYTHE_UPPER_OFF, si->poll,
					sizeof(si->poll), true);
			sw->st.lock_reqs++;
		}
		if (b.n_wr == 0)
			return DTXN_OK;
		rc = dtxn_batch_run_reason(&b);
		if (rc != DTXN_OK)
			return rc;
		for (uint32_t i = 0; i < t->n_items; i++) {
			struct scythe_item *si = scythe_item_of(&t->items[i]);

			if (si == NULL || si->lk != SCYTHE_LK_NEED)
				continue;
			if (si->cas_old == 0) {
				si->lk = SCYTHE_LK_HELD;
				si->lversion = si->poll[1];
			} else {
				sw->st.cas_retries++;
			}
		}
		if (!scythe_lk_any(t, SCYTHE_LK_NEED))
			return DTXN_OK;
		if (dtxn_now_ns() >= deadline) {
			for (uint32_t i = 0; i < t->n_items; i++) {
				struct scythe_item *si = scythe_item_of(&t->items[i]);

				if (si != NULL && si->lk == SCYTHE_LK_NEED)
					si->lk = SCYTHE_LK_NONE;
			}
			sw->st.rejected++;
			return DTXN_ABORT(DTXN_ABORT_LOCK_CONFLICT);
		}
		/* taken: CAS again at once (the paper's CAS lock spins) */
	}
}
