/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * "snapshot": read-only transactions must see a consistent snapshot
 * (issue 5; doc/guides/checker.md, "Workloads"). Also a read-skew probe
 * (Berenson et al. SIGMOD'95, A5A).
 *
 * `accounts` int64 balances of `initial` each, in groups of `group`
 * consecutive accounts (accounts / group groups).
 *   transfer: move amt (uniform in [1, amount]) between two accounts of a
 *             group (read-modify-write both): a group's total never
 *             changes.
 *   audit:    a read-only txn (DTXN_TXN_RO) reads every account of a
 *             group and sums them: a committed audit must see
 *             group * initial, or it read a state no serial order has.
 * Invariants: no committed audit saw a wrong total (ctx->acc[0] counts
 * them, ctx->acc[1] counts committed audits); every group's final total
 * is group * initial.
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

#define SNAP_VALUE_SIZE 8
#define SNAP_MAX_GROUP 64

enum snap_type { SNAP_TRANSFER, SNAP_AUDIT, SNAP_N_TYPES };

static const char *const snap_type_names[SNAP_N_TYPES] = { "transfer", "audit" };

struct snap_conf {
	uint64_t accounts;
	uint64_t group;
	uint64_t initial;
	uint64_t amount;
	uint64_t audit_ratio;
	uint64_t audit_step;
};

static const struct dtxn_opt snap_opts[] = {
	{ "accounts", DTXN_OPT_U64, offsetof(struct snap_conf, accounts), 1024, 2, 1 << 26,
	  "accounts (a multiple of group)" },
	{ "group", DTXN_OPT_U64, offsetof(struct snap_conf, group), 8, 2, SNAP_MAX_GROUP,
	  "accounts per group: transfers stay in a group, an audit reads a whole group" },
	{ "initial", DTXN_OPT_U64, offsetof(struct snap_conf, initial), 1000, 0, 1e12,
	  "starting balance of every account" },
	{ "amount", DTXN_OPT_U64, offsetof(struct snap_conf, amount), 100, 1, 1e12,
	  "largest transfer (uniform in [1, amount])" },
	{ "audit_ratio", DTXN_OPT_U64, offsetof(struct snap_conf, audit_ratio), 50, 0, 100,
	  "percent of read-only audit transactions" },
	{ "audit_step", DTXN_OPT_U64, offsetof(struct snap_conf, audit_step), 0, 0, 1,
	  "1: an audit reads its accounts one round trip at a time (a read set learnt as it is read, OOCC §III-C); 0: all in one" },
};

static int
snap_create(struct dtxn_bench *b)
{
	const struct snap_conf *c = b->conf;
	int rc = bench_conf_check(b);

	if (rc != 0)
		return rc;
	if (c->accounts % c->group != 0) {
		bench_set_err(b, "snapshot: accounts (%" PRIu64 ") is not a multiple of group (%" PRIu64 ")",
			      c->accounts, c->group);
		return -EINVAL;
	}
	b->priv = rte_zmalloc("snap_priv", sizeof(*c), 0);
	if (b->priv == NULL) {
		bench_set_err(b, "snapshot: out of memory");
		return -ENOMEM;
	}
	memcpy(b->priv, c, sizeof(*c));
	return 0;
}

static void
snap_destroy(struct dtxn_bench *b)
{
	rte_free(b->priv);
	b->priv = NULL;
}

static int
snap_define(struct dtxn_bench *b, struct dtxn_db *db)
{
	const struct snap_conf *c = b->priv;

	return anom_define(b, db, "snapshot", SNAP_VALUE_SIZE, c->accounts);
}

static int
snap_load(struct dtxn_bench *b, struct dtxn_db *db)
{
	const struct snap_conf *c = b->priv;

	return anom_load(b, db, "snapshot", SNAP_VALUE_SIZE, c->accounts, (int64_t)c->initial);
}

static unsigned
snap_pick(struct dtxn_bench *b, struct dtxn_rng *r)
{
	const struct snap_conf *c = b->priv;

	return dtxn_rng_range(r, 100) < c->audit_ratio ? SNAP_AUDIT : SNAP_TRANSFER;
}

static int
snap_transfer(struct dtxn_bench_ctx *ctx, uint64_t first)
{
	const struct snap_conf *c = ctx->bench->priv;
	uint64_t a = dtxn_rng_range(&ctx->rng, c->group);
	uint64_t d = dtxn_rng_range(&ctx->rng, c->group - 1);
	const int64_t amt = (int64_t)dtxn_rng_between(&ctx->rng, 1, c->amount);
	struct dtxn_item *it[2];
	struct dtxn_txn *t;
	int64_t va, vd;
	int rc;

	if (d >= a)
		d++;
	t = dtxn_txn_begin(ctx->coord, DTXN_TXN_RW);
	it[0] = dtxn_txn_add_rw(t, 0, anom_key(first + a));
	it[1] = dtxn_txn_add_rw(t, 0, anom_key(first + d));
	rc = dtxn_txn_execute(t);
	if (rc != DTXN_OK)
		return rc;
	if (!bench_items_exist(t, it, 2))
		return DTXN_ABORT_NOT_FOUND;
	memcpy(&va, dtxn_item_value(it[0]), sizeof(va));
	memcpy(&vd, dtxn_item_value(it[1]), sizeof(vd));
	va -= amt;
	vd += amt;
	memcpy(dtxn_item_value(it[0]), &va, sizeof(va));
	memcpy(dtxn_item_value(it[1]), &vd, sizeof(vd));
	return dtxn_txn_commit(t);
}

static int
snap_audit(struct dtxn_bench_ctx *ctx, uint64_t first)
{
	const struct snap_conf *c = ctx->bench->priv;
	struct dtxn_item *it[SNAP_MAX_GROUP];
	struct dtxn_txn *t;
	int64_t sum = 0;
	int rc;

	t = dtxn_txn_begin(ctx->coord, DTXN_TXN_RO);
	for (uint64_t i = 0; i < c->group; i++) {
		it[i] = dtxn_txn_add_ro(t, 0, anom_key(first + i));
		if (c->audit_step && (rc = dtxn_txn_execute(t)) != DTXN_OK)
			return rc;
	}
	rc = dtxn_txn_execute(t);
	if (rc != DTXN_OK)
		return rc;
	if (!bench_items_exist(t, it, (unsigned)c->group))
		return DTXN_ABORT_NOT_FOUND;
	for (uint64_t i = 0; i < c->group; i++) {
		int64_t v;

		memcpy(&v, dtxn_item_value(it[i]), sizeof(v));
		sum += v;
	}
	rc = dtxn_txn_commit(t);
	if (rc == DTXN_OK) {
		bench_acc_add(ctx, 1, 1);
		if (sum != (int64_t)(c->group * c->initial))
			bench_acc_add(ctx, 0, 1);
	}
	return rc;
}

static int
snap_run(struct dtxn_bench_ctx *ctx, unsigned type)
{
	const struct snap_conf *c = ctx->bench->priv;
	const uint64_t first = dtxn_rng_range(&ctx->rng, c->accounts / c->group) * c->group;

	return type == SNAP_AUDIT ? snap_audit(ctx, first) : snap_transfer(ctx, first);
}

static int
snap_check(struct dtxn_bench *b, struct dtxn_db *db, struct dtxn_bench_ctx *const *ctxs,
	   unsigned n_ctx, struct dtxn_report *r)
{
	const struct snap_conf *c = b->priv;
	const int64_t total = (int64_t)(c->group * c->initial);
	int64_t *v = malloc(c->accounts * sizeof(*v));
	int64_t bad_audits = 0, audits = 0;
	uint64_t bad_groups = 0;
	int rc;

	if (v == NULL) {
		bench_set_err(b, "snapshot: out of memory");
		return -ENOMEM;
	}
	rc = anom_read_all(b, db, "snapshot", SNAP_VALUE_SIZE, c->accounts, v);
	if (rc != 0) {
		free(v);
		return rc;
	}
	for (unsigned i = 0; i < n_ctx; i++) {
		bad_audits += ctxs[i]->acc[0];
		audits += ctxs[i]->acc[1];
	}
	for (uint64_t g = 0; g < c->accounts / c->group; g++) {
		int64_t s = 0;

		for (uint64_t i = 0; i < c->group; i++)
			s += v[g * c->group + i];
		bad_groups += s != total;
	}
	dtxn_report_check(r, "snapshot_audits_consistent", bad_audits == 0,
			  "committed audits that saw a total != %" PRId64 ": %" PRId64 " of %" PRId64,
			  total, bad_audits, audits);
	dtxn_report_check(r, "snapshot_group_totals", bad_groups == 0,
			  "groups whose final total != %" PRId64 ": %" PRIu64 " of %" PRIu64, total,
			  bad_groups, c->accounts / c->group);
	free(v);
	return 0;
}

static const struct dtxn_bench_ops snap_ops = {
	.name = "snapshot",
	.desc = "read-only audits sum a group of accounts while transfers move money inside it",
	.opts = snap_opts,
	.n_opts = RTE_DIM(snap_opts),
	.conf_size = sizeof(struct snap_conf),
	.n_types = SNAP_N_TYPES,
	.type_names = snap_type_names,
	.create = snap_create,
	.destroy = snap_destroy,
	.define = snap_define,
	.load = snap_load,
	.pick = snap_pick,
	.run = snap_run,
	.check = snap_check,
};

DTXN_BENCH_REGISTER(snapshot, &snap_ops);
