/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The per-lcore scheduler: coroutine life cycle, ready queue, timer heap and
 * the poll loop.
 *
 * One loop iteration: every poller in registration order; then every
 * sleeping coroutine whose wake-up time has come moves to the ready queue
 * (earliest first); then the coroutines that are ready at that point run
 * once each, in FIFO order. A coroutine that gives up the lcore while others
 * of the same iteration are still to run switches to the next one directly,
 * so a batch of N coroutines costs N + 1 switches, not 2N.
 */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_mempool.h>
#include <rte_pause.h>

#include "sched_private.h"

RTE_LOG_REGISTER_DEFAULT(dtxn_sched_logtype, INFO);

#define SCHED_NAME_MAX 24
#define SCHED_MAX_COS 65535u
#define SCHED_STACK_MIN (16 * 1024)
#define SCHED_STACK_MAX ((size_t)1 << 30)
#define SCHED_STACK_ALIGN 4096
/* Bottom of each stack kept for the canary; the context gets the rest. */
#define SCHED_STACK_RESERVED 64

static_assert(SCHED_MAX_COS <= UINT16_MAX + 1u, "coroutine ids are 16-bit");
static_assert(DTXN_CO_STACK_DEFAULT % SCHED_STACK_ALIGN == 0 &&
	      DTXN_CO_STACK_DEFAULT >= SCHED_STACK_MIN, "bad default stack size");

/* ------------------------------------------------------------------ */
/* Ready queue and timer heap                                         */
/* ------------------------------------------------------------------ */

static inline void
ready_push(struct dtxn_sched *s, struct dtxn_co *co)
{
	co->state = CO_READY;
	co->next = NULL;
	if (s->ready_tail != NULL)
		s->ready_tail->next = co;
	else
		s->ready_head = co;
	s->ready_tail = co;
	s->ready_n++;
}

static inline struct dtxn_co *
ready_pop(struct dtxn_sched *s)
{
	struct dtxn_co *co = s->ready_head;

	s->ready_head = co->next;
	if (s->ready_head == NULL)
		s->ready_tail = NULL;
	s->ready_n--;
	return co;
}

static inline bool
heap_before(const struct dtxn_co *a, const struct dtxn_co *b)
{
	return a->wake_ns < b->wake_ns ||
	       (a->wake_ns == b->wake_ns && a->wake_seq < b->wake_seq);
}

static void
heap_push(struct dtxn_sched *s, struct dtxn_co *co)
{
	struct dtxn_co **h = s->heap;
	unsigned i = s->heap_n++;

	while (i > 0) {
		unsigned p = (i - 1) / 2;

		if (!heap_before(co, h[p]))
			break;
		h[i] = h[p];
		i = p;
	}
	h[i] = co;
}

static struct dtxn_co *
heap_pop(struct dtxn_sched *s)
{
	struct dtxn_co **h = s->heap;
	struct dtxn_co *top = h[0];
	struct dtxn_co *last = h[--s->heap_n];
	unsigned n = s->heap_n, i = 0;

	while (2 * i + 1 < n) {
		unsigned c = 2 * i + 1;

		if (c + 1 < n && heap_before(h[c + 1], h[c]))
			c++;
		if (!heap_before(h[c], last))
			break;
		h[i] = h[c];
		i = c;
	}
	if (n > 0)
		h[i] = last;
	return top;
}

/* ------------------------------------------------------------------ */
/* Switching                                                          */
/* ------------------------------------------------------------------ */

static inline void
count_switch(struct dtxn_sched *s)
{
	/* Single writer (the owning lcore); readers on other threads load it. */
	__atomic_store_n(&s->switches, s->switches + 1, __ATOMIC_RELAXED);
}

/*
 * The running coroutine @p cur has parked itself (ready queue, timer heap or
 * waiting). Runs the next coroutine of this iteration, or goes back to the
 * loop. Returns when @p cur is resumed.
 */
static inline void
co_leave(struct dtxn_sched *s, struct dtxn_co *cur)
{
	struct dtxn_co *next;

	/* real time: one clock read stamps both sides of the switch, when cur
	 * left and when the next one (or the loop) got the thread */
	if (likely(!g_dtxn_clock.virtual_time))
		cur->left_ns = s->now_ns = dtxn_clock_real_ns();
	/* CPU debt (virtual time): back to the loop, which makes the thread busy */
	if (s->batch_left > 0 && s->debt_ns == 0) {
		s->batch_left--;
		next = ready_pop(s);
		next->state = CO_RUNNING;
		s->current = next;
		if (next == cur)
			return;
		count_switch(s);
		co_ctx_switch(&cur->ctx, &next->ctx);
	} else {
		s->current = NULL;
		count_switch(s);
		co_ctx_switch(&cur->ctx, &s->loop_ctx);
	}
}

static inline bool
co_is_current(const struct dtxn_co *co, const char *fn)
{
	if (likely(co != NULL && co->s->current == co))
		return true;
	SCHED_LOG(ERR, "%s: not called by the running coroutine", fn);
	return false;
}

/* First frame of every coroutine. */
static void
co_main(void *arg)
{
	struct dtxn_co *co = arg;
	struct dtxn_sched *s = co->s;

	co->fn(co, co->arg);
	/* The stack is still in use until the switch: the loop releases it. */
	co->state = CO_DEAD;
	s->zombie = co;
	s->current = NULL;
	count_switch(s);
	co_ctx_switch(&co->ctx, &s->loop_ctx);
	/* Never resumed. */
}

static void
co_release(struct dtxn_sched *s, struct dtxn_co *co)
{
	if (*(const uint64_t *)co->stack != SCHED_STACK_CANARY)
		SCHED_LOG(ERR, "%s: coroutine %u overflowed its %zu-byte stack",
			  s->name, co->id, s->stack_size);
	co_stack_unpoison(co->stack, s->stack_size);
	rte_mempool_put(s->stacks, co->stack);
	co->stack = NULL;
	co->state = CO_FREE;
	s->free_ids[s->free_n++] = co->id;
	s->alive--;
}

/* ------------------------------------------------------------------ */
/* Poll loop                                                          */
/* ------------------------------------------------------------------ */

/* Takes @p co, CO_READY, out of the ready queue, wherever it is. */
static void
ready_remove(struct dtxn_sched *s, struct dtxn_co *co)
{
	struct dtxn_co **pp = &s->ready_head, *prev = NULL;

	while (*pp != NULL && *pp != co) {
		prev = *pp;
		pp = &(*pp)->next;
	}
	if (*pp == NULL)
		return;
	*pp = co->next;
	if (s->ready_tail == co)
		s->ready_tail = prev;
	s->ready_n--;
}

/*
 * Runs @p co (taken off the ready queue) from the loop until the lcore is
 * back in the loop: the batch is done or a coroutine ended.
 */
static void
sched_resume(struct dtxn_sched *s, struct dtxn_co *co)
{
	co->state = CO_RUNNING;
	s->current = co;
	if (likely(!g_dtxn_clock.virtual_time))
		s->now_ns = dtxn_clock_real_ns(); /* dtxn_co_now_ns() */
	count_switch(s);
	co_ctx_switch(&s->loop_ctx, &co->ctx);
	if (s->zombie != NULL) {
		co_release(s, s->zombie);
		s->zombie = NULL;
	}
}

/*
 * Virtual time, a coroutine spins (dtxn_co_spin_lc()): the pollers ran;
 * resume it alone once its completions are in. @return coroutines resumed.
 */
static unsigned
sched_iterate_exclusive(struct dtxn_sched *s)
{
	struct dtxn_co *co = s->exclusive;

	if (co->state != CO_READY || sched_busy(s))
		return 0;
	ready_remove(s, co);
	s->exclusive = NULL;
	sched_resume(s, co);
	(void)sched_settle(s);
	return 1;
}

/* One iteration. @return events + wake-ups + coroutines resumed (0: idle). */
static unsigned
sched_iterate(struct dtxn_sched *s)
{
	unsigned work = 0, i;

	if (sched_busy(s))
		return 0; /* virtual time: the thread still computes */
	s->poll_wake_ns = UINT64_MAX; /* the pollers ask again if they must */
	for (i = 0; i < s->n_pollers; i++)
		work += s->pollers[i].fn(s->pollers[i].arg);
	(void)sched_settle(s);
	if (unlikely(s->exclusive != NULL))
		return work + sched_iterate_exclusive(s);

	if (s->heap_n > 0) {
		uint64_t now = dtxn_now_ns();

		while (s->heap_n > 0 && s->heap[0]->wake_ns <= now) {
			ready_push(s, heap_pop(s));
			work++;
		}
	}

	work += s->ready_n;
	s->batch_left = sched_busy(s) ? 0 : s->ready_n;
	while (s->batch_left > 0) {
		s->batch_left--;
		sched_resume(s, ready_pop(s));
		if (sched_settle(s) || s->exclusive != NULL)
			break; /* busy: the rest of the batch stays ready, in order */
	}
	s->batch_left = 0;
	return work;
}

/* The loop's busy time (dtxn_sched_loop_busy_ns()): the owner's updates. */
static inline void
lb_write_begin(struct dtxn_sched *s)
{
	__atomic_store_n(&s->lb_seq, s->lb_seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

static inline void
lb_write_end(struct dtxn_sched *s)
{
	__atomic_store_n(&s->lb_seq, s->lb_seq + 1, __ATOMIC_RELEASE);
}

static void
lb_open(struct dtxn_sched *s, uint64_t t)
{
	lb_write_begin(s);
	__atomic_store_n(&s->lb_since, t, __ATOMIC_RELAXED);
	__atomic_store_n(&s->lb_open, true, __ATOMIC_RELAXED);
	lb_write_end(s);
}

static void
lb_close(struct dtxn_sched *s, uint64_t t)
{
	lb_write_begin(s);
	__atomic_store_n(&s->lb_cycles, s->lb_cycles + (t - s->lb_since), __ATOMIC_RELAXED);
	__atomic_store_n(&s->lb_open, false, __ATOMIC_RELAXED);
	lb_write_end(s);
}

uint64_t
dtxn_sched_loop_busy_ns(const struct dtxn_sched *s)
{
	uint64_t cycles, since;
	uint32_t q;
	bool open;

	if (s == NULL)
		return 0;
	for (;;) {
		q = __atomic_load_n(&s->lb_seq, __ATOMIC_ACQUIRE);
		if (q & 1)
			continue;
		cycles = __atomic_load_n(&s->lb_cycles, __ATOMIC_RELAXED);
		since = __atomic_load_n(&s->lb_since, __ATOMIC_RELAXED);
		open = __atomic_load_n(&s->lb_open, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&s->lb_seq, __ATOMIC_RELAXED) == q)
			break;
	}
	if (open) {
		uint64_t now = dtxn_cpu_cycles();

		cycles += now > since ? now - since : 0;
	}
	return dtxn_cycles_to_ns(cycles);
}

unsigned
dtxn_sched_step_lc(struct dtxn_sched *s)
{
	uint64_t t0;

	if (s == NULL)
		return 0;
	if (s->in_loop) {
		SCHED_LOG(ERR, "%s: step_lc called from inside its own loop", s->name);
		return s->alive;
	}
	s->in_loop = true;
	if (unlikely(g_dtxn_clock.virtual_time)) {
		sched_iterate(s);
	} else {
		/* one step of an lcore that steps several schedulers: its own time */
		t0 = dtxn_cpu_cycles();
		if (sched_iterate(s) != 0) {
			lb_open(s, t0);
			lb_close(s, dtxn_cpu_cycles());
		}
	}
	s->in_loop = false;
	return s->alive;
}

int
dtxn_sched_run_lc(struct dtxn_sched *s)
{
	bool real;
	int rc = 0;

	if (s == NULL)
		return -EINVAL;
	if (s->in_loop)
		return -EBUSY;
	s->in_loop = true;
	/* busy time (dtxn_sched_loop_busy_ns()): a TSC read per busy/idle
	 * transition and per idle iteration, none while busy */
	real = !g_dtxn_clock.virtual_time;
	while (s->alive > 0) {
		uint64_t t0 = real && !s->lb_open ? dtxn_cpu_cycles() : 0;

		if (sched_iterate(s) != 0) {
			if (real && !s->lb_open)
				lb_open(s, t0);
			continue;
		}
		if (s->lb_open)
			lb_close(s, dtxn_cpu_cycles());
		if (s->ready_n == 0 && s->heap_n == 0 && s->n_pollers == 0) {
			/* Everyone waits for a completion nobody can deliver. */
			SCHED_LOG(ERR, "%s: %u coroutines wait and no poller can wake them",
				  s->name, s->alive);
			rc = -EDEADLK;
			break;
		}
		rte_pause();
	}
	if (s->lb_open)
		lb_close(s, dtxn_cpu_cycles());
	s->in_loop = false;
	return rc;
}

void
dtxn_sched_stop(struct dtxn_sched *s)
{
	if (s != NULL)
		__atomic_store_n(&s->stop, true, __ATOMIC_RELEASE);
}

bool
dtxn_sched_stopping(const struct dtxn_sched *s)
{
	return s != NULL && __atomic_load_n(&s->stop, __ATOMIC_ACQUIRE);
}

uint64_t
dtxn_sched_switches(const struct dtxn_sched *s)
{
	return s == NULL ? 0 : __atomic_load_n(&s->switches, __ATOMIC_RELAXED);
}

int
dtxn_sched_add_poller(struct dtxn_sched *s, dtxn_poller_fn fn, void *arg)
{
	if (s == NULL || fn == NULL)
		return -EINVAL;
	if (s->n_pollers >= DTXN_SCHED_MAX_POLLERS)
		return -ENOSPC;
	s->pollers[s->n_pollers].fn = fn;
	s->pollers[s->n_pollers].arg = arg;
	s->n_pollers++;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Coroutine calls                                                    */
/* ------------------------------------------------------------------ */

void
dtxn_co_yield_lc(struct dtxn_co *co)
{
	if (!co_is_current(co, __func__))
		return;
	ready_push(co->s, co);
	co_leave(co->s, co);
}

void
dtxn_co_expect_lc(struct dtxn_co *co, unsigned n)
{
	if (co != NULL)
		co->pending += n;
}

void
dtxn_co_complete_lc(struct dtxn_co *co, int status)
{
	if (co == NULL)
		return;
	if (status != 0 && co->status == 0)
		co->status = status;
	if (co->pending == 0) {
		SCHED_LOG(DEBUG, "%s: completion for coroutine %u that expects none",
			  co->s->name, co->id);
		return;
	}
	if (--co->pending == 0 && co->state == CO_WAITING)
		ready_push(co->s, co);
}

void
dtxn_co_fail_lc(struct dtxn_co *co, int status)
{
	if (co != NULL && status != 0 && co->status == 0)
		co->status = status;
}

int
dtxn_co_wait_lc(struct dtxn_co *co)
{
	int rc;

	if (!co_is_current(co, __func__))
		return -EINVAL;
	if (co->pending > 0) {
		co->state = CO_WAITING;
		co_leave(co->s, co);
	}
	rc = co->status;
	co->status = 0;
	return rc;
}

int
dtxn_co_wait_timed_lc(struct dtxn_co *co, uint64_t *waited_ns)
{
	int rc;

	if (!co_is_current(co, __func__))
		return -EINVAL;
	if (co->pending > 0) {
		co->state = CO_WAITING;
		if (g_dtxn_clock.virtual_time) {
			const uint64_t t0 = dtxn_now_ns();

			co_leave(co->s, co);
			*waited_ns += dtxn_now_ns() - t0;
		} else {
			/* the switches out and back in read the clock: no read here */
			co_leave(co->s, co);
			*waited_ns += co->s->now_ns - co->left_ns;
		}
	}
	rc = co->status;
	co->status = 0;
	return rc;
}

uint64_t
dtxn_co_now_ns(const struct dtxn_co *co)
{
	/* real time: the stamp of the switch that gave co the thread */
	if (likely(!g_dtxn_clock.virtual_time && co != NULL && co->s->current == co))
		return co->s->now_ns;
	return dtxn_now_ns();
}

int
dtxn_co_spin_lc(struct dtxn_co *co)
{
	struct dtxn_sched *s;
	int rc;

	if (!co_is_current(co, __func__))
		return -EINVAL;
	s = co->s;
	if (co->pending > 0 && !g_dtxn_clock.virtual_time) {
		/* the thread polls its CQ and nothing else */
		while (co->pending > 0) {
			unsigned work = 0, i;

			for (i = 0; i < s->n_pollers; i++)
				work += s->pollers[i].fn(s->pollers[i].arg);
			if (work == 0)
				rte_pause();
		}
	} else if (co->pending > 0) {
		uint64_t t0 = dtxn_now_ns();

		/* back to the loop, which runs only the pollers until co is ready */
		co->state = CO_WAITING;
		s->exclusive = co;
		s->current = NULL;
		count_switch(s);
		co_ctx_switch(&co->ctx, &s->loop_ctx);
		s->cpu_ns += dtxn_now_ns() - t0; /* the thread was busy polling */
	}
	rc = co->status;
	co->status = 0;
	return rc;
}

void
dtxn_co_sleep_until_lc(struct dtxn_co *co, uint64_t t_ns)
{
	struct dtxn_sched *s;

	if (!co_is_current(co, __func__))
		return;
	s = co->s;
	if (t_ns <= dtxn_now_ns()) {
		/* Already due: still give the others a turn. */
		ready_push(s, co);
	} else {
		co->state = CO_SLEEPING;
		co->wake_ns = t_ns;
		co->wake_seq = s->wake_seq++;
		heap_push(s, co);
	}
	co_leave(s, co);
}

unsigned
dtxn_co_id(const struct dtxn_co *co)
{
	return co->id;
}

struct dtxn_sched *
dtxn_co_sched(const struct dtxn_co *co)
{
	return co->s;
}

/* ------------------------------------------------------------------ */
/* Creation and destruction                                           */
/* ------------------------------------------------------------------ */

struct dtxn_co *
dtxn_co_create(struct dtxn_sched *s, dtxn_co_fn fn, void *arg)
{
	struct dtxn_co *co;
	void *stack;
	uint16_t id;

	if (s == NULL || fn == NULL) {
		rte_errno = EINVAL;
		return NULL;
	}
	if (s->free_n == 0) {
		rte_errno = ENOSPC;
		return NULL;
	}
	if (rte_mempool_get(s->stacks, &stack) < 0) {
		rte_errno = ENOMEM;
		return NULL;
	}
	id = s->free_ids[--s->free_n];
	co = &s->cos[id];
	memset(co, 0, sizeof(*co));
	co->s = s;
	co->fn = fn;
	co->arg = arg;
	co->stack = stack;
	co->id = id;
	*(uint64_t *)stack = SCHED_STACK_CANARY;
	co_ctx_init(&co->ctx, (char *)stack + SCHED_STACK_RESERVED,
		    s->stack_size - SCHED_STACK_RESERVED, co_main, co);
	s->alive++;
	ready_push(s, co);
	return co;
}

static bool
sched_args_ok(const char *name, int socket_id, unsigned max_cos, size_t stack_size)
{
	size_t len;

	if (name == NULL)
		return false;
	len = strnlen(name, SCHED_NAME_MAX + 1);
	if (len == 0 || len > SCHED_NAME_MAX)
		return false;
	if (socket_id != SOCKET_ID_ANY &&
	    (socket_id < 0 || socket_id >= RTE_MAX_NUMA_NODES))
		return false;
	if (max_cos == 0 || max_cos > SCHED_MAX_COS)
		return false;
	if (stack_size != 0 &&
	    (stack_size < SCHED_STACK_MIN || stack_size > SCHED_STACK_MAX ||
	     stack_size % SCHED_STACK_ALIGN != 0))
		return false;
	return true;
}

void
dtxn_sched_footprint(unsigned max_cos, size_t stack_size, struct dtxn_footprint *fp)
{
	const uint64_t slack = DTXN_FOOTPRINT_ALLOC_SLACK;
	uint64_t elt;

	if (stack_size == 0)
		stack_size = DTXN_CO_STACK_DEFAULT;
	/* a mempool element: header, object and trailer, cache-line aligned */
	elt = RTE_ALIGN_CEIL(stack_size + 2 * RTE_CACHE_LINE_SIZE, RTE_CACHE_LINE_SIZE);
	fp->bytes += sizeof(struct dtxn_sched) + slack +
		     (uint64_t)max_cos * (sizeof(struct dtxn_co) + sizeof(struct dtxn_co *) +
					  sizeof(uint16_t)) + 3 * slack +
		     (uint64_t)max_cos * elt + (uint64_t)rte_align32pow2(max_cos + 1) * 8 +
		     3 * RTE_PGSIZE_4K; /* mempool header, ring header, chunk rounding */
	fp->memzones += 3;
}

struct dtxn_sched *
dtxn_sched_create(const char *name, int socket_id, unsigned max_cos, size_t stack_size)
{
	struct dtxn_sched *s = NULL;
	char pool_name[RTE_MEMPOOL_NAMESIZE];
	unsigned i;
	int err;

	if (!sched_args_ok(name, socket_id, max_cos, stack_size)) {
		rte_errno = EINVAL;
		return NULL;
	}
	if (stack_size == 0)
		stack_size = DTXN_CO_STACK_DEFAULT;

	err = ENOMEM;
	s = rte_zmalloc_socket("dtxn_sched", sizeof(*s), RTE_CACHE_LINE_SIZE, socket_id);
	if (s == NULL)
		goto fail;
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->poll_wake_ns = UINT64_MAX;
	s->max_cos = max_cos;
	s->stack_size = stack_size;
	s->socket_id = socket_id;

	s->cos = rte_zmalloc_socket("dtxn_sched_cos", max_cos * sizeof(*s->cos),
				    RTE_CACHE_LINE_SIZE, socket_id);
	s->heap = rte_malloc_socket("dtxn_sched_heap", max_cos * sizeof(*s->heap),
				    RTE_CACHE_LINE_SIZE, socket_id);
	s->free_ids = rte_malloc_socket("dtxn_sched_ids", max_cos * sizeof(*s->free_ids),
					RTE_CACHE_LINE_SIZE, socket_id);
	if (s->cos == NULL || s->heap == NULL || s->free_ids == NULL)
		goto fail;
	/* Lowest id on top: the first coroutines get ids 0, 1, 2, ... */
	for (i = 0; i < max_cos; i++)
		s->free_ids[i] = (uint16_t)(max_cos - 1 - i);
	s->free_n = max_cos;

	/* "s" + at most 24 chars fits RTE_MEMPOOL_NAMESIZE (26 with the NUL). */
	snprintf(pool_name, sizeof(pool_name), "s%s", name);
	s->stacks = rte_mempool_create(pool_name, max_cos, stack_size, 0, 0,
				       NULL, NULL, NULL, NULL, socket_id,
				       RTE_MEMPOOL_F_SP_PUT | RTE_MEMPOOL_F_SC_GET |
				       RTE_MEMPOOL_F_NO_IOVA_CONTIG);
	if (s->stacks == NULL) {
		err = rte_errno == EEXIST ? EEXIST : ENOMEM;
		goto fail;
	}
	SCHED_LOG(DEBUG, "%s: %u coroutines, %zu-byte stacks, socket %d, switch %s",
		  name, max_cos, stack_size, socket_id, co_ctx_impl());
	return s;
fail:
	if (s != NULL) {
		rte_free(s->free_ids);
		rte_free(s->heap);
		rte_free(s->cos);
		rte_free(s);
	}
	SCHED_LOG(ERR, "%s: cannot create scheduler: %s", name, strerror(err));
	rte_errno = err;
	return NULL;
}

void
dtxn_sched_destroy(struct dtxn_sched *s)
{
	unsigned i;

	if (s == NULL)
		return;
	if (s->in_loop) {
		SCHED_LOG(ERR, "%s: destroy while its loop runs; ignored", s->name);
		return;
	}
	/* Suspended coroutines are discarded: their stacks go back first. */
	for (i = 0; i < s->max_cos; i++)
		if (s->cos[i].state != CO_FREE)
			co_release(s, &s->cos[i]);
	rte_mempool_free(s->stacks);
	rte_free(s->free_ids);
	rte_free(s->heap);
	rte_free(s->cos);
	rte_free(s);
}
