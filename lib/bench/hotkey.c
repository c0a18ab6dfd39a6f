/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * "hotkey": a few hot records under read-write and read-only mixes
 * (issue 5; doc/guides/checker.md, "Workloads"): the most contended
 * interleavings a protocol meets, for the history checker to judge.
 *
 * `keys` records of 16 bytes {counter, copied} in table 0. Each record a
 * txn touches is drawn from the hot set [0, hot_keys) with probability
 * hot_percent%, else uniformly from all keys; a txn's records are
 * distinct.
 *   read:   read-only txn (DTXN_TXN_RO) of `records` records;
 *   copy:   read record a, read-modify-write record b: b.counter += 1,
 *           b.copied = a.counter (a read-write txn with a read-only
 *           item: what FORD's missing read-lock check gets wrong);
 *   update: read-modify-write `records` records, counter += 1 each.
 * With `split` 1, a copy executes twice: it reads a, then adds b and
 * executes again (an interactive txn): a writer may commit b between
 * its start and b's lock, which SI's first-committer-wins must refuse.
 * With `hold_us`, every txn waits that long (yielding; virtual time on
 * the sim) between its execute and its commit: Scythe's Fig. 27 lock
 * hold time when the protocol locks what it reads (Scythe's TOCC).
 * Invariant: the sum of the counters == increments committed
 * (ctx->acc[0]).
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

#define HOT_VALUE_SIZE 16
#define HOT_MAX_RECORDS 16
/* Redraws of a record already in the txn before walking to a free one. */
#define HOT_MAX_REDRAWS 64

enum hot_type { HOT_READ, HOT_COPY, HOT_UPDATE, HOT_N_TYPES };

static const char *const hot_type_names[HOT_N_TYPES] = { "read", "copy", "update" };

struct hot_conf {
	uint64_t keys;
	uint64_t hot_keys;
	uint64_t hot_percent;
	uint64_t records;
	uint64_t read_ratio;
	uint64_t copy_ratio;
	uint64_t split;
	uint64_t hold_us;
};

static const struct dtxn_opt hot_opts[] = {
	{ "keys", DTXN_OPT_U64, offsetof(struct hot_conf, keys), 1024, 2, 1e9,
	  "records in the table" },
	{ "hot_keys", DTXN_OPT_U64, offsetof(struct hot_conf, hot_keys), 4, 1, 1e9,
	  "records in the hot set" },
	{ "hot_percent", DTXN_OPT_U64, offsetof(struct hot_conf, hot_percent), 90, 0, 100,
	  "percent of record draws from the hot set" },
	{ "records", DTXN_OPT_U64, offsetof(struct hot_conf, records), 2, 1, HOT_MAX_RECORDS,
	  "distinct records per read or update transaction" },
	{ "read_ratio", DTXN_OPT_U64, offsetof(struct hot_conf, read_ratio), 30, 0, 100,
	  "percent of read-only transactions" },
	{ "copy_ratio", DTXN_OPT_U64, offsetof(struct hot_conf, copy_ratio), 40, 0, 100,
	  "percent of copy transactions (read one record, update another)" },
	{ "split", DTXN_OPT_U64, offsetof(struct hot_conf, split), 0, 0, 1,
	  "1: copy transactions read, then execute again to update" },
	{ "hold_us", DTXN_OPT_U64, offsetof(struct hot_conf, hold_us), 0, 0, 1e6,
	  "microseconds between a transaction's execute and its commit (the lock hold time of Scythe's Fig. 27 under TOCC), yielding" },
};

static int
hot_create(struct dtxn_bench *b)
{
	const struct hot_conf *c = b->conf;
	int rc = bench_conf_check(b);

	if (rc != 0)
		return rc;
	if (c->hot_keys > c->keys || c->records > c->keys) {
		bench_set_err(b, "hotkey: hot_keys (%" PRIu64 ") and records (%" PRIu64 ") must not exceed keys (%" PRIu64 ")",
			      c->hot_keys, c->records, c->keys);
		return -EINVAL;
	}
	if (c->read_ratio + c->copy_ratio > 100) {
		bench_set_err(b, "hotkey: read_ratio + copy_ratio (%" PRIu64 ") exceeds 100",
			      c->read_ratio + c->copy_ratio);
		return -EINVAL;
	}
	b->priv = rte_zmalloc("hot_priv", sizeof(*c), 0);
	if (b->priv == NULL) {
		bench_set_err(b, "hotkey: out of memory");
		return -ENOMEM;
	}
	memcpy(b->priv, c, sizeof(*c));
	return 0;
}

static void
hot_destroy(struct dtxn_bench *b)
{
	rte_free(b->priv);
	b->priv = NULL;
}

static int
hot_define(struct dtxn_bench *b, struct dtxn_db *db)
{
	const struct hot_conf *c = b->priv;

	return anom_define(b, db, "hotkey", HOT_VALUE_SIZE, c->keys);
}

static int
hot_load(struct dtxn_bench *b, struct dtxn_db *db)
{
	const struct hot_conf *c = b->priv;

	return anom_load(b, db, "hotkey", HOT_VALUE_SIZE, c->keys, 0);
}

static unsigned
hot_pick(struct dtxn_bench *b, struct dtxn_rng *r)
{
	const struct hot_conf *c = b->priv;
	uint64_t x = dtxn_rng_range(r, 100);

	if (x < c->read_ratio)
		return HOT_READ;
	return x < c->read_ratio + c->copy_ratio ? HOT_COPY : HOT_UPDATE;
}

static uint64_t
hot_draw(const struct hot_conf *c, struct dtxn_rng *r)
{
	if (dtxn_rng_range(r, 100) < c->hot_percent)
		return dtxn_rng_range(r, c->hot_keys);
	return dtxn_rng_range(r, c->keys);
}

/* n distinct record ids. */
static void
hot_draw_ids(const struct hot_conf *c, struct dtxn_rng *r, uint64_t *ids, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		uint64_t id = hot_draw(c, r);

		for (unsigned k = 0; k < HOT_MAX_REDRAWS && bench_id_taken(ids, i, id); k++)
			id = hot_draw(c, r);
		while (bench_id_taken(ids, i, id))
			id = id + 1 < c->keys ? id + 1 : 0;
		ids[i] = id;
	}
}

static int
hot_run(struct dtxn_bench_ctx *ctx, unsigned type)
{
	const struct hot_conf *c = ctx->bench->priv;
	const unsigned n = type == HOT_COPY ? 2 : (unsigned)c->records;
	uint64_t ids[HOT_MAX_RECORDS], v[2];
	struct dtxn_item *it[HOT_MAX_RECORDS];
	struct dtxn_txn *t;
	int rc;

	hot_draw_ids(c, &ctx->rng, ids, n);
	t = dtxn_txn_begin(ctx->coord, type == HOT_READ ? DTXN_TXN_RO : DTXN_TXN_RW);
	for (unsigned i = 0; i < n; i++) {
		bool ro = type == HOT_READ || (type == HOT_COPY && i == 0);

		if (i == 1 && type == HOT_COPY && c->split != 0) {
			rc = dtxn_txn_execute(t);
			if (rc != DTXN_OK)
				return rc;
		}
		it[i] = ro ? dtxn_txn_add_ro(t, 0, anom_key(ids[i])) :
			     dtxn_txn_add_rw(t, 0, anom_key(ids[i]));
	}
	rc = dtxn_txn_execute(t);
	if (rc != DTXN_OK)
		return rc;
	if (c->hold_us != 0) /* what it read stays as it is (under TOCC: locked) this long */
		dtxn_co_sleep_until_lc(dtxn_coord_co(ctx->coord),
				       dtxn_now_ns() + c->hold_us * UINT64_C(1000));
	if (!bench_items_exist(t, it, n))
		return DTXN_ABORT_NOT_FOUND;
	for (unsigned i = 0; i < n && type != HOT_READ; i++) {
		if (type == HOT_COPY && i == 0)
			continue;
		memcpy(v, dtxn_item_value(it[i]), sizeof(v));
		v[0]++;
		if (type == HOT_COPY)
			memcpy(&v[1], dtxn_item_value(it[0]), sizeof(v[1]));
		memcpy(dtxn_item_value(it[i]), v, sizeof(v));
	}
	rc = dtxn_txn_commit(t);
	if (rc == DTXN_OK && type != HOT_READ)
		bench_acc_add(ctx, 0, type == HOT_COPY ? 1 : n);
	return rc;
}

static int
hot_check(struct dtxn_bench *b, struct dtxn_db *db, struct dtxn_bench_ctx *const *ctxs,
	  unsigned n_ctx, struct dtxn_report *r)
{
	const struct hot_conf *c = b->priv;
	int64_t *v = malloc(c->keys * sizeof(*v));
	int64_t sum = 0, expected = 0;
	int rc;

	if (v == NULL) {
		bench_set_err(b, "hotkey: out of memory");
		return -ENOMEM;
	}
	rc = anom_read_all(b, db, "hotkey", HOT_VALUE_SIZE, c->keys, v);
	if (rc != 0) {
		free(v);
		return rc;
	}
	for (uint64_t i = 0; i < c->keys; i++)
		sum += v[i];
	for (unsigned i = 0; i < n_ctx; i++)
		expected += ctxs[i]->acc[0];
	dtxn_report_check(r, "hotkey_counter_sum", sum == expected,
			  "sum=%" PRId64 " expected=%" PRId64, sum, expected);
	free(v);
	return 0;
}

static const struct dtxn_bench_ops hot_ops = {
	.name = "hotkey",
	.desc = "a few hot records under read-only, copy and update transactions",
	.opts = hot_opts,
	.n_opts = RTE_DIM(hot_opts),
	.conf_size = sizeof(struct hot_conf),
	.n_types = HOT_N_TYPES,
	.type_names = hot_type_names,
	.create = hot_create,
	.destroy = hot_destroy,
	.define = hot_define,
	.load = hot_load,
	.pick = hot_pick,
	.run = hot_run,
	.check = hot_check,
};

DTXN_BENCH_REGISTER(hotkey, &hot_ops);
