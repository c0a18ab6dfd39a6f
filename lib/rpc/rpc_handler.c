/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The handler table of a worker's endpoint set, shared by both transports
 * (rpc.c's SEND/RECV and rrpc.c's WRITE rings): registering a handler and
 * running one on a request, with the checks every transport needs.
 */
#include <errno.h>

#include <rte_log.h>

#include "dtxn_fabric.h"
#include "rpc_private.h"

int
rpc_handler_set(struct rpc_handler *tab, uint8_t type, dtxn_rpc_handler_fn fn, void *arg)
{
	if (fn == NULL || type >= DTXN_RPC_TYPES)
		return -EINVAL;
	if (tab[type].fn != NULL)
		return -EEXIST;
	tab[type].fn = fn;
	tab[type].arg = arg;
	return 0;
}

int
rpc_handler_run(const struct rpc_handler *tab, uint8_t type, uint16_t src, const void *payload,
		uint16_t len, void *out, int logtype)
{
	const struct rpc_handler *hd = &tab[type];
	int n;

	if (hd->fn == NULL) {
		rte_log(RTE_LOG_WARNING, logtype,
			"dtxn.rpc: request of type %u from node %u: no handler\n", type, src);
		return RPC_HANDLER_BAD;
	}
	n = hd->fn(hd->arg, src, payload, len, out);
	if (n < 0)
		return RPC_HANDLER_NO_REPLY;
	if (n > (int)DTXN_RPC_RESP_MAX) {
		rte_log(RTE_LOG_ERR, logtype, "dtxn.rpc: handler of type %u returned %d reply bytes\n",
			type, n);
		return RPC_HANDLER_BAD;
	}
	return n;
}
