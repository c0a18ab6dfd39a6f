/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The crash report (issue 31, "every crash explained"; doc/guides/
 * testing.md, "Crashes"): on SIGSEGV, SIGBUS, SIGILL, SIGFPE or SIGABRT,
 * dtxn-app writes one line naming the signal, its pid and the thread,
 * then the thread's backtrace, to stderr (the node's log under
 * dtxn-cluster, which prints that block when a node dies by a signal),
 * and dies of the same signal (the default action: a core dump where
 * core_pattern and ulimit -c allow one). It runs on an alternate stack,
 * so a stack overflow is reported too. Only async-signal-safe calls, but
 * backtrace() itself, which is primed once at install (its first call
 * loads libgcc and may allocate). Not installed under ASan or UBSan: the
 * sanitizers report a crash with more than this.
 */
#include <execinfo.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal_memconfig.h>

#include "app.h"
#include "dtxn_fabric.h"
#include "dtxn_plock.h"
#include "dtxn_sched.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_UNDEFINED__)
#define CRASH_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(undefined_behavior_sanitizer)
#define CRASH_SANITIZED 1
#endif
#endif

#ifndef CRASH_SANITIZED
static const int crash_signals[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };

/* Writes @p s to stderr (async-signal-safe). */
static void
crash_puts(const char *s)
{
	size_t len = strlen(s);

	while (len > 0) {
		ssize_t n = write(STDERR_FILENO, s, len);

		if (n <= 0)
			return;
		s += n;
		len -= (size_t)n;
	}
}

/* Decimal of @p v into @p buf (async-signal-safe). */
static const char *
crash_dec(char buf[24], unsigned long v)
{
	char *p = buf + 23;

	*p = '\0';
	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	return p;
}

static void
crash_handler(int sig)
{
	void *frames[64];
	char num[24], name[16] = "";
	int n;

	(void)pthread_getname_np(pthread_self(), name, sizeof(name));
	crash_puts("dtxn-app: fatal signal ");
	crash_puts(crash_dec(num, (unsigned long)sig));
	crash_puts(" (");
	crash_puts(sigabbrev_np(sig) != NULL ? sigabbrev_np(sig) : "?");
	crash_puts("), pid ");
	crash_puts(crash_dec(num, (unsigned long)getpid()));
	crash_puts(", thread ");
	crash_puts(name[0] != '\0' ? name : "?");
	crash_puts("; backtrace:\n");
	n = backtrace(frames, (int)(sizeof(frames) / sizeof(frames[0])));
	backtrace_symbols_fd(frames, n, STDERR_FILENO);
	crash_puts("dtxn-app: end of backtrace\n");
	/* SA_RESETHAND restored the default action: die of the same signal */
	raise(sig);
}
#endif /* !CRASH_SANITIZED */

void
app_crash_report_install(void)
{
#ifndef CRASH_SANITIZED
	static uint8_t altstack[64 * 1024];
	stack_t ss = { .ss_sp = altstack, .ss_size = sizeof(altstack) };
	struct sigaction sa;
	void *prime[1];

	(void)backtrace(prime, 1); /* loads libgcc now, not in the handler */
	(void)sigaltstack(&ss, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = crash_handler;
	sa.sa_flags = SA_RESETHAND | SA_ONSTACK | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(crash_signals) / sizeof(crash_signals[0]); i++)
		(void)sigaction(crash_signals[i], &sa, NULL);
#endif
}

int
app_crash_test_aid(void)
{
	const char *v = getenv("DTXN_TEST_RAISE");

	if (v == NULL || v[0] == '\0')
		return 0;
	if (strcmp(v, "segv") == 0)
		raise(SIGSEGV);
	else if (strcmp(v, "abrt") == 0)
		abort();
	app_err("DTXN_TEST_RAISE '%s': expected segv or abrt (a test aid: doc/guides/testing.md, \"Crashes\")", v);
	return -1;
}

/* DTXN_TEST_STOP_IN=dpdk-tailq@NODE: armed at the run's start */
static bool stop_in_dpdk;

void
app_stop_in_test_aid_tick(uint64_t run_ns)
{
	if (!stop_in_dpdk || run_ns < 1000ull * 1000 * 1000)
		return;
	stop_in_dpdk = false;
	/* DPDK's own tailq lock (a plain rwlock in the shared rte_mem_config:
	 * no owner, not robust; every ring and mempool create and free takes
	 * it), taken and kept: the state a process killed inside a ring's
	 * create or free leaves (testing.md, "Shared locks"); its workers run on */
	rte_mcfg_tailq_write_lock();
	printf("dtxn: test aid: holding the dpdk-tailq lock (pid %d)\n", (int)getpid());
	fflush(stdout);
}

void
app_stop_in_test_aid(const struct app_conf *c)
{
	static char lock[64];
	const char *v = getenv("DTXN_TEST_STOP_IN");
	const char *at;
	size_t n;

	if (v == NULL || v[0] == '\0')
		return;
	at = strchr(v, '@');
	n = at != NULL ? (size_t)(at - v) : strlen(v);
	if ((at != NULL && strcmp(at + 1, c->node) != 0) || n == 0 || n >= sizeof(lock))
		return;
	memcpy(lock, v, n);
	lock[n] = '\0';
	if (strcmp(lock, "dpdk-tailq") == 0) {
		stop_in_dpdk = true; /* app_stop_in_test_aid_tick(), 1 s into the run */
		return;
	}
	dtxn_plock_test_stop_in(lock);
}

int
app_hold_wr_test_aid(const struct app_conf *c, struct dtxn_fabric *f)
{
	const char *v = getenv("DTXN_TEST_HOLD_WR");
	const char *at;
	char *end;
	unsigned long ms;

	if (v == NULL || v[0] == '\0')
		return 0;
	at = strchr(v, '@');
	ms = strtoul(v, &end, 10);
	if (at == NULL || end != at || ms < 1 || ms > 60000) {
		app_err("DTXN_TEST_HOLD_WR '%s': expected MS@NODE, MS of 1-60000 (a test aid: doc/guides/testing.md, \"Formerly unexplained failures\")",
			v);
		return -1;
	}
	if (strcmp(at + 1, c->node) != 0)
		return 0;
	return dtxn_fabric_test_hold_wr(f, (uint32_t)ms, dtxn_now_ns() + 500ull * 1000 * 1000);
}
