/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DTXN_FORD_PRIVATE_H
#define DTXN_FORD_PRIVATE_H

/**
 * @file
 * FORD (FAST'22), serializable, without the defects of its public code
 * (doc/guides/ford.md). Which file does what:
 * - ford.c: ops table, registration, per-coordinator state;
 * - format.c: the slot format (lock, version, value);
 * - execute.c: execution phase (reads, locks, inserts, deletes: FORD's
 *   callbacks to lib/txn's locating steps, dtxn_loc_execute()) and the
 *   release of held locks on abort;
 * - validate.c: validation reads and the undo-log record (one round);
 * - commit.c: commit phase (replicated writes, bucket bumps, unlock);
 * - options.c: the options (published=1: FORD as its public code runs it;
 *   item size and bucket geometry);
 * - pub_log.c: published mode's undo log (a full-item record to every MN
 *   at each execution) and the busy-wait on its ACKs;
 * - recover.c: CN crash recovery from the undo logs (default mode).
 */

#include <rte_log.h>

#include "dtxn_txn_driver.h"

extern int dtxn_ford_logtype;
#define FORD_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_##level, dtxn_ford_logtype, "dtxn.cc.ford: " fmt "\n", ##__VA_ARGS__)

/** Slot: [slot header 16 B][lock u64][version u64][value]. */
#define FORD_LOCK_OFF 16
#define FORD_VERSION_OFF 24
#define FORD_VALUE_OFF 32

struct ford_slot {
	struct dtxn_slot_hdr hdr;
	uint64_t lock;     /**< 0 free, else the holder's txn id */
	uint64_t version;  /**< txn id of the last committed writer, 0 after load */
	uint8_t value[];
};
_Static_assert(sizeof(struct ford_slot) == FORD_VALUE_OFF, "ford slot layout");

/**
 * Lock word bit of published mode (ford.md §1, STATE_INVISIBLE): the
 * commit is overwriting the record, readers abort. The primary holds
 * FORD_INVISIBLE | txn id during the commit, backups FORD_INVISIBLE.
 * Txn ids are below 2^63.
 */
#define FORD_INVISIBLE (UINT64_C(1) << 63)

/** published=1: FORD's DataItem, 48 B header + MAX_ITEM_SIZE 664 + 2 flag bytes, 8-aligned (ford.md §1). */
#define FORD_PUB_ITEM_SIZE 720
/** published=1: slots per bucket (HashNode, ford.md §1). */
#define FORD_PUB_BUCKET_SLOTS 22
/** Largest item_size=, bytes. */
#define FORD_ITEM_SIZE_MAX 65536

/** The options (options.c; doc/guides/ford.md). */
struct ford_opts {
	uint8_t published;     /**< 1: the public code's protocol (and, unless refined, geometry) */
	uint32_t item_size;    /**< slot bytes of every table; 0: value-sized (32 + value) */
	uint32_t bucket_slots; /**< slots per bucket of every table; 0: the benchmark's */
};

/** Published mode's undo-log record header (12 B, then full slot images). */
struct ford_pub_log_hdr {
	uint64_t txn_id;
	uint32_t t_id;     /**< the coordinator's gid */
} __attribute__((packed));
#define FORD_PUB_LOG_HDR 12
_Static_assert(sizeof(struct ford_pub_log_hdr) == FORD_PUB_LOG_HDR, "published log header");

/** Protocol state of one item, from the arena (item->cc[0]). */
struct ford_item {
	struct dtxn_loc loc;  /**< first: locating it (lib/txn, dtxn_loc_prepare()) */
	uint64_t vbuf[DTXN_STORE_MAX_PROBE][2]; /**< validation: lock, version */
	struct dtxn_bucket_hdr bhdr;            /**< delete: bucket header */
	uint64_t bimg[2];     /**< bucket header image written at commit */
	void *pre;            /**< written items: slot image before the txn */
	bool logged;          /**< published: its image is in an undo record already */
	bool deferred;        /**< published: RW item found through its bucket, locked in validation */
};

/** Per-coordinator state. */
struct ford_coord {
	uint64_t log_head;    /**< next record offset in the log regions */
	uint64_t sink;        /**< old values of fire-and-forget CASes */
	struct ford_opts opts;
	/** published: undo-record WRITEs posted and not yet waited for */
	bool log_inflight;
	uint8_t flush_buf[8]; /**< published: target of the 1-byte flush READs */
	char *log_mirror;     /**< published: local image of the log region (pub_log.c) */
};

static inline const struct ford_opts *
ford_opts_t(const struct dtxn_txn *t)
{
	return &((const struct ford_coord *)t->coord->cc_priv)->opts;
}

/** True if the txn runs FORD as published (options.c). */
static inline bool
ford_published(const struct dtxn_txn *t)
{
	return ford_opts_t(t)->published != 0;
}

/** Lock word a commit writes on the primary (published: INVISIBLE as well). */
static inline uint64_t
ford_commit_lock(const struct dtxn_txn *t)
{
	return ford_published(t) ? (FORD_INVISIBLE | t->id) : t->id;
}

static inline struct ford_item *
ford_item_of(const struct dtxn_item *it)
{
	return (struct ford_item *)(uintptr_t)it->cc[0];
}

static inline struct ford_slot *
ford_slot_of(const struct dtxn_item *it)
{
	return (struct ford_slot *)it->slot;
}

static inline bool
ford_is_write(const struct dtxn_item *it)
{
	return it->kind != DTXN_ITEM_RO;
}

/* options.c */
void ford_opts_default(struct ford_opts *o);
/** Parses an option string over @p o; 0 or -EINVAL with a message in @p err. */
int ford_opts_parse(const char *s, struct ford_opts *o, char *err, size_t errlen);
int ford_check_options(const char *opts, char *err, size_t errlen);
int ford_table_geometry(const struct dtxn_db *db, struct dtxn_table_def *def,
			uint32_t *slot_size, uint32_t *aux_size);
const char *ford_variant(const struct dtxn_db *db);
/** dtxn_cc_ops.can_recover: not in published mode (doc/guides/ford.md, "Recovery"). */
bool ford_can_recover(const struct dtxn_db *db);

/* pub_log.c */
/** Published mode: the coordinator's log mirror (log_bytes); 0 or -ENOMEM. */
int ford_pub_log_init(struct dtxn_coord *c);
/**
 * Published mode, end of an execution of a txn that writes: posts one
 * undo record (12 B header + the slot image of each locked, not yet
 * logged RW or delete item) as a signaled WRITE to every MN, not waited
 * for (ford.md §3, "Undo log"). Written after a failed execution too.
 * @return DTXN_OK, or DTXN_ABORT_TOO_LARGE (record over log_bytes; nothing posted).
 */
int ford_pub_log(struct dtxn_txn *t);
/**
 * Published mode, start of commit: busy-waits for the ACKs of the undo
 * records, the thread's other coordinators blocked (dtxn_co_spin_lc()).
 * @return DTXN_OK or DTXN_ABORT_FABRIC.
 */
int ford_pub_log_wait(struct dtxn_txn *t);

/* format.c */
uint32_t ford_slot_size(uint32_t value_size);
void ford_slot_format(const struct dtxn_table *t, void *slot, const void *value, void *arg);
void *ford_slot_value(const struct dtxn_table *t, void *slot);

/* execute.c */
int ford_execute(struct dtxn_txn *t);
void ford_release(struct dtxn_txn *t);

/* validate.c */
/**
 * One round: validation READs of the read set and the undo-log WRITEs.
 * @return DTXN_OK or an abort reason (nothing released).
 */
int ford_validate_and_log(struct dtxn_txn *t, bool log);

/* recover.c */
/** dtxn_cc_ops.recover: the dead CN's undo logs, then its locks (doc/guides/ford.md). */
int ford_recover(struct dtxn_coord *c, struct dtxn_recovery *rec);

/* commit.c */
int ford_commit(struct dtxn_txn *t);
void ford_abort(struct dtxn_txn *t);

#endif /* DTXN_FORD_PRIVATE_H */
