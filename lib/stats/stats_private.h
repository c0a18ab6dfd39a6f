/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DTXN_STATS_PRIVATE_H
#define DTXN_STATS_PRIVATE_H

/**
 * @file
 * Internal to lib/stats, never installed: the figures derived from a
 * struct dtxn_report that both the text summary (report.c) and the JSON
 * report (json.c) show, computed once in view.c so the two always agree.
 */

#include <stdint.h>

#include <rte_log.h>

#include "dtxn_fabric.h"
#include "dtxn_stats.h"

extern int dtxn_stats_logtype;
#define STATS_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_##level, dtxn_stats_logtype, "dtxn.stats: " fmt "\n", ##__VA_ARGS__)

/** Opcodes that are verbs a CN issues to an MN: READ .. SEND (not RECV). */
#define STATS_N_VERBS (DTXN_WR_SEND + 1)

/** Derived, report-wide figures. */
struct stats_view {
	unsigned n_types;         /**< types shown, <= DTXN_STATS_MAX_TYPES */
	unsigned n_reasons;       /**< reason slots looked at, <= DTXN_STATS_MAX_REASONS */
	uint16_t n_mn;            /**< MNs shown, <= DTXN_MAX_NODES */
	uint64_t commits, attempts, rollbacks;
	uint64_t aborts;          /**< concurrency aborts, all reasons */
	uint64_t reason[DTXN_STATS_MAX_REASONS];
	uint64_t false_aborts;    /**< of @c aborts, false conflicts (dtxn_txn_stats.false_aborts) */
	double false_share;       /**< false_aborts / aborts, 0..1 */
	struct dtxn_hist lat;     /**< every type merged */
	double committed_tps, attempted_tps;
	double abort_rate;        /**< aborts / attempts, 0..1 */
	uint64_t ops[DTXN_WR_OP_MAX];   /**< summed over MNs */
	uint64_t bytes[DTXN_WR_OP_MAX]; /**< summed over MNs */
	double verbs_per_txn[STATS_N_VERBS];
	double mn_atomics_per_txn;      /**< CAS + FAA + masked CAS */
	double total_verbs_per_txn;     /**< READ .. SEND */
	double bytes_per_txn;           /**< READ .. SEND payload bytes */
	uint64_t cn_msgs;               /**< CN-to-CN messages, every peer */
	double cn_msgs_per_txn;
};

/** Fills @p v from @p r. */
void stats_view_build(const struct dtxn_report *r, struct stats_view *v);

/** @return num / den, or 0 when den is 0 or the quotient is not finite. */
double stats_ratio(double num, double den);

/** Concurrency aborts of one type, all reasons. */
uint64_t stats_type_aborts(const struct dtxn_txn_stats *t, unsigned n_reasons);

/**
 * @return the name of reason @p i, or NULL when it has none (then it is
 *   not shown).
 */
const char *stats_reason_name(const struct dtxn_report *r, unsigned i);

/** @return the name of type @p i; "type<i>" (in @p buf) when it has none. */
const char *stats_type_name(const struct dtxn_report *r, unsigned i,
			    char *buf, size_t len);

/** @return the name of opcode @p op; "op<op>" (in @p buf) when it has none. */
const char *stats_op_name(unsigned op, char *buf, size_t len);

/* report_mem.c: the MN memory part of the report */

/** MN memory summed over the MNs, and the overheads (fractions: 0.2 = 20%). */
struct stats_mem_view {
	struct dtxn_store_mem sum;  /**< every field summed over the MNs */
	double overhead;            /**< sum.total / sum.raw - 1: every byte held */
	double table_overhead;      /**< (index + values) / raw - 1: the tables, empty slots included */
	double row_overhead;        /**< (index + values - empty) / raw - 1: the slots holding rows */
	double in_use_overhead;     /**< in use (total - unused - heap_free) / raw - 1: what an allocator gave out */
};

/** Bytes in use of @p e: total - unused - heap_free (struct dtxn_store_mem). */
static inline uint64_t
stats_mem_in_use(const struct dtxn_store_mem *e)
{
	uint64_t off = e->unused + e->heap_free;

	return e->total > off ? e->total - off : 0;
}

/** Fills @p m from @p r (zeros without memory figures). */
void stats_mem_view_build(const struct dtxn_report *r, struct stats_mem_view *m);

/** Prints the MN memory lines of the summary (nothing if r->has_mem is false). */
void stats_print_mem(const struct dtxn_report *r, FILE *out);

/* report_sim.c: the "sim" and "host" parts of a simulated run's report */

/** Prints the simulation and host lines of the summary (nothing if absent). */
void stats_print_sim(const struct dtxn_report *r, FILE *out);

struct json_t;
/* json.c: value builders the report's sections share */

/** @return a JSON real of @p v (0 when not finite), or NULL (out of memory). */
struct json_t *stats_json_num(double v);
/** @return a JSON integer of @p v (saturated at INT64_MAX), or NULL. */
struct json_t *stats_json_u64(uint64_t v);
/** Sets obj[key] = val; false on failure (the reference is taken either way). */
bool stats_json_put(struct json_t *obj, const char *key, struct json_t *val);

/** @return the JSON array of a throughput series ("intervals"' format; [] for NULL), or NULL (out of memory). */
struct json_t *stats_json_intervals(const struct dtxn_series *s);
/** @return the JSON object "memory", or NULL (absent, or out of memory). */
struct json_t *stats_json_mem(const struct dtxn_report *r);
/** @return the JSON object of r->sim, or NULL (absent, or out of memory). */
struct json_t *stats_json_sim(const struct dtxn_report *r);
/** @return the JSON object of r->host, or NULL (absent, or out of memory). */
struct json_t *stats_json_host(const struct dtxn_report *r);

/* report_recovery.c: section "recovery" */
/** Prints the recovery lines of the summary (nothing if r->recovery is NULL). */
void stats_print_recovery(const struct dtxn_report *r, FILE *out);
/** @return the JSON object of r->recovery, or NULL (absent, or out of memory). */
struct json_t *stats_json_recovery(const struct dtxn_report *r);

/* report_driver.c: the fabric driver's own counters (r->driver) */

/** @return the JSON object "fabric_driver", or NULL (absent, or out of memory). */
struct json_t *stats_json_driver(const struct dtxn_report *r);
/** Prints the "fabric driver" block of the summary (nothing if absent). */
void stats_print_driver(const struct dtxn_report *r, FILE *out);

/*
 * Log-linear classes of nanosecond values (hist.c's buckets, waits.c's
 * latency classes): values below 2^sub are exact; above, a value whose
 * highest set bit is m falls in group m - sub + 1, which splits
 * [2^m, 2^(m+1)) into 2^sub classes of width 2^(m - sub).
 */

/** The class of @p v with 2^@p sub classes per power of two. */
static inline unsigned
stats_loglin_index(uint64_t v, unsigned sub)
{
	const uint64_t sub_n = UINT64_C(1) << sub;
	unsigned shift;

	if (v < sub_n)
		return (unsigned)v;
	shift = 63u - (unsigned)__builtin_clzll(v) - sub;
	return ((shift + 1u) << sub) + (unsigned)((v >> shift) - sub_n);
}

/** The smallest value of class @p i (stats_loglin_index() with @p sub). */
static inline uint64_t
stats_loglin_lower(unsigned i, unsigned sub)
{
	const uint64_t sub_n = UINT64_C(1) << sub;

	if (i < sub_n)
		return i;
	return (sub_n + (i & (sub_n - 1))) << ((i >> sub) - 1u);
}

/* waits.c: waits of committed txns (struct dtxn_wait_stats) */

/** The report's figures of a struct dtxn_wait_stats. */
struct stats_wait_view {
	uint64_t commits;        /**< commits counted */
	uint64_t tail_commits;   /**< the slowest latency classes holding >= 1% of them */
	uint64_t tail_min_ns;    /**< the lower bound of the tail's latency, ns */
	double lat_mean, tail_lat_mean;         /**< mean latency of all, of the tail, ns */
	double mean[DTXN_STATS_MAX_WAITS];      /**< mean wait by kind, all commits, ns */
	double tail_mean[DTXN_STATS_MAX_WAITS]; /**< mean wait by kind, the tail, ns */
};

/** @p dst += @p src. */
void stats_waits_merge(struct dtxn_wait_stats *dst, const struct dtxn_wait_stats *src);
/** @p dst = @p src, relaxed loads word by word (the owner may still count). */
void stats_waits_snapshot(struct dtxn_wait_stats *dst, const struct dtxn_wait_stats *src);
/** @p dst = @p end - @p start, word by word (one that went down: 0). */
void stats_waits_sub(struct dtxn_wait_stats *dst, const struct dtxn_wait_stats *end,
		     const struct dtxn_wait_stats *start);
/** Fills @p v from @p w. */
void stats_waits_view(const struct dtxn_wait_stats *w, struct stats_wait_view *v);
/** @return the smallest latency (ns) of class @p c. */
uint64_t stats_waits_class_min(unsigned c);

/* report_waits.c: section "waits" (nothing without r->wait_names) */

/** Prints the waits block of the summary. */
void stats_print_waits(const struct dtxn_report *r, FILE *out);
/** @return the JSON object "waits", or NULL (no wait names, no commits, or out of memory). */
struct json_t *stats_json_waits(const struct dtxn_report *r);

#endif /* DTXN_STATS_PRIVATE_H */
