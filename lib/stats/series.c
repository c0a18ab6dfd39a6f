/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A run's throughput series (dtxn_stats.h, "Interval throughput"): one
 * entry per interval, from cumulative totals sampled at its end.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats_private.h"

/** Samples closer than this to the last one are ignored, s. */
#define SERIES_EPS_S 1e-9

int
dtxn_series_init(struct dtxn_series *s, double interval_s, double warmup_s)
{
	if (s == NULL || !(interval_s > 0) || !isfinite(interval_s) || !(warmup_s >= 0) ||
	    !isfinite(warmup_s))
		return -EINVAL;
	memset(s, 0, sizeof(*s));
	s->interval_s = interval_s;
	s->warmup_s = warmup_s;
	s->warm_done = !(warmup_s > 0);
	return 0;
}

static inline uint64_t
series_diff(uint64_t now, uint64_t before)
{
	return now >= before ? now - before : 0;
}

int
dtxn_series_sample(struct dtxn_series *s, double t_s, uint64_t commits, uint64_t attempts,
		   uint64_t aborts)
{
	struct dtxn_interval *e;

	if (s == NULL || !(t_s > s->last_t_s + SERIES_EPS_S))
		return 0;
	if (s->n == s->cap) {
		unsigned cap = s->cap ? s->cap * 2 : 64;
		struct dtxn_interval *v = realloc(s->v, sizeof(*v) * cap);

		if (v == NULL) {
			STATS_LOG(WARNING, "series: out of memory, interval at %.3f s dropped", t_s);
			return -ENOMEM;
		}
		s->v = v;
		s->cap = cap;
	}
	e = &s->v[s->n++];
	e->t_s = t_s;
	e->seconds = t_s - s->last_t_s;
	e->commits = series_diff(commits, s->last_commits);
	e->attempts = series_diff(attempts, s->last_attempts);
	e->aborts = series_diff(aborts, s->last_aborts);
	e->warmup = !s->warm_done;
	s->last_t_s = t_s;
	s->last_commits = commits;
	s->last_attempts = attempts;
	s->last_aborts = aborts;
	return 0;
}

int
dtxn_series_end_warmup(struct dtxn_series *s, double t_s, uint64_t commits, uint64_t attempts,
		       uint64_t aborts)
{
	int rc;

	if (s == NULL || s->warm_done)
		return 0;
	rc = dtxn_series_sample(s, t_s, commits, attempts, aborts);
	s->warm_done = true;
	return rc;
}

void
dtxn_series_free(struct dtxn_series *s)
{
	if (s == NULL)
		return;
	free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
}
