/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * shm driver: the effect of one WR. One-sided ops apply to MN memory through
 * lib/fabric's dtxn_fabric_mem_exec() (shared with sim: copies in increasing
 * address order, CPU atomics); a SEND hands its payload to the peer QP's
 * inbound ring.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_malloc.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "shm_private.h"

/* Hands a SEND's payload to the peer QP. false: retry later (RNR). */
static bool
shm_send(struct shm_qp *qp, struct shm_wqe *w)
{
	struct shm_qp *peer = __atomic_load_n(&qp->peer, __ATOMIC_ACQUIRE);
	struct shm_msg *m = NULL;
	uint32_t len = w->wr.len;

	if (peer == NULL || peer->inc != w->dst_inc) {
		/* the peer QP is gone, or was remade by a restarted process: what
		 * was sent to the dead incarnation never reaches the new one */
		w->status = DTXN_WC_WR_FLUSH_ERR;
		return true;
	}
	if (rte_ring_full(peer->inbound))
		return false;
	if (len <= SHM_MSG_POOL_DATA && rte_mempool_get(qp->sf->msg_pool, (void **)&m) == 0) {
		m->pooled = 1;
	} else if (qp->sf->multi_process) {
		/* never DPDK's shared heap while the cluster runs (its lock and
		 * growth are the processes' common hazard: testing.md "Shared
		 * locks"): an empty pool is back-pressure, as an RNR */
		if (len <= SHM_MSG_POOL_DATA)
			return false;
		SHM_LOG(ERR, "a SEND of %u B: larger than a message buffer (%u B)", len,
			(unsigned)SHM_MSG_POOL_DATA);
		w->status = DTXN_WC_LOC_LEN_ERR;
		return true;
	} else {
		m = rte_malloc("shm_msg", sizeof(*m) + len, 0);
		if (m == NULL)
			return false;
		m->pooled = 0;
	}
	m->len = len;
	m->src_node = qp->base.local_node;
	m->inc = (uint8_t)qp->inc;
	if (len > 0)
		memcpy(m->data, w->wr.local, len);
	if (rte_ring_enqueue(peer->inbound, m) != 0) {
		shm_msg_free(m);
		return false;
	}
	return true;
}

/* The test aid dtxn_fabric_test_hold_wr(): @p wr passed its lease check;
 * once, for a WR under the lease, this lcore sleeps between the check and
 * the store. */
static void
shm_test_hold(struct dtxn_fabric *f, const struct dtxn_wr *wr)
{
	const uint64_t *until = f->lease_until_ns;
	uint32_t ms;
	uint64_t end;

	if (until == NULL || (wr->flags & DTXN_WR_F_LEASE_EXEMPT) || wr->opcode == DTXN_WR_READ ||
	    wr->opcode == DTXN_WR_RECV || dtxn_now_ns() < f->test_hold_wr_from_ns ||
	    (ms = __atomic_exchange_n(&f->test_hold_wr_ms, 0, __ATOMIC_ACQ_REL)) == 0)
		return;
	end = __atomic_load_n(until, __ATOMIC_ACQUIRE) + f->lease_slack_ns;
	printf("dtxn: test aid: a WR passed its lease check (pid %d, %s of %u B at mn%u+%#" PRIx64 "); held %u ms\n",
	       (int)getpid(), wr->opcode == DTXN_WR_WRITE ? "WRITE" : wr->opcode == DTXN_WR_FAA ? "FAA" : "CAS",
	       wr->len, (unsigned)DTXN_RADDR_MN(wr->raddr), DTXN_RADDR_OFF(wr->raddr), ms);
	fflush(stdout);
	rte_delay_us_sleep(ms * 1000u); /* ms is at most a test's few seconds */
	printf("dtxn: test aid: the held WR took effect %.1f ms after its lease ran out\n",
	       ((double)dtxn_now_ns() - (double)end) / 1e6);
	fflush(stdout);
}

uint8_t
shm_wr_execute(struct shm_qp *qp, const struct dtxn_wr *wr)
{
	if (dtxn_fabric_wr_fenced(qp->base.fabric, wr))
		return DTXN_WC_REM_ACCESS_ERR; /* self-fencing: its CN's lease ran out first */
	if (unlikely(__atomic_load_n(&qp->base.fabric->test_hold_wr_ms, __ATOMIC_RELAXED) != 0))
		shm_test_hold(qp->base.fabric, wr);
	return dtxn_fabric_node_exec(qp->base.fabric, qp->mn_base, qp->mn_size,
				     qp->base.remote_node, wr);
}

bool
shm_wqe_execute(struct shm_qp *qp, struct shm_wqe *w)
{
	if (w->wr.opcode == DTXN_WR_SEND)
		return shm_send(qp, w);
	w->status = shm_wr_execute(qp, &w->wr);
	return true;
}
