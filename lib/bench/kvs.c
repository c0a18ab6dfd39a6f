/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * "kvs": the key-value micro-benchmark of FORD and Motor
 * (bench-specs.md §1; doc/guides/benchmarks.md, "KVS").
 *
 * One table (id 0, "kvs") of `keys` records of `value_size` bytes; record
 * id i has key dtxn_key_make(i, i & 0xfff) (the locality field is the key
 * itself). A transaction touches `records` distinct ids drawn from a zipf
 * distribution over the ids (rank r is id r: id 0 is the hottest; theta 0
 * is uniform). The value is YCSB's cells (issue 15): four 40 B cells
 * where it has room (value_size >= 160; the last takes the rest), else
 * fewer; each cell starts with a u64 counter. With probability
 * write_ratio% a txn is an "update": every record RW on one random cell
 * (the counter at its start incremented, the rest left as loaded);
 * otherwise a "read": a read-only txn reading every cell of every record.
 *
 * With `tables` N > 1 (CREST's YCSB key split, issue 29 part 2;
 * doc/guides/benchmarks.md "KVS"), the records are split over N tables
 * "kvs0".."kvs<N-1>" (ids 0..N-1): record id i lives in table i % N, so
 * with the default placement (table t's primary on MN t % n_mn) and N =
 * the MNs, key i's primary is MN i % n_mn: CREST's artifact puts key k on
 * MN k % 2. Keys, values and draws are those of one table.
 *
 * Invariant: sum of all counters == committed update-records (ctx->acc[0]
 * summed over coordinators); record count == keys, each record in its
 * table; every other byte of every value still holds the loader's pattern.
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_malloc.h>

#include "bench_private.h"
#include "dtxn_bench.h"

#define KVS_MAX_RECORDS 64
/** YCSB cells (issue 15): at most four, of 40 B. */
#define KVS_CELLS 4
#define KVS_CELL_SIZE 40
/** Keys the loader prefetches ahead (dtxn_db_load_prefetch()). */
#define KVS_LOAD_AHEAD 8
/** Largest value, bytes (the value_size option's maximum). */
#define KVS_VALUE_MAX 4096

enum kvs_type { KVS_READ, KVS_UPDATE, KVS_N_TYPES };

static const char *const kvs_type_names[KVS_N_TYPES] = { "read", "update" };

struct kvs_conf {
	uint64_t keys;
	uint64_t value_size;
	double theta;
	uint64_t write_ratio;
	uint64_t records;
	uint64_t tables;
};

struct kvs_priv {
	struct kvs_conf conf;
	struct dtxn_zipf zipf;
	/* per value byte: 0x00 on a cell's counter, 0xff on payload (the
	 * loader's and the checker's mask, computed once: a value is then one
	 * vectorizable loop, not a division per byte) */
	uint8_t payload_mask[KVS_VALUE_MAX];
};

static const struct dtxn_opt kvs_opts[] = {
	{ "keys", DTXN_OPT_U64, offsetof(struct kvs_conf, keys), 1000000, 1,
	  1099511627776.0 /* 2^40 */, "records in the table" },
	{ "value_size", DTXN_OPT_U64, offsetof(struct kvs_conf, value_size), 40, 8, KVS_VALUE_MAX,
	  "bytes per value (a u64 counter, then payload)" },
	{ "theta", DTXN_OPT_DOUBLE, offsetof(struct kvs_conf, theta), 0.99, 0, DTXN_ZIPF_THETA_MAX,
	  "zipf skew of the key choice; 0 is uniform" },
	{ "write_ratio", DTXN_OPT_U64, offsetof(struct kvs_conf, write_ratio), 25, 0, 100,
	  "percent of transactions that update all their records" },
	{ "records", DTXN_OPT_U64, offsetof(struct kvs_conf, records), 1, 1, KVS_MAX_RECORDS,
	  "distinct records per transaction" },
	{ "tables", DTXN_OPT_U64, offsetof(struct kvs_conf, tables), 1, 1, DTXN_MAX_TABLES,
	  "tables the records are split over, record i in table i % tables (= the MNs: key i's primary on MN i % MNs, CREST's YCSB)" },
};

static inline uint64_t
kvs_key(uint64_t id)
{
	return dtxn_key_make(id, id & DTXN_KEY_SHARD_MASK);
}

/* The table of record @p id (its id, 0..tables-1). */
static inline uint32_t
kvs_table(const struct kvs_conf *conf, uint64_t id)
{
	return (uint32_t)(id % conf->tables);
}

/* The loader's byte at offset i of record id, before the payload mask. */
static inline uint8_t
kvs_payload_byte(uint64_t id, size_t i)
{
	return (uint8_t)(id * 131 + i);
}

/* Cells of a value (YCSB's four 40 B cells where there is room). */
static unsigned
kvs_n_cells(const struct kvs_conf *conf)
{
	uint64_t cells = conf->value_size / KVS_CELL_SIZE;

	return cells == 0 ? 1 : cells > KVS_CELLS ? KVS_CELLS : (unsigned)cells;
}

/* Whether value offset @p i holds a cell's counter (bytes 0..7 of each cell). */
static bool
kvs_counter_byte(const struct kvs_conf *conf, size_t i)
{
	return i / KVS_CELL_SIZE < kvs_n_cells(conf) && i % KVS_CELL_SIZE < sizeof(uint64_t);
}

/* The loaded value of record @p id: counters 0, payload bytes id x 131 + i. */
static void
kvs_fill_value(const struct kvs_priv *p, uint64_t id, uint8_t *value)
{
	const size_t vs = p->conf.value_size;

	for (size_t i = 0; i < vs; i++)
		value[i] = kvs_payload_byte(id, i) & p->payload_mask[i];
}

/* Whether the payload of @p value (counters aside) is the loader's for @p id. */
static bool
kvs_payload_ok(const struct kvs_priv *p, uint64_t id, const uint8_t *value)
{
	const size_t vs = p->conf.value_size;
	uint8_t diff = 0;

	for (size_t i = 0; i < vs; i++)
		diff |= (uint8_t)((value[i] ^ kvs_payload_byte(id, i)) & p->payload_mask[i]);
	return diff == 0;
}

static int
kvs_create(struct dtxn_bench *b)
{
	const struct kvs_conf *conf = b->conf;
	struct kvs_priv *p;
	int rc = bench_conf_check(b);

	if (rc != 0)
		return rc;
	if (conf->tables > conf->keys) {
		bench_set_err(b, "kvs: tables (%" PRIu64 ") exceeds keys (%" PRIu64 "): a table would be empty",
			      conf->tables, conf->keys);
		return -EINVAL;
	}
	if (conf->records > conf->keys) {
		bench_set_err(b, "kvs: records (%" PRIu64 ") exceeds keys (%" PRIu64 ")",
			      conf->records, conf->keys);
		return -EINVAL;
	}
	p = rte_zmalloc("kvs_priv", sizeof(*p), 0);
	if (p == NULL) {
		bench_set_err(b, "kvs: out of memory");
		return -ENOMEM;
	}
	p->conf = *conf;
	for (size_t i = 0; i < conf->value_size; i++)
		p->payload_mask[i] = kvs_counter_byte(conf, i) ? 0x00 : 0xff;
	if (dtxn_zipf_init(&p->zipf, conf->keys, conf->theta) != 0) {
		rte_free(p);
		bench_set_err(b, "kvs: theta %g is not in [0, 1)", conf->theta);
		return -EINVAL;
	}
	b->priv = p;
	return 0;
}

static void
kvs_destroy(struct dtxn_bench *b)
{
	rte_free(b->priv);
	b->priv = NULL;
}

static int
kvs_define(struct dtxn_bench *b, struct dtxn_db *db)
{
	const struct kvs_priv *p = b->priv;
	const uint64_t n_tables = p->conf.tables;
	struct dtxn_table_def def = {
		.value_size = (uint32_t)p->conf.value_size,
		.n_versions = 4, /* MVCC protocols: Motor's VNum for KVS (§7.2) */
	};
	uint32_t off[KVS_CELLS];
	unsigned n = kvs_n_cells(&p->conf);
	int rc;

	/* YCSB's cells (issue 15); an update changes one cell, each as often */
	for (unsigned c = 0; c < n; c++) {
		off[c] = c * KVS_CELL_SIZE;
		def.updates[c] = (struct dtxn_update_shape){ DTXN_CELL(c), (uint16_t)(1000 / n) };
	}
	rc = dtxn_table_def_set_columns(&def, off, n);
	if (rc != 0) {
		bench_set_err(b, "kvs: declaring the cells failed: %s", rte_strerror(-rc));
		return rc;
	}
	def.n_updates = n;
	for (uint32_t t = 0; rc == 0 && t < n_tables; t++) {
		def.id = t;
		if (n_tables == 1)
			snprintf(def.name, sizeof(def.name), "kvs");
		else
			snprintf(def.name, sizeof(def.name), "kvs%u", t);
		/* ids t, t + N, ...: ceil((keys - t) / N) of them */
		def.max_keys = (p->conf.keys - t + n_tables - 1) / n_tables;
		rc = dtxn_db_add_table(db, &def);
		if (rc != 0)
			bench_set_err(b, "kvs: adding table %s failed: %s", def.name,
				      rte_strerror(-rc));
	}
	return rc;
}

static int
kvs_load(struct dtxn_bench *b, struct dtxn_db *db)
{
	const struct kvs_priv *p = b->priv;
	const size_t vs = p->conf.value_size;
	uint8_t *value = rte_zmalloc("kvs_load", vs, 8);
	int rc = 0;

	if (value == NULL) {
		bench_set_err(b, "kvs: out of memory");
		return -ENOMEM;
	}
	for (uint64_t id = 0; id < p->conf.keys; id++) {
		/* its bucket's misses overlap the loads of the keys before it */
		if (id + KVS_LOAD_AHEAD < p->conf.keys)
			dtxn_db_load_prefetch(db, kvs_table(&p->conf, id + KVS_LOAD_AHEAD),
					      kvs_key(id + KVS_LOAD_AHEAD));
		kvs_fill_value(p, id, value);
		rc = dtxn_db_load(db, kvs_table(&p->conf, id), kvs_key(id), value);
		if (rc != 0) {
			bench_set_err(b, "kvs: loading key %" PRIu64 " failed: %s", id,
				      rte_strerror(-rc));
			break;
		}
	}
	rte_free(value);
	return rc;
}

static unsigned
kvs_pick(struct dtxn_bench *b, struct dtxn_rng *r)
{
	const struct kvs_priv *p = b->priv;

	return dtxn_rng_range(r, 100) < p->conf.write_ratio ? KVS_UPDATE : KVS_READ;
}

/* Draws n distinct ids (zipf ranks; rank r is id r; records <= keys). */
static void
kvs_draw_ids(const struct kvs_priv *p, struct dtxn_rng *r, uint64_t *ids, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		ids[i] = dtxn_zipf_next_distinct(&p->zipf, r, ids, i);
}

static int
kvs_run(struct dtxn_bench_ctx *ctx, unsigned type)
{
	const struct kvs_priv *p = ctx->bench->priv;
	const unsigned n = (unsigned)p->conf.records;
	const unsigned n_cells = kvs_n_cells(&p->conf);
	const bool update = type == KVS_UPDATE;
	unsigned cell[KVS_MAX_RECORDS];
	uint64_t ids[KVS_MAX_RECORDS];
	struct dtxn_item *it[KVS_MAX_RECORDS];
	struct dtxn_txn *t;
	int rc;

	kvs_draw_ids(p, &ctx->rng, ids, n);
	/* routing (dtxn_bench.h): an update runs on the owner of its first key */
	for (unsigned k = 1; update && k < DTXN_BENCH_ROUTE_TRIES &&
			     !dtxn_bench_routes_here(ctx, kvs_table(&p->conf, ids[0]),
						     kvs_key(ids[0])); k++)
		kvs_draw_ids(p, &ctx->rng, ids, n);
	t = dtxn_txn_begin(ctx->coord, update ? DTXN_TXN_RW : DTXN_TXN_RO);
	for (unsigned i = 0; i < n; i++) {
		/* one random cell per updated record (drawn only with several) */
		cell[i] = update && n_cells > 1 ? (unsigned)dtxn_rng_range(&ctx->rng, n_cells) : 0;
		const uint32_t tab = kvs_table(&p->conf, ids[i]);

		it[i] = update ? dtxn_txn_add_rw_cells(t, tab, kvs_key(ids[i]), 0,
						       DTXN_CELL(cell[i])) :
				 dtxn_txn_add_ro(t, tab, kvs_key(ids[i]));
	}
	rc = dtxn_txn_execute(t);
	if (rc != DTXN_OK)
		return rc;
	if (!bench_items_exist(t, it, n))
		return DTXN_ABORT_NOT_FOUND;
	if (update) {
		for (unsigned i = 0; i < n; i++) {
			char *v = (char *)dtxn_item_value(it[i]) + cell[i] * KVS_CELL_SIZE;
			uint64_t cnt;

			memcpy(&cnt, v, sizeof(cnt));
			cnt++;
			memcpy(v, &cnt, sizeof(cnt));
		}
	}
	return bench_commit(ctx, t, 0, update ? (int64_t)n : 0);
}

struct kvs_scan {
	const struct kvs_priv *p;
	const struct kvs_conf *conf;
	uint32_t table;        /* the table scanned */
	uint64_t count;
	uint64_t sum;
	uint64_t bad_key;      /* id out of range, shard field wrong, or in another table */
	uint64_t bad_payload;  /* bytes 8.. differ from the loader's */
};

static int
kvs_visit(uint64_t key, const void *value, void *arg)
{
	struct kvs_scan *s = arg;
	const uint8_t *v = value;
	const uint64_t id = dtxn_key_id(key);
	uint64_t cnt;

	s->count++;
	for (unsigned c = 0; c < kvs_n_cells(s->conf); c++) {
		memcpy(&cnt, v + c * KVS_CELL_SIZE, sizeof(cnt));
		s->sum += cnt;
	}
	if (id >= s->conf->keys || key != kvs_key(id) || kvs_table(s->conf, id) != s->table)
		s->bad_key++;
	if (!kvs_payload_ok(s->p, id, v))
		s->bad_payload++;
	return 0;
}

static int
kvs_check(struct dtxn_bench *b, struct dtxn_db *db, struct dtxn_bench_ctx *const *ctxs,
	  unsigned n_ctx, struct dtxn_report *r)
{
	const struct kvs_priv *p = b->priv;
	struct kvs_scan s = { .p = p, .conf = &p->conf };
	int64_t expected = 0;
	int rc;

	for (unsigned i = 0; i < n_ctx; i++)
		expected += ctxs[i]->acc[0];
	for (s.table = 0; s.table < p->conf.tables; s.table++) {
		rc = dtxn_db_scan(db, s.table, kvs_visit, &s);
		if (rc != 0) {
			bench_set_err(b, "kvs: scanning table %u failed: %s", s.table,
				      rte_strerror(rc < 0 ? -rc : rc));
			return rc < 0 ? rc : -EIO;
		}
	}
	dtxn_report_check(r, "kvs_counter_sum", s.sum == (uint64_t)expected,
			  "sum=%" PRIu64 " expected=%" PRId64, s.sum, expected);
	dtxn_report_check(r, "kvs_record_count", s.count == p->conf.keys && s.bad_key == 0,
			  "records=%" PRIu64 " expected=%" PRIu64 " bad_keys=%" PRIu64,
			  s.count, p->conf.keys, s.bad_key);
	dtxn_report_check(r, "kvs_payload_intact", s.bad_payload == 0,
			  "records_with_changed_payload=%" PRIu64, s.bad_payload);
	return 0;
}

static const struct dtxn_bench_ops kvs_ops = {
	.name = "kvs",
	.desc = "key-value micro-benchmark (FORD/Motor): zipf keys, read or update txns",
	.opts = kvs_opts,
	.n_opts = RTE_DIM(kvs_opts),
	.conf_size = sizeof(struct kvs_conf),
	.n_types = KVS_N_TYPES,
	.type_names = kvs_type_names,
	.create = kvs_create,
	.destroy = kvs_destroy,
	.define = kvs_define,
	.load = kvs_load,
	.pick = kvs_pick,
	.run = kvs_run,
	.check = kvs_check,
};

DTXN_BENCH_REGISTER(kvs, &kvs_ops);
