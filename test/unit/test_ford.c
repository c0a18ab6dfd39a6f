/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * FORD on the shm fabric (model none): 3 MNs, 3 replicas, 2 tables. Each
 * case runs coordinators as coroutines on a worker of the main lcore and
 * checks the outcome in MN memory (dtxn_fabric_mn_base). Interleavings
 * between coordinators are forced with a shared step counter. A second
 * group runs FORD as published (--cc-opts published=1) on 4 MNs, so that
 * "every MN" and "every replica" differ.
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

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include "dtxn_txn_driver.h"
#include "unit_eal.h"
#include "ut_txn.h"

#define N_MN 3
#define PUB_MN 4
#define T_KV 0     /* 8 B counters */
#define T_BIG 1    /* 40 B records */
#define KV_KEYS 200
#define BIG_KEYS 50
#define N_COORDS 8

/* FORD's slot, as the test reads it in MN memory. */
struct slot_view {
	struct dtxn_slot_hdr hdr;
	uint64_t lock;
	uint64_t version;
	uint64_t value[];
};

struct big_val {
	uint64_t a[5];
};

static struct dtxn_fabric *g_f;
static struct dtxn_db *g_db;
static const struct dtxn_catalog *g_cat;
static unsigned g_worker_seq;
static uint16_t g_n_mn;   /* MNs of the group's cluster; CN nodes follow */
static volatile int g_step;

/* ------------------------------------------------------------------ */
/* Helpers                                                            */
/* ------------------------------------------------------------------ */

static uint64_t
kv_init(uint64_t key)
{
	return key * 10;
}

/* Slot of @p key on replica @p r in MN memory, or NULL (absent/deleted). */
static struct slot_view *
mn_slot(uint32_t tid, uint64_t key, uint16_t r)
{
	return ut_mn_slot(g_f, g_cat, tid, key, r);
}

/* Home bucket header of @p key on replica @p r. */
static struct dtxn_bucket_hdr *
mn_bucket(uint32_t tid, uint64_t key, uint16_t r)
{
	const struct dtxn_table *t = dtxn_catalog_table(g_cat, tid);
	dtxn_raddr_t ra = dtxn_store_bucket_raddr(t, r, dtxn_store_bucket_of(t, key));

	return (struct dtxn_bucket_hdr *)((char *)dtxn_fabric_mn_base(g_f, DTXN_RADDR_MN(ra)) +
					  DTXN_RADDR_OFF(ra));
}

static void
wait_step(struct dtxn_coord *c, int n)
{
	ut_wait_step(c, &g_step, n);
}

/* Runs coordinators on a fresh worker of the calling lcore until they end. */
static void
run_coords(const struct ut_coord_spec *specs, unsigned n, uint16_t cn_node)
{
	assert_int_equal(ut_run_coords(g_db, specs, n, cn_node, 0, &g_worker_seq), 0);
}

static void
run_one(dtxn_coord_fn fn, void *arg)
{
	struct ut_coord_spec s = { fn, arg };

	g_step = 0;
	run_coords(&s, 1, g_n_mn);
}

static void
run_two(dtxn_coord_fn fn1, void *arg1, dtxn_coord_fn fn2, void *arg2)
{
	struct ut_coord_spec s[2] = { { fn1, arg1 }, { fn2, arg2 } };

	g_step = 0;
	run_coords(s, 2, g_n_mn);
}

/* One RW txn that adds @p delta to a counter; DTXN_OK or the abort reason. */
static int
txn_add_counter(struct dtxn_coord *c, uint64_t key, uint64_t delta, uint64_t *id)
{
	return ut_txn_add_u64(c, T_KV, key, delta, id);
}

/* ------------------------------------------------------------------ */
/* Setup                                                              */
/* ------------------------------------------------------------------ */

/* The cluster of a group: @p n_mn MNs, FORD with options @p opts. */
static int
cluster_setup(uint16_t n_mn, const char *opts, const char *name)
{
	struct dtxn_db_conf dc = {
		.size = sizeof(dc), .protocol = "ford", .isolation = DTXN_ISO_SR,
		.n_mn = n_mn, .n_replicas = 3, .n_coords = N_COORDS,
		.log_bytes = 16384, .addr_cache_entries = 4096, .cc_options = opts,
	};
	struct dtxn_table_def kv = { .id = T_KV, .name = "kv", .value_size = 8,
				     .max_keys = 1024, .slots_per_bucket = 4 };
	struct dtxn_table_def big = { .id = T_BIG, .name = "big", .value_size = 40,
				      .max_keys = 256 };
	struct dtxn_fabric_conf fc = { .size = sizeof(fc), .driver = "shm", .n_mn = n_mn,
				       .n_cn = 2, .socket_id = SOCKET_ID_ANY,
				       .name = name };
	uint64_t k;

	g_n_mn = n_mn;
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
		struct big_val v = { { k, k + 1, k + 2, k + 3, k + 4 } };

		if (dtxn_db_load(g_db, T_BIG, k, &v) != 0)
			return -1;
	}
	return 0;
}

static int
group_setup(void **state)
{
	(void)state;
	return cluster_setup(N_MN, NULL, "utford");
}

static int
group_teardown(void **state)
{
	(void)state;
	dtxn_db_destroy(g_db);
	dtxn_fabric_close(g_f);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Cases                                                              */
/* ------------------------------------------------------------------ */

static void
test_attach_checks(void **state)
{
	struct dtxn_db_conf dc = { .size = sizeof(dc), .protocol = "ford",
				   .n_mn = N_MN, .n_replicas = 3, .n_coords = 64 };
	struct dtxn_table_def kv = { .id = 0, .name = "kv", .value_size = 8,
				     .max_keys = 100000 };
	struct dtxn_db *db;
	uint64_t region;

	(void)state;
	db = dtxn_db_create(&dc);
	assert_non_null(db);
	assert_int_equal(dtxn_db_add_table(db, &kv), 0);
	assert_int_equal(dtxn_catalog_table(dtxn_db_catalog(db), 0)->slot_size, 40);
	assert_int_equal(dtxn_db_layout(db, &region), 0);
	assert_true(region > dtxn_fabric_conf(g_f)->mn_region_size);
	/* the open fabric's regions are too small for this db */
	assert_int_equal(dtxn_db_attach(db, g_f), -EINVAL);
	assert_null(dtxn_db_fabric(db));
	dtxn_db_destroy(db);
}

struct read_ctx {
	uint64_t vals[5];
	bool exists_absent;
	bool cached_second;
	int rc1, rc2;
	struct big_val big;
};

static void
co_read_load(struct dtxn_coord *c, void *arg)
{
	struct read_ctx *x = arg;
	struct dtxn_item *it[5], *absent, *big;
	struct dtxn_txn *t;
	unsigned i;

	t = dtxn_txn_begin(c, DTXN_TXN_RO);
	for (i = 0; i < 5; i++)
		it[i] = dtxn_txn_add_ro(t, T_KV, i + 1);
	absent = dtxn_txn_add_ro(t, T_KV, 100000);
	big = dtxn_txn_add_ro(t, T_BIG, 7);
	x->rc1 = dtxn_txn_execute(t);
	for (i = 0; i < 5; i++)
		x->vals[i] = dtxn_item_exists(it[i]) ? *(uint64_t *)dtxn_item_value(it[i]) : 0;
	x->exists_absent = dtxn_item_exists(absent);
	memcpy(&x->big, dtxn_item_value(big), sizeof(x->big));
	if (x->rc1 == DTXN_OK)
		x->rc1 = dtxn_txn_commit(t);
	/* second time: addresses come from the cache */
	t = dtxn_txn_begin(c, DTXN_TXN_RO);
	it[0] = dtxn_txn_add_ro(t, T_KV, 1);
	x->rc2 = dtxn_txn_execute(t);
	x->cached_second = (it[0]->flags & DTXN_ITEM_F_CACHED) != 0 &&
			   *(uint64_t *)dtxn_item_value(it[0]) == kv_init(1);
	if (x->rc2 == DTXN_OK)
		x->rc2 = dtxn_txn_commit(t);
}

static void
test_read_your_load(void **state)
{
	struct read_ctx x;
	unsigned i;

	(void)state;
	memset(&x, 0, sizeof(x));
	run_one(co_read_load, &x);
	assert_int_equal(x.rc1, DTXN_OK);
	assert_int_equal(x.rc2, DTXN_OK);
	for (i = 0; i < 5; i++)
		assert_int_equal(x.vals[i], kv_init(i + 1));
	assert_false(x.exists_absent);
	assert_true(x.cached_second);
	for (i = 0; i < 5; i++)
		assert_int_equal(x.big.a[i], 7 + i);
}

struct rw_ctx {
	uint64_t key, id;
	int rc;
};

static void
co_add_one(struct dtxn_coord *c, void *arg)
{
	struct rw_ctx *x = arg;

	x->rc = txn_add_counter(c, x->key, 1, &x->id);
}

static void
test_rw_commit_replicated(void **state)
{
	struct rw_ctx x = { .key = 7 };
	uint64_t v;
	uint16_t r;

	(void)state;
	run_one(co_add_one, &x);
	assert_int_equal(x.rc, DTXN_OK);
	for (r = 0; r < 3; r++) {
		struct slot_view *s = mn_slot(T_KV, 7, r);

		assert_non_null(s);
		assert_int_equal(s->value[0], kv_init(7) + 1);
		assert_int_equal(s->version, x.id);
		assert_int_equal(s->lock, 0);
	}
	assert_int_equal(dtxn_db_get(g_db, T_KV, 7, &v), 0);
	assert_int_equal(v, kv_init(7) + 1);
	/* an untouched neighbour is untouched */
	assert_int_equal(mn_slot(T_KV, 8, 0)->version, 0);
}

struct conflict_ctx {
	uint64_t id1, id2;
	int rc1, rc2;
	uint64_t lock9_after_abort, lock10_after_abort;
};

static void
co_conflict_holder(struct dtxn_coord *c, void *arg)
{
	struct conflict_ctx *x = arg;
	struct dtxn_txn *t = dtxn_txn_begin(c, DTXN_TXN_RW);
	struct dtxn_item *it = dtxn_txn_add_rw(t, T_KV, 9);

	x->id1 = dtxn_txn_id(t);
	x->rc1 = dtxn_txn_execute(t);
	g_step = 1;
	wait_step(c, 2);
	*(uint64_t *)dtxn_item_value(it) += 100;
	x->rc1 = dtxn_txn_commit(t);
}

static void
co_conflict_loser(struct dtxn_coord *c, void *arg)
{
	struct conflict_ctx *x = arg;
	struct dtxn_txn *t;

	wait_step(c, 1);
	t = dtxn_txn_begin(c, DTXN_TXN_RW);
	x->id2 = dtxn_txn_id(t);
	dtxn_txn_add_rw(t, T_KV, 10); /* gets this one */
	dtxn_txn_add_rw(t, T_KV, 9);  /* held by the holder */
	x->rc2 = dtxn_txn_execute(t);
	/* the abort's unlock WRITEs are posted; let them land */
	dtxn_co_yield_lc(dtxn_coord_co(c));
	x->lock9_after_abort = mn_slot(T_KV, 9, 0)->lock;
	x->lock10_after_abort = mn_slot(T_KV, 10, 0)->lock;
	g_step = 2;
}

static void
test_lock_conflict(void **state)
{
	struct conflict_ctx x;

	(void)state;
	memset(&x, 0, sizeof(x));
	run_two(co_conflict_holder, &x, co_conflict_loser, &x);
	assert_int_equal(x.rc2, DTXN_ABORT(DTXN_ABORT_LOCK_CONFLICT));
	/* the loser released the lock it got and left the holder's alone */
	assert_int_equal(x.lock9_after_abort, x.id1);
	assert_int_equal(x.lock10_after_abort, 0);
	assert_int_equal(x.rc1, DTXN_OK);
	assert_int_equal(mn_slot(T_KV, 9, 0)->lock, 0);
	assert_int_equal(mn_slot(T_KV, 9, 0)->value[0], kv_init(9) + 100);
	assert_int_equal(mn_slot(T_KV, 9, 2)->value[0], kv_init(9) + 100);
	assert_int_equal(mn_slot(T_KV, 10, 0)->value[0], kv_init(10));
}

/* Write skew: T1 reads x writes y, T2 reads y writes x, interleaved. */
struct skew_ctx {
	uint64_t x, y;
	int rc1, rc2;
};

static int
skew_txn(struct dtxn_coord *c, uint64_t rkey, uint64_t wkey, int my, int other)
{
	struct dtxn_txn *t = dtxn_txn_begin(c, DTXN_TXN_RW);
	struct dtxn_item *r, *w;
	int rc;

	(void)other;
	r = dtxn_txn_add_ro(t, T_KV, rkey);
	rc = dtxn_txn_execute(t);           /* both read first */
	g_step++;
	wait_step(c, 2);
	w = dtxn_txn_add_rw(t, T_KV, wkey);
	if (rc == DTXN_OK)
		rc = dtxn_txn_execute(t);   /* then both lock */
	g_step++;
	wait_step(c, 4);
	if (rc != DTXN_OK)
		return rc;
	*(uint64_t *)dtxn_item_value(w) = *(uint64_t *)dtxn_item_value(r) + (uint64_t)my;
	return dtxn_txn_commit(t);          /* both validate before either writes */
}

static void
co_skew1(struct dtxn_coord *c, void *arg)
{
	struct skew_ctx *x = arg;

	x->rc1 = skew_txn(c, x->x, x->y, 1, 2);
}

static void
co_skew2(struct dtxn_coord *c, void *arg)
{
	struct skew_ctx *x = arg;

	x->rc2 = skew_txn(c, x->y, x->x, 2, 1);
}

static void
test_write_skew(void **state)
{
	struct skew_ctx x = { .x = 11, .y = 12 };

	(void)state;
	run_two(co_skew1, &x, co_skew2, &x);
	print_message("write skew: T1 %s, T2 %s\n", dtxn_abort_reason_name(x.rc1),
		      dtxn_abort_reason_name(x.rc2));
	assert_false(x.rc1 == DTXN_OK && x.rc2 == DTXN_OK);
	assert_true(x.rc1 == DTXN_ABORT(DTXN_ABORT_LOCKED_READ) ||
		    x.rc2 == DTXN_ABORT(DTXN_ABORT_LOCKED_READ));
	assert_int_equal(mn_slot(T_KV, 11, 0)->lock, 0);
	assert_int_equal(mn_slot(T_KV, 12, 0)->lock, 0);

	/* the same schedule without the lock check (FORD's bug 3) lets both commit */
	g_db->conf.debug_flags |= DTXN_DEBUG_SKIP_LOCK_CHECK;
	x.x = 13;
	x.y = 14;
	run_two(co_skew1, &x, co_skew2, &x);
	g_db->conf.debug_flags &= ~DTXN_DEBUG_SKIP_LOCK_CHECK;
	assert_int_equal(x.rc1, DTXN_OK);
	assert_int_equal(x.rc2, DTXN_OK);
	assert_int_equal(mn_slot(T_KV, 14, 0)->value[0], kv_init(13) + 1);
	assert_int_equal(mn_slot(T_KV, 13, 0)->value[0], kv_init(14) + 2);
}

struct val_ctx {
	int rc_mixed, rc_single, rc_w1, rc_w2;
};

static void
co_val_reader(struct dtxn_coord *c, void *arg)
{
	struct val_ctx *x = arg;
	struct dtxn_txn *t;

	t = dtxn_txn_begin(c, DTXN_TXN_RW);
	dtxn_txn_add_ro(t, T_KV, 20);
	dtxn_txn_add_rw(t, T_KV, 21);
	x->rc_mixed = dtxn_txn_execute(t);
	g_step = 1;
	wait_step(c, 2);
	if (x->rc_mixed == DTXN_OK)
		x->rc_mixed = dtxn_txn_commit(t);

	/* a single-item read-only txn is validated too (FORD's bug 4) */
	t = dtxn_txn_begin(c, DTXN_TXN_RO);
	dtxn_txn_add_ro(t, T_KV, 22);
	x->rc_single = dtxn_txn_execute(t);
	g_step = 3;
	wait_step(c, 4);
	if (x->rc_single == DTXN_OK)
		x->rc_single = dtxn_txn_commit(t);
}

static void
co_val_writer(struct dtxn_coord *c, void *arg)
{
	struct val_ctx *x = arg;

	wait_step(c, 1);
	x->rc_w1 = txn_add_counter(c, 20, 5, NULL);
	g_step = 2;
	wait_step(c, 3);
	x->rc_w2 = txn_add_counter(c, 22, 5, NULL);
	g_step = 4;
}

static void
test_validation_version_change(void **state)
{
	struct val_ctx x;

	(void)state;
	memset(&x, 0, sizeof(x));
	run_two(co_val_reader, &x, co_val_writer, &x);
	assert_int_equal(x.rc_w1, DTXN_OK);
	assert_int_equal(x.rc_w2, DTXN_OK);
	assert_int_equal(x.rc_mixed, DTXN_ABORT(DTXN_ABORT_VALIDATION));
	assert_int_equal(x.rc_single, DTXN_ABORT(DTXN_ABORT_VALIDATION));
	/* the aborted txn wrote nothing and released its lock */
	assert_int_equal(mn_slot(T_KV, 21, 0)->value[0], kv_init(21));
	assert_int_equal(mn_slot(T_KV, 21, 0)->lock, 0);
}

struct ins_ctx {
	uint64_t key, val, id;
	int rc_ins, rc_read, rc_dup, rc_dup_exec;
	bool exists;
	uint64_t read_val;
};

static void
co_insert(struct dtxn_coord *c, void *arg)
{
	struct ins_ctx *x = arg;
	struct dtxn_txn *t;
	struct dtxn_item *it;

	t = dtxn_txn_begin(c, DTXN_TXN_RW);
	x->id = dtxn_txn_id(t);
	it = dtxn_txn_insert(t, T_KV, x->key);
	x->rc_ins = dtxn_txn_execute(t);
	if (x->rc_ins == DTXN_OK) {
		*(uint64_t *)dtxn_item_value(it) = x->val;
		x->rc_ins = dtxn_txn_commit(t);
	}
	t = dtxn_txn_begin(c, DTXN_TXN_RO);
	it = dtxn_txn_add_ro(t, T_KV, x->key);
	x->rc_read = dtxn_txn_execute(t);
	x->exists = dtxn_item_exists(it);
	x->read_val = x->exists ? *(uint64_t *)dtxn_item_value(it) : 0;
	if (x->rc_read == DTXN_OK)
		x->rc_read = dtxn_txn_commit(t);
	/* inserting it again, or a loaded key */
	t = dtxn_txn_begin(c, DTXN_TXN_RW);
	dtxn_txn_insert(t, T_KV, x->key);
	x->rc_dup = dtxn_txn_execute(t);
	t = dtxn_txn_begin(c, DTXN_TXN_RW);
	dtxn_txn_insert(t, T_KV, 3);
	x->rc_dup_exec = dtxn_txn_execute(t);
}

static void
test_insert(void **state)
{
	struct ins_ctx x = { .key = 5000, .val = 424242 };
	struct dtxn_bucket_hdr *bh = mn_bucket(T_KV, 5000, 0);
	uint64_t bver = bh->version, v;
	uint16_t r;

	(void)state;
	assert_null(mn_slot(T_KV, 5000, 0));
	run_one(co_insert, &x);
	assert_int_equal(x.rc_ins, DTXN_OK);
	assert_int_equal(x.rc_read, DTXN_OK);
	assert_true(x.exists);
	assert_int_equal(x.read_val, 424242);
	assert_int_equal(x.rc_dup, DTXN_ABORT(DTXN_ABORT_EXISTS));
	assert_int_equal(x.rc_dup_exec, DTXN_ABORT(DTXN_ABORT_EXISTS));
	for (r = 0; r < 3; r++) {
		struct slot_view *s = mn_slot(T_KV, 5000, r);

		assert_non_null(s);
		assert_int_equal(s->value[0], 424242);
		assert_int_equal(s->version, x.id);
		assert_int_equal(s->lock, 0);
		assert_int_equal(mn_bucket(T_KV, 5000, r)->version, bver + 1);
		assert_int_equal(mn_bucket(T_KV, 5000, r)->lock, 0);
	}
	/* the failed inserts released their bucket locks */
	assert_int_equal(mn_bucket(T_KV, 3, 0)->lock, 0);
	assert_int_equal(dtxn_db_get(g_db, T_KV, 5000, &v), 0);
	assert_int_equal(v, 424242);
}

struct del_ctx {
	int rc_del, rc_read, rc_again, rc_rw;
	bool exists;
};

static void
co_delete(struct dtxn_coord *c, void *arg)
{
	struct del_ctx *x = arg;
	struct dtxn_txn *t;
	struct dtxn_item *it;

	/* warm the address cache first */
	t = dtxn_txn_begin(c, DTXN_TXN_RO);
	dtxn_txn_add_ro(t, T_KV, 30);
	(void)dtxn_txn_commit(t);

	t = dtxn_txn_begin(c, DTXN_TXN_RW);
	dtxn_txn_delete(t, T_KV, 30);
	x->rc_del = dtxn_txn_commit(t);
	t = dtxn_txn_begin(c, DTXN_TXN_RO);
	it = dtxn_txn_add_ro(t, T_KV, 30);
	x->rc_read = dtxn_txn_execute(t);
	x->exists = dtxn_item_exists(it);
	if (x->rc_read == DTXN_OK)
		x->rc_read = dtxn_txn_commit(t);
	t = dtxn_txn_begin(c, DTXN_TXN_RW);
	dtxn_txn_delete(t, T_KV, 30);
	x->rc_again = dtxn_txn_execute(t);
	t = dtxn_txn_begin(c, DTXN_TXN_RW);
	dtxn_txn_add_rw(t, T_KV, 30);
	x->rc_rw = dtxn_txn_execute(t);
}

static void
test_delete(void **state)
{
	struct del_ctx x;
	uint64_t bver = mn_bucket(T_KV, 30, 0)->version, v;
	uint16_t r;

	(void)state;
	memset(&x, 0, sizeof(x));
	assert_non_null(mn_slot(T_KV, 30, 0));
	run_one(co_delete, &x);
	assert_int_equal(x.rc_del, DTXN_OK);
	assert_int_equal(x.rc_read, DTXN_OK);
	assert_false(x.exists);
	assert_int_equal(x.rc_again, DTXN_ABORT(DTXN_ABORT_NOT_FOUND));
	assert_int_equal(x.rc_rw, DTXN_ABORT(DTXN_ABORT_NOT_FOUND));
	for (r = 0; r < 3; r++) {
		assert_null(mn_slot(T_KV, 30, r));
		assert_int_equal(mn_bucket(T_KV, 30, r)->version, bver + 1);
		assert_int_equal(mn_bucket(T_KV, 30, r)->lock, 0);
	}
	assert_int_equal(dtxn_db_get(g_db, T_KV, 30, &v), -ENOENT);
}

struct tomb_ctx {
	uint64_t del_id, read_ver, ins_ver, reread_ver, ins_id;
	uint32_t read_flags, ins_flags, reread_flags;
	dtxn_raddr_t del_raddr, ins_raddr;
	int rc_del, rc_read, rc_ins, rc_reread;
};

/* Delete key 33, read it, insert it again, read it again. */
static void
co_tomb(struct dtxn_coord *c, void *arg)
{
	struct tomb_ctx *x = arg;
	struct dtxn_txn *t;
	struct dtxn_item *it;

	t = dtxn_txn_begin(c, DTXN_TXN_RW);
	x->del_id = dtxn_txn_id(t);
	it = dtxn_txn_delete(t, T_KV, 33);
	x->rc_del = dtxn_txn_commit(t);
	x->del_raddr = it->slot_raddr;
	t = dtxn_txn_begin(c, DTXN_TXN_RO);
	it = dtxn_txn_add_ro(t, T_KV, 33);
	x->rc_read = dtxn_txn_commit(t);
	x->read_flags = it->flags;
	x->read_ver = it->version;
	t = dtxn_txn_begin(c, DTXN_TXN_RW);
	x->ins_id = dtxn_txn_id(t);
	it = dtxn_txn_insert(t, T_KV, 33);
	x->rc_ins = dtxn_txn_execute(t);
	x->ins_flags = it->flags;
	x->ins_ver = it->version;
	x->ins_raddr = it->slot_raddr;
	if (x->rc_ins == DTXN_OK) {
		*(uint64_t *)dtxn_item_value(it) = 77;
		x->rc_ins = dtxn_txn_commit(t);
	}
	t = dtxn_txn_begin(c, DTXN_TXN_RO);
	it = dtxn_txn_add_ro(t, T_KV, 33);
	x->rc_reread = dtxn_txn_commit(t);
	x->reread_flags = it->flags;
	x->reread_ver = it->version;
}

/*
 * A delete leaves a tombstone (the key and the deleter's id in the
 * freed slot): a read reports the key absent over the delete, and a
 * re-insert takes that slot and follows the delete (checker.md, Tombstones).
 */
static void
test_tombstone(void **state)
{
	struct tomb_ctx x;

	(void)state;
	memset(&x, 0, sizeof(x));
	run_one(co_tomb, &x);
	assert_int_equal(x.rc_del, DTXN_OK);
	assert_int_equal(x.rc_read, DTXN_OK);
	assert_int_equal(x.read_flags & (DTXN_ITEM_F_EXISTS | DTXN_ITEM_F_TOMB), DTXN_ITEM_F_TOMB);
	assert_int_equal(x.read_ver, x.del_id);
	assert_int_equal(x.rc_ins, DTXN_OK);
	assert_true(x.ins_flags & DTXN_ITEM_F_TOMB);
	assert_int_equal(x.ins_ver, x.del_id);
	assert_int_equal(x.ins_raddr, x.del_raddr); /* its own tombstone's slot */
	assert_int_equal(x.rc_reread, DTXN_OK);
	assert_int_equal(x.reread_flags & (DTXN_ITEM_F_EXISTS | DTXN_ITEM_F_TOMB), DTXN_ITEM_F_EXISTS);
	assert_int_equal(x.reread_ver, x.ins_id);
	assert_int_equal(mn_slot(T_KV, 33, 0)->value[0], 77);
}

struct absent_ctx {
	int rc_reader, rc_ins;
	bool exists;
};

static void
co_absent_reader(struct dtxn_coord *c, void *arg)
{
	struct absent_ctx *x = arg;
	struct dtxn_txn *t = dtxn_txn_begin(c, DTXN_TXN_RW);
	struct dtxn_item *it;

	it = dtxn_txn_add_ro(t, T_KV, 6000);
	dtxn_txn_add_rw(t, T_KV, 31);
	x->rc_reader = dtxn_txn_execute(t);
	x->exists = dtxn_item_exists(it);
	g_step = 1;
	wait_step(c, 2);
	if (x->rc_reader == DTXN_OK)
		x->rc_reader = dtxn_txn_commit(t);
}

static void
co_absent_inserter(struct dtxn_coord *c, void *arg)
{
	struct absent_ctx *x = arg;
	struct dtxn_txn *t;
	struct dtxn_item *it;

	wait_step(c, 1);
	t = dtxn_txn_begin(c, DTXN_TXN_RW);
	it = dtxn_txn_insert(t, T_KV, 6000);
	x->rc_ins = dtxn_txn_execute(t);
	if (x->rc_ins == DTXN_OK) {
		*(uint64_t *)dtxn_item_value(it) = 1;
		x->rc_ins = dtxn_txn_commit(t);
	}
	g_step = 2;
}

static void
test_absent_read_invalidated(void **state)
{
	struct absent_ctx x;

	(void)state;
	memset(&x, 0, sizeof(x));
	run_two(co_absent_reader, &x, co_absent_inserter, &x);
	assert_false(x.exists);
	assert_int_equal(x.rc_ins, DTXN_OK);
	assert_int_equal(x.rc_reader, DTXN_ABORT(DTXN_ABORT_VALIDATION));
	assert_int_equal(mn_slot(T_KV, 31, 0)->lock, 0);
	assert_int_equal(mn_slot(T_KV, 31, 0)->value[0], kv_init(31));
}

struct log_ctx {
	uint64_t id;
	int rc;
	uint32_t gid;
};

static void
co_log(struct dtxn_coord *c, void *arg)
{
	struct log_ctx *x = arg;
	struct dtxn_txn *t = dtxn_txn_begin(c, DTXN_TXN_RW);
	struct dtxn_item *it = dtxn_txn_add_rw(t, T_BIG, 10);

	x->gid = dtxn_coord_gid(c);
	x->id = dtxn_txn_id(t);
	x->rc = dtxn_txn_execute(t);
	if (x->rc == DTXN_OK) {
		((struct big_val *)dtxn_item_value(it))->a[0] = 777;
		x->rc = dtxn_txn_commit(t);
	}
}

static void
test_undo_log(void **state)
{
	const struct dtxn_table *t = dtxn_catalog_table(g_cat, T_BIG);
	struct log_ctx x;
	unsigned r;

	(void)state;
	memset(&x, 0, sizeof(x));
	run_one(co_log, &x);
	assert_int_equal(x.rc, DTXN_OK);
	assert_int_equal(mn_slot(T_BIG, 10, 0)->value[0], 777);
	for (r = 0; r < t->n_replicas; r++) {
		dtxn_raddr_t la = dtxn_store_log_raddr(g_cat, x.gid, t->mn[r]);
		const uint64_t *rec = (const uint64_t *)((char *)dtxn_fabric_mn_base(
			g_f, DTXN_RADDR_MN(la)) + DTXN_RADDR_OFF(la));
		const struct slot_view *old;
		char *torn;

		/* header {txn id, n entries | bytes, crc | 0}, entry {table, slot size, key, raddr} */
		assert_int_equal(rec[0], x.id);
		assert_int_equal(rec[1] & 0xffffffff, 1);
		assert_true(dtxn_txn_log_intact((const struct dtxn_log_hdr *)rec));
		assert_int_equal(rec[3] & 0xffffffff, T_BIG);
		assert_int_equal(rec[3] >> 32, t->slot_size);
		assert_int_equal(rec[4], 10);
		assert_int_not_equal(rec[5], 0);
		old = (const struct slot_view *)&rec[6];
		/* a record cut short by its writer's death fails its crc */
		torn = malloc(rec[1] >> 32);
		assert_non_null(torn);
		memcpy(torn, rec, rec[1] >> 32);
		torn[(rec[1] >> 32) - 1] ^= 1;
		assert_false(dtxn_txn_log_intact((const struct dtxn_log_hdr *)(void *)torn));
		free(torn);
		assert_int_equal(old->hdr.key, 10);
		assert_int_equal(old->value[0], 10); /* the loaded value, before the txn */
	}
}

struct stale_ctx {
	uint64_t id;
	int rc;
	uint64_t lock50, lock51;
	dtxn_raddr_t ra51;
	bool was_cached;
};

static void
co_stale(struct dtxn_coord *c, void *arg)
{
	struct stale_ctx *x = arg;
	const struct dtxn_table *tab = dtxn_catalog_table(g_cat, T_KV);
	struct dtxn_worker *w = c->worker;
	struct dtxn_txn *t;
	struct dtxn_item *it;
	dtxn_raddr_t ra51;

	/* learn 51's address, then point 50's cache entry at it */
	t = dtxn_txn_begin(c, DTXN_TXN_RO);
	it = dtxn_txn_add_ro(t, T_KV, 51);
	(void)dtxn_txn_commit(t);
	ra51 = dtxn_addr_cache_lookup(w->addr_cache, tab->def.id, 51);
	x->ra51 = ra51;
	dtxn_addr_cache_insert(w->addr_cache, tab->def.id, 50, ra51);

	t = dtxn_txn_begin(c, DTXN_TXN_RW);
	x->id = dtxn_txn_id(t);
	it = dtxn_txn_add_rw(t, T_KV, 50);
	x->rc = dtxn_txn_execute(t);
	x->was_cached = (it->flags & DTXN_ITEM_F_CACHED) != 0;
	dtxn_co_yield_lc(dtxn_coord_co(c));
	x->lock50 = mn_slot(T_KV, 50, 0)->lock;
	x->lock51 = mn_slot(T_KV, 51, 0)->lock;
	if (x->rc == DTXN_OK) {
		*(uint64_t *)dtxn_item_value(it) += 3;
		x->rc = dtxn_txn_commit(t);
	}
}

static void
test_stale_cache_locks(void **state)
{
	struct stale_ctx x;

	(void)state;
	memset(&x, 0, sizeof(x));
	run_one(co_stale, &x);
	assert_int_not_equal(x.ra51, 0);
	assert_false(x.was_cached);              /* went through the bucket */
	assert_int_equal(x.lock50, x.id);        /* FORD's bug 2: it is locked */
	assert_int_equal(x.lock51, 0);           /* the wrong slot was released */
	assert_int_equal(x.rc, DTXN_OK);
	assert_int_equal(mn_slot(T_KV, 50, 0)->value[0], kv_init(50) + 3);
	assert_int_equal(mn_slot(T_KV, 51, 0)->value[0], kv_init(51));
	assert_int_equal(mn_slot(T_KV, 50, 1)->value[0], kv_init(50) + 3);
}

/* Two lcores, two coordinators each, incrementing 4 shared counters. */
#define INC_TXNS 400
#define INC_KEY0 60

struct inc_ctx {
	uint64_t commits;
	uint64_t aborts;
	uint64_t seed;
};

static void
co_inc(struct dtxn_coord *c, void *arg)
{
	struct inc_ctx *x = arg;
	unsigned done = 0;

	while (done < INC_TXNS) {
		struct dtxn_txn *t;
		struct dtxn_item *a, *r;
		uint64_t k, rk;
		int rc;

		x->seed = x->seed * 6364136223846793005ULL + 1442695040888963407ULL;
		k = INC_KEY0 + ((x->seed >> 33) % 4);
		rk = INC_KEY0 + ((x->seed >> 40) % 4);
		t = dtxn_txn_begin(c, DTXN_TXN_RW);
		a = dtxn_txn_add_rw(t, T_KV, k);
		r = rk != k ? dtxn_txn_add_ro(t, T_KV, rk) : NULL;
		rc = dtxn_txn_execute(t);
		if (rc == DTXN_OK) {
			*(uint64_t *)dtxn_item_value(a) += 1;
			(void)r;
			rc = dtxn_txn_commit(t);
		}
		if (rc == DTXN_OK) {
			x->commits++;
			done++;
		} else {
			x->aborts++;
		}
		dtxn_co_yield_lc(dtxn_coord_co(c));
	}
}

struct lcore_arg {
	struct inc_ctx ctx[2];
	unsigned gid0;
};

static int
lcore_worker(void *arg)
{
	struct lcore_arg *la = arg;
	struct ut_coord_spec s[2] = { { co_inc, &la->ctx[0] }, { co_inc, &la->ctx[1] } };

	return ut_run_coords(g_db, s, 2, N_MN + 1, la->gid0, &g_worker_seq);
}

static void
test_two_lcores(void **state)
{
	struct lcore_arg remote = { .ctx = { { .seed = 1 }, { .seed = 2 } }, .gid0 = 4 };
	struct lcore_arg local = { .ctx = { { .seed = 3 }, { .seed = 4 } }, .gid0 = 0 };
	uint64_t before = 0, after = 0, commits = 0, k;
	unsigned lc, i;

	(void)state;
	lc = rte_get_next_lcore(-1, 1, 0);
	assert_true(lc < RTE_MAX_LCORE);
	for (k = 0; k < 4; k++)
		before += mn_slot(T_KV, INC_KEY0 + k, 0)->value[0];
	assert_int_equal(rte_eal_remote_launch(lcore_worker, &remote, lc), 0);
	assert_int_equal(lcore_worker(&local), 0);
	assert_int_equal(rte_eal_wait_lcore(lc), 0);
	for (i = 0; i < 2; i++)
		commits += remote.ctx[i].commits + local.ctx[i].commits;
	print_message("two lcores: %" PRIu64 " commits, %" PRIu64 " aborts\n", commits,
		      remote.ctx[0].aborts + remote.ctx[1].aborts + local.ctx[0].aborts +
			      local.ctx[1].aborts);
	assert_int_equal(commits, 4 * INC_TXNS);
	for (k = 0; k < 4; k++) {
		uint16_t r;

		after += mn_slot(T_KV, INC_KEY0 + k, 0)->value[0];
		assert_int_equal(mn_slot(T_KV, INC_KEY0 + k, 0)->lock, 0);
		for (r = 1; r < 3; r++)
			assert_int_equal(mn_slot(T_KV, INC_KEY0 + k, r)->value[0],
					 mn_slot(T_KV, INC_KEY0 + k, 0)->value[0]);
	}
	assert_int_equal(after - before, commits);
}

/* ------------------------------------------------------------------ */
/* FORD as published (published=1; doc/guides/ford.md)                */
/* ------------------------------------------------------------------ */

static int
pub_setup(void **state)
{
	(void)state;
	return cluster_setup(PUB_MN, "published=1", "utfordp");
}

/* A db (no fabric) with options @p opts and both tables; NULL if refused. */
static struct dtxn_db *
geometry_db(const char *opts)
{
	struct dtxn_db_conf dc = { .size = sizeof(dc), .protocol = "ford", .n_mn = 3,
				   .n_replicas = 3, .n_coords = 4, .cc_options = opts };
	struct dtxn_table_def kv = { .id = T_KV, .name = "kv", .value_size = 8,
				     .max_keys = 1000, .slots_per_bucket = 4 };
	struct dtxn_table_def big = { .id = T_BIG, .name = "big", .value_size = 40,
				      .max_keys = 1000 };
	struct dtxn_db *db = dtxn_db_create(&dc);

	assert_non_null(db);
	assert_int_equal(dtxn_db_add_table(db, &kv), 0);
	assert_int_equal(dtxn_db_add_table(db, &big), 0);
	return db;
}

static void
test_pub_geometry(void **state)
{
	const struct dtxn_table *kv, *big;
	struct dtxn_db_conf bad = { .size = sizeof(bad), .protocol = "ford", .n_mn = 3,
				    .n_replicas = 3, .n_coords = 4, .cc_options = "published=2" };
	struct dtxn_db *db;
	char err[160];

	(void)state;
	/* the public code's DataItem (720 B) in HashNodes of 22 slots, every table */
	db = geometry_db("published=1");
	kv = dtxn_catalog_table(dtxn_db_catalog(db), T_KV);
	big = dtxn_catalog_table(dtxn_db_catalog(db), T_BIG);
	assert_int_equal(kv->slot_size, 720);
	assert_int_equal(big->slot_size, 720);
	assert_int_equal(kv->def.slots_per_bucket, 22);
	assert_int_equal(big->def.slots_per_bucket, 22);
	assert_int_equal(kv->bucket_size, DTXN_BUCKET_HDR_SIZE + 22 * 720);
	assert_string_equal(dtxn_db_variant(db), "published");
	dtxn_db_destroy(db);
	/* item_size refines the preset, wherever it is; a value too big for it gets its own size */
	db = geometry_db("item_size=64,published=1");
	kv = dtxn_catalog_table(dtxn_db_catalog(db), T_KV);
	big = dtxn_catalog_table(dtxn_db_catalog(db), T_BIG);
	assert_int_equal(kv->slot_size, 64);
	assert_int_equal(big->slot_size, 32 + 40);
	assert_int_equal(big->def.slots_per_bucket, 22);
	dtxn_db_destroy(db);
	/* the geometry alone, without the protocol: not the published variant */
	db = geometry_db("bucket_slots=22,item_size=97");
	kv = dtxn_catalog_table(dtxn_db_catalog(db), T_KV);
	assert_int_equal(kv->slot_size, 104);
	assert_int_equal(kv->def.slots_per_bucket, 22);
	assert_null(dtxn_db_variant(db));
	dtxn_db_destroy(db);
	/* the default: value-sized slots, the benchmark's buckets */
	db = geometry_db(NULL);
	kv = dtxn_catalog_table(dtxn_db_catalog(db), T_KV);
	assert_int_equal(kv->slot_size, 40);
	assert_int_equal(kv->def.slots_per_bucket, 4);
	assert_null(dtxn_db_variant(db));
	dtxn_db_destroy(db);
	/* bad options: one line naming the problem */
	assert_int_equal(dtxn_cc_check_options("ford", "published=2", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "ford: published=2: expected 0, 1"));
	assert_int_equal(dtxn_cc_check_options("ford", "item_size=8", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "item_size=8: expected"));
	assert_int_equal(dtxn_cc_check_options("ford", "bucket_slots=257", err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(dtxn_cc_check_options("ford", "published", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not key=value"));
	assert_int_equal(dtxn_cc_check_options("ford", "published=1;item_size=96", err,
					       sizeof(err)), 0);
	assert_null(dtxn_db_create(&bad));
	assert_int_equal(rte_errno, EINVAL);
}

/* Ops posted by the coordinator's worker, per MN. */
static void
pub_counters(const struct dtxn_coord *c, struct dtxn_fabric_counters *out)
{
	for (uint16_t mn = 0; mn < PUB_MN; mn++)
		out[mn] = *dtxn_qp_counters(c->worker->qp[mn]);
}

struct pub_verbs_ctx {
	int rc_warm, rc_one, rc_rw, rc_multi;
	uint32_t gid;
	uint64_t id_rw, id_multi;
	/* per MN, ops by opcode and bytes, of each measured txn */
	struct dtxn_fabric_counters one[PUB_MN], rw[PUB_MN], unc[PUB_MN];
	int rc_unc;
};

static void
pub_delta(const struct dtxn_fabric_counters *before, const struct dtxn_fabric_counters *after,
	  struct dtxn_fabric_counters *d)
{
	for (unsigned mn = 0; mn < PUB_MN; mn++)
		for (unsigned op = 0; op < DTXN_WR_OP_MAX; op++) {
			d[mn].ops[op] = after[mn].ops[op] - before[mn].ops[op];
			d[mn].bytes[op] = after[mn].bytes[op] - before[mn].bytes[op];
		}
}

static void
co_pub_verbs(struct dtxn_coord *c, void *arg)
{
	struct pub_verbs_ctx *x = arg;
	struct dtxn_fabric_counters b0[PUB_MN], b1[PUB_MN];
	struct dtxn_txn *t;
	struct dtxn_item *w;

	x->gid = c->gid;
	/* RW big 5, address not cached: found through its bucket, locked in validation */
	pub_counters(c, b0);
	x->rc_unc = ut_txn_add_u64(c, T_BIG, 5, 1, NULL);
	pub_counters(c, b1);
	pub_delta(b0, b1, x->unc);
	/* warm the address cache: kv 1 and big 1, 2, 3 */
	t = dtxn_txn_begin(c, DTXN_TXN_RO);
	dtxn_txn_add_ro(t, T_KV, 1);
	for (uint64_t k = 1; k <= 3; k++)
		dtxn_txn_add_ro(t, T_BIG, k);
	x->rc_warm = dtxn_txn_commit(t);

	/* one-item read-only txn: one READ of the item, no validation */
	pub_counters(c, b0);
	t = dtxn_txn_begin(c, DTXN_TXN_RO);
	dtxn_txn_add_ro(t, T_KV, 1);
	x->rc_one = dtxn_txn_commit(t);
	pub_counters(c, b1);
	pub_delta(b0, b1, x->one);

	/* read kv 1, write big 1, one execution */
	pub_counters(c, b0);
	t = dtxn_txn_begin(c, DTXN_TXN_RW);
	x->id_rw = dtxn_txn_id(t);
	dtxn_txn_add_ro(t, T_KV, 1);
	w = dtxn_txn_add_rw(t, T_BIG, 1);
	x->rc_rw = dtxn_txn_execute(t);
	if (x->rc_rw == DTXN_OK) {
		((struct big_val *)dtxn_item_value(w))->a[0] = 4242;
		x->rc_rw = dtxn_txn_commit(t);
	}
	pub_counters(c, b1);
	pub_delta(b0, b1, x->rw);

	/* two executions: one undo record each, each item logged once */
	t = dtxn_txn_begin(c, DTXN_TXN_RW);
	x->id_multi = dtxn_txn_id(t);
	dtxn_txn_add_rw(t, T_BIG, 2);
	x->rc_multi = dtxn_txn_execute(t);
	dtxn_txn_add_rw(t, T_BIG, 3);
	if (x->rc_multi == DTXN_OK)
		x->rc_multi = dtxn_txn_execute(t);
	if (x->rc_multi == DTXN_OK)
		x->rc_multi = dtxn_txn_commit(t);
}

/* Undo record at @p off of coordinator @p gid's log on MN @p mn. */
static const char *
pub_log_rec(uint32_t gid, uint16_t mn, uint64_t off)
{
	dtxn_raddr_t la = dtxn_store_log_raddr(g_cat, gid, mn);

	return (const char *)dtxn_fabric_mn_base(g_f, DTXN_RADDR_MN(la)) + DTXN_RADDR_OFF(la) +
	       off;
}

/*
 * An undo record's item image: records start with a 12 B {tx id, t id}
 * header (the public code's layout), so the image is not 8-byte aligned;
 * copy its first @p n bytes to an aligned buffer before reading fields.
 */
static const struct slot_view *
log_img(const char *rec, uint64_t *buf, size_t n)
{
	memcpy(buf, rec + 12, n);
	return (const struct slot_view *)buf;
}

static void
test_pub_verbs_and_log(void **state)
{
	const struct dtxn_table *big = dtxn_catalog_table(g_cat, T_BIG);
	const uint32_t item = 720, rec = 12 + 720;
	uint64_t rd = 0, wr = 0, cas = 0, wr_bytes = 0;
	struct pub_verbs_ctx x;
	unsigned mn;

	(void)state;
	memset(&x, 0, sizeof(x));
	run_one(co_pub_verbs, &x);
	assert_int_equal(x.rc_warm, DTXN_OK);
	assert_int_equal(x.rc_one, DTXN_OK);
	assert_int_equal(x.rc_rw, DTXN_OK);
	assert_int_equal(x.rc_multi, DTXN_OK);
	assert_int_equal(x.rc_unc, DTXN_OK);

	/*
	 * RW big 5, not cached: READ its bucket; the undo record on 4 MNs;
	 * validation {CAS, READ 8 B version} on the primary (MN 1); the
	 * commit round and the unlocks as below. No lock round in execution.
	 */
	assert_int_equal(x.unc[1].ops[DTXN_WR_CAS], 1);
	assert_int_equal(x.unc[1].ops[DTXN_WR_READ], 2);
	assert_int_equal(x.unc[1].bytes[DTXN_WR_READ], DTXN_BUCKET_HDR_SIZE + 22 * item + 8);
	for (mn = 0; mn < PUB_MN; mn++) {
		wr += x.unc[mn].ops[DTXN_WR_WRITE];
		if (mn != 1)
			assert_int_equal(x.unc[mn].ops[DTXN_WR_CAS], 0);
	}
	assert_int_equal(wr, 4 + 3 * 2 + 3);
	assert_int_equal(mn_slot(T_BIG, 5, 0)->value[0], 5 + 1);
	assert_int_equal(mn_slot(T_BIG, 5, 0)->lock, 0);
	wr = 0;

	/* 1-item RO: the 720 B item READ from kv's primary (MN 0), nothing else */
	for (mn = 0; mn < PUB_MN; mn++)
		for (unsigned op = 0; op < DTXN_WR_OP_MAX; op++)
			assert_int_equal(x.one[mn].ops[op],
					 mn == 0 && op == DTXN_WR_READ ? 1 : 0);
	assert_int_equal(x.one[0].bytes[DTXN_WR_READ], item);

	/*
	 * RO kv 1 + RW big 1 (big: primary MN 1, backups MN 2, 3):
	 * execute   READ kv 1 (MN 0); {CAS, READ} big 1 (MN 1)
	 * undo log  WRITE 12 + 720 B to each of the 4 MNs (MN 0 holds no replica of big)
	 * validate  READ 8 B, the version of kv 1 (MN 0)
	 * commit    {WRITE 8 B lock, WRITE 720 B item} on MN 1, 2, 3; 1-byte READ on MN 2, 3
	 * unlock    WRITE 8 B on MN 1, 2, 3
	 */
	for (mn = 0; mn < PUB_MN; mn++) {
		rd += x.rw[mn].ops[DTXN_WR_READ];
		wr += x.rw[mn].ops[DTXN_WR_WRITE];
		cas += x.rw[mn].ops[DTXN_WR_CAS];
		wr_bytes += x.rw[mn].bytes[DTXN_WR_WRITE];
	}
	assert_int_equal(rd, 1 + 1 + 1 + 2);
	assert_int_equal(cas, 1);
	assert_int_equal(wr, 4 + 3 * 2 + 3);
	assert_int_equal(wr_bytes, 4 * rec + 3 * (8 + item) + 3 * 8);
	assert_int_equal(x.rw[0].ops[DTXN_WR_WRITE], 1); /* the log only */
	assert_int_equal(x.rw[0].bytes[DTXN_WR_WRITE], rec);
	assert_int_equal(x.rw[0].ops[DTXN_WR_READ], 2);
	assert_int_equal(x.rw[0].bytes[DTXN_WR_READ], item + 8);
	assert_int_equal(x.rw[1].ops[DTXN_WR_READ], 1);  /* no flush on the primary */
	for (mn = 2; mn < PUB_MN; mn++) {
		assert_int_equal(x.rw[mn].ops[DTXN_WR_READ], 1);
		assert_int_equal(x.rw[mn].bytes[DTXN_WR_READ], 1);
	}
	assert_int_equal(mn_slot(T_BIG, 1, 0)->value[0], 4242);
	for (uint16_t r = 0; r < big->n_replicas; r++) {
		assert_int_equal(mn_slot(T_BIG, 1, r)->lock, 0); /* unlocked everywhere */
		assert_int_equal(mn_slot(T_BIG, 1, r)->version, x.id_rw);
		assert_int_equal(mn_slot(T_BIG, 1, r)->value[0], 4242);
	}

	/* the records, on every MN: {tx id, t id, item before the txn} */
	for (mn = 0; mn < PUB_MN; mn++) {
		/* records at 8-aligned offsets: big 5's first, then these */
		const uint64_t step = RTE_ALIGN_CEIL(rec, 8);
		const char *ru = pub_log_rec(x.gid, (uint16_t)mn, 0);
		const char *r0 = pub_log_rec(x.gid, (uint16_t)mn, step);
		const char *r1 = pub_log_rec(x.gid, (uint16_t)mn, 2 * step);
		const char *r2 = pub_log_rec(x.gid, (uint16_t)mn, 3 * step);
		const struct slot_view *img;
		uint64_t buf[16];
		uint64_t id;
		uint32_t tid;

		assert_int_equal(log_img(ru, buf, sizeof(buf))->hdr.key, 5);
		assert_int_equal(log_img(ru, buf, sizeof(buf))->value[0], 5);
		memcpy(&id, r0, 8);
		memcpy(&tid, r0 + 8, 4);
		assert_int_equal(id, x.id_rw);
		assert_int_equal(tid, x.gid);
		img = log_img(r0, buf, sizeof(buf));
		assert_int_equal(img->hdr.key, 1);
		assert_int_equal(img->hdr.table_id, T_BIG);
		assert_int_equal(img->value[0], 1); /* the loaded value */
		/* multi: big 2 in the first execution's record, big 3 alone in the second */
		memcpy(&id, r1, 8);
		assert_int_equal(id, x.id_multi);
		assert_int_equal(log_img(r1, buf, sizeof(buf))->hdr.key, 2);
		memcpy(&id, r2, 8);
		assert_int_equal(id, x.id_multi);
		assert_int_equal(log_img(r2, buf, sizeof(buf))->hdr.key, 3);
	}
}

struct pub_vis_ctx {
	int rc_reader, rc_writer;
	uint64_t seen;
};

static void
co_pub_locker(struct dtxn_coord *c, void *arg)
{
	struct pub_vis_ctx *x = arg;
	struct dtxn_txn *t = dtxn_txn_begin(c, DTXN_TXN_RW);
	struct dtxn_item *w = dtxn_txn_add_rw(t, T_KV, 30);

	x->rc_writer = dtxn_txn_execute(t); /* holds kv 30's lock */
	g_step = 1;
	wait_step(c, 2);
	if (x->rc_writer == DTXN_OK) {
		*(uint64_t *)dtxn_item_value(w) += 1;
		x->rc_writer = dtxn_txn_commit(t);
	}
}

static void
co_pub_reader(struct dtxn_coord *c, void *arg)
{
	struct pub_vis_ctx *x = arg;
	struct dtxn_txn *t;
	struct dtxn_item *r;

	wait_step(c, 1);
	t = dtxn_txn_begin(c, DTXN_TXN_RO);
	r = dtxn_txn_add_ro(t, T_KV, 30);
	dtxn_txn_add_ro(t, T_KV, 31);
	x->rc_reader = dtxn_txn_execute(t);
	if (x->rc_reader == DTXN_OK) {
		x->seen = *(uint64_t *)dtxn_item_value(r);
		x->rc_reader = dtxn_txn_commit(t); /* validated while the lock is held */
	}
	g_step = 2;
}

/*
 * Commit records (lib/txn's dtxn_coord_set_commit_record()): the decisive
 * batch carries the record on its chain to every MN it touches, and the
 * verbs of the transaction stay the same.
 */
struct pub_crec_ctx {
	int rc_warm, rc_off, rc_on;
	int rc_bad_slot, rc_set, rc_unset;
	uint32_t gid;
	uint64_t id_on;
	unsigned fills;
	struct dtxn_fabric_counters off[PUB_MN], on[PUB_MN];
	uint64_t verbs_off[DTXN_WR_OP_MAX], verbs_on[DTXN_WR_OP_MAX];
	uint64_t vbytes_off, vbytes_on;
};

static void
pub_crec_fill(void *arg, const struct dtxn_txn *t, void *rec)
{
	struct pub_crec_ctx *x = arg;
	uint64_t *w = rec;

	memset(rec, 0, DTXN_COMMIT_RECORD_BYTES);
	w[0] = dtxn_txn_id(t);
	w[7] = UINT64_C(0xc0ffee);
	x->fills++;
}

/* big 7 += 1: measured by the worker's QPs and the coordinator's verbs */
static int
pub_crec_txn(struct dtxn_coord *c, struct dtxn_fabric_counters *d, uint64_t verbs[DTXN_WR_OP_MAX],
	     uint64_t *vbytes, uint64_t *id)
{
	struct dtxn_fabric_counters b0[PUB_MN], b1[PUB_MN];
	uint64_t v0[DTXN_WR_OP_MAX], v1[DTXN_WR_OP_MAX], vb0, vb1;
	int rc;

	pub_counters(c, b0);
	dtxn_coord_verbs(c, v0, &vb0);
	rc = ut_txn_add_u64(c, T_BIG, 7, 1, id);
	pub_counters(c, b1);
	dtxn_coord_verbs(c, v1, &vb1);
	pub_delta(b0, b1, d);
	for (unsigned op = 0; op < DTXN_WR_OP_MAX; op++)
		verbs[op] = v1[op] - v0[op];
	*vbytes = vb1 - vb0;
	return rc;
}

static void
co_pub_crec(struct dtxn_coord *c, void *arg)
{
	struct pub_crec_ctx *x = arg;

	x->gid = c->gid;
	x->rc_warm = ut_txn_add_u64(c, T_BIG, 7, 1, NULL); /* its address cached */
	x->rc_off = pub_crec_txn(c, x->off, x->verbs_off, &x->vbytes_off, NULL);
	x->rc_bad_slot = dtxn_coord_set_commit_record(c, g_cat->n_logs, pub_crec_fill, x);
	x->rc_set = dtxn_coord_set_commit_record(c, c->gid, pub_crec_fill, x);
	x->rc_on = pub_crec_txn(c, x->on, x->verbs_on, &x->vbytes_on, &x->id_on);
	x->rc_unset = dtxn_coord_set_commit_record(c, c->gid, NULL, NULL);
}

static void
test_pub_commit_record(void **state)
{
	const struct dtxn_table *big = dtxn_catalog_table(g_cat, T_BIG);
	struct pub_crec_ctx x;
	uint64_t touched = 0;

	(void)state;
	assert_int_equal(dtxn_coord_set_commit_record(NULL, 0, pub_crec_fill, NULL), -EINVAL);
	for (uint16_t mn = 0; mn < PUB_MN; mn++)
		for (uint32_t g = 0; g < N_COORDS; g++) {
			dtxn_raddr_t at = dtxn_store_crec_raddr(g_cat, mn, g);

			assert_true(at != 0);
			memset((char *)dtxn_fabric_mn_base(g_f, mn) + DTXN_RADDR_OFF(at), 0,
			       DTXN_STORE_CREC_BYTES);
		}
	memset(&x, 0, sizeof(x));
	run_one(co_pub_crec, &x);
	assert_int_equal(x.rc_warm, DTXN_OK);
	assert_int_equal(x.rc_off, DTXN_OK);
	assert_int_equal(x.rc_on, DTXN_OK);
	assert_int_equal(x.rc_bad_slot, -EINVAL); /* no slot past the catalog's coordinators */
	assert_int_equal(x.rc_set, 0);
	assert_int_equal(x.rc_unset, 0);
	assert_int_equal(x.fills, 1); /* one decisive batch, one fill */

	/* big's replicas (MN 1, 2, 3) hold the record; MN 0, which the
	 * commit round does not touch, has none (the record once went to MN 0
	 * only, on a chain of its own) */
	for (uint16_t r = 0; r < big->n_replicas; r++)
		touched |= UINT64_C(1) << big->mn[r];
	assert_int_equal(touched, 0xe);
	for (uint16_t mn = 0; mn < PUB_MN; mn++) {
		dtxn_raddr_t at = dtxn_store_crec_raddr(g_cat, mn, x.gid);
		const uint64_t *w = (const uint64_t *)(const void *)
			((const char *)dtxn_fabric_mn_base(g_f, mn) + DTXN_RADDR_OFF(at));

		if (touched & (UINT64_C(1) << mn)) {
			assert_int_equal(w[0], x.id_on);
			assert_int_equal(w[7], 0xc0ffee);
		} else {
			for (unsigned k = 0; k < DTXN_STORE_CREC_BYTES / 8; k++)
				assert_int_equal(w[k], 0);
		}
	}

	/* the same verbs with and without the records (DTXN_WR_F_CONTROL):
	 * on the fabric's QPs and in the coordinator's count */
	for (uint16_t mn = 0; mn < PUB_MN; mn++)
		for (unsigned op = 0; op < DTXN_WR_OP_MAX; op++) {
			assert_int_equal(x.on[mn].ops[op], x.off[mn].ops[op]);
			assert_int_equal(x.on[mn].bytes[op], x.off[mn].bytes[op]);
		}
	for (unsigned op = 0; op < DTXN_WR_OP_MAX; op++)
		assert_int_equal(x.verbs_on[op], x.verbs_off[op]);
	assert_int_equal(x.vbytes_on, x.vbytes_off);
	assert_true(x.off[1].ops[DTXN_WR_WRITE] > 0);
}


static void
test_pub_visible_reads_and_skew(void **state)
{
	struct pub_vis_ctx v;
	struct skew_ctx x = { .x = 40, .y = 41 };

	(void)state;
	/* a locked record that is not INVISIBLE is read, and validates */
	memset(&v, 0, sizeof(v));
	run_two(co_pub_locker, &v, co_pub_reader, &v);
	assert_int_equal(v.rc_reader, DTXN_OK);
	assert_int_equal(v.seen, kv_init(30));
	assert_int_equal(v.rc_writer, DTXN_OK);
	assert_int_equal(mn_slot(T_KV, 30, 0)->value[0], kv_init(30) + 1);

	/* the public code's write skew (ford.md §6 item 3) is kept: both commit */
	run_two(co_skew1, &x, co_skew2, &x);
	assert_int_equal(x.rc1, DTXN_OK);
	assert_int_equal(x.rc2, DTXN_OK);
	assert_int_equal(mn_slot(T_KV, 41, 0)->value[0], kv_init(40) + 1);
	assert_int_equal(mn_slot(T_KV, 40, 0)->value[0], kv_init(41) + 2);
}

/*
 * A lost MN (doc/guides/mlx5.md, "A lost peer"): every QP of the worker
 * to an MN in the error state (dtxn_qp_error_inject(), what the NIC does
 * when the peer is gone): the txn's WRs fail, it aborts with
 * DTXN_ABORT_FABRIC, nothing reached MN memory, and the worker names the
 * lost nodes for dtxn-app's stop.
 */
struct lost_ctx {
	int rc;
	uint64_t lost_before, lost_after;
};

static void
co_lost_mn(struct dtxn_coord *c, void *arg)
{
	struct lost_ctx *x = arg;
	struct dtxn_worker *w = c->worker;

	x->lost_before = dtxn_worker_lost_nodes(w);
	for (uint16_t m = 0; m < g_n_mn; m++)
		assert_int_equal(dtxn_qp_error_inject(w->qp[m]), 0);
	x->rc = txn_add_counter(c, 11, 1, NULL);
	x->lost_after = dtxn_worker_lost_nodes(w);
}

static void
test_lost_mn_aborts(void **state)
{
	struct lost_ctx x = { .rc = -1 };
	uint64_t v;

	(void)state;
	run_one(co_lost_mn, &x);
	assert_int_equal(x.rc, DTXN_ABORT(DTXN_ABORT_FABRIC));
	assert_int_equal(x.lost_before, 0);
	assert_int_not_equal(x.lost_after, 0);
	assert_int_equal(x.lost_after & ~((UINT64_C(1) << g_n_mn) - 1), 0); /* MNs only */
	for (uint16_t r = 0; r < 3; r++) {
		struct slot_view *s = mn_slot(T_KV, 11, r);

		assert_int_equal(s->value[0], kv_init(11));
		assert_int_equal(s->lock, 0);
	}
	assert_int_equal(dtxn_db_get(g_db, T_KV, 11, &v), 0);
	assert_int_equal(v, kv_init(11));
	assert_int_equal(dtxn_worker_lost_nodes(NULL), 0);
}

/*
 * Selective signaling (batch.c, dtxn_fabric_selective_signaling(): shm
 * has it): a chain of WRs each asked to be signaled is signaled by its
 * last one alone; a WR before it that fails still fails the wait, and
 * nothing is left pending for the next batch.
 */
struct sel_ctx {
	int rc_bad, rc_good;
	unsigned sig_bad, sig_good, sig_unsig;
	uint64_t buf[3];
};

static void
co_selective(struct dtxn_coord *c, void *arg)
{
	struct sel_ctx *x = arg;
	const struct dtxn_table *t = dtxn_catalog_table(g_cat, T_KV);
	dtxn_raddr_t ok = dtxn_store_bucket_raddr(t, 0, 0);
	struct dtxn_batch b;

	/* the middle READ is outside MN 0's region: REM_ACCESS_ERR */
	dtxn_batch_init(&b, c);
	dtxn_batch_read(&b, ok, &x->buf[0], 8, true);
	dtxn_batch_read(&b, DTXN_RADDR(DTXN_RADDR_MN(ok), UINT64_C(1) << 40), &x->buf[1], 8, true);
	dtxn_batch_read(&b, ok, &x->buf[2], 8, true);
	x->rc_bad = dtxn_batch_run(&b);
	x->sig_bad = b.n_signaled;
	dtxn_batch_done(&b);
	/* the same chain, every WR in range: no error left over */
	dtxn_batch_init(&b, c);
	for (unsigned i = 0; i < 3; i++)
		dtxn_batch_read(&b, ok, &x->buf[i], 8, true);
	x->rc_good = dtxn_batch_run(&b);
	x->sig_good = b.n_signaled;
	dtxn_batch_done(&b);
	/* a chain that ends unsignaled: its signaled WRs keep their signal */
	dtxn_batch_init(&b, c);
	dtxn_batch_read(&b, ok, &x->buf[0], 8, true);
	dtxn_batch_read(&b, ok, &x->buf[1], 8, true);
	dtxn_batch_read(&b, ok, &x->buf[2], 8, false);
	if (dtxn_batch_run(&b) != 0)
		x->rc_good = -1;
	x->sig_unsig = b.n_signaled;
	dtxn_batch_done(&b);
}

static void
test_selective_signaling(void **state)
{
	struct sel_ctx x = { .rc_bad = 1, .rc_good = 1 };

	(void)state;
	assert_true(dtxn_fabric_selective_signaling(g_f));
	run_one(co_selective, &x);
	assert_int_equal(x.rc_bad, -EIO);
	assert_int_equal(x.sig_bad, 1);
	assert_int_equal(x.rc_good, 0);
	assert_int_equal(x.sig_good, 1);
	assert_int_equal(x.sig_unsig, 2);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_attach_checks),
		cmocka_unit_test(test_read_your_load),
		cmocka_unit_test(test_rw_commit_replicated),
		cmocka_unit_test(test_lock_conflict),
		cmocka_unit_test(test_write_skew),
		cmocka_unit_test(test_validation_version_change),
		cmocka_unit_test(test_insert),
		cmocka_unit_test(test_delete),
		cmocka_unit_test(test_tombstone),
		cmocka_unit_test(test_absent_read_invalidated),
		cmocka_unit_test(test_undo_log),
		cmocka_unit_test(test_stale_cache_locks),
		cmocka_unit_test(test_lost_mn_aborts),
		cmocka_unit_test(test_selective_signaling),
		cmocka_unit_test(test_two_lcores),
	};
	int rc;

	const struct CMUnitTest pub_tests[] = {
		cmocka_unit_test(test_pub_geometry),
		cmocka_unit_test(test_pub_verbs_and_log),
		cmocka_unit_test(test_pub_commit_record),
		cmocka_unit_test(test_pub_visible_reads_and_skew),
	};

	if (dtxn_unit_eal_init("ut_ford") != 0)
		return 1;
	rc = cmocka_run_group_tests(tests, group_setup, group_teardown);
	if (rc == 0)
		rc = cmocka_run_group_tests_name("ford_published", pub_tests, pub_setup,
						 group_teardown);
	dtxn_unit_eal_fini();
	return rc;
}
