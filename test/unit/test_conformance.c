/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The fabric conformance suite (issue 16): one test of the fabric API's
 * promises (dtxn_fabric.h), written once and run against every driver:
 * `test_conformance shm|sim|mlx5|ucx`. Ordering on a QP, doorbell chains,
 * selective signaling, atomics' return values, masked-CAS semantics,
 * SEND/RECV, error completions. On sim the clock is virtual and the test
 * advances it to the next event; on mlx5 it needs an RDMA device and is
 * skipped (exit 77, with a line saying why) without one.
 *
 * What the drivers may differ in is said where it is tested: after a WR
 * fails, later WRs on its QP complete normally on the emulated drivers
 * and with DTXN_WC_WR_FLUSH_ERR on hardware (the QP is in the error state).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_memory.h>

#include "dtxn_fabric.h"
#include "dtxn_fabric_sim.h"
#include "dtxn_sched.h"
#include "masked_cas_ref.h"
#include "unit_eal.h"
#include "ut_fabric.h"

#define TC_REGION (1u << 20)
#define TC_N_MN 2
#define TC_N_CN 2
#define TC_CN0 TC_N_MN
#define TC_CN1 (TC_N_MN + 1)
/** Exit status meson counts as "skipped". */
#define TC_SKIP 77

static const char *g_driver;

struct tc_env {
	struct dtxn_fabric *f;
	struct dtxn_cq *cq;
	struct dtxn_qp *qp;   /* CN0 -> MN0 */
	uint8_t *mn0;         /* MN0's region, for checks by its CPU */
	uint8_t *buf;         /* local buffers: DPDK memory (registered on mlx5) */
};

static struct dtxn_fabric *
tc_open(void)
{
	struct dtxn_fabric_conf c = {
		.size = sizeof(c), .driver = g_driver, .n_mn = TC_N_MN, .n_cn = TC_N_CN,
		.mn_region_size = TC_REGION, .socket_id = SOCKET_ID_ANY, .name = "tconf",
	};

	struct dtxn_fabric *f;

	dtxn_nic_model_none(&c.nic);
	if (strcmp(g_driver, "sim") == 0)
		dtxn_clock_set_virtual(1000);
	f = dtxn_fabric_open(&c);
	if (f != NULL)
		dtxn_fabric_publish(f); /* the regions are "loaded": ucx answers connects */
	return f;
}

static int
tc_setup(void **state)
{
	static struct tc_env env;

	memset(&env, 0, sizeof(env));
	env.f = tc_open();
	if (env.f == NULL)
		return -1;
	env.cq = dtxn_cq_create(env.f, SOCKET_ID_ANY, 256);
	env.qp = env.cq == NULL ? NULL : dtxn_qp_create(env.f, env.cq, TC_CN0, 0, 64);
	env.buf = rte_zmalloc("tconf", 8192, 64);
	if (env.qp == NULL || env.buf == NULL)
		return -1;
	env.mn0 = dtxn_fabric_mn_base(env.f, 0);
	*state = &env;
	return 0;
}

static int
tc_teardown(void **state)
{
	struct tc_env *env = *state;

	dtxn_qp_destroy(env->qp);
	dtxn_cq_destroy(env->cq);
	dtxn_fabric_close(env->f);
	rte_free(env->buf);
	return 0;
}

/*
 * Reaps until @p n completions arrived or none can come: on sim, runs the
 * events due (advancing virtual time); elsewhere, polls for up to 2 s.
 */
static unsigned
tc_reap(struct dtxn_fabric *f, struct dtxn_cq *cq, struct dtxn_cqe *cqes, unsigned n)
{
	uint64_t deadline = dtxn_now_ns() + UINT64_C(2000000000);
	unsigned got = 0;

	while (got < n) {
		got += dtxn_cq_poll(cq, cqes + got, n - got);
		if (got == n)
			break;
		if (dtxn_sim_is(f)) {
			uint64_t t = dtxn_sim_next_event_ns(f);

			if (t == UINT64_MAX)
				break;
			dtxn_clock_advance(t);
			(void)dtxn_sim_run_events(f, t);
		} else if (dtxn_now_ns() > deadline) {
			break;
		}
	}
	return got;
}

/* Polls once more after the work is done: nothing else may be there. */
static unsigned
tc_extra(struct dtxn_fabric *f, struct dtxn_cq *cq)
{
	struct dtxn_cqe e;

	if (dtxn_sim_is(f))
		return tc_reap(f, cq, &e, 1);
	return dtxn_cq_poll(cq, &e, 1);
}

static void
tc_set_word(struct tc_env *env, uint64_t off, uint64_t v)
{
	memcpy(env->mn0 + off, &v, 8);
}

/* ---------------------------------------------------------------- */

static void
test_read_write(void **state)
{
	struct tc_env *env = *state;
	uint8_t *src = env->buf, *dst = env->buf + 1024;
	struct dtxn_wr wr;
	struct dtxn_cqe cqe;
	unsigned i;

	for (i = 0; i < 200; i++)
		src[i] = (uint8_t)(i * 7 + 3);
	/* an odd offset and length */
	ut_wr(&wr, DTXN_WR_WRITE, 11, src, 200, DTXN_RADDR(0, 4093), DTXN_WR_F_SIGNALED);
	assert_int_equal(dtxn_qp_post(env->qp, &wr), 0);
	assert_int_equal(tc_reap(env->f, env->cq, &cqe, 1), 1);
	assert_int_equal(cqe.wr_id, 11);
	assert_int_equal(cqe.status, DTXN_WC_SUCCESS);
	assert_int_equal(cqe.opcode, DTXN_WR_WRITE);
	assert_memory_equal(env->mn0 + 4093, src, 200);

	ut_wr(&wr, DTXN_WR_READ, 12, dst, 200, DTXN_RADDR(0, 4093), DTXN_WR_F_SIGNALED);
	assert_int_equal(dtxn_qp_post(env->qp, &wr), 0);
	assert_int_equal(tc_reap(env->f, env->cq, &cqe, 1), 1);
	assert_int_equal(cqe.wr_id, 12);
	assert_int_equal(cqe.status, DTXN_WC_SUCCESS);
	assert_int_equal(cqe.opcode, DTXN_WR_READ);
	assert_int_equal(cqe.byte_len, 200);
	assert_memory_equal(dst, src, 200);

	/* inline WRITE: the caller's buffer may change right after posting */
	memset(src, 0xab, 64);
	ut_wr(&wr, DTXN_WR_WRITE, 13, src, 64, DTXN_RADDR(0, 0), DTXN_WR_F_SIGNALED | DTXN_WR_F_INLINE);
	assert_int_equal(dtxn_qp_post(env->qp, &wr), 0);
	memset(src, 0, 64);
	assert_int_equal(tc_reap(env->f, env->cq, &cqe, 1), 1);
	for (i = 0; i < 64; i++)
		assert_int_equal(env->mn0[i], 0xab);
	/* a local buffer outside DPDK memory (the stack) works as well */
	{
		uint8_t stack[16] = "on the stack";

		ut_wr(&wr, DTXN_WR_WRITE, 14, stack, 16, DTXN_RADDR(0, 7000), DTXN_WR_F_SIGNALED);
		assert_int_equal(dtxn_qp_post(env->qp, &wr), 0);
		assert_int_equal(tc_reap(env->f, env->cq, &cqe, 1), 1);
		assert_memory_equal(env->mn0 + 7000, "on the stack", 13);
	}
}

static void
test_order(void **state)
{
	struct tc_env *env = *state;
	uint64_t *vals = (uint64_t *)(void *)env->buf, *got = vals + 16;
	struct dtxn_wr wr[17];
	struct dtxn_cqe cqe[17];
	unsigned i;

	/* WRITE then READ of the same word in one chain: the READ sees it */
	vals[0] = 0x1122334455667788ull;
	*got = 0;
	ut_wr(&wr[0], DTXN_WR_WRITE, 1, &vals[0], 8, DTXN_RADDR(0, 512), 0);
	ut_wr(&wr[1], DTXN_WR_READ, 2, got, 8, DTXN_RADDR(0, 512), DTXN_WR_F_SIGNALED);
	wr[0].next = &wr[1];
	assert_int_equal(dtxn_qp_post(env->qp, wr), 0);
	assert_int_equal(tc_reap(env->f, env->cq, cqe, 1), 1);
	assert_int_equal(cqe[0].wr_id, 2);
	assert_int_equal(*got, vals[0]);

	/* 16 signaled WRITEs to one word: completions in order, the last wins */
	for (i = 0; i < 16; i++) {
		vals[i] = 1000 + i;
		ut_wr(&wr[i], DTXN_WR_WRITE, 100 + i, &vals[i], 8, DTXN_RADDR(0, 520),
		      DTXN_WR_F_SIGNALED);
		wr[i].next = i + 1 < 16 ? &wr[i + 1] : NULL;
	}
	assert_int_equal(dtxn_qp_post(env->qp, wr), 0);
	assert_int_equal(tc_reap(env->f, env->cq, cqe, 16), 16);
	for (i = 0; i < 16; i++)
		assert_int_equal(cqe[i].wr_id, 100 + i);
	assert_int_equal(ut_word(env->mn0, 520), 1015);
	/* an atomic after a WRITE in the same chain sees the WRITE */
	vals[0] = 500;
	ut_wr(&wr[0], DTXN_WR_WRITE, 1, &vals[0], 8, DTXN_RADDR(0, 528), 0);
	ut_wr(&wr[1], DTXN_WR_FAA, 2, got, 8, DTXN_RADDR(0, 528), DTXN_WR_F_SIGNALED);
	wr[1].compare_add = 1;
	wr[0].next = &wr[1];
	wr[1].next = NULL;
	assert_int_equal(dtxn_qp_post(env->qp, wr), 0);
	assert_int_equal(tc_reap(env->f, env->cq, cqe, 1), 1);
	assert_int_equal(*got, 500);
	assert_int_equal(ut_word(env->mn0, 528), 501);
}

static void
test_atomics(void **state)
{
	struct tc_env *env = *state;
	uint64_t *old = (uint64_t *)(void *)env->buf;
	struct dtxn_wr wr;
	struct dtxn_cqe cqe;

	tc_set_word(env, 1024, 41);
	/* CAS failure: wrong compare, old value returned, memory unchanged */
	ut_wr(&wr, DTXN_WR_CAS, 1, old, 8, DTXN_RADDR(0, 1024), DTXN_WR_F_SIGNALED);
	wr.compare_add = 40;
	wr.swap = 99;
	assert_int_equal(dtxn_qp_post(env->qp, &wr), 0);
	assert_int_equal(tc_reap(env->f, env->cq, &cqe, 1), 1);
	assert_int_equal(cqe.status, DTXN_WC_SUCCESS);
	assert_int_equal(cqe.opcode, DTXN_WR_CAS);
	assert_int_equal(cqe.byte_len, 8);
	assert_int_equal(*old, 41);
	assert_int_equal(ut_word(env->mn0, 1024), 41);
	/* CAS success */
	*old = 0;
	wr.compare_add = 41;
	assert_int_equal(dtxn_qp_post(env->qp, &wr), 0);
	assert_int_equal(tc_reap(env->f, env->cq, &cqe, 1), 1);
	assert_int_equal(*old, 41);
	assert_int_equal(ut_word(env->mn0, 1024), 99);
	/* FAA returns the old value; a large addend wraps */
	ut_wr(&wr, DTXN_WR_FAA, 2, old, 8, DTXN_RADDR(0, 1024), DTXN_WR_F_SIGNALED);
	wr.compare_add = 5;
	assert_int_equal(dtxn_qp_post(env->qp, &wr), 0);
	assert_int_equal(tc_reap(env->f, env->cq, &cqe, 1), 1);
	assert_int_equal(cqe.opcode, DTXN_WR_FAA);
	assert_int_equal(*old, 99);
	assert_int_equal(ut_word(env->mn0, 1024), 104);
	wr.compare_add = UINT64_MAX; /* -1 */
	assert_int_equal(dtxn_qp_post(env->qp, &wr), 0);
	assert_int_equal(tc_reap(env->f, env->cq, &cqe, 1), 1);
	assert_int_equal(*old, 104);
	assert_int_equal(ut_word(env->mn0, 1024), 103);
	/* values with every byte distinct: byte order of the result */
	tc_set_word(env, 1032, 0x0102030405060708ull);
	ut_wr(&wr, DTXN_WR_CAS, 3, old, 8, DTXN_RADDR(0, 1032), DTXN_WR_F_SIGNALED);
	wr.compare_add = 0x0102030405060708ull;
	wr.swap = 0x1112131415161718ull;
	assert_int_equal(dtxn_qp_post(env->qp, &wr), 0);
	assert_int_equal(tc_reap(env->f, env->cq, &cqe, 1), 1);
	assert_int_equal(*old, 0x0102030405060708ull);
	assert_int_equal(ut_word(env->mn0, 1032), 0x1112131415161718ull);
}

static void
test_masked_cas(void **state)
{
	struct tc_env *env = *state;
	uint64_t init = 0x8000000000000001ull, *old = (uint64_t *)(void *)env->buf;
	struct dtxn_wr wr;
	struct dtxn_cqe cqe;

	tc_set_word(env, 2048, init);
	/* CREST-style lock of cells 2 and 4 (MSB = cell 0): compare those bits to 0 */
	ut_wr(&wr, DTXN_WR_MASKED_CAS, 1, old, 8, DTXN_RADDR(0, 2048), DTXN_WR_F_SIGNALED);
	wr.compare_mask = (1ull << 61) | (1ull << 59);
	wr.compare_add = 0;
	wr.swap_mask = wr.compare_mask;
	wr.swap = wr.compare_mask;
	assert_int_equal(dtxn_qp_post(env->qp, &wr), 0);
	assert_int_equal(tc_reap(env->f, env->cq, &cqe, 1), 1);
	assert_int_equal(cqe.status, DTXN_WC_SUCCESS);
	assert_int_equal(cqe.opcode, DTXN_WR_MASKED_CAS);
	assert_int_equal(*old, init);
	/* only the swapped bits changed; bits 63 and 0 are kept */
	assert_int_equal(ut_word(env->mn0, 2048), init | wr.compare_mask);

	/* the same lock again fails: bit 61 is now set; memory unchanged */
	*old = 0;
	assert_int_equal(dtxn_qp_post(env->qp, &wr), 0);
	assert_int_equal(tc_reap(env->f, env->cq, &cqe, 1), 1);
	assert_int_equal(*old, init | wr.compare_mask);
	assert_int_equal(ut_word(env->mn0, 2048), init | wr.compare_mask);

	/* bits outside compare_mask are ignored; outside swap_mask kept */
	wr.compare_mask = 1ull << 63;
	wr.compare_add = ~0ull;
	wr.swap_mask = 0xFFull;
	wr.swap = 0x1234ull;
	assert_int_equal(dtxn_qp_post(env->qp, &wr), 0);
	assert_int_equal(tc_reap(env->f, env->cq, &cqe, 1), 1);
	assert_int_equal(ut_word(env->mn0, 2048), (init & ~0xFFull) | (1ull << 61) | (1ull << 59) | 0x34);
	/* an empty compare mask always swaps */
	wr.compare_mask = 0;
	wr.compare_add = 0x5555;
	wr.swap_mask = ~0ull;
	wr.swap = 7;
	assert_int_equal(dtxn_qp_post(env->qp, &wr), 0);
	assert_int_equal(tc_reap(env->f, env->cq, &cqe, 1), 1);
	assert_int_equal(ut_word(env->mn0, 2048), 7);
}

/* Masked CAS against the reference model (masked_cas_ref.h) on random words and masks. */
static void
test_masked_cas_model(void **state)
{
	struct tc_env *env = *state;
	uint64_t seed = 0x9e3779b97f4a7c15ull, *old = (uint64_t *)(void *)env->buf;
	unsigned swapped = 0;

	for (unsigned i = 0; i < 4096; i++) {
		struct mcas_case c;
		struct dtxn_wr wr;
		struct dtxn_cqe cqe;

		mcas_case_make(&seed, i, &c);
		tc_set_word(env, 4096, c.word);
		*old = 0;
		ut_wr(&wr, DTXN_WR_MASKED_CAS, i, old, 8, DTXN_RADDR(0, 4096), DTXN_WR_F_SIGNALED);
		wr.compare_add = c.compare;
		wr.compare_mask = c.compare_mask;
		wr.swap = c.swap;
		wr.swap_mask = c.swap_mask;
		assert_int_equal(dtxn_qp_post(env->qp, &wr), 0);
		assert_int_equal(tc_reap(env->f, env->cq, &cqe, 1), 1);
		assert_int_equal(cqe.status, DTXN_WC_SUCCESS);
		assert_int_equal(*old, c.word);
		assert_int_equal(ut_word(env->mn0, 4096), mcas_ref(&c));
		swapped += (c.word & c.compare_mask) == (c.compare & c.compare_mask);
	}
	assert_true(swapped > 4096 / 5 && swapped < 4096 / 2); /* both outcomes exercised */
}

static void
test_doorbell_chain(void **state)
{
	struct tc_env *env = *state;
	uint64_t *w = (uint64_t *)(void *)env->buf, *r = w + 1, *cas_old = w + 2,
		 *faa_old = w + 3, *mcas_old = w + 4;
	struct dtxn_wr wr[5];
	struct dtxn_cqe cqe[5];
	unsigned i;

	*w = 7;
	ut_wr(&wr[0], DTXN_WR_WRITE, 0, w, 8, DTXN_RADDR(0, 8192), DTXN_WR_F_SIGNALED);
	ut_wr(&wr[1], DTXN_WR_CAS, 1, cas_old, 8, DTXN_RADDR(0, 8192), DTXN_WR_F_SIGNALED);
	wr[1].compare_add = 7;
	wr[1].swap = 10;
	ut_wr(&wr[2], DTXN_WR_FAA, 2, faa_old, 8, DTXN_RADDR(0, 8192), DTXN_WR_F_SIGNALED);
	wr[2].compare_add = 3;
	ut_wr(&wr[3], DTXN_WR_MASKED_CAS, 3, mcas_old, 8, DTXN_RADDR(0, 8192), DTXN_WR_F_SIGNALED);
	wr[3].compare_mask = 0xF;
	wr[3].compare_add = 13;
	wr[3].swap_mask = 0xF0;
	wr[3].swap = 0x50;
	ut_wr(&wr[4], DTXN_WR_READ, 4, r, 8, DTXN_RADDR(0, 8192), DTXN_WR_F_SIGNALED);
	for (i = 0; i < 4; i++)
		wr[i].next = &wr[i + 1];
	assert_int_equal(dtxn_qp_post(env->qp, wr), 0);
	assert_int_equal(tc_reap(env->f, env->cq, cqe, 5), 5);
	for (i = 0; i < 5; i++) {
		assert_int_equal(cqe[i].wr_id, i);
		assert_int_equal(cqe[i].opcode, wr[i].opcode);
		assert_int_equal(cqe[i].status, DTXN_WC_SUCCESS);
	}
	assert_int_equal(*cas_old, 7);
	assert_int_equal(*faa_old, 10);
	assert_int_equal(*mcas_old, 13);
	assert_int_equal(*r, 13 | 0x50);
}

static void
test_selective_signaling(void **state)
{
	struct tc_env *env = *state;
	uint64_t *v = (uint64_t *)(void *)env->buf;
	struct dtxn_wr wr[100];
	struct dtxn_cqe cqe[4];
	unsigned i;

	/* 4 WRs, only the last signaled: one completion, every WR took effect */
	*v = 1;
	for (i = 0; i < 4; i++) {
		ut_wr(&wr[i], DTXN_WR_WRITE, i, v, 8, DTXN_RADDR(0, 16384 + 8 * i),
		      i == 3 ? DTXN_WR_F_SIGNALED : 0);
		wr[i].next = i < 3 ? &wr[i + 1] : NULL;
	}
	assert_int_equal(dtxn_qp_post(env->qp, wr), 0);
	assert_int_equal(tc_reap(env->f, env->cq, cqe, 1), 1);
	assert_int_equal(cqe[0].wr_id, 3);
	assert_int_equal(tc_extra(env->f, env->cq), 0);
	for (i = 0; i < 4; i++)
		assert_int_equal(ut_word(env->mn0, 16384 + 8 * i), 1);
	/* long runs of unsignaled WRs never fill the 64-deep QP */
	for (unsigned round = 0; round < 10; round++) {
		for (i = 0; i < 40; i++) {
			ut_wr(&wr[i], DTXN_WR_WRITE, 1000 + i, v, 8, DTXN_RADDR(0, 16448), 0);
			wr[i].next = i < 39 ? &wr[i + 1] : NULL;
		}
		*v = round;
		assert_int_equal(dtxn_qp_post(env->qp, wr), 0);
		(void)tc_extra(env->f, env->cq); /* lets the device move (no CQE expected) */
	}
	ut_wr(&wr[0], DTXN_WR_READ, 9, v + 1, 8, DTXN_RADDR(0, 16448), DTXN_WR_F_SIGNALED);
	assert_int_equal(dtxn_qp_post(env->qp, wr), 0);
	assert_int_equal(tc_reap(env->f, env->cq, cqe, 1), 1);
	assert_int_equal(cqe[0].wr_id, 9);
	assert_int_equal(v[1], 9);
}

static void
test_error_completions(void **state)
{
	struct tc_env *env = *state;
	uint64_t *v = (uint64_t *)(void *)env->buf;
	const uint64_t offs[] = { TC_REGION - 4, TC_REGION, DTXN_RADDR_OFF_MASK - 7 };
	struct dtxn_wr wr[3];
	struct dtxn_cqe cqe[3];
	unsigned got;

	/* an unsignaled WR that fails still completes, with an error */
	ut_wr(&wr[0], DTXN_WR_READ, 20, v, 8, DTXN_RADDR(0, TC_REGION), 0);
	ut_wr(&wr[1], DTXN_WR_WRITE, 21, v, 8, DTXN_RADDR(0, 0), 0);
	ut_wr(&wr[2], DTXN_WR_READ, 22, v, 8, DTXN_RADDR(0, 0), DTXN_WR_F_SIGNALED);
	wr[0].next = &wr[1];
	wr[1].next = &wr[2];
	assert_int_equal(dtxn_qp_post(env->qp, wr), 0);
	got = tc_reap(env->f, env->cq, cqe, 3);
	assert_true(got >= 2);
	assert_int_equal(cqe[0].wr_id, 20);
	assert_int_equal(cqe[0].status, DTXN_WC_REM_ACCESS_ERR);
	/* later WRs: done (emulated NIC) or flushed (hardware QP in error) */
	assert_int_equal(cqe[got - 1].wr_id, 22);
	if (cqe[got - 1].status != DTXN_WC_SUCCESS) {
		assert_int_equal(cqe[got - 1].status, DTXN_WC_WR_FLUSH_ERR);
		return; /* this QP is gone; the ranges below need a fresh one */
	}
	assert_int_equal(got, 2);
	/* out of the region, across its end, past the 48-bit offset space */
	for (unsigned i = 0; i < RTE_DIM(offs); i++) {
		ut_wr(&wr[0], i == 2 ? DTXN_WR_FAA : DTXN_WR_WRITE, i, v, 8,
		      DTXN_RADDR(0, offs[i]), DTXN_WR_F_SIGNALED);
		assert_int_equal(dtxn_qp_post(env->qp, wr), 0);
		assert_int_equal(tc_reap(env->f, env->cq, cqe, 1), 1);
		assert_int_equal(cqe[0].wr_id, i);
		assert_int_equal(cqe[0].status, DTXN_WC_REM_ACCESS_ERR);
	}
	/* the last word of the region is fine */
	*v = 0xdead;
	ut_wr(&wr[0], DTXN_WR_WRITE, 9, v, 8, DTXN_RADDR(0, TC_REGION - 8), DTXN_WR_F_SIGNALED);
	assert_int_equal(dtxn_qp_post(env->qp, wr), 0);
	assert_int_equal(tc_reap(env->f, env->cq, cqe, 1), 1);
	assert_int_equal(cqe[0].status, DTXN_WC_SUCCESS);
	assert_int_equal(ut_word(env->mn0, TC_REGION - 8), 0xdead);
}

/*
 * A lost peer (dtxn_qp_error_inject(): the QP's error state, as after
 * transport retries ran out): what was posted before completes; the next
 * WR fails with DTXN_WC_FATAL_ERR and every later one is flushed, each
 * with a completion though unsignaled, naming the node it did not reach;
 * nothing reaches MN memory; another QP of the CQ works on.
 */
static void
test_qp_error_state(void **state)
{
	struct tc_env *env = *state;
	uint64_t *v = (uint64_t *)(void *)env->buf;
	struct dtxn_qp *qp1 = dtxn_qp_create(env->f, env->cq, TC_CN0, 1, 64);
	struct dtxn_wr wr[3];
	struct dtxn_cqe cqe[4];

	assert_non_null(qp1);
	assert_int_equal(dtxn_qp_error_inject(NULL), -EINVAL);
	tc_set_word(env, 64, 5);
	v[0] = 1;
	ut_wr(&wr[0], DTXN_WR_WRITE, 30, v, 8, DTXN_RADDR(0, 64), DTXN_WR_F_SIGNALED);
	assert_int_equal(dtxn_qp_post(env->qp, wr), 0);
	assert_int_equal(dtxn_qp_error_inject(env->qp), 0);
	assert_int_equal(tc_reap(env->f, env->cq, cqe, 1), 1);
	assert_int_equal(cqe[0].wr_id, 30);
	assert_int_equal(cqe[0].status, DTXN_WC_SUCCESS);
	assert_int_equal(ut_word(env->mn0, 64), 1);

	v[0] = 2;
	ut_wr(&wr[0], DTXN_WR_WRITE, 31, v, 8, DTXN_RADDR(0, 64), 0);
	ut_wr(&wr[1], DTXN_WR_CAS, 32, v + 1, 8, DTXN_RADDR(0, 72), 0);
	wr[1].compare_add = 0;
	wr[1].swap = 9;
	ut_wr(&wr[2], DTXN_WR_READ, 33, v + 2, 8, DTXN_RADDR(0, 64), DTXN_WR_F_SIGNALED);
	wr[0].next = &wr[1];
	wr[1].next = &wr[2];
	assert_int_equal(dtxn_qp_post(env->qp, wr), 0);
	assert_int_equal(dtxn_qp_error_inject(env->qp), 0); /* again: no change */
	assert_int_equal(tc_reap(env->f, env->cq, cqe, 3), 3);
	for (unsigned i = 0; i < 3; i++) {
		assert_int_equal(cqe[i].wr_id, 31 + i);
		assert_int_equal(cqe[i].status, i == 0 ? DTXN_WC_FATAL_ERR : DTXN_WC_WR_FLUSH_ERR);
		assert_int_equal(cqe[i].src_node, 0);
	}
	assert_int_equal(tc_extra(env->f, env->cq), 0);
	assert_int_equal(ut_word(env->mn0, 64), 1); /* nothing reached the MN */
	assert_int_equal(ut_word(env->mn0, 72), 0);
	/* every later WR is flushed; the CQ's other QP works */
	ut_wr(&wr[0], DTXN_WR_FAA, 34, v, 8, DTXN_RADDR(0, 64), 0);
	assert_int_equal(dtxn_qp_post(env->qp, wr), 0);
	ut_wr(&wr[0], DTXN_WR_FAA, 35, v + 3, 8, DTXN_RADDR(1, 64), DTXN_WR_F_SIGNALED);
	wr[0].compare_add = 4;
	assert_int_equal(dtxn_qp_post(qp1, wr), 0);
	assert_int_equal(tc_reap(env->f, env->cq, cqe, 2), 2);
	assert_int_equal(cqe[0].wr_id, 34);
	assert_int_equal(cqe[0].status, DTXN_WC_WR_FLUSH_ERR);
	assert_int_equal(cqe[1].wr_id, 35);
	assert_int_equal(cqe[1].status, DTXN_WC_SUCCESS);
	assert_int_equal(cqe[1].src_node, 1);
	assert_int_equal(v[3], 0);
	assert_int_equal(ut_word(dtxn_fabric_mn_base(env->f, 1), 64), 4);
	assert_int_equal(ut_word(env->mn0, 64), 1);
	dtxn_qp_destroy(qp1);
}

/*
 * Adversarial order (doc/guides/ucx.md, "Order"): what another QP, on
 * another CQ, sees once a completion came. A signaled WRITE's completion
 * means the data reached MN memory (a driver that reports a put's local
 * completion fails here); a CAS then a READ in one chain: the READ sees
 * the swap; a WRITE of data then an unlock WRITE, unsignaled, then a
 * signaled READ of the lock: once that READ completes, another QP that
 * finds the lock free finds the data.
 */
static void
test_order_cross_qp(void **state)
{
	struct tc_env *env = *state;
	struct dtxn_cq *cq2 = dtxn_cq_create(env->f, SOCKET_ID_ANY, 64);
	struct dtxn_qp *qp2 = cq2 == NULL ? NULL : dtxn_qp_create(env->f, cq2, TC_CN1, 0, 64);
	uint64_t *v = (uint64_t *)(void *)env->buf, *got = v + 8, *old = v + 9, *lock = v + 10;
	struct dtxn_wr wr[3];
	struct dtxn_cqe cqe[3];

	assert_non_null(qp2);
	for (uint64_t i = 1; i <= 300; i++) {
		/* signaled WRITE, then READ through the other QP */
		v[0] = i;
		ut_wr(&wr[0], DTXN_WR_WRITE, i, &v[0], 8, DTXN_RADDR(0, 1024), DTXN_WR_F_SIGNALED);
		assert_int_equal(dtxn_qp_post(env->qp, wr), 0);
		assert_int_equal(tc_reap(env->f, env->cq, cqe, 1), 1);
		ut_wr(&wr[0], DTXN_WR_READ, i, got, 8, DTXN_RADDR(0, 1024), DTXN_WR_F_SIGNALED);
		assert_int_equal(dtxn_qp_post(qp2, wr), 0);
		assert_int_equal(tc_reap(env->f, cq2, cqe, 1), 1);
		assert_int_equal(*got, i);
		/* CAS then READ in one chain */
		ut_wr(&wr[0], DTXN_WR_CAS, 1, old, 8, DTXN_RADDR(0, 1032), 0);
		wr[0].compare_add = i - 1;
		wr[0].swap = i;
		ut_wr(&wr[1], DTXN_WR_READ, 2, got, 8, DTXN_RADDR(0, 1032), DTXN_WR_F_SIGNALED);
		wr[0].next = &wr[1];
		assert_int_equal(dtxn_qp_post(env->qp, wr), 0);
		assert_int_equal(tc_reap(env->f, env->cq, cqe, 1), 1);
		assert_int_equal(*old, i - 1);
		assert_int_equal(*got, i);
		/* data, unlock, then a signaled READ: the other QP sees both */
		v[1] = 7000 + i;
		v[2] = 0;
		ut_wr(&wr[0], DTXN_WR_WRITE, 1, &v[1], 8, DTXN_RADDR(0, 1040), 0);
		ut_wr(&wr[1], DTXN_WR_WRITE, 2, &v[2], 8, DTXN_RADDR(0, 1048), 0);
		ut_wr(&wr[2], DTXN_WR_READ, 3, lock, 8, DTXN_RADDR(0, 1048), DTXN_WR_F_SIGNALED);
		wr[0].next = &wr[1];
		wr[1].next = &wr[2];
		assert_int_equal(dtxn_qp_post(env->qp, wr), 0);
		assert_int_equal(tc_reap(env->f, env->cq, cqe, 1), 1);
		ut_wr(&wr[0], DTXN_WR_READ, 4, got, 8, DTXN_RADDR(0, 1040), DTXN_WR_F_SIGNALED);
		assert_int_equal(dtxn_qp_post(qp2, wr), 0);
		assert_int_equal(tc_reap(env->f, cq2, cqe, 1), 1);
		assert_int_equal(*got, 7000 + i);
		v[2] = 1; /* locked again, for the next round */
		ut_wr(&wr[0], DTXN_WR_WRITE, 5, &v[2], 8, DTXN_RADDR(0, 1048), DTXN_WR_F_SIGNALED);
		assert_int_equal(dtxn_qp_post(env->qp, wr), 0);
		assert_int_equal(tc_reap(env->f, env->cq, cqe, 1), 1);
		assert_int_equal(ut_word(env->mn0, 1048), 1);
	}
	dtxn_qp_destroy(qp2);
	dtxn_cq_destroy(cq2);
}

/* Posts a SEND, waiting (up to 2 s) while the QP connects (mlx5). */
static int
tc_send(struct dtxn_qp *qp, struct dtxn_wr *s)
{
	uint64_t deadline = dtxn_now_ns() + UINT64_C(2000000000);
	int rc;

	while ((rc = dtxn_qp_post(qp, s)) == -ENOTCONN && dtxn_now_ns() < deadline)
		;
	return rc;
}

static void
test_send_recv(void **state)
{
	struct tc_env *env = *state;
	struct dtxn_cq *cq1 = dtxn_cq_create(env->f, SOCKET_ID_ANY, 64);
	char *msg = (char *)env->buf, *buf = msg + 64, *tiny = msg + 128;
	struct dtxn_qp *a, *b;
	struct dtxn_wr s, r;
	struct dtxn_cqe cqe;

	assert_non_null(cq1);
	strcpy(msg, "hello, memory node");
	a = dtxn_qp_create(env->f, env->cq, TC_CN0, TC_CN1, 64);
	assert_non_null(a);
	ut_wr(&s, DTXN_WR_SEND, 1, msg, 32, 0, DTXN_WR_F_SIGNALED);
	/* no peer QP yet */
	assert_int_equal(dtxn_qp_post(a, &s), -ENOTCONN);
	b = dtxn_qp_create(env->f, cq1, TC_CN1, TC_CN0, 64);
	assert_non_null(b);

	/* RECV first, then SEND */
	memset(buf, 0, 64);
	ut_wr(&r, DTXN_WR_RECV, 77, buf, 64, 0, 0);
	assert_int_equal(dtxn_qp_post_recv(b, &r), 0);
	assert_int_equal(tc_send(a, &s), 0);
	assert_int_equal(tc_reap(env->f, env->cq, &cqe, 1), 1);
	assert_int_equal(cqe.wr_id, 1);
	assert_int_equal(cqe.opcode, DTXN_WR_SEND);
	assert_int_equal(cqe.status, DTXN_WC_SUCCESS);
	assert_int_equal(tc_reap(env->f, cq1, &cqe, 1), 1);
	assert_int_equal(cqe.wr_id, 77);
	assert_int_equal(cqe.opcode, DTXN_WR_RECV);
	assert_int_equal(cqe.status, DTXN_WC_SUCCESS);
	assert_int_equal(cqe.byte_len, 32);
	assert_int_equal(cqe.src_node, TC_CN0);
	assert_memory_equal(buf, msg, 32);

	/* SEND first (inline, unsignaled), RECV later: still delivered, in order */
	s.flags = DTXN_WR_F_INLINE;
	s.len = 5;
	assert_int_equal(tc_send(a, &s), 0);
	msg[0] = 'X'; /* inline: already copied */
	assert_int_equal(dtxn_cq_poll(cq1, &cqe, 1), 0);
	assert_int_equal(dtxn_qp_post_recv(b, &r), 0);
	assert_int_equal(tc_reap(env->f, cq1, &cqe, 1), 1);
	assert_int_equal(cqe.byte_len, 5);
	assert_memory_equal(buf, "hello", 5);

	/* the other direction, too large for the buffer: a local length error */
	ut_wr(&r, DTXN_WR_RECV, 88, tiny, 8, 0, 0);
	assert_int_equal(dtxn_qp_post_recv(a, &r), 0);
	ut_wr(&s, DTXN_WR_SEND, 2, msg, 32, 0, 0);
	assert_int_equal(tc_send(b, &s), 0);
	assert_int_equal(tc_reap(env->f, env->cq, &cqe, 1), 1);
	assert_int_equal(cqe.wr_id, 88);
	assert_int_equal(cqe.status, DTXN_WC_LOC_LEN_ERR);
	assert_int_equal(cqe.src_node, TC_CN1);

	/* destroy flushes posted RECVs */
	ut_wr(&r, DTXN_WR_RECV, 99, buf, 64, 0, 0);
	assert_int_equal(dtxn_qp_post_recv(b, &r), 0);
	dtxn_qp_destroy(b);
	assert_int_equal(tc_reap(env->f, cq1, &cqe, 1), 1);
	assert_int_equal(cqe.wr_id, 99);
	assert_int_equal(cqe.status, DTXN_WC_WR_FLUSH_ERR);
	dtxn_qp_destroy(a);
	while (dtxn_cq_poll(cq1, &cqe, 1) + dtxn_cq_poll(env->cq, &cqe, 1) > 0)
		; /* the sender's late completions, if any */
	dtxn_cq_destroy(cq1);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_read_write, tc_setup, tc_teardown),
		cmocka_unit_test_setup_teardown(test_order, tc_setup, tc_teardown),
		cmocka_unit_test_setup_teardown(test_order_cross_qp, tc_setup, tc_teardown),
		cmocka_unit_test_setup_teardown(test_atomics, tc_setup, tc_teardown),
		cmocka_unit_test_setup_teardown(test_masked_cas, tc_setup, tc_teardown),
		cmocka_unit_test_setup_teardown(test_masked_cas_model, tc_setup, tc_teardown),
		cmocka_unit_test_setup_teardown(test_doorbell_chain, tc_setup, tc_teardown),
		cmocka_unit_test_setup_teardown(test_selective_signaling, tc_setup, tc_teardown),
		cmocka_unit_test_setup_teardown(test_error_completions, tc_setup, tc_teardown),
		cmocka_unit_test_setup_teardown(test_qp_error_state, tc_setup, tc_teardown),
		cmocka_unit_test_setup_teardown(test_send_recv, tc_setup, tc_teardown),
	};
	char prefix[32];
	struct dtxn_fabric *f;
	int rc;

	if (argc != 2) {
		fprintf(stderr, "usage: %s shm|sim|mlx5|ucx\n", argv[0]);
		return 2;
	}
	g_driver = argv[1];
	snprintf(prefix, sizeof(prefix), "ut_conf_%s", g_driver);
	if (dtxn_unit_eal_init(prefix) != 0)
		return 1;
	/* can this driver run here at all? (mlx5 without a device: skip) */
	f = tc_open();
	if (f == NULL) {
		printf("conformance %s: skipped: %s\n", g_driver,
		       dtxn_fabric_open_error()[0] != '\0' ? dtxn_fabric_open_error() :
		       rte_strerror(rte_errno));
		dtxn_unit_eal_fini();
		return TC_SKIP;
	}
	dtxn_fabric_close(f);
	cmocka_set_message_output(CM_OUTPUT_STDOUT);
	rc = cmocka_run_group_tests_name(g_driver, tests, NULL, NULL);
	dtxn_unit_eal_fini();
	return rc;
}
