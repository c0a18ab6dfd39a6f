/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DTXN_APP_RUN_SIM_H
#define DTXN_APP_RUN_SIM_H

/**
 * @file
 * The simulated run (--fabric sim; doc/guides/sim.md), shared by
 * run_sim.c (building the cluster and the event loop) and
 * run_sim_report.c (the report).
 *
 * Every node and every CN thread lives in the main lcore's OS thread. A
 * simulated thread is one dtxn worker (its own scheduler, CQ, QPs and
 * address cache) on CN node n_mn + cn, stepped by the loop with
 * dtxn_sched_step_lc() when it has work and its CPU is free.
 */

#include <stdint.h>

#include "dtxn_bench.h"
#include "dtxn_fabric.h"
#include "dtxn_sched.h"
#include "dtxn_timeq.h"
#include "dtxn_stats.h"
#include "dtxn_txn.h"
#include "agent.h"
#include "app.h"

/** Virtual time at which a simulated run starts, ns (not 0: 0 often means "unset"). */
#define SIM_T0_NS UINT64_C(1000000000)

/**
 * One simulated thread: a CN thread (a dtxn worker), or, after the
 * n_threads CN threads, an MN's CPU serving the protocol's MN-side
 * service (Scythe's lock service; @c svc set, @c w NULL, no coroutine).
 */
struct sim_thread {
	struct dtxn_worker *w;
	struct dtxn_mn_svc *svc;      /**< MN thread: the service it polls */
	struct dtxn_sched *s;
	struct dtxn_cq *cq;
	struct sim_run *run;
	uint32_t idx;                 /**< in sim_run.th[] */
	uint16_t cn;                  /**< CN index, 0-based (node n_mn + cn) */
	uint16_t thread;              /**< thread index in its CN */
	uint64_t wake_ns;             /**< next agenda time, UINT64_MAX: wait for a CQE */
	unsigned alive;               /**< coroutines alive after the last step */
	bool dead;                    /**< its CN was killed (--fault): never stepped again */
	uint64_t warm_cpu_ns;         /**< CPU ns charged by the warm-up's end */
	uint64_t warm_cpu_ops[DTXN_CPU_OP_MAX]; /**< CPU units charged by the warm-up's end */
	struct dtxn_run_stats *stats; /**< written by this thread's coordinators */
	struct dtxn_bench_ctx *ctx;   /**< one per coordinator */
	unsigned n_ctx;
};

/** The whole simulated run. */
struct sim_run {
	const struct app_conf *conf;
	struct dtxn_bench *bench;
	struct dtxn_db *db;
	struct dtxn_fabric *fabric;
	struct dtxn_cpu_model cpu;
	unsigned n_threads;           /**< conf->cn * conf->threads */
	unsigned n_mn_threads;        /**< MN threads after them in th[] (0: no MN service) */
	struct sim_thread *th;
	/* agenda: a dtxn_timeq of (t_ns, thread index), lazy deletion: an
	 * entry is stale if its thread's wake_ns differs */
	struct dtxn_timeq ag;
	uint64_t alive;               /**< coroutines alive, all threads */
	uint64_t steps;               /**< dtxn_sched_step_lc() calls */
	/* method (method.c): the warm-up's end, the throughput series */
	struct app_warm warm;         /**< every thread's counters at the warm-up's end */
	struct dtxn_nic_state *warm_nic; /**< every node's RNIC units then (n_mn + n_cn) */
	uint64_t t_warm_ns;           /**< virtual time the warm-up ended (the start without one) */
	struct dtxn_series series;
	/* --fault, agents (agent.h; doc/guides/cluster.md, "Recovery") */
	struct app_agent *agents;     /**< one per CN, NULL without agents */
	uint64_t t_fault_ns;          /**< virtual time of the coming fault, UINT64_MAX: none (or done) */
	struct dtxn_series surv;      /**< throughput of the CNs --fault spares, same intervals */
	uint64_t dropped_chains;      /**< --fault-drop: posted chains lost with the killed CNs */
	uint64_t dropped_wrs;         /**< their WRs */
	double load_s;                /**< wall seconds of the load */
	/* results */
	uint64_t t_start_ns;          /**< virtual start */
	double seconds;               /**< virtual seconds measured, after the warm-up (rates) */
	double span_s;                /**< virtual seconds from the warm-up's end to the last event (busy fractions) */
	double wall_s;                /**< wall seconds of the loop */
	double cpu_s;                 /**< process CPU seconds of the loop */
	uint64_t events;              /**< fabric events of the loop */
};

/**
 * Builds the report of a finished simulated run, runs the benchmark's
 * invariant checks, prints the summary and writes the JSON (--out).
 * @return an APP_EXIT_* code.
 */
int sim_report(struct sim_run *r);

#endif /* DTXN_APP_RUN_SIM_H */
