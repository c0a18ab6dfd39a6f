/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * struct dtxn_db: protocol choice, catalog, binding to the fabric, and the
 * MN-side loader, scanner and point lookup.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_malloc.h>

#include "txn_private.h"

struct dtxn_db *
dtxn_db_create(const struct dtxn_db_conf *conf)
{
	const struct dtxn_cc_ops *ops;
	struct dtxn_db *db = NULL;
	int err = EINVAL;

	if (conf == NULL || conf->size == 0 || conf->protocol == NULL)
		goto fail;
	if ((unsigned)conf->isolation >= DTXN_ISO_MAX)
		goto fail;
	ops = dtxn_cc_find(conf->protocol);
	if (ops == NULL) {
		TXN_LOG(ERR, "unknown protocol '%s'", conf->protocol);
		err = ENOENT;
		goto fail;
	}
	if ((ops->isolations & (1u << conf->isolation)) == 0) {
		TXN_LOG(ERR, "protocol %s does not support isolation %s", ops->name,
			dtxn_isolation_name(conf->isolation));
		err = ENOTSUP;
		goto fail;
	}
	if ((conf->debug_flags & ~ops->weaken[conf->isolation]) != 0) {
		TXN_LOG(ERR, "protocol %s does not implement debug flags 0x%x at isolation %s",
			ops->name, conf->debug_flags & ~ops->weaken[conf->isolation],
			dtxn_isolation_name(conf->isolation));
		err = ENOTSUP;
		goto fail;
	}
	if (conf->size >= offsetof(struct dtxn_db_conf, cc_options) + sizeof(conf->cc_options)) {
		char msg[160];

		if (dtxn_cc_check_options(ops->name, conf->cc_options, msg, sizeof(msg)) != 0) {
			TXN_LOG(ERR, "%s", msg);
			err = EINVAL;
			goto fail;
		}
	}
	db = rte_zmalloc("dtxn_db", sizeof(*db), RTE_CACHE_LINE_SIZE);
	if (db == NULL) {
		err = ENOMEM;
		goto fail;
	}
	memcpy(&db->conf, conf, RTE_MIN(conf->size, sizeof(db->conf)));
	db->conf.size = sizeof(db->conf);
	db->conf.protocol = ops->name;
	db->cc = ops;
	if (db->conf.log_bytes == 0)
		db->conf.log_bytes = TXN_LOG_BYTES_DEFAULT;
	if (db->conf.addr_cache_entries == 0)
		db->conf.addr_cache_entries = TXN_ADDR_CACHE_DEFAULT;
	if (db->conf.aux_chunk == 0)
		db->conf.aux_chunk = DTXN_AUX_CHUNK_DEFAULT;
	err = EINVAL;
	if (db->conf.n_coords == 0 || db->conf.log_bytes % 64 != 0)
		goto fail;
	if (db->conf.aux_chunk > DTXN_AUX_CHUNK_MAX) {
		TXN_LOG(ERR, "aux chunk of %u areas, expected 1..%u", db->conf.aux_chunk,
			DTXN_AUX_CHUNK_MAX);
		goto fail;
	}
	if (db->conf.versions == 1 || db->conf.versions > DTXN_TABLE_MAX_VERSIONS) {
		TXN_LOG(ERR, "%u versions per record, expected 2..%u", db->conf.versions,
			DTXN_TABLE_MAX_VERSIONS);
		goto fail;
	}
	if (dtxn_catalog_init(&db->cat, db->conf.n_mn, db->conf.n_replicas) != 0 ||
	    dtxn_catalog_set_placement(&db->cat, (enum dtxn_placement)db->conf.placement) != 0)
		goto fail;
	db->cat.aux_chunk = db->conf.aux_chunk;
	return db;
fail:
	rte_free(db);
	rte_errno = err;
	return NULL;
}

void
dtxn_db_destroy(struct dtxn_db *db)
{
	if (db == NULL)
		return;
	if (db->fabric != NULL && db->cc->db_fini != NULL)
		db->cc->db_fini(db);
	dtxn_fa_destroy(db->fa);
	dtxn_addr_cache_destroy(db->addr_base);
	rte_free(db);
}

int
dtxn_db_add_table(struct dtxn_db *db, const struct dtxn_table_def *def)
{
	uint32_t slot_size, aux_size = 0;
	struct dtxn_table_def d;
	int rc;

	if (db == NULL || def == NULL || def->value_size == 0 || db->fabric != NULL)
		return -EINVAL;
	d = *def;
	if (db->conf.versions != 0 && !(d.flags & DTXN_TABLE_F_READ_ONLY))
		d.n_versions = db->conf.versions;
	rc = 0;
	slot_size = 0;
	if (db->cc->table_geometry != NULL)
		rc = db->cc->table_geometry(db, &d, &slot_size, &aux_size);
	else if (db->cc->table_sizes != NULL)
		rc = db->cc->table_sizes(&d, &slot_size, &aux_size);
	else
		slot_size = db->cc->slot_size(d.value_size);
	if (rc == 0)
		rc = dtxn_catalog_add_table_aux(&db->cat, &d, slot_size, aux_size);
	/* the protocol's delta heap (store.md "Delta heaps"), if it keeps one */
	if (rc == 0 && db->cc->table_delta != NULL)
		rc = dtxn_catalog_set_delta(&db->cat, d.id, db->cc->table_delta(&d));
	return rc;
}

int
dtxn_db_set_table_mn(struct dtxn_db *db, const char *name, uint16_t mn)
{
	if (db == NULL || name == NULL || db->fabric != NULL)
		return -EINVAL;
	for (uint32_t id = 0; id < DTXN_MAX_TABLES; id++)
		if (db->cat.present[id] &&
		    strncmp(db->cat.tables[id].def.name, name, DTXN_TABLE_NAME_MAX) == 0)
			return dtxn_catalog_set_primary(&db->cat, id, mn);
	return -ENOENT;
}

uint32_t
dtxn_db_n_coords(const struct dtxn_db *db)
{
	return db == NULL ? 0 : db->conf.n_coords;
}

uint32_t
dtxn_db_addr_cache_entries(const struct dtxn_db *db)
{
	if (db == NULL)
		return 0;
	if (db->conf.addr_cache_entries != DTXN_ADDR_CACHE_UNBOUNDED)
		return db->conf.addr_cache_entries;
	return txn_db_addr_keys(db);
}

uint32_t
txn_db_addr_keys(const struct dtxn_db *db)
{
	uint64_t keys = 0;

	for (uint32_t id = 0; id < DTXN_MAX_TABLES; id++)
		if (db->cat.present[id])
			keys += db->cat.tables[id].def.max_keys;
	return (uint32_t)RTE_MIN(RTE_MAX(keys, UINT64_C(8)), (uint64_t)RTE_HASH_ENTRIES_MAX);
}

int
dtxn_db_addr_base_footprint(const struct dtxn_db *db, struct dtxn_footprint *fp)
{
	if (db == NULL || fp == NULL)
		return -EINVAL;
	if (db->conf.addr_prewarm)
		dtxn_addr_cache_footprint(txn_db_addr_keys(db), fp);
	return 0;
}

int
dtxn_db_heap_census(struct dtxn_db *db)
{
	if (db == NULL || db->fabric == NULL)
		return -EINVAL;
	return dtxn_store_heap_census(db->fabric, &db->cat);
}

int
dtxn_db_layout(struct dtxn_db *db, uint64_t *region_size)
{
	int rc;

	if (db == NULL || db->fabric != NULL)
		return -EINVAL;
	db->cat.msg_bytes = db->cc->mn_msg_bytes != NULL ? db->cc->mn_msg_bytes(db) : 0;
	rc = dtxn_catalog_layout(&db->cat, db->conf.n_coords, db->conf.log_bytes);
	if (rc != 0)
		return rc;
	if (region_size != NULL)
		*region_size = db->cat.region_size;
	return 0;
}

int
dtxn_db_attach(struct dtxn_db *db, struct dtxn_fabric *f)
{
	const struct dtxn_fabric_conf *fc;
	int rc;

	if (db == NULL || f == NULL || db->fabric != NULL || db->cat.region_size == 0)
		return -EINVAL;
	fc = dtxn_fabric_conf(f);
	if (fc == NULL || fc->n_mn < db->conf.n_mn) {
		TXN_LOG(ERR, "fabric has fewer MNs than the db needs (%u)", db->conf.n_mn);
		return -EINVAL;
	}
	if (fc->mn_region_size < db->cat.region_size) {
		TXN_LOG(ERR, "MN regions of %" PRIu64 " B, the db needs %" PRIu64 " B",
			fc->mn_region_size, db->cat.region_size);
		return -EINVAL;
	}
	db->fabric = f;
	if (db->cc->db_init != NULL) {
		rc = db->cc->db_init(db);
		if (rc != 0) {
			db->fabric = NULL;
			return rc;
		}
	}
	if (db->cc->false_aborts && db->conf.false_aborts) {
		/* none on mlx5 (ENOTSUP): the CNs share no memory; nothing classified */
		db->fa = dtxn_fa_create(db);
		if (db->fa == NULL && rte_errno != ENOTSUP) {
			if (db->cc->db_fini != NULL)
				db->cc->db_fini(db);
			db->fabric = NULL;
			return -ENOMEM;
		}
	}
	return 0;
}

int
dtxn_db_load(struct dtxn_db *db, uint32_t table_id, uint64_t key, const void *value)
{
	const struct dtxn_table *t;
	int rc;

	if (db == NULL || value == NULL)
		return -EINVAL;
	if (db->fabric == NULL)
		return -ENXIO;
	t = dtxn_catalog_table(&db->cat, table_id);
	if (t == NULL)
		return -ENOENT;
	rc = dtxn_store_load(db->fabric, t, key, value, db->cc->slot_format, db);
	if (rc == 0) /* raw bytes for the report's MN memory overhead */
		(void)dtxn_catalog_count_load(&db->cat, table_id,
					      DTXN_KEY_BYTES + (uint64_t)t->def.value_size);
	return rc;
}

void
dtxn_db_load_prefetch(struct dtxn_db *db, uint32_t table_id, uint64_t key)
{
	if (db == NULL || db->fabric == NULL)
		return;
	dtxn_store_load_prefetch(db->fabric, dtxn_catalog_table(&db->cat, table_id), key);
}

int
dtxn_db_load_begin(struct dtxn_db *db)
{
	return db == NULL ? -EINVAL : dtxn_catalog_defer_copies(&db->cat, true);
}

int
dtxn_db_load_end(struct dtxn_db *db)
{
	int rc = 0;

	if (db == NULL)
		return -EINVAL;
	if (db->fabric == NULL)
		return -ENXIO;
	for (uint32_t id = 0; id < DTXN_MAX_TABLES; id++) {
		int r;

		if (dtxn_catalog_table(&db->cat, id) == NULL)
			continue;
		r = dtxn_store_copy_replicas(db->fabric, &db->cat.tables[id]);
		if (r != 0 && rc == 0)
			rc = r;
	}
	(void)dtxn_catalog_defer_copies(&db->cat, false);
	return rc;
}

/* The value of a live record in MN memory (the protocol's mn_value if it has one). */
static void *
db_mn_value(struct dtxn_db *db, const struct dtxn_table *t, void *slot)
{
	if (db->cc->mn_value != NULL)
		return db->cc->mn_value(db, t, slot);
	return db->cc->slot_value(t, slot);
}

struct db_scan_ctx {
	struct dtxn_db *db;
	dtxn_record_visit_fn visit;
	void *arg;
};

static int
db_scan_slot(const struct dtxn_table *t, const void *slot, void *arg)
{
	struct db_scan_ctx *ctx = arg;
	const struct dtxn_slot_hdr *h = slot;
	void *value = db_mn_value(ctx->db, t, (void *)(uintptr_t)slot);

	if (value == NULL)
		return 0; /* deleted (a protocol that keeps tombstones) */
	return ctx->visit(h->key, value, ctx->arg);
}

int
dtxn_db_scan(struct dtxn_db *db, uint32_t table_id, dtxn_record_visit_fn visit, void *arg)
{
	struct db_scan_ctx ctx = { .db = db, .visit = visit, .arg = arg };
	const struct dtxn_table *t;

	if (db == NULL || visit == NULL)
		return -EINVAL;
	if (db->fabric == NULL)
		return -ENXIO;
	t = dtxn_catalog_table(&db->cat, table_id);
	if (t == NULL)
		return -ENOENT;
	return dtxn_store_scan(db->fabric, t, 0, db_scan_slot, &ctx);
}

void
dtxn_db_debug_stall_arm(struct dtxn_db *db)
{
	if (db != NULL && db->conf.debug_stall_ns != 0)
		__atomic_store_n(&db->debug_stall_armed, 1, __ATOMIC_RELEASE);
}

struct db_unfinished_ctx {
	const struct dtxn_cc_ops *cc;
	uint64_t n;
	uint32_t *table;
	uint64_t *key;
};

static int
db_unfinished_slot(const struct dtxn_table *t, const void *slot, void *arg)
{
	struct db_unfinished_ctx *ctx = arg;

	if (!ctx->cc->mn_unfinished(t, slot))
		return 0;
	if (ctx->n++ == 0) {
		*ctx->table = t->def.id;
		*ctx->key = ((const struct dtxn_slot_hdr *)slot)->key;
	}
	return 0;
}

int
dtxn_db_unfinished(struct dtxn_db *db, uint64_t *n, uint32_t *table, uint64_t *key)
{
	struct db_unfinished_ctx ctx;

	if (db == NULL || n == NULL || table == NULL || key == NULL)
		return -EINVAL;
	if (db->fabric == NULL)
		return -ENXIO;
	*n = 0;
	if (db->cc->mn_unfinished == NULL)
		return -ENOTSUP;
	ctx = (struct db_unfinished_ctx){ .cc = db->cc, .table = table, .key = key };
	for (uint32_t id = 0; id < DTXN_MAX_TABLES; id++) {
		const struct dtxn_table *t = dtxn_catalog_table(&db->cat, id);
		int rc;

		if (t == NULL)
			continue;
		rc = dtxn_store_scan(db->fabric, t, 0, db_unfinished_slot, &ctx);
		if (rc != 0)
			return rc;
	}
	*n = ctx.n;
	return 0;
}

int
dtxn_db_get(struct dtxn_db *db, uint32_t table_id, uint64_t key, void *value)
{
	const struct dtxn_table *t;
	uint64_t home;
	unsigned p;

	if (db == NULL || value == NULL || db->fabric == NULL)
		return -ENOENT;
	t = dtxn_catalog_table(&db->cat, table_id);
	if (t == NULL)
		return -ENOENT;
	home = dtxn_store_bucket_of(t, key);
	for (p = 0; p < DTXN_STORE_MAX_PROBE; p++) {
		dtxn_raddr_t ra = dtxn_store_bucket_raddr(t, 0, home + p);
		char *base = dtxn_fabric_mn_base(db->fabric, DTXN_RADDR_MN(ra));
		void *bucket;
		int i;

		if (base == NULL)
			return -ENOENT;
		bucket = base + DTXN_RADDR_OFF(ra);
		i = dtxn_store_bucket_find(t, bucket, key);
		if (i >= 0) {
			void *slot = dtxn_store_bucket_slot(t, bucket, (unsigned)i);
			void *v = db_mn_value(db, t, slot);

			if (v == NULL)
				return -ENOENT; /* deleted: a tombstone */
			memcpy(value, v, t->def.value_size);
			return 0;
		}
		if (!dtxn_bucket_overflows(bucket))
			break;
	}
	return -ENOENT;
}

const struct dtxn_catalog *
dtxn_db_catalog(const struct dtxn_db *db)
{
	return db == NULL ? NULL : &db->cat;
}

const char *
dtxn_db_protocol(const struct dtxn_db *db)
{
	return db == NULL ? NULL : db->cc->name;
}

const char *
dtxn_db_variant(const struct dtxn_db *db)
{
	if (db == NULL || db->cc->variant == NULL)
		return NULL;
	return db->cc->variant(db);
}

struct dtxn_fabric *
dtxn_db_fabric(const struct dtxn_db *db)
{
	return db == NULL ? NULL : db->fabric;
}
