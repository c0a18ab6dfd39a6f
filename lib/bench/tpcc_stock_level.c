/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * TPC-C StockLevel (clause 2.8), a read-only transaction:
 *
 *   round 1: DISTRICT (D_NEXT_O_ID);
 *   round 2: the ORDER rows O_ID in [D_NEXT_O_ID - 20, D_NEXT_O_ID) (their
 *            O_OL_CNT: there is no range scan over ORDER-LINE);
 *   round 3: their ORDER-LINE rows (OL_I_ID);
 *   round 4: STOCK of each distinct item of the home warehouse;
 *   commit:  validation. The result (distinct items with S_QUANTITY below
 *            the threshold) goes nowhere.
 *
 * Inputs (clause 2.8.1): home warehouse uniform; the district is uniform
 * too (the spec fixes it per terminal; there are no terminals here);
 * threshold 10..20. The spec allows StockLevel a weaker isolation
 * (clause 3.4); this one is serializable like the others.
 */
#include <stdint.h>
#include <stdlib.h>

#include <rte_common.h>

#include "bench_private.h"
#include "tpcc.h"

#define SL_MAX_LINES (TPCC_STOCK_LEVEL_ORDERS * TPCC_MAX_OL)

static int
sl_cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

int
tpcc_stock_level(struct dtxn_bench_ctx *ctx, const struct tpcc_priv *p)
{
	struct dtxn_rng *r = &ctx->rng;
	struct dtxn_item *d_it, *o_it[TPCC_STOCK_LEVEL_ORDERS], *ol_it[SL_MAX_LINES];
	struct dtxn_item *s_it[SL_MAX_LINES];
	uint32_t i_id[SL_MAX_LINES];
	struct tpcc_district di;
	struct dtxn_txn *t;
	uint32_t w, d, first, n_orders, n_lines = 0, n_items = 0, low = 0;
	int32_t threshold;
	int rc;

	w = tpcc_pick_warehouse(p, r);
	d = (uint32_t)dtxn_rng_between(r, 1, TPCC_DISTRICTS);
	threshold = (int32_t)dtxn_rng_between(r, 10, 20);

	t = dtxn_txn_begin(ctx->coord, DTXN_TXN_RO);
	/* cells (clause 2.8.2.2): D_NEXT_O_ID, O_OL_CNT, OL_I_ID, S_QUANTITY */
	d_it = dtxn_txn_add_ro_cells(t, TPCC_DISTRICT, tpcc_k_district(w, d),
				     DTXN_CELL(TPCC_D_NEXT_O_ID));
	rc = dtxn_txn_execute(t);
	if (rc != DTXN_OK)
		return rc;
	if (!bench_items_exist(t, &d_it, 1))
		return DTXN_ABORT_NOT_FOUND;
	tpcc_get(d_it, &di, sizeof(di));
	first = di.next_o_id > TPCC_STOCK_LEVEL_ORDERS ? di.next_o_id - TPCC_STOCK_LEVEL_ORDERS : 1;
	n_orders = di.next_o_id > first ? di.next_o_id - first : 0;

	for (uint32_t k = 0; k < n_orders; k++)
		o_it[k] = dtxn_txn_add_ro_cells(t, TPCC_ORDER, tpcc_k_order(p, w, d, first + k),
						DTXN_CELL(TPCC_O_OL_CNT));
	rc = dtxn_txn_execute(t);
	if (rc != DTXN_OK)
		return rc;
	if (!bench_items_exist(t, o_it, n_orders))
		return DTXN_ABORT_NOT_FOUND;

	for (uint32_t k = 0; k < n_orders; k++) {
		struct tpcc_order ord;

		tpcc_get(o_it[k], &ord, sizeof(ord));
		if (ord.ol_cnt > TPCC_MAX_OL) {
			dtxn_txn_abort(t, DTXN_ABORT_NOT_FOUND);
			return DTXN_ABORT_NOT_FOUND;  /* torn: validation would fail it */
		}
		for (uint32_t ol = 1; ol <= ord.ol_cnt; ol++)
			ol_it[n_lines++] = dtxn_txn_add_ro_cells(
				t, TPCC_ORDER_LINE, tpcc_k_order_line(p, w, d, first + k, ol),
				DTXN_CELL(TPCC_OL_I_ID));
	}
	rc = dtxn_txn_execute(t);
	if (rc != DTXN_OK)
		return rc;
	if (!bench_items_exist(t, ol_it, n_lines))
		return DTXN_ABORT_NOT_FOUND;

	for (uint32_t k = 0; k < n_lines; k++) {
		struct tpcc_order_line ol;

		tpcc_get(ol_it[k], &ol, sizeof(ol));
		i_id[k] = ol.i_id;
	}
	qsort(i_id, n_lines, sizeof(i_id[0]), sl_cmp_u32);
	for (uint32_t k = 0; k < n_lines; k++) {
		if (k > 0 && i_id[k] == i_id[k - 1])
			continue;
		s_it[n_items++] = dtxn_txn_add_ro_cells(t, TPCC_STOCK, tpcc_k_stock(w, i_id[k]),
							DTXN_CELL(TPCC_S_QUANTITY));
	}
	rc = dtxn_txn_execute(t);
	if (rc != DTXN_OK)
		return rc;
	if (!bench_items_exist(t, s_it, n_items))
		return DTXN_ABORT_NOT_FOUND;
	for (uint32_t k = 0; k < n_items; k++) {
		struct tpcc_stock st;

		tpcc_get(s_it[k], &st, sizeof(st));
		low += st.quantity < threshold;
	}
	RTE_SET_USED(low);
	return dtxn_txn_commit(t);
}
