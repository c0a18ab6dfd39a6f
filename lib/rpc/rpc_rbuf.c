/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Receive buffers (rpc_private.h): one chain of signaled RECVs per QP,
 * for the CN side (rpc.c) and the MN side (rpc_srv.c) alike.
 */
#include <errno.h>

#include <rte_common.h>
#include <rte_malloc.h>

#include "dtxn_fabric.h"
#include "rpc_private.h"

int
rpc_rbufs_post(struct dtxn_qp *qp, void *owner, unsigned n, int socket_id,
	       struct rpc_rbuf **rbufs)
{
	struct rpc_rbuf *rb = rte_zmalloc_socket("dtxn_rpc_rbufs", sizeof(*rb) * n,
						 RTE_CACHE_LINE_SIZE, socket_id);

	*rbufs = rb;
	if (rb == NULL)
		return -ENOMEM;
	for (unsigned i = 0; i < n; i++) {
		rb[i].owner = owner;
		rb[i].wr.opcode = DTXN_WR_RECV;
		rb[i].wr.flags = DTXN_WR_F_SIGNALED;
		rb[i].wr.wr_id = (uintptr_t)&rb[i];
		rb[i].wr.local = rb[i].data;
		rb[i].wr.len = (uint32_t)sizeof(rb[i].data);
		rb[i].wr.next = i + 1 < n ? &rb[i + 1].wr : NULL;
	}
	return dtxn_qp_post_recv(qp, &rb[0].wr);
}
