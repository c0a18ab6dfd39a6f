/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The JSON report (jansson), schema in doc/guides/report.md, written
 * atomically: "<path>.tmp", flushed and synced, then renamed onto path.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include <rte_common.h>

#include "stats_private.h"

/*
 * Builders return NULL on allocation failure. json_object_set_new() and
 * json_array_append_new() take the reference even when they fail, so a
 * failed set only needs the error flag.
 */
struct json_ctx {
	bool oom;
};

static void
json_set(struct json_ctx *c, json_t *obj, const char *key, json_t *val)
{
	if (val == NULL || json_object_set_new(obj, key, val) != 0)
		c->oom = true;
}

static void
json_append(struct json_ctx *c, json_t *arr, json_t *val)
{
	if (val == NULL || json_array_append_new(arr, val) != 0)
		c->oom = true;
}

json_t *
stats_json_num(double v)
{
	return json_real(isfinite(v) ? v : 0.0);
}

_Static_assert(sizeof(json_int_t) == sizeof(int64_t), "jansson without 64-bit integers");

/* Counters above INT64_MAX (never reached in a run) saturate. */
json_t *
stats_json_u64(uint64_t v)
{
	return json_integer(v > (uint64_t)INT64_MAX ? (json_int_t)INT64_MAX : (json_int_t)v);
}

bool
stats_json_put(json_t *obj, const char *key, json_t *val)
{
	return val != NULL && json_object_set_new(obj, key, val) == 0;
}

static json_t *
json_latency(struct json_ctx *c, const struct dtxn_hist *h)
{
	json_t *o = json_object();

	if (o == NULL)
		return NULL;
	json_set(c, o, "p50", stats_json_num((double)dtxn_hist_percentile(h, 50.0) / 1e3));
	json_set(c, o, "p99", stats_json_num((double)dtxn_hist_percentile(h, 99.0) / 1e3));
	json_set(c, o, "p999", stats_json_num((double)dtxn_hist_percentile(h, 99.9) / 1e3));
	json_set(c, o, "mean", stats_json_num(dtxn_hist_mean(h) / 1e3));
	json_set(c, o, "min", stats_json_num((double)(h->count ? h->min : 0) / 1e3));
	json_set(c, o, "max", stats_json_num((double)h->max / 1e3));
	return o;
}

/*
 * The histogram itself, so several reports can be merged exactly (the
 * cluster report, usertools/dtxn-cluster): count, sum, min, max in ns and
 * the non-empty buckets as [largest value of the bucket in ns, count],
 * in increasing order (doc/guides/report.md, "latency_hist").
 */
static json_t *
json_hist(struct json_ctx *c, const struct dtxn_hist *h)
{
	json_t *o = json_object(), *b = json_array();

	if (o == NULL || b == NULL) {
		json_decref(o);
		json_decref(b);
		return NULL;
	}
	json_set(c, o, "count", stats_json_u64(h->count));
	json_set(c, o, "sum_ns", stats_json_u64(h->sum));
	json_set(c, o, "min_ns", stats_json_u64(h->count ? h->min : 0));
	json_set(c, o, "max_ns", stats_json_u64(h->max));
	for (unsigned i = 0; i < DTXN_HIST_BUCKETS; i++) {
		json_t *pair;

		if (h->b[i] == 0)
			continue;
		pair = json_pack("[Io]", (json_int_t)RTE_MIN(dtxn_hist_bucket_max(i), (uint64_t)INT64_MAX),
				 stats_json_u64(h->b[i]));
		json_append(c, b, pair);
	}
	json_set(c, o, "buckets", b);
	return o;
}

/* {reason_name: count} for named reasons with count > 0. */
static json_t *
json_aborts(struct json_ctx *c, const struct dtxn_report *r, const uint64_t *counts)
{
	json_t *o = json_object();

	if (o == NULL)
		return NULL;
	for (unsigned i = 0; i < DTXN_STATS_MAX_REASONS; i++) {
		const char *name = stats_reason_name(r, i);

		if (name != NULL && counts[i] != 0)
			json_set(c, o, name, stats_json_u64(counts[i]));
	}
	return o;
}

static json_t *
json_config(struct json_ctx *c, const struct dtxn_report *r)
{
	unsigned n = r->n_conf > DTXN_REPORT_MAX_CONF ? DTXN_REPORT_MAX_CONF : r->n_conf;
	json_t *o = json_object();

	if (o == NULL)
		return NULL;
	for (unsigned i = 0; i < n; i++)
		json_set(c, o, r->conf_key[i], json_string(r->conf_val[i]));
	return o;
}

/* A type's MN verbs (every attempt's) per commit of the type, by opcode, and their total. */
static json_t *
json_type_verbs(struct json_ctx *c, const struct dtxn_txn_stats *ts)
{
	json_t *o = json_object();
	uint64_t total = 0;
	char buf[16];

	if (o == NULL)
		return NULL;
	for (unsigned op = 0; op < STATS_N_VERBS; op++) {
		json_set(c, o, stats_op_name(op, buf, sizeof(buf)),
			 stats_json_num(stats_ratio((double)ts->verbs[op], (double)ts->commits)));
		total += ts->verbs[op];
	}
	json_set(c, o, "total", stats_json_num(stats_ratio((double)total, (double)ts->commits)));
	return o;
}

static json_t *
json_types(struct json_ctx *c, const struct dtxn_report *r, const struct stats_view *v)
{
	json_t *a = json_array();
	char buf[16];

	if (a == NULL)
		return NULL;
	for (unsigned t = 0; t < v->n_types; t++) {
		const struct dtxn_txn_stats *ts = &r->stats.type[t];
		uint64_t ab = stats_type_aborts(ts, DTXN_STATS_MAX_REASONS);
		json_t *o = json_object();

		json_append(c, a, o);
		if (o == NULL)
			continue;
		json_set(c, o, "name", json_string(stats_type_name(r, t, buf, sizeof(buf))));
		json_set(c, o, "committed", stats_json_u64(ts->commits));
		json_set(c, o, "attempted", stats_json_u64(ts->attempts));
		json_set(c, o, "rollbacks", stats_json_u64(ts->rollbacks));
		json_set(c, o, "abort_rate", stats_json_num(stats_ratio((double)ab, (double)ts->attempts)));
		json_set(c, o, "aborts", json_aborts(c, r, ts->aborts));
		json_set(c, o, "false_aborts", stats_json_u64(ts->false_aborts));
		json_set(c, o, "verbs_per_commit", json_type_verbs(c, ts));
		json_set(c, o, "bytes_per_commit",
			 stats_json_num(stats_ratio((double)ts->verb_bytes, (double)ts->commits)));
		json_set(c, o, "latency_us", json_latency(c, &ts->lat));
		json_set(c, o, "latency_hist", json_hist(c, &ts->lat));
	}
	return a;
}

static json_t *
json_verbs(struct json_ctx *c, const struct stats_view *v)
{
	json_t *o = json_object();
	char buf[16];

	if (o == NULL)
		return NULL;
	for (unsigned op = 0; op < STATS_N_VERBS; op++)
		json_set(c, o, stats_op_name(op, buf, sizeof(buf)), stats_json_num(v->verbs_per_txn[op]));
	json_set(c, o, "mn_atomics", stats_json_num(v->mn_atomics_per_txn));
	json_set(c, o, "total", stats_json_num(v->total_verbs_per_txn));
	return o;
}

static json_t *
json_fabric(struct json_ctx *c, const struct dtxn_report *r, const struct stats_view *v)
{
	json_t *a = json_array();
	char buf[16];

	if (a == NULL)
		return NULL;
	for (unsigned m = 0; m < v->n_mn; m++) {
		json_t *o = json_object(), *ops = json_object(), *bytes = json_object();

		json_append(c, a, o);
		if (o == NULL || ops == NULL || bytes == NULL) {
			json_decref(ops);
			json_decref(bytes);
			c->oom = true;
			continue;
		}
		json_set(c, o, "mn", json_integer(m));
		for (unsigned op = 0; op < DTXN_WR_OP_MAX; op++) {
			const char *name = stats_op_name(op, buf, sizeof(buf));

			json_set(c, ops, name, stats_json_u64(r->per_mn[m].ops[op]));
			json_set(c, bytes, name, stats_json_u64(r->per_mn[m].bytes[op]));
		}
		json_set(c, o, "ops", ops);
		json_set(c, o, "bytes", bytes);
	}
	return a;
}

static json_t *
json_checks(struct json_ctx *c, const struct dtxn_report *r)
{
	unsigned n = r->n_checks > DTXN_REPORT_MAX_CHECKS ? DTXN_REPORT_MAX_CHECKS : r->n_checks;
	json_t *a = json_array();

	if (a == NULL)
		return NULL;
	for (unsigned i = 0; i < n; i++) {
		json_t *o = json_object();

		json_append(c, a, o);
		if (o == NULL)
			continue;
		json_set(c, o, "name", json_string(r->checks[i].name));
		json_set(c, o, "ok", json_boolean(r->checks[i].ok));
		json_set(c, o, "detail", json_string(r->checks[i].detail));
	}
	return a;
}

/* "cn_messages": SENDs to peer CNs (lib/rpc), total, per committed txn,
 * and per peer CN that got any (by node id). */
static json_t *
json_cn_msgs(struct json_ctx *c, const struct dtxn_report *r, const struct stats_view *v)
{
	json_t *o = json_object(), *a = json_array();

	if (o == NULL || a == NULL) {
		json_decref(o);
		json_decref(a);
		return NULL;
	}
	json_set(c, o, "total", stats_json_u64(v->cn_msgs));
	json_set(c, o, "per_txn", stats_json_num(v->cn_msgs_per_txn));
	for (unsigned n = 0; n < DTXN_MAX_NODES; n++)
		if (r->cn_msgs[n] != 0)
			json_append(c, a, json_pack("{sIso}", "node", (json_int_t)n, "messages",
						    stats_json_u64(r->cn_msgs[n])));
	json_set(c, o, "per_peer", a);
	return o;
}

/* "method": what was measured and how (doc/guides/report.md, "Method"). */
static json_t *
json_method(struct json_ctx *c, const struct dtxn_report *r)
{
	json_t *o = json_object();

	if (o == NULL)
		return NULL;
	json_set(c, o, "warmup_seconds", stats_json_num(r->warmup_seconds));
	json_set(c, o, "seconds", stats_json_num(r->seconds));
	if (r->retry != NULL)
		json_set(c, o, "retry", json_string(r->retry));
	if (r->series != NULL)
		json_set(c, o, "interval_seconds", stats_json_num(r->series->interval_s));
	return o;
}

/* "intervals": the throughput series, warm-up intervals included and marked. */
static json_t *
json_intervals(struct json_ctx *c, const struct dtxn_series *s)
{
	json_t *a = json_array();

	if (a == NULL || s == NULL)
		return a;
	for (unsigned i = 0; i < s->n; i++) {
		const struct dtxn_interval *e = &s->v[i];
		json_t *o = json_object();

		json_append(c, a, o);
		if (o == NULL)
			continue;
		json_set(c, o, "t", stats_json_num(e->t_s));
		json_set(c, o, "seconds", stats_json_num(e->seconds));
		json_set(c, o, "committed", stats_json_u64(e->commits));
		json_set(c, o, "committed_tps", stats_json_num(stats_ratio((double)e->commits, e->seconds)));
		json_set(c, o, "attempted", stats_json_u64(e->attempts));
		json_set(c, o, "aborts", stats_json_u64(e->aborts));
		json_set(c, o, "warmup", json_boolean(e->warmup));
	}
	return a;
}

json_t *
stats_json_intervals(const struct dtxn_series *s)
{
	struct json_ctx c = { .oom = false };
	json_t *a = json_intervals(&c, s);

	if (c.oom) {
		json_decref(a);
		return NULL;
	}
	return a;
}

/* The whole document; NULL on allocation failure. */
static json_t *
json_report(const struct dtxn_report *r)
{
	struct json_ctx c = { .oom = false };
	struct stats_view *v = malloc(sizeof(*v));
	json_t *root = json_object(), *waits;

	if (v == NULL || root == NULL)
		goto fail;
	stats_view_build(r, v);
	json_set(&c, root, "dtxn_version", json_string(DTXN_VERSION));
	json_set(&c, root, "config", json_config(&c, r));
	json_set(&c, root, "seconds", stats_json_num(r->seconds));
	json_set(&c, root, "committed", stats_json_u64(v->commits));
	json_set(&c, root, "attempted", stats_json_u64(v->attempts));
	json_set(&c, root, "rollbacks", stats_json_u64(v->rollbacks));
	json_set(&c, root, "committed_tps", stats_json_num(v->committed_tps));
	json_set(&c, root, "attempted_tps", stats_json_num(v->attempted_tps));
	json_set(&c, root, "abort_rate", stats_json_num(v->abort_rate));
	json_set(&c, root, "aborts", json_aborts(&c, r, v->reason));
	json_set(&c, root, "false_aborts", stats_json_u64(v->false_aborts));
	json_set(&c, root, "false_abort_share", stats_json_num(v->false_share));
	json_set(&c, root, "latency_us", json_latency(&c, &v->lat));
	json_set(&c, root, "latency_hist", json_hist(&c, &v->lat));
	waits = stats_json_waits(r); /* NULL: no section (or out of memory) */
	if (waits != NULL)
		json_set(&c, root, "waits", waits);
	json_set(&c, root, "types", json_types(&c, r, v));
	json_set(&c, root, "verbs_per_txn", json_verbs(&c, v));
	json_set(&c, root, "bytes_per_txn", stats_json_num(v->bytes_per_txn));
	json_set(&c, root, "fabric", json_fabric(&c, r, v));
	if (r->driver != NULL)
		json_set(&c, root, "fabric_driver", stats_json_driver(r));
	json_set(&c, root, "cn_messages", json_cn_msgs(&c, r, v));
	json_set(&c, root, "method", json_method(&c, r));
	if (r->series != NULL)
		json_set(&c, root, "intervals", json_intervals(&c, r->series));
	if (r->has_mem)
		json_set(&c, root, "memory", stats_json_mem(r));
	json_set(&c, root, "checks", json_checks(&c, r));
	json_set(&c, root, "ok", json_boolean(dtxn_report_ok(r)));
	if (r->sim != NULL)
		json_set(&c, root, "sim", stats_json_sim(r));
	if (r->recovery != NULL)
		json_set(&c, root, "recovery", stats_json_recovery(r));
	if (r->host != NULL) /* last: the only wall-clock part (report_sim.c) */
		json_set(&c, root, "host", stats_json_host(r));
	if (c.oom)
		goto fail;
	free(v);
	return root;
fail:
	json_decref(root);
	free(v);
	return NULL;
}

int
dtxn_report_write_json(const struct dtxn_report *r, const char *path)
{
	char tmp[PATH_MAX];
	json_t *doc = NULL;
	FILE *f = NULL;
	int rc;

	if (r == NULL || path == NULL || path[0] == '\0')
		return -EINVAL;
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= sizeof(tmp))
		return -ENAMETOOLONG;
	doc = json_report(r);
	if (doc == NULL)
		return -ENOMEM;

	f = fopen(tmp, "w");
	if (f == NULL) {
		rc = -errno;
		goto fail;
	}
	errno = 0;
	if (json_dumpf(doc, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12)) != 0 ||
	    fputc('\n', f) == EOF || fflush(f) != 0 || fsync(fileno(f)) != 0) {
		rc = errno != 0 ? -errno : -EIO;
		goto fail_unlink;
	}
	rc = fclose(f);
	f = NULL;
	if (rc != 0) {
		rc = -errno;
		goto fail_unlink;
	}
	if (rename(tmp, path) != 0) {
		rc = -errno;
		goto fail_unlink;
	}
	json_decref(doc);
	return 0;

fail_unlink:
	if (f != NULL)
		fclose(f);
	unlink(tmp);
fail:
	STATS_LOG(ERR, "cannot write JSON report %s: %s", path, strerror(-rc));
	json_decref(doc);
	return rc;
}
