/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * TPC-C after the run: scans every table's primary on the MN
 * (dtxn_db_scan, no coordinator running) into the picture of
 * tpcc_check.h, then tpcc_check_cond.c evaluates the consistency
 * conditions on it. Tables are scanned in an order that lets each visitor
 * look up what it refers to: districts (they bound the order ids), then
 * customers, orders, and what refers to orders.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_errno.h>

#include "bench_private.h"
#include "tpcc_check.h"

static bool
ck_wd(const struct ck_state *s, uint64_t w, uint64_t d)
{
	return w >= 1 && w <= s->w && d >= 1 && d <= TPCC_DISTRICTS;
}

static struct ck_cust *
ck_cust_find(struct ck_state *s, uint64_t w, uint64_t d, uint64_t c)
{
	if (!ck_wd(s, w, d) || c < 1 || c > s->c)
		return NULL;
	return ck_cust_at(s, (uint32_t)w, (uint32_t)d, (uint32_t)c);
}

static struct ck_order *
ck_order_find(struct ck_state *s, uint64_t w, uint64_t d, uint64_t o)
{
	if (!ck_wd(s, w, d) || o < 1 || o > s->max_o)
		return NULL;
	return ck_order_at(s, (uint32_t)w, (uint32_t)d, (uint32_t)o);
}

static int
ck_warehouse(uint64_t key, const void *value, void *arg)
{
	struct ck_state *s = arg;
	const uint64_t w = dtxn_key_shard(key);
	struct tpcc_warehouse row;

	s->rows[TPCC_WAREHOUSE]++;
	if (dtxn_key_id(key) != w || !ck_wd(s, w, 1)) {
		s->bad.keys++;
		return 0;
	}
	memcpy(&row, value, sizeof(row));
	s->wh[w - 1].ytd = row.ytd;
	s->wh[w - 1].seen = true;
	return 0;
}

static int
ck_district(uint64_t key, const void *value, void *arg)
{
	struct ck_state *s = arg;
	const uint64_t w = dtxn_key_shard(key), d = dtxn_key_id(key);
	struct tpcc_district row;
	struct ck_dist *cd;

	s->rows[TPCC_DISTRICT]++;
	if (!ck_wd(s, w, d)) {
		s->bad.keys++;
		return 0;
	}
	memcpy(&row, value, sizeof(row));
	cd = ck_dist_at(s, (uint32_t)w, (uint32_t)d);
	cd->ytd = row.ytd;
	cd->next_o_id = row.next_o_id;
	cd->seen = true;
	return 0;
}

static int
ck_cursor(uint64_t key, const void *value, void *arg)
{
	struct ck_state *s = arg;
	const uint64_t w = dtxn_key_shard(key), d = dtxn_key_id(key);
	struct tpcc_delivery_cursor row;
	struct ck_dist *cd;

	s->rows[TPCC_DELIVERY_CURSOR]++;
	if (!ck_wd(s, w, d)) {
		s->bad.keys++;
		return 0;
	}
	memcpy(&row, value, sizeof(row));
	cd = ck_dist_at(s, (uint32_t)w, (uint32_t)d);
	cd->cursor = row.o_id;
	cd->cursor_seen = true;
	return 0;
}

static int
ck_customer(uint64_t key, const void *value, void *arg)
{
	struct ck_state *s = arg;
	const uint64_t id = dtxn_key_id(key);
	struct ck_cust *cc = ck_cust_find(s, dtxn_key_shard(key), id >> TPCC_C_BITS,
					  id & ((1u << TPCC_C_BITS) - 1));
	struct tpcc_customer row;

	s->rows[TPCC_CUSTOMER]++;
	if (cc == NULL) {
		s->bad.keys++;
		return 0;
	}
	memcpy(&row, value, sizeof(row));
	cc->balance = row.balance;
	cc->ytd_payment = row.ytd_payment;
	cc->payment_cnt = row.payment_cnt;
	cc->delivery_cnt = row.delivery_cnt;
	memcpy(cc->first, row.first, sizeof(cc->first));
	memcpy(cc->last, row.last, sizeof(cc->last));
	cc->seen = true;
	return 0;
}

static int
ck_last_order(uint64_t key, const void *value, void *arg)
{
	struct ck_state *s = arg;
	const uint64_t id = dtxn_key_id(key);
	struct ck_cust *cc = ck_cust_find(s, dtxn_key_shard(key), id >> TPCC_C_BITS,
					  id & ((1u << TPCC_C_BITS) - 1));
	struct tpcc_last_order row;

	s->rows[TPCC_LAST_ORDER]++;
	if (cc == NULL) {
		s->bad.keys++;
		return 0;
	}
	memcpy(&row, value, sizeof(row));
	cc->last_order = row.o_id;
	cc->last_order_seen = true;
	return 0;
}

static int
ck_history(uint64_t key, const void *value, void *arg)
{
	struct ck_state *s = arg;
	struct tpcc_history h;
	struct ck_cust *cc;

	s->rows[TPCC_HISTORY]++;
	memcpy(&h, value, sizeof(h));
	if (dtxn_key_shard(key) != h.w_id || !ck_wd(s, h.w_id, h.d_id)) {
		s->bad.values++;
		return 0;
	}
	s->wh[h.w_id - 1].sum_h += h.amount;
	ck_dist_at(s, h.w_id, h.d_id)->sum_h += h.amount;
	cc = ck_cust_find(s, h.c_w_id, h.c_d_id, h.c_id);
	if (cc == NULL) {
		s->bad.h_orphans++;
		return 0;
	}
	cc->sum_h += h.amount;
	cc->h_rows++;
	return 0;
}

static int
ck_order(uint64_t key, const void *value, void *arg)
{
	struct ck_state *s = arg;
	const uint64_t w = dtxn_key_shard(key);
	uint32_t d, o, ol;
	const bool ok = tpcc_key_order_parts(s->p, key, false, &d, &o, &ol);
	struct tpcc_order row;
	struct ck_order *co;
	struct ck_dist *cd;
	struct ck_cust *cc;

	s->rows[TPCC_ORDER]++;
	if (!ok || !ck_wd(s, w, d) || o == 0) {
		s->bad.keys++;
		return 0;
	}
	memcpy(&row, value, sizeof(row));
	cd = ck_dist_at(s, (uint32_t)w, (uint32_t)d);
	cd->o_count++;
	cd->o_max = RTE_MAX(cd->o_max, (uint32_t)o);
	cd->ol_cnt_sum += row.ol_cnt;
	co = ck_order_find(s, w, d, o);
	if (co == NULL) {
		s->bad.orders++;
		return 0;
	}
	co->exists = 1;
	co->c_id = row.c_id;
	co->carrier = row.carrier_id;
	co->ol_cnt = row.ol_cnt;
	cc = ck_cust_find(s, w, d, row.c_id);
	if (cc == NULL) {
		s->bad.values++;
		return 0;
	}
	cc->max_o = RTE_MAX(cc->max_o, (uint32_t)o);
	if (o > s->load_delivered && row.carrier_id != 0)
		cc->run_delivered++;
	return 0;
}

/* First pass over ORDER: the largest O_ID (in s->max_o) and the row count. */
static int
ck_order_size(uint64_t key, const void *value, void *arg)
{
	struct ck_state *s = arg;
	uint32_t d, o, ol;

	RTE_SET_USED(value);
	if (!tpcc_key_order_parts(s->p, key, false, &d, &o, &ol))
		o = 0; /* a bad key: ck_order() counts it */
	s->rows[TPCC_ORDER]++;
	if (o > s->max_o)
		s->max_o = (uint32_t)o;
	return 0;
}

static int
ck_new_order(uint64_t key, const void *value, void *arg)
{
	struct ck_state *s = arg;
	const uint64_t w = dtxn_key_shard(key);
	uint32_t d, o, ol;
	const bool ok = tpcc_key_order_parts(s->p, key, false, &d, &o, &ol);
	struct tpcc_new_order row;
	struct ck_order *co;
	struct ck_dist *cd;

	s->rows[TPCC_NEW_ORDER]++;
	if (!ok || !ck_wd(s, w, d) || o == 0) {
		s->bad.keys++;
		return 0;
	}
	memcpy(&row, value, sizeof(row));
	if (row.o_id != o || row.w_id != w || row.d_id != d)
		s->bad.values++;
	cd = ck_dist_at(s, (uint32_t)w, (uint32_t)d);
	cd->no_min = cd->no_count == 0 ? (uint32_t)o : RTE_MIN(cd->no_min, (uint32_t)o);
	cd->no_max = RTE_MAX(cd->no_max, (uint32_t)o);
	cd->no_count++;
	co = ck_order_find(s, w, d, o);
	if (co == NULL || !co->exists) {
		s->bad.no_orphans++;
		return 0;
	}
	co->has_no = 1;
	return 0;
}

static int
ck_order_line(uint64_t key, const void *value, void *arg)
{
	struct ck_state *s = arg;
	const uint64_t w = dtxn_key_shard(key);
	uint32_t d, o, ol;
	const bool ok = tpcc_key_order_parts(s->p, key, true, &d, &o, &ol);
	struct tpcc_order_line row;
	struct ck_order *co;
	struct ck_cust *cc;

	s->rows[TPCC_ORDER_LINE]++;
	if (!ok || !ck_wd(s, w, d) || o == 0 || ol == 0) {
		s->bad.keys++;
		return 0;
	}
	memcpy(&row, value, sizeof(row));
	ck_dist_at(s, (uint32_t)w, (uint32_t)d)->ol_rows++;
	co = ck_order_find(s, w, d, o);
	if (co == NULL || !co->exists || ol > co->ol_cnt) {
		s->bad.ol_orphans++;
		return 0;
	}
	co->lines++;
	if (row.delivery_d == 0)
		co->null_lines++;
	if ((row.delivery_d == 0) != (co->carrier == 0))
		s->bad.ol_delivery++;
	cc = ck_cust_find(s, w, d, co->c_id);
	if (row.delivery_d != 0 && cc != NULL)
		cc->sum_ol += row.amount;
	/* lines of the run's orders: what NewOrder added to STOCK */
	if (o >= s->load_next) {
		if (row.supply_w_id < 1 || row.supply_w_id > s->w || row.i_id < 1 ||
		    row.i_id > s->items) {
			s->bad.values++;
			return 0;
		}
		struct ck_stock *st = &s->stock[(uint64_t)(row.supply_w_id - 1) * s->items +
						 (row.i_id - 1)];

		st->exp_ytd += row.quantity;
		st->exp_order_cnt++;
		if (row.supply_w_id != w)
			st->exp_remote++;
	}
	return 0;
}

static int
ck_stock(uint64_t key, const void *value, void *arg)
{
	struct ck_state *s = arg;
	const uint64_t w = dtxn_key_shard(key), i = dtxn_key_id(key);
	struct tpcc_stock row;
	struct ck_stock *st;

	s->rows[TPCC_STOCK]++;
	if (!ck_wd(s, w, 1) || i < 1 || i > s->items) {
		s->bad.keys++;
		return 0;
	}
	memcpy(&row, value, sizeof(row));
	st = &s->stock[(w - 1) * s->items + (i - 1)];
	st->ytd = row.ytd;
	st->order_cnt = row.order_cnt;
	st->remote_cnt = row.remote_cnt;
	st->seen = true;
	return 0;
}

static int
ck_item(uint64_t key, const void *value, void *arg)
{
	struct ck_state *s = arg;
	const uint64_t i = dtxn_key_id(key);

	RTE_SET_USED(value);
	s->rows[TPCC_ITEM]++;
	if (dtxn_key_shard(key) != 0 || i < 1 || i > s->items)
		s->bad.keys++;
	return 0;
}

static int
ck_customer_name(uint64_t key, const void *value, void *arg)
{
	struct ck_state *s = arg;
	const uint64_t w = dtxn_key_shard(key), id = dtxn_key_id(key);
	const uint64_t d = id >> TPCC_NAME_BITS, name = id & ((1u << TPCC_NAME_BITS) - 1);
	struct tpcc_customer_name row;
	const struct ck_cust *prev = NULL;
	char last[16];

	s->rows[TPCC_CUSTOMER_NAME]++;
	if (!ck_wd(s, w, d) || name >= TPCC_NAMES) {
		s->bad.keys++;
		return 0;
	}
	memcpy(&row, value, sizeof(row));
	tpcc_last_name((uint32_t)name, last);
	if (row.n == 0 || row.n > TPCC_NAME_MAX) {
		s->bad.names++;
		return 0;
	}
	for (unsigned k = 0; k < row.n; k++) {
		struct ck_cust *cc = ck_cust_find(s, w, d, row.c_id[k]);

		if (cc == NULL || !cc->seen || cc->in_name_index ||
		    memcmp(cc->last, last, sizeof(last)) != 0 ||
		    (prev != NULL && memcmp(prev->first, cc->first, sizeof(cc->first)) > 0)) {
			s->bad.names++;
			continue;
		}
		cc->in_name_index = true;
		prev = cc;
	}
	return 0;
}

static const struct {
	uint32_t table;
	dtxn_record_visit_fn visit;
} g_scans[] = {
	{ TPCC_CUSTOMER, ck_customer },
	{ TPCC_DELIVERY_CURSOR, ck_cursor },
	{ TPCC_LAST_ORDER, ck_last_order },
	{ TPCC_HISTORY, ck_history },
	{ TPCC_ORDER, ck_order },
	{ TPCC_NEW_ORDER, ck_new_order },
	{ TPCC_ORDER_LINE, ck_order_line },
	{ TPCC_STOCK, ck_stock },
	{ TPCC_ITEM, ck_item },
	{ TPCC_CUSTOMER_NAME, ck_customer_name },
};

static int
ck_scan(struct dtxn_bench *b, struct dtxn_db *db, uint32_t table, dtxn_record_visit_fn fn,
	struct ck_state *s)
{
	int rc = dtxn_db_scan(db, table, fn, s);

	if (rc != 0) {
		bench_set_err(b, "tpcc: scanning table %u failed: %s", table,
			      rte_strerror(rc < 0 ? -rc : rc));
		return rc < 0 ? rc : -EIO;
	}
	return 0;
}

static void
ck_free(struct ck_state *s)
{
	free(s->wh);
	free(s->dist);
	free(s->cust);
	free(s->ord);
	free(s->stock);
}

int
tpcc_check(struct dtxn_bench *b, struct dtxn_db *db, struct dtxn_bench_ctx *const *ctxs,
	   unsigned n_ctx, struct dtxn_report *r)
{
	const struct tpcc_priv *p = b->priv;
	struct ck_state s;
	const uint64_t wd = (uint64_t)p->w * TPCC_DISTRICTS;
	int rc;

	memset(&s, 0, sizeof(s));
	s.p = p;
	s.w = p->w;
	s.c = p->customers;
	s.items = p->items;
	s.load_next = p->customers + 1;
	s.load_delivered = p->customers - p->undelivered;
	for (unsigned i = 0; i < n_ctx; i++) {
		s.new_orders += ctxs[i]->acc[TPCC_ACC_NEW_ORDERS];
		s.payments += ctxs[i]->acc[TPCC_ACC_PAYMENTS];
		s.delivered += ctxs[i]->acc[TPCC_ACC_DELIVERED];
	}
	s.wh = calloc(p->w, sizeof(*s.wh));
	s.dist = calloc(wd, sizeof(*s.dist));
	s.cust = calloc(wd * p->customers, sizeof(*s.cust));
	s.stock = calloc((uint64_t)p->w * p->items, sizeof(*s.stock));
	if (s.wh == NULL || s.dist == NULL || s.cust == NULL || s.stock == NULL) {
		rc = -ENOMEM;
		goto nomem;
	}
	rc = ck_scan(b, db, TPCC_WAREHOUSE, ck_warehouse, &s);
	if (rc == 0)
		rc = ck_scan(b, db, TPCC_DISTRICT, ck_district, &s);
	if (rc != 0)
		goto out;
	/* order slots per district: the largest O_ID found, but no more than the
	 * ORDER rows (orders are never deleted, so a district's O_IDs 1..max are
	 * all there; a wild key fails condition 2 instead of sizing the array) */
	rc = ck_scan(b, db, TPCC_ORDER, ck_order_size, &s);
	if (rc != 0)
		goto out;
	s.max_o = (uint32_t)RTE_MAX(RTE_MIN((uint64_t)s.max_o, s.rows[TPCC_ORDER]), UINT64_C(1));
	s.rows[TPCC_ORDER] = 0;
	s.ord = calloc(wd * s.max_o, sizeof(*s.ord));
	if (s.ord == NULL) {
		rc = -ENOMEM;
		goto nomem;
	}
	for (unsigned i = 0; i < RTE_DIM(g_scans) && rc == 0; i++)
		rc = ck_scan(b, db, g_scans[i].table, g_scans[i].visit, &s);
	if (rc == 0)
		tpcc_check_conditions(&s, r);
	goto out;
nomem:
	bench_set_err(b, "tpcc: out of memory for the consistency checks");
out:
	ck_free(&s);
	return rc;
}
