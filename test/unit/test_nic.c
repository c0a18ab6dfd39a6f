/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the RNIC performance model: preset figures and service
 * times, busy-until reservations, INI errors, and the model driving the
 * shm fabric (lower bounds on completion times only, never upper bounds).
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

static void
tn_rmtmp(void)
{
	static const char *const files[] = {
		"badnum.ini", "neg.ini", "trailing.ini", "nosection.ini", "typo.ini",
		"partial.ini",
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
