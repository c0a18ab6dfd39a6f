/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Lotus: lock-rebuild-free CN crash recovery (paper §6; doc/guides/lotus.md,
 * "Recovery"), run by a surviving coordinator for a dead CN, in four steps:
 *
 * 1. "fence": the dead CN's shards are marked moving (requests for them
 *    abort at once, §6) and the CN dead (lotus_shared.dead_mask), with
 *    every other CN known dead at once (struct dtxn_recovery.dead_mask:
 *    the survivors' acks must not wait for a dead CN's workers): every
 *    survivor worker's poller (lotus_recover_poll()) tells its rpc the CN
 *    is down (calls waiting for it end now instead of timing out).
 * 2. "logs": each dead coordinator's newest commit log record (fully
 *    written iff its last word is its txn id): a txn whose new cells are
 *    visible on some replica committed and is finished (its T_commit
 *    written to the replicas still INVISIBLE); one whose cells are all
 *    INVISIBLE is aborted (the cells become invalid, as a failed commit
 *    leaves them). A cell is the txn's if its record names the txn as
 *    writer.
 * 3. "release": waits until every survivor worker has done step 1's
 *    cleanup and none of its txns holds a lock the dead CN granted (they
 *    finish or abort on their own: a call to the dead CN now fails), so
 *    that no lock the dead table held is still relied on; then marks the
 *    dead CN's logs applied (lotus_route.logs_done) and every survivor's
 *    poller releases the locks the dead CN's txns hold in its lock state,
 *    found by their holder's CN id (§4.1's lock state: idempotent, by
 *    CN). Only now: released at the fence, a record a dead txn had left
 *    visible on one replica and INVISIBLE on another could be locked and
 *    overwritten by a survivor from the older version before step 2
 *    finished the dead txn, losing its write. Its work: the locks the
 *    survivors released.
 * 4. "rehome": the dead CN's shards go to the survivors, round robin, with
 *    empty lock state: the lost lock table is not rebuilt.
 * Idempotent: a second run finds the fence set, the cells fixed, nothing
 * to release and no shard of the dead CN left.
 *
 * Rejoin (lotus_recover_rejoin()): a new incarnation of a recovered CN
 * clears its bit in dead_mask and logs_done, so that a later recovery of
 * another CN never releases the locks the rejoined CN's txns hold, and a
 * second death of it is fenced, logged and released again. Its shards stay
 * with the survivors (resharding may hand it some later).
 */
#include <errno.h>
#include <string.h>


#include "lotus_private.h"

/** Pause of the recovering coordinator while the survivors clean up, ns. */
#define RECOVER_PAUSE_NS 10000
/** Metrics mailbox at the end of each log region (commit.c, shard.c). */
#define RECOVER_MAILBOX 64

/* The commit log's layout (commit.c). */
struct rlog_hdr {
	uint64_t txn;
	uint16_t cn;
	uint16_t n;
	uint32_t bytes;
};

struct rlog_ent {
	uint32_t table;
	int32_t cell;
	uint64_t key;
	uint64_t slot;
};

/* ------------------------------------------------------------------ */
/* Survivors: the poller                                              */
/* ------------------------------------------------------------------ */

/* Releases every lock a dead CN holds in @p lw's lock state; @return how many. */
static unsigned
poll_release(struct lotus_worker *lw, uint64_t dead)
{
	struct lotus_ls_key keys[64];
	const void *k;
	uint32_t it = 0;
	unsigned n = 0, total = 0;
	int pos;

	do {
		n = 0;
		it = 0;
		while (n < RTE_DIM(keys) && (pos = lotus_kmap_iterate(&lw->ls.h, &it, &k)) >= 0) {
			if (((dead >> lw->ls.vals[pos].cn) & 1))
				memcpy(&keys[n++], k, sizeof(keys[0]));
		}
		for (unsigned i = 0; i < n; i++) {
			struct lotus_lk lk = { .table = keys[i].table, .key = keys[i].key };

			lotus_lock_release(lw->cn, &lw->ls, &lk, keys[i].txn);
		}
		total += n;
	} while (n == RTE_DIM(keys));
	return total;
}

/* Tells @p lw's rpc that every CN of @p dead is down (@p down) or every other one up. */
static void
poll_peers(const struct lotus_shared *sh, struct lotus_worker *lw, uint64_t dead, bool down)
{
	for (uint16_t node = sh->n_mn; node < sh->n_mn + sh->n_cn; node++) {
		if (node == lw->cn->node || (node < 64 && ((dead >> node) & 1)) != down)
			continue;
		if (down)
			(void)dtxn_rpc_peer_down_lc(lw->rpc, node);
		else
			(void)dtxn_rpc_peer_up_lc(lw->rpc, node);
	}
}

void
lotus_recover_worker_start(struct lotus_shared *sh, struct lotus_worker *lw)
{
	lw->seen_gen = __atomic_load_n(&sh->rt->dead_gen, __ATOMIC_SEQ_CST);
	lw->seen_rel = __atomic_load_n(&sh->rt->rel_gen, __ATOMIC_SEQ_CST);
	lw->seen_up = __atomic_load_n(&sh->rt->up_gen, __ATOMIC_SEQ_CST);
	poll_peers(sh, lw, __atomic_load_n(&sh->rt->dead_mask, __ATOMIC_SEQ_CST), true);
}

void
lotus_recover_rejoin(struct lotus_shared *sh, const struct lotus_cn *cn)
{
	/* a CN past node 63 is never in the masks (--fault names none) */
	const uint64_t bit = cn->node < 64 ? UINT64_C(1) << cn->node : 0;

	/* its dead incarnation's workers acked nothing since its fence: not counted */
	__atomic_store_n(&sh->rt->n_workers[cn->idx], 0, __ATOMIC_SEQ_CST);
	__atomic_fetch_and(&sh->rt->logs_done, ~bit, __ATOMIC_SEQ_CST);
	__atomic_fetch_and(&sh->rt->dead_mask, ~bit, __ATOMIC_SEQ_CST);
	__atomic_fetch_add(&sh->rt->up_gen, 1, __ATOMIC_SEQ_CST);
	LOTUS_LOG(INFO, "cn%u rejoined: live again for the routing layer, owning no shard", cn->idx);
}

unsigned
lotus_recover_poll(void *arg)
{
	struct dtxn_worker *w = arg;
	struct lotus_worker *lw = w->cc_priv;
	struct lotus_shared *sh = lotus_shared_of(w->db);
	uint32_t gen = __atomic_load_n(&sh->rt->dead_gen, __ATOMIC_ACQUIRE);
	uint32_t rgen = __atomic_load_n(&sh->rt->rel_gen, __ATOMIC_ACQUIRE);
	uint32_t ugen = __atomic_load_n(&sh->rt->up_gen, __ATOMIC_ACQUIRE);
	uint64_t dead, done;

	if (gen == lw->seen_gen && rgen == lw->seen_rel && ugen == lw->seen_up)
		return 0;
	dead = __atomic_load_n(&sh->rt->dead_mask, __ATOMIC_ACQUIRE);
	if (gen != lw->seen_gen) {
		/* first the calls waiting for a dead CN end: their txns abort and release */
		poll_peers(sh, lw, dead, true);
		for (uint16_t node = sh->n_mn; node < sh->n_mn + sh->n_cn; node++)
			if (node < 64 && ((dead >> node) & 1) && lw->held_from[node] != 0)
				return 0; /* a txn still relies on a lock the dead CN granted */
		lw->seen_gen = gen;
		__atomic_fetch_add(&sh->rt->dead_acks, 1, __ATOMIC_RELEASE);
	}
	if (rgen != lw->seen_rel) {
		/* only the locks of dead CNs whose txns the logs step finished */
		done = __atomic_load_n(&sh->rt->logs_done, __ATOMIC_ACQUIRE);
		__atomic_fetch_add(&sh->rt->dead_released, poll_release(lw, dead & done),
				   __ATOMIC_RELAXED);
		lw->seen_rel = rgen;
		__atomic_fetch_add(&sh->rt->rel_acks, 1, __ATOMIC_RELEASE);
	}
	if (ugen != lw->seen_up) {
		/* a CN rejoined: post to it again (a dead one stays down) */
		poll_peers(sh, lw, dead, false);
		lw->seen_up = ugen;
	}
	return 1;
}

/* ------------------------------------------------------------------ */
/* The recovering coordinator                                         */
/* ------------------------------------------------------------------ */

/* Fences every CN of @p dead (fabric node bits): all at once, so that no survivor waits for a dead one. */
static void
recover_fence(struct lotus_shared *sh, uint64_t dead)
{
	for (unsigned s = 0; s < LOTUS_SHARDS; s++) {
		uint16_t o = lotus_shard_owner(sh, (uint16_t)s);

		if ((dead >> (sh->n_mn + o)) & 1)
			__atomic_store_n(&sh->rt->shard_owner[s], o | LOTUS_SHARD_MOVING, __ATOMIC_SEQ_CST);
	}
	__atomic_fetch_or(&sh->rt->dead_mask, dead, __ATOMIC_SEQ_CST);
	__atomic_store_n(&sh->rt->dead_acks, 0, __ATOMIC_SEQ_CST);
	__atomic_fetch_add(&sh->rt->dead_gen, 1, __ATOMIC_SEQ_CST);
}

/* The newest fully written record of the log region copy @p log, or NULL. */
static const struct rlog_hdr *
log_latest(const char *log, uint64_t room, uint32_t gid)
{
	const struct rlog_hdr *best = NULL;
	uint64_t off = 0, last = 0;

	while (off + sizeof(struct rlog_hdr) + 8 <= room) {
		const struct rlog_hdr *h = (const void *)(log + off);
		uint64_t tail;

		if (h->txn <= last || dtxn_txn_id_gid(h->txn) != gid || h->n == 0 ||
		    h->bytes % 64 != 0 || h->bytes > room - off ||
		    h->bytes < sizeof(*h) + (uint64_t)h->n * sizeof(struct rlog_ent) + 8)
			break;
		memcpy(&tail, log + off + h->bytes - 8, 8);
		if (tail != h->txn)
			break;
		best = h;
		last = h->txn;
		off += h->bytes;
	}
	return best;
}

/* Whether record head @p head (16 B READ) names txn @p x as its writer. */
static bool
head_mine(const uint8_t *head, uint64_t x)
{
	uint64_t writer;

	memcpy(&writer, head + 1, 8); /* after the line's cacheline version */
	return writer == x;
}

/*
 * Finishes or aborts the txn of record @p h (step 2). A replica's cell
 * counts as the txn's only if the record it points to on that replica
 * names the txn as writer: a CN killed while it posted its first batch,
 * one QP after another, wrote the new cell on some replicas only, and a
 * replica it never reached keeps an older version in that cell, visible,
 * whose timestamp must not be taken for T_commit (it was: the "finished"
 * txn then sat below the row's newest version, counted as committed and
 * never read, tcl-cluster's Lotus kill rows under load).
 */
static int
log_apply(struct dtxn_coord *c, struct dtxn_recovery *rec, const struct rlog_hdr *h)
{
	const struct dtxn_catalog *cat = &c->worker->db->cat;
	const struct rlog_ent *e = (const void *)(h + 1);
	struct lotus_cell (*cell)[DTXN_MAX_REPLICAS];
	uint8_t (*head)[DTXN_MAX_REPLICAS][16];
	struct dtxn_slot_hdr *sh; /* primary slot headers: the records' aux areas */
	uint64_t tc = 0;
	bool mine_any = false, invisible = false;
	struct dtxn_batch b;
	int rc;

	cell = dtxn_recovery_alloc(c, sizeof(*cell) * h->n, true);
	head = dtxn_recovery_alloc(c, sizeof(*head) * h->n, true);
	sh = dtxn_recovery_alloc(c, sizeof(*sh) * h->n, true);
	if (cell == NULL || head == NULL || sh == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	dtxn_batch_init(&b, c);
	for (uint16_t i = 0; i < h->n; i++) {
		const struct dtxn_table *t = dtxn_catalog_table(cat, e[i].table);

		if (t == NULL || e[i].cell < 0 || (uint32_t)e[i].cell >= lotus_vnum(t))
			continue;
		for (uint16_t r = 0; r < t->n_replicas; r++)
			dtxn_batch_read(&b, dtxn_store_replica_raddr(t, r, e[i].slot) + LOTUS_CVT_HDR +
						    (uint64_t)e[i].cell * LOTUS_CELL_SIZE,
					&cell[i][r], LOTUS_CELL_SIZE, true);
		dtxn_batch_read(&b, e[i].slot, &sh[i], sizeof(sh[i]), true);
	}
	rc = dtxn_recovery_run(rec, &b);
	if (rc != 0)
		goto out;
	/* whose cells are they: on each replica, the record the cell points to
	 * names its writer (its delta area's, if the dead txn took one: the
	 * Address came in the same WRITE as the cell) */
	dtxn_batch_init(&b, c);
	for (uint16_t i = 0; i < h->n; i++) {
		const struct dtxn_table *t = dtxn_catalog_table(cat, e[i].table);

		if (t == NULL || e[i].cell < 0 || (uint32_t)e[i].cell >= lotus_vnum(t))
			continue;
		for (uint16_t r = 0; r < t->n_replicas; r++) {
			/* 0: an insert that reached no replica, or no record: nothing of it */
			dtxn_raddr_t ra = lotus_rec_raddr_at(t, r, e[i].slot, sh[i].aux, &cell[i][r],
							     (unsigned)e[i].cell);

			if ((lotus_meta_flags(cell[i][r].meta) & LOTUS_CELL_VALID) && ra != 0)
				dtxn_batch_read(&b, ra, head[i][r], 16, true);
		}
	}
	rc = dtxn_recovery_run(rec, &b);
	if (rc != 0)
		goto out;
	for (uint16_t i = 0; i < h->n; i++) {
		const struct dtxn_table *t = dtxn_catalog_table(cat, e[i].table);

		for (uint16_t r = 0; t != NULL && r < t->n_replicas; r++) {
			uint64_t v = lotus_meta_ver(cell[i][r].meta);

			if (!head_mine(head[i][r], h->txn))
				continue;
			mine_any = true;
			if ((lotus_meta_flags(cell[i][r].meta) & LOTUS_CELL_VALID) &&
			    v != LOTUS_INVISIBLE && v != 0)
				tc = v;
			invisible |= v == LOTUS_INVISIBLE;
		}
	}
	if (tc != 0)
		dtxn_recovery_note_visible(rec, h->txn); /* committed: it stays */
	if (!mine_any || !invisible)
		goto out; /* done (or its cells were reused since): nothing to fix */
	dtxn_batch_init(&b, c);
	for (uint16_t i = 0; i < h->n; i++) {
		const struct dtxn_table *t = dtxn_catalog_table(cat, e[i].table);

		for (uint16_t r = 0; t != NULL && r < t->n_replicas; r++) {
			uint64_t m = cell[i][r].meta;

			if (!head_mine(head[i][r], h->txn) || lotus_meta_ver(m) != LOTUS_INVISIBLE)
				continue;
			/* finish: T_commit; abort: invalid, as a failed commit leaves it */
			cell[i][r].meta = tc != 0 ? lotus_meta(tc, lotus_meta_cv(m), lotus_meta_flags(m)) :
						    lotus_meta(0, lotus_meta_cv(m), 0);
			dtxn_batch_write(&b, dtxn_store_replica_raddr(t, r, e[i].slot) + LOTUS_CVT_HDR +
						     (uint64_t)e[i].cell * LOTUS_CELL_SIZE,
					 &cell[i][r].meta, 8, true);
		}
	}
	rc = dtxn_recovery_run(rec, &b);
	if (rc != 0)
		goto out;
	rec->txns_seen++;
	if (tc != 0) {
		rec->rolled_forward++;
	} else {
		/* its visible batch, if posted (decided), was refused: not committed */
		dtxn_recovery_note_undone(rec, h->txn);
		rec->rolled_back++;
	}
out:
	dtxn_recovery_free(c, sh);
	dtxn_recovery_free(c, head);
	dtxn_recovery_free(c, cell);
	return rc;
}

/* dtxn_recovery_logfmt.latest: log_latest() with its txn id. */
static const void *
logfmt_latest(const void *log, uint64_t room, uint32_t gid, uint64_t *txn_id)
{
	const struct rlog_hdr *h = log_latest(log, room, gid);

	*txn_id = h != NULL ? h->txn : 0;
	return h;
}

static int
logfmt_apply(struct dtxn_coord *c, struct dtxn_recovery *rec, const void *h, void *arg)
{
	RTE_SET_USED(arg);
	return log_apply(c, rec, h);
}

static int
recover_logs(struct dtxn_coord *c, struct dtxn_recovery *rec)
{
	const struct dtxn_recovery_logfmt f = {
		.step = "logs", .unit = "records", .latest = logfmt_latest, .apply = logfmt_apply,
		.room = (uint32_t)(c->worker->db->cat.log_bytes - RECOVER_MAILBOX),
	};

	return dtxn_recovery_chains_apply(c, rec, &f);
}

/* Waits until @p want workers counted in @p acks; -EINTR if @p c stops. */
static int
recover_wait_acks(struct dtxn_coord *c, const uint32_t *acks, uint32_t want)
{
	while (__atomic_load_n(acks, __ATOMIC_ACQUIRE) < want) {
		if (dtxn_coord_stopping(c))
			return -EINTR;
		dtxn_co_sleep_until_lc(dtxn_coord_co(c), dtxn_now_ns() + RECOVER_PAUSE_NS);
	}
	return 0;
}

/*
 * Step 3: every live worker acked the fence; then, the dead CN's logs
 * applied (step 2), every live worker releases its locks and acks that.
 */
static int
recover_release(struct dtxn_coord *c, struct dtxn_recovery *rec, struct lotus_shared *sh,
		uint64_t before)
{
	struct dtxn_recovery_step *st = dtxn_recovery_step_begin(rec, "release", "locks");
	uint32_t want = 0;
	int rc;

	for (unsigned i = 0; i < sh->n_cn; i++)
		if (!lotus_cn_dead(sh, i))
			want += __atomic_load_n(&sh->rt->n_workers[i], __ATOMIC_ACQUIRE);
	rc = recover_wait_acks(c, &sh->rt->dead_acks, want);
	if (rc == 0) {
		__atomic_fetch_or(&sh->rt->logs_done, UINT64_C(1) << rec->dead_cn, __ATOMIC_SEQ_CST);
		__atomic_store_n(&sh->rt->rel_acks, 0, __ATOMIC_SEQ_CST);
		__atomic_fetch_add(&sh->rt->rel_gen, 1, __ATOMIC_SEQ_CST);
		rc = recover_wait_acks(c, &sh->rt->rel_acks, want);
	}
	st->work = __atomic_load_n(&sh->rt->dead_released, __ATOMIC_ACQUIRE) - before;
	rec->locks_released += st->work;
	dtxn_recovery_step_end(st);
	return rc;
}

/* Step 4: the dead CN's shards to the survivors, round robin. */
static void
recover_rehome(struct dtxn_recovery *rec, struct lotus_shared *sh, uint16_t dead_idx)
{
	struct dtxn_recovery_step *st = dtxn_recovery_step_begin(rec, "rehome", "shards");
	uint16_t live[DTXN_MAX_NODES];
	unsigned n_live = 0, k = 0;

	for (unsigned i = 0; i < sh->n_cn; i++)
		if (!lotus_cn_dead(sh, i))
			live[n_live++] = (uint16_t)i;
	for (unsigned s = 0; s < LOTUS_SHARDS && n_live > 0; s++) {
		if (lotus_shard_owner(sh, (uint16_t)s) != dead_idx)
			continue;
		__atomic_store_n(&sh->rt->shard_owner[s], live[k++ % n_live], __ATOMIC_SEQ_CST);
		st->work++;
	}
	dtxn_recovery_step_end(st);
}

int
lotus_recover(struct dtxn_coord *c, struct dtxn_recovery *rec)
{
	struct lotus_shared *sh = lotus_shared_of(c->worker->db);
	const uint16_t dead_idx = (uint16_t)(rec->dead_cn - sh->n_mn);
	uint64_t released = __atomic_load_n(&sh->rt->dead_released, __ATOMIC_ACQUIRE);
	struct dtxn_recovery_step *st;
	int rc;

	/* first the timestamp service, if the dead CN hosted it (lib/tso) */
	rc = sh->tso_cn != NULL ? dtxn_tso_cn_take_over_lc(sh->tso_cn, c, rec->dead_cn, rec) : 0;
	if (rc < 0)
		return rc;
	st = dtxn_recovery_step_begin(rec, "fence", "shards");
	if (!lotus_cn_dead(sh, dead_idx))
		recover_fence(sh, rec->dead_mask | (UINT64_C(1) << rec->dead_cn));
	for (unsigned s = 0; s < LOTUS_SHARDS; s++)
		st->work += lotus_shard_owner(sh, (uint16_t)s) == dead_idx;
	dtxn_recovery_step_end(st);
	rc = recover_logs(c, rec);
	if (rc == 0 && sh->opts.locks == LOTUS_LOCKS_MN)
		rc = dtxn_recovery_unlock_scan(c, rec, DTXN_RECOVERY_LOCK_LAST, UINT64_MAX, NULL, NULL);
	else if (rc == 0 && sh->n_cn > 1)
		rc = recover_release(c, rec, sh, released);
	if (rc == 0)
		recover_rehome(rec, sh, dead_idx);
	return rc;
}
