/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MN side: the loader writes records straight into MN memory (the MN
 * role's CPU, before the run) and the scanner walks them (invariant
 * checks, after the run). Both reach memory through dtxn_fabric_mn_base(),
 * never through WRs. The loader allocates nothing and logs nothing per
 * record: millions of records load in seconds.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_prefetch.h>

#include "store_private.h"

/*
 * One replica of a table as this process maps it: the base of each
 * stripe's buckets (one stripe with DTXN_PLACEMENT_TABLE; stripe s of
 * replica r is on MN (mn[r] + s) % n_mn with DTXN_PLACEMENT_KEY).
 */
struct loader_rep {
	uint16_t r;
	char *stripe[DTXN_MAX_NODES];
};

/* Base of stripe @p s of replica r's buckets in this process, or NULL (not mapped, too small). */
static char *
loader_table_base(struct dtxn_fabric *f, const struct dtxn_table *t, uint16_t r, uint16_t s)
{
	const struct dtxn_fabric_conf *conf = dtxn_fabric_conf(f);
	char *base = dtxn_fabric_mn_base(f, store_stripe_mn(t, r, s));

	if (base == NULL || conf == NULL ||
	    t->off[r] + store_table_bytes(t) > conf->mn_region_size ||
	    t->aux_off[r] + store_aux_bytes(t) > conf->mn_region_size ||
	    t->delta_off[r] + store_delta_bytes(t) > conf->mn_region_size)
		return NULL;
	return base + t->off[r];
}

/* Maps every stripe of replica @p r into @p rep (replica 0 of a load in
 * scratch: the scratch copy): 0, or -ENXIO if one is not mapped here. */
static int
loader_rep_map(struct dtxn_fabric *f, const struct dtxn_table *t, uint16_t r,
	       struct loader_rep *rep)
{
	rep->r = r;
	if (r == 0 && t->load_scratch != NULL) {
		for (uint16_t s = 0; s < t->n_stripes; s++)
			rep->stripe[s] = (char *)t->load_scratch + s * store_stripe_span(t);
		return 0;
	}
	for (uint16_t s = 0; s < t->n_stripes; s++) {
		rep->stripe[s] = loader_table_base(f, t, r, s);
		if (rep->stripe[s] == NULL)
			return -ENXIO;
	}
	return 0;
}

/* Stripe of @p rep that holds the slot at @p slot, or -1. */
static int
loader_stripe_of_ptr(const struct dtxn_table *t, const struct loader_rep *rep, const void *slot)
{
	for (uint16_t s = 0; s < t->n_stripes; s++)
		if ((const char *)slot >= rep->stripe[s] &&
		    store_slot_index(t, (uint64_t)((const char *)slot - rep->stripe[s])) != UINT64_MAX)
			return s;
	return -1;
}

/* Aux heap of stripe @p s of a replica (the table has one). */
static inline char *
loader_heap(const struct dtxn_table *t, const struct loader_rep *rep, uint64_t s)
{
	return rep->stripe[s] - t->off[rep->r] + t->aux_off[rep->r];
}

/* The heap's bump word: areas handed out (dtxn_store_aux_bump_raddr()). */
static inline uint64_t *
loader_bump(const struct dtxn_table *t, const struct loader_rep *rep, uint64_t s)
{
	return (uint64_t *)(void *)loader_heap(t, rep, s);
}

/* Aux area @p n (1..aux_areas) of stripe @p s of a replica. */
static inline char *
loader_aux(const struct dtxn_table *t, const struct loader_rep *rep, uint64_t s, uint64_t n)
{
	return loader_heap(t, rep, s) + store_aux_area_off(t, n);
}

void *
dtxn_store_aux_ptr(struct dtxn_fabric *f, const struct dtxn_table *t, uint16_t r,
		   const void *slot)
{
	struct loader_rep rep;
	uint32_t n;
	int s;

	if (f == NULL || t == NULL || slot == NULL || t->aux_size == 0 || r >= t->n_replicas ||
	    loader_rep_map(f, t, r, &rep) != 0)
		return NULL;
	s = loader_stripe_of_ptr(t, &rep, slot);
	if (s < 0)
		return NULL;
	n = dtxn_store_slot_aux(slot);
	return n == 0 || n > t->aux_areas ? NULL : loader_aux(t, &rep, (uint64_t)s, n);
}

void *
dtxn_store_slot_aux_ptr(struct dtxn_fabric *f, const struct dtxn_table *t, const void *slot)
{
	void *aux = NULL;

	/* the replica whose buckets hold the slot: the loader formats the
	 * first replica this process maps (loader_replicas()), a backup in
	 * an MN process that holds no primary */
	for (uint16_t r = 0; t != NULL && aux == NULL && r < t->n_replicas; r++)
		aux = dtxn_store_aux_ptr(f, t, r, slot);
	return aux;
}

void *
dtxn_store_heap_area_ptr(struct dtxn_fabric *f, const struct dtxn_table *t, enum dtxn_heap_kind h,
			 uint16_t r, const void *slot, uint32_t n)
{
	struct loader_rep rep;
	dtxn_raddr_t a;
	int s;

	if (f == NULL || t == NULL || slot == NULL || r >= t->n_replicas ||
	    loader_rep_map(f, t, r, &rep) != 0)
		return NULL;
	s = loader_stripe_of_ptr(t, &rep, slot);
	if (s < 0)
		return NULL;
	a = dtxn_store_heap_area_raddr(t, h, r, DTXN_RADDR(store_stripe_mn(t, 0, (uint64_t)s), 0), n);
	return a == 0 ? NULL : rep.stripe[s] - t->off[r] + DTXN_RADDR_OFF(a);
}

static inline struct dtxn_bucket_hdr *
loader_bucket(const struct dtxn_table *t, const struct loader_rep *rep, uint64_t b)
{
	b %= t->n_buckets;
	if (t->n_stripes == 1)
		return (struct dtxn_bucket_hdr *)(rep->stripe[0] + b * t->bucket_size);
	return (struct dtxn_bucket_hdr *)(rep->stripe[b / t->stripe_buckets] +
					  (b % t->stripe_buckets) * t->bucket_size);
}

/* Buckets a key may live in: its home and the next ones, never wrapping onto itself. */
static inline uint64_t
loader_window(const struct dtxn_table *t)
{
	return RTE_MIN((uint64_t)DTXN_STORE_MAX_PROBE, t->n_buckets);
}

/* Sets the overflow flag on the @p dist buckets from @p home on, on every
 * replica being written (table[r] NULL: not mapped here, or deferred). */
static void
loader_mark_overflow(const struct dtxn_table *t, struct loader_rep *const *table, uint64_t home,
		     uint64_t dist)
{
	for (uint16_t r = 0; r < t->n_replicas; r++)
		for (uint64_t p = 0; table[r] != NULL && p < dist; p++)
			loader_bucket(t, table[r], home + p)->version |= DTXN_BUCKET_OVERFLOW;
}

/*
 * A fresh area of stripe @p s's aux heap for a record: the next of the
 * reference copy's heap, its bump word mirrored on every replica written.
 * @return the area, or 0 (the heap is full).
 */
static uint32_t
loader_aux_take(const struct dtxn_table *t, struct loader_rep *const *table, uint16_t ref,
		uint64_t s)
{
	uint64_t *bump = loader_bump(t, table[ref], s);

	if (*bump >= t->aux_areas)
		return 0;
	++*bump;
	for (uint16_t r = 0; r < t->n_replicas; r++)
		if (r != ref && table[r] != NULL)
			*loader_bump(t, table[r], s) = *bump;
	return (uint32_t)*bump;
}

/*
 * Moves the record in slot @p ss of bucket @p sb to slot @p ds of bucket
 * @p db, on every replica. A row's aux area is in its slot's stripe: a
 * move to another stripe copies the area into a fresh one there.
 * @return 0, or -ENOSPC (that stripe's aux heap is full; nothing moved).
 */
static int
loader_move(const struct dtxn_table *t, struct loader_rep *const *table, uint16_t ref,
	    uint64_t sb, unsigned ss, uint64_t db, unsigned ds)
{
	uint64_t s_src = (sb % t->n_buckets) / t->stripe_buckets;
	uint64_t s_dst = (db % t->n_buckets) / t->stripe_buckets;
	struct dtxn_slot_hdr h;
	uint32_t naux = 0;
	uint64_t home;

	store_slot_hdr_get(t, loader_bucket(t, table[ref], sb), ss, &h);
	home = dtxn_store_bucket_of(t, h.key);
	if (t->aux_size != 0 && h.aux != 0 && s_src != s_dst) {
		naux = loader_aux_take(t, table, ref, s_dst);
		if (naux == 0)
			return -ENOSPC;
	}
	for (uint16_t r = 0; r < t->n_replicas; r++) {
		void *dst;

		if (table[r] == NULL)
			continue;
		/* the slot header carries its aux area's number: the area stays */
		dst = dtxn_store_bucket_slot(t, loader_bucket(t, table[r], db), ds);
		memcpy(dst, dtxn_store_bucket_slot(t, loader_bucket(t, table[r], sb), ss),
		       t->slot_size);
		if (naux != 0) {
			memcpy(loader_aux(t, table[r], s_dst, naux),
			       loader_aux(t, table[r], s_src, h.aux), t->aux_size);
			memcpy((char *)dst + offsetof(struct dtxn_slot_hdr, aux), &naux, sizeof(naux));
		}
	}
	loader_mark_overflow(t, table, home, (db + t->n_buckets - home) % t->n_buckets);
	return 0;
}

/*
 * Before the run a bucket's records fill a prefix of its slots: the loader
 * always takes the first free slot, and a displacement (loader_make_room)
 * refills every slot it empties in the same call; slots past the prefix
 * are still as the fabric zeroed them. One pass over the prefix finds the
 * key (>= 0) or not (-ENOENT), and sets *free_slot to the first free slot
 * (-1: none); it stops at the first slot never written (an all-zero
 * header), so a sparse bucket (a table with room to grow) costs the cache
 * lines of its records, not of all its slots.
 */
static int
loader_scan(const struct dtxn_table *t, const void *bucket, uint64_t key, int *free_slot)
{
	struct dtxn_slot_hdr h;

	*free_slot = -1;
	for (unsigned i = 0; i < t->def.slots_per_bucket; i++) {
		store_slot_hdr_get(t, bucket, i, &h);
		if (h.flags & DTXN_SLOT_VALID) {
			if (h.key == key && h.table_id == t->def.id)
				return (int)i;
			continue;
		}
		if (*free_slot < 0)
			*free_slot = (int)i;
		if (h.key == 0 && h.table_id == 0 && h.flags == 0)
			break; /* never written: neither is any slot after it */
	}
	return -ENOENT;
}

/* Most buckets the displacement search visits; its queue lives on the stack. */
#define LOADER_BFS_MAX 256

struct loader_hop {
	uint64_t b;       /* bucket */
	int32_t parent;   /* hop whose bucket held the record moved here; -1: key's window */
	uint32_t slot;    /* that record's slot in the parent's bucket */
};

/*
 * Linear probing at 75% load with a 4-bucket window overflows now and then
 * (about 3 keys in 1000 at the end of a million-key load). When the key's
 * window is full, search breadth-first for a chain of records, each
 * movable within its own window, that ends at a free slot; shift them
 * along it. Records keep the invariant lookups rely on: a record that is
 * p buckets past its home has the overflow flag set on the p buckets
 * before it (flags are only ever set, never cleared, at load).
 *
 * @return 0 with *out_b / *out_slot freed for the new key, or -ENOSPC.
 */
static int
loader_make_room(const struct dtxn_table *t, struct loader_rep *const *table, uint16_t ref,
		 uint64_t home, uint64_t *out_b, unsigned *out_slot)
{
	struct loader_hop q[LOADER_BFS_MAX];
	uint64_t win = loader_window(t);
	unsigned head = 0, n = 0;

	for (uint64_t p = 0; p < win; p++)
		q[n++] = (struct loader_hop){ (home + p) % t->n_buckets, -1, 0 };
	while (head < n) {
		unsigned cur = head++;
		void *bkt = loader_bucket(t, table[ref], q[cur].b);
		int free_slot = dtxn_store_bucket_free_slot(t, bkt);

		if (free_slot >= 0) {
			unsigned i = cur, dst = (unsigned)free_slot;

			while (q[i].parent >= 0) {
				unsigned par = (unsigned)q[i].parent;

				if (loader_move(t, table, ref, q[par].b, q[i].slot, q[i].b,
						dst) != 0)
					return -ENOSPC;
				dst = q[i].slot;
				i = par;
			}
			*out_b = q[i].b;
			*out_slot = dst;
			return 0;
		}
		for (unsigned s = 0; s < t->def.slots_per_bucket && n < LOADER_BFS_MAX; s++) {
			struct dtxn_slot_hdr h;
			uint64_t yh;

			store_slot_hdr_get(t, bkt, s, &h);
			yh = dtxn_store_bucket_of(t, h.key);
			for (uint64_t p = 0; p < win && n < LOADER_BFS_MAX; p++) {
				uint64_t b = (yh + p) % t->n_buckets;
				bool seen = false;

				for (unsigned j = 0; j < n && !seen; j++)
					seen = q[j].b == b;
				if (!seen)
					q[n++] = (struct loader_hop){ b, (int32_t)cur, s };
			}
		}
	}
	return -ENOSPC;
}

/*
 * The scratch copy of @p t's primary (struct dtxn_table load_scratch)
 * for an MN process that maps only some stripes: every stripe's span,
 * zeroed as the fabric zeroes a region. @return 0 or -ENOMEM.
 */
static int
loader_scratch(struct dtxn_fabric *f, struct dtxn_table *t)
{
	const struct dtxn_fabric_conf *conf = dtxn_fabric_conf(f);

	if (conf == NULL || t->off[0] + store_stripe_span(t) > conf->mn_region_size)
		return -ENXIO;
	t->load_scratch = calloc(t->n_stripes, store_stripe_span(t));
	return t->load_scratch == NULL ? -ENOMEM : 0;
}

/*
 * The replicas of @p t mapped in this process (table[r] pointing into
 * @p reps, NULL if not) and the first of them (*ref; UINT16_MAX: none).
 * All of them in the embedded run; an MN process (--role mn) writes its
 * own and skips the others, which their MN processes fill with the same
 * bytes (the load is deterministic: same records, same order, same
 * slots). -ENXIO when a single-process run misses one, and with more
 * than one stripe when one is not mapped here (a stripe's records depend
 * on its neighbours': DTXN_PLACEMENT_KEY loads in one process only).
 */
static int
loader_replicas(struct dtxn_fabric *f, const struct dtxn_table *t, struct loader_rep *reps,
		struct loader_rep **table, uint16_t *ref)
{
	*ref = UINT16_MAX;
	if (t->n_stripes > 1 && dtxn_fabric_partial(f) && t->copies_deferred) {
		/* an MN process: the whole primary in scratch, its stripes copied at the end */
		if (t->load_scratch == NULL && loader_scratch(f, (struct dtxn_table *)(uintptr_t)t) != 0)
			return -ENOMEM;
		for (uint16_t r = 0; r < t->n_replicas; r++)
			table[r] = NULL;
		*ref = 0;
		table[0] = &reps[0];
		return loader_rep_map(f, t, 0, &reps[0]);
	}
	for (uint16_t r = 0; r < t->n_replicas; r++) {
		table[r] = loader_rep_map(f, t, r, &reps[r]) == 0 ? &reps[r] : NULL;
		if (table[r] != NULL && *ref == UINT16_MAX)
			*ref = r;
		else if (table[r] == NULL && (!dtxn_fabric_partial(f) || t->n_stripes > 1))
			return -ENXIO;
	}
	return *ref == UINT16_MAX && !dtxn_fabric_partial(f) ? -ENXIO : 0;
}

int
dtxn_store_load(struct dtxn_fabric *f, const struct dtxn_table *t, uint64_t key,
		const void *value, dtxn_slot_format_fn fmt, void *arg)
{
	struct loader_rep reps[DTXN_MAX_REPLICAS], *table[DTXN_MAX_REPLICAS];
	struct dtxn_slot_hdr hdr;
	uint64_t home, win, at_b = 0, at_s;
	unsigned at_slot = 0;
	bool found = false;
	uint16_t ref = UINT16_MAX;
	void *dst;

	if (f == NULL || t == NULL || fmt == NULL || t->n_replicas == 0 ||
	    t->n_replicas > DTXN_MAX_REPLICAS || t->n_buckets == 0)
		return -EINVAL;
	if (loader_replicas(f, t, reps, table, &ref) != 0)
		return -ENXIO;
	if (ref == UINT16_MAX)
		return 0;
	/* deferred copies: write the reference replica only (dtxn_store_copy_replicas) */
	for (uint16_t r = 0; t->copies_deferred && r < t->n_replicas; r++)
		if (r != ref)
			table[r] = NULL;

	/*
	 * Walk the key's probe chain on the reference copy: the key may sit in
	 * a bucket only if every bucket before it on the chain has overflowed.
	 * Take the first free slot; keep walking while the chain goes on, so
	 * a duplicate further along is still found.
	 */
	home = dtxn_store_bucket_of(t, key);
	win = loader_window(t);
	for (uint64_t p = 0; p < win; p++) {
		struct dtxn_bucket_hdr *b = loader_bucket(t, table[ref], home + p);
		int s;

		if (loader_scan(t, b, key, &s) >= 0)
			return -EEXIST;
		if (!found && s >= 0) {
			found = true;
			at_b = (home + p) % t->n_buckets;
			at_slot = (unsigned)s;
		}
		if (found && !dtxn_bucket_overflows(b))
			break;
	}
	if (t->aux_size != 0 && t->n_stripes == 1 && *loader_bump(t, table[ref], 0) >= t->aux_areas)
		return -ENOSPC; /* aux heap full */
	if (!found && loader_make_room(t, table, ref, home, &at_b, &at_slot) != 0)
		return -ENOSPC;
	at_s = at_b / t->stripe_buckets; /* the row's aux area is in its slot's stripe */
	if (t->aux_size != 0 && *loader_bump(t, table[ref], at_s) >= t->aux_areas)
		return -ENOSPC; /* aux heap full */

	/* Reference copy: mark the spill path, fill the header, let the protocol format. */
	loader_mark_overflow(t, table, home, (at_b + t->n_buckets - home) % t->n_buckets);
	dst = dtxn_store_bucket_slot(t, loader_bucket(t, table[ref], at_b), at_slot);
	memset(dst, 0, t->slot_size);
	hdr.key = key;
	hdr.table_id = (uint16_t)t->def.id;
	hdr.flags = DTXN_SLOT_VALID;
	/* a fresh area, always: a slot a displacement emptied still names
	 * the area its record took along */
	hdr.aux = t->aux_size != 0 ? (uint32_t)++*loader_bump(t, table[ref], at_s) : 0;
	memcpy(dst, &hdr, sizeof(hdr));
	if (t->aux_size != 0)
		memset(loader_aux(t, table[ref], at_s, hdr.aux), 0, t->aux_size);
	fmt(t, dst, value, arg);

	/* The other copies mirror it: same bucket, same slot, same bytes. */
	for (uint16_t r = 0; r < t->n_replicas; r++) {
		if (r == ref || table[r] == NULL)
			continue;
		memcpy(dtxn_store_bucket_slot(t, loader_bucket(t, table[r], at_b), at_slot),
		       dst, t->slot_size);
		if (t->aux_size != 0) {
			memcpy(loader_aux(t, table[r], at_s, hdr.aux),
			       loader_aux(t, table[ref], at_s, hdr.aux), t->aux_size);
			*loader_bump(t, table[r], at_s) = hdr.aux;
		}
	}
	return 0;
}

/* Bytes of a home bucket prefetched ahead of its load: the header and the
 * first slot headers (a bucket's records fill a prefix of its slots; the
 * hardware prefetcher follows a longer prefix). */
#define LOADER_PREFETCH_BYTES 256

void
dtxn_store_load_prefetch(struct dtxn_fabric *f, const struct dtxn_table *t, uint64_t key)
{
	struct loader_rep reps[DTXN_MAX_REPLICAS], *table[DTXN_MAX_REPLICAS];
	uint16_t ref;
	const char *b;

	if (f == NULL || t == NULL || t->n_buckets == 0 || t->n_replicas == 0 ||
	    t->n_replicas > DTXN_MAX_REPLICAS || loader_replicas(f, t, reps, table, &ref) != 0 ||
	    ref == UINT16_MAX)
		return;
	b = (const char *)loader_bucket(t, table[ref], dtxn_store_bucket_of(t, key));
	for (uint32_t o = 0; o < RTE_MIN(t->bucket_size, (uint32_t)LOADER_PREFETCH_BYTES);
	     o += RTE_CACHE_LINE_SIZE)
		rte_prefetch0(b + o);
}

int
dtxn_catalog_defer_copies(struct dtxn_catalog *cat, bool on)
{
	if (cat == NULL)
		return -EINVAL;
	for (unsigned id = 0; id < DTXN_MAX_TABLES; id++)
		cat->tables[id].copies_deferred = cat->present[id] && on;
	return 0;
}

/*
 * A load in scratch ends: each stripe mapped here (of any replica) gets
 * its bytes from the scratch copy's stripe, which every replica's has the
 * same layout as; the scratch is freed.
 */
static void
loader_scratch_copy(struct dtxn_fabric *f, struct dtxn_table *t)
{
	const struct dtxn_fabric_conf *conf = dtxn_fabric_conf(f);
	uint64_t span = store_stripe_span(t);

	for (uint16_t m = 0; conf != NULL && m < t->n_mn; m++) {
		char *base = dtxn_fabric_mn_base(f, m);

		for (uint16_t r = 0; base != NULL && r < t->n_replicas; r++) {
			int s = store_stripe_on(t, r, m);

			if (s >= 0 && t->off[r] + span <= conf->mn_region_size)
				memcpy(base + t->off[r], (char *)t->load_scratch + (uint64_t)s * span,
				       span);
		}
	}
	free(t->load_scratch);
	t->load_scratch = NULL;
	t->copies_deferred = false;
}

int
dtxn_store_copy_replicas(struct dtxn_fabric *f, struct dtxn_table *t)
{
	struct loader_rep reps[DTXN_MAX_REPLICAS], *table[DTXN_MAX_REPLICAS];
	uint16_t ref = UINT16_MAX;

	if (f == NULL || t == NULL || t->n_replicas > DTXN_MAX_REPLICAS)
		return -EINVAL;
	if (!t->copies_deferred)
		return 0;
	if (t->load_scratch != NULL) {
		loader_scratch_copy(f, t);
		return 0;
	}
	if (loader_replicas(f, t, reps, table, &ref) != 0)
		return -ENXIO;
	for (uint16_t r = 0; ref != UINT16_MAX && r < t->n_replicas; r++) {
		if (r == ref || table[r] == NULL)
			continue;
		for (uint16_t s = 0; s < t->n_stripes; s++) {
			/* glibc's memcpy streams copies this large (non-temporal stores) */
			memcpy(table[r]->stripe[s], table[ref]->stripe[s], store_table_bytes(t));
			if (t->aux_size != 0) /* the heap's header and the areas handed out */
				memcpy(loader_heap(t, table[r], s), loader_heap(t, table[ref], s),
				       store_aux_area_off(t, *loader_bump(t, table[ref], s) + 1));
		}
	}
	t->copies_deferred = false;
	return 0;
}

/* Visits every valid slot of replica @p r: visit(slot), or visit_at(slot, its raddr). */
static int
loader_visit(struct dtxn_fabric *f, const struct dtxn_table *t, uint16_t r,
	    dtxn_slot_visit_fn visit, dtxn_slot_visit_at_fn visit_at, void *arg)
{
	struct dtxn_slot_hdr h;
	struct loader_rep rep;

	if (f == NULL || t == NULL || (visit == NULL && visit_at == NULL) || r >= t->n_replicas)
		return -EINVAL;
	if (loader_rep_map(f, t, r, &rep) != 0)
		return -ENXIO;
	for (uint64_t b = 0; b < t->n_buckets; b++) {
		char *bucket = (char *)loader_bucket(t, &rep, b);

		for (unsigned i = 0; i < t->def.slots_per_bucket; i++) {
			void *slot;
			int rc;

			store_slot_hdr_get(t, bucket, i, &h);
			if (!(h.flags & DTXN_SLOT_VALID) || h.table_id != t->def.id)
				continue;
			slot = dtxn_store_bucket_slot(t, bucket, i);
			rc = visit != NULL ? visit(t, slot, arg) :
					     visit_at(t, slot,
						      dtxn_store_slot_raddr(t, dtxn_store_bucket_raddr(t, r, b), i),
						      arg);
			if (rc != 0)
				return rc;
		}
	}
	return 0;
}

int
dtxn_store_scan(struct dtxn_fabric *f, const struct dtxn_table *t, uint16_t r,
		dtxn_slot_visit_fn visit, void *arg)
{
	return visit == NULL ? -EINVAL : loader_visit(f, t, r, visit, NULL, arg);
}

int
dtxn_store_scan_at(struct dtxn_fabric *f, const struct dtxn_table *t, uint16_t r,
		   dtxn_slot_visit_at_fn visit, void *arg)
{
	return visit == NULL ? -EINVAL : loader_visit(f, t, r, NULL, visit, arg);
}
