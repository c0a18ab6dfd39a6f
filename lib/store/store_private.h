/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DTXN_STORE_PRIVATE_H
#define DTXN_STORE_PRIVATE_H

/**
 * @file
 * Internals of lib/store shared by its files; never installed.
 *
 * catalog.c   catalog, placement, MN region layout, log offsets
 * index.c     bucket hash, remote addresses, bucket copy search
 * loader.c    MN-side loader and scanner
 * mem.c       MN memory accounting (what each region holds, raw bytes loaded)
 * aux.c       aux and delta heaps: area addresses, chunks of areas
 * chunk.c     CN side: a coordinator's chunk of a heap (the delta-space allocator)
 * addr_cache.c CN-side address cache (rte_hash)
 */

#include <stdint.h>
#include <string.h>

#include <rte_common.h>
#include <rte_log.h>

#include "dtxn_store.h"

/** Log type "dtxn.store", registered in catalog.c. */
extern int dtxn_store_logtype;

#define STORE_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_##level, dtxn_store_logtype, "dtxn.store: " fmt "\n", ##__VA_ARGS__)

/** Bytes reserved at offset 0 of every MN region: no store raddr is 0. */
#define STORE_REGION_RSVD 64
/** Alignment of each table replica in a region. */
#define STORE_TABLE_ALIGN 64
/** Alignment of region_size. */
#define STORE_REGION_ALIGN 4096
/** Default and largest slots per bucket. */
#define STORE_SLOTS_DEFAULT 8
#define STORE_SLOTS_MAX 256
/** Largest value, bytes. */
#define STORE_VALUE_MAX 65536

/** Rounds @p x up to a multiple of the power of two @p a. */
static inline uint64_t
store_align(uint64_t x, uint64_t a)
{
	return (x + a - 1) & ~(a - 1);
}

/** Bytes of one stripe of one replica of a table (the whole replica with one stripe). */
static inline uint64_t
store_table_bytes(const struct dtxn_table *t)
{
	return t->stripe_buckets * t->bucket_size;
}

/** MN of stripe @p s of replica @p r of @p t. */
static inline uint16_t
store_stripe_mn(const struct dtxn_table *t, uint16_t r, uint64_t s)
{
	return t->n_stripes == 1 ? t->mn[r] : (uint16_t)((t->mn[r] + s) % t->n_mn);
}

/** The stripe whose replica @p r is on MN @p mn (every MN has one per role), or -1. */
static inline int
store_stripe_on(const struct dtxn_table *t, uint16_t r, uint16_t mn)
{
	if (t->n_stripes == 1)
		return mn == t->mn[r] ? 0 : -1;
	return mn < t->n_mn ? (int)((mn + t->n_mn - t->mn[r]) % t->n_mn) : -1;
}

/** Largest aux area per slot, bytes (dtxn_catalog_add_table_aux). */
#define STORE_AUX_MAX (1u << 24)

/** Bytes of one replica's aux heap (0 without one; set by the layout). */
static inline uint64_t
store_aux_bytes(const struct dtxn_table *t)
{
	return t->aux_size == 0 ? 0 : DTXN_AUX_HEAP_HDR + t->aux_areas * (uint64_t)t->aux_size;
}

/** Bytes of one replica's delta heap (0 without one; set by the layout). */
static inline uint64_t
store_delta_bytes(const struct dtxn_table *t)
{
	return t->delta_size == 0 ? 0 : DTXN_AUX_HEAP_HDR + t->delta_areas * (uint64_t)t->delta_size;
}

/**
 * Bytes of one stripe of replica 0 with its heaps (from off[0] to the end
 * of its last heap); every replica's stripe has the same layout.
 */
static inline uint64_t
store_stripe_span(const struct dtxn_table *t)
{
	uint64_t end = t->off[0] + store_table_bytes(t);

	if (t->aux_size != 0)
		end = t->aux_off[0] + store_aux_bytes(t);
	if (t->delta_size != 0)
		end = t->delta_off[0] + store_delta_bytes(t);
	return end - t->off[0];
}

/** Offset of aux area @p n (1-based) from its heap's start. */
static inline uint64_t
store_aux_area_off(const struct dtxn_table *t, uint64_t n)
{
	return DTXN_AUX_HEAP_HDR + (n - 1) * (uint64_t)t->aux_size;
}

/**
 * Slot number (bucket * slots_per_bucket + slot, bucket within the
 * stripe) of the slot starting at byte @p rel of a stripe's buckets, or
 * UINT64_MAX if no slot starts there.
 */
static inline uint64_t
store_slot_index(const struct dtxn_table *t, uint64_t rel)
{
	uint64_t b = rel / t->bucket_size, in = rel % t->bucket_size;

	if (b >= t->stripe_buckets || in < t->bucket_hdr_size ||
	    (in - t->bucket_hdr_size) % t->slot_size != 0 ||
	    (in - t->bucket_hdr_size) / t->slot_size >= t->def.slots_per_bucket)
		return UINT64_MAX;
	return b * t->def.slots_per_bucket + (in - t->bucket_hdr_size) / t->slot_size;
}

/** Slot header of slot @p i of a bucket, read without alignment assumptions. */
static inline void
store_slot_hdr_get(const struct dtxn_table *t, const void *bucket, unsigned i,
		   struct dtxn_slot_hdr *h)
{
	memcpy(h, (const char *)bucket + t->bucket_hdr_size + (size_t)i * t->slot_size,
	       sizeof(*h));
}

/** Checks a definition's columns and update shapes (columns.c); 0 or -EINVAL, logged. */
int store_check_columns(const struct dtxn_table_def *def);

#endif /* DTXN_STORE_PRIVATE_H */
