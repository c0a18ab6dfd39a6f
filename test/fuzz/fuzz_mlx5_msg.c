/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The mlx5 driver's connect message (mlx5_msg_decode(),
 * drivers/fabric/mlx5/mlx5_msg.c): what a peer sends in rdma_cm private
 * data. The input is the private data. A message the decoder accepts must
 * encode back to the same 48 bytes; anything else is refused without
 * touching the output.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "mlx5_pure.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t again[MLX5_MSG_BYTES];
	struct mlx5_msg m;

	if (mlx5_msg_decode(data, size, &m) != 0)
		return 0;
	if (mlx5_msg_encode(again, sizeof(again), &m) != MLX5_MSG_BYTES ||
	    memcmp(again, data, MLX5_MSG_BYTES) != 0)
		abort();
	return 0;
}
