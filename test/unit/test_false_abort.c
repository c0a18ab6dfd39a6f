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

#include <rte_common.h>
#include <rte_lcore.h>
#include <rte_memory.h>

#include "unit_eal.h"
#include "ut_txn.h"

#define N_MN 2
#define T_ROW 0     /* 4 cells of 8 B */
#define ROW_KEYS 32
#define N_COORDS 32 /* each run takes fresh gids: txn ids (versions) never repeat */

static struct dtxn_db *g_db;
static struct dtxn_fabric *g_f;
static unsigned g_worker_seq;
static volatile int g_step;
static unsigned g_gid;

#include "ut_cells.h"

/* The db of a group: protocol @p proto (@p opts), its rows loaded. */
static int
db_setup_fa(const char *proto, const char *opts, const char *name, bool classify)
{
	struct dtxn_db_conf dc = {
		.size = sizeof(dc), .protocol = proto, .isolation = DTXN_ISO_SR,
		.n_mn = N_MN, .n_replicas = 2, .n_coords = N_COORDS,
		.log_bytes = 4096, .addr_cache_entries = 4096, .cc_options = opts,
		.false_aborts = classify,
	};
	struct dtxn_table_def row = { .id = T_ROW, .name = "row", .value_size = 32,
				      .max_keys = 64, .n_columns = 4,
				      .column_size = { 8, 8, 8, 8 } };
	struct dtxn_fabric_conf fc = { .size = sizeof(fc), .driver = "shm", .n_mn = N_MN,
				       .n_cn = 2, .socket_id = SOCKET_ID_ANY, .name = name };

	g_gid = 0;
	if (ut_db_open(&dc, (const struct dtxn_table_def *[]){ &row }, 1, &fc, &g_db, &g_f) != 0)
		return -1;
	for (uint64_t k = 1; k <= ROW_KEYS; k++) {
		uint64_t v[4] = { k, k + 100, k + 200, k + 300 };

		if (dtxn_db_load(g_db, T_ROW, k, v) != 0)
			return -1;
	}
	return 0;
}

static int
db_setup(const char *proto, const char *opts, const char *name)
{
	return db_setup_fa(proto, opts, name, true);
}

static int
setup_ford(void **state)
{
	(void)state;
	return db_setup("ford", NULL, "utfaford");
}

/* dtxn_db_conf.false_aborts 0 (dtxn-app's default): no side table. */
static int
setup_ford_off(void **state)
{
	(void)state;
	return db_setup_fa("ford", NULL, "utfafordoff", false);
}

static int
setup_motor_off(void **state)
{
	(void)state;
	return db_setup_fa("motor", "tso=mn", "utfamotoroff", false);
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
	assert_null(dtxn_fa_seq_of(NULL, ra));
}

/* A writer killed inside its append (odd seq for good): the next one takes the entry over. */
static void
test_side_table_dead_writer(void **state)
{
	struct dtxn_fa_table *fa = g_db->fa;
	const dtxn_raddr_t ra = DTXN_RADDR(1, 8192);
	uint32_t *seq = dtxn_fa_seq_of(fa, ra);
	uint32_t cells;

	(void)state;
	assert_non_null(seq);
	dtxn_fa_append(fa, ra, 40, DTXN_CELL(0));
	assert_int_equal(*seq % 2, 0);
	*seq += 1; /* the dead writer's CAS, never released */
	dtxn_fa_append(fa, ra, 41, DTXN_CELL(2));
	assert_int_equal(*seq % 2, 0);
	assert_int_equal(dtxn_fa_cells(fa, ra, 41, &cells), 0);
	assert_int_equal(cells, DTXN_CELL(2));
	/* released: the next taker goes through at once */
	dtxn_fa_append(fa, ra, 42, DTXN_CELL(1));
	assert_int_equal(dtxn_fa_cells_since(fa, ra, 40, 42, &cells), 0);
	assert_int_equal(cells, DTXN_CELL(1) | DTXN_CELL(2));
}

/* ------------------------------------------------------------------ */
/* The protocols                                                      */
/* ------------------------------------------------------------------ */

/* One interleaving of two coordinators and what each must end with. */
struct fa_case {
	const char *what;
	bool x_reads, y_reads;      /* co_cell_read, else co_cell_inc */
	struct cell_arg x, y;
	int x_rc, y_rc;
	bool x_false, y_false;      /* dtxn_coord_false_abort() expected */
};

#define LOCK DTXN_ABORT(DTXN_ABORT_LOCK_CONFLICT)
#define VAL DTXN_ABORT(DTXN_ABORT_VALIDATION)
#define LREAD DTXN_ABORT(DTXN_ABORT_LOCKED_READ)

/*
 * Each conflict between disjoint cells (false) and on one cell (true):
 * a writer holds the row while another locks it; a reader of cell 1
 * validates after a writer committed (the rows get a version written
 * under a lock first: the loaded one, id 0, has no taker); a reader of
 * cell 1 validates while a writer holds the row.
 */
static const struct fa_case g_cases[] = {
	{ "lock, disjoint", false, false, { .key = 2, .cell = 0, .wait_for = 1 },
	  { .key = 2, .cell = 3, .then = 1 }, DTXN_OK, LOCK, false, true },
	{ "lock, same cell", false, false, { .key = 4, .cell = 2, .wait_for = 1 },
	  { .key = 4, .cell = 2, .then = 1 }, DTXN_OK, LOCK, false, false },
	{ "versions written under a lock", false, false, { .key = 6, .cell = 3 },
	  { .key = 9, .cell = 3 }, DTXN_OK, DTXN_OK, false, false },
	{ "validation, disjoint", true, false, { .key = 6, .rd = DTXN_CELL(1), .wait_for = 1, .rw = true },
	  { .key = 6, .cell = 2 }, VAL, DTXN_OK, true, false },
	{ "validation, same cell", true, false, { .key = 9, .rd = DTXN_CELL(1), .wait_for = 1, .rw = true },
	  { .key = 9, .cell = 1 }, VAL, DTXN_OK, false, false },
	{ "locked read, disjoint", true, false, { .key = 12, .rd = DTXN_CELL(1), .wait_for = 1, .rw = true },
	  { .key = 12, .cell = 2, .wait_for = 2, .then = 1 }, LREAD, DTXN_OK, true, false },
	{ "locked read, same cell", true, false, { .key = 15, .rd = DTXN_CELL(1), .wait_for = 1, .rw = true },
	  { .key = 15, .cell = 1, .wait_for = 2, .then = 1 }, LREAD, DTXN_OK, false, false },
};

/* Runs case @p k's two coordinators, interleaved; their outcomes in @p x, @p y. */
static void
run_case(const struct fa_case *k, struct cell_arg *x, struct cell_arg *y)
{
	struct ut_coord_spec s[2] = { { k->x_reads ? co_cell_read : co_cell_inc, x },
				      { k->y_reads ? co_cell_read : co_cell_inc, y } };

	*x = k->x;
	*y = k->y;
	run_coords(s, 2);
}

static void
test_false_conflicts(void **state)
{
	(void)state;
	for (unsigned i = 0; i < RTE_DIM(g_cases); i++) {
		const struct fa_case *k = &g_cases[i];
		struct cell_arg x, y;

		run_case(k, &x, &y);
		if (x.rc != k->x_rc || y.rc != k->y_rc || x.false_abort != k->x_false ||
		    y.false_abort != k->y_false)
			fail_msg("%s: rc %d %d (want %d %d), false %d %d (want %d %d)", k->what,
				 x.rc, y.rc, k->x_rc, k->y_rc, x.false_abort, y.false_abort,
				 k->x_false, k->y_false);
	}
}

/*
 * Not classified (dtxn_db_conf.false_aborts 0): no side table, nothing
 * appended; the same interleavings end the same, and every abort counts
 * true (the report's false_aborts is 0).
 */
static void
test_not_classified(void **state)
{
	(void)state;
	assert_null(g_db->fa);
	for (unsigned i = 0; i < RTE_DIM(g_cases); i++) {
		const struct fa_case *k = &g_cases[i];
		struct cell_arg x, y;

		run_case(k, &x, &y);
		if (x.rc != k->x_rc || y.rc != k->y_rc || x.false_abort || y.false_abort)
			fail_msg("%s: rc %d %d (want %d %d), false %d %d (want 0 0)", k->what,
				 x.rc, y.rc, k->x_rc, k->y_rc, x.false_abort, y.false_abort);
	}
}

int
main(void)
{
	const struct CMUnitTest ford[] = {
		cmocka_unit_test(test_side_table),
		cmocka_unit_test(test_side_table_dead_writer),
		cmocka_unit_test(test_false_conflicts),
	};
	const struct CMUnitTest motor[] = {
		cmocka_unit_test(test_false_conflicts),
	};
	const struct CMUnitTest off[] = {
		cmocka_unit_test(test_not_classified),
	};
	int rc;

	if (dtxn_unit_eal_init("ut_false_abort") != 0)
		return 1;
	rc = cmocka_run_group_tests_name("ford", ford, setup_ford, group_teardown);
	rc |= cmocka_run_group_tests_name("motor", motor, setup_motor, group_teardown);
	rc |= cmocka_run_group_tests_name("ford_off", off, setup_ford_off, group_teardown);
	rc |= cmocka_run_group_tests_name("motor_off", off, setup_motor_off, group_teardown);
	dtxn_unit_eal_fini();
	return rc;
}
