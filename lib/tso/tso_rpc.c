/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The request of a remote counter (tso_private.h): the CN-side service's
 * server and a TSO proxy answer the same message.
 */
#include <errno.h>
#include <string.h>

#include "tso_private.h"

int
tso_rpc_add_lc(struct dtxn_rpc_ep *ep, uint16_t node, uint8_t type, uint64_t n, uint64_t *old)
{
	uint8_t resp[DTXN_RPC_RESP_MAX];
	struct dtxn_rpc_call call;

	memset(&call, 0, sizeof(call));
	call.dst_node = node;
	call.type = type;
	call.req = &n;
	call.req_len = sizeof(n);
	call.resp = resp;
	if (dtxn_rpc_call_lc(ep, &call, 1) != 0 || call.resp_len != sizeof(*old))
		return call.status == -ETIMEDOUT ? -ETIMEDOUT : -EIO;
	memcpy(old, resp, sizeof(*old));
	return 0;
}
