/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The method options every run shares (doc/guides/report.md, "Method"):
 * --warmup (counters at the warm-up's end, subtracted from the report),
 * --interval (the throughput series) and --retry (what follows an abort).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "dtxn_bench.h"
#include "dtxn_stats.h"
#include "dtxn_txn.h"
#include "app.h"

/** Intervals in a simulated run's series when --interval is not given. */
#define APP_SIM_INTERVALS 20

int
app_method_validate(const struct app_conf *c)
{
	if (dtxn_bench_retry_parse(c->retry) < 0) {
		app_err("--retry: unknown rule '%s' (same, fresh)", c->retry);
		return -1;
	}
	if (c->txns != 0 && c->warmup_s > 0) {
		app_err("--warmup: not with --txns (a warm-up is time; give --duration)");
		return -1;
	}
	return 0;
}

double
app_interval_s(const struct app_conf *c)
{
	if (c->interval_s > 0)
		return c->interval_s;
	if (app_is_sim(c) && c->txns == 0)
		return (c->warmup_s + c->duration_s) / APP_SIM_INTERVALS;
	return 1.0;
}

int
app_warm_init(struct app_warm *w, const struct app_conf *c, unsigned n)
{
	memset(w, 0, sizeof(*w));
	if (!(c->warmup_s > 0))
		return 0;
	w->stats = calloc(n, sizeof(*w->stats));
	w->per_mn = calloc((size_t)n * DTXN_MAX_NODES, sizeof(*w->per_mn));
	w->cpu = calloc((size_t)n * 2, sizeof(*w->cpu));
	if (w->stats == NULL || w->per_mn == NULL || w->cpu == NULL) {
		app_warm_fini(w);
		app_err("out of memory for the warm-up counters of %u workers", n);
		return -1;
	}
	w->n = n;
	return 0;
}

void
app_warm_take(struct app_warm *w, unsigned i, const struct dtxn_run_stats *stats,
	      const struct dtxn_worker *wk)
{
	if (i >= w->n)
		return;
	dtxn_run_stats_snapshot(&w->stats[i], stats);
	dtxn_worker_counters(wk, &w->per_mn[(size_t)i * DTXN_MAX_NODES]);
	dtxn_worker_peer_counters(wk, &w->per_mn[(size_t)i * DTXN_MAX_NODES]); /* once: from zero */
	dtxn_worker_cpu(wk, &w->cpu[2 * i], &w->cpu[2 * i + 1]);
	w->taken = true;
}

void
app_warm_fini(struct app_warm *w)
{
	free(w->stats);
	free(w->per_mn);
	free(w->cpu);
	memset(w, 0, sizeof(*w));
}

void
app_report_method(struct dtxn_report *rep, const struct app_conf *c,
		  const struct dtxn_series *series)
{
	rep->warmup_seconds = c->warmup_s;
	rep->retry = dtxn_bench_retry_name((enum dtxn_bench_retry)dtxn_bench_retry_parse(c->retry));
	rep->series = series;
	dtxn_report_conf(rep, "warmup", "%g", c->warmup_s);
	dtxn_report_conf(rep, "retry", "%s", c->retry);
}
