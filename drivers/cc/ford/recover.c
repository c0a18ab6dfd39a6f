/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * FORD: CN crash recovery (doc/guides/ford.md, "Recovery"), run by a
 * surviving coordinator for every coordinator of the dead CN.
 *
 * 1. "undo-logs": READ the dead coordinator's log region on every MN and
 *    find its latest undo record (lib/txn's dtxn_recovery_logs_apply():
 *    the chain of records from offset 0 whose txn ids grow). That
 *    record's txn X is in flight if it still holds the lock of one of its
 *    entries (primary lock word == X). Then:
 *    - if an entry is already released and carries X's version, X's
 *      unlocks had begun: its writes are complete, X rolls forward
 *      (nothing to write: its locks go in step 2);
 *    - else, if every entry X still holds carries X's version and every
 *      other one was released with a version other than its pre-image
 *      (X's write landed there, then its unlock, then maybe a survivor's
 *      write), its write round reached every primary and only (some of)
 *      its unlocks are missing (its coordinator may have seen the commit
 *      return and recorded it; across hosts unsignaled unlocks can be
 *      lost with a cut-off CN's connections, and where posted WRs die
 *      with their CN, dtxn_fabric_posted_survives(), its unlock round
 *      may land on some MNs only): X rolls forward, each held primary's
 *      image copied to its backups;
 *    - else every record X wrote is still locked by X, no reader could
 *      have validated against X's values: X rolls back, each entry it
 *      holds gets its pre-image back on every replica (the primary keeps
 *      X's lock until step 2).
 *    If X holds no lock but an entry carries its version, X had
 *    completed (its unlocks all posted) though its coordinator may not
 *    have seen the commit return: it is listed as visible, not in flight.
 *    If it holds none and no entry carries its version, either it
 *    aborted after its log, or it committed and a survivor overwrote its
 *    versions before this READ (its last unlock applied by the drain of
 *    the dead process's WRs): nothing to do here, and its coordinator's
 *    struct dtxn_txn.decided (set when its write round was posted) tells
 *    which. A txn rolled back is listed in struct dtxn_recovery.undone.
 *    A txn that died before its validation round wrote no record and
 *    changed no record; it only holds locks. Nor did one whose record is
 *    torn (its writer died mid-copy: dtxn_txn_log_intact() fails; the
 *    writes follow the record's completion): the chain ends before it.
 * 2. "unlock": lib/txn's scan of every table's primary releases each
 *    lock word (bucket and slot) a dead coordinator holds
 *    (dtxn_recovery_unlock_scan()).
 * Idempotent: a second run finds the record's locks released (step 1
 * skips it) and no lock to release.
 */
#include <errno.h>
#include <string.h>


#include "ford_private.h"

/*
 * X's write round reached every primary of record @p h (each entry X
 * still holds carries X's version; the others X had released): roll X
 * forward. Each held primary's image (READ) goes to its backups, unlocked
 * as a commit leaves them, in case the round did not reach them all; step
 * 2 releases the primaries. An entry X released is left alone: its unlock
 * followed the whole write round, and a survivor may have written it since.
 * @p word: each entry's primary {lock, version}, as READ.
 * @return 0 or -errno.
 */
static int
rec_roll_forward(struct dtxn_coord *c, struct dtxn_recovery *rec, const struct dtxn_log_hdr *h,
		 const uint64_t (*word)[2])
{
	const struct dtxn_catalog *cat = &c->worker->db->cat;
	const char *p = (const char *)(h + 1);
	struct dtxn_batch b;
	int rc = 0;

	for (uint32_t e = 0; e < h->n_entries && rc == 0; e++) {
		const struct dtxn_log_entry *en = (const void *)p;
		const struct dtxn_table *t = dtxn_catalog_table(cat, en->table_id);
		struct ford_slot *img;

		p += sizeof(*en) + en->slot_size;
		if (t == NULL || en->slot_size != t->slot_size || t->n_replicas < 2 ||
		    (word[e][0] & ~FORD_INVISIBLE) != h->txn_id)
			continue;
		img = dtxn_recovery_alloc(c, en->slot_size, true);
		if (img == NULL)
			return -ENOMEM;
		dtxn_batch_init(&b, c);
		dtxn_batch_read(&b, en->raddr, img, en->slot_size, true);
		rc = dtxn_recovery_run(rec, &b);
		if (rc == 0) {
			img->lock = 0;
			dtxn_batch_init(&b, c);
			for (uint16_t r = 1; r < t->n_replicas; r++)
				dtxn_batch_write(&b, dtxn_store_replica_raddr(t, r, en->raddr), img,
						 en->slot_size, true);
			rc = dtxn_recovery_run(rec, &b);
		}
		dtxn_recovery_free(c, img);
	}
	return rc;
}

/* Rolls txn X of record @p h back or forward (see the file's comment). */
static int
rec_apply(struct dtxn_coord *c, struct dtxn_recovery *rec, const struct dtxn_log_hdr *h)
{
	const struct dtxn_catalog *cat = &c->worker->db->cat;
	const uint64_t x = h->txn_id;
	uint64_t (*word)[2] = dtxn_recovery_alloc(c, sizeof(*word) * h->n_entries, true);
	const char *p = (const char *)(h + 1);
	bool held = false, done = false, written = true;
	struct dtxn_batch b;
	int rc;

	if (word == NULL)
		return -ENOMEM;
	dtxn_batch_init(&b, c);
	for (uint32_t e = 0; e < h->n_entries; e++) {
		const struct dtxn_log_entry *en = (const void *)p;

		dtxn_batch_read(&b, en->raddr + FORD_LOCK_OFF, word[e], 16, true);
		p += sizeof(*en) + en->slot_size;
	}
	rc = dtxn_recovery_run(rec, &b);
	p = (const char *)(h + 1);
	for (uint32_t e = 0; e < h->n_entries && rc == 0; e++) {
		const struct dtxn_log_entry *en = (const void *)p;
		const struct ford_slot *pre = (const void *)(en + 1);
		bool mine = (word[e][0] & ~FORD_INVISIBLE) == x;

		p += sizeof(*en) + en->slot_size;
		held |= mine;
		done |= !mine && word[e][1] == x;
		/*
		 * X's write round reached this primary: it carries X's version,
		 * or X released it with another version than X's pre-image
		 * (a survivor wrote it after X's unlock landed; only X's unlock
		 * round, posted once the whole write round completed, releases
		 * a lock X logged and then wrote). Where posted WRs die with
		 * their CN (dtxn_fabric_posted_survives()), that unlock round
		 * may land on some MNs only: X then holds some locks, and the
		 * records it released may already be overwritten.
		 */
		written &= word[e][1] == x || (!mine && word[e][1] != pre->version);
	}
	if (rc == 0 && !held && done) {
		/* X's unlocks were all posted: complete, its coordinator may not have
		 * seen its commit return (a process killed right after them) */
		dtxn_recovery_note_visible(rec, x);
		goto out;
	}
	if (rc != 0 || !held)
		goto out;
	rec->txns_seen++;
	if (done) {
		rec->rolled_forward++;
		dtxn_recovery_note_visible(rec, x);
		goto out;
	}
	if (written) {
		/* every lock held, every primary written: its commit may have
		 * returned (its history says committed) and only its unlocks be
		 * missing, lost with a cut-off CN's connections: forward */
		rc = rec_roll_forward(c, rec, h, (const uint64_t (*)[2])word);
		if (rc == 0) {
			rec->rolled_forward++;
			dtxn_recovery_note_visible(rec, x);
		}
		goto out;
	}
	dtxn_batch_init(&b, c);
	p = (const char *)(h + 1);
	for (uint32_t e = 0; e < h->n_entries; e++) {
		const struct dtxn_log_entry *en = (const void *)p;
		const struct dtxn_table *t = dtxn_catalog_table(cat, en->table_id);
		struct ford_slot *img = (void *)(uintptr_t)(en + 1);

		p += sizeof(*en) + en->slot_size;
		if ((word[e][0] & ~FORD_INVISIBLE) != x || t == NULL || en->slot_size != t->slot_size)
			continue;
		/* backups unlocked, as a commit leaves them; then the primary, which
		 * keeps X's lock until the unlock step (one image: two rounds) */
		img->lock = 0;
		for (uint16_t r = 1; r < t->n_replicas; r++)
			dtxn_batch_write(&b, dtxn_store_replica_raddr(t, r, en->raddr), img,
					 en->slot_size, true);
		rc = dtxn_recovery_run(rec, &b);
		dtxn_batch_init(&b, c);
		img->lock = x;
		dtxn_batch_write(&b, en->raddr, img, en->slot_size, true);
		if (rc == 0)
			rc = dtxn_recovery_run(rec, &b);
		if (rc != 0)
			goto out;
		dtxn_batch_init(&b, c);
	}
	rec->rolled_back++;
	dtxn_recovery_note_undone(rec, x); /* its write round may have been posted (decided) */
out:
	dtxn_recovery_free(c, word);
	return rc;
}

int
ford_recover(struct dtxn_coord *c, struct dtxn_recovery *rec)
{
	int rc = dtxn_recovery_logs_apply(c, rec, "undo-logs", rec_apply);

	if (rc != 0)
		return rc;
	return dtxn_recovery_unlock_scan(c, rec, FORD_LOCK_OFF, ~FORD_INVISIBLE, NULL, NULL);
}
