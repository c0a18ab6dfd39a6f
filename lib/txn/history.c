/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * History recording (issue 5): each ended txn of a coordinator with a
 * history buffer attached is appended to it, translated to the checker's
 * protocol-neutral records (lib/check/dtxn_check.h):
 *
 *   RO item      READ  of item.version (ABSENT if the key was missing,
 *                unless the protocol saw its tombstone: DTXN_ITEM_F_TOMB)
 *   RW item      RMW   over item.version (read under the protocol's lock)
 *   insert item  WRITE over ABSENT, or over item.version (DTXN_ITEM_F_TOMB)
 *   delete item  RMW   over item.version, flagged DELETE
 *
 * Items an aborted txn never fetched get version NONE. The version
 * contract protocols keep is in dtxn_txn_driver.h.
 */
#include <errno.h>

#include "dtxn_check.h"
#include "txn_private.h"

_Static_assert((int)DTXN_CHECK_SR == (int)DTXN_ISO_SR &&
	       (int)DTXN_CHECK_SI == (int)DTXN_ISO_SI, "check levels follow isolation levels");
_Static_assert(DTXN_TXN_MAX_ITEMS <= DTXN_HIST_MAX_ITEMS, "a txn must fit a history record");

int
dtxn_coord_history_attach(struct dtxn_coord *c, struct dtxn_hist_buf *buf)
{
	if (c == NULL)
		return -EINVAL;
	txn_coord_of(c)->hist = buf;
	return 0;
}

void
txn_history_record(const struct dtxn_txn *t, bool committed)
{
	struct dtxn_hist_item *h;
	uint32_t i;

	h = dtxn_hist_buf_append(txn_coord_of(t->coord)->hist, t->id,
				 committed ? DTXN_HIST_COMMITTED : DTXN_HIST_ABORTED, t->n_items);
	if (h == NULL)
		return; /* full: counted as dropped by the buffer */
	for (i = 0; i < t->n_items; i++, h++) {
		const struct dtxn_item *it = &t->items[i];
		const bool fetched = committed || (it->flags & DTXN_ITEM_F_FETCHED) != 0;

		h->key = it->key;
		h->table = it->table->def.id;
		h->flags = 0;
		h->wseq = 0;
		switch (it->kind) {
		case DTXN_ITEM_RO:
			h->op = DTXN_HIST_READ;
			h->ver = !fetched ? DTXN_HIST_VER_NONE :
				 (it->flags & (DTXN_ITEM_F_EXISTS | DTXN_ITEM_F_TOMB)) ? it->version :
											  DTXN_HIST_VER_ABSENT;
			break;
		case DTXN_ITEM_INSERT:
			h->op = DTXN_HIST_WRITE;
			h->ver = fetched && (it->flags & DTXN_ITEM_F_TOMB) ? it->version :
									     DTXN_HIST_VER_ABSENT;
			break;
		case DTXN_ITEM_DELETE:
			h->op = DTXN_HIST_RMW;
			h->flags = DTXN_HIST_F_DELETE;
			h->ver = fetched ? it->version : DTXN_HIST_VER_NONE;
			break;
		default:
			h->op = DTXN_HIST_RMW;
			h->ver = fetched ? it->version : DTXN_HIST_VER_NONE;
			break;
		}
	}
}

int
dtxn_coord_history_end_open(struct dtxn_coord *c, bool committed)
{
	if (c == NULL)
		return -EINVAL;
	if (!c->txn->open)
		return -ENOENT;
	txn_history_record(c->txn, committed);
	c->txn->open = 0;
	return 0;
}
