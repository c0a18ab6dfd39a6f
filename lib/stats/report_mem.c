/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The MN memory part of the report (doc/guides/report.md, "MN memory"):
 * what each MN region holds, by kind, and the overhead over the raw bytes
 * of the loaded rows times their copies, in the summary and in the JSON.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "stats_private.h"

void
stats_mem_view_build(const struct dtxn_report *r, struct stats_mem_view *m)
{
	uint16_t n = r->n_mn > DTXN_MAX_NODES ? DTXN_MAX_NODES : r->n_mn;

	memset(m, 0, sizeof(*m));
	for (uint16_t i = 0; i < n; i++) {
		const struct dtxn_store_mem *e = &r->mem[i];

		m->sum.total += e->total;
		m->sum.index += e->index;
		m->sum.values += e->values;
		m->sum.logs += e->logs;
		m->sum.msgs += e->msgs;
		m->sum.reserved += e->reserved;
		m->sum.unused += e->unused;
		m->sum.empty += e->empty;
		m->sum.raw += e->raw;
		m->sum.heap_free += e->heap_free;
	}
	/* every copy of a row is raw data the MNs must hold: sum.raw = raw x copies */
	m->overhead = stats_ratio((double)m->sum.total, (double)m->sum.raw) - 1.0;
	m->table_overhead = stats_ratio((double)(m->sum.index + m->sum.values),
					(double)m->sum.raw) - 1.0;
	m->row_overhead = stats_ratio((double)(m->sum.index + m->sum.values - m->sum.empty),
				      (double)m->sum.raw) - 1.0;
	m->in_use_overhead = stats_ratio((double)stats_mem_in_use(&m->sum), (double)m->sum.raw) - 1.0;
	if (m->sum.raw == 0)
		m->overhead = m->table_overhead = m->row_overhead = m->in_use_overhead = 0.0;
}

static double
mem_mib(uint64_t b)
{
	return (double)b / (1 << 20);
}

void
stats_print_mem(const struct dtxn_report *r, FILE *out)
{
	struct stats_mem_view m;
	uint16_t n = r->n_mn > DTXN_MAX_NODES ? DTXN_MAX_NODES : r->n_mn;

	if (!r->has_mem)
		return;
	stats_mem_view_build(r, &m);
	fprintf(out, "MN memory, MiB (raw rows %.1f MiB x %u copies, loaded in %.2f s)\n",
		mem_mib(r->raw_bytes), r->copies, r->load_seconds);
	fprintf(out, "  %4s %10s %10s %10s %10s %10s %10s %10s %10s %10s\n", "mn", "total",
		"index", "values", "logs", "msgs", "unused", "(empty)", "raw", "in use");
	for (uint16_t i = 0; i < n; i++) {
		const struct dtxn_store_mem *e = &r->mem[i];

		fprintf(out, "  %4u %10.1f %10.1f %10.1f %10.1f %10.1f %10.1f %10.1f %10.1f %10.1f\n",
			i, mem_mib(e->total), mem_mib(e->index), mem_mib(e->values),
			mem_mib(e->logs), mem_mib(e->msgs), mem_mib(e->unused + e->reserved),
			mem_mib(e->empty), mem_mib(e->raw), mem_mib(stats_mem_in_use(e)));
	}
	fprintf(out, "  overhead over raw x copies: %.1f%% held, %.1f%% tables, %.1f%% rows, %.1f%% in use\n",
		100.0 * m.overhead, 100.0 * m.table_overhead, 100.0 * m.row_overhead,
		100.0 * m.in_use_overhead);
}

static json_t *
mem_entry(const struct dtxn_store_mem *e, int mn)
{
	json_t *o = json_object();
	bool ok;

	if (o == NULL)
		return NULL;
	ok = mn < 0 || stats_json_put(o, "mn", json_integer(mn));
	ok &= stats_json_put(o, "total", stats_json_u64(e->total));
	ok &= stats_json_put(o, "index", stats_json_u64(e->index));
	ok &= stats_json_put(o, "values", stats_json_u64(e->values));
	ok &= stats_json_put(o, "logs", stats_json_u64(e->logs));
	ok &= stats_json_put(o, "msgs", stats_json_u64(e->msgs));
	ok &= stats_json_put(o, "reserved", stats_json_u64(e->reserved));
	ok &= stats_json_put(o, "unused", stats_json_u64(e->unused));
	ok &= stats_json_put(o, "empty", stats_json_u64(e->empty));
	ok &= stats_json_put(o, "raw", stats_json_u64(e->raw));
	ok &= stats_json_put(o, "heap_free", stats_json_u64(e->heap_free));
	ok &= stats_json_put(o, "in_use", stats_json_u64(stats_mem_in_use(e)));
	if (!ok) {
		json_decref(o);
		return NULL;
	}
	return o;
}

json_t *
stats_json_mem(const struct dtxn_report *r)
{
	uint16_t n = r->n_mn > DTXN_MAX_NODES ? DTXN_MAX_NODES : r->n_mn;
	struct stats_mem_view m;
	json_t *o, *a;
	bool ok;

	if (!r->has_mem || (o = json_object()) == NULL)
		return NULL;
	stats_mem_view_build(r, &m);
	a = json_array();
	ok = a != NULL;
	for (uint16_t i = 0; ok && i < n; i++) {
		json_t *e = mem_entry(&r->mem[i], i);

		ok = e != NULL && json_array_append_new(a, e) == 0;
	}
	ok &= stats_json_put(o, "mn_bytes", a);
	ok &= stats_json_put(o, "bytes", mem_entry(&m.sum, -1));
	ok &= stats_json_put(o, "raw_bytes", stats_json_u64(r->raw_bytes));
	ok &= stats_json_put(o, "copies", json_integer(r->copies));
	ok &= stats_json_put(o, "delta_chunks", stats_json_u64(r->delta_chunks));
	ok &= stats_json_put(o, "overhead", stats_json_num(m.overhead));
	ok &= stats_json_put(o, "table_overhead", stats_json_num(m.table_overhead));
	ok &= stats_json_put(o, "row_overhead", stats_json_num(m.row_overhead));
	ok &= stats_json_put(o, "in_use_overhead", stats_json_num(m.in_use_overhead));
	/* wall clock: a simulated run shows it in "host" (its only wall-clock part) */
	if (r->host == NULL || r->sim == NULL)
		ok &= stats_json_put(o, "load_seconds", stats_json_num(r->load_seconds));
	if (!ok) {
		json_decref(o);
		return NULL;
	}
	return o;
}
