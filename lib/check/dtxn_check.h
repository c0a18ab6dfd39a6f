/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DTXN_CHECK_H
#define DTXN_CHECK_H

/**
 * @file
 * Transaction histories and the isolation checker (issue 5;
 * doc/guides/checker.md).
 *
 * A history is what every coordinator recorded about each transaction it
 * ended: its id, whether it committed, and per item the table, the key,
 * what it did (read, read-modify-write, blind write) and the version it
 * saw. A version is named by the id of the transaction that wrote it
 * (DTXN_HIST_VER_INIT for the loaded record, DTXN_HIST_VER_ABSENT for a
 * missing key); a write installs the version named by its own
 * transaction's id. Writes also carry the version they overwrote, so each
 * key's version order can be rebuilt without timestamps.
 *
 * The checker builds Adya's direct serialization graph (Adya, "Weak
 * consistency", MIT PhD thesis 1999, chapter 3: ww, wr and rw edges) from
 * that and reports the phenomena each isolation level proscribes: G0,
 * G1a, G1b, G1c and G2 for serializability (PL-3, Adya §4.2-4.3); for
 * snapshot isolation the same G0/G1 phenomena and every dependency cycle
 * without two adjacent anti-dependency edges (Adya's G-SIa/G-SIb, in the
 * form of Cerone and Gotsman, "Analysing snapshot isolation", PODC'16,
 * Theorem 9), which leaves write skew allowed.
 *
 * Memory: histories and checker state live in the process heap (malloc),
 * not in DPDK memory: they can be much larger than the EAL's -m.
 *
 * Thread-safety: a struct dtxn_hist_buf is written by one thread (a
 * coordinator's lcore) and read by another only after that thread is done
 * (after rte_eal_mp_wait_lcore()); a struct dtxn_history is used by one
 * thread at a time. dtxn_check_run() only reads the history.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* History records                                                    */
/* ------------------------------------------------------------------ */

/** Version of a record as loaded before the run (no writer). */
#define DTXN_HIST_VER_INIT UINT64_C(0)
/** The key did not exist (absent read; what an insert overwrote). */
#define DTXN_HIST_VER_ABSENT UINT64_MAX
/** Nothing seen: an item an aborted txn never fetched, or a blind write whose overwritten version is unknown. */
#define DTXN_HIST_VER_NONE (UINT64_MAX - 1)

/** What a transaction did with an item. */
enum dtxn_hist_op {
	DTXN_HIST_READ = 0, /**< read version ver */
	DTXN_HIST_RMW,      /**< read version ver and installed its own version over it */
	DTXN_HIST_WRITE,    /**< installed its own version over ver without reading it (insert: ver ABSENT) */
	DTXN_HIST_OP_MAX,
};

/** The write removes the key (a delete): the version it installs is a tombstone. */
#define DTXN_HIST_F_DELETE (1u << 0)

/** One item of a recorded transaction (24 bytes). */
struct dtxn_hist_item {
	uint64_t key;
	/**
	 * READ, RMW: the version read (the writer's txn id, INIT or ABSENT).
	 * WRITE: the version overwritten (or NONE if unknown).
	 */
	uint64_t ver;
	uint32_t table;
	uint8_t op;     /**< enum dtxn_hist_op */
	uint8_t flags;  /**< DTXN_HIST_F_* */
	/**
	 * Reads only: which of the writer's writes to this key was seen,
	 * 1-based; 0 means its last one. Protocols that only ever expose
	 * committed final versions leave 0 (G1b needs a protocol that can
	 * expose an intermediate version).
	 */
	uint16_t wseq;
};

/** Most items one recorded transaction may hold (>= DTXN_TXN_MAX_ITEMS of dtxn_txn.h). */
#define DTXN_HIST_MAX_ITEMS 32768
/**
 * Longest line of a history file dtxn_history_read() accepts, bytes
 * (without the newline): room for the longest line dtxn_history_save()
 * writes (about 2 MiB) with extra spaces. A longer line is refused before more of it is read, so a
 * multi-GB line or /dev/zero costs at most this much memory.
 */
#define DTXN_HIST_LINE_MAX (UINT32_C(4) << 20)

/** How a recorded transaction ended. */
enum dtxn_hist_status {
	DTXN_HIST_COMMITTED = 0,
	DTXN_HIST_ABORTED = 1,
};

/** One recorded transaction, followed by its items (16 + 24 * n_items bytes). */
struct dtxn_hist_txn {
	uint64_t id;        /**< cluster-unique txn id: not INIT, ABSENT or NONE */
	uint32_t coord;     /**< coordinator (gid) that ran it */
	uint8_t status;     /**< enum dtxn_hist_status */
	uint8_t rsvd;
	uint16_t n_items;
	struct dtxn_hist_item items[];
};

/* ------------------------------------------------------------------ */
/* Per-coordinator recording buffer                                   */
/* ------------------------------------------------------------------ */

/**
 * An append-only buffer of one coordinator's records: a chain of chunks
 * from the heap (64 KiB first, each twice the last, up to 1 MiB), so
 * appending allocates once per chunk, never per transaction. Past @p max_bytes records are dropped and counted (the
 * history is then "truncated": the checker reports what it cannot place
 * instead of flagging it).
 */
struct dtxn_hist_buf;

/**
 * Creates a buffer and its first chunk.
 * @param coord      the coordinator's gid (for the records it appends).
 * @param max_bytes  most bytes of chunks the buffer may use; at least one
 *   chunk (64 KiB) is always allowed.
 * @return the buffer, or NULL with rte_errno ENOMEM.
 */
struct dtxn_hist_buf *dtxn_hist_buf_create(uint32_t coord, uint64_t max_bytes);

/** Frees a buffer and its records. NULL is a no-op. */
void dtxn_hist_buf_free(struct dtxn_hist_buf *b);

/**
 * Appends one transaction; the caller fills the @p n_items items returned
 * (no other allocation, no locking: the owning thread only).
 * @param n_items  at most DTXN_HIST_MAX_ITEMS.
 * @return the item array to fill (valid even for 0 items), or NULL when
 *   the transaction was dropped (buffer full, chunk allocation failed, or
 *   @p n_items too large); drops are counted by dtxn_hist_buf_dropped().
 */
struct dtxn_hist_item *dtxn_hist_buf_append(struct dtxn_hist_buf *b, uint64_t id,
					    enum dtxn_hist_status status, unsigned n_items);

/** @return transactions recorded in the buffer. */
uint64_t dtxn_hist_buf_txns(const struct dtxn_hist_buf *b);
/** @return transactions dropped because the buffer was full (saturates at UINT64_MAX). */
uint64_t dtxn_hist_buf_dropped(const struct dtxn_hist_buf *b);
/** @return bytes of chunks the buffer holds. */
uint64_t dtxn_hist_buf_bytes(const struct dtxn_hist_buf *b);

/* ------------------------------------------------------------------ */
/* Histories                                                          */
/* ------------------------------------------------------------------ */

/** A whole run's history: the buffers of every coordinator and some metadata. */
struct dtxn_history;

/** @return an empty history, or NULL with rte_errno ENOMEM. */
struct dtxn_history *dtxn_history_create(void);

/** Frees the history and every buffer it owns. NULL is a no-op. */
void dtxn_history_free(struct dtxn_history *h);

/**
 * Adds a buffer; the history owns it from then on (frees it).
 * @return 0, -EINVAL (NULL argument), -ENOMEM (the buffer stays the caller's).
 */
int dtxn_history_add_buf(struct dtxn_history *h, struct dtxn_hist_buf *b);

/**
 * Sets a metadata entry saved with the history (e.g. "isolation" = "sr",
 * "protocol" = "ford"); a second set of a key replaces the value.
 * @param key    1..31 characters of [A-Za-z0-9_.-].
 * @param value  0..127 printable characters, no newline.
 * @return 0, -EINVAL (bad key or value), -ENOSPC (more than 16 keys).
 */
int dtxn_history_set_meta(struct dtxn_history *h, const char *key, const char *value);

/** @return the value of metadata @p key, or NULL. */
const char *dtxn_history_meta(const struct dtxn_history *h, const char *key);

/** @return recorded transactions, over every buffer. */
uint64_t dtxn_history_txns(const struct dtxn_history *h);
/**
 * @return dropped transactions, over every buffer (0: the history is
 *   complete); saturates at UINT64_MAX, never wraps to 0.
 */
uint64_t dtxn_history_dropped(const struct dtxn_history *h);

/**
 * @return how many of the files read into @p h were cut short: streamed
 *   files (dtxn_hist_stream_open()) without their 'end' line, whose writer
 *   died. Such a history is incomplete like one with dropped txns: the
 *   writer's last txns may be missing, so the checker leaves reads of
 *   versions no recorded txn wrote unresolved instead of flagging them.
 */
unsigned dtxn_history_cut(const struct dtxn_history *h);

/**
 * Marks @p h as one part of a larger history by design: the transactions
 * of one CN process of a cluster (--role cn), whose peers' are recorded in
 * their own processes (checked as one by dtxn-check of every CN's file,
 * doc/guides/cluster.md). Like a history with dropped txns or cut-short
 * files, the checker then leaves unresolved what missing transactions
 * could change: reads of versions no recorded txn wrote (a peer's) and
 * reads of an absent key (a peer may have inserted or deleted it between
 * the read and the insert recorded here). dtxn_history_merge() keeps the
 * mark. Not thread-safe with other uses of @p h.
 * @param h  the history; NULL: nothing.
 */
void dtxn_history_set_partial(struct dtxn_history *h);

/** @return whether @p h was marked partial (dtxn_history_set_partial()); false for NULL. */
bool dtxn_history_partial(const struct dtxn_history *h);

/**
 * @return what reading @p h noted without refusing it, one line per file
 *   ("cn1.hist: cut short (no 'end' line: its writer died); a last line
 *   of 37 bytes without newline ignored"), "" if nothing. Owned by @p h.
 */
const char *dtxn_history_note(const struct dtxn_history *h);

/**
 * Moves every transaction of @p src into @p dst, so several files (one per
 * CN) are checked as one history: dropped and cut counts and notes add
 * up; metadata keys @p dst lacks are taken from @p src (the caller checks
 * that the runs agree). @p src is left empty (free it).
 * @return 0, -EINVAL (NULL argument or @p dst == @p src), -ENOMEM (then
 *   nothing moved).
 */
int dtxn_history_merge(struct dtxn_history *dst, struct dtxn_history *src);

/** Called for each recorded transaction; non-zero stops the walk. */
typedef int (*dtxn_hist_visit_fn)(const struct dtxn_hist_txn *t, void *arg);

/**
 * Visits every transaction, buffer by buffer in the order added, each in
 * append order.
 * @return 0, or the visitor's non-zero return.
 */
int dtxn_history_foreach(const struct dtxn_history *h, dtxn_hist_visit_fn fn, void *arg);

/**
 * Saves the history as text (format: doc/guides/checker.md, "History
 * file") to @p path, atomically: written to "<path>.tmp", flushed, synced
 * and renamed, so a reader sees a whole file or none.
 * @return 0, or -errno (-EINVAL NULL/empty path; open, write, rename errors).
 */
int dtxn_history_save(const struct dtxn_history *h, const char *path);

/**
 * Reads a saved history from @p f.
 * @param name  the file's name, for messages.
 * @param err   out: on -EINVAL, one line "NAME:LINE: what is wrong".
 * @return the history, or NULL with rte_errno EINVAL (malformed: bad
 *   header, unknown record, bad number, item count mismatch, missing end
 *   line, transaction count mismatch, a NUL byte, a line longer than
 *   DTXN_HIST_LINE_MAX), EIO (read error), ENOMEM.
 */
struct dtxn_history *dtxn_history_read(FILE *f, const char *name, char *err, size_t errlen);

/**
 * Opens and reads a saved history (dtxn_history_read()).
 * @return the history, or NULL with rte_errno as dtxn_history_read(), or
 *   the fopen() errno (ENOENT, EACCES, EISDIR, ...), with @p err set.
 */
struct dtxn_history *dtxn_history_load(const char *path, char *err, size_t errlen);

/* ------------------------------------------------------------------ */
/* Streamed history file (a CN process; doc/guides/cluster.md)        */
/* ------------------------------------------------------------------ */

/**
 * A history file written as the run goes, so it survives its writer's
 * SIGKILL: the header and metadata first, then a "stream" line, then one
 * line per ended transaction, and at a clean end the "dropped" and "end"
 * lines. A file without its 'end' line is read as cut short
 * (dtxn_history_cut()), a last line without newline is ignored with a
 * note (dtxn_history_note()).
 *
 * No system call on the sealing threads (doc/guides/testing.md, "a worker
 * lcore stalled in write(2)"): each thread that seals (a lane: a worker
 * lcore) copies a transaction's line into its current buffer, one of a
 * pool allocated at open (C library, never the DPDK heap); a full buffer
 * goes through a lock-free ring to the stream's writer thread (a pthread,
 * asleep on a semaphore when there is nothing to write), which appends it
 * with write(2). The writer also writes what a lane put in the buffer it
 * is still filling, at most flush_ns after it was sealed, so a SIGKILL
 * loses at most the lines sealed in the last flush_ns, plus those that a
 * write the file system holds up keeps waiting (at most the pool: n_bufs
 * buffers), plus, at a kill inside a write(2), a torn last line (ignored
 * by the reader). Such lines are missing like an in-flight transaction's:
 * the file is cut short. Per lane, lines reach the file in seal order;
 * lanes interleave whole lines.
 *
 * Thread-safety: any number of lanes seal concurrently, each from one
 * thread at a time; open, flush and close on one thread; close while no
 * lane seals.
 */
struct dtxn_hist_stream;

/** Lanes of a stream: lane ids are 0..DTXN_HIST_STREAM_LANES-1. */
#define DTXN_HIST_STREAM_LANES 128
/** Default buffer size, bytes: room for a record of 2000 items. */
#define DTXN_HIST_STREAM_BUF_BYTES (128u * 1024)
/** Default pool, buffers (16 MiB with the default size). */
#define DTXN_HIST_STREAM_BUFS 128u
/** Default bound on a sealed line's wait for the writer, ns of CLOCK_MONOTONIC. */
#define DTXN_HIST_STREAM_FLUSH_NS (2u * 1000 * 1000)

/** The pool and the flush period of a stream (dtxn_hist_stream_open_conf()). */
struct dtxn_hist_stream_conf {
	size_t buf_bytes;  /**< bytes per buffer, 64..UINT32_MAX: a longer line is dropped (counted) */
	unsigned n_bufs;   /**< buffers in the pool, >= 2 */
	uint64_t flush_ns; /**< a sealed line waits at most this for the writer (CLOCK_MONOTONIC ns), > 0 */
};

/** Sets @p conf to the defaults (DTXN_HIST_STREAM_BUF_BYTES, _BUFS, _FLUSH_NS). */
void dtxn_hist_stream_conf_default(struct dtxn_hist_stream_conf *conf);

/**
 * Creates (or truncates) @p path, writes the header, @p meta's metadata
 * (NULL: none) and the "stream" line, allocates the pool and starts the
 * writer thread.
 * @return the stream, or NULL with rte_errno: EINVAL (NULL/empty path, a
 *   bad @p conf), ENOMEM, or the open(2)/write(2)/pthread_create(3) errno
 *   (ENOENT, EACCES, ENOSPC, EAGAIN, ...).
 */
struct dtxn_hist_stream *dtxn_hist_stream_open_conf(const char *path, const struct dtxn_history *meta,
						    const struct dtxn_hist_stream_conf *conf);

/** dtxn_hist_stream_open_conf() with the defaults. */
struct dtxn_hist_stream *dtxn_hist_stream_open(const char *path, const struct dtxn_history *meta);

/** @return transaction lines written to @p s's file so far (by its writer). Any thread. */
uint64_t dtxn_hist_stream_txns(const struct dtxn_hist_stream *s);

/**
 * @return the longest a write(2) of lines to @p s took so far, ns of
 *   CLOCK_MONOTONIC (on the writer thread: it no longer stalls a worker
 *   lcore); 0 if @p s is NULL. Any thread.
 */
uint64_t dtxn_hist_stream_slowest_ns(const struct dtxn_hist_stream *s);

/** The figures of a stream (dtxn_hist_stream_stats()); times in ns of CLOCK_MONOTONIC. */
struct dtxn_hist_stream_stats {
	uint64_t txns;           /**< lines written */
	uint64_t writes;         /**< the writer's write(2) calls of lines */
	uint64_t write_max_ns;   /**< the slowest of them */
	uint64_t handoff_max_ns; /**< the slowest seal on a lane: copy and handoff, waits for a free buffer included */
	uint64_t waits;          /**< seals that found the pool empty and waited (the writer was behind) */
	uint64_t wait_ns;        /**< their waiting, summed */
	uint64_t lost;           /**< lines a write error lost (counted as dropped at close) */
};

/** Fills @p st (zeros for a NULL @p s). Any thread (relaxed reads). */
void dtxn_hist_stream_stats(const struct dtxn_hist_stream *s, struct dtxn_hist_stream_stats *st);

/**
 * Waits until the writer has written every line sealed before the call
 * (a process about to exit without closing: the file stays cut short,
 * but holds them). Lanes may go on sealing. NULL: a no-op returning 0.
 * @return 0, or the writer's first write error (-errno).
 */
int dtxn_hist_stream_flush(struct dtxn_hist_stream *s);

/**
 * Ends a stream: the writer writes every sealed line and stops; then
 * "dropped D" (D: @p dropped + lines a write error lost) and "end N" (N:
 * lines written) are appended, the file synced and closed, @p s freed
 * (also on error). NULL is a no-op returning 0. No lane may seal.
 * @return 0 or -errno of the first failed write(2), fsync(2), close(2).
 */
int dtxn_hist_stream_close(struct dtxn_hist_stream *s, uint64_t dropped);

/**
 * From now on each record of @p b is also handed to @p s when sealed
 * (dtxn_hist_buf_seal()), on lane @p lane: the thread that seals @p b's
 * records (its coordinator's worker; one thread per lane at a time).
 * With @p keep false the buffer forgets a record once handed (memory
 * stays at one record; dtxn_history_foreach() then sees nothing of @p b),
 * with true it keeps it too (an in-process check).
 * @return 0, -EINVAL (NULL @p b or @p s, @p lane >= DTXN_HIST_STREAM_LANES).
 */
int dtxn_hist_buf_stream(struct dtxn_hist_buf *b, struct dtxn_hist_stream *s, bool keep,
			 unsigned lane);

/**
 * The record dtxn_hist_buf_append() returned last is filled in: with a
 * stream attached, hands it to the stream as one line (a copy into the
 * lane's buffer, no system call); otherwise, or after an append that
 * dropped the record, nothing. Owning thread only.
 * @return 0; -EAGAIN: the stream's pool has no free buffer (its writer
 *   is behind): the record stays pending, nothing else may be appended
 *   to @p b; the caller waits (a coordinator yields) and calls again;
 *   -EMSGSIZE: the line is longer than a stream buffer (the record is
 *   then counted as dropped).
 */
int dtxn_hist_buf_seal(struct dtxn_hist_buf *b);

/* ------------------------------------------------------------------ */
/* Checker                                                            */
/* ------------------------------------------------------------------ */

/** Isolation level checked; same values as enum dtxn_isolation (dtxn_txn.h). */
enum dtxn_check_level {
	DTXN_CHECK_SR = 0,  /**< serializability (Adya PL-3) */
	DTXN_CHECK_SI = 1,  /**< snapshot isolation (Adya PL-SI) */
	DTXN_CHECK_LEVEL_MAX,
};

/** @return "sr" or "si" ("?" for others). */
const char *dtxn_check_level_name(enum dtxn_check_level level);
/** @return the level named @p name ("sr", "si"), or -EINVAL. */
int dtxn_check_level_parse(const char *name);

/** Anomaly classes. */
enum dtxn_anomaly {
	DTXN_ANOM_G0 = 0, /**< write cycle: a cycle of ww edges (Adya G0) */
	DTXN_ANOM_G1A,    /**< aborted read: a committed txn read an aborted txn's version */
	DTXN_ANOM_G1B,    /**< intermediate read: a committed txn read a version its writer later overwrote */
	DTXN_ANOM_G1C,    /**< circular information flow: a cycle of ww/wr edges with a wr edge */
	DTXN_ANOM_G2,     /**< anti-dependency cycle: a cycle with at least one rw edge */
	DTXN_ANOM_GSI,    /**< a cycle with an rw edge but no two adjacent rw edges (G-SIa/G-SIb) */
	/**
	 * A read of a version no recorded txn wrote (complete histories
	 * only), or a txn that reads or overwrites its own version.
	 */
	DTXN_ANOM_GARBAGE,
	DTXN_ANOM_MAX,
};

/** @return "G0", "G1a", "G1b", "G1c", "G2", "G-SI", "garbage" ("?" for others). */
const char *dtxn_anomaly_name(enum dtxn_anomaly a);

/**
 * @return true if @p level proscribes @p a: every class for SR but G-SI
 *   (a subset of G2 there); every class for SI but G2 (write skew is
 *   allowed; the cycles SI forbids are G-SI).
 */
bool dtxn_anomaly_forbidden(enum dtxn_check_level level, enum dtxn_anomaly a);

/** Edge (dependency) types of the serialization graph. */
enum dtxn_dep {
	DTXN_DEP_WW = 0, /**< the target installed the next version of a key the source wrote */
	DTXN_DEP_WR,     /**< the target read a version the source wrote */
	DTXN_DEP_RW,     /**< the source read a version the target overwrote (anti-dependency) */
	DTXN_DEP_MAX,
};

/** @return "ww", "wr" or "rw". */
const char *dtxn_dep_name(enum dtxn_dep d);

/** Steps kept of an example cycle (a longer cycle is cut; len says how long it is). */
#define DTXN_CHECK_MAX_STEPS 16

/** One step of an example: a transaction and the edge to the next step. */
struct dtxn_check_step {
	uint64_t txn;     /**< txn id (for garbage: the unknown version read) */
	uint32_t coord;   /**< its coordinator; UINT32_MAX if unknown */
	uint32_t table;   /**< table of a key behind the edge; UINT32_MAX if none found */
	uint64_t key;     /**< a key behind the edge to the next step */
	uint8_t dep;      /**< enum dtxn_dep of the edge to the next step (the last wraps to the first) */
	uint8_t rsvd[7];
};

/** What was found of one anomaly class. */
struct dtxn_check_anomaly {
	/**
	 * Cycle classes: strongly connected components holding such a cycle.
	 * Read classes (G1a, G1b, garbage): offending reads.
	 */
	uint64_t count;
	/**
	 * Cycle classes: edges of the shortest cycle found (>= 2). Read
	 * classes: 1; steps[0] is the writer (dep wr), steps[1] the reader.
	 */
	unsigned len;
	unsigned n_steps;  /**< steps filled: min(len, DTXN_CHECK_MAX_STEPS) (read classes: 2) */
	struct dtxn_check_step steps[DTXN_CHECK_MAX_STEPS];
};

/** The checker's result. */
struct dtxn_check_report {
	enum dtxn_check_level level;
	uint64_t committed;        /**< committed txns */
	uint64_t aborted;          /**< aborted txns */
	uint64_t items;            /**< items of committed txns */
	uint64_t edges[DTXN_DEP_MAX]; /**< edges by type (with repeats between the same txns) */
	/**
	 * Reads and writes the checker could not place in their key's version
	 * order (a read of an absent key that was deleted and re-inserted, a
	 * blind write with an unknown overwritten version, a read of an
	 * unknown writer or of an absent key in an incomplete history:
	 * dropped, cut or partial): no edge is drawn for them.
	 */
	uint64_t unresolved;
	uint64_t dropped;          /**< txns dropped while recording */
	uint64_t cut;              /**< history files cut short (dtxn_history_cut()) */
	bool partial;              /**< one CN's part of a cluster's (dtxn_history_set_partial()) */
	struct dtxn_check_anomaly anom[DTXN_ANOM_MAX];
	char error[160];           /**< on -EINVAL from dtxn_check_run(): why */
};

/**
 * Checks a history: builds the serialization graph (near-linear: one sort
 * of the writes, hash lookups of txn ids; Tarjan's SCC per edge class)
 * and looks for every anomaly class, each with the shortest cycle found
 * (BFS back to the source of up to 32 witness edges inside their SCC).
 * Every class is computed at both levels; @p level only decides which
 * count as failures (dtxn_anomaly_forbidden(), dtxn_check_ok()).
 *
 * @param r  out: zeroed, then filled.
 * @return 0; -EINVAL (NULL argument, bad level, or an inconsistent
 *   history: a txn id of 0, ABSENT or NONE, or one appearing twice; see
 *   r->error); -E2BIG (more than 2^30 txns or 2^32 edges); -ENOMEM.
 */
int dtxn_check_run(const struct dtxn_history *h, enum dtxn_check_level level,
		   struct dtxn_check_report *r);

/** @return true if no anomaly the report's level forbids was found. */
bool dtxn_check_ok(const struct dtxn_check_report *r);

/**
 * One line about a class: "none", or the count and the example, e.g.
 * "1 cycle; shortest 2: T0x10000000005 -rw 0:0x3-> T0x20000000007 -rw 0:0x4-> (back)".
 * @return the length the full line needs (as snprintf), or -EINVAL.
 */
int dtxn_check_describe(const struct dtxn_check_report *r, enum dtxn_anomaly a,
			char *buf, size_t len);

/**
 * Prints the report: totals, then one line per class (FAIL / PASS /
 * allowed) with its example, then "result: PASS" or "result: FAIL".
 */
void dtxn_check_print(const struct dtxn_check_report *r, FILE *out);

#ifdef __cplusplus
}
#endif
#endif /* DTXN_CHECK_H */
