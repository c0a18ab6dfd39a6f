/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The coordinator loop: draw a transaction type, run it, and after an
 * abort either retry the same inputs after a randomized exponential
 * back-off (--retry same: the TPC-C spec's rule) or give the transaction
 * up and draw a new one (--retry fresh: what the FORD and Motor artifacts
 * do, shared/papers/ford.md §5); count commits, aborts by reason,
 * rollbacks and latency.
 *
 * Counters live in the worker's struct dtxn_run_stats, written only by the
 * worker's lcore (its coordinators take turns); the main lcore reads them
 * relaxed for the live line, so each update is a relaxed atomic store of a
 * naturally aligned word (never torn).
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <rte_common.h>

#include "bench_private.h"
#include "dtxn_bench.h"
#include "dtxn_sched.h"
#include "dtxn_stats.h"

/* Back-off before retry k (0-based): uniform in [0, min(cap, base << k)). */
#define RUNNER_BACKOFF_BASE_NS UINT64_C(1000)
#define RUNNER_BACKOFF_CAP_NS UINT64_C(64000)

static const char *const g_retry_names[] = {
	[DTXN_RETRY_SAME] = "same",
	[DTXN_RETRY_FRESH] = "fresh",
};

int
dtxn_bench_retry_parse(const char *name)
{
	for (unsigned i = 0; name != NULL && i < RTE_DIM(g_retry_names); i++)
		if (strcmp(name, g_retry_names[i]) == 0)
			return (int)i;
	return -EINVAL;
}

const char *
dtxn_bench_retry_name(enum dtxn_bench_retry r)
{
	return (unsigned)r < RTE_DIM(g_retry_names) ? g_retry_names[r] : NULL;
}

/* Counters read by the live line from another thread: one writer, relaxed stores. */
static inline void
runner_add(uint64_t *c, uint64_t n)
{
	__atomic_store_n(c, *c + n, __ATOMIC_RELAXED);
}

static inline void
runner_inc(uint64_t *c)
{
	runner_add(c, 1);
}

_Static_assert(DTXN_WR_OP_MAX <= DTXN_STATS_MAX_OPS, "DTXN_STATS_MAX_OPS too small");

/* Adds to @p ts the MN verbs @p c posted since @p v0 / @p b0, and moves those on. */
static void
runner_verbs(struct dtxn_txn_stats *ts, const struct dtxn_coord *c,
	     uint64_t v0[DTXN_WR_OP_MAX], uint64_t *b0)
{
	uint64_t v[DTXN_WR_OP_MAX], b;

	dtxn_coord_verbs(c, v, &b);
	for (unsigned k = 0; k < DTXN_WR_OP_MAX; k++)
		runner_add(&ts->verbs[k], v[k] - v0[k]);
	runner_add(&ts->verb_bytes, b - *b0);
	memcpy(v0, v, sizeof(v));
	*b0 = b;
}

static uint64_t
runner_backoff_ns(struct dtxn_rng *r, unsigned retries)
{
	uint64_t bound = RUNNER_BACKOFF_CAP_NS;

	if (retries < 7)
		bound = RTE_MIN(bound, RUNNER_BACKOFF_BASE_NS << retries);
	return dtxn_rng_range(r, bound);
}

_Static_assert(DTXN_WAIT_MAX <= DTXN_STATS_MAX_WAITS, "DTXN_STATS_MAX_WAITS too small");

/* Counts what a commit of latency @p lat_ns waited: @p c's waits since @p w0. */
static void
runner_waits(struct dtxn_run_stats *s, const struct dtxn_coord *c,
	     const uint64_t w0[DTXN_WAIT_MAX], uint64_t lat_ns)
{
	uint64_t w[DTXN_WAIT_MAX];

	dtxn_coord_waits(c, w);
	for (unsigned k = 0; k < DTXN_WAIT_MAX; k++)
		w[k] -= w0[k];
	dtxn_wait_stats_add(&s->waits, lat_ns, w, DTXN_WAIT_MAX);
}

/*
 * Runs one transaction to its end (commit or rollback), retrying aborts
 * (DTXN_RETRY_SAME), or until its first abort (DTXN_RETRY_FRESH).
 * @return true if it finished (committed or rolled back); false if it was
 *   given up (fresh) or the run is stopping and it was left unfinished.
 */
static bool
runner_one(struct dtxn_bench_ctx *ctx, struct dtxn_coord *c, struct dtxn_rng *backoff,
	   unsigned type)
{
	const struct dtxn_bench_ops *ops = ctx->bench->ops;
	struct dtxn_txn_stats *ts = ctx->stats != NULL ? &ctx->stats->type[type] : NULL;
	const struct dtxn_rng inputs = ctx->rng;  /* a retry replays these */
	/* the latency's two ends: the scheduler's stamps (dtxn_co_now_ns()) */
	const uint64_t t0 = dtxn_co_now_ns(dtxn_coord_co(c));
	uint64_t w0[DTXN_WAIT_MAX], v0[DTXN_WR_OP_MAX], b0;
	unsigned retries = 0;

	dtxn_coord_waits(c, w0);
	dtxn_coord_verbs(c, v0, &b0);

	for (;;) {
		int rc;

		ctx->rng = inputs;
		rc = ops->run(ctx, type);
		if (ts != NULL) /* every attempt's verbs, counted against its type */
			runner_verbs(ts, c, v0, &b0);
		if (rc == DTXN_OK) {
			if (ts != NULL) {
				const uint64_t lat = dtxn_co_now_ns(dtxn_coord_co(c)) - t0;

				runner_inc(&ts->commits);
				runner_inc(&ts->attempts);
				dtxn_hist_add(&ts->lat, lat);
				runner_waits(ctx->stats, c, w0, lat);
			}
			if (ops->committed != NULL)
				ops->committed(ctx, type);
			return true;
		}
		if (rc == DTXN_BENCH_ROLLBACK || rc < 0) {
			if (rc != DTXN_BENCH_ROLLBACK)
				BENCH_LOG(ERR, "%s: run() returned %d for type %u; counted as a rollback\n",
					  ops->name, rc, type);
			if (ts != NULL) {
				runner_inc(&ts->rollbacks);
				runner_inc(&ts->attempts);
			}
			return true;
		}
		if (ts != NULL) {
			runner_inc(&ts->aborts[rc < DTXN_STATS_MAX_REASONS ? rc : 0]);
			if (dtxn_coord_false_abort(c))
				runner_inc(&ts->false_aborts);
			runner_inc(&ts->attempts);
		}
		if (dtxn_coord_stopping(c))
			return false;
		if (ctx->bench->retry == DTXN_RETRY_FRESH) {
			/* no back-off, but let the worker's other coordinators run */
			dtxn_co_yield_lc(dtxn_coord_co(c));
			return false;
		}
		dtxn_co_sleep_until_lc(dtxn_coord_co(c),
				       dtxn_now_ns() + runner_backoff_ns(backoff, retries));
		if (dtxn_coord_stopping(c))
			return false;
		retries++;
	}
}

_Static_assert(sizeof(struct dtxn_bench_record) == DTXN_COMMIT_RECORD_BYTES,
	       "a benchmark record is one commit record");

void
dtxn_bench_record_fill(void *arg, const struct dtxn_txn *t, void *rec)
{
	const struct dtxn_bench_ctx *ctx = arg;
	struct dtxn_bench_record *r = rec;

	r->txn_id = dtxn_txn_id(t);
	memcpy(r->acc, ctx->acc, sizeof(r->acc));
	/* bench_commit() set pending (with its index and base) before the
	 * commit; a txn committed another way adds nothing */
	r->pending = ctx->pending != 0 && ctx->acc[ctx->pending_idx] == ctx->pending_base ?
		     ctx->pending : 0;
	r->pending_idx = ctx->pending_idx < RTE_DIM(r->acc) ? ctx->pending_idx : 0;
	r->magic = DTXN_BENCH_RECORD_MAGIC;
	r->rsvd = 0;
}

const struct dtxn_bench_record *
dtxn_bench_record_newest(const struct dtxn_bench_record *r, unsigned n)
{
	const struct dtxn_bench_record *best = NULL;

	for (unsigned i = 0; r != NULL && i < n; i++)
		if (r[i].magic == DTXN_BENCH_RECORD_MAGIC &&
		    (best == NULL || r[i].txn_id > best->txn_id))
			best = &r[i];
	return best;
}

void
dtxn_bench_record_settle(const struct dtxn_bench_record *r, bool kept, int64_t acc[4])
{
	if (r->magic != DTXN_BENCH_RECORD_MAGIC)
		return;
	for (unsigned k = 0; k < RTE_DIM(r->acc); k++)
		acc[k] += r->acc[k];
	if (kept && r->pending_idx < RTE_DIM(r->acc))
		acc[r->pending_idx] += r->pending;
}

void
dtxn_bench_ctx_settle(struct dtxn_bench_ctx *ctx)
{
	if (ctx->pending != 0 && ctx->acc[ctx->pending_idx] == ctx->pending_base)
		bench_acc_add(ctx, ctx->pending_idx, ctx->pending);
	ctx->pending = 0;
}

void
dtxn_bench_coord_main(struct dtxn_coord *c, void *arg)
{
	struct dtxn_bench_ctx *ctx = arg;
	const struct dtxn_bench_ops *ops = ctx->bench->ops;
	struct dtxn_rng backoff;

	ctx->coord = c;
	/* Back-off draws come from their own stream, so retries replay inputs. */
	dtxn_rng_seed(&backoff, dtxn_rng_next(&ctx->rng));

	while (!dtxn_coord_stopping(c) && (ctx->quota == 0 || ctx->done < ctx->quota)) {
		unsigned type = ops->pick(ctx->bench, &ctx->rng);

		if (type >= ops->n_types) {
			BENCH_LOG(ERR, "%s: pick() returned type %u of %u\n", ops->name, type,
				  ops->n_types);
			break;
		}
		if (runner_one(ctx, c, &backoff, type))
			__atomic_store_n(&ctx->done, ctx->done + 1, __ATOMIC_RELAXED);
		/* given up (fresh) or stopping: the loop condition decides */
	}
	__atomic_store_n(&ctx->finished, true, __ATOMIC_RELEASE);
}
