/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DTXN_FABRIC_H
#define DTXN_FABRIC_H

/**
 * @file
 * The fabric: a verbs-like API over which CNs reach MN memory with
 * one-sided READ, WRITE, CAS, FAA and masked CAS, and exchange messages
 * with SEND/RECV (ARCHITECTURE.md, "Fabric API").
 *
 * Semantics follow RDMA RC verbs, because the real driver is verbs:
 * - a QP connects the calling node to one remote node; a CQ is shared by
 *   the QPs of one lcore;
 * - WRs posted on one QP take effect in posting order;
 * - dtxn_qp_post() posts a chain of WRs with one doorbell;
 * - only WRs with DTXN_WR_F_SIGNALED produce a completion (selective
 *   signaling); a failing unsignaled WR still produces an error completion;
 * - CAS and FAA work on an 8-byte aligned word and write the old value
 *   into the 8-byte local buffer, as verbs do.
 *
 * Node ids: MNs are 0 .. n_mn-1, CNs n_mn .. n_mn+n_cn-1. A remote address
 * (dtxn_raddr_t) names an MN and an offset in its registered region.
 *
 * Every posted WR is counted per QP, by opcode (ops and bytes); the report
 * sums the counters to give verbs per committed transaction.
 *
 * Thread-safety: a CQ and its QPs belong to one lcore (calls ending in _lc
 * or taking a QP/CQ). dtxn_fabric_open/close run on the main lcore.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* Remote addresses                                                   */
/* ------------------------------------------------------------------ */

/** Remote address: MN id (high 16 bits) and byte offset (low 48 bits). */
typedef uint64_t dtxn_raddr_t;

#define DTXN_RADDR_OFF_BITS 48
#define DTXN_RADDR_OFF_MASK ((UINT64_C(1) << DTXN_RADDR_OFF_BITS) - 1)
/** Builds a remote address. */
#define DTXN_RADDR(mn, off) \
	(((uint64_t)(uint16_t)(mn) << DTXN_RADDR_OFF_BITS) | ((uint64_t)(off) & DTXN_RADDR_OFF_MASK))
/** MN id of a remote address. */
#define DTXN_RADDR_MN(a) ((uint16_t)((a) >> DTXN_RADDR_OFF_BITS))
/** Offset of a remote address in its MN's region. */
#define DTXN_RADDR_OFF(a) ((uint64_t)(a) & DTXN_RADDR_OFF_MASK)

/** Most nodes (MNs + CNs) in one cluster: node ids lie below it, and
 * arrays by node id have this many entries (a FaRM-sized cluster of 90
 * machines fits; doc/guides/sim.md "Scale"). */
#define DTXN_MAX_NODES 128

/**
 * Node ids a 64-bit node mask holds: MN masks (a batch's MNs, the MNs a
 * log spans, lost MNs), recovery's dead CNs, the processes of a
 * multi-process cluster, the CNs --fault names. Every MN id lies below it
 * (at most DTXN_MASK_NODES - 1 MNs), so arrays by MN id have this many
 * entries; a cluster of more nodes runs on the sim fabric only, and names
 * in --fault only CNs whose node id is below it.
 */
#define DTXN_MASK_NODES 64

/* ------------------------------------------------------------------ */
/* Work requests and completions                                      */
/* ------------------------------------------------------------------ */

enum dtxn_wr_opcode {
	DTXN_WR_READ = 0,   /**< remote -> local, len bytes */
	DTXN_WR_WRITE,      /**< local -> remote, len bytes */
	DTXN_WR_CAS,        /**< 8 B compare-and-swap, old value -> local */
	DTXN_WR_FAA,        /**< 8 B fetch-and-add, old value -> local */
	DTXN_WR_MASKED_CAS, /**< 8 B CAS on the masked bits only (mlx5 extended atomic) */
	DTXN_WR_SEND,       /**< message to the peer's next posted RECV */
	DTXN_WR_RECV,       /**< receive buffer (dtxn_qp_post_recv only) */
	DTXN_WR_OP_MAX,
};

/** The WR produces a completion. */
#define DTXN_WR_F_SIGNALED (1u << 0)
/** Payload copied at post time (WRITE/SEND up to DTXN_WR_INLINE_MAX B). */
#define DTXN_WR_F_INLINE (1u << 1)
/** Takes effect whatever the fabric's lease (dtxn_fabric_set_lease()): a CN's own lease renewal. */
#define DTXN_WR_F_LEASE_EXEMPT (1u << 2)
/**
 * dtxn's own bookkeeping, not the protocol's (a coordinator's commit
 * record, dtxn_coord_set_commit_record()): posted and executed as any WR,
 * but left out of the per-opcode counters (dtxn_qp_counters(), the
 * report's verbs per transaction), so that those stay what the protocol
 * does, the same on every fabric.
 */
#define DTXN_WR_F_CONTROL (1u << 3)

/** Largest inline payload, bytes (as ConnectX's max_inline_data). */
#define DTXN_WR_INLINE_MAX 256
/** Largest single READ/WRITE/SEND, bytes. */
#define DTXN_WR_LEN_MAX (1u << 30)

/**
 * Bytes at the start of every MN region that stand for its RNIC's device
 * memory (ConnectX-5 ibv_alloc_dm): the NIC model (shm, sim) serves
 * atomics on them with the device-memory unit (dm_atomic_ops_per_s).
 * lib/store never allocates them (its reserved words, e.g. lib/tso's
 * timestamp counter, live there).
 */
#define DTXN_FABRIC_DM_BYTES 64

/**
 * A work request. The caller owns it; the fabric does not keep a pointer
 * to it after dtxn_qp_post() returns (inline payloads are copied; the
 * local buffer of a non-inline WR must stay valid until its completion or,
 * unsignaled, until a later signaled WR on the same QP completes).
 */
struct dtxn_wr {
	struct dtxn_wr *next;   /**< next WR of the chain, NULL ends it */
	uint64_t wr_id;         /**< returned in the completion */
	uint8_t opcode;         /**< enum dtxn_wr_opcode */
	uint8_t flags;          /**< DTXN_WR_F_* */
	uint16_t rsvd;
	uint32_t len;           /**< bytes (READ/WRITE/SEND/RECV); 8 for atomics */
	void *local;            /**< local buffer (atomics: 8 B for the old value) */
	dtxn_raddr_t raddr;     /**< remote address (one-sided ops) */
	uint64_t compare_add;   /**< CAS: compare value; FAA: addend */
	uint64_t swap;          /**< CAS: new value */
	uint64_t compare_mask;  /**< MASKED_CAS: bits compared */
	uint64_t swap_mask;     /**< MASKED_CAS: bits swapped */
};

enum dtxn_wc_status {
	DTXN_WC_SUCCESS = 0,
	DTXN_WC_REM_ACCESS_ERR = 1, /**< remote address out of the region or misaligned */
	DTXN_WC_LOC_LEN_ERR = 2,    /**< RECV buffer too small for the message */
	DTXN_WC_WR_FLUSH_ERR = 3,   /**< QP destroyed with the WR outstanding, or (mlx5)
				     *   in the error state after an earlier WR failed */
	DTXN_WC_FATAL_ERR = 4,      /**< mlx5: any other device error (transport retries
				     *   exhausted: peer lost; remote operation error;
				     *   local protection error); the QP is in the error
				     *   state and every later WR on it completes with
				     *   DTXN_WC_WR_FLUSH_ERR */
};

/** A completion. */
struct dtxn_cqe {
	uint64_t wr_id;
	uint32_t byte_len;  /**< bytes moved (READ/RECV), 8 for atomics */
	uint8_t opcode;     /**< enum dtxn_wr_opcode of the WR */
	uint8_t status;     /**< enum dtxn_wc_status */
	uint16_t src_node;  /**< the QP's remote node: for a RECV the sender, for a
			     *   failed WR the node it did not reach */
};

/* ------------------------------------------------------------------ */
/* NIC performance model (shared by shm and sim)                      */
/* ------------------------------------------------------------------ */

/**
 * Figures of one RNIC model (ARCHITECTURE.md, "NIC performance model";
 * doc/guides/fabric.md). All rates apply at the node's RNIC; 0 means
 * unlimited. Loaded from config/nic/<name>.ini, section [nic].
 *
 * Model v1 (version 0 or 1: every preset before issue 29): an MN RNIC has
 * a READ/WRITE/SEND unit (rw_ops_per_s, rw_bytes_per_s), a host-memory
 * atomic unit (atomic_ops_per_s) and a device-memory atomic unit
 * (dm_atomic_ops_per_s), each a queue of its own.
 *
 * Model v2 (version 2): one pipeline per RNIC serves every opcode, each at
 * its own cost (read_ops_per_s for READ, rw_ops_per_s for WRITE/SEND,
 * atomic_ops_per_s / dm_atomic_ops_per_s for atomics), bounded by the link
 * (rw_bytes_per_s, payload plus header_bytes per packet of mtu_bytes);
 * atomics on one 8 B word also serialize at atomic_same_ops_per_s (host
 * memory) or dm_atomic_same_ops_per_s (device memory); the posting node's
 * own RNIC is a second pipeline, at the same costs (outbound ops and bytes).
 */
/** Kinds of op whose service time dtxn_nic_svc caches: READ, WRITE/SEND,
 * atomic on host memory, atomic on device memory. */
#define DTXN_NIC_SVC_KINDS 4

/**
 * Service times of one model that do not depend on an op's length, filled
 * by dtxn_nic_model_prepare() (never by hand), so that
 * dtxn_nic_service_ns() needs no division per WR: for an op of kind k and
 * length len <= flat_len[k] the service time is ops_ns[k] exactly (the
 * byte term is not larger); longer ops take the full computation. Only
 * the sim driver prepares its own copies of the models (sim_open(),
 * dtxn_sim_node_nic_set()); elsewhere ready stays 0 and every op takes the
 * full computation.
 */
struct dtxn_nic_svc {
	uint8_t ready;                          /**< 1 once prepared for the fields above it */
	uint32_t flat_len[DTXN_NIC_SVC_KINDS];  /**< largest length served in ops_ns, bytes */
	uint64_t ops_ns[DTXN_NIC_SVC_KINDS];    /**< service time up to flat_len, ns */
};

struct dtxn_nic_model {
	char name[32];
	uint8_t version;             /**< 0 or 1: model v1; 2: model v2 */
	uint64_t rtt_ns;             /**< round-trip time of an 8 B READ, ns */
	uint64_t rw_ops_per_s;       /**< v1: READ/WRITE/SEND unit; v2: WRITE/SEND cost, ops/s */
	uint64_t rw_bytes_per_s;     /**< v1: READ/WRITE/SEND unit; v2: the link, bytes/s */
	uint64_t atomic_ops_per_s;   /**< v1: CAS/FAA/masked CAS unit; v2: their pipeline cost, ops/s */
	uint64_t dm_atomic_ops_per_s;/**< atomics on device memory (v1 unit, v2 pipeline cost), ops/s */
	uint64_t read_ops_per_s;     /**< v2: READ pipeline cost, ops/s (v1: 0) */
	uint64_t atomic_same_ops_per_s;    /**< v2: atomics on one host-memory word, ops/s */
	uint64_t dm_atomic_same_ops_per_s; /**< v2: atomics on one device-memory word, ops/s */
	uint32_t header_bytes;       /**< v2: link bytes added per packet */
	uint32_t mtu_bytes;          /**< v2: payload bytes per packet (0: one packet per op) */
	struct dtxn_nic_svc svc;     /**< derived: dtxn_nic_model_prepare() (stale if a field above changes after it) */
};

/** One service unit: the time until which it is busy, reserved atomically. */
struct dtxn_nic_unit {
	uint64_t busy_until_ns; /**< atomically advanced */
	uint64_t busy_ns;       /**< total service time, ns (for busy fractions) */
	uint64_t ops;           /**< ops served */
	uint64_t one_thread;    /**< non-zero: one OS thread reserves it (sim), plain loads and stores */
};

/** Slots of the v2 same-word atomic table of one RNIC (a power of 2). */
#define DTXN_NIC_WORD_SLOTS 4096

/** One slot of the v2 same-word table: the 8 B words that hash to it. */
struct dtxn_nic_word {
	uint64_t busy_until_ns; /**< atomically advanced */
	uint64_t busy_ns;       /**< total read-modify-write time, ns */
};

/**
 * The units of one node's RNIC, in memory every CN of the cluster sees.
 * Model v1 uses rw, atomic and dm_atomic as three queues for inbound ops.
 * Model v2 uses rw as the one pipeline of inbound ops, tx as the pipeline
 * of the ops the node posts (outbound ops and bytes: a CN's own RNIC),
 * words[] for same-word serialization, and atomic / dm_atomic as the
 * statistics of the busiest slot: busy_ns is the largest busy_ns of one
 * slot (host memory, device memory), ops every atomic served.
 */
struct dtxn_nic_state {
	struct dtxn_nic_unit rw;
	struct dtxn_nic_unit atomic;
	struct dtxn_nic_unit dm_atomic;
	struct dtxn_nic_unit tx;                         /**< v2 only */
	struct dtxn_nic_word words[DTXN_NIC_WORD_SLOTS]; /**< v2 only */
};

struct dtxn_footprint;
struct dtxn_fabric_conf;

/** A fabric's fixed part in dtxn_fabric_footprint(), bytes: the shm
 * driver's message pool (8191 x 1 KiB buffers) and NIC state, rounded up. */
#define DTXN_FABRIC_FIXED_BYTES (UINT64_C(16) << 20)

/**
 * Adds to @p fp (dtxn_sched.h) what dtxn_fabric_open() with @p conf
 * allocates (the fields used: driver, n_mn, n_cn, mn_region_size,
 * multi_process, mn_own): the MN regions it allocates (one memzone each
 * on shm; in fp->mapped_bytes instead where the driver maps them outside
 * the DPDK heap, dtxn_fabric_ops.regions_mapped: sim without hugepages)
 * and DTXN_FABRIC_FIXED_BYTES (5 memzones).
 * Any thread, no EAL needed.
 */
void dtxn_fabric_footprint(const struct dtxn_fabric_conf *conf, struct dtxn_footprint *fp);

/** First size of the queues of a driver that grows them as used
 * (dtxn_fabric_ops.queues_grow: sim), WRs. */
#define DTXN_FABRIC_QUEUE_INIT 64u

/** Bytes a send-queue entry of a driver with full-depth queues (shm) adds
 * to a WR and its inline payload (completion times, status, incarnation),
 * counted per WR in fp->bytes and fp->queue_bytes by
 * dtxn_fabric_queue_footprint(); shm checks it with a static assertion. */
#define DTXN_FABRIC_WQE_EXTRA 24u

/** The same for a driver that grows its queues (sim: its event sequence
 * and flags too), counted per WR in fp->queue_init_bytes. */
#define DTXN_FABRIC_WQE_EXTRA_GROW 56u

/**
 * Adds to @p fp what one CQ of @p depth entries and @p n_qp QPs of
 * @p depth WRs cost (send queues with room for inline payloads, receive
 * queues; on shm an inbound ring, one memzone, per QP). The QPs' share
 * is also added to fp->queue_bytes and fp->qp_memzones, and what their
 * queues take at DTXN_FABRIC_QUEUE_INIT WRs to fp->queue_init_bytes, so
 * that a driver that grows its queues as used and reserves no memzone
 * per QP (dtxn_fabric_queues_grow()) can be counted for what it creates.
 * Any thread.
 */
void dtxn_fabric_queue_footprint(unsigned n_qp, unsigned depth, struct dtxn_footprint *fp);

/**
 * Whether driver @p driver creates its QPs' queues at
 * DTXN_FABRIC_QUEUE_INIT WRs and grows them as used, with no memzone per
 * QP (dtxn_fabric_ops.queues_grow): the sim driver. Any thread, no EAL needed.
 * @return false for an unknown driver or one that allocates the full depth.
 */
bool dtxn_fabric_queues_grow(const char *driver);

/**
 * Fills @p m with the preset "none": model v1, zero RTT, every rate unlimited.
 */
void dtxn_nic_model_none(struct dtxn_nic_model *m);

/* Ranges of the [nic] keys (the files in config/nic, doc/guides/fabric.md). */
/** Largest rtt_ns: 10 ms, ten thousand datacenter round trips. */
#define DTXN_NIC_RTT_MAX_NS 1e7
/** Smallest non-zero rw_mops, atomic_mops, dm_atomic_mops: 10 kops/s (100 us per op). */
#define DTXN_NIC_MOPS_MIN 0.01
/** Largest rw_mops, atomic_mops, dm_atomic_mops: 10 Gops/s (0.1 ns per op). */
#define DTXN_NIC_MOPS_MAX 1e4
/** Smallest non-zero rw_gbps: 100 Mbit/s. */
#define DTXN_NIC_GBPS_MIN 0.1
/** Largest rw_gbps: 10 Tbit/s. */
#define DTXN_NIC_GBPS_MAX 1e4

/** Largest header_bytes: 1 KiB per packet. */
#define DTXN_NIC_HEADER_MAX 1024
/** Smallest non-zero mtu_bytes: 256 B (the smallest InfiniBand MTU). */
#define DTXN_NIC_MTU_MIN 256
/** Largest mtu_bytes: 64 KiB. */
#define DTXN_NIC_MTU_MAX 65536

/**
 * Loads an RNIC model from an INI file (dtxn_ini.h: strict, errors name
 * file:line), section [nic] and no other. Key model selects the keys:
 *   model           v1 (the default when missing) or v2.
 * Model v1 keys (a missing key means unlimited; 0 too, except rtt_ns):
 *   rtt_ns          round trip, ns, [0, DTXN_NIC_RTT_MAX_NS];
 *   rw_mops         READ/WRITE/SEND rate, Mops/s, 0 or [DTXN_NIC_MOPS_MIN, DTXN_NIC_MOPS_MAX];
 *   rw_gbps         READ/WRITE/SEND bandwidth, Gbit/s, 0 or [DTXN_NIC_GBPS_MIN, DTXN_NIC_GBPS_MAX];
 *   atomic_mops     CAS/FAA rate, Mops/s, as rw_mops;
 *   dm_atomic_mops  device-memory atomic rate, Mops/s, as rw_mops.
 * Model v2 keys (same ranges and "missing = unlimited" rule):
 *   rtt_ns               unloaded round trip of an 8 B READ, ns, as v1;
 *   read_mops            READ rate of the pipeline, Mops/s;
 *   write_mops           WRITE and SEND rate of the pipeline, Mops/s;
 *   atomic_mops          host-memory CAS/FAA/masked CAS rate of the pipeline (distinct words), Mops/s;
 *   dm_atomic_mops       the same on device memory, Mops/s;
 *   atomic_same_mops     atomics on one host-memory 8 B word, Mops/s;
 *   dm_atomic_same_mops  atomics on one device-memory 8 B word, Mops/s;
 *   link_gbps            link data rate, Gbit/s, as rw_gbps;
 *   header_bytes         bytes per packet on the link, [0, DTXN_NIC_HEADER_MAX] (missing: 0);
 *   mtu_bytes            payload bytes per packet, 0 (missing: one packet per op) or
 *                        [DTXN_NIC_MTU_MIN, DTXN_NIC_MTU_MAX].
 * A key of the other model is refused. The bounds keep every service time
 * and latency finite and far from overflowing 64-bit ns. The model's name
 * is the file name without its directory and ".ini".
 *
 * @param path  INI file.
 * @param m     filled on success; untouched on error.
 * @param err   on error, a one-line message naming the file (and line) and
 *   the problem.
 * @param errlen size of @p err, bytes.
 * @return 0, -ENOENT (no such file, or not a regular file), -EINVAL (a
 *   broken INI rule, no [nic] section or another section, a value out of
 *   its range, an unknown key in [nic], a model other than v1 or v2, a key
 *   of the other model), -ENOMEM.
 */
int dtxn_nic_model_load(const char *path, struct dtxn_nic_model *m,
			char *err, size_t errlen);

/**
 * Fills @p m->svc from the model's other fields (dtxn_nic_svc): afterwards
 * dtxn_nic_service_ns() returns the same values without a division for
 * ops no longer than their kind's flat_len. Call it again after changing
 * a field of a prepared model. Not thread-safe against readers of @p m.
 *
 * @param m  the model.
 */
void dtxn_nic_model_prepare(struct dtxn_nic_model *m);

/**
 * Service time of one op at a unit of the model, ns, rounded to the
 * nearest ns. Model v1: READ/WRITE/SEND max(1e9/rw_ops_per_s,
 * len*1e9/rw_bytes_per_s); CAS/FAA/masked CAS 1e9/atomic_ops_per_s
 * (dm_atomic_ops_per_s if @p dm); RECV 0. Model v2, the pipeline's cost:
 * max(1e9/rate, link bytes*1e9/rw_bytes_per_s), rate read_ops_per_s for
 * READ, rw_ops_per_s for WRITE/SEND, atomic_ops_per_s (dm:
 * dm_atomic_ops_per_s) for atomics, link bytes dtxn_nic_link_bytes() (an
 * atomic's len is 8); RECV 0. A rate of 0 contributes 0 (unlimited).
 *
 * @param m       the model.
 * @param opcode  enum dtxn_wr_opcode.
 * @param len     payload bytes.
 * @param dm      true for an atomic on device memory.
 */
uint64_t dtxn_nic_service_ns(const struct dtxn_nic_model *m, unsigned opcode,
			     uint32_t len, bool dm);

/**
 * Reserves @p service_ns of a unit for an op that arrives at @p arrive_ns:
 * start = max(arrive, busy_until), busy_until = start + service, atomically
 * against every other CN thread reserving the same unit.
 *
 * Also adds @p service_ns to busy_ns and 1 to ops. A zero @p service_ns
 * reserves nothing but still waits behind the ops queued before it.
 * A unit whose one_thread is set (the sim fabric's: one OS thread) is
 * updated with plain loads and stores, with the same results.
 *
 * @return the time the op is served (start + service), ns: the op touches
 *   memory at that time.
 */
uint64_t dtxn_nic_reserve(struct dtxn_nic_unit *u, uint64_t arrive_ns,
			  uint64_t service_ns);

/**
 * Bytes one op of @p len payload bytes puts on a v2 model's link: len plus
 * header_bytes per packet, max(1, ceil(len / mtu_bytes)) packets (one
 * packet when mtu_bytes is 0). 0 for a v1 model.
 */
uint64_t dtxn_nic_link_bytes(const struct dtxn_nic_model *m, uint32_t len);

/**
 * Model v2: the read-modify-write time of one atomic on its 8 B word, ns,
 * 1e9/atomic_same_ops_per_s (dm_atomic_same_ops_per_s if @p dm), rounded;
 * atomics on one word take it one after the other. 0 for a v1 model, an
 * unlimited rate or a non-atomic @p opcode.
 */
uint64_t dtxn_nic_rmw_ns(const struct dtxn_nic_model *m, unsigned opcode, bool dm);

/**
 * Model v2: the posting RNIC's own pipeline time for one outbound op, ns:
 * dtxn_nic_service_ns() of the op on @p m, an atomic costing what an 8 B
 * READ does there (the requester sends a request and takes a response; the
 * read-modify-write is the remote RNIC's). 0 for a v1 model and RECV.
 */
uint64_t dtxn_nic_tx_ns(const struct dtxn_nic_model *m, unsigned opcode, uint32_t len);

/**
 * Model v2: reserves the same-word slot of @p s for an atomic on the word
 * at MN offset @p off, ready (entering the pipeline) at @p ready_ns:
 * start = max(ready, slot busy_until), busy_until = start + @p rmw_ns,
 * atomically against other threads; adds @p rmw_ns to the slot's busy_ns,
 * 1 to @p hot's ops, and raises @p hot's busy_ns to the slot's busy_ns if
 * larger (the busiest slot). Words hash to DTXN_NIC_WORD_SLOTS slots: two
 * words of one slot serialize too (rare; a modelling approximation).
 *
 * @return start + rmw_ns: when the atomic touches memory, ns.
 */
uint64_t dtxn_nic_word_reserve(struct dtxn_nic_state *s, struct dtxn_nic_unit *hot,
			       uint64_t off, uint64_t ready_ns, uint64_t rmw_ns);

/* ------------------------------------------------------------------ */
/* Fabric, CQ, QP                                                     */
/* ------------------------------------------------------------------ */

struct dtxn_fabric;
struct dtxn_cq;
struct dtxn_qp;

/** Per-opcode counters of one QP. */
struct dtxn_fabric_counters {
	uint64_t ops[DTXN_WR_OP_MAX];
	uint64_t bytes[DTXN_WR_OP_MAX];
};

/**
 * Options of the network drivers, mlx5 and ucx (doc/guides/mlx5.md,
 * doc/guides/ucx.md); the emulating drivers ignore them. The fabric copies what it keeps: the strings need
 * not outlive dtxn_fabric_open().
 */
struct dtxn_fabric_rdma_conf {
	const char *dev;        /**< --dev: RDMA device name ("mlx5_0"); NULL or "":
				 *   the first device with an active port */
	uint8_t port;           /**< --port: 1-based port number; 0: port 1 */
	int gid_index;          /**< --gid-index: GID table index; -1: chosen by rdma_cm
				 *   from the node's IP address */
	/** Each node's "IPv4:port" (the cluster file's [nodes] addresses); a
	 *  NULL entry: 127.0.0.1 and port DTXN_FABRIC_RDMA_PORT_BASE + node id. */
	const char *node_addr[DTXN_MAX_NODES];
	/** Nodes this process serves (bit i = node i): an MN it serves
	 *  registers its region and listens; a CN it serves listens for SEND/RECV
	 *  peers. 0: every node (--role all). */
	uint64_t serve;
	/** ucx: the run this process was started for (bench, protocol, catalog
	 *  options, counts): a process started for another run is refused at
	 *  connect (its digest differs). NULL: "". */
	const char *run_desc;
	/** ucx: how long to wait for a node's listener (connect retries), ms;
	 *  0: 10000. */
	uint32_t connect_timeout_ms;
	/** ucx: CN nodes of @c serve this process takes over from processes
	 *  that ended with nobody left to fence them (app/dtxn-app's recovery
	 *  pass, doc/guides/cluster.md "The recovery pass"): at open, before
	 *  its first HELLO, each is fenced at every MN and then admitted there
	 *  as its next incarnation (an MN admits a new incarnation only once
	 *  the admitted one is fenced); no listener is opened for them (their
	 *  addresses are their own hosts'), so they take no SEND. The other
	 *  drivers ignore it. 0: none. */
	uint64_t take_over;
};

/** First TCP port of the default node addresses (rdma_cm port space). */
#define DTXN_FABRIC_RDMA_PORT_BASE 18515

/** Longest node address "255.255.255.255:65535" with its NUL, bytes. */
#define DTXN_FABRIC_ADDR_MAX 22

/**
 * Parses a node address of the RDMA fabric: a dotted IPv4 address, a colon
 * and a TCP port of rdma_cm's port space, 1..65535, in decimal digits
 * ("10.0.0.1:7471"; the cluster file's [nodes] addr=, doc/guides/mlx5.md).
 * No host names (nothing is resolved), no IPv6. Pure; any thread.
 *
 * @param s the text, NUL-terminated (NULL is refused).
 * @param ip_be if not NULL, receives the IPv4 address, network byte order.
 * @param port if not NULL, receives the port, host byte order.
 * @return 0, or -EINVAL: NULL, no colon, an empty or malformed IPv4 part,
 *   a port that is empty, not all digits, 0 or above 65535. On an error
 *   nothing is written.
 */
int dtxn_fabric_addr_parse(const char *s, uint32_t *ip_be, uint16_t *port);

/** Fabric configuration. */
struct dtxn_fabric_conf {
	size_t size;              /**< sizeof(struct dtxn_fabric_conf) */
	const char *driver;       /**< "shm", "sim", "mlx5", "ucx" */
	uint16_t n_mn;            /**< MNs, 1..DTXN_MAX_NODES-1 */
	uint16_t n_cn;            /**< CNs, 1.. */
	uint64_t mn_region_size;  /**< bytes of registered memory per MN */
	struct dtxn_nic_model nic;/**< RNIC model (shm, sim); ignored by mlx5 */
	int socket_id;            /**< NUMA socket for MN regions, or SOCKET_ID_ANY */
	const char *name;         /**< prefix of memzone names, e.g. "dtxn" */
	/*
	 * Multi-process (shm; --role mn/cn, doc/guides/cluster.md): the
	 * processes of one cluster share DPDK's memory (one --file-prefix) and
	 * find each other's objects by name. 0 (the default): this process
	 * owns every MN region (embedded).
	 */
	uint8_t multi_process;    /**< 1: reserve only mn_own, look up mn_attach */
	uint64_t mn_own;          /**< multi_process: bit i = this process allocates MN i's region */
	uint64_t mn_attach;       /**< multi_process: bit i = MN i's region is looked up by name
				   *   (dtxn_fabric_open() fails with EAGAIN while it is not there) */
	const struct dtxn_fabric_rdma_conf *rdma; /**< mlx5 options; NULL: the defaults */
	/**
	 * multi_process: this process's incarnation of the CN it serves (0
	 * for its first process, one more per restart; doc/guides/cluster.md,
	 * "Rejoin"). shm names the inbound rings of its QPs with it (a dead
	 * incarnation's stay, unused), re-pairs its peers' QPs with the new
	 * ones, and drops every message sent by or to another incarnation of
	 * a QP's peer instead of delivering it. On a network fabric the app
	 * sets it after the open (dtxn_fabric_set_incarnation()) to the one
	 * the MNs admitted. 0 everywhere else.
	 */
	uint32_t incarnation;
};

/**
 * Opens the fabric with the named driver and allocates (shm, sim) or
 * registers (mlx5) each MN's region, zero-filled.
 *
 * @return the fabric, or NULL with rte_errno: ENOENT (no driver of that
 *   name), EINVAL (bad conf), ENOMEM (region does not fit the memory given
 *   to the EAL), ENODEV (mlx5: no RDMA device), ETIMEDOUT (ucx: a node's listener did not answer within connect_timeout_ms), ECONNREFUSED (ucx: a node refused this process: another run or shape), EAGAIN (multi_process:
 *   an MN region of mn_attach is not published yet; retry later), EEXIST
 *   (multi_process: a region of mn_own exists already: another process
 *   serves that MN).
 */
struct dtxn_fabric *dtxn_fabric_open(const struct dtxn_fabric_conf *conf);

/**
 * Why the calling thread's last dtxn_fabric_open() failed, in one line a
 * user can act on (e.g. mlx5: the device state and the advice to use
 * --fabric shm), or "" if the driver gave no reason. Valid until the
 * thread's next dtxn_fabric_open(). Any thread.
 */
const char *dtxn_fabric_open_error(void);

/** Frees the regions and the fabric. Every QP and CQ must be destroyed. */
void dtxn_fabric_close(struct dtxn_fabric *f);

/**
 * @return true if this process holds only some of the cluster's MN
 * regions (one node per process: shm's multi_process, or a network
 * fabric whose rdma->serve names some nodes only): a region not mapped
 * here is another process's, not an error (lib/store's loader skips it).
 * False for the embedded cluster, and for @p f NULL. Any thread.
 */
bool dtxn_fabric_partial(const struct dtxn_fabric *f);

/** @return the driver's name. */
const char *dtxn_fabric_driver_name(const struct dtxn_fabric *f);

/** @return the configuration the fabric was opened with. */
const struct dtxn_fabric_conf *dtxn_fabric_conf(const struct dtxn_fabric *f);

/**
 * Sets dtxn_fabric_conf(@p f)->incarnation to @p inc after the open, for
 * a process whose incarnation the fabric itself told it: on a network
 * fabric a restarted CN's is the one the MNs admitted at connect (ucx:
 * dtxn_ucx_incarnation(); doc/guides/cluster.md, "A restart across
 * hosts"), which what reads the conf then sees (lib/tso's rejoin, the
 * workers' names). Nothing in the driver changes (shm names its rings at
 * open). Main lcore, before the database attaches and any worker exists.
 * @return 0, -EINVAL (@p f NULL).
 */
int dtxn_fabric_set_incarnation(struct dtxn_fabric *f, uint32_t inc);

/**
 * The emulated RNICs' side of self-fencing (doc/guides/cluster.md,
 * "Self-fencing"), for a process that serves one CN: from now on a WRITE,
 * CAS, masked CAS or FAA (without DTXN_WR_F_LEASE_EXEMPT) that would take
 * effect at or after *@p until_ns + @p slack_ns (dtxn_now_ns()) does not
 * touch MN memory and completes with DTXN_WC_REM_ACCESS_ERR, as a WR
 * after the MN revoked the CN's access. It covers what lib/txn's lease
 * gate cannot: WRs posted under a valid lease that take effect after it
 * (a process stopped between posting and effect). shm checks it as each
 * WR takes effect; sim and mlx5 ignore it (no process to stop; real
 * hardware would revoke the region's rkey). @p until_ns must outlive the
 * fabric. Main lcore, before the run.
 * @return 0, -EINVAL (@p f NULL).
 */
int dtxn_fabric_set_lease(struct dtxn_fabric *f, const uint64_t *until_ns, uint64_t slack_ns);

/**
 * TEST AID (doc/guides/testing.md, "Formerly unexplained failures"): the
 * first WRITE, CAS, masked CAS or FAA from @p from_ns (dtxn_now_ns()) on
 * under a lease (dtxn_fabric_set_lease(),
 * not DTXN_WR_F_LEASE_EXEMPT) that passes its lease check at shm's emulated
 * RNIC is held there @p ms milliseconds (its lcore sleeps: the process is
 * descheduled between the check and the store, as a SIGSTOP there leaves
 * it), then takes effect. It prints "dtxn: test aid: a WR passed its lease
 * check (pid P, OP of LEN B at mnM+OFF); held MS ms" before, and "dtxn: test aid: the held WR took
 * effect X ms after its lease ran out" (X may be negative) after, on stdout.
 * Once; sim and mlx5 ignore it.
 * @param ms       the hold, ms; 0 disarms.
 * @param from_ns  the first time a WR may be held, ns (dtxn_now_ns()).
 * @return 0, -EINVAL (@p f NULL). Before the workers run (main lcore).
 */
int dtxn_fabric_test_hold_wr(struct dtxn_fabric *f, uint32_t ms, uint64_t from_ns);

/**
 * Says that the MN regions this process serves are loaded and ready to be
 * reached: on a network fabric (ucx) its listeners answer the connect
 * messages of other processes from now on (before, an MN answers "not
 * ready" and the asking process retries up to its connect timeout), so no
 * CN ever reads a region that is still being loaded. The emulating
 * drivers and mlx5 have nothing to do (shm processes wait for the MN's
 * READY state in the control block). Main lcore, after the load; once.
 * @return 0, -EINVAL (@p f NULL).
 */
int dtxn_fabric_publish(struct dtxn_fabric *f);

/**
 * The MNs' side of fencing a CN declared dead (doc/guides/cluster.md,
 * "Self-fencing"; doc/guides/ucx.md, "Fencing"), for the survivor that
 * fenced it in the lease area, before it waits and recovers: every MN
 * refuses CN @p node's WRs from now on, so WRs the dead (or stopped, or
 * cut-off) process posted earlier and that arrive late change nothing.
 * ucx: each MN process cuts the node's TCP connections (when no other
 * node shares its IP address) and refuses its connects. Blocks until
 * every MN answered (control path, a few ms; MNs that do not answer are
 * left out). Any thread.
 * @return 0; -EINVAL (@p f NULL, @p node not a CN); -ENOTSUP (the driver
 *   has no such step: shm's emulated RNICs check the CN's lease as each
 *   WR takes effect, dtxn_fabric_set_lease(); sim has no late WRs; mlx5
 *   not yet); -EIO (an MN did not confirm).
 */
int dtxn_fabric_fence_node(struct dtxn_fabric *f, uint16_t node);

/**
 * MN-side pointer to the start of MN @p mn's region, for the MN role's own
 * CPU (loading, invariant checks after the run). Coordinators never use it.
 *
 * @return the pointer, or NULL if @p mn is out of range or the region is
 *   not mapped in this process.
 */
void *dtxn_fabric_mn_base(struct dtxn_fabric *f, uint16_t mn);

/**
 * Makes dtxn_fabric_mn_base(@p f, @p mn) return @p copy, a local copy of
 * MN @p mn's region, instead of the region itself where this process maps
 * it (NULL: the region again): for a process that does not (a CN on a network
 * fabric, which READ it whole after the run: app/dtxn-app's invariant
 * check reads MN memory through dtxn_fabric_mn_base(), lib/store's
 * scanner, dtxn_db_get()). Only for reading after the run, when no WR
 * changes the region any more: nothing keeps the copy up to date, and
 * code that asks dtxn_fabric_mn_base() whether this process serves an MN
 * (MN-side services) must have asked before. Main lcore.
 *
 * @param copy  region_size bytes owned by the caller until it calls
 *   this again with NULL (before it frees them, and before
 *   dtxn_fabric_close()).
 * @return 0; -EINVAL (@p f NULL, @p mn not an MN).
 */
int dtxn_fabric_mn_mirror(struct dtxn_fabric *f, uint16_t mn, void *copy);

/**
 * Called after a one-sided WRITE took effect in registered CN memory
 * (dtxn_fabric_cn_mr_reg()), from the thread that applies WRs: in the sim
 * driver the simulation's thread, at the WRITE's effect time.
 * @param off  offset of the WRITE in the registered memory, bytes.
 * @param len  its length, bytes.
 */
typedef void (*dtxn_fabric_write_fn)(void *arg, uint64_t off, uint32_t len);

/**
 * Registers memory of CN @p cn for one-sided WRs from other nodes, as
 * ibv_reg_mr on the CN would: afterwards a QP to @p cn may post READ,
 * WRITE and atomics at DTXN_RADDR(cn, off), off < @p size, and they take
 * effect on @p base + off (RRPC's message rings, lib/rpc). The WRs this
 * process posts are applied here: in one process (the embedded cluster,
 * shm or sim) any memory of it; across processes (shm multi_process) a
 * memzone the CN process reserved and this process looked up (lib/rpc
 * rrpc_shared.c). Main lcore, before the QPs that use it post.
 *
 * @param base      8-byte aligned, @p size bytes, owned by the caller
 *   until dtxn_fabric_cn_mr_dereg().
 * @param on_write  optional (NULL): called after each WRITE into it (the
 *   sim loop uses it to wake the thread that polls the memory).
 * @return 0; -EINVAL (@p f or @p base NULL, @p cn not a CN, @p size 0 or
 *   over DTXN_RADDR_OFF_MASK, @p base misaligned); -EEXIST (memory
 *   already registered for @p cn).
 */
int dtxn_fabric_cn_mr_reg(struct dtxn_fabric *f, uint16_t cn, void *base, uint64_t size,
			  dtxn_fabric_write_fn on_write, void *arg);

/**
 * Watches bytes [@p off, @p off + @p size) of MN @p mn's region: after a
 * one-sided WRITE that overlaps them took effect, @p on_write is called
 * (offset and length of the WRITE in the region), from the thread that
 * applies WRs (in the sim driver the simulation's thread, at the WRITE's
 * effect time). What an MN CPU that polls message rings in its region
 * needs in virtual time (RRPC to the MNs, dtxn_rrpc.h): the sim loop
 * steps the MN's thread only on events, and a WRITE makes none. A hook
 * of this process: WRs another process applies (shm across processes)
 * call nothing, which real-time pollers do not need. One range per MN.
 * Main lcore, before the QPs that WRITE there post.
 *
 * @return 0; -EINVAL (@p f or @p on_write NULL, @p mn not an MN,
 *   @p size 0 or the range over DTXN_RADDR_OFF_MASK); -EEXIST (@p mn has
 *   a watched range).
 */
int dtxn_fabric_mn_watch(struct dtxn_fabric *f, uint16_t mn, uint64_t off, uint64_t size,
			 dtxn_fabric_write_fn on_write, void *arg);

/** Undoes dtxn_fabric_mn_watch() (no WR to the range outstanding). Unknown @p mn: no-op. */
void dtxn_fabric_mn_unwatch(struct dtxn_fabric *f, uint16_t mn);

/** Undoes dtxn_fabric_cn_mr_reg() (no WR to it outstanding). Unknown @p cn: no-op. */
void dtxn_fabric_cn_mr_dereg(struct dtxn_fabric *f, uint16_t cn);

/**
 * A zone of memory shared by the processes of one cluster (one DPDK
 * --file-prefix; shm across processes, ARCHITECTURE.md "Processes"):
 * the first caller of any process reserves it (cache-line aligned) and
 * zeroes it, later callers map the same memory. CPU-shared control state
 * (fences, routes, side tables, reply rings), never MN memory (that is
 * reached only through WRs). Control path (start-up); concurrent callers
 * are serialised by the memzone lock.
 *
 * @param name  memzone name, at most RTE_MEMZONE_NAMESIZE - 1 chars.
 * @param len   bytes (> 0).
 * @param socket_id  NUMA socket of a new zone, or SOCKET_ID_ANY.
 * @param first  set true if this call reserved (and zeroed) the zone,
 *   false if it found it; may be NULL.
 * @return the zone's address; NULL with rte_errno: ENOMEM/ENOSPC (no
 *   memory or memzone slots), EEXIST (a zone of that name smaller than
 *   @p len), EINVAL (bad name or @p len).
 */
void *dtxn_fabric_shared_zone(const char *name, size_t len, int socket_id, bool *first);

/**
 * Applies now the one-sided WRs that CN @p node's process posted and that
 * have not taken effect yet, as the RNIC it gave them to would have: a
 * real RNIC executes what was posted whatever happens to the process,
 * and Motor, OOCC, Scythe and CREST count a txn committed once its commit
 * batch is posted (dtxn_batch_run_decide()), which a recovery must then
 * find applied (doc/guides/cluster.md, "Recovery"). WRITE, CAS, masked
 * CAS and FAA on MN regions, in each QP's order, without the lease check
 * (they were posted under the dead process's lease); READs and SENDs are
 * dropped (their requester is gone), and so is a WR whose payload or
 * result buffer lies outside DPDK memory (the dead process's own). A post
 * is all or nothing (one doorbell), so a process killed while posting
 * leaves no part of a chain. Limit: a process killed while applying an
 * atomic, after its effect and before it moved on, has it applied twice:
 * harmless for a CAS or masked CAS (the compare then fails), a gap for an
 * FAA (timestamp marks, chunk counters).
 *
 * The caller must know the process gone (fail-stop: not paused, not
 * fenced and alive; its QPs are then nobody's), e.g. the survivor that
 * recovers it (app/dtxn-app's agent), before the recovery reads MN memory.
 * Control path; QPs of other nodes may post meanwhile.
 *
 * @param node  a CN's fabric node id (n_mn .. n_mn + n_cn - 1).
 * @return the number of WRs applied (>= 0); -EINVAL (@p f NULL, @p node
 *   not a CN); -ENOTSUP: the driver has nothing to drain (sim: its
 *   simulated RNICs go on after a node's death, dtxn_sim_node_drained_ns();
 *   mlx5: a dead process's QPs are destroyed by the kernel, what they had
 *   not executed is flushed).
 */
int dtxn_fabric_drain_node(struct dtxn_fabric *f, uint16_t node);

/**
 * Whether the WRs a node has posted take effect even if the node dies
 * right after posting them (doc/guides/cluster.md, "Recovery"): true where
 * the NIC outlives the process, an RNIC (mlx5: what the RNIC accepted it
 * executes; the rest is flushed with the QP, never half of one doorbell's
 * chain to one MN), shm (the recoverer applies a dead process's posted WRs,
 * dtxn_fabric_drain_node()) and sim (its simulated RNICs go on); false
 * where the "NIC" lives in the posting process and dies with it: ucx (UCX
 * over TCP loses what it had not sent) and sim with
 * dtxn_sim_set_fault_drop() > 0, its test aid for that. When false, each
 * chain (the WRs of one dtxn_qp_post() on one QP) of a dead node either
 * lands whole or not at all, independently of the node's other chains: a
 * decisive batch spanning several MNs may land on some of them only, and
 * a protocol's recovery must then complete the txn from the MNs it reached
 * or roll it back everywhere (Motor picks its MN-resident operation log
 * by default, doc/guides/motor.md "Options").
 *
 * Any thread; constant from dtxn_fabric_open() on (sim: once its test
 * aid is set, before the database attaches).
 *
 * @return true if posted WRs survive their poster's death; false for
 *   @p f NULL.
 */
bool dtxn_fabric_posted_survives(const struct dtxn_fabric *f);

/**
 * Whether this process's DPDK heap (rte_malloc(), memzones) is shared
 * with the other processes of the cluster: true on shm across processes
 * (DPDK multi-process: one heap in the hugepages every process maps),
 * false where each process is its own DPDK primary (mlx5, ucx), in one
 * process (shm, sim) and for @p f NULL. DPDK's heap lock is a plain
 * spinlock with no owner, so a process killed inside rte_malloc() or
 * rte_free() leaves it held for every other one: where this is true,
 * nothing may allocate from it while the cluster runs (recovery takes its
 * scratch elsewhere, dtxn_recovery_alloc(); doc/guides/testing.md
 * "Shared locks"). Any thread; constant from dtxn_fabric_open() on.
 */
bool dtxn_fabric_heap_shared(const struct dtxn_fabric *f);

/**
 * Whether a doorbell batch (lib/txn) may signal only the last WR of each
 * chain it posts, as RDMA code does: on an RC QP the completion of a WR
 * follows those of every WR posted before it on that QP, so one
 * completion per chain tells the coordinator that the whole chain took
 * effect (READ data in place, CAS/FAA results written), and the other WRs
 * complete silently unless they fail (then their error completion reaches
 * the coordinator before the chain's last one). True on shm, mlx5 and
 * ucx; false on sim, whose reports count every completion the protocols
 * ask for (the CPU cost model charges each reaped CQE, and every
 * completion is an event), so that a simulated run stays what it was.
 * Any thread; constant from dtxn_fabric_open() on.
 *
 * @return false for @p f NULL.
 */
bool dtxn_fabric_selective_signaling(const struct dtxn_fabric *f);

/** The RNIC state of node @p node (busy fractions); NULL if not modelled. */
const struct dtxn_nic_state *dtxn_fabric_nic_state(const struct dtxn_fabric *f,
						   uint16_t node);

/**
 * Creates a CQ for the calling lcore.
 *
 * @param depth  most outstanding signaled WRs, power of two, 64..65536.
 * @return the CQ, or NULL with rte_errno EINVAL or ENOMEM.
 */
struct dtxn_cq *dtxn_cq_create(struct dtxn_fabric *f, int socket_id,
			       unsigned depth);

/** Destroys a CQ with no QP attached. NULL is a no-op. */
void dtxn_cq_destroy(struct dtxn_cq *cq);

/**
 * Creates an RC QP from node @p local_node to node @p remote_node, whose
 * completions go to @p cq. For SEND/RECV, the remote side creates the
 * matching QP (remote_node = local_node) and both are paired.
 *
 * @param max_wr  most outstanding WRs (posted, not yet taken effect), power
 *   of two, 64..65536.
 * @return the QP, or NULL with rte_errno EINVAL (bad node id), ENOMEM, or
 *   ENXIO (shm multi-process: that MN's region is not attached here).
 */
struct dtxn_qp *dtxn_qp_create(struct dtxn_fabric *f, struct dtxn_cq *cq,
			       uint16_t local_node, uint16_t remote_node,
			       unsigned max_wr);

/** Destroys a QP; outstanding WRs complete with DTXN_WC_WR_FLUSH_ERR. */
void dtxn_qp_destroy(struct dtxn_qp *qp);

/**
 * Moves @p qp to the error state, as a NIC does when its peer is lost
 * (transport retries exhausted): a fault-injection hook, on every driver,
 * for the tests of what follows a lost peer (test_conformance.c,
 * test_txn.c; doc/guides/mlx5.md, "A lost peer"). WRs posted before
 * complete as usual. The next WR posted on @p qp completes with
 * DTXN_WC_FATAL_ERR, every later one with DTXN_WC_WR_FLUSH_ERR, each with
 * a completion whether signaled or not (src_node: the QP's remote node);
 * none reaches the remote node. RECVs are not affected. There is no way
 * back: destroy the QP. Idempotent.
 *
 * Any thread (one relaxed store; it takes effect at the QP's next post,
 * on its owning lcore). Completions of an errored QP take a ring of the
 * CQ's depth, allocated at the first (the posting lcore's heap).
 *
 * @return 0, or -EINVAL (@p qp NULL).
 */
int dtxn_qp_error_inject(struct dtxn_qp *qp);

/**
 * Posts a chain of WRs with one doorbell. The chain is checked before any
 * WR is posted: on error nothing is posted.
 *
 * @return 0; -EINVAL (unknown opcode, atomic not 8 B or not 8-byte
 *   aligned, len over DTXN_WR_LEN_MAX, inline payload over
 *   DTXN_WR_INLINE_MAX, RECV in the chain, raddr of another node than the
 *   QP's remote node, or a one-sided op on a QP to a CN that registered
 *   no memory, dtxn_fabric_cn_mr_reg()); -ENOBUFS (more
 *   than max_wr outstanding); -ENOTCONN (a SEND on a QP whose peer QP, the
 *   matching one created on the remote node, does not exist). A remote
 *   address outside the region is not a post error: the WR completes with
 *   DTXN_WC_REM_ACCESS_ERR, as on hardware. On a QP in the injected error
 *   state (dtxn_qp_error_inject()) also -ENOMEM (no room for its error
 *   ring) and -ENOBUFS (the CQ's error completions not reaped).
 */
int dtxn_qp_post(struct dtxn_qp *qp, struct dtxn_wr *wr_list);

/**
 * Posts receive buffers (opcode DTXN_WR_RECV, local, len) for SENDs from
 * the QP's remote node. Every RECV is signaled.
 *
 * @return 0, -EINVAL (not RECV), -ENOBUFS (receive queue full).
 */
int dtxn_qp_post_recv(struct dtxn_qp *qp, struct dtxn_wr *wr_list);

/**
 * Reaps up to @p n completions of the QPs attached to @p cq. With a NIC
 * model this is also where ops due by now take effect.
 *
 * @return the number of completions written to @p cqes (0..n).
 */
unsigned dtxn_cq_poll(struct dtxn_cq *cq, struct dtxn_cqe *cqes, unsigned n);

/**
 * Tells the owner of @p cq that memory it polls changed without a
 * completion (a WRITE into its registered CN memory, dtxn_fabric_cn_mr_reg()):
 * in the sim driver the simulation loop then steps the owning thread, as
 * for a completion, so that its pollers look; in real time a no-op (the
 * owner polls anyway). From a dtxn_fabric_write_fn. NULL is a no-op.
 */
void dtxn_cq_kick(struct dtxn_cq *cq);

/**
 * CPU the emulated NIC spent on the QPs of @p cq: TSC cycles
 * (dtxn_cpu_cycles()) inside an emulating driver's execution of their WRs
 * (shm: shm_qp_progress(), where WRs take effect on MN memory, complete
 * and deliver messages, called from the post and the poll of the CQ's
 * owning lcore; shm samples 1 in 32 and scales it up); 0 for drivers whose NIC is hardware or another process
 * (mlx5, ucx) and on sim (virtual time: the cost model counts there).
 * The report's host.cn_cpu_ns_per_txn (doc/guides/report.md). Any thread
 * may read it (relaxed); NULL: 0.
 */
uint64_t dtxn_cq_nic_cycles(const struct dtxn_cq *cq);

/** @return the QP's per-opcode counters (posted WRs). */
const struct dtxn_fabric_counters *dtxn_qp_counters(const struct dtxn_qp *qp);

/** @return the QP's remote node id. */
uint16_t dtxn_qp_remote_node(const struct dtxn_qp *qp);

/** @return the name of an opcode ("read", "write", "cas", ...). */
const char *dtxn_wr_opcode_name(unsigned opcode);

#ifdef __cplusplus
}
#endif
#endif /* DTXN_FABRIC_H */
