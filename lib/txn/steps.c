/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Steps the protocols share (dtxn_txn_driver.h, "Steps protocols share"):
 * the round loop of an execution phase, the release of the locks a txn
 * holds, turning batch errors into abort reasons, replicated WRITEs.
 * Locating items in the hash index is locate.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "txn_private.h"

static const uint64_t g_zero;

int
dtxn_batch_reason(int rc)
{
	if (rc == -ENOBUFS)
		return DTXN_ABORT(DTXN_ABORT_TOO_LARGE);
	return rc != 0 ? DTXN_ABORT(DTXN_ABORT_FABRIC) : DTXN_OK;
}

int
dtxn_batch_run_reason(struct dtxn_batch *b)
{
	int rc = dtxn_batch_run(b);

	dtxn_batch_done(b);
	return dtxn_batch_reason(rc);
}

void
dtxn_batch_post_forget(struct dtxn_batch *b, const struct dtxn_txn *t, const char *what)
{
	if (b->n_wr != 0 && dtxn_batch_post(b) != 0)
		TXN_LOG(WARNING, "txn %#" PRIx64 ": %s not posted", t != NULL ? t->id : 0, what);
	dtxn_batch_done(b);
}

/* Gives back item @p it's record lock: its bits (masked CAS) or the whole word. */
static void
steps_unlock_record(struct dtxn_item *it, struct dtxn_batch *b)
{
	if (it->lock_bits != 0)
		dtxn_batch_masked_cas(b, it->lock_raddr, &txn_coord_of(b->coord)->sink, 0, 0, 0,
				      it->lock_bits, false);
	else
		dtxn_batch_write(b, it->lock_raddr, &g_zero, 8, false);
}

void
txn_unlock_into(struct dtxn_item *it, struct dtxn_batch *b)
{
	if (it->flags & DTXN_ITEM_F_LOCKED)
		steps_unlock_record(it, b);
	if (it->flags & DTXN_ITEM_F_BLOCKED)
		dtxn_batch_write(b, it->block_raddr, &g_zero, 8, false);
	it->flags &= ~(DTXN_ITEM_F_LOCKED | DTXN_ITEM_F_BLOCKED);
}

void
dtxn_txn_unlock_held(struct dtxn_txn *t, struct dtxn_batch *b)
{
	uint32_t i;

	for (i = 0; i < t->n_items; i++)
		txn_unlock_into(&t->items[i], b);
}

void
dtxn_txn_unlock_item(struct dtxn_txn *t, struct dtxn_item *it)
{
	struct dtxn_batch b;

	if (!(it->flags & DTXN_ITEM_F_LOCKED))
		return;
	dtxn_batch_init(&b, t->coord);
	steps_unlock_record(it, &b);
	dtxn_batch_post_forget(&b, t, "unlock");
	it->flags &= ~DTXN_ITEM_F_LOCKED;
}

void
dtxn_txn_release_held(struct dtxn_txn *t)
{
	struct dtxn_batch b;

	dtxn_batch_init(&b, t->coord);
	dtxn_txn_unlock_held(t, &b);
	dtxn_batch_post_forget(&b, t, "lock release");
}

void *
dtxn_txn_item_prepare(struct dtxn_txn *t, struct dtxn_item *it, size_t size)
{
	const struct dtxn_table *tab = it->table;
	dtxn_raddr_t ra = 0;
	void *st;

	st = dtxn_txn_alloc(t, size);
	if (st == NULL)
		return NULL;
	memset(st, 0, size);
	it->cc[0] = (uintptr_t)st;
	if (it->kind != DTXN_ITEM_INSERT)
		ra = dtxn_addr_cache_lookup(t->coord->worker->addr_cache, tab->def.id, it->key);
	if (ra != 0) {
		it->flags |= DTXN_ITEM_F_CACHED;
		it->slot_raddr = ra;
		it->bucket_raddr = dtxn_store_bucket_of_slot(tab, ra);
	}
	return st;
}

int
dtxn_txn_rounds(struct dtxn_txn *t, const struct dtxn_round_ops *ops)
{
	struct dtxn_batch b;
	uint32_t i;
	int reason = DTXN_OK;

	while (reason == DTXN_OK) {
		int rc;

		dtxn_batch_init(&b, t->coord);
		if (ops->prelude != NULL)
			reason = ops->prelude(t, &b);
		/* pass 0: the items ops->first puts ahead (if any); pass 1: the others */
		for (int pass = ops->first != NULL ? 0 : 1; pass < 2; pass++)
			for (i = t->n_fetched; i < t->n_items && reason == DTXN_OK; i++)
				if ((ops->first == NULL || ops->first(t, i) == (pass == 0)) &&
				    !ops->done(t, i))
					reason = ops->issue(t, i, &b);
		if (b.n_wr == 0) {
			dtxn_batch_done(&b);
			break;
		}
		/* post even after a failure: the CAS results say which locks are held */
		rc = dtxn_batch_run_reason(&b);
		if (reason == DTXN_OK)
			reason = rc;
		for (i = t->n_fetched; i < t->n_items; i++) {
			int r = ops->complete(t, i);

			if (reason == DTXN_OK)
				reason = r;
		}
	}
	return reason;
}

void
dtxn_batch_write_replicas(struct dtxn_batch *b, const struct dtxn_table *tab,
			  dtxn_raddr_t primary, const void *src, uint32_t len)
{
	for (uint16_t r = 0; r < tab->n_replicas; r++)
		dtxn_batch_write(b, dtxn_store_replica_raddr(tab, r, primary), src, len, false);
}

void *
dtxn_txn_backup_image(struct dtxn_txn *t, const struct dtxn_item *it, uint32_t lock_off,
		      uint64_t lock)
{
	char *img;

	if (it->table->n_replicas < 2)
		return it->slot;
	img = dtxn_txn_alloc(t, it->table->slot_size);
	if (img == NULL)
		return NULL;
	memcpy(img, it->slot, it->table->slot_size);
	memcpy(img + lock_off, &lock, sizeof(lock));
	return img;
}
