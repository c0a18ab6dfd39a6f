/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DTXN_FABRIC_MLX5_H
#define DTXN_FABRIC_MLX5_H

/**
 * @file
 * The mlx5 fabric driver's own calls (like DPDK's rte_pmd_<drv>.h): what
 * the report shows besides the fabric API's counters (doc/guides/mlx5.md).
 * Built only where rdma-core's headers are present (meson: DTXN_HAVE_MLX5DV).
 */

#include <stdbool.h>
#include <stdint.h>

#include "dtxn_fabric.h"

#ifdef __cplusplus
extern "C" {
#endif

/** What the driver did that the fabric API's counters do not show. */
struct dtxn_mlx5_stats {
	char dev[64];             /**< device in use, e.g. "mlx5_0" */
	uint8_t port;
	bool masked_cas_raw;      /**< masked CAS posted as raw WQEs (else CAS loop) */
	bool dm;                  /**< MN timestamp words in device memory */
	uint32_t max_inline;      /**< inline WRITE/SEND threshold of the last QP, bytes */
	uint64_t doorbells;       /**< WR chains posted, one doorbell each (ibv_wr_complete) */
	uint64_t wrs;             /**< WQEs posted (a chain's WRs, loop CASes) */
	uint64_t inline_wrs;      /**< WRITE and SEND WQEs whose payload went inline */
	uint64_t signaled;        /**< WQEs that asked for a CQE: the caller's signaled WRs
				   *   and the driver's one in max_wr/2 (selective signaling) */
	uint64_t mcas_raw;        /**< masked CAS posted as raw WQEs */
	uint64_t mcas_loop;       /**< masked CAS emulated by a CAS loop (fallbacks) */
	uint64_t mcas_loop_cas;   /**< CAS WRs those loops used */
	uint64_t bounced;         /**< WRs whose local buffer was not registered */
};

/** @return true if @p f was opened with the "mlx5" driver. */
bool dtxn_mlx5_is(const struct dtxn_fabric *f);

/**
 * Reads the driver's statistics (doc/guides/mlx5.md; the report's
 * "fabric_driver" section). Any thread; the per-lcore counts are summed
 * without a lock, so they may lag by the WRs being posted at the time.
 * SEND/RECV and one-sided WRs alike; RECVs are not counted.
 *
 * @return 0, or -EINVAL (@p f not an mlx5 fabric, @p s NULL).
 */
int dtxn_mlx5_stats_get(const struct dtxn_fabric *f, struct dtxn_mlx5_stats *s);

#ifdef __cplusplus
}
#endif
#endif /* DTXN_FABRIC_MLX5_H */
