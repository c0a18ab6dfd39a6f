/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * TPC-C consistency conditions (clause 3.3.2; bench-specs.md §5) on the
 * picture tpcc_check.c gathered, one report line each, and the checks of
 * what dtxn adds (the three index tables, the bookkeeping of committed
 * transactions, the STOCK counters). Each detail names the first
 * offender, so a failure says where to look.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "dtxn_stats.h"
#include "tpcc_check.h"

/* The first failing place of a per-row condition, for the detail. */
struct cond {
	uint64_t bad;
	char where[96];
};

static void
cond_fail(struct cond *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
cond_fail(struct cond *c, const char *fmt, ...)
{
	if (c->bad++ == 0) {
		va_list ap;

		va_start(ap, fmt);
		vsnprintf(c->where, sizeof(c->where), fmt, ap);
		va_end(ap);
	}
}

/* Every per-row condition, evaluated first and reported in order. */
struct conds {
	struct cond c[13];   /* c[1..12]: clause 3.3.2.1..12 (11 is reported by cond_counts) */
	struct cond cursor, counts, last_order, name, stock;
};

static void
cond_report(struct dtxn_report *r, const char *name, const struct cond *c, const char *what,
	    uint64_t of)
{
	dtxn_report_check(r, name, c->bad == 0, "%s: %" PRIu64 " of %" PRIu64 " fail%s%s",
			  what, c->bad, of, c->bad ? ", first " : "", c->bad ? c->where : "");
}

#define FOR_DISTRICTS(s, w, d) \
	for (uint32_t w = 1; w <= (s)->w; w++) \
		for (uint32_t d = 1; d <= TPCC_DISTRICTS; d++)

/* 1: W_YTD = sum(D_YTD); 8: W_YTD = sum(H_AMOUNT); 9: D_YTD = sum(H_AMOUNT). */
static void
cond_ytd(struct ck_state *s, struct conds *k)
{
	struct cond *c1 = &k->c[1], *c8 = &k->c[8], *c9 = &k->c[9];

	for (uint32_t w = 1; w <= s->w; w++) {
		const struct ck_wh *wh = &s->wh[w - 1];
		int64_t sum_d = 0;

		for (uint32_t d = 1; d <= TPCC_DISTRICTS; d++) {
			const struct ck_dist *cd = ck_dist_at(s, w, d);

			sum_d += cd->ytd;
			if (!cd->seen || cd->ytd != cd->sum_h)
				cond_fail(c9, "w %u d %u: D_YTD %" PRId64 " sum(H_AMOUNT) %" PRId64,
					  w, d, cd->ytd, cd->sum_h);
		}
		if (!wh->seen || wh->ytd != sum_d)
			cond_fail(c1, "w %u: W_YTD %" PRId64 " sum(D_YTD) %" PRId64, w, wh->ytd, sum_d);
		if (!wh->seen || wh->ytd != wh->sum_h)
			cond_fail(c8, "w %u: W_YTD %" PRId64 " sum(H_AMOUNT) %" PRId64, w, wh->ytd,
				  wh->sum_h);
	}
}

/* 2: D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID); 3: NO_O_IDs contiguous;
 * 4: sum(O_OL_CNT) = ORDER-LINE rows; and the delivery cursor. */
static void
cond_district(struct ck_state *s, struct conds *k)
{
	struct cond *c2 = &k->c[2], *c3 = &k->c[3], *c4 = &k->c[4], *cur = &k->cursor;

	FOR_DISTRICTS(s, w, d) {
		const struct ck_dist *cd = ck_dist_at(s, w, d);
		const uint32_t expect_cur = cd->no_count ? cd->no_min : cd->next_o_id;

		if (!cd->seen || cd->next_o_id - 1 != cd->o_max ||
		    (cd->no_count > 0 && cd->no_max != cd->o_max))
			cond_fail(c2, "w %u d %u: D_NEXT_O_ID %u max(O_ID) %u max(NO_O_ID) %u", w,
				  d, cd->next_o_id, cd->o_max, cd->no_max);
		if (cd->no_count > 0 && cd->no_max - cd->no_min + 1 != cd->no_count)
			cond_fail(c3, "w %u d %u: NO_O_ID %u..%u, %u rows", w, d, cd->no_min,
				  cd->no_max, cd->no_count);
		if (cd->ol_cnt_sum != cd->ol_rows)
			cond_fail(c4, "w %u d %u: sum(O_OL_CNT) %" PRIu64 " ORDER-LINE rows %" PRIu64,
				  w, d, cd->ol_cnt_sum, cd->ol_rows);
		if (!cd->cursor_seen || cd->cursor != expect_cur)
			cond_fail(cur, "w %u d %u: cursor %u, lowest undelivered %u", w, d,
				  cd->cursor, expect_cur);
	}
	if (s->bad.orders > 0)
		cond_fail(c2, "%" PRIu64 " ORDER rows beyond any D_NEXT_O_ID", s->bad.orders);
	if (s->bad.no_orphans > 0)
		cond_fail(c3, "%" PRIu64 " NEW-ORDER rows without their ORDER", s->bad.no_orphans);
}

/* 5: carrier null <=> NEW-ORDER row; 6: O_OL_CNT = its lines; 7: OL_DELIVERY_D null <=> carrier null. */
static uint64_t
cond_orders(struct ck_state *s, struct conds *k)
{
	struct cond *c5 = &k->c[5], *c6 = &k->c[6], *c7 = &k->c[7];
	uint64_t orders = 0;

	FOR_DISTRICTS(s, w, d) {
		for (uint32_t o = 1; o <= s->max_o; o++) {
			const struct ck_order *co = ck_order_at(s, w, d, o);

			if (!co->exists)
				continue;
			orders++;
			if ((co->carrier == 0) != (co->has_no != 0))
				cond_fail(c5, "w %u d %u o %u: carrier %u, NEW-ORDER row %s", w, d, o,
					  co->carrier, co->has_no ? "yes" : "no");
			if (co->lines != co->ol_cnt)
				cond_fail(c6, "w %u d %u o %u: O_OL_CNT %u, %u lines", w, d, o,
					  co->ol_cnt, co->lines);
			if ((co->carrier == 0 && co->null_lines != co->lines) ||
			    (co->carrier != 0 && co->null_lines != 0))
				cond_fail(c7, "w %u d %u o %u: carrier %u, %u of %u lines undelivered",
					  w, d, o, co->carrier, co->null_lines, co->lines);
		}
	}
	if (s->bad.ol_orphans > 0)
		cond_fail(c6, "%" PRIu64 " ORDER-LINE rows without their ORDER or beyond O_OL_CNT",
			  s->bad.ol_orphans);
	if (s->bad.ol_delivery > 0 && c7->bad == 0)
		cond_fail(c7, "%" PRIu64 " lines disagree with their order", s->bad.ol_delivery);
	return orders;
}

/* 10: C_BALANCE = sum(delivered OL_AMOUNT) - sum(H_AMOUNT); 12: C_BALANCE +
 * C_YTD_PAYMENT = sum(delivered OL_AMOUNT); and the customer's counters,
 * its LAST_ORDER row and its place in the name index. */
static void
cond_customers(struct ck_state *s, struct conds *k)
{
	struct cond *c10 = &k->c[10], *c12 = &k->c[12], *cnt = &k->counts;
	struct cond *lo = &k->last_order, *nm = &k->name;

	FOR_DISTRICTS(s, w, d) {
		for (uint32_t c = 1; c <= s->c; c++) {
			const struct ck_cust *cc = ck_cust_at(s, w, d, c);

			if (!cc->seen) {
				cond_fail(c10, "w %u d %u c %u: no CUSTOMER row", w, d, c);
				continue;
			}
			if (cc->balance != cc->sum_ol - cc->sum_h)
				cond_fail(c10, "w %u d %u c %u: C_BALANCE %" PRId64 " expected %" PRId64,
					  w, d, c, cc->balance, cc->sum_ol - cc->sum_h);
			if (cc->balance + cc->ytd_payment != cc->sum_ol)
				cond_fail(c12, "w %u d %u c %u: C_BALANCE + C_YTD_PAYMENT %" PRId64
					  " sum(OL_AMOUNT) %" PRId64, w, d, c,
					  cc->balance + cc->ytd_payment, cc->sum_ol);
			if (cc->payment_cnt != cc->h_rows || cc->delivery_cnt != cc->run_delivered)
				cond_fail(cnt, "w %u d %u c %u: payments %u/%u deliveries %u/%u", w, d,
					  c, cc->payment_cnt, cc->h_rows, cc->delivery_cnt,
					  cc->run_delivered);
			if (!cc->last_order_seen || cc->last_order != cc->max_o)
				cond_fail(lo, "w %u d %u c %u: LAST_ORDER %u, largest O_ID %u", w, d, c,
					  cc->last_order, cc->max_o);
			if (!cc->in_name_index)
				cond_fail(nm, "w %u d %u c %u: not in CUSTOMER_NAME", w, d, c);
		}
	}
	if (s->bad.h_orphans > 0)
		cond_fail(c10, "%" PRIu64 " HISTORY rows of no customer", s->bad.h_orphans);
	if (s->bad.names > 0)
		cond_fail(nm, "%" PRIu64 " CUSTOMER_NAME entries disagree with CUSTOMER",
			  s->bad.names);
}

/* S_YTD, S_ORDER_CNT, S_REMOTE_CNT = what the run's order lines added. */
static void
cond_stock(struct ck_state *s, struct conds *k)
{
	struct cond *c = &k->stock;
	const uint64_t n = (uint64_t)s->w * s->items;

	for (uint64_t k = 0; k < n; k++) {
		const struct ck_stock *st = &s->stock[k];

		if (!st->seen || st->ytd != st->exp_ytd || st->order_cnt != st->exp_order_cnt ||
		    st->remote_cnt != st->exp_remote)
			cond_fail(c, "w %" PRIu64 " i %" PRIu64 ": ytd %u/%u orders %u/%u remote %u/%u",
				  k / s->items + 1, k % s->items + 1, st->ytd, st->exp_ytd,
				  st->order_cnt, st->exp_order_cnt, st->remote_cnt, st->exp_remote);
	}
}

/*
 * 11: count(ORDER) - count(NEW-ORDER) = 2100 per district holds right after
 * the load only; after a run the difference grows by the orders delivered,
 * which the committed Deliveries counted (whole database).
 */
static void
cond_count_11(struct ck_state *s, struct dtxn_report *r)
{
	const uint64_t wd = (uint64_t)s->w * TPCC_DISTRICTS;
	const int64_t c11 = (int64_t)(wd * s->load_delivered) + s->delivered;

	dtxn_report_check(r, "tpcc_cond11_orders_minus_new_orders",
			  (int64_t)s->rows[TPCC_ORDER] - (int64_t)s->rows[TPCC_NEW_ORDER] == c11,
			  "count(ORDER) - count(NEW-ORDER) = %" PRId64 ", expected %" PRIu64
			  " x %u at load + %" PRId64 " delivered",
			  (int64_t)s->rows[TPCC_ORDER] - (int64_t)s->rows[TPCC_NEW_ORDER], wd,
			  s->load_delivered, s->delivered);
}

/* What the committed transactions say the tables hold; the fixed tables' sizes. */
static void
cond_row_counts(struct ck_state *s, struct dtxn_report *r)
{
	const struct tpcc_priv *p = s->p;
	const uint64_t wd = (uint64_t)s->w * TPCC_DISTRICTS;
	const int64_t orders = (int64_t)(wd * s->c) + s->new_orders;
	const int64_t new_orders = (int64_t)(wd * p->undelivered) + s->new_orders - s->delivered;
	const int64_t history = (int64_t)(wd * s->c) + s->payments;
	const bool fixed = s->rows[TPCC_WAREHOUSE] == s->w && s->rows[TPCC_DISTRICT] == wd &&
			   s->rows[TPCC_CUSTOMER] == wd * s->c && s->rows[TPCC_ITEM] == s->items &&
			   s->rows[TPCC_STOCK] == (uint64_t)s->w * s->items &&
			   s->rows[TPCC_LAST_ORDER] == wd * s->c &&
			   s->rows[TPCC_DELIVERY_CURSOR] == wd;

	dtxn_report_check(r, "tpcc_row_counts",
			  fixed && (int64_t)s->rows[TPCC_ORDER] == orders &&
			  (int64_t)s->rows[TPCC_NEW_ORDER] == new_orders &&
			  (int64_t)s->rows[TPCC_HISTORY] == history && s->bad.keys == 0 &&
			  s->bad.values == 0,
			  "order %" PRIu64 "/%" PRId64 " new_order %" PRIu64 "/%" PRId64
			  " history %" PRIu64 "/%" PRId64 " fixed tables %s, bad keys %" PRIu64
			  " values %" PRIu64, s->rows[TPCC_ORDER], orders, s->rows[TPCC_NEW_ORDER],
			  new_orders, s->rows[TPCC_HISTORY], history, fixed ? "ok" : "WRONG",
			  s->bad.keys, s->bad.values);
}

void
tpcc_check_conditions(struct ck_state *s, struct dtxn_report *r)
{
	static const char *const names[13] = {
		NULL,
		"tpcc_cond1_w_ytd_sum_d_ytd",
		"tpcc_cond2_next_o_id",
		"tpcc_cond3_new_order_contiguous",
		"tpcc_cond4_ol_cnt_sum",
		"tpcc_cond5_carrier_new_order",
		"tpcc_cond6_ol_cnt_lines",
		"tpcc_cond7_delivery_d_carrier",
		"tpcc_cond8_w_ytd_sum_h_amount",
		"tpcc_cond9_d_ytd_sum_h_amount",
		"tpcc_cond10_c_balance",
		NULL, /* 11: cond_counts */
		"tpcc_cond12_c_balance_ytd",
	};
	const uint64_t wd = (uint64_t)s->w * TPCC_DISTRICTS, cust = wd * s->c;
	struct conds k;
	uint64_t orders;

	memset(&k, 0, sizeof(k));
	cond_ytd(s, &k);
	cond_district(s, &k);
	orders = cond_orders(s, &k);
	cond_customers(s, &k);
	cond_stock(s, &k);
	const uint64_t of[13] = { 0, s->w, wd, wd, wd, orders, orders, orders, s->w, wd,
				  cust, 0, cust };
	const char *const what[13] = { NULL, "warehouses", "districts", "districts",
				       "districts", "orders", "orders", "orders", "warehouses",
				       "districts", "customers", NULL, "customers" };

	for (unsigned i = 1; i <= 12; i++) {
		if (i == 11)
			cond_count_11(s, r);
		else
			cond_report(r, names[i], &k.c[i], what[i], of[i]);
	}
	cond_report(r, "tpcc_delivery_cursor", &k.cursor, "districts", wd);
	cond_report(r, "tpcc_last_order", &k.last_order, "customers", cust);
	cond_report(r, "tpcc_customer_name", &k.name, "customers", cust);
	cond_report(r, "tpcc_customer_counts", &k.counts, "customers", cust);
	cond_report(r, "tpcc_stock_counts", &k.stock, "stock rows", (uint64_t)s->w * s->items);
	cond_row_counts(s, r);
}
