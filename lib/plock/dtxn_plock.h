/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DTXN_PLOCK_H
#define DTXN_PLOCK_H

/**
 * @file
 * A lock in memory that the processes of one host share (a memzone of the
 * shm fabric's DPDK multi-process cluster), which survives the death of
 * its holder (issue 31 item 2, doc/guides/testing.md "Shared locks").
 *
 * A plain spinlock in shared memory wedges every other process for good
 * when its holder is SIGKILLed inside the critical section. A plock holds
 * the holder's pid instead of a bit: a waiter that has spun a while looks
 * the holder up (dtxn_proc_state()) and, once that process is gone, takes
 * the lock over with one CAS from the dead pid to its own, and is told so
 * (DTXN_PLOCK_TAKEN_OVER): the protected state may then be half-updated,
 * and the caller repairs or tolerates it. Only processes of one host (one
 * pid namespace) may share a plock: across hosts nothing shares memory.
 *
 * For control paths (a few acquisitions per process start, restart and
 * recovery), not for data paths: a waiter spins, then sleeps 100 us
 * between looks.
 *
 * Test aid: dtxn_plock_test_stop_in() makes this process stop for good
 * inside the next critical section of a named plock it enters, so that a
 * test can SIGKILL it there and show that the others carry on.
 */

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A process lock: zero-initialised memory is an unlocked plock. */
typedef struct {
	int32_t holder;     /**< pid of the holder, 0: free */
	uint32_t takeovers; /**< times it was taken over from a dead holder */
} dtxn_plock_t;

/** What dtxn_plock_lock() did. */
enum dtxn_plock_got {
	DTXN_PLOCK_OK = 0,         /**< taken from a free lock */
	DTXN_PLOCK_TAKEN_OVER = 1, /**< taken from a dead holder: its update may be half done */
};

/** Sets @p l unlocked (same as zeroing it). Not thread-safe with users of @p l. */
void dtxn_plock_init(dtxn_plock_t *l);

/**
 * Takes @p l for this process, waiting while a live process holds it.
 *
 * @param l     the lock, in memory every process sharing it maps.
 * @param name  what it protects, for the takeover's log line and the
 *              test aid (dtxn_plock_test_stop_in()); not stored; may be NULL.
 * @return DTXN_PLOCK_OK, or DTXN_PLOCK_TAKEN_OVER when the holder was a
 *         process that is gone (dtxn_proc_state() DTXN_PROC_GONE): a log
 *         line names it. Never fails; it waits as long as a live (or
 *         stopped) holder keeps the lock. Not recursive: a process must
 *         not take a plock it holds (two threads of one process share one
 *         pid and serialise correctly, but a thread dying alone is not
 *         detected).
 * Thread-safe and process-safe.
 */
enum dtxn_plock_got dtxn_plock_lock(dtxn_plock_t *l, const char *name);

/**
 * Releases @p l, which this process holds (a release by another process
 * is ignored, with a log line: its holder is not this process).
 * Thread-safe and process-safe.
 */
void dtxn_plock_unlock(dtxn_plock_t *l);

/** @return whether this process holds @p l. Thread-safe. */
bool dtxn_plock_held(const dtxn_plock_t *l);

/**
 * TEST AID: from now on, this process, once it holds a plock named
 * @p name (the @p name of dtxn_plock_lock()), prints "dtxn: test aid:
 * holding the NAME lock (pid P)" on stdout and sleeps there for good
 * (pause()), to be SIGKILLed inside the critical section.
 *
 * @param name  the lock's name, kept (not copied): a string that outlives
 *              the process's use of plocks; NULL disarms.
 * Not thread-safe with itself; dtxn_plock_lock() reads it atomically.
 */
void dtxn_plock_test_stop_in(const char *name);

/** How far a process is from gone (dtxn_proc_state()). */
enum dtxn_proc_state {
	DTXN_PROC_GONE,  /**< no such process, or a zombie: none of its threads runs */
	DTXN_PROC_DYING, /**< SIGKILL pending: its threads are being torn down */
	DTXN_PROC_LIVE,  /**< running, sleeping or stopped (SIGSTOP): it may run again */
};

/**
 * @return whether process @p pid exists (kill(pid, 0) succeeds or says
 * EPERM): a zombie exists. false for @p pid <= 0. Thread-safe.
 */
bool dtxn_proc_alive(int32_t pid);

/**
 * How far process @p pid is from gone, from /proc/PID/stat (state Z or X:
 * gone) and /proc/PID/status (SIGKILL in ShdPnd or SigPnd: dying). A
 * SIGKILLed process with gigabytes of hugepages mapped takes a while to
 * tear down, and its parent reaps it when it is scheduled: kill(pid, 0)
 * says it lives until then. Linux only; an unreadable /proc says LIVE.
 *
 * @param pid  a process id of this host's pid namespace.
 * @return DTXN_PROC_GONE, DTXN_PROC_DYING or DTXN_PROC_LIVE.
 * Thread-safe (no state).
 */
enum dtxn_proc_state dtxn_proc_state(int32_t pid);

#ifdef __cplusplus
}
#endif

#endif /* DTXN_PLOCK_H */
