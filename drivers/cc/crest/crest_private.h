/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DTXN_CREST_PRIVATE_H
#define DTXN_CREST_PRIVATE_H

/**
 * @file
 * CREST (ASPLOS'26; papers/crest.md, doc/guides/crest.md): cell-level
 * concurrency control on disaggregated memory. Which file does what:
 * - crest.c: ops table, registration, per-coordinator state;
 * - format.c: the MN record (header cacheline: slot header, cell lock
 *   word, EN array; then the cells, each [version][value] inside one
 *   cacheline, or a version per line when wider), gathering a record's value and scattering it back;
 * - options.c: the options (cell=0: record-level, Fig. 15);
 * - execute.c: execution (lib/txn's locating steps; cell locks by masked
 *   CAS; the snapshot rule of Fig. 7);
 * - validate.c: validation of the cells read and not locked (one header
 *   READ per record; the TS_commit fallback after 65,536 us);
 * - redo.c: the redo log entry {txn id, modifications, dependency ids}
 *   WRITTEN to the coordinator's log segment before the updates (§6);
 * - lww.c: last-writer-wins through a record's writer count (§6);
 * - commit.c: cells WRITE -> EN WRITE -> masked-CAS unlock, one ordered
 *   batch per record's primary QP, and the release on an abort;
 * - recover.c: CN crash recovery (a fence, the dead CNs' redo entries
 *   applied, every cell lock bit cleared).
 */

#include <sys/queue.h>

#include <rte_log.h>

#include "dtxn_txn_driver.h"

extern int dtxn_crest_logtype;
#define CREST_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_##level, dtxn_crest_logtype, "dtxn.cc.crest: " fmt "\n", ##__VA_ARGS__)

/** A cacheline, bytes: the unit of atomicity of one RDMA access (crest.md §1). */
#define CREST_LINE 64
/** Value bytes per cacheline of a cell: the rest is the 8 B cell version. */
#define CREST_LINE_DATA (CREST_LINE - 8)
/** Most cells a record has: the EN array's entries; columns past the 20th merge into the 20th. */
#define CREST_MAX_CELLS 20
/** Offset of the lock word in a record (after the 16 B slot header: TableID, Key). */
#define CREST_LOCK_OFF 16
/** Offset of the EN array (2 B per cell). */
#define CREST_EN_OFF 24
/** Bytes of the header: one cacheline. */
#define CREST_HDR_SIZE CREST_LINE

/** Lock bit of cell @p c: MSB = cell 0 (crest.md §1, masked CAS). */
#define CREST_LOCK_BIT(c) (UINT64_C(1) << (63 - (c)))
/** The spare lock bit: the record is logically deleted (crest.md §1). */
#define CREST_LOCK_DELETED UINT64_C(1)

/**
 * cell=0 (record-level) only: the "shadow" lock bit of table cell @p c,
 * what cell-level CREST would lock, taken and released beside the
 * record's bit (CREST_LOCK_BIT(0)) so that a conflict can be told false
 * (false_abort.c). Cells past the 20th share the 20th's: bits 62..43.
 */
#define CREST_SHADOW_BIT(c) (UINT64_C(1) << (62 - (c)))
/** Every shadow bit. */
#define CREST_SHADOW_MASK (((UINT64_C(1) << CREST_MAX_CELLS) - 1) << (63 - CREST_MAX_CELLS))

/** Cell version: EN (16 bits) << 48 | TS_commit (48 bits). */
#define CREST_TS_BITS 48
#define CREST_TS_MASK ((UINT64_C(1) << CREST_TS_BITS) - 1)
#define CREST_VER(en, ts) (((uint64_t)(en) << CREST_TS_BITS) | ((ts) & CREST_TS_MASK))
#define CREST_VER_EN(v) ((uint16_t)((v) >> CREST_TS_BITS))
#define CREST_VER_TS(v) ((v) & CREST_TS_MASK)

/**
 * After this long between a txn's first read and its validation, ENs may
 * have wrapped (2 B, 65,536 updates at >= 1 us each): validate by the
 * cells' TS_commit instead (crest.md §1, from Sherman).
 */
#define CREST_EN_WRAP_NS (UINT64_C(65536) * 1000)

/** Re-reads of a record whose read cells failed the snapshot rule (torn). */
#define CREST_MAX_REREAD 8

/** The record header, one cacheline (crest.md §1, Fig. 6). */
struct crest_hdr {
	struct dtxn_slot_hdr slot;        /**< Key, TableID, flags */
	uint64_t lock;                    /**< one bit per cell (MSB = cell 0); bit 0: deleted */
	uint16_t en[CREST_MAX_CELLS];     /**< epoch number of each cell */
};
_Static_assert(sizeof(struct crest_hdr) == CREST_HDR_SIZE, "CREST header is one cacheline");
_Static_assert(offsetof(struct crest_hdr, lock) == CREST_LOCK_OFF, "lock offset");
_Static_assert(offsetof(struct crest_hdr, en) == CREST_EN_OFF, "EN array offset");

/** Where a table's cells are: value range and record lines, per cell. */
struct crest_layout {
	uint32_t n_cells;                      /**< 1..CREST_MAX_CELLS */
	uint32_t image_size;                   /**< record bytes on the MN (the slot) */
	uint32_t val_off[CREST_MAX_CELLS];     /**< cell's first byte in the value */
	uint32_t val_len[CREST_MAX_CELLS];     /**< cell's bytes */
	uint32_t rec_off[CREST_MAX_CELLS];     /**< cell's first version word in the record */
	uint32_t n_lines[CREST_MAX_CELLS];     /**< cell's cachelines (versions) */
};

/** The options (options.c; doc/guides/crest.md, "Options"). */
struct crest_opts {
	uint8_t cell;      /**< 1: cell-level (default); 0: one cell per record (record-level) */
	uint8_t parallel_commit; /**< 1: redo entry before the updates (default); 0: no log */
	uint8_t local;     /**< 1: localized execution through the lcore's record cache (§5) */
	uint8_t ro_cache;  /**< local=1 only: 1: RO mode serves reads from the cached image (§5) */
	/** local=1 only: which record caches (enum crest_cache_kind; cache=). */
	uint8_t cache;
};

/**
 * The record caches of localized execution (crest_opts.cache, --cc-opts
 * cache=lcore|cn|part; doc/guides/crest.md, "Localized execution").
 */
enum crest_cache_kind {
	/** One per worker lcore, for every record its coordinators touch (default). */
	CREST_CACHE_LCORE = 0,
	/**
	 * One per CN, shared by all its workers: sim fabric only, where one
	 * OS thread runs every lcore of a CN ("A CN-wide cache").
	 */
	CREST_CACHE_CN = 1,
	/**
	 * The CN's records partitioned by lcore: each worker's cache holds
	 * only the records homed on it (crest_lc_homes()), read-write txns
	 * are routed to the home of their first record (dtxn_cc_ops.route),
	 * and a record homed on another lcore takes the MN path, as another
	 * CN's would. No cross-lcore access: any fabric ("A cache
	 * partitioned by lcore").
	 */
	CREST_CACHE_PART = 2,
};

/**
 * A record's writers on this CN (last-writer-wins, lww.c). Owned by the
 * record cache whose coordinators write the record (an lcore's, or with
 * cache=cn the CN's, whose lcores the sim runs on one thread); no lock.
 */
struct crest_lww {
	uint32_t writers;        /**< local txns holding a write, not yet decided */
	uint64_t best_seq;       /**< append sequence of @p best */
	const void *best;        /**< newest committable version, NULL if none */
};

/** What the writer that leaves a record does (crest_lww_leave()). */
enum crest_lww_act {
	CREST_LWW_WAIT,     /**< other writers remain: nothing (the last one acts) */
	CREST_LWW_WRITE,    /**< last writer: write crest_lww.best to the MN, then unlock */
	CREST_LWW_RELEASE,  /**< last writer, nothing committable: unlock only */
};

struct crest_lc_obj;
struct crest_lc;

/** What a read through the record cache saw, per item (validate.c). */
struct crest_lc_seen {
	uint32_t loc_cells;     /**< cells read while the lcore held their MN locks */
	uint32_t cached;        /**< cells served from the cached image, no READ (RO mode) */
	uint64_t gen;           /**< the object's lock_gen then */
};

/** Most dependencies (and dependents) of one local txn. */
#define CREST_LC_MAX_DEPS 32

/** A local txn as others see it: a coordinator's txn on this lcore (struct crest_coord). */
struct crest_lc_txn {
	uint64_t id;          /**< the txn running (0: none) */
	uint64_t ts;          /**< TS_exec, 0 until its first block ended */
	uint8_t state;        /**< CREST_LC_RUNNING, _COMMITTED, _ABORTED */
	uint8_t doomed;       /**< a dependency aborted: it must abort (cascade) */
	/**
	 * The coordinator's committed local versions whose write-back has not
	 * landed (their redo entries must stay reachable in its log: redo.c
	 * does not wrap the log while this is not 0). Raised by the writer as
	 * it leaves committed; lowered by the last writer: with cache=lcore at
	 * its crest_lc_compose() (the writers share the lcore's QPs, so the
	 * writer's next log WRITE follows the write-back: RC order), with
	 * cache=cn once its write-back completed (crest_local_unpin(): the
	 * last writer may post on another lcore's QPs).
	 */
	uint32_t log_pins;
	uint16_t n_deps;
	uint16_t n_dependents;
	struct crest_lc_ref {
		struct crest_lc_txn *t;
		uint64_t id;
	} deps[CREST_LC_MAX_DEPS], dependents[CREST_LC_MAX_DEPS];
};

/** Protocol state of one item, from the arena (item->cc[0]). */
struct crest_item {
	struct dtxn_loc loc;          /**< first: locating it (lib/txn) */
	struct dtxn_cell_vers vers;   /**< per-cell versions (history; item->cell_vers) */
	uint32_t rd;                  /**< CREST cells read */
	uint32_t wr;                  /**< CREST cells written */
	uint64_t shadow;              /**< cell=0: shadow bits of the table cells read or written (false_abort.c) */
	uint32_t en_wr;               /**< header ENs the commit WRITEs (cell=0: shadow ENs too) */
	uint16_t en[CREST_MAX_CELLS]; /**< EN of each read cell, as seen (cell=0: en[1..19] the shadow ENs) */
	struct crest_hdr vhdr;        /**< validation: the header READ */
	struct dtxn_bucket_hdr bhdr;  /**< delete: its bucket's header, read under the bucket lock */
	uint64_t bimg[2];             /**< insert/delete: bucket header image written at commit */
	/* local=1 (local.c) */
	struct crest_lc_obj *obj;     /**< its record's local object, NULL: not through the cache */
	struct crest_lc_seen seen;    /**< what its cache read saw */
	uint64_t seq;                 /**< its local version's sequence, 0: none yet */
	uint8_t lk;                   /**< local lock it took in the current block: 0, 1 shared, 2 exclusive */
	uint8_t joined;               /**< counted in the object's writers */
	uint8_t lk_copied;            /**< it->slot holds the record image */
};

/**
 * The recovery fence (recover.c): shared by every coordinator of the
 * cluster (a memzone across processes). @c busy[gid] is 1 while that
 * coordinator has a txn open; a raised fence makes new txns wait at begin.
 */
struct crest_fence {
	uint32_t on;         /**< a recovery is clearing dead CNs' lock bits */
	uint32_t rsvd;
	uint8_t busy[];      /**< by coordinator gid */
};

/** What crest_shared keeps for recovery. */
struct crest_shared_rec {
	struct crest_fence *fence;
	uint32_t n_coords;
	bool mz;             /**< the fence is the memzone (not freed by this process) */
};

/** Per-coordinator state. */
struct crest_coord {
	const struct crest_shared_rec *rec; /**< the db's (crest_shared_rec_of()) */
	struct crest_opts opts;
	struct crest_layout lay[DTXN_MAX_TABLES]; /**< per table id */
	uint64_t sink;                 /**< old values of fire-and-forget masked CASes */
	uint64_t log_head[DTXN_MAX_NODES]; /**< next redo entry's offset in the log segment, per MN */
	struct crest_lc *lc;           /**< local=1: the lcore's record cache (the worker's) */
	struct crest_lc_txn lt;        /**< local=1: the running txn as the cache sees it */
	/** local=1: oldest time the MN showed a cell the txn read from the cache (EN wrap) */
	uint64_t cached_since;
	uint32_t blk_start;            /**< local=1: first item of the current execution block */
	/**
	 * cache=cn: the writers whose log pins the running txn's write-backs
	 * lower once they completed (crest_local_unpin()); from the txn arena.
	 */
	struct crest_lc_txn **unpin;
	uint32_t n_unpin;
	uint64_t begin_ns;             /**< local=1: the attempt's begin (DTXN_WAIT_WRITER_LIMIT) */
	uint64_t begin_waited;         /**< local=1: the coordinator's waits at that begin, ns */
};

static inline struct crest_coord *
crest_coord_of(const struct dtxn_txn *t)
{
	return t->coord->cc_priv;
}

static inline struct crest_item *
crest_item_of(const struct dtxn_item *it)
{
	return (struct crest_item *)(uintptr_t)it->cc[0];
}

static inline struct crest_hdr *
crest_hdr_of(const struct dtxn_item *it)
{
	return it->slot;
}

static inline const struct crest_layout *
crest_layout_of(const struct dtxn_txn *t, const struct dtxn_item *it)
{
	return &crest_coord_of(t)->lay[it->table->def.id];
}

/** Lock bits of the cells in @p cells. */
static inline uint64_t
crest_lock_bits(uint32_t cells)
{
	uint64_t bits = 0;

	for (; cells != 0; cells &= cells - 1)
		bits |= CREST_LOCK_BIT(__builtin_ctz(cells));
	return bits;
}

/**
 * Lock bits of @p it's record that the txn holds, through any of its
 * items (e.g. TPC-C Delivery reads a NEW-ORDER row, then deletes it).
 */
static inline uint64_t
crest_own_bits(const struct dtxn_txn *t, const struct dtxn_item *it)
{
	uint64_t own = 0;

	for (uint32_t j = 0; j < t->n_items; j++) {
		const struct dtxn_item *o = &t->items[j];

		if ((o->flags & DTXN_ITEM_F_LOCKED) && o->slot_raddr == it->slot_raddr)
			own |= o->lock_bits;
	}
	return own;
}

/* options.c */
void crest_opts_default(struct crest_opts *o);
int crest_opts_parse(const char *s, struct crest_opts *o, char *err, size_t errlen);
int crest_check_options(const char *opts, char *err, size_t errlen);
/**
 * dtxn_cc_ops.check_cluster: cache=cn only on the sim fabric (@p fabric
 * "sim"), where one OS thread runs every lcore of a CN, so that the CN's
 * shared record cache needs no atomic and no lock; @p n_mn, @p n_cn
 * unused. Any thread.
 * @return 0, or -EINVAL with a one-line message in @p err (bad options,
 *   cache=cn on another fabric or an unknown one, NULL).
 */
int crest_check_cluster(const char *opts, unsigned n_mn, unsigned n_cn, const char *fabric,
			char *err, size_t errlen);
/** The db's options (checked by dtxn_db_create(), so they parse). */
void crest_opts_of_db(const struct dtxn_db *db, struct crest_opts *o);
/**
 * The report's label of option set @p o (dtxn_db_variant(): the JSON
 * report's config "variant", the banner's "crest (...)"): each option that
 * differs from the default, by name ("record-level", "local", "ro_cache",
 * "no parallel commit", in this order, joined by ", "). Any thread.
 * @return a static string, or NULL for the defaults.
 */
const char *crest_opts_name(const struct crest_opts *o);
/** dtxn_cc_ops.variant: crest_opts_name() of the db's options. */
const char *crest_variant(const struct dtxn_db *db);
/**
 * Whether CN crash recovery (recover.c) is sound for db @p db's options:
 * not with local=1 and parallel_commit=0, where a committed txn's cells
 * may wait in its lcore's record cache for the last local writer's
 * write-back and no redo entry holds them. Any thread.
 */
bool crest_can_recover(const struct dtxn_db *db);

/* format.c */
/**
 * Lays table @p def's cells out: its columns in order, those past the
 * 20th merged into the 20th (all in one cell when @p cell_level is 0).
 */
void crest_layout_make(const struct dtxn_table_def *def, bool cell_level,
		       struct crest_layout *lay);
/** Bytes of cell @p c in the record, its versions included (from lay->rec_off[c]). */
uint32_t crest_cell_span(const struct crest_layout *lay, unsigned c);
/** CREST cells holding the table columns of mask @p cols (dtxn_item rd/wr_cells). */
uint32_t crest_cells_of(const struct dtxn_table_def *def, const struct crest_layout *lay,
			uint32_t cols);
/** Version word of line @p k of cell @p c in record image @p rec. */
uint64_t *crest_line_ver(void *rec, const struct crest_layout *lay, unsigned c, unsigned k);
/** Copies the cells @p cells of record image @p rec into the value @p val. */
void crest_gather(const struct crest_layout *lay, const void *rec, void *val, uint32_t cells);
/** Copies the cells @p cells of the value @p val into record image @p rec. */
void crest_scatter(const struct crest_layout *lay, void *rec, const void *val, uint32_t cells);
/**
 * Snapshot rule (Fig. 7) of record image @p rec for cells @p cells: none
 * is locked by another txn (@p foreign: lock bits others hold) and every
 * line of each carries the header's EN.
 * @return DTXN_OK, DTXN_ABORT_LOCKED_READ (a cell is locked), or
 *   DTXN_ABORT_VALIDATION (a cell's lines disagree with the header: torn).
 */
int crest_snapshot_check(const struct crest_layout *lay, const void *rec, uint32_t cells,
			 uint64_t foreign);
int crest_table_geometry(const struct dtxn_db *db, struct dtxn_table_def *def,
			 uint32_t *slot_size, uint32_t *aux_size);
uint32_t crest_slot_size(uint32_t value_size);
void crest_slot_format(const struct dtxn_table *t, void *slot, const void *value, void *arg);
void *crest_slot_value(const struct dtxn_table *t, void *slot);
void *crest_mn_value(struct dtxn_db *db, const struct dtxn_table *t, void *mn_slot);
uint32_t crest_local_extra(const struct dtxn_table *t);
int crest_db_init(struct dtxn_db *db);
void crest_db_fini(struct dtxn_db *db);

/* false_abort.c */
/**
 * Shadow bits (CREST_SHADOW_BIT) of the table columns in mask @p cols:
 * column c maps to cell min(c, 19), as cell-level CREST lays them out.
 */
uint64_t crest_shadow_bits(const struct dtxn_table_def *def, uint32_t cols);
/**
 * A conflict on item @p it's record with the lock word @p held (bits of
 * other txns only): with cell=0, marks the txn's abort false
 * (dtxn_txn.false_conflict) when the holders' shadow bits are known and
 * disjoint from the item's. Cell-level CREST locks cells, so its lock
 * conflicts are never false and nothing is marked.
 */
void crest_false_note(struct dtxn_txn *t, const struct dtxn_item *it, uint64_t held);
/**
 * After a lock_conflict in execute: notes (crest_false_note()) the first
 * item whose masked CAS found another holder.
 */
void crest_false_note_lock(struct dtxn_txn *t);
/**
 * cell=0: bumps in record image @p h the shadow ENs of the cells item
 * @p it writes (all for an insert or delete).
 * @return the header ENs to WRITE beside the record's own (en[0] up to the
 *   highest shadow EN bumped, one run); 0 with cell=1.
 */
uint32_t crest_false_stamp(const struct dtxn_txn *t, const struct dtxn_item *it,
			   struct crest_hdr *h);
/** cell=0: notes the shadow ENs of record image @p h in @p ci->en[1..19]. */
void crest_false_seen(const struct dtxn_txn *t, struct crest_item *ci, const struct crest_hdr *h);
/**
 * A validation of item @p it found the record's EN changed in header
 * @p h: with cell=0, marks the abort false when no shadow EN of a cell it
 * read or writes changed.
 */
void crest_false_note_en(struct dtxn_txn *t, const struct dtxn_item *it,
			 const struct crest_hdr *h);

/* execute.c */
int crest_execute(struct dtxn_txn *t);
/**
 * The snapshot rule (crest_snapshot_check()) for cells @p cells of item
 * @p i's record image (@p foreign: the lock bits of others), with what
 * follows: a torn image is read again (*@p again set, dtxn_loc_reread()'s
 * result returned), a locked cell is noted for the false-abort count.
 * @return DTXN_OK, or an abort reason.
 */
int crest_snapshot_take(struct dtxn_txn *t, uint32_t i, uint32_t cells, uint64_t foreign,
			bool *again);
/** dtxn_cc_ops.block_end: local=1 ends the execution block (local.c); else nothing. */
int crest_block_end(struct dtxn_txn *t);
/**
 * Ends a txn that does not commit: releases every lock it holds
 * (fire-and-forget) and leaves the recovery fence (crest_fence_leave()).
 * Every failed step (execute, block end, commit) and crest_abort() end
 * here; before, a failed execute left the fence busy until the
 * coordinator's next begin, and one that never came (the run's end) made
 * a recovery's fence wait for ever (recover.c, found by dtxn-soak).
 */
void crest_release(struct dtxn_txn *t);

/* validate.c */
/** Validates the cells read and not locked by the txn. DTXN_OK or a reason (nothing released). */
int crest_validate(struct dtxn_txn *t);

/* lww.c */
/** A local txn starts writing the record of @p o. */
void crest_lww_join(struct crest_lww *o);
/**
 * A writer of @p o is decided: @p committable with its version @p ver,
 * appended at sequence @p seq of the record's version list, or aborted.
 * @return what the caller does: CREST_LWW_WAIT (others remain),
 *   CREST_LWW_WRITE (it was the last: write o->best, the newest
 *   committable version by sequence, then unlock) or CREST_LWW_RELEASE
 *   (the last, and none committable: unlock only).
 */
enum crest_lww_act crest_lww_leave(struct crest_lww *o, bool committable, uint64_t seq,
				   const void *ver);

/*
 * cache.c: the record cache of localized execution (§5, local=1). Every
 * function below runs on the thread of the cache's coordinators: its
 * lcore's (cache=lcore), or the sim's one thread (cache=cn); none is
 * thread-safe, none yields or touches the fabric.
 */

/** Most uncommitted-or-unwritten versions one cached record holds. */
#define CREST_LC_MAX_VERS 16
enum { CREST_LC_RUNNING, CREST_LC_COMMITTED, CREST_LC_ABORTED };

/** One local version of a cached record (append-only, §5). */
struct crest_lc_ver {
	struct crest_lc_ref wr; /**< its writer */
	uint64_t tag;           /**< the writer's TS_exec */
	uint64_t seq;           /**< append order on the record */
	uint32_t cells;         /**< CREST cells it wrote */
	uint8_t state;          /**< the writer's outcome as far as known (CREST_LC_*) */
	/**
	 * Committed and its writer's redo entry persisted, so a last writer
	 * of another coordinator may write it back (crest_lc_undurable()).
	 * cache=lcore: set at once (the writers share the lcore's QPs).
	 */
	uint8_t durable;
	void *img;              /**< record image (cells it wrote, stamped with the writer's id) */
};

/**
 * A cached record: a local object (§5), owned by one worker lcore's cache,
 * or (cache=cn) by the CN's, which the sim's one thread runs.
 */
struct crest_lc_obj {
	TAILQ_ENTRY(crest_lc_obj) idle_link; /**< in the cache's idle list (refs 0, no writer) */
	uint8_t idle;           /**< on that list: kept for RO-mode reads, evicted first */
	uint32_t table_id;
	uint64_t key;
	dtxn_raddr_t raddr;     /**< primary slot, once ready */
	uint32_t refs;          /**< items of local txns on it */
	uint8_t ready;          /**< base holds a fetched image */
	struct crest_lc_txn *x_owner; /**< local 2PL: exclusive holder, or NULL */
	uint32_t s_count;       /**< local 2PL: shared holders */
	uint64_t mn_bits;       /**< cell lock bits the cache's lcore (cache=cn: CN) holds on the MN */
	uint64_t lock_gen;      /**< bumped each time mn_bits are given back */
	struct crest_lww lww;   /**< undecided local writers */
	/**
	 * Writers admitted since the MN locks were last given back: at
	 * CREST_LC_MAX_VERS new ones are refused until the last writer writes
	 * back, so that the version list cannot overflow and the record's MN
	 * locks come back for other CNs.
	 */
	uint32_t admitted;
	uint16_t epoch[CREST_MAX_CELLS]; /**< the MN's ENs of the base's cells */
	/**
	 * RO mode: cells of the base to READ again before serving them (a
	 * validation of a cached read found them changed or locked).
	 */
	uint32_t stale;
	uint64_t seen_ns[CREST_MAX_CELLS]; /**< when the MN last showed each base cell's EN */
	uint64_t wts[CREST_MAX_CELLS];   /**< highest TS_exec that wrote each cell */
	uint64_t rts[CREST_MAX_CELLS];   /**< highest TS_exec that read each cell */
	uint64_t next_seq;
	uint32_t n_vers;
	struct crest_lc_ver vers[CREST_LC_MAX_VERS]; /**< oldest first */
	void *base;             /**< the record as the MN holds it (and will, after a write-back) */
};


/**
 * Creates a record cache (a worker's, or with cache=cn a CN's): at most
 * @p max_objs records, each image @p img_size bytes (the largest slot),
 * @p max_imgs images for bases and versions. Main lcore, at worker set-up.
 * NULL + rte_errno (ENOMEM, EINVAL).
 */
struct crest_lc *crest_lc_create(const char *name, uint32_t max_objs, uint32_t img_size,
				 uint32_t max_imgs, int socket_id);
void crest_lc_destroy(struct crest_lc *lc);
/**
 * RO mode (ro_cache=1): @p keep, an object no txn uses stays, idle, for
 * later reads (crest_lc_put()); else it goes at once (the default).
 */
void crest_lc_keep_idle(struct crest_lc *lc, bool keep);
/**
 * cache=part: the cache holds only the records homed on partition
 * @p part of @p n_parts (crest_lc_homes()); crest_lc_get() refuses the
 * others. @p n_parts 0 or 1 (the default): every record. Main lcore, at
 * worker set-up.
 */
void crest_lc_partition(struct crest_lc *lc, uint32_t part, uint32_t n_parts);
/**
 * Whether the record of @p key is homed on @p lc's partition: the key's
 * locality field (dtxn_key_shard(): TPC-C's warehouse, SmallBank's
 * account) modulo the partitions is its index; true for an unpartitioned
 * cache. Any thread (reads fields set at set-up).
 */
bool crest_lc_homes(const struct crest_lc *lc, uint64_t key);
/** Next TS_exec of the cache (its lcore's, or with cache=cn its CN's; monotonic, > 0). */
uint64_t crest_lc_next_ts(struct crest_lc *lc);
/**
 * Finds or creates (not ready) the object of (@p table_id, @p key) and
 * takes a reference. NULL: full, or (cache=part) the record is homed on
 * another lcore: the caller takes the MN path.
 */
struct crest_lc_obj *crest_lc_get(struct crest_lc *lc, uint32_t table_id, uint64_t key);
/**
 * Drops a reference; when none is left and no writer is undecided the
 * object goes, or (crest_lc_keep_idle()) stays, idle, for RO-mode reads,
 * until crest_lc_get() needs its room (least recently used first).
 */
void crest_lc_put(struct crest_lc *lc, struct crest_lc_obj *o);
/**
 * RO mode (§5): the cells of @p cells that @p o can serve from its cached
 * image without a READ: not held on the MN by the lcore (those are served
 * anyway), not stale, shown by the MN less than half of CREST_EN_WRAP_NS
 * ago, of a valid record. Reading them is validated at commit against the
 * MN's ENs (validate.c).
 */
uint32_t crest_lc_cacheable(const struct crest_lc_obj *o, uint32_t cells, uint64_t now);
/**
 * A validation READ the header @p h of @p o's record for cached cells
 * @p cells, seen at ENs @p en: @p ok, they are still current (the MN
 * showed them now); else they go stale (READ by the next reader).
 */
void crest_lc_confirm(struct crest_lc_obj *o, uint32_t cells, const uint16_t *en, bool ok,
		      uint64_t now);
/**
 * An insert of (@p table_id, @p key) committed its record image @p rec
 * (layout @p lay) at @p raddr: the cache takes it as the record's base,
 * every cell current (RO mode may serve it, validated at commit), unless
 * a local writer holds cells of an older record of the key (then its
 * cells go stale). Nothing when the cache keeps no idle objects
 * (crest_lc_keep_idle()) and has none of the key, or is full.
 */
void crest_lc_inserted(struct crest_lc *lc, const struct crest_layout *lay, uint32_t table_id,
		       uint64_t key, const void *rec, dtxn_raddr_t raddr);
/**
 * A delete of (@p table_id, @p key) committed: the cached image goes (an
 * idle object at once; one in use is served no more and goes with its
 * last reference), so that the next read looks the key up and finds it
 * absent instead of failing validation on the deleted slot.
 */
void crest_lc_deleted(struct crest_lc *lc, uint32_t table_id, uint64_t key);
/**
 * Local 2PL: takes @p o's lock for @p lt, exclusive if @p excl; @p held:
 * what @p lt holds already (0 none, 1 shared, 2 exclusive; shared to
 * exclusive upgrades when it is the only sharer).
 * @return 0, or -EBUSY (another txn holds it: wait by yielding, or abort).
 */
int crest_lc_lock(struct crest_lc_obj *o, struct crest_lc_txn *lt, bool excl, int held);
/** Gives back what crest_lc_lock() took (@p excl: exclusive). */
void crest_lc_unlock(struct crest_lc_obj *o, struct crest_lc_txn *lt, bool excl);
/**
 * Sets the base of @p o from the fetched record image @p rec at
 * @p raddr: every cell when @p o is not ready, else the cells @p cells
 * (those the caller just locked or read from the MN), with their ENs.
 */
void crest_lc_fill(struct crest_lc *lc, struct crest_lc_obj *o, const struct crest_layout *lay,
		   const void *rec, dtxn_raddr_t raddr, uint32_t cells);
/**
 * Reads cells @p cells of @p o for @p lt into the record image @p rec:
 * a cell whose MN lock the lcore holds comes from the newest version
 * (not aborted) that wrote it, else from the base; @p seen notes which
 * came under the lcore's locks. A version of an undecided writer becomes
 * a dependency of @p lt.
 * @return 0; -EAGAIN: a cell was written by a txn of a newer TS_exec
 *   (abort-on-newer-tag); -ENOSPC: too many dependencies.
 */
int crest_lc_read(struct crest_lc_obj *o, struct crest_lc_txn *lt, const struct crest_layout *lay,
		  uint32_t cells, void *rec, struct crest_lc_seen *seen);
/** @p lt (TS_exec known) read cells @p cells of @p o: raises their read TS_exec. */
void crest_lc_note_read(struct crest_lc_obj *o, const struct crest_lc_txn *lt, uint32_t cells);
/**
 * Appends @p lt's version of @p o: cells @p cells of image @p rec (stamped
 * by the caller). Needs lt->ts.
 * @return its sequence number (> 0); -EAGAIN: a newer TS_exec read or
 *   wrote one of the cells; -ENOSPC: the record's versions or the images
 *   ran out.
 */
int64_t crest_lc_append(struct crest_lc *lc, struct crest_lc_obj *o, struct crest_lc_txn *lt,
			const struct crest_layout *lay, const void *rec, uint32_t cells);
/**
 * Records @p lt's outcome in its version @p seq of @p o; @p durable: a
 * committed version may be written back by any last writer at once
 * (cache=lcore), else only once crest_lc_persisted() said so (cache=cn).
 */
void crest_lc_decide(struct crest_lc_obj *o, uint64_t seq, bool committed, bool durable);
/** cache=cn: the writer of version @p seq of @p o has its redo entry persisted. */
void crest_lc_persisted(struct crest_lc_obj *o, uint64_t seq);
/**
 * cache=cn: whether @p o holds a committed version of a coordinator other
 * than @p lt's whose redo entry may not be persisted yet: a last writer
 * must not compose it into a write-back (the write-back, on its own QPs,
 * could land before that entry, on the writer's).
 */
bool crest_lc_undurable(const struct crest_lc_obj *o, const struct crest_lc_txn *lt);
/** Starts txn @p id on @p lt (the coordinator's previous one has ended). */
void crest_lc_txn_begin(struct crest_lc_txn *lt, uint64_t id);
/** Ends @p lt's txn; an abort dooms its dependents (cascading aborts). */
void crest_lc_txn_end(struct crest_lc_txn *lt, bool committed);
/** @return true when every dependency of @p lt is decided. */
bool crest_lc_deps_decided(const struct crest_lc_txn *lt);
/**
 * Last writer (crest_lww_leave() said CREST_LWW_WRITE): composes into the
 * base, per cell, the newest committed version that wrote it, gives each
 * such cell its next EN (line versions too), frees every version and gives
 * the MN locks back (mn_bits 0, lock_gen bumped). The writers of the
 * committed versions freed get their log pins lowered now (@p unpin NULL:
 * cache=lcore) or appended to @p unpin (*@p n_unpin entries, room for
 * CREST_LC_MAX_VERS more), for the caller to lower once the write-back
 * completed (cache=cn).
 * @return the cells to write back from o->base (0: none changed).
 */
uint32_t crest_lc_compose(struct crest_lc *lc, struct crest_lc_obj *o,
			  const struct crest_layout *lay, struct crest_lc_txn **unpin,
			  uint32_t *n_unpin);
/** The MN lock bits the cache (lcore, or CN) holds on @p o's record (0 for NULL). */
static inline uint64_t
crest_lc_bits(const struct crest_lc_obj *o)
{
	return o != NULL ? o->mn_bits : 0;
}
/** Last writer, nothing committed: frees the versions, gives the MN locks back. */
void crest_lc_drop(struct crest_lc *lc, struct crest_lc_obj *o);

/*
 * local.c: the coordinator's coroutine (the cache's thread, as cache.c);
 * the functions that wait say so (they yield).
 */
/**
 * local=1, execute: items [@p first, n_items) take their local objects and
 * locks ((TableID, Key) order, waiting by yielding while it cannot
 * deadlock) and are served from the cache or routed to the MN.
 * @return DTXN_OK, DTXN_ABORT_LOCK_CONFLICT (a lock it may not wait for),
 *   DTXN_ABORT_VALIDATION (abort-on-newer-tag), DTXN_ABORT_TOO_LARGE.
 */
int crest_local_prepare(struct dtxn_txn *t, uint32_t first);
/** local=1: item @p i's record image came from the MN (read, or locked): fill the cache, serve it. */
int crest_local_take(struct dtxn_txn *t, uint32_t i);
/** local=1: ends the current execution block (TS_exec, versions, local locks). */
int crest_local_block_end(struct dtxn_txn *t);
/** local=1: yields until every dependency is decided. DTXN_OK, or DTXN_ABORT_VALIDATION (one aborted). */
int crest_local_wait(struct dtxn_txn *t);
/**
 * local=1: notes the attempt's begin, so that one aborting on a record's
 * full round of writers counts its time as DTXN_WAIT_WRITER_LIMIT (the
 * waits of the other kinds are counted where they happen: local.c, lib/txn).
 */
void crest_local_waits_begin(struct dtxn_txn *t);
/**
 * local=1: the txn (@p committed, or aborted) leaves the writers of its
 * records; for each record it was the last writer of, adds to @p b the
 * write-back of the composed cells and the unlock of the cache's bits.
 * With cache=cn it first waits (yielding) until those records hold no
 * committed version of another coordinator whose redo entry is not
 * persisted (crest_local_persisted()), and collects the writers whose log
 * pins crest_local_unpin() lowers after @p b completed. The caller posts
 * @p b without yielding in between (others may wait for its entry).
 * @return records written back or unlocked.
 */
int crest_local_leave(struct dtxn_txn *t, struct dtxn_batch *b, bool committed);
/**
 * local=1: the txn's commit batch (its redo entry) completed: its
 * committed local versions may be written back by any last writer
 * (cache=cn; a no-op for cache=lcore, where they may at once).
 */
void crest_local_persisted(struct dtxn_txn *t);
/**
 * local=1: the batch of crest_local_leave() completed: lowers the log
 * pins of the writers whose versions it wrote back (cache=cn; none are
 * collected with cache=lcore, where compose lowered them).
 */
void crest_local_unpin(struct dtxn_txn *t);
/**
 * local=1: insert or delete item @p it committed: its record image fills
 * the lcore's cache (insert) or the cached image goes (delete).
 */
void crest_local_whole_done(struct dtxn_txn *t, const struct dtxn_item *it);
/** local=1: frees the txn's local locks and objects, records its outcome (dependents). */
void crest_local_end(struct dtxn_txn *t, bool committed);

/* redo.c */
/** Redo entry header (doc/guides/crest.md, "Redo log"). */
struct crest_redo_hdr {
	uint64_t txn_id;   /**< the writer; also the entry's last 8 B (torn-entry check) */
	uint32_t bytes;    /**< whole entry, trailer included, multiple of 8 */
	uint16_t n_mods;   /**< modifications after the dependency ids */
	uint16_t n_deps;   /**< dependency txn ids after the header (0 without local execution) */
	/**
	 * local=1: the writer's TS_exec (its lcore's order of the local
	 * versions of one cell, which recovery follows for deferred cells);
	 * 0 with local=0.
	 */
	uint64_t ts_exec;
};
/** crest_redo_mod.flags: a cached record's cells, whose write-back is the last local writer's. */
#define CREST_MOD_DEFERRED 1u
/** One modification: a record's written cells, or a whole record. */
struct crest_redo_mod {
	uint32_t table_id;
	uint32_t cells;       /**< CREST cells written (all for an insert or delete) */
	uint64_t key;
	dtxn_raddr_t raddr;   /**< the record on its primary */
	uint8_t kind;         /**< dtxn_item kind */
	uint8_t flags;        /**< CREST_MOD_DEFERRED, or 0 */
	uint8_t rsvd[2];
	uint32_t len;         /**< bytes that follow: each written cell's span, or the record */
};
_Static_assert(sizeof(struct crest_redo_hdr) == 24 && sizeof(struct crest_redo_mod) == 32,
	       "redo entry layout");
/**
 * Builds the txn's redo entry from its stamped record images and adds its
 * WRITE to @p b, one to the coordinator's log segment on each MN the
 * commit writes to, ahead of the updates there (RC order). Nothing is
 * added when the txn writes nothing.
 * @return DTXN_OK, DTXN_ABORT_TOO_LARGE (entry larger than the segment,
 *   or the arena is full) or DTXN_ABORT_LOCK_CONFLICT (local=1: the log
 *   would wrap over entries whose deferred cells are not written back
 *   yet, and they did not come within 20 us). May yield.
 */
int crest_redo_add(struct dtxn_txn *t, struct dtxn_batch *b);

/* commit.c */
/**
 * Adds to @p b the WRITEs of cells @p cells of record image @p img (with
 * their ENs) to item @p it's record on every replica (local=1's write-back).
 */
void crest_writeback_add(struct dtxn_txn *t, struct dtxn_batch *b, const struct dtxn_item *it,
			 const void *img, uint32_t cells);
int crest_commit(struct dtxn_txn *t);
void crest_abort(struct dtxn_txn *t);

/* recover.c */
/** Sets up @p r's fence for @p n_coords coordinators (a memzone if @p multi_process). 0 or -ENOMEM. */
int crest_fence_init(struct crest_shared_rec *r, uint32_t n_coords, bool multi_process);
void crest_fence_fini(struct crest_shared_rec *r);
/** dtxn_cc_ops.begin: waits (yielding) while a recovery's fence is up, then marks the txn open. */
void crest_fence_enter(struct dtxn_txn *t);
/** The txn ended (committed or aborted): no longer open. */
void crest_fence_leave(struct dtxn_txn *t);
/** The db's recovery state (format.c). */
const struct crest_shared_rec *crest_shared_rec_of(const struct dtxn_db *db);
/** A CN's shared record cache (cache=cn) and the workers using it. */
struct crest_cn_lc {
	struct crest_lc *lc;  /**< NULL until the CN's first worker creates it */
	uint32_t refs;        /**< workers of the CN using it; the last one destroys it */
};
/**
 * The shared record cache slot of CN @p cn_node (fabric node id) in db
 * @p db's state (format.c). Worker set-up and tear-down only: with
 * cache=cn the sim creates and destroys every worker on one thread.
 * @return the slot, or NULL (@p cn_node out of range).
 */
struct crest_cn_lc *crest_cn_lc_of(const struct dtxn_db *db, uint16_t cn_node);
/** dtxn_cc_ops.recover: fence, redo entries, unlock (doc/guides/crest.md, "Recovery"); -EINTR: gave up at the fence after @p c stopped. */
int crest_recover(struct dtxn_coord *c, struct dtxn_recovery *rec);

#endif /* DTXN_CREST_PRIVATE_H */
