/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The operation log for coordinator failures (paper §5.3): before a
 * coordinator takes a lock, the keys it holds or is about to lock are
 * recorded where a successor can find them. One record per txn, rewritten
 * at offset 0 by each round that locks:
 *
 *   header  txn_id u64 | n u32 | bytes u32               16 B
 *   entry   table_id u32 | kind u8 | rsvd 3 B | key u64
 *           | lock word raddr u64                          24 B
 *
 * oplog=cn (default, the paper's): the record goes to the coordinator's
 * own memory (struct motor_coord oplog, the paper's "UPS-backed local
 * memory", <= 556 B per txn in its TPC-C, reused): a memcpy, no verb, no
 * round trip. The paper's CN is the failure unit it logs for: a successor
 * on the same CN (after a coordinator crash) or the CN's memory after a
 * restart (UPS) reads it.
 *
 * oplog=mn: the record is WRITTEN to the coordinator's log region of every
 * MN on which the round CASes, in the same doorbell chain and before those
 * CASes (RC order: on each MN the record lands before the locks it names),
 * for a successor on another CN when a whole CN dies without UPS. It adds
 * one WRITE per MN per locking round and its bytes.
 *
 * Recovery (recover.c; doc/guides/motor.md, "Recovery"): for each entry,
 * if some replica holds a Vcell written by txn_id, copy that replica's
 * CVT, Vpkg and pre-images to the others (roll forward); then CAS the
 * lock word txn_id -> 0 (a lock no longer ours stays).
 */
#include <string.h>

#include "motor_private.h"

struct oplog_hdr {
	uint64_t txn_id;
	uint32_t n;
	uint32_t bytes;
};

struct oplog_entry {
	uint32_t table_id;
	uint8_t kind;
	uint8_t rsvd[3];
	uint64_t key;
	dtxn_raddr_t lock;
};
_Static_assert(sizeof(struct oplog_hdr) == 16 && sizeof(struct oplog_entry) == 24,
	       "operation log layout");

static void
oplog_put(struct oplog_entry *e, const struct dtxn_item *it, dtxn_raddr_t lock)
{
	e->table_id = it->table->def.id;
	e->kind = it->kind;
	memset(e->rsvd, 0, sizeof(e->rsvd));
	e->key = it->key;
	e->lock = lock;
}

int
motor_oplog_add(struct dtxn_txn *t, struct dtxn_batch *b, uint64_t mn_mask,
		const dtxn_raddr_t *round_locks, const uint32_t *round_items, unsigned n_round)
{
	const struct dtxn_catalog *cat = &t->coord->worker->db->cat;
	struct motor_coord *mc = t->coord->cc_priv;
	struct oplog_hdr *h;
	struct oplog_entry *e;
	uint64_t bytes;
	uint32_t i, n = n_round;

	for (i = 0; i < t->n_items; i++) {
		n += (t->items[i].flags & DTXN_ITEM_F_LOCKED) != 0;
		n += (t->items[i].flags & DTXN_ITEM_F_BLOCKED) != 0;
	}
	bytes = sizeof(*h) + (uint64_t)n * sizeof(*e);
	if (mc->oplog != NULL) {
		if (bytes > mc->oplog_cap)
			return DTXN_ABORT(DTXN_ABORT_TOO_LARGE);
		h = (struct oplog_hdr *)(void *)mc->oplog;
		mc->oplog_len = (uint32_t)bytes;
	} else {
		if (bytes > cat->log_bytes)
			return DTXN_ABORT(DTXN_ABORT_TOO_LARGE);
		h = dtxn_txn_alloc(t, bytes);
		if (h == NULL)
			return DTXN_ABORT(DTXN_ABORT_TOO_LARGE);
	}
	h->txn_id = t->id;
	h->n = n;
	h->bytes = (uint32_t)bytes;
	e = (struct oplog_entry *)(h + 1);
	for (i = 0; i < t->n_items; i++) {
		const struct dtxn_item *it = &t->items[i];

		if (it->flags & DTXN_ITEM_F_LOCKED)
			oplog_put(e++, it, it->lock_raddr);
		if (it->flags & DTXN_ITEM_F_BLOCKED)
			oplog_put(e++, it, it->block_raddr);
	}
	for (i = 0; i < n_round; i++)
		oplog_put(e++, &t->items[round_items[i]], round_locks[i]);
	if (mc->oplog != NULL)
		return DTXN_OK; /* in CN memory: written by the stores above */
	for (; mn_mask != 0; mn_mask &= mn_mask - 1) {
		uint16_t mn = (uint16_t)__builtin_ctzll(mn_mask);

		dtxn_batch_write(b, dtxn_store_log_raddr(cat, t->coord->gid, mn), h,
				 (uint32_t)bytes, false);
	}
	return DTXN_OK;
}
