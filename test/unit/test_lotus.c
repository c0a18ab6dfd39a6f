/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The Lotus protocol (drivers/cc/lotus; doc/guides/lotus.md): its record
 * format (cacheline versions), version choice, the CN lock table and
 * Algorithm 1 (slot encoding, NO_WAIT conflicts, idempotent requests, the
 * upgrade, the read-counter limit, a full bucket, the shard handover mark,
 * VT-cache invalidation on a remote write lock), the LRU VT cache, the
 * options and ablation presets, the overload rule, routing; then whole
 * clusters of one, two and three CNs on shm (one lcore stepping every
 * worker): SmallBank's and KVS's invariants hold under SR and SI, remote
 * locks go by RPC, and no MN atomic is posted; a lock-free reader that
 * meets an INVISIBLE version waits for it to turn visible, or aborts;
 * an insert undone after its slot was written keeps its aux area; a read
 * of a record the txn then writes passes its validation (log-visible).
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_memory.h>

#include "dtxn_bench.h"
#include "dtxn_sched.h"
#include "dtxn_stats.h"
#include "lotus_private.h"
#include "unit_eal.h"
#include "ut_txn.h"

/* ------------------------------------------------------------------ */
/* Record format                                                      */
/* ------------------------------------------------------------------ */

static void
fake_table(struct dtxn_table *t, uint32_t value_size, uint32_t vnum)
{
	uint32_t slot, aux;

	memset(t, 0, sizeof(*t));
	t->def.value_size = value_size;
	t->def.n_versions = vnum;
	assert_int_equal(lotus_table_sizes(&t->def, &slot, &aux), 0);
	t->slot_size = slot;
	t->aux_size = aux;
}

static void
test_record_format(void **state)
{
	struct dtxn_table t;
	uint8_t value[200], out[200], rec[512];
	uint64_t writer = 0;

	(void)state;
	fake_table(&t, 100, 0);
	/* default two versions: header + 2 cells; a record per version */
	assert_int_equal(t.slot_size, LOTUS_CVT_HDR + 2 * LOTUS_CELL_SIZE);
	/* 8 + 100 payload, head cvs at 0 and 64, a tail: 111 B, rounded to 112 */
	assert_int_equal(lotus_rec_size(&t), 112);
	/* the aux area holds cell 0's record, the delta area the other cells' */
	assert_int_equal(t.aux_size, 112);
	assert_int_equal(lotus_table_delta(&t.def), 112);
	t.def.n_versions = 4;
	assert_int_equal(lotus_table_delta(&t.def), 3 * 112);
	/* a read-only table never takes a second version: no delta heap */
	t.def.flags = DTXN_TABLE_F_READ_ONLY | DTXN_TABLE_F_NO_UPDATE;
	assert_int_equal(lotus_table_delta(&t.def), 0);
	t.def.flags = DTXN_TABLE_F_NO_UPDATE; /* rows may still be deleted */
	assert_int_equal(lotus_table_delta(&t.def), 3 * 112);
	t.def.flags = 0;
	t.def.n_versions = 0;
	/* the local copy keeps [value][staging record] in [slot][aux][extra] */
	assert_int_equal(lotus_local_extra(&t), RTE_ALIGN_CEIL(100u, 8u));
	assert_true(RTE_ALIGN_CEIL(100u, 8u) + lotus_rec_size(&t) <= t.aux_size + lotus_local_extra(&t));
	assert_int_equal(lotus_rec_size_v(54), 64);  /* 1 + 8 + 54 + 1 = 64 B: one line */
	assert_int_equal(lotus_rec_size_v(55), 72);  /* a second head cv at 64 */
	assert_int_equal(lotus_rec_size_v(56), 72);  /* TPC-C's order line */
	for (uint32_t v = 1; v <= 2048; v++) { /* minimal, and room for the payload */
		const uint32_t s = lotus_rec_size_v(v), heads = (s + 63) / 64;

		assert_int_equal(s % 8, 0);
		assert_true(s - heads - 1 >= 8 + v);
		assert_true(s - 8 < 8 + v + (s - 8 + 63) / 64 + 1);
	}
	/* shorter than a line: head cv, payload, tail cv, rounded up to 8 */
	assert_int_equal(lotus_rec_size_v(8), 24);   /* 1 + 8 + 8 + 1 = 18 */
	assert_int_equal(lotus_rec_size_v(40), 56);  /* 1 + 8 + 40 + 1 = 50 */
	assert_int_equal(lotus_rec_size_v(46), 56);  /* 56: exactly */
	assert_int_equal(lotus_rec_size_v(47), 64);

	for (unsigned i = 0; i < sizeof(value); i++)
		value[i] = (uint8_t)(i * 7 + 3);
	lotus_rec_pack(&t, rec, 42, UINT64_C(0x1122334455667788), value);
	/* a cacheline version at the head of every line and a tail one */
	assert_int_equal(rec[0], 42);
	assert_int_equal(rec[64], 42);
	assert_int_equal(rec[111], 42);
	assert_int_equal(lotus_rec_unpack(&t, rec, 42, &writer, out), 0);
	assert_int_equal(writer, UINT64_C(0x1122334455667788));
	assert_memory_equal(out, value, 100);
	/* a reader expecting another cell version, or a torn line, reads again */
	assert_int_equal(lotus_rec_unpack(&t, rec, 43, &writer, out), -EAGAIN);
	rec[64] = 43;
	assert_int_equal(lotus_rec_unpack(&t, rec, 42, &writer, out), -EAGAIN);
	rec[64] = 42;
	rec[111] = 41;
	assert_int_equal(lotus_rec_unpack(&t, rec, 42, &writer, out), -EAGAIN);

	/* a record shorter than a line (an 8 B balance): 24 B, head and tail
	 * cvs; a READ torn anywhere between them sees them differ */
	{
		struct dtxn_table s8;
		uint8_t r8[64];

		fake_table(&s8, 8, 0);
		assert_int_equal(lotus_rec_size(&s8), 24);
		assert_int_equal(s8.aux_size, 24);
		memset(r8, 0xee, sizeof(r8));
		lotus_rec_pack(&s8, r8, 7, 99, value);
		assert_int_equal(r8[0], 7);
		assert_int_equal(r8[23], 7);
		assert_int_equal(r8[24], 0xee); /* nothing past the record */
		assert_int_equal(lotus_rec_unpack(&s8, r8, 7, &writer, out), 0);
		assert_int_equal(writer, 99);
		assert_memory_equal(out, value, 8);
		for (unsigned cut = 1; cut < 24; cut++) {
			uint8_t torn[24];

			/* the bytes before cut from version 8, the rest from 7 */
			lotus_rec_pack(&s8, torn, 8, 100, value);
			memcpy(torn + cut, r8 + cut, 24 - cut);
			assert_int_equal(lotus_rec_unpack(&s8, torn, 7, &writer, out), -EAGAIN);
			assert_int_equal(lotus_rec_unpack(&s8, torn, 8, &writer, out), -EAGAIN);
		}
	}

	/* bad version counts */
	t.def.n_versions = 1;
	{
		uint32_t s, a;

		assert_int_equal(lotus_table_sizes(&t.def, &s, &a), -EINVAL);
		t.def.n_versions = LOTUS_VNUM_MAX + 1;
		assert_int_equal(lotus_table_sizes(&t.def, &s, &a), -EINVAL);
	}
	/* the meta word keeps version, cell version and flags apart */
	{
		uint64_t m = lotus_meta(123456789, 200, LOTUS_CELL_VALID | LOTUS_CELL_TOMB);

		assert_int_equal(lotus_meta_ver(m), 123456789);
		assert_int_equal(lotus_meta_cv(m), 200);
		assert_int_equal(lotus_meta_flags(m), LOTUS_CELL_VALID | LOTUS_CELL_TOMB);
		assert_int_equal(lotus_meta_ver(lotus_meta(LOTUS_INVISIBLE, 1, 1)), LOTUS_INVISIBLE);
	}
}

static void
test_version_pick(void **state)
{
	struct dtxn_table t;
	uint8_t buf[LOTUS_CVT_HDR + 3 * LOTUS_CELL_SIZE];
	struct lotus_cvt *cvt = (struct lotus_cvt *)(void *)buf;
	int idx;

	(void)state;
	fake_table(&t, 8, 3);
	memset(buf, 0, sizeof(buf));
	cvt->cells[0].meta = lotus_meta(10, 1, LOTUS_CELL_VALID);
	cvt->cells[1].meta = lotus_meta(30, 1, LOTUS_CELL_VALID);
	cvt->cells[2].meta = lotus_meta(20, 1, LOTUS_CELL_VALID);
	assert_int_equal(lotus_cvt_newest(&t, cvt), 1);
	/* the largest version below the timestamp */
	assert_int_equal(lotus_cvt_pick(&t, cvt, 25, &idx), LOTUS_PICK_FOUND);
	assert_int_equal(idx, 2);
	assert_int_equal(lotus_cvt_pick(&t, cvt, 31, &idx), LOTUS_PICK_FOUND);
	assert_int_equal(idx, 1);
	/* older than every version kept, and the oldest is not the key's first */
	assert_int_equal(lotus_cvt_pick(&t, cvt, 5, &idx), LOTUS_PICK_GONE);
	/* ... is: the key did not exist yet */
	cvt->cells[0].meta = lotus_meta(10, 1, LOTUS_CELL_VALID | LOTUS_CELL_INSERT);
	assert_int_equal(lotus_cvt_pick(&t, cvt, 5, &idx), LOTUS_PICK_ABSENT);
	/* a version being committed: a lock-free reader must look again */
	cvt->cells[2].meta = lotus_meta(LOTUS_INVISIBLE, 2, LOTUS_CELL_VALID);
	assert_int_equal(lotus_cvt_pick(&t, cvt, 31, &idx), LOTUS_PICK_INVISIBLE);
	assert_int_equal(lotus_cvt_newest(&t, cvt), 2);
	/* invalid cells are ignored */
	cvt->cells[2].meta = lotus_meta(50, 2, 0);
	assert_int_equal(lotus_cvt_pick(&t, cvt, 100, &idx), LOTUS_PICK_FOUND);
	assert_int_equal(idx, 1);
}

/* ------------------------------------------------------------------ */
/* Lock table                                                         */
/* ------------------------------------------------------------------ */

struct lt_env {
	struct lotus_shared *sh;
	struct lotus_cn *cn;
	struct lotus_ls ls;
};

static void
lt_env_up(struct lt_env *e, uint64_t lt_bytes)
{
	static unsigned seq;
	char name[32];

	e->sh = rte_zmalloc("ut_lotus_sh", sizeof(*e->sh), 64);
	assert_non_null(e->sh);
	lotus_opts_default(&e->sh->opts);
	e->sh->n_mn = 1;
	e->sh->n_cn = 2;
	assert_int_equal(lotus_shard_init(e->sh, false), 0);
	e->cn = rte_zmalloc("ut_lotus_cn", sizeof(*e->cn), 64);
	assert_non_null(e->cn);
	e->cn->sh = e->sh;
	e->cn->idx = 0;
	e->cn->node = 1;
	assert_int_equal(lotus_lt_init(&e->cn->lt, lt_bytes, SOCKET_ID_ANY), 0);
	snprintf(name, sizeof(name), "ut_ls%u", seq++);
	assert_int_equal(lotus_ls_init(&e->ls, name, 4096, SOCKET_ID_ANY), 0);
}

static void
lt_env_down(struct lt_env *e)
{
	lotus_ls_fini(&e->ls);
	lotus_lt_fini(&e->cn->lt);
	lotus_vtc_destroy(e->cn->vtc);
	rte_free(e->cn);
	rte_free(e->sh);
}

static enum lotus_lk_rc
acq(struct lt_env *e, uint64_t key, bool write, uint64_t txn, bool *fresh)
{
	struct lotus_lk lk = { .table = 1, .key = key };
	bool f;

	return lotus_lock_acquire(e->cn, &e->ls, &lk, write, e->cn->node, txn,
				  fresh != NULL ? fresh : &f);
}

static void
rel(struct lt_env *e, uint64_t key, uint64_t txn)
{
	struct lotus_lk lk = { .table = 1, .key = key };

	lotus_lock_release(e->cn, &e->ls, &lk, txn);
}

/* The slot word holding @p key's lock, found through txn @p txn's lock state. */
static uint64_t
slot_word(struct lt_env *e, uint64_t key, uint64_t txn)
{
	struct lotus_ls_key k = { .txn = txn, .key = key, .table = 1 };
	int pos = lotus_kmap_lookup(&e->ls.h, &k);

	assert_true(pos >= 0);
	return e->cn->lt.slots[e->ls.vals[pos].slot];
}

static void
test_lock_table(void **state)
{
	struct lt_env e;
	bool fresh;
	const uint64_t key = dtxn_key_make(77, 4); /* shard 4: CN 0's */

	(void)state;
	lt_env_up(&e, 1 << 20);
	/* write lock: counter 1, fingerprint non-zero */
	assert_int_equal(acq(&e, key, true, 1, &fresh), LOTUS_LK_OK);
	assert_true(fresh);
	assert_int_equal(slot_word(&e, key, 1) & 0xff, LOTUS_LT_WRITE);
	assert_true((slot_word(&e, key, 1) >> 8) != 0);
	/* NO_WAIT: another txn is refused in either mode */
	assert_int_equal(acq(&e, key, true, 2, NULL), LOTUS_LK_CONFLICT);
	assert_int_equal(acq(&e, key, false, 2, NULL), LOTUS_LK_CONFLICT);
	/* idempotent: the holder asking again (a resend) gets it, not twice */
	assert_int_equal(acq(&e, key, true, 1, &fresh), LOTUS_LK_OK);
	assert_false(fresh);
	assert_int_equal(acq(&e, key, false, 1, &fresh), LOTUS_LK_OK);
	assert_false(fresh);
	assert_int_equal(e.ls.n, 1);
	assert_int_equal(e.cn->held[4], 1);
	rel(&e, key, 1);
	rel(&e, key, 1); /* a duplicate release does nothing */
	assert_int_equal(e.ls.n, 0);
	assert_int_equal(e.cn->held[4], 0);
	/* read locks share the slot: +2 each */
	assert_int_equal(acq(&e, key, false, 2, NULL), LOTUS_LK_OK);
	assert_int_equal(acq(&e, key, false, 3, NULL), LOTUS_LK_OK);
	assert_int_equal(slot_word(&e, key, 2) & 0xff, 2 * LOTUS_LT_READ);
	assert_int_equal(acq(&e, key, true, 4, NULL), LOTUS_LK_CONFLICT);
	/* upgrade only as the sole reader */
	assert_int_equal(acq(&e, key, true, 2, NULL), LOTUS_LK_CONFLICT);
	rel(&e, key, 3);
	assert_int_equal(acq(&e, key, true, 2, NULL), LOTUS_LK_OK);
	assert_int_equal(slot_word(&e, key, 2) & 0xff, LOTUS_LT_WRITE);
	assert_int_equal(acq(&e, key, false, 3, NULL), LOTUS_LK_CONFLICT);
	rel(&e, key, 2);
	/* the last release frees the whole word */
	{
		uint64_t used = 0;

		for (uint64_t i = 0; i < e.cn->lt.n_buckets * LOTUS_LT_SLOTS; i++)
			used += e.cn->lt.slots[i] != 0;
		assert_int_equal(used, 0);
	}
	/* 1-byte counter: 127 readers, the 128th is refused */
	for (uint64_t txn = 100; txn < 100 + 127; txn++)
		assert_int_equal(acq(&e, key, false, txn, NULL), LOTUS_LK_OK);
	assert_int_equal(acq(&e, key, false, 999, NULL), LOTUS_LK_FULL);
	for (uint64_t txn = 100; txn < 100 + 127; txn++)
		rel(&e, key, txn);
	assert_int_equal(e.ls.n, 0);
	/* the lock state names the holder's CN */
	{
		struct lotus_lk lk = { .table = 1, .key = key };
		struct lotus_ls_key k = { .txn = 7, .key = key, .table = 1 };

		assert_int_equal(lotus_lock_acquire(e.cn, &e.ls, &lk, true, 9, 7, &fresh),
				 LOTUS_LK_OK);
		assert_int_equal(e.ls.vals[lotus_kmap_lookup(&e.ls.h, &k)].cn, 9);
		assert_int_equal(e.ls.vals[lotus_kmap_lookup(&e.ls.h, &k)].write, 1);
		lotus_lock_release(e.cn, &e.ls, &lk, 7);
	}
	/* a shard this CN does not serve: CN 1's (odd), or one being handed over */
	assert_int_equal(acq(&e, dtxn_key_make(5, 3), true, 1, NULL), LOTUS_LK_NOT_OWNER);
	e.sh->rt->shard_owner[4] |= LOTUS_SHARD_MOVING;
	assert_int_equal(acq(&e, key, true, 1, NULL), LOTUS_LK_NOT_OWNER);
	assert_int_equal(e.cn->held[4], 0);
	e.sh->rt->shard_owner[4] &= (uint16_t)~LOTUS_SHARD_MOVING;
	lt_env_down(&e);
}

static void
test_lock_bucket_full(void **state)
{
	struct lt_env e;
	unsigned ok = 0, full = 0;

	(void)state;
	lt_env_up(&e, 64); /* one lock bucket of 8 slots */
	assert_int_equal(e.cn->lt.n_buckets, 1);
	for (uint64_t k = 0; k < 9; k++) {
		enum lotus_lk_rc rc = acq(&e, dtxn_key_make(k, 0), true, 10 + k, NULL);

		ok += rc == LOTUS_LK_OK;
		full += rc == LOTUS_LK_FULL;
	}
	/* 8 slots for 9 keys (a fingerprint collision would only make a conflict) */
	assert_int_equal(ok, 8);
	assert_int_equal(full, 1);
	lt_env_down(&e);
}

static void
test_vtc_invalidation(void **state)
{
	struct lt_env e;
	uint8_t cvt[64], got[64];
	dtxn_raddr_t slot;
	struct lotus_lk lk = { .table = 1, .key = dtxn_key_make(1, 2) };
	bool fresh;

	(void)state;
	lt_env_up(&e, 1 << 16);
	e.cn->vtc = lotus_vtc_create("ut_vtci", 64, 2, sizeof(cvt), SOCKET_ID_ANY);
	assert_non_null(e.cn->vtc);
	memset(cvt, 0xab, sizeof(cvt));
	lotus_vtc_put(e.cn->vtc, 1, lk.key, cvt, sizeof(cvt), 1234);
	/* a local write lock keeps the entry (the local writer updates it) */
	assert_int_equal(lotus_lock_acquire(e.cn, &e.ls, &lk, true, e.cn->node, 1, &fresh),
			 LOTUS_LK_OK);
	assert_true(lotus_vtc_get(e.cn->vtc, 1, lk.key, got, sizeof(got), &slot));
	assert_int_equal(slot, 1234);
	lotus_lock_release(e.cn, &e.ls, &lk, 1);
	/* a read lock for another CN keeps it; a write lock for another CN drops it */
	assert_int_equal(lotus_lock_acquire(e.cn, &e.ls, &lk, false, 2, 2, &fresh), LOTUS_LK_OK);
	assert_true(lotus_vtc_get(e.cn->vtc, 1, lk.key, got, sizeof(got), &slot));
	lotus_lock_release(e.cn, &e.ls, &lk, 2);
	assert_int_equal(lotus_lock_acquire(e.cn, &e.ls, &lk, true, 2, 3, &fresh), LOTUS_LK_OK);
	assert_false(lotus_vtc_get(e.cn->vtc, 1, lk.key, got, sizeof(got), &slot));
	lotus_lock_release(e.cn, &e.ls, &lk, 3);
	lt_env_down(&e);
}

/* ------------------------------------------------------------------ */
/* VT cache                                                           */
/* ------------------------------------------------------------------ */

static void
test_vtc_lru(void **state)
{
	struct lotus_vtc *c = lotus_vtc_create("ut_vtc", 16, 1, 32, SOCKET_ID_ANY);
	struct lotus_vtc_stats st;
	uint8_t v[32], got[32];
	dtxn_raddr_t slot;

	(void)state;
	assert_non_null(c);
	for (uint64_t k = 0; k < 16; k++) {
		memset(v, (int)k, sizeof(v));
		lotus_vtc_put(c, 0, dtxn_key_make(k, k % 3), v, sizeof(v), 100 + k);
	}
	/* touch key 0: key 1 becomes the least recently used */
	assert_true(lotus_vtc_get(c, 0, dtxn_key_make(0, 0), got, sizeof(got), &slot));
	assert_int_equal(slot, 100);
	memset(v, 99, sizeof(v));
	lotus_vtc_put(c, 0, dtxn_key_make(99, 0), v, sizeof(v), 199);
	assert_false(lotus_vtc_get(c, 0, dtxn_key_make(1, 1), got, sizeof(got), &slot));
	assert_true(lotus_vtc_get(c, 0, dtxn_key_make(0, 0), got, sizeof(got), &slot));
	assert_true(lotus_vtc_get(c, 0, dtxn_key_make(99, 0), got, sizeof(got), &slot));
	assert_int_equal(got[5], 99);
	/* the same key in another table is another entry; a length mismatch misses */
	assert_false(lotus_vtc_get(c, 1, dtxn_key_make(0, 0), got, sizeof(got), &slot));
	assert_false(lotus_vtc_get(c, 0, dtxn_key_make(0, 0), got, 16, &slot));
	/* invalidation, and a shard's entries dropped at a handover */
	lotus_vtc_invalidate(c, 0, dtxn_key_make(2, 2));
	assert_false(lotus_vtc_get(c, 0, dtxn_key_make(2, 2), got, sizeof(got), &slot));
	assert_true(lotus_vtc_drop_shard(c, 0) >= 5);
	assert_false(lotus_vtc_get(c, 0, dtxn_key_make(3, 0), got, sizeof(got), &slot));
	assert_true(lotus_vtc_get(c, 0, dtxn_key_make(4, 1), got, sizeof(got), &slot));
	lotus_vtc_stats_get(c, &st);
	assert_true(st.evictions >= 1);
	assert_true(st.invalidations >= 1);
	lotus_vtc_destroy(c);
}

/* ------------------------------------------------------------------ */
/* Options, overload rule                                             */
/* ------------------------------------------------------------------ */

static void
test_options(void **state)
{
	struct lotus_opts o;
	char err[256];

	(void)state;
	lotus_opts_default(&o);
	assert_int_equal(o.vt_cache, 65536);
	assert_int_equal(o.reshard_ms, 100);
	assert_int_equal(o.reshard_pct, 50);
	assert_int_equal(o.reshard_rounds, 3);
	assert_int_equal(o.gc_ms, 500);
	/* Figure 14's steps, cumulative from Motor */
	assert_int_equal(lotus_opts_parse("ablation=full-record", &o, err, sizeof(err)), 0);
	assert_int_equal(o.locks, LOTUS_LOCKS_MN);
	assert_int_equal(o.commit, LOTUS_COMMIT_DIRECT);
	assert_int_equal(o.routing, LOTUS_ROUTE_RANDOM);
	assert_int_equal(o.vt_cache, 0);
	lotus_opts_default(&o);
	assert_int_equal(lotus_opts_parse("ablation=log-visible", &o, err, sizeof(err)), 0);
	assert_int_equal(o.locks, LOTUS_LOCKS_MN);
	assert_int_equal(o.commit, LOTUS_COMMIT_VISIBLE);
	lotus_opts_default(&o);
	assert_int_equal(lotus_opts_parse("ablation=lock-sharding", &o, err, sizeof(err)), 0);
	assert_int_equal(o.locks, LOTUS_LOCKS_CN);
	assert_int_equal(o.routing, LOTUS_ROUTE_RANDOM);
	assert_int_equal(o.reshard, 0);
	lotus_opts_default(&o);
	/* later keys refine the preset, wherever the preset is */
	assert_int_equal(lotus_opts_parse("vt_cache=128,ablation=two-level-lb", &o, err,
					  sizeof(err)), 0);
	assert_int_equal(o.routing, LOTUS_ROUTE_HYBRID);
	assert_int_equal(o.reshard, 1);
	assert_int_equal(o.vt_cache, 128);
	/* errors name the problem */
	assert_int_equal(lotus_check_options("bogus=1", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "unknown option 'bogus'"));
	assert_int_equal(lotus_check_options("routing=sideways", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "expected hybrid, random"));
	assert_int_equal(lotus_check_options("vt_cache", err, sizeof(err)), -EINVAL);
	assert_int_equal(lotus_check_options("lock_table_mb=0", err, sizeof(err)), -EINVAL);
	assert_int_equal(lotus_check_options("ablation=everything", err, sizeof(err)), -EINVAL);
	assert_int_equal(lotus_check_options("", err, sizeof(err)), 0);
	/* through the registry, as the app checks --cc-opts */
	assert_int_equal(dtxn_cc_check_options("lotus", "ts=mn,reshard=0", err, sizeof(err)), 0);
	assert_int_equal(dtxn_cc_check_options("lotus", "ts=dm", err, sizeof(err)), -EINVAL);
	assert_int_equal(dtxn_cc_check_options("ford", "vt_cache=1", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "ford: unknown option 'vt_cache'"));
}

static void
test_overload_rule(void **state)
{
	uint64_t lat[3] = { 100, 100, 100 };

	(void)state;
	assert_false(lotus_overloaded(lat, 3, 0, 50));
	lat[2] = 400; /* average 200: 400 > 300 */
	assert_true(lotus_overloaded(lat, 3, 2, 50));
	assert_false(lotus_overloaded(lat, 3, 0, 50));
	assert_int_equal(lotus_coolest(lat, 3, 2), 0);
	lat[2] = 201; /* average 133.7, x 1.5 = 200.5 */
	assert_true(lotus_overloaded(lat, 3, 2, 50));
	lat[2] = 200; /* average 133.3, x 1.5 = 200: not above */
	assert_false(lotus_overloaded(lat, 3, 2, 50));
	/* CNs without a measurement do not count; alone, nobody is overloaded */
	lat[0] = lat[1] = 0;
	assert_false(lotus_overloaded(lat, 3, 2, 50));
	assert_int_equal(lotus_coolest(lat, 3, 2), -1);
}

/* ------------------------------------------------------------------ */
/* Whole clusters                                                     */
/* ------------------------------------------------------------------ */

#define CL_MAX_CN 3
#define CL_COORDS 4

struct cl_run {
	struct dtxn_fabric *f;
	struct dtxn_db *db;
	struct dtxn_bench *b;
	unsigned n_cn;
	struct dtxn_worker *w[CL_MAX_CN];
	struct dtxn_run_stats *stats;
	struct dtxn_bench_ctx ctx[CL_MAX_CN * CL_COORDS];
	struct dtxn_bench_ctx *ctxp[CL_MAX_CN * CL_COORDS];
	struct dtxn_report *rep;
	/* heap in use (bytes, every socket): before the workers, after them,
	 * after cl_up(), after cl_go() made the coordinators */
	uint64_t heap[4];
};

static void
cl_up(struct cl_run *r, unsigned n_cn, enum dtxn_isolation iso, const char *opts,
      const char *bench, const char *const *bopts)
{
	static unsigned seq;
	struct dtxn_db_conf dc = {
		.size = sizeof(dc), .protocol = "lotus", .isolation = iso, .n_mn = 2,
		.n_replicas = 2, .n_coords = n_cn * CL_COORDS, .log_bytes = 16384,
		.addr_cache_entries = 4096, .cc_options = opts,
	};
	struct dtxn_fabric_conf fc = { .size = sizeof(fc), .driver = "shm", .n_mn = 2,
				       .n_cn = (uint16_t)n_cn, .socket_id = SOCKET_ID_ANY };
	const struct dtxn_bench_ops *bops = dtxn_bench_find(bench);
	char name[32], err[160];

	memset(r, 0, sizeof(*r));
	r->n_cn = n_cn;
	snprintf(name, sizeof(name), "utlc%u", seq++);
	fc.name = name;
	assert_non_null(bops);
	r->b = dtxn_bench_alloc(bops, 7);
	assert_non_null(r->b);
	for (unsigned i = 0; bopts != NULL && bopts[i] != NULL; i += 2)
		for (unsigned k = 0; k < bops->n_opts; k++)
			if (strcmp(bops->opts[k].name, bopts[i]) == 0)
				assert_int_equal(dtxn_opt_set(&bops->opts[k], r->b->conf, bopts[i + 1],
							      err, sizeof(err)), 0);
	assert_int_equal(bops->create(r->b), 0);
	r->db = dtxn_db_create(&dc);
	assert_non_null(r->db);
	assert_int_equal(bops->define(r->b, r->db), 0);
	assert_int_equal(ut_db_fabric(r->db, &fc, &r->f), 0);
	assert_int_equal(bops->load(r->b, r->db), 0);
	r->heap[0] = dtxn_unit_heap_in_use();
	for (unsigned i = 0; i < n_cn; i++) {
		r->w[i] = dtxn_worker_create(r->db, (uint16_t)(2 + i), 0, CL_COORDS, SOCKET_ID_ANY);
		assert_non_null(r->w[i]);
	}
	r->heap[1] = dtxn_unit_heap_in_use();
	r->stats = rte_zmalloc("ut_stats", sizeof(*r->stats), 64);
	r->rep = rte_zmalloc("ut_rep", sizeof(*r->rep), 64);
	assert_non_null(r->stats);
	assert_non_null(r->rep);
	dtxn_run_stats_reset(r->stats, bops->n_types);
	r->heap[2] = dtxn_unit_heap_in_use();
}

/* Every coordinator of every CN to @p quota txns; then the benchmark's checks. */
static void
cl_go(struct cl_run *r, uint64_t quota)
{
	unsigned n = r->n_cn * CL_COORDS, alive, extra = 0;

	for (unsigned i = 0; i < n; i++) {
		struct dtxn_bench_ctx *ctx = &r->ctx[i];

		ctx->bench = r->b;
		ctx->stats = r->stats;
		ctx->quota = quota;
		dtxn_rng_seed(&ctx->rng, 1000 + i);
		r->ctxp[i] = ctx;
		assert_non_null(dtxn_coord_create(r->w[i / CL_COORDS], i, dtxn_bench_coord_main, ctx));
	}
	r->heap[3] = dtxn_unit_heap_in_use();
	do {
		alive = 0;
		for (unsigned i = 0; i < r->n_cn; i++)
			alive += dtxn_sched_step_lc(dtxn_worker_sched(r->w[i]));
		extra += alive == 0;
	} while (alive != 0 || extra < 2000); /* and the last unlocks */
	for (unsigned i = 0; i < n; i++)
		assert_true(r->ctx[i].finished);
	assert_int_equal(r->b->ops->check(r->b, r->db, r->ctxp, n, r->rep), 0);
	for (unsigned i = 0; i < r->rep->n_checks; i++)
		if (!r->rep->checks[i].ok)
			fail_msg("check %s: %s", r->rep->checks[i].name, r->rep->checks[i].detail);
}

/* MN atomics posted by every worker (locks, timestamps). */
/*
 * The FAAs of delta-heap chunks the run took: rows' records past cell 0,
 * taken on a row's first second version (store.md "Delta heaps"), one FAA
 * of cat.aux_chunk areas on the heap's bump word per chunk.
 */
static uint64_t
cl_delta_faas(const struct cl_run *r)
{
	const struct dtxn_catalog *cat = &r->db->cat;
	uint64_t n = 0;

	assert_true(dtxn_db_heap_census(r->db) > 0);
	for (unsigned id = 0; id < DTXN_MAX_TABLES; id++) {
		const struct dtxn_table *t = &cat->tables[id];

		if (!cat->present[id] || t->delta_size == 0)
			continue;
		assert_true(t->delta_used < t->delta_areas); /* none ran out */
		assert_int_equal(t->delta_used % cat->aux_chunk, 0);
		n += t->delta_used / cat->aux_chunk;
	}
	return n;
}

/* MN atomics of the protocol: none with CN locks but the delta chunks' FAAs. */
static uint64_t
cl_mn_atomics(const struct cl_run *r)
{
	uint64_t n = 0;

	struct dtxn_tso_cn_stats st = { 0 };

	for (unsigned i = 0; i < r->n_cn; i++) {
		struct dtxn_fabric_counters per_mn[DTXN_MAX_NODES];

		dtxn_worker_counters(r->w[i], per_mn);
		for (unsigned m = 0; m < 2; m++)
			n += per_mn[m].ops[DTXN_WR_CAS] + per_mn[m].ops[DTXN_WR_FAA] +
			     per_mn[m].ops[DTXN_WR_MASKED_CAS];
	}
	/* the timestamp service's FAAs that reserve blocks (lib/tso) are not the protocol's */
	dtxn_tso_cn_stats_get(lotus_shared_of(r->db)->tso_cn, &st);
	assert_true(n >= st.raises);
	n -= st.raises;
	assert_true(n >= cl_delta_faas(r));
	return n - cl_delta_faas(r);
}

static uint64_t
cl_rpc_sent(const struct cl_run *r)
{
	uint64_t n = 0;

	for (unsigned i = 0; i < r->n_cn; i++) {
		struct lotus_worker *lw = r->w[i]->cc_priv;
		struct dtxn_rpc_stats st;

		if (lw->rpc == NULL)
			continue;
		dtxn_rpc_stats_get(lw->rpc, &st);
		assert_int_equal(st.failed, 0);
		n += st.req_sent;
	}
	return n;
}

static uint64_t
cl_commits(const struct cl_run *r)
{
	uint64_t c, a, ab;

	dtxn_run_stats_totals(r->stats, &c, &a, &ab);
	return c;
}

static void
cl_down(struct cl_run *r)
{
	for (unsigned i = 0; i < r->n_cn; i++)
		dtxn_worker_destroy(r->w[i]);
	dtxn_db_destroy(r->db);
	dtxn_fabric_close(r->f);
	dtxn_bench_free(r->b);
	rte_free(r->stats);
	rte_free(r->rep);
}

static const char *const g_sb[] = { "accounts", "200", NULL };
static const char *const g_kvs[] = { "keys", "500", "write_ratio", "50", "records", "4", NULL };

static void
test_one_cn(void **state)
{
	struct cl_run r;

	(void)state;
	cl_up(&r, 1, DTXN_ISO_SR, NULL, "smallbank", g_sb);
	cl_go(&r, 300);
	assert_true(cl_commits(&r) >= 250 * CL_COORDS); /* the rest: SmallBank's rollbacks */
	assert_int_equal(cl_mn_atomics(&r), 0);
	/* updated rows took their second records' areas, a chunk at a time */
	assert_true(cl_delta_faas(&r) > 0);
	assert_int_equal(cl_rpc_sent(&r), 0);
	cl_down(&r);
}

static void
test_two_cns_sr(void **state)
{
	struct cl_run r;

	(void)state;
	cl_up(&r, 2, DTXN_ISO_SR, NULL, "smallbank", g_sb);
	cl_go(&r, 300);
	/* remote locks (the second account of a transfer) and timestamps from
	 * CN 0 went by RPC; no MN atomic at all */
	assert_true(cl_rpc_sent(&r) > 0);
	assert_int_equal(cl_mn_atomics(&r), 0);
	cl_down(&r);
}

static void
test_three_cns_si_kvs(void **state)
{
	struct cl_run r;

	(void)state;
	cl_up(&r, 3, DTXN_ISO_SI, NULL, "kvs", g_kvs);
	cl_go(&r, 200);
	assert_true(cl_rpc_sent(&r) > 0);
	assert_int_equal(cl_mn_atomics(&r), 0);
	cl_down(&r);
}

/* The footprint Lotus reports for @p r's db on @p n_cn CNs, all of it per CN. */
static uint64_t
cl_footprint(const struct cl_run *r, unsigned n_cn, struct dtxn_footprint *cn,
	     struct dtxn_footprint *w)
{
	memset(cn, 0, sizeof(*cn));
	memset(w, 0, sizeof(*w));
	assert_int_equal(dtxn_cc_footprint(r->db, n_cn, CL_COORDS, cn, w), 0);
	return cn->bytes + w->bytes;
}

/*
 * dtxn_cc_footprint() (issue 11): grows with the lock table and the VT
 * cache, refuses what lotus_db_init() refuses, and bounds what the workers
 * and coordinators of two CNs actually take from the heap.
 */
static void
test_footprint(void **state)
{
	static const char *const small = "lock_table_mb=1,vt_cache=4096,vt_subcaches=4";
	struct dtxn_footprint cn, w, wk = { 0 }, base_cn, base_w;
	struct cl_run r;
	uint64_t base, used, bound;

	(void)state;
	cl_up(&r, 2, DTXN_ISO_SR, small, "smallbank", g_sb);
	base = cl_footprint(&r, 2, &base_cn, &base_w);
	assert_int_equal(base_cn.memzones, 0); /* the VT subcaches' maps are heap memory */
	cl_go(&r, 50);
	/* everything the two CNs' workers and coordinators allocated */
	used = (r.heap[1] - r.heap[0]) + (r.heap[3] - r.heap[2]);
	assert_int_equal(dtxn_worker_footprint(r.db, CL_COORDS, &wk), 0);
	bound = 2 * (base + wk.bytes);
	print_message("lotus footprint: %" PRIu64 " B estimated, %" PRIu64 " B used\n", bound,
		      used);
	assert_true(used <= bound);
	/* without the protocol's share the estimate would be short */
	assert_true(2 * wk.bytes < used);

	/* the same db, other options: each table or cache option grows it */
	r.db->conf.cc_options = "lock_table_mb=2,vt_cache=4096,vt_subcaches=4";
	assert_true(cl_footprint(&r, 2, &cn, &w) >= base + (UINT64_C(1) << 20));
	assert_int_equal(w.bytes, base_w.bytes);
	r.db->conf.cc_options = "lock_table_mb=1,vt_cache=65536,vt_subcaches=4";
	assert_true(cl_footprint(&r, 2, &cn, &w) > base + 60000 * 8);
	r.db->conf.cc_options = "lock_table_mb=1,vt_cache=0";
	assert_true(cl_footprint(&r, 2, &cn, &w) < base);
	assert_true(cn.bytes >= (UINT64_C(1) << 20));
	r.db->conf.cc_options = small;
	/* more CNs: more lock state and RPC QPs per worker */
	assert_true(cl_footprint(&r, 3, &cn, &w) > base);
	assert_true(w.bytes > base_w.bytes);
	/* what lotus_db_init() refuses */
	r.db->conf.cc_options = "lock_table_mb=0";
	assert_int_equal(dtxn_cc_footprint(r.db, 2, CL_COORDS, &cn, &w), -EINVAL);
	r.db->conf.cc_options = small;
	assert_int_equal(dtxn_cc_footprint(r.db, 0, CL_COORDS, &cn, &w), -EINVAL);
	cl_down(&r);
}

/* Timestamps from the MN counter instead (ts=mn): FAAs, locks still none. */
static void
test_ts_mn(void **state)
{
	struct cl_run r;

	(void)state;
	cl_up(&r, 2, DTXN_ISO_SR, "ts=mn", "smallbank", g_sb);
	cl_go(&r, 100);
	assert_true(cl_mn_atomics(&r) > 0);
	cl_down(&r);
}

/* Lets the first @p n coordinators, created but never run, end after one txn. */
static void
cl_finish(struct cl_run *r, unsigned n)
{
	unsigned alive, extra = 0;

	for (unsigned i = 0; i < n; i++) {
		r->ctx[i].quota = 1;
		r->ctx[i].bench = r->b;
		dtxn_rng_seed(&r->ctx[i].rng, i + 1);
	}
	do {
		alive = 0;
		for (unsigned i = 0; i < r->n_cn; i++)
			alive += dtxn_sched_step_lc(dtxn_worker_sched(r->w[i]));
		extra += alive == 0;
	} while (alive != 0 || extra < 100);
}

/* Routing: worker of CN i is told yes for the shards CN i owns (s mod n_cn). */
static void
test_routing(void **state)
{
	struct cl_run r;
	struct dtxn_coord *c0, *c1;

	(void)state;
	cl_up(&r, 2, DTXN_ISO_SR, NULL, "smallbank", g_sb);
	c0 = dtxn_coord_create(r.w[0], 0, dtxn_bench_coord_main, &r.ctx[0]);
	c1 = dtxn_coord_create(r.w[1], 1, dtxn_bench_coord_main, &r.ctx[1]);
	assert_non_null(c0);
	assert_non_null(c1);
	assert_true(dtxn_coord_routes_here(c0, 0, dtxn_key_make(9, 4)));
	assert_false(dtxn_coord_routes_here(c0, 0, dtxn_key_make(9, 5)));
	assert_true(dtxn_coord_routes_here(c1, 0, dtxn_key_make(9, 5)));
	assert_true(dtxn_coord_routes_here(NULL, 0, 5));
	/* the routing layer's map moves a shard: so does the routing */
	lotus_shared_of(r.db)->rt->shard_owner[5] = 0;
	assert_true(dtxn_coord_routes_here(c0, 0, dtxn_key_make(9, 5)));
	cl_finish(&r, 2);
	cl_down(&r);
	/* random routing: everyone says yes */
	cl_up(&r, 2, DTXN_ISO_SR, "routing=random", "smallbank", g_sb);
	c0 = dtxn_coord_create(r.w[0], 0, dtxn_bench_coord_main, &r.ctx[0]);
	assert_true(dtxn_coord_routes_here(c0, 0, dtxn_key_make(9, 5)));
	cl_finish(&r, 1);
	cl_down(&r);
}

/* ------------------------------------------------------------------ */
/* INVISIBLE and a lock-free reader (doc/guides/lotus.md)             */
/* ------------------------------------------------------------------ */

/* MN-side pointer to the primary slot of @p key (the MN CPU's view). */
static struct lotus_cvt *
mn_slot_of(struct cl_run *r, uint32_t table, uint64_t key)
{
	const struct dtxn_table *t = dtxn_catalog_table(dtxn_db_catalog(r->db), table);
	uint64_t home = dtxn_store_bucket_of(t, key);

	for (unsigned p = 0; p < DTXN_STORE_MAX_PROBE; p++) {
		dtxn_raddr_t ra = dtxn_store_bucket_raddr(t, 0, home + p);
		char *bucket = (char *)dtxn_fabric_mn_base(r->f, DTXN_RADDR_MN(ra)) +
			       DTXN_RADDR_OFF(ra);
		int i = dtxn_store_bucket_find(t, bucket, key);

		if (i >= 0)
			return dtxn_store_bucket_slot(t, bucket, (unsigned)i);
	}
	return NULL;
}

struct inv_job {
	uint64_t key;
	int rc;
	uint64_t value;
	struct lotus_cvt *slot;   /* the fixer's target */
	uint64_t meta;            /* what it restores */
	uint64_t after_ns;
};

static void
inv_reader(struct dtxn_coord *c, void *arg)
{
	struct inv_job *j = arg;
	struct dtxn_txn *t = dtxn_txn_begin(c, DTXN_TXN_RO);
	struct dtxn_item *it = dtxn_txn_add_ro(t, 0, j->key);

	j->rc = dtxn_txn_execute(t);
	if (j->rc == DTXN_OK) {
		memcpy(&j->value, dtxn_item_value(it), sizeof(j->value));
		j->rc = dtxn_txn_commit(t);
	}
}

/* Makes the version visible again after a while, as a committing writer would. */
static void
inv_fixer(struct dtxn_coord *c, void *arg)
{
	struct inv_job *j = arg;

	dtxn_co_sleep_until_lc(dtxn_coord_co(c), dtxn_now_ns() + j->after_ns);
	__atomic_store_n(&j->slot->cells[0].meta, j->meta, __ATOMIC_RELEASE);
}

static void
test_invisible_reader(void **state)
{
	static const char *const kv[] = { "keys", "16", NULL };
	struct cl_run r;
	struct inv_job j;
	uint64_t meta;
	unsigned alive;

	(void)state;
	cl_up(&r, 1, DTXN_ISO_SR, NULL, "kvs", kv);
	memset(&j, 0, sizeof(j));
	j.key = dtxn_key_make(3, 3);
	j.slot = mn_slot_of(&r, 0, j.key);
	assert_non_null(j.slot);
	meta = j.slot->cells[0].meta;
	assert_int_equal(lotus_meta_ver(meta), 0);
	/* a version being committed, forever: the reader gives up (invisible) */
	j.slot->cells[0].meta = lotus_meta(LOTUS_INVISIBLE, lotus_meta_cv(meta),
					   lotus_meta_flags(meta));
	assert_non_null(dtxn_coord_create(r.w[0], 0, inv_reader, &j));
	do
		alive = dtxn_sched_step_lc(dtxn_worker_sched(r.w[0]));
	while (alive != 0);
	assert_int_equal(j.rc, DTXN_ABORT(DTXN_ABORT_INVISIBLE));
	/* ... made visible after 20 us: the reader waits for it and reads it */
	j.rc = -1;
	j.meta = meta;
	j.after_ns = 20000;
	assert_non_null(dtxn_coord_create(r.w[0], 1, inv_reader, &j));
	assert_non_null(dtxn_coord_create(r.w[0], 2, inv_fixer, &j));
	do
		alive = dtxn_sched_step_lc(dtxn_worker_sched(r.w[0]));
	while (alive != 0);
	assert_int_equal(j.rc, DTXN_OK);
	assert_int_equal(j.value, 0); /* the loaded counter */
	cl_down(&r);
}

/* ------------------------------------------------------------------ */
/* A row's records past cell 0: its delta area (lotus.md "Memory store") */
/* ------------------------------------------------------------------ */

struct delta_ctx {
	uint64_t first, last;  /* keys to update once each */
	int rc[9];             /* per key */
	uint64_t id[9];        /* the updating txns' ids */
};

static void
delta_co(struct dtxn_coord *c, void *arg)
{
	struct delta_ctx *x = arg;

	for (uint64_t k = x->first; k <= x->last; k++)
		x->rc[k] = ut_txn_add_u64(c, 0, k, 1, &x->id[k]);
}

/*
 * A Lotus cluster of one table (id 0: u64 values, 8 keys, 16 buckets x 8
 * slots, @p n_versions) on 3 MNs x 3 replicas, one coordinator, aux and
 * delta chunks of 4 areas, options @p opts (NULL: the defaults), shm
 * fabric @p name.
 */
static void
small_db_up(const char *opts, uint32_t n_versions, const char *name, struct dtxn_db **db,
	    struct dtxn_fabric **f)
{
	struct dtxn_db_conf dc = { .size = sizeof(dc), .protocol = "lotus",
				   .isolation = DTXN_ISO_SR, .n_mn = 3, .n_replicas = 3,
				   .n_coords = 1, .log_bytes = 4096, .addr_cache_entries = 4096,
				   .aux_chunk = 4, .cc_options = opts };
	struct dtxn_table_def d = { .id = 0, .name = "small", .value_size = 8, .max_keys = 8,
				    .n_buckets = 16, .slots_per_bucket = 8,
				    .n_versions = n_versions };
	struct dtxn_fabric_conf fc = { .size = sizeof(fc), .driver = "shm", .n_mn = 3,
				       .n_cn = 1, .socket_id = SOCKET_ID_ANY, .name = name };

	ut_db_up(&dc, &d, &fc, db, f);
}

/*
 * The CVT is the store's 16 B slot header and VNum cells; the locks=mn
 * ablation (here via ablation=log-visible) adds its lock word as the
 * slot's last 8 B, and VNum stays what the table declares.
 */
static void
test_cvt_geometry(void **state)
{
	static const char *const opts[] = { "", "ablation=log-visible" };
	static const char *const names[] = { "utlotgeo0", "utlotgeo1" };

	(void)state;
	for (unsigned i = 0; i < 2; i++)
		for (uint32_t vnum = 2; vnum <= 3; vnum++) {
			const struct dtxn_table *t;
			struct dtxn_fabric *f;
			struct dtxn_db *db;

			small_db_up(opts[i], vnum, names[i], &db, &f);
			t = dtxn_catalog_table(dtxn_db_catalog(db), 0);
			assert_int_equal(t->slot_size, 16 + 16 * vnum + (i == 1 ? 8 : 0));
			assert_int_equal(lotus_vnum(t), vnum);
			assert_int_equal(t->slot_size, lotus_cvt_size(vnum, i == 1));
			dtxn_db_destroy(db);
			dtxn_fabric_close(f);
		}
}

/*
 * Loaded rows hold one record; a row's first update takes its delta area
 * from the coordinator's chunk (one FAA of aux_chunk), names it in every
 * cell past 0 on every replica and writes the new record there; a used-up
 * delta heap aborts the first update with delta_full and writes nothing.
 */
static void
test_delta_area(void **state)
{
	static unsigned seq;
	struct delta_ctx x = { .first = 1, .last = 4 };
	struct ut_coord_spec spec = { delta_co, &x };
	const struct dtxn_catalog *cat;
	const struct dtxn_table *t;
	struct dtxn_fabric *f;
	struct dtxn_db *db;
	uint8_t used[16] = { 0 };
	uint64_t *bump, v, w;

	(void)state;
	/* no GC in this test of areas: with the default 500 ms a loaded (or
	 * sanitized) run can age the loaded version out of cell 0 between the
	 * first and the second update, which then takes cell 0, not cell 2 */
	small_db_up("gc_ms=3600000", 3, "utlotdelta", &db, &f);
	cat = dtxn_db_catalog(db);
	t = dtxn_catalog_table(cat, 0);
	assert_int_equal(t->aux_size, 24);        /* cell 0's record (8 B value: 24 B) */
	assert_int_equal(t->delta_size, 2 * 24);  /* cells 1 and 2's */
	assert_int_equal(t->delta_areas, 8 + 4);  /* max_keys + a chunk per coordinator */
	for (uint64_t k = 1; k <= 6; k++) {
		v = k * 10;
		assert_int_equal(dtxn_db_load(db, 0, k, &v), 0);
	}
	bump = (uint64_t *)(void *)((char *)dtxn_fabric_mn_base(f, t->mn[0]) + t->delta_off[0]);
	assert_int_equal(*bump, 0); /* loaded rows hold none */
	assert_int_equal(lotus_cvt_delta(t, ut_mn_slot(f, cat, 0, 1, 0)), 0);

	assert_int_equal(ut_run_coords(db, &spec, 1, 3, 0, &seq), 0); /* CN: fabric node 3 */
	assert_int_equal(*bump, 4); /* one FAA of a chunk of 4 for 4 first updates */
	for (uint64_t k = 1; k <= 4; k++) {
		const struct lotus_cvt *c0 = ut_mn_slot(f, cat, 0, k, 0);
		uint32_t n = lotus_cvt_delta(t, c0);
		const uint8_t *rec;

		assert_int_equal(x.rc[k], DTXN_OK);
		assert_true(n >= 1 && n <= 4);
		assert_int_equal(used[n], 0); /* one row per area */
		used[n] = 1;
		/* the new version took cell 1, whose record is in the area */
		assert_int_equal(lotus_cvt_newest(t, c0), 1);
		for (uint16_t r = 0; r < 3; r++) {
			const struct lotus_cvt *c = ut_mn_slot(f, cat, 0, k, r);

			assert_int_equal(c->cells[0].addr, 0);
			assert_int_equal(c->cells[1].addr, LOTUS_ADDR_DELTA | n);
			assert_int_equal(c->cells[2].addr, LOTUS_ADDR_DELTA | n);
			rec = dtxn_store_heap_area_ptr(f, t, DTXN_HEAP_DELTA, r, c, n);
			assert_non_null(rec);
			assert_int_equal(lotus_rec_unpack(t, rec + lotus_rec_off(t, 1),
							  lotus_meta_cv(c->cells[1].meta), &w, &v), 0);
			assert_int_equal(w, x.id[k]);
			assert_int_equal(v, k * 10 + 1);
		}
		assert_int_equal(dtxn_db_get(db, 0, k, &v), 0); /* the MN's view: cell 1's record */
		assert_int_equal(v, k * 10 + 1);
	}
	/* key 1 again: its area stays, the next cell's record in it */
	x.first = x.last = 1;
	assert_int_equal(ut_run_coords(db, &spec, 1, 3, 0, &seq), 0);
	assert_int_equal(x.rc[1], DTXN_OK);
	assert_int_equal(lotus_cvt_newest(t, ut_mn_slot(f, cat, 0, 1, 0)), 2);
	assert_int_equal(dtxn_db_get(db, 0, 1, &v), 0);
	assert_int_equal(v, 12);
	assert_int_equal(*bump, 4); /* no FAA: the row had its area */

	/* used up: key 5's first update aborts before it writes anything */
	*bump = t->delta_areas;
	x.first = x.last = 5;
	assert_int_equal(ut_run_coords(db, &spec, 1, 3, 0, &seq), 0);
	assert_int_equal(x.rc[5], DTXN_ABORT(DTXN_ABORT_DELTA_FULL));
	for (uint16_t r = 0; r < 3; r++) {
		const struct lotus_cvt *c = ut_mn_slot(f, cat, 0, 5, r);

		assert_int_equal(lotus_cvt_delta(t, c), 0);
		assert_int_equal(lotus_cvt_newest(t, c), 0);
		assert_int_equal(c->cells[1].meta, 0);
	}
	assert_int_equal(dtxn_db_get(db, 0, 5, &v), 0);
	assert_int_equal(v, 50);
	dtxn_db_destroy(db);
	dtxn_fabric_close(f);
}

/* Value regions (VNum records) allocated lazily: chunks, give-back, exhaustion (ut_txn.h). */
/* The key map against a reference: adds, lookups and deletes in a long churn. */
static void
test_kmap_churn(void **state)
{
	enum { CAP = 200, KEYS = 600 };
	struct lotus_kmap m;
	int ref[KEYS]; /* position, or -1 */
	uint64_t rng = 12345;
	bool used[CAP] = { false };

	(void)state;
	assert_int_equal(lotus_kmap_init(&m, 0, 16, SOCKET_ID_ANY), -EINVAL);
	assert_int_equal(lotus_kmap_init(&m, CAP, 12, SOCKET_ID_ANY), -EINVAL);
	{ /* the footprint bounds what a map takes from the heap */
		struct dtxn_footprint fp = { 0 };
		uint64_t h0 = dtxn_unit_heap_in_use();

		assert_int_equal(lotus_kmap_init(&m, 5000, 24, SOCKET_ID_ANY), 0);
		lotus_kmap_footprint(5000, 24, &fp);
		print_message("kmap: %" PRIu64 " B estimated, %" PRIu64 " B used\n", fp.bytes,
			      dtxn_unit_heap_in_use() - h0);
		assert_true(dtxn_unit_heap_in_use() - h0 <= fp.bytes);
		lotus_kmap_fini(&m);
	}
	assert_int_equal(lotus_kmap_init(&m, CAP, 24, SOCKET_ID_ANY), 0);
	for (unsigned i = 0; i < KEYS; i++)
		ref[i] = -1;
	for (unsigned step = 0; step < 200000; step++) {
		uint64_t key[3] = { 0, 0, 0 };
		unsigned i, held = 0;
		int pos;

		rng = rng * 6364136223846793005ull + 1442695040888963407ull;
		i = (unsigned)(rng >> 33) % KEYS;
		key[0] = i * 7919u;
		key[2] = i & 3;
		for (unsigned j = 0; j < KEYS; j++)
			held += ref[j] >= 0;
		if ((rng >> 20) & 1) {
			pos = lotus_kmap_add(&m, key);
			if (ref[i] >= 0) {
				assert_int_equal(pos, ref[i]);
			} else if (held == CAP) {
				assert_int_equal(pos, -ENOSPC);
			} else {
				assert_true(pos >= 0 && pos < CAP && !used[pos]);
				used[pos] = true;
				ref[i] = pos;
			}
		} else {
			pos = lotus_kmap_del(&m, key);
			assert_int_equal(pos, ref[i] >= 0 ? ref[i] : -ENOENT);
			if (ref[i] >= 0)
				used[ref[i]] = false;
			ref[i] = -1;
		}
		if (step % 1000 == 0) {
			uint32_t it = 0;
			const void *k;
			unsigned seen = 0;

			for (unsigned j = 0; j < KEYS; j++) {
				uint64_t kj[3] = { j * 7919u, 0, j & 3 };

				assert_int_equal(lotus_kmap_lookup(&m, kj), ref[j] >= 0 ? ref[j] : -ENOENT);
			}
			while ((pos = lotus_kmap_iterate(&m, &it, &k)) >= 0) {
				const uint64_t *kk = k;

				assert_int_equal(ref[kk[0] / 7919u], pos);
				seen++;
			}
			for (unsigned j = 0; j < KEYS; j++)
				seen -= ref[j] >= 0;
			assert_int_equal(seen, 0);
		}
	}
	lotus_kmap_fini(&m);
}

static void
test_aux_heap(void **state)
{
	static unsigned seq;

	(void)state;
	ut_aux_heap_run("lotus", "utlotaux", &seq, 4, 4); /* no FAA: its share */
}

/* An MN process holding backups only formats them as the primary (ut_txn.h). */
static void
test_load_backups(void **state)
{
	(void)state;
	ut_load_backups_equal("lotus", "utlotbk", 300);
}

/* A restarted coordinator continues its share past its dead incarnation's rows (ut_txn.h). */
static void
test_aux_restart(void **state)
{
	static unsigned seq;

	(void)state;
	ut_aux_restart_run("lotus", "utlotauxr", &seq);
}

/* ------------------------------------------------------------------ */
/* An insert undone after its slot was written keeps its aux area       */
/* ------------------------------------------------------------------ */

struct undo_ctx {
	uint64_t *lock;      /* the primary CVT lock word of the key read (MN memory) */
	int rc_undone;       /* read key 1 + insert key 100: aborts in validation */
	uint32_t aux_undone; /* the area that insert took */
	int rc_other;        /* insert of key 200 */
	int rc_again;        /* re-insert of key 100 */
};

/* One txn: insert @p key with value @p v; read key 1 too if @p ctx is set,
 * and let a foreign lock on it fail the SR validation after step 1. */
static int
undo_insert(struct dtxn_coord *c, uint64_t key, uint64_t v, struct undo_ctx *x)
{
	struct dtxn_txn *t = dtxn_txn_begin(c, DTXN_TXN_RW);
	struct dtxn_item *it = dtxn_txn_insert(t, 0, key);
	int rc;

	if (x != NULL)
		(void)dtxn_txn_add_ro(t, 0, 1);
	rc = dtxn_txn_execute(t);
	if (rc != DTXN_OK)
		return rc;
	memcpy(dtxn_item_value(it), &v, sizeof(v));
	if (x == NULL)
		return dtxn_txn_commit(t);
	x->aux_undone = it->aux;
	__atomic_store_n(x->lock, UINT64_C(0xdead), __ATOMIC_RELEASE); /* another txn's */
	rc = dtxn_txn_commit(t);
	__atomic_store_n(x->lock, 0, __ATOMIC_RELEASE);
	return rc;
}

static void
undo_co(struct dtxn_coord *c, void *arg)
{
	struct undo_ctx *x = arg;

	x->rc_undone = undo_insert(c, 100, 1000, x);
	x->rc_other = undo_insert(c, 200, 2000, NULL);
	x->rc_again = undo_insert(c, 100, 1001, NULL);
}

/*
 * ablation=log-visible (locks=mn, commit=visible): step 1 writes a new
 * key's slot, naming the aux area it took, before T_commit and the SR
 * validation of its reads, which may still abort it; the undo clears
 * the cell, the slot keeps naming the area. That area must stay the
 * slot's (dtxn_txn_aux_keep()): given back, the next insert took it, and
 * the key's re-insert then wrote its record over that other row's (the
 * TPC-C NewOrder rows lost under log-visible, doc/guides/lotus.md).
 */
static void
test_aux_kept_after_undo(void **state)
{
	static unsigned seq;
	struct undo_ctx x = { 0 };
	struct ut_coord_spec spec = { undo_co, &x };
	const struct dtxn_catalog *cat;
	const struct dtxn_table *t;
	struct dtxn_fabric *f;
	struct dtxn_db *db;
	uint64_t v = 10;

	(void)state;
	small_db_up("ablation=log-visible", 2, "utlotundo", &db, &f);
	cat = dtxn_db_catalog(db);
	t = dtxn_catalog_table(cat, 0);
	assert_int_equal(dtxn_db_load(db, 0, 1, &v), 0);
	/* ablation=log-visible runs Motor's MN locks: the CVT's last 8 B */
	x.lock = (uint64_t *)(void *)((char *)ut_mn_slot(f, cat, 0, 1, 0) + t->slot_size - 8);
	assert_int_equal(ut_run_coords(db, &spec, 1, 3, 0, &seq), 0); /* CN: fabric node 3 */
	assert_int_equal(x.rc_undone, DTXN_ABORT(DTXN_ABORT_LOCKED_READ));
	assert_int_equal(x.rc_other, DTXN_OK);
	assert_int_equal(x.rc_again, DTXN_OK);
	assert_true(x.aux_undone >= 1 && x.aux_undone <= t->aux_areas);
	for (uint16_t r = 0; r < t->n_replicas; r++) {
		/* the re-insert reused the undone slot and its area; key 200 has its own */
		assert_int_equal(dtxn_store_slot_aux(ut_mn_slot(f, cat, 0, 100, r)), x.aux_undone);
		assert_int_not_equal(dtxn_store_slot_aux(ut_mn_slot(f, cat, 0, 200, r)),
				     x.aux_undone);
	}
	assert_int_equal(dtxn_db_get(db, 0, 100, &v), 0);
	assert_int_equal(v, 1001);
	assert_int_equal(dtxn_db_get(db, 0, 200, &v), 0);
	assert_int_equal(v, 2000);
	assert_int_equal(dtxn_db_get(db, 0, 1, &v), 0);
	assert_int_equal(v, 10);
	dtxn_db_destroy(db);
	dtxn_fabric_close(f);
}

/* ------------------------------------------------------------------ */
/* An INVISIBLE cell left behind: no value, an invariant of its own       */
/* ------------------------------------------------------------------ */

/*
 * A commit neither finished nor undone (its step 1 landed, step 3 and
 * the undo did not: h8's findings) leaves its new cell INVISIBLE, the
 * largest version. The end-of-run checks read the row's newest committed
 * value, not that one (they summed it as money created), and
 * dtxn_db_unfinished() names the row.
 */
static void
test_unfinished_not_counted(void **state)
{
	static unsigned seq;
	struct delta_ctx x = { .first = 1, .last = 1 };
	struct ut_coord_spec spec = { delta_co, &x };
	const struct dtxn_catalog *cat;
	struct lotus_cvt *c0;
	struct dtxn_fabric *f;
	struct dtxn_db *db;
	uint64_t v, n = 7, key = 0;
	uint32_t table = 99;

	(void)state;
	small_db_up("gc_ms=3600000", 3, "utlotunf", &db, &f);
	cat = dtxn_db_catalog(db);
	for (uint64_t k = 1; k <= 2; k++) {
		v = k * 10;
		assert_int_equal(dtxn_db_load(db, 0, k, &v), 0);
	}
	assert_int_equal(ut_run_coords(db, &spec, 1, 3, 0, &seq), 0); /* key 1: 10 -> 11 */
	assert_int_equal(x.rc[1], DTXN_OK);
	assert_int_equal(dtxn_db_unfinished(db, &n, &table, &key), 0);
	assert_int_equal(n, 0);
	assert_int_equal(table, 99);
	/* the commit of 11 as if its step 3 had never landed */
	c0 = ut_mn_slot(f, cat, 0, 1, 0);
	assert_int_equal(lotus_cvt_newest(dtxn_catalog_table(cat, 0), c0), 1);
	c0->cells[1].meta = lotus_meta(LOTUS_INVISIBLE, lotus_meta_cv(c0->cells[1].meta),
				       lotus_meta_flags(c0->cells[1].meta));
	assert_int_equal(dtxn_db_get(db, 0, 1, &v), 0);
	assert_int_equal(v, 10); /* the committed value, not the INVISIBLE 11 */
	assert_int_equal(dtxn_db_get(db, 0, 2, &v), 0);
	assert_int_equal(v, 20);
	assert_int_equal(dtxn_db_unfinished(db, &n, &table, &key), 0);
	assert_int_equal(n, 1);
	assert_int_equal(table, 0);
	assert_int_equal(key, 1);
	dtxn_db_destroy(db);
	dtxn_fabric_close(f);
}

/*
 * A commit whose step 1 landed and whose step 3 and undo cannot be posted
 * (the CN's lease lapsed in a stopping run, the renewal never came: h8's
 * findings) is not reported aborted with its INVISIBLE cell in memory:
 * the CN fences itself and the coordinator parks
 * (dtxn_coord_unfinished()), for its recoverer to roll it back. Before,
 * the txn returned DTXN_ABORT_FABRIC and the CN went on. The stall test
 * aid puts the worker to sleep past its lease after step 1; the gate
 * then waits LEASE_STOP_WAIT_NS (2 s) twice, for step 3 and the undo.
 */
struct unfin_ctx {
	int rc;
	int done;
};

static void
unfin_co(struct dtxn_coord *c, void *arg)
{
	struct unfin_ctx *x = arg;

	x->rc = ut_txn_add_u64(c, 0, 1, 1, NULL);
	x->done = 1;
}

static void
test_unfinished_fences(void **state)
{
	static unsigned seq;
	struct unfin_ctx x = { .rc = -1 };
	struct ut_coord_spec spec = { unfin_co, &x };
	struct dtxn_lease_gate g;
	struct dtxn_fabric *f;
	struct dtxn_worker *w;
	struct dtxn_db *db;
	uint64_t v = 10, n = 0, key = 0, t0;
	uint32_t table = 0;

	(void)state;
	small_db_up(NULL, 2, "utlotunfin", &db, &f);
	assert_int_equal(dtxn_db_load(db, 0, 1, &v), 0);
	/* a first update takes the row's delta area (an FAA round before
	 * step 1, a mutating batch of its own): the stalled one must not */
	assert_int_equal(ut_run_coords(db, &spec, 1, 3, 0, &seq), 0);
	assert_int_equal(x.rc, DTXN_OK);
	x.rc = -1;
	x.done = 0;
	v = 11;
	db->conf.debug_stall_ns = 400000000ull; /* past the gate's 200 ms */
	db->conf.debug_stall_cns = UINT64_C(1) << 3;
	dtxn_db_debug_stall_arm(db);
	w = dtxn_worker_create(db, 3, seq++, 1, (int)rte_socket_id());
	assert_non_null(w);
	memset(&g, 0, sizeof(g));
	g.valid_until_ns = dtxn_now_ns() + 200000000ull; /* nobody renews it */
	assert_int_equal(dtxn_worker_set_lease_gate(w, &g), 0);
	assert_non_null(dtxn_coord_create(w, 0, unfin_co, &x));
	dtxn_sched_stop(dtxn_worker_sched(w)); /* the run's deadline has passed */
	t0 = dtxn_now_ns();
	while (!x.done && __atomic_load_n(&g.fenced, __ATOMIC_ACQUIRE) == 0 &&
	       dtxn_now_ns() - t0 < 20000000000ull)
		(void)dtxn_sched_step_lc(dtxn_worker_sched(w));
	assert_int_equal(x.done, 0); /* not reported aborted (before: DTXN_ABORT_FABRIC) */
	assert_int_equal(g.fenced, DTXN_LEASE_FENCED_UNFINISHED);
	/* its step 1 is in memory, for the CN's recoverer; no value of the row */
	assert_int_equal(dtxn_db_unfinished(db, &n, &table, &key), 0);
	assert_int_equal(n, 1);
	assert_int_equal(key, 1);
	assert_int_equal(dtxn_db_get(db, 0, 1, &v), 0);
	assert_int_equal(v, 11);
	dtxn_worker_destroy(w); /* the parked coordinator is discarded */
	dtxn_db_destroy(db);
	dtxn_fabric_close(f);
}

/* ------------------------------------------------------------------ */
/* A record read, then written, by one txn passes its own validation     */
/* ------------------------------------------------------------------ */

struct rw_ctx {
	int rc;              /* read key 1, then delete it; read key 2, then update it */
	int rc_after;        /* read key 1 afterwards */
	uint64_t v2;         /* key 2's value afterwards */
};

static void
rw_co(struct dtxn_coord *c, void *arg)
{
	struct rw_ctx *x = arg;
	struct dtxn_txn *t = dtxn_txn_begin(c, DTXN_TXN_RW);
	struct dtxn_item *it;
	uint64_t v;

	(void)dtxn_txn_add_ro(t, 0, 1);
	(void)dtxn_txn_add_ro(t, 0, 2);
	x->rc = dtxn_txn_execute(t);
	if (x->rc != DTXN_OK)
		return;
	(void)dtxn_txn_delete(t, 0, 1);
	it = dtxn_txn_add_rw(t, 0, 2);
	x->rc = dtxn_txn_execute(t);
	if (x->rc != DTXN_OK)
		return;
	memcpy(&v, dtxn_item_value(it), sizeof(v));
	v++;
	memcpy(dtxn_item_value(it), &v, sizeof(v));
	x->rc = dtxn_txn_commit(t);
	t = dtxn_txn_begin(c, DTXN_TXN_RO);
	it = dtxn_txn_add_ro(t, 0, 1);
	x->rc_after = dtxn_txn_execute(t);
	if (x->rc_after == DTXN_OK)
		x->rc_after = dtxn_item_exists(it) ? -EEXIST : dtxn_txn_commit(t);
}

/*
 * log-visible (locks=mn, commit=visible), SR: a txn that reads a record
 * lock-free, then deletes or updates it in a later round (TPC-C Delivery:
 * the NEW-ORDER row at the cursor) validates the read after its first
 * batch wrote its own version INVISIBLE into that record's CVT. The
 * validation must look past that version (under our lock nothing else
 * changed the record); compared with it, every such txn aborted
 * (validation), and no Delivery ever committed.
 */
static void
test_validate_own_write(void **state)
{
	static unsigned seq;
	struct rw_ctx x = { .rc = -1, .rc_after = -1 };
	struct ut_coord_spec spec = { rw_co, &x };
	struct dtxn_fabric *f;
	struct dtxn_db *db;
	uint64_t v;

	(void)state;
	small_db_up("ablation=log-visible", 2, "utlotown", &db, &f);
	for (uint64_t k = 1; k <= 2; k++) {
		v = k * 10;
		assert_int_equal(dtxn_db_load(db, 0, k, &v), 0);
	}
	assert_int_equal(ut_run_coords(db, &spec, 1, 3, 0, &seq), 0); /* CN: fabric node 3 */
	assert_int_equal(x.rc, DTXN_OK);
	assert_int_equal(x.rc_after, DTXN_OK); /* key 1 is gone */
	assert_int_equal(dtxn_db_get(db, 0, 2, &v), 0);
	assert_int_equal(v, 21);
	dtxn_db_destroy(db);
	dtxn_fabric_close(f);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kmap_churn),
		cmocka_unit_test(test_aux_heap),
		cmocka_unit_test(test_load_backups),
		cmocka_unit_test(test_aux_restart),
		cmocka_unit_test(test_aux_kept_after_undo),
		cmocka_unit_test(test_unfinished_not_counted),
		cmocka_unit_test(test_unfinished_fences),
		cmocka_unit_test(test_validate_own_write),
		cmocka_unit_test(test_delta_area),
		cmocka_unit_test(test_cvt_geometry),
		cmocka_unit_test(test_record_format),
		cmocka_unit_test(test_version_pick),
		cmocka_unit_test(test_lock_table),
		cmocka_unit_test(test_lock_bucket_full),
		cmocka_unit_test(test_vtc_invalidation),
		cmocka_unit_test(test_vtc_lru),
		cmocka_unit_test(test_options),
		cmocka_unit_test(test_overload_rule),
		cmocka_unit_test(test_one_cn),
		cmocka_unit_test(test_two_cns_sr),
		cmocka_unit_test(test_three_cns_si_kvs),
		cmocka_unit_test(test_ts_mn),
		cmocka_unit_test(test_routing),
		cmocka_unit_test(test_invisible_reader),
		cmocka_unit_test(test_footprint),
	};
	int rc;

	if (dtxn_unit_eal_init("ut_lotus") != 0)
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	dtxn_unit_eal_fini();
	return rc;
}
