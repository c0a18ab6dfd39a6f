/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Section "waits" of the report (doc/guides/report.md): where committed
 * txns' latency (first attempt to commit) went, by wait kind, as a mean
 * over all commits and over the slowest 1% (the P99 tail); "other" is the
 * rest (CPU, the lcore's run queue, back-off).
 */
#include <inttypes.h>
#include <stdio.h>

#include <jansson.h>

#include "stats_private.h"

/* Whether the report has the section: named kinds and commits to show. */
static bool
waits_shown(const struct dtxn_report *r, struct stats_wait_view *v)
{
	bool named = false;

	for (unsigned k = 0; k < DTXN_STATS_MAX_WAITS; k++)
		named |= r->wait_names[k] != NULL;
	if (!named)
		return false;
	stats_waits_view(&r->stats.waits, v);
	return v->commits != 0;
}

/* The mean latency @p lat not in any wait kind of @p w, ns (0 if they cover it). */
static double
waits_other(double lat, const double *w)
{
	double sum = 0;

	for (unsigned k = 0; k < DTXN_STATS_MAX_WAITS; k++)
		sum += w[k];
	return lat > sum ? lat - sum : 0;
}

void
stats_print_waits(const struct dtxn_report *r, FILE *out)
{
	struct stats_wait_view v;

	if (!waits_shown(r, &v))
		return;
	fprintf(out, "waits of committed txns, us per txn (all %" PRIu64 "; slowest 1%%: %" PRIu64
		", latency >= %.1f us)\n", v.commits, v.tail_commits, v.tail_min_ns / 1e3);
	fprintf(out, "  %-14s %10s %10s %7s\n", "kind", "all", "slowest", "share");
	fprintf(out, "  %-14s %10.1f %10.1f\n", "latency", v.lat_mean / 1e3, v.tail_lat_mean / 1e3);
	for (unsigned k = 0; k < DTXN_STATS_MAX_WAITS; k++)
		if (r->wait_names[k] != NULL)
			fprintf(out, "  %-14s %10.1f %10.1f %6.1f%%\n", r->wait_names[k],
				v.mean[k] / 1e3, v.tail_mean[k] / 1e3,
				100.0 * stats_ratio(v.tail_mean[k], v.tail_lat_mean));
	fprintf(out, "  %-14s %10.1f %10.1f %6.1f%%\n", "other", waits_other(v.lat_mean, v.mean) / 1e3,
		waits_other(v.tail_lat_mean, v.tail_mean) / 1e3,
		100.0 * stats_ratio(waits_other(v.tail_lat_mean, v.tail_mean), v.tail_lat_mean));
}

/* {"mean_us": .., "tail_us": .., "tail_share": ..} of one kind. */
static json_t *
waits_kind(double mean, double tail, double tail_lat)
{
	return json_pack("{s:o, s:o, s:o}", "mean_us", stats_json_num(mean / 1e3), "tail_us",
			 stats_json_num(tail / 1e3), "tail_share",
			 stats_json_num(stats_ratio(tail, tail_lat)));
}

json_t *
stats_json_waits(const struct dtxn_report *r)
{
	struct stats_wait_view v;
	json_t *o, *kinds;
	bool ok;

	if (!waits_shown(r, &v) || (o = json_object()) == NULL)
		return NULL;
	kinds = json_object();
	ok = kinds != NULL && stats_json_put(o, "kinds", kinds);
	ok = ok && stats_json_put(o, "commits", stats_json_u64(v.commits));
	ok = ok && stats_json_put(o, "tail_commits", stats_json_u64(v.tail_commits));
	ok = ok && stats_json_put(o, "tail_min_us", stats_json_num(v.tail_min_ns / 1e3));
	ok = ok && stats_json_put(o, "latency_mean_us", stats_json_num(v.lat_mean / 1e3));
	ok = ok && stats_json_put(o, "tail_latency_mean_us", stats_json_num(v.tail_lat_mean / 1e3));
	for (unsigned k = 0; ok && k < DTXN_STATS_MAX_WAITS; k++)
		if (r->wait_names[k] != NULL)
			ok = stats_json_put(kinds, r->wait_names[k],
					    waits_kind(v.mean[k], v.tail_mean[k], v.tail_lat_mean));
	ok = ok && stats_json_put(kinds, "other",
				  waits_kind(waits_other(v.lat_mean, v.mean),
					     waits_other(v.tail_lat_mean, v.tail_mean),
					     v.tail_lat_mean));
	if (!ok) {
		json_decref(o);
		return NULL;
	}
	return o;
}
