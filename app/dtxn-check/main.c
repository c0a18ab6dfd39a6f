/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dtxn-check [--level sr|si] [--quiet] FILE...
 *
 * Reads a history saved by `dtxn-app --history FILE` (or written by hand;
 * format in doc/guides/checker.md) and checks it for the anomalies the
 * isolation level forbids (the level the run used, from the file, unless
 * --level says otherwise). Prints the checker's report. Several files (one
 * per CN process of a cluster, doc/guides/cluster.md) are checked as one
 * history; they must come from one run (same isolation, protocol, bench
 * and seed in their metadata). A streamed file cut short by its writer's
 * death is read up to its last whole line, with a note.
 *
 * Exit status: 0 no forbidden anomaly; 1 anomalies found; 2 bad input
 * (arguments, unreadable or malformed file), with one line on stderr.
 * Needs no EAL: the history and the checker live in the process heap.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_common.h>
#include <rte_errno.h>

#include "dtxn_check.h"

#define EXIT_ANOMALY 1
#define EXIT_USAGE 2

/* Metadata every file of one history must agree on. */
static const char *const g_same_meta[] = { "isolation", "protocol", "bench", "seed" };

static void
usage(FILE *out)
{
	fprintf(out, "usage: dtxn-check [--level sr|si] [--quiet] HISTORY_FILE...\n"
		     "  several files (one per CN) are checked as one history\n"
		     "  --level sr|si  isolation level to check (default: the run's, from the file)\n"
		     "  --quiet        print only the result line\n"
		     "exit status: 0 no anomaly the level forbids, 1 anomalies, 2 bad input\n");
}

static double
seconds_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts); /* an offline tool: not protocol code */
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * Loads every file and merges them into the first one's history. @return
 * the history, or NULL after one line (unreadable or malformed file, or
 * files of different runs).
 */
static struct dtxn_history *
load_all(const char **paths, unsigned n)
{
	struct dtxn_history *h = NULL;
	char err[256];

	for (unsigned i = 0; i < n; i++) {
		struct dtxn_history *x = dtxn_history_load(paths[i], err, sizeof(err));

		if (x == NULL) {
			fprintf(stderr, "dtxn-check: %s\n", err[0] ? err : strerror(rte_errno));
			goto fail;
		}
		fputs(dtxn_history_note(x), stderr);
		for (unsigned k = 0; h != NULL && k < RTE_DIM(g_same_meta); k++) {
			const char *a = dtxn_history_meta(h, g_same_meta[k]);
			const char *b = dtxn_history_meta(x, g_same_meta[k]);

			if (a != NULL && b != NULL && strcmp(a, b) != 0) {
				fprintf(stderr, "dtxn-check: %s: %s %s, but %s has %s: not one run\n",
					paths[i], g_same_meta[k], b, paths[0], a);
				dtxn_history_free(x);
				goto fail;
			}
		}
		if (h == NULL) {
			h = x;
			continue;
		}
		if (dtxn_history_merge(h, x) != 0) {
			fprintf(stderr, "dtxn-check: out of memory\n");
			dtxn_history_free(x);
			goto fail;
		}
		dtxn_history_free(x);
	}
	return h;
fail:
	dtxn_history_free(h);
	return NULL;
}

int
main(int argc, char **argv)
{
	const char *path = NULL, *level_name = NULL, **paths;
	unsigned n_paths = 0;
	struct dtxn_check_report *r;
	struct dtxn_history *h;
	bool quiet = false;
	double t0, t1, t2;
	int level, rc;

	paths = calloc((size_t)argc, sizeof(*paths));
	if (paths == NULL) {
		fprintf(stderr, "dtxn-check: out of memory\n");
		return EXIT_USAGE;
	}
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			usage(stdout);
			return 0;
		} else if (strcmp(argv[i], "--quiet") == 0) {
			quiet = true;
		} else if (strcmp(argv[i], "--level") == 0 || strncmp(argv[i], "--level=", 8) == 0) {
			if (argv[i][7] == '=')
				level_name = argv[i] + 8;
			else if (i + 1 < argc)
				level_name = argv[++i];
			else {
				fprintf(stderr, "dtxn-check: --level: missing value (sr, si)\n");
				return EXIT_USAGE;
			}
		} else if (argv[i][0] == '-' && argv[i][1] != '\0') {
			fprintf(stderr, "dtxn-check: unknown option '%s' (see --help)\n", argv[i]);
			return EXIT_USAGE;
		} else {
			paths[n_paths++] = argv[i];
		}
	}
	if (n_paths == 0) {
		fprintf(stderr, "dtxn-check: no history file (usage: dtxn-check [--level sr|si] FILE...)\n");
		return EXIT_USAGE;
	}
	path = paths[0];
	if (level_name != NULL && dtxn_check_level_parse(level_name) < 0) {
		fprintf(stderr, "dtxn-check: --level: unknown level '%s' (sr, si)\n", level_name);
		return EXIT_USAGE;
	}
	t0 = seconds_now();
	h = load_all(paths, n_paths);
	free(paths);
	if (h == NULL)
		return EXIT_USAGE;
	if (level_name == NULL) {
		level_name = dtxn_history_meta(h, "isolation");
		if (level_name == NULL)
			level_name = "sr";
		if (dtxn_check_level_parse(level_name) < 0) {
			fprintf(stderr, "dtxn-check: %s: unknown isolation '%s' in the file (use --level)\n",
				path, level_name);
			dtxn_history_free(h);
			return EXIT_USAGE;
		}
	}
	level = dtxn_check_level_parse(level_name);
	r = calloc(1, sizeof(*r));
	if (r == NULL) {
		fprintf(stderr, "dtxn-check: out of memory\n");
		dtxn_history_free(h);
		return EXIT_USAGE;
	}
	t1 = seconds_now();
	rc = dtxn_check_run(h, (enum dtxn_check_level)level, r);
	t2 = seconds_now();
	if (rc != 0) {
		fprintf(stderr, "dtxn-check: %s: %s\n", path,
			rc == -EINVAL && r->error[0] ? r->error : strerror(-rc));
		free(r);
		dtxn_history_free(h);
		return EXIT_USAGE;
	}
	if (!quiet) {
		const char *p = dtxn_history_meta(h, "protocol");
		const char *b = dtxn_history_meta(h, "bench");

		printf("dtxn-check: %s%s: %llu txns%s%s%s%s\n", path, n_paths > 1 ? " and more" : "",
		       (unsigned long long)dtxn_history_txns(h), p ? ", protocol " : "", p ? p : "",
		       b ? ", bench " : "", b ? b : "");
		if (n_paths > 1)
			printf("dtxn-check: %u files checked as one history\n", n_paths);
		dtxn_check_print(r, stdout);
		printf("read in %.3f s, checked in %.3f s\n", t1 - t0, t2 - t1);
	} else {
		printf("result: %s\n", dtxn_check_ok(r) ? "PASS" : "FAIL");
	}
	rc = dtxn_check_ok(r) ? 0 : EXIT_ANOMALY;
	free(r);
	dtxn_history_free(h);
	return rc;
}
