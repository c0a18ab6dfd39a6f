/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DTXN_TXN_PRIVATE_H
#define DTXN_TXN_PRIVATE_H

/**
 * @file
 * lib/txn internals (never installed). Which file does what:
 * - registry.c: protocol registry, abort-reason and isolation names;
 * - db.c: struct dtxn_db (create, tables, layout, attach, load, scan, get);
 * - worker.c: workers (scheduler, CQ, QPs, address cache, CQ poller) and
 *   coordinators (coroutine trampoline, scratch arena, WR pool);
 * - txn.c: the transaction API (begin, add_*, execute, commit, abort);
 * - batch.c: doorbell batches;
 * - history.c: recording ended txns for the checker (lib/check);
 * - steps.c: steps protocols share (rounds, lock release, batch errors);
 * - locate.c: locating items in the hash index (cached slots, bucket
 *   chains, record and bucket locks, free slots for inserts);
 * - opts.c: protocol option strings (split, value parsers).
 * - weaken.c: --debug-weaken mode names and which protocol honours which;
 * - recover.c: CN crash recovery, the part every protocol shares;
 * - lease.c: CN failure detection by heartbeat leases in MN memory;
 * - aux.c: a coordinator's aux areas for inserts (chunks, give-backs).
 */

#include <rte_log.h>

#include "dtxn_txn_driver.h"

extern int dtxn_txn_logtype;
#define TXN_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_##level, dtxn_txn_logtype, "dtxn.txn: " fmt "\n", ##__VA_ARGS__)

/** WRs in each coordinator's pool. */
#define TXN_COORD_WRS 4096
/** CQ/QP entries a worker reserves per coordinator (capped at 65536). */
#define TXN_WORKER_WRS_PER_COORD 1024
/** First arena chunk, bytes. */
#define TXN_ARENA_INIT (64 * 1024)
/** First arena chunk where the DPDK heap is shared by processes (dtxn_fabric_heap_shared()), bytes. */
#define TXN_ARENA_SHARED_INIT (1024 * 1024)
/** Arena growth a worker reserves at creation there, bytes (Scythe's and
 * OOCC's TPC-C txns take up to ~4 MiB with their bucket reads). */
#define TXN_ARENA_RESERVE (32u * 1024 * 1024)
/** Most arena bytes one transaction may use. */
#define TXN_ARENA_MAX (256u * 1024 * 1024)
/** Log bytes per coordinator per MN when the conf says 0. */
#define TXN_LOG_BYTES_DEFAULT (64 * 1024)
/** Address-cache entries per worker when the conf says 0. */
#define TXN_ADDR_CACHE_DEFAULT (1u << 20)

/**
 * wr_id of an unsignaled WR: the coordinator's coroutine with this bit set.
 * Such a WR completes only on error, and the poller must not count that
 * completion against the coroutine (it never expected one).
 */
#define TXN_WR_ID_UNSIGNALED 1u

/**
 * wr_id of a WR the protocol asked to be signaled that a batch posts
 * unsignaled, the last WR of its chain being signaled in its place
 * (dtxn_fabric_selective_signaling()): the coordinator's coroutine with
 * this bit set. Such a WR completes only on error; the poller gives that
 * error to the coroutine (dtxn_co_fail_lc()) without counting a
 * completion: the chain's signaled WR, which follows it, is the one
 * counted.
 */
#define TXN_WR_ID_FAIL_ONLY 2u

/** One arena chunk; chunks chain so pointers handed out stay valid. */
struct txn_arena_chunk {
	struct txn_arena_chunk *next;  /**< newer chunk */
	size_t size;                   /**< bytes in data[] */
	bool reserved;                 /**< carved from the worker's reserve: not freed alone */
	char data[] __rte_aligned(8);
};

/**
 * A coordinator's aux areas of one table (aux.c): its chunk and the
 * areas aborted inserts gave back (lib/store's dtxn_heap_chunk).
 */
struct txn_aux_heap {
	struct dtxn_heap_chunk chunk;
	bool shared;                 /**< dtxn_loc_ops.aux_share: the share was taken */
	/**
	 * aux_share: the share's word, the area (1-based; 0: none) on the
	 * heap's primary that records how far the share was handed out, so
	 * that the coordinator's next incarnation (a CN process started again)
	 * continues past its areas (txn_aux_share())
	 */
	uint32_t word;
	uint32_t reserved;           /**< aux_share: areas below this one are recorded in the word */
	uint32_t share_end;          /**< aux_share: the share's end (exclusive) */
	uint64_t word_buf;           /**< aux_share: the WRITE's source (dtxn_txn_aux_keep()) */
};

/** A coordinator as lib/txn keeps it. */
struct txn_coord {
	struct dtxn_coord pub;         /**< first: (struct txn_coord *)pub */
	struct txn_arena_chunk *chunk; /**< first (oldest) chunk; kept until the coordinator ends */
	struct txn_arena_chunk *cur;   /**< the chunk the transaction allocates from */
	size_t arena_total;            /**< bytes of every chunk */
	uint64_t arena_grows;          /**< chunks taken after the first (dtxn_worker_arena_grows()) */
	unsigned wrs_used;             /**< WR pool: stack pointer */
	bool ended;                    /**< body returned */
	struct dtxn_hist_buf *hist;    /**< history recording (history.c); NULL: off */
	const struct dtxn_loc_ops *loc_ops; /**< protocol's locating ops in dtxn_loc_rounds() */
	uint64_t sink;                 /**< old values of fire-and-forget masked unlocks */
	struct txn_aux_heap aux[DTXN_MAX_TABLES]; /**< aux areas for inserts (aux.c), stripe 0 */
	struct dtxn_heap_chunk delta[DTXN_MAX_TABLES]; /**< delta areas (aux.c, dtxn_txn_delta_take()), stripe 0 */
	/**
	 * The same for stripes 1.. of each table (DTXN_PLACEMENT_KEY):
	 * (stripe - 1) * DTXN_MAX_TABLES + table id; NULL with one stripe.
	 */
	struct txn_aux_heap *aux_stripes;
	struct dtxn_heap_chunk *delta_stripes;
	bool lease_exempt;             /**< posts past the worker's lease gate (the agent) */
	/** batches signal the last WR of each chain only (the fabric's
	 *  dtxn_fabric_selective_signaling(), read at creation) */
	bool selective;
	const uint32_t *linger;        /**< dtxn_coord_set_linger(); NULL: none */
};

/** A worker as lib/txn keeps it. */
struct txn_worker {
	struct dtxn_worker pub;        /**< first */
	unsigned max_coords;
	unsigned n_coords;
	struct txn_coord **coords;
	uint16_t n_mn;
	struct dtxn_lease_gate *gate;  /**< the CN's lease (self-fencing), NULL: none */
	/* where the DPDK heap is shared by processes: the arenas' growth,
	 * reserved at creation (TXN_ARENA_RESERVE), carved, never given back */
	char *arena_res;
	size_t arena_res_size;
	size_t arena_res_used;
};

static inline struct txn_coord *
txn_coord_of(struct dtxn_coord *c)
{
	return (struct txn_coord *)c;
}

/**
 * The lease gate of @p c's worker (lease.c; dtxn_lease_gate): returns at
 * once without a gate or for an exempt coordinator; else yields until the
 * CN's lease is valid. Coordinator's coroutine.
 * A fenced CN's coordinator parks there for good (txn_lease_park()).
 * @return 0, or -ESHUTDOWN (the run stopped and no renewal came within
 *   LEASE_STOP_WAIT_NS, 2 s, of its lease lapsing): post nothing that
 *   changes MN memory.
 */
int txn_lease_hold(struct dtxn_coord *c);

/**
 * A mutating batch of @p c failed while its CN's lease was not valid (the
 * RNICs refuse such WRs: dtxn_fabric_set_lease()): the txn may be half
 * applied and no live coordinator may finish it, so the CN fences itself
 * (dtxn_lease_gate.fenced: it stops beating, exits, and a survivor
 * recovers it) and @p c parks. Returns at once without a gate, for an
 * exempt coordinator, or while the lease is valid (another error).
 */
void txn_lease_refused(struct dtxn_coord *c);

/**
 * Appends @p b's coordinator's commit record (dtxn_coord_set_commit_record())
 * for @p t to the end of the chain to every MN in b->mn_mask: an
 * unsignaled inline WRITE of DTXN_COMMIT_RECORD_BYTES to the
 * coordinator's slot on that MN, flagged DTXN_WR_F_CONTROL. No-op without
 * a record, for an empty batch or one with b->error set; sets b->error
 * (-ENOBUFS: the WR pool ran out) as dtxn_batch_write(). Called by
 * dtxn_batch_run_decide() and _early() before they post (batch.c, where
 * the comment says why every chain carries it); the unit tests call it to
 * look at the chains. Coordinator's lcore; no yield.
 */
void txn_batch_commit_record(struct dtxn_batch *b, const struct dtxn_txn *t);

/** Rewinds the arena to its first chunk (allocated on first use), keeping every chunk. */
void txn_arena_reset(struct txn_coord *tc);

/** Frees every chunk. */
void txn_arena_free(struct txn_coord *tc);

/**
 * Entries of an address cache with room for every record @p db's tables
 * can hold: the sum of their max_keys (at least 8, at most 2^30). The
 * unbounded cache's size and the pre-warmed base's. Main lcore.
 */
uint32_t txn_db_addr_keys(const struct dtxn_db *db);

/**
 * history.c: appends the ended txn @p t to its coordinator's history
 * buffer (dtxn_coord_history_attach()).
 */
void txn_history_record(const struct dtxn_txn *t, bool committed);

/**
 * aux.c: an aux area of table @p t for an insert, from the coordinator's
 * free list or chunk. @return false when both are empty (FAA a chunk).
 */
bool txn_aux_take(struct txn_coord *tc, const struct dtxn_table *t, dtxn_raddr_t at,
		  uint32_t *aux);

/**
 * aux.c: the coordinator's state of the aux heap of @p t's stripe that
 * holds the primary address @p at (the slot the area is for: a row's
 * areas are in its slot's stripe).
 */
struct txn_aux_heap *txn_aux_heap_of(struct txn_coord *tc, const struct dtxn_table *t,
				     dtxn_raddr_t at);

/**
 * worker.c: the per-stripe heap states of @p tc for a catalog of @p
 * n_stripes stripes per table (none for 1). @return 0 or -ENOMEM.
 */
int txn_coord_stripes_alloc(struct txn_coord *tc, uint16_t n_stripes, int socket_id);

/** aux.c: areas [first, end) of a chunk just taken become the coordinator's. */
void txn_aux_refill(struct txn_coord *tc, const struct dtxn_table *t, dtxn_raddr_t at,
		    uint32_t first, uint32_t end);

/**
 * aux.c: the area of @p t's aux heap that holds coordinator @p c's share
 * word (dtxn_loc_ops.aux_share): one of the heap's last n_logs areas, by
 * gid. @return its number (1-based), or 0: the heap has no room for the
 * words (fewer areas than coordinators, or areas under 8 bytes).
 */
uint32_t txn_aux_share_word(const struct dtxn_coord *c, const struct dtxn_table *t);

/**
 * aux.c: the coordinator's fixed share of @p t's insert room
 * (dtxn_loc_ops.aux_share): the areas past the loaded rows (@p loaded,
 * the bump word) and below the share words split evenly between the
 * cluster's coordinators; of it, the areas from @p word (the share word
 * as READ: where an earlier incarnation of this coordinator stopped; 0:
 * none) on. Records the share in @p h (word, reserved, share_end).
 * @param first, end  out: areas [*first, *end), possibly empty.
 */
void txn_aux_share(const struct dtxn_coord *c, const struct dtxn_table *t, uint64_t loaded,
		   uint64_t word, struct txn_aux_heap *h, uint32_t *first, uint32_t *end);

/** aux.c: area @p aux of @p t goes back to the coordinator (an insert did not use it). */
void txn_aux_put(struct txn_coord *tc, const struct dtxn_table *t, dtxn_raddr_t at, uint32_t aux);

/** aux.c: at the end of @p t, an aborted txn's inserts give their new areas back (but kept ones, dtxn_txn_aux_keep()). */
void txn_aux_end(struct dtxn_txn *t, bool committed);

/** Hook at each end of a txn (txn.c): aux areas, and the history when it is on. */
static inline void
txn_history_end(struct dtxn_txn *t, bool committed)
{
	txn_aux_end(t, committed);
	if (__builtin_expect(txn_coord_of(t->coord)->hist != NULL, 0))
		txn_history_record(t, committed);
}

/**
 * steps.c: adds to @p b an unsignaled WRITE of 0 to each lock item @p it
 * holds (DTXN_ITEM_F_LOCKED, F_BLOCKED) and clears those flags.
 */
void txn_unlock_into(struct dtxn_item *it, struct dtxn_batch *b);

/**
 * locate.c: the bucket copy it->bucket, allocated from the arena on
 * first use. @return DTXN_OK or DTXN_ABORT_TOO_LARGE.
 */
int txn_bucket_buf(struct dtxn_txn *t, struct dtxn_item *it);

#endif /* DTXN_TXN_PRIVATE_H */
