/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DTXN_CHECK_PRIVATE_H
#define DTXN_CHECK_PRIVATE_H

/**
 * @file
 * lib/check internals (never installed). Which file does what:
 * - hist.c: recording buffers and the history container;
 * - hist_io.c: the history file (save, read, load);
 * - hist_stream.c: a history file appended as the run goes;
 * - graph.c: the serialization graph (txn index, version order, edges);
 * - cycle.c: SCCs (Tarjan) and the shortest-cycle search (BFS);
 * - check.c: dtxn_check_run(), anomaly classes, names, printing.
 */

#include <stdint.h>

#include <rte_log.h>

#include "dtxn_check.h"

extern int dtxn_check_logtype;
#define CHECK_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_##level, dtxn_check_logtype, "dtxn.check: " fmt "\n", ##__VA_ARGS__)

/** Largest chunk of a recording buffer, bytes (chunks grow from HIST_CHUNK_MIN). */
#define HIST_CHUNK_BYTES (1u << 20)
/** First chunk of a recording buffer, bytes. */
#define HIST_CHUNK_MIN (64u << 10)
/** Most metadata entries of a history. */
#define HIST_MAX_META 16
#define HIST_META_KEY_MAX 32
#define HIST_META_VAL_MAX 128

/** Bytes of a record with @p n items. */
static inline size_t
hist_rec_bytes(unsigned n)
{
	return sizeof(struct dtxn_hist_txn) + (size_t)n * sizeof(struct dtxn_hist_item);
}

_Static_assert(sizeof(struct dtxn_hist_txn) + DTXN_HIST_MAX_ITEMS * sizeof(struct dtxn_hist_item) <=
	       HIST_CHUNK_BYTES, "a record must fit a chunk");
_Static_assert(sizeof(struct dtxn_hist_item) == 24, "history item layout");
_Static_assert(sizeof(struct dtxn_hist_txn) == 16, "history record layout");

/** @return true if @p id may name a transaction. */
static inline bool
hist_id_valid(uint64_t id)
{
	return id != DTXN_HIST_VER_INIT && id != DTXN_HIST_VER_ABSENT && id != DTXN_HIST_VER_NONE;
}

/** @return true if the item installs a version. */
static inline bool
hist_item_writes(const struct dtxn_hist_item *it)
{
	return it->op == DTXN_HIST_RMW || it->op == DTXN_HIST_WRITE;
}

/** @return true if the item observed a version. */
static inline bool
hist_item_reads(const struct dtxn_hist_item *it)
{
	return (it->op == DTXN_HIST_READ || it->op == DTXN_HIST_RMW) &&
	       it->ver != DTXN_HIST_VER_NONE;
}

/** The record whose items start at @p items (dtxn_hist_buf_append()'s return). */
static inline struct dtxn_hist_txn *
hist_rec_of(struct dtxn_hist_item *items)
{
	return (struct dtxn_hist_txn *)((char *)items - sizeof(struct dtxn_hist_txn));
}

/** @return a + b, or UINT64_MAX if that overflows (counters never wrap). */
static inline uint64_t
hist_sat_add(uint64_t a, uint64_t b)
{
	uint64_t s;

	return __builtin_add_overflow(a, b, &s) ? UINT64_MAX : s;
}

/** hist.c, for hist_io.c: the i-th metadata entry; false past the last. */
bool hist_meta_at(const struct dtxn_history *h, unsigned i, const char **key,
		  const char **val);
/** hist.c, for hist_io.c: counts txns dropped before a loaded history was saved. */
void hist_buf_add_dropped(struct dtxn_hist_buf *b, uint64_t n);

/** Longest text of one item: op(2) + u32 + ':' + 0x u64 + ':' + 0x u64 + '#' + u16 + ' '. */
#define HIST_ITEM_TEXT 64
/** Longest text of a record line with @p n items, newline included. */
#define HIST_LINE_TEXT(n) (64 + (size_t)(n) * HIST_ITEM_TEXT)

/** @return bytes a line buffer for a record of @p n items needs (hist_line_format()). */
static inline size_t
hist_line_max(unsigned n)
{
	return HIST_LINE_TEXT(n);
}

/**
 * hist_io.c: formats one record as its history-file line ("C id coord
 * items...\n") into @p line (room for hist_line_max(t->n_items) bytes).
 * @return the line's length, newline included (no NUL is written).
 */
size_t hist_line_format(const struct dtxn_hist_txn *t, char *line);

/**
 * hist_stream.c, for hist.c: copies @p len bytes (one whole line) into
 * lane @p lane's buffer, handing a full buffer to the writer. The lane's
 * thread only. @return 0; -EAGAIN: no free buffer, nothing done (the wait
 * is counted; call again); -EMSGSIZE: longer than a buffer.
 */
int hist_stream_put(struct dtxn_hist_stream *s, unsigned lane, const char *line, size_t len);

/** hist_stream.c: @return whether @p lane is a lane id of a stream. */
bool hist_stream_lane_ok(unsigned lane);

/** hist_io.c: writes the first line and the metadata of @p h (NULL: none) to @p f. */
void hist_header_write(FILE *f, const struct dtxn_history *h);

/**
 * hist.c, for hist_io.c: marks a loaded history as cut short (a streamed
 * file whose writer died; dtxn_history_cut()) with a note for the reader.
 */
void hist_set_cut(struct dtxn_history *h, const char *note);

/* ------------------------------------------------------------------ */
/* The graph (graph.c)                                                */
/* ------------------------------------------------------------------ */

/** One slot of struct chk_idmap (one cache line holds four). */
struct chk_idmap_slot {
	uint64_t id;        /**< 0: empty */
	uint32_t idx;
	uint32_t committed; /**< the txn committed (saves a miss on its record) */
};

/** txn id -> index, open addressing (linear probing). */
struct chk_idmap {
	struct chk_idmap_slot *slots;
	uint64_t mask;
};

/** One slot of struct chk_vmap. */
struct chk_vmap_slot {
	uint64_t key;
	uint64_t ver;
	uint32_t table;
	uint32_t val;      /**< UINT32_MAX: empty */
};

/** (table, key, version) -> u32, open addressing (linear probing). */
struct chk_vmap {
	struct chk_vmap_slot *slots;
	uint64_t mask;
};

/** A committed write of one key (the first write of its txn to that key). */
struct chk_write {
	uint32_t table;
	uint32_t txn;      /**< writer's index */
	uint64_t key;
	uint64_t pre;      /**< version overwritten */
	uint64_t id;       /**< writer's id (sibling order) */
	uint16_t n_writes; /**< the writer's writes to this key (> 1: intermediate versions) */
	uint8_t del;       /**< one of them deletes the key */
	uint8_t key_has_delete; /**< some committed write of this key deletes it */
};

/** A read anomaly found while drawing edges (first example kept). */
struct chk_read_anom {
	uint64_t count;
	uint32_t reader;
	uint64_t writer_id;
	uint32_t table;
	uint64_t key;
};

/** Packs an edge's target and type. */
#define CHK_EDGE(dst, dep) (((uint32_t)(dst) << 2) | (uint32_t)(dep))
#define CHK_EDGE_DST(e) ((e) >> 2)
#define CHK_EDGE_DEP(e) ((e) & 3u)
/** Most transactions a graph may hold (dst needs 30 bits). */
#define CHK_MAX_TXNS (UINT32_C(1) << 30)

struct chk_graph {
	uint32_t n;                         /**< txns (committed and aborted) */
	const struct dtxn_hist_txn **txn;   /**< by index */
	struct chk_idmap map;
	struct chk_write *w;                /**< committed writes, sorted (table, key, pre, id) */
	size_t n_w;
	struct chk_vmap by_writer;          /**< (table, key, writer id) -> its w[] entry */
	struct chk_vmap by_pre;             /**< (table, key, version) -> first w[] entry over it */
	uint64_t *off;                      /**< CSR: edges of txn i are adj[off[i] .. off[i+1]) */
	uint32_t *adj;                      /**< CHK_EDGE(dst, dep) */
	uint64_t n_edges;
	struct chk_read_anom g1a, g1b, garbage;
	struct dtxn_check_report *rep;
};

/** @return the slot of txn @p id, or NULL. */
const struct chk_idmap_slot *chk_idmap_find(const struct chk_idmap *m, uint64_t id);

/**
 * Builds the graph of history @p h: indexes txns, sorts the writes,
 * draws every edge, fills rep's totals and the read anomalies.
 * @return 0, -EINVAL (r->error set), -E2BIG, -ENOMEM.
 */
int chk_graph_build(struct chk_graph *g, const struct dtxn_history *h,
		    struct dtxn_check_report *rep);
void chk_graph_free(struct chk_graph *g);

/**
 * Finds a key behind edge u -> v of type @p dep (for the report).
 * @return true and the key, or false.
 */
bool chk_graph_explain(const struct chk_graph *g, uint32_t u, uint32_t v, unsigned dep,
		       uint32_t *table, uint64_t *key);

/* ------------------------------------------------------------------ */
/* Cycles (cycle.c)                                                   */
/* ------------------------------------------------------------------ */

/** Which edges a search follows. */
enum chk_mode {
	CHK_MODE_WW = 0,  /**< ww only (G0) */
	CHK_MODE_WWWR,    /**< ww and wr (G1c) */
	CHK_MODE_ALL,     /**< every edge (G2) */
	CHK_MODE_SI,      /**< every edge, never two rw in a row (G-SI): 2 nodes per txn */
};

/**
 * Finds the cycles of @p mode: the SCCs holding one (with a witness
 * edge: ww for WW, wr for WWWR, rw for ALL and SI) and the shortest cycle
 * through a witness, into @p a (count, len, steps).
 * @param cyclic  out, may be NULL: SCCs with an edge inside (any type
 *   the mode follows): 0 means the mode's graph has no cycle at all.
 * @return 0 or -ENOMEM.
 */
int chk_find_cycles(const struct chk_graph *g, enum chk_mode mode,
		    struct dtxn_check_anomaly *a, uint64_t *cyclic);

#endif /* DTXN_CHECK_PRIVATE_H */
