/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --check history, --history FILE and --debug-weaken (issue 5;
 * doc/guides/checker.md): one history buffer per coordinator (attached
 * before the run), gathered after it into one history that is saved for
 * dtxn-check and/or checked, with one report line per anomaly class the
 * run's isolation level forbids; any anomaly fails the run (exit 1).
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>

#include "dtxn_check.h"
#include "dtxn_sched.h"
#include "dtxn_stats.h"
#include "dtxn_txn_driver.h"
#include "app.h"

/** History bytes all coordinators together may use (process heap). */
#define APP_HISTORY_TOTAL_BYTES (UINT64_C(4) << 30)

/** The run's history; buffers join it as coordinators are created. */
static struct dtxn_history *g_history;
/** --role cn --history FILE: the file, appended as the run goes (survives a kill). */
static struct dtxn_hist_stream *g_stream;

static bool
check_on(const struct app_conf *c)
{
	return strcmp(c->check, "history") == 0;
}

/* --check history or --history FILE: record. */
static bool
record_on(const struct app_conf *c)
{
	return check_on(c) || c->history[0] != '\0';
}

/* --debug-weaken: a known mode the protocol implements at its isolation level. */
static int
weaken_validate(const struct app_conf *c)
{
	int iso = dtxn_isolation_parse(c->isolation);
	char names[128];
	uint32_t flag;

	if (dtxn_debug_weaken_parse(c->debug_weaken, &flag) != 0) {
		dtxn_debug_weaken_list(names, sizeof(names));
		app_err("--debug-weaken: unknown mode '%s' (none, %s)", c->debug_weaken, names);
		return -1;
	}
	if (flag == 0 || iso < 0)
		return 0; /* a bad --isolation is refused before (config.c) */
	if (dtxn_cc_weaken_supported(c->protocol, (enum dtxn_isolation)iso, flag, names,
				     sizeof(names)) != 1) {
		app_err("--debug-weaken %s: protocol %s does not implement it at isolation %s "
			"(it implements: %s)", c->debug_weaken, c->protocol, c->isolation,
			names[0] ? names : "none");
		return -1;
	}
	return 0;
}

int
app_check_validate(const struct app_conf *c)
{
	if (c->check[0] != '\0' && strcmp(c->check, "none") != 0 && !check_on(c)) {
		app_err("--check: unknown value '%s' (none, history)", c->check);
		return -1;
	}
	if (weaken_validate(c) != 0)
		return -1;
	return 0;
}

uint32_t
app_check_debug_flags(const struct app_conf *c)
{
	uint32_t flag = 0;

	return dtxn_debug_weaken_parse(c->debug_weaken, &flag) == 0 ? flag : 0;
}

static void
set_meta(const struct app_conf *c)
{
	char seed[32];

	snprintf(seed, sizeof(seed), "%" PRIu64, c->seed);
	(void)dtxn_history_set_meta(g_history, "isolation", c->isolation);
	(void)dtxn_history_set_meta(g_history, "protocol", c->protocol);
	(void)dtxn_history_set_meta(g_history, "bench", c->bench);
	(void)dtxn_history_set_meta(g_history, "fabric", c->fabric);
	(void)dtxn_history_set_meta(g_history, "seed", seed);
	(void)dtxn_history_set_meta(g_history, "debug_weaken",
				    c->debug_weaken[0] ? c->debug_weaken : "none");
	if (c->node[0] != '\0')
		(void)dtxn_history_set_meta(g_history, "node", c->node);
}

/* --role cn --history FILE: each txn's line goes to FILE as it ends, so
 * the history of a CN killed mid-run is on disk up to its last txn
 * (doc/guides/cluster.md); --check history keeps it in memory too. */
static int
stream_open(const struct app_conf *c)
{
	set_meta(c);
	g_stream = dtxn_hist_stream_open(c->history, g_history);
	if (g_stream == NULL) {
		app_err("--history %s: %s", c->history, strerror(rte_errno));
		return -rte_errno;
	}
	return 0;
}


int
app_check_attach(const struct app_conf *c, struct dtxn_coord *coord, unsigned n_coords)
{
	struct dtxn_hist_buf *b;
	int rc;

	if (!record_on(c))
		return 0;
	if (g_history == NULL) {
		g_history = dtxn_history_create();
		if (g_history == NULL)
			return -ENOMEM;
		if (strcmp(c->role, "cn") == 0 && c->history[0] != '\0' && stream_open(c) != 0)
			return -EIO;
	}
	b = dtxn_hist_buf_create(dtxn_coord_gid(coord),
				 APP_HISTORY_TOTAL_BYTES / (n_coords ? n_coords : 1));
	if (b == NULL)
		return -rte_errno;
	rc = dtxn_history_add_buf(g_history, b);
	if (rc != 0) {
		dtxn_hist_buf_free(b);
		return rc;
	}
	/* the stream's lane: the coordinator's worker lcore (one thread) */
	if (g_stream != NULL &&
	    dtxn_hist_buf_stream(b, g_stream, check_on(c), coord->worker->index) != 0) {
		app_err("--history %s: worker %u: more workers than the stream has lanes (%u)",
			c->history, coord->worker->index, DTXN_HIST_STREAM_LANES);
		return -EINVAL;
	}
	return dtxn_coord_history_attach(coord, b);
}

/* Runs the checker; one report line per class the level forbids. */
static int
run_check(const struct app_conf *c, struct dtxn_report *rep)
{
	struct dtxn_check_report *cr = calloc(1, sizeof(*cr));
	int level = dtxn_check_level_parse(c->isolation);
	uint64_t t0 = dtxn_now_ns(), dropped;
	char detail[256], name[48];
	int rc;

	if (cr == NULL || level < 0) {
		free(cr);
		app_err("--check history: %s", cr == NULL ? "out of memory" : "unknown isolation");
		return -1;
	}
	/* --role cn: this CN's history is one part of the cluster's; its peers'
	 * txns are in their files (checked as one by dtxn-check: cluster.md),
	 * so reads of their versions and of absent keys stay unresolved here */
	if (strcmp(c->role, "cn") == 0)
		dtxn_history_set_partial(g_history);
	rc = dtxn_check_run(g_history, (enum dtxn_check_level)level, cr);
	if (rc != 0) {
		app_err("--check history: the checker failed: %s%s%s", strerror(-rc),
			cr->error[0] ? ": " : "", cr->error);
		free(cr);
		return -1;
	}
	dtxn_check_print(cr, stdout);
	printf("history checked in %.3f s\n", (double)(dtxn_now_ns() - t0) / 1e9);
	dropped = dtxn_history_dropped(g_history);
	if (dropped != 0)
		dtxn_report_check(rep, "history_complete", false,
				  "%" PRIu64 " txns not recorded (history buffers full); shorten the run",
				  dropped);
	for (unsigned a = 0; a < DTXN_ANOM_MAX; a++) {
		if (!dtxn_anomaly_forbidden(cr->level, (enum dtxn_anomaly)a))
			continue;
		dtxn_check_describe(cr, (enum dtxn_anomaly)a, detail, sizeof(detail));
		snprintf(name, sizeof(name), "history_%s", dtxn_anomaly_name((enum dtxn_anomaly)a));
		dtxn_report_check(rep, name, cr->anom[a].count == 0, "%s", detail);
	}
	free(cr);
	return 0;
}

int
app_check_finish(const struct app_conf *c, struct dtxn_report *rep)
{
	int rc = 0;

	if (!record_on(c))
		return 0;
	dtxn_report_conf(rep, "check", "%s", check_on(c) ? "history" : "none");
	if (app_check_debug_flags(c) != 0)
		dtxn_report_conf(rep, "debug_weaken", "%s", c->debug_weaken);
	if (g_history == NULL) {
		app_err("--check history: no coordinator recorded a history");
		return -1;
	}
	set_meta(c);
	if (g_stream != NULL) {
		struct dtxn_hist_stream_stats st;
		int src = dtxn_hist_stream_flush(g_stream);

		dtxn_hist_stream_stats(g_stream, &st);
		if (src == 0)
			src = dtxn_hist_stream_close(g_stream, dtxn_history_dropped(g_history));
		else
			(void)dtxn_hist_stream_close(g_stream, dtxn_history_dropped(g_history));
		g_stream = NULL;
		if (src != 0) {
			app_err("--history %s: %s", c->history, strerror(-src));
			rc = -1;
		} else {
			/* the workers' side (copy and handoff, waits for a free
			 * buffer included) and the writer thread's write(2)s */
			printf("history: %" PRIu64 " txns streamed to %s (slowest write %.1f ms, "
			       "on the writer thread; the workers' slowest handoff %.3f ms, "
			       "%" PRIu64 " waits for a free buffer, %.1f ms)\n",
			       st.txns, c->history, (double)st.write_max_ns / 1e6,
			       (double)st.handoff_max_ns / 1e6, st.waits, (double)st.wait_ns / 1e6);
		}
	} else if (c->history[0] != '\0') {
		int src = dtxn_history_save(g_history, c->history);

		if (src != 0) {
			app_err("--history %s: %s", c->history, strerror(-src));
			rc = -1;
		} else {
			printf("history: %" PRIu64 " txns saved to %s\n",
			       dtxn_history_txns(g_history), c->history);
		}
	}
	if (check_on(c) && run_check(c, rep) != 0)
		rc = -1;
	return rc;
}

void
app_check_cut(void)
{
	(void)dtxn_hist_stream_flush(g_stream); /* a write error: the file is cut short anyway */
}

void
app_check_fini(void)
{
	(void)dtxn_hist_stream_close(g_stream, dtxn_history_dropped(g_history)); /* a failed run: end it */
	g_stream = NULL;
	dtxn_history_free(g_history);
	g_history = NULL;
}
