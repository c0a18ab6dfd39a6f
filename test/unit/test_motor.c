/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Motor (drivers/cc/motor) on the shm fabric, model none: 3 MNs, 3
 * replicas. The CVT layout and load, version choice, garbage collection
 * with attribute-bar wrap and the rebuilding of old versions (pure
 * functions on local CVT images), then the protocol: replicated commits,
 * snapshot reads of old versions, version_gone after GC, SR early abort
 * and validation (lock != 0), write skew (SR forbids, SI allows), the
 * snapshot recheck of a read that saw a lock, insert/delete/re-insert,
 * lock release on abort, the operation log, verbs per transaction, and
 * two lcores. Interleavings are forced with a shared step counter;
 * coordinators run as coroutines on the calling lcore.
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

#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_memory.h>

#include "motor_private.h"
#include "unit_eal.h"
#include "ut_txn.h"

#define N_MN 3
#define T_KV 0    /* 8 B counters, VNum 3 (SmallBank's) */
#define T_COL 1   /* 3 columns of 8 B, VNum 4 */
#define T_TWO 2   /* 8 B, VNum 2 (TATP's) */
#define KV_KEYS 200
#define COL_KEYS 32
#define TWO_KEYS 32
#define N_COORDS 8

struct env {
	struct dtxn_fabric *f;
	struct dtxn_db *db;
	const struct dtxn_catalog *cat;
};

static struct env g_sr, g_si;
static unsigned g_worker_seq;
static volatile int g_step;

struct col_val {
	uint64_t c[3];
};

/* ------------------------------------------------------------------ */
/* Helpers                                                            */
/* ------------------------------------------------------------------ */

static const struct dtxn_table *
tab(const struct env *e, uint32_t tid)
{
	return dtxn_catalog_table(e->cat, tid);
}

/* The CVT of @p key on replica @p r in MN memory, or NULL. */
static struct motor_cvt *
mn_cvt(const struct env *e, uint32_t tid, uint64_t key, uint16_t r)
{
	return ut_mn_slot(e->f, e->cat, tid, key, r);
}

/* The Vpkg of @p key on replica @p r in MN memory. */
static uint8_t *
mn_vpkg(const struct env *e, uint32_t tid, uint64_t key, uint16_t r)
{
	struct motor_cvt *c = mn_cvt(e, tid, key, r);

	return c == NULL ? NULL : dtxn_store_aux_ptr(e->f, tab(e, tid), r, c);
}

/* The attribute bar of @p key on replica @p r in MN memory (the delta
 * area numbered as its Vpkg's), or NULL while not in use. */
static uint8_t *
mn_bar(const struct env *e, uint32_t tid, uint64_t key, uint16_t r)
{
	const struct dtxn_table *t = tab(e, tid);
	struct motor_cvt *c = mn_cvt(e, tid, key, r);
	uint8_t *base = dtxn_fabric_mn_base(e->f, t->mn[r]);

	if (c == NULL || !(c->hdr.flags & DTXN_SLOT_DELTA) || base == NULL)
		return NULL;
	return base + t->delta_off[r] + DTXN_AUX_HEAP_HDR + (uint64_t)(c->hdr.aux - 1) * t->delta_size;
}

/* The bump word of table @p tid's delta heap on its primary. */
static uint64_t *
mn_delta_bump(const struct env *e, uint32_t tid)
{
	const struct dtxn_table *t = tab(e, tid);

	return (uint64_t *)(void *)((uint8_t *)dtxn_fabric_mn_base(e->f, t->mn[0]) +
				    t->delta_off[0]);
}

static uint64_t
mn_u64(const struct env *e, uint32_t tid, uint64_t key)
{
	uint64_t v;

	memcpy(&v, mn_vpkg(e, tid, key, 0) + MOTOR_VPKG_VALUE_OFF, 8);
	return v;
}

static void
wait_step(struct dtxn_coord *c, int n)
{
	ut_wait_step(c, &g_step, n);
}

static void
run_coords(struct env *e, const struct ut_coord_spec *specs, unsigned n, unsigned gid0)
{
	g_step = 0;
	assert_int_equal(ut_run_coords(e->db, specs, n, N_MN, gid0, &g_worker_seq), 0);
}

static void
run_one(struct env *e, dtxn_coord_fn fn, void *arg)
{
	struct ut_coord_spec s = { fn, arg };

	run_coords(e, &s, 1, 0);
}

static void
run_two(struct env *e, dtxn_coord_fn f1, void *a1, dtxn_coord_fn f2, void *a2)
{
	struct ut_coord_spec s[2] = { { f1, a1 }, { f2, a2 } };

	run_coords(e, s, 2, 0);
}

/* One RW txn adding @p delta to a T_KV or T_TWO counter. */
static int
txn_add(struct dtxn_coord *c, uint32_t tid, uint64_t key, uint64_t delta, uint64_t *id)
{
	return ut_txn_add_u64(c, tid, key, delta, id);
}

/* ------------------------------------------------------------------ */
/* Setup                                                              */
/* ------------------------------------------------------------------ */

static int
env_setup(struct env *e, enum dtxn_isolation iso, const char *name, const char *opts)
{
	struct dtxn_db_conf dc = {
		.size = sizeof(dc), .protocol = "motor", .isolation = iso,
		.n_mn = N_MN, .n_replicas = 3, .n_coords = N_COORDS,
		.log_bytes = 4096, .addr_cache_entries = 4096, .cc_options = opts,
	};
	struct dtxn_table_def kv = { .id = T_KV, .name = "kv", .value_size = 8,
				     .max_keys = 1024, .slots_per_bucket = 4, .n_versions = 3 };
	struct dtxn_table_def col = { .id = T_COL, .name = "col", .value_size = 24,
				      .max_keys = 64, .n_versions = 4, .n_columns = 3,
				      .column_size = { 8, 8, 8 } };
	struct dtxn_table_def two = { .id = T_TWO, .name = "two", .value_size = 8,
				      .max_keys = 64, .n_versions = 2 };
	struct dtxn_fabric_conf fc = { .size = sizeof(fc), .driver = "shm", .n_mn = N_MN,
				       .n_cn = 2, .socket_id = SOCKET_ID_ANY, .name = name };
	uint64_t k;

	if (ut_db_open(&dc, (const struct dtxn_table_def *[]){ &kv, &col, &two }, 3, &fc, &e->db,
		       &e->f) != 0)
		return -1;
	e->cat = dtxn_db_catalog(e->db);
	for (k = 1; k <= KV_KEYS; k++) {
		uint64_t v = k * 10;

		if (dtxn_db_load(e->db, T_KV, k, &v) != 0)
			return -1;
	}
	for (k = 1; k <= COL_KEYS; k++) {
		struct col_val v = { { k, k + 100, k + 200 } };

		if (dtxn_db_load(e->db, T_COL, k, &v) != 0)
			return -1;
	}
	for (k = 1; k <= TWO_KEYS; k++)
		if (dtxn_db_load(e->db, T_TWO, k, &k) != 0)
			return -1;
	return 0;
}

static int
group_setup(void **state)
{
	(void)state;
	/* SR with the defaults (tso=cn, oplog=cn); SI with the MN variants */
	if (env_setup(&g_sr, DTXN_ISO_SR, "utmotsr", NULL) != 0 ||
	    env_setup(&g_si, DTXN_ISO_SI, "utmotsi", "tso=mn,oplog=mn") != 0)
		return -1;
	return 0;
}

static int
group_teardown(void **state)
{
	(void)state;
	dtxn_db_destroy(g_sr.db);
	dtxn_fabric_close(g_sr.f);
	dtxn_db_destroy(g_si.db);
	dtxn_fabric_close(g_si.f);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Layout and load                                                    */
/* ------------------------------------------------------------------ */

static void
test_layout(void **state)
{
	struct dtxn_db_conf dc = { .size = sizeof(dc), .protocol = "motor",
				   .n_mn = N_MN, .n_replicas = 3, .n_coords = 1 };
	struct dtxn_table_def d = { .id = 0, .name = "x", .value_size = 40, .max_keys = 100 };
	const struct dtxn_table *t;
	struct dtxn_db *db;

	(void)state;
	/* VNum 3, 8 B: CVT 24 + 3 x 24; aux: the packed Vpkg SA + 8 + EA in
	 * 16 B; delta area: bar 2 x 8, one per aux area; a local image:
	 * value 8-aligned */
	t = tab(&g_sr, T_KV);
	assert_int_equal(t->slot_size, MOTOR_CELLS_OFF + 3 * MOTOR_CELL_SIZE);
	assert_int_equal(motor_vnum(t), 3);
	assert_int_equal(motor_vpkg_size(t), 10);
	assert_int_equal(motor_vpkg_local_size(t), 24);
	assert_int_equal((MOTOR_VPKG_LOCAL_OFF + MOTOR_VPKG_VALUE_OFF) % 8, 0);
	assert_int_equal(motor_local_extra(t), 16 + 8);
	assert_int_equal(motor_abs(t), 16);
	assert_int_equal(t->aux_size, 16);
	assert_int_equal(t->delta_size, 16);
	assert_true(t->aux_off[0] >= t->off[0] + t->n_buckets * t->bucket_size);
	assert_true(t->delta_off[0] >= t->aux_off[0] + DTXN_AUX_HEAP_HDR + t->aux_areas * t->aux_size);
	assert_int_equal(MOTOR_CELLS_OFF, 24);
	assert_true(t->def.flags & DTXN_TABLE_F_DELTA_BY_SLOT);
	assert_int_equal(t->delta_areas, t->aux_areas);
	t = tab(&g_sr, T_COL);
	assert_int_equal(motor_vnum(t), 4);
	assert_int_equal(motor_abs(t), 72);
	assert_int_equal(dtxn_table_n_cells(&t->def), 3);
	assert_int_equal(motor_seg_len(t, 0x5), 16);
	t = tab(&g_sr, T_TWO);
	assert_int_equal(motor_vnum(t), 2);
	assert_int_equal(dtxn_table_n_cells(&t->def), 1);

	db = dtxn_db_create(&dc);
	assert_non_null(db);
	/* default VNum 4 (KVS, TPC-C); 40 B: the bar holds 3 full values */
	assert_int_equal(dtxn_db_add_table(db, &d), 0);
	t = dtxn_catalog_table(dtxn_db_catalog(db), 0);
	assert_int_equal(t->slot_size, MOTOR_CELLS_OFF + 4 * MOTOR_CELL_SIZE);
	assert_int_equal(t->aux_size, 48); /* SA + 40 + EA, rounded up to 8 */
	assert_int_equal(t->delta_size, 3 * 40);
	/* one version is not multi-versioning; too many; bad columns */
	d.id = 1;
	strcpy(d.name, "y");
	d.n_versions = 1;
	assert_int_equal(dtxn_db_add_table(db, &d), -EINVAL);
	d.n_versions = DTXN_TABLE_MAX_VERSIONS + 1;
	assert_int_equal(dtxn_db_add_table(db, &d), -EINVAL);
	d.n_versions = 2;
	d.n_columns = 2;
	d.column_size[0] = 8;
	d.column_size[1] = 8;
	assert_int_equal(dtxn_db_add_table(db, &d), -EINVAL); /* 16 != 40 */
	d.column_size[1] = 32;
	assert_int_equal(dtxn_db_add_table(db, &d), 0);
	dtxn_db_destroy(db);
}

/* The 24 B Vcell: anchors in its first and last byte, a 56-bit writer,
 * flags beside Valid; a bar larger than a 16-bit StartOffset reaches is cut. */
static void
test_cell_layout(void **state)
{
	struct dtxn_db_conf dc = { .size = sizeof(dc), .protocol = "motor",
				   .n_mn = N_MN, .n_replicas = 3, .n_coords = 1 };
	struct dtxn_table_def d = { .id = 0, .name = "big", .value_size = 4096, .max_keys = 10,
				    .n_versions = 64 };
	const uint64_t id = (UINT64_C(0xfffe) << 40) | 12345;
	struct motor_cell c = { .sa = 0x11, .valid = 1, .flags = MOTOR_CELL_TOMB,
				.start_off = 0xfff8, .writer = id, .ea = 0xee };
	const uint8_t *b = (const uint8_t *)&c;
	const struct dtxn_table *t;
	struct dtxn_db *db;

	(void)state;
	assert_int_equal(sizeof(c), 24);
	assert_int_equal(b[0], 0x11);
	assert_int_equal(b[23], 0xee);
	assert_int_equal(c.writer, id);
	assert_int_equal(c.valid, 1);
	assert_int_equal(c.flags, MOTOR_CELL_TOMB);
	assert_int_equal(c.start_off, 0xfff8);
	c.valid = 0;
	assert_int_equal(c.flags, MOTOR_CELL_TOMB);
	assert_int_equal(c.ea, 0xee);

	/* no shapes: (VNum - 1) x 4096 = 258,048 B, cut to MOTOR_ABS_MAX */
	db = dtxn_db_create(&dc);
	assert_non_null(db);
	assert_int_equal(dtxn_db_add_table(db, &d), 0);
	t = dtxn_catalog_table(dtxn_db_catalog(db), 0);
	assert_int_equal(motor_abs(t), MOTOR_ABS_MAX);
	dtxn_db_destroy(db);
}

/* Loading into nearly full buckets moves records; their aux areas go with them. */
static void
test_loader_moves_aux(void **state)
{
	struct dtxn_db_conf dc = { .size = sizeof(dc), .protocol = "motor", .n_mn = 1,
				   .n_replicas = 1, .n_coords = 1, .log_bytes = 64 };
	struct dtxn_table_def d = { .id = 0, .name = "tight", .value_size = 16, .max_keys = 64,
				    .slots_per_bucket = 2, .n_buckets = 40, .n_versions = 2 };
	struct dtxn_fabric_conf fc = { .size = sizeof(fc), .driver = "shm", .n_mn = 1,
				       .n_cn = 1, .socket_id = SOCKET_ID_ANY, .name = "utmotld" };
	const struct dtxn_table *t;
	struct dtxn_fabric *f;
	struct dtxn_db *db;
	uint64_t k, v[2], away = 0;
	unsigned loaded = 0;

	(void)state;
	ut_db_up(&dc, &d, &fc, &db, &f);
	t = dtxn_catalog_table(dtxn_db_catalog(db), 0);
	for (k = 1; k <= 76; k++) {
		v[0] = k;
		v[1] = ~k;
		if (dtxn_db_load(db, 0, k, v) == 0)
			loaded++;
	}
	assert_true(loaded >= 70); /* 95% of the slots */
	for (k = 1; k <= 76; k++) {
		uint64_t home = dtxn_store_bucket_of(t, k), b;
		char *base = dtxn_fabric_mn_base(f, 0);

		if (dtxn_db_get(db, 0, k, v) != 0)
			continue;
		assert_int_equal(v[0], k);
		assert_int_equal(v[1], ~k);
		b = dtxn_store_bucket_raddr(t, 0, home);
		away += dtxn_store_bucket_find(t, base + DTXN_RADDR_OFF(b), k) < 0;
	}
	assert_true(away > 0); /* some records live past their home bucket */
	dtxn_db_destroy(db);
	dtxn_fabric_close(f);
}

static void
test_load_format(void **state)
{
	const struct dtxn_table *t = tab(&g_sr, T_COL);
	struct motor_cvt *c = mn_cvt(&g_sr, T_COL, 5, 0);
	uint8_t *vp = mn_vpkg(&g_sr, T_COL, 5, 0);
	struct col_val v, want = { { 5, 105, 205 } };
	uint16_t r;
	unsigned i;

	(void)state;
	assert_non_null(c);
	assert_int_equal(c->lock, 0);
	assert_int_equal(c->cells[0].valid, 1);
	assert_int_equal(c->cells[0].version, 0);
	assert_int_equal(c->cells[0].writer, 0);
	for (i = 1; i < motor_vnum(t); i++)
		assert_int_equal(c->cells[i].valid, 0);
	assert_int_equal(motor_cvt_anchor(t, c), 0);
	assert_int_equal(vp[0], 0);
	assert_int_equal(motor_vpkg_ea(t, vp), 0);
	memcpy(&v, vp + MOTOR_VPKG_VALUE_OFF, sizeof(v));
	assert_memory_equal(&v, &want, sizeof(v));
	for (r = 1; r < 3; r++) {
		assert_memory_equal(mn_cvt(&g_sr, T_COL, 5, r), c, t->slot_size);
		assert_memory_equal(mn_vpkg(&g_sr, T_COL, 5, r), vp, t->aux_size);
	}
	/* MN-side reads see the newest value */
	assert_int_equal(dtxn_db_get(g_sr.db, T_COL, 5, &v), 0);
	assert_memory_equal(&v, &want, sizeof(v));
}

/* ------------------------------------------------------------------ */
/* Version choice, GC, rebuild (local images)                         */
/* ------------------------------------------------------------------ */

static void
test_pick(void **state)
{
	const struct dtxn_table *t = tab(&g_sr, T_KV);
	uint8_t buf[MOTOR_CELLS_OFF + 3 * MOTOR_CELL_SIZE];
	struct motor_cvt *c = (struct motor_cvt *)buf;
	enum motor_pick res;
	int idx;

	(void)state;
	memset(buf, 0, sizeof(buf));
	/* unsorted on purpose: GC leaves cells in any order */
	c->cells[0] = (struct motor_cell){ .valid = 1, .version = 9, .writer = 90 };
	c->cells[1] = (struct motor_cell){ .valid = 1, .version = 14, .writer = 140,
					   .flags = MOTOR_CELL_TOMB };
	c->cells[2] = (struct motor_cell){ .valid = 1, .version = 5, .writer = 50 };
	assert_int_equal(motor_cvt_pick(t, c, 7, &idx), MOTOR_PICK_FOUND);
	assert_int_equal(idx, 2);
	assert_int_equal(motor_cvt_pick(t, c, 10, &idx), MOTOR_PICK_FOUND);
	assert_int_equal(idx, 0);
	assert_int_equal(motor_cvt_pick(t, c, 15, &idx), MOTOR_PICK_FOUND);
	assert_int_equal(idx, 1); /* the tombstone: absent at 15 */
	assert_int_equal(motor_cvt_newest(t, c), 1);
	assert_true(motor_cvt_has_newer(t, c, 9));
	assert_false(motor_cvt_has_newer(t, c, 14));
	/* older than every version kept: reclaimed, unless the oldest is the key's first */
	assert_int_equal(motor_cvt_pick(t, c, 3, &idx), MOTOR_PICK_GONE);
	c->cells[2].flags = MOTOR_CELL_INSERT;
	assert_int_equal(motor_cvt_pick(t, c, 3, &idx), MOTOR_PICK_ABSENT);
	assert_int_equal(motor_cvt_seen(t, c, 3, &res), MOTOR_V_NONE);
	assert_int_equal(motor_cvt_seen(t, c, 12, &res), 9);
	/* invalid cells are never chosen */
	c->cells[0].valid = 0;
	assert_int_equal(motor_cvt_pick(t, c, 10, &idx), MOTOR_PICK_FOUND);
	assert_int_equal(idx, 2);
	/* anchors: every cell must carry the same pair */
	assert_int_equal(motor_cvt_anchor(t, c), 0);
	c->cells[1].ea = 7;
	assert_int_equal(motor_cvt_anchor(t, c), -1);
}

static void
test_gc_wrap_rebuild(void **state)
{
	/* T_COL: VNum 4, three 8 B columns, a 72 B bar */
	const struct dtxn_table *t = tab(&g_sr, T_COL);
	static const uint32_t bitmaps[] = { 0x1, 0x7, 0x7, 0x7, 0x2, 0x4, 0x7, 0x1, 0x3, 0x7 };
	uint8_t buf[MOTOR_CELLS_OFF + 4 * MOTOR_CELL_SIZE], bar[72], seg[24];
	struct motor_cvt *c = (struct motor_cvt *)buf;
	struct col_val hist[16], cur = { { 1, 2, 3 } }, out;
	unsigned step, i, cell, dropped_total = 0;
	uint32_t start;

	(void)state;
	memset(buf, 0, sizeof(buf));
	memset(bar, 0xee, sizeof(bar));
	c->cells[0].valid = 1; /* the loaded version 0 */
	hist[0] = cur;
	for (step = 1; step <= RTE_DIM(bitmaps); step++) {
		struct motor_cell nc = { .bitmap = bitmaps[step - 1], .version = step * 10,
					 .writer = step };
		struct col_val next = cur;
		uint32_t len;

		for (i = 0; i < 3; i++)
			if (nc.bitmap & (1u << i))
				next.c[i] = step * 1000 + i;
		len = dtxn_table_cells_pack(&t->def, nc.bitmap, &cur, seg);
		dropped_total += motor_gc_install(t, c->cells, &nc, (uint8_t)step, &cell, &start);
		assert_true(start + len <= motor_abs(t));
		memcpy(bar + start, seg, len);
		cur = next;
		hist[step] = cur;
		assert_int_equal(c->cells[cell].version, step * 10);
		assert_int_equal(motor_cvt_newest(t, c), (int)cell);
		assert_int_equal(motor_cvt_anchor(t, c), step);
		/* every version still valid rebuilds to exactly what it was */
		for (i = 0; i < motor_vnum(t); i++) {
			if (!c->cells[i].valid)
				continue;
			motor_rebuild(t, c, (int)i, DTXN_CELLS_ALL, (const uint8_t *)&cur, bar,
				      (uint8_t *)&out);
			assert_memory_equal(&out, &hist[c->cells[i].version / 10], sizeof(out));
		}
		/* the valid versions are the newest ones, with no gap */
		{
			unsigned valid = 0, oldest_ok = step + 1;

			for (i = 0; i < motor_vnum(t); i++)
				if (c->cells[i].valid) {
					valid++;
					if (c->cells[i].version / 10 < oldest_ok)
						oldest_ok = (unsigned)(c->cells[i].version / 10);
				}
			assert_int_equal(valid, step + 1 - oldest_ok);
		}
	}
	/* a full value after small ones wraps over several segments: some
	 * versions had to go before their cell was needed */
	assert_true(dropped_total > 0);
}

/* ------------------------------------------------------------------ */
/* Protocol                                                           */
/* ------------------------------------------------------------------ */

struct rw_ctx {
	uint64_t id, ts;
	int rc;
};

static void
co_rw_one(struct dtxn_coord *c, void *arg)
{
	struct rw_ctx *x = arg;

	x->rc = txn_add(c, T_KV, 1, 5, &x->id);
	x->ts = c->txn->cc[MOTOR_TS_COMMIT];
}

static void
test_rw_replicated(void **state)
{
	const struct dtxn_table *t = tab(&g_sr, T_KV);
	struct rw_ctx x = { 0 };
	uint16_t r;
	int n;

	(void)state;
	run_one(&g_sr, co_rw_one, &x);
	assert_int_equal(x.rc, DTXN_OK);
	assert_true(x.ts > 0);
	for (r = 0; r < 3; r++) {
		struct motor_cvt *c = mn_cvt(&g_sr, T_KV, 1, r);
		uint8_t *vp = mn_vpkg(&g_sr, T_KV, 1, r);
		uint64_t v, pre;

		assert_int_equal(c->lock, 0);
		n = motor_cvt_newest(t, c);
		assert_true(n >= 0);
		assert_int_equal(c->cells[n].version, x.ts);
		assert_int_equal(c->cells[n].writer, x.id);
		assert_int_equal(c->cells[n].bitmap, 1);
		assert_int_equal(motor_cvt_anchor(t, c), 1);
		assert_int_equal(vp[0], 1);
		assert_int_equal(motor_vpkg_ea(t, vp), 1);
		memcpy(&v, vp + MOTOR_VPKG_VALUE_OFF, 8);
		assert_int_equal(v, 15);
		/* the pre-image of the old version is in the bar, the delta
		 * area of the Vpkg's number, in use on every replica */
		assert_true(c->hdr.flags & DTXN_SLOT_DELTA);
		assert_true(c->hdr.flags & DTXN_SLOT_VALID);
		assert_int_equal(c->hdr.aux, mn_cvt(&g_sr, T_KV, 1, 0)->hdr.aux);
		memcpy(&pre, mn_bar(&g_sr, T_KV, 1, r) + c->cells[n].start_off, 8);
		assert_int_equal(pre, 10);
	}
}

struct bar_ctx {
	uint64_t key;
	int rc[2];
};

/* Two updates of one loaded row: the first puts its bar in use. */
static void
co_bar_first(struct dtxn_coord *c, void *arg)
{
	struct bar_ctx *x = arg;

	x->rc[0] = txn_add(c, T_KV, x->key, 1, NULL);
	x->rc[1] = txn_add(c, T_KV, x->key, 1, NULL);
}

/*
 * The bar is the delta area numbered as the Vpkg's (store.md "Delta
 * heaps", DTXN_TABLE_F_DELTA_BY_SLOT): a loaded row's is not in use; its
 * first update puts it in use on every replica (DTXN_SLOT_DELTA, with no
 * FAA on the heap's bump word: nothing is taken), the second keeps it;
 * the census counts the slots in use.
 */
static void
test_bar_by_slot(void **state)
{
	struct dtxn_table *t = (struct dtxn_table *)tab(&g_sr, T_KV);
	uint64_t bump = *mn_delta_bump(&g_sr, T_KV), before;
	struct bar_ctx x = { .key = KV_KEYS };
	uint64_t v0;

	(void)state;
	assert_true(dtxn_store_heap_census(g_sr.f, (struct dtxn_catalog *)g_sr.cat) > 0);
	before = t->delta_used;
	for (uint16_t r = 0; r < 3; r++) {
		assert_false(mn_cvt(&g_sr, T_KV, x.key, r)->hdr.flags & DTXN_SLOT_DELTA);
		assert_null(mn_bar(&g_sr, T_KV, x.key, r));
	}
	v0 = mn_u64(&g_sr, T_KV, x.key);
	run_one(&g_sr, co_bar_first, &x);
	assert_int_equal(x.rc[0], DTXN_OK);
	assert_int_equal(x.rc[1], DTXN_OK);
	assert_int_equal(mn_u64(&g_sr, T_KV, x.key), v0 + 2);
	for (uint16_t r = 0; r < 3; r++) {
		const struct motor_cvt *c = mn_cvt(&g_sr, T_KV, x.key, r);
		int n = motor_cvt_newest(t, c);
		uint64_t pre;

		assert_int_equal(c->hdr.flags, DTXN_SLOT_VALID | DTXN_SLOT_DELTA);
		assert_int_equal(c->hdr.aux, mn_cvt(&g_sr, T_KV, x.key, 0)->hdr.aux);
		assert_int_equal(c->hdr.table_id, T_KV);
		assert_int_equal(c->hdr.key, x.key);
		assert_true(n >= 0);
		/* the newest version's pre-image: the value before the second update */
		memcpy(&pre, mn_bar(&g_sr, T_KV, x.key, r) + c->cells[n].start_off, 8);
		assert_int_equal(pre, v0 + 1);
	}
	assert_int_equal(*mn_delta_bump(&g_sr, T_KV), bump);
	assert_true(dtxn_store_heap_census(g_sr.f, (struct dtxn_catalog *)g_sr.cat) > 0);
	assert_int_equal(t->delta_used, before + 1);
	assert_int_equal(t->delta_faas, 0);
}

struct snap_ctx {
	uint64_t kv, kv_version;
	struct col_val col;
	bool exists;
	int rc_exec, rc_commit, rc_w;
	uint64_t later;
};

static void
co_snap_reader(struct dtxn_coord *c, void *arg)
{
	struct snap_ctx *x = arg;
	struct dtxn_txn *t = dtxn_txn_begin(c, DTXN_TXN_RO);
	struct dtxn_item *a, *b, *d;

	(void)dtxn_txn_add_ro(t, T_KV, 2);
	x->rc_exec = dtxn_txn_execute(t); /* takes T_start */
	g_step = 1;
	wait_step(c, 2);
	a = dtxn_txn_add_ro(t, T_KV, 3);
	b = dtxn_txn_add_ro(t, T_COL, 7);
	x->rc_exec |= dtxn_txn_execute(t);
	memcpy(&x->kv, dtxn_item_value(a), 8);
	x->kv_version = a->version;
	memcpy(&x->col, dtxn_item_value(b), sizeof(x->col));
	x->exists = dtxn_item_exists(a) && dtxn_item_exists(b);
	x->rc_commit = dtxn_txn_commit(t);
	/* a new txn sees the newest */
	t = dtxn_txn_begin(c, DTXN_TXN_RO);
	d = dtxn_txn_add_ro(t, T_KV, 3);
	if (dtxn_txn_execute(t) == DTXN_OK)
		memcpy(&x->later, dtxn_item_value(d), 8);
	(void)dtxn_txn_commit(t);
}

static void
co_snap_writer(struct dtxn_coord *c, void *arg)
{
	struct snap_ctx *x = arg;
	int k;

	wait_step(c, 1);
	for (k = 0; k < 2; k++) {
		struct dtxn_txn *t;
		struct dtxn_item *it;

		x->rc_w |= txn_add(c, T_KV, 3, 1, NULL);
		/* T_COL: change one column per txn (column 1, then 2) */
		t = dtxn_txn_begin(c, DTXN_TXN_RW);
		it = dtxn_txn_add_rw(t, T_COL, 7);
		x->rc_w |= dtxn_txn_execute(t);
		((struct col_val *)dtxn_item_value(it))->c[1 + k] += 1000;
		x->rc_w |= dtxn_txn_commit(t);
	}
	g_step = 2;
}

static void
test_snapshot_old_version(void **state)
{
	struct snap_ctx x = { 0 };
	struct col_val want = { { 7, 107, 207 } };
	struct motor_cvt *c;

	(void)state;
	run_two(&g_sr, co_snap_reader, &x, co_snap_writer, &x);
	assert_int_equal(x.rc_w, DTXN_OK);
	assert_int_equal(x.rc_exec, DTXN_OK);
	assert_int_equal(x.rc_commit, DTXN_OK);
	assert_true(x.exists);
	/* the snapshot: the loaded versions, rebuilt from pre-images */
	assert_int_equal(x.kv, 30);
	assert_int_equal(x.kv_version, 0);
	assert_memory_equal(&x.col, &want, sizeof(want));
	assert_int_equal(x.later, 32);
	/* only the changed column was kept as a pre-image */
	c = mn_cvt(&g_sr, T_COL, 7, 0);
	assert_int_equal(c->cells[motor_cvt_newest(tab(&g_sr, T_COL), c)].bitmap, 0x4);
}


/* ------------------------------------------------------------------ */
/* Cell masks and attribute-wise old versions                          */
/* ------------------------------------------------------------------ */

struct mask_ctx {
	int rc_w, rc_r;
	uint64_t reads_changed, reads_unchanged;  /* READs of each masked read's round */
	uint64_t changed, unchanged, other_col;
};

static void counters_total(struct dtxn_worker *w, struct dtxn_fabric_counters *out);

static uint64_t
reads_now(struct dtxn_coord *c)
{
	struct dtxn_fabric_counters tot;

	counters_total(c->worker, &tot);
	return tot.ops[DTXN_WR_READ];
}

static void
co_mask_reader(struct dtxn_coord *c, void *arg)
{
	struct mask_ctx *x = arg;
	struct dtxn_txn *t = dtxn_txn_begin(c, DTXN_TXN_RO);
	struct dtxn_item *a, *b;
	uint64_t r0;

	(void)dtxn_txn_add_ro(t, T_KV, 5);
	x->rc_r = dtxn_txn_execute(t); /* T_start, before the writer */
	g_step = 1;
	wait_step(c, 2);
	/* key 11, column 1 only: the writer changed it, its pre-image is read */
	r0 = reads_now(c);
	a = dtxn_txn_add_ro_cells(t, T_COL, 11, DTXN_CELL(1));
	x->rc_r |= dtxn_txn_execute(t);
	x->reads_changed = reads_now(c) - r0;
	/* key 12, column 0 only: unchanged, no pre-image READ at all */
	r0 = reads_now(c);
	b = dtxn_txn_add_ro_cells(t, T_COL, 12, DTXN_CELL(0));
	x->rc_r |= dtxn_txn_execute(t);
	x->reads_unchanged = reads_now(c) - r0;
	x->changed = ((struct col_val *)dtxn_item_value(a))->c[1];
	x->unchanged = ((struct col_val *)dtxn_item_value(b))->c[0];
	x->rc_r |= dtxn_txn_commit(t);
}

static void
co_mask_writer(struct dtxn_coord *c, void *arg)
{
	struct mask_ctx *x = arg;
	struct dtxn_txn *t;
	struct dtxn_item *it[2];
	uint64_t k;

	wait_step(c, 1);
	t = dtxn_txn_begin(c, DTXN_TXN_RW);
	for (k = 0; k < 2; k++)
		it[k] = dtxn_txn_add_rw_cells(t, T_COL, 11 + k, DTXN_CELL(0), DTXN_CELL(1));
	x->rc_w = dtxn_txn_execute(t);
	for (k = 0; k < 2; k++) {
		struct col_val *v = dtxn_item_value(it[k]);

		v->c[1] += 1000; /* in the write mask */
		v->c[2] += 5000; /* outside it: discarded at commit */
	}
	x->rc_w |= dtxn_txn_commit(t);
	g_step = 2;
}

static void
test_cell_masks(void **state)
{
	const struct dtxn_table *t = tab(&g_sr, T_COL);
	struct mask_ctx x = { 0 };
	const struct motor_cvt *c;
	const uint8_t *vpkg, *bar;
	struct col_val now;
	uint64_t pre;
	int n;

	(void)state;
	run_two(&g_sr, co_mask_reader, &x, co_mask_writer, &x);
	assert_int_equal(x.rc_w, DTXN_OK);
	assert_int_equal(x.rc_r, DTXN_OK);
	/* the snapshot before the writer: the changed column rebuilt from its
	 * pre-image, the unchanged one straight from the newest value */
	assert_int_equal(x.changed, 111);
	assert_int_equal(x.unchanged, 12);
	/* the masked read of an unchanged cell skips the pre-image READ */
	assert_int_equal(x.reads_changed, x.reads_unchanged + 1);
	/* on the MN: column 1 changed, column 2 (outside the write mask)
	 * kept, and the new version's pre-image is column 1 alone, 8 B */
	c = mn_cvt(&g_sr, T_COL, 11, 0);
	vpkg = mn_vpkg(&g_sr, T_COL, 11, 0);
	memcpy(&now, vpkg + MOTOR_VPKG_VALUE_OFF, sizeof(now));
	assert_int_equal(now.c[0], 11);
	assert_int_equal(now.c[1], 1111);
	assert_int_equal(now.c[2], 211);
	n = motor_cvt_newest(t, c);
	assert_true(n >= 0);
	assert_int_equal(c->cells[n].bitmap, DTXN_CELL(1));
	assert_int_equal(motor_seg_len(t, c->cells[n].bitmap), 8);
	bar = mn_bar(&g_sr, T_COL, 11, 0);
	memcpy(&pre, bar + c->cells[n].start_off, 8);
	assert_int_equal(pre, 111);
}

/* ABS (§4.2) from the declared update shapes: the paper's CUSTOMER example. */
static void
test_abs_formula(void **state)
{
	struct dtxn_table_def d = { .id = 0, .name = "cust", .value_size = 528, .max_keys = 8,
				    .n_versions = 4, .n_columns = 3,
				    .column_size = { 512, 12, 4 }, .n_updates = 3,
				    .updates = { { DTXN_CELL(0), 100 }, { DTXN_CELL(1), 880 },
						 { DTXN_CELL(2), 20 } } };
	uint32_t slot, aux;

	(void)state;
	/* 1 x 512 + floor(4 x 0.88) x 12 + 1 x 4 = 552 B, a delta area; the
	 * aux area is the packed 1 + 528 + 1 B Vpkg, rounded up to 8 */
	assert_int_equal(motor_table_sizes(&d, &slot, &aux), 0);
	assert_int_equal(aux, 536);
	assert_int_equal(motor_table_delta(&d), 552);
	assert_int_equal(slot, MOTOR_CELLS_OFF + 4 * MOTOR_CELL_SIZE);
	/* never updated in place: no bar */
	d.flags = DTXN_TABLE_F_NO_UPDATE;
	assert_int_equal(motor_table_sizes(&d, &slot, &aux), 0);
	assert_int_equal(aux, 536);
	assert_int_equal(motor_table_delta(&d), 0);
	/* never written after loading: one version, no bar (unless declared) */
	d.flags = DTXN_TABLE_F_READ_ONLY;
	d.n_versions = 0;
	assert_int_equal(motor_table_sizes(&d, &slot, &aux), 0);
	assert_int_equal(slot, MOTOR_CELLS_OFF + MOTOR_CELL_SIZE);
	assert_int_equal(motor_table_delta(&d), 0);
	d.n_versions = 1; /* declared: one version is not multi-versioning */
	assert_int_equal(motor_table_sizes(&d, &slot, &aux), -EINVAL);
	d.n_versions = 4;
	/* no shapes: whole-value updates, VNum - 1 of them */
	d.flags = 0;
	d.n_updates = 0;
	assert_int_equal(motor_table_sizes(&d, &slot, &aux), 0);
	assert_int_equal(aux, 536);
	assert_int_equal(motor_table_delta(&d), 3 * 528);
}

/* A read-only table's one Vcell: written anyway, older snapshots abort
 * (version_gone) instead of reading the new value; a new key's is absent. */
static void
test_read_only_one_version(void **state)
{
	const struct dtxn_table *t = tab(&g_sr, T_KV);
	uint8_t buf[MOTOR_CELLS_OFF + MOTOR_CELL_SIZE];
	struct motor_cvt *c = (struct motor_cvt *)buf;
	struct dtxn_table one = *t;
	int idx;

	(void)state;
	one.slot_size = MOTOR_CELLS_OFF + MOTOR_CELL_SIZE;
	assert_int_equal(motor_vnum(&one), 1);
	memset(buf, 0, sizeof(buf));
	c->cells[0].valid = 1; /* the loaded version */
	assert_int_equal(motor_cvt_pick(&one, c, 5, &idx), MOTOR_PICK_FOUND);
	assert_int_equal(idx, 0);
	c->cells[0].version = 10; /* overwritten by an update at 10 */
	assert_int_equal(motor_cvt_pick(&one, c, 5, &idx), MOTOR_PICK_GONE);
	assert_int_equal(motor_cvt_pick(&one, c, 11, &idx), MOTOR_PICK_FOUND);
	c->cells[0].flags = MOTOR_CELL_INSERT; /* a key inserted at 10 */
	assert_int_equal(motor_cvt_pick(&one, c, 5, &idx), MOTOR_PICK_ABSENT);
}

/* An update larger than the bar keeps the new version alone (gc.c). */
static void
test_gc_oversized(void **state)
{
	const struct dtxn_table *t = tab(&g_sr, T_KV); /* 8 B, VNum 3, 16 B bar */
	uint8_t buf[MOTOR_CELLS_OFF + 3 * MOTOR_CELL_SIZE];
	struct motor_cvt *c = (struct motor_cvt *)buf;
	struct dtxn_table big = *t;
	struct motor_cell nc = { .bitmap = 0x1, .version = 10, .writer = 1 };
	unsigned cell, dropped;
	uint32_t start;

	(void)state;
	memset(buf, 0, sizeof(buf));
	c->cells[0].valid = 1;
	c->cells[1].valid = 1;
	c->cells[1].version = 5;
	c->cells[1].bitmap = 0x1;
	/* a table whose bar is smaller than one pre-image */
	big.delta_size = 0;
	dropped = motor_gc_install(&big, c->cells, &nc, 7, &cell, &start);
	assert_int_equal(dropped, 2); /* both older versions */
	assert_int_equal(c->cells[cell].version, 10);
	assert_int_equal(c->cells[cell].bitmap, 0);
	assert_int_equal(motor_cvt_newest(t, c), (int)cell);
	for (unsigned i = 0; i < motor_vnum(t); i++)
		assert_true(i == cell || !c->cells[i].valid);
}

struct gone_ctx {
	int rc;
	int rc_w;
};

static void
co_gone_reader(struct dtxn_coord *c, void *arg)
{
	struct gone_ctx *x = arg;
	struct dtxn_txn *t = dtxn_txn_begin(c, DTXN_TXN_RO);

	(void)dtxn_txn_add_ro(t, T_TWO, 1);
	x->rc = dtxn_txn_execute(t);
	g_step = 1;
	wait_step(c, 2);
	(void)dtxn_txn_add_ro(t, T_TWO, 2);
	x->rc = dtxn_txn_execute(t);
	if (x->rc == DTXN_OK)
		x->rc = dtxn_txn_commit(t);
}

static void
co_gone_writer(struct dtxn_coord *c, void *arg)
{
	struct gone_ctx *x = arg;

	wait_step(c, 1);
	x->rc_w = txn_add(c, T_TWO, 2, 1, NULL);
	x->rc_w |= txn_add(c, T_TWO, 2, 1, NULL);
	g_step = 2;
}

static void
test_gc_version_gone(void **state)
{
	struct gone_ctx x = { 0 };

	(void)state;
	/* VNum 2: two newer versions evict the one the old snapshot needs */
	run_two(&g_sr, co_gone_reader, &x, co_gone_writer, &x);
	assert_int_equal(x.rc_w, DTXN_OK);
	assert_int_equal(x.rc, DTXN_ABORT_VERSION_GONE);
	assert_int_equal(mn_u64(&g_sr, T_TWO, 2), 4);
}

struct early_ctx {
	int rc_exec, rc_commit, rc_w;
	uint64_t seen;
};

static void
co_early_t1(struct dtxn_coord *c, void *arg)
{
	struct early_ctx *x = arg;
	struct dtxn_txn *t = dtxn_txn_begin(c, DTXN_TXN_RW);
	struct dtxn_item *a, *b;

	a = dtxn_txn_add_rw(t, T_KV, 10);
	x->rc_exec = dtxn_txn_execute(t);
	g_step = 1;
	wait_step(c, 2);
	b = dtxn_txn_add_ro(t, T_KV, 11);
	x->rc_exec = dtxn_txn_execute(t);
	if (x->rc_exec != DTXN_OK)
		return;
	memcpy(&x->seen, dtxn_item_value(b), 8);
	*(uint64_t *)dtxn_item_value(a) += 1;
	x->rc_commit = dtxn_txn_commit(t);
}

static void
co_early_w(struct dtxn_coord *c, void *arg)
{
	struct early_ctx *x = arg;

	wait_step(c, 1);
	x->rc_w = txn_add(c, T_KV, 11, 1, NULL);
	g_step = 2;
}

static void
test_early_abort(void **state)
{
	struct early_ctx sr = { 0 }, si = { 0 };

	(void)state;
	/* SR: a version newer than T_start on an RO item aborts at once */
	run_two(&g_sr, co_early_t1, &sr, co_early_w, &sr);
	assert_int_equal(sr.rc_w, DTXN_OK);
	assert_int_equal(sr.rc_exec, DTXN_ABORT_VALIDATION);
	assert_int_equal(mn_u64(&g_sr, T_KV, 10), 100);
	/* SI: it reads its snapshot and commits */
	run_two(&g_si, co_early_t1, &si, co_early_w, &si);
	assert_int_equal(si.rc_w, DTXN_OK);
	assert_int_equal(si.rc_exec, DTXN_OK);
	assert_int_equal(si.seen, 110);
	assert_int_equal(si.rc_commit, DTXN_OK);
	assert_int_equal(mn_u64(&g_si, T_KV, 10), 101);
}

struct locked_ctx {
	int rc1, rc2;
	uint64_t id2, lock_seen;
};

static void
co_locked_t1(struct dtxn_coord *c, void *arg)
{
	struct locked_ctx *x = arg;
	struct dtxn_txn *t = dtxn_txn_begin(c, DTXN_TXN_RW);
	struct dtxn_item *w;

	(void)dtxn_txn_add_ro(t, T_KV, 20);
	w = dtxn_txn_add_rw(t, T_KV, 21);
	x->rc1 = dtxn_txn_execute(t);
	g_step = 1;
	wait_step(c, 2);
	*(uint64_t *)dtxn_item_value(w) += 1;
	x->rc1 = dtxn_txn_commit(t);
	g_step = 3;
}

static void
co_locked_t2(struct dtxn_coord *c, void *arg)
{
	struct locked_ctx *x = arg;
	struct dtxn_txn *t;
	struct dtxn_item *w;

	wait_step(c, 1);
	t = dtxn_txn_begin(c, DTXN_TXN_RW);
	x->id2 = dtxn_txn_id(t);
	w = dtxn_txn_add_rw(t, T_KV, 20);
	x->rc2 = dtxn_txn_execute(t);
	x->lock_seen = mn_cvt(&g_sr, T_KV, 20, 0)->lock;
	g_step = 2;
	wait_step(c, 3);
	*(uint64_t *)dtxn_item_value(w) += 1;
	x->rc2 |= dtxn_txn_commit(t);
}

static void
test_validation_lock_not_one(void **state)
{
	struct locked_ctx x = { 0 };

	(void)state;
	run_two(&g_sr, co_locked_t1, &x, co_locked_t2, &x);
	/* the lock holds a txn id, not 1: validation must test lock != 0 */
	assert_int_equal(x.lock_seen, x.id2);
	assert_true(x.lock_seen != 1);
	assert_int_equal(x.rc1, DTXN_ABORT_LOCKED_READ);
	assert_int_equal(x.rc2, DTXN_OK);
	assert_int_equal(mn_u64(&g_sr, T_KV, 21), 210);
	assert_int_equal(mn_u64(&g_sr, T_KV, 20), 201);
	assert_int_equal(mn_cvt(&g_sr, T_KV, 21, 0)->lock, 0);
}

struct skew_ctx {
	int rc[2];
};

struct skew_arg {
	struct skew_ctx *x;
	unsigned me;
};

/*
 * T0 reads 31 and writes 30; T1 reads 30 and writes 31. T0 executes, then
 * T1 (which sees T0's lock on 30), then T0 commits, then T1: both read
 * before either wrote, the classic write skew.
 */
static void
co_skew(struct dtxn_coord *c, void *arg)
{
	struct skew_arg *a = arg;
	const uint64_t mine = 30 + a->me, other = 31 - a->me;
	struct dtxn_txn *t;
	struct dtxn_item *r, *w;

	wait_step(c, (int)a->me);
	t = dtxn_txn_begin(c, DTXN_TXN_RW);
	r = dtxn_txn_add_ro(t, T_KV, other);
	w = dtxn_txn_add_rw(t, T_KV, mine);
	a->x->rc[a->me] = dtxn_txn_execute(t);
	g_step = (int)a->me + 1;
	wait_step(c, 2 + (int)a->me);
	if (a->x->rc[a->me] == DTXN_OK) {
		*(uint64_t *)dtxn_item_value(w) = *(uint64_t *)dtxn_item_value(r) + 1;
		a->x->rc[a->me] = dtxn_txn_commit(t);
	}
	g_step = 3 + (int)a->me;
}

static void
test_write_skew(void **state)
{
	struct skew_ctx sr = { { -1, -1 } }, si = { { -1, -1 } };
	struct skew_arg s0 = { &sr, 0 }, s1 = { &sr, 1 }, i0 = { &si, 0 }, i1 = { &si, 1 };

	(void)state;
	run_two(&g_sr, co_skew, &s0, co_skew, &s1);
	/* SR: T0's validation finds 31 locked by T1 (lock != 0) */
	assert_int_equal(sr.rc[0], DTXN_ABORT_LOCKED_READ);
	assert_int_equal(sr.rc[1], DTXN_OK);
	run_two(&g_si, co_skew, &i0, co_skew, &i1);
	assert_int_equal(si.rc[0], DTXN_OK); /* SI allows it: both commit */
	assert_int_equal(si.rc[1], DTXN_OK);
	assert_int_equal(mn_u64(&g_si, T_KV, 30), 311);
	assert_int_equal(mn_u64(&g_si, T_KV, 31), 301);
}

/* A writer that holds a lock while a snapshot reads: the recheck. */
struct recheck_ctx {
	bool commit_below;   /* the fake writer installs a version below T_start */
	uint64_t ts;         /* the reader's T_start */
	int rc;
	unsigned waited;
};

static void
co_recheck_reader(struct dtxn_coord *c, void *arg)
{
	struct recheck_ctx *x = arg;
	struct dtxn_txn *t = dtxn_txn_begin(c, DTXN_TXN_RO);

	(void)dtxn_txn_add_ro(t, T_KV, 40);
	x->rc = dtxn_txn_execute(t);
	x->ts = t->cc[MOTOR_TS_START];
	g_step = 1;
	if (x->rc == DTXN_OK)
		x->rc = dtxn_txn_commit(t);
	g_step = 3;
}

static void
co_recheck_writer(struct dtxn_coord *c, void *arg)
{
	struct recheck_ctx *x = arg;
	const struct dtxn_table *t = tab(&g_sr, T_KV);
	struct motor_cvt *cvt;
	uint8_t *vp;
	unsigned i, cell;
	uint32_t start;

	wait_step(c, 1);
	/* the reader's commit is now rechecking: it must wait for us */
	for (i = 0; i < 5 && g_step < 3; i++) {
		dtxn_co_sleep_until_lc(dtxn_coord_co(c), dtxn_now_ns() + 1000);
		x->waited++;
	}
	cvt = mn_cvt(&g_sr, T_KV, 40, 0);
	if (x->commit_below) {
		/* as a txn whose T_commit < T_start would: a new version, new anchors */
		struct motor_cell nc = { .version = x->ts - 1, .writer = 999, .bitmap = 0 };
		uint8_t a = (uint8_t)(motor_cvt_anchor(t, cvt) + 1);

		vp = dtxn_store_aux_ptr(g_sr.f, t, 0, cvt);
		vp[0] = a;
		vp[motor_vpkg_size(t) - 1] = a;
		(void)motor_gc_install(t, cvt->cells, &nc, a, &cell, &start);
	}
	__atomic_store_n(&cvt->lock, 0, __ATOMIC_RELEASE);
}

static void
test_snapshot_recheck(void **state)
{
	struct recheck_ctx ok = { .commit_below = false }, bad = { .commit_below = true };
	struct motor_cvt *cvt = mn_cvt(&g_sr, T_KV, 40, 0);

	(void)state;
	/* a lock held by another txn when the snapshot read the record */
	cvt->lock = UINT64_C(0x7700000001);
	run_two(&g_sr, co_recheck_reader, &ok, co_recheck_writer, &ok);
	assert_int_equal(ok.rc, DTXN_OK);   /* it unlocked without a version below T_start */
	assert_int_equal(ok.waited, 5);     /* and the reader waited for it */
	cvt->lock = UINT64_C(0x7700000002);
	run_two(&g_sr, co_recheck_reader, &bad, co_recheck_writer, &bad);
	/* it committed below T_start: the snapshot read missed it and must abort */
	assert_int_equal(bad.rc, DTXN_ABORT_VALIDATION);
}

struct idr_ctx {
	int rc_ins, rc_dup, rc_del, rc_del_absent, rc_reins, rc_old;
	bool after_del_exists, old_exists;
	uint64_t after_ins, old_val, after_reins;
};

static int
idr_read(struct dtxn_coord *c, uint64_t key, bool *exists, uint64_t *val)
{
	struct dtxn_txn *t = dtxn_txn_begin(c, DTXN_TXN_RO);
	struct dtxn_item *it = dtxn_txn_add_ro(t, T_KV, key);
	int rc = dtxn_txn_execute(t);

	if (rc != DTXN_OK)
		return rc;
	*exists = dtxn_item_exists(it);
	if (*exists)
		memcpy(val, dtxn_item_value(it), 8);
	return dtxn_txn_commit(t);
}

static int
idr_write(struct dtxn_coord *c, bool del, uint64_t key, uint64_t v)
{
	struct dtxn_txn *t = dtxn_txn_begin(c, DTXN_TXN_RW);
	struct dtxn_item *it = del ? dtxn_txn_delete(t, T_KV, key) : dtxn_txn_insert(t, T_KV, key);
	int rc;

	if (!del)
		memcpy(dtxn_item_value(it), &v, 8); /* filled before execute */
	rc = dtxn_txn_execute(t);
	return rc != DTXN_OK ? rc : dtxn_txn_commit(t);
}

static void
co_idr_main(struct dtxn_coord *c, void *arg)
{
	struct idr_ctx *x = arg;
	bool e;

	x->rc_ins = idr_write(c, false, 500, 5000);
	(void)idr_read(c, 500, &e, &x->after_ins);
	x->rc_dup = idr_write(c, false, 500, 1);
	g_step = 1;          /* the old snapshot starts */
	wait_step(c, 2);
	x->rc_del = idr_write(c, true, 500, 0);
	x->rc_del_absent = idr_write(c, true, 777, 0);
	(void)idr_read(c, 500, &x->after_del_exists, &x->old_val);
	g_step = 3;          /* the old snapshot reads */
	wait_step(c, 4);
	x->rc_reins = idr_write(c, false, 500, 6000);
	(void)idr_read(c, 500, &e, &x->after_reins);
}

static void
co_idr_old(struct dtxn_coord *c, void *arg)
{
	struct idr_ctx *x = arg;
	struct dtxn_txn *t;
	struct dtxn_item *it;

	wait_step(c, 1);
	t = dtxn_txn_begin(c, DTXN_TXN_RO);
	(void)dtxn_txn_add_ro(t, T_KV, 8);
	x->rc_old = dtxn_txn_execute(t);
	g_step = 2;
	wait_step(c, 3);
	it = dtxn_txn_add_ro(t, T_KV, 500);
	x->rc_old |= dtxn_txn_execute(t);
	x->old_exists = dtxn_item_exists(it);
	if (x->old_exists)
		memcpy(&x->old_val, dtxn_item_value(it), 8);
	x->rc_old |= dtxn_txn_commit(t);
	g_step = 4;
}

static int
count_all(uint64_t key, const void *value, void *arg)
{
	(void)key;
	(void)value;
	++*(unsigned *)arg;
	return 0;
}

static int
count_kv(uint64_t key, const void *value, void *arg)
{
	(void)value;
	if (key == 500)
		++*(unsigned *)arg;
	return 0;
}

static void
test_insert_delete_reinsert(void **state)
{
	struct idr_ctx x = { 0 };
	unsigned seen = 0;
	uint64_t v;

	(void)state;
	run_two(&g_sr, co_idr_main, &x, co_idr_old, &x);
	assert_int_equal(x.rc_ins, DTXN_OK);
	assert_int_equal(x.after_ins, 5000);
	assert_int_equal(x.rc_dup, DTXN_ABORT_EXISTS);
	assert_int_equal(x.rc_del, DTXN_OK);
	assert_int_equal(x.rc_del_absent, DTXN_ABORT_NOT_FOUND);
	assert_false(x.after_del_exists);
	/* a snapshot from before the delete still sees the record */
	assert_int_equal(x.rc_old, DTXN_OK);
	assert_true(x.old_exists);
	assert_int_equal(x.old_val, 5000);
	/* re-insert over the tombstone */
	assert_int_equal(x.rc_reins, DTXN_OK);
	assert_int_equal(x.after_reins, 6000);
	assert_int_equal(dtxn_db_get(g_sr.db, T_KV, 500, &v), 0);
	assert_int_equal(v, 6000);
	assert_int_equal(dtxn_db_scan(g_sr.db, T_KV, count_kv, &seen), 0);
	assert_int_equal(seen, 1);
	/* every replica has the CVT with its versions */
	assert_memory_equal(mn_cvt(&g_sr, T_KV, 500, 1), mn_cvt(&g_sr, T_KV, 500, 0),
			    tab(&g_sr, T_KV)->slot_size);
}

/* ------------------------------------------------------------------ */
/* Slot reuse                                                          */
/* ------------------------------------------------------------------ */

#define REUSE_MAX 16

struct reuse_ctx {
	uint64_t keys[REUSE_MAX];  /* new keys of one home bucket, filling it */
	unsigned n_keys;
	int rc_full, rc_del, rc_reuse, rc_old, rc_fresh;
	bool fresh_exists, new_exists;
	uint64_t new_val;
};

/* Fills a home bucket of T_KV with new keys, deletes one, inserts another. */
static void
co_reuse_main(struct dtxn_coord *c, void *arg)
{
	struct reuse_ctx *x = arg;
	unsigned k;
	bool e;

	for (k = 0; k + 1 < x->n_keys; k++) {
		x->rc_full = idr_write(c, false, x->keys[k], x->keys[k]);
		if (x->rc_full != DTXN_OK)
			break;
	}
	/* the bucket is full: one more key does not fit */
	x->rc_full = idr_write(c, false, x->keys[k], 1);
	g_step = 1;          /* the old snapshot starts */
	wait_step(c, 2);
	x->rc_del = idr_write(c, true, x->keys[0], 0);
	/* a new key takes the deleted record's slot */
	x->rc_reuse = idr_write(c, false, x->keys[k], 4242);
	(void)idr_read(c, x->keys[k], &x->new_exists, &x->new_val);
	x->rc_fresh = idr_read(c, x->keys[0], &x->fresh_exists, &x->new_val);
	(void)idr_read(c, x->keys[k], &e, &x->new_val);
	g_step = 3;
}

/* A snapshot from before the delete looks the deleted key up after its slot went. */
static void
co_reuse_old(struct dtxn_coord *c, void *arg)
{
	struct reuse_ctx *x = arg;
	struct dtxn_txn *t;

	wait_step(c, 1);
	t = dtxn_txn_begin(c, DTXN_TXN_RO);
	(void)dtxn_txn_add_ro(t, T_KV, 7);
	x->rc_old = dtxn_txn_execute(t); /* T_start */
	g_step = 2;
	wait_step(c, 3);
	(void)dtxn_txn_add_ro(t, T_KV, x->keys[0]);
	x->rc_old = dtxn_txn_execute(t);
	if (x->rc_old == DTXN_OK)
		x->rc_old = dtxn_txn_commit(t);
}

static void
test_slot_reuse(void **state)
{
	const struct dtxn_table *t = tab(&g_sr, T_KV);
	const uint64_t home = dtxn_store_bucket_of(t, 5000);
	struct reuse_ctx x = { 0 };
	const struct dtxn_bucket_hdr *bh;
	const struct motor_cvt *cvt;
	uint64_t key;

	(void)state;
	/* new keys whose home bucket is 5000's: one more than its slots */
	for (key = 5000; x.n_keys < t->def.slots_per_bucket + 1 && key < 500000; key++)
		if (dtxn_store_bucket_of(t, key) == home)
			x.keys[x.n_keys++] = key;
	assert_int_equal(x.n_keys, t->def.slots_per_bucket + 1);
	run_two(&g_sr, co_reuse_main, &x, co_reuse_old, &x);
	assert_int_equal(x.rc_full, DTXN_ABORT_INDEX_FULL);
	assert_int_equal(x.rc_del, DTXN_OK);
	/* the insert reused the deleted record's slot */
	assert_int_equal(x.rc_reuse, DTXN_OK);
	assert_true(x.new_exists);
	assert_int_equal(x.new_val, 4242);
	cvt = mn_cvt(&g_sr, T_KV, x.keys[x.n_keys - 1], 0);
	assert_non_null(cvt);
	assert_int_equal(cvt->lock, 0);
	assert_int_equal(cvt->cells[motor_cvt_newest(t, cvt)].flags, MOTOR_CELL_INSERT);
	assert_null(mn_cvt(&g_sr, T_KV, x.keys[0], 0));
	/* its bucket's watermark is the deletion's version, on every replica */
	bh = (const struct dtxn_bucket_hdr *)((const char *)dtxn_fabric_mn_base(
						      g_sr.f, DTXN_RADDR_MN(dtxn_store_bucket_raddr(t, 0, home))) +
					      DTXN_RADDR_OFF(dtxn_store_bucket_raddr(t, 0, home)));
	assert_true(dtxn_bucket_reclaimed(t, bh) != 0);
	assert_int_equal(bh->lock, 0);
	/* a new snapshot: the deleted key is simply absent */
	assert_int_equal(x.rc_fresh, DTXN_OK);
	assert_false(x.fresh_exists);
	/* the old snapshot needed the deleted record: version_gone, not a wrong "absent" */
	assert_int_equal(x.rc_old, DTXN_ABORT_VERSION_GONE);
	for (uint16_t r = 1; r < 3; r++)
		assert_memory_equal(mn_cvt(&g_sr, T_KV, x.keys[x.n_keys - 1], r), cvt,
				    t->slot_size);
}

static void
co_delete_only(struct dtxn_coord *c, void *arg)
{
	*(int *)arg = idr_write(c, true, 9, 0);
}

static void
test_deleted_hidden_from_mn_reads(void **state)
{
	int rc = -1;
	unsigned seen = 0;
	uint64_t v;

	(void)state;
	assert_int_equal(dtxn_db_get(g_sr.db, T_KV, 9, &v), 0);
	run_one(&g_sr, co_delete_only, &rc);
	assert_int_equal(rc, DTXN_OK);
	/* the slot keeps the tombstone for older snapshots; MN-side reads skip it */
	assert_non_null(mn_cvt(&g_sr, T_KV, 9, 0));
	assert_int_equal(dtxn_db_get(g_sr.db, T_KV, 9, &v), -ENOENT);
	assert_int_equal(dtxn_db_scan(g_sr.db, T_KV, count_all, &seen), 0);
	assert_int_equal(seen, KV_KEYS - 1 + 1 /* key 500 */);
}

/* Two inserts that hash to one bucket share its lock: the txn commits. */
struct same_bkt_ctx {
	uint64_t k[2];
	int rc;
	unsigned n_exists;
};

static void
co_same_bucket(struct dtxn_coord *c, void *arg)
{
	struct same_bkt_ctx *x = arg;
	struct dtxn_txn *t = dtxn_txn_begin(c, DTXN_TXN_RW);
	struct dtxn_item *a = dtxn_txn_insert(t, T_KV, x->k[0]);
	struct dtxn_item *b = dtxn_txn_insert(t, T_KV, x->k[1]);
	bool e;
	uint64_t v;
	unsigned i;

	*(uint64_t *)dtxn_item_value(a) = 1;
	*(uint64_t *)dtxn_item_value(b) = 2;
	x->rc = dtxn_txn_execute(t);
	if (x->rc == DTXN_OK)
		x->rc = dtxn_txn_commit(t);
	for (i = 0; i < 2; i++)
		if (idr_read(c, x->k[i], &e, &v) == DTXN_OK && e && v == i + 1)
			x->n_exists++;
}

static void
test_inserts_share_bucket_lock(void **state)
{
	const struct dtxn_table *t = tab(&g_sr, T_KV);
	struct same_bkt_ctx x = { .k = { 600, 0 } };
	uint64_t k;

	(void)state;
	for (k = 601; x.k[1] == 0; k++)
		if (dtxn_store_bucket_of(t, k) == dtxn_store_bucket_of(t, x.k[0]))
			x.k[1] = k;
	run_one(&g_sr, co_same_bucket, &x);
	assert_int_equal(x.rc, DTXN_OK);
	assert_int_equal(x.n_exists, 2);
	assert_int_equal(mn_cvt(&g_sr, T_KV, 600, 0)->lock, 0);
}

struct rel_ctx {
	int rc1, rc2;
	uint64_t id1, lock50, lock51;
};

static void
co_rel_t1(struct dtxn_coord *c, void *arg)
{
	struct rel_ctx *x = arg;
	struct dtxn_txn *t = dtxn_txn_begin(c, DTXN_TXN_RW);

	x->id1 = dtxn_txn_id(t);
	(void)dtxn_txn_add_rw(t, T_KV, 50);
	x->rc1 = dtxn_txn_execute(t);
	g_step = 1;
	wait_step(c, 2);
	x->rc1 |= dtxn_txn_commit(t);
}

static void
co_rel_t2(struct dtxn_coord *c, void *arg)
{
	struct rel_ctx *x = arg;
	struct dtxn_txn *t;

	wait_step(c, 1);
	t = dtxn_txn_begin(c, DTXN_TXN_RW);
	(void)dtxn_txn_add_rw(t, T_KV, 51);
	(void)dtxn_txn_add_rw(t, T_KV, 50);
	x->rc2 = dtxn_txn_execute(t);
	dtxn_co_yield_lc(dtxn_coord_co(c)); /* the unlock WRITEs take effect */
	x->lock50 = mn_cvt(&g_sr, T_KV, 50, 0)->lock;
	x->lock51 = mn_cvt(&g_sr, T_KV, 51, 0)->lock;
	g_step = 2;
}

static void
test_abort_releases_only_held(void **state)
{
	struct rel_ctx x = { 0 };

	(void)state;
	run_two(&g_sr, co_rel_t1, &x, co_rel_t2, &x);
	assert_int_equal(x.rc2, DTXN_ABORT_LOCK_CONFLICT);
	assert_int_equal(x.lock51, 0);      /* released: it was ours */
	assert_int_equal(x.lock50, x.id1);  /* untouched: it was not */
	assert_int_equal(x.rc1, DTXN_OK);
	assert_int_equal(mn_cvt(&g_sr, T_KV, 50, 0)->lock, 0);
}

struct oplog_ctx {
	const struct env *env;
	uint64_t id;
	int rc;
	uint64_t hdr[2];
	uint64_t e[2][3];
	dtxn_raddr_t slot[2];
	uint32_t cn_len;
	struct dtxn_fabric_counters before, after;
};

static void
co_oplog(struct dtxn_coord *c, void *arg)
{
	struct oplog_ctx *x = arg;
	const struct dtxn_catalog *cat = x->env->cat;
	const struct motor_coord *mc = c->cc_priv;
	struct dtxn_txn *t = dtxn_txn_begin(c, DTXN_TXN_RW);
	struct dtxn_item *a, *b;
	const char *log;

	x->id = dtxn_txn_id(t);
	counters_total(c->worker, &x->before);
	a = dtxn_txn_add_rw(t, T_KV, 60);
	b = dtxn_txn_add_rw(t, T_COL, 3);
	x->rc = dtxn_txn_execute(t);
	x->slot[0] = a->slot_raddr;
	x->slot[1] = b->slot_raddr;
	if (mc->oplog != NULL) {
		/* oplog=cn: in the coordinator's own memory */
		log = (const char *)mc->oplog;
		x->cn_len = mc->oplog_len;
	} else {
		/* oplog=mn: T_KV's primary is MN 0, the record is in this
		 * coordinator's log region there */
		log = (const char *)dtxn_fabric_mn_base(x->env->f, 0) +
		      DTXN_RADDR_OFF(dtxn_store_log_raddr(cat, dtxn_coord_gid(c), 0));
	}
	counters_total(c->worker, &x->after);
	memcpy(x->hdr, log, 16);
	memcpy(x->e, log + 16, sizeof(x->e));
	dtxn_txn_abort(t, DTXN_ABORT_APP);
}

/* The record co_oplog found: the txn's two locks, in order. */
static void
oplog_check(const struct oplog_ctx *x)
{
	uint64_t n_bytes;

	assert_int_equal(x->rc, DTXN_OK);
	assert_int_equal(x->hdr[0], x->id);
	n_bytes = x->hdr[1];
	assert_int_equal(n_bytes & 0xffffffff, 2);         /* two locks */
	assert_int_equal(n_bytes >> 32, 16 + 2 * 24);      /* bytes */
	assert_int_equal(x->e[0][0] & 0xffffffff, T_KV);
	assert_int_equal(x->e[0][1], 60);
	assert_int_equal(x->e[0][2], x->slot[0] + MOTOR_LOCK_OFF);
	assert_int_equal(x->e[1][0] & 0xffffffff, T_COL);
	assert_int_equal(x->e[1][2], x->slot[1] + MOTOR_LOCK_OFF);
}

static void
test_oplog(void **state)
{
	struct oplog_ctx cn = { .env = &g_sr }, mn = { .env = &g_si };

	(void)state;
	/* oplog=cn (default, §5.3): in the coordinator's memory; the lock
	 * round posts the two {CAS, READ CVT} pairs and the Vpkg READs only */
	run_one(&g_sr, co_oplog, &cn);
	oplog_check(&cn);
	assert_int_equal(cn.cn_len, 16 + 2 * 24);
	assert_int_equal(cn.after.ops[DTXN_WR_WRITE] - cn.before.ops[DTXN_WR_WRITE], 0);
	assert_int_equal(cn.after.ops[DTXN_WR_CAS] - cn.before.ops[DTXN_WR_CAS], 2);
	/* oplog=mn: in the coordinator's log region on the MNs it locks on */
	run_one(&g_si, co_oplog, &mn);
	oplog_check(&mn);
	assert_true(mn.after.ops[DTXN_WR_WRITE] - mn.before.ops[DTXN_WR_WRITE] >= 1);
}

/*
 * When a commit batch marks its txn decided (dtxn_batch_run_decide() and
 * _early(), lib/txn): each chain's first WR is an inline WRITE of
 * t->decided, whose byte is copied when its chain is posted, to the
 * coordinator's log region on MN 0 and MN 1. oplog=mn's commit must be
 * decided before its first doorbell (commit.c): a CN killed between two
 * chains has the first applied (motor.md "Recovery").
 */
struct decide_ctx {
	uint8_t early[2], late[2];
	uint8_t after_early, after_late, after_refused;
	int rc_refused;
};

/* Posts @p t->decided to MN 0 and MN 1 with @p run; the bytes each chain carried. */
static uint8_t
decide_post(struct dtxn_coord *c, struct dtxn_txn *t,
	    int (*run)(struct dtxn_batch *, struct dtxn_txn *), uint8_t seen[2])
{
	const struct dtxn_catalog *cat = &c->worker->db->cat;
	struct dtxn_batch b;

	t->decided = 0;
	dtxn_batch_init(&b, c);
	for (uint16_t mn = 0; mn < 2; mn++)
		dtxn_batch_write(&b, dtxn_store_log_raddr(cat, c->gid, mn), &t->decided, 1, true);
	assert_int_equal(run(&b, t), DTXN_OK);
	for (uint16_t mn = 0; mn < 2; mn++) {
		dtxn_raddr_t ra = dtxn_store_log_raddr(cat, c->gid, mn);

		seen[mn] = *((const uint8_t *)dtxn_fabric_mn_base(g_sr.f, mn) + DTXN_RADDR_OFF(ra));
	}
	return t->decided;
}

static void
co_decide(struct dtxn_coord *c, void *arg)
{
	struct decide_ctx *x = arg;
	struct dtxn_txn *t = dtxn_txn_begin(c, DTXN_TXN_RW);
	struct dtxn_batch b;
	uint8_t v = 1;

	x->after_early = decide_post(c, t, dtxn_batch_run_decide_early, x->early);
	x->after_late = decide_post(c, t, dtxn_batch_run_decide, x->late);
	/* a refused post (an MN without a QP) leaves it undecided */
	t->decided = 0;
	dtxn_batch_init(&b, c);
	dtxn_batch_write(&b, DTXN_RADDR(N_MN + 4, 0), &v, 1, true);
	x->rc_refused = dtxn_batch_run_decide_early(&b, t);
	x->after_refused = t->decided;
	dtxn_txn_abort(t, DTXN_ABORT_APP);
}

static void
test_decide_early(void **state)
{
	struct decide_ctx x;

	(void)state;
	memset(&x, 0xff, sizeof(x));
	run_one(&g_sr, co_decide, &x);
	/* early: decided before either chain was posted */
	assert_int_equal(x.early[0], 1);
	assert_int_equal(x.early[1], 1);
	assert_int_equal(x.after_early, 1);
	/* late: once every chain is posted, after them */
	assert_int_equal(x.late[0], 0);
	assert_int_equal(x.late[1], 0);
	assert_int_equal(x.after_late, 1);
	assert_int_equal(x.rc_refused, DTXN_ABORT_FABRIC);
	assert_int_equal(x.after_refused, 0);
}

/*
 * Recovery (oplog=mn) of a dead coordinator whose last txn X committed,
 * after a survivor moved the record past X's version and one backup was
 * left holding X's image (the shm drain applies a dead process's posted
 * chain to a backup late, after survivors wrote it: X's primary chain
 * had unlocked the record). The backup is the only replica with X's
 * Vcell: X rolls forward from it, but only onto replicas behind X, never
 * over the primary, whose newer versions hold X's effect and the
 * survivor's (recover.c, rec_forward()).
 */
#define SUP_KEY 190
#define SUP_GID_DEAD 5
#define SUP_GID_LIVE 6

struct sup_ctx {
	uint64_t x, last;
	int rc_x, rc_live;
};

static void
co_sup_dead(struct dtxn_coord *c, void *arg)
{
	struct sup_ctx *x = arg;

	x->rc_x = txn_add(c, T_KV, SUP_KEY, 1, &x->x);
}

static void
co_sup_live(struct dtxn_coord *c, void *arg)
{
	struct sup_ctx *x = arg;

	/* VNum 3: three versions later X's Vcell has aged out everywhere */
	for (int i = 0; i < 3 && x->rc_live == DTXN_OK; i++)
		x->rc_live = txn_add(c, T_KV, SUP_KEY, 10, &x->last);
}

static void
test_recover_superseded(void **state)
{
	const struct dtxn_table *t = tab(&g_si, T_KV);
	struct ut_coord_spec dead = { co_sup_dead, NULL }, live = { co_sup_live, NULL };
	struct ut_coord_spec rs = { ut_recover_main, NULL };
	struct sup_ctx x = { 0 };
	struct ut_recover r;
	uint8_t cvt_x[256], vpkg_x[64];
	uint64_t v0, v;
	int n;

	(void)state;
	assert_true(t->slot_size <= sizeof(cvt_x) && t->aux_size <= sizeof(vpkg_x));
	v0 = mn_u64(&g_si, T_KV, SUP_KEY);
	dead.arg = &x;
	live.arg = &x;
	run_coords(&g_si, &dead, 1, SUP_GID_DEAD);
	assert_int_equal(x.rc_x, DTXN_OK);
	/* backup 1 as X left it */
	memcpy(cvt_x, mn_cvt(&g_si, T_KV, SUP_KEY, 1), t->slot_size);
	memcpy(vpkg_x, mn_vpkg(&g_si, T_KV, SUP_KEY, 1), t->aux_size);
	run_coords(&g_si, &live, 1, SUP_GID_LIVE);
	assert_int_equal(x.rc_live, DTXN_OK);
	assert_int_equal(mn_u64(&g_si, T_KV, SUP_KEY), v0 + 31);
	/* the late drain: backup 1 back to X's image */
	memcpy(mn_cvt(&g_si, T_KV, SUP_KEY, 1), cvt_x, t->slot_size);
	memcpy(mn_vpkg(&g_si, T_KV, SUP_KEY, 1), vpkg_x, t->aux_size);
	rs.arg = ut_recover_of(&r, N_MN + 1, SUP_GID_DEAD, 1);
	run_coords(&g_si, &rs, 1, SUP_GID_LIVE + 1);
	assert_int_equal(r.rc, 0);
	/* X was found (backup 1): rolled forward, but nothing written over
	 * the primary or backup 2, which moved past it */
	assert_int_equal(r.rec.rolled_forward, 1);
	for (uint16_t k = 0; k < 3; k += 2) {
		const struct motor_cvt *c = mn_cvt(&g_si, T_KV, SUP_KEY, k);

		n = motor_cvt_newest(t, c);
		assert_true(n >= 0);
		assert_int_equal(c->cells[n].writer, x.last);
		assert_int_equal(c->lock, 0);
		memcpy(&v, mn_vpkg(&g_si, T_KV, SUP_KEY, k) + MOTOR_VPKG_VALUE_OFF, 8);
		assert_int_equal(v, v0 + 31);
	}
}

struct verbs_ctx {
	struct dtxn_fabric_counters ro, rw, rw2;
	int rc_ro, rc_rw, rc_rw2;
};

static void
counters_total(struct dtxn_worker *w, struct dtxn_fabric_counters *out)
{
	struct dtxn_fabric_counters per[N_MN];
	unsigned m, op;

	memset(out, 0, sizeof(*out));
	dtxn_worker_counters(w, per);
	for (m = 0; m < N_MN; m++)
		for (op = 0; op < DTXN_WR_OP_MAX; op++)
			out->ops[op] += per[m].ops[op];
}

static void
counters_diff(struct dtxn_fabric_counters *d, const struct dtxn_fabric_counters *a)
{
	unsigned op;

	for (op = 0; op < DTXN_WR_OP_MAX; op++)
		d->ops[op] -= a->ops[op];
}

static void
co_verbs(struct dtxn_coord *c, void *arg)
{
	struct verbs_ctx *x = arg;
	struct dtxn_fabric_counters before;
	struct dtxn_txn *t;
	bool e;
	uint64_t v;

	/* warm the address cache */
	(void)idr_read(c, 70, &e, &v);
	(void)idr_read(c, 71, &e, &v);
	counters_total(c->worker, &before);
	t = dtxn_txn_begin(c, DTXN_TXN_RO);
	(void)dtxn_txn_add_ro(t, T_KV, 70);
	(void)dtxn_txn_add_ro(t, T_KV, 71);
	x->rc_ro = dtxn_txn_execute(t);
	x->rc_ro |= dtxn_txn_commit(t);
	counters_total(c->worker, &x->ro);
	counters_diff(&x->ro, &before);
	counters_total(c->worker, &before);
	x->rc_rw = txn_add(c, T_KV, 70, 1, NULL);
	counters_total(c->worker, &x->rw);
	counters_diff(&x->rw, &before);
	counters_total(c->worker, &before);
	x->rc_rw2 = txn_add(c, T_KV, 71, 1, NULL);
	counters_total(c->worker, &x->rw2);
	counters_diff(&x->rw2, &before);
}

static void
test_verbs(void **state)
{
	struct verbs_ctx x = { 0 }, m = { 0 };

	(void)state;
	/* defaults: timestamps from the CN-side service, op log in CN memory */
	run_one(&g_sr, co_verbs, &x);
	assert_int_equal(x.rc_ro, DTXN_OK);
	assert_int_equal(x.rc_rw, DTXN_OK);
	/* read-only: a CVT and a Vpkg per record; no MN timestamp, no lock,
	 * no validation */
	assert_int_equal(x.ro.ops[DTXN_WR_FAA], 0);
	assert_int_equal(x.ro.ops[DTXN_WR_READ], 4);
	assert_int_equal(x.ro.ops[DTXN_WR_CAS], 0);
	assert_int_equal(x.ro.ops[DTXN_WR_WRITE], 0);
	/* one RW record: {CAS, READ CVT}, READ Vpkg, 3 replicas x {Vpkg,
	 * pre-image, the slot header (the row's first update puts its bar in
	 * use), Vcells}, the unlock; nothing to take for the bar: no FAA */
	assert_int_equal(x.rw.ops[DTXN_WR_FAA], 0);
	assert_int_equal(x.rw.ops[DTXN_WR_CAS], 1);
	assert_int_equal(x.rw.ops[DTXN_WR_READ], 2);
	assert_int_equal(x.rw.ops[DTXN_WR_WRITE], 3 * 4 + 1);
	/* the next row's first update: the same */
	assert_int_equal(x.rc_rw2, DTXN_OK);
	assert_int_equal(x.rw2.ops[DTXN_WR_FAA], 0);
	assert_int_equal(x.rw2.ops[DTXN_WR_CAS], 1);
	assert_int_equal(x.rw2.ops[DTXN_WR_WRITE], 3 * 4 + 1);
	/* tso=mn, oplog=mn: T_start (+ T_commit) by FAA, and the op-log WRITE */
	run_one(&g_si, co_verbs, &m);
	assert_int_equal(m.rc_ro, DTXN_OK);
	assert_int_equal(m.rc_rw, DTXN_OK);
	assert_int_equal(m.ro.ops[DTXN_WR_FAA], 1);
	assert_int_equal(m.ro.ops[DTXN_WR_READ], 4);
	assert_int_equal(m.rw.ops[DTXN_WR_FAA], 2); /* T_start, T_commit */
	assert_int_equal(m.rw.ops[DTXN_WR_CAS], 1);
	assert_int_equal(m.rw.ops[DTXN_WR_WRITE], 1 + 3 * 4 + 1);
	assert_int_equal(m.rc_rw2, DTXN_OK);
	assert_int_equal(m.rw2.ops[DTXN_WR_FAA], 2);
}

#define INC_TXNS 400
#define INC_KEY0 90

struct inc_ctx {
	uint64_t seed, commits, aborts;
};

static void
co_inc(struct dtxn_coord *c, void *arg)
{
	struct inc_ctx *x = arg;
	uint64_t s = x->seed;

	while (x->commits < INC_TXNS) {
		uint64_t key;

		s = s * 6364136223846793005ull + 1442695040888963407ull;
		key = INC_KEY0 + ((s >> 33) & 3);
		if (txn_add(c, T_KV, key, 1, NULL) == DTXN_OK)
			x->commits++;
		else
			x->aborts++;
	}
}

struct lcore_arg {
	struct inc_ctx ctx[2];
	unsigned gid0;
	uint16_t cn;
};

static int
lcore_worker(void *arg)
{
	struct lcore_arg *a = arg;
	struct ut_coord_spec s[2] = { { co_inc, &a->ctx[0] }, { co_inc, &a->ctx[1] } };

	return ut_run_coords(g_sr.db, s, 2, a->cn, a->gid0, &g_worker_seq);
}

static void
test_two_lcores(void **state)
{
	/* two workers of one CN: the CN-side timestamp service is shared
	 * across lcores (several CNs: test_tso's test_cn_service_cns) */
	struct lcore_arg remote = { .ctx = { { .seed = 1 }, { .seed = 2 } }, .gid0 = 4,
				    .cn = N_MN };
	struct lcore_arg local = { .ctx = { { .seed = 3 }, { .seed = 4 } }, .gid0 = 0,
				   .cn = N_MN };
	uint64_t before = 0, after = 0, commits = 0, k;
	unsigned lc, i;

	(void)state;
	lc = rte_get_next_lcore(-1, 1, 0);
	assert_true(lc < RTE_MAX_LCORE);
	for (k = 0; k < 4; k++)
		before += mn_u64(&g_sr, T_KV, INC_KEY0 + k);
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
		const struct dtxn_table *t = tab(&g_sr, T_KV);
		uint16_t r;

		after += mn_u64(&g_sr, T_KV, INC_KEY0 + k);
		assert_int_equal(mn_cvt(&g_sr, T_KV, INC_KEY0 + k, 0)->lock, 0);
		for (r = 1; r < 3; r++) {
			assert_memory_equal(mn_cvt(&g_sr, T_KV, INC_KEY0 + k, r),
					    mn_cvt(&g_sr, T_KV, INC_KEY0 + k, 0), t->slot_size);
			assert_memory_equal(mn_vpkg(&g_sr, T_KV, INC_KEY0 + k, r),
					    mn_vpkg(&g_sr, T_KV, INC_KEY0 + k, 0), t->aux_size);
		}
	}
	assert_int_equal(after - before, commits);
}

/* Value regions allocated lazily: chunks, give-back, exhaustion (ut_txn.h). */
static void
test_aux_heap(void **state)
{
	(void)state;
	ut_aux_heap_run("motor", "utmotaux", &g_worker_seq, 16, 5); /* 4 loaded + 3 FAAs of 4 */
}

/* An MN process holding backups only formats them as the primary (ut_txn.h). */
static void
test_load_backups(void **state)
{
	(void)state;
	ut_load_backups_equal("motor", "utmotbk", 300);
}

/* A restarted coordinator's inserts take new chunks (ut_txn.h). */
static void
test_aux_restart(void **state)
{
	(void)state;
	ut_aux_restart_run("motor", "utmotauxr", &g_worker_seq);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_aux_heap),
		cmocka_unit_test(test_load_backups),
		cmocka_unit_test(test_aux_restart),
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_cell_layout),
		cmocka_unit_test(test_load_format),
		cmocka_unit_test(test_loader_moves_aux),
		cmocka_unit_test(test_pick),
		cmocka_unit_test(test_gc_wrap_rebuild),
		cmocka_unit_test(test_rw_replicated),
		cmocka_unit_test(test_snapshot_old_version),
		cmocka_unit_test(test_gc_version_gone),
		cmocka_unit_test(test_bar_by_slot),
		cmocka_unit_test(test_cell_masks),
		cmocka_unit_test(test_abs_formula),
		cmocka_unit_test(test_read_only_one_version),
		cmocka_unit_test(test_gc_oversized),
		cmocka_unit_test(test_early_abort),
		cmocka_unit_test(test_validation_lock_not_one),
		cmocka_unit_test(test_write_skew),
		cmocka_unit_test(test_snapshot_recheck),
		cmocka_unit_test(test_insert_delete_reinsert),
		cmocka_unit_test(test_deleted_hidden_from_mn_reads),
		cmocka_unit_test(test_slot_reuse),
		cmocka_unit_test(test_inserts_share_bucket_lock),
		cmocka_unit_test(test_abort_releases_only_held),
		cmocka_unit_test(test_oplog),
		cmocka_unit_test(test_decide_early),
		cmocka_unit_test(test_recover_superseded),
		cmocka_unit_test(test_verbs),
		cmocka_unit_test(test_two_lcores),
	};
	int rc;

	if (dtxn_unit_eal_init("ut_motor") != 0)
		return 1;
	rc = cmocka_run_group_tests(tests, group_setup, group_teardown);
	dtxn_unit_eal_fini();
	return rc;
}
