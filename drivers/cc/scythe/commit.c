/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Scythe's commit (scythe.md §1, §5): lock the write set in parallel with
 * Lock(ts, mode) (COLD: its timestamp is taken here, "in the locking
 * phase the txn gets its ts"; HOT: only what it did not lock while
 * reading: inserts and deletes), validate (COLD: a read-set record
 * locked, queued or of a newer version aborts, change 4; HOT: no
 * validation, but for the reads that took no lock, scythe_free_read()),
 * then one round: write back, bump the buckets of inserts
 * and deletes, unlock (one FAA per Takeout Lock, behind the writes on the
 * same QP).
 *
 * Reads of absent keys are validated through their buckets' versions in
 * both modes: no Takeout Lock guards a key that has no record (a
 * phantom), so even TOCC checks them; scythe.md leaves inserts to LogDB.
 */
#include <inttypes.h>
#include <stddef.h>
#include <string.h>

#include "scythe_private.h"

/* Deletes: CAS their buckets' locks (shared with the txn's inserts) and read the headers. */
static int
cm_delete_buckets(struct dtxn_txn *t)
{
	struct dtxn_batch b;
	int reason;

	dtxn_batch_init(&b, t->coord);
	for (uint32_t i = 0; i < t->n_items; i++) {
		struct dtxn_item *it = &t->items[i];

		if (it->kind != DTXN_ITEM_DELETE)
			continue;
		dtxn_loc_block_cas(t, i, &b);
		dtxn_batch_read(&b, it->bucket_raddr, scythe_item_of(it)->bhdr,
				sizeof(scythe_item_of(it)->bhdr), true);
	}
	if (b.n_wr == 0)
		return DTXN_OK;
	reason = dtxn_batch_run_reason(&b);
	for (uint32_t i = 0; i < t->n_items; i++) {
		struct dtxn_item *it = &t->items[i];
		struct dtxn_loc *l = dtxn_loc_of(it);

		if (it->kind != DTXN_ITEM_DELETE || !l->own_block)
			continue;
		if (l->block_old == 0) {
			it->flags |= DTXN_ITEM_F_BLOCKED;
			it->bucket_version = scythe_item_of(it)->bhdr[1];
		} else if (reason == DTXN_OK) {
			reason = DTXN_ABORT(DTXN_ABORT_LOCK_CONFLICT);
		}
	}
	return reason;
}

/* Items whose record lock the commit takes: the write set (COLD), or what HOT did not lock yet. */
static void
cm_mark_writes(struct dtxn_txn *t, enum scythe_mode mode)
{
	for (uint32_t i = 0; i < t->n_items; i++) {
		struct dtxn_item *it = &t->items[i];
		struct scythe_item *si = scythe_item_of(it);

		if (!dtxn_item_writes(it) || si->lk != SCYTHE_LK_NONE)
			continue;
		if (mode == SCYTHE_COLD || it->kind == DTXN_ITEM_INSERT ||
		    it->kind == DTXN_ITEM_DELETE)
			si->lk = SCYTHE_LK_NEED;
	}
}

/* Whether item @p it is validated, and how many words its READ brings. */
static unsigned
cm_vwords(const struct dtxn_item *it, enum scythe_mode mode)
{
	if (it->kind == DTXN_ITEM_RO && (it->flags & DTXN_ITEM_F_EXISTS) == 0)
		return dtxn_loc_of(it)->n_bkt; /* absent: its buckets' versions */
	if (it->kind != DTXN_ITEM_RO || (mode != SCYTHE_COLD && !scythe_free_read(it)))
		return 0; /* writes: their version came with their lock (cm_locked_versions) */
	return SCYTHE_META_LEN / 8; /* lower, queued_ts, upper, version */
}

/*
 * COLD writes: the version seen under the lock (in the grant reply, or by
 * the Poll that found the ticket served) must be the one execute read.
 */
static int
cm_locked_versions(const struct dtxn_txn *t)
{
	for (uint32_t i = 0; i < t->n_items; i++) {
		const struct dtxn_item *it = &t->items[i];
		const struct scythe_item *si = scythe_item_of(it);

		if (it->kind != DTXN_ITEM_RW && it->kind != DTXN_ITEM_DELETE)
			continue;
		if (si->lk == SCYTHE_LK_ALIAS)
			si = scythe_item_of(&t->items[si->alias]);
		if (si->lversion != it->version)
			return DTXN_ABORT(DTXN_ABORT_VALIDATION);
	}
	return DTXN_OK;
}

/* One round of validation READs; DTXN_OK or the reason. */
static int
cm_validate(struct dtxn_txn *t, enum scythe_mode mode)
{
	struct dtxn_batch b;
	int reason;

	if (dtxn_txn_weakened(t, DTXN_DEBUG_SKIP_READ_VALIDATION)) /* test aid: planted defect */
		return DTXN_OK;
	if (mode == SCYTHE_COLD) {
		reason = cm_locked_versions(t);
		if (reason != DTXN_OK)
			return reason;
	}
	dtxn_batch_init(&b, t->coord);
	for (uint32_t i = 0; i < t->n_items; i++) {
		struct dtxn_item *it = &t->items[i];
		struct scythe_item *si = scythe_item_of(it);
		const struct dtxn_loc *l = dtxn_loc_of(it);
		unsigned w = cm_vwords(it, mode);

		if (w == 0)
			continue;
		if (it->kind == DTXN_ITEM_RO && (it->flags & DTXN_ITEM_F_EXISTS) == 0) {
			for (unsigned p = 0; p < w; p++)
				dtxn_batch_read(&b, l->braddr[p] + 8, &si->meta[p], 8, true);
		} else {
			dtxn_batch_read(&b, it->slot_raddr + SCYTHE_LOWER_OFF, si->meta,
					SCYTHE_META_LEN, true);
		}
	}
	if (b.n_wr == 0)
		return DTXN_OK;
	reason = dtxn_batch_run_reason(&b);
	for (uint32_t i = 0; i < t->n_items && reason == DTXN_OK; i++) {
		struct dtxn_item *it = &t->items[i];
		const struct scythe_item *si = scythe_item_of(it);
		const struct dtxn_loc *l = dtxn_loc_of(it);
		unsigned w = cm_vwords(it, mode);
		uint16_t q;

		if (w == 0)
			continue;
		if (it->kind == DTXN_ITEM_RO && (it->flags & DTXN_ITEM_F_EXISTS) == 0) {
			for (unsigned p = 0; p < w; p++)
				if (si->meta[p] != l->bver[p])
					reason = DTXN_ABORT(DTXN_ABORT_VALIDATION);
			continue;
		}
		if (si->meta[3] != it->version) {
			reason = DTXN_ABORT(DTXN_ABORT_VALIDATION);
			continue;
		}
		if (scythe_holds(t, i))
			continue; /* ours: another item of the txn holds its lock */
		q = scythe_queue(si->meta[0], si->meta[2]);
		if (q != 0) {
			struct scythe_wstats *st = &scythe_worker_of(t)->st;

			/* change 4: locked or queued aborts (Fig. 17 case 3) */
			if (q > scythe_opts_t(t)->cold_wm) {
				scythe_coord_of(t)->hot_next = 1;
				st->cold_q_high++;
			} else {
				st->cold_q_low++;
			}
			reason = DTXN_ABORT(DTXN_ABORT_LOCKED_READ);
		}
	}
	return reason;
}

/* Adds item @p it's new image to @p b (primary and backups): version and value, then the header. */
static void
cm_write_item(struct dtxn_txn *t, struct dtxn_item *it, struct dtxn_batch *b)
{
	const struct dtxn_table *tab = it->table;
	struct scythe_slot *s = scythe_slot_of(it);

	s->version = t->id;
	if (it->kind == DTXN_ITEM_DELETE) {
		dtxn_batch_write_replicas(b, tab, it->slot_raddr + SCYTHE_VERSION_OFF, &s->version,
					  sizeof(s->version));
		s->hdr.flags &= ~DTXN_SLOT_VALID;
	} else {
		/* the lock words are never written: only the MN CPU and the FAAs own them */
		dtxn_batch_write_replicas(b, tab, it->slot_raddr + SCYTHE_VERSION_OFF, &s->version,
					  tab->slot_size - SCYTHE_VERSION_OFF);
		if (it->kind != DTXN_ITEM_INSERT)
			return;
		s->hdr.key = it->key;
		s->hdr.table_id = tab->def.id;
		s->hdr.flags = DTXN_SLOT_VALID;
	}
	/* the header last: a reader sees the record (or its absence) whole */
	dtxn_batch_write_replicas(b, tab, it->slot_raddr, &s->hdr, sizeof(s->hdr));
}

/*
 * A write-back to several MNs: adds to each MN's chain an unsignaled WRITE
 * of the mark (txn id, the MNs of the write-back) into the coordinator's
 * ticket table header there. A CN killed between two doorbells leaves the
 * mark on the MNs whose chain was rung only; recovery sees it
 * (recover.c rec_wb_torn()). One MN: its one chain lands whole or not at all.
 */
static void
cm_wb_mark(struct dtxn_txn *t, struct dtxn_batch *b)
{
	const struct dtxn_catalog *cat = &t->coord->worker->db->cat;
	struct scythe_coord *sc = scythe_coord_of(t);
	uint64_t mask = b->mn_mask;

	if ((mask & (mask - 1)) == 0)
		return;
	sc->wb_mark[0] = t->id;
	sc->wb_mark[1] = mask;
	for (uint16_t mn = 0; mn < cat->n_mn && mn < DTXN_MASK_NODES; mn++)
		if (mask & (UINT64_C(1) << mn))
			dtxn_batch_write(b, dtxn_store_log_raddr(cat, t->coord->gid, mn) +
					 offsetof(struct scythe_ticket_tab, wb_txn),
					 sc->wb_mark, sizeof(sc->wb_mark), false);
}

/* Write-back, bucket versions, unlock: one round. */
static int
cm_write_back(struct dtxn_txn *t)
{
	struct dtxn_batch b;

	dtxn_batch_init(&b, t->coord);
	for (uint32_t i = 0; i < t->n_items; i++) {
		struct dtxn_item *it = &t->items[i];
		struct scythe_item *si = scythe_item_of(it);

		if (!dtxn_item_writes(it))
			continue;
		cm_write_item(t, it, &b);
		if ((it->flags & DTXN_ITEM_F_BLOCKED) != 0 && dtxn_loc_of(it)->own_block) {
			/* inserts and deletes change their bucket: absent reads of it fail */
			si->bimg = it->bucket_version + 1;
			dtxn_batch_write_replicas(&b, it->table, it->block_raddr + 8, &si->bimg,
						  sizeof(si->bimg));
		}
	}
	if (b.n_wr == 0) {
		/* a read-only txn: its read locks (HOT) go back without a wait */
		scythe_unlock_held(t, &b);
		dtxn_batch_post_forget(&b, t, "read unlock");
		return DTXN_OK;
	}
	scythe_unlock_held(t, &b);
	dtxn_txn_unlock_held(t, &b);
	cm_wb_mark(t, &b);
	/* decided before the first doorbell: a CN killed between two leaves
	 * some chains landed, which recovery completes (recover.c) */
	return dtxn_batch_run_decide_early(&b, t);
}

int
scythe_commit(struct dtxn_txn *t)
{
	struct scythe_coord *sc = scythe_coord_of(t);
	enum scythe_mode mode = sc->mode;
	int reason = DTXN_OK;

	if (dtxn_txn_writes(t)) {
		if (sc->ts == 0)
			reason = dtxn_tso_txn_ts(scythe_worker_of(t)->tso, t, &sc->treq, &sc->ts);
		if (reason == DTXN_OK)
			reason = cm_delete_buckets(t);
		if (reason == DTXN_OK) {
			cm_mark_writes(t, mode);
			reason = scythe_lock_run(t);
		}
	}
	if (reason == DTXN_OK)
		reason = cm_validate(t, mode);
	if (reason == DTXN_OK) {
		reason = cm_write_back(t);
		if (reason != DTXN_OK)
			SCYTHE_LOG(ERR, "txn %" PRIx64 ": write-back failed", t->id);
	}
	if (reason != DTXN_OK) {
		scythe_release(t);
		return reason;
	}
	if (mode == SCYTHE_HOT)
		scythe_worker_of(t)->st.commits_hot++;
	sc->hot_next = 0; /* committed: the next transaction starts COLD again */
	return DTXN_OK;
}

void
scythe_abort(struct dtxn_txn *t)
{
	scythe_release(t);
}
