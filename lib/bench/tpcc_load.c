/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * TPC-C initial population (clause 4.3.3.1), scaled by tpcc_scale:
 * items and stock rows per warehouse = 100,000 / scale, customers and
 * orders per district = 3,000 / scale (C), the last 30% of the orders
 * undelivered (NEW-ORDER rows; O_ID 2101..3000 at scale 1).
 *
 * Yearly totals start so that conditions 8 and 9 hold at load at every
 * scale: D_YTD = C x 10.00 (the district's customers' one 10.00 history
 * row each; 30,000.00 at scale 1) and W_YTD = 10 x D_YTD (300,000.00).
 *
 * Besides the nine tables it fills the three index rows the transactions
 * use instead of range scans: CUSTOMER_NAME (the district's customers
 * with one last name, sorted by C_FIRST), LAST_ORDER (each customer's
 * only order) and DELIVERY_CURSOR (the district's first undelivered order).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_errno.h>

#include "bench_private.h"
#include "bench_text.h"
#include "tpcc.h"

static const char *const g_table_names[TPCC_N_TABLES] = {
	"warehouse", "district", "customer", "history", "new_order", "order",
	"order_line", "item", "stock", "customer_name", "last_order", "delivery_cursor",
};

/** Stock rows the loader prefetches ahead (dtxn_db_load_prefetch()). */
#define TPCC_LOAD_AHEAD 8

/* One customer of the district being loaded, for the name index. */
struct load_cust {
	char first[16];
	uint16_t name;
	uint16_t c_id;
};

struct load_state {
	struct dtxn_bench *b;
	struct dtxn_db *db;
	const struct tpcc_priv *p;
	struct dtxn_rng r;
	uint64_t now;
	struct load_cust *cust;  /* customers of one district */
	uint16_t *perm;          /* O_C_ID permutation of one district */
};

static int
load_row(struct load_state *s, uint32_t table, uint64_t key, const void *row)
{
	int rc = dtxn_db_load(s->db, table, key, row);

	if (rc != 0)
		bench_set_err(s->b, "tpcc: loading a %s row (key %#" PRIx64 ") failed: %s",
			      g_table_names[table], key, rte_strerror(-rc));
	return rc;
}

/* I_DATA / S_DATA: a-string [26, 50], 10% with "ORIGINAL" at a random place. */
static void
load_data50(struct load_state *s, char data[50])
{
	size_t len = bench_text_astring(&s->r, data, 26, 50, 50);

	if (dtxn_rng_range(&s->r, 100) < 10)
		memcpy(data + dtxn_rng_between(&s->r, 0, len - 8), "ORIGINAL", 8);
}

/* Street 1 and 2, city, state, zip (clause 4.3.2.7). */
static void
load_address(struct load_state *s, char *street_1, char *street_2, char *city, char *state,
	     char *zip)
{
	bench_text_astring(&s->r, street_1, 10, 20, 20);
	bench_text_astring(&s->r, street_2, 10, 20, 20);
	bench_text_astring(&s->r, city, 10, 20, 20);
	bench_text_upper(&s->r, state, 2);
	bench_text_digits(&s->r, zip, 4);
	memcpy(zip + 4, "11111", 5);
}

static int
load_items(struct load_state *s)
{
	for (uint32_t i = 1; i <= s->p->items; i++) {
		struct tpcc_item it;
		int rc;

		memset(&it, 0, sizeof(it));
		it.im_id = (uint32_t)dtxn_rng_between(&s->r, 1, 10000);
		bench_text_astring(&s->r, it.name, 14, 24, sizeof(it.name));
		it.price = (int64_t)dtxn_rng_between(&s->r, 100, 10000);
		load_data50(s, it.data);
		rc = load_row(s, TPCC_ITEM, tpcc_k_item(i), &it);
		if (rc != 0)
			return rc;
	}
	return 0;
}

static int
load_stock(struct load_state *s, uint32_t w)
{
	for (uint32_t i = 1; i <= s->p->items; i++) {
		struct tpcc_stock st;
		int rc;

		/* its bucket's misses overlap the loads of the rows before it */
		if (i + TPCC_LOAD_AHEAD <= s->p->items)
			dtxn_db_load_prefetch(s->db, TPCC_STOCK, tpcc_k_stock(w, i + TPCC_LOAD_AHEAD));
		memset(&st, 0, sizeof(st));
		st.quantity = (int32_t)dtxn_rng_between(&s->r, 10, 100);
		bench_text_alnum(&s->r, &st.dist[0][0], sizeof(st.dist));
		load_data50(s, st.data);
		rc = load_row(s, TPCC_STOCK, tpcc_k_stock(w, i), &st);
		if (rc != 0)
			return rc;
	}
	return 0;
}

static int
load_warehouse(struct load_state *s, uint32_t w)
{
	struct tpcc_warehouse wh;

	memset(&wh, 0, sizeof(wh));
	bench_text_astring(&s->r, wh.name, 6, 10, sizeof(wh.name));
	load_address(s, wh.street_1, wh.street_2, wh.city, wh.state, wh.zip);
	wh.tax = (int32_t)dtxn_rng_between(&s->r, 0, 2000);
	wh.ytd = (int64_t)TPCC_DISTRICTS * s->p->customers * TPCC_H_AMOUNT_LOAD;
	return load_row(s, TPCC_WAREHOUSE, tpcc_k_warehouse(w), &wh);
}

static int
load_customer(struct load_state *s, uint32_t w, uint32_t d, uint32_t c)
{
	const struct tpcc_priv *p = s->p;
	struct tpcc_customer cu;
	struct tpcc_history h;
	uint32_t name;
	int rc;

	/* clause 4.3.3.1: names 0..999 in order for the first 1000, then NURand */
	name = c <= p->names ? c - 1
			     : (uint32_t)dtxn_nurand(&s->r, TPCC_A_C_LAST, 0, p->names - 1,
						     p->c_load.c_last);
	memset(&cu, 0, sizeof(cu));
	bench_text_astring(&s->r, cu.first, 8, 16, sizeof(cu.first));
	memcpy(cu.middle, "OE", 2);
	tpcc_last_name(name, cu.last);
	load_address(s, cu.street_1, cu.street_2, cu.city, cu.state, cu.zip);
	bench_text_digits(&s->r, cu.phone, sizeof(cu.phone));
	cu.since = s->now;
	memcpy(cu.credit, dtxn_rng_range(&s->r, 100) < 10 ? "BC" : "GC", 2);
	cu.credit_lim = TPCC_C_CREDIT_LIM;
	cu.discount = (int32_t)dtxn_rng_between(&s->r, 0, 5000);
	cu.balance = TPCC_C_BALANCE_LOAD;
	cu.ytd_payment = TPCC_H_AMOUNT_LOAD;
	cu.payment_cnt = 1;
	cu.delivery_cnt = 0;
	bench_text_astring(&s->r, cu.data, 300, 500, sizeof(cu.data));
	rc = load_row(s, TPCC_CUSTOMER, tpcc_k_customer(w, d, c), &cu);
	if (rc != 0)
		return rc;

	memset(&h, 0, sizeof(h));
	h.c_id = c;
	h.c_d_id = (uint8_t)d;
	h.c_w_id = (uint16_t)w;
	h.d_id = (uint8_t)d;
	h.w_id = (uint16_t)w;
	h.date = s->now;
	h.amount = TPCC_H_AMOUNT_LOAD;
	bench_text_astring(&s->r, h.data, 12, 24, sizeof(h.data));
	rc = load_row(s, TPCC_HISTORY,
		      tpcc_k_history(p, w, 0, ((uint64_t)d << TPCC_C_BITS) | c), &h);
	if (rc != 0)
		return rc;

	memcpy(s->cust[c - 1].first, cu.first, sizeof(cu.first));
	s->cust[c - 1].name = (uint16_t)name;
	s->cust[c - 1].c_id = (uint16_t)c;
	return 0;
}

static int
load_cust_cmp(const void *a, const void *b)
{
	const struct load_cust *x = a, *y = b;
	int r;

	if (x->name != y->name)
		return x->name < y->name ? -1 : 1;
	r = memcmp(x->first, y->first, sizeof(x->first));
	if (r != 0)
		return r;
	return x->c_id < y->c_id ? -1 : x->c_id > y->c_id;
}

/* CUSTOMER_NAME rows of one district: customers per last name, by C_FIRST. */
static int
load_name_index(struct load_state *s, uint32_t w, uint32_t d)
{
	const uint32_t n = s->p->customers;
	uint32_t i = 0;

	qsort(s->cust, n, sizeof(s->cust[0]), load_cust_cmp);
	while (i < n) {
		struct tpcc_customer_name row;
		uint32_t j = i;
		int rc;

		memset(&row, 0, sizeof(row));
		while (j < n && s->cust[j].name == s->cust[i].name) {
			if (row.n == TPCC_NAME_MAX) {
				bench_set_err(s->b, "tpcc: more than %u customers of district %u/%u share the last name %u",
					      TPCC_NAME_MAX, w, d, s->cust[i].name);
				return -ENOSPC;
			}
			row.c_id[row.n++] = s->cust[j].c_id;
			j++;
		}
		rc = load_row(s, TPCC_CUSTOMER_NAME, tpcc_k_name(w, d, s->cust[i].name), &row);
		if (rc != 0)
			return rc;
		i = j;
	}
	return 0;
}

/* One order with its lines, its NEW-ORDER row if undelivered, and the customer's LAST_ORDER. */
static int
load_order(struct load_state *s, uint32_t w, uint32_t d, uint32_t o)
{
	const struct tpcc_priv *p = s->p;
	const bool delivered = o <= p->customers - p->undelivered;
	struct tpcc_order ord;
	struct tpcc_last_order lo = { .o_id = o };
	int rc;

	memset(&ord, 0, sizeof(ord));
	ord.c_id = s->perm[o - 1];
	ord.entry_d = s->now;
	ord.carrier_id = delivered ? (uint8_t)dtxn_rng_between(&s->r, 1, 10) : 0;
	ord.ol_cnt = (uint8_t)dtxn_rng_between(&s->r, TPCC_MIN_OL, TPCC_MAX_OL);
	ord.all_local = 1;
	/* the lines' buckets: their misses overlap each other's and the order's */
	for (uint32_t ol = 1; ol <= ord.ol_cnt; ol++)
		dtxn_db_load_prefetch(s->db, TPCC_ORDER_LINE, tpcc_k_order_line(p, w, d, o, ol));
	rc = load_row(s, TPCC_ORDER, tpcc_k_order(p, w, d, o), &ord);
	if (rc != 0)
		return rc;
	for (uint32_t ol = 1; ol <= ord.ol_cnt; ol++) {
		struct tpcc_order_line line;

		memset(&line, 0, sizeof(line));
		line.i_id = (uint32_t)dtxn_rng_between(&s->r, 1, p->items);
		line.supply_w_id = (uint16_t)w;
		line.delivery_d = delivered ? ord.entry_d : 0;
		line.quantity = 5;
		line.amount = delivered ? 0 : (int64_t)dtxn_rng_between(&s->r, 1, 999999);
		bench_text_alnum(&s->r, line.dist_info, sizeof(line.dist_info));
		rc = load_row(s, TPCC_ORDER_LINE, tpcc_k_order_line(p, w, d, o, ol), &line);
		if (rc != 0)
			return rc;
	}
	if (!delivered) {
		struct tpcc_new_order no = { .o_id = o, .w_id = (uint16_t)w, .d_id = (uint8_t)d };

		rc = load_row(s, TPCC_NEW_ORDER, tpcc_k_order(p, w, d, o), &no);
		if (rc != 0)
			return rc;
	}
	return load_row(s, TPCC_LAST_ORDER, tpcc_k_customer(w, d, ord.c_id), &lo);
}

static int
load_district(struct load_state *s, uint32_t w, uint32_t d)
{
	const struct tpcc_priv *p = s->p;
	struct tpcc_district di;
	struct tpcc_delivery_cursor cur = { .o_id = p->customers - p->undelivered + 1 };
	int rc;

	memset(&di, 0, sizeof(di));
	bench_text_astring(&s->r, di.name, 6, 10, sizeof(di.name));
	load_address(s, di.street_1, di.street_2, di.city, di.state, di.zip);
	di.tax = (int32_t)dtxn_rng_between(&s->r, 0, 2000);
	di.ytd = (int64_t)p->customers * TPCC_H_AMOUNT_LOAD;
	di.next_o_id = p->customers + 1;
	rc = load_row(s, TPCC_DISTRICT, tpcc_k_district(w, d), &di);
	if (rc == 0)
		rc = load_row(s, TPCC_DELIVERY_CURSOR, tpcc_k_district(w, d), &cur);
	for (uint32_t c = 1; c <= p->customers && rc == 0; c++)
		rc = load_customer(s, w, d, c);
	if (rc == 0)
		rc = load_name_index(s, w, d);
	if (rc != 0)
		return rc;
	/* O_C_ID: a random permutation of [1, C] (Fisher-Yates) */
	for (uint32_t i = 0; i < p->customers; i++)
		s->perm[i] = (uint16_t)(i + 1);
	for (uint32_t i = p->customers - 1; i > 0; i--) {
		uint32_t j = (uint32_t)dtxn_rng_range(&s->r, i + 1);
		uint16_t t = s->perm[i];

		s->perm[i] = s->perm[j];
		s->perm[j] = t;
	}
	for (uint32_t o = 1; o <= p->customers && rc == 0; o++)
		rc = load_order(s, w, d, o);
	return rc;
}

int
tpcc_load(struct dtxn_bench *b, struct dtxn_db *db)
{
	struct load_state s = { .b = b, .db = db, .p = b->priv };
	int rc;

	if (s.p == NULL) {
		bench_set_err(b, "tpcc: load before create");
		return -EINVAL;
	}
	dtxn_rng_seed(&s.r, b->seed ^ UINT64_C(0x7470636c6f616400)); /* "tpccload" */
	s.now = tpcc_now_date();
	s.cust = calloc(s.p->customers, sizeof(*s.cust));
	s.perm = calloc(s.p->customers, sizeof(*s.perm));
	if (s.cust == NULL || s.perm == NULL) {
		bench_set_err(b, "tpcc: out of memory for the loader");
		rc = -ENOMEM;
		goto out;
	}
	rc = load_items(&s);
	for (uint32_t w = 1; w <= s.p->w && rc == 0; w++) {
		rc = load_warehouse(&s, w);
		if (rc == 0)
			rc = load_stock(&s, w);
		for (uint32_t d = 1; d <= TPCC_DISTRICTS && rc == 0; d++)
			rc = load_district(&s, w, d);
	}
out:
	free(s.cust);
	free(s.perm);
	return rc;
}
