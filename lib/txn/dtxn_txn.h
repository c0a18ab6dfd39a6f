/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DTXN_TXN_H
#define DTXN_TXN_H

/**
 * @file
 * The transaction API every benchmark is written against, and the
 * coordinator runtime under it (ARCHITECTURE.md, "Transaction API").
 *
 * @code
 * struct dtxn_txn *t = dtxn_txn_begin(c, DTXN_TXN_RW);
 * struct dtxn_item *a = dtxn_txn_add_ro(t, TABLE, key);
 * struct dtxn_item *b = dtxn_txn_add_rw(t, TABLE, key);
 * struct dtxn_item *c = dtxn_txn_add_rw_cells(t, TABLE, key2, DTXN_CELL(0), DTXN_CELL(2));
 * if (dtxn_txn_execute(t) != DTXN_OK) ...   // may run several times
 * modify dtxn_item_value(b);
 * rc = dtxn_txn_commit(t);                  // DTXN_OK or an abort reason
 * @endcode
 *
 * The protocol (struct dtxn_cc_ops, dtxn_txn_driver.h) and the isolation
 * level are chosen at run time by name.
 *
 * Objects:
 * - struct dtxn_db: the cluster as a coordinator sees it (fabric, catalog,
 *   protocol, isolation); shared, read-only during the run.
 * - struct dtxn_worker: one per worker lcore: scheduler, CQ, a QP per MN,
 *   address cache. Everything in it belongs to that lcore.
 * - struct dtxn_coord: one per coordinator coroutine: its transaction
 *   object, item buffers and log region.
 *
 * Thread-safety: every call taking a worker, coordinator, transaction or
 * item is made on the worker's lcore, from the coordinator's coroutine
 * (calls that post WRs yield inside). dtxn_db_* calls run on the main
 * lcore before or after the run.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dtxn_fabric.h"
#include "dtxn_sched.h"
#include "dtxn_store.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Transaction succeeded / may go on. */
#define DTXN_OK 0

/**
 * Why a transaction aborted. DTXN_ABORT(r) is the value returned by
 * dtxn_txn_execute() and dtxn_txn_commit(); it is always > 0.
 */
enum dtxn_abort_reason {
	DTXN_ABORT_NONE = 0,
	DTXN_ABORT_LOCK_CONFLICT,   /**< a lock was held by another txn (execute or validation) */
	DTXN_ABORT_VALIDATION,      /**< a read item's version changed before commit */
	DTXN_ABORT_LOCKED_READ,     /**< validation found a read item locked by a writer */
	DTXN_ABORT_INVISIBLE,       /**< a record was being committed (invisible) */
	DTXN_ABORT_NOT_FOUND,       /**< an RW/delete item does not exist */
	DTXN_ABORT_EXISTS,          /**< an insert found the key present */
	DTXN_ABORT_INDEX_FULL,      /**< no free slot for an insert */
	DTXN_ABORT_TOO_LARGE,       /**< more items or buffer bytes than a txn may hold */
	DTXN_ABORT_FABRIC,          /**< a WR completed with an error */
	DTXN_ABORT_APP,             /**< the application rolled back (dtxn_txn_abort) */
	DTXN_ABORT_WEAKENED,        /**< reserved for test aids */
	DTXN_ABORT_VERSION_GONE,    /**< MVCC: the version a read needs was garbage-collected */
	DTXN_ABORT_DELTA_FULL,      /**< a table's delta heap is used up (Lotus: no area for a row's first second version) */
	DTXN_ABORT_REASON_MAX,
};
#define DTXN_ABORT(r) ((int)(r))

/** @return a short name for an abort reason ("lock_conflict", ...). */
const char *dtxn_abort_reason_name(int reason);

enum dtxn_txn_mode {
	DTXN_TXN_RW = 0,  /**< may write */
	DTXN_TXN_RO = 1,  /**< read-only: protocols may take a faster path */
};

enum dtxn_isolation {
	DTXN_ISO_SR = 0,  /**< serializable */
	DTXN_ISO_SI = 1,  /**< snapshot isolation */
	DTXN_ISO_MAX,
};

/** @return "sr" or "si". */
const char *dtxn_isolation_name(enum dtxn_isolation iso);
/** @return the isolation named @p name ("sr", "si"), or -EINVAL. */
int dtxn_isolation_parse(const char *name);

/** Most items one transaction may hold. */
#define DTXN_TXN_MAX_ITEMS 1024

struct dtxn_db;
struct dtxn_worker;
struct dtxn_coord;
struct dtxn_txn;
struct dtxn_item;

/* ------------------------------------------------------------------ */
/* Database: the cluster seen from the coordinators                   */
/* ------------------------------------------------------------------ */

/**
 * @name Planted defects (test aids; issue 11, doc/guides/checker.md)
 * Each breaks exactly one check a protocol relies on, so that the history
 * checker must find an anomaly. Set in dtxn_db_conf.debug_flags; a
 * protocol declares which it honours per isolation level
 * (dtxn_cc_ops.weaken). Never for measurements.
 * @{
 */
/** Read items ignore other txns' locks (FORD execute + validation; Lotus SR: no read locks). */
#define DTXN_DEBUG_SKIP_LOCK_CHECK (1u << 0)
/** SR: the read set is not validated at commit (Motor §5.1 phase 2). */
#define DTXN_DEBUG_SKIP_READ_VALIDATION (1u << 1)
/** SI: a write over a version newer than T_start commits (no first-committer-wins). */
#define DTXN_DEBUG_SKIP_WW_CHECK (1u << 2)
/**
 * OOCC: Algorithm 1 as printed: a read-write txn inside its lease that saw
 * no lock skips the validation of its read set too (write skew; OOCC §V,
 * doc/guides/oocc.md).
 */
#define DTXN_DEBUG_OOCC_ALG1 (1u << 3)
/**
 * Crash point, not a defect (--debug-crash-after backup-visible,
 * doc/guides/testing.md): on each CN of dtxn_db_conf.debug_crash_cns, the
 * first transaction that writes a record whose lock another CN granted
 * makes its commit visible on the backups only, not on the primaries,
 * then its coordinator parks for good, its locks held, as if its CN had
 * died between those WRITEs (the CN's death comes later: --fault). Its
 * recovery must roll it forward, and the survivors must not overwrite its
 * records before (Lotus, doc/guides/lotus.md "Recovery").
 */
#define DTXN_DEBUG_CRASH_MID_COMMIT (1u << 4)
/**
 * Crash point (--debug-crash-after unlocked): as DTXN_DEBUG_CRASH_MID_COMMIT,
 * but the CN's first transaction that writes commits completely and
 * releases its locks, then its coordinator parks before it records the
 * commit: later writers may recycle its versions before the recovery
 * looks, which must count it as committed all the same.
 */
#define DTXN_DEBUG_CRASH_UNLOCKED (1u << 5)
/** @} */

/** Database configuration. */
struct dtxn_db_conf {
	size_t size;                  /**< sizeof(struct dtxn_db_conf) */
	const char *protocol;         /**< registered protocol name, e.g. "ford" */
	enum dtxn_isolation isolation;
	uint16_t n_mn;                /**< MNs */
	uint16_t n_replicas;          /**< copies per table */
	uint32_t n_coords;            /**< coordinators in the cluster (log regions) */
	uint64_t log_bytes;           /**< log bytes per coordinator per MN; 0: 64 KiB */
	uint32_t addr_cache_entries;  /**< per worker; 0: 1 Mi; DTXN_ADDR_CACHE_UNBOUNDED: every record */
	/**
	 * DTXN_DEBUG_* test aids (planted defects, --debug-weaken); 0 in
	 * production. dtxn_db_create() refuses a flag the protocol does not
	 * honour at @c isolation (dtxn_cc_ops.weaken).
	 */
	uint32_t debug_flags;
	/**
	 * Protocol options, "key=value,key=value" (each protocol's guide lists
	 * its keys, e.g. doc/guides/lotus.md); NULL or "" for the defaults. The
	 * string must outlive the db. A protocol without options refuses any.
	 */
	const char *cc_options;
	/**
	 * CN failures are detected and recovered in this run (leases:
	 * doc/guides/cluster.md, "Recovery"): services a CN hosts for the
	 * others keep in MN memory what a takeover needs (lib/tso's CN
	 * timestamp service: one FAA per block of timestamps). 0: they keep
	 * nothing there, and a dead host's service cannot move.
	 */
	uint8_t cn_recovery;
	/**
	 * Aux areas (Motor's and Lotus's value regions, doc/guides/store.md
	 * "Aux areas") a coordinator takes from a table's aux heap with one
	 * FAA, 1..DTXN_AUX_CHUNK_MAX; 0: DTXN_AUX_CHUNK_DEFAULT. Each heap
	 * holds max_keys areas plus one chunk per coordinator.
	 */
	uint32_t aux_chunk;
	/**
	 * CNs and worker lcores per CN in the cluster: what sizes the MN
	 * regions' message area when the protocol wants one
	 * (dtxn_cc_ops.mn_msg_bytes: RRPC rings to the MNs, one per CN
	 * worker). 0: unknown (no message area).
	 */
	uint16_t n_cn;
	uint32_t cn_workers;
	/**
	 * Fabric node bit per CN on which DTXN_DEBUG_CRASH_MID_COMMIT applies
	 * (the CNs a simulated --fault kills); 0: none. Test aid.
	 */
	uint64_t debug_crash_cns;
	/**
	 * Versions per record of every table the workload writes (its
	 * n_versions, struct dtxn_table_def), overriding the benchmark's
	 * choice: the Lotus paper runs Lotus and Motor with 2 (§8.1, text
	 * line 265), where the benchmarks declare Motor's per-workload VNum
	 * (Motor §7.2). Tables declared DTXN_TABLE_F_READ_ONLY keep theirs.
	 * 0: the benchmark's; else 2..DTXN_TABLE_MAX_VERSIONS. Protocols
	 * without versions ignore it.
	 */
	uint32_t versions;
	/**
	 * FORD and Motor (dtxn_cc_ops.false_aborts): keep the side table of
	 * lock takers' cells (lib/txn/false_abort.c, one append per record
	 * lock taken) and classify their aborts as false or true, the
	 * report's false_aborts (doc/guides/crest.md, "False aborts"). 0: no
	 * table, no append; their conflicts all count true (false_aborts 0).
	 * Record-level CREST counts its false aborts exactly either way.
	 */
	uint8_t false_aborts;
	/**
	 * Where records live (enum dtxn_placement, lib/store;
	 * doc/guides/store.md "Placement"): DTXN_PLACEMENT_TABLE (0, the
	 * artifacts' rule) or DTXN_PLACEMENT_KEY (each key's primary hashed
	 * across the MNs). Any other value: dtxn_db_create() fails (EINVAL).
	 */
	uint8_t placement;
	/**
	 * 1: pre-warmed address caches (dtxn_worker_addr_cache_prewarm(),
	 * doc/guides/store.md "Address cache"): the db holds one base of
	 * every loaded record's address, shared read-only by its workers,
	 * and each worker's cache is an overlay over it of
	 * addr_cache_entries (DTXN_ADDR_CACHE_UNBOUNDED: unbounded). 0: each
	 * worker's cache is a plain one.
	 */
	uint8_t addr_prewarm;
	/**
	 * TEST AID (--debug-post-gap, doc/guides/testing.md "OOCC under
	 * TPC-C"): in one of every 8 posts of a coordinator that span
	 * several MNs, it sleeps this many ns (dtxn_co_sleep_until_lc():
	 * virtual ns on the sim) after each chain but the last, as a CN
	 * thread descheduled while it rings
	 * the doorbells of one batch: the chains of one post take effect that
	 * far apart. No WR is changed, dropped or reordered. 0: off (the
	 * production value; one load and a predicted branch per post).
	 */
	uint64_t debug_post_gap_ns;
	/**
	 * TEST AID (--debug-decide-gap, doc/guides/testing.md "Decided, no
	 * doorbell rung"): in one of every 8 posts of a coordinator that
	 * decide their txn before the first doorbell
	 * (dtxn_batch_run_decide_early()), it sleeps this many ns
	 * (dtxn_co_sleep_until_lc(): virtual ns on the sim) after the txn is
	 * marked decided and before the first chain is rung, as a CN thread
	 * descheduled (or killed) in that CPU-only window: nothing of the
	 * txn's decisive batch has left the CN. No WR is changed. 0: off
	 * (the production value; one load and a predicted branch per post).
	 */
	uint64_t debug_decide_gap_ns;
	/**
	 * 1: the process of this db runs no transaction, only
	 * dtxn_coord_recover() (dtxn-app's recovery pass, doc/guides/cluster.md
	 * "The recovery pass"): a protocol may leave out what only its
	 * transactions use and a process of a later incarnation could not
	 * join (Scythe's RRPC rings). 0: a normal db.
	 */
	uint8_t recovery_only;
	/**
	 * TEST AID (--debug-stall, doc/guides/testing.md "A worker stalled
	 * across the deadline"): once dtxn_db_debug_stall_arm() armed it, the
	 * first coordinator of a CN in debug_stall_cns that is about to post
	 * the second mutating batch of its transaction (the first landed: a
	 * commit half done) puts its worker's OS thread to sleep this many
	 * ns (nanosleep(): the whole lcore, the CN's heartbeat agent with it,
	 * as a worker descheduled by the OS; real time only, the sim's
	 * virtual clock does not move), once. No WR is changed. 0: off (the
	 * production value; one load and a predicted branch per mutating post).
	 */
	uint64_t debug_stall_ns;
	/** TEST AID: the CNs (bit = fabric node id) debug_stall_ns applies to */
	uint64_t debug_stall_cns;
};

/**
 * Creates a database: finds the protocol and checks it supports the
 * isolation level. Tables are added next, then dtxn_db_layout().
 *
 * @return the db, or NULL with rte_errno: ENOENT (unknown protocol),
 *   ENOTSUP (isolation not supported by it, or a debug flag it does not
 *   honour at that level), EINVAL, ENOMEM.
 */
struct dtxn_db *dtxn_db_create(const struct dtxn_db_conf *conf);

/** Frees the db (not the fabric). NULL is a no-op. */
void dtxn_db_destroy(struct dtxn_db *db);

/**
 * Adds a table; its slot size (and aux area, if the protocol keeps one:
 * dtxn_cc_ops.table_sizes) comes from the protocol's record format.
 * @return 0, -EINVAL, -EEXIST (see dtxn_catalog_add_table_aux()).
 */
int dtxn_db_add_table(struct dtxn_db *db, const struct dtxn_table_def *def);

/**
 * Moves the primary of the table named @p name to MN @p mn, its backups
 * to the MNs after it (dtxn_catalog_set_primary(); dtxn-app's
 * --table-mn, doc/guides/store.md "A table's MN"). After the table was
 * added, before dtxn_db_layout(); main lcore.
 * @return 0; -ENOENT (no table of that name); -ERANGE (@p mn not below
 *   the db's MNs); -EINVAL (@p db or @p name NULL, or the fabric is open).
 */
int dtxn_db_set_table_mn(struct dtxn_db *db, const char *name, uint16_t mn);

/**
 * struct dtxn_db_conf.addr_cache_entries of an unbounded address cache
 * (dtxn-app's --addr-cache 0; the papers' artifacts: CREST's, and every
 * system of Lotus's evaluation, cache without a bound): each worker's cache
 * gets room for every record the db's tables can hold (the sum of their
 * max_keys, inserts included), so no entry is ever dropped for room.
 * Counted in dtxn_worker_footprint() like any other size.
 */
#define DTXN_ADDR_CACHE_UNBOUNDED UINT32_MAX

/**
 * Coordinators in the cluster (struct dtxn_db_conf.n_coords: every
 * coordinator's gid is below it), for a workload that gives each its own
 * key range (TPC-C's artifact layout, HISTORY). Any thread.
 * @return n_coords; 0 if @p db is NULL.
 */
uint32_t dtxn_db_n_coords(const struct dtxn_db *db);

/**
 * Entries of each worker's address cache: the db's addr_cache_entries,
 * or with DTXN_ADDR_CACHE_UNBOUNDED the sum of the tables' max_keys (at
 * least 8, at most 2^30, rte_hash's limit), known once the tables were
 * added. @return the entries; 0 if @p db is NULL. Main lcore.
 */
uint32_t dtxn_db_addr_cache_entries(const struct dtxn_db *db);

/**
 * Adds to @p fp the pre-warmed base of the db's address caches (struct
 * dtxn_db_conf.addr_prewarm): one per db, so once per process, with room
 * for every record the tables can hold; nothing without addr_prewarm.
 * The workers' overlays are in dtxn_worker_footprint(). Main lcore.
 * @return 0; -EINVAL (NULL argument).
 */
int dtxn_db_addr_base_footprint(const struct dtxn_db *db, struct dtxn_footprint *fp);

/**
 * Lays the MN regions out (dtxn_catalog_layout()).
 * @param region_size  out: bytes each MN region needs.
 * @return 0, -EINVAL, -E2BIG.
 */
int dtxn_db_layout(struct dtxn_db *db, uint64_t *region_size);

/**
 * Binds the db to an open fabric whose MN regions are at least the
 * laid-out size, and lets the protocol set up its shared state.
 * @return 0, -EINVAL (regions too small), or the protocol's error.
 */
int dtxn_db_attach(struct dtxn_db *db, struct dtxn_fabric *f);

/**
 * Loads one record (MN CPU, before the run) into every replica, in the
 * protocol's record format, and counts it in the table's loaded
 * population (dtxn_catalog_count_load(): DTXN_KEY_BYTES + value_size raw
 * bytes), which the report's MN memory overhead divides by.
 * @param value  value_size bytes.
 * @return 0, or dtxn_store_load()'s errors.
 */
int dtxn_db_load(struct dtxn_db *db, uint32_t table_id, uint64_t key, const void *value);

/**
 * A bulk loader's hint (dtxn_store_load_prefetch()): call it a few keys
 * before dtxn_db_load() of @p key, so the cache and TLB misses of that
 * load overlap the loads in between. Changes nothing; an unknown table, a
 * NULL db or a db without a fabric is a no-op. MN CPU, before the run.
 *
 * @param db        the database being loaded.
 * @param table_id  the table @p key will be loaded into.
 * @param key       the key.
 */
void dtxn_db_load_prefetch(struct dtxn_db *db, uint32_t table_id, uint64_t key);

/**
 * Starts a bulk load (dtxn_catalog_defer_copies()): until
 * dtxn_db_load_end(), dtxn_db_load() writes one replica of each table and
 * the backups are out of date. MN CPU, before the run; not thread-safe.
 * @return 0, or -EINVAL (NULL @p db).
 */
int dtxn_db_load_begin(struct dtxn_db *db);

/**
 * Ends a bulk load: copies each table's loaded replica onto its other
 * replicas mapped here (dtxn_store_copy_replicas()). Also when the load
 * failed half way, so the replicas stay alike.
 * @return 0, -EINVAL (NULL @p db), -ENXIO (not attached, or a replica not
 *   mapped in a single-process run).
 */
int dtxn_db_load_end(struct dtxn_db *db);

/**
 * Counts the rows of every table's primary whose record in MN memory
 * holds a commit neither finished nor undone (the protocol's
 * mn_unfinished: Lotus's valid INVISIBLE cells), state no finished run
 * may leave: a coordinator that reported its txn aborted, or a dead CN
 * nobody recovered, left it (an invariant of its own, so that such a row
 * is not counted as a committed value; doc/guides/testing.md,
 * "Unfinished commits"). MN CPU, while no coordinator runs.
 * @param db     the database.
 * @param n      out: such rows.
 * @param table  out: the table of the first one found (untouched if none).
 * @param key    out: its key (untouched if none).
 * @return 0, -EINVAL (NULL argument), -ENXIO (no fabric), -ENOTSUP (a
 *   protocol whose records never hold one: no mn_unfinished; @p n is 0).
 */
int dtxn_db_unfinished(struct dtxn_db *db, uint64_t *n, uint32_t *table, uint64_t *key);

/**
 * Arms the test aid dtxn_db_conf.debug_stall_ns (a no-op when it is 0):
 * the next coordinator it applies to stalls its worker once. Any thread,
 * during the run.
 * @param db  the database (NULL: no-op).
 */
void dtxn_db_debug_stall_arm(struct dtxn_db *db);

/** Called by dtxn_db_scan() for each live record; non-zero stops. */
typedef int (*dtxn_record_visit_fn)(uint64_t key, const void *value, void *arg);

/**
 * Visits every live record of a table's primary, on the MN CPU, while no
 * coordinator runs (invariant checks after the run).
 * @return 0, the visitor's non-zero return, -ENOENT (no table), -ENXIO.
 */
int dtxn_db_scan(struct dtxn_db *db, uint32_t table_id, dtxn_record_visit_fn visit,
		 void *arg);

/**
 * Reads one record's value on the MN CPU (after the run).
 * @param value  out, value_size bytes.
 * @return 0, -ENOENT (no such record or table).
 */
int dtxn_db_get(struct dtxn_db *db, uint32_t table_id, uint64_t key, void *value);

/** @return the catalog. */
const struct dtxn_catalog *dtxn_db_catalog(const struct dtxn_db *db);

/**
 * Counts the delta areas the run handed out (dtxn_store_heap_census():
 * Motor's attribute bars in use, Lotus's records), so that the catalog's memory accounting
 * (dtxn_catalog_mem()) charges them to the rows. After the run, when no
 * coordinator runs; reads the MN regions mapped in this process.
 * @return the delta heaps read, or -EINVAL (NULL db, no fabric yet).
 */
int dtxn_db_heap_census(struct dtxn_db *db);
/** @return the protocol's name. */
const char *dtxn_db_protocol(const struct dtxn_db *db);
/**
 * Which variant of its protocol the db runs, as its options select it
 * (dtxn_db_conf.cc_options), for reports: e.g. "published" for FORD as
 * its public code runs (doc/guides/ford.md). Any thread.
 * @return a static string, or NULL for the protocol's default (or a NULL @p db).
 */
const char *dtxn_db_variant(const struct dtxn_db *db);
/** @return the fabric, once attached. */
struct dtxn_fabric *dtxn_db_fabric(const struct dtxn_db *db);

/* ------------------------------------------------------------------ */
/* MN-side services (mn_svc.c)                                        */
/* ------------------------------------------------------------------ */

/*
 * Most protocols leave the MN CPUs out of the data path. One that puts a
 * service there (Scythe's lock service, issue 14) brings it through
 * dtxn_cc_ops.mn_svc; the node that owns an MN's region (--role all: the
 * main lcore; --role mn: the MN process; the simulation: a simulated MN
 * thread) creates one service per MN and polls it while the CNs run.
 */
struct dtxn_mn_svc;
struct dtxn_cq;

/** @return true if the db runs a service on the MNs' CPUs (its protocol's, or dtxn_db_set_mn_svc()'s). Any thread. */
bool dtxn_db_has_mn_svc(const struct dtxn_db *db);

struct dtxn_cc_mn_svc_ops;

/**
 * Gives a db whose protocol has no MN service another one (e.g. the TSO
 * proxies of the "tso" benchmark, lib/tso): dtxn_mn_svc_create() then
 * builds it, with the same hosting (--role all: the main lcore; the
 * simulation: a thread per MN). Its create op finds @p arg with
 * dtxn_db_mn_svc_arg(). Main lcore, before any dtxn_mn_svc_create().
 * @return 0; -EINVAL (NULL @p db or @p ops); -EEXIST (the protocol has a
 *   service, or one was set: an MN hosts one lib/rpc server).
 */
int dtxn_db_set_mn_svc(struct dtxn_db *db, const struct dtxn_cc_mn_svc_ops *ops, void *arg);

/** @return the argument given to dtxn_db_set_mn_svc(), or NULL. Any thread. */
void *dtxn_db_mn_svc_arg(const struct dtxn_db *db);

/**
 * Creates the protocol's service of MN @p mn, once the fabric is attached
 * and the tables are loaded; before or after the CN workers exist.
 * @param workers_per_cn  workers (dtxn_worker) each CN runs, >= 1.
 * @param max_coords      coordinators per worker (dtxn_worker_create()).
 * @param sched           the scheduler whose thread will poll it, charged
 *   its CPU work in virtual time (the simulated MN thread); NULL in real time.
 * @return the service, or NULL with rte_errno: ENOTSUP (the protocol has
 *   none), EINVAL (NULL @p db, no fabric, @p mn not an MN, a count 0),
 *   ENOMEM, or the fabric's errno.
 */
struct dtxn_mn_svc *dtxn_mn_svc_create(struct dtxn_db *db, uint16_t mn, unsigned workers_per_cn,
				       unsigned max_coords, struct dtxn_sched *sched);

/**
 * Serves what has arrived (one burst). Never blocks. Called on the
 * polling thread only.
 * @return requests handled (0: idle).
 */
unsigned dtxn_mn_svc_poll(struct dtxn_mn_svc *svc);

/** @return the CQ the service polls (the simulation wakes its thread on it), or NULL. */
struct dtxn_cq *dtxn_mn_svc_cq(const struct dtxn_mn_svc *svc);

/** Destroys a service no thread polls any more. NULL is a no-op. */
void dtxn_mn_svc_destroy(struct dtxn_mn_svc *svc);

/** @return the names of the registered protocols, comma-separated, in @p buf. */
void dtxn_cc_list(char *buf, size_t len);

/**
 * Tells whether a registered protocol supports an isolation level, without
 * creating a db (the app checks its arguments before the EAL starts).
 * Any thread; registration happens before main().
 *
 * @return 1 (supported), 0 (not supported), -ENOENT (no such protocol),
 *   -EINVAL (@p iso out of range or @p protocol NULL).
 */
int dtxn_cc_supports(const char *protocol, enum dtxn_isolation iso);

/**
 * Looks up a --debug-weaken mode by name (weaken.c). Any thread.
 * @param flag  out: its DTXN_DEBUG_* flag; 0 for "none" or "".
 * @return 0, or -EINVAL (unknown name, or a NULL argument).
 */
int dtxn_debug_weaken_parse(const char *name, uint32_t *flag);

/** Writes every --debug-weaken mode name, comma-separated, into @p buf (truncated to @p len). */
void dtxn_debug_weaken_list(char *buf, size_t len);

/**
 * Tells whether a registered protocol honours the planted defects
 * @p flags at isolation level @p iso (dtxn_cc_ops.weaken), without
 * creating a db. Any thread.
 * @param names  out (may be NULL): the modes it does honour at @p iso,
 *   comma-separated ("" for none), truncated to @p len bytes.
 * @return 1 (all honoured; 0 flags always are), 0 (not all), -ENOENT (no
 *   such protocol), -EINVAL (@p iso out of range or @p protocol NULL).
 */
int dtxn_cc_weaken_supported(const char *protocol, enum dtxn_isolation iso, uint32_t flags,
			     char *names, size_t len);

/**
 * Checks a protocol option string (dtxn_db_conf.cc_options) without
 * creating a db, so that the app can refuse bad options before the EAL
 * starts. Any thread.
 *
 * @param err  a one-line message on error (may be NULL).
 * @return 0 (NULL or "" always pass); -ENOENT (no such protocol); -EINVAL
 *   (the protocol takes no options, or refuses these).
 */
int dtxn_cc_check_options(const char *protocol, const char *opts, char *err, size_t errlen);

/**
 * Checks options dtxn_cc_check_options() accepted against the cluster's
 * shape (@p n_mn MNs, @p n_cn CNs) and its fabric driver @p fabric
 * ("shm", "sim", "mlx5"; NULL: unknown), before the EAL starts. Any thread.
 * @param err  a one-line message on error (may be NULL).
 * @return 0; -ENOENT (no such protocol); -EINVAL (the options do not fit
 *   this cluster, e.g. Scythe's tso_proxies=N with N >= n_mn, CREST's
 *   cache=cn on another fabric than sim).
 */
/**
 * Most coordinators (over every CN, recovery agents included) the
 * protocol can run: its record formats name a writer by its txn id in
 * fewer bits than lib/txn's (CREST: 255; doc/guides/crest.md, "The
 * coordinator limit"). Any thread.
 * @return the limit, 0 for none or an unknown protocol.
 */
uint32_t dtxn_cc_max_coords(const char *protocol);

int dtxn_cc_check_cluster(const char *protocol, const char *opts, unsigned n_mn, unsigned n_cn,
			  const char *fabric, char *err, size_t errlen);

/* ------------------------------------------------------------------ */
/* Workers and coordinators                                           */
/* ------------------------------------------------------------------ */

struct dtxn_footprint;

/**
 * Adds to @p fp (dtxn_sched.h) what dtxn_worker_create(@p db, ...,
 * @p max_coords, ...) and @p max_coords dtxn_coord_create() on it
 * allocate: the worker, its scheduler and stacks, its CQ and a QP per MN,
 * its address cache (the db's addr_cache_entries), and per coordinator
 * its transaction, WR array and first scratch arena. Protocol state
 * (drivers/cc) is bounded by a fixed share (16 KiB) per coordinator; a
 * protocol that allocates more (Lotus: lock tables, VT caches, RPC) tells
 * it through dtxn_cc_footprint(), to be added on top. Any thread; the db
 * need not be attached.
 *
 * @return 0, or -EINVAL (@p db or @p fp NULL, @p max_coords 0).
 */
int dtxn_worker_footprint(const struct dtxn_db *db, unsigned max_coords,
			  struct dtxn_footprint *fp);

/**
 * Adds to @p per_cn and @p per_worker (struct dtxn_footprint, dtxn_sched.h)
 * what @p db's protocol will allocate in a run on @p n_cn CNs: once per
 * CN (e.g. Lotus's lock table and VT cache, sized by its options) and per
 * worker with @p max_coords coordinators (e.g. Lotus's lock state, RPC
 * QPs and rings, TSO client; doc/guides/lotus.md). From the db's options
 * (dtxn_db_conf.cc_options) and catalog (after dtxn_db_layout()), before
 * dtxn_db_attach(); the protocol's db-wide state is not counted. Upper
 * bounds; add dtxn_worker_footprint() per worker for the rest. Any
 * thread, no EAL needed.
 *
 * @param n_cn        CNs (>= 1).
 * @param max_coords  coordinators per worker (>= 1).
 * @return 0; -ENOTSUP if the protocol cannot tell (nothing added: the
 *   fixed share per coordinator of dtxn_worker_footprint() must do);
 *   -EINVAL (NULL argument, @p n_cn or @p max_coords 0, options the
 *   protocol refuses).
 */
int dtxn_cc_footprint(const struct dtxn_db *db, unsigned n_cn, unsigned max_coords,
		      struct dtxn_footprint *per_cn, struct dtxn_footprint *per_worker);

/**
 * Creates a worker for the calling lcore: a scheduler, a CQ, a QP to each
 * MN from CN node @p cn_node, an address cache, and a CQ poller that wakes
 * coordinators when their WRs complete.
 *
 * @param index    worker index in the CN, 0-based (names, seeds).
 * @param max_coords coordinators this worker will run.
 * @return the worker or NULL with rte_errno.
 */
struct dtxn_worker *dtxn_worker_create(struct dtxn_db *db, uint16_t cn_node,
				       unsigned index, unsigned max_coords,
				       int socket_id);

/** Destroys a worker whose scheduler has returned. */
void dtxn_worker_destroy(struct dtxn_worker *w);

/**
 * Pre-warms worker @p w's address cache (doc/guides/store.md, "Address
 * cache", pre-warmed; the db's conf has addr_prewarm): the first call of
 * a db builds the db's base, the primary slot address of every record
 * the loaded tables hold, by scanning every table's primary on the MNs
 * (dtxn_addr_cache_prewarm(): the regions must be mapped in this process,
 * and loaded); every call attaches that base, read-only from then on, to
 * the worker's overlay (dtxn_addr_cache_set_base()), so no lookup of a
 * loaded record READs a bucket and the base is held once, not per
 * worker. After dtxn_worker_create(), before any worker of the db runs a
 * coordinator; one thread for all of the db's workers (the base is built
 * without a lock).
 *
 * @param n_cached  if not NULL, the records the worker's cache now shows.
 * @return 0; -EINVAL (NULL @p w, the db without addr_prewarm, or the
 *   worker's cache already in use); -ENOMEM (no memory for the base);
 *   -ENXIO (the MN regions are not mapped here: a --role cn process);
 *   -ENOSPC (the tables hold more records than their max_keys).
 */
int dtxn_worker_addr_cache_prewarm(struct dtxn_worker *w, uint64_t *n_cached);

/** @return the worker's scheduler. */
struct dtxn_sched *dtxn_worker_sched(struct dtxn_worker *w);

/**
 * The worker's CPU so far, ns (the report's host.cn_cpu_ns_per_txn): @p
 * busy_ns, its scheduler loop's busy time (dtxn_sched_loop_busy_ns():
 * coordinators, txn layer, protocol, fabric calls, and the emulated NIC);
 * @p nic_ns, the part of it the emulated NIC spent executing the WRs of
 * the worker's CQ (dtxn_cq_nic_cycles(); 0 on a hardware NIC). Real time
 * only (0 on sim). Any thread.
 */
void dtxn_worker_cpu(const struct dtxn_worker *w, uint64_t *busy_ns, uint64_t *nic_ns);

/** Sums the fabric counters of the worker's QPs into @p per_mn[n_mn]. */
void dtxn_worker_counters(const struct dtxn_worker *w, struct dtxn_fabric_counters *per_mn);

/**
 * Adds the fabric counters of the worker's QPs to peer CNs (lib/rpc's, e.g.
 * Lotus's lock messages: SENDs) into @p per_node[node id]; the entries of
 * other ids (the MNs') are left as they are, so one array of
 * DTXN_MAX_NODES entries can take dtxn_worker_counters() too. A worker
 * without peer QPs adds nothing. Any lcore (relaxed reads of counters the
 * owning lcore writes).
 */
void dtxn_worker_peer_counters(const struct dtxn_worker *w, struct dtxn_fabric_counters *per_node);

/**
 * The nodes this worker lost (doc/guides/mlx5.md, "A lost peer"): a WR to
 * each completed with DTXN_WC_FATAL_ERR, which a NIC reports when its
 * transport retries run out (the peer is gone) and after which the QP is
 * in the error state: every WR on it fails, so each transaction that
 * needs that node aborts with DTXN_ABORT_FABRIC. A node once lost stays
 * lost for the worker's life. Any thread (a relaxed read of bits the
 * owning lcore sets): dtxn-app's main lcore watches it and stops the
 * process (exit status 3).
 *
 * @return a mask, bit i = node i (MN i; CN j at bit n_mn + j); 0 if none.
 */
uint64_t dtxn_worker_lost_nodes(const struct dtxn_worker *w);

/**
 * How often the scratch arenas of @p w's coordinators grew on the DPDK
 * heap: chunks taken from it after each coordinator's first (a txn's need
 * beyond every chunk kept so far; chunks are kept and reused, so a steady
 * workload stops growing). Where the heap is shared by the processes of a
 * cluster (dtxn_fabric_heap_shared()), the first chunk is 1 MiB and
 * growth comes first from 32 MiB the worker reserved at creation; only
 * what exceeds that counts here.
 * dtxn-app prints it after a cluster run, with the DPDK heap's growth
 * (doc/guides/testing.md, "Shared locks").
 *
 * Any thread (relaxed reads of counters the owning lcore bumps).
 * @return the number of chunks; 0 if @p w is NULL.
 */
uint64_t dtxn_worker_arena_grows(const struct dtxn_worker *w);

/**
 * Test aid (dtxn-app --debug-lose): moves the worker's QP to @p node (an
 * MN: its one-sided QP; a CN: lib/rpc's QP to it) to the error state with
 * dtxn_qp_error_inject(), as when the peer is lost.
 *
 * Any thread; takes effect at the QP's next post.
 * @return 0, -EINVAL (@p w NULL, @p node out of range), -ENOENT (no QP to
 *   @p node).
 */
int dtxn_worker_error_inject(struct dtxn_worker *w, uint16_t node);

/** Body of a coordinator: runs transactions until dtxn_coord_stopping(). */
typedef void (*dtxn_coord_fn)(struct dtxn_coord *c, void *arg);

/**
 * Creates a coordinator coroutine on the worker.
 * @param gid  cluster-wide coordinator id, < db's n_coords (log region, txn ids).
 * @return the coordinator or NULL with rte_errno.
 */
struct dtxn_coord *dtxn_coord_create(struct dtxn_worker *w, uint32_t gid,
				     dtxn_coord_fn fn, void *arg);

/** @return true once the run is asked to stop. */
bool dtxn_coord_stopping(const struct dtxn_coord *c);
/** @return the coordinator's cluster-wide id. */
uint32_t dtxn_coord_gid(const struct dtxn_coord *c);
/** @return the fabric node id of the coordinator's CN. */
uint16_t dtxn_coord_cn_node(const struct dtxn_coord *c);
/** @return the coordinator's coroutine. */
struct dtxn_co *dtxn_coord_co(const struct dtxn_coord *c);
/**
 * Whether the coordinator's last transaction aborted on a false conflict:
 * a conflict on a record's lock or version with a writer whose cells and
 * this txn's cells on that record were disjoint (CREST paper Fig. 3; the
 * report's "false_aborts"): every conflict the txn saw before it aborted
 * (on lock_conflict, validation or locked_read) was false. Classified by
 * CREST with cell=0 and by FORD and Motor (lib/txn/false_abort.c's side
 * table of lock takers' cells; shm and sim only); doc/guides/crest.md,
 * "False aborts". The other protocols never set it.
 * @return true if it did; false otherwise, or @p c NULL. Coordinator's
 *   lcore only.
 */
bool dtxn_coord_false_abort(const struct dtxn_coord *c);

/**
 * What a coordinator waited for (dtxn_coord_waits(); the report's
 * "waits", doc/guides/report.md). Each is virtual time on the sim.
 */
enum dtxn_wait_kind {
	/** its own verbs: from the post of a batch to being resumed with its completions (lib/txn) */
	DTXN_WAIT_VERBS,
	/** a busy exclusive local lock (a write) of a CN-side record cache (CREST local=1: its 2PL) */
	DTXN_WAIT_LOCAL_LOCK_X,
	/** a busy shared local lock (a read) of that cache */
	DTXN_WAIT_LOCAL_LOCK_S,
	/** undecided dependencies (CREST local=1: the writer of a local version it read) */
	DTXN_WAIT_DEPS,
	/** attempts that aborted on a record's full round of local writers, begin to abort (CREST) */
	DTXN_WAIT_WRITER_LIMIT,
	/** as a record's last local writer, other writers' redo entries (CREST cache=cn) */
	DTXN_WAIT_DURABLE,
	DTXN_WAIT_MAX
};

/** @return the report's name of wait kind @p k ("verbs", "local_lock_x", ...); NULL if none. */
const char *dtxn_wait_name(unsigned k);

/**
 * The time coordinator @p c waited, by kind, since it was created
 * (cumulative; the difference over a txn's span is what the txn waited),
 * into @p ns. Coordinator's lcore only.
 */
void dtxn_coord_waits(const struct dtxn_coord *c, uint64_t ns[DTXN_WAIT_MAX]);

/**
 * The WRs coordinator @p c has posted to the MNs through dtxn_batch (the
 * protocols' data path: every READ, WRITE and atomic of execution,
 * validation and commit; not lib/rpc's messages, lib/tso's timestamps
 * or a protocol's own posts outside a batch), since it was created
 * (cumulative; the difference over a txn's attempts is what it cost):
 * counts by enum dtxn_wr_opcode into @p ops, payload bytes (8 per atomic)
 * into @p bytes. The report's per-type "verbs_per_commit"
 * (doc/guides/report.md). Coordinator's lcore only.
 */
void dtxn_coord_verbs(const struct dtxn_coord *c, uint64_t ops[DTXN_WR_OP_MAX],
		      uint64_t *bytes);

/**
 * Routing (Lotus §4.3, "hybrid routing"; doc/guides/lotus.md): whether a
 * read-write transaction whose first record is @p key of table
 * @p table_id should run on coordinator @p c's CN. A benchmark generator
 * acting as the routing layer draws the inputs of a read-write
 * transaction again when this says false (read-only transactions run
 * anywhere). Protocols that do not route say true. Coordinator's lcore;
 * no fabric op, no yield.
 *
 * @return true if @p c's CN owns the key's shard (or the protocol does not
 *   route, or @p c is NULL).
 */
bool dtxn_coord_routes_here(const struct dtxn_coord *c, uint32_t table_id, uint64_t key);

/* ------------------------------------------------------------------ */
/* CN crash recovery (issue 12; doc/guides/cluster.md, "Recovery")    */
/* ------------------------------------------------------------------ */

/** Most ids struct dtxn_recovery.visible holds. */
#define DTXN_RECOVERY_MAX_VISIBLE 256
/** Most steps a protocol's recovery reports (struct dtxn_recovery.step). */
#define DTXN_RECOVERY_MAX_STEPS 8

/** One step of a recovery, as the report shows it. */
struct dtxn_recovery_step {
	const char *name;   /**< static string, e.g. "undo-logs", "unlock", "rehome" */
	uint64_t start_ns;  /**< dtxn_now_ns() when the step began */
	uint64_t ns;        /**< its duration, ns (virtual on sim) */
	uint64_t work;      /**< units of work done: log records, locks, shards (see @c unit) */
	const char *unit;   /**< static string naming @c work's unit */
};

/**
 * A recovery of one dead CN: what the caller says (in) and what the
 * protocol did (out). The caller zeroes it and fills the inputs.
 */
struct dtxn_recovery {
	/* in */
	uint16_t dead_cn;         /**< fabric node id of the dead CN (n_mn .. n_mn+n_cn-1) */
	uint16_t rsvd;
	uint32_t gid_first;       /**< its coordinators: gids [gid_first, gid_first + n_gids) */
	uint32_t n_gids;
	/**
	 * Every CN known dead now, a bit per fabric node id (dead_cn's may be
	 * left out), for protocols that fence all of them at once (Lotus:
	 * the survivors must not wait for a dead CN); 0: dead_cn only.
	 */
	uint64_t dead_mask;
	/* out: filled by dtxn_coord_recover() */
	uint64_t start_ns;        /**< dtxn_now_ns() at the start */
	uint64_t end_ns;          /**< dtxn_now_ns() at the end */
	uint64_t txns_seen;       /**< the dead CN's transactions found in flight */
	uint64_t rolled_back;     /**< of those, undone (or discarded: nothing reached the records) */
	uint64_t rolled_forward;  /**< of those, completed (their commit point was passed) */
	uint64_t locks_released;  /**< locks the dead CN's transactions held, released */
	uint64_t wrs;             /**< WRs posted by the recovery */
	/**
	 * Ids of the dead coordinators' transactions that were still open
	 * (their coordinator never saw them end) and whose writes stay in MN
	 * memory after the recovery: rolled forward, or found complete. At
	 * most one per coordinator (its newest); an oracle that still has the
	 * dead coordinator's memory (the simulator) records those as
	 * committed in the history (dtxn_coord_history_end_open()).
	 */
	unsigned n_visible;
	uint64_t visible[DTXN_RECOVERY_MAX_VISIBLE];
	/**
	 * Ids of the dead coordinators' open transactions that the recovery
	 * rolled back although their commit may have been posted whole
	 * (struct dtxn_txn.decided): WRs that an RNIC refused after the CN's
	 * lease ran out (self-fencing, dtxn_fabric_set_lease()) never took
	 * effect. The recovery's verdict wins over @c decided. At most one
	 * per coordinator.
	 */
	unsigned n_undone;
	uint64_t undone[DTXN_RECOVERY_MAX_VISIBLE];
	/**
	 * Dead coordinators (gids) whose open transaction, whatever its id,
	 * the recovery found with nothing of its decisive batch landed and
	 * rolled back: for protocols whose recovery learns a holder's
	 * coordinator but not its txn id (Scythe: a ticket still held, no
	 * write-back mark; doc/guides/scythe.md "Recovery"). Only a
	 * coordinator's open txn (struct dtxn_txn.open) matches, so a closed
	 * one keeps its outcome. Wins over @c decided as @c undone does.
	 */
	unsigned n_undone_open;
	uint32_t undone_open[DTXN_RECOVERY_MAX_VISIBLE];
	unsigned n_steps;
	struct dtxn_recovery_step step[DTXN_RECOVERY_MAX_STEPS];
};

/**
 * A recovery's verdict on one transaction of a dead coordinator.
 * @param rec   a recovery's result (struct dtxn_recovery), or NULL.
 * @param id    the txn id (struct dtxn_txn.id).
 * @param open  whether that txn was still open (struct dtxn_txn.open)
 *   when its CN died: only then does rec->undone_open apply to it.
 * @return -1 rolled back (rec->undone, or rec->undone_open for an open
 *   txn of a listed coordinator), 1 left visible (rec->visible), 0 no
 *   verdict (NULL @p rec, or not listed): the caller's own rule applies
 *   (struct dtxn_txn.decided, a commit record). Pure; any thread.
 */
int dtxn_recovery_verdict(const struct dtxn_recovery *rec, uint64_t id, bool open);

/**
 * Recovers the state a dead CN left in MN memory (and, for protocols
 * that keep lock state on the CNs, on the survivors), with its
 * protocol's mechanism (dtxn_cc_ops.recover; FORD: undo logs, Motor:
 * operation log, Lotus: lock-rebuild-free recovery; each protocol's
 * guide says what it does): its in-flight transactions are rolled back
 * or completed atomically, then the locks they held are released, so
 * that every transaction it committed stays and none of its uncommitted
 * ones is half visible. Idempotent: a second call for the same CN (a
 * recovering CN that died too, recovered again by another) finds nothing
 * more to do and changes nothing.
 *
 * Runs in a surviving coordinator's coroutine @p c, which must have no
 * transaction open: it posts WRs and yields like any transaction step,
 * the same in one process (--role all, the simulator) and across
 * processes (--role cn). The caller has made sure that the dead CN's
 * coordinators run no more (fail-stop: a lease expired,
 * dtxn_lease_expired()). Coordinator's lcore; yields.
 *
 * @param rec  in: the dead CN and its coordinators' gids (< the db's
 *   n_coords); out: what was done, step by step, with virtual or real
 *   times from dtxn_now_ns().
 * @return 0; -EINVAL (NULL argument, a CN id that is no CN of the
 *   fabric, @p c's own CN, gids out of range); -ENOTSUP (the protocol
 *   has no recovery); -EBUSY (a transaction is open on @p c); -EIO (a
 *   WR failed: call again, recovery is idempotent); -EINTR (@p c
 *   stopped while the recovery waited for the survivors' transactions:
 *   Lotus's acks, CREST's fence; not finished, call again).
 */
int dtxn_coord_recover(struct dtxn_coord *c, struct dtxn_recovery *rec);

/**
 * Test oracle of the simulator and the embedded run, which keep a dead
 * CN's memory: ends coordinator @p c's open transaction (one its CN's
 * death cut short) in its history (dtxn_coord_history_attach()) as
 * committed if @p committed (a recovery listed it in
 * struct dtxn_recovery.visible), else as aborted. No fabric op; main
 * lcore, after the run.
 * @return 0, -EINVAL (NULL), -ENOENT (no transaction open on @p c).
 */
int dtxn_coord_history_end_open(struct dtxn_coord *c, bool committed);

/**
 * @return true if the db's protocol implements dtxn_coord_recover() for
 *   the db's options (dtxn_cc_ops.can_recover). Any thread.
 */
bool dtxn_db_can_recover(const struct dtxn_db *db);

/**
 * dtxn_db_can_recover() before a db exists: whether protocol @p protocol
 * (a registered name) implements dtxn_coord_recover() with option string
 * @p cc_options (dtxn_db_conf.cc_options; NULL: none). What a launcher
 * needs to turn failure detection on by default only where a dead CN can
 * be recovered (doc/guides/cluster.md, "Recovery"). Any thread.
 * @return false also for an unknown protocol.
 */
bool dtxn_protocol_can_recover(const char *protocol, const char *cc_options);

/**
 * @name CN failure detection: leases in MN memory (lease.c)
 * Each CN's cluster agent bumps its heartbeat word
 * (dtxn_store_lease_raddr()) every beat; survivors READ every
 * word and declare dead a CN whose word has not moved for a lease. Once a
 * survivor has recovered it (dtxn_coord_recover()), it writes the CN's
 * state word DTXN_LEASE_STATE_RECOVERED, which every agent reads with the
 * heartbeats. All calls run in a coordinator's coroutine (no txn open)
 * and yield; the same in one process and across processes.
 * @{
 */
#define DTXN_LEASE_STATE_ALIVE     0 /**< state word: the incarnation holds its lease */
#define DTXN_LEASE_STATE_RECOVERED 1 /**< state word: a survivor recovered the incarnation */
/** state word: a survivor took the incarnation's lease away (it recovers it next) */
#define DTXN_LEASE_STATE_FENCED    2
/** state word: the incarnation ended its run and left (dtxn_lease_leave()): nothing to recover */
#define DTXN_LEASE_STATE_LEFT      3
/**
 * A state word: the CN's incarnation (0 for its first process, one more
 * per restart, doc/guides/cluster.md "Rejoin") in bits 8..63, its state
 * (DTXN_LEASE_STATE_*) in bits 0..7. A word of 0 is incarnation 0, alive.
 */
#define DTXN_LEASE_WORD(inc, st) (((uint64_t)(inc) << 8) | (uint64_t)(st))
/** @return the incarnation of state word @p w. */
#define DTXN_LEASE_WORD_INC(w) ((uint32_t)((w) >> 8))
/** @return the state (DTXN_LEASE_STATE_*) of state word @p w. */
#define DTXN_LEASE_WORD_STATE(w) ((unsigned)((w) & 0xffu))

/** A survivor's view of the cluster's leases (dtxn_lease_poll()). */
struct dtxn_lease_view {
	uint16_t n_mn, n_cn;               /**< the fabric's */
	bool started;                      /**< a poll has filled it */
	uint64_t beat[DTXN_MAX_NODES];     /**< heartbeat words as last read, by node */
	uint64_t state[DTXN_MAX_NODES];    /**< state words as last read, by node */
	uint64_t moved_ns[DTXN_MAX_NODES]; /**< posting time of the poll that saw the CN's words move
					    *   (moved on by time the watcher did not watch: period_ns) */
	uint64_t polled_ns;                /**< dtxn_now_ns() when the last poll posted its READs */
	/** In: the watcher's poll period, ns; 0: every gap counts. A gap
	 * between two polls beyond it (the watcher itself stopped,
	 * descheduled, or busy recovering) is not counted against any CN:
	 * dtxn_lease_poll() moves each unmoved CN's moved_ns on by the excess,
	 * so a CN is suspected only after a lease of time its watcher watched
	 * (several missed beats seen, not one look after an absence). */
	uint64_t period_ns;
	uint64_t unwatched_ns;             /**< out: the excess gaps so far, summed */
	uint32_t gaps;                     /**< out: polls that came late by more than a period */
};

/**
 * Bumps the calling coordinator's CN's heartbeat: increments *@p beat
 * (the CN's count, kept by its only writer) and WRITEs it to the CN's
 * heartbeat word (one WRITE, waited for: the RNIC's read/write unit, not
 * its atomic unit, which lock CASes may saturate). Coordinator's
 * coroutine; yields.
 * @return 0, -EINVAL (NULL, or the db's layout has no lease area), or -EIO.
 */
int dtxn_lease_beat(struct dtxn_coord *c, uint64_t *beat);

/**
 * READs every CN's heartbeat and state word (two READs, waited for) into
 * @p v; a CN whose heartbeat or state word moved since the last poll (or
 * the first poll) gets moved_ns stamped with the time the READs were
 * posted (polled_ns; a rejoin moves the state word before the new
 * incarnation's beats are seen). Times are posting times, so a watcher
 * descheduled between its READs and its decision judges what it read
 * when it read it, never a live CN stale. With v->period_ns set, a poll
 * that comes more than two periods after the last one moves every
 * unmoved CN's moved_ns on by the gap minus a period (counted in
 * v->unwatched_ns and v->gaps): a watcher that was itself stopped or
 * starved judges nobody on its absence. Coordinator's coroutine; yields.
 * @return 0, -EINVAL, -EIO.
 */
int dtxn_lease_poll(struct dtxn_coord *c, struct dtxn_lease_view *v);

/**
 * Folds one poll into @p v (dtxn_lease_poll()'s second half, pure): the
 * heartbeat and state words @p beat[n] and @p state[n] of CN nodes @p n0
 * .. @p n0 + @p n_cn - 1 (@p n0: the fabric's n_mn), read by READs posted
 * at @p now (ns, dtxn_now_ns()). A CN whose words moved (or every CN at
 * the first poll) gets moved_ns = @p now; with v->period_ns set and @p now
 * more than two periods after the last poll, each unmoved CN's moved_ns
 * moves on by the gap minus a period (at most to @p now), added to
 * v->unwatched_ns, and v->gaps counts it. Any thread; no fabric op.
 */
void dtxn_lease_view_update(struct dtxn_lease_view *v, uint16_t n0, uint16_t n_cn, uint64_t now,
			    const uint64_t *beat, const uint64_t *state);

/**
 * CNs whose lease expired in @p v at @p now_ns (or at v->polled_ns if
 * earlier: a view is only as fresh as its poll): heartbeat not moved for
 * more than @p lease_ns, state neither RECOVERED nor LEFT; or state FENCED (taken
 * away, whatever its beat: a fenced zombie may beat once more). A CN that
 * never beat (its word is 0: not started yet) has no lease to lose. Pure;
 * any thread.
 * @return a mask, bit (node id) per such CN.
 */
uint64_t dtxn_lease_expired(const struct dtxn_lease_view *v, uint64_t now_ns, uint64_t lease_ns);

/**
 * The lowest-numbered CN of @p v that is neither expired at @p now_ns nor
 * recovered: the survivor designated to recover the others. Pure.
 * @return its node id, or UINT16_MAX if none.
 */
uint16_t dtxn_lease_recoverer(const struct dtxn_lease_view *v, uint64_t now_ns, uint64_t lease_ns);

/**
 * Writes CN @p node's state word RECOVERED for incarnation @p inc
 * (DTXN_LEASE_WORD(inc, DTXN_LEASE_STATE_RECOVERED); waited for).
 * Coordinator's coroutine; yields.
 * @return 0, -EINVAL, -EIO.
 */
int dtxn_lease_mark_recovered(struct dtxn_coord *c, uint16_t node, uint32_t inc);

/**
 * Takes CN @p node's lease away before recovering it (doc/guides/cluster.md,
 * "Self-fencing"): CAS of its state word from @p seen (ALIVE, as the
 * caller's last dtxn_lease_poll() read it) to FENCED of the same
 * incarnation. Once it returned 0, the fenced incarnation commits nothing
 * that lands after its lease, as it last renewed it, ran out
 * (dtxn_lease_renew()): a recoverer that waits a lease after the fence
 * before it touches the CN's state never races the CN's own writes.
 * Coordinator's coroutine; yields.
 * @return 0 (fenced now, or already by another survivor); -EAGAIN (the word
 *   moved since @p seen: the CN renewed, rejoined, or was recovered: poll
 *   again); -EINVAL; -EIO.
 */
int dtxn_lease_fence(struct dtxn_coord *c, uint16_t node, uint64_t seen);

/** A restarted CN's transaction sequence numbers begin at its incarnation shifted by this. */
#define DTXN_TXN_SEQ_INC_SHIFT 32

/**
 * A CN's own lease, as its coordinators see it (self-fencing; shared by
 * every worker of the CN; doc/guides/cluster.md "Self-fencing"). The
 * agent's heartbeat renews it (dtxn_lease_renew()); lib/txn holds every
 * batch with a WRITE, CAS, masked CAS or FAA of a coordinator of a worker
 * that has it (dtxn_worker_set_lease_gate()) while it is not valid, and
 * once the CN is fenced parks the coordinator for good, its transaction
 * open, as if its process had been killed there (the recoverer decides
 * the transaction). Zero it, set @c inc, then hand it over.
 */
/** struct dtxn_lease_gate.fenced: a survivor fenced the CN's state word. */
#define DTXN_LEASE_FENCED_BY_PEER 1u
/** struct dtxn_lease_gate.fenced: the CN's own lease ran out and a mutating WR was refused. */
#define DTXN_LEASE_FENCED_SELF 2u
/** struct dtxn_lease_gate.fenced: a commit its coordinator could neither finish nor undo (dtxn_coord_unfinished()). */
#define DTXN_LEASE_FENCED_UNFINISHED 3u

struct dtxn_lease_gate {
	uint32_t inc;              /**< this process's incarnation of the CN */
	/** non-zero: no mutating WR ever again; DTXN_LEASE_FENCED_BY_PEER (the
	 *  renewal read its state word fenced: a survivor declared it dead) or
	 *  DTXN_LEASE_FENCED_SELF (a mutating WR refused after its own lease
	 *  ran out unrenewed: txn_lease_refused()) or
	 *  DTXN_LEASE_FENCED_UNFINISHED (dtxn_coord_unfinished()) */
	uint32_t fenced;
	uint64_t valid_until_ns;   /**< dtxn_now_ns() up to which mutating WRs may leave */
	uint64_t rejoined_ns;      /**< dtxn_now_ns() when this incarnation took its lease, 0: not yet */
	uint64_t held;             /**< batches that waited for a renewal (relaxed counter) */
};

/**
 * One heartbeat with the self-fencing check: WRITEs the beat (as
 * dtxn_lease_beat()) and, in the same doorbell after it, READs the CN's
 * state word. ALIVE for @p g->inc: the lease is renewed up to the post's
 * time + @p lease_ns - @p guard_ns (a survivor fences only after it read
 * the word, and then waits @p lease_ns before it recovers, so what leaves
 * before that point lands before the recovery if it lands within
 * @p guard_ns). RECOVERED of an older incarnation: this process is a
 * restart; it takes the lease with a CAS to ALIVE(@p g->inc) (the rejoin;
 * @c rejoined_ns); LEFT of an older one likewise. An older incarnation
 * neither RECOVERED nor LEFT: no renewal
 * (never two incarnations at once; call again). FENCED or RECOVERED of
 * this incarnation, or a newer one: @c fenced is set. Coordinator's
 * coroutine; yields.
 * @return 0 (renewed, or waiting for an older incarnation's recovery),
 *   -ESHUTDOWN (fenced), -EINVAL, -EIO.
 */
int dtxn_lease_renew(struct dtxn_coord *c, uint64_t *beat, struct dtxn_lease_gate *g,
		     uint64_t lease_ns, uint64_t guard_ns);

/**
 * The CN of @p c ends its run cleanly (self-fencing agents; a restarted
 * peer may outlive it): CAS of its state word from ALIVE(@p g->inc) to
 * LEFT, so that no survivor takes its silence for a death. A fenced
 * incarnation stays FENCED. Coordinator's coroutine; yields.
 * @return 0 (left, or it was not ALIVE), -EINVAL, -EIO.
 */
int dtxn_lease_leave(struct dtxn_coord *c, const struct dtxn_lease_gate *g);

/**
 * Makes every coordinator of worker @p w (but those marked with
 * dtxn_coord_lease_exempt()) hold its mutating batches on gate @p g
 * (NULL: no gate, the default). Main lcore, before the worker's
 * coordinators are created: their transaction ids then begin at
 * @p g->inc << DTXN_TXN_SEQ_INC_SHIFT, so a restarted CN's ids never
 * repeat an earlier incarnation's (histories, logs).
 * @return 0, -EINVAL (@p w NULL).
 */
int dtxn_worker_set_lease_gate(struct dtxn_worker *w, struct dtxn_lease_gate *g);

/** Bytes of a coordinator's commit record (dtxn_coord_set_commit_record()). */
#define DTXN_COMMIT_RECORD_BYTES 64

/**
 * Fills the commit record of a transaction about to be decided
 * (@p rec: DTXN_COMMIT_RECORD_BYTES, 8-byte aligned). Coordinator's lcore;
 * must not yield.
 */
typedef void (*dtxn_commit_record_fn)(void *arg, const struct dtxn_txn *t, void *rec);

/**
 * Makes every decisive batch of @p c (dtxn_batch_run_decide() and
 * dtxn_batch_run_decide_early(): each protocol's commit point) carry its
 * commit record: the DTXN_COMMIT_RECORD_BYTES that @p fn fills (once per
 * batch), as one more unsignaled inline WRITE at the end of the chain to
 * EVERY MN the batch touches, into coordinator slot @p slot on that MN
 * (lib/store's dtxn_store_crec_raddr(cat, mn, slot)); posted with the
 * batch under the same doorbells and lease gate, flagged
 * DTXN_WR_F_CONTROL (not counted as the protocol's verbs: the verbs per
 * transaction stay the same). A batch that touches no MN carries none.
 * What survives a CN process on another host: the app keeps each
 * coordinator's benchmark counters there (doc/guides/cluster.md,
 * "Counters of a dead CN"); a survivor READs the slot on every MN and
 * settles from the newest record (the largest transaction id: those of
 * one coordinator only grow, dtxn_txn_id()) with the recovery's verdict
 * on the transaction it names. Every chain carries it because a chain of
 * a dead CN may land on some MNs only: a chain that carries a
 * transaction's data to an MN carries its record there too (batch.c
 * says why that makes the newest record consistent).
 *
 * @param c     the coordinator.
 * @param slot  its commit-record slot (the app passes the coordinator's
 *              gid), < the catalog's n_logs.
 * @param fn    fills the record; NULL turns the record off.
 * @param arg   passed to @p fn.
 * Before the run (after dtxn_db_layout()), on the main lcore or @p c's.
 * @return 0, -EINVAL (@p c NULL, or @p fn set and @p slot has no record
 *   slot: out of range, or the db not laid out).
 */
int dtxn_coord_set_commit_record(struct dtxn_coord *c, uint32_t slot,
				 dtxn_commit_record_fn fn, void *arg);

/** Lets coordinator @p c post past its worker's lease gate (the agent's own coroutines). */
void dtxn_coord_lease_exempt(struct dtxn_coord *c);

/**
 * Keeps coordinator @p c running after its worker is asked to stop: while
 * *@p flag is nonzero, dtxn_coord_stopping(@p c) returns false, so what it
 * runs does not give up as in a stopping run (a CN agent that recovers a
 * peer dying after this CN's run ended; doc/guides/cluster.md, "A second
 * death of the same CN"). Its worker's scheduler still ends only when
 * every coroutine has returned. @p flag (NULL: none) may be written by
 * any thread (read with acquire loads) and must outlive the coordinator.
 * Main lcore, before the worker runs.
 */
void dtxn_coord_set_linger(struct dtxn_coord *c, const uint32_t *flag);
/** @} */

struct dtxn_hist_buf; /* lib/check/dtxn_check.h */

/**
 * Records every transaction the coordinator ends from now on (committed,
 * or aborted for any reason, rollbacks included) into @p buf, for the
 * serializability checker (issue 5; doc/guides/checker.md). Per item:
 * table, key, read/read-modify-write/write, and the version seen as the
 * protocol reports it in dtxn_item.version (the contract is in
 * dtxn_txn_driver.h). The record is appended at the end of commit or
 * abort, from the coordinator's lcore, into the buffer's current chunk:
 * no fabric op, no lock, no allocation but one per 1 MiB chunk.
 *
 * Call on the main lcore before the run (or from the coordinator's own
 * lcore). The caller keeps ownership of @p buf, which must outlive the
 * coordinator's last transaction; read it only after the worker's lcore
 * has finished. NULL stops recording.
 *
 * @return 0, or -EINVAL (@p c NULL).
 */
int dtxn_coord_history_attach(struct dtxn_coord *c, struct dtxn_hist_buf *buf);

/* ------------------------------------------------------------------ */
/* Transactions                                                       */
/* ------------------------------------------------------------------ */

/**
 * Starts a transaction on a coordinator (one at a time per coordinator; a
 * begin while one is open aborts the old one).
 * @return the transaction (owned by the coordinator; valid until the next
 *   begin).
 */
struct dtxn_txn *dtxn_txn_begin(struct dtxn_coord *c, enum dtxn_txn_mode mode);

/**
 * Adds a record to read. Its value is available after the next execute.
 * @return the item, or NULL when the txn holds DTXN_TXN_MAX_ITEMS items
 *   or the table does not exist (execute then aborts: DTXN_ABORT_TOO_LARGE
 *   or DTXN_ABORT_NOT_FOUND).
 */
struct dtxn_item *dtxn_txn_add_ro(struct dtxn_txn *t, uint32_t table_id, uint64_t key);

/**
 * dtxn_txn_add_ro() for some cells (columns) of the record only
 * (ARCHITECTURE.md: "optional column mask"; doc/guides/store.md, "Columns
 * and cells"): after execute, the value buffer holds the record's bytes
 * for the cells in @p cells; the bytes of other cells are unspecified
 * (protocols with cells may leave them stale or zero; protocols without
 * cells, FORD and Lotus, read the whole value anyway).
 *
 * @param cells  a cell mask (DTXN_CELL(c) | ..., bit c = column c of the
 *   table's declaration, struct dtxn_table_def); bits of cells the table
 *   lacks are ignored; DTXN_CELLS_ALL or 0: the whole record.
 * @return as dtxn_txn_add_ro().
 */
struct dtxn_item *dtxn_txn_add_ro_cells(struct dtxn_txn *t, uint32_t table_id, uint64_t key,
					uint32_t cells);

/** Adds a record to read and write (not allowed in a DTXN_TXN_RO txn: NULL). */
struct dtxn_item *dtxn_txn_add_rw(struct dtxn_txn *t, uint32_t table_id, uint64_t key);

/**
 * dtxn_txn_add_rw() for some cells of the record: the application reads
 * the cells in @p rd_cells | @p wr_cells and changes only those in
 * @p wr_cells (TPC-C Payment: a customer's balance, YTD payment and
 * payment count). Changes to other cells are undefined: protocols with
 * cells (Motor) discard them at commit, protocols without cells write the
 * whole value back. Bits of cells the table lacks are ignored;
 * @p wr_cells 0 or DTXN_CELLS_ALL: every cell (then every cell is read
 * too); @p rd_cells 0: only the write cells are read.
 *
 * @return as dtxn_txn_add_rw().
 */
struct dtxn_item *dtxn_txn_add_rw_cells(struct dtxn_txn *t, uint32_t table_id, uint64_t key,
					uint32_t rd_cells, uint32_t wr_cells);

/**
 * Adds a record to insert; fill dtxn_item_value() before commit. If the key
 * exists, execute returns DTXN_ABORT_EXISTS.
 */
struct dtxn_item *dtxn_txn_insert(struct dtxn_txn *t, uint32_t table_id, uint64_t key);

/** Adds a record to delete. If it does not exist, execute returns DTXN_ABORT_NOT_FOUND. */
struct dtxn_item *dtxn_txn_delete(struct dtxn_txn *t, uint32_t table_id, uint64_t key);

/**
 * Fetches (and, as the protocol does, locks) the items added since the
 * last execute, in one round of doorbell batches, yielding until done.
 * May be called several times.
 *
 * A read item whose key does not exist is not an abort: dtxn_item_exists()
 * says false (the protocol validates the absence at commit).
 *
 * @return DTXN_OK, or an abort reason (the txn is then aborted and its
 *   locks released; begin a new one).
 */
int dtxn_txn_execute(struct dtxn_txn *t);

/**
 * Ends an execution block (CREST §5, "Pipelined execution"; doc/guides/
 * crest.md, "Localized execution"): the application has fetched the items
 * of the block (one or more dtxn_txn_execute() calls since the last block
 * end) and made every change it makes to their values, and what it adds
 * next depends on what it read (a key dependency: TPC-C NewOrder's ORDER
 * keys need D_NEXT_O_ID). The values of the block's items must not change
 * after this call. A protocol with local execution then publishes the
 * block's writes to the other transactions of its CN and releases the
 * block's local locks; the others ignore the call. dtxn_txn_commit() ends
 * the last block itself. Coordinator's coroutine; may yield.
 *
 * @return DTXN_OK, or an abort reason (the txn is then aborted and its
 *   locks released, as after a failed dtxn_txn_execute()): the reasons of
 *   dtxn_txn_execute(), or the protocol's (CREST: DTXN_ABORT_VALIDATION
 *   when a newer local transaction already read or wrote a cell this
 *   block writes, the abort-on-newer-tag rule).
 */
int dtxn_txn_block_end(struct dtxn_txn *t);

/**
 * Validates and commits (replicated, logged), yielding inside.
 * @return DTXN_OK, or an abort reason (the txn is aborted).
 */
int dtxn_txn_commit(struct dtxn_txn *t);

/**
 * Rolls back by the application's decision (releases locks).
 * @param reason  DTXN_ABORT_APP normally.
 */
void dtxn_txn_abort(struct dtxn_txn *t, int reason);

/**
 * @return the cluster-unique id of the txn (> 0): (gid + 1) <<
 *   DTXN_TXN_SEQ_BITS | seq, seq one more at each dtxn_txn_begin() of the
 *   coordinator (and starting past an earlier incarnation's, with a
 *   lease gate), so one coordinator's ids only grow (until seq wraps after
 *   2^40 - 1 begins): the newest of its commit records is the one with
 *   the largest id (dtxn_coord_set_commit_record()). Any thread.
 */
uint64_t dtxn_txn_id(const struct dtxn_txn *t);

/**
 * The item's value buffer (value_size bytes of its table): the record as
 * read (after execute), to be modified in place for RW and insert items.
 * Valid until the next begin on the coordinator.
 */
void *dtxn_item_value(struct dtxn_item *it);

/** @return true if the record existed when read. */
bool dtxn_item_exists(const struct dtxn_item *it);

/** @return the item's key. */
uint64_t dtxn_item_key(const struct dtxn_item *it);

#ifdef __cplusplus
}
#endif
#endif /* DTXN_TXN_H */
