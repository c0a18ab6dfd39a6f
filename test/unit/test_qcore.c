/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the QP/CQ core the fabric drivers share (lib/fabric/qcore.c,
 * dtxn_fabric_driver.h): the CQ's completion ring (order, full, growth),
 * the receive queue of posted RECVs (all or nothing, max_wr, growth with
 * free-running indices), chain counting and copying with inline payloads,
 * and the CAS loop that emulates a masked CAS (mlx5 without the extended
 * atomic, ucx) against a reference model, with interference.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <rte_common.h>
#include <rte_memory.h>

#include "dtxn_fabric.h"
#include "dtxn_fabric_driver.h"
#include "unit_eal.h"

static uint64_t g_rng = 0x9e3779b97f4a7c15ull;

static uint64_t
tq_rand(void)
{
	g_rng ^= g_rng << 13;
	g_rng ^= g_rng >> 7;
	g_rng ^= g_rng << 17;
	return g_rng;
}

/* ------------------------------------------------------------------ */
/* Completion ring                                                    */
/* ------------------------------------------------------------------ */

static void
test_cqe_ring(void **state)
{
	struct dtxn_cqe_ring r = { 0 };
	struct dtxn_cqe out[8];
	unsigned i;

	(void)state;
	assert_int_equal(dtxn_cqe_ring_init(&r, 0, SOCKET_ID_ANY), -EINVAL);
	assert_int_equal(dtxn_cqe_ring_init(&r, 6, SOCKET_ID_ANY), -EINVAL);
	assert_int_equal(dtxn_cqe_ring_init(&r, 4, SOCKET_ID_ANY), 0);
	assert_int_equal(dtxn_cqe_ring_count(&r), 0);
	assert_int_equal(dtxn_cqe_ring_pop(&r, out, 8), 0);
	/* wraps around several times, oldest first */
	for (unsigned round = 0; round < 5; round++) {
		for (i = 0; i < 4; i++)
			assert_true(dtxn_cqe_ring_push(&r, round * 10 + i, i, DTXN_WR_READ,
						       DTXN_WC_SUCCESS, (uint16_t)round));
		assert_true(dtxn_cqe_ring_full(&r));
		assert_false(dtxn_cqe_ring_push(&r, 99, 0, 0, 0, 0)); /* nothing written */
		assert_int_equal(dtxn_cqe_ring_count(&r), 4);
		assert_int_equal(dtxn_cqe_ring_pop(&r, out, 3), 3);
		assert_int_equal(dtxn_cqe_ring_pop(&r, out + 3, 5), 1);
		for (i = 0; i < 4; i++) {
			assert_int_equal(out[i].wr_id, round * 10 + i);
			assert_int_equal(out[i].byte_len, i);
			assert_int_equal(out[i].src_node, round);
		}
	}
	/* growth keeps what waits, in order, and doubles the room */
	for (i = 0; i < 3; i++)
		assert_true(dtxn_cqe_ring_push(&r, 100 + i, 0, DTXN_WR_CAS, DTXN_WC_SUCCESS, 0));
	assert_int_equal(dtxn_cqe_ring_pop(&r, out, 2), 2); /* head not at 0 */
	for (i = 3; i < 5; i++)
		assert_true(dtxn_cqe_ring_push(&r, 100 + i, 0, DTXN_WR_CAS, DTXN_WC_SUCCESS, 0));
	assert_int_equal(dtxn_cqe_ring_grow(&r), 0);
	assert_int_equal(r.mask, 7);
	assert_int_equal(dtxn_cqe_ring_count(&r), 3);
	for (i = 5; i < 10; i++)
		assert_true(dtxn_cqe_ring_push(&r, 100 + i, 0, DTXN_WR_CAS, DTXN_WC_SUCCESS, 0));
	assert_true(dtxn_cqe_ring_full(&r));
	assert_int_equal(dtxn_cqe_ring_pop(&r, out, 8), 8);
	for (i = 0; i < 8; i++)
		assert_int_equal(out[i].wr_id, 102 + i);
	dtxn_cqe_ring_free(&r);
	assert_null(r.e);
	dtxn_cqe_ring_free(&r); /* twice: a no-op */
}

/* ------------------------------------------------------------------ */
/* Receive queue                                                      */
/* ------------------------------------------------------------------ */

/* A chain of @p n RECVs with wr_id base, base+1, ... in @p wr. */
static struct dtxn_wr *
tq_chain(struct dtxn_wr *wr, unsigned n, uint64_t base)
{
	for (unsigned i = 0; i < n; i++) {
		memset(&wr[i], 0, sizeof(wr[i]));
		wr[i].wr_id = base + i;
		wr[i].opcode = DTXN_WR_RECV;
		wr[i].len = 64;
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
	}
	return n > 0 ? wr : NULL;
}

static void
test_wr_queue(void **state)
{
	struct dtxn_wr_queue q = { 0 };
	struct dtxn_wr wr[16];
	const struct dtxn_wr *r;
	uint64_t next = 0, id = 0;

	(void)state;
	assert_int_equal(dtxn_wr_queue_init(&q, 3, SOCKET_ID_ANY), -EINVAL);
	assert_int_equal(dtxn_wr_queue_init(&q, 2, SOCKET_ID_ANY), 0);
	assert_null(dtxn_wr_queue_front(&q));
	assert_null(dtxn_wr_queue_pop(&q));
	assert_int_equal(dtxn_wr_queue_post(&q, NULL, 16), 0); /* an empty chain */
	/* over max_wr: all refused, nothing appended */
	assert_int_equal(dtxn_wr_queue_post(&q, tq_chain(wr, 9, 0), 8), -ENOBUFS);
	assert_int_equal(dtxn_wr_queue_count(&q), 0);
	/* grows from 2 to 8 entries as chains arrive, keeping order across wraps */
	for (unsigned round = 0; round < 20; round++) {
		unsigned n = 1 + (unsigned)(tq_rand() % 5), k;

		if (n > 8 - dtxn_wr_queue_count(&q)) {
			assert_int_equal(dtxn_wr_queue_post(&q, tq_chain(wr, n, id), 8), -ENOBUFS);
		} else {
			assert_int_equal(dtxn_wr_queue_post(&q, tq_chain(wr, n, id), 8), 0);
			id += n;
		}
		memset(wr, 0xa5, sizeof(wr)); /* the queue holds copies */
		assert_true(q.mask + 1 <= 8);
		k = (unsigned)(tq_rand() % (dtxn_wr_queue_count(&q) + 1));
		while (k-- > 0) {
			assert_ptr_equal(dtxn_wr_queue_front(&q), &q.e[q.head & q.mask]);
			r = dtxn_wr_queue_pop(&q);
			assert_non_null(r);
			assert_int_equal(r->wr_id, next++);
			assert_null(r->next);
			assert_int_equal(r->len, 64);
		}
	}
	assert_int_equal(q.mask, 7);
	while ((r = dtxn_wr_queue_pop(&q)) != NULL)
		assert_int_equal(r->wr_id, next++);
	assert_int_equal(next, id);
	dtxn_wr_queue_free(&q);
	assert_null(q.e);
}

/* ------------------------------------------------------------------ */
/* Chains                                                             */
/* ------------------------------------------------------------------ */

static void
test_wr_chain(void **state)
{
	struct dtxn_wr wr[3], dst;
	uint8_t payload[DTXN_WR_INLINE_MAX], inl[DTXN_WR_INLINE_MAX];
	uint32_t n_send = 99;

	(void)state;
	assert_int_equal(dtxn_wr_chain_count(NULL, &n_send), 0);
	assert_int_equal(n_send, 0);
	memset(wr, 0, sizeof(wr));
	wr[0].next = &wr[1];
	wr[1].next = &wr[2];
	wr[0].opcode = DTXN_WR_WRITE;
	wr[1].opcode = DTXN_WR_SEND;
	wr[2].opcode = DTXN_WR_SEND;
	assert_int_equal(dtxn_wr_chain_count(wr, &n_send), 3);
	assert_int_equal(n_send, 2);
	assert_int_equal(dtxn_wr_chain_count(&wr[2], NULL), 1);

	/* not inline: a copy that points at the caller's buffer */
	for (unsigned i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)i;
	wr[0].local = payload;
	wr[0].len = sizeof(payload);
	wr[0].wr_id = 7;
	memset(inl, 0, sizeof(inl));
	dtxn_wr_copy(&dst, &wr[0], inl);
	assert_null(dst.next);
	assert_ptr_equal(dst.local, payload);
	assert_int_equal(dst.wr_id, 7);
	assert_int_equal(inl[1], 0);
	/* inline: the payload moves to the slot */
	wr[0].flags = DTXN_WR_F_INLINE | DTXN_WR_F_SIGNALED;
	dtxn_wr_copy(&dst, &wr[0], inl);
	assert_ptr_equal(dst.local, inl);
	assert_int_equal(dst.flags, DTXN_WR_F_INLINE | DTXN_WR_F_SIGNALED);
	memset(payload, 0, sizeof(payload));
	for (unsigned i = 0; i < sizeof(inl); i++)
		assert_int_equal(inl[i], (uint8_t)i);
}

/* ------------------------------------------------------------------ */
/* Masked CAS as a CAS loop                                           */
/* ------------------------------------------------------------------ */

/* Reference masked CAS (the fabric API's semantics, lib/fabric/fabric_exec.c). */
static uint64_t
tq_mcas_ref(uint64_t *w, const struct dtxn_wr *wr)
{
	uint64_t old = *w;

	if (((old ^ wr->compare_add) & wr->compare_mask) == 0)
		*w = (old & ~wr->swap_mask) | (wr->swap & wr->swap_mask);
	return old;
}

static void
test_mcas_loop(void **state)
{
	unsigned loops = 0, hits = 0;

	(void)state;
	for (unsigned i = 0; i < 20000; i++) {
		struct dtxn_wr wr;
		struct dtxn_mcas_loop l;
		uint64_t word = tq_rand() & tq_rand(), ref = word, got, old_ref;
		unsigned steps = 0, flips = 0;

		memset(&wr, 0, sizeof(wr));
		wr.opcode = DTXN_WR_MASKED_CAS;
		wr.compare_mask = tq_rand() & tq_rand();
		wr.compare_add = (i & 1) ? word : tq_rand(); /* half of them match */
		wr.swap_mask = tq_rand();
		wr.swap = tq_rand();
		old_ref = tq_mcas_ref(&ref, &wr);
		dtxn_mcas_loop_start(&l, &wr);
		for (;;) {
			/* the remote CAS */
			got = word;
			if (word == l.expect)
				word = l.desired;
			if (dtxn_mcas_loop_step(&l, got))
				break;
			/* another CN flips bits the compare ignores, now and then */
			if (flips < 2 && (tq_rand() & 3) == 0) {
				word ^= ~wr.compare_mask & tq_rand();
				flips++;
			}
			assert_true(++steps < 64);
		}
		loops += l.cas_posted;
		if (flips == 0) { /* no interference: exactly the reference */
			assert_int_equal(got, old_ref);
			assert_int_equal(word, ref);
			hits += ((old_ref ^ wr.compare_add) & wr.compare_mask) == 0;
		} else if (((got ^ wr.compare_add) & wr.compare_mask) == 0) {
			/* swapped against the value it last saw */
			assert_int_equal(word, (got & ~wr.swap_mask) | (wr.swap & wr.swap_mask));
		} else {
			assert_int_equal(word, got); /* compare failed: left alone */
		}
		assert_true(l.cas_posted >= 1 && l.cas_posted <= 4);
	}
	assert_true(hits > 5000);
	assert_true(loops > 20000); /* some needed a second CAS */
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cqe_ring),
		cmocka_unit_test(test_wr_queue),
		cmocka_unit_test(test_wr_chain),
		cmocka_unit_test(test_mcas_loop),
	};
	int rc;

	if (dtxn_unit_eal_init("ut_qcore") != 0)
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	dtxn_unit_eal_fini();
	return rc;
}
