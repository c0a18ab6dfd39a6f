/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DTXN_BENCH_ROOM_H
#define DTXN_BENCH_ROOM_H

/*
 * Room for the rows a run inserts (never installed; used by tpcc and
 * tatp). Two jobs:
 *
 * 1. Sizing. An insert takes a free slot of its key's *home* bucket
 *    (doc/guides/ford.md, "Insert"), so a table that grows must keep every
 *    bucket below full, not just the table below its max_keys: with
 *    rows hashed uniformly over n buckets of S slots, a bucket holds
 *    Poisson(rows / n) keys, and an insert finds its home bucket full with
 *    probability P(Poisson(rows / n) >= S). bench_room_buckets() returns
 *    the fewest buckets that keep that probability at most p_full when
 *    the table holds @p rows.
 *
 * 2. Giving up. An insert whose home bucket is full aborts with
 *    DTXN_ABORT_INDEX_FULL (counted by reason in the report) and is
 *    retried like any abort; a retry has the same key, so it can only
 *    succeed if a slot frees up (a concurrent insert that aborts, a
 *    delete). bench_room_outcome() turns the BENCH_ROOM_TRIES-th
 *    consecutive INDEX_FULL of one transaction into DTXN_BENCH_ROLLBACK,
 *    so a run that fills a table keeps going and ends cleanly (and says
 *    so once in the log). It keeps its count in ctx->acc[BENCH_ROOM_ACC].
 */

#include <stdint.h>

#include "dtxn_bench.h"

/** ctx->acc slot bench_room_outcome() uses: (ctx->done << 8) | streak. */
#define BENCH_ROOM_ACC 3
/** Consecutive INDEX_FULL aborts of one transaction before it is given up. */
#define BENCH_ROOM_TRIES 8

/**
 * Buckets for a table that must hold @p rows with inserts failing with
 * probability at most @p p_full (see above).
 * @param slots   slots per bucket, >= 1.
 * @param p_full  in (0, 1).
 * @return n_buckets >= 1.
 */
uint64_t bench_room_buckets(uint64_t rows, uint32_t slots, double p_full);

/**
 * Room per part when @p rows rows fall on @p parts parts uniformly at
 * random (TPC-C NewOrders on districts, each order id of a district a
 * direct-mapped slot): the fewest slots s per part such that a part
 * overflows, P(Poisson(rows / parts) > s), with probability at most
 * @p p_full.
 * @param parts   >= 1.
 * @param p_full  in (0, 1).
 * @return s >= 1.
 */
uint64_t bench_room_cap(uint64_t rows, uint64_t parts, double p_full);

/**
 * Filters a procedure's result (own coordinator's lcore only).
 * @param rc  what the attempt returned (DTXN_OK, an abort reason, or
 *   DTXN_BENCH_ROLLBACK).
 * @param bench  the benchmark's name, for the one-time warning.
 * @return @p rc, except DTXN_BENCH_ROLLBACK for the BENCH_ROOM_TRIES-th
 *   consecutive DTXN_ABORT_INDEX_FULL of the same transaction.
 */
int bench_room_outcome(struct dtxn_bench_ctx *ctx, int rc, const char *bench);

#endif /* DTXN_BENCH_ROOM_H */
