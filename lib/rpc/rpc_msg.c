/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Decoding a received message (rpc_private.h): the one place where bytes
 * from another CN are trusted or not.
 */
#include <errno.h>
#include <string.h>

#include "rpc_private.h"

int
rpc_msg_decode(const void *msg, uint32_t len, uint16_t worker, struct dtxn_rpc_hdr *h)
{
	if (msg == NULL || h == NULL || len < sizeof(*h))
		return -EBADMSG;
	memcpy(h, msg, sizeof(*h));
	if (h->magic != RPC_MAGIC || h->type >= DTXN_RPC_TYPES || h->worker != worker ||
	    (uint32_t)h->len > len - sizeof(*h))
		return -EBADMSG;
	if (h->kind != RPC_KIND_REQ && h->kind != RPC_KIND_RESP)
		return -EBADMSG;
	return h->kind;
}
