/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CN side: the address cache, key -> primary slot raddr, one per lcore.
 * An rte_hash without multi-writer or read-write concurrency flags: only
 * its owning lcore touches it. The raddr is kept in the data pointer.
 */
#include <errno.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_hash_crc.h>
#include <rte_malloc.h>

#include "dtxn_sched.h"
#include "store_private.h"

#define ADDR_CACHE_NAME_MAX 24
/* rte_hash_create() refuses fewer entries than one bucket holds (8). */
#define ADDR_CACHE_MIN_ENTRIES 8u

struct addr_cache_key {
	uint64_t key;
	uint32_t table_id;
	uint32_t pad;        /* always 0: the hash covers all 16 bytes */
};
_Static_assert(sizeof(struct addr_cache_key) == 16, "address cache key");
_Static_assert(sizeof(void *) >= sizeof(dtxn_raddr_t), "raddr in a data pointer");

struct dtxn_addr_cache {
	struct rte_hash *h;
};

struct dtxn_addr_cache *
dtxn_addr_cache_create(const char *name, uint32_t entries, int socket_id)
{
	struct dtxn_addr_cache *c = NULL;
	struct rte_hash_parameters p;
	size_t len;
	int err;

	len = name != NULL ? strnlen(name, ADDR_CACHE_NAME_MAX + 1) : 0;
	if (len == 0 || len > ADDR_CACHE_NAME_MAX || entries == 0 ||
	    entries > RTE_HASH_ENTRIES_MAX) {
		err = EINVAL;
		goto fail;
	}
	c = rte_zmalloc_socket("dtxn_addr_cache", sizeof(*c), RTE_CACHE_LINE_SIZE, socket_id);
	if (c == NULL) {
		err = ENOMEM;
		goto fail;
	}
	if (rte_hash_find_existing(name) != NULL) {
		err = EEXIST;
		goto fail;
	}
	memset(&p, 0, sizeof(p));
	p.name = name;
	p.entries = RTE_MAX(entries, ADDR_CACHE_MIN_ENTRIES);
	p.key_len = sizeof(struct addr_cache_key);
	p.hash_func = rte_hash_crc;
	p.hash_func_init_val = 0;
	p.socket_id = socket_id;
	p.extra_flag = 0;
	c->h = rte_hash_create(&p);
	if (c->h == NULL) {
		err = rte_errno == EEXIST ? EEXIST : ENOMEM;
		goto fail;
	}
	return c;
fail:
	if (err == ENOMEM)
		STORE_LOG(ERR, "address cache %s: %s", name, rte_strerror(err));
	rte_free(c);
	rte_errno = err;
	return NULL;
}

void
dtxn_addr_cache_footprint(uint32_t entries, struct dtxn_footprint *fp)
{
	/* rte_hash: entries + 1 key slots of (pointer + key) rounded to 16 B;
	 * buckets of 8 slots (a cache line of signatures and indexes, the
	 * same for the extension table bound); a ring of 4-byte free slot
	 * indexes rounded up to a power of two. */
	uint64_t n = RTE_MAX(entries, ADDR_CACHE_MIN_ENTRIES);
	uint64_t slots = n + 1;
	uint64_t key = RTE_ALIGN_CEIL(sizeof(void *) + sizeof(struct addr_cache_key), 16);
	uint64_t buckets = rte_align64pow2(n) / 8;

	fp->bytes += sizeof(struct dtxn_addr_cache) + slots * key +
		     buckets * 2 * RTE_CACHE_LINE_SIZE + rte_align64pow2(slots) * 4 +
		     8 * DTXN_FOOTPRINT_ALLOC_SLACK + RTE_PGSIZE_4K;
	fp->memzones += 1;
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
	rte_hash_free(c->h);
	rte_free(c);
}

static inline struct addr_cache_key
addr_cache_key_make(uint32_t table_id, uint64_t key)
{
	struct addr_cache_key k = { .key = key, .table_id = table_id, .pad = 0 };

	return k;
}

dtxn_raddr_t
dtxn_addr_cache_lookup(struct dtxn_addr_cache *c, uint32_t table_id, uint64_t key)
{
	struct addr_cache_key k = addr_cache_key_make(table_id, key);
	void *data;

	if (c == NULL || rte_hash_lookup_data(c->h, &k, &data) < 0)
		return 0;
	return (dtxn_raddr_t)(uintptr_t)data;
}

void
dtxn_addr_cache_insert(struct dtxn_addr_cache *c, uint32_t table_id, uint64_t key,
		       dtxn_raddr_t slot)
{
	struct addr_cache_key k = addr_cache_key_make(table_id, key);

	/* 0 means "no address": never cache it. A full table drops the insert. */
	if (c == NULL || slot == 0)
		return;
	(void)rte_hash_add_key_data(c->h, &k, (void *)(uintptr_t)slot);
}

void
dtxn_addr_cache_invalidate(struct dtxn_addr_cache *c, uint32_t table_id, uint64_t key)
{
	struct addr_cache_key k = addr_cache_key_make(table_id, key);

	if (c == NULL)
		return;
	(void)rte_hash_del_key(c->h, &k);
}
