/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/rpc's RRPC rings (rrpc_private.h, rrpc_bucket.c): the bucket format
 * and its two length labels. Filling and sealing; a torn bucket (head
 * label landed, tail not yet) is not delivered until the tail lands; a
 * bucket of another lap is not taken; impossible lengths are refused;
 * messages come out in order and a malformed count stops the parse. Then
 * through the shm fabric: three buckets posted as one chain of three
 * WRITEs (one doorbell) into a ring in MN 0's memory, and a ring of four
 * buckets that wraps over three laps. Then the transport (dtxn_rrpc.h):
 * three CNs, worker 0 of each, stepped in turn on this lcore: batches of
 * echo calls to two CNs from several coordinators (replies match, the
 * messages of coordinators that call together share buckets and
 * doorbells), enough traffic to wrap the 8-bucket rings many times (credit
 * flow), and argument checks. Last, RRPC to an MN (rings in MN 0's
 * message area, its service dtxn_rrpc_mn): batches of two calls from four
 * coordinators (several requests per bucket both ways, the MN's handler
 * sees them as one batch), 16-bucket rings wrapped many times; a bucket of
 * three requests landing in every prefix is not taken until whole, then
 * answered in one bucket; argument checks.
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

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_memory.h>

#include "dtxn_fabric.h"
#include "dtxn_sched.h"
#include "dtxn_txn_driver.h"
#include "dtxn_rrpc.h"
#include "rrpc_private.h"
#include "unit_eal.h"

/* What a parse delivered: message i's seq, type and first payload byte. */
struct seen {
	unsigned n;
	uint32_t seq[64];
	uint8_t type[64];
	uint8_t first[64];
	uint16_t len[64];
};

static void
on_msg(void *arg, const struct rrpc_msg_hdr *h, const uint8_t *payload)
{
	struct seen *s = arg;

	assert_true(s->n < 64);
	s->seq[s->n] = h->seq;
	s->type[s->n] = h->type;
	s->len[s->n] = h->len;
	s->first[s->n] = h->len != 0 ? payload[0] : 0;
	s->n++;
}

static void
fill(struct rrpc_bucket *b, unsigned n, uint32_t seq0, uint16_t len)
{
	uint8_t payload[RRPC_MSG_PAYLOAD_MAX];

	rrpc_bucket_reset(b);
	for (unsigned i = 0; i < n; i++) {
		struct rrpc_msg_hdr h = { .len = len, .kind = RRPC_KIND_REQ,
					  .type = (uint8_t)(i + 1), .seq = seq0 + i };

		memset(payload, (int)(0x40 + i), sizeof(payload));
		assert_int_equal(rrpc_bucket_add(b, &h, payload), 0);
	}
}

static void
test_labels(void **state)
{
	static uint8_t ring[RRPC_BUCKET_BYTES] __attribute__((aligned(8)));
	struct rrpc_bucket b;
	struct seen s;
	uint32_t len, head, tail;

	(void)state;
	fill(&b, 3, 100, 20);
	len = rrpc_bucket_seal(&b, 7);
	/* 8 header + 3 x (12 + 20 -> 32) + 8 trailer */
	assert_int_equal(len, 8 + 3 * 32 + 8);
	memcpy(&head, b.data, 4);
	memcpy(&tail, b.data + len - 4, 4);
	assert_int_equal(head, (7u << 16) | len);
	assert_int_equal(tail, head);
	memcpy(ring, b.data, len);
	assert_int_equal(rrpc_bucket_ready(ring, 7), (int)len);
	memset(&s, 0, sizeof(s));
	assert_int_equal(rrpc_bucket_parse(ring, len, on_msg, &s), 3);
	for (unsigned i = 0; i < 3; i++) {
		assert_int_equal(s.seq[i], 100 + i);
		assert_int_equal(s.type[i], i + 1);
		assert_int_equal(s.len[i], 20);
		assert_int_equal(s.first[i], 0x40 + i);
	}
	/* an empty bucket is legal (a flush with nothing but labels) */
	rrpc_bucket_reset(&b);
	assert_int_equal(rrpc_bucket_seal(&b, 1), RRPC_BUCKET_MIN);
	/* consumed: zeroed, reads empty */
	rrpc_bucket_clear(ring, len);
	assert_int_equal(rrpc_bucket_ready(ring, 7), 0);
}

static void
test_torn_write(void **state)
{
	static uint8_t ring[RRPC_BUCKET_BYTES] __attribute__((aligned(8)));
	struct rrpc_bucket b;
	struct seen s;
	uint32_t len;

	(void)state;
	memset(ring, 0, sizeof(ring));
	fill(&b, 5, 1, 60);
	len = rrpc_bucket_seal(&b, 3);
	/* the WRITE lands in address order: every prefix short of the tail
	 * label is torn and must not be delivered */
	for (uint32_t cut = 4; cut < len; cut += 4) {
		memcpy(ring, b.data, cut);
		assert_int_equal(rrpc_bucket_ready(ring, 3), 0);
	}
	memcpy(ring, b.data, len);
	assert_int_equal(rrpc_bucket_ready(ring, 3), (int)len);
	/* a tail that does not match the head (another batch's) is torn too */
	ring[len - 4] ^= 1;
	assert_int_equal(rrpc_bucket_ready(ring, 3), 0);
	ring[len - 4] ^= 1;
	/* wrong lap: the same bytes are not bucket 3 + 65536 / 4 ... */
	assert_int_equal(rrpc_bucket_ready(ring, 4), 0);
	assert_int_equal(rrpc_bucket_ready(ring, 3 + 4), 0);
	/* ... but seq is 16 bits: bucket 3 + 65536 has the same label */
	assert_int_equal(rrpc_bucket_ready(ring, 3 + 65536), (int)len);
	memset(&s, 0, sizeof(s));
	assert_int_equal(rrpc_bucket_parse(ring, len, on_msg, &s), 5);
}

static void
test_bad_buckets(void **state)
{
	static uint8_t ring[RRPC_BUCKET_BYTES] __attribute__((aligned(8)));
	struct rrpc_msg_hdr h = { .len = RRPC_MSG_PAYLOAD_MAX + 1 };
	struct rrpc_bucket b;
	struct seen s;
	uint32_t label, len;
	uint16_t n;

	(void)state;
	rrpc_bucket_reset(&b);
	assert_int_equal(rrpc_bucket_add(&b, &h, ring), -EINVAL);
	h.len = 4;
	assert_int_equal(rrpc_bucket_add(&b, &h, NULL), -EINVAL);
	/* the largest message fills a bucket alone */
	h.len = RRPC_MSG_PAYLOAD_MAX;
	assert_int_equal(rrpc_bucket_add(&b, &h, ring), 0);
	h.len = 0;
	assert_int_equal(rrpc_bucket_add(&b, &h, NULL), -ENOSPC);
	assert_int_equal(rrpc_bucket_seal(&b, 0), RRPC_BUCKET_BYTES);
	/* impossible lengths with the right seq: refused */
	memset(ring, 0, sizeof(ring));
	label = (9u << 16) | 8u;
	memcpy(ring, &label, 4);
	assert_int_equal(rrpc_bucket_ready(ring, 9), -EBADMSG);
	label = (9u << 16) | 20u;
	memcpy(ring, &label, 4);
	assert_int_equal(rrpc_bucket_ready(ring, 9), -EBADMSG);
	label = (9u << 16) | 1024u;
	memcpy(ring, &label, 4);
	assert_int_equal(rrpc_bucket_ready(ring, 9), -EBADMSG);
	/* a count larger than the messages present: parse stops, -EBADMSG */
	fill(&b, 2, 1, 8);
	len = rrpc_bucket_seal(&b, 0);
	memcpy(ring, b.data, len);
	n = 3;
	memcpy(ring + 4, &n, 2);
	memset(&s, 0, sizeof(s));
	assert_int_equal(rrpc_bucket_parse(ring, len, on_msg, &s), -EBADMSG);
	assert_int_equal(s.n, 2);
	/* a message length past the bucket: refused, nothing read past len */
	fill(&b, 1, 1, 8);
	len = rrpc_bucket_seal(&b, 0);
	memcpy(ring, b.data, len);
	h.len = 200;
	memcpy(ring + RRPC_BUCKET_HDR, &h, 2);
	memset(&s, 0, sizeof(s));
	assert_int_equal(rrpc_bucket_parse(ring, len, on_msg, &s), -EBADMSG);
	assert_int_equal(s.n, 0);
}

/* ------------------------------------------------------------------ */
/* Through the fabric: chained buckets and a ring that wraps          */
/* ------------------------------------------------------------------ */

#define RING_BUCKETS 4

static struct dtxn_fabric *g_f;
static struct dtxn_cq *g_cq;
static struct dtxn_qp *g_qp;

static int
fab_setup(void **state)
{
	struct dtxn_fabric_conf fc = { .size = sizeof(fc), .driver = "shm", .n_mn = 1,
				       .n_cn = 1, .mn_region_size = 1u << 16,
				       .socket_id = SOCKET_ID_ANY, .name = "utrrpc" };

	(void)state;
	dtxn_nic_model_none(&fc.nic);
	g_f = dtxn_fabric_open(&fc);
	if (g_f == NULL)
		return -1;
	g_cq = dtxn_cq_create(g_f, SOCKET_ID_ANY, 64);
	g_qp = g_cq != NULL ? dtxn_qp_create(g_f, g_cq, 1, 0, 64) : NULL;
	return g_qp != NULL ? 0 : -1;
}

static int
fab_teardown(void **state)
{
	(void)state;
	dtxn_qp_destroy(g_qp);
	dtxn_cq_destroy(g_cq);
	dtxn_fabric_close(g_f);
	return 0;
}

/* The receiver's ring: RING_BUCKETS buckets at offset 4096 of MN 0. */
static uint8_t *
ring_mem(uint32_t idx)
{
	uint8_t *base = dtxn_fabric_mn_base(g_f, 0);

	return base + 4096 + (idx % RING_BUCKETS) * RRPC_BUCKET_BYTES;
}

/* Posts buckets [first, first + n) as one chain (one doorbell) and waits. */
static void
post_chain(struct rrpc_bucket *b, uint32_t first, unsigned n)
{
	struct dtxn_wr wr[RING_BUCKETS];
	struct dtxn_cqe cqe;

	memset(wr, 0, sizeof(wr));
	for (unsigned i = 0; i < n; i++) {
		uint32_t idx = first + i;

		wr[i].opcode = DTXN_WR_WRITE;
		wr[i].local = b[i].data;
		wr[i].len = rrpc_bucket_seal(&b[i], idx);
		wr[i].raddr = DTXN_RADDR(0, 4096 + (idx % RING_BUCKETS) * RRPC_BUCKET_BYTES);
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
	}
	wr[n - 1].flags = DTXN_WR_F_SIGNALED;
	wr[n - 1].wr_id = 77;
	assert_int_equal(dtxn_qp_post(g_qp, wr), 0);
	while (dtxn_cq_poll(g_cq, &cqe, 1) == 0)
		;
	assert_int_equal(cqe.status, DTXN_WC_SUCCESS);
	assert_int_equal(cqe.wr_id, 77);
}

/* Consumes bucket @p idx: checks it holds @p n messages of seq0.., clears it. */
static void
consume(uint32_t idx, unsigned n, uint32_t seq0)
{
	struct seen s;
	int len = rrpc_bucket_ready(ring_mem(idx), idx);

	assert_true(len > 0);
	memset(&s, 0, sizeof(s));
	assert_int_equal(rrpc_bucket_parse(ring_mem(idx), (uint32_t)len, on_msg, &s), (int)n);
	for (unsigned i = 0; i < n; i++)
		assert_int_equal(s.seq[i], seq0 + i);
	rrpc_bucket_clear(ring_mem(idx), (uint32_t)len);
}

static void
test_chain_one_doorbell(void **state)
{
	struct rrpc_bucket b[3];
	const struct dtxn_fabric_counters *cnt = dtxn_qp_counters(g_qp);
	uint64_t writes0 = cnt->ops[DTXN_WR_WRITE];

	(void)state;
	/* 3 batches of 10 messages, 14 bytes each: one bucket each */
	for (unsigned i = 0; i < 3; i++)
		fill(&b[i], 10, 1000 + 10 * i, 14);
	post_chain(b, 0, 3);
	assert_int_equal(cnt->ops[DTXN_WR_WRITE] - writes0, 3); /* a WRITE per bucket */
	for (unsigned i = 0; i < 3; i++)
		consume(i, 10, 1000 + 10 * i);
	/* the slot after them is empty */
	assert_int_equal(rrpc_bucket_ready(ring_mem(3), 3), 0);
}

static void
test_wrap(void **state)
{
	struct rrpc_bucket b[2];
	uint32_t idx = 3, seq = 1; /* test_chain_one_doorbell used 0..2 */

	(void)state;
	/* 3 laps of a 4-bucket ring, 2 buckets per doorbell */
	for (unsigned round = 0; round < 6; round++) {
		fill(&b[0], 3, seq, 100);
		fill(&b[1], 1, seq + 3, 400);
		post_chain(b, idx, 2);
		/* the bucket the next lap will reuse still holds the old lap's
		 * bytes until consumed: it is not taken as the new one */
		assert_int_equal(rrpc_bucket_ready(ring_mem(idx), idx + RING_BUCKETS), 0);
		consume(idx, 3, seq);
		consume(idx + 1, 1, seq + 3);
		idx += 2;
		seq += 4;
	}
	assert_int_equal(idx, 3 + 12);
}

/* ------------------------------------------------------------------ */
/* The transport: three CNs                                           */
/* ------------------------------------------------------------------ */

#define N_CN 3
#define N_COORDS 4
#define T_ECHO 1
#define ROUNDS 200

static struct dtxn_db *g_db;
static struct dtxn_fabric *g_cf;

/*
 * A cluster of 1 MN and N_CN CNs on shm (fabric @p name): a FORD db with one
 * table, and, with @p msg_bytes, a message area of that size in the MN region
 * (what a protocol's dtxn_cc_ops.mn_msg_bytes asks for; FORD asks for none).
 */
static int
cl_open(const char *name, uint64_t msg_bytes, struct dtxn_db **db, struct dtxn_fabric **f)
{
	struct dtxn_db_conf dc = {
		.size = sizeof(dc), .protocol = "ford", .isolation = DTXN_ISO_SR,
		.n_mn = 1, .n_replicas = 1, .n_coords = 64, .log_bytes = 4096,
		.addr_cache_entries = 64,
	};
	struct dtxn_table_def kv = { .id = 0, .name = "kv", .value_size = 8, .max_keys = 16 };
	struct dtxn_fabric_conf fc = { .size = sizeof(fc), .driver = "shm", .n_mn = 1,
				       .n_cn = N_CN, .socket_id = SOCKET_ID_ANY, .name = name };
	uint64_t region;

	*db = dtxn_db_create(&dc);
	if (*db == NULL || dtxn_db_add_table(*db, &kv) != 0 || dtxn_db_layout(*db, &region) != 0)
		return -1;
	if (msg_bytes != 0) {
		(*db)->cat.msg_bytes = msg_bytes;
		if (dtxn_catalog_layout(&(*db)->cat, dc.n_coords, dc.log_bytes) != 0)
			return -1;
	}
	fc.mn_region_size = (*db)->cat.region_size;
	dtxn_nic_model_none(&fc.nic);
	*f = dtxn_fabric_open(&fc);
	return *f != NULL && dtxn_db_attach(*db, *f) == 0 ? 0 : -1;
}

static int
cl_setup(void **state)
{
	(void)state;
	return cl_open("utrrpccl", 0, &g_db, &g_cf);
}

static int
cl_teardown(void **state)
{
	(void)state;
	dtxn_db_destroy(g_db);
	dtxn_fabric_close(g_cf);
	return 0;
}

/* Echo: the CN's id, then the payload + 1 in each byte. */
static int
h_echo(void *arg, uint16_t src, const void *req, uint32_t len, void *resp)
{
	unsigned *handled = arg;
	const uint8_t *in = req;
	uint8_t *out = resp;

	(*handled)++;
	out[0] = (uint8_t)src;
	for (uint32_t i = 0; i < len && i + 1 < DTXN_RPC_RESP_MAX; i++)
		out[i + 1] = (uint8_t)(in[i] + 1);
	return (int)RTE_MIN(len + 1, (uint32_t)DTXN_RPC_RESP_MAX);
}

struct rjob {
	struct dtxn_rrpc_ep *ep;
	unsigned idx;
	unsigned done;
	int rc;
};

static void
rjob_main(struct dtxn_coord *c, void *arg)
{
	struct rjob *j = arg;
	uint8_t req[40], resp[2][DTXN_RPC_RESP_MAX];
	struct dtxn_rpc_call calls[2];

	(void)c;
	for (unsigned k = 0; k < ROUNDS; k++) {
		uint32_t len = 1 + (j->idx * 7 + k) % sizeof(req);

		memset(req, (int)(j->idx + k), sizeof(req));
		for (unsigned i = 0; i < 2; i++) {
			memset(&calls[i], 0, sizeof(calls[i]));
			calls[i].dst_node = (uint16_t)(2 + i); /* CNs 2 and 3 */
			calls[i].type = T_ECHO;
			calls[i].req = req;
			calls[i].req_len = len;
			calls[i].resp = resp[i];
		}
		j->rc = dtxn_rrpc_call_lc(j->ep, calls, 2);
		if (j->rc != 0)
			return;
		for (unsigned i = 0; i < 2; i++)
			if (calls[i].resp_len != len + 1 || resp[i][0] != 1 ||
			    resp[i][len] != (uint8_t)(j->idx + k + 1)) {
				j->rc = -EBADMSG;
				return;
			}
		j->done++;
	}
}

/* A worker and its rrpc on each CN (worker 0 of CNs 1..N_CN). */
static void
cl_up(struct dtxn_rrpc_domain *d, struct dtxn_worker **w, struct dtxn_rrpc **r)
{
	for (unsigned i = 0; i < N_CN; i++) {
		w[i] = dtxn_worker_create(g_db, (uint16_t)(1 + i), 0, N_COORDS, SOCKET_ID_ANY);
		assert_non_null(w[i]);
		r[i] = dtxn_rrpc_create(d, w[i]);
		assert_non_null(r[i]);
	}
}

/* Coordinator @p i of CN 1 running @p fn(@p arg), and its endpoint. */
static struct dtxn_rrpc_ep *
cl_ep(struct dtxn_worker *w0, struct dtxn_rrpc *r0, unsigned i, dtxn_coord_fn fn, void *arg)
{
	struct dtxn_coord *co = dtxn_coord_create(w0, i, fn, arg);
	struct dtxn_rrpc_ep *ep;

	assert_non_null(co);
	ep = dtxn_rrpc_ep_create(r0, co);
	assert_non_null(ep);
	return ep;
}

/* Steps every CN's worker in turn until all are quiet (@p after: once per worker step). */
static void
cl_run(struct dtxn_worker **w, void (*after)(void))
{
	unsigned alive, extra = 0;

	do {
		alive = 0;
		for (unsigned i = 0; i < N_CN; i++) {
			alive += dtxn_sched_step_lc(dtxn_worker_sched(w[i]));
			if (after != NULL)
				after();
		}
		extra += alive == 0;
	} while (alive != 0 || extra < 100);
}

static void
cl_down(struct dtxn_rrpc_domain *d, struct dtxn_worker **w, struct dtxn_rrpc **r)
{
	for (unsigned i = 0; i < N_CN; i++) {
		dtxn_rrpc_destroy(r[i]);
		dtxn_worker_destroy(w[i]);
	}
	dtxn_rrpc_domain_destroy(d);
}

static void
test_transport_echo(void **state)
{
	struct dtxn_rrpc_domain_conf dcf = { .size = sizeof(dcf), .max_workers = 1, .buckets = 16,
					     .socket_id = SOCKET_ID_ANY };
	struct dtxn_rrpc_domain *d;
	struct dtxn_worker *w[N_CN];
	struct dtxn_rrpc *r[N_CN];
	struct dtxn_rrpc_stats st0, st1, st2;
	static struct rjob jobs[N_COORDS];
	unsigned handled[N_CN] = { 0 };

	(void)state;
	d = dtxn_rrpc_domain_create(g_cf, &dcf);
	assert_non_null(d);
	cl_up(d, w, r);
	for (unsigned i = 0; i < N_CN; i++)
		assert_int_equal(dtxn_rrpc_register(r[i], T_ECHO, h_echo, &handled[i]), 0);
	assert_int_equal(dtxn_rrpc_register(r[0], T_ECHO, h_echo, NULL), -EEXIST);
	assert_null(dtxn_rrpc_create(d, w[0]));
	assert_int_equal(rte_errno, EEXIST);
	for (unsigned i = 0; i < N_COORDS; i++) {
		memset(&jobs[i], 0, sizeof(jobs[i]));
		jobs[i].idx = i;
		jobs[i].ep = cl_ep(w[0], r[0], i, rjob_main, &jobs[i]);
	}
	cl_run(w, NULL);
	for (unsigned i = 0; i < N_COORDS; i++) {
		assert_int_equal(jobs[i].rc, 0);
		assert_int_equal(jobs[i].done, ROUNDS);
	}
	assert_int_equal(handled[1], N_COORDS * ROUNDS);
	assert_int_equal(handled[2], N_COORDS * ROUNDS);
	dtxn_rrpc_stats_get(r[0], &st0);
	dtxn_rrpc_stats_get(r[1], &st1);
	dtxn_rrpc_stats_get(r[2], &st2);
	print_message("rrpc: %" PRIu64 " requests in %" PRIu64 " buckets, %" PRIu64
		      " doorbells; replies from CN 2: %" PRIu64 " buckets; %" PRIu64
		      " + %" PRIu64 " + %" PRIu64 " credit WRITEs\n",
		      st0.req_sent, st0.buckets, st0.doorbells, st1.buckets, st0.credits,
		      st1.credits, st2.credits);
	assert_int_equal(st0.req_sent, 2 * N_COORDS * ROUNDS);
	assert_int_equal(st0.resp_recv, 2 * N_COORDS * ROUNDS);
	assert_int_equal(st0.bad + st1.bad + st2.bad, 0);
	/* the coordinators call together: their requests share buckets and doorbells */
	assert_true(st0.buckets < st0.req_sent);
	assert_true(st0.doorbells <= st0.buckets);
	assert_true(st1.buckets < st1.req_handled);
	/* 800 buckets each way through 16-bucket rings: wrapped, credit flowed */
	assert_true(st1.buckets > 16);
	for (unsigned i = 0; i < N_COORDS; i++)
		dtxn_rrpc_ep_destroy(jobs[i].ep);
	cl_down(d, w, r);
}

/* ------------------------------------------------------------------ */
/* Mode (c), zero-copy: replies larger than a bucket WRITTen in place  */
/* ------------------------------------------------------------------ */

#define T_ZC 2
#define ZC_BYTES 2048
#define ZC_LEN 1500          /* > one 512 B bucket */
#define ZC_ROUNDS 50

/* The reply: ZC_LEN bytes, byte i = seed + i, the seed being the request's first byte. */
static int
h_zc(void *arg, uint16_t src, const void *req, uint32_t len, void *out, uint32_t cap)
{
	unsigned *handled = arg;
	uint8_t seed = len > 0 ? *(const uint8_t *)req : 0;

	(void)src;
	(*handled)++;
	if (cap < ZC_LEN)
		return -1;
	for (uint32_t i = 0; i < ZC_LEN; i++)
		((uint8_t *)out)[i] = (uint8_t)(seed + i);
	return ZC_LEN;
}

struct zjob {
	struct dtxn_rrpc_ep *ep;
	unsigned idx, done;
	int rc;
	/* the torn case (job 0 only): its slot-0 buffer, and the last call's status */
	const uint8_t *buf;
	int torn_rc;
	bool torn_phase;
};

static volatile int g_torn_step;   /* 1: the server handled the torn request */

static int
h_zc_torn(void *arg, uint16_t src, const void *req, uint32_t len, void *out, uint32_t cap)
{
	int n = h_zc(arg, src, req, len, out, cap);

	g_torn_step = 1;
	return n;
}

static struct zjob g_zjobs[N_COORDS];

/* After each worker step: once the server handled the torn request (it
 * WROTE the data and queued the completion), the data's last byte "did not
 * land" before the requester looks. */
static void
zc_tear(void)
{
	if (g_torn_step == 1) {
		((uint8_t *)(uintptr_t)g_zjobs[0].buf)[ZC_LEN - 1] ^= 0xff;
		g_torn_step = 2;
	}
}

static int
zc_check(const struct dtxn_rrpc_zc_call *z, uint8_t seed)
{
	const uint8_t *d = z->data;

	if (z->status != 0 || z->data_len != ZC_LEN || d == NULL)
		return -EBADMSG;
	for (uint32_t i = 0; i < ZC_LEN; i++)
		if (d[i] != (uint8_t)(seed + i))
			return -EBADMSG;
	return 0;
}

static void
zjob_main(struct dtxn_coord *c, void *arg)
{
	struct zjob *j = arg;
	struct dtxn_rrpc_zc_call z[2];
	uint8_t seed;

	(void)c;
	for (unsigned k = 0; k < ZC_ROUNDS; k++) {
		seed = (uint8_t)(j->idx * 31 + k);
		for (unsigned i = 0; i < 2; i++) {
			memset(&z[i], 0, sizeof(z[i]));
			z[i].dst_node = (uint16_t)(2 + i); /* CNs 2 and 3 */
			z[i].type = T_ZC;
			z[i].req = &seed;
			z[i].req_len = 1;
		}
		j->rc = dtxn_rrpc_call_zc_lc(j->ep, z, 2);
		if (j->rc == 0)
			j->rc = zc_check(&z[0], seed) != 0 ? -EBADMSG : zc_check(&z[1], seed);
		if (j->rc != 0)
			return;
		if (j->idx == 0)
			j->buf = z[0].data; /* one call to CN 2 uses slot 0: always this buffer */
		j->done++;
	}
	if (j->idx != 0)
		return;
	/* torn: the test flips a byte of the landed data before this side polls */
	j->torn_phase = true;
	memset(&z[0], 0, sizeof(z[0]));
	z[0].dst_node = 2;
	z[0].type = T_ZC + 1;
	z[0].req = &seed;
	z[0].req_len = 1;
	j->torn_rc = dtxn_rrpc_call_zc_lc(j->ep, z, 1);
}

static void
test_transport_zc(void **state)
{
	struct dtxn_rrpc_domain_conf dcf = { .size = sizeof(dcf), .max_workers = 1, .buckets = 16,
					     .socket_id = SOCKET_ID_ANY, .zc_bytes = ZC_BYTES,
					     .zc_eps = N_COORDS };
	struct dtxn_rrpc_domain *d;
	struct dtxn_worker *w[N_CN];
	struct dtxn_rrpc *r[N_CN];
	struct dtxn_rrpc_stats st0, st1, st2;
	struct zjob *jobs = g_zjobs;
	unsigned handled[N_CN] = { 0 };

	(void)state;
	/* bad zero-copy sizes */
	dcf.zc_bytes = 100;
	assert_null(dtxn_rrpc_domain_create(g_cf, &dcf));
	dcf.zc_bytes = ZC_BYTES;
	dcf.zc_eps = 0;
	assert_null(dtxn_rrpc_domain_create(g_cf, &dcf));
	dcf.zc_eps = N_COORDS;
	d = dtxn_rrpc_domain_create(g_cf, &dcf);
	assert_non_null(d);
	g_torn_step = 0;
	cl_up(d, w, r);
	for (unsigned i = 0; i < N_CN; i++) {
		assert_int_equal(dtxn_rrpc_register_zc(r[i], T_ZC, h_zc, &handled[i]), 0);
		assert_int_equal(dtxn_rrpc_register_zc(r[i], T_ZC + 1, h_zc_torn, &handled[i]), 0);
	}
	assert_int_equal(dtxn_rrpc_register_zc(r[0], T_ZC, h_zc, NULL), -EEXIST);
	for (unsigned i = 0; i < N_COORDS; i++) {
		memset(&jobs[i], 0, sizeof(jobs[i]));
		jobs[i].idx = i;
		jobs[i].ep = cl_ep(w[0], r[0], i, zjob_main, &jobs[i]);
	}
	cl_run(w, zc_tear);
	for (unsigned i = 0; i < N_COORDS; i++) {
		assert_int_equal(jobs[i].rc, 0);
		assert_int_equal(jobs[i].done, ZC_ROUNDS);
	}
	assert_int_equal(g_torn_step, 2);
	assert_int_equal(jobs[0].torn_rc, -EIO);
	assert_int_equal(handled[1], N_COORDS * ZC_ROUNDS + 1);
	assert_int_equal(handled[2], N_COORDS * ZC_ROUNDS);
	dtxn_rrpc_stats_get(r[0], &st0);
	dtxn_rrpc_stats_get(r[1], &st1);
	dtxn_rrpc_stats_get(r[2], &st2);
	print_message("rrpc zero-copy: %" PRIu64 " calls, %" PRIu64 " data WRITEs (%" PRIu64
		      " B) from CN 2; replies from CN 2 in %" PRIu64 " buckets\n",
		      st0.req_sent, st1.zc_writes, st1.zc_bytes, st1.buckets);
	assert_int_equal(st0.req_sent, 2 * N_COORDS * ZC_ROUNDS + 1);
	assert_int_equal(st0.resp_recv, st0.req_sent);
	assert_int_equal(st0.zc_torn, 1);
	assert_int_equal(st0.bad + st1.bad + st2.bad, 0);
	/* every reply's data went by one WRITE into the caller's buffer, not through buckets */
	assert_int_equal(st1.zc_writes, N_COORDS * ZC_ROUNDS + 1);
	assert_int_equal(st1.zc_bytes, (uint64_t)ZC_LEN * st1.zc_writes);
	assert_true(st1.buckets < st1.zc_writes);
	for (unsigned i = 0; i < N_COORDS; i++)
		dtxn_rrpc_ep_destroy(jobs[i].ep);
	cl_down(d, w, r);
}

static void
test_transport_args(void **state)
{
	struct dtxn_rrpc_domain_conf dcf = { .size = sizeof(dcf), .max_workers = 1, .buckets = 8,
					     .socket_id = SOCKET_ID_ANY };
	struct dtxn_rrpc_domain *d;
	struct dtxn_worker *w;

	(void)state;
	assert_null(dtxn_rrpc_domain_create(NULL, &dcf));
	assert_int_equal(rte_errno, EINVAL);
	dcf.buckets = 12;
	assert_null(dtxn_rrpc_domain_create(g_cf, &dcf));
	dcf.buckets = 8;
	dcf.max_workers = 0;
	assert_null(dtxn_rrpc_domain_create(g_cf, &dcf));
	dcf.max_workers = 1;
	d = dtxn_rrpc_domain_create(g_cf, &dcf);
	assert_non_null(d);
	/* a second domain would register the same CN memory */
	assert_null(dtxn_rrpc_domain_create(g_cf, &dcf));
	assert_int_equal(rte_errno, EEXIST);
	/* 8 buckets cannot hold the replies of 4 coordinators x 8 slots */
	w = dtxn_worker_create(g_db, 1, 0, N_COORDS, SOCKET_ID_ANY);
	assert_non_null(w);
	assert_null(dtxn_rrpc_create(d, w));
	assert_int_equal(rte_errno, EINVAL);
	dtxn_worker_destroy(w);
	/* worker index past max_workers */
	w = dtxn_worker_create(g_db, 1, 1, 1, SOCKET_ID_ANY);
	assert_non_null(w);
	assert_null(dtxn_rrpc_create(d, w));
	dtxn_worker_destroy(w);
	assert_int_equal(dtxn_rrpc_call_lc(NULL, NULL, 0), -EINVAL);
	assert_int_equal(dtxn_rrpc_register(NULL, 0, h_echo, NULL), -EINVAL);
	dtxn_rrpc_domain_destroy(d);
	/* one-sided WRs to a CN are refused again once its memory is gone */
	{
		uint64_t v = 0;
		struct dtxn_wr wr = { .opcode = DTXN_WR_WRITE, .flags = DTXN_WR_F_INLINE,
				      .local = &v, .len = 8, .raddr = DTXN_RADDR(2, 64) };
		struct dtxn_cq *cq = dtxn_cq_create(g_cf, SOCKET_ID_ANY, 64);
		struct dtxn_qp *qp = dtxn_qp_create(g_cf, cq, 1, 2, 64);

		assert_non_null(qp);
		assert_int_equal(dtxn_qp_post(qp, &wr), -EINVAL);
		dtxn_qp_destroy(qp);
		dtxn_cq_destroy(cq);
	}
}

/* ------------------------------------------------------------------ */
/* RRPC to the MNs: rings in MN 0's message area, its service         */
/* ------------------------------------------------------------------ */

#define MN_BUCKETS 16
#define MN_ROUNDS 100

static struct dtxn_db *g_mdb;
static struct dtxn_fabric *g_mf;

/* The cluster, its MN region with a message area for N_CN x 1 workers. */
static int
mn_setup(void **state)
{
	uint64_t bytes = dtxn_rrpc_mn_area_bytes(N_CN, 1, MN_BUCKETS);

	(void)state;
	return bytes != 0 ? cl_open("utrrpcmn", bytes, &g_mdb, &g_mf) : -1;
}

static int
mn_teardown(void **state)
{
	(void)state;
	dtxn_db_destroy(g_mdb);
	dtxn_fabric_close(g_mf);
	return 0;
}

/* The MN's batch handler: echoes each request + 1, notes the largest batch. */
struct mn_seen {
	unsigned handled;
	unsigned max_batch;
	unsigned batches;
};

static void
mn_echo(void *arg, struct dtxn_rpc_srv_msg *msgs, unsigned n)
{
	struct mn_seen *s = arg;

	assert_true(n >= 1 && n <= DTXN_RPC_SRV_BURST);
	s->batches++;
	s->max_batch = RTE_MAX(s->max_batch, n);
	for (unsigned i = 0; i < n; i++) {
		const uint8_t *in = msgs[i].req;
		uint8_t *out = msgs[i].resp;

		assert_int_equal(msgs[i].worker, 0);
		out[0] = (uint8_t)msgs[i].src_node;
		for (uint32_t b = 0; b < msgs[i].len; b++)
			out[b + 1] = (uint8_t)(in[b] + 1);
		msgs[i].resp_len = (int)msgs[i].len + 1;
		s->handled++;
	}
}

static struct dtxn_rrpc_mn *g_mnsvc;

static void
mn_poll_after(void)
{
	(void)dtxn_rrpc_mn_poll(g_mnsvc);
}

/* Coordinator: MN_ROUNDS batches of two calls to MN 0 (both requests in one bucket). */
static void
mjob_main(struct dtxn_coord *c, void *arg)
{
	struct rjob *j = arg;
	uint8_t req[2][24], resp[2][DTXN_RPC_RESP_MAX];
	struct dtxn_rpc_call calls[2];

	(void)c;
	for (unsigned k = 0; k < MN_ROUNDS; k++) {
		for (unsigned i = 0; i < 2; i++) {
			memset(req[i], (int)(j->idx * 16 + k + i), sizeof(req[i]));
			memset(&calls[i], 0, sizeof(calls[i]));
			calls[i].dst_node = 0; /* MN 0 */
			calls[i].type = T_ECHO;
			calls[i].req = req[i];
			calls[i].req_len = sizeof(req[i]);
			calls[i].resp = resp[i];
		}
		j->rc = dtxn_rrpc_call_lc(j->ep, calls, 2);
		if (j->rc != 0)
			return;
		for (unsigned i = 0; i < 2; i++)
			if (calls[i].resp_len != sizeof(req[i]) + 1 || resp[i][0] != 1 ||
			    resp[i][24] != (uint8_t)(j->idx * 16 + k + i + 1)) {
				j->rc = -EBADMSG;
				return;
			}
		j->done++;
	}
}

static struct dtxn_rrpc_domain *
mn_domain(void)
{
	struct dtxn_rrpc_domain_conf dcf = { .size = sizeof(dcf), .max_workers = 1,
					     .buckets = MN_BUCKETS, .socket_id = SOCKET_ID_ANY,
					     .mn_ring_off = g_mdb->cat.msg_off };
	struct dtxn_rrpc_domain *d = dtxn_rrpc_domain_create(g_mf, &dcf);

	assert_non_null(d);
	return d;
}

/* MN 0's RRPC service in @p d (g_mnsvc), its QPs on a new CQ (returned), echoing into @p seen. */
static struct dtxn_cq *
mn_svc_up(struct dtxn_rrpc_domain *d, struct mn_seen *seen)
{
	struct dtxn_rrpc_mn_conf mc = { .size = sizeof(mc), .mn = 0, .fn = mn_echo, .arg = seen,
					.socket_id = SOCKET_ID_ANY };

	mc.cq = dtxn_cq_create(g_mf, SOCKET_ID_ANY, 64);
	assert_non_null(mc.cq);
	g_mnsvc = dtxn_rrpc_mn_create(d, &mc);
	assert_non_null(g_mnsvc);
	assert_null(dtxn_rrpc_mn_create(d, &mc)); /* the area is watched already */
	assert_int_equal(rte_errno, EEXIST);
	return mc.cq;
}

/* Undoes mn_svc_up() and destroys @p d. */
static void
mn_svc_down(struct dtxn_rrpc_domain *d, struct dtxn_cq *cq)
{
	dtxn_rrpc_mn_destroy(g_mnsvc);
	g_mnsvc = NULL;
	dtxn_cq_destroy(cq);
	dtxn_rrpc_domain_destroy(d);
}

static void
test_mn_transport(void **state)
{
	struct dtxn_rrpc_domain *d = mn_domain();
	struct dtxn_worker *w[N_CN];
	struct dtxn_rrpc *r[N_CN];
	static struct rjob jobs[N_COORDS];
	struct dtxn_rrpc_stats cs, ms;
	struct mn_seen seen = { 0 };
	struct dtxn_cq *cq;

	(void)state;
	cq = mn_svc_up(d, &seen);
	for (unsigned i = 0; i < N_CN; i++) {
		w[i] = dtxn_worker_create(g_mdb, (uint16_t)(1 + i), 0, N_COORDS, SOCKET_ID_ANY);
		assert_non_null(w[i]);
		r[i] = dtxn_rrpc_create(d, w[i]);
		assert_non_null(r[i]);
	}
	for (unsigned i = 0; i < N_COORDS; i++) {
		struct dtxn_coord *co = dtxn_coord_create(w[0], i, mjob_main, &jobs[i]);

		assert_non_null(co);
		memset(&jobs[i], 0, sizeof(jobs[i]));
		jobs[i].idx = i;
		jobs[i].ep = dtxn_rrpc_ep_create(r[0], co);
		assert_non_null(jobs[i].ep);
	}
	cl_run(w, mn_poll_after);
	for (unsigned i = 0; i < N_COORDS; i++) {
		assert_int_equal(jobs[i].rc, 0);
		assert_int_equal(jobs[i].done, MN_ROUNDS);
	}
	assert_int_equal(seen.handled, 2 * N_COORDS * MN_ROUNDS);
	dtxn_rrpc_stats_get(r[0], &cs);
	dtxn_rrpc_mn_stats_get(g_mnsvc, &ms);
	print_message("rrpc to MN 0: %" PRIu64 " requests in %" PRIu64 " buckets, %" PRIu64
		      " doorbells; replies in %" PRIu64 " buckets, %" PRIu64
		      " doorbells; largest batch %u of %u batches; credits %" PRIu64 " + %" PRIu64 "\n",
		      cs.req_sent, cs.buckets, cs.doorbells, ms.buckets, ms.doorbells,
		      seen.max_batch, seen.batches, cs.credits, ms.credits);
	assert_int_equal(cs.resp_recv, 2 * N_COORDS * MN_ROUNDS);
	assert_int_equal(ms.req_handled, 2 * N_COORDS * MN_ROUNDS);
	assert_int_equal(cs.bad + ms.bad, 0);
	/* several requests per bucket both ways, and the handler saw them as one batch */
	assert_true(cs.buckets < cs.req_sent);
	assert_true(ms.buckets < ms.req_handled);
	assert_true(seen.max_batch >= 2);
	/* 16-bucket rings both ways, hundreds of buckets: wrapped, credit flowed */
	assert_true(cs.buckets > 2 * MN_BUCKETS);
	assert_true(ms.buckets > 2 * MN_BUCKETS);
	for (unsigned i = 0; i < N_COORDS; i++)
		dtxn_rrpc_ep_destroy(jobs[i].ep);
	for (unsigned i = 0; i < N_CN; i++) {
		dtxn_rrpc_destroy(r[i]);
		dtxn_worker_destroy(w[i]);
	}
	mn_svc_down(d, cq);
}

/* A bucket in MN 0's ring of CN 2's worker 0 that lands byte by byte: taken only whole. */
static void
test_mn_torn(void **state)
{
	struct dtxn_rrpc_domain *d = mn_domain();
	uint8_t *base = dtxn_fabric_mn_base(g_mf, 0);
	/* CN 2 = cn_idx 1; worker 0; a ring = control line + MN_BUCKETS buckets */
	uint8_t *ring = base + g_mdb->cat.msg_off + 1 * (64 + MN_BUCKETS * RRPC_BUCKET_BYTES) + 64;
	struct mn_seen seen = { 0 };
	struct rrpc_bucket b;
	struct rrpc_msg_hdr h = { .len = 8, .kind = RRPC_KIND_REQ, .type = T_ECHO, .seq = 1 };
	uint8_t pay[8] = { 7, 7, 7, 7, 7, 7, 7, 7 };
	struct dtxn_rrpc_stats ms;
	struct dtxn_cq *cq;
	uint32_t len;

	(void)state;
	cq = mn_svc_up(d, &seen);
	rrpc_bucket_reset(&b);
	for (unsigned i = 0; i < 3; i++) { /* a batch of three requests in one bucket */
		h.seq = 1 + i;
		assert_int_equal(rrpc_bucket_add(&b, &h, pay), 0);
	}
	len = rrpc_bucket_seal(&b, 0);
	for (uint32_t at = 4; at < len; at += 4) {
		memcpy(ring, b.data, at); /* every prefix short of the tail label */
		assert_int_equal(dtxn_rrpc_mn_poll(g_mnsvc), 0);
		assert_int_equal(seen.handled, 0);
	}
	memcpy(ring, b.data, len);
	assert_int_equal(dtxn_rrpc_mn_poll(g_mnsvc), 3);
	assert_int_equal(seen.handled, 3);
	assert_int_equal(seen.batches, 1);
	assert_int_equal(dtxn_rrpc_mn_poll(g_mnsvc), 0); /* consumed: zeroed, not taken twice */
	dtxn_rrpc_mn_stats_get(g_mnsvc, &ms);
	assert_int_equal(ms.req_handled, 3);
	assert_int_equal(ms.buckets, 1);   /* the three replies: one bucket, one WRITE */
	assert_int_equal(ms.doorbells, 1);
	assert_int_equal(ms.bad, 0);
	mn_svc_down(d, cq);
}

static void
test_mn_args(void **state)
{
	struct dtxn_rrpc_domain_conf dcf = { .size = sizeof(dcf), .max_workers = 1,
					     .socket_id = SOCKET_ID_ANY };
	struct dtxn_rrpc_mn_conf mc = { .size = sizeof(mc), .mn = 0, .fn = mn_echo,
					.socket_id = SOCKET_ID_ANY };
	struct dtxn_rrpc_domain *d;
	struct dtxn_cq *cq = dtxn_cq_create(g_mf, SOCKET_ID_ANY, 64);

	(void)state;
	assert_non_null(cq);
	assert_int_equal(dtxn_rrpc_mn_area_bytes(3, 2, 8), 3 * 2 * (64 + 8 * 512));
	assert_int_equal(dtxn_rrpc_mn_area_bytes(3, 2, 0), 3 * 2 * (64 + 64 * 512));
	assert_int_equal(dtxn_rrpc_mn_area_bytes(0, 2, 8), 0);
	assert_int_equal(dtxn_rrpc_mn_area_bytes(3, 0, 8), 0);
	assert_int_equal(dtxn_rrpc_mn_area_bytes(3, 2, 12), 0);
	d = dtxn_rrpc_domain_create(g_mf, &dcf); /* no MN rings */
	assert_non_null(d);
	mc.cq = cq;
	assert_null(dtxn_rrpc_mn_create(d, &mc));
	assert_int_equal(rte_errno, EINVAL);
	dtxn_rrpc_domain_destroy(d);
	d = mn_domain();
	mc.cq = NULL;
	assert_null(dtxn_rrpc_mn_create(d, &mc));
	mc.cq = cq;
	mc.mn = 1; /* not an MN */
	assert_null(dtxn_rrpc_mn_create(d, &mc));
	mc.mn = 0;
	mc.fn = NULL;
	assert_null(dtxn_rrpc_mn_create(d, &mc));
	assert_null(dtxn_rrpc_mn_create(d, NULL));
	assert_int_equal(dtxn_rrpc_mn_poll(NULL), 0);
	dtxn_rrpc_mn_destroy(NULL);
	dtxn_rrpc_domain_destroy(d);
	dtxn_cq_destroy(cq);
}

int
main(void)
{
	const struct CMUnitTest mem_tests[] = {
		cmocka_unit_test(test_labels),
		cmocka_unit_test(test_torn_write),
		cmocka_unit_test(test_bad_buckets),
	};
	const struct CMUnitTest fab_tests[] = {
		cmocka_unit_test(test_chain_one_doorbell),
		cmocka_unit_test(test_wrap),
	};
	const struct CMUnitTest cl_tests[] = {
		cmocka_unit_test(test_transport_echo),
		cmocka_unit_test(test_transport_zc),
		cmocka_unit_test(test_transport_args),
	};
	const struct CMUnitTest mn_tests[] = {
		cmocka_unit_test(test_mn_transport),
		cmocka_unit_test(test_mn_torn),
		cmocka_unit_test(test_mn_args),
	};
	int rc;

	if (dtxn_unit_eal_init("ut_rrpc") != 0)
		return 1;
	rc = cmocka_run_group_tests(mem_tests, NULL, NULL);
	rc += cmocka_run_group_tests(fab_tests, fab_setup, fab_teardown);
	rc += cmocka_run_group_tests(cl_tests, cl_setup, cl_teardown);
	rc += cmocka_run_group_tests(mn_tests, mn_setup, mn_teardown);
	dtxn_unit_eal_fini();
	return rc;
}
