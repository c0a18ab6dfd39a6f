/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ucx driver's connect message (drivers/fabric/ucx/ucx_pure.h): no
 * EAL, no UCX. Round trips of each kind, and refusal of every broken
 * field, a truncated or overlong buffer and another version.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ucx_pure.h"

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
	buf[4] = 2;
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
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests_name("ucx", tests, NULL, NULL);
}
