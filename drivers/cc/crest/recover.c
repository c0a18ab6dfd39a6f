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
 *    every lock bit set in MN memory is a dead txn's. Every way a txn
 *    ends leaves the fence (crest_release(), crest_commit()); should one
 *    stay open FENCE_STOP_NS after the recoverer stops, the recovery
 *    gives up (-EINTR, one line) instead of waiting forever.
 * 2. "redo": every whole entry of each coordinator of every CN known
 *    dead (struct dtxn_recovery.dead_mask: the unlock below clears their
 *    bits too), in each MN's copy of its segment: the chain from offset 0
 *    whose txn ids grow, each whole (its trailer is its txn id; redo.c
 *    gives each MN's copy its own head, so the chain has no gaps). An
 *    entry exists only for a txn that passed validation and whose local
 *    dependencies had committed (the entry is written after both), so
 *    it is applied, on every replica, and what was applied already is
 *    left alone. A commit waits for its chain before the next txn, so of
 *    the cells committed through the MN path only the newest entry's may
 *    be missing; deferred cells may be missing from any entry:
 *    - a cell committed through the MN path carries its new EN: it gets
 *      the logged cell (versions and value), then its EN in the header,
 *      the commit's order, while the replica's EN is still before it; a
 *      whole record (insert, delete) likewise by its first cell's EN; the
 *      bucket header the txn locks gets a new version;
 *    - a deferred cell (local=1: a cached record's, which reaches the MN
 *      only with the last local writer's write-back) carries its round's
 *      base EN: while the replica still has that EN nothing of the round
 *      was written back, and the newest committed version of the cell
 *      (highest TS_exec, its record cache's order of its local writers:
 *      an lcore's, or with cache=cn the CN's one counter) is
 *      written with the next EN, as the write-back would have. Deferred
 *      cells are therefore applied after the rest, newest TS_exec first;
 *      the older writers of the round then find the EN moved on. redo.c
 *      keeps their entries reachable until the write-back (log_pins).
 *    A cell already at or past the entry's EN was written by it or by a
 *    later txn: untouched; so is an undeferred cell that a later txn holds
 *    on the primary, its lock bit clear (16-bit ENs wrap: rec_cell()).
 * 3. "unlock": lib/txn's scan of every table's primary clears every cell
 *    lock bit (the deleted bit stays) and releases each bucket lock a dead
 *    coordinator holds.
 * 4. The fence is lifted.
 * Idempotent: run again, every cell is at its entry's EN and no bit is set.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "crest_private.h"

/** The fence's memzone across processes (--role cn). */
#define CREST_FENCE_MZ "dtxn_crest_fence"
/** Wait of a txn at a raised fence, and of the recoverer for the live txns, ns. */
#define FENCE_WAIT_NS 2000u
/**
 * How long the recoverer's fence still waits once its coordinator stops,
 * ns: every live txn ends in far less then (a stopping coordinator's
 * lease hold returns, CREST waits for no lock), so one still open is
 * one that will never end: the recovery gives up rather than hang.
 */
#define FENCE_STOP_NS 100000000ull

int
crest_fence_init(struct crest_shared_rec *r, uint32_t n_coords, bool multi_process)
{
	size_t len = sizeof(struct crest_fence) + n_coords;

	r->n_coords = n_coords;
	if (!multi_process) {
		r->fence = rte_zmalloc("crest_fence", len, RTE_CACHE_LINE_SIZE);
		return r->fence == NULL ? -ENOMEM : 0;
	}
	r->mz = true;
	r->fence = dtxn_fabric_shared_zone(CREST_FENCE_MZ, len, SOCKET_ID_ANY, NULL);
	return r->fence == NULL ? -ENOMEM : 0;
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

/*
 * Step "fence": raises it and waits until no live coordinator has a txn
 * open. 0, or -EINTR: @p c stopped (its CN closes the run) and a txn was
 * still open FENCE_STOP_NS later (one line names its coordinator).
 */
static int
rec_fence(struct dtxn_coord *c, struct dtxn_recovery *rec)
{
	const struct crest_shared_rec *r = ((struct crest_coord *)c->cc_priv)->rec;
	struct dtxn_recovery_step *st = dtxn_recovery_step_begin(rec, "fence", "txns");
	const uint16_t n_mn = c->worker->db->cat.n_mn;
	uint64_t stop_ns = 0;
	bool first = true;
	int rc = 0;

	__atomic_store_n(&r->fence->on, 1, __ATOMIC_SEQ_CST);
	for (;;) {
		uint32_t open = 0, gid = 0;

		for (uint32_t g = 0; g < r->n_coords; g++)
			if (!dtxn_recovery_gid_dead(rec, n_mn, g) &&
			    __atomic_load_n(&r->fence->busy[g], __ATOMIC_SEQ_CST))
				gid = open++ == 0 ? g : gid;
		if (first)
			st->work = open;
		first = false;
		if (open == 0)
			break;
		if (dtxn_coord_stopping(c) && stop_ns == 0)
			stop_ns = dtxn_now_ns();
		if (stop_ns != 0 && dtxn_now_ns() - stop_ns > FENCE_STOP_NS) {
			CREST_LOG(ERR, "recovery of node %u: gave up at the fence: %u live coordinators (gid %u first) still have a txn open %.0f ms after the stop",
				  rec->dead_cn, open, gid, FENCE_STOP_NS / 1e6);
			rc = -EINTR;
			break;
		}
		dtxn_co_sleep_until_lc(dtxn_coord_co(c), dtxn_now_ns() + FENCE_WAIT_NS);
	}
	dtxn_recovery_step_end(st);
	return rc;
}

/*
 * The next whole redo entry of coordinator @p gid after @p prev (NULL:
 * the first) in one MN's copy @p log of its segment: the chain from offset
 * 0 whose txn ids grow, each whole (its trailer is its txn id). NULL at
 * the chain's end (a torn entry: its updates had not begun on this MN; an
 * older lap's entry; or garbage).
 */
static const struct crest_redo_hdr *
rec_next(const char *log, uint64_t log_bytes, uint32_t gid, const struct crest_redo_hdr *prev)
{
	const uint64_t off = prev == NULL ? 0 : (uint64_t)((const char *)prev - log) + prev->bytes;
	const struct crest_redo_hdr *h = (const void *)(log + off);
	uint64_t trailer;

	if (off + sizeof(*h) + 8 > log_bytes)
		return NULL;
	if ((prev != NULL && h->txn_id <= prev->txn_id) || dtxn_txn_id_gid(h->txn_id) != gid ||
	    h->n_mods == 0 || h->bytes % 8 != 0 || h->bytes < sizeof(*h) + 8 ||
	    h->bytes > log_bytes - off)
		return NULL;
	memcpy(&trailer, log + off + h->bytes - 8, 8);
	return trailer == h->txn_id ? h : NULL;
}

/* Whether epoch @p cur is before @p en (16-bit, wrapping). */
static bool
rec_before(uint16_t cur, uint16_t en)
{
	return (int16_t)(uint16_t)(cur - en) < 0;
}

/* What the redo step works with (rec_redo()). */
struct rec_ctx {
	struct dtxn_coord *c;
	struct dtxn_recovery *rec;
	char *buf;            /**< the record's replicas as READ, then a scratch image */
	uint64_t buf_img;     /**< offset of the scratch image in @c buf */
	bool *done;           /**< per entry found: it wrote something */
	uint32_t n_ents, max_ents;
	/** Deferred modifications (local=1), applied last, newest TS_exec first. */
	struct rec_def {
		uint64_t ts_exec, txn_id;
		const struct crest_redo_mod *m;
		uint32_t ent;     /**< its entry (@c done) */
	} *defs;
	uint32_t n_defs, max_defs;
	uint32_t n_def_cells; /**< deferred cells written (a replica each) */
};

/*
 * Cell @p cell of modification @p m (its logged span @p data), on replica
 * image @p cur (at @p ra): adds the WRITEs of the cell and then of its EN
 * (the commit's order) to @p b when the replica is behind.
 * - An undeferred cell carries its new EN (the commit stamped EN + 1): it
 *   is applied while the replica's EN is before it. ENs are 16 bits, so
 *   "before" holds only within 32,767 versions: a hot cell written that
 *   often between the dead txn's commit and its recovery (a CN paused past
 *   its lease, then a lease's fence wait) looks behind again. So first the
 *   primary (replica 0, @c x->buf): with the cell's lock bit clear, the
 *   txn's unlock landed there, after its cell WRITE (one QP, in order);
 *   if a later writer's version (TS_commit not @p id) is there, that writer
 *   wrote every replica after the txn: the cell is left alone everywhere.
 *   While the bit is set nobody else wrote the cell since it was taken,
 *   and the EN is within reach.
 * - A deferred cell (local=1) carries the EN of the round's base: its
 *   round wrote nothing back while the replica's EN is still that one; it
 *   is applied with the next EN, as crest_lc_compose() would, and the
 *   replica's EN moves past it, so the older writers of the round (lower
 *   TS_exec, applied after it) leave the cell alone.
 */
static bool
rec_cell(struct rec_ctx *x, struct dtxn_batch *b, const struct crest_layout *lay,
	 const struct crest_redo_mod *m, uint64_t id, unsigned cell, const char *data,
	 struct crest_hdr *cur, dtxn_raddr_t ra)
{
	struct crest_hdr *pri = (void *)x->buf;
	const uint32_t span = crest_cell_span(lay, cell);
	const char *src = data;
	uint16_t en;
	uint64_t ver;

	memcpy(&ver, data, 8);
	en = CREST_VER_EN(ver);
	if (!(m->flags & CREST_MOD_DEFERRED)) {
		if (!(pri->lock & CREST_LOCK_BIT(cell)) &&
		    CREST_VER_TS(*crest_line_ver(pri, lay, cell, 0)) != (id & CREST_TS_MASK))
			return false;
		if (!rec_before(CREST_VER_EN(*crest_line_ver(cur, lay, cell, 0)), en))
			return false;
	} else {
		char *img = x->buf + x->buf_img;

		if (CREST_VER_EN(*crest_line_ver(cur, lay, cell, 0)) != en)
			return false;
		en++;
		memcpy(img + lay->rec_off[cell], data, span);
		for (unsigned k = 0; k < lay->n_lines[cell]; k++) {
			uint64_t *lv = crest_line_ver(img, lay, cell, k);

			*lv = CREST_VER(en, CREST_VER_TS(*lv));
		}
		src = img + lay->rec_off[cell];
		x->n_def_cells++;
	}
	cur->en[cell] = en; /* the image as it will be: later modifications see it */
	memcpy((char *)cur + lay->rec_off[cell], src, span);
	dtxn_batch_write(b, ra + lay->rec_off[cell], (char *)cur + lay->rec_off[cell], span, true);
	dtxn_batch_write(b, ra + CREST_EN_OFF + 2 * cell, &cur->en[cell], 2, true);
	return true;
}

/* The table of modification @p m, NULL when it names no record of the catalog (never a CREST entry). */
static const struct dtxn_table *
rec_table(const struct rec_ctx *x, const struct crest_redo_mod *m)
{
	const struct dtxn_table *t = dtxn_catalog_table(&x->c->worker->db->cat, m->table_id);

	if (t == NULL || m->table_id >= DTXN_MAX_TABLES || !dtxn_store_slot_ok(t, m->raddr))
		return NULL;
	return t;
}

/* READs every replica of record @p raddr of table @p t into x->buf, and its bucket header into @p bh. */
static int
rec_fetch(struct rec_ctx *x, const struct dtxn_table *t, dtxn_raddr_t raddr, uint64_t bh[2])
{
	struct dtxn_batch b;

	dtxn_batch_init(&b, x->c);
	for (uint16_t r = 0; r < t->n_replicas; r++)
		dtxn_batch_read(&b, dtxn_store_replica_raddr(t, r, raddr),
				x->buf + (size_t)r * t->slot_size, t->slot_size, true);
	dtxn_batch_read(&b, dtxn_store_bucket_of_slot(t, raddr), bh, 2 * sizeof(*bh), true);
	return dtxn_recovery_run(x->rec, &b);
}

/*
 * Adds to @p b what modification @p m (its data after it) of txn @p id,
 * table @p t, changes on the replicas READ into x->buf (rec_fetch(),
 * updated as it goes); *@p done if anything.
 */
static void
rec_mod_add(struct rec_ctx *x, struct dtxn_batch *b, const struct dtxn_table *t,
	    const struct crest_redo_mod *m, uint64_t id, bool *done)
{
	const struct crest_layout *lay = &((const struct crest_coord *)x->c->cc_priv)->lay[m->table_id];
	const char *data = (const char *)(m + 1);

	for (uint16_t r = 0; r < t->n_replicas; r++) {
		struct crest_hdr *cur = (void *)(x->buf + (size_t)r * t->slot_size);
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
			dtxn_batch_write(b, ra, img, t->slot_size, true);
			*done = true;
			continue;
		}
		for (uint32_t w = m->cells, off = 0; w != 0; w &= w - 1) {
			unsigned cell = (unsigned)__builtin_ctz(w);
			uint32_t span = crest_cell_span(lay, cell);

			if (off + span > m->len)
				break;
			*done |= rec_cell(x, b, lay, m, id, cell, data + off, cur, ra);
			off += span;
		}
	}
}

/* Applies modification @p m of txn @p id on every replica; *@p done if any changed. */
static int
rec_mod(struct rec_ctx *x, const struct crest_redo_mod *m, uint64_t id, bool *done)
{
	const struct dtxn_table *t = rec_table(x, m);
	struct dtxn_batch b;
	uint64_t bh[2];
	int rc;

	if (t == NULL)
		return 0;
	rc = rec_fetch(x, t, m->raddr, bh);
	if (rc != 0)
		return rc;
	dtxn_batch_init(&b, x->c);
	rec_mod_add(x, &b, t, m, id, done);
	if (bh[0] == id) {
		/* its insert or delete: the bucket changes (absent reads of it fail) */
		bh[1]++;
		for (uint16_t r = 0; r < t->n_replicas; r++)
			dtxn_batch_write(&b, dtxn_store_replica_raddr(t, r, dtxn_store_bucket_of_slot(
									   t, m->raddr)) + 8,
					 &bh[1], 8, true);
	}
	return b.n_wr != 0 ? dtxn_recovery_run(x->rec, &b) : (dtxn_batch_done(&b), 0);
}

/* Grows @p *a (@p *max elements of @p size) to hold one more than @p n. 0 or -ENOMEM. */
static int
rec_grow(void **a, uint32_t *max, uint32_t n, size_t size)
{
	void *p;

	if (n < *max)
		return 0;
	p = realloc(*a, (size_t)RTE_MAX(64u, 2 * *max) * size);
	if (p == NULL)
		return -ENOMEM;
	*a = p;
	*max = RTE_MAX(64u, 2 * *max);
	return 0;
}

/*
 * Entry @p h: applies its undeferred modifications now if it is its
 * coordinator's @p newest (an older one's commit waited for its chain, so
 * they have landed), and keeps its deferred ones for rec_defs_apply().
 */
static int
rec_entry(struct rec_ctx *x, const struct crest_redo_hdr *h, bool newest)
{
	const char *p = (const char *)(h + 1) + (size_t)h->n_deps * 8;
	const char *end = (const char *)h + h->bytes - 8;
	const uint32_t ent = x->n_ents;
	int rc = 0;

	if (rec_grow((void **)&x->done, &x->max_ents, ent, sizeof(*x->done)) != 0)
		return -ENOMEM;
	x->done[x->n_ents++] = false;

	for (uint16_t i = 0; i < h->n_mods && rc == 0; i++) {
		const struct crest_redo_mod *m = (const void *)p;

		if (p + sizeof(*m) > end || p + sizeof(*m) + RTE_ALIGN_CEIL(m->len, 8) > end)
			break;
		p += sizeof(*m) + RTE_ALIGN_CEIL(m->len, 8);
		if (!(m->flags & CREST_MOD_DEFERRED) || m->kind != DTXN_ITEM_RW) {
			if (newest)
				rc = rec_mod(x, m, h->txn_id, &x->done[ent]);
			continue;
		}
		if (rec_grow((void **)&x->defs, &x->max_defs, x->n_defs, sizeof(*x->defs)) != 0)
			return -ENOMEM;
		x->defs[x->n_defs++] = (struct rec_def){ .ts_exec = h->ts_exec, .txn_id = h->txn_id,
							  .m = m, .ent = ent };
	}
	return rc;
}

/* By record, then newest TS_exec first (then txn id, so one txn's cells stay together). */
static int
rec_def_cmp(const void *a, const void *b)
{
	const struct rec_def *x = a, *y = b;

	if (x->m->raddr != y->m->raddr)
		return x->m->raddr < y->m->raddr ? -1 : 1;
	if (x->ts_exec != y->ts_exec)
		return x->ts_exec < y->ts_exec ? 1 : -1;
	return (x->txn_id < y->txn_id) - (x->txn_id > y->txn_id);
}

/*
 * The deferred cells of every dead coordinator, record by record (one
 * READ of its replicas), newest TS_exec first: per cell, the newest
 * committed local version of the round the dead CN left unwritten, which
 * is what its last writer would have written back.
 */
static int
rec_defs_apply(struct rec_ctx *x)
{
	int rc = 0;

	if (x->n_defs == 0)
		return 0;
	qsort(x->defs, x->n_defs, sizeof(*x->defs), rec_def_cmp);
	for (uint32_t i = 0, j; i < x->n_defs && rc == 0; i = j) {
		const struct dtxn_table *t = rec_table(x, x->defs[i].m);
		struct dtxn_batch b;
		uint64_t bh[2];

		for (j = i + 1; j < x->n_defs && x->defs[j].m->raddr == x->defs[i].m->raddr; j++)
			;
		if (t == NULL)
			continue;
		rc = rec_fetch(x, t, x->defs[i].m->raddr, bh);
		if (rc != 0)
			break;
		dtxn_batch_init(&b, x->c);
		for (uint32_t k = i; k < j; k++)
			if (x->defs[k].m->table_id == x->defs[i].m->table_id)
				rec_mod_add(x, &b, t, x->defs[k].m, x->defs[k].txn_id,
					    &x->done[x->defs[k].ent]);
		rc = b.n_wr != 0 ? dtxn_recovery_run(x->rec, &b) : (dtxn_batch_done(&b), 0);
	}
	return rc;
}

/*
 * Step "redo": every whole entry of every coordinator of every dead CN,
 * in each MN's copy (see the file's comment). Work: the entries found.
 */
static int
rec_redo(struct dtxn_coord *c, struct dtxn_recovery *rec)
{
	const struct dtxn_catalog *cat = &c->worker->db->cat;
	const uint32_t n_coords = ((struct crest_coord *)c->cc_priv)->rec->n_coords;
	const uint64_t room = cat->log_bytes;
	struct dtxn_recovery_step *st = dtxn_recovery_step_begin(rec, "redo", "entries");
	struct rec_ctx x = { .c = c, .rec = rec };
	uint64_t slot_max = 64;
	uint32_t n_dead = 0, k = 0;
	char *logs = NULL;
	int rc = 0;

	for (uint32_t id = 0; id < DTXN_MAX_TABLES; id++) {
		const struct dtxn_table *t = dtxn_catalog_table(cat, id);

		if (t != NULL)
			slot_max = RTE_MAX(slot_max, (uint64_t)t->slot_size * t->n_replicas);
	}
	for (uint32_t g = 0; g < n_coords; g++)
		n_dead += dtxn_recovery_gid_dead(rec, cat->n_mn, g);
	x.buf_img = slot_max;
	x.buf = dtxn_recovery_alloc(c, 2 * slot_max, false);
	logs = dtxn_recovery_alloc(c, RTE_MAX(n_dead, 1u) * cat->n_mn * room, false);
	if (x.buf == NULL || logs == NULL)
		rc = -ENOMEM;
	for (uint32_t g = 0; g < n_coords && rc == 0; g++, k++) {
		char *mine = logs + (size_t)k * cat->n_mn * room;
		uint64_t newest = 0;
		int n;

		if (!dtxn_recovery_gid_dead(rec, cat->n_mn, g)) {
			k--;
			continue;
		}
		n = dtxn_recovery_read_logs(c, rec, g, (uint32_t)room, mine, true);
		rc = RTE_MIN(n, 0);
		for (int mn = 0; mn < n; mn++) {
			const char *log = mine + (size_t)mn * room;

			for (const struct crest_redo_hdr *h = rec_next(log, room, g, NULL); h != NULL;
			     h = rec_next(log, room, g, h))
				newest = RTE_MAX(newest, h->txn_id);
		}
		for (int mn = 0; mn < n && rc == 0; mn++) {
			const char *log = mine + (size_t)mn * room;

			for (const struct crest_redo_hdr *h = rec_next(log, room, g, NULL);
			     h != NULL && rc == 0; h = rec_next(log, room, g, h)) {
				rc = rec_entry(&x, h, h->txn_id == newest);
				st->work++;
			}
		}
		if (rc == 0 && newest != 0) /* committable and persisted: its coordinator may not have seen it */
			dtxn_recovery_note_visible(rec, newest);
	}
	if (rc == 0)
		rc = rec_defs_apply(&x);
	for (uint32_t i = 0; i < x.n_ents; i++) { /* an entry on several MNs writes once */
		rec->rolled_forward += x.done[i];
		rec->txns_seen += x.done[i];
	}
	CREST_LOG(INFO, "recovery: %u redo entries, %u deferred modifications, %u deferred cell replicas written",
		  x.n_ents, x.n_defs, x.n_def_cells);
	free(x.done);
	free(x.defs);
	dtxn_recovery_free(c, logs);
	dtxn_recovery_free(c, x.buf);
	dtxn_recovery_step_end(st);
	return rc;
}

int
crest_recover(struct dtxn_coord *c, struct dtxn_recovery *rec)
{
	const struct crest_shared_rec *r = ((struct crest_coord *)c->cc_priv)->rec;
	int rc;

	rc = rec_fence(c, rec);
	if (rc == 0)
		rc = rec_redo(c, rec);
	if (rc == 0)
		rc = dtxn_recovery_unlock_scan_all(c, rec, CREST_LOCK_OFF, CREST_LOCK_DELETED);
	__atomic_store_n(&r->fence->on, 0, __ATOMIC_SEQ_CST);
	return rc;
}
