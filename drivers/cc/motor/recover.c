/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Motor: CN crash recovery (paper §5.3; doc/guides/motor.md, "Recovery"),
 * run by a surviving coordinator for every coordinator of the dead CN.
 *
 * Motor writes nothing before its commit batch, which writes every new
 * version (Vpkg, pre-images, Vcells) to every replica and unlocks the
 * primaries in one doorbell batch: a txn whose batch reached one replica
 * is committed and must be completed on the others (roll forward); a txn
 * whose batch reached none only holds locks (roll back = release them).
 *
 * oplog=mn, step "oplog": READ each dead coordinator's log region on
 * every MN; the record with the largest txn id X (and, of one txn, the
 * most entries: the latest locking round) names every lock word X holds
 * or was about to CAS. For each record entry, READ every replica's CVT:
 * if one has a Vcell written by X, copy its CVT (lock word 0 on the
 * backups), aux area (Vpkg) and attribute bar (the delta area of the
 * same number, if in use) to the replicas that lack it (roll forward). Then CAS each logged lock word X -> 0.
 * X found on no replica and holding a lock is rolled back (listed undone);
 * X found nowhere and holding none was decided before its first doorbell
 * (dtxn_batch_run_decide_early(), commit.c): its batch reached the
 * primaries, and survivors have overwritten its versions since.
 *
 * oplog=cn (the default, the paper's): the log was in the dead CN's
 * memory, which the paper keeps (UPS-backed; the CN restarts and reads
 * it). A CN that stays dead left no log, so recovery falls back to
 * lib/txn's scan of every table's primary ("unlock"): it releases every
 * lock word a dead coordinator holds. Before each release, a record whose
 * lock a dead txn X holds is completed from a replica that has X's Vcell
 * (scan_record(), rec_forward()): a process killed between two chains'
 * doorbells of X's commit batch (dtxn-cluster --kill, --debug-post-gap)
 * left X on the MNs whose chain rang, the records whose primary is there
 * unlocked, the others locked. X's verdict (cn_verdicts()): every held
 * record completed, rolled forward; none found anywhere, rolled back;
 * else half applied beyond repair (the held records' new versions were
 * only on the dead CN): an ERR line, -ENOTRECOVERABLE. The scan also
 * notes each dead coordinator's newest Vcell writer
 * (struct dtxn_recovery.visible).
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>


#include "motor_private.h"

/* The operation log's layout (oplog.c). */
struct rec_hdr {
	uint64_t txn_id;
	uint32_t n;
	uint32_t bytes;
};

struct rec_entry {
	uint32_t table_id;
	uint8_t kind;
	uint8_t rsvd[3];
	uint64_t key;
	dtxn_raddr_t lock;
};

/* True if CVT image @p cvt of table @p t has a Vcell written by @p x; its version in *@p ver. */
static bool
cvt_has_writer(const struct dtxn_table *t, const struct motor_cvt *cvt, uint64_t x, uint64_t *ver)
{
	for (uint32_t i = 0; i < motor_vnum(t); i++)
		if (cvt->cells[i].valid && cvt->cells[i].writer == x) {
			*ver = cvt->cells[i].version;
			return true;
		}
	return false;
}

/* True if CVT image @p cvt has a version newer than @p ver: its record
 * moved past that version (a survivor wrote it since). */
static bool
cvt_past(const struct dtxn_table *t, const struct motor_cvt *cvt, uint64_t ver)
{
	int n = motor_cvt_newest(t, cvt);

	return n >= 0 && cvt->cells[n].version > ver;
}

/* A valid record of the dead coordinator @p gid at @p log, or NULL. */
static const struct rec_hdr *
rec_check(const char *log, uint64_t log_bytes, uint32_t gid)
{
	const struct rec_hdr *h = (const void *)log;

	if (dtxn_txn_id_gid(h->txn_id) != gid || h->n == 0 ||
	    (uint64_t)h->n > (log_bytes - sizeof(*h)) / sizeof(struct rec_entry) ||
	    h->bytes != sizeof(*h) + (uint64_t)h->n * sizeof(struct rec_entry))
		return NULL;
	return h;
}

/* Record-lock entry (not a bucket header's lock): the slot it locks, else 0. */
static dtxn_raddr_t
entry_slot(const struct dtxn_table *t, dtxn_raddr_t lock)
{
	/* a slot of any of the table's primary stripes */
	if (DTXN_RADDR_OFF(lock) < MOTOR_LOCK_OFF || !dtxn_store_slot_ok(t, lock - MOTOR_LOCK_OFF))
		return 0;
	return lock - MOTOR_LOCK_OFF;
}

/* Completes record @p slot of txn @p x on the replicas that lack it; *fwd set if any had it. */
static int
rec_forward(struct dtxn_coord *c, struct dtxn_recovery *rec, const struct dtxn_table *t,
	    dtxn_raddr_t slot, uint64_t x, char *buf, bool *fwd)
{
	const uint32_t ss = t->slot_size, as = t->aux_size, ds = motor_abs(t);
	bool has[DTXN_MAX_REPLICAS] = { false };
	char *vbuf = buf + DTXN_MAX_REPLICAS * ss, *bbuf = vbuf + as;
	struct dtxn_batch b;
	uint32_t aux, bar;
	uint64_t xver = 0, v;
	int src = -1, rc;

	rc = dtxn_recovery_read_replicas(c, rec, t, slot, buf);
	if (rc != 0)
		return rc;
	for (uint16_t r = 0; r < t->n_replicas; r++) {
		has[r] = cvt_has_writer(t, (const void *)(buf + r * ss), x, &v);
		if (has[r] && src < 0) {
			src = r;
			xver = v;
		}
	}
	if (src < 0)
		return 0;
	*fwd = true;
	/* the source's aux area (Vpkg) and attribute bar, then its CVT to the
	 * others: the areas' numbers are the same on every replica */
	aux = dtxn_store_slot_aux(buf + src * ss);
	/* the bar, if in use: the delta area numbered as the Vpkg's */
	bar = (((const struct motor_cvt *)(const void *)(buf + src * ss))->hdr.flags &
	       DTXN_SLOT_DELTA) ? aux : 0;
	dtxn_batch_init(&b, c);
	dtxn_batch_read(&b, dtxn_store_aux_area_raddr(t, (uint16_t)src, slot, aux), vbuf, as, true);
	if (bar != 0)
		dtxn_batch_read(&b, dtxn_store_heap_area_raddr(t, DTXN_HEAP_DELTA, (uint16_t)src, slot,
								bar),
				bbuf, ds, true);
	rc = dtxn_recovery_run(rec, &b);
	if (rc != 0)
		return rc;
	for (uint16_t r = 0; r < t->n_replicas; r++) {
		struct motor_cvt *img = (void *)(buf + src * ss);
		uint64_t lock = ((const struct motor_cvt *)(const void *)(buf + r * ss))->lock;

		/* a replica past X's version was written since by a survivor
		 * (X's commit reached the primary and unlocked the record, then
		 * X's Vcell aged out there): it holds X's effect and newer ones,
		 * which X's image would undo (the primary is then unlocked and
		 * any WRITE here races live writers); only a replica behind X,
		 * which X's lock kept every writer from, takes X's image */
		if (has[r] || cvt_past(t, (const void *)(buf + r * ss), xver))
			continue;
		img->lock = r == 0 ? lock : 0; /* the primary's lock goes in the unlock round */
		dtxn_batch_init(&b, c);
		dtxn_batch_write(&b, dtxn_store_aux_area_raddr(t, r, slot, aux), vbuf, as, true);
		if (bar != 0)
			dtxn_batch_write(&b, dtxn_store_heap_area_raddr(t, DTXN_HEAP_DELTA, r, slot, bar),
					 bbuf, ds, true);
		dtxn_batch_write(&b, dtxn_store_replica_raddr(t, r, slot), img, ss, true);
		rc = dtxn_recovery_run(rec, &b);
		if (rc != 0)
			return rc;
	}
	return 0;
}

/* Rolls the txn of record @p h forward or back, then releases its locks. */
static int
rec_apply(struct dtxn_coord *c, struct dtxn_recovery *rec, const struct rec_hdr *h, char *buf)
{
	const struct dtxn_catalog *cat = &c->worker->db->cat;
	const struct rec_entry *e = (const void *)(h + 1);
	uint64_t *old = dtxn_recovery_alloc(c, sizeof(*old) * h->n, false);
	bool fwd = false;
	struct dtxn_batch b;
	uint64_t held = 0;
	int rc = 0;

	if (old == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < h->n && rc == 0; i++) {
		const struct dtxn_table *t = dtxn_catalog_table(cat, e[i].table_id);
		dtxn_raddr_t slot = t != NULL ? entry_slot(t, e[i].lock) : 0;

		if (slot != 0)
			rc = rec_forward(c, rec, t, slot, h->txn_id, buf, &fwd);
	}
	dtxn_batch_init(&b, c);
	for (uint32_t i = 0; i < h->n && rc == 0; i++)
		dtxn_batch_cas(&b, e[i].lock, &old[i], h->txn_id, 0, true);
	if (rc == 0)
		rc = dtxn_recovery_run(rec, &b);
	for (uint32_t i = 0; i < h->n && rc == 0; i++)
		held += old[i] == h->txn_id;
	dtxn_recovery_free(c, old);
	if (rc != 0)
		return rc;
	rec->locks_released += held;
	/* a post-mortem's facts, one line per dead coordinator's record */
	MOTOR_LOG(INFO, "recovery: txn %#" PRIx64 ": %u logged lock(s), %" PRIu64 " still held; %s",
		  h->txn_id, h->n, held,
		  fwd ? "its versions found: rolled forward" :
		  held != 0 ? "none of its versions found: rolled back (undone)" :
			      "none of its versions found, no lock held: left to decided");
	if (fwd) {
		rec->txns_seen++;
		rec->rolled_forward++;
		dtxn_recovery_note_visible(rec, h->txn_id);
	} else if (held != 0) {
		rec->txns_seen++;
		rec->rolled_back++;
		/* a commit batch posted (decided) but refused by the lease: not committed */
		dtxn_recovery_note_undone(rec, h->txn_id);
	}
	return 0;
}

/* The scratch rec_forward() needs for any table of @p cat. */
static uint64_t
rec_scratch(const struct dtxn_catalog *cat)
{
	uint64_t scratch = 0;

	for (uint32_t id = 0; id < DTXN_MAX_TABLES; id++) {
		const struct dtxn_table *t = dtxn_catalog_table(cat, id);

		if (t != NULL)
			scratch = RTE_MAX(scratch, (uint64_t)DTXN_MAX_REPLICAS * t->slot_size +
							   t->aux_size + motor_abs(t));
	}
	return scratch;
}

static int
recover_oplog(struct dtxn_coord *c, struct dtxn_recovery *rec)
{
	const struct dtxn_catalog *cat = &c->worker->db->cat;
	struct dtxn_recovery_step *st = dtxn_recovery_step_begin(rec, "oplog", "records");
	char *logs, *buf;
	int rc = 0;

	logs = dtxn_recovery_alloc(c, cat->log_bytes * cat->n_mn, false);
	buf = dtxn_recovery_alloc(c, rec_scratch(cat), false);
	if (logs == NULL || buf == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	for (uint32_t g = rec->gid_first; g < rec->gid_first + rec->n_gids && rc == 0; g++) {
		const struct rec_hdr *best = NULL;

		/* a round's record goes to the MNs it CASes on, not to every replica */
		int n = dtxn_recovery_read_logs(c, rec, g, (uint32_t)cat->log_bytes, logs, false);

		rc = RTE_MIN(n, 0);
		for (int mn = 0; mn < n; mn++) {
			const struct rec_hdr *h = rec_check(logs + mn * cat->log_bytes, cat->log_bytes, g);

			if (h != NULL && (best == NULL || h->txn_id > best->txn_id ||
					  (h->txn_id == best->txn_id && h->n > best->n)))
				best = h;
		}
		if (rc == 0 && best != NULL) {
			st->work++;
			rc = rec_apply(c, rec, best, buf);
		}
	}
out:
	dtxn_recovery_free(c, buf);
	dtxn_recovery_free(c, logs);
	dtxn_recovery_step_end(st);
	return rc;
}

/* oplog=cn: what the scan learns of each dead coordinator (index gid - rec->gid_first). */
struct cn_scan {
	struct dtxn_coord *c;
	char *buf;          /* rec_forward()'s scratch */
	uint64_t *newest;   /* the newest Vcell writer seen on a primary */
	uint64_t *holder;   /* the txn that holds a record lock (its open txn) */
	uint32_t *fwd;      /* records it holds that a replica had its Vcell for: rolled forward */
	uint32_t *lost;     /* records it holds that no replica had its Vcell for */
	int rc;             /* the first failed roll-forward's */
};

/*
 * Scan visitor, before the slot's lock is released: notes the newest
 * Vcell writer of each dead coordinator, and completes a record whose
 * lock a dead txn X still holds from a replica that has X's Vcell (X's
 * commit batch reached that replica's MN, not the primary's: a CN killed
 * between two chains' doorbells); the lock keeps every survivor off it.
 */
static void
scan_record(struct dtxn_recovery *rec, const struct dtxn_table *t, const void *slot,
	    dtxn_raddr_t raddr, void *arg)
{
	struct cn_scan *s = arg;
	const struct motor_cvt *cvt = slot;
	uint64_t x = cvt->lock;
	bool fwd = false;
	uint32_t g;

	for (uint32_t i = 0; i < motor_vnum(t); i++) {
		uint64_t w = cvt->cells[i].writer;

		if (cvt->cells[i].valid && dtxn_recovery_owns(rec, w)) {
			g = dtxn_txn_id_gid(w) - rec->gid_first;
			s->newest[g] = RTE_MAX(s->newest[g], w);
		}
	}
	if (!dtxn_recovery_owns(rec, x) || s->rc != 0)
		return;
	g = dtxn_txn_id_gid(x) - rec->gid_first;
	s->holder[g] = x;
	s->rc = rec_forward(s->c, rec, t, raddr, x, s->buf, &fwd);
	if (fwd)
		s->fwd[g]++;
	else
		s->lost[g]++;
}

/*
 * Scan visitor of a bucket whose lock dead txn X holds (an insert or a
 * delete), before the lock is released: an insert whose commit chain to
 * the primary's MN never rang (a CN killed between two doorbells) left
 * its slot empty there while the replicas on the MNs its batch reached
 * hold it, with X's Vcell. Each empty primary slot is completed from such
 * a replica (rec_forward()), then the bucket's version
 * (dtxn_recovery_bucket_words()). Nothing found: X's batch reached no replica, or
 * X did not commit; the record locks X holds decide (cn_verdicts()).
 */
static void
scan_bucket(struct dtxn_recovery *rec, const struct dtxn_table *t, const void *img,
	    dtxn_raddr_t raddr, uint64_t x, void *arg)
{
	struct cn_scan *s = arg;
	uint32_t n = 0, g;

	if (s->rc != 0)
		return;
	g = dtxn_txn_id_gid(x) - rec->gid_first;
	for (unsigned i = 0; i < t->def.slots_per_bucket && s->rc == 0; i++) {
		const struct dtxn_slot_hdr *h =
			dtxn_store_bucket_slot(t, (void *)(uintptr_t)img, i);
		bool fwd = false;

		if (h->flags & DTXN_SLOT_VALID)
			continue;
		s->rc = rec_forward(s->c, rec, t, dtxn_store_slot_raddr(t, raddr, i), x, s->buf,
				    &fwd);
		n += fwd;
	}
	if (n == 0 || s->rc != 0)
		return;
	s->holder[g] = x;
	s->fwd[g] += n;
	MOTOR_LOG(INFO, "recovery: txn %#" PRIx64 ": %u insert(s) in a bucket it holds completed from a replica",
		  x, n);
	s->rc = dtxn_recovery_bucket_words(s->c, rec, t, raddr);
}

/*
 * oplog=cn: the verdict on each dead coordinator's open txn X from the
 * records it still held: all completed from a replica, rolled forward;
 * none found anywhere (and no primary shows X's Vcell), rolled back; a
 * mix, or held records none has while a primary has X's Vcell, half
 * applied and beyond repair: the records whose new version is only in
 * the dead CN's memory (its commit chain to them never rang) are lost.
 * @return 0, or -ENOTRECOVERABLE after one ERR line per such txn.
 */
static int
cn_verdicts(struct dtxn_recovery *rec, const struct cn_scan *s)
{
	int rc = 0;

	for (uint32_t g = 0; g < rec->n_gids; g++) {
		uint64_t x = s->holder[g];

		if (x == 0) {
			/* no lock held: X's batch unlocked every primary, or X
			 * had none; its coordinator's decided says */
			if (s->newest[g] != 0)
				dtxn_recovery_note_visible(rec, s->newest[g]);
			continue;
		}
		rec->txns_seen++;
		if (s->lost[g] == 0) {
			rec->rolled_forward++;
			dtxn_recovery_note_visible(rec, x);
		} else if (s->fwd[g] == 0 && s->newest[g] != x) {
			rec->rolled_back++;
			dtxn_recovery_note_undone(rec, x);
		} else {
			MOTOR_LOG(ERR,
				  "recovery: txn %#" PRIx64 " half applied: %u record(s) it held have its "
				  "version on no replica (its commit chains to their MNs never rang: its "
				  "writes were only in the dead CN), %u completed; only a replica of every "
				  "table on every MN (--replicas = --mn) repairs it",
				  x, s->lost[g], s->fwd[g]);
			rc = -ENOTRECOVERABLE;
		}
		MOTOR_LOG(INFO, "recovery: txn %#" PRIx64 ": %u held record(s) rolled forward, %u found nowhere",
			  x, s->fwd[g], s->lost[g]);
	}
	return rc;
}

static int
recover_scan(struct dtxn_coord *c, struct dtxn_recovery *rec)
{
	uint32_t n = RTE_MAX(rec->n_gids, 1u);
	struct cn_scan s = { .c = c };
	uint64_t *ids = dtxn_recovery_alloc(c, sizeof(*ids) * 2 * n, true);
	uint32_t *cnt = dtxn_recovery_alloc(c, sizeof(*cnt) * 2 * n, true);
	int rc;

	s.buf = dtxn_recovery_alloc(c, rec_scratch(&c->worker->db->cat), false);
	if (ids == NULL || cnt == NULL || s.buf == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	s.newest = ids;
	s.holder = ids + n;
	s.fwd = cnt;
	s.lost = cnt + n;
	rc = dtxn_recovery_unlock_scan_buckets(c, rec, MOTOR_LOCK_OFF, UINT64_MAX, scan_record,
					       scan_bucket, &s);
	if (rc == 0)
		rc = s.rc;
	if (rc == 0)
		rc = cn_verdicts(rec, &s);
out:
	dtxn_recovery_free(c, s.buf);
	dtxn_recovery_free(c, cnt);
	dtxn_recovery_free(c, ids);
	return rc;
}

int
motor_recover(struct dtxn_coord *c, struct dtxn_recovery *rec)
{
	const struct motor_shared *sh = c->worker->db->cc_shared;
	int rc;

	/* first the timestamp service, if the dead CN hosted it (tso=cn; lib/tso) */
	rc = sh->tso_cn != NULL ? dtxn_tso_cn_take_over_lc(sh->tso_cn, c, rec->dead_cn, rec) : 0;
	if (rc < 0)
		return rc;
	if (sh->opts.oplog == MOTOR_OPLOG_MN)
		return recover_oplog(c, rec);
	return recover_scan(c, rec);
}
