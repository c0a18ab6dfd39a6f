/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * OOCC (drivers/cc/oocc): the lease arithmetic (word, prepare state,
 * elapsed time across a clock wrap, the skip rule at its boundaries, the
 * writer's wait), the Lease Manager's two phases and policy, the lock
 * word and the record format as pure functions; then the protocol on the
 * shm fabric (model none; 2 MNs, 2 replicas) with interleavings forced
 * between coroutines of one worker: the read-only skip (no validation
 * READ), validation past an intention lock, aborts on a write lock, the
 * write skew Algorithm 1 lets through (--debug-weaken oocc-alg1) and
 * dtxn's validation stops, the redo log, inserts and deletes, torn reads,
 * and the write_unlock=0 ablation; CN crash recovery from hand-built
 * crash states (a dead CN's committed txns edited back in MN memory to
 * where a crash would have left them). Reads the driver's private layouts.
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

#include <rte_lcore.h>
#include <rte_malloc.h>

#include "dtxn_txn_driver.h"
#include "oocc_private.h"
#include "unit_eal.h"
#include "ut_txn.h"

#define N_MN 2
#define T_KV 0     /* 8 B counters */
#define T_BIG 1    /* 200 B records: wider than a cacheline */
#define KV_KEYS 64
#define BIG_KEYS 16
#define N_COORDS 8
/* The protocol groups' lease: long, so that a loaded machine stays inside it. */
#define LEASE_NS 1000000u
#define OFFSET_NS 10u

static struct dtxn_fabric *g_f;
static struct dtxn_db *g_db;
static const struct dtxn_catalog *g_cat;
static unsigned g_worker_seq;
static volatile int g_step;
/* CNs of the fabric (recovery: 2, the second one dies) */
static uint16_t g_n_cn = 1;

/* ------------------------------------------------------------------ */
/* Pure: lease, lock word, format                                     */
/* ------------------------------------------------------------------ */

static void
test_lease_word(void **state)
{
	uint64_t w;

	(void)state;
	w = oocc_lease_word(10000, 10);
	assert_int_equal(oocc_lease_rv(w), 9990);
	assert_int_equal(oocc_lease_ww(w), 10010);
	assert_int_equal(oocc_lease_pack(9990, 10010), w);
	/* an allowance at least the lease: nothing is read without validation */
	w = oocc_lease_word(5, 10);
	assert_int_equal(oocc_lease_rv(w), 0);
	assert_int_equal(oocc_lease_ww(w), 15);
	/* ww saturates in its 32 bits */
	w = oocc_lease_word(UINT32_MAX - 3, 10);
	assert_int_equal(oocc_lease_rv(w), UINT32_MAX - 13);
	assert_int_equal(oocc_lease_ww(w), UINT32_MAX);
}

/* Property 2: the largest rv of the words in force is at most their smallest ww. */
static void
assert_property2(const uint64_t *words, unsigned n)
{
	uint32_t max_rv = 0, min_ww = UINT32_MAX;

	for (unsigned i = 0; i < n; i++) {
		max_rv = RTE_MAX(max_rv, oocc_lease_rv(words[i]));
		min_ww = RTE_MIN(min_ww, oocc_lease_ww(words[i]));
	}
	assert_true(max_rv <= min_ww);
}

static void
test_lease_prepare(void **state)
{
	static const uint32_t pairs[][2] = { { 4000, 7000 }, { 14000, 4000 }, { 7000, 7000 } };

	(void)state;
	for (unsigned i = 0; i < RTE_DIM(pairs); i++) {
		uint64_t old = oocc_lease_word(pairs[i][0], 500);
		uint64_t new = oocc_lease_word(pairs[i][1], 500);
		uint64_t prep = oocc_lease_prepare(old, new);
		/* machines move old -> prepare, then prepare -> new (Tables II, III) */
		uint64_t phase1[] = { old, prep }, phase2[] = { prep, new };

		assert_int_equal(oocc_lease_rv(prep), RTE_MIN(pairs[i][0], pairs[i][1]) - 500);
		assert_int_equal(oocc_lease_ww(prep), RTE_MAX(pairs[i][0], pairs[i][1]) + 500);
		assert_property2(phase1, 2);
		assert_property2(phase2, 2);
	}
	/* without the prepare state, growing breaks Property 2: old and new at once */
	{
		uint64_t mixed[] = { oocc_lease_word(4000, 0), oocc_lease_word(7000, 0) };
		uint32_t max_rv = RTE_MAX(oocc_lease_rv(mixed[0]), oocc_lease_rv(mixed[1]));

		assert_true(max_rv > RTE_MIN(oocc_lease_ww(mixed[0]), oocc_lease_ww(mixed[1])));
	}
}

static void
test_lease_skip_rule(void **state)
{
	const uint64_t near_wrap = UINT64_MAX - 100;

	(void)state;
	/* elapsed == rv skips; one ns more validates */
	assert_true(oocc_lease_skip(1000, 1000 + 9990, 9990, false));
	assert_false(oocc_lease_skip(1000, 1000 + 9991, 9990, false));
	/* an intention lock seen: validate, however short */
	assert_false(oocc_lease_skip(1000, 1000, 9990, true));
	assert_true(oocc_lease_skip(1000, 1000, 0, false));
	/* a clock that wrapped between the first READ and the last completion */
	assert_int_equal(oocc_elapsed(near_wrap, 50), 151);
	assert_true(oocc_lease_skip(near_wrap, 50, 151, false));
	assert_false(oocc_lease_skip(near_wrap, 50, 150, false));
	/* the writer's earliest commit, across the wrap too */
	assert_int_equal(oocc_lease_commit_at(1000, 10010), 11010);
	assert_int_equal(oocc_lease_commit_at(UINT64_MAX - 5, 10), 4);
}

static void
test_adapt_policy(void **state)
{
	struct oocc_ro_stats s;

	(void)state;
	memset(&s, 0, sizeof(s));
	/* no read-only txn: keep the lease */
	assert_int_equal(oocc_adapt_next(&s, 4000, 10, 1000, 100000), 4000);
	/* half skip, reads take ~8 us: grow to the 80th percentile + offset */
	for (unsigned i = 0; i < 100; i++)
		oocc_ro_stats_add(&s, 8100, i < 50);
	assert_int_equal(s.ro, 100);
	assert_int_equal(s.skipped, 50);
	assert_int_equal(s.bins[8100 / OOCC_ADAPT_BIN_NS], 100);
	assert_int_equal(oocc_adapt_next(&s, 4000, 10, 1000, 100000),
			 (8100 / OOCC_ADAPT_BIN_NS + 1) * OOCC_ADAPT_BIN_NS + 10);
	/* clamped to the bounds */
	assert_int_equal(oocc_adapt_next(&s, 4000, 10, 1000, 6000), 6000);
	/* all skip, reads take ~2 us, the lease is 50 us: shrink */
	memset(&s, 0, sizeof(s));
	for (unsigned i = 0; i < 100; i++)
		oocc_ro_stats_add(&s, 2000, true);
	assert_int_equal(oocc_adapt_next(&s, 50000, 10, 1000, 100000), 2260);
	/* 90% skip at 3 us: within twice the need, kept */
	memset(&s, 0, sizeof(s));
	for (unsigned i = 0; i < 100; i++)
		oocc_ro_stats_add(&s, 2000, i < 90);
	assert_int_equal(oocc_adapt_next(&s, 3000, 10, 1000, 100000), 3000);
	/* beyond the histogram: the last bin */
	memset(&s, 0, sizeof(s));
	oocc_ro_stats_add(&s, UINT64_MAX, false);
	assert_int_equal(s.bins[OOCC_ADAPT_BINS - 1], 1);
}

/* The manager: epoch, prepare, the wait, commit; Property 2 on every machine throughout. */
static void
test_lease_manager(void **state)
{
	struct oocc_shared *sh = rte_zmalloc(NULL, sizeof(*sh), RTE_CACHE_LINE_SIZE);
	uint64_t w[2], t = 1000;

	(void)state;
	assert_non_null(sh);
	oocc_opts_default(&sh->opts);
	sh->opts.adapt = 1;
	sh->opts.lease_ns = 4000;
	sh->n_cn = 2;
	sh->cn = rte_zmalloc(NULL, sizeof(*sh->cn) * 2, RTE_CACHE_LINE_SIZE);
	sh->n_stats = 1;
	sh->stats = rte_zmalloc(NULL, sizeof(*sh->stats), RTE_CACHE_LINE_SIZE);
	assert_non_null(sh->cn);
	assert_non_null(sh->stats);
	sh->lease_ns = 4000;
	oocc_lease_publish(sh, oocc_lease_word(4000, sh->opts.offset_ns));
	/* first epoch: no statistics, nothing changes */
	oocc_lease_manage(sh, t);
	assert_int_equal(sh->phase, 0);
	assert_int_equal(sh->lease_ns, 4000);
	/* reads take ~9 us and few skip: the next epoch grows the lease */
	for (unsigned i = 0; i < 100; i++)
		oocc_ro_stats_add(&sh->stats[0], 9000, i < 10);
	t += (uint64_t)sh->opts.epoch_us * 1000;
	oocc_lease_manage(sh, t);
	assert_int_equal(sh->phase, 1);
	w[0] = sh->cn[0].lease_word;
	w[1] = oocc_lease_word(4000, sh->opts.offset_ns);
	assert_property2(w, 2); /* prepare state next to a machine still on the old word */
	assert_int_equal(oocc_lease_rv(w[0]), 4000 - sh->opts.offset_ns);
	assert_int_equal(oocc_lease_ww(w[0]), sh->next_ns + sh->opts.offset_ns);
	/* not before the larger ww has passed */
	oocc_lease_manage(sh, t + sh->next_ns + sh->opts.offset_ns - 1);
	assert_int_equal(sh->phase, 1);
	oocc_lease_manage(sh, t + sh->next_ns + sh->opts.offset_ns);
	assert_int_equal(sh->phase, 0);
	assert_int_equal(sh->lease_ns, sh->next_ns);
	assert_int_equal(sh->adjustments, 1);
	w[1] = sh->cn[1].lease_word;
	assert_int_equal(w[1], oocc_lease_word(sh->lease_ns, sh->opts.offset_ns));
	assert_property2(w, 2); /* prepare state next to the committed one */
	assert_int_equal(sh->cn[0].lease_word, sh->cn[1].lease_word);
	rte_free(sh->stats);
	rte_free(sh->cn);
	rte_free(sh);
}

static void
test_lock_word(void **state)
{
	const uint64_t me = 0x100000005, other = 0x200000007;

	(void)state;
	assert_int_equal(oocc_lock_state(0, me, true), OOCC_LOCK_FREE);
	assert_int_equal(oocc_lock_state(me, me, true), OOCC_LOCK_FREE);
	assert_int_equal(oocc_lock_state(OOCC_WLOCK | me, me, true), OOCC_LOCK_FREE);
	assert_int_equal(oocc_lock_state(other, me, true), OOCC_LOCK_INTENT);
	assert_int_equal(oocc_lock_state(OOCC_WLOCK | other, me, true), OOCC_LOCK_WRITE);
	/* delayed_lock=0: the CAS lock is the write lock */
	assert_int_equal(oocc_lock_state(other, me, false), OOCC_LOCK_WRITE);
}

static void
test_format(void **state)
{
	struct dtxn_table tab;
	uint64_t img[30], v[25];

	(void)state;
	assert_int_equal(oocc_slot_size(8), 48);
	assert_int_equal(oocc_slot_size(200), 240);
	assert_int_equal(oocc_slot_size(3), 48);
	memset(&tab, 0, sizeof(tab));
	tab.def.value_size = 200;
	tab.slot_size = oocc_slot_size(200);
	for (unsigned i = 0; i < RTE_DIM(v); i++)
		v[i] = i;
	oocc_slot_format(&tab, img, v, NULL);
	assert_false(oocc_slot_torn(&tab, img));
	assert_memory_equal(oocc_slot_value(&tab, img), v, 200);
	/* the lock is the slot's last word */
	assert_ptr_equal(&oocc_footer_of(&tab, img)->lock, &img[tab.slot_size / 8 - 1]);
	assert_int_equal(oocc_footer_of(&tab, img)->lock, 0);
	/* a READ that saw a commit's header but not yet its tail */
	((struct oocc_slot *)img)->version = 42;
	assert_true(oocc_slot_torn(&tab, img));
	oocc_footer_of(&tab, img)->tail = 42;
	assert_false(oocc_slot_torn(&tab, img));
}

static void
test_options(void **state)
{
	char err[200];
	struct oocc_opts o;

	(void)state;
	assert_int_equal(oocc_check_options(NULL, err, sizeof(err)), 0);
	assert_int_equal(oocc_check_options("lease=0,write_unlock=0,delayed_lock=0", err,
					    sizeof(err)), 0);
	assert_int_equal(oocc_check_options("lease_ns=7000,offset_ns=500", err, sizeof(err)), 0);
	assert_int_equal(oocc_check_options("lease=2", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "oocc: lease=2: expected 0, 1");
	assert_int_equal(oocc_check_options("lease_ns=0", err, sizeof(err)), -EINVAL);
	assert_int_equal(oocc_check_options("bogus=1", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "unknown option 'bogus'"));
	assert_int_equal(oocc_check_options("adapt=1,lease=0", err, sizeof(err)), -EINVAL);
	assert_int_equal(oocc_check_options("lease_min_ns=9000,lease_max_ns=8000", err,
					    sizeof(err)), -EINVAL);
	oocc_opts_default(&o);
	assert_int_equal(oocc_opts_parse("write_unlock=0,lease_ns=4000", &o, err, sizeof(err)), 0);
	assert_int_equal(o.write_unlock, 0);
	assert_int_equal(o.lease_ns, 4000);
	assert_int_equal(o.delayed_lock, 1);
}

/* ------------------------------------------------------------------ */
/* Protocol on shm                                                    */
/* ------------------------------------------------------------------ */

static uint64_t
kv_init(uint64_t key)
{
	return key * 10;
}

/* Slot of @p key on replica @p r in MN memory, or NULL. */
static struct oocc_slot *
mn_slot(uint32_t tid, uint64_t key, uint16_t r)
{
	return ut_mn_slot(g_f, g_cat, tid, key, r);
}

static struct oocc_footer *
mn_footer(uint32_t tid, uint64_t key, uint16_t r)
{
	return oocc_footer_of(dtxn_catalog_table(g_cat, tid), mn_slot(tid, key, r));
}

static void
run_coords(const struct ut_coord_spec *specs, unsigned n)
{
	g_step = 0;
	assert_int_equal(ut_run_coords(g_db, specs, n, N_MN, 0, &g_worker_seq), 0);
}

static void
run_one(dtxn_coord_fn fn, void *arg)
{
	struct ut_coord_spec s = { fn, arg };

	run_coords(&s, 1);
}

static void
run_two(dtxn_coord_fn fn1, void *arg1, dtxn_coord_fn fn2, void *arg2)
{
	struct ut_coord_spec s[2] = { { fn1, arg1 }, { fn2, arg2 } };

	run_coords(s, 2);
}

/* READs posted by coordinator @p c's worker so far, over every MN. */
static uint64_t
reads_posted(const struct dtxn_coord *c)
{
	uint64_t n = 0;

	for (uint16_t mn = 0; mn < N_MN; mn++)
		n += dtxn_qp_counters(c->worker->qp[mn])->ops[DTXN_WR_READ];
	return n;
}

static int
cluster_setup(const char *opts, uint32_t debug_flags, const char *name)
{
	struct dtxn_db_conf dc = {
		.size = sizeof(dc), .protocol = "oocc", .isolation = DTXN_ISO_SR,
		.n_mn = N_MN, .n_replicas = 2, .n_coords = N_COORDS,
		.log_bytes = 16384, .addr_cache_entries = 4096, .cc_options = opts,
		.debug_flags = debug_flags,
	};
	struct dtxn_table_def kv = { .id = T_KV, .name = "kv", .value_size = 8,
				     .max_keys = 256, .slots_per_bucket = 4 };
	struct dtxn_table_def big = { .id = T_BIG, .name = "big", .value_size = 200,
				      .max_keys = 64 };
	struct dtxn_fabric_conf fc = { .size = sizeof(fc), .driver = "shm", .n_mn = N_MN,
				       .n_cn = g_n_cn, .socket_id = SOCKET_ID_ANY, .name = name };
	uint64_t k;

	if (ut_db_open(&dc, (const struct dtxn_table_def *[]){ &kv, &big }, 2, &fc, &g_db,
		       &g_f) != 0)
		return -1;
	g_cat = dtxn_db_catalog(g_db);
	for (k = 1; k <= KV_KEYS; k++) {
		uint64_t v = kv_init(k);

		if (dtxn_db_load(g_db, T_KV, k, &v) != 0)
			return -1;
	}
	for (k = 1; k <= BIG_KEYS; k++) {
		uint64_t v[25] = { k };

		if (dtxn_db_load(g_db, T_BIG, k, v) != 0)
			return -1;
	}
	return 0;
}

static int
group_setup(void **state)
{
	(void)state;
	return cluster_setup("lease_ns=1000000", 0, "utoocc");
}

static int
alg1_setup(void **state)
{
	(void)state;
	return cluster_setup("lease_ns=1000000", DTXN_DEBUG_OOCC_ALG1, "utooccalg1");
}

static int
wu0_setup(void **state)
{
	(void)state;
	return cluster_setup("lease_ns=1000000,write_unlock=0", 0, "utooccwu0");
}

static int
recover_setup(void **state)
{
	(void)state;
	g_n_cn = 2;
	return cluster_setup("lease_ns=1000000", 0, "utooccrec");
}

static int
group_teardown(void **state)
{
	(void)state;
	dtxn_db_destroy(g_db);
	dtxn_fabric_close(g_f);
	return 0;
}

/* --- read-write commit: one WRITE per replica, the wait, the redo log --- */

struct rw_ctx {
	uint64_t key, id, t0, t1;
	int rc;
};

static void
co_add_one(struct dtxn_coord *c, void *arg)
{
	struct rw_ctx *x = arg;

	x->t0 = dtxn_now_ns();
	x->rc = ut_txn_add_u64(c, T_KV, x->key, 1, &x->id);
	x->t1 = dtxn_now_ns();
}

static void
test_rw_commit(void **state)
{
	const struct dtxn_table *tab = dtxn_catalog_table(g_cat, T_KV);
	struct rw_ctx x = { .key = 7 };

	(void)state;
	run_one(co_add_one, &x);
	assert_int_equal(x.rc, DTXN_OK);
	for (uint16_t r = 0; r < 2; r++) {
		struct oocc_slot *s = mn_slot(T_KV, 7, r);

		assert_int_equal(*(uint64_t *)s->value, kv_init(7) + 1);
		assert_int_equal(s->version, x.id);
		assert_int_equal(mn_footer(T_KV, 7, r)->tail, x.id);
		assert_int_equal(mn_footer(T_KV, 7, r)->lock, 0);
	}
	/* the commit WRITE waited ww after the lock */
	assert_true(x.t1 - x.t0 >= LEASE_NS + OFFSET_NS);
	/* the redo record on both MNs: the new image */
	for (uint16_t mn = 0; mn < N_MN; mn++) {
		dtxn_raddr_t ra = dtxn_store_log_raddr(g_cat, 0, mn);
		const struct dtxn_log_hdr *h =
			(const void *)((char *)dtxn_fabric_mn_base(g_f, mn) + DTXN_RADDR_OFF(ra));
		const struct dtxn_log_entry *e = (const void *)(h + 1);
		const struct oocc_slot *img = (const void *)(e + 1);

		assert_int_equal(h->txn_id, x.id);
		assert_int_equal(h->n_entries, 1);
		assert_int_equal(e->key, 7);
		assert_int_equal(e->slot_size, tab->slot_size);
		assert_int_equal(*(const uint64_t *)img->value, kv_init(7) + 1);
		assert_int_equal(img->version, x.id);
	}
}

/* --- read-only: skip, validation past an intention lock, abort on a write lock --- */

struct ro_ctx {
	uint64_t keys[2];
	uint64_t vals[2];
	uint64_t commit_reads;  /* READs the commit posted */
	int rc;
	uint32_t wait_step;     /* 0: go at once; else yield until g_step reaches it */
	bool wait_wlock;        /* first yield until keys[0] is write-locked on its primary */
};

static void
co_ro(struct dtxn_coord *c, void *arg)
{
	struct ro_ctx *x = arg;
	struct dtxn_item *it[2];
	struct dtxn_txn *t;
	uint64_t before;

	if (x->wait_step != 0)
		ut_wait_step(c, &g_step, (int)x->wait_step);
	while (x->wait_wlock && (mn_footer(T_KV, x->keys[0], 0)->lock & OOCC_WLOCK) == 0)
		dtxn_co_yield_lc(dtxn_coord_co(c));
	t = dtxn_txn_begin(c, DTXN_TXN_RO);
	it[0] = dtxn_txn_add_ro(t, T_KV, x->keys[0]);
	it[1] = dtxn_txn_add_ro(t, T_KV, x->keys[1]);
	x->rc = dtxn_txn_execute(t);
	if (x->rc != DTXN_OK)
		goto out;
	x->vals[0] = *(uint64_t *)dtxn_item_value(it[0]);
	x->vals[1] = *(uint64_t *)dtxn_item_value(it[1]);
	before = reads_posted(c);
	x->rc = dtxn_txn_commit(t);
	x->commit_reads = reads_posted(c) - before;
out:
	g_step = 100;
}

static void
test_ro_skips_validation(void **state)
{
	struct ro_ctx x = { .keys = { 3, 4 } };

	(void)state;
	run_one(co_ro, &x);
	assert_int_equal(x.rc, DTXN_OK);
	assert_int_equal(x.vals[0], kv_init(3));
	assert_int_equal(x.vals[1], kv_init(4));
	assert_int_equal(x.commit_reads, 0); /* one round trip in all */
}

/* An RW txn that holds key's intention lock until g_step reaches 2. */
struct holder_ctx {
	uint64_t key;
	int rc;
	uint64_t id;
};

static void
co_holder(struct dtxn_coord *c, void *arg)
{
	struct holder_ctx *x = arg;
	struct dtxn_txn *t = dtxn_txn_begin(c, DTXN_TXN_RW);
	struct dtxn_item *it = dtxn_txn_add_rw(t, T_KV, x->key);

	x->id = dtxn_txn_id(t);
	x->rc = dtxn_txn_execute(t);
	g_step = 1;
	if (x->rc != DTXN_OK)
		return;
	ut_wait_step(c, &g_step, 2);
	*(uint64_t *)dtxn_item_value(it) += 5;
	x->rc = dtxn_txn_commit(t);
}

static void
co_ro_then_release(struct dtxn_coord *c, void *arg)
{
	co_ro(c, arg);
	g_step = 2;
}

static void
test_ro_validates_intention_lock(void **state)
{
	struct holder_ctx h = { .key = 11 };
	struct ro_ctx x = { .keys = { 11, 12 }, .wait_step = 1 };

	(void)state;
	run_two(co_holder, &h, co_ro_then_release, &x);
	assert_int_equal(x.rc, DTXN_OK);      /* intention lock: version unchanged, commits */
	assert_int_equal(x.vals[0], kv_init(11));
	assert_int_equal(x.commit_reads, 1);  /* only the intention-locked record */
	assert_int_equal(h.rc, DTXN_OK);
	assert_int_equal(*(uint64_t *)mn_slot(T_KV, 11, 0)->value, kv_init(11) + 5);
}

/* A writer in its lease wait holds a write lock: a read-only txn aborts on it. */
static void
co_writer(struct dtxn_coord *c, void *arg)
{
	struct holder_ctx *x = arg;

	x->rc = ut_txn_add_u64(c, T_KV, x->key, 1, &x->id);
}

static void
test_ro_aborts_on_write_lock(void **state)
{
	struct holder_ctx h = { .key = 13 };
	struct ro_ctx x = { .keys = { 13, 14 }, .wait_wlock = true };

	(void)state;
	run_two(co_writer, &h, co_ro, &x);
	assert_int_equal(h.rc, DTXN_OK);
	assert_int_equal(x.rc, DTXN_ABORT(DTXN_ABORT_LOCKED_READ));
}

/* A read-write txn aborts on an intention lock in its read set (Algorithm 1, line 4). */
struct rwread_ctx {
	uint64_t rd, wr;
	int rc;
};

static void
co_rw_reader(struct dtxn_coord *c, void *arg)
{
	struct rwread_ctx *x = arg;
	struct dtxn_txn *t;

	ut_wait_step(c, &g_step, 1);
	t = dtxn_txn_begin(c, DTXN_TXN_RW);
	dtxn_txn_add_ro(t, T_KV, x->rd);
	dtxn_txn_add_rw(t, T_KV, x->wr);
	x->rc = dtxn_txn_execute(t);
	if (x->rc == DTXN_OK)
		x->rc = dtxn_txn_commit(t);
	g_step = 2;
}

static void
test_rw_aborts_on_intention_lock(void **state)
{
	struct holder_ctx h = { .key = 15 };
	struct rwread_ctx x = { .rd = 15, .wr = 16 };

	(void)state;
	run_two(co_holder, &h, co_rw_reader, &x);
	assert_int_equal(x.rc, DTXN_ABORT(DTXN_ABORT_LOCKED_READ));
	assert_int_equal(h.rc, DTXN_OK);
	assert_int_equal(mn_footer(T_KV, 16, 0)->lock, 0); /* its lock was given back */
}

/* --- write skew: T1 reads X writes Y, T2 reads Y writes X, reads before both locks --- */

struct skew_ctx {
	uint64_t rd, wr;
	int step_read, step_lock; /* g_step to reach before reading / locking */
	int rc;
};

static void
co_skew(struct dtxn_coord *c, void *arg)
{
	struct skew_ctx *x = arg;
	struct dtxn_txn *t = dtxn_txn_begin(c, DTXN_TXN_RW);
	struct dtxn_item *w;

	ut_wait_step(c, &g_step, x->step_read);
	dtxn_txn_add_ro(t, T_KV, x->rd);
	x->rc = dtxn_txn_execute(t);
	g_step++;
	ut_wait_step(c, &g_step, x->step_lock);
	if (x->rc != DTXN_OK)
		goto out;
	w = dtxn_txn_add_rw(t, T_KV, x->wr);
	x->rc = dtxn_txn_execute(t);
	g_step++;
	ut_wait_step(c, &g_step, 4);
	if (x->rc != DTXN_OK)
		goto out;
	*(uint64_t *)dtxn_item_value(w) += 1;
	x->rc = dtxn_txn_commit(t);
out:
	g_step = 10;
}

static void
run_skew(struct skew_ctx *a, struct skew_ctx *b)
{
	*a = (struct skew_ctx){ .rd = 21, .wr = 22, .step_read = 0, .step_lock = 2 };
	*b = (struct skew_ctx){ .rd = 22, .wr = 21, .step_read = 1, .step_lock = 3 };
	run_two(co_skew, a, co_skew, b);
}

static void
test_write_skew_validated(void **state)
{
	struct skew_ctx a, b;

	(void)state;
	run_skew(&a, &b);
	/* each validates its read and finds the other's intention lock: not both commit */
	assert_true(a.rc == DTXN_ABORT(DTXN_ABORT_LOCKED_READ) ||
		    b.rc == DTXN_ABORT(DTXN_ABORT_LOCKED_READ));
	assert_false(a.rc == DTXN_OK && b.rc == DTXN_OK);
	assert_int_equal(mn_footer(T_KV, 21, 0)->lock, 0);
	assert_int_equal(mn_footer(T_KV, 22, 0)->lock, 0);
}

static void
test_write_skew_alg1(void **state)
{
	struct skew_ctx a, b;

	(void)state;
	run_skew(&a, &b);
	/* Algorithm 1 as printed: both inside the lease, neither validates */
	assert_int_equal(a.rc, DTXN_OK);
	assert_int_equal(b.rc, DTXN_OK);
}

/*
 * The crossing as it happens when two R2 batches interleave on the MNs
 * (both validation READs before either upgrade WRITE; one worker on shm
 * runs each batch whole): T1 read X and holds Y's intention lock; another
 * txn's intention lock appears on X (placed in MN memory here) before T1
 * validates. An intention lock alone must abort a read-write validation,
 * or both sides of a write skew pass.
 */
static void
co_rw_foreign_intent(struct dtxn_coord *c, void *arg)
{
	struct rwread_ctx *x = arg;
	struct dtxn_txn *t = dtxn_txn_begin(c, DTXN_TXN_RW);

	dtxn_txn_add_ro(t, T_KV, x->rd);
	dtxn_txn_add_rw(t, T_KV, x->wr);
	x->rc = dtxn_txn_execute(t);
	if (x->rc != DTXN_OK)
		return;
	mn_footer(T_KV, x->rd, 0)->lock = 0x7000000000001; /* another coordinator's txn */
	x->rc = dtxn_txn_commit(t);
}

static void
test_rw_validation_intent(void **state)
{
	struct rwread_ctx x = { .rd = 23, .wr = 24 };

	(void)state;
	run_one(co_rw_foreign_intent, &x);
	mn_footer(T_KV, 23, 0)->lock = 0;
	assert_int_equal(x.rc, DTXN_ABORT(DTXN_ABORT_LOCKED_READ));
	assert_int_equal(*(uint64_t *)mn_slot(T_KV, 24, 0)->value, kv_init(24));
	assert_int_equal(mn_footer(T_KV, 24, 0)->lock, 0);
}

/* --- a validation failure after the redo record: the record is voided --- */

static void
co_rw_bumped(struct dtxn_coord *c, void *arg)
{
	struct rwread_ctx *x = arg;
	struct dtxn_txn *t = dtxn_txn_begin(c, DTXN_TXN_RW);

	dtxn_txn_add_ro(t, T_KV, x->rd);
	dtxn_txn_add_rw(t, T_KV, x->wr);
	x->rc = dtxn_txn_execute(t);
	g_step = 1;
	ut_wait_step(c, &g_step, 2);
	if (x->rc == DTXN_OK)
		x->rc = dtxn_txn_commit(t);
}

static void
co_bump(struct dtxn_coord *c, void *arg)
{
	struct holder_ctx *x = arg;

	ut_wait_step(c, &g_step, 1);
	x->rc = ut_txn_add_u64(c, T_KV, x->key, 1, &x->id);
	g_step = 2;
}

static void
test_validation_voids_redo(void **state)
{
	struct rwread_ctx x = { .rd = 31, .wr = 32 };
	struct holder_ctx h = { .key = 31 };
	dtxn_raddr_t ra = dtxn_store_log_raddr(g_cat, 0, 0);
	const struct dtxn_log_hdr *hdr;

	(void)state;
	run_two(co_rw_bumped, &x, co_bump, &h);
	assert_int_equal(h.rc, DTXN_OK);
	assert_int_equal(x.rc, DTXN_ABORT(DTXN_ABORT_VALIDATION));
	assert_int_equal(*(uint64_t *)mn_slot(T_KV, 32, 0)->value, kv_init(32));
	assert_int_equal(mn_footer(T_KV, 32, 0)->lock, 0);
	/* coordinator 0 wrote its record at the start of its log region, then voided it */
	hdr = (const void *)((char *)dtxn_fabric_mn_base(g_f, 0) + DTXN_RADDR_OFF(ra));
	assert_int_equal(hdr->n_entries, 1);
	assert_int_equal(((const struct dtxn_log_entry *)(hdr + 1))->key, 32);
	assert_int_equal(hdr->txn_id, 0);
}

/* --- inserts, deletes, absent reads --- */

struct insdel_ctx {
	int rc_ins, rc_read, rc_del, rc_absent;
	uint64_t got;
	bool exists_after;
};

static void
co_insdel(struct dtxn_coord *c, void *arg)
{
	struct insdel_ctx *x = arg;
	struct dtxn_txn *t;
	struct dtxn_item *it;

	t = dtxn_txn_begin(c, DTXN_TXN_RW);
	it = dtxn_txn_insert(t, T_KV, 200);
	x->rc_ins = dtxn_txn_execute(t);
	if (x->rc_ins == DTXN_OK) {
		*(uint64_t *)dtxn_item_value(it) = 777;
		x->rc_ins = dtxn_txn_commit(t);
	}
	t = dtxn_txn_begin(c, DTXN_TXN_RO);
	it = dtxn_txn_add_ro(t, T_KV, 200);
	x->rc_read = dtxn_txn_commit(t);
	x->got = *(uint64_t *)dtxn_item_value(it);
	t = dtxn_txn_begin(c, DTXN_TXN_RW);
	dtxn_txn_delete(t, T_KV, 200);
	x->rc_del = dtxn_txn_commit(t);
	t = dtxn_txn_begin(c, DTXN_TXN_RO);
	it = dtxn_txn_add_ro(t, T_KV, 200);
	x->rc_absent = dtxn_txn_commit(t);
	x->exists_after = dtxn_item_exists(it);
}

static void
test_insert_delete(void **state)
{
	const struct dtxn_table *tab = dtxn_catalog_table(g_cat, T_KV);
	struct insdel_ctx x;
	const struct dtxn_bucket_hdr *bh;
	dtxn_raddr_t ra = dtxn_store_bucket_raddr(tab, 0, dtxn_store_bucket_of(tab, 200));

	(void)state;
	memset(&x, 0, sizeof(x));
	run_one(co_insdel, &x);
	assert_int_equal(x.rc_ins, DTXN_OK);
	assert_int_equal(x.rc_read, DTXN_OK);
	assert_int_equal(x.got, 777);
	assert_int_equal(x.rc_del, DTXN_OK);
	assert_int_equal(x.rc_absent, DTXN_OK);
	assert_false(x.exists_after);
	assert_null(mn_slot(T_KV, 200, 0));
	assert_null(mn_slot(T_KV, 200, 1));
	bh = (const void *)((char *)dtxn_fabric_mn_base(g_f, 0) + DTXN_RADDR_OFF(ra));
	assert_int_equal(bh->lock, 0);
	assert_int_equal(bh->version, 2); /* the insert and the delete bumped it */
}

/* --- torn reads: header and tail versions differ --- */

struct big_ctx {
	int rc;
	uint64_t first;
};

static void
co_read_big(struct dtxn_coord *c, void *arg)
{
	struct big_ctx *x = arg;
	struct dtxn_txn *t = dtxn_txn_begin(c, DTXN_TXN_RO);
	struct dtxn_item *it = dtxn_txn_add_ro(t, T_BIG, 5);

	x->rc = dtxn_txn_commit(t);
	x->first = *(uint64_t *)dtxn_item_value(it);
}

static void
test_torn_read(void **state)
{
	struct oocc_footer *f = mn_footer(T_BIG, 5, 0);
	struct big_ctx x;

	(void)state;
	/* as a READ sees a record a commit WRITE is halfway through: new header, old tail */
	f->tail = 99;
	run_one(co_read_big, &x);
	assert_int_equal(x.rc, DTXN_ABORT(DTXN_ABORT_INVISIBLE)); /* read again, then gave up */
	f->tail = 0;
	run_one(co_read_big, &x);
	assert_int_equal(x.rc, DTXN_OK);
	assert_int_equal(x.first, 5);
}

/* --- write_unlock=0: the records are written locked, then unlocked --- */

static void
test_write_unlock_off(void **state)
{
	struct rw_ctx x = { .key = 9 };

	(void)state;
	run_one(co_add_one, &x);
	assert_int_equal(x.rc, DTXN_OK);
	assert_int_equal(*(uint64_t *)mn_slot(T_KV, 9, 0)->value, kv_init(9) + 1);
	assert_int_equal(*(uint64_t *)mn_slot(T_KV, 9, 1)->value, kv_init(9) + 1);
	assert_int_equal(mn_footer(T_KV, 9, 0)->lock, 0);
	assert_int_equal(mn_footer(T_KV, 9, 1)->lock, 0);
	assert_int_equal(mn_footer(T_KV, 9, 0)->tail, x.id);
}

/* --- CN crash recovery (recover.c) from hand-built crash states --- */

#define DEAD_GID0 4  /* the dead CN's coordinators: gids 4..7 */

/* One committed txn of dead coordinator @p gid adding 1 to key @p key. */
static uint64_t
dead_commit(unsigned gid, uint64_t key)
{
	struct rw_ctx x = { .key = key };
	struct ut_coord_spec s = { co_add_one, &x };

	assert_int_equal(ut_run_coords(g_db, &s, 1, N_MN + 1, gid, &g_worker_seq), 0);
	assert_int_equal(x.rc, DTXN_OK);
	return x.id;
}

static bool
rec_visible(const struct dtxn_recovery *rec, uint64_t id)
{
	for (unsigned i = 0; i < rec->n_visible; i++)
		if (rec->visible[i] == id)
			return true;
	return false;
}

static uint64_t
kv_value(uint64_t key, uint16_t r)
{
	return *(uint64_t *)mn_slot(T_KV, key, r)->value;
}

static void
test_recover_decisions(void **state)
{
	const uint32_t ss = dtxn_catalog_table(g_cat, T_KV)->slot_size;
	char pre[4][2][256];
	const uint64_t keys[4] = { 11, 12, 13, 14 };
	uint64_t id[3], live = ((uint64_t)(0 + 1) << 40) | 77, intent;
	struct dtxn_recovery *rec;
	struct ut_recover x;

	(void)state;
	assert_true(ss <= sizeof(pre[0][0]));
	for (unsigned k = 0; k < 4; k++)
		for (uint16_t r = 0; r < 2; r++)
			memcpy(pre[k][r], mn_slot(T_KV, keys[k], r), ss);
	for (unsigned k = 0; k < 3; k++)
		id[k] = dead_commit(DEAD_GID0 + k, keys[k]);
	/* A: logged and write-locked (R2 done), no record written: rolls back */
	memcpy(mn_slot(T_KV, keys[0], 0), pre[0][0], ss);
	memcpy(mn_slot(T_KV, keys[0], 1), pre[0][1], ss);
	mn_footer(T_KV, keys[0], 0)->lock = OOCC_WLOCK | id[0];
	/* B: the backup written, the primary not yet (still locked): rolls forward */
	memcpy(mn_slot(T_KV, keys[1], 0), pre[1][0], ss);
	mn_footer(T_KV, keys[1], 0)->lock = OOCC_WLOCK | id[1];
	/* C: the primary written and unlocked, the backup missed it: backup repaired */
	memcpy(mn_slot(T_KV, keys[2], 1), pre[2][1], ss);
	/* D: an intention lock of the dead gid 7 with no record; E: a live txn's lock */
	intent = ((uint64_t)(DEAD_GID0 + 3 + 1) << 40) | 5;
	mn_footer(T_KV, keys[3], 0)->lock = intent;
	mn_footer(T_KV, 20, 0)->lock = live;

	rec = &ut_recover_of(&x, N_MN + 1, DEAD_GID0, N_COORDS - DEAD_GID0)->rec;
	run_one(ut_recover_main, &x);
	assert_int_equal(x.rc, 0);
	assert_int_equal(rec->txns_seen, 2);       /* A and B held locks; C had unlocked */
	assert_int_equal(rec->rolled_back, 1);
	assert_int_equal(rec->rolled_forward, 1);
	assert_int_equal(rec->locks_released, 4);  /* A, B, C's re-lock, D */
	assert_int_equal(rec->n_steps, 2);
	assert_string_equal(rec->step[0].name, "redo-logs");
	assert_int_equal(rec->step[0].work, 3);
	assert_false(rec_visible(rec, id[0]));
	assert_true(rec_visible(rec, id[1]));
	assert_true(rec_visible(rec, id[2]));
	/* A: as before the txn, on both replicas */
	assert_int_equal(kv_value(keys[0], 0), kv_init(keys[0]));
	assert_int_equal(kv_value(keys[0], 1), kv_init(keys[0]));
	/* B and C: the txn's value and version everywhere */
	for (unsigned k = 1; k < 3; k++)
		for (uint16_t r = 0; r < 2; r++) {
			assert_int_equal(kv_value(keys[k], r), kv_init(keys[k]) + 1);
			assert_int_equal(mn_slot(T_KV, keys[k], r)->version, id[k]);
			assert_int_equal(mn_footer(T_KV, keys[k], r)->tail, id[k]);
		}
	for (unsigned k = 0; k < 4; k++)
		assert_int_equal(mn_footer(T_KV, keys[k], 0)->lock, 0);
	assert_int_equal(mn_footer(T_KV, 20, 0)->lock, live); /* not the dead CN's */

	/* idempotent: a second run finds nothing to do */
	ut_recover_of(&x, N_MN + 1, DEAD_GID0, N_COORDS - DEAD_GID0);
	run_one(ut_recover_main, &x);
	assert_int_equal(x.rc, 0);
	assert_int_equal(rec->txns_seen, 0);
	assert_int_equal(rec->locks_released, 0);
	assert_int_equal(kv_value(keys[1], 0), kv_init(keys[1]) + 1);
	mn_footer(T_KV, 20, 0)->lock = 0;
}

int
main(void)
{
	const struct CMUnitTest pure[] = {
		cmocka_unit_test(test_lease_word),
		cmocka_unit_test(test_lease_prepare),
		cmocka_unit_test(test_lease_skip_rule),
		cmocka_unit_test(test_adapt_policy),
		cmocka_unit_test(test_lease_manager),
		cmocka_unit_test(test_lock_word),
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_options),
	};
	const struct CMUnitTest proto[] = {
		cmocka_unit_test(test_rw_commit),
		cmocka_unit_test(test_ro_skips_validation),
		cmocka_unit_test(test_ro_validates_intention_lock),
		cmocka_unit_test(test_ro_aborts_on_write_lock),
		cmocka_unit_test(test_rw_aborts_on_intention_lock),
		cmocka_unit_test(test_write_skew_validated),
		cmocka_unit_test(test_rw_validation_intent),
		cmocka_unit_test(test_validation_voids_redo),
		cmocka_unit_test(test_insert_delete),
		cmocka_unit_test(test_torn_read),
	};
	const struct CMUnitTest alg1[] = {
		cmocka_unit_test(test_write_skew_alg1),
	};
	const struct CMUnitTest recover[] = {
		cmocka_unit_test(test_recover_decisions),
	};
	const struct CMUnitTest wu0[] = {
		cmocka_unit_test(test_write_unlock_off),
	};
	int rc;

	if (dtxn_unit_eal_init("ut_oocc") != 0)
		return 1;
	rc = cmocka_run_group_tests_name("oocc_pure", pure, NULL, NULL);
	if (rc == 0)
		rc = cmocka_run_group_tests_name("oocc", proto, group_setup, group_teardown);
	if (rc == 0)
		rc = cmocka_run_group_tests_name("oocc_alg1", alg1, alg1_setup, group_teardown);
	if (rc == 0)
		rc = cmocka_run_group_tests_name("oocc_write_unlock0", wu0, wu0_setup,
						 group_teardown);
	if (rc == 0)
		rc = cmocka_run_group_tests_name("oocc_recover", recover, recover_setup,
						 group_teardown);
	dtxn_unit_eal_fini();
	return rc;
}
