/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ucx driver's connect message (drivers/fabric/ucx/ucx_pure.h): no
 * EAL, no UCX. Round trips of each kind (the incarnation of version 2
 * included), and refusal of every broken field, a truncated or overlong
 * buffer and another version. The verb
 * message's checks (ucx_vmsg.h): its shape, and refusal of every broken
 * length, opcode and flag.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ucx_pure.h"
#include "ucx_vmsg.h"

static const uint8_t g_waddr[40] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };
static const uint8_t g_rkey[24] = { 0xaa, 0xbb, 0xcc };

static struct ucx_msg
accept_msg(void)
{
	return (struct ucx_msg){ .kind = UCX_MSG_ACCEPT, .src_node = 1, .dst_node = 3, .n_mn = 3,
				 .n_cn = 2, .digest = 0x1234, .base = 0x7f0000001000,
				 .region_len = 1 << 20, .waddr = g_waddr,
				 .waddr_len = sizeof(g_waddr), .rkey = g_rkey,
				 .rkey_len = sizeof(g_rkey) };
}

static void
test_round_trip(void **state)
{
	uint8_t buf[UCX_MSG_MAX];
	struct ucx_msg m = accept_msg(), d;
	struct ucx_msg hello = { .kind = UCX_MSG_HELLO, .src_node = 3, .dst_node = 1, .n_mn = 3,
				 .n_cn = 2, .digest = ucx_msg_digest("bench=smallbank") };
	struct ucx_msg refuse = { .kind = UCX_MSG_REFUSE, .reason = UCX_REFUSE_NOT_READY,
				  .src_node = 1, .dst_node = 3, .n_mn = 3, .n_cn = 2 };
	int len;

	(void)state;
	len = ucx_msg_encode(buf, sizeof(buf), &m);
	assert_int_equal(len, UCX_MSG_HDR_BYTES + sizeof(g_waddr) + sizeof(g_rkey));
	assert_int_equal(ucx_msg_peek_len(buf), len);
	assert_int_equal(ucx_msg_decode(buf, (size_t)len, &d), 0);
	assert_int_equal(d.kind, UCX_MSG_ACCEPT);
	assert_int_equal(d.base, m.base);
	assert_int_equal(d.region_len, m.region_len);
	assert_int_equal(d.digest, 0x1234);
	assert_int_equal(d.waddr_len, sizeof(g_waddr));
	assert_memory_equal(d.waddr, g_waddr, sizeof(g_waddr));
	assert_memory_equal(d.rkey, g_rkey, sizeof(g_rkey));
	len = ucx_msg_encode(buf, sizeof(buf), &hello);
	assert_int_equal(len, UCX_MSG_HDR_BYTES);
	assert_int_equal(ucx_msg_decode(buf, (size_t)len, &d), 0);
	assert_int_equal(d.digest, hello.digest);
	assert_int_equal(d.incarnation, 0);
	/* incarnations: a HELLO's (UCX_INC_NEXT: the MN picks), the ACCEPT's
	 * admitted one, the REFUSE FENCED's fenced one */
	hello.incarnation = UCX_INC_NEXT;
	len = ucx_msg_encode(buf, sizeof(buf), &hello);
	assert_int_equal(ucx_msg_decode(buf, (size_t)len, &d), 0);
	assert_int_equal(d.incarnation, UCX_INC_NEXT);
	hello.incarnation = 2;
	len = ucx_msg_encode(buf, sizeof(buf), &hello);
	assert_int_equal(ucx_msg_decode(buf, (size_t)len, &d), 0);
	assert_int_equal(d.incarnation, 2);
	m.incarnation = 1;
	len = ucx_msg_encode(buf, sizeof(buf), &m);
	assert_int_equal(ucx_msg_decode(buf, (size_t)len, &d), 0);
	assert_int_equal(d.incarnation, 1);
	assert_memory_equal(d.rkey, g_rkey, sizeof(g_rkey));
	m.incarnation = 0;
	{
		struct ucx_msg fenced = { .kind = UCX_MSG_REFUSE, .reason = UCX_REFUSE_FENCED,
					  .src_node = 1, .dst_node = 3, .n_mn = 3, .n_cn = 2,
					  .incarnation = 4 };

		len = ucx_msg_encode(buf, sizeof(buf), &fenced);
		assert_int_equal(ucx_msg_decode(buf, (size_t)len, &d), 0);
		assert_int_equal(d.reason, UCX_REFUSE_FENCED);
		assert_int_equal(d.incarnation, 4);
		fenced.reason = UCX_REFUSE_PREDECESSOR; /* ask again: carries none */
		fenced.incarnation = 0;
		len = ucx_msg_encode(buf, sizeof(buf), &fenced);
		assert_int_equal(ucx_msg_decode(buf, (size_t)len, &d), 0);
		assert_int_equal(d.reason, UCX_REFUSE_PREDECESSOR);
	}
	len = ucx_msg_encode(buf, sizeof(buf), &refuse);
	assert_int_equal(ucx_msg_decode(buf, (size_t)len, &d), 0);
	assert_int_equal(d.reason, UCX_REFUSE_NOT_READY);
	/* a survivor's FENCE of cn1 (node 4) and the MN's answer */
	{
		struct ucx_msg fence = { .kind = UCX_MSG_FENCE, .src_node = 3, .dst_node = 0,
					 .n_mn = 3, .n_cn = 2, .base = 4 };
		struct ucx_msg fenced = fence;

		fenced.kind = UCX_MSG_FENCED;
		fenced.src_node = 0;
		fenced.dst_node = 3;
		fenced.region_len = 2; /* connections cut */
		len = ucx_msg_encode(buf, sizeof(buf), &fence);
		assert_int_equal(ucx_msg_decode(buf, (size_t)len, &d), 0);
		assert_int_equal(d.kind, UCX_MSG_FENCE);
		assert_int_equal(d.base, 4);
		len = ucx_msg_encode(buf, sizeof(buf), &fenced);
		assert_int_equal(ucx_msg_decode(buf, (size_t)len, &d), 0);
		assert_int_equal(d.region_len, 2);
		fence.base = DTXN_MAX_NODES; /* no such node */
		assert_int_equal(ucx_msg_encode(buf, sizeof(buf), &fence), -EINVAL);
		fence.base = 4;
		fence.region_len = 1; /* a FENCE carries no count */
		assert_int_equal(ucx_msg_encode(buf, sizeof(buf), &fence), -EINVAL);
		fence.region_len = 0;
		fence.waddr = g_waddr; /* nor an address */
		fence.waddr_len = 8;
		assert_int_equal(ucx_msg_encode(buf, sizeof(buf), &fence), -EINVAL);
	}
	/* the digest tells runs apart */
	assert_true(ucx_msg_digest("bench=smallbank protocol=ford") !=
		    ucx_msg_digest("bench=smallbank protocol=motor"));
}

static void
test_refused(void **state)
{
	uint8_t buf[UCX_MSG_MAX];
	struct ucx_msg m = accept_msg(), d;
	int len;

	(void)state;
	len = ucx_msg_encode(buf, sizeof(buf), &m);
	/* truncated, overlong, too short for a header */
	assert_int_equal(ucx_msg_decode(buf, (size_t)len - 1, &d), -EMSGSIZE);
	assert_int_equal(ucx_msg_decode(buf, (size_t)len + 1, &d), -EMSGSIZE);
	assert_int_equal(ucx_msg_decode(buf, 10, &d), -EMSGSIZE);
	assert_int_equal(ucx_msg_encode(buf, 20, &m), -EMSGSIZE);
	/* magic, version, kind */
	buf[0] ^= 1;
	assert_int_equal(ucx_msg_decode(buf, (size_t)len, &d), -EPROTO);
	buf[0] ^= 1;
	buf[4] = 1; /* version 1: no incarnation */
	assert_int_equal(ucx_msg_decode(buf, (size_t)len, &d), -EPROTONOSUPPORT);
	buf[4] = 3;
	assert_int_equal(ucx_msg_decode(buf, (size_t)len, &d), -EPROTONOSUPPORT);
	buf[4] = UCX_MSG_VERSION;
	buf[6] = 9;
	assert_int_equal(ucx_msg_decode(buf, (size_t)len, &d), -EPROTO);
	buf[6] = UCX_MSG_ACCEPT;
	/* a length field that disagrees with the parts */
	buf[20] ^= 1;
	assert_int_equal(ucx_msg_decode(buf, (size_t)len, &d), -EPROTO);
	buf[20] ^= 1;
	assert_int_equal(ucx_msg_decode(buf, (size_t)len, &d), 0);
	/* the reserved word after the incarnation */
	buf[52] = 1;
	assert_int_equal(ucx_msg_decode(buf, (size_t)len, &d), -EPROTO);
	buf[52] = 0;
	assert_int_equal(ucx_msg_decode(buf, (size_t)len, &d), 0);
	/* semantic checks, through the encoder */
	m.src_node = m.dst_node;
	assert_int_equal(ucx_msg_encode(buf, sizeof(buf), &m), -EINVAL);
	m = accept_msg();
	m.rkey_len = 0; /* a region without its key */
	assert_int_equal(ucx_msg_encode(buf, sizeof(buf), &m), -EINVAL);
	m = accept_msg();
	m.region_len = UINT64_MAX; /* its end overflows */
	assert_int_equal(ucx_msg_encode(buf, sizeof(buf), &m), -EINVAL);
	m = accept_msg();
	m.waddr_len = 0;
	m.waddr = NULL;
	assert_int_equal(ucx_msg_encode(buf, sizeof(buf), &m), -EINVAL);
	m = accept_msg();
	m.n_mn = 60;
	m.n_cn = 10;
	assert_int_equal(ucx_msg_encode(buf, sizeof(buf), &m), -EINVAL);
	m = accept_msg();
	m.kind = UCX_MSG_HELLO; /* a HELLO with keys */
	assert_int_equal(ucx_msg_encode(buf, sizeof(buf), &m), -EINVAL);
	m = (struct ucx_msg){ .kind = UCX_MSG_REFUSE, .src_node = 1, .dst_node = 2, .n_mn = 1,
			      .n_cn = 2 }; /* a REFUSE without a reason */
	assert_int_equal(ucx_msg_encode(buf, sizeof(buf), &m), -EINVAL);
	/* an incarnation where none belongs: a REFUSE of another reason than
	 * FENCED, a FENCE, a FENCED; UCX_INC_NEXT on anything but a HELLO */
	m.reason = UCX_REFUSE_NOT_READY;
	m.incarnation = 1;
	assert_int_equal(ucx_msg_encode(buf, sizeof(buf), &m), -EINVAL);
	m.reason = UCX_REFUSE_FENCED;
	assert_int_equal(ucx_msg_encode(buf, sizeof(buf), &m), UCX_MSG_HDR_BYTES);
	m.incarnation = UCX_INC_NEXT;
	assert_int_equal(ucx_msg_encode(buf, sizeof(buf), &m), -EINVAL);
	m = accept_msg();
	m.incarnation = UCX_INC_NEXT;
	assert_int_equal(ucx_msg_encode(buf, sizeof(buf), &m), -EINVAL);
	m = (struct ucx_msg){ .kind = UCX_MSG_FENCE, .src_node = 3, .dst_node = 0, .n_mn = 3,
			      .n_cn = 2, .base = 4, .incarnation = 1 };
	assert_int_equal(ucx_msg_encode(buf, sizeof(buf), &m), -EINVAL);
	m.kind = UCX_MSG_FENCED;
	assert_int_equal(ucx_msg_encode(buf, sizeof(buf), &m), -EINVAL);
	/* a decoded message with an incarnation where none belongs */
	m.incarnation = 0;
	len = ucx_msg_encode(buf, sizeof(buf), &m);
	buf[48] = 1;
	assert_int_equal(ucx_msg_decode(buf, (size_t)len, &d), -EPROTO);
}

/* Lays @p n descriptors then @p payload into @p buf; returns the length. */
static size_t
vmsg_lay(uint8_t *buf, const struct ucx_vdesc *d, uint32_t n, const void *payload, size_t plen)
{
	memcpy(buf, d, n * sizeof(*d));
	memcpy(buf + n * sizeof(*d), payload, plen);
	return n * sizeof(*d) + plen;
}

/* ucx_vmsg_check() of the 4 descriptors @p d laid out with 16 B of WRITE payload. */
static int
vmsg_check4(const struct ucx_vdesc *d)
{
	static uint8_t buf[4096];
	static const uint8_t pay[16];

	return ucx_vmsg_check(buf, vmsg_lay(buf, d, 4, pay, sizeof(pay)), 4, NULL);
}

/* A copy b of the 4 descriptors @p d, changed by @p change, is refused. */
#define VMSG_BROKEN(d, change)                                                  \
	do {                                                                    \
		struct ucx_vdesc b[4];                                          \
		memcpy(b, (d), sizeof(b));                                      \
		change;                                                         \
		assert_int_equal(vmsg_check4(b), -EPROTO);                      \
	} while (0)

/* The verb message (ucx_vmsg.h): a doorbell's verbs, checked whole. */
static void
test_vmsg(void **state)
{
	static uint8_t buf[4096];
	uint8_t pay[24] = { 1, 2, 3 };
	struct ucx_vdesc d[4] = {
		{ .cookie = 1, .off = 64, .len = 16, .opcode = DTXN_WR_WRITE, .quiet = 1 },
		{ .cookie = 2, .off = 64, .len = 16, .opcode = DTXN_WR_READ },
		{ .cookie = 3, .off = 8, .len = 8, .operand = 0, .swap = 5, .opcode = DTXN_WR_CAS },
		{ .cookie = 4, .off = 128, .len = 8, .operand = 1, .opcode = DTXN_WR_FAA },
	};
	struct ucx_vmsg_shape sh = { 99, 99 };
	size_t len;

	(void)state;
	len = vmsg_lay(buf, d, 4, pay, 16);
	assert_int_equal(ucx_vmsg_check(buf, len, 4, &sh), 0);
	assert_int_equal(sh.n_answer, 3);   /* the quiet WRITE has none */
	assert_int_equal(sh.read_bytes, 16);
	assert_int_equal(ucx_vrep_bytes(&sh), 3 * sizeof(struct ucx_vrep) + 16);
	/* the length must be exactly descriptors + WRITE payloads */
	assert_int_equal(ucx_vmsg_check(buf, len - 1, 4, NULL), -EPROTO);
	assert_int_equal(ucx_vmsg_check(buf, len + 1, 4, NULL), -EPROTO);
	assert_int_equal(ucx_vmsg_check(buf, len, 3, NULL), -EPROTO);
	assert_int_equal(ucx_vmsg_check(buf, len, 0, NULL), -EPROTO);
	assert_int_equal(ucx_vmsg_check(buf, len, UCX_VMSG_MAX_VERBS + 1, NULL), -EPROTO);
	assert_int_equal(ucx_vmsg_check(NULL, len, 4, NULL), -EPROTO);
	assert_int_equal(vmsg_check4(d), 0);
	/* each broken field alone: a WRITE whose length runs past the
	 * message, an atomic of another size or unaligned, a quiet READ, an
	 * unknown opcode, a READ whose answer would pass the bound */
	VMSG_BROKEN(d, b[0].len = 4000);
	VMSG_BROKEN(d, b[2].len = 4);
	VMSG_BROKEN(d, b[3].off = 129);
	VMSG_BROKEN(d, b[1].quiet = 1);
	VMSG_BROKEN(d, b[1].opcode = DTXN_WR_SEND);
	VMSG_BROKEN(d, (b[1].len = UCX_VMSG_MAX_BYTES, b[3].opcode = DTXN_WR_READ, b[3].len = 8));
	/* the region: inside, at its end, past it, not served */
	d[1].off = 64;
	d[1].len = 16;
	assert_true(ucx_vdesc_in_region(&d[1], 80));
	assert_false(ucx_vdesc_in_region(&d[1], 79));
	assert_false(ucx_vdesc_in_region(&d[1], 0));
	d[1].off = UINT64_MAX - 8;
	assert_false(ucx_vdesc_in_region(&d[1], UINT64_MAX));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_vmsg),
	};

	return cmocka_run_group_tests_name("ucx", tests, NULL, NULL);
}
