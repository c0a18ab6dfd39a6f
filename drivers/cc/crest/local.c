/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CREST's localized execution (crest.md §2, paper §5; local=1;
 * doc/guides/crest.md, "Localized execution"): the read and read-write
 * items of a transaction go through its lcore's record cache (cache.c),
 * or with cache=cn (sim only) its CN's, shared by the CN's lcores. What
 * the lcores of a CN do not share are their QPs: with cache=cn a last
 * writer writes back only versions whose writers' redo entries are
 * persisted (lc_wait_durable()), and lowers their log pins only once its
 * write-back completed (crest_local_unpin()).
 *
 * - Execute: each new item takes its record's local object; the items of
 *   the call take their local locks (exclusive for a write) in
 *   (TableID, Key) order, waiting by yielding, but only while every
 *   local lock the txn holds orders before the one it waits for (else it
 *   aborts lock_conflict: no deadlock). An item whose cells the lcore
 *   already holds on the MN (a local writer's masked CAS) is served from
 *   the cache with no verb; a writer masked-CASes only the cell bits the
 *   lcore lacks; other reads READ the record (the cache keeps what they
 *   saw, for the next writer). Reads take the newest local version.
 * - Block end: TS_exec is taken when the first block ends (its locks all
 *   held); the block's writes are appended as versions (abort-on-newer-
 *   tag), its reads raise the cells' read TS_exec, its locks are freed.
 * - Commit: the txn waits (yielding) for its dependencies to be decided
 *   and aborts if one aborted; commit.c validates, logs the dependency
 *   ids and, for the last local writer of a record, writes back the
 *   composed newest committed cells and unlocks (lww.c, cache.c).
 * - Waits (the report's "waits", enum dtxn_wait_kind): each yield above
 *   is timed with dtxn_now_ns() into the coordinator's counters (local
 *   lock, dependencies, cache=cn's redo entries); an attempt aborted by
 *   the writer limit counts its time less its other waits.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_lcore.h>

#include "crest_private.h"

/** Pause between two looks at a busy local lock or an undecided dependency, ns. */
#define CREST_LC_PAUSE_NS 500

/* (TableID, Key) order of two local objects. */
static int
lc_order(const struct crest_lc_obj *a, const struct crest_lc_obj *b)
{
	if (a->table_id != b->table_id)
		return a->table_id < b->table_id ? -1 : 1;
	return a->key < b->key ? -1 : a->key > b->key;
}

struct lc_ent {
	struct crest_lc_obj *o;
	uint32_t i;
};

static int
lc_ent_cmp(const void *a, const void *b)
{
	const struct lc_ent *x = a, *y = b;
	int c = lc_order(x->o, y->o);

	return c != 0 ? c : (x->i > y->i) - (x->i < y->i);
}

/* The local lock the txn holds on @p o through items [blk_start, @p upto). */
static int
lc_held(const struct dtxn_txn *t, const struct crest_lc_obj *o, uint32_t upto)
{
	int held = 0;

	for (uint32_t i = crest_coord_of(t)->blk_start; i < upto; i++) {
		const struct crest_item *ci = crest_item_of(&t->items[i]);

		if (ci->obj == o && ci->lk > held)
			held = ci->lk;
	}
	return held;
}

/* The last (in lock order) object the txn holds a local lock on, items before @p upto. */
static const struct crest_lc_obj *
lc_max_held(const struct dtxn_txn *t, uint32_t upto)
{
	const struct crest_lc_obj *m = NULL;

	for (uint32_t i = crest_coord_of(t)->blk_start; i < upto; i++) {
		const struct crest_item *ci = crest_item_of(&t->items[i]);

		if (ci->lk != 0 && (m == NULL || lc_order(ci->obj, m) > 0))
			m = ci->obj;
	}
	return m;
}

/* Takes local lock @p excl on @p o, waiting only when no held lock orders after it. */
static int
lc_lock_one(struct dtxn_txn *t, struct crest_lc_obj *o, bool excl, int held,
	    const struct crest_lc_obj *max_held)
{
	struct crest_coord *cc = crest_coord_of(t);
	const uint64_t t0 = dtxn_now_ns();
	int rc = DTXN_OK;

	while (crest_lc_lock(o, &cc->lt, excl, held) != 0) {
		if (max_held != NULL && lc_order(max_held, o) >= 0) {
			rc = DTXN_ABORT(DTXN_ABORT_LOCK_CONFLICT);
			break;
		}
		dtxn_co_sleep_until_lc(t->coord->co, dtxn_now_ns() + CREST_LC_PAUSE_NS);
	}
	dtxn_coord_wait_since(t->coord, excl ? DTXN_WAIT_LOCAL_LOCK_X : DTXN_WAIT_LOCAL_LOCK_S, t0);
	return rc;
}

/* Items [first, n_items): their objects, their local locks in (TableID, Key) order. */
static int
lc_lock_new(struct dtxn_txn *t, uint32_t first)
{
	struct crest_coord *cc = crest_coord_of(t);
	const struct crest_lc_obj *max_held = lc_max_held(t, first);
	struct lc_ent *e = dtxn_txn_alloc(t, sizeof(*e) * (t->n_items - first));
	uint32_t n = 0;

	if (e == NULL)
		return DTXN_ABORT(DTXN_ABORT_TOO_LARGE);
	for (uint32_t i = first; i < t->n_items; i++) {
		struct dtxn_item *it = &t->items[i];
		struct crest_item *ci = crest_item_of(it);

		if (it->kind != DTXN_ITEM_RO && it->kind != DTXN_ITEM_RW)
			continue;
		/* a full cache leaves the item on the MN path: still correct (MN locks) */
		ci->obj = crest_lc_get(cc->lc, it->table->def.id, it->key);
		if (ci->obj != NULL)
			e[n++] = (struct lc_ent){ .o = ci->obj, .i = i };
	}
	qsort(e, n, sizeof(*e), lc_ent_cmp);
	for (uint32_t k = 0; k < n;) {
		struct crest_lc_obj *o = e[k].o;
		uint32_t end = k;
		bool excl = false;
		int held = lc_held(t, o, first), rc;

		for (; end < n && e[end].o == o; end++)
			excl |= t->items[e[end].i].kind == DTXN_ITEM_RW;
		rc = lc_lock_one(t, o, excl, held, max_held);
		if (rc != DTXN_OK)
			return rc;
		for (; k < end; k++)
			crest_item_of(&t->items[e[k].i])->lk = (uint8_t)RTE_MAX(held, excl ? 2 : 1);
		if (max_held == NULL || lc_order(o, max_held) > 0)
			max_held = o;
	}
	return DTXN_OK;
}

/* CREST cells whose lock bits are in @p bits. */
static uint32_t
lc_cells_of_bits(uint64_t bits, uint32_t n_cells)
{
	uint32_t cells = 0;

	for (unsigned c = 0; c < n_cells; c++)
		if (bits & CREST_LOCK_BIT(c))
			cells |= UINT32_C(1) << c;
	return cells;
}

/* Writer item @p ci joins the writers of its record @p o (once): they keep the MN locks. */
static void
lc_join(struct crest_lc_obj *o, struct crest_item *ci)
{
	if (ci->joined)
		return;
	crest_lww_join(&o->lww);
	o->admitted++;
	ci->joined = 1;
}

/*
 * Item @p i's record as the cache has it: the cells read into it->slot
 * (newest local versions of the cells the lcore holds), gathered into the
 * value; a writer joins the record's writers.
 */
static int
lc_serve(struct dtxn_txn *t, uint32_t i)
{
	struct crest_coord *cc = crest_coord_of(t);
	struct dtxn_item *it = &t->items[i];
	struct crest_item *ci = crest_item_of(it);
	const struct crest_layout *lay = crest_layout_of(t, it);
	struct crest_lc_obj *o = ci->obj;
	int rc;

	if (it->kind == DTXN_ITEM_RW) /* the last of the writers gives the MN locks back */
		lc_join(o, ci);
	if (!ci->lk_copied) { /* the header and the cells it does not read, once */
		memcpy(it->slot, o->base, lay->image_size);
		ci->lk_copied = 1;
	}
	rc = crest_lc_read(o, &cc->lt, lay, ci->rd | ci->wr, it->slot, &ci->seen);
	if (rc == -EAGAIN)
		return DTXN_ABORT(DTXN_ABORT_VALIDATION);
	if (rc != 0)
		return DTXN_ABORT(DTXN_ABORT_TOO_LARGE);
	for (uint32_t m = ci->rd; m != 0; m &= m - 1) {
		unsigned c = (unsigned)__builtin_ctz(m);

		ci->en[c] = o->epoch[c];
		ci->vers.ver[c] = CREST_VER_TS(*crest_line_ver(it->slot, lay, c, 0));
	}
	crest_gather(lay, it->slot, it->value, ci->rd);
	it->version = ci->vers.ver[__builtin_ctz(ci->rd | 1)];
	it->slot_raddr = o->raddr;
	it->flags = (it->flags | DTXN_ITEM_F_EXISTS) & ~DTXN_ITEM_F_TOMB;
	ci->loc.step = DTXN_LOC_DONE;
	return DTXN_OK;
}

/* Total of coordinator @p c's waits, every kind, ns. */
static uint64_t
lc_waited(const struct dtxn_coord *c)
{
	uint64_t sum = 0;

	for (unsigned k = 0; k < DTXN_WAIT_MAX; k++)
		sum += c->wait_ns[k];
	return sum;
}

void
crest_local_waits_begin(struct dtxn_txn *t)
{
	struct crest_coord *cc = crest_coord_of(t);

	cc->begin_ns = dtxn_now_ns();
	cc->begin_waited = lc_waited(t->coord);
}

/* An attempt aborting on the writer limit: its time not counted as another wait. */
static void
lc_limit_wait(struct dtxn_txn *t)
{
	const struct crest_coord *cc = crest_coord_of(t);
	const uint64_t span = dtxn_now_ns() - cc->begin_ns;
	const uint64_t other = lc_waited(t->coord) - cc->begin_waited;

	t->coord->wait_ns[DTXN_WAIT_WRITER_LIMIT] += span > other ? span - other : 0;
}

/* Routes item @p i (after its local lock): from the cache, a READ, or a masked CAS of the missing bits. */
static int
lc_route(struct dtxn_txn *t, uint32_t i)
{
	struct crest_coord *cc = crest_coord_of(t);
	struct dtxn_item *it = &t->items[i];
	struct crest_item *ci = crest_item_of(it);
	const struct crest_layout *lay = crest_layout_of(t, it);
	struct crest_lc_obj *o = ci->obj;
	const uint32_t held = lc_cells_of_bits(o->mn_bits, lay->n_cells);
	const uint64_t need = it->kind == DTXN_ITEM_RW ? it->lock_bits & ~o->mn_bits : 0;
	const uint64_t now = dtxn_now_ns();
	uint32_t cached;

	if (it->kind == DTXN_ITEM_RW && o->admitted >= CREST_LC_MAX_VERS) {
		lc_limit_wait(t);
		return DTXN_ABORT(DTXN_ABORT_LOCK_CONFLICT); /* until the writers drain */
	}
	ci->seen.cached = 0;
	if (!o->ready)
		return DTXN_OK; /* first fetch, as without the cache */
	/* RO mode: the cells others may write come from the cached image, validated at commit */
	cached = cc->opts.ro_cache ? crest_lc_cacheable(o, ci->rd & ~held, now) : 0;
	if (need == 0 && (ci->rd & ~held & ~cached) == 0) {
		ci->seen.cached = cached;
		for (uint32_t m = cached; m != 0; m &= m - 1)
			cc->cached_since = RTE_MIN(cc->cached_since, o->seen_ns[__builtin_ctz(m)]);
		return lc_serve(t, i);
	}
	/*
	 * A writer relying on cells the cache holds joins now: else the
	 * round could end (its last writer give the bits back) while its
	 * READ or masked CAS is in flight, and it would write those cells
	 * holding no MN lock on them.
	 */
	if (it->kind == DTXN_ITEM_RW && (it->lock_bits & o->mn_bits) != 0)
		lc_join(o, ci);
	it->slot_raddr = o->raddr;
	if (need == 0) { /* the lcore holds its cells: READ the others */
		it->lock_bits = 0;
		ci->loc.step = DTXN_LOC_SLOT;
	} else {
		it->lock_bits = need;
		ci->loc.step = DTXN_LOC_LOCK;
	}
	return DTXN_OK;
}

int
crest_local_prepare(struct dtxn_txn *t, uint32_t first)
{
	int rc = lc_lock_new(t, first);

	for (uint32_t i = first; i < t->n_items && rc == DTXN_OK; i++)
		if (crest_item_of(&t->items[i])->obj != NULL)
			rc = lc_route(t, i);
	return rc;
}

int
crest_local_take(struct dtxn_txn *t, uint32_t i)
{
	struct crest_coord *cc = crest_coord_of(t);
	struct dtxn_item *it = &t->items[i];
	struct crest_item *ci = crest_item_of(it);
	const struct crest_layout *lay = crest_layout_of(t, it);
	struct crest_lc_obj *o = ci->obj;
	const struct crest_hdr *h = crest_hdr_of(it);
	const uint64_t got = (it->flags & DTXN_ITEM_F_LOCKED) ? it->lock_bits : 0;
	const uint32_t held = lc_cells_of_bits(o->mn_bits, lay->n_cells);
	const uint32_t fresh = (ci->rd & ~held) | lc_cells_of_bits(got, lay->n_cells);
	bool again;
	int rc;

	/* the cells the lcore held come from the cache: only the others must pass */
	rc = crest_snapshot_take(t, i, fresh, h->lock & ~(crest_own_bits(t, it) | o->mn_bits),
				 &again);
	if (rc != DTXN_OK || again)
		return rc;
	if (o->ready && o->raddr != it->slot_raddr && o->mn_bits == 0)
		o->ready = 0; /* the key moved (deleted, inserted elsewhere): all from this image */
	crest_lc_fill(cc->lc, o, lay, h, it->slot_raddr, fresh);
	if (got != 0) { /* the bits are the lcore's now, given back by the last writer */
		o->mn_bits |= got;
		it->flags &= ~DTXN_ITEM_F_LOCKED;
	}
	ci->lk_copied = 1; /* it->slot holds the record */
	return lc_serve(t, i);
}

/* The local locks of the block, each object once. */
static void
lc_unlock_block(struct dtxn_txn *t, uint32_t upto)
{
	struct crest_coord *cc = crest_coord_of(t);

	for (uint32_t i = cc->blk_start; i < upto; i++) {
		struct crest_item *ci = crest_item_of(&t->items[i]);
		int held;

		if (ci->obj == NULL || ci->lk == 0)
			continue;
		held = lc_held(t, ci->obj, upto);
		crest_lc_unlock(ci->obj, &cc->lt, held == 2);
		for (uint32_t j = i; j < upto; j++) {
			struct crest_item *cj = crest_item_of(&t->items[j]);

			if (cj->obj == ci->obj)
				cj->lk = 0;
		}
	}
}

/* Sets cells @p cells of record image @p rec to be the txn's (TS_commit = its id). */
static void
lc_stamp(const struct dtxn_txn *t, const struct crest_layout *lay, void *rec, uint32_t cells)
{
	for (; cells != 0; cells &= cells - 1) {
		unsigned c = (unsigned)__builtin_ctz(cells);

		for (unsigned k = 0; k < lay->n_lines[c]; k++) {
			uint64_t *v = crest_line_ver(rec, lay, c, k);

			*v = CREST_VER(CREST_VER_EN(*v), t->id);
		}
	}
}

int
crest_local_block_end(struct dtxn_txn *t)
{
	struct crest_coord *cc = crest_coord_of(t);
	int rc = DTXN_OK;

	if (cc->lt.ts == 0)
		cc->lt.ts = crest_lc_next_ts(cc->lc); /* first block: all its locks held */
	for (uint32_t i = cc->blk_start; i < t->n_fetched && rc == DTXN_OK; i++) {
		struct dtxn_item *it = &t->items[i];
		struct crest_item *ci = crest_item_of(it);
		const struct crest_layout *lay = crest_layout_of(t, it);
		int64_t seq;

		if (ci->obj == NULL || !ci->joined || ci->seq != 0) {
			if (ci->obj != NULL)
				crest_lc_note_read(ci->obj, &cc->lt, ci->rd);
			continue;
		}
		crest_scatter(lay, it->slot, it->value, ci->wr);
		lc_stamp(t, lay, it->slot, ci->wr);
		seq = crest_lc_append(cc->lc, ci->obj, &cc->lt, lay, it->slot, ci->wr);
		if (seq == -EAGAIN)
			rc = DTXN_ABORT(DTXN_ABORT_VALIDATION);
		else if (seq < 0)
			rc = DTXN_ABORT(DTXN_ABORT_LOCK_CONFLICT); /* the record's versions are full */
		else
			ci->seq = (uint64_t)seq;
		crest_lc_note_read(ci->obj, &cc->lt, ci->rd & ~ci->wr);
	}
	lc_unlock_block(t, t->n_fetched);
	cc->blk_start = t->n_fetched;
	return rc;
}

int
crest_local_wait(struct dtxn_txn *t)
{
	struct crest_coord *cc = crest_coord_of(t);
	const uint64_t t0 = dtxn_now_ns();

	while (!crest_lc_deps_decided(&cc->lt))
		dtxn_co_sleep_until_lc(t->coord->co, dtxn_now_ns() + CREST_LC_PAUSE_NS);
	dtxn_coord_wait_since(t->coord, DTXN_WAIT_DEPS, t0);
	return cc->lt.doomed ? DTXN_ABORT(DTXN_ABORT_VALIDATION) : DTXN_OK;
}

/* Items of the txn before @p upto joined to the writers of @p o. */
static uint32_t
lc_joins(const struct dtxn_txn *t, const struct crest_lc_obj *o, uint32_t upto)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < upto; i++) {
		const struct crest_item *ci = crest_item_of(&t->items[i]);

		n += ci->obj == o && ci->joined;
	}
	return n;
}

/*
 * cache=cn: whether the txn would be the last writer of a record that
 * holds a committed version of another coordinator not persisted yet.
 */
static bool
lc_undurable_any(const struct dtxn_txn *t)
{
	const struct crest_coord *cc = crest_coord_of(t);

	for (uint32_t i = 0; i < t->n_items; i++) {
		const struct crest_item *ci = crest_item_of(&t->items[i]);
		const struct crest_lc_obj *o = ci->obj;

		if (o != NULL && ci->joined && lc_joins(t, o, i) == 0 &&
		    o->lww.writers == lc_joins(t, o, t->n_items) && crest_lc_undurable(o, &cc->lt))
			return true;
	}
	return false;
}

/*
 * cache=cn: yields until no record the txn is the last writer of holds a
 * committed version of another coordinator whose redo entry is not
 * persisted yet. Before the txn leaves any record, so that no two
 * leavers wait for each other: whoever is waited for has left every
 * record, and posts its batch next.
 */
static void
lc_wait_durable(struct dtxn_txn *t)
{
	const uint64_t t0 = dtxn_now_ns();

	while (lc_undurable_any(t))
		dtxn_co_sleep_until_lc(t->coord->co, dtxn_now_ns() + CREST_LC_PAUSE_NS);
	dtxn_coord_wait_since(t->coord, DTXN_WAIT_DURABLE, t0);
}

int
crest_local_leave(struct dtxn_txn *t, struct dtxn_batch *b, bool committed)
{
	struct crest_coord *cc = crest_coord_of(t);
	const bool cn = cc->opts.cache == CREST_CACHE_CN;
	int n = 0;

	if (cn) {
		lc_wait_durable(t);
		/* room for every version of every record it may write back */
		cc->unpin = dtxn_txn_alloc(t, sizeof(*cc->unpin) * CREST_LC_MAX_VERS * t->n_items);
		cc->n_unpin = 0;
	}
	for (uint32_t i = 0; i < t->n_items; i++) {
		struct dtxn_item *it = &t->items[i];
		struct crest_item *ci = crest_item_of(it);
		struct crest_lc_obj *o = ci->obj;
		enum crest_lww_act act;
		uint64_t bits;

		if (o == NULL || !ci->joined)
			continue;
		if (ci->seq != 0) /* cache=cn: written back only once its entry is persisted */
			crest_lc_decide(o, ci->seq, committed, !cn);
		if (ci->seq != 0 && committed) /* its entry stays until the write-back (redo.c) */
			cc->lt.log_pins++;
		ci->joined = 0;
		act = crest_lww_leave(&o->lww, committed && ci->seq != 0, ci->seq, o);
		if (act == CREST_LWW_WAIT)
			continue;
		bits = o->mn_bits;
		o->lww.best = NULL; /* the next writers start a new round */
		o->lww.best_seq = 0;
		if (act == CREST_LWW_WRITE)
			/* cache=cn: pins lowered once the write-back completed (no arena room: now) */
			crest_writeback_add(t, b, it, o->base,
					    crest_lc_compose(cc->lc, o, crest_layout_of(t, it),
							     cn ? cc->unpin : NULL, &cc->n_unpin));
		else
			crest_lc_drop(cc->lc, o);
		if (bits != 0) /* the shared MN cell locks, now the cache's no more */
			dtxn_batch_masked_cas(b, o->raddr + CREST_LOCK_OFF, &cc->sink, 0, 0, 0, bits,
					      false);
		n++;
	}
	return n;
}

void
crest_local_persisted(struct dtxn_txn *t)
{
	for (uint32_t i = 0; i < t->n_items; i++) {
		const struct crest_item *ci = crest_item_of(&t->items[i]);

		if (ci->obj != NULL && ci->seq != 0)
			crest_lc_persisted(ci->obj, ci->seq);
	}
}

void
crest_local_unpin(struct dtxn_txn *t)
{
	struct crest_coord *cc = crest_coord_of(t);

	for (uint32_t k = 0; k < cc->n_unpin; k++)
		cc->unpin[k]->log_pins--;
	cc->n_unpin = 0;
	cc->unpin = NULL;
}

void
crest_local_whole_done(struct dtxn_txn *t, const struct dtxn_item *it)
{
	struct crest_lc *lc = crest_coord_of(t)->lc;

	if (it->kind == DTXN_ITEM_DELETE)
		crest_lc_deleted(lc, it->table->def.id, it->key);
	else
		crest_lc_inserted(lc, crest_layout_of(t, it), it->table->def.id, it->key,
				  crest_hdr_of(it), it->slot_raddr);
}

void
crest_local_end(struct dtxn_txn *t, bool committed)
{
	struct crest_coord *cc = crest_coord_of(t);

	lc_unlock_block(t, t->n_items);
	crest_lc_txn_end(&cc->lt, committed);
	for (uint32_t i = 0; i < t->n_items; i++) {
		struct crest_item *ci = crest_item_of(&t->items[i]);

		if (ci->obj != NULL) {
			crest_lc_put(cc->lc, ci->obj);
			ci->obj = NULL;
		}
	}
}
