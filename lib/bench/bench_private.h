/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DTXN_BENCH_PRIVATE_H
#define DTXN_BENCH_PRIVATE_H

/*
 * Shared by the files of lib/bench only (never installed): the log type,
 * the one-line error helper and the helpers the procedures share.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_log.h>

#include "dtxn_bench.h"

extern int dtxn_bench_logtype;

#define BENCH_LOG(level, ...) \
	rte_log(RTE_LOG_##level, dtxn_bench_logtype, "dtxn.bench: " __VA_ARGS__)

/** Writes a one-line message into b->err (registry.c). */
void bench_set_err(struct dtxn_bench *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/**
 * Checks every option value of b->conf against its [min, max] (a conf may
 * be filled without dtxn_opt_set()).
 * @return 0, or -EINVAL with b->err naming the first bad option.
 */
int bench_conf_check(struct dtxn_bench *b);

/**
 * The `theta` option of a benchmark whose key choice has a rule of its
 * own by default (SmallBank's hot set, TPC-C's NURand items): off unless
 * given (DTXN_OPT_UNSET), else a zipf skew in [0, DTXN_ZIPF_THETA_MAX],
 * 0 uniform. @p type is the conf struct, @p field its double member.
 */
#define BENCH_THETA_OPT(type, field, help) \
	{ "theta", DTXN_OPT_DOUBLE, offsetof(type, field), DTXN_OPT_UNSET, 0, \
	  DTXN_ZIPF_THETA_MAX, help }

/**
 * Prepares @p z over @p n ranks for a BENCH_THETA_OPT value (registry.c;
 * create time, main lcore; O(min(n, 2^20))).
 * @param what  what is drawn, for the DEBUG log (e.g. "accounts").
 * @return 1 (theta given: draw with @p z), 0 (not given: @p z untouched,
 *   use the benchmark's own rule), or -EINVAL with b->err set (theta out
 *   of [0, DTXN_ZIPF_THETA_MAX], for a conf not filled by dtxn_opt_set()).
 */
int bench_theta_init(struct dtxn_bench *b, struct dtxn_zipf *z, uint64_t n, double theta,
		     const char *what);

/**
 * After a successful execute: true if every item is non-NULL and exists.
 * Otherwise rolls the txn back with DTXN_ABORT_NOT_FOUND (a missing record
 * is a bug in the KVS and SmallBank benchmarks) and returns false.
 */
static inline bool
bench_items_exist(struct dtxn_txn *t, struct dtxn_item *const *it, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		if (it[i] == NULL || !dtxn_item_exists(it[i])) {
			dtxn_txn_abort(t, DTXN_ABORT_NOT_FOUND);
			return false;
		}
	}
	return true;
}

/** @return true if @p id is among the @p n ids of @p ids (a txn's records drawn so far). */
static inline bool
bench_id_taken(const uint64_t *ids, unsigned n, uint64_t id)
{
	for (unsigned i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

/** Adds @p v to one of the coordinator's bookkeeping counters (own lcore only). */
static inline void
bench_acc_add(struct dtxn_bench_ctx *ctx, unsigned i, int64_t v)
{
	__atomic_store_n(&ctx->acc[i], ctx->acc[i] + v, __ATOMIC_RELEASE);
}

/**
 * Commits @p t; on success adds @p v to bookkeeping counter @p i. While
 * the commit runs, (i, v) waits in ctx->pending, so that a txn a recovery
 * completes after its CN died mid-commit is still counted
 * (dtxn_bench_ctx_settle()). Coordinator's coroutine; yields.
 * @return dtxn_txn_commit()'s.
 */
static inline int
bench_commit(struct dtxn_bench_ctx *ctx, struct dtxn_txn *t, unsigned i, int64_t v)
{
	int rc;

	/* Release stores, in this order: a CN process killed between any two
	 * of them leaves a state its survivors settle exactly (the context
	 * lives in shared hugepage memory; dtxn_bench_ctx_settle()): pending
	 * is never set without its index and base, and is cleared only after
	 * acc[] holds the txn's share (acc[i] != base tells it is there). */
	__atomic_store_n(&ctx->pending_idx, i, __ATOMIC_RELEASE);
	__atomic_store_n(&ctx->pending_base, ctx->acc[i], __ATOMIC_RELEASE);
	__atomic_store_n(&ctx->pending, v, __ATOMIC_RELEASE);
	rc = dtxn_txn_commit(t);
	if (rc == DTXN_OK && v != 0)
		bench_acc_add(ctx, i, v);
	__atomic_store_n(&ctx->pending, 0, __ATOMIC_RELEASE);
	return rc;
}

#endif /* DTXN_BENCH_PRIVATE_H */
