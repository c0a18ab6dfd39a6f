/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DTXN_FABRIC_SIM_H
#define DTXN_FABRIC_SIM_H

/**
 * @file
 * The sim fabric driver's own calls (like DPDK's rte_pmd_<drv>.h): what the
 * simulation loop needs besides the fabric API (doc/guides/sim.md).
 *
 * The sim driver has the shm driver's semantics (doc/guides/fabric.md) in
 * virtual time: every WR becomes events in one global queue ordered by
 * (virtual time, sequence number). At post time lib/fabric's NIC model
 * (dtxn_fabric_wr_time) gives the WR its effect time (when it touches MN
 * memory, or when a SEND arrives) and its completion time (effect + the
 * other half of the RTT). The effect event applies the WR with
 * dtxn_fabric_mem_exec() (shared with shm) whatever the posting thread is
 * doing; the completion event puts the CQE in the CQ, where the owning
 * thread's next poll finds it. A SEND that arrives is matched to the
 * peer QP's posted RECVs in order (waits in the peer's inbound queue
 * while none is posted: RNR); its RECV completion is visible from the
 * arrival time.
 *
 * Nothing reads the wall clock and nothing depends on addresses: the same
 * posts at the same virtual times give the same events in the same order.
 *
 * Thread-safety: the whole simulated cluster runs in one OS thread; none
 * of these calls is thread-safe, and all run on that thread.
 */

#include <stdbool.h>
#include <stdint.h>

#include "dtxn_fabric.h"

#ifdef __cplusplus
extern "C" {
#endif

/** @return true if @p f was opened with the "sim" driver. */
bool dtxn_sim_is(const struct dtxn_fabric *f);

/**
 * Gives node @p node its own RNIC model (the fabric's conf.nic is every
 * node's model after open). A WR is timed with the model of the node it
 * goes to (its RTT and its units' rates). Applies to WRs posted from now on.
 *
 * @return 0; -EINVAL (@p f not a sim fabric, @p node out of range, @p m NULL).
 */
int dtxn_sim_node_nic_set(struct dtxn_fabric *f, uint16_t node,
			  const struct dtxn_nic_model *m);

/** @return the RNIC model of node @p node, or NULL if out of range / not sim. */
const struct dtxn_nic_model *dtxn_sim_node_nic(const struct dtxn_fabric *f, uint16_t node);

/**
 * The virtual time by which every WR node @p node has posted has taken
 * effect (the latest effect time of its QPs; its completions may come
 * later). A CN's recovery waits for it before it reads what the dead CN
 * left (doc/guides/cluster.md, "Recovery"): a request an MN's RNIC has
 * accepted is executed even after its sender died.
 * @return the time, ns (0: none posted).
 */
uint64_t dtxn_sim_node_drained_ns(const struct dtxn_fabric *f, uint16_t node);

/**
 * TEST AID (dtxn-app --fault-drop; doc/guides/sim.md, "A NIC that dies
 * with its process"): from now on, dtxn_sim_node_kill() drops each chain
 * of the dead node that has not started at its target, whole, with
 * probability @p p, drawn from a stream seeded with @p seed (the run's
 * --seed: the same run drops the same chains). This models a NIC that
 * lives in the process (UCX over TCP, doc/guides/ucx.md) instead of an
 * RNIC that executes what it was given. With @p p > 0,
 * dtxn_fabric_posted_survives() is false; call it before the protocols
 * read it (before dtxn_db_attach()).
 *
 * @return 0; -EINVAL (@p f not a sim fabric, @p p not in [0, 1]).
 */
int dtxn_sim_set_fault_drop(struct dtxn_fabric *f, double p, uint64_t seed);

/**
 * Node @p node dies now (fail-stop; dtxn-app --fault): what becomes of
 * the WRs it posted that have not taken effect. Without the test aid
 * (dtxn_sim_set_fault_drop() with p > 0) nothing: the simulated RNICs
 * execute them, as RNICs do. With it, each chain (the WRs of one post
 * call on one QP) whose first WR has not taken effect is dropped whole
 * with probability p, else executed whole; a chain whose first WR took
 * effect has started at its target and runs to its end. A dropped WR
 * changes nothing at its target (a SEND does not arrive) and completes
 * with DTXN_WC_WR_FLUSH_ERR in its QP's order (its NIC model time stays
 * reserved: the only trace it leaves). Draws go QP by QP in creation
 * order, chain by chain in posting order: deterministic.
 *
 * @param wrs_dropped  if not NULL, the WRs dropped.
 * @return the chains dropped (>= 0); -EINVAL (@p f not sim, @p node out
 *   of range).
 */
int64_t dtxn_sim_node_kill(struct dtxn_fabric *f, uint16_t node, uint64_t *wrs_dropped);

/**
 * Backs the first @p bytes of every MN region with transparent 2 MiB
 * pages (madvise MADV_HUGEPAGE) where the regions are mapped outside the
 * DPDK heap (no EAL hugepages): for the part a load fills densely (the
 * tables: struct dtxn_catalog log_off), so that the events' memory
 * effects do not miss the TLB on every record (doc/guides/sim.md, "fifth
 * pass"). The sparse rest (logs) stays on 4 KiB pages, backed as touched.
 * Tables of more than 1 GiB over all MNs stay on 4 KiB pages too: a load
 * of gigabytes on 2 MiB pages waits on the kernel's compaction of memory.
 * Call after open, before the load. Speed only: nothing a run computes
 * changes.
 *
 * @param bytes  bytes at the start of each region (the tables).
 * @return 0 (also when the regions come from the heap, the tables are
 *   larger than 1 GiB over all MNs, or the kernel declines the advice);
 *   -EINVAL (@p f not a sim fabric).
 */
int dtxn_sim_regions_large_pages(struct dtxn_fabric *f, uint64_t bytes);

/** @return virtual time of the earliest pending event, ns; UINT64_MAX when none. */
uint64_t dtxn_sim_next_event_ns(const struct dtxn_fabric *f);

/**
 * Runs, in (time, sequence) order, every event due at or before @p now_ns,
 * including those the events themselves create for times <= @p now_ns.
 * dtxn_cq_poll() on a sim CQ also does this, for dtxn_now_ns().
 *
 * @return events run.
 */
uint64_t dtxn_sim_run_events(struct dtxn_fabric *f, uint64_t now_ns);

/** @return events run since the fabric was opened (0 if not sim). */
uint64_t dtxn_sim_events(const struct dtxn_fabric *f);

/** Called when a completion lands in a CQ (from dtxn_sim_run_events()). */
typedef void (*dtxn_sim_cq_notify_fn)(struct dtxn_cq *cq, void *arg);

/**
 * Registers @p fn to be called each time a completion lands in @p cq, so
 * that the simulation loop knows which thread has work. NULL unregisters.
 *
 * @return 0, or -EINVAL (@p cq NULL or not a sim CQ).
 */
int dtxn_sim_cq_set_notify(struct dtxn_cq *cq, dtxn_sim_cq_notify_fn fn, void *arg);

/** @return completions waiting in @p cq (0 if NULL or not sim). */
unsigned dtxn_sim_cq_pending(const struct dtxn_cq *cq);

#ifdef __cplusplus
}
#endif
#endif /* DTXN_FABRIC_SIM_H */
