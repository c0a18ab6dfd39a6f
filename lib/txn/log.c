/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Log records of written items (dtxn_txn_driver.h, "Log records"): a
 * header, then per written item an entry and a slot image (the image the
 * protocol names: the record before the txn for an undo log, after it
 * for a redo log), padded to 64 B; written to the coordinator's log
 * region on every MN that holds a replica of a written table, in a
 * circular log.
 */
#include <errno.h>
#include <string.h>

#include <rte_common.h>
#include <rte_hash_crc.h>

#include "txn_private.h"

/* CRC32-C of a record's body, seeded with its header's fields. */
static uint32_t
log_crc(const struct dtxn_log_hdr *h)
{
	uint32_t seed = rte_hash_crc_8byte(h->txn_id, h->n_entries ^ ((uint32_t)h->bytes << 16));

	return rte_hash_crc(h + 1, h->bytes - (uint32_t)sizeof(*h), seed);
}

bool
dtxn_txn_log_intact(const struct dtxn_log_hdr *h)
{
	return h->bytes >= sizeof(*h) && log_crc(h) == h->crc;
}

int64_t
dtxn_txn_log_build(struct dtxn_txn *t, dtxn_log_image_fn image, void **recp,
		   uint64_t *mn_mask)
{
	const struct dtxn_catalog *cat = &t->coord->worker->db->cat;
	struct dtxn_log_hdr *h;
	uint64_t bytes = sizeof(*h), mask = 0;
	uint32_t i, n = 0;
	char *p;

	for (i = 0; i < t->n_items; i++) {
		const struct dtxn_item *it = &t->items[i];

		if (!dtxn_item_writes(it))
			continue;
		bytes += sizeof(struct dtxn_log_entry) + it->table->slot_size;
		for (uint16_t r = 0; r < it->table->n_replicas; r++) { /* the row's stripe's MNs */
			uint16_t m = dtxn_store_row_mn(it->table, r, it->slot_raddr);

			mask |= m < DTXN_MAX_NODES ? UINT64_C(1) << m : 0;
		}
		n++;
	}
	if (n == 0)
		return 0;
	bytes = RTE_ALIGN_CEIL(bytes, 64);
	if (bytes > cat->log_bytes)
		return -E2BIG;
	h = dtxn_txn_alloc(t, bytes);
	if (h == NULL)
		return -E2BIG;
	memset(h, 0, bytes);
	h->txn_id = t->id;
	h->n_entries = n;
	h->bytes = (uint32_t)bytes;
	p = (char *)(h + 1);
	for (i = 0; i < t->n_items; i++) {
		const struct dtxn_item *it = &t->items[i];
		struct dtxn_log_entry *e = (struct dtxn_log_entry *)p;

		if (!dtxn_item_writes(it))
			continue;
		e->table_id = it->table->def.id;
		e->slot_size = it->table->slot_size;
		e->key = it->key;
		e->raddr = it->slot_raddr;
		memcpy(e + 1, image(t, it), it->table->slot_size);
		p += sizeof(*e) + it->table->slot_size;
	}
	h->crc = log_crc(h);
	*recp = h;
	*mn_mask = mask;
	return (int64_t)bytes;
}

uint64_t
dtxn_txn_log_write(struct dtxn_txn *t, struct dtxn_batch *b, const void *rec, uint32_t bytes,
		   uint64_t mn_mask, uint64_t *head)
{
	const struct dtxn_catalog *cat = &t->coord->worker->db->cat;
	uint64_t off;

	if (*head + bytes > cat->log_bytes)
		*head = 0; /* circular: wrap to the start */
	off = *head;
	for (; mn_mask != 0; mn_mask &= mn_mask - 1) {
		uint16_t mn = (uint16_t)__builtin_ctzll(mn_mask);

		dtxn_batch_write(b, dtxn_store_log_raddr(cat, t->coord->gid, mn) + off, rec, bytes,
				 true);
	}
	*head += bytes;
	return off;
}
