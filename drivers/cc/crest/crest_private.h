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
};

/**
 * A record's writers on this CN (last-writer-wins, lww.c). Owned by the
 * lcore whose coordinators write the record; no lock.
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
	uint64_t log_head;             /**< next redo entry's offset in the log segment */
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
/** The db's options (checked by dtxn_db_create(), so they parse). */
void crest_opts_of_db(const struct dtxn_db *db, struct crest_opts *o);
const char *crest_variant(const struct dtxn_db *db);

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
/** Releases every lock the txn holds (fire-and-forget). */
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

/* redo.c */
/** Redo entry header (doc/guides/crest.md, "Redo log"). */
struct crest_redo_hdr {
	uint64_t txn_id;   /**< the writer; also the entry's last 8 B (torn-entry check) */
	uint32_t bytes;    /**< whole entry, trailer included, multiple of 8 */
	uint16_t n_mods;   /**< modifications after the dependency ids */
	uint16_t n_deps;   /**< dependency txn ids after the header (0 without local execution) */
};
/** One modification: a record's written cells, or a whole record. */
struct crest_redo_mod {
	uint32_t table_id;
	uint32_t cells;       /**< CREST cells written (all for an insert or delete) */
	uint64_t key;
	dtxn_raddr_t raddr;   /**< the record on its primary */
	uint8_t kind;         /**< dtxn_item kind */
	uint8_t rsvd[3];
	uint32_t len;         /**< bytes that follow: each written cell's span, or the record */
};
_Static_assert(sizeof(struct crest_redo_hdr) == 16 && sizeof(struct crest_redo_mod) == 32,
	       "redo entry layout");
/**
 * Builds the txn's redo entry from its stamped record images and adds its
 * WRITE to @p b, one to the coordinator's log segment on each MN the
 * commit writes to, ahead of the updates there (RC order). Nothing is
 * added when the txn writes nothing.
 * @return DTXN_OK or DTXN_ABORT_TOO_LARGE (entry larger than the segment,
 *   or the arena is full).
 */
int crest_redo_add(struct dtxn_txn *t, struct dtxn_batch *b);

/* commit.c */
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
/** dtxn_cc_ops.recover: fence, redo entries, unlock (doc/guides/crest.md, "Recovery"). */
int crest_recover(struct dtxn_coord *c, struct dtxn_recovery *rec);

#endif /* DTXN_CREST_PRIVATE_H */
