/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Room for inserted rows (bench_room.h): Poisson sizing of growing tables
 * and the give-up rule for inserts that find their home bucket full.
 */
#include <math.h>
#include <stdint.h>

#include "bench_private.h"
#include "bench_room.h"

/* Set once the first transaction was given up (one log line per process). */
static int g_room_warned;

/* P(Poisson(lam) >= s), summed in log space from k = s (the tail is tiny). */
static double
room_tail(double lam, uint32_t s)
{
	double sum = 0;

	for (uint32_t k = s; k < s + 400; k++) {
		double term = exp(-lam + (double)k * log(lam) - lgamma((double)k + 1));

		sum += term;
		if (term < sum * 1e-12)
			break;
	}
	return sum;
}

uint64_t
bench_room_buckets(uint64_t rows, uint32_t slots, double p_full)
{
	double lo = 0, hi = slots == 0 ? 1 : slots;
	uint64_t n;

	if (rows == 0 || slots == 0)
		return 1;
	if (!(p_full > 0 && p_full < 1))
		p_full = 1e-6;
	/* the largest mean load lam with tail(lam) <= p_full: bisection */
	for (int i = 0; i < 60; i++) {
		double mid = (lo + hi) / 2;

		if (room_tail(mid, slots) <= p_full)
			lo = mid;
		else
			hi = mid;
	}
	if (lo <= 0)
		lo = 1e-3;
	n = (uint64_t)ceil((double)rows / lo);
	return n == 0 ? 1 : n;
}

uint64_t
bench_room_cap(uint64_t rows, uint64_t parts, double p_full)
{
	double lam;
	uint64_t s;

	if (rows == 0 || parts == 0)
		return 1;
	if (!(p_full > 0 && p_full < 1))
		p_full = 1e-6;
	lam = (double)rows / (double)parts;
	/* P(Poisson(lam) >= s + 1) falls with s: the first s within p_full */
	for (s = (uint64_t)lam; room_tail(lam, (uint32_t)(s + 1)) > p_full; s++)
		;
	return s == 0 ? 1 : s;
}

int
bench_room_outcome(struct dtxn_bench_ctx *ctx, int rc, const char *bench)
{
	uint64_t packed, streak;

	if (rc != DTXN_ABORT(DTXN_ABORT_INDEX_FULL))
		return rc;
	packed = (uint64_t)ctx->acc[BENCH_ROOM_ACC];
	streak = (packed >> 8) == ctx->done ? (packed & 0xff) + 1 : 1;
	__atomic_store_n(&ctx->acc[BENCH_ROOM_ACC], (int64_t)((ctx->done << 8) | streak),
			 __ATOMIC_RELAXED);
	if (streak < BENCH_ROOM_TRIES)
		return rc;
	if (__atomic_exchange_n(&g_room_warned, 1, __ATOMIC_RELAXED) == 0)
		BENCH_LOG(WARNING, "%s: a table that grows is full; transactions that cannot insert are given up after %u index_full aborts and counted as rollbacks (give the tables more room)\n",
			  bench, BENCH_ROOM_TRIES);
	return DTXN_BENCH_ROLLBACK;
}
