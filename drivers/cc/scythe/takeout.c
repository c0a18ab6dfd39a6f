/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The Takeout Lock's rules on the MN (scythe.md §2, Fig. 13/14; §3.2):
 * whether a Lock(ts, mode) request is refused, deferred, granted or
 * queued, and the order in which the MN serves one batch of requests
 * (Fig. 16). Pure functions: the MN service (mnsvc.c) and the unit tests
 * (test/unit/test_scythe.c) use them.
 */
#include <stdlib.h>

#include "scythe_private.h"

uint8_t
scythe_takeout_decide(uint16_t lower, uint16_t upper, uint64_t queued_ts, uint64_t ts,
		      uint8_t mode, bool deferred, const struct scythe_opts *o)
{
	uint16_t q = (uint16_t)(lower - upper); /* CurrentQueuedTxnNum (Eq. 1), mod 2^16 */

	/* Fig. 14, line 5-6: the three refusals */
	if (ts < queued_ts)
		return SCYTHE_LK_REJ_TS;
	if (mode == SCYTHE_COLD && q > o->cold_wm)
		return SCYTHE_LK_REJ_COLD;
	if (q > o->hot_wm)
		return SCYTHE_LK_REJ_HOT;
	/*
	 * §3.2 (Aurogon's heuristic wait): a HOT request that finds
	 * ColdWatermark < queue < HotWatermark waits about 20 us before it
	 * retries, so that requests with smaller timestamps still in flight
	 * queue first. The wait is the CN's (the MN CPU does not hold
	 * requests), once per request: a deferred request is queued.
	 */
	if (mode == SCYTHE_HOT && o->band_us != 0 && !deferred && q > o->cold_wm &&
	    q < o->hot_wm)
		return SCYTHE_LK_DEFER;
	return q == 0 ? SCYTHE_LK_GRANTED : SCYTHE_LK_QUEUED;
}

static int
takeout_cmp(const void *a, const void *b)
{
	const struct scythe_batch_ent *x = a, *y = b;

	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->msg != y->msg)
		return x->msg < y->msg ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

void
scythe_batch_sort(struct scythe_batch_ent *e, unsigned n)
{
	if (n > 1)
		qsort(e, n, sizeof(*e), takeout_cmp);
}
