/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DTXN_MOTOR_PRIVATE_H
#define DTXN_MOTOR_PRIVATE_H

/**
 * @file
 * Motor (Zhang, Hua, Yang, OSDI'24): multi-versioning with consecutive
 * version tuples (CVTs) over one-sided verbs, SR and SI
 * (doc/guides/motor.md). Which file does what:
 * - motor.c: ops table, registration, shared state, per-worker TSO client
 *   (CN-side service by default, §5), per-coordinator op log buffer;
 * - options.c: the --cc-opts keys (tso, oplog);
 * - format.c: the record format (CVT in the slot, value package in the
 *   slot's aux area, attribute bar in the table's delta heap), loading,
 *   version choice,
 *   rebuilding an old version from pre-images (paper §4.1, §4.2, §4.4);
 * - gc.c: coordinator-active garbage collection: the new Vcell and its
 *   attribute-bar segment (§4.3);
 * - execute.c: execution phase, both rounds (Motor's callbacks to lib/txn's
 *   locating steps, dtxn_loc_execute()), and releasing held locks
 *   (§5.1 phase 1);
 * - validate.c: SR validation at T_commit and the snapshot recheck of
 *   reads that saw a lock (§5.1 phase 2, §5.2);
 * - commit.c: commit phase, one doorbell batch to every replica with the
 *   unlocks (§5.1 phase 3);
 * - oplog.c: the operation log for coordinator failures (§5.3), in CN
 *   memory (default) or in the coordinator's MN log regions;
 * - recover.c: CN crash recovery (the operation log, or the lock scan).
 */

#include <rte_common.h>
#include <rte_log.h>

#include "dtxn_rpc.h"
#include "dtxn_tso.h"
#include "dtxn_txn_driver.h"

extern int dtxn_motor_logtype;
#define MOTOR_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_##level, dtxn_motor_logtype, "dtxn.cc.motor: " fmt "\n", ##__VA_ARGS__)

/* ------------------------------------------------------------------ */
/* Record format                                                      */
/* ------------------------------------------------------------------ */

/** Versions per record when the table does not say (def.n_versions 0): KVS/TPC-C's 4. */
#define MOTOR_VNUM_DEFAULT 4
/** Fewest versions per record: one old version besides the newest. */
#define MOTOR_VNUM_MIN 2

/**
 * CVT header in the slot: [slot header 16 B: Key, TableID, aux][Lock].
 * The paper's VpkgPtr is the slot header's aux area number (lib/store,
 * "Aux areas"): the Vpkg, in an area of the table's aux heap taken at
 * load or by the slot's first insert (from the coordinator's chunk, the
 * paper's per-coordinator delta space), at the same place on every
 * replica. The paper's AttrBarPtr is that number too: the record's
 * attribute bar is the area of the table's delta heap numbered as its
 * Vpkg's (DTXN_TABLE_F_DELTA_BY_SLOT, lib/store "Delta heaps"), in use
 * once the slot header carries DTXN_SLOT_DELTA, which the row's first
 * update that keeps pre-images writes after them (commit.c); kept by the
 * slot for good (§4.2). No pointer in the CVT, no allocation at run time.
 */
#define MOTOR_LOCK_OFF 16
#define MOTOR_CELLS_OFF 24
/** The slot header's TableID, flags and aux (what the bar's first update rewrites). */
#define MOTOR_HDR_FLAGS_OFF 8
#define MOTOR_CELL_SIZE 24

/** Vcell flags. */
#define MOTOR_CELL_INSERT 0x1 /**< no version of the key precedes this one (new-key insert) */
#define MOTOR_CELL_TOMB 0x2   /**< the version is a deletion */

/** Bits of a Vcell's Writer: txn ids are below 2^56 (motor_db_init() bounds the coordinators). */
#define MOTOR_WRITER_BITS 56
/** Most coordinators: (gid + 1) must fit the writer bits above the sequence (DTXN_TXN_SEQ_BITS). */
#define MOTOR_MAX_COORDS ((1u << (MOTOR_WRITER_BITS - DTXN_TXN_SEQ_BITS)) - 2)
/** Largest attribute bar: StartOffset is 16 bits (the artifact's i16). */
#define MOTOR_ABS_MAX 65528u

/**
 * A version cell (Vcell), 24 B, the artifact's size (shared/papers/motor.md
 * §1: sa | valid | version | StartOffset i16 | bitmap | ea): anchors in its
 * first and last byte. dtxn adds the writer's txn id (for the history
 * checker) in 56 bits of the last word, whose top byte is VcellEA (x86-64
 * allocates bit-fields from the low bits: EA is byte 23, checked by
 * test_cell_layout), and the flags in the Valid byte.
 */
struct motor_cell {
	uint8_t sa;             /**< VcellSA */
	uint8_t valid : 1;
	uint8_t flags : 7;      /**< MOTOR_CELL_* */
	uint16_t start_off;     /**< StartOffset: its pre-images in the attribute bar (< 64 KiB) */
	uint32_t bitmap;        /**< columns this version changed (bit 0 = column 1) */
	uint64_t version;       /**< commit timestamp; 0: the version loaded before the run */
	uint64_t writer : MOTOR_WRITER_BITS; /**< txn id of the writer (0: loaded), for the history checker */
	uint64_t ea : 8;        /**< VcellEA */
};
_Static_assert(sizeof(struct motor_cell) == MOTOR_CELL_SIZE, "motor cell");

/** The CVT as it sits in a slot. */
struct motor_cvt {
	struct dtxn_slot_hdr hdr;   /**< TableID, Key (and the store's flags) */
	uint64_t lock;              /**< 0 free, else the holder's txn id */
	struct motor_cell cells[];  /**< VNum cells */
};
_Static_assert(sizeof(struct motor_cvt) == MOTOR_CELLS_OFF, "motor CVT header");
_Static_assert(offsetof(struct motor_cvt, lock) == MOTOR_LOCK_OFF, "motor lock");
_Static_assert(offsetof(struct motor_cvt, hdr.table_id) == MOTOR_HDR_FLAGS_OFF, "motor header");

/**
 * Value package (Vpkg), packed: [VpkgSA u8][value][VpkgEA u8], value_size + 2
 * bytes, in an aux area rounded up to 8 B (the paper's SA | value | EA;
 * before: 7 B of padding after SA and before EA, 16 B in all). A local
 * image starts MOTOR_VPKG_LOCAL_OFF bytes into an 8-aligned buffer, so the
 * value the application sees is 8-aligned.
 */
#define MOTOR_VPKG_VALUE_OFF 1
/** Where a Vpkg image starts in a local buffer: its value at offset 8. */
#define MOTOR_VPKG_LOCAL_OFF 7

/** "No version": the key did not exist at the snapshot (inserted later). */
#define MOTOR_V_NONE UINT64_MAX

static inline uint32_t
motor_vnum(const struct dtxn_table *t)
{
	return (t->slot_size - MOTOR_CELLS_OFF) / MOTOR_CELL_SIZE;
}

/** Bytes of a Vpkg (what a READ or WRITE of it moves): SA, value, EA. */
static inline uint32_t
motor_vpkg_size(const struct dtxn_table *t)
{
	return t->def.value_size + 2;
}

/** Bytes of a local buffer that holds a Vpkg image at MOTOR_VPKG_LOCAL_OFF,
 * rounded up to 8 (what follows it stays 8-aligned). */
static inline uint32_t
motor_vpkg_local_size(const struct dtxn_table *t)
{
	return RTE_ALIGN_CEIL(MOTOR_VPKG_LOCAL_OFF + motor_vpkg_size(t), 8);
}

/** Bytes of the pre-images of the columns in @p bitmap (lib/store's cells). */
static inline uint32_t
motor_seg_len(const struct dtxn_table *t, uint32_t bitmap)
{
	return dtxn_table_cells_bytes(&t->def, bitmap);
}

/** Attribute bar size (ABS), bytes: the table's delta area (0: no bar). */
static inline uint32_t
motor_abs(const struct dtxn_table *t)
{
	return t->delta_size;
}

static inline struct motor_cvt *
motor_cvt_of(void *slot)
{
	return (struct motor_cvt *)slot;
}

/** VpkgPtr of item @p it's record (primary address): its slot's aux area. */
static inline dtxn_raddr_t
motor_vpkg_raddr(const struct dtxn_item *it)
{
	return dtxn_store_aux_area_raddr(it->table, 0, it->slot_raddr, it->aux);
}

/**
 * The attribute bar of item @p it's record (primary address): the delta
 * area numbered as its Vpkg's (DTXN_TABLE_F_DELTA_BY_SLOT); 0 if the
 * table keeps no bar.
 */
static inline dtxn_raddr_t
motor_bar_raddr(const struct dtxn_item *it)
{
	return dtxn_store_heap_area_raddr(it->table, DTXN_HEAP_DELTA, 0, it->slot_raddr, it->aux);
}

/** The local Vpkg image that follows the local slot copy (its value
 * 8-aligned, MOTOR_VPKG_LOCAL_OFF). */
static inline uint8_t *
motor_local_vpkg(const struct dtxn_item *it)
{
	return (uint8_t *)it->slot + it->table->slot_size + MOTOR_VPKG_LOCAL_OFF;
}

/** The local attribute-bar image (pre-images land at their bar offsets),
 * after the Vpkg: dtxn_cc_ops.local_extra (motor_local_extra()). */
static inline uint8_t *
motor_local_bar(const struct dtxn_item *it)
{
	return (uint8_t *)it->slot + it->table->slot_size + motor_vpkg_local_size(it->table);
}

/** VpkgEA of a Vpkg image (VpkgSA is its first byte). */
static inline uint8_t
motor_vpkg_ea(const struct dtxn_table *t, const uint8_t *vpkg)
{
	return vpkg[motor_vpkg_size(t) - 1];
}

/** Result of choosing a version at a timestamp. */
enum motor_pick {
	MOTOR_PICK_FOUND = 0, /**< a version (which may be a tombstone) */
	MOTOR_PICK_ABSENT,    /**< the key was inserted after the timestamp */
	MOTOR_PICK_GONE,      /**< the version needed was garbage-collected */
};

/* format.c */
int motor_table_sizes(const struct dtxn_table_def *def, uint32_t *slot_size, uint32_t *aux_size);
/** dtxn_cc_ops.table_delta: ABS, the attribute bar's bytes (§4.2); 0: no bar. */
uint32_t motor_table_delta(const struct dtxn_table_def *def);
/** dtxn_cc_ops.local_extra: room for the bar's image after the local Vpkg. */
uint32_t motor_local_extra(const struct dtxn_table *t);
uint32_t motor_slot_size(uint32_t value_size);
void motor_slot_format(const struct dtxn_table *t, void *slot, const void *value, void *arg);
void *motor_slot_value(const struct dtxn_table *t, void *slot);
void *motor_mn_value(struct dtxn_db *db, const struct dtxn_table *t, void *mn_slot);
/** Common anchor of every cell of a CVT copy, or -1 if the copy is torn. */
int motor_cvt_anchor(const struct dtxn_table *t, const struct motor_cvt *cvt);
/** Index of the newest valid cell, or -1. */
int motor_cvt_newest(const struct dtxn_table *t, const struct motor_cvt *cvt);
/**
 * Chooses the version a reader at timestamp @p ts sees: the valid cell
 * with the largest version < ts (paper §5.1).
 * @param idx  out: the cell (MOTOR_PICK_FOUND).
 */
enum motor_pick motor_cvt_pick(const struct dtxn_table *t, const struct motor_cvt *cvt,
			       uint64_t ts, int *idx);
/** Identity of what a reader at @p ts sees: a version, MOTOR_V_NONE, or 0 with GONE. */
uint64_t motor_cvt_seen(const struct dtxn_table *t, const struct motor_cvt *cvt, uint64_t ts,
			enum motor_pick *res);
/** True if a valid cell holds a version > ts. */
bool motor_cvt_has_newer(const struct dtxn_table *t, const struct motor_cvt *cvt, uint64_t ts);
/**
 * False-abort verdict (lib/txn's false_abort.c) on a conflict of item
 * @p it with the versions of CVT @p cvt newer than @p after: false iff
 * each one's writer took the record's lock for cells that miss every cell
 * @p it reads or writes, and a version at or before @p after is still in
 * the CVT (so none newer was recycled). Coordinator's lcore.
 */
void motor_fa_newer(struct dtxn_txn *t, const struct dtxn_item *it, const struct motor_cvt *cvt,
		    uint64_t after);
/**
 * Rebuilds in @p out the value of the version in cell @p v0 from the
 * newest value @p newest and the pre-images in the local bar image of
 * every valid cell newer than it, applied newest first (paper §4.2).
 * Only cells whose bitmap meets @p cells (the reader's cell mask) are
 * applied (their segments are the only ones read, execute.c): the bytes
 * of the other columns are unspecified.
 */
void motor_rebuild(const struct dtxn_table *t, const struct motor_cvt *cvt, int v0,
		   uint32_t cells, const uint8_t *newest, const uint8_t *bar, uint8_t *out);

/* gc.c */
/**
 * Installs a new version in a CVT image (the copy read under the lock):
 * takes an empty Vcell or overwrites the oldest one, places the version's
 * pre-images after the newest version's in the attribute bar (wrapping to
 * its start), invalidates the versions that can no longer be rebuilt
 * because their pre-images were overwritten, and stamps every cell with
 * @p anchor (paper §4.3, §4.4).
 *
 * @param cells   in/out: the VNum cells.
 * @param cell    out: the cell taken.
 * @param start   out: where the pre-images go in the bar.
 * @return cells invalidated (besides the one overwritten).
 */
unsigned motor_gc_install(const struct dtxn_table *t, struct motor_cell *cells,
			  const struct motor_cell *nc, uint8_t anchor, unsigned *cell,
			  uint32_t *start);

/* ------------------------------------------------------------------ */
/* Protocol state                                                     */
/* ------------------------------------------------------------------ */

/**
 * Motor's own execute steps, after lib/txn's locating steps (enum
 * dtxn_loc_step: cached CVT, bucket chain, {CAS lock, READ CVT} with the
 * Vpkg when found through the bucket, inserts).
 */
enum motor_step {
	MOTOR_S_VPKG = DTXN_LOC_PROTO, /**< RW/delete, cached, locked: READ the Vpkg */
	MOTOR_S_VALUE,                 /**< RO: READ pre-images, then the Vpkg */
};

/** Re-reads of a record whose CVT or value changed under a lock-free read. */
#define MOTOR_READ_RETRIES 16
/** Rechecks of a snapshot read that saw a lock, before giving up. */
#define MOTOR_RECHECK_MAX 64
/** Pause between two rechecks, ns. */
#define MOTOR_RECHECK_PAUSE_NS 2000

/** Protocol state of one item, from the arena (item->cc[0]). */
struct motor_item {
	struct dtxn_loc loc;  /**< first: locating it (lib/txn, dtxn_loc_prepare()) */
	uint8_t sighted;      /**< read: saw another txn's lock (record or bucket) */
	uint8_t reinsert;     /**< insert over a tombstone: a new version of the CVT */
	uint8_t reuse;        /**< insert into the slot of another key's deleted record */
	int32_t cell;         /**< the cell chosen (V0), -1 none */
	uint64_t seen;        /**< identity of what was read (version, MOTOR_V_NONE) */
	uint64_t vbuf[DTXN_STORE_MAX_PROBE][2]; /**< validation: bucket lock, version */
	uint8_t *pre;         /**< written items: the value as read (pre-images come from it) */
	uint8_t *vpkg_in;     /**< re-insert: its old Vpkg (the app owns the local one) */
	void *cvt2;           /**< validation: the CVT re-read */
	/** insert: bucket header image written at commit {lock, version,
	 * reclaim watermark} (DTXN_TABLE_F_RECLAIM), the watermark as its home
	 * bucket showed it */
	uint64_t bimg[3];
	uint64_t tomb;        /**< reuse: the deletion version of the record replaced */
};

/** A read whose key is in no bucket of its chain (validated through the buckets). */
static inline bool
motor_absent_bkt(const struct motor_item *mi)
{
	return mi->loc.n_bkt != 0;
}

/** Txn scratch (dtxn_txn.cc). */
#define MOTOR_TS_START 0  /**< T_start, 0 until the first execute */
#define MOTOR_TS_COMMIT 1 /**< T_commit, 0 until commit */
#define MOTOR_TX_FLAGS 2
#define MOTOR_TX_SIGHTED 0x1 /**< a read saw a lock: recheck before a snapshot commit */

/** Where timestamps come from (option tso). */
enum motor_tso_kind {
	MOTOR_TSO_CN = 0,  /**< lib/tso's CN-side service on the first CN (§5; default) */
	MOTOR_TSO_MN = 1,  /**< FAA on MN 0's counter word, one per lib/tso group (Scythe §4.5) */
	MOTOR_TSO_MN_SINGLE = 2, /**< FAA on MN 0's counter word, one per timestamp (no group) */
};

/** Where the operation log goes (option oplog). */
enum motor_oplog_kind {
	MOTOR_OPLOG_CN = 0, /**< the coordinator's local buffer (§5.3; default where posted WRs survive their CN) */
	MOTOR_OPLOG_MN = 1, /**< WRITEs to the coordinator's log region on the MNs */
};

/** How a table's index maps keys to buckets (option index). */
enum motor_index_kind {
	MOTOR_INDEX_HASH = 0,   /**< lib/store's seeded hash (default) */
	MOTOR_INDEX_DIRECT = 1, /**< key id % buckets on dense-id tables (the artifact's kDirectFunc) */
};

/** Options (--cc-opts; options.c): the named choices one byte each, then the numbers. */
struct motor_opts {
	uint8_t tso;    /**< enum motor_tso_kind */
	uint8_t oplog;  /**< enum motor_oplog_kind */
	uint8_t index;  /**< enum motor_index_kind */
	uint8_t oplog_given; /**< oplog named in the options (else: the fabric's default, motor_db_init()) */
	uint32_t bucket_slots; /**< slots per bucket of every table, 1..256; 0: lib/store's default (8) */
};

/** RPC message type of the timestamp service (lib/tso's dtxn_tso_cn). */
#define MOTOR_RPC_TS 1

/** Shared state (db->cc_shared). */
struct motor_shared {
	struct motor_opts opts;
	struct dtxn_tso_cn *tso_cn; /**< tso=cn: the service on the first CN; else NULL */
	uint8_t *mn_value;          /**< motor_mn_value()'s 8-aligned copy (main lcore) */
	uint32_t mn_value_size;     /**< its bytes */
};

/** Per-worker state. */
struct motor_worker {
	struct dtxn_tso *tso;     /**< the worker's TSO client (lib/tso) */
	struct dtxn_rpc *rpc;     /**< tso=cn with several CNs: messages to the server CN */
};

/** Per-coordinator state. */
struct motor_coord {
	struct dtxn_tso_req req;  /**< its place in the TSO client's queue */
	struct dtxn_rpc_ep *ep;   /**< its rpc endpoint (tso=cn, several CNs), else NULL */
	/**
	 * oplog=cn: the operation log in the coordinator's memory (§5.3),
	 * oplog_cap bytes, rewritten from offset 0 by each txn that locks.
	 */
	uint8_t *oplog;
	uint32_t oplog_cap;
	uint32_t oplog_len;       /**< bytes of the current record (0: none yet) */
};

static inline const struct motor_shared *
motor_shared_of(const struct dtxn_txn *t)
{
	return t->coord->worker->db->cc_shared;
}

/* recover.c */
/** dtxn_cc_ops.recover: the operation log (oplog=mn) or the lock scan (oplog=cn); doc/guides/motor.md. */
int motor_recover(struct dtxn_coord *c, struct dtxn_recovery *rec);

/* options.c */
/** Parses an option string into @p o (defaults first). 0 or -EINVAL with @p err. */
int motor_opts_parse(const char *s, struct motor_opts *o, char *err, size_t errlen);
/** dtxn_cc_ops.check_options. */
int motor_check_options(const char *opts, char *err, size_t errlen);
/**
 * dtxn_cc_ops.table_geometry: the db's options' index geometry
 * (bucket_slots=, index=direct on tables declaring DTXN_TABLE_F_DENSE_IDS)
 * applied to @p def, then motor_table_sizes(). Main lcore, at table
 * definition. @return as motor_table_sizes().
 */
int motor_table_geometry(const struct dtxn_db *db, struct dtxn_table_def *def,
			 uint32_t *slot_size, uint32_t *aux_size);

static inline struct motor_item *
motor_item_of(const struct dtxn_item *it)
{
	return (struct motor_item *)(uintptr_t)it->cc[0];
}

static inline struct dtxn_tso *
motor_tso(const struct dtxn_txn *t)
{
	return ((struct motor_worker *)t->coord->worker->cc_priv)->tso;
}

/** Gets a timestamp from the TSO; DTXN_OK or an abort reason. */
int motor_timestamp(struct dtxn_txn *t, uint64_t *ts);

/* execute.c */
int motor_execute(struct dtxn_txn *t);
/** Releases every lock the txn holds (fire-and-forget WRITEs of 0). */
void motor_release(struct dtxn_txn *t);

/* validate.c */
/** SR validation of the read items at T_commit (one round). DTXN_OK or a reason. */
int motor_validate(struct dtxn_txn *t);
/**
 * Snapshot recheck of the reads that saw another txn's lock: once the
 * lock is gone, the read must still see the same version at T_start.
 * @param wait  yield and re-read while the lock is held (up to
 *   MOTOR_RECHECK_MAX times); false: a lock still held aborts.
 * @return DTXN_OK or a reason.
 */
int motor_recheck(struct dtxn_txn *t, bool wait);
/** Lock word and version identity a validation re-read shows; shared by both checks. */
int motor_check_read(struct dtxn_txn *t, const struct dtxn_item *it, uint64_t ts,
		     bool *locked);

/* commit.c */
int motor_commit(struct dtxn_txn *t);
void motor_abort(struct dtxn_txn *t);

/* oplog.c */
/**
 * Records the coordinator's operation-log record (every lock the txn
 * holds or takes in this round) before the round's CASes (paper §5.3):
 * oplog=cn in the coordinator's buffer (no WR); oplog=mn as a WRITE added
 * to @p b for each MN of @p mn_mask, ahead of that MN's CASes.
 * @return DTXN_OK or DTXN_ABORT_TOO_LARGE.
 */
int motor_oplog_add(struct dtxn_txn *t, struct dtxn_batch *b, uint64_t mn_mask,
		    const dtxn_raddr_t *round_locks, const uint32_t *round_items,
		    unsigned n_round);

#endif /* DTXN_MOTOR_PRIVATE_H */
