/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MN memory accounting (doc/guides/report.md, "MN memory"): what each MN
 * region holds, by kind, from the catalog's layout, the raw bytes of
 * the population the loader put there, and the delta areas a run handed
 * out (dtxn_store_heap_census(), read after the run).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

#include "store_private.h"

int
dtxn_catalog_count_load(struct dtxn_catalog *cat, uint32_t id, uint64_t raw_bytes)
{
	if (cat == NULL || id >= DTXN_MAX_TABLES || !cat->present[id])
		return -EINVAL;
	cat->tables[id].loaded_rows++;
	cat->tables[id].loaded_raw_bytes += raw_bytes;
	return 0;
}

/* Aux areas of @p t that rows hold: counted after the run, else the loaded rows. */
static uint64_t
mem_aux_held(const struct dtxn_table *t)
{
	return RTE_MIN(t->aux_census ? t->aux_held : t->loaded_rows, t->aux_areas);
}

/* Bytes of @p t's delta areas not handed out (0 without a delta heap). */
static uint64_t
mem_delta_free(const struct dtxn_table *t)
{
	return (t->delta_areas - RTE_MIN(t->delta_used, t->delta_areas)) * t->delta_size;
}

/*
 * Bytes of @p t's heaps that no row holds when the report is made (the
 * allocator's free room, struct dtxn_store_mem heap_free): aux areas no
 * slot names and delta areas not handed out. Heap headers count as held.
 */
static uint64_t
mem_heap_free(const struct dtxn_table *t)
{
	uint64_t b = 0;

	if (t->aux_size != 0)
		b += (t->aux_areas - mem_aux_held(t)) * t->aux_size;
	return b + mem_delta_free(t);
}

/*
 * Bytes of @p t that hold no loaded row: its @p free_slots free slots and
 * their share of the bucket headers (a bucket's header counts for its
 * rows pro rata: an index sized with room to grow does not charge its
 * rows the headers of buckets it keeps empty), and the aux areas no
 * loaded row took with the heap's header (the insert room).
 */
static uint64_t
mem_empty_bytes(const struct dtxn_table *t, uint64_t free_slots)
{
	uint32_t s = t->def.slots_per_bucket;
	uint64_t hdr = t->bucket_size - (uint64_t)s * t->slot_size;
	uint64_t aux = 0;

	if (t->aux_size != 0)
		aux = store_aux_bytes(t) - RTE_MIN(t->loaded_rows, t->aux_areas) * t->aux_size;
	/* the delta areas handed out are their rows' (Motor's bars, Lotus's versions) */
	if (t->delta_size != 0)
		aux += DTXN_AUX_HEAP_HDR + mem_delta_free(t);
	return free_slots * t->slot_size + free_slots * hdr / s + aux;
}

/* Adds one replica of @p t (on the MN @p m describes) to @p m; the
 * primary's is logged at debug level (--log-level=dtxn.store:debug). */
static void
mem_add_replica(const struct dtxn_table *t, struct dtxn_store_mem *m, bool primary)
{
	uint64_t slots = t->n_buckets * t->def.slots_per_bucket;
	uint64_t free_slots = slots > t->loaded_rows ? slots - t->loaded_rows : 0;

	if (primary)
		STORE_LOG(DEBUG, "mem: table %s: %" PRIu64 " buckets x %u slots of %u B, %" PRIu64 " aux areas of %u B, %" PRIu64 " of %" PRIu64 " delta areas of %u B, %" PRIu64 " rows (%.1f%%), index %" PRIu64 " B, values %" PRIu64 " B, empty %" PRIu64 " B, raw %" PRIu64 " B",
			  t->def.name, t->n_buckets, t->def.slots_per_bucket, t->slot_size,
			  t->aux_areas, t->aux_size, t->delta_used, t->delta_areas, t->delta_size,
			  t->loaded_rows,
			  slots != 0 ? 100.0 * (double)t->loaded_rows / (double)slots : 0.0,
			  store_table_bytes(t), store_aux_bytes(t) + store_delta_bytes(t),
			  mem_empty_bytes(t, free_slots), t->loaded_raw_bytes);

	m->index += store_table_bytes(t);
	m->values += store_aux_bytes(t) + store_delta_bytes(t);
	m->empty += mem_empty_bytes(t, free_slots);
	m->heap_free += mem_heap_free(t);
	m->raw += t->loaded_raw_bytes;
}

int
dtxn_catalog_mem(const struct dtxn_catalog *cat, uint16_t mn, struct dtxn_store_mem *out)
{
	uint64_t known;

	if (cat == NULL || out == NULL || mn >= cat->n_mn || cat->region_size == 0)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->total = cat->region_size;
	out->reserved = STORE_REGION_RSVD + DTXN_STORE_LEASE_BYTES + DTXN_STORE_CTL_BYTES +
			(uint64_t)cat->n_logs * DTXN_STORE_CREC_BYTES;
	out->logs = (uint64_t)cat->n_logs * cat->log_bytes;
	out->msgs = cat->msg_bytes;
	for (unsigned id = 0; id < DTXN_MAX_TABLES; id++) {
		const struct dtxn_table *t = &cat->tables[id];

		if (!cat->present[id])
			continue;
		if (t->n_stripes > 1) {
			/* a stripe per replica role on every MN: its share of the rows */
			struct dtxn_table ts = *t;

			ts.n_buckets = t->stripe_buckets;
			ts.loaded_rows /= t->n_stripes;
			ts.loaded_raw_bytes /= t->n_stripes;
			ts.aux_held /= t->n_stripes;
			ts.delta_used /= t->n_stripes;
			for (uint16_t r = 0; r < t->n_replicas; r++)
				mem_add_replica(&ts, out, store_stripe_on(t, r, mn) == 0 && r == 0);
			continue;
		}
		for (uint16_t r = 0; r < t->n_replicas; r++)
			if (t->mn[r] == mn)
				mem_add_replica(t, out, r == 0);
	}
	known = out->index + out->values + out->logs + out->msgs + out->reserved;
	out->unused = out->total > known ? out->total - known : 0;
	return 0;
}

/* The slots of @p t's primary (at @p table): those that name an aux area
 * into @p aux, those whose delta area is in use (DTXN_SLOT_DELTA, tables
 * with DTXN_TABLE_F_DELTA_BY_SLOT) into @p delta. */
static void
census_slots(const struct dtxn_table *t, const char *table, uint64_t buckets, uint64_t *aux,
	     uint64_t *delta)
{
	for (uint64_t b = 0; b < buckets; b++)
		for (uint32_t i = 0; i < t->def.slots_per_bucket; i++) {
			struct dtxn_slot_hdr h;

			store_slot_hdr_get(t, table + b * t->bucket_size, i, &h);
			*aux += h.aux != 0;
			*delta += (h.flags & DTXN_SLOT_DELTA) != 0;
		}
}

/*
 * Adds stripe @p s of @p t's primary (base @p base of its MN) to the
 * census: its slots that name an aux area and use a delta area, its delta
 * bump word. @return false if the region is too small for the table.
 */
static bool
census_stripe(const struct dtxn_table *t, const struct dtxn_fabric_conf *conf, const char *base,
	      uint64_t s, uint64_t *aux, uint64_t *by_slot, uint64_t *bump)
{
	uint64_t first = s * t->stripe_buckets;
	uint64_t n = first < t->n_buckets ? RTE_MIN(t->stripe_buckets, t->n_buckets - first) : 0;

	if (t->off[0] + store_table_bytes(t) > conf->mn_region_size)
		return false;
	if (t->aux_size != 0)
		census_slots(t, base + t->off[0], n, aux, by_slot);
	if (t->delta_size != 0 && t->delta_off[0] + store_delta_bytes(t) <= conf->mn_region_size)
		*bump += RTE_MIN(__atomic_load_n((const uint64_t *)(const void *)(base + t->delta_off[0]),
						 __ATOMIC_ACQUIRE), t->delta_areas);
	return true;
}

/* dtxn_store_heap_census() of a table of several stripes: @return 1 if counted, else 0. */
static int
census_striped(struct dtxn_fabric *f, const struct dtxn_catalog *cat,
	       const struct dtxn_fabric_conf *conf, struct dtxn_table *t)
{
	uint64_t by_slot = 0, bump = 0, aux = 0;

	for (uint16_t s = 0; s < t->n_stripes; s++) {
		const char *base = dtxn_fabric_mn_base(f, store_stripe_mn(t, 0, s));

		if (base == NULL || !census_stripe(t, conf, base, s, &aux, &by_slot, &bump))
			return 0;
	}
	if (t->aux_size != 0) {
		t->aux_held = aux;
		t->aux_census = true;
	}
	if (t->delta_size == 0)
		return 0;
	if (t->def.flags & DTXN_TABLE_F_DELTA_BY_SLOT) {
		t->delta_used = by_slot;
		t->delta_faas = 0;
	} else {
		t->delta_used = bump; /* per stripe, its heap's areas at most */
		t->delta_faas = cat->aux_chunk != 0 ? bump / cat->aux_chunk : 0;
	}
	return 1;
}

int
dtxn_store_heap_census(struct dtxn_fabric *f, struct dtxn_catalog *cat)
{
	const struct dtxn_fabric_conf *conf;
	int n = 0;

	if (f == NULL || cat == NULL)
		return -EINVAL;
	conf = dtxn_fabric_conf(f);
	for (unsigned id = 0; id < DTXN_MAX_TABLES; id++) {
		struct dtxn_table *t = &cat->tables[id];
		uint64_t by_slot = 0, bump;
		const char *base;

		if (!cat->present[id] || (t->delta_size == 0 && t->aux_size == 0))
			continue;
		if (t->n_stripes > 1) {
			n += conf != NULL ? census_striped(f, cat, conf, t) : 0;
			continue;
		}
		base = dtxn_fabric_mn_base(f, t->mn[0]);
		if (base == NULL || conf == NULL ||
		    t->off[0] + store_table_bytes(t) > conf->mn_region_size)
			continue;
		if (t->aux_size != 0) {
			t->aux_held = 0;
			census_slots(t, base + t->off[0], t->n_buckets, &t->aux_held, &by_slot);
			t->aux_census = true;
		}
		if (t->delta_size == 0 || t->delta_off[0] + store_delta_bytes(t) > conf->mn_region_size)
			continue;
		if (t->def.flags & DTXN_TABLE_F_DELTA_BY_SLOT) {
			t->delta_used = RTE_MIN(by_slot, t->delta_areas);
			t->delta_faas = 0;
			n++;
			continue;
		}
		/* the bump word counts chunks handed out; a FAA past the end
		 * still moved it: count the heap's areas at most */
		bump = __atomic_load_n((const uint64_t *)(const void *)(base + t->delta_off[0]),
				       __ATOMIC_ACQUIRE);
		t->delta_used = RTE_MIN(bump, t->delta_areas);
		t->delta_faas = cat->aux_chunk != 0 ? bump / cat->aux_chunk : 0;
		n++;
	}
	return n;
}
