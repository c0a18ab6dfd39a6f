/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The CN lock table and Algorithm 1 (paper §4.1; doc/guides/lotus.md,
 * "Lock table").
 *
 * A fixed hash table per CN, in hugepage memory of the CN's socket:
 * buckets of 8 slots (64 B, one cache line), a slot an 8-byte word of a
 * 7-byte fingerprint (high 56 bits) and a 1-byte counter (low 8 bits):
 * 1 = write-locked, an even value = that many read locks x 2, 0 = free
 * (a free slot is the all-zero word, so a write lock is a CAS from 0).
 * Every change is a CPU CAS on the word, so the CN's worker lcores may
 * share the table; a failed CAS fails the request (NO_WAIT).
 *
 * Two requests for one key may race into two free slots of its bucket;
 * after installing into a free slot the requester scans the bucket again
 * and backs off if another slot carries the same fingerprint, so at most
 * one of them keeps a lock (a fingerprint collision between two keys
 * gives only false conflicts, never a missed one).
 *
 * The lock state (who holds what) lives per worker: a request, its retry
 * and its release always reach the same worker of the owner CN (the
 * requester's own worker for local locks, the paired worker for remote
 * ones), so a worker's map needs no lock. Each entry keeps the holder's
 * txn id, CN id and mode.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "dtxn_sched.h"
#include "dtxn_store.h"
#include "lotus_private.h"

#define LT_FP_SHIFT 8
#define LT_CNT_MASK UINT64_C(0xff)

static inline uint64_t
lt_mix(uint64_t x)
{
	/* splitmix64's finaliser */
	x ^= x >> 30;
	x *= UINT64_C(0xbf58476d1ce4e5b9);
	x ^= x >> 27;
	x *= UINT64_C(0x94d049bb133111eb);
	x ^= x >> 31;
	return x;
}

static inline void
lt_hash(const struct lotus_lt *lt, const struct lotus_lk *lk, uint64_t *bucket, uint64_t *fp)
{
	uint64_t h = lt_mix(lk->key ^ lt_mix((uint64_t)lk->table + UINT64_C(0x9e3779b97f4a7c15)));
	uint64_t f = lt_mix(h ^ UINT64_C(0x2545f4914f6cdd1d)) >> LT_FP_SHIFT;

	*bucket = h % lt->n_buckets;
	*fp = f != 0 ? f : 1; /* never the free word */
}

static inline uint64_t
lt_word(uint64_t fp, uint64_t cnt)
{
	return (fp << LT_FP_SHIFT) | cnt;
}

int
lotus_lt_init(struct lotus_lt *lt, uint64_t bytes, int socket_id)
{
	uint64_t n = bytes / (LOTUS_LT_SLOTS * 8);

	if (n == 0)
		return -EINVAL;
	lt->slots = rte_zmalloc_socket("lotus_lock_table", n * LOTUS_LT_SLOTS * 8,
				       RTE_CACHE_LINE_SIZE, socket_id);
	if (lt->slots == NULL)
		return -ENOMEM;
	lt->n_buckets = n;
	return 0;
}

void
lotus_lt_footprint(uint64_t bytes, struct dtxn_footprint *fp)
{
	fp->bytes += bytes / (LOTUS_LT_SLOTS * 8) * LOTUS_LT_SLOTS * 8 + DTXN_FOOTPRINT_ALLOC_SLACK;
}

void
lotus_lt_fini(struct lotus_lt *lt)
{
	rte_free(lt->slots);
	lt->slots = NULL;
	lt->n_buckets = 0;
}

/* ------------------------------------------------------------------ */
/* Lock state                                                         */
/* ------------------------------------------------------------------ */

int
lotus_ls_init(struct lotus_ls *ls, const char *name, uint32_t cap, int socket_id)
{
	int rc;

	RTE_SET_USED(name);
	memset(ls, 0, sizeof(*ls));
	rc = lotus_kmap_init(&ls->h, cap, sizeof(struct lotus_ls_key), socket_id);
	if (rc != 0)
		return rc;
	ls->cap = cap;
	ls->vals = rte_zmalloc_socket("lotus_lock_state", sizeof(*ls->vals) * (cap + 1),
				      RTE_CACHE_LINE_SIZE, socket_id);
	if (ls->vals == NULL) {
		lotus_kmap_fini(&ls->h);
		return -ENOMEM;
	}
	return 0;
}

void
lotus_ls_footprint(uint32_t cap, struct dtxn_footprint *fp)
{
	lotus_kmap_footprint(cap, sizeof(struct lotus_ls_key), fp);
	fp->bytes += sizeof(struct lotus_ls_val) * ((uint64_t)cap + 1) + DTXN_FOOTPRINT_ALLOC_SLACK;
}

void
lotus_ls_fini(struct lotus_ls *ls)
{
	lotus_kmap_fini(&ls->h);
	rte_free(ls->vals);
	memset(ls, 0, sizeof(*ls));
}

static inline void
ls_key(struct lotus_ls_key *k, const struct lotus_lk *lk, uint64_t txn)
{
	memset(k, 0, sizeof(*k));
	k->txn = txn;
	k->key = lk->key;
	k->table = lk->table;
}

/* ------------------------------------------------------------------ */
/* Algorithm 1                                                        */
/* ------------------------------------------------------------------ */

/* Drops one hold of a slot word: a write lock, or one read lock. */
static void
lt_drop(uint64_t *slot, bool write)
{
	uint64_t old = __atomic_load_n(slot, __ATOMIC_ACQUIRE), nv;

	if (write) {
		__atomic_store_n(slot, 0, __ATOMIC_RELEASE);
		return;
	}
	do {
		uint64_t cnt = old & LT_CNT_MASK;

		nv = cnt <= LOTUS_LT_READ ? 0 : old - LOTUS_LT_READ;
	} while (!__atomic_compare_exchange_n(slot, &old, nv, false, __ATOMIC_ACQ_REL,
					      __ATOMIC_ACQUIRE));
}

/* After installing into slot @p mine: another slot of the bucket with the same fingerprint? */
static bool
lt_duplicate(uint64_t *b, unsigned mine, uint64_t fp)
{
	for (unsigned i = 0; i < LOTUS_LT_SLOTS; i++) {
		uint64_t w = __atomic_load_n(&b[i], __ATOMIC_ACQUIRE);

		if (i != mine && w != 0 && (w >> LT_FP_SHIFT) == fp)
			return true;
	}
	return false;
}

/* The CAS part of Algorithm 1 (lines 7-19). @p slot_out: the slot index taken. */
static enum lotus_lk_rc
lt_acquire(struct lotus_lt *lt, const struct lotus_lk *lk, bool write, uint64_t *slot_out)
{
	uint64_t bucket, fp, *b;
	int match = -1, free_slot = -1;

	lt_hash(lt, lk, &bucket, &fp);
	b = &lt->slots[bucket * LOTUS_LT_SLOTS];
	for (unsigned i = 0; i < LOTUS_LT_SLOTS; i++) {
		uint64_t w = __atomic_load_n(&b[i], __ATOMIC_ACQUIRE);

		if (w == 0) {
			if (free_slot < 0)
				free_slot = (int)i;
		} else if ((w >> LT_FP_SHIFT) == fp && match < 0) {
			match = (int)i;
		}
	}
	if (match >= 0) {
		uint64_t old = __atomic_load_n(&b[match], __ATOMIC_ACQUIRE);
		uint64_t cnt = old & LT_CNT_MASK;

		/* IsConflictLocked: a writer conflicts with anyone, a reader with a writer */
		if (write || cnt == LOTUS_LT_WRITE || (old >> LT_FP_SHIFT) != fp)
			return LOTUS_LK_CONFLICT;
		if (cnt >= LOTUS_LT_READ_MAX)
			return LOTUS_LK_FULL; /* counter overflow */
		if (!__atomic_compare_exchange_n(&b[match], &old, old + LOTUS_LT_READ, false,
						 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			return LOTUS_LK_CONFLICT;
		*slot_out = bucket * LOTUS_LT_SLOTS + (uint64_t)match;
		return LOTUS_LK_OK;
	}
	if (free_slot < 0)
		return LOTUS_LK_FULL;
	{
		uint64_t zero = 0;
		uint64_t nv = lt_word(fp, write ? LOTUS_LT_WRITE : LOTUS_LT_READ);

		if (!__atomic_compare_exchange_n(&b[free_slot], &zero, nv, false, __ATOMIC_ACQ_REL,
						 __ATOMIC_ACQUIRE))
			return LOTUS_LK_CONFLICT;
		if (lt_duplicate(b, (unsigned)free_slot, fp)) {
			lt_drop(&b[free_slot], write);
			return LOTUS_LK_CONFLICT;
		}
	}
	*slot_out = bucket * LOTUS_LT_SLOTS + (uint64_t)free_slot;
	return LOTUS_LK_OK;
}

enum lotus_lk_rc
lotus_lock_acquire(struct lotus_cn *cn, struct lotus_ls *ls, const struct lotus_lk *lk,
		   bool write, uint16_t holder_cn, uint64_t txn, bool *fresh)
{
	const uint16_t shard = lotus_lk_shard(lk);
	struct lotus_ls_key k;
	struct lotus_ls_val *v;
	enum lotus_lk_rc rc;
	uint64_t slot;
	int pos;

	*fresh = false;
	ls_key(&k, lk, txn);
	/* CheckLockState: already held by this txn (a resend, or the same key twice) */
	pos = lotus_kmap_lookup(&ls->h, &k);
	if (pos >= 0) {
		v = &ls->vals[pos];
		if (v->write || !write)
			return LOTUS_LK_OK;
		/* read -> write: only as the sole reader */
		uint64_t *w = &cn->lt.slots[v->slot];
		uint64_t old = __atomic_load_n(w, __ATOMIC_ACQUIRE);

		if ((old & LT_CNT_MASK) != LOTUS_LT_READ ||
		    !__atomic_compare_exchange_n(w, &old, (old & ~LT_CNT_MASK) | LOTUS_LT_WRITE,
						 false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			return LOTUS_LK_CONFLICT;
		v->write = 1;
		if (holder_cn != cn->node && cn->vtc != NULL && (lk->table & LOTUS_LK_BUCKET) == 0)
			lotus_vtc_invalidate(cn->vtc, lk->table, lk->key);
		return LOTUS_LK_OK;
	}
	if (ls->n >= ls->cap)
		return LOTUS_LK_STATE;
	/*
	 * Count the hold before looking at the shard map: a handover marks
	 * the shard moving, then waits for its count to drop to 0 (shard.c),
	 * so either it sees this hold or this request sees the mark.
	 */
	__atomic_fetch_add(&cn->held[shard], 1, __ATOMIC_SEQ_CST);
	if (!lotus_shard_serves(cn->sh, cn, shard)) {
		__atomic_fetch_sub(&cn->held[shard], 1, __ATOMIC_SEQ_CST);
		return LOTUS_LK_NOT_OWNER;
	}
	__atomic_fetch_add(&cn->reqs[shard], 1, __ATOMIC_RELAXED);
	rc = lt_acquire(&cn->lt, lk, write, &slot);
	if (rc == LOTUS_LK_OK) {
		pos = lotus_kmap_add(&ls->h, &k);
		if (pos < 0) {
			lt_drop(&cn->lt.slots[slot], write);
			rc = LOTUS_LK_STATE;
		}
	}
	if (rc != LOTUS_LK_OK) {
		__atomic_fetch_sub(&cn->held[shard], 1, __ATOMIC_SEQ_CST);
		return rc;
	}
	v = &ls->vals[pos];
	v->slot = slot;
	v->cn = holder_cn;
	v->write = write ? 1 : 0;
	ls->n++;
	*fresh = true;
	/* Alg. 1 line 15: a remote writer will change the CVT in memory */
	if (write && holder_cn != cn->node && cn->vtc != NULL && (lk->table & LOTUS_LK_BUCKET) == 0)
		lotus_vtc_invalidate(cn->vtc, lk->table, lk->key);
	return LOTUS_LK_OK;
}

void
lotus_lock_release(struct lotus_cn *cn, struct lotus_ls *ls, const struct lotus_lk *lk,
		   uint64_t txn)
{
	struct lotus_ls_key k;
	struct lotus_ls_val *v;
	int pos;

	ls_key(&k, lk, txn);
	pos = lotus_kmap_lookup(&ls->h, &k);
	if (pos < 0)
		return; /* not held: a duplicate release */
	v = &ls->vals[pos];
	lt_drop(&cn->lt.slots[v->slot], v->write != 0);
	(void)lotus_kmap_del(&ls->h, &k);
	ls->n--;
	__atomic_fetch_sub(&cn->held[lotus_lk_shard(lk)], 1, __ATOMIC_SEQ_CST);
}
