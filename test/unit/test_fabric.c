/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of lib/fabric and the shm driver with the NIC model "none":
 * registry, open errors, atomics across two lcores, chain checks, send
 * queue limits, counters. What every driver promises (verbs, RC order,
 * atomics, masked CAS, doorbell chains, selective signaling, error
 * completions, SEND/RECV) is test_conformance.c, run on each driver.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <rte_common.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_memory.h>
#include <rte_string_fns.h>

#include "dtxn_fabric.h"
#include "dtxn_fabric_driver.h"
#include "dtxn_sched.h"
#include "unit_eal.h"
#include "ut_fabric.h"

#define TF_REGION (1u << 20)
#define TF_N_MN 2
#define TF_N_CN 2
#define TF_CN0 TF_N_MN        /* node id of the first CN */
#define TF_CN1 (TF_N_MN + 1)

struct tf_env {
	struct dtxn_fabric *f;
	struct dtxn_cq *cq;
	struct dtxn_qp *qp;   /* CN0 -> MN0 */
	uint8_t *mn0;         /* MN0's region, for checks */
};

static struct dtxn_fabric *
tf_open(const char *name)
{
	struct dtxn_fabric_conf c = {
		.size = sizeof(c),
		.driver = "shm",
		.n_mn = TF_N_MN,
		.n_cn = TF_N_CN,
		.mn_region_size = TF_REGION,
		.socket_id = SOCKET_ID_ANY,
		.name = name,
	};

	dtxn_nic_model_none(&c.nic);
	return dtxn_fabric_open(&c);
}

static int
tf_setup(void **state)
{
	static struct tf_env env;

	memset(&env, 0, sizeof(env));
	env.f = tf_open("tfab");
	if (env.f == NULL)
		return -1;
	env.cq = dtxn_cq_create(env.f, SOCKET_ID_ANY, 256);
	if (env.cq == NULL)
		return -1;
	env.qp = dtxn_qp_create(env.f, env.cq, TF_CN0, 0, 64);
	if (env.qp == NULL)
		return -1;
	env.mn0 = dtxn_fabric_mn_base(env.f, 0);
	*state = &env;
	return 0;
}

static int
tf_teardown(void **state)
{
	struct tf_env *env = *state;

	dtxn_qp_destroy(env->qp);
	dtxn_cq_destroy(env->cq);
	dtxn_fabric_close(env->f);
	return 0;
}

/* Polls until @p n completions arrived or 200 ms passed without them. */
static unsigned
tf_reap(struct dtxn_cq *cq, struct dtxn_cqe *cqes, unsigned n)
{
	uint64_t deadline = dtxn_now_ns() + 200 * 1000 * 1000;
	unsigned got = 0;

	while (got < n && dtxn_now_ns() < deadline)
		got += dtxn_cq_poll(cq, cqes + got, n - got);
	return got;
}

/* ---------------------------------------------------------------- */

static int g_dummy_open_called;

static struct dtxn_fabric *
tf_dummy_open(const struct dtxn_fabric_conf *conf)
{
	(void)conf;
	g_dummy_open_called = 1;
	rte_errno = ENOMEM;
	return NULL;
}

static void
test_registry(void **state)
{
	const struct dtxn_fabric_ops *shm = dtxn_fabric_driver_find("shm");
	static struct dtxn_fabric_ops bad, dummy; /* the registry keeps pointers */
	struct dtxn_fabric_conf c;

	(void)state;
	assert_non_null(shm);
	assert_string_equal(shm->name, "shm");
	assert_null(dtxn_fabric_driver_find("nosuch"));

	/* duplicate name */
	assert_int_equal(dtxn_fabric_register(shm), -EEXIST);
	/* missing mandatory op */
	bad = *shm;
	bad.name = "incomplete";
	bad.poll = NULL;
	assert_int_equal(dtxn_fabric_register(&bad), -EINVAL);
	assert_null(dtxn_fabric_driver_find("incomplete"));
	/* nic_state is optional */
	dummy = *shm;
	dummy.name = "dummy";
	dummy.nic_state = NULL;
	dummy.open = tf_dummy_open;
	assert_int_equal(dtxn_fabric_register(&dummy), 0);
	assert_ptr_equal(dtxn_fabric_driver_find("dummy"), &dummy);

	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.driver = "nosuch";
	c.n_mn = 1;
	c.n_cn = 1;
	c.mn_region_size = 4096;
	assert_null(dtxn_fabric_open(&c));
	assert_int_equal(rte_errno, ENOENT);
	/* bad conf never reaches the driver */
	c.driver = "dummy";
	c.n_mn = 0;
	assert_null(dtxn_fabric_open(&c));
	assert_int_equal(rte_errno, EINVAL);
	assert_int_equal(g_dummy_open_called, 0);
	c.n_mn = 1;
	assert_null(dtxn_fabric_open(&c));
	assert_int_equal(rte_errno, ENOMEM);
	assert_int_equal(g_dummy_open_called, 1);

	assert_string_equal(dtxn_wr_opcode_name(DTXN_WR_READ), "read");
	assert_string_equal(dtxn_wr_opcode_name(DTXN_WR_WRITE), "write");
	assert_string_equal(dtxn_wr_opcode_name(DTXN_WR_CAS), "cas");
	assert_string_equal(dtxn_wr_opcode_name(DTXN_WR_FAA), "faa");
	assert_string_equal(dtxn_wr_opcode_name(DTXN_WR_MASKED_CAS), "masked_cas");
	assert_string_equal(dtxn_wr_opcode_name(DTXN_WR_SEND), "send");
	assert_string_equal(dtxn_wr_opcode_name(DTXN_WR_RECV), "recv");
}

static void
test_open_errors(void **state)
{
	struct dtxn_fabric_conf c = {
		.size = sizeof(c), .driver = "shm", .n_mn = 1, .n_cn = 1,
		.socket_id = SOCKET_ID_ANY, .name = "tbig",
	};
	struct dtxn_fabric *f;

	(void)state;
	dtxn_nic_model_none(&c.nic);
	/* far more than the 512 MB given to the EAL */
	c.mn_region_size = UINT64_C(64) << 30;
	assert_null(dtxn_fabric_open(&c));
	assert_int_equal(rte_errno, ENOMEM);
	/* and nothing leaked: a normal open with the same name works */
	c.mn_region_size = 64 << 20;
	f = dtxn_fabric_open(&c);
	assert_non_null(f);
	assert_string_equal(dtxn_fabric_driver_name(f), "shm");
	assert_int_equal(dtxn_fabric_conf(f)->mn_region_size, 64 << 20);
	assert_non_null(dtxn_fabric_mn_base(f, 0));
	assert_int_equal((uintptr_t)dtxn_fabric_mn_base(f, 0) % 64, 0);
	assert_null(dtxn_fabric_mn_base(f, 1));
	assert_null(dtxn_fabric_nic_state(f, 0)); /* model none */
	/* bad CQ / QP arguments */
	assert_null(dtxn_cq_create(f, SOCKET_ID_ANY, 100));
	assert_int_equal(rte_errno, EINVAL);
	assert_null(dtxn_qp_create(f, NULL, 1, 0, 64));
	dtxn_fabric_close(f);
}

/* ---- atomicity across two lcores ---- */

#define TF_PAR_N 20000

struct tf_par {
	struct dtxn_fabric *f;
	uint16_t node;
	int use_cas;
	uint64_t off;
	int rc;
};

static int
tf_par_run(void *arg)
{
	struct tf_par *p = arg;
	struct dtxn_cq *cq = dtxn_cq_create(p->f, (int)rte_socket_id(), 64);
	struct dtxn_qp *qp = cq == NULL ? NULL : dtxn_qp_create(p->f, cq, p->node, 0, 64);
	uint64_t expect = 0, old;
	struct dtxn_wr wr;
	struct dtxn_cqe cqe;
	unsigned done = 0;

	p->rc = -1;
	if (qp == NULL)
		goto out;
	while (done < TF_PAR_N) {
		ut_wr(&wr, p->use_cas ? DTXN_WR_CAS : DTXN_WR_FAA, done, &old, 8,
		      DTXN_RADDR(0, p->off), DTXN_WR_F_SIGNALED);
		wr.compare_add = p->use_cas ? expect : 1;
		wr.swap = expect + 1;
		if (dtxn_qp_post(qp, &wr) != 0 || tf_reap(cq, &cqe, 1) != 1 ||
		    cqe.status != DTXN_WC_SUCCESS)
			goto out;
		if (!p->use_cas || old == expect)
			done++;
		expect = p->use_cas && old != expect ? old : expect + 1;
	}
	p->rc = 0;
out:
	dtxn_qp_destroy(qp);
	dtxn_cq_destroy(cq);
	return p->rc;
}

static void
tf_par(struct tf_env *env, int use_cas, uint64_t off)
{
	unsigned worker = rte_get_next_lcore(-1, 1, 0);
	struct tf_par a = { env->f, TF_CN0, use_cas, off, -1 };
	struct tf_par b = { env->f, TF_CN1, use_cas, off, -1 };

	assert_true(worker < RTE_MAX_LCORE);
	assert_int_equal(rte_eal_remote_launch(tf_par_run, &b, worker), 0);
	tf_par_run(&a);
	assert_int_equal(rte_eal_wait_lcore(worker), 0);
	assert_int_equal(a.rc, 0);
	assert_int_equal(b.rc, 0);
	assert_int_equal(ut_word(env->mn0, off), 2ull * TF_PAR_N);
}

static void
test_atomic_two_lcores(void **state)
{
	tf_par(*state, 0, 4096);  /* FAA */
	tf_par(*state, 1, 4104);  /* CAS-based increments */
}

static void
test_chain_errors(void **state)
{
	struct tf_env *env = *state;
	struct dtxn_fabric_counters before = *dtxn_qp_counters(env->qp);
	uint8_t big[DTXN_WR_INLINE_MAX + 8];
	uint64_t v = 0x5555, old;
	struct dtxn_wr good, bad;
	struct dtxn_cqe cqe;
	unsigned i;

	memset(big, 0, sizeof(big));
	memset(env->mn0 + 32768, 0, 8);
	for (i = 0; i < 9; i++) {
		ut_wr(&good, DTXN_WR_WRITE, 1, &v, 8, DTXN_RADDR(0, 32768), DTXN_WR_F_SIGNALED);
		ut_wr(&bad, DTXN_WR_READ, 2, &old, 8, DTXN_RADDR(0, 0), DTXN_WR_F_SIGNALED);
		switch (i) {
		case 0: bad.opcode = DTXN_WR_OP_MAX; break;           /* unknown opcode */
		case 1: bad.opcode = DTXN_WR_CAS; bad.len = 4; break; /* atomic not 8 B */
		case 2: bad.opcode = DTXN_WR_FAA; bad.raddr = DTXN_RADDR(0, 12); break;
		case 3: bad.len = DTXN_WR_LEN_MAX + 1; break;          /* too long */
		case 4: bad.opcode = DTXN_WR_WRITE; bad.local = big;   /* inline too long */
			bad.len = sizeof(big); bad.flags |= DTXN_WR_F_INLINE; break;
		case 5: bad.opcode = DTXN_WR_RECV; break;              /* RECV in chain */
		case 6: bad.raddr = DTXN_RADDR(1, 0); break;           /* other MN */
		case 7: bad.local = NULL; break;                       /* no buffer */
		case 8: bad.opcode = DTXN_WR_CAS; bad.local = NULL; break;
		}
		good.next = &bad;
		assert_int_equal(dtxn_qp_post(env->qp, &good), -EINVAL);
	}
	/* nothing was posted: no completion, memory and counters unchanged */
	assert_int_equal(dtxn_cq_poll(env->cq, &cqe, 1), 0);
	assert_int_equal(ut_word(env->mn0, 32768), 0);
	assert_memory_equal(&before, dtxn_qp_counters(env->qp), sizeof(before));
	assert_int_equal(dtxn_qp_post(env->qp, NULL), -EINVAL);
	/* post_recv refuses anything but RECV */
	ut_wr(&bad, DTXN_WR_READ, 2, &old, 8, DTXN_RADDR(0, 0), 0);
	assert_int_equal(dtxn_qp_post_recv(env->qp, &bad), -EINVAL);
	/* one-sided op on a QP to a CN */
	{
		struct dtxn_qp *cn = dtxn_qp_create(env->f, env->cq, TF_CN0, TF_CN1, 64);

		assert_non_null(cn);
		ut_wr(&bad, DTXN_WR_READ, 2, &old, 8, DTXN_RADDR(TF_CN1, 0), 0);
		assert_int_equal(dtxn_qp_post(cn, &bad), -EINVAL);
		dtxn_qp_destroy(cn);
	}
}

static void
test_enobufs(void **state)
{
	struct tf_env *env = *state;
	struct dtxn_wr wr[65];
	struct dtxn_cqe cqe[4];
	uint64_t v = 3;
	unsigned i;

	for (i = 0; i < 65; i++) {
		ut_wr(&wr[i], DTXN_WR_WRITE, i, &v, 8, DTXN_RADDR(0, 40000), 0);
		wr[i].next = i < 64 ? &wr[i + 1] : NULL;
	}
	/* 65 > max_wr 64: refused whole */
	assert_int_equal(dtxn_qp_post(env->qp, wr), -ENOBUFS);
	assert_int_equal(dtxn_qp_counters(env->qp)->ops[DTXN_WR_WRITE], 0);
	wr[63].next = NULL;
	assert_int_equal(dtxn_qp_post(env->qp, wr), 0);
	/* model none: unsignaled WRs took effect and freed their slots */
	assert_int_equal(dtxn_cq_poll(env->cq, cqe, 4), 0);
	assert_int_equal(dtxn_qp_post(env->qp, wr), 0);
	assert_int_equal(dtxn_qp_counters(env->qp)->ops[DTXN_WR_WRITE], 128);
	assert_int_equal(ut_word(env->mn0, 40000), 3);
}

static void
test_counters(void **state)
{
	struct tf_env *env = *state;
	struct dtxn_cq *cq = dtxn_cq_create(env->f, SOCKET_ID_ANY, 64);
	struct dtxn_qp *qp = dtxn_qp_create(env->f, cq, TF_CN1, 1, 64);
	const struct dtxn_fabric_counters *c;
	uint8_t buf[100];
	uint64_t old;
	struct dtxn_wr wr[4];
	struct dtxn_cqe cqe[4];
	unsigned i;

	assert_non_null(qp);
	assert_int_equal(dtxn_qp_remote_node(qp), 1);
	c = dtxn_qp_counters(qp);
	for (i = 0; i < DTXN_WR_OP_MAX; i++)
		assert_int_equal(c->ops[i], 0);
	memset(buf, 1, sizeof(buf));
	ut_wr(&wr[0], DTXN_WR_WRITE, 0, buf, 100, DTXN_RADDR(1, 0), 0);
	ut_wr(&wr[1], DTXN_WR_READ, 1, buf, 40, DTXN_RADDR(1, 0), 0);
	ut_wr(&wr[2], DTXN_WR_READ, 2, buf, 60, DTXN_RADDR(1, 0), 0);
	ut_wr(&wr[3], DTXN_WR_CAS, 3, &old, 8, DTXN_RADDR(1, 0), DTXN_WR_F_SIGNALED);
	for (i = 0; i < 3; i++)
		wr[i].next = &wr[i + 1];
	assert_int_equal(dtxn_qp_post(qp, wr), 0);
	assert_int_equal(tf_reap(cq, cqe, 1), 1);
	assert_int_equal(c->ops[DTXN_WR_WRITE], 1);
	assert_int_equal(c->bytes[DTXN_WR_WRITE], 100);
	assert_int_equal(c->ops[DTXN_WR_READ], 2);
	assert_int_equal(c->bytes[DTXN_WR_READ], 100);
	assert_int_equal(c->ops[DTXN_WR_CAS], 1);
	assert_int_equal(c->bytes[DTXN_WR_CAS], 8);
	assert_int_equal(c->ops[DTXN_WR_FAA], 0);
	/* a refused chain is not counted */
	wr[3].len = 4;
	assert_int_equal(dtxn_qp_post(qp, wr), -EINVAL);
	assert_int_equal(c->ops[DTXN_WR_READ], 2);
	dtxn_qp_destroy(qp);
	dtxn_cq_destroy(cq);
}

/*
 * The emulated NIC's time (dtxn_cq_nic_cycles(), the report's
 * host.cn_cpu_ns_per_txn.nic): 0 on a new CQ and NULL; moves once its
 * QPs' WRs executed. shm samples 1 post or poll in 32 at random, so after
 * 4096 signaled posts (and their polls) a sample was taken but with a
 * probability below 1e-56. Asserts that the counter counts, not how much.
 */
static void
test_nic_cycles(void **state)
{
	struct tf_env *env = *state;
	struct dtxn_cq *cq = dtxn_cq_create(env->f, SOCKET_ID_ANY, 64);
	struct dtxn_qp *qp = dtxn_qp_create(env->f, cq, TF_CN1, 1, 64);
	uint8_t buf[64];
	struct dtxn_wr wr;
	struct dtxn_cqe cqe;

	assert_non_null(qp);
	assert_int_equal(dtxn_cq_nic_cycles(NULL), 0);
	assert_int_equal(dtxn_cq_nic_cycles(cq), 0);
	memset(buf, 3, sizeof(buf));
	for (unsigned i = 0; i < 4096; i++) {
		ut_wr(&wr, i % 2 ? DTXN_WR_READ : DTXN_WR_WRITE, i, buf, sizeof(buf),
		      DTXN_RADDR(1, 64 * (i % 16)), DTXN_WR_F_SIGNALED);
		assert_int_equal(dtxn_qp_post(qp, &wr), 0);
		assert_int_equal(tf_reap(cq, &cqe, 1), 1);
	}
	assert_true(dtxn_cq_nic_cycles(cq) > 0);
	dtxn_qp_destroy(qp);
	dtxn_cq_destroy(cq);
}

/* What dtxn_fabric_mn_watch()'s hook saw. */
struct tf_watch {
	unsigned calls;
	uint64_t off;
	uint32_t len;
};

static void
tf_on_write(void *arg, uint64_t off, uint32_t len)
{
	struct tf_watch *w = arg;

	w->calls++;
	w->off = off;
	w->len = len;
}

/* dtxn_fabric_mn_watch(): called after a WRITE that overlaps the range, never for others. */
static void
test_mn_watch(void **state)
{
	struct tf_env *env = *state;
	struct tf_watch seen = { 0 };
	uint8_t buf[64];
	uint64_t old = 0;
	struct dtxn_wr wr;
	struct dtxn_cqe cqe;

	memset(buf, 9, sizeof(buf));
	assert_int_equal(dtxn_fabric_mn_watch(NULL, 0, 1024, 512, tf_on_write, &seen), -EINVAL);
	assert_int_equal(dtxn_fabric_mn_watch(env->f, 0, 1024, 0, tf_on_write, &seen), -EINVAL);
	assert_int_equal(dtxn_fabric_mn_watch(env->f, 0, 1024, 512, NULL, &seen), -EINVAL);
	assert_int_equal(dtxn_fabric_mn_watch(env->f, TF_CN0, 1024, 512, tf_on_write, &seen),
			 -EINVAL);
	assert_int_equal(dtxn_fabric_mn_watch(env->f, 0, 1024, 512, tf_on_write, &seen), 0);
	assert_int_equal(dtxn_fabric_mn_watch(env->f, 0, 0, 64, tf_on_write, &seen), -EEXIST);
	/* WRITEs before, overlapping the start, inside, after; a READ and a CAS inside */
	static const struct { uint64_t off; uint32_t len; unsigned calls; } c[] = {
		{ 960, 64, 0 }, { 1000, 64, 1 }, { 1200, 32, 2 }, { 1536, 64, 2 },
	};
	for (unsigned i = 0; i < RTE_DIM(c); i++) {
		ut_wr(&wr, DTXN_WR_WRITE, 1, buf, c[i].len, DTXN_RADDR(0, c[i].off),
		      DTXN_WR_F_SIGNALED);
		assert_int_equal(dtxn_qp_post(env->qp, &wr), 0);
		assert_int_equal(tf_reap(env->cq, &cqe, 1), 1);
		assert_int_equal(seen.calls, c[i].calls);
	}
	assert_int_equal(seen.off, 1200);
	assert_int_equal(seen.len, 32);
	assert_int_equal(env->mn0[1200], 9);
	ut_wr(&wr, DTXN_WR_READ, 2, buf, 64, DTXN_RADDR(0, 1024), DTXN_WR_F_SIGNALED);
	assert_int_equal(dtxn_qp_post(env->qp, &wr), 0);
	assert_int_equal(tf_reap(env->cq, &cqe, 1), 1);
	ut_wr(&wr, DTXN_WR_CAS, 3, &old, 8, DTXN_RADDR(0, 1024), DTXN_WR_F_SIGNALED);
	assert_int_equal(dtxn_qp_post(env->qp, &wr), 0);
	assert_int_equal(tf_reap(env->cq, &cqe, 1), 1);
	assert_int_equal(seen.calls, 2);
	dtxn_fabric_mn_unwatch(env->f, 0);
	ut_wr(&wr, DTXN_WR_WRITE, 4, buf, 32, DTXN_RADDR(0, 1200), DTXN_WR_F_SIGNALED);
	assert_int_equal(dtxn_qp_post(env->qp, &wr), 0);
	assert_int_equal(tf_reap(env->cq, &cqe, 1), 1);
	assert_int_equal(seen.calls, 2);
	dtxn_fabric_mn_unwatch(env->f, DTXN_MAX_NODES); /* no-op */
}

/*
 * dtxn_fabric_drain_node() (a dead CN process's posted WRs, shm): WRs
 * posted but not yet due (a 120 s round trip) take effect in the call, in
 * order, as the RNIC would have applied them; READs, and a WRITE whose
 * payload is outside DPDK memory (a dead process's stack), are dropped;
 * a second call finds nothing; nodes that are not CNs are refused.
 */
static void
test_drain_node(void **state)
{
	struct dtxn_fabric_conf c = {
		.size = sizeof(c), .driver = "shm", .n_mn = TF_N_MN, .n_cn = TF_N_CN,
		.mn_region_size = TF_REGION, .socket_id = SOCKET_ID_ANY, .name = "tdrain",
	};
	uint64_t *old = rte_zmalloc("tdrain_old", 3 * sizeof(uint64_t), 8);
	uint8_t *heap = rte_zmalloc("tdrain_buf", 64, 8), stack[64], inl[16], rd[64];
	struct dtxn_wr wr[6];
	struct dtxn_fabric *f;
	struct dtxn_cq *cq;
	struct dtxn_qp *qp;
	uint8_t *mn0;

	(void)state;
	assert_non_null(old);
	assert_non_null(heap);
	dtxn_nic_model_none(&c.nic);
	strlcpy(c.nic.name, "slow", sizeof(c.nic.name));
	c.nic.rtt_ns = 120ull * 1000 * 1000 * 1000;
	f = dtxn_fabric_open(&c);
	assert_non_null(f);
	cq = dtxn_cq_create(f, SOCKET_ID_ANY, 64);
	qp = dtxn_qp_create(f, cq, TF_CN0, 0, 64);
	assert_non_null(qp);
	mn0 = dtxn_fabric_mn_base(f, 0);
	memset(heap, 7, 64);
	memset(stack, 5, sizeof(stack));
	memset(inl, 3, sizeof(inl));
	*(uint64_t *)(mn0 + 256) = 41;
	/* one chain: WRITE (heap), WRITE (stack: private), inline WRITE, CAS 41 -> 42, FAA +5, READ */
	ut_wr(&wr[0], DTXN_WR_WRITE, 1, heap, 64, DTXN_RADDR(0, 0), 0);
	ut_wr(&wr[1], DTXN_WR_WRITE, 2, stack, 64, DTXN_RADDR(0, 64), 0);
	ut_wr(&wr[2], DTXN_WR_WRITE, 3, inl, sizeof(inl), DTXN_RADDR(0, 128), DTXN_WR_F_INLINE);
	ut_wr(&wr[3], DTXN_WR_CAS, 4, &old[0], 8, DTXN_RADDR(0, 256), 0);
	wr[3].compare_add = 41;
	wr[3].swap = 42;
	ut_wr(&wr[4], DTXN_WR_FAA, 5, &old[1], 8, DTXN_RADDR(0, 264), 0);
	wr[4].compare_add = 5;
	ut_wr(&wr[5], DTXN_WR_READ, 6, rd, 64, DTXN_RADDR(0, 0), DTXN_WR_F_SIGNALED);
	for (unsigned i = 0; i < 5; i++)
		wr[i].next = &wr[i + 1];
	assert_int_equal(dtxn_qp_post(qp, wr), 0);
	assert_int_equal(dtxn_cq_poll(cq, (struct dtxn_cqe[4]){ 0 }, 4), 0);
	assert_int_equal(mn0[0], 0); /* not due for a minute */

	assert_int_equal(dtxn_fabric_drain_node(NULL, TF_CN0), -EINVAL);
	assert_int_equal(dtxn_fabric_drain_node(f, 0), -EINVAL);
	assert_int_equal(dtxn_fabric_drain_node(f, TF_N_MN + TF_N_CN), -EINVAL);
	assert_int_equal(dtxn_fabric_drain_node(f, TF_CN1), 0); /* posted nothing */
	assert_int_equal(dtxn_fabric_drain_node(f, TF_CN0), 4);
	assert_int_equal(mn0[0], 7);
	assert_int_equal(mn0[63], 7);
	assert_int_equal(mn0[64], 0);  /* the private payload stays out */
	assert_int_equal(mn0[128], 3);
	assert_int_equal(*(uint64_t *)(mn0 + 256), 42);
	assert_int_equal(old[0], 41);
	assert_int_equal(*(uint64_t *)(mn0 + 264), 5);
	assert_int_equal(dtxn_fabric_drain_node(f, TF_CN0), 0);

	dtxn_qp_destroy(qp);
	dtxn_cq_destroy(cq);
	dtxn_fabric_close(f);
	rte_free(heap);
	rte_free(old);
}

/* dtxn_fabric_addr_parse(): the cluster file's addr= (doc/guides/mlx5.md). */
static void
test_addr_parse(void **state)
{
	static const char *const bad[] = {
		"", ":", "10.0.0.1", "10.0.0.1:", ":7471", "10.0.0.1:0", "10.0.0.1:65536",
		"10.0.0.1:-1", "10.0.0.1:+7", "10.0.0.1: 7", "10.0.0.1:7471x", "10.0.0.1:0x10",
		"10.0.0.256:7471", "10.0.0:7471", "host.example:7471", "[::1]:7471",
		"10.0.0.1:999999", "10.0.0.1:7:7", "255.255.255.255.255:1",
	};
	uint32_t ip = 0xdeadbeef;
	uint16_t port = 0xbeef;

	(void)state;
	assert_int_equal(dtxn_fabric_addr_parse("10.0.0.1:7471", &ip, &port), 0);
	assert_int_equal(ip, htonl(0x0a000001));
	assert_int_equal(port, 7471);
	assert_int_equal(dtxn_fabric_addr_parse("255.255.255.255:65535", &ip, &port), 0);
	assert_int_equal(ip, 0xffffffff);
	assert_int_equal(port, 65535);
	assert_int_equal(strlen("255.255.255.255:65535") + 1, DTXN_FABRIC_ADDR_MAX);
	assert_int_equal(dtxn_fabric_addr_parse("127.0.0.1:1", NULL, NULL), 0);
	assert_int_equal(dtxn_fabric_addr_parse(NULL, &ip, &port), -EINVAL);
	for (unsigned i = 0; i < RTE_DIM(bad); i++) {
		ip = 7;
		port = 7;
		if (dtxn_fabric_addr_parse(bad[i], &ip, &port) != -EINVAL)
			fail_msg("'%s' was accepted", bad[i]);
		assert_int_equal(ip, 7); /* nothing written on an error */
		assert_int_equal(port, 7);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_registry),
		cmocka_unit_test(test_addr_parse),
		cmocka_unit_test(test_open_errors),
		cmocka_unit_test_setup_teardown(test_atomic_two_lcores, tf_setup, tf_teardown),
		cmocka_unit_test_setup_teardown(test_chain_errors, tf_setup, tf_teardown),
		cmocka_unit_test_setup_teardown(test_enobufs, tf_setup, tf_teardown),
		cmocka_unit_test_setup_teardown(test_counters, tf_setup, tf_teardown),
		cmocka_unit_test_setup_teardown(test_nic_cycles, tf_setup, tf_teardown),
		cmocka_unit_test_setup_teardown(test_mn_watch, tf_setup, tf_teardown),
		cmocka_unit_test(test_drain_node),
	};
	int rc;

	if (dtxn_unit_eal_init("ut_fabric") != 0)
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	dtxn_unit_eal_fini();
	return rc;
}
