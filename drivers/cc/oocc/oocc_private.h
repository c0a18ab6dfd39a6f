/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DTXN_OOCC_PRIVATE_H
#define DTXN_OOCC_PRIVATE_H

/**
 * @file
 * OOCC (one-round OCC for read-only transactions under a global lease;
 * /work/shared/papers/oocc.md, doc/guides/oocc.md), serializable, with the
 * read-write validation Algorithm 1 leaves out. Which file does what:
 * - oocc.c: ops table, registration, shared / per-coordinator state;
 * - format.c: the record format (version, value, tail version, lock
 *   footer) and the lock word;
 * - lease.c: the lease word (rv, ww), the skip rule, the writer's wait,
 *   the Lease Manager's two-phase adjustment (§VII) and its policy;
 * - execute.c: execution (reads, intention locks by CAS, inserts,
 *   deletes: callbacks to lib/txn's locating steps) and the release of
 *   held locks on abort;
 * - validate.c: the validation READs of a read set and their checks;
 * - commit.c: Validate&Logging (validation, write-lock upgrade, redo log;
 *   one round) and Commit (lease wait, one WRITE per record that updates
 *   and unlocks it);
 * - options.c: --cc-opts (lease, write_unlock, delayed_lock, the lease
 *   figures, dynamic adjustment);
 * - recover.c: CN crash recovery (redo records rolled forward past their
 *   first commit WRITE, else back; the dead CN's locks released).
 */

#include <rte_log.h>

#include "dtxn_txn_driver.h"

extern int dtxn_oocc_logtype;
#define OOCC_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_##level, dtxn_oocc_logtype, "dtxn.cc.oocc: " fmt "\n", ##__VA_ARGS__)

/* ------------------------------------------------------------------ */
/* Record format (format.c)                                           */
/* ------------------------------------------------------------------ */

/*
 * Slot: [slot header 16 B][version u64][value, 8-aligned][tail version u64][lock u64].
 * One READ returns all of it; the lock is the last 8-byte word (oocc.md §7),
 * written last by the commit WRITE that updates and unlocks the record.
 * version and tail version are the id of the txn that wrote the record (0
 * after load): a READ that overlapped a commit WRITE sees them differ
 * (the torn-read guard, header/footer version match, oocc.md §7).
 */
#define OOCC_VERSION_OFF 16
#define OOCC_VALUE_OFF 24
/** Footer bytes after the value: tail version + lock. */
#define OOCC_FOOTER 16

struct oocc_slot {
	struct dtxn_slot_hdr hdr;
	uint64_t version;
	uint8_t value[];
};
_Static_assert(sizeof(struct oocc_slot) == OOCC_VALUE_OFF, "oocc slot layout");

/** The footer: the last 16 B of a slot. */
struct oocc_footer {
	uint64_t tail;     /**< version again */
	uint64_t lock;     /**< lock word (below) */
};

/*
 * Lock word: 0 free; a txn id (bit 63 clear) = intention-locked by that
 * txn (the CAS of Execute&Locking; blocks read-write txns, read-only txns
 * may read but must validate); OOCC_WLOCK | txn id = write-locked (the
 * WRITE of Validate&Logging; blocks every reader). Txn ids are below 2^63.
 */
#define OOCC_WLOCK (UINT64_C(1) << 63)

/** What a reader makes of a lock word. */
enum oocc_lock_state {
	OOCC_LOCK_FREE = 0,  /**< free, or held by the reader itself */
	OOCC_LOCK_INTENT,    /**< intention-locked by another txn */
	OOCC_LOCK_WRITE,     /**< write-locked by another txn */
};

/**
 * Classifies lock word @p lock for reader @p self_id. With @p delayed_lock
 * false (ablation, Fig. 11) every lock is a write lock. Pure.
 */
enum oocc_lock_state oocc_lock_state(uint64_t lock, uint64_t self_id, bool delayed_lock);

uint32_t oocc_slot_size(uint32_t value_size);
void oocc_slot_format(const struct dtxn_table *t, void *slot, const void *value, void *arg);
void *oocc_slot_value(const struct dtxn_table *t, void *slot);

/** The footer of slot image @p slot of table @p tab. */
static inline struct oocc_footer *
oocc_footer_of(const struct dtxn_table *tab, void *slot)
{
	return (struct oocc_footer *)((char *)slot + tab->slot_size - OOCC_FOOTER);
}

/** True if slot image @p slot is torn: its header and tail versions differ. */
bool oocc_slot_torn(const struct dtxn_table *tab, const void *slot);

/* ------------------------------------------------------------------ */
/* Options (options.c)                                                */
/* ------------------------------------------------------------------ */

/** Largest lease_ns= / offset_ns=, ns (the word keeps 32 bits each). */
#define OOCC_LEASE_MAX_NS 1000000u

struct oocc_opts {
	uint8_t lease;         /**< 1: read-only txns may skip validation, writers wait ww */
	uint8_t write_unlock;  /**< 1: one WRITE updates and unlocks (§V) */
	uint8_t delayed_lock;  /**< 1: intention lock + write lock (§IV) */
	uint8_t upgrade_first; /**< 1: R2's upgrades take effect before its validation READs (commit.c) */
	uint8_t adapt;         /**< 1: the Lease Manager adjusts the lease (§VII, Fig. 13d) */
	uint32_t lease_ns;     /**< L, the lease (and adapt's start), ns */
	uint32_t offset_ns;    /**< clock-drift allowance: rv = L - off, ww = L + off, ns */
	uint32_t epoch_us;     /**< adapt: the manager's period, virtual or real us */
	uint32_t lease_min_ns; /**< adapt: bounds of the lease */
	uint32_t lease_max_ns;
};

void oocc_opts_default(struct oocc_opts *o);
/** Parses @p s over @p o; 0 or -EINVAL with a one-line message in @p err. */
int oocc_opts_parse(const char *s, struct oocc_opts *o, char *err, size_t errlen);
int oocc_check_options(const char *opts, char *err, size_t errlen);
const char *oocc_variant(const struct dtxn_db *db);

/* ------------------------------------------------------------------ */
/* The global lease (lease.c)                                         */
/* ------------------------------------------------------------------ */

/*
 * The lease word, one 8-byte word per machine (CN) shared by its
 * coordinators (§VII): rv, the read-validate lease, in the low 32 bits,
 * ww, the write-wait lease, in the high 32 bits; both ns.
 */
static inline uint64_t
oocc_lease_pack(uint32_t rv, uint32_t ww)
{
	return (uint64_t)ww << 32 | rv;
}

static inline uint32_t
oocc_lease_rv(uint64_t w)
{
	return (uint32_t)w;
}

static inline uint32_t
oocc_lease_ww(uint64_t w)
{
	return (uint32_t)(w >> 32);
}

/**
 * The word of lease @p lease_ns with clock allowance @p offset_ns (§VII-B):
 * rv = L - off (0 if off >= L), ww = L + off (saturating at 2^32 - 1).
 */
uint64_t oocc_lease_word(uint32_t lease_ns, uint32_t offset_ns);

/**
 * Prepare state of an adjustment from word @p old to @p new (§VII, Table
 * II): rv = min of the two rv, ww = max of the two ww. Keeps Property 2
 * (every rv <= every ww) while some machines hold @p old and others the
 * prepare state or, after the commit, @p new.
 */
uint64_t oocc_lease_prepare(uint64_t old, uint64_t new);

/**
 * Elapsed ns from @p from to @p to on one clock, modulo 2^64 (a clock that
 * wrapped between them still gives the right difference).
 */
static inline uint64_t
oocc_elapsed(uint64_t from, uint64_t to)
{
	return to - from;
}

/**
 * The read-only skip rule (Algorithm 1, line 13): a read set read between
 * @p first_ns (first READ posted) and @p last_ns (last READ completed)
 * may skip validation iff the elapsed time is at most @p rv and no record
 * was seen intention-locked (@p saw_intent).
 */
bool oocc_lease_skip(uint64_t first_ns, uint64_t last_ns, uint32_t rv, bool saw_intent);

/**
 * The earliest time a writer whose locks were all in effect at
 * @p locked_ns may post its commit WRITE: locked_ns + ww (modulo 2^64).
 */
static inline uint64_t
oocc_lease_commit_at(uint64_t locked_ns, uint32_t ww)
{
	return locked_ns + ww;
}

/** Bins of the manager's histogram of read-only read rounds (250 ns each). */
#define OOCC_ADAPT_BINS 256
#define OOCC_ADAPT_BIN_NS 250

/** Read-only statistics a coordinator keeps for the Lease Manager. */
struct oocc_ro_stats {
	uint64_t ro;               /**< read-only commits attempted */
	uint64_t skipped;          /**< of which skipped validation */
	uint64_t bins[OOCC_ADAPT_BINS]; /**< their read rounds, by 250 ns (last bin: beyond) */
};

/**
 * The Lease Manager's policy (Fig. 13d; oocc.md §4 gives no formula): from
 * one epoch's statistics @p s and the lease @p cur_ns, the next lease:
 * the 80th percentile of read rounds plus @p offset_ns, rounded up to a
 * bin, when fewer than 80% of read-only txns skipped validation and that
 * is longer (grow), or when the lease is more than twice it (shrink);
 * else @p cur_ns. Clamped to [@p min_ns, @p max_ns]. No read-only txn: @p cur_ns.
 */
uint32_t oocc_adapt_next(const struct oocc_ro_stats *s, uint32_t cur_ns, uint32_t offset_ns,
			 uint32_t min_ns, uint32_t max_ns);

/** Adds a read round of @p ns to @p s (skipped: whether it skipped validation). */
void oocc_ro_stats_add(struct oocc_ro_stats *s, uint64_t ns, bool skipped);

/* ------------------------------------------------------------------ */
/* State                                                              */
/* ------------------------------------------------------------------ */

/** One machine's (CN's) lease word, on its own cache line. */
struct oocc_cn {
	uint64_t lease_word;
} __rte_cache_aligned;

/** db->cc_shared. */
struct oocc_shared {
	struct oocc_opts opts;
	uint16_t n_cn;
	uint16_t n_mn;
	struct oocc_cn *cn;         /**< n_cn lease words, by CN index (node - n_mn) */
	/* Lease Manager (lease.c); run by coordinator gid 0 at txn begin */
	uint32_t lease_ns;          /**< current L */
	uint32_t next_ns;           /**< adjustment in flight: the new L */
	uint8_t phase;              /**< 0 stable, 1 prepared */
	uint64_t phase_until;       /**< prepared: commit no earlier than this */
	uint64_t next_epoch;        /**< next policy decision */
	uint32_t adjustments;       /**< adjustments committed */
	struct oocc_ro_stats last;  /**< sum at the previous epoch */
	uint32_t n_stats;           /**< adapt: statistics kept, one per coordinator gid */
	struct oocc_ro_stats *stats;/**< adapt: n_stats, indexed by gid; else NULL */
};

/** Per-coordinator state. */
struct oocc_coord {
	struct oocc_shared *sh;
	uint64_t sink;              /**< old values of fire-and-forget CASes */
	uint64_t log_head;          /**< next redo record offset in the log regions */
	uint64_t void_word;         /**< 0: written over an aborted redo record's txn id */
	struct oocc_ro_stats *ro;   /**< adapt: this coordinator's read-only statistics; else NULL */
};

/* Per-txn scratch in t->cc[] */
enum {
	OOCC_CC_FIRST = 0,   /**< first READ posted, ns (0: none yet) */
	OOCC_CC_LAST,        /**< last execute's READs completed, ns */
	OOCC_CC_WORD,        /**< lease word read at the first READ */
	OOCC_CC_LOCKED,      /**< locks in effect (last execute with locks), ns; with OOCC_T_LOCKED */
	OOCC_CC_WW,          /**< ww read when the locks were in effect */
	OOCC_CC_FLAGS,       /**< OOCC_T_* */
	OOCC_CC_LOG_OFF,     /**< redo record offset in the log regions */
	OOCC_CC_LOG_MNS,     /**< MNs holding the redo record (0: none) */
};
#define OOCC_T_INTENT (UINT64_C(1) << 0) /**< a read item was seen intention-locked */
#define OOCC_T_STARTED (UINT64_C(1) << 1) /**< OOCC_CC_FIRST and _WORD are set */
#define OOCC_T_LOCKED (UINT64_C(1) << 2)  /**< OOCC_CC_LOCKED and _WW are set */

/** Protocol state of one item, from the arena (item->cc[0]). */
struct oocc_item {
	struct dtxn_loc loc;  /**< first: locating it (lib/txn) */
	/** validation: [tail version, lock] of a record; [lock, version] of each bucket */
	uint64_t vbuf[DTXN_STORE_MAX_PROBE][2];
	struct dtxn_bucket_hdr bhdr; /**< delete: its bucket's header */
	uint64_t bver_new;    /**< written items with a bucket lock: the bucket's next version */
	uint64_t wlock;       /**< the write-lock word written at the upgrade */
	uint8_t intent;       /**< read item seen intention-locked (record or a bucket) */
};

static inline struct oocc_item *
oocc_item_of(const struct dtxn_item *it)
{
	return (struct oocc_item *)(uintptr_t)it->cc[0];
}

static inline struct oocc_coord *
oocc_coord_of(const struct dtxn_txn *t)
{
	return t->coord->cc_priv;
}

static inline const struct oocc_opts *
oocc_opts_t(const struct dtxn_txn *t)
{
	return &oocc_coord_of(t)->sh->opts;
}

/** The clock OOCC times its leases with (this node's dtxn_now_ns()). */
uint64_t oocc_clock_ns(const struct dtxn_txn *t);

/** The lease word of the txn's machine (relaxed load). */
uint64_t oocc_lease_word_cn(const struct dtxn_txn *t);

/** Lease Manager step (gid 0's coordinator, at begin): epoch policy, 2-phase commit. */
void oocc_lease_manage(struct oocc_shared *sh, uint64_t now_ns);
/** Sets every machine's word to @p w (release stores). */
void oocc_lease_publish(struct oocc_shared *sh, uint64_t w);

/* execute.c */
int oocc_execute(struct dtxn_txn *t);
/** Releases what the txn holds: voids its redo record, unlocks (fire-and-forget). */
void oocc_release(struct dtxn_txn *t);

/* validate.c */
/**
 * Adds the validation READs of the read items to @p b: all of them
 * (@p all), else only those seen intention-locked.
 */
void oocc_validate_issue(struct dtxn_txn *t, struct dtxn_batch *b, bool all);
/**
 * The MNs the READs of oocc_validate_issue(@p t, @p all) go to.
 * @return a bit mask, bit i = MN i (at most 64 MNs).
 */
uint64_t oocc_validate_mns(const struct dtxn_txn *t, bool all);
/**
 * Checks the validation READs: a version changed, or a lock that the
 * txn's kind does not tolerate (read-write: any other txn's; read-only:
 * a write lock).
 * @return DTXN_OK, DTXN_ABORT_VALIDATION or DTXN_ABORT_LOCKED_READ.
 */
int oocc_validate_check(const struct dtxn_txn *t, bool all, bool rw);

/* commit.c */
int oocc_commit(struct dtxn_txn *t);
void oocc_abort(struct dtxn_txn *t);

/* recover.c */
/** dtxn_cc_ops.recover: redo records, then the lock scan (doc/guides/oocc.md, "Recovery"). */
int oocc_recover(struct dtxn_coord *c, struct dtxn_recovery *rec);

#endif /* DTXN_OOCC_PRIVATE_H */
