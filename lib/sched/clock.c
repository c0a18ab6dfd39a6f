/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The clock: TSC-backed real time, or virtual time for the simulator.
 *
 * Real time is ns = (tsc - tsc_base) * mult >> shift with a 64x64->128-bit
 * product, so it neither overflows nor loses precision for centuries.
 * This file and its inline readers in dtxn_sched.h (dtxn_clock_real_ns(),
 * dtxn_cpu_cycles() for CPU accounting) are the only places in dtxn that
 * read the TSC.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>

#include <rte_cycles.h>

#include "sched_private.h"

/* mult = 1e9 * 2^32 / hz: ~32 significant bits for a GHz TSC (error < 1 ppb). */
#define CLOCK_SHIFT 32
#define CLOCK_NS_PER_S UINT64_C(1000000000)

struct dtxn_clock g_dtxn_clock;

/* (a * b) >> shift on the full 128-bit product, 0 <= shift < 64. */
uint64_t
dtxn_clock_mul_shift(uint64_t a, uint64_t b, uint32_t shift)
{
#ifdef __SIZEOF_INT128__
	return (uint64_t)(((unsigned __int128)a * b) >> shift);
#else
	uint64_t a_lo = (uint32_t)a, a_hi = a >> 32;
	uint64_t b_lo = (uint32_t)b, b_hi = b >> 32;
	uint64_t ll = a_lo * b_lo, lh = a_lo * b_hi, hl = a_hi * b_lo, hh = a_hi * b_hi;
	uint64_t mid = (ll >> 32) + (uint32_t)lh + (uint32_t)hl;
	uint64_t lo = (mid << 32) | (uint32_t)ll;
	uint64_t hi = hh + (lh >> 32) + (hl >> 32) + (mid >> 32);

	if (shift == 0)
		return lo;
	return (hi << (64 - shift)) | (lo >> shift);
#endif
}

uint64_t
dtxn_cycles_to_ns(uint64_t cycles)
{
	return dtxn_clock_mul_shift(cycles, g_dtxn_clock.mult, g_dtxn_clock.shift);
}

int
dtxn_clock_init(void)
{
	uint64_t hz = rte_get_tsc_hz();
	uint64_t mult;

	if (hz == 0) {
		SCHED_LOG(ERR, "EAL reports a TSC frequency of 0; no real-time clock");
		return -ENOTSUP;
	}
	/* A second call must not move time backwards. */
	if (g_dtxn_clock.mult != 0)
		return 0;
	/* mult = 1e9 * 2^shift / hz, rounded; fits 64 bits for any hz >= 1. */
#ifdef __SIZEOF_INT128__
	mult = (uint64_t)((((unsigned __int128)CLOCK_NS_PER_S << CLOCK_SHIFT) + hz / 2) / hz);
#else
	mult = (uint64_t)(((double)CLOCK_NS_PER_S * (double)(UINT64_C(1) << CLOCK_SHIFT)) /
			  (double)hz + 0.5);
#endif
	g_dtxn_clock.shift = CLOCK_SHIFT;
	g_dtxn_clock.mult = mult;
	g_dtxn_clock.tsc_base = rte_get_tsc_cycles();
	SCHED_LOG(DEBUG, "clock: tsc %" PRIu64 " Hz, mult %" PRIu64 " shift %u",
		  hz, mult, CLOCK_SHIFT);
	return 0;
}

void
dtxn_clock_set_virtual(uint64_t start_ns)
{
	__atomic_store_n(&g_dtxn_clock.vnow_ns, start_ns, __ATOMIC_RELAXED);
	g_dtxn_clock.virtual_time = true;
}

void
dtxn_clock_advance(uint64_t t_ns)
{
	uint64_t cur = __atomic_load_n(&g_dtxn_clock.vnow_ns, __ATOMIC_RELAXED);

	while (t_ns > cur &&
	       !__atomic_compare_exchange_n(&g_dtxn_clock.vnow_ns, &cur, t_ns, true,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

/* Per-node clocks (dtxn_clock_set_node()); set before the run, read-only after. */
static struct {
	int64_t offset_ns;
	int64_t drift_ppm;
	uint64_t t_set;
	bool set;
} g_node_clock[DTXN_CLOCK_MAX_NODES];

int
dtxn_clock_set_node(unsigned node, int64_t offset_ns, int32_t drift_ppm)
{
	if (node >= DTXN_CLOCK_MAX_NODES || drift_ppm <= -1000000 || drift_ppm >= 1000000)
		return -EINVAL;
	g_node_clock[node].offset_ns = offset_ns;
	g_node_clock[node].drift_ppm = drift_ppm;
	g_node_clock[node].t_set = dtxn_now_ns();
	g_node_clock[node].set = offset_ns != 0 || drift_ppm != 0;
	return 0;
}

uint64_t
dtxn_node_now_ns(unsigned node)
{
	uint64_t now = dtxn_now_ns(), d;
	int64_t drift;

	if (node >= DTXN_CLOCK_MAX_NODES || !g_node_clock[node].set)
		return now;
	d = now - g_node_clock[node].t_set;
	/* d * ppm in two parts: no overflow for any run length */
	drift = (int64_t)d / 1000000 * g_node_clock[node].drift_ppm +
		(int64_t)(d % 1000000) * g_node_clock[node].drift_ppm / 1000000;
	return now + (uint64_t)g_node_clock[node].offset_ns + (uint64_t)drift;
}
