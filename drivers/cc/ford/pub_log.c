/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Published mode's undo log (ford.md §3, "Undo log"; §6 item 7): at the
 * end of every execution of a txn that writes, one record
 *   tx_id u64 | t_id u32 | the full slot of each locked, not yet logged,
 *   non-insert written item
 * goes as a signaled WRITE to the coordinator's log region on EVERY MN
 * (replica or not), not waited for; commit then busy-waits for the ACKs
 * with the thread's other coordinators blocked (dtxn_co_spin_lc()).
 *
 * A record is built in a local mirror of the circular log region, at the
 * offset it is written to, so that a record in flight (an execution
 * followed by an abort or by another execution) is never overwritten
 * before the log wraps around: at a wrap with a record possibly in
 * flight, the coordinator first waits (yielding) for it.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include <rte_malloc.h>

#include "ford_private.h"

int
ford_pub_log_init(struct dtxn_coord *c)
{
	struct ford_coord *fc = c->cc_priv;
	const struct dtxn_catalog *cat = &c->worker->db->cat;

	fc->log_mirror = rte_malloc_socket("ford_log", cat->log_bytes, 64, c->worker->socket_id);
	return fc->log_mirror == NULL ? -ENOMEM : 0;
}

int
ford_pub_log(struct dtxn_txn *t)
{
	struct dtxn_coord *c = t->coord;
	struct ford_coord *fc = c->cc_priv;
	const struct dtxn_catalog *cat = &c->worker->db->cat;
	struct ford_pub_log_hdr *h;
	struct dtxn_batch b;
	uint64_t bytes = FORD_PUB_LOG_HDR;
	uint32_t i;
	char *p;

	for (i = 0; i < t->n_items; i++) {
		const struct dtxn_item *it = &t->items[i];
		const struct ford_item *fi = ford_item_of(it);

		if (fi != NULL && fi->pre != NULL && !fi->logged && it->kind != DTXN_ITEM_INSERT)
			bytes += it->table->slot_size;
	}
	if (bytes > cat->log_bytes)
		return DTXN_ABORT(DTXN_ABORT_TOO_LARGE); /* nothing posted */
	if (fc->log_head + bytes > cat->log_bytes) {
		if (fc->log_inflight)
			(void)dtxn_co_wait_lc(c->co); /* the record at the start may be in flight */
		fc->log_inflight = false;
		fc->log_head = 0;
	}
	h = (struct ford_pub_log_hdr *)(fc->log_mirror + fc->log_head);
	h->txn_id = t->id;
	h->t_id = c->gid;
	p = (char *)h + FORD_PUB_LOG_HDR;
	for (i = 0; i < t->n_items; i++) {
		const struct dtxn_item *it = &t->items[i];
		struct ford_item *fi = ford_item_of(it);

		if (fi == NULL || fi->pre == NULL || fi->logged || it->kind == DTXN_ITEM_INSERT)
			continue;
		memcpy(p, fi->pre, it->table->slot_size);
		p += it->table->slot_size;
		fi->logged = true;
	}
	dtxn_batch_init(&b, c);
	for (uint16_t mn = 0; mn < cat->n_mn; mn++)
		dtxn_batch_write(&b, dtxn_store_log_raddr(cat, c->gid, mn) + fc->log_head, h,
				 (uint32_t)bytes, true);
	dtxn_batch_post_forget(&b, t, "undo record");
	fc->log_inflight = true;
	fc->log_head += RTE_ALIGN_CEIL(bytes, 8);
	return DTXN_OK;
}

int
ford_pub_log_wait(struct dtxn_txn *t)
{
	struct ford_coord *fc = t->coord->cc_priv;
	int rc;

	if (!fc->log_inflight)
		return DTXN_OK;
	rc = dtxn_co_spin_lc(t->coord->co);
	fc->log_inflight = false;
	return rc != 0 ? DTXN_ABORT(DTXN_ABORT_FABRIC) : DTXN_OK;
}
