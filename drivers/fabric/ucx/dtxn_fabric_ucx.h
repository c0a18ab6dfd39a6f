/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DTXN_FABRIC_UCX_H
#define DTXN_FABRIC_UCX_H

/**
 * @file
 * What the ucx fabric driver (drivers/fabric/ucx, doc/guides/ucx.md) shows
 * beyond lib/fabric's API: its own counters, for the report, and a CN
 * process's incarnation as the MNs admitted it. Built only when UCX's headers are present (DTXN_HAVE_UCX).
 */

#include <stdbool.h>
#include <stdint.h>

#include "dtxn_fabric.h"

/** The driver's counters (since open; relaxed reads of live counters). */
struct dtxn_ucx_stats {
	uint64_t fences;        /**< ucp_worker_fence() calls made to keep a QP's order */
	uint64_t flushes;       /**< ucp_ep_flush_nbx() calls: signaled WRITEs' remote completion */
	uint64_t mcas_loop_cas; /**< CAS issued by masked-CAS loops */
	uint64_t dropped;       /**< inbound SENDs dropped (no QP of that route, park full) */
	uint64_t wakeups;       /**< times the control thread woke from its event fd */
	uint64_t verb_msgs;     /**< verb messages sent: one per doorbell's run of one-sided verbs */
	uint64_t verbs_in_msgs; /**< one-sided verbs those messages carried */
	uint64_t verb_refused;  /**< verb messages this process's MNs refused whole (source fenced,
				 *   a verb outside the region) */
};

/** @return true if @p f is open on the ucx driver. Any thread. */
bool dtxn_ucx_is(const struct dtxn_fabric *f);

/**
 * Reads the driver's counters. Any thread.
 * @return 0, or -EINVAL (@p f not a ucx fabric, @p s NULL).
 */
int dtxn_ucx_stats_get(const struct dtxn_fabric *f, struct dtxn_ucx_stats *s);

/**
 * This process's incarnation of CN node @p node (doc/guides/ucx.md,
 * "Connecting"): the one MN 0 admitted when the fabric opened (the
 * process's first HELLO asks for the next one: 0 for the CN's first
 * process, one more than the fenced incarnation after its predecessor was
 * declared dead and fenced). Known once the fabric is open (a process
 * that serves no MN connects to every MN in dtxn_fabric_open()). Any
 * thread.
 *
 * @param f     an open ucx fabric.
 * @param node  a CN's node id (n_mn + J) this process serves.
 * @param inc   out: the incarnation (written on success only).
 * @return 0, -EINVAL (@p f not a ucx fabric, @p inc NULL, @p node not a
 *   CN), -ENOENT (no MN admitted @p node from this process yet).
 */
int dtxn_ucx_incarnation(const struct dtxn_fabric *f, uint16_t node, uint32_t *inc);

#endif /* DTXN_FABRIC_UCX_H */
