/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A bound on the two windows in which a process of a cluster can still
 * wait for ever on a lock a dead process left in DPDK's shared memory
 * (the heap's spinlock, the memory hotplug lock: doc/guides/testing.md,
 * "Shared locks"): its own start-up and its tear-down, the only times it
 * allocates from or frees to that heap. alarm(2); the handler writes the
 * line prepared when it was armed and exits with the status chosen then
 * (async-signal-safe calls only).
 */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_common.h>

#include "app.h"

static char wd_line[384];
static size_t wd_len;
static volatile sig_atomic_t wd_status;

static void
wd_fire(int sig)
{
	(void)sig;
	if (write(STDERR_FILENO, wd_line, wd_len) < 0) {
		/* nothing more to say */
	}
	_exit(wd_status);
}

void
app_watchdog_arm(unsigned seconds, int status, const char *fmt, ...)
{
	struct sigaction sa;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(wd_line, sizeof(wd_line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	wd_len = RTE_MIN((size_t)n, sizeof(wd_line) - 2);
	wd_line[wd_len++] = '\n';
	wd_status = status;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = wd_fire;
	sigemptyset(&sa.sa_mask);
	(void)sigaction(SIGALRM, &sa, NULL);
	alarm(seconds);
}

void
app_watchdog_disarm(void)
{
	alarm(0);
}

void
app_watchdog_teardown(const char *node, int status)
{
	app_watchdog_arm(APP_TEARDOWN_WATCHDOG_S, status,
			 "dtxn-app: --node %s: tear-down not done after %u s (a lock in DPDK's shared memory held by a process that died inside it?): exiting with the run's status %d",
			 node, APP_TEARDOWN_WATCHDOG_S, status);
}
