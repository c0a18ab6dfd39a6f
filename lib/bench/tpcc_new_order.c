/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * TPC-C NewOrder (clause 2.4), in two execute rounds and the commit:
 *
 *   round 1: WAREHOUSE (RO: W_TAX), DISTRICT (RW: D_TAX, D_NEXT_O_ID++),
 *            CUSTOMER (RO: C_DISCOUNT, C_LAST, C_CREDIT), ITEM (RO) of
 *            every line. A missing item (the 1% whose last item id is
 *            unused, clause 2.4.1.4) rolls the whole transaction back.
 *   round 2: STOCK (RW) of every line, the customer's LAST_ORDER (RW), and
 *            the inserts of ORDER, NEW-ORDER and every ORDER-LINE; their
 *            key needs O_ID, read in round 1.
 *
 * Execution blocks (dtxn_txn_block_end(), CREST §5): block 1 is round 1
 * and the D_NEXT_O_ID increment; block 2 is round 2 and the commit.
 *
 * Inputs (clause 2.4.1): home warehouse uniform, district uniform, C_ID
 * NURand(1023), 5..15 lines, each item NURand(8191), 1% of lines supplied
 * by another warehouse (when W > 1), quantity 1..10. The spec lets an
 * order name one item twice; two lines with the same supply warehouse and
 * item then share one STOCK item of the transaction, updated once per line
 * in line order (the same result as the spec's one UPDATE per line).
 *
 * Display-only outputs (total amount, brand-generic flags) are not computed.
 */
#include <stdint.h>
#include <string.h>

#include "bench_private.h"
#include "tpcc.h"

/* An item id no row has (clause 2.4.1.4: "an unused value"). */
#define TPCC_UNUSED_ITEM (UINT32_C(1) << 30)

struct no_line {
	uint32_t i_id;
	uint32_t supply_w;
	uint32_t quantity;
	unsigned item;   /* index in items[] (first line with this i_id) */
	unsigned stock;  /* index in stock[] (first line with this supply_w, i_id) */
};

int
tpcc_new_order(struct dtxn_bench_ctx *ctx, const struct tpcc_priv *p)
{
	struct dtxn_rng *r = &ctx->rng;
	struct no_line line[TPCC_MAX_OL];
	struct dtxn_item *items[TPCC_MAX_OL], *stock[TPCC_MAX_OL], *ol_it[TPCC_MAX_OL];
	struct dtxn_item *w_it, *d_it, *c_it, *lo_it, *o_it, *no_it;
	unsigned n_items = 0, n_stock = 0;
	struct tpcc_district di;
	struct tpcc_order ord;
	struct tpcc_new_order no;
	struct tpcc_last_order lo;
	struct dtxn_txn *t;
	uint32_t w, d, c, ol_cnt, o_id;
	bool rbk, all_local = true;
	int rc;

	/* inputs */
	w = tpcc_pick_home_warehouse(ctx, p);
	d = (uint32_t)dtxn_rng_between(r, 1, TPCC_DISTRICTS);
	c = tpcc_pick_customer(p, r);
	ol_cnt = (uint32_t)dtxn_rng_between(r, TPCC_MIN_OL, TPCC_MAX_OL);
	rbk = dtxn_rng_between(r, 1, 100) == 1;
	for (uint32_t k = 0; k < ol_cnt; k++) {
		line[k].i_id = k == ol_cnt - 1 && rbk ? TPCC_UNUSED_ITEM : tpcc_pick_item(p, r);
		line[k].supply_w = dtxn_rng_between(r, 1, 100) > 1 ? w
					: tpcc_pick_other_warehouse(p, r, w);
		line[k].quantity = (uint32_t)dtxn_rng_between(r, 1, 10);
		all_local = all_local && line[k].supply_w == w;
	}

	/* round 1 */
	t = dtxn_txn_begin(ctx->coord, DTXN_TXN_RW);
	/* cells (clause 2.4.2.2): W_TAX; D_TAX, D_NEXT_O_ID (updated);
	 * C_DISCOUNT, C_LAST, C_CREDIT; I_PRICE, I_NAME, I_DATA */
	w_it = dtxn_txn_add_ro_cells(t, TPCC_WAREHOUSE, tpcc_k_warehouse(w), DTXN_CELL(TPCC_W_TAX));
	d_it = dtxn_txn_add_rw_cells(t, TPCC_DISTRICT, tpcc_k_district(w, d),
				     DTXN_CELL(TPCC_D_TAX), DTXN_CELL(TPCC_D_NEXT_O_ID));
	c_it = dtxn_txn_add_ro_cells(t, TPCC_CUSTOMER, tpcc_k_customer(w, d, c),
				     DTXN_CELL(TPCC_C_DISCOUNT) | DTXN_CELL(TPCC_C_LAST) |
					     DTXN_CELL(TPCC_C_CREDIT));
	for (uint32_t k = 0; k < ol_cnt; k++) {
		unsigned j;

		for (j = 0; j < k && line[j].i_id != line[k].i_id; j++)
			;
		if (j < k) {
			line[k].item = line[j].item;
			continue;
		}
		line[k].item = n_items;
		items[n_items++] = dtxn_txn_add_ro_cells(t, TPCC_ITEM, tpcc_k_item(line[k].i_id),
							 DTXN_CELL(TPCC_I_PRICE) |
								 DTXN_CELL(TPCC_I_NAME) |
								 DTXN_CELL(TPCC_I_DATA));
	}
	rc = dtxn_txn_execute(t);
	if (rc != DTXN_OK)
		return rc;
	if (!bench_items_exist(t, (struct dtxn_item *[]){ w_it, d_it, c_it }, 3))
		return DTXN_ABORT_NOT_FOUND;
	for (unsigned j = 0; j < n_items; j++) {
		if (!dtxn_item_exists(items[j])) {
			/* clause 2.4.2.3: "Item number is not valid": roll back */
			dtxn_txn_abort(t, DTXN_ABORT_APP);
			return DTXN_BENCH_ROLLBACK;
		}
	}
	tpcc_get(d_it, &di, sizeof(di));
	o_id = di.next_o_id;
	if (p->o_cap != 0 && o_id > p->o_cap) {
		/* artifact layout: the district's order ids are used up (bench_room.h) */
		dtxn_txn_abort(t, DTXN_ABORT_INDEX_FULL);
		return DTXN_ABORT(DTXN_ABORT_INDEX_FULL);
	}
	di.next_o_id++;
	tpcc_put(d_it, &di, sizeof(di));
	/* block 1 ends: round 2's keys need O_ID (CREST §5, Fig. 9) */
	rc = dtxn_txn_block_end(t);
	if (rc != DTXN_OK)
		return rc;

	/* round 2 */
	for (uint32_t k = 0; k < ol_cnt; k++) {
		unsigned j;

		for (j = 0; j < k; j++)
			if (line[j].i_id == line[k].i_id && line[j].supply_w == line[k].supply_w)
				break;
		if (j < k) {
			line[k].stock = line[j].stock;
			continue;
		}
		line[k].stock = n_stock;
		/* S_DIST_xx of the district and S_DATA read; the counters updated */
		stock[n_stock++] = dtxn_txn_add_rw_cells(
			t, TPCC_STOCK, tpcc_k_stock(line[k].supply_w, line[k].i_id),
			DTXN_CELL(TPCC_S_DIST + d - 1) | DTXN_CELL(TPCC_S_DATA),
			DTXN_CELL(TPCC_S_QUANTITY) | DTXN_CELL(TPCC_S_YTD) |
				DTXN_CELL(TPCC_S_ORDER_CNT) | DTXN_CELL(TPCC_S_REMOTE_CNT));
	}
	lo_it = dtxn_txn_add_rw(t, TPCC_LAST_ORDER, tpcc_k_customer(w, d, c));
	o_it = dtxn_txn_insert(t, TPCC_ORDER, tpcc_k_order(p, w, d, o_id));
	no_it = dtxn_txn_insert(t, TPCC_NEW_ORDER, tpcc_k_order(p, w, d, o_id));
	for (uint32_t k = 0; k < ol_cnt; k++)
		ol_it[k] = dtxn_txn_insert(t, TPCC_ORDER_LINE, tpcc_k_order_line(p, w, d, o_id, k + 1));
	rc = dtxn_txn_execute(t);
	if (rc != DTXN_OK)
		return rc;
	if (!bench_items_exist(t, stock, n_stock) || !bench_items_exist(t, &lo_it, 1))
		return DTXN_ABORT_NOT_FOUND;

	memset(&ord, 0, sizeof(ord));
	ord.c_id = c;
	ord.entry_d = tpcc_now_date();
	ord.carrier_id = 0;
	ord.ol_cnt = (uint8_t)ol_cnt;
	ord.all_local = all_local ? 1 : 0;
	tpcc_put(o_it, &ord, sizeof(ord));
	memset(&no, 0, sizeof(no));
	no.o_id = o_id;
	no.w_id = (uint16_t)w;
	no.d_id = (uint8_t)d;
	tpcc_put(no_it, &no, sizeof(no));
	lo.o_id = o_id;
	lo.pad = 0;
	tpcc_put(lo_it, &lo, sizeof(lo));

	for (uint32_t k = 0; k < ol_cnt; k++) {
		struct tpcc_item item;
		struct tpcc_stock st;
		struct tpcc_order_line ol;
		const int32_t q = (int32_t)line[k].quantity;

		tpcc_get(items[line[k].item], &item, sizeof(item));
		tpcc_get(stock[line[k].stock], &st, sizeof(st));
		/* clause 2.4.2.2 */
		if (st.quantity >= q + 10)
			st.quantity -= q;
		else
			st.quantity = st.quantity - q + 91;
		st.ytd += (uint32_t)q;
		st.order_cnt++;
		if (line[k].supply_w != w)
			st.remote_cnt++;
		tpcc_put(stock[line[k].stock], &st, sizeof(st));

		memset(&ol, 0, sizeof(ol));
		ol.i_id = line[k].i_id;
		ol.supply_w_id = (uint16_t)line[k].supply_w;
		ol.quantity = (uint8_t)q;
		ol.amount = q * item.price;
		ol.delivery_d = 0;
		memcpy(ol.dist_info, st.dist[d - 1], sizeof(ol.dist_info));
		tpcc_put(ol_it[k], &ol, sizeof(ol));
	}
	return bench_commit(ctx, t, TPCC_ACC_NEW_ORDERS, 1);
}
