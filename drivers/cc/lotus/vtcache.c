/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The version-table (VT) cache (paper §4.4; doc/guides/lotus.md, "Caches"):
 * per CN, CVTs of records whose locks the CN manages, so that a local
 * transaction that holds a record's lock skips the CVT READ.
 *
 * Hash-partitioned into LRU sub-caches, each a key map (lotus_kmap: its
 * positions index the entries) with an LRU list and a spinlock: the CN's worker
 * lcores share the cache, and the paper partitions it precisely so that
 * they rarely meet on one sub-cache. Coherence needs no traffic: a CVT
 * changes only under its write lock, which this CN grants; a local writer
 * puts the new CVT after its commit, and granting a write lock to another
 * CN invalidates the entry (Algorithm 1, line 15). Entries are filled only
 * by transactions that hold the record's lock, so a stale CVT is never
 * cached.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_spinlock.h>

#include "dtxn_sched.h"
#include "dtxn_store.h"
#include "lotus_private.h"

#define VTC_NIL UINT32_MAX

struct vtc_key {
	uint64_t key;
	uint32_t table;
	uint32_t rsvd;
};

struct vtc_ent {
	uint32_t prev, next;     /**< LRU list (positions) */
	uint32_t len;
	uint32_t rsvd;
	struct vtc_key k;
	dtxn_raddr_t slot;
	uint8_t cvt[];
};

struct vtc_sub {
	rte_spinlock_t lock;
	struct lotus_kmap h;
	uint32_t n, cap, max_pos;
	uint32_t head, tail;     /**< most / least recently used */
	uint8_t *ents;           /**< max_pos entries of ent_size bytes */
};

struct lotus_vtc {
	uint32_t n_sub;
	uint32_t cvt_max;
	uint32_t ent_size;
	struct lotus_vtc_stats st; /**< approximate across lcores (relaxed) */
	struct vtc_sub sub[];
};

static inline struct vtc_ent *
vtc_ent(const struct lotus_vtc *c, const struct vtc_sub *s, uint32_t pos)
{
	return (struct vtc_ent *)(void *)(s->ents + (size_t)pos * c->ent_size);
}

static inline void
vtc_count(uint64_t *ctr)
{
	__atomic_fetch_add(ctr, 1, __ATOMIC_RELAXED);
}

/* Subcaches actually made of @p n_sub asked for: at least 8 entries each. */
static uint32_t
vtc_n_sub(uint32_t entries, uint32_t n_sub)
{
	return RTE_MIN(n_sub, RTE_MAX(entries / 8, 1u));
}

static uint32_t
vtc_ent_size(uint32_t cvt_max)
{
	return (uint32_t)RTE_ALIGN_CEIL(sizeof(struct vtc_ent) + cvt_max, 8);
}

void
lotus_vtc_footprint(uint32_t entries, uint32_t n_sub, uint32_t cvt_max,
		    struct dtxn_footprint *fp)
{
	uint32_t per, hash_entries;

	if (entries == 0 || n_sub == 0)
		return;
	n_sub = vtc_n_sub(entries, n_sub);
	per = (entries + n_sub - 1) / n_sub;
	hash_entries = RTE_MAX(per, 8u);
	fp->bytes += sizeof(struct lotus_vtc) + n_sub * sizeof(struct vtc_sub) +
		     DTXN_FOOTPRINT_ALLOC_SLACK;
	for (uint32_t i = 0; i < n_sub; i++) {
		lotus_kmap_footprint(hash_entries, sizeof(struct vtc_key), fp);
		fp->bytes += (uint64_t)hash_entries * vtc_ent_size(cvt_max) +
			     DTXN_FOOTPRINT_ALLOC_SLACK;
	}
}

struct lotus_vtc *
lotus_vtc_create(const char *name, uint32_t entries, uint32_t n_sub, uint32_t cvt_max,
		 int socket_id)
{
	struct lotus_vtc *c;
	uint32_t per;

	RTE_SET_USED(name); /* the maps are not named memzones */
	if (entries == 0 || n_sub == 0 || cvt_max == 0) {
		rte_errno = EINVAL;
		return NULL;
	}
	n_sub = vtc_n_sub(entries, n_sub);
	per = (entries + n_sub - 1) / n_sub;
	c = rte_zmalloc_socket("lotus_vtc", sizeof(*c) + n_sub * sizeof(c->sub[0]),
			       RTE_CACHE_LINE_SIZE, socket_id);
	if (c == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	c->n_sub = n_sub;
	c->cvt_max = cvt_max;
	c->ent_size = vtc_ent_size(cvt_max);
	for (uint32_t i = 0; i < n_sub; i++) {
		struct vtc_sub *s = &c->sub[i];

		rte_spinlock_init(&s->lock);
		if (lotus_kmap_init(&s->h, RTE_MAX(per, 8u), sizeof(struct vtc_key), socket_id) != 0)
			goto fail;
		s->max_pos = s->h.cap;
		s->cap = RTE_MIN(per, s->max_pos);
		s->head = s->tail = VTC_NIL;
		s->ents = rte_zmalloc_socket("lotus_vtc_ents", (size_t)s->max_pos * c->ent_size,
					     RTE_CACHE_LINE_SIZE, socket_id);
		if (s->ents == NULL)
			goto fail;
	}
	return c;
fail:
	lotus_vtc_destroy(c);
	rte_errno = ENOMEM;
	return NULL;
}

void
lotus_vtc_destroy(struct lotus_vtc *c)
{
	if (c == NULL)
		return;
	for (uint32_t i = 0; i < c->n_sub; i++) {
		lotus_kmap_fini(&c->sub[i].h);
		rte_free(c->sub[i].ents);
	}
	rte_free(c);
}

static inline struct vtc_sub *
vtc_sub_of(struct lotus_vtc *c, const struct vtc_key *k)
{
	uint64_t h = k->key * UINT64_C(0x9e3779b97f4a7c15) ^ k->table;

	return &c->sub[(h >> 32) % c->n_sub];
}

static void
vtc_unlink(struct lotus_vtc *c, struct vtc_sub *s, uint32_t pos)
{
	struct vtc_ent *e = vtc_ent(c, s, pos);

	if (e->prev != VTC_NIL)
		vtc_ent(c, s, e->prev)->next = e->next;
	else
		s->head = e->next;
	if (e->next != VTC_NIL)
		vtc_ent(c, s, e->next)->prev = e->prev;
	else
		s->tail = e->prev;
	e->prev = e->next = VTC_NIL;
}

static void
vtc_push_front(struct lotus_vtc *c, struct vtc_sub *s, uint32_t pos)
{
	struct vtc_ent *e = vtc_ent(c, s, pos);

	e->prev = VTC_NIL;
	e->next = s->head;
	if (s->head != VTC_NIL)
		vtc_ent(c, s, s->head)->prev = pos;
	s->head = pos;
	if (s->tail == VTC_NIL)
		s->tail = pos;
}

static void
vtc_remove(struct lotus_vtc *c, struct vtc_sub *s, uint32_t pos)
{
	struct vtc_ent *e = vtc_ent(c, s, pos);

	vtc_unlink(c, s, pos);
	(void)lotus_kmap_del(&s->h, &e->k);
	s->n--;
}

static inline void
vtc_mkkey(struct vtc_key *k, uint32_t table, uint64_t key)
{
	memset(k, 0, sizeof(*k));
	k->table = table;
	k->key = key;
}

bool
lotus_vtc_get(struct lotus_vtc *c, uint32_t table, uint64_t key, void *cvt, uint32_t len,
	      dtxn_raddr_t *slot)
{
	struct vtc_key k;
	struct vtc_sub *s;
	bool hit = false;
	int pos;

	vtc_mkkey(&k, table, key);
	s = vtc_sub_of(c, &k);
	rte_spinlock_lock(&s->lock);
	pos = lotus_kmap_lookup(&s->h, &k);
	if (pos >= 0 && (uint32_t)pos < s->max_pos) {
		struct vtc_ent *e = vtc_ent(c, s, (uint32_t)pos);

		if (e->len == len) {
			memcpy(cvt, e->cvt, len);
			*slot = e->slot;
			vtc_unlink(c, s, (uint32_t)pos);
			vtc_push_front(c, s, (uint32_t)pos);
			hit = true;
		}
	}
	rte_spinlock_unlock(&s->lock);
	vtc_count(hit ? &c->st.hits : &c->st.misses);
	return hit;
}

void
lotus_vtc_put(struct lotus_vtc *c, uint32_t table, uint64_t key, const void *cvt, uint32_t len,
	      dtxn_raddr_t slot)
{
	struct vtc_key k;
	struct vtc_sub *s;
	struct vtc_ent *e;
	int pos;

	if (len > c->cvt_max)
		return;
	vtc_mkkey(&k, table, key);
	s = vtc_sub_of(c, &k);
	rte_spinlock_lock(&s->lock);
	pos = lotus_kmap_lookup(&s->h, &k);
	if (pos < 0) {
		if (s->n >= s->cap && s->tail != VTC_NIL) {
			vtc_remove(c, s, s->tail);
			vtc_count(&c->st.evictions);
		}
		pos = lotus_kmap_add(&s->h, &k);
		if (pos < 0 && s->tail != VTC_NIL) {
			/* a full cuckoo bucket: make room and try once more */
			vtc_remove(c, s, s->tail);
			vtc_count(&c->st.evictions);
			pos = lotus_kmap_add(&s->h, &k);
		}
		if (pos < 0 || (uint32_t)pos >= s->max_pos) {
			if (pos >= 0)
				(void)lotus_kmap_del(&s->h, &k);
			rte_spinlock_unlock(&s->lock);
			return;
		}
		s->n++;
		e = vtc_ent(c, s, (uint32_t)pos);
		e->k = k;
		e->prev = e->next = VTC_NIL;
	} else {
		e = vtc_ent(c, s, (uint32_t)pos);
		vtc_unlink(c, s, (uint32_t)pos);
	}
	e->len = len;
	e->slot = slot;
	memcpy(e->cvt, cvt, len);
	vtc_push_front(c, s, (uint32_t)pos);
	rte_spinlock_unlock(&s->lock);
	vtc_count(&c->st.puts);
}

void
lotus_vtc_invalidate(struct lotus_vtc *c, uint32_t table, uint64_t key)
{
	struct vtc_key k;
	struct vtc_sub *s;
	int pos;

	vtc_mkkey(&k, table, key);
	s = vtc_sub_of(c, &k);
	rte_spinlock_lock(&s->lock);
	pos = lotus_kmap_lookup(&s->h, &k);
	if (pos >= 0 && (uint32_t)pos < s->max_pos) {
		vtc_remove(c, s, (uint32_t)pos);
		vtc_count(&c->st.invalidations);
	}
	rte_spinlock_unlock(&s->lock);
}

unsigned
lotus_vtc_drop_shard(struct lotus_vtc *c, uint16_t shard)
{
	unsigned dropped = 0;

	for (uint32_t i = 0; i < c->n_sub; i++) {
		struct vtc_sub *s = &c->sub[i];
		uint32_t pos, next;

		rte_spinlock_lock(&s->lock);
		for (pos = s->head; pos != VTC_NIL; pos = next) {
			struct vtc_ent *e = vtc_ent(c, s, pos);

			next = e->next;
			if (dtxn_key_shard(e->k.key) == shard) {
				vtc_remove(c, s, pos);
				dropped++;
			}
		}
		rte_spinlock_unlock(&s->lock);
	}
	return dropped;
}

void
lotus_vtc_stats_get(const struct lotus_vtc *c, struct lotus_vtc_stats *st)
{
	if (c == NULL) {
		memset(st, 0, sizeof(*st));
		return;
	}
	st->hits = __atomic_load_n(&c->st.hits, __ATOMIC_RELAXED);
	st->misses = __atomic_load_n(&c->st.misses, __ATOMIC_RELAXED);
	st->puts = __atomic_load_n(&c->st.puts, __ATOMIC_RELAXED);
	st->invalidations = __atomic_load_n(&c->st.invalidations, __ATOMIC_RELAXED);
	st->evictions = __atomic_load_n(&c->st.evictions, __ATOMIC_RELAXED);
}
