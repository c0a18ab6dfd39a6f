/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The message decoders: lib/rpc's header (rpc_msg_decode(),
 * lib/rpc/rpc_msg.c), which every CN-to-CN message goes through, and the
 * payloads handlers decode (Lotus's lock messages,
 * lotus_lk_msg_check()). Input: byte 0 chooses the decoder (even: rpc
 * header, odd: lock message), bytes 1-2 the receiving worker index or
 * the sending CN, the rest is the message, copied into an 8-byte aligned
 * buffer as the RECV buffers are.
 */
#include <stdint.h>
#include <string.h>

#include <rte_common.h>

#include "fuzz_common.h"
#include "lotus_private.h"
#include "rpc_private.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t msg[RPC_MSG_MAX] __rte_aligned(8);
	struct dtxn_rpc_hdr h;
	uint16_t who;
	uint32_t len;
	int rc;

	if (size < 3)
		return 0;
	who = (uint16_t)(data[1] | data[2] << 8);
	len = (uint32_t)RTE_MIN(size - 3, sizeof(msg));
	memcpy(msg, data + 3, len);
	if ((data[0] & 1) == 0) {
		rc = rpc_msg_decode(msg, len, who, &h);
		/* what the receive path then trusts */
		if (rc == RPC_KIND_REQ || rc == RPC_KIND_RESP) {
			if (sizeof(h) + h.len > len || h.type >= DTXN_RPC_TYPES || h.worker != who)
				__builtin_trap();
		}
	} else {
		rc = lotus_lk_msg_check(msg, len, who);
		if (rc > 0 && (uint32_t)rc * 16 + 16 > len)
			__builtin_trap(); /* ops past the message */
	}
	return 0;
}
