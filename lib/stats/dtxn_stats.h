/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DTXN_STATS_H
#define DTXN_STATS_H

/**
 * @file
 * Latency histograms and per-transaction-type counters, the live line and
 * the final report (text and JSON; schema in doc/guides/report.md).
 *
 * Thread-safety: a struct dtxn_txn_stats is written by one lcore. The live
 * line reads other lcores' counters with relaxed loads (approximate, never
 * torn: counters are naturally aligned 64-bit words). Histograms are merged
 * after the run.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "dtxn_fabric.h"
#include "dtxn_store.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* Histogram                                                          */
/* ------------------------------------------------------------------ */

/**
 * Log-linear histogram of nanosecond values: values below 2^DTXN_HIST_SUB
 * are exact; above, each power of two is split into 2^DTXN_HIST_SUB
 * buckets (relative error < 1/2^DTXN_HIST_SUB = 1.6%). Covers 0 .. 2^63 ns.
 */
#define DTXN_HIST_SUB 6
#define DTXN_HIST_BUCKETS ((64 - DTXN_HIST_SUB + 1) << DTXN_HIST_SUB)

struct dtxn_hist {
	uint64_t count;
	uint64_t sum;       /**< ns */
	uint64_t min, max;  /**< ns */
	uint64_t b[DTXN_HIST_BUCKETS];
};

/** Empties a histogram. */
void dtxn_hist_reset(struct dtxn_hist *h);
/** Records one value, ns. */
void dtxn_hist_add(struct dtxn_hist *h, uint64_t ns);
/** Adds @p src into @p dst. */
void dtxn_hist_merge(struct dtxn_hist *dst, const struct dtxn_hist *src);
/**
 * The values recorded between two snapshots of one histogram: @p d =
 * @p end - @p start, bucket by bucket (a bucket that went down counts 0).
 * min and max are those of the difference to the buckets' precision,
 * clamped to end's. Used to drop a warm-up from a run's figures.
 */
void dtxn_hist_sub(struct dtxn_hist *d, const struct dtxn_hist *end,
		   const struct dtxn_hist *start);
/**
 * @param p  percentile in [0, 100].
 * @return the smallest recorded value v (to the bucket's precision, the
 *   bucket's upper bound, clamped to max) such that at least p% of values
 *   are <= v; 0 if empty.
 */
uint64_t dtxn_hist_percentile(const struct dtxn_hist *h, double p);
/** @return the mean, ns; 0 if empty. */
double dtxn_hist_mean(const struct dtxn_hist *h);
/**
 * @return the largest value (ns) bucket @p i holds (what
 *   dtxn_hist_percentile() answers for it; the JSON report's
 *   "latency_hist" names buckets by it); UINT64_MAX past the last bucket.
 */
uint64_t dtxn_hist_bucket_max(unsigned i);

/* ------------------------------------------------------------------ */
/* Per-type counters                                                  */
/* ------------------------------------------------------------------ */

/** Most abort reasons counted (>= DTXN_ABORT_REASON_MAX of dtxn_txn.h). */
#define DTXN_STATS_MAX_REASONS 16
/** Most transaction types a benchmark may have. */
#define DTXN_STATS_MAX_TYPES 16
/** Most verb kinds counted per type (>= DTXN_WR_OP_MAX of dtxn_fabric.h). */
#define DTXN_STATS_MAX_OPS 8

/** Counters of one transaction type on one lcore. */
struct dtxn_txn_stats {
	uint64_t commits;
	uint64_t attempts;       /**< commits + aborts + rollbacks */
	uint64_t rollbacks;      /**< application rollbacks (the spec's expected failures) */
	uint64_t aborts[DTXN_STATS_MAX_REASONS]; /**< concurrency aborts by reason */
	uint64_t false_aborts;   /**< of those, false conflicts (dtxn_coord_false_abort()) */
	/** MN verbs its attempts posted (all of them: committed, aborted, rolled
	 *  back), by enum dtxn_wr_opcode (dtxn_coord_verbs()), and their bytes */
	uint64_t verbs[DTXN_STATS_MAX_OPS];
	uint64_t verb_bytes;
	struct dtxn_hist lat;    /**< commit latency, first attempt to commit, ns */
};

/* ------------------------------------------------------------------ */
/* Waits of committed transactions                                    */
/* ------------------------------------------------------------------ */

/** Most wait kinds counted (>= DTXN_WAIT_MAX of dtxn_txn.h). */
#define DTXN_STATS_MAX_WAITS 8
/** Latency classes of struct dtxn_wait_stats: 2^DTXN_WAIT_SUB per power of two (6% wide). */
#define DTXN_WAIT_SUB 4
#define DTXN_WAIT_CLASSES ((64 - DTXN_WAIT_SUB + 1) << DTXN_WAIT_SUB)

/**
 * Where committed transactions' latency went (the report's "waits"): the
 * time each waited, by kind, summed by latency class, so that the report
 * gives the waits of all commits and of the slowest 1% (the P99 tail).
 */
struct dtxn_wait_stats {
	uint64_t n[DTXN_WAIT_CLASSES];    /**< commits whose latency falls in the class */
	uint64_t lat[DTXN_WAIT_CLASSES];  /**< their latencies, summed, ns */
	uint64_t ns[DTXN_WAIT_CLASSES][DTXN_STATS_MAX_WAITS]; /**< their waits by kind, summed, ns */
};

/**
 * Counts one commit of latency @p lat_ns that waited @p ns[k] ns of kind
 * k < @p n (n <= DTXN_STATS_MAX_WAITS). Owning lcore only.
 */
void dtxn_wait_stats_add(struct dtxn_wait_stats *w, uint64_t lat_ns, const uint64_t *ns,
			 unsigned n);

/** All of one lcore's (or the run's, merged) statistics. */
struct dtxn_run_stats {
	unsigned n_types;
	struct dtxn_txn_stats type[DTXN_STATS_MAX_TYPES];
	struct dtxn_wait_stats waits;  /**< every type's commits */
};

void dtxn_run_stats_reset(struct dtxn_run_stats *s, unsigned n_types);
void dtxn_run_stats_merge(struct dtxn_run_stats *dst, const struct dtxn_run_stats *src);
/**
 * Copies @p s into @p d with relaxed loads, word by word, while the owning
 * lcore may still count (never torn; a transaction's updates may be split).
 */
void dtxn_run_stats_snapshot(struct dtxn_run_stats *d, const struct dtxn_run_stats *s);
/**
 * What was counted between two snapshots of the same counters: @p d =
 * @p end - @p start for every counter and histogram (dtxn_hist_sub()), with
 * end's n_types. A snapshot taken while workers count (relaxed copies) may
 * split a transaction's updates; each counter is still exact at its word.
 */
void dtxn_run_stats_sub(struct dtxn_run_stats *d, const struct dtxn_run_stats *end,
			const struct dtxn_run_stats *start);
/**
 * Relaxed sum of commits/attempts/aborts (concurrency aborts, all reasons)
 * over types (live line). Any output pointer may be NULL.
 */
void dtxn_run_stats_totals(const struct dtxn_run_stats *s, uint64_t *commits,
			   uint64_t *attempts, uint64_t *aborts);

/* ------------------------------------------------------------------ */
/* Interval throughput                                                */
/* ------------------------------------------------------------------ */

/** One interval of a run's throughput series (JSON "intervals"). */
struct dtxn_interval {
	double t_s;          /**< end of the interval, s since the run began (warm-up included) */
	double seconds;      /**< its length, s (the last one, or one cut by the warm-up end, may be shorter) */
	uint64_t commits;    /**< committed txns in the interval */
	uint64_t attempts;   /**< attempts (commits, aborts, rollbacks) in the interval */
	uint64_t aborts;     /**< concurrency aborts in the interval */
	bool warmup;         /**< part of the warm-up (dtxn_series_end_warmup()): counted in no other figure */
};

/**
 * A run's throughput series, built on the main lcore (or the simulation's
 * thread) from cumulative totals sampled at each interval's end; the
 * warm-up's end is always an interval end (dtxn_series_end_warmup()), so
 * no interval straddles it.
 * Seconds are wall seconds on shm, virtual seconds on sim.
 */
struct dtxn_series {
	double interval_s;   /**< nominal interval, s */
	double warmup_s;     /**< warm-up, s (0: none) */
	unsigned n;          /**< intervals recorded */
	unsigned cap;        /**< room in v */
	struct dtxn_interval *v;
	bool warm_done;      /**< the warm-up has ended (or there is none) */
	double last_t_s;     /**< end of the last interval */
	uint64_t last_commits, last_attempts, last_aborts; /**< totals at last_t_s */
	bool out_open;       /**< dtxn_series_stream(): out_fd is open */
	int out_fd;          /**< the file each interval is appended to */
};

/**
 * Starts an empty series (no allocation yet).
 * @param interval_s  nominal interval, s, > 0.
 * @param warmup_s    warm-up, s, >= 0.
 * @return 0 or -EINVAL.
 */
int dtxn_series_init(struct dtxn_series *s, double interval_s, double warmup_s);

/**
 * Closes the interval (last_t_s, @p t_s] given the run's cumulative totals
 * at @p t_s (dtxn_run_stats_totals() summed over workers). A sample at or
 * before the last one is ignored. Grows the array as needed.
 * @return 0, or -ENOMEM (the interval is dropped, the series stays valid).
 */
int dtxn_series_sample(struct dtxn_series *s, double t_s, uint64_t commits,
		       uint64_t attempts, uint64_t aborts);

/**
 * The warm-up ends at @p t_s with these cumulative totals: closes the
 * interval that ends there (dtxn_series_sample()) and marks every interval
 * so far as warm-up; later ones are measured. Once per series.
 * @return as dtxn_series_sample().
 */
int dtxn_series_end_warmup(struct dtxn_series *s, double t_s, uint64_t commits,
			   uint64_t attempts, uint64_t aborts);

/**
 * From now on each interval, as it closes, is also appended to @p path as
 * one text line with one write(2), so the file survives the process's
 * SIGKILL with every interval closed before it (the cluster launcher's
 * fault timeline; doc/guides/cluster.md). The file is created (or
 * truncated) with the header "dtxn-series 1 LABEL T0_UNIX_NS INTERVAL_S";
 * each line is "T_S SECONDS COMMITTED ATTEMPTED ABORTS WARMUP(0|1)", t_s
 * as in struct dtxn_interval. A failed append closes the file (warning
 * logged); the series in memory goes on.
 *
 * @param label       the writer, e.g. "cn1": no blank, not empty.
 * @param t0_unix_ns  wall-clock time (CLOCK_REALTIME, ns) of t_s = 0, so
 *   files of several processes line up.
 * @return 0, -EINVAL (NULL or empty path, bad label, already streaming),
 *   or -errno of open(2)/write(2).
 */
int dtxn_series_stream(struct dtxn_series *s, const char *path, const char *label,
		       uint64_t t0_unix_ns);

/** Frees the series' array and closes its file; the struct may be initialised again. */
void dtxn_series_free(struct dtxn_series *s);

/* ------------------------------------------------------------------ */
/* Report                                                             */
/* ------------------------------------------------------------------ */

/** One invariant's result. */
struct dtxn_check_result {
	char name[48];
	bool ok;
	char detail[160];
};

#define DTXN_REPORT_MAX_CHECKS 32
#define DTXN_REPORT_MAX_CONF 48

/** Busy fraction of one simulated resource (an RNIC unit or a CN thread). */
struct dtxn_report_busy {
	char name[32];      /**< "mn1.atomic", "cn3.rw", "cn3.t0" */
	double busy;        /**< busy time / virtual run time, 0..1 (may pass 1 by a final op) */
	uint64_t count;     /**< ops served (RNIC unit) or CPU ns charged (thread) */
};

/**
 * What only a simulated run has (sim fabric; doc/guides/sim.md): JSON
 * section "sim". Every figure is in virtual time, so two runs with the same
 * arguments and seed give the same section.
 */
struct dtxn_report_sim {
	double virtual_seconds;          /**< the run's virtual duration */
	uint64_t events;                 /**< fabric events simulated */
	struct dtxn_report_busy bottleneck; /**< the busiest entry of nic[] and threads[] */
	unsigned n_nic;
	const struct dtxn_report_busy *nic;     /**< RNIC units that served ops */
	unsigned n_threads;
	const struct dtxn_report_busy *threads; /**< every simulated CN thread */
	unsigned n_cpu;
	const char *cpu_names[8];        /**< cost-model keys, e.g. "wr_ns" */
	uint64_t cpu_units[8];           /**< units charged per key, all threads */
};

/**
 * Figures of the machine that ran the job, which vary from run to run:
 * JSON section "host", the only part of a simulated run's report that
 * differs between two runs with the same seed (doc/guides/report.md).
 * A simulated run (struct dtxn_report.sim set) shows its wall time and
 * speed; a real-time run the CPU of its worker lcores.
 */
struct dtxn_report_host {
	double wall_seconds;             /**< sim: wall time of the simulated run */
	double events_per_wall_second;   /**< sim: simulation speed */
	double cpu_seconds;              /**< sim: the process's CPU time (user + system) in
					  *   the simulated run: beside the wall time on a
					  *   shared host, where the wall time is its share */
	double events_per_cpu_second;    /**< sim: events / cpu_seconds */
	/**
	 * Real time: CPU of the worker lcores per committed txn, ns (JSON
	 * "cn_cpu_ns_per_txn": total, coordinator, nic): their scheduler
	 * loops' busy time over the measured seconds (dtxn_worker_cpu()),
	 * split into the emulated NIC's execution of the WRs (nic) and the
	 * rest (coordinator: protocol, txn layer, scheduler, fabric calls).
	 */
	bool has_cpu;
	double cpu_ns_per_txn;
	double coord_ns_per_txn;
	double nic_ns_per_txn;
	double cn_busy;                  /**< busy time / (worker lcores x seconds), 0..1 */
	/**
	 * Real time: the share of the measured wall time the worker threads
	 * had a CPU (their OS CPU clocks), 0..1, the mean over the workers;
	 * the TSC busy times were scaled by it, so that another process's
	 * time on the core is not counted (JSON "cn_running").
	 */
	double cn_running;
};

/** Most entries of a fabric driver's own counters (struct dtxn_report_driver). */
#define DTXN_REPORT_MAX_DRIVER_KV 16

/**
 * What a fabric driver counts besides the fabric API's per-MN verbs
 * (e.g. mlx5's doorbells, inline WRs, signaled WRs, masked-CAS fallbacks:
 * dtxn_mlx5_stats_get(), doc/guides/mlx5.md): JSON section
 * "fabric_driver" {"name": ..., key: value, ...} and a "fabric driver"
 * block in the summary, in the order given. The report only formats it;
 * the caller fills it from the driver.
 */
struct dtxn_report_driver {
	const char *name;   /**< the driver, e.g. "mlx5" */
	unsigned n;         /**< entries of kv[], at most DTXN_REPORT_MAX_DRIVER_KV */
	struct dtxn_report_kv {
		const char *key; /**< JSON key and summary label, e.g. "doorbells" */
		const char *str; /**< a string value; NULL: the value is u64 */
		uint64_t u64;
	} kv[DTXN_REPORT_MAX_DRIVER_KV];
};

/** Everything the final report shows. */
/** One step of a CN recovery (section "recovery"). */
struct dtxn_report_recovery_step {
	char name[24];       /**< e.g. "undo-logs", "unlock" */
	char unit[16];       /**< what @c work counts, e.g. "records", "locks" */
	double start_ms;     /**< since the run began, ms */
	double ms;           /**< duration, ms */
	uint64_t work;
};

/** The recovery of one dead CN. */
struct dtxn_report_recovery_cn {
	char node[16];       /**< the dead CN, "cnJ" */
	char by[16];         /**< the survivor that detected and recovered it */
	double detected_ms;  /**< since the run began, ms */
	double recovered_ms; /**< since the run began, ms */
	int rc;              /**< 0, or the recovery's -errno */
	uint64_t txns_seen, rolled_back, rolled_forward, locks_released, wrs;
	unsigned n_steps;
	struct dtxn_report_recovery_step step[8];
};

/**
 * Section "recovery" (doc/guides/cluster.md, "Recovery"): a CN failure
 * (--fault), who detected it when, each recovery's steps, and the
 * survivors' throughput around it. Times in ms since the run began
 * (warm-up included; virtual on sim).
 */
struct dtxn_report_recovery {
	char dead[96];       /**< the CNs killed, "cn1,cn2" */
	double fault_ms;     /**< when */
	double lease_ms;
	double detect_ms;    /**< fault -> first detection, ms */
	double recovery_ms;  /**< first detection -> last recovery done, ms */
	double back_ms;      /**< first detection -> the end of the first interval whose survivors' rate is >= 90% of pre_tps; < 0: never */
	double pre_tps;      /**< survivors' committed txn/s before the fault (measured intervals) */
	double low_tps;      /**< their lowest interval rate from the fault to back_ms */
	double post_tps;     /**< their rate from back_ms to the end */
	uint64_t dead_committed; /**< txns the dead CNs committed before the fault (kept, and counted in every figure) */
	uint64_t dropped_chains; /**< sim, test aid --fault-drop: chains the dead CNs had posted that were lost with them */
	uint64_t dropped_wrs;    /**< their WRs */
	unsigned n_cn;
	struct dtxn_report_recovery_cn cn[DTXN_MAX_NODES];
	const struct dtxn_series *survivors; /**< the survivors' intervals; NULL: none */
};

struct dtxn_report {
	/* configuration, as key/value strings, in order */
	unsigned n_conf;
	char conf_key[DTXN_REPORT_MAX_CONF][32];
	char conf_val[DTXN_REPORT_MAX_CONF][96];
	double seconds;                 /**< measured run time */
	const char *type_names[DTXN_STATS_MAX_TYPES];
	const char *reason_names[DTXN_STATS_MAX_REASONS]; /**< by reason code; NULL: not listed */
	const char *wait_names[DTXN_STATS_MAX_WAITS]; /**< by wait kind; NULL: not listed; none: no "waits" section */
	unsigned n_reasons;             /**< named codes are < n_reasons; 0: all slots */
	struct dtxn_run_stats stats;    /**< merged */
	uint16_t n_mn;
	struct dtxn_fabric_counters per_mn[DTXN_MAX_NODES]; /**< verbs to each MN */
	/** CN-to-CN messages (SENDs on lib/rpc's QPs, e.g. Lotus's lock RPCs)
	 * to each peer CN, by node id; JSON "cn_messages" */
	uint64_t cn_msgs[DTXN_MAX_NODES];
	unsigned n_checks;
	struct dtxn_check_result checks[DTXN_REPORT_MAX_CHECKS];
	/* MN memory (section "memory", doc/guides/report.md): per MN, by kind */
	bool has_mem;                   /**< false: no memory section */
	struct dtxn_store_mem mem[DTXN_MAX_NODES]; /**< n_mn entries (dtxn_catalog_mem()) */
	uint64_t raw_bytes;             /**< raw bytes (key + value) of the loaded rows, one copy */
	uint16_t copies;                /**< copies of each row (replicas) */
	/** FAAs of delta-heap chunks in the run (every table's delta_faas,
	 *  dtxn_store_heap_census()): MN atomics that allocate, not lock */
	uint64_t delta_chunks;
	double load_seconds;            /**< time the load took (wall clock), s; JSON: in "memory", or in "host" when there is one */
	/* method (doc/guides/report.md, "Method") */
	double warmup_seconds;          /**< run but not counted in any figure, s */
	const char *retry;              /**< "same" or "fresh": what followed an abort; NULL: not shown */
	const struct dtxn_series *series; /**< interval throughput; NULL: none */
	const struct dtxn_report_sim *sim;   /**< simulated run: section "sim"; else NULL */
	const struct dtxn_report_host *host; /**< section "host" (wall clock); NULL: none */
	const struct dtxn_report_recovery *recovery; /**< section "recovery"; NULL: none */
	const struct dtxn_report_driver *driver; /**< section "fabric_driver"; NULL: none */
};

/**
 * Appends a configuration entry (value formatted with printf). Key and
 * value are truncated to their fields; past DTXN_REPORT_MAX_CONF entries
 * the entry is dropped with a warning.
 */
void dtxn_report_conf(struct dtxn_report *r, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/**
 * Appends an invariant result (detail formatted with printf). Past
 * DTXN_REPORT_MAX_CHECKS results a passing one is dropped and a failing one
 * replaces the last result unless that already failed, so
 * dtxn_report_ok() still sees the failure.
 */
void dtxn_report_check(struct dtxn_report *r, const char *name, bool ok,
		       const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/**
 * Prints the live line: elapsed s, txn/s over the last interval, abort
 * rate, P50/P99 µs of the interval.
 */
void dtxn_report_live(FILE *out, double elapsed_s, double interval_s,
		      uint64_t d_commits, uint64_t d_attempts, uint64_t d_aborts,
		      const struct dtxn_hist *interval_lat);

/** Prints the human summary. */
void dtxn_report_print(const struct dtxn_report *r, FILE *out);

/**
 * Writes the report as JSON (schema: doc/guides/report.md) to @p path,
 * atomically (a temporary file renamed into place), so a failed run never
 * leaves a partial file.
 * @return 0 or -errno.
 */
int dtxn_report_write_json(const struct dtxn_report *r, const char *path);

/** @return true if every check passed (also true with no check). */
bool dtxn_report_ok(const struct dtxn_report *r);

#ifdef __cplusplus
}
#endif
#endif /* DTXN_STATS_H */
