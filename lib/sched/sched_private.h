/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DTXN_SCHED_PRIVATE_H
#define DTXN_SCHED_PRIVATE_H

/*
 * lib/sched internals. Never installed, never included outside lib/sched.
 *
 * Files:
 *   clock.c      real (TSC) and virtual clock
 *   co_switch.c  machine context: initial frame and the switch itself
 *   sched.c      scheduler object, coroutine life cycle, poll loop
 *   sched_cpu.c  CPU time in virtual time: cost model, charges, busy time
 */

#include <stdint.h>

#include <rte_common.h>
#include <rte_log.h>

#include "dtxn_sched.h"

extern int dtxn_sched_logtype;
#define SCHED_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_##level, dtxn_sched_logtype, "dtxn.sched: " fmt "\n", ##__VA_ARGS__)

/* ------------------------------------------------------------------ */
/* Machine context (co_switch.c)                                      */
/* ------------------------------------------------------------------ */

/*
 * The switch is chosen by architecture: hand-written assembly on x86_64 and
 * aarch64, ucontext elsewhere. DTXN_CO_UCONTEXT forces the fallback so that it can be
 * exercised on x86_64 too (a developer check, not a configuration).
 */
#if (defined(__x86_64__) || defined(__aarch64__)) && !defined(DTXN_CO_UCONTEXT)
#define SCHED_CO_ASM 1
#else
#define SCHED_CO_UCONTEXT 1
#include <ucontext.h>
#endif

/** Saved machine context of a suspended coroutine (or of the scheduler). */
struct co_ctx {
#ifdef SCHED_CO_ASM
	void *sp;         /**< stack pointer; registers are saved on the stack */
#else
	ucontext_t uc;
#endif
};

/** Entry of a new context; must never return. */
typedef void (*co_entry_fn)(void *arg);

/**
 * Prepares @p ctx so that the first co_ctx_switch() to it calls
 * entry(arg) on the stack [stack_lo, stack_lo + size). size is a multiple of
 * 16 and stack_lo 16-byte aligned.
 */
void co_ctx_init(struct co_ctx *ctx, void *stack_lo, size_t size,
		 co_entry_fn entry, void *arg);

/**
 * Saves the running context in @p from and resumes @p to. Returns when some
 * later co_ctx_switch() names @p from as its target.
 */
void co_ctx_switch(struct co_ctx *from, struct co_ctx *to);

/** Name of the switch implementation ("x86_64 asm", "aarch64 asm", "ucontext"). */
const char *co_ctx_impl(void);

/*
 * AddressSanitizer sees a coroutine stack as plain memory whose shadow holds
 * the redzones of the frames on it until those frames return. A coroutine
 * discarded while suspended (dtxn_sched_destroy(); on sim, every coordinator
 * of a CN killed by --fault) never returns from them: its stack must be
 * unpoisoned before the memory goes back to the allocator, or the next
 * access to it (DPDK clears a freed memzone) is reported as a
 * stack-buffer-underflow. gcc defines __SANITIZE_ADDRESS__, clang has the
 * feature.
 */
#if defined(__SANITIZE_ADDRESS__)
#define SCHED_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SCHED_ASAN 1
#endif
#endif

#ifdef SCHED_ASAN
#include <sanitizer/asan_interface.h>
#endif

/** Clears the ASan shadow of [stack, stack + size); a no-op without ASan. */
static inline void
co_stack_unpoison(void *stack, size_t size)
{
#ifdef SCHED_ASAN
	__asan_unpoison_memory_region(stack, size);
#else
	RTE_SET_USED(stack);
	RTE_SET_USED(size);
#endif
}

/* ------------------------------------------------------------------ */
/* Scheduler objects (sched.c)                                        */
/* ------------------------------------------------------------------ */

enum co_state {
	CO_FREE = 0,   /* slot unused */
	CO_READY,      /* in the ready queue */
	CO_RUNNING,    /* s->current */
	CO_WAITING,    /* in dtxn_co_wait_lc(), pending > 0 */
	CO_SLEEPING,   /* in the timer heap */
	CO_DEAD,       /* returned; stack released when control is back in the loop */
};

/** Written at the lowest word of every stack; checked when it is released. */
#define SCHED_STACK_CANARY UINT64_C(0xd7c05eedcafef00d)

struct dtxn_co {
	struct co_ctx ctx;
	struct dtxn_sched *s;
	struct dtxn_co *next;      /* ready queue link */
	dtxn_co_fn fn;
	void *arg;
	void *stack;               /* mempool object, stack_size bytes */
	uint64_t wake_ns;          /* CO_SLEEPING: wake-up time */
	uint64_t wake_seq;         /* CO_SLEEPING: tie-break, FIFO among equal times */
	uint32_t pending;          /* outstanding completions */
	int status;                /* first non-zero completion status since last wait */
	uint16_t id;
	uint8_t state;             /* enum co_state */
	uint64_t left_ns;          /* real time: when it last left the thread (s->now_ns) */
} __rte_cache_aligned;

struct sched_poller {
	dtxn_poller_fn fn;
	void *arg;
};

struct dtxn_sched {
	/* hot: touched on every switch */
	struct dtxn_co *current;       /* running coroutine, NULL in the loop */
	struct dtxn_co *ready_head;    /* FIFO of CO_READY coroutines */
	struct dtxn_co *ready_tail;
	unsigned ready_n;
	unsigned batch_left;           /* ready coroutines still to run in this iteration */
	uint64_t switches;
	uint64_t now_ns;               /* real time: dtxn_now_ns() at the last switch (dtxn_co_now_ns()) */
	struct co_ctx loop_ctx;        /* the poll loop's own context */
	struct dtxn_co *zombie;        /* ended coroutine whose stack is to release */
	struct dtxn_co *exclusive;     /* virtual time: in dtxn_co_spin_lc(), the only one to run */
	uint64_t poll_wake_ns;         /* dtxn_sched_wake_at(): earliest poller wake-up, UINT64_MAX none */

	unsigned n_pollers;
	struct sched_poller pollers[DTXN_SCHED_MAX_POLLERS];

	/* timer heap: binary min-heap on (wake_ns, wake_seq) */
	struct dtxn_co **heap;
	unsigned heap_n;
	uint64_t wake_seq;

	unsigned alive;                /* created and not yet ended */
	unsigned max_cos;
	size_t stack_size;
	int socket_id;
	bool in_loop;                  /* inside run_lc()/step_lc() */
	bool stop;                     /* atomic: dtxn_sched_stop() */

	/* real time only (sched.c, dtxn_sched_loop_busy_ns()): the loop's busy
	 * time in TSC cycles; written by the owner under lb_seq (odd while
	 * written), read by any thread */
	uint32_t lb_seq;
	bool lb_open;                  /* a busy stretch is under way, since lb_since */
	uint64_t lb_since;
	uint64_t lb_cycles;            /* closed busy stretches */

	/* virtual time only (sched_cpu.c): CPU charged by the cost model */
	uint64_t debt_ns;              /* charged, not yet busy time */
	uint64_t busy_until_ns;        /* thread computes until then; 0 in real time */
	uint64_t cpu_ns;               /* all CPU charged, ns */
	bool has_cpu;                  /* a cost model is attached */
	struct dtxn_cpu_model cpu;
	uint64_t cpu_ops[DTXN_CPU_OP_MAX];

	struct rte_mempool *stacks;
	struct dtxn_co *cos;           /* max_cos slots */
	uint16_t *free_ids;            /* stack of free slot ids */
	unsigned free_n;
	char name[32];
};

/* ------------------------------------------------------------------ */
/* CPU time in virtual time (sched_cpu.c)                             */
/* ------------------------------------------------------------------ */

/*
 * Turns the CPU debt into busy time: busy_until = now + debt. Only ever
 * non-zero in virtual time, so in real time this is one predictable branch.
 * @return true if the thread is now busy (the loop must stop running
 *   coroutines).
 */
static inline bool
sched_settle(struct dtxn_sched *s)
{
	if (__builtin_expect(s->debt_ns == 0, 1))
		return false;
	s->busy_until_ns = dtxn_now_ns() + s->debt_ns;
	s->debt_ns = 0;
	return true;
}

/* @return true while the thread computes (virtual time only). */
static inline bool
sched_busy(const struct dtxn_sched *s)
{
	return __builtin_expect(s->busy_until_ns != 0, 0) && s->busy_until_ns > dtxn_now_ns();
}

#endif /* DTXN_SCHED_PRIVATE_H */
