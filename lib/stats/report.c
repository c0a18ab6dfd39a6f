/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Report building (configuration entries, invariant results), the live
 * line and the human summary. How to read the summary:
 * doc/guides/report.md.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "stats_private.h"

void
dtxn_report_conf(struct dtxn_report *r, const char *key, const char *fmt, ...)
{
	va_list ap;

	if (r->n_conf >= DTXN_REPORT_MAX_CONF) {
		STATS_LOG(WARNING, "report: configuration full, '%s' dropped", key);
		return;
	}
	snprintf(r->conf_key[r->n_conf], sizeof(r->conf_key[0]), "%s", key);
	va_start(ap, fmt);
	vsnprintf(r->conf_val[r->n_conf], sizeof(r->conf_val[0]), fmt, ap);
	va_end(ap);
	r->n_conf++;
}

void
dtxn_report_check(struct dtxn_report *r, const char *name, bool ok,
		  const char *fmt, ...)
{
	struct dtxn_check_result *c;
	va_list ap;

	if (r->n_checks < DTXN_REPORT_MAX_CHECKS) {
		c = &r->checks[r->n_checks++];
	} else {
		/*
		 * A failure must still fail the run: it takes the last slot
		 * unless that one already holds a failure.
		 */
		c = &r->checks[DTXN_REPORT_MAX_CHECKS - 1];
		if (ok || !c->ok) {
			STATS_LOG(WARNING, "report: check table full, '%s' dropped", name);
			return;
		}
		STATS_LOG(WARNING, "report: check table full, failed '%s' replaces '%s'",
			  name, c->name);
	}
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->ok = ok;
	va_start(ap, fmt);
	vsnprintf(c->detail, sizeof(c->detail), fmt, ap);
	va_end(ap);
}

bool
dtxn_report_ok(const struct dtxn_report *r)
{
	unsigned n = r->n_checks > DTXN_REPORT_MAX_CHECKS ? DTXN_REPORT_MAX_CHECKS : r->n_checks;

	for (unsigned i = 0; i < n; i++)
		if (!r->checks[i].ok)
			return false;
	return true;
}

/* "412.3k": a rate in at most 7 characters. */
static const char *
report_si(double v, char *buf, size_t len)
{
	if (v >= 1e9)
		snprintf(buf, len, "%.1fG", v / 1e9);
	else if (v >= 1e6)
		snprintf(buf, len, "%.1fM", v / 1e6);
	else if (v >= 1e3)
		snprintf(buf, len, "%.1fk", v / 1e3);
	else
		snprintf(buf, len, "%.1f", v);
	return buf;
}

static double
report_us(uint64_t ns)
{
	return (double)ns / 1e3;
}

void
dtxn_report_live(FILE *out, double elapsed_s, double interval_s,
		 uint64_t d_commits, uint64_t d_attempts, uint64_t d_aborts,
		 const struct dtxn_hist *interval_lat)
{
	char rate[32];
	uint64_t p50 = 0, p99 = 0;

	if (interval_lat != NULL) {
		p50 = dtxn_hist_percentile(interval_lat, 50.0);
		p99 = dtxn_hist_percentile(interval_lat, 99.0);
	}
	fprintf(out, "[%6.1fs] %7s txn/s  abort %5.2f%%  p50 %.1fus  p99 %.1fus\n",
		elapsed_s, report_si(stats_ratio((double)d_commits, interval_s), rate, sizeof(rate)),
		100.0 * stats_ratio((double)d_aborts, (double)d_attempts),
		report_us(p50), report_us(p99));
	fflush(out);
}

static void
report_print_conf(const struct dtxn_report *r, FILE *out)
{
	unsigned n = r->n_conf > DTXN_REPORT_MAX_CONF ? DTXN_REPORT_MAX_CONF : r->n_conf;

	fprintf(out, "configuration\n");
	for (unsigned i = 0; i < n; i++)
		fprintf(out, "  %-22s %s\n", r->conf_key[i], r->conf_val[i]);
}

static void
report_print_totals(const struct dtxn_report *r, const struct stats_view *v, FILE *out)
{
	fprintf(out, "totals\n");
	fprintf(out, "  %-22s %.3f\n", "seconds", r->seconds);
	fprintf(out, "  %-22s %" PRIu64 "\n", "committed", v->commits);
	fprintf(out, "  %-22s %" PRIu64 "\n", "attempted", v->attempts);
	fprintf(out, "  %-22s %.1f\n", "committed txn/s", v->committed_tps);
	fprintf(out, "  %-22s %.1f\n", "attempted txn/s", v->attempted_tps);
	fprintf(out, "  %-22s %.2f%% (%" PRIu64 " concurrency aborts)\n", "abort rate",
		100.0 * v->abort_rate, v->aborts);
	fprintf(out, "  %-22s %.2f%% of aborts (%" PRIu64 ")\n", "false aborts",
		100.0 * v->false_share, v->false_aborts);
	fprintf(out, "  %-22s %" PRIu64 "\n", "rollbacks", v->rollbacks);
}

static void
report_print_reasons(const struct dtxn_report *r, const struct stats_view *v, FILE *out)
{
	unsigned shown = 0;

	fprintf(out, "aborts by reason (%% of attempts)\n");
	for (unsigned i = 0; i < v->n_reasons; i++) {
		const char *name = stats_reason_name(r, i);

		if (name == NULL || v->reason[i] == 0)
			continue;
		fprintf(out, "  %-22s %12" PRIu64 "  %6.2f%%\n", name, v->reason[i],
			100.0 * stats_ratio((double)v->reason[i], (double)v->attempts));
		shown++;
	}
	if (shown == 0)
		fprintf(out, "  (none)\n");
}

static void
report_print_latency(const struct stats_view *v, FILE *out)
{
	fprintf(out, "latency, us (first attempt to commit, committed txns)\n");
	fprintf(out, "  p50 %.1f  p99 %.1f  p999 %.1f  mean %.1f\n",
		report_us(dtxn_hist_percentile(&v->lat, 50.0)),
		report_us(dtxn_hist_percentile(&v->lat, 99.0)),
		report_us(dtxn_hist_percentile(&v->lat, 99.9)),
		dtxn_hist_mean(&v->lat) / 1e3);
}

static void
report_print_types(const struct dtxn_report *r, const struct stats_view *v, FILE *out)
{
	char buf[16];

	fprintf(out, "per transaction type (verbs, bytes: MN verbs of all its attempts per commit)\n");
	fprintf(out, "  %-18s %12s %10s %10s %7s %9s %9s %9s %8s %9s\n", "type", "committed",
		"aborts", "rollbacks", "abort%", "p50us", "p99us", "p999us", "verbs", "bytes");
	for (unsigned t = 0; t < v->n_types; t++) {
		const struct dtxn_txn_stats *ts = &r->stats.type[t];
		uint64_t ab = stats_type_aborts(ts, DTXN_STATS_MAX_REASONS), verbs = 0;

		for (unsigned op = 0; op < STATS_N_VERBS; op++)
			verbs += ts->verbs[op];
		fprintf(out, "  %-18s %12" PRIu64 " %10" PRIu64 " %10" PRIu64
			" %6.2f%% %9.1f %9.1f %9.1f %8.2f %9.1f\n",
			stats_type_name(r, t, buf, sizeof(buf)), ts->commits, ab, ts->rollbacks,
			100.0 * stats_ratio((double)ab, (double)ts->attempts),
			report_us(dtxn_hist_percentile(&ts->lat, 50.0)),
			report_us(dtxn_hist_percentile(&ts->lat, 99.0)),
			report_us(dtxn_hist_percentile(&ts->lat, 99.9)),
			stats_ratio((double)verbs, (double)ts->commits),
			stats_ratio((double)ts->verb_bytes, (double)ts->commits));
	}
}

static void
report_print_fabric(const struct dtxn_report *r, const struct stats_view *v, FILE *out)
{
	char buf[16];

	fprintf(out, "fabric verbs per committed txn\n ");
	for (unsigned op = 0; op < STATS_N_VERBS; op++)
		fprintf(out, " %s %.2f", stats_op_name(op, buf, sizeof(buf)), v->verbs_per_txn[op]);
	fprintf(out, "  total %.2f\n", v->total_verbs_per_txn);
	fprintf(out, "  %-34s %.2f\n", "MN atomics (cas+faa+masked_cas)", v->mn_atomics_per_txn);
	fprintf(out, "  %-34s %.1f\n", "bytes per committed txn", v->bytes_per_txn);
	fprintf(out, "  %-34s %.2f\n", "CN-to-CN messages per committed txn", v->cn_msgs_per_txn);

	fprintf(out, "fabric ops per MN\n  %4s", "mn");
	for (unsigned op = 0; op < STATS_N_VERBS; op++)
		fprintf(out, " %12s", stats_op_name(op, buf, sizeof(buf)));
	fprintf(out, " %14s\n", "bytes");
	for (unsigned m = 0; m < v->n_mn; m++) {
		uint64_t bytes = 0;

		fprintf(out, "  %4u", m);
		for (unsigned op = 0; op < STATS_N_VERBS; op++) {
			fprintf(out, " %12" PRIu64, r->per_mn[m].ops[op]);
			bytes += r->per_mn[m].bytes[op];
		}
		fprintf(out, " %14" PRIu64 "\n", bytes);
	}
}

/* Warm-up, retry rule and the interval series, compactly. */
static void
report_print_method(const struct dtxn_report *r, FILE *out)
{
	const struct dtxn_series *s = r->series;

	fprintf(out, "method\n");
	fprintf(out, "  %-22s %.3f s (not counted)\n", "warm-up", r->warmup_seconds);
	if (r->retry != NULL)
		fprintf(out, "  %-22s %s\n", "after an abort", strcmp(r->retry, "fresh") == 0 ?
			"fresh (a new transaction is drawn)" : "same (the same inputs are retried)");
	if (s == NULL || s->n == 0)
		return;
	fprintf(out, "  committed txn/s per %.3g s interval (* = warm-up)\n ", s->interval_s);
	for (unsigned i = 0; i < s->n; i++) {
		char rate[32];

		fprintf(out, " %s%s", report_si(stats_ratio((double)s->v[i].commits, s->v[i].seconds),
						rate, sizeof(rate)),
			s->v[i].warmup ? "*" : "");
		if (i % 10 == 9 && i + 1 < s->n)
			fprintf(out, "\n ");
	}
	fprintf(out, "\n");
}

static void
report_print_checks(const struct dtxn_report *r, FILE *out)
{
	unsigned n = r->n_checks > DTXN_REPORT_MAX_CHECKS ? DTXN_REPORT_MAX_CHECKS : r->n_checks;
	unsigned failed = 0;

	fprintf(out, "invariants\n");
	for (unsigned i = 0; i < n; i++) {
		const struct dtxn_check_result *c = &r->checks[i];

		fprintf(out, "  %s %s%s%s\n", c->ok ? "PASS" : "FAIL", c->name,
			c->detail[0] != '\0' ? ": " : "", c->detail);
		failed += !c->ok;
	}
	if (n == 0)
		fprintf(out, "  (none checked)\n");
	if (failed == 0)
		fprintf(out, "result: PASS (%u checks)\n", n);
	else
		fprintf(out, "result: FAIL (%u of %u checks failed)\n", failed, n);
}

void
dtxn_report_print(const struct dtxn_report *r, FILE *out)
{
	struct stats_view v;

	stats_view_build(r, &v);
	fprintf(out, "== dtxn %s summary ==\n", DTXN_VERSION);
	report_print_conf(r, out);
	report_print_totals(r, &v, out);
	report_print_reasons(r, &v, out);
	report_print_latency(&v, out);
	stats_print_waits(r, out);
	report_print_types(r, &v, out);
	report_print_fabric(r, &v, out);
	stats_print_driver(r, out);
	report_print_method(r, out);
	stats_print_mem(r, out);
	stats_print_sim(r, out);
	stats_print_recovery(r, out);
	report_print_checks(r, out);
	fflush(out);
}
