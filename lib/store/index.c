/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The remote hash index: which bucket a key hashes to, where buckets and
 * slots live on each replica, and searching a local bucket copy.
 */
#include <errno.h>

#include "store_private.h"

/* Fixed seed: every node and every run must agree on a key's bucket. */
#define INDEX_SEED UINT64_C(0x5d1b0c3a8e2f4967)
/* 2^64 / golden ratio: spreads table ids apart before mixing. */
#define INDEX_TABLE_MUL UINT64_C(0x9e3779b97f4a7c15)

/* 64-bit finalizer (murmur3's fmix64 constants): full avalanche. */
static inline uint64_t
index_mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= UINT64_C(0xff51afd7ed558ccd);
	x ^= x >> 33;
	x *= UINT64_C(0xc4ceb9fe1a85ec53);
	x ^= x >> 33;
	return x;
}

uint64_t
dtxn_store_bucket_of(const struct dtxn_table *t, uint64_t key)
{
	uint64_t h;

	if (t->def.flags & DTXN_TABLE_F_DIRECT_INDEX)
		return dtxn_key_id(key) % t->n_buckets; /* dense ids: no hash */
	h = index_mix64(key ^ INDEX_SEED ^ ((uint64_t)(t->def.id + 1) * INDEX_TABLE_MUL));
	return h % t->n_buckets;
}

dtxn_raddr_t
dtxn_store_bucket_raddr(const struct dtxn_table *t, uint16_t r, uint64_t b)
{
	if (r >= t->n_replicas)
		return 0;
	if (b >= t->n_buckets) /* a compare, not a division, for a bucket in range */
		b %= t->n_buckets;
	if (t->n_stripes == 1) /* stripe_buckets == n_buckets: two divisions less */
		return DTXN_RADDR(t->mn[r], t->off[r] + b * t->bucket_size);
	return DTXN_RADDR(store_stripe_mn(t, r, b / t->stripe_buckets),
			  t->off[r] + (b % t->stripe_buckets) * t->bucket_size);
}

int
dtxn_store_stripe_of(const struct dtxn_table *t, dtxn_raddr_t at)
{
	int s;

	if (t->n_stripes == 1)
		return 0;
	s = store_stripe_on(t, 0, DTXN_RADDR_MN(at));
	return s < 0 || s >= t->n_stripes ? -EINVAL : s;
}

uint16_t
dtxn_store_row_mn(const struct dtxn_table *t, uint16_t r, dtxn_raddr_t at)
{
	int s = dtxn_store_stripe_of(t, at);

	return r >= t->n_replicas || s < 0 ? UINT16_MAX : store_stripe_mn(t, r, (uint64_t)s);
}

dtxn_raddr_t
dtxn_store_replica_raddr(const struct dtxn_table *t, uint16_t r, dtxn_raddr_t primary)
{
	uint64_t off = DTXN_RADDR_OFF(primary);
	int s = store_stripe_on(t, 0, DTXN_RADDR_MN(primary));
	uint16_t m;

	if (r >= t->n_replicas || s < 0)
		return 0;
	m = store_stripe_mn(t, r, (uint64_t)s);
	if (off >= t->off[0] && off - t->off[0] < store_table_bytes(t))
		return DTXN_RADDR(m, t->off[r] + (off - t->off[0]));
	if (t->aux_size != 0 && off >= t->aux_off[0] && off - t->aux_off[0] < store_aux_bytes(t))
		return DTXN_RADDR(m, t->aux_off[r] + (off - t->aux_off[0]));
	if (t->delta_size != 0 && off >= t->delta_off[0] &&
	    off - t->delta_off[0] < store_delta_bytes(t))
		return DTXN_RADDR(m, t->delta_off[r] + (off - t->delta_off[0]));
	return 0;
}

bool
dtxn_store_slot_matches(const struct dtxn_table *t, const void *slot, uint64_t key)
{
	struct dtxn_slot_hdr h;

	memcpy(&h, slot, sizeof(h));
	return h.key == key && h.table_id == t->def.id && (h.flags & DTXN_SLOT_VALID) != 0;
}

dtxn_raddr_t
dtxn_store_bucket_of_slot(const struct dtxn_table *t, dtxn_raddr_t slot)
{
	uint64_t rel = DTXN_RADDR_OFF(slot) - t->off[0];
	int s = store_stripe_on(t, 0, DTXN_RADDR_MN(slot));

	return dtxn_store_bucket_raddr(t, 0, (uint64_t)RTE_MAX(s, 0) * t->stripe_buckets +
					       rel / t->bucket_size);
}

bool
dtxn_store_slot_ok(const struct dtxn_table *t, dtxn_raddr_t slot)
{
	uint64_t off = DTXN_RADDR_OFF(slot);
	int s = store_stripe_on(t, 0, DTXN_RADDR_MN(slot));

	if (s < 0 || off < t->off[0])
		return false;
	off -= t->off[0];
	return off / t->bucket_size < t->stripe_buckets &&
	       (uint64_t)s * t->stripe_buckets + off / t->bucket_size < t->n_buckets &&
	       off % t->bucket_size >= t->bucket_hdr_size &&
	       (off % t->bucket_size - t->bucket_hdr_size) % t->slot_size == 0;
}

int
dtxn_store_bucket_find(const struct dtxn_table *t, const void *bucket, uint64_t key)
{
	struct dtxn_slot_hdr h;

	for (unsigned i = 0; i < t->def.slots_per_bucket; i++) {
		store_slot_hdr_get(t, bucket, i, &h);
		if ((h.flags & DTXN_SLOT_VALID) && h.key == key && h.table_id == t->def.id)
			return (int)i;
	}
	return -ENOENT;
}

int
dtxn_store_bucket_free_slot(const struct dtxn_table *t, const void *bucket)
{
	struct dtxn_slot_hdr h;

	for (unsigned i = 0; i < t->def.slots_per_bucket; i++) {
		store_slot_hdr_get(t, bucket, i, &h);
		if (!(h.flags & DTXN_SLOT_VALID))
			return (int)i;
	}
	return -ENOSPC;
}
