/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * OOCC: CN crash recovery (doc/guides/oocc.md, "Recovery"; oocc.md §1:
 * "on failure replay if the redo log was stored, else abort (nothing
 * modified)"), run by a surviving coordinator for every coordinator of
 * the dead CN, in two steps:
 *
 * 1. "redo-logs": READ the coordinator's log region on every MN and take
 *    its newest redo record X (lib/txn's dtxn_recovery_logs_apply(); a
 *    record voided after an abort is stepped over, a torn one ends the
 *    chain). READ every replica of each entry's slot and the primary's
 *    bucket header. dtxn writes the record in R2 beside the validation
 *    READs (one round), so an acknowledged record does not show that
 *    validation passed: the commit point is X's first commit WRITE (R3),
 *    the commit marker oocc.md's note asks for, at no cost. So:
 *    - some replica of some entry carries X's version (header and tail):
 *      R3 had begun, X **rolls forward**: each entry whose primary X
 *      still locks gets the logged image on its backups, then on its
 *      primary (X's lock kept, for step 2); so does an insert that R3
 *      did not reach on its primary (X locks its bucket, the free slot
 *      is unlocked: it is written locked by X; before, it was left out,
 *      and a NewOrder whose ORDER-LINE rows had landed lost its ORDER
 *      row: oocc.md "Recovery"); an entry whose primary X
 *      already wrote and unlocked but whose backup missed it (a process
 *      killed mid-post) is locked again under X's id (CAS 0 -> W|X) and,
 *      if the primary still carries X, its backups are written; each
 *      bucket header X locks (insert, delete) gets a new version on every
 *      replica. X is listed in struct dtxn_recovery.visible;
 *    - else no record changed: X **rolls back**, nothing to write (a redo
 *      log has no pre-image to restore, and needs none).
 *    A txn that died before R2 left no record; it only holds locks.
 * 2. "unlock": lib/txn's scan of every table's primary releases each lock
 *    word (bucket header, record footer: DTXN_RECOVERY_LOCK_LAST) whose
 *    holder, intention or write lock, is a dead coordinator.
 * Read-only txns write nothing and lock nothing: nothing to recover.
 * Idempotent: run again, X's entries are unlocked (step 1 writes nothing,
 * a forward X only lists itself visible again) and no lock is left.
 */
#include <errno.h>
#include <string.h>


#include "oocc_private.h"

/* One redo entry as recovery finds it. */
struct rec_ent {
	const struct dtxn_log_entry *en;
	const struct dtxn_table *t;
	char *img;                 /**< the replicas' slots as read, n_replicas x slot_size */
	struct dtxn_bucket_hdr bh; /**< the primary's bucket header (lock, version) */
	uint64_t bver;             /**< roll forward: the bucket's new version */
	uint64_t relock;           /**< CAS result of a re-lock */
	bool held;                 /**< the primary's lock is X's */
	/**
	 * X's insert whose primary slot R3 never wrote: X locks the bucket,
	 * the slot is unlocked and does not carry X (only an insert holding
	 * the bucket's lock writes a free slot, so nobody else wrote it)
	 */
	bool ins;
	uint32_t has;              /**< replicas carrying X's version, a bit each */
};

/* Whether slot image @p s of table @p t carries txn @p x's version (header and tail). */
static bool
rec_carries(const struct dtxn_table *t, const void *s, uint64_t x)
{
	return ((const struct oocc_slot *)s)->version == x &&
	       oocc_footer_of(t, (void *)(uintptr_t)s)->tail == x;
}

/* The primary bucket header of the slot at @p slot, or 0 if @p slot is no slot of @p t. */
static dtxn_raddr_t
rec_bucket(const struct dtxn_table *t, dtxn_raddr_t slot)
{
	return dtxn_store_slot_ok(t, slot) ? dtxn_store_bucket_of_slot(t, slot) : 0;
}

/* READs every replica of each entry's slot and its primary bucket header. */
static int
rec_read(struct dtxn_coord *c, struct dtxn_recovery *rec, struct rec_ent *e, uint32_t n,
	 uint64_t x)
{
	struct dtxn_batch b;
	int rc;

	dtxn_batch_init(&b, c);
	for (uint32_t i = 0; i < n; i++) {
		for (uint16_t r = 0; r < e[i].t->n_replicas; r++)
			dtxn_batch_read(&b, dtxn_store_replica_raddr(e[i].t, r, e[i].en->raddr),
					e[i].img + (size_t)r * e[i].t->slot_size, e[i].t->slot_size,
					true);
		dtxn_batch_read(&b, rec_bucket(e[i].t, e[i].en->raddr), &e[i].bh, 16, true);
	}
	rc = dtxn_recovery_run(rec, &b);
	for (uint32_t i = 0; i < n && rc == 0; i++) {
		const struct dtxn_table *t = e[i].t;

		e[i].held = (oocc_footer_of(t, e[i].img)->lock & ~OOCC_WLOCK) == x;
		e[i].has = 0;
		for (uint16_t r = 0; r < t->n_replicas; r++)
			if (rec_carries(t, e[i].img + (size_t)r * t->slot_size, x))
				e[i].has |= UINT32_C(1) << r;
		e[i].ins = !e[i].held && !(e[i].has & 1) && oocc_footer_of(t, e[i].img)->lock == 0 &&
			   (e[i].bh.lock & ~OOCC_WLOCK) == x;
	}
	return rc;
}

/*
 * Entry @p e's primary was written and unlocked by X but a backup lacks X's
 * image: lock it again under X's id and, if it still carries X, write the
 * backups (the lock goes in step 2).
 */
static int
rec_repair_backups(struct dtxn_coord *c, struct dtxn_recovery *rec, struct rec_ent *e, uint64_t x,
		   void *img)
{
	const struct dtxn_table *t = e->t;
	dtxn_raddr_t lock = e->en->raddr + t->slot_size - 8;
	struct dtxn_batch b;
	int rc;

	dtxn_batch_init(&b, c);
	dtxn_batch_cas(&b, lock, &e->relock, 0, OOCC_WLOCK | x, true);
	dtxn_batch_read(&b, e->en->raddr, e->img, t->slot_size, true);
	rc = dtxn_recovery_run(rec, &b);
	if (rc != 0 || e->relock != 0 || !rec_carries(t, e->img, x))
		return rc; /* another txn holds it, or wrote it (every replica) since */
	dtxn_batch_init(&b, c);
	for (uint16_t r = 1; r < t->n_replicas; r++)
		if (!(e->has & (UINT32_C(1) << r)))
			dtxn_batch_write(&b, dtxn_store_replica_raddr(t, r, e->en->raddr), img,
					 t->slot_size, true);
	return dtxn_recovery_run(rec, &b);
}

/* Completes X from its redo entries @p e (see the file's comment). */
static int
rec_forward(struct dtxn_coord *c, struct dtxn_recovery *rec, struct rec_ent *e, uint32_t n,
	    uint64_t x)
{
	struct dtxn_batch b;
	int rc = 0;

	/* backups first, with lock 0 as a commit leaves them; bucket versions */
	dtxn_batch_init(&b, c);
	for (uint32_t i = 0; i < n; i++) {
		const struct dtxn_table *t = e[i].t;
		void *img = (void *)(uintptr_t)(e[i].en + 1);

		oocc_footer_of(t, img)->lock = 0;
		for (uint16_t r = 1; (e[i].held || e[i].ins) && r < t->n_replicas; r++)
			dtxn_batch_write(&b, dtxn_store_replica_raddr(t, r, e[i].en->raddr), img,
					 t->slot_size, true);
		if ((e[i].bh.lock & ~OOCC_WLOCK) != x)
			continue;
		e[i].bver = e[i].bh.version + 1;
		for (uint16_t r = 0; r < t->n_replicas; r++)
			dtxn_batch_write(&b,
					 dtxn_store_replica_raddr(t, r, rec_bucket(t, e[i].en->raddr)) +
						 offsetof(struct dtxn_bucket_hdr, version),
					 &e[i].bver, 8, true);
	}
	rc = dtxn_recovery_run(rec, &b);
	/* then the primaries, X's lock kept */
	dtxn_batch_init(&b, c);
	for (uint32_t i = 0; i < n && rc == 0; i++) {
		void *img = (void *)(uintptr_t)(e[i].en + 1);

		if (!e[i].held && !e[i].ins)
			continue;
		/* an insert's slot: locked by X too, until step 2 (a reader aborts on it) */
		oocc_footer_of(e[i].t, img)->lock = e[i].ins ? OOCC_WLOCK | x :
							      oocc_footer_of(e[i].t, e[i].img)->lock;
		dtxn_batch_write(&b, e[i].en->raddr, img, e[i].t->slot_size, true);
	}
	if (rc == 0)
		rc = dtxn_recovery_run(rec, &b);
	for (uint32_t i = 0; i < n && rc == 0; i++) {
		uint32_t all = (UINT32_C(1) << e[i].t->n_replicas) - 1;
		void *img = (void *)(uintptr_t)(e[i].en + 1);

		if (!e[i].held && (e[i].has & 1) && e[i].has != all) {
			oocc_footer_of(e[i].t, img)->lock = 0;
			rc = rec_repair_backups(c, rec, &e[i], x, img);
		}
	}
	return rc;
}

/* Rolls txn X of redo record @p h forward or back. */
static int
rec_apply(struct dtxn_coord *c, struct dtxn_recovery *rec, const struct dtxn_log_hdr *h)
{
	const struct dtxn_catalog *cat = &c->worker->db->cat;
	const uint64_t x = h->txn_id;
	const char *p = (const char *)(h + 1);
	struct rec_ent *e = dtxn_recovery_alloc(c, sizeof(*e) * h->n_entries, true);
	uint64_t img_bytes = 0;
	bool fwd = false, held = false;
	uint32_t n = 0;
	char *imgs;
	int rc;

	if (e == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < h->n_entries; i++) {
		const struct dtxn_log_entry *en = (const void *)p;
		const struct dtxn_table *t = dtxn_catalog_table(cat, en->table_id);

		p += sizeof(*en) + en->slot_size;
		if (t == NULL || en->slot_size != t->slot_size || rec_bucket(t, en->raddr) == 0)
			continue; /* not a record of this catalog: never a dtxn log entry */
		e[n].en = en;
		e[n].t = t;
		img_bytes += (uint64_t)t->n_replicas * t->slot_size;
		n++;
	}
	imgs = dtxn_recovery_alloc(c, RTE_MAX(img_bytes, (uint64_t)64), false);
	if (imgs == NULL) {
		dtxn_recovery_free(c, e);
		return -ENOMEM;
	}
	for (uint32_t i = 0, off = 0; i < n; i++) {
		e[i].img = imgs + off;
		off += (uint32_t)e[i].t->n_replicas * e[i].t->slot_size;
	}
	rc = rec_read(c, rec, e, n, x);
	for (uint32_t i = 0; i < n && rc == 0; i++) {
		fwd |= e[i].has != 0;
		held |= e[i].held || (e[i].bh.lock & ~OOCC_WLOCK) == x;
	}
	if (rc == 0 && fwd)
		rc = rec_forward(c, rec, e, n, x);
	if (rc == 0 && fwd)
		dtxn_recovery_note_visible(rec, x); /* its coordinator may not have seen it end */
	if (rc == 0 && held) {
		rec->txns_seen++;
		if (fwd) {
			rec->rolled_forward++;
		} else {
			rec->rolled_back++;
			dtxn_recovery_note_undone(rec, x); /* posted but refused: not committed */
		}
	}
	dtxn_recovery_free(c, imgs);
	dtxn_recovery_free(c, e);
	return rc;
}

int
oocc_recover(struct dtxn_coord *c, struct dtxn_recovery *rec)
{
	int rc = dtxn_recovery_logs_apply(c, rec, "redo-logs", rec_apply);

	if (rc != 0)
		return rc;
	return dtxn_recovery_unlock_scan(c, rec, DTXN_RECOVERY_LOCK_LAST, ~OOCC_WLOCK, NULL, NULL);
}
