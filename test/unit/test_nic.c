/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the RNIC performance model: preset figures and service
 * times, busy-until reservations, INI errors, and the model driving the
 * shm fabric (lower bounds on completion times only, never upper bounds).
 * Model v2 (issue 29): a single op's latency, each unit's rate at
 * saturation, same-word vs spread atomics, the shared pipeline's mixed
 * rate, each asserted exactly and beside what model v1 gives instead.
 */
#include <errno.h>
#include <math.h>
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
#include <rte_eal.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_memory.h>

#include "dtxn_fabric.h"
#include "dtxn_fabric_driver.h"
#include "dtxn_sched.h"
#include "unit_eal.h"

#define TN_PRESET(name) DTXN_SRC_CONFIG_DIR "/nic/" name ".ini"

static char g_tmpdir[64];

static void
tn_load_ok(const char *path, struct dtxn_nic_model *m)
{
	char err[256];
	int rc = dtxn_nic_model_load(path, m, err, sizeof(err));

	if (rc != 0)
		fprintf(stderr, "%s\n", err);
	assert_int_equal(rc, 0);
}

/* Expected service time from the model's figures, in double precision. */
static double
tn_expect(const struct dtxn_nic_model *m, unsigned op, uint32_t len, bool dm)
{
	double t_ops = 0, t_bytes = 0;
	uint64_t r;

	if (op == DTXN_WR_READ || op == DTXN_WR_WRITE || op == DTXN_WR_SEND) {
		if (m->rw_ops_per_s)
			t_ops = 1e9 / (double)m->rw_ops_per_s;
		if (m->rw_bytes_per_s)
			t_bytes = (double)len * 1e9 / (double)m->rw_bytes_per_s;
		return fmax(t_ops, t_bytes);
	}
	if (op == DTXN_WR_RECV)
		return 0;
	r = dm ? m->dm_atomic_ops_per_s : m->atomic_ops_per_s;
	return r ? 1e9 / (double)r : 0;
}

static void
tn_check_service(const struct dtxn_nic_model *m)
{
	static const uint32_t lens[] = { 0, 8, 64, 1024, 4096, 65536 };
	unsigned op, i;

	for (op = 0; op < DTXN_WR_OP_MAX; op++)
		for (i = 0; i < RTE_DIM(lens); i++) {
			uint32_t len = op >= DTXN_WR_CAS && op <= DTXN_WR_MASKED_CAS ? 8 : lens[i];
			double e = tn_expect(m, op, len, false);
			double d = tn_expect(m, op, len, true);

			assert_true(fabs((double)dtxn_nic_service_ns(m, op, len, false) - e) <= 0.5);
			assert_true(fabs((double)dtxn_nic_service_ns(m, op, len, true) - d) <= 0.5);
		}
}

/* A prepared model (dtxn_nic_svc) serves every op in the unprepared model's time. */
static void
test_prepared_same(void **state)
{
	const char *names[] = { "none", "cx3", "cx5", "cx6", "cx3-v2", "cx5-v2", "cx6-v2",
				"cx5-crest-v2", "cx5-scythe-v2", "tcp" };

	(void)state;
	for (unsigned i = 0; i < RTE_DIM(names); i++) {
		char path[512];
		struct dtxn_nic_model m, raw;
		unsigned checked = 0;

		snprintf(path, sizeof(path), DTXN_SRC_CONFIG_DIR "/nic/%s.ini", names[i]);
		tn_load_ok(path, &m);
		assert_int_equal(m.svc.ready, 0);
		raw = m;
		dtxn_nic_model_prepare(&m);
		assert_int_equal(m.svc.ready, 1);
		for (unsigned op = 0; op < DTXN_WR_OP_MAX; op++)
			for (uint32_t len = 0; len <= 70000; len += len < 4200 ? 1 : 97)
				for (int dm = 0; dm < 2; dm++) {
					assert_int_equal(dtxn_nic_service_ns(&m, op, len, dm),
							 dtxn_nic_service_ns(&raw, op, len, dm));
					assert_int_equal(dtxn_nic_tx_ns(&m, op, len),
							 dtxn_nic_tx_ns(&raw, op, len));
					checked++;
				}
		/* the flat prefix of a kind is exact: one byte longer costs more */
		for (unsigned k = 0; k < DTXN_NIC_SVC_KINDS; k++)
			if (m.svc.flat_len[k] < UINT32_MAX)
				assert_true(dtxn_nic_service_ns(&raw, k == 0 ? DTXN_WR_READ : k == 1 ? DTXN_WR_WRITE : DTXN_WR_CAS,
								m.svc.flat_len[k] + 1, k == 3) >
					    m.svc.ops_ns[k]);
		assert_true(checked > 0);
	}
}

/* A unit of one OS thread (the sim's) reserves as the atomic one does. */
static void
test_one_thread_reserve(void **state)
{
	struct dtxn_nic_unit a, b;
	uint64_t seq[][2] = { { 100, 30 }, { 110, 30 }, { 500, 0 }, { 90, 7 }, { 1000, 1 } };

	(void)state;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	b.one_thread = 1;
	for (unsigned i = 0; i < RTE_DIM(seq); i++)
		assert_int_equal(dtxn_nic_reserve(&a, seq[i][0], seq[i][1]),
				 dtxn_nic_reserve(&b, seq[i][0], seq[i][1]));
	assert_int_equal(a.busy_until_ns, b.busy_until_ns);
	assert_int_equal(a.busy_ns, b.busy_ns);
	assert_int_equal(a.ops, b.ops);
}

static void
test_presets(void **state)
{
	struct dtxn_nic_model m, none;
	const char *names[] = { "cx3", "cx5", "cx6" };
	unsigned i;

	(void)state;
	/* none: file and built-in agree; everything free */
	tn_load_ok(TN_PRESET("none"), &m);
	dtxn_nic_model_none(&none);
	assert_string_equal(m.name, "none");
	assert_memory_equal(&m, &none, sizeof(m));
	assert_int_equal(dtxn_nic_service_ns(&m, DTXN_WR_READ, 1 << 20, false), 0);
	assert_int_equal(dtxn_nic_service_ns(&m, DTXN_WR_CAS, 8, false), 0);

	/* cx3: the Lotus testbed's figures (35 Mops WRITE, 2.5 Mops CAS) */
	tn_load_ok(TN_PRESET("cx3"), &m);
	assert_string_equal(m.name, "cx3");
	assert_int_equal(m.rw_ops_per_s, 35000000);
	assert_int_equal(m.atomic_ops_per_s, 2500000);
	assert_true(m.rtt_ns >= 1000 && m.rtt_ns <= 4000);
	assert_true(m.rw_bytes_per_s > 6000000000ull && m.rw_bytes_per_s <= 7000000000ull);
	/* 1e9 / 35e6 = 28.57 ns per 8 B WRITE; 400 ns per CAS */
	assert_int_equal(dtxn_nic_service_ns(&m, DTXN_WR_WRITE, 8, false), 29);
	assert_int_equal(dtxn_nic_service_ns(&m, DTXN_WR_CAS, 8, false), 400);
	assert_int_equal(dtxn_nic_service_ns(&m, DTXN_WR_FAA, 8, false), 400);
	assert_int_equal(dtxn_nic_service_ns(&m, DTXN_WR_MASKED_CAS, 8, false), 400);
	/* a 4 KiB READ is bandwidth-bound: 4096 * 8 / 54.3 Gbps = 603 ns */
	assert_int_equal(dtxn_nic_service_ns(&m, DTXN_WR_READ, 4096, false),
			 (uint64_t)llround(4096.0 * 1e9 / (double)m.rw_bytes_per_s));
	assert_true(dtxn_nic_service_ns(&m, DTXN_WR_READ, 4096, false) > 29);

	/* cx5: 100 Gbps; device-memory CAS ~110 Mops (Scythe) */
	tn_load_ok(TN_PRESET("cx5"), &m);
	assert_int_equal(m.dm_atomic_ops_per_s, 110000000);
	assert_int_equal(dtxn_nic_service_ns(&m, DTXN_WR_CAS, 8, true), 9);
	assert_true(dtxn_nic_service_ns(&m, DTXN_WR_CAS, 8, false) >
		    dtxn_nic_service_ns(&m, DTXN_WR_CAS, 8, true));

	for (i = 0; i < RTE_DIM(names); i++) {
		char path[256];

		snprintf(path, sizeof(path), DTXN_SRC_CONFIG_DIR "/nic/%s.ini", names[i]);
		tn_load_ok(path, &m);
		assert_string_equal(m.name, names[i]);
		/* every preset is a real NIC: all limits set */
		assert_true(m.rtt_ns > 0 && m.rw_ops_per_s > 0 && m.rw_bytes_per_s > 0 &&
			    m.atomic_ops_per_s > 0 && m.dm_atomic_ops_per_s > 0);
		/* atomics cost more than READ/WRITE on every ConnectX */
		assert_true(m.atomic_ops_per_s < m.rw_ops_per_s);
		tn_check_service(&m);
	}
	/* ConnectX-6 moves bytes faster than ConnectX-5, which beats ConnectX-3 */
	{
		struct dtxn_nic_model c3, c5, c6;

		tn_load_ok(TN_PRESET("cx3"), &c3);
		tn_load_ok(TN_PRESET("cx5"), &c5);
		tn_load_ok(TN_PRESET("cx6"), &c6);
		assert_true(c3.rw_bytes_per_s < c5.rw_bytes_per_s);
		assert_true(c5.rw_bytes_per_s < c6.rw_bytes_per_s);
	}
}

static void
test_reserve(void **state)
{
	struct dtxn_nic_unit u;

	(void)state;
	memset(&u, 0, sizeof(u));
	/* back-to-back arrivals serialize */
	assert_int_equal(dtxn_nic_reserve(&u, 1000, 100), 1100);
	assert_int_equal(dtxn_nic_reserve(&u, 1000, 100), 1200);
	assert_int_equal(dtxn_nic_reserve(&u, 1150, 100), 1300);
	/* an idle gap is not accumulated */
	assert_int_equal(dtxn_nic_reserve(&u, 5000, 100), 5100);
	assert_int_equal(u.busy_until_ns, 5100);
	assert_int_equal(u.busy_ns, 400);
	assert_int_equal(u.ops, 4);
	/* zero service: no time reserved, but FIFO behind the queue */
	assert_int_equal(dtxn_nic_reserve(&u, 6000, 0), 6000);
	assert_int_equal(dtxn_nic_reserve(&u, 5000, 0), 5100);
	assert_int_equal(u.busy_until_ns, 5100);
	assert_int_equal(u.ops, 6);
}

#define TN_PAR_N 200000

struct tn_par {
	struct dtxn_nic_unit *u;
	uint64_t max_served;
	uint64_t sum_served;
};

static int
tn_par_run(void *arg)
{
	struct tn_par *p = arg;
	unsigned i;

	for (i = 0; i < TN_PAR_N; i++) {
		uint64_t s = dtxn_nic_reserve(p->u, 0, 10);

		p->sum_served += s;
		p->max_served = RTE_MAX(p->max_served, s);
	}
	return 0;
}

static void
test_reserve_two_lcores(void **state)
{
	struct dtxn_nic_unit u;
	struct tn_par a = { &u, 0, 0 }, b = { &u, 0, 0 };
	unsigned worker = rte_get_next_lcore(-1, 1, 0);
	uint64_t n = 2ull * TN_PAR_N;

	(void)state;
	memset(&u, 0, sizeof(u));
	assert_int_equal(rte_eal_remote_launch(tn_par_run, &b, worker), 0);
	tn_par_run(&a);
	assert_int_equal(rte_eal_wait_lcore(worker), 0);
	/* every reservation got its own slot: 10, 20, ..., 10n exactly once */
	assert_int_equal(u.busy_until_ns, 10 * n);
	assert_int_equal(u.ops, n);
	assert_int_equal(u.busy_ns, 10 * n);
	assert_int_equal(RTE_MAX(a.max_served, b.max_served), 10 * n);
	assert_int_equal(a.sum_served + b.sum_served, 10 * n * (n + 1) / 2);
}

static const char *
tn_write(const char *name, const char *text)
{
	static char path[160];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", g_tmpdir, name);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
	return path;
}

static void
test_load_errors(void **state)
{
	struct dtxn_nic_model m, keep;
	char err[256];
	const char *p;

	(void)state;
	memset(&m, 0x5a, sizeof(m));
	keep = m;

	assert_int_equal(dtxn_nic_model_load("/nonexistent/dir/x.ini", &m, err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "/nonexistent/dir/x.ini"));
	assert_null(strchr(err, '\n'));

	p = tn_write("badnum.ini", "[nic]\nrtt_ns = 2000\nrw_mops = fast\n");
	assert_int_equal(dtxn_nic_model_load(p, &m, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, p));
	assert_non_null(strstr(err, "rw_mops"));
	assert_null(strchr(err, '\n'));

	p = tn_write("neg.ini", "[nic]\natomic_mops = -2.5\n");
	assert_int_equal(dtxn_nic_model_load(p, &m, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "atomic_mops"));

	p = tn_write("trailing.ini", "[nic]\nrw_gbps = 100x\n");
	assert_int_equal(dtxn_nic_model_load(p, &m, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "rw_gbps"));

	p = tn_write("nosection.ini", "[rnic]\nrtt_ns = 1\n");
	assert_int_equal(dtxn_nic_model_load(p, &m, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, p));

	p = tn_write("typo.ini", "[nic]\nrw_mpos = 3\n");
	assert_int_equal(dtxn_nic_model_load(p, &m, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "rw_mpos"));

	/* the model is untouched on every error */
	assert_memory_equal(&m, &keep, sizeof(m));
	/* no error buffer is fine */
	assert_int_equal(dtxn_nic_model_load(p, &m, NULL, 0), -EINVAL);

	/* missing keys mean unlimited */
	p = tn_write("partial.ini", "; only an RTT\n[nic]\nrtt_ns = 1500\natomic_mops = 0.5\n");
	assert_int_equal(dtxn_nic_model_load(p, &m, err, sizeof(err)), 0);
	assert_string_equal(m.name, "partial");
	assert_int_equal(m.rtt_ns, 1500);
	assert_int_equal(m.rw_ops_per_s, 0);
	assert_int_equal(m.rw_bytes_per_s, 0);
	assert_int_equal(m.atomic_ops_per_s, 500000);
	assert_int_equal(m.dm_atomic_ops_per_s, 0);
	assert_int_equal(dtxn_nic_service_ns(&m, DTXN_WR_READ, 4096, false), 0);
	assert_int_equal(dtxn_nic_service_ns(&m, DTXN_WR_CAS, 8, false), 2000);
}

/* ---- the model on the shm fabric ---- */

static struct dtxn_fabric *
tn_fabric(const char *name, const struct dtxn_nic_model *m)
{
	struct dtxn_fabric_conf c = {
		.size = sizeof(c), .driver = "shm", .n_mn = 1, .n_cn = 1,
		.mn_region_size = 1 << 20, .socket_id = SOCKET_ID_ANY, .name = name,
	};

	c.nic = *m;
	return dtxn_fabric_open(&c);
}

static unsigned
tn_reap(struct dtxn_cq *cq, struct dtxn_cqe *cqes, unsigned n, uint64_t timeout_ns)
{
	uint64_t deadline = dtxn_now_ns() + timeout_ns;
	unsigned got = 0;

	while (got < n && dtxn_now_ns() < deadline)
		got += dtxn_cq_poll(cq, cqes + got, n - got);
	return got;
}

static void
test_model_on_shm(void **state)
{
	struct dtxn_nic_model m;
	struct dtxn_fabric *f;
	struct dtxn_cq *cq;
	struct dtxn_qp *qp;
	const struct dtxn_nic_state *ns;
	uint64_t vals[8], got = 0, old[10], t0, t1;
	struct dtxn_wr wr[10];
	struct dtxn_cqe cqe[10];
	unsigned i;

	(void)state;
	dtxn_nic_model_none(&m);
	strcpy(m.name, "test");
	m.rtt_ns = 20000;              /* 20 us */
	m.rw_ops_per_s = 10000000;     /* 100 ns per READ/WRITE */
	m.atomic_ops_per_s = 100000;   /* 10 us per atomic */
	f = tn_fabric("tnic", &m);
	assert_non_null(f);
	cq = dtxn_cq_create(f, SOCKET_ID_ANY, 64);
	qp = dtxn_qp_create(f, cq, 1, 0, 64);
	assert_non_null(qp);
	ns = dtxn_fabric_nic_state(f, 0);
	assert_non_null(ns);

	/* one READ: completes no earlier than an RTT after it was posted */
	memset(wr, 0, sizeof(wr));
	wr[0].opcode = DTXN_WR_READ;
	wr[0].flags = DTXN_WR_F_SIGNALED;
	wr[0].local = &got;
	wr[0].len = 8;
	wr[0].raddr = DTXN_RADDR(0, 0);
	t0 = dtxn_now_ns();
	assert_int_equal(dtxn_qp_post(qp, wr), 0);
	assert_int_equal(tn_reap(cq, cqe, 1, 5000000000ull), 1);
	t1 = dtxn_now_ns();
	assert_int_equal(cqe[0].status, DTXN_WC_SUCCESS);
	assert_true(t1 - t0 >= m.rtt_ns);
	assert_int_equal(ns->rw.ops, 1);
	assert_int_equal(ns->rw.busy_ns, 100);

	/* order preserved: 8 WRITEs to one word then a READ, one doorbell */
	for (i = 0; i < 8; i++) {
		vals[i] = 500 + i;
		memset(&wr[i], 0, sizeof(wr[i]));
		wr[i].opcode = DTXN_WR_WRITE;
		wr[i].wr_id = i;
		wr[i].local = &vals[i];
		wr[i].len = 8;
		wr[i].raddr = DTXN_RADDR(0, 64);
		wr[i].flags = DTXN_WR_F_SIGNALED;
		wr[i].next = &wr[i + 1];
	}
	memset(&wr[8], 0, sizeof(wr[8]));
	wr[8].opcode = DTXN_WR_READ;
	wr[8].wr_id = 8;
	wr[8].local = &got;
	wr[8].len = 8;
	wr[8].raddr = DTXN_RADDR(0, 64);
	wr[8].flags = DTXN_WR_F_SIGNALED;
	t0 = dtxn_now_ns();
	assert_int_equal(dtxn_qp_post(qp, wr), 0);
	assert_int_equal(tn_reap(cq, cqe, 9, 5000000000ull), 9);
	t1 = dtxn_now_ns();
	for (i = 0; i < 9; i++)
		assert_int_equal(cqe[i].wr_id, i);
	assert_int_equal(got, 507);
	/* 9 ops of 100 ns each queue at the MN's unit */
	assert_true(t1 - t0 >= m.rtt_ns + 9 * 100);

	/* 10 FAAs: the atomic unit serializes them, 10 us each */
	for (i = 0; i < 10; i++) {
		memset(&wr[i], 0, sizeof(wr[i]));
		wr[i].opcode = DTXN_WR_FAA;
		wr[i].wr_id = i;
		wr[i].local = &old[i];
		wr[i].len = 8;
		wr[i].raddr = DTXN_RADDR(0, 128);
		wr[i].compare_add = 1;
		wr[i].flags = DTXN_WR_F_SIGNALED;
		wr[i].next = i < 9 ? &wr[i + 1] : NULL;
	}
	t0 = dtxn_now_ns();
	assert_int_equal(dtxn_qp_post(qp, wr), 0);
	assert_int_equal(tn_reap(cq, cqe, 10, 5000000000ull), 10);
	t1 = dtxn_now_ns();
	for (i = 0; i < 10; i++)
		assert_int_equal(old[i], i);
	assert_true(t1 - t0 >= m.rtt_ns + 10 * 10000);
	assert_int_equal(ns->atomic.ops, 10);
	assert_int_equal(ns->atomic.busy_ns, 10 * 10000);

	dtxn_qp_destroy(qp);
	dtxn_cq_destroy(cq);
	dtxn_fabric_close(f);
}

static void
test_outstanding_and_flush(void **state)
{
	struct dtxn_nic_model m;
	struct dtxn_fabric *f;
	struct dtxn_cq *cq;
	struct dtxn_qp *qp;
	struct dtxn_wr wr[65];
	struct dtxn_cqe cqe[65];
	uint64_t v = 1;
	uint8_t *mn;
	unsigned i, n;

	(void)state;
	dtxn_nic_model_none(&m);
	m.rtt_ns = 600ull * 1000 * 1000 * 1000; /* 10 minutes: nothing completes */
	f = tn_fabric("tflush", &m);
	assert_non_null(f);
	mn = dtxn_fabric_mn_base(f, 0);
	cq = dtxn_cq_create(f, SOCKET_ID_ANY, 128);
	qp = dtxn_qp_create(f, cq, 1, 0, 64);
	assert_non_null(qp);
	for (i = 0; i < 65; i++) {
		memset(&wr[i], 0, sizeof(wr[i]));
		wr[i].opcode = DTXN_WR_WRITE;
		wr[i].wr_id = i;
		wr[i].local = &v;
		wr[i].len = 8;
		wr[i].raddr = DTXN_RADDR(0, 8 * i);
		wr[i].flags = i % 2 ? DTXN_WR_F_SIGNALED : 0;
	}
	for (i = 0; i < 64; i++)
		assert_int_equal(dtxn_qp_post(qp, &wr[i]), 0);
	/* 64 outstanding (posted, not taken effect) = max_wr */
	assert_int_equal(dtxn_qp_post(qp, &wr[64]), -ENOBUFS);
	assert_int_equal(dtxn_cq_poll(cq, cqe, 65), 0);
	/* destroy flushes all 64, signaled or not; none touched memory */
	dtxn_qp_destroy(qp);
	n = dtxn_cq_poll(cq, cqe, 65);
	assert_int_equal(n, 64);
	for (i = 0; i < n; i++) {
		assert_int_equal(cqe[i].wr_id, i);
		assert_int_equal(cqe[i].status, DTXN_WC_WR_FLUSH_ERR);
	}
	for (i = 0; i < 64 * 8; i++)
		assert_int_equal(mn[i], 0);
	dtxn_cq_destroy(cq);
	dtxn_fabric_close(f);
}

/* ---- model v2 (dtxn_fabric_wr_time_ex, pure timing, no fabric) ---- */

/* A zeroed RNIC state (v2's same-word table makes it 64 KiB: not on the stack). */
static struct dtxn_nic_state *
tn_state(void)
{
	struct dtxn_nic_state *s = calloc(1, sizeof(*s));

	assert_non_null(s);
	return s;
}

static struct dtxn_wr
tn_wr(unsigned opcode, uint64_t off, uint32_t len)
{
	struct dtxn_wr wr;

	memset(&wr, 0, sizeof(wr));
	wr.opcode = (uint8_t)opcode;
	wr.raddr = DTXN_RADDR(0, off);
	wr.len = opcode >= DTXN_WR_CAS && opcode <= DTXN_WR_MASKED_CAS ? 8 : len;
	return wr;
}

/*
 * Posts @p n ops at time 0, each on its own QP (no RC order between them),
 * from no modelled poster (@p lnic NULL) or from @p lnic with model @p lm,
 * to @p rnic with model @p m; op i is @p ops[i % n_ops] on word
 * @p off + (@p spread ? 8 i : 0). @return the last effect time, ns.
 */
static uint64_t
tn_burst(const struct dtxn_nic_model *lm, struct dtxn_nic_state *lnic,
	 const struct dtxn_nic_model *m, struct dtxn_nic_state *rnic, const unsigned *ops,
	 unsigned n_ops, unsigned n, uint64_t off, bool spread)
{
	uint64_t last = 0;

	for (unsigned i = 0; i < n; i++) {
		struct dtxn_wr wr = tn_wr(ops[i % n_ops], off + (spread ? 8ull * i : 0), 8);
		uint64_t le = 0, eff, done;

		dtxn_fabric_wr_time_ex(lm, lnic, m, rnic, &wr, 0, &le, &eff, &done);
		last = RTE_MAX(last, eff);
	}
	return last;
}

static void
test_v2_presets(void **state)
{
	const char *names[] = { "cx3-v2", "cx5-v2", "cx5-crest-v2", "cx5-scythe-v2", "cx6-v2" };
	struct dtxn_nic_model m, v1;

	(void)state;
	/* cx3-v2: every figure of its file (Lotus l.63, HERD, IB spec) */
	tn_load_ok(TN_PRESET("cx3-v2"), &m);
	assert_int_equal(m.version, 2);
	assert_int_equal(m.rtt_ns, 2000);
	assert_int_equal(m.read_ops_per_s, 26000000);
	assert_int_equal(m.rw_ops_per_s, 35000000);
	assert_int_equal(m.atomic_ops_per_s, 2500000);
	assert_int_equal(m.atomic_same_ops_per_s, 2500000);
	assert_int_equal(m.header_bytes, 42);
	assert_int_equal(m.mtu_bytes, 4096);
	/* READ 1e9/26e6 = 38.5 ns (v1: 29, READ and WRITE alike); WRITE 29; CAS 400 */
	assert_int_equal(dtxn_nic_service_ns(&m, DTXN_WR_READ, 8, false), 38);
	assert_int_equal(dtxn_nic_service_ns(&m, DTXN_WR_WRITE, 8, false), 29);
	assert_int_equal(dtxn_nic_service_ns(&m, DTXN_WR_CAS, 8, false), 400);
	assert_int_equal(dtxn_nic_rmw_ns(&m, DTXN_WR_FAA, false), 400);
	assert_int_equal(dtxn_nic_rmw_ns(&m, DTXN_WR_READ, false), 0);
	/* the poster's side of an atomic costs an 8 B READ */
	assert_int_equal(dtxn_nic_tx_ns(&m, DTXN_WR_CAS, 8), 38);
	/* header bytes per packet: 64 KiB = 16 packets of 4 KiB, + 16 x 42 B */
	assert_int_equal(dtxn_nic_link_bytes(&m, 65536), 65536 + 16 * 42);
	assert_int_equal(dtxn_nic_link_bytes(&m, 0), 42);
	assert_int_equal(dtxn_nic_service_ns(&m, DTXN_WR_WRITE, 65536, false),
			 (uint64_t)llround((65536.0 + 16 * 42) * 1e9 / (double)m.rw_bytes_per_s));
	tn_load_ok(TN_PRESET("cx3"), &v1);
	assert_true(v1.version <= 1);
	assert_int_equal(dtxn_nic_link_bytes(&v1, 65536), 0);
	assert_int_equal(dtxn_nic_rmw_ns(&v1, DTXN_WR_CAS, false), 0);
	assert_int_equal(dtxn_nic_tx_ns(&v1, DTXN_WR_READ, 8), 0);
	assert_true(dtxn_nic_service_ns(&v1, DTXN_WR_WRITE, 65536, false) <
		    dtxn_nic_service_ns(&m, DTXN_WR_WRITE, 65536, false));
	assert_true(dtxn_nic_service_ns(&v1, DTXN_WR_READ, 8, false) <
		    dtxn_nic_service_ns(&m, DTXN_WR_READ, 8, false));

	/* cx5-v2: device memory 110 Mops (Scythe l.340) in the pipeline and on one word */
	tn_load_ok(TN_PRESET("cx5-v2"), &m);
	assert_int_equal(dtxn_nic_service_ns(&m, DTXN_WR_CAS, 8, true), 9);
	assert_int_equal(dtxn_nic_rmw_ns(&m, DTXN_WR_CAS, true), 9);
	assert_int_equal(dtxn_nic_service_ns(&m, DTXN_WR_CAS, 8, false), 125);
	assert_int_equal(dtxn_nic_rmw_ns(&m, DTXN_WR_CAS, false), 400);
	/* the artifacts' QP path MTU: Motor's and FORD's 4096 B (rlib qp_impl.hpp) */
	assert_int_equal(m.mtu_bytes, 4096);
	tn_load_ok(TN_PRESET("cx5-crest-v2"), &m);
	assert_int_equal(m.rtt_ns, 3000);
	assert_int_equal(m.mtu_bytes, 4096);	/* CREST's QueuePair.cc */
	/* cx5-scythe-v2: cx5-v2's RNIC with Scythe's artifact MTU, 1024 B
	 * (rdma_straw.cc): a 4 KiB READ is 4 packets there, 1 on cx5-v2 */
	tn_load_ok(TN_PRESET("cx5-scythe-v2"), &m);
	assert_int_equal(m.rtt_ns, 2000);
	assert_int_equal(m.mtu_bytes, 1024);
	assert_int_equal(dtxn_nic_link_bytes(&m, 4096), 4096 + 4 * 42);
	assert_int_equal(dtxn_nic_service_ns(&m, DTXN_WR_CAS, 8, true), 9);
	assert_int_equal(dtxn_nic_rmw_ns(&m, DTXN_WR_CAS, false), 400);
	tn_load_ok(TN_PRESET("cx5-v2"), &v1);
	assert_int_equal(dtxn_nic_link_bytes(&v1, 4096), 4096 + 42);
	assert_int_equal(m.read_ops_per_s, v1.read_ops_per_s);
	assert_int_equal(m.rw_ops_per_s, v1.rw_ops_per_s);
	assert_int_equal(m.atomic_ops_per_s, v1.atomic_ops_per_s);
	assert_int_equal(m.rw_bytes_per_s, v1.rw_bytes_per_s);
	/* cx6-v2: SMART's artifact data on ConnectX-6 (ASPLOS'24, Figs. 3-4):
	 * READ 111 Mops, WRITE 90.6, 2.35 us per READ at depth 1 */
	tn_load_ok(TN_PRESET("cx6-v2"), &m);
	assert_int_equal(m.rtt_ns, 2350);
	assert_int_equal(m.read_ops_per_s, 111000000);
	assert_int_equal(m.rw_ops_per_s, 90600000);
	assert_true(m.read_ops_per_s > m.rw_ops_per_s);

	for (unsigned i = 0; i < RTE_DIM(names); i++) {
		char path[256];

		snprintf(path, sizeof(path), DTXN_SRC_CONFIG_DIR "/nic/%s.ini", names[i]);
		tn_load_ok(path, &m);
		assert_string_equal(m.name, names[i]);
		assert_int_equal(m.version, 2);
		/* every v2 preset sets every key */
		assert_true(m.rtt_ns > 0 && m.read_ops_per_s > 0 && m.rw_ops_per_s > 0 &&
			    m.rw_bytes_per_s > 0 && m.atomic_ops_per_s > 0 &&
			    m.dm_atomic_ops_per_s > 0 && m.atomic_same_ops_per_s > 0 &&
			    m.dm_atomic_same_ops_per_s > 0 && m.header_bytes > 0 &&
			    m.mtu_bytes > 0);
		/* atomics cost more than READ; one word no faster. READ at least
		 * WRITE where the rates are ConnectX-3's or scaled from them;
		 * ConnectX-6's measured READ is the faster (SMART's data, below) */
		assert_true(m.atomic_ops_per_s < m.read_ops_per_s);
		if (strcmp(names[i], "cx6-v2") != 0)
			assert_true(m.read_ops_per_s <= m.rw_ops_per_s);
		assert_true(m.atomic_same_ops_per_s <= m.atomic_ops_per_s);
	}
}

static void
test_v2_load_errors(void **state)
{
	struct dtxn_nic_model m;
	char err[256];
	const char *p;

	(void)state;
	p = tn_write("v3.ini", "[nic]\nrtt_ns = 2000\nmodel = v3\n");
	assert_int_equal(dtxn_nic_model_load(p, &m, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, p));
	assert_non_null(strstr(err, ":3:"));
	assert_non_null(strstr(err, "v3"));
	assert_null(strchr(err, '\n'));
	/* a v1 key in a v2 file, a v2 key in a v1 file: refused, with the line */
	p = tn_write("v1key.ini", "[nic]\nmodel = v2\nrw_mops = 35\n");
	assert_int_equal(dtxn_nic_model_load(p, &m, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, ":3:"));
	assert_non_null(strstr(err, "rw_mops"));
	p = tn_write("v2key.ini", "[nic]\nread_mops = 26\n");
	assert_int_equal(dtxn_nic_model_load(p, &m, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, ":2:"));
	assert_non_null(strstr(err, "model = v2"));
	p = tn_write("v2range.ini", "[nic]\nmodel = v2\nmtu_bytes = 100\n");
	assert_int_equal(dtxn_nic_model_load(p, &m, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "mtu_bytes"));
	p = tn_write("v2hdr.ini", "[nic]\nmodel = v2\nheader_bytes = 2000\n");
	assert_int_equal(dtxn_nic_model_load(p, &m, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "header_bytes"));
	/* model = v1 is today's model */
	p = tn_write("v1.ini", "[nic]\nmodel = v1\nrw_mops = 35\n");
	assert_int_equal(dtxn_nic_model_load(p, &m, err, sizeof(err)), 0);
	assert_int_equal(m.version, 1);
	assert_int_equal(m.rw_ops_per_s, 35000000);
}

/* A single op's latency: v2 completes an unloaded READ exactly rtt after its post. */
static void
test_v2_latency(void **state)
{
	struct dtxn_nic_model m, v1;
	struct dtxn_nic_state *cn = tn_state(), *mn = tn_state();
	struct dtxn_wr wr;
	uint64_t le = 0, eff, done;

	(void)state;
	tn_load_ok(TN_PRESET("cx3-v2"), &m);
	tn_load_ok(TN_PRESET("cx3"), &v1);
	wr = tn_wr(DTXN_WR_READ, 4096, 8);
	dtxn_fabric_wr_time_ex(&m, cn, &m, mn, &wr, 1000, &le, &eff, &done);
	/* 38 ns at the CN, (2000 - 76) / 2 out, 38 ns at the MN, 962 back */
	assert_int_equal(eff, 1000 + 38 + 962 + 38);
	assert_int_equal(done, 1000 + 2000);
	assert_int_equal(le, eff);
	assert_int_equal(cn->tx.ops, 1);
	assert_int_equal(cn->tx.busy_ns, 38);
	assert_int_equal(cn->rw.ops, 0);
	assert_int_equal(mn->rw.ops, 1);
	assert_int_equal(mn->rw.busy_ns, 38);
	/* v1: rtt plus the MN's 29 ns, no CN unit */
	memset(cn, 0, sizeof(*cn));
	memset(mn, 0, sizeof(*mn));
	le = 0;
	dtxn_fabric_wr_time_ex(&v1, cn, &v1, mn, &wr, 1000, &le, &eff, &done);
	assert_int_equal(done, 1000 + 2029);
	assert_int_equal(cn->tx.ops, 0);

	/* an unloaded CAS: rtt plus its read-modify-write on the word */
	memset(cn, 0, sizeof(*cn));
	memset(mn, 0, sizeof(*mn));
	le = 0;
	wr = tn_wr(DTXN_WR_CAS, 4096, 8);
	dtxn_fabric_wr_time_ex(&m, cn, &m, mn, &wr, 1000, &le, &eff, &done);
	/* 38 at the CN, 962 out, 400 of pipeline overlapping 400 on the word, 962 back */
	assert_int_equal(eff, 1000 + 38 + 962 + 400);
	assert_int_equal(done, 1000 + 2000 - 38 + 400);
	assert_int_equal(mn->rw.busy_ns, 400);
	assert_int_equal(mn->atomic.ops, 1);
	assert_int_equal(mn->atomic.busy_ns, 400);
	memset(mn, 0, sizeof(*mn));
	le = 0;
	dtxn_fabric_wr_time_ex(&v1, NULL, &v1, mn, &wr, 1000, &le, &eff, &done);
	assert_int_equal(eff, 1000 + 1000 + 400); /* v1: the atomic unit, not rw */
	assert_int_equal(mn->rw.ops, 0);
	free(cn);
	free(mn);
}

/* Each unit's rate at saturation: n ops at once, the last one's effect. */
static void
test_v2_rates(void **state)
{
	static const unsigned rd[] = { DTXN_WR_READ }, wrt[] = { DTXN_WR_WRITE },
			      cas[] = { DTXN_WR_CAS };
	struct dtxn_nic_model m, v1;
	struct dtxn_nic_state *cn = tn_state(), *mn = tn_state();
	const unsigned n = 1000;
	uint64_t arrive;

	(void)state;
	tn_load_ok(TN_PRESET("cx3-v2"), &m);
	tn_load_ok(TN_PRESET("cx3"), &v1);
	/* MN pipeline, READ: 26 Mops = 38 ns each (no poster modelled: fly = rtt - 38) */
	arrive = (2000 - 38) / 2;
	assert_int_equal(tn_burst(NULL, NULL, &m, mn, rd, 1, n, 4096, true), arrive + n * 38);
	assert_int_equal(mn->rw.busy_ns, n * 38);
	memset(mn, 0, sizeof(*mn));
	/* WRITE: 35 Mops = 29 ns */
	assert_int_equal(tn_burst(NULL, NULL, &m, mn, wrt, 1, n, 4096, true), arrive + n * 29);
	memset(mn, 0, sizeof(*mn));
	/* CAS on distinct words: 2.5 Mops = 400 ns of pipeline (each word's 400 overlaps it) */
	assert_int_equal(tn_burst(NULL, NULL, &m, mn, cas, 1, n, 4096, true), arrive + n * 400);
	memset(mn, 0, sizeof(*mn));
	/* v1: READ at the rw unit's 35 Mops, not 26 */
	assert_int_equal(tn_burst(NULL, NULL, &v1, mn, rd, 1, n, 4096, true), 1000 + n * 29);
	memset(mn, 0, sizeof(*mn));

	/* the CN's own pipeline: one CN, READs to an unmodelled node, 38 ns each */
	assert_int_equal(tn_burst(&m, cn, &m, NULL, rd, 1, n, 4096, true), n * 38);
	assert_int_equal(cn->tx.ops, n);
	assert_int_equal(cn->tx.busy_until_ns, n * 38);
	memset(cn, 0, sizeof(*cn));
	/* ... WRITEs leave it at 35 Mops, and bytes count: 4 KiB WRITEs are link-bound */
	assert_int_equal(tn_burst(&m, cn, &m, NULL, wrt, 1, n, 4096, true), n * 29);
	memset(cn, 0, sizeof(*cn));
	/* ... a v1 CN model has no such unit: every op leaves at its post */
	assert_int_equal(tn_burst(&v1, cn, &v1, NULL, rd, 1, n, 4096, true), 0);
	assert_int_equal(cn->tx.ops, 0);

	/* the link: 64 KiB WRITEs are byte-bound, headers included */
	{
		struct dtxn_wr wr = tn_wr(DTXN_WR_WRITE, 4096, 65536);
		uint64_t svc = (uint64_t)llround((65536.0 + 16 * 42) * 1e9 /
						 (double)m.rw_bytes_per_s);
		uint64_t le, eff, done, first = 0;

		memset(mn, 0, sizeof(*mn));
		for (unsigned i = 0; i < 10; i++) {
			le = 0;
			dtxn_fabric_wr_time_ex(NULL, NULL, &m, mn, &wr, 0, &le, &eff, &done);
			if (i == 0)
				first = eff;
		}
		assert_int_equal(eff - first, 9 * svc);
	}
	free(cn);
	free(mn);
}

/* Same-word atomics serialize at the word's rate; spread ones at the pipeline's. */
static void
test_v2_same_word(void **state)
{
	static const unsigned cas[] = { DTXN_WR_CAS }, faa[] = { DTXN_WR_FAA };
	struct dtxn_nic_model m, v1;
	struct dtxn_nic_state *mn = tn_state();
	const unsigned n = 64;
	uint64_t arrive, same, spread;

	(void)state;
	/* cx5-v2: 125 ns of pipeline per CAS (8 Mops), 400 ns per CAS on one word;
	 * an 8 B READ's 14 ns (74 Mops) sets the flight: (2000 - 14) / 2 out */
	tn_load_ok(TN_PRESET("cx5-v2"), &m);
	arrive = (2000 - 14) / 2;
	same = tn_burst(NULL, NULL, &m, mn, cas, 1, n, 4096, false);
	assert_int_equal(same, arrive + n * 400);               /* 2.5 Mops */
	assert_int_equal(mn->atomic.ops, n);
	assert_int_equal(mn->atomic.busy_ns, n * 400);          /* the busiest word */
	memset(mn, 0, sizeof(*mn));
	spread = tn_burst(NULL, NULL, &m, mn, faa, 1, n, 4096, true);
	assert_int_equal(spread, arrive + (n - 1) * 125 + 400); /* 8 Mops */
	assert_int_equal(mn->atomic.busy_ns, 400);
	memset(mn, 0, sizeof(*mn));
	/* device memory (offsets below DTXN_FABRIC_DM_BYTES): 9 ns per CAS on one word */
	assert_int_equal(tn_burst(NULL, NULL, &m, mn, cas, 1, n, 0, false), arrive + n * 9);
	assert_int_equal(mn->dm_atomic.busy_ns, n * 9);
	assert_int_equal(mn->atomic.ops, 0);
	memset(mn, 0, sizeof(*mn));
	/* v1: one word or many, the atomic unit's 125 ns each */
	tn_load_ok(TN_PRESET("cx5"), &v1);
	same = tn_burst(NULL, NULL, &v1, mn, cas, 1, n, 4096, false);
	memset(mn, 0, sizeof(*mn));
	spread = tn_burst(NULL, NULL, &v1, mn, cas, 1, n, 4096, true);
	assert_int_equal(same, spread);
	assert_int_equal(same, 1000 + n * 125);
	free(mn);
}

/* The shared pipeline: 50% CAS + 50% READ saturate at the harmonic combination. */
static void
test_v2_mixed(void **state)
{
	static const unsigned mix[] = { DTXN_WR_CAS, DTXN_WR_READ };
	struct dtxn_nic_model m, v1;
	struct dtxn_nic_state *mn = tn_state();
	const unsigned n = 1000;
	uint64_t last, busy;
	double rate;

	(void)state;
	tn_load_ok(TN_PRESET("cx3-v2"), &m);
	last = tn_burst(NULL, NULL, &m, mn, mix, 2, n, 4096, true);
	/* n/2 x 400 + n/2 x 38 ns of one pipeline: 2 / (400 + 38) ns = 4.57 Mops */
	busy = mn->rw.busy_ns;
	assert_int_equal(busy, n / 2 * 400 + n / 2 * 38);
	assert_int_equal(mn->rw.ops, n);
	rate = (double)n * 1e3 / (double)busy; /* Mops */
	assert_true(fabs(rate - 2.0 / (1.0 / 2.5 + 1.0 / 26.0)) < 0.01);
	assert_true(last >= busy);
	memset(mn, 0, sizeof(*mn));
	/* v1: CAS and READ on two units, bound by the atomic one alone: 5 Mops */
	tn_load_ok(TN_PRESET("cx3"), &v1);
	last = tn_burst(NULL, NULL, &v1, mn, mix, 2, n, 4096, true);
	assert_int_equal(mn->rw.busy_ns, n / 2 * 29);
	assert_int_equal(mn->atomic.busy_ns, n / 2 * 400);
	assert_int_equal(last, 1000 + n / 2 * 400);
	free(mn);
}

static void
tn_rmtmp(void)
{
	static const char *const files[] = {
		"badnum.ini", "neg.ini", "trailing.ini", "nosection.ini", "typo.ini",
		"partial.ini", "v3.ini", "v1key.ini", "v2key.ini", "v2range.ini", "v2hdr.ini",
		"v1.ini",
	};
	char path[160];
	unsigned i;

	for (i = 0; i < RTE_DIM(files); i++) {
		snprintf(path, sizeof(path), "%s/%s", g_tmpdir, files[i]);
		unlink(path);
	}
	rmdir(g_tmpdir);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_presets),
		cmocka_unit_test(test_reserve),
		cmocka_unit_test(test_reserve_two_lcores),
		cmocka_unit_test(test_load_errors),
		cmocka_unit_test(test_model_on_shm),
		cmocka_unit_test(test_outstanding_and_flush),
		cmocka_unit_test(test_v2_presets),
		cmocka_unit_test(test_v2_load_errors),
		cmocka_unit_test(test_v2_latency),
		cmocka_unit_test(test_v2_rates),
		cmocka_unit_test(test_v2_same_word),
		cmocka_unit_test(test_v2_mixed),
		cmocka_unit_test(test_prepared_same),
		cmocka_unit_test(test_one_thread_reserve),
	};
	int rc;

	if (dtxn_unit_eal_init("ut_nic") != 0)
		return 1;
	snprintf(g_tmpdir, sizeof(g_tmpdir), "/tmp/ut_nic.XXXXXX");
	if (mkdtemp(g_tmpdir) == NULL)
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	tn_rmtmp();
	dtxn_unit_eal_fini();
	return rc;
}
