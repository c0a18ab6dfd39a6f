/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Per-type run counters (dtxn_stats.h, "Per-type counters"): reset, merge
 * after the run, the difference of two snapshots (warm-up exclusion), and
 * the relaxed totals the live line reads while workers still count.
 */
#include <string.h>

#include "stats_private.h"

void
dtxn_run_stats_reset(struct dtxn_run_stats *s, unsigned n_types)
{
	memset(s, 0, sizeof(*s));
	s->n_types = n_types > DTXN_STATS_MAX_TYPES ? DTXN_STATS_MAX_TYPES : n_types;
}

void
dtxn_run_stats_merge(struct dtxn_run_stats *dst, const struct dtxn_run_stats *src)
{
	unsigned n = src->n_types > DTXN_STATS_MAX_TYPES ? DTXN_STATS_MAX_TYPES : src->n_types;

	if (n > dst->n_types)
		dst->n_types = n;
	for (unsigned t = 0; t < n; t++) {
		struct dtxn_txn_stats *d = &dst->type[t];
		const struct dtxn_txn_stats *s = &src->type[t];

		d->commits += s->commits;
		d->attempts += s->attempts;
		d->rollbacks += s->rollbacks;
		for (unsigned r = 0; r < DTXN_STATS_MAX_REASONS; r++)
			d->aborts[r] += s->aborts[r];
		d->false_aborts += s->false_aborts;
		for (unsigned k = 0; k < DTXN_STATS_MAX_OPS; k++)
			d->verbs[k] += s->verbs[k];
		d->verb_bytes += s->verb_bytes;
		dtxn_hist_merge(&d->lat, &s->lat);
	}
	stats_waits_merge(&dst->waits, &src->waits);
}

static inline uint64_t
counters_load(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static void
counters_hist_snapshot(struct dtxn_hist *d, const struct dtxn_hist *s)
{
	d->count = counters_load(&s->count);
	d->sum = counters_load(&s->sum);
	d->min = counters_load(&s->min);
	d->max = counters_load(&s->max);
	for (unsigned i = 0; i < DTXN_HIST_BUCKETS; i++)
		d->b[i] = counters_load(&s->b[i]);
}

void
dtxn_run_stats_snapshot(struct dtxn_run_stats *d, const struct dtxn_run_stats *s)
{
	unsigned n = __atomic_load_n(&s->n_types, __ATOMIC_RELAXED);

	dtxn_run_stats_reset(d, n);
	for (unsigned t = 0; t < d->n_types; t++) {
		struct dtxn_txn_stats *o = &d->type[t];
		const struct dtxn_txn_stats *e = &s->type[t];

		o->commits = counters_load(&e->commits);
		o->attempts = counters_load(&e->attempts);
		o->rollbacks = counters_load(&e->rollbacks);
		for (unsigned r = 0; r < DTXN_STATS_MAX_REASONS; r++)
			o->aborts[r] = counters_load(&e->aborts[r]);
		o->false_aborts = counters_load(&e->false_aborts);
		for (unsigned k = 0; k < DTXN_STATS_MAX_OPS; k++)
			o->verbs[k] = counters_load(&e->verbs[k]);
		o->verb_bytes = counters_load(&e->verb_bytes);
		counters_hist_snapshot(&o->lat, &e->lat);
	}
	stats_waits_snapshot(&d->waits, &s->waits);
}

static inline uint64_t
counters_diff(uint64_t end, uint64_t start)
{
	return end >= start ? end - start : 0;
}

void
dtxn_run_stats_sub(struct dtxn_run_stats *d, const struct dtxn_run_stats *end,
		   const struct dtxn_run_stats *start)
{
	unsigned n = end->n_types > DTXN_STATS_MAX_TYPES ? DTXN_STATS_MAX_TYPES : end->n_types;

	dtxn_run_stats_reset(d, n);
	for (unsigned t = 0; t < n; t++) {
		struct dtxn_txn_stats *o = &d->type[t];
		const struct dtxn_txn_stats *e = &end->type[t], *s = &start->type[t];

		o->commits = counters_diff(e->commits, s->commits);
		o->attempts = counters_diff(e->attempts, s->attempts);
		o->rollbacks = counters_diff(e->rollbacks, s->rollbacks);
		for (unsigned r = 0; r < DTXN_STATS_MAX_REASONS; r++)
			o->aborts[r] = counters_diff(e->aborts[r], s->aborts[r]);
		o->false_aborts = counters_diff(e->false_aborts, s->false_aborts);
		for (unsigned k = 0; k < DTXN_STATS_MAX_OPS; k++)
			o->verbs[k] = counters_diff(e->verbs[k], s->verbs[k]);
		o->verb_bytes = counters_diff(e->verb_bytes, s->verb_bytes);
		dtxn_hist_sub(&o->lat, &e->lat, &s->lat);
	}
	stats_waits_sub(&d->waits, &end->waits, &start->waits);
}

void
dtxn_run_stats_totals(const struct dtxn_run_stats *s, uint64_t *commits,
		      uint64_t *attempts, uint64_t *aborts)
{
	uint64_t c = 0, a = 0, ab = 0;
	unsigned n = __atomic_load_n(&s->n_types, __ATOMIC_RELAXED);

	if (n > DTXN_STATS_MAX_TYPES)
		n = DTXN_STATS_MAX_TYPES;
	for (unsigned t = 0; t < n; t++) {
		const struct dtxn_txn_stats *ts = &s->type[t];

		c += __atomic_load_n(&ts->commits, __ATOMIC_RELAXED);
		a += __atomic_load_n(&ts->attempts, __ATOMIC_RELAXED);
		for (unsigned r = 0; r < DTXN_STATS_MAX_REASONS; r++)
			ab += __atomic_load_n(&ts->aborts[r], __ATOMIC_RELAXED);
	}
	if (commits != NULL)
		*commits = c;
	if (attempts != NULL)
		*attempts = a;
	if (aborts != NULL)
		*aborts = ab;
}
