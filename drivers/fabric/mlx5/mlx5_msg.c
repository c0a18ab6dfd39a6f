/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The connect message (mlx5_pure.h): what a listener tells a connecting
 * node about the memory behind it, in rdma_cm's private data. Fixed
 * big-endian layout, version 1:
 *
 *   0 magic u32 | 4 version u8 | 5 kind u8 | 6 length u16
 *   8 src_node u16 | 10 dst_node u16 | 12 qp_seq u32
 *  16 base u64 | 24 len u64
 *  32 rkey u32 | 36 dm_rkey u32 | 40 dm_len u32 | 44 flags u32
 *
 * Untrusted input: the decoder checks every field before anything uses it.
 */
#include <errno.h>
#include <string.h>

#include "mlx5_pure.h"

#define MSG_HDR_BYTES 8

static void
msg_put(uint8_t *p, uint64_t v, unsigned bytes)
{
	for (unsigned i = 0; i < bytes; i++)
		p[i] = (uint8_t)(v >> (8 * (bytes - 1 - i)));
}

static uint64_t
msg_get(const uint8_t *p, unsigned bytes)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < bytes; i++)
		v = v << 8 | p[i];
	return v;
}

/* The semantic checks both directions share: 0 or -EPROTO. */
static int
msg_check(const struct mlx5_msg *m)
{
	bool region = (m->flags & MLX5_MSG_F_REGION) != 0;

	if (m->kind != MLX5_MSG_HELLO && m->kind != MLX5_MSG_ACCEPT)
		return -EPROTO;
	if ((m->flags & ~MLX5_MSG_F_ALL) != 0)
		return -EPROTO;
	if (m->src_node >= DTXN_MASK_NODES || m->dst_node >= DTXN_MASK_NODES ||
	    m->src_node == m->dst_node)
		return -EPROTO;
	if (m->kind == MLX5_MSG_HELLO && m->flags != 0)
		return -EPROTO;
	if (region && (m->len == 0 || m->base + m->len < m->base))
		return -EPROTO;
	if (!region && (m->base != 0 || m->len != 0 || m->rkey != 0))
		return -EPROTO;
	if ((m->flags & MLX5_MSG_F_DM) != 0 &&
	    (!region || m->dm_len == 0 || m->dm_len > MLX5_MSG_DM_MAX))
		return -EPROTO;
	if ((m->flags & MLX5_MSG_F_DM) == 0 && (m->dm_len != 0 || m->dm_rkey != 0))
		return -EPROTO;
	return 0;
}

int
mlx5_msg_encode(uint8_t *buf, size_t len, const struct mlx5_msg *m)
{
	int rc;

	if (buf == NULL || len < MLX5_MSG_BYTES)
		return -EMSGSIZE;
	rc = msg_check(m);
	if (rc != 0)
		return -EINVAL;
	memset(buf, 0, MLX5_MSG_BYTES);
	msg_put(buf + 0, MLX5_MSG_MAGIC, 4);
	buf[4] = MLX5_MSG_VERSION;
	buf[5] = m->kind;
	msg_put(buf + 6, MLX5_MSG_BYTES, 2);
	msg_put(buf + 8, m->src_node, 2);
	msg_put(buf + 10, m->dst_node, 2);
	msg_put(buf + 12, m->qp_seq, 4);
	msg_put(buf + 16, m->base, 8);
	msg_put(buf + 24, m->len, 8);
	msg_put(buf + 32, m->rkey, 4);
	msg_put(buf + 36, m->dm_rkey, 4);
	msg_put(buf + 40, m->dm_len, 4);
	msg_put(buf + 44, m->flags, 4);
	return MLX5_MSG_BYTES;
}

int
mlx5_msg_decode(const uint8_t *buf, size_t len, struct mlx5_msg *m)
{
	struct mlx5_msg d;
	int rc;

	if (buf == NULL || len < MSG_HDR_BYTES)
		return -EMSGSIZE;
	if (msg_get(buf, 4) != MLX5_MSG_MAGIC)
		return -EPROTO;
	if (buf[4] != MLX5_MSG_VERSION)
		return -EPROTONOSUPPORT;
	if (msg_get(buf + 6, 2) != MLX5_MSG_BYTES)
		return -EPROTO;
	if (len < MLX5_MSG_BYTES)
		return -EMSGSIZE;
	memset(&d, 0, sizeof(d));
	d.kind = buf[5];
	d.src_node = (uint16_t)msg_get(buf + 8, 2);
	d.dst_node = (uint16_t)msg_get(buf + 10, 2);
	d.qp_seq = (uint32_t)msg_get(buf + 12, 4);
	d.base = msg_get(buf + 16, 8);
	d.len = msg_get(buf + 24, 8);
	d.rkey = (uint32_t)msg_get(buf + 32, 4);
	d.dm_rkey = (uint32_t)msg_get(buf + 36, 4);
	d.dm_len = (uint32_t)msg_get(buf + 40, 4);
	d.flags = (uint32_t)msg_get(buf + 44, 4);
	rc = msg_check(&d);
	if (rc != 0)
		return rc;
	*m = d;
	return 0;
}
