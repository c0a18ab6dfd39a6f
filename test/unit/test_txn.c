/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/txn without a fabric: protocol registry, names, db creation errors,
 * txn ids, the item API, the scratch arena and batch building. A fake
 * protocol ("ut_nop") stands in for a real one; coordinators are built by
 * hand around lib/txn's private structs (SPDK style: tests reach internals).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "dtxn_txn_driver.h"
#include "txn_private.h"
#include "unit_eal.h"

/* ------------------------------------------------------------------ */
/* A protocol that records what lib/txn asks of it                    */
/* ------------------------------------------------------------------ */

static unsigned g_nop_exec_calls, g_nop_exec_items, g_nop_commits, g_nop_aborts;
static int g_nop_exec_rc;

static uint32_t
nop_slot_size(uint32_t value_size)
{
	return DTXN_SLOT_HDR_SIZE + 8 + RTE_ALIGN_CEIL(value_size, 8);
}

static void
nop_slot_format(const struct dtxn_table *t, void *slot, const void *value, void *arg)
{
	(void)arg;
	memcpy((char *)slot + 24, value, t->def.value_size);
}

static void *
nop_slot_value(const struct dtxn_table *t, void *slot)
{
	(void)t;
	return (char *)slot + 24;
}

static int
nop_execute(struct dtxn_txn *t)
{
	g_nop_exec_calls++;
	g_nop_exec_items += t->n_items - t->n_fetched;
	return g_nop_exec_rc;
}

static int
nop_commit(struct dtxn_txn *t)
{
	(void)t;
	g_nop_commits++;
	return DTXN_OK;
}

static void
nop_abort(struct dtxn_txn *t)
{
	(void)t;
	g_nop_aborts++;
}

static const struct dtxn_cc_ops nop_ops = {
	.name = "ut_nop",
	.isolations = 1u << DTXN_ISO_SR,
	.weaken = { [DTXN_ISO_SR] = DTXN_DEBUG_SKIP_WW_CHECK },
	.slot_size = nop_slot_size,
	.slot_format = nop_slot_format,
	.slot_value = nop_slot_value,
	.execute = nop_execute,
	.commit = nop_commit,
	.abort = nop_abort,
};

DTXN_CC_REGISTER(ut_nop, &nop_ops);

/* ------------------------------------------------------------------ */
/* Hand-built db, worker and coordinators                             */
/* ------------------------------------------------------------------ */

#define T_ACCT 1
#define T_MISSING 7

struct fixture {
	struct dtxn_db *db;
	struct txn_worker tw;
	struct txn_coord tc[2];
	struct dtxn_wr wrs[2][64];
	struct dtxn_co *fake_co;
};

static struct dtxn_db *
make_db(const char *proto, enum dtxn_isolation iso)
{
	struct dtxn_db_conf conf = {
		.size = sizeof(conf),
		.protocol = proto,
		.isolation = iso,
		.n_mn = 3,
		.n_replicas = 3,
		.n_coords = 4,
	};
	return dtxn_db_create(&conf);
}

static int
setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	struct dtxn_table_def def = { .id = T_ACCT, .name = "acct", .value_size = 12,
				      .max_keys = 100 };
	unsigned i;

	assert_non_null(fx);
	fx->db = make_db("ut_nop", DTXN_ISO_SR);
	assert_non_null(fx->db);
	assert_int_equal(dtxn_db_add_table(fx->db, &def), 0);
	fx->tw.pub.db = fx->db;
	fx->tw.pub.socket_id = SOCKET_ID_ANY;
	fx->tw.n_mn = 3;
	/* batch building only checks that a QP exists; nothing is posted */
	for (i = 0; i < 3; i++)
		fx->tw.pub.qp[i] = (struct dtxn_qp *)(uintptr_t)(0x1000 + i);
	fx->fake_co = (struct dtxn_co *)(uintptr_t)0x4000;
	for (i = 0; i < 2; i++) {
		struct dtxn_coord *c = &fx->tc[i].pub;

		c->worker = &fx->tw.pub;
		c->gid = i;
		c->co = fx->fake_co;
		c->wrs = fx->wrs[i];
		c->n_wrs = 64;
		c->txn = calloc(1, sizeof(*c->txn));
		assert_non_null(c->txn);
		c->txn->coord = c;
		txn_arena_reset(&fx->tc[i]);
		assert_non_null(c->arena);
	}
	*state = fx;
	return 0;
}

static int
teardown(void **state)
{
	struct fixture *fx = *state;
	unsigned i;

	for (i = 0; i < 2; i++) {
		txn_arena_free(&fx->tc[i]);
		free(fx->tc[i].pub.txn);
	}
	dtxn_db_destroy(fx->db);
	free(fx);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Tests                                                              */
/* ------------------------------------------------------------------ */

static void
test_registry(void **state)
{
	struct dtxn_cc_ops bad = nop_ops;
	char buf[256];

	(void)state;
	assert_ptr_equal(dtxn_cc_find("ut_nop"), &nop_ops);
	assert_null(dtxn_cc_find("no_such_protocol"));
	assert_null(dtxn_cc_find(NULL));
	assert_int_equal(dtxn_cc_register(&nop_ops), -EEXIST);
	bad.name = "ut_bad";
	bad.commit = NULL;
	assert_int_equal(dtxn_cc_register(&bad), -EINVAL);
	assert_null(dtxn_cc_find("ut_bad"));
	assert_int_equal(dtxn_cc_register(NULL), -EINVAL);
	dtxn_cc_list(buf, sizeof(buf));
	assert_non_null(strstr(buf, "ut_nop"));
	assert_non_null(strstr(buf, "ford"));
	/* a short buffer is never overrun and stays a string */
	memset(buf, 'x', sizeof(buf));
	dtxn_cc_list(buf, 3);
	assert_true(strlen(buf) < 3);
}

static void
test_names(void **state)
{
	(void)state;
	assert_string_equal(dtxn_abort_reason_name(DTXN_ABORT_LOCK_CONFLICT), "lock_conflict");
	assert_string_equal(dtxn_abort_reason_name(DTXN_ABORT_VALIDATION), "validation");
	assert_string_equal(dtxn_abort_reason_name(DTXN_ABORT_APP), "app");
	assert_string_equal(dtxn_abort_reason_name(-1), "unknown");
	assert_string_equal(dtxn_abort_reason_name(DTXN_ABORT_REASON_MAX), "unknown");
	for (int r = 0; r < DTXN_ABORT_REASON_MAX; r++)
		assert_non_null(dtxn_abort_reason_name(r));
	assert_string_equal(dtxn_isolation_name(DTXN_ISO_SR), "sr");
	assert_string_equal(dtxn_isolation_name(DTXN_ISO_SI), "si");
	assert_int_equal(dtxn_isolation_parse("sr"), DTXN_ISO_SR);
	assert_int_equal(dtxn_isolation_parse("SI"), DTXN_ISO_SI);
	assert_int_equal(dtxn_isolation_parse("rc"), -EINVAL);
	assert_int_equal(dtxn_isolation_parse(NULL), -EINVAL);
}

/* --debug-weaken: names, and which protocol declares which mode (weaken.c) */
static void
test_weaken(void **state)
{
	struct dtxn_db_conf conf = { .size = sizeof(conf), .protocol = "ut_nop",
				     .n_mn = 3, .n_replicas = 3, .n_coords = 1 };
	struct dtxn_db *db;
	uint32_t flag = 99;
	char buf[128];

	(void)state;
	assert_int_equal(dtxn_debug_weaken_parse("none", &flag), 0);
	assert_int_equal(flag, 0);
	assert_int_equal(dtxn_debug_weaken_parse("", &flag), 0);
	assert_int_equal(dtxn_debug_weaken_parse("skip-lock-check", &flag), 0);
	assert_int_equal(flag, DTXN_DEBUG_SKIP_LOCK_CHECK);
	assert_int_equal(dtxn_debug_weaken_parse("skip-ww-check", &flag), 0);
	assert_int_equal(flag, DTXN_DEBUG_SKIP_WW_CHECK);
	assert_int_equal(dtxn_debug_weaken_parse("skip", &flag), -EINVAL);
	assert_int_equal(dtxn_debug_weaken_parse(NULL, &flag), -EINVAL);
	dtxn_debug_weaken_list(buf, sizeof(buf));
	assert_string_equal(buf, "skip-lock-check, skip-read-validation, skip-ww-check, oocc-alg1");
	dtxn_debug_weaken_list(buf, 5);
	assert_true(strlen(buf) < 5);

	assert_int_equal(dtxn_cc_weaken_supported("ut_nop", DTXN_ISO_SR, DTXN_DEBUG_SKIP_WW_CHECK,
						  buf, sizeof(buf)), 1);
	assert_string_equal(buf, "skip-ww-check");
	assert_int_equal(dtxn_cc_weaken_supported("ut_nop", DTXN_ISO_SR, 0, NULL, 0), 1);
	assert_int_equal(dtxn_cc_weaken_supported("ut_nop", DTXN_ISO_SR,
						  DTXN_DEBUG_SKIP_LOCK_CHECK, NULL, 0), 0);
	assert_int_equal(dtxn_cc_weaken_supported("ut_nop", DTXN_ISO_SI,
						  DTXN_DEBUG_SKIP_WW_CHECK, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "");
	assert_int_equal(dtxn_cc_weaken_supported("no_such", DTXN_ISO_SR, 0, NULL, 0), -ENOENT);
	assert_int_equal(dtxn_cc_weaken_supported("ut_nop", DTXN_ISO_MAX, 0, NULL, 0), -EINVAL);
	assert_int_equal(dtxn_cc_weaken_supported("ford", DTXN_ISO_SR,
						  DTXN_DEBUG_SKIP_LOCK_CHECK, NULL, 0), 1);

	/* the db refuses a flag the protocol does not honour, takes one it does */
	conf.debug_flags = DTXN_DEBUG_SKIP_LOCK_CHECK;
	assert_null(dtxn_db_create(&conf));
	assert_int_equal(rte_errno, ENOTSUP);
	conf.debug_flags = DTXN_DEBUG_SKIP_WW_CHECK;
	db = dtxn_db_create(&conf);
	assert_non_null(db);
	assert_int_equal(db->conf.debug_flags, DTXN_DEBUG_SKIP_WW_CHECK);
	dtxn_db_destroy(db);
}

static void
test_db_create_errors(void **state)
{
	struct dtxn_db_conf conf = { .size = sizeof(conf), .protocol = "ut_nop",
				     .n_mn = 3, .n_replicas = 3, .n_coords = 1 };
	struct dtxn_db *db;

	(void)state;
	assert_null(make_db("no_such_protocol", DTXN_ISO_SR));
	assert_int_equal(rte_errno, ENOENT);
	assert_null(make_db("ut_nop", DTXN_ISO_SI));
	assert_int_equal(rte_errno, ENOTSUP);
	assert_null(make_db("ford", DTXN_ISO_SI));
	assert_int_equal(rte_errno, ENOTSUP);
	assert_null(dtxn_db_create(NULL));
	assert_int_equal(rte_errno, EINVAL);
	conf.n_coords = 0;
	assert_null(dtxn_db_create(&conf));
	assert_int_equal(rte_errno, EINVAL);
	conf.n_coords = 1;
	conf.log_bytes = 100; /* not a multiple of 64 */
	assert_null(dtxn_db_create(&conf));
	assert_int_equal(rte_errno, EINVAL);
	conf.log_bytes = 0;
	db = dtxn_db_create(&conf);
	assert_non_null(db);
	assert_string_equal(dtxn_db_protocol(db), "ut_nop");
	assert_int_equal(db->conf.log_bytes, TXN_LOG_BYTES_DEFAULT);
	assert_null(dtxn_db_fabric(db));
	/* not attached: no loads, no attach before layout */
	assert_int_equal(dtxn_db_load(db, 0, 1, "x"), -ENXIO);
	assert_int_equal(dtxn_db_attach(db, NULL), -EINVAL);
	dtxn_db_destroy(db);
	dtxn_db_destroy(NULL);
}

static void
test_db_table_slot_size(void **state)
{
	struct fixture *fx = *state;
	const struct dtxn_table *t = dtxn_catalog_table(dtxn_db_catalog(fx->db), T_ACCT);
	struct dtxn_table_def dup = { .id = T_ACCT, .name = "dup", .value_size = 8,
				      .max_keys = 10 };

	assert_non_null(t);
	assert_int_equal(t->slot_size, nop_slot_size(12));
	assert_int_equal(dtxn_db_add_table(fx->db, &dup), -EEXIST);
	assert_int_equal(dtxn_db_add_table(fx->db, NULL), -EINVAL);
}

static void
test_txn_ids(void **state)
{
	struct fixture *fx = *state;
	uint64_t seen[200];
	unsigned n = 0, i, j, k;

	for (k = 0; k < 100; k++) {
		for (i = 0; i < 2; i++) {
			struct dtxn_txn *t = dtxn_txn_begin(&fx->tc[i].pub, DTXN_TXN_RW);

			assert_non_null(t);
			assert_true(dtxn_txn_id(t) > 0);
			/* the coordinator's gid is recoverable from the id */
			assert_int_equal((dtxn_txn_id(t) >> 40) - 1, i);
			assert_int_equal(dtxn_txn_id_gid(dtxn_txn_id(t)), i);
			seen[n++] = dtxn_txn_id(t);
			dtxn_txn_abort(t, DTXN_ABORT_APP);
		}
	}
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			assert_true(seen[i] != seen[j]);
}

/* Leases (lease.c): who is dead, who recovers, what a recovery owns. */
static void
test_lease_view(void **state)
{
	struct dtxn_lease_view v;
	struct dtxn_recovery rec;
	const uint64_t lease = 10000000;

	(void)state;
	memset(&v, 0, sizeof(v));
	assert_int_equal(dtxn_lease_expired(&v, 1, lease), 0);       /* never polled */
	assert_int_equal(dtxn_lease_recoverer(&v, 1, lease), UINT16_MAX);
	v.started = true;
	v.n_mn = 3;
	v.n_cn = 3;                                                   /* nodes 3, 4, 5 */
	v.beat[3] = v.beat[4] = v.beat[5] = 7;
	v.moved_ns[3] = 100 * lease;
	v.moved_ns[4] = 100 * lease - lease - 1;                      /* silent for a lease + 1 ns */
	v.moved_ns[5] = 100 * lease - lease;                          /* exactly a lease: alive */
	assert_int_equal(dtxn_lease_expired(&v, 100 * lease, lease), UINT64_C(1) << 4);
	assert_int_equal(dtxn_lease_recoverer(&v, 100 * lease, lease), 3);
	/* the lowest live CN recovers: node 3 dead too -> node 5 */
	v.moved_ns[3] = 0;
	assert_int_equal(dtxn_lease_expired(&v, 100 * lease, lease),
			 (UINT64_C(1) << 3) | (UINT64_C(1) << 4));
	assert_int_equal(dtxn_lease_recoverer(&v, 100 * lease, lease), 5);
	/* a CN that never beat (not started yet) has no lease to lose */
	v.beat[4] = 0;
	assert_int_equal(dtxn_lease_expired(&v, 100 * lease, lease), UINT64_C(1) << 3);
	v.beat[4] = 7;
	/* a recovered CN is neither dead again nor a recoverer */
	v.state[3] = DTXN_LEASE_STATE_RECOVERED;
	assert_int_equal(dtxn_lease_expired(&v, 100 * lease, lease), UINT64_C(1) << 4);
	assert_int_equal(dtxn_lease_recoverer(&v, 100 * lease, lease), 5);
	/* incarnations: a fenced CN is dead whatever its beat (a zombie may beat
	 * once more); one that left cleanly is not; a restart (incarnation 1,
	 * alive) is a live CN again */
	v.moved_ns[4] = 100 * lease;
	v.state[4] = DTXN_LEASE_WORD(0, DTXN_LEASE_STATE_FENCED);
	assert_int_equal(dtxn_lease_expired(&v, 100 * lease, lease), UINT64_C(1) << 4);
	assert_int_equal(dtxn_lease_recoverer(&v, 100 * lease, lease), 5);
	v.state[4] = DTXN_LEASE_WORD(0, DTXN_LEASE_STATE_LEFT);
	v.moved_ns[4] = 0;
	assert_int_equal(dtxn_lease_expired(&v, 100 * lease, lease), 0);
	v.state[3] = DTXN_LEASE_WORD(1, DTXN_LEASE_STATE_ALIVE);
	v.moved_ns[3] = 100 * lease;
	assert_int_equal(dtxn_lease_expired(&v, 100 * lease, lease), 0);
	assert_int_equal(dtxn_lease_recoverer(&v, 100 * lease, lease), 3);
	assert_int_equal(DTXN_LEASE_WORD_INC(v.state[3]), 1);
	assert_int_equal(DTXN_LEASE_WORD_STATE(DTXN_LEASE_WORD(7, DTXN_LEASE_STATE_LEFT)),
			 DTXN_LEASE_STATE_LEFT);

	/* a watcher's own absence counts against nobody (period_ns): after a
	 * gap of 5 periods, a CN unmoved since the poll before it is charged
	 * one period, not six; without a period it is charged all */
	memset(&v, 0, sizeof(v));
	v.period_ns = lease / 5;
	{
		const uint64_t b[DTXN_MAX_NODES] = { [3] = 1, [4] = 1 }, st[DTXN_MAX_NODES] = { 0 };
		const uint64_t b2[DTXN_MAX_NODES] = { [3] = 1, [4] = 2 };

		dtxn_lease_view_update(&v, 3, 2, 10 * lease, b, st);
		dtxn_lease_view_update(&v, 3, 2, 10 * lease + lease / 5, b, st);  /* on time */
		assert_int_equal(v.gaps, 0);
		dtxn_lease_view_update(&v, 3, 2, 10 * lease + 7 * lease / 5, b2, st); /* 6 periods later */
		assert_int_equal(v.gaps, 1);
		assert_int_equal(v.unwatched_ns, lease);                     /* 6 periods - 1 */
		assert_int_equal(v.moved_ns[3], 10 * lease + lease);        /* unmoved: moved on */
		assert_int_equal(v.moved_ns[4], 10 * lease + 7 * lease / 5);  /* moved: now */
		assert_int_equal(dtxn_lease_expired(&v, 10 * lease + 7 * lease / 5, lease), 0);
		v.period_ns = 0; /* the same without the rule: node 3 expired */
		v.moved_ns[3] = 10 * lease;
		dtxn_lease_view_update(&v, 3, 2, 10 * lease + 12 * lease / 5, b2, st);
		assert_int_equal(dtxn_lease_expired(&v, 10 * lease + 12 * lease / 5, lease),
				 UINT64_C(1) << 3);
	}

	memset(&rec, 0, sizeof(rec));
	rec.gid_first = 8;
	rec.n_gids = 4;
	assert_false(dtxn_recovery_owns(&rec, 0));                   /* a free lock */
	assert_false(dtxn_recovery_owns(&rec, ((uint64_t)(7 + 1) << 40) | 5));
	assert_true(dtxn_recovery_owns(&rec, ((uint64_t)(8 + 1) << 40) | 5));
	assert_true(dtxn_recovery_owns(&rec, ((uint64_t)(11 + 1) << 40) | 1));
	assert_false(dtxn_recovery_owns(&rec, ((uint64_t)(12 + 1) << 40) | 1));
	dtxn_recovery_note_visible(&rec, 42);
	dtxn_recovery_note_visible(&rec, 42);
	dtxn_recovery_note_visible(&rec, 43);
	assert_int_equal(rec.n_visible, 2);
	assert_int_equal(rec.visible[1], 43);
	dtxn_recovery_note_undone(&rec, 44);
	dtxn_recovery_note_undone(&rec, 44);
	assert_int_equal(rec.n_undone, 1);
	assert_int_equal(rec.undone[0], 44);
	assert_int_equal(rec.n_visible, 2);
	/* verdicts: undone, visible, none; undone_open only for an open txn of that gid */
	assert_int_equal(dtxn_recovery_verdict(NULL, 44, true), 0);
	assert_int_equal(dtxn_recovery_verdict(&rec, 44, false), -1);
	assert_int_equal(dtxn_recovery_verdict(&rec, 43, true), 1);
	assert_int_equal(dtxn_recovery_verdict(&rec, 45, true), 0);
	assert_true(dtxn_recovery_note_undone_open(&rec, 9));
	assert_false(dtxn_recovery_note_undone_open(&rec, 9));
	assert_int_equal(rec.n_undone_open, 1);
	assert_int_equal(dtxn_recovery_verdict(&rec, ((uint64_t)(9 + 1) << 40) | 7, true), -1);
	assert_int_equal(dtxn_recovery_verdict(&rec, ((uint64_t)(9 + 1) << 40) | 7, false), 0);
	assert_int_equal(dtxn_recovery_verdict(&rec, ((uint64_t)(10 + 1) << 40) | 7, true), 0);
}

/* dtxn_coord_recover() refuses what it cannot do, before the protocol runs. */
static void
test_recover_errors(void **state)
{
	struct fixture *fx = *state;
	struct dtxn_recovery rec;

	memset(&rec, 0, sizeof(rec));
	assert_int_equal(dtxn_coord_recover(NULL, &rec), -EINVAL);
	assert_int_equal(dtxn_coord_recover(&fx->tc[0].pub, NULL), -EINVAL);
	assert_false(dtxn_db_can_recover(NULL));
}

static void
test_items(void **state)
{
	struct fixture *fx = *state;
	struct dtxn_coord *c = &fx->tc[0].pub;
	struct dtxn_item *a, *b, *ins, *del;
	struct dtxn_txn *t;
	unsigned calls;

	g_nop_exec_rc = DTXN_OK;
	t = dtxn_txn_begin(c, DTXN_TXN_RW);
	a = dtxn_txn_add_ro(t, T_ACCT, 11);
	b = dtxn_txn_add_rw(t, T_ACCT, 22);
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(dtxn_item_key(a), 11);
	assert_int_equal(a->kind, DTXN_ITEM_RO);
	assert_int_equal(b->kind, DTXN_ITEM_RW);
	assert_false(dtxn_item_exists(a));
	/* value points into the slot copy, where the protocol says */
	assert_ptr_equal(dtxn_item_value(b), (char *)b->slot + 24);
	calls = g_nop_exec_calls;
	g_nop_exec_items = 0;
	assert_int_equal(dtxn_txn_execute(t), DTXN_OK);
	assert_int_equal(g_nop_exec_items, 2);
	assert_int_equal(t->n_fetched, 2);
	assert_true(a->flags & DTXN_ITEM_F_FETCHED);
	/* a second execute sees only the new items */
	ins = dtxn_txn_insert(t, T_ACCT, 33);
	del = dtxn_txn_delete(t, T_ACCT, 44);
	assert_non_null(ins);
	assert_non_null(del);
	assert_int_equal(dtxn_txn_execute(t), DTXN_OK);
	assert_int_equal(g_nop_exec_items, 4);
	/* nothing new: the protocol is not called */
	assert_int_equal(dtxn_txn_execute(t), DTXN_OK);
	assert_int_equal(g_nop_exec_calls, calls + 2);
	assert_int_equal(dtxn_txn_commit(t), DTXN_OK);
	/* a closed txn reports, never runs again */
	assert_int_not_equal(dtxn_txn_execute(t), DTXN_OK);

	/* read-only txns refuse writes */
	t = dtxn_txn_begin(c, DTXN_TXN_RO);
	assert_non_null(dtxn_txn_add_ro(t, T_ACCT, 1));
	assert_null(dtxn_txn_add_rw(t, T_ACCT, 1));
	assert_null(dtxn_txn_insert(t, T_ACCT, 2));
	assert_null(dtxn_txn_delete(t, T_ACCT, 3));
	assert_int_equal(t->n_items, 1);
	assert_int_equal(dtxn_txn_commit(t), DTXN_OK);
}

static void
test_bad_items_abort(void **state)
{
	struct fixture *fx = *state;
	struct dtxn_coord *c = &fx->tc[0].pub;
	struct dtxn_txn *t;
	unsigned aborts, i;

	g_nop_exec_rc = DTXN_OK;
	t = dtxn_txn_begin(c, DTXN_TXN_RW);
	assert_null(dtxn_txn_add_ro(t, T_MISSING, 1));
	assert_non_null(dtxn_txn_add_ro(t, T_ACCT, 1));
	aborts = g_nop_aborts;
	assert_int_equal(dtxn_txn_execute(t), DTXN_ABORT(DTXN_ABORT_NOT_FOUND));
	assert_int_equal(g_nop_aborts, aborts + 1);
	assert_int_equal(dtxn_txn_commit(t), DTXN_ABORT(DTXN_ABORT_NOT_FOUND));

	t = dtxn_txn_begin(c, DTXN_TXN_RW);
	for (i = 0; i < DTXN_TXN_MAX_ITEMS; i++)
		assert_non_null(dtxn_txn_add_ro(t, T_ACCT, i));
	assert_null(dtxn_txn_add_ro(t, T_ACCT, i));
	assert_int_equal(dtxn_txn_commit(t), DTXN_ABORT(DTXN_ABORT_TOO_LARGE));

	/* a protocol abort closes the txn without a second release */
	t = dtxn_txn_begin(c, DTXN_TXN_RW);
	assert_non_null(dtxn_txn_add_rw(t, T_ACCT, 5));
	g_nop_exec_rc = DTXN_ABORT(DTXN_ABORT_LOCK_CONFLICT);
	aborts = g_nop_aborts;
	assert_int_equal(dtxn_txn_execute(t), DTXN_ABORT(DTXN_ABORT_LOCK_CONFLICT));
	dtxn_txn_abort(t, DTXN_ABORT_APP);
	assert_int_equal(g_nop_aborts, aborts);
	g_nop_exec_rc = DTXN_OK;

	/* begin over an open txn releases it */
	t = dtxn_txn_begin(c, DTXN_TXN_RW);
	assert_non_null(dtxn_txn_add_rw(t, T_ACCT, 5));
	assert_int_equal(dtxn_txn_execute(t), DTXN_OK);
	aborts = g_nop_aborts;
	t = dtxn_txn_begin(c, DTXN_TXN_RW);
	assert_int_equal(g_nop_aborts, aborts + 1);
	assert_int_equal(t->n_items, 0);
	dtxn_txn_abort(t, DTXN_ABORT_APP);
}

static void
test_arena(void **state)
{
	struct fixture *fx = *state;
	struct txn_coord *tc = &fx->tc[1];
	struct dtxn_txn *t;
	uint64_t *p[64];
	unsigned i, j, chunks = 0;
	struct txn_arena_chunk *ch;

	t = dtxn_txn_begin(&tc->pub, DTXN_TXN_RW);
	/* grow well past the first chunk; earlier buffers keep their data */
	for (i = 0; i < 64; i++) {
		p[i] = dtxn_txn_alloc(t, 8 * 1024 + (i % 3));
		assert_non_null(p[i]);
		assert_int_equal((uintptr_t)p[i] % 8, 0);
		for (j = 0; j < 1024; j++)
			p[i][j] = ((uint64_t)i << 32) | j;
	}
	for (ch = tc->chunk; ch != NULL; ch = ch->next)
		chunks++;
	assert_true(chunks > 1);
	for (i = 0; i < 64; i++)
		for (j = 0; j < 1024; j++)
			assert_true(p[i][j] == (((uint64_t)i << 32) | j));
	assert_null(dtxn_txn_alloc(t, (size_t)TXN_ARENA_MAX + 1));
	assert_int_equal(tc->arena_grows, chunks - 1);
	/* the next begin rewinds to the first chunk and keeps the others: the
	 * same need again takes nothing more from the heap (a shared heap is
	 * not to be touched in the run: testing.md "Shared locks") */
	t = dtxn_txn_begin(&tc->pub, DTXN_TXN_RW);
	assert_ptr_equal(tc->cur, tc->chunk);
	assert_ptr_equal(tc->pub.arena, tc->chunk->data);
	assert_int_equal(tc->pub.arena_used, 0);
	for (i = 0; i < 64; i++)
		assert_non_null(dtxn_txn_alloc(t, 8 * 1024 + (i % 3)));
	assert_int_equal(tc->arena_grows, chunks - 1);
	assert_int_equal(dtxn_worker_arena_grows(&fx->tw.pub), 0); /* fixture: no coords listed */
	dtxn_txn_abort(t, DTXN_ABORT_APP);
}

static void
test_batch_build(void **state)
{
	struct fixture *fx = *state;
	struct dtxn_coord *c = &fx->tc[0].pub;
	struct txn_coord *tc = &fx->tc[0];
	uint64_t old, buf[64];
	struct dtxn_batch b, b2;
	struct dtxn_wr *wr;
	unsigned n;

	tc->wrs_used = 0;
	dtxn_batch_init(&b, c);
	dtxn_batch_read(&b, DTXN_RADDR(1, 64), buf, 32, true);
	dtxn_batch_cas(&b, DTXN_RADDR(0, 16), &old, 0, 7, true);
	dtxn_batch_write(&b, DTXN_RADDR(1, 128), buf, 8, false);
	dtxn_batch_write(&b, DTXN_RADDR(2, 0), buf, DTXN_WR_INLINE_MAX + 8, true);
	dtxn_batch_faa(&b, DTXN_RADDR(2, 8), &old, 3, false);
	assert_int_equal(b.error, 0);
	assert_int_equal(b.n_wr, 5);
	assert_int_equal(b.n_signaled, 3);
	assert_int_equal(b.mn_mask, 0x7);
	assert_int_equal(b.sig_mask, 0x7); /* a signaled WR on each chain */
	/* the verbs dtxn_coord_verbs() counts once the batch is posted */
	assert_int_equal(b.ops[DTXN_WR_READ], 1);
	assert_int_equal(b.ops[DTXN_WR_WRITE], 2);
	assert_int_equal(b.ops[DTXN_WR_CAS], 1);
	assert_int_equal(b.ops[DTXN_WR_FAA], 1);
	assert_int_equal(b.ops[DTXN_WR_MASKED_CAS], 0);
	assert_int_equal(b.bytes, 32 + 8 + 8 + DTXN_WR_INLINE_MAX + 8 + 8);
	/* per-MN chains keep the order WRs were added in */
	wr = b.head[1];
	assert_int_equal(wr->opcode, DTXN_WR_READ);
	assert_int_equal(wr->len, 32);
	assert_true(wr->flags & DTXN_WR_F_SIGNALED);
	assert_int_equal(wr->wr_id, (uintptr_t)fx->fake_co);
	wr = wr->next;
	assert_int_equal(wr->opcode, DTXN_WR_WRITE);
	assert_true(wr->flags & DTXN_WR_F_INLINE);
	assert_false(wr->flags & DTXN_WR_F_SIGNALED);
	assert_null(wr->next);
	assert_ptr_equal(b.tail[1], wr);
	wr = b.head[0];
	assert_int_equal(wr->opcode, DTXN_WR_CAS);
	assert_int_equal(wr->compare_add, 0);
	assert_int_equal(wr->swap, 7);
	assert_ptr_equal(wr->local, &old);
	wr = b.head[2];
	assert_false(wr->flags & DTXN_WR_F_INLINE); /* too long to inline */
	assert_int_equal(wr->next->opcode, DTXN_WR_FAA);
	assert_int_equal(wr->next->compare_add, 3);

	/* a second batch stacks on the pool; releasing the top one pops it */
	dtxn_batch_init(&b2, c);
	dtxn_batch_read(&b2, DTXN_RADDR(0, 0), buf, 8, true);
	assert_int_equal(tc->wrs_used, 6);
	dtxn_batch_done(&b2);
	assert_int_equal(tc->wrs_used, 5);
	dtxn_batch_done(&b);
	assert_int_equal(tc->wrs_used, 0);
	assert_int_equal(b.n_wr, 0);

	/* an MN without a QP is refused */
	dtxn_batch_init(&b, c);
	dtxn_batch_read(&b, DTXN_RADDR(5, 0), buf, 8, true);
	assert_int_equal(b.error, -EINVAL);
	assert_int_equal(dtxn_batch_post(&b), -EINVAL);
	dtxn_batch_done(&b);

	/* pool exhaustion marks the batch; nothing can be posted */
	dtxn_batch_init(&b, c);
	for (n = 0; n < c->n_wrs + 3; n++)
		dtxn_batch_read(&b, DTXN_RADDR(0, 0), buf, 8, true);
	assert_int_equal(b.n_wr, c->n_wrs);
	assert_int_equal(b.error, -ENOBUFS);
	assert_int_equal(dtxn_batch_post(&b), -ENOBUFS);
	dtxn_batch_done(&b);
	assert_int_equal(tc->wrs_used, 0);
}

/* Commit records (batch.c): on the chain to every MN of a decisive batch. */
static unsigned g_crec_fills;

static void
crec_fill(void *arg, const struct dtxn_txn *t, void *rec)
{
	uint64_t *w = rec;

	(void)arg;
	memset(rec, 0, DTXN_COMMIT_RECORD_BYTES);
	w[0] = dtxn_txn_id(t);
	g_crec_fills++;
}

static void
test_commit_record_chains(void **state)
{
	struct fixture *fx = *state;
	struct dtxn_coord *c = &fx->tc[1].pub;
	const struct dtxn_catalog *cat;
	uint64_t old, buf[4] = { 0 };
	struct dtxn_batch b;
	struct dtxn_txn *t;
	struct dtxn_wr *wr;

	/* the slots exist once the db is laid out */
	assert_int_equal(dtxn_coord_set_commit_record(c, 1, crec_fill, NULL), -EINVAL);
	assert_int_equal(dtxn_db_layout(fx->db, NULL), 0);
	cat = dtxn_db_catalog(fx->db);
	assert_int_equal(dtxn_coord_set_commit_record(c, cat->n_logs, crec_fill, NULL), -EINVAL);
	assert_int_equal(dtxn_coord_set_commit_record(c, 1, crec_fill, NULL), 0);
	g_crec_fills = 0;
	t = dtxn_txn_begin(c, DTXN_TXN_RW);
	assert_non_null(t);

	/* a decisive batch to MN 0 and MN 2 (not MN 1) */
	dtxn_batch_init(&b, c);
	dtxn_batch_write(&b, DTXN_RADDR(0, 128), buf, 16, false);
	dtxn_batch_cas(&b, DTXN_RADDR(2, 64), &old, 0, 1, true);
	dtxn_batch_write(&b, DTXN_RADDR(2, 256), buf, 8, false);
	txn_batch_commit_record(&b, t);
	assert_int_equal(b.error, 0);
	assert_int_equal(g_crec_fills, 1); /* one record per batch, on every chain */
	assert_int_equal(b.n_wr, 5);
	assert_int_equal(b.n_signaled, 1);  /* the records are unsignaled */
	assert_int_equal(b.mn_mask, 0x5);   /* no chain of its own anywhere */
	assert_int_equal(b.sig_mask, 0x4);  /* MN 0's chain: its tail is signaled at post */
	/* the records are not the protocol's verbs */
	assert_int_equal(b.ops[DTXN_WR_WRITE], 2);
	assert_int_equal(b.ops[DTXN_WR_CAS], 1);
	assert_int_equal(b.bytes, 16 + 8 + 8);
	for (uint16_t mn = 0; mn < 3; mn += 2) {
		wr = b.tail[mn];
		assert_int_equal(wr->opcode, DTXN_WR_WRITE);
		assert_int_equal(wr->raddr, dtxn_store_crec_raddr(cat, mn, 1));
		assert_int_equal(DTXN_RADDR_MN(wr->raddr), mn);
		assert_int_equal(wr->len, DTXN_COMMIT_RECORD_BYTES);
		assert_true(wr->flags & DTXN_WR_F_CONTROL); /* not the protocol's verb */
		assert_true(wr->flags & DTXN_WR_F_INLINE);
		assert_false(wr->flags & DTXN_WR_F_SIGNALED);
		assert_int_equal(((const uint64_t *)wr->local)[0], dtxn_txn_id(t));
		assert_null(wr->next);
	}
	/* at the end of each chain, after the data */
	assert_int_equal(b.head[0]->raddr, DTXN_RADDR(0, 128));
	assert_ptr_equal(b.head[0]->next, b.tail[0]);
	assert_int_equal(b.head[2]->opcode, DTXN_WR_CAS);
	assert_int_equal(b.head[2]->next->raddr, DTXN_RADDR(2, 256));
	assert_ptr_equal(b.head[2]->next->next, b.tail[2]);
	assert_false(b.head[2]->next->flags & DTXN_WR_F_CONTROL);
	dtxn_batch_done(&b);

	/* a batch that touches no MN carries none */
	dtxn_batch_init(&b, c);
	txn_batch_commit_record(&b, t);
	assert_int_equal(b.n_wr, 0);
	assert_int_equal(b.mn_mask, 0);
	assert_int_equal(g_crec_fills, 1);
	dtxn_batch_done(&b);

	/* turned off: none */
	assert_int_equal(dtxn_coord_set_commit_record(c, 1, NULL, NULL), 0);
	dtxn_batch_init(&b, c);
	dtxn_batch_write(&b, DTXN_RADDR(1, 128), buf, 8, false);
	txn_batch_commit_record(&b, t);
	assert_int_equal(b.n_wr, 1);
	assert_false(b.tail[1]->flags & DTXN_WR_F_CONTROL);
	dtxn_batch_done(&b);
	dtxn_txn_abort(t, DTXN_ABORT_APP);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_registry),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_weaken),
		cmocka_unit_test(test_db_create_errors),
		cmocka_unit_test_setup_teardown(test_db_table_slot_size, setup, teardown),
		cmocka_unit_test_setup_teardown(test_txn_ids, setup, teardown),
		cmocka_unit_test(test_lease_view),
		cmocka_unit_test_setup_teardown(test_recover_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_items, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_items_abort, setup, teardown),
		cmocka_unit_test_setup_teardown(test_arena, setup, teardown),
		cmocka_unit_test_setup_teardown(test_batch_build, setup, teardown),
		cmocka_unit_test_setup_teardown(test_commit_record_chains, setup, teardown),
	};
	int rc;

	if (dtxn_unit_eal_init("ut_txn") != 0)
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	dtxn_unit_eal_fini();
	return rc;
}
