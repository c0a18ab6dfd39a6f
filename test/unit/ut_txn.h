/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DTXN_UT_TXN_H
#define DTXN_UT_TXN_H

/*
 * Helpers for the protocol tests (test_ford.c, test_motor.c, test_tso.c):
 * find a record's slot in MN memory (the MN role's view), and run
 * coordinators as coroutines on a fresh worker of the calling lcore, one
 * hand-written transaction each. Header-only: each test binary is one
 * translation unit.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <rte_lcore.h>

#include "dtxn_txn.h"

/**
 * A db with one table @p d, laid out, on a fresh fabric (@p fc, its region
 * size filled in, NIC model none), attached: what a test that needs its
 * own cluster shape starts with. Fails the test on any error.
 */
static inline void
ut_db_up(const struct dtxn_db_conf *dc, const struct dtxn_table_def *d,
	 struct dtxn_fabric_conf *fc, struct dtxn_db **db, struct dtxn_fabric **f)
{
	uint64_t region;

	*db = dtxn_db_create(dc);
	assert_non_null(*db);
	assert_int_equal(dtxn_db_add_table(*db, d), 0);
	assert_int_equal(dtxn_db_layout(*db, &region), 0);
	fc->mn_region_size = region;
	dtxn_nic_model_none(&fc->nic);
	*f = dtxn_fabric_open(fc);
	assert_non_null(*f);
	assert_int_equal(dtxn_db_attach(*db, *f), 0);
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
		if (((struct dtxn_bucket_hdr *)bucket)->overflow == 0)
			break;
	}
	return NULL;
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

#endif /* DTXN_UT_TXN_H */
