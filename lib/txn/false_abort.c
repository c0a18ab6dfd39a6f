/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * False aborts of record-level protocols (FORD, Motor; CREST paper Fig. 3,
 * doc/guides/crest.md "False aborts"): whether a cell-level protocol would
 * also have aborted on the conflict a record-level txn aborted on.
 *
 * Their MN records name a lock holder or a writer by txn id but not its
 * cells, so the cells live on the CN side, in a measurement side table
 * shared by every coordinator of the cluster (rte_zmalloc in one process;
 * a memzone across the processes of one shm cluster; none on mlx5, where
 * the CNs share no memory: nothing is classified there). It is never read
 * by the protocols' decisions, only by the classification.
 *
 * Entry per record (direct-mapped by slot address, tagged with it): the
 * last FA_RING lock takers of the record, each (txn id, cells written),
 * appended by the taker after its lock CAS returned 0 and before it
 * writes (dtxn_fa_locked(), lib/txn's locating step). A record's lock
 * serialises its takers, so the ring is in lock order, which is the
 * order of the versions they install. Two records that share an entry
 * serialise through its seqlock (a writer takes it with a CAS and holds
 * it for a few stores; it never yields inside).
 *
 * What it sees: a holder found in the ring by id (lock conflicts, locked
 * reads) and every taker between two versions found there (FORD's
 * validation). What it cannot see: a holder that has not appended yet
 * (its CAS completion not yet reaped), versions installed without a
 * record lock (new-key inserts, recovery's writes), the loaded version
 * (id 0), takers pushed out of the ring (more than FA_RING since the
 * version read) or out of the entry by another record. Each of those
 * makes the lookup fail and the conflict count as true: the counter never
 * calls an abort false that a cell-level protocol would have taken too;
 * it may miss some false ones.
 */
#include <errno.h>
#include <string.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_pause.h>

#include "txn_private.h"

/** Takers remembered per record. */
#define FA_RING 8
/** Entries (a power of two): 2 MiB. */
#define FA_ENTRIES (1u << 14)
/** The side table's memzone across processes (shm, --role cn). */
#define FA_MZ "dtxn_false_aborts"
/** Tries of a lookup racing a writer of its entry before it gives up (true). */
#define FA_READ_TRIES 4
/**
 * Pauses a writer waits on one odd seq value before it takes the entry
 * over: its writer is a CN process killed between its CAS and its release
 * (a cluster's entries are shared), which would otherwise wedge the entry
 * and every later taker of it for good. A live writer holds it for a few
 * stores; at worst the takeover lets a lookup copy a torn entry, a
 * misclassified abort, never a protocol decision.
 */
#define FA_WRITE_SPINS (1u << 20)

struct fa_entry {
	uint32_t seq;              /**< seqlock: odd while written */
	uint32_t n;                /**< takers appended since @c raddr took the entry */
	uint64_t raddr;            /**< the record's primary slot address; 0: none */
	uint64_t id[FA_RING];      /**< taker txn ids, ring by @c n */
	uint32_t cells[FA_RING];   /**< their written cells */
} __rte_cache_aligned;

struct dtxn_fa_table {
	bool mz;                   /**< in a memzone (not freed here) */
	struct fa_entry *e;
};

static struct fa_entry *
fa_entry_of(const struct dtxn_fa_table *fa, dtxn_raddr_t raddr)
{
	uint64_t h = (raddr >> 3) * UINT64_C(0x9E3779B97F4A7C15);

	return &fa->e[h >> (64 - __builtin_ctz(FA_ENTRIES))];
}

struct dtxn_fa_table *
dtxn_fa_create(const struct dtxn_db *db)
{
	const struct dtxn_fabric_conf *fc = dtxn_fabric_conf(db->fabric);
	size_t len = sizeof(struct fa_entry) * FA_ENTRIES;
	struct dtxn_fa_table *fa;

	if (fc == NULL || (strcmp(fc->driver, "shm") != 0 && strcmp(fc->driver, "sim") != 0)) {
		rte_errno = ENOTSUP; /* CNs that share no memory: not classified */
		return NULL;
	}
	fa = rte_zmalloc("dtxn_fa", sizeof(*fa), 0);
	if (fa == NULL)
		goto fail;
	if (!fc->multi_process) {
		fa->e = rte_zmalloc("dtxn_fa_entries", len, RTE_CACHE_LINE_SIZE);
		if (fa->e == NULL)
			goto fail;
		return fa;
	}
	fa->mz = true;
	fa->e = dtxn_fabric_shared_zone(FA_MZ, len, SOCKET_ID_ANY, NULL);
	if (fa->e == NULL)
		goto fail;
	return fa;
fail:
	rte_free(fa);
	rte_errno = ENOMEM;
	return NULL;
}

void
dtxn_fa_destroy(struct dtxn_fa_table *fa)
{
	if (fa == NULL)
		return;
	if (!fa->mz)
		rte_free(fa->e);
	rte_free(fa);
}

void
dtxn_fa_append(struct dtxn_fa_table *fa, dtxn_raddr_t raddr, uint64_t id, uint32_t cells)
{
	struct fa_entry *e;
	uint32_t s, n;

	if (fa == NULL || raddr == 0)
		return;
	e = fa_entry_of(fa, raddr);
	for (uint32_t held = UINT32_MAX, spins = 0;; spins++) {
		/* another record's taker on this entry: a few stores, no yield */
		s = __atomic_load_n(&e->seq, __ATOMIC_RELAXED);
		if ((s & 1) == 0 && __atomic_compare_exchange_n(&e->seq, &s, s + 1, false,
								__ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			break;
		if (s != held) {
			held = s;
			spins = 0;
		} else if (spins >= FA_WRITE_SPINS &&
			   __atomic_compare_exchange_n(&e->seq, &s, s + 2, false, __ATOMIC_ACQUIRE,
						       __ATOMIC_RELAXED)) {
			/* its writer died inside (a CN process killed there): take
			 * it over, odd still; released at s + 3 */
			s++;
			break;
		}
		rte_pause();
	}
	n = __atomic_load_n(&e->n, __ATOMIC_RELAXED);
	if (__atomic_load_n(&e->raddr, __ATOMIC_RELAXED) != raddr) {
		__atomic_store_n(&e->raddr, raddr, __ATOMIC_RELAXED);
		for (unsigned k = 0; k < FA_RING; k++)
			__atomic_store_n(&e->id[k], 0, __ATOMIC_RELAXED);
		n = 0;
	}
	__atomic_store_n(&e->id[n % FA_RING], id, __ATOMIC_RELAXED);
	__atomic_store_n(&e->cells[n % FA_RING], cells, __ATOMIC_RELAXED);
	__atomic_store_n(&e->n, n + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&e->seq, s + 2, __ATOMIC_RELEASE);
}

uint32_t *
dtxn_fa_seq_of(struct dtxn_fa_table *fa, dtxn_raddr_t raddr)
{
	return fa == NULL || raddr == 0 ? NULL : &fa_entry_of(fa, raddr)->seq;
}

/* A consistent copy of @p raddr's entry; false if another record holds it or a writer kept it busy. */
static bool
fa_copy(const struct dtxn_fa_table *fa, dtxn_raddr_t raddr, struct fa_entry *out)
{
	struct fa_entry *e;

	if (fa == NULL || raddr == 0)
		return false;
	e = fa_entry_of(fa, raddr);
	for (unsigned tries = 0; tries < FA_READ_TRIES; tries++) {
		uint32_t s = __atomic_load_n(&e->seq, __ATOMIC_ACQUIRE);

		if (s & 1)
			continue;
		out->raddr = __atomic_load_n(&e->raddr, __ATOMIC_RELAXED);
		out->n = __atomic_load_n(&e->n, __ATOMIC_RELAXED);
		for (unsigned k = 0; k < FA_RING; k++) {
			out->id[k] = __atomic_load_n(&e->id[k], __ATOMIC_RELAXED);
			out->cells[k] = __atomic_load_n(&e->cells[k], __ATOMIC_RELAXED);
		}
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&e->seq, __ATOMIC_RELAXED) == s)
			return out->raddr == raddr;
	}
	return false;
}

/* Ring position of the @p back-th newest taker of @p e (0: the newest). */
static unsigned
fa_pos(const struct fa_entry *e, unsigned back)
{
	return (e->n - 1 - back) % FA_RING;
}

int
dtxn_fa_cells(const struct dtxn_fa_table *fa, dtxn_raddr_t raddr, uint64_t id, uint32_t *cells)
{
	struct fa_entry e;

	if (id == 0 || !fa_copy(fa, raddr, &e))
		return -ENOENT;
	for (unsigned b = 0; b < RTE_MIN(e.n, (unsigned)FA_RING); b++)
		if (e.id[fa_pos(&e, b)] == id) {
			*cells = e.cells[fa_pos(&e, b)];
			return 0;
		}
	return -ENOENT;
}

int
dtxn_fa_cells_since(const struct dtxn_fa_table *fa, dtxn_raddr_t raddr, uint64_t seen,
		    uint64_t now, uint32_t *cells)
{
	struct fa_entry e;
	unsigned b, n;
	uint32_t u = 0;

	if (seen == 0 || now == 0 || seen == now || !fa_copy(fa, raddr, &e))
		return -ENOENT;
	n = RTE_MIN(e.n, (unsigned)FA_RING);
	for (b = 0; b < n && e.id[fa_pos(&e, b)] != now; b++)
		;
	for (; b < n; b++) {
		unsigned p = fa_pos(&e, b);

		if (e.id[p] == seen) {
			*cells = u;
			return 0;
		}
		u |= e.cells[p];
	}
	return -ENOENT;
}

void
dtxn_fa_locked(struct dtxn_txn *t, const struct dtxn_item *it)
{
	uint32_t cells = it->kind == DTXN_ITEM_RW ? it->wr_cells :
						      dtxn_table_cells_all(&it->table->def);

	dtxn_fa_append(t->coord->worker->db->fa, it->slot_raddr, t->id, cells);
}

void
dtxn_fa_verdict(struct dtxn_txn *t, bool is_false)
{
	t->fa_verdicts++;
	if (!is_false)
		t->false_conflict = DTXN_FA_TRUE;
	else if (t->false_conflict != DTXN_FA_TRUE)
		t->false_conflict = DTXN_FA_FALSE;
}

void
dtxn_fa_holder(struct dtxn_txn *t, const struct dtxn_item *it, uint64_t holder)
{
	uint32_t cells;

	dtxn_fa_verdict(t, dtxn_fa_cells(t->coord->worker->db->fa, it->slot_raddr, holder,
					 &cells) == 0 &&
				   (cells & (it->rd_cells | it->wr_cells)) == 0);
}

void
dtxn_fa_writers(struct dtxn_txn *t, const struct dtxn_item *it, uint64_t seen, uint64_t now)
{
	uint32_t cells;

	dtxn_fa_verdict(t, dtxn_fa_cells_since(t->coord->worker->db->fa, it->slot_raddr, seen,
					       now, &cells) == 0 &&
				   (cells & (it->rd_cells | it->wr_cells)) == 0);
}

void
dtxn_fa_step(struct dtxn_txn *t, uint16_t before, int rc)
{
	if (rc != DTXN_OK && t->fa_verdicts == before &&
	    t->coord->worker->db->cc->false_aborts)
		dtxn_fa_verdict(t, false);
}

void
dtxn_fa_settle(struct dtxn_txn *t, int rc)
{
	dtxn_fa_step(t, t->fa_mark, rc);
}
