/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DTXN_BENCH_H
#define DTXN_BENCH_H

/**
 * @file
 * Benchmarks (ARCHITECTURE.md, "Benchmarks"): each is a table set, a
 * loader, a generator with the standard mix, procedures written once
 * against the transaction API, and invariant checks run after the run.
 * Benchmarks register by name (DTXN_BENCH_REGISTER) and declare their
 * options in a table the app turns into command-line options and INI keys.
 * Specs: ../shared/papers/bench-specs.md.
 *
 * Also here: the coordinator loop (dtxn_bench_coord_main) and the seeded
 * generators every benchmark shares (xoshiro256**, zipf, NURand).
 *
 * Thread-safety: a struct dtxn_bench is built on the main lcore and
 * read-only during the run; a struct dtxn_bench_ctx belongs to one
 * coordinator.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dtxn_stats.h"
#include "dtxn_txn.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* Seeded generators                                                  */
/* ------------------------------------------------------------------ */

/** xoshiro256** state: deterministic for a seed, one per coordinator. */
struct dtxn_rng {
	uint64_t s[4];
};

/** Seeds from a 64-bit seed (expanded with splitmix64). */
void dtxn_rng_seed(struct dtxn_rng *r, uint64_t seed);
/** @return 64 random bits. */
uint64_t dtxn_rng_next(struct dtxn_rng *r);
/** @return uniform in [0, n); n > 0 (Lemire's multiply-shift, unbiased). */
uint64_t dtxn_rng_range(struct dtxn_rng *r, uint64_t n);
/** @return uniform in [lo, hi], lo <= hi. */
uint64_t dtxn_rng_between(struct dtxn_rng *r, uint64_t lo, uint64_t hi);
/** @return uniform double in [0, 1). */
double dtxn_rng_double(struct dtxn_rng *r);

/** Zipf generator over [0, n) (Gray et al., "Quickly generating billion-record synthetic databases"; YCSB's). */
struct dtxn_zipf {
	uint64_t n;
	double theta, alpha, zetan, eta, zeta2;
};

/**
 * The largest theta the benchmarks' `theta` options accept. Gray et al.'s
 * method needs theta < 1 (its exponent is 1 / (1 - theta)); at 0.999 the
 * top rank of 10^5 keys already takes 8.2% of the draws.
 */
#define DTXN_ZIPF_THETA_MAX 0.999

/**
 * Prepares a zipf distribution; O(min(n, 2^20)) once (zeta(n)).
 * @param n      ranks, > 0.
 * @param theta  skew in [0, 1); 0 is uniform.
 * @return 0 or -EINVAL (z NULL, n 0, theta outside [0, 1) or not finite).
 */
int dtxn_zipf_init(struct dtxn_zipf *z, uint64_t n, double theta);
/**
 * @return a rank in [0, n); rank 0 is the hottest: P(rank k) =
 *   (k + 1)^-theta / zeta(n, theta). Any lcore (z is read-only).
 */
uint64_t dtxn_zipf_next(const struct dtxn_zipf *z, struct dtxn_rng *r);

/** Zipf redraws of a taken rank before dtxn_zipf_next_distinct() walks to a free one. */
#define DTXN_ZIPF_MAX_REDRAWS 1000

/**
 * Draws a rank that is not among @p taken: dtxn_zipf_next() again while
 * the draw is taken, at most DTXN_ZIPF_MAX_REDRAWS times, then (heavily
 * skewed, nearly every rank taken) the next free rank upwards from the
 * last draw, wrapping at n. For a transaction's distinct records (KVS)
 * or accounts (SmallBank's second account).
 * @param taken    ranks already drawn (NULL when n_taken is 0).
 * @param n_taken  entries in @p taken; must be < z->n (else no rank is free:
 *   the last draw is returned).
 * @return a rank in [0, n) not in @p taken.
 */
uint64_t dtxn_zipf_next_distinct(const struct dtxn_zipf *z, struct dtxn_rng *r,
				 const uint64_t *taken, unsigned n_taken);

/** TPC-C/TATP NURand(A, x, y) = (((rand(0,A) | rand(x,y)) + C) % (y-x+1)) + x. */
uint64_t dtxn_nurand(struct dtxn_rng *r, uint64_t A, uint64_t x, uint64_t y, uint64_t C);

/* ------------------------------------------------------------------ */
/* Options                                                            */
/* ------------------------------------------------------------------ */

enum dtxn_opt_type {
	DTXN_OPT_U64,     /**< stored as uint64_t */
	DTXN_OPT_DOUBLE,  /**< stored as double */
	/**
	 * One of the names of struct dtxn_opt.names, stored as its index
	 * (uint64_t); def, min and max are indexes (min 0, max the last).
	 */
	DTXN_OPT_NAME,
};

/**
 * struct dtxn_opt.def of an option that is off unless given: no input can
 * set the value it stands for, and the benchmark applies its own rule
 * instead (SmallBank's hot set and TPC-C's NURand item choice without
 * `theta`; TPC-C's mix_* entries, taken from its `mix` preset). A
 * DTXN_OPT_DOUBLE option holds -1.0 (its min must be >= 0), a
 * DTXN_OPT_U64 one DTXN_OPT_U64_UNSET (its max must be below it).
 * dtxn-app's help says "not set" and its report "off".
 */
#define DTXN_OPT_UNSET (-1.0)

/** What a DTXN_OPT_U64 option whose def is DTXN_OPT_UNSET holds until given. */
#define DTXN_OPT_U64_UNSET UINT64_MAX

/** One benchmark option: --name VALUE on the command line, name = VALUE in INI. */
struct dtxn_opt {
	const char *name;      /**< e.g. "keys" */
	enum dtxn_opt_type type;
	size_t offset;         /**< in the benchmark's conf struct */
	double def, min, max;  /**< default (or DTXN_OPT_UNSET) and inclusive range */
	const char *help;
	/** DTXN_OPT_NAME only: the accepted names, NULL-terminated, max + 1 of them. */
	const char *const *names;
};

/**
 * @return the name a DTXN_OPT_NAME option's stored index @p v stands for,
 *   or NULL (not a DTXN_OPT_NAME option, or @p v out of range). Pure.
 */
const char *dtxn_opt_name(const struct dtxn_opt *o, uint64_t v);

/**
 * Parses and range-checks an option value into @p conf.
 * @return 0, or -EINVAL with a one-line message in @p err naming the option.
 */
int dtxn_opt_set(const struct dtxn_opt *o, void *conf, const char *value,
		 char *err, size_t errlen);

/* ------------------------------------------------------------------ */
/* Benchmarks                                                         */
/* ------------------------------------------------------------------ */

struct dtxn_bench;

/** A coordinator's benchmark context. */
struct dtxn_bench_ctx {
	struct dtxn_bench *bench;
	struct dtxn_coord *coord;
	struct dtxn_rng rng;
	struct dtxn_run_stats *stats;  /**< the worker's (shared by its coordinators) */
	uint64_t quota;                /**< txns to finish (committed or rolled back); 0: until stopped */
	uint64_t done;                 /**< txns finished (committed or rolled back) */
	int64_t acc[4];                /**< benchmark bookkeeping, e.g. SmallBank's deltas */
	int64_t pending;               /**< added to acc[pending_idx] if the txn being committed commits */
	unsigned pending_idx;
	int64_t pending_base;          /**< acc[pending_idx] when pending was set */
	bool finished;
};

/**
 * A coordinator whose CN died in the middle of a commit that a recovery
 * completed (struct dtxn_recovery.visible), or that had committed when
 * its process was killed: adds the bookkeeping its procedure would have
 * added on success (ctx->pending), unless acc[pending_idx] already holds
 * it (it no longer equals pending_base), so that the invariants count the
 * txn once. The caller has decided that the txn committed. Main lcore
 * after the run, or a survivor's lcore once the CN is dead.
 */
void dtxn_bench_ctx_settle(struct dtxn_bench_ctx *ctx);

/**
 * A coordinator's benchmark counters as its commit record carries them to
 * MN memory (lib/txn's dtxn_coord_set_commit_record(); doc/guides/
 * cluster.md, "Counters of a dead CN"): written in the decisive batch of
 * every transaction that commits through bench_commit(), to the
 * coordinator's slot on every MN the batch touches, it holds the
 * counters before that transaction and the share the transaction adds if
 * it commits. A survivor on another host reads the dead coordinator's
 * slot on every MN, takes the newest record (dtxn_bench_record_newest())
 * and settles it with its recovery's verdict on that transaction
 * (dtxn_bench_record_settle()). 64 bytes, little-endian as
 * the CPU writes it (one build on every host).
 */
struct dtxn_bench_record {
	uint64_t txn_id;       /**< the transaction whose decisive batch wrote it */
	int64_t acc[4];        /**< dtxn_bench_ctx.acc before that transaction */
	int64_t pending;       /**< its share, added to acc[pending_idx] if it committed */
	uint32_t pending_idx;
	uint32_t magic;        /**< DTXN_BENCH_RECORD_MAGIC: a record was written */
	uint64_t rsvd;
};

/** struct dtxn_bench_record.magic once written ("dbre"). */
#define DTXN_BENCH_RECORD_MAGIC UINT32_C(0x65726264)

/**
 * A dtxn_commit_record_fn (lib/txn): fills @p rec (struct
 * dtxn_bench_record) from the coordinator context @p arg (struct
 * dtxn_bench_ctx *) for transaction @p t. Coordinator's lcore.
 */
void dtxn_bench_record_fill(void *arg, const struct dtxn_txn *t, void *rec);

/**
 * The newest of one coordinator's commit records @p r[0..@p n) (its slot
 * as READ from each MN: a decisive batch writes the record to every MN it
 * touches, so the slots of one coordinator may hold records of different
 * transactions): among those whose magic is set, the one with the largest
 * txn_id (one coordinator's transaction ids only grow, lib/txn's
 * dtxn_txn_id()); equal ids are copies of one record.
 * @return a pointer into @p r, or NULL when no record's magic is set (the
 *   coordinator committed nothing through bench_commit()) or @p r is NULL.
 *   Pure; any thread.
 */
const struct dtxn_bench_record *dtxn_bench_record_newest(const struct dtxn_bench_record *r,
							 unsigned n);

/**
 * Adds to @p acc a dead coordinator's counters from its last record @p r
 * (dtxn_bench_record_newest() of its slots on every MN):
 * r->acc, plus r->pending at r->pending_idx if its transaction stayed
 * committed (@p kept: the recovery listed it visible, or did not undo
 * it; a transaction whose decisive batch wrote the record and that ended
 * before the CN died had committed). A record never written (magic not
 * set: the coordinator committed nothing through bench_commit()) adds 0.
 * Pure; any thread.
 */
void dtxn_bench_record_settle(const struct dtxn_bench_record *r, bool kept, int64_t acc[4]);

/**
 * Routing (Lotus §4.3, hybrid routing; doc/guides/lotus.md): the generator
 * is the routing layer. A read-write transaction must run on the CN that
 * owns its first record's shard, so its procedure draws its inputs again
 * (at most DTXN_BENCH_ROUTE_TRIES times, then runs it where it is) until
 * dtxn_bench_routes_here() says yes for the first record's key; read-only
 * ones run wherever they were drawn (a uniformly random CN). Protocols that
 * do not route always say yes, so the first draw stands. The cap: with k
 * equal homes a draw lands home with odds 1/k, so 512 tries leave
 * (1 - 1/k)^512 of the txns unrouted: 2e-6 for CREST's cache=part with 40
 * lcores per CN (64 tries left 20%), none to speak of for Lotus's 9 CNs
 * (5e-4 with 64).
 */
#define DTXN_BENCH_ROUTE_TRIES 512

/** @return true if a read-write txn whose first record is @p key of @p table runs on ctx's CN. */
static inline bool
dtxn_bench_routes_here(const struct dtxn_bench_ctx *ctx, uint32_t table, uint64_t key)
{
	return ctx->coord == NULL || dtxn_coord_routes_here(ctx->coord, table, key);
}

/** Result of one procedure attempt (besides DTXN_OK and abort reasons). */
#define DTXN_BENCH_ROLLBACK (-1)   /**< expected application failure: counted, not retried */

/**
 * A benchmark. All ops but destroy and committed are mandatory
 * (dtxn_bench_register() refuses a table without them).
 */
struct dtxn_bench_ops {
	const char *name;
	const char *desc;
	const struct dtxn_opt *opts;
	unsigned n_opts;
	size_t conf_size;              /**< bytes of the conf struct the options fill */
	unsigned n_types;
	const char *const *type_names;
	/** Validates the conf, prepares generators; 0 or -EINVAL with b->err set. */
	int (*create)(struct dtxn_bench *b);
	/** Frees b->priv; called by dtxn_bench_free() even if create failed or never ran (priv may be NULL). */
	void (*destroy)(struct dtxn_bench *b);
	/** Adds the tables (dtxn_db_add_table); 0 or -errno with b->err set. */
	int (*define)(struct dtxn_bench *b, struct dtxn_db *db);
	/** Loads the initial population (dtxn_db_load); 0 or -errno with b->err set. */
	int (*load)(struct dtxn_bench *b, struct dtxn_db *db);
	/** Draws the next transaction type from the mix. */
	unsigned (*pick)(struct dtxn_bench *b, struct dtxn_rng *r);
	/**
	 * Runs one attempt of a transaction of @p type (begin .. commit). Must
	 * draw its inputs from ctx->rng only (a retry replays the same rng).
	 * @return DTXN_OK (committed), an abort reason (retried), or
	 *   DTXN_BENCH_ROLLBACK.
	 */
	int (*run)(struct dtxn_bench_ctx *ctx, unsigned type);
	/** Optional: called once per committed txn, after run() returned DTXN_OK (bookkeeping). */
	void (*committed)(struct dtxn_bench_ctx *ctx, unsigned type);
	/**
	 * Checks the invariants after the run, reading MN memory
	 * (dtxn_db_scan/get), and adds one result per invariant to @p r.
	 * @return 0, or -errno if the check itself could not run.
	 */
	int (*check)(struct dtxn_bench *b, struct dtxn_db *db,
		     struct dtxn_bench_ctx *const *ctxs, unsigned n_ctx,
		     struct dtxn_report *r);
};

/**
 * What the coordinator loop does after a concurrency abort (dtxn-app
 * --retry; doc/guides/report.md, "Method").
 */
enum dtxn_bench_retry {
	/** Retry the same transaction with the same inputs after a back-off (TPC-C spec, the default). */
	DTXN_RETRY_SAME = 0,
	/**
	 * Give the transaction up and draw a new one at once, as the FORD and
	 * Motor artifacts do (shared/papers/ford.md §5: an aborted txn is not
	 * retried).
	 */
	DTXN_RETRY_FRESH,
};

/**
 * Parses a retry rule name.
 * @return DTXN_RETRY_SAME ("same"), DTXN_RETRY_FRESH ("fresh"), or -EINVAL.
 */
int dtxn_bench_retry_parse(const char *name);

/** @return "same" or "fresh" (NULL for an unknown value). */
const char *dtxn_bench_retry_name(enum dtxn_bench_retry r);

/** A benchmark instance. */
struct dtxn_bench {
	const struct dtxn_bench_ops *ops;
	void *conf;          /**< conf_size bytes, filled with the defaults by dtxn_bench_alloc */
	void *priv;          /**< the benchmark's own state */
	uint64_t seed;
	enum dtxn_bench_retry retry; /**< after an abort; DTXN_RETRY_SAME from dtxn_bench_alloc */
	char err[160];       /**< one-line message of the last failure */
};

/**
 * Registers a benchmark (from a constructor).
 * @return 0, -EINVAL, -EEXIST, -ENOSPC.
 */
int dtxn_bench_register(const struct dtxn_bench_ops *ops);
#define DTXN_BENCH_REGISTER(nm, ops) \
	RTE_INIT(dtxn_bench_register_##nm) { (void)dtxn_bench_register(ops); }

/** @return the benchmark registered under @p name, or NULL. */
const struct dtxn_bench_ops *dtxn_bench_find(const char *name);
/** Writes the registered names, comma-separated, to @p buf. */
void dtxn_bench_list(char *buf, size_t len);
/** Visits every registered benchmark (for option tables). */
unsigned dtxn_bench_count(void);
const struct dtxn_bench_ops *dtxn_bench_at(unsigned i);

/**
 * Allocates an instance with its conf set to the option defaults; priv is
 * NULL until ops->create() runs.
 * @return it, or NULL with rte_errno EINVAL (@p ops NULL) or ENOMEM.
 */
struct dtxn_bench *dtxn_bench_alloc(const struct dtxn_bench_ops *ops, uint64_t seed);
/** Frees an instance (calls destroy if set). NULL is a no-op. */
void dtxn_bench_free(struct dtxn_bench *b);

/**
 * The coordinator loop (a dtxn_coord_fn; @p arg is a struct
 * dtxn_bench_ctx): draw a type, run it, and after an abort either retry
 * the same inputs after a short randomized back-off (bench->retry
 * DTXN_RETRY_SAME) or draw a new transaction at once (DTXN_RETRY_FRESH);
 * count commits, aborts by reason, rollbacks and latency (first attempt to
 * commit) in ctx->stats, until dtxn_coord_stopping() or the quota is
 * reached.
 *
 * Details: the quota counts this coordinator's finished txns (ctx->done:
 * committed or rolled back; an aborted attempt is retried or, with
 * DTXN_RETRY_FRESH, given up, never finished). With DTXN_RETRY_SAME,
 * retry k (0-based) of a transaction waits a uniform time in
 * [0, min(64 us, 1 us << k)), drawn from a stream of its own (seeded once
 * from ctx->rng), so ctx->rng is restored to the same state before every
 * attempt. An abort counts aborts[reason] and attempts; when the run is
 * stopping, the loop leaves instead of retrying. ctx->coord is set to
 * @p c; ctx->finished becomes true on exit. Counters are updated with
 * relaxed atomic stores (read by the main lcore for the live line).
 */
void dtxn_bench_coord_main(struct dtxn_coord *c, void *arg);

#ifdef __cplusplus
}
#endif
#endif /* DTXN_BENCH_H */
