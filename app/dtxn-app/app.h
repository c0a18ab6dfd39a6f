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

#include "dtxn_fabric.h"

#define APP_EXIT_OK 0
#define APP_EXIT_FAIL 1      /**< the run failed or an invariant did not hold */
#define APP_EXIT_USAGE 2     /**< bad input */
#define APP_EXIT_UNREACHABLE 3 /**< --role cn: the MNs or peer CNs did not come up in time */
/** --role cn: a survivor declared this CN dead and took its lease away (self-fencing,
 *  doc/guides/cluster.md): it stopped before changing MN memory again */
#define APP_EXIT_FENCED 4

#define APP_MAX_BENCH_OPTS 32
#define APP_NAME_MAX 64
#define APP_ORIGIN_MAX (PATH_MAX + 128)

/** A benchmark option as given, applied once the benchmark is known. */
struct app_bench_opt {
	char name[APP_NAME_MAX];    /**< canonical: underscores, e.g. "write_ratio" */
	char value[APP_NAME_MAX];
	char origin[APP_ORIGIN_MAX]; /**< "--write-ratio" or "file.ini:7: write_ratio" for messages */
};

/** Everything a run needs; filled from defaults, then the INI, then the command line. */
struct app_conf {
	char role[16];
	char node[16];               /**< --role mn|cn: "mnI" or "cnJ" (role.c) */
	double connect_timeout_s;    /**< --role cn: wait this long for the MNs and peer CNs */
	unsigned node_idx;           /**< I or J of --node (role.c) */
	/** --role mn|cn: each node's "IPv4:port" from the cluster file's [nodes]
	 *  addr= (role_conf.c), by node id (MN i: i, CN j: mn + j); "": the
	 *  driver's default (doc/guides/mlx5.md) */
	char node_addr[DTXN_MAX_NODES][DTXN_FABRIC_ADDR_MAX];
	char bench[APP_NAME_MAX];
	char protocol[APP_NAME_MAX];
	char isolation[8];
	char fabric[APP_NAME_MAX];
	char rdma_dev[64];           /**< --dev (mlx5): RDMA device; "" the first with an active port */
	uint64_t rdma_port;          /**< --port (mlx5): 1-based port; 0 (default) port 1 */
	uint64_t gid_index;          /**< --gid-index (mlx5): GID index; not given: rdma_cm's choice */
	char nic[PATH_MAX];          /**< preset name or INI path */
	char nic_path[PATH_MAX];     /**< resolved INI path ("" for the built-in none) */
	char out[PATH_MAX];
	char series_out[PATH_MAX];   /**< --series-out: intervals appended as they close; "" none */
	char config[PATH_MAX];
	uint64_t mn;
	uint64_t replicas;
	uint64_t coroutines;         /**< per worker lcore */
	double duration_s;
	uint64_t txns;               /**< 0: run for duration_s */
	uint64_t seed;
	uint64_t log_kib;            /**< per coordinator per MN */
	uint64_t aux_chunk;          /**< aux areas per FAA (struct dtxn_db_conf aux_chunk) */
	uint64_t versions;           /**< versions per written table's record; 0: the benchmark's (struct dtxn_db_conf versions) */
	uint64_t addr_cache;         /**< entries per worker */
	bool addr_prewarm;           /**< --addr-prewarm 1: workers' caches filled at load time */
	/** --table-mn NAME=MN[,NAME=MN...]: those tables' primaries (table_mn.c); "" none */
	char table_mn[256];
	bool live;                   /**< print the live line each second */
	/* method (build.c; doc/guides/report.md, "Method") */
	double warmup_s;             /**< run first, counted in no figure (virtual s on sim) */
	double interval_s;           /**< throughput series interval; 0: 1 s (shm), (warmup + duration) / 20 (sim) */
	char retry[8];               /**< after an abort: "same" (default) or "fresh" */
	/* simulation (--fabric sim): cluster.c, run_sim.c, doc/guides/sim.md */
	char cluster[PATH_MAX];      /**< cluster preset name or INI path; "" none */
	char cluster_path[PATH_MAX]; /**< resolved INI path */
	char cpu[PATH_MAX];          /**< CPU cost model: preset name or INI path */
	char cpu_path[PATH_MAX];     /**< resolved INI path */
	char cn_nic[PATH_MAX];       /**< RNIC model of the CNs; "" = --nic */
	char cn_nic_path[PATH_MAX];  /**< resolved INI path ("" for none) */
	uint64_t cn;                 /**< CNs (simulated; on shm the worker lcores are split between them, run.c) */
	uint64_t threads;            /**< simulated threads per CN */
	uint64_t clock_skew_ns;      /**< sim: CN k's clock offset, k x this, ns */
	uint64_t clock_drift_ppm;    /**< sim: CN clock drift: even CNs -this, odd +this, ppm */
	uint64_t given;              /**< bit i: args.c's option i was set by the INI or the command line */
	/* history check (check.c, doc/guides/checker.md) */
	char check[16];              /**< "none" (or "") or "history" */
	char history[PATH_MAX];      /**< save the history to this file; "" none */
	char debug_lose[32];         /**< test aid: "mnI@S" or "" (role_conf.c) */
	int lose_mn;                 /**< --debug-lose: I, or -1 */
	double lose_at_s;            /**< --debug-lose: S, seconds after the run starts */
	char debug_stall[48];        /**< test aid: "cnJ@S:MS" or "" (role_conf.c) */
	int stall_cn;                /**< --debug-stall: J, or -1 */
	double stall_at_s;           /**< --debug-stall: S, seconds after the run starts */
	double stall_ms;             /**< --debug-stall: MS, how long the worker sleeps */
	char debug_weaken[32];       /**< test aid: "none" (or "") or a dtxn_debug_weaken_parse() mode */
	char cc_opts[256];           /**< protocol options (dtxn_db_conf.cc_options); "" none */
	/* CN failure and recovery (fault.c, agent.c; doc/guides/cluster.md, "Recovery") */
	char fault[128];             /**< --fault "cnJ,...@SECONDS"; "" none */
	uint64_t fault_mask;         /**< CN indices --fault kills (bit J) */
	double fault_at_s;           /**< when, s since the run began (warm-up included; virtual on sim) */
	double lease_ms;             /**< lease: a CN whose heartbeat has not moved this long is dead */
	bool lease_auto;             /**< failure detection on by default (app_lease_default()) */
	double fault_drop;           /**< test aid --fault-drop: P a killed CN's unstarted chain is lost (sim) */
	char debug_crash_after[32];  /**< test aid: "none" (or ""), "backup-visible", "unlocked" (fault.c) */
	uint64_t debug_post_gap_ns;  /**< test aid --debug-post-gap: ns between the chains of one post */
	uint64_t debug_decide_gap_ns; /**< test aid --debug-decide-gap: ns between deciding and the first doorbell */
	/** --announce-restart "cnJ,...": restarts to come (role_conf.c; doc/guides/cluster.md,
	 *  "Announced restarts"); "" none */
	char announce_restart[128];
	uint64_t announce_mask;      /**< the CNs --announce-restart names (bit J) */
	/** --control: the CNs' control plane (ctl_fabric.c; doc/guides/cluster.md, "The
	 *  control plane over the fabric"): "fabric" (MN 0's control area, through
	 *  WRs) or "shared" (the shm control block); app_validate() resolves the
	 *  default ("": fabric on a network fabric, shared on shm) */
	char control[16];
	/** --debug-copy-regions (test aid, --control fabric): the checker READs every MN
	 *  region into a local copy and checks over the copies, as where it maps none */
	bool debug_copy_regions;
	/** --recovery-pass 1 (--role cn): run no workload; recover every CN whose
	 *  process died unrecovered, settle its counters, check the invariants and
	 *  report (recovery_pass.c; doc/guides/cluster.md, "The recovery pass") */
	bool recovery_pass;
	bool false_aborts;           /**< --false-aborts 1: FORD, Motor classify their aborts (dtxn_db_conf.false_aborts) */
	/** --placement: "table" (default: a table's primary on MN id % n_mn) or "key" (each
	 *  key's primary hashed across the MNs; dtxn_db_conf.placement, doc/guides/store.md) */
	char placement[8];
	unsigned n_bench_opts;
	struct app_bench_opt bench_opts[APP_MAX_BENCH_OPTS];
};

/**
 * Checks --fault and --lease-ms (fault.c) and fills fault_mask and
 * fault_at_s: "cnJ[,cnK...]@SECONDS" kills those CNs at that virtual time
 * of a --fabric sim run (other fabrics refuse it), not every CN, within
 * the run. @return 0, or -1 after one line.
 */
int app_fault_validate(struct app_conf *c);

/**
 * Checks the syntax of --table-mn (table_mn.c): NAME=MN[,NAME=MN...],
 * each name once, at most 16, MN a number below DTXN_MAX_NODES.
 * @return 0, or -1 after one line.
 */
int app_table_mn_check(const char *s);

/**
 * Moves the primaries --table-mn names (dtxn_db_set_table_mn()), once the
 * benchmark has added its tables to @p db (app_db_make()).
 * @return 0, or -1 after one line naming the option (a table the
 *   benchmark does not have, with its tables; an MN not below the run's).
 */
struct dtxn_db;
int app_table_mn_apply(const struct app_conf *c, struct dtxn_db *db);

/**
 * Parses a list of CN names, "cnJ[,cnK...]", from @p list up to @p end
 * (exclusive) into @p mask (bit J), each a CN of the run (cn0 .. cn<--cn - 1>)
 * and named once (fault.c). Messages name the option: "--OPT VALUE: ...".
 * @param opt the option's name without dashes, e.g. "fault"
 * @param val the option's whole value, for the message
 * @return 0, or -1 after one line (not a CN name, not a CN of the run,
 *   named twice, a name missing between commas).
 */
int app_cn_list_parse(const struct app_conf *c, const char *opt, const char *val, const char *list,
		      const char *end, uint64_t *mask);

/**
 * The db's crash point (DTXN_DEBUG_CRASH_MID_COMMIT) if --debug-crash-after
 * names one (fault.c; checked by app_fault_validate()), else 0.
 */
uint32_t app_fault_debug_flags(const struct app_conf *c);

/**
 * True if the run has cluster agents (heartbeats, failure detection):
 * --fault, --lease-ms given and not 0, or on by default
 * (app_lease_default()).
 */
bool app_agents_on(const struct app_conf *c);

/**
 * Failure detection on by default wherever there is more than one process
 * (issue 31; doc/guides/cluster.md, "Recovery"): with --role mn|cn, no
 * --lease-ms and no --fault, and a protocol that can recover a dead CN
 * with these --cc-opts (dtxn_protocol_can_recover()), sets the lease to
 * APP_LEASE_MS_PROCESSES and lease_auto. Every process of a cluster
 * decides alike (the layout depends on it). Called by app_validate()
 * after app_role_validate().
 */
void app_lease_default(struct app_conf *c);

/** The default lease of a multi-process run, ms: survives a loaded 2-core
 *  host (a CN descheduled for a few hundred ms is not declared dead; beats
 *  every lease / 5). */
#define APP_LEASE_MS_PROCESSES 1000.0

/**
 * Coordinator ids the CN agents of a run take after the benchmark's
 * (agent.h: APP_AGENT_COORDS per CN of the cluster; 0 without agents).
 * Every process of a cluster lays its regions out with them (the lease
 * area follows the log regions).
 */
unsigned app_agent_coords(const struct app_conf *c);

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
 * Applies the INI file @p path ([dtxn] and [bench] sections; read by
 * dtxn_ini_load(), so every rule of lib/ini holds and errors name file:line).
 * @return 0 or -1 after printing one line.
 */
int app_config_load(struct app_conf *c, const char *path);

/**
 * Sets one application option by its canonical name (underscores).
 * @param origin  for messages: "--duration" or "file.ini:3: duration".
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

/**
 * Names of the presets shipped for @p kind ("nic", "cpu", "cluster"): the
 * .ini files of the folder app_config_find() would look in, without
 * ".ini", comma-separated, sorted; "" if there is none.
 */
void app_config_list(const char *kind, char *buf, size_t len);

/**
 * What --help and the error messages list for @p what, ", "-separated:
 * "bench", "protocol" and "fabric" from their registries
 * (dtxn_bench_list(), dtxn_cc_list(), dtxn_fabric_driver_list()), any
 * other word from app_config_list().
 */
void app_names(const char *what, char *buf, size_t len);

/**
 * Resolves a model or cluster option: a path (with a '/' or ".ini" in it)
 * is taken as is, a name is a preset of @p kind (app_config_find()).
 *
 * @param opt  the option without "--", for messages ("cn-nic").
 * @return 0 and the path in @p out, or -1 after one line (no such file,
 *   unknown preset: the line lists the presets).
 */
int app_preset_resolve(const char *opt, const char *kind, const char *val, char *out,
		       size_t len);

/**
 * Checks, before the run, that a file the run will write (--out,
 * --history) can be written: a file name (not a directory, not ending in
 * '/', at most NAME_MAX characters) in a directory that exists and lets
 * us create it, or an existing file we may overwrite. Creates nothing.
 *
 * @param opt  the option, for the message ("--out").
 * @return 0, or -1 after one line naming the problem.
 */
int app_out_path_check(const char *opt, const char *path);

/*
 * Library diagnostics (log.c): captured instead of printed, so that an
 * error stays one line.
 */

/**
 * Sends every rte_log message (EAL, rte_hash, rte_ring, dtxn's libraries)
 * to a bounded buffer from now on. Main thread, before rte_eal_init().
 * @return 0 or -1 (then logs go where they went).
 */
int app_log_capture(void);

/**
 * Ends the capture; with @p show, writes what was kept (the newest 16 KiB)
 * to stderr, else drops it. Main thread.
 */
void app_log_release(bool show);

/**
 * The newest ERR-or-worse library line captured since the last call
 * (copied to @p buf, "" if none), and forgets it. app_err() folds it into
 * its line. @return its length.
 */
size_t app_log_take_last(char *buf, size_t len);

/**
 * Resolves and loads an RNIC model option (--nic, --cn-nic): "" or "none"
 * give an empty @p path (no model), else app_preset_resolve() and
 * dtxn_nic_model_load(), so a bad file is refused before the EAL starts.
 * @return 0, or -1 after one line.
 */
int app_nic_resolve(const char *opt, const char *val, char *path, size_t len);

/** Prints one error line "dtxn-app: ..." to stderr, with the newest
 * library error line folded in as " (...)" if one was captured. */
void app_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/** Prints the usage text. */
void app_usage(void);

/**
 * Checks everything that does not need the EAL (names, ranges, files,
 * benchmark options). @return 0 or -1 after printing one line.
 */
int app_validate(struct app_conf *c);

/**
 * Checks --control and resolves its default (config.c, from app_validate()):
 * "fabric" for --role mn|cn on a network fabric, "shared" on --fabric shm
 * and for --role all. "fabric" needs --role mn|cn; "shared" needs
 * --fabric shm. @return 0, or -1 after one line.
 */
int app_control_validate(struct app_conf *c);

/**
 * Checks --role, --node, --connect-timeout and, for mn/cn, the cluster
 * file's [nodes] (role_conf.c); sets node_idx. Called by app_validate()
 * after the cluster file was applied. @return 0 or -1 after one line.
 */
int app_role_validate(struct app_conf *c);

/**
 * Installs the crash report (crash.c): on SIGSEGV, SIGBUS, SIGILL, SIGFPE
 * or SIGABRT, one line naming the signal, pid and thread and the thread's
 * backtrace on stderr, then death by the same signal. Not under ASan or
 * UBSan. Main thread, first thing in main(); threads created later
 * inherit it (an alternate stack is per thread: theirs overflow silently).
 */
void app_crash_report_install(void);

/**
 * TEST AID: DTXN_TEST_RAISE=segv|abrt makes the process die of that
 * signal here (tcl-badinput shows the crash report). @return 0 (unset),
 * or -1 after one line (another value); it does not return when set.
 */
int app_crash_test_aid(void);

/**
 * TEST AID: DTXN_TEST_STOP_IN=LOCK or LOCK@NODE arms the plock test aid
 * (dtxn_plock_test_stop_in()) in this process, or only in the process
 * whose --node is NODE: from here on, it stops for good inside the first
 * critical section of the plock named LOCK ("ctl", "qpdir") it enters,
 * to be SIGKILLed there (usertools/dtxn-cluster --kill NODE@aid). A CN
 * calls it as its run begins, after the start barrier, so that the
 * acquisitions of its start-up do not stop it. LOCK "dpdk-tailq" is
 * DPDK's own tailq lock instead (not a plock): app_stop_in_test_aid_tick()
 * takes it 1 s into the run and keeps it. Main thread.
 */
void app_stop_in_test_aid(const struct app_conf *c);

/**
 * TEST AID, DTXN_TEST_STOP_IN=dpdk-tailq: called by the main lcore as the
 * run goes, @p run_ns into it; once that is 1 s, takes DPDK's tailq write
 * lock (rte_mcfg_tailq_write_lock(): a lock in the shared rte_mem_config
 * with no owner) for good and prints "dtxn: test aid: holding the
 * dpdk-tailq lock (pid P)", for dtxn-cluster --kill NODE@aid; the workers
 * run on. A no-op unless armed. Main thread.
 */
void app_stop_in_test_aid_tick(uint64_t run_ns);

/**
 * TEST AID: DTXN_TEST_HOLD_WR=MS@NODE, in the process whose --node is NODE,
 * holds the first mutating WR under its lease from 0.5 s after this call
 * on MS ms between its lease check and its store at shm's emulated RNIC
 * (dtxn_fabric_test_hold_wr(): the process descheduled past its lease
 * there). A CN calls it as its run begins. Main thread.
 * @return 0 (unset, another node, or armed), or -1 after one line (MS not
 *   an integer of 1-60000, or no @NODE).
 */
int app_hold_wr_test_aid(const struct app_conf *c, struct dtxn_fabric *f);

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

/**
 * --addr-prewarm 1 (build.c; doc/guides/store.md, "Address cache"):
 * pre-warms worker @p w's address cache: the first worker of the process
 * builds the shared base by scanning the loaded MN regions, every worker
 * gets its overlay over it (dtxn_worker_addr_cache_prewarm()). Nothing
 * without the option. The thread that builds the workers, before any runs.
 * @return APP_EXIT_OK, or APP_EXIT_USAGE (regions not mapped here) or
 * APP_EXIT_FAIL (no memory for the base, more records than keys) with one line.
 */
struct dtxn_worker;
int app_addr_prewarm(const struct app_conf *c, struct dtxn_worker *w);

/** --recovery-pass (recovery_pass.c): every dead CN recovered, the
 * invariants checked, the report written. @return an APP_EXIT_* code. */
int app_run_recovery_pass(const struct app_conf *c);

/** Runs the whole cluster in virtual time (run_sim.c). @return an APP_EXIT_* code. */
int app_run_sim(const struct app_conf *c);

/**
 * Makes DPDK's heap private anonymous memory when the EAL has no
 * hugepages (heap_pages.c, doc/guides/sim.md "fifth pass"): the --no-huge
 * memfd mapping is replaced in place by anonymous memory with the same
 * contents. Only for a process that nothing else maps (the simulation;
 * the embedded real-time run, --role all: a cluster's roles need
 * hugepages, so no secondary ever maps a --no-huge heap); a no-op with
 * hugepages or in a secondary process.
 * Not thread-safe: call before other threads allocate from the heap.
 * @return 0, or -errno (the heap is left as it was, still usable).
 */
int app_heap_private(void);

/**
 * Backs the heap made private by app_heap_private() with transparent
 * 2 MiB pages from now on, if the run's heap estimate @p need_bytes
 * (app_memory_estimate()) is at most 2 GiB (heap_pages.c). Speed only.
 * Call before the workers are built.
 */
void app_heap_large_pages(uint64_t need_bytes);

/*
 * History check (check.c; issue 5, doc/guides/checker.md). A run calls
 * app_check_attach() for each coordinator it creates, app_check_finish()
 * after the run and the benchmark's checks, before printing the report,
 * and app_check_fini() at teardown. Every run path (embedded, sim) does.
 */
struct dtxn_coord;
struct dtxn_report;

/** Checks --check and --debug-weaken (--history: app_out_path_check()). @return 0 or -1 after one line. */
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

/**
 * A process that exits without its report (fenced): waits until the
 * --history stream's writer thread has written every line sealed so far,
 * leaving the file without its end line (cut short, as a killed CN's).
 * Workers may still run. No stream: nothing.
 */
void app_check_cut(void);

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
 * CNs of @p per_cn workers, @p addr_cache entries per worker) and the benchmark's tables. @p out is
 * set even on failure. @return APP_EXIT_*. */
int app_db_make(const struct app_conf *c, struct dtxn_bench *b, uint32_t n_coords,
		unsigned per_cn, uint32_t addr_cache, struct dtxn_db **out);

/** Loads the NIC model at @p path ("" = none); @p opt names the option in
 * messages. @return APP_EXIT_*. */
int app_nic_model(const char *opt, const char *path, struct dtxn_nic_model *m);

/**
 * The mlx5 options of this process (--dev, --port, --gid-index, the
 * cluster file's node addresses) into @p rdma; its strings point into
 * @p c. @p serve: the nodes this process serves (bit = node id; 0: every
 * node, --role all). Ignored by the emulating drivers.
 */
void app_rdma_conf(const struct app_conf *c, uint64_t serve, struct dtxn_fabric_rdma_conf *rdma);

struct dtxn_report_driver;

/**
 * The fabric driver's own counters for the report (report_fabric.c): on
 * mlx5 dtxn_mlx5_stats_get()'s doorbells, WRs, inline and signaled WRs,
 * masked-CAS fallbacks, bounces. @p dev (@p dev_len bytes) holds the
 * device's name the entries point to; @p d and @p dev must outlive the
 * report. @return true if @p d was filled (an mlx5 fabric), false (other
 * drivers: nothing to add).
 */
bool app_report_fabric_driver(const struct dtxn_fabric *f, struct dtxn_report_driver *d,
			      char *dev, size_t dev_len);

/**
 * Arms the watchdog (watchdog.c): unless app_watchdog_disarm() or another
 * arm comes first, after @p seconds the process writes the line @p fmt
 * (printf-style, formatted now, a newline added) to stderr and exits with
 * @p status, whatever its threads are doing (a wait on a lock a dead
 * process left in DPDK's shared memory: testing.md, "Shared locks").
 * Main thread; uses SIGALRM.
 */
void app_watchdog_arm(unsigned seconds, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/** Disarms the watchdog (alarm(0)). */
void app_watchdog_disarm(void);

/** Arms the watchdog for --node @p node's tear-down: APP_TEARDOWN_WATCHDOG_S, then exit @p status. */
void app_watchdog_teardown(const char *node, int status);

/** Seconds a cluster process's tear-down may take before the watchdog ends it. */
#define APP_TEARDOWN_WATCHDOG_S 10
/** Seconds a CN process's start-up may take beyond --connect-timeout (its start barrier's wait). */
#define APP_STARTUP_WATCHDOG_S 60

/** DPDK's heap at one instant (heap_watch.c). */
struct app_heap_mark {
	uint64_t total;  /**< bytes of the heap, every socket (hugepages mapped) */
	uint64_t elems;  /**< allocated elements in it */
	uint64_t grows;  /**< the workers' scratch arena chunks taken so far */
};

/**
 * Samples DPDK's heap (rte_malloc_get_socket_stats(), every socket: the
 * heap the processes of a cluster share) and the arena growth of @p w[0
 * .. @p n_workers). Takes DPDK's heap lock briefly: main lcore, outside
 * the run's data path.
 */
void app_heap_mark(struct app_heap_mark *m, struct dtxn_worker *const *w, unsigned n_workers);

/**
 * Prints one line for --node @p c->node: how much DPDK's heap grew since
 * @p begin (MiB, and its size now), the allocated elements more, and the
 * scratch arena chunks the workers took (dtxn_worker_arena_grows()).
 * doc/guides/testing.md, "Shared locks"; tcl-cluster's `cluster-heap-still`.
 */
void app_heap_report(const struct app_conf *c, const struct app_heap_mark *begin,
		     struct dtxn_worker *const *w, unsigned n_workers);

/** Lays the MN regions out, checks that the run fits (app_memory_check(),
 * @p n_workers workers of --coroutines coordinators) and opens the fabric
 * described by @p fc (driver, node counts, socket, name filled by the
 * caller; region size and --nic model filled here). @p region: bytes per
 * MN. @return APP_EXIT_*. */
int app_fabric_open(const struct app_conf *c, struct dtxn_db *db, struct dtxn_fabric_conf *fc,
		    unsigned n_workers, struct dtxn_fabric **out, uint64_t *region);

/**
 * Sizes the run before it allocates (memory.c; issue 11): the fabric's
 * footprint (@p fc with its region size) plus @p n_workers times a
 * worker's (dtxn_worker_footprint(), --coroutines coordinators) against
 * the EAL's free memory (and free hugepages) and RTE_MAX_MEMZONE.
 * Main lcore, after rte_eal_init().
 * @return APP_EXIT_OK, or APP_EXIT_USAGE after one line naming what needs
 *   how much and the -m that would do.
 */
int app_memory_check(const struct app_conf *c, const struct dtxn_db *db,
		     const struct dtxn_fabric_conf *fc, unsigned n_workers);

/**
 * The heap the run may use, bytes: what app_memory_check() compares with
 * the EAL's free memory (the fabric's footprint plus @p n_workers
 * workers'). Main lcore, after rte_eal_init().
 * @return 0, or -1 (a footprint that cannot be computed; *need unset).
 */
int app_memory_estimate(const struct app_conf *c, const struct dtxn_db *db,
			const struct dtxn_fabric_conf *fc, unsigned n_workers, uint64_t *need);

/**
 * Grows DPDK's heap, in the primary process of a cluster on shm (mn0,
 * before its ready line, so before any other process attaches), to what
 * the whole cluster will take from it (app_memory_check()'s footprints
 * for every MN region and --cn CNs x --threads workers, plus a share per
 * process), and keeps every page mapped (RTE_MEMSEG_FLAG_DO_NOT_FREE, as
 * for EAL -m): the other processes' allocations and frees then never
 * change the heap's pages, so none of them starts a round of DPDK's
 * multi-process messages, which a process that starts, exits, is
 * stopped or is slow meanwhile fails (the requester's "Request timed
 * out"; the primary's rollback of the failed growth then unlinked a free
 * element others had changed meanwhile: SIGSEGV in its eal-intr-thread;
 * doc/guides/testing.md "The cn1 SIGSEGV at start beside a second mn0").
 * Prints one line saying how much. Nothing in a secondary process or
 * without hugepages. Main lcore, after the fabric is open.
 * @return 0, or -1 after one line (not reserved: the heap grows as
 *   before).
 */
int app_heap_reserve(const struct app_conf *c, const struct dtxn_db *db,
		     const struct dtxn_fabric_conf *fc);

/** Attaches the db to the fabric and loads the benchmark (MN CPU); the
 * load's wall seconds in @p load_s. @return APP_EXIT_*. */
int app_db_load(const struct app_conf *c, struct dtxn_db *db, struct dtxn_fabric *f,
		struct dtxn_bench *b, uint64_t region, double *load_s);

/** "ford" or, when the db's options select a variant (dtxn_db_variant()),
 * "ford (published)", in @p buf (@p len bytes). @return @p buf. */
const char *app_protocol_label(const struct app_conf *c, const struct dtxn_db *db, char *buf,
			       size_t len);

/** Adds "protocol", "variant" (if the options select one) and "cc_opts"
 * (if any) to the report's configuration (doc/guides/report.md). */
void app_report_protocol(struct dtxn_report *rep, const struct app_conf *c,
			 const struct dtxn_db *db);

/** Adds the benchmark's options, with their final values, to the report's configuration. */
void app_report_bench_conf(struct dtxn_report *rep, const struct dtxn_bench *b);

/** Sets the report's seconds, type and abort-reason names, empties its stats. */
void app_report_begin(struct dtxn_report *rep, const struct dtxn_bench *b, double seconds,
		      uint16_t n_mn);

/*
 * method.c: --warmup, --interval, --retry (doc/guides/report.md, "Method").
 * A run with a warm-up takes every worker's counters when the warm-up
 * ends (app_warm_take) and app_report_add_worker() subtracts them, so no
 * figure counts the warm-up.
 */
struct dtxn_fabric_counters;
struct dtxn_series;

/** Counters of every worker at the warm-up's end. */
struct app_warm {
	unsigned n;                            /**< workers; 0 without a warm-up */
	bool taken;                            /**< the warm-up ended (app_warm_take ran) */
	struct dtxn_run_stats *stats;          /**< n snapshots */
	struct dtxn_fabric_counters *per_mn;   /**< n x DTXN_MAX_NODES, worker-major: MNs, then peer CNs by node id */
	uint64_t *cpu;                         /**< n x 2: dtxn_worker_cpu()'s busy and NIC ns */
};

/** Checks --retry and --warmup (not with --txns). @return 0 or -1 after one line. */
int app_method_validate(const struct app_conf *c);

/** @return the series interval, s: --interval, or 1 s (shm), or (warmup + duration) / 20 (sim). */
double app_interval_s(const struct app_conf *c);

/** Prepares room for @p n workers' counters when --warmup > 0 (else
 * nothing). @return 0 or -1 after one line (out of memory). */
int app_warm_init(struct app_warm *w, const struct app_conf *c, unsigned n);

/** Takes worker @p i's counters (main lcore; the worker may still count:
 * relaxed copies). Ignored when @p i >= w->n. */
void app_warm_take(struct app_warm *w, unsigned i, const struct dtxn_run_stats *stats,
		   const struct dtxn_worker *wk);

/** Frees the snapshots. */
void app_warm_fini(struct app_warm *w);

/** Fills the report's method part (warm-up, retry rule, @p series) and
 * their configuration entries. */
void app_report_method(struct dtxn_report *rep, const struct app_conf *c,
		       const struct dtxn_series *series);

/** Fills the report's MN memory section from the db's layout, loaded
 * population and the delta areas the run took (dtxn_db_heap_census(),
 * dtxn_catalog_mem()), and the load time @p load_s. After the run. */
void app_report_memory(struct dtxn_report *rep, struct dtxn_db *db, double load_s);

/** Merges one worker's statistics and fabric counters into the report,
 * less its counters at the warm-up's end when @p warm has them (worker
 * @p i of @p warm; @p warm may be NULL). */
void app_report_add_worker(struct dtxn_report *rep, const struct dtxn_run_stats *stats,
			   const struct dtxn_worker *w, const struct app_warm *warm, unsigned i);

struct dtxn_bench_ctx;

/** Creates @p n coordinators on worker @p w, with cluster ids gid0 .. gid0+n-1
 * of @p n_coords, their benchmark contexts in @p ctx (seeded from --seed and
 * the id, --txns split evenly) sharing @p stats, and their history buffers
 * (--check). @return APP_EXIT_*. */
int app_coords_create(const struct app_conf *c, struct dtxn_bench *b, struct dtxn_worker *w,
		      struct dtxn_run_stats *stats, struct dtxn_bench_ctx *ctx, unsigned n,
		      uint32_t gid0, uint64_t n_coords);

/** After the run: the benchmark's invariants (unless @p invariants is
 * false: a CN process other than cn0, role_cn.c), a dead CN whose last
 * recovery failed (check recovery_failed), the history check, the
 * summary, the JSON file. @return APP_EXIT_OK, or APP_EXIT_FAIL if a check
 * failed or the JSON could not be written. */
int app_report_finish(const struct app_conf *c, struct dtxn_bench *b, struct dtxn_db *db,
		      struct dtxn_bench_ctx *const *ctxs, unsigned n, bool invariants,
		      struct dtxn_report *rep);

/** Destroys the db, closes the fabric, frees the benchmark and the
 * history buffers; NULLs are skipped. Workers must be destroyed first. */
void app_release(struct dtxn_db *db, struct dtxn_fabric *f, struct dtxn_bench *b);

/* ------------------------------------------------------------------ */
/* mn_svc.c: the protocol's MN-side services in a real-time run        */
/* ------------------------------------------------------------------ */

struct dtxn_mn_svc;
struct dtxn_sched;

struct app_mn_svcs;

/** The services one worker lcore polls: svc[i] for i = slot, slot + n_slots, ... */
struct app_mn_svc_share {
	struct app_mn_svcs *s;
	unsigned slot;
	unsigned n_slots;
};

/** The MN-side services (dtxn_mn_svc_create(); Scythe's lock service) a process polls. */
struct app_mn_svcs {
	unsigned n;
	struct dtxn_mn_svc *svc[64];
	/** app_mn_svcs_on_workers(): the worker lcores poll them, the main lcore does not */
	bool on_workers;
	struct app_mn_svc_share share[64];
};

/**
 * Creates the protocol's service of every MN in [@p mn0, @p mn0 + @p n_mn)
 * (none if the protocol has no MN service), for CNs of @p per_cn workers
 * of @p coords coordinators each. Main lcore, after the load.
 * @return APP_EXIT_OK, or APP_EXIT_FAIL after one line.
 */
int app_mn_svcs_create(struct app_mn_svcs *s, struct dtxn_db *db, uint16_t mn0, uint16_t n_mn,
		       unsigned per_cn, unsigned coords);

/**
 * Spends @p ms milliseconds of the calling (main) lcore: polling the
 * services without a pause (the MN CPU serving them), or, without any
 * or with the worker lcores polling them (app_mn_svcs_on_workers()),
 * asleep.
 */
void app_mn_svcs_serve_ms(struct app_mn_svcs *s, unsigned ms);

/**
 * Embedded runs (the MNs share the process with the CN workers): hands
 * the services to the workers' schedulers, service i to worker
 * i % @p n_workers, as a poller (dtxn_sched_add_poller()) that polls it
 * at every step of that worker's lcore, so a Lock RPC is served as soon
 * as it lands and not when the OS next runs the main lcore; the main
 * lcore then only sleeps (app_mn_svcs_serve_ms()). A worker whose
 * scheduler has returned keeps polling its share with
 * app_mn_svcs_poll_share() until every worker is done. Main lcore,
 * before the workers are launched.
 * @return APP_EXIT_OK, or APP_EXIT_FAIL after one line (no poller room).
 */
int app_mn_svcs_on_workers(struct app_mn_svcs *s, struct dtxn_sched *const *scheds,
			   unsigned n_workers);

/**
 * Polls the services of @p share once (worker @p share->slot's lcore).
 * @return requests served.
 */
unsigned app_mn_svcs_poll_share(void *share);

/** Destroys the services (nobody polls them any more). */
void app_mn_svcs_destroy(struct app_mn_svcs *s);

#endif /* DTXN_APP_H */
