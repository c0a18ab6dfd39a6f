/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ucx driver's connect message (ucx_msg_decode(),
 * drivers/fabric/ucx/ucx_msg.c): what a peer sends on the control TCP
 * connection. A message the decoder accepts must encode back to the same
 * bytes; anything else is refused without touching the output.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "ucx_pure.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t again[UCX_MSG_MAX];
	struct ucx_msg m;
	int len;

	if (ucx_msg_decode(data, size, &m) != 0)
		return 0;
	len = ucx_msg_encode(again, sizeof(again), &m);
	if (len < 0 || (size_t)len != size || memcmp(again, data, size) != 0)
		abort();
	return 0;
}
