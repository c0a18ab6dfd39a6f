/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the simulation: the sim fabric driver in virtual time
 * (exact effect and completion times from the NIC model, RC order, atomics
 * serialized at the RNIC unit, SEND/RECV with RNR, flush, ties broken by
 * posting order) and CPU time in virtual time (cost model files, charges,
 * settling a debt, a busy thread that does not run), and the test aid that
 * drops a dead node's posted chains. Every time asserted
 * here is virtual, hence exact.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <rte_common.h>
#include <rte_memory.h>

#include "dtxn_fabric.h"
#include "dtxn_fabric_sim.h"
#include "dtxn_sched.h"
#include "masked_cas_ref.h"
#include "unit_eal.h"

#define TS_CPU(name) DTXN_SRC_CONFIG_DIR "/cpu/" name ".ini"
#define TS_REGION 4096

static char g_tmpdir[64];

/* ------------------------------------------------------------------ */
/* Helpers                                                            */
/* ------------------------------------------------------------------ */

static struct dtxn_fabric *
ts_open(const char *nic, uint16_t n_mn, uint16_t n_cn)
{
	struct dtxn_fabric_conf fc = {
		.size = sizeof(fc), .driver = "sim", .n_mn = n_mn, .n_cn = n_cn,
		.mn_region_size = TS_REGION, .socket_id = SOCKET_ID_ANY, .name = "ts",
	};
	struct dtxn_fabric *f;
	char err[256], path[256];

	snprintf(path, sizeof(path), "%s/nic/%s.ini", DTXN_SRC_CONFIG_DIR, nic ? nic : "none");
	if (nic == NULL)
		dtxn_nic_model_none(&fc.nic);
	else
		assert_int_equal(dtxn_nic_model_load(path, &fc.nic, err, sizeof(err)), 0);
	f = dtxn_fabric_open(&fc);
	assert_non_null(f);
	assert_true(dtxn_sim_is(f));
	return f;
}

/* Advances virtual time to @p t and runs what is due. */
static void
ts_at(struct dtxn_fabric *f, uint64_t t)
{
	dtxn_clock_advance(t);
	(void)dtxn_sim_run_events(f, t);
}

static unsigned
ts_poll(struct dtxn_cq *cq, struct dtxn_cqe *e, unsigned n)
{
	return dtxn_cq_poll(cq, e, n);
}

static uint64_t *
ts_word(struct dtxn_fabric *f, uint16_t mn, uint64_t off)
{
	return (uint64_t *)(void *)((char *)dtxn_fabric_mn_base(f, mn) + off);
}

/* ------------------------------------------------------------------ */
/* CPU cost model                                                     */
/* ------------------------------------------------------------------ */

static void
ts_write(const char *name, const char *text, char *path, size_t len)
{
	FILE *fp;

	snprintf(path, len, "%s/%s", g_tmpdir, name);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
}

static void
test_cpu_model_load(void **state)
{
	struct dtxn_cpu_model m;
	char path[256], err[256];

	(void)state;
	assert_int_equal(dtxn_cpu_model_load(TS_CPU("zero"), &m, err, sizeof(err)), 0);
	assert_string_equal(m.name, "zero");
	for (unsigned k = 0; k < DTXN_CPU_OP_MAX; k++)
		assert_int_equal(m.ns[k], 0);
	assert_int_equal(dtxn_cpu_model_load(TS_CPU("default"), &m, err, sizeof(err)), 0);
	assert_true(m.ns[DTXN_CPU_TXN] + m.ns[DTXN_CPU_WR] > 0);

	ts_write("ok.ini", "[cpu]\ntxn_ns = 100.4\nwr_ns=7\n", path, sizeof(path));
	assert_int_equal(dtxn_cpu_model_load(path, &m, err, sizeof(err)), 0);
	assert_string_equal(m.name, "ok");
	assert_int_equal(m.ns[DTXN_CPU_TXN], 100);
	assert_int_equal(m.ns[DTXN_CPU_WR], 7);
	assert_int_equal(m.ns[DTXN_CPU_RECORD], 0);

	ts_write("key.ini", "[cpu]\nwrs_ns = 1\n", path, sizeof(path));
	assert_int_equal(dtxn_cpu_model_load(path, &m, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "wrs_ns"));
	ts_write("neg.ini", "[cpu]\nwr_ns = -3\n", path, sizeof(path));
	assert_int_equal(dtxn_cpu_model_load(path, &m, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "wr_ns"));
	ts_write("sec.ini", "[nic]\nwr_ns = 3\n", path, sizeof(path));
	assert_int_equal(dtxn_cpu_model_load(path, &m, err, sizeof(err)), -EINVAL);
	assert_int_equal(dtxn_cpu_model_load("/nonexistent/x.ini", &m, err, sizeof(err)),
			 -ENOENT);
	assert_int_equal(dtxn_cpu_model_load(NULL, &m, NULL, 0), -EINVAL);
	assert_string_equal(dtxn_cpu_op_name(DTXN_CPU_DOORBELL), "doorbell_ns");
	assert_string_equal(dtxn_cpu_op_name(99), "unknown");
}

/* Before the clock is virtual, charges cost nothing (runs first). */
static void
test_charge_real_time_noop(void **state)
{
	struct dtxn_cpu_model m = { .name = "t" };
	struct dtxn_sched *s = dtxn_sched_create("ts_real", SOCKET_ID_ANY, 4, 0);

	(void)state;
	assert_non_null(s);
	m.ns[DTXN_CPU_WR] = 1000;
	dtxn_sched_set_cpu_model(s, &m);
	dtxn_sched_charge(s, 5000);
	dtxn_sched_charge_op(s, DTXN_CPU_WR, 3);
	assert_int_equal(dtxn_sched_cpu_ns(s), 0);
	assert_int_equal(dtxn_sched_busy_until_ns(s), 0);
	assert_int_equal(dtxn_sched_cpu_ops(s)[DTXN_CPU_WR], 0);
	dtxn_sched_destroy(s);
}

/* ------------------------------------------------------------------ */
/* CPU time in virtual time                                           */
/* ------------------------------------------------------------------ */

struct ts_co_log {
	uint64_t t[4];
	unsigned n;
};

/* Charges 500 ns, settles, notes the time; then charges 200 ns and ends. */
static void
ts_co_charge(struct dtxn_co *co, void *arg)
{
	struct ts_co_log *log = arg;
	struct dtxn_sched *s = dtxn_co_sched(co);

	log->t[log->n++] = dtxn_now_ns();
	dtxn_sched_charge_op(s, DTXN_CPU_TXN, 1);  /* 500 ns with the test model */
	dtxn_co_settle_lc(co);
	log->t[log->n++] = dtxn_now_ns();
	dtxn_sched_charge(s, 200);
}

/* Notes when it runs. */
static void
ts_co_note(struct dtxn_co *co, void *arg)
{
	struct ts_co_log *log = arg;

	(void)co;
	log->t[log->n++] = dtxn_now_ns();
}

static void
test_charge_settle_busy(void **state)
{
	struct dtxn_cpu_model m = { .name = "t" };
	struct ts_co_log a = { .n = 0 }, b = { .n = 0 };
	struct dtxn_sched *s = dtxn_sched_create("ts_cpu", SOCKET_ID_ANY, 4, 0);
	const uint64_t t0 = 1000000;

	(void)state;
	assert_non_null(s);
	dtxn_clock_set_virtual(t0);
	m.ns[DTXN_CPU_TXN] = 500;
	dtxn_sched_set_cpu_model(s, &m);
	assert_non_null(dtxn_co_create(s, ts_co_charge, &a));
	assert_non_null(dtxn_co_create(s, ts_co_note, &b));
	assert_int_equal(dtxn_sched_ready_count(s), 2);

	/* a runs, charges 500 ns and settles: the thread is busy, b waits */
	dtxn_sched_step_lc(s);
	assert_int_equal(a.n, 1);
	assert_int_equal(b.n, 0);
	assert_int_equal(dtxn_sched_busy_until_ns(s), t0 + 500);
	assert_int_equal(dtxn_sched_next_timer_ns(s), t0 + 500);
	/* still busy: a step does nothing */
	dtxn_clock_advance(t0 + 499);
	dtxn_sched_step_lc(s);
	assert_int_equal(a.n, 1);
	assert_int_equal(b.n, 0);
	/* free at t0 + 500: b (ready first) runs, then a resumes */
	dtxn_clock_advance(t0 + 500);
	dtxn_sched_step_lc(s);
	assert_int_equal(b.n, 1);
	assert_int_equal(b.t[0], t0 + 500);
	dtxn_sched_step_lc(s);
	assert_int_equal(a.n, 2);
	assert_int_equal(a.t[1], t0 + 500);
	/* a's last 200 ns were charged when it ended: busy until t0 + 700 */
	assert_int_equal(dtxn_sched_busy_until_ns(s), t0 + 700);
	assert_int_equal(dtxn_sched_alive(s), 0);
	assert_int_equal(dtxn_sched_cpu_ns(s), 700);
	assert_int_equal(dtxn_sched_cpu_ops(s)[DTXN_CPU_TXN], 1);
	/* no model: charge_op is free, charge is not */
	dtxn_sched_set_cpu_model(s, NULL);
	dtxn_sched_charge_op(s, DTXN_CPU_TXN, 10);
	assert_int_equal(dtxn_sched_cpu_ns(s), 700);
	dtxn_sched_destroy(s);
}

/* ------------------------------------------------------------------ */
/* The sim fabric                                                     */
/* ------------------------------------------------------------------ */

/* READ on cx5: effect at post + rtt/2 + 10 ns of service, CQE rtt/2 later. */
static void
test_read_timing(void **state)
{
	struct dtxn_fabric *f = ts_open("cx5", 1, 1);
	struct dtxn_cq *cq = dtxn_cq_create(f, SOCKET_ID_ANY, 64);
	struct dtxn_qp *qp = dtxn_qp_create(f, cq, 1, 0, 64);
	const struct dtxn_nic_model *m = dtxn_sim_node_nic(f, 0);
	uint64_t t0 = 2000000, buf = 0, eff, done;
	struct dtxn_wr wr = {
		.wr_id = 7, .opcode = DTXN_WR_READ, .flags = DTXN_WR_F_SIGNALED, .len = 8,
		.local = &buf, .raddr = DTXN_RADDR(0, 64),
	};
	struct dtxn_cqe e[4];

	(void)state;
	assert_non_null(cq);
	assert_non_null(qp);
	assert_int_equal(m->rtt_ns, 2000);
	dtxn_clock_set_virtual(t0);
	*ts_word(f, 0, 64) = 0xabcdef;
	assert_int_equal(dtxn_qp_post(qp, &wr), 0);
	eff = t0 + 1000 + 10;
	done = eff + 1000;
	assert_int_equal(dtxn_sim_next_event_ns(f), eff);
	ts_at(f, eff - 1);
	assert_int_equal(buf, 0);
	ts_at(f, eff);
	assert_int_equal(buf, 0xabcdef);         /* touched memory at its service time */
	assert_int_equal(ts_poll(cq, e, 4), 0);  /* the completion travels back */
	assert_int_equal(dtxn_sim_next_event_ns(f), done);
	ts_at(f, done);
	assert_int_equal(dtxn_sim_cq_pending(cq), 1);
	assert_int_equal(ts_poll(cq, e, 4), 1);
	assert_int_equal(e[0].wr_id, 7);
	assert_int_equal(e[0].status, DTXN_WC_SUCCESS);
	assert_int_equal(e[0].byte_len, 8);
	assert_int_equal(dtxn_sim_next_event_ns(f), UINT64_MAX);
	assert_int_equal(dtxn_fabric_nic_state(f, 0)->rw.ops, 1);
	dtxn_qp_destroy(qp);
	dtxn_cq_destroy(cq);
	dtxn_fabric_close(f);
}

/* Masked CAS in virtual time against the reference model (masked_cas_ref.h). */
static void
test_masked_cas_model(void **state)
{
	struct dtxn_fabric *f = ts_open(NULL, 1, 1);
	struct dtxn_cq *cq = dtxn_cq_create(f, SOCKET_ID_ANY, 64);
	struct dtxn_qp *qp = dtxn_qp_create(f, cq, 1, 0, 64);
	uint64_t seed = 0x2545f4914f6cdd1dull, t = 3000000;
	unsigned swapped = 0;

	(void)state;
	assert_non_null(qp);
	dtxn_clock_set_virtual(t);
	for (unsigned i = 0; i < 2048; i++) {
		struct mcas_case c;
		struct dtxn_cqe e;
		uint64_t old = 0;
		struct dtxn_wr wr = {
			.wr_id = i, .opcode = DTXN_WR_MASKED_CAS, .flags = DTXN_WR_F_SIGNALED,
			.len = 8, .local = &old, .raddr = DTXN_RADDR(0, 128),
		};

		mcas_case_make(&seed, i, &c);
		*ts_word(f, 0, 128) = c.word;
		wr.compare_add = c.compare;
		wr.compare_mask = c.compare_mask;
		wr.swap = c.swap;
		wr.swap_mask = c.swap_mask;
		assert_int_equal(dtxn_qp_post(qp, &wr), 0);
		while (ts_poll(cq, &e, 1) == 0) {
			t = dtxn_sim_next_event_ns(f);
			assert_true(t != UINT64_MAX);
			ts_at(f, t);
		}
		assert_int_equal(e.status, DTXN_WC_SUCCESS);
		assert_int_equal(old, c.word);
		assert_int_equal(*ts_word(f, 0, 128), mcas_ref(&c));
		swapped += (c.word & c.compare_mask) == (c.compare & c.compare_mask);
	}
	assert_true(swapped > 2048 / 5 && swapped < 2048 / 2); /* both outcomes exercised */
	dtxn_qp_destroy(qp);
	dtxn_cq_destroy(cq);
	dtxn_fabric_close(f);
}

/* Two CNs CAS one word at once: the cx3 atomic unit (2.5 Mops, 400 ns) serves them in turn. */
static void
test_atomics_serialized(void **state)
{
	struct dtxn_fabric *f = ts_open("cx3", 1, 2);
	struct dtxn_cq *cq1 = dtxn_cq_create(f, SOCKET_ID_ANY, 64);
	struct dtxn_cq *cq2 = dtxn_cq_create(f, SOCKET_ID_ANY, 64);
	struct dtxn_qp *q1 = dtxn_qp_create(f, cq1, 1, 0, 64);
	struct dtxn_qp *q2 = dtxn_qp_create(f, cq2, 2, 0, 64);
	uint64_t t0 = 3000000, old1 = 99, old2 = 99;
	struct dtxn_wr c1 = {
		.wr_id = 1, .opcode = DTXN_WR_CAS, .flags = DTXN_WR_F_SIGNALED, .len = 8,
		.local = &old1, .raddr = DTXN_RADDR(0, 128), .compare_add = 0, .swap = 11,
	};
	struct dtxn_wr c2 = c1;
	struct dtxn_cqe e;

	(void)state;
	c2.wr_id = 2;
	c2.local = &old2;
	c2.swap = 22;
	dtxn_clock_set_virtual(t0);
	assert_int_equal(dtxn_qp_post(q1, &c1), 0);
	assert_int_equal(dtxn_qp_post(q2, &c2), 0);
	ts_at(f, t0 + 1000 + 400);
	assert_int_equal(*ts_word(f, 0, 128), 11);
	assert_int_equal(old1, 0);
	assert_int_equal(old2, 99);              /* second one still queued */
	ts_at(f, t0 + 1000 + 800);
	assert_int_equal(old2, 11);              /* it lost: saw the first one's value */
	assert_int_equal(*ts_word(f, 0, 128), 11);
	ts_at(f, t0 + 2000 + 400);
	assert_int_equal(ts_poll(cq1, &e, 1), 1);
	assert_int_equal(ts_poll(cq2, &e, 1), 0);
	ts_at(f, t0 + 2000 + 800);
	assert_int_equal(ts_poll(cq2, &e, 1), 1);
	assert_int_equal(e.wr_id, 2);
	assert_int_equal(dtxn_fabric_nic_state(f, 0)->atomic.busy_ns, 800);
	dtxn_qp_destroy(q1);
	dtxn_qp_destroy(q2);
	dtxn_cq_destroy(cq1);
	dtxn_cq_destroy(cq2);
	dtxn_fabric_close(f);
}

/* One chain: WRITE then READ of the same word reads the write (RC order). */
static void
test_rc_order_and_ties(void **state)
{
	struct dtxn_fabric *f = ts_open(NULL, 1, 2);
	struct dtxn_cq *cq = dtxn_cq_create(f, SOCKET_ID_ANY, 64);
	struct dtxn_qp *q1 = dtxn_qp_create(f, cq, 1, 0, 64);
	struct dtxn_qp *q2 = dtxn_qp_create(f, cq, 2, 0, 64);
	uint64_t v1 = 5, v2 = 6, rd = 0, t0 = 4000000;
	struct dtxn_wr rdw = {
		.wr_id = 3, .opcode = DTXN_WR_READ, .flags = DTXN_WR_F_SIGNALED, .len = 8,
		.local = &rd, .raddr = DTXN_RADDR(0, 256),
	};
	struct dtxn_wr w1 = {
		.wr_id = 1, .opcode = DTXN_WR_WRITE, .flags = DTXN_WR_F_INLINE, .len = 8,
		.local = &v1, .raddr = DTXN_RADDR(0, 256), .next = &rdw,
	};
	struct dtxn_wr w2 = {
		.wr_id = 2, .opcode = DTXN_WR_WRITE, .flags = DTXN_WR_F_SIGNALED, .len = 8,
		.local = &v2, .raddr = DTXN_RADDR(0, 256),
	};
	struct dtxn_cqe e[4];

	(void)state;
	dtxn_clock_set_virtual(t0);
	/* model none: all three take effect at t0, in posting order */
	assert_int_equal(dtxn_qp_post(q1, &w1), 0);
	v1 = 0; /* inline: copied at post */
	assert_int_equal(dtxn_qp_post(q2, &w2), 0);
	assert_int_equal(dtxn_sim_next_event_ns(f), t0);
	ts_at(f, t0);
	assert_int_equal(rd, 5);                  /* read after q1's write, before q2's */
	assert_int_equal(*ts_word(f, 0, 256), 6); /* q2's write came last */
	assert_int_equal(ts_poll(cq, e, 4), 2);
	assert_int_equal(e[0].wr_id, 3);
	assert_int_equal(e[1].wr_id, 2);
	dtxn_qp_destroy(q1);
	dtxn_qp_destroy(q2);
	dtxn_cq_destroy(cq);
	dtxn_fabric_close(f);
}

/* SEND before RECV waits (RNR); a RECV completes when the message is there. */
static void
test_send_recv(void **state)
{
	struct dtxn_fabric *f = ts_open("cx5", 1, 2);
	struct dtxn_cq *ca = dtxn_cq_create(f, SOCKET_ID_ANY, 64);
	struct dtxn_cq *cb = dtxn_cq_create(f, SOCKET_ID_ANY, 64);
	struct dtxn_qp *ab = dtxn_qp_create(f, ca, 1, 2, 64);
	struct dtxn_qp *ba = dtxn_qp_create(f, cb, 2, 1, 64);
	char msg[16] = "hello", in[16] = { 0 }, small[2];
	uint64_t t0 = 5000000, arrive = t0 + 1000 + 10;
	struct dtxn_wr send = {
		.wr_id = 1, .opcode = DTXN_WR_SEND, .flags = DTXN_WR_F_SIGNALED, .len = 6,
		.local = msg,
	};
	struct dtxn_wr recv = { .wr_id = 9, .opcode = DTXN_WR_RECV, .len = sizeof(in), .local = in };
	struct dtxn_wr tiny = { .wr_id = 10, .opcode = DTXN_WR_RECV, .len = 2, .local = small };
	struct dtxn_cqe e;

	(void)state;
	dtxn_clock_set_virtual(t0);
	assert_int_equal(dtxn_qp_post(ab, &send), 0);
	ts_at(f, arrive);
	assert_int_equal(ts_poll(cb, &e, 1), 0); /* arrived, no RECV posted */
	ts_at(f, arrive + 1000);
	assert_int_equal(ts_poll(ca, &e, 1), 1); /* the SEND itself completed */
	assert_int_equal(e.status, DTXN_WC_SUCCESS);
	ts_at(f, arrive + 5000);
	assert_int_equal(dtxn_qp_post_recv(ba, &recv), 0);
	assert_int_equal(ts_poll(cb, &e, 1), 1);  /* delivered at once */
	assert_int_equal(e.wr_id, 9);
	assert_int_equal(e.byte_len, 6);
	assert_int_equal(e.src_node, 1);
	assert_int_equal(e.opcode, DTXN_WR_RECV);
	assert_string_equal(in, "hello");
	/* too small a buffer */
	assert_int_equal(dtxn_qp_post_recv(ba, &tiny), 0);
	assert_int_equal(dtxn_qp_post(ab, &send), 0);
	ts_at(f, dtxn_now_ns() + 3000);
	assert_int_equal(ts_poll(cb, &e, 1), 1);
	assert_int_equal(e.status, DTXN_WC_LOC_LEN_ERR);
	assert_int_equal(ts_poll(ca, &e, 1), 1);
	dtxn_qp_destroy(ba);
	/* peer gone: a SEND is refused at post */
	assert_int_equal(dtxn_qp_post(ab, &send), -ENOTCONN);
	dtxn_qp_destroy(ab);
	dtxn_cq_destroy(ca);
	dtxn_cq_destroy(cb);
	dtxn_fabric_close(f);
}

/* Destroy before the effect: flushed; the queued events then do nothing. */
static void
test_flush_and_room(void **state)
{
	struct dtxn_fabric *f = ts_open("cx5", 1, 1);
	struct dtxn_cq *cq = dtxn_cq_create(f, SOCKET_ID_ANY, 64);
	struct dtxn_qp *qp = dtxn_qp_create(f, cq, 1, 0, 64);
	static uint64_t bufs[200];
	struct dtxn_wr wrs[200];
	uint64_t t0 = 6000000, v = 42;
	struct dtxn_wr w = {
		.wr_id = 5, .opcode = DTXN_WR_WRITE, .flags = DTXN_WR_F_SIGNALED, .len = 8,
		.local = &v, .raddr = DTXN_RADDR(0, 512),
	};
	struct dtxn_cqe e[80];

	(void)state;
	dtxn_clock_set_virtual(t0);
	/* the send queue grows past its first 64 slots up to max_wr, not beyond */
	for (unsigned i = 0; i < 65; i++) {
		wrs[i] = (struct dtxn_wr){
			.wr_id = 100 + i, .opcode = DTXN_WR_READ, .len = 8, .local = &bufs[i],
			.raddr = DTXN_RADDR(0, 8 * i), .next = i < 64 ? &wrs[i + 1] : NULL,
		};
	}
	assert_int_equal(dtxn_qp_post(qp, &wrs[0]), -ENOBUFS); /* 65 > max_wr 64 */
	wrs[63].next = NULL;
	wrs[63].flags = DTXN_WR_F_SIGNALED;
	assert_int_equal(dtxn_qp_post(qp, &wrs[0]), 0);
	ts_at(f, t0 + 1000 + 64 * 10);
	assert_int_equal(dtxn_qp_post(qp, &w), -ENOBUFS); /* unsignaled slots not yet free */
	ts_at(f, t0 + 2000 + 64 * 10);
	assert_int_equal(ts_poll(cq, e, 80), 1);
	assert_int_equal(e[0].wr_id, 163);
	assert_int_equal(dtxn_qp_post(qp, &w), 0);
	dtxn_qp_destroy(qp);
	assert_int_equal(ts_poll(cq, e, 80), 1);
	assert_int_equal(e[0].wr_id, 5);
	assert_int_equal(e[0].status, DTXN_WC_WR_FLUSH_ERR);
	ts_at(f, dtxn_now_ns() + 10000);          /* its effect event finds no QP */
	assert_int_equal(*ts_word(f, 0, 512), 0); /* never written */
	assert_int_equal(dtxn_sim_next_event_ns(f), UINT64_MAX);
	dtxn_cq_destroy(cq);
	dtxn_fabric_close(f);
}

/*
 * Test aid dtxn_sim_set_fault_drop() and dtxn_sim_node_kill() (dtxn-app
 * --fault-drop): a dead node's chain that started at its MN runs whole;
 * with p = 1 every other one is dropped whole (its WRs change nothing and
 * complete with WR_FLUSH_ERR); with p = 0 nothing is; the fabric then says
 * its posted WRs do not survive their poster (dtxn_fabric_posted_survives()).
 */
static void
test_fault_drop(void **state)
{
	struct dtxn_fabric *f = ts_open("cx5", 2, 1);
	struct dtxn_cq *cq = dtxn_cq_create(f, SOCKET_ID_ANY, 64);
	struct dtxn_qp *qa = dtxn_qp_create(f, cq, 2, 0, 64);
	struct dtxn_qp *qb = dtxn_qp_create(f, cq, 2, 1, 64);
	uint64_t v = 7, t0 = 9000000, wrs = 0;
	struct dtxn_wr a1b = {
		.wr_id = 2, .opcode = DTXN_WR_WRITE, .flags = DTXN_WR_F_SIGNALED | DTXN_WR_F_INLINE,
		.len = 8, .local = &v, .raddr = DTXN_RADDR(0, 8),
	};
	struct dtxn_wr a1 = {
		.wr_id = 1, .opcode = DTXN_WR_WRITE, .flags = DTXN_WR_F_SIGNALED | DTXN_WR_F_INLINE,
		.len = 8, .local = &v, .raddr = DTXN_RADDR(0, 0), .next = &a1b,
	};
	struct dtxn_wr a2 = {
		.wr_id = 3, .opcode = DTXN_WR_WRITE, .flags = DTXN_WR_F_SIGNALED | DTXN_WR_F_INLINE,
		.len = 8, .local = &v, .raddr = DTXN_RADDR(0, 16),
	};
	struct dtxn_wr b1 = {
		.wr_id = 4, .opcode = DTXN_WR_WRITE, .flags = DTXN_WR_F_SIGNALED | DTXN_WR_F_INLINE,
		.len = 8, .local = &v, .raddr = DTXN_RADDR(1, 0),
	};
	struct dtxn_cqe e[8];
	unsigned n, flushed = 0;

	(void)state;
	assert_true(dtxn_fabric_posted_survives(f));
	assert_false(dtxn_fabric_posted_survives(NULL));
	assert_int_equal(dtxn_sim_set_fault_drop(f, 1.5, 1), -EINVAL);
	assert_int_equal(dtxn_sim_set_fault_drop(f, -0.1, 1), -EINVAL);
	assert_int_equal(dtxn_sim_node_kill(f, 9, NULL), -EINVAL);
	/* p = 0: the simulated RNICs execute everything */
	assert_int_equal(dtxn_sim_set_fault_drop(f, 0, 1), 0);
	assert_true(dtxn_fabric_posted_survives(f));
	dtxn_clock_set_virtual(t0);
	assert_int_equal(dtxn_qp_post(qa, &a2), 0);
	assert_int_equal(dtxn_sim_node_kill(f, 2, &wrs), 0);
	assert_int_equal(wrs, 0);
	ts_at(f, t0 + 1000000);
	assert_int_equal(*ts_word(f, 0, 16), 7);
	assert_int_equal(ts_poll(cq, e, 8), 1);
	*ts_word(f, 0, 16) = 0;
	/* p = 1: A1 started (its first WRITE took effect, not its second), B1
	 * and A2 did not */
	assert_int_equal(dtxn_sim_set_fault_drop(f, 1, 1), 0);
	assert_false(dtxn_fabric_posted_survives(f));
	t0 += 2000000;
	dtxn_clock_set_virtual(t0);
	assert_int_equal(dtxn_qp_post(qa, &a1), 0);
	assert_int_equal(dtxn_qp_post(qa, &a2), 0);
	dtxn_clock_advance(t0 + 1000);
	assert_int_equal(dtxn_qp_post(qb, &b1), 0);
	ts_at(f, dtxn_sim_next_event_ns(f));
	assert_int_equal(*ts_word(f, 0, 0), 7);
	assert_int_equal(*ts_word(f, 0, 8), 0);
	assert_int_equal(dtxn_sim_node_kill(f, 2, &wrs), 2);
	assert_int_equal(wrs, 2);
	ts_at(f, t0 + 1000000);
	assert_int_equal(*ts_word(f, 0, 8), 7);  /* the started chain ran whole */
	assert_int_equal(*ts_word(f, 0, 16), 0); /* A2 dropped */
	assert_int_equal(*ts_word(f, 1, 0), 0);  /* B1 dropped */
	n = ts_poll(cq, e, 8);
	assert_int_equal(n, 4);
	for (unsigned i = 0; i < n; i++) {
		bool lost = e[i].wr_id == 3 || e[i].wr_id == 4;

		assert_int_equal(e[i].status, lost ? DTXN_WC_WR_FLUSH_ERR : DTXN_WC_SUCCESS);
		flushed += lost;
	}
	assert_int_equal(flushed, 2);
	dtxn_qp_destroy(qa);
	dtxn_qp_destroy(qb);
	dtxn_cq_destroy(cq);
	dtxn_fabric_close(f);
}

/* The sim calls refuse a fabric of another driver. */
static void
test_not_sim(void **state)
{
	struct dtxn_fabric_conf fc = {
		.size = sizeof(fc), .driver = "shm", .n_mn = 1, .n_cn = 1,
		.mn_region_size = TS_REGION, .socket_id = SOCKET_ID_ANY, .name = "tsshm",
	};
	struct dtxn_nic_model m;
	struct dtxn_fabric *f;

	(void)state;
	dtxn_nic_model_none(&fc.nic);
	dtxn_nic_model_none(&m);
	f = dtxn_fabric_open(&fc);
	assert_non_null(f);
	assert_false(dtxn_sim_is(f));
	assert_int_equal(dtxn_sim_node_nic_set(f, 0, &m), -EINVAL);
	assert_null(dtxn_sim_node_nic(f, 0));
	assert_int_equal(dtxn_sim_next_event_ns(f), UINT64_MAX);
	assert_int_equal(dtxn_sim_run_events(f, 1), 0);
	assert_int_equal(dtxn_sim_events(f), 0);
	assert_int_equal(dtxn_sim_cq_set_notify(NULL, NULL, NULL), -EINVAL);
	dtxn_fabric_close(f);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cpu_model_load),
		cmocka_unit_test(test_charge_real_time_noop), /* before any virtual time */
		cmocka_unit_test(test_not_sim),
		cmocka_unit_test(test_charge_settle_busy),
		cmocka_unit_test(test_read_timing),
		cmocka_unit_test(test_masked_cas_model),
		cmocka_unit_test(test_atomics_serialized),
		cmocka_unit_test(test_rc_order_and_ties),
		cmocka_unit_test(test_send_recv),
		cmocka_unit_test(test_flush_and_room),
		cmocka_unit_test(test_fault_drop),
	};
	char path[128];
	int rc;

	if (dtxn_unit_eal_init("ut_sim") != 0)
		return 1;
	snprintf(g_tmpdir, sizeof(g_tmpdir), "/tmp/ut_sim.XXXXXX");
	if (mkdtemp(g_tmpdir) == NULL)
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	for (const char *const *n = (const char *const[]){ "ok.ini", "key.ini", "neg.ini",
							   "sec.ini", NULL }; *n; n++) {
		snprintf(path, sizeof(path), "%s/%s", g_tmpdir, *n);
		unlink(path);
	}
	rmdir(g_tmpdir);
	dtxn_unit_eal_fini();
	return rc;
}
