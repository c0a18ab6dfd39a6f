/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The masked compare-and-swap send WQE of ConnectX (mlx5_pure.h). Written
 * byte by byte in big-endian, so it is the same on any host and testable
 * without a device.
 */
#include <string.h>

#include "mlx5_pure.h"

static void
wqe_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static void
wqe_be64(uint8_t *p, uint64_t v)
{
	wqe_be32(p, (uint32_t)(v >> 32));
	wqe_be32(p + 4, (uint32_t)v);
}

_Static_assert(MLX5_MCAS_WQE_BYTES % MLX5_PRM_DS_BYTES == 0, "WQE is whole DS");
_Static_assert(MLX5_MCAS_WQE_BYTES / MLX5_PRM_DS_BYTES <= 0x3f, "DS fits its 6-bit field");

size_t
mlx5_wqe_masked_cas(uint8_t *buf, size_t len, const struct mlx5_mcas_args *a)
{
	uint8_t *c = buf + MLX5_MCAS_OFF_CTRL;

	if (buf == NULL || a == NULL || len < MLX5_MCAS_WQE_BYTES || a->qpn > 0xffffff)
		return 0;
	memset(buf, 0, MLX5_MCAS_WQE_BYTES);
	/* control: opmod(8) | wqe_index(16, set by rdma-core) | opcode(8) */
	wqe_be32(c, (uint32_t)MLX5_PRM_OPMOD_EXT_ATOMIC_8B << 24 | MLX5_PRM_OPCODE_ATOMIC_MASKED_CS);
	/* qpn(24) | ds(8) */
	wqe_be32(c + 4, a->qpn << 8 | MLX5_MCAS_WQE_BYTES / MLX5_PRM_DS_BYTES);
	/* c[8] signature (rdma-core), c[9..10] DCI stream 0 */
	c[11] = a->signaled ? MLX5_PRM_CTRL_CQ_UPDATE : 0;
	/* c[12..15] immediate: unused */
	wqe_be64(buf + MLX5_MCAS_OFF_RADDR, a->raddr);
	wqe_be32(buf + MLX5_MCAS_OFF_RADDR + 8, a->rkey);
	wqe_be64(buf + MLX5_MCAS_OFF_DATA, a->swap);
	wqe_be64(buf + MLX5_MCAS_OFF_DATA + 8, a->compare);
	wqe_be64(buf + MLX5_MCAS_OFF_MASK, a->swap_mask);
	wqe_be64(buf + MLX5_MCAS_OFF_MASK + 8, a->compare_mask);
	/* data segment: byte_count, lkey, address of the 8-byte result */
	wqe_be32(buf + MLX5_MCAS_OFF_LOCAL, 8);
	wqe_be32(buf + MLX5_MCAS_OFF_LOCAL + 4, a->lkey);
	wqe_be64(buf + MLX5_MCAS_OFF_LOCAL + 8, a->laddr);
	return MLX5_MCAS_WQE_BYTES;
}
