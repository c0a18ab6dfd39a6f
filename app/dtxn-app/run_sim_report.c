/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The report of a simulated run: the usual figures (per-type counters,
 * latency, verbs per MN) measured in virtual time after the warm-up
 * (--warmup: every counter below less its value at the warm-up's end),
 * plus section "sim"
 * (virtual seconds, events, busy fraction of every RNIC unit and CN thread,
 * the bottleneck, CPU units charged) and section "host" (wall seconds,
 * events per wall second), the only part that differs between two runs
 * with the same seed.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>

#include "dtxn_fabric_sim.h"
#include "run_sim.h"

static void
sim_report_conf(const struct sim_run *r, struct dtxn_report *rep)
{
	const struct app_conf *c = r->conf;

	dtxn_report_conf(rep, "bench", "%s", c->bench);
	app_report_protocol(rep, c, r->db);
	dtxn_report_conf(rep, "isolation", "%s", c->isolation);
	dtxn_report_conf(rep, "fabric", "%s", c->fabric);
	dtxn_report_conf(rep, "cluster", "%s", c->cluster[0] ? c->cluster : "-");
	dtxn_report_conf(rep, "nic", "%s", c->nic);
	dtxn_report_conf(rep, "cn_nic", "%s", c->cn_nic[0] ? c->cn_nic : c->nic);
	dtxn_report_conf(rep, "cpu", "%s", r->cpu.name);
	dtxn_report_conf(rep, "mn", "%" PRIu64, c->mn);
	dtxn_report_conf(rep, "cn", "%" PRIu64, c->cn);
	dtxn_report_conf(rep, "replicas", "%" PRIu64, c->replicas);
	dtxn_report_conf(rep, "workers", "%u", r->n_threads);
	dtxn_report_conf(rep, "threads", "%" PRIu64, c->threads);
	dtxn_report_conf(rep, "coroutines", "%" PRIu64, c->coroutines);
	dtxn_report_conf(rep, "coordinators", "%" PRIu64, c->coroutines * r->n_threads);
	if (c->clock_skew_ns != 0 || c->clock_drift_ppm != 0) {
		dtxn_report_conf(rep, "clock_skew_ns", "%" PRIu64, c->clock_skew_ns);
		dtxn_report_conf(rep, "clock_drift_ppm", "%" PRIu64, c->clock_drift_ppm);
	}
	if (c->txns)
		dtxn_report_conf(rep, "txns", "%" PRIu64, c->txns);
	else
		dtxn_report_conf(rep, "duration", "%g", c->duration_s);
	dtxn_report_conf(rep, "seed", "%" PRIu64, c->seed);
	app_report_bench_conf(rep, r->bench);
	app_report_method(rep, c, &r->series);
}

static void
sim_report_stats(const struct sim_run *r, struct dtxn_report *rep)
{
	app_report_begin(rep, r->bench, r->seconds, (uint16_t)r->conf->mn);
	app_report_memory(rep, r->db, r->load_s);
	for (unsigned i = 0; i < r->n_threads; i++)
		app_report_add_worker(rep, r->th[i].stats, r->th[i].w, &r->warm, i);
}

/* Units of CPU work, by enum dtxn_cpu_op (the cost keys without "_ns"). */
static const char *const g_unit_names[DTXN_CPU_OP_MAX] = {
	[DTXN_CPU_TXN] = "txn",
	[DTXN_CPU_RECORD] = "record",
	[DTXN_CPU_WR] = "wr",
	[DTXN_CPU_DOORBELL] = "doorbell",
	[DTXN_CPU_CQE] = "cqe",
	[DTXN_CPU_MSG] = "msg",
};

static double
sim_frac(uint64_t ns, double seconds)
{
	return seconds > 0 ? (double)ns / (seconds * 1e9) : 0.0;
}

static void
sim_busy_note(struct dtxn_report_sim *s, const struct dtxn_report_busy *b)
{
	if (b->busy > s->bottleneck.busy || s->bottleneck.name[0] == '\0')
		s->bottleneck = *b;
}

/* Fills the "sim" section; @p nic and @p thr have room for every unit / thread. */
static void
sim_report_sim(const struct sim_run *r, struct dtxn_report_sim *s,
	       struct dtxn_report_busy *nic, struct dtxn_report_busy *thr)
{
	/* NIC model v2 adds tx, the node's outbound pipeline (doc/guides/fabric.md) */
	static const char *const units[] = { "rw", "atomic", "dm_atomic", "tx" };
	const struct app_conf *c = r->conf;
	unsigned n_nodes = (unsigned)(c->mn + c->cn);

	s->virtual_seconds = r->seconds;
	s->events = r->events;
	s->nic = nic;
	s->threads = thr;
	for (unsigned node = 0; node < n_nodes; node++) {
		const struct dtxn_nic_state *st = dtxn_fabric_nic_state(r->fabric, (uint16_t)node);
		const struct dtxn_nic_state *w0 = &r->warm_nic[node]; /* zeros without a warm-up */
		const struct dtxn_nic_unit *u[4], *u0[4];

		if (st == NULL)
			continue;
		u[0] = &st->rw;
		u[1] = &st->atomic;
		u[2] = &st->dm_atomic;
		u[3] = &st->tx;
		u0[0] = &w0->rw;
		u0[1] = &w0->atomic;
		u0[2] = &w0->dm_atomic;
		u0[3] = &w0->tx;
		for (unsigned k = 0; k < RTE_DIM(units); k++) {
			struct dtxn_report_busy *b = &nic[s->n_nic];

			if (u[k]->ops == u0[k]->ops)
				continue;
			if (node < c->mn)
				snprintf(b->name, sizeof(b->name), "mn%u.%s", node, units[k]);
			else
				snprintf(b->name, sizeof(b->name), "cn%u.%s",
					 node - (unsigned)c->mn, units[k]);
			b->busy = sim_frac(u[k]->busy_ns - u0[k]->busy_ns, r->span_s);
			b->count = u[k]->ops - u0[k]->ops;
			sim_busy_note(s, b);
			s->n_nic++;
		}
	}
	for (unsigned i = 0; i < r->n_threads; i++) {
		const struct sim_thread *th = &r->th[i];
		const uint64_t *ops = dtxn_sched_cpu_ops(th->s);
		struct dtxn_report_busy *b = &thr[s->n_threads++];

		snprintf(b->name, sizeof(b->name), "cn%u.t%u", th->cn, th->thread);
		b->count = dtxn_sched_cpu_ns(th->s) - th->warm_cpu_ns;
		b->busy = sim_frac(b->count, r->span_s);
		sim_busy_note(s, b);
		for (unsigned k = 0; k < DTXN_CPU_OP_MAX && k < RTE_DIM(s->cpu_units); k++)
			s->cpu_units[k] += ops[k] - th->warm_cpu_ops[k];
	}
	for (unsigned m = 0; m < r->n_mn_threads; m++) {
		/* an MN's CPU serving the protocol (Scythe's lock service) */
		const struct sim_thread *th = &r->th[r->n_threads + m];
		struct dtxn_report_busy *b = &thr[s->n_threads++];

		snprintf(b->name, sizeof(b->name), "mn%u.cpu", m);
		b->count = dtxn_sched_cpu_ns(th->s) - th->warm_cpu_ns;
		b->busy = sim_frac(b->count, r->span_s);
		sim_busy_note(s, b);
	}
	s->n_cpu = RTE_MIN((unsigned)DTXN_CPU_OP_MAX, (unsigned)RTE_DIM(s->cpu_units));
	for (unsigned k = 0; k < s->n_cpu; k++)
		s->cpu_names[k] = g_unit_names[k];
}

int
sim_report(struct sim_run *r)
{
	const struct app_conf *c = r->conf;
	unsigned n_nodes = (unsigned)(c->mn + c->cn), n = 0;
	struct dtxn_report *rep = calloc(1, sizeof(*rep));
	struct dtxn_report_busy *nic = calloc((size_t)n_nodes * 4, sizeof(*nic));
	struct dtxn_report_busy *thr = calloc(r->n_threads + r->n_mn_threads, sizeof(*thr));
	struct dtxn_bench_ctx **ctxs = calloc((size_t)r->n_threads * c->coroutines, sizeof(*ctxs));
	struct dtxn_report_sim sim;
	struct dtxn_report_host host;
	static struct dtxn_report_recovery recov; /* large; one report at a time */
	int rc = APP_EXIT_OK;

	if (rep == NULL || nic == NULL || thr == NULL || ctxs == NULL) {
		app_err("out of memory for the report");
		rc = APP_EXIT_FAIL;
		goto out;
	}
	memset(&sim, 0, sizeof(sim));
	memset(&host, 0, sizeof(host)); /* no CPU figures: the cost model's are in "sim" */
	sim_report_conf(r, rep);
	sim_report_stats(r, rep);
	sim_report_sim(r, &sim, nic, thr);
	host.wall_seconds = r->wall_s;
	host.events_per_wall_second = r->wall_s > 0 ? (double)r->events / r->wall_s : 0.0;
	host.cpu_seconds = r->cpu_s;
	host.events_per_cpu_second = r->cpu_s > 0 ? (double)r->events / r->cpu_s : 0.0;
	rep->sim = &sim;
	rep->host = &host;
	if (r->agents != NULL && c->fault_mask != 0) {
		app_agent_report(c, r->agents, (unsigned)c->cn, (uint16_t)c->mn, r->t_start_ns,
				 &r->surv, &recov);
		for (unsigned i = 0; i < r->n_threads; i++) {
			uint64_t tc, ta, tab;

			if (!r->th[i].dead)
				continue;
			dtxn_run_stats_totals(r->th[i].stats, &tc, &ta, &tab);
			recov.dead_committed += tc;
		}
		recov.dropped_chains = r->dropped_chains;
		recov.dropped_wrs = r->dropped_wrs;
		rep->recovery = &recov;
	}
	for (unsigned i = 0; i < r->n_threads; i++)
		for (unsigned k = 0; k < r->th[i].n_ctx; k++)
			ctxs[n++] = &r->th[i].ctx[k];
	rc = app_report_finish(c, r->bench, r->db, (struct dtxn_bench_ctx *const *)ctxs, n, true,
			       rep);
out:
	free(ctxs);
	free(thr);
	free(nic);
	free(rep);
	return rc;
}
