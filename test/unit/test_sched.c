/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for lib/sched: ordering of coroutines, wait/complete through a
 * poller, timers, run/step, limits, bad arguments, and the clock (real and
 * virtual; the virtual-clock case runs last because it cannot be undone).
 */
#include <errno.h>
#include <fenv.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include <rte_errno.h>
#include <rte_memory.h>
#include <rte_mempool.h>

#include "dtxn_sched.h"
#include "unit_eal.h"

#define LOG_MAX 256

/* An event log written by coroutines and checked by the test body. */
struct ev_log {
	unsigned n;
	int ev[LOG_MAX];
};

static void
log_add(struct ev_log *l, int ev)
{
	if (l->n < LOG_MAX)
		l->ev[l->n++] = ev;
}

static struct dtxn_sched *
mk_sched(const char *name, unsigned max_cos)
{
	struct dtxn_sched *s = dtxn_sched_create(name, SOCKET_ID_ANY, max_cos, 16 * 1024);

	assert_non_null(s);
	return s;
}

/* ------------------------------------------------------------------ */
/* Ping-pong ordering                                                 */
/* ------------------------------------------------------------------ */

#define PP_ROUNDS 5

struct pp_arg {
	struct ev_log *log;
	int tag;
};

static void
pp_body(struct dtxn_co *co, void *arg)
{
	struct pp_arg *a = arg;
	int i;

	for (i = 0; i < PP_ROUNDS; i++) {
		log_add(a->log, a->tag * 100 + i);
		dtxn_co_yield_lc(co);
	}
}

static void
test_pingpong_order(void **state)
{
	struct ev_log log = { 0 };
	struct pp_arg a[3] = { { &log, 1 }, { &log, 2 }, { &log, 3 } };
	struct dtxn_sched *s = mk_sched("ut_pp", 4);
	unsigned i, r;
	uint64_t sw0;

	(void)state;
	for (i = 0; i < 3; i++) {
		struct dtxn_co *co = dtxn_co_create(s, pp_body, &a[i]);

		assert_non_null(co);
		assert_int_equal(dtxn_co_id(co), i);
		assert_ptr_equal(dtxn_co_sched(co), s);
	}
	sw0 = dtxn_sched_switches(s);
	assert_int_equal(sw0, 0);
	assert_int_equal(dtxn_sched_run_lc(s), 0);

	/* Round-robin: 1 2 3 run once per iteration, in creation order. */
	assert_int_equal(log.n, 3 * PP_ROUNDS);
	for (r = 0; r < PP_ROUNDS; r++)
		for (i = 0; i < 3; i++)
			assert_int_equal(log.ev[r * 3 + i], (int)(i + 1) * 100 + (int)r);

	/*
	 * Each of the PP_ROUNDS iterations: loop->1->2->3->loop = 4 switches;
	 * the last: each coroutine ends back into the loop = 2 each.
	 */
	assert_int_equal(dtxn_sched_switches(s), PP_ROUNDS * 4 + 3 * 2);
	assert_int_equal(dtxn_sched_step_lc(s), 0);
	dtxn_sched_destroy(s);
}

/* ------------------------------------------------------------------ */
/* Wait / complete through a poller                                   */
/* ------------------------------------------------------------------ */

struct fake_cq {
	struct dtxn_co *target;
	unsigned iter;          /* poller calls so far */
	unsigned fire_at;       /* deliver completions at this call */
	unsigned n_status;
	int status[4];
	unsigned fired_iter;
};

static unsigned
fake_cq_poll(void *arg)
{
	struct fake_cq *cq = arg;
	unsigned i, n;

	cq->iter++;
	if (cq->target == NULL || cq->iter != cq->fire_at)
		return 0;
	n = cq->n_status;
	for (i = 0; i < n; i++)
		dtxn_co_complete_lc(cq->target, cq->status[i]);
	cq->fired_iter = cq->iter;
	return n;
}

struct waiter {
	struct fake_cq *cq;
	int rc1, rc2, rc3;
	unsigned resumed_iter1, resumed_iter2;
	uint64_t sw_before_empty_wait, sw_after_empty_wait;
};

static void
waiter_body(struct dtxn_co *co, void *arg)
{
	struct waiter *w = arg;
	struct dtxn_sched *s = dtxn_co_sched(co);

	/* 1: three completions, two with errors: the first error wins. */
	w->cq->target = co;
	w->cq->fire_at = w->cq->iter + 5;
	w->cq->n_status = 3;
	w->cq->status[0] = 0;
	w->cq->status[1] = -EIO;
	w->cq->status[2] = -ETIMEDOUT;
	dtxn_co_expect_lc(co, 3);
	w->rc1 = dtxn_co_wait_lc(co);
	w->resumed_iter1 = w->cq->iter;

	/* 2: the status was consumed; clean completions give 0. */
	w->cq->fire_at = w->cq->iter + 3;
	w->cq->n_status = 2;
	w->cq->status[0] = 0;
	w->cq->status[1] = 0;
	dtxn_co_expect_lc(co, 2);
	w->rc2 = dtxn_co_wait_lc(co);
	w->resumed_iter2 = w->cq->iter;

	/* 3: nothing outstanding: returns at once, no switch. */
	w->sw_before_empty_wait = dtxn_sched_switches(s);
	w->rc3 = dtxn_co_wait_lc(co);
	w->sw_after_empty_wait = dtxn_sched_switches(s);
	w->cq->target = NULL;
}

static void
test_wait_complete_poller(void **state)
{
	struct fake_cq cq = { 0 };
	struct waiter w = { .cq = &cq };
	struct dtxn_sched *s = mk_sched("ut_wait", 2);

	(void)state;
	assert_int_equal(dtxn_sched_add_poller(s, fake_cq_poll, &cq), 0);
	assert_non_null(dtxn_co_create(s, waiter_body, &w));
	assert_int_equal(dtxn_sched_run_lc(s), 0);

	assert_int_equal(w.rc1, -EIO);
	assert_int_equal(w.rc2, 0);
	assert_int_equal(w.rc3, 0);
	/* Resumed in the iteration whose poller delivered the last completion. */
	assert_int_equal(w.resumed_iter1, 1 + 5);
	assert_int_equal(w.resumed_iter2, w.resumed_iter1 + 3);
	assert_true(w.sw_after_empty_wait == w.sw_before_empty_wait);
	dtxn_sched_destroy(s);
}

/* complete_lc on a coroutine that is not waiting only decrements. */
struct early {
	int rc;
	uint64_t sw_wait0, sw_wait1;
	int rc_extra;
};

static void
early_body(struct dtxn_co *co, void *arg)
{
	struct early *e = arg;
	struct dtxn_sched *s = dtxn_co_sched(co);

	dtxn_co_expect_lc(co, 2);
	dtxn_co_complete_lc(co, 0);         /* running, not waiting */
	dtxn_co_yield_lc(co);               /* stays ready, not woken twice */
	dtxn_co_complete_lc(co, -EAGAIN);   /* count reaches 0 while running */
	e->sw_wait0 = dtxn_sched_switches(s);
	e->rc = dtxn_co_wait_lc(co);        /* nothing left: immediate */
	e->sw_wait1 = dtxn_sched_switches(s);
	dtxn_co_complete_lc(co, 0);         /* spurious: no underflow */
	e->rc_extra = dtxn_co_wait_lc(co);
}

static void
test_complete_not_waiting(void **state)
{
	struct early e = { 0 };
	struct dtxn_sched *s = mk_sched("ut_early", 1);

	(void)state;
	assert_non_null(dtxn_co_create(s, early_body, &e));
	assert_int_equal(dtxn_sched_run_lc(s), 0);
	assert_int_equal(e.rc, -EAGAIN);
	assert_true(e.sw_wait0 == e.sw_wait1);
	assert_int_equal(e.rc_extra, 0);
	dtxn_sched_destroy(s);
}

/* One coroutine completes another and returns while the other waits. */
struct pair {
	struct dtxn_co *waiter;
	struct ev_log log;
	int rc;
};

static void
pair_waiter(struct dtxn_co *co, void *arg)
{
	struct pair *p = arg;

	dtxn_co_expect_lc(co, 1);
	log_add(&p->log, 1);
	p->rc = dtxn_co_wait_lc(co);
	log_add(&p->log, 4);
}

static void
pair_completer(struct dtxn_co *co, void *arg)
{
	struct pair *p = arg;

	log_add(&p->log, 2);
	dtxn_co_yield_lc(co);
	dtxn_co_complete_lc(p->waiter, -ECANCELED);
	log_add(&p->log, 3);
}

static void
test_return_while_other_waits(void **state)
{
	struct pair p = { 0 };
	struct dtxn_sched *s = mk_sched("ut_pair", 2);

	(void)state;
	p.waiter = dtxn_co_create(s, pair_waiter, &p);
	assert_non_null(p.waiter);
	assert_non_null(dtxn_co_create(s, pair_completer, &p));
	assert_int_equal(dtxn_sched_step_lc(s), 2);   /* waiter waits, completer yielded */
	assert_int_equal(dtxn_sched_step_lc(s), 1);   /* completer ended; waiter now ready */
	assert_int_equal(dtxn_sched_step_lc(s), 0);   /* waiter ended */
	assert_int_equal(p.log.n, 4);
	for (unsigned i = 0; i < 4; i++)
		assert_int_equal(p.log.ev[i], (int)i + 1);
	assert_int_equal(p.rc, -ECANCELED);
	dtxn_sched_destroy(s);
}

/*
 * Everyone waiting and no poller: run_lc reports the deadlock. The frame
 * holds an addressed array, which ASan brackets with redzones that stay
 * poisoned as the frame never returns: destroy must clear them before the
 * stack's memory is freed (a CN killed on sim leaves its coordinators so).
 */
static void
stuck_body(struct dtxn_co *co, void *arg)
{
	char name[32];

	(void)arg;
	snprintf(name, sizeof(name), "stuck %u", dtxn_co_id(co));
	dtxn_co_expect_lc(co, 1);
	dtxn_co_wait_lc(co);
	fail_msg("%s resumed", name);
}

static void
test_deadlock_detected(void **state)
{
	struct dtxn_sched *s = mk_sched("ut_stuck", 1);

	(void)state;
	assert_non_null(dtxn_co_create(s, stuck_body, NULL));
	assert_int_equal(dtxn_sched_run_lc(s), -EDEADLK);
	dtxn_sched_destroy(s);   /* frees the suspended coroutine's stack */
}

/* ------------------------------------------------------------------ */
/* Timers                                                             */
/* ------------------------------------------------------------------ */

#define N_SLEEPERS 6

struct sleeper {
	struct ev_log *log;
	int tag;
	uint64_t until, woke;
};

static void
sleeper_body(struct dtxn_co *co, void *arg)
{
	struct sleeper *sl = arg;

	dtxn_co_sleep_until_lc(co, sl->until);
	sl->woke = dtxn_now_ns();
	log_add(sl->log, sl->tag);
}

static void
test_sleep_until_order(void **state)
{
	/* Offsets in ms; tags 3 and 4 share a deadline: FIFO among them. */
	static const unsigned off_ms[N_SLEEPERS] = { 8, 2, 6, 4, 4, 1 };
	static const int expect[N_SLEEPERS] = { 5, 1, 3, 4, 2, 0 };
	struct ev_log log = { 0 };
	struct sleeper sl[N_SLEEPERS];
	struct dtxn_sched *s = mk_sched("ut_sleep", N_SLEEPERS);
	uint64_t t0 = dtxn_now_ns();
	unsigned i;

	(void)state;
	for (i = 0; i < N_SLEEPERS; i++) {
		sl[i] = (struct sleeper){ &log, (int)i, t0 + off_ms[i] * 1000000ull, 0 };
		assert_non_null(dtxn_co_create(s, sleeper_body, &sl[i]));
	}
	assert_int_equal(dtxn_sched_run_lc(s), 0);
	assert_int_equal(log.n, N_SLEEPERS);
	for (i = 0; i < N_SLEEPERS; i++) {
		assert_int_equal(log.ev[i], expect[i]);
		assert_true(sl[i].woke >= sl[i].until);
	}
	dtxn_sched_destroy(s);
}

/* ------------------------------------------------------------------ */
/* run_lc, stop, limits                                               */
/* ------------------------------------------------------------------ */

struct counted {
	unsigned yields;
	bool done;
};

static void
counted_body(struct dtxn_co *co, void *arg)
{
	struct counted *c = arg;
	unsigned i;

	for (i = 0; i < c->yields; i++)
		dtxn_co_yield_lc(co);
	c->done = true;
}

static void
test_run_returns_when_all_end(void **state)
{
	struct counted c[4] = { { 0, false }, { 3, false }, { 10, false }, { 1, false } };
	struct dtxn_sched *s = mk_sched("ut_run", 4);
	unsigned i;

	(void)state;
	for (i = 0; i < 4; i++)
		assert_non_null(dtxn_co_create(s, counted_body, &c[i]));
	assert_int_equal(dtxn_sched_run_lc(s), 0);
	for (i = 0; i < 4; i++)
		assert_true(c[i].done);
	assert_int_equal(dtxn_sched_step_lc(s), 0);
	/* An empty scheduler returns at once. */
	assert_int_equal(dtxn_sched_run_lc(s), 0);
	dtxn_sched_destroy(s);
}

struct stopper {
	struct dtxn_sched *s;
	unsigned iter, stop_at;
};

static unsigned
stopper_poll(void *arg)
{
	struct stopper *st = arg;

	if (++st->iter == st->stop_at)
		dtxn_sched_stop(st->s);
	return 0;
}

static void
until_stopped_body(struct dtxn_co *co, void *arg)
{
	unsigned *loops = arg;

	while (!dtxn_sched_stopping(dtxn_co_sched(co))) {
		(*loops)++;
		dtxn_co_yield_lc(co);
	}
}

static void
test_stop(void **state)
{
	struct dtxn_sched *s = mk_sched("ut_stop", 2);
	struct stopper st = { s, 0, 50 };
	unsigned loops[2] = { 0, 0 };

	(void)state;
	assert_false(dtxn_sched_stopping(s));
	assert_int_equal(dtxn_sched_add_poller(s, stopper_poll, &st), 0);
	assert_non_null(dtxn_co_create(s, until_stopped_body, &loops[0]));
	assert_non_null(dtxn_co_create(s, until_stopped_body, &loops[1]));
	assert_int_equal(dtxn_sched_run_lc(s), 0);
	assert_true(dtxn_sched_stopping(s));
	/* Iterations 1..49 each ran both once; iteration 50 saw the flag. */
	assert_int_equal(loops[0], 49);
	assert_int_equal(loops[1], 49);
	dtxn_sched_destroy(s);
}

static void
noop_body(struct dtxn_co *co, void *arg)
{
	(void)co;
	(void)arg;
}

static void
test_max_cos_enospc(void **state)
{
	struct dtxn_sched *s = mk_sched("ut_max", 2);
	struct dtxn_co *a, *b;

	(void)state;
	a = dtxn_co_create(s, noop_body, NULL);
	b = dtxn_co_create(s, noop_body, NULL);
	assert_non_null(a);
	assert_non_null(b);
	rte_errno = 0;
	assert_null(dtxn_co_create(s, noop_body, NULL));
	assert_int_equal(rte_errno, ENOSPC);
	/* Ended coroutines give their slot and stack back. */
	assert_int_equal(dtxn_sched_run_lc(s), 0);
	a = dtxn_co_create(s, noop_body, NULL);
	b = dtxn_co_create(s, noop_body, NULL);
	assert_non_null(a);
	assert_non_null(b);
	assert_int_not_equal(dtxn_co_id(a), dtxn_co_id(b));
	assert_true(dtxn_co_id(a) < 2 && dtxn_co_id(b) < 2);
	assert_int_equal(dtxn_sched_run_lc(s), 0);
	dtxn_sched_destroy(s);
}

static unsigned
idle_poll(void *arg)
{
	(void)arg;
	return 0;
}

static void
expect_create_einval(const char *name, int socket, unsigned max_cos, size_t stack)
{
	rte_errno = 0;
	assert_null(dtxn_sched_create(name, socket, max_cos, stack));
	assert_int_equal(rte_errno, EINVAL);
}

static void
test_bad_args(void **state)
{
	struct dtxn_sched *s;
	unsigned i;

	(void)state;
	expect_create_einval(NULL, SOCKET_ID_ANY, 4, 0);
	expect_create_einval("", SOCKET_ID_ANY, 4, 0);
	expect_create_einval("a_name_of_25_characters_x", SOCKET_ID_ANY, 4, 0);
	expect_create_einval("ut_bad", SOCKET_ID_ANY, 0, 0);
	expect_create_einval("ut_bad", SOCKET_ID_ANY, 65536, 0);
	expect_create_einval("ut_bad", SOCKET_ID_ANY, 4, 8192);
	expect_create_einval("ut_bad", SOCKET_ID_ANY, 4, 16 * 1024 + 512);
	expect_create_einval("ut_bad", -7, 4, 0);

	/* 24 characters is the limit, and the name must be unique. */
	s = dtxn_sched_create("a_name_of_24_characters_", SOCKET_ID_ANY, 1, 0);
	assert_non_null(s);
	rte_errno = 0;
	assert_null(dtxn_sched_create("a_name_of_24_characters_", SOCKET_ID_ANY, 1, 0));
	assert_int_equal(rte_errno, EEXIST);

	rte_errno = 0;
	assert_null(dtxn_co_create(s, NULL, NULL));
	assert_int_equal(rte_errno, EINVAL);
	rte_errno = 0;
	assert_null(dtxn_co_create(NULL, noop_body, NULL));
	assert_int_equal(rte_errno, EINVAL);

	assert_int_equal(dtxn_sched_add_poller(NULL, idle_poll, NULL), -EINVAL);
	assert_int_equal(dtxn_sched_add_poller(s, NULL, NULL), -EINVAL);
	for (i = 0; i < DTXN_SCHED_MAX_POLLERS; i++)
		assert_int_equal(dtxn_sched_add_poller(s, idle_poll, NULL), 0);
	assert_int_equal(dtxn_sched_add_poller(s, idle_poll, NULL), -ENOSPC);

	assert_int_equal(dtxn_sched_run_lc(NULL), -EINVAL);
	assert_int_equal(dtxn_sched_step_lc(NULL), 0);
	dtxn_sched_destroy(NULL);
	dtxn_sched_destroy(s);

	/* destroy released the name (and its stack mempool). */
	assert_null(rte_mempool_lookup("sa_name_of_24_characters_"));
	s = dtxn_sched_create("a_name_of_24_characters_", SOCKET_ID_ANY, 1, 0);
	assert_non_null(s);
	dtxn_sched_destroy(s);
}

struct reentry {
	int run_rc;
	unsigned step_alive;
	int wait_rc;
	struct dtxn_co *other;
};

static void
reentry_body(struct dtxn_co *co, void *arg)
{
	struct reentry *r = arg;
	struct dtxn_sched *s = dtxn_co_sched(co);

	r->run_rc = dtxn_sched_run_lc(s);          /* nested loop refused */
	r->step_alive = dtxn_sched_step_lc(s);     /* refused, reports alive */
	r->wait_rc = dtxn_co_wait_lc(r->other);    /* not the running coroutine */
	dtxn_co_yield_lc(r->other);                /* ignored, logged */
}

static void
test_reentry_refused(void **state)
{
	struct reentry r = { 0 };
	struct dtxn_sched *s = mk_sched("ut_reent", 2);
	struct dtxn_co *co;

	(void)state;
	co = dtxn_co_create(s, reentry_body, &r);
	r.other = dtxn_co_create(s, noop_body, NULL);
	assert_non_null(co);
	assert_non_null(r.other);
	/* Outside any loop nothing is running: yield/wait are refused too. */
	assert_int_equal(dtxn_co_wait_lc(co), -EINVAL);
	assert_int_equal(dtxn_sched_run_lc(s), 0);
	assert_int_equal(r.run_rc, -EBUSY);
	assert_int_equal(r.step_alive, 2);
	assert_int_equal(r.wait_rc, -EINVAL);
	dtxn_sched_destroy(s);
}

/* ------------------------------------------------------------------ */
/* Machine state across switches                                      */
/* ------------------------------------------------------------------ */

struct fp_probe {
	int round_seen_by_other;
	int round_after_yield;
	double third_up, third_near;
	unsigned depth_sum;
};

/* @return depth + (depth - 1) + ... + 1, using 512 bytes of stack per level. */
static unsigned
recurse(unsigned depth)
{
	volatile char buf[512];
	unsigned below;

	buf[0] = (char)depth;
	if (depth == 0)
		return 0;
	below = recurse(depth - 1);
	return (unsigned char)buf[0] + below;
}

static void
fp_setter(struct dtxn_co *co, void *arg)
{
	struct fp_probe *p = arg;
	volatile double one = 1.0, three = 3.0;

	fesetround(FE_UPWARD);
	dtxn_co_yield_lc(co);
	p->round_after_yield = fegetround();
	p->third_up = one / three;
	fesetround(FE_TONEAREST);
}

static void
fp_observer(struct dtxn_co *co, void *arg)
{
	struct fp_probe *p = arg;
	volatile double one = 1.0, three = 3.0;

	(void)co;
	p->round_seen_by_other = fegetround();
	p->third_near = one / three;
	/* ~10 KiB of frames on a 16 KiB stack. */
	p->depth_sum = recurse(20);
}

static void
test_machine_state(void **state)
{
	struct fp_probe p = { 0 };
	struct dtxn_sched *s = mk_sched("ut_fp", 2);

	(void)state;
	assert_non_null(dtxn_co_create(s, fp_setter, &p));
	assert_non_null(dtxn_co_create(s, fp_observer, &p));
	assert_int_equal(dtxn_sched_run_lc(s), 0);
	assert_int_equal(fegetround(), FE_TONEAREST);
	assert_int_equal(p.round_seen_by_other, FE_TONEAREST);
	assert_int_equal(p.round_after_yield, FE_UPWARD);
	assert_true(p.third_up > p.third_near);
	assert_int_equal(p.depth_sum, 20 * 21 / 2);
	dtxn_sched_destroy(s);
}

/* ------------------------------------------------------------------ */
/* Clock                                                              */
/* ------------------------------------------------------------------ */

static uint64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void
test_clock_real(void **state)
{
	struct timespec nap = { 0, 50 * 1000 * 1000 };
	uint64_t prev, now, d0, w0, dd, dw;
	unsigned i;

	(void)state;
	/* A second init must not move time. */
	prev = dtxn_now_ns();
	assert_int_equal(dtxn_clock_init(), 0);
	assert_true(dtxn_now_ns() >= prev);

	for (i = 0; i < 1000000; i++) {
		now = dtxn_now_ns();
		assert_true(now >= prev);
		prev = now;
	}

	d0 = dtxn_now_ns();
	w0 = mono_ns();
	nanosleep(&nap, NULL);
	dd = dtxn_now_ns() - d0;
	dw = mono_ns() - w0;
	/* Loose sanity bound: within 25% of the OS clock over 50 ms. */
	assert_true(dd > dw - dw / 4 && dd < dw + dw / 4);
	assert_true(dw >= 50 * 1000 * 1000);
}

static void
virt_sleeper(struct dtxn_co *co, void *arg)
{
	uint64_t *woke = arg;

	dtxn_co_sleep_until_lc(co, 5000);
	*woke = dtxn_now_ns();
}


/* ------------------------------------------------------------------ */
/* Busy-wait: dtxn_co_spin_lc()                                       */
/* ------------------------------------------------------------------ */

struct spinner {
	struct fake_cq *cq;
	unsigned *other_runs;
	unsigned other_before, other_after;
	uint64_t sw_before, sw_after;
	int rc;
	unsigned done_iter;
};

static void
spinner_body(struct dtxn_co *co, void *arg)
{
	struct spinner *sp = arg;
	struct dtxn_sched *s = dtxn_co_sched(co);

	dtxn_co_yield_lc(co); /* the other one is running too */
	sp->cq->target = co;
	sp->cq->fire_at = sp->cq->iter + 5;
	sp->cq->n_status = 1;
	sp->cq->status[0] = -EIO;
	dtxn_co_expect_lc(co, 1);
	sp->other_before = *sp->other_runs;
	sp->sw_before = dtxn_sched_switches(s);
	sp->rc = dtxn_co_spin_lc(co);
	sp->sw_after = dtxn_sched_switches(s);
	sp->other_after = *sp->other_runs;
	sp->done_iter = sp->cq->iter;
	sp->cq->target = NULL;
}

static void
other_body(struct dtxn_co *co, void *arg)
{
	unsigned *runs = arg;

	for (unsigned i = 0; i < 20; i++) {
		(*runs)++;
		dtxn_co_yield_lc(co);
	}
}

static void
test_spin_real(void **state)
{
	struct fake_cq cq = { 0 };
	unsigned runs = 0;
	struct spinner sp = { .cq = &cq, .other_runs = &runs };
	struct dtxn_sched *s = mk_sched("ut_spin", 2);

	(void)state;
	assert_int_equal(dtxn_sched_add_poller(s, fake_cq_poll, &cq), 0);
	assert_non_null(dtxn_co_create(s, spinner_body, &sp));
	assert_non_null(dtxn_co_create(s, other_body, &runs));
	assert_int_equal(dtxn_sched_run_lc(s), 0);
	assert_int_equal(sp.rc, -EIO);
	/* the poller ran from inside the spin until it delivered; nobody else ran */
	assert_int_equal(sp.done_iter, cq.fired_iter);
	assert_int_equal(sp.other_after, sp.other_before);
	assert_true(sp.sw_after == sp.sw_before);
	assert_int_equal(runs, 20);
	dtxn_sched_destroy(s);
}


/* ------------------------------------------------------------------ */
/* Timed wait: dtxn_co_wait_timed_lc(), real time                     */
/* ------------------------------------------------------------------ */

#define TW_BUSY_NS 200000u /* the other coroutine's CPU while the waiter waits */

struct timed_waiter {
	struct fake_cq *cq;
	int rc, rc_empty;
	uint64_t waited, waited_empty, outer_ns;
};

static void
timed_waiter_body(struct dtxn_co *co, void *arg)
{
	struct timed_waiter *tw = arg;
	uint64_t t0;

	tw->cq->target = co;
	tw->cq->fire_at = tw->cq->iter + 2;
	tw->cq->n_status = 1;
	tw->cq->status[0] = -EIO;
	dtxn_co_expect_lc(co, 1);
	tw->waited = 5; /* added to, not set */
	t0 = dtxn_now_ns();
	tw->rc = dtxn_co_wait_timed_lc(co, &tw->waited);
	tw->outer_ns = dtxn_now_ns() - t0;
	tw->waited -= 5;
	/* nothing outstanding: no yield, nothing added */
	tw->rc_empty = dtxn_co_wait_timed_lc(co, &tw->waited_empty);
	tw->cq->target = NULL;
}

static void
busy_body(struct dtxn_co *co, void *arg)
{
	const uint64_t until = dtxn_now_ns() + TW_BUSY_NS;

	(void)co;
	(void)arg;
	while (dtxn_now_ns() < until)
		;
}

/*
 * The time a coroutine waits counts from its switch out to its switch
 * back in, stamped by the scheduler: at least the CPU the other
 * coroutine took meanwhile, at most the time around the call.
 */
static void
test_wait_timed_real(void **state)
{
	struct fake_cq cq = { 0 };
	struct timed_waiter tw = { .cq = &cq };
	struct dtxn_sched *s = mk_sched("ut_wtimed", 2);
	struct dtxn_co *co;
	uint64_t x = 7;

	(void)state;
	assert_int_equal(dtxn_sched_add_poller(s, fake_cq_poll, &cq), 0);
	co = dtxn_co_create(s, timed_waiter_body, &tw);
	assert_non_null(co);
	assert_int_equal(dtxn_co_wait_timed_lc(co, &x), -EINVAL); /* not running */
	assert_true(x == 7);
	assert_non_null(dtxn_co_create(s, busy_body, NULL));
	assert_int_equal(dtxn_sched_run_lc(s), 0);
	assert_int_equal(tw.rc, -EIO);
	assert_true(tw.waited >= TW_BUSY_NS);
	assert_true(tw.waited <= tw.outer_ns);
	assert_int_equal(tw.rc_empty, 0);
	assert_true(tw.waited_empty == 0);
	dtxn_sched_destroy(s);
}

/* ------------------------------------------------------------------ */
/* The scheduler's clock: dtxn_co_now_ns(), real time                 */
/* ------------------------------------------------------------------ */

struct co_clock {
	uint64_t before;     /* dtxn_now_ns() before the scheduler ran */
	uint64_t first, first_read, still, after_yield, after_read, other;
};

static void
co_clock_body(struct dtxn_co *co, void *arg)
{
	struct co_clock *cc = arg;
	const uint64_t until = dtxn_now_ns() + TW_BUSY_NS;

	cc->first = dtxn_co_now_ns(co);
	cc->first_read = dtxn_now_ns();
	while (dtxn_now_ns() < until) /* runs on: its stamp does not move */
		;
	cc->still = dtxn_co_now_ns(co);
	dtxn_co_yield_lc(co); /* busy_body takes TW_BUSY_NS meanwhile */
	cc->after_yield = dtxn_co_now_ns(co);
	cc->after_read = dtxn_now_ns();
	cc->other = dtxn_co_now_ns(NULL); /* not a running coroutine: the clock itself */
}

/*
 * Real time: a coroutine's clock is the stamp of the switch that gave it
 * its thread: between the time before the loop and its own read, fixed
 * while it runs, moved by a yield at least by the CPU another coroutine
 * took meanwhile.
 */
static void
test_co_now_real(void **state)
{
	struct co_clock cc = { 0 };
	struct dtxn_sched *s = mk_sched("ut_conow", 2);

	(void)state;
	assert_non_null(dtxn_co_create(s, co_clock_body, &cc));
	assert_non_null(dtxn_co_create(s, busy_body, NULL));
	cc.before = dtxn_now_ns();
	assert_int_equal(dtxn_sched_run_lc(s), 0);
	assert_true(cc.first >= cc.before && cc.first <= cc.first_read);
	assert_true(cc.still == cc.first);
	assert_true(cc.after_yield >= cc.still + 2 * TW_BUSY_NS); /* its own spin, then busy_body's */
	assert_true(cc.after_yield <= cc.after_read);
	assert_true(cc.other >= cc.after_read);
	dtxn_sched_destroy(s);
}

/* Real time, no hugepages: a table of 2 MiB or more is 2 MiB aligned, zeroed, counted. */
static void
test_local_zalloc_huge(void **state)
{
	const size_t sizes[] = { 4096, (size_t)2 << 20, ((size_t)5 << 20) + 100 };

	(void)state;
	if (!dtxn_local_mapped())
		skip();
	for (unsigned i = 0; i < RTE_DIM(sizes); i++) {
		const uint64_t b0 = dtxn_local_bytes();
		uint8_t *p = dtxn_local_zalloc("ut_local", sizes[i], SOCKET_ID_ANY);

		assert_non_null(p);
		assert_true(dtxn_local_bytes() == b0 + sizes[i]);
		if (sizes[i] >= ((size_t)2 << 20))
			assert_true(((uintptr_t)p & (((uintptr_t)2 << 20) - 1)) == 0);
		assert_int_equal(p[0], 0);
		assert_int_equal(p[sizes[i] - 1], 0);
		p[0] = 1;
		p[sizes[i] - 1] = 2; /* its last byte is mapped */
		dtxn_local_free(p, sizes[i]);
		assert_true(dtxn_local_bytes() == b0);
	}
}

/*
 * Virtual time: a spinning coroutine leaves the thread, which then runs
 * only its pollers (no other coroutine, no timer) until the spinner's
 * completions are in; the time counts as CPU busy time.
 */
static void
test_spin_virtual(void)
{
	struct fake_cq cq = { 0 };
	unsigned runs = 0, i;
	struct spinner sp = { .cq = &cq, .other_runs = &runs };
	struct dtxn_sched *s = mk_sched("ut_spinv", 2);
	uint64_t cpu0;

	assert_int_equal(dtxn_sched_add_poller(s, fake_cq_poll, &cq), 0);
	assert_non_null(dtxn_co_create(s, spinner_body, &sp));
	assert_non_null(dtxn_co_create(s, other_body, &runs));
	dtxn_sched_step_lc(s);              /* both run once */
	dtxn_sched_step_lc(s);              /* the spinner starts spinning */
	assert_int_equal(dtxn_sched_ready_count(s), 0); /* the other is ready, but not to run */
	assert_true(dtxn_sched_next_timer_ns(s) == UINT64_MAX);
	cpu0 = dtxn_sched_cpu_ns(s);
	runs = 0;
	for (i = 0; i < 3 && cq.fired_iter == 0; i++) {
		dtxn_clock_advance(dtxn_now_ns() + 100);
		dtxn_sched_step_lc(s);
	}
	assert_int_equal(runs, 0);
	assert_int_equal(cq.fired_iter, 0);
	dtxn_clock_advance(dtxn_now_ns() + 100);
	while (cq.fired_iter == 0)
		dtxn_sched_step_lc(s);      /* delivers; the spinner resumes first */
	assert_int_equal(sp.rc, -EIO);
	assert_int_equal(sp.other_after, 0);
	assert_true(dtxn_sched_cpu_ns(s) - cpu0 >= 400);
	while (dtxn_sched_step_lc(s) > 0)
		;
	assert_int_equal(runs, 19);
	dtxn_sched_destroy(s);
}

/* Per-node clocks in virtual time (the sim's clock skew): offset, drift, wrap. */
static void
test_node_clocks(void)
{
	uint64_t t0 = dtxn_now_ns();

	assert_int_equal(dtxn_clock_set_node(DTXN_CLOCK_MAX_NODES, 0, 0), -EINVAL);
	assert_int_equal(dtxn_clock_set_node(1, 0, 1000000), -EINVAL);
	assert_int_equal(dtxn_clock_set_node(1, 0, -1000000), -EINVAL);
	assert_int_equal(dtxn_node_now_ns(0), t0);            /* never set: the clock itself */
	assert_int_equal(dtxn_node_now_ns(DTXN_CLOCK_MAX_NODES), t0);
	assert_int_equal(dtxn_clock_set_node(1, 500, 0), 0);
	assert_int_equal(dtxn_clock_set_node(2, 0, 100000), 0);   /* 10% fast */
	assert_int_equal(dtxn_clock_set_node(3, 0, -500000), 0);  /* 50% slow */
	assert_int_equal(dtxn_clock_set_node(4, -(int64_t)t0 - 10, 0), 0); /* reads below 0 */
	assert_int_equal(dtxn_node_now_ns(1), t0 + 500);
	assert_int_equal(dtxn_node_now_ns(4), UINT64_MAX - 9);
	dtxn_clock_advance(t0 + 1000000);
	assert_int_equal(dtxn_node_now_ns(1), t0 + 1000000 + 500);
	assert_int_equal(dtxn_node_now_ns(2) - t0, 1100000);
	assert_int_equal(dtxn_node_now_ns(3) - t0, 500000);
	/* an interval on node 4 across its wrap is still 1 ms */
	assert_int_equal(dtxn_node_now_ns(4) - (UINT64_MAX - 9), 1000000);
	assert_int_equal(dtxn_clock_set_node(1, 0, 0), 0);        /* back to the clock */
	assert_int_equal(dtxn_node_now_ns(1), dtxn_now_ns());
}

/* Must be the last test: the clock stays virtual. */
/*
 * The loop's busy time (dtxn_sched_loop_busy_ns(), the report's
 * host.cn_cpu_ns_per_txn): 0 before any work, moves when coroutines ran,
 * through dtxn_sched_run_lc() and through dtxn_sched_step_lc(); an empty
 * step adds nothing. Counts, never how much (no timing asserted).
 */
static void
test_loop_busy_real(void **state)
{
	struct counted c[2] = { { 5, false }, { 50, false } };
	struct dtxn_sched *s = mk_sched("ut_busy", 2);
	uint64_t b;

	(void)state;
	assert_int_equal(dtxn_clock_init(), 0);
	assert_int_equal(dtxn_sched_loop_busy_ns(NULL), 0);
	assert_int_equal(dtxn_sched_loop_busy_ns(s), 0);
	for (unsigned i = 0; i < 2; i++)
		assert_non_null(dtxn_co_create(s, counted_body, &c[i]));
	assert_int_equal(dtxn_sched_run_lc(s), 0);
	b = dtxn_sched_loop_busy_ns(s);
	assert_true(b > 0);
	assert_int_equal(dtxn_sched_step_lc(s), 0); /* nothing to do: not busy */
	assert_int_equal(dtxn_sched_loop_busy_ns(s), b);
	c[0].done = false;
	c[0].yields = 2000;
	assert_non_null(dtxn_co_create(s, counted_body, &c[0]));
	while (dtxn_sched_step_lc(s) > 0)
		;
	assert_true(c[0].done);
	assert_true(dtxn_sched_loop_busy_ns(s) > b);
	dtxn_sched_destroy(s);
}

static void
test_clock_virtual(void **state)
{
	struct dtxn_sched *s = mk_sched("ut_virt", 1);
	uint64_t woke = 0;

	(void)state;
	dtxn_clock_set_virtual(1000);
	assert_int_equal(dtxn_now_ns(), 1000);
	dtxn_clock_advance(2000);
	assert_int_equal(dtxn_now_ns(), 2000);
	dtxn_clock_advance(1500);
	assert_int_equal(dtxn_now_ns(), 2000);
	dtxn_clock_advance(2000);
	assert_int_equal(dtxn_now_ns(), 2000);

	/* Timers follow virtual time, not the TSC. */
	assert_non_null(dtxn_co_create(s, virt_sleeper, &woke));
	assert_int_equal(dtxn_sched_step_lc(s), 1);   /* went to sleep */
	assert_int_equal(dtxn_sched_step_lc(s), 1);   /* still asleep */
	dtxn_clock_advance(4999);
	assert_int_equal(dtxn_sched_step_lc(s), 1);
	dtxn_clock_advance(5000);
	assert_int_equal(dtxn_sched_step_lc(s), 0);
	assert_int_equal(woke, 5000);
	dtxn_sched_destroy(s);
	test_spin_virtual();
	test_node_clocks();
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pingpong_order),
		cmocka_unit_test(test_wait_complete_poller),
		cmocka_unit_test(test_complete_not_waiting),
		cmocka_unit_test(test_return_while_other_waits),
		cmocka_unit_test(test_deadlock_detected),
		cmocka_unit_test(test_sleep_until_order),
		cmocka_unit_test(test_run_returns_when_all_end),
		cmocka_unit_test(test_stop),
		cmocka_unit_test(test_max_cos_enospc),
		cmocka_unit_test(test_bad_args),
		cmocka_unit_test(test_reentry_refused),
		cmocka_unit_test(test_machine_state),
		cmocka_unit_test(test_clock_real),
		cmocka_unit_test(test_spin_real),
		cmocka_unit_test(test_wait_timed_real),
		cmocka_unit_test(test_co_now_real),
		cmocka_unit_test(test_local_zalloc_huge),
		cmocka_unit_test(test_loop_busy_real),
		cmocka_unit_test(test_clock_virtual),   /* last: cannot be undone; also the virtual spin */
	};
	int rc;

	if (dtxn_unit_eal_init("ut_sched") != 0)
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	dtxn_unit_eal_fini();
	return rc;
}
