/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DTXN_STORE_H
#define DTXN_STORE_H

/**
 * @file
 * The memory store (ARCHITECTURE.md, "Store"): the table catalog, the
 * layout of every MN region, the remote hash index, replica placement,
 * per-coordinator log regions, the MN-side loader and scanner, and the
 * CN-side address cache.
 *
 * MN region layout (every MN):
 *   [tables whose replica it holds][log regions: coordinators x log_bytes]
 *   [lease area][control area][message area]
 *
 * A table is a remote hash index: n_buckets buckets of bucket_size bytes.
 * A bucket is a 16-byte header (struct dtxn_bucket_hdr; 24 with
 * DTXN_TABLE_F_RECLAIM) followed by slots_per_bucket slots of slot_size
 * bytes. A slot begins with a 16-byte
 * header (struct dtxn_slot_hdr); what follows is the protocol's record
 * format (FORD: lock, version, value). Lookup = READ the bucket, match the
 * key; a bucket that overflowed at load time sends the lookup on to the
 * next bucket (linear probing, at most DTXN_STORE_MAX_PROBE buckets).
 *
 * Keys are 64-bit. The low 12 bits carry a shard number taken from the
 * workload's locality field (TPC-C warehouse, TATP subscriber, SmallBank
 * account, KVS key): Lotus §4.2 routes on it.
 *
 * Thread-safety: the catalog is built on the main lcore before the run and
 * read-only afterwards. The loader and scanner run on the MN role's CPU
 * while no coordinator runs. An address cache belongs to one lcore.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "dtxn_fabric.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* Keys                                                               */
/* ------------------------------------------------------------------ */

#define DTXN_KEY_SHARD_BITS 12
#define DTXN_KEY_SHARD_MASK ((UINT64_C(1) << DTXN_KEY_SHARD_BITS) - 1)
/** Largest id that fits beside a shard number. */
#define DTXN_KEY_ID_MAX ((UINT64_C(1) << (64 - DTXN_KEY_SHARD_BITS)) - 1)

/** Makes a record key from an id and the shard (locality) number. */
static inline uint64_t
dtxn_key_make(uint64_t id, uint64_t shard)
{
	return (id << DTXN_KEY_SHARD_BITS) | (shard & DTXN_KEY_SHARD_MASK);
}

/** Shard number of a key. */
static inline uint16_t
dtxn_key_shard(uint64_t key)
{
	return (uint16_t)(key & DTXN_KEY_SHARD_MASK);
}

/** Id part of a key. */
static inline uint64_t
dtxn_key_id(uint64_t key)
{
	return key >> DTXN_KEY_SHARD_BITS;
}

/* ------------------------------------------------------------------ */
/* On-MN formats                                                      */
/* ------------------------------------------------------------------ */

/** Slot flag: the slot holds a live record. */
#define DTXN_SLOT_VALID 0x1u
/**
 * Slot flag of a table with DTXN_TABLE_F_DELTA_BY_SLOT: the slot's delta
 * area (the one numbered as its aux area) is in use. Set by the protocol
 * with the first WRITE into that area, kept through deletes and re-inserts
 * (as the aux area is); counted by dtxn_store_heap_census().
 */
#define DTXN_SLOT_DELTA 0x2u

/** Header every slot starts with (16 B). */
struct dtxn_slot_hdr {
	uint64_t key;
	uint16_t table_id;   /**< < DTXN_MAX_TABLES */
	uint16_t flags;      /**< DTXN_SLOT_* */
	/**
	 * The slot's aux area (tables with one, dtxn_catalog_add_table_aux()):
	 * its number in the table's aux heap, 1..aux_areas; 0: none yet. Set
	 * once, by the loader or by the first insert into the slot, and never
	 * changed after: a slot keeps its area through deletes and re-inserts
	 * (doc/guides/store.md, "Aux areas"). The same on every replica.
	 */
	uint32_t aux;
};

/**
 * Header every bucket starts with (16 B). A table with
 * DTXN_TABLE_F_RECLAIM adds an 8 B reclaim watermark after it
 * (dtxn_bucket_reclaimed()): struct dtxn_table bucket_hdr_size says which.
 */
struct dtxn_bucket_hdr {
	uint64_t lock;       /**< insert/delete lock: 0 free, else holder's txn id */
	/**
	 * Bumped (+1) by each committed insert/delete in the bucket; bit 63
	 * is DTXN_BUCKET_OVERFLOW, which the bumps carry along.
	 */
	uint64_t version;
};

/**
 * Bit of a bucket's version: keys hashed to this bucket also live in the
 * next one (set by the loader when the bucket overflowed at load time,
 * never cleared; run-time inserts use only the home bucket). Every writer
 * of a bucket version writes the version it read plus one, so the bit
 * stays; phantom checks compare whole versions.
 */
#define DTXN_BUCKET_OVERFLOW (UINT64_C(1) << 63)

/** Offset of the reclaim watermark in a bucket of a DTXN_TABLE_F_RECLAIM table. */
#define DTXN_BUCKET_RECLAIM_OFF 16

#define DTXN_SLOT_HDR_SIZE 16
#define DTXN_BUCKET_HDR_SIZE 16
_Static_assert(sizeof(struct dtxn_slot_hdr) == DTXN_SLOT_HDR_SIZE, "slot header");
_Static_assert(sizeof(struct dtxn_bucket_hdr) == DTXN_BUCKET_HDR_SIZE, "bucket header");

/** Most buckets a lookup visits (home bucket + overflow). */
#define DTXN_STORE_MAX_PROBE 4

/* ------------------------------------------------------------------ */
/* Catalog                                                            */
/* ------------------------------------------------------------------ */

#define DTXN_MAX_TABLES 16
#define DTXN_MAX_REPLICAS 3
#define DTXN_TABLE_NAME_MAX 32
/** Most columns a table may declare (struct dtxn_table_def.column_size). */
#define DTXN_TABLE_MAX_COLUMNS 32
/** Most versions per record an MVCC protocol may be asked to keep. */
#define DTXN_TABLE_MAX_VERSIONS 64
/** Most update shapes a table may declare (struct dtxn_table_def.updates). */
#define DTXN_TABLE_MAX_UPDATES 8

/**
 * A cell mask: bit c stands for column (cell) c of a table's value, in
 * value order (bit 0 = the first column). A table that declares no column
 * has one cell, the whole value (bit 0). DTXN_CELLS_ALL names every cell
 * of any table.
 */
#define DTXN_CELLS_ALL UINT32_MAX
/** The mask of cell @p c alone. */
#define DTXN_CELL(c) (UINT32_C(1) << (c))

/**
 * One way the workload updates a table's records, for protocols that size
 * per-record room for old versions from it (Motor's attribute-bar size,
 * ABS = sum over the shapes of max(VNum x frequency, 1) x the shape's
 * bytes, Motor §4.2): the cells one update changes and that shape's share
 * of the table's updates.
 */
struct dtxn_update_shape {
	uint32_t cells;      /**< cell mask, non-zero, cells of the table */
	uint16_t permille;   /**< share of the table's updates, 1..1000 */
};

/** What a benchmark asks for a table. */
struct dtxn_table_def {
	uint32_t id;               /**< 0..DTXN_MAX_TABLES-1, unique */
	char name[DTXN_TABLE_NAME_MAX];
	uint32_t value_size;       /**< bytes, 1..65536 */
	uint64_t max_keys;         /**< records the table must hold, incl. inserts */
	uint32_t slots_per_bucket; /**< 0: default 8; at most 256 */
	uint64_t n_buckets;        /**< 0: sized from max_keys at 75% load (a direct index: 100%) */
	/**
	 * Versions an MVCC protocol keeps per record (Motor's VNum, its
	 * paper's defaults: TPC-C 4, TATP 2, SmallBank 3, KVS 4);
	 * 0: the protocol's default; at most DTXN_TABLE_MAX_VERSIONS.
	 * Single-version protocols ignore it.
	 */
	uint32_t n_versions;
	/**
	 * Columns (attributes, "cells") of the value, for protocols that work
	 * per column (Motor's attribute bar, CREST's cells) and for the cell
	 * masks of dtxn_txn_add_ro_cells()/add_rw_cells(): n_columns sizes in
	 * bytes, in value order, summing to value_size (a row struct's fields
	 * with their padding: dtxn_table_def_set_columns()). 0 (the default):
	 * one column, the whole value. At most DTXN_TABLE_MAX_COLUMNS.
	 */
	uint32_t n_columns;
	uint16_t column_size[DTXN_TABLE_MAX_COLUMNS];
	/**
	 * How the workload updates the table (struct dtxn_update_shape), for
	 * protocols that size room for old versions from it; 0 shapes (the
	 * default): the protocol assumes whole-value updates. Shapes need not
	 * cover every update (the rest: a protocol's fallback). At most
	 * DTXN_TABLE_MAX_UPDATES, permilles summing to at most 1000.
	 */
	uint32_t n_updates;
	struct dtxn_update_shape updates[DTXN_TABLE_MAX_UPDATES];
	uint32_t flags;            /**< DTXN_TABLE_F_* */
};

/**
 * Table flag: the workload never updates a record in place (rows are
 * inserted, read and deleted only: TPC-C HISTORY, NEW-ORDER, ITEM), so a
 * protocol needs no room for old versions of changed attributes.
 */
#define DTXN_TABLE_F_NO_UPDATE 0x1u

/**
 * Table flag: the workload never writes the table after loading it (no
 * insert, update or delete: TPC-C ITEM, TATP ACCESS_INFO, secondary
 * indexes), so a multi-versioning protocol keeps one version per record
 * (Motor: VNum 1, no bar). A declaration, not a check: a protocol stays
 * correct if the workload writes such a table anyway (Motor's older
 * snapshots then abort with version_gone).
 */
#define DTXN_TABLE_F_READ_ONLY 0x2u

/**
 * Table flag: the ids of the table's keys (dtxn_key_id()) are dense, each
 * below max_keys and used by one record at most (SmallBank's account
 * numbers). A declaration of the workload, which makes
 * DTXN_TABLE_F_DIRECT_INDEX possible; the store does not check it, but an
 * id at or over max_keys still loads (it may then share a bucket and spill
 * over like any hashed key).
 */
#define DTXN_TABLE_F_DENSE_IDS 0x4u

/**
 * Table flag, set by a protocol's geometry (dtxn_cc_ops.table_geometry)
 * on a table declaring DTXN_TABLE_F_DENSE_IDS: the index maps a key to
 * bucket dtxn_key_id(key) % n_buckets instead of hashing it (the Motor
 * artifact's kDirectFunc, shared/papers/motor.md "Index and cache"), and
 * n_buckets defaults to ceil(max_keys / slots_per_bucket): every bucket
 * holds at most slots_per_bucket of the dense ids, so no record spills
 * over and a lookup READs one bucket. Refused (-EINVAL) without
 * DTXN_TABLE_F_DENSE_IDS.
 */
#define DTXN_TABLE_F_DIRECT_INDEX 0x8u

/**
 * Table flag, set by a protocol's geometry (dtxn_cc_ops.table_geometry)
 * on a table with an aux heap and a delta heap (dtxn_catalog_set_delta()):
 * a row's delta area is the one numbered as its aux area (the slot
 * header's aux), so the record names it with no pointer of its own and
 * no coordinator takes it at run time (no chunk, no FAA); the slot carries
 * DTXN_SLOT_DELTA once the area is in use. The delta heap then has
 * aux_areas areas. Motor's attribute bars (doc/guides/store.md, "Delta
 * heaps"). The layout refuses it (-EINVAL) on a table without both heaps.
 */
#define DTXN_TABLE_F_DELTA_BY_SLOT 0x10u

/**
 * Table flag, set by a protocol's geometry (dtxn_cc_ops.table_geometry):
 * every bucket carries, after its header, an 8 B reclaim watermark
 * (MVCC protocols that reuse the slots of deleted records, Motor): the
 * largest deletion version whose slot an insert took over; a snapshot at
 * or below it may miss a record that existed, so a reader that does not
 * find its key in the bucket aborts (version_gone). 0: none. Read it with
 * dtxn_bucket_reclaimed(). Tables without it have 16 B bucket headers.
 */
#define DTXN_TABLE_F_RECLAIM 0x20u

/**
 * Declares the columns of @p def from the offsets of its row struct's
 * fields (offsetof(), in order): column c spans [offsets[c], offsets[c +
 * 1]) and the last one runs to def->value_size, so padding belongs to the
 * field before it. Set def->value_size first. Any thread.
 *
 * @param n  columns, 1..DTXN_TABLE_MAX_COLUMNS.
 * @return 0; -EINVAL (NULL argument, n out of range, offsets[0] != 0,
 *   offsets not increasing or not below value_size, a column over 65535 B).
 */
int dtxn_table_def_set_columns(struct dtxn_table_def *def, const uint32_t *offsets, unsigned n);

/** @return the table's cells: n_columns, or 1 when it declares none. */
unsigned dtxn_table_n_cells(const struct dtxn_table_def *def);

/** @return the mask of every cell of the table. */
uint32_t dtxn_table_cells_all(const struct dtxn_table_def *def);

/**
 * @return @p cells restricted to the table's cells, or all of them when
 *   none is left (DTXN_CELLS_ALL, 0 and masks of absent cells mean "the
 *   whole record").
 */
uint32_t dtxn_table_cells_norm(const struct dtxn_table_def *def, uint32_t cells);

/**
 * Offset and size, bytes, of cell @p c (< dtxn_table_n_cells()) in the
 * value; the whole value for a table without columns.
 */
void dtxn_table_cell(const struct dtxn_table_def *def, unsigned c, uint32_t *off,
		     uint32_t *size);

/** @return the bytes of the cells in @p cells (cells beyond the table's count nothing). */
uint32_t dtxn_table_cells_bytes(const struct dtxn_table_def *def, uint32_t cells);

/**
 * @return the cells of @p cells whose bytes differ between the values
 *   @p a and @p b (value_size bytes each).
 */
uint32_t dtxn_table_cells_diff(const struct dtxn_table_def *def, uint32_t cells, const void *a,
			       const void *b);

/** Copies the bytes of the cells in @p cells from value @p src to value @p dst. */
void dtxn_table_cells_copy(const struct dtxn_table_def *def, uint32_t cells, const void *src,
			   void *dst);

/**
 * Packs the bytes of the cells in @p cells of @p value into @p seg, in
 * cell order, back to back (dtxn_table_cells_bytes() bytes): a pre-image
 * segment (Motor's attribute bar).
 * @return the bytes written.
 */
uint32_t dtxn_table_cells_pack(const struct dtxn_table_def *def, uint32_t cells,
			       const void *value, void *seg);

/** The inverse of dtxn_table_cells_pack(): @return the bytes read from @p seg. */
uint32_t dtxn_table_cells_unpack(const struct dtxn_table_def *def, uint32_t cells,
				 const void *seg, void *value);

/** A table as laid out on the MNs. */
struct dtxn_table {
	struct dtxn_table_def def;
	uint32_t slot_size;         /**< bytes incl. slot header, multiple of 8 */
	uint32_t bucket_size;       /**< bucket_hdr_size + slots * slot_size */
	/**
	 * Bytes before a bucket's first slot: DTXN_BUCKET_HDR_SIZE, plus 8
	 * (the reclaim watermark at DTXN_BUCKET_RECLAIM_OFF) with
	 * DTXN_TABLE_F_RECLAIM.
	 */
	uint32_t bucket_hdr_size;
	uint64_t n_buckets;
	uint16_t n_replicas;        /**< primary + backups */
	/**
	 * Stripe 0's MNs: mn[0] its primary, mn[r] its replica r
	 * (dtxn_catalog_add_table()). Stripe s's replica r is on MN
	 * (mn[r] + s) % n_mn.
	 */
	uint16_t mn[DTXN_MAX_REPLICAS];
	/**
	 * Offset of replica r's buckets in its region. With
	 * DTXN_PLACEMENT_KEY the same on every MN: each MN holds, for each
	 * replica role r, one stripe at off[r] (and its heaps at aux_off[r],
	 * delta_off[r]).
	 */
	uint64_t off[DTXN_MAX_REPLICAS];
	/**
	 * Placement (struct dtxn_catalog placement, doc/guides/store.md
	 * "Placement"): the buckets are cut into n_stripes stripes of
	 * stripe_buckets consecutive buckets; bucket b is bucket b %
	 * stripe_buckets of stripe b / stripe_buckets. DTXN_PLACEMENT_TABLE:
	 * one stripe of n_buckets. DTXN_PLACEMENT_KEY: n_mn stripes of
	 * ceil(n_buckets / n_mn) (the last ones may be short or empty). Each
	 * stripe has its own aux and delta heaps with their own bump words;
	 * a row's areas are in the heaps of its slot's stripe.
	 */
	uint16_t n_stripes;
	uint16_t n_mn;              /**< the catalog's MNs (stripe MNs wrap modulo it) */
	uint64_t stripe_buckets;
	/**
	 * Aux areas (dtxn_catalog_add_table_aux()): bytes per area, a
	 * multiple of 8; 0 when the table has none. Each replica has an aux
	 * heap at aux_off[r] of its region: a DTXN_AUX_HEAP_HDR-byte header
	 * whose first word counts the areas handed out (the bump word; the
	 * primary's is the one run-time inserts FAA), then aux_areas areas;
	 * area n (1-based, the slot header's aux) is at aux_off[r] +
	 * DTXN_AUX_HEAP_HDR + (n - 1) * aux_size. Every replica's heap has
	 * the same layout, so one area number serves every replica.
	 */
	uint32_t aux_size;
	uint64_t aux_off[DTXN_MAX_REPLICAS]; /**< aux heap's offset in each replica's region */
	/**
	 * Areas in each replica's heap (dtxn_catalog_layout()): the table's
	 * max_keys plus a chunk per coordinator (cat->aux_chunk), at most one
	 * per slot (of a stripe: its heap's slots). 0 without an aux area.
	 */
	uint64_t aux_areas;
	/**
	 * Delta heap (dtxn_catalog_set_delta(); doc/guides/store.md, "Delta
	 * heaps"): bytes per area, a multiple of 8; 0 when the table has
	 * none. Each replica has one at delta_off[r] of its region, after its
	 * aux heap, laid out as an aux heap (a DTXN_AUX_HEAP_HDR-byte header
	 * whose first word is the bump word, then delta_areas areas); the
	 * protocol keeps an area's number (1-based; 0: none) in its record.
	 * Areas are taken at run time only, by coordinators, a chunk at a time
	 * (struct dtxn_heap_chunk): Lotus's records of a row's later versions.
	 * DTXN_TABLE_F_DELTA_BY_SLOT: area n is the row's whose aux area is n,
	 * and nothing is taken (Motor's attribute bars, §4.2).
	 */
	uint32_t delta_size;
	uint64_t delta_off[DTXN_MAX_REPLICAS]; /**< delta heap's offset in each replica's region */
	uint64_t delta_areas;       /**< areas in each replica's delta heap: max_keys + a chunk per coordinator */
	/** Delta areas handed out, as dtxn_store_heap_census() last read the primary's bump word
	 * (DTXN_TABLE_F_DELTA_BY_SLOT: its slots that carry DTXN_SLOT_DELTA). */
	uint64_t delta_used;
	/**
	 * FAAs made on that bump word (one per chunk a coordinator took: the
	 * word over cat->aux_chunk, counting those past the heap's end), as
	 * dtxn_store_heap_census() last read it.
	 */
	uint64_t delta_faas;
	/**
	 * Aux areas that rows held when dtxn_store_heap_census() last scanned
	 * the primary: its slots whose header names an area (loaded and
	 * inserted rows; a slot keeps its area through a delete). Valid when
	 * aux_census is set; before that, the loaded rows stand for it.
	 */
	uint64_t aux_held;
	bool aux_census;
	/**
	 * Loaded population (dtxn_catalog_count_load(), by the loader before
	 * the run): records, and their raw bytes (key + value as the
	 * benchmark defines them), one copy.
	 */
	uint64_t loaded_rows;
	uint64_t loaded_raw_bytes;
	/**
	 * Set by dtxn_catalog_defer_copies(): dtxn_store_load() writes one
	 * replica only and dtxn_store_copy_replicas() copies it to the others.
	 */
	bool copies_deferred;
	/**
	 * MN side, with more than one stripe in a process that maps only
	 * some MN regions (dtxn_fabric_partial(): --role mn): the process's
	 * own copy of the whole primary (every stripe's buckets and heaps),
	 * which dtxn_store_load() fills while copies are deferred and
	 * dtxn_store_copy_replicas() copies to the stripes of every replica
	 * mapped here, then frees. NULL otherwise.
	 */
	void *load_scratch;
};

/**
 * Where a table's records live (doc/guides/store.md, "Placement";
 * dtxn_catalog_set_placement()).
 */
enum dtxn_placement {
	/** The artifacts' rule (FORD, Motor): a table's primary on MN id % n_mn, replica r on the next r-th. */
	DTXN_PLACEMENT_TABLE = 0,
	/**
	 * Each key's primary hashed across the MNs: stripe s (buckets [s K,
	 * (s + 1) K), K = ceil(n_buckets / n_mn)) of table id has its
	 * primary on MN (id + s) % n_mn, replica r on (id + s + r) % n_mn.
	 */
	DTXN_PLACEMENT_KEY = 1,
};

/** The catalog and the layout of every MN region. */
struct dtxn_catalog {
	uint16_t n_mn;
	enum dtxn_placement placement;   /**< dtxn_catalog_set_placement(); default TABLE */
	uint16_t n_replicas;            /**< per table, 1..min(n_mn, DTXN_MAX_REPLICAS) */
	uint32_t n_tables;
	struct dtxn_table tables[DTXN_MAX_TABLES];
	bool present[DTXN_MAX_TABLES];
	uint64_t mn_used[DTXN_MAX_NODES];   /**< end of the tables on each MN, bytes (after layout) */
	uint32_t n_logs;                 /**< coordinators with a log region */
	uint64_t log_bytes;              /**< per coordinator per MN */
	uint64_t log_off;                /**< where log regions start on every MN */
	uint64_t lease_off;              /**< the lease area (DTXN_STORE_LEASE_BYTES), after the logs */
	uint64_t ctl_off;                /**< the control area (DTXN_STORE_CTL_BYTES), after the lease area */
	uint64_t crec_off;               /**< the commit records (n_logs x DTXN_STORE_CREC_BYTES), after the control area, on every MN */
	uint64_t region_size;            /**< bytes every MN region needs */
	/**
	 * Bytes of the message area of every MN region (the rings of RRPC to
	 * the MNs, dtxn_rrpc.h: one per CN worker); set before the layout
	 * (dtxn_db_layout() asks the protocol); 0: none.
	 */
	uint64_t msg_bytes;
	uint64_t msg_off;                /**< where the message area starts (after the layout) */
	/**
	 * Aux areas a coordinator takes from a table's aux heap with one FAA
	 * (lib/txn); sizes each heap's slack (dtxn_catalog_layout()). 0
	 * before the layout: DTXN_AUX_CHUNK_DEFAULT.
	 */
	uint32_t aux_chunk;
};

/** Bytes of an aux heap's header (the bump word, padded to a cache line). */
#define DTXN_AUX_HEAP_HDR 64
/** Default aux areas per chunk (struct dtxn_catalog aux_chunk). */
#define DTXN_AUX_CHUNK_DEFAULT 32
/** Most aux areas per chunk. */
#define DTXN_AUX_CHUNK_MAX 65536

/** The heaps of a table's replica (doc/guides/store.md, "Aux areas", "Delta heaps"). */
enum dtxn_heap_kind {
	DTXN_HEAP_AUX = 0,   /**< an area per row, named by its slot header (aux_size) */
	DTXN_HEAP_DELTA = 1, /**< areas a protocol takes at run time and names itself (delta_size) */
};

/** Areas a coordinator keeps given back (struct dtxn_heap_chunk). */
#define DTXN_HEAP_CHUNK_FREE 64

/**
 * A coordinator's areas of one heap of one table (CN side, chunk.c): the
 * chunk [next, end) it took with one FAA of cat->aux_chunk on the heap's
 * bump word (dtxn_store_heap_bump_raddr(), dtxn_store_heap_chunk()), and
 * up to DTXN_HEAP_CHUNK_FREE areas given back by txns that took them and
 * aborted. Zeroed: empty. Owned by the coordinator's lcore.
 */
struct dtxn_heap_chunk {
	uint32_t next;
	uint32_t end;
	uint32_t n_free;
	uint32_t lost; /**< areas dropped (the free list was full): never used */
	uint32_t free[DTXN_HEAP_CHUNK_FREE];
};

/**
 * Initialises an empty catalog.
 *
 * @param n_mn        MNs, 1..DTXN_MAX_NODES-1.
 * @param n_replicas  copies of each table (primary + backups), 1..3 and
 *                    <= n_mn. The papers' default is 3 over 3 MNs.
 * @return 0 or -EINVAL.
 */
int dtxn_catalog_init(struct dtxn_catalog *cat, uint16_t n_mn, uint16_t n_replicas);

/**
 * Chooses where the tables added next live (enum dtxn_placement;
 * doc/guides/store.md, "Placement"). DTXN_PLACEMENT_TABLE is the
 * default of dtxn_catalog_init(). Call before any table is added.
 *
 * @return 0; -EINVAL (NULL catalog, unknown placement); -EBUSY (the
 *   catalog already has a table).
 */
int dtxn_catalog_set_placement(struct dtxn_catalog *cat, enum dtxn_placement p);

/** @return the placement's name ("table", "key"), or NULL if unknown. */
const char *dtxn_placement_name(enum dtxn_placement p);

/**
 * The placement named @p name ("table" or "key").
 * @return 0 with *out set; -EINVAL (NULL argument, unknown name).
 */
int dtxn_placement_parse(const char *name, enum dtxn_placement *out);

/**
 * Adds a table. Placement (cat->placement): DTXN_PLACEMENT_TABLE: primary
 * on MN (id % n_mn), backups on the next n_replicas-1 MNs, round robin
 * (FORD's rule, ford.md §1); DTXN_PLACEMENT_KEY: n_mn stripes of
 * ceil(n_buckets / n_mn) buckets, stripe s's primary on MN (id + s) %
 * n_mn and its backups on the next MNs (struct dtxn_table n_stripes).
 *
 * @param slot_size  the protocol's slot size for def->value_size, bytes,
 *                   multiple of 8, >= DTXN_SLOT_HDR_SIZE + value_size.
 * @return 0; -EINVAL (bad id, size, or name; n_versions over
 *   DTXN_TABLE_MAX_VERSIONS; n_columns over DTXN_TABLE_MAX_COLUMNS, a
 *   column of 0 bytes, or column sizes not summing to value_size; more
 *   than DTXN_TABLE_MAX_UPDATES update shapes, a shape with no cell, a
 *   cell the table lacks or 0 or over 1000 permille, or shapes summing
 *   over 1000 permille);
 *   -EEXIST (id or name taken).
 *   Adding a table resets cat->region_size to 0: lay out again.
 */
int dtxn_catalog_add_table(struct dtxn_catalog *cat, const struct dtxn_table_def *def,
			   uint32_t slot_size);

/**
 * Lays out every MN region: tables back to back (64-byte aligned), then
 * one log region per coordinator at the same offset (cat->log_off) on every
 * MN, then the lease area (cat->lease_off, DTXN_STORE_LEASE_BYTES; used on
 * MN 0 only), then the control area (cat->ctl_off, DTXN_STORE_CTL_BYTES;
 * used on MN 0 only), then the commit records (cat->crec_off, n_logs x
 * DTXN_STORE_CREC_BYTES; used on every MN), then the message area
 * (cat->msg_off, cat->msg_bytes, 64-byte aligned; none when msg_bytes is
 * 0). Every area after the tables sits at the same offset in every MN
 * region. Bytes 0..63 of each region are reserved, so no store
 * address is 0. A table with aux areas gets, after each replica's
 * buckets, an aux heap of t->aux_areas = min(slots, max_keys + n_logs x
 * cat->aux_chunk) areas (cat->aux_chunk 0: DTXN_AUX_CHUNK_DEFAULT).
 * DTXN_PLACEMENT_KEY: every MN gets, at the same offsets, one stripe per
 * replica role of each table (off[r], aux_off[r], delta_off[r]), each
 * with heaps of its own: aux areas min(the stripe's slots, max_keys +
 * n_logs x aux_chunk), delta areas min(max_keys, the stripe's slots) +
 * n_logs x aux_chunk.
 *
 * @param n_logs     coordinators in the cluster.
 * @param log_bytes  log bytes per coordinator on every MN, multiple of 64.
 * @return 0, -EINVAL (bad log_bytes, aux_chunk over DTXN_AUX_CHUNK_MAX),
 *   or -E2BIG if an offset would not fit 48 bits or a heap 2^32 - 1 areas.
 *   cat->region_size holds the bytes each MN needs.
 */
int dtxn_catalog_layout(struct dtxn_catalog *cat, uint32_t n_logs, uint64_t log_bytes);

/** @return the table with that id, or NULL. */
const struct dtxn_table *dtxn_catalog_table(const struct dtxn_catalog *cat, uint32_t id);

/**
 * Adds a table whose rows each own an auxiliary area of @p aux_size
 * bytes (additive, for protocols that keep part of a record outside the
 * hash index, e.g. Motor's value package and attribute bar next to its
 * CVT, doc/guides/motor.md). The layout gives each replica an aux heap
 * right after that replica's buckets, on the same MN, 64-byte aligned
 * (struct dtxn_table aux_size, aux_off, aux_areas), sized by the table's
 * max_keys, not by its slots: areas are handed out lazily, a slot's
 * number in its header (struct dtxn_slot_hdr aux). Loaded rows get
 * densely packed areas at load (the loader zeroes one before the
 * protocol formats it and copies it to the backups); an insert into a
 * slot that has none takes one from its coordinator's chunk of the heap
 * (lib/txn, doc/guides/store.md "Aux areas"). Placement and every check
 * are those of dtxn_catalog_add_table(), except that the value may live
 * in the aux area: slot_size >= DTXN_SLOT_HDR_SIZE and slot_size +
 * aux_size >= DTXN_SLOT_HDR_SIZE + value_size.
 *
 * @param aux_size  bytes per area, a multiple of 8, at most 2^24; 0 is
 *                  dtxn_catalog_add_table().
 * @return 0; -EINVAL (as dtxn_catalog_add_table(), or a bad aux_size, or
 *   an aux heap that would not fit a 48-bit region); -EEXIST.
 */
int dtxn_catalog_add_table_aux(struct dtxn_catalog *cat, const struct dtxn_table_def *def,
			       uint32_t slot_size, uint32_t aux_size);

/**
 * Gives table @p id a delta heap of @p delta_size-byte areas (Motor's
 * attribute bars, doc/guides/motor.md "Layout"; Lotus's later versions):
 * the layout puts one after each replica's aux heap, with t->delta_areas
 * = max_keys + n_logs x cat->aux_chunk areas (aux_areas with
 * DTXN_TABLE_F_DELTA_BY_SLOT) (a row holds at most one area, a slot keeps it
 * through deletes and re-inserts, and each coordinator may hold a chunk
 * it has not used up). Resets the layout (region_size 0). Setup only.
 *
 * @param delta_size  bytes per area, a multiple of 8, at most 2^24; 0
 *                    removes the heap.
 * @return 0; -EINVAL (no table @p id, a bad size, or a heap that would
 *   not fit a 48-bit region).
 */
int dtxn_catalog_set_delta(struct dtxn_catalog *cat, uint32_t id, uint32_t delta_size);

/**
 * Moves table @p id's primary to MN @p mn, its backups to the MNs after
 * it: replica r on MN (mn + r) % n_mn, in place of the default rule's
 * (id + r) % n_mn (a per-table override: CREST's artifact puts TPC-C's
 * stock on MN 1, doc/guides/store.md "A table's MN"). Resets the layout
 * (region_size 0). Setup only: after dtxn_catalog_add_table(), before
 * dtxn_catalog_layout(); main lcore.
 *
 * @return 0; -EINVAL (@p cat NULL or no table @p id); -ERANGE (@p mn not
 *   below cat->n_mn).
 */
int dtxn_catalog_set_primary(struct dtxn_catalog *cat, uint32_t id, uint16_t mn);

/** Bytes of a record key (the "key" part of a record's raw bytes). */
#define DTXN_KEY_BYTES 8

/**
 * Counts one loaded record of table @p id: @p raw_bytes (key + value, the
 * benchmark's definition: DTXN_KEY_BYTES + value_size) into the table's
 * loaded_rows / loaded_raw_bytes. The MN role's CPU, before the run
 * (called by the loader's caller after each successful dtxn_store_load()).
 * @return 0, or -EINVAL (NULL catalog, unknown table).
 */
int dtxn_catalog_count_load(struct dtxn_catalog *cat, uint32_t id, uint64_t raw_bytes);

/**
 * What one MN region holds, by kind (doc/guides/report.md, "MN memory").
 * index + values + logs + msgs + reserved + unused = total = the region's size.
 */
struct dtxn_store_mem {
	uint64_t total;     /**< the region's bytes (cat->region_size) */
	uint64_t index;     /**< buckets: bucket headers and slots, every table replica here */
	uint64_t values;    /**< aux and delta heaps (value regions, old versions), replicas here */
	uint64_t logs;      /**< per-coordinator log regions */
	uint64_t reserved;  /**< reserved words, the lease and the control areas
			     *   (DTXN_STORE_RSVD_BYTES + DTXN_STORE_LEASE_BYTES + DTXN_STORE_CTL_BYTES) */
	uint64_t unused;    /**< alignment and the gap before the logs */
	uint64_t msgs;      /**< the message area (cat->msg_bytes: RRPC rings to the MN) */
	uint64_t empty;     /**< of index + values: slots holding no loaded row with their share
			     *   of the bucket headers (pro rata), and the aux areas and heap
			     *   headers no loaded row holds (insert room), and the delta
			     *   areas not handed out (struct dtxn_table delta_used) */
	uint64_t raw;       /**< raw bytes (key + value) of the loaded rows this MN holds a copy of */
	/**
	 * Of values: the heap areas no row holds when the report is made, the
	 * allocator's free room: aux areas no slot names (struct dtxn_table
	 * aux_held after dtxn_store_heap_census(), else the loaded rows) and
	 * delta areas not handed out (delta_used). The bytes in use are
	 * total - unused - heap_free: what an MN allocator has given out,
	 * the papers' "memory usage after N seconds" (Lotus §8.4).
	 */
	uint64_t heap_free;
};

/**
 * Accounts MN @p mn's region from the layout and the loaded population.
 * Any thread, after dtxn_catalog_layout() (and the load, for empty/raw).
 * @return 0, or -EINVAL (NULL argument, no layout, mn >= cat->n_mn).
 */
int dtxn_catalog_mem(const struct dtxn_catalog *cat, uint16_t mn, struct dtxn_store_mem *out);

/**
 * Reads the bump word of every delta heap whose primary is mapped in this
 * process (dtxn_fabric_mn_base(): the MN role, or every MN embedded) into
 * its table's delta_used, so that dtxn_catalog_mem() counts the areas the
 * run handed out as rows' (the papers measure memory after their runs),
 * and the FAAs that took them into its delta_faas. A table with
 * DTXN_TABLE_F_DELTA_BY_SLOT has no bump word: its primary's slots that
 * carry DTXN_SLOT_DELTA are counted (delta_faas 0). Every table with an
 * aux heap gets its primary's slots that name an aux area counted into
 * aux_held (aux_census set): the areas rows hold after the run, inserts
 * included. One pass over the primary's slots: about 10 ns a slot.
 * Call when no coordinator runs (after the run). Any thread.
 * @return the heaps read (0: none mapped here, or no table has one), or
 *   -EINVAL (NULL argument).
 */
int dtxn_store_heap_census(struct dtxn_fabric *f, struct dtxn_catalog *cat);

/** Bytes at the start of every MN region that the store never allocates. */
#define DTXN_STORE_RSVD_BYTES 64
/**
 * Reserved words: 8-byte words in those first 64 bytes, for cluster-wide
 * variables that live on an MN (word 0 is never handed out, so that no
 * such address is 0). They model the RNIC's device memory
 * (DTXN_FABRIC_DM_BYTES): atomics on them get the NIC model's
 * device-memory rate. Each word has one owner:
 */
#define DTXN_STORE_RSVD_TSO 1   /**< lib/tso: the timestamp oracle's counter */
#define DTXN_STORE_RSVD_TSO_MAX 2 /**< lib/tso: a TSO proxy's record of the largest timestamp
				     *   it handed out (on the proxy's MN; only its CPU writes it) */
#define DTXN_STORE_RSVD_TSO_CN_MARK 3 /**< lib/tso: the CN timestamp service's high-water mark */
#define DTXN_STORE_RSVD_TSO_CN_HOST 4 /**< lib/tso: the CN hosting that service (node id + 1; 0: the first CN) */
#define DTXN_STORE_RSVD_MAX 8   /**< words 1..7 exist */

/**
 * Remote address of reserved word @p word on MN @p mn (zero at start,
 * like every region byte; only fabric WRs touch it during the run).
 * @return the address, or 0 if @p word is 0 or >= DTXN_STORE_RSVD_MAX, or
 *   @p mn >= cat->n_mn.
 */
dtxn_raddr_t dtxn_store_rsvd_raddr(const struct dtxn_catalog *cat, uint16_t mn, unsigned word);

/**
 * The lease area: per fabric node (a CN), a heartbeat word its cluster
 * agent bumps with a FAA every few ms, and a state word
 * (DTXN_LEASE_STATE_*) a survivor writes once it has recovered the node
 * (lib/txn, dtxn_lease_*; doc/guides/cluster.md, "Recovery"). On MN 0.
 */
#define DTXN_STORE_LEASE_BYTES (2u * DTXN_MAX_NODES * 8u)

/**
 * Remote address of fabric node @p node's heartbeat word (@p state
 * false) or state word (@p state true) in the lease area of MN 0.
 * @return the address, or 0 before the layout or for @p node >=
 *   DTXN_MAX_NODES.
 */
dtxn_raddr_t dtxn_store_lease_raddr(const struct dtxn_catalog *cat, uint16_t node, bool state);

/**
 * The control area: DTXN_STORE_CTL_BYTES at one fixed offset of MN 0's
 * region (cat->ctl_off, right after the lease area), for the cluster's
 * control plane across hosts (app/dtxn-app's ctl_fabric.c: the CNs' start
 * barrier, their benchmark counters for the invariant check, who checks;
 * doc/guides/cluster.md, "The control plane over the fabric"). Every
 * process computes the same offset from the same catalog; the MN 0 role
 * zeroes it after its load. lib/store gives the bytes a place and nothing
 * more: the layout inside belongs to the app. 64-byte multiple.
 */
#define DTXN_STORE_CTL_BYTES (256u + DTXN_MAX_NODES * 128u)

/**
 * Commit records: one slot per coordinator (gid < cat->n_logs) on EVERY
 * MN, at the same offset (cat->crec_off, right after the control area):
 * the coordinator's benchmark counters as of a decisive batch, written in
 * that batch's chain to each MN the batch touches (lib/txn's
 * dtxn_coord_set_commit_record()), so that a survivor on another host can
 * settle a dead CN's counters from the newest record it finds on any MN
 * (app/dtxn-app's ctl_fabric.c, doc/guides/cluster.md "Counters of a dead
 * CN"). Each MN role zeroes its own slots after its load (MN 0's with its
 * control area). Bytes per slot.
 *
 * Region layout after the logs (offsets the same on every MN):
 *
 *   cat->lease_off  DTXN_STORE_LEASE_BYTES       lease area (used on MN 0)
 *   cat->ctl_off    DTXN_STORE_CTL_BYTES         control area (used on MN 0)
 *   cat->crec_off   n_logs x DTXN_STORE_CREC_BYTES  commit records (every MN)
 *   cat->msg_off    cat->msg_bytes               message area (64-byte aligned)
 */
#define DTXN_STORE_CREC_BYTES 64u

/**
 * Remote address of coordinator @p gid's commit-record slot on MN @p mn.
 * DTXN_RADDR_OFF() of the result is the same for every @p mn.
 * @param cat  a laid-out catalog.
 * @param mn   MN id, < cat->n_mn.
 * @param gid  coordinator (log) index, < cat->n_logs.
 * @return the address (DTXN_STORE_CREC_BYTES at it, 64-byte aligned), or
 *   0 before the layout, for @p mn >= n_mn or @p gid >= n_logs. Pure; any
 *   thread.
 */
dtxn_raddr_t dtxn_store_crec_raddr(const struct dtxn_catalog *cat, uint16_t mn, uint32_t gid);

/**
 * Remote address of byte @p off of the control area (on MN 0).
 * @return the address, or 0 before the layout or for @p off >=
 *   DTXN_STORE_CTL_BYTES. Any thread.
 */
dtxn_raddr_t dtxn_store_ctl_raddr(const struct dtxn_catalog *cat, uint64_t off);

/* ------------------------------------------------------------------ */
/* Hash index                                                         */
/* ------------------------------------------------------------------ */

/**
 * Home bucket of a key, 0..n_buckets-1: a seeded 64-bit mix of the key and
 * the table id, or dtxn_key_id(key) % n_buckets for a table with
 * DTXN_TABLE_F_DIRECT_INDEX. Same on every node. Any thread.
 */
uint64_t dtxn_store_bucket_of(const struct dtxn_table *t, uint64_t key);

/**
 * Remote address of bucket @p b (wrapped modulo n_buckets) on replica @p r
 * (0 = primary): in stripe b / stripe_buckets, on that stripe's replica-r
 * MN; 0 if r >= n_replicas.
 */
dtxn_raddr_t dtxn_store_bucket_raddr(const struct dtxn_table *t, uint16_t r, uint64_t b);

/**
 * MN of replica @p r of the stripe of @p t that holds the primary address
 * @p at (a row's slot): where that row's copies live. With one stripe
 * t->mn[r] (@p at is not looked at). Pure; any thread.
 * @return the MN, or UINT16_MAX (r >= n_replicas, @p at in no primary stripe).
 */
uint16_t dtxn_store_row_mn(const struct dtxn_table *t, uint16_t r, dtxn_raddr_t at);

/**
 * Remote address on replica @p r of the slot whose primary address is
 * @p primary (backups have the same layout at their own offset; with
 * DTXN_PLACEMENT_KEY, the replica of the stripe @p primary is in). Also
 * maps an address inside a primary aux or delta heap
 * (dtxn_catalog_add_table_aux()) to the same byte of replica @p r's heap.
 * @return the address, or 0 if r >= n_replicas or @p primary is not in a
 *   primary stripe of the table (buckets or heaps).
 */
dtxn_raddr_t dtxn_store_replica_raddr(const struct dtxn_table *t, uint16_t r,
				      dtxn_raddr_t primary);

/** The aux area number in the header of slot image @p slot (0: none). */
static inline uint32_t
dtxn_store_slot_aux(const void *slot)
{
	struct dtxn_slot_hdr h;

	memcpy(&h, slot, sizeof(h));
	return h.aux;
}

/**
 * The stripe (struct dtxn_table n_stripes) that holds the primary
 * address @p at (a slot, a bucket, a heap byte): 0 with
 * DTXN_PLACEMENT_TABLE (@p at is not looked at). Pure; any thread.
 * @return the stripe, or -EINVAL (@p at is on no MN of a primary stripe).
 */
int dtxn_store_stripe_of(const struct dtxn_table *t, dtxn_raddr_t at);

/**
 * Remote address of area @p n (1-based) of heap @p h of table @p t on
 * replica @p r, in the heap of the stripe that holds the primary address
 * @p at (the row's slot, or its bucket; ignored with one stripe). Every
 * replica's heap has the same layout: one number serves every replica.
 * Any thread.
 * @return the address, or 0 if the table has no such heap, r >=
 *   n_replicas, @p n is 0 or over the heap's areas, or @p at is in no
 *   primary stripe.
 */
dtxn_raddr_t dtxn_store_heap_area_raddr(const struct dtxn_table *t, enum dtxn_heap_kind h,
					uint16_t r, dtxn_raddr_t at, uint32_t n);

/**
 * Remote address of the bump word of heap @p h of @p t on the primary of
 * the stripe that holds the primary address @p at (ignored with one
 * stripe): the count of areas handed out, which a coordinator FAAs by its
 * chunk size (dtxn_store_heap_chunk()). Any thread.
 * @return the address; 0 if the table has no such heap or @p at is in
 *   no primary stripe.
 */
dtxn_raddr_t dtxn_store_heap_bump_raddr(const struct dtxn_table *t, enum dtxn_heap_kind h,
					dtxn_raddr_t at);

/**
 * The chunk of heap @p h's areas a FAA of @p n on its bump word (the
 * value it returned: @p old) gave: areas [*first, *end), truncated at the
 * heap's end. Any thread.
 * @return 0; -ENOSPC (the heap is exhausted: @p old >= its areas);
 *   -EINVAL (no such heap, @p n 0, NULL argument).
 */
int dtxn_store_heap_chunk(const struct dtxn_table *t, enum dtxn_heap_kind h, uint64_t old,
			  uint32_t n, uint32_t *first, uint32_t *end);

/** dtxn_store_heap_area_raddr() of the aux heap: area @p aux, a slot header's aux. */
static inline dtxn_raddr_t
dtxn_store_aux_area_raddr(const struct dtxn_table *t, uint16_t r, dtxn_raddr_t at, uint32_t aux)
{
	return dtxn_store_heap_area_raddr(t, DTXN_HEAP_AUX, r, at, aux);
}

/** dtxn_store_heap_bump_raddr() of the aux heap. */
static inline dtxn_raddr_t
dtxn_store_aux_bump_raddr(const struct dtxn_table *t, dtxn_raddr_t at)
{
	return dtxn_store_heap_bump_raddr(t, DTXN_HEAP_AUX, at);
}

/** dtxn_store_heap_chunk() of the aux heap. */
static inline int
dtxn_store_aux_chunk(const struct dtxn_table *t, uint64_t old, uint32_t n, uint32_t *first,
		     uint32_t *end)
{
	return dtxn_store_heap_chunk(t, DTXN_HEAP_AUX, old, n, first, end);
}

/**
 * Takes an area from coordinator chunk @p c: one given back first, else
 * the chunk's next. Calling lcore (the chunk's owner); no WR.
 * @param n  out: the area number.
 * @return true; false if @p c holds none (FAA another chunk).
 */
bool dtxn_heap_chunk_take(struct dtxn_heap_chunk *c, uint32_t *n);

/**
 * Areas [@p first, @p end) of a chunk just taken (dtxn_store_heap_chunk())
 * become @p c's; if @p c still holds some of an earlier chunk (two txns
 * of one coordinator's round each took one), the new areas go to its
 * free list, those that do not fit are counted in c->lost.
 */
void dtxn_heap_chunk_refill(struct dtxn_heap_chunk *c, uint32_t first, uint32_t end);

/** Area @p n goes back to @p c (its txn aborted before writing it); c->lost if full. */
void dtxn_heap_chunk_put(struct dtxn_heap_chunk *c, uint32_t n);

/**
 * MN-side pointer (the MN role's CPU: loading, invariant checks) to the aux
 * area of the slot at @p slot, a pointer into replica @p r's buckets in
 * this process: the area its header names.
 * @return the pointer, or NULL (no aux heap, region not mapped, @p slot
 *   not the start of a slot of that replica, or the slot has no area).
 */
void *dtxn_store_aux_ptr(struct dtxn_fabric *f, const struct dtxn_table *t, uint16_t r,
			 const void *slot);

/**
 * MN-side pointer to the aux area of the slot at @p slot, in whichever of
 * table @p t's replicas mapped in this process holds that slot: what a
 * protocol's dtxn_slot_format_fn uses, since dtxn_store_load() formats
 * the first replica the process maps (replica 0 in one process or in a
 * load in scratch; a backup in an MN process that holds backups only).
 * Any thread.
 * @return the pointer, or NULL (no aux heap, @p slot not the start of a
 *   slot of any replica mapped here, or the slot has no area).
 */
void *dtxn_store_slot_aux_ptr(struct dtxn_fabric *f, const struct dtxn_table *t,
			      const void *slot);

/**
 * MN-side pointer (the MN role's CPU: loading, invariant checks) to area
 * @p n (1-based) of heap @p h of table @p t on replica @p r in this
 * process, in the heap of the stripe of the slot at @p slot (a pointer
 * into replica @p r's buckets, as for dtxn_store_aux_ptr()): what
 * dtxn_store_heap_area_raddr() addresses (Lotus's records of a row's
 * later versions, in its delta area). Any thread.
 * @return the pointer, or NULL (no such heap or area, @p slot not in
 *   the table's replica @p r here, region not mapped here or too small
 *   for the table's heaps).
 */
void *dtxn_store_heap_area_ptr(struct dtxn_fabric *f, const struct dtxn_table *t,
			       enum dtxn_heap_kind h, uint16_t r, const void *slot, uint32_t n);

/**
 * Finds a key in a bucket copy.
 *
 * @param bucket  local copy of a whole bucket (bucket_size bytes).
 * @return slot index 0..slots_per_bucket-1 of the valid slot holding
 *   @p key for table t, or -ENOENT.
 */
int dtxn_store_bucket_find(const struct dtxn_table *t, const void *bucket, uint64_t key);

/**
 * Finds a free slot (not valid) in a bucket copy, for an insert.
 * @return slot index, or -ENOSPC.
 */
int dtxn_store_bucket_free_slot(const struct dtxn_table *t, const void *bucket);

/**
 * True if a slot copy holds @p key of table @p t (key, table id and
 * DTXN_SLOT_VALID): how a read through a cached address checks that the
 * cache was right.
 */
bool dtxn_store_slot_matches(const struct dtxn_table *t, const void *slot, uint64_t key);

/**
 * Primary address of the bucket that holds the slot at primary address
 * @p slot (for a slot address taken from the address cache).
 */
dtxn_raddr_t dtxn_store_bucket_of_slot(const struct dtxn_table *t, dtxn_raddr_t slot);

/**
 * Whether @p slot is the primary address of a slot of table @p t (on a
 * stripe's primary MN, inside its buckets, at a slot boundary): how a recovery
 * checks an address read from a log record before it acts on it. Pure.
 */
bool dtxn_store_slot_ok(const struct dtxn_table *t, dtxn_raddr_t slot);

/** Pointer to slot @p i inside a bucket copy. */
static inline void *
dtxn_store_bucket_slot(const struct dtxn_table *t, void *bucket, unsigned i)
{
	return (char *)bucket + t->bucket_hdr_size + (size_t)i * t->slot_size;
}

/** Remote address of slot @p i of the bucket at @p bucket_raddr. */
static inline dtxn_raddr_t
dtxn_store_slot_raddr(const struct dtxn_table *t, dtxn_raddr_t bucket_raddr, unsigned i)
{
	return bucket_raddr + t->bucket_hdr_size + (uint64_t)i * t->slot_size;
}

/**
 * The reclaim watermark of a bucket copy (@p bucket: at least
 * t->bucket_hdr_size bytes read from the bucket's start) of table @p t;
 * 0 for a table without DTXN_TABLE_F_RECLAIM. Pure.
 */
static inline uint64_t
dtxn_bucket_reclaimed(const struct dtxn_table *t, const void *bucket)
{
	uint64_t w = 0;

	if (t->def.flags & DTXN_TABLE_F_RECLAIM)
		memcpy(&w, (const char *)bucket + DTXN_BUCKET_RECLAIM_OFF, sizeof(w));
	return w;
}

/** Whether a bucket copy's header says keys hashed there also live in the next bucket. */
static inline bool
dtxn_bucket_overflows(const void *bucket)
{
	return (((const struct dtxn_bucket_hdr *)bucket)->version & DTXN_BUCKET_OVERFLOW) != 0;
}

/* ------------------------------------------------------------------ */
/* MN side: loader and scanner                                        */
/* ------------------------------------------------------------------ */

/**
 * Writes a record in the protocol's format into a slot whose header the
 * store has already filled (key, table_id, flags = DTXN_SLOT_VALID).
 */
typedef void (*dtxn_slot_format_fn)(const struct dtxn_table *t, void *slot,
				    const void *value, void *arg);

/**
 * Loads one record into every replica of its table, on the MN's CPU,
 * before the run (ARCHITECTURE.md: loading runs on the MN role). The
 * first free slot along the key's probe chain is taken, and the overflow
 * flag set on each full bucket passed. If the home bucket and the
 * DTXN_STORE_MAX_PROBE-1 after it are full, records already loaded may be
 * moved within their own probe windows to make room (a bounded search;
 * their slot addresses change, which is harmless before the run). @p fmt
 * runs once, on the primary's slot; the slot is then copied to the same
 * bucket and slot of each backup. A table with an aux heap
 * (dtxn_catalog_add_table_aux()): the record gets the next area of the
 * heap (its number in the slot header; the heap's bump word counts it),
 * zeroed before @p fmt (which reaches it with dtxn_store_slot_aux_ptr(f, t,
 * slot)) and copied to the backups; a record moved to another slot keeps
 * its area. Allocates nothing, logs nothing.
 * Only before the run, into regions the fabric zeroed: each bucket's
 * records then fill a prefix of its slots, and the search for the key
 * stops at the first slot never written (a bucket with room to grow costs
 * the reads of its records only).
 *
 * @return 0; -EINVAL (NULL f, t or fmt); -EEXIST (key already loaded);
 *   -ENOSPC (home bucket and
 *   DTXN_STORE_MAX_PROBE-1 overflow buckets full, and no room could be
 *   made); -ENXIO (a replica's region is not mapped here, or is smaller
 *   than the table's layout).
 */
int dtxn_store_load(struct dtxn_fabric *f, const struct dtxn_table *t, uint64_t key,
		    const void *value, dtxn_slot_format_fn fmt, void *arg);

/**
 * A hint for a bulk loader: starts fetching the cache lines that
 * dtxn_store_load() of @p key will touch first (its home bucket's header
 * and leading slots on the replica it writes), so that a loader that calls
 * this a few keys ahead overlaps those cache and TLB misses with the work
 * on the keys before it. Reads nothing, writes nothing, changes nothing:
 * MN CPU, before the run, like dtxn_store_load().
 *
 * @param f    the fabric whose MN regions hold the table (NULL: no-op).
 * @param t    the table (NULL: no-op).
 * @param key  the key about to be loaded.
 * Thread safety: as dtxn_store_load() (it touches no state).
 */
void dtxn_store_load_prefetch(struct dtxn_fabric *f, const struct dtxn_table *t, uint64_t key);

/**
 * Bulk loading (doc/guides/store.md, "Loading, replicas and scanning"):
 * with @p on, dtxn_store_load() writes every record into the first replica
 * of its table mapped in this process only (slot, aux heap, overflow flags,
 * displacements), and dtxn_store_copy_replicas() then copies that replica's
 * buckets and the used part of its aux heap to the table's other mapped replicas in one pass
 * each, which is what makes a load of gigabytes at 3 replicas fast: one
 * streaming copy per backup instead of a cache-missing copy per record.
 * Until the copy the backups are not in sync: nothing may read them. The
 * MN role's CPU, before the run; not thread-safe.
 * @return 0, or -EINVAL (NULL @p cat).
 */
int dtxn_catalog_defer_copies(struct dtxn_catalog *cat, bool on);

/**
 * Copies the first replica of @p t mapped in this process (buckets and
 * the used part of its aux heap) onto its other mapped replicas, byte for byte, and ends the
 * deferral (t->copies_deferred) dtxn_catalog_defer_copies() set. Cheap
 * when nothing was deferred or only one replica is mapped (a --role mn
 * process maps its own region: nothing to copy). The MN role's CPU,
 * before the run, after the last dtxn_store_load() of the table.
 * @return 0; -EINVAL (NULL argument); -ENXIO (a replica's region is not
 *   mapped here in a single-process run, or is smaller than the layout).
 */
int dtxn_store_copy_replicas(struct dtxn_fabric *f, struct dtxn_table *t);

/** Called for each valid slot by dtxn_store_scan(); non-zero stops the scan. */
typedef int (*dtxn_slot_visit_fn)(const struct dtxn_table *t, const void *slot, void *arg);

/**
 * Visits every valid slot of replica @p r of a table, on the MN's CPU,
 * while no coordinator runs (invariant checks).
 *
 * @return 0, the visitor's non-zero return, -EINVAL (NULL argument,
 *   r >= n_replicas) or -ENXIO.
 */
int dtxn_store_scan(struct dtxn_fabric *f, const struct dtxn_table *t, uint16_t r,
		    dtxn_slot_visit_fn visit, void *arg);

/**
 * Called for each valid slot by dtxn_store_scan_at() with the slot's
 * remote address on replica r; non-zero stops the scan.
 */
typedef int (*dtxn_slot_visit_at_fn)(const struct dtxn_table *t, const void *slot,
				     dtxn_raddr_t raddr, void *arg);

/**
 * dtxn_store_scan() that also gives the visitor each slot's remote
 * address on replica @p r (bucket by bucket, slots in order). Same
 * thread and timing rules: the MN's CPU (or, in one process, the CPU that
 * loaded the region), while no coordinator runs.
 *
 * @return 0, the visitor's non-zero return, -EINVAL (NULL argument,
 *   r >= n_replicas) or -ENXIO (the replica's region is not mapped here).
 */
int dtxn_store_scan_at(struct dtxn_fabric *f, const struct dtxn_table *t, uint16_t r,
		       dtxn_slot_visit_at_fn visit, void *arg);

/**
 * Remote address of coordinator @p coord's log region on MN @p mn, or 0 if
 * coord >= cat->n_logs or mn >= cat->n_mn.
 */
dtxn_raddr_t dtxn_store_log_raddr(const struct dtxn_catalog *cat, uint32_t coord, uint16_t mn);

/* ------------------------------------------------------------------ */
/* CN side: address cache                                             */
/* ------------------------------------------------------------------ */

struct dtxn_addr_cache;

/**
 * Adds to @p fp (dtxn_sched.h, struct dtxn_footprint) what
 * dtxn_addr_cache_create() with @p entries allocates: its table of
 * 16-byte entries (a power of two, at least 2 x @p entries) and its
 * header. Any thread.
 */
struct dtxn_footprint;
void dtxn_addr_cache_footprint(uint32_t entries, struct dtxn_footprint *fp);

/**
 * Adds to @p fp what rte_hash_create() with @p entries entries of
 * @p key_len-byte keys and RTE_HASH_EXTRA_FLAGS_EXT_TABLE (no lcore cache)
 * allocates in DPDK 22.11: entries + 1 key slots (a pointer and the key,
 * 16-byte aligned), buckets of 8 and as many extension buckets (a cache
 * line each), and two rings of 4-byte indexes (free slots, free extension
 * buckets; a memzone each). For callers that size their own rte_hash
 * (drivers/cc). Any thread.
 */
void dtxn_hash_footprint(uint32_t entries, uint32_t key_len, struct dtxn_footprint *fp);

/**
 * Creates an address cache ((table id, key) -> slot raddr on the
 * primary), one per lcore: an open-addressing table (lib/store/addr_cache.c,
 * doc/guides/store.md "Address cache"), used by its lcore only (not
 * thread-safe). Entries are hints: users validate the slot header (key,
 * table id, valid) of what they read and invalidate on a mismatch.
 *
 * @param name      its name (allocation tag), 1 to 24 chars.
 * @param entries   capacity, > 0; when full, inserts are dropped.
 * @param socket_id NUMA socket of its memory (SOCKET_ID_ANY).
 * @return the cache or NULL with rte_errno (EINVAL: bad name or 0
 *   entries; ENOMEM).
 */
struct dtxn_addr_cache *dtxn_addr_cache_create(const char *name, uint32_t entries,
					       int socket_id);

/**
 * Creates a worker's overlay over a shared base (doc/guides/store.md,
 * "Address cache", pre-warmed): a cache of what the run changes (a
 * record inserted or moved, a tombstone for an invalidated key the base
 * holds) over a plain cache filled before the run and read-only after
 * (dtxn_addr_cache_prewarm(), attached by dtxn_addr_cache_set_base()).
 * Lookups read the overlay first, then the base; inserts and
 * invalidations write the overlay only. Used by its lcore only (not
 * thread-safe); the base it reads is never written once attached, so
 * any number of overlays on any lcores share it without atomics.
 *
 * @param name      its name (allocation tag), 1 to 24 chars.
 * @param entries   > 0. Bounded (@p unbounded false): the overlay's own
 *   entries at most; when full, a change evicts an entry of its probe run
 *   (the evicted key shows the base's address again, or none). Unbounded:
 *   the keys it shows at most (base and overlay, as a plain cache of that
 *   capacity: a new key beyond is dropped); its table starts at 4 Ki
 *   entries and doubles, from the heap, as it fills (a table it cannot
 *   get: it evicts as a bounded one).
 * @param unbounded as above.
 * @param socket_id NUMA socket of its memory (SOCKET_ID_ANY).
 * @return the overlay (no base yet: it shows only its own entries), or
 *   NULL with rte_errno (EINVAL: bad name or 0 entries; ENOMEM).
 */
struct dtxn_addr_cache *dtxn_addr_cache_overlay_create(const char *name, uint32_t entries,
						       bool unbounded, int socket_id);

/**
 * Attaches @p base (a plain cache, pre-warmed, never written again while
 * attached; it must outlive @p c) to overlay @p c, still empty. The
 * creating thread, before @p c is used.
 *
 * @return 0; -EINVAL (NULL, @p c not an overlay or not empty, @p base an
 *   overlay).
 */
int dtxn_addr_cache_set_base(struct dtxn_addr_cache *c, const struct dtxn_addr_cache *base);

/**
 * Adds to @p fp what dtxn_addr_cache_overlay_create() with @p entries and
 * @p unbounded allocates: a bounded overlay at its bound, an unbounded one
 * at its first table (its growth comes with the run's changes: the
 * base, counted once per process, holds the rest). Any thread.
 */
void dtxn_addr_cache_overlay_footprint(uint32_t entries, bool unbounded,
				       struct dtxn_footprint *fp);

void dtxn_addr_cache_destroy(struct dtxn_addr_cache *c);

/** @return the cached primary slot address, or 0 if none (@p c NULL, a table id >= DTXN_MAX_TABLES). */
dtxn_raddr_t dtxn_addr_cache_lookup(struct dtxn_addr_cache *c, uint32_t table_id,
				    uint64_t key);

/**
 * Starts loading the cache line dtxn_addr_cache_lookup() of (@p table_id,
 * @p key) reads first (and its base's, for an overlay), so that the
 * lookup a little later finds it in the CPU cache: a transaction
 * prefetches each item's line when the item is added, and the lines of
 * its items load together instead of one miss after another (issue 30
 * part 2). A hint: it changes nothing a lookup returns. Does nothing for
 * @p c NULL or a table id >= DTXN_MAX_TABLES. The owning lcore, as for
 * dtxn_addr_cache_lookup().
 */
void dtxn_addr_cache_prefetch(const struct dtxn_addr_cache *c, uint32_t table_id, uint64_t key);

/** Caches an address (replaces an older one). Silently dropped when full, and for @p slot 0 or on an MN >= DTXN_MAX_NODES. */
void dtxn_addr_cache_insert(struct dtxn_addr_cache *c, uint32_t table_id,
			    uint64_t key, dtxn_raddr_t slot);

/** Forgets a key. */
void dtxn_addr_cache_invalidate(struct dtxn_addr_cache *c, uint32_t table_id,
				uint64_t key);

/**
 * Pre-warms an address cache with table @p t (doc/guides/store.md,
 * "Address cache", pre-warmed): caches the primary slot address of every
 * record replica 0 holds, read from the MN region by dtxn_store_scan_at(),
 * so that the run finds every loaded record's address without a bucket
 * READ. For runs in one process (the region mapped here: the embedded
 * roles, --fabric sim or shm), before the run, while no coordinator runs;
 * the cache's owner or the thread that builds it.
 *
 * @return the records cached (>= 0); -EINVAL (NULL argument, @p c an
 *   overlay); -ENXIO (the
 *   primary's region is not mapped in this process: a --role cn process);
 *   -ENOSPC (the cache is full before the table is: it needs room for
 *   every record, e.g. an unbounded cache, DTXN_ADDR_CACHE_UNBOUNDED).
 */
long dtxn_addr_cache_prewarm(struct dtxn_addr_cache *c, struct dtxn_fabric *f,
			     const struct dtxn_table *t);

/** @return the entries in use in @p c (an overlay: the keys it shows, its base's and its own); 0 if NULL. */
uint32_t dtxn_addr_cache_count(const struct dtxn_addr_cache *c);

#ifdef __cplusplus
}
#endif
#endif /* DTXN_STORE_H */
