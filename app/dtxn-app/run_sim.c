/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The simulated run (--fabric sim; doc/guides/sim.md): the whole cluster,
 * N CNs x T threads x C coordinators and every MN, in the main lcore's OS
 * thread, in virtual time.
 *
 * The loop, at virtual time `now`:
 *   1. run every fabric event due by now (WR effects on MN memory, WR
 *      completions into CQs, message arrivals), in (time, sequence) order;
 *   2. step, in agenda order, every thread due by now: a thread is due when
 *      it has ready coroutines, a due timer or a new completion, and its
 *      CPU is free (busy_until <= now); a thread that is still busy is put
 *      back on the agenda at its busy_until;
 *   3. when nothing is left at `now`, advance the clock to the earliest of
 *      the next event and the next agenda entry (busy ends, timers).
 * At the end of the virtual duration every scheduler is asked to stop; the
 * loop goes on until every coordinator has returned, then drains the
 * remaining events (asynchronous unlocks still in flight) so that MN
 * memory is final before the invariant checks.
 *
 * The agenda is a dtxn_timeq on (time, sequence); a thread has at most
 * one live entry (its wake_ns), older ones are skipped when popped. No wall
 * clock, no address is used for ordering, every random stream is seeded
 * from --seed: the same arguments give the same run.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include "dtxn_fabric_sim.h"
#include "dtxn_txn_driver.h"
#include "run_sim.h"

/** Steps at one virtual instant before the loop calls it a livelock. */
#define SIM_MAX_STEPS_AT_ONCE UINT64_C(50000000)
/** Live line period, virtual ns. */
#define SIM_LIVE_NS UINT64_C(1000000000)
/** Smallest address cache the simulation gives a thread. */
#define SIM_ADDR_CACHE_MIN 1024u

/* ------------------------------------------------------------------ */
/* Agenda                                                             */
/* ------------------------------------------------------------------ */

/* Earliest live agenda time (drops stale entries on the way), or UINT64_MAX. */
static inline uint64_t
ag_top(struct sim_run *r)
{
	const struct dtxn_timeq_ent *e;

	while ((e = dtxn_timeq_top(&r->ag)) != NULL) {
		if (r->th[e->val].wake_ns == e->t_ns)
			return e->t_ns;
		dtxn_timeq_pop(&r->ag);
	}
	return UINT64_MAX;
}

/* Thread @p th must be looked at by @p t_ns (earlier wins). */
static void
ag_wake(struct sim_run *r, struct sim_thread *th, uint64_t t_ns)
{
	if (t_ns >= th->wake_ns || th->dead)
		return;
	th->wake_ns = t_ns;
	if (dtxn_timeq_push(&r->ag, t_ns, th->idx) != 0)
		th->wake_ns = UINT64_MAX; /* reported by the loop: it stalls */
}

/* A completion landed in a thread's CQ (called from the fabric's events). */
static void
sim_cq_notify(struct dtxn_cq *cq, void *arg)
{
	struct sim_thread *th = arg;

	RTE_SET_USED(cq);
	ag_wake(th->run, th, dtxn_now_ns());
}

/* ------------------------------------------------------------------ */
/* Building the cluster                                               */
/* ------------------------------------------------------------------ */

/* Creates the db and its tables with @p cache address-cache entries per thread. */
static int
sim_make_db(struct sim_run *r, uint32_t n_coords, uint32_t cache)
{
	return app_db_make(r->conf, r->bench, n_coords, (unsigned)r->conf->threads, cache, &r->db);
}

/*
 * Address cache per thread: the papers assume an unlimited one; a thread
 * never needs more entries than the database has keys, and 90 threads with
 * 1 Mi entries each would not fit the memory, so unless --addr-cache was
 * given the simulation sizes it to the tables' keys.
 */
static uint32_t
sim_cache_entries(const struct sim_run *r)
{
	const struct dtxn_catalog *cat = dtxn_db_catalog(r->db);
	uint64_t keys = 0;

	if (app_conf_given(r->conf, "addr_cache"))
		return (uint32_t)r->conf->addr_cache;
	for (uint32_t t = 0; t < DTXN_MAX_TABLES; t++) {
		const struct dtxn_table *tab = dtxn_catalog_table(cat, t);

		if (tab != NULL)
			keys += tab->def.max_keys;
	}
	keys = RTE_MAX(keys, (uint64_t)SIM_ADDR_CACHE_MIN);
	return (uint32_t)RTE_MIN(keys, r->conf->addr_cache);
}

static int
sim_build_db(struct sim_run *r, uint32_t n_coords)
{
	const struct app_conf *c = r->conf;
	struct dtxn_fabric_conf fc = {
		.size = sizeof(fc),
		.driver = "sim",
		.n_mn = (uint16_t)c->mn,
		.n_cn = (uint16_t)c->cn,
		.socket_id = (int)rte_socket_id(),
		.name = "dtxn",
	};
	struct dtxn_nic_model cn_nic;
	uint64_t region, need;
	uint32_t cache;
	int rc;

	rc = sim_make_db(r, n_coords, (uint32_t)c->addr_cache);
	if (rc != APP_EXIT_OK)
		return rc;
	cache = sim_cache_entries(r);
	if (cache != c->addr_cache) {
		dtxn_db_destroy(r->db);
		rc = sim_make_db(r, n_coords, cache);
		if (rc != APP_EXIT_OK)
			return rc;
	}
	rc = app_fabric_open(c, r->db, &fc, r->n_threads, &r->fabric, &region);
	if (rc != APP_EXIT_OK)
		return rc;
	/* the tables on 2 MiB pages before the load fills them, the workers'
	 * state before it is built, unless they are large (issue 30) */
	(void)dtxn_sim_regions_large_pages(r->fabric, dtxn_db_catalog(r->db)->log_off);
	if (app_memory_estimate(c, r->db, &fc, r->n_threads, &need) == 0)
		app_heap_large_pages(need);
	/* test aid --fault-drop: before the protocols read dtxn_fabric_posted_survives() */
	if (c->fault_drop > 0 && dtxn_sim_set_fault_drop(r->fabric, c->fault_drop, c->seed) != 0) {
		app_err("internal error: the sim fabric refused --fault-drop %g", c->fault_drop);
		return APP_EXIT_FAIL;
	}
	/* every node has the --nic model; CNs take --cn-nic when given */
	if (c->cn_nic[0] != '\0') {
		if (app_nic_model("--cn-nic", c->cn_nic_path, &cn_nic) != APP_EXIT_OK)
			return APP_EXIT_USAGE;
		for (uint16_t i = 0; i < c->cn; i++)
			(void)dtxn_sim_node_nic_set(r->fabric, (uint16_t)(c->mn + i), &cn_nic);
	}
	return app_db_load(c, r->db, r->fabric, r->bench, region, &r->load_s);
}

/* agent.h's drained_ns: a dead CN's WRs still in the RNICs. */
static uint64_t
sim_drained_ns(void *arg, uint16_t node, uint32_t inc)
{
	(void)inc;
	return dtxn_sim_node_drained_ns(arg, node);
}

static int
sim_build_thread(struct sim_run *r, struct sim_thread *th, uint64_t n_coords)
{
	const struct app_conf *c = r->conf;
	int socket = (int)rte_socket_id();
	unsigned per = (unsigned)c->coroutines;
	int rc;

	th->w = dtxn_worker_create(r->db, (uint16_t)(c->mn + th->cn), th->thread,
				   per + (r->agents != NULL && th->thread == 0 ? APP_AGENT_COORDS : 0),
				   socket);
	if (th->w == NULL) {
		app_err("cannot create thread %u of CN %u: %s (more memory: -m)", th->thread, th->cn,
			rte_strerror(rte_errno));
		return APP_EXIT_FAIL;
	}
	rc = app_addr_prewarm(c, th->w);
	if (rc != APP_EXIT_OK)
		return rc;
	th->s = dtxn_worker_sched(th->w);
	th->cq = th->w->cq;
	dtxn_sched_set_cpu_model(th->s, &r->cpu);
	if (dtxn_sim_cq_set_notify(th->cq, sim_cq_notify, th) != 0) {
		app_err("internal error: the sim fabric refused a CQ");
		return APP_EXIT_FAIL;
	}
	th->stats = rte_zmalloc("dtxn_stats", sizeof(*th->stats), 64);
	th->ctx = rte_zmalloc("dtxn_ctx", sizeof(*th->ctx) * per, 64);
	if (th->stats == NULL || th->ctx == NULL) {
		app_err("out of memory for the statistics of %u threads (more memory: -m)",
			r->n_threads);
		return APP_EXIT_FAIL;
	}
	th->n_ctx = per;
	rc = app_coords_create(c, r->bench, th->w, th->stats, th->ctx, per, th->idx * per,
			       n_coords);
	if (rc != APP_EXIT_OK)
		return rc;
	if (r->agents != NULL && th->thread == 0) {
		rc = app_agent_create(c, th->w, (uint32_t)(r->n_threads * per + th->cn * APP_AGENT_COORDS),
				      (uint32_t)(c->threads * per), &r->agents[th->cn]);
		if (rc != APP_EXIT_OK)
			return rc;
		r->agents[th->cn].drained_ns = sim_drained_ns;
		r->agents[th->cn].drained_arg = r->fabric;
	}
	th->alive = dtxn_sched_alive(th->s);
	r->alive += th->alive;
	th->wake_ns = UINT64_MAX;
	ag_wake(r, th, dtxn_now_ns());
	return APP_EXIT_OK;
}

static unsigned
sim_mn_poll(void *arg)
{
	return dtxn_mn_svc_poll(arg);
}

/*
 * The MNs' CPUs, when the protocol serves requests there (Scythe's Lock
 * RPC): one simulated thread per MN, without coroutines, whose poller is
 * the service; the service charges its work to the thread's CPU model,
 * so a busy MN CPU delays the requests behind it.
 */
static int
sim_build_mn_threads(struct sim_run *r)
{
	const struct app_conf *c = r->conf;

	for (unsigned m = 0; m < r->n_mn_threads; m++) {
		struct sim_thread *th = &r->th[r->n_threads + m];
		char name[24];

		th->run = r;
		th->idx = r->n_threads + m;
		th->wake_ns = UINT64_MAX;
		snprintf(name, sizeof(name), "mnsvc%u", m);
		th->s = dtxn_sched_create(name, (int)rte_socket_id(), 1, 0);
		if (th->s != NULL)
			th->svc = dtxn_mn_svc_create(r->db, (uint16_t)m, (unsigned)c->threads,
						     (unsigned)c->coroutines, th->s);
		if (th->s == NULL || th->svc == NULL ||
		    dtxn_sched_add_poller(th->s, sim_mn_poll, th->svc) != 0) {
			app_err("cannot start the service of MN %u: %s (more memory: -m)", m,
				rte_strerror(rte_errno));
			return APP_EXIT_FAIL;
		}
		dtxn_sched_set_cpu_model(th->s, &r->cpu);
		th->cq = dtxn_mn_svc_cq(th->svc);
		if (dtxn_sim_cq_set_notify(th->cq, sim_cq_notify, th) != 0) {
			app_err("internal error: the sim fabric refused an MN service's CQ");
			return APP_EXIT_FAIL;
		}
	}
	return APP_EXIT_OK;
}

static int
sim_build_threads(struct sim_run *r)
{
	const struct app_conf *c = r->conf;
	uint64_t n_coords = (uint64_t)r->n_threads * c->coroutines;

	r->n_mn_threads = dtxn_db_has_mn_svc(r->db) ? (unsigned)c->mn : 0;
	r->th = calloc(r->n_threads + r->n_mn_threads, sizeof(*r->th));
	if (r->th == NULL) {
		app_err("out of memory for %u threads", r->n_threads);
		return APP_EXIT_FAIL;
	}
	for (unsigned i = 0; i < r->n_threads; i++) {
		struct sim_thread *th = &r->th[i];
		int rc;

		th->run = r;
		th->idx = i;
		th->cn = (uint16_t)(i / c->threads);
		th->thread = (uint16_t)(i % c->threads);
		rc = sim_build_thread(r, th, n_coords);
		if (rc != APP_EXIT_OK)
			return rc;
	}
	return sim_build_mn_threads(r);
}

/* ------------------------------------------------------------------ */
/* The loop                                                           */
/* ------------------------------------------------------------------ */

/* One step of a thread due at @p now, and its next agenda time. */
static void
sim_step(struct sim_run *r, struct sim_thread *th, uint64_t now)
{
	uint64_t busy = dtxn_sched_busy_until_ns(th->s), next;
	unsigned alive;

	if (th->dead)
		return;
	if (busy > now) {
		ag_wake(r, th, busy); /* still computing: look again when it is free */
		return;
	}
	alive = dtxn_sched_step_lc(th->s);
	r->steps++;
	r->alive = r->alive - th->alive + alive;
	th->alive = alive;
	busy = dtxn_sched_busy_until_ns(th->s);
	if (busy > now)
		next = busy;
	else if (dtxn_sched_ready_count(th->s) > 0 || dtxn_sim_cq_pending(th->cq) > 0)
		next = now;
	else
		next = dtxn_sched_next_timer_ns(th->s); /* UINT64_MAX: until a completion */
	if (next != UINT64_MAX)
		ag_wake(r, th, RTE_MAX(next, now));
}

/* Live line: commits, aborts and latency of the last virtual interval. */
struct sim_live {
	uint64_t commits, attempts, aborts;
	struct dtxn_hist prev, cur, iv;
};

static void
sim_live_line(struct sim_run *r, struct sim_live *lv, double elapsed_s, double interval_s)
{
	uint64_t c = 0, a = 0, ab = 0;

	dtxn_hist_reset(&lv->cur);
	for (unsigned i = 0; i < r->n_threads; i++) {
		uint64_t tc, ta, tab;

		dtxn_run_stats_totals(r->th[i].stats, &tc, &ta, &tab);
		c += tc;
		a += ta;
		ab += tab;
		for (unsigned t = 0; t < r->th[i].stats->n_types; t++)
			dtxn_hist_merge(&lv->cur, &r->th[i].stats->type[t].lat);
	}
	dtxn_hist_sub(&lv->iv, &lv->cur, &lv->prev);
	dtxn_report_live(stdout, elapsed_s, interval_s, c - lv->commits, a - lv->attempts,
			 ab - lv->aborts, &lv->iv);
	lv->prev = lv->cur;
	lv->commits = c;
	lv->attempts = a;
	lv->aborts = ab;
}

/* Cumulative totals of the threads of the CNs in @p cns (bit per CN) (or of their warm-up snapshots). */
static void
sim_totals(const struct sim_run *r, bool at_warm, uint64_t cns, uint64_t *c, uint64_t *a,
	   uint64_t *ab)
{
	*c = *a = *ab = 0;
	for (unsigned i = 0; i < r->n_threads; i++) {
		uint64_t tc, ta, tab;

		/* CNs past 63 are in every set: --fault names none of them */
		if (r->th[i].cn < 64 && !(cns & (UINT64_C(1) << r->th[i].cn)))
			continue;

		dtxn_run_stats_totals(at_warm ? &r->warm.stats[i] : r->th[i].stats, &tc, &ta, &tab);
		*c += tc;
		*a += ta;
		*ab += tab;
	}
}

/* Closes a series interval at virtual time @p t (the state is that of `now`). */
static void
sim_sample(struct sim_run *r, uint64_t t, bool at_warm)
{
	uint64_t c, a, ab;

	sim_totals(r, at_warm, UINT64_MAX, &c, &a, &ab);
	if (at_warm)
		(void)dtxn_series_end_warmup(&r->series, (double)(t - r->t_start_ns) / 1e9, c, a, ab);
	else
		(void)dtxn_series_sample(&r->series, (double)(t - r->t_start_ns) / 1e9, c, a, ab);
	if (r->conf->fault_mask == 0)
		return;
	sim_totals(r, at_warm, ~r->conf->fault_mask, &c, &a, &ab);
	if (at_warm)
		(void)dtxn_series_end_warmup(&r->surv, (double)(t - r->t_start_ns) / 1e9, c, a, ab);
	else
		(void)dtxn_series_sample(&r->surv, (double)(t - r->t_start_ns) / 1e9, c, a, ab);
}

/* --fault: the CNs die where they are (locks held, logs half written);
 * with --fault-drop, some of what they posted dies with them. */
static void
sim_kill(struct sim_run *r)
{
	for (unsigned j = 0; j < r->conf->cn; j++) {
		uint64_t wrs = 0;
		int64_t n;

		if (j >= 64 || !(r->conf->fault_mask & (UINT64_C(1) << j)))
			continue;
		n = dtxn_sim_node_kill(r->fabric, (uint16_t)(r->conf->mn + j), &wrs);
		if (n > 0) {
			r->dropped_chains += (uint64_t)n;
			r->dropped_wrs += wrs;
		}
	}
	for (unsigned i = 0; i < r->n_threads; i++) {
		struct sim_thread *th = &r->th[i];

		if (th->cn >= 64 || !(r->conf->fault_mask & (UINT64_C(1) << th->cn)))
			continue;
		th->dead = true;
		th->wake_ns = UINT64_MAX; /* its agenda entries go stale */
		r->alive -= th->alive;
		th->alive = 0;
	}
	r->t_fault_ns = UINT64_MAX; /* done */
}

/* The warm-up ends at virtual time @p t: every counter the report shows. */
static void
sim_end_warmup(struct sim_run *r, uint64_t t)
{
	const struct app_conf *c = r->conf;

	for (unsigned i = 0; i < r->n_threads; i++) {
		struct sim_thread *th = &r->th[i];

		app_warm_take(&r->warm, i, th->stats, th->w);
		th->warm_cpu_ns = dtxn_sched_cpu_ns(th->s);
		memcpy(th->warm_cpu_ops, dtxn_sched_cpu_ops(th->s), sizeof(th->warm_cpu_ops));
	}
	for (unsigned m = 0; m < r->n_mn_threads; m++)
		r->th[r->n_threads + m].warm_cpu_ns = dtxn_sched_cpu_ns(r->th[r->n_threads + m].s);
	for (unsigned node = 0; node < c->mn + c->cn; node++) {
		const struct dtxn_nic_state *st = dtxn_fabric_nic_state(r->fabric, (uint16_t)node);

		if (st != NULL)
			r->warm_nic[node] = *st;
	}
	r->t_warm_ns = t;
	sim_sample(r, t, true);
}

/*
 * The clock moves from `now` to @p next: nothing changes in between, so a
 * series interval or the warm-up that ends in (now, next] ends with the
 * state of `now`. Interval ends at or past @p t_end are left to the final
 * sample after the stop.
 */
static void
sim_boundaries(struct sim_run *r, uint64_t next, uint64_t t_end, uint64_t t_warm,
	       uint64_t iv_ns, uint64_t *next_sample)
{
	for (;;) {
		bool warm_due = r->warm.n > 0 && !r->warm.taken && t_warm <= next;
		bool sample_due = *next_sample <= next && *next_sample < t_end;

		if (warm_due && (!sample_due || t_warm <= *next_sample)) {
			sim_end_warmup(r, t_warm);
		} else if (sample_due) {
			sim_sample(r, *next_sample, false);
			*next_sample += iv_ns;
		} else {
			return;
		}
	}
}

static int
sim_loop(struct sim_run *r)
{
	const struct app_conf *c = r->conf;
	const uint64_t t0 = dtxn_now_ns();
	const uint64_t t_warm = t0 + (uint64_t)(c->warmup_s * 1e9 + 0.5);
	const uint64_t t_end = c->txns ? UINT64_MAX : t_warm + (uint64_t)(c->duration_s * 1e9 + 0.5);
	const uint64_t iv_ns = RTE_MAX((uint64_t)(app_interval_s(c) * 1e9 + 0.5), (uint64_t)1);
	uint64_t next_sample = t0 + iv_ns;
	uint64_t now = t0, next_live = t0 + SIM_LIVE_NS, at_once = 0, last_live = t0;
	struct sim_live *lv = c->live ? calloc(1, sizeof(*lv)) : NULL;
	bool stopping = false;
	int rc = APP_EXIT_OK;

	r->t_start_ns = t0;
	r->t_warm_ns = t0;
	for (;;) {
		uint64_t next;

		if (now >= r->t_fault_ns)
			sim_kill(r);
		if (!stopping && now >= t_end) {
			for (unsigned i = 0; i < r->n_threads; i++)
				dtxn_sched_stop(r->th[i].s);
			stopping = true;
		}
		(void)dtxn_sim_run_events(r->fabric, now);
		while (ag_top(r) <= now) {
			struct sim_thread *th = &r->th[dtxn_timeq_top(&r->ag)->val];

			dtxn_timeq_pop(&r->ag);
			th->wake_ns = UINT64_MAX;
			sim_step(r, th, now);
			if (++at_once > SIM_MAX_STEPS_AT_ONCE) {
				app_err("simulation livelock: %" PRIu64 " steps at virtual time %.9f s and time does not pass (nothing costs time: --nic none with --cpu zero? or a coroutine yields in a loop)",
					at_once, (double)(now - t0) / 1e9);
				rc = APP_EXIT_FAIL;
				goto out;
			}
		}
		if (r->alive == 0)
			break;
		next = RTE_MIN(dtxn_sim_next_event_ns(r->fabric), ag_top(r));
		if (next <= now)
			continue; /* events made at `now` (a model with no RTT) */
		if (next == UINT64_MAX) {
			app_err("simulation stalled at virtual time %.9f s: %" PRIu64 " coroutines wait and nothing can wake them",
				(double)(now - t0) / 1e9, r->alive);
			rc = APP_EXIT_FAIL;
			goto out;
		}
		if (!stopping && next > t_end)
			next = t_end;
		if (next > r->t_fault_ns)
			next = r->t_fault_ns;
		if (lv != NULL && next >= next_live && !stopping) {
			sim_live_line(r, lv, (double)(next_live - t0) / 1e9,
				      (double)(next_live - last_live) / 1e9);
			last_live = next_live;
			next_live += SIM_LIVE_NS;
		}
		sim_boundaries(r, next, t_end, t_warm, iv_ns, &next_sample);
		dtxn_clock_advance(next);
		now = next;
		at_once = 0;
	}
	if (r->warm.n > 0 && !r->warm.taken) /* every coordinator ended before the warm-up did */
		sim_end_warmup(r, now);
	r->seconds = (double)((c->txns ? now : t_end) - r->t_warm_ns) / 1e9;
	/* the last interval ends at the stop; it counts what finished after it too */
	sim_sample(r, c->txns ? now : t_end, false);
	/* in-flight unsignaled WRs (unlocks) still have to reach MN memory */
	for (uint64_t t; (t = dtxn_sim_next_event_ns(r->fabric)) != UINT64_MAX;) {
		dtxn_clock_advance(t);
		(void)dtxn_sim_run_events(r->fabric, t);
	}
	/* the RNIC queues and the CPUs still work after the stop: busy
	 * fractions are taken over the whole span, so they never pass 1 */
	now = dtxn_now_ns();
	for (unsigned i = 0; i < r->n_threads + r->n_mn_threads; i++)
		now = RTE_MAX(now, dtxn_sched_busy_until_ns(r->th[i].s));
	r->span_s = (double)(now - r->t_warm_ns) / 1e9;
out:
	free(lv);
	return rc;
}

/*
 * --fault: the history oracle. A dead coordinator's open txn ends in its
 * history as committed if a recovery left its writes in MN memory
 * (struct dtxn_recovery.visible) or, when no recovery rolled it back
 * (struct dtxn_recovery.undone), its protocol had posted the writes that
 * commit it (dtxn_txn.decided), else as aborted.
 */
static void
sim_end_dead(struct sim_run *r)
{
	for (unsigned i = 0; i < r->n_threads; i++) {
		struct sim_thread *th = &r->th[i];

		for (unsigned k = 0; th->dead && k < th->n_ctx; k++) {
			struct dtxn_coord *co = th->ctx[k].coord;
			int verdict = 0;
			bool vis;

			if (co == NULL || !co->txn->open)
				continue;
			/* a recovery's verdict (the last that gave one) over decided */
			for (unsigned j = 0; r->agents != NULL && j < r->conf->cn; j++)
				for (unsigned n = 0; n < r->agents[j].n_recs; n++) {
					int v = app_agent_txn_verdict(co, &r->agents[j].recs[n].rec);

					verdict = v != 0 ? v : verdict;
				}
			vis = verdict != 0 ? verdict > 0 : app_agent_txn_kept(co, NULL);
			(void)dtxn_coord_history_end_open(co, vis);
			if (vis)
				dtxn_bench_ctx_settle(&th->ctx[k]);
		}
	}
}

/* ------------------------------------------------------------------ */
/* The run                                                            */
/* ------------------------------------------------------------------ */

/* The process's CPU time, user + system, seconds (0 if unknown). */
static double
sim_cpu_s(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0)
		return 0.0;
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * Frees the run. Every worker, MN service and the database are destroyed,
 * not left to the process's exit (which would skip rte_free()'s zeroing of
 * memory the run never read): their protocols' fini hooks print what the
 * run's own lines do not (OOCC's lease manager, Scythe's cancels; tcl-oocc
 * 4.20, tcl-scythe 2.30 read them).
 */
static void
sim_teardown(struct sim_run *r)
{
	if (r->th != NULL) {
		for (unsigned m = 0; m < r->n_mn_threads; m++) {
			dtxn_mn_svc_destroy(r->th[r->n_threads + m].svc);
			dtxn_sched_destroy(r->th[r->n_threads + m].s);
		}
		for (unsigned i = 0; i < r->n_threads; i++) {
			dtxn_worker_destroy(r->th[i].w);
			rte_free(r->th[i].stats);
			rte_free(r->th[i].ctx);
		}
	}
	free(r->th);
	dtxn_timeq_fini(&r->ag);
	free(r->agents);
	dtxn_series_free(&r->surv);
	free(r->warm_nic);
	app_warm_fini(&r->warm);
	dtxn_series_free(&r->series);
	app_release(r->db, r->fabric, r->bench);
}

int
app_run_sim(const struct app_conf *c)
{
	struct sim_run r = { .conf = c, .t_fault_ns = UINT64_MAX };
	uint64_t ev0, w0;
	double c0;
	char err[256];
	char label[64];
	int rc;

	r.n_threads = (unsigned)(c->cn * c->threads);
	/* the heap as private memory, for 2 MiB pages (issue 30): speed only */
	rc = app_heap_private();
	if (rc != 0)
		printf("dtxn: the heap stays on 4 KiB pages: %s\n", strerror(-rc));
	if (dtxn_cpu_model_load(c->cpu_path, &r.cpu, err, sizeof(err)) != 0) {
		app_err("--cpu: %s", err);
		return APP_EXIT_USAGE;
	}
	rc = app_bench_build(c, &r.bench);
	if (rc == APP_EXIT_OK && app_agents_on(c)) {
		r.agents = calloc(c->cn, sizeof(*r.agents));
		if (r.agents == NULL || dtxn_series_init(&r.surv, app_interval_s(c), c->warmup_s) != 0)
			rc = APP_EXIT_FAIL;
	}
	if (rc == APP_EXIT_OK)
		rc = sim_build_db(&r, (uint32_t)(r.n_threads * c->coroutines + app_agent_coords(c)));
	if (rc == APP_EXIT_OK) {
		/* loading is done on the MN CPUs in real time; the run is virtual */
		dtxn_clock_set_virtual(SIM_T0_NS);
		/* each CN's own clock (--clock-skew-ns, --clock-drift-ppm) */
		for (uint64_t i = 0; i < c->cn; i++) {
			int64_t ppm = (int64_t)c->clock_drift_ppm;

			(void)dtxn_clock_set_node((unsigned)(c->mn + i),
						  (int64_t)(i * c->clock_skew_ns),
						  (int32_t)(i % 2 ? ppm : -ppm));
		}
		if (c->fault_mask != 0)
			r.t_fault_ns = SIM_T0_NS + (uint64_t)(c->fault_at_s * 1e9 + 0.5);
		rc = sim_build_threads(&r);
	}
	if (rc == APP_EXIT_OK &&
	    (app_warm_init(&r.warm, c, r.n_threads) != 0 ||
	     dtxn_series_init(&r.series, app_interval_s(c), c->warmup_s) != 0 ||
	     (r.warm_nic = calloc(c->mn + c->cn, sizeof(*r.warm_nic))) == NULL))
		rc = APP_EXIT_FAIL;
	if (rc != APP_EXIT_OK) {
		sim_teardown(&r);
		return rc;
	}
	printf("dtxn: %s under %s (%s) on sim%s%s: %" PRIu64 " MNs, %" PRIu64 " CNs x %" PRIu64
	       " threads x %" PRIu64 " coordinators, nic %s, cpu %s, %s %g%s (virtual)\n",
	       c->bench, app_protocol_label(c, r.db, label, sizeof(label)), c->isolation,
	       c->cluster[0] ? " cluster " : "", c->cluster,
	       c->mn, c->cn, c->threads, c->coroutines, c->nic, r.cpu.name,
	       c->txns ? "txns" : "duration", c->txns ? (double)c->txns : c->duration_s,
	       c->txns ? "" : " s");
	fflush(stdout);
	ev0 = dtxn_sim_events(r.fabric);
	c0 = sim_cpu_s();
	w0 = dtxn_clock_real_ns();
	rc = sim_loop(&r);
	r.wall_s = (double)(dtxn_clock_real_ns() - w0) / 1e9;
	r.cpu_s = sim_cpu_s() - c0;
	r.events = dtxn_sim_events(r.fabric) - ev0;
	if (rc == APP_EXIT_OK) {
		sim_end_dead(&r);
		rc = sim_report(&r);
	}
	sim_teardown(&r);
	return rc;
}
