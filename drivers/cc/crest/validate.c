/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CREST validation (crest.md §1, "Multi-cell validation"): one round
 * with, per record that has cells the txn read and did not lock, one
 * READ of its header (64 B): a read cell now locked by another txn, or
 * whose EN changed, aborts. ENs are 2 B and wrap after 65,536 updates: a
 * txn validating more than 65,536 us after it began (each update takes
 * at least 1 us) READs the whole record instead and compares the cells'
 * full versions (EN and TS_commit, the writer's id). A key read absent is
 * validated through the (lock, version) header words of the buckets its
 * lookup visited, as inserts and deletes bump them.
 */
#include <string.h>

#include <rte_common.h>

#include "crest_private.h"

/*
 * Cells of item @p it validated at commit: read, not locked by the txn
 * (local=1: nor read under the MN locks of the record cache, an lcore's
 * or with cache=cn the CN's, which the local order covers as long as the
 * cache kept them: val_local()).
 */
static uint32_t
val_cells(const struct dtxn_item *it)
{
	const struct crest_item *ci = crest_item_of(it);

	if (it->kind == DTXN_ITEM_INSERT || it->kind == DTXN_ITEM_DELETE)
		return 0;
	return ci->rd & ~ci->wr & ~ci->seen.loc_cells;
}

/*
 * local=1: cells read under the cache's MN locks are valid while the
 * cache has held them since (their record's lock_gen unchanged): no
 * remote txn could write them, and the local ones are ordered by TS_exec.
 * Once given back, a remote writer may have come between: abort.
 */
static int
val_local(const struct dtxn_txn *t)
{
	for (uint32_t i = 0; i < t->n_items; i++) {
		const struct crest_item *ci = crest_item_of(&t->items[i]);

		if (ci->obj != NULL && (ci->seen.loc_cells & ~ci->wr) != 0 &&
		    ci->obj->lock_gen != ci->seen.gen)
			return DTXN_ABORT(DTXN_ABORT_VALIDATION);
	}
	return DTXN_OK;
}

/*
 * Whether the txn is old enough for ENs to have wrapped since its reads
 * (local=1: since the MN last showed a cached cell it read).
 */
static bool
val_en_wrapped(const struct dtxn_txn *t)
{
	const struct crest_coord *cc = crest_coord_of(t);
	uint64_t since = t->start_ns;

	if (cc->opts.local)
		since = RTE_MIN(since, cc->cached_since);
	return dtxn_now_ns() - since > CREST_EN_WRAP_NS;
}

/* Checks the header (and with @p full the record) now in @p img against what item @p it saw. */
static int
val_check(struct dtxn_txn *t, const struct dtxn_item *it, const void *img, bool full)
{
	const struct crest_item *ci = crest_item_of(it);
	const struct crest_layout *lay = crest_layout_of(t, it);
	const struct crest_hdr *h = img;
	uint32_t cells = val_cells(it);
	/* local=1: the bits the cache holds are the local writers', ordered locally */
	const uint64_t foreign = h->lock & ~crest_own_bits(t, it) & ~crest_lc_bits(ci->obj);

	if (ci->seen.cached != 0 &&
	    (h->slot.key != it->key || !(h->slot.flags & DTXN_SLOT_VALID)))
		return DTXN_ABORT(DTXN_ABORT_VALIDATION); /* the cached slot holds another record now */
	if ((foreign & crest_lock_bits(cells)) != 0) {
		crest_false_note(t, it, foreign);
		return DTXN_ABORT(DTXN_ABORT_LOCKED_READ);
	}
	for (; cells != 0; cells &= cells - 1) {
		unsigned c = (unsigned)__builtin_ctz(cells);

		if (!full && h->en[c] != ci->en[c]) {
			crest_false_note_en(t, it, h);
			return DTXN_ABORT(DTXN_ABORT_VALIDATION);
		}
		if (full && *crest_line_ver((void *)(uintptr_t)img, lay, c, 0) !=
				    CREST_VER(ci->en[c], ci->vers.ver[c]))
			return DTXN_ABORT(DTXN_ABORT_VALIDATION);
	}
	return DTXN_OK;
}

/*
 * RO mode: whether the cached cells item @p it read are current in the
 * header @p h READ (their ENs as cached, no foreign lock bit, the key).
 */
static bool
val_cached_ok(const struct dtxn_txn *t, const struct dtxn_item *it, const struct crest_hdr *h)
{
	const struct crest_item *ci = crest_item_of(it);
	const uint64_t foreign = h->lock & ~crest_own_bits(t, it) & ~crest_lc_bits(ci->obj);

	if (h->slot.key != it->key || !(h->slot.flags & DTXN_SLOT_VALID) ||
	    (foreign & crest_lock_bits(ci->seen.cached)) != 0)
		return false;
	for (uint32_t m = ci->seen.cached; m != 0; m &= m - 1)
		if (h->en[__builtin_ctz(m)] != ci->en[__builtin_ctz(m)])
			return false;
	return true;
}

/*
 * RO mode, after the validation: every cached read's record is dated again
 * or marked stale, all of them (not only up to the first failure), so that
 * a retry READs every stale one at once instead of failing on each in turn.
 */
static void
val_cached_note(const struct dtxn_txn *t, void *const *img, bool full)
{
	const uint64_t now = dtxn_now_ns();

	for (uint32_t i = 0; i < t->n_items; i++) {
		const struct dtxn_item *it = &t->items[i];
		const struct crest_item *ci = crest_item_of(it);

		if (img[i] != NULL && ci->seen.cached != 0 && !full)
			crest_lc_confirm(ci->obj, ci->seen.cached, ci->en,
					 val_cached_ok(t, it, img[i]), now);
	}
}

/* A bucket header word pair (lock, version) read back for an absent read. */
static int
val_check_bucket(const struct dtxn_txn *t, const uint64_t *w, uint64_t seen)
{
	if (dtxn_txn_lock_foreign(t, w[0]))
		return DTXN_ABORT(DTXN_ABORT_LOCKED_READ);
	return w[1] != seen ? DTXN_ABORT(DTXN_ABORT_VALIDATION) : DTXN_OK;
}

int
crest_validate(struct dtxn_txn *t)
{
	const bool full = val_en_wrapped(t);
	struct dtxn_batch b;
	uint64_t (*bw)[2];
	void **img;
	uint32_t i;
	bool read;
	int rc;

	if (dtxn_txn_weakened(t, DTXN_DEBUG_SKIP_READ_VALIDATION)) /* test aid */
		return DTXN_OK;
	rc = val_local(t);
	if (rc != DTXN_OK)
		return rc;
	img = dtxn_txn_alloc(t, sizeof(*img) * t->n_items);
	bw = dtxn_txn_alloc(t, sizeof(*bw) * t->n_items * DTXN_STORE_MAX_PROBE);
	if (img == NULL || bw == NULL)
		return DTXN_ABORT(DTXN_ABORT_TOO_LARGE);
	dtxn_batch_init(&b, t->coord);
	for (i = 0; i < t->n_items; i++) {
		struct dtxn_item *it = &t->items[i];
		struct crest_item *ci = crest_item_of(it);

		img[i] = NULL;
		if (it->kind == DTXN_ITEM_RO && !(it->flags & DTXN_ITEM_F_EXISTS)) {
			for (unsigned p = 0; p < ci->loc.n_bkt; p++)
				dtxn_batch_read(&b, ci->loc.braddr[p], bw[i * DTXN_STORE_MAX_PROBE + p],
						16, true);
			continue;
		}
		if (val_cells(it) == 0)
			continue;
		img[i] = full ? dtxn_txn_alloc(t, it->table->slot_size) : &ci->vhdr;
		if (img[i] == NULL) {
			dtxn_batch_done(&b);
			return DTXN_ABORT(DTXN_ABORT_TOO_LARGE);
		}
		dtxn_batch_read(&b, it->slot_raddr, img[i],
				full ? it->table->slot_size : CREST_HDR_SIZE, true);
	}
	if (b.n_wr == 0) {
		dtxn_batch_done(&b);
		return DTXN_OK;
	}
	rc = dtxn_batch_run_reason(&b);
	read = rc == DTXN_OK; /* the images are what the MN holds */
	for (i = 0; i < t->n_items && rc == DTXN_OK; i++) {
		const struct dtxn_item *it = &t->items[i];
		const struct crest_item *ci = crest_item_of(it);

		if (img[i] != NULL) {
			rc = val_check(t, it, img[i], full);
			continue;
		}
		if (it->kind != DTXN_ITEM_RO || (it->flags & DTXN_ITEM_F_EXISTS))
			continue;
		for (unsigned p = 0; p < ci->loc.n_bkt && rc == DTXN_OK; p++)
			rc = val_check_bucket(t, bw[i * DTXN_STORE_MAX_PROBE + p], ci->loc.bver[p]);
	}
	if (read && crest_coord_of(t)->opts.ro_cache)
		val_cached_note(t, img, full);
	return rc;
}
