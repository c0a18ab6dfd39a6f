/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * "writeskew": the classic write-skew pattern (Berenson et al., "A
 * critique of ANSI SQL isolation levels", SIGMOD'95, A5B; issue 5;
 * doc/guides/checker.md, "Workloads").
 *
 * `pairs` pairs of int64 balances (x_i, y_i) = records (2i, 2i+1) of table
 * 0, each loaded with `initial`. Constraint: x_i + y_i >= 0.
 *   withdraw: read both of a pair, write one: if x + y >= amt, the chosen
 *             one -= amt, else roll back. Two concurrent withdrawals from
 *             opposite sides that each read the other's old value break
 *             the constraint: a serializable protocol must abort one.
 *   deposit:  read-modify-write one balance += amt (keeps money coming).
 *   audit:    read-only txn reading a pair; a committed audit that sees
 *             x + y < 0 saw the constraint broken (ctx->acc[1] counts them).
 * amt is uniform in [1, amount]. Invariants: no audit saw the constraint
 * broken and every pair satisfies it at the end (a skew is usually
 * repaired by later deposits, so the audits are the better probe; the
 * history checker sees every skew); the sum of all balances == 2 * pairs
 * * initial + deposits - withdrawals committed (ctx->acc[0]).
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_malloc.h>

#include "anomaly_common.h"
#include "bench_private.h"

#define WS_VALUE_SIZE 8

enum ws_type { WS_WITHDRAW, WS_DEPOSIT, WS_AUDIT, WS_N_TYPES };

static const char *const ws_type_names[WS_N_TYPES] = { "withdraw", "deposit", "audit" };

struct ws_conf {
	uint64_t pairs;
	uint64_t initial;
	uint64_t amount;
	uint64_t withdraw_ratio;
	uint64_t audit_ratio;
};

static const struct dtxn_opt ws_opts[] = {
	{ "pairs", DTXN_OPT_U64, offsetof(struct ws_conf, pairs), 16, 1, 1 << 24,
	  "pairs of balances (records = 2 * pairs); fewer pairs, more conflicts" },
	{ "initial", DTXN_OPT_U64, offsetof(struct ws_conf, initial), 100, 0, 1e12,
	  "starting value of every balance" },
	{ "amount", DTXN_OPT_U64, offsetof(struct ws_conf, amount), 100, 1, 1e12,
	  "largest withdrawal or deposit (uniform in [1, amount])" },
	{ "withdraw_ratio", DTXN_OPT_U64, offsetof(struct ws_conf, withdraw_ratio), 60, 0, 100,
	  "percent of withdraw transactions (read two, write one)" },
	{ "audit_ratio", DTXN_OPT_U64, offsetof(struct ws_conf, audit_ratio), 10, 0, 100,
	  "percent of read-only audits of a pair (the rest are deposits)" },
};

static int
ws_create(struct dtxn_bench *b)
{
	const struct ws_conf *c = b->conf;
	int rc = bench_conf_check(b);

	if (rc != 0)
		return rc;
	if (c->withdraw_ratio + c->audit_ratio > 100) {
		bench_set_err(b, "writeskew: withdraw_ratio + audit_ratio (%" PRIu64 ") exceeds 100",
			      c->withdraw_ratio + c->audit_ratio);
		return -EINVAL;
	}
	b->priv = rte_zmalloc("ws_priv", sizeof(struct ws_conf), 0);
	if (b->priv == NULL) {
		bench_set_err(b, "writeskew: out of memory");
		return -ENOMEM;
	}
	memcpy(b->priv, b->conf, sizeof(struct ws_conf));
	return 0;
}

static void
ws_destroy(struct dtxn_bench *b)
{
	rte_free(b->priv);
	b->priv = NULL;
}

static int
ws_define(struct dtxn_bench *b, struct dtxn_db *db)
{
	const struct ws_conf *c = b->priv;

	return anom_define(b, db, "writeskew", WS_VALUE_SIZE, 2 * c->pairs);
}

static int
ws_load(struct dtxn_bench *b, struct dtxn_db *db)
{
	const struct ws_conf *c = b->priv;

	return anom_load(b, db, "writeskew", WS_VALUE_SIZE, 2 * c->pairs, (int64_t)c->initial);
}

static unsigned
ws_pick(struct dtxn_bench *b, struct dtxn_rng *r)
{
	const struct ws_conf *c = b->priv;
	uint64_t x = dtxn_rng_range(r, 100);

	if (x < c->withdraw_ratio)
		return WS_WITHDRAW;
	return x < c->withdraw_ratio + c->audit_ratio ? WS_AUDIT : WS_DEPOSIT;
}

static int
ws_audit(struct dtxn_bench_ctx *ctx, uint64_t pair)
{
	struct dtxn_item *it[2];
	struct dtxn_txn *t;
	int64_t x, y;
	int rc;

	t = dtxn_txn_begin(ctx->coord, DTXN_TXN_RO);
	it[0] = dtxn_txn_add_ro(t, 0, anom_key(2 * pair));
	it[1] = dtxn_txn_add_ro(t, 0, anom_key(2 * pair + 1));
	rc = dtxn_txn_execute(t);
	if (rc != DTXN_OK)
		return rc;
	if (!bench_items_exist(t, it, 2))
		return DTXN_ABORT_NOT_FOUND;
	memcpy(&x, dtxn_item_value(it[0]), sizeof(x));
	memcpy(&y, dtxn_item_value(it[1]), sizeof(y));
	rc = dtxn_txn_commit(t);
	if (rc == DTXN_OK && x + y < 0)
		bench_acc_add(ctx, 1, 1);
	return rc;
}

static int
ws_run(struct dtxn_bench_ctx *ctx, unsigned type)
{
	const struct ws_conf *c = ctx->bench->priv;
	const uint64_t pair = dtxn_rng_range(&ctx->rng, c->pairs);
	const uint64_t side = dtxn_rng_range(&ctx->rng, 2);
	const int64_t amt = (int64_t)dtxn_rng_between(&ctx->rng, 1, c->amount);
	struct dtxn_item *it[2];
	struct dtxn_txn *t;
	int64_t mine, other;
	int rc;

	if (type == WS_AUDIT)
		return ws_audit(ctx, pair);
	t = dtxn_txn_begin(ctx->coord, DTXN_TXN_RW);
	it[0] = dtxn_txn_add_rw(t, 0, anom_key(2 * pair + side));
	it[1] = type == WS_WITHDRAW ? dtxn_txn_add_ro(t, 0, anom_key(2 * pair + 1 - side)) :
				      it[0];
	rc = dtxn_txn_execute(t);
	if (rc != DTXN_OK)
		return rc;
	if (!bench_items_exist(t, it, 2))
		return DTXN_ABORT_NOT_FOUND;
	memcpy(&mine, dtxn_item_value(it[0]), sizeof(mine));
	if (type == WS_WITHDRAW) {
		memcpy(&other, dtxn_item_value(it[1]), sizeof(other));
		if (mine + other < amt) {
			dtxn_txn_abort(t, DTXN_ABORT_APP);
			return DTXN_BENCH_ROLLBACK;
		}
		mine -= amt;
	} else {
		mine += amt;
	}
	memcpy(dtxn_item_value(it[0]), &mine, sizeof(mine));
	rc = dtxn_txn_commit(t);
	if (rc == DTXN_OK)
		bench_acc_add(ctx, 0, type == WS_WITHDRAW ? -amt : amt);
	return rc;
}

static int
ws_check(struct dtxn_bench *b, struct dtxn_db *db, struct dtxn_bench_ctx *const *ctxs,
	 unsigned n_ctx, struct dtxn_report *r)
{
	const struct ws_conf *c = b->priv;
	int64_t *v = malloc(2 * c->pairs * sizeof(*v));
	int64_t sum = 0, expected = 2 * (int64_t)c->pairs * (int64_t)c->initial, worst = 0;
	int64_t seen = 0;
	uint64_t broken = 0;
	int rc;

	if (v == NULL) {
		bench_set_err(b, "writeskew: out of memory");
		return -ENOMEM;
	}
	rc = anom_read_all(b, db, "writeskew", WS_VALUE_SIZE, 2 * c->pairs, v);
	if (rc != 0) {
		free(v);
		return rc;
	}
	for (unsigned i = 0; i < n_ctx; i++) {
		expected += ctxs[i]->acc[0];
		seen += ctxs[i]->acc[1];
	}
	for (uint64_t p = 0; p < c->pairs; p++) {
		int64_t s = v[2 * p] + v[2 * p + 1];

		sum += s;
		if (s < 0) {
			broken++;
			worst = RTE_MIN(worst, s);
		}
	}
	dtxn_report_check(r, "writeskew_constraint", broken == 0 && seen == 0,
			  "audits that saw x+y < 0: %" PRId64 "; pairs with x+y < 0 at the end: %" PRIu64
			  " of %" PRIu64 " (lowest %" PRId64 ")", seen, broken, c->pairs, worst);
	dtxn_report_check(r, "writeskew_conservation", sum == expected,
			  "sum=%" PRId64 " expected=%" PRId64, sum, expected);
	free(v);
	return 0;
}

static const struct dtxn_bench_ops ws_ops = {
	.name = "writeskew",
	.desc = "write skew: withdraw from one of a pair after reading both (x + y >= 0)",
	.opts = ws_opts,
	.n_opts = RTE_DIM(ws_opts),
	.conf_size = sizeof(struct ws_conf),
	.n_types = WS_N_TYPES,
	.type_names = ws_type_names,
	.create = ws_create,
	.destroy = ws_destroy,
	.define = ws_define,
	.load = ws_load,
	.pick = ws_pick,
	.run = ws_run,
	.check = ws_check,
};

DTXN_BENCH_REGISTER(writeskew, &ws_ops);
