/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DTXN_APP_CPU_SHARE_H
#define DTXN_APP_CPU_SHARE_H

/**
 * @file
 * How much of the wall time a worker lcore's thread really ran, from the
 * OS's CPU clock of that thread (doc/guides/report.md, "CPU per
 * transaction"). The busy time of a worker's loop (dtxn_worker_cpu()) is
 * counted with the TSC, so on a shared host it also counts the time the
 * OS gave the lcore's core to another process; the report scales it by
 * this share. Two clock reads per window, from the main lcore; nothing on
 * the worker's hot path.
 */

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

/** One worker thread's CPU clock and the window it is measured over. */
struct app_cpu_share {
	clockid_t clock;      /**< the thread's CPU clock (pthread_getcpuclockid()) */
	int ready;            /**< clock is set (the worker stores it, release) */
	bool started, ended;  /**< the window's two ends are taken */
	uint64_t cpu0, wall0; /**< at its start: thread CPU ns, dtxn_now_ns() */
	uint64_t cpu1, wall1; /**< at its end */
};

/**
 * Called by the worker thread itself, first thing: makes its CPU clock
 * readable from the main lcore. Without one (the OS refuses) the share
 * stays unknown and the report keeps the TSC figures.
 */
void app_cpu_share_attach(struct app_cpu_share *s);

/**
 * Main lcore: starts the window now (again: a later start, e.g. at the
 * warm-up's end, replaces an earlier one), or with @p end ends it. A
 * no-op until the worker attached, and an end with no start.
 */
void app_cpu_share_mark(struct app_cpu_share *s, bool end);

/**
 * @return the share of the window's wall time the thread ran, 0..1; 1
 *   when unknown (no clock, window not closed or empty).
 */
double app_cpu_share_ratio(const struct app_cpu_share *s);

#endif /* DTXN_APP_CPU_SHARE_H */
