/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DTXN_TXN_DRIVER_H
#define DTXN_TXN_DRIVER_H

/**
 * @file
 * Contract between lib/txn and the concurrency-control protocols
 * (drivers/cc/<name>), and the steps protocols share: per-MN doorbell
 * batches, the per-transaction scratch arena, txn ids, replica fan-out.
 *
 * A protocol fills a static const struct dtxn_cc_ops and registers it with
 * DTXN_CC_REGISTER(name, &ops). lib/txn keeps the read/write sets (the
 * items, in the order added) and calls the protocol's ops; the protocol
 * posts WRs through struct dtxn_batch and never touches MN memory any
 * other way (ARCHITECTURE.md, rule 1).
 */

#include <rte_branch_prediction.h>
#include <rte_common.h>

#include "dtxn_txn.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Item kinds. */
enum dtxn_item_kind {
	DTXN_ITEM_RO = 0,
	DTXN_ITEM_RW,
	DTXN_ITEM_INSERT,
	DTXN_ITEM_DELETE,
};

/** Item state flags (set by lib/txn and the protocol). */
#define DTXN_ITEM_F_FETCHED  (1u << 0) /**< execute has read it */
#define DTXN_ITEM_F_EXISTS   (1u << 1) /**< the record exists */
#define DTXN_ITEM_F_LOCKED   (1u << 2) /**< this txn holds its record lock */
#define DTXN_ITEM_F_BLOCKED  (1u << 3) /**< this txn holds its bucket lock */
#define DTXN_ITEM_F_CACHED   (1u << 4) /**< address came from the address cache */
#define DTXN_ITEM_F_BAD      (1u << 5) /**< added with an unknown table */
/**
 * A tombstone: a read item that found the key deleted (DTXN_ITEM_F_EXISTS
 * clear), or an insert over a deleted key, has in @c version the id of
 * the txn whose delete it saw / follows (a protocol that keeps deleted
 * records as versions, e.g. Motor). Without it such items are "absent".
 */
#define DTXN_ITEM_F_TOMB     (1u << 6)
/**
 * An insert's @c aux is an area lib/txn took for it from the coordinator's
 * chunk of the table's aux heap (its slot had none): the insert's commit
 * writes it into the slot header; an aborted txn gives it back.
 */
#define DTXN_ITEM_F_AUX_NEW  (1u << 7)

/**
 * Versions, as the history checker reads them (lib/check, issue 5;
 * doc/guides/checker.md). Every protocol must keep this contract, so
 * that one checker serves all of them:
 * - execute sets @c version of every item it fetched to the id of the
 *   transaction that wrote the version it saw (0 for the version loaded
 *   before the run). For an RW or delete item that is the version it
 *   overwrites (read under its lock, or whatever the protocol uses to
 *   order writers); for a read-only item, the version it read (under
 *   MVCC, the snapshot version chosen).
 * - a read item that found no record leaves DTXN_ITEM_F_EXISTS clear;
 *   if it found the key's deletion (a tombstone kept as a version), it
 *   also sets DTXN_ITEM_F_TOMB and @c version to the deleter's id.
 * - an insert over a tombstone sets DTXN_ITEM_F_TOMB and @c version to
 *   the deleter's id; over a key that never existed, neither.
 * - commit installs, for every written item, a version whose id is the
 *   committing transaction's id (dtxn_txn.id): a later reader of it must
 *   report exactly that id.
 * FORD keeps the writer's id in the slot's version word, so this holds
 * by construction.
 */

/** One entry of the read/write set. */
struct dtxn_item {
	const struct dtxn_table *table;
	uint64_t key;
	uint8_t kind;             /**< enum dtxn_item_kind */
	uint8_t rsvd[3];
	uint32_t flags;           /**< DTXN_ITEM_F_* */
	/**
	 * Cell masks (dtxn_txn_add_ro_cells(), add_rw_cells()), normalised to
	 * the table's cells (dtxn_table_cells_norm()): the cells the
	 * application reads (write cells included) and may change. Every cell
	 * for inserts, deletes and the calls without a mask. Protocols without
	 * cells ignore them (they read and write whole values).
	 */
	uint32_t rd_cells;
	uint32_t wr_cells;
	/**
	 * The slot's aux area (tables with one, dtxn_catalog_add_table_aux()):
	 * its number (struct dtxn_slot_hdr aux; dtxn_store_aux_area_raddr()),
	 * set by locating (dtxn_loc_rounds()) from the slot image it read,
	 * or for an insert into a slot that has none, taken from the
	 * coordinator's chunk (DTXN_ITEM_F_AUX_NEW). A slot's number never
	 * changes once set, so any image of the slot gives it. 0: none or
	 * not located. The commit of an insert writes it into the slot header.
	 */
	uint32_t aux;
	dtxn_raddr_t slot_raddr;  /**< primary slot address, 0 if unknown */
	dtxn_raddr_t bucket_raddr;/**< primary bucket address it was found in / will be inserted in */
	void *slot;               /**< local copy: the slot (slot_size B), then its aux area (aux_size B) */
	void *value;              /**< value inside the local slot copy */
	void *bucket;             /**< local bucket copy when one was read, else NULL */
	uint64_t version;         /**< version seen by execute (protocol-defined) */
	uint64_t bucket_version;  /**< bucket header version seen (absent reads, inserts) */
	uint64_t cc[4];           /**< protocol scratch */
	/** Record lock word this txn CASed (held while DTXN_ITEM_F_LOCKED); dtxn_txn_unlock_held(). */
	dtxn_raddr_t lock_raddr;
	/** Bucket lock word this txn CASed (held while DTXN_ITEM_F_BLOCKED). */
	dtxn_raddr_t block_raddr;
	/**
	 * Bits of the record lock word this txn takes (protocols that lock
	 * parts of a record, CREST's cell locks, crest.md §1): the lock round
	 * of dtxn_loc_rounds() then takes them with one masked CAS (compare
	 * and swap those bits only: 0 -> 1) and the lock is held when none
	 * of them was set; dtxn_txn_unlock_held() clears them with one masked
	 * CAS. 0 (the default): the whole word, CAS 0 -> txn id, released by
	 * a WRITE of 0. Set by the protocol before the lock round.
	 */
	uint64_t lock_bits;
	/**
	 * Versions per cell for the history checker (protocols with
	 * cell-level concurrency control, CREST), NULL for record-level
	 * versions (@c version). Owned by the protocol (the txn's arena).
	 */
	const struct dtxn_cell_vers *cell_vers;
};

/** Most cells struct dtxn_cell_vers names. */
#define DTXN_CELL_VERS_MAX 32

/**
 * What an item saw and wrote, cell by cell, for the history checker
 * (lib/txn/history.c): each cell of a record is then its own key to the
 * checker (table id | (cell + 1) << 16), so that transactions that touch
 * disjoint cells of a record do not conflict there, as they do not under
 * cell-level concurrency control. The version contract above holds per
 * cell: ver[c] is the id of the txn whose write of cell c the item saw
 * (for a written cell, the one it overwrites), 0 for the loaded value.
 * Cells are the protocol's (CREST merges a table's columns past the 20th
 * into one cell).
 */
struct dtxn_cell_vers {
	uint32_t rd;                       /**< cells read (written ones included) */
	uint32_t wr;                       /**< cells written (insert, delete: all) */
	uint64_t ver[DTXN_CELL_VERS_MAX];  /**< per cell, as @c version */
};

/**
 * Layout of a transaction id (dtxn_txn.id): (gid + 1) << DTXN_TXN_SEQ_BITS
 * | seq, seq the coordinator's attempt counter. A protocol that keeps the
 * writer's id in fewer than 64 bits (Motor's Vcell, CREST's TS_commit)
 * bounds the coordinators by it (dtxn_cc_ops.max_coords).
 */
#define DTXN_TXN_SEQ_BITS 40

/** A transaction: the read/write set and its scratch arena. */
struct dtxn_txn {
	struct dtxn_coord *coord;
	uint64_t id;              /**< cluster-unique, > 0 */
	uint8_t mode;             /**< enum dtxn_txn_mode */
	uint8_t open;             /**< begun, not yet committed/aborted */
	/**
	 * Set by a protocol when it has posted the writes that commit the txn
	 * (dtxn_batch_run_decide(): CREST's write-back, FORD's write round,
	 * Lotus's visible batch), or just before it posts them
	 * (dtxn_batch_run_decide_early(): Motor's commit batch, OOCC's R3,
	 * Scythe's write-back); reset at each begin, and cleared when the wait for that
	 * batch reports a failed WR (an RNIC refused it once the lease ran
	 * out: not all of it took effect). A dead coordinator's open txn
	 * counts as committed (the settlement of its counters, the
	 * simulator's history oracle: doc/guides/cluster.md, "Recovery") if
	 * a recovery lists it in struct dtxn_recovery.visible, or if it is
	 * set and no recovery lists the txn in struct dtxn_recovery.undone.
	 */
	uint8_t decided;
	/**
	 * The conflicts seen were false (dtxn_coord_false_abort()): 0 none
	 * classified, DTXN_FA_FALSE every one false, DTXN_FA_TRUE one at
	 * least true. The protocol sets it (dtxn_fa_verdict()), begin clears it.
	 */
	uint8_t false_conflict;
	uint16_t fa_verdicts;     /**< dtxn_fa_verdict() calls since begin */
	uint16_t fa_mark;         /**< fa_verdicts when the current execute or commit began */
	/** mutating batches posted since begin, counted only with the test
	 *  aid dtxn_db_conf.debug_stall_ns (saturates at 255) */
	uint8_t debug_mut_posts;
	uint32_t n_items;
	uint32_t n_fetched;       /**< items[0 .. n_fetched) have been executed */
	int abort_reason;         /**< set when aborted */
	/** dtxn_now_ns() at begin, for a protocol that needs it: its begin op
	 *  sets it (Lotus, CREST); 0 otherwise (a clock read saved per txn) */
	uint64_t start_ns;
	uint64_t cc[8];           /**< protocol scratch (timestamps, ...) */
	struct dtxn_item items[DTXN_TXN_MAX_ITEMS];
};

/** The cluster as coordinators see it. */
struct dtxn_db {
	struct dtxn_db_conf conf;
	const struct dtxn_cc_ops *cc;
	struct dtxn_catalog cat;
	struct dtxn_fabric *fabric;
	void *cc_shared;          /**< protocol's shared state (dtxn_cc_ops.db_init) */
	/** lock takers' cells for false-abort classification (dtxn_cc_ops.false_aborts), or NULL */
	struct dtxn_fa_table *fa;
	/** an MN service that is not the protocol's (dtxn_db_set_mn_svc()), and its argument */
	const struct dtxn_cc_mn_svc_ops *mn_svc_ext;
	void *mn_svc_ext_arg;
	/** the workers' shared pre-warmed address cache (conf.addr_prewarm),
	 *  built by the first dtxn_worker_addr_cache_prewarm(), read-only after */
	struct dtxn_addr_cache *addr_base;
	/** test aid conf.debug_stall_ns: set by dtxn_db_debug_stall_arm(),
	 *  taken (cleared) by the one coordinator that stalls */
	uint32_t debug_stall_armed;
};

/** One worker lcore. */
struct dtxn_worker {
	struct dtxn_db *db;
	struct dtxn_sched *sched;
	struct dtxn_cq *cq;
	struct dtxn_qp *qp[DTXN_MAX_NODES];   /**< QP to each MN, by MN id */
	/** lib/rpc's QP to each peer CN, by node id (NULL: none): its SENDs are
	 * the CN-to-CN messages of the report (dtxn_worker_peer_counters()) */
	struct dtxn_qp *peer_qp[DTXN_MAX_NODES];
	struct dtxn_addr_cache *addr_cache;
	uint16_t cn_node;
	unsigned index;
	int socket_id;
	void *cc_priv;            /**< protocol's per-worker state */
	/**
	 * Completions of SEND and RECV WRs on the worker's CQ go to this
	 * handler instead of to a coroutine (lib/rpc attaches its CN-to-CN QPs
	 * to the worker's CQ, so that one poll serves both and the sim loop
	 * wakes the worker when a message lands). NULL: none expected. Set on
	 * the worker's lcore before the run (dtxn_rpc_create()).
	 */
	void (*msg_cqe)(void *arg, const struct dtxn_cqe *cqe);
	void *msg_arg;            /**< msg_cqe's argument */
	/** Nodes a WR failed to reach with DTXN_WC_FATAL_ERR (bit = node id):
	 *  the owning lcore sets bits, any thread reads them
	 *  (dtxn_worker_lost_nodes()) */
	uint64_t lost_nodes;
};

/** One coordinator. */
struct dtxn_coord {
	struct dtxn_worker *worker;
	struct dtxn_co *co;
	uint32_t gid;
	uint64_t txn_seq;
	dtxn_coord_fn fn;
	void *fn_arg;
	struct dtxn_txn *txn;     /**< owned; reused by every begin */
	/* scratch arena: reset at each begin */
	char *arena;
	size_t arena_size;
	size_t arena_used;
	/* WR pool for struct dtxn_batch */
	struct dtxn_wr *wrs;
	unsigned n_wrs;
	void *cc_priv;            /**< protocol's per-coordinator state */
	uint64_t wait_ns[DTXN_WAIT_MAX]; /**< time waited by kind, cumulative, ns (dtxn_coord_waits()) */
	/** WRs posted to the MNs through dtxn_batch, by opcode, and their bytes;
	 *  cumulative (dtxn_coord_verbs()) */
	uint64_t verbs[DTXN_WR_OP_MAX];
	uint64_t verb_bytes;
	uint32_t debug_posts;     /**< multi-MN posts, for dtxn_db_conf.debug_post_gap_ns */
	uint32_t debug_decides;   /**< early-decided posts, for dtxn_db_conf.debug_decide_gap_ns */
	/** dtxn_coord_set_commit_record(): written in every decisive batch,
	 *  to slot crec_slot (lib/store) on each MN the batch touches */
	dtxn_commit_record_fn crec_fn;
	void *crec_arg;
	uint32_t crec_slot;
	uint64_t crec_buf[DTXN_COMMIT_RECORD_BYTES / 8]; /**< the record as posted (inline) */
};

/** Adds the time since @p t0 (dtxn_now_ns()) to @p c's waits of kind @p k. */
static inline void
dtxn_coord_wait_since(struct dtxn_coord *c, enum dtxn_wait_kind k, uint64_t t0)
{
	c->wait_ns[k] += dtxn_now_ns() - t0;
}

/* ------------------------------------------------------------------ */
/* Protocol ops                                                       */
/* ------------------------------------------------------------------ */

/** Slot size, bytes (multiple of 8, incl. the 16 B slot header), for a value size. */
typedef uint32_t (*dtxn_cc_slot_size_t)(uint32_t value_size);
/** Formats a loaded record (dtxn_slot_format_fn); arg is the db. */
typedef void (*dtxn_cc_slot_format_t)(const struct dtxn_table *t, void *slot,
				      const void *value, void *arg);
/** Pointer to the value inside a slot (local copy or MN memory). */
typedef void *(*dtxn_cc_slot_value_t)(const struct dtxn_table *t, void *slot);
/** Shared state, after the fabric is attached; 0 or -errno. Optional. */
typedef int (*dtxn_cc_db_init_t)(struct dtxn_db *db);
typedef void (*dtxn_cc_db_fini_t)(struct dtxn_db *db);
/** Per-worker / per-coordinator state; 0 or -errno. Optional. */
typedef int (*dtxn_cc_worker_init_t)(struct dtxn_worker *w);
typedef void (*dtxn_cc_worker_fini_t)(struct dtxn_worker *w);
typedef int (*dtxn_cc_coord_init_t)(struct dtxn_coord *c);
typedef void (*dtxn_cc_coord_fini_t)(struct dtxn_coord *c);
/** Called by dtxn_txn_begin() after lib/txn reset the txn; DTXN_OK or a reason. */
typedef int (*dtxn_cc_begin_t)(struct dtxn_txn *t);
/**
 * Fetches items[t->n_fetched .. t->n_items): read, lock as the protocol
 * does. lib/txn then sets n_fetched = n_items. Returns DTXN_OK, or an abort
 * reason after releasing every lock the txn holds.
 */
typedef int (*dtxn_cc_execute_t)(struct dtxn_txn *t);
/** Validates, logs, writes, unlocks. DTXN_OK or an abort reason (txn released). */
typedef int (*dtxn_cc_commit_t)(struct dtxn_txn *t);
/** Releases only what this txn holds (locks actually acquired). */
typedef void (*dtxn_cc_abort_t)(struct dtxn_txn *t);
/**
 * Optional: ends the execution block of items[..t->n_fetched)
 * (dtxn_txn_block_end()). DTXN_OK, or an abort reason after releasing
 * every lock the txn holds. NULL: blocks mean nothing to the protocol.
 */
typedef int (*dtxn_cc_block_end_t)(struct dtxn_txn *t);
/**
 * Optional, overrides slot_size: the record format's sizes for a whole
 * table definition (per-table parameters such as def->n_versions or
 * def->column_size). @p aux_size: bytes of a per-slot aux area
 * (dtxn_catalog_add_table_aux(); 0 for none), multiple of 8.
 * @return 0, or -EINVAL (a definition the format cannot hold).
 */
typedef int (*dtxn_cc_table_sizes_t)(const struct dtxn_table_def *def, uint32_t *slot_size,
				     uint32_t *aux_size);
/**
 * Optional: pointer to the value of a record in MN memory (MN CPU,
 * dtxn_db_scan()/dtxn_db_get()), for formats whose value is not in the
 * slot (e.g. in its aux area), or NULL if the slot holds a deleted record
 * (a tombstone kept for older snapshots): scan skips it, get says
 * -ENOENT. Without it, slot_value() is used.
 */
typedef void *(*dtxn_cc_mn_value_t)(struct dtxn_db *db, const struct dtxn_table *t,
				    void *mn_slot);

/**
 * Optional: whether the record in MN memory at @p mn_slot holds a commit
 * neither finished nor undone (Lotus: a valid cell of version INVISIBLE),
 * which no finished run may leave (dtxn_db_unfinished()). MN CPU, after
 * the run. None: a protocol whose records never hold one.
 */
typedef bool (*dtxn_cc_mn_unfinished_t)(const struct dtxn_table *t, const void *mn_slot);

/**
 * Optional: routing (Lotus §4.3, hybrid routing): whether a read-write
 * transaction whose first record has key @p key should run on @p c's CN
 * (dtxn_coord_routes_here()). Coordinator's lcore; no fabric op.
 */
typedef bool (*dtxn_cc_route_t)(const struct dtxn_coord *c, uint32_t table_id, uint64_t key);
/**
 * Optional: checks a protocol option string (dtxn_db_conf.cc_options,
 * "key=value,key=value"). Any thread, before the db exists.
 * @return 0, or -EINVAL with a one-line message in @p err.
 */
typedef int (*dtxn_cc_check_options_t)(const char *opts, char *err, size_t errlen);
/**
 * Optional: checks options that depend on the cluster's shape (valid
 * options, dtxn_cc_check_options_t), e.g. Scythe's tso_proxies against
 * the MN count, or on the fabric driver @p fabric ("shm", "sim", "mlx5";
 * NULL: unknown), e.g. CREST's cache=cn (sim only). Any thread.
 * @return 0, or -EINVAL with a one-line message in @p err.
 */
typedef int (*dtxn_cc_check_cluster_t)(const char *opts, unsigned n_mn, unsigned n_cn,
				       const char *fabric, char *err, size_t errlen);
/**
 * Optional, overrides table_sizes and slot_size: a table's geometry from
 * the db's options (dtxn_db_conf.cc_options; e.g. FORD's published=1:
 * 720 B items in 22-slot buckets, doc/guides/ford.md). @p def is the
 * caller's copy of the benchmark's definition: the protocol may change
 * def->slots_per_bucket (and nothing else); the catalog keeps the result.
 * Main lcore, before the db is attached (dtxn_db_add_table()).
 * @param slot_size  out: bytes per slot, as dtxn_cc_table_sizes_t.
 * @param aux_size   out: bytes of the per-slot aux area, as dtxn_cc_table_sizes_t.
 * @return 0, or -EINVAL (a definition the format cannot hold).
 */
typedef int (*dtxn_cc_table_geometry_t)(const struct dtxn_db *db, struct dtxn_table_def *def,
					uint32_t *slot_size, uint32_t *aux_size);
/**
 * Optional: which variant of the protocol the db's options select, for
 * reports (dtxn_db_variant()); e.g. "published" for FORD as its public
 * code runs. Any thread, after dtxn_db_create().
 * @return a static string, or NULL for the protocol's default.
 */
typedef const char *(*dtxn_cc_variant_t)(const struct dtxn_db *db);
struct dtxn_footprint;
/**
 * Optional: the memory the protocol will allocate in a run of @p db
 * (its options, dtxn_db_conf.cc_options, parsed as db_init parses them;
 * its catalog after dtxn_db_layout()) on a fabric with @p n_cn CNs, for
 * dtxn_cc_footprint(). Adds to @p per_cn what worker_init allocates once
 * per CN (e.g. Lotus's lock table and VT cache) and to @p per_worker what
 * worker_init allocates per worker plus what @p max_coords coord_init on
 * it allocate, bytes and memzones (dtxn_sched.h, struct dtxn_footprint;
 * each allocation with DTXN_FOOTPRINT_ALLOC_SLACK). Upper bounds. The
 * protocol's db-wide state (db_init) is not counted. Any thread, before
 * the db is attached; no EAL needed.
 * @param n_cn        CNs of the fabric (>= 1).
 * @param max_coords  coordinators per worker (>= 1).
 * @return 0, or -EINVAL (options db_init would refuse, an argument out of range).
 */
typedef int (*dtxn_cc_footprint_t)(const struct dtxn_db *db, unsigned n_cn,
				   unsigned max_coords, struct dtxn_footprint *per_cn,
				   struct dtxn_footprint *per_worker);

/**
 * Optional: a service on the MNs' CPUs (dtxn_mn_svc_create(), dtxn_txn.h;
 * Scythe's lock service). Every op is mandatory when the table is given.
 */
struct dtxn_cc_mn_svc_ops {
	/**
	 * The service of MN @p mn (dtxn_mn_svc_create()'s arguments).
	 * @return the protocol's service, or NULL with rte_errno.
	 */
	void *(*create)(struct dtxn_db *db, uint16_t mn, unsigned workers_per_cn,
			unsigned max_coords, struct dtxn_sched *sched);
	/** One poll; returns requests handled. */
	unsigned (*poll)(void *svc);
	/** The CQ it polls. */
	struct dtxn_cq *(*cq)(void *svc);
	void (*destroy)(void *svc);
};

/**
 * Optional: CN crash recovery (dtxn_coord_recover(), which checks the
 * arguments, times the whole and calls this). Runs in surviving
 * coordinator @p c's coroutine, with no transaction open on it; posts
 * WRs through struct dtxn_batch and yields. Rolls the in-flight
 * transactions of the dead CN's coordinators (@p rec->gid_first ..)
 * back or forward from what they left in MN memory (logs, lock words),
 * releases their locks, and fixes the survivors' protocol state (e.g.
 * Lotus's lock shards); must be idempotent (a recovery may be cut short
 * by another death and run again). Adds its steps to @p rec
 * (dtxn_recovery_step_begin() / _end()) and its counters.
 * @return 0, or -EIO (a WR failed).
 */
typedef int (*dtxn_cc_recover_t)(struct dtxn_coord *c, struct dtxn_recovery *rec);

/** A concurrency-control protocol. name, slot_*, execute, commit, abort are mandatory. */
struct dtxn_cc_ops {
	const char *name;
	uint32_t isolations;      /**< bit (1 << enum dtxn_isolation) per level supported */
	dtxn_cc_slot_size_t slot_size;
	dtxn_cc_slot_format_t slot_format;
	dtxn_cc_slot_value_t slot_value;
	dtxn_cc_db_init_t db_init;
	dtxn_cc_db_fini_t db_fini;
	dtxn_cc_worker_init_t worker_init;
	dtxn_cc_worker_fini_t worker_fini;
	dtxn_cc_coord_init_t coord_init;
	dtxn_cc_coord_fini_t coord_fini;
	dtxn_cc_begin_t begin;
	dtxn_cc_execute_t execute;
	dtxn_cc_commit_t commit;
	dtxn_cc_abort_t abort;
	dtxn_cc_block_end_t block_end;     /**< optional */
	dtxn_cc_table_sizes_t table_sizes; /**< optional */
	dtxn_cc_mn_value_t mn_value;       /**< optional */
	dtxn_cc_mn_unfinished_t mn_unfinished; /**< optional */
	dtxn_cc_route_t route;             /**< optional; none: every CN may run anything */
	dtxn_cc_check_options_t check_options; /**< optional; none: the protocol takes no options */
	dtxn_cc_check_cluster_t check_cluster; /**< optional; none: any cluster fits its options */
	dtxn_cc_table_geometry_t table_geometry; /**< optional; overrides table_sizes */
	dtxn_cc_variant_t variant;         /**< optional; none: always the default */
	dtxn_cc_footprint_t footprint;     /**< optional; none: a fixed share per coordinator */
	const struct dtxn_cc_mn_svc_ops *mn_svc; /**< optional; none: MN CPUs stay out of the data path */
	/**
	 * Optional: bytes of the message area every MN region needs (struct
	 * dtxn_catalog msg_bytes; RRPC rings to the MNs, dtxn_rrpc.h), from
	 * the db's options and its conf n_cn and cn_workers; asked by
	 * dtxn_db_layout(), before db_init. Any thread. None: 0.
	 */
	uint64_t (*mn_msg_bytes)(const struct dtxn_db *db);
	/**
	 * Optional: bytes the local copy of a record of table @p t holds after
	 * its slot and aux area (dtxn_txn_add_*() allocates slot_size +
	 * aux_size + this): room for a protocol whose value is scattered on
	 * the MN (CREST's cells, each with its version in its cacheline) to
	 * keep it contiguous for the application (its slot_value() points
	 * there; its mn_value() gathers an MN record). NULL: 0. Any thread.
	 */
	uint32_t (*local_extra)(const struct dtxn_table *t);
	/**
	 * Optional: bytes of an area of table @p def's delta heap
	 * (dtxn_catalog_set_delta(), doc/guides/store.md "Delta heaps"),
	 * asked by dtxn_db_add_table() after table_sizes: room the protocol
	 * takes at run time with dtxn_txn_delta_take() (Motor's attribute
	 * bars, taken on a row's first update). 0: none. A multiple of 8, at
	 * most 2^24. NULL: no table has one. Any thread.
	 */
	uint32_t (*table_delta)(const struct dtxn_table_def *def);
	dtxn_cc_recover_t recover;         /**< optional; none: dtxn_coord_recover() says -ENOTSUP */
	/**
	 * Optional: whether @c recover works for db @p db's options (FORD's
	 * published mode: no); none: it does. Any thread. Read by
	 * dtxn_db_can_recover() and, on a db that holds nothing but its
	 * options and protocol, dtxn_protocol_can_recover(): it may read
	 * @c db->conf.cc_options only.
	 */
	bool (*can_recover)(const struct dtxn_db *db);
	/**
	 * Planted defects (DTXN_DEBUG_*) the protocol honours, per isolation
	 * level (index enum dtxn_isolation): each must break exactly one check
	 * the protocol relies on at that level, so that the history checker
	 * finds an anomaly (test/tcl/correctness.test proves it). Every
	 * protocol brings at least one per level it supports. Others are
	 * refused (dtxn_cc_weaken_supported(), dtxn_db_create()).
	 */
	uint32_t weaken[DTXN_ISO_MAX];
	/**
	 * True for record-level protocols whose record lock word holds the
	 * holder's txn id and whose versions name their writer's txn id (FORD,
	 * Motor): lib/txn then keeps the side table of lock takers' cells
	 * (dtxn_fa_create(), struct dtxn_db.fa) and classifies their lock
	 * conflicts as false or true (doc/guides/crest.md, "False aborts").
	 */
	bool false_aborts;
	/**
	 * Most coordinators (gids 0 .. max_coords - 1) the protocol's formats
	 * can name; 0: no limit (the 24 bits of lib/txn's txn ids). CREST:
	 * 255, its 48-bit TS_commit holds the writer's txn id, (gid + 1) in
	 * bits 40..47 (doc/guides/crest.md, "The coordinator limit").
	 * Checked by dtxn_cc_max_coords() callers before the run.
	 */
	uint32_t max_coords;
};

/* ------------------------------------------------------------------ */
/* Protocol options (opts.c)                                          */
/* ------------------------------------------------------------------ */

/**
 * One key=value pair of a protocol's option string, for
 * dtxn_cc_opts_parse(): applies @p val to the protocol's options @p obj.
 * @return 0, or -EINVAL with a one-line message (naming the protocol, the
 *   key and what it expects) in @p err.
 */
typedef int (*dtxn_cc_opt_fn)(void *obj, const char *key, const char *val, char *err,
			      size_t errlen);

/**
 * Splits a protocol option string (dtxn_db_conf.cc_options: "key=value"
 * pairs separated by ',' or ';', at most 511 characters) and hands each
 * pair to @p one, in order; the pairs whose key is @p first (a preset,
 * e.g. Lotus's ablation=, FORD's published=) go first, wherever they
 * are, so that the others refine it. Any thread; no allocation.
 * @param proto  protocol name, prefix of the messages.
 * @param s      the string; NULL or "" is no option (returns 0).
 * @param first  key applied first, or NULL.
 * @return 0; -EINVAL with a one-line message in @p err: a pair that is not
 *   key=value, a string too long, or @p one's refusal.
 */
int dtxn_cc_opts_parse(const char *proto, const char *s, const char *first, dtxn_cc_opt_fn one,
		       void *obj, char *err, size_t errlen);

/**
 * Parses a decimal option value in [min, max] (no sign, no blanks).
 * @return 0 with *out set, or -EINVAL (*out untouched).
 */
int dtxn_cc_opt_u32(const char *v, uint32_t min, uint32_t max, uint32_t *out);

/**
 * Option value that is one of @p n names (at most 256).
 * @return 0 with *out = its index, or -EINVAL (*out untouched).
 */
int dtxn_cc_opt_pick(const char *v, const char *const *names, unsigned n, uint8_t *out);

/**
 * Registers a protocol (from a constructor).
 * @return 0, -EINVAL (mandatory op missing), -EEXIST, -ENOSPC.
 */
int dtxn_cc_register(const struct dtxn_cc_ops *ops);

/** @return the protocol registered under @p name, or NULL. */
const struct dtxn_cc_ops *dtxn_cc_find(const char *name);

/**
 * @return the most coordinators worker @p w was created for
 *   (dtxn_worker_create()'s max_coords), 0 if @p w is NULL. For protocols
 *   that size per-coordinator resources in worker_init (lib/rpc rings).
 */
unsigned dtxn_worker_max_coords(const struct dtxn_worker *w);

/**
 * Opens step @p name (a static string; @p unit names its work units) of
 * recovery @p rec at dtxn_now_ns(). A recovery with
 * DTXN_RECOVERY_MAX_STEPS steps open keeps timing the last one.
 * @return the step, to add work to and close with dtxn_recovery_step_end().
 */
struct dtxn_recovery_step *dtxn_recovery_step_begin(struct dtxn_recovery *rec, const char *name,
						    const char *unit);

/** Closes step @p st: its duration is now - its start. */
void dtxn_recovery_step_end(struct dtxn_recovery_step *st);

/**
 * The gid of the coordinator whose transaction has id @p id (lock words
 * and versions hold txn ids). Pure.
 * @return the gid, or UINT32_MAX for id 0 (a free lock).
 */
uint32_t dtxn_txn_id_gid(uint64_t id);

/** True if txn id @p id (masked by the caller) is one of @p rec's dead coordinators'. */
static inline bool
dtxn_recovery_owns(const struct dtxn_recovery *rec, uint64_t id)
{
	uint32_t gid = dtxn_txn_id_gid(id);

	return gid != UINT32_MAX && gid >= rec->gid_first && gid - rec->gid_first < rec->n_gids;
}

/**
 * Recovery step "unlock" (FORD, Motor: lock words in MN memory that hold
 * the holder's txn id): READs the primary replica of every table, in
 * chunks, and releases with a CAS (id -> 0) every lock word a dead
 * coordinator of @p rec holds: each bucket header's lock and each slot's
 * lock word at @p lock_off (bytes from the slot's start;
 * DTXN_RECOVERY_LOCK_LAST: the slot's last 8 bytes, OOCC's footer, whose
 * offset differs by table; DTXN_RECOVERY_LOCK_NONE: none, Scythe's
 * Takeout Locks are counters). A word counts
 * as held by txn id (word & @p id_mask). A CAS that lost (the word
 * changed meanwhile) releases nothing. @p visit, if not NULL, sees
 * every valid slot's image as read and its primary address @c raddr,
 * with @p arg, before the slot's lock word is released (it may post WRs
 * and yield: Motor's roll-forward of a record its dead holder half wrote). Adds the step (work: locks
 * released) and rec->locks_released, rec->wrs. Coordinator's coroutine;
 * yields.
 * @return 0, -ENOMEM (no buffer), -EIO (a WR failed).
 */
/** dtxn_recovery_unlock_scan()'s @c lock_off of a lock word in each slot's last 8 bytes. */
#define DTXN_RECOVERY_LOCK_LAST UINT32_MAX
/** dtxn_recovery_unlock_scan()'s @c lock_off when slots carry no lock word (bucket locks only). */
#define DTXN_RECOVERY_LOCK_NONE (UINT32_MAX - 1)

int dtxn_recovery_unlock_scan(struct dtxn_coord *c, struct dtxn_recovery *rec,
			      uint32_t lock_off, uint64_t id_mask,
			      void (*visit)(struct dtxn_recovery *rec, const struct dtxn_table *t,
					    const void *slot, dtxn_raddr_t raddr, void *arg),
			      void *arg);

/**
 * dtxn_recovery_unlock_scan() with a second visitor, @p bucket, that sees
 * every bucket whose header lock (inserts, deletes) a dead coordinator's
 * txn @p x holds, before that lock is released: its primary image as read
 * (t->bucket_size bytes at @p img, primary address @p raddr). It may post
 * WRs and yield: Motor's roll-forward of an insert that reached the
 * replicas on some MNs only (a CN killed between two doorbells of its
 * commit batch: the primary's bucket keeps its lock and lacks the slot).
 * @p slot is dtxn_recovery_unlock_scan()'s @c visit (NULL: none).
 * Coordinator's coroutine; yields.
 * @return as dtxn_recovery_unlock_scan().
 */
int dtxn_recovery_unlock_scan_buckets(struct dtxn_coord *c, struct dtxn_recovery *rec,
				      uint32_t lock_off, uint64_t id_mask,
				      void (*slot)(struct dtxn_recovery *rec,
						   const struct dtxn_table *t, const void *img,
						   dtxn_raddr_t raddr, void *arg),
				      void (*bucket)(struct dtxn_recovery *rec,
						     const struct dtxn_table *t, const void *img,
						     dtxn_raddr_t raddr, uint64_t x, void *arg),
				      void *arg);

/**
 * Recovery step "unlock" for lock words that name no owner (CREST's cell
 * bitmaps), run while the survivors are fenced (no live txn holds a
 * lock): as dtxn_recovery_unlock_scan(), but each slot lock word with a
 * bit outside @p keep_mask set is CASed to (word & @p keep_mask); bucket
 * header locks (lib/txn's, a txn id) are released by their owner as
 * there. Coordinator's coroutine; yields.
 * @return 0, -ENOMEM (no buffer), -EIO (a WR failed).
 */
int dtxn_recovery_unlock_scan_all(struct dtxn_coord *c, struct dtxn_recovery *rec,
				  uint32_t lock_off, uint64_t keep_mask);

/**
 * Scratch memory of a recovery (the buffers its WRs read into or write
 * from, its tables), taken while the cluster runs. Where the DPDK heap is
 * shared by the processes of the cluster (dtxn_fabric_heap_shared(): shm
 * across processes) it comes from the C library instead: DPDK's heap lock
 * is a spinlock without an owner, and a process killed inside rte_malloc()
 * would leave it held for every survivor (doc/guides/testing.md "Shared
 * locks"). Elsewhere it is rte_malloc() memory (registered on a network
 * fabric). A WR of the recoverer's that names this memory and is still
 * posted when the recoverer dies is dropped by the next recoverer's drain
 * (dtxn_fabric_drain_node(): private memory), which redoes the recovery
 * from its start.
 *
 * @param c     the recovering coordinator (its database's fabric decides).
 * @param size  bytes, > 0.
 * @param zero  true: zero-filled.
 * @return 64-byte-aligned memory, or NULL (out of memory, @p size 0).
 *   Free it with dtxn_recovery_free(). Any thread.
 */
void *dtxn_recovery_alloc(const struct dtxn_coord *c, size_t size, bool zero);

/**
 * Resizes @p p (NULL: allocates) from dtxn_recovery_alloc() to @p size
 * bytes, keeping its first bytes, as realloc() does; the new memory is not
 * zeroed and is 8-byte aligned at least. @return the memory, or NULL (out
 * of memory: @p p is left as it was). Any thread.
 */
void *dtxn_recovery_realloc(const struct dtxn_coord *c, void *p, size_t size);

/** Frees @p p from dtxn_recovery_alloc() by @p c (or a coordinator of the same database); NULL: no-op. */
void dtxn_recovery_free(const struct dtxn_coord *c, void *p);

/**
 * READs the first @p len bytes of coordinator @p gid's log region into
 * @p buf + mn * @p len, for every MN, waited for. @p replicated: the
 * protocol writes each record to the MNs of its tables' replicas; when
 * every table has a replica on every MN, each MN holds every record and
 * only MN 0's copy is read, unless the fabric's posted WRs may die with
 * their CN (dtxn_fabric_posted_survives() false: a record may have
 * reached some MNs only). Coordinator's coroutine; yields.
 * @return the MNs read (0 .. n-1), or -EIO.
 */
int dtxn_recovery_read_logs(struct dtxn_coord *c, struct dtxn_recovery *rec, uint32_t gid,
			    uint32_t len, void *buf, bool replicated);

/**
 * The newest log record (struct dtxn_log_hdr) of coordinator @p gid in
 * @p log, one MN's copy (@p log_bytes) of its circular log region: the
 * chain of records from offset 0 whose txn ids grow (a record written
 * after the log wrapped starts at 0 again with a larger id than anything
 * it overwrote), each whole (its entries fill its 64 B-aligned @c bytes,
 * dtxn_txn_log_intact()). A record voided after its txn aborted (txn id
 * 0, OOCC) is stepped over; a torn or foreign one ends the chain (its txn
 * had not begun its writes). Pure; any lcore.
 * @return the record (inside @p log), or NULL (none).
 */
const struct dtxn_log_hdr *dtxn_recovery_log_latest(const void *log, uint64_t log_bytes,
						    uint32_t gid);

/**
 * Whether coordinator @p gid belongs to a CN @p rec knows dead (dead_cn
 * or dead_mask; gids are handed out n_gids per CN, in node order after
 * the @p n_mn MNs). Pure.
 */
static inline bool
dtxn_recovery_gid_dead(const struct dtxn_recovery *rec, uint16_t n_mn, uint32_t gid)
{
	uint64_t node = n_mn + (uint64_t)gid / RTE_MAX(rec->n_gids, 1u);

	return node == rec->dead_cn || (node < 64 && (rec->dead_mask >> node & 1) != 0);
}

/**
 * Recovery step @p step (work: records): for each dead coordinator of
 * @p rec, its newest log record over every MN's copy
 * (dtxn_recovery_chains_apply() with dtxn_recovery_log_latest(); records
 * are written to the MNs of their tables' replicas), handed to @p apply, which rolls its txn forward or
 * back (FORD's undo log, OOCC's redo log). Coordinator's coroutine; yields.
 * @return 0, -ENOMEM, -EIO, or @p apply's first error.
 */
int dtxn_recovery_logs_apply(struct dtxn_coord *c, struct dtxn_recovery *rec, const char *step,
			     int (*apply)(struct dtxn_coord *c, struct dtxn_recovery *rec,
					  const struct dtxn_log_hdr *h));

/**
 * A protocol's log format, for dtxn_recovery_chains_apply(): how to find
 * the newest whole record of a coordinator in one MN's copy of its log
 * region, and what to do with it.
 */
struct dtxn_recovery_logfmt {
	const char *step;   /**< recovery step name (dtxn_recovery_step_begin()) */
	const char *unit;   /**< its work unit ("records", "entries") */
	/** bytes at the start of each log region that hold records; 0: the catalog's log_bytes */
	uint32_t room;
	/**
	 * 0: the coordinators of rec (gid_first, n_gids); else every
	 * coordinator below it of every CN @p rec knows dead
	 * (dtxn_recovery_gid_dead()).
	 */
	uint32_t gid_end;
	/** The newest whole record of @p gid in @p log (@p room bytes) and its txn id; NULL: none. Pure. */
	const void *(*latest)(const void *log, uint64_t room, uint32_t gid, uint64_t *txn_id);
	/** Rolls the txn of record @p h forward or back; 0 or a negative errno. */
	int (*apply)(struct dtxn_coord *c, struct dtxn_recovery *rec, const void *h, void *arg);
	void *arg;          /**< @c apply's */
};

/**
 * Recovery step f->step (work: the records applied): for each dead
 * coordinator (f->gid_end), READs its log regions (dtxn_recovery_read_logs(),
 * replicated), finds the newest record over every MN's copy with
 * f->latest and hands it to f->apply. Shared by FORD's, OOCC's
 * (dtxn_recovery_logs_apply()), CREST's and Lotus's recovery.
 * Coordinator's coroutine; yields.
 * @return 0, -ENOMEM, -EIO, or @c apply's first error.
 */
int dtxn_recovery_chains_apply(struct dtxn_coord *c, struct dtxn_recovery *rec,
			       const struct dtxn_recovery_logfmt *f);

/**
 * Adds txn id @p id to rec->visible (once; dropped past
 * DTXN_RECOVERY_MAX_VISIBLE).
 */
void dtxn_recovery_note_visible(struct dtxn_recovery *rec, uint64_t id);

/**
 * Adds txn id @p id to rec->undone (once; dropped past
 * DTXN_RECOVERY_MAX_VISIBLE): the recovery rolled the open txn back,
 * whatever its coordinator's struct dtxn_txn.decided says.
 */
void dtxn_recovery_note_undone(struct dtxn_recovery *rec, uint64_t id);

/**
 * Adds dead coordinator @p gid to rec->undone_open (once; dropped past
 * DTXN_RECOVERY_MAX_VISIBLE): the recovery found that nothing of its
 * open txn's decisive batch landed and rolled it back, without knowing
 * the txn's id (Scythe's ticket tables name coordinators only).
 * Not thread-safe: @p rec belongs to the one recovering coordinator.
 * @return true if @p gid was not noted before (the caller counts the txn
 *   once), false if it was.
 */
bool dtxn_recovery_note_undone_open(struct dtxn_recovery *rec, uint32_t gid);

struct dtxn_batch;
/**
 * Runs batch @p b (dtxn_batch_run()), releases its WRs and counts them
 * in rec->wrs. Coordinator's coroutine; yields.
 * @return 0 or -EIO.
 */
int dtxn_recovery_run(struct dtxn_recovery *rec, struct dtxn_batch *b);

/**
 * READs every replica of the slot at primary address @p slot of table
 * @p t into @p buf (replica r at buf + r * t->slot_size; t->n_replicas *
 * slot_size bytes), in one batch, counted in rec->wrs: what a recovery
 * compares before it copies a dead txn's record image from a replica its
 * commit reached to those it missed (Motor's and Scythe's roll-forward).
 * Coordinator's coroutine; yields.
 * @return 0 or -EIO.
 */
int dtxn_recovery_read_replicas(struct dtxn_coord *c, struct dtxn_recovery *rec,
				const struct dtxn_table *t, dtxn_raddr_t slot, void *buf);

/**
 * For a primary bucket @p raddr of table @p t whose header lock a dead
 * txn X holds (so nobody else changes its version): READs the header
 * words past the lock (version, and the reclaimed watermark where the
 * header has one: up to 16 B) of every replica, and if a backup's
 * version is newer than the primary's (X's commit reached that backup's
 * MN, not the primary's: a CN killed between two doorbells), WRITEs that
 * backup's words to the primary. Counted in rec->wrs. Motor's and
 * Scythe's roll-forward of a torn insert or delete. Coordinator's
 * coroutine; yields.
 * @return 0 or -EIO.
 */
int dtxn_recovery_bucket_words(struct dtxn_coord *c, struct dtxn_recovery *rec,
			       const struct dtxn_table *t, dtxn_raddr_t raddr);

/** Registers a protocol at start-up. */
#define DTXN_CC_REGISTER(nm, ops) \
	RTE_INIT(dtxn_cc_register_##nm) { (void)dtxn_cc_register(ops); }

/**
 * True if the db runs with planted defect @p flag (DTXN_DEBUG_*, a test
 * aid). Guard the defect's few lines with it; off, it costs one load and
 * a predicted branch. Any lcore.
 */
static inline bool
dtxn_txn_weakened(const struct dtxn_txn *t, uint32_t flag)
{
	return unlikely((t->coord->worker->db->conf.debug_flags & flag) != 0);
}

/**
 * True if @p t runs on a CN where crash point @p flag
 * (DTXN_DEBUG_CRASH_MID_COMMIT, DTXN_DEBUG_CRASH_UNLOCKED) applies (a
 * test aid: dtxn_db_conf.debug_crash_cns). Any lcore.
 */
static inline bool
dtxn_txn_crash_point(const struct dtxn_txn *t, uint32_t flag)
{
	const struct dtxn_db *db = t->coord->worker->db;

	return unlikely((db->conf.debug_flags & flag) != 0) &&
	       ((db->conf.debug_crash_cns >> t->coord->worker->cn_node) & 1);
}

/**
 * Parks coordinator @p c for good where it is, its transaction open and
 * its locks held, as if its CN had died there: it posts nothing more and
 * records no outcome (the crash points of DTXN_DEBUG_CRASH_MID_COMMIT; a
 * fenced CN's coordinators, lease.c). Never returns: the CN is killed (or
 * its process exits) while it sleeps. Coordinator's coroutine.
 */
void dtxn_coord_park(struct dtxn_coord *c) __attribute__((noreturn));

/**
 * The transaction of coordinator @p c can be neither committed nor
 * undone: a mutating batch of its commit landed (its writes are in MN
 * memory: Lotus's INVISIBLE cells) and a later one, the commit's or the
 * undo's, could not be posted or failed. Reporting it aborted would
 * leave those writes in memory with no recovery to come, since the CN
 * lives on (doc/guides/testing.md, "Unfinished commits"). So the CN
 * fences itself (struct dtxn_lease_gate.fenced =
 * DTXN_LEASE_FENCED_UNFINISHED: no mutating WR of any of its coordinators
 * leaves any more; the app exits APP_EXIT_FENCED) and @p c parks for good
 * (dtxn_coord_park()), its transaction open, as if the CN had died there:
 * its recoverer decides the transaction from its log, as for a dead CN.
 * Without a lease gate (one process, --role all, where only a lost MN or
 * a simulated kill refuses a post, and the run ends on either), or when
 * its worker has lost an MN (dtxn_worker_lost_nodes(): the run ends on
 * that, exit 3), it parks only. Never returns. Coordinator's coroutine.
 */
void dtxn_coord_unfinished(struct dtxn_coord *c) __attribute__((noreturn));

/* ------------------------------------------------------------------ */
/* Shared steps                                                       */
/* ------------------------------------------------------------------ */

/**
 * Allocates @p len bytes (8-byte aligned) from the coordinator's scratch
 * arena; freed all at once by the next begin.
 * @return the buffer, or NULL if the arena is exhausted (callers abort
 *   with DTXN_ABORT_TOO_LARGE).
 */
void *dtxn_txn_alloc(struct dtxn_txn *t, size_t len);

/**
 * A doorbell batch: WRs gathered per MN, posted with one doorbell per QP,
 * then waited for together (one round trip for the whole batch).
 */
struct dtxn_batch {
	struct dtxn_coord *coord;
	/** Chain of each MN, by MN id (< DTXN_MASK_NODES), valid only for the
	 *  MNs in mn_mask (dtxn_batch_init() clears the mask, not these 1 KiB:
	 *  it runs several times per txn). */
	struct dtxn_wr *head[DTXN_MASK_NODES];
	struct dtxn_wr *tail[DTXN_MASK_NODES];
	unsigned n_wr;           /**< WRs taken from the coordinator's pool */
	unsigned first;          /**< the pool index of the first of them (valid when n_wr > 0) */
	unsigned n_signaled;
	uint64_t mn_mask;        /**< MNs with WRs */
	int error;               /**< -ENOBUFS if the WR pool ran out */
	unsigned n_mut;          /**< WRs that change MN memory (all but READs): the lease gate holds those */
	uint64_t sig_mask;       /**< MNs whose chain has a WR the protocol asked to be signaled */
	/** selective signaling (dtxn_fabric_selective_signaling()): MNs whose
	 *  chain's last WR so far was asked to be signaled */
	uint64_t tail_sig;
	/** the protocol's WRs by opcode and their bytes (commit records left
	 *  out), counted as they are added: dtxn_coord_verbs() once posted */
	uint32_t ops[DTXN_WR_OP_MAX];
	uint64_t bytes;
};

/** Starts an empty batch (head[] and tail[] stay as they were: see mn_mask). */
void dtxn_batch_init(struct dtxn_batch *b, struct dtxn_coord *c);

/**
 * Appends a WR to the batch of raddr's MN, in order. Signaled WRs complete
 * to the coordinator. Inline is chosen for WRITEs up to DTXN_WR_INLINE_MAX.
 * On pool exhaustion, sets b->error and the batch will fail to post.
 */
void dtxn_batch_read(struct dtxn_batch *b, dtxn_raddr_t src, void *dst, uint32_t len,
		     bool signaled);
void dtxn_batch_write(struct dtxn_batch *b, dtxn_raddr_t dst, const void *src,
		      uint32_t len, bool signaled);
/** CAS on the 8-byte word at @p dst; old value to @p old (8 B). */
void dtxn_batch_cas(struct dtxn_batch *b, dtxn_raddr_t dst, uint64_t *old,
		    uint64_t compare, uint64_t swap, bool signaled);
/**
 * Masked CAS on the 8-byte word at @p dst (DTXN_WR_MASKED_CAS, the mlx5
 * extended atomic): if (word & @p compare_mask) == (@p compare &
 * @p compare_mask) the word becomes (word & ~@p swap_mask) | (@p swap &
 * @p swap_mask); the old word goes to @p old (8 B) either way.
 */
void dtxn_batch_masked_cas(struct dtxn_batch *b, dtxn_raddr_t dst, uint64_t *old,
			   uint64_t compare, uint64_t compare_mask, uint64_t swap,
			   uint64_t swap_mask, bool signaled);
/** FAA on the 8-byte word at @p dst; old value to @p old (8 B). */
void dtxn_batch_faa(struct dtxn_batch *b, dtxn_raddr_t dst, uint64_t *old,
		    uint64_t add, bool signaled);

/**
 * Posts every MN's chain with one doorbell per QP; does not wait. If the
 * batch has no signaled WR on a QP that has WRs, the last WR on it is made
 * signaled (so WR buffers are reclaimed in order); its completion is
 * counted against the coordinator and absorbed by its next wait.
 * Unsignaled WRs carry wr_id = coroutine | 1, so an error completion of
 * one is logged and never counted against the coordinator. Where the
 * fabric allows it (dtxn_fabric_selective_signaling(): not sim), a chain
 * whose last WR was asked to be signaled is signaled by that WR alone:
 * the chain's other WRs asked to be signaled complete only if they fail,
 * and then give their error to the coordinator's next wait without being
 * counted (wr_id = coroutine | 2); what a wait returns is the same.
 * @return 0; b->error (-ENOBUFS pool exhausted, -EINVAL no QP to that MN:
 *   nothing posted); or a dtxn_qp_post() error: QPs before the refusing
 *   one are posted and the coordinator's count stays balanced.
 */
int dtxn_batch_post(struct dtxn_batch *b);

/**
 * dtxn_batch_post() then yields until every signaled WR has completed.
 * @return 0, or -EIO if a WR completed with an error, or a post error.
 */
int dtxn_batch_run(struct dtxn_batch *b);

/** Releases the batch's WRs to the pool (after they completed). */
void dtxn_batch_done(struct dtxn_batch *b);

/* ------------------------------------------------------------------ */
/* False aborts of record-level protocols (false_abort.c)             */
/* ------------------------------------------------------------------ */

/** dtxn_txn.false_conflict: every conflict classified so far was false. */
#define DTXN_FA_FALSE 1
/** dtxn_txn.false_conflict: a conflict was true (a cell-level protocol aborts too). */
#define DTXN_FA_TRUE 2

struct dtxn_fa_table;

/**
 * Creates the side table of lock takers' cells (FORD, Motor; CREST paper
 * Fig. 3): per record (direct-mapped by slot address, 16,384 entries of
 * 128 B = 2 MiB), the last 8 takers of its lock as (txn id, cells written).
 * In this process's memory, or a memzone shared by the processes of a
 * multi-process shm cluster. Measurement only: no protocol decision reads
 * it. Called by dtxn_db_attach() for protocols with dtxn_cc_ops.false_aborts.
 * @return the table, or NULL with rte_errno ENOTSUP (a fabric other than
 *   shm and sim: the CNs share no memory; nothing is classified) or ENOMEM.
 *   Control thread.
 */
struct dtxn_fa_table *dtxn_fa_create(const struct dtxn_db *db);
/** Frees @p fa (NULL: nothing); a shared memzone stays. Control thread, after the workers. */
void dtxn_fa_destroy(struct dtxn_fa_table *fa);
/**
 * Records that txn @p id took the lock of the record at slot address
 * @p raddr to write cells @p cells (its lock CAS returned 0; call before
 * it writes). Takers of one record are serialised by its lock, so they
 * are recorded in lock order. Nothing if @p fa is NULL. Any lcore; does
 * not yield (a few ns, spinning only while a taker of another record
 * mapped to the same entry writes it; a writer that held the entry for
 * 2^20 pauses, a CN process killed inside, is taken over: a shm
 * cluster's CN processes share the table).
 */
void dtxn_fa_append(struct dtxn_fa_table *fa, dtxn_raddr_t raddr, uint64_t id, uint32_t cells);

/**
 * Test aid: the seqlock word of the entry @p raddr maps to (odd while a
 * writer holds it), so that a test can leave it as a writer killed
 * inside dtxn_fa_append() does.
 * @return a pointer into the table, NULL if @p fa is NULL or @p raddr 0.
 */
uint32_t *dtxn_fa_seq_of(struct dtxn_fa_table *fa, dtxn_raddr_t raddr);
/**
 * The cells txn @p id took the lock of record @p raddr for.
 * @return 0 with *@p cells, or -ENOENT: not among the record's last 8
 *   takers (or @p fa NULL, @p id 0, the entry busy or held by another
 *   record). Any lcore.
 */
int dtxn_fa_cells(const struct dtxn_fa_table *fa, dtxn_raddr_t raddr, uint64_t id,
		  uint32_t *cells);
/**
 * The union of the cells written by the takers of record @p raddr after
 * txn @p seen, up to and including txn @p now (FORD: the version read,
 * and the version found at validation).
 * @return 0 with *@p cells, or -ENOENT: @p now or @p seen before it not
 *   among the last 8 takers (or as dtxn_fa_cells(); @p seen == @p now,
 *   either 0). Any lcore.
 */
int dtxn_fa_cells_since(const struct dtxn_fa_table *fa, dtxn_raddr_t raddr, uint64_t seen,
			uint64_t now, uint32_t *cells);
/**
 * Item @p it's lock was taken by @p t (lib/txn's lock round, whole-word
 * CAS): records @p t's written cells (all for a delete or insert).
 * Coordinator's lcore.
 */
void dtxn_fa_locked(struct dtxn_txn *t, const struct dtxn_item *it);
/**
 * Adds one conflict's verdict to @p t->false_conflict: false
 * (@p is_false; a cell-level protocol would not have aborted on it) or
 * true. The txn's abort is false only if every conflict classified was.
 * Coordinator's lcore.
 */
void dtxn_fa_verdict(struct dtxn_txn *t, bool is_false);
/**
 * A step (an item's locating step, an execute, a commit) that began at
 * @p before = @p t->fa_verdicts ended with @p rc: if it failed without a
 * verdict, its failure counts as a true conflict (protocols with
 * dtxn_cc_ops.false_aborts only), so an unclassified conflict never
 * leaves an earlier false verdict standing. Coordinator's lcore.
 */
void dtxn_fa_step(struct dtxn_txn *t, uint16_t before, int rc);
/** dtxn_fa_step() from the start of the current execute or commit (@p t->fa_mark); lib/txn. */
void dtxn_fa_settle(struct dtxn_txn *t, int rc);
/**
 * Verdict on a conflict of item @p it with lock holder (or version
 * writer) @p holder: false iff the holder's cells are known and miss
 * every cell @p it reads or writes. Coordinator's lcore.
 */
void dtxn_fa_holder(struct dtxn_txn *t, const struct dtxn_item *it, uint64_t holder);
/**
 * Verdict on a validation of item @p it that read version @p seen and
 * found version @p now (versions = writer txn ids, FORD): false iff the
 * cells of every writer in between are known and miss every cell @p it
 * reads. Coordinator's lcore.
 */
void dtxn_fa_writers(struct dtxn_txn *t, const struct dtxn_item *it, uint64_t seen,
		     uint64_t now);

/* ------------------------------------------------------------------ */
/* Steps protocols share (steps.c): FORD and Motor use them           */
/* ------------------------------------------------------------------ */

/**
 * An area of table @p tab's delta heap (dtxn_cc_ops.table_delta;
 * doc/guides/store.md "Delta heaps") for txn @p t: one its coordinator
 * was given back, else the next of its chunk; when the chunk is used up,
 * a new one of cat->aux_chunk areas with one FAA on the heap's bump word
 * on the primary (one round trip: yields). With several stripes
 * (DTXN_PLACEMENT_KEY) the area is in the heap of the stripe of @p at,
 * the row's primary slot address, and each stripe has its own chunk.
 * The protocol names the area in its record (Lotus: the cells' Address)
 * in the write that first uses it; an area once written is the record's for good, and one whose
 * write is never posted goes back with dtxn_txn_delta_put(). Calling
 * coordinator's coroutine.
 *
 * @param at the row's primary slot address (its stripe's heap).
 * @param n  out: the area's number, 1..tab->delta_areas
 *           (dtxn_store_heap_area_raddr(tab, DTXN_HEAP_DELTA, r, at, n)).
 * @return DTXN_OK; DTXN_ABORT(DTXN_ABORT_DELTA_FULL) when the heap is
 *   used up or the table has none (nothing was written);
 *   DTXN_ABORT_TOO_LARGE (arena or WR pool), DTXN_ABORT_FABRIC (the FAA
 *   failed) as dtxn_batch_run_reason().
 */
int dtxn_txn_delta_take(struct dtxn_txn *t, const struct dtxn_table *tab, dtxn_raddr_t at,
			uint32_t *n);

/**
 * Gives delta area @p n of @p tab, taken by dtxn_txn_delta_take() and
 * never written, back to @p t's coordinator (a later take returns it).
 * Calling coordinator's coroutine; no WR.
 */
void dtxn_txn_delta_put(struct dtxn_txn *t, const struct dtxn_table *tab, dtxn_raddr_t at,
			uint32_t n);

/**
 * The commit of insert item @p it of @p t is about to post, in batch
 * @p b, the slot header that names its new aux area
 * (DTXN_ITEM_F_AUX_NEW; doc/guides/store.md "Aux areas"): from then on
 * the area is the slot's for good, even if the txn aborts after (a
 * protocol's undo clears the versions, not the header, and a later
 * re-insert of the key writes its record there), so the end of an
 * aborted txn no longer gives it back to the coordinator. With
 * dtxn_loc_ops.aux_share, an area at or past what the coordinator's
 * share word records adds to @p b one unsignaled 8-byte WRITE of that
 * word on the heap's primary (the area plus a chunk of --aux-chunk
 * areas), so that a restarted incarnation of the coordinator never hands
 * out an area a row of its dead one holds. For a protocol whose commit
 * can still abort once its insert's slot was written (Lotus: INVISIBLE
 * cells, then T_commit and, with locks=mn, SR validation). No-op for an
 * item without a new area. Calling coordinator's coroutine; call before
 * @p b is run.
 */
void dtxn_txn_aux_keep(struct dtxn_txn *t, struct dtxn_item *it, struct dtxn_batch *b);

/**
 * dtxn_batch_run() then dtxn_batch_done(), with the error turned into an
 * abort reason. Yields (calling coordinator's coroutine).
 * @return DTXN_OK, DTXN_ABORT_TOO_LARGE (the WR pool ran out) or
 *   DTXN_ABORT_FABRIC (a WR failed, or the post was refused).
 */
int dtxn_batch_run_reason(struct dtxn_batch *b);

/**
 * dtxn_batch_run_reason() for the batch whose WRs commit @p t whatever
 * happens to its coordinator next (CREST's write-back, FORD's and
 * Lotus's write rounds):
 * sets t->decided once every chain is posted, not before (in virtual
 * time the post first waits out the CPU that builds it, and a CN killed
 * meanwhile posts nothing); a recovery that rolls the txn back all the
 * same lists it in struct dtxn_recovery.undone, which wins. Yields.
 * @return as dtxn_batch_run_reason().
 */
int dtxn_batch_run_decide(struct dtxn_batch *b, struct dtxn_txn *t);

/**
 * dtxn_batch_run_decide() where posted WRs survive their CN
 * (dtxn_fabric_posted_survives(): RNICs, shm, the sim without
 * --fault-drop). Where they may die with it (ucx over TCP, the sim with
 * --fault-drop), t->decided is set only once every chain completed: a
 * CN killed before that may have lost the batch on every MN, leaving
 * nothing of the txn in MN memory, and must not be counted committed.
 * For a protocol whose recovery lists a txn whose batch landed somewhere
 * in struct dtxn_recovery.visible (CREST: the newest redo entry, which
 * goes first in each MN's chain; doc/guides/crest.md "Recovery"), so a
 * batch that landed and was not acknowledged still counts. Yields.
 * @return as dtxn_batch_run_reason().
 */
int dtxn_batch_run_decide_acked(struct dtxn_batch *b, struct dtxn_txn *t);

/**
 * dtxn_batch_run_decide(), but t->decided is set before the first chain
 * is posted (once the CPU that builds them is spent; no yield between),
 * and cleared if a post is refused. For a commit batch whose chains to
 * several MNs each complete part of the txn, under a recovery that lists
 * every txn it rolls back in struct dtxn_recovery.undone (Motor's commit
 * batch, OOCC's R3; Scythe's write-back, whose recovery completes a torn
 * one from its write-back marks and rolls back one killed before any
 * doorbell by its coordinator, struct dtxn_recovery.undone_open:
 * doc/guides/scythe.md "Recovery"): a process killed between two chains' doorbells leaves the
 * first chains applied (and their records unlocked, so survivors may
 * overwrite the txn's versions before a recovery looks), and is then
 * counted committed, as the recovery's roll-forward makes it or as its
 * applied part already is; one killed before the first doorbell still
 * holds its locks, and its recovery lists it undone. Yields.
 * @return as dtxn_batch_run_reason().
 */
int dtxn_batch_run_decide_early(struct dtxn_batch *b, struct dtxn_txn *t);

/**
 * The abort reason for the return code of a fabric step: a doorbell batch
 * (dtxn_batch_run(), dtxn_batch_post()) or a call built on one (lib/tso's
 * timestamps). Every protocol maps errors this way. Any thread.
 * @return DTXN_OK for 0, DTXN_ABORT_TOO_LARGE for -ENOBUFS (the WR pool
 *   ran out), DTXN_ABORT_FABRIC for any other error (a WR failed, the post
 *   was refused).
 */
int dtxn_batch_reason(int rc);

/**
 * Posts a fire-and-forget batch (unlocks): no wait; the WRs go back to the
 * pool at once (the fabric copied them). A refused post is logged with
 * @p what and the txn id. An empty batch is a no-op.
 */
void dtxn_batch_post_forget(struct dtxn_batch *b, const struct dtxn_txn *t, const char *what);

/**
 * Adds, to @p b, an unsignaled WRITE of 0 to every lock the txn holds
 * (an unsignaled masked CAS clearing item->lock_bits for an item that
 * took only those bits):
 * item->lock_raddr of each DTXN_ITEM_F_LOCKED item and item->block_raddr
 * of each DTXN_ITEM_F_BLOCKED item (a lock is held only when its CAS
 * returned 0; FORD's and Motor's public code release locks they never
 * got), and clears those flags.
 */
void dtxn_txn_unlock_held(struct dtxn_txn *t, struct dtxn_batch *b);

/**
 * Sets a new item up for execute: allocates @p size zeroed bytes of
 * protocol state from the arena (kept in it->cc[0]) and, unless it is an
 * insert, looks its primary slot up in the worker's address cache; on a
 * hit sets DTXN_ITEM_F_CACHED, slot_raddr and bucket_raddr.
 * @return the state, or NULL when the arena is exhausted (abort with
 *   DTXN_ABORT_TOO_LARGE).
 */
void *dtxn_txn_item_prepare(struct dtxn_txn *t, struct dtxn_item *it, size_t size);

/**
 * Gives back the record lock item @p it holds (DTXN_ITEM_F_LOCKED at
 * it->lock_raddr), at once, fire-and-forget; e.g. a lock taken through a
 * stale cached address before the key is looked up again. No-op if the
 * item holds none.
 */
void dtxn_txn_unlock_item(struct dtxn_txn *t, struct dtxn_item *it);

/**
 * Releases every lock the txn holds: dtxn_txn_unlock_held() in a batch of
 * its own, posted fire-and-forget (no wait). Coordinator's coroutine.
 */
void dtxn_txn_release_held(struct dtxn_txn *t);

/**
 * The image of item @p it's local slot copy for its backups: it->slot
 * itself with a single replica, else a copy from the txn's arena whose
 * 8 B word at @p lock_off holds @p lock (the backups' lock word; locks are
 * taken on the primary only).
 * @return the image, or NULL when the arena is exhausted (abort with
 *   DTXN_ABORT_TOO_LARGE).
 */
void *dtxn_txn_backup_image(struct dtxn_txn *t, const struct dtxn_item *it, uint32_t lock_off,
			    uint64_t lock);

/** True if the item writes (RW, insert, delete). */
static inline bool
dtxn_item_writes(const struct dtxn_item *it)
{
	return it->kind != DTXN_ITEM_RO;
}

/** True if any item of @p t writes: a read-write txn (dtxn_item_writes()). Any thread. */
static inline bool
dtxn_txn_writes(const struct dtxn_txn *t)
{
	for (uint32_t i = 0; i < t->n_items; i++)
		if (dtxn_item_writes(&t->items[i]))
			return true;
	return false;
}

/** True if the lock word value @p lock is held by another txn than @p t (0: free). */
static inline bool
dtxn_txn_lock_foreign(const struct dtxn_txn *t, uint64_t lock)
{
	return lock != 0 && lock != t->id;
}

/** The isolation level the txn's db runs at. */
static inline enum dtxn_isolation
dtxn_txn_isolation(const struct dtxn_txn *t)
{
	return t->coord->worker->db->conf.isolation;
}

/** One item's steps in a phase of several rounds (dtxn_txn_rounds()). */
struct dtxn_round_ops {
	/** Optional: WRs that lead each round (e.g. a log record); DTXN_OK or a reason. */
	int (*prelude)(struct dtxn_txn *t, struct dtxn_batch *b);
	/** True once item @p i needs no more WRs. */
	bool (*done)(const struct dtxn_txn *t, uint32_t i);
	/** Adds item @p i's WRs for this round to @p b; DTXN_OK or a reason. */
	int (*issue)(struct dtxn_txn *t, uint32_t i, struct dtxn_batch *b);
	/**
	 * Optional: whether item @p i's WRs go ahead of the others' in each
	 * round (each MN's chain takes effect in order). NULL: item order.
	 */
	bool (*first)(const struct dtxn_txn *t, uint32_t i);
	/** Reads item @p i's results after a round (called for every item); DTXN_OK or a reason. */
	int (*complete)(struct dtxn_txn *t, uint32_t i);
};

/**
 * Runs the rounds of an execution phase over items[t->n_fetched ..
 * t->n_items): each round is one doorbell batch with every unfinished
 * item's WRs (one round trip), then every item's complete(); until a
 * round has no WR or an abort reason comes up. A round whose building
 * failed is still posted and completed, so that CAS results say which
 * locks are held. Releases nothing. Coordinator's coroutine; yields.
 * @return DTXN_OK or the first abort reason.
 */
int dtxn_txn_rounds(struct dtxn_txn *t, const struct dtxn_round_ops *ops);

/**
 * Adds to @p b an unsignaled WRITE of @p len bytes from @p src at the
 * primary address @p primary of table @p tab and at the same place on
 * every backup (dtxn_store_replica_raddr()), primary first.
 */
void dtxn_batch_write_replicas(struct dtxn_batch *b, const struct dtxn_table *tab,
			       dtxn_raddr_t primary, const void *src, uint32_t len);

/* ------------------------------------------------------------------ */
/* Log records (log.c)                                                */
/* ------------------------------------------------------------------ */

/** Log record header, followed by n_entries entries (struct dtxn_log_entry + slot image). */
struct dtxn_log_hdr {
	uint64_t txn_id;   /**< the txn; 0 in a record voided after an abort */
	uint32_t n_entries;
	uint32_t bytes;    /**< whole record, bytes (multiple of 64) */
	/**
	 * CRC32-C of the record after this header, seeded with the fields
	 * above (dtxn_txn_log_intact()): a WRITE cut short by its CN's death
	 * (the shm fabric copies on the posting CPU; a SIGKILLed process may
	 * stop mid-copy) leaves a record that fails it.
	 */
	uint32_t crc;
	uint32_t rsvd;
};

/** Log entry, followed by slot_size bytes: the slot image. */
struct dtxn_log_entry {
	uint32_t table_id;
	uint32_t slot_size;
	uint64_t key;
	uint64_t raddr;    /**< primary slot address */
};

/** The slot image a log record keeps for written item @p it (table slot_size bytes). */
typedef const void *(*dtxn_log_image_fn)(const struct dtxn_txn *t, const struct dtxn_item *it);

/**
 * Builds, in the txn's arena, the log record of every written item (RW,
 * insert, delete) of @p t: header, then per item an entry and the image
 * @p image gives (undo: before the txn; redo: after it), padded to 64 B.
 * Coordinator's lcore; no fabric op.
 * @param recp     out: the record (arena memory, valid until the next begin).
 * @param mn_mask  out: bit i set for each MN holding a replica of a written table.
 * @return the record's bytes; 0 (nothing written; *recp untouched); or
 *   -E2BIG (larger than the catalog's log_bytes, or the arena is exhausted).
 */
int64_t dtxn_txn_log_build(struct dtxn_txn *t, dtxn_log_image_fn image, void **recp,
			   uint64_t *mn_mask);

/**
 * Whether log record @p h (its @c bytes, already bounds-checked by the
 * caller) is whole: its crc matches its contents (a record torn by its
 * writer's death does not). Any lcore; no fabric op.
 * @return true if intact.
 */
bool dtxn_txn_log_intact(const struct dtxn_log_hdr *h);

/**
 * Adds to @p b a signaled WRITE of record @p rec (@p bytes, at most the
 * catalog's log_bytes) to the coordinator's log region on every MN of
 * @p mn_mask, at offset *@p head (0 when the record would pass the
 * region's end: a circular log), and advances *@p head past it.
 * @return the offset the record is written at.
 */
uint64_t dtxn_txn_log_write(struct dtxn_txn *t, struct dtxn_batch *b, const void *rec,
			    uint32_t bytes, uint64_t mn_mask, uint64_t *head);

/* ------------------------------------------------------------------ */
/* Locating items in the hash index (locate.c)                        */
/* ------------------------------------------------------------------ */

/*
 * How an execution phase finds an item's slot on its primary MN, the same
 * for every protocol that keeps its records in lib/store's hash index
 * (FORD, Motor, Lotus): READ the slot at a cached address and check its
 * header, else READ the key's home bucket and its overflow buckets; CAS
 * the record lock and READ the slot (one round); for an insert, CAS the
 * home bucket's lock (shared by the txn's inserts and deletes in that
 * bucket), READ the bucket (in a direct-indexed table, once per round for
 * the txn's inserts into it: TPC-C's order lines, CREST's artifact's
 * BucketAlreadyRead()), take a free slot no other insert of the txn
 * took and check the key is in no bucket of its chain. A protocol that
 * locks on the CNs (Lotus, dtxn_loc_ops.cn_locks) takes its locks before
 * and skips the CASes. A protocol keeps a struct dtxn_loc at the start of
 * its per-item state and says, in a struct dtxn_loc_ops, what differs:
 * where its lock word is, which free slots are usable, what to do with a
 * slot once read or locked, and its own further steps (e.g. reading a
 * value elsewhere). Everything here runs on the coordinator's lcore,
 * inside dtxn_txn_rounds(); nothing blocks.
 */

/**
 * Adds to @p b a READ of probe @p probe of @p it's bucket chain (the home
 * bucket + probe, dtxn_store_bucket_raddr()) into it->bucket, allocated
 * from the txn's arena on first use (bucket_size bytes).
 * @param raddr  out: the bucket's primary address.
 * @return DTXN_OK or DTXN_ABORT_TOO_LARGE (arena exhausted; nothing added).
 */
int dtxn_txn_read_bucket(struct dtxn_txn *t, struct dtxn_item *it, unsigned probe,
			 dtxn_raddr_t *raddr, struct dtxn_batch *b);

/**
 * A free slot (not DTXN_SLOT_VALID) of the bucket copy @p bucket, read
 * from it->bucket_raddr of item @p self, that no other insert item of the
 * txn has taken (its slot_raddr).
 * @return the slot index, or -ENOSPC.
 */
int dtxn_txn_free_slot(const struct dtxn_txn *t, uint32_t self, const void *bucket);

/**
 * Where an item is in locating it (struct dtxn_loc.step). A protocol
 * numbers its own steps from DTXN_LOC_PROTO; dtxn_loc_rounds() hands
 * those to dtxn_loc_ops.issue / .complete.
 */
enum dtxn_loc_step {
	DTXN_LOC_SLOT = 0,  /**< read item, cached address: READ the slot */
	DTXN_LOC_BKT,       /**< lookup: READ bucket probe @c probe of the key's chain */
	DTXN_LOC_LOCK,      /**< {CAS record lock 0 -> txn id, READ slot} + dtxn_loc_ops.lock_issue */
	DTXN_LOC_INS,       /**< insert: {CAS home bucket lock (unless shared), READ home bucket} */
	DTXN_LOC_INS_PROBE, /**< insert: READ overflow bucket @c probe (is the key there?) */
	DTXN_LOC_INS_AUX,   /**< insert: FAA the aux heap's bump word (a chunk of areas), or READ it (aux_share) */
	DTXN_LOC_DONE,      /**< nothing more to read or lock */
	DTXN_LOC_PROTO,     /**< the first protocol-defined step */
};

/** A CAS result before the CAS completed (no lock word holds it: txn ids are < 2^63). */
#define DTXN_LOC_CAS_UNSET UINT64_MAX

/**
 * An item's locating state: the first member of the protocol's per-item
 * state, which dtxn_loc_prepare() allocates from the txn's arena and keeps
 * in item->cc[0] (dtxn_loc_of()). Written by lib/txn and the protocol's
 * dtxn_loc_ops callbacks; read by the protocol's validation.
 */
struct dtxn_loc {
	uint8_t step;        /**< enum dtxn_loc_step, or a protocol step >= DTXN_LOC_PROTO */
	uint8_t inflight;    /**< WRs posted in the current round */
	uint8_t probe;       /**< bucket probe being read (0: the home bucket) */
	uint8_t n_bkt;       /**< read of a key in no bucket of its chain: buckets visited; else 0 */
	/**
	 * This item CASes its bucket lock (no other item of the txn does).
	 * With dtxn_loc_ops.cn_locks lib/txn neither sets nor reads it: the
	 * protocol's (Lotus: this insert takes its bucket's lock on a CN).
	 */
	uint8_t own_block;
	uint8_t release;     /**< stale slot: give back the locks taken on it in the next round */
	uint8_t retries;     /**< re-reads so far (dtxn_loc_reread()) */
	/** insert: slot_idx holds a deleted record of another key (ops->slot_reuse) */
	uint8_t reuse;
	int32_t slot_idx;    /**< insert: free slot taken in the home bucket, -1 none */
	/**
	 * Insert into a direct-indexed table (DTXN_TABLE_F_DIRECT_INDEX): 1 +
	 * the index of the earlier insert of the round whose READ of the same
	 * home bucket this one shares (its copy is taken at completion); 0:
	 * this one READs its bucket itself.
	 */
	uint32_t bkt_from;
	uint64_t lock_old;   /**< CAS result of the record lock (DTXN_LOC_CAS_UNSET before) */
	uint64_t block_old;  /**< CAS result of the bucket lock (DTXN_LOC_CAS_UNSET before) */
	uint64_t aux_old;    /**< DTXN_LOC_INS_AUX's FAA result or READ: areas handed out before */
	uint64_t aux_word;   /**< aux_share: DTXN_LOC_INS_AUX's READ of the coordinator's share word */
	dtxn_raddr_t braddr[DTXN_STORE_MAX_PROBE]; /**< primary address of each bucket read, by probe */
	uint64_t bver[DTXN_STORE_MAX_PROBE];       /**< their header versions, as read */
};

/**
 * What a protocol adds to locating. Callbacks run on the coordinator's
 * lcore, from dtxn_loc_prepare() / dtxn_loc_rounds(); @p i indexes
 * t->items; those returning int return DTXN_OK or an abort reason.
 * Callbacks that complete a step set the item's next step (loc->step).
 */
struct dtxn_loc_ops {
	/** Bytes of the protocol's per-item state, which begins with a struct dtxn_loc. */
	size_t item_size;
	/** Offset of the record lock word in a slot, bytes (8 B; 0 free, else the holder's txn id). */
	uint32_t lock_off;
	/**
	 * The record lock word is the slot's last 8 bytes (slot_size - 8), a
	 * footer written last by an in-order WRITE (OOCC §V, one-op
	 * write-unlock); lock_off is then unused.
	 */
	bool lock_last;
	/**
	 * In each round, the WRs of read items go ahead of the others' (a
	 * protocol that reads its read set before it locks its write set,
	 * as OOCC's Algorithm 1 prints it); else item order.
	 */
	bool reads_first;
	/**
	 * The protocol locks on the CNs (Lotus), not on the MNs: every item is
	 * located as a read item is (its slot READ and handed to ops->read, no
	 * lock round), and an insert READs its home bucket without CASing the
	 * bucket's lock (the protocol took the locks before the rounds).
	 * lock_off, lock_issue and locked are then unused, and struct
	 * dtxn_loc's own_block is the protocol's.
	 */
	bool cn_locks;
	/**
	 * Aux areas for inserts (doc/guides/store.md, "Aux areas") come from
	 * a fixed share of each table's heap per coordinator: the insert room
	 * (areas past the loaded rows, learnt by one READ of the heap's bump
	 * word, and below the last n_logs areas, the share words) split
	 * evenly between the cluster's coordinators, so that no MN atomic is
	 * needed (Lotus). A share word (READ with the bump word) records how
	 * far its coordinator handed the share out (dtxn_txn_aux_keep()),
	 * so that a restarted CN continues past its dead incarnation's rows.
	 * false: chunks taken by a FAA on the bump word (Motor). One mode
	 * per run.
	 */
	bool aux_share;
	/**
	 * Optional: whether RW item @p i, just found through its bucket chain
	 * (no cached address), is left unlocked: its slot copy goes to
	 * ops->read as a read item's does, and the protocol locks it later
	 * (FORD as published locks such items in its validation round,
	 * papers/ford.md §3). NULL: it is locked in the next round.
	 */
	bool (*defer_lock)(const struct dtxn_txn *t, uint32_t i);
	/**
	 * Optional: sets up the protocol's fields of new item @p i, after
	 * dtxn_loc_prepare() (state zeroed, first step chosen).
	 */
	void (*prepare)(struct dtxn_txn *t, uint32_t i);
	/**
	 * Optional: WRs that lead each round (dtxn_round_ops.prelude; e.g.
	 * Motor's operation log, with dtxn_loc_round_lock()).
	 */
	int (*prelude)(struct dtxn_txn *t, struct dtxn_batch *b);
	/**
	 * Optional: whether an insert may take a slot of a bucket copy that is
	 * not DTXN_SLOT_VALID (e.g. FORD: also unlocked). NULL: any such slot.
	 */
	bool (*slot_free)(const struct dtxn_table *tab, const void *slot);
	/**
	 * Free slots keep the header of the record last deleted from them
	 * (FORD's tombstones): an insert takes the free slot of its home
	 * bucket that still holds its own key before any other, and aborts
	 * DTXN_ABORT_LOCK_CONFLICT if slot_free refuses that one (so a key
	 * never leaves two deleted slots in its home bucket).
	 */
	bool own_free_first;
	/**
	 * Optional: whether an insert may take a slot of a bucket copy that is
	 * DTXN_SLOT_VALID but holds a deleted record of another key (Motor's
	 * slot reuse). Such a slot is taken only when the home bucket has no
	 * free one; loc->reuse is then set and, once the key is known to be
	 * absent from its chain, ops->ins_reuse picks the next step. NULL:
	 * valid slots are never taken.
	 */
	bool (*slot_reuse)(const struct dtxn_txn *t, const struct dtxn_table *tab,
			   const void *slot);
	/**
	 * Optional (mandatory with slot_reuse): insert @p i will take the
	 * reused slot loc->slot_idx of its home bucket (it->slot_raddr): set
	 * the next step (e.g. lock the slot's record, DTXN_LOC_LOCK).
	 */
	int (*ins_reuse)(struct dtxn_txn *t, uint32_t i);
	/**
	 * Read item @p i's (any item's, with cn_locks; an RW item's that
	 * defer_lock left unlocked) slot, holding its key,
	 * is in item->slot (READ at a cached address, or copied from the
	 * bucket it was found in): take what the item reads from it. Mandatory.
	 */
	int (*read)(struct dtxn_txn *t, uint32_t i);
	/**
	 * Optional: the lookup of item @p i did not find its key in the bucket
	 * copy item->bucket (probe loc->probe), before going on to the next
	 * probe or giving up (e.g. Motor notes a foreign lock on the home
	 * bucket, and checks its reclaim watermark). DTXN_OK or an abort reason.
	 */
	int (*miss)(struct dtxn_txn *t, uint32_t i);
	/**
	 * Optional: WRs that follow {CAS record lock, READ slot} in item @p i's
	 * lock round (e.g. FORD's delete: its bucket lock, dtxn_loc_block_cas();
	 * Motor: the value). Cannot fail: the CAS is already in @p b.
	 */
	void (*lock_issue)(struct dtxn_txn *t, uint32_t i, struct dtxn_batch *b);
	/**
	 * Item @p i's lock round came back: the record lock (and the bucket
	 * lock, if it CASed one) is held, and item->slot holds its key. Mandatory.
	 */
	int (*locked)(struct dtxn_txn *t, uint32_t i);
	/**
	 * Optional: insert @p i takes free slot loc->slot_idx of its home
	 * bucket, whose image (in the bucket copy) is @p slot.
	 */
	int (*ins_slot)(struct dtxn_txn *t, uint32_t i, const void *slot);
	/**
	 * Optional: insert @p i found its key in slot @p idx of the bucket
	 * copy item->bucket (probe loc->probe); e.g. Motor re-inserts over a
	 * tombstone. NULL: abort DTXN_ABORT_EXISTS.
	 */
	int (*ins_found)(struct dtxn_txn *t, uint32_t i, unsigned idx);
	/**
	 * WRs of a protocol step (>= DTXN_LOC_PROTO); on an abort reason, add
	 * none. Mandatory if the protocol has steps.
	 */
	int (*issue)(struct dtxn_txn *t, uint32_t i, struct dtxn_batch *b);
	/** Results of a protocol step. Mandatory if the protocol has steps. */
	int (*complete)(struct dtxn_txn *t, uint32_t i);
};

/** The locating state of an item set up by dtxn_loc_prepare(), NULL before. */
static inline struct dtxn_loc *
dtxn_loc_of(const struct dtxn_item *it)
{
	return (struct dtxn_loc *)(uintptr_t)it->cc[0];
}

/**
 * Sets a new item up for locating: dtxn_txn_item_prepare() (protocol state
 * of ops->item_size bytes, zeroed, in it->cc[0]; address-cache lookup),
 * then the first step: DTXN_LOC_SLOT (read item, or any with
 * ops->cn_locks) or DTXN_LOC_LOCK (RW, delete) at a cached address,
 * DTXN_LOC_BKT without one, DTXN_LOC_INS for an insert; then
 * ops->prepare. Coordinator's lcore, from the protocol's execute.
 * @return the state, or NULL when the arena is exhausted (abort with
 *   DTXN_ABORT_TOO_LARGE).
 */
void *dtxn_loc_prepare(struct dtxn_txn *t, uint32_t i, const struct dtxn_loc_ops *ops);

/**
 * Runs the rounds that locate items[t->n_fetched .. t->n_items), set up
 * by dtxn_loc_prepare(): dtxn_txn_rounds() with ops->prelude, each item's
 * WRs for its step, and its results read after each round, until every
 * item is DTXN_LOC_DONE or an abort reason comes up. Releases nothing.
 * Coordinator's coroutine; yields.
 *
 * Per round and item: first the locks taken on a stale slot are given
 * back (loc->release); a step >= DTXN_LOC_PROTO goes to ops->issue and
 * ops->complete. Lock flags follow the CAS results
 * (DTXN_ITEM_F_LOCKED / F_BLOCKED only when the CAS returned 0). A slot
 * whose header does not hold the key (stale cached address) is forgotten
 * in the address cache and looked up through its bucket; a key found
 * through its bucket is cached. A read of an absent key is not an abort:
 * it ends DTXN_LOC_DONE with DTXN_ITEM_F_EXISTS clear, loc->n_bkt buckets
 * visited (their versions in loc->bver) and bucket_raddr / bucket_version
 * of its home bucket.
 *
 * @return DTXN_OK, or the first abort reason: DTXN_ABORT_LOCK_CONFLICT (a
 *   lock CAS found another holder; no waiting), DTXN_ABORT_NOT_FOUND (RW
 *   or delete of an absent key), DTXN_ABORT_EXISTS (insert of a present
 *   key, ops->ins_found NULL), DTXN_ABORT_INDEX_FULL (no free slot in the
 *   home bucket), DTXN_ABORT_TOO_LARGE (arena or WR pool exhausted),
 *   DTXN_ABORT_FABRIC (a WR failed), or a callback's reason.
 */
int dtxn_loc_rounds(struct dtxn_txn *t, const struct dtxn_loc_ops *ops);

/**
 * A protocol's execution phase when it locates its items with lib/txn:
 * dtxn_loc_prepare() for items[t->n_fetched .. t->n_items), then
 * dtxn_loc_rounds(). Releases nothing (the protocol releases the locks
 * held on an abort). Coordinator's coroutine; yields.
 * @return DTXN_OK, DTXN_ABORT_TOO_LARGE (no arena for an item's state), or
 *   dtxn_loc_rounds()'s reason.
 */
int dtxn_loc_execute(struct dtxn_txn *t, const struct dtxn_loc_ops *ops);

/**
 * Item @p i, a lock-free read whose slot was torn or changing (a commit
 * was writing it), reads it again in the next round: at its address if it
 * has one (DTXN_LOC_SLOT), else through its bucket chain (DTXN_LOC_BKT).
 * Counts the re-reads in loc->retries. Coordinator's lcore.
 * @param max  re-reads allowed per item, at most UINT8_MAX - 1.
 * @return DTXN_OK, or DTXN_ABORT_INVISIBLE once the item was read again
 *   @p max times (the step is then left as it was).
 */
int dtxn_loc_reread(struct dtxn_txn *t, uint32_t i, unsigned max);

/** True once item @p i, set up by dtxn_loc_prepare(), is DTXN_LOC_DONE. */
bool dtxn_loc_done(const struct dtxn_txn *t, uint32_t i);

/**
 * True if another insert or delete item of the txn holds the lock of the
 * bucket at @p braddr, or CASes it in this round before item @p self (an
 * earlier item): then @p self shares that lock instead of CASing it again
 * (a txn never conflicts with itself). Items giving back a stale slot's
 * locks do not count.
 */
bool dtxn_loc_block_shared(const struct dtxn_txn *t, uint32_t self, dtxn_raddr_t braddr);

/**
 * Takes item @p i's bucket lock in this round: the lock word of the
 * bucket at item->bucket_raddr (item->block_raddr), CASed 0 -> txn id into
 * loc->block_old unless dtxn_loc_block_shared() (loc->own_block says
 * which). The round's results then set DTXN_ITEM_F_BLOCKED or abort.
 */
void dtxn_loc_block_cas(struct dtxn_txn *t, uint32_t i, struct dtxn_batch *b);

/**
 * A delete's extra WRs in its lock round (dtxn_loc_ops.lock_issue of FORD
 * and CREST): its bucket's lock (dtxn_loc_block_cas()) and a READ of the
 * bucket header into @p hdr (its version, which the commit bumps, is then
 * hdr->version). No-op for other item kinds.
 */
void dtxn_loc_delete_issue(struct dtxn_txn *t, uint32_t i, struct dtxn_batch *b,
			   struct dtxn_bucket_hdr *hdr);

/**
 * The lock word item @p i CASes first in the coming round of
 * dtxn_loc_rounds(): the record lock (DTXN_LOC_LOCK), or the home
 * bucket's lock for an insert (DTXN_LOC_INS) unless it shares it; 0 for
 * none. For an insert it decides the sharing (item->bucket_raddr,
 * block_raddr, loc->own_block) as the round will, so call it for the
 * items in order. For a log written ahead of the locks (Motor's operation
 * log, from dtxn_loc_ops.prelude).
 */
dtxn_raddr_t dtxn_loc_round_lock(struct dtxn_txn *t, uint32_t i, const struct dtxn_loc_ops *ops);

#ifdef __cplusplus
}
#endif
#endif /* DTXN_TXN_DRIVER_H */
