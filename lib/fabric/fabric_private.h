/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DTXN_FABRIC_PRIVATE_H
#define DTXN_FABRIC_PRIVATE_H

/**
 * @file
 * lib/fabric internals: the log type shared by fabric.c and nic_model.c;
 * the injected error state of a QP (fault.c).
 * Never installed, never included outside lib/fabric.
 */

#include <rte_log.h>

#include "dtxn_fabric.h"

extern int dtxn_fabric_logtype;

#define FABRIC_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_##level, dtxn_fabric_logtype, "dtxn.fabric: " fmt "\n", ##__VA_ARGS__)

/** A QP's injected error state (struct dtxn_qp.err_state). */
enum fabric_qp_err {
	FABRIC_QP_OK = 0,
	FABRIC_QP_ERR_PENDING, /**< injected: the next WR fails with DTXN_WC_FATAL_ERR */
	FABRIC_QP_ERR,         /**< in the error state: WRs flush (DTXN_WC_WR_FLUSH_ERR) */
};

/**
 * dtxn_qp_post() on a QP in the injected error state: every WR of the
 * checked chain completes on the QP's CQ with an error (the first after
 * the injection DTXN_WC_FATAL_ERR, the rest DTXN_WC_WR_FLUSH_ERR), none
 * reaches the driver. @return 0, or -ENOBUFS/-ENOMEM (nothing posted).
 */
int fabric_post_errored(struct dtxn_qp *qp, const struct dtxn_wr *wr_list);

/** Moves up to @p n completions of fabric_post_errored() to @p cqes. @return how many. */
unsigned fabric_poll_errored(struct dtxn_cq *cq, struct dtxn_cqe *cqes, unsigned n);

/** Frees @p cq's error ring (before the driver frees the CQ). */
void fabric_cq_err_free(struct dtxn_cq *cq);

#endif /* DTXN_FABRIC_PRIVATE_H */
