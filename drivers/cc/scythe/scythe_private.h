/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DTXN_SCYTHE_PRIVATE_H
#define DTXN_SCYTHE_PRIVATE_H

/**
 * @file
 * Scythe (Lu et al., ACM TOS 2024; ../shared/papers/scythe.md), issue 14:
 * hot-aware concurrency control (OCC for cold records, timestamp-ordered
 * OCC for hot ones) over the Takeout Lock, a ticket lock whose tickets
 * the MN's CPU hands out by RPC and whose holders release it with one
 * one-sided FAA. doc/guides/scythe.md. Which file does what:
 * - scythe.c: ops table, registration, db/worker/coordinator state, begin;
 * - options.c: the options (--cc-opts);
 * - format.c: the record format (takeout lock words, version, value);
 * - takeout.c: the lock's grant rule (Fig. 14) and the batch order (Fig. 16),
 *   pure functions the MN service and the unit tests share;
 * - mnsvc.c: the MN-side service: the Lock and Cancel RPCs' batch handler;
 * - cancel.c: the MN's cancelled tickets (cancel=1): given back by the MN
 *   CPU when their turn comes, skipped by the grant rule;
 * - lock.c: the CN side of the lock: Lock RPCs, Hangout wait and Poll,
 *   SRTT, release;
 * - caslock.c: the 1-bit CAS lock instead (cas_lock=1, Fig. 27);
 * - execute.c: execution (COLD reads abort on a lock or a queue; HOT
 *   reads queue in timestamp order), insert bucket locks;
 * - commit.c: locking the write set, validation (COLD), write-back, unlock;
 * - recover.c: CN crash recovery (the dead CN's tickets served from the
 *   MN service's ticket tables, its bucket locks released).
 * - footprint.c: what a run allocates, for the memory check.
 *
 * The record format, with the CPU-store/NIC-FAA hazard prevented by
 * design (scythe.md §2, [INF]): the paper's lock is one 8-byte word whose
 * lower half the MN CPU writes with plain stores while holders add 1 << 16
 * to it with RDMA FAA; RDMA atomics are not atomic against CPU stores, so
 * an FAA could be lost. Here each writer has its own words: the MN CPU
 * alone writes @c lower and @c queued_ts, the NIC alone (FAA from the
 * holders) writes @c upper. The MN reads @c upper with an atomic load;
 * CNs read all three with one READ. The counters are u16 (Fig. 13):
 * @c lower keeps the low 16 bits; @c upper is FAAed by 1 as a 64-bit
 * word, of which the low 16 bits count; every difference is taken mod 2^16.
 */

#include <rte_log.h>

#include "dtxn_rpc.h"
#include "dtxn_rrpc.h"
#include "dtxn_tso.h"
#include "dtxn_txn_driver.h"

extern int dtxn_scythe_logtype;
#define SCYTHE_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_##level, dtxn_scythe_logtype, "dtxn.cc.scythe: " fmt "\n", ##__VA_ARGS__)

/* ------------------------------------------------------------------ */
/* Record format (format.c)                                           */
/* ------------------------------------------------------------------ */

/** Slot: [slot header 16 B][lower][queued_ts][upper][version][value]. */
#define SCYTHE_LOWER_OFF 16
#define SCYTHE_QTS_OFF 24
#define SCYTHE_UPPER_OFF 32
#define SCYTHE_VERSION_OFF 40
#define SCYTHE_VALUE_OFF 48
_Static_assert(SCYTHE_VERSION_OFF == SCYTHE_UPPER_OFF + 8, "a Poll READs upper and version");
/** Bytes of the lock words and the version (a validation READ). */
#define SCYTHE_META_LEN (SCYTHE_VALUE_OFF - SCYTHE_LOWER_OFF)

struct scythe_slot {
	struct dtxn_slot_hdr hdr;
	uint64_t lower;      /**< ticket counter (low 16 bits); MN CPU only */
	uint64_t queued_ts;  /**< largest timestamp queued; MN CPU only */
	uint64_t upper;      /**< dequeue counter (low 16 bits); NIC FAA only */
	uint64_t version;    /**< txn id of the last committed writer, 0 after load */
	uint8_t value[];
};
_Static_assert(sizeof(struct scythe_slot) == SCYTHE_VALUE_OFF, "scythe slot layout");

uint32_t scythe_slot_size(uint32_t value_size);
void scythe_slot_format(const struct dtxn_table *t, void *slot, const void *value, void *arg);
void *scythe_slot_value(const struct dtxn_table *t, void *slot);

/** CurrentQueuedTxnNum (Eq. 1): tickets taken and not yet given back, mod 2^16. */
static inline uint16_t
scythe_queue(uint64_t lower, uint64_t upper)
{
	return (uint16_t)((uint16_t)lower - (uint16_t)upper);
}

/* ------------------------------------------------------------------ */
/* Options (options.c)                                                */
/* ------------------------------------------------------------------ */

/** The heat mode of an attempt (§3.1). */
enum scythe_mode {
	SCYTHE_COLD = 0,  /**< OCC */
	SCYTHE_HOT = 1,   /**< TOCC */
};

struct scythe_opts {
	uint32_t cold_wm;    /**< ColdWatermark (3) */
	uint32_t hot_wm;     /**< HotWatermark (10) */
	uint32_t band_us;    /**< wait of a HOT request queued between the watermarks, us (20); 0: off */
	uint32_t alpha_pct;  /**< SRTT smoothing alpha, percent (90, Eq. 2) */
	uint8_t occ_only;    /**< every attempt COLD */
	uint8_t tocc_only;   /**< every attempt HOT */
	uint32_t tso_proxies; /**< TSO proxies on MNs 1..N (lib/tso, Scythe §4.5); 0: none */
	/**
	 * Fig. 27's baseline: a 1-bit lock taken with one-sided CAS on the
	 * record's @c lower word (0 -> 1), retried on failure (unfair),
	 * released with FAA -1, instead of the Takeout Lock (no Lock RPC).
	 */
	uint8_t cas_lock;
	/** The Lock RPC's transport (transport.c): SCYTHE_TP_MSG or SCYTHE_TP_RRPC. */
	uint8_t rpc;
	/**
	 * An aborting txn hands its queued tickets to the MN (Cancel RPC)
	 * instead of waiting until they are served (cancel.c; not in the
	 * paper: doc/guides/scythe.md, "Cancelling a queued ticket").
	 */
	uint8_t cancel;
};

/** Lock RPC over lib/rpc's SEND/RECV messages. */
#define SCYTHE_TP_MSG 0
/** Lock RPC over RRPC: WRITEs into rings in the MN regions (Scythe §4.6). */
#define SCYTHE_TP_RRPC 1

void scythe_opts_default(struct scythe_opts *o);
/** Parses @p s over @p o; 0 or -EINVAL with a one-line message in @p err. */
int scythe_opts_parse(const char *s, struct scythe_opts *o, char *err, size_t errlen);
int scythe_check_options(const char *opts, char *err, size_t errlen);
/**
 * dtxn_cc_ops.can_recover: not with cas_lock=1, whose 1-bit lock word
 * names no owner and is noted in no ticket table, so a survivor cannot
 * find the dead CN's locks. Any thread.
 */
bool scythe_can_recover(const struct dtxn_db *db);
/** dtxn_cc_ops.check_cluster: tso_proxies below the MN count (any fabric). */
int scythe_check_cluster(const char *opts, unsigned n_mn, unsigned n_cn, const char *fabric,
			 char *err, size_t errlen);
const char *scythe_variant(const struct dtxn_db *db);

/* ------------------------------------------------------------------ */
/* The Lock RPC (takeout.c, mnsvc.c, lock.c)                          */
/* ------------------------------------------------------------------ */

/** lib/rpc message type of the Lock RPC. */
#define SCYTHE_RPC_LOCK 0
/** lib/rpc message type of the TSO proxies' requests (lib/tso). */
#define SCYTHE_RPC_TSO 1
/** lib/rpc message type of the Cancel RPC (cancel=1). */
#define SCYTHE_RPC_CANCEL 2
/** Lock requests per message (a request and its reply fit lib/rpc's limits). */
#define SCYTHE_LOCKS_PER_MSG 14

/** Request flag: the request was deferred once already (band wait). */
#define SCYTHE_REQ_F_DEFERRED (1u << 0)

/** One lock request: Lock(ts, mode) on the record at @c off (24 B). */
struct scythe_lock_req {
	uint64_t off;        /**< slot offset in the MN's region */
	uint64_t ts;         /**< the requester's timestamp */
	uint8_t table_id;
	uint8_t mode;        /**< enum scythe_mode */
	uint8_t flags;       /**< SCYTHE_REQ_F_* */
	uint8_t rsvd;
	uint32_t gid;        /**< the requesting coordinator (its ticket table, recovery) */
};
_Static_assert(sizeof(struct scythe_lock_req) == 24, "lock request");

/**
 * The tickets the MN service handed coordinator @c gid in its current
 * attempt (timestamp @c ts), kept by the MN CPU in that coordinator's log
 * region on this MN (Scythe writes no log there): a request with another
 * ts starts the table afresh. Read by CN crash recovery (recover.c) to
 * serve a dead coordinator's tickets. Entries past the region are not
 * kept (SCYTHE_LOG ERR).
 */
struct scythe_ticket_tab {
	uint64_t ts;         /**< the attempt's timestamp */
	uint32_t n;          /**< entries */
	uint32_t gid;        /**< the coordinator, + 1 (0: never written) */
	/**
	 * The write-back mark, written by the coordinator (never by the MN
	 * service) in its write-back's chain to this MN: the txn id and the
	 * MNs its write-back's chains go to (bit per MN). Recovery compares
	 * the marks of every MN: a chain that was never rung leaves an older
	 * id on its MN (recover.c rec_wb_torn(); doc/guides/scythe.md "Recovery").
	 */
	uint64_t wb_txn;
	uint64_t wb_mask;
	struct scythe_ticket {
		uint64_t off;        /**< the record's slot offset in this MN's region */
		uint32_t ticket;     /**< its ticket (16 bits) */
		uint32_t flags;      /**< SCYTHE_TICKET_F_* */
	} ent[];
};
_Static_assert(sizeof(struct scythe_ticket_tab) == 32 && sizeof(struct scythe_ticket) == 16,
	       "ticket table layout");

/**
 * struct scythe_ticket.flags: the coordinator cancelled the ticket; the MN
 * service gives it back (cancel.c), so recovery must not.
 */
#define SCYTHE_TICKET_F_CANCELLED (1u << 0)

/**
 * Whether @p ticket is still in the queue of a lock whose counters are
 * @p lower and @p upper: served, i.e. held, when it equals upper; waiting
 * when it lies between; given back when upper is past it (mod 2^16).
 */
static inline bool
scythe_ticket_out(uint16_t ticket, uint16_t lower, uint16_t upper)
{
	return (uint16_t)(ticket - upper) < scythe_queue(lower, upper);
}

/** Outcomes of a lock request (struct scythe_lock_resp.status). */
enum scythe_lock_status {
	SCYTHE_LK_GRANTED = 0, /**< queued with nobody ahead: held */
	SCYTHE_LK_QUEUED,      /**< queued behind resp.queue holders: Hangout, then Poll */
	SCYTHE_LK_REJ_TS,      /**< ts < queued_ts: out of timestamp order */
	SCYTHE_LK_REJ_COLD,    /**< COLD and queue > ColdWatermark: retry HOT */
	SCYTHE_LK_REJ_HOT,     /**< queue > HotWatermark */
	SCYTHE_LK_DEFER,       /**< HOT, queue between the watermarks: wait band_us, ask again */
	SCYTHE_LK_BAD,         /**< not a record of this MN */
	/* replies to a Cancel (cancel=1) */
	SCYTHE_LK_CANCELLED,   /**< the MN took the ticket over: it gives it back in its turn */
	SCYTHE_LK_KEPT,        /**< the MN's cancel table is full: the ticket stays the CN's */
	SCYTHE_LK_STATUS_MAX,
};

/**
 * One Cancel request (24 B, cancel=1): coordinator @c gid, in its attempt
 * of timestamp @c ts, gives up its queued @c ticket of the record at
 * @c off; the MN gives it back when it is served.
 */
struct scythe_cancel_req {
	uint64_t off;        /**< slot offset in the MN's region */
	uint64_t ts;         /**< the attempt's timestamp (its ticket table) */
	uint32_t gid;        /**< the coordinator */
	uint16_t ticket;
	uint8_t table_id;
	uint8_t rsvd;
};
_Static_assert(sizeof(struct scythe_cancel_req) == sizeof(struct scythe_lock_req),
	       "a Lock and a Cancel request take the same room in a message");

/**
 * The reply to one request (16 B): Lock_Reply of Fig. 13, and the
 * record's version when the MN looked: for a lock granted at once, the
 * version under the lock, so that a COLD write needs no validation READ
 * (a queued one reads it with its Poll).
 */
struct scythe_lock_resp {
	uint8_t status;      /**< enum scythe_lock_status */
	uint8_t rsvd;
	uint16_t ticket;     /**< granted / queued: the ticket (lower before the increment) */
	uint16_t upper;      /**< upper when the MN looked */
	uint16_t queue;      /**< CurrentQueuedTxnNum before this request */
	uint64_t version;    /**< the record's version word */
};
_Static_assert(sizeof(struct scythe_lock_resp) == 16, "lock reply");
_Static_assert(SCYTHE_LOCKS_PER_MSG * sizeof(struct scythe_lock_req) <= DTXN_RPC_REQ_MAX,
	       "lock requests fit a message");
_Static_assert(SCYTHE_LOCKS_PER_MSG * sizeof(struct scythe_lock_resp) <= DTXN_RPC_RESP_MAX,
	       "lock replies fit a reply");

/**
 * The grant rule of Fig. 14, with the band wait of §3.2: what the MN does
 * with Lock(@p ts, @p mode) on a lock whose counters are @p lower and
 * @p upper and whose largest queued timestamp is @p queued_ts.
 * @param deferred  the request was deferred once already (never twice).
 * @return enum scythe_lock_status: GRANTED or QUEUED (the caller then
 *   takes ticket @p lower, sets queued_ts = ts, lower + 1), or a refusal.
 */
uint8_t scythe_takeout_decide(uint16_t lower, uint16_t upper, uint64_t queued_ts, uint64_t ts,
			      uint8_t mode, bool deferred, const struct scythe_opts *o);

/** One entry of an MN batch: a request, and where its reply goes. */
struct scythe_batch_ent {
	uint64_t off;
	uint64_t ts;
	uint16_t msg;        /**< message index in the batch */
	uint16_t idx;        /**< request index in its message */
	uint8_t table_id;
	uint8_t mode;
	uint8_t flags;
	uint8_t rsvd;
	uint32_t gid;        /**< the requesting coordinator */
};

/**
 * Sorts a batch by (record, ts) (Fig. 16), ties by arrival (message, then
 * request index), so that one scan grants each record's requests in
 * timestamp order.
 */
void scythe_batch_sort(struct scythe_batch_ent *e, unsigned n);

/** Most cancelled tickets one MN keeps at once: a Cancel past it is answered KEPT. */
#define SCYTHE_CANCEL_MAX 1024u

/**
 * The tickets one MN's service took over from aborting txns (cancel.c),
 * owned by the thread that polls the service. Each is still in its
 * record's queue; when @c upper reaches it, nobody else can add to
 * @c upper (its holder gave it up; the ticket table marks it cancelled,
 * so recovery leaves it alone), so the MN CPU adds 1 itself: a CPU atomic
 * on the word the NIC's FAAs change, never concurrent with one, since no
 * holder exists at that moment.
 */
struct scythe_cancels {
	uint32_t n;
	uint64_t served;     /**< tickets given back so far */
	uint64_t stale;      /**< entries dropped: no longer in their queue (never expected) */
	struct scythe_cancel {
		uint64_t off;        /**< slot offset in the MN's region */
		uint16_t ticket;
	} ent[SCYTHE_CANCEL_MAX];
};

/**
 * Takes over @p ticket of the slot at @p off of the region at @p base:
 * given back at once if it is served already, else kept until it is.
 * Owning thread of @p c.
 * @return 0, -ENOENT (not in its queue: nothing to give back),
 *   -ENOSPC (@p c is full; the caller's holder keeps the ticket).
 */
int scythe_cancel_add(struct scythe_cancels *c, uint8_t *base, uint64_t off, uint16_t ticket);
/**
 * Gives back the cancelled tickets of the record at @p off that are at the
 * head of its queue, one after another.
 * @return the record's upper after that: a live holder's ticket, or lower.
 */
uint16_t scythe_cancel_head(struct scythe_cancels *c, uint8_t *base, uint64_t off);
/** Gives back every cancelled ticket whose turn came. @return how many. */
unsigned scythe_cancel_serve(struct scythe_cancels *c, uint8_t *base);
/** @return the cancelled tickets still queued on the record at @p off. */
uint16_t scythe_cancel_queued(const struct scythe_cancels *c, uint64_t off);

/** The MN-side service ops (mnsvc.c). */
extern const struct dtxn_cc_mn_svc_ops scythe_mn_svc_ops;
/** Bytes of one MN's service state besides its lib/rpc server (mnsvc.c). */
size_t scythe_mn_svc_size(void);

/**
 * dtxn_cc_ops.footprint (footprint.c): per worker, Scythe's worker and
 * coordinator state, TSO client, rpc (with its RECVs for the MNs'
 * replies) and its share of every MN's lock service.
 */
int scythe_footprint(const struct dtxn_db *db, unsigned n_cn, unsigned max_coords,
		     struct dtxn_footprint *per_cn, struct dtxn_footprint *per_worker);

/* ------------------------------------------------------------------ */
/* Per db, worker, coordinator, item                                  */
/* ------------------------------------------------------------------ */

struct scythe_shared {
	struct scythe_opts opts;
	dtxn_raddr_t tso_counter;
	struct dtxn_rrpc_domain *rrpc;  /**< rpc=rrpc: the RRPC domain (transport.c); else NULL */
};

/** A failed CAS lock is retried for at most this long before the txn aborts, ns (cas_lock=1). */
#define SCYTHE_CAS_WAIT_NS UINT64_C(1000000)
/** Tables the per-table counters tell apart (ids above share the last). */
#define SCYTHE_STAT_TABLES 16u

/** Counters of one worker (DEBUG log at its end). */
struct scythe_wstats {
	uint64_t hot_attempts;
	uint64_t cold_attempts;
	uint64_t lock_reqs;
	uint64_t queued;
	uint64_t deferred;
	uint64_t polls;
	uint64_t rejected;
	uint64_t cas_retries; /**< cas_lock=1: CASes that found the lock taken */
	/** COLD reads (execute) and validations that found the record's queue 1..ColdWatermark, and above */
	uint64_t cold_q_low;
	uint64_t cold_q_high;
	uint64_t commits_hot;      /**< commits of HOT attempts (the others were COLD) */
	uint64_t lock_wait_ns;     /**< in scythe_lock_run(): Lock round trips, band waits, Hangouts, Polls */
	uint64_t release_waits;    /**< aborts that had queued tickets to wait out */
	uint64_t release_tickets;  /**< queued tickets waited out by aborting txns */
	uint64_t release_wait_ns;  /**< time aborting txns waited for them */
	uint64_t free_reads;       /**< HOT reads that took no lock (scythe_free_read()) */
	uint64_t cancelled;        /**< cancel=1: queued tickets the MN took over from aborting txns */
	uint64_t locks_by_table[SCYTHE_STAT_TABLES];  /**< lock requests by table id (the last: above) */
	uint64_t queued_by_table[SCYTHE_STAT_TABLES]; /**< queued tickets by table id */
	uint64_t locked_by_table[SCYTHE_STAT_TABLES]; /**< COLD reads that found a lock or queue, by table */
};

/** The queue lengths the MN service saw at Lock time, per mode (DEBUG log): 0..15, 16 = more. */
#define SCYTHE_QHIST 17

struct scythe_worker {
	struct dtxn_rpc *rpc;
	struct dtxn_rrpc *rr;        /**< rpc=rrpc: the Lock RPC's transport; else NULL */
	struct dtxn_tso *tso;
	/** SRTT to each MN, ns (Eq. 2; 0 before the first sample) */
	uint64_t srtt_ns[DTXN_MAX_NODES];
	struct scythe_wstats st;
};

struct scythe_coord {
	struct dtxn_rpc_ep *ep;
	struct dtxn_rrpc_ep *rep;    /**< rpc=rrpc: its RRPC endpoint (Lock calls); else NULL */
	struct dtxn_tso_req treq;
	uint8_t mode;        /**< enum scythe_mode of the current attempt */
	uint8_t hot_next;    /**< the next attempt runs HOT (a COLD one saw a queue > ColdWatermark) */
	uint64_t ts;         /**< the attempt's timestamp, 0 before it is taken */
	uint64_t sink;       /**< old values of fire-and-forget FAAs */
	uint64_t wb_mark[2]; /**< the write-back mark's image (struct scythe_ticket_tab.wb_txn, wb_mask) */
};

/** Lock state of an item (struct scythe_item.lk). */
enum scythe_lk {
	SCYTHE_LK_NONE = 0,  /**< no ticket */
	SCYTHE_LK_NEED,      /**< to request in the next Lock round */
	SCYTHE_LK_WAIT,      /**< ticket taken, holders ahead */
	SCYTHE_LK_HELD,      /**< ticket served: this txn holds the lock */
	/**
	 * Another item of the txn names the same record (e.g. TPC-C Delivery
	 * reads a NEW-ORDER row and deletes it) and takes its lock: this one
	 * shares it (item @c alias) and never asks, so that a txn never queues
	 * behind itself.
	 */
	SCYTHE_LK_ALIAS,
};

/** Protocol state of one item, from the arena (item->cc[0]). */
struct scythe_item {
	struct dtxn_loc loc;  /**< first: locating it (lib/txn) */
	uint8_t lk;           /**< enum scythe_lk */
	uint8_t deferred;     /**< its request was deferred once */
	uint16_t ticket;
	uint16_t upper;       /**< upper as last seen */
	uint8_t direct;       /**< HOT read at its cached address: locked before it is read */
	uint8_t rsvd;
	uint32_t alias;       /**< SCYTHE_LK_ALIAS: the item whose lock it shares */
	uint64_t poll[2];     /**< Poll READ target: upper and version (adjacent words) */
	uint64_t lversion;    /**< the version seen under the lock (grant reply or Poll) */
	uint64_t meta[SCYTHE_META_LEN / 8]; /**< validation READ: lower, queued_ts, upper, version */
	uint64_t bhdr[2];     /**< delete: its bucket's lock and version words */
	uint64_t bimg;        /**< bucket version written at commit */
	uint64_t cas_old;     /**< cas_lock=1: the lock word the CAS found */
};

static inline struct scythe_item *
scythe_item_of(const struct dtxn_item *it)
{
	return (struct scythe_item *)(uintptr_t)it->cc[0];
}

static inline struct scythe_slot *
scythe_slot_of(const struct dtxn_item *it)
{
	return (struct scythe_slot *)it->slot;
}

static inline struct scythe_shared *
scythe_shared_of(const struct dtxn_db *db)
{
	return db->cc_shared;
}

static inline const struct scythe_opts *
scythe_opts_t(const struct dtxn_txn *t)
{
	return &scythe_shared_of(t->coord->worker->db)->opts;
}

static inline struct scythe_coord *
scythe_coord_of(const struct dtxn_txn *t)
{
	return t->coord->cc_priv;
}

static inline struct scythe_worker *
scythe_worker_of(const struct dtxn_txn *t)
{
	return t->coord->worker->cc_priv;
}

/**
 * Whether item @p it is a read that needs no Takeout Lock, even HOT: a
 * read-only item of a table the workload never updates in place
 * (DTXN_TABLE_F_NO_UPDATE: TPC-C ITEM, NEW-ORDER, CUSTOMER_NAME,
 * HISTORY). Its value cannot change; only a delete (which takes the
 * record's lock) can, so a read of it is validated at commit, as a COLD
 * read is, instead of queuing in timestamp order behind other readers of
 * a record nobody writes (doc/guides/scythe.md, "Hot-aware CC").
 */
static inline bool
scythe_free_read(const struct dtxn_item *it)
{
	return it->kind == DTXN_ITEM_RO && (it->table->def.flags & DTXN_TABLE_F_NO_UPDATE) != 0;
}

/* lock.c */
/** True if the txn holds the lock of item @p i's record (through @p i or another item). */
bool scythe_holds(const struct dtxn_txn *t, uint32_t i);
/**
 * Sends Lock(ts, mode) for every item in state SCYTHE_LK_NEED (batched per
 * MN, one round trip), then waits (Hangout) and polls until every ticket
 * is served. Coordinator's coroutine; yields.
 * @return DTXN_OK, or an abort reason (DTXN_ABORT_LOCK_CONFLICT: a
 *   refusal; a COLD refusal for the queue sets hot_next), with the locks
 *   taken so far still held (scythe_release() gives them back).
 */
int scythe_lock_run(struct dtxn_txn *t);
/** Items asking for a record another item of the txn locks share that lock instead (SCYTHE_LK_ALIAS). */
void scythe_lk_alias(struct dtxn_txn *t);
/** @return whether some item of the txn is in lock state @p state (enum scythe_lk). */
bool scythe_lk_any(const struct dtxn_txn *t, uint8_t state);

/* caslock.c */
/**
 * cas_lock=1 (Fig. 27's baseline): takes the 1-bit lock of every item in
 * state SCYTHE_LK_NEED with one CAS 0 -> 1 on its lower word (and one
 * READ of its upper and version words behind it on the same QP), all in
 * one round; retries the CASes that found the lock taken at once (no
 * queue, no order: unfair) for up to SCYTHE_CAS_WAIT_NS. Coordinator's
 * coroutine; yields.
 * @return DTXN_OK, or DTXN_ABORT_LOCK_CONFLICT (still taken after the
 *   wait) or a fabric reason, with the locks taken so far still held
 *   (scythe_release() gives them back).
 */
int scythe_cas_lock_run(struct dtxn_txn *t);

/**
 * Adds to @p b one unsignaled FAA +1 on upper for every lock the txn
 * holds (cas_lock=1: FAA -1 on lower), and marks them released. Tickets still waiting are not touched
 * (scythe_release() waits for them).
 */
void scythe_unlock_held(struct dtxn_txn *t, struct dtxn_batch *b);
/**
 * Gives back everything the txn holds: waits (Hangout, Poll) until its
 * queued tickets are served (cancel=1: hands them to their MNs with one
 * Cancel round instead, cancel.c), then FAAs every held lock and writes 0
 * to its bucket locks, fire-and-forget; with cancel=1 it then pauses,
 * holding nothing, as long as waiting the cancelled tickets out would
 * have taken (Eq. 3). Coordinator's coroutine; yields.
 */
void scythe_release(struct dtxn_txn *t);

/* transport.c: the Lock RPC over lib/rpc's messages or RRPC (option rpc) */
/** dtxn_cc_ops.mn_msg_bytes: the MN rings of rpc=rrpc (0 with rpc=msg or cas_lock=1). Any thread. */
uint64_t scythe_mn_msg_bytes(const struct dtxn_db *db);
/** Buckets per RRPC ring: a reply always has room for the db's coordinators per worker. Any thread. */
unsigned scythe_tp_buckets(const struct dtxn_db *db);
/** db_init's part: with rpc=rrpc, the RRPC domain. @return 0, -EINVAL, -ENOTSUP (across processes), -ENOMEM. */
int scythe_tp_db_init(struct dtxn_db *db, struct scythe_shared *sh);
void scythe_tp_db_fini(struct scythe_shared *sh);
/** worker_init's part: the worker's rrpc (rpc=rrpc). @return 0 or -errno. */
int scythe_tp_worker_init(struct dtxn_worker *w, struct scythe_worker *sw);
void scythe_tp_worker_fini(struct scythe_worker *sw);
/** coord_init's part: the coordinator's RRPC endpoint (rpc=rrpc). @return 0 or -errno. */
int scythe_tp_coord_init(struct dtxn_coord *c, struct scythe_coord *sc);
void scythe_tp_coord_fini(struct scythe_coord *sc);
/**
 * Sends @p n Lock calls and yields until each has its reply, over the
 * coordinator's transport (dtxn_rrpc_call_lc() or dtxn_rpc_call_lc()).
 * Coordinator's coroutine. @return as those.
 */
int scythe_lock_call_lc(struct scythe_coord *sc, struct dtxn_rpc_call *calls, unsigned n);
/**
 * The MN service's part (mnsvc.c): with rpc=rrpc, MN @p mn's RRPC service,
 * its QPs on @p cq, its requests to @p fn. @p out NULL with rpc=msg.
 * @return 0 or -errno.
 */
int scythe_tp_mn_create(struct dtxn_db *db, uint16_t mn, struct dtxn_cq *cq,
			struct dtxn_sched *sched, dtxn_rpc_srv_batch_fn fn, void *arg,
			struct dtxn_rrpc_mn **out);

/* execute.c */
int scythe_execute(struct dtxn_txn *t);

/* commit.c */
int scythe_commit(struct dtxn_txn *t);
/** dtxn_cc_ops.recover (recover.c; doc/guides/scythe.md, "Recovery"). */
int scythe_recover(struct dtxn_coord *c, struct dtxn_recovery *rec);
void scythe_abort(struct dtxn_txn *t);

#endif /* DTXN_SCYTHE_PRIVATE_H */
