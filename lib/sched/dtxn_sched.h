/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DTXN_SCHED_H
#define DTXN_SCHED_H

/**
 * @file
 * Per-lcore coroutine scheduler and the clock (ARCHITECTURE.md, "Scheduler
 * and clock").
 *
 * One stackful coroutine per coordinator, many per lcore. The lcore runs a
 * run-to-completion poll loop: it calls every registered poller (CQ reaping,
 * message delivery), wakes coroutines whose timed sleep has expired, then
 * resumes every ready coroutine once. A coroutine gives the lcore back only
 * by yielding (dtxn_co_yield_lc(), dtxn_co_wait_lc(), dtxn_co_sleep_until_lc()).
 *
 * Thread-safety: a scheduler and its coroutines belong to the lcore that
 * runs dtxn_sched_run_lc(); every call ending in _lc must be made on that
 * lcore. dtxn_sched_stop() and dtxn_now_ns() may be called from any thread.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_cycles.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* Clock                                                              */
/* ------------------------------------------------------------------ */

/** @internal Clock state; read through dtxn_now_ns() only. */
struct dtxn_clock {
	bool virtual_time;   /**< true: time is vnow_ns (simulation) */
	uint64_t vnow_ns;    /**< virtual now, ns */
	uint64_t tsc_base;   /**< TSC value at dtxn_clock_init() */
	uint64_t mult;       /**< ns = (tsc - tsc_base) * mult >> shift */
	uint32_t shift;
};
extern struct dtxn_clock g_dtxn_clock;

/** @internal (a * b) >> shift on the full 128-bit product (no __int128 only). */
uint64_t dtxn_clock_mul_shift(uint64_t a, uint64_t b, uint32_t shift);

/**
 * @internal Reads the TSC-backed clock: ns = (tsc - tsc_base) * mult >>
 * shift on the full 128-bit product (clock.c). Inline: the coordinator's
 * hot path reads it a few times per WR batch.
 */
static inline uint64_t
dtxn_clock_real_ns(void)
{
	uint64_t d = rte_get_tsc_cycles() - g_dtxn_clock.tsc_base;

#ifdef __SIZEOF_INT128__
	return (uint64_t)(((unsigned __int128)d * g_dtxn_clock.mult) >> g_dtxn_clock.shift);
#else
	return dtxn_clock_mul_shift(d, g_dtxn_clock.mult, g_dtxn_clock.shift);
#endif
}

/**
 * TSC cycles, for CPU accounting only (dtxn_sched_loop_busy_ns(), the
 * emulated NIC's time: dtxn_cq_nic_cycles()): no clock (never virtual),
 * read by the thread whose CPU it counts. dtxn_cycles_to_ns() converts a
 * difference.
 */
static inline uint64_t
dtxn_cpu_cycles(void)
{
	return rte_get_tsc_cycles();
}

/** @return @p cycles (a difference of dtxn_cpu_cycles()) in ns. */
uint64_t dtxn_cycles_to_ns(uint64_t cycles);

/**
 * Calibrates the real-time clock from the EAL's TSC frequency. Call once,
 * after rte_eal_init(), before any dtxn_now_ns().
 *
 * @return 0, or -ENOTSUP if the EAL reports a TSC frequency of 0.
 */
int dtxn_clock_init(void);

/**
 * The only clock protocol, fabric and benchmark code may read.
 *
 * @return nanoseconds since dtxn_clock_init() in real time, or the virtual
 *   time in nanoseconds when the clock is virtual (simulation). Monotonic.
 *   Thread-safe.
 */
static inline uint64_t
dtxn_now_ns(void)
{
	if (__builtin_expect(g_dtxn_clock.virtual_time, 0))
		return __atomic_load_n(&g_dtxn_clock.vnow_ns, __ATOMIC_RELAXED);
	return dtxn_clock_real_ns();
}

/**
 * Switches the clock to virtual time starting at @p start_ns (simulation).
 * Not thread-safe: call before any lcore runs.
 */
void dtxn_clock_set_virtual(uint64_t start_ns);

/**
 * Advances virtual time to @p t_ns; a smaller value is ignored (time never
 * goes back). Only for the simulation's event loop.
 */
void dtxn_clock_advance(uint64_t t_ns);

/** Nodes that may have a clock of their own (dtxn_clock_set_node()). */
#define DTXN_CLOCK_MAX_NODES 64

/**
 * Gives node @p node a clock of its own (the sim fabric's clock skew,
 * doc/guides/sim.md, "Clock skew"): from now on dtxn_node_now_ns(node) is
 * now + @p offset_ns + (now - t_set) * @p drift_ppm / 10^6, where t_set is
 * dtxn_now_ns() at this call: the node's oscillator is off by
 * @p drift_ppm parts per million. Protocols that time intervals on one
 * node (OOCC's lease) read it instead of dtxn_now_ns(). Not thread-safe:
 * call before any lcore runs (after dtxn_clock_set_virtual() in a
 * simulation).
 * @param offset_ns  signed; the node's clock may read below 0 (it wraps
 *   modulo 2^64: differences on one node stay right).
 * @param drift_ppm  in (-10^6, 10^6).
 * @return 0, or -EINVAL (node >= DTXN_CLOCK_MAX_NODES, drift out of range).
 */
int dtxn_clock_set_node(unsigned node, int64_t offset_ns, int32_t drift_ppm);

/**
 * Node @p node's clock: dtxn_now_ns() with the offset and drift given by
 * dtxn_clock_set_node() (none: dtxn_now_ns() itself; also for a node out
 * of range). Monotonic on one node, modulo 2^64. Thread-safe.
 */
uint64_t dtxn_node_now_ns(unsigned node);

/* ------------------------------------------------------------------ */
/* Scheduler and coroutines                                           */
/* ------------------------------------------------------------------ */

struct dtxn_sched;
struct dtxn_co;

/** Coroutine body. Returning ends the coroutine. */
typedef void (*dtxn_co_fn)(struct dtxn_co *co, void *arg);

/**
 * Poller called once per loop iteration, before coroutines are resumed.
 * @return the number of events handled (0 when idle); only used for stats.
 */
typedef unsigned (*dtxn_poller_fn)(void *arg);

/** Default coroutine stack size, bytes. */
#define DTXN_CO_STACK_DEFAULT (64 * 1024)

/**
 * Creates a scheduler for one lcore.
 *
 * @param name       unique name (used for the stack mempool), at most 24 chars.
 * @param socket_id  NUMA socket for the stack mempool (SOCKET_ID_ANY allowed).
 * @param max_cos    coroutines this scheduler may hold (1..65535).
 * @param stack_size bytes per coroutine stack, multiple of 4096, >= 16 KiB;
 *                   0 selects DTXN_CO_STACK_DEFAULT.
 * @return the scheduler, or NULL with rte_errno set: EINVAL (bad argument),
 *   ENOMEM (no memory for the stack mempool), EEXIST (name in use).
 */
struct dtxn_sched *dtxn_sched_create(const char *name, int socket_id,
				     unsigned max_cos, size_t stack_size);

/**
 * Frees a scheduler that is not running and all its coroutines' stacks.
 * NULL is a no-op. Coroutines still suspended are discarded without being
 * resumed. Called while its loop runs, it logs an error and does nothing.
 */
void dtxn_sched_destroy(struct dtxn_sched *s);

/**
 * Creates a coroutine, ready to run at the next loop iteration.
 *
 * @return the coroutine, or NULL with rte_errno = ENOSPC (max_cos reached)
 *   or ENOMEM (no stack), or EINVAL (@p s or @p fn NULL). The slot and the
 *   stack of a coroutine that returned are reused, so max_cos bounds the
 *   coroutines alive at once, and a later coroutine may get the same id.
 */
struct dtxn_co *dtxn_co_create(struct dtxn_sched *s, dtxn_co_fn fn, void *arg);

/**
 * Registers a poller, called at each loop iteration in registration order.
 *
 * @return 0, or -ENOSPC past DTXN_SCHED_MAX_POLLERS (8), or -EINVAL
 *   (@p s or @p fn NULL).
 */
#define DTXN_SCHED_MAX_POLLERS 8
int dtxn_sched_add_poller(struct dtxn_sched *s, dtxn_poller_fn fn, void *arg);

/**
 * Runs the poll loop on the calling lcore until every coroutine has
 * returned, or dtxn_sched_stop() was called and every coroutine has
 * returned (coroutines see the request through dtxn_sched_stopping()).
 * Never blocks in the kernel.
 *
 * @return 0 when all coroutines ended; -EINVAL if @p s is NULL; -EBUSY if
 *   called from inside the loop of @p s (a poller or a coroutine);
 *   -EDEADLK if every live coroutine waits in dtxn_co_wait_lc() and no
 *   poller is registered (nothing could ever wake them).
 */
int dtxn_sched_run_lc(struct dtxn_sched *s);

/**
 * Runs one iteration of the poll loop (pollers, timers, ready coroutines).
 * For drivers that interleave several schedulers (simulation) and tests.
 *
 * @return number of coroutines still alive (0 if @p s is NULL).
 */
unsigned dtxn_sched_step_lc(struct dtxn_sched *s);

/** Asks the scheduler's coroutines to finish. Any thread. */
void dtxn_sched_stop(struct dtxn_sched *s);

/** @return true once dtxn_sched_stop() was called. Any thread. */
bool dtxn_sched_stopping(const struct dtxn_sched *s);

/** Yields, staying ready: other coroutines run before this one resumes. */
void dtxn_co_yield_lc(struct dtxn_co *co);

/**
 * Adds @p n to the coroutine's count of outstanding completions (signaled
 * WRs, expected replies). Call before posting.
 */
void dtxn_co_expect_lc(struct dtxn_co *co, unsigned n);

/**
 * Reports one completion for @p co (called by a poller, e.g. for each CQE
 * whose wr_id names @p co). A non-zero @p status is remembered: the first
 * one is returned by dtxn_co_wait_lc(). When the count drops to 0 the
 * coroutine becomes ready if it waits; if it is not waiting, the count just
 * drops. A completion while the count is already 0 only records its status.
 */
void dtxn_co_complete_lc(struct dtxn_co *co, int status);

/**
 * Reports the failure of a WR of @p co that completes nothing: an
 * unsignaled WR ahead of a signaled one on the same QP (selective
 * signaling: the signaled WR's completion, which follows in the RC order,
 * is the one counted). A non-zero @p status is remembered as by
 * dtxn_co_complete_lc(), the first one returned by the next wait; the
 * count of outstanding completions and the coroutine's state are left
 * alone. No-op for @p co NULL or @p status 0. Owning lcore (a poller).
 */
void dtxn_co_fail_lc(struct dtxn_co *co, int status);

/**
 * Yields until the count of outstanding completions is 0. Returns at once
 * if it is already 0.
 *
 * @return 0, or the first non-zero completion status seen since the last
 *   wait (the count still reaches 0 before it returns); -EINVAL if @p co is
 *   not the running coroutine (the _lc calls that yield must be made by
 *   @p co itself; yield and sleep ignore such a call and log an error).
 */
int dtxn_co_wait_lc(struct dtxn_co *co);

/**
 * dtxn_co_wait_lc(), and adds to @p waited_ns the nanoseconds (dtxn_now_ns())
 * from the moment @p co left its thread to the moment it got it back (0
 * if it did not yield: nothing was outstanding). In real time these are
 * the scheduler's stamps of the two switches (dtxn_co_now_ns()): no clock
 * read of its own (a coordinator's wait on its verbs, lib/txn: two reads
 * per wait around dtxn_co_wait_lc() cost ~20 ns per doorbell batch; issue
 * 30 part 2); in virtual time two reads of the virtual clock around the
 * yield, as a caller would.
 *
 * @return as dtxn_co_wait_lc() (-EINVAL: @p waited_ns unchanged).
 */
int dtxn_co_wait_timed_lc(struct dtxn_co *co, uint64_t *waited_ns);

/**
 * The scheduler's clock as the running coroutine @p co sees it: in real
 * time, dtxn_now_ns() as of the switch that last gave @p co its thread
 * (the scheduler reads the TSC once per switch, in or out, and that one
 * read serves the coroutine that leaves, the one that runs next and
 * every call of this until the next switch: no read here); in virtual
 * time, dtxn_now_ns() itself. So in real time it lags dtxn_now_ns() by
 * the CPU time @p co has run since it was resumed (its resolution: one
 * run of a coroutine between two switches, typically well under a µs on
 * a coordinator's hot path), and it does not move while @p co runs.
 * For figures that time spans of a coroutine across its waits (a
 * transaction's latency: lib/bench's runner), where a TSC read costs
 * 13-16 ns on a VM (issue 30 part 2); never for deadlines, leases or
 * anything a protocol decides on (use dtxn_now_ns()).
 *
 * @param co  the running coroutine; for any other (or NULL) it returns
 *   dtxn_now_ns().
 * @return ns on the dtxn_now_ns() scale. Coroutine's lcore only.
 */
uint64_t dtxn_co_now_ns(const struct dtxn_co *co);

/**
 * Waits for the coroutine's outstanding completions without letting its
 * thread run any other coroutine: the thread busy-polls its CQ, as FORD's
 * public code does for its undo-log ACKs (doc/guides/ford.md, published
 * mode). Timers of other coroutines are not served meanwhile either.
 * - Real time: calls the scheduler's pollers (CQ reaping, message
 *   delivery) in a loop until the count is 0; never switches coroutines.
 *   Completions for other coroutines make them ready, for later.
 * - Virtual time: a thread cannot spin in the simulation's single thread
 *   (virtual time advances only in its event loop), so the coroutine
 *   leaves the thread as in dtxn_co_wait_lc(), but until its completions
 *   are in, dtxn_sched_step_lc() runs only the pollers and resumes no
 *   other coroutine, dtxn_sched_ready_count() and dtxn_sched_next_timer_ns()
 *   show no other work, and the time spent counts as CPU busy time
 *   (dtxn_sched_cpu_ns()).
 * Returns at once if the count is already 0.
 *
 * @return 0, or the first non-zero completion status seen since the last
 *   wait; -EINVAL if @p co is not the running coroutine.
 */
int dtxn_co_spin_lc(struct dtxn_co *co);

/**
 * Yields until dtxn_now_ns() >= @p t_ns (back-off, timeouts). Sleepers wake
 * earliest first, FIFO among equal times. A time already reached still
 * yields once, like dtxn_co_yield_lc().
 */
void dtxn_co_sleep_until_lc(struct dtxn_co *co, uint64_t t_ns);

/** @return the coroutine's index in its scheduler, 0-based. */
unsigned dtxn_co_id(const struct dtxn_co *co);

/** @return the scheduler the coroutine belongs to. */
struct dtxn_sched *dtxn_co_sched(const struct dtxn_co *co);

/** @return coroutine switches done by this scheduler so far. */
uint64_t dtxn_sched_switches(const struct dtxn_sched *s);

/* ------------------------------------------------------------------ */
/* CPU time in virtual time (simulation; doc/guides/sim.md)           */
/* ------------------------------------------------------------------ */

/*
 * In real time the CPU spends what it spends: every call below is a no-op
 * (charges) or returns 0 / UINT64_MAX. In virtual time (the sim fabric)
 * nothing costs time unless charged: a thread (one scheduler) runs one
 * coroutine at a time and is busy for the CPU time charged to it. A charge
 * is a debt; at the next point where the running coroutine gives the
 * thread up (yield, wait, sleep, return, dtxn_co_settle_lc()) or after the
 * pollers, the debt becomes busy time: busy_until = now + debt. While
 * busy_until is in the future, dtxn_sched_step_lc() does nothing (no
 * poller, no coroutine), as a thread that computes does not poll.
 */

/** What one unit of CPU work is, for the cost model (config/cpu/NAME.ini). */
enum dtxn_cpu_op {
	DTXN_CPU_TXN = 0,   /**< one transaction attempt: generator, begin, bookkeeping */
	DTXN_CPU_RECORD,    /**< one record added to a read/write set and processed */
	DTXN_CPU_WR,        /**< one work request built and posted */
	DTXN_CPU_DOORBELL,  /**< one doorbell: one chain posted on one QP */
	DTXN_CPU_CQE,       /**< one completion reaped and dispatched */
	DTXN_CPU_MSG,       /**< one message (SEND/RECV) handled */
	DTXN_CPU_OP_MAX,
};

/** A CPU cost model: nanoseconds of one thread per unit of each kind of work. */
struct dtxn_cpu_model {
	char name[32];                 /**< file name without directory and ".ini" */
	uint64_t ns[DTXN_CPU_OP_MAX];  /**< ns per unit, by enum dtxn_cpu_op */
};

/** @return the INI key of a cost ("txn_ns", "record_ns", ...), or "unknown". */
const char *dtxn_cpu_op_name(unsigned op);

/* ------------------------------------------------------------------ */
/* Footprints (issue 11: resources sized before the run)              */
/* ------------------------------------------------------------------ */

/**
 * What a component will allocate from the DPDK heap: each component that
 * a run sizes from its options has a *_footprint() call that adds its
 * share here (dtxn_sched_footprint(), dtxn_addr_cache_footprint(),
 * dtxn_fabric_footprint(), dtxn_worker_footprint()), so the app can
 * refuse a run that cannot fit before it allocates anything. Figures are
 * upper bounds (allocator headers and alignment included), checked
 * against measured allocations by the unit tests.
 */
struct dtxn_footprint {
	uint64_t bytes;     /**< heap and memzone bytes */
	uint32_t memzones;  /**< memzones reserved (limit: RTE_MAX_MEMZONE) */
	uint64_t mapped_bytes; /**< process memory mapped outside the DPDK heap
				*   (anonymous, backed page by page as the run
				*   first touches it): not counted in bytes */
	uint32_t qp_memzones;  /**< of memzones: one per QP (shm's inbound
				*   rings, dtxn_fabric_queue_footprint()) */
	uint64_t queue_bytes;  /**< of bytes: QP queues at their full depth
				*   (dtxn_fabric_queue_footprint()) */
	uint64_t queue_init_bytes; /**< the same queues at the first size of a
				    *   driver that grows them as used
				    *   (dtxn_fabric_ops.queues_grow): not in bytes */
};

/**
 * Whether dtxn_local_zalloc() maps its memory outside the DPDK heap: when
 * the EAL has no hugepages (--no-huge). The footprints still count such
 * tables in dtxn_footprint.bytes (the memory check bounds what a run may
 * touch; a run that touches little of them backs little). Any thread,
 * after rte_eal_init().
 */
bool dtxn_local_mapped(void);

/**
 * Zeroed memory for a large table that only this process reads (address
 * caches, a protocol's per-worker maps). Without hugepages: anonymous
 * pages (page aligned, mapped outside the DPDK heap, backed page by page
 * as first touched, so a run pays only for what it touches, and unmapped
 * without a write); in real time (the clock not virtual at this call) a
 * table of 2 MiB or more is 2 MiB aligned and advised to transparent huge
 * pages (madvise MADV_HUGEPAGE: backed 2 MiB at a time as touched, and a
 * lookup no longer walks the page table: the coordinator's hot path,
 * issue 30 part 2); with hugepages: rte_zmalloc_socket() (cache-line
 * aligned). Never share it with another process. Issue 30 (set-up).
 *
 * @param name      heap element name (with hugepages).
 * @param size      bytes; 0 returns NULL.
 * @param socket_id NUMA socket (with hugepages), or SOCKET_ID_ANY.
 * @return the memory, or NULL (size 0, or no memory). Any thread.
 */
void *dtxn_local_zalloc(const char *name, size_t size, int socket_id);

/**
 * Frees what dtxn_local_zalloc() returned.
 *
 * @param p    the memory, or NULL (nothing done).
 * @param size the size it was allocated with, bytes.
 * Any thread; not while another thread reads @p p.
 */
void dtxn_local_free(void *p, size_t size);

/**
 * @return bytes that dtxn_local_zalloc() has mapped outside the DPDK heap
 *   and dtxn_local_free() has not unmapped yet (0 with hugepages: those
 *   come from the heap). The footprint tests add it to the heap in use.
 *   Any thread.
 */
uint64_t dtxn_local_bytes(void);

/** Per-allocation overhead in the footprints: a malloc element header plus
 * a cache line of alignment, bytes. */
#define DTXN_FOOTPRINT_ALLOC_SLACK 192

/**
 * Adds to @p fp what dtxn_sched_create(name, socket, @p max_cos,
 * @p stack_size) allocates: the scheduler, its coroutine tables and its
 * stack mempool (a header, a ring and one chunk: 3 memzones).
 *
 * @param max_cos     coroutines, as for dtxn_sched_create().
 * @param stack_size  bytes per stack; 0 = DTXN_CO_STACK_DEFAULT.
 * @param fp          added to (not cleared). Any thread, no EAL needed.
 */
void dtxn_sched_footprint(unsigned max_cos, size_t stack_size, struct dtxn_footprint *fp);

/** Largest cost of one unit of work in a CPU model, ns (1 ms: a thousand
 * times the costliest calibrated unit; more is a typo, and would push the
 * simulation's latency figures past what they can hold). */
#define DTXN_CPU_COST_MAX_NS 1e6

/**
 * Loads a CPU cost model from an INI file (dtxn_ini.h: strict, errors name
 * file:line), section [cpu] and no other, keys txn_ns, record_ns, wr_ns,
 * doorbell_ns, cqe_ns, msg_ns: each a number of ns in [0,
 * DTXN_CPU_COST_MAX_NS], rounded to the nearest ns; a missing key costs 0.
 * The model's name is the file name without directory and ".ini".
 * doc/guides/sim.md, "CPU cost model".
 *
 * @param path   INI file.
 * @param m      filled on success; untouched on error.
 * @param err    on error, a one-line message naming the file (and line) and
 *   the problem.
 * @param errlen size of @p err, bytes.
 * @return 0, -EINVAL (@p path or @p m NULL, a broken INI rule, no [cpu]
 *   section, another section, unknown key, a value out of range),
 *   -ENOENT (cannot read the file, or not a regular file), -ENOMEM.
 */
int dtxn_cpu_model_load(const char *path, struct dtxn_cpu_model *m, char *err,
			size_t errlen);

/**
 * Attaches a cost model to a scheduler (the sim run loop does, for every
 * simulated thread). NULL detaches it. The model is copied. Owning lcore,
 * outside the loop.
 */
void dtxn_sched_set_cpu_model(struct dtxn_sched *s, const struct dtxn_cpu_model *m);

/**
 * Charges @p ns of CPU time to the thread of @p s (virtual time only; a
 * no-op in real time or with @p s NULL). Owning lcore, from a coroutine or
 * a poller of @p s.
 */
void dtxn_sched_charge(struct dtxn_sched *s, uint64_t ns);

/**
 * Charges @p n units of @p op at the attached model's cost and counts them
 * (dtxn_sched_cpu_ops()). A no-op without a model, in real time, or with
 * @p s NULL. Owning lcore.
 */
static inline void dtxn_sched_charge_op(struct dtxn_sched *s, enum dtxn_cpu_op op, uint64_t n);

/** @internal dtxn_sched_charge_op() in virtual time. */
void dtxn_sched_charge_op_virtual(struct dtxn_sched *s, enum dtxn_cpu_op op, uint64_t n);

static inline void
dtxn_sched_charge_op(struct dtxn_sched *s, enum dtxn_cpu_op op, uint64_t n)
{
	/* real time: no call on the hot path (several per txn) */
	if (__builtin_expect(g_dtxn_clock.virtual_time, 0))
		dtxn_sched_charge_op_virtual(s, op, n);
}

/**
 * Pays the thread's CPU debt before an externally visible action (posting
 * WRs): if CPU was charged and not yet turned into busy time, the thread
 * becomes busy for it and @p co sleeps until the end of it, so that what
 * it does next happens at the right virtual time. Returns at once (no
 * yield) when there is no debt, hence always in real time. Called by the
 * running coroutine @p co only.
 */
void dtxn_co_settle_lc(struct dtxn_co *co);

/** @return the virtual time until which the thread computes, ns (0: never busy yet). */
uint64_t dtxn_sched_busy_until_ns(const struct dtxn_sched *s);

/** @return CPU time charged so far, ns (busy time; the busy fraction is this / elapsed). */
uint64_t dtxn_sched_cpu_ns(const struct dtxn_sched *s);

/**
 * Real time: the thread's busy time in this scheduler's loop so far, ns
 * (the report's host.cn_cpu_ns_per_txn): from an iteration that did work
 * (a poller's events, wake-ups, coroutines resumed, with what they did:
 * protocol, txn layer, the emulated NIC's execution of the WRs they post,
 * a dtxn_co_spin_lc() busy poll) to the end of the next iteration that
 * found none. Idle polling is not counted. Counted with one TSC read per
 * busy/idle transition and per idle iteration (dtxn_sched_run_lc()), or
 * two per step (dtxn_sched_step_lc()); the busy stretch under way is
 * included. 0 in virtual time (the cost model's dtxn_sched_cpu_ns()
 * counts there). Any thread may read it.
 */
uint64_t dtxn_sched_loop_busy_ns(const struct dtxn_sched *s);

/**
 * @return units charged so far by kind (DTXN_CPU_OP_MAX entries; used to
 *   calibrate cost models), or NULL if @p s is NULL.
 */
const uint64_t *dtxn_sched_cpu_ops(const struct dtxn_sched *s);

/**
 * @return the earliest wake-up time of a sleeping coroutine or a poller
 *   (dtxn_sched_wake_at()), ns, or UINT64_MAX if none or while a
 *   coroutine spins (dtxn_co_spin_lc()).
 */
uint64_t dtxn_sched_next_timer_ns(const struct dtxn_sched *s);

/**
 * A poller of @p s must run again by @p t_ns even if no coroutine is due
 * then (e.g. lib/rpc's resend deadline while every coroutine waits for a
 * reply): in virtual time the thread is stepped then
 * (dtxn_sched_next_timer_ns()). The earliest request wins; the requests
 * are forgotten each time the pollers run (a poller that still needs one
 * asks again). Owning lcore; no-op for NULL.
 */
void dtxn_sched_wake_at(struct dtxn_sched *s, uint64_t t_ns);

/**
 * @return coroutines in the ready queue (0 if @p s is NULL); while a
 *   coroutine spins in virtual time (dtxn_co_spin_lc()), 1 if it may
 *   resume, else 0.
 */
unsigned dtxn_sched_ready_count(const struct dtxn_sched *s);

/** @return coroutines created and not yet ended (0 if @p s is NULL). */
unsigned dtxn_sched_alive(const struct dtxn_sched *s);

#ifdef __cplusplus
}
#endif
#endif /* DTXN_SCHED_H */
