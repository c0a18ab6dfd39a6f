/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dtxn-app's own arguments: --name VALUE or --name=VALUE, after the EAL's
 * "--". Names with dashes on the command line map to the INI keys with
 * underscores (--write-ratio <-> write_ratio). --config is read first, so
 * the command line overrides the INI whatever the order.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtxn_bench.h"
#include "dtxn_fabric_driver.h"
#include "dtxn_txn.h"
#include "app.h"

void
app_err(const char *fmt, ...)
{
	va_list ap;

	char lib[256];

	fputs("dtxn-app: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (app_log_take_last(lib, sizeof(lib)) > 0)
		fprintf(stderr, " (%s)", lib);
	fputc('\n', stderr);
}

void
app_conf_defaults(struct app_conf *c)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->role, sizeof(c->role), "all");
	c->connect_timeout_s = 10.0;
	snprintf(c->bench, sizeof(c->bench), "smallbank");
	snprintf(c->protocol, sizeof(c->protocol), "ford");
	snprintf(c->isolation, sizeof(c->isolation), "sr");
	snprintf(c->fabric, sizeof(c->fabric), "shm");
	snprintf(c->nic, sizeof(c->nic), "none");
	c->mn = 3;
	c->replicas = 3;
	c->coroutines = 8;
	c->duration_s = 5.0;
	c->txns = 0;
	c->seed = 1;
	c->log_kib = 64;
	c->aux_chunk = DTXN_AUX_CHUNK_DEFAULT;
	c->addr_cache = 1u << 20;
	c->live = true;
	snprintf(c->retry, sizeof(c->retry), "same");
	snprintf(c->cpu, sizeof(c->cpu), "default");
	c->cn = 1;
	c->threads = 1;
	c->lease_ms = 10.0;
}

enum app_opt_kind { OPT_STR, OPT_U64, OPT_DOUBLE, OPT_BOOL };

/** One application option: its canonical name, where it goes, its range. */
struct app_opt {
	const char *name;
	enum app_opt_kind kind;
	size_t offset;
	size_t size;        /* OPT_STR: buffer size */
	double min, max;
	const char *arg;    /* for the usage text */
	const char *help;
	const char *names;  /* optional: app_names() listed after help, e.g. the registered protocols */
};

#define S(f) offsetof(struct app_conf, f), sizeof(((struct app_conf *)0)->f)
#define N(f) offsetof(struct app_conf, f), 0

static const struct app_opt g_opts[] = {
	{ "role", OPT_STR, S(role), 0, 0, "all|mn|cn", "node role: all (default: MNs and CNs in this process), mn or cn (one node per process, with --node and --cluster; doc/guides/cluster.md)" },
	{ "node", OPT_STR, S(node), 0, 0, "NAME", "--role mn|cn: the node this process serves, mnI or cnJ, named in the --cluster file's [nodes]" },
	{ "connect_timeout", OPT_DOUBLE, N(connect_timeout_s), 0.001, 3600, "SECONDS", "--role cn: wait this long for the MNs and the peer CNs, then exit 3 (default 10)" },
	{ "bench", OPT_STR, S(bench), 0, 0, "NAME", "benchmark:", "bench" },
	{ "protocol", OPT_STR, S(protocol), 0, 0, "NAME", "concurrency control:", "protocol" },
	{ "isolation", OPT_STR, S(isolation), 0, 0, "sr|si", "isolation level (default sr)" },
	{ "fabric", OPT_STR, S(fabric), 0, 0, "NAME", "fabric driver (sim: virtual time):", "fabric" },
	{ "dev", OPT_STR, S(rdma_dev), 0, 0, "NAME", "--fabric mlx5: RDMA device, e.g. mlx5_0 (default: the first with an active port; doc/guides/mlx5.md)" },
	{ "port", OPT_U64, N(rdma_port), 1, 255, "P", "--fabric mlx5: device port (default 1)" },
	{ "gid_index", OPT_U64, N(gid_index), 0, 255, "I", "--fabric mlx5: GID index of the port (default: rdma_cm's choice from the node's IP)" },
	{ "nic", OPT_STR, S(nic), 0, 0, "MODEL", "RNIC model, an INI path or a preset:", "nic" },
	{ "mn", OPT_U64, N(mn), 1, DTXN_MASK_NODES - 2, "N", "memory nodes (default 3)" },
	{ "replicas", OPT_U64, N(replicas), 1, DTXN_MAX_REPLICAS, "R", "copies of each table, primary + backups (default 3)" },
	{ "coroutines", OPT_U64, N(coroutines), 1, 1024, "C", "coordinators per worker lcore (default 8)" },
	{ "duration", OPT_DOUBLE, N(duration_s), 0.001, 86400, "SECONDS", "run time (default 5; virtual seconds with --fabric sim)" },
	{ "txns", OPT_U64, N(txns), 1, 1e12, "N", "run until N transactions finished, instead of --duration" },
	{ "seed", OPT_U64, N(seed), 0, 18446744073709551615.0, "S", "random seed (default 1)" },
	{ "warmup", OPT_DOUBLE, N(warmup_s), 0, 86400, "SECONDS", "run this long before --duration, counted in no figure (default 0; virtual seconds with --fabric sim)" },
	{ "interval", OPT_DOUBLE, N(interval_s), 0, 86400, "SECONDS", "throughput series interval in the report (default 0: 1 s; sim: (warmup + duration) / 20)" },
	{ "retry", OPT_STR, S(retry), 0, 0, "same|fresh", "after an abort: retry the same inputs (default; TPC-C spec) or draw a new txn (FORD/Motor artifacts)" },
	{ "out", OPT_STR, S(out), 0, 0, "FILE.json", "write the report as JSON" },
	{ "series_out", OPT_STR, S(series_out), 0, 0, "FILE", "append each --interval's committed/attempted counts to FILE as it closes (survives a kill; doc/guides/cluster.md)" },
	{ "log_kib", OPT_U64, N(log_kib), 4, 1 << 20, "KIB", "undo log per coordinator per MN (default 64)" },
	{ "aux_chunk", OPT_U64, N(aux_chunk), 1, DTXN_AUX_CHUNK_MAX, "AREAS", "Motor, Lotus: value areas (Lotus: and later versions' records) a coordinator takes from a table's heaps with one FAA (default 32; doc/guides/store.md)" },
	{ "versions", OPT_U64, N(versions), 2, 64, "N", "Motor, Lotus: versions per record of every table the workload writes (default: the benchmark's, Motor's VNum per workload; the Lotus paper runs both with 2)" },
	{ "addr_cache", OPT_U64, N(addr_cache), 0, 1 << 28, "N", "address cache entries per worker (default 1Mi; sim: the tables' keys, at most 1Mi); 0: unbounded, room for every record of the tables (the artifacts'; doc/guides/store.md, \"Address cache\")" },
	{ "table_mn", OPT_STR, S(table_mn), 0, 0, "NAME=MN,...", "these tables' primaries on these MNs, their backups on the next MNs, in place of MN id % MNs (CREST's artifact: stock=1; doc/guides/store.md, \"A table's MN\")" },
	{ "addr_prewarm", OPT_BOOL, N(addr_prewarm), 0, 1, "0|1", "1: fill one address cache per process at load time with the address of every loaded record, shared read-only by the workers (a pre-warmed cache: no lookup of a loaded record READs a bucket; --role all only); each worker's --addr-cache is then its own overlay of what the run changes (0: unbounded); doc/guides/store.md, \"Address cache\"; default 0" },
	{ "live", OPT_BOOL, N(live), 0, 1, "0|1", "print a live line each second (default 1)" },
	{ "cluster", OPT_STR, S(cluster), 0, 0, "FILE|NAME", "sim: cluster, an INI path or a preset:", "cluster" },
	{ "cn", OPT_U64, N(cn), 1, DTXN_MAX_NODES - 2, "N", "compute nodes (default 1; sim: or the cluster's; shm: worker lcores split between them, doc/guides/lotus.md)" },
	{ "threads", OPT_U64, N(threads), 1, 1024, "T", "sim: threads per CN, each running --coroutines (default 1)" },
	{ "cpu", OPT_STR, S(cpu), 0, 0, "MODEL", "sim: CPU cost model, an INI path or a preset:", "cpu" },
	{ "clock_skew_ns", OPT_U64, N(clock_skew_ns), 0, 1e9, "NS", "sim: CN k's clock reads k x NS ahead of the true time (default 0; doc/guides/sim.md, \"Clock skew\")" },
	{ "clock_drift_ppm", OPT_U64, N(clock_drift_ppm), 0, 999999, "PPM", "sim: CN clocks run PPM parts per million slow (even CNs) or fast (odd CNs) (default 0)" },
	{ "cn_nic", OPT_STR, S(cn_nic), 0, 0, "MODEL", "sim: RNIC model of the CNs (default: --nic), as --nic:", "nic" },
	{ "false_aborts", OPT_BOOL, N(false_aborts), 0, 1, "0|1", "FORD, Motor: classify each abort as false or true (the report's false_aborts, CREST's Fig. 3) with a side table of lock takers' cells, written at every record lock (default 0: not classified, false_aborts 0; record-level CREST counts them either way; doc/guides/crest.md, \"False aborts\")" },
	{ "placement", OPT_STR, S(placement), 0, 0, "table|key", "where records live: table (default, the artifacts' rule: a table's primary on MN id % MNs, its backups on the next MNs) or key (each key's primary hashed across the MNs, its backups on the next MNs: the buckets cut into one stripe per MN); every protocol and fabric (doc/guides/store.md, \"Placement: table or key\")" },
	{ "check", OPT_STR, S(check), 0, 0, "none|history", "record every txn, check the history for isolation anomalies (default none)" },
	{ "history", OPT_STR, S(history), 0, 0, "FILE", "record every txn, save the history to FILE for dtxn-check" },
	{ "cc_opts", OPT_STR, S(cc_opts), 0, 0, "K=V,...", "protocol options, e.g. ford: published=1 (doc/guides/ford.md); lotus: ablation=lock-sharding,vt_cache=0 (doc/guides/lotus.md); oocc: lease_ns=7000,write_unlock=0 (doc/guides/oocc.md)" },
	{ "fault", OPT_STR, S(fault), 0, 0, "cnJ,...@S", "sim: kill these CNs at virtual second S (fail-stop); survivors detect it by lease and recover (doc/guides/cluster.md, \"Recovery\")" },
	{ "lease_ms", OPT_DOUBLE, N(lease_ms), 0, 60000, "MS", "CN lease: a CN whose heartbeat in MN memory has not moved this long is declared dead and recovered; failure detection is on by default with --role mn|cn (lease 1000) where the protocol can recover a dead CN, and with --fault (lease 10); given, turns it on; 0 turns it off (doc/guides/cluster.md, \"Recovery\")" },
	{ "fault_drop", OPT_DOUBLE, N(fault_drop), 0, 1, "P", "TEST AID, with --fault: each chain (one post call's WRs to one node) a killed CN posted that has not started at its target is dropped whole with probability P (from --seed), as with a NIC that dies with its process (UCX over TCP); default 0: simulated RNICs execute what was posted (doc/guides/sim.md, \"A NIC that dies with its process\")" },
	{ "debug_lose", OPT_STR, S(debug_lose), 0, 0, "mnI@S", "TEST AID: S seconds into the run, every worker's QP to MN I goes to the error state, as when the peer is lost (the run stops, exit 3; doc/guides/mlx5.md)" },
	{ "debug_crash_after", OPT_STR, S(debug_crash_after), 0, 0, "POINT", "TEST AID, with --fault: none (default); on each CN --fault kills, the first txn that writes stops: backup-visible (one that writes a record another CN locked: with its commit on the backups only), unlocked (committed and unlocked, not yet recorded) (doc/guides/testing.md)" },
	{ "debug_post_gap", OPT_U64, N(debug_post_gap_ns), 0, 1000000000, "NS", "TEST AID: a coordinator sleeps NS between the chains of a post that spans several MNs, as a CN thread descheduled between two doorbells of one batch (virtual ns on the sim; default 0; doc/guides/testing.md, \"OOCC under TPC-C\")" },
	{ "debug_decide_gap", OPT_U64, N(debug_decide_gap_ns), 0, 1000000000, "NS", "TEST AID: a coordinator whose protocol decides its txn before the first doorbell of the decisive batch sleeps NS between the two (one such post in 8), as a CN thread descheduled or killed after deciding with nothing rung (virtual ns on the sim; default 0; doc/guides/testing.md, \"Decided, no doorbell rung\")" },
	{ "debug_stall", OPT_STR, S(debug_stall), 0, 0, "cnJ@S:MS", "TEST AID: S seconds into the run, the first coordinator of CN J about to post the second mutating batch of its txn (its first landed) puts its worker thread to sleep MS ms, once, the CN's heartbeat with it: a worker descheduled by the OS mid-commit (real time only; default none; doc/guides/testing.md, \"A worker stalled across the deadline\")" },
	{ "debug_weaken", OPT_STR, S(debug_weaken), 0, 0, "MODE", "TEST AID, breaks the protocol on purpose: none (default), skip-lock-check, skip-read-validation, skip-ww-check, oocc-alg1 (which protocol implements which: doc/guides/checker.md)" },
	{ "announce_restart", OPT_STR, S(announce_restart), 0, 0, "cnJ,...", "--role mn|cn: a restart of these CNs is coming (dtxn-cluster --restart): the CNs' end of run waits up to --connect-timeout for it to claim its node (doc/guides/cluster.md, \"Announced restarts\")" },
	{ "control", OPT_STR, S(control), 0, 0, "fabric|shared", "--role mn|cn: the CNs' start barrier and counters for the invariant check go through MN 0's control area with WRs (fabric; the default on a network fabric) or through the shm control block (shared; the default on --fabric shm) (doc/guides/cluster.md, \"The control plane over the fabric\")" },
	{ "recovery_pass", OPT_BOOL, N(recovery_pass), 0, 1, "0|1", "--role cn: run no workload: once every CN process of the cluster has ended, recover each one that died or was fenced unrecovered (as a survivor does), settle its counters, check the benchmark's invariants over MN memory and write the report (--out); what dtxn-cluster run starts when no CN checked them (doc/guides/cluster.md, \"The recovery pass\"); default 0" },
	{ "debug_copy_regions", OPT_BOOL, N(debug_copy_regions), 0, 1, "0|1", "TEST AID, --control fabric: the CN that checks the invariants READs every MN region into a local copy and checks over the copies, as on a network fabric where it maps none (default 0)" },
};
#undef S
#undef N

void
app_usage(void)
{
	char names[256];

	printf("usage: dtxn-app [EAL args] -- [options] [benchmark options]\n\n"
	       "options (also keys of the [dtxn] section of --config FILE.ini):\n"
	       "  --config FILE.ini          read options from an INI file; the command line overrides it\n");
	for (size_t i = 0; i < RTE_DIM(g_opts); i++) {
		char flag[64];
		snprintf(flag, sizeof(flag), "--%s %s", g_opts[i].name, g_opts[i].arg);
		for (char *p = flag; *p && *p != ' '; p++)
			if (*p == '_')
				*p = '-';
		if (g_opts[i].names != NULL) {
			app_names(g_opts[i].names, names, sizeof(names));
			printf("  %-26s %s %s\n", flag, g_opts[i].help, names);
		} else {
			printf("  %-26s %s\n", flag, g_opts[i].help);
		}
	}
	for (unsigned b = 0; b < dtxn_bench_count(); b++) {
		const struct dtxn_bench_ops *ops = dtxn_bench_at(b);
		printf("\n%s options (also keys of the [bench] section):\n", ops->name);
		for (unsigned i = 0; i < ops->n_opts; i++) {
			char flag[64];
			snprintf(flag, sizeof(flag), "--%s", ops->opts[i].name);
			for (char *p = flag; *p; p++)
				if (*p == '_')
					*p = '-';
			if (ops->opts[i].type == DTXN_OPT_NAME) {
				const struct dtxn_opt *o = &ops->opts[i];

				printf("  %-26s %s (default %s; one of", flag, o->help,
				       dtxn_opt_name(o, (uint64_t)o->def));
				for (unsigned k = 0; o->names[k] != NULL; k++)
					printf("%s %s", k > 0 ? "," : "", o->names[k]);
				printf(")\n");
			} else if (ops->opts[i].def == DTXN_OPT_UNSET)
				printf("  %-26s %s (default: not set)\n", flag, ops->opts[i].help);
			else
				printf("  %-26s %s (default %g)\n", flag, ops->opts[i].help,
				       ops->opts[i].def);
		}
	}
	app_names("protocol", names, sizeof(names));
	printf("\nprotocols: %s\n", names);
	app_names("bench", names, sizeof(names));
	printf("benchmarks: %s\n", names);
}

/* Decimal, 0x hexadecimal or 0 octal, every digit of 64 bits: 0, -EINVAL
 * (not such a number: strtoull's blanks and sign are refused) or -ERANGE. */
static int
strict_u64(const char *s, uint64_t *v)
{
	char *end;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 0);
	if (*end != '\0')
		return -EINVAL;
	if (errno != 0)
		return -ERANGE;
	*v = x;
	return 0;
}

/* A U64 option's bounds as integers (the table holds doubles; 2^64 and
 * more mean UINT64_MAX), so that every bit of a 64-bit value counts. */
static void
u64_bounds(const struct app_opt *o, uint64_t *lo, uint64_t *hi)
{
	*lo = o->min <= 0 ? 0 : (uint64_t)o->min;
	*hi = o->max >= 18446744073709551616.0 ? UINT64_MAX : (uint64_t)o->max;
}

static bool
strict_double(const char *s, double *v)
{
	char *end;

	if (*s == '\0')
		return false;
	errno = 0;
	double x = strtod(s, &end);
	if (errno != 0 || *end != '\0' || x != x)
		return false;
	*v = x;
	return true;
}

static bool
is_bench_opt(const char *name)
{
	for (unsigned b = 0; b < dtxn_bench_count(); b++) {
		const struct dtxn_bench_ops *ops = dtxn_bench_at(b);
		for (unsigned i = 0; i < ops->n_opts; i++)
			if (strcmp(ops->opts[i].name, name) == 0)
				return true;
	}
	return false;
}

int
app_conf_set(struct app_conf *c, const char *name, const char *value, const char *origin)
{
	for (size_t i = 0; i < RTE_DIM(g_opts); i++) {
		const struct app_opt *o = &g_opts[i];
		char *field = (char *)c + o->offset;

		if (strcmp(o->name, name) != 0)
			continue;
		c->given |= UINT64_C(1) << i; /* app_conf_given(); the run stops on an error anyway */
		switch (o->kind) {
		case OPT_STR:
			if (value[0] == '\0') {
				app_err("%s: empty value", origin);
				return -1;
			}
			if (strlen(value) >= o->size) {
				app_err("%s: value too long (at most %zu characters)", origin,
					o->size - 1);
				return -1;
			}
			snprintf(field, o->size, "%s", value);
			return 0;
		case OPT_U64: {
			uint64_t v = 0, lo, hi;
			int rc = strict_u64(value, &v);

			u64_bounds(o, &lo, &hi);
			if (rc == -EINVAL) {
				app_err("%s: '%s' is not a non-negative integer", origin, value);
				return -1;
			}
			if (rc != 0 || v < lo || v > hi) {
				app_err("%s: %s is out of range [%" PRIu64 ", %" PRIu64 "]", origin,
					value, lo, hi);
				return -1;
			}
			memcpy(field, &v, sizeof(v));
			return 0;
		}
		case OPT_DOUBLE: {
			double v;
			if (!strict_double(value, &v)) {
				app_err("%s: '%s' is not a number", origin, value);
				return -1;
			}
			if (v < o->min || v > o->max) {
				app_err("%s: %s is out of range [%g, %g]", origin, value,
					o->min, o->max);
				return -1;
			}
			memcpy(field, &v, sizeof(v));
			return 0;
		}
		case OPT_BOOL: {
			bool v;
			if (strcmp(value, "1") == 0 || strcmp(value, "yes") == 0 ||
			    strcmp(value, "true") == 0)
				v = true;
			else if (strcmp(value, "0") == 0 || strcmp(value, "no") == 0 ||
				 strcmp(value, "false") == 0)
				v = false;
			else {
				app_err("%s: '%s' is not 0 or 1", origin, value);
				return -1;
			}
			memcpy(field, &v, sizeof(v));
			return 0;
		}
		}
	}
	if (is_bench_opt(name)) {
		struct app_bench_opt *bo = NULL;

		/* a later setting of the same option replaces the earlier one */
		for (unsigned i = 0; i < c->n_bench_opts; i++)
			if (strcmp(c->bench_opts[i].name, name) == 0)
				bo = &c->bench_opts[i];
		if (bo == NULL) {
			if (c->n_bench_opts == APP_MAX_BENCH_OPTS) {
				app_err("%s: too many benchmark options", origin);
				return -1;
			}
			bo = &c->bench_opts[c->n_bench_opts++];
		}
		if (strlen(name) >= sizeof(bo->name) || strlen(value) >= sizeof(bo->value)) {
			app_err("%s: value too long", origin);
			return -1;
		}
		snprintf(bo->name, sizeof(bo->name), "%s", name);
		snprintf(bo->value, sizeof(bo->value), "%s", value);
		snprintf(bo->origin, sizeof(bo->origin), "%s", origin);
		return 0;
	}
	app_err("%s: unknown option (see --help)", origin);
	return -1;
}

bool
app_conf_given(const struct app_conf *c, const char *name)
{
	for (size_t i = 0; i < RTE_DIM(g_opts); i++)
		if (strcmp(g_opts[i].name, name) == 0)
			return (c->given >> i) & 1;
	return false;
}

_Static_assert(RTE_DIM(g_opts) <= 64, "struct app_conf's given has 64 bits");

/* "--write-ratio" -> "write_ratio"; NULL if not an option */
static const char *
canonical(const char *arg, char *buf, size_t len)
{
	if (strncmp(arg, "--", 2) != 0 || arg[2] == '\0')
		return NULL;
	snprintf(buf, len, "%s", arg + 2);
	char *eq = strchr(buf, '=');
	if (eq != NULL)
		*eq = '\0';
	for (char *p = buf; *p; p++)
		if (*p == '-')
			*p = '_';
	return buf;
}

int
app_parse_args(struct app_conf *c, int argc, char **argv)
{
	char name[APP_NAME_MAX];
	int i;

	/* pass 1: --help, --version, --config */
	for (i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			app_usage();
			return 1;
		}
		if (strcmp(argv[i], "--version") == 0) {
			printf("dtxn-app %s\n", DTXN_VERSION);
			return 1;
		}
	}
	for (i = 0; i < argc; i++) {
		const char *n = canonical(argv[i], name, sizeof(name));
		const char *eq = strchr(argv[i], '=');
		const char *val;

		if (n == NULL || strcmp(n, "config") != 0)
			continue;
		if (eq != NULL)
			val = eq + 1;
		else if (i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0)
			val = argv[++i];
		else {
			app_err("--config: missing value (an INI file)");
			return -1;
		}
		if (val[0] == '\0') {
			app_err("--config: empty value (an INI file)");
			return -1;
		}
		if (strlen(val) >= sizeof(c->config)) {
			app_err("--config: path too long");
			return -1;
		}
		snprintf(c->config, sizeof(c->config), "%s", val);
	}
	if (c->config[0] != '\0' && app_config_load(c, c->config) != 0)
		return -1;

	/* pass 2: everything else, overriding the INI */
	for (i = 0; i < argc; i++) {
		const char *arg = argv[i];
		const char *n = canonical(arg, name, sizeof(name));
		const char *eq = strchr(arg, '=');
		const char *val;
		char origin[APP_NAME_MAX + 4];

		if (n == NULL) {
			app_err("unexpected argument '%s' (options start with --; see --help)", arg);
			return -1;
		}
		snprintf(origin, sizeof(origin), "--%.*s", (int)(eq ? eq - arg - 2 : (long)strlen(arg + 2)), arg + 2);
		if (eq != NULL)
			val = eq + 1;
		else if (i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0)
			val = argv[++i];
		else {
			app_err("%s: missing value", origin);
			return -1;
		}
		if (strcmp(n, "config") == 0)
			continue;
		if (app_conf_set(c, n, val, origin) != 0)
			return -1;
	}
	return 0;
}
