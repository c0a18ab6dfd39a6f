/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DTXN_UT_CLUSTER_H
#define DTXN_UT_CLUSTER_H

/*
 * A one-MN shm cluster under ford for the benchmark tests (test_tpcc.c,
 * test_tatp.c): define + load a benchmark, run coordinators to a quota,
 * run one hand-written transaction (to break an invariant on purpose and
 * repair it), and look up check results by name. Header-only: each test
 * binary is one translation unit.
 */

#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "dtxn_bench.h"
#include "dtxn_fabric.h"
#include "dtxn_sched.h"
#include "dtxn_stats.h"
#include "dtxn_txn.h"

#define UT_COORDS 4
/* coordinator slots for hand-written transactions (ut_mutate), one each */
#define UT_SPARE 32

struct ut_cluster {
	struct dtxn_fabric *f;
	struct dtxn_db *db;
	struct dtxn_worker *w;
	struct dtxn_bench *b;
	struct dtxn_run_stats *stats;
	struct dtxn_bench_ctx ctx[UT_COORDS];
	struct dtxn_bench_ctx *ctxp[UT_COORDS];
	struct dtxn_report *rep;
	uint32_t next_gid;
};

/* Builds the cluster and loads @p b. false: no shm or ford here (skip). */
static inline bool
ut_cluster_up(struct ut_cluster *u, struct dtxn_bench *b, const char *name)
{
	struct dtxn_db_conf dc = {
		.size = sizeof(dc), .protocol = "ford", .isolation = DTXN_ISO_SR,
		.n_mn = 1, .n_replicas = 1, .n_coords = UT_COORDS + UT_SPARE,
	};
	struct dtxn_fabric_conf fc = {
		.size = sizeof(fc), .driver = "shm", .n_mn = 1, .n_cn = 1,
		.socket_id = SOCKET_ID_ANY, .name = name,
	};
	uint64_t region = 0;

	memset(u, 0, sizeof(*u));
	u->b = b;
	u->next_gid = UT_COORDS;
	u->db = dtxn_db_create(&dc);
	if (u->db == NULL) {
		print_message("skipping: no ford protocol (%s)\n", rte_strerror(rte_errno));
		return false;
	}
	if (b->ops->define(b, u->db) != 0)
		fail_msg("define: %s", b->err);
	assert_int_equal(dtxn_db_layout(u->db, &region), 0);
	fc.mn_region_size = region;
	dtxn_nic_model_none(&fc.nic);
	u->f = dtxn_fabric_open(&fc);
	if (u->f == NULL) {
		print_message("skipping: no shm fabric (%s)\n", rte_strerror(rte_errno));
		dtxn_db_destroy(u->db);
		return false;
	}
	assert_int_equal(dtxn_db_attach(u->db, u->f), 0);
	if (b->ops->load(b, u->db) != 0)
		fail_msg("load: %s", b->err);
	/* node ids: MNs first (0), then the CN (1) */
	u->w = dtxn_worker_create(u->db, 1, 0, UT_COORDS + UT_SPARE, SOCKET_ID_ANY);
	assert_non_null(u->w);
	u->stats = rte_zmalloc("ut_stats", sizeof(*u->stats), 0);
	u->rep = rte_zmalloc("ut_report", sizeof(*u->rep), 0);
	assert_non_null(u->stats);
	assert_non_null(u->rep);
	dtxn_run_stats_reset(u->stats, b->ops->n_types);
	for (unsigned i = 0; i < UT_COORDS; i++) {
		u->ctx[i].bench = b;
		u->ctx[i].stats = u->stats;
		u->ctxp[i] = &u->ctx[i];
	}
	return true;
}

/* Runs UT_COORDS coordinators (once per cluster), each to @p quota finished txns. */
static inline void
ut_cluster_run(struct ut_cluster *u, uint64_t quota)
{
	for (unsigned i = 0; i < UT_COORDS; i++) {
		u->ctx[i].quota = quota;
		dtxn_rng_seed(&u->ctx[i].rng, u->b->seed * 1000 + i);
		assert_non_null(dtxn_coord_create(u->w, i, dtxn_bench_coord_main, &u->ctx[i]));
	}
	assert_int_equal(dtxn_sched_run_lc(dtxn_worker_sched(u->w)), 0);
	for (unsigned i = 0; i < UT_COORDS; i++)
		assert_true(u->ctx[i].finished);
}

static inline void
ut_cluster_down(struct ut_cluster *u)
{
	dtxn_worker_destroy(u->w);
	dtxn_db_destroy(u->db);
	dtxn_fabric_close(u->f);
	rte_free(u->stats);
	rte_free(u->rep);
}

/* One hand-written change to one record, in its own transaction. */
enum ut_op { UT_ADD_I64, UT_ADD_U32, UT_SET_U64, UT_DELETE, UT_INSERT };

struct ut_mutation {
	enum ut_op op;
	uint32_t table;
	uint64_t key;
	size_t off;          /* UT_ADD_*, UT_SET_U64: byte offset in the value */
	int64_t delta;       /* UT_ADD_*: added; UT_SET_U64: the value */
	const void *value;   /* UT_INSERT: the whole value */
	size_t len;          /* UT_INSERT: its bytes */
	int rc;              /* out: the commit's result */
};

static inline void
ut_mutate_fn(struct dtxn_coord *c, void *arg)
{
	struct ut_mutation *m = arg;
	struct dtxn_txn *t = dtxn_txn_begin(c, DTXN_TXN_RW);
	struct dtxn_item *it;
	char *v;

	switch (m->op) {
	case UT_DELETE:
		it = dtxn_txn_delete(t, m->table, m->key);
		break;
	case UT_INSERT:
		it = dtxn_txn_insert(t, m->table, m->key);
		break;
	default:
		it = dtxn_txn_add_rw(t, m->table, m->key);
		break;
	}
	m->rc = dtxn_txn_execute(t);
	if (m->rc != DTXN_OK)
		return;
	v = dtxn_item_value(it);
	if (m->op == UT_ADD_I64) {
		int64_t x;

		memcpy(&x, v + m->off, sizeof(x));
		x += m->delta;
		memcpy(v + m->off, &x, sizeof(x));
	} else if (m->op == UT_ADD_U32) {
		uint32_t x;

		memcpy(&x, v + m->off, sizeof(x));
		x += (uint32_t)m->delta;
		memcpy(v + m->off, &x, sizeof(x));
	} else if (m->op == UT_SET_U64) {
		uint64_t x = (uint64_t)m->delta;

		memcpy(v + m->off, &x, sizeof(x));
	} else if (m->op == UT_INSERT) {
		memcpy(v, m->value, m->len);
	}
	m->rc = dtxn_txn_commit(t);
}

/* Runs @p m in a spare coordinator; asserts it committed. */
static inline void
ut_mutate(struct ut_cluster *u, struct ut_mutation *m)
{
	assert_true(u->next_gid < UT_COORDS + UT_SPARE);
	m->rc = -1;
	assert_non_null(dtxn_coord_create(u->w, u->next_gid++, ut_mutate_fn, m));
	assert_int_equal(dtxn_sched_run_lc(dtxn_worker_sched(u->w)), 0);
	assert_int_equal(m->rc, DTXN_OK);
}

/* Re-runs the benchmark's check into a fresh report. */
static inline void
ut_check(struct ut_cluster *u, unsigned n_ctx)
{
	u->rep->n_checks = 0;
	assert_int_equal(u->b->ops->check(u->b, u->db, u->ctxp, n_ctx, u->rep), 0);
}

/* 1 passed, 0 failed, -1 no such check. */
static inline int
ut_check_ok(const struct dtxn_report *r, const char *name)
{
	for (unsigned i = 0; i < r->n_checks; i++)
		if (strcmp(r->checks[i].name, name) == 0)
			return r->checks[i].ok ? 1 : 0;
	return -1;
}

/*
 * Asserts that exactly the checks named in @p failing (NULL-terminated)
 * failed and every other one passed; prints the failures.
 */
static inline void
ut_expect_failing(const struct dtxn_report *r, const char *const *failing)
{
	for (unsigned i = 0; i < r->n_checks; i++) {
		bool expect_fail = false;

		for (unsigned k = 0; failing != NULL && failing[k] != NULL; k++)
			expect_fail = expect_fail || strcmp(failing[k], r->checks[i].name) == 0;
		if (!r->checks[i].ok || expect_fail)
			print_message("  %s: %s (%s)\n", r->checks[i].name,
				      r->checks[i].ok ? "ok" : "FAILED", r->checks[i].detail);
		if (r->checks[i].ok == expect_fail)
			fail_msg("check %s: %s, expected %s", r->checks[i].name,
				 r->checks[i].ok ? "passed" : "failed",
				 expect_fail ? "a failure" : "a pass");
	}
	for (unsigned k = 0; failing != NULL && failing[k] != NULL; k++)
		assert_int_equal(ut_check_ok(r, failing[k]), 0);
}

#endif /* DTXN_UT_CLUSTER_H */
