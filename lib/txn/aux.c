/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Aux areas for inserts (doc/guides/store.md, "Aux areas"): each
 * coordinator takes areas of a table's aux heap a chunk at a time (one
 * FAA of cat->aux_chunk on the heap's bump word on the primary,
 * DTXN_LOC_INS_AUX in locate.c), or (dtxn_loc_ops.aux_share, no MN
 * atomic) takes a fixed share of the insert room once, and hands them to
 * its inserts into slots that have none. A slot keeps its area for good (deletes and
 * re-inserts reuse it), so nothing is ever freed to the MN; an aborted
 * txn gives the areas its inserts took back to the coordinator, unless
 * the slot header naming one may have reached memory
 * (dtxn_txn_aux_keep(): Lotus's commit, which can abort after its first
 * write round). Motor writes an insert's slot only in its commit round,
 * which does not abort once posted.
 *
 * Delta areas (dtxn_txn_delta_take(); store.md "Delta heaps") come from
 * a chunk of the table's delta heap the same way, taken when the
 * protocol asks (Motor's commit, a row's first update), not in locating.
 * The chunk bookkeeping is lib/store's (chunk.c).
 */
#include <inttypes.h>

#include <rte_common.h>

#include "txn_private.h"

/* The stripe of @p t holding @p at: 0 when it is in none (callers pass a primary slot). */
static unsigned
aux_stripe(const struct dtxn_table *t, dtxn_raddr_t at)
{
	int s = dtxn_store_stripe_of(t, at);

	return s < 0 ? 0 : (unsigned)s;
}

struct txn_aux_heap *
txn_aux_heap_of(struct txn_coord *tc, const struct dtxn_table *t, dtxn_raddr_t at)
{
	unsigned s = aux_stripe(t, at);

	return s == 0 ? &tc->aux[t->def.id] : &tc->aux_stripes[(s - 1) * DTXN_MAX_TABLES + t->def.id];
}

/* The coordinator's chunk of the delta heap of @p t's stripe holding @p at. */
static struct dtxn_heap_chunk *
aux_delta_of(struct txn_coord *tc, const struct dtxn_table *t, dtxn_raddr_t at)
{
	unsigned s = aux_stripe(t, at);

	return s == 0 ? &tc->delta[t->def.id] :
			&tc->delta_stripes[(s - 1) * DTXN_MAX_TABLES + t->def.id];
}

bool
txn_aux_take(struct txn_coord *tc, const struct dtxn_table *t, dtxn_raddr_t at, uint32_t *aux)
{
	return dtxn_heap_chunk_take(&txn_aux_heap_of(tc, t, at)->chunk, aux);
}

void
txn_aux_refill(struct txn_coord *tc, const struct dtxn_table *t, dtxn_raddr_t at, uint32_t first,
	       uint32_t end)
{
	dtxn_heap_chunk_refill(&txn_aux_heap_of(tc, t, at)->chunk, first, end);
}

uint32_t
txn_aux_share_word(const struct dtxn_coord *c, const struct dtxn_table *t)
{
	uint32_t n = RTE_MAX(c->worker->db->cat.n_logs, 1u);

	if (t->aux_size < sizeof(uint64_t) || t->aux_areas < n)
		return 0;
	return (uint32_t)(t->aux_areas - c->gid % n);
}

void
txn_aux_share(const struct dtxn_coord *c, const struct dtxn_table *t, uint64_t loaded,
	      uint64_t word, struct txn_aux_heap *h, uint32_t *first, uint32_t *end)
{
	uint32_t n = RTE_MAX(c->worker->db->cat.n_logs, 1u);
	/* the last n areas hold the share words */
	uint64_t top = txn_aux_share_word(c, t) != 0 ? t->aux_areas - n : 0;
	uint64_t room = loaded < top ? top - loaded : 0, per = room / n;
	uint64_t at = loaded + 1 + (uint64_t)(c->gid % n) * per;

	*first = (uint32_t)at;
	*end = (uint32_t)(at + per);
	/* an earlier incarnation handed out [at, word): start past them */
	if (word > at && word <= at + per)
		*first = (uint32_t)word;
	h->word = per != 0 ? txn_aux_share_word(c, t) : 0;
	h->reserved = *first;
	h->share_end = *end;
}

void
txn_aux_put(struct txn_coord *tc, const struct dtxn_table *t, dtxn_raddr_t at, uint32_t aux)
{
	dtxn_heap_chunk_put(&txn_aux_heap_of(tc, t, at)->chunk, aux);
}

void
dtxn_txn_aux_keep(struct dtxn_txn *t, struct dtxn_item *it, struct dtxn_batch *b)
{
	struct txn_aux_heap *h;

	if ((it->flags & DTXN_ITEM_F_AUX_NEW) == 0)
		return;
	it->flags &= ~DTXN_ITEM_F_AUX_NEW; /* written: no longer this txn's to give back */
	h = txn_aux_heap_of(txn_coord_of(t->coord), it->table, it->slot_raddr);
	if (!h->shared || h->word == 0 || it->aux < h->reserved)
		return;
	/*
	 * aux_share: the share word records a chunk past this area before
	 * any record of it can land: in the same batch as the slot header
	 * (posted WRs land, or a chain to one MN lands whole or not at all:
	 * doc/guides/store.md "Aux areas"); the buffer only ever grows, so a
	 * later value in it before the WR executes is as good
	 */
	h->reserved = (uint32_t)RTE_MIN((uint64_t)it->aux + RTE_MAX(t->coord->worker->db->cat.aux_chunk, 1u),
					(uint64_t)h->share_end);
	h->word_buf = h->reserved;
	dtxn_batch_write(b, dtxn_store_aux_area_raddr(it->table, 0, it->slot_raddr, h->word),
			 &h->word_buf, sizeof(h->word_buf), false);
}

void
txn_aux_end(struct dtxn_txn *t, bool committed)
{
	struct txn_coord *tc = txn_coord_of(t->coord);

	for (uint32_t i = 0; i < t->n_items; i++) {
		struct dtxn_item *it = &t->items[i];

		if ((it->flags & DTXN_ITEM_F_AUX_NEW) == 0)
			continue;
		it->flags &= ~DTXN_ITEM_F_AUX_NEW;
		if (!committed)
			txn_aux_put(tc, it->table, it->slot_raddr, it->aux);
	}
}

int
dtxn_txn_delta_take(struct dtxn_txn *t, const struct dtxn_table *tab, dtxn_raddr_t at,
		    uint32_t *n)
{
	struct dtxn_heap_chunk *c = aux_delta_of(txn_coord_of(t->coord), tab, at);
	uint32_t chunk = t->coord->worker->db->cat.aux_chunk, first, end;
	struct dtxn_batch b;
	uint64_t *old;
	int rc;

	if (dtxn_heap_chunk_take(c, n))
		return DTXN_OK;
	if (dtxn_store_heap_bump_raddr(tab, DTXN_HEAP_DELTA, at) == 0)
		return DTXN_ABORT(DTXN_ABORT_DELTA_FULL); /* the table has no delta heap */
	old = dtxn_txn_alloc(t, sizeof(*old));
	if (old == NULL)
		return DTXN_ABORT(DTXN_ABORT_TOO_LARGE);
	dtxn_batch_init(&b, t->coord);
	dtxn_batch_faa(&b, dtxn_store_heap_bump_raddr(tab, DTXN_HEAP_DELTA, at), old, chunk, true);
	rc = dtxn_batch_run_reason(&b);
	if (rc != DTXN_OK)
		return rc;
	if (dtxn_store_heap_chunk(tab, DTXN_HEAP_DELTA, *old, chunk, &first, &end) != 0) {
		TXN_LOG(DEBUG, "table %s: delta heap full (%" PRIu64 " areas): txn aborts",
			tab->def.name, tab->delta_areas);
		return DTXN_ABORT(DTXN_ABORT_DELTA_FULL);
	}
	dtxn_heap_chunk_refill(c, first, end);
	(void)dtxn_heap_chunk_take(c, n);
	return DTXN_OK;
}

void
dtxn_txn_delta_put(struct dtxn_txn *t, const struct dtxn_table *tab, dtxn_raddr_t at, uint32_t n)
{
	dtxn_heap_chunk_put(aux_delta_of(txn_coord_of(t->coord), tab, at), n);
}
