/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DTXN_UT_TXN_H
#define DTXN_UT_TXN_H

/*
 * Helpers for the protocol tests (test_ford.c, test_motor.c, test_tso.c,
 * ...): set up a db on a fresh fabric, find a record's slot in MN memory
 * (the MN role's view), and run
 * coordinators as coroutines on a fresh worker of the calling lcore, one
 * hand-written transaction each. Header-only: each test binary is one
 * translation unit.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <rte_lcore.h>

#include "dtxn_txn.h"
#include "dtxn_txn_driver.h"

/**
 * Lays out @p db (its tables added), opens a fabric as @p fc says with an
 * MN region of the layout's size and NIC model none (both filled in
 * @p fc), and attaches @p db to it: how every protocol test gets a
 * cluster. Does not assert, so group set-ups can return -1.
 * @return 0 with *@p f set; dtxn_db_attach()'s negative errno (e.g.
 *   -ENOTSUP: the protocol's options refuse this fabric); -1 if the
 *   layout or the fabric failed. On error *@p f is the fabric if it was
 *   opened, else NULL, and @p db is left for the caller to destroy.
 */
static inline int
ut_db_fabric(struct dtxn_db *db, struct dtxn_fabric_conf *fc, struct dtxn_fabric **f)
{
	uint64_t region;

	*f = NULL;
	if (dtxn_db_layout(db, &region) != 0)
		return -1;
	fc->mn_region_size = region;
	dtxn_nic_model_none(&fc->nic);
	*f = dtxn_fabric_open(fc);
	if (*f == NULL)
		return -1;
	return dtxn_db_attach(db, *f);
}

/**
 * A db (@p dc) with the @p n tables @p defs on a fresh fabric
 * (ut_db_fabric()). Does not assert.
 * @return 0 with *@p db and *@p f set, or as ut_db_fabric() (-1 also if
 *   the db or a table could not be created); what was created is in
 *   *@p db and *@p f, NULL otherwise.
 */
static inline int
ut_db_open(const struct dtxn_db_conf *dc, const struct dtxn_table_def *const *defs, unsigned n,
	   struct dtxn_fabric_conf *fc, struct dtxn_db **db, struct dtxn_fabric **f)
{
	*f = NULL;
	*db = dtxn_db_create(dc);
	if (*db == NULL)
		return -1;
	for (unsigned i = 0; i < n; i++)
		if (dtxn_db_add_table(*db, defs[i]) != 0)
			return -1;
	return ut_db_fabric(*db, fc, f);
}

/**
 * A db with one table @p d on a fresh fabric (ut_db_open()): what a test
 * that needs its own cluster shape starts with. Fails the test on any
 * error.
 */
static inline void
ut_db_up(const struct dtxn_db_conf *dc, const struct dtxn_table_def *d,
	 struct dtxn_fabric_conf *fc, struct dtxn_db **db, struct dtxn_fabric **f)
{
	assert_int_equal(ut_db_open(dc, (const struct dtxn_table_def *[]){ d }, 1, fc, db, f), 0);
}

/** Slot of @p key in table @p tid on replica @p r in MN memory, or NULL (absent). */
static inline void *
ut_mn_slot(struct dtxn_fabric *f, const struct dtxn_catalog *cat, uint32_t tid, uint64_t key,
	   uint16_t r)
{
	const struct dtxn_table *t = dtxn_catalog_table(cat, tid);
	uint64_t home = dtxn_store_bucket_of(t, key);
	unsigned p;

	for (p = 0; p < DTXN_STORE_MAX_PROBE; p++) {
		dtxn_raddr_t ra = dtxn_store_bucket_raddr(t, r, home + p);
		char *bucket = (char *)dtxn_fabric_mn_base(f, DTXN_RADDR_MN(ra)) +
			       DTXN_RADDR_OFF(ra);
		int i = dtxn_store_bucket_find(t, bucket, key);

		if (i >= 0)
			return dtxn_store_bucket_slot(t, bucket, (unsigned)i);
		if (!dtxn_bucket_overflows(bucket))
			break;
	}
	return NULL;
}

/**
 * The load as an MN process of a cluster does it (issue 31): it maps its
 * own region only, and the loader formats the first replica it maps,
 * a backup where the table's primary is elsewhere. Table "rows" of
 * protocol @p protocol (3 MNs, 3 replicas), @p n_keys rows loaded twice:
 * through a fabric that maps every MN (the embedded run) and through a
 * multi-process shm fabric @p fabric_name that maps every MN but the
 * table's primary's (mn_own; the embedded one is named @p fabric_name
 * with "e" appended). Asserts that on the embedded run every
 * replica's slot (CVT) and aux area (the loaded value) equal the
 * primary's byte for byte, and that each replica the backups-only
 * process formatted equals them too (before the fix its CVT had no valid
 * version and its aux area was zero: "no aux area for a loaded record").
 */
static inline void
ut_load_backups_equal(const char *protocol, const char *fabric_name, uint64_t n_keys)
{
	struct dtxn_db_conf dc = { .size = sizeof(dc), .protocol = protocol,
				   .isolation = DTXN_ISO_SR, .n_mn = 3, .n_replicas = 3,
				   .n_coords = 1, .log_bytes = 4096, .addr_cache_entries = 4096 };
	struct dtxn_table_def d = { .id = 0, .name = "rows", .value_size = 24,
				    .max_keys = n_keys, .n_buckets = n_keys / 4 + 1,
				    .slots_per_bucket = 8 };
	struct dtxn_fabric_conf fc = { .size = sizeof(fc), .driver = "shm", .n_mn = 3,
				       .n_cn = 1, .socket_id = SOCKET_ID_ANY };
	struct dtxn_fabric_conf pc = fc;
	char all[32];
	const struct dtxn_table *t, *tp;
	struct dtxn_fabric *f, *fp;
	struct dtxn_db *db, *dbp;
	uint64_t region, compared = 0;

	snprintf(all, sizeof(all), "%se", fabric_name);
	fc.name = all;
	ut_db_up(&dc, &d, &fc, &db, &f);
	t = dtxn_catalog_table(dtxn_db_catalog(db), 0);
	dbp = dtxn_db_create(&dc);
	assert_non_null(dbp);
	assert_int_equal(dtxn_db_add_table(dbp, &d), 0);
	assert_int_equal(dtxn_db_layout(dbp, &region), 0);
	tp = dtxn_catalog_table(dtxn_db_catalog(dbp), 0);
	pc.name = fabric_name;
	pc.mn_region_size = region;
	pc.multi_process = 1;
	pc.mn_own = 7 & ~(UINT64_C(1) << tp->mn[0]); /* the backups' MNs */
	dtxn_nic_model_none(&pc.nic);
	fp = dtxn_fabric_open(&pc);
	assert_non_null(fp);
	assert_true(dtxn_fabric_partial(fp));
	assert_null(dtxn_fabric_mn_base(fp, tp->mn[0]));
	assert_int_equal(dtxn_db_attach(dbp, fp), 0);
	for (uint64_t k = 1; k <= n_keys; k++) {
		uint8_t v[24];

		for (unsigned i = 0; i < sizeof(v); i++)
			v[i] = (uint8_t)(k * 31 + i);
		assert_int_equal(dtxn_db_load(db, 0, k, v), 0);
		assert_int_equal(dtxn_db_load(dbp, 0, k, v), 0);
	}
	for (uint64_t k = 1; k <= n_keys; k++) {
		const uint8_t *s0 = ut_mn_slot(f, dtxn_db_catalog(db), 0, k, 0);
		const uint8_t *a0 = dtxn_store_aux_ptr(f, t, 0, s0);

		assert_non_null(s0);
		assert_non_null(a0);
		for (uint16_t r = 0; r < t->n_replicas; r++) {
			const uint8_t *s = ut_mn_slot(f, dtxn_db_catalog(db), 0, k, r), *sp;

			assert_non_null(s);
			assert_memory_equal(s, s0, t->slot_size);
			assert_memory_equal(dtxn_store_aux_ptr(f, t, r, s), a0, t->aux_size);
			if (dtxn_fabric_mn_base(fp, tp->mn[r]) == NULL)
				continue; /* the primary's MN: another process's */
			sp = ut_mn_slot(fp, dtxn_db_catalog(dbp), 0, k, r);
			assert_non_null(sp);
			assert_memory_equal(sp, s0, t->slot_size);
			assert_memory_equal(dtxn_store_aux_ptr(fp, tp, r, sp), a0, t->aux_size);
			compared++;
		}
	}
	assert_int_equal(compared, 2 * n_keys); /* both backups of every row */
	dtxn_db_destroy(dbp);
	dtxn_fabric_close(fp);
	dtxn_db_destroy(db);
	dtxn_fabric_close(f);
}

/** Yields @p c until *@p step reaches @p n (interleavings forced by the test). */
static inline void
ut_wait_step(struct dtxn_coord *c, volatile int *step, int n)
{
	while (*step < n)
		dtxn_co_yield_lc(dtxn_coord_co(c));
}

/** A coordinator body and its argument. */
struct ut_coord_spec {
	dtxn_coord_fn fn;
	void *arg;
};

/**
 * Runs @p n coordinators (gids gid0..) on a fresh worker of CN @p cn on
 * the calling lcore until they all end. @p seq numbers the worker (unique
 * names). @return the scheduler's result (0).
 */
static inline int
ut_run_coords(struct dtxn_db *db, const struct ut_coord_spec *specs, unsigned n, uint16_t cn,
	      unsigned gid0, unsigned *seq)
{
	struct dtxn_worker *w;
	unsigned i;
	int rc;

	w = dtxn_worker_create(db, cn, __atomic_fetch_add(seq, 1, __ATOMIC_RELAXED), n,
			       (int)rte_socket_id());
	if (w == NULL)
		return -1;
	for (i = 0; i < n; i++)
		if (dtxn_coord_create(w, gid0 + i, specs[i].fn, specs[i].arg) == NULL)
			return -1;
	rc = dtxn_sched_run_lc(dtxn_worker_sched(w));
	dtxn_worker_destroy(w);
	return rc;
}

/**
 * One read-write txn adding @p delta to the u64 at the start of record
 * @p key's value. @p id: out, the txn's id (may be NULL).
 * @return DTXN_OK or the abort reason.
 */
static inline int
ut_txn_add_u64(struct dtxn_coord *c, uint32_t tid, uint64_t key, uint64_t delta, uint64_t *id)
{
	struct dtxn_txn *t = dtxn_txn_begin(c, DTXN_TXN_RW);
	struct dtxn_item *it = dtxn_txn_add_rw(t, tid, key);
	int rc;

	if (id != NULL)
		*id = dtxn_txn_id(t);
	rc = dtxn_txn_execute(t);
	if (rc != DTXN_OK)
		return rc;
	*(uint64_t *)dtxn_item_value(it) += delta;
	return dtxn_txn_commit(t);
}

/** A CN crash recovery run by a coordinator (ut_recover_main()). */
struct ut_recover {
	struct dtxn_recovery rec; /**< in: dead_cn, gid_first, n_gids (ut_recover_of()); out */
	int rc;                   /**< dtxn_coord_recover()'s */
};

/** @p x zeroed, for dead CN @p dead_cn whose coordinators are gids [@p gid_first, + @p n_gids). */
static inline struct ut_recover *
ut_recover_of(struct ut_recover *x, uint16_t dead_cn, uint32_t gid_first, uint32_t n_gids)
{
	memset(x, 0, sizeof(*x));
	x->rec.dead_cn = dead_cn;
	x->rec.gid_first = gid_first;
	x->rec.n_gids = n_gids;
	return x;
}

/** Coordinator body: dtxn_coord_recover() of struct ut_recover @p arg. */
static inline void
ut_recover_main(struct dtxn_coord *c, void *arg)
{
	struct ut_recover *x = arg;

	x->rc = dtxn_coord_recover(c, &x->rec);
}

/* ------------------------------------------------------------------ */
/* Aux heaps (Motor, Lotus): lazily allocated value areas             */
/* ------------------------------------------------------------------ */

/** What ut_aux_heap_run()'s coordinator saw. */
struct ut_aux_ctx {
	int rc_first;        /* insert of keys 100 and 200, one txn */
	uint32_t rolled;     /* the area the rolled-back insert of 101 had */
	int rc_again;        /* insert of key 101 after an aborted one */
	unsigned n_more;     /* inserts 102.. that committed */
	int rc_full;         /* the first that did not */
};

/*
 * One txn inserting @p key with value @p v, and @p key2 (0: none) with
 * value @p key2 x 10 (two inserts that need an area in the same round);
 * rolled back by the app if @p rolled is not NULL, which gets the area
 * the insert of @p key had.
 */
static inline int
ut_aux_insert(struct dtxn_coord *c, uint64_t key, uint64_t v, uint64_t key2, uint32_t *rolled)
{
	struct dtxn_txn *t = dtxn_txn_begin(c, DTXN_TXN_RW);
	struct dtxn_item *it = dtxn_txn_insert(t, 0, key), *it2 = NULL;
	uint64_t v2 = key2 * 10;
	int rc;

	if (key2 != 0)
		it2 = dtxn_txn_insert(t, 0, key2);
	rc = dtxn_txn_execute(t);
	if (rc != DTXN_OK)
		return rc;
	memcpy(dtxn_item_value(it), &v, sizeof(v));
	if (it2 != NULL)
		memcpy(dtxn_item_value(it2), &v2, sizeof(v2));
	if (rolled != NULL) {
		*rolled = it->aux;
		dtxn_txn_abort(t, DTXN_ABORT_APP);
		return DTXN_ABORT(DTXN_ABORT_APP);
	}
	return dtxn_txn_commit(t);
}

static inline void
ut_aux_co(struct dtxn_coord *c, void *arg)
{
	struct ut_aux_ctx *x = arg;
	uint64_t k = 102;

	x->rc_first = ut_aux_insert(c, 100, 1000, 200, NULL);
	(void)ut_aux_insert(c, 101, 1, 0, &x->rolled);
	x->rc_again = ut_aux_insert(c, 101, 1010, 0, NULL);
	while ((x->rc_full = ut_aux_insert(c, k, k * 10, 0, NULL)) == DTXN_OK && k < 199) {
		x->n_more++;
		k++;
	}
}

/**
 * The db of ut_aux_heap_run() and ut_aux_restart_run() on protocol
 * @p protocol: 3 MNs, 3 replicas, 1 coordinator, chunks of 4 areas; one
 * table "grow" of 128 slots holding up to @p max_keys rows, keys 1..4
 * loaded with values 10..40. Fails the test on any error.
 */
static inline void
ut_aux_db_up(const char *protocol, const char *fabric_name, uint64_t max_keys,
	     struct dtxn_db **db, struct dtxn_fabric **f)
{
	struct dtxn_db_conf dc = { .size = sizeof(dc), .protocol = protocol,
				   .isolation = DTXN_ISO_SR, .n_mn = 3, .n_replicas = 3,
				   .n_coords = 1, .log_bytes = 4096, .addr_cache_entries = 4096,
				   .aux_chunk = 4 };
	struct dtxn_table_def d = { .id = 0, .name = "grow", .value_size = 8, .max_keys = max_keys,
				    .n_buckets = 16, .slots_per_bucket = 8, .n_versions = 2 };
	struct dtxn_fabric_conf fc = { .size = sizeof(fc), .driver = "shm", .n_mn = 3,
				       .n_cn = 1, .socket_id = SOCKET_ID_ANY, .name = fabric_name };

	ut_db_up(&dc, &d, &fc, db, f);
	for (uint64_t k = 1; k <= 4; k++) {
		uint64_t v = k * 10;

		assert_int_equal(dtxn_db_load(*db, 0, k, &v), 0);
	}
}

/**
 * Lazily allocated aux areas on protocol @p protocol (one with aux areas:
 * Motor, Lotus; doc/guides/store.md "Aux areas"): a table of 128 slots
 * whose heap holds max_keys 8 + 1 coordinator x a chunk of 4 = 12 areas,
 * 4 rows loaded. Inserts take areas a chunk (one FAA) at a time, two in
 * one round distinct ones; an aborted insert gives its area back to the
 * next; the 9th insert finds the heap exhausted and aborts with
 * index_full; every row, loaded or
 * inserted, then reads back its own value from its own area, the same
 * area number on every replica. The bump word ends at @p bump_end: 16
 * after 3 FAAs of 4 (Motor), 4 when the coordinator took its share of
 * the insert room with a READ (dtxn_loc_ops.aux_share, Lotus). @p more:
 * the inserts after the first three that commit: 5 (8 areas of room),
 * 4 with aux_share (the heap's last area holds the coordinator's share
 * word).
 */
static inline void
ut_aux_heap_run(const char *protocol, const char *fabric_name, unsigned *seq, uint64_t bump_end,
		unsigned more)
{
	struct ut_coord_spec spec = { ut_aux_co, NULL };
	struct ut_aux_ctx x = { 0 };
	const struct dtxn_catalog *cat;
	const struct dtxn_table *t;
	struct dtxn_fabric *f;
	struct dtxn_db *db;
	uint8_t used[16] = { 0 };
	uint64_t k, v, bump;

	ut_aux_db_up(protocol, fabric_name, 8, &db, &f);
	cat = dtxn_db_catalog(db);
	t = dtxn_catalog_table(cat, 0);
	assert_int_equal(t->aux_areas, 12);
	spec.arg = &x;
	assert_int_equal(ut_run_coords(db, &spec, 1, 3, 0, seq), 0); /* CN: fabric node 3 */
	assert_int_equal(x.rc_first, DTXN_OK);
	assert_int_equal(x.rc_again, DTXN_OK);
	assert_int_equal(x.n_more, more);  /* 12 areas: 4 loaded, 100, 200, 101, 102..106 */
	assert_int_equal(x.rc_full, DTXN_ABORT_INDEX_FULL);
	/* key 100 took area 5 (the first of the heap's insert room), key 101
	 * the area the rolled-back insert gave back */
	assert_int_equal(dtxn_store_slot_aux(ut_mn_slot(f, cat, 0, 100, 0)), 5);
	assert_true(x.rolled >= 5 && x.rolled <= 12);
	assert_int_equal(dtxn_store_slot_aux(ut_mn_slot(f, cat, 0, 101, 0)), x.rolled);
	assert_null(ut_mn_slot(f, cat, 0, 102 + more, 0));
	for (k = 1; k <= 200; k++) {
		uint32_t n;

		if ((k > 4 && k < 100) || (k >= 102 + more && k < 200))
			continue;
		assert_int_equal(dtxn_db_get(db, 0, k, &v), 0);
		assert_int_equal(v, k <= 4 ? k * 10 : k == 100 ? 1000 : k == 101 ? 1010 : k * 10);
		n = dtxn_store_slot_aux(ut_mn_slot(f, cat, 0, k, 0));
		assert_true(n >= 1 && n <= 12);
		assert_int_equal(used[n], 0);  /* one row per area */
		used[n] = 1;
		for (uint16_t r = 1; r < t->n_replicas; r++)
			assert_int_equal(dtxn_store_slot_aux(ut_mn_slot(f, cat, 0, k, r)), n);
	}
	memcpy(&bump, (char *)dtxn_fabric_mn_base(f, t->mn[0]) + t->aux_off[0], sizeof(bump));
	assert_int_equal(bump, bump_end);
	dtxn_db_destroy(db);
	dtxn_fabric_close(f);
}

/** What one incarnation of ut_aux_restart_run()'s coordinator did. */
struct ut_aux_inc {
	uint64_t key0;       /* its first key */
	unsigned n;          /* inserts to make */
	unsigned done;       /* that committed */
};

static inline void
ut_aux_inc_co(struct dtxn_coord *c, void *arg)
{
	struct ut_aux_inc *x = arg;

	for (uint64_t k = x->key0; k < x->key0 + x->n; k++)
		if (ut_aux_insert(c, k, k * 10, 0, NULL) == DTXN_OK)
			x->done++;
}

/**
 * A coordinator's next incarnation (a CN process started again: the same
 * gid, a new worker, nothing of the old one's state) inserts rows after
 * the first one's (doc/guides/store.md "Aux areas"): on protocol
 * @p protocol (Motor, Lotus), a table of 128 slots whose heap holds
 * max_keys 64 + 1 coordinator x a chunk of 4 areas, 4 rows loaded; the
 * first incarnation inserts keys 100..109, the second 110..119. Every
 * row then reads back its own value and holds an area of its own: the
 * second never hands out an area a row of the first holds (with Lotus's
 * fixed share, dtxn_loc_ops.aux_share, it began the share again before
 * the share word, and its inserts overwrote the first's rows).
 */
static inline void
ut_aux_restart_run(const char *protocol, const char *fabric_name, unsigned *seq)
{
	struct ut_aux_inc inc[2] = { { .key0 = 100, .n = 10 }, { .key0 = 110, .n = 10 } };
	struct ut_coord_spec spec = { ut_aux_inc_co, NULL };
	const struct dtxn_catalog *cat;
	struct dtxn_fabric *f;
	struct dtxn_db *db;
	uint8_t used[128] = { 0 };
	uint64_t k, v;

	ut_aux_db_up(protocol, fabric_name, 64, &db, &f);
	cat = dtxn_db_catalog(db);
	assert_int_equal(dtxn_catalog_table(cat, 0)->aux_areas, 68);
	for (unsigned i = 0; i < 2; i++) { /* the same gid 0 twice: two incarnations */
		spec.arg = &inc[i];
		assert_int_equal(ut_run_coords(db, &spec, 1, 3, 0, seq), 0);
		assert_int_equal(inc[i].done, 10);
	}
	for (k = 1; k < 120; k++) {
		uint32_t n;

		if (k > 4 && k < 100)
			continue;
		assert_int_equal(dtxn_db_get(db, 0, k, &v), 0);
		assert_int_equal(v, k * 10);
		n = dtxn_store_slot_aux(ut_mn_slot(f, cat, 0, k, 0));
		assert_true(n >= 1 && n <= 68);
		assert_int_equal(used[n], 0);  /* one row per area */
		used[n] = 1;
	}
	dtxn_db_destroy(db);
	dtxn_fabric_close(f);
}

#endif /* DTXN_UT_TXN_H */
