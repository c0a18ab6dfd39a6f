/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DTXN_FABRIC_DRIVER_H
#define DTXN_FABRIC_DRIVER_H

/**
 * @file
 * Contract between lib/fabric and its drivers (drivers/fabric/<name>), in
 * the shape of DPDK's ethdev_driver.h. A driver embeds struct dtxn_fabric,
 * struct dtxn_cq and struct dtxn_qp as the first member of its own objects,
 * fills a static const struct dtxn_fabric_ops and registers it with
 * DTXN_FABRIC_REGISTER(). lib/fabric checks WR chains and counts them
 * before calling the driver's post, so drivers see only valid chains.
 */

#include <string.h>

#include <rte_common.h>

#include "dtxn_fabric.h"
#include "dtxn_sched.h"

struct dtxn_fabric_ops;

/** Generic part of a fabric; drivers embed it first. */
struct dtxn_fabric {
	const struct dtxn_fabric_ops *ops;
	struct dtxn_fabric_conf conf;
	char name[32];
	/** CN memory registered for one-sided WRs (dtxn_fabric_cn_mr_reg()), by node id. */
	struct dtxn_fabric_cn_mr {
		uint8_t *base;               /**< NULL: none registered */
		uint64_t size;
		dtxn_fabric_write_fn on_write;
		void *arg;
	} cn_mr[DTXN_MAX_NODES];
	/** Watched ranges of MN regions (dtxn_fabric_mn_watch()), by MN id. */
	struct dtxn_fabric_mn_watch {
		uint64_t off;
		uint64_t size;                /**< 0: none */
		dtxn_fabric_write_fn on_write;
		void *arg;
	} mn_watch[DTXN_MAX_NODES];
	/** dtxn_fabric_set_lease(): the lease a mutating WR must take effect
	 *  within (NULL: none), and the slack after it. */
	const uint64_t *lease_until_ns;
	uint64_t lease_slack_ns;
	/** dtxn_fabric_test_hold_wr(): ms to hold the next WR that passes
	 *  its lease check (0: none); exchanged to 0 by the driver that holds it. */
	uint32_t test_hold_wr_ms;
	uint64_t test_hold_wr_from_ns; /**< ... from this time on (dtxn_now_ns()) */
	/** dtxn_fabric_mn_mirror(): a local copy of an MN region this process
	 *  does not map, by MN id (NULL: none); the caller's memory. */
	void *mn_mirror[DTXN_MAX_NODES];
	/** The nodes this process serves (the conf's rdma->serve; 0: every node). */
	uint64_t serve;
	/** dtxn_fabric_posted_survives() is false: WRs a node posted may be
	 *  lost, chain by chain, when that node dies. Set by a driver whose
	 *  "NIC" lives in the posting process (ucx, in its open) or that
	 *  models one (sim with dtxn_sim_set_fault_drop()); 0 (shm, mlx5,
	 *  sim): posted WRs take effect whatever happens to their poster. */
	bool posted_lost;
	/** dtxn_fabric_heap_shared(): this process's DPDK heap is the one
	 *  every process of the cluster allocates from (shm across processes:
	 *  DPDK multi-process). Set by the driver in its open. */
	bool heap_shared;
	/** dtxn_fabric_selective_signaling() is false: a doorbell batch
	 *  signals every WR its protocol asked to be signaled. Set by sim in
	 *  its open; 0 (shm, mlx5, ucx): a batch signals the last WR of each
	 *  chain only. */
	bool signal_every_wr;
};

/** @return the mask of nodes 0 .. @p n - 1 (bit = node id), @p n <= 64: every node of a cluster of @p n. */
static inline uint64_t
dtxn_fabric_node_mask(unsigned n)
{
	return n >= 64 ? UINT64_MAX : (UINT64_C(1) << n) - 1;
}

/**
 * Whether WR @p wr may no longer change MN memory (drivers that execute WRs
 * on the posting host, shm: called as the WR takes effect): a WRITE, CAS,
 * masked CAS or FAA without DTXN_WR_F_LEASE_EXEMPT, on a fabric with a
 * lease (dtxn_fabric_set_lease()) that ran out, slack included.
 */
static inline bool
dtxn_fabric_wr_fenced(const struct dtxn_fabric *f, const struct dtxn_wr *wr)
{
	const uint64_t *until = f->lease_until_ns;

	return until != NULL && !(wr->flags & DTXN_WR_F_LEASE_EXEMPT) &&
	       wr->opcode != DTXN_WR_READ && wr->opcode != DTXN_WR_SEND &&
	       wr->opcode != DTXN_WR_RECV &&
	       dtxn_now_ns() >= __atomic_load_n(until, __ATOMIC_ACQUIRE) + f->lease_slack_ns;
}

/** Generic part of a CQ; drivers embed it first. */
struct dtxn_cq {
	struct dtxn_fabric *fabric;
	unsigned depth;
	/** Completions of WRs posted on QPs in the injected error state
	 *  (fault.c, dtxn_qp_error_inject()), reaped before the driver's;
	 *  allocated at the first one (depth entries). Owning lcore. */
	struct dtxn_cqe *err_ring;
	uint32_t err_head, err_tail;
	/** dtxn_cq_nic_cycles(): an emulating driver adds the TSC cycles it
	 *  spends executing WRs (owning lcore; relaxed stores) */
	uint64_t nic_cycles;
};

/** Generic part of a QP; drivers embed it first. */
struct dtxn_qp {
	struct dtxn_fabric *fabric;
	struct dtxn_cq *cq;
	uint16_t local_node;
	uint16_t remote_node;
	unsigned max_wr;
	struct dtxn_fabric_counters cnt;
	/** enum fabric_qp_err (fault.c): 0 while the QP works; set by
	 *  dtxn_qp_error_inject() from any thread, read at each post */
	uint8_t err_state;
};

/** Allocates the driver's fabric object (embedding struct dtxn_fabric) and its regions. NULL + rte_errno on error. */
typedef struct dtxn_fabric *(*dtxn_fabric_open_t)(const struct dtxn_fabric_conf *conf);
/** Frees what open allocated. */
typedef void (*dtxn_fabric_close_t)(struct dtxn_fabric *f);
/** See dtxn_fabric_mn_base(). */
typedef void *(*dtxn_fabric_mn_base_t)(struct dtxn_fabric *f, uint16_t mn);
/** See dtxn_fabric_nic_state(); may be NULL in the ops table. */
typedef const struct dtxn_nic_state *(*dtxn_fabric_nic_state_t)(const struct dtxn_fabric *f, uint16_t node);
/** Allocates a CQ (embedding struct dtxn_cq); lib/fabric fills the generic part. */
typedef struct dtxn_cq *(*dtxn_cq_create_t)(struct dtxn_fabric *f, int socket_id, unsigned depth);
typedef void (*dtxn_cq_destroy_t)(struct dtxn_cq *cq);
/** Allocates a QP (embedding struct dtxn_qp); lib/fabric fills the generic part before calling. */
typedef struct dtxn_qp *(*dtxn_qp_create_t)(struct dtxn_fabric *f, struct dtxn_cq *cq,
					    uint16_t local_node, uint16_t remote_node, unsigned max_wr);
typedef void (*dtxn_qp_destroy_t)(struct dtxn_qp *qp);
/** Posts a checked chain: 0, -ENOBUFS or -ENOTCONN (SEND, no peer QP); nothing posted on error. */
typedef int (*dtxn_qp_post_t)(struct dtxn_qp *qp, struct dtxn_wr *wr_list);
/** Posts checked RECVs: 0 or -ENOBUFS. */
typedef int (*dtxn_qp_post_recv_t)(struct dtxn_qp *qp, struct dtxn_wr *wr_list);
/** Reaps completions; returns a count. */
typedef unsigned (*dtxn_cq_poll_t)(struct dtxn_cq *cq, struct dtxn_cqe *cqes, unsigned n);

/** See dtxn_cq_kick(); may be NULL in the ops table (real time: nothing to do). */
typedef void (*dtxn_cq_kick_t)(struct dtxn_cq *cq);

/** See dtxn_fabric_drain_node(); may be NULL in the ops table (-ENOTSUP). */
typedef int (*dtxn_fabric_drain_node_t)(struct dtxn_fabric *f, uint16_t node);

/** See dtxn_fabric_publish(); may be NULL in the ops table (nothing to do). */
typedef void (*dtxn_fabric_publish_t)(struct dtxn_fabric *f);
/** See dtxn_fabric_fence_node(); may be NULL in the ops table (-ENOTSUP). */
typedef int (*dtxn_fabric_fence_node_t)(struct dtxn_fabric *f, uint16_t node);

/**
 * See dtxn_fabric_footprint(); may be NULL in the ops table (regions come
 * from the DPDK heap). True if open() would map its MN regions outside the
 * DPDK heap, as anonymous process memory backed as it is touched (the sim
 * driver without hugepages). Any thread; before or after rte_eal_init().
 */
typedef bool (*dtxn_fabric_regions_mapped_t)(void);

/** A fabric driver. Every member but nic_state, cq_kick, drain_node, publish, fence_node, regions_mapped and queues_grow is mandatory. */
struct dtxn_fabric_ops {
	const char *name;
	dtxn_fabric_open_t open;
	dtxn_fabric_close_t close;
	dtxn_fabric_mn_base_t mn_base;
	dtxn_fabric_nic_state_t nic_state;
	dtxn_cq_create_t cq_create;
	dtxn_cq_destroy_t cq_destroy;
	dtxn_qp_create_t qp_create;
	dtxn_qp_destroy_t qp_destroy;
	dtxn_qp_post_t post;
	dtxn_qp_post_recv_t post_recv;
	dtxn_cq_poll_t poll;
	dtxn_cq_kick_t cq_kick;
	dtxn_fabric_drain_node_t drain_node;
	dtxn_fabric_publish_t publish;
	dtxn_fabric_fence_node_t fence_node;
	dtxn_fabric_regions_mapped_t regions_mapped;
	/** true: QP queues start at DTXN_FABRIC_QUEUE_INIT WRs and grow as
	 * used, no memzone per QP (dtxn_fabric_queues_grow()) */
	bool queues_grow;
};

/**
 * Registers a driver. Called by DTXN_FABRIC_REGISTER() from a constructor.
 *
 * @return 0; -EINVAL (a mandatory op is missing), -EEXIST (name taken),
 *   -ENOSPC (too many drivers).
 */
int dtxn_fabric_register(const struct dtxn_fabric_ops *ops);

/** Looks a driver up by name; NULL if none. */
const struct dtxn_fabric_ops *dtxn_fabric_driver_find(const char *name);

/**
 * Names of the registered drivers, comma-separated, in registration order
 * (what --help and the "unknown fabric" message list). Any thread.
 *
 * @param buf  filled, NUL-terminated; names that do not fit are left out.
 * @param len  size of @p buf, bytes; 0 (or @p buf NULL) writes nothing.
 */
void dtxn_fabric_driver_list(char *buf, size_t len);

/* ------------------------------------------------------------------ */
/* Shared by emulating drivers (shm, sim): lib/fabric/fabric_exec.c    */
/* ------------------------------------------------------------------ */

/**
 * Applies the memory effect of one one-sided WR (READ, WRITE, CAS, FAA,
 * masked CAS) to an MN region, as the remote RNIC would: copies word by
 * word in increasing address order with acquire loads / release stores;
 * atomics are CPU atomics on the 8-byte word, the old value goes to
 * wr->local. Safe against other threads applying WRs to the same region.
 *
 * @param mn_base  the MN region (NULL: no region, e.g. the node is a CN).
 * @param mn_size  its size, bytes.
 * @param wr       a WR checked by dtxn_qp_post() (inline payloads already
 *                 copied: wr->local points at them).
 * @return DTXN_WC_SUCCESS, or DTXN_WC_REM_ACCESS_ERR (range outside the
 *   region, no region, or not a memory opcode: nothing is touched).
 */
uint8_t dtxn_fabric_mem_exec(uint8_t *mn_base, uint64_t mn_size, const struct dtxn_wr *wr);

/**
 * dtxn_fabric_mem_exec() on the memory a one-sided WR of a QP to node
 * @p node addresses: the MN region @p mn_base (@p mn_size bytes) if not
 * NULL (a WRITE into a range watched with dtxn_fabric_mn_watch() then
 * calls its on_write), else the CN memory registered for @p node with
 * dtxn_fabric_cn_mr_reg(), whose on_write callback is then called after a
 * WRITE took effect. What drivers call from the thread that applies WRs.
 * @return as dtxn_fabric_mem_exec() (REM_ACCESS_ERR when nothing is
 *   registered).
 */
/**
 * Whether the WRs of a chain to node @p node, whose MN region is
 * @p mn_base, are each dtxn_fabric_mem_exec() on that region and nothing
 * else, as shm_wr_execute() would apply them one by one: @p mn_base is
 * not NULL (an MN), no range of it is watched (dtxn_fabric_mn_watch()),
 * no lease fences WRs (dtxn_fabric_set_lease()) and the test aid
 * dtxn_fabric_test_hold_wr() is not armed. What a driver checks once per
 * chain it executes at once. Owning lcore of the QP.
 */
static inline bool
dtxn_fabric_node_plain(const struct dtxn_fabric *f, const uint8_t *mn_base, uint16_t node)
{
	return mn_base != NULL && node < DTXN_MAX_NODES && f->lease_until_ns == NULL &&
	       __atomic_load_n(&f->test_hold_wr_ms, __ATOMIC_RELAXED) == 0 &&
	       __atomic_load_n(&f->mn_watch[node].size, __ATOMIC_ACQUIRE) == 0;
}

uint8_t dtxn_fabric_node_exec(struct dtxn_fabric *f, uint8_t *mn_base, uint64_t mn_size,
			      uint16_t node, const struct dtxn_wr *wr);

/**
 * @return the model v1 unit of @p rnic that serves @p opcode (atomic unit
 *   for CAS/FAA/masked CAS, else rw). Model v2 serves every opcode on rw
 *   (dtxn_fabric_wr_time_ex()).
 */
struct dtxn_nic_unit *dtxn_nic_unit_of(struct dtxn_nic_state *rnic, unsigned opcode);

/**
 * Times one WR posted at @p post_ns on a QP (ARCHITECTURE.md, "NIC
 * performance model"): arrive = post + rtt/2; served =
 * dtxn_nic_reserve(unit of @p rnic for the opcode, arrive, service time);
 * effect = max(served, *last_effect_ns) (RC order, then *last_effect_ns =
 * effect); done = effect + (rtt - rtt/2). With @p rnic NULL (model none)
 * effect = max(post, *last_effect_ns) and done = effect.
 *
 * @param m        the model of the remote node's RNIC (rtt and rates).
 * @param rnic     the remote node's units, or NULL when not modelled.
 * @param wr       the WR (opcode, len).
 * @param post_ns  posting time, ns (dtxn_now_ns(): real or virtual).
 * @param last_effect_ns  in/out: the QP's previous effect time, ns.
 * @param effect_ns out: when the WR touches memory (or arrives, SEND), ns.
 * @param done_ns  out: when its completion is due, ns.
 */
void dtxn_fabric_wr_time(const struct dtxn_nic_model *m, struct dtxn_nic_state *rnic,
			 const struct dtxn_wr *wr, uint64_t post_ns,
			 uint64_t *last_effect_ns, uint64_t *effect_ns, uint64_t *done_ns);

/**
 * dtxn_fabric_wr_time() with the posting node's RNIC too, and model v2
 * (ARCHITECTURE.md, "NIC performance model"; doc/guides/fabric.md):
 * - if @p lm is a v2 model and @p lnic not NULL, the op first takes
 *   dtxn_nic_tx_ns() of the poster's outbound pipeline: sent =
 *   dtxn_nic_reserve(&lnic->tx, post, that), rtx = dtxn_nic_tx_ns() of an
 *   8 B READ; else sent = post, rtx = 0;
 * - if @p m is a v2 model and @p rnic not NULL: svc =
 *   dtxn_nic_service_ns(); fly = max(0, rtt - rtx - the service of an 8 B
 *   READ) (one flight for every opcode); served =
 *   dtxn_nic_reserve(&rnic->rw, sent + fly/2, svc); an atomic also
 *   dtxn_nic_word_reserve(rnic, atomic or dm_atomic unit, its offset,
 *   served - svc, dtxn_nic_rmw_ns()) (device memory: an offset below
 *   DTXN_FABRIC_DM_BYTES) and served = max(served, that); effect =
 *   max(served, *last_effect_ns); done = effect + fly - fly/2. An unloaded
 *   8 B READ completes rtt after its post;
 * - else the v1 timing of dtxn_fabric_wr_time() from sent.
 * A v1 @p lm (or NULL) and a v1 @p m give exactly dtxn_fabric_wr_time().
 *
 * @param lm    the posting node's model, or NULL.
 * @param lnic  the posting node's units, or NULL when not modelled.
 * Other parameters as dtxn_fabric_wr_time().
 */
void dtxn_fabric_wr_time_ex(const struct dtxn_nic_model *lm, struct dtxn_nic_state *lnic,
			    const struct dtxn_nic_model *m, struct dtxn_nic_state *rnic,
			    const struct dtxn_wr *wr, uint64_t post_ns, uint64_t *last_effect_ns,
			    uint64_t *effect_ns, uint64_t *done_ns);

/**
 * Delivers a message of @p len bytes into a posted RECV: copies it to
 * recv->local if it fits.
 * @return DTXN_WC_SUCCESS, or DTXN_WC_LOC_LEN_ERR (longer than recv->len;
 *   nothing copied).
 */
uint8_t dtxn_fabric_recv_fill(const struct dtxn_wr *recv, const void *data, uint32_t len);

struct sockaddr_in;

/**
 * A network driver's (mlx5, ucx) socket address of node @p node: its
 * cluster-file address @p s ("IPv4:port", dtxn_fabric_addr_parse()), or
 * with @p s NULL 127.0.0.1 and port DTXN_FABRIC_RDMA_PORT_BASE + @p node.
 * Control path; any thread.
 * @param driver  the driver's name, for the error.
 * @return 0, or -EINVAL with dtxn_fabric_open_error() set ("--fabric
 *   DRIVER: node N address 'S': expected IPv4:port").
 */
int dtxn_fabric_node_sockaddr(const char *s, uint16_t node, const char *driver,
			      struct sockaddr_in *sa);

/**
 * Sets the reason dtxn_fabric_open_error() returns on this thread; a
 * driver's open calls it before failing. printf-like; truncated to one
 * line of 255 characters.
 */
void dtxn_fabric_open_error_set(const char *fmt, ...) __rte_format_printf(1, 2);

/* ------------------------------------------------------------------ */
/* The QP/CQ core every driver shares: lib/fabric/qcore.c              */
/* ------------------------------------------------------------------ */
/*
 * What shm, sim, mlx5 and ucx would otherwise each write out: the CQ's
 * ring of completions (struct dtxn_cqe_ring), the receive queue of posted
 * RECVs (struct dtxn_wr_queue), the generic part of a new QP
 * (dtxn_qp_init()), counting a chain (dtxn_wr_chain_count()), copying a
 * WR into a send queue with its inline payload (dtxn_wr_copy()), and the
 * masked CAS as a loop of CAS (struct dtxn_mcas_loop). Every object here
 * belongs to the lcore that owns its QP or CQ: no locks, no atomics.
 */

/**
 * Fills the generic part of a QP a driver's qp_create just allocated, for
 * drivers that need it before they return (pairing by node ids):
 * fabric, cq, local_node, remote_node, max_wr; err_state "working", counters
 * untouched (zero in a zeroed allocation). dtxn_qp_create() fills the
 * same fields again after the driver returns. Control path.
 */
void dtxn_qp_init(struct dtxn_qp *qp, struct dtxn_fabric *f, struct dtxn_cq *cq,
		  uint16_t local_node, uint16_t remote_node, unsigned max_wr);

/**
 * Counts a WR chain, as a post does before it checks for room.
 * @param wr_list  the chain (NULL: empty).
 * @param n_send   if not NULL, receives how many of them are SENDs.
 * @return the number of WRs. Pure; any thread.
 */
static inline uint32_t
dtxn_wr_chain_count(const struct dtxn_wr *wr_list, uint32_t *n_send)
{
	uint32_t n = 0, sends = 0;

	for (const struct dtxn_wr *wr = wr_list; wr != NULL; wr = wr->next) {
		n++;
		sends += wr->opcode == DTXN_WR_SEND;
	}
	if (n_send != NULL)
		*n_send = sends;
	return n;
}

/**
 * Copies WR @p src into a send-queue slot @p dst as an emulating driver
 * keeps it: dst->next NULL; with DTXN_WR_F_INLINE the payload (src->len
 * bytes, at most DTXN_WR_INLINE_MAX, checked by dtxn_qp_post()) is copied
 * to @p inl and dst->local points there, so the caller's buffer may be
 * reused at once.
 * @param inl  the slot's inline buffer, DTXN_WR_INLINE_MAX bytes.
 */
static inline void
dtxn_wr_copy(struct dtxn_wr *dst, const struct dtxn_wr *src, uint8_t *inl)
{
	*dst = *src;
	dst->next = NULL;
	if (src->flags & DTXN_WR_F_INLINE) {
		memcpy(inl, src->local, src->len);
		dst->local = inl;
	}
}

/**
 * A CQ's ring of completions waiting to be reaped (dtxn_cq_poll()):
 * filled by the driver as WRs retire, emptied by the poll. Owning lcore
 * only; no locks.
 */
struct dtxn_cqe_ring {
	struct dtxn_cqe *e;     /**< mask + 1 entries */
	uint32_t mask;
	uint32_t head;          /**< next to reap (free-running; both back to 0 when empty) */
	uint32_t tail;          /**< next to fill (free-running) */
};

/**
 * Allocates @p r's entries (DPDK heap of @p socket_id).
 * @param depth  entries, a power of two.
 * @return 0, -EINVAL (@p depth not a power of two), -ENOMEM.
 */
int dtxn_cqe_ring_init(struct dtxn_cqe_ring *r, unsigned depth, int socket_id);

/** Frees @p r's entries (a zeroed ring too). */
void dtxn_cqe_ring_free(struct dtxn_cqe_ring *r);

/** @return completions waiting in @p r. */
static inline uint32_t
dtxn_cqe_ring_count(const struct dtxn_cqe_ring *r)
{
	return r->tail - r->head;
}

/** @return true if @p r has no room for one more completion. */
static inline bool
dtxn_cqe_ring_full(const struct dtxn_cqe_ring *r)
{
	return r->tail - r->head > r->mask;
}

/**
 * Appends one completion. @return false (nothing written) if @p r is full.
 */
static inline bool
dtxn_cqe_ring_push(struct dtxn_cqe_ring *r, uint64_t wr_id, uint32_t byte_len, uint8_t opcode,
		   uint8_t status, uint16_t src_node)
{
	struct dtxn_cqe *e;

	if (dtxn_cqe_ring_full(r))
		return false;
	e = &r->e[r->tail & r->mask];
	e->wr_id = wr_id;
	e->byte_len = byte_len;
	e->opcode = opcode;
	e->status = status;
	e->src_node = src_node;
	r->tail++;
	return true;
}

/** Moves up to @p n completions, oldest first, to @p out; an emptied ring restarts at entry 0. @return how many. */
static inline unsigned
dtxn_cqe_ring_pop(struct dtxn_cqe_ring *r, struct dtxn_cqe *out, unsigned n)
{
	unsigned k = 0;

	while (k < n && r->head != r->tail)
		out[k++] = r->e[r->head++ & r->mask];
	if (r->head == r->tail)
		r->head = r->tail = 0; /* empty: the next ones go to the same lines */
	return k;
}

/**
 * Doubles @p r's entries, keeping the waiting completions in order (for a
 * CQ that grows instead of dropping, sim's). The new entries come from
 * the DPDK heap of any socket; head and tail restart at 0 and count.
 * @return 0; -ENOSPC (2^31 entries already), -ENOMEM (@p r unchanged).
 */
int dtxn_cqe_ring_grow(struct dtxn_cqe_ring *r);

/**
 * A CQ as the drivers that keep its completions in their own memory build
 * it (shm, sim): the generic CQ, the ring of completions waiting to be
 * reaped, the count of QPs attached. Such a driver embeds it first in its
 * CQ object, and its QPs count themselves in n_qps. Owning lcore only.
 */
struct dtxn_cq_core {
	struct dtxn_cq base;
	struct dtxn_cqe_ring ring;  /**< depth entries at first */
	unsigned n_qps;             /**< QPs attached: the CQ is not freed while > 0 */
};

/**
 * Allocates a driver's CQ object and its ring: what its cq_create does
 * before its own part (lib/fabric fills the generic part after).
 * @param type   rte_malloc type of the object (e.g. "shm_cq").
 * @param size   bytes of the object, >= sizeof(struct dtxn_cq_core); it
 *   starts with a struct dtxn_cq_core; zeroed, cache-line aligned.
 * @param depth  ring entries, a power of two (dtxn_cq_create() checked it).
 * @param socket_id  NUMA socket of both, or SOCKET_ID_ANY.
 * @return the object, or NULL with rte_errno ENOMEM (nothing allocated).
 */
struct dtxn_cq_core *dtxn_cq_core_alloc(const char *type, size_t size, unsigned depth,
					int socket_id);

/**
 * Frees a CQ object of dtxn_cq_core_alloc() and its ring, unless QPs are
 * attached (the driver's cq_destroy says so in its log).
 * @return 0, or -EBUSY (n_qps > 0: nothing freed).
 */
int dtxn_cq_core_free(struct dtxn_cq_core *c);

/**
 * A QP's receive queue: the RECVs posted (dtxn_qp_post_recv()) and not yet
 * matched to a message, in posting order, as copies (next NULL). Its
 * array may start smaller than the QP's max_wr and grow, by doubling, up
 * to what dtxn_wr_queue_post() is allowed (sim's small first arrays).
 * Owning lcore only; no locks.
 */
struct dtxn_wr_queue {
	struct dtxn_wr *e;      /**< mask + 1 entries */
	uint32_t mask;
	uint32_t head;          /**< oldest posted (free-running) */
	uint32_t tail;          /**< next free (free-running) */
};

/**
 * Allocates @p q's first entries, zeroed (DPDK heap of @p socket_id, or
 * SOCKET_ID_ANY), empty.
 * @param slots  entries, a power of two.
 * @return 0, -EINVAL (@p slots not a power of two), -ENOMEM.
 */
int dtxn_wr_queue_init(struct dtxn_wr_queue *q, unsigned slots, int socket_id);

/** Frees @p q's entries (a zeroed queue too). Its WRs are dropped: pop them first to flush. */
void dtxn_wr_queue_free(struct dtxn_wr_queue *q);

/** @return WRs waiting in @p q. */
static inline uint32_t
dtxn_wr_queue_count(const struct dtxn_wr_queue *q)
{
	return q->tail - q->head;
}

/** @return the oldest WR of @p q (it stays there), or NULL if empty. */
static inline struct dtxn_wr *
dtxn_wr_queue_front(const struct dtxn_wr_queue *q)
{
	return q->head == q->tail ? NULL : &q->e[q->head & q->mask];
}

/**
 * Takes the oldest WR out of @p q (what a delivery or a flush does).
 * @return it (valid until the next post on @p q), or NULL if empty.
 */
static inline struct dtxn_wr *
dtxn_wr_queue_pop(struct dtxn_wr_queue *q)
{
	return q->head == q->tail ? NULL : &q->e[q->head++ & q->mask];
}

/**
 * Appends copies of a chain (dtxn_qp_post_recv(): RECVs checked by
 * lib/fabric), all or none: counts it, refuses it if more than
 * @p max_wr WRs would wait, doubles the array if the chain does not fit.
 * @param max_wr  most WRs @p q may hold (the QP's max_wr).
 * @return 0; -ENOBUFS (over @p max_wr, or no memory to grow): nothing
 *   appended.
 */
int dtxn_wr_queue_post(struct dtxn_wr_queue *q, const struct dtxn_wr *wr_list, uint32_t max_wr);

/**
 * A masked CAS (DTXN_WR_MASKED_CAS) carried out as a loop of plain 8-byte
 * CAS, on drivers or devices without masked atomics (mlx5 without the
 * extended atomic, ucx): the first CAS guesses 0 in the bits outside
 * compare_mask; each failed CAS whose old value still passes the masked
 * compare retries with that value. Pure; the caller's state only.
 */
struct dtxn_mcas_loop {
	uint64_t compare, swap, compare_mask, swap_mask; /**< the WR's operands */
	uint64_t expect;     /**< compare value of the CAS in flight */
	uint64_t desired;    /**< swap value of the CAS in flight */
	uint32_t cas_posted; /**< CAS issued so far */
};

/** Starts the loop for @p wr (a masked CAS): sets the first CAS's expect/desired. */
void dtxn_mcas_loop_start(struct dtxn_mcas_loop *l, const struct dtxn_wr *wr);

/**
 * Feeds the old value @p got that the CAS in flight returned. Done when
 * the CAS swapped (@p got == expect) or when @p got fails the masked
 * compare (the word is left alone); otherwise the next CAS is set up
 * (expect = @p got) and counted.
 * @return true when done: @p got is the masked CAS's old value.
 */
bool dtxn_mcas_loop_step(struct dtxn_mcas_loop *l, uint64_t got);

/** Registers a fabric driver at start-up, as RTE_PMD_REGISTER_VDEV does. */
#define DTXN_FABRIC_REGISTER(nm, ops) \
	RTE_INIT(dtxn_fabric_register_##nm) { (void)dtxn_fabric_register(ops); }

#endif /* DTXN_FABRIC_DRIVER_H */
