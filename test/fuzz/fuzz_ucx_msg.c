/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ucx driver's connect message (ucx_msg_decode(),
 * drivers/fabric/ucx/ucx_msg.c): what a peer sends on the control TCP
 * connection. A message the decoder accepts must encode back to the same
 * bytes; anything else is refused without touching the output. The same
 * bytes, after a 2-byte descriptor count, are a verb message
 * (ucx_vmsg_check(), ucx_vmsg.h): one it accepts must account for every
 * byte, descriptors plus WRITE payloads.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "ucx_pure.h"
#include "ucx_vmsg.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t again[UCX_MSG_MAX];
	struct ucx_vmsg_shape sh;
	struct ucx_msg m;
	int len;

	if (size >= 2) {
		uint16_t n = (uint16_t)(data[0] | data[1] << 8);
		size_t w = 0, r = 0, a = 0;

		if (ucx_vmsg_check(data + 2, size - 2, n, &sh) == 0) {
			for (uint16_t i = 0; i < n; i++) {
				struct ucx_vdesc d;

				memcpy(&d, data + 2 + (size_t)i * sizeof(d), sizeof(d));
				w += d.opcode == DTXN_WR_WRITE ? d.len : 0;
				r += d.opcode == DTXN_WR_READ ? d.len : 0;
				a += !d.quiet;
			}
			if ((size_t)n * sizeof(struct ucx_vdesc) + w != size - 2 ||
			    r != sh.read_bytes || a != sh.n_answer)
				abort();
		}
	}
	if (ucx_msg_decode(data, size, &m) != 0)
		return 0;
	len = ucx_msg_encode(again, sizeof(again), &m);
	if (len < 0 || (size_t)len != size || memcmp(again, data, size) != 0)
		abort();
	return 0;
}
