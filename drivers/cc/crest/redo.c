/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The dependency-tracking redo log (crest.md §3 "Dependency-tracking redo
 * log"; doc/guides/crest.md, "Parallel commits"). A committable txn that
 * writes builds one entry
 *
 *   header   txn_id u64 | bytes u32 | n_mods u16 | n_deps u16
 *            | ts_exec u64                                       24 B
 *   deps     txn_id u64 x n_deps (local=1: the local writers it read from)
 *   mod      table_id u32 | cells u32 | key u64 | raddr u64
 *            | kind u8 | flags u8 | rsvd 2 B | len u32           32 B
 *            then len bytes: each written cell's span of the stamped
 *            record image (versions and value), or the whole record
 *   trailer  txn_id u64
 *
 * and WRITEs it, one WRITE per MN, to the coordinator's log segment on
 * every MN the commit chain writes to, at the head of that MN's chain: RC
 * applies one QP's WRs in order, so on each MN the entry is in place
 * before any of the txn's updates there. The entry is written after
 * validation (validation and logging do not overlap), so any entry found
 * on an MN belongs to a committable txn and recovery rolls it forward; a
 * torn entry has a trailer that is not its txn id.
 *
 * Each MN's copy of the segment has its own head, so that it holds a
 * gapless chain of the entries written to that MN (recover.c walks it
 * from offset 0 while the txn ids grow). The segment is a ring of
 * cat->log_bytes; the head goes back to 0 when an entry does not fit.
 * With local=0 a commit waits for its chain before it returns, so every
 * older entry has been applied by then. With local=1 a committed
 * intermediate writer's cells (mods flagged CREST_MOD_DEFERRED) reach the
 * MN only with the last local writer's write-back: while the coordinator
 * has such versions (crest_lc_txn.log_pins) its log does not wrap, so
 * recovery still finds their entries; a commit that would wrap then waits
 * a little (yielding) for the write-backs, and aborts lock_conflict if
 * they do not come (a write-back may wait for this very txn: it may be a
 * dependency of the last writer).
 */
#include <string.h>

#include <rte_common.h>

#include "crest_private.h"

/** How long a commit that would wrap its log waits for deferred write-backs, ns. */
#define REDO_WRAP_WAIT_NS 20000u
/** Pause between two looks at them, ns. */
#define REDO_WRAP_PAUSE_NS 500u

/* Bytes item @p it logs after its mod header (0: not logged). */
static uint32_t
redo_len(const struct dtxn_txn *t, const struct dtxn_item *it)
{
	const struct crest_layout *lay = crest_layout_of(t, it);
	uint32_t len = 0;

	if (it->kind == DTXN_ITEM_RO)
		return 0;
	if (it->kind != DTXN_ITEM_RW)
		return it->table->slot_size;
	for (uint32_t m = crest_item_of(it)->wr; m != 0; m &= m - 1)
		len += crest_cell_span(lay, (unsigned)__builtin_ctz(m));
	return len;
}

/* Copies item @p it's modification into @p p; returns the byte after it. */
static char *
redo_put(const struct dtxn_txn *t, const struct dtxn_item *it, char *p, uint32_t len)
{
	const struct crest_layout *lay = crest_layout_of(t, it);
	const struct crest_item *ci = crest_item_of(it);
	struct crest_redo_mod *m = (struct crest_redo_mod *)(void *)p;

	m->table_id = it->table->def.id;
	m->cells = ci->wr;
	m->key = it->key;
	m->raddr = it->slot_raddr;
	m->kind = it->kind;
	m->flags = ci->obj != NULL ? CREST_MOD_DEFERRED : 0; /* local=1: a cached record */
	memset(m->rsvd, 0, sizeof(m->rsvd));
	m->len = len;
	p += sizeof(*m);
	if (it->kind != DTXN_ITEM_RW) {
		memcpy(p, it->slot, len);
		return p + RTE_ALIGN_CEIL(len, 8);
	}
	for (uint32_t w = ci->wr; w != 0; w &= w - 1) {
		unsigned c = (unsigned)__builtin_ctz(w);
		uint32_t span = crest_cell_span(lay, c);

		memcpy(p, (const char *)it->slot + lay->rec_off[c], span);
		p += span;
	}
	return (char *)RTE_PTR_ALIGN_CEIL(p, 8);
}

/*
 * Whether the log may go back to offset 0: nothing deferred (local=1) is
 * waiting in it, after waiting up to REDO_WRAP_WAIT_NS by yielding.
 */
static bool
redo_may_wrap(struct dtxn_txn *t)
{
	const struct crest_lc_txn *lt = &crest_coord_of(t)->lt;
	const uint64_t until = dtxn_now_ns() + REDO_WRAP_WAIT_NS;

	while (lt->log_pins != 0) {
		if (dtxn_now_ns() >= until)
			return false;
		dtxn_co_sleep_until_lc(t->coord->co, dtxn_now_ns() + REDO_WRAP_PAUSE_NS);
	}
	return true;
}

/* WRITEs entry @p h to the log segment of each MN in @p mns, each at its own head. */
static int
redo_post(struct dtxn_txn *t, struct dtxn_batch *b, const struct crest_redo_hdr *h, uint64_t mns)
{
	struct dtxn_coord *c = t->coord;
	struct crest_coord *cc = crest_coord_of(t);
	const struct dtxn_catalog *cat = &c->worker->db->cat;

	for (uint64_t m = mns; m != 0; m &= m - 1)
		if (cc->log_head[__builtin_ctzll(m)] + h->bytes > cat->log_bytes &&
		    !redo_may_wrap(t))
			return DTXN_ABORT(DTXN_ABORT_LOCK_CONFLICT);
	for (; mns != 0; mns &= mns - 1) {
		const unsigned mn = (unsigned)__builtin_ctzll(mns);

		if (cc->log_head[mn] + h->bytes > cat->log_bytes)
			cc->log_head[mn] = 0; /* every older entry is applied (see above) */
		dtxn_batch_write(b, dtxn_store_log_raddr(cat, c->gid, (uint16_t)mn) + cc->log_head[mn],
				 h, h->bytes, false);
		cc->log_head[mn] += h->bytes;
	}
	return DTXN_OK;
}

int
crest_redo_add(struct dtxn_txn *t, struct dtxn_batch *b)
{
	struct dtxn_coord *c = t->coord;
	struct crest_coord *cc = crest_coord_of(t);
	const struct dtxn_catalog *cat = &c->worker->db->cat;
	struct crest_redo_hdr *h;
	const uint16_t n_deps = cc->opts.local ? cc->lt.n_deps : 0;
	uint64_t bytes = sizeof(*h) + 8 * (n_deps + 1), mns = 0;
	uint16_t n = 0;
	char *p;

	for (uint32_t i = 0; i < t->n_items; i++) {
		const struct dtxn_item *it = &t->items[i];
		uint32_t len = redo_len(t, it);

		if (len == 0)
			continue;
		bytes += sizeof(struct crest_redo_mod) + RTE_ALIGN_CEIL(len, 8);
		for (uint16_t r = 0; r < it->table->n_replicas; r++) { /* the row's stripe's MNs */
			uint16_t m = dtxn_store_row_mn(it->table, r, it->slot_raddr);

			mns |= m < DTXN_MAX_NODES ? UINT64_C(1) << m : 0;
		}
		n++;
	}
	if (n == 0)
		return DTXN_OK;
	h = bytes <= cat->log_bytes ? dtxn_txn_alloc(t, bytes) : NULL;
	if (h == NULL) /* larger than the segment, or the arena is full */
		return DTXN_ABORT(DTXN_ABORT_TOO_LARGE);
	h->txn_id = t->id;
	h->bytes = (uint32_t)bytes;
	h->n_mods = n;
	h->n_deps = n_deps; /* local=1: the writers of the local versions it read */
	h->ts_exec = cc->opts.local ? cc->lt.ts : 0;
	p = (char *)(h + 1);
	for (uint16_t d = 0; d < n_deps; d++, p += 8)
		memcpy(p, &cc->lt.deps[d].id, 8);
	for (uint32_t i = 0; i < t->n_items; i++) {
		const struct dtxn_item *it = &t->items[i];
		uint32_t len = redo_len(t, it);

		if (len != 0)
			p = redo_put(t, it, p, len);
	}
	memcpy(p, &t->id, 8);
	return redo_post(t, b, h, mns);
}
