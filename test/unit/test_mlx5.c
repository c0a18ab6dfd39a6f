/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the mlx5 fabric driver's pure parts (mlx5_pure.h), which
 * need no RDMA device and no EAL: the masked-CAS WQE byte for byte against
 * the ConnectX PRM layout (and against rdma-core's own mlx5dv.h helpers
 * where the headers exist), the connect-message codec with truncated,
 * corrupted and random messages, and the posting plan (inline thresholds,
 * selective signaling, bounce buffers, chain limits), remote-address
 * translation and local-key lookup. The CAS loop that emulates masked CAS
 * on a device without it is lib/fabric's: test_qcore.c.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "mlx5_pure.h"

#if defined(DTXN_HAVE_MLX5DV)
#include <endian.h>
#include <infiniband/mlx5dv.h>
#endif

/* ------------------------------------------------------------------ */
/* Masked-CAS WQE                                                     */
/* ------------------------------------------------------------------ */

static const struct mlx5_mcas_args g_mcas = {
	.qpn = 0x123456,
	.signaled = true,
	.raddr = 0x00007f0011223340ull,
	.rkey = 0xa1b2c3d4,
	.laddr = 0x0000600000001008ull,
	.lkey = 0x01020304,
	.swap = 0x0102030405060708ull,
	.compare = 0x1112131415161718ull,
	.swap_mask = 0x2122232425262728ull,
	.compare_mask = 0x3132333435363738ull,
};

static void
test_wqe_layout(void **state)
{
	/* The PRM layout written out by hand: every multi-byte field big-endian. */
	static const uint8_t expect[MLX5_MCAS_WQE_BYTES] = {
		/* control: opmod 0x09, wqe index 0 (rdma-core), opcode 0x14 */
		0x09, 0x00, 0x00, 0x14,
		/* qpn 0x123456, ds 5 */
		0x12, 0x34, 0x56, 0x05,
		/* signature, DCI stream (2), fm_ce_se = CQ update */
		0x00, 0x00, 0x00, 0x08,
		/* immediate */
		0x00, 0x00, 0x00, 0x00,
		/* remote address segment: raddr, rkey, reserved */
		0x00, 0x00, 0x7f, 0x00, 0x11, 0x22, 0x33, 0x40,
		0xa1, 0xb2, 0xc3, 0xd4, 0x00, 0x00, 0x00, 0x00,
		/* masked atomic segment 1: swap, compare */
		0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
		0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18,
		/* masked atomic segment 2: swap mask, compare mask */
		0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28,
		0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38,
		/* data segment: 8 bytes, lkey, local address */
		0x00, 0x00, 0x00, 0x08, 0x01, 0x02, 0x03, 0x04,
		0x00, 0x00, 0x60, 0x00, 0x00, 0x00, 0x10, 0x08,
	};
	uint8_t buf[MLX5_MCAS_WQE_BYTES + 16];

	(void)state;
	memset(buf, 0xee, sizeof(buf));
	assert_int_equal(mlx5_wqe_masked_cas(buf, sizeof(buf), &g_mcas), MLX5_MCAS_WQE_BYTES);
	assert_memory_equal(buf, expect, sizeof(expect));
	/* nothing past the WQE is touched */
	for (unsigned i = MLX5_MCAS_WQE_BYTES; i < sizeof(buf); i++)
		assert_int_equal(buf[i], 0xee);
	/* sizes: 5 DS of 16 B; 2 send WQE basic blocks */
	assert_int_equal(MLX5_MCAS_WQE_BYTES / MLX5_PRM_DS_BYTES, 5);
	assert_int_equal((MLX5_MCAS_WQE_BYTES + MLX5_PRM_WQEBB_BYTES - 1) / MLX5_PRM_WQEBB_BYTES, 2);
	assert_int_equal(MLX5_MCAS_OFF_MASK - MLX5_MCAS_OFF_DATA, 16);
}

static void
test_wqe_fields(void **state)
{
	struct mlx5_mcas_args a = g_mcas;
	uint8_t buf[MLX5_MCAS_WQE_BYTES];

	(void)state;
	/* unsignaled: fm_ce_se 0, nothing else changes */
	a.signaled = false;
	assert_int_equal(mlx5_wqe_masked_cas(buf, sizeof(buf), &a), MLX5_MCAS_WQE_BYTES);
	assert_int_equal(buf[11], 0);
	/* a mask of one low bit lands in the last byte of its field */
	a.compare_mask = 1;
	a.swap_mask = UINT64_C(1) << 63;
	assert_int_equal(mlx5_wqe_masked_cas(buf, sizeof(buf), &a), MLX5_MCAS_WQE_BYTES);
	for (unsigned i = 0; i < 8; i++) {
		assert_int_equal(buf[MLX5_MCAS_OFF_MASK + i], i == 0 ? 0x80 : 0);
		assert_int_equal(buf[MLX5_MCAS_OFF_MASK + 8 + i], i == 7 ? 0x01 : 0);
	}
	/* refused: short buffer, NULLs, a QP number past 24 bits */
	memset(buf, 0x5a, sizeof(buf));
	assert_int_equal(mlx5_wqe_masked_cas(buf, sizeof(buf) - 1, &a), 0);
	assert_int_equal(buf[0], 0x5a);
	assert_int_equal(mlx5_wqe_masked_cas(NULL, sizeof(buf), &a), 0);
	assert_int_equal(mlx5_wqe_masked_cas(buf, sizeof(buf), NULL), 0);
	a.qpn = 0x1000000;
	assert_int_equal(mlx5_wqe_masked_cas(buf, sizeof(buf), &a), 0);
	assert_int_equal(buf[0], 0x5a);
}

/* Against rdma-core's own definitions of the same segments. */
static void
test_wqe_vs_mlx5dv(void **state)
{
#if defined(DTXN_HAVE_MLX5DV)
	struct mlx5_wqe_ctrl_seg ctrl;
	struct mlx5_wqe_raddr_seg raddr;
	struct mlx5_wqe_atomic_seg atom;
	struct mlx5_wqe_data_seg data;
	uint8_t buf[MLX5_MCAS_WQE_BYTES];

	(void)state;
	assert_int_equal(MLX5_PRM_OPCODE_ATOMIC_MASKED_CS, MLX5_OPCODE_ATOMIC_MASKED_CS);
	assert_int_equal(MLX5_PRM_CTRL_CQ_UPDATE, MLX5_WQE_CTRL_CQ_UPDATE);
	assert_int_equal(MLX5_PRM_WQEBB_BYTES, MLX5_SEND_WQE_BB);
	assert_int_equal(sizeof(ctrl), 16);
	assert_int_equal(sizeof(raddr), 16);
	assert_int_equal(sizeof(atom), 16);
	assert_int_equal(sizeof(data), 16);
	assert_int_equal(mlx5_wqe_masked_cas(buf, sizeof(buf), &g_mcas), MLX5_MCAS_WQE_BYTES);
	memset(&ctrl, 0, sizeof(ctrl));
	mlx5dv_set_ctrl_seg(&ctrl, 0, MLX5_OPCODE_ATOMIC_MASKED_CS, MLX5_PRM_OPMOD_EXT_ATOMIC_8B,
			    g_mcas.qpn, MLX5_WQE_CTRL_CQ_UPDATE, 5, 0, 0);
	assert_memory_equal(buf + MLX5_MCAS_OFF_CTRL, &ctrl, sizeof(ctrl));
	memset(&raddr, 0, sizeof(raddr));
	raddr.raddr = htobe64(g_mcas.raddr);
	raddr.rkey = htobe32(g_mcas.rkey);
	assert_memory_equal(buf + MLX5_MCAS_OFF_RADDR, &raddr, sizeof(raddr));
	atom.swap_add = htobe64(g_mcas.swap);
	atom.compare = htobe64(g_mcas.compare);
	assert_memory_equal(buf + MLX5_MCAS_OFF_DATA, &atom, sizeof(atom));
	atom.swap_add = htobe64(g_mcas.swap_mask);
	atom.compare = htobe64(g_mcas.compare_mask);
	assert_memory_equal(buf + MLX5_MCAS_OFF_MASK, &atom, sizeof(atom));
	data.byte_count = htobe32(8);
	data.lkey = htobe32(g_mcas.lkey);
	data.addr = htobe64(g_mcas.laddr);
	assert_memory_equal(buf + MLX5_MCAS_OFF_LOCAL, &data, sizeof(data));
#else
	(void)state;
	skip(); /* rdma-core headers absent at build time */
#endif
}

/* ------------------------------------------------------------------ */
/* Connect message                                                    */
/* ------------------------------------------------------------------ */

static const struct mlx5_msg g_accept = {
	.kind = MLX5_MSG_ACCEPT, .src_node = 1, .dst_node = 4, .qp_seq = 7,
	.flags = MLX5_MSG_F_REGION | MLX5_MSG_F_DM,
	.base = 0x7f1234560000ull, .len = 64ull << 20, .rkey = 0xdeadbeef,
	.dm_rkey = 0x0badcafe, .dm_len = 64,
};

static void
tm_msg_equal(const struct mlx5_msg *a, const struct mlx5_msg *b)
{
	assert_int_equal(a->kind, b->kind);
	assert_int_equal(a->src_node, b->src_node);
	assert_int_equal(a->dst_node, b->dst_node);
	assert_int_equal(a->qp_seq, b->qp_seq);
	assert_int_equal(a->flags, b->flags);
	assert_int_equal(a->base, b->base);
	assert_int_equal(a->len, b->len);
	assert_int_equal(a->rkey, b->rkey);
	assert_int_equal(a->dm_rkey, b->dm_rkey);
	assert_int_equal(a->dm_len, b->dm_len);
}

static void
test_msg_roundtrip(void **state)
{
	struct mlx5_msg hello = { .kind = MLX5_MSG_HELLO, .src_node = 3, .dst_node = 0, .qp_seq = 2 };
	uint8_t buf[56], pad[56];
	struct mlx5_msg d;

	(void)state;
	assert_int_equal(mlx5_msg_encode(buf, sizeof(buf), &g_accept), MLX5_MSG_BYTES);
	/* header: magic "dTx5", version 1, kind, length 48 */
	assert_memory_equal(buf, "dTx5", 4);
	assert_int_equal(buf[4], 1);
	assert_int_equal(buf[5], MLX5_MSG_ACCEPT);
	assert_int_equal(buf[6], 0);
	assert_int_equal(buf[7], MLX5_MSG_BYTES);
	/* rkey big-endian at 32 */
	assert_int_equal(buf[32], 0xde);
	assert_int_equal(buf[35], 0xef);
	assert_int_equal(mlx5_msg_decode(buf, MLX5_MSG_BYTES, &d), 0);
	tm_msg_equal(&d, &g_accept);
	/* rdma_cm pads private data with zeros: the extra bytes are ignored */
	memset(pad, 0, sizeof(pad));
	memcpy(pad, buf, MLX5_MSG_BYTES);
	assert_int_equal(mlx5_msg_decode(pad, sizeof(pad), &d), 0);
	tm_msg_equal(&d, &g_accept);
	assert_int_equal(mlx5_msg_encode(buf, sizeof(buf), &hello), MLX5_MSG_BYTES);
	assert_int_equal(mlx5_msg_decode(buf, sizeof(buf), &d), 0);
	tm_msg_equal(&d, &hello);
	/* encode refuses a short buffer and what decode would refuse */
	assert_int_equal(mlx5_msg_encode(buf, MLX5_MSG_BYTES - 1, &hello), -EMSGSIZE);
	hello.flags = MLX5_MSG_F_REGION;
	assert_int_equal(mlx5_msg_encode(buf, sizeof(buf), &hello), -EINVAL);
}

static void
test_msg_truncated(void **state)
{
	uint8_t buf[MLX5_MSG_BYTES];
	struct mlx5_msg d = { .qp_seq = 12345 };

	(void)state;
	assert_int_equal(mlx5_msg_encode(buf, sizeof(buf), &g_accept), MLX5_MSG_BYTES);
	for (size_t len = 0; len < MLX5_MSG_BYTES; len++)
		assert_int_equal(mlx5_msg_decode(buf, len, &d), -EMSGSIZE);
	assert_int_equal(d.qp_seq, 12345); /* untouched on error */
	assert_int_equal(mlx5_msg_decode(NULL, 0, &d), -EMSGSIZE);
}

/* Sets a big-endian field of an encoded message. */
static void
tm_put(uint8_t *p, uint64_t v, unsigned bytes)
{
	for (unsigned i = 0; i < bytes; i++)
		p[i] = (uint8_t)(v >> (8 * (bytes - 1 - i)));
}

static void
test_msg_malformed(void **state)
{
	static const struct { unsigned off, bytes; uint64_t val; int rc; } bad[] = {
		{ 0, 4, 0x64547836, -EPROTO },          /* magic */
		{ 4, 1, 2, -EPROTONOSUPPORT },          /* version */
		{ 4, 1, 0, -EPROTONOSUPPORT },
		{ 5, 1, 0, -EPROTO },                   /* kind */
		{ 5, 1, 3, -EPROTO },
		{ 6, 2, 47, -EPROTO },                  /* length field */
		{ 6, 2, 49, -EPROTO },
		{ 8, 2, DTXN_MAX_NODES, -EPROTO },      /* src node */
		{ 10, 2, 0xffff, -EPROTO },             /* dst node */
		{ 10, 2, 1, -EPROTO },                  /* dst == src */
		{ 16, 8, UINT64_MAX - 4096, -EPROTO },  /* region end overflows */
		{ 24, 8, 0, -EPROTO },                  /* empty region */
		{ 40, 4, MLX5_MSG_DM_MAX + 8, -EPROTO },/* DM too large */
		{ 40, 4, 0, -EPROTO },                  /* DM flag, no DM */
		{ 44, 4, 0x4 | MLX5_MSG_F_ALL, -EPROTO },/* unknown flag */
		{ 44, 4, MLX5_MSG_F_DM, -EPROTO },      /* DM without region */
		{ 44, 4, 0, -EPROTO },                  /* keys without flags */
		{ 44, 4, MLX5_MSG_F_REGION, -EPROTO },  /* DM keys without DM flag */
	};
	uint8_t good[MLX5_MSG_BYTES], buf[MLX5_MSG_BYTES];
	struct mlx5_msg d;

	(void)state;
	assert_int_equal(mlx5_msg_encode(good, sizeof(good), &g_accept), MLX5_MSG_BYTES);
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memcpy(buf, good, sizeof(buf));
		tm_put(buf + bad[i].off, bad[i].val, bad[i].bytes);
		assert_int_equal(mlx5_msg_decode(buf, sizeof(buf), &d), bad[i].rc);
	}
	/* a HELLO never carries keys */
	memcpy(buf, good, sizeof(buf));
	buf[5] = MLX5_MSG_HELLO;
	assert_int_equal(mlx5_msg_decode(buf, sizeof(buf), &d), -EPROTO);
}

static uint64_t g_rng = 0x9e3779b97f4a7c15ull;

static uint64_t
tm_rand(void)
{
	g_rng ^= g_rng << 13;
	g_rng ^= g_rng >> 7;
	g_rng ^= g_rng << 17;
	return g_rng;
}

/* Anything decode accepts re-encodes to the same bytes; nothing crashes. */
static void
tm_fuzz_one(const uint8_t *buf, size_t len, unsigned *accepted)
{
	uint8_t again[MLX5_MSG_BYTES];
	struct mlx5_msg d;
	int rc = mlx5_msg_decode(buf, len, &d);

	assert_true(rc == 0 || rc == -EMSGSIZE || rc == -EPROTO || rc == -EPROTONOSUPPORT);
	if (rc != 0)
		return;
	(*accepted)++;
	assert_int_equal(mlx5_msg_encode(again, sizeof(again), &d), MLX5_MSG_BYTES);
	assert_memory_equal(again, buf, MLX5_MSG_BYTES);
}

static void
test_msg_fuzz(void **state)
{
	uint8_t good[MLX5_MSG_BYTES], buf[64];
	unsigned accepted = 0, flips_accepted = 0;

	(void)state;
	assert_int_equal(mlx5_msg_encode(good, sizeof(good), &g_accept), MLX5_MSG_BYTES);
	/* random bytes behind a valid header, random lengths */
	for (unsigned i = 0; i < 20000; i++) {
		size_t len = tm_rand() % sizeof(buf);

		for (size_t j = 0; j < sizeof(buf); j++)
			buf[j] = (uint8_t)tm_rand();
		if (i & 1)
			memcpy(buf, good, 8);
		tm_fuzz_one(buf, len, &accepted);
	}
	/* every single-bit flip of a valid message */
	for (unsigned bit = 0; bit < MLX5_MSG_BYTES * 8; bit++) {
		memcpy(buf, good, MLX5_MSG_BYTES);
		buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		tm_fuzz_one(buf, MLX5_MSG_BYTES, &flips_accepted);
	}
	/* flips of the header never pass; flips of base/keys/seq do */
	assert_true(flips_accepted > 0);
	assert_true(flips_accepted < MLX5_MSG_BYTES * 8 - 64);
}

/* ------------------------------------------------------------------ */
/* Posting plan                                                       */
/* ------------------------------------------------------------------ */

static uint8_t g_reg[4096];   /* stands for registered memory */

static const struct mlx5_lkey_range g_ranges[] = {
	{ (uintptr_t)g_reg, 1024, 0x11 },
	{ (uintptr_t)g_reg + 2048, 2048, 0x22 },
};

static void
tm_wr(struct dtxn_wr *wr, uint8_t op, void *local, uint32_t len, uint8_t flags)
{
	memset(wr, 0, sizeof(*wr));
	wr->opcode = op;
	wr->local = local;
	wr->len = len;
	wr->flags = flags;
}

static void
test_lkey_find(void **state)
{
	uint32_t k = 0;

	(void)state;
	assert_true(mlx5_lkey_find(g_ranges, 2, g_reg, 1024, &k));
	assert_int_equal(k, 0x11);
	assert_false(mlx5_lkey_find(g_ranges, 2, g_reg, 1025, &k));      /* runs past */
	assert_false(mlx5_lkey_find(g_ranges, 2, g_reg + 1024, 1, &k));  /* the gap */
	assert_true(mlx5_lkey_find(g_ranges, 2, g_reg + 4095, 1, &k));
	assert_int_equal(k, 0x22);
	assert_false(mlx5_lkey_find(g_ranges, 2, g_reg + 4095, 2, &k));
	assert_false(mlx5_lkey_find(g_ranges, 2, (void *)((uintptr_t)g_reg - 1), 1, &k)); /* before all */
	assert_false(mlx5_lkey_find(g_ranges, 0, g_reg, 1, &k));
	assert_false(mlx5_lkey_find(g_ranges, 2, NULL, 8, &k));
}

static void
test_plan_inline(void **state)
{
	const struct mlx5_caps caps = { .max_inline = 64, .masked_cas = true };
	struct dtxn_wr wr[6];
	struct mlx5_wr_plan p[6];
	uint32_t run = 0;

	(void)state;
	tm_wr(&wr[0], DTXN_WR_WRITE, g_reg, 64, 0);          /* at the threshold: inline */
	tm_wr(&wr[1], DTXN_WR_WRITE, g_reg, 65, 0);          /* above: DMA */
	tm_wr(&wr[2], DTXN_WR_SEND, g_reg, 0, 0);            /* empty SEND: inline */
	tm_wr(&wr[3], DTXN_WR_SEND, g_reg + 2048, 512, 0);
	tm_wr(&wr[4], DTXN_WR_READ, g_reg, 8, 0);            /* READ is never inline */
	tm_wr(&wr[5], DTXN_WR_MASKED_CAS, g_reg, 8, DTXN_WR_F_SIGNALED);
	for (unsigned i = 0; i < 5; i++)
		wr[i].next = &wr[i + 1];
	assert_int_equal(mlx5_chain_plan(wr, &caps, g_ranges, 2, 0x99, 64, &run, p, 6), 6);
	assert_int_equal(p[0].verb, MLX5_VERB_WRITE_INLINE);
	assert_int_equal(p[1].verb, MLX5_VERB_WRITE);
	assert_int_equal(p[1].lkey, 0x11);
	assert_int_equal(p[2].verb, MLX5_VERB_SEND_INLINE);
	assert_int_equal(p[3].verb, MLX5_VERB_SEND);
	assert_int_equal(p[3].lkey, 0x22);
	assert_int_equal(p[4].verb, MLX5_VERB_READ);
	assert_int_equal(p[5].verb, MLX5_VERB_MCAS_RAW);
	/* a device without masked atomics loops, every CAS signaled */
	{
		const struct mlx5_caps old = { .max_inline = 0, .masked_cas = false };

		wr[5].flags = 0;
		run = 0;
		assert_int_equal(mlx5_chain_plan(wr, &old, g_ranges, 2, 0x99, 64, &run, p, 6), 6);
		assert_int_equal(p[0].verb, MLX5_VERB_WRITE); /* max_inline 0: nothing inline */
		assert_int_equal(p[2].verb, MLX5_VERB_SEND_INLINE); /* 0 bytes fit anyway */
		assert_int_equal(p[5].verb, MLX5_VERB_MCAS_LOOP);
		assert_true(p[5].signaled);
		assert_false(p[5].user_cqe);
		assert_int_equal(run, 0);
	}
}

static void
test_plan_signaling(void **state)
{
	const struct mlx5_caps caps = { .max_inline = 64, .masked_cas = true };
	struct dtxn_wr wr[8];
	struct mlx5_wr_plan p[8];
	uint32_t run = 0, forced = 0, posted = 0;

	(void)state;
	assert_true(mlx5_signal_needed(true, 0, 64));
	assert_false(mlx5_signal_needed(false, 0, 64));
	assert_false(mlx5_signal_needed(false, 30, 64));
	assert_true(mlx5_signal_needed(false, 31, 64)); /* the 32nd in a row */
	/* 100 chains of 8 unsignaled WRITEs on a 64-deep QP: one in 32 signaled */
	for (unsigned i = 0; i < 8; i++) {
		tm_wr(&wr[i], DTXN_WR_WRITE, g_reg, 8, 0);
		wr[i].next = i < 7 ? &wr[i + 1] : NULL;
	}
	for (unsigned c = 0; c < 100; c++) {
		assert_int_equal(mlx5_chain_plan(wr, &caps, g_ranges, 2, 0, 64, &run, p, 8), 8);
		for (unsigned i = 0; i < 8; i++) {
			posted++;
			assert_false(p[i].user_cqe);
			if (p[i].signaled) {
				forced++;
				assert_int_equal(posted % 32, 0);
			}
		}
		assert_true(run < 32);
	}
	assert_int_equal(forced, 800 / 32);
	/* a caller-signaled WR resets the run */
	wr[3].flags = DTXN_WR_F_SIGNALED;
	run = 20;
	assert_int_equal(mlx5_chain_plan(wr, &caps, g_ranges, 2, 0, 64, &run, p, 8), 8);
	assert_true(p[3].signaled && p[3].user_cqe);
	assert_int_equal(run, 4);
}

static void
test_plan_bounce(void **state)
{
	const struct mlx5_caps caps = { .max_inline = 32, .masked_cas = true };
	uint8_t stack[MLX5_BOUNCE_BYTES + 1];
	uint64_t old;
	struct dtxn_wr wr[3];
	struct mlx5_wr_plan p[3];
	uint32_t run = 5;

	(void)state;
	tm_wr(&wr[0], DTXN_WR_CAS, &old, 8, 0);                      /* unregistered 8 B */
	tm_wr(&wr[1], DTXN_WR_READ, stack, MLX5_BOUNCE_BYTES, 0);    /* fits the bounce */
	tm_wr(&wr[2], DTXN_WR_WRITE, stack, 16, 0);                  /* inline: no key */
	wr[0].next = &wr[1];
	wr[1].next = &wr[2];
	assert_int_equal(mlx5_chain_plan(wr, &caps, g_ranges, 2, 0x77, 64, &run, p, 3), 3);
	assert_true(p[0].bounce);
	assert_int_equal(p[0].lkey, 0x77);
	assert_true(p[1].bounce);
	assert_false(p[2].bounce);
	assert_int_equal(run, 8);
	/* too large to bounce: refused, the run untouched */
	wr[1].len = MLX5_BOUNCE_BYTES + 1;
	assert_int_equal(mlx5_chain_plan(wr, &caps, g_ranges, 2, 0x77, 64, &run, p, 3), -EFAULT);
	assert_int_equal(run, 8);
	/* more WRs than plan entries */
	wr[1].len = 8;
	assert_int_equal(mlx5_chain_plan(wr, &caps, g_ranges, 2, 0x77, 64, &run, p, 2), -ENOBUFS);
	assert_int_equal(run, 8);
}

static void
test_raddr_map(void **state)
{
	const struct mlx5_peer_mr dm = { .base = 0x10000, .len = 4096, .rkey = 5,
					 .dm_rkey = 9, .dm_len = 64 };
	struct mlx5_peer_mr host = dm;
	uint64_t a;
	uint32_t k;

	(void)state;
	assert_true(mlx5_raddr_map(&dm, 8, 8, &a, &k));       /* TSO word: device memory */
	assert_int_equal(a, 8);
	assert_int_equal(k, 9);
	assert_true(mlx5_raddr_map(&dm, 56, 8, &a, &k));
	assert_true(mlx5_raddr_map(&dm, 64, 100, &a, &k));    /* host region */
	assert_int_equal(a, 0x10000 + 64);
	assert_int_equal(k, 5);
	assert_true(mlx5_raddr_map(&dm, 4088, 8, &a, &k));
	/* crossing the DM boundary or the region's end: past the end */
	assert_false(mlx5_raddr_map(&dm, 60, 8, &a, &k));
	assert_int_equal(a, 0x10000 + 4096);
	assert_int_equal(k, 5);
	assert_false(mlx5_raddr_map(&dm, 4090, 8, &a, &k));
	assert_false(mlx5_raddr_map(&dm, 5000, 1, &a, &k));
	assert_false(mlx5_raddr_map(&dm, UINT64_MAX - 2, 8, &a, &k));
	/* no device memory: the first bytes are host memory */
	host.dm_len = 0;
	assert_true(mlx5_raddr_map(&host, 8, 8, &a, &k));
	assert_int_equal(a, 0x10008);
	assert_int_equal(k, 5);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wqe_layout),
		cmocka_unit_test(test_wqe_fields),
		cmocka_unit_test(test_wqe_vs_mlx5dv),
		cmocka_unit_test(test_msg_roundtrip),
		cmocka_unit_test(test_msg_truncated),
		cmocka_unit_test(test_msg_malformed),
		cmocka_unit_test(test_msg_fuzz),
		cmocka_unit_test(test_lkey_find),
		cmocka_unit_test(test_plan_inline),
		cmocka_unit_test(test_plan_signaling),
		cmocka_unit_test(test_plan_bounce),
		cmocka_unit_test(test_raddr_map),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
