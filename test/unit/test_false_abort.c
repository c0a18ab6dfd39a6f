/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * False-abort classification of the record-level protocols (FORD, Motor;
 * lib/txn/false_abort.c, doc/guides/crest.md "False aborts") on the shm
 * fabric, model none, 2 MNs. First the side table alone: takers in lock
 * order, the writers between two versions, what it forgets. Then, for
 * each protocol, the three conflicts a record-level txn aborts on, each
 * between disjoint cells (false: a cell-level protocol would not abort)
 * and on one cell (true): a lock conflict, a validation after a writer
 * committed, a validation that finds the record locked. Interleavings are
 * forced with a shared step counter; coordinators run as coroutines on
 * the calling lcore.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <string.h>

#include <cmocka.h>

#include <rte_lcore.h>
#include <rte_memory.h>

#include "unit_eal.h"
#include "ut_txn.h"

#define N_MN 2
#define T_ROW 0     /* 4 cells of 8 B */
#define ROW_KEYS 32
#define N_COORDS 32 /* each run takes fresh gids: txn ids (versions) never repeat */

struct row {
	uint64_t c[4];
};

static struct dtxn_db *g_db;
static struct dtxn_fabric *g_f;
static unsigned g_worker_seq;
static volatile int g_step;
static unsigned g_gid;

/* The db of a group: protocol @p proto (@p opts), its rows loaded. */
static int
db_setup(const char *proto, const char *opts, const char *name)
{
	struct dtxn_db_conf dc = {
		.size = sizeof(dc), .protocol = proto, .isolation = DTXN_ISO_SR,
		.n_mn = N_MN, .n_replicas = 2, .n_coords = N_COORDS,
		.log_bytes = 4096, .addr_cache_entries = 4096, .cc_options = opts,
	};
	struct dtxn_table_def row = { .id = T_ROW, .name = "row", .value_size = 32,
				      .max_keys = 64, .n_columns = 4,
				      .column_size = { 8, 8, 8, 8 } };
	struct dtxn_fabric_conf fc = { .size = sizeof(fc), .driver = "shm", .n_mn = N_MN,
				       .n_cn = 2, .socket_id = SOCKET_ID_ANY, .name = name };
	uint64_t region;

	g_gid = 0;
	g_db = dtxn_db_create(&dc);
	if (g_db == NULL || dtxn_db_add_table(g_db, &row) != 0 ||
	    dtxn_db_layout(g_db, &region) != 0)
		return -1;
	fc.mn_region_size = region;
	dtxn_nic_model_none(&fc.nic);
	g_f = dtxn_fabric_open(&fc);
	if (g_f == NULL || dtxn_db_attach(g_db, g_f) != 0)
		return -1;
	for (uint64_t k = 1; k <= ROW_KEYS; k++) {
		struct row v = { { k, k + 100, k + 200, k + 300 } };

		if (dtxn_db_load(g_db, T_ROW, k, &v) != 0)
			return -1;
	}
	return 0;
}

static int
setup_ford(void **state)
{
	(void)state;
	return db_setup("ford", NULL, "utfaford");
}

static int
setup_motor(void **state)
{
	(void)state;
	return db_setup("motor", "tso=mn", "utfamotor");
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
	assert_true(g_gid + n <= N_COORDS);
	assert_int_equal(ut_run_coords(g_db, s, n, N_MN, g_gid, &g_worker_seq), 0);
	g_gid += n;
}

/* ------------------------------------------------------------------ */
/* The side table                                                     */
/* ------------------------------------------------------------------ */

/* Takers in order: one by id, the union between two versions, the forgotten ones. */
static void
test_side_table(void **state)
{
	struct dtxn_fa_table *fa = g_db->fa;
	const dtxn_raddr_t ra = DTXN_RADDR(1, 4096);
	uint32_t cells;

	(void)state;
	assert_non_null(fa);
	assert_int_equal(dtxn_fa_cells(fa, ra, 11, &cells), -ENOENT);
	dtxn_fa_append(fa, ra, 11, DTXN_CELL(0));
	dtxn_fa_append(fa, ra, 12, DTXN_CELL(1));
	dtxn_fa_append(fa, ra, 13, DTXN_CELL(2));
	assert_int_equal(dtxn_fa_cells(fa, ra, 12, &cells), 0);
	assert_int_equal(cells, DTXN_CELL(1));
	/* versions 11 -> 13: takers 12 and 13 came between */
	assert_int_equal(dtxn_fa_cells_since(fa, ra, 11, 13, &cells), 0);
	assert_int_equal(cells, DTXN_CELL(1) | DTXN_CELL(2));
	assert_int_equal(dtxn_fa_cells_since(fa, ra, 12, 13, &cells), 0);
	assert_int_equal(cells, DTXN_CELL(2));
	/* unknown: the loaded version, the same version, a version before the one read */
	assert_int_equal(dtxn_fa_cells_since(fa, ra, 0, 13, &cells), -ENOENT);
	assert_int_equal(dtxn_fa_cells_since(fa, ra, 13, 13, &cells), -ENOENT);
	assert_int_equal(dtxn_fa_cells_since(fa, ra, 13, 11, &cells), -ENOENT);
	/* another record: nothing */
	assert_int_equal(dtxn_fa_cells(fa, ra + 64, 12, &cells), -ENOENT);
	/* 8 takers later, 11 and 12 are forgotten: a conflict across them counts true */
	for (uint64_t id = 14; id < 22; id++)
		dtxn_fa_append(fa, ra, id, DTXN_CELL(3));
	assert_int_equal(dtxn_fa_cells(fa, ra, 12, &cells), -ENOENT);
	assert_int_equal(dtxn_fa_cells_since(fa, ra, 12, 21, &cells), -ENOENT);
	assert_int_equal(dtxn_fa_cells_since(fa, ra, 14, 21, &cells), 0);
	assert_int_equal(cells, DTXN_CELL(3));
	/* NULL table (mlx5): nothing known */
	dtxn_fa_append(NULL, ra, 30, 1);
	assert_int_equal(dtxn_fa_cells(NULL, ra, 30, &cells), -ENOENT);
}

/* ------------------------------------------------------------------ */
/* The protocols                                                      */
/* ------------------------------------------------------------------ */

struct cell_arg {
	uint64_t key;
	unsigned cell;      /* written cell */
	uint32_t rd;        /* cells read */
	int wait_for;       /* step to wait for after execute */
	int then;           /* step to set after execute */
	int rc;
	bool false_abort;   /* dtxn_coord_false_abort() after it ended */
};

/* Adds 1 to one cell of a row, pausing between execute and commit. */
static void
co_cell_inc(struct dtxn_coord *c, void *arg)
{
	struct cell_arg *a = arg;
	struct dtxn_txn *t = dtxn_txn_begin(c, DTXN_TXN_RW);
	struct dtxn_item *it = dtxn_txn_add_rw_cells(t, T_ROW, a->key, DTXN_CELL(a->cell),
						     DTXN_CELL(a->cell));
	struct row *v;

	a->rc = dtxn_txn_execute(t);
	if (g_step < a->then)
		g_step = a->then;
	ut_wait_step(c, &g_step, a->wait_for);
	a->false_abort = dtxn_coord_false_abort(c);
	if (a->rc != DTXN_OK)
		return;
	v = dtxn_item_value(it);
	v->c[a->cell]++;
	a->rc = dtxn_txn_commit(t);
	a->false_abort = dtxn_coord_false_abort(c);
	g_step++;
}

/*
 * Reads cells a->rd of a row and writes cell 0 of the next row (a
 * read-write txn: Motor validates the reads of those only), pausing
 * between execute and commit.
 */
static void
co_cell_read(struct dtxn_coord *c, void *arg)
{
	struct cell_arg *a = arg;
	struct dtxn_txn *t = dtxn_txn_begin(c, DTXN_TXN_RW);
	struct dtxn_item *w;

	dtxn_txn_add_ro_cells(t, T_ROW, a->key, a->rd);
	w = dtxn_txn_add_rw_cells(t, T_ROW, a->key + 1, DTXN_CELL(0), DTXN_CELL(0));
	a->rc = dtxn_txn_execute(t);
	if (g_step < a->then)
		g_step = a->then;
	ut_wait_step(c, &g_step, a->wait_for);
	if (a->rc == DTXN_OK) {
		((struct row *)dtxn_item_value(w))->c[0]++;
		a->rc = dtxn_txn_commit(t);
	}
	a->false_abort = dtxn_coord_false_abort(c);
	g_step++;
}

/* A lock conflict between writers of disjoint cells is false; of one cell, true. */
static void
test_false_lock(void **state)
{
	struct cell_arg a = { .key = 2, .cell = 0, .wait_for = 1, .then = 0 };
	struct cell_arg b = { .key = 2, .cell = 3, .wait_for = 0, .then = 1 };
	struct cell_arg c = { .key = 4, .cell = 2, .wait_for = 1, .then = 0 };
	struct cell_arg d = { .key = 4, .cell = 2, .wait_for = 0, .then = 1 };
	struct ut_coord_spec s1[2] = { { co_cell_inc, &a }, { co_cell_inc, &b } };
	struct ut_coord_spec s2[2] = { { co_cell_inc, &c }, { co_cell_inc, &d } };

	(void)state;
	run_coords(s1, 2);
	assert_int_equal(a.rc, DTXN_OK);
	assert_false(a.false_abort);
	assert_int_equal(b.rc, DTXN_ABORT(DTXN_ABORT_LOCK_CONFLICT));
	assert_true(b.false_abort);
	run_coords(s2, 2);
	assert_int_equal(c.rc, DTXN_OK);
	assert_int_equal(d.rc, DTXN_ABORT(DTXN_ABORT_LOCK_CONFLICT));
	assert_false(d.false_abort);
}

/*
 * A reader of cell 1 validates after a writer of cell 2 committed: the
 * record's version changed (validation abort), cell 1 did not: false.
 * After a writer of cell 1: true.
 */
static void
test_false_validation(void **state)
{
	struct cell_arg r1 = { .key = 6, .rd = DTXN_CELL(1), .wait_for = 1 };
	struct cell_arg w1 = { .key = 6, .cell = 2 };
	struct cell_arg r2 = { .key = 9, .rd = DTXN_CELL(1), .wait_for = 1 };
	struct cell_arg w2 = { .key = 9, .cell = 1 };
	struct cell_arg w0 = { .key = 6, .cell = 3 };
	struct cell_arg w00 = { .key = 9, .cell = 3 };
	struct ut_coord_spec s0[2] = { { co_cell_inc, &w0 }, { co_cell_inc, &w00 } };
	struct ut_coord_spec s1[2] = { { co_cell_read, &r1 }, { co_cell_inc, &w1 } };
	struct ut_coord_spec s2[2] = { { co_cell_read, &r2 }, { co_cell_inc, &w2 } };

	(void)state;
	/* a version written under a lock first: the loaded one (id 0) has no taker */
	run_coords(s0, 2);
	assert_int_equal(w0.rc, DTXN_OK);
	assert_int_equal(w00.rc, DTXN_OK);
	run_coords(s1, 2);
	assert_int_equal(w1.rc, DTXN_OK);
	assert_int_equal(r1.rc, DTXN_ABORT(DTXN_ABORT_VALIDATION));
	assert_true(r1.false_abort);
	run_coords(s2, 2);
	assert_int_equal(w2.rc, DTXN_OK);
	assert_int_equal(r2.rc, DTXN_ABORT(DTXN_ABORT_VALIDATION));
	assert_false(r2.false_abort);
}

/* A reader of cell 1 validates while a writer of cell 2 (false) or 1 (true) holds the record. */
static void
test_false_locked_read(void **state)
{
	struct cell_arg r1 = { .key = 12, .rd = DTXN_CELL(1), .wait_for = 1 };
	struct cell_arg w1 = { .key = 12, .cell = 2, .wait_for = 2, .then = 1 };
	struct cell_arg r2 = { .key = 15, .rd = DTXN_CELL(1), .wait_for = 1 };
	struct cell_arg w2 = { .key = 15, .cell = 1, .wait_for = 2, .then = 1 };
	struct ut_coord_spec s1[2] = { { co_cell_read, &r1 }, { co_cell_inc, &w1 } };
	struct ut_coord_spec s2[2] = { { co_cell_read, &r2 }, { co_cell_inc, &w2 } };

	(void)state;
	run_coords(s1, 2);
	assert_int_equal(r1.rc, DTXN_ABORT(DTXN_ABORT_LOCKED_READ));
	assert_true(r1.false_abort);
	assert_int_equal(w1.rc, DTXN_OK);
	run_coords(s2, 2);
	assert_int_equal(r2.rc, DTXN_ABORT(DTXN_ABORT_LOCKED_READ));
	assert_false(r2.false_abort);
	assert_int_equal(w2.rc, DTXN_OK);
}

int
main(void)
{
	const struct CMUnitTest ford[] = {
		cmocka_unit_test(test_side_table),
		cmocka_unit_test(test_false_lock),
		cmocka_unit_test(test_false_validation),
		cmocka_unit_test(test_false_locked_read),
	};
	const struct CMUnitTest motor[] = {
		cmocka_unit_test(test_false_lock),
		cmocka_unit_test(test_false_validation),
		cmocka_unit_test(test_false_locked_read),
	};
	int rc;

	if (dtxn_unit_eal_init("ut_false_abort") != 0)
		return 1;
	rc = cmocka_run_group_tests_name("ford", ford, setup_ford, group_teardown);
	rc |= cmocka_run_group_tests_name("motor", motor, setup_motor, group_teardown);
	dtxn_unit_eal_fini();
	return rc;
}
