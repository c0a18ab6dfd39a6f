/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DTXN_UT_CELLS_H
#define DTXN_UT_CELLS_H

/**
 * @file
 * Two coordinator bodies on one row of counter cells, for the tests of
 * cell-level conflicts (test_crest, test_false_abort): a writer of one
 * cell and a reader of some, each pausing between execute and commit on
 * a shared step counter. The includer defines T_ROW (the table: values of
 * uint64_t cells) and `static volatile int g_step` before including it.
 */

#include <stdbool.h>
#include <stdint.h>

#include "dtxn_txn.h"
#include "ut_txn.h"

struct cell_arg {
	uint64_t key;
	unsigned cell;      /**< written cell */
	uint32_t rd;        /**< cells read (besides the written one) */
	int wait_for;       /**< step to wait for after execute */
	int then;           /**< step to set after execute */
	bool rw;            /**< co_cell_read: a read-write txn that also adds 1 to cell 0 of key + 1 */
	int rc;
	uint64_t id;
	uint32_t gid;       /**< its coordinator */
	bool false_abort;   /**< dtxn_coord_false_abort() after it ended */
};

/** Adds 1 to one cell of a row, pausing between execute and commit. */
static inline void
co_cell_inc(struct dtxn_coord *c, void *arg)
{
	struct cell_arg *a = arg;
	struct dtxn_txn *t = dtxn_txn_begin(c, DTXN_TXN_RW);
	struct dtxn_item *it = dtxn_txn_add_rw_cells(t, T_ROW, a->key, a->rd, DTXN_CELL(a->cell));

	a->id = dtxn_txn_id(t);
	a->gid = dtxn_coord_gid(c);
	a->rc = dtxn_txn_execute(t);
	if (g_step < a->then)
		g_step = a->then;
	ut_wait_step(c, &g_step, a->wait_for);
	a->false_abort = dtxn_coord_false_abort(c);
	if (a->rc != DTXN_OK)
		return;
	((uint64_t *)dtxn_item_value(it))[a->cell]++;
	a->rc = dtxn_txn_commit(t);
	a->false_abort = dtxn_coord_false_abort(c);
	g_step++;
}

/**
 * Reads cells a->rd of a row, pausing between execute and commit; with
 * a->rw a read-write txn that also adds 1 to cell 0 of the next row (Motor
 * validates the reads of those only).
 */
static inline void
co_cell_read(struct dtxn_coord *c, void *arg)
{
	struct cell_arg *a = arg;
	struct dtxn_txn *t = dtxn_txn_begin(c, a->rw ? DTXN_TXN_RW : DTXN_TXN_RO);
	struct dtxn_item *w = NULL;

	dtxn_txn_add_ro_cells(t, T_ROW, a->key, a->rd);
	if (a->rw)
		w = dtxn_txn_add_rw_cells(t, T_ROW, a->key + 1, DTXN_CELL(0), DTXN_CELL(0));
	a->rc = dtxn_txn_execute(t);
	if (g_step < a->then)
		g_step = a->then;
	ut_wait_step(c, &g_step, a->wait_for);
	if (a->rc == DTXN_OK) {
		if (w != NULL)
			((uint64_t *)dtxn_item_value(w))[0]++;
		a->rc = dtxn_txn_commit(t);
	}
	a->false_abort = dtxn_coord_false_abort(c);
	g_step++;
}

#endif /* DTXN_UT_CELLS_H */
