/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DTXN_SIM_PRIVATE_H
#define DTXN_SIM_PRIVATE_H

/**
 * @file
 * The sim fabric driver: the shm driver's semantics in virtual time, as
 * events in one global queue (dtxn_fabric_sim.h, doc/guides/sim.md).
 *
 * Files:
 * - sim.c        ops table, registration, open/close (MN regions, RNIC
 *                state and model of every node), dtxn_sim_* calls;
 * - sim_event.c  the event queue: a dtxn_timeq (4-ary min-heap on (time, sequence));
 * - sim_qp.c     CQ and QP life cycle, SEND/RECV pairing, flush;
 * - sim_post.c   post, post_recv and poll;
 * - sim_run.c    what an event does: effect (memory op through lib/fabric's
 *                dtxn_fabric_mem_exec, or SEND arrival) and completion.
 *
 * Everything runs on one OS thread; nothing here is thread-safe.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

#include <rte_log.h>

#include "dtxn_fabric.h"
#include "dtxn_fabric_driver.h"
#include "dtxn_fabric_sim.h"
#include "dtxn_timeq.h"

extern int dtxn_sim_logtype;
#define SIM_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_##level, dtxn_sim_logtype, "dtxn.fabric.sim: " fmt "\n", ##__VA_ARGS__)

struct sim_qp;

enum sim_ev_kind {
	SIM_EV_EFFECT = 0,  /**< the WR touches memory / the SEND arrives */
	SIM_EV_DONE,        /**< the WR's completion is due */
};

/** One event, as sim_event_pop_due() gives it. The queue orders events by
 * (t_ns, push order) (dtxn_timeq.h) and holds qp_id, wqe and kind packed in
 * its 64-bit payload. */
struct sim_event {
	uint64_t t_ns;
	uint32_t qp_id;     /**< index in the fabric's QP table (never reused), < 2^31 */
	uint32_t wqe;       /**< free-running send-queue index */
	uint8_t kind;       /**< enum sim_ev_kind */
};

/** A message that arrived and waits for a RECV (libc malloc). */
struct sim_msg {
	struct sim_msg *next;
	uint32_t len;
	uint16_t src_node;
	uint8_t data[];
};

/** A posted WR: what an event reads first (times, state), then the WR,
 * starting on a cache line, so that the loop's prefetch of an event's
 * first two lines covers everything but an inline payload (sim_run.c). */
struct sim_wqe {
	uint64_t effect_ns;
	uint64_t done_ns;
	uint64_t seq;        /**< its effect event's sequence number, taken at post */
	uint8_t status;      /**< enum dtxn_wc_status, set by the effect */
	uint8_t owed;        /**< a CQE is owed (signaled, or failed) */
	uint8_t completed;   /**< its completion event ran */
	uint8_t chain_head;  /**< first WR of its post call (one doorbell's chain) */
	uint8_t dropped;     /**< lost with its dead poster (dtxn_sim_node_kill()) */
	struct dtxn_wr wr;   /**< copy (dtxn_wr_copy()); local -> inl for inline payloads */
	uint8_t inl[DTXN_WR_INLINE_MAX] __rte_aligned(8);
} __rte_cache_aligned;

/** Where a QP's send queue is, by QP id (sim_fabric.sqs): an event finds
 * its WR without the QP, so the loop can prefetch both (sim_run.c). */
struct sim_sq_ref {
	struct sim_wqe *sq;
	uint32_t mask;
};

/* dtxn_fabric_queue_footprint() counts a send-queue entry as at most this */
_Static_assert(sizeof(struct sim_wqe) <= sizeof(struct dtxn_wr) + DTXN_WR_INLINE_MAX +
	       DTXN_FABRIC_WQE_EXTRA_GROW, "DTXN_FABRIC_WQE_EXTRA_GROW too small");

struct sim_fabric {
	struct dtxn_fabric base;
	uint16_t n_nodes;
	uint8_t *mn[DTXN_MAX_NODES];               /**< MN regions */
	bool regions_mapped;                       /**< mn[] mapped (sim.c), not from the heap */
	uint64_t region_map_len;                   /**< their mapped length, bytes */
	struct dtxn_nic_state *nic;                /**< n_nodes units */
	struct dtxn_nic_model model[DTXN_MAX_NODES];
	bool modelled[DTXN_MAX_NODES];             /**< model other than "none" */
	/* event queue (sim_event.c) */
	struct dtxn_timeq evq;
	uint64_t pending_effects;                  /**< WRs posted whose effect has not run */
	uint64_t events;                           /**< events run */
	bool running;                              /**< inside sim_run_due */
	/* QP table: id -> QP, NULL once destroyed; ids never reused */
	struct sim_qp **qps;
	struct sim_sq_ref *sqs;                    /**< id -> its send queue, beside qps */
	uint32_t n_qps, qps_cap;
	uint32_t qp_seq[DTXN_MAX_NODES][DTXN_MAX_NODES];
	/* test aid dtxn_sim_set_fault_drop(): a dead node's unstarted chains */
	double drop_p;                             /**< probability a chain is dropped */
	uint64_t drop_rng;                         /**< splitmix64 state */
};

struct sim_cq {
	struct dtxn_cq_core core;  /**< ring: depth entries at first, doubles when full */
	dtxn_sim_cq_notify_fn notify;
	void *notify_arg;
};

struct sim_qp {
	struct dtxn_qp base;
	struct sim_fabric *sf;
	struct sim_cq *cq;
	uint32_t id;
	uint32_t seq;              /**< k: the k-th QP local -> remote */
	struct sim_qp *peer;       /**< paired QP (SEND/RECV) */
	uint8_t *mn_base;          /**< remote MN region, NULL for a CN */
	uint64_t mn_size;
	uint64_t last_effect_ns;
	/* send queue: head <= exec <= tail (free-running); the arrays start
	 * small and double up to max_wr (a worker asks for 1024 WRs per
	 * coordinator, which a 90-thread cluster could not afford) */
	struct sim_wqe *sq;
	uint32_t mask;             /**< sq entries - 1 */
	uint32_t head;             /**< oldest slot still in use */
	uint32_t exec;             /**< next to take effect */
	uint32_t tail;             /**< next free */
	struct dtxn_wr_queue rq;   /**< posted RECVs; grows as sq does */
	/* inbound messages waiting for a RECV, FIFO */
	struct sim_msg *in_head, *in_tail;
};

#define SIM_FABRIC(f) ((struct sim_fabric *)(f))
#define SIM_CQ(c) ((struct sim_cq *)(c))
#define SIM_QP(q) ((struct sim_qp *)(q))

/* sim_event.c */
/** Makes room for @p extra more events: 0 or -ENOMEM. */
int sim_event_reserve(struct sim_fabric *sf, uint32_t extra);
/** Queues the effect of WR @p wqe of @p qp, the QP's oldest not run (its
 * head): at its effect_ns, with the sequence number taken at its post. */
int sim_event_push_effect(struct sim_fabric *sf, const struct sim_qp *qp, uint32_t wqe);
/** Pushes an event (room reserved beforehand): 0 or -ENOMEM. */
int sim_event_push(struct sim_fabric *sf, uint64_t t_ns, uint8_t kind, uint32_t qp_id,
		   uint32_t wqe);
/** Pops the earliest event if it is due at or before @p now_ns. */
bool sim_event_pop_due(struct sim_fabric *sf, uint64_t now_ns, struct sim_event *ev);
void sim_event_fini(struct sim_fabric *sf);

/** First size of a QP's send and receive arrays (the memory check counts
 * them so: dtxn_fabric_ops.queues_grow). */
#define SIM_QP_INIT_SLOTS DTXN_FABRIC_QUEUE_INIT

/* sim_qp.c */
struct dtxn_cq *sim_cq_create(struct dtxn_fabric *f, int socket_id, unsigned depth);
void sim_cq_destroy(struct dtxn_cq *cq);
struct dtxn_qp *sim_qp_create(struct dtxn_fabric *f, struct dtxn_cq *cq,
			      uint16_t local_node, uint16_t remote_node, unsigned max_wr);
void sim_qp_destroy(struct dtxn_qp *qp);
/** Appends a CQE (the ring grows when full); calls the CQ's notify. */
void sim_cq_push(struct sim_cq *cq, uint64_t wr_id, uint32_t byte_len, uint8_t opcode,
		 uint8_t status, uint16_t src_node);

/* sim_post.c */
int sim_qp_post(struct dtxn_qp *qp, struct dtxn_wr *wr_list);
int sim_qp_post_recv(struct dtxn_qp *qp, struct dtxn_wr *wr_list);
unsigned sim_cq_poll(struct dtxn_cq *cq, struct dtxn_cqe *cqes, unsigned n);
/** Makes room for @p n more WRs in the send queue: 0 or -ENOBUFS. */
int sim_qp_sq_room(struct sim_qp *qp, uint32_t n);
/** Frees send-queue slots whose WR is finished by @p now_ns. */
void sim_qp_reclaim(struct sim_qp *qp, uint64_t now_ns);

/* sim_run.c */
/** Runs the events due at or before @p now_ns. @return events run. */
uint64_t sim_run_due(struct sim_fabric *sf, uint64_t now_ns);
/** Matches inbound messages to posted RECVs, in order. */
void sim_qp_deliver(struct sim_qp *qp);

#endif /* DTXN_SIM_PRIVATE_H */
