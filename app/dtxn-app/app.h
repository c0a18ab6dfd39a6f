/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DTXN_APP_H
#define DTXN_APP_H

/**
 * @file
 * dtxn-app internals: the run configuration, argument and INI parsing
 * (args.c, config.c) and the run itself (run.c). Every input error is one
 * line on stderr naming the problem, and exit status 2 (APP_EXIT_USAGE).
 */

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#define APP_EXIT_OK 0
#define APP_EXIT_FAIL 1      /**< the run failed or an invariant did not hold */
#define APP_EXIT_USAGE 2     /**< bad input */

#define APP_MAX_BENCH_OPTS 32
#define APP_NAME_MAX 64
#define APP_ORIGIN_MAX (PATH_MAX + 128)

/** A benchmark option as given, applied once the benchmark is known. */
struct app_bench_opt {
	char name[APP_NAME_MAX];    /**< canonical: underscores, e.g. "write_ratio" */
	char value[APP_NAME_MAX];
	char origin[APP_ORIGIN_MAX]; /**< "--write-ratio" or "file.ini: write_ratio" for messages */
};

/** Everything a run needs; filled from defaults, then the INI, then the command line. */
struct app_conf {
	char role[16];
	char bench[APP_NAME_MAX];
	char protocol[APP_NAME_MAX];
	char isolation[8];
	char fabric[APP_NAME_MAX];
	char nic[PATH_MAX];          /**< preset name or INI path */
	char nic_path[PATH_MAX];     /**< resolved INI path ("" for the built-in none) */
	char out[PATH_MAX];
	char config[PATH_MAX];
	uint64_t mn;
	uint64_t replicas;
	uint64_t coroutines;         /**< per worker lcore */
	double duration_s;
	uint64_t txns;               /**< 0: run for duration_s */
	uint64_t seed;
	uint64_t log_kib;            /**< per coordinator per MN */
	uint64_t addr_cache;         /**< entries per worker */
	bool live;                   /**< print the live line each second */
	/* simulation (--fabric sim): cluster.c, run_sim.c, doc/guides/sim.md */
	char cluster[PATH_MAX];      /**< cluster preset name or INI path; "" none */
	char cluster_path[PATH_MAX]; /**< resolved INI path */
	char cpu[PATH_MAX];          /**< CPU cost model: preset name or INI path */
	char cpu_path[PATH_MAX];     /**< resolved INI path */
	char cn_nic[PATH_MAX];       /**< RNIC model of the CNs; "" = --nic */
	char cn_nic_path[PATH_MAX];  /**< resolved INI path ("" for none) */
	uint64_t cn;                 /**< CNs (simulated; on shm the worker lcores are split between them, run.c) */
	uint64_t threads;            /**< simulated threads per CN */
	uint64_t given;              /**< bit i: args.c's option i was set by the INI or the command line */
	/* history check (check.c, doc/guides/checker.md) */
	char check[16];              /**< "none" (or "") or "history" */
	char history[PATH_MAX];      /**< save the history to this file; "" none */
	char debug_weaken[32];       /**< test aid: "none" (or "") or a dtxn_debug_weaken_parse() mode */
	char cc_opts[256];           /**< protocol options (dtxn_db_conf.cc_options); "" none */
	unsigned n_bench_opts;
	struct app_bench_opt bench_opts[APP_MAX_BENCH_OPTS];
};

/** Fills the defaults. */
void app_conf_defaults(struct app_conf *c);

/**
 * Parses the application arguments (after the EAL's "--"), reading the
 * --config INI first so that the command line overrides it.
 *
 * @return 0; 1 if --help/--version was handled (exit 0); -1 after printing
 *   one line on a bad input.
 */
int app_parse_args(struct app_conf *c, int argc, char **argv);

/**
 * Applies the INI file @p path ([dtxn] and [bench] sections).
 * @return 0 or -1 after printing one line.
 */
int app_config_load(struct app_conf *c, const char *path);

/**
 * Sets one application option by its canonical name (underscores).
 * @param origin  for messages: "--duration" or "file.ini: duration".
 * @return 0 or -1 after printing one line.
 */
int app_conf_set(struct app_conf *c, const char *name, const char *value,
		 const char *origin);

/**
 * Finds a config file shipped with dtxn, e.g. ("nic", "cx5") ->
 * ".../config/nic/cx5.ini": $DTXN_CONFIG_DIR, then the source tree's
 * config/, then ../share/dtxn/config beside the binary.
 * @return 0 and the path in @p out, or -ENOENT.
 */
int app_config_find(const char *kind, const char *name, char *out, size_t len);

/** Prints one error line "dtxn-app: ..." to stderr. */
void app_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/** Prints the usage text. */
void app_usage(void);

/**
 * Checks everything that does not need the EAL (names, ranges, files,
 * benchmark options). @return 0 or -1 after printing one line.
 */
int app_validate(struct app_conf *c);

/** Runs the configured job after rte_eal_init(). @return an APP_EXIT_* code. */
int app_run(const struct app_conf *c);

/** @return true if the option named @p name (canonical) was set explicitly. */
bool app_conf_given(const struct app_conf *c, const char *name);

/**
 * Simulation options (cluster.c): with --fabric sim, applies the cluster
 * file to every option not set explicitly and resolves the CPU and CN NIC
 * models; without it, refuses the sim-only options. Called first by
 * app_validate(). @return 0 or -1 after printing one line.
 */
int app_sim_validate(struct app_conf *c);

/** @return true if the run is simulated (--fabric sim). */
bool app_is_sim(const struct app_conf *c);

/** Runs the whole cluster in virtual time (run_sim.c). @return an APP_EXIT_* code. */
int app_run_sim(const struct app_conf *c);

/*
 * History check (check.c; issue 5, doc/guides/checker.md). A run calls
 * app_check_attach() for each coordinator it creates, app_check_finish()
 * after the run and the benchmark's checks, before printing the report,
 * and app_check_fini() at teardown. Every run path (embedded, sim) does.
 */
struct dtxn_coord;
struct dtxn_report;

/** Checks --check, --history and --debug-weaken. @return 0 or -1 after one line. */
int app_check_validate(const struct app_conf *c);

/** @return the DTXN_DEBUG_* flags --debug-weaken asks for (dtxn_db_conf.debug_flags). */
uint32_t app_check_debug_flags(const struct app_conf *c);

/**
 * With --check history or --history: gives @p coord a history buffer
 * (a share of the 4 GiB history budget among @p n_coords coordinators).
 * Main lcore, before the run. @return 0 (also when recording is off) or
 * -errno (-ENOMEM).
 */
int app_check_attach(const struct app_conf *c, struct dtxn_coord *coord, unsigned n_coords);

/**
 * After the run (workers done): saves the history (--history), runs the
 * checker (--check history), prints its report and adds to @p rep one
 * check per anomaly class the isolation level forbids ("history_G2",
 * ...; failing when found) and "history_complete" if records were
 * dropped. @return 0, or -1 after one line (save or checker failure).
 */
int app_check_finish(const struct app_conf *c, struct dtxn_report *rep);

/** Frees the history (teardown; the coordinators must be gone or stopped). */
void app_check_fini(void);

/* ------------------------------------------------------------------ */
/* build.c: steps shared by run.c and run_sim.c                       */
/* ------------------------------------------------------------------ */

struct dtxn_bench;
struct dtxn_db;
struct dtxn_fabric;
struct dtxn_fabric_conf;
struct dtxn_nic_model;
struct dtxn_report;
struct dtxn_run_stats;
struct dtxn_worker;

/** Allocates the benchmark, applies its options, creates it. @p out is set
 * even on failure (free it with dtxn_bench_free). @return APP_EXIT_*. */
int app_bench_build(const struct app_conf *c, struct dtxn_bench **out);

/** Creates the db (protocol, isolation, logs for @p n_coords coordinators,
 * @p addr_cache entries per worker) and the benchmark's tables. @p out is
 * set even on failure. @return APP_EXIT_*. */
int app_db_make(const struct app_conf *c, struct dtxn_bench *b, uint32_t n_coords,
		uint32_t addr_cache, struct dtxn_db **out);

/** Loads the NIC model at @p path ("" = none); @p opt names the option in
 * messages. @return APP_EXIT_*. */
int app_nic_model(const char *opt, const char *path, struct dtxn_nic_model *m);

/** Lays the MN regions out and opens the fabric described by @p fc (driver,
 * node counts, socket, name filled by the caller; region size and --nic
 * model filled here). @p region: bytes per MN. @return APP_EXIT_*. */
int app_fabric_open(const struct app_conf *c, struct dtxn_db *db, struct dtxn_fabric_conf *fc,
		    struct dtxn_fabric **out, uint64_t *region);

/** Attaches the db to the fabric and loads the benchmark (MN CPU).
 * @return APP_EXIT_*. */
int app_db_load(const struct app_conf *c, struct dtxn_db *db, struct dtxn_fabric *f,
		struct dtxn_bench *b, uint64_t region);

/** Adds the benchmark's options, with their final values, to the report's configuration. */
void app_report_bench_conf(struct dtxn_report *rep, const struct dtxn_bench *b);

/** Sets the report's seconds, type and abort-reason names, empties its stats. */
void app_report_begin(struct dtxn_report *rep, const struct dtxn_bench *b, double seconds,
		      uint16_t n_mn);

/** Merges one worker's statistics and fabric counters into the report. */
void app_report_add_worker(struct dtxn_report *rep, const struct dtxn_run_stats *stats,
			   const struct dtxn_worker *w);

struct dtxn_bench_ctx;

/** Creates @p n coordinators on worker @p w, with cluster ids gid0 .. gid0+n-1
 * of @p n_coords, their benchmark contexts in @p ctx (seeded from --seed and
 * the id, --txns split evenly) sharing @p stats, and their history buffers
 * (--check). @return APP_EXIT_*. */
int app_coords_create(const struct app_conf *c, struct dtxn_bench *b, struct dtxn_worker *w,
		      struct dtxn_run_stats *stats, struct dtxn_bench_ctx *ctx, unsigned n,
		      uint32_t gid0, uint64_t n_coords);

/** After the run: the benchmark's invariants, the history check, the
 * summary, the JSON file. @return APP_EXIT_OK, or APP_EXIT_FAIL if a check
 * failed or the JSON could not be written. */
int app_report_finish(const struct app_conf *c, struct dtxn_bench *b, struct dtxn_db *db,
		      struct dtxn_bench_ctx *const *ctxs, unsigned n, struct dtxn_report *rep);

/** Destroys the db, closes the fabric, frees the benchmark and the
 * history buffers; NULLs are skipped. Workers must be destroyed first. */
void app_release(struct dtxn_db *db, struct dtxn_fabric *f, struct dtxn_bench *b);

#endif /* DTXN_APP_H */
