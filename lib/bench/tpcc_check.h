/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DTXN_BENCH_TPCC_CHECK_H
#define DTXN_BENCH_TPCC_CHECK_H

/*
 * The TPC-C checker's picture of the database after a run (private to
 * tpcc_check.c, which fills it by scanning every table on the MN, and
 * tpcc_check_cond.c, which evaluates the conditions on it). Indexes:
 * warehouse w-1; district (w-1)*10 + d-1; customer district*C + c-1;
 * order district*max_o + o-1; stock (w-1)*items + i-1.
 */

#include <stdbool.h>
#include <stdint.h>

#include "tpcc.h"

struct ck_wh {
	int64_t ytd;
	int64_t sum_h;        /* sum of H_AMOUNT with H_W_ID = w */
	bool seen;
};

struct ck_dist {
	int64_t ytd;
	int64_t sum_h;        /* sum of H_AMOUNT with (H_W_ID, H_D_ID) */
	uint32_t next_o_id;
	uint32_t cursor;
	uint32_t o_max, o_count;
	uint32_t no_min, no_max, no_count;
	uint64_t ol_cnt_sum;  /* sum of O_OL_CNT */
	uint64_t ol_rows;     /* ORDER-LINE rows */
	bool seen, cursor_seen;
};

struct ck_cust {
	int64_t balance, ytd_payment;
	int64_t sum_h;        /* sum of H_AMOUNT of the customer's history rows */
	int64_t sum_ol;       /* sum of OL_AMOUNT of its delivered order lines */
	uint32_t payment_cnt, delivery_cnt;
	uint32_t h_rows;      /* its history rows */
	uint32_t run_delivered; /* its orders delivered during the run */
	uint32_t max_o;       /* its largest O_ID */
	uint32_t last_order;  /* its LAST_ORDER row */
	char first[16], last[16];
	bool seen, last_order_seen, in_name_index;
};

struct ck_order {
	uint32_t c_id;
	uint8_t exists, has_no, carrier, ol_cnt;
	uint8_t lines;        /* ORDER-LINE rows seen */
	uint8_t null_lines;   /* of which OL_DELIVERY_D is null */
};

struct ck_stock {
	uint32_t ytd, order_cnt, remote_cnt;        /* as found */
	uint32_t exp_ytd, exp_order_cnt, exp_remote; /* added by the run's order lines */
	bool seen;
};

/* Rows that do not fit the picture, by kind (each fails its condition). */
struct ck_bad {
	uint64_t keys;        /* malformed or out-of-range keys, any table */
	uint64_t orders;      /* ORDER rows beyond the district's array */
	uint64_t no_orphans;  /* NEW-ORDER rows without an ORDER row */
	uint64_t ol_orphans;  /* ORDER-LINE rows without an ORDER row or beyond O_OL_CNT */
	uint64_t ol_delivery; /* lines whose OL_DELIVERY_D disagrees with O_CARRIER_ID (cond 7) */
	uint64_t h_orphans;   /* HISTORY rows of no customer */
	uint64_t names;       /* CUSTOMER_NAME rows that disagree with CUSTOMER */
	uint64_t values;      /* rows whose value disagrees with their key */
};

struct ck_state {
	const struct tpcc_priv *p;
	uint32_t w, c, items;
	uint32_t max_o;       /* order slots per district */
	uint32_t load_next;   /* D_NEXT_O_ID at load: C + 1 */
	uint32_t load_delivered; /* orders delivered at load per district */
	struct ck_wh *wh;
	struct ck_dist *dist;
	struct ck_cust *cust;
	struct ck_order *ord;
	struct ck_stock *stock;
	uint64_t rows[TPCC_N_TABLES];
	struct ck_bad bad;
	/* bookkeeping of the committed transactions (ctx->acc) */
	int64_t new_orders, payments, delivered;
};

static inline struct ck_dist *
ck_dist_at(struct ck_state *s, uint32_t w, uint32_t d)
{
	return &s->dist[(w - 1) * TPCC_DISTRICTS + (d - 1)];
}

static inline struct ck_cust *
ck_cust_at(struct ck_state *s, uint32_t w, uint32_t d, uint32_t c)
{
	return &s->cust[((uint64_t)(w - 1) * TPCC_DISTRICTS + (d - 1)) * s->c + (c - 1)];
}

static inline struct ck_order *
ck_order_at(struct ck_state *s, uint32_t w, uint32_t d, uint32_t o)
{
	return &s->ord[((uint64_t)(w - 1) * TPCC_DISTRICTS + (d - 1)) * s->max_o + (o - 1)];
}

/** Evaluates every condition on a filled state into @p r (tpcc_check_cond.c). */
void tpcc_check_conditions(struct ck_state *s, struct dtxn_report *r);

#endif /* DTXN_BENCH_TPCC_CHECK_H */
