/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Waits of committed transactions (dtxn_stats.h, "Waits of committed
 * transactions"): counted by latency class, merged, snapshot and
 * subtracted word by word (the struct is only uint64_t counters), and the
 * figures the report shows (all commits, the slowest 1%).
 */
#include <string.h>

#include "stats_private.h"

#define WAIT_WORDS (sizeof(struct dtxn_wait_stats) / sizeof(uint64_t))

_Static_assert(sizeof(struct dtxn_wait_stats) % sizeof(uint64_t) == 0,
	       "struct dtxn_wait_stats must be uint64_t words only");

void
dtxn_wait_stats_add(struct dtxn_wait_stats *w, uint64_t lat_ns, const uint64_t *ns, unsigned n)
{
	const unsigned c = stats_loglin_index(lat_ns, DTXN_WAIT_SUB);

	w->n[c]++;
	w->lat[c] += lat_ns;
	for (unsigned k = 0; k < n && k < DTXN_STATS_MAX_WAITS; k++)
		w->ns[c][k] += ns[k];
}

void
stats_waits_merge(struct dtxn_wait_stats *dst, const struct dtxn_wait_stats *src)
{
	uint64_t *d = (uint64_t *)dst;
	const uint64_t *s = (const uint64_t *)src;

	for (size_t i = 0; i < WAIT_WORDS; i++)
		d[i] += s[i];
}

void
stats_waits_snapshot(struct dtxn_wait_stats *dst, const struct dtxn_wait_stats *src)
{
	uint64_t *d = (uint64_t *)dst;
	const uint64_t *s = (const uint64_t *)src;

	for (size_t i = 0; i < WAIT_WORDS; i++)
		d[i] = __atomic_load_n(&s[i], __ATOMIC_RELAXED);
}

void
stats_waits_sub(struct dtxn_wait_stats *dst, const struct dtxn_wait_stats *end,
		const struct dtxn_wait_stats *start)
{
	uint64_t *d = (uint64_t *)dst;
	const uint64_t *e = (const uint64_t *)end, *s = (const uint64_t *)start;

	for (size_t i = 0; i < WAIT_WORDS; i++)
		d[i] = e[i] >= s[i] ? e[i] - s[i] : 0;
}

/* Adds class @p c of @p w into the sums of @p n commits, @p lat and @p ns. */
static void
wait_take(const struct dtxn_wait_stats *w, unsigned c, uint64_t *n, double *lat, double *ns)
{
	*n += w->n[c];
	*lat += (double)w->lat[c];
	for (unsigned k = 0; k < DTXN_STATS_MAX_WAITS; k++)
		ns[k] += (double)w->ns[c][k];
}

void
stats_waits_view(const struct dtxn_wait_stats *w, struct stats_wait_view *v)
{
	double lat = 0, tail_lat = 0, ns[DTXN_STATS_MAX_WAITS] = { 0 },
	       tail_ns[DTXN_STATS_MAX_WAITS] = { 0 };
	unsigned c;

	memset(v, 0, sizeof(*v));
	for (c = 0; c < DTXN_WAIT_CLASSES; c++)
		wait_take(w, c, &v->commits, &lat, ns);
	/* the slowest classes that hold at least 1% of the commits */
	for (c = DTXN_WAIT_CLASSES; c-- > 0 && v->tail_commits * 100 < v->commits;)
		wait_take(w, c, &v->tail_commits, &tail_lat, tail_ns);
	v->tail_min_ns = c + 1 < DTXN_WAIT_CLASSES ? stats_waits_class_min(c + 1) : 0;
	v->lat_mean = stats_ratio(lat, (double)v->commits);
	v->tail_lat_mean = stats_ratio(tail_lat, (double)v->tail_commits);
	for (unsigned k = 0; k < DTXN_STATS_MAX_WAITS; k++) {
		v->mean[k] = stats_ratio(ns[k], (double)v->commits);
		v->tail_mean[k] = stats_ratio(tail_ns[k], (double)v->tail_commits);
	}
}

uint64_t
stats_waits_class_min(unsigned c)
{
	return stats_loglin_lower(c, DTXN_WAIT_SUB);
}
