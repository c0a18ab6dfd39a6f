/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CN side: the address cache, (table, key) -> primary slot raddr, one per
 * lcore (only its owner touches it: no atomics, no locks).
 *
 * Open addressing with linear probing over 16-byte entries, four to a
 * cache line, at most half full: a lookup costs one line, where an
 * rte_hash costs two (its bucket of signatures, then the key slot), and
 * this lookup runs for every item of every transaction (issue 30: 17% of
 * the main job's time was in rte_hash). An entry is the key and one word
 * that packs the table id and the raddr (its MN id fits in 8 bits:
 * DTXN_MAX_NODES) with a used bit; 0 is a free entry. Deletion shifts the
 * following run back (no tombstones), so probes stay short under
 * invalidations. When full (entries reached), inserts are dropped.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_hash_crc.h>
#include <rte_malloc.h>

#include "dtxn_sched.h"
#include "store_private.h"

#define ADDR_CACHE_NAME_MAX 24
/** Used bit of an entry's word. */
#define AC_USED (UINT64_C(1) << 63)
/** Table id's place in an entry's word (4 bits: DTXN_MAX_TABLES). */
#define AC_TABLE_SHIFT 56
/** The raddr bits an entry keeps: its MN id's low 8 bits and the offset. */
#define AC_RADDR_MASK ((UINT64_C(1) << AC_TABLE_SHIFT) - 1)

_Static_assert(DTXN_MAX_TABLES <= 16, "a table id fits in 4 bits of an entry");
_Static_assert(DTXN_MAX_NODES <= 256 && DTXN_RADDR_OFF_BITS == 48,
	       "an MN id fits in the 8 bits between the offset and the table id");

struct ac_entry {
	uint64_t key;
	uint64_t w;  /**< AC_USED | table id << AC_TABLE_SHIFT | raddr; 0: free */
};

struct dtxn_addr_cache {
	struct ac_entry *e;
	uint64_t mask;     /**< slots - 1 (slots: a power of two >= 2 x entries) */
	uint32_t n;        /**< entries in use */
	uint32_t max;      /**< capacity (entries) */
};

/* Slots for a capacity of @p entries: a power of two, at most half full. */
static uint64_t
ac_slots(uint32_t entries)
{
	return rte_align64pow2(2 * (uint64_t)RTE_MAX(entries, 4u));
}

struct dtxn_addr_cache *
dtxn_addr_cache_create(const char *name, uint32_t entries, int socket_id)
{
	struct dtxn_addr_cache *c = NULL;
	uint64_t slots = ac_slots(entries);
	size_t len;
	int err;

	len = name != NULL ? strnlen(name, ADDR_CACHE_NAME_MAX + 1) : 0;
	if (len == 0 || len > ADDR_CACHE_NAME_MAX || entries == 0) {
		err = EINVAL;
		goto fail;
	}
	c = rte_zmalloc_socket("dtxn_addr_cache", sizeof(*c), RTE_CACHE_LINE_SIZE, socket_id);
	if (c == NULL) {
		err = ENOMEM;
		goto fail;
	}
	c->e = rte_zmalloc_socket(name, slots * sizeof(*c->e), RTE_CACHE_LINE_SIZE, socket_id);
	if (c->e == NULL) {
		err = ENOMEM;
		goto fail;
	}
	c->mask = slots - 1;
	c->max = entries;
	return c;
fail:
	if (err == ENOMEM)
		STORE_LOG(ERR, "address cache %s: %" PRIu64 " entries of %zu B: %s",
			  name, slots, sizeof(struct ac_entry), rte_strerror(err));
	rte_free(c);
	rte_errno = err;
	return NULL;
}

void
dtxn_addr_cache_footprint(uint32_t entries, struct dtxn_footprint *fp)
{
	fp->bytes += sizeof(struct dtxn_addr_cache) + ac_slots(entries) * sizeof(struct ac_entry) +
		     2 * DTXN_FOOTPRINT_ALLOC_SLACK;
}

void
dtxn_hash_footprint(uint32_t entries, uint32_t key_len, struct dtxn_footprint *fp)
{
	uint64_t slots = (uint64_t)entries + 1;
	uint64_t buckets = rte_align64pow2(RTE_MAX(entries, 8u)) / 8;

	fp->bytes += RTE_PGSIZE_4K + /* struct rte_hash, tailq entry */
		     slots * RTE_ALIGN_CEIL(sizeof(void *) + key_len, 16) +
		     buckets * 2 * RTE_CACHE_LINE_SIZE + slots * 4 + /* ext_bkt_to_free */
		     rte_align64pow2(slots) * 4 + rte_align64pow2(buckets + 1) * 4 +
		     2 * RTE_PGSIZE_4K + /* ring headers, memzone alignment */
		     8 * DTXN_FOOTPRINT_ALLOC_SLACK;
	fp->memzones += 2;
}

void
dtxn_addr_cache_destroy(struct dtxn_addr_cache *c)
{
	if (c == NULL)
		return;
	rte_free(c->e);
	rte_free(c);
}

/** Entries of one cache line: keys of AC_GROUP consecutive ids share one. */
#define AC_GROUP 4
_Static_assert(AC_GROUP * sizeof(struct ac_entry) == RTE_CACHE_LINE_SIZE,
	       "a group of entries is one cache line");

/*
 * The home slot of (@p table_id, @p key). A key is (id, shard)
 * (dtxn_key_make()); it maps one to one to (group, place): place = the
 * id's low 2 bits, group = the rest of the id and shard ^ place. The
 * group's hash draws a cache line, the place is the entry in it. The
 * benchmarks whose shard is the id's low bits (SmallBank, KVS: a & 0xfff)
 * so put AC_GROUP consecutive ids in one line, and a hot set of
 * consecutive ids (SmallBank's first 4% of the accounts) takes a quarter
 * of the lines it would take scattered (issue 30: this line was the
 * coordinator's largest miss); other keys (TPC-C's, shard = warehouse)
 * are spread as by a plain hash. Entries are line-aligned (rte_zmalloc)
 * and there are at least 8 slots.
 */
static inline uint64_t
ac_home(const struct dtxn_addr_cache *c, uint32_t table_id, uint64_t key)
{
	const uint64_t place = (key >> DTXN_KEY_SHARD_BITS) & (AC_GROUP - 1);
	const uint64_t group = (key & ~((uint64_t)(AC_GROUP - 1) << DTXN_KEY_SHARD_BITS)) ^ place;

	return ((rte_hash_crc_8byte(group, rte_hash_crc_4byte(table_id, 0)) &
		 ~(uint64_t)(AC_GROUP - 1)) | place) & c->mask;
}

/* The entry of (@p table_id, @p key), or the free one that ends its probe. */
static inline struct ac_entry *
ac_find(const struct dtxn_addr_cache *c, uint32_t table_id, uint64_t key)
{
	const uint64_t tag = AC_USED | (uint64_t)table_id << AC_TABLE_SHIFT;

	for (uint64_t i = ac_home(c, table_id, key);; i = (i + 1) & c->mask) {
		struct ac_entry *e = &c->e[i];

		if (e->w == 0 || (e->key == key && (e->w & ~AC_RADDR_MASK) == tag))
			return e; /* at most half full: a free entry ends every probe */
	}
}

/* The raddr an entry keeps: its MN id's bits back above the offset. */
static inline dtxn_raddr_t
ac_raddr(uint64_t w)
{
	return w & AC_RADDR_MASK;
}

dtxn_raddr_t
dtxn_addr_cache_lookup(struct dtxn_addr_cache *c, uint32_t table_id, uint64_t key)
{
	const struct ac_entry *e;

	if (c == NULL || table_id >= DTXN_MAX_TABLES)
		return 0;
	e = ac_find(c, table_id, key);
	return e->w == 0 ? 0 : ac_raddr(e->w);
}

void
dtxn_addr_cache_insert(struct dtxn_addr_cache *c, uint32_t table_id, uint64_t key,
		       dtxn_raddr_t slot)
{
	struct ac_entry *e;

	/* 0 means "no address": never cache it. A full cache drops the insert. */
	if (c == NULL || slot == 0 || table_id >= DTXN_MAX_TABLES ||
	    DTXN_RADDR_MN(slot) >= DTXN_MAX_NODES)
		return;
	e = ac_find(c, table_id, key);
	if (e->w == 0) {
		if (c->n >= c->max)
			return;
		c->n++;
		e->key = key;
	}
	e->w = AC_USED | (uint64_t)table_id << AC_TABLE_SHIFT | slot;
}

void
dtxn_addr_cache_invalidate(struct dtxn_addr_cache *c, uint32_t table_id, uint64_t key)
{
	struct ac_entry *hole;
	uint64_t i;

	if (c == NULL || table_id >= DTXN_MAX_TABLES)
		return;
	hole = ac_find(c, table_id, key);
	if (hole->w == 0)
		return;
	c->n--;
	/* backward shift: pull each later entry of the run whose home is not
	 * between the hole and it into the hole, until a free entry */
	i = (uint64_t)(hole - c->e);
	for (uint64_t j = (i + 1) & c->mask; c->e[j].w != 0; j = (j + 1) & c->mask) {
		const struct ac_entry *e = &c->e[j];
		uint64_t home = ac_home(c, (uint32_t)(e->w >> AC_TABLE_SHIFT) & (DTXN_MAX_TABLES - 1),
					e->key);

		/* e may move to the hole at i iff its home is not in (i, j] (cyclically) */
		if (((j - home) & c->mask) >= ((j - i) & c->mask)) {
			c->e[i] = *e;
			i = j;
		}
	}
	c->e[i].key = 0;
	c->e[i].w = 0;
}

struct ac_prewarm {
	struct dtxn_addr_cache *c;
	long n;
};

static int
ac_prewarm_slot(const struct dtxn_table *t, const void *slot, dtxn_raddr_t raddr, void *arg)
{
	struct ac_prewarm *pw = arg;
	const struct dtxn_slot_hdr *h = slot;
	struct ac_entry *e = ac_find(pw->c, t->def.id, h->key);

	if (e->w == 0 && pw->c->n >= pw->c->max)
		return -ENOSPC;
	dtxn_addr_cache_insert(pw->c, t->def.id, h->key, raddr);
	pw->n++;
	return 0;
}

long
dtxn_addr_cache_prewarm(struct dtxn_addr_cache *c, struct dtxn_fabric *f,
			const struct dtxn_table *t)
{
	struct ac_prewarm pw = { .c = c, .n = 0 };
	int rc;

	if (c == NULL || f == NULL || t == NULL || t->def.id >= DTXN_MAX_TABLES)
		return -EINVAL;
	rc = dtxn_store_scan_at(f, t, 0, ac_prewarm_slot, &pw);
	return rc != 0 ? rc : pw.n;
}

int
dtxn_addr_cache_copy(struct dtxn_addr_cache *dst, const struct dtxn_addr_cache *src)
{
	if (dst == NULL || src == NULL || dst->mask != src->mask || dst->max != src->max)
		return -EINVAL;
	if (dst != src) {
		memcpy(dst->e, src->e, (dst->mask + 1) * sizeof(*dst->e));
		dst->n = src->n;
	}
	return 0;
}

uint32_t
dtxn_addr_cache_count(const struct dtxn_addr_cache *c)
{
	return c != NULL ? c->n : 0;
}
