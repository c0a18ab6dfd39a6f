/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The transaction API: begin, add_*, execute, commit, abort, accessors.
 * lib/txn keeps the read/write set; the protocol's ops do the rest.
 */
#include <errno.h>
#include <string.h>

#include "txn_private.h"

/** Txn ids: (gid + 1) in the high 24 bits, a per-coordinator sequence below. */
#define TXN_SEQ_BITS DTXN_TXN_SEQ_BITS
#define TXN_SEQ_MASK ((UINT64_C(1) << TXN_SEQ_BITS) - 1)

static inline const struct dtxn_cc_ops *
txn_cc(const struct dtxn_txn *t)
{
	return t->coord->worker->db->cc;
}

/*
 * Marks @p t ended, after its abort_reason holds the outcome: a store
 * ordered after it, so that whoever reads a dead CN process's txn in
 * shared memory (app/dtxn-app's recovery of a killed CN) never sees it
 * closed with a stale outcome.
 */
static inline void
txn_closed(struct dtxn_txn *t)
{
	__atomic_store_n(&t->open, 0, __ATOMIC_RELEASE);
}

/* Ends an open txn: the protocol releases what it holds. */
static void
txn_end_aborted(struct dtxn_txn *t, int reason)
{
	if (t->open) {
		txn_cc(t)->abort(t);
		t->abort_reason = reason;
		txn_closed(t);
		txn_history_end(t, false);
	}
	t->abort_reason = reason;
}

uint32_t
dtxn_txn_id_gid(uint64_t id)
{
	return id == 0 ? UINT32_MAX : (uint32_t)(id >> TXN_SEQ_BITS) - 1;
}

struct dtxn_txn *
dtxn_txn_begin(struct dtxn_coord *c, enum dtxn_txn_mode mode)
{
	struct txn_coord *tc;
	struct dtxn_txn *t;
	uint64_t seq;
	int rc;

	if (c == NULL)
		return NULL;
	tc = txn_coord_of(c);
	t = c->txn;
	/* CPU of one attempt (virtual time only; doc/guides/sim.md) */
	dtxn_sched_charge_op(c->worker->sched, DTXN_CPU_TXN, 1);
	if (t->open)
		txn_end_aborted(t, DTXN_ABORT_APP);
	txn_arena_reset(tc);
	tc->wrs_used = 0;

	seq = (c->txn_seq + 1) & TXN_SEQ_MASK;
	if (seq == 0)
		seq = 1;
	c->txn_seq = seq;
	t->id = ((uint64_t)(c->gid + 1) << TXN_SEQ_BITS) | seq;
	t->mode = mode == DTXN_TXN_RO ? DTXN_TXN_RO : DTXN_TXN_RW;
	t->open = 1;
	t->decided = 0;
	t->n_items = 0;
	t->n_fetched = 0;
	t->abort_reason = DTXN_ABORT_NONE;
	t->false_conflict = 0;
	t->fa_verdicts = 0;
	t->debug_mut_posts = 0;
	t->start_ns = 0; /* a protocol that reads it sets it in its begin (a clock read) */
	memset(t->cc, 0, sizeof(t->cc));
	if (txn_cc(t)->begin != NULL) {
		rc = txn_cc(t)->begin(t);
		if (rc != DTXN_OK)
			t->abort_reason = rc; /* execute/commit report it */
	}
	return t;
}

/* Marks a reason execute/commit will abort with (first one wins). */
static void
txn_mark(struct dtxn_txn *t, int reason)
{
	if (t->abort_reason == DTXN_ABORT_NONE)
		t->abort_reason = reason;
}

static struct dtxn_item *
txn_add(struct dtxn_txn *t, uint32_t table_id, uint64_t key, enum dtxn_item_kind kind,
	uint32_t rd_cells, uint32_t wr_cells)
{
	const struct dtxn_table *tab;
	struct dtxn_item *it;
	void *slot;
	size_t len;

	if (t == NULL || !t->open)
		return NULL;
	if (kind != DTXN_ITEM_RO && t->mode == DTXN_TXN_RO)
		return NULL;
	if (t->n_items >= DTXN_TXN_MAX_ITEMS) {
		txn_mark(t, DTXN_ABORT_TOO_LARGE);
		return NULL;
	}
	tab = dtxn_catalog_table(&t->coord->worker->db->cat, table_id);
	if (tab == NULL) {
		txn_mark(t, DTXN_ABORT_NOT_FOUND);
		return NULL;
	}
	dtxn_sched_charge_op(t->coord->worker->sched, DTXN_CPU_RECORD, 1); /* sim only */
	if (kind != DTXN_ITEM_INSERT) /* its lookup (dtxn_txn_item_prepare()) comes later */
		dtxn_addr_cache_prefetch(t->coord->worker->addr_cache, table_id, key);
	/* local copy: the slot, then its aux area if the table has one, then
	 * the protocol's extra room */
	len = (size_t)tab->slot_size + tab->aux_size;
	if (txn_cc(t)->local_extra != NULL)
		len += txn_cc(t)->local_extra(tab);
	slot = dtxn_txn_alloc(t, len);
	if (slot == NULL) {
		txn_mark(t, DTXN_ABORT_TOO_LARGE);
		return NULL;
	}
	memset(slot, 0, len);
	it = &t->items[t->n_items++];
	memset(it, 0, sizeof(*it));
	it->table = tab;
	it->key = key;
	it->kind = (uint8_t)kind;
	it->slot = slot;
	it->value = txn_cc(t)->slot_value(tab, slot);
	it->wr_cells = kind == DTXN_ITEM_RO ? 0 : dtxn_table_cells_norm(&tab->def, wr_cells);
	it->rd_cells = dtxn_table_cells_norm(&tab->def, rd_cells | it->wr_cells);
	return it;
}

struct dtxn_item *
dtxn_txn_add_ro(struct dtxn_txn *t, uint32_t table_id, uint64_t key)
{
	return txn_add(t, table_id, key, DTXN_ITEM_RO, DTXN_CELLS_ALL, 0);
}

struct dtxn_item *
dtxn_txn_add_ro_cells(struct dtxn_txn *t, uint32_t table_id, uint64_t key, uint32_t cells)
{
	return txn_add(t, table_id, key, DTXN_ITEM_RO, cells, 0);
}

struct dtxn_item *
dtxn_txn_add_rw(struct dtxn_txn *t, uint32_t table_id, uint64_t key)
{
	return txn_add(t, table_id, key, DTXN_ITEM_RW, DTXN_CELLS_ALL, DTXN_CELLS_ALL);
}

struct dtxn_item *
dtxn_txn_add_rw_cells(struct dtxn_txn *t, uint32_t table_id, uint64_t key, uint32_t rd_cells,
		      uint32_t wr_cells)
{
	return txn_add(t, table_id, key, DTXN_ITEM_RW, rd_cells, wr_cells);
}

struct dtxn_item *
dtxn_txn_insert(struct dtxn_txn *t, uint32_t table_id, uint64_t key)
{
	return txn_add(t, table_id, key, DTXN_ITEM_INSERT, DTXN_CELLS_ALL, DTXN_CELLS_ALL);
}

struct dtxn_item *
dtxn_txn_delete(struct dtxn_txn *t, uint32_t table_id, uint64_t key)
{
	return txn_add(t, table_id, key, DTXN_ITEM_DELETE, DTXN_CELLS_ALL, DTXN_CELLS_ALL);
}

/* Closed txn: the reason it ended with (never OK). */
static int
txn_closed_rc(const struct dtxn_txn *t)
{
	return t->abort_reason != DTXN_ABORT_NONE ? t->abort_reason : DTXN_ABORT_APP;
}

/* A protocol step failed with @p rc: the protocol has released everything. */
static int
txn_failed(struct dtxn_txn *t, int rc)
{
	dtxn_fa_settle(t, rc);
	t->abort_reason = rc;
	txn_closed(t);
	txn_history_end(t, false);
	return rc;
}

int
dtxn_txn_execute(struct dtxn_txn *t)
{
	uint32_t i;
	int rc;

	if (t == NULL)
		return DTXN_ABORT(DTXN_ABORT_APP);
	if (!t->open)
		return txn_closed_rc(t);
	if (t->abort_reason != DTXN_ABORT_NONE) {
		rc = t->abort_reason;
		txn_end_aborted(t, rc);
		return rc;
	}
	if (t->n_fetched >= t->n_items)
		return DTXN_OK;
	t->fa_mark = t->fa_verdicts;
	rc = txn_cc(t)->execute(t);
	if (rc != DTXN_OK)
		return txn_failed(t, rc);
	for (i = t->n_fetched; i < t->n_items; i++)
		t->items[i].flags |= DTXN_ITEM_F_FETCHED;
	t->n_fetched = t->n_items;
	return DTXN_OK;
}

/* Block end and commit: the txn is open and its items added since the last execute are fetched. */
static int
txn_fetch_rest(struct dtxn_txn *t)
{
	if (t == NULL)
		return DTXN_ABORT(DTXN_ABORT_APP);
	if (!t->open)
		return txn_closed_rc(t);
	return dtxn_txn_execute(t);
}

int
dtxn_txn_block_end(struct dtxn_txn *t)
{
	int rc = txn_fetch_rest(t);

	if (rc != DTXN_OK || txn_cc(t)->block_end == NULL)
		return rc;
	rc = txn_cc(t)->block_end(t);
	return rc != DTXN_OK ? txn_failed(t, rc) : DTXN_OK;
}

int
dtxn_txn_commit(struct dtxn_txn *t)
{
	int rc = txn_fetch_rest(t);

	if (rc != DTXN_OK)
		return rc;
	t->fa_mark = t->fa_verdicts;
	rc = txn_cc(t)->commit(t);
	dtxn_fa_settle(t, rc);
	t->abort_reason = rc;
	txn_closed(t);
	txn_history_end(t, rc == DTXN_OK);
	return rc;
}

void
dtxn_txn_abort(struct dtxn_txn *t, int reason)
{
	if (t == NULL || !t->open)
		return;
	txn_end_aborted(t, reason > 0 && reason < DTXN_ABORT_REASON_MAX ? reason
								: DTXN_ABORT_APP);
}

uint64_t
dtxn_txn_id(const struct dtxn_txn *t)
{
	return t == NULL ? 0 : t->id;
}

void *
dtxn_item_value(struct dtxn_item *it)
{
	return it == NULL ? NULL : it->value;
}

bool
dtxn_item_exists(const struct dtxn_item *it)
{
	return it != NULL && (it->flags & DTXN_ITEM_F_EXISTS) != 0;
}

uint64_t
dtxn_item_key(const struct dtxn_item *it)
{
	return it == NULL ? 0 : it->key;
}
