/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The steps every run (run.c: shm, lcores in real time; run_sim.c: the
 * simulated cluster) takes to build the benchmark and the database, and
 * to fill the common part of the report.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_errno.h>

#include "dtxn_bench.h"
#include "dtxn_fabric.h"
#include "dtxn_stats.h"
#include "dtxn_txn.h"
#include "app.h"
#include "role.h"

int
app_bench_build(const struct app_conf *c, struct dtxn_bench **out)
{
	const struct dtxn_bench_ops *bops = dtxn_bench_find(c->bench);
	struct dtxn_bench *b;
	char err[256];

	b = dtxn_bench_alloc(bops, c->seed);
	if (b == NULL) {
		app_err("out of memory for the benchmark");
		return APP_EXIT_FAIL;
	}
	*out = b;
	b->retry = (enum dtxn_bench_retry)dtxn_bench_retry_parse(c->retry); /* checked by app_validate */
	for (unsigned i = 0; i < c->n_bench_opts; i++)
		for (unsigned k = 0; k < bops->n_opts; k++)
			if (strcmp(bops->opts[k].name, c->bench_opts[i].name) == 0 &&
			    dtxn_opt_set(&bops->opts[k], b->conf, c->bench_opts[i].value, err,
					 sizeof(err)) != 0) {
				app_err("%s", err);
				return APP_EXIT_USAGE;
			}
	if (bops->create(b) != 0) {
		app_err("--bench %s: %s", bops->name, b->err);
		return APP_EXIT_USAGE;
	}
	return APP_EXIT_OK;
}

int
app_db_make(const struct app_conf *c, struct dtxn_bench *b, uint32_t n_coords,
	    unsigned per_cn, uint32_t addr_cache, struct dtxn_db **out)
{
	struct dtxn_db_conf dc = {
		.size = sizeof(dc),
		.protocol = c->protocol,
		.isolation = (enum dtxn_isolation)dtxn_isolation_parse(c->isolation),
		.n_mn = (uint16_t)c->mn,
		.n_replicas = (uint16_t)c->replicas,
		.n_coords = n_coords,
		.log_bytes = c->log_kib * 1024,
		.aux_chunk = (uint32_t)c->aux_chunk,
		.versions = (uint32_t)c->versions,
		.false_aborts = c->false_aborts,
		.placement = (uint8_t)(strcmp(c->placement, "key") == 0 ? DTXN_PLACEMENT_KEY :
									  DTXN_PLACEMENT_TABLE),
		/* --addr-cache 0: unbounded (dtxn_db_addr_cache_entries()) */
		.addr_cache_entries = addr_cache == 0 ? DTXN_ADDR_CACHE_UNBOUNDED : addr_cache,
		.addr_prewarm = c->addr_prewarm,
		.debug_flags = app_check_debug_flags(c) | app_fault_debug_flags(c),
		.debug_crash_cns = c->fault_mask << c->mn,
		.debug_post_gap_ns = c->debug_post_gap_ns,
		.debug_decide_gap_ns = c->debug_decide_gap_ns,
		.debug_stall_ns = c->stall_cn < 0 ? 0 : (uint64_t)(c->stall_ms * 1e6),
		.debug_stall_cns = c->stall_cn < 0 ? 0 : UINT64_C(1) << (c->mn + (unsigned)c->stall_cn),
		.cc_options = c->cc_opts,
		.cn_recovery = app_agents_on(c),
		.n_cn = (uint16_t)c->cn,
		.cn_workers = per_cn,
		.recovery_only = c->recovery_pass,
	};
	int rc;

	*out = dtxn_db_create(&dc);
	if (*out == NULL) {
		app_err("--protocol %s: %s", c->protocol, rte_strerror(rte_errno));
		return APP_EXIT_USAGE;
	}
	if (app_agents_on(c) && !dtxn_db_can_recover(*out)) {
		app_err("--protocol %s%s%s: no CN crash recovery, so no --fault or --lease-ms (doc/guides/cluster.md, \"Recovery\")",
			c->protocol, c->cc_opts[0] != '\0' ? " --cc-opts " : "", c->cc_opts);
		return APP_EXIT_USAGE;
	}
	rc = b->ops->define(b, *out);
	if (rc != 0) {
		app_err("--bench %s: %s", c->bench, b->err[0] ? b->err : strerror(-rc));
		return APP_EXIT_USAGE;
	}
	if (app_table_mn_apply(c, *out) != 0)
		return APP_EXIT_USAGE;
	return APP_EXIT_OK;
}

int
app_nic_model(const char *opt, const char *path, struct dtxn_nic_model *m)
{
	char err[256];

	if (path[0] == '\0') {
		dtxn_nic_model_none(m);
		return APP_EXIT_OK;
	}
	if (dtxn_nic_model_load(path, m, err, sizeof(err)) != 0) {
		app_err("%s: %s", opt, err);
		return APP_EXIT_USAGE;
	}
	return APP_EXIT_OK;
}

/* The run this process serves, as the network fabrics' connect digest takes it. */
static char g_run_desc[APP_CTL_DESC_MAX + 64];

void
app_rdma_conf(const struct app_conf *c, uint64_t serve, struct dtxn_fabric_rdma_conf *rdma)
{
	memset(rdma, 0, sizeof(*rdma));
	rdma->dev = c->rdma_dev;
	rdma->port = (uint8_t)c->rdma_port;
	rdma->gid_index = app_conf_given(c, "gid_index") ? (int)c->gid_index : -1;
	for (unsigned i = 0; i < DTXN_MAX_NODES; i++)
		rdma->node_addr[i] = c->node_addr[i][0] != '\0' ? c->node_addr[i] : NULL;
	rdma->serve = serve;
	/* ucx: processes started for another run, or another dtxn, refuse each other */
	if (g_run_desc[0] == '\0') {
		int n = snprintf(g_run_desc, sizeof(g_run_desc), "dtxn %s ", DTXN_VERSION);

		app_role_desc(c, g_run_desc + n, sizeof(g_run_desc) - (size_t)n);
	}
	rdma->run_desc = g_run_desc;
	rdma->connect_timeout_ms = (uint32_t)(c->connect_timeout_s * 1000);
}

int
app_fabric_open(const struct app_conf *c, struct dtxn_db *db, struct dtxn_fabric_conf *fc,
		unsigned n_workers, struct dtxn_fabric **out, uint64_t *region)
{
	int rc = dtxn_db_layout(db, region);

	if (rc != 0) {
		app_err("--bench %s: the tables do not fit an MN region (%s)", c->bench,
			strerror(-rc));
		return APP_EXIT_USAGE;
	}
	fc->mn_region_size = *region;
	rc = app_memory_check(c, db, fc, n_workers); /* memory.c: before anything large */
	if (rc != APP_EXIT_OK)
		return rc;
	if (app_nic_model("--nic", c->nic_path, &fc->nic) != APP_EXIT_OK)
		return APP_EXIT_USAGE;
	*out = dtxn_fabric_open(fc);
	if (*out == NULL) {
		if (rte_errno == ENOMEM)
			app_err("the tables need %.1f MiB on each of %" PRIu64 " MNs (%.1f MiB in all), more than the memory given to the EAL (-m or hugepages)",
				(double)*region / (1 << 20), c->mn,
				(double)*region * (double)c->mn / (1 << 20));
		else if (dtxn_fabric_open_error()[0] != '\0') /* the driver's reason */
			app_err("%s", dtxn_fabric_open_error());
		else
			app_err("--fabric %s: %s", c->fabric, rte_strerror(rte_errno));
		/* a node that never answered: unreachable, as a CN that waits in vain */
		return rte_errno == ETIMEDOUT ? APP_EXIT_UNREACHABLE : APP_EXIT_USAGE;
	}
	return APP_EXIT_OK;
}

/* CPU time of the calling thread, ns: what a load costs on a shared machine,
 * where the wall clock also counts waiting for a core. */
static uint64_t
app_thread_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int
app_db_load(const struct app_conf *c, struct dtxn_db *db, struct dtxn_fabric *f,
	    struct dtxn_bench *b, uint64_t region, double *load_s)
{
	uint64_t t0, cpu0;
	int rc = dtxn_db_attach(db, f), rc2;

	if (rc != 0) {
		app_err("cannot attach the database to the fabric: %s", strerror(-rc));
		return APP_EXIT_FAIL;
	}
	t0 = dtxn_now_ns();
	cpu0 = app_thread_cpu_ns();
	/* one replica per record, then a streaming copy per backup (store.md) */
	rc = dtxn_db_load_begin(db);
	if (rc == 0)
		rc = b->ops->load(b, db);
	rc2 = dtxn_db_load_end(db);
	if (rc == 0 && rc2 != 0) {
		app_err("cannot copy the loaded tables to their backups: %s", strerror(-rc2));
		return APP_EXIT_FAIL;
	}
	if (rc != 0) {
		app_err("--bench %s: load failed: %s", c->bench, b->err[0] ? b->err : strerror(-rc));
		return -rc == ENOMEM || -rc == ENOSPC ? APP_EXIT_USAGE : APP_EXIT_FAIL;
	}
	*load_s = (double)(dtxn_now_ns() - t0) / 1e9;
	printf("dtxn: %s loaded on %" PRIu64 " MNs x %.1f MiB in %.2f s (%.2f s of CPU)\n",
	       c->bench, c->mn, (double)region / (1 << 20), *load_s,
	       (double)(app_thread_cpu_ns() - cpu0) / 1e9);
	dtxn_fabric_publish(f); /* network fabrics: other processes may connect now */
	return APP_EXIT_OK;
}

const char *
app_protocol_label(const struct app_conf *c, const struct dtxn_db *db, char *buf, size_t len)
{
	const char *v = dtxn_db_variant(db);

	if (v == NULL)
		snprintf(buf, len, "%s", c->protocol);
	else
		snprintf(buf, len, "%s (%s)", c->protocol, v);
	return buf;
}

void
app_report_protocol(struct dtxn_report *rep, const struct app_conf *c, const struct dtxn_db *db)
{
	const char *v = dtxn_db_variant(db);

	dtxn_report_conf(rep, "protocol", "%s", c->protocol);
	if (v != NULL)
		dtxn_report_conf(rep, "variant", "%s", v);
	if (c->cc_opts[0] != '\0')
		dtxn_report_conf(rep, "cc_opts", "%s", c->cc_opts);
	if (c->versions != 0)
		dtxn_report_conf(rep, "versions", "%" PRIu64, c->versions);
	if (c->false_aborts)
		dtxn_report_conf(rep, "false_aborts", "classified");
	if (c->table_mn[0] != '\0')
		dtxn_report_conf(rep, "table_mn", "%s", c->table_mn);
	if (app_conf_given(c, "addr_cache") && c->addr_cache == 0)
		dtxn_report_conf(rep, "addr_cache", "unbounded");
	else if (app_conf_given(c, "addr_cache"))
		dtxn_report_conf(rep, "addr_cache", "%" PRIu64, c->addr_cache);
	if (c->addr_prewarm)
		dtxn_report_conf(rep, "addr_prewarm", "1");
	if (strcmp(c->placement, "key") == 0) /* the default (table) is not written */
		dtxn_report_conf(rep, "placement", "key");
	if (c->debug_post_gap_ns != 0)
		dtxn_report_conf(rep, "debug_post_gap_ns", "%" PRIu64, c->debug_post_gap_ns);
	if (c->debug_decide_gap_ns != 0)
		dtxn_report_conf(rep, "debug_decide_gap_ns", "%" PRIu64, c->debug_decide_gap_ns);
	if (c->stall_cn >= 0)
		dtxn_report_conf(rep, "debug_stall", "%s", c->debug_stall);
}

void
app_report_bench_conf(struct dtxn_report *rep, const struct dtxn_bench *b)
{
	const struct dtxn_bench_ops *bops = b->ops;

	for (unsigned k = 0; k < bops->n_opts; k++) {
		const struct dtxn_opt *o = &bops->opts[k];
		const char *p = (const char *)b->conf + o->offset;

		if (o->type == DTXN_OPT_NAME) {
			uint64_t v;

			memcpy(&v, p, sizeof(v));
			dtxn_report_conf(rep, o->name, "%s", dtxn_opt_name(o, v));
		} else if (o->type == DTXN_OPT_U64) {
			uint64_t v;

			memcpy(&v, p, sizeof(v));
			if (o->def == DTXN_OPT_UNSET && v == DTXN_OPT_U64_UNSET)
				dtxn_report_conf(rep, o->name, "off");
			else
				dtxn_report_conf(rep, o->name, "%" PRIu64, v);
		} else {
			double v;

			memcpy(&v, p, sizeof(v));
			if (o->def == DTXN_OPT_UNSET && v == DTXN_OPT_UNSET)
				dtxn_report_conf(rep, o->name, "off");
			else
				dtxn_report_conf(rep, o->name, "%g", v);
		}
	}
}

void
app_report_begin(struct dtxn_report *rep, const struct dtxn_bench *b, double seconds,
		 uint16_t n_mn)
{
	const struct dtxn_bench_ops *bops = b->ops;

	rep->seconds = seconds;
	for (unsigned t = 0; t < bops->n_types && t < DTXN_STATS_MAX_TYPES; t++)
		rep->type_names[t] = bops->type_names[t];
	rep->n_reasons = DTXN_ABORT_REASON_MAX;
	for (unsigned i = 0; i < DTXN_ABORT_REASON_MAX && i < DTXN_STATS_MAX_REASONS; i++)
		rep->reason_names[i] = i == 0 ? NULL : dtxn_abort_reason_name((int)i);
	for (unsigned k = 0; k < DTXN_WAIT_MAX && k < DTXN_STATS_MAX_WAITS; k++)
		rep->wait_names[k] = dtxn_wait_name(k);
	dtxn_run_stats_reset(&rep->stats, bops->n_types);
	rep->n_mn = n_mn;
}

void
app_report_memory(struct dtxn_report *rep, struct dtxn_db *db, double load_s)
{
	const struct dtxn_catalog *cat = dtxn_db_catalog(db);

	/* the delta areas (Motor's bars, Lotus's versions) the run used count as the rows' */
	(void)dtxn_db_heap_census(db);

	rep->has_mem = cat != NULL;
	if (cat == NULL)
		return;
	rep->copies = cat->n_replicas;
	rep->load_seconds = load_s;
	rep->raw_bytes = 0;
	rep->delta_chunks = 0;
	for (uint32_t id = 0; id < DTXN_MAX_TABLES; id++) {
		const struct dtxn_table *t = dtxn_catalog_table(cat, id);

		if (t != NULL) {
			rep->raw_bytes += t->loaded_raw_bytes;
			rep->delta_chunks += t->delta_faas;
		}
	}
	for (uint16_t m = 0; m < cat->n_mn && m < DTXN_MAX_NODES; m++)
		if (dtxn_catalog_mem(cat, m, &rep->mem[m]) != 0)
			rep->has_mem = false;
}

void
app_report_add_worker(struct dtxn_report *rep, const struct dtxn_run_stats *stats,
		      const struct dtxn_worker *w, const struct app_warm *warm, unsigned i)
{
	struct dtxn_fabric_counters per_mn[DTXN_MAX_NODES];
	const struct dtxn_fabric_counters *at_warm = NULL;

	memset(per_mn, 0, sizeof(per_mn));
	dtxn_worker_counters(w, per_mn);
	dtxn_worker_peer_counters(w, per_mn); /* the peer CNs' entries: their ids are >= n_mn */
	if (warm != NULL && warm->taken && i < warm->n) {
		struct dtxn_run_stats *d = malloc(sizeof(*d));

		if (d == NULL) { /* cannot subtract: count all, and say so */
			app_err("out of memory: the warm-up is counted in the figures");
			dtxn_run_stats_merge(&rep->stats, stats);
		} else {
			dtxn_run_stats_sub(d, stats, &warm->stats[i]);
			dtxn_run_stats_merge(&rep->stats, d);
			free(d);
			at_warm = &warm->per_mn[(size_t)i * DTXN_MAX_NODES];
		}
	} else {
		dtxn_run_stats_merge(&rep->stats, stats);
	}
	for (unsigned m = 0; m < rep->n_mn; m++)
		for (unsigned op = 0; op < DTXN_WR_OP_MAX; op++) {
			rep->per_mn[m].ops[op] += per_mn[m].ops[op] -
				(at_warm != NULL ? at_warm[m].ops[op] : 0);
			rep->per_mn[m].bytes[op] += per_mn[m].bytes[op] -
				(at_warm != NULL ? at_warm[m].bytes[op] : 0);
		}
	for (unsigned n = rep->n_mn; n < DTXN_MAX_NODES; n++)
		rep->cn_msgs[n] += per_mn[n].ops[DTXN_WR_SEND] -
			(at_warm != NULL ? at_warm[n].ops[DTXN_WR_SEND] : 0);
}

int
app_coords_create(const struct app_conf *c, struct dtxn_bench *b, struct dtxn_worker *w,
		  struct dtxn_run_stats *stats, struct dtxn_bench_ctx *ctx, unsigned n,
		  uint32_t gid0, uint64_t n_coords)
{
	dtxn_run_stats_reset(stats, b->ops->n_types);
	for (unsigned i = 0; i < n; i++) {
		struct dtxn_bench_ctx *x = &ctx[i];
		uint32_t gid = gid0 + i;

		x->bench = b;
		x->stats = stats;
		dtxn_rng_seed(&x->rng, c->seed * 0x9e3779b97f4a7c15ull + gid + 1);
		if (c->txns)
			x->quota = c->txns / n_coords + (gid < c->txns % n_coords ? 1 : 0);
		if (c->txns && x->quota == 0) {
			x->finished = true;
			continue;
		}
		x->coord = dtxn_coord_create(w, gid, dtxn_bench_coord_main, x);
		if (x->coord == NULL) {
			app_err("cannot create coordinator %u: %s", gid, rte_strerror(rte_errno));
			return APP_EXIT_FAIL;
		}
		if (app_check_attach(c, x->coord, (unsigned)n_coords) != 0) {
			app_err("out of memory for coordinator %u's history", gid);
			return APP_EXIT_FAIL;
		}
	}
	return APP_EXIT_OK;
}

/*
 * The invariant every protocol shares: no row holds a commit neither
 * finished nor undone (dtxn_db_unfinished(); Lotus's INVISIBLE cells),
 * reported only by a protocol that can leave one.
 */
static void
report_unfinished(struct dtxn_db *db, struct dtxn_report *rep)
{
	uint64_t n = 0, key = 0;
	uint32_t table = 0;
	const struct dtxn_table *t;
	int rc = dtxn_db_unfinished(db, &n, &table, &key);

	if (rc == -ENOTSUP)
		return; /* its records never hold one */
	if (rc != 0) {
		dtxn_report_check(rep, "unfinished_commits", false,
				  "the check could not read MN memory");
		return;
	}
	if (n == 0) {
		dtxn_report_check(rep, "unfinished_commits", true,
				  "no row holds a commit neither finished nor undone");
		return;
	}
	t = dtxn_catalog_table(dtxn_db_catalog(db), table);
	dtxn_report_check(rep, "unfinished_commits", false,
			  "%" PRIu64 " row(s) hold a commit neither finished nor undone, "
			  "first: table %s key %#" PRIx64,
			  n, t != NULL ? t->def.name : "?", key);
}

/*
 * Check "recovery_failed": a dead CN whose last recovery (section
 * "recovery", in order) returned an error, e.g. Scythe's torn write-back
 * (doc/guides/scythe.md, "Recovery"): its memory is not what the
 * survivors' counters say, whatever the invariants find. No recovery
 * section, or none failed last: no check.
 */
static void
report_recoveries(struct dtxn_report *rep)
{
	const struct dtxn_report_recovery *r = rep->recovery;

	for (unsigned i = 0; r != NULL && i < r->n_cn; i++) {
		bool last = true;

		for (unsigned j = i + 1; j < r->n_cn; j++)
			last = last && strcmp(r->cn[j].node, r->cn[i].node) != 0;
		if (last && r->cn[i].rc != 0)
			dtxn_report_check(rep, "recovery_failed", false,
					  "%s: its last recovery, by %s, failed: %s (see the log)",
					  r->cn[i].node, r->cn[i].by, strerror(-r->cn[i].rc));
	}
}

int
app_report_finish(const struct app_conf *c, struct dtxn_bench *b, struct dtxn_db *db,
		  struct dtxn_bench_ctx *const *ctxs, unsigned n, bool invariants,
		  struct dtxn_report *rep)
{
	int rc = APP_EXIT_OK;

	if (invariants && b->ops->check(b, db, ctxs, n, rep) != 0)
		dtxn_report_check(rep, "invariant_check_ran", false,
				  "the check could not read MN memory");
	if (invariants)
		report_unfinished(db, rep);
	report_recoveries(rep);
	if (app_check_finish(c, rep) != 0) /* check.c: --check history, --history */
		rc = APP_EXIT_FAIL;
	dtxn_report_print(rep, stdout);
	if (c->out[0] != '\0') {
		int wrc = dtxn_report_write_json(rep, c->out);

		if (wrc != 0) {
			app_err("--out %s: %s", c->out, strerror(-wrc));
			rc = APP_EXIT_FAIL;
		}
	}
	if (!dtxn_report_ok(rep)) {
		app_err("an invariant does not hold (see the checks above)");
		rc = APP_EXIT_FAIL;
	}
	return rc;
}

void
app_release(struct dtxn_db *db, struct dtxn_fabric *f, struct dtxn_bench *b)
{
	if (db != NULL)
		dtxn_db_destroy(db);
	if (f != NULL)
		dtxn_fabric_close(f);
	if (b != NULL)
		dtxn_bench_free(b);
	app_check_fini();
}

int
app_addr_prewarm(const struct app_conf *c, struct dtxn_worker *w)
{
	uint64_t n = 0;
	int rc;

	if (!c->addr_prewarm)
		return APP_EXIT_OK;
	rc = dtxn_worker_addr_cache_prewarm(w, &n);
	if (rc == -ENOSPC) {
		app_err("--addr-prewarm: the loaded tables hold more records than their keys (max_keys): the shared address cache cannot hold them");
		return APP_EXIT_FAIL;
	}
	if (rc == -ENOMEM) {
		app_err("--addr-prewarm: no memory for the shared address cache (-m)");
		return APP_EXIT_FAIL;
	}
	if (rc != 0) {
		app_err("--addr-prewarm: cannot read the loaded tables in this process: %s",
			strerror(-rc));
		return APP_EXIT_USAGE;
	}
	return APP_EXIT_OK;
}
