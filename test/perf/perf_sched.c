/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * perf_sched: cost of the lib/sched primitives, on the main lcore.
 *
 *   yield/2      two coroutines ping-pong through dtxn_co_yield_lc()
 *   yield/64     64 coroutines yield round-robin (batched switching)
 *   wait/poller  one coroutine: expect(1) + wait, a poller completes it
 *   now_ns       one dtxn_now_ns() read
 *
 * Each figure is the median of REPS repetitions. Not a test: it asserts
 * nothing about speed; it prints.
 *
 * Usage: perf_sched [iterations]   (default 10000000)
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <rte_memory.h>

#include "dtxn_sched.h"
#include "unit_eal.h"

#define REPS 5
#define DEFAULT_ITERS 10000000ull
#define MANY_COS 64

struct result {
	double ns_per_op;
	double ns_per_switch;
};

static uint64_t g_iters;

/* ---- yield ping-pong ---------------------------------------------- */

static void
yield_body(struct dtxn_co *co, void *arg)
{
	uint64_t i, n = *(const uint64_t *)arg;

	for (i = 0; i < n; i++)
		dtxn_co_yield_lc(co);
}

static int
bench_yield(unsigned n_cos, struct result *r)
{
	struct dtxn_sched *s = dtxn_sched_create("perf_yield", SOCKET_ID_ANY, n_cos, 0);
	uint64_t per_co = g_iters / n_cos, t0, t1, sw;
	unsigned i;

	if (s == NULL)
		return -1;
	for (i = 0; i < n_cos; i++)
		if (dtxn_co_create(s, yield_body, &per_co) == NULL)
			goto fail;
	t0 = dtxn_now_ns();
	if (dtxn_sched_run_lc(s) != 0)
		goto fail;
	t1 = dtxn_now_ns();
	sw = dtxn_sched_switches(s);
	r->ns_per_op = (double)(t1 - t0) / (double)(per_co * n_cos);
	r->ns_per_switch = (double)(t1 - t0) / (double)sw;
	dtxn_sched_destroy(s);
	return 0;
fail:
	dtxn_sched_destroy(s);
	return -1;
}

/* ---- wait/complete via a poller ----------------------------------- */

struct round {
	struct dtxn_co *armed;   /* coroutine waiting for its completion */
	uint64_t n;
};

static unsigned
complete_poll(void *arg)
{
	struct round *rd = arg;
	struct dtxn_co *co = rd->armed;

	if (co == NULL)
		return 0;
	rd->armed = NULL;
	dtxn_co_complete_lc(co, 0);
	return 1;
}

static void
wait_body(struct dtxn_co *co, void *arg)
{
	struct round *rd = arg;
	uint64_t i;

	for (i = 0; i < rd->n; i++) {
		dtxn_co_expect_lc(co, 1);
		rd->armed = co;
		dtxn_co_wait_lc(co);
	}
}

static int
bench_wait(struct result *r)
{
	struct dtxn_sched *s = dtxn_sched_create("perf_wait", SOCKET_ID_ANY, 1, 0);
	struct round rd = { NULL, g_iters };
	uint64_t t0, t1;

	if (s == NULL)
		return -1;
	if (dtxn_sched_add_poller(s, complete_poll, &rd) != 0 ||
	    dtxn_co_create(s, wait_body, &rd) == NULL)
		goto fail;
	t0 = dtxn_now_ns();
	if (dtxn_sched_run_lc(s) != 0)
		goto fail;
	t1 = dtxn_now_ns();
	r->ns_per_op = (double)(t1 - t0) / (double)rd.n;
	r->ns_per_switch = (double)(t1 - t0) / (double)dtxn_sched_switches(s);
	dtxn_sched_destroy(s);
	return 0;
fail:
	dtxn_sched_destroy(s);
	return -1;
}

/* ---- clock read --------------------------------------------------- */

static int
bench_now(struct result *r)
{
	volatile uint64_t sink = 0;
	uint64_t i, t0, t1;

	t0 = dtxn_now_ns();
	for (i = 0; i < g_iters; i++)
		sink += dtxn_now_ns();
	t1 = dtxn_now_ns();
	(void)sink;
	r->ns_per_op = (double)(t1 - t0) / (double)g_iters;
	r->ns_per_switch = 0;
	return 0;
}

/* ---- driver -------------------------------------------------------- */

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double
median(double *v, unsigned n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return v[n / 2];
}

static int
report(const char *name, int (*fn)(struct result *))
{
	double op[REPS], sw[REPS];
	struct result r;
	unsigned i;

	for (i = 0; i < REPS; i++) {
		if (fn(&r) != 0) {
			fprintf(stderr, "perf_sched: %s failed\n", name);
			return -1;
		}
		op[i] = r.ns_per_op;
		sw[i] = r.ns_per_switch;
	}
	printf("%-12s %10.2f ns/op %10.2f ns/switch   (median of %d x %" PRIu64 ")\n",
	       name, median(op, REPS), median(sw, REPS), REPS, g_iters);
	return 0;
}

static int
bench_yield2(struct result *r)
{
	return bench_yield(2, r);
}

static int
bench_yield_many(struct result *r)
{
	return bench_yield(MANY_COS, r);
}

int
main(int argc, char **argv)
{
	int rc = 0;

	g_iters = argc > 1 ? strtoull(argv[1], NULL, 0) : DEFAULT_ITERS;
	if (g_iters < MANY_COS) {
		fprintf(stderr, "usage: perf_sched [iterations >= %d]\n", MANY_COS);
		return 1;
	}
	if (dtxn_unit_eal_init("perf_sched") != 0)
		return 1;
	rc |= report("yield/2", bench_yield2);
	rc |= report("yield/64", bench_yield_many);
	rc |= report("wait/poller", bench_wait);
	rc |= report("now_ns", bench_now);
	dtxn_unit_eal_fini();
	return rc == 0 ? 0 : 1;
}
