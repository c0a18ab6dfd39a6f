/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/tso, the timestamp oracle: the counter's place (a reserved word of
 * MN 0), argument checks, sequential and concurrent requests on one worker
 * (leader batching: unique, increasing per coordinator, fewer FAAs than
 * timestamps), the real-time order a later request sees, max_batch 1, and
 * two workers on two lcores sharing the counter. shm fabric, model none.
 * Then the CN-side service (struct dtxn_tso_cn) as Motor uses it by
 * default: three CNs, the first one's coordinators add locally, the others
 * by RPC, and every timestamp is unique and in real-time order across all
 * of them, with no MN verb. Last, TSO proxies on MNs 1 and 2: four
 * leaders on two CNs pick a proxy or the TSO at random; still unique and
 * real-time ordered, nothing lost, fewer proxy FAAs than requests, and
 * each proxy's record is the top of the ranges it handed out.
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

#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_memory.h>

#include "dtxn_tso.h"
#include "motor_private.h"
#include "unit_eal.h"
#include "ut_txn.h"

#define N_MN 3
#define N_COORDS 32
#define PER_COORD 50

static struct dtxn_fabric *g_f;
static struct dtxn_db *g_db;
static unsigned g_worker_seq;

/* The counter as the MN holds it. */
static uint64_t
counter_now(void)
{
	dtxn_raddr_t ra = dtxn_tso_counter_raddr(dtxn_db_catalog(g_db));
	const char *base = dtxn_fabric_mn_base(g_f, DTXN_RADDR_MN(ra));

	return __atomic_load_n((const uint64_t *)(const void *)(base + DTXN_RADDR_OFF(ra)),
			       __ATOMIC_ACQUIRE);
}

/* An 8-byte word of an MN, read by the CPU (the test's view of MN memory). */
static uint64_t
counter_of(struct dtxn_fabric *f, dtxn_raddr_t ra)
{
	const char *base = dtxn_fabric_mn_base(f, DTXN_RADDR_MN(ra));

	return __atomic_load_n((const uint64_t *)(const void *)(base + DTXN_RADDR_OFF(ra)),
			       __ATOMIC_ACQUIRE);
}

static int
group_setup(void **state)
{
	struct dtxn_db_conf dc = {
		.size = sizeof(dc), .protocol = "motor", .isolation = DTXN_ISO_SR,
		.n_mn = N_MN, .n_replicas = 3, .n_coords = 2 * N_COORDS,
		.log_bytes = 4096, .addr_cache_entries = 64,
	};
	struct dtxn_table_def kv = { .id = 0, .name = "kv", .value_size = 8, .max_keys = 16 };
	struct dtxn_fabric_conf fc = { .size = sizeof(fc), .driver = "shm", .n_mn = N_MN,
				       .n_cn = 2, .socket_id = SOCKET_ID_ANY, .name = "uttso" };

	(void)state;
	return ut_db_open(&dc, (const struct dtxn_table_def *[]){ &kv }, 1, &fc, &g_db, &g_f);
}

static int
group_teardown(void **state)
{
	(void)state;
	dtxn_db_destroy(g_db);
	dtxn_fabric_close(g_f);
	return 0;
}

/* One worker's client and the timestamps its coordinators got. */
struct run {
	struct dtxn_tso *tso;
	unsigned n;                 /* coordinators */
	unsigned per;               /* timestamps each */
	uint64_t ts[N_COORDS][PER_COORD];
	struct dtxn_tso_req req[N_COORDS];
	unsigned gid0;
	uint16_t cn;
	int err;
};

struct co_arg {
	struct run *run;
	unsigned idx;
};

static void
co_get(struct dtxn_coord *c, void *arg)
{
	struct co_arg *a = arg;
	struct run *r = a->run;
	unsigned k;

	for (k = 0; k < r->per; k++) {
		int rc = dtxn_tso_get_lc(r->tso, c, &r->req[a->idx], &r->ts[a->idx][k]);

		if (rc != 0)
			r->err = rc;
		/* vary the interleaving: some coordinators yield between requests */
		if (a->idx % 3 == 0)
			dtxn_co_yield_lc(dtxn_coord_co(c));
	}
}

/* Runs r->n coordinators requesting r->per timestamps each, on this lcore. */
static int
run_worker(struct run *r, unsigned max_batch)
{
	struct dtxn_tso_conf tc = { .size = sizeof(tc),
				    .counter = dtxn_tso_counter_raddr(dtxn_db_catalog(g_db)),
				    .max_batch = max_batch, .socket_id = SOCKET_ID_ANY };
	struct co_arg args[N_COORDS];
	struct dtxn_worker *w;
	unsigned i;
	int rc;

	w = dtxn_worker_create(g_db, r->cn, __atomic_fetch_add(&g_worker_seq, 1, __ATOMIC_RELAXED),
			       r->n, (int)rte_socket_id());
	if (w == NULL)
		return -1;
	r->tso = dtxn_tso_create(&tc);
	if (r->tso == NULL)
		return -1;
	for (i = 0; i < r->n; i++) {
		args[i].run = r;
		args[i].idx = i;
		if (dtxn_coord_create(w, r->gid0 + i, co_get, &args[i]) == NULL)
			return -1;
	}
	rc = dtxn_sched_run_lc(dtxn_worker_sched(w));
	dtxn_worker_destroy(w);
	return rc;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Every timestamp of @p runs: sorted copy in @p all; checks per-coordinator order. */
static unsigned
collect(struct run *const *runs, unsigned n_runs, uint64_t *all)
{
	unsigned n = 0, r, i, k;

	for (r = 0; r < n_runs; r++)
		for (i = 0; i < runs[r]->n; i++)
			for (k = 0; k < runs[r]->per; k++) {
				if (k > 0)
					assert_true(runs[r]->ts[i][k] > runs[r]->ts[i][k - 1]);
				all[n++] = runs[r]->ts[i][k];
			}
	qsort(all, n, sizeof(*all), cmp_u64);
	for (i = 1; i < n; i++)
		assert_true(all[i] > all[i - 1]); /* unique */
	return n;
}

static void
test_counter_place(void **state)
{
	const struct dtxn_catalog *cat = dtxn_db_catalog(g_db);

	(void)state;
	assert_int_equal(dtxn_tso_counter_raddr(cat), DTXN_RADDR(0, 8));
	assert_int_equal(dtxn_tso_counter_raddr(NULL), 0);
	assert_int_equal(dtxn_store_rsvd_raddr(cat, 0, DTXN_STORE_RSVD_TSO), DTXN_RADDR(0, 8));
	assert_int_equal(dtxn_store_rsvd_raddr(cat, 2, 7), DTXN_RADDR(2, 56));
	assert_int_equal(dtxn_store_rsvd_raddr(cat, 0, 0), 0);
	assert_int_equal(dtxn_store_rsvd_raddr(cat, 0, DTXN_STORE_RSVD_MAX), 0);
	assert_int_equal(dtxn_store_rsvd_raddr(cat, N_MN, 1), 0);
	/* no table starts inside the reserved bytes */
	assert_true(dtxn_catalog_table(cat, 0)->off[0] >= DTXN_STORE_RSVD_BYTES);
}

static void
test_create_checks(void **state)
{
	struct dtxn_tso_conf tc = { .size = sizeof(tc), .counter = DTXN_RADDR(0, 8) };
	struct dtxn_tso *tso;
	uint64_t ts;

	(void)state;
	assert_null(dtxn_tso_create(NULL));
	assert_int_equal(rte_errno, EINVAL);
	tc.counter = 0;
	assert_null(dtxn_tso_create(&tc));
	tc.counter = DTXN_RADDR(0, 12);
	assert_null(dtxn_tso_create(&tc));
	tc.counter = DTXN_RADDR(0, 8);
	tc.max_batch = DTXN_TSO_BATCH_MAX + 1;
	assert_null(dtxn_tso_create(&tc));
	tc.size = 4;
	tc.max_batch = 0;
	assert_null(dtxn_tso_create(&tc));
	tc.size = sizeof(tc);
	tso = dtxn_tso_create(&tc);
	assert_non_null(tso);
	assert_int_equal(dtxn_tso_get_lc(tso, NULL, NULL, &ts), -EINVAL);
	assert_int_equal(dtxn_tso_get_lc(NULL, NULL, NULL, NULL), -EINVAL);
	dtxn_tso_destroy(tso);
	dtxn_tso_destroy(NULL);
}

static void
test_sequential(void **state)
{
	static struct run r;
	struct run *runs[1] = { &r };
	struct dtxn_tso_stats st;
	uint64_t before = counter_now(), all[PER_COORD];
	unsigned k;

	(void)state;
	memset(&r, 0, sizeof(r));
	r.n = 1;
	r.per = PER_COORD;
	r.cn = N_MN;
	assert_int_equal(run_worker(&r, 0), 0);
	assert_int_equal(r.err, 0);
	assert_int_equal(collect(runs, 1, all), PER_COORD);
	/* one coordinator: consecutive values, one FAA each */
	for (k = 0; k < PER_COORD; k++)
		assert_int_equal(r.ts[0][k], before + 1 + k);
	assert_int_equal(counter_now(), before + PER_COORD);
	dtxn_tso_stats_get(r.tso, &st);
	assert_int_equal(st.requests, PER_COORD);
	assert_int_equal(st.faas, PER_COORD);
	assert_int_equal(st.max_batch, 1);
	dtxn_tso_destroy(r.tso);
}

static void
test_batched(void **state)
{
	static struct run r;
	static uint64_t all[N_COORDS * PER_COORD];
	struct run *runs[1] = { &r };
	struct dtxn_tso_stats st;
	uint64_t before = counter_now();
	unsigned n;

	(void)state;
	memset(&r, 0, sizeof(r));
	r.n = N_COORDS;
	r.per = PER_COORD;
	r.cn = N_MN;
	assert_int_equal(run_worker(&r, 0), 0);
	assert_int_equal(r.err, 0);
	n = collect(runs, 1, all);
	assert_int_equal(n, N_COORDS * PER_COORD);
	/* exactly the range the counter advanced over: nothing lost or reused */
	assert_int_equal(all[0], before + 1);
	assert_int_equal(all[n - 1], before + n);
	assert_int_equal(counter_now(), before + n);
	dtxn_tso_stats_get(r.tso, &st);
	print_message("tso: %" PRIu64 " timestamps with %" PRIu64
		      " FAAs (largest batch %" PRIu64 ")\n",
		      st.requests, st.faas, st.max_batch);
	assert_int_equal(st.requests, n);
	assert_true(st.faas < n);          /* leader batching served several at once */
	assert_true(st.max_batch > 1);
	assert_true(st.max_batch <= DTXN_TSO_BATCH_DEFAULT);
	dtxn_tso_destroy(r.tso);
}

/* Scythe's TSO group: n requesters that ask together cost exactly one FAA. */
static void
test_group_one_faa(void **state)
{
	static struct run r;
	static uint64_t all[N_COORDS];
	struct run *runs[1] = { &r };
	struct dtxn_tso_stats st;
	uint64_t before = counter_now();

	(void)state;
	memset(&r, 0, sizeof(r));
	r.n = N_COORDS;
	r.per = 1;
	r.cn = N_MN;
	assert_int_equal(run_worker(&r, 0), 0);
	assert_int_equal(r.err, 0);
	assert_int_equal(collect(runs, 1, all), N_COORDS);
	assert_int_equal(all[0], before + 1);
	assert_int_equal(all[N_COORDS - 1], before + N_COORDS);
	dtxn_tso_stats_get(r.tso, &st);
	assert_int_equal(st.faas, 1);
	assert_int_equal(st.max_batch, N_COORDS);
	assert_int_equal(counter_now(), before + N_COORDS);
	/* queue order: the leader (first coordinator) first, then the followers */
	for (unsigned i = 0; i < N_COORDS; i++)
		assert_int_equal(r.ts[i][0], before + 1 + i);
	dtxn_tso_destroy(r.tso);
}

static void
test_batch_one(void **state)
{
	static struct run r;
	static uint64_t all[8 * 10];
	struct run *runs[1] = { &r };
	struct dtxn_tso_stats st;

	(void)state;
	memset(&r, 0, sizeof(r));
	r.n = 8;
	r.per = 10;
	r.cn = N_MN;
	assert_int_equal(run_worker(&r, 1), 0);
	assert_int_equal(collect(runs, 1, all), 80);
	dtxn_tso_stats_get(r.tso, &st);
	assert_int_equal(st.faas, 80);     /* max_batch 1: one FAA per timestamp */
	assert_int_equal(st.max_batch, 1);
	dtxn_tso_destroy(r.tso);
}

/* Real-time order: a request that starts after another returned gets more. */
struct order_arg {
	struct dtxn_tso *tso;
	struct dtxn_tso_req req[2];
	volatile int step;
	uint64_t a, b, c;
};

static void
co_first(struct dtxn_coord *c, void *arg)
{
	struct order_arg *o = arg;

	assert_int_equal(dtxn_tso_get_lc(o->tso, c, &o->req[0], &o->a), 0);
	o->step = 1;
	assert_int_equal(dtxn_tso_get_lc(o->tso, c, &o->req[0], &o->c), 0);
}

static void
co_second(struct dtxn_coord *c, void *arg)
{
	struct order_arg *o = arg;

	while (o->step < 1)
		dtxn_co_yield_lc(dtxn_coord_co(c));
	assert_int_equal(dtxn_tso_get_lc(o->tso, c, &o->req[1], &o->b), 0);
}

static void
test_real_time_order(void **state)
{
	struct dtxn_tso_conf tc = { .size = sizeof(tc),
				    .counter = dtxn_tso_counter_raddr(dtxn_db_catalog(g_db)),
				    .socket_id = SOCKET_ID_ANY };
	static struct order_arg o;
	struct dtxn_worker *w;

	(void)state;
	memset(&o, 0, sizeof(o));
	w = dtxn_worker_create(g_db, N_MN, __atomic_fetch_add(&g_worker_seq, 1, __ATOMIC_RELAXED),
			       2, (int)rte_socket_id());
	assert_non_null(w);
	o.tso = dtxn_tso_create(&tc);
	assert_non_null(o.tso);
	assert_non_null(dtxn_coord_create(w, 0, co_first, &o));
	assert_non_null(dtxn_coord_create(w, 1, co_second, &o));
	assert_int_equal(dtxn_sched_run_lc(dtxn_worker_sched(w)), 0);
	dtxn_worker_destroy(w);
	assert_true(o.b > o.a);
	assert_true(o.c > o.a);
	assert_true(o.b != o.c);
	dtxn_tso_destroy(o.tso);
}

/* With a NIC model, the counter's FAAs are device-memory atomics. */
static void
test_device_memory_unit(void **state)
{
	struct dtxn_db_conf dc = { .size = sizeof(dc), .protocol = "motor", .n_mn = 1,
				   .n_replicas = 1, .n_coords = 4, .log_bytes = 64 };
	struct dtxn_table_def kv = { .id = 0, .name = "kv", .value_size = 8, .max_keys = 8 };
	struct dtxn_fabric_conf fc = { .size = sizeof(fc), .driver = "shm", .n_mn = 1,
				       .n_cn = 1, .socket_id = SOCKET_ID_ANY, .name = "uttsodm" };
	struct dtxn_fabric *keep_f = g_f;
	struct dtxn_db *keep_db = g_db;
	const struct dtxn_nic_state *ns;
	static struct run r;
	struct dtxn_tso_stats st;
	char err[128];
	uint64_t region;

	(void)state;
	g_db = dtxn_db_create(&dc);
	assert_non_null(g_db);
	assert_int_equal(dtxn_db_add_table(g_db, &kv), 0);
	assert_int_equal(dtxn_db_layout(g_db, &region), 0);
	fc.mn_region_size = region;
	assert_int_equal(dtxn_nic_model_load(DTXN_SRC_CONFIG_DIR "/nic/cx5.ini", &fc.nic, err,
					     sizeof(err)), 0);
	g_f = dtxn_fabric_open(&fc);
	assert_non_null(g_f);
	assert_int_equal(dtxn_db_attach(g_db, g_f), 0);
	memset(&r, 0, sizeof(r));
	r.n = 4;
	r.per = 10;
	r.cn = 1;
	assert_int_equal(run_worker(&r, 0), 0);
	dtxn_tso_stats_get(r.tso, &st);
	ns = dtxn_fabric_nic_state(g_f, 0);
	assert_non_null(ns);
	assert_int_equal(ns->dm_atomic.ops, st.faas);  /* the counter is in device memory */
	assert_int_equal(ns->atomic.ops, 0);
	assert_int_equal(counter_now(), 40);
	dtxn_tso_destroy(r.tso);
	dtxn_db_destroy(g_db);
	dtxn_fabric_close(g_f);
	g_db = keep_db;
	g_f = keep_f;
}

static int
lcore_main(void *arg)
{
	return run_worker(arg, 0);
}

static void
test_two_lcores(void **state)
{
	static struct run r0, r1;
	static uint64_t all[2 * 16 * PER_COORD];
	struct run *runs[2] = { &r0, &r1 };
	uint64_t before = counter_now();
	unsigned lc, n;

	(void)state;
	memset(&r0, 0, sizeof(r0));
	memset(&r1, 0, sizeof(r1));
	r0.n = r1.n = 16;
	r0.per = r1.per = PER_COORD;
	r0.cn = N_MN;
	r1.cn = N_MN + 1;
	r1.gid0 = N_COORDS;
	lc = rte_get_next_lcore(-1, 1, 0);
	assert_true(lc < RTE_MAX_LCORE);
	assert_int_equal(rte_eal_remote_launch(lcore_main, &r1, lc), 0);
	assert_int_equal(run_worker(&r0, 0), 0);
	assert_int_equal(rte_eal_wait_lcore(lc), 0);
	assert_int_equal(r0.err, 0);
	assert_int_equal(r1.err, 0);
	/* two clients, one counter: still unique, and nothing skipped */
	n = collect(runs, 2, all);
	assert_int_equal(n, 2 * 16 * PER_COORD);
	assert_int_equal(all[0], before + 1);
	assert_int_equal(all[n - 1], before + n);
	dtxn_tso_destroy(r0.tso);
	dtxn_tso_destroy(r1.tso);
}

/* ------------------------------------------------------------------ */
/* The CN-side service over several CNs (Motor's default, tso=cn)     */
/* ------------------------------------------------------------------ */

#define CNS_N 3
#define CNS_COORDS 4
#define CNS_PER 25

/* One request: when it began and ended on the single stepping thread. */
struct cns_req {
	uint64_t ts, begin, end;
};

struct cns_run {
	uint64_t ev;   /* event clock: every begin and end takes the next tick */
	struct cns_req req[CNS_N * CNS_COORDS][CNS_PER];
	unsigned done;
	int err;
};

static void
co_cns(struct dtxn_coord *c, void *arg)
{
	struct cns_run *r = arg;
	struct motor_worker *mw = c->worker->cc_priv;
	struct motor_coord *mc = c->cc_priv;
	unsigned k, g = dtxn_coord_gid(c);

	for (k = 0; k < CNS_PER; k++) {
		struct cns_req *q = &r->req[g][k];
		int rc;

		q->begin = ++r->ev;
		rc = dtxn_tso_get_lc(mw->tso, c, &mc->req, &q->ts);
		q->end = ++r->ev;
		if (rc != 0)
			r->err = rc;
		if ((g + k) % 2 == 0)
			dtxn_co_yield_lc(dtxn_coord_co(c));
	}
	r->done++;
}

static void
test_cn_service_cns(void **state)
{
	struct dtxn_db_conf dc = {
		.size = sizeof(dc), .protocol = "motor", .isolation = DTXN_ISO_SR,
		.n_mn = 2, .n_replicas = 2, .n_coords = CNS_N * CNS_COORDS,
		.log_bytes = 4096, .addr_cache_entries = 64, .cn_recovery = 1,
	};
	struct dtxn_table_def kv = { .id = 0, .name = "kv", .value_size = 8, .max_keys = 16 };
	struct dtxn_fabric_conf fc = { .size = sizeof(fc), .driver = "shm", .n_mn = 2,
				       .n_cn = CNS_N, .socket_id = SOCKET_ID_ANY,
				       .name = "uttsocn" };
	static struct cns_run r;
	struct dtxn_worker *w[CNS_N];
	const struct motor_shared *sh;
	struct dtxn_fabric *f;
	struct dtxn_db *db;
	uint64_t local = 0, remote = 0, counter = 0, mn_atomics = 0;
	struct dtxn_tso_cn_stats st;
	unsigned i, j, a, b, idle = 0;

	(void)state;
	memset(&r, 0, sizeof(r));
	ut_db_up(&dc, &kv, &fc, &db, &f);
	for (i = 0; i < CNS_N; i++) {
		w[i] = dtxn_worker_create(db, (uint16_t)(2 + i), 0, CNS_COORDS, SOCKET_ID_ANY);
		assert_non_null(w[i]);
	}
	for (i = 0; i < CNS_N * CNS_COORDS; i++)
		assert_non_null(dtxn_coord_create(w[i / CNS_COORDS], i, co_cns, &r));
	/* every CN keeps polling (the server answers from its CQ poller) */
	while (r.done < CNS_N * CNS_COORDS && idle < 1000000) {
		for (i = 0; i < CNS_N; i++)
			(void)dtxn_sched_step_lc(dtxn_worker_sched(w[i]));
		idle++;
	}
	assert_int_equal(r.done, CNS_N * CNS_COORDS);
	assert_int_equal(r.err, 0);
	/* unique, and real-time ordered: a request that began after another
	 * ended got a larger timestamp, whichever CNs the two ran on */
	for (a = 0; a < CNS_N * CNS_COORDS * CNS_PER; a++) {
		const struct cns_req *x = &r.req[a / CNS_PER][a % CNS_PER];

		assert_true(x->ts >= 1);
		for (b = 0; b < CNS_N * CNS_COORDS * CNS_PER; b++) {
			const struct cns_req *y = &r.req[b / CNS_PER][b % CNS_PER];

			if (a == b)
				continue;
			assert_true(x->ts != y->ts);
			if (x->end < y->begin)
				assert_true(x->ts < y->ts);
		}
	}
	/* the first CN added locally, the others by message; the only MN
	 * verbs are the FAAs that reserve blocks on the high-water mark */
	sh = db->cc_shared;
	assert_non_null(sh->tso_cn);
	dtxn_tso_cn_stats(sh->tso_cn, &counter, &local, &remote);
	dtxn_tso_cn_stats_get(sh->tso_cn, &st);
	assert_true(local > 0);
	assert_true(remote > 0);
	assert_true(counter >= CNS_N * CNS_COORDS * CNS_PER);
	assert_true(st.limit >= counter);
	assert_true(st.raises >= 1);
	for (i = 0; i < CNS_N; i++) {
		struct dtxn_fabric_counters per[DTXN_MAX_NODES];

		dtxn_worker_counters(w[i], per);
		for (j = 0; j < 2; j++)
			mn_atomics += per[j].ops[DTXN_WR_FAA] + per[j].ops[DTXN_WR_CAS];
	}
	assert_int_equal(mn_atomics, st.raises);
	for (i = 0; i < CNS_N; i++)
		dtxn_worker_destroy(w[i]);
	dtxn_db_destroy(db);
	dtxn_fabric_close(f);
}

/* ------------------------------------------------------------------ */
/* TSO proxies on MNs 1 and 2 (Scythe §4.5), the TSO on MN 0          */
/* ------------------------------------------------------------------ */

#define PX_CN 2
#define PX_WORKERS 2     /* per CN: four leaders, so proxies combine */
#define PX_COORDS 6      /* per worker */
#define PX_PER 30
#define PX_N 2
#define PX_TYPE 5
#define PX_ALL (PX_CN * PX_WORKERS * PX_COORDS)

struct px_run {
	uint64_t ev;
	struct cns_req req[PX_ALL][PX_PER];
	struct dtxn_tso_req treq[PX_ALL];
	struct dtxn_rpc_ep *ep[PX_ALL];
	struct dtxn_tso *tso[PX_CN * PX_WORKERS];
	uint64_t via_max[PX_N];        /* largest timestamp each proxy's ranges reached */
	uint64_t via_ts;               /* timestamps that came through a proxy */
	unsigned done;
	int err, bad_rc;
};

static struct px_run g_px;

/* proxy_fetch_add of the clients: proxy i is on MN 1 + i */
static int
px_hook(void *arg, struct dtxn_coord *c, unsigned proxy, uint64_t n, uint64_t *old)
{
	struct px_run *r = arg;
	int rc = dtxn_tso_proxy_fetch_add_lc(r->ep[dtxn_coord_gid(c)], (uint16_t)(1 + proxy),
					     PX_TYPE, n, old);

	if (rc == 0) {
		r->via_ts += n;
		if (*old + n > r->via_max[proxy])
			r->via_max[proxy] = *old + n;
	}
	return rc;
}

static void
co_px(struct dtxn_coord *c, void *arg)
{
	struct px_run *r = arg;
	unsigned g = dtxn_coord_gid(c), k;

	for (k = 0; k < PX_PER; k++) {
		struct cns_req *q = &r->req[g][k];
		int rc;

		q->begin = ++r->ev;
		rc = dtxn_tso_get_lc(r->tso[g / PX_COORDS], c, &r->treq[g], &q->ts);
		q->end = ++r->ev;
		if (rc != 0)
			r->err = rc;
		if ((g + k) % 3 == 0)
			dtxn_co_yield_lc(dtxn_coord_co(c));
	}
	if (g == 0) {
		/* a malformed request (4 bytes): an empty reply, the caller sees it */
		uint8_t resp[DTXN_RPC_RESP_MAX];
		uint32_t four = 4;
		struct dtxn_rpc_call call = { .dst_node = 1, .type = PX_TYPE, .req = &four,
					      .req_len = sizeof(four), .resp = resp };

		r->bad_rc = dtxn_rpc_call_lc(r->ep[g], &call, 1) == 0 && call.resp_len == 0 ? 0 : -1;
	}
	r->done++;
}

static void
test_proxies(void **state)
{
	struct dtxn_db_conf dc = {
		.size = sizeof(dc), .protocol = "ford", .isolation = DTXN_ISO_SR,
		.n_mn = 3, .n_replicas = 1, .n_coords = PX_ALL,
		.log_bytes = 4096, .addr_cache_entries = 64,
	};
	struct dtxn_table_def kv = { .id = 0, .name = "kv", .value_size = 8, .max_keys = 16 };
	struct dtxn_fabric_conf fc = { .size = sizeof(fc), .driver = "shm", .n_mn = 3,
				       .n_cn = PX_CN, .socket_id = SOCKET_ID_ANY,
				       .name = "uttsopx" };
	struct dtxn_rpc_conf rc_conf = { .size = sizeof(rc_conf),
					 .timeout_ns = UINT64_C(10000000000), .max_retries = 1,
					 .mn_peers = 1 };
	struct dtxn_tso_proxy_conf pc = { .size = sizeof(pc), .rpc_type = PX_TYPE,
					  .workers_per_cn = PX_WORKERS, .max_eps = PX_COORDS,
					  .socket_id = SOCKET_ID_ANY };
	struct dtxn_tso_conf tc = { .size = sizeof(tc), .socket_id = SOCKET_ID_ANY,
				    .n_proxies = PX_N, .proxy_fetch_add = px_hook };
	struct px_run *r = &g_px;
	struct dtxn_worker *w[PX_CN * PX_WORKERS];
	struct dtxn_rpc *rpc[PX_CN * PX_WORKERS];
	struct dtxn_tso_proxy *px[PX_N];
	struct dtxn_tso_proxy_stats ps;
	struct dtxn_tso_stats ts;
	struct dtxn_fabric *f;
	struct dtxn_db *db;
	uint64_t before, counter, px_req = 0, px_faa = 0, px_ts = 0, proxied = 0;
	unsigned i, a, b, idle = 0;

	(void)state;
	memset(r, 0, sizeof(*r));
	ut_db_up(&dc, &kv, &fc, &db, &f);
	tc.counter = dtxn_tso_counter_raddr(dtxn_db_catalog(db));
	tc.proxy_arg = r;
	pc.counter = tc.counter;
	/* not on the counter's MN, not on a CN, not twice the counter's MN */
	pc.mn = 0;
	assert_null(dtxn_tso_proxy_create(f, &pc));
	assert_int_equal(rte_errno, EINVAL);
	pc.mn = 3;
	assert_null(dtxn_tso_proxy_create(f, &pc));
	for (i = 0; i < PX_N; i++) {
		pc.mn = (uint16_t)(1 + i);
		px[i] = dtxn_tso_proxy_create(f, &pc);
		assert_non_null(px[i]);
	}
	tc.n_proxies = DTXN_TSO_PROXIES_MAX + 1;
	assert_null(dtxn_tso_create(&tc));
	tc.n_proxies = PX_N;
	for (i = 0; i < PX_CN * PX_WORKERS; i++) {
		w[i] = dtxn_worker_create(db, (uint16_t)(3 + i / PX_WORKERS), i % PX_WORKERS,
					  PX_COORDS, SOCKET_ID_ANY);
		assert_non_null(w[i]);
		rpc[i] = dtxn_rpc_create(w[i], &rc_conf);
		assert_non_null(rpc[i]);
		tc.seed = i + 1;
		r->tso[i] = dtxn_tso_create(&tc);
		assert_non_null(r->tso[i]);
	}
	for (i = 0; i < PX_ALL; i++) {
		struct dtxn_coord *c = dtxn_coord_create(w[i / PX_COORDS], i, co_px, r);

		assert_non_null(c);
		r->ep[i] = dtxn_rpc_ep_create(rpc[i / PX_COORDS], c);
		assert_non_null(r->ep[i]);
	}
	before = counter_of(f, tc.counter);
	while (r->done < PX_ALL && idle < 2000000) {
		for (i = 0; i < PX_CN * PX_WORKERS; i++)
			(void)dtxn_sched_step_lc(dtxn_worker_sched(w[i]));
		for (i = 0; i < PX_N; i++)
			(void)dtxn_tso_proxy_poll(px[i]);
		idle++;
	}
	assert_int_equal(r->done, PX_ALL);
	assert_int_equal(r->err, 0);
	assert_int_equal(r->bad_rc, 0);
	/* unique, increasing per coordinator, real-time ordered across CNs and routes */
	for (a = 0; a < PX_ALL * PX_PER; a++) {
		const struct cns_req *x = &r->req[a / PX_PER][a % PX_PER];

		assert_true(x->ts > before);
		if (a % PX_PER != 0)
			assert_true(x->ts > r->req[a / PX_PER][a % PX_PER - 1].ts);
		for (b = 0; b < PX_ALL * PX_PER; b++) {
			const struct cns_req *y = &r->req[b / PX_PER][b % PX_PER];

			if (a == b)
				continue;
			assert_true(x->ts != y->ts);
			if (x->end < y->begin)
				assert_true(x->ts < y->ts);
		}
	}
	/* nothing lost: the counter advanced by exactly the timestamps handed out */
	counter = counter_of(f, tc.counter);
	assert_int_equal(counter - before, PX_ALL * PX_PER);
	/* each proxy combined leaders' batches and recorded the top of its ranges */
	for (i = 0; i < PX_N; i++) {
		dtxn_raddr_t rec = dtxn_tso_proxy_record_raddr(dtxn_db_catalog(db), (uint16_t)(1 + i));

		dtxn_tso_proxy_stats_get(px[i], &ps);
		assert_true(ps.requests > 0);
		assert_int_equal(ps.errors, 0);
		assert_int_equal(ps.bad, i == 0 ? 1 : 0);
		px_req += ps.requests;
		px_faa += ps.faas;
		px_ts += ps.timestamps;
		assert_int_equal(counter_of(f, rec), r->via_max[i]);
		assert_true(counter_of(f, rec) <= counter);
	}
	for (i = 0; i < PX_CN * PX_WORKERS; i++) {
		dtxn_tso_stats_get(r->tso[i], &ts);
		proxied += ts.proxied;
	}
	print_message("proxies: %" PRIu64 " leader requests, %" PRIu64 " FAAs, %" PRIu64
		      " of %u timestamps\n", px_req, px_faa, px_ts, PX_ALL * PX_PER);
	assert_int_equal(px_req, proxied);
	assert_int_equal(px_ts, r->via_ts);
	assert_true(px_faa < px_req);            /* one FAA served several leaders */
	assert_true(px_ts < PX_ALL * PX_PER);    /* and some batches went to the TSO */
	for (i = 0; i < PX_CN * PX_WORKERS; i++) {
		dtxn_tso_destroy(r->tso[i]);
		dtxn_rpc_destroy(rpc[i]);
		dtxn_worker_destroy(w[i]);
	}
	for (i = 0; i < PX_N; i++)
		dtxn_tso_proxy_destroy(px[i]);
	dtxn_db_destroy(db);
	dtxn_fabric_close(f);
}

/* ------------------------------------------------------------------ */
/* The CN service survives its host (dtxn_tso_cn_take_over_lc())      */
/* ------------------------------------------------------------------ */

#define TO_PER 20
#define TO_TYPE 9     /* a message type Motor does not use */
#define TO_BLOCK 8    /* small: many blocks, many raises, every path */

/* One service per CN, as one per process in a cluster of processes. */
struct to_run {
	struct dtxn_tso_cn *svc[CNS_N];
	struct dtxn_tso_cn *dead;  /* CN 0's service before it restarted */
	/* 1: every CN; 2: the host (CN 0) is dead; 3: CN 0 restarted (a new service, rejoin) */
	unsigned phase;
	uint64_t lo[3][CNS_N * (CNS_COORDS + 1) * TO_PER];
	uint64_t hi[3][CNS_N * (CNS_COORDS + 1) * TO_PER];
	unsigned n[3], done[3], timeouts;
	int took, took_again, err;
};

static struct to_run g_to;

/* Takes TO_PER ranges of 1..3 timestamps in phase @p ph, from @p c's CN's service. */
static void
to_take(struct dtxn_coord *c, unsigned ph)
{
	struct to_run *r = &g_to;
	struct dtxn_tso_cn *s = r->svc[c->worker->cn_node - 2];
	struct motor_coord *mc = c->cc_priv;

	for (unsigned k = 0; k < TO_PER; k++) {
		uint64_t n = 1 + (dtxn_coord_gid(c) + k) % 3, old = 0;
		int rc = dtxn_tso_cn_fetch_add_lc(s, c, mc->ep, n, &old);

		if (rc == -ETIMEDOUT && ph == 2) {
			r->timeouts++; /* the dead host did not answer: ask again, as an aborted txn would */
			k--;
			continue;
		}
		if (rc != 0) {
			r->err = rc;
			break;
		}
		r->lo[ph - 1][r->n[ph - 1]] = old + 1;
		r->hi[ph - 1][r->n[ph - 1]++] = old + n;
		dtxn_co_yield_lc(dtxn_coord_co(c));
	}
	r->done[ph - 1]++;
}

static void
co_to(struct dtxn_coord *c, void *arg)
{
	struct to_run *r = &g_to;
	uint32_t gid = dtxn_coord_gid(c);

	RTE_SET_USED(arg);
	if (gid % (CNS_COORDS + 1) == CNS_COORDS) {
		/* the recovering coordinator of CN 1 (the lowest survivor) */
		if (c->worker->cn_node != 3)
			return;
		while (r->phase < 2)
			dtxn_co_yield_lc(dtxn_coord_co(c));
		r->took = dtxn_tso_cn_take_over_lc(r->svc[1], c, 2, NULL);
		r->took_again = dtxn_tso_cn_take_over_lc(r->svc[1], c, 2, NULL);
		return;
	}
	to_take(c, 1);
	if (c->worker->cn_node == 2) {
		/* the host: dies after phase 1 (never stepped in phase 2), comes back in phase 3 */
		while (r->phase < 3)
			dtxn_co_yield_lc(dtxn_coord_co(c));
		to_take(c, 3);
		return;
	}
	while (r->phase < 2)
		dtxn_co_yield_lc(dtxn_coord_co(c));
	to_take(c, 2);
}

/* Every range of @p lo/@p hi (@p n of them) is disjoint from every other. */
static void
to_disjoint(const uint64_t *lo, const uint64_t *hi, unsigned n)
{
	for (unsigned a = 0; a < n; a++)
		for (unsigned b = a + 1; b < n; b++)
			assert_true(hi[a] < lo[b] || hi[b] < lo[a]);
}

static void
test_cn_takeover(void **state)
{
	struct dtxn_db_conf dc = {
		.size = sizeof(dc), .protocol = "motor", .isolation = DTXN_ISO_SR,
		.n_mn = 2, .n_replicas = 2, .n_coords = CNS_N * (CNS_COORDS + 1),
		.log_bytes = 4096, .addr_cache_entries = 64,
	};
	struct dtxn_table_def kv = { .id = 0, .name = "kv", .value_size = 8, .max_keys = 16 };
	struct dtxn_fabric_conf fc = { .size = sizeof(fc), .driver = "shm", .n_mn = 2,
				       .n_cn = CNS_N, .socket_id = SOCKET_ID_ANY,
				       .name = "uttsoto" };
	struct to_run *r = &g_to;
	struct dtxn_tso_cn_stats st[CNS_N];
	struct dtxn_worker *w[CNS_N];
	struct dtxn_tso_cn_conf rc0 = {
		.size = sizeof(rc0), .host = 2, .rpc_type = TO_TYPE,
		.socket_id = SOCKET_ID_ANY, .block = TO_BLOCK,
		.retry_ns = 100000, .failover = true, .rejoin = true,
	};
	struct dtxn_tso_cn_stats st0;
	struct dtxn_fabric *f;
	struct dtxn_db *db;
	uint64_t max1 = 0, min2 = UINT64_MAX, max2 = 0, min3 = UINT64_MAX, remote;
	unsigned i, idle;

	(void)state;
	memset(r, 0, sizeof(*r));
	ut_db_up(&dc, &kv, &fc, &db, &f);
	for (i = 0; i < CNS_N; i++) {
		struct dtxn_tso_cn_conf tc = {
			.size = sizeof(tc), .host = 2, .rpc_type = TO_TYPE,
			.socket_id = SOCKET_ID_ANY, .cat = &db->cat, .block = TO_BLOCK,
			.retry_ns = 100000, .failover = true,
		};
		struct motor_worker *mw;

		w[i] = dtxn_worker_create(db, (uint16_t)(2 + i), 0, CNS_COORDS + 1, SOCKET_ID_ANY);
		assert_non_null(w[i]);
		r->svc[i] = dtxn_tso_cn_create(&tc);
		assert_non_null(r->svc[i]);
		mw = w[i]->cc_priv;
		assert_int_equal(dtxn_tso_cn_register(r->svc[i], mw->rpc), 0);
	}
	for (i = 0; i < CNS_N * (CNS_COORDS + 1); i++)
		assert_non_null(dtxn_coord_create(w[i / (CNS_COORDS + 1)], i, co_to, NULL));
	/* phase 1: CN 0 hosts; its coordinators add locally, the others ask */
	r->phase = 1;
	for (idle = 0; r->done[0] < CNS_N * CNS_COORDS && idle < 1000000; idle++)
		for (i = 0; i < CNS_N; i++)
			(void)dtxn_sched_step_lc(dtxn_worker_sched(w[i]));
	assert_int_equal(r->done[0], CNS_N * CNS_COORDS);
	assert_int_equal(r->err, 0);
	/* phase 2: CN 0 is never stepped again (dead); CN 1 takes over, CN 2 follows */
	r->phase = 2;
	for (idle = 0; r->done[1] < (CNS_N - 1) * CNS_COORDS && idle < 50000000; idle++)
		for (i = 1; i < CNS_N; i++)
			(void)dtxn_sched_step_lc(dtxn_worker_sched(w[i]));
	assert_int_equal(r->err, 0);
	assert_int_equal(r->done[1], (CNS_N - 1) * CNS_COORDS);
	assert_int_equal(r->took, 1);
	assert_int_equal(r->took_again, 0);
	/* unique within each phase and across; every new one above every old one */
	to_disjoint(r->lo[0], r->hi[0], r->n[0]);
	to_disjoint(r->lo[1], r->hi[1], r->n[1]);
	for (i = 0; i < r->n[0]; i++)
		max1 = RTE_MAX(max1, r->hi[0][i]);
	for (i = 0; i < r->n[1]; i++)
		min2 = RTE_MIN(min2, r->lo[1][i]);
	assert_true(min2 > max1);
	for (i = 0; i < CNS_N; i++)
		dtxn_tso_cn_stats_get(r->svc[i], &st[i]);
	/* blocks of 8: CN 0 hosted phase 1 within what was stored */
	assert_true(st[0].counter <= st[0].limit);
	assert_true(st[0].raises + st[1].raises + st[2].raises >= max1 / TO_BLOCK);
	assert_int_equal(st[1].takeovers, 1);
	assert_int_equal(st[1].host, 3);
	assert_int_equal(st[2].host, 3);       /* followed the host word */
	assert_true(st[2].retries > 0);
	assert_true(r->timeouts > 0);          /* requests to the dead host failed, then went to CN 1 */
	assert_true(st[1].remote > 0);         /* CN 2's requests, served by CN 1 */
	assert_true(st[1].counter <= st[1].limit);
	/*
	 * phase 3: CN 0 restarts (its process's new service, rejoin): it does
	 * not take the service back; it reads the host word and asks CN 1.
	 * Its old counter is gone with its process: a service that assumed it
	 * was still the first host would hand out 1, 2, ... again.
	 */
	rc0.cat = &db->cat;
	r->dead = r->svc[0];
	r->svc[0] = dtxn_tso_cn_create(&rc0);
	assert_non_null(r->svc[0]);
	r->phase = 3;
	for (idle = 0; r->done[2] < CNS_COORDS && idle < 1000000; idle++)
		for (i = 0; i < CNS_N; i++)
			(void)dtxn_sched_step_lc(dtxn_worker_sched(w[i]));
	assert_int_equal(r->err, 0);
	assert_int_equal(r->done[2], CNS_COORDS);
	to_disjoint(r->lo[2], r->hi[2], r->n[2]);
	for (i = 0; i < r->n[1]; i++)
		max2 = RTE_MAX(max2, r->hi[1][i]);
	for (i = 0; i < r->n[2]; i++)
		min3 = RTE_MIN(min3, r->lo[2][i]);
	assert_true(min3 > max2);              /* monotonic across the rejoin */
	assert_true(min3 > max1);
	dtxn_tso_cn_stats_get(r->svc[0], &st0);
	assert_int_equal(st0.host, 3);         /* a client of the survivor's service */
	assert_int_equal(st0.local, 0);
	assert_int_equal(st0.takeovers, 0);
	remote = st[1].remote;
	dtxn_tso_cn_stats_get(r->svc[1], &st[1]);
	assert_int_equal(st[1].host, 3);
	assert_true(st[1].remote >= remote + r->n[2]); /* CN 0's requests, served by CN 1 */
	for (i = 0; i < CNS_N; i++) {
		dtxn_worker_destroy(w[i]);
		dtxn_tso_cn_destroy(r->svc[i]);
	}
	dtxn_tso_cn_destroy(r->dead);
	dtxn_db_destroy(db);
	dtxn_fabric_close(f);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counter_place),
		cmocka_unit_test(test_create_checks),
		cmocka_unit_test(test_sequential),
		cmocka_unit_test(test_batched),
		cmocka_unit_test(test_group_one_faa),
		cmocka_unit_test(test_batch_one),
		cmocka_unit_test(test_real_time_order),
		cmocka_unit_test(test_two_lcores),
		cmocka_unit_test(test_device_memory_unit),
		cmocka_unit_test(test_cn_service_cns),
		cmocka_unit_test(test_proxies),
		cmocka_unit_test(test_cn_takeover),
	};
	int rc;

	if (dtxn_unit_eal_init("ut_tso") != 0)
		return 1;
	rc = cmocka_run_group_tests(tests, group_setup, group_teardown);
	dtxn_unit_eal_fini();
	return rc;
}
