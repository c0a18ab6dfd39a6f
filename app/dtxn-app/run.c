/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The embedded run (--role all): MN regions, the database and its load,
 * one dtxn worker per worker lcore running the benchmark's coordinators,
 * the live line on the main lcore, then invariants and the report.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_memory.h>

#include "dtxn_bench.h"
#include "dtxn_fabric.h"
#include "dtxn_stats.h"
#include "dtxn_txn.h"
#include "agent.h"
#include "app.h"
#include "cpu_share.h"
#include "role.h"

/** One worker lcore's share of the run. */
struct app_worker {
	struct app_run *r;
	unsigned lcore;
	struct dtxn_worker *w;
	struct dtxn_run_stats *stats;      /* written by the worker only */
	struct dtxn_bench_ctx *ctx;        /* one per coordinator */
	unsigned n_ctx;
	/* coroutines that outlive the run: its CN's lingering agent (agent.h,
	 * --role cn), so the worker is done when no more than these are alive */
	unsigned resident;
	volatile int done;
	int rc;
	struct app_cpu_share share;        /* the thread's CPU over the measured window */
};

struct app_run {
	const struct app_conf *conf;
	struct dtxn_bench *bench;
	struct dtxn_db *db;
	struct dtxn_fabric *fabric;
	unsigned n_workers;
	struct app_worker *workers;
	/* several CNs (--cn): workers per CN, and the worker lcores that run them */
	unsigned per_cn;
	unsigned n_lcores;
	unsigned lcores[RTE_MAX_LCORE];
	struct app_lcore_run { struct app_run *r; unsigned slot; } lrun[RTE_MAX_LCORE];
	/* method (method.c): counters at the warm-up's end, throughput series */
	struct app_warm warm;
	struct dtxn_series series;
	double load_s;                     /* wall seconds of the load */
	/* --role cn (role_cn.c): this process is one CN of a cluster */
	struct app_ctl *ctl;               /* control block, NULL when embedded */
	struct app_cp cp;                  /* --role cn: the CNs' control plane (ctl.c) */
	/* the fabric driver's own counters (mlx5), for the report */
	struct dtxn_report_driver driver;
	char driver_dev[96];
	struct dtxn_report_host host;      /* the worker lcores' CPU (report_host()) */
	uint16_t cn_node0;                 /* fabric node id of the first CN here */
	uint32_t gid0;                     /* cluster id of its first coordinator */
	uint64_t n_coords;                 /* coordinators in the whole cluster */
	volatile int hold;                 /* workers keep polling (peer CNs still run) */
	int mn_dead;                       /* an MN process died (index), -1: none */
	bool fenced;                       /* this CN was fenced (self-fencing): exit 4 */
	/* the protocol's MN-side services (Scythe), polled by the worker lcores */
	struct app_mn_svcs svcs;
	struct app_agent *agents;          /* per CN of this process (agent.h); NULL: none */
	uint64_t t0_ns;                    /* dtxn_now_ns() when the run began */
	/* cn_drain_dead(): when the watcher first found a dead node's process
	 * still being torn down (SIGKILL pending), by fabric node; 0: never */
	uint64_t dying_since[DTXN_MAX_NODES];
};

/** How often the main lcore publishes the telemetry figures, ns. */
#define APP_TEL_NS (100 * 1000 * 1000ull)
/** --role cn: how often the main lcore looks for a dead MN process, ns. */
#define APP_WATCH_NS (20 * 1000 * 1000ull)
/** --role cn: attempts at creating a worker whose allocation failed (the shared heap's growth round). */
#define APP_WORKER_CREATE_TRIES 5
/** --role cn: how long the workers get to stop after an MN died, ns. */
#define APP_MN_DEAD_STOP_NS (300 * 1000 * 1000ull)

static bool all_done(const struct app_run *r);
static void app_worker_serve(struct app_worker *aw);

static int
app_worker_main(void *arg)
{
	struct app_worker *aw = arg;

	app_cpu_share_attach(&aw->share);
	aw->rc = dtxn_sched_run_lc(dtxn_worker_sched(aw->w));
	__atomic_store_n(&aw->done, 1, __ATOMIC_RELEASE);
	app_worker_serve(aw);
	return aw->rc;
}

/*
 * Several CNs (--cn N): worker j runs on worker lcore j % n_lcores, so with
 * fewer lcores than CNs one lcore hosts the workers of several CNs, each
 * CN with its own dtxn workers (and so its own protocol state, e.g. lock
 * table and caches) and coordinators. The lcore steps its schedulers in
 * turn, and keeps stepping (pollers: messages from other CNs) until every
 * worker of the run is done, so that a CN that finished early still
 * answers the others.
 */
static int
app_lcore_main(void *arg)
{
	struct app_lcore_run *lr = arg;
	struct app_run *r = lr->r;
	int rc = 0;

	for (unsigned j = lr->slot; j < r->n_workers; j += r->n_lcores)
		app_cpu_share_attach(&r->workers[j].share); /* this thread runs them all */

	for (;;) {
		bool idle = true;

		for (unsigned j = lr->slot; j < r->n_workers; j += r->n_lcores) {
			struct app_worker *aw = &r->workers[j];
			unsigned alive = dtxn_sched_step_lc(dtxn_worker_sched(aw->w));

			if (alive <= aw->resident && !__atomic_load_n(&aw->done, __ATOMIC_ACQUIRE))
				__atomic_store_n(&aw->done, 1, __ATOMIC_RELEASE);
			idle = idle && alive == 0;
		}
		if (idle && all_done(r) && !__atomic_load_n(&r->hold, __ATOMIC_ACQUIRE))
			break;
	}
	return rc;
}

/* Merged latency histogram of every worker and type (relaxed, approximate
 * while the run goes on: fine for the live line). */
static void
snapshot_latency(const struct app_run *r, struct dtxn_hist *h)
{
	dtxn_hist_reset(h);
	for (unsigned i = 0; i < r->n_workers; i++)
		for (unsigned t = 0; t < r->workers[i].stats->n_types; t++)
			dtxn_hist_merge(h, &r->workers[i].stats->type[t].lat);
}

static void
totals(const struct app_run *r, uint64_t *c, uint64_t *a, uint64_t *ab)
{
	*c = *a = *ab = 0;
	for (unsigned i = 0; i < r->n_workers; i++) {
		uint64_t wc, wa, wab;
		dtxn_run_stats_totals(r->workers[i].stats, &wc, &wa, &wab);
		*c += wc;
		*a += wa;
		*ab += wab;
	}
}

static bool
all_done(const struct app_run *r)
{
	for (unsigned i = 0; i < r->n_workers; i++)
		if (!__atomic_load_n(&r->workers[i].done, __ATOMIC_ACQUIRE))
			return false;
	return true;
}

/*
 * Embedded run: a worker whose coordinators are done keeps serving its
 * share of the MN services (app_mn_svcs_on_workers()) until every worker
 * of the run is done, since the others' Lock RPCs may still come.
 */
static void
app_worker_serve(struct app_worker *aw)
{
	struct app_run *r = aw->r;
	unsigned wi = (unsigned)(aw - r->workers);

	if (!r->svcs.on_workers || wi >= r->svcs.n)
		return;
	while (!all_done(r) || __atomic_load_n(&r->hold, __ATOMIC_ACQUIRE))
		(void)app_mn_svcs_poll_share(&r->svcs.share[wi]);
}

/* Cumulative totals of every worker's counters at the warm-up's end. */
static void
warm_totals(const struct app_run *r, uint64_t *c, uint64_t *a, uint64_t *ab)
{
	*c = *a = *ab = 0;
	for (unsigned i = 0; i < r->warm.n; i++) {
		uint64_t wc, wa, wab;

		dtxn_run_stats_totals(&r->warm.stats[i], &wc, &wa, &wab);
		*c += wc;
		*a += wa;
		*ab += wab;
	}
}

/* The warm-up ends at @p now: every worker's counters, and a series point. */
static void
end_warmup(struct app_run *r, uint64_t t0, uint64_t now)
{
	uint64_t cc, ca, cab;

	for (unsigned i = 0; i < r->n_workers; i++)
		app_warm_take(&r->warm, i, r->workers[i].stats, r->workers[i].w);
	warm_totals(r, &cc, &ca, &cab);
	(void)dtxn_series_end_warmup(&r->series, (double)(now - t0) / 1e9, cc, ca, cab);
}

/*
 * The report's "host": CPU of the worker lcores per committed txn
 * (dtxn_worker_cpu(): their loops' busy time, of which the emulated NIC's),
 * less the warm-up's, over the commits the report counts.
 */
static void
report_host(struct app_run *r, struct dtxn_report *rep, double seconds)
{
	uint64_t busy = 0, nic = 0, c, a, ab;
	unsigned lcores = RTE_MIN(r->n_workers, r->n_lcores);

	double run_sum = 0;
	uint64_t tsc_busy = 0;

	for (unsigned i = 0; i < r->n_workers; i++) {
		/* the TSC counts the time another process had the core too */
		double run = app_cpu_share_ratio(&r->workers[i].share);
		uint64_t b, n;

		dtxn_worker_cpu(r->workers[i].w, &b, &n);
		if (r->warm.taken && i < r->warm.n) {
			b -= RTE_MIN(b, r->warm.cpu[2 * i]);
			n -= RTE_MIN(n, r->warm.cpu[2 * i + 1]);
		}
		tsc_busy += b;
		b = (uint64_t)((double)b * run);
		/* not scaled: a NIC sample the OS cut into is dropped (shm) */
		nic += RTE_MIN(n, b);
		busy += b;
		run_sum += run;
	}
	dtxn_run_stats_totals(&rep->stats, &c, &a, &ab);
	memset(&r->host, 0, sizeof(r->host));
	if (c == 0 || busy == 0)
		return;
	r->host.has_cpu = true;
	r->host.cpu_ns_per_txn = (double)busy / (double)c;
	r->host.nic_ns_per_txn = (double)nic / (double)c;
	r->host.coord_ns_per_txn = (double)(busy - nic) / (double)c;
	r->host.cn_running = r->n_workers > 0 ? run_sum / r->n_workers : 1.0;
	if (seconds > 0 && lcores > 0)
		r->host.cn_busy = RTE_MIN(1.0, (double)tsc_busy / 1e9 / (seconds * lcores));
	rep->host = &r->host;
}

/* The live figures DPDK telemetry shows (telemetry.c): cumulative, per
 * worker lcore, per MN and per peer CN; relaxed stores, one writer. */
static void
tel_publish(const struct app_run *r)
{
	struct app_tel *t = app_telemetry_self(r->conf, r->ctl);
	struct dtxn_fabric_counters per[DTXN_MAX_NODES];
	uint64_t ops[DTXN_MAX_NODES] = { 0 }, c, a, ab;
	unsigned n = RTE_MIN(r->n_workers, (unsigned)APP_TEL_LCORES);

	for (unsigned i = 0; i < r->n_workers; i++) {
		memset(per, 0, sizeof(per));
		dtxn_worker_counters(r->workers[i].w, per);
		dtxn_worker_peer_counters(r->workers[i].w, per);
		for (unsigned m = 0; m < DTXN_MAX_NODES; m++)
			for (unsigned op = 0; op < DTXN_WR_OP_MAX; op++)
				ops[m] += per[m].ops[op];
		if (i >= n)
			continue;
		dtxn_run_stats_totals(r->workers[i].stats, &c, &a, &ab);
		__atomic_store_n(&t->lc[i].lcore, r->workers[i].lcore, __ATOMIC_RELAXED);
		__atomic_store_n(&t->lc[i].committed, c, __ATOMIC_RELAXED);
		__atomic_store_n(&t->lc[i].attempted, a, __ATOMIC_RELAXED);
		__atomic_store_n(&t->lc[i].aborts, ab, __ATOMIC_RELAXED);
	}
	for (unsigned m = 0; m < DTXN_MAX_NODES; m++) {
		if (m < r->conf->mn)
			__atomic_store_n(&t->mn_ops[m], ops[m], __ATOMIC_RELAXED);
		else
			__atomic_store_n(&t->peer_msgs[m], ops[m], __ATOMIC_RELAXED);
	}
	__atomic_store_n(&t->n_lcores, n, __ATOMIC_RELEASE);
}

/* --series-out: the series' intervals go to the file as they close,
 * lined up on the wall clock (CLOCK_REALTIME at t = 0). */
static void
series_stream_start(struct app_run *r)
{
	const struct app_conf *c = r->conf;
	struct timespec ts;
	int rc;

	if (c->series_out[0] == '\0')
		return;
	clock_gettime(CLOCK_REALTIME, &ts); /* a label for the file, not a run figure */
	rc = dtxn_series_stream(&r->series, c->series_out, c->node[0] ? c->node : "all",
				(uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec);
	if (rc != 0)
		app_err("--series-out %s: %s (the run goes on without it)", c->series_out,
			strerror(-rc));
}

/* --role cn: an MN process died: one line, the workers stop. What they
 * commit from now on reaches no MN, so this CN writes no report. */
/* MN @p d is gone or lost (mn_gone(), mn_lost()): the workers stop and
 * the main lcore ends the process (mn_gone_exit()). */
static void
mn_stop(struct app_run *r, int d)
{
	for (unsigned i = 0; i < r->n_workers; i++)
		dtxn_sched_stop(dtxn_worker_sched(r->workers[i].w));
	__atomic_store_n(&r->hold, 0, __ATOMIC_RELEASE);
	r->mn_dead = d;
}

static bool
mn_gone(struct app_run *r)
{
	const struct app_conf *c = r->conf;
	int d = app_cn_dead_mn(c, r->ctl);

	if (d < 0)
		return false;
	app_err("--node %s: mn%d's process is gone: stopping, no report (work after its death never reached it)",
		c->node, d);
	mn_stop(r, d);
	return true;
}

/* With self-fencing (--role cn, --lease-ms): this CN's own lease ran out,
 * so a survivor may have declared it dead and the MNs refuse it (a WR that
 * fails now says so, not that an MN is gone). */
static bool
lease_ran_out(const struct app_run *r)
{
	return r->ctl != NULL && r->agents != NULL && r->agents[0].fencing &&
	       dtxn_now_ns() >= __atomic_load_n(&r->agents[0].gate.valid_until_ns, __ATOMIC_ACQUIRE);
}

/* A worker lost an MN (a WR to it failed with DTXN_WC_FATAL_ERR: the QP
 * is in the error state, on mlx5 when the peer is gone; --debug-lose
 * injects it): one line, the workers stop, exit 3 as for a dead MN
 * process. Its transactions abort with DTXN_ABORT_FABRIC meanwhile. */
static bool
mn_lost(struct app_run *r)
{
	const struct app_conf *c = r->conf;
	uint64_t lost = 0;
	int d;

	for (unsigned i = 0; i < r->n_workers; i++)
		lost |= dtxn_worker_lost_nodes(r->workers[i].w);
	lost &= c->mn >= 64 ? UINT64_MAX : (UINT64_C(1) << c->mn) - 1;
	if (lost == 0)
		return false;
	d = __builtin_ctzll(lost);
	if (lease_ran_out(r)) {
		/* not the MN: this CN, stopped or cut off longer than its lease,
		 * was declared dead, and the MNs cut it off (dtxn_fabric_fence_node()) */
		app_err("--node %s: fenced: its lease of %g ms ran out and mn%d refused its WRs (a survivor declared it dead and recovers it); stopping, no report",
			c->node, c->lease_ms, d);
		mn_stop(r, -1);
		r->fenced = true;
		return true;
	}
	app_err("%s%s%smn%d is lost: a WR to it failed (its QP is in the error state): stopping, no report",
		c->node[0] != '\0' ? "--node " : "", c->node, c->node[0] != '\0' ? ": " : "", d);
	mn_stop(r, d);
	return true;
}

/* --debug-lose mnI@S: every worker's QP to mnI to the error state. */
static void
lose_inject(struct app_run *r)
{
	for (unsigned i = 0; i < r->n_workers; i++)
		(void)dtxn_worker_error_inject(r->workers[i].w, (uint16_t)r->conf->lose_mn);
}

/* --role cn with --lease-ms: the agent's heartbeat found this CN fenced (a
 * survivor declared it dead: it was paused or descheduled longer than its
 * lease): one line, the workers stop; their mutating batches already fail
 * (the lease gate), so nothing more reaches MN memory. */
static bool
fenced(struct app_run *r)
{
	const struct app_conf *c = r->conf;
	const struct app_agent *a = r->agents;
	uint32_t how;

	if (r->ctl == NULL || a == NULL ||
	    (how = __atomic_load_n(&a->gate.fenced, __ATOMIC_ACQUIRE)) == 0)
		return false;
	if (how == DTXN_LEASE_FENCED_UNFINISHED)
		app_err("--node %s: fenced: a coordinator could neither finish nor undo a commit whose first writes had landed (self-fenced; a survivor recovers it from its log); stopping, no report",
			c->node);
	else if (how == DTXN_LEASE_FENCED_SELF)
		app_err("--node %s: fenced: its own lease of %g ms ran out unrenewed and a write was refused (self-fenced; a survivor recovers it); stopping, no report (its heartbeats' longest gap: %.1f ms)",
			c->node, c->lease_ms, (double)app_agent_beat_gap_ns(a) / 1e6);
	else
		app_err("--node %s: fenced: a survivor declared this CN dead (its lease of %g ms ran out) and recovers it; stopping, no report (its heartbeats' longest gap: %.1f ms)",
			c->node, c->lease_ms, (double)app_agent_beat_gap_ns(a) / 1e6);
	mn_stop(r, -1);
	r->fenced = true;
	return true;
}

/* After mn_gone() or mn_lost(): the workers get APP_MN_DEAD_STOP_NS to stop (a
 * coordinator may wait for a peer CN that stopped too); then the process
 * ends with what it recorded (history, series) and exit status 3, without
 * freeing DPDK memory: a secondary's frees are synchronised with the other
 * processes over EAL IPC, which may wait seconds on a peer that is gone.
 * The kernel frees the process; `dtxn-cluster stop` the hugepage files.
 * fenced() ends the same way, with APP_EXIT_FENCED. */
static void __attribute__((noreturn))
mn_gone_exit(struct app_run *r, int status)
{
	uint64_t deadline = dtxn_now_ns() + APP_MN_DEAD_STOP_NS;

	while (!all_done(r) && dtxn_now_ns() < deadline)
		app_mn_svcs_serve_ms(&r->svcs, 5); /* asleep: a --role cn has no MN service */
	/* fenced: its history stays cut short, as a killed CN's: a commit whose
	 * line it never wrote may be visible (the recoverer kept it), so the
	 * checker must read it as unresolved, not as complete */
	if (status != APP_EXIT_FENCED)
		app_check_fini(); /* ends --history's stream */
	else
		app_check_cut(); /* its sealed lines reach the file, no end line */
	dtxn_series_free(&r->series); /* closes --series-out */
	fflush(stdout);
	fflush(stderr);
	_exit(status);
}

/* The workers' CPU share windows (cpu_share.h): @p end closes them; else
 * those not started start (@p all: every one restarts). */
static void
cpu_share_mark(struct app_run *r, bool end, bool all)
{
	for (unsigned i = 0; i < r->n_workers; i++) {
		struct app_cpu_share *s = &r->workers[i].share;

		if (end || all || !s->started)
			app_cpu_share_mark(s, end);
	}
}

/* Main lcore while the workers run: live line each second, the throughput
 * series, the warm-up's end, stop at the deadline (warm-up + duration) or
 * when every quota is met (txns mode). Returns the measured seconds (after
 * the warm-up). */
static double
supervise(struct app_run *r)
{
	const struct app_conf *c = r->conf;
	struct dtxn_hist *cur = malloc(sizeof(*cur)), *prev = malloc(sizeof(*prev)),
			 *iv = malloc(sizeof(*iv));
	uint64_t t0 = dtxn_now_ns(), last = t0, pc = 0, pa = 0, pab = 0;
	uint64_t t_warm = t0 + (uint64_t)(c->warmup_s * 1e9), t_meas = t0, t_stop = t0;
	uint64_t deadline = c->txns ? UINT64_MAX : t_warm + (uint64_t)(c->duration_s * 1e9);
	uint64_t iv_ns = (uint64_t)(app_interval_s(c) * 1e9), next_sample = t0 + iv_ns;
	uint64_t next_watch = t0 + APP_WATCH_NS, next_tel = t0;
	uint64_t t_lose = c->lose_mn < 0 ? UINT64_MAX : t0 + (uint64_t)(c->lose_at_s * 1e9);
	uint64_t t_stall = c->stall_cn < 0 ? UINT64_MAX : t0 + (uint64_t)(c->stall_at_s * 1e9);
	uint64_t cc, ca, cab;
	bool stopped = false;

	r->t0_ns = t0;

	if (cur == NULL || prev == NULL || iv == NULL) {
		free(cur);
		free(prev);
		free(iv);
		return 0;
	}
	dtxn_hist_reset(prev);
	series_stream_start(r);
	for (;;) {
		uint64_t now = dtxn_now_ns();

		if (now >= next_tel) {
			next_tel = now + APP_TEL_NS;
			tel_publish(r);
		}
		if (now >= next_watch) {
			next_watch = now + APP_WATCH_NS;
			if ((r->ctl != NULL && mn_gone(r)) || mn_lost(r))
				break;
			app_cp_poll(&r->cp); /* --control fabric: settle the peers recovered */
		}
		if (fenced(r))
			break;
		app_stop_in_test_aid_tick(now - t0);
		if (now >= t_lose) {
			t_lose = UINT64_MAX;
			lose_inject(r);
		}
		if (now >= t_stall) { /* test aid --debug-stall */
			t_stall = UINT64_MAX;
			dtxn_db_debug_stall_arm(r->db);
		}
		if (r->warm.n > 0 && !r->warm.taken && now >= t_warm) {
			end_warmup(r, t0, now);
			t_meas = now;
			cpu_share_mark(r, false, true); /* the window restarts here */
		}
		if (!stopped)
			cpu_share_mark(r, false, false); /* workers that just started */
		if (!stopped && now >= deadline) {
			cpu_share_mark(r, true, false);
			for (unsigned i = 0; i < r->n_workers; i++)
				dtxn_sched_stop(dtxn_worker_sched(r->workers[i].w));
			stopped = true;
			t_stop = now;
		}
		if (all_done(r)) {
			if (!stopped) {
				t_stop = dtxn_now_ns();
				cpu_share_mark(r, true, false);
			}
			break;
		}
		if (!stopped && now >= next_sample) {
			totals(r, &cc, &ca, &cab);
			(void)dtxn_series_sample(&r->series, (double)(now - t0) / 1e9, cc, ca, cab);
			while (next_sample <= now)
				next_sample += iv_ns;
		}
		if (c->live && now - last >= 1000000000ull && !stopped) {
			totals(r, &cc, &ca, &cab);
			snapshot_latency(r, cur);
			dtxn_hist_sub(iv, cur, prev);
			dtxn_report_live(stdout, (double)(now - t0) / 1e9, (double)(now - last) / 1e9,
					 cc - pc, ca - pa, cab - pab, iv);
			fflush(stdout);
			memcpy(prev, cur, sizeof(*cur));
			pc = cc;
			pa = ca;
			pab = cab;
			last = now;
		}
		app_mn_svcs_serve_ms(&r->svcs, 5); /* asleep unless an MN service runs here */
	}
	/* the last interval ends at the stop; it counts what finished after it too */
	tel_publish(r);
	totals(r, &cc, &ca, &cab);
	(void)dtxn_series_sample(&r->series, (double)(t_stop - t0) / 1e9, cc, ca, cab);
	free(cur);
	free(prev);
	free(iv);
	return (double)(t_stop - t_meas) / 1e9;
}

static int
build_db(struct app_run *r, unsigned n_coords)
{
	const struct app_conf *c = r->conf;
	struct dtxn_fabric_rdma_conf rdma; /* --fabric mlx5: every node served here */
	struct dtxn_fabric_conf fc = {
		.size = sizeof(fc),
		.driver = c->fabric,
		.n_mn = (uint16_t)c->mn,
		.n_cn = (uint16_t)c->cn,
		.socket_id = (int)rte_socket_id(),
		.name = "dtxn",
		.rdma = &rdma,
	};
	uint64_t region;
	int rc;

	if (app_role_split(c)) /* --role cn: attach to the MN processes (role_cn.c) */
		return app_cn_connect(c, r->bench, r->n_workers, &r->ctl, &r->db, &r->fabric);
	app_rdma_conf(c, 0, &rdma);
	rc = app_db_make(c, r->bench, n_coords, r->per_cn, (uint32_t)c->addr_cache, &r->db);
	if (rc == APP_EXIT_OK)
		rc = app_fabric_open(c, r->db, &fc, r->n_workers, &r->fabric, &region);
	if (rc == APP_EXIT_OK)
		rc = app_db_load(c, r->db, r->fabric, r->bench, region, &r->load_s);
	return rc;
}

/* struct app_agent.recovered of a --role cn process (role_cn.c). */
static int
cn_settle_dead(void *arg, const struct dtxn_recovery *rec)
{
	struct app_run *r = arg;

	if (r->cp.cf != NULL) /* across hosts: from the dead CN's commit records, after the run */
		return app_cf_note_recovery(r->cp.cf, rec);
	return app_cn_settle_dead(r->conf, r->ctl, rec);
}

/* struct app_agent.fence_mns: the MNs refuse the fenced CN (network
 * fabrics; shm's emulated RNICs check the lease themselves: -ENOTSUP). */
static int
cn_fence_mns(void *arg, uint16_t node)
{
	struct app_run *r = arg;
	int rc = dtxn_fabric_fence_node(r->fabric, node);

	return rc == -ENOTSUP ? 0 : rc;
}

/** cn_drain_dead(): how often it looks again at a process being torn down, ns. */
#define APP_DYING_POLL_NS (1000 * 1000ull)
/** cn_drain_dead(): how long it waits for a process being torn down, ns. */
#define APP_DYING_MAX_NS (2000 * 1000 * 1000ull)

/*
 * The recoverer's fence of a dead CN's process that still lives (paused,
 * or descheduled past its lease) on the processes of one host
 * (dtxn_fabric_heap_shared(): shm, its "RNIC" the CN's own lcore): a time
 * lease cannot stop a process that passed its lease check and was then
 * stopped before its store (the store lands when it runs again, after its
 * recovery read MN memory), so it is killed for good (STONITH) before its
 * recovery: SIGKILL, then drained once gone. Only incarnation @p inc's
 * process (a restart may hold the slot already). @return true if killed.
 */
static bool
cn_fence_process(struct app_run *r, uint16_t node, uint32_t inc, int32_t pid)
{
	const struct app_ctl_node *dead = &r->ctl->cn[node - r->conf->mn];

	if (!dtxn_fabric_heap_shared(r->fabric) || pid <= 0 || pid == (int32_t)getpid() ||
	    __atomic_load_n(&dead->incarnation, __ATOMIC_ACQUIRE) != inc ||
	    __atomic_load_n(&dead->settled, __ATOMIC_ACQUIRE))
		return false;
	if (kill(pid, SIGKILL) != 0)
		return false; /* gone meanwhile */
	printf("dtxn: %s: node %u's process %d lives past its lease: killed (fenced for good) before its recovery\n",
	       r->conf->node, node, (int)pid);
	return true;
}

/*
 * struct app_agent.drained_ns of a --role cn process (shm across
 * processes): what a dead CN process had posted takes effect now, before
 * its recovery reads MN memory (dtxn_fabric_drain_node()). Only once none
 * of its threads runs (gone, or a zombie its parent has not reaped yet):
 * a SIGKILLed process still being torn down is looked at again every
 * APP_DYING_POLL_NS (the watcher sleeps until then), for up to
 * APP_DYING_MAX_NS; recovering it meanwhile would read MN memory without
 * the WRs it had posted (a commit batch cut between two MNs, its log
 * never written). A fenced process that lives (paused past its lease) is
 * killed first (cn_fence_process()); across hosts (no such process here)
 * its lost lease and the MNs' fence refuse its WRs when it runs again.
 * Runs on the watcher's lcore.
 */
static uint64_t
cn_drain_dead(void *arg, uint16_t node, uint32_t inc)
{
	struct app_run *r = arg;
	const struct app_ctl_node *dead = &r->ctl->cn[node - r->conf->mn];
	const uint64_t now = dtxn_now_ns();
	int32_t pid = __atomic_load_n(&dead->pid, __ATOMIC_ACQUIRE);
	int n;

	enum dtxn_proc_state ps = dtxn_proc_state(pid);

	if (ps == DTXN_PROC_LIVE && cn_fence_process(r, node, inc, pid))
		ps = DTXN_PROC_DYING;
	if (ps != DTXN_PROC_DYING)
		r->dying_since[node] = 0; /* a later death of the node (a restart) waits afresh */
	switch (ps) {
	case DTXN_PROC_LIVE:
		return 0;
	case DTXN_PROC_DYING:
		if (r->dying_since[node] == 0) {
			r->dying_since[node] = now;
			printf("dtxn: %s: node %u's process is still being torn down: its recovery waits for it\n",
			       r->conf->node, node);
		}
		if (now - r->dying_since[node] < APP_DYING_MAX_NS)
			return now + APP_DYING_POLL_NS;
		printf("dtxn: %s: node %u's process was still being torn down %.1f s after it was found dead: recovered without its posted WRs\n",
		       r->conf->node, node, (double)APP_DYING_MAX_NS / 1e9);
		r->dying_since[node] = 0;
		return 0;
	case DTXN_PROC_GONE:
		break;
	}
	n = dtxn_fabric_drain_node(r->fabric, node);
	if (n > 0)
		printf("dtxn: %s: %d WRs the dead process of node %u had posted took effect before its recovery\n",
		       r->conf->node, n, node);
	return 0;
}

static int
build_workers(struct app_run *r)
{
	const struct app_conf *c = r->conf;
	unsigned lcore, wi = 0;
	uint64_t n_coords = r->n_coords;
	int rc;

	r->workers = calloc(r->n_workers, sizeof(*r->workers));
	if (r->workers == NULL)
		return APP_EXIT_FAIL;
	/* CN by CN, each CN's workers in index order (lib/rpc pairs worker k of
	 * every CN); worker wi runs on worker lcore wi % n_lcores */
	for (wi = 0; wi < r->n_workers; wi++) {
		struct app_worker *aw = &r->workers[wi];
		int socket;
		uint16_t cn_node = (uint16_t)(r->cn_node0 + wi / r->per_cn);

		lcore = r->lcores[wi % r->n_lcores];
		socket = (int)rte_lcore_to_socket_id(lcore);
		aw->r = r;
		aw->lcore = lcore;
		for (unsigned attempt = 0;; attempt++) {
			aw->w = dtxn_worker_create(r->db, cn_node, wi % r->per_cn,
						   (unsigned)c->coroutines +
							   (r->agents != NULL && wi % r->per_cn == 0 ?
								    APP_AGENT_COORDS : 0),
						   socket);
			/* a cluster's shared heap: a growth round with every
			 * process times out while another process is still in
			 * its EAL init (testing.md "DPDK's heap in the run"):
			 * the start-up tries again, a few times */
			if (aw->w != NULL || r->ctl == NULL || rte_errno != ENOMEM ||
			    attempt == APP_WORKER_CREATE_TRIES - 1)
				break;
			printf("dtxn: %s: the worker on lcore %u: %s: trying again\n", c->node, lcore,
			       rte_strerror(rte_errno));
			fflush(stdout);
			nanosleep(&(struct timespec){ .tv_nsec = 200 * 1000 * 1000 }, NULL);
		}
		if (aw->w == NULL) {
			app_err("cannot create the worker on lcore %u: %s", lcore,
				rte_strerror(rte_errno));
			return APP_EXIT_FAIL;
		}
		rc = app_addr_prewarm(c, aw->w);
		if (rc != APP_EXIT_OK)
			return rc;
		aw->stats = rte_zmalloc_socket("dtxn_stats", sizeof(*aw->stats), 64, socket);
		aw->ctx = rte_zmalloc_socket("dtxn_ctx", sizeof(*aw->ctx) * c->coroutines, 64, socket);
		if (aw->stats == NULL || aw->ctx == NULL) {
			app_err("out of memory for lcore %u's statistics", lcore);
			return APP_EXIT_FAIL;
		}
		aw->n_ctx = (unsigned)c->coroutines;
		if (r->ctl != NULL && app_cn_publish(c, r->ctl, wi, aw->ctx, aw->n_ctx) != 0)
			return APP_EXIT_USAGE;
		if (r->ctl != NULL && r->agents != NULL) {
			/* self-fencing (agent.h): this CN's workers hold on its lease */
			struct app_agent *a = &r->agents[wi / r->per_cn];

			a->fencing = true;
			a->linger = 1; /* until the cluster is closed: agents_end() */
			a->gate.inc = app_role_self(c, r->ctl)->incarnation;
			(void)dtxn_worker_set_lease_gate(aw->w, &a->gate);
		}
		rc = app_coords_create(c, r->bench, aw->w, aw->stats, aw->ctx, aw->n_ctx,
				       r->gid0 + wi * (uint32_t)c->coroutines, n_coords);
		/* --control fabric: each coordinator's counters go with its
		 * commits to every MN they touch (its slot there), for a
		 * survivor on another host to settle */
		for (unsigned k = 0; rc == APP_EXIT_OK && r->ctl != NULL &&
				     strcmp(c->control, "fabric") == 0 && k < aw->n_ctx; k++) {
			struct dtxn_coord *co = aw->ctx[k].coord;
			uint32_t gid = r->gid0 + wi * (uint32_t)c->coroutines + k;

			if (co != NULL &&
			    dtxn_coord_set_commit_record(co, gid, dtxn_bench_record_fill, &aw->ctx[k]) != 0) {
				app_err("coordinator %u: no commit-record slot in the MN regions (%u slots)",
					gid, dtxn_db_catalog(r->db)->n_logs);
				rc = APP_EXIT_FAIL;
			}
		}
		if (rc == APP_EXIT_OK && r->agents != NULL && wi % r->per_cn == 0) {
			/* the CN's agent (agent.h) on its first worker; gids after the benchmark's */
			unsigned cn = cn_node - (unsigned)c->mn;

			struct app_agent *a = &r->agents[wi / r->per_cn];

			if (r->ctl != NULL) { /* a killed CN process's counters */
				a->recovered = cn_settle_dead;
				a->recovered_arg = r;
				a->drained_ns = cn_drain_dead;
				a->drained_arg = r;
				a->fence_mns = cn_fence_mns;
				a->fence_arg = r;
			}
			rc = app_agent_create(c, aw->w, (uint32_t)(n_coords + cn * APP_AGENT_COORDS),
					      r->per_cn * (uint32_t)c->coroutines, a);
			aw->resident = a->linger ? APP_AGENT_COORDS : 0;
		}
		if (rc != APP_EXIT_OK)
			return rc;
	}
	return APP_EXIT_OK;
}

static void
fill_report(struct app_run *r, struct dtxn_report *rep, double seconds)
{
	const struct app_conf *c = r->conf;

	dtxn_report_conf(rep, "bench", "%s", c->bench);
	app_report_protocol(rep, c, r->db);
	dtxn_report_conf(rep, "isolation", "%s", c->isolation);
	dtxn_report_conf(rep, "fabric", "%s", c->fabric);
	if (app_report_fabric_driver(r->fabric, &r->driver, r->driver_dev, sizeof(r->driver_dev)))
		rep->driver = &r->driver;
	dtxn_report_conf(rep, "nic", "%s", c->nic);
	dtxn_report_conf(rep, "mn", "%" PRIu64, c->mn);
	dtxn_report_conf(rep, "replicas", "%" PRIu64, c->replicas);
	dtxn_report_conf(rep, "workers", "%u", r->n_workers);
	if (c->cn > 1)
		dtxn_report_conf(rep, "cn", "%" PRIu64, c->cn);
	dtxn_report_conf(rep, "coroutines", "%" PRIu64, c->coroutines);
	dtxn_report_conf(rep, "coordinators", "%" PRIu64, c->coroutines * r->n_workers);
	if (c->txns)
		dtxn_report_conf(rep, "txns", "%" PRIu64, c->txns);
	else
		dtxn_report_conf(rep, "duration", "%g", c->duration_s);
	dtxn_report_conf(rep, "seed", "%" PRIu64, c->seed);
	if (app_agents_on(c)) /* failure detection (heartbeats, leases: agent.h) */
		dtxn_report_conf(rep, "lease_ms", "%g%s", c->lease_ms, c->lease_auto ? " (default)" : "");
	else if (strcmp(c->role, "cn") == 0)
		dtxn_report_conf(rep, "lease_ms", "off");
	app_report_bench_conf(rep, r->bench);
	app_report_method(rep, c, &r->series);
	app_report_begin(rep, r->bench, seconds, (uint16_t)c->mn);
	app_report_memory(rep, r->db, r->load_s);
	if (r->ctl != NULL)
		rep->has_mem = false; /* the MN processes hold (and print) the memory */
	for (unsigned i = 0; i < r->n_workers; i++)
		app_report_add_worker(rep, r->workers[i].stats, r->workers[i].w, &r->warm, i);
	report_host(r, rep, seconds);
}

/* A restarted CN (incarnation > 0): when its agent took the new lease. */
static void
cn_report_rejoin(const struct app_run *r, struct dtxn_report *rep)
{
	const struct dtxn_lease_gate *g = r->agents != NULL ? &r->agents[0].gate : NULL;
	uint64_t at = g != NULL ? __atomic_load_n(&g->rejoined_ns, __ATOMIC_ACQUIRE) : 0;

	if (g == NULL || g->inc == 0)
		return;
	dtxn_report_conf(rep, "incarnation", "%u", g->inc);
	if (at != 0)
		dtxn_report_conf(rep, "rejoined_ms", "%.1f", at > r->t0_ns ? (double)(at - r->t0_ns) / 1e6 : 0.0);
	printf("dtxn: %s: incarnation %u rejoined the cluster %.1f ms into its run\n", r->conf->node,
	       g->inc, at > r->t0_ns ? (double)(at - r->t0_ns) / 1e6 : 0.0);
}

static int
check_and_report(struct app_run *r, double seconds)
{
	const struct app_conf *c = r->conf;
	struct dtxn_report *rep = calloc(1, sizeof(*rep));
	struct dtxn_report_recovery *recov = NULL;
	struct dtxn_bench_ctx **ctxs, *peers = NULL;
	unsigned n = 0;
	bool invariants = true;
	int rc = APP_EXIT_OK, checker;

	ctxs = calloc((size_t)r->n_workers * c->coroutines + c->cn, sizeof(*ctxs));
	if (r->ctl != NULL)
		peers = calloc(c->cn, sizeof(*peers));
	if (rep == NULL || ctxs == NULL || (r->ctl != NULL && peers == NULL)) {
		free(rep);
		free(ctxs);
		free(peers);
		app_err("out of memory for the report");
		return APP_EXIT_FAIL;
	}
	fill_report(r, rep, seconds);
	for (unsigned i = 0; i < r->n_workers; i++)
		for (unsigned k = 0; k < r->workers[i].n_ctx; k++)
			ctxs[n++] = &r->workers[i].ctx[k];
	if (r->ctl != NULL) {
		/* role_cn.c: every CN is done; the lowest live one checks for the cluster */
		dtxn_report_conf(rep, "node", "%s", c->node);
		cn_report_rejoin(r, rep);
		checker = app_cp_checker(&r->cp);
		checker = app_cp_checker_wait(&r->cp, checker); /* a checker that died: another */
		invariants = checker == (int)c->node_idx;
		if (invariants) {
			int np = app_cp_counters(&r->cp, r->bench, peers, rep);

			for (int j = 0; j < np; j++)
				ctxs[n++] = &peers[j];
			if (np < 0) {
				dtxn_report_check(rep, "invariant_check_ran", false,
						  "the MN regions could not be read for the check");
				invariants = false;
			}
		} else if (checker >= 0) {
			printf("dtxn: %s: the invariants are checked by cn%d, for the whole cluster\n",
			       c->node, checker);
		} else {
			printf("dtxn: %s: the invariants are not checked: no CN finished its run\n",
			       c->node);
		}
	}
	for (unsigned j = 0; r->agents != NULL && j < r->n_workers / r->per_cn; j++)
		if (r->agents[j].n_recs != 0 && recov == NULL &&
		    (recov = calloc(1, sizeof(*recov))) != NULL) {
			/* a CN died and this process recovered it (agent.h) */
			app_agent_report(c, r->agents, r->n_workers / r->per_cn, (uint16_t)c->mn,
					 r->t0_ns, NULL, recov);
			rep->recovery = recov;
		}
	rc = app_report_finish(c, r->bench, r->db, (struct dtxn_bench_ctx *const *)ctxs, n,
			       invariants, rep);
	if (r->ctl != NULL && invariants)
		app_cp_checked(&r->cp); /* the peers waiting for this check may go */
	free(recov);
	free(ctxs);
	free(peers);
	free(rep);
	return rc;
}

/* --role cn: this CN's counters to the control plane (ctl.c), then wait
 * for the peers. @return APP_EXIT_OK, or APP_EXIT_UNREACHABLE (MN 0 lost). */
static int
cn_hand_over(struct app_run *r)
{
	const struct app_conf *c = r->conf;
	struct dtxn_bench_ctx **ctxs = calloc((size_t)r->n_workers * c->coroutines, sizeof(*ctxs));
	uint64_t cc, ca, cab;
	unsigned n = 0;
	int rc;

	if (ctxs == NULL) {
		app_err("out of memory: %s hands over no counters", c->node);
		return APP_EXIT_OK;
	}
	for (unsigned i = 0; i < r->n_workers; i++)
		for (unsigned k = 0; k < r->workers[i].n_ctx; k++)
			ctxs[n++] = &r->workers[i].ctx[k];
	totals(r, &cc, &ca, &cab);
	rc = app_cp_done(&r->cp, ctxs, n, cc);
	free(ctxs);
	return rc;
}

/*
 * --role cn, once the cluster is closed (app_cn_done()): the lingering
 * agents end (the heartbeat leaves its lease: a clean end), then their
 * worker is idle. Waits up to --connect-timeout (a recovery in progress
 * finishes first; normally a beat).
 */
static void
agents_end(struct app_run *r)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = 1000 * 1000 };
	unsigned n = r->agents == NULL ? 0 : r->n_workers / r->per_cn;
	uint64_t deadline = dtxn_now_ns() + (uint64_t)(r->conf->connect_timeout_s * 1e9);
	bool ended = false;

	for (unsigned j = 0; j < n; j++)
		__atomic_store_n(&r->agents[j].linger, 0, __ATOMIC_RELEASE);
	for (unsigned i = 0; i < r->n_workers; i++) /* --txns: the run ended by its quota */
		dtxn_sched_stop(dtxn_worker_sched(r->workers[i].w));
	while (!ended && dtxn_now_ns() < deadline) {
		ended = true;
		for (unsigned j = 0; j < n; j++)
			if (__atomic_load_n(&r->agents[j].ended, __ATOMIC_ACQUIRE) < APP_AGENT_COORDS)
				ended = false;
		if (!ended)
			nanosleep(&ts, NULL);
	}
	if (!ended)
		app_err("--node %s: its CN agent did not end within %g s (--connect-timeout)",
			r->conf->node, r->conf->connect_timeout_s);
	for (unsigned j = 0; j < n; j++) {
		uint32_t gaps = __atomic_load_n(&r->agents[j].watch_gaps, __ATOMIC_RELAXED);

		printf("dtxn: %s: the longest gap between two heartbeats: %.1f ms (a beat every %.1f ms)\n",
		       r->conf->node,
		       (double)__atomic_load_n(&r->agents[j].beat_gap_max_ns, __ATOMIC_RELAXED) / 1e6,
		       (double)r->agents[j].beat_ns / 1e6);

		if (gaps != 0) /* stopped, descheduled or recovering: agent.c */
			printf("dtxn: %s: its watcher polled late %u time(s) (%.1f ms not watched, counted against no CN)\n",
			       r->conf->node, gaps,
			       (double)__atomic_load_n(&r->agents[j].unwatched_ns, __ATOMIC_RELAXED) / 1e6);
	}
}

static void
teardown(struct app_run *r)
{
	app_mn_svcs_destroy(&r->svcs);
	if (r->workers != NULL) {
		for (unsigned i = 0; i < r->n_workers; i++) {
			dtxn_worker_destroy(r->workers[i].w);
			rte_free(r->workers[i].stats);
			rte_free(r->workers[i].ctx);
		}
		free(r->workers);
	}
	app_warm_fini(&r->warm);
	dtxn_series_free(&r->series);
	free(r->agents);
	app_cp_close(&r->cp); /* its QP before the fabric closes */
	app_release(r->db, r->fabric, r->bench);
	app_role_release(r->conf, r->ctl);
}

/* The workers as an array, for heap_watch.c; NULL: out of memory. */
static struct dtxn_worker **
run_workers(const struct app_run *r)
{
	struct dtxn_worker **w = calloc(r->n_workers, sizeof(*w));

	for (unsigned i = 0; w != NULL && i < r->n_workers; i++)
		w[i] = r->workers[i].w;
	return w;
}

static void
heap_mark(const struct app_run *r, struct app_heap_mark *m)
{
	struct dtxn_worker **w = run_workers(r);

	app_heap_mark(m, w, w != NULL ? r->n_workers : 0);
	free(w);
}

static void
heap_report(const struct app_run *r, const struct app_heap_mark *begin)
{
	struct dtxn_worker **w = run_workers(r);

	app_heap_report(r->conf, begin, w, w != NULL ? r->n_workers : 0);
	free(w);
}

int
app_run(const struct app_conf *c)
{
	struct app_run r = { .conf = c, .mn_dead = -1 };
	struct app_heap_mark heap0 = { 0 };
	unsigned lcore;
	double seconds;
	char label[64];
	int rc;

	if (app_is_sim(c))
		return app_run_sim(c); /* run_sim.c: the cluster in virtual time, main lcore only */
	if (strcmp(c->role, "mn") == 0)
		return app_run_mn(c); /* role_mn.c: one MN, out of the data path */
	if (c->recovery_pass)
		return app_run_recovery_pass(c); /* recovery_pass.c: no workload */
	r.n_lcores = 0;
	RTE_LCORE_FOREACH_WORKER(lcore)
		r.lcores[r.n_lcores++] = lcore;
	if (r.n_lcores == 0) {
		app_err("too few lcores: dtxn-app needs the main lcore and at least one worker lcore (e.g. -l 0-1)");
		return APP_EXIT_USAGE;
	}
	if (app_role_split(c)) {
		/* --role cn: this process is CN node_idx, with threads worker lcores */
		if (r.n_lcores != c->threads) {
			app_err("--node %s: %u worker lcores, the cluster file says threads = %" PRIu64,
				c->node, r.n_lcores, c->threads);
			return APP_EXIT_USAGE;
		}
		r.per_cn = r.n_lcores;
		r.n_workers = r.n_lcores;
		r.cn_node0 = (uint16_t)(c->mn + c->node_idx);
		r.gid0 = c->node_idx * r.per_cn * (uint32_t)c->coroutines;
		r.n_coords = c->cn * c->threads * c->coroutines;
		r.hold = 1;
	} else {
		/* one process, nothing else maps its heap (a cluster's roles need
		 * hugepages): the coordinators' state and the MN regions on 2 MiB
		 * pages under --no-huge (issue 30 part 2): speed only */
		rc = app_heap_private();
		if (rc != 0)
			printf("dtxn: the heap stays on 4 KiB pages: %s\n", strerror(-rc));
		/* advised before anything is built: the MN regions are written
		 * when the fabric opens, before the run's estimate is known, so
		 * the heap's whole size (-m) stands for it */
		app_heap_large_pages(rte_eal_get_physmem_size());
		/* --cn N: the same number of workers per CN; lcores beyond N x that stay idle */
		r.per_cn = r.n_lcores >= c->cn ? r.n_lcores / (unsigned)c->cn : 1;
		r.n_workers = r.per_cn * (unsigned)c->cn;
		r.cn_node0 = (uint16_t)c->mn;
		r.n_coords = (uint64_t)r.n_workers * c->coroutines;
	}
	if (r.n_workers < r.n_lcores)
		printf("dtxn: %u CNs x %u workers: %u worker lcores stay idle\n", (unsigned)c->cn,
		       r.per_cn, r.n_lcores - r.n_workers);
	rc = app_bench_build(c, &r.bench);
	if (rc == APP_EXIT_OK && app_agents_on(c) &&
	    (r.agents = calloc(r.n_workers / r.per_cn, sizeof(*r.agents))) == NULL)
		rc = APP_EXIT_FAIL;
	if (rc == APP_EXIT_OK)
		rc = build_db(&r, r.n_workers * (unsigned)c->coroutines + app_agent_coords(c));
	if (rc == APP_EXIT_OK)
		rc = build_workers(&r);
	if (rc == APP_EXIT_OK && r.ctl != NULL && r.agents != NULL)
		/* self-fencing at the emulated RNICs too: a WR that takes effect
		 * after the lease (the process stopped mid-post) is refused */
		(void)dtxn_fabric_set_lease(r.fabric, &r.agents[0].gate.valid_until_ns,
					    r.agents[0].guard_ns);
	if (rc == APP_EXIT_OK && r.ctl == NULL) /* embedded: this process owns every MN */
		rc = app_mn_svcs_create(&r.svcs, r.db, 0, (uint16_t)c->mn, r.per_cn,
					(unsigned)c->coroutines);
	if (rc == APP_EXIT_OK && r.ctl == NULL && r.svcs.n != 0) {
		struct dtxn_sched *scheds[64];
		unsigned n = RTE_MIN(r.n_workers, (unsigned)RTE_DIM(scheds));

		for (unsigned wi = 0; wi < n; wi++)
			scheds[wi] = dtxn_worker_sched(r.workers[wi].w);
		/* the worker lcores serve the MNs: a request does not wait for the OS to run us */
		rc = app_mn_svcs_on_workers(&r.svcs, scheds, n);
	}
	if (rc == APP_EXIT_OK && (app_warm_init(&r.warm, c, r.n_workers) != 0 ||
				  dtxn_series_init(&r.series, app_interval_s(c), c->warmup_s) != 0))
		rc = APP_EXIT_FAIL;
	if (rc == APP_EXIT_OK && r.ctl != NULL) /* ctl.c: after the workers' QPs */
		rc = app_cp_open(&r.cp, c, r.ctl, r.db, r.fabric, r.cn_node0);
	if (rc == APP_EXIT_OK && r.ctl != NULL)
		rc = app_cp_start(&r.cp); /* ctl.c: the start barrier, every peer CN is up */
	if (rc == APP_EXIT_OK && r.ctl != NULL)
		app_watchdog_disarm(); /* main.c's bound on the start-up */
	if (rc == APP_EXIT_OK && app_telemetry_register(c, r.ctl) != 0)
		printf("dtxn: telemetry: the /dtxn/ commands could not be registered\n");
	if (rc != APP_EXIT_OK) {
		teardown(&r);
		return rc;
	}
	printf("dtxn: %s under %s (%s) on %s, nic %s: %u worker lcores x %" PRIu64 " coordinators, %s %g%s\n",
	       c->bench, app_protocol_label(c, r.db, label, sizeof(label)), c->isolation, c->fabric, c->nic, r.n_workers, c->coroutines,
	       c->txns ? "txns" : "duration", c->txns ? (double)c->txns : c->duration_s,
	       c->txns ? "" : " s");
	if (c->cn > 1)
		printf("dtxn: %" PRIu64 " CNs x %u workers on %u worker lcores\n", c->cn, r.per_cn,
		       RTE_MIN(r.n_lcores, r.n_workers));
	fflush(stdout);

	app_stop_in_test_aid(c); /* armed from here: a test stops it inside a lock during the run */
	if (r.ctl != NULL && app_hold_wr_test_aid(c, r.fabric) != 0) {
		teardown(&r);
		return APP_EXIT_USAGE;
	}
	if (r.ctl != NULL) /* its growth during the run: one line after it (heap_watch.c) */
		heap_mark(&r, &heap0);
	if (c->cn == 1 && r.ctl == NULL) {
		for (unsigned wi = 0; wi < r.n_workers; wi++)
			rte_eal_remote_launch(app_worker_main, &r.workers[wi], r.workers[wi].lcore);
	} else {
		for (unsigned l = 0; l < RTE_MIN(r.n_lcores, r.n_workers); l++) {
			r.lrun[l].r = &r;
			r.lrun[l].slot = l;
			rte_eal_remote_launch(app_lcore_main, &r.lrun[l], r.lcores[l]);
		}
	}
	seconds = supervise(&r);
	if (r.ctl != NULL && r.mn_dead < 0 && !r.fenced)
		heap_report(&r, &heap0);
	if (r.mn_dead >= 0)
		mn_gone_exit(&r, APP_EXIT_UNREACHABLE);
	if (r.fenced) /* as for a dead MN: no report, no frees; the recoverer settles it */
		mn_gone_exit(&r, APP_EXIT_FENCED);
	if (r.ctl != NULL) { /* peers may still need our answers (Lotus) until they are done */
		if (cn_hand_over(&r) != APP_EXIT_OK) { /* MN 0 lost: as for a dead MN */
			if (lease_ran_out(&r)) { /* or refused: this CN was fenced */
				app_err("--node %s: fenced: its lease of %g ms ran out and mn0 refused its hand-over (a survivor declared it dead and recovers it); stopping, no report",
					c->node, c->lease_ms);
				mn_gone_exit(&r, APP_EXIT_FENCED);
			}
			mn_gone_exit(&r, APP_EXIT_UNREACHABLE);
		}
		agents_end(&r);
		for (unsigned j = 0; r.agents != NULL && j < r.n_workers / r.per_cn; j++)
			if (app_agent_settle(&r.agents[j]) != 0) /* a fenced peer outlived the run */
				app_err("--node %s: a fenced peer CN's process still lives: its counters are not settled",
					c->node);
		__atomic_store_n(&r.hold, 0, __ATOMIC_RELEASE);
	}
	rte_eal_mp_wait_lcore();
	for (unsigned i = 0; i < r.n_workers; i++)
		if (r.workers[i].rc != 0) {
			app_err("worker lcore %u failed: %s", r.workers[i].lcore,
				strerror(-r.workers[i].rc));
			rc = APP_EXIT_FAIL;
		}
	if (rc == APP_EXIT_OK)
		rc = check_and_report(&r, seconds);
	if (r.ctl != NULL) /* its frees take DPDK's shared heap lock: bounded */
		app_watchdog_teardown(c->node, rc);
	teardown(&r);
	return rc;
}
