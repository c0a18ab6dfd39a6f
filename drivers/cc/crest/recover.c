/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CREST: CN crash recovery (doc/guides/crest.md, "Recovery"; crest.md:
 * the commit point is committable + persisted, a persisted redo entry
 * whose dependencies committed is applied), run by a surviving
 * coordinator for a dead CN, in four steps:
 *
 * 1. "fence": a cell lock word is a bitmap with no owner, so a survivor
 *    cannot tell a dead txn's bit from a live one's. The recoverer sets
 *    the fence (struct crest_fence, shared by every coordinator of the
 *    cluster: a memzone across processes) and waits until no live
 *    coordinator has a txn open: new txns wait at begin
 *    (crest_fence_enter()), txns in flight end on their own (CREST
 *    aborts on a lock conflict, it never waits for a lock). From then on
 *    every lock bit set in MN memory is a dead txn's.
 * 2. "redo": each coordinator of every CN known dead (struct
 *    dtxn_recovery.dead_mask: the unlock below clears their bits too)
 *    has at most one entry not yet applied, its newest (a commit waits
 *    for its chain before the next txn): the chain of entries from
 *    offset 0 whose txn ids grow, each whole (its trailer is its txn id).
 *    An entry exists only for a txn that passed validation (the entry is
 *    written after it; no localized execution: no dependencies), so it
 *    is applied, on every replica: each cell whose epoch (EN) there is
 *    still before the entry's gets the logged cell (versions and value),
 *    then its EN in the header; a whole record (insert, delete) likewise
 *    by its first cell's EN; the bucket header the txn locks gets a new
 *    version. A cell already at or past the entry's EN was written by it
 *    or by a later txn: untouched.
 * 3. "unlock": lib/txn's scan of every table's primary clears every cell
 *    lock bit (the deleted bit stays) and releases each bucket lock a dead
 *    coordinator holds.
 * 4. The fence is lifted.
 * Idempotent: run again, every cell is at its entry's EN and no bit is set.
 */
#include <errno.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_memzone.h>

#include "crest_private.h"

/** The fence's memzone across processes (--role cn). */
#define CREST_FENCE_MZ "dtxn_crest_fence"
/** Wait of a txn at a raised fence, and of the recoverer for the live txns, ns. */
#define FENCE_WAIT_NS 2000u

int
crest_fence_init(struct crest_shared_rec *r, uint32_t n_coords, bool multi_process)
{
	size_t len = sizeof(struct crest_fence) + n_coords;
	const struct rte_memzone *mz;

	r->n_coords = n_coords;
	if (!multi_process) {
		r->fence = rte_zmalloc("crest_fence", len, RTE_CACHE_LINE_SIZE);
		return r->fence == NULL ? -ENOMEM : 0;
	}
	r->mz = true;
	mz = rte_memzone_reserve(CREST_FENCE_MZ, len, SOCKET_ID_ANY, RTE_MEMZONE_SIZE_HINT_ONLY);
	if (mz != NULL) {
		memset(mz->addr, 0, len); /* the first process, before any worker */
	} else if (rte_errno != EEXIST || (mz = rte_memzone_lookup(CREST_FENCE_MZ)) == NULL) {
		return -ENOMEM;
	}
	r->fence = mz->addr;
	return 0;
}

void
crest_fence_fini(struct crest_shared_rec *r)
{
	if (!r->mz)
		rte_free(r->fence);
	r->fence = NULL;
}

void
crest_fence_enter(struct dtxn_txn *t)
{
	struct crest_fence *f = crest_coord_of(t)->rec->fence;
	uint8_t *busy = &f->busy[t->coord->gid];

	for (;;) {
		__atomic_store_n(busy, 1, __ATOMIC_SEQ_CST);
		if (!__atomic_load_n(&f->on, __ATOMIC_SEQ_CST))
			return;
		/* a recovery is clearing the dead CN's bits: wait it out */
		__atomic_store_n(busy, 0, __ATOMIC_SEQ_CST);
		while (__atomic_load_n(&f->on, __ATOMIC_ACQUIRE))
			dtxn_co_sleep_until_lc(t->coord->co, dtxn_now_ns() + FENCE_WAIT_NS);
	}
}

void
crest_fence_leave(struct dtxn_txn *t)
{
	__atomic_store_n(&crest_coord_of(t)->rec->fence->busy[t->coord->gid], 0,
			 __ATOMIC_RELEASE);
}

/* Step "fence": raises it and waits until no live coordinator has a txn open. */
static void
rec_fence(struct dtxn_coord *c, struct dtxn_recovery *rec)
{
	const struct crest_shared_rec *r = ((struct crest_coord *)c->cc_priv)->rec;
	struct dtxn_recovery_step *st = dtxn_recovery_step_begin(rec, "fence", "txns");
	const uint16_t n_mn = c->worker->db->cat.n_mn;
	bool first = true;

	__atomic_store_n(&r->fence->on, 1, __ATOMIC_SEQ_CST);
	for (;;) {
		uint32_t open = 0;

		for (uint32_t g = 0; g < r->n_coords; g++)
			open += !dtxn_recovery_gid_dead(rec, n_mn, g) &&
				__atomic_load_n(&r->fence->busy[g], __ATOMIC_SEQ_CST);
		if (first)
			st->work = open;
		first = false;
		if (open == 0)
			break;
		dtxn_co_sleep_until_lc(dtxn_coord_co(c), dtxn_now_ns() + FENCE_WAIT_NS);
	}
	dtxn_recovery_step_end(st);
}

/* The newest whole redo entry of coordinator @p gid in one MN's copy @p log, or NULL. */
static const struct crest_redo_hdr *
rec_newest(const char *log, uint64_t log_bytes, uint32_t gid)
{
	const struct crest_redo_hdr *best = NULL;
	uint64_t off = 0, last = 0;

	while (off + sizeof(struct crest_redo_hdr) + 8 <= log_bytes) {
		const struct crest_redo_hdr *h = (const void *)(log + off);
		uint64_t trailer;

		if (h->txn_id <= last || dtxn_txn_id_gid(h->txn_id) != gid || h->n_mods == 0 ||
		    h->bytes % 8 != 0 || h->bytes < sizeof(*h) + 8 || h->bytes > log_bytes - off)
			break;
		memcpy(&trailer, log + off + h->bytes - 8, 8);
		if (trailer != h->txn_id)
			break; /* torn: its updates had not begun on this MN */
		best = h;
		last = h->txn_id;
		off += h->bytes;
	}
	return best;
}

/* Whether epoch @p cur is before @p en (16-bit, wrapping). */
static bool
rec_before(uint16_t cur, uint16_t en)
{
	return (int16_t)(uint16_t)(cur - en) < 0;
}

/* Applies modification @p m (its data after it) of txn @p x on every replica; *done if any changed. */
static int
rec_mod(struct dtxn_coord *c, struct dtxn_recovery *rec, const struct crest_redo_mod *m,
	uint64_t x, char *buf, bool *done)
{
	const struct crest_coord *cc = c->cc_priv;
	const struct dtxn_table *t = dtxn_catalog_table(&c->worker->db->cat, m->table_id);
	const struct crest_layout *lay;
	const char *data = (const char *)(m + 1);
	struct dtxn_batch b;
	uint64_t bh[2];
	int rc;

	if (t == NULL || m->table_id >= DTXN_MAX_TABLES || !dtxn_store_slot_ok(t, m->raddr))
		return 0; /* not a record of this catalog: never a CREST entry */
	lay = &cc->lay[m->table_id];
	dtxn_batch_init(&b, c);
	for (uint16_t r = 0; r < t->n_replicas; r++)
		dtxn_batch_read(&b, dtxn_store_replica_raddr(t, r, m->raddr),
				buf + (size_t)r * t->slot_size, t->slot_size, true);
	dtxn_batch_read(&b, dtxn_store_bucket_of_slot(t, m->raddr), bh, sizeof(bh), true);
	rc = dtxn_recovery_run(rec, &b);
	if (rc != 0)
		return rc;
	dtxn_batch_init(&b, c);
	for (uint16_t r = 0; r < t->n_replicas; r++) {
		struct crest_hdr *cur = (void *)(buf + (size_t)r * t->slot_size);
		dtxn_raddr_t ra = dtxn_store_replica_raddr(t, r, m->raddr);

		if (m->kind != DTXN_ITEM_RW) {
			/* a whole record: by its first cell's epoch */
			struct crest_hdr *img = (void *)(uintptr_t)data;
			bool del = m->kind == DTXN_ITEM_DELETE;

			if (m->len != t->slot_size ||
			    !rec_before(CREST_VER_EN(*crest_line_ver(cur, lay, 0, 0)),
					CREST_VER_EN(*crest_line_ver(img, lay, 0, 0))))
				continue;
			/* its lock: as the commit's unlock leaves it (primary: bits, cleared below) */
			img->lock = (r == 0 ? cur->lock : 0) | (del ? CREST_LOCK_DELETED : 0);
			dtxn_batch_write(&b, ra, img, t->slot_size, true);
			*done = true;
			continue;
		}
		for (uint32_t w = m->cells, off = 0; w != 0; w &= w - 1) {
			unsigned cell = (unsigned)__builtin_ctz(w);
			uint32_t span = crest_cell_span(lay, cell);
			uint64_t ver;

			if (off + span > m->len)
				break;
			memcpy(&ver, data + off, 8);
			if (rec_before(CREST_VER_EN(*crest_line_ver(cur, lay, cell, 0)),
				       CREST_VER_EN(ver))) {
				/* the cell, then its epoch in the header (the commit's order) */
				cur->en[cell] = CREST_VER_EN(ver);
				dtxn_batch_write(&b, ra + lay->rec_off[cell], data + off, span, true);
				dtxn_batch_write(&b, ra + CREST_EN_OFF + 2 * cell, &cur->en[cell], 2,
						 true);
				*done = true;
			}
			off += span;
		}
	}
	if (bh[0] == x) {
		/* its insert or delete: the bucket changes (absent reads of it fail) */
		bh[1]++;
		for (uint16_t r = 0; r < t->n_replicas; r++)
			dtxn_batch_write(&b, dtxn_store_replica_raddr(t, r, dtxn_store_bucket_of_slot(
									   t, m->raddr)) + 8,
					 &bh[1], 8, true);
	}
	return b.n_wr != 0 ? dtxn_recovery_run(rec, &b) : (dtxn_batch_done(&b), 0);
}

/* Applies entry @p h (see the file's comment). */
static int
rec_entry(struct dtxn_coord *c, struct dtxn_recovery *rec, const struct crest_redo_hdr *h,
	  char *buf)
{
	const char *p = (const char *)(h + 1) + (size_t)h->n_deps * 8;
	const char *end = (const char *)h + h->bytes - 8;
	bool done = false;
	int rc = 0;

	for (uint16_t i = 0; i < h->n_mods && rc == 0; i++) {
		const struct crest_redo_mod *m = (const void *)p;

		if (p + sizeof(*m) > end || p + sizeof(*m) + RTE_ALIGN_CEIL(m->len, 8) > end)
			break;
		rc = rec_mod(c, rec, m, h->txn_id, buf, &done);
		p += sizeof(*m) + RTE_ALIGN_CEIL(m->len, 8);
	}
	if (rc == 0) {
		/* committable and persisted: committed, its coordinator may not have seen it */
		dtxn_recovery_note_visible(rec, h->txn_id);
		if (done) {
			rec->txns_seen++;
			rec->rolled_forward++;
		}
	}
	return rc;
}

/* dtxn_recovery_logfmt.latest: rec_newest() with its txn id. */
static const void *
rec_latest(const void *log, uint64_t room, uint32_t gid, uint64_t *txn_id)
{
	const struct crest_redo_hdr *h = rec_newest(log, room, gid);

	*txn_id = h != NULL ? h->txn_id : 0;
	return h;
}

static int
rec_apply(struct dtxn_coord *c, struct dtxn_recovery *rec, const void *h, void *buf)
{
	return rec_entry(c, rec, h, buf);
}

/* Step "redo": the newest entry of every coordinator of every dead CN. */
static int
rec_redo(struct dtxn_coord *c, struct dtxn_recovery *rec)
{
	const struct dtxn_catalog *cat = &c->worker->db->cat;
	struct dtxn_recovery_logfmt f = {
		.step = "redo", .unit = "entries", .latest = rec_latest, .apply = rec_apply,
		.gid_end = ((struct crest_coord *)c->cc_priv)->rec->n_coords,
	};
	uint64_t slot_max = 64;
	int rc;

	for (uint32_t id = 0; id < DTXN_MAX_TABLES; id++) {
		const struct dtxn_table *t = dtxn_catalog_table(cat, id);

		if (t != NULL)
			slot_max = RTE_MAX(slot_max, (uint64_t)t->slot_size * t->n_replicas);
	}
	f.arg = rte_malloc("dtxn_recover", slot_max, 64);
	if (f.arg == NULL)
		return -ENOMEM;
	rc = dtxn_recovery_chains_apply(c, rec, &f);
	rte_free(f.arg);
	return rc;
}

int
crest_recover(struct dtxn_coord *c, struct dtxn_recovery *rec)
{
	const struct crest_shared_rec *r = ((struct crest_coord *)c->cc_priv)->rec;
	int rc;

	rec_fence(c, rec);
	rc = rec_redo(c, rec);
	if (rc == 0)
		rc = dtxn_recovery_unlock_scan_all(c, rec, CREST_LOCK_OFF, CREST_LOCK_DELETED);
	__atomic_store_n(&r->fence->on, 0, __ATOMIC_SEQ_CST);
	return rc;
}
