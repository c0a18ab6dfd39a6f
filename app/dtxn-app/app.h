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

#endif /* DTXN_APP_H */
