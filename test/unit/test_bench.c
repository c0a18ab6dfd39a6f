/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of lib/bench: the seeded generators, option parsing, the
 * registry, the KVS and SmallBank generators and conf checks, and (when the
 * shm fabric and the ford protocol are available) the coordinator loop and
 * both benchmarks' invariants on a real one-MN cluster.
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
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include "dtxn_bench.h"
#include "dtxn_fabric.h"
#include "dtxn_sched.h"
#include "dtxn_stats.h"
#include "dtxn_txn.h"
#include "smallbank.h"
#include "tpcc.h"
#include "unit_eal.h"

/* ------------------------------------------------------------------ */
/* Helpers                                                            */
/* ------------------------------------------------------------------ */

static const struct dtxn_opt *
find_opt(const struct dtxn_bench_ops *ops, const char *name)
{
	for (unsigned i = 0; i < ops->n_opts; i++)
		if (strcmp(ops->opts[i].name, name) == 0)
			return &ops->opts[i];
	return NULL;
}

static uint64_t
conf_u64(const struct dtxn_bench *b, const char *name)
{
	const struct dtxn_opt *o = find_opt(b->ops, name);
	uint64_t v;

	assert_non_null(o);
	memcpy(&v, (const char *)b->conf + o->offset, sizeof(v));
	return v;
}

/* Sets an option through the parser; fails the test if it refuses. */
static void
set_opt(struct dtxn_bench *b, const char *name, const char *value)
{
	const struct dtxn_opt *o = find_opt(b->ops, name);
	char err[160] = "";

	assert_non_null(o);
	if (dtxn_opt_set(o, b->conf, value, err, sizeof(err)) != 0)
		fail_msg("set %s=%s: %s", name, value, err);
}

static double
zeta_loop(uint64_t n, double theta)
{
	double s = 0;

	for (uint64_t i = n; i >= 1; i--)
		s += pow((double)i, -theta);
	return s;
}

/* ------------------------------------------------------------------ */
/* Generators                                                         */
/* ------------------------------------------------------------------ */

static void
test_rng_determinism(void **state)
{
	struct dtxn_rng a, b, c;
	unsigned differ = 0;

	(void)state;
	dtxn_rng_seed(&a, 42);
	dtxn_rng_seed(&b, 42);
	dtxn_rng_seed(&c, 43);
	for (int i = 0; i < 10000; i++) {
		uint64_t x = dtxn_rng_next(&a), y = dtxn_rng_next(&b), z = dtxn_rng_next(&c);

		assert_int_equal(x, y);
		differ += x != z;
	}
	assert_true(differ > 9990);

	/* Seed 0 is a valid seed with a non-degenerate stream. */
	dtxn_rng_seed(&a, 0);
	uint64_t first = dtxn_rng_next(&a);
	unsigned same = 0;

	for (int i = 0; i < 100; i++)
		same += dtxn_rng_next(&a) == first;
	assert_true(same < 2);

	/* Copying the state replays the stream (the runner relies on it). */
	dtxn_rng_seed(&a, 7);
	b = a;
	for (int i = 0; i < 100; i++)
		assert_int_equal(dtxn_rng_range(&a, 1000), dtxn_rng_range(&b, 1000));
}

static void
test_rng_range(void **state)
{
	static const uint64_t ns[] = { 1, 2, 3, 7, 100, 1000003, UINT64_C(1) << 40,
				       (UINT64_C(1) << 63) + 1, UINT64_MAX };
	struct dtxn_rng r;
	uint64_t hist[10] = { 0 };
	const unsigned draws = 1000000;

	(void)state;
	dtxn_rng_seed(&r, 1);
	for (unsigned k = 0; k < RTE_DIM(ns); k++)
		for (int i = 0; i < 20000; i++)
			assert_true(dtxn_rng_range(&r, ns[k]) < ns[k]);

	/* Rough uniformity: 10 buckets, each within 2% of draws / 10. */
	for (unsigned i = 0; i < draws; i++)
		hist[dtxn_rng_range(&r, 10)]++;
	for (unsigned i = 0; i < 10; i++)
		assert_true(fabs((double)hist[i] - draws / 10.0) < 0.02 * draws / 10.0);

	/* A range whose size is not a power of two is not biased to the low half. */
	const uint64_t n = (UINT64_C(1) << 63) + (UINT64_C(1) << 62);
	unsigned low = 0;

	for (unsigned i = 0; i < 100000; i++)
		low += dtxn_rng_range(&r, n) < n / 2;
	assert_true(fabs(low / 100000.0 - 0.5) < 0.01);

	/* between: inclusive bounds, both reached. */
	bool saw_lo = false, saw_hi = false;

	for (int i = 0; i < 10000; i++) {
		uint64_t v = dtxn_rng_between(&r, 5, 9);

		assert_true(v >= 5 && v <= 9);
		saw_lo |= v == 5;
		saw_hi |= v == 9;
	}
	assert_true(saw_lo && saw_hi);
	assert_int_equal(dtxn_rng_between(&r, 17, 17), 17);

	/* double: [0, 1), mean 1/2. */
	double sum = 0;

	for (unsigned i = 0; i < draws; i++) {
		double d = dtxn_rng_double(&r);

		assert_true(d >= 0.0 && d < 1.0);
		sum += d;
	}
	assert_true(fabs(sum / draws - 0.5) < 0.002);
}

static void
test_zipf(void **state)
{
	const uint64_t n = 100000;
	const double theta = 0.99;
	const unsigned draws = 1000000;
	struct dtxn_zipf z;
	struct dtxn_rng r;
	unsigned r0 = 0, r1 = 0, r10 = 0;

	(void)state;
	assert_int_equal(dtxn_zipf_init(&z, 0, 0.5), -EINVAL);
	assert_int_equal(dtxn_zipf_init(&z, 10, 1.0), -EINVAL);
	assert_int_equal(dtxn_zipf_init(&z, 10, -0.1), -EINVAL);
	assert_int_equal(dtxn_zipf_init(&z, 10, NAN), -EINVAL);

	assert_int_equal(dtxn_zipf_init(&z, n, theta), 0);
	const double zn = zeta_loop(n, theta);

	assert_true(fabs(z.zetan - zn) < 1e-9 * zn);
	dtxn_rng_seed(&r, 99);
	for (unsigned i = 0; i < draws; i++) {
		uint64_t k = dtxn_zipf_next(&z, &r);

		assert_true(k < n);
		r0 += k == 0;
		r1 += k == 1;
		r10 += k == 10;
	}
	/* P(rank k) = (k+1)^-theta / zeta(n). */
	const double p0 = 1.0 / zn, p1 = pow(2.0, -theta) / zn;

	assert_true(fabs(r0 / (double)draws - p0) < 0.03 * p0);
	assert_true(fabs(r1 / (double)draws - p1) < 0.03 * p1);
	assert_true(r0 > r1 && r1 > r10);

	/* Large n: zeta from the Euler-Maclaurin tail matches the plain sum. */
	const uint64_t big = 3000000;

	assert_int_equal(dtxn_zipf_init(&z, big, theta), 0);
	const double zb = zeta_loop(big, theta);

	assert_true(fabs(z.zetan - zb) < 1e-9 * zb);
	assert_int_equal(dtxn_zipf_init(&z, big, 0.5), 0);
	assert_true(fabs(z.zetan - zeta_loop(big, 0.5)) < 1e-9 * z.zetan);
	/* 2^40 keys: still starts at once. */
	const uint64_t t0 = dtxn_now_ns();

	assert_int_equal(dtxn_zipf_init(&z, UINT64_C(1) << 40, theta), 0);
	assert_true(dtxn_now_ns() - t0 < UINT64_C(2000000000));
	assert_true(z.zetan > zb);
	for (int i = 0; i < 10000; i++)
		assert_true(dtxn_zipf_next(&z, &r) < (UINT64_C(1) << 40));

	/* theta 0: uniform. */
	uint64_t hist[10] = { 0 };

	assert_int_equal(dtxn_zipf_init(&z, 10, 0.0), 0);
	for (unsigned i = 0; i < draws; i++) {
		uint64_t k = dtxn_zipf_next(&z, &r);

		assert_true(k < 10);
		hist[k]++;
	}
	for (unsigned i = 0; i < 10; i++)
		assert_true(fabs((double)hist[i] - draws / 10.0) < 0.02 * draws / 10.0);

	/* Tiny n. */
	assert_int_equal(dtxn_zipf_init(&z, 1, theta), 0);
	for (int i = 0; i < 100; i++)
		assert_int_equal(dtxn_zipf_next(&z, &r), 0);
	assert_int_equal(dtxn_zipf_init(&z, 2, theta), 0);
	unsigned ones = 0;

	for (int i = 0; i < 10000; i++) {
		uint64_t k = dtxn_zipf_next(&z, &r);

		assert_true(k < 2);
		ones += k;
	}
	/* P(1) = 2^-theta / (1 + 2^-theta) ~ 0.4983 */
	assert_true(fabs(ones / 10000.0 - pow(2, -theta) / (1 + pow(2, -theta))) < 0.03);
}

static void
test_nurand(void **state)
{
	struct dtxn_rng r;
	bool saw_lo = false, saw_hi = false;

	(void)state;
	dtxn_rng_seed(&r, 5);
	for (int i = 0; i < 200000; i++) {
		uint64_t v = dtxn_nurand(&r, 1023, 1, 3000, 259);

		assert_true(v >= 1 && v <= 3000);
		v = dtxn_nurand(&r, 255, 0, 999, 123);
		assert_true(v <= 999);
		saw_lo |= v == 0;
		saw_hi |= v == 999;
	}
	assert_true(saw_lo && saw_hi);
	/* Non-uniform: with C = 0 and A = 255 over [0, 999], values whose low
	 * 8 bits are all ones are the most frequent. */
	unsigned hist[1000] = { 0 };

	for (int i = 0; i < 500000; i++)
		hist[dtxn_nurand(&r, 255, 0, 999, 0)]++;
	assert_true(hist[255] > 2 * hist[256]);
}

/* ------------------------------------------------------------------ */
/* Options                                                            */
/* ------------------------------------------------------------------ */

static void
expect_opt_error(const struct dtxn_opt *o, void *conf, const char *value, const char *msg)
{
	char err[160] = "";

	if (dtxn_opt_set(o, conf, value, err, sizeof(err)) != -EINVAL)
		fail_msg("--%s '%s' was accepted", o->name, value);
	if (msg != NULL && strcmp(err, msg) != 0)
		fail_msg("--%s '%s': got \"%s\", want \"%s\"", o->name, value, err, msg);
	if (strstr(err, o->name) == NULL)
		fail_msg("--%s '%s': message \"%s\" does not name the option", o->name, value, err);
}

/* Every option of a benchmark: bounds accepted, beyond refused, junk refused. */
static void
check_all_opts(const char *bench)
{
	const struct dtxn_bench_ops *ops = dtxn_bench_find(bench);
	char buf[64];

	assert_non_null(ops);
	assert_true(ops->n_opts > 0);
	void *conf = calloc(1, ops->conf_size);

	assert_non_null(conf);
	for (unsigned i = 0; i < ops->n_opts; i++) {
		const struct dtxn_opt *o = &ops->opts[i];
		char err[160];

		expect_opt_error(o, conf, "", NULL);
		expect_opt_error(o, conf, "12x", NULL);
		expect_opt_error(o, conf, "x", NULL);
		expect_opt_error(o, conf, " 1", NULL);
		expect_opt_error(o, conf, "1 ", NULL);
		expect_opt_error(o, conf, "nan", NULL);
		expect_opt_error(o, conf, "-1", NULL);
		assert_int_equal(dtxn_opt_set(o, conf, NULL, err, sizeof(err)), -EINVAL);

		if (o->type == DTXN_OPT_U64) {
			uint64_t v;

			snprintf(buf, sizeof(buf), "%.0f", o->min);
			assert_int_equal(dtxn_opt_set(o, conf, buf, err, sizeof(err)), 0);
			memcpy(&v, (char *)conf + o->offset, sizeof(v));
			assert_int_equal(v, (uint64_t)o->min);
			snprintf(buf, sizeof(buf), "%.0f", o->max);
			assert_int_equal(dtxn_opt_set(o, conf, buf, err, sizeof(err)), 0);
			memcpy(&v, (char *)conf + o->offset, sizeof(v));
			assert_int_equal(v, (uint64_t)o->max);
			snprintf(buf, sizeof(buf), "%.0f", o->max + 1);
			expect_opt_error(o, conf, buf, NULL);
			if (o->min >= 1) {
				snprintf(buf, sizeof(buf), "%.0f", o->min - 1);
				expect_opt_error(o, conf, buf, NULL);
			}
			expect_opt_error(o, conf, "1.5", NULL);
			expect_opt_error(o, conf, "99999999999999999999999", NULL);
			/* A failed set leaves the value as it was. */
			memcpy(&v, (char *)conf + o->offset, sizeof(v));
			assert_int_equal(v, (uint64_t)o->max);
		} else {
			double v;

			snprintf(buf, sizeof(buf), "%.17g", o->max);
			assert_int_equal(dtxn_opt_set(o, conf, buf, err, sizeof(err)), 0);
			memcpy(&v, (char *)conf + o->offset, sizeof(v));
			assert_true(v == o->max);
			snprintf(buf, sizeof(buf), "%.17g", o->max + 0.5);
			expect_opt_error(o, conf, buf, NULL);
			snprintf(buf, sizeof(buf), "%.17g", o->min - 0.5);
			expect_opt_error(o, conf, buf, NULL);
			expect_opt_error(o, conf, "inf", NULL);
			expect_opt_error(o, conf, "1e999", NULL);
		}
	}
	free(conf);
}

static void
test_opts(void **state)
{
	const struct dtxn_bench_ops *kvs = dtxn_bench_find("kvs");
	struct dtxn_bench *b;

	(void)state;
	check_all_opts("kvs");
	check_all_opts("smallbank");

	assert_non_null(kvs);
	b = dtxn_bench_alloc(kvs, 1);
	assert_non_null(b);
	expect_opt_error(find_opt(kvs, "keys"), b->conf, "12x", "--keys: '12x' is not a number");
	expect_opt_error(find_opt(kvs, "theta"), b->conf, "1.5",
			 "--theta: 1.5 is out of range [0, 0.999]");
	expect_opt_error(find_opt(kvs, "keys"), b->conf, "0",
			 "--keys: 0 is out of range [1, 1099511627776]");
	expect_opt_error(find_opt(kvs, "keys"), b->conf, "-5", "--keys: '-5' is negative");
	expect_opt_error(find_opt(kvs, "write_ratio"), b->conf, "", "--write_ratio: empty value");
	set_opt(b, "keys", "1099511627776");
	assert_int_equal(conf_u64(b, "keys"), UINT64_C(1) << 40);
	set_opt(b, "theta", "0");
	set_opt(b, "theta", "0.5");
	dtxn_bench_free(b);
}

/* ------------------------------------------------------------------ */
/* Registry                                                           */
/* ------------------------------------------------------------------ */

static int fake_create(struct dtxn_bench *b) { (void)b; return 0; }
static int fake_define(struct dtxn_bench *b, struct dtxn_db *db);
static int fake_load(struct dtxn_bench *b, struct dtxn_db *db) { (void)b; (void)db; return 0; }
static unsigned fake_pick(struct dtxn_bench *b, struct dtxn_rng *r);
static int fake_run(struct dtxn_bench_ctx *ctx, unsigned type);
static int
fake_check(struct dtxn_bench *b, struct dtxn_db *db, struct dtxn_bench_ctx *const *ctxs,
	   unsigned n, struct dtxn_report *r)
{
	(void)b; (void)db; (void)ctxs; (void)n; (void)r;
	return 0;
}

static const char *const fake_types[] = { "a", "b" };

static const struct dtxn_bench_ops fake_ops = {
	.name = "ut_fake", .desc = "runner test", .n_types = 2, .type_names = fake_types,
	.create = fake_create, .define = fake_define, .load = fake_load,
	.pick = fake_pick, .run = fake_run, .check = fake_check,
};

static void
test_registry(void **state)
{
	char list[256];
	bool seen_kvs = false, seen_sb = false;

	(void)state;
	assert_non_null(dtxn_bench_find("kvs"));
	assert_non_null(dtxn_bench_find("smallbank"));
	assert_null(dtxn_bench_find("nope"));
	assert_null(dtxn_bench_find(NULL));
	dtxn_bench_list(list, sizeof(list));
	assert_non_null(strstr(list, "kvs"));
	assert_non_null(strstr(list, "smallbank"));
	for (unsigned i = 0; i < dtxn_bench_count(); i++) {
		const struct dtxn_bench_ops *o = dtxn_bench_at(i);

		assert_non_null(o);
		seen_kvs |= strcmp(o->name, "kvs") == 0;
		seen_sb |= strcmp(o->name, "smallbank") == 0;
	}
	assert_true(seen_kvs && seen_sb);
	assert_null(dtxn_bench_at(dtxn_bench_count()));

	/* Registration checks. */
	assert_int_equal(dtxn_bench_register(NULL), -EINVAL);
	assert_int_equal(dtxn_bench_register(dtxn_bench_find("kvs")), -EEXIST);
	struct dtxn_bench_ops bad = fake_ops;

	bad.name = "ut_bad";
	bad.run = NULL;
	assert_int_equal(dtxn_bench_register(&bad), -EINVAL);
	bad = fake_ops;
	bad.name = "ut_bad";
	bad.n_types = 0;
	assert_int_equal(dtxn_bench_register(&bad), -EINVAL);
	assert_null(dtxn_bench_find("ut_bad"));
	unsigned before = dtxn_bench_count();

	assert_int_equal(dtxn_bench_register(&fake_ops), 0);
	assert_int_equal(dtxn_bench_count(), before + 1);
	assert_ptr_equal(dtxn_bench_find("ut_fake"), &fake_ops);

	/* alloc fills the defaults from the option table. */
	const struct dtxn_bench_ops *kvs = dtxn_bench_find("kvs");
	struct dtxn_bench *b = dtxn_bench_alloc(kvs, 77);

	assert_non_null(b);
	assert_ptr_equal(b->ops, kvs);
	assert_null(b->priv);
	assert_int_equal(b->seed, 77);
	assert_int_equal(conf_u64(b, "keys"), 1000000);
	assert_int_equal(conf_u64(b, "value_size"), 40);
	assert_int_equal(conf_u64(b, "write_ratio"), 25);
	assert_int_equal(conf_u64(b, "records"), 1);
	double theta;

	memcpy(&theta, (char *)b->conf + find_opt(kvs, "theta")->offset, sizeof(theta));
	assert_true(theta == 0.99);
	dtxn_bench_free(b);

	b = dtxn_bench_alloc(dtxn_bench_find("smallbank"), 1);
	assert_non_null(b);
	assert_int_equal(conf_u64(b, "accounts"), 100000);
	assert_int_equal(conf_u64(b, "hot_percent"), 4);
	assert_int_equal(conf_u64(b, "hot_txn_percent"), 90);
	dtxn_bench_free(b);

	assert_null(dtxn_bench_alloc(NULL, 1));
	assert_int_equal(rte_errno, EINVAL);
	dtxn_bench_free(NULL);
}

/* ------------------------------------------------------------------ */
/* KVS and SmallBank generators and conf checks                       */
/* ------------------------------------------------------------------ */

static void
test_smallbank_mix(void **state)
{
	static const double want[6] = { 15, 15, 15, 25, 15, 15 };
	const struct dtxn_bench_ops *ops = dtxn_bench_find("smallbank");
	struct dtxn_bench *b = dtxn_bench_alloc(ops, 3);
	uint64_t hist[6] = { 0 };
	struct dtxn_rng r;
	const unsigned draws = 1000000;

	(void)state;
	assert_non_null(b);
	assert_int_equal(ops->n_types, 6);
	assert_string_equal(ops->type_names[3], "send_payment");
	assert_int_equal(ops->create(b), 0);
	dtxn_rng_seed(&r, 11);
	for (unsigned i = 0; i < draws; i++) {
		unsigned t = ops->pick(b, &r);

		assert_true(t < 6);
		hist[t]++;
	}
	for (unsigned t = 0; t < 6; t++) {
		double got = 100.0 * hist[t] / draws;

		if (fabs(got - want[t]) > 0.01 * want[t])
			fail_msg("%s: %.3f%%, want %.0f%%", ops->type_names[t], got, want[t]);
	}
	dtxn_bench_free(b);
}

static void
test_kvs_mix(void **state)
{
	const struct dtxn_bench_ops *ops = dtxn_bench_find("kvs");
	static const char *const ratios[] = { "0", "25", "80", "100" };
	struct dtxn_rng r;

	(void)state;
	assert_int_equal(ops->n_types, 2);
	assert_string_equal(ops->type_names[0], "read");
	assert_string_equal(ops->type_names[1], "update");
	dtxn_rng_seed(&r, 12);
	for (unsigned k = 0; k < RTE_DIM(ratios); k++) {
		struct dtxn_bench *b = dtxn_bench_alloc(ops, 3);
		unsigned updates = 0;
		const unsigned draws = 200000;

		assert_non_null(b);
		set_opt(b, "keys", "1000");
		set_opt(b, "write_ratio", ratios[k]);
		assert_int_equal(ops->create(b), 0);
		for (unsigned i = 0; i < draws; i++)
			updates += ops->pick(b, &r) == 1;
		const double want = atof(ratios[k]) / 100.0;

		assert_true(fabs(updates / (double)draws - want) < 0.01);
		dtxn_bench_free(b);
	}
}

static void
test_create_rejects(void **state)
{
	const struct dtxn_bench_ops *sb = dtxn_bench_find("smallbank");
	const struct dtxn_bench_ops *kvs = dtxn_bench_find("kvs");
	struct dtxn_bench *b;

	(void)state;
	/* 4% of 10 accounts is 0 hot accounts, yet 90% of txns want the hot set. */
	b = dtxn_bench_alloc(sb, 1);
	set_opt(b, "accounts", "10");
	assert_int_equal(sb->create(b), -EINVAL);
	assert_non_null(strstr(b->err, "hot"));
	assert_null(b->priv);
	/* ... fine when no txn uses the hot set. */
	set_opt(b, "hot_txn_percent", "0");
	assert_int_equal(sb->create(b), 0);
	dtxn_bench_free(b);

	/* 1 hot account cannot serve two distinct accounts. */
	b = dtxn_bench_alloc(sb, 1);
	set_opt(b, "accounts", "50");
	set_opt(b, "hot_percent", "2");
	assert_int_equal(sb->create(b), -EINVAL);
	set_opt(b, "hot_percent", "4");
	assert_int_equal(sb->create(b), 0);
	dtxn_bench_free(b);

	/* A conf filled without the parser is still range-checked. */
	b = dtxn_bench_alloc(sb, 1);
	memset((char *)b->conf + find_opt(sb, "hot_percent")->offset, 0xff, sizeof(uint64_t));
	assert_int_equal(sb->create(b), -EINVAL);
	assert_non_null(strstr(b->err, "hot_percent"));
	dtxn_bench_free(b);

	/* KVS: more records per txn than keys. */
	b = dtxn_bench_alloc(kvs, 1);
	set_opt(b, "keys", "3");
	set_opt(b, "records", "5");
	assert_int_equal(kvs->create(b), -EINVAL);
	assert_non_null(strstr(b->err, "records"));
	set_opt(b, "records", "3");
	assert_int_equal(kvs->create(b), 0);
	dtxn_bench_free(b);

	b = dtxn_bench_alloc(kvs, 1);
	memset((char *)b->conf + find_opt(kvs, "value_size")->offset, 0, sizeof(uint64_t));
	assert_int_equal(kvs->create(b), -EINVAL);
	assert_non_null(strstr(b->err, "value_size"));
	dtxn_bench_free(b);
}

/* ------------------------------------------------------------------ */
/* theta on SmallBank accounts and TPC-C items (issues 14 and 15)     */
/* ------------------------------------------------------------------ */

/* |got - want| within @p rel of want; names the figure when not. */
static void
assert_share(const char *what, double got, double want, double rel)
{
	if (!(fabs(got - want) <= rel * want))
		fail_msg("%s: %.5f, Zipf predicts %.5f (tolerance %.0f%%)", what, got, want,
			 rel * 100.0);
}

static void
test_theta_options(void **state)
{
	static const char *const benches[] = { "smallbank", "tpcc" };

	(void)state;
	for (unsigned k = 0; k < RTE_DIM(benches); k++) {
		const struct dtxn_bench_ops *ops = dtxn_bench_find(benches[k]);
		const struct dtxn_opt *o = find_opt(ops, "theta");
		struct dtxn_bench *b = dtxn_bench_alloc(ops, 1);
		double v;

		assert_non_null(o);
		assert_non_null(b);
		/* off by default: the spec's rule */
		assert_true(o->def == DTXN_OPT_UNSET);
		memcpy(&v, (char *)b->conf + o->offset, sizeof(v));
		assert_true(v == DTXN_OPT_UNSET);
		/* no input reaches the default, nor 1 and beyond */
		expect_opt_error(o, b->conf, "-1", "--theta: -1 is out of range [0, 0.999]");
		expect_opt_error(o, b->conf, "-0.1", "--theta: -0.1 is out of range [0, 0.999]");
		expect_opt_error(o, b->conf, "1", "--theta: 1 is out of range [0, 0.999]");
		set_opt(b, "theta", "0.99");
		memcpy(&v, (char *)b->conf + o->offset, sizeof(v));
		assert_true(v == 0.99);
		set_opt(b, "theta", "0");
		/* a conf filled without the parser is still checked */
		v = 1.5;
		memcpy((char *)b->conf + o->offset, &v, sizeof(v));
		assert_int_equal(ops->create(b), -EINVAL);
		assert_non_null(strstr(b->err, "theta"));
		dtxn_bench_free(b);
	}

	/* An off-by-default option whose min lets an input reach it is refused. */
	struct dtxn_opt bad_opt = { "ut_theta", DTXN_OPT_DOUBLE, 0, DTXN_OPT_UNSET, -2, 1, "x" };
	struct dtxn_bench_ops bad = fake_ops;

	bad.name = "ut_unset";
	bad.opts = &bad_opt;
	bad.n_opts = 1;
	bad.conf_size = sizeof(double);
	assert_int_equal(dtxn_bench_register(&bad), -EINVAL);
	assert_null(dtxn_bench_find("ut_unset"));

	/* A U64 option off by default whose max reaches its marker is refused too. */
	struct dtxn_opt bad_u64 = { "ut_n", DTXN_OPT_U64, 0, DTXN_OPT_UNSET, 0, 0x1p64, "x" };

	bad.opts = &bad_u64;
	bad.conf_size = sizeof(uint64_t);
	assert_int_equal(dtxn_bench_register(&bad), -EINVAL);
	assert_null(dtxn_bench_find("ut_unset"));
}

/* DTXN_OPT_NAME options: a name is stored as its index; the table must
 * list max + 1 names, min 0 and a default among them. */
static void
test_opt_name(void **state)
{
	static const char *const names[] = { "alpha", "beta", NULL };
	struct dtxn_opt o = { "ut_pick", DTXN_OPT_NAME, 0, 1, 0, 1, "x", names };
	struct dtxn_bench_ops bad = fake_ops;
	uint64_t v = 7;
	char err[160];

	(void)state;
	assert_int_equal(dtxn_opt_set(&o, &v, "alpha", err, sizeof(err)), 0);
	assert_int_equal(v, 0);
	assert_int_equal(dtxn_opt_set(&o, &v, "beta", err, sizeof(err)), 0);
	assert_int_equal(v, 1);
	expect_opt_error(&o, &v, "gamma", "--ut_pick: 'gamma' is not one of alpha, beta");
	expect_opt_error(&o, &v, "1", "--ut_pick: '1' is not one of alpha, beta");
	assert_int_equal(v, 1);
	assert_string_equal(dtxn_opt_name(&o, 0), "alpha");
	assert_null(dtxn_opt_name(&o, 2));

	bad.name = "ut_name";
	bad.opts = &o;
	bad.n_opts = 1;
	bad.conf_size = sizeof(uint64_t);
	o.max = 2; /* more than the names */
	assert_int_equal(dtxn_bench_register(&bad), -EINVAL);
	o.max = 1;
	o.names = NULL;
	assert_int_equal(dtxn_bench_register(&bad), -EINVAL);
	o.names = names;
	o.def = DTXN_OPT_UNSET;
	assert_int_equal(dtxn_bench_register(&bad), -EINVAL);
	assert_null(dtxn_bench_find("ut_name"));
}

static void
test_theta_smallbank(void **state)
{
	const struct dtxn_bench_ops *ops = dtxn_bench_find("smallbank");
	const uint64_t n = 100000, hot = n * 4 / 100;
	const double theta = 0.99;
	const unsigned draws = 1000000;
	struct dtxn_rng r;
	struct dtxn_bench *b;
	const struct sb_priv *p;
	unsigned a0 = 0, a1 = 0, b0 = 0, a_hot = 0, a_low = 0;

	(void)state;
	b = dtxn_bench_alloc(ops, 1);
	assert_non_null(b);
	set_opt(b, "theta", "0.99");
	assert_int_equal(ops->create(b), 0);
	p = b->priv;
	assert_true(p->skewed);
	dtxn_rng_seed(&r, 2024);
	for (unsigned i = 0; i < draws; i++) {
		uint64_t x, y;

		smallbank_pick_accounts(p, &r, &x, &y);
		assert_true(x < n && y < n && x != y);
		a0 += x == 0;
		a1 += x == 1;
		b0 += y == 0;
		a_hot += x < hot;
		a_low += x < n / 2;
	}
	/* P(account k) = (k+1)^-theta / zeta(n): about 8% on account 0 */
	const double zn = zeta_loop(n, theta), zh = zeta_loop(hot, theta);
	const double p0 = 1.0 / zn;
	/* the second account is redrawn while it equals the first:
	 * P(b = 0) = sum_{k != 0} P(a = k) p0 / (1 - P(a = k)) */
	double pb0 = 0;

	for (uint64_t k = 1; k < n; k++) {
		const double pk = pow((double)(k + 1), -theta) / zn;

		pb0 += pk * p0 / (1.0 - pk);
	}
	assert_share("account 0", a0 / (double)draws, p0, 0.03);
	assert_share("account 1", a1 / (double)draws, pow(2.0, -theta) / zn, 0.03);
	assert_share("second account 0", b0 / (double)draws, pb0, 0.03);
	/* the hottest 4% of accounts: zeta(4000) / zeta(100000), about 72% */
	assert_share("top 4% of accounts", a_hot / (double)draws, zh / zn, 0.01);
	assert_share("lower half", a_low / (double)draws, zeta_loop(n / 2, theta) / zn, 0.01);
	dtxn_bench_free(b);

	/* theta 0: uniform over all accounts (the hot set is not used) */
	b = dtxn_bench_alloc(ops, 1);
	set_opt(b, "theta", "0");
	assert_int_equal(ops->create(b), 0);
	a_hot = 0;
	for (unsigned i = 0; i < draws; i++) {
		uint64_t x, y;

		smallbank_pick_accounts(b->priv, &r, &x, &y);
		assert_true(x < n && y < n && x != y);
		a_hot += x < hot;
	}
	assert_share("theta 0: first 4% of accounts", a_hot / (double)draws, 0.04, 0.03);
	dtxn_bench_free(b);

	/* not set: the spec's hot set, 90% of txns on 4% of the accounts */
	b = dtxn_bench_alloc(ops, 1);
	assert_int_equal(ops->create(b), 0);
	assert_false(((const struct sb_priv *)b->priv)->skewed);
	a_hot = 0;
	for (unsigned i = 0; i < draws; i++) {
		uint64_t x, y;

		smallbank_pick_accounts(b->priv, &r, &x, &y);
		assert_true(x < n && y < n && x != y);
		a_hot += x < hot && y < hot;
	}
	assert_share("hot set", a_hot / (double)draws, 0.9 + 0.1 * 0.04 * (hot - 1) / (n - 1), 0.01);
	dtxn_bench_free(b);
}

static void
test_theta_tpcc_items(void **state)
{
	const struct dtxn_bench_ops *ops = dtxn_bench_find("tpcc");
	const double theta = 0.99;
	const unsigned draws = 1000000;
	struct dtxn_rng r;
	struct dtxn_bench *b;
	const struct tpcc_priv *p;
	unsigned i1 = 0, i2 = 0, top = 0;

	(void)state;
	b = dtxn_bench_alloc(ops, 1);
	assert_non_null(b);
	set_opt(b, "tpcc_scale", "10");
	set_opt(b, "theta", "0.99");
	assert_int_equal(ops->create(b), 0);
	p = b->priv;
	assert_int_equal(p->items, 10000);
	assert_true(p->item_skewed);
	dtxn_rng_seed(&r, 2025);
	for (unsigned i = 0; i < draws; i++) {
		uint32_t it = tpcc_pick_item(p, &r);

		assert_true(it >= 1 && it <= p->items);
		i1 += it == 1;
		i2 += it == 2;
		top += it <= 100;
	}
	/* item k is rank k - 1: P = k^-theta / zeta(items), about 10% on item 1 */
	const double zn = zeta_loop(p->items, theta);

	assert_share("item 1", i1 / (double)draws, 1.0 / zn, 0.03);
	assert_share("item 2", i2 / (double)draws, pow(2.0, -theta) / zn, 0.03);
	/* ranks 0 and 1 are exact in Gray et al.'s method; beyond, it draws
	 * from a continuous approximation of the CDF: the first 100 of 10^4
	 * items get 53.0% of the draws against the exact 51.8% */
	assert_share("items 1..100", top / (double)draws, zeta_loop(100, theta) / zn, 0.05);
	dtxn_bench_free(b);

	/* not set: NURand(8191, 1, items), whose most frequent item gets
	 * at most E[2^popcount(b)] / 8192 < 2.4% of the draws, and item 1 is
	 * not singled out (Zipf's share is about 10%) */
	b = dtxn_bench_alloc(ops, 1);
	set_opt(b, "tpcc_scale", "10");
	assert_int_equal(ops->create(b), 0);
	p = b->priv;
	assert_false(p->item_skewed);
	i1 = 0;
	for (unsigned i = 0; i < draws; i++) {
		uint32_t it = tpcc_pick_item(p, &r);

		assert_true(it >= 1 && it <= p->items);
		i1 += it == 1;
	}
	assert_true(i1 / (double)draws < 0.03);
	dtxn_bench_free(b);
}

/* ------------------------------------------------------------------ */
/* On a cluster: the coordinator loop and the invariants              */
/* ------------------------------------------------------------------ */

#define UT_COORDS 4

struct ut_cluster {
	struct dtxn_fabric *f;
	struct dtxn_db *db;
	struct dtxn_worker *w;
	struct dtxn_bench *b;
	struct dtxn_run_stats *stats;
	struct dtxn_bench_ctx ctx[UT_COORDS];
	struct dtxn_bench_ctx *ctxp[UT_COORDS];
	struct dtxn_report *rep;
};

/* Builds a one-MN shm cluster with ford and loads @p b. false: skip. */
static bool
cluster_up(struct ut_cluster *u, struct dtxn_bench *b)
{
	struct dtxn_db_conf dc = {
		.size = sizeof(dc), .protocol = "ford", .isolation = DTXN_ISO_SR,
		.n_mn = 1, .n_replicas = 1, .n_coords = UT_COORDS,
	};
	struct dtxn_fabric_conf fc = {
		.size = sizeof(fc), .driver = "shm", .n_mn = 1, .n_cn = 1,
		.socket_id = SOCKET_ID_ANY, .name = "utb",
	};
	uint64_t region = 0;
	static unsigned gen;
	char name[16];

	memset(u, 0, sizeof(*u));
	u->b = b;
	u->db = dtxn_db_create(&dc);
	if (u->db == NULL) {
		print_message("skipping: no ford protocol (%s)\n", rte_strerror(rte_errno));
		return false;
	}
	if (b->ops->define(b, u->db) != 0)
		fail_msg("define: %s", b->err);
	assert_int_equal(dtxn_db_layout(u->db, &region), 0);
	fc.mn_region_size = region;
	snprintf(name, sizeof(name), "utb%u", gen++);
	fc.name = name;
	dtxn_nic_model_none(&fc.nic);
	u->f = dtxn_fabric_open(&fc);
	if (u->f == NULL) {
		print_message("skipping: no shm fabric (%s)\n", rte_strerror(rte_errno));
		dtxn_db_destroy(u->db);
		return false;
	}
	assert_int_equal(dtxn_db_attach(u->db, u->f), 0);
	if (b->ops->load(b, u->db) != 0)
		fail_msg("load: %s", b->err);
	/* Node ids: MNs first (0), then CNs: the CN is node 1. */
	u->w = dtxn_worker_create(u->db, 1, 0, UT_COORDS, SOCKET_ID_ANY);
	assert_non_null(u->w);
	u->stats = rte_zmalloc("ut_stats", sizeof(*u->stats), 0);
	assert_non_null(u->stats);
	dtxn_run_stats_reset(u->stats, b->ops->n_types);
	u->rep = rte_zmalloc("ut_report", sizeof(*u->rep), 0);
	assert_non_null(u->rep);
	return true;
}

/* Runs UT_COORDS coordinators, each to @p quota finished txns. */
static void
cluster_run(struct ut_cluster *u, uint64_t quota)
{
	for (unsigned i = 0; i < UT_COORDS; i++) {
		struct dtxn_bench_ctx *c = &u->ctx[i];

		c->bench = u->b;
		c->stats = u->stats;
		c->quota = quota;
		dtxn_rng_seed(&c->rng, u->b->seed * 1000 + i);
		u->ctxp[i] = c;
		assert_non_null(dtxn_coord_create(u->w, i, dtxn_bench_coord_main, c));
	}
	assert_int_equal(dtxn_sched_run_lc(dtxn_worker_sched(u->w)), 0);
	for (unsigned i = 0; i < UT_COORDS; i++)
		assert_true(u->ctx[i].finished);
}

static void
cluster_down(struct ut_cluster *u)
{
	dtxn_worker_destroy(u->w);
	dtxn_db_destroy(u->db);
	dtxn_fabric_close(u->f);
	rte_free(u->stats);
	rte_free(u->rep);
}

static void
expect_checks_pass(const struct dtxn_report *r, unsigned want)
{
	assert_int_equal(r->n_checks, want);
	for (unsigned i = 0; i < r->n_checks; i++) {
		print_message("  %s: %s (%s)\n", r->checks[i].name,
			      r->checks[i].ok ? "ok" : "FAILED", r->checks[i].detail);
		assert_true(r->checks[i].ok);
	}
}

/*
 * The fake benchmark: type a or b; run() draws one number, and fails its
 * first two attempts of each transaction with a lock conflict; a draw
 * divisible by 5 rolls back. It records whether every retry saw the same
 * draw as the first attempt.
 */
struct fake_state {
	uint64_t last_draw;
	unsigned attempt;
	unsigned replay_mismatch;
	uint64_t rollbacks, commits;
};
static struct fake_state g_fake[UT_COORDS];

static int
fake_define(struct dtxn_bench *b, struct dtxn_db *db)
{
	struct dtxn_table_def def = { .id = 0, .name = "fake", .value_size = 8, .max_keys = 16 };

	(void)b;
	return dtxn_db_add_table(db, &def);
}

static unsigned
fake_pick(struct dtxn_bench *b, struct dtxn_rng *r)
{
	(void)b;
	return (unsigned)dtxn_rng_range(r, 2);
}

static int
fake_run(struct dtxn_bench_ctx *ctx, unsigned type)
{
	struct fake_state *s = &g_fake[dtxn_coord_gid(ctx->coord)];
	uint64_t draw = dtxn_rng_next(&ctx->rng);

	(void)type;
	if (s->attempt > 0 && draw != s->last_draw)
		s->replay_mismatch++;
	s->last_draw = draw;
	if (s->attempt < 2) {
		s->attempt++;
		return DTXN_ABORT_LOCK_CONFLICT;
	}
	s->attempt = 0;
	if (draw % 5 == 0) {
		s->rollbacks++;
		return DTXN_BENCH_ROLLBACK;
	}
	s->commits++;
	return DTXN_OK;
}

static void
test_runner(void **state)
{
	struct dtxn_bench *b;
	struct ut_cluster u;
	const uint64_t quota = 200;

	(void)state;
	if (dtxn_bench_find("ut_fake") == NULL)
		assert_int_equal(dtxn_bench_register(&fake_ops), 0);
	b = dtxn_bench_alloc(&fake_ops, 5);
	assert_non_null(b);
	if (!cluster_up(&u, b)) {
		dtxn_bench_free(b);
		skip();
	}
	memset(g_fake, 0, sizeof(g_fake));
	cluster_run(&u, quota);

	uint64_t commits = 0, attempts = 0, rollbacks = 0, conflicts = 0, lat = 0, done = 0;
	uint64_t fake_rb = 0;

	for (unsigned t = 0; t < 2; t++) {
		const struct dtxn_txn_stats *ts = &u.stats->type[t];

		commits += ts->commits;
		attempts += ts->attempts;
		rollbacks += ts->rollbacks;
		conflicts += ts->aborts[DTXN_ABORT_LOCK_CONFLICT];
		lat += ts->lat.count;
		assert_true(ts->commits > 0);
	}
	for (unsigned i = 0; i < UT_COORDS; i++) {
		assert_int_equal(g_fake[i].replay_mismatch, 0);
		assert_int_equal(u.ctx[i].done, quota);
		assert_int_equal(g_fake[i].commits + g_fake[i].rollbacks, quota);
		done += u.ctx[i].done;
		fake_rb += g_fake[i].rollbacks;
	}
	assert_int_equal(commits + rollbacks, UT_COORDS * quota);
	assert_int_equal(rollbacks, fake_rb);
	assert_true(rollbacks > 0);
	assert_int_equal(done, commits + rollbacks);
	assert_int_equal(conflicts, 2 * done);
	assert_int_equal(attempts, commits + rollbacks + conflicts);
	assert_int_equal(lat, commits);
	cluster_down(&u);
	dtxn_bench_free(b);
}

/*
 * --retry fresh: an aborted transaction is given up, not retried: every
 * attempt after an abort is a new transaction with new inputs (the fake
 * sees a new draw each time), the quota still counts finished ones.
 */
static void
test_runner_fresh(void **state)
{
	struct dtxn_bench *b;
	struct ut_cluster u;
	const uint64_t quota = 100;
	uint64_t commits = 0, rollbacks = 0, conflicts = 0, attempts = 0;

	(void)state;
	assert_int_equal(dtxn_bench_retry_parse("same"), DTXN_RETRY_SAME);
	assert_int_equal(dtxn_bench_retry_parse("fresh"), DTXN_RETRY_FRESH);
	assert_int_equal(dtxn_bench_retry_parse("again"), -EINVAL);
	assert_int_equal(dtxn_bench_retry_parse(NULL), -EINVAL);
	assert_string_equal(dtxn_bench_retry_name(DTXN_RETRY_FRESH), "fresh");
	assert_null(dtxn_bench_retry_name((enum dtxn_bench_retry)7));
	if (dtxn_bench_find("ut_fake") == NULL)
		assert_int_equal(dtxn_bench_register(&fake_ops), 0);
	b = dtxn_bench_alloc(&fake_ops, 6);
	assert_non_null(b);
	assert_int_equal(b->retry, DTXN_RETRY_SAME);
	b->retry = DTXN_RETRY_FRESH;
	if (!cluster_up(&u, b)) {
		dtxn_bench_free(b);
		skip();
	}
	memset(g_fake, 0, sizeof(g_fake));
	cluster_run(&u, quota);
	for (unsigned t = 0; t < 2; t++) {
		commits += u.stats->type[t].commits;
		rollbacks += u.stats->type[t].rollbacks;
		conflicts += u.stats->type[t].aborts[DTXN_ABORT_LOCK_CONFLICT];
		attempts += u.stats->type[t].attempts;
	}
	for (unsigned i = 0; i < UT_COORDS; i++) {
		assert_int_equal(u.ctx[i].done, quota);
		/* the two calls after each finished one follow an abort: new inputs each time */
		assert_int_equal(g_fake[i].replay_mismatch, 2 * quota);
	}
	assert_int_equal(commits + rollbacks, UT_COORDS * quota);
	assert_int_equal(conflicts, 2 * UT_COORDS * quota);
	assert_int_equal(attempts, commits + rollbacks + conflicts);
	cluster_down(&u);
	dtxn_bench_free(b);
}

static void
test_kvs_run(void **state)
{
	const struct dtxn_bench_ops *ops = dtxn_bench_find("kvs");
	struct dtxn_bench *b = dtxn_bench_alloc(ops, 21);
	struct ut_cluster u;

	(void)state;
	set_opt(b, "keys", "2000");
	set_opt(b, "records", "4");
	set_opt(b, "write_ratio", "50");
	set_opt(b, "value_size", "64");
	assert_int_equal(ops->create(b), 0);
	if (!cluster_up(&u, b)) {
		dtxn_bench_free(b);
		skip();
	}
	/* Right after load: counters all 0. */
	assert_int_equal(ops->check(b, u.db, u.ctxp, 0, u.rep), 0);
	expect_checks_pass(u.rep, 3);
	u.rep->n_checks = 0;

	cluster_run(&u, 300);
	int64_t updated = 0;

	for (unsigned i = 0; i < UT_COORDS; i++)
		updated += u.ctx[i].acc[0];
	assert_int_equal(updated, 4 * (int64_t)u.stats->type[1].commits);
	assert_true(u.stats->type[0].commits > 0 && u.stats->type[1].commits > 0);
	assert_int_equal(ops->check(b, u.db, u.ctxp, UT_COORDS, u.rep), 0);
	expect_checks_pass(u.rep, 3);

	/* The check notices a lost update. */
	u.rep->n_checks = 0;
	u.ctx[0].acc[0]++;
	assert_int_equal(ops->check(b, u.db, u.ctxp, UT_COORDS, u.rep), 0);
	assert_false(u.rep->checks[0].ok);
	cluster_down(&u);
	dtxn_bench_free(b);
}

/* Counts the records dtxn_db_scan() visits and those whose id is odd. */
static int
count_odd(uint64_t key, const void *value, void *arg)
{
	uint64_t *n = arg;

	(void)value;
	n[0]++;
	n[1] += dtxn_key_id(key) & 1;
	return 0;
}

/* A "kvs" bench of @p keys records split over two tables (`tables` 2). */
static struct dtxn_bench *
kvs_split_bench(const char *keys)
{
	const struct dtxn_bench_ops *ops = dtxn_bench_find("kvs");
	struct dtxn_bench *b = dtxn_bench_alloc(ops, 5);

	set_opt(b, "keys", keys);
	set_opt(b, "tables", "2");
	assert_int_equal(ops->create(b), 0);
	return b;
}

/* @p b's tables in a new 2-MN FORD db (no fabric) whose workers get @p cache
 * address-cache entries; NULL without the ford protocol (the caller skips). */
static struct dtxn_db *
kvs_split_db(struct dtxn_bench *b, uint32_t cache)
{
	struct dtxn_db_conf dc = {
		.size = sizeof(dc), .protocol = "ford", .isolation = DTXN_ISO_SR,
		.n_mn = 2, .n_replicas = 1, .n_coords = 1, .addr_cache_entries = cache,
	};
	struct dtxn_db *db = dtxn_db_create(&dc);

	if (db != NULL)
		assert_int_equal(b->ops->define(b, db), 0);
	return db;
}

/* `tables` N (CREST's YCSB split, doc/guides/benchmarks.md "KVS"): record
 * i in table i % N, "kvs0".."kvs<N-1>", table t's primary on MN t (the
 * default placement), so key i's primary is MN i % N; a run keeps the
 * invariants, each record in its table. */
static void
test_kvs_split(void **state)
{
	const struct dtxn_bench_ops *ops = dtxn_bench_find("kvs");
	struct dtxn_bench *b = kvs_split_bench("1001");
	struct dtxn_db *db = kvs_split_db(b, 0);
	const struct dtxn_catalog *cat;
	struct ut_cluster u;
	uint64_t n[2];

	(void)state;
	if (db == NULL) {
		dtxn_bench_free(b);
		skip();
	}
	cat = dtxn_db_catalog(db);
	assert_int_equal(cat->n_tables, 2);
	assert_string_equal(cat->tables[0].def.name, "kvs0");
	assert_string_equal(cat->tables[1].def.name, "kvs1");
	assert_int_equal(cat->tables[0].def.max_keys, 501); /* ids 0, 2, .. 1000 */
	assert_int_equal(cat->tables[1].def.max_keys, 500); /* ids 1, 3, .. 999 */
	assert_int_equal(cat->tables[0].mn[0], 0);
	assert_int_equal(cat->tables[1].mn[0], 1);
	dtxn_db_destroy(db);
	dtxn_bench_free(b);

	/* more tables than keys: one line */
	b = dtxn_bench_alloc(ops, 5);
	set_opt(b, "keys", "2");
	set_opt(b, "tables", "3");
	assert_int_equal(ops->create(b), -EINVAL);
	assert_non_null(strstr(b->err, "tables (3) exceeds keys (2)"));
	dtxn_bench_free(b);

	/* a run over two tables (one MN here): every check holds, odd ids in kvs1 */
	b = dtxn_bench_alloc(ops, 21);
	set_opt(b, "keys", "2000");
	set_opt(b, "records", "4");
	set_opt(b, "write_ratio", "50");
	set_opt(b, "tables", "2");
	assert_int_equal(ops->create(b), 0);
	if (!cluster_up(&u, b)) {
		dtxn_bench_free(b);
		skip();
	}
	cluster_run(&u, 200);
	assert_true(u.stats->type[1].commits > 0);
	assert_int_equal(ops->check(b, u.db, u.ctxp, UT_COORDS, u.rep), 0);
	expect_checks_pass(u.rep, 3);
	for (uint32_t t = 0; t < 2; t++) {
		n[0] = n[1] = 0;
		assert_int_equal(dtxn_db_scan(u.db, t, count_odd, n), 0);
		assert_int_equal(n[0], 1000);
		assert_int_equal(n[1], t == 0 ? 0 : 1000);
	}
	cluster_down(&u);
	dtxn_bench_free(b);
}

/* --addr-cache 0 (DTXN_ADDR_CACHE_UNBOUNDED): each worker's address cache
 * has room for every record the tables can hold, and the memory estimate
 * counts it; a bounded size is taken as given, 0 is the 1 Mi default. */
static void
test_addr_cache_unbounded(void **state)
{
	struct dtxn_footprint unbounded = { 0 }, small = { 0 };
	struct dtxn_bench *b = kvs_split_bench("300001");
	struct dtxn_db *db = kvs_split_db(b, DTXN_ADDR_CACHE_UNBOUNDED);

	(void)state;
	if (db == NULL) {
		dtxn_bench_free(b);
		skip();
	}
	/* every record of both tables: 150001 + 150000 */
	assert_int_equal(dtxn_db_addr_cache_entries(db), 300001);
	assert_int_equal(dtxn_worker_footprint(db, 4, &unbounded), 0);
	dtxn_db_destroy(db);

	db = kvs_split_db(b, 1024);
	assert_non_null(db);
	assert_int_equal(dtxn_db_addr_cache_entries(db), 1024);
	assert_int_equal(dtxn_worker_footprint(db, 4, &small), 0);
	/* the estimate grows by at least the 300k entries' 32 B key slots */
	assert_true(unbounded.bytes > small.bytes + (300001 - 1024) * 32);
	dtxn_db_destroy(db);

	db = kvs_split_db(b, 0);
	assert_non_null(db);
	assert_int_equal(dtxn_db_addr_cache_entries(db), 1u << 20);
	dtxn_db_destroy(db);
	assert_int_equal(dtxn_db_addr_cache_entries(NULL), 0);
	dtxn_bench_free(b);
}

static void
test_smallbank_run(void **state)
{
	const struct dtxn_bench_ops *ops = dtxn_bench_find("smallbank");
	struct dtxn_bench *b = dtxn_bench_alloc(ops, 33);
	struct ut_cluster u;

	(void)state;
	set_opt(b, "accounts", "500");
	set_opt(b, "hot_percent", "4");
	assert_int_equal(ops->create(b), 0);
	if (!cluster_up(&u, b)) {
		dtxn_bench_free(b);
		skip();
	}
	assert_int_equal(ops->check(b, u.db, u.ctxp, 0, u.rep), 0);
	expect_checks_pass(u.rep, 2);
	u.rep->n_checks = 0;

	cluster_run(&u, 500);
	uint64_t commits, attempts, aborts;

	dtxn_run_stats_totals(u.stats, &commits, &attempts, &aborts);
	print_message("  commits=%" PRIu64 " attempts=%" PRIu64 " aborts=%" PRIu64
		      " rollbacks(send_payment)=%" PRIu64 "\n", commits, attempts, aborts,
		      u.stats->type[3].rollbacks);
	assert_int_equal(commits + u.stats->type[3].rollbacks, UT_COORDS * 500);
	for (unsigned t = 0; t < ops->n_types; t++)
		assert_true(u.stats->type[t].commits > 0);
	/* Deposits happened: the bank holds more than it started with. */
	int64_t deltas = 0;

	for (unsigned i = 0; i < UT_COORDS; i++)
		deltas += u.ctx[i].acc[0];
	assert_true(deltas != 0);
	assert_int_equal(ops->check(b, u.db, u.ctxp, UT_COORDS, u.rep), 0);
	expect_checks_pass(u.rep, 2);

	/* A changed balance breaks conservation. */
	u.rep->n_checks = 0;
	u.ctx[1].acc[0] += 1;
	assert_int_equal(ops->check(b, u.db, u.ctxp, UT_COORDS, u.rep), 0);
	assert_false(u.rep->checks[0].ok);
	assert_true(u.rep->checks[1].ok);
	cluster_down(&u);
	dtxn_bench_free(b);
}

/*
 * A dead coordinator's slots, READ from three MNs: the newest record (the
 * largest txn id with the magic set) is the one to settle; a slot never
 * written (no magic) counts for nothing, whatever its id word holds.
 */
static void
test_record_newest(void **state)
{
	struct dtxn_bench_record r[3];
	int64_t acc[4] = { 0 };

	(void)state;
	memset(r, 0, sizeof(r));
	/* MN 0: txn 5, an older batch that touched MN 0 */
	r[0] = (struct dtxn_bench_record){ .txn_id = 5, .acc = { 100, 1, 2, 3 }, .pending = 7,
					   .pending_idx = 1, .magic = DTXN_BENCH_RECORD_MAGIC };
	/* MN 1: txn 9, the last decisive batch (its chain to MN 0 was lost) */
	r[1] = (struct dtxn_bench_record){ .txn_id = 9, .acc = { 110, 1, 2, 3 }, .pending = -4,
					   .pending_idx = 2, .magic = DTXN_BENCH_RECORD_MAGIC };
	/* MN 2: never written (a larger id word, no magic) */
	r[2].txn_id = 12;
	r[2].acc[0] = 1000;
	assert_ptr_equal(dtxn_bench_record_newest(r, 3), &r[1]);
	assert_ptr_equal(dtxn_bench_record_newest(r, 1), &r[0]);
	assert_null(dtxn_bench_record_newest(&r[2], 1));
	assert_null(dtxn_bench_record_newest(NULL, 3));
	assert_null(dtxn_bench_record_newest(r, 0));
	/* the order of the MNs does not matter */
	{
		struct dtxn_bench_record s[3] = { r[2], r[1], r[0] };

		assert_ptr_equal(dtxn_bench_record_newest(s, 3), &s[1]);
	}
	/* equal ids: copies of one record, the first one */
	r[0] = r[1];
	assert_ptr_equal(dtxn_bench_record_newest(r, 3), &r[0]);
	r[0].txn_id = 5;
	r[0].acc[0] = 100;

	/* settled from the newest: its acc[], plus its share if kept */
	dtxn_bench_record_settle(dtxn_bench_record_newest(r, 3), true, acc);
	assert_int_equal(acc[0], 110);
	assert_int_equal(acc[2], 2 - 4);
	memset(acc, 0, sizeof(acc));
	dtxn_bench_record_settle(dtxn_bench_record_newest(r, 3), false, acc);
	assert_int_equal(acc[0], 110);
	assert_int_equal(acc[1], 1);
	assert_int_equal(acc[2], 2);
	assert_int_equal(acc[3], 3);
	/* a slot never written adds nothing */
	memset(acc, 0, sizeof(acc));
	dtxn_bench_record_settle(&r[2], true, acc);
	assert_int_equal(acc[0], 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rng_determinism),
		cmocka_unit_test(test_rng_range),
		cmocka_unit_test(test_zipf),
		cmocka_unit_test(test_nurand),
		cmocka_unit_test(test_opts),
		cmocka_unit_test(test_registry),
		cmocka_unit_test(test_smallbank_mix),
		cmocka_unit_test(test_kvs_mix),
		cmocka_unit_test(test_create_rejects),
		cmocka_unit_test(test_theta_options),
		cmocka_unit_test(test_opt_name),
		cmocka_unit_test(test_theta_smallbank),
		cmocka_unit_test(test_theta_tpcc_items),
		cmocka_unit_test(test_runner),
		cmocka_unit_test(test_runner_fresh),
		cmocka_unit_test(test_kvs_run),
		cmocka_unit_test(test_kvs_split),
		cmocka_unit_test(test_addr_cache_unbounded),
		cmocka_unit_test(test_smallbank_run),
		cmocka_unit_test(test_record_newest),
	};
	int rc;

	if (dtxn_unit_eal_init("ut_bench") != 0)
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	dtxn_unit_eal_fini();
	return rc;
}
