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
 * - commit.c: commit phase (replicated writes, bucket bumps, unlock).
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

/** Undo-log record header, followed by n_entries entries. */
struct ford_log_hdr {
	uint64_t txn_id;
	uint32_t n_entries;
	uint32_t bytes;    /**< whole record, bytes (multiple of 64) */
};

/** Undo-log entry, followed by slot_size bytes: the slot before the txn. */
struct ford_log_entry {
	uint32_t table_id;
	uint32_t slot_size;
	uint64_t key;
	uint64_t raddr;    /**< primary slot address */
};

/** Protocol state of one item, from the arena (item->cc[0]). */
struct ford_item {
	struct dtxn_loc loc;  /**< first: locating it (lib/txn, dtxn_loc_prepare()) */
	uint64_t vbuf[DTXN_STORE_MAX_PROBE][2]; /**< validation: lock, version */
	struct dtxn_bucket_hdr bhdr;            /**< delete: bucket header */
	uint64_t bimg[2];     /**< bucket header image written at commit */
	void *pre;            /**< written items: slot image before the txn */
};

/** Per-coordinator state. */
struct ford_coord {
	uint64_t log_head;    /**< next record offset in the log regions */
	uint64_t sink;        /**< old values of fire-and-forget CASes */
};

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
ford_skip_lock_check(const struct dtxn_txn *t)
{
	return (t->coord->worker->db->conf.debug_flags & DTXN_DEBUG_SKIP_LOCK_CHECK) != 0;
}

static inline bool
ford_is_write(const struct dtxn_item *it)
{
	return it->kind != DTXN_ITEM_RO;
}

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

/* commit.c */
int ford_commit(struct dtxn_txn *t);
void ford_abort(struct dtxn_txn *t);

#endif /* DTXN_FORD_PRIVATE_H */
