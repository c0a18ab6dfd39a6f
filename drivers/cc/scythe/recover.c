/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Scythe: CN crash recovery (doc/guides/scythe.md, "Recovery"; the paper
 * has none), run by a surviving coordinator for a dead CN, in two steps:
 *
 * 1. "tickets": the Takeout Lock is a ticket queue: a ticket the dead CN
 *    took, granted or still queued, would stall its record's queue
 *    forever. The MN service, which hands every ticket out, notes it in
 *    its coordinator's ticket table (struct scythe_ticket_tab, mnsvc.c).
 *    READ the tables of every coordinator of every CN known dead
 *    (struct dtxn_recovery.dead_mask: a dead CN's ticket may wait behind
 *    another dead CN's), then serve each ticket still in its queue
 *    (scythe_ticket_out()) when its turn comes: once upper reaches it,
 *    the ticket is the dead txn's and nobody else adds to upper, so one
 *    FAA (upper + 1) gives it back, as its holder would have. A ticket
 *    with live holders ahead waits for them (they release within a
 *    txn), yielding. A ticket its coordinator cancelled (cancel=1) is
 *    the MN service's to give back (cancel.c): skipped.
 * 2. "unlock": lib/txn's scan releases the bucket locks (CAS, inserts and
 *    deletes) a dead coordinator holds; slots carry no lock word.
 * Write-back: Scythe logs nothing; its write-back, bucket versions and
 * unlock FAAs go in one doorbell batch, a chain per MN, and the txn is
 * decided just before the first doorbell (dtxn_batch_run_decide_early()).
 * A CN killed between two doorbells leaves the rung chains landed (their
 * records written on those MNs, the tickets whose primary is there given
 * back) and the others never sent. Each chain of a multi-MN write-back
 * carries a mark (txn id, MN mask) into the coordinator's ticket table
 * header on its MN; step 1 reads them (rec_wb_torn()). A record whose
 * ticket the torn txn X still holds (its primary's chain never rang) is
 * completed before the ticket goes back (rec_forward()): a replica on a
 * reached MN has X's image, copied to the replicas that lack it. Verdict
 * (rec_torn_verdict()): every such record found, X is rolled forward
 * (counted committed); a held record with no replica on a reached MN
 * (fewer replicas than MNs) is beyond repair: ERR naming X, -EIO.
 * Idempotent: served tickets are out of their queues, no lock is left.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>


#include "scythe_private.h"

/** Rounds of the ticket service before it gives up (a queue that never moves). */
#define RECOVER_ROUNDS_MAX 100000u
/** Wait between two rounds of the ticket service, ns. */
#define RECOVER_WAIT_NS 2000u

/* A dead coordinator's ticket, being served. */
struct rec_ticket {
	dtxn_raddr_t slot;
	uint16_t ticket;
	uint64_t meta[3];  /**< lower, queued_ts, upper */
	uint64_t old;
	uint32_t torn;     /**< its coordinator's torn write-back, index + 1 in struct rec_torn; 0: none */
	uint32_t gid;      /**< its coordinator */
};

/* A dead coordinator's torn write-back (rec_wb_torn()) and what step 1 did with it. */
struct rec_torn {
	uint64_t x;        /**< its txn */
	uint32_t gid;      /**< its coordinator */
	uint64_t reached;  /**< MNs whose chain landed (bit per MN) */
	uint64_t missed;   /**< MNs whose chain never rang */
	uint32_t fwd;      /**< held records completed from a reached replica */
	uint32_t lost;     /**< held records with no replica on a reached MN */
};

/*
 * Whether dead coordinator @p g's last write-back was torn: a mark
 * (struct scythe_ticket_tab.wb_txn) names MNs whose own mark is older, so
 * its chain to them was never rung (ids of one coordinator only grow). Its
 * other chains landed and gave their tickets back. Fills @p tn.
 * @p hdr: the tables of @p g, one per MN.
 */
static bool
rec_wb_torn(uint32_t g, const struct scythe_ticket_tab *hdr, uint16_t n_mn, struct rec_torn *tn)
{
	for (uint16_t mn = 0; mn < n_mn; mn++) {
		const uint64_t x = hdr[mn].wb_txn;
		uint64_t miss = 0;

		if (x == 0)
			continue;
		for (uint16_t m = 0; m < n_mn && m < DTXN_MASK_NODES; m++)
			if ((hdr[mn].wb_mask & (UINT64_C(1) << m)) && hdr[m].wb_txn < x)
				miss |= UINT64_C(1) << m;
		if (miss == 0)
			continue;
		memset(tn, 0, sizeof(*tn));
		tn->x = x;
		tn->gid = g;
		tn->reached = hdr[mn].wb_mask & ~miss;
		tn->missed = miss;
		SCYTHE_LOG(INFO, "recovery: txn %" PRIx64 " of dead coordinator %" PRIu32
			   " died between the doorbells of its write-back: landed on MNs 0x%"
			   PRIx64 ", never sent to MNs 0x%" PRIx64, x, g, tn->reached, miss);
		return true;
	}
	return false;
}

/* The scratch rec_forward() needs: every replica of the largest slot. */
static uint64_t
rec_scratch(const struct dtxn_catalog *cat)
{
	uint64_t ss = sizeof(struct dtxn_slot_hdr);

	for (uint32_t id = 0; id < DTXN_MAX_TABLES; id++) {
		const struct dtxn_table *t = dtxn_catalog_table(cat, id);

		if (t != NULL)
			ss = RTE_MAX(ss, (uint64_t)t->slot_size);
	}
	return ss * DTXN_MAX_REPLICAS;
}

/*
 * The table whose primary slot @p slot is: the one its header names
 * (@p id), else the one whose primary region holds it (an insert's slot,
 * whose primary the write-back never reached, holds no header yet).
 */
static const struct dtxn_table *
rec_table_of(const struct dtxn_catalog *cat, dtxn_raddr_t slot, uint32_t id)
{
	const struct dtxn_table *t = dtxn_catalog_table(cat, id);

	if (t != NULL && dtxn_store_slot_ok(t, slot))
		return t;
	for (uint32_t i = 0; i < DTXN_MAX_TABLES; i++) {
		t = dtxn_catalog_table(cat, i);
		if (t != NULL && dtxn_store_slot_ok(t, slot))
			return t;
	}
	return NULL;
}

/*
 * Completes record @p slot (a primary slot), whose ticket the torn txn X
 * of @p tn still holds (so no survivor writes it): copies the image
 * (version, value, then the header; never the lock words) of a replica
 * that has X's version to every replica that lacks it. None has it: X did
 * not write it (a read lock) if a replica is on a reached MN, else it is
 * lost (tn->lost). @p copy false: a ticket given back already (by an
 * earlier attempt of this recovery, which failed): only counted, so a
 * retry reaches the same verdict.
 * @return 0 or -errno of a WR.
 */
static int
rec_forward(struct dtxn_coord *c, struct dtxn_recovery *rec, dtxn_raddr_t slot,
	    struct rec_torn *tn, char *buf, bool copy)
{
	const struct dtxn_catalog *cat = &c->worker->db->cat;
	const struct dtxn_table *t;
	struct dtxn_batch b;
	bool on_reached = false;
	int src = -1, rc;
	uint32_t ss;

	dtxn_batch_init(&b, c);
	dtxn_batch_read(&b, slot, buf, sizeof(struct dtxn_slot_hdr), true);
	rc = dtxn_recovery_run(rec, &b);
	if (rc != 0)
		return rc;
	t = rec_table_of(cat, slot, ((const struct dtxn_slot_hdr *)(const void *)buf)->table_id);
	if (t == NULL) {
		tn->lost++; /* no table holds it: nothing says where its replicas are */
		return 0;
	}
	ss = t->slot_size;
	rc = dtxn_recovery_read_replicas(c, rec, t, slot, buf);
	if (rc != 0)
		return rc;
	for (uint16_t r = 0; r < t->n_replicas; r++) {
		const uint16_t mn = DTXN_RADDR_MN(dtxn_store_replica_raddr(t, r, slot));

		if (mn < DTXN_MASK_NODES && (tn->reached & (UINT64_C(1) << mn)))
			on_reached = true;
		if (src < 0 && ((const struct scythe_slot *)(const void *)(buf + r * ss))->version == tn->x)
			src = r;
	}
	if (src < 0) {
		if (!on_reached)
			tn->lost++;
		return 0;
	}
	tn->fwd++;
	for (uint16_t r = 0; r < t->n_replicas && copy; r++) {
		const dtxn_raddr_t ra = dtxn_store_replica_raddr(t, r, slot);
		const char *img = buf + src * ss;

		if (((const struct scythe_slot *)(const void *)(buf + r * ss))->version == tn->x)
			continue;
		dtxn_batch_init(&b, c);
		dtxn_batch_write(&b, ra + SCYTHE_VERSION_OFF, img + SCYTHE_VERSION_OFF,
				 ss - SCYTHE_VERSION_OFF, true);
		/* the header last, as the write-back does */
		dtxn_batch_write(&b, ra, img, sizeof(struct dtxn_slot_hdr), true);
		rc = dtxn_recovery_run(rec, &b);
		if (rc != 0)
			return rc;
	}
	return 0;
}

/* The last txn rec_torn_verdict() reported beyond repair in this process:
 * its ERR once, not again at each retry of the recovery (each lease poll). */
static uint64_t rec_reported;

/*
 * The verdict on each torn write-back: every record its txn held completed
 * (or only read-locked), rolled forward and counted committed; else beyond
 * repair: one ERR line naming the txn (DEBUG when a retry reaches the same
 * verdict). @return 0 or -EIO.
 */
static int
rec_torn_verdict(struct dtxn_recovery *rec, const struct rec_torn *tn, uint32_t n)
{
	int rc = 0;

	for (uint32_t i = 0; i < n; i++) {
		rec->txns_seen++;
		if (tn[i].lost == 0) {
			rec->rolled_forward++;
			dtxn_recovery_note_visible(rec, tn[i].x);
			SCYTHE_LOG(INFO, "recovery: txn %" PRIx64 " rolled forward: %" PRIu32
				   " held record(s) completed from the MNs its write-back reached",
				   tn[i].x, tn[i].fwd);
			continue;
		}
		if (__atomic_exchange_n(&rec_reported, tn[i].x, __ATOMIC_RELAXED) == tn[i].x) {
			SCYTHE_LOG(DEBUG, "recovery: txn %" PRIx64 " still beyond repair (retry)",
				   tn[i].x);
			rc = -EIO;
			continue;
		}
		SCYTHE_LOG(ERR, "recovery: txn %" PRIx64 " of dead coordinator %" PRIu32
			   " died between the doorbells of its write-back: landed on MNs 0x%" PRIx64
			   ", never sent to MNs 0x%" PRIx64 "; %" PRIu32 " record(s) it held have no"
			   " replica on a reached MN, their new images were only on the dead CN"
			   " (%" PRIu32 " completed); only a replica of every table on every MN"
			   " (--replicas = --mn) repairs it (doc/guides/scythe.md, Recovery)",
			   tn[i].x, tn[i].gid, tn[i].reached, tn[i].missed, tn[i].lost, tn[i].fwd);
		rc = -EIO;
	}
	return rc;
}

/*
 * READs the ticket tables of every dead coordinator; fills @p tk, returns
 * the count or -errno; adds each torn write-back to @p tn (room for every
 * coordinator), their count in *@p n_torn.
 */
static int
rec_tables(struct dtxn_coord *c, struct dtxn_recovery *rec, struct rec_ticket **tkp,
	   struct rec_torn *tn, uint32_t *n_torn)
{
	const struct dtxn_catalog *cat = &c->worker->db->cat;
	const uint32_t n_coords = c->worker->db->conf.n_coords;
	uint32_t n_gid = 0, cap = 0, n = 0;
	struct scythe_ticket_tab *hdr;
	struct rec_ticket *tk = NULL;
	struct dtxn_batch b;
	uint32_t *gids;
	char *ents;
	int rc;

	gids = dtxn_recovery_alloc(c, sizeof(*gids) * n_coords, false);
	hdr = dtxn_recovery_alloc(c, sizeof(*hdr) * n_coords * cat->n_mn, false);
	ents = dtxn_recovery_alloc(c, cat->log_bytes, false);
	if (gids == NULL || hdr == NULL || ents == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	for (uint32_t g = 0; g < n_coords; g++)
		if (dtxn_recovery_gid_dead(rec, cat->n_mn, g))
			gids[n_gid++] = g;
	dtxn_batch_init(&b, c);
	for (uint32_t i = 0; i < n_gid; i++)
		for (uint16_t mn = 0; mn < cat->n_mn; mn++)
			dtxn_batch_read(&b, dtxn_store_log_raddr(cat, gids[i], mn),
					&hdr[i * cat->n_mn + mn], sizeof(*hdr), true);
	rc = dtxn_recovery_run(rec, &b);
	for (uint32_t i = 0; i < n_gid * cat->n_mn && rc == 0; i++) {
		const uint32_t g = gids[i / cat->n_mn];
		const uint16_t mn = (uint16_t)(i % cat->n_mn);
		uint32_t k = hdr[i].n, torn = 0;

		if (mn == 0 && rec_wb_torn(g, &hdr[i], cat->n_mn, &tn[*n_torn]))
			(*n_torn)++;
		if (*n_torn != 0 && tn[*n_torn - 1].gid == g)
			torn = *n_torn;

		if (hdr[i].gid != g + 1 || k == 0)
			continue;
		k = RTE_MIN(k, (uint32_t)((cat->log_bytes - sizeof(*hdr)) / sizeof(hdr->ent[0])));
		dtxn_batch_init(&b, c);
		dtxn_batch_read(&b, dtxn_store_log_raddr(cat, g, mn) + sizeof(*hdr), ents,
				k * (uint32_t)sizeof(hdr->ent[0]), true);
		rc = dtxn_recovery_run(rec, &b);
		if (rc == 0 && n + k > cap) {
			struct rec_ticket *nt = dtxn_recovery_realloc(c, tk, sizeof(*tk) * (n + k) * 2);

			if (nt == NULL)
				rc = -ENOMEM;
			else
				tk = nt, cap = (n + k) * 2;
		}
		for (uint32_t e = 0; e < k && rc == 0; e++) {
			const struct scythe_ticket *t = (const void *)(ents + e * sizeof(*t));

			if (t->flags & SCYTHE_TICKET_F_CANCELLED)
				continue; /* the MN service gives it back (cancel.c) */
			memset(&tk[n], 0, sizeof(tk[n]));
			tk[n].slot = DTXN_RADDR(mn, t->off);
			tk[n].ticket = (uint16_t)t->ticket;
			tk[n].torn = torn;
			tk[n].gid = g;
			n++;
		}
	}
out:
	dtxn_recovery_free(c, ents);
	dtxn_recovery_free(c, hdr);
	dtxn_recovery_free(c, gids);
	if (rc != 0) {
		dtxn_recovery_free(c, tk);
		return rc;
	}
	*tkp = tk;
	return (int)n;
}

/*
 * Dead coordinator @p g still holds (or waits for) a ticket and its last
 * write-back was not torn: its open txn's decisive batch landed nowhere.
 * The write-back gives every ticket back in the chain to the ticket's MN,
 * a multi-MN one marks every MN (rec_wb_torn()), and a chain lands whole
 * or not at all, so a ticket still out means no chain was rung: the txn
 * is rolled back (its writes never left the CN), whatever its
 * coordinator's dtxn_txn.decided says. That flag is set before the first
 * doorbell (dtxn_batch_run_decide_early()), so a CN killed in between,
 * CPU only, left it set with nothing sent (--debug-decide-gap). Its id
 * is not in the table: the verdict names the coordinator's open txn.
 */
static void
rec_undone_open(struct dtxn_recovery *rec, uint32_t g)
{
	if (!dtxn_recovery_note_undone_open(rec, g))
		return;
	SCYTHE_LOG(INFO, "recovery: the open txn of dead coordinator %" PRIu32
		   " still holds its tickets, nothing of its write-back landed: rolled back", g);
	rec->txns_seen++;
	rec->rolled_back++; /* discarded: nothing reached the records */
}

/*
 * Serves every ticket of @p tk still in its queue, in turn; one of a torn
 * write-back (@p tn) is completed first (rec_forward(), scratch @p buf).
 * @return 0 or -errno.
 */
static int
rec_serve(struct dtxn_coord *c, struct dtxn_recovery *rec, struct dtxn_recovery_step *st,
	  struct rec_ticket *tk, uint32_t n, struct rec_torn *tn, char *buf)
{
	for (unsigned round = 0; n != 0; round++) {
		struct dtxn_batch b;
		uint32_t left = 0;
		int rc;

		if (round == RECOVER_ROUNDS_MAX)
			return -EIO; /* a queue that never moved */
		if (round != 0)
			dtxn_co_sleep_until_lc(dtxn_coord_co(c), dtxn_now_ns() + RECOVER_WAIT_NS);
		dtxn_batch_init(&b, c);
		for (uint32_t i = 0; i < n; i++)
			dtxn_batch_read(&b, tk[i].slot + SCYTHE_LOWER_OFF, tk[i].meta,
					sizeof(tk[i].meta), true);
		rc = dtxn_recovery_run(rec, &b);
		if (rc != 0)
			return rc;
		for (uint32_t i = 0; i < n && rc == 0; i++) {
			uint16_t lower = (uint16_t)tk[i].meta[0], upper = (uint16_t)tk[i].meta[2];

			bool out = scythe_ticket_out(tk[i].ticket, lower, upper);

			/* still held, no torn write-back: nothing of the open txn's
			 * decisive batch landed (rec_undone_open()) */
			if (round == 0 && out && tk[i].torn == 0)
				rec_undone_open(rec, tk[i].gid);

			/* held by the torn txn, which nobody else writes meanwhile */
			if (tk[i].torn != 0 && (!out || upper == tk[i].ticket)) {
				rc = rec_forward(c, rec, tk[i].slot, &tn[tk[i].torn - 1], buf, out);
				tk[i].torn = 0;
			}
		}
		if (rc != 0)
			return rc;
		dtxn_batch_init(&b, c);
		for (uint32_t i = 0; i < n; i++) {
			uint16_t lower = (uint16_t)tk[i].meta[0], upper = (uint16_t)tk[i].meta[2];

			if (!scythe_ticket_out(tk[i].ticket, lower, upper))
				continue; /* given back */
			if (upper == tk[i].ticket) {
				/* its turn: the dead txn holds it; give it back */
				dtxn_batch_faa(&b, tk[i].slot + SCYTHE_UPPER_OFF, &tk[i].old, 1, true);
				st->work++;
				continue;
			}
			tk[left++] = tk[i]; /* holders ahead: next round */
		}
		rc = b.n_wr != 0 ? dtxn_recovery_run(rec, &b) : (dtxn_batch_done(&b), 0);
		if (rc != 0)
			return rc;
		n = left;
	}
	return 0;
}

/* rec_bucket()'s state. */
struct rec_bkt {
	struct dtxn_coord *c;
	int rc;
};

/*
 * Scan visitor of a bucket whose lock a dead txn holds (an insert or a
 * delete), before the lock goes: a torn write-back's inserts were
 * completed by their tickets (rec_forward()); the bucket's version, which
 * the write-back bumps on every replica, is copied from a backup its
 * chain reached to the primary it missed (dtxn_recovery_bucket_words()).
 */
static void
rec_bucket(struct dtxn_recovery *rec, const struct dtxn_table *t, const void *img,
	   dtxn_raddr_t raddr, uint64_t x, void *arg)
{
	struct rec_bkt *rb = arg;

	RTE_SET_USED(img);
	RTE_SET_USED(x);
	if (rb->rc == 0)
		rb->rc = dtxn_recovery_bucket_words(rb->c, rec, t, raddr);
}

int
scythe_recover(struct dtxn_coord *c, struct dtxn_recovery *rec)
{
	const uint32_t n_coords = c->worker->db->conf.n_coords;
	struct dtxn_recovery_step *st = dtxn_recovery_step_begin(rec, "tickets", "tickets");
	struct rec_torn *tn = dtxn_recovery_alloc(c, sizeof(*tn) * RTE_MAX(n_coords, 1u), true);
	char *buf = dtxn_recovery_alloc(c, rec_scratch(&c->worker->db->cat), false);
	struct rec_ticket *tk = NULL;
	uint32_t n_torn = 0;
	int rc = tn == NULL || buf == NULL ? -ENOMEM : rec_tables(c, rec, &tk, tn, &n_torn);

	if (rc >= 0)
		rc = rec_serve(c, rec, st, tk, (uint32_t)rc, tn, buf);
	dtxn_recovery_free(c, tk);
	rec->locks_released += st->work;
	dtxn_recovery_step_end(st);
	if (rc == 0) {
		struct rec_bkt rb = { .c = c };

		rc = dtxn_recovery_unlock_scan_buckets(c, rec, DTXN_RECOVERY_LOCK_NONE, UINT64_MAX,
						       NULL, rec_bucket, &rb);
		if (rc == 0)
			rc = rb.rc;
	}
	/* locks given back (survivors go on) whatever the verdict */
	if (rc == 0)
		rc = rec_torn_verdict(rec, tn, n_torn);
	dtxn_recovery_free(c, buf);
	dtxn_recovery_free(c, tn);
	return rc;
}
