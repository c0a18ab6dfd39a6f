/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * TPC-C OrderStatus (clause 2.6), a read-only transaction:
 *
 *   round 1 (by name): the CUSTOMER_NAME index row;
 *   round 2: CUSTOMER (C_BALANCE, C_FIRST, C_MIDDLE, C_LAST) and the
 *            customer's LAST_ORDER row (the O_ID of the order with the
 *            largest O_ID of this customer: clause 2.6.2.2 without a scan);
 *   round 3: that ORDER (O_ENTRY_D, O_CARRIER_ID, O_OL_CNT);
 *   round 4: its O_OL_CNT ORDER-LINE rows;
 *   commit:  validation of everything read.
 *
 * Inputs (clause 2.6.1): home warehouse and district uniform; 60% by last
 * name NURand(255), 40% by C_ID NURand(1023). The output goes nowhere.
 */
#include <errno.h>
#include <stdint.h>

#include "bench_private.h"
#include "tpcc.h"

int
tpcc_order_status(struct dtxn_bench_ctx *ctx, const struct tpcc_priv *p)
{
	struct dtxn_rng *r = &ctx->rng;
	struct dtxn_item *c_it, *lo_it, *o_it, *ol_it[TPCC_MAX_OL];
	struct tpcc_last_order lo;
	struct tpcc_order ord;
	struct dtxn_txn *t;
	uint32_t w, d, c = 0, name = 0;
	bool by_name;
	int rc;

	w = tpcc_pick_warehouse(p, r);
	d = (uint32_t)dtxn_rng_between(r, 1, TPCC_DISTRICTS);
	by_name = dtxn_rng_between(r, 1, 100) <= 60;
	if (by_name)
		name = tpcc_pick_last_name(p, r);
	else
		c = tpcc_pick_customer(p, r);

	t = dtxn_txn_begin(ctx->coord, DTXN_TXN_RO);
	if (by_name) {
		rc = tpcc_customer_by_name(t, w, d, name, &c);
		if (rc == -ENOENT) {
			dtxn_txn_abort(t, DTXN_ABORT_APP);
			return DTXN_BENCH_ROLLBACK;
		}
		if (rc != DTXN_OK)
			return rc;
	}
	/* clause 2.6.2.2: C_BALANCE, C_FIRST, C_MIDDLE, C_LAST */
	c_it = dtxn_txn_add_ro_cells(t, TPCC_CUSTOMER, tpcc_k_customer(w, d, c),
				     DTXN_CELL(TPCC_C_BALANCE) | DTXN_CELL(TPCC_C_FIRST) |
					     DTXN_CELL(TPCC_C_MIDDLE) | DTXN_CELL(TPCC_C_LAST));
	lo_it = dtxn_txn_add_ro(t, TPCC_LAST_ORDER, tpcc_k_customer(w, d, c));
	rc = dtxn_txn_execute(t);
	if (rc != DTXN_OK)
		return rc;
	if (!bench_items_exist(t, (struct dtxn_item *[]){ c_it, lo_it }, 2))
		return DTXN_ABORT_NOT_FOUND;
	tpcc_get(lo_it, &lo, sizeof(lo));

	o_it = dtxn_txn_add_ro(t, TPCC_ORDER, tpcc_k_order(p, w, d, lo.o_id));
	rc = dtxn_txn_execute(t);
	if (rc != DTXN_OK)
		return rc;
	if (!bench_items_exist(t, &o_it, 1))
		return DTXN_ABORT_NOT_FOUND;
	tpcc_get(o_it, &ord, sizeof(ord));
	if (ord.ol_cnt > TPCC_MAX_OL) {
		dtxn_txn_abort(t, DTXN_ABORT_NOT_FOUND);
		return DTXN_ABORT_NOT_FOUND;  /* a torn read: validation would fail it */
	}

	for (uint32_t k = 0; k < ord.ol_cnt; k++)
		ol_it[k] = dtxn_txn_add_ro_cells(t, TPCC_ORDER_LINE,
						 tpcc_k_order_line(p, w, d, lo.o_id, k + 1),
						 DTXN_CELLS_ALL & ~DTXN_CELL(TPCC_OL_DIST_INFO));
	rc = dtxn_txn_execute(t);
	if (rc != DTXN_OK)
		return rc;
	if (!bench_items_exist(t, ol_it, ord.ol_cnt))
		return DTXN_ABORT_NOT_FOUND;
	return dtxn_txn_commit(t);
}
