/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A QP's error state, injected (dtxn_qp_error_inject()): what a NIC does
 * when the peer is lost (transport retries exhausted), on every driver, so
 * the path from a failed WR to DTXN_ABORT_FABRIC and to the process's
 * stop (doc/guides/mlx5.md, "A lost peer") runs in CI without hardware.
 * The next WR posted fails with DTXN_WC_FATAL_ERR, every later one is
 * flushed (DTXN_WC_WR_FLUSH_ERR), each with its own completion (signaled
 * or not, as verbs reports errors), from the CQ's error ring, which
 * dtxn_cq_poll() drains before the driver's completions. The working
 * path pays one load and one branch per post and per poll.
 */
#include <errno.h>

#include <rte_common.h>
#include <rte_malloc.h>

#include "dtxn_fabric.h"
#include "dtxn_fabric_driver.h"
#include "fabric_private.h"

int
dtxn_qp_error_inject(struct dtxn_qp *qp)
{
	uint8_t ok = FABRIC_QP_OK;

	if (qp == NULL)
		return -EINVAL;
	/* once: a QP already in error stays as it is */
	(void)__atomic_compare_exchange_n(&qp->err_state, &ok, FABRIC_QP_ERR_PENDING, false,
					  __ATOMIC_RELAXED, __ATOMIC_RELAXED);
	FABRIC_LOG(DEBUG, "QP %u->%u: error state injected", qp->local_node, qp->remote_node);
	return 0;
}

int
fabric_post_errored(struct dtxn_qp *qp, const struct dtxn_wr *wr_list)
{
	struct dtxn_cq *cq = qp->cq;
	const struct dtxn_wr *wr;
	uint32_t n = 0;

	for (wr = wr_list; wr != NULL; wr = wr->next)
		n++;
	if (cq->err_ring == NULL) {
		cq->err_ring = rte_zmalloc("dtxn_cq_err", sizeof(*cq->err_ring) * cq->depth, 0);
		if (cq->err_ring == NULL)
			return -ENOMEM;
	}
	if (n > cq->depth - (cq->err_tail - cq->err_head))
		return -ENOBUFS;
	for (wr = wr_list; wr != NULL; wr = wr->next) {
		uint8_t st = DTXN_WC_WR_FLUSH_ERR;

		if (__atomic_load_n(&qp->err_state, __ATOMIC_RELAXED) == FABRIC_QP_ERR_PENDING) {
			st = DTXN_WC_FATAL_ERR;
			__atomic_store_n(&qp->err_state, FABRIC_QP_ERR, __ATOMIC_RELAXED);
		}
		cq->err_ring[cq->err_tail++ & (cq->depth - 1)] = (struct dtxn_cqe){
			.wr_id = wr->wr_id, .byte_len = 0, .opcode = wr->opcode, .status = st,
			.src_node = qp->remote_node,
		};
	}
	return 0;
}

unsigned
fabric_poll_errored(struct dtxn_cq *cq, struct dtxn_cqe *cqes, unsigned n)
{
	unsigned got = 0;

	while (got < n && cq->err_head != cq->err_tail)
		cqes[got++] = cq->err_ring[cq->err_head++ & (cq->depth - 1)];
	return got;
}

void
fabric_cq_err_free(struct dtxn_cq *cq)
{
	rte_free(cq->err_ring);
	cq->err_ring = NULL;
}
