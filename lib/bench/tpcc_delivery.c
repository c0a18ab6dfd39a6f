/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * TPC-C Delivery (clause 2.7), all ten districts of the warehouse in one
 * transaction, in four execute rounds and the commit:
 *
 *   round 1: the DELIVERY_CURSOR row (RW) of each district: the lowest
 *            undelivered O_ID;
 *   round 2: the NEW-ORDER row (RO) at each cursor. Absent: the district
 *            has no undelivered order and is skipped (clause 2.7.4.2);
 *            the absence is validated at commit;
 *   round 3: for each district with one: delete that NEW-ORDER row, ORDER
 *            (RW: O_CARRIER_ID), cursor + 1;
 *   round 4: its ORDER-LINE rows (RW: OL_DELIVERY_D) and CUSTOMER (RW:
 *            C_BALANCE += sum of OL_AMOUNT, C_DELIVERY_CNT++).
 *
 * Why a cursor: the store has no range scan, and "the row with the lowest
 * NO_O_ID" must not be a guess (FORD probes a random O_ID and skips the
 * district when it misses, which breaks condition 3). NewOrder inserts
 * NEW-ORDER rows with consecutive O_IDs and Delivery removes the lowest
 * one and moves the cursor past it in the same transaction, so the rows of
 * a district are always exactly [cursor, D_NEXT_O_ID): the row at the
 * cursor is the lowest, and its absence means there is none. The checker
 * verifies cursor == min(NO_O_ID) (or D_NEXT_O_ID when there is none).
 * The cursor row is per district, so Delivery never locks DISTRICT (which
 * every NewOrder updates).
 *
 * Inputs (clause 2.7.1): home warehouse uniform, O_CARRIER_ID 1..10.
 * Committed Deliveries add the orders they delivered to
 * ctx->acc[TPCC_ACC_DELIVERED].
 */
#include <stdint.h>

#include "bench_private.h"
#include "tpcc.h"

int
tpcc_delivery(struct dtxn_bench_ctx *ctx, const struct tpcc_priv *p)
{
	struct dtxn_rng *r = &ctx->rng;
	struct dtxn_item *cur_it[TPCC_DISTRICTS], *no_it[TPCC_DISTRICTS], *o_it[TPCC_DISTRICTS];
	struct dtxn_item *c_it[TPCC_DISTRICTS], *ol_it[TPCC_DISTRICTS][TPCC_MAX_OL];
	struct tpcc_delivery_cursor cur[TPCC_DISTRICTS];
	struct tpcc_order ord[TPCC_DISTRICTS];
	struct dtxn_txn *t;
	uint32_t w, carrier;
	uint64_t date;
	unsigned delivered = 0;
	bool found[TPCC_DISTRICTS];
	int rc;

	w = tpcc_pick_home_warehouse(ctx, p);
	carrier = (uint32_t)dtxn_rng_between(r, 1, 10);

	/* round 1: the cursors */
	t = dtxn_txn_begin(ctx->coord, DTXN_TXN_RW);
	for (uint32_t d = 0; d < TPCC_DISTRICTS; d++)
		cur_it[d] = dtxn_txn_add_rw(t, TPCC_DELIVERY_CURSOR, tpcc_k_district(w, d + 1));
	rc = dtxn_txn_execute(t);
	if (rc != DTXN_OK)
		return rc;
	if (!bench_items_exist(t, cur_it, TPCC_DISTRICTS))
		return DTXN_ABORT_NOT_FOUND;

	/* round 2: the oldest NEW-ORDER row of each district, if any */
	for (uint32_t d = 0; d < TPCC_DISTRICTS; d++) {
		tpcc_get(cur_it[d], &cur[d], sizeof(cur[d]));
		no_it[d] = dtxn_txn_add_ro(t, TPCC_NEW_ORDER, tpcc_k_order(p, w, d + 1, cur[d].o_id));
	}
	rc = dtxn_txn_execute(t);
	if (rc != DTXN_OK)
		return rc;

	/* round 3: take it */
	for (uint32_t d = 0; d < TPCC_DISTRICTS; d++) {
		found[d] = no_it[d] != NULL && dtxn_item_exists(no_it[d]);
		if (!found[d])
			continue;
		(void)dtxn_txn_delete(t, TPCC_NEW_ORDER, tpcc_k_order(p, w, d + 1, cur[d].o_id));
		o_it[d] = dtxn_txn_add_rw_cells(t, TPCC_ORDER, tpcc_k_order(p, w, d + 1, cur[d].o_id),
						DTXN_CELL(TPCC_O_C_ID) | DTXN_CELL(TPCC_O_OL_CNT),
						DTXN_CELL(TPCC_O_CARRIER_ID));
		cur[d].o_id++;
		tpcc_put(cur_it[d], &cur[d], sizeof(cur[d]));
	}
	rc = dtxn_txn_execute(t);
	if (rc != DTXN_OK)
		return rc;

	/* round 4: the lines and the customer */
	for (uint32_t d = 0; d < TPCC_DISTRICTS; d++) {
		const uint32_t o = cur[d].o_id - 1;

		if (!found[d])
			continue;
		if (!bench_items_exist(t, &o_it[d], 1))
			return DTXN_ABORT_NOT_FOUND;
		tpcc_get(o_it[d], &ord[d], sizeof(ord[d]));
		if (ord[d].ol_cnt > TPCC_MAX_OL) {
			dtxn_txn_abort(t, DTXN_ABORT_NOT_FOUND);
			return DTXN_ABORT_NOT_FOUND;
		}
		for (uint32_t k = 0; k < ord[d].ol_cnt; k++)
			ol_it[d][k] = dtxn_txn_add_rw_cells(t, TPCC_ORDER_LINE,
							    tpcc_k_order_line(p, w, d + 1, o, k + 1),
							    DTXN_CELL(TPCC_OL_AMOUNT),
							    DTXN_CELL(TPCC_OL_DELIVERY_D));
		c_it[d] = dtxn_txn_add_rw_cells(t, TPCC_CUSTOMER,
						tpcc_k_customer(w, d + 1, ord[d].c_id), 0,
						DTXN_CELL(TPCC_C_BALANCE) |
							DTXN_CELL(TPCC_C_DELIVERY_CNT));
	}
	rc = dtxn_txn_execute(t);
	if (rc != DTXN_OK)
		return rc;

	date = tpcc_now_date();
	for (uint32_t d = 0; d < TPCC_DISTRICTS; d++) {
		struct tpcc_customer cu;
		int64_t sum = 0;

		if (!found[d])
			continue;
		if (!bench_items_exist(t, ol_it[d], ord[d].ol_cnt) ||
		    !bench_items_exist(t, &c_it[d], 1))
			return DTXN_ABORT_NOT_FOUND;
		ord[d].carrier_id = (uint8_t)carrier;
		tpcc_put(o_it[d], &ord[d], sizeof(ord[d]));
		for (uint32_t k = 0; k < ord[d].ol_cnt; k++) {
			struct tpcc_order_line ol;

			tpcc_get(ol_it[d][k], &ol, sizeof(ol));
			ol.delivery_d = date;
			sum += ol.amount;
			tpcc_put(ol_it[d][k], &ol, sizeof(ol));
		}
		tpcc_get(c_it[d], &cu, sizeof(cu));
		cu.balance += sum;
		cu.delivery_cnt++;
		tpcc_put(c_it[d], &cu, sizeof(cu));
		delivered++;
	}
	return bench_commit(ctx, t, TPCC_ACC_DELIVERED, delivered);
}
