/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DTXN_LOTUS_PRIVATE_H
#define DTXN_LOTUS_PRIVATE_H

/**
 * @file
 * Lotus (Hu et al.): lock disaggregation on the compute nodes, the
 * lock-first protocol and application-aware sharding
 * (../shared/papers/lotus.md; doc/guides/lotus.md). Which file does what:
 * - lotus.c: ops table, registration, shared state (per-CN lock tables,
 *   VT caches, shard map), per-worker and per-coordinator state;
 * - options.c: the protocol options (dtxn_db_conf.cc_options);
 * - format.c: the memory store: CVTs of full records with cacheline
 *   versions (paper §7.1), version choice, record packing, loading;
 * - locktable.c: the CN lock table and Algorithm 1, the lock-state map
 *   (paper §4.1);
 * - vtcache.c: the version-table cache, LRU sub-caches (§4.4);
 * - shard.c: shard map, routing and pass-by-range resharding (§4.2, §4.3);
 * - lock.c: the lock step of execution (local CAS or one batched RPC per
 *   CN), the lock RPC handlers, releases (§5.1 phase 1 step 1);
 * - execute.c: execution: CVTs (cache, or lib/txn's locating steps:
 *   address or bucket), then data, version checks against T_start (§5.1
 *   phase 1 steps 2-3);
 * - mnlock.c: the ablation with Motor's MN locks (locks=mn): validation,
 *   recheck, unlocks;
 * - commit.c: commit: data, CVTs (INVISIBLE) and log, T_commit, visible,
 *   unlock (§5.1 phase 2), and the lightweight GC (§7.1);
 * - recover.c: lock-rebuild-free CN crash recovery (§6).
 */

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_common.h>
#include <rte_log.h>
#include <rte_spinlock.h>

#include "dtxn_rpc.h"
#include "dtxn_tso.h"
#include "dtxn_txn_driver.h"

extern int dtxn_lotus_logtype;
#define LOTUS_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_##level, dtxn_lotus_logtype, "dtxn.cc.lotus: " fmt "\n", ##__VA_ARGS__)

/* ------------------------------------------------------------------ */
/* Options (options.c)                                                */
/* ------------------------------------------------------------------ */

enum lotus_routing {
	LOTUS_ROUTE_HYBRID = 0, /**< RW to the owner of the first record, RO anywhere (§4.3) */
	LOTUS_ROUTE_RANDOM,     /**< no routing: the generator's draw runs where it was drawn */
};

enum lotus_lockloc {
	LOTUS_LOCKS_CN = 0,     /**< lock disaggregation: locks in the CNs' lock tables */
	LOTUS_LOCKS_MN,         /**< ablation: Motor's locks, CAS on a lock word in the CVT */
};

enum lotus_commitmode {
	LOTUS_COMMIT_VISIBLE = 0, /**< INVISIBLE + log, T_commit, visible (§5.1) */
	LOTUS_COMMIT_DIRECT,      /**< ablation: T_commit first, one write round (Motor's) */
};

/** Protocol options (doc/guides/lotus.md, "Options"). */
struct lotus_opts {
	uint32_t lock_table_mb;   /**< lock table per CN, MiB */
	uint32_t vt_cache;        /**< VT-cache entries per CN; 0: no VT cache */
	uint32_t vt_subcaches;    /**< LRU sub-caches per CN */
	uint8_t routing;          /**< enum lotus_routing */
	uint8_t locks;            /**< enum lotus_lockloc */
	uint8_t commit;           /**< enum lotus_commitmode */
	uint8_t reshard;          /**< pass-by-range resharding on */
	uint8_t log;              /**< write the commit log */
	uint8_t shard_init_one;   /**< test aid: every shard starts on CN 0 */
	uint8_t ts_mn;            /**< timestamps by FAA on an MN (lib/tso's default), not CN 0 */
	uint32_t reshard_ms;      /**< metrics interval, ms (paper: 100) */
	uint32_t reshard_pct;     /**< overload: latency above the average by this %, (50) */
	uint32_t reshard_rounds;  /**< ... for this many intervals in a row (3) */
	uint32_t drain_ms;        /**< handover: wait this long for held locks (10) */
	uint32_t gc_ms;           /**< GC: clear versions older than this, ms (500) */
	uint32_t rpc_timeout_us;  /**< lock RPC timeout before a resend, us */
};

/** Fills the defaults (the paper's figures where it gives them). */
void lotus_opts_default(struct lotus_opts *o);
/** Parses "key=value,..." over @p o. @return 0 or -EINVAL with @p err. */
int lotus_opts_parse(const char *s, struct lotus_opts *o, char *err, size_t errlen);
int lotus_check_options(const char *opts, char *err, size_t errlen);
/**
 * @p db's options (dtxn_db_conf.cc_options) over the defaults, for what
 * runs before the shared state holds them (table geometry, footprint).
 * Any thread. @return 0, or -EINVAL (options refused: @p o has the
 * defaults; dtxn_db_create() refuses them first through check_options).
 */
int lotus_opts_of_db(const struct dtxn_db *db, struct lotus_opts *o);
/** dtxn_cc_ops.footprint (footprint.c). */
int lotus_footprint(const struct dtxn_db *db, unsigned n_cn, unsigned max_coords,
		    struct dtxn_footprint *per_cn, struct dtxn_footprint *per_worker);
/** Largest slot of @p db's catalog, bytes: the VT cache's CVT size. */
uint32_t lotus_cvt_max(const struct dtxn_db *db);

/* ------------------------------------------------------------------ */
/* Record format (format.c)                                           */
/* ------------------------------------------------------------------ */

/** Versions per record when the table does not say: the paper's default (§8: "2 versions"). */
#define LOTUS_VNUM_DEFAULT 2
#define LOTUS_VNUM_MIN 2
#define LOTUS_VNUM_MAX 32

/**
 * A cell's first word: version (commit timestamp), the cell's cacheline
 * version and its flags, in one 8-byte word so that a lock-free reader
 * always sees them together (the paper's HeadCV | Valid | Version |
 * TailCV; an RNIC writes an aligned 8-byte word atomically).
 */
#define LOTUS_META_VER_BITS 48
#define LOTUS_META_VER_MASK ((UINT64_C(1) << LOTUS_META_VER_BITS) - 1)
/** The version of a cell being committed (the paper's INVISIBLE, 64-bit max, in 48 bits). */
#define LOTUS_INVISIBLE LOTUS_META_VER_MASK
#define LOTUS_META_CV_SHIFT 48
#define LOTUS_META_FL_SHIFT 56
#define LOTUS_CELL_VALID 0x1u   /**< the cell holds a version */
#define LOTUS_CELL_TOMB 0x2u    /**< the version is a deletion */
#define LOTUS_CELL_INSERT 0x4u  /**< no version of the key precedes it (new-key insert) */

static inline uint64_t
lotus_meta(uint64_t version, uint8_t cv, uint8_t flags)
{
	return (version & LOTUS_META_VER_MASK) | ((uint64_t)cv << LOTUS_META_CV_SHIFT) |
	       ((uint64_t)flags << LOTUS_META_FL_SHIFT);
}

static inline uint64_t
lotus_meta_ver(uint64_t m)
{
	return m & LOTUS_META_VER_MASK;
}

static inline uint8_t
lotus_meta_cv(uint64_t m)
{
	return (uint8_t)(m >> LOTUS_META_CV_SHIFT);
}

static inline uint8_t
lotus_meta_flags(uint64_t m)
{
	return (uint8_t)(m >> LOTUS_META_FL_SHIFT);
}

/**
 * A CVT cell (16 B): the paper's HeadCV | Valid | Address | Version |
 * TailCV, with the version, CV and flags in one word (meta), the address
 * in 32 bits (below: LOTUS_ADDR_DELTA), and the writer's clock at commit,
 * for the GC's age, in units of 2^LOTUS_AGE_SHIFT ns (about 1 ms; wraps
 * after 52 days, compared modulo 2^32, lotus_cell_aged()). Before: 24 B
 * (64-bit address and clock).
 *
 * Where a cell's record is (doc/guides/lotus.md, "Memory store"): cell 0's
 * in the slot's aux area (addr 0: the area holds that one record, the
 * loaded or inserted version); cell i >= 1's in the row's second area, an
 * area of the table's delta heap taken on the row's first second version
 * (addr = LOTUS_ADDR_DELTA | its number, the same in every such cell), at
 * offset (i - 1) x the record size. A cell i >= 1 without the flag has no
 * record yet and is never valid.
 */
struct lotus_cell {
	uint64_t meta;       /**< version | cv | flags (lotus_meta()) */
	uint32_t addr;       /**< cell 0: 0; others: LOTUS_ADDR_DELTA | delta area, or 0 (none yet) */
	uint32_t commit_t;   /**< writer's clock at commit >> LOTUS_AGE_SHIFT (GC's age; the paper's physical part) */
};

/** Cell address flag: the record is in the row's delta area (the low 31 bits name it). */
#define LOTUS_ADDR_DELTA 0x80000000u

/** Units of a cell's commit_t: 2^20 ns. */
#define LOTUS_AGE_SHIFT 20

/** A cell's commit_t for a commit at @p now_ns. */
static inline uint32_t
lotus_age_stamp(uint64_t now_ns)
{
	return (uint32_t)(now_ns >> LOTUS_AGE_SHIFT);
}

/** Whether a version committed at @p commit_t is older than @p age_ns at @p now_ns. */
static inline bool
lotus_cell_aged(uint32_t commit_t, uint64_t now_ns, uint64_t age_ns)
{
	return (uint32_t)(lotus_age_stamp(now_ns) - commit_t) > (age_ns >> LOTUS_AGE_SHIFT);
}

/**
 * The CVT in a hash-index slot: the store's slot header (Key, TableID and
 * the aux area: 16 B), then VNum cells; with locks=mn (the ablation) a
 * lock word follows the cells, as the slot's last 8 B (lotus_cvt_lock()).
 * The paper's header also holds Length (the record size): dtxn leaves it
 * out, as every coordinator knows each table's record size from the
 * catalog (the header's TableID names the table): 8 B less per slot, and
 * the ablation's lock word 8 B more only where it runs
 * (doc/guides/lotus.md, "Memory store"). Before: a 32 B header with
 * Length, VNum and the lock word in every mode.
 */
struct lotus_cvt {
	struct dtxn_slot_hdr hdr;  /**< Key, TableID (and the store's flags, the aux area) */
	struct lotus_cell cells[];
};
#define LOTUS_CVT_HDR 16
#define LOTUS_CELL_SIZE 16
_Static_assert(sizeof(struct lotus_cvt) == LOTUS_CVT_HDR, "lotus CVT header");
_Static_assert(sizeof(struct lotus_cell) == LOTUS_CELL_SIZE, "lotus cell");

/** Bytes of a CVT of @p vnum cells, with the ablation's lock word if @p mn_locks. */
static inline uint32_t
lotus_cvt_size(uint32_t vnum, bool mn_locks)
{
	return LOTUS_CVT_HDR + vnum * LOTUS_CELL_SIZE + (mn_locks ? 8 : 0);
}

/** Cache line of a record; its first byte is a cacheline version. */
#define LOTUS_LINE 64
/** Payload of a record: the writer's txn id (for the history checker), then the value. */
#define LOTUS_REC_WRITER 8

static inline uint32_t
lotus_vnum(const struct dtxn_table *t)
{
	/* a trailing lock word (8 B) is less than a cell: the floor drops it */
	return (t->slot_size - LOTUS_CVT_HDR) / LOTUS_CELL_SIZE;
}

/** The lock word of @p t's CVT image @p cvt (locks=mn only: the slot's last 8 B). */
static inline uint64_t
lotus_cvt_lock(const struct dtxn_table *t, const struct lotus_cvt *cvt)
{
	uint64_t w;

	memcpy(&w, (const char *)cvt + t->slot_size - 8, sizeof(w));
	return w;
}

/** locks=mn: whether @p t's CVT image @p cvt is locked by a txn other than @p id. */
static inline bool
lotus_cvt_locked_by_other(const struct dtxn_table *t, const struct lotus_cvt *cvt, uint64_t id)
{
	const uint64_t w = lotus_cvt_lock(t, cvt);

	return w != 0 && w != id;
}

/**
 * Record bytes per version: a cv byte at every 64th byte of the record
 * (offsets 0, 64, ...), a tail cv as its last byte, the payload in the
 * bytes between, the whole rounded up to 8 only (SmallBank's 8 B balance:
 * 24 B; TPC-C's 56 B order line: 72 B; whole 64 B lines before). Every
 * 64 B-aligned cache line that the record overlaps holds one of its cvs,
 * wherever the record starts, so a READ torn by a WRITE at a line
 * boundary shows two cvs that differ (doc/guides/lotus.md, "Cacheline
 * versions"). The tail is never a head: the size is a multiple of 8.
 */
static inline uint32_t
lotus_rec_size_v(uint32_t value_size)
{
	const uint32_t payload = LOTUS_REC_WRITER + value_size;
	uint32_t s = RTE_ALIGN_CEIL(payload + 2, 8);

	/* payload room: s less its head cvs (one per started line) and the tail */
	while (s - (s + LOTUS_LINE - 1) / LOTUS_LINE - 1 < payload)
		s += 8;
	return s;
}

static inline uint32_t
lotus_rec_size(const struct dtxn_table *t)
{
	return lotus_rec_size_v(t->def.value_size);
}

static inline struct lotus_cvt *
lotus_cvt_of(void *slot)
{
	return (struct lotus_cvt *)slot;
}

/** Local staging buffer of an item's record: after its value in the local aux copy. */
static inline uint8_t *
lotus_local_rec(const struct dtxn_item *it)
{
	return (uint8_t *)it->slot + it->table->slot_size +
	       RTE_ALIGN_CEIL(it->table->def.value_size, 8);
}

/**
 * The row's delta area (its records of cells 1..VNum-1), as its CVT image
 * @p cvt names it: 1..delta_areas, or 0 (none taken yet).
 */
static inline uint32_t
lotus_cvt_delta(const struct dtxn_table *t, const struct lotus_cvt *cvt)
{
	for (uint32_t i = 1; i < lotus_vnum(t); i++)
		if ((cvt->cells[i].addr & LOTUS_ADDR_DELTA) != 0)
			return cvt->cells[i].addr & ~LOTUS_ADDR_DELTA;
	return 0;
}

/**
 * Byte offset of cell @p cell's record in its area (the aux area for cell
 * 0, the delta area for the others).
 */
static inline uint64_t
lotus_rec_off(const struct dtxn_table *t, unsigned cell)
{
	return cell == 0 ? 0 : (uint64_t)(cell - 1) * lotus_rec_size(t);
}

/**
 * Address on replica @p r of the record of cell @p cell (< VNum) of a
 * row of @p t (primary slot address @p slot: its stripe's heaps) whose
 * slot header names aux area @p aux and whose cell is @p c. @return the address, or 0 (no such area: a cell with no record).
 */
static inline dtxn_raddr_t
lotus_rec_raddr_at(const struct dtxn_table *t, uint16_t r, dtxn_raddr_t slot, uint32_t aux,
		   const struct lotus_cell *c, unsigned cell)
{
	dtxn_raddr_t a;

	if (cell == 0)
		a = dtxn_store_aux_area_raddr(t, r, slot, aux);
	else if ((c->addr & LOTUS_ADDR_DELTA) != 0)
		a = dtxn_store_heap_area_raddr(t, DTXN_HEAP_DELTA, r, slot,
					       c->addr & ~LOTUS_ADDR_DELTA);
	else
		a = 0;
	return a == 0 ? 0 : a + lotus_rec_off(t, cell);
}

/** Primary address of the record of cell @p cell of item @p it's CVT image @p cvt. */
static inline dtxn_raddr_t
lotus_rec_raddr(const struct dtxn_item *it, const struct lotus_cvt *cvt, unsigned cell)
{
	return lotus_rec_raddr_at(it->table, 0, it->slot_raddr, it->aux, &cvt->cells[cell], cell);
}

/** Result of choosing a version at a timestamp. */
enum lotus_pick {
	LOTUS_PICK_FOUND = 0,  /**< a version (which may be a tombstone) */
	LOTUS_PICK_ABSENT,     /**< the key was inserted after the timestamp */
	LOTUS_PICK_GONE,       /**< the version needed was garbage-collected */
	LOTUS_PICK_INVISIBLE,  /**< a version is being committed: read again */
};

/**
 * A table's slot (the CVT with CN locks: no lock word) and aux area (cell
 * 0's record) sizes, bytes. @return 0, or -EINVAL (VNum out of range, logged).
 */
int lotus_table_sizes(const struct dtxn_table_def *def, uint32_t *slot_size, uint32_t *aux_size);
/**
 * dtxn_cc_ops.table_geometry: the CVT (lotus_cvt_size(), the lock word with
 * locks=mn only) and cell 0's record as the aux area.
 */
int lotus_table_geometry(const struct dtxn_db *db, struct dtxn_table_def *def,
			 uint32_t *slot_size, uint32_t *aux_size);
/** dtxn_cc_ops.table_delta: the records of cells 1..VNum-1, (VNum - 1) x the record size. */
uint32_t lotus_table_delta(const struct dtxn_table_def *def);
/** dtxn_cc_ops.local_extra: the local copy's staging record after its value. */
uint32_t lotus_local_extra(const struct dtxn_table *t);
uint32_t lotus_slot_size(uint32_t value_size);
void lotus_slot_format(const struct dtxn_table *t, void *slot, const void *value, void *arg);
void *lotus_slot_value(const struct dtxn_table *t, void *slot);
/**
 * The value of the row's newest committed version in MN memory (struct
 * dtxn_cc_ops.mn_value): INVISIBLE cells are skipped, so a commit neither
 * finished nor undone does not count as the row's value (a row with no
 * committed version: NULL, as deleted). MN CPU, after the run.
 */
void *lotus_mn_value(struct dtxn_db *db, const struct dtxn_table *t, void *mn_slot);
/**
 * Whether the CVT at @p mn_slot holds a valid INVISIBLE cell: a commit
 * neither finished (step 3) nor undone (struct dtxn_cc_ops.mn_unfinished).
 * MN CPU, after the run.
 */
bool lotus_mn_unfinished(const struct dtxn_table *t, const void *mn_slot);
/** Index of the newest valid cell whose version is not INVISIBLE, or -1. */
int lotus_cvt_committed(const struct dtxn_table *t, const struct lotus_cvt *cvt);
/** Index of the newest valid cell (INVISIBLE counts as newest), or -1. */
int lotus_cvt_newest(const struct dtxn_table *t, const struct lotus_cvt *cvt);
/**
 * The version a lock-free reader at @p ts sees: the largest visible
 * version < ts; LOTUS_PICK_INVISIBLE if any cell is INVISIBLE (its
 * T_commit may be < ts: the reader reads again, doc/guides/lotus.md
 * "INVISIBLE and lock-free readers").
 */
enum lotus_pick lotus_cvt_pick(const struct dtxn_table *t, const struct lotus_cvt *cvt,
			       uint64_t ts, int *idx);
/** Packs writer id + value into a record image with cacheline version @p cv. */
void lotus_rec_pack(const struct dtxn_table *t, uint8_t *rec, uint8_t cv, uint64_t writer,
		    const void *value);
/**
 * Unpacks a record image: checks that every cacheline version equals
 * @p cv (else -EAGAIN: torn or overwritten), copies the value and the
 * writer id. @return 0 or -EAGAIN.
 */
int lotus_rec_unpack(const struct dtxn_table *t, const uint8_t *rec, uint8_t cv,
		     uint64_t *writer, void *value);

/* ------------------------------------------------------------------ */
/* Lock table and lock state (locktable.c)                            */
/* ------------------------------------------------------------------ */

#define LOTUS_LT_SLOTS 8               /**< slots per lock bucket (64 B) */
#define LOTUS_LT_WRITE 1u              /**< counter of a write lock */
#define LOTUS_LT_READ 2u               /**< a read lock adds this */
#define LOTUS_LT_READ_MAX 254u         /**< counter limit (127 readers) */
/** Table-id bit of a lock on an index bucket (insert locking, §4.1). */
#define LOTUS_LK_BUCKET 0x80000000u

/** What a lock is on: a record (table, key) or an index bucket. */
struct lotus_lk {
	uint32_t table;     /**< table id, | LOTUS_LK_BUCKET for a bucket */
	uint32_t rsvd;
	uint64_t key;       /**< record key, or bucket index */
};

enum lotus_lk_rc {
	LOTUS_LK_OK = 0,
	LOTUS_LK_CONFLICT,  /**< held in a conflicting mode (or a racing CAS won) */
	LOTUS_LK_FULL,      /**< no free slot in the bucket, or read counter at its limit */
	LOTUS_LK_NOT_OWNER, /**< this CN does not own the shard (resharding) */
	LOTUS_LK_STATE,     /**< lock-state map full */
};

/** A CN's lock table: n_buckets x 8 slots of 8 B, in hugepage memory. */
struct lotus_lt {
	uint64_t *slots;
	uint64_t n_buckets;
};

int lotus_lt_init(struct lotus_lt *lt, uint64_t bytes, int socket_id);
void lotus_lt_fini(struct lotus_lt *lt);

struct dtxn_footprint;
/** Adds what lotus_lt_init(@p bytes) allocates to @p fp. */
void lotus_lt_footprint(uint64_t bytes, struct dtxn_footprint *fp);

/** Lock-state entry: who holds what (paper §4.1: txn id, CN id, mode). */
struct lotus_kmap_slot;

/**
 * A map from fixed-size keys to positions in [0, cap) (kmap.c): open
 * addressing, linear probing, at most half full, on a table that doubles
 * as keys are added (its memory is allocated for cap keys at once). One writer at a time
 * (the caller serializes, as for the rte_hash it replaces); lookups may
 * not run concurrently with a writer.
 */
struct lotus_kmap {
	struct lotus_kmap_slot *slots;
	uint8_t *keys;        /**< cap keys of key_len bytes, by position */
	uint32_t *free;       /**< stack of free positions */
	uint64_t *used;       /**< positions in use, filled by a growth */
	uint32_t n_free;
	uint32_t mask;        /**< slots in use - 1 (they double as keys are added) */
	uint32_t max_slots;   /**< slots allocated: at least 2 x cap */
	uint32_t cap;
	uint32_t key_len;
};

/**
 * Creates an empty map of @p cap positions for keys of @p key_len bytes (a
 * multiple of 8; padding bytes of a key must be zeroed by the caller), on
 * @p socket_id's memory. @return 0, -EINVAL (cap or key_len 0, key_len not
 * a multiple of 8), -ENOMEM.
 */
int lotus_kmap_init(struct lotus_kmap *m, uint32_t cap, uint32_t key_len, int socket_id);
/** Frees @p m's memory (a zeroed or failed map too). */
void lotus_kmap_fini(struct lotus_kmap *m);
/** Adds what lotus_kmap_init(@p cap, @p key_len) allocates to @p fp. */
void lotus_kmap_footprint(uint32_t cap, uint32_t key_len, struct dtxn_footprint *fp);
/** @return @p key's position, or -ENOENT. */
int lotus_kmap_lookup(const struct lotus_kmap *m, const void *key);
/** Adds @p key; @return its position (its old one if present), or -ENOSPC (cap keys held). */
int lotus_kmap_add(struct lotus_kmap *m, const void *key);
/** Removes @p key; @return the position it had (free again), or -ENOENT. */
int lotus_kmap_del(struct lotus_kmap *m, const void *key);
/**
 * Iteration: start with *@p next = 0; @return the next key's position
 * (its key in *@p key) or -ENOENT at the end. The map must not change
 * during an iteration.
 */
int lotus_kmap_iterate(const struct lotus_kmap *m, uint32_t *next, const void **key);

struct lotus_ls_key {
	uint64_t txn;
	uint64_t key;
	uint32_t table;
	uint32_t rsvd;
};

struct lotus_ls_val {
	uint64_t slot;      /**< lock-table slot index */
	uint16_t cn;        /**< holder's CN node id */
	uint8_t write;      /**< mode */
	uint8_t rsvd[5];
};

/** One worker's lock-state map (its lcore only). */
struct lotus_ls {
	struct lotus_kmap h;
	struct lotus_ls_val *vals;  /**< by the map's position */
	uint32_t cap;
	uint32_t n;
};

int lotus_ls_init(struct lotus_ls *ls, const char *name, uint32_t cap, int socket_id);
void lotus_ls_fini(struct lotus_ls *ls);
/** Adds what lotus_ls_init(@p cap) allocates to @p fp. */
void lotus_ls_footprint(uint32_t cap, struct dtxn_footprint *fp);

/** Lock-state entries per worker: per coordinator of each CN, this many locks. */
#define LOTUS_LS_PER_COORD 256
#define LOTUS_LS_MIN 4096
#define LOTUS_LS_MAX (1u << 22)

/** Capacity of a worker's lock state with @p max_coords coordinators on @p n_cn CNs. */
static inline uint32_t
lotus_ls_cap(unsigned max_coords, unsigned n_cn)
{
	uint64_t cap = (uint64_t)max_coords * n_cn * LOTUS_LS_PER_COORD;

	return (uint32_t)RTE_MIN(RTE_MAX(cap, (uint64_t)LOTUS_LS_MIN), (uint64_t)LOTUS_LS_MAX);
}

struct lotus_cn;

/**
 * Algorithm 1 (ACQUIRE) on @p cn's lock table, with the lock state of the
 * handling worker. Idempotent (a lock this txn holds is granted again);
 * a read lock of this txn alone is upgraded to a write lock. NO_WAIT: a
 * conflict fails at once. A write lock for another CN invalidates the
 * key's VT-cache entry (Alg. 1 line 15).
 */
enum lotus_lk_rc lotus_lock_acquire(struct lotus_cn *cn, struct lotus_ls *ls,
				    const struct lotus_lk *lk, bool write, uint16_t holder_cn,
				    uint64_t txn, bool *fresh);
/** Releases what @p txn holds on @p lk (no-op if nothing: idempotent). */
void lotus_lock_release(struct lotus_cn *cn, struct lotus_ls *ls, const struct lotus_lk *lk,
			uint64_t txn);

/* ------------------------------------------------------------------ */
/* VT cache (vtcache.c)                                               */
/* ------------------------------------------------------------------ */

struct lotus_vtc;

struct lotus_vtc *lotus_vtc_create(const char *name, uint32_t entries, uint32_t n_sub,
				   uint32_t cvt_max, int socket_id);
void lotus_vtc_destroy(struct lotus_vtc *c);
/** Adds what lotus_vtc_create(name, @p entries, @p n_sub, @p cvt_max) allocates to @p fp. */
void lotus_vtc_footprint(uint32_t entries, uint32_t n_sub, uint32_t cvt_max,
			 struct dtxn_footprint *fp);
/** Copies the cached CVT of (table, key) into @p cvt and its slot address. @return true on a hit. */
bool lotus_vtc_get(struct lotus_vtc *c, uint32_t table, uint64_t key, void *cvt, uint32_t len,
		   dtxn_raddr_t *slot);
/** Caches (replaces) the CVT of (table, key). */
void lotus_vtc_put(struct lotus_vtc *c, uint32_t table, uint64_t key, const void *cvt,
		   uint32_t len, dtxn_raddr_t slot);
void lotus_vtc_invalidate(struct lotus_vtc *c, uint32_t table, uint64_t key);
/** Drops every entry of shard @p shard (resharding handover). @return entries dropped. */
unsigned lotus_vtc_drop_shard(struct lotus_vtc *c, uint16_t shard);

struct lotus_vtc_stats {
	uint64_t hits, misses, puts, invalidations, evictions;
};
void lotus_vtc_stats_get(const struct lotus_vtc *c, struct lotus_vtc_stats *st);

/* ------------------------------------------------------------------ */
/* Shared state (lotus.c, shard.c)                                    */
/* ------------------------------------------------------------------ */

/** Shard-map entry flag: the shard is being handed over (requests are refused). */
#define LOTUS_SHARD_MOVING 0x8000u
#define LOTUS_SHARDS (1u << DTXN_KEY_SHARD_BITS)

struct lotus_shared;

/** Per-CN state, shared by the CN's workers. */
struct lotus_cn {
	struct lotus_shared *sh;
	uint16_t node;              /**< fabric node id */
	uint16_t idx;               /**< 0 .. n_cn-1 */
	bool ready;                 /**< lock table and cache allocated */
	struct lotus_lt lt;
	struct lotus_vtc *vtc;      /**< NULL: no VT cache */
	/* resharding (shard.c): written by the CN's workers with atomics */
	uint32_t held[LOTUS_SHARDS];    /**< locks held per shard */
	uint32_t reqs[LOTUS_SHARDS];    /**< lock requests per shard this interval */
	uint64_t lat_sum_ns;            /**< committed txns' latency this interval */
	uint64_t lat_n;
	/* the CN's metrics worker (worker 0) only */
	uint64_t next_ns;               /**< next metrics interval */
	unsigned over;                  /**< intervals in a row above the threshold */
	uint64_t metrics[2];            /**< {avg latency ns, intervals}: WRITE source */
	uint64_t *peer_metrics;         /**< READ targets: 2 words per CN */
	int moving;                     /**< shard being handed over, -1 none */
	uint16_t moving_to;
	uint64_t moving_since_ns;
	uint64_t moves;                 /**< shards handed over */
	uint32_t crashed;               /**< test aid: DTXN_DEBUG_CRASH_MID_COMMIT's txn parked */
};

/**
 * What every CN of the cluster must see alike: the routing layer's shard
 * map and the recovery's fence. Inside struct lotus_shared in one process;
 * with CN processes (dtxn_fabric_conf.multi_process) the memzone
 * LOTUS_ROUTE_MZ in the cluster's shared hugepages, which the first CN
 * process to start reserves and fills, and every other looks up, so that
 * a shard re-homed or moved by one CN process is routed alike by all.
 */
struct lotus_route {
	/** The routing layer's shard -> CN map: CN index, | LOTUS_SHARD_MOVING. */
	uint16_t shard_owner[LOTUS_SHARDS];
	/* CN crash recovery (recover.c): written with atomics */
	uint64_t dead_mask;             /**< fabric node bit per dead CN */
	uint32_t dead_gen;              /**< bumped by each recovery's fence */
	uint32_t dead_acks;             /**< workers done with dead_gen's cleanup */
	uint64_t dead_released;         /**< locks of dead CNs released by the survivors */
	/** Fabric node bit per dead CN whose commit logs were applied (step 2): only
	 *  their locks may be released; before, a survivor could lock a record a
	 *  dead txn left visible on one replica only and overwrite it */
	uint64_t logs_done;
	uint32_t rel_gen;               /**< bumped when logs_done grows: survivors release */
	uint32_t rel_acks;              /**< workers done with rel_gen's release */
	uint32_t n_workers[DTXN_MAX_NODES]; /**< per CN index: workers that ack a fence */
	/** Bumped when a dead CN rejoins (lotus_recover_rejoin()): survivors talk to it again */
	uint32_t up_gen;
	uint32_t ready;                 /**< 1 once filled (LOTUS_ROUTE_MZ's reserver) */
};

/** The crash points (test aids, commit.c) Lotus implements. */
#define LOTUS_CRASH_POINTS (DTXN_DEBUG_CRASH_MID_COMMIT | DTXN_DEBUG_CRASH_UNLOCKED)

/** Name of the memzone holding struct lotus_route across CN processes. */
#define LOTUS_ROUTE_MZ "dtxn_lotus_route"

/** The protocol's shared state (dtxn_db.cc_shared). */
struct lotus_shared {
	struct lotus_opts opts;
	struct dtxn_db *db;
	uint16_t n_mn, n_cn;
	struct lotus_cn *cn;            /**< [n_cn] */
	struct lotus_route *rt;         /**< &route, or the cluster's (LOTUS_ROUTE_MZ) */
	struct lotus_route route;       /**< one process's */
	uint32_t cvt_max;               /**< largest slot size of the tables */
	uint8_t *scratch;               /**< lotus_mn_value()'s unpacked value */
	dtxn_raddr_t tso_counter;
	/** The timestamp service in CN 0's memory (ts=cn; lib/tso's dtxn_tso_cn), else NULL. */
	struct dtxn_tso_cn *tso_cn;
};

static inline struct lotus_shared *
lotus_shared_of(const struct dtxn_db *db)
{
	return (struct lotus_shared *)db->cc_shared;
}

/** Per-worker state. */
struct lotus_worker {
	struct lotus_cn *cn;       /**< the worker's CN */
	struct dtxn_rpc *rpc;      /**< NULL with one CN */
	struct dtxn_tso *tso;
	struct lotus_ls ls;        /**< lock state of the locks this worker granted */
	uint64_t metrics_old[2];   /**< unsignaled READ sink (worker 0) */
	/** Locks this worker's txns hold, by the node of the CN that granted them. */
	uint32_t held_from[DTXN_MAX_NODES];
	uint32_t seen_gen;         /**< the lotus_route.dead_gen whose cleanup it acked */
	uint32_t seen_rel;         /**< the lotus_route.rel_gen whose release it acked */
	uint32_t seen_up;          /**< the lotus_route.up_gen whose rejoined CNs it marked up */
};

/** Per-coordinator state. */
struct lotus_coord {
	struct dtxn_rpc_ep *ep;
	struct dtxn_tso_req req;
	uint64_t log_head;         /**< next log record offset in the log region */
};

static inline struct lotus_worker *
lotus_worker_of(const struct dtxn_txn *t)
{
	return (struct lotus_worker *)t->coord->worker->cc_priv;
}

static inline struct lotus_shared *
lotus_shared_t(const struct dtxn_txn *t)
{
	return lotus_shared_of(t->coord->worker->db);
}

static inline const struct lotus_opts *
lotus_opts_t(const struct dtxn_txn *t)
{
	return &lotus_shared_t(t)->opts;
}

/** Shard of what a lock is on: the key's low 12 bits, or the bucket index's. */
static inline uint16_t
lotus_lk_shard(const struct lotus_lk *lk)
{
	return (uint16_t)(lk->key & DTXN_KEY_SHARD_MASK);
}

/** CN index owning @p shard (the routing layer's map), LOTUS_SHARD_MOVING masked off. */
static inline uint16_t
lotus_shard_owner(const struct lotus_shared *sh, uint16_t shard)
{
	return __atomic_load_n(&sh->rt->shard_owner[shard], __ATOMIC_ACQUIRE) & ~LOTUS_SHARD_MOVING;
}

/* recover.c */
/** dtxn_cc_ops.recover: lock-rebuild-free recovery (§6; doc/guides/lotus.md, "Recovery"). */
int lotus_recover(struct dtxn_coord *c, struct dtxn_recovery *rec);
/**
 * Every worker's poller: after a recovery's fence (dead_gen), tells its
 * rpc the dead CNs are down and acks once its txns hold no lock a dead CN
 * granted; after a recovery applied a dead CN's commit logs (rel_gen),
 * releases the locks the CNs of logs_done hold in this worker's lock
 * state and acks that.
 */
unsigned lotus_recover_poll(void *arg);
/**
 * A new incarnation of CN @p cn rejoins (doc/guides/lotus.md, "Rejoin"),
 * called by its process's first worker before any of its workers counts
 * itself in lotus_route.n_workers: its bit leaves dead_mask and logs_done
 * (the route is the cluster's, so for every CN process at once), its
 * worker count restarts at 0, and up_gen tells the survivors' pollers to
 * post to it again. Its shards stay where its recovery re-homed them.
 * Only after that recovery ended (the process's claim of its node waits
 * for it, app_role_claim()). Control path; no fabric op.
 */
void lotus_recover_rejoin(struct lotus_shared *sh, const struct lotus_cn *cn);
/**
 * Sets up worker @p lw's recovery state when it starts: the fences and
 * releases before it are not its to ack, and its rpc (@p lw->rpc, not
 * NULL) treats the CNs dead now as down. Then it may count itself in
 * lotus_route.n_workers. Worker's lcore, before its first poll.
 */
void lotus_recover_worker_start(struct lotus_shared *sh, struct lotus_worker *lw);

/** True if CN index @p idx is dead (a recovery's fence). */
static inline bool
lotus_cn_dead(const struct lotus_shared *sh, unsigned idx)
{
	return (__atomic_load_n(&sh->rt->dead_mask, __ATOMIC_ACQUIRE) >> (sh->n_mn + idx)) & 1;
}

/* shard.c */
/**
 * Points @p sh->rt at the route of its run: its own, filled now, or with
 * CN processes (@p multi_process) the cluster's memzone LOTUS_ROUTE_MZ,
 * reserved and filled by the first CN process, looked up by the others
 * (which wait up to 1 s for it to be filled). @return 0, -ENOMEM, or
 * -ETIMEDOUT (the reserver never filled it).
 */
int lotus_shard_init(struct lotus_shared *sh, bool multi_process);
bool lotus_route(const struct dtxn_coord *c, uint32_t table_id, uint64_t key);
/** Whether @p cn may grant a lock on @p shard now (it owns it, not moving). */
bool lotus_shard_serves(const struct lotus_shared *sh, const struct lotus_cn *cn, uint16_t shard);
/** Adds a committed txn's latency to its CN's interval. */
void lotus_shard_latency(struct lotus_cn *cn, uint64_t ns);
/** Metrics and resharding poller of a CN's worker 0 (every reshard_ms). */
unsigned lotus_shard_poll(void *arg);
/**
 * The overload rule (§4.3), a pure function for tests: CN @p me with
 * average latency lat[me] is overloaded this interval if lat[me] >
 * avg * (100 + pct) / 100 over the CNs with a measurement (lat != 0).
 */
bool lotus_overloaded(const uint64_t *lat, unsigned n, unsigned me, unsigned pct);
/** The CN with the lowest latency other than @p me, or -1. */
int lotus_coolest(const uint64_t *lat, unsigned n, unsigned me);

/* ------------------------------------------------------------------ */
/* Protocol state                                                     */
/* ------------------------------------------------------------------ */

/**
 * Lotus's own step of locating an item (lib/txn's struct dtxn_loc does
 * the rest: CVT at a cached address, bucket chain, inserts; locks=mn: the
 * CAS on the CVT's lock word).
 */
enum lotus_step {
	LOTUS_S_REC = DTXN_LOC_PROTO, /**< READ the chosen version's record */
};

/** Re-reads of a lock-free read that met an INVISIBLE version or a torn record. */
#define LOTUS_READ_RETRIES 64
/** Pause before such a re-read, ns. */
#define LOTUS_REREAD_PAUSE_NS 1000

/** Lock request modes of an item. */
#define LOTUS_LOCK_NONE 0
#define LOTUS_LOCK_READ 1
#define LOTUS_LOCK_WRITE 2

/**
 * Protocol state of one item, from the arena (item->cc[0]). With CN locks
 * loc.own_block says that this insert takes its bucket's lock on a CN (no
 * earlier insert of the txn does); with locks=mn it is lib/txn's (the
 * bucket lock word it CASes).
 */
struct lotus_item {
	struct dtxn_loc loc;  /**< first: locating it (lib/txn, dtxn_loc_prepare()) */
	uint8_t lock;         /**< LOTUS_LOCK_* requested on the record */
	uint8_t reinsert;     /**< insert over a tombstone: a new version of the CVT */
	uint8_t cached;       /**< CVT from the VT cache */
	uint8_t sighted;      /**< locks=mn, commit=direct: a lock-free read saw a lock */
	uint8_t delta_new;    /**< commit: this txn took the row's delta area (given back if unposted) */
	uint16_t owner;       /**< node of the CN that granted the record lock, 0: none */
	uint16_t bowner;      /**< node of the CN that granted the bucket lock, 0: none */
	int32_t cell;         /**< the cell read (V), -1 none */
	int32_t new_cell;     /**< commit: the cell written, -1 none */
	uint64_t bkt;         /**< home bucket index */
	uint64_t bimg[2];     /**< locks=mn: bucket header image written at commit */
	uint64_t meta_new;    /**< commit: the new cell's meta (visible) */
};

/** Txn scratch (dtxn_txn.cc). */
#define LOTUS_TS_START 0   /**< T_start, 0 until the first execute */
#define LOTUS_TS_COMMIT 1  /**< T_commit */
#define LOTUS_TX_PAUSE 2   /**< a lock-free read asks the next round to pause first */
#define LOTUS_TX_FLAGS 3
#define LOTUS_TX_SIGHTED 0x1 /**< locks=mn: a read saw another txn's lock */

static inline struct lotus_item *
lotus_item_of(const struct dtxn_item *it)
{
	return (struct lotus_item *)(uintptr_t)it->cc[0];
}

static inline bool
lotus_mn_locks(const struct dtxn_txn *t)
{
	return lotus_opts_t(t)->locks == LOTUS_LOCKS_MN;
}

static inline bool
lotus_is_write(const struct dtxn_item *it)
{
	return it->kind != DTXN_ITEM_RO;
}

static inline enum dtxn_isolation
lotus_iso(const struct dtxn_txn *t)
{
	return t->coord->worker->db->conf.isolation;
}

/** Gets a timestamp from the TSO; DTXN_OK or an abort reason. */
int lotus_timestamp(struct dtxn_txn *t, uint64_t *ts);

/* lock.c */
/** RPC message types. */
#define LOTUS_RPC_LOCK 1      /**< acquire/release a batch; reply: one byte per op */
#define LOTUS_RPC_UNLOCK 2    /**< release a batch; reply: empty (ack) */
#define LOTUS_RPC_TS 3        /**< timestamps from CN 0: n -> the counter before adding n */
/** lib/tso's fetch_add on CN 0's counter (lotus.c, dtxn_tso_cn_fetch_add_lc()). */
int lotus_ts_fetch_add(void *arg, struct dtxn_coord *c, uint64_t n, uint64_t *old);
/** Locks every new item as the isolation level asks (§5.1 step 1). DTXN_OK or a reason. */
int lotus_lock_items(struct dtxn_txn *t);
/** Releases every lock the txn holds: local at once, remote by asynchronous RPC. */
void lotus_release_all(struct dtxn_txn *t);
/** Registers the lock handlers on a worker's rpc. */
int lotus_lock_handlers(struct dtxn_worker *w);
/**
 * Decodes a lock message from CN @p src_node (@p len bytes at @p req, any
 * alignment): a header naming @p src_node, at most LK_MAX_OPS ops, all of
 * them within @p len, each a release, read or write. Any thread.
 * @return the op count, or -EBADMSG (the handler drops the message).
 */
int lotus_lk_msg_check(const void *req, uint32_t len, uint16_t src_node);

/* execute.c */
int lotus_execute(struct dtxn_txn *t);

/*
 * mnlock.c: the ablation steps with Motor's MN locks (locks=mn); execute
 * takes them with lib/txn's locating steps (execute.c)
 */
/** A lock-free read: note a lock held on its CVT by another txn. */
void lotus_mn_sight(struct dtxn_txn *t, struct dtxn_item *it);
/** SR validation of the read items after T_commit (one round). */
int lotus_mn_validate(struct dtxn_txn *t);
/** Recheck of the reads that saw a lock; @p wait: until it is gone. */
int lotus_mn_recheck(struct dtxn_txn *t, bool wait);
/** Adds the unlock WRITEs (and, with @p bump, inserts' bucket headers) to @p b. */
void lotus_mn_unlocks(struct dtxn_txn *t, struct dtxn_batch *b, bool bump);

/* commit.c */
int lotus_commit(struct dtxn_txn *t);
void lotus_abort(struct dtxn_txn *t);

#endif /* DTXN_LOTUS_PRIVATE_H */
