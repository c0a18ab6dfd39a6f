/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of lib/stats: histogram against a sorted-array oracle, run
 * counters, snapshots and their difference (warm-up exclusion), the
 * interval series, the live line, the text summary and the JSON report
 * (with its MN memory and method sections).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "dtxn_stats.h"
#include "unit_eal.h"

/* ------------------------------------------------------------------ */
/* helpers                                                            */
/* ------------------------------------------------------------------ */

static uint64_t g_rng = 0x9e3779b97f4a7c15ull;

static uint64_t
ut_rand(void)
{
	/* xorshift64*: deterministic test data */
	g_rng ^= g_rng >> 12;
	g_rng ^= g_rng << 25;
	g_rng ^= g_rng >> 27;
	return g_rng * 0x2545f4914f6cdd1dull;
}

/* Log-uniform over [0, 2^maxbits): exercises every bucket group. */
static uint64_t
ut_rand_value(unsigned maxbits)
{
	unsigned bits = (unsigned)(ut_rand() % (maxbits + 1));
	return bits == 0 ? 0 : ut_rand() >> (64 - bits);
}

static int
ut_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Upper bound a histogram may return for true value v (relative error). */
static uint64_t
ut_bound(uint64_t v)
{
	uint64_t slack = v >> DTXN_HIST_SUB;
	return v > UINT64_MAX - slack ? UINT64_MAX : v + slack;
}

static struct dtxn_hist *
ut_hist(void)
{
	struct dtxn_hist *h = malloc(sizeof(*h));
	assert_non_null(h);
	dtxn_hist_reset(h);
	return h;
}

/* ------------------------------------------------------------------ */
/* histogram                                                          */
/* ------------------------------------------------------------------ */

static void
test_hist_empty(void **state)
{
	(void)state;
	struct dtxn_hist *h = ut_hist();

	assert_int_equal(h->count, 0);
	assert_int_equal(dtxn_hist_percentile(h, 0.0), 0);
	assert_int_equal(dtxn_hist_percentile(h, 50.0), 0);
	assert_int_equal(dtxn_hist_percentile(h, 100.0), 0);
	assert_true(dtxn_hist_mean(h) == 0.0);
	free(h);
}

static void
test_hist_exact_small(void **state)
{
	(void)state;
	struct dtxn_hist *h = ut_hist();

	/* 0..127 once each: every percentile is exact */
	for (uint64_t v = 0; v < 128; v++)
		dtxn_hist_add(h, v);
	assert_int_equal(h->count, 128);
	assert_int_equal(h->min, 0);
	assert_int_equal(h->max, 127);
	assert_int_equal(h->sum, 127 * 128 / 2);
	for (unsigned k = 1; k <= 128; k++) {
		/* p = k/128: the k-th smallest value is k-1 */
		double p = 100.0 * k / 128.0;
		assert_int_equal(dtxn_hist_percentile(h, p), k - 1);
	}
	assert_int_equal(dtxn_hist_percentile(h, 0.0), 0);
	assert_true(fabs(dtxn_hist_mean(h) - 63.5) < 1e-9);

	/* a single value comes back exactly, whatever its size (clamping) */
	const uint64_t one[] = { 0, 1, 63, 64, 65, 1000, 123456789, UINT64_C(1) << 40 };
	for (size_t i = 0; i < sizeof(one) / sizeof(one[0]); i++) {
		dtxn_hist_reset(h);
		dtxn_hist_add(h, one[i]);
		assert_int_equal(dtxn_hist_percentile(h, 1.0), one[i]);
		assert_int_equal(dtxn_hist_percentile(h, 99.9), one[i]);
	}
	free(h);
}

static void
test_hist_oracle(void **state)
{
	(void)state;
	const size_t n = 100000;
	uint64_t *vals = malloc(n * sizeof(*vals));
	struct dtxn_hist *h = ut_hist();
	long double sum = 0;

	assert_non_null(vals);
	for (size_t i = 0; i < n; i++) {
		vals[i] = ut_rand_value(40);
		sum += vals[i];
		dtxn_hist_add(h, vals[i]);
	}
	qsort(vals, n, sizeof(*vals), ut_cmp_u64);
	assert_int_equal(h->min, vals[0]);
	assert_int_equal(h->max, vals[n - 1]);

	/* percentiles in permille; oracle rank = ceil(p * n) */
	const unsigned pm[] = { 0, 1, 10, 100, 250, 500, 750, 900, 990, 999, 1000 };
	for (size_t i = 0; i < sizeof(pm) / sizeof(pm[0]); i++) {
		size_t rank = (pm[i] * n + 999) / 1000;
		if (rank == 0)
			rank = 1;
		uint64_t want = vals[rank - 1];
		uint64_t got = dtxn_hist_percentile(h, pm[i] / 10.0);

		if (got < want || got > ut_bound(want) || got > h->max)
			fail_msg("p%.1f: got %" PRIu64 ", oracle %" PRIu64, pm[i] / 10.0, got, want);
	}
	assert_true(fabs(dtxn_hist_mean(h) - (double)(sum / n)) < 1e-6 * (double)(sum / n));

	/* many distinct percentiles on a small sample, all within the bound */
	dtxn_hist_reset(h);
	for (size_t i = 0; i < 1000; i++) {
		vals[i] = ut_rand_value(63);
		dtxn_hist_add(h, vals[i]);
	}
	qsort(vals, 1000, sizeof(*vals), ut_cmp_u64);
	for (unsigned k = 1; k <= 1000; k++) {
		uint64_t got = dtxn_hist_percentile(h, k / 10.0);
		uint64_t want = vals[k - 1];
		if (got < want || got > ut_bound(want))
			fail_msg("rank %u: got %" PRIu64 ", oracle %" PRIu64, k, got, want);
	}
	free(h);
	free(vals);
}

static void
test_hist_bucket_edges(void **state)
{
	(void)state;
	struct dtxn_hist *h = ut_hist();

	/*
	 * With min 0 and max 2^63 around v, the median is v's bucket's upper
	 * bound unclamped: it must lie in [v, v + v/2^SUB].
	 */
	for (unsigned k = 0; k < 63; k++) {
		for (int d = -1; d <= 1; d++) {
			uint64_t v = (UINT64_C(1) << k) + (uint64_t)(int64_t)d;
			if (k == 0 && d < 0)
				continue;
			dtxn_hist_reset(h);
			dtxn_hist_add(h, 0);
			dtxn_hist_add(h, v);
			dtxn_hist_add(h, UINT64_C(1) << 63);
			uint64_t got = dtxn_hist_percentile(h, 50.0);
			if (got < v || got > ut_bound(v))
				fail_msg("v=%" PRIu64 ": got %" PRIu64, v, got);
			if (v < (UINT64_C(2) << DTXN_HIST_SUB))
				assert_int_equal(got, v);
		}
	}
	free(h);
}

static void
test_hist_extremes(void **state)
{
	(void)state;
	struct dtxn_hist *h = ut_hist();
	const uint64_t big = UINT64_C(1) << 62;

	dtxn_hist_add(h, 0);
	dtxn_hist_add(h, big);
	assert_int_equal(h->min, 0);
	assert_int_equal(h->max, big);
	assert_int_equal(dtxn_hist_percentile(h, 0.0), 0);
	assert_int_equal(dtxn_hist_percentile(h, 50.0), 0);
	assert_int_equal(dtxn_hist_percentile(h, 50.1), big);
	assert_int_equal(dtxn_hist_percentile(h, 100.0), big);
	/* out-of-range p is clamped */
	assert_int_equal(dtxn_hist_percentile(h, -5.0), 0);
	assert_int_equal(dtxn_hist_percentile(h, 250.0), big);
	assert_true(fabs(dtxn_hist_mean(h) - (double)big / 2) < 1.0);

	dtxn_hist_reset(h);
	dtxn_hist_add(h, UINT64_MAX);
	dtxn_hist_add(h, UINT64_C(1) << 63);
	assert_int_equal(dtxn_hist_percentile(h, 100.0), UINT64_MAX);
	/* 2^63 falls in the last group, whose buckets are 2^57 wide */
	uint64_t got = dtxn_hist_percentile(h, 10.0);
	assert_true(got >= (UINT64_C(1) << 63) && got <= ut_bound(UINT64_C(1) << 63));
	assert_int_equal(got, (UINT64_C(1) << 63) + (UINT64_C(1) << 57) - 1);
	free(h);
}

static void
test_hist_merge(void **state)
{
	(void)state;
	struct dtxn_hist *a = ut_hist(), *b = ut_hist(), *all = ut_hist(), *e = ut_hist();

	for (unsigned i = 0; i < 5000; i++) {
		uint64_t v = ut_rand_value(50);
		dtxn_hist_add((i % 3) ? a : b, v);
		dtxn_hist_add(all, v);
	}
	dtxn_hist_merge(a, b);
	assert_memory_equal(a, all, sizeof(*a));

	/* an empty source changes nothing; an empty destination takes the source */
	dtxn_hist_merge(a, e);
	assert_memory_equal(a, all, sizeof(*a));
	dtxn_hist_merge(e, all);
	assert_memory_equal(e, all, sizeof(*e));
	free(a);
	free(b);
	free(all);
	free(e);
}

/* ------------------------------------------------------------------ */
/* run counters                                                       */
/* ------------------------------------------------------------------ */

static void
test_run_stats(void **state)
{
	(void)state;
	struct dtxn_run_stats *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	uint64_t c, at, ab;

	assert_non_null(a);
	assert_non_null(b);
	dtxn_run_stats_reset(a, 100);
	assert_int_equal(a->n_types, DTXN_STATS_MAX_TYPES);
	dtxn_run_stats_reset(a, 2);
	dtxn_run_stats_reset(b, 3);
	assert_int_equal(a->n_types, 2);
	assert_int_equal(a->type[1].commits, 0);

	a->type[0].commits = 10; a->type[0].attempts = 14; a->type[0].aborts[1] = 3;
	a->type[0].rollbacks = 1; a->type[0].false_aborts = 2;
	a->type[0].verbs[DTXN_WR_READ] = 40; a->type[0].verb_bytes = 4000;
	dtxn_hist_add(&a->type[0].lat, 1000);
	b->type[0].commits = 5; b->type[0].attempts = 6; b->type[0].aborts[2] = 1;
	b->type[0].false_aborts = 1;
	b->type[0].verbs[DTXN_WR_READ] = 2; b->type[0].verbs[DTXN_WR_CAS] = 5;
	b->type[0].verb_bytes = 240;
	dtxn_hist_add(&b->type[0].lat, 3000);
	b->type[2].commits = 7; b->type[2].attempts = 7;

	dtxn_run_stats_totals(a, &c, &at, &ab);
	assert_int_equal(c, 10);
	assert_int_equal(at, 14);
	assert_int_equal(ab, 3);

	dtxn_run_stats_merge(a, b);
	assert_int_equal(a->n_types, 3);
	assert_int_equal(a->type[0].commits, 15);
	assert_int_equal(a->type[0].attempts, 20);
	assert_int_equal(a->type[0].rollbacks, 1);
	assert_int_equal(a->type[0].aborts[1], 3);
	assert_int_equal(a->type[0].aborts[2], 1);
	assert_int_equal(a->type[0].false_aborts, 3);
	assert_int_equal(a->type[0].verbs[DTXN_WR_READ], 42);
	assert_int_equal(a->type[0].verbs[DTXN_WR_CAS], 5);
	assert_int_equal(a->type[0].verb_bytes, 4240);
	assert_int_equal(a->type[0].lat.count, 2);
	assert_int_equal(a->type[0].lat.min, 1000);
	assert_int_equal(a->type[0].lat.max, 3000);
	assert_int_equal(a->type[2].commits, 7);

	dtxn_run_stats_totals(a, &c, &at, &ab);
	assert_int_equal(c, 22);
	assert_int_equal(at, 27);
	assert_int_equal(ab, 4);
	free(a);
	free(b);
}

/* ------------------------------------------------------------------ */
/* snapshots, their difference (warm-up exclusion), the series        */
/* ------------------------------------------------------------------ */

/* end - start keeps exactly the values added after the snapshot. */
static void
test_hist_sub(void **state)
{
	struct dtxn_hist *h = calloc(1, sizeof(*h)), *snap = calloc(1, sizeof(*snap));
	struct dtxn_hist *d = calloc(1, sizeof(*d)), *later = calloc(1, sizeof(*later));

	(void)state;
	assert_true(h != NULL && snap != NULL && d != NULL && later != NULL);
	for (unsigned i = 0; i < 2000; i++)
		dtxn_hist_add(h, ut_rand() % 1000000);
	*snap = *h;
	for (unsigned i = 0; i < 700; i++) {
		uint64_t v = 5000 + ut_rand() % 20000;

		dtxn_hist_add(h, v);
		dtxn_hist_add(later, v);
	}
	dtxn_hist_sub(d, h, snap);
	assert_int_equal(d->count, later->count);
	assert_int_equal(d->sum, later->sum);
	assert_memory_equal(d->b, later->b, sizeof(d->b));
	/* extremes to the bucket's precision, never outside the values' buckets */
	assert_true(d->min <= later->min && d->max >= later->max);
	assert_true(d->max <= later->max + later->max / 64 + 1);
	assert_true(d->min + d->min / 64 + 1 >= later->min);
	assert_int_equal(dtxn_hist_percentile(d, 50), dtxn_hist_percentile(later, 50));
	assert_int_equal(dtxn_hist_percentile(d, 90), dtxn_hist_percentile(later, 90));
	/* nothing new: empty */
	dtxn_hist_sub(d, h, h);
	assert_int_equal(d->count, 0);
	assert_int_equal(dtxn_hist_percentile(d, 99), 0);
	free(h);
	free(snap);
	free(d);
	free(later);
}

/* A snapshot copies every counter; the difference is what came after it. */
static void
test_run_stats_sub(void **state)
{
	struct dtxn_run_stats *s = calloc(1, sizeof(*s)), *snap = calloc(1, sizeof(*snap));
	struct dtxn_run_stats *d = calloc(1, sizeof(*d));

	(void)state;
	assert_true(s != NULL && snap != NULL && d != NULL);
	dtxn_run_stats_reset(s, 2);
	s->type[0].commits = 10;
	s->type[0].attempts = 13;
	s->type[0].aborts[2] = 3;
	s->type[0].false_aborts = 1;
	s->type[1].rollbacks = 4;
	s->type[1].attempts = 4;
	dtxn_hist_add(&s->type[0].lat, 100);
	dtxn_run_stats_snapshot(snap, s);
	assert_int_equal(snap->n_types, 2);
	assert_memory_equal(snap, s, sizeof(*s));
	s->type[0].commits += 5;
	s->type[0].attempts += 7;
	s->type[0].aborts[2] += 2;
	s->type[0].false_aborts += 2;
	s->type[1].rollbacks += 1;
	s->type[1].attempts += 1;
	dtxn_hist_add(&s->type[0].lat, 3000);
	dtxn_run_stats_sub(d, s, snap);
	assert_int_equal(d->n_types, 2);
	assert_int_equal(d->type[0].commits, 5);
	assert_int_equal(d->type[0].attempts, 7);
	assert_int_equal(d->type[0].aborts[2], 2);
	assert_int_equal(d->type[0].aborts[1], 0);
	assert_int_equal(d->type[0].false_aborts, 2);
	assert_int_equal(d->type[1].rollbacks, 1);
	assert_int_equal(d->type[1].attempts, 1);
	assert_int_equal(d->type[0].lat.count, 1);
	assert_int_equal(d->type[0].lat.sum, 3000);
	free(s);
	free(snap);
	free(d);
}

/* Deltas per interval, the warm-up mark, ignored samples, growth. */
static void
test_series(void **state)
{
	struct dtxn_series s;

	(void)state;
	assert_int_equal(dtxn_series_init(&s, 0, 0), -EINVAL);
	assert_int_equal(dtxn_series_init(&s, 1, -1), -EINVAL);
	assert_int_equal(dtxn_series_init(&s, 1, NAN), -EINVAL);
	assert_int_equal(dtxn_series_init(&s, 0.5, 0.8), 0);
	assert_int_equal(dtxn_series_sample(&s, 0.5, 100, 110, 10), 0);
	assert_int_equal(dtxn_series_end_warmup(&s, 0.8, 160, 175, 15), 0);
	assert_int_equal(dtxn_series_end_warmup(&s, 0.9, 170, 185, 15), 0); /* once only */
	assert_int_equal(s.n, 2);
	assert_int_equal(dtxn_series_sample(&s, 0.8, 999, 999, 999), 0); /* not later: ignored */
	assert_int_equal(dtxn_series_sample(&s, 1.3, 260, 280, 16), 0);
	assert_int_equal(s.n, 3);
	assert_true(s.v[0].warmup && s.v[1].warmup && !s.v[2].warmup);
	assert_int_equal(s.v[1].commits, 60);
	assert_int_equal(s.v[1].attempts, 65);
	assert_int_equal(s.v[1].aborts, 5);
	assert_true(fabs(s.v[1].seconds - 0.3) < 1e-9);
	assert_int_equal(s.v[2].commits, 100);
	assert_true(fabs(s.v[2].t_s - 1.3) < 1e-9);
	for (unsigned i = 0; i < 200; i++)
		assert_int_equal(dtxn_series_sample(&s, 2.0 + i, 300 + i, 300 + i, 16), 0);
	assert_int_equal(s.n, 203);
	assert_true(s.cap >= s.n);
	assert_int_equal(s.v[202].commits, 1);
	dtxn_series_free(&s);
	assert_null(s.v);
	/* without a warm-up nothing is marked */
	assert_int_equal(dtxn_series_init(&s, 1, 0), 0);
	assert_int_equal(dtxn_series_sample(&s, 1, 5, 5, 0), 0);
	assert_false(s.v[0].warmup);
	dtxn_series_free(&s);
}

/* ------------------------------------------------------------------ */
/* report                                                             */
/* ------------------------------------------------------------------ */

static const char *const g_reasons[] = {
	"none", "lock_conflict", "validation", "locked_read", "invisible",
};
static const char *const g_types[] = { "amalgamate", "balance" };
static const char *const g_ops[] = { "read", "write", "cas", "faa", "masked_cas", "send", "recv" };

static struct dtxn_report *
ut_report_empty(void)
{
	struct dtxn_report *r = calloc(1, sizeof(*r));

	assert_non_null(r);
	for (unsigned i = 0; i < 5; i++)
		r->reason_names[i] = g_reasons[i];
	r->n_reasons = 5;
	return r;
}

/*
 * Two types, two MNs. Type 0: 100 committed, 110 attempted, 6 lock
 * conflicts, 4 validation; latencies 8191 ns x 99 and 1048575 ns x 1.
 * Type 1: 50 committed, 60 attempted, 5 rollbacks, 5 aborts with no reason
 * name (slot 9); latencies 16383 ns. (2^k - 1 is a bucket's upper bound,
 * so these percentiles are exact.)
 */
static struct dtxn_report *
ut_report_full(void)
{
	struct dtxn_report *r = ut_report_empty();

	dtxn_report_conf(r, "protocol", "%s", "ford");
	dtxn_report_conf(r, "coordinators", "%u", 8u);
	r->seconds = 2.0;
	r->type_names[0] = g_types[0];
	r->type_names[1] = g_types[1];
	dtxn_run_stats_reset(&r->stats, 2);
	struct dtxn_txn_stats *t0 = &r->stats.type[0], *t1 = &r->stats.type[1];
	t0->commits = 100; t0->attempts = 110; t0->aborts[1] = 6; t0->aborts[2] = 4;
	t0->false_aborts = 3;
	t0->verbs[DTXN_WR_READ] = 250; t0->verbs[DTXN_WR_WRITE] = 100;
	t0->verbs[DTXN_WR_CAS] = 50; t0->verb_bytes = 80000;
	for (unsigned i = 0; i < 99; i++)
		dtxn_hist_add(&t0->lat, 8191);
	dtxn_hist_add(&t0->lat, 1048575);
	t1->commits = 50; t1->attempts = 60; t1->rollbacks = 5; t1->aborts[9] = 5;
	for (unsigned i = 0; i < 50; i++)
		dtxn_hist_add(&t1->lat, 16383);

	r->n_mn = 2;
	/* 150 commits: read 3/txn, write 1/txn, cas 1/txn, faa 0.2, mcas 0.1, send 0 */
	r->per_mn[0].ops[DTXN_WR_READ] = 300; r->per_mn[0].bytes[DTXN_WR_READ] = 300 * 64;
	r->per_mn[1].ops[DTXN_WR_READ] = 150; r->per_mn[1].bytes[DTXN_WR_READ] = 150 * 64;
	r->per_mn[0].ops[DTXN_WR_WRITE] = 150; r->per_mn[0].bytes[DTXN_WR_WRITE] = 150 * 32;
	r->per_mn[1].ops[DTXN_WR_CAS] = 150; r->per_mn[1].bytes[DTXN_WR_CAS] = 150 * 8;
	r->per_mn[0].ops[DTXN_WR_FAA] = 30; r->per_mn[0].bytes[DTXN_WR_FAA] = 30 * 8;
	r->per_mn[1].ops[DTXN_WR_MASKED_CAS] = 15; r->per_mn[1].bytes[DTXN_WR_MASKED_CAS] = 15 * 8;
	r->per_mn[1].ops[DTXN_WR_RECV] = 7; r->per_mn[1].bytes[DTXN_WR_RECV] = 7 * 100;

	dtxn_report_check(r, "money", true, "total %d", 1000);
	dtxn_report_check(r, "balance_nonneg", false, "%d accounts negative", 3);
	return r;
}

static char *
ut_print(const struct dtxn_report *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	dtxn_report_print(r, f);
	assert_int_equal(fclose(f), 0);
	assert_non_null(buf);
	return buf;
}

static void
ut_assert_contains(const char *hay, const char *needle)
{
	if (strstr(hay, needle) == NULL)
		fail_msg("missing \"%s\" in:\n%s", needle, hay);
}

static void
ut_assert_no_nan(const char *s)
{
	assert_null(strstr(s, "nan"));
	assert_null(strstr(s, "inf"));
}

static void
test_report_conf_check(void **state)
{
	(void)state;
	struct dtxn_report *r = ut_report_empty();
	char longv[200];

	assert_true(dtxn_report_ok(r)); /* no checks */
	memset(longv, 'x', sizeof(longv) - 1);
	longv[sizeof(longv) - 1] = '\0';
	dtxn_report_conf(r, "bench", "%s/%d", "smallbank", 3);
	dtxn_report_conf(r, "a_key_much_longer_than_thirty_two_characters", "%s", longv);
	assert_int_equal(r->n_conf, 2);
	assert_string_equal(r->conf_key[0], "bench");
	assert_string_equal(r->conf_val[0], "smallbank/3");
	assert_int_equal(strlen(r->conf_key[1]), sizeof(r->conf_key[1]) - 1);
	assert_int_equal(strlen(r->conf_val[1]), sizeof(r->conf_val[1]) - 1);
	for (unsigned i = 0; i < 2 * DTXN_REPORT_MAX_CONF; i++)
		dtxn_report_conf(r, "k", "%u", i);
	assert_int_equal(r->n_conf, DTXN_REPORT_MAX_CONF);

	dtxn_report_check(r, "c0", true, "fine");
	assert_true(dtxn_report_ok(r));
	dtxn_report_check(r, "c1", false, "broken %d", 7);
	assert_false(dtxn_report_ok(r));
	assert_string_equal(r->checks[1].name, "c1");
	assert_string_equal(r->checks[1].detail, "broken 7");

	/* a failure past a full table still fails the report */
	struct dtxn_report *q = ut_report_empty();
	for (unsigned i = 0; i < DTXN_REPORT_MAX_CHECKS + 5; i++)
		dtxn_report_check(q, "ok", true, "%u", i);
	assert_int_equal(q->n_checks, DTXN_REPORT_MAX_CHECKS);
	assert_true(dtxn_report_ok(q));
	dtxn_report_check(q, "late", false, "dropped failure");
	assert_int_equal(q->n_checks, DTXN_REPORT_MAX_CHECKS);
	assert_false(dtxn_report_ok(q));
	assert_string_equal(q->checks[DTXN_REPORT_MAX_CHECKS - 1].name, "late");
	free(q);
	free(r);
}

static void
test_report_live(void **state)
{
	(void)state;
	struct dtxn_hist *h = ut_hist();
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	for (unsigned i = 0; i < 100; i++)
		dtxn_hist_add(h, i < 99 ? 12000 : 40000);
	dtxn_report_live(f, 3.0, 1.0, 412300, 422000, 9700, h);
	dtxn_report_live(f, 4.0, 0.0, 0, 0, 0, NULL);
	assert_int_equal(fclose(f), 0);
	ut_assert_contains(buf, "3.0s]");
	ut_assert_contains(buf, "412.3k txn/s");
	ut_assert_contains(buf, "abort  2.30%");
	ut_assert_contains(buf, "p50 12.0us");
	ut_assert_contains(buf, "p99 12.0us");
	ut_assert_contains(buf, "4.0s]");
	ut_assert_contains(buf, "0.0 txn/s");
	/* two lines exactly */
	char *nl = strchr(buf, '\n');
	assert_non_null(nl);
	assert_non_null(strchr(nl + 1, '\n'));
	assert_int_equal(strchr(nl + 1, '\n')[1], '\0');
	ut_assert_no_nan(buf);
	free(buf);
	free(h);
}

static void
test_report_print_zero(void **state)
{
	(void)state;
	struct dtxn_report *r = ut_report_empty();

	dtxn_run_stats_reset(&r->stats, 1);
	char *s = ut_print(r);
	const char *labels[] = {
		"configuration", "totals", "seconds", "committed", "attempted",
		"committed txn/s", "attempted txn/s", "abort rate", "false aborts", "rollbacks",
		"aborts by reason", "(none)", "latency, us", "p50", "p99", "p999", "mean",
		"per transaction type", "type0", "fabric verbs per committed txn",
		"read 0.00", "masked_cas 0.00", "MN atomics", "bytes", "invariants",
		"(none checked)", "result: PASS",
	};
	for (size_t i = 0; i < sizeof(labels) / sizeof(labels[0]); i++)
		ut_assert_contains(s, labels[i]);
	ut_assert_no_nan(s);
	free(s);

	/* zero types too */
	r->stats.n_types = 0;
	s = ut_print(r);
	ut_assert_contains(s, "result: PASS");
	ut_assert_no_nan(s);
	free(s);
	free(r);
}

static void
test_report_print_full(void **state)
{
	(void)state;
	struct dtxn_report *r = ut_report_full();
	char *s = ut_print(r);
	const char *want[] = {
		"protocol", "ford", "coordinators",
		"75.0",                          /* committed txn/s */
		"85.0",                          /* attempted txn/s */
		"8.82%",                         /* 15 aborts / 170 attempts */
		"20.00% of aborts (3)",          /* false aborts: 3 of 15 */
		"lock_conflict", "3.53%",       /* 6 / 170 */
		"validation", "2.35%",          /* 4 / 170 */
		"amalgamate", "balance", "9.09%", "8.33%",
		"read 3.00", "write 1.00", "cas 1.00", "faa 0.20", "masked_cas 0.10",
		"send 0.00", "total 5.30",
		"1.30",                          /* MN atomics */
		"PASS money: total 1000", "FAIL balance_nonneg: 3 accounts negative",
		"result: FAIL (1 of 2 checks failed)",
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		ut_assert_contains(s, want[i]);
	/* zero-count and unnamed reasons are not listed */
	assert_null(strstr(s, "locked_read"));
	assert_null(strstr(s, "invisible"));
	ut_assert_no_nan(s);
	free(s);
	free(r);
}

/* ------------------------------------------------------------------ */
/* JSON                                                               */
/* ------------------------------------------------------------------ */

static char g_dir[] = "/tmp/ut_stats_XXXXXX";

static int
ut_json_setup(void **state)
{
	(void)state;
	return mkdtemp(g_dir) == NULL ? -1 : 0;
}

static int
ut_json_teardown(void **state)
{
	(void)state;
	return rmdir(g_dir);
}

static json_t *
ut_load(const char *path)
{
	json_error_t err;
	json_t *j = json_load_file(path, 0, &err);

	if (j == NULL)
		fail_msg("%s: %s (line %d)", path, err.text, err.line);
	return j;
}

static double
ut_num(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	if (v == NULL || !json_is_number(v))
		fail_msg("\"%s\" missing or not a number", key);
	return json_number_value(v);
}

static json_int_t
ut_int(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	if (v == NULL || !json_is_integer(v))
		fail_msg("\"%s\" missing or not an integer", key);
	return json_integer_value(v);
}

static void
ut_assert_near(double got, double want)
{
	if (fabs(got - want) > 1e-9 * (fabs(want) + 1))
		fail_msg("got %.12g, want %.12g", got, want);
}

static void
ut_check_latency(json_t *o, double p50, double p99, double p999, double mean)
{
	assert_true(json_is_object(o));
	assert_int_equal(json_object_size(o), 6);
	assert_true(json_is_number(json_object_get(o, "min")));
	assert_true(json_is_number(json_object_get(o, "max")));
	ut_assert_near(ut_num(o, "p50"), p50);
	ut_assert_near(ut_num(o, "p99"), p99);
	ut_assert_near(ut_num(o, "p999"), p999);
	ut_assert_near(ut_num(o, "mean"), mean);
}

static void
ut_path(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", g_dir, name);
}

static bool
ut_exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

static void
test_json_round_trip(void **state)
{
	(void)state;
	struct dtxn_report *r = ut_report_full();
	char path[256], tmp[300];

	ut_path(path, sizeof(path), "report.json");
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	r->cn_msgs[4] = 30; /* SENDs to peer CN node 4 */
	assert_int_equal(dtxn_report_write_json(r, path), 0);
	assert_false(ut_exists(tmp));

	json_t *j = ut_load(path);
	json_t *cm = json_object_get(j, "cn_messages");
	assert_int_equal(ut_int(cm, "total"), 30);
	ut_assert_near(ut_num(cm, "per_txn"), 30.0 / 150.0);
	assert_int_equal(json_array_size(json_object_get(cm, "per_peer")), 1);
	assert_int_equal(ut_int(json_array_get(json_object_get(cm, "per_peer"), 0), "node"), 4);
	assert_int_equal(ut_int(json_array_get(json_object_get(cm, "per_peer"), 0), "messages"), 30);
	assert_int_equal(json_object_size(j), 22); /* "method" without memory or intervals */
	assert_string_equal(json_string_value(json_object_get(j, "dtxn_version")), DTXN_VERSION);

	json_t *conf = json_object_get(j, "config");
	assert_int_equal(json_object_size(conf), 2);
	assert_string_equal(json_string_value(json_object_get(conf, "protocol")), "ford");
	assert_string_equal(json_string_value(json_object_get(conf, "coordinators")), "8");

	ut_assert_near(ut_num(j, "seconds"), 2.0);
	assert_int_equal(ut_int(j, "committed"), 150);
	assert_int_equal(ut_int(j, "attempted"), 170);
	assert_int_equal(ut_int(j, "rollbacks"), 5);
	ut_assert_near(ut_num(j, "committed_tps"), 75.0);
	ut_assert_near(ut_num(j, "attempted_tps"), 85.0);
	ut_assert_near(ut_num(j, "abort_rate"), 15.0 / 170.0);

	json_t *ab = json_object_get(j, "aborts");
	assert_int_equal(json_object_size(ab), 2); /* slot 9 has no name */
	assert_int_equal(ut_int(ab, "lock_conflict"), 6);
	assert_int_equal(ut_int(ab, "validation"), 4);
	assert_int_equal(ut_int(j, "false_aborts"), 3);
	ut_assert_near(ut_num(j, "false_abort_share"), 3.0 / 15.0);

	/* 99 values of 8.191 us, 50 of 16.383 us, one of 1048.575 us */
	ut_check_latency(json_object_get(j, "latency_us"), 8.191, 16.383, 1048.575,
			 (99 * 8.191 + 1048.575 + 50 * 16.383) / 150.0);
	/* the histogram behind it: three buckets named by their largest value */
	json_t *lh = json_object_get(j, "latency_hist"), *bk = json_object_get(lh, "buckets");
	assert_int_equal(ut_int(lh, "count"), 150);
	assert_int_equal(ut_int(lh, "sum_ns"), 99 * 8191 + 50 * 16383 + 1048575);
	assert_int_equal(json_array_size(bk), 3);
	assert_int_equal(json_integer_value(json_array_get(json_array_get(bk, 0), 0)), 8191);
	assert_int_equal(json_integer_value(json_array_get(json_array_get(bk, 0), 1)), 99);
	assert_int_equal(json_integer_value(json_array_get(json_array_get(bk, 2), 0)), 1048575);
	assert_int_equal(json_integer_value(json_array_get(json_array_get(bk, 2), 1)), 1);

	json_t *types = json_object_get(j, "types");
	assert_true(json_is_array(types));
	assert_int_equal(json_array_size(types), 2);
	json_t *t0 = json_array_get(types, 0), *t1 = json_array_get(types, 1);
	assert_int_equal(json_object_size(t0), 11);
	assert_int_equal(ut_int(t0, "false_aborts"), 3);
	/* MN verbs of all the type's attempts per commit of the type */
	ut_assert_near(ut_num(json_object_get(t0, "verbs_per_commit"), "read"), 2.5);
	ut_assert_near(ut_num(json_object_get(t0, "verbs_per_commit"), "cas"), 0.5);
	ut_assert_near(ut_num(json_object_get(t0, "verbs_per_commit"), "total"), 4.0);
	ut_assert_near(ut_num(t0, "bytes_per_commit"), 800.0);
	assert_string_equal(json_string_value(json_object_get(t0, "name")), "amalgamate");
	assert_int_equal(ut_int(t0, "committed"), 100);
	assert_int_equal(ut_int(t0, "attempted"), 110);
	assert_int_equal(ut_int(t0, "rollbacks"), 0);
	ut_assert_near(ut_num(t0, "abort_rate"), 10.0 / 110.0);
	assert_int_equal(json_object_size(json_object_get(t0, "aborts")), 2);
	assert_int_equal(ut_int(json_object_get(t0, "aborts"), "lock_conflict"), 6);
	assert_int_equal(ut_int(json_object_get(t0, "aborts"), "validation"), 4);
	ut_check_latency(json_object_get(t0, "latency_us"), 8.191, 8.191, 1048.575,
			 (99 * 8.191 + 1048.575) / 100.0);
	assert_string_equal(json_string_value(json_object_get(t1, "name")), "balance");
	assert_int_equal(ut_int(t1, "committed"), 50);
	assert_int_equal(ut_int(t1, "attempted"), 60);
	assert_int_equal(ut_int(t1, "rollbacks"), 5);
	ut_assert_near(ut_num(t1, "abort_rate"), 5.0 / 60.0);
	assert_int_equal(json_object_size(json_object_get(t1, "aborts")), 0);
	ut_check_latency(json_object_get(t1, "latency_us"), 16.383, 16.383, 16.383, 16.383);

	json_t *vp = json_object_get(j, "verbs_per_txn");
	assert_int_equal(json_object_size(vp), 8);
	ut_assert_near(ut_num(vp, "read"), 3.0);
	ut_assert_near(ut_num(vp, "write"), 1.0);
	ut_assert_near(ut_num(vp, "cas"), 1.0);
	ut_assert_near(ut_num(vp, "faa"), 0.2);
	ut_assert_near(ut_num(vp, "masked_cas"), 0.1);
	ut_assert_near(ut_num(vp, "send"), 0.0);
	ut_assert_near(ut_num(vp, "mn_atomics"), 1.3);
	ut_assert_near(ut_num(vp, "total"), 5.3);
	ut_assert_near(ut_num(j, "bytes_per_txn"),
		       (450.0 * 64 + 150 * 32 + 150 * 8 + 30 * 8 + 15 * 8) / 150.0);

	json_t *fab = json_object_get(j, "fabric");
	assert_int_equal(json_array_size(fab), 2);
	for (unsigned m = 0; m < 2; m++) {
		json_t *e = json_array_get(fab, m);
		json_t *ops = json_object_get(e, "ops"), *bytes = json_object_get(e, "bytes");

		assert_int_equal(ut_int(e, "mn"), m);
		assert_int_equal(json_object_size(ops), DTXN_WR_OP_MAX);
		assert_int_equal(json_object_size(bytes), DTXN_WR_OP_MAX);
		for (unsigned op = 0; op < DTXN_WR_OP_MAX; op++) {
			assert_int_equal(ut_int(ops, g_ops[op]), r->per_mn[m].ops[op]);
			assert_int_equal(ut_int(bytes, g_ops[op]), r->per_mn[m].bytes[op]);
		}
	}

	json_t *checks = json_object_get(j, "checks");
	assert_int_equal(json_array_size(checks), 2);
	json_t *c0 = json_array_get(checks, 0), *c1 = json_array_get(checks, 1);
	assert_string_equal(json_string_value(json_object_get(c0, "name")), "money");
	assert_true(json_is_true(json_object_get(c0, "ok")));
	assert_string_equal(json_string_value(json_object_get(c0, "detail")), "total 1000");
	assert_string_equal(json_string_value(json_object_get(c1, "name")), "balance_nonneg");
	assert_true(json_is_false(json_object_get(c1, "ok")));
	assert_string_equal(json_string_value(json_object_get(c1, "detail")), "3 accounts negative");
	assert_true(json_is_false(json_object_get(j, "ok")));
	json_decref(j);

	/* rewriting replaces the file in place */
	r->n_checks = 1;
	assert_int_equal(dtxn_report_write_json(r, path), 0);
	j = ut_load(path);
	assert_true(json_is_true(json_object_get(j, "ok")));
	json_decref(j);
	assert_false(ut_exists(tmp));
	assert_int_equal(unlink(path), 0);
	free(r);
}

static void
test_json_zero(void **state)
{
	(void)state;
	struct dtxn_report *r = ut_report_empty();
	char path[256];

	/* nothing committed, no time measured, one MN with traffic */
	dtxn_run_stats_reset(&r->stats, 1);
	r->stats.type[0].attempts = 4;
	r->stats.type[0].aborts[1] = 4;
	r->n_mn = 1;
	r->per_mn[0].ops[DTXN_WR_READ] = 12;
	ut_path(path, sizeof(path), "zero.json");
	assert_int_equal(dtxn_report_write_json(r, path), 0);

	json_t *j = ut_load(path);
	assert_int_equal(ut_int(j, "committed"), 0);
	assert_int_equal(ut_int(j, "attempted"), 4);
	ut_assert_near(ut_num(j, "seconds"), 0.0);
	ut_assert_near(ut_num(j, "committed_tps"), 0.0);
	ut_assert_near(ut_num(j, "attempted_tps"), 0.0);
	ut_assert_near(ut_num(j, "abort_rate"), 1.0);
	assert_int_equal(ut_int(json_object_get(j, "aborts"), "lock_conflict"), 4);
	assert_int_equal(json_object_size(json_object_get(j, "config")), 0);
	ut_check_latency(json_object_get(j, "latency_us"), 0, 0, 0, 0);
	json_t *vp = json_object_get(j, "verbs_per_txn");
	const char *k;
	json_t *v;
	json_object_foreach(vp, k, v) {
		assert_true(json_is_real(v));
		ut_assert_near(json_real_value(v), 0.0);
	}
	ut_assert_near(ut_num(j, "bytes_per_txn"), 0.0);
	assert_int_equal(ut_int(json_object_get(json_array_get(json_object_get(j, "fabric"), 0),
						"ops"), "read"), 12);
	assert_int_equal(json_array_size(json_object_get(j, "checks")), 0);
	assert_true(json_is_true(json_object_get(j, "ok")));
	json_decref(j);

	/* the raw file has no NaN / Infinity anywhere */
	FILE *f = fopen(path, "r");
	char text[16384];
	assert_non_null(f);
	size_t n = fread(text, 1, sizeof(text) - 1, f);
	text[n] = '\0';
	fclose(f);
	ut_assert_no_nan(text);
	assert_null(strstr(text, "NaN"));
	assert_null(strstr(text, "Infinity"));
	assert_int_equal(unlink(path), 0);
	free(r);
}

static void
test_json_reasons(void **state)
{
	(void)state;
	struct dtxn_report *r = ut_report_empty();
	char path[256];

	dtxn_run_stats_reset(&r->stats, 1);
	r->stats.type[0].commits = 10;
	r->stats.type[0].attempts = 20;
	r->stats.type[0].aborts[1] = 0;   /* named, zero: left out */
	r->stats.type[0].aborts[3] = 4;   /* named: listed */
	r->stats.type[0].aborts[4] = 6;   /* named but beyond n_reasons: left out */
	r->n_reasons = 4;
	r->reason_names[2] = NULL;
	r->stats.type[0].aborts[2] = 0;
	ut_path(path, sizeof(path), "reasons.json");
	assert_int_equal(dtxn_report_write_json(r, path), 0);

	json_t *j = ut_load(path);
	json_t *ab = json_object_get(j, "aborts");
	assert_int_equal(json_object_size(ab), 1);
	assert_int_equal(ut_int(ab, "locked_read"), 4);
	/* every concurrency abort counts in the rate, named or not */
	ut_assert_near(ut_num(j, "abort_rate"), 0.5);
	json_t *t0 = json_array_get(json_object_get(j, "types"), 0);
	assert_string_equal(json_string_value(json_object_get(t0, "name")), "type0");
	assert_int_equal(json_object_size(json_object_get(t0, "aborts")), 1);
	json_decref(j);
	assert_int_equal(unlink(path), 0);
	free(r);
}

static void
test_json_atomic(void **state)
{
	(void)state;
	struct dtxn_report *r = ut_report_full();
	char path[256], tmp[300];

	/* target directory missing */
	ut_path(path, sizeof(path), "missing/report.json");
	assert_int_equal(dtxn_report_write_json(r, path), -ENOENT);
	assert_false(ut_exists(path));

	/* rename fails (target is a directory): the temporary file is removed */
	ut_path(path, sizeof(path), "adir");
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	assert_int_equal(mkdir(path, 0700), 0);
	int rc = dtxn_report_write_json(r, path);
	assert_true(rc < 0);
	assert_false(ut_exists(tmp));
	assert_int_equal(rmdir(path), 0);

	/* a failed write keeps the previous report intact */
	ut_path(path, sizeof(path), "keep.json");
	assert_int_equal(dtxn_report_write_json(r, path), 0);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	assert_int_equal(mkdir(tmp, 0700), 0); /* blocks the temporary file */
	rc = dtxn_report_write_json(r, path);
	assert_true(rc < 0);
	assert_int_equal(rmdir(tmp), 0);
	json_t *j = ut_load(path);
	assert_int_equal(ut_int(j, "committed"), 150);
	json_decref(j);
	assert_int_equal(unlink(path), 0);

	/* bad arguments */
	assert_int_equal(dtxn_report_write_json(r, NULL), -EINVAL);
	assert_int_equal(dtxn_report_write_json(r, ""), -EINVAL);
	free(r);
}

/* Memory, method and intervals sections; load time in "host" on a simulated run. */
static void
test_json_memory_method(void **state)
{
	(void)state;
	struct dtxn_report *r = ut_report_full();
	struct dtxn_report_host host = { .wall_seconds = 1, .events_per_wall_second = 2 };
	struct dtxn_report_host rt_host = { .has_cpu = true, .cpu_ns_per_txn = 4000,
					    .coord_ns_per_txn = 2500, .nic_ns_per_txn = 1500,
					    .cn_busy = 0.75, .cn_running = 0.5 };
	struct dtxn_report_sim sim = { .virtual_seconds = 1, .bottleneck = { .name = "mn0.rw" } };
	struct dtxn_series s;
	char path[256];
	FILE *f;
	char buf[8192];
	size_t n;

	r->has_mem = true;
	r->copies = 2;
	r->raw_bytes = 1000;
	r->load_seconds = 0.25;
	for (unsigned m = 0; m < 2; m++)
		r->mem[m] = (struct dtxn_store_mem){ .total = 4096, .index = 1600, .values = 400,
						     .logs = 1024, .reserved = 64, .unused = 1008,
						     .empty = 500, .raw = 1000,
						     .heap_free = 300 };
	r->warmup_seconds = 0.5;
	r->retry = "fresh";
	assert_int_equal(dtxn_series_init(&s, 0.5, 0.5), 0);
	assert_int_equal(dtxn_series_end_warmup(&s, 0.5, 10, 12, 2), 0);
	assert_int_equal(dtxn_series_sample(&s, 1.0, 30, 35, 3), 0);
	r->series = &s;
	ut_path(path, sizeof(path), "mem.json");
	assert_int_equal(dtxn_report_write_json(r, path), 0);

	json_t *j = ut_load(path);
	json_t *mem = json_object_get(j, "memory");
	assert_non_null(mem);
	json_t *a = json_object_get(mem, "mn_bytes");
	assert_int_equal(json_array_size(a), 2);
	assert_int_equal(ut_int(json_array_get(a, 1), "mn"), 1);
	assert_int_equal(ut_int(json_array_get(a, 1), "values"), 400);
	assert_int_equal(ut_int(json_object_get(mem, "bytes"), "total"), 8192);
	assert_int_equal(ut_int(mem, "raw_bytes"), 1000);
	assert_int_equal(ut_int(mem, "copies"), 2);
	/* raw x copies = 2000 (the MNs' raw): 8192 held, 4000 in tables, 3000 in rows */
	ut_assert_near(ut_num(mem, "overhead"), 8192.0 / 2000 - 1);
	ut_assert_near(ut_num(mem, "table_overhead"), 4000.0 / 2000 - 1);
	ut_assert_near(ut_num(mem, "row_overhead"), 3000.0 / 2000 - 1);
	/* in use: total - unused - heap_free = 4096 - 1008 - 300 per MN */
	assert_int_equal(ut_int(json_array_get(a, 0), "heap_free"), 300);
	assert_int_equal(ut_int(json_array_get(a, 0), "in_use"), 2788);
	assert_int_equal(ut_int(json_object_get(mem, "bytes"), "in_use"), 5576);
	ut_assert_near(ut_num(mem, "in_use_overhead"), 5576.0 / 2000 - 1);
	ut_assert_near(ut_num(mem, "load_seconds"), 0.25);
	json_t *me = json_object_get(j, "method");
	ut_assert_near(ut_num(me, "warmup_seconds"), 0.5);
	ut_assert_near(ut_num(me, "interval_seconds"), 0.5);
	assert_string_equal(json_string_value(json_object_get(me, "retry")), "fresh");
	json_t *iv = json_object_get(j, "intervals");
	assert_int_equal(json_array_size(iv), 2);
	assert_true(json_is_true(json_object_get(json_array_get(iv, 0), "warmup")));
	assert_true(json_is_false(json_object_get(json_array_get(iv, 1), "warmup")));
	assert_int_equal(ut_int(json_array_get(iv, 1), "committed"), 20);
	ut_assert_near(ut_num(json_array_get(iv, 1), "committed_tps"), 40.0);
	json_decref(j);

	/* the summary shows both sections */
	f = fopen(path, "w+");
	assert_non_null(f);
	dtxn_report_print(r, f);
	rewind(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	assert_non_null(strstr(buf, "MN memory"));
	assert_non_null(strstr(buf, "fresh (a new transaction is drawn)"));
	assert_non_null(strstr(buf, "20.0* 40.0")); /* 10 per 0.5 s in the warm-up, then 20 */

	/* real-time run: "host" has the worker lcores' CPU, the load time stays */
	r->host = &rt_host;
	assert_int_equal(dtxn_report_write_json(r, path), 0);
	j = ut_load(path);
	ut_assert_near(ut_num(json_object_get(j, "memory"), "load_seconds"), 0.25);
	assert_null(json_object_get(json_object_get(j, "host"), "load_seconds"));
	assert_null(json_object_get(json_object_get(j, "host"), "wall_seconds"));
	ut_assert_near(ut_num(json_object_get(json_object_get(j, "host"), "cn_cpu_ns_per_txn"),
			      "total"), 4000);
	ut_assert_near(ut_num(json_object_get(json_object_get(j, "host"), "cn_cpu_ns_per_txn"),
			      "coordinator"), 2500);
	ut_assert_near(ut_num(json_object_get(json_object_get(j, "host"), "cn_cpu_ns_per_txn"),
			      "nic"), 1500);
	ut_assert_near(ut_num(json_object_get(j, "host"), "cn_busy"), 0.75);
	ut_assert_near(ut_num(json_object_get(j, "host"), "cn_running"), 0.5);
	json_decref(j);

	/* simulated run: the wall-clock load time moves to "host" */
	r->host = &host;
	r->sim = &sim;
	assert_int_equal(dtxn_report_write_json(r, path), 0);
	j = ut_load(path);
	assert_null(json_object_get(json_object_get(j, "memory"), "load_seconds"));
	ut_assert_near(ut_num(json_object_get(j, "host"), "load_seconds"), 0.25);
	assert_null(json_object_get(json_object_get(j, "host"), "cn_cpu_ns_per_txn"));
	json_decref(j);
	assert_int_equal(unlink(path), 0);
	dtxn_series_free(&s);
	free(r);
}

/*
 * The fabric driver's own counters (r->driver; on mlx5 what
 * dtxn_mlx5_stats_get() counts): section "fabric_driver" in the JSON and
 * a "fabric driver" block in the summary, every entry in order, strings
 * and integers as given; no section without them.
 */
static void
test_json_fabric_driver(void **state)
{
	(void)state;
	struct dtxn_report *r = ut_report_full();
	struct dtxn_report_driver d = {
		.name = "mlx5",
		.n = 5,
		.kv = {
			{ .key = "device", .str = "mlx5_0 port 1" },
			{ .key = "doorbells", .u64 = 4242 },
			{ .key = "inline_wrs", .u64 = UINT64_C(1) << 40 },
			{ .key = "signaled", .u64 = 0 },
			{ .key = "mcas_loop", .u64 = 17 },
		},
	};
	char path[256], *text;
	json_t *j, *fd;
	const char *key;
	json_t *val;
	unsigned i = 0;

	ut_path(path, sizeof(path), "driver.json");
	assert_int_equal(dtxn_report_write_json(r, path), 0);
	j = ut_load(path);
	assert_null(json_object_get(j, "fabric_driver")); /* shm, sim: none */
	json_decref(j);
	text = ut_print(r);
	assert_null(strstr(text, "fabric driver"));
	free(text);

	r->driver = &d;
	assert_int_equal(dtxn_report_write_json(r, path), 0);
	j = ut_load(path);
	fd = json_object_get(j, "fabric_driver");
	assert_non_null(fd);
	assert_string_equal(json_string_value(json_object_get(fd, "name")), "mlx5");
	assert_string_equal(json_string_value(json_object_get(fd, "device")), "mlx5_0 port 1");
	assert_int_equal(ut_int(fd, "doorbells"), 4242);
	assert_int_equal(ut_int(fd, "inline_wrs"), INT64_C(1) << 40);
	assert_int_equal(ut_int(fd, "signaled"), 0);
	assert_int_equal(ut_int(fd, "mcas_loop"), 17);
	assert_int_equal(json_object_size(fd), 6);
	/* the per-MN "fabric" array is unchanged beside it */
	assert_int_equal(json_array_size(json_object_get(j, "fabric")), 2);
	json_object_foreach(fd, key, val) /* insertion order: name, then kv[] */
		if (i++ > 0)
			assert_string_equal(key, d.kv[i - 2].key);
	json_decref(j);
	text = ut_print(r);
	ut_assert_contains(text, "fabric driver mlx5\n");
	ut_assert_contains(text, "  device                             mlx5_0 port 1\n");
	ut_assert_contains(text, "  doorbells                          4242\n");
	ut_assert_contains(text, "  mcas_loop                          17\n");
	assert_true(strstr(text, "fabric ops per MN") < strstr(text, "fabric driver"));
	free(text);
	assert_int_equal(unlink(path), 0);
	free(r);
}

int
main(void)
{
	if (dtxn_unit_eal_init("ut_stats") != 0)
		return 1;

	const struct CMUnitTest hist[] = {
		cmocka_unit_test(test_hist_empty),
		cmocka_unit_test(test_hist_exact_small),
		cmocka_unit_test(test_hist_oracle),
		cmocka_unit_test(test_hist_bucket_edges),
		cmocka_unit_test(test_hist_extremes),
		cmocka_unit_test(test_hist_merge),
		cmocka_unit_test(test_run_stats),
		cmocka_unit_test(test_hist_sub),
		cmocka_unit_test(test_run_stats_sub),
		cmocka_unit_test(test_series),
	};
	const struct CMUnitTest report[] = {
		cmocka_unit_test(test_report_conf_check),
		cmocka_unit_test(test_report_live),
		cmocka_unit_test(test_report_print_zero),
		cmocka_unit_test(test_report_print_full),
	};
	const struct CMUnitTest json[] = {
		cmocka_unit_test(test_json_round_trip),
		cmocka_unit_test(test_json_zero),
		cmocka_unit_test(test_json_reasons),
		cmocka_unit_test(test_json_atomic),
		cmocka_unit_test(test_json_memory_method),
		cmocka_unit_test(test_json_fabric_driver),
	};
	int failed = cmocka_run_group_tests_name("stats_hist", hist, NULL, NULL);
	failed += cmocka_run_group_tests_name("stats_report", report, NULL, NULL);
	failed += cmocka_run_group_tests_name("stats_json", json, ut_json_setup, ut_json_teardown);

	dtxn_unit_eal_fini();
	return failed == 0 ? 0 : 1;
}
