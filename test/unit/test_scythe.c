/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The Scythe protocol (drivers/cc/scythe; doc/guides/scythe.md): the
 * Takeout Lock's grant rule at each boundary of Fig. 14 (timestamp order,
 * ColdWatermark for COLD, HotWatermark) and the band wait of §3.2; the
 * u16 ticket counters across their wrap; the MN's batch order (Fig. 16);
 * the options; then a whole cluster on shm (one CN, two MNs whose lock
 * services this test polls as the MN CPUs would): SmallBank's invariants
 * hold in the default, OCC-only and TOCC-only modes, and with the Lock
 * RPC over RRPC (rpc=rrpc: WRITEs into the MNs' rings, no SEND), every
 * lock went through the MN service, and no lock is taken with CAS.
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

#include <rte_malloc.h>

#include "dtxn_bench.h"
#include "dtxn_sched.h"
#include "dtxn_stats.h"
#include "scythe_private.h"
#include "tpcc.h"
#include "unit_eal.h"
#include "ut_txn.h"

static struct scythe_opts g_o;

static void
defaults(void)
{
	scythe_opts_default(&g_o);
}

/* The rule for a lock whose queue is @p q (lower = q + base, upper = base). */
static uint8_t
decide_q(uint16_t q, uint64_t qts, uint64_t ts, uint8_t mode, bool deferred)
{
	return scythe_takeout_decide((uint16_t)(100 + q), 100, qts, ts, mode, deferred, &g_o);
}

static void
test_reject_rules(void **state)
{
	(void)state;
	defaults();
	/* free lock: granted at once, either mode */
	assert_int_equal(decide_q(0, 0, 1, SCYTHE_COLD, false), SCYTHE_LK_GRANTED);
	assert_int_equal(decide_q(0, 0, 1, SCYTHE_HOT, false), SCYTHE_LK_GRANTED);
	/* ts < queued_ts refuses; ts == queued_ts does not */
	assert_int_equal(decide_q(0, 50, 49, SCYTHE_HOT, false), SCYTHE_LK_REJ_TS);
	assert_int_equal(decide_q(0, 50, 49, SCYTHE_COLD, false), SCYTHE_LK_REJ_TS);
	assert_int_equal(decide_q(0, 50, 50, SCYTHE_HOT, false), SCYTHE_LK_GRANTED);
	/* COLD: queue 3 (= ColdWatermark) queues, 4 is refused */
	assert_int_equal(decide_q(3, 0, 9, SCYTHE_COLD, false), SCYTHE_LK_QUEUED);
	assert_int_equal(decide_q(4, 0, 9, SCYTHE_COLD, false), SCYTHE_LK_REJ_COLD);
	/* HOT: up to ColdWatermark queues at once */
	assert_int_equal(decide_q(1, 0, 9, SCYTHE_HOT, false), SCYTHE_LK_QUEUED);
	assert_int_equal(decide_q(3, 0, 9, SCYTHE_HOT, false), SCYTHE_LK_QUEUED);
	/* HOT, ColdWatermark < queue < HotWatermark: the band wait, once */
	assert_int_equal(decide_q(4, 0, 9, SCYTHE_HOT, false), SCYTHE_LK_DEFER);
	assert_int_equal(decide_q(9, 0, 9, SCYTHE_HOT, false), SCYTHE_LK_DEFER);
	assert_int_equal(decide_q(4, 0, 9, SCYTHE_HOT, true), SCYTHE_LK_QUEUED);
	assert_int_equal(decide_q(9, 0, 9, SCYTHE_HOT, true), SCYTHE_LK_QUEUED);
	/* HOT: queue 10 (= HotWatermark) queues, 11 is refused */
	assert_int_equal(decide_q(10, 0, 9, SCYTHE_HOT, false), SCYTHE_LK_QUEUED);
	assert_int_equal(decide_q(11, 0, 9, SCYTHE_HOT, false), SCYTHE_LK_REJ_HOT);
	assert_int_equal(decide_q(11, 0, 9, SCYTHE_HOT, true), SCYTHE_LK_REJ_HOT);
	/* the timestamp rule comes first */
	assert_int_equal(decide_q(11, 50, 10, SCYTHE_HOT, false), SCYTHE_LK_REJ_TS);
	/* band_us=0: no deferral; other watermarks move the boundaries */
	g_o.band_us = 0;
	assert_int_equal(decide_q(5, 0, 9, SCYTHE_HOT, false), SCYTHE_LK_QUEUED);
	g_o.cold_wm = 0;
	g_o.hot_wm = 1;
	assert_int_equal(decide_q(1, 0, 9, SCYTHE_COLD, false), SCYTHE_LK_REJ_COLD);
	assert_int_equal(decide_q(1, 0, 9, SCYTHE_HOT, false), SCYTHE_LK_QUEUED);
	assert_int_equal(decide_q(2, 0, 9, SCYTHE_HOT, false), SCYTHE_LK_REJ_HOT);
}

static void
test_ticket_wrap(void **state)
{
	(void)state;
	defaults();
	/* lower wrapped past 65535, upper not yet: the queue is still lower - upper */
	assert_int_equal(scythe_queue(2, 65534), 4);
	assert_int_equal(scythe_takeout_decide(2, 65534, 0, 1, SCYTHE_COLD, false, &g_o),
			 SCYTHE_LK_REJ_COLD);
	assert_int_equal(scythe_takeout_decide(0, 65535, 0, 1, SCYTHE_COLD, false, &g_o),
			 SCYTHE_LK_QUEUED);
	assert_int_equal(scythe_takeout_decide(0, 0, 0, 1, SCYTHE_COLD, false, &g_o),
			 SCYTHE_LK_GRANTED);
	/* upper is FAAed as a 64-bit word: bits above 16 do not count */
	assert_int_equal(scythe_queue(3, UINT64_C(0x10000) + 3), 0);
	assert_int_equal(scythe_queue(5, UINT64_C(0x7fff0000) + 3), 2);
	/* lower is kept to 16 bits by the MN; any high bits are ignored too */
	assert_int_equal(scythe_queue(UINT64_C(0x50000) + 1, 65535), 2);
}

/* --- cancelled tickets (cancel.c), on a region of two records --- */

#define CX_A 64u   /* slot offsets in g_cx */
#define CX_B 256u

static uint64_t g_cx[64];

static struct scythe_slot *
cx_slot(uint64_t off)
{
	return (struct scythe_slot *)((uint8_t *)g_cx + off);
}

/* Record @p off's lock with tickets [upper, lower) taken. */
static void
cx_lock(uint64_t off, uint64_t lower, uint64_t upper)
{
	cx_slot(off)->lower = lower;
	cx_slot(off)->upper = upper;
}

/* The holder of record @p off's lock gives it back, as its FAA would. */
static void
cx_unlock(uint64_t off)
{
	__atomic_fetch_add(&cx_slot(off)->upper, 1, __ATOMIC_ACQ_REL);
}

/* The grant rule as the MN applies it: cancelled tickets at the head go back, the rest do not count. */
static uint8_t
cx_decide(struct scythe_cancels *c, uint64_t off, uint8_t mode)
{
	uint16_t upper = scythe_cancel_head(c, (uint8_t *)g_cx, off);

	return scythe_takeout_decide((uint16_t)cx_slot(off)->lower,
				     (uint16_t)(upper + scythe_cancel_queued(c, off)), 0, 1, mode,
				     true, &g_o);
}

static void
test_cancel(void **state)
{
	static struct scythe_cancels c;
	uint8_t *base = (uint8_t *)g_cx;

	(void)state;
	defaults();
	memset(&c, 0, sizeof(c));
	memset(g_cx, 0, sizeof(g_cx));
	/* the head ticket, served already (the cancel raced the grant): given back at once */
	cx_lock(CX_A, 3, 2);
	assert_int_equal(scythe_cancel_add(&c, base, CX_A, 2), 0);
	assert_int_equal(c.n, 0);
	assert_int_equal(cx_slot(CX_A)->upper, 3);
	assert_int_equal(c.served, 1);
	/* nothing to give back: a ticket given back already, or never taken */
	assert_int_equal(scythe_cancel_add(&c, base, CX_A, 2), -ENOENT);
	assert_int_equal(scythe_cancel_add(&c, base, CX_A, 3), -ENOENT);
	assert_int_equal(cx_slot(CX_A)->upper, 3);

	/* a middle ticket: 10 held, 11 cancelled, 12 and 13 wait */
	cx_lock(CX_A, 14, 10);
	assert_int_equal(scythe_cancel_add(&c, base, CX_A, 11), 0);
	assert_int_equal(c.n, 1);
	assert_int_equal(scythe_cancel_queued(&c, CX_A), 1);
	assert_int_equal(scythe_cancel_queued(&c, CX_B), 0);
	assert_int_equal(scythe_cancel_serve(&c, base), 0); /* not its turn */
	assert_int_equal(cx_slot(CX_A)->upper, 10);
	/* the rules count 3 live tickets, not 4: COLD queues at ColdWatermark */
	assert_int_equal(cx_decide(&c, CX_A, SCYTHE_COLD), SCYTHE_LK_QUEUED);
	cx_slot(CX_A)->lower = 15;
	assert_int_equal(cx_decide(&c, CX_A, SCYTHE_COLD), SCYTHE_LK_REJ_COLD);
	cx_slot(CX_A)->lower = 14;
	/* 10 goes back: 11 is served and given back by the MN; 12 holds */
	cx_unlock(CX_A);
	assert_int_equal(scythe_cancel_serve(&c, base), 1);
	assert_int_equal(cx_slot(CX_A)->upper, 12);
	assert_int_equal(c.n, 0);

	/* consecutive cancels, and the last ones of the queue: one unlock empties it */
	cx_lock(CX_A, 14, 12);
	assert_int_equal(scythe_cancel_add(&c, base, CX_A, 13), 0);
	assert_int_equal(cx_decide(&c, CX_A, SCYTHE_HOT), SCYTHE_LK_QUEUED); /* 12 holds */
	cx_unlock(CX_A);
	/* a Lock request finds 13 cancelled at the head: back first, then granted */
	assert_int_equal(cx_decide(&c, CX_A, SCYTHE_HOT), SCYTHE_LK_GRANTED);
	assert_int_equal(cx_slot(CX_A)->upper, 14);
	assert_int_equal(c.n, 0);

	/* after the wrap: lower wrapped to 2, upper (a 64-bit word) at 65534 + 3 x 2^16 */
	cx_lock(CX_B, 2, UINT64_C(0x3fffe));
	assert_int_equal(scythe_cancel_add(&c, base, CX_B, 65535), 0);
	assert_int_equal(scythe_cancel_add(&c, base, CX_B, 0), 0);
	assert_int_equal(scythe_cancel_add(&c, base, CX_B, 2), -ENOENT);  /* not taken */
	assert_int_equal(scythe_cancel_add(&c, base, CX_B, 65533), -ENOENT); /* given back */
	assert_int_equal(scythe_cancel_queued(&c, CX_B), 2);
	assert_int_equal(scythe_cancel_serve(&c, base), 0);
	cx_unlock(CX_B); /* 65534 goes back: 65535 and 0 follow, 1 holds */
	assert_int_equal(scythe_cancel_serve(&c, base), 2);
	assert_int_equal(cx_slot(CX_B)->upper, UINT64_C(0x40001));
	assert_int_equal(scythe_queue(cx_slot(CX_B)->lower, cx_slot(CX_B)->upper), 1);
	assert_int_equal(c.n, 0);

	/* two records at once, each served in its turn only */
	cx_lock(CX_A, 20, 14);
	cx_lock(CX_B, 5, 1);
	assert_int_equal(scythe_cancel_add(&c, base, CX_A, 16), 0);
	assert_int_equal(scythe_cancel_add(&c, base, CX_B, 2), 0);
	cx_unlock(CX_B);
	assert_int_equal(scythe_cancel_serve(&c, base), 1);
	assert_int_equal(cx_slot(CX_B)->upper, 3);
	assert_int_equal(cx_slot(CX_A)->upper, 14);
	assert_int_equal(c.n, 1);
	cx_unlock(CX_A);
	cx_unlock(CX_A);
	assert_int_equal(scythe_cancel_serve(&c, base), 1);
	assert_int_equal(cx_slot(CX_A)->upper, 17);
	assert_int_equal(c.n, 0);

	/* a full table refuses; the holder keeps its ticket */
	cx_lock(CX_A, 17 + SCYTHE_CANCEL_MAX + 2, 17);
	for (unsigned k = 0; k < SCYTHE_CANCEL_MAX; k++)
		assert_int_equal(scythe_cancel_add(&c, base, CX_A, (uint16_t)(18 + k)), 0);
	assert_int_equal(scythe_cancel_add(&c, base, CX_A, (uint16_t)(18 + SCYTHE_CANCEL_MAX)),
			 -ENOSPC);
	cx_unlock(CX_A); /* 17 goes back: every cancelled one follows */
	assert_int_equal(scythe_cancel_serve(&c, base), SCYTHE_CANCEL_MAX);
	assert_int_equal(cx_slot(CX_A)->upper, 18 + SCYTHE_CANCEL_MAX);
	assert_int_equal(c.stale, 0);
}

static void
test_batch_sort(void **state)
{
	struct scythe_batch_ent e[] = {
		{ .off = 300, .ts = 7, .msg = 0, .idx = 0 },
		{ .off = 100, .ts = 9, .msg = 0, .idx = 1 },
		{ .off = 100, .ts = 3, .msg = 1, .idx = 0 },
		{ .off = 300, .ts = 7, .msg = 1, .idx = 1 },
		{ .off = 200, .ts = 1, .msg = 2, .idx = 0 },
		{ .off = 100, .ts = 3, .msg = 0, .idx = 2 },
	};
	const uint64_t want_off[] = { 100, 100, 100, 200, 300, 300 };
	const uint64_t want_ts[] = { 3, 3, 9, 1, 7, 7 };
	const uint16_t want_msg[] = { 0, 1, 0, 2, 0, 1 };

	(void)state;
	scythe_batch_sort(e, RTE_DIM(e));
	for (unsigned i = 0; i < RTE_DIM(e); i++) {
		assert_int_equal(e[i].off, want_off[i]);
		assert_int_equal(e[i].ts, want_ts[i]);
		assert_int_equal(e[i].msg, want_msg[i]);
	}
	scythe_batch_sort(e, 0); /* no-op */
}

static void
test_options(void **state)
{
	struct scythe_opts o;
	char err[160];

	(void)state;
	scythe_opts_default(&o);
	assert_int_equal(o.cold_wm, 3);
	assert_int_equal(o.hot_wm, 10);
	assert_int_equal(o.band_us, 20);
	assert_int_equal(o.alpha_pct, 90);
	assert_int_equal(scythe_opts_parse("cold_wm=2,hot_wm=6,band_us=0,alpha=50", &o, err,
					   sizeof(err)), 0);
	assert_int_equal(o.cold_wm, 2);
	assert_int_equal(o.hot_wm, 6);
	assert_int_equal(o.band_us, 0);
	assert_int_equal(o.alpha_pct, 50);
	assert_int_equal(scythe_check_options("occ_only=1,tocc_only=1", err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "exclude"));
	assert_int_equal(scythe_check_options("cold_wm=5,hot_wm=4", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "below"));
	assert_int_equal(scythe_check_options("alpha=101", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "alpha=101"));
	assert_int_equal(o.cas_lock, 0);
	assert_int_equal(scythe_opts_parse("cas_lock=1", &o, err, sizeof(err)), 0);
	assert_int_equal(o.cas_lock, 1);
	assert_int_equal(scythe_check_options("cas_lock=2", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "cas_lock=2"));
	assert_int_equal(o.rpc, SCYTHE_TP_MSG);
	assert_int_equal(scythe_opts_parse("rpc=rrpc", &o, err, sizeof(err)), 0);
	assert_int_equal(o.rpc, SCYTHE_TP_RRPC);
	assert_int_equal(scythe_opts_parse("rpc=msg", &o, err, sizeof(err)), 0);
	assert_int_equal(o.rpc, SCYTHE_TP_MSG);
	assert_int_equal(scythe_check_options("rpc=udp", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "rpc=udp: expected msg, rrpc"));
	assert_int_equal(o.cancel, 0);
	assert_int_equal(scythe_opts_parse("cancel=1", &o, err, sizeof(err)), 0);
	assert_int_equal(o.cancel, 1);
	assert_int_equal(scythe_check_options("cancel=2", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "cancel=2"));
	assert_int_equal(scythe_check_options("bogus=1", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "unknown option 'bogus'"));
}

/* ------------------------------------------------------------------ */
/* A cluster: one CN, two MNs with their lock services                */
/* ------------------------------------------------------------------ */

#define SC_COORDS 4
#define SC_CN 2      /* CNs of the fabric: the workers' and a dead one's (recovery tests) */
#define SC_MN 2

struct sc_run {
	struct dtxn_bench *b;
	struct dtxn_db *db;
	struct dtxn_fabric *f;
	struct dtxn_worker *w;
	struct dtxn_mn_svc *svc[SC_MN];
	struct dtxn_run_stats *stats;
	struct dtxn_report *rep;
	struct dtxn_bench_ctx ctx[SC_COORDS];
	struct dtxn_bench_ctx *ctxp[SC_COORDS];
	/* heap in use (bytes): before the worker, after it, after the MN
	 * services, before and after sc_go() made the coordinators */
	uint64_t heap[5];
};

/* A bench option of @p b by name. */
static void
sc_bench_opt(struct dtxn_bench *b, const char *name, const char *val)
{
	char err[160];

	for (unsigned k = 0; k < b->ops->n_opts; k++)
		if (strcmp(b->ops->opts[k].name, name) == 0) {
			assert_int_equal(dtxn_opt_set(&b->ops->opts[k], b->conf, val, err,
						      sizeof(err)), 0);
			return;
		}
	fail_msg("no option %s", name);
}

/* @p bench with @p bopts (name, value pairs, NULL-terminated), Scythe with @p opts. */
static void
sc_up_bench(struct sc_run *r, const char *bench, const char *const *bopts, const char *opts)
{
	static unsigned seq;
	struct dtxn_db_conf dc = {
		.size = sizeof(dc), .protocol = "scythe", .isolation = DTXN_ISO_SR,
		.n_mn = SC_MN, .n_replicas = 2, .n_coords = SC_COORDS, .log_bytes = 16384,
		.addr_cache_entries = 4096, .cc_options = opts, .n_cn = SC_CN, .cn_workers = 1,
	};
	struct dtxn_fabric_conf fc = { .size = sizeof(fc), .driver = "shm", .n_mn = SC_MN,
				       .n_cn = SC_CN, .socket_id = SOCKET_ID_ANY };
	const struct dtxn_bench_ops *bops = dtxn_bench_find(bench);
	char name[32];

	memset(r, 0, sizeof(*r));
	snprintf(name, sizeof(name), "utsc%u", seq++);
	fc.name = name;
	assert_non_null(bops);
	r->b = dtxn_bench_alloc(bops, 7);
	assert_non_null(r->b);
	for (unsigned k = 0; bopts != NULL && bopts[k] != NULL; k += 2)
		sc_bench_opt(r->b, bopts[k], bopts[k + 1]);
	assert_int_equal(bops->create(r->b), 0);
	r->db = dtxn_db_create(&dc);
	assert_non_null(r->db);
	assert_true(dtxn_db_has_mn_svc(r->db));
	assert_int_equal(bops->define(r->b, r->db), 0);
	assert_int_equal(ut_db_fabric(r->db, &fc, &r->f), 0);
	assert_int_equal(bops->load(r->b, r->db), 0);
	r->heap[0] = dtxn_unit_heap_in_use();
	r->w = dtxn_worker_create(r->db, SC_MN, 0, SC_COORDS, SOCKET_ID_ANY);
	assert_non_null(r->w);
	r->heap[1] = dtxn_unit_heap_in_use();
	for (uint16_t m = 0; m < SC_MN; m++) {
		r->svc[m] = dtxn_mn_svc_create(r->db, m, 1, SC_COORDS, NULL);
		assert_non_null(r->svc[m]);
	}
	r->heap[2] = dtxn_unit_heap_in_use();
	r->stats = rte_zmalloc("ut_stats", sizeof(*r->stats), 64);
	r->rep = rte_zmalloc("ut_rep", sizeof(*r->rep), 64);
	assert_non_null(r->stats);
	assert_non_null(r->rep);
	dtxn_run_stats_reset(r->stats, bops->n_types);
}

static void
sc_up(struct sc_run *r, const char *opts)
{
	static const char *const small[] = { "accounts", "50", NULL }; /* small: contention */

	sc_up_bench(r, "smallbank", small, opts);
}

/* Every coordinator to @p quota txns, the MNs served between steps; then the checks. */
static void
sc_go(struct sc_run *r, uint64_t quota)
{
	unsigned alive, extra = 0;

	r->heap[3] = dtxn_unit_heap_in_use();
	for (unsigned i = 0; i < SC_COORDS; i++) {
		struct dtxn_bench_ctx *ctx = &r->ctx[i];

		ctx->bench = r->b;
		ctx->stats = r->stats;
		ctx->quota = quota;
		dtxn_rng_seed(&ctx->rng, 500 + i);
		r->ctxp[i] = ctx;
		assert_non_null(dtxn_coord_create(r->w, i, dtxn_bench_coord_main, ctx));
	}
	r->heap[4] = dtxn_unit_heap_in_use();
	do {
		alive = dtxn_sched_step_lc(dtxn_worker_sched(r->w));
		for (unsigned m = 0; m < SC_MN; m++)
			(void)dtxn_mn_svc_poll(r->svc[m]);
		extra += alive == 0;
	} while (alive != 0 || extra < 2000); /* and the last unlocks */
	for (unsigned i = 0; i < SC_COORDS; i++)
		assert_true(r->ctx[i].finished);
	assert_int_equal(r->b->ops->check(r->b, r->db, r->ctxp, SC_COORDS, r->rep), 0);
	for (unsigned i = 0; i < r->rep->n_checks; i++)
		if (!r->rep->checks[i].ok)
			fail_msg("check %s: %s", r->rep->checks[i].name, r->rep->checks[i].detail);
}

/* Verbs the worker posted to the MNs, by opcode. */
static uint64_t
sc_ops(const struct sc_run *r, unsigned op)
{
	struct dtxn_fabric_counters per_mn[DTXN_MAX_NODES];
	uint64_t n = 0;

	dtxn_worker_counters(r->w, per_mn);
	for (unsigned m = 0; m < SC_MN; m++)
		n += per_mn[m].ops[op];
	return n;
}

static void
sc_down(struct sc_run *r)
{
	for (unsigned m = 0; m < SC_MN; m++)
		dtxn_mn_svc_destroy(r->svc[m]);
	dtxn_worker_destroy(r->w);
	dtxn_db_destroy(r->db);
	dtxn_fabric_close(r->f);
	dtxn_bench_free(r->b);
	rte_free(r->stats);
	rte_free(r->rep);
}

static void
run_mode(const char *opts, uint64_t *hot, uint64_t *cold)
{
	const struct scythe_worker *sw;
	struct dtxn_rpc_stats st;
	struct sc_run r;
	uint64_t c, a, ab;

	sc_up(&r, opts);
	sc_go(&r, 200);
	dtxn_run_stats_totals(r.stats, &c, &a, &ab);
	assert_true(c >= 150 * SC_COORDS); /* the rest: SmallBank's rollbacks */
	sw = r.w->cc_priv;
	dtxn_rpc_stats_get(sw->rpc, &st);
	/* every write locked through an MN's service, released with FAA, no CAS */
	if (sw->rr != NULL) {
		struct dtxn_rrpc_stats rs;

		/* rpc=rrpc: every Lock call WRITten into the MNs' rings, none sent */
		dtxn_rrpc_stats_get(sw->rr, &rs);
		assert_true(rs.resp_recv > 0);
		assert_int_equal(rs.resp_recv, rs.req_sent);
		assert_true(rs.buckets <= rs.req_sent);
		assert_int_equal(rs.bad, 0);
		assert_int_equal(st.req_sent, 0);
	} else {
		assert_true(st.resp_recv > 0);
	}
	assert_int_equal(st.failed, 0);
	assert_true(sw->st.lock_reqs >= c / 2);
	assert_int_equal(sc_ops(&r, DTXN_WR_CAS), 0);
	assert_true(sc_ops(&r, DTXN_WR_FAA) >= sw->st.lock_reqs - sw->st.rejected -
							sw->st.deferred);
	assert_int_equal(sc_ops(&r, DTXN_WR_SEND), st.req_sent);
	*hot = sw->st.hot_attempts;
	*cold = sw->st.cold_attempts;
	sc_down(&r);
}

static void
test_cluster_default(void **state)
{
	uint64_t hot, cold;

	(void)state;
	run_mode(NULL, &hot, &cold);
	assert_true(cold > 0);
}

static void
test_cluster_occ_only(void **state)
{
	uint64_t hot, cold;

	(void)state;
	run_mode("occ_only=1", &hot, &cold);
	assert_int_equal(hot, 0);
	assert_true(cold > 0);
}

static void
test_cluster_rrpc(void **state)
{
	uint64_t hot, cold;

	(void)state;
	run_mode("rpc=rrpc", &hot, &cold);
	assert_true(cold > 0);
	run_mode("rpc=rrpc,tocc_only=1", &hot, &cold);
	assert_int_equal(cold, 0);
	assert_true(hot > 0);
}

static void
test_cluster_tocc_only(void **state)
{
	uint64_t hot, cold;

	(void)state;
	run_mode("tocc_only=1", &hot, &cold);
	assert_int_equal(cold, 0);
	assert_true(hot > 0);
}

/* Every record of table @p tid among @p keys has no ticket out: nothing leaked, nothing cancelled is left. */
static void
sc_queues_empty(const struct sc_run *r, uint32_t tid, const uint64_t *keys, unsigned n)
{
	const struct dtxn_catalog *cat = dtxn_db_catalog(r->db);

	for (unsigned k = 0; k < n; k++) {
		const struct scythe_slot *s = ut_mn_slot(r->f, cat, tid, keys[k], 0);

		assert_non_null(s);
		if (scythe_queue(s->lower, s->upper) != 0)
			fail_msg("table %u key %" PRIx64 ": %u tickets out after the run", tid, keys[k],
				 scythe_queue(s->lower, s->upper));
	}
}

/*
 * cancel=1: aborting txns hand their queued tickets to the MN services,
 * which give them back in their turn (cancel.c); SmallBank's invariants
 * hold, TOCC only and in the default mode, and once every coordinator is
 * done no account's lock has a ticket out.
 */
static void
test_cluster_cancel(void **state)
{
	static const char *const opts[] = { "cancel=1,tocc_only=1", "cancel=1" };
	uint64_t keys[50], hot, cold;

	(void)state;
	for (unsigned k = 0; k < RTE_DIM(keys); k++)
		keys[k] = dtxn_key_make(k, k & DTXN_KEY_SHARD_MASK); /* SmallBank's account k */
	for (unsigned k = 0; k < RTE_DIM(opts); k++) {
		struct sc_run r;
		uint64_t c, a, ab;

		sc_up(&r, opts[k]);
		sc_go(&r, 200);
		dtxn_run_stats_totals(r.stats, &c, &a, &ab);
		assert_true(c >= 150 * SC_COORDS);
		for (uint32_t tid = 0; tid < 2; tid++) /* savings, checking */
			sc_queues_empty(&r, tid, keys, RTE_DIM(keys));
		sc_down(&r);
	}
	run_mode("cancel=1,tocc_only=1", &hot, &cold);
	assert_true(hot > 0);
}

/* --- CN crash recovery (recover.c) from hand-built ticket tables --- */

#define SC_DEAD_GID0 2 /* CN SC_MN + 1's coordinators: gids 2, 3 */

/* The live holder of record B's ticket 4: it gives it back after 50 us. */
static void
co_sc_live_release(struct dtxn_coord *c, void *arg)
{
	uint64_t *upper = arg;

	dtxn_co_sleep_until_lc(dtxn_coord_co(c), dtxn_now_ns() + 50000);
	__atomic_fetch_add(upper, 1, __ATOMIC_ACQ_REL); /* as its FAA would */
}

static void
test_recover_tickets(void **state)
{
	struct sc_run r;
	const struct dtxn_catalog *cat;
	const struct dtxn_table *t;
	struct scythe_slot *s[3];
	struct scythe_ticket_tab *tab;
	struct dtxn_bucket_hdr *bh;
	const uint64_t dead_id = ((uint64_t)(SC_DEAD_GID0 + 1) << 40) | 9;
	struct ut_recover x;
	unsigned n = 0;

	(void)state;
	sc_up(&r, NULL);
	cat = dtxn_db_catalog(r.db);
	t = dtxn_catalog_table(cat, 0);
	for (uint64_t k = 0; k < 64 && n < 3; k++) {
		/* SmallBank's key of account k */
		s[n] = ut_mn_slot(r.f, cat, 0, dtxn_key_make(k, k & DTXN_KEY_SHARD_MASK), 0);
		n += s[n] != NULL;
	}
	assert_int_equal(n, 3);
	/* A: the dead txn holds ticket 2; B: its ticket 5 waits behind a live
	 * holder of 4; C: its ticket 7 was given back long ago */
	s[0]->lower = 3, s[0]->upper = 2;
	s[1]->lower = 7, s[1]->upper = 4; /* and its ticket 6, cancelled: the MN's to give back */
	s[2]->lower = 9, s[2]->upper = 9;
	tab = (void *)((char *)dtxn_fabric_mn_base(r.f, t->mn[0]) +
		       DTXN_RADDR_OFF(dtxn_store_log_raddr(cat, SC_DEAD_GID0, t->mn[0])));
	tab->ts = 77;
	tab->gid = SC_DEAD_GID0 + 1;
	tab->n = 4;
	for (unsigned i = 0; i < 4; i++) {
		tab->ent[i].off = (uint64_t)((char *)s[i % 3] - (char *)dtxn_fabric_mn_base(r.f, t->mn[0]));
		tab->ent[i].ticket = (uint32_t[]){ 2, 5, 7, 6 }[i];
	}
	tab->ent[3].off = tab->ent[1].off;
	tab->ent[3].flags = SCYTHE_TICKET_F_CANCELLED;
	/* and a bucket lock of the dead txn (an insert's) */
	bh = (void *)((char *)dtxn_fabric_mn_base(r.f, t->mn[0]) +
		      DTXN_RADDR_OFF(dtxn_store_bucket_raddr(t, 0, 3)));
	bh->lock = dead_id;

	ut_recover_of(&x, SC_MN + 1, SC_DEAD_GID0, 2);
	assert_non_null(dtxn_coord_create(r.w, 0, ut_recover_main, &x));
	assert_non_null(dtxn_coord_create(r.w, 1, co_sc_live_release, &s[1]->upper));
	while (dtxn_sched_step_lc(dtxn_worker_sched(r.w)) != 0)
		;
	assert_int_equal(x.rc, 0);
	assert_string_equal(x.rec.step[0].name, "tickets");
	assert_int_equal(x.rec.step[0].work, 2);      /* A's and B's, not C's nor the cancelled one */
	assert_true(x.rec.step[0].ns >= 50000);       /* B waited for its turn */
	assert_int_equal(s[0]->upper, 3);
	assert_int_equal(s[1]->upper, 6);             /* 6, cancelled, is left to the MN */
	assert_int_equal(s[2]->upper, 9);
	assert_int_equal(bh->lock, 0);
	assert_int_equal(x.rec.locks_released, 3);
	sc_down(&r);
}

/*
 * cas_lock=1 (Fig. 27's baseline): every lock a CAS on the record, given
 * back with FAA; no Lock RPC reaches an MN; SmallBank's invariants hold,
 * under OCC and under TOCC (which locks what it reads).
 */
static void
test_cluster_cas_lock(void **state)
{
	static const char *const opts[] = { "cas_lock=1", "cas_lock=1,tocc_only=1" };
	const struct scythe_worker *sw;
	struct sc_run r;
	uint64_t c, a, ab;

	(void)state;
	for (unsigned k = 0; k < RTE_DIM(opts); k++) {
		sc_up(&r, opts[k]);
		sc_go(&r, 100);
		dtxn_run_stats_totals(r.stats, &c, &a, &ab);
		assert_true(c >= 50 * SC_COORDS);
		sw = r.w->cc_priv;
		assert_true(sw->st.lock_reqs >= c / 2);
		assert_true(sc_ops(&r, DTXN_WR_CAS) >= sw->st.lock_reqs);
		assert_true(sc_ops(&r, DTXN_WR_FAA) > 0);
		assert_int_equal(sc_ops(&r, DTXN_WR_SEND), 0);
		assert_int_equal(sw->st.queued + sw->st.polls, 0);
		sc_down(&r);
	}
}

/*
 * dtxn_cc_footprint() (the memory check of dtxn-app): bounds what the MN
 * services take from the heap (their share per MN), more than the fixed
 * share per coordinator would cover; grows with the CNs and the MNs;
 * refuses what scythe_db_init() refuses.
 */
static void
test_footprint(void **state)
{
	struct dtxn_footprint cn = { 0 }, w = { 0 }, wk = { 0 }, w1 = { 0 }, w3 = { 0 };
	struct sc_run r;
	uint64_t svc, per_mn, used;

	(void)state;
	sc_up(&r, NULL);
	assert_int_equal(dtxn_cc_footprint(r.db, SC_CN, SC_COORDS, &cn, &w), 0);
	assert_int_equal(dtxn_worker_footprint(r.db, SC_COORDS, &wk), 0);
	sc_go(&r, 20);
	/* one MN less: what the estimate counts per MN (its service, the RECVs for its replies) */
	r.db->cat.n_mn = SC_MN - 1;
	assert_int_equal(dtxn_cc_footprint(r.db, SC_CN, SC_COORDS, &cn, &w1), 0);
	r.db->cat.n_mn = SC_MN;
	per_mn = w.bytes - w1.bytes;
	svc = r.heap[2] - r.heap[1];
	used = (r.heap[2] - r.heap[0]) + (r.heap[4] - r.heap[3]);
	print_message("scythe footprint: MN services %" PRIu64 " B used, %" PRIu64
		      " B estimated; worker, services, coordinators %" PRIu64 " B used, %" PRIu64
		      " B estimated (%" PRIu64 " B of them Scythe's)\n",
		      svc, SC_CN * SC_MN * per_mn, used, w.bytes + wk.bytes, w.bytes);
	/* the services serve every CN of the fabric, each CN's worker counts its share */
	assert_true(svc <= SC_CN * SC_MN * per_mn);
	/* without the protocol's share the estimate would be short */
	assert_true(wk.bytes + svc < used);
	assert_true(w.bytes > svc);
	/* more CNs: QPs to the peers */
	assert_int_equal(dtxn_cc_footprint(r.db, SC_CN + 1, SC_COORDS, &cn, &w3), 0);
	assert_true(w3.bytes > w.bytes);
	/* what scythe_db_init() refuses */
	r.db->conf.cc_options = "cold_wm=5,hot_wm=2";
	assert_int_equal(dtxn_cc_footprint(r.db, SC_CN, SC_COORDS, &cn, &w), -EINVAL);
	r.db->conf.cc_options = NULL;
	sc_down(&r);
}

/*
 * With rpc=rrpc the footprint adds RRPC's: per CN its registered message
 * memory (a ring per worker and node), per worker its rrpc and Rockets and
 * its share of the MNs' RRPC services; it still bounds what the worker,
 * the services and the coordinators take from the heap.
 */
static void
test_footprint_rrpc(void **state)
{
	struct dtxn_footprint cn = { 0 }, w = { 0 }, wk = { 0 }, cn0 = { 0 }, w0 = { 0 };
	uint64_t ring = 64 + (uint64_t)DTXN_RRPC_BUCKETS_DEFAULT * DTXN_RRPC_BUCKET_BYTES, used, used0;
	struct sc_run r;

	(void)state;
	sc_up(&r, NULL); /* the same run over messages: what RRPC adds */
	sc_go(&r, 20);
	used0 = (r.heap[2] - r.heap[0]) + (r.heap[4] - r.heap[3]);
	sc_down(&r);
	sc_up(&r, "rpc=rrpc");
	assert_int_equal(dtxn_cc_footprint(r.db, SC_CN, SC_COORDS, &cn, &w), 0);
	assert_int_equal(dtxn_worker_footprint(r.db, SC_COORDS, &wk), 0);
	r.db->conf.cc_options = NULL;
	assert_int_equal(dtxn_cc_footprint(r.db, SC_CN, SC_COORDS, &cn0, &w0), 0);
	r.db->conf.cc_options = "rpc=rrpc";
	sc_go(&r, 20);
	used = (r.heap[2] - r.heap[0]) + (r.heap[4] - r.heap[3]);
	print_message("scythe rpc=rrpc footprint: per CN %" PRIu64 " B (msg: %" PRIu64
		      " B); worker, services, coordinators: RRPC adds %" PRIu64 " B used, %" PRIu64
		      " B estimated\n", cn.bytes, cn0.bytes, used - used0, w.bytes - w0.bytes);
	assert_true(cn.bytes >= cn0.bytes + (uint64_t)(SC_MN + SC_CN) * ring);
	assert_true(used > used0);
	/* the MNs' services have Rockets to every CN's worker; each CN's worker counts its share */
	assert_true(used - used0 <= SC_CN * (w.bytes - w0.bytes));
	assert_true(used - used0 > w.bytes - w0.bytes - (uint64_t)SC_MN * ring);
	sc_down(&r);
}

/*
 * TPC-C's NewOrder and Payment, every attempt HOT: NewOrder's ITEM reads
 * (a table never updated in place) are free reads, validated at commit,
 * never queued behind other readers; the WAREHOUSE reads queue; the
 * invariants hold.
 */
/*
 * TPC-C's full mix with every attempt HOT (it hung before: two of a
 * Delivery's NEW-ORDER deletes in one bucket CASed its lock twice and the
 * second found the txn's own lock, every retry; lib/txn's
 * dtxn_loc_block_shared()), with and without cancel=1: every type
 * commits, the TPC-C checks pass (sc_go()), reads of ITEM take no lock
 * (free reads), WAREHOUSE's do, and no WAREHOUSE or DISTRICT lock has a
 * ticket out at the end.
 */
static void
test_cluster_tpcc_free_reads(void **state)
{
	static const char *const tp[] = {
		"warehouses", "1", "tpcc_scale", "100", "max_new_orders", "2000", NULL,
	};
	static const char *const opts[] = { "tocc_only=1", "tocc_only=1,cancel=1" };
	uint64_t wkey = tpcc_k_warehouse(1), dkeys[TPCC_DISTRICTS];

	(void)state;
	for (uint32_t d = 0; d < TPCC_DISTRICTS; d++)
		dkeys[d] = tpcc_k_district(1, d + 1);
	for (unsigned k = 0; k < RTE_DIM(opts); k++) {
		const struct scythe_worker *sw;
		struct sc_run r;
		uint64_t c, a, ab;

		sc_up_bench(&r, "tpcc", tp, opts[k]);
		sc_go(&r, 40);
		dtxn_run_stats_totals(r.stats, &c, &a, &ab);
		assert_true(c > 0);
		assert_true(r.stats->type[TPCC_DELIVERY_TXN].commits > 0);
		assert_true(r.stats->type[TPCC_NEW_ORDER_TXN].commits > 0);
		sw = r.w->cc_priv;
		assert_true(sw->st.free_reads > 0);
		assert_int_equal(sw->st.cold_attempts, 0);
		assert_int_equal(sw->st.queued_by_table[TPCC_ITEM], 0);
		assert_int_equal(sw->st.locks_by_table[TPCC_ITEM], 0);
		assert_true(sw->st.locks_by_table[TPCC_WAREHOUSE] > 0);
		sc_queues_empty(&r, TPCC_WAREHOUSE, &wkey, 1);
		sc_queues_empty(&r, TPCC_DISTRICT, dkeys, TPCC_DISTRICTS);
		sc_down(&r);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reject_rules),
		cmocka_unit_test(test_ticket_wrap),
		cmocka_unit_test(test_cancel),
		cmocka_unit_test(test_batch_sort),
		cmocka_unit_test(test_options),
		cmocka_unit_test(test_cluster_default),
		cmocka_unit_test(test_cluster_occ_only),
		cmocka_unit_test(test_cluster_tocc_only),
		cmocka_unit_test(test_cluster_rrpc),
		cmocka_unit_test(test_cluster_cancel),
		cmocka_unit_test(test_recover_tickets),
		cmocka_unit_test(test_cluster_cas_lock),
		cmocka_unit_test(test_footprint),
		cmocka_unit_test(test_footprint_rrpc),
		cmocka_unit_test(test_cluster_tpcc_free_reads),
	};
	int rc;

	if (dtxn_unit_eal_init("ut_scythe") != 0)
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	dtxn_unit_eal_fini();
	return rc;
}
