/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DTXN_SHM_PRIVATE_H
#define DTXN_SHM_PRIVATE_H

/**
 * @file
 * The shm fabric driver: an emulated RNIC over shared memory.
 *
 * Files:
 * - shm.c       ops table, registration, fabric open/close (MN regions and
 *               RNIC state in named memzones, the message mempool);
 * - shm_qp.c    CQ and QP life cycle, SEND/RECV pairing, flush;
 * - shm_post.c  posting WRs and RECVs, the NIC-model timing of each WR;
 * - shm_exec.c  the memory effect of a WR on MN memory (copies, atomics);
 * - shm_poll.c  dtxn_cq_poll: execute due WRs, reap due completions, match
 *               inbound messages to RECVs;
 * - shm_drain.c dtxn_fabric_drain_node(): a dead CN process's posted WRs.
 *
 * Ownership: a CQ, its QPs, their send/receive queues and the CQE ring
 * belong to the lcore that polls the CQ. Shared between lcores: MN memory
 * (ordered copies and CPU atomics), the RNIC units (atomic reservations),
 * each QP's inbound message ring (single producer = the peer QP's lcore,
 * single consumer = this QP's lcore), and the fabric's QP list (spinlock,
 * control path only).
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

#include <rte_log.h>
#include <rte_spinlock.h>

#include "dtxn_plock.h"

#include "dtxn_fabric.h"
#include "dtxn_fabric_driver.h"
#include "dtxn_sched.h"

extern int dtxn_shm_logtype;
#define SHM_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_##level, dtxn_shm_logtype, "dtxn.fabric.shm: " fmt "\n", ##__VA_ARGS__)

/** Payload bytes of a pooled message buffer (an RPC message, header and
 * DTXN_RPC_REQ_MAX, fits); larger SENDs use rte_malloc in one process and
 * fail with DTXN_WC_LOC_LEN_ERR across processes (shm_send()). */
#define SHM_MSG_POOL_DATA 2048
/** Message buffers in the fabric's pool. */
#define SHM_MSG_POOL_SIZE 8191

struct shm_qp;

/** A message in flight from a SEND to the peer QP's next RECV. */
struct shm_msg {
	uint32_t len;
	uint16_t src_node;
	uint8_t pooled;   /**< from the fabric's mempool, else rte_malloc */
	uint8_t inc;      /**< the sending QP's incarnation, mod 256 (shm_qp.inc) */
	uint8_t data[];
};

/** A posted WR in a QP's send queue. */
struct shm_wqe {
	struct dtxn_wr wr;   /**< copy (dtxn_wr_copy()): next NULL; local -> inl for inline */
	uint64_t effect_ns;  /**< when it touches memory */
	uint64_t done_ns;    /**< when its completion is due */
	uint8_t status;      /**< enum dtxn_wc_status, set at execution */
	uint32_t dst_inc;    /**< SEND: the peer QP's incarnation when posted (another at execution: flushed) */
	uint8_t inl[DTXN_WR_INLINE_MAX] __rte_aligned(8);
};

/* dtxn_fabric_queue_footprint() counts a send-queue entry as at most this */
_Static_assert(sizeof(struct shm_wqe) <= sizeof(struct dtxn_wr) + DTXN_WR_INLINE_MAX +
	       DTXN_FABRIC_WQE_EXTRA, "DTXN_FABRIC_WQE_EXTRA too small");

/** Entries of the pairing directory: QPs alive at once (every QP is paired). */
#define SHM_QPDIR_SIZE 8192

/**
 * The SEND/RECV pairing directory, one memzone every process of the
 * cluster shares ("<name>_qpdir"): QPs between two CNs, by (local, remote,
 * k). A QP looks for its peer here and registers itself, in place of a
 * dead incarnation's QP of the same (local, remote, k); control path
 * only. The lock is a plock (dtxn_plock.h): a process killed while it
 * holds it (registering a QP at its start or restart, or draining a dead
 * CN's QPs as the survivor that recovers it) is taken over by the next
 * one. An entry's qp pointer is stored last and cleared first, so a dead
 * holder leaves no entry half written. The QP structures are DPDK heap
 * memory, mapped at the same address in every process of one --file-prefix.
 */
struct shm_qpdir {
	dtxn_plock_t lock;
	struct shm_qpdir_ent {
		uint16_t local, remote;   /**< both 0: a free entry */
		uint32_t seq;
		struct shm_qp *qp;
	} ent[SHM_QPDIR_SIZE];
};

struct shm_fabric {
	struct dtxn_fabric base;
	bool modelled;                       /**< NIC model other than "none" */
	bool multi_process;                  /**< conf->multi_process */
	uint16_t n_nodes;
	uint16_t n_mn;
	bool mn_owned[DTXN_MAX_NODES];       /**< this process reserved the region (frees it) */
	const struct rte_memzone *qpdir_mz;
	struct shm_qpdir *qpdir;
	const struct rte_memzone *mn_mz[DTXN_MAX_NODES];
	const struct rte_memzone *nic_mz;    /**< struct dtxn_nic_state[n_nodes] */
	struct dtxn_nic_state *nic;
	struct rte_mempool *msg_pool;
	rte_spinlock_t lock;                 /**< qps, qp_seq */
	TAILQ_HEAD(, shm_qp) qps;
	uint32_t qp_seq[DTXN_MAX_NODES][DTXN_MAX_NODES];
};

struct shm_cq {
	struct dtxn_cq_core core;  /**< ring: depth entries; n_qps */
	TAILQ_HEAD(, shm_qp) qps;
	uint64_t dropped;        /**< CQEs lost to an overrun at QP destroy */
	uint64_t nic_rng;        /**< shm_cq_nic_sample()'s generator (owner) */
	uint64_t nic_cap;        /**< TSC cycles of SHM_NIC_SAMPLE_CAP_US: a longer sample is dropped */
};

/**
 * The emulated NIC's time (struct dtxn_cq.nic_cycles) is sampled: 1 in
 * 2^SHM_NIC_SAMPLE_SHIFT of the posts and polls that execute WRs, drawn
 * at random (so no pattern of a txn's posts aliases with it), each
 * measured by two TSC reads and counted 2^SHM_NIC_SAMPLE_SHIFT times:
 * an unbiased sum (about 300,000 samples a second on the main job: its
 * relative error over a run of seconds is ~0.1%) at a 32nd of the
 * reads. Measuring every one cost ~19 TSC reads, ~0.19 us, per
 * SmallBank txn; 1 in 8 (until issue 30 part 2) still ~2.4 reads, ~25 ns.
 */
#define SHM_NIC_SAMPLE_SHIFT 5

/**
 * A sample longer than this, µs, is dropped: the OS took the core away
 * in the middle of it (a post or poll of the emulated NIC takes tens of
 * µs at most: a chain of hundreds of WRs), and one such sample, counted
 * 2^SHM_NIC_SAMPLE_SHIFT times, would add milliseconds that no WR spent.
 */
#define SHM_NIC_SAMPLE_CAP_US 200

/* Whether this post or poll is measured (the CQ's owner). */
static inline bool
shm_cq_nic_sample(struct shm_cq *cq)
{
	cq->nic_rng = cq->nic_rng * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
	return (cq->nic_rng >> (64 - SHM_NIC_SAMPLE_SHIFT)) == 0;
}

/* A sampled execution's time since @p t0 (dtxn_cpu_cycles()), by the CQ's owner. */
static inline void
shm_cq_nic_add(struct shm_cq *cq, uint64_t t0)
{
	uint64_t *c = &cq->core.base.nic_cycles;
	uint64_t d = dtxn_cpu_cycles() - t0;

	if (d <= cq->nic_cap)
		__atomic_store_n(c, *c + (d << SHM_NIC_SAMPLE_SHIFT), __ATOMIC_RELAXED);
}

struct shm_qp {
	struct dtxn_qp base;
	struct shm_fabric *sf;
	struct shm_cq *cq;
	TAILQ_ENTRY(shm_qp) fab_next;
	TAILQ_ENTRY(shm_qp) cq_next;
	uint32_t seq;                 /**< k: the k-th QP local -> remote */
	uint32_t inc;                 /**< incarnation of the process that made it (dtxn_fabric_conf) */
	uint64_t stale;               /**< messages of another incarnation of the peer, dropped */
	struct shm_qp *peer;          /**< paired QP (SEND/RECV), atomic access */
	uint8_t *mn_base;             /**< remote MN region, NULL for a CN */
	uint64_t mn_size;
	struct dtxn_nic_state *rnic;  /**< remote node's RNIC units */
	uint64_t rtt_out_ns;          /**< half the RTT: CN -> MN */
	uint64_t rtt_back_ns;         /**< the other half: MN -> CN */
	uint64_t last_effect_ns;
	/* send queue: head <= exec <= tail (free-running); an empty queue
	 * restarts at slot 0 (shm_qp_post(): the chains of a QP that keeps
	 * up reuse the same few cache lines, not all max_wr slots in turn) */
	struct shm_wqe *sq;
	uint32_t mask;
	uint32_t head;                /**< oldest not completed */
	union {
		struct {
			uint32_t exec;        /**< next to take effect */
			uint32_t tail;        /**< next free */
		};
		uint64_t exec_tail;   /**< both, for one atomic load (shm_drain.c) or store */
	};
	struct dtxn_wr_queue rq;      /**< posted RECVs, max_wr entries */
	struct rte_ring *inbound;     /**< struct shm_msg * from the peer */
};

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
	       "shm_qp.exec_tail: exec in the low 32 bits, tail in the high");

#define SHM_FABRIC(f) ((struct shm_fabric *)(f))
#define SHM_CQ(c) ((struct shm_cq *)(c))
#define SHM_QP(q) ((struct shm_qp *)(q))

/* shm_qp.c */
struct dtxn_cq *shm_cq_create(struct dtxn_fabric *f, int socket_id, unsigned depth);
void shm_cq_destroy(struct dtxn_cq *cq);
struct dtxn_qp *shm_qp_create(struct dtxn_fabric *f, struct dtxn_cq *cq,
			      uint16_t local_node, uint16_t remote_node, unsigned max_wr);
void shm_qp_destroy(struct dtxn_qp *qp);
void shm_msg_free(struct shm_msg *m);

/* shm_post.c */
int shm_qp_post(struct dtxn_qp *qp, struct dtxn_wr *wr_list);
int shm_qp_post_recv(struct dtxn_qp *qp, struct dtxn_wr *wr_list);

/* shm_exec.c */
bool shm_wqe_execute(struct shm_qp *qp, struct shm_wqe *w);
/* The effect of one-sided @p wr (not a SEND) on qp's remote node: its completion status. */
uint8_t shm_wr_execute(struct shm_qp *qp, const struct dtxn_wr *wr);

/* shm_poll.c */
void shm_qp_progress(struct shm_qp *qp, uint64_t now);
unsigned shm_cq_poll(struct dtxn_cq *cq, struct dtxn_cqe *cqes, unsigned n);

/* shm_drain.c */
int shm_drain_node(struct dtxn_fabric *f, uint16_t node);

#endif /* DTXN_SHM_PRIVATE_H */
