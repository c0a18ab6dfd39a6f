/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DTXN_MLX5_PRIVATE_H
#define DTXN_MLX5_PRIVATE_H

/**
 * @file
 * The mlx5 fabric driver: RC QPs of rdma-core, connected with librdmacm,
 * with mlx5 direct verbs for masked CAS and device memory
 * (doc/guides/mlx5.md).
 *
 * Files:
 * - mlx5.c       ops table, registration, fabric open/close, statistics;
 * - mlx5_dev.c   device choice and probe, protection domain, registration
 *                of DPDK memory (lkeys), MN regions and device memory;
 * - mlx5_conn.c  rdma_cm: the listener thread (accepts, connect messages),
 *                active connects, QP state transitions;
 * - mlx5_qp.c    CQ and QP life cycle (extended QPs with mlx5dv raw WQEs);
 * - mlx5_post.c  posting WR chains with one doorbell (ibv_wr_start ..
 *                ibv_wr_complete) and RECVs;
 * - mlx5_poll.c  reaping completions: the shadow ring, bounce copies,
 *                the masked-CAS loop, error mapping;
 * - mlx5_wqe.c, mlx5_msg.c, mlx5_plan.c: the pure parts (mlx5_pure.h).
 *
 * Ownership: a CQ, its QPs and their shadow rings belong to the lcore that
 * polls the CQ. The listener thread (control path) owns the rdma_cm event
 * channel and the MN-side QPs it accepts; the fabric's lock guards the
 * list of QPs waiting for a peer (CN-to-CN pairing).
 */

#include <stdbool.h>
#include <stdint.h>
#include <pthread.h>
#include <netinet/in.h>
#include <sys/queue.h>

#include <infiniband/verbs.h>
#include <infiniband/mlx5dv.h>
#include <rdma/rdma_cma.h>

#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_spinlock.h>

#include "dtxn_fabric.h"
#include "dtxn_fabric_driver.h"
#include "mlx5_pure.h"

extern int dtxn_mlx5_logtype;
#define MLX5_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_##level, dtxn_mlx5_logtype, "dtxn.fabric.mlx5: " fmt "\n", ##__VA_ARGS__)

/** Most registered ranges of local (DPDK) memory. */
#define MLX5_MAX_RANGES 64
/** Connect timeout of rdma_cm address/route resolution, ms. */
#define MLX5_CM_TIMEOUT_MS 2000
/** How long dtxn_qp_create() waits for a connection to an MN, ms. */
#define MLX5_CONNECT_WAIT_MS 10000

/** The device this process uses. */
struct mlx5_dev {
	struct ibv_context **list;   /**< rdma_get_devices(), freed at close */
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	char name[IBV_SYSFS_NAME_MAX];
	uint8_t port;
	int gid_index;
	int socket_id;               /**< NUMA node of the NIC (sysfs), or SOCKET_ID_ANY */
	struct mlx5_caps caps;       /**< max_inline (from a test QP), masked_cas */
	bool dm;                     /**< device memory supported */
	uint8_t rd_atom;             /**< outstanding READ/atomic per QP (both directions) */
};

/** One node's region and keys as this process serves it (MN). */
struct mlx5_mn {
	const struct rte_memzone *mz;
	struct ibv_mr *mr;
	struct ibv_dm *dm;
	struct ibv_mr *dm_mr;
	uint32_t dm_len;             /**< 0: the counter lives in host memory */
};

struct mlx5_qp;

/**
 * What the driver counts (dtxn_mlx5_stats_get()), one cache line per
 * lcore that posts (the last slot for threads that are not EAL lcores), so
 * the data path never shares a counter line: each post adds to its own
 * lcore's slot, the report sums the slots.
 */
struct mlx5_lcore_stats {
	uint64_t doorbells;      /**< chains posted (one doorbell each) */
	uint64_t wrs;            /**< WQEs posted */
	uint64_t inline_wrs;     /**< WRITE/SEND WQEs with inline data */
	uint64_t signaled;       /**< WQEs that ask for a CQE (the caller's and the drain's) */
	uint64_t mcas_raw, mcas_loop, mcas_loop_cas, bounced;
} __rte_cache_aligned;

#define MLX5_STATS_SLOTS (RTE_MAX_LCORE + 1)

/**
 * A connection request the listener holds: an MN-side QP it accepted, or
 * a CN peer's request waiting for the matching dtxn_qp_create() here.
 */
struct mlx5_accepted {
	LIST_ENTRY(mlx5_accepted) next;
	struct rdma_cm_id *id;
	struct mlx5_msg hello;       /**< the request's connect message */
};

struct mlx5_fabric {
	struct dtxn_fabric base;
	struct mlx5_dev dev;
	uint16_t n_mn, n_nodes;
	uint64_t serve;                       /**< nodes this process serves */
	struct sockaddr_in addr[DTXN_MAX_NODES];
	struct mlx5_mn mn[DTXN_MAX_NODES];
	struct mlx5_lkey_range ranges[MLX5_MAX_RANGES];
	struct ibv_mr *range_mr[MLX5_MAX_RANGES];
	unsigned n_ranges;
	/* listener (mlx5_conn.c) */
	struct rdma_event_channel *listen_ch;
	struct rdma_cm_id *listen_id[DTXN_MAX_NODES];
	struct ibv_cq *accept_cq;             /**< MN-side QPs never post: their CQ */
	pthread_t listener;
	bool listener_up;
	volatile bool stop;
	struct rdma_cm_id *doomed;            /**< refused in the current event: destroy after its ack */
	rte_spinlock_t lock;                  /**< accepted, waiting */
	LIST_HEAD(, mlx5_accepted) accepted;  /**< MN-side QPs */
	LIST_HEAD(, mlx5_accepted) pending;   /**< CN peers' requests not matched yet */
	LIST_HEAD(, mlx5_qp) waiting;         /**< CN QPs waiting for their peer's request */
	uint8_t listen_tag[DTXN_MAX_NODES];   /**< listen_id[i]->context = &listen_tag[i] */
	uint32_t qp_seq[DTXN_MAX_NODES][DTXN_MAX_NODES]; /**< QPs created local -> remote (lock) */
	/** statistics (mlx5_stats_lc(); summed by dtxn_mlx5_stats_get()) */
	struct mlx5_lcore_stats stats[MLX5_STATS_SLOTS];
};

/** @return the calling lcore's statistics slot. */
static inline struct mlx5_lcore_stats *
mlx5_stats_lc(struct mlx5_fabric *mf)
{
	unsigned l = rte_lcore_id();

	return &mf->stats[l < RTE_MAX_LCORE ? l : RTE_MAX_LCORE];
}

/** Adds @p n to @p field of the calling lcore's slot (relaxed: a slot
 *  shared by non-EAL threads stays exact; uncontended otherwise). */
#define MLX5_STAT_ADD(mf, field, n) \
	__atomic_fetch_add(&mlx5_stats_lc(mf)->field, (n), __ATOMIC_RELAXED)

struct mlx5_cq {
	struct dtxn_cq base;
	struct ibv_cq_ex *cq;
	TAILQ_HEAD(, mlx5_qp) qps;
	/** Completions made by the driver (loop ends, flushes) waiting to be
	 *  reaped, depth entries (lib/fabric's core). */
	struct dtxn_cqe_ring soft;
};

/** wr_id bit of a RECV's completion (the low bits index the receive queue). */
#define MLX5_WRID_RECV (UINT64_C(1) << 63)

/**
 * One masked CAS emulated by a CAS loop (a device without masked atomics):
 * lib/fabric's loop and where its CAS go.
 */
struct mlx5_mcas_loop {
	struct dtxn_mcas_loop l;  /**< operands, the CAS in flight, CAS used */
	uint64_t raddr;           /**< remote address of the word (WQE form) */
	uint32_t rkey;            /**< its rkey */
};

/** One posted WQE, in send order (the shadow ring). */
struct mlx5_slot {
	uint64_t wr_id;
	void *local;              /**< caller's buffer (bounce: copy back here) */
	uint32_t len;
	uint8_t opcode;           /**< enum dtxn_wr_opcode */
	uint8_t user_cqe;         /**< report this WR's completion */
	uint8_t bounce;           /**< local data in this slot's bounce buffer */
	uint8_t loop;             /**< a CAS of an emulated masked CAS */
	uint8_t swap64;           /**< result arrives big-endian (raw masked CAS) */
	struct mlx5_mcas_loop mcas;
};

struct mlx5_qp {
	struct dtxn_qp base;
	struct mlx5_fabric *mf;
	struct mlx5_cq *cq;
	TAILQ_ENTRY(mlx5_qp) cq_next;
	LIST_ENTRY(mlx5_qp) wait_next;
	struct rdma_cm_id *id;        /**< its rdma_cm id (active or accepted) */
	struct ibv_qp *qp;
	struct ibv_qp_ex *qpx;
	struct mlx5dv_qp_ex *mqpx;
	uint32_t seq;                 /**< k-th QP local -> remote (pairing) */
	volatile int state;           /**< 0 connecting, 1 connected, -errno failed */
	bool to_mn;                   /**< one-sided QP to an MN */
	struct mlx5_caps caps;        /**< this QP's inline size and masked-CAS support */
	struct mlx5_peer_mr peer;     /**< the MN's keys (to_mn) */
	/* send queue: free-running indices into the shadow ring */
	struct mlx5_slot *slots;
	uint8_t *bounce;              /**< max_wr x MLX5_BOUNCE_BYTES, registered */
	struct ibv_mr *bounce_mr;
	uint32_t mask;
	uint32_t head, tail;          /**< oldest outstanding, next free */
	uint32_t unsignaled_run;
	bool errored;                 /**< a WR failed: the QP is in the error state */
	struct dtxn_wr_queue rq;      /**< posted RECVs, in order, max_wr entries */
	struct mlx5_wr_plan *plan;    /**< max_wr entries (post scratch) */
};

#define MLX5_FABRIC(f) ((struct mlx5_fabric *)(f))
#define MLX5_CQ(c) ((struct mlx5_cq *)(c))
#define MLX5_QP(q) ((struct mlx5_qp *)(q))

/* mlx5_dev.c */
int mlx5_dev_open(struct mlx5_dev *d, const struct dtxn_fabric_rdma_conf *rc);
void mlx5_dev_close(struct mlx5_dev *d);
int mlx5_mem_register(struct mlx5_fabric *mf);
int mlx5_mn_region_open(struct mlx5_fabric *mf, const struct dtxn_fabric_conf *conf, uint16_t mn);
void mlx5_mn_region_close(struct mlx5_mn *m);

/* mlx5_conn.c */
int mlx5_listen_start(struct mlx5_fabric *mf);
void mlx5_listen_stop(struct mlx5_fabric *mf);
int mlx5_qp_connect(struct mlx5_qp *q);
int mlx5_qp_modify_init(struct mlx5_qp *q);
void mlx5_qp_wait_peer(struct mlx5_qp *q);
void mlx5_conn_forget(struct mlx5_qp *q);

/* mlx5_qp.c */
struct dtxn_cq *mlx5_cq_create(struct dtxn_fabric *f, int socket_id, unsigned depth);
void mlx5_cq_destroy(struct dtxn_cq *cq);
struct dtxn_qp *mlx5_qp_create(struct dtxn_fabric *f, struct dtxn_cq *cq,
			       uint16_t local_node, uint16_t remote_node, unsigned max_wr);
void mlx5_qp_destroy(struct dtxn_qp *qp);
struct ibv_qp *mlx5_qp_new(struct mlx5_fabric *mf, struct ibv_cq *cq, unsigned max_wr,
			   unsigned max_recv, struct mlx5_caps *caps);

/* mlx5_post.c */
int mlx5_qp_post(struct dtxn_qp *qp, struct dtxn_wr *wr_list);
int mlx5_qp_post_recv(struct dtxn_qp *qp, struct dtxn_wr *wr_list);
int mlx5_post_loop_cas(struct mlx5_qp *q, const struct mlx5_slot *from);

/* mlx5_poll.c */
unsigned mlx5_cq_poll(struct dtxn_cq *cq, struct dtxn_cqe *cqes, unsigned n);
void mlx5_cq_soft_push(struct mlx5_cq *cq, uint64_t wr_id, uint32_t byte_len, uint8_t opcode,
		       uint8_t status, uint16_t src_node);

#endif /* DTXN_MLX5_PRIVATE_H */
