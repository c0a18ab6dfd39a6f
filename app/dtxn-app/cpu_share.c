/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The share of the wall time a worker thread ran (cpu_share.h): the
 * thread's CPU clock read from the main lcore at the two ends of the
 * measured window.
 */
#include <pthread.h>

#include "dtxn_sched.h"
#include "cpu_share.h"

void
app_cpu_share_attach(struct app_cpu_share *s)
{
	clockid_t c;

	if (pthread_getcpuclockid(pthread_self(), &c) != 0)
		return;
	s->clock = c;
	__atomic_store_n(&s->ready, 1, __ATOMIC_RELEASE);
}

void
app_cpu_share_mark(struct app_cpu_share *s, bool end)
{
	struct timespec ts;
	uint64_t cpu, wall;

	if (!__atomic_load_n(&s->ready, __ATOMIC_ACQUIRE) || (end && !s->started) ||
	    clock_gettime(s->clock, &ts) != 0)
		return;
	cpu = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	wall = dtxn_now_ns();
	if (end) {
		s->cpu1 = cpu;
		s->wall1 = wall;
		s->ended = true;
	} else {
		s->cpu0 = cpu;
		s->wall0 = wall;
		s->started = true;
		s->ended = false;
	}
}

double
app_cpu_share_ratio(const struct app_cpu_share *s)
{
	double r;

	if (!s->started || !s->ended || s->wall1 <= s->wall0 || s->cpu1 < s->cpu0)
		return 1.0;
	r = (double)(s->cpu1 - s->cpu0) / (double)(s->wall1 - s->wall0);
	return r > 1.0 ? 1.0 : r;
}
