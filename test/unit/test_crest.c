/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CREST (drivers/cc/crest) on the shm fabric, model none: 2 MNs, 2
 * replicas. The record layout (header cacheline, packed cells, cacheline
 * versions, columns past the 20th merged), the lock bits (MSB = cell 0),
 * gather/scatter, the snapshot rule of Fig. 7 against a concurrent
 * writer's partial commit (pure functions on record images); then the
 * protocol: loaded records as the MN holds them, a commit's cells, ENs
 * and unlock, two txns writing disjoint cells of one record both commit
 * while overlapping cells conflict, a read that saw a cell change aborts
 * at validation while a change of another cell does not, and the
 * history's per-cell versions. Interleavings are forced with a shared
 * step counter; coordinators run as coroutines on the calling lcore.
 * Last, cache=cn on the sim fabric: two workers of one CN, stepped in
 * virtual time on this thread, share one record cache; cache=cn is
 * refused on shm.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <rte_lcore.h>
#include <rte_memory.h>

#include "crest_private.h"
#include "dtxn_fabric_sim.h"
#include "unit_eal.h"
#include "ut_txn.h"

#define N_MN 2
#define T_ROW 0     /* 4 cells of 8 B: a row of counters */
#define T_WIDE 1    /* 24 columns: 2 x 100 B, then 22 x 8 B (merged past the 20th) */
#define ROW_KEYS 16

struct row {
	uint64_t c[4];
};

static struct dtxn_db *g_db;
static struct dtxn_fabric *g_f;
static unsigned g_worker_seq;
static volatile int g_step;

#include "ut_cells.h"

static struct dtxn_table_def
wide_def(void)
{
	struct dtxn_table_def d = { .id = T_WIDE, .name = "wide", .value_size = 2 * 100 + 22 * 8,
				    .max_keys = 16, .n_columns = 24 };

	d.column_size[0] = 100;
	d.column_size[1] = 100;
	for (unsigned c = 2; c < 24; c++)
		d.column_size[c] = 8;
	return d;
}

/*
 * The db of a group: crest with options @p cc_options on fabric driver
 * @p driver (memzones named @p name; 2 workers per CN), its rows loaded.
 * @return 0, -1 (set-up failed), or dtxn_db_attach()'s error.
 */
static int
db_setup_on(const char *cc_options, const char *driver, const char *name)
{
	struct dtxn_db_conf dc = {
		.size = sizeof(dc), .protocol = "crest", .isolation = DTXN_ISO_SR,
		.n_mn = N_MN, .n_replicas = 2, .n_coords = 8,
		.log_bytes = 4096, .addr_cache_entries = 4096, .cc_options = cc_options,
		.n_cn = 1, .cn_workers = 2,
	};
	struct dtxn_table_def row = { .id = T_ROW, .name = "row", .value_size = 32,
				      .max_keys = 64, .n_columns = 4,
				      .column_size = { 8, 8, 8, 8 } };
	struct dtxn_table_def wide = wide_def();
	struct dtxn_fabric_conf fc = { .size = sizeof(fc), .driver = driver, .n_mn = N_MN,
				       .n_cn = 2, .socket_id = SOCKET_ID_ANY, .name = name };
	int rc = ut_db_open(&dc, (const struct dtxn_table_def *[]){ &row, &wide }, 2, &fc, &g_db,
			    &g_f);

	if (rc != 0)
		return rc;
	for (uint64_t k = 1; k <= ROW_KEYS; k++) {
		struct row v = { { k, k + 100, k + 200, k + 300 } };

		if (dtxn_db_load(g_db, T_ROW, k, &v) != 0)
			return -1;
	}
	return 0;
}

/* The db of a group on shm (db_setup_on()); 0 or -1. */
static int
db_setup(const char *cc_options)
{
	return db_setup_on(cc_options, "shm", "utcrest") != 0 ? -1 : 0;
}

static int
group_setup(void **state)
{
	(void)state;
	return db_setup(NULL);
}

/* Record-level CREST (cell=0): its false-abort classification. */
static int
group_setup_record(void **state)
{
	(void)state;
	return db_setup("cell=0");
}

/* Localized execution (local=1): the record cache of the test's lcore. */
static int
group_setup_local(void **state)
{
	(void)state;
	return db_setup("local=1");
}

/* Localized execution with RO mode from the cache (local=1,ro_cache=1). */
static int
group_setup_local_ro(void **state)
{
	(void)state;
	return db_setup("local=1,ro_cache=1");
}

/* cache=cn: the sim fabric, in virtual time from now on (the last group). */
static int
group_setup_cn(void **state)
{
	(void)state;
	dtxn_clock_set_virtual(dtxn_now_ns());
	return db_setup_on("local=1,cache=cn", "sim", "utcrestcn") != 0 ? -1 : 0;
}

static int
group_teardown(void **state)
{
	(void)state;
	dtxn_db_destroy(g_db);
	dtxn_fabric_close(g_f);
	return 0;
}

static void
run_coords(const struct ut_coord_spec *s, unsigned n)
{
	g_step = 0;
	assert_int_equal(ut_run_coords(g_db, s, n, N_MN, 0, &g_worker_seq), 0);
}

static struct crest_hdr *
mn_row(uint64_t key, uint16_t r)
{
	return ut_mn_slot(g_f, dtxn_db_catalog(g_db), T_ROW, key, r);
}

/* ------------------------------------------------------------------ */
/* Layout (pure)                                                      */
/* ------------------------------------------------------------------ */

static void
test_layout(void **state)
{
	struct dtxn_table_def row = { .value_size = 32, .n_columns = 4,
				      .column_size = { 8, 8, 8, 8 } };
	struct dtxn_table_def wide = wide_def();
	struct crest_layout lay;

	(void)state;
	/* header: Key, TableID at 0, Lock at 16, 20 ENs of 2 B at 24: one cacheline */
	assert_int_equal(offsetof(struct crest_hdr, lock), 16);
	assert_int_equal(offsetof(struct crest_hdr, en), 24);
	assert_int_equal(sizeof(struct crest_hdr), 64);
	/* lock bits: MSB = cell 0; cells 2 and 4 -> 0010 1000 ... (paper's example) */
	assert_int_equal(crest_lock_bits(DTXN_CELL(2) | DTXN_CELL(4)),
			 (UINT64_C(1) << 61) | (UINT64_C(1) << 59));
	assert_int_equal(crest_lock_bits(1) & CREST_LOCK_DELETED, 0);

	/* 4 cells of 8 B: [ver|8 B] x 4 packed in the line after the header */
	crest_layout_make(&row, true, &lay);
	assert_int_equal(lay.n_cells, 4);
	for (unsigned c = 0; c < 4; c++) {
		assert_int_equal(lay.rec_off[c], 64 + 16 * c);
		assert_int_equal(lay.n_lines[c], 1);
		assert_int_equal(crest_cell_span(&lay, c), 16);
	}
	assert_int_equal(lay.image_size, 128);
	/* record-level: one cell of 32 B */
	crest_layout_make(&row, false, &lay);
	assert_int_equal(lay.n_cells, 1);
	assert_int_equal(lay.val_len[0], 32);
	assert_int_equal(lay.image_size, 64 + 8 + 32);

	/* 100 B cells start a line and carry a version per line (2 lines);
	 * columns 19..23 merge into cell 19 */
	crest_layout_make(&wide, true, &lay);
	assert_int_equal(lay.n_cells, 20);
	assert_int_equal(lay.rec_off[0], 64);
	assert_int_equal(lay.n_lines[0], 2);
	assert_int_equal(lay.rec_off[1], 192);
	assert_int_equal(lay.n_lines[1], 2);
	assert_int_equal(lay.val_off[19], 200 + 17 * 8);
	assert_int_equal(lay.val_len[19], 5 * 8);
	for (unsigned c = 0; c < lay.n_cells; c++) {
		/* a cell of at most 56 B never crosses a cacheline */
		if (lay.n_lines[c] == 1)
			assert_true(lay.rec_off[c] / 64 ==
				    (lay.rec_off[c] + crest_cell_span(&lay, c) - 1) / 64);
		else
			assert_int_equal(lay.rec_off[c] % 64, 0);
		assert_int_equal(lay.rec_off[c] % 8, 0);
	}
	assert_int_equal(crest_cells_of(&wide, &lay, DTXN_CELL(23) | DTXN_CELL(0)),
			 DTXN_CELL(19) | DTXN_CELL(0));
}

/* ------------------------------------------------------------------ */
/* Snapshot rule (Fig. 7), on images                                  */
/* ------------------------------------------------------------------ */

static void
test_snapshot_rule(void **state)
{
	struct dtxn_table_def wide = wide_def();
	struct crest_layout lay;
	uint8_t val[wide.value_size], out[wide.value_size];
	uint64_t img[1024 / 8];
	struct crest_hdr *h = (struct crest_hdr *)img;
	const uint32_t all = (1u << 20) - 1;

	(void)state;
	crest_layout_make(&wide, true, &lay);
	assert_true(lay.image_size <= sizeof(img));
	memset(img, 0, sizeof(img));
	for (unsigned i = 0; i < wide.value_size; i++)
		val[i] = (uint8_t)(i * 7 + 1);
	crest_scatter(&lay, img, val, all);
	memset(out, 0, sizeof(out));
	crest_gather(&lay, img, out, all);
	assert_memory_equal(out, val, sizeof(val));
	assert_int_equal(crest_snapshot_check(&lay, img, all, 0), DTXN_OK);

	/* a concurrent writer of cell 0 (2 lines) has written its first
	 * line only (EN 1), not its second line nor the header's EN: torn */
	*crest_line_ver(img, &lay, 0, 0) = CREST_VER(1, 77);
	assert_int_equal(crest_snapshot_check(&lay, img, DTXN_CELL(0), 0),
			 DTXN_ABORT(DTXN_ABORT_VALIDATION));
	/* ... a reader of other cells is not disturbed */
	assert_int_equal(crest_snapshot_check(&lay, img, all & ~DTXN_CELL(0), 0), DTXN_OK);
	/* both lines written, header EN not yet: still refused */
	*crest_line_ver(img, &lay, 0, 1) = CREST_VER(1, 77);
	assert_int_equal(crest_snapshot_check(&lay, img, DTXN_CELL(0), 0),
			 DTXN_ABORT(DTXN_ABORT_VALIDATION));
	/* EN written, lock still held by the writer: a locked cell */
	h->en[0] = 1;
	assert_int_equal(crest_snapshot_check(&lay, img, DTXN_CELL(0), CREST_LOCK_BIT(0)),
			 DTXN_ABORT(DTXN_ABORT_LOCKED_READ));
	/* another cell's lock does not matter to a reader of cell 0 */
	assert_int_equal(crest_snapshot_check(&lay, img, DTXN_CELL(0), CREST_LOCK_BIT(1)),
			 DTXN_OK);
	/* unlocked: consistent */
	assert_int_equal(crest_snapshot_check(&lay, img, all, 0), DTXN_OK);
}

/* ------------------------------------------------------------------ */
/* The protocol                                                       */
/* ------------------------------------------------------------------ */

/* A commit writes its cell, bumps its EN, stamps its id and unlocks. */
static void
test_commit_cells(void **state)
{
	struct cell_arg a = { .key = 1, .cell = 2 };
	struct ut_coord_spec s = { co_cell_inc, &a };
	struct dtxn_table_def row = { .value_size = 32, .n_columns = 4,
				      .column_size = { 8, 8, 8, 8 } };
	struct crest_layout lay;
	struct row v;

	(void)state;
	crest_layout_make(&row, true, &lay);
	run_coords(&s, 1);
	assert_int_equal(a.rc, DTXN_OK);
	for (uint16_t r = 0; r < 2; r++) {
		struct crest_hdr *h = mn_row(1, r);

		assert_non_null(h);
		assert_int_equal(h->lock, 0);
		assert_int_equal(h->en[2], 1);
		assert_int_equal(h->en[1], 0);
		assert_int_equal(*crest_line_ver(h, &lay, 2, 0), CREST_VER(1, a.id));
		assert_int_equal(*crest_line_ver(h, &lay, 1, 0), 0);
	}
	assert_int_equal(dtxn_db_get(g_db, T_ROW, 1, &v), 0);
	assert_int_equal(v.c[2], 1 + 200 + 1);
	assert_int_equal(v.c[1], 1 + 100);
}

/* Two txns update different cells of one record concurrently: both commit. */
static void
test_disjoint_cells(void **state)
{
	struct cell_arg a = { .key = 2, .cell = 0, .wait_for = 1, .then = 0 };
	struct cell_arg b = { .key = 2, .cell = 3, .wait_for = 0, .then = 1 };
	struct ut_coord_spec s[2] = { { co_cell_inc, &a }, { co_cell_inc, &b } };
	struct row v;

	(void)state;
	run_coords(s, 2);
	assert_int_equal(a.rc, DTXN_OK);
	assert_int_equal(b.rc, DTXN_OK);
	assert_int_equal(dtxn_db_get(g_db, T_ROW, 2, &v), 0);
	assert_int_equal(v.c[0], 2 + 1);
	assert_int_equal(v.c[3], 2 + 300 + 1);
	assert_int_equal(mn_row(2, 0)->lock, 0);
}

/* The same cell: the second lock fails (no waiting), the record stays as the first left it. */
static void
test_same_cell_conflicts(void **state)
{
	struct cell_arg a = { .key = 3, .cell = 1, .wait_for = 1, .then = 0 };
	struct cell_arg b = { .key = 3, .cell = 1, .wait_for = 0, .then = 1 };
	struct ut_coord_spec s[2] = { { co_cell_inc, &a }, { co_cell_inc, &b } };
	struct row v;

	(void)state;
	run_coords(s, 2);
	assert_int_equal(a.rc, DTXN_OK);
	assert_int_equal(b.rc, DTXN_ABORT(DTXN_ABORT_LOCK_CONFLICT));
	assert_int_equal(dtxn_db_get(g_db, T_ROW, 3, &v), 0);
	assert_int_equal(v.c[1], 3 + 100 + 1);
	assert_int_equal(mn_row(3, 0)->lock, 0);
}

/* A txn that read cell 1 while writing cell 0 aborts if cell 1 changed before its commit. */
static void
test_read_cell_validated(void **state)
{
	struct cell_arg a = { .key = 4, .cell = 0, .rd = DTXN_CELL(1), .wait_for = 2, .then = 1 };
	struct cell_arg b = { .key = 4, .cell = 1, .wait_for = 1, .then = 0 };
	struct cell_arg c = { .key = 5, .cell = 0, .rd = DTXN_CELL(1), .wait_for = 2, .then = 1 };
	struct cell_arg d = { .key = 5, .cell = 2, .wait_for = 1, .then = 0 };
	struct ut_coord_spec s1[2] = { { co_cell_inc, &a }, { co_cell_inc, &b } };
	struct ut_coord_spec s2[2] = { { co_cell_inc, &c }, { co_cell_inc, &d } };

	(void)state;
	run_coords(s1, 2); /* b commits cell 1 between a's execute and commit */
	assert_int_equal(b.rc, DTXN_OK);
	assert_int_equal(a.rc, DTXN_ABORT(DTXN_ABORT_VALIDATION));
	assert_int_equal(mn_row(4, 0)->lock, 0);
	run_coords(s2, 2); /* d commits cell 2, which c did not read: no abort */
	assert_int_equal(d.rc, DTXN_OK);
	assert_int_equal(c.rc, DTXN_OK);
}

struct vers_arg {
	uint64_t key;
	int rc;
	struct dtxn_cell_vers vers;
};

/* Reads a row (every cell) and keeps the per-cell versions execute saw. */
static void
co_read_vers(struct dtxn_coord *c, void *arg)
{
	struct vers_arg *a = arg;
	struct dtxn_txn *t = dtxn_txn_begin(c, DTXN_TXN_RO);
	struct dtxn_item *it = dtxn_txn_add_ro(t, T_ROW, a->key);

	a->rc = dtxn_txn_execute(t);
	if (a->rc == DTXN_OK)
		a->vers = *it->cell_vers;
	if (a->rc == DTXN_OK)
		a->rc = dtxn_txn_commit(t);
}

/* The history sees cells: per-cell versions name each cell's last writer. */
static void
test_cell_versions(void **state)
{
	struct cell_arg a = { .key = 6, .cell = 1 };
	struct cell_arg b = { .key = 6, .cell = 3 };
	struct vers_arg r = { .key = 6 };
	struct ut_coord_spec s1 = { co_cell_inc, &a }, s2 = { co_cell_inc, &b };
	struct ut_coord_spec s3 = { co_read_vers, &r };

	(void)state;
	run_coords(&s1, 1);
	run_coords(&s2, 1);
	run_coords(&s3, 1);
	assert_int_equal(a.rc, DTXN_OK);
	assert_int_equal(b.rc, DTXN_OK);
	assert_int_equal(r.rc, DTXN_OK);
	assert_int_equal(r.vers.rd, 0xf);
	assert_int_equal(r.vers.wr, 0);
	assert_int_equal(r.vers.ver[0], 0);     /* as loaded */
	assert_int_equal(r.vers.ver[1], a.id);
	assert_int_equal(r.vers.ver[2], 0);
	assert_int_equal(r.vers.ver[3], b.id);
}

/* ------------------------------------------------------------------ */
/* Parallel commits: the redo entry, last-writer-wins                 */
/* ------------------------------------------------------------------ */

/* A commit first WRITEs its redo entry to its log segment on every MN it writes to. */
static void
test_redo_entry(void **state)
{
	struct cell_arg a = { .key = 3, .cell = 1 };
	struct ut_coord_spec s = { co_cell_inc, &a };
	const struct dtxn_catalog *cat = dtxn_db_catalog(g_db);
	struct dtxn_table_def row = { .value_size = 32, .n_columns = 4,
				      .column_size = { 8, 8, 8, 8 } };
	struct crest_layout lay;

	(void)state;
	crest_layout_make(&row, true, &lay);
	run_coords(&s, 1);
	assert_int_equal(a.rc, DTXN_OK);
	for (uint16_t mn = 0; mn < N_MN; mn++) {
		dtxn_raddr_t ra = dtxn_store_log_raddr(cat, a.gid, mn);
		const char *e = (const char *)dtxn_fabric_mn_base(g_f, mn) + DTXN_RADDR_OFF(ra);
		const struct crest_redo_hdr *h = (const void *)e;
		const struct crest_redo_mod *m = (const void *)(h + 1);
		const struct crest_hdr *rec = mn_row(3, mn == cat->tables[T_ROW].mn[0] ? 0 : 1);
		uint32_t span = crest_cell_span(&lay, 1);
		uint64_t trailer;

		assert_int_equal(h->txn_id, a.id);
		assert_int_equal(h->n_mods, 1);
		assert_int_equal(h->n_deps, 0);
		assert_int_equal(h->bytes, sizeof(*h) + sizeof(*m) + RTE_ALIGN_CEIL(span, 8) + 8);
		assert_int_equal(m->table_id, T_ROW);
		assert_int_equal(m->key, 3);
		assert_int_equal(m->cells, 1u << 1);
		assert_int_equal(m->kind, DTXN_ITEM_RW);
		assert_int_equal(m->len, span);
		/* the modification is the cell as the commit wrote it: version and value */
		assert_memory_equal(m + 1, (const char *)rec + lay.rec_off[1], span);
		assert_int_equal(*crest_line_ver((void *)(uintptr_t)rec, &lay, 1, 0),
				 CREST_VER(rec->en[1], a.id));
		memcpy(&trailer, e + h->bytes - 8, 8);
		assert_int_equal(trailer, a.id);
	}
}

/* An empty writer count that @p n writers have joined. */
static void
lww_start(struct crest_lww *o, unsigned n)
{
	memset(o, 0, sizeof(*o));
	while (n-- > 0)
		crest_lww_join(o);
}

/* Last-writer-wins: writers decide in every order; the one reaching zero acts. */
static void
test_lww_orders(void **state)
{
	static const char va[] = "A", vb[] = "B";
	struct crest_lww o;

	(void)state;
	/* one writer: it writes its own version */
	lww_start(&o, 1);
	assert_int_equal(crest_lww_leave(&o, true, 1, va), CREST_LWW_WRITE);
	assert_ptr_equal(o.best, va);
	/* A (seq 1) then B (seq 2), decided in order: B writes its version */
	lww_start(&o, 2);
	assert_int_equal(crest_lww_leave(&o, true, 1, va), CREST_LWW_WAIT);
	assert_int_equal(crest_lww_leave(&o, true, 2, vb), CREST_LWW_WRITE);
	assert_ptr_equal(o.best, vb);
	/* B decided first: A is the last writer and writes B's newer version */
	lww_start(&o, 2);
	assert_int_equal(crest_lww_leave(&o, true, 2, vb), CREST_LWW_WAIT);
	assert_int_equal(crest_lww_leave(&o, true, 1, va), CREST_LWW_WRITE);
	assert_ptr_equal(o.best, vb);
	/* the last writer aborts: it still writes A's committed version */
	lww_start(&o, 2);
	assert_int_equal(crest_lww_leave(&o, true, 1, va), CREST_LWW_WAIT);
	assert_int_equal(crest_lww_leave(&o, false, 2, vb), CREST_LWW_WRITE);
	assert_ptr_equal(o.best, va);
	/* every writer aborts: the last one only unlocks */
	lww_start(&o, 2);
	assert_int_equal(crest_lww_leave(&o, false, 1, va), CREST_LWW_WAIT);
	assert_int_equal(crest_lww_leave(&o, false, 2, vb), CREST_LWW_RELEASE);
	assert_null(o.best);
	/* a writer joining after others decided delays the write to itself */
	lww_start(&o, 2);
	assert_int_equal(crest_lww_leave(&o, true, 1, va), CREST_LWW_WAIT);
	crest_lww_join(&o);
	assert_int_equal(crest_lww_leave(&o, false, 2, vb), CREST_LWW_WAIT);
	assert_int_equal(crest_lww_leave(&o, true, 3, vb), CREST_LWW_WRITE);
	assert_ptr_equal(o.best, vb);
	assert_int_equal(o.best_seq, 3);
}

/* ------------------------------------------------------------------ */
/* Record cache of localized execution (cache.c)                      */
/* ------------------------------------------------------------------ */

/* A record image of table row (4 cells of 8 B) whose cell c holds value v[c], version ts[c]. */
static void
lc_image(const struct crest_layout *lay, void *rec, const uint64_t v[4], uint64_t ts)
{
	memset(rec, 0, lay->image_size);
	for (unsigned c = 0; c < 4; c++) {
		*crest_line_ver(rec, lay, c, 0) = CREST_VER(0, ts);
		memcpy((char *)rec + lay->rec_off[c] + 8, &v[c], 8);
	}
}

static uint64_t
lc_cell(const struct crest_layout *lay, const void *rec, unsigned c)
{
	uint64_t v;

	memcpy(&v, (const char *)rec + lay->rec_off[c] + 8, 8);
	return v;
}

static struct crest_lc *
lc_setup(struct crest_layout *lay)
{
	struct dtxn_table_def row = { .id = T_ROW, .name = "row", .value_size = 32,
				      .max_keys = 16, .n_columns = 4,
				      .column_size = { 8, 8, 8, 8 } };
	struct crest_lc *lc;

	crest_layout_make(&row, true, lay);
	lc = crest_lc_create("ut_lc", 16, lay->image_size, 64, (int)rte_socket_id());
	assert_non_null(lc);
	return lc;
}

/* Versions: appended per writer, read newest not aborted per cell, composed per cell. */
static void
test_lc_versions(void **state)
{
	static const uint64_t base[4] = { 10, 20, 30, 40 }, w1[4] = { 11, 20, 30, 40 },
			      w2[4] = { 10, 22, 30, 40 }, w3[4] = { 13, 20, 30, 40 };
	struct crest_lc_txn a = { 0 }, b = { 0 }, c = { 0 }, r = { 0 };
	struct crest_lc_seen seen = { 0 };
	struct crest_layout lay;
	struct crest_lc *lc = lc_setup(&lay);
	struct crest_lc_obj *o = crest_lc_get(lc, T_ROW, 1);
	char rec[256];
	int64_t s1, s2, s3;
	uint32_t out;

	(void)state;
	assert_non_null(o);
	assert_ptr_equal(crest_lc_get(lc, T_ROW, 1), o); /* one object per record */
	lc_image(&lay, rec, base, 5);
	crest_lc_fill(lc, o, &lay, rec, 0x100, 0);
	assert_true(o->ready);
	o->mn_bits = crest_lock_bits(DTXN_CELL(0) | DTXN_CELL(1));
	crest_lc_txn_begin(&a, 1);
	crest_lc_txn_begin(&b, 2);
	crest_lc_txn_begin(&c, 3);
	crest_lc_txn_begin(&r, 4);
	a.ts = 1, b.ts = 2, c.ts = 3, r.ts = 4;
	lc_image(&lay, rec, w1, 1);
	s1 = crest_lc_append(lc, o, &a, &lay, rec, DTXN_CELL(0));
	lc_image(&lay, rec, w2, 2);
	s2 = crest_lc_append(lc, o, &b, &lay, rec, DTXN_CELL(1));
	lc_image(&lay, rec, w3, 3);
	s3 = crest_lc_append(lc, o, &c, &lay, rec, DTXN_CELL(0));
	assert_true(s1 > 0 && s2 > s1 && s3 > s2);
	/* the reader sees cell 0 of c, cell 1 of b, cell 2 of the base */
	memset(rec, 0, sizeof(rec));
	assert_int_equal(crest_lc_read(o, &r, &lay, DTXN_CELL(0) | DTXN_CELL(1) | DTXN_CELL(2),
				       rec, &seen), 0);
	assert_int_equal(lc_cell(&lay, rec, 0), 13);
	assert_int_equal(lc_cell(&lay, rec, 1), 22);
	assert_int_equal(lc_cell(&lay, rec, 2), 30);
	assert_int_equal(seen.loc_cells, DTXN_CELL(0) | DTXN_CELL(1)); /* cell 2 is not locked here */
	assert_int_equal(r.n_deps, 2); /* b and c, undecided */
	/* c aborts: cell 0 falls back to a's version */
	crest_lc_decide(o, (uint64_t)s3, false, true);
	assert_int_equal(crest_lc_read(o, &r, &lay, DTXN_CELL(0), rec, &seen), 0);
	assert_int_equal(lc_cell(&lay, rec, 0), 11);
	/* compose: a and b committed, c aborted -> cells 0 (a) and 1 (b), next ENs */
	crest_lc_decide(o, (uint64_t)s1, true, true);
	crest_lc_decide(o, (uint64_t)s2, true, true);
	out = crest_lc_compose(lc, o, &lay, NULL, NULL);
	assert_int_equal(out, DTXN_CELL(0) | DTXN_CELL(1));
	assert_int_equal(lc_cell(&lay, o->base, 0), 11);
	assert_int_equal(lc_cell(&lay, o->base, 1), 22);
	assert_int_equal(((struct crest_hdr *)o->base)->en[0], 1);
	assert_int_equal(CREST_VER_EN(*crest_line_ver(o->base, &lay, 0, 0)), 1);
	assert_int_equal(CREST_VER_TS(*crest_line_ver(o->base, &lay, 0, 0)), 1); /* a's id */
	assert_int_equal(o->n_vers, 0);
	assert_int_equal(o->mn_bits, 0);
	assert_int_equal(o->lock_gen, 1);
	crest_lc_put(lc, o);
	crest_lc_put(lc, o);
	crest_lc_destroy(lc);
}

/*
 * cache=part: a cache holds only the records homed on its partition (the
 * key's locality field modulo the partitions), refusing the others as a
 * full cache does (the caller takes the MN path); unpartitioned, every
 * record.
 */
static void
test_lc_partition(void **state)
{
	struct crest_layout lay;
	struct crest_lc *lc = lc_setup(&lay);
	struct crest_lc_obj *o;

	(void)state;
	/* unpartitioned (the default, and n_parts 1): every record */
	for (uint64_t s = 0; s < 8; s++)
		assert_true(crest_lc_homes(lc, dtxn_key_make(7, s)));
	crest_lc_partition(lc, 0, 1);
	assert_true(crest_lc_homes(lc, dtxn_key_make(7, 3)));
	/* partition 1 of 4: shards 1, 5, 9, ... whatever the key's id */
	crest_lc_partition(lc, 1, 4);
	for (uint64_t s = 0; s < 12; s++) {
		const uint64_t key = dtxn_key_make(100 + s, s);

		assert_int_equal(crest_lc_homes(lc, key), s % 4 == 1);
		o = crest_lc_get(lc, T_ROW, key);
		assert_int_equal(o != NULL, s % 4 == 1);
		if (o != NULL)
			crest_lc_put(lc, o);
	}
	/* the shard field's top value wraps like any other */
	assert_int_equal(crest_lc_homes(lc, dtxn_key_make(1, DTXN_KEY_SHARD_MASK)),
			 DTXN_KEY_SHARD_MASK % 4 == 1);
	crest_lc_destroy(lc);
}

/* Dependencies: a read of an undecided version waits for it; its abort cascades. */
static void
test_lc_cascade(void **state)
{
	static const uint64_t v[4] = { 1, 2, 3, 4 };
	struct crest_lc_txn w = { 0 }, d = { 0 }, e = { 0 };
	struct crest_lc_seen seen = { 0 };
	struct crest_layout lay;
	struct crest_lc *lc = lc_setup(&lay);
	struct crest_lc_obj *o = crest_lc_get(lc, T_ROW, 2);
	char rec[256];
	int64_t s;

	(void)state;
	lc_image(&lay, rec, v, 0);
	crest_lc_fill(lc, o, &lay, rec, 0x200, 0);
	o->mn_bits = crest_lock_bits(DTXN_CELL(3));
	crest_lc_txn_begin(&w, 10);
	w.ts = 1;
	s = crest_lc_append(lc, o, &w, &lay, rec, DTXN_CELL(3));
	assert_true(s > 0);
	/* d reads w's version: a dependency, undecided */
	crest_lc_txn_begin(&d, 11);
	assert_int_equal(crest_lc_read(o, &d, &lay, DTXN_CELL(3), rec, &seen), 0);
	assert_int_equal(d.n_deps, 1);
	assert_false(crest_lc_deps_decided(&d));
	/* e reads cell 2 only (not written by w): no dependency */
	crest_lc_txn_begin(&e, 12);
	assert_int_equal(crest_lc_read(o, &e, &lay, DTXN_CELL(2), rec, &seen), 0);
	assert_int_equal(e.n_deps, 0);
	/* w aborts: d is doomed, its dependency decided; e is not touched */
	crest_lc_decide(o, (uint64_t)s, false, true);
	crest_lc_txn_end(&w, false);
	assert_true(crest_lc_deps_decided(&d));
	assert_true(d.doomed);
	assert_false(e.doomed);
	/* a commit dooms nobody; a dependency on a txn that ended is decided */
	crest_lc_txn_begin(&w, 13);
	w.ts = 2;
	s = crest_lc_append(lc, o, &w, &lay, rec, DTXN_CELL(3));
	crest_lc_txn_begin(&d, 14);
	assert_int_equal(crest_lc_read(o, &d, &lay, DTXN_CELL(3), rec, &seen), 0);
	crest_lc_decide(o, (uint64_t)s, true, true);
	crest_lc_txn_end(&w, true);
	assert_true(crest_lc_deps_decided(&d));
	assert_false(d.doomed);
	crest_lc_txn_begin(&w, 15); /* the coordinator moved on: still decided */
	assert_true(crest_lc_deps_decided(&d));
	crest_lc_drop(lc, o);
	crest_lc_put(lc, o);
	crest_lc_destroy(lc);
}

/* Local 2PL and the TS_exec rules: exclusive vs shared, upgrade, newer tags abort. */
static void
test_lc_lock_ts(void **state)
{
	static const uint64_t v[4] = { 0 };
	struct crest_lc_txn a = { 0 }, b = { 0 };
	struct crest_lc_seen seen = { 0 };
	struct crest_layout lay;
	struct crest_lc *lc = lc_setup(&lay);
	struct crest_lc_obj *o = crest_lc_get(lc, T_ROW, 3);
	char rec[256];

	(void)state;
	crest_lc_txn_begin(&a, 1);
	crest_lc_txn_begin(&b, 2);
	/* shared + shared; exclusive waits for both */
	assert_int_equal(crest_lc_lock(o, &a, false, 0), 0);
	assert_int_equal(crest_lc_lock(o, &b, false, 0), 0);
	assert_int_equal(crest_lc_lock(o, &a, true, 1), -EBUSY); /* two sharers: no upgrade */
	crest_lc_unlock(o, &b, false);
	assert_int_equal(crest_lc_lock(o, &a, true, 1), 0);      /* the only sharer upgrades */
	assert_int_equal(crest_lc_lock(o, &b, false, 0), -EBUSY);
	assert_int_equal(crest_lc_lock(o, &a, false, 2), 0);     /* held already */
	crest_lc_unlock(o, &a, true);
	assert_int_equal(crest_lc_lock(o, &b, true, 0), 0);
	crest_lc_unlock(o, &b, true);
	/* TS_exec: b (ts 2) wrote cell 0; a (ts 1) may neither read nor write it */
	lc_image(&lay, rec, v, 0);
	crest_lc_fill(lc, o, &lay, rec, 0x300, 0);
	o->mn_bits = crest_lock_bits(DTXN_CELL(0) | DTXN_CELL(1));
	a.ts = 1;
	b.ts = 2;
	assert_true(crest_lc_append(lc, o, &b, &lay, rec, DTXN_CELL(0)) > 0);
	assert_int_equal(crest_lc_read(o, &a, &lay, DTXN_CELL(0), rec, &seen), -EAGAIN);
	assert_int_equal(crest_lc_append(lc, o, &a, &lay, rec, DTXN_CELL(0)), -EAGAIN);
	/* b read cell 1: a (older) may not write it after; a txn of no TS_exec yet reads */
	crest_lc_note_read(o, &b, DTXN_CELL(1));
	assert_int_equal(crest_lc_append(lc, o, &a, &lay, rec, DTXN_CELL(1)), -EAGAIN);
	a.ts = 0;
	assert_int_equal(crest_lc_read(o, &a, &lay, DTXN_CELL(0), rec, &seen), 0);
	crest_lc_drop(lc, o);
	crest_lc_put(lc, o);
	crest_lc_destroy(lc);
}

/* ------------------------------------------------------------------ */
/* Localized execution (local=1): coordinators of one lcore           */
/* ------------------------------------------------------------------ */

/* READs (@p op DTXN_WR_READ) or other verbs the coordinator's worker has posted to the MNs. */
static uint64_t
co_ops(const struct dtxn_coord *c, unsigned op)
{
	uint64_t n = 0;

	for (uint16_t mn = 0; mn < N_MN; mn++)
		n += dtxn_qp_counters(c->worker->qp[mn])->ops[op];
	return n;
}

struct local_arg {
	uint64_t key[2];    /* rows whose cell 0 it increments (key[1] 0: one row) */
	int wait_before;    /* step to wait for before it begins */
	int then;           /* step to set once its block ended */
	int wait_for;       /* step to wait for before it ends */
	bool abort;         /* roll back instead of committing */
	bool split;         /* key[1] in a second execute of the block, after the others ran a while */
	void (*hook)(void); /* called just before it ends, if set */
	int rc;
	uint64_t seen;      /* cell 0 of key[0] as read */
	uint64_t exec_ops;  /* READs and masked CASes its worker posted during its execute */
};

/* Increments cell 0 of one or two rows in one block, ends it, pauses, then commits or rolls back. */
static void
co_local_inc(struct dtxn_coord *c, void *arg)
{
	struct local_arg *a = arg;
	struct dtxn_item *it[2] = { NULL, NULL };
	struct dtxn_txn *t;

	ut_wait_step(c, &g_step, a->wait_before);
	t = dtxn_txn_begin(c, DTXN_TXN_RW);
	for (unsigned k = 0; k < 2 && a->key[k] != 0; k++) {
		if (k == 1 && a->split) {
			a->rc = dtxn_txn_execute(t);
			g_step = RTE_MAX(g_step, 1);
			for (unsigned y = 0; y < 64; y++) /* B takes 7, then waits for 8 */
				dtxn_co_yield_lc(dtxn_coord_co(c));
			if (a->rc != DTXN_OK)
				break;
		}
		it[k] = dtxn_txn_add_rw_cells(t, T_ROW, a->key[k], 0, DTXN_CELL(0));
	}
	if (a->rc == DTXN_OK) {
		const uint64_t ops = co_ops(c, DTXN_WR_READ) + co_ops(c, DTXN_WR_MASKED_CAS);

		a->rc = dtxn_txn_execute(t);
		a->exec_ops = co_ops(c, DTXN_WR_READ) + co_ops(c, DTXN_WR_MASKED_CAS) - ops;
	}
	for (unsigned k = 0; k < 2 && a->rc == DTXN_OK && it[k] != NULL; k++)
		((struct row *)dtxn_item_value(it[k]))->c[0]++;
	if (a->rc == DTXN_OK) {
		a->seen = ((struct row *)dtxn_item_value(it[0]))->c[0] - 1;
		a->rc = dtxn_txn_block_end(t);
	}
	if (g_step < a->then)
		g_step = a->then;
	ut_wait_step(c, &g_step, a->wait_for);
	if (a->hook != NULL)
		a->hook();
	if (a->rc == DTXN_OK && a->abort) {
		dtxn_txn_abort(t, DTXN_ABORT_APP);
		a->rc = DTXN_ABORT(DTXN_ABORT_APP);
	} else if (a->rc == DTXN_OK) {
		a->rc = dtxn_txn_commit(t);
	}
	g_step++;
}

/* Cell 0 of row @p key on replica @p r. */
static uint64_t
mn_cell0(uint64_t key, uint16_t r)
{
	struct dtxn_table_def row = { .value_size = 32, .n_columns = 4,
				      .column_size = { 8, 8, 8, 8 } };
	struct crest_layout lay;
	uint64_t v;

	crest_layout_make(&row, true, &lay);
	memcpy(&v, (const char *)mn_row(key, r) + lay.rec_off[0] + 8, 8);
	return v;
}

/*
 * B reads A's uncommitted version (a local dependency) and commits after
 * A: B is the last writer, so one write-back carries both increments (one
 * EN step), and the MN lock is given back.
 */
static void
test_local_chain(void **state)
{
	struct local_arg a = { .key = { 3 }, .then = 1, .wait_for = 2 };
	struct local_arg b = { .key = { 3 }, .wait_before = 1, .then = 2, .wait_for = 3 };
	struct ut_coord_spec s[2] = { { co_local_inc, &a }, { co_local_inc, &b } };

	(void)state;
	run_coords(s, 2);
	assert_int_equal(a.rc, DTXN_OK);
	assert_int_equal(b.rc, DTXN_OK);
	assert_int_equal(a.seen, 3);
	assert_int_equal(b.seen, 4); /* A's version, before A committed */
	for (uint16_t r = 0; r < 2; r++) {
		assert_int_equal(mn_cell0(3, r), 5);
		assert_int_equal(mn_row(3, r)->lock, 0);
		assert_int_equal(mn_row(3, r)->en[0], 1); /* one write-back for both */
	}
}

/* A rolls back after B read its version: B aborts too (cascade); the MN row is untouched and unlocked. */
static void
test_local_cascade(void **state)
{
	struct local_arg a = { .key = { 4 }, .then = 1, .wait_for = 2, .abort = true };
	struct local_arg b = { .key = { 4 }, .wait_before = 1, .then = 2, .wait_for = 2 };
	struct ut_coord_spec s[2] = { { co_local_inc, &a }, { co_local_inc, &b } };

	(void)state;
	run_coords(s, 2);
	assert_int_equal(a.rc, DTXN_ABORT(DTXN_ABORT_APP));
	assert_int_equal(b.seen, 5);
	assert_int_equal(b.rc, DTXN_ABORT(DTXN_ABORT_VALIDATION));
	for (uint16_t r = 0; r < 2; r++) {
		assert_int_equal(mn_cell0(4, r), 4);
		assert_int_equal(mn_row(4, r)->lock, 0);
		assert_int_equal(mn_row(4, r)->en[0], 0);
	}
}

/*
 * Local 2PL in (TableID, Key) order: A adds rows 6 then 5, B rows 5 then
 * 6, both started at once: each takes 5 before 6, so one waits for the
 * other instead of deadlocking, and both commit.
 */
static void
test_local_lock_order(void **state)
{
	struct local_arg a = { .key = { 6, 5 } };
	struct local_arg b = { .key = { 5, 6 } };
	struct ut_coord_spec s[2] = { { co_local_inc, &a }, { co_local_inc, &b } };

	(void)state;
	run_coords(s, 2);
	assert_int_equal(a.rc, DTXN_OK);
	assert_int_equal(b.rc, DTXN_OK);
	/* serial: A then B (A sees row 6 at 6, B row 5 at 6) or B then A */
	assert_true((a.seen == 6 && b.seen == 6) || (a.seen == 7 && b.seen == 5));
	for (uint64_t k = 5; k <= 6; k++) {
		assert_int_equal(mn_cell0(k, 0), k + 2);
		assert_int_equal(mn_row(k, 0)->lock, 0);
	}
}

/*
 * A takes row 8 and, in a second execute of the same block, row 7; B
 * takes 7 and waits for 8 in between. A may not wait for 7 while holding
 * 8 (it orders after): it aborts lock_conflict instead of deadlocking,
 * and B commits.
 */
static void
test_local_no_deadlock(void **state)
{
	struct local_arg a = { .key = { 8, 7 }, .split = true };
	struct local_arg b = { .key = { 7, 8 }, .wait_before = 1 };
	struct ut_coord_spec s[2] = { { co_local_inc, &a }, { co_local_inc, &b } };

	(void)state;
	run_coords(s, 2);
	assert_int_equal(a.rc, DTXN_ABORT(DTXN_ABORT_LOCK_CONFLICT));
	assert_int_equal(b.rc, DTXN_OK);
	assert_int_equal(mn_cell0(7, 0), 8);
	assert_int_equal(mn_cell0(8, 0), 9);
	assert_int_equal(mn_row(8, 0)->lock, 0);
}

/* ------------------------------------------------------------------ */
/* False aborts, record-level (cell=0; false_abort.c)                 */
/* ------------------------------------------------------------------ */

/* A lock conflict between writers of disjoint cells is false; of one cell, true. */
static void
test_false_lock(void **state)
{
	struct cell_arg a = { .key = 6, .cell = 0, .wait_for = 1, .then = 0 };
	struct cell_arg b = { .key = 6, .cell = 3, .wait_for = 0, .then = 1 };
	struct cell_arg c = { .key = 7, .cell = 2, .wait_for = 1, .then = 0 };
	struct cell_arg d = { .key = 7, .cell = 2, .wait_for = 0, .then = 1 };
	struct ut_coord_spec s1[2] = { { co_cell_inc, &a }, { co_cell_inc, &b } };
	struct ut_coord_spec s2[2] = { { co_cell_inc, &c }, { co_cell_inc, &d } };

	(void)state;
	run_coords(s1, 2);
	assert_int_equal(a.rc, DTXN_OK);
	assert_false(a.false_abort);
	assert_int_equal(b.rc, DTXN_ABORT(DTXN_ABORT_LOCK_CONFLICT)); /* record-level */
	assert_true(b.false_abort);
	assert_int_equal(mn_row(6, 0)->lock, 0); /* shadow bits released with the record's */
	run_coords(s2, 2);
	assert_int_equal(c.rc, DTXN_OK);
	assert_int_equal(d.rc, DTXN_ABORT(DTXN_ABORT_LOCK_CONFLICT));
	assert_false(d.false_abort);
	assert_int_equal(mn_row(7, 0)->lock, 0);
}

/*
 * A reader of cell 1 validates after a writer of cell 2 committed: the
 * record's EN changed (validation abort), cell 1's shadow EN did not:
 * false. After a writer of cell 1: true.
 */
static void
test_false_validation(void **state)
{
	struct cell_arg r1 = { .key = 8, .rd = DTXN_CELL(1), .wait_for = 1 };
	struct cell_arg w1 = { .key = 8, .cell = 2 };
	struct cell_arg r2 = { .key = 9, .rd = DTXN_CELL(1), .wait_for = 1 };
	struct cell_arg w2 = { .key = 9, .cell = 1 };
	struct ut_coord_spec s1[2] = { { co_cell_read, &r1 }, { co_cell_inc, &w1 } };
	struct ut_coord_spec s2[2] = { { co_cell_read, &r2 }, { co_cell_inc, &w2 } };

	(void)state;
	run_coords(s1, 2);
	assert_int_equal(w1.rc, DTXN_OK);
	assert_int_equal(r1.rc, DTXN_ABORT(DTXN_ABORT_VALIDATION));
	assert_true(r1.false_abort);
	/* the writer bumped the record's EN and cell 2's shadow EN (en[3]), in one EN WRITE */
	assert_int_equal(mn_row(8, 1)->en[0], 1);
	assert_int_equal(mn_row(8, 1)->en[3], 1);
	assert_int_equal(mn_row(8, 1)->en[2], 0);
	run_coords(s2, 2);
	assert_int_equal(w2.rc, DTXN_OK);
	assert_int_equal(r2.rc, DTXN_ABORT(DTXN_ABORT_VALIDATION));
	assert_false(r2.false_abort);
}

/* A reader of cell 1 validates while a writer of cell 2 (false) or 1 (true) holds the record. */
static void
test_false_locked_read(void **state)
{
	struct cell_arg r1 = { .key = 10, .rd = DTXN_CELL(1), .wait_for = 1 };
	struct cell_arg w1 = { .key = 10, .cell = 2, .wait_for = 2, .then = 1 };
	struct cell_arg r2 = { .key = 11, .rd = DTXN_CELL(1), .wait_for = 1 };
	struct cell_arg w2 = { .key = 11, .cell = 1, .wait_for = 2, .then = 1 };
	struct ut_coord_spec s1[2] = { { co_cell_read, &r1 }, { co_cell_inc, &w1 } };
	struct ut_coord_spec s2[2] = { { co_cell_read, &r2 }, { co_cell_inc, &w2 } };

	(void)state;
	run_coords(s1, 2);
	assert_int_equal(r1.rc, DTXN_ABORT(DTXN_ABORT_LOCKED_READ));
	assert_true(r1.false_abort);
	assert_int_equal(w1.rc, DTXN_OK);
	/* the reader's execute failed: it left the recovery fence (crest_release();
	 * it stayed busy until a next begin, and a recovery waited for ever) */
	for (uint32_t g = 0; g < crest_shared_rec_of(g_db)->n_coords; g++)
		assert_int_equal(crest_shared_rec_of(g_db)->fence->busy[g], 0);
	run_coords(s2, 2);
	assert_int_equal(r2.rc, DTXN_ABORT(DTXN_ABORT_LOCKED_READ));
	assert_false(r2.false_abort);
	assert_int_equal(w2.rc, DTXN_OK);
	assert_int_equal(mn_row(11, 0)->lock, 0);
}

/* ------------------------------------------------------------------ */
/* CN crash recovery (recover.c) from hand-built crash states          */
/* ------------------------------------------------------------------ */

#define DEAD_GID0 4 /* CN N_MN + 1's coordinators: gids 4..7 */

struct rec_ctx {
	uint64_t key, id;
	int rc;
};

static void
co_dead_add(struct dtxn_coord *c, void *arg)
{
	struct rec_ctx *x = arg;

	x->rc = ut_txn_add_u64(c, T_ROW, x->key, 1, &x->id);
}

/* A live txn (gid 1) still open when the fence goes up: it ends a little later. */
static void
co_live_ends(struct dtxn_coord *c, void *arg)
{
	struct crest_fence *f = arg;

	dtxn_co_sleep_until_lc(dtxn_coord_co(c), dtxn_now_ns() + 50000);
	__atomic_store_n(&f->busy[1], 0, __ATOMIC_RELEASE);
}

static void
test_recover(void **state)
{
	const uint32_t ss = dtxn_catalog_table(dtxn_db_catalog(g_db), T_ROW)->slot_size;
	struct crest_fence *f = crest_shared_rec_of(g_db)->fence;
	struct rec_ctx dead = { .key = 5 };
	struct ut_recover x;
	struct ut_coord_spec sd = { co_dead_add, &dead };
	struct ut_coord_spec s[2] = { { ut_recover_main, &x }, { co_live_ends, f } };
	char pre[512], post[512];

	(void)state;
	assert_true(ss <= sizeof(pre));
	memcpy(pre, mn_row(5, 0), ss);
	assert_int_equal(ut_run_coords(g_db, &sd, 1, N_MN + 1, DEAD_GID0, &g_worker_seq), 0);
	assert_int_equal(dead.rc, DTXN_OK);
	memcpy(post, mn_row(5, 0), ss);
	/* key 5: its redo entry landed and the backup, not the primary, which it still locks */
	memcpy(mn_row(5, 0), pre, ss);
	mn_row(5, 0)->lock = crest_lock_bits(0xf);
	/* key 6: a bit of a dead txn that logged nothing, on a deleted record */
	mn_row(6, 0)->lock = CREST_LOCK_DELETED | CREST_LOCK_BIT(2);
	/* gid 1: a live txn open as the fence goes up */
	f->busy[1] = 1;

	ut_recover_of(&x, N_MN + 1, DEAD_GID0, 4);
	run_coords(s, 2);
	assert_int_equal(x.rc, 0);
	assert_int_equal(x.rec.n_steps, 3);
	assert_string_equal(x.rec.step[0].name, "fence");
	assert_int_equal(x.rec.step[0].work, 1);      /* it waited for gid 1 */
	assert_true(x.rec.step[0].ns >= 50000);
	assert_string_equal(x.rec.step[1].name, "redo");
	assert_int_equal(x.rec.rolled_forward, 1);
	assert_int_equal(x.rec.n_visible, 1);
	assert_int_equal(x.rec.visible[0], dead.id);
	assert_int_equal(x.rec.locks_released, 2);
	assert_int_equal(f->on, 0);                    /* the fence is down */
	/* key 5 as the txn left it on the primary (ENs, versions, value), unlocked,
	 * and as on its backup */
	assert_int_equal(mn_row(5, 0)->lock, 0);
	assert_memory_equal((char *)mn_row(5, 0) + CREST_EN_OFF, post + CREST_EN_OFF,
			    ss - CREST_EN_OFF);
	assert_memory_equal((char *)mn_row(5, 0) + CREST_EN_OFF,
			    (char *)mn_row(5, 1) + CREST_EN_OFF, ss - CREST_EN_OFF);
	assert_memory_not_equal((char *)mn_row(5, 0) + CREST_EN_OFF, pre + CREST_EN_OFF,
				ss - CREST_EN_OFF);
	assert_int_equal(mn_row(6, 0)->lock, CREST_LOCK_DELETED); /* the deleted bit stays */
	mn_row(6, 0)->lock = 0;

	/* idempotent: nothing more to apply or release */
	ut_recover_of(&x, N_MN + 1, DEAD_GID0, 4);
	run_coords(s, 1);
	assert_int_equal(x.rc, 0);
	assert_int_equal(x.rec.rolled_forward, 0);
	assert_int_equal(x.rec.locks_released, 0);
}

/*
 * A dead CN's newest entry whose txn finished long before its recovery,
 * on a hot cell written 40,000 times since (soak run 335: cn1 paused past
 * its lease): 16-bit ENs wrapped, the cell looks behind the entry, yet a
 * later writer holds it (TS_commit, lock bit clear): nothing is rolled
 * forward (before the fix the increment's old value came back).
 */
static void
test_recover_en_wrap(void **state)
{
	const uint32_t ss = dtxn_catalog_table(dtxn_db_catalog(g_db), T_ROW)->slot_size;
	struct dtxn_table_def row = { .value_size = 32, .n_columns = 4,
				      .column_size = { 8, 8, 8, 8 } };
	struct rec_ctx dead = { .key = 7 };
	struct ut_coord_spec sd = { co_dead_add, &dead };
	struct ut_recover x;
	struct ut_coord_spec s = { ut_recover_main, &x };
	struct crest_layout lay;
	char pre[512], post[2][512];
	unsigned moved = 0;

	(void)state;
	crest_layout_make(&row, true, &lay);
	memcpy(pre, mn_row(7, 0), ss);
	assert_int_equal(ut_run_coords(g_db, &sd, 1, N_MN + 1, DEAD_GID0, &g_worker_seq), 0);
	assert_int_equal(dead.rc, DTXN_OK);
	assert_int_equal(mn_row(7, 0)->lock, 0);
	/* 40,000 later writes of its cells by a live txn (id 0x123456) on both replicas */
	for (unsigned c = 0; c < lay.n_cells; c++) {
		if (mn_row(7, 0)->en[c] == ((struct crest_hdr *)pre)->en[c])
			continue;
		moved++;
		for (uint16_t r = 0; r < 2; r++) {
			struct crest_hdr *h = mn_row(7, r);
			uint64_t v;

			h->en[c] = (uint16_t)(h->en[c] + 40000);
			*crest_line_ver(h, &lay, c, 0) = CREST_VER(h->en[c], 0x123456);
			memcpy(&v, (char *)h + lay.rec_off[c] + 8, 8);
			v += 40000;
			memcpy((char *)h + lay.rec_off[c] + 8, &v, 8);
		}
	}
	assert_true(moved >= 1);
	for (uint16_t r = 0; r < 2; r++)
		memcpy(post[r], mn_row(7, r), ss);

	ut_recover_of(&x, N_MN + 1, DEAD_GID0, 4);
	run_coords(&s, 1);
	assert_int_equal(x.rc, 0);
	assert_int_equal(x.rec.rolled_forward, 0);
	for (uint16_t r = 0; r < 2; r++)
		assert_memory_equal(mn_row(7, r), post[r], ss);
}

/* Row 9's replicas while A's committed increment waited in the cache (B's hook). */
static char g_lrec_pre[2][512];

static void
lrec_snap(void)
{
	const uint32_t ss = dtxn_catalog_table(dtxn_db_catalog(g_db), T_ROW)->slot_size;

	for (uint16_t r = 0; r < 2; r++)
		memcpy(g_lrec_pre[r], mn_row(9, r), ss);
}

/* Coordinator @p gid's first redo entry on MN @p mn. */
static struct crest_redo_hdr *
lrec_entry(uint32_t gid, uint16_t mn)
{
	dtxn_raddr_t ra = dtxn_store_log_raddr(dtxn_db_catalog(g_db), gid, mn);

	return (void *)((char *)dtxn_fabric_mn_base(g_f, mn) + DTXN_RADDR_OFF(ra));
}

/* Recovers dead CN N_MN + 1 from the state @p pre of row 9; returns the txns rolled forward. */
static uint64_t
lrec_recover(void)
{
	const uint32_t ss = dtxn_catalog_table(dtxn_db_catalog(g_db), T_ROW)->slot_size;
	struct crest_fence *f = crest_shared_rec_of(g_db)->fence;
	struct ut_recover x;
	struct ut_coord_spec s = { ut_recover_main, &x };

	for (uint16_t r = 0; r < 2; r++)
		memcpy(mn_row(9, r), g_lrec_pre[r], ss);
	/* every coordinator of the earlier tests has returned (some left a failed execute open) */
	memset(f->busy, 0, crest_shared_rec_of(g_db)->n_coords);
	ut_recover_of(&x, N_MN + 1, DEAD_GID0, 4);
	run_coords(&s, 1);
	assert_int_equal(x.rc, 0);
	assert_string_equal(x.rec.step[1].name, "redo");
	return x.rec.rolled_forward;
}

/*
 * local=1 recovery: on the dead CN, A commits an increment of row 9 that
 * waits in the cache for the last local writer B, which read A's version
 * (a dependency). From the MN state of that moment (A's cell not written,
 * the lcore's lock bit set): with B's entry torn (B never committed) the
 * recovery writes A's version; with B's entry whole it writes B's (the
 * higher TS_exec), one EN step, as B's write-back did; run again, nothing.
 */
static void
test_local_recover(void **state)
{
	const uint32_t ss = dtxn_catalog_table(dtxn_db_catalog(g_db), T_ROW)->slot_size;
	struct local_arg a = { .key = { 9 }, .then = 1, .wait_for = 2 };
	struct local_arg b = { .key = { 9 }, .wait_before = 1, .then = 2, .wait_for = 3,
			       .hook = lrec_snap };
	struct ut_coord_spec s[2] = { { co_local_inc, &a }, { co_local_inc, &b } };
	struct dtxn_table_def row = { .value_size = 32, .n_columns = 4,
				      .column_size = { 8, 8, 8, 8 } };
	struct crest_layout lay;
	char post[2][512];
	uint64_t trailer[N_MN], ida, dep;

	(void)state;
	crest_layout_make(&row, true, &lay);
	assert_true(ss <= sizeof(post[0]));
	g_step = 0;
	assert_int_equal(ut_run_coords(g_db, s, 2, N_MN + 1, DEAD_GID0, &g_worker_seq), 0);
	assert_int_equal(a.rc, DTXN_OK);
	assert_int_equal(b.rc, DTXN_OK);
	assert_int_equal(b.seen, 10); /* A's version */
	for (uint16_t r = 0; r < 2; r++) {
		const struct crest_hdr *pre = (const void *)g_lrec_pre[r];

		memcpy(post[r], mn_row(9, r), ss);
		assert_int_equal(mn_cell0(9, r), 11);
		/* A committed, its cell deferred: the MN had the old cell, locked by the lcore */
		assert_int_equal(pre->en[0], 0);
		assert_int_equal(pre->lock, r == 0 ? CREST_LOCK_BIT(0) : 0);
	}
	/* the entries: deferred mods; B's after A's by TS_exec, A its dependency */
	ida = lrec_entry(DEAD_GID0, 0)->txn_id;
	assert_int_equal(((struct crest_redo_mod *)(lrec_entry(DEAD_GID0, 0) + 1))->flags,
			 CREST_MOD_DEFERRED);
	assert_true(lrec_entry(DEAD_GID0 + 1, 0)->ts_exec > lrec_entry(DEAD_GID0, 0)->ts_exec);
	assert_int_equal(lrec_entry(DEAD_GID0 + 1, 0)->n_deps, 1);
	memcpy(&dep, lrec_entry(DEAD_GID0 + 1, 0) + 1, 8);
	assert_int_equal(dep, ida);

	/* B's entry torn on every MN: A's version is recovered */
	for (uint16_t mn = 0; mn < N_MN; mn++) {
		char *e = (char *)lrec_entry(DEAD_GID0 + 1, mn);

		memcpy(&trailer[mn], e + ((struct crest_redo_hdr *)e)->bytes - 8, 8);
		memset(e + ((struct crest_redo_hdr *)e)->bytes - 8, 0, 8);
	}
	assert_int_equal(lrec_recover(), 1);
	for (uint16_t r = 0; r < 2; r++) {
		assert_int_equal(mn_cell0(9, r), 10);
		assert_int_equal(mn_row(9, r)->en[0], 1);
		assert_int_equal(mn_row(9, r)->lock, 0);
		assert_int_equal(*crest_line_ver(mn_row(9, r), &lay, 0, 0), CREST_VER(1, ida));
	}

	/* B's entry whole: B's version (A's is older in the round), as B's write-back */
	for (uint16_t mn = 0; mn < N_MN; mn++) {
		char *e = (char *)lrec_entry(DEAD_GID0 + 1, mn);

		memcpy(e + ((struct crest_redo_hdr *)e)->bytes - 8, &trailer[mn], 8);
	}
	assert_int_equal(lrec_recover(), 1);
	for (uint16_t r = 0; r < 2; r++) {
		assert_int_equal(mn_row(9, r)->lock, 0);
		assert_memory_equal((char *)mn_row(9, r) + CREST_EN_OFF, post[r] + CREST_EN_OFF,
				    ss - CREST_EN_OFF);
	}
	/* and again from the recovered state: nothing */
	memcpy(g_lrec_pre[0], mn_row(9, 0), ss);
	memcpy(g_lrec_pre[1], mn_row(9, 1), ss);
	assert_int_equal(lrec_recover(), 0);
}

/* ------------------------------------------------------------------ */
/* Options and their report label                                     */
/* ------------------------------------------------------------------ */

/*
 * Every option set parses (ro_cache=1 and cache=cn only with local=1) and
 * its label names exactly the options that are not the default.
 */
static void
test_opts_names(void **state)
{
	(void)state;
	for (unsigned m = 0; m < 32; m++) {
		const unsigned cell = !(m & 1), local = !!(m & 2), ro = !!(m & 4), pc = !(m & 8);
		const unsigned cn = !!(m & 16);
		struct crest_opts o;
		const char *name;
		char s[96], err[160];

		snprintf(s, sizeof(s), "cell=%u,parallel_commit=%u,local=%u,ro_cache=%u,cache=%s",
			 cell, pc, local, ro, cn ? "cn" : "lcore");
		crest_opts_default(&o);
		if ((ro || cn) && !local) {
			assert_int_equal(crest_opts_parse(s, &o, err, sizeof(err)), -EINVAL);
			continue;
		}
		assert_int_equal(crest_opts_parse(s, &o, err, sizeof(err)), 0);
		name = crest_opts_name(&o);
		if (m == 0) {
			assert_null(name);
			continue;
		}
		assert_non_null(name);
		assert_int_equal(strstr(name, "record-level") != NULL, !cell);
		assert_int_equal(strstr(name, "local") != NULL, local);
		assert_int_equal(strstr(name, "ro_cache") != NULL, ro);
		assert_int_equal(strstr(name, "no parallel commit") != NULL, !pc);
		assert_int_equal(strstr(name, "cn cache") != NULL, cn);
	}
	{
		char err[160];
		struct crest_opts o;

		crest_opts_default(&o);
		assert_int_equal(crest_opts_parse("local=1,cache=part", &o, err, sizeof(err)), 0);
		assert_int_equal(o.cache, CREST_CACHE_PART);
		assert_string_equal(crest_opts_name(&o), "local, partitioned cache");
		crest_opts_default(&o);
		assert_int_equal(crest_opts_parse("cache=part", &o, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "cache=part needs local=1"));
		assert_int_equal(crest_check_options("local=1,cache=lcore", err, sizeof(err)), 0);
		assert_int_equal(crest_check_options("local=1,cache=node", err, sizeof(err)),
				 -EINVAL);
	}
}

/* ------------------------------------------------------------------ */
/* Inserts and deletes through the record cache (local=1,ro_cache=1)  */
/* ------------------------------------------------------------------ */

#define INS_KEY 40 /* not loaded */

/* READs the coordinator's worker has posted to the MNs. */
static uint64_t
co_reads(const struct dtxn_coord *c)
{
	return co_ops(c, DTXN_WR_READ);
}

struct insdel_arg {
	int rc_ins, rc_read, rc_del, rc_miss;
	uint64_t read_reads;    /* READs of the read's execute */
	uint32_t read_cached;   /* its cells served from the cached image */
	struct row read_val;
	bool miss_exists;
};

/* Reads every cell of INS_KEY: the txn's result, the READs its execute posted, what was cached. */
static int
insdel_read(struct dtxn_coord *c, uint64_t *reads, uint32_t *cached, bool *exists,
	    struct row *val)
{
	struct dtxn_txn *t = dtxn_txn_begin(c, DTXN_TXN_RO);
	struct dtxn_item *it = dtxn_txn_add_ro(t, T_ROW, INS_KEY);
	const uint64_t before = co_reads(c);
	int rc = dtxn_txn_execute(t);

	*reads = co_reads(c) - before;
	if (rc != DTXN_OK)
		return rc;
	*cached = crest_item_of(it)->seen.cached;
	*exists = dtxn_item_exists(it);
	if (*exists)
		memcpy(val, dtxn_item_value(it), sizeof(*val));
	return dtxn_txn_commit(t);
}

/*
 * Insert INS_KEY, read it (from the cache), delete it, read it again
 * (absent, looked up, no validation failure).
 */
static void
co_insdel(struct dtxn_coord *c, void *arg)
{
	struct insdel_arg *a = arg;
	const struct row v = { { 7, 8, 9, 10 } };
	struct dtxn_txn *t = dtxn_txn_begin(c, DTXN_TXN_RW);
	struct dtxn_item *it = dtxn_txn_insert(t, T_ROW, INS_KEY);
	uint64_t reads;
	uint32_t cached = 0;
	bool exists = false;
	struct row val;

	a->rc_ins = dtxn_txn_execute(t);
	if (a->rc_ins != DTXN_OK)
		return;
	memcpy(dtxn_item_value(it), &v, sizeof(v));
	a->rc_ins = dtxn_txn_commit(t);
	if (a->rc_ins != DTXN_OK)
		return;
	a->rc_read = insdel_read(c, &a->read_reads, &a->read_cached, &exists, &a->read_val);

	t = dtxn_txn_begin(c, DTXN_TXN_RW);
	dtxn_txn_delete(t, T_ROW, INS_KEY);
	a->rc_del = dtxn_txn_execute(t);
	if (a->rc_del == DTXN_OK)
		a->rc_del = dtxn_txn_commit(t);
	a->rc_miss = insdel_read(c, &reads, &cached, &a->miss_exists, &val);
}

/*
 * An insert fills the lcore's record cache: the next read of the key is
 * served from its image, no READ in execute, and commits. A delete drops
 * it: the next read looks the key up, finds it absent and commits
 * (before, it read the cached image and failed validation on the slot).
 */
static void
test_local_insert_delete(void **state)
{
	struct insdel_arg a = { 0 };
	struct ut_coord_spec s = { co_insdel, &a };

	(void)state;
	run_coords(&s, 1);
	assert_int_equal(a.rc_ins, DTXN_OK);
	assert_int_equal(a.rc_read, DTXN_OK);
	assert_int_equal(a.read_reads, 0);
	assert_int_equal(a.read_cached, 0xf); /* all 4 cells */
	for (unsigned c = 0; c < 4; c++)
		assert_int_equal(a.read_val.c[c], 7 + c);
	assert_int_equal(a.rc_del, DTXN_OK);
	for (uint16_t r = 0; r < 2; r++)
		assert_null(mn_row(INS_KEY, r));
	assert_int_equal(a.rc_miss, DTXN_OK);
	assert_false(a.miss_exists);
}

/* ------------------------------------------------------------------ */
/* A CN-wide record cache (local=1,cache=cn) on the sim fabric        */
/* ------------------------------------------------------------------ */

/*
 * Steps workers @p w[0..n) of one CN in virtual time on this thread, as
 * the sim's loop does, until every coordinator has returned.
 */
static void
cn_run(struct dtxn_worker *const *w, unsigned n)
{
	for (unsigned guard = 0; guard < 1000000; guard++) {
		uint64_t now = dtxn_now_ns(), next = UINT64_MAX;
		unsigned alive = 0;
		bool ready = false;

		(void)dtxn_sim_run_events(g_f, now);
		for (unsigned i = 0; i < n; i++) {
			struct dtxn_sched *s = dtxn_worker_sched(w[i]);

			if (dtxn_sched_busy_until_ns(s) <= now)
				(void)dtxn_sched_step_lc(s);
			alive += dtxn_sched_alive(s);
			ready |= dtxn_sched_ready_count(s) > 0 || dtxn_sim_cq_pending(w[i]->cq) > 0;
			next = RTE_MIN(next, RTE_MAX(dtxn_sched_busy_until_ns(s),
						     dtxn_sched_next_timer_ns(s)));
		}
		if (alive == 0)
			return;
		next = RTE_MIN(next, dtxn_sim_next_event_ns(g_f));
		if (!ready && next != UINT64_MAX && next > now)
			dtxn_clock_advance(next);
	}
	fail_msg("the coordinators did not end");
}

/*
 * Two workers of one CN, one cache: A (worker 0) increments cell 0 of a
 * row and ends its block; B (worker 1) increments it too and is served
 * A's version from the shared local object with no READ and no masked
 * CAS (the CN holds the cell's MN lock), commits after A as the last
 * writer: one write-back carries both increments (one EN step) and the
 * MN lock is given back.
 */
static void
test_cn_shared_object(void **state)
{
	struct local_arg a = { .key = { 6 }, .then = 1, .wait_for = 2 };
	struct local_arg b = { .key = { 6 }, .wait_before = 1, .then = 2, .wait_for = 3 };
	struct dtxn_worker *w[2];

	(void)state;
	g_step = 0;
	for (unsigned i = 0; i < 2; i++) {
		w[i] = dtxn_worker_create(g_db, N_MN, i, 1, (int)rte_socket_id());
		assert_non_null(w[i]);
		assert_non_null(dtxn_coord_create(w[i], i, co_local_inc, i == 0 ? (void *)&a : &b));
	}
	assert_non_null(w[0]->cc_priv);
	assert_ptr_equal(w[0]->cc_priv, w[1]->cc_priv); /* the CN's one cache */
	cn_run(w, 2);
	assert_int_equal(a.rc, DTXN_OK);
	assert_int_equal(b.rc, DTXN_OK);
	assert_int_equal(a.seen, 6);
	assert_int_equal(b.seen, 7);   /* A's version, before A committed */
	assert_true(a.exec_ops >= 2);    /* A: masked CAS + READ (and the bucket's, first) */
	assert_int_equal(b.exec_ops, 0); /* B: from the shared object, no verb */
	for (uint16_t r = 0; r < 2; r++) {
		assert_int_equal(mn_cell0(6, r), 8);
		assert_int_equal(mn_row(6, r)->lock, 0);
		assert_int_equal(mn_row(6, r)->en[0], 1); /* one write-back for both */
	}
	dtxn_worker_destroy(w[1]);
	dtxn_worker_destroy(w[0]);
}

/* cache=cn needs the sim: refused by the option check and by dtxn_db_attach() on shm. */
static void
test_cn_refused_on_shm(void **state)
{
	struct dtxn_db *db = g_db;
	struct dtxn_fabric *f = g_f;
	char err[200];

	(void)state;
	assert_int_equal(dtxn_cc_check_cluster("crest", "local=1,cache=cn", N_MN, 1, "sim", err,
					       sizeof(err)), 0);
	assert_int_equal(dtxn_cc_check_cluster("crest", "local=1,cache=cn", N_MN, 1, "shm", err,
					       sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "--fabric sim"));
	assert_int_equal(dtxn_cc_check_cluster("crest", "local=1,cache=cn", N_MN, 1, "mlx5", err,
					       sizeof(err)), -EINVAL);
	assert_int_equal(dtxn_cc_check_cluster("crest", "local=1", N_MN, 1, "shm", err,
					       sizeof(err)), 0);
	/* the partitioned cache shares nothing across lcores: every fabric */
	assert_int_equal(dtxn_cc_check_cluster("crest", "local=1,cache=part", N_MN, 1, "shm", err,
					       sizeof(err)), 0);
	assert_int_equal(dtxn_cc_check_cluster("crest", "local=1,cache=part", N_MN, 1, "mlx5", err,
					       sizeof(err)), 0);
	assert_int_equal(db_setup_on("local=1,cache=cn", "shm", "utcrestsh"), -ENOTSUP);
	dtxn_db_destroy(g_db);
	dtxn_fabric_close(g_f);
	g_db = db;
	g_f = f;
}

/*
 * cache=part on shm: worker i of the CN's 2 caches only the records whose
 * locality field is i mod 2, and a read-write txn whose first record is
 * homed there is routed to it (dtxn_coord_routes_here()); cache=lcore
 * routes every txn anywhere.
 */
static void
test_part_route(void **state)
{
	struct dtxn_db *db = g_db;
	struct dtxn_fabric *f = g_f;
	struct dtxn_worker *w[2];
	struct dtxn_coord c[2];

	(void)state;
	assert_int_equal(db_setup_on("local=1,cache=part", "shm", "utcrestpt"), 0);
	for (unsigned i = 0; i < 2; i++) {
		w[i] = dtxn_worker_create(g_db, N_MN, i, 1, (int)rte_socket_id());
		assert_non_null(w[i]);
		c[i] = (struct dtxn_coord){ .worker = w[i] };
	}
	for (uint64_t s = 0; s < 6; s++) {
		const uint64_t key = dtxn_key_make(9, s);

		assert_int_equal(dtxn_coord_routes_here(&c[0], T_ROW, key), s % 2 == 0);
		assert_int_equal(dtxn_coord_routes_here(&c[1], T_ROW, key), s % 2 == 1);
		assert_int_equal(crest_lc_homes(w[s % 2]->cc_priv, key), true);
		assert_int_equal(crest_lc_homes(w[(s + 1) % 2]->cc_priv, key), false);
	}
	for (unsigned i = 0; i < 2; i++)
		dtxn_worker_destroy(w[i]);
	dtxn_db_destroy(g_db);
	dtxn_fabric_close(g_f);
	/* cache=lcore: one unpartitioned cache per worker, no routing */
	assert_int_equal(db_setup_on("local=1", "shm", "utcrestlc"), 0);
	w[1] = dtxn_worker_create(g_db, N_MN, 1, 1, (int)rte_socket_id());
	assert_non_null(w[1]);
	c[1] = (struct dtxn_coord){ .worker = w[1] };
	for (uint64_t s = 0; s < 6; s++)
		assert_true(dtxn_coord_routes_here(&c[1], T_ROW, dtxn_key_make(9, s)));
	dtxn_worker_destroy(w[1]);
	dtxn_db_destroy(g_db);
	dtxn_fabric_close(g_f);
	g_db = db;
	g_f = f;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_snapshot_rule),
		cmocka_unit_test(test_commit_cells),
		cmocka_unit_test(test_disjoint_cells),
		cmocka_unit_test(test_same_cell_conflicts),
		cmocka_unit_test(test_read_cell_validated),
		cmocka_unit_test(test_cell_versions),
		cmocka_unit_test(test_redo_entry),
		cmocka_unit_test(test_lww_orders),
		cmocka_unit_test(test_recover),
		cmocka_unit_test(test_recover_en_wrap),
		cmocka_unit_test(test_lc_versions),
		cmocka_unit_test(test_lc_cascade),
		cmocka_unit_test(test_lc_lock_ts),
		cmocka_unit_test(test_lc_partition),
		cmocka_unit_test(test_opts_names),
	};
	const struct CMUnitTest record_level[] = {
		cmocka_unit_test(test_false_lock),
		cmocka_unit_test(test_false_validation),
		cmocka_unit_test(test_false_locked_read),
	};
	const struct CMUnitTest local[] = {
		cmocka_unit_test(test_local_chain),
		cmocka_unit_test(test_local_cascade),
		cmocka_unit_test(test_local_lock_order),
		cmocka_unit_test(test_local_no_deadlock),
		cmocka_unit_test(test_local_recover),
		cmocka_unit_test(test_part_route),
	};
	const struct CMUnitTest local_ro[] = {
		cmocka_unit_test(test_local_insert_delete),
	};
	const struct CMUnitTest cn_cache[] = {
		cmocka_unit_test(test_cn_shared_object),
		cmocka_unit_test(test_cn_refused_on_shm),
	};
	int rc;

	if (dtxn_unit_eal_init("ut_crest") != 0)
		return 1;
	rc = cmocka_run_group_tests(tests, group_setup, group_teardown);
	rc |= cmocka_run_group_tests(record_level, group_setup_record, group_teardown);
	rc |= cmocka_run_group_tests(local, group_setup_local, group_teardown);
	rc |= cmocka_run_group_tests(local_ro, group_setup_local_ro, group_teardown);
	/* last: its clock is virtual from then on */
	rc |= cmocka_run_group_tests(cn_cache, group_setup_cn, group_teardown);
	dtxn_unit_eal_fini();
	return rc;
}
