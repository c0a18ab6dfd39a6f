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
 *
 * An overlay (dtxn_addr_cache_overlay_create(), --addr-prewarm) is a
 * worker's own cache over a base shared by every worker of the process:
 * the pre-warmed entries, built once and read-only from then on. What the
 * run changes goes to the overlay: an insert that differs from the base
 * (a new record, a moved one), and a tombstone (an entry whose raddr is 0)
 * for an invalidated key the base holds. A lookup reads the overlay, then
 * the base. A bounded overlay evicts an entry of the key's probe run when
 * full (every entry is a hint: an evicted override or tombstone shows the
 * base's address again, which the reader validates); an unbounded one
 * doubles its table as it fills, and drops a new key when the keys it
 * shows (base + overlay) reach its capacity, as a plain cache of that
 * capacity would, so that it answers every lookup as the full copy did.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_hash_crc.h>
#include <rte_malloc.h>
#include <rte_prefetch.h>

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
	uint32_t n;        /**< entries in use (an overlay: its own, tombstones included) */
	uint32_t max;      /**< capacity (entries; an unbounded overlay: of the keys it shows) */
	/** an overlay's base (immutable), or NULL: a plain cache */
	const struct dtxn_addr_cache *base;
	/** an overlay: keys shown = base->n + shown; else 0 */
	int64_t shown;
	bool overlay;      /**< an overlay (over base, NULL until attached) */
	bool grow;         /**< an unbounded overlay: the table doubles as it fills */
	int socket_id;
	char name[ADDR_CACHE_NAME_MAX + 1];
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
	c->e = dtxn_local_zalloc(name, slots * sizeof(*c->e), socket_id);
	if (c->e == NULL) {
		err = ENOMEM;
		goto fail;
	}
	c->mask = slots - 1;
	c->max = entries;
	c->socket_id = socket_id;
	memcpy(c->name, name, len);
	return c;
fail:
	if (err == ENOMEM)
		STORE_LOG(ERR, "address cache %s: %" PRIu64 " entries of %zu B: %s",
			  name, slots, sizeof(struct ac_entry), rte_strerror(err));
	rte_free(c);
	rte_errno = err;
	return NULL;
}

/** An unbounded overlay's first table: entries (it doubles from there). */
#define AC_OVERLAY_INIT 4096u

/* The entries an overlay's first table is sized for. */
static uint32_t
ov_init_entries(uint32_t entries, bool unbounded)
{
	return unbounded ? RTE_MIN(entries, AC_OVERLAY_INIT) : entries;
}

struct dtxn_addr_cache *
dtxn_addr_cache_overlay_create(const char *name, uint32_t entries, bool unbounded, int socket_id)
{
	struct dtxn_addr_cache *c = dtxn_addr_cache_create(name, entries == 0 ? 0 :
							   ov_init_entries(entries, unbounded),
							   socket_id);

	if (c == NULL)
		return NULL;
	c->overlay = true;
	c->grow = unbounded;
	c->max = entries;
	return c;
}

int
dtxn_addr_cache_set_base(struct dtxn_addr_cache *c, const struct dtxn_addr_cache *base)
{
	if (c == NULL || base == NULL || !c->overlay || base->overlay || c->n != 0 || c->shown != 0)
		return -EINVAL;
	c->base = base;
	return 0;
}

void
dtxn_addr_cache_overlay_footprint(uint32_t entries, bool unbounded, struct dtxn_footprint *fp)
{
	dtxn_addr_cache_footprint(ov_init_entries(entries, unbounded), fp);
}

void
dtxn_addr_cache_footprint(uint32_t entries, struct dtxn_footprint *fp)
{
	/* the table (dtxn_local_zalloc()) is counted even where it is mapped
	 * outside the heap: the check bounds what a run may touch */
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
	dtxn_local_free(c->e, (c->mask + 1) * sizeof(*c->e));
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
 * are spread as by a plain hash. Entries are line-aligned (dtxn_local_zalloc)
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

/* Frees entry @p hole of @p c (in use) and shifts the following run back. */
static void
ac_delete(struct dtxn_addr_cache *c, struct ac_entry *hole)
{
	uint64_t i;

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

/* ---- overlays over a shared base ---- */

/* The base's raddr of (@p table_id, @p key), or 0. */
static inline dtxn_raddr_t
ov_base(const struct dtxn_addr_cache *c, uint32_t table_id, uint64_t key)
{
	const struct ac_entry *e;

	if (c->base == NULL)
		return 0;
	e = ac_find(c->base, table_id, key);
	return e->w == 0 ? 0 : ac_raddr(e->w);
}

/* The change in keys shown when entry @p e leaves the overlay. */
static int
ov_unshown(const struct dtxn_addr_cache *c, const struct ac_entry *e)
{
	uint32_t table_id = (uint32_t)(e->w >> AC_TABLE_SHIFT) & (DTXN_MAX_TABLES - 1);

	if (ac_raddr(e->w) == 0)
		return 1;  /* a tombstone: the base's entry shows again */
	return ov_base(c, table_id, e->key) != 0 ? 0 : -1;
}

/* Doubles an unbounded overlay's table. @return 0, or -ENOMEM (unchanged). */
static int
ov_grow(struct dtxn_addr_cache *c)
{
	const uint64_t old_slots = c->mask + 1;
	struct ac_entry *old = c->e;
	struct ac_entry *e = dtxn_local_zalloc(c->name, 2 * old_slots * sizeof(*e), c->socket_id);

	if (e == NULL)
		return -ENOMEM;
	c->e = e;
	c->mask = 2 * old_slots - 1;
	for (uint64_t i = 0; i < old_slots; i++)
		if (old[i].w != 0)
			*ac_find(c, (uint32_t)(old[i].w >> AC_TABLE_SHIFT) & (DTXN_MAX_TABLES - 1),
				 old[i].key) = old[i];
	dtxn_local_free(old, old_slots * sizeof(*old));
	return 0;
}

/*
 * Makes room for one more entry in overlay @p c for (@p table_id, @p key):
 * an unbounded overlay grows past half full; a bounded one at its bound
 * (or an unbounded one that cannot grow) evicts the first entry of the
 * key's probe run. @return the free entry that ends the key's probe.
 */
static struct ac_entry *
ov_room(struct dtxn_addr_cache *c, uint32_t table_id, uint64_t key)
{
	bool full = c->n >= c->max;

	if (c->grow)
		full = 2 * ((uint64_t)c->n + 1) > c->mask + 1 && ov_grow(c) != 0;
	if (full && c->n > 0) {
		uint64_t i = ac_home(c, table_id, key);

		while (c->e[i].w == 0)
			i = (i + 1) & c->mask;
		c->shown += ov_unshown(c, &c->e[i]);
		ac_delete(c, &c->e[i]);
	}
	return ac_find(c, table_id, key);
}

static dtxn_raddr_t
ov_lookup(const struct dtxn_addr_cache *c, uint32_t table_id, uint64_t key)
{
	const struct ac_entry *e = ac_find(c, table_id, key);

	/* the overlay's entry (a tombstone: 0) hides the base's */
	return e->w != 0 ? ac_raddr(e->w) : ov_base(c, table_id, key);
}

/*
 * An unbounded overlay showing as many keys as its capacity: a key it
 * does not show is dropped, as by a plain cache of that capacity.
 */
static inline bool
ov_full(const struct dtxn_addr_cache *c)
{
	return c->grow && (int64_t)(c->base != NULL ? c->base->n : 0) + c->shown >= (int64_t)c->max;
}

static void
ov_insert(struct dtxn_addr_cache *c, uint32_t table_id, uint64_t key, dtxn_raddr_t slot)
{
	const uint64_t w = AC_USED | (uint64_t)table_id << AC_TABLE_SHIFT | slot;
	const dtxn_raddr_t b = ov_base(c, table_id, key);
	struct ac_entry *e = ac_find(c, table_id, key);

	if (e->w != 0) {
		if (ac_raddr(e->w) == 0) {
			/* a tombstone: the key shows again, if there is room */
			if (ov_full(c))
				return;
			c->shown++;
		}
		if (b == slot)
			ac_delete(c, e); /* the base says the same */
		else
			e->w = w;
		return;
	}
	if (b == slot)
		return;
	if (b == 0) {
		if (ov_full(c))
			return;
		c->shown++;
	}
	e = ov_room(c, table_id, key);
	c->n++;
	e->key = key;
	e->w = w;
}

static void
ov_invalidate(struct dtxn_addr_cache *c, uint32_t table_id, uint64_t key)
{
	const dtxn_raddr_t b = ov_base(c, table_id, key);
	struct ac_entry *e = ac_find(c, table_id, key);

	if (e->w != 0) {
		if (ac_raddr(e->w) == 0)
			return; /* a tombstone already */
		c->shown--;
		if (b != 0)
			e->w &= ~AC_RADDR_MASK; /* an override becomes a tombstone */
		else
			ac_delete(c, e);
		return;
	}
	if (b == 0)
		return;
	c->shown--;
	e = ov_room(c, table_id, key);
	c->n++;
	e->key = key;
	e->w = AC_USED | (uint64_t)table_id << AC_TABLE_SHIFT; /* a tombstone */
}

dtxn_raddr_t
dtxn_addr_cache_lookup(struct dtxn_addr_cache *c, uint32_t table_id, uint64_t key)
{
	const struct ac_entry *e;

	if (c == NULL || table_id >= DTXN_MAX_TABLES)
		return 0;
	if (c->overlay)
		return ov_lookup(c, table_id, key);
	e = ac_find(c, table_id, key);
	return e->w == 0 ? 0 : ac_raddr(e->w);
}

void
dtxn_addr_cache_prefetch(const struct dtxn_addr_cache *c, uint32_t table_id, uint64_t key)
{
	if (c == NULL || table_id >= DTXN_MAX_TABLES)
		return;
	rte_prefetch0(&c->e[ac_home(c, table_id, key)]);
	if (c->overlay && c->base != NULL)
		rte_prefetch0(&c->base->e[ac_home(c->base, table_id, key)]);
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
	if (c->overlay) {
		ov_insert(c, table_id, key, slot);
		return;
	}
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

	if (c == NULL || table_id >= DTXN_MAX_TABLES)
		return;
	if (c->overlay) {
		ov_invalidate(c, table_id, key);
		return;
	}
	hole = ac_find(c, table_id, key);
	if (hole->w != 0)
		ac_delete(c, hole);
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

	if (c == NULL || c->overlay || f == NULL || t == NULL || t->def.id >= DTXN_MAX_TABLES)
		return -EINVAL;
	rc = dtxn_store_scan_at(f, t, 0, ac_prewarm_slot, &pw);
	return rc != 0 ? rc : pw.n;
}

uint32_t
dtxn_addr_cache_count(const struct dtxn_addr_cache *c)
{
	if (c == NULL)
		return 0;
	if (c->overlay)
		return (uint32_t)((int64_t)(c->base != NULL ? c->base->n : 0) + c->shown);
	return c->n;
}
