/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Lotus's key -> position maps (lotus_private.h, struct lotus_kmap): the
 * lock state of a worker and each VT sub-cache. Open addressing with
 * linear probing and backward-shift deletes over a table at most half
 * full; a slot holds the key's hash tag and its position, the keys live
 * by position. It replaces an rte_hash (two memzones, two cache lines
 * per lookup) with one line in the common case; positions come from a
 * stack of free ones, and no caller depends on their values. The slots
 * for cap keys are allocated at once, but the table uses a prefix of
 * them that doubles as keys are added (from KMAP_MIN_SLOTS): a lock
 * state holds a few dozen keys of its thousands, and a small table stays
 * in the cache.
 */
#include <errno.h>

#include <rte_malloc.h>

#include "dtxn_sched.h"
#include "lotus_private.h"

/** Slots a map starts with (a power of 2). */
#define KMAP_MIN_SLOTS 64u

struct lotus_kmap_slot {
	uint32_t tag;  /**< the key's hash, high half */
	uint32_t pos1; /**< position + 1; 0: empty */
};

static inline uint64_t
kmap_hash(const struct lotus_kmap *m, const void *key)
{
	const uint64_t *w = key;
	uint64_t h = UINT64_C(0x243f6a8885a308d3);

	for (uint32_t i = 0; i < m->key_len / 8; i++) {
		h ^= w[i];
		h *= UINT64_C(0x9e3779b97f4a7c15);
		h ^= h >> 31;
	}
	return h;
}

static inline const void *
kmap_key(const struct lotus_kmap *m, uint32_t pos)
{
	return m->keys + (size_t)pos * m->key_len;
}

/* The bitmap of positions in use that a growth fills (kmap_grow()), bytes. */
static size_t
kmap_used_bytes(uint32_t cap)
{
	return ((size_t)cap + 63) / 64 * sizeof(uint64_t);
}

static uint32_t
kmap_n_slots(uint32_t cap)
{
	return (uint32_t)rte_align64pow2(RTE_MAX((uint64_t)cap * 2, UINT64_C(16)));
}

int
lotus_kmap_init(struct lotus_kmap *m, uint32_t cap, uint32_t key_len, int socket_id)
{
	uint32_t n = kmap_n_slots(cap);

	memset(m, 0, sizeof(*m));
	if (cap == 0 || key_len == 0 || key_len % 8 != 0)
		return -EINVAL;
	/* slots and keys are used from their start as the map grows: pages
	 * that a run never reaches are never backed (dtxn_local_zalloc()) */
	m->max_slots = n;
	m->cap = cap;
	m->key_len = key_len;
	m->slots = dtxn_local_zalloc("lotus_kmap", sizeof(*m->slots) * n, socket_id);
	m->keys = dtxn_local_zalloc("lotus_kmap_keys", (size_t)cap * key_len, socket_id);
	m->free = rte_malloc_socket("lotus_kmap_free", sizeof(*m->free) * cap, 8, socket_id);
	m->used = rte_malloc_socket("lotus_kmap_used", kmap_used_bytes(cap), 8, socket_id);
	if (m->slots == NULL || m->keys == NULL || m->free == NULL || m->used == NULL) {
		lotus_kmap_fini(m);
		return -ENOMEM;
	}
	m->mask = RTE_MIN(n, KMAP_MIN_SLOTS) - 1;
	for (uint32_t i = 0; i < cap; i++)
		m->free[i] = cap - 1 - i; /* position 0 is taken first */
	m->n_free = cap;
	return 0;
}

void
lotus_kmap_fini(struct lotus_kmap *m)
{
	dtxn_local_free(m->slots, sizeof(*m->slots) * m->max_slots);
	dtxn_local_free(m->keys, (size_t)m->cap * m->key_len);
	rte_free(m->free);
	rte_free(m->used);
	memset(m, 0, sizeof(*m));
}

void
lotus_kmap_footprint(uint32_t cap, uint32_t key_len, struct dtxn_footprint *fp)
{
	/* slots and keys (dtxn_local_zalloc()) are counted even where they
	 * are mapped outside the heap: the check bounds what a run may touch */
	fp->bytes += (uint64_t)kmap_n_slots(cap) * sizeof(struct lotus_kmap_slot) +
		     (uint64_t)cap * (key_len + sizeof(uint32_t)) + kmap_used_bytes(cap) +
		     4 * DTXN_FOOTPRINT_ALLOC_SLACK;
}

/* The slot of @p key, or of the empty slot that ends its probe. */
static inline uint32_t
kmap_find(const struct lotus_kmap *m, const void *key, uint32_t tag, uint64_t h)
{
	uint32_t i = (uint32_t)h & m->mask;

	for (;; i = (i + 1) & m->mask) {
		const struct lotus_kmap_slot *s = &m->slots[i];

		if (s->pos1 == 0 ||
		    (s->tag == tag && memcmp(kmap_key(m, s->pos1 - 1), key, m->key_len) == 0))
			return i;
	}
}

int
lotus_kmap_lookup(const struct lotus_kmap *m, const void *key)
{
	uint64_t h = kmap_hash(m, key);
	uint32_t i = kmap_find(m, key, (uint32_t)(h >> 32), h);

	return m->slots[i].pos1 != 0 ? (int)(m->slots[i].pos1 - 1) : -ENOENT;
}

/* Slot for a key not in the table: the empty slot that ends its probe. */
static uint32_t
kmap_empty_slot(const struct lotus_kmap *m, uint64_t h)
{
	uint32_t i = (uint32_t)h & m->mask;

	while (m->slots[i].pos1 != 0)
		i = (i + 1) & m->mask;
	return i;
}

/* Doubles the part of the slots in use and puts every key back. */
static void
kmap_grow(struct lotus_kmap *m)
{
	uint32_t n = (m->mask + 1) * 2;

	memset(m->used, 0xff, kmap_used_bytes(m->cap));
	for (uint32_t k = 0; k < m->n_free; k++)
		m->used[m->free[k] / 64] &= ~(UINT64_C(1) << (m->free[k] % 64));
	memset(m->slots, 0, sizeof(*m->slots) * n);
	m->mask = n - 1;
	for (uint32_t pos = 0; pos < m->cap; pos++) {
		uint64_t h;
		uint32_t i;

		if ((m->used[pos / 64] >> (pos % 64) & 1) == 0)
			continue;
		h = kmap_hash(m, kmap_key(m, pos));
		i = kmap_empty_slot(m, h);
		m->slots[i].tag = (uint32_t)(h >> 32);
		m->slots[i].pos1 = pos + 1;
	}
}

int
lotus_kmap_add(struct lotus_kmap *m, const void *key)
{
	uint64_t h = kmap_hash(m, key);
	uint32_t tag = (uint32_t)(h >> 32);
	uint32_t i = kmap_find(m, key, tag, h), pos;

	if (m->slots[i].pos1 != 0)
		return (int)(m->slots[i].pos1 - 1);
	if (m->n_free == 0)
		return -ENOSPC;
	/* at most half full: grow first (within the slots allocated for cap keys) */
	if ((uint64_t)(m->cap - m->n_free + 1) * 2 > (uint64_t)m->mask + 1 &&
	    m->mask + 1 < m->max_slots) {
		kmap_grow(m);
		i = kmap_empty_slot(m, h);
	}
	pos = m->free[--m->n_free];
	memcpy(m->keys + (size_t)pos * m->key_len, key, m->key_len);
	m->slots[i].tag = tag;
	m->slots[i].pos1 = pos + 1;
	return (int)pos;
}

int
lotus_kmap_del(struct lotus_kmap *m, const void *key)
{
	uint64_t h = kmap_hash(m, key);
	uint32_t i = kmap_find(m, key, (uint32_t)(h >> 32), h), j, pos;

	if (m->slots[i].pos1 == 0)
		return -ENOENT;
	pos = m->slots[i].pos1 - 1;
	m->free[m->n_free++] = pos;
	/* backward shift: pull later entries of the run into the hole */
	for (j = (i + 1) & m->mask; m->slots[j].pos1 != 0; j = (j + 1) & m->mask) {
		uint32_t home = (uint32_t)kmap_hash(m, kmap_key(m, m->slots[j].pos1 - 1)) & m->mask;

		/* j's entry may move to i when i lies cyclically in [home, j) */
		if (((j - home) & m->mask) >= ((j - i) & m->mask)) {
			m->slots[i] = m->slots[j];
			i = j;
		}
	}
	m->slots[i].pos1 = 0;
	m->slots[i].tag = 0;
	return (int)pos;
}

int
lotus_kmap_iterate(const struct lotus_kmap *m, uint32_t *next, const void **key)
{
	for (uint32_t i = *next; i <= m->mask; i++)
		if (m->slots[i].pos1 != 0) {
			*next = i + 1;
			*key = kmap_key(m, m->slots[i].pos1 - 1);
			return (int)(m->slots[i].pos1 - 1);
		}
	*next = m->mask + 1;
	return -ENOENT;
}
