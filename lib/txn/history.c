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
 * contract protocols keep is in dtxn_txn_driver.h. An item with per-cell
 * versions (dtxn_item.cell_vers, cell-level protocols) is recorded cell by
 * cell, each cell c as table id | (c + 1) << 16: READ of a cell only read,
 * RMW of a written one (WRITE for an insert).
 */
#include <errno.h>

#include <rte_pause.h>

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

/* Records of item @p it: one, or one per cell it touched (dtxn_item.cell_vers). */
static uint32_t
hist_item_records(const struct dtxn_item *it)
{
	const struct dtxn_cell_vers *cv = it->cell_vers;

	return cv != NULL ? (uint32_t)__builtin_popcount(cv->rd | cv->wr) : 1;
}

/* Cell @p c of item @p it, which saw version @p ver of it: its record (cell_vers). */
static void
hist_cell(struct dtxn_hist_item *h, const struct dtxn_item *it, unsigned c, bool fetched)
{
	const struct dtxn_cell_vers *cv = it->cell_vers;
	const bool writes = (cv->wr & DTXN_CELL(c)) != 0;

	h->key = it->key;
	h->table = it->table->def.id | (uint32_t)(c + 1) << 16;
	h->flags = 0;
	h->wseq = 0;
	if (!fetched) {
		h->ver = DTXN_HIST_VER_NONE;
	} else if (it->kind == DTXN_ITEM_INSERT) {
		h->ver = (it->flags & DTXN_ITEM_F_TOMB) ? cv->ver[c] : DTXN_HIST_VER_ABSENT;
	} else {
		h->ver = (it->flags & (DTXN_ITEM_F_EXISTS | DTXN_ITEM_F_TOMB)) ? cv->ver[c] :
										  DTXN_HIST_VER_ABSENT;
	}
	if (it->kind == DTXN_ITEM_INSERT)
		h->op = DTXN_HIST_WRITE;
	else
		h->op = writes ? DTXN_HIST_RMW : DTXN_HIST_READ;
	if (it->kind == DTXN_ITEM_DELETE)
		h->flags = DTXN_HIST_F_DELETE;
}

void
txn_history_record(const struct dtxn_txn *t, bool committed)
{
	struct dtxn_hist_item *h;
	uint32_t i, n = 0;

	for (i = 0; i < t->n_items; i++)
		n += hist_item_records(&t->items[i]);
	h = dtxn_hist_buf_append(txn_coord_of(t->coord)->hist, t->id,
				 committed ? DTXN_HIST_COMMITTED : DTXN_HIST_ABORTED, n);
	if (h == NULL)
		return; /* full: counted as dropped by the buffer */
	for (i = 0; i < t->n_items; i++, h++) {
		const struct dtxn_item *it = &t->items[i];
		const bool fetched = committed || (it->flags & DTXN_ITEM_F_FETCHED) != 0;

		if (it->cell_vers != NULL) {
			uint32_t m = it->cell_vers->rd | it->cell_vers->wr;

			for (; m != 0; m &= m - 1)
				hist_cell(h++, it, (unsigned)__builtin_ctz(m), fetched);
			h--;
			continue;
		}
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
	/* streamed (a CN process): the line goes to the stream's writer thread
	 * (lib/check hist_stream.c), which writes it within its flush period;
	 * if the writer is behind and its pool has no free buffer, the
	 * coordinator yields until one is free (the wait is counted by the
	 * stream: dtxn_hist_stream_stats()), never drops the line */
	while (dtxn_hist_buf_seal(txn_coord_of(t->coord)->hist) == -EAGAIN) {
		if (t->coord->co != NULL)
			dtxn_co_yield_lc(t->coord->co);
		else
			rte_pause(); /* not a coroutine (no stream there today) */
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
