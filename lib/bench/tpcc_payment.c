/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * TPC-C Payment (clause 2.5) and the customer-by-last-name lookup it
 * shares with OrderStatus (clause 2.5.2.2, 2.6.2.2).
 *
 *   round 1: WAREHOUSE (RW: W_YTD += H_AMOUNT), DISTRICT (RW: D_YTD +=),
 *            and CUSTOMER (RW) by id, or the CUSTOMER_NAME index row (RO)
 *            by last name;
 *   round 2 (by name): CUSTOMER (RW) at position ceil(n / 2) by C_FIRST;
 *   commit:  the HISTORY insert.
 *
 * Execution blocks (dtxn_txn_block_end(), CREST §5): by last name, block
 * 1 is round 1 with the W_YTD and D_YTD updates (the customer's key needs
 * the CUSTOMER_NAME row), block 2 the rest; by id, one block.
 *
 * Inputs (clause 2.5.1): home warehouse and district uniform; 85% the
 * customer is of the home district, 15% of a random district of another
 * warehouse (when W > 1); 60% by last name NURand(255), 40% by C_ID
 * NURand(1023); H_AMOUNT 1.00..5,000.00.
 *
 * HISTORY has no primary key in the spec; its rows get unique keys here:
 * (coordinator id + 1) << 32 | the coordinator's count of finished
 * transactions (ctx->done), which is the same for every retry of one
 * Payment and different for the next, so a row is inserted at most once
 * per Payment and never overwrites another (FORD's key does).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <rte_common.h>

#include "bench_private.h"
#include "bench_text.h"
#include "tpcc.h"

int
tpcc_customer_by_name(struct dtxn_txn *t, uint32_t w, uint32_t d, uint32_t name, uint32_t *c_id)
{
	struct dtxn_item *it = dtxn_txn_add_ro(t, TPCC_CUSTOMER_NAME, tpcc_k_name(w, d, name));
	struct tpcc_customer_name row;
	int rc = dtxn_txn_execute(t);

	if (rc != DTXN_OK)
		return rc;
	if (!dtxn_item_exists(it))
		return -ENOENT;
	tpcc_get(it, &row, sizeof(row));
	if (row.n == 0 || row.n > TPCC_NAME_MAX)
		return -ENOENT;
	/* position ceil(n / 2), 1-based */
	*c_id = row.c_id[(row.n + 1) / 2 - 1];
	return DTXN_OK;
}

/* clause 2.5.2.2: W_YTD and D_YTD += H_AMOUNT; the rows as read in @p wh, @p di. */
static void
payment_ytd(struct dtxn_item *w_it, struct dtxn_item *d_it, int64_t amount,
	    struct tpcc_warehouse *wh, struct tpcc_district *di)
{
	tpcc_get(w_it, wh, sizeof(*wh));
	wh->ytd += amount;
	tpcc_put(w_it, wh, sizeof(*wh));
	tpcc_get(d_it, di, sizeof(*di));
	di->ytd += amount;
	tpcc_put(d_it, di, sizeof(*di));
}

/* clause 2.5.2.2: a BC customer's C_DATA gets the payment prepended, truncated to 500. */
static void
payment_bad_credit(struct tpcc_customer *cu, uint32_t c, uint32_t c_d, uint32_t c_w,
		   uint32_t d, uint32_t w, int64_t amount)
{
	char head[80];
	int n = snprintf(head, sizeof(head), "%u %u %u %u %u %" PRId64 ".%02" PRId64 " ",
			 c, c_d, c_w, d, w, amount / 100, amount % 100);
	size_t len = n < 0 ? 0 : RTE_MIN((size_t)n, sizeof(head) - 1);

	memmove(cu->data + len, cu->data, sizeof(cu->data) - len);
	memcpy(cu->data, head, len);
}

int
tpcc_payment(struct dtxn_bench_ctx *ctx, const struct tpcc_priv *p)
{
	struct dtxn_rng *r = &ctx->rng;
	struct dtxn_item *w_it, *d_it, *c_it = NULL, *h_it;
	struct tpcc_warehouse wh;
	struct tpcc_district di;
	struct tpcc_customer cu;
	struct tpcc_history h;
	struct dtxn_txn *t;
	uint32_t w, d, c_w, c_d, c = 0, name = 0;
	size_t wn;
	bool by_name;
	int64_t amount;
	int rc;

	/* inputs */
	w = tpcc_pick_home_warehouse(ctx, p);
	d = (uint32_t)dtxn_rng_between(r, 1, TPCC_DISTRICTS);
	if (dtxn_rng_between(r, 1, 100) <= 85 || p->w == 1) {
		c_w = w;
		c_d = d;
	} else {
		c_w = tpcc_pick_other_warehouse(p, r, w);
		c_d = (uint32_t)dtxn_rng_between(r, 1, TPCC_DISTRICTS);
	}
	by_name = dtxn_rng_between(r, 1, 100) <= 60;
	if (by_name)
		name = tpcc_pick_last_name(p, r);
	else
		c = tpcc_pick_customer(p, r);
	amount = (int64_t)dtxn_rng_between(r, 100, 500000);

	/* round 1 (and 2 by name) */
	t = dtxn_txn_begin(ctx->coord, DTXN_TXN_RW);
	/* clause 2.5.2.2: the name and address read, the YTD updated */
	w_it = dtxn_txn_add_rw_cells(t, TPCC_WAREHOUSE, tpcc_k_warehouse(w),
				     DTXN_CELLS_ALL & ~DTXN_CELL(TPCC_W_TAX), DTXN_CELL(TPCC_W_YTD));
	d_it = dtxn_txn_add_rw_cells(t, TPCC_DISTRICT, tpcc_k_district(w, d),
				     DTXN_CELLS_ALL & ~(DTXN_CELL(TPCC_D_TAX) |
							DTXN_CELL(TPCC_D_NEXT_O_ID)),
				     DTXN_CELL(TPCC_D_YTD));
	if (by_name) {
		rc = tpcc_customer_by_name(t, c_w, c_d, name, &c);
		if (rc == -ENOENT) {
			dtxn_txn_abort(t, DTXN_ABORT_APP);
			return DTXN_BENCH_ROLLBACK;  /* no such name (cannot happen at load) */
		}
		if (rc != DTXN_OK)
			return rc;
		if (!bench_items_exist(t, (struct dtxn_item *[]){ w_it, d_it }, 2))
			return DTXN_ABORT_NOT_FOUND;
		payment_ytd(w_it, d_it, amount, &wh, &di);
		/* block 1 ends: the customer's key came from the name row */
		rc = dtxn_txn_block_end(t);
		if (rc != DTXN_OK)
			return rc;
	}
	/* every customer cell read; C_DATA changes for "BC" customers only */
	c_it = dtxn_txn_add_rw_cells(t, TPCC_CUSTOMER, tpcc_k_customer(c_w, c_d, c), DTXN_CELLS_ALL,
				     DTXN_CELL(TPCC_C_BALANCE) | DTXN_CELL(TPCC_C_YTD_PAYMENT) |
					     DTXN_CELL(TPCC_C_PAYMENT_CNT) | DTXN_CELL(TPCC_C_DATA));
	if (p->h_cap != 0 && ctx->done >= p->h_cap) {
		/* artifact layout: the coordinator's HISTORY ids are used up (bench_room.h) */
		dtxn_txn_abort(t, DTXN_ABORT_INDEX_FULL);
		return DTXN_ABORT(DTXN_ABORT_INDEX_FULL);
	}
	h_it = dtxn_txn_insert(t, TPCC_HISTORY,
			       tpcc_k_history(p, w, (uint64_t)dtxn_coord_gid(ctx->coord) + 1,
					      ctx->done));
	rc = dtxn_txn_execute(t);
	if (rc != DTXN_OK)
		return rc;
	if (!bench_items_exist(t, (struct dtxn_item *[]){ w_it, d_it, c_it }, 3))
		return DTXN_ABORT_NOT_FOUND;

	if (!by_name)
		payment_ytd(w_it, d_it, amount, &wh, &di);
	tpcc_get(c_it, &cu, sizeof(cu));
	cu.balance -= amount;
	cu.ytd_payment += amount;
	cu.payment_cnt++;
	if (memcmp(cu.credit, "BC", 2) == 0)
		payment_bad_credit(&cu, c, c_d, c_w, d, w, amount);
	tpcc_put(c_it, &cu, sizeof(cu));

	memset(&h, 0, sizeof(h));
	h.c_id = c;
	h.c_d_id = (uint8_t)c_d;
	h.c_w_id = (uint16_t)c_w;
	h.d_id = (uint8_t)d;
	h.w_id = (uint16_t)w;
	h.date = tpcc_now_date();
	h.amount = amount;
	/* H_DATA: W_NAME, 4 spaces, D_NAME */
	wn = bench_text_len(wh.name, sizeof(wh.name));
	memcpy(h.data, wh.name, wn);
	memcpy(h.data + wn, "    ", 4);
	memcpy(h.data + wn + 4, di.name, bench_text_len(di.name, sizeof(di.name)));
	tpcc_put(h_it, &h, sizeof(h));

	return bench_commit(ctx, t, TPCC_ACC_PAYMENTS, 1);
}
