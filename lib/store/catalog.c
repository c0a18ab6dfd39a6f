/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The catalog: table definitions, replica placement, and the layout of
 * every MN region (tables, then per-coordinator log regions).
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include <rte_common.h>
#include <rte_log.h>

#include "store_private.h"

RTE_LOG_REGISTER_DEFAULT(dtxn_store_logtype, NOTICE);

int
dtxn_catalog_init(struct dtxn_catalog *cat, uint16_t n_mn, uint16_t n_replicas)
{
	if (cat == NULL)
		return -EINVAL;
	if (n_mn == 0 || n_mn >= DTXN_MASK_NODES) {
		STORE_LOG(ERR, "catalog: %u MNs, expected 1..%u", n_mn, DTXN_MASK_NODES - 1);
		return -EINVAL;
	}
	if (n_replicas == 0 || n_replicas > DTXN_MAX_REPLICAS || n_replicas > n_mn) {
		STORE_LOG(ERR, "catalog: %u replicas, expected 1..%u and at most %u MNs",
			  n_replicas, DTXN_MAX_REPLICAS, n_mn);
		return -EINVAL;
	}
	memset(cat, 0, sizeof(*cat));
	cat->n_mn = n_mn;
	cat->n_replicas = n_replicas;
	return 0;
}

int
dtxn_catalog_set_placement(struct dtxn_catalog *cat, enum dtxn_placement p)
{
	if (cat == NULL || dtxn_placement_name(p) == NULL)
		return -EINVAL;
	if (cat->n_tables != 0) {
		STORE_LOG(ERR, "catalog: placement set after %u tables were added", cat->n_tables);
		return -EBUSY;
	}
	cat->placement = p;
	return 0;
}

const char *
dtxn_placement_name(enum dtxn_placement p)
{
	switch (p) {
	case DTXN_PLACEMENT_TABLE:
		return "table";
	case DTXN_PLACEMENT_KEY:
		return "key";
	}
	return NULL;
}

int
dtxn_placement_parse(const char *name, enum dtxn_placement *out)
{
	if (name == NULL || out == NULL)
		return -EINVAL;
	if (strcmp(name, "table") == 0)
		*out = DTXN_PLACEMENT_TABLE;
	else if (strcmp(name, "key") == 0)
		*out = DTXN_PLACEMENT_KEY;
	else
		return -EINVAL;
	return 0;
}

/* Bytes before a bucket's first slot: the header, and the reclaim watermark if declared. */
static uint32_t
catalog_bucket_hdr_size(const struct dtxn_table_def *def)
{
	return DTXN_BUCKET_HDR_SIZE + ((def->flags & DTXN_TABLE_F_RECLAIM) ? 8 : 0);
}

/* Checks a table definition; fills slots and buckets; 0 or -EINVAL. */
static int
catalog_check_def(const struct dtxn_table_def *def, uint32_t slot_size, uint32_t aux_size,
		  uint32_t *slots, uint64_t *n_buckets, uint32_t *bucket_size)
{
	uint32_t hdr = catalog_bucket_hdr_size(def);
	size_t name_len = strnlen(def->name, DTXN_TABLE_NAME_MAX);
	uint64_t bsize;

	if (def->id >= DTXN_MAX_TABLES) {
		STORE_LOG(ERR, "table id %u: expected 0..%u", def->id, DTXN_MAX_TABLES - 1);
		return -EINVAL;
	}
	if (name_len == 0 || name_len == DTXN_TABLE_NAME_MAX) {
		STORE_LOG(ERR, "table %u: name empty or not terminated within %u bytes",
			  def->id, DTXN_TABLE_NAME_MAX);
		return -EINVAL;
	}
	if (def->value_size == 0 || def->value_size > STORE_VALUE_MAX) {
		STORE_LOG(ERR, "table %s: value_size %u, expected 1..%u", def->name,
			  def->value_size, STORE_VALUE_MAX);
		return -EINVAL;
	}
	if (def->max_keys == 0 || def->max_keys > DTXN_RADDR_OFF_MASK) {
		STORE_LOG(ERR, "table %s: max_keys %" PRIu64 ", expected 1..2^48-1",
			  def->name, def->max_keys);
		return -EINVAL;
	}
	if (def->n_versions > DTXN_TABLE_MAX_VERSIONS) {
		STORE_LOG(ERR, "table %s: %u versions, expected 0..%u", def->name,
			  def->n_versions, DTXN_TABLE_MAX_VERSIONS);
		return -EINVAL;
	}
	if (store_check_columns(def) != 0)
		return -EINVAL;
	*slots = def->slots_per_bucket ? def->slots_per_bucket : STORE_SLOTS_DEFAULT;
	if (*slots > STORE_SLOTS_MAX) {
		STORE_LOG(ERR, "table %s: %u slots per bucket, expected 1..%u", def->name,
			  *slots, STORE_SLOTS_MAX);
		return -EINVAL;
	}
	if (aux_size % 8 != 0 || aux_size > STORE_AUX_MAX) {
		STORE_LOG(ERR, "table %s: aux size %u, expected a multiple of 8 <= %u",
			  def->name, aux_size, STORE_AUX_MAX);
		return -EINVAL;
	}
	/* the value is in the slot, or (aux_size != 0) may be in its aux area */
	if (slot_size % 8 != 0 || slot_size < DTXN_SLOT_HDR_SIZE ||
	    (uint64_t)slot_size + aux_size < DTXN_SLOT_HDR_SIZE + def->value_size) {
		STORE_LOG(ERR, "table %s: slot size %u with %u aux bytes, expected a multiple of 8 >= %u",
			  def->name, slot_size, aux_size, DTXN_SLOT_HDR_SIZE + def->value_size);
		return -EINVAL;
	}
	bsize = store_align(hdr + (uint64_t)*slots * slot_size, 8);
	if (bsize > DTXN_WR_LEN_MAX) {
		STORE_LOG(ERR, "table %s: bucket of %" PRIu64 " bytes exceeds one READ",
			  def->name, bsize);
		return -EINVAL;
	}
	*bucket_size = (uint32_t)bsize;
	if (def->n_buckets != 0) {
		*n_buckets = def->n_buckets;
	} else if (def->flags & DTXN_TABLE_F_DIRECT_INDEX) {
		/* dense ids below max_keys: at most *slots of them per bucket */
		*n_buckets = (def->max_keys + *slots - 1) / *slots;
	} else {
		/* ceil(max_keys / (slots * 0.75)) = ceil(4 * max_keys / (3 * slots)) */
		uint64_t den = 3 * (uint64_t)*slots;
		*n_buckets = (4 * def->max_keys + den - 1) / den;
		if (*n_buckets == 0)
			*n_buckets = 1;
	}
	if (*n_buckets > DTXN_RADDR_OFF_MASK / bsize) {
		STORE_LOG(ERR, "table %s: %" PRIu64 " buckets do not fit a 48-bit region",
			  def->name, *n_buckets);
		return -EINVAL;
	}
	if (aux_size != 0 && *n_buckets * *slots > DTXN_RADDR_OFF_MASK / aux_size) {
		STORE_LOG(ERR, "table %s: aux area of %u B per slot does not fit 48 bits",
			  def->name, aux_size);
		return -EINVAL;
	}
	return 0;
}

int
dtxn_catalog_add_table(struct dtxn_catalog *cat, const struct dtxn_table_def *def,
		       uint32_t slot_size)
{
	return dtxn_catalog_add_table_aux(cat, def, slot_size, 0);
}

int
dtxn_catalog_add_table_aux(struct dtxn_catalog *cat, const struct dtxn_table_def *def,
			   uint32_t slot_size, uint32_t aux_size)
{
	struct dtxn_table *t;
	uint64_t n_buckets;
	uint32_t slots, bucket_size;
	uint16_t r;
	int rc;

	if (cat == NULL || def == NULL || cat->n_mn == 0)
		return -EINVAL;
	rc = catalog_check_def(def, slot_size, aux_size, &slots, &n_buckets, &bucket_size);
	if (rc != 0)
		return rc;
	if (cat->present[def->id]) {
		STORE_LOG(ERR, "table %s: id %u already taken", def->name, def->id);
		return -EEXIST;
	}
	for (unsigned i = 0; i < DTXN_MAX_TABLES; i++) {
		if (cat->present[i] &&
		    strncmp(cat->tables[i].def.name, def->name, DTXN_TABLE_NAME_MAX) == 0) {
			STORE_LOG(ERR, "table %s: name already taken by id %u", def->name, i);
			return -EEXIST;
		}
	}

	t = &cat->tables[def->id];
	memset(t, 0, sizeof(*t));
	t->def = *def;
	t->def.slots_per_bucket = slots;
	t->def.n_buckets = n_buckets;
	t->slot_size = slot_size;
	t->aux_size = aux_size;
	t->bucket_size = bucket_size;
	t->bucket_hdr_size = catalog_bucket_hdr_size(def);
	t->n_buckets = n_buckets;
	t->n_replicas = cat->n_replicas;
	/* FORD's rule: primary on id % n_mn, backups on the next MNs. */
	for (r = 0; r < cat->n_replicas; r++)
		t->mn[r] = (uint16_t)((def->id + r) % cat->n_mn);
	/* --placement key: n_mn stripes of consecutive buckets, stripe s on MN mn[r] + s */
	t->n_mn = cat->n_mn;
	t->n_stripes = cat->placement == DTXN_PLACEMENT_KEY ? cat->n_mn : 1;
	t->stripe_buckets = (n_buckets + t->n_stripes - 1) / t->n_stripes;
	cat->present[def->id] = true;
	cat->n_tables++;
	/* A new table invalidates an earlier layout. */
	cat->region_size = 0;
	return 0;
}

int
dtxn_catalog_set_delta(struct dtxn_catalog *cat, uint32_t id, uint32_t delta_size)
{
	struct dtxn_table *t;

	if (cat == NULL || id >= DTXN_MAX_TABLES || !cat->present[id])
		return -EINVAL;
	t = &cat->tables[id];
	if (delta_size % 8 != 0 || delta_size > STORE_AUX_MAX ||
	    (delta_size != 0 &&
	     t->n_buckets * t->def.slots_per_bucket > DTXN_RADDR_OFF_MASK / delta_size)) {
		STORE_LOG(ERR, "table %s: delta area of %u B, expected a multiple of 8 <= %u that fits 48 bits per slot",
			  t->def.name, delta_size, STORE_AUX_MAX);
		return -EINVAL;
	}
	t->delta_size = delta_size;
	cat->region_size = 0;
	return 0;
}

int
dtxn_catalog_set_primary(struct dtxn_catalog *cat, uint32_t id, uint16_t mn)
{
	struct dtxn_table *t;

	if (cat == NULL || id >= DTXN_MAX_TABLES || !cat->present[id])
		return -EINVAL;
	if (mn >= cat->n_mn)
		return -ERANGE;
	t = &cat->tables[id];
	for (uint16_t r = 0; r < t->n_replicas; r++)
		t->mn[r] = (uint16_t)((mn + r) % cat->n_mn);
	cat->region_size = 0;
	return 0;
}

/*
 * Areas of a heap of @p t: the rows it must hold and a chunk per
 * coordinator. An aux heap never has more than slots (a slot keeps its
 * area, and inserts take theirs slot by slot); a delta heap keeps every
 * coordinator's chunk (@p cap_slots false): its areas are taken by
 * updates of any row, and a coordinator that found the heap handed out
 * to the others' chunks would abort every first update of a small table.
 */
static int
catalog_heap_areas(const struct dtxn_table *t, uint32_t n_logs, uint32_t chunk, bool cap_slots,
		   uint64_t *areas)
{
	uint64_t slots = t->stripe_buckets * t->def.slots_per_bucket; /* of one stripe */
	uint64_t rows = t->def.max_keys;

	/* a stripe's delta heap serves the rows its slots can hold */
	if (t->n_stripes > 1)
		rows = RTE_MIN(rows, slots);
	*areas = rows + (uint64_t)n_logs * chunk;
	if (cap_slots)
		*areas = RTE_MIN(slots, *areas);
	if (*areas > UINT32_MAX) {
		STORE_LOG(ERR, "layout: table %s needs %" PRIu64 " heap areas, at most %u",
			  t->def.name, *areas, UINT32_MAX);
		return -E2BIG;
	}
	return 0;
}

/* Places a heap of @p bytes at MN @p m's cursor; its offset in @p off. */
static int
catalog_place_heap(const struct dtxn_table *t, uint16_t m, uint64_t *cursor, uint64_t bytes,
		   uint64_t *off)
{
	*off = store_align(*cursor, STORE_TABLE_ALIGN);
	if (bytes > DTXN_RADDR_OFF_MASK - *off) {
		STORE_LOG(ERR, "layout: table %s's heaps do not fit MN %u's 48-bit region",
			  t->def.name, m);
		return -E2BIG;
	}
	*cursor = *off + bytes;
	return 0;
}

/*
 * DTXN_PLACEMENT_KEY: every MN holds one stripe of @p t per replica role,
 * each with its heaps, at the same offsets on every MN (after the
 * furthest cursor), so off[r], aux_off[r] and delta_off[r] serve every
 * stripe.
 */
static int
catalog_layout_stripes(const struct dtxn_catalog *cat, struct dtxn_table *t, uint64_t *cursor)
{
	uint64_t at = 0;

	for (uint16_t m = 0; m < cat->n_mn; m++)
		at = RTE_MAX(at, cursor[m]);
	for (uint16_t r = 0; r < t->n_replicas; r++) {
		t->off[r] = store_align(at, STORE_TABLE_ALIGN);
		if (store_table_bytes(t) > DTXN_RADDR_OFF_MASK - t->off[r]) {
			STORE_LOG(ERR, "layout: table %s does not fit a 48-bit region", t->def.name);
			return -E2BIG;
		}
		at = t->off[r] + store_table_bytes(t);
		if (t->aux_size != 0 &&
		    catalog_place_heap(t, t->mn[r], &at, store_aux_bytes(t), &t->aux_off[r]) != 0)
			return -E2BIG;
		if (t->delta_size != 0 &&
		    catalog_place_heap(t, t->mn[r], &at, store_delta_bytes(t), &t->delta_off[r]) != 0)
			return -E2BIG;
	}
	for (uint16_t m = 0; m < cat->n_mn; m++)
		cursor[m] = at;
	return 0;
}

int
dtxn_catalog_layout(struct dtxn_catalog *cat, uint32_t n_logs, uint64_t log_bytes)
{
	uint64_t cursor[DTXN_MAX_NODES] = { 0 };
	uint64_t used = 0, logs_end, msg_off;

	if (cat == NULL || cat->n_mn == 0)
		return -EINVAL;
	if (log_bytes % 64 != 0 || (n_logs != 0 && log_bytes == 0)) {
		STORE_LOG(ERR, "layout: log_bytes %" PRIu64 " must be a non-zero multiple of 64",
			  log_bytes);
		return -EINVAL;
	}

	if (cat->aux_chunk == 0)
		cat->aux_chunk = DTXN_AUX_CHUNK_DEFAULT;
	if (cat->aux_chunk > DTXN_AUX_CHUNK_MAX) {
		STORE_LOG(ERR, "layout: aux chunk of %u areas, expected 1..%u", cat->aux_chunk,
			  DTXN_AUX_CHUNK_MAX);
		return -EINVAL;
	}
	for (uint16_t m = 0; m < cat->n_mn; m++)
		cursor[m] = STORE_REGION_RSVD;
	for (unsigned id = 0; id < DTXN_MAX_TABLES; id++) {
		struct dtxn_table *t = &cat->tables[id];

		if (!cat->present[id])
			continue;
		t->aux_areas = 0;
		t->delta_areas = 0;
		if (t->aux_size != 0 &&
		    catalog_heap_areas(t, n_logs, cat->aux_chunk, true, &t->aux_areas) != 0)
			return -E2BIG;
		if ((t->def.flags & DTXN_TABLE_F_DELTA_BY_SLOT) &&
		    (t->aux_size == 0 || t->delta_size == 0)) {
			STORE_LOG(ERR, "layout: table %s: delta areas by slot need an aux heap and a delta heap",
				  t->def.name);
			return -EINVAL;
		}
		if (t->def.flags & DTXN_TABLE_F_DELTA_BY_SLOT)
			t->delta_areas = t->aux_areas; /* area n: the row whose aux area is n */
		else if (t->delta_size != 0 &&
			 catalog_heap_areas(t, n_logs, cat->aux_chunk, false, &t->delta_areas) != 0)
			return -E2BIG;
		if (t->n_stripes > 1) {
			if (catalog_layout_stripes(cat, t, cursor) != 0)
				return -E2BIG;
			continue;
		}
		for (uint16_t r = 0; r < t->n_replicas; r++) {
			uint16_t m = t->mn[r];
			uint64_t off = store_align(cursor[m], STORE_TABLE_ALIGN);

			if (store_table_bytes(t) > DTXN_RADDR_OFF_MASK - off) {
				STORE_LOG(ERR, "layout: table %s does not fit MN %u's 48-bit region",
					  t->def.name, m);
				return -E2BIG;
			}
			t->off[r] = off;
			cursor[m] = off + store_table_bytes(t);
			/* the aux heap follows the buckets (add_table_aux), the delta heap it */
			if (t->aux_size != 0 &&
			    catalog_place_heap(t, m, &cursor[m], store_aux_bytes(t), &t->aux_off[r]) != 0)
				return -E2BIG;
			if (t->delta_size != 0 &&
			    catalog_place_heap(t, m, &cursor[m], store_delta_bytes(t),
					       &t->delta_off[r]) != 0)
				return -E2BIG;
		}
	}
	for (uint16_t m = 0; m < cat->n_mn; m++) {
		cat->mn_used[m] = cursor[m];
		if (cursor[m] > used)
			used = cursor[m];
	}

	/* Logs at one offset on every MN, after the largest table area. */
	used = store_align(used, STORE_TABLE_ALIGN);
	if (n_logs != 0 && log_bytes > (DTXN_RADDR_OFF_MASK - used) / n_logs) {
		STORE_LOG(ERR, "layout: %u logs of %" PRIu64 " bytes do not fit 48 bits",
			  n_logs, log_bytes);
		return -E2BIG;
	}
	logs_end = used + (uint64_t)n_logs * log_bytes + DTXN_STORE_LEASE_BYTES + DTXN_STORE_CTL_BYTES +
		   (uint64_t)n_logs * DTXN_STORE_CREC_BYTES;
	msg_off = store_align(logs_end, STORE_TABLE_ALIGN);
	if (cat->msg_bytes > DTXN_RADDR_OFF_MASK - msg_off) {
		STORE_LOG(ERR, "layout: a message area of %" PRIu64 " bytes does not fit 48 bits",
			  cat->msg_bytes);
		return -E2BIG;
	}
	if (cat->msg_bytes != 0)
		logs_end = msg_off + cat->msg_bytes;
	if (store_align(logs_end, STORE_REGION_ALIGN) > DTXN_RADDR_OFF_MASK) {
		STORE_LOG(ERR, "layout: region of %" PRIu64 " bytes does not fit 48 bits",
			  logs_end);
		return -E2BIG;
	}
	cat->n_logs = n_logs;
	cat->log_bytes = log_bytes;
	cat->log_off = used;
	cat->lease_off = used + (uint64_t)n_logs * log_bytes;
	cat->ctl_off = cat->lease_off + DTXN_STORE_LEASE_BYTES;
	cat->crec_off = cat->ctl_off + DTXN_STORE_CTL_BYTES;
	cat->msg_off = cat->msg_bytes != 0 ? msg_off : 0;
	cat->region_size = store_align(logs_end, STORE_REGION_ALIGN);
	STORE_LOG(DEBUG, "layout: %u tables, logs at %" PRIu64 ", region %" PRIu64 " bytes",
		  cat->n_tables, cat->log_off, cat->region_size);
	return 0;
}

_Static_assert(DTXN_STORE_RSVD_BYTES == STORE_REGION_RSVD, "reserved words fit the reserved bytes");
_Static_assert(DTXN_STORE_RSVD_MAX * 8 <= DTXN_STORE_RSVD_BYTES, "reserved words");
_Static_assert(DTXN_STORE_RSVD_BYTES <= DTXN_FABRIC_DM_BYTES,
	       "reserved words sit in the RNIC's device memory (NIC model)");

dtxn_raddr_t
dtxn_store_rsvd_raddr(const struct dtxn_catalog *cat, uint16_t mn, unsigned word)
{
	if (cat == NULL || word == 0 || word >= DTXN_STORE_RSVD_MAX || mn >= cat->n_mn)
		return 0;
	return DTXN_RADDR(mn, (uint64_t)word * 8);
}

dtxn_raddr_t
dtxn_store_lease_raddr(const struct dtxn_catalog *cat, uint16_t node, bool state)
{
	if (cat == NULL || cat->region_size == 0 || node >= DTXN_MAX_NODES)
		return 0;
	return DTXN_RADDR(0, cat->lease_off + (state ? DTXN_MAX_NODES * 8u : 0) + node * 8u);
}

_Static_assert(DTXN_STORE_CTL_BYTES % 64 == 0, "the control area keeps the layout 64-byte aligned");
_Static_assert(DTXN_STORE_LEASE_BYTES % 64 == 0, "the control area starts 64-byte aligned");

dtxn_raddr_t
dtxn_store_ctl_raddr(const struct dtxn_catalog *cat, uint64_t off)
{
	if (cat == NULL || cat->region_size == 0 || off >= DTXN_STORE_CTL_BYTES)
		return 0;
	return DTXN_RADDR(0, cat->ctl_off + off);
}

_Static_assert(DTXN_STORE_CREC_BYTES % 64 == 0, "commit records stay 64-byte aligned");

dtxn_raddr_t
dtxn_store_crec_raddr(const struct dtxn_catalog *cat, uint16_t mn, uint32_t gid)
{
	if (cat == NULL || cat->region_size == 0 || mn >= cat->n_mn || gid >= cat->n_logs)
		return 0;
	return DTXN_RADDR(mn, cat->crec_off + (uint64_t)gid * DTXN_STORE_CREC_BYTES);
}

const struct dtxn_table *
dtxn_catalog_table(const struct dtxn_catalog *cat, uint32_t id)
{
	if (cat == NULL || id >= DTXN_MAX_TABLES || !cat->present[id])
		return NULL;
	return &cat->tables[id];
}

dtxn_raddr_t
dtxn_store_log_raddr(const struct dtxn_catalog *cat, uint32_t coord, uint16_t mn)
{
	if (cat == NULL || coord >= cat->n_logs || mn >= cat->n_mn)
		return 0;
	return DTXN_RADDR(mn, cat->log_off + (uint64_t)coord * cat->log_bytes);
}
