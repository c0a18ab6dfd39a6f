/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/plock: a lock shared between processes that survives its holder's
 * death (dtxn_plock.h), and the process liveness check. Real processes
 * (fork) on a MAP_SHARED page; no EAL.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "dtxn_plock.h"

/* A lock on a page the children share. */
static dtxn_plock_t *
shared_lock(void)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	assert_true(p != MAP_FAILED);
	dtxn_plock_init(p);
	return p;
}

/* Forks a child that takes @p l, tells the parent through @p fd and sleeps
 * (or, with @p exit_holding, exits at once holding it). */
static pid_t
child_holding(dtxn_plock_t *l, bool exit_holding)
{
	int fd[2];
	char b;
	pid_t pid;

	assert_int_equal(pipe(fd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(fd[0]);
		dtxn_plock_lock(l, "test");
		if (write(fd[1], "x", 1) != 1)
			_exit(2);
		if (exit_holding)
			_exit(0);
		for (;;)
			pause();
	}
	close(fd[1]);
	assert_int_equal(read(fd[0], &b, 1), 1);
	close(fd[0]);
	return pid;
}

static void
test_lock_unlock(void **state)
{
	dtxn_plock_t *l = shared_lock();

	(void)state;
	assert_false(dtxn_plock_held(l));
	assert_int_equal(dtxn_plock_lock(l, "test"), DTXN_PLOCK_OK);
	assert_true(dtxn_plock_held(l));
	assert_int_equal(l->holder, getpid());
	dtxn_plock_unlock(l);
	assert_false(dtxn_plock_held(l));
	assert_int_equal(l->holder, 0);
	assert_int_equal(l->takeovers, 0);
	munmap(l, 4096);
}

/* A holder SIGKILLed inside: the next taker takes it over, and says so. */
static void
test_takeover_after_sigkill(void **state)
{
	dtxn_plock_t *l = shared_lock();
	pid_t pid = child_holding(l, false);
	int st;

	(void)state;
	assert_int_equal(l->holder, pid);
	assert_int_equal(dtxn_proc_state(pid), DTXN_PROC_LIVE);
	assert_int_equal(kill(pid, SIGKILL), 0);
	/* not reaped yet: a zombie, which kill(pid, 0) still finds */
	while (dtxn_proc_state(pid) != DTXN_PROC_GONE)
		usleep(1000);
	assert_true(dtxn_proc_alive(pid));
	assert_int_equal(dtxn_plock_lock(l, "test"), DTXN_PLOCK_TAKEN_OVER);
	assert_true(dtxn_plock_held(l));
	assert_int_equal(l->takeovers, 1);
	dtxn_plock_unlock(l);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	assert_false(dtxn_proc_alive(pid));
	assert_int_equal(dtxn_proc_state(pid), DTXN_PROC_GONE);
	munmap(l, 4096);
}

/* A holder that exited (reaped) without releasing: taken over too. */
static void
test_takeover_after_exit(void **state)
{
	dtxn_plock_t *l = shared_lock();
	pid_t pid = child_holding(l, true);
	int st;

	(void)state;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_int_equal(l->holder, pid);
	assert_int_equal(dtxn_plock_lock(l, "test"), DTXN_PLOCK_TAKEN_OVER);
	assert_int_equal(l->holder, getpid());
	dtxn_plock_unlock(l);
	munmap(l, 4096);
}

/* A stopped holder is alive: never taken over, and its lock is not released by another. */
static void
test_stopped_holder_kept(void **state)
{
	dtxn_plock_t *l = shared_lock();
	pid_t pid = child_holding(l, false);
	int st;

	(void)state;
	assert_int_equal(kill(pid, SIGSTOP), 0);
	assert_int_equal(waitpid(pid, &st, WUNTRACED), pid);
	assert_true(WIFSTOPPED(st));
	assert_int_equal(dtxn_proc_state(pid), DTXN_PROC_LIVE);
	dtxn_plock_unlock(l); /* not ours: ignored */
	assert_int_equal(l->holder, pid);
	assert_false(dtxn_plock_held(l));
	assert_int_equal(kill(pid, SIGKILL), 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_int_equal(dtxn_plock_lock(l, "test"), DTXN_PLOCK_TAKEN_OVER);
	dtxn_plock_unlock(l);
	munmap(l, 4096);
}

/* Two processes hammer one counter under the lock: no update lost. */
static void
test_mutual_exclusion(void **state)
{
	dtxn_plock_t *l = shared_lock();
	volatile uint64_t *ctr = (volatile uint64_t *)(l + 1);
	const unsigned n = 20000;
	pid_t pid;
	int st;

	(void)state;
	*ctr = 0;
	pid = fork();
	assert_true(pid >= 0);
	for (unsigned i = 0; i < n; i++) {
		dtxn_plock_lock(l, "test");
		*ctr = *ctr + 1;
		dtxn_plock_unlock(l);
	}
	if (pid == 0)
		_exit(0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_int_equal(*ctr, 2 * n);
	assert_int_equal(l->takeovers, 0);
	munmap((void *)l, 4096);
}

static void
test_proc_state_edges(void **state)
{
	(void)state;
	assert_false(dtxn_proc_alive(0));
	assert_false(dtxn_proc_alive(-1));
	assert_true(dtxn_proc_alive(getpid()));
	assert_int_equal(dtxn_proc_state(getpid()), DTXN_PROC_LIVE);
	assert_int_equal(dtxn_proc_state(0), DTXN_PROC_GONE);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lock_unlock),
		cmocka_unit_test(test_takeover_after_sigkill),
		cmocka_unit_test(test_takeover_after_exit),
		cmocka_unit_test(test_stopped_holder_kept),
		cmocka_unit_test(test_mutual_exclusion),
		cmocka_unit_test(test_proc_state_edges),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
