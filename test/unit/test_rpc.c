/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/rpc: CN-to-CN messages over the shm fabric's SEND/RECV, three CNs in
 * one process, their workers stepped in turn on this lcore. Replies to a
 * batch to two CNs in one wait; at-least-once delivery when messages are
 * lost (requests or replies dropped by the test aid: resends, duplicates
 * handled, late replies dropped); failure after the retries; asynchronous
 * sends acknowledged in the background; a full ring; argument checks; the
 * pairing of worker k of every CN.
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
#include <rte_memory.h>

#include "dtxn_rpc.h"
#include "unit_eal.h"
#include "ut_txn.h"

#define N_MN 1
#define N_CN 3
#define N_COORDS 4
#define T_ECHO 1
#define T_SILENT 2
#define T_COUNT 3

static struct dtxn_fabric *g_f;
static struct dtxn_db *g_db;
static unsigned g_gid;

static int
group_setup(void **state)
{
	struct dtxn_db_conf dc = {
		.size = sizeof(dc), .protocol = "ford", .isolation = DTXN_ISO_SR,
		.n_mn = N_MN, .n_replicas = 1, .n_coords = 1024, .log_bytes = 4096,
		.addr_cache_entries = 64,
	};
	struct dtxn_table_def kv = { .id = 0, .name = "kv", .value_size = 8, .max_keys = 16 };
	struct dtxn_fabric_conf fc = { .size = sizeof(fc), .driver = "shm", .n_mn = N_MN,
				       .n_cn = N_CN, .socket_id = SOCKET_ID_ANY, .name = "utrpc" };

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

/* ------------------------------------------------------------------ */
/* A small cluster: worker 0 of each CN, each with an rpc              */
/* ------------------------------------------------------------------ */

struct handled {
	unsigned echo;       /* echo requests handled */
	unsigned count;      /* T_COUNT requests handled */
	uint64_t sum;        /* their payloads summed (duplicates included) */
};

struct cl {
	struct dtxn_worker *w[N_CN];
	struct dtxn_rpc *rpc[N_CN];
	struct handled h[N_CN];
};

/* Echo: reply the payload + 1 in each byte, tagged with the CN. */
static int
h_echo(void *arg, uint16_t src, const void *req, uint32_t len, void *resp)
{
	struct handled *h = arg;
	const uint8_t *in = req;
	uint8_t *out = resp;

	h->echo++;
	out[0] = (uint8_t)src;
	for (uint32_t i = 0; i < len && i + 1 < DTXN_RPC_RESP_MAX; i++)
		out[i + 1] = (uint8_t)(in[i] + 1);
	return (int)RTE_MIN(len + 1, (uint32_t)DTXN_RPC_RESP_MAX);
}

/* No reply at all: the sender must time out. */
static int
h_silent(void *arg, uint16_t src, const void *req, uint32_t len, void *resp)
{
	(void)arg;
	(void)src;
	(void)req;
	(void)len;
	(void)resp;
	return -1;
}

static int
h_count(void *arg, uint16_t src, const void *req, uint32_t len, void *resp)
{
	struct handled *h = arg;
	uint64_t v;

	(void)src;
	(void)resp;
	assert_int_equal(len, sizeof(v));
	memcpy(&v, req, sizeof(v));
	h->count++;
	h->sum += v;
	return 0;
}

/*
 * Every test builds worker 0 of every CN and its rpc (a QP to each other
 * CN), so that the fabric's pairing (k-th QP a->b with k-th b->a) holds
 * from one test to the next. @p drop: the drop_every test aid per CN.
 */
static void
cl_up_drop(struct cl *c, const struct dtxn_rpc_conf *conf, const unsigned *drop)
{
	memset(c, 0, sizeof(*c));
	for (unsigned i = 0; i < N_CN; i++) {
		struct dtxn_rpc_conf ci = *conf;

		ci.drop_every = drop != NULL ? drop[i] : 0;
		c->w[i] = dtxn_worker_create(g_db, (uint16_t)(N_MN + i), 0, N_COORDS, SOCKET_ID_ANY);
		assert_non_null(c->w[i]);
		c->rpc[i] = dtxn_rpc_create(c->w[i], &ci);
		assert_non_null(c->rpc[i]);
		assert_int_equal(dtxn_rpc_register(c->rpc[i], T_ECHO, h_echo, &c->h[i]), 0);
		assert_int_equal(dtxn_rpc_register(c->rpc[i], T_SILENT, h_silent, &c->h[i]), 0);
		assert_int_equal(dtxn_rpc_register(c->rpc[i], T_COUNT, h_count, &c->h[i]), 0);
	}
}

static void
cl_up(struct cl *c, const struct dtxn_rpc_conf *conf)
{
	cl_up_drop(c, conf, NULL);
}

/* Steps every worker until none has a coroutine left, then a little more
 * (acknowledgements in flight). */
static void
cl_run(struct cl *c)
{
	unsigned alive, extra = 0;

	do {
		alive = 0;
		for (unsigned i = 0; i < N_CN; i++)
			alive += dtxn_sched_step_lc(dtxn_worker_sched(c->w[i]));
		if (alive == 0)
			extra++;
	} while (alive != 0 || extra < 1000);
}

static void
cl_down(struct cl *c)
{
	for (unsigned i = 0; i < N_CN; i++) {
		/* endpoints go with the coordinators (the caller frees them first) */
		dtxn_rpc_destroy(c->rpc[i]);
		dtxn_worker_destroy(c->w[i]);
	}
}

/* A coordinator of CN 0 and what its body does. */
struct job {
	struct cl *cl;
	struct dtxn_rpc_ep *ep;
	int (*body)(struct job *j);
	int rc;
	unsigned n;              /* body-specific count */
	struct dtxn_rpc_call calls[4];
	uint8_t resp[4][DTXN_RPC_RESP_MAX];
};

static void
job_main(struct dtxn_coord *c, void *arg)
{
	struct job *j = arg;

	(void)c;
	j->rc = j->body(j);
}

static struct dtxn_coord *
job_start(struct cl *c, struct job *j, unsigned cn)
{
	struct dtxn_coord *co = dtxn_coord_create(c->w[cn], g_gid++ % 1024, job_main, j);

	assert_non_null(co);
	j->cl = c;
	j->ep = dtxn_rpc_ep_create(c->rpc[cn], co);
	assert_non_null(j->ep);
	return co;
}

static void
call_set(struct dtxn_rpc_call *call, uint16_t dst, uint8_t type, const void *req, uint32_t len,
	 void *resp)
{
	memset(call, 0, sizeof(*call));
	call->dst_node = dst;
	call->type = type;
	call->req = req;
	call->req_len = len;
	call->resp = resp;
}

/* ------------------------------------------------------------------ */
/* Tests                                                              */
/* ------------------------------------------------------------------ */

static const uint8_t g_payload[5] = { 10, 20, 30, 40, 50 };

/* Two requests to two CNs, one wait; each reply is its CN's. */
static int
body_batch(struct job *j)
{
	uint64_t t0 = dtxn_now_ns();
	int rc;

	for (unsigned k = 0; k < 50; k++) {
		call_set(&j->calls[0], N_MN + 1, T_ECHO, g_payload, sizeof(g_payload), j->resp[0]);
		call_set(&j->calls[1], N_MN + 2, T_ECHO, g_payload, 3, j->resp[1]);
		rc = dtxn_rpc_call_lc(j->ep, j->calls, 2);
		if (rc != 0)
			return rc;
		if (j->calls[0].resp_len != 6 || j->calls[1].resp_len != 4 ||
		    j->resp[0][0] != N_MN || j->resp[0][5] != 51 || j->resp[1][3] != 31)
			return -EBADMSG;
		j->n++;
	}
	(void)t0;
	return 0;
}

static void
test_batch_two_cns(void **state)
{
	struct dtxn_rpc_conf conf = { .size = sizeof(conf) };
	struct dtxn_rpc_stats st;
	struct cl c;
	struct job j = { .body = body_batch };

	(void)state;
	cl_up(&c, &conf);
	job_start(&c, &j, 0);
	cl_run(&c);
	assert_int_equal(j.rc, 0);
	assert_int_equal(j.n, 50);
	assert_int_equal(c.h[1].echo, 50);
	assert_int_equal(c.h[2].echo, 50);
	dtxn_rpc_stats_get(c.rpc[0], &st);
	assert_int_equal(st.req_sent, 100);
	assert_int_equal(st.resp_recv, 100);
	assert_int_equal(st.resent, 0);
	assert_int_equal(dtxn_rpc_ep_inflight(j.ep), 0);
	dtxn_rpc_ep_destroy(j.ep);
	cl_down(&c);
}

/* Lossy transport: every 3rd message of CN 0 and every 4th reply of CN 1
 * vanish; every call still gets its one reply. */
static int
body_many(struct job *j)
{
	for (unsigned k = 0; k < 40; k++) {
		uint8_t b = (uint8_t)k;
		int rc;

		call_set(&j->calls[0], N_MN + 1, T_ECHO, &b, 1, j->resp[0]);
		rc = dtxn_rpc_call_lc(j->ep, j->calls, 1);
		if (rc != 0)
			return rc;
		if (j->calls[0].resp_len != 2 || j->resp[0][1] != (uint8_t)(k + 1))
			return -EBADMSG;
		j->n++;
	}
	return 0;
}

static void
test_lossy(void **state)
{
	struct dtxn_rpc_conf conf = { .size = sizeof(conf), .timeout_ns = 200000,
				      .max_retries = 20 };
	const unsigned drop[N_CN] = { 3, 4, 0 };
	struct dtxn_rpc_stats s0, s1;
	struct cl c;
	struct job j = { .body = body_many };

	(void)state;
	cl_up_drop(&c, &conf, drop);
	job_start(&c, &j, 0);
	cl_run(&c);
	assert_int_equal(j.rc, 0);
	assert_int_equal(j.n, 40);
	dtxn_rpc_stats_get(c.rpc[0], &s0);
	dtxn_rpc_stats_get(c.rpc[1], &s1);
	assert_true(s0.resent > 0);
	assert_true(s0.dropped > 0);
	assert_true(s1.dropped > 0);
	/* a resent request whose first reply was lost is handled twice */
	assert_true(c.h[1].echo > 40);
	assert_int_equal(s0.resp_recv, 40);
	assert_int_equal(s0.failed, 0);
	dtxn_rpc_ep_destroy(j.ep);
	cl_down(&c);
}

/* A CN that never answers: -ETIMEDOUT after max_retries resends. */
static int
body_silent(struct job *j)
{
	call_set(&j->calls[0], N_MN + 2, T_SILENT, g_payload, 2, j->resp[0]);
	call_set(&j->calls[1], N_MN + 1, T_ECHO, g_payload, 2, j->resp[1]);
	(void)dtxn_rpc_call_lc(j->ep, j->calls, 2);
	j->n = (unsigned)(j->calls[1].status == 0);
	return j->calls[0].status;
}

static void
test_timeout(void **state)
{
	struct dtxn_rpc_conf conf = { .size = sizeof(conf), .timeout_ns = 100000,
				      .max_retries = 3 };
	struct dtxn_rpc_stats st;
	struct cl c;
	struct job j = { .body = body_silent };

	(void)state;
	cl_up(&c, &conf);
	job_start(&c, &j, 0);
	cl_run(&c);
	assert_int_equal(j.rc, -ETIMEDOUT);
	assert_int_equal(j.n, 1);  /* the other call of the batch got its reply */
	dtxn_rpc_stats_get(c.rpc[0], &st);
	assert_int_equal(st.failed, 1);
	assert_int_equal(st.resent, 3);
	assert_int_equal(dtxn_rpc_ep_inflight(j.ep), 0);
	dtxn_rpc_ep_destroy(j.ep);
	cl_down(&c);
}

/* Asynchronous sends: more than a ring holds; the coordinator waits for
 * slots only when all are taken; all are delivered and acknowledged. */
static int
body_async(struct job *j)
{
	for (uint64_t k = 1; k <= 3 * DTXN_RPC_SLOTS; k++) {
		int rc = dtxn_rpc_send_lc(j->ep, N_MN + 1, T_COUNT, &k, sizeof(k));

		if (rc != 0)
			return rc;
		if (dtxn_rpc_ep_inflight(j->ep) > DTXN_RPC_SLOTS)
			return -EOVERFLOW;
	}
	return 0;
}

static void
test_async(void **state)
{
	struct dtxn_rpc_conf conf = { .size = sizeof(conf) };
	struct dtxn_rpc_stats st;
	struct cl c;
	struct job j = { .body = body_async };
	const uint64_t n = 3 * DTXN_RPC_SLOTS;

	(void)state;
	cl_up(&c, &conf);
	job_start(&c, &j, 0);
	cl_run(&c);
	assert_int_equal(j.rc, 0);
	assert_int_equal(c.h[1].count, n);
	assert_int_equal(c.h[1].sum, n * (n + 1) / 2);
	dtxn_rpc_stats_get(c.rpc[0], &st);
	assert_int_equal(st.resp_recv, n);
	assert_int_equal(dtxn_rpc_ep_inflight(j.ep), 0);
	dtxn_rpc_ep_destroy(j.ep);
	cl_down(&c);
}

/* Bad arguments: each call's own status; nothing is sent. */
static int
body_bad(struct job *j)
{
	static uint8_t big[DTXN_RPC_REQ_MAX + 1];
	int rc;

	call_set(&j->calls[0], N_MN + 1, T_ECHO, big, sizeof(big), j->resp[0]);
	call_set(&j->calls[1], N_MN, T_ECHO, g_payload, 1, j->resp[1]);      /* itself */
	call_set(&j->calls[2], 0, T_ECHO, g_payload, 1, j->resp[2]);         /* an MN */
	call_set(&j->calls[3], N_MN + 1, DTXN_RPC_TYPES, g_payload, 1, j->resp[3]);
	rc = dtxn_rpc_call_lc(j->ep, j->calls, 4);
	if (rc != -EINVAL || j->calls[0].status != -EINVAL || j->calls[1].status != -ENOTCONN ||
	    j->calls[2].status != -ENOTCONN || j->calls[3].status != -EINVAL)
		return -EPROTO;
	if (dtxn_rpc_send_lc(j->ep, N_MN + 1, T_COUNT, big, sizeof(big)) != -EINVAL ||
	    dtxn_rpc_send_lc(j->ep, N_MN, T_COUNT, g_payload, 1) != -ENOTCONN ||
	    dtxn_rpc_call_lc(NULL, j->calls, 1) != -EINVAL)
		return -EPROTO;
	return 0;
}

static void
test_bad_args(void **state)
{
	struct dtxn_rpc_conf conf = { .size = sizeof(conf) };
	struct dtxn_rpc_stats st;
	struct cl c;
	struct job j = { .body = body_bad };

	(void)state;
	cl_up(&c, &conf);
	assert_int_equal(dtxn_rpc_register(c.rpc[0], T_ECHO, h_echo, NULL), -EEXIST);
	assert_int_equal(dtxn_rpc_register(c.rpc[0], DTXN_RPC_TYPES, h_echo, NULL), -EINVAL);
	assert_int_equal(dtxn_rpc_register(c.rpc[0], 9, NULL, NULL), -EINVAL);
	/* the worker's message hook is taken */
	assert_null(dtxn_rpc_create(c.w[0], &conf));
	assert_int_equal(rte_errno, EINVAL);
	assert_null(dtxn_rpc_create(NULL, &conf));
	job_start(&c, &j, 0);
	cl_run(&c);
	assert_int_equal(j.rc, 0);
	dtxn_rpc_stats_get(c.rpc[0], &st);
	assert_int_equal(st.req_sent, 0);
	dtxn_rpc_ep_destroy(j.ep);
	cl_down(&c);
}

/* A peer marked down fails at once; marked up again (a rejoin), it answers. */
static int
body_down_up(struct job *j)
{
	struct dtxn_rpc *rpc = j->cl->rpc[0];
	int rc;

	if (dtxn_rpc_peer_down_lc(rpc, N_MN + 1) != 0)
		return -EPROTO;
	call_set(&j->calls[0], N_MN + 1, T_ECHO, g_payload, 2, j->resp[0]);
	rc = dtxn_rpc_call_lc(j->ep, j->calls, 1);
	if (rc != -ENOTCONN || dtxn_rpc_send_lc(j->ep, N_MN + 1, T_COUNT, g_payload, 1) != -ENOTCONN)
		return -EPROTO;
	if (dtxn_rpc_peer_up_lc(rpc, N_MN + 1) != 0 || dtxn_rpc_peer_up_lc(rpc, N_MN + 1) != 0)
		return -EPROTO;
	call_set(&j->calls[0], N_MN + 1, T_ECHO, g_payload, 2, j->resp[0]);
	rc = dtxn_rpc_call_lc(j->ep, j->calls, 1);
	if (rc != 0 || j->calls[0].resp_len != 3 || j->resp[0][0] != N_MN || j->resp[0][2] != 21)
		return rc != 0 ? rc : -EBADMSG;
	j->n = 1;
	return 0;
}

static void
test_peer_down_up(void **state)
{
	struct dtxn_rpc_conf conf = { .size = sizeof(conf) };
	struct dtxn_rpc_stats st;
	struct cl c;
	struct job j = { .body = body_down_up };

	(void)state;
	cl_up(&c, &conf);
	assert_int_equal(dtxn_rpc_peer_up_lc(NULL, N_MN + 1), -EINVAL);
	assert_int_equal(dtxn_rpc_peer_up_lc(c.rpc[0], N_MN), -EINVAL); /* itself: no peer */
	job_start(&c, &j, 0);
	cl_run(&c);
	assert_int_equal(j.rc, 0);
	assert_int_equal(j.n, 1);
	dtxn_rpc_stats_get(c.rpc[0], &st);
	assert_int_equal(st.req_sent, 1); /* only the call made while it was up */
	dtxn_rpc_ep_destroy(j.ep);
	cl_down(&c);
}

/* Worker k of one CN talks to worker k of another: with two workers per
 * CN, each worker's requests reach the peer's worker of the same index.
 * (Last: it leaves the fabric's QP counts one ahead for every pair.) */
static int
body_pair(struct job *j)
{
	call_set(&j->calls[0], N_MN + 1, T_ECHO, g_payload, 1, j->resp[0]);
	return dtxn_rpc_call_lc(j->ep, j->calls, 1);
}

static void
test_pairing(void **state)
{
	struct dtxn_rpc_conf conf = { .size = sizeof(conf) };
	struct dtxn_worker *w[N_CN][2];
	struct dtxn_rpc *rpc[N_CN][2];
	struct handled h[N_CN][2];
	struct job j[2];
	unsigned alive, extra = 0;

	(void)state;
	memset(h, 0, sizeof(h));
	memset(j, 0, sizeof(j));
	/* CN by CN, workers in index order, as the app creates them */
	for (unsigned cn = 0; cn < N_CN; cn++)
		for (unsigned k = 0; k < 2; k++) {
			w[cn][k] = dtxn_worker_create(g_db, (uint16_t)(N_MN + cn), k, N_COORDS,
						      SOCKET_ID_ANY);
			assert_non_null(w[cn][k]);
			rpc[cn][k] = dtxn_rpc_create(w[cn][k], &conf);
			assert_non_null(rpc[cn][k]);
			assert_int_equal(dtxn_rpc_register(rpc[cn][k], T_ECHO, h_echo, &h[cn][k]), 0);
		}
	for (unsigned k = 0; k < 2; k++) {
		struct dtxn_coord *co = dtxn_coord_create(w[0][k], g_gid++ % 1024, job_main, &j[k]);

		assert_non_null(co);
		j[k].body = body_pair;
		j[k].ep = dtxn_rpc_ep_create(rpc[0][k], co);
		assert_non_null(j[k].ep);
	}
	do {
		alive = 0;
		for (unsigned cn = 0; cn < N_CN; cn++)
			for (unsigned k = 0; k < 2; k++)
				alive += dtxn_sched_step_lc(dtxn_worker_sched(w[cn][k]));
		extra += alive == 0;
	} while (alive != 0 || extra < 100);
	assert_int_equal(j[0].rc, 0);
	assert_int_equal(j[1].rc, 0);
	assert_int_equal(h[1][0].echo, 1);
	assert_int_equal(h[1][1].echo, 1);
	for (unsigned k = 0; k < 2; k++)
		dtxn_rpc_ep_destroy(j[k].ep);
	for (unsigned cn = 0; cn < N_CN; cn++)
		for (unsigned k = 0; k < 2; k++) {
			dtxn_rpc_destroy(rpc[cn][k]);
			dtxn_worker_destroy(w[cn][k]);
		}
}

/* ------------------------------------------------------------------ */
/* The MN server's deferred replies (dtxn_rpc_srv_defer())            */
/* ------------------------------------------------------------------ */

#define T_LATER 4
#define LATER_N 3

struct later_ctx {
	struct dtxn_rpc_srv *srv;
	struct dtxn_rpc_ep *ep;
	struct dtxn_rpc_srv_later later[LATER_N];
	uint32_t val[LATER_N];
	unsigned n;
	int defer_outside;       /* dtxn_rpc_srv_defer() of a message not in the batch */
	uint64_t resp[LATER_N];
	int rc;
	bool done;
};

/* Keeps every request for later; records its payload. */
static void
h_later(void *arg, struct dtxn_rpc_srv_msg *msgs, unsigned n)
{
	struct later_ctx *x = arg;
	struct dtxn_rpc_srv_msg outside = msgs[0];
	struct dtxn_rpc_srv_later l;

	x->defer_outside = dtxn_rpc_srv_defer(x->srv, &outside, &l);
	for (unsigned i = 0; i < n; i++) {
		msgs[i].resp_len = -1;
		if (x->n >= LATER_N || msgs[i].len != sizeof(uint32_t) ||
		    dtxn_rpc_srv_defer(x->srv, &msgs[i], &x->later[x->n]) != 0)
			continue;
		memcpy(&x->val[x->n++], msgs[i].req, sizeof(uint32_t));
	}
}

static void
co_later(struct dtxn_coord *c, void *arg)
{
	struct later_ctx *x = arg;
	uint8_t resp[LATER_N][DTXN_RPC_RESP_MAX];
	struct dtxn_rpc_call calls[LATER_N];
	uint32_t req[LATER_N];

	(void)c;
	for (unsigned i = 0; i < LATER_N; i++) {
		req[i] = 100 + i;
		memset(&calls[i], 0, sizeof(calls[i]));
		calls[i].dst_node = 0; /* MN 0 */
		calls[i].type = T_LATER;
		calls[i].req = &req[i];
		calls[i].req_len = sizeof(req[i]);
		calls[i].resp = resp[i];
	}
	x->rc = dtxn_rpc_call_lc(x->ep, calls, LATER_N);
	for (unsigned i = 0; i < LATER_N && x->rc == 0; i++) {
		if (calls[i].resp_len != sizeof(uint64_t))
			x->rc = -EBADMSG;
		else
			memcpy(&x->resp[i], resp[i], sizeof(uint64_t));
	}
	x->done = true;
}

static void
test_srv_deferred(void **state)
{
	struct dtxn_db_conf dc = {
		.size = sizeof(dc), .protocol = "ford", .isolation = DTXN_ISO_SR,
		.n_mn = 1, .n_replicas = 1, .n_coords = 1, .log_bytes = 4096,
		.addr_cache_entries = 64,
	};
	struct dtxn_table_def kv = { .id = 0, .name = "kv", .value_size = 8, .max_keys = 16 };
	struct dtxn_fabric_conf fc = { .size = sizeof(fc), .driver = "shm", .n_mn = 1, .n_cn = 1,
				       .socket_id = SOCKET_ID_ANY, .name = "utrpcsrv" };
	struct dtxn_rpc_conf rc_conf = { .size = sizeof(rc_conf),
					 .timeout_ns = UINT64_C(10000000000), .max_retries = 1,
					 .mn_peers = 1 };
	static struct later_ctx x;
	struct dtxn_rpc_srv_conf sc = { .size = sizeof(sc), .mn_node = 0, .workers_per_cn = 1,
					.max_eps = 1, .socket_id = SOCKET_ID_ANY, .fn = h_later,
					.arg = &x };
	struct dtxn_rpc_srv_later zero;
	struct dtxn_worker *w;
	struct dtxn_rpc *rpc;
	struct dtxn_coord *c;
	struct dtxn_fabric *f;
	struct dtxn_db *db;
	bool replied = false;
	uint64_t v;

	(void)state;
	memset(&x, 0, sizeof(x));
	memset(&zero, 0, sizeof(zero));
	ut_db_up(&dc, &kv, &fc, &db, &f);
	x.srv = dtxn_rpc_srv_create(f, &sc);
	assert_non_null(x.srv);
	w = dtxn_worker_create(db, 1, 0, 1, SOCKET_ID_ANY);
	assert_non_null(w);
	rpc = dtxn_rpc_create(w, &rc_conf);
	assert_non_null(rpc);
	c = dtxn_coord_create(w, 0, co_later, &x);
	assert_non_null(c);
	x.ep = dtxn_rpc_ep_create(rpc, c);
	assert_non_null(x.ep);
	for (unsigned k = 0; k < 100000 && !x.done; k++) {
		(void)dtxn_sched_step_lc(dtxn_worker_sched(w));
		(void)dtxn_rpc_srv_poll(x.srv);
		if (x.n == LATER_N && !replied) {
			/* nothing was answered by the poll: the caller still waits */
			assert_false(x.done);
			assert_int_equal(dtxn_rpc_srv_reply_later(x.srv, &zero, &v, sizeof(v)),
					 -EINVAL);
			assert_int_equal(dtxn_rpc_srv_reply_later(x.srv, &x.later[0], &v,
								  DTXN_RPC_RESP_MAX + 1), -EINVAL);
			assert_int_equal(dtxn_rpc_srv_reply_later(NULL, &x.later[0], &v, sizeof(v)),
					 -EINVAL);
			/* answer in reverse order: each reply finds its own slot */
			for (unsigned i = LATER_N; i-- > 0;) {
				v = (uint64_t)x.val[i] * 10;
				assert_int_equal(dtxn_rpc_srv_reply_later(x.srv, &x.later[i], &v,
									  sizeof(v)), 0);
			}
			replied = true;
		}
	}
	assert_true(x.done);
	assert_int_equal(x.rc, 0);
	assert_int_equal(x.defer_outside, -EINVAL);
	for (unsigned i = 0; i < LATER_N; i++)
		assert_int_equal(x.resp[i], (100 + i) * 10);
	dtxn_rpc_ep_destroy(x.ep);
	dtxn_rpc_destroy(rpc);
	dtxn_worker_destroy(w);
	dtxn_rpc_srv_destroy(x.srv);
	dtxn_db_destroy(db);
	dtxn_fabric_close(f);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_batch_two_cns),
		cmocka_unit_test(test_lossy),
		cmocka_unit_test(test_timeout),
		cmocka_unit_test(test_async),
		cmocka_unit_test(test_bad_args),
		cmocka_unit_test(test_peer_down_up),
		cmocka_unit_test(test_pairing),
		cmocka_unit_test(test_srv_deferred),
	};
	int rc;

	if (dtxn_unit_eal_init("ut_rpc") != 0)
		return 1;
	rc = cmocka_run_group_tests(tests, group_setup, group_teardown);
	dtxn_unit_eal_fini();
	return rc;
}
