/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * TPC-C's columns (clause 1.3): every field of the nine spec tables' rows
 * is a cell (the key columns W_ID, D_ID, C_ID, ... are the record key).
 * dtxn's own index tables (customer_name, last_order, delivery_cursor) are
 * one cell each. Update shapes, from the configured mix (for protocols
 * that size room for old versions from them, Motor §4.2):
 *   WAREHOUSE   Payment: W_YTD
 *   DISTRICT    NewOrder: D_NEXT_O_ID; Payment: D_YTD
 *   CUSTOMER    Payment: C_BALANCE, C_YTD_PAYMENT, C_PAYMENT_CNT (+ C_DATA
 *               for the 10% "BC" customers, clause 2.5.2.2); Delivery
 *               (10 customers each): C_BALANCE, C_DELIVERY_CNT
 *   STOCK       NewOrder: S_QUANTITY, S_YTD, S_ORDER_CNT, S_REMOTE_CNT
 *   ORDER       Delivery: O_CARRIER_ID
 *   ORDER-LINE  Delivery: OL_DELIVERY_D
 * HISTORY, NEW-ORDER, ITEM and CUSTOMER_NAME rows are never updated in
 * place (inserted, deleted or only read): DTXN_TABLE_F_NO_UPDATE. ORDER
 * and ORDER-LINE rows are updated once (Delivery): n_versions = 2 for the
 * multi-version protocols (the insert's version and the update's).
 */
#include <errno.h>
#include <stddef.h>

#include <rte_common.h>

#include "bench_private.h"
#include "tpcc.h"

/* Adds an update shape of @p weight out of @p total (skipped when 0). */
static void
col_shape(struct dtxn_table_def *d, uint32_t cells, uint64_t weight, uint64_t total)
{
	uint64_t pm = total != 0 ? weight * 1000 / total : 0;

	if (pm == 0 || d->n_updates == DTXN_TABLE_MAX_UPDATES)
		return;
	d->updates[d->n_updates].cells = cells;
	d->updates[d->n_updates].permille = (uint16_t)pm;
	d->n_updates++;
}

int
tpcc_columns(const struct tpcc_priv *p, struct dtxn_table_def *defs)
{
	static const uint32_t w[] = {
		offsetof(struct tpcc_warehouse, ytd), offsetof(struct tpcc_warehouse, tax),
		offsetof(struct tpcc_warehouse, name), offsetof(struct tpcc_warehouse, street_1),
		offsetof(struct tpcc_warehouse, street_2), offsetof(struct tpcc_warehouse, city),
		offsetof(struct tpcc_warehouse, state), offsetof(struct tpcc_warehouse, zip),
	};
	static const uint32_t d[] = {
		offsetof(struct tpcc_district, ytd), offsetof(struct tpcc_district, tax),
		offsetof(struct tpcc_district, next_o_id), offsetof(struct tpcc_district, name),
		offsetof(struct tpcc_district, street_1), offsetof(struct tpcc_district, street_2),
		offsetof(struct tpcc_district, city), offsetof(struct tpcc_district, state),
		offsetof(struct tpcc_district, zip),
	};
	static const uint32_t c[] = {
		offsetof(struct tpcc_customer, credit_lim), offsetof(struct tpcc_customer, balance),
		offsetof(struct tpcc_customer, ytd_payment), offsetof(struct tpcc_customer, since),
		offsetof(struct tpcc_customer, discount), offsetof(struct tpcc_customer, payment_cnt),
		offsetof(struct tpcc_customer, delivery_cnt), offsetof(struct tpcc_customer, first),
		offsetof(struct tpcc_customer, middle), offsetof(struct tpcc_customer, last),
		offsetof(struct tpcc_customer, street_1), offsetof(struct tpcc_customer, street_2),
		offsetof(struct tpcc_customer, city), offsetof(struct tpcc_customer, state),
		offsetof(struct tpcc_customer, zip), offsetof(struct tpcc_customer, phone),
		offsetof(struct tpcc_customer, credit), offsetof(struct tpcc_customer, data),
	};
	static const uint32_t h[] = {
		offsetof(struct tpcc_history, date), offsetof(struct tpcc_history, amount),
		offsetof(struct tpcc_history, c_id), offsetof(struct tpcc_history, c_w_id),
		offsetof(struct tpcc_history, w_id), offsetof(struct tpcc_history, c_d_id),
		offsetof(struct tpcc_history, d_id), offsetof(struct tpcc_history, data),
	};
	static const uint32_t no[] = {
		offsetof(struct tpcc_new_order, o_id), offsetof(struct tpcc_new_order, w_id),
		offsetof(struct tpcc_new_order, d_id),
	};
	static const uint32_t o[] = {
		offsetof(struct tpcc_order, entry_d), offsetof(struct tpcc_order, c_id),
		offsetof(struct tpcc_order, carrier_id), offsetof(struct tpcc_order, ol_cnt),
		offsetof(struct tpcc_order, all_local),
	};
	static const uint32_t ol[] = {
		offsetof(struct tpcc_order_line, delivery_d), offsetof(struct tpcc_order_line, amount),
		offsetof(struct tpcc_order_line, i_id), offsetof(struct tpcc_order_line, supply_w_id),
		offsetof(struct tpcc_order_line, quantity), offsetof(struct tpcc_order_line, dist_info),
	};
	static const uint32_t it[] = {
		offsetof(struct tpcc_item, price), offsetof(struct tpcc_item, im_id),
		offsetof(struct tpcc_item, name), offsetof(struct tpcc_item, data),
	};
	uint32_t s[TPCC_S_COLS];
	const uint64_t no_w = p->conf.mix[TPCC_NEW_ORDER_TXN], pay = p->conf.mix[TPCC_PAYMENT_TXN];
	const uint64_t del = p->conf.mix[TPCC_DELIVERY_TXN] * TPCC_DISTRICTS;
	const uint32_t pay_c = DTXN_CELL(TPCC_C_BALANCE) | DTXN_CELL(TPCC_C_YTD_PAYMENT) |
			       DTXN_CELL(TPCC_C_PAYMENT_CNT);
	int rc = 0;

	_Static_assert(RTE_DIM(w) == TPCC_W_COLS && RTE_DIM(d) == TPCC_D_COLS &&
		       RTE_DIM(c) == TPCC_C_COLS && RTE_DIM(h) == TPCC_H_COLS &&
		       RTE_DIM(no) == TPCC_NO_COLS && RTE_DIM(o) == TPCC_O_COLS &&
		       RTE_DIM(ol) == TPCC_OL_COLS && RTE_DIM(it) == TPCC_I_COLS,
		       "one offset per column");
	s[TPCC_S_QUANTITY] = offsetof(struct tpcc_stock, quantity);
	s[TPCC_S_YTD] = offsetof(struct tpcc_stock, ytd);
	s[TPCC_S_ORDER_CNT] = offsetof(struct tpcc_stock, order_cnt);
	s[TPCC_S_REMOTE_CNT] = offsetof(struct tpcc_stock, remote_cnt);
	for (unsigned k = 0; k < TPCC_DISTRICTS; k++)
		s[TPCC_S_DIST + k] = (uint32_t)(offsetof(struct tpcc_stock, dist) + 24 * k);
	s[TPCC_S_DATA] = offsetof(struct tpcc_stock, data);

	rc |= dtxn_table_def_set_columns(&defs[TPCC_WAREHOUSE], w, RTE_DIM(w));
	rc |= dtxn_table_def_set_columns(&defs[TPCC_DISTRICT], d, RTE_DIM(d));
	rc |= dtxn_table_def_set_columns(&defs[TPCC_CUSTOMER], c, RTE_DIM(c));
	rc |= dtxn_table_def_set_columns(&defs[TPCC_HISTORY], h, RTE_DIM(h));
	rc |= dtxn_table_def_set_columns(&defs[TPCC_NEW_ORDER], no, RTE_DIM(no));
	rc |= dtxn_table_def_set_columns(&defs[TPCC_ORDER], o, RTE_DIM(o));
	rc |= dtxn_table_def_set_columns(&defs[TPCC_ORDER_LINE], ol, RTE_DIM(ol));
	rc |= dtxn_table_def_set_columns(&defs[TPCC_ITEM], it, RTE_DIM(it));
	rc |= dtxn_table_def_set_columns(&defs[TPCC_STOCK], s, RTE_DIM(s));
	if (rc != 0)
		return -EINVAL;

	col_shape(&defs[TPCC_WAREHOUSE], DTXN_CELL(TPCC_W_YTD), 1, 1);
	col_shape(&defs[TPCC_DISTRICT], DTXN_CELL(TPCC_D_NEXT_O_ID), no_w, no_w + pay);
	col_shape(&defs[TPCC_DISTRICT], DTXN_CELL(TPCC_D_YTD), pay, no_w + pay);
	col_shape(&defs[TPCC_CUSTOMER], pay_c, pay * 9, (pay + del) * 10);
	col_shape(&defs[TPCC_CUSTOMER], pay_c | DTXN_CELL(TPCC_C_DATA), pay, (pay + del) * 10);
	col_shape(&defs[TPCC_CUSTOMER],
		  DTXN_CELL(TPCC_C_BALANCE) | DTXN_CELL(TPCC_C_DELIVERY_CNT), del, pay + del);
	col_shape(&defs[TPCC_STOCK],
		  DTXN_CELL(TPCC_S_QUANTITY) | DTXN_CELL(TPCC_S_YTD) |
			  DTXN_CELL(TPCC_S_ORDER_CNT) | DTXN_CELL(TPCC_S_REMOTE_CNT), 1, 1);
	col_shape(&defs[TPCC_ORDER], DTXN_CELL(TPCC_O_CARRIER_ID), 1, 1);
	col_shape(&defs[TPCC_ORDER_LINE], DTXN_CELL(TPCC_OL_DELIVERY_D), 1, 1);
	defs[TPCC_HISTORY].flags |= DTXN_TABLE_F_NO_UPDATE;
	defs[TPCC_NEW_ORDER].flags |= DTXN_TABLE_F_NO_UPDATE;
	defs[TPCC_ITEM].flags |= DTXN_TABLE_F_NO_UPDATE | DTXN_TABLE_F_READ_ONLY;
	defs[TPCC_CUSTOMER_NAME].flags |= DTXN_TABLE_F_NO_UPDATE | DTXN_TABLE_F_READ_ONLY;
	/* an order and its lines are written twice in their life: NewOrder's
	 * insert and Delivery's update; a third version never exists */
	defs[TPCC_ORDER].n_versions = 2;
	defs[TPCC_ORDER_LINE].n_versions = 2;
	return 0;
}
