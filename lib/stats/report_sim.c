/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The parts of the report only a simulated run has (doc/guides/sim.md,
 * doc/guides/report.md): section "sim" (virtual seconds, events, busy
 * fraction of every RNIC unit and CN thread, the bottleneck, CPU units
 * charged) and section "host" (wall seconds, events per wall second), in
 * the summary and in the JSON report; a real-time run's "host" (the CPU of
 * its worker lcores per committed txn) is formatted here too.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include <jansson.h>

#include <rte_common.h>

#include "stats_private.h"

/** Busiest threads listed in the summary (the JSON lists all). */
#define SIM_PRINT_THREADS 4

static json_t *
sim_busy(const struct dtxn_report_busy *b, const char *count_key)
{
	json_t *o = json_object();
	bool ok;

	if (o == NULL)
		return NULL;
	ok = stats_json_put(o, "name", json_string(b->name));
	ok &= stats_json_put(o, "busy", stats_json_num(b->busy));
	if (count_key != NULL)
		ok &= stats_json_put(o, count_key, stats_json_u64(b->count));
	if (!ok) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *
sim_busy_list(const struct dtxn_report_busy *b, unsigned n, const char *count_key)
{
	json_t *a = json_array();

	if (a == NULL)
		return NULL;
	for (unsigned i = 0; i < n; i++) {
		json_t *o = sim_busy(&b[i], count_key);

		if (o == NULL || json_array_append_new(a, o) != 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

json_t *
stats_json_sim(const struct dtxn_report *r)
{
	const struct dtxn_report_sim *s = r->sim;
	json_t *o, *cpu;
	bool ok;

	if (s == NULL || (o = json_object()) == NULL)
		return NULL;
	ok = stats_json_put(o, "virtual_seconds", stats_json_num(s->virtual_seconds));
	ok &= stats_json_put(o, "events", stats_json_u64(s->events));
	ok &= stats_json_put(o, "bottleneck", sim_busy(&s->bottleneck, NULL));
	ok &= stats_json_put(o, "nic", sim_busy_list(s->nic, s->n_nic, "ops"));
	ok &= stats_json_put(o, "threads", sim_busy_list(s->threads, s->n_threads, "cpu_ns"));
	cpu = json_object();
	if (cpu != NULL)
		for (unsigned i = 0; i < s->n_cpu && i < RTE_DIM(s->cpu_names); i++)
			ok &= stats_json_put(cpu, s->cpu_names[i], stats_json_u64(s->cpu_units[i]));
	ok &= stats_json_put(o, "cpu_units", cpu);
	if (!ok) {
		json_decref(o);
		return NULL;
	}
	return o;
}

json_t *
stats_json_host(const struct dtxn_report *r)
{
	json_t *o;
	bool ok;

	if (r->host == NULL || (o = json_object()) == NULL)
		return NULL;
	ok = true;
	if (r->sim != NULL) {
		ok &= stats_json_put(o, "wall_seconds", stats_json_num(r->host->wall_seconds));
		ok &= stats_json_put(o, "events_per_wall_second",
				     stats_json_num(r->host->events_per_wall_second));
		ok &= stats_json_put(o, "cpu_seconds", stats_json_num(r->host->cpu_seconds));
		ok &= stats_json_put(o, "events_per_cpu_second",
				     stats_json_num(r->host->events_per_cpu_second));
		if (r->has_mem)
			ok &= stats_json_put(o, "load_seconds", stats_json_num(r->load_seconds));
	}
	if (r->host->has_cpu) {
		json_t *cpu = json_object();

		if (cpu != NULL) {
			ok &= stats_json_put(cpu, "total", stats_json_num(r->host->cpu_ns_per_txn));
			ok &= stats_json_put(cpu, "coordinator",
					     stats_json_num(r->host->coord_ns_per_txn));
			ok &= stats_json_put(cpu, "nic", stats_json_num(r->host->nic_ns_per_txn));
		}
		ok &= stats_json_put(o, "cn_cpu_ns_per_txn", cpu);
		ok &= stats_json_put(o, "cn_busy", stats_json_num(r->host->cn_busy));
		ok &= stats_json_put(o, "cn_running", stats_json_num(r->host->cn_running));
	}
	if (!ok) {
		json_decref(o);
		return NULL;
	}
	return o;
}

void
stats_print_sim(const struct dtxn_report *r, FILE *out)
{
	const struct dtxn_report_sim *s = r->sim;
	unsigned shown[SIM_PRINT_THREADS], n_shown = 0;

	if (s != NULL) {
		fprintf(out, "simulation (virtual time)\n");
		fprintf(out, "  %-22s %.6f\n", "virtual seconds", s->virtual_seconds);
		fprintf(out, "  %-22s %" PRIu64 "\n", "events", s->events);
		fprintf(out, "  %-22s %s %.1f%% busy\n", "bottleneck", s->bottleneck.name,
			100.0 * s->bottleneck.busy);
		fprintf(out, "  RNIC units (busy %%, ops)\n");
		for (unsigned i = 0; i < s->n_nic; i++)
			fprintf(out, "    %-20s %6.1f%% %14" PRIu64 "\n", s->nic[i].name,
				100.0 * s->nic[i].busy, s->nic[i].count);
		/* the busiest threads, first one first among equals */
		while (n_shown < SIM_PRINT_THREADS && n_shown < s->n_threads) {
			unsigned best = UINT32_MAX;

			for (unsigned i = 0; i < s->n_threads; i++) {
				bool taken = false;

				for (unsigned k = 0; k < n_shown; k++)
					taken |= shown[k] == i;
				if (!taken && (best == UINT32_MAX ||
					       s->threads[i].busy > s->threads[best].busy))
					best = i;
			}
			shown[n_shown++] = best;
		}
		/* CN worker threads (cnI.tJ) and MN CPUs serving a protocol (mnI.cpu) */
		fprintf(out, "  threads: %u, busiest (busy %%)\n", s->n_threads);
		for (unsigned k = 0; k < n_shown; k++)
			fprintf(out, "    %-20s %6.1f%%\n", s->threads[shown[k]].name,
				100.0 * s->threads[shown[k]].busy);
	}
	if (r->host != NULL && s != NULL)
		fprintf(out, "host (wall clock)\n  %-22s %.3f\n  %-22s %.0f\n  %-22s %.3f\n  %-22s %.0f\n",
			"wall seconds", r->host->wall_seconds, "events per wall second",
			r->host->events_per_wall_second, "CPU seconds", r->host->cpu_seconds,
			"events per CPU second", r->host->events_per_cpu_second);
	if (r->host != NULL && r->host->has_cpu)
		fprintf(out, "host CPU of the worker lcores (%.1f%% busy, ran %.1f%% of the time), ns per committed txn\n"
			"  %-22s %.0f\n  %-22s %.0f\n  %-22s %.0f\n", 100.0 * r->host->cn_busy,
			100.0 * r->host->cn_running,
			"total", r->host->cpu_ns_per_txn, "coordinator", r->host->coord_ns_per_txn,
			"emulated NIC", r->host->nic_ns_per_txn);
}
