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
 * unlock FAAs go in one doorbell batch per QP, behind which nothing else
 * of the txn follows, so a posted write-back lands whole (RC order, the
 * RNIC executes what it was given) and commits (dtxn_txn.decided). A
 * txn that died before it posted its write-back changed no record.
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
};

/*
 * Whether dead coordinator @p g's last write-back was torn: a mark
 * (struct scythe_ticket_tab.wb_txn) names MNs whose own mark is older, so
 * its chain to them was never rung (ids of one coordinator only grow). Its
 * other chains landed and unlocked their records; no redo image is kept
 * anywhere, so nothing can complete it: logged (ERR), loud.
 * @p hdr: the tables of @p g, one per MN.
 */
static bool
rec_wb_torn(uint32_t g, const struct scythe_ticket_tab *hdr, uint16_t n_mn)
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
		SCYTHE_LOG(ERR, "recovery: txn %" PRIx64 " of dead coordinator %" PRIu32
			   " died between the doorbells of its write-back: landed on MNs 0x%"
			   PRIx64 ", never sent to MNs 0x%" PRIx64 "; Scythe keeps no redo image,"
			   " memory holds part of it (doc/guides/scythe.md, Recovery)", x, g,
			   hdr[mn].wb_mask & ~miss, miss);
		return true;
	}
	return false;
}

/*
 * READs the ticket tables of every dead coordinator; fills @p tk, returns
 * the count or -errno; sets @p torn if one's write-back was torn.
 */
static int
rec_tables(struct dtxn_coord *c, struct dtxn_recovery *rec, struct rec_ticket **tkp, bool *torn)
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
	for (uint32_t i = 0; i < n_gid && rc == 0; i++)
		*torn |= rec_wb_torn(gids[i], &hdr[i * cat->n_mn], cat->n_mn);
	for (uint32_t i = 0; i < n_gid * cat->n_mn && rc == 0; i++) {
		const uint32_t g = gids[i / cat->n_mn];
		const uint16_t mn = (uint16_t)(i % cat->n_mn);
		uint32_t k = hdr[i].n;

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

/* Serves every ticket of @p tk still in its queue, in turn; @return 0 or -errno. */
static int
rec_serve(struct dtxn_coord *c, struct dtxn_recovery *rec, struct dtxn_recovery_step *st,
	  struct rec_ticket *tk, uint32_t n)
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

int
scythe_recover(struct dtxn_coord *c, struct dtxn_recovery *rec)
{
	struct dtxn_recovery_step *st = dtxn_recovery_step_begin(rec, "tickets", "tickets");
	struct rec_ticket *tk = NULL;
	bool torn = false;
	int rc = rec_tables(c, rec, &tk, &torn);

	if (rc >= 0)
		rc = rec_serve(c, rec, st, tk, (uint32_t)rc);
	dtxn_recovery_free(c, tk);
	rec->locks_released += st->work;
	dtxn_recovery_step_end(st);
	if (rc != 0)
		return rc;
	rc = dtxn_recovery_unlock_scan(c, rec, DTXN_RECOVERY_LOCK_NONE, UINT64_MAX, NULL, NULL);
	/* locks given back (survivors go on), but the dead CN is not recovered */
	return rc == 0 && torn ? -EIO : rc;
}
