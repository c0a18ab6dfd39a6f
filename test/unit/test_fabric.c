/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of lib/fabric and the shm driver with the NIC model "none":
 * registry, one-sided verbs, RC order, atomics (also across two lcores),
 * doorbell chains, selective signaling, errors, SEND/RECV, counters.
 */
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
#include <rte_memory.h>

#include "dtxn_fabric.h"
#include "dtxn_fabric_driver.h"
#include "dtxn_sched.h"
#include "masked_cas_ref.h"
#include "unit_eal.h"

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

static void
tf_wr(struct dtxn_wr *wr, uint8_t op, uint64_t id, void *local, uint32_t len,
      dtxn_raddr_t raddr, uint8_t flags)
{
	memset(wr, 0, sizeof(*wr));
	wr->opcode = op;
	wr->wr_id = id;
	wr->local = local;
	wr->len = len;
	wr->raddr = raddr;
	wr->flags = flags;
}

static uint64_t
tf_word(const struct tf_env *env, uint64_t off)
{
	uint64_t v;

	memcpy(&v, env->mn0 + off, 8);
	return v;
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

static void
test_read_write(void **state)
{
	struct tf_env *env = *state;
	uint8_t src[200], dst[200];
	struct dtxn_wr wr;
	struct dtxn_cqe cqe;
	unsigned i;

	for (i = 0; i < sizeof(src); i++)
		src[i] = (uint8_t)(i * 7 + 3);
	tf_wr(&wr, DTXN_WR_WRITE, 11, src, sizeof(src), DTXN_RADDR(0, 4093),
	      DTXN_WR_F_SIGNALED);
	assert_int_equal(dtxn_qp_post(env->qp, &wr), 0);
	assert_int_equal(tf_reap(env->cq, &cqe, 1), 1);
	assert_int_equal(cqe.wr_id, 11);
	assert_int_equal(cqe.status, DTXN_WC_SUCCESS);
	assert_int_equal(cqe.opcode, DTXN_WR_WRITE);
	assert_memory_equal(env->mn0 + 4093, src, sizeof(src));

	memset(dst, 0, sizeof(dst));
	tf_wr(&wr, DTXN_WR_READ, 12, dst, sizeof(dst), DTXN_RADDR(0, 4093),
	      DTXN_WR_F_SIGNALED);
	assert_int_equal(dtxn_qp_post(env->qp, &wr), 0);
	assert_int_equal(tf_reap(env->cq, &cqe, 1), 1);
	assert_int_equal(cqe.wr_id, 12);
	assert_int_equal(cqe.status, DTXN_WC_SUCCESS);
	assert_int_equal(cqe.byte_len, sizeof(dst));
	assert_memory_equal(dst, src, sizeof(src));

	/* inline WRITE: the caller's buffer may change right after posting */
	memset(src, 0xab, 64);
	tf_wr(&wr, DTXN_WR_WRITE, 13, src, 64, DTXN_RADDR(0, 0),
	      DTXN_WR_F_SIGNALED | DTXN_WR_F_INLINE);
	assert_int_equal(dtxn_qp_post(env->qp, &wr), 0);
	memset(src, 0, 64);
	assert_int_equal(tf_reap(env->cq, &cqe, 1), 1);
	for (i = 0; i < 64; i++)
		assert_int_equal(env->mn0[i], 0xab);
}

static void
test_order(void **state)
{
	struct tf_env *env = *state;
	struct dtxn_wr wr[17];
	uint64_t vals[16], got = 0;
	struct dtxn_cqe cqe[17];
	unsigned i;

	/* WRITE then READ of the same word in one chain: the READ sees it */
	vals[0] = 0x1122334455667788ull;
	tf_wr(&wr[0], DTXN_WR_WRITE, 1, &vals[0], 8, DTXN_RADDR(0, 512), 0);
	tf_wr(&wr[1], DTXN_WR_READ, 2, &got, 8, DTXN_RADDR(0, 512), DTXN_WR_F_SIGNALED);
	wr[0].next = &wr[1];
	assert_int_equal(dtxn_qp_post(env->qp, wr), 0);
	assert_int_equal(tf_reap(env->cq, cqe, 1), 1);
	assert_int_equal(cqe[0].wr_id, 2);
	assert_int_equal(got, vals[0]);

	/* a chain of 16 signaled WRITEs to one word ends with the last */
	for (i = 0; i < 16; i++) {
		vals[i] = 1000 + i;
		tf_wr(&wr[i], DTXN_WR_WRITE, 100 + i, &vals[i], 8, DTXN_RADDR(0, 520),
		      DTXN_WR_F_SIGNALED);
		wr[i].next = i + 1 < 16 ? &wr[i + 1] : NULL;
	}
	assert_int_equal(dtxn_qp_post(env->qp, wr), 0);
	assert_int_equal(tf_reap(env->cq, cqe, 16), 16);
	for (i = 0; i < 16; i++)
		assert_int_equal(cqe[i].wr_id, 100 + i); /* completions in order */
	assert_int_equal(tf_word(env, 520), 1015);
}

static void
test_atomics(void **state)
{
	struct tf_env *env = *state;
	uint64_t init = 41, old = 0;
	struct dtxn_wr wr;
	struct dtxn_cqe cqe;

	memcpy(env->mn0 + 1024, &init, 8);
	/* CAS failure: wrong compare, old value returned, memory unchanged */
	tf_wr(&wr, DTXN_WR_CAS, 1, &old, 8, DTXN_RADDR(0, 1024), DTXN_WR_F_SIGNALED);
	wr.compare_add = 40;
	wr.swap = 99;
	assert_int_equal(dtxn_qp_post(env->qp, &wr), 0);
	assert_int_equal(tf_reap(env->cq, &cqe, 1), 1);
	assert_int_equal(cqe.status, DTXN_WC_SUCCESS);
	assert_int_equal(cqe.byte_len, 8);
	assert_int_equal(old, 41);
	assert_int_equal(tf_word(env, 1024), 41);
	/* CAS success */
	old = 0;
	wr.compare_add = 41;
	assert_int_equal(dtxn_qp_post(env->qp, &wr), 0);
	assert_int_equal(tf_reap(env->cq, &cqe, 1), 1);
	assert_int_equal(old, 41);
	assert_int_equal(tf_word(env, 1024), 99);
	/* FAA returns the old value */
	tf_wr(&wr, DTXN_WR_FAA, 2, &old, 8, DTXN_RADDR(0, 1024), DTXN_WR_F_SIGNALED);
	wr.compare_add = 5;
	assert_int_equal(dtxn_qp_post(env->qp, &wr), 0);
	assert_int_equal(tf_reap(env->cq, &cqe, 1), 1);
	assert_int_equal(cqe.opcode, DTXN_WR_FAA);
	assert_int_equal(old, 99);
	assert_int_equal(tf_word(env, 1024), 104);
}

static void
test_masked_cas(void **state)
{
	struct tf_env *env = *state;
	uint64_t init = 0x8000000000000001ull, old = 0;
	struct dtxn_wr wr;
	struct dtxn_cqe cqe;

	memcpy(env->mn0 + 2048, &init, 8);
	/* CREST-style lock of cells 2 and 4 (MSB = cell 0): compare those bits to 0 */
	tf_wr(&wr, DTXN_WR_MASKED_CAS, 1, &old, 8, DTXN_RADDR(0, 2048), DTXN_WR_F_SIGNALED);
	wr.compare_mask = (1ull << 61) | (1ull << 59);
	wr.compare_add = 0;
	wr.swap_mask = wr.compare_mask;
	wr.swap = wr.compare_mask;
	assert_int_equal(dtxn_qp_post(env->qp, &wr), 0);
	assert_int_equal(tf_reap(env->cq, &cqe, 1), 1);
	assert_int_equal(cqe.status, DTXN_WC_SUCCESS);
	assert_int_equal(old, init);
	/* only the swapped bits changed; bits 63 and 0 are kept */
	assert_int_equal(tf_word(env, 2048), init | wr.compare_mask);

	/* the same lock again fails: bit 61 is now set */
	old = 0;
	assert_int_equal(dtxn_qp_post(env->qp, &wr), 0);
	assert_int_equal(tf_reap(env->cq, &cqe, 1), 1);
	assert_int_equal(old, init | wr.compare_mask);
	assert_int_equal(tf_word(env, 2048), init | wr.compare_mask);

	/* bits outside compare_mask are ignored; outside swap_mask kept */
	wr.compare_mask = 1ull << 63;         /* bit 63 is set in memory */
	wr.compare_add = ~0ull;               /* all ones, only bit 63 compared */
	wr.swap_mask = 0xFFull;
	wr.swap = 0x1234ull;                  /* only 0x34 lands */
	assert_int_equal(dtxn_qp_post(env->qp, &wr), 0);
	assert_int_equal(tf_reap(env->cq, &cqe, 1), 1);
	assert_int_equal(tf_word(env, 2048),
			 (init & ~0xFFull) | (1ull << 61) | (1ull << 59) | 0x34);
}

/* Masked CAS against the reference model (masked_cas_ref.h) on random words and masks. */
static void
test_masked_cas_model(void **state)
{
	struct tf_env *env = *state;
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	unsigned swapped = 0;

	for (unsigned i = 0; i < 4096; i++) {
		struct mcas_case c;
		struct dtxn_wr wr;
		struct dtxn_cqe cqe;
		uint64_t old = 0;

		mcas_case_make(&seed, i, &c);
		memcpy(env->mn0 + 4096, &c.word, 8);
		tf_wr(&wr, DTXN_WR_MASKED_CAS, i, &old, 8, DTXN_RADDR(0, 4096), DTXN_WR_F_SIGNALED);
		wr.compare_add = c.compare;
		wr.compare_mask = c.compare_mask;
		wr.swap = c.swap;
		wr.swap_mask = c.swap_mask;
		assert_int_equal(dtxn_qp_post(env->qp, &wr), 0);
		assert_int_equal(tf_reap(env->cq, &cqe, 1), 1);
		assert_int_equal(cqe.status, DTXN_WC_SUCCESS);
		assert_int_equal(old, c.word);
		assert_int_equal(tf_word(env, 4096), mcas_ref(&c));
		swapped += (c.word & c.compare_mask) == (c.compare & c.compare_mask);
	}
	assert_true(swapped > 4096 / 5 && swapped < 4096 / 2); /* both outcomes exercised */
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
		tf_wr(&wr, p->use_cas ? DTXN_WR_CAS : DTXN_WR_FAA, done, &old, 8,
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
	assert_int_equal(tf_word(env, off), 2ull * TF_PAR_N);
}

static void
test_atomic_two_lcores(void **state)
{
	tf_par(*state, 0, 4096);  /* FAA */
	tf_par(*state, 1, 4104);  /* CAS-based increments */
}

static void
test_doorbell_chain(void **state)
{
	struct tf_env *env = *state;
	uint64_t w = 7, r = 0, cas_old = 0, faa_old = 0, mcas_old = 0;
	struct dtxn_wr wr[5];
	struct dtxn_cqe cqe[5];
	unsigned i;

	tf_wr(&wr[0], DTXN_WR_WRITE, 0, &w, 8, DTXN_RADDR(0, 8192), DTXN_WR_F_SIGNALED);
	tf_wr(&wr[1], DTXN_WR_CAS, 1, &cas_old, 8, DTXN_RADDR(0, 8192), DTXN_WR_F_SIGNALED);
	wr[1].compare_add = 7;
	wr[1].swap = 10;
	tf_wr(&wr[2], DTXN_WR_FAA, 2, &faa_old, 8, DTXN_RADDR(0, 8192), DTXN_WR_F_SIGNALED);
	wr[2].compare_add = 3;
	tf_wr(&wr[3], DTXN_WR_MASKED_CAS, 3, &mcas_old, 8, DTXN_RADDR(0, 8192),
	      DTXN_WR_F_SIGNALED);
	wr[3].compare_mask = 0xF;
	wr[3].compare_add = 13;
	wr[3].swap_mask = 0xF0;
	wr[3].swap = 0x50;
	tf_wr(&wr[4], DTXN_WR_READ, 4, &r, 8, DTXN_RADDR(0, 8192), DTXN_WR_F_SIGNALED);
	for (i = 0; i < 4; i++)
		wr[i].next = &wr[i + 1];
	assert_int_equal(dtxn_qp_post(env->qp, wr), 0);
	assert_int_equal(tf_reap(env->cq, cqe, 5), 5);
	for (i = 0; i < 5; i++) {
		assert_int_equal(cqe[i].wr_id, i);
		assert_int_equal(cqe[i].opcode, wr[i].opcode);
		assert_int_equal(cqe[i].status, DTXN_WC_SUCCESS);
	}
	assert_int_equal(cas_old, 7);
	assert_int_equal(faa_old, 10);
	assert_int_equal(mcas_old, 13);
	assert_int_equal(r, 13 | 0x50);
}

static void
test_selective_signaling(void **state)
{
	struct tf_env *env = *state;
	uint64_t v = 1, r;
	struct dtxn_wr wr[4];
	struct dtxn_cqe cqe[4];
	unsigned i;

	/* 4 WRs, only the last signaled: one completion */
	for (i = 0; i < 4; i++) {
		tf_wr(&wr[i], DTXN_WR_WRITE, i, &v, 8, DTXN_RADDR(0, 16384 + 8 * i),
		      i == 3 ? DTXN_WR_F_SIGNALED : 0);
		wr[i].next = i < 3 ? &wr[i + 1] : NULL;
	}
	assert_int_equal(dtxn_qp_post(env->qp, wr), 0);
	assert_int_equal(tf_reap(env->cq, cqe, 4), 1);
	assert_int_equal(cqe[0].wr_id, 3);
	for (i = 0; i < 4; i++)
		assert_int_equal(tf_word(env, 16384 + 8 * i), 1);

	/* an unsignaled WR that fails still produces an error completion */
	tf_wr(&wr[0], DTXN_WR_READ, 20, &r, 8, DTXN_RADDR(0, TF_REGION), 0);
	tf_wr(&wr[1], DTXN_WR_WRITE, 21, &v, 8, DTXN_RADDR(0, 0), 0);
	tf_wr(&wr[2], DTXN_WR_READ, 22, &r, 8, DTXN_RADDR(0, 0), DTXN_WR_F_SIGNALED);
	wr[0].next = &wr[1];
	wr[1].next = &wr[2];
	assert_int_equal(dtxn_qp_post(env->qp, wr), 0);
	assert_int_equal(tf_reap(env->cq, cqe, 3), 2);
	assert_int_equal(cqe[0].wr_id, 20);
	assert_int_equal(cqe[0].status, DTXN_WC_REM_ACCESS_ERR);
	assert_int_equal(cqe[1].wr_id, 22);
	assert_int_equal(cqe[1].status, DTXN_WC_SUCCESS);
}

static void
test_bounds(void **state)
{
	struct tf_env *env = *state;
	uint64_t v = 0xdead, r = 0;
	struct dtxn_wr wr;
	struct dtxn_cqe cqe;
	const uint64_t offs[] = { TF_REGION - 4, TF_REGION, DTXN_RADDR_OFF_MASK - 3 };
	unsigned i;

	for (i = 0; i < RTE_DIM(offs); i++) {
		tf_wr(&wr, DTXN_WR_WRITE, i, &v, 8, DTXN_RADDR(0, offs[i]), DTXN_WR_F_SIGNALED);
		assert_int_equal(dtxn_qp_post(env->qp, &wr), 0);
		assert_int_equal(tf_reap(env->cq, &cqe, 1), 1);
		assert_int_equal(cqe.status, DTXN_WC_REM_ACCESS_ERR);
	}
	/* last word of the region is fine; an atomic one past it is not */
	tf_wr(&wr, DTXN_WR_WRITE, 9, &v, 8, DTXN_RADDR(0, TF_REGION - 8), DTXN_WR_F_SIGNALED);
	assert_int_equal(dtxn_qp_post(env->qp, &wr), 0);
	assert_int_equal(tf_reap(env->cq, &cqe, 1), 1);
	assert_int_equal(cqe.status, DTXN_WC_SUCCESS);
	assert_int_equal(tf_word(env, TF_REGION - 8), 0xdead);
	tf_wr(&wr, DTXN_WR_FAA, 10, &r, 8, DTXN_RADDR(0, TF_REGION), DTXN_WR_F_SIGNALED);
	assert_int_equal(dtxn_qp_post(env->qp, &wr), 0);
	assert_int_equal(tf_reap(env->cq, &cqe, 1), 1);
	assert_int_equal(cqe.status, DTXN_WC_REM_ACCESS_ERR);
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
		tf_wr(&good, DTXN_WR_WRITE, 1, &v, 8, DTXN_RADDR(0, 32768), DTXN_WR_F_SIGNALED);
		tf_wr(&bad, DTXN_WR_READ, 2, &old, 8, DTXN_RADDR(0, 0), DTXN_WR_F_SIGNALED);
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
	assert_int_equal(tf_word(env, 32768), 0);
	assert_memory_equal(&before, dtxn_qp_counters(env->qp), sizeof(before));
	assert_int_equal(dtxn_qp_post(env->qp, NULL), -EINVAL);
	/* post_recv refuses anything but RECV */
	tf_wr(&bad, DTXN_WR_READ, 2, &old, 8, DTXN_RADDR(0, 0), 0);
	assert_int_equal(dtxn_qp_post_recv(env->qp, &bad), -EINVAL);
	/* one-sided op on a QP to a CN */
	{
		struct dtxn_qp *cn = dtxn_qp_create(env->f, env->cq, TF_CN0, TF_CN1, 64);

		assert_non_null(cn);
		tf_wr(&bad, DTXN_WR_READ, 2, &old, 8, DTXN_RADDR(TF_CN1, 0), 0);
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
		tf_wr(&wr[i], DTXN_WR_WRITE, i, &v, 8, DTXN_RADDR(0, 40000), 0);
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
	assert_int_equal(tf_word(env, 40000), 3);
}

static void
test_send_recv(void **state)
{
	struct tf_env *env = *state;
	struct dtxn_cq *cq1 = dtxn_cq_create(env->f, SOCKET_ID_ANY, 64);
	struct dtxn_qp *a, *b;
	char msg[32] = "hello, memory node", buf[64], tiny[8];
	struct dtxn_wr s, r;
	struct dtxn_cqe cqe;

	assert_non_null(cq1);
	a = dtxn_qp_create(env->f, env->cq, TF_CN0, TF_CN1, 64);
	assert_non_null(a);
	tf_wr(&s, DTXN_WR_SEND, 1, msg, sizeof(msg), 0, DTXN_WR_F_SIGNALED);
	/* no peer QP yet */
	assert_int_equal(dtxn_qp_post(a, &s), -ENOTCONN);
	b = dtxn_qp_create(env->f, cq1, TF_CN1, TF_CN0, 64);
	assert_non_null(b);

	/* RECV first, then SEND */
	memset(buf, 0, sizeof(buf));
	tf_wr(&r, DTXN_WR_RECV, 77, buf, sizeof(buf), 0, 0);
	assert_int_equal(dtxn_qp_post_recv(b, &r), 0);
	assert_int_equal(dtxn_qp_post(a, &s), 0);
	assert_int_equal(tf_reap(env->cq, &cqe, 1), 1);
	assert_int_equal(cqe.wr_id, 1);
	assert_int_equal(cqe.opcode, DTXN_WR_SEND);
	assert_int_equal(cqe.status, DTXN_WC_SUCCESS);
	assert_int_equal(tf_reap(cq1, &cqe, 1), 1);
	assert_int_equal(cqe.wr_id, 77);
	assert_int_equal(cqe.opcode, DTXN_WR_RECV);
	assert_int_equal(cqe.status, DTXN_WC_SUCCESS);
	assert_int_equal(cqe.byte_len, sizeof(msg));
	assert_int_equal(cqe.src_node, TF_CN0);
	assert_memory_equal(buf, msg, sizeof(msg));

	/* SEND first (inline, unsignaled), RECV later: still delivered */
	s.flags = DTXN_WR_F_INLINE;
	s.len = 5;
	assert_int_equal(dtxn_qp_post(a, &s), 0);
	msg[0] = 'X'; /* inline: already copied */
	assert_int_equal(dtxn_cq_poll(cq1, &cqe, 1), 0);
	assert_int_equal(dtxn_qp_post_recv(b, &r), 0);
	assert_int_equal(tf_reap(cq1, &cqe, 1), 1);
	assert_int_equal(cqe.byte_len, 5);
	assert_memory_equal(buf, "hello", 5);

	/* reply in the other direction, too large for the buffer */
	tf_wr(&r, DTXN_WR_RECV, 88, tiny, sizeof(tiny), 0, 0);
	assert_int_equal(dtxn_qp_post_recv(a, &r), 0);
	tf_wr(&s, DTXN_WR_SEND, 2, msg, sizeof(msg), 0, 0);
	assert_int_equal(dtxn_qp_post(b, &s), 0);
	assert_int_equal(tf_reap(cq1, &cqe, 1), 0); /* unsignaled SEND */
	assert_int_equal(tf_reap(env->cq, &cqe, 1), 1);
	assert_int_equal(cqe.wr_id, 88);
	assert_int_equal(cqe.status, DTXN_WC_LOC_LEN_ERR);
	assert_int_equal(cqe.src_node, TF_CN1);

	/* destroy flushes posted RECVs */
	tf_wr(&r, DTXN_WR_RECV, 99, buf, sizeof(buf), 0, 0);
	assert_int_equal(dtxn_qp_post_recv(b, &r), 0);
	dtxn_qp_destroy(b);
	assert_int_equal(tf_reap(cq1, &cqe, 1), 1);
	assert_int_equal(cqe.wr_id, 99);
	assert_int_equal(cqe.status, DTXN_WC_WR_FLUSH_ERR);
	/* and a is no longer connected */
	tf_wr(&s, DTXN_WR_SEND, 3, msg, 8, 0, 0);
	assert_int_equal(dtxn_qp_post(a, &s), -ENOTCONN);
	dtxn_qp_destroy(a);
	dtxn_cq_destroy(cq1);
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
	tf_wr(&wr[0], DTXN_WR_WRITE, 0, buf, 100, DTXN_RADDR(1, 0), 0);
	tf_wr(&wr[1], DTXN_WR_READ, 1, buf, 40, DTXN_RADDR(1, 0), 0);
	tf_wr(&wr[2], DTXN_WR_READ, 2, buf, 60, DTXN_RADDR(1, 0), 0);
	tf_wr(&wr[3], DTXN_WR_CAS, 3, &old, 8, DTXN_RADDR(1, 0), DTXN_WR_F_SIGNALED);
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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_registry),
		cmocka_unit_test(test_open_errors),
		cmocka_unit_test_setup_teardown(test_read_write, tf_setup, tf_teardown),
		cmocka_unit_test_setup_teardown(test_order, tf_setup, tf_teardown),
		cmocka_unit_test_setup_teardown(test_atomics, tf_setup, tf_teardown),
		cmocka_unit_test_setup_teardown(test_masked_cas, tf_setup, tf_teardown),
		cmocka_unit_test_setup_teardown(test_masked_cas_model, tf_setup, tf_teardown),
		cmocka_unit_test_setup_teardown(test_atomic_two_lcores, tf_setup, tf_teardown),
		cmocka_unit_test_setup_teardown(test_doorbell_chain, tf_setup, tf_teardown),
		cmocka_unit_test_setup_teardown(test_selective_signaling, tf_setup, tf_teardown),
		cmocka_unit_test_setup_teardown(test_bounds, tf_setup, tf_teardown),
		cmocka_unit_test_setup_teardown(test_chain_errors, tf_setup, tf_teardown),
		cmocka_unit_test_setup_teardown(test_enobufs, tf_setup, tf_teardown),
		cmocka_unit_test_setup_teardown(test_send_recv, tf_setup, tf_teardown),
		cmocka_unit_test_setup_teardown(test_counters, tf_setup, tf_teardown),
	};
	int rc;

	if (dtxn_unit_eal_init("ut_fabric") != 0)
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	dtxn_unit_eal_fini();
	return rc;
}
