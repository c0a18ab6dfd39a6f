/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A lock shared by the processes of one host that survives its holder's
 * death (dtxn_plock.h): the holder's pid in the lock word, a takeover by
 * CAS from a dead pid.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_log.h>
#include <rte_pause.h>

#include "dtxn_plock.h"

RTE_LOG_REGISTER(dtxn_plock_logtype, dtxn.plock, NOTICE);

#define PLOCK_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_##level, dtxn_plock_logtype, "dtxn.plock: " fmt "\n", ##__VA_ARGS__)

/** Pauses before a waiter first looks its holder up, and between looks it sleeps. */
#define PLOCK_SPINS 1024
/** Sleep between two looks at a live holder, ns. */
#define PLOCK_SLEEP_NS 100000

void
dtxn_plock_init(dtxn_plock_t *l)
{
	memset(l, 0, sizeof(*l));
}

/* The lock name the test aid stops in (dtxn_plock_test_stop_in()), or NULL. */
static const char *plock_stop_in;

void
dtxn_plock_test_stop_in(const char *name)
{
	__atomic_store_n(&plock_stop_in, name, __ATOMIC_RELEASE);
}

/* The test aid: holding the lock named @p name, stop here for good. */
static void
plock_test_stop(const char *name)
{
	const char *v = __atomic_load_n(&plock_stop_in, __ATOMIC_ACQUIRE);

	if (v == NULL || name == NULL || strcmp(v, name) != 0)
		return;
	printf("dtxn: test aid: holding the %s lock (pid %d)\n", name, (int)getpid());
	fflush(stdout);
	for (;;)
		pause();
}

enum dtxn_plock_got
dtxn_plock_lock(dtxn_plock_t *l, const char *name)
{
	const int32_t self = (int32_t)getpid();
	const struct timespec nap = { 0, PLOCK_SLEEP_NS };
	enum dtxn_plock_got got = DTXN_PLOCK_OK;

	for (unsigned spins = 0;; spins++) {
		int32_t cur = 0;

		if (__atomic_compare_exchange_n(&l->holder, &cur, self, false, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			break;
		if (spins < PLOCK_SPINS || cur == 0) {
			rte_pause();
			continue;
		}
		if (cur != self && dtxn_proc_state(cur) == DTXN_PROC_GONE &&
		    __atomic_compare_exchange_n(&l->holder, &cur, self, false, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED)) {
			__atomic_fetch_add(&l->takeovers, 1, __ATOMIC_RELAXED);
			PLOCK_LOG(WARNING, "the %s lock: its holder, process %d, is gone: taken over by %d",
				  name != NULL ? name : "shared", (int)cur, (int)self);
			got = DTXN_PLOCK_TAKEN_OVER;
			break;
		}
		nanosleep(&nap, NULL);
	}
	plock_test_stop(name);
	return got;
}

void
dtxn_plock_unlock(dtxn_plock_t *l)
{
	int32_t self = (int32_t)getpid();

	if (!__atomic_compare_exchange_n(&l->holder, &self, 0, false, __ATOMIC_RELEASE,
					 __ATOMIC_RELAXED))
		PLOCK_LOG(ERR, "unlock by process %d of a lock held by %d: ignored", (int)getpid(),
			  (int)self);
}

bool
dtxn_plock_held(const dtxn_plock_t *l)
{
	return __atomic_load_n(&l->holder, __ATOMIC_RELAXED) == (int32_t)getpid();
}
