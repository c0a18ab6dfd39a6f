/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the TPC-C benchmark (lib/bench/tpcc*.c): inputs (last
 * names, NURand constants, the mix), the insert-room sizing, and on a
 * one-MN cluster: the consistency checks pass after the load and after a
 * run, each check fails when the database is broken the way it guards
 * against (and passes again once repaired), and a run that fills its
 * tables still ends with every check holding.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <rte_common.h>

#include "bench_room.h"
#include "tpcc.h"
#include "unit_eal.h"
#include "ut_cluster.h"

static const struct dtxn_opt *
find_opt(const struct dtxn_bench_ops *ops, const char *name)
{
	for (unsigned i = 0; i < ops->n_opts; i++)
		if (strcmp(ops->opts[i].name, name) == 0)
			return &ops->opts[i];
	return NULL;
}

static void
set_opt(struct dtxn_bench *b, const char *name, const char *value)
{
	const struct dtxn_opt *o = find_opt(b->ops, name);
	char err[160] = "";

	assert_non_null(o);
	if (dtxn_opt_set(o, b->conf, value, err, sizeof(err)) != 0)
		fail_msg("set %s=%s: %s", name, value, err);
}

/* A small TPC-C: 2 warehouses, 30 customers and 1000 items (scale 100), in @p layout. */
static struct dtxn_bench *
small_tpcc_in(uint64_t seed, const char *max_new_orders, const char *layout)
{
	const struct dtxn_bench_ops *ops = dtxn_bench_find("tpcc");
	struct dtxn_bench *b;

	assert_non_null(ops);
	b = dtxn_bench_alloc(ops, seed);
	assert_non_null(b);
	set_opt(b, "warehouses", "2");
	set_opt(b, "tpcc_scale", "100");
	set_opt(b, "max_new_orders", max_new_orders);
	set_opt(b, "tpcc_layout", layout);
	assert_int_equal(ops->create(b), 0);
	return b;
}

static struct dtxn_bench *
small_tpcc(uint64_t seed, const char *max_new_orders)
{
	return small_tpcc_in(seed, max_new_orders, "hashed");
}

static void
test_inputs(void **state)
{
	char name[16];
	struct tpcc_priv p = { .w = 5, .customers = 3000, .items = 100000, .names = 1000 };
	struct dtxn_rng r;

	(void)state;
	tpcc_last_name(0, name);
	assert_memory_equal(name, "BARBARBAR\0\0\0\0\0\0\0", 16);
	tpcc_last_name(371, name);
	assert_memory_equal(name, "PRICALLYOUGHT\0\0\0", 16);
	tpcc_last_name(999, name);
	assert_memory_equal(name, "EINGEINGEING\0\0\0\0", 16);

	/* clause 2.1.6.1: |C_LAST run - load| in [65, 119], not 96 or 112 */
	for (uint64_t seed = 0; seed < 2000; seed++) {
		struct tpcc_nurand_c load, run;
		int delta;

		tpcc_nurand_constants(seed, &load, &run);
		delta = abs((int)run.c_last - (int)load.c_last);
		assert_true(delta >= 65 && delta <= 119 && delta != 96 && delta != 112);
		assert_true(run.c_last <= 255 && run.c_id <= 1023 && run.ol_i_id <= 8191);
	}

	tpcc_nurand_constants(7, &p.c_load, &p.c_run);
	dtxn_rng_seed(&r, 3);
	for (int i = 0; i < 20000; i++) {
		uint32_t w = tpcc_pick_warehouse(&p, &r), o = tpcc_pick_other_warehouse(&p, &r, w);
		uint32_t c = tpcc_pick_customer(&p, &r), it = tpcc_pick_item(&p, &r);

		assert_true(w >= 1 && w <= p.w && o >= 1 && o <= p.w && o != w);
		assert_true(c >= 1 && c <= p.customers && it >= 1 && it <= p.items);
		assert_true(tpcc_pick_last_name(&p, &r) < p.names);
	}
	p.w = 1;
	assert_int_equal(tpcc_pick_other_warehouse(&p, &r, 1), 1);
}

static void
test_mix_and_options(void **state)
{
	const struct dtxn_bench_ops *ops = dtxn_bench_find("tpcc");
	struct dtxn_bench *b = small_tpcc(1, "1000");
	unsigned hist[TPCC_N_TYPES] = { 0 };
	const unsigned draws = 200000;
	static const double want[TPCC_N_TYPES] = { 0.45, 0.43, 0.04, 0.04, 0.04 };
	struct dtxn_rng r;

	(void)state;
	dtxn_rng_seed(&r, 11);
	for (unsigned i = 0; i < draws; i++) {
		unsigned t = ops->pick(b, &r);

		assert_true(t < TPCC_N_TYPES);
		hist[t]++;
	}
	for (unsigned t = 0; t < TPCC_N_TYPES; t++)
		assert_true(fabs((double)hist[t] / draws - want[t]) < 0.005);
	dtxn_bench_free(b);

	/* the mix must sum to 100 */
	b = dtxn_bench_alloc(ops, 1);
	set_opt(b, "mix_payment", "44");
	assert_int_equal(ops->create(b), -EINVAL);
	assert_non_null(strstr(b->err, "must be 100"));
	dtxn_bench_free(b);

	/* a NewOrder-only mix */
	b = dtxn_bench_alloc(ops, 1);
	set_opt(b, "mix_new_order", "100");
	set_opt(b, "mix_payment", "0");
	set_opt(b, "mix_order_status", "0");
	set_opt(b, "mix_delivery", "0");
	set_opt(b, "mix_stock_level", "0");
	assert_int_equal(ops->create(b), 0);
	for (unsigned i = 0; i < 1000; i++)
		assert_int_equal(ops->pick(b, &r), TPCC_NEW_ORDER_TXN);
	dtxn_bench_free(b);
}

/* Draws @p draws types from @p b and compares each share with want[] (percent). */
static void
assert_mix_drawn(struct dtxn_bench *b, const uint64_t want[TPCC_N_TYPES])
{
	unsigned hist[TPCC_N_TYPES] = { 0 };
	const unsigned draws = 100000;
	struct dtxn_rng r;

	dtxn_rng_seed(&r, 5);
	for (unsigned i = 0; i < draws; i++)
		hist[b->ops->pick(b, &r)]++;
	for (unsigned t = 0; t < TPCC_N_TYPES; t++) {
		if (want[t] == 0)
			assert_int_equal(hist[t], 0);
		else
			assert_true(fabs((double)hist[t] / draws - (double)want[t] / 100) < 0.006);
	}
}

/* The `mix` presets (doc/guides/tpcc.md, "Mix presets"): each artifact's
 * shares; a mix_* given replaces its share of the preset; a bad sum names
 * the preset and every share; a name not among the presets is refused. */
static void
test_mix_presets(void **state)
{
	const struct dtxn_bench_ops *ops = dtxn_bench_find("tpcc");
	const struct dtxn_opt *mix = NULL;
	static const uint64_t crest[TPCC_N_TYPES] = { 50, 46, 4, 0, 0 };
	static const uint64_t standard[TPCC_N_TYPES] = { 45, 43, 4, 4, 4 };
	static const char *const std_names[] = { "standard", "ford", "motor", "lotus" };
	const struct tpcc_conf *conf;
	struct dtxn_bench *b;
	char err[160];

	(void)state;
	for (unsigned i = 0; i < ops->n_opts; i++)
		if (strcmp(ops->opts[i].name, "mix") == 0)
			mix = &ops->opts[i];
	assert_non_null(mix);
	assert_int_equal(mix->type, DTXN_OPT_NAME);

	/* the default is the standard mix, every mix_* resolved into the conf */
	b = small_tpcc(1, "1000");
	conf = b->conf;
	assert_string_equal(dtxn_opt_name(mix, conf->mix_preset), "standard");
	assert_memory_equal(conf->mix, standard, sizeof(standard));
	assert_mix_drawn(b, standard);
	dtxn_bench_free(b);

	/* CREST's artifact: NewOrder 50 / Payment 46 / OrderStatus 4, never Delivery or StockLevel */
	b = dtxn_bench_alloc(ops, 1);
	set_opt(b, "mix", "crest");
	assert_int_equal(ops->create(b), 0);
	conf = b->conf;
	assert_memory_equal(conf->mix, crest, sizeof(crest));
	assert_mix_drawn(b, crest);
	dtxn_bench_free(b);

	/* FORD's, Motor's and Lotus's artifacts run the standard mix */
	for (unsigned k = 0; k < RTE_DIM(std_names); k++) {
		b = dtxn_bench_alloc(ops, 1);
		set_opt(b, "mix", std_names[k]);
		assert_int_equal(ops->create(b), 0);
		assert_memory_equal(((const struct tpcc_conf *)b->conf)->mix, standard,
				    sizeof(standard));
		dtxn_bench_free(b);
	}

	/* a mix_* given replaces the preset's share: crest with 4% StockLevel from Payment */
	b = dtxn_bench_alloc(ops, 1);
	set_opt(b, "mix", "crest");
	set_opt(b, "mix_payment", "42");
	set_opt(b, "mix_stock_level", "4");
	assert_int_equal(ops->create(b), 0);
	assert_mix_drawn(b, (const uint64_t[TPCC_N_TYPES]){ 50, 42, 4, 0, 4 });
	dtxn_bench_free(b);

	/* a replaced share that breaks the sum: one line naming the preset and the shares */
	b = dtxn_bench_alloc(ops, 1);
	set_opt(b, "mix", "crest");
	set_opt(b, "mix_delivery", "4");
	assert_int_equal(ops->create(b), -EINVAL);
	assert_non_null(strstr(b->err, "mix crest"));
	assert_non_null(strstr(b->err, "delivery 4"));
	assert_non_null(strstr(b->err, "= 104, must be 100"));
	dtxn_bench_free(b);

	/* a name that is no preset */
	b = dtxn_bench_alloc(ops, 1);
	assert_int_equal(dtxn_opt_set(mix, b->conf, "Crest", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "--mix: 'Crest' is not one of standard, ford, motor, lotus, crest"));
	assert_int_equal(dtxn_opt_set(mix, b->conf, "", err, sizeof(err)), -EINVAL);
	assert_null(dtxn_opt_name(mix, TPCC_N_MIX_PRESETS));
	dtxn_bench_free(b);
}

/* bench_room_buckets: with the buckets it returns, about p_full of the
 * buckets are full once the table holds its rows (simulated). */
static void
test_room_sizing(void **state)
{
	const uint64_t rows = 200000;
	const uint32_t slots = 8;
	const double p_full = 0.01;
	uint64_t n = bench_room_buckets(rows, slots, p_full), full = 0;
	static uint16_t load[200000];
	struct dtxn_rng r;

	(void)state;
	assert_true(n > rows / slots && n < rows);
	assert_true(bench_room_buckets(rows, slots, 1e-7) > n);
	assert_true(bench_room_buckets(rows, 16, p_full) < n);
	assert_int_equal(bench_room_buckets(0, slots, p_full), 1);
	assert_true(n <= RTE_DIM(load));
	dtxn_rng_seed(&r, 5);
	for (uint64_t i = 0; i < rows; i++)
		load[dtxn_rng_range(&r, n)]++;
	for (uint64_t b = 0; b < n; b++)
		full += load[b] >= slots;
	print_message("  %" PRIu64 " buckets, %.4f full (bound %.2f)\n", n, (double)full / n,
		      p_full);
	assert_true((double)full / n <= p_full * 1.3);
	assert_true((double)full / n >= p_full * 0.5);
}

static void
mut_add(struct ut_cluster *u, uint32_t table, uint64_t key, size_t off, int64_t delta,
	enum ut_op op)
{
	struct ut_mutation m = { .op = op, .table = table, .key = key, .off = off, .delta = delta };

	ut_mutate(u, &m);
}

/* Breaks, checks, repairs, checks. */
static void
expect_break(struct ut_cluster *u, uint32_t table, uint64_t key, size_t off, int64_t delta,
	     enum ut_op op, const char *const *failing)
{
	mut_add(u, table, key, off, delta, op);
	ut_check(u, UT_COORDS);
	ut_expect_failing(u->rep, failing);
	mut_add(u, table, key, off, -delta, op);
	ut_check(u, UT_COORDS);
	ut_expect_failing(u->rep, NULL);
}

/* @p room: max_new_orders; the artifact layout splits its Payments' room
 * among ut_cluster's 36 coordinators (4 run, 500 txns each). */
static void
run_and_teeth(const char *layout, const char *room, const char *name)
{
	struct dtxn_bench *b = small_tpcc_in(42, room, layout);
	struct tpcc_priv *p = b->priv;
	struct ut_cluster u;
	uint64_t commits = 0;

	if (!ut_cluster_up(&u, b, name)) {
		dtxn_bench_free(b);
		skip();
	}
	/* right after the load */
	ut_check(&u, 0);
	assert_int_equal(u.rep->n_checks, 18);
	ut_expect_failing(u.rep, NULL);

	ut_cluster_run(&u, 500);
	for (unsigned t = 0; t < TPCC_N_TYPES; t++) {
		const struct dtxn_txn_stats *ts = &u.stats->type[t];

		print_message("  %-12s commits %" PRIu64 " rollbacks %" PRIu64 " attempts %" PRIu64 "\n",
			      b->ops->type_names[t], ts->commits, ts->rollbacks, ts->attempts);
		assert_true(ts->commits > 0);
		commits += ts->commits;
	}
	/* the 1% NewOrder rollback, and nothing else rolls back */
	assert_true(u.stats->type[TPCC_NEW_ORDER_TXN].rollbacks > 0);
	assert_true(u.stats->type[TPCC_NEW_ORDER_TXN].rollbacks <
		    u.stats->type[TPCC_NEW_ORDER_TXN].commits / 20);
	for (unsigned t = 1; t < TPCC_N_TYPES; t++)
		assert_int_equal(u.stats->type[t].rollbacks, 0);
	assert_int_equal(commits + u.stats->type[TPCC_NEW_ORDER_TXN].rollbacks, 4 * 500);
	ut_check(&u, UT_COORDS);
	ut_expect_failing(u.rep, NULL);

	/* money: W_YTD, D_YTD, C_BALANCE */
	expect_break(&u, TPCC_WAREHOUSE, tpcc_k_warehouse(1), offsetof(struct tpcc_warehouse, ytd), 1,
		     UT_ADD_I64, (const char *[]){ "tpcc_cond1_w_ytd_sum_d_ytd",
						  "tpcc_cond8_w_ytd_sum_h_amount", NULL });
	expect_break(&u, TPCC_DISTRICT, tpcc_k_district(2, 3), offsetof(struct tpcc_district, ytd), 7,
		     UT_ADD_I64, (const char *[]){ "tpcc_cond1_w_ytd_sum_d_ytd",
						  "tpcc_cond9_d_ytd_sum_h_amount", NULL });
	expect_break(&u, TPCC_CUSTOMER, tpcc_k_customer(1, 1, 1),
		     offsetof(struct tpcc_customer, balance), -5, UT_ADD_I64,
		     (const char *[]){ "tpcc_cond10_c_balance", "tpcc_cond12_c_balance_ytd", NULL });
	/* counters: STOCK, LAST_ORDER */
	expect_break(&u, TPCC_STOCK, tpcc_k_stock(2, 1), offsetof(struct tpcc_stock, ytd), 1,
		     UT_ADD_U32, (const char *[]){ "tpcc_stock_counts", NULL });
	expect_break(&u, TPCC_LAST_ORDER, tpcc_k_customer(1, 2, 3),
		     offsetof(struct tpcc_last_order, o_id), 1, UT_ADD_U32,
		     (const char *[]){ "tpcc_last_order", NULL });

	/* D_NEXT_O_ID: condition 2 (and the cursor when the district has no new order) */
	{
		struct tpcc_district di;
		struct tpcc_delivery_cursor cur;

		assert_int_equal(dtxn_db_get(u.db, TPCC_DISTRICT, tpcc_k_district(1, 4), &di), 0);
		assert_int_equal(dtxn_db_get(u.db, TPCC_DELIVERY_CURSOR, tpcc_k_district(1, 4), &cur),
				 0);
		expect_break(&u, TPCC_DISTRICT, tpcc_k_district(1, 4),
			     offsetof(struct tpcc_district, next_o_id), 1, UT_ADD_U32,
			     cur.o_id == di.next_o_id
				     ? (const char *[]){ "tpcc_cond2_next_o_id",
							 "tpcc_delivery_cursor", NULL }
				     : (const char *[]){ "tpcc_cond2_next_o_id", NULL });
	}

	/* a gap in NEW-ORDER: find a district with three or more */
	for (uint32_t w = 1, done = 0; w <= p->w && !done; w++) {
		for (uint32_t d = 1; d <= TPCC_DISTRICTS && !done; d++) {
			struct tpcc_district di;
			struct tpcc_delivery_cursor cur;
			struct tpcc_new_order no;
			struct tpcc_order_line ol;
			uint64_t key;

			assert_int_equal(dtxn_db_get(u.db, TPCC_DISTRICT, tpcc_k_district(w, d), &di), 0);
			assert_int_equal(dtxn_db_get(u.db, TPCC_DELIVERY_CURSOR, tpcc_k_district(w, d),
						     &cur), 0);
			if (di.next_o_id - cur.o_id < 3)
				continue;
			done = 1;
			key = tpcc_k_order(p, w, d, cur.o_id + 1);
			assert_int_equal(dtxn_db_get(u.db, TPCC_NEW_ORDER, key, &no), 0);
			struct ut_mutation del = { .op = UT_DELETE, .table = TPCC_NEW_ORDER, .key = key };
			struct ut_mutation ins = { .op = UT_INSERT, .table = TPCC_NEW_ORDER, .key = key,
						   .value = &no, .len = sizeof(no) };

			ut_mutate(&u, &del);
			ut_check(&u, UT_COORDS);
			ut_expect_failing(u.rep, (const char *[]){
				"tpcc_cond3_new_order_contiguous", "tpcc_cond5_carrier_new_order",
				"tpcc_cond11_orders_minus_new_orders", "tpcc_row_counts", NULL });
			ut_mutate(&u, &ins);
			ut_check(&u, UT_COORDS);
			ut_expect_failing(u.rep, NULL);

			/* an undelivered line marked delivered: condition 7, and its
			 * amount now counts in the customer's balance (10, 12) */
			expect_break(&u, TPCC_ORDER_LINE, tpcc_k_order_line(p, w, d, cur.o_id, 1),
				     offsetof(struct tpcc_order_line, delivery_d), 12345, UT_ADD_I64,
				     (const char *[]){ "tpcc_cond7_delivery_d_carrier",
						       "tpcc_cond10_c_balance",
						       "tpcc_cond12_c_balance_ytd", NULL });

			/* a lost order line (of a loaded, delivered order: amount 0) */
			key = tpcc_k_order_line(p, w, d, 1, 1);
			assert_int_equal(dtxn_db_get(u.db, TPCC_ORDER_LINE, key, &ol), 0);
			del = (struct ut_mutation){ .op = UT_DELETE, .table = TPCC_ORDER_LINE, .key = key };
			ins = (struct ut_mutation){ .op = UT_INSERT, .table = TPCC_ORDER_LINE,
						    .key = key, .value = &ol, .len = sizeof(ol) };
			ut_mutate(&u, &del);
			ut_check(&u, UT_COORDS);
			ut_expect_failing(u.rep, (const char *[]){ "tpcc_cond4_ol_cnt_sum",
								  "tpcc_cond6_ol_cnt_lines", NULL });
			ut_mutate(&u, &ins);
			ut_check(&u, UT_COORDS);
			ut_expect_failing(u.rep, NULL);
		}
	}

	/* a payment the books do not show: an extra HISTORY row */
	{
		struct tpcc_history h = { .c_id = 1, .c_d_id = 1, .c_w_id = 1, .d_id = 1, .w_id = 1,
					  .date = 1, .amount = 500 };
		/* a key no run row has: an unknown coordinator; in the artifact
		 * layout the last id of coordinator 0 (it finishes far fewer) */
		const uint64_t key = p->h_cap != 0 ? tpcc_k_history(p, 1, 1, p->h_cap - 1)
						   : tpcc_k_history(p, 1, 999, 1);
		struct ut_mutation ins = { .op = UT_INSERT, .table = TPCC_HISTORY, .key = key,
					   .value = &h, .len = sizeof(h) };
		struct ut_mutation del = { .op = UT_DELETE, .table = TPCC_HISTORY, .key = key };

		ut_mutate(&u, &ins);
		ut_check(&u, UT_COORDS);
		ut_expect_failing(u.rep, (const char *[]){
			"tpcc_cond8_w_ytd_sum_h_amount", "tpcc_cond9_d_ytd_sum_h_amount",
			"tpcc_cond10_c_balance", "tpcc_customer_counts", "tpcc_row_counts", NULL });
		ut_mutate(&u, &del);
		ut_check(&u, UT_COORDS);
		ut_expect_failing(u.rep, NULL);
	}

	/* bookkeeping: a NewOrder the database does not have */
	u.ctx[0].acc[TPCC_ACC_NEW_ORDERS]++;
	ut_check(&u, UT_COORDS);
	ut_expect_failing(u.rep, (const char *[]){ "tpcc_row_counts", NULL });
	u.ctx[0].acc[TPCC_ACC_NEW_ORDERS]--;

	ut_cluster_down(&u);
	dtxn_bench_free(b);
}

static void
test_run_and_teeth(void **state)
{
	(void)state;
	run_and_teeth("hashed", "5000", "ut_tpcc");
}

/* The same run and the same broken databases in CREST's artifact's layout. */
static void
test_run_and_teeth_artifact(void **state)
{
	(void)state;
	run_and_teeth("artifact", "20000", "ut_tpcc_art");
}

/*
 * The artifact layout's keys: dense, each order's own slot of ORDER and
 * NEW-ORDER, its lines in its own ORDER-LINE bucket (a direct index maps
 * id % n_orders), decoded back to (district, O_ID, OL_NUMBER); an O_ID
 * past the district's room is no row's id. bench_room_cap bounds a
 * district's NewOrders.
 */
static void
test_artifact_keys(void **state)
{
	struct dtxn_bench *b = small_tpcc_in(3, "1000", "artifact");
	const struct tpcc_priv *p = b->priv;
	uint32_t d, o, ol;

	(void)state;
	/* 30 loaded orders per district, and the run's 1000 over 20 districts (mean 50) */
	assert_true(p->o_cap > 30 + 50 && p->o_cap < 30 + 50 + 60);
	assert_int_equal(p->n_orders, 2 * TPCC_DISTRICTS * (uint64_t)p->o_cap);
	for (uint32_t w = 1; w <= 2; w++)
		for (uint32_t dd = 1; dd <= TPCC_DISTRICTS; dd++)
			for (uint32_t oo = 1; oo <= p->o_cap; oo += p->o_cap / 7) {
				const uint64_t k = tpcc_k_order(p, w, dd, oo);
				const uint64_t od = dtxn_key_id(k);

				assert_true(od < p->n_orders);
				assert_int_equal(dtxn_key_shard(k), w);
				assert_true(tpcc_key_order_parts(p, k, false, &d, &o, &ol));
				assert_int_equal(d, dd);
				assert_int_equal(o, oo);
				assert_int_equal(ol, 0);
				for (uint32_t l = 1; l <= TPCC_MAX_OL; l++) {
					const uint64_t kl = tpcc_k_order_line(p, w, dd, oo, l);

					assert_int_equal(dtxn_key_id(kl) % p->n_orders, od);
					assert_true(dtxn_key_id(kl) < p->n_orders * TPCC_MAX_OL);
					assert_true(tpcc_key_order_parts(p, kl, true, &d, &o, &ol));
					assert_int_equal(d, dd);
					assert_int_equal(o, oo);
					assert_int_equal(ol, l);
				}
			}
	assert_int_equal(dtxn_key_id(tpcc_k_order(p, 1, 1, p->o_cap + 1)), TPCC_NO_ID);
	assert_int_equal(dtxn_key_id(tpcc_k_order_line(p, 1, 1, p->o_cap + 1, 1)), TPCC_NO_ID);
	assert_false(tpcc_key_order_parts(p, tpcc_k_order(p, 1, 1, p->o_cap + 1), false, &d, &o,
					  &ol));
	/* a key whose shard is not its order's warehouse */
	assert_false(tpcc_key_order_parts(p, dtxn_key_make(dtxn_key_id(tpcc_k_order(p, 1, 1, 1)), 2),
					  false, &d, &o, &ol));
	dtxn_bench_free(b);

	/* the bound: mean 100 per part; the tail past it shrinks with p_full */
	assert_true(bench_room_cap(100000, 1000, 1e-3) > 100);
	assert_true(bench_room_cap(100000, 1000, 1e-7) > bench_room_cap(100000, 1000, 1e-3));
	assert_true(bench_room_cap(100000, 1000, 1e-7) < 200);
	assert_int_equal(bench_room_cap(0, 1000, 1e-7), 1);
}

/* Tables with no room for the run: inserts hit INDEX_FULL, the transactions
 * are given up as rollbacks, the run ends, and every check holds. */
static void
full_tables(const char *layout, const char *name)
{
	struct dtxn_bench *b = small_tpcc_in(9, "0", layout);
	struct ut_cluster u;
	uint64_t full = 0;

	if (!ut_cluster_up(&u, b, name)) {
		dtxn_bench_free(b);
		skip();
	}
	ut_cluster_run(&u, 1500);
	for (unsigned t = 0; t < TPCC_N_TYPES; t++)
		full += u.stats->type[t].aborts[DTXN_ABORT_INDEX_FULL];
	print_message("  index_full aborts %" PRIu64 ", NewOrder rollbacks %" PRIu64 " of %" PRIu64
		      " commits\n", full, u.stats->type[TPCC_NEW_ORDER_TXN].rollbacks,
		      u.stats->type[TPCC_NEW_ORDER_TXN].commits);
	assert_true(full >= BENCH_ROOM_TRIES);
	assert_true(u.stats->type[TPCC_NEW_ORDER_TXN].rollbacks > 0);
	ut_check(&u, UT_COORDS);
	ut_expect_failing(u.rep, NULL);
	ut_cluster_down(&u);
	dtxn_bench_free(b);
}

static void
test_full_tables(void **state)
{
	(void)state;
	full_tables("hashed", "ut_tpcc_full");
}

/* Artifact layout: a district's order ids used up abort NewOrder index_full. */
static void
test_full_tables_artifact(void **state)
{
	(void)state;
	full_tables("artifact", "ut_tpcc_full_art");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_inputs),
		cmocka_unit_test(test_mix_and_options),
		cmocka_unit_test(test_mix_presets),
		cmocka_unit_test(test_room_sizing),
		cmocka_unit_test(test_run_and_teeth),
		cmocka_unit_test(test_run_and_teeth_artifact),
		cmocka_unit_test(test_artifact_keys),
		cmocka_unit_test(test_full_tables),
		cmocka_unit_test(test_full_tables_artifact),
	};
	int rc;

	if (dtxn_unit_eal_init("ut_tpcc") != 0)
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	dtxn_unit_eal_fini();
	return rc;
}
