/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Log-linear latency histogram (dtxn_stats.h, "Histogram").
 *
 * Bucket i < 2^SUB holds exactly the value i. Above, a value v with its
 * highest set bit at position m (m >= SUB) falls in group g = m - SUB + 1,
 * which splits [2^m, 2^(m+1)) into 2^SUB equal sub-buckets of width
 * 2^(m-SUB): i = g * 2^SUB + (v >> (m - SUB)) - 2^SUB. Group 1 (m = SUB)
 * still has width 1, so values below 2^(SUB+1) are exact. A bucket's width
 * is at most 1/2^SUB of its lower bound, hence the relative error.
 */
#include <math.h>
#include <string.h>

#include <rte_common.h>

#include "stats_private.h"

#define HIST_SUB_N (UINT64_C(1) << DTXN_HIST_SUB)
#define HIST_SUB_MASK (HIST_SUB_N - 1)

_Static_assert(DTXN_HIST_SUB >= 1 && DTXN_HIST_SUB < 32, "DTXN_HIST_SUB out of range");
/* The largest value, 2^64-1, must land in the last bucket. */
_Static_assert(((64 - DTXN_HIST_SUB) << DTXN_HIST_SUB) + HIST_SUB_MASK ==
	       DTXN_HIST_BUCKETS - 1, "DTXN_HIST_BUCKETS does not match DTXN_HIST_SUB");

static inline unsigned
hist_index(uint64_t v)
{
	return stats_loglin_index(v, DTXN_HIST_SUB);
}

/* Largest value that falls in bucket i. */
static inline uint64_t
hist_upper(unsigned i)
{
	if (i < HIST_SUB_N)
		return i;
	return stats_loglin_lower(i, DTXN_HIST_SUB) + ((UINT64_C(1) << ((i >> DTXN_HIST_SUB) - 1u)) - 1u);
}

uint64_t
dtxn_hist_bucket_max(unsigned i)
{
	return i < DTXN_HIST_BUCKETS ? hist_upper(i) : UINT64_MAX;
}

void
dtxn_hist_reset(struct dtxn_hist *h)
{
	memset(h, 0, sizeof(*h));
}

void
dtxn_hist_add(struct dtxn_hist *h, uint64_t ns)
{
	if (h->count == 0 || ns < h->min)
		h->min = ns;
	if (ns > h->max)
		h->max = ns;
	h->count++;
	h->sum += ns;
	h->b[hist_index(ns)]++;
}

void
dtxn_hist_merge(struct dtxn_hist *dst, const struct dtxn_hist *src)
{
	if (src->count == 0)
		return;
	if (dst->count == 0 || src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
	dst->count += src->count;
	dst->sum += src->sum;
	for (unsigned i = 0; i < DTXN_HIST_BUCKETS; i++)
		dst->b[i] += src->b[i];
}

/* Smallest value that falls in bucket i. */
static inline uint64_t
hist_lower(unsigned i)
{
	return stats_loglin_lower(i, DTXN_HIST_SUB);
}

void
dtxn_hist_sub(struct dtxn_hist *d, const struct dtxn_hist *end, const struct dtxn_hist *start)
{
	unsigned first = DTXN_HIST_BUCKETS, last = 0;

	dtxn_hist_reset(d);
	for (unsigned i = 0; i < DTXN_HIST_BUCKETS; i++) {
		uint64_t n = end->b[i] >= start->b[i] ? end->b[i] - start->b[i] : 0;

		d->b[i] = n;
		d->count += n;
		if (n != 0) {
			if (first == DTXN_HIST_BUCKETS)
				first = i;
			last = i;
		}
	}
	if (d->count == 0)
		return;
	d->sum = end->sum >= start->sum ? end->sum - start->sum : 0;
	/* the extremes of the difference, to the buckets' precision */
	d->min = RTE_MAX(hist_lower(first), end->min);
	d->max = RTE_MIN(hist_upper(last), end->max);
	if (d->min > d->max)
		d->min = d->max;
}

uint64_t
dtxn_hist_percentile(const struct dtxn_hist *h, double p)
{
	if (h->count == 0)
		return 0;
	if (!(p > 0.0)) /* also NaN */
		p = 0.0;
	if (p > 100.0)
		p = 100.0;

	/* rank: how many values must be <= the answer, 1..count */
	double x = p * (double)h->count / 100.0;
	uint64_t rank = (uint64_t)ceil(x - x * 1e-12);
	if (rank < 1)
		rank = 1;
	if (rank > h->count)
		rank = h->count;

	uint64_t seen = 0;
	for (unsigned i = 0; i < DTXN_HIST_BUCKETS; i++) {
		seen += h->b[i];
		if (seen >= rank) {
			uint64_t v = hist_upper(i);
			if (v > h->max)
				v = h->max;
			if (v < h->min)
				v = h->min;
			return v;
		}
	}
	return h->max; /* buckets and count disagree: never with this API */
}

double
dtxn_hist_mean(const struct dtxn_hist *h)
{
	if (h->count == 0)
		return 0.0;
	return (double)h->sum / (double)h->count;
}
