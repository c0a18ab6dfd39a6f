/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Doorbell batches: WRs from the coordinator's pool, one chain per MN,
 * posted with one doorbell per QP and waited for together.
 *
 * The pool is a stack per coordinator: a batch takes WRs from the top and
 * dtxn_batch_done() gives them back when they are still on top; begin
 * empties it. The fabric copies WRs at post time, so a posted batch's WRs
 * may be reused as soon as dtxn_batch_post() returns.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <time.h>

#include <rte_cycles.h>

#include "txn_private.h"

void
dtxn_batch_init(struct dtxn_batch *b, struct dtxn_coord *c)
{
	b->coord = c;
	b->n_wr = 0;
	b->n_signaled = 0;
	b->mn_mask = 0;
	b->error = 0;
	b->n_mut = 0;
	b->sig_mask = 0;
	b->tail_sig = 0;
	memset(b->ops, 0, sizeof(b->ops));
	b->bytes = 0;
}

static struct dtxn_wr *
batch_wr(struct dtxn_batch *b, dtxn_raddr_t raddr, uint8_t opcode, uint32_t len, bool signaled)
{
	struct dtxn_coord *c = b->coord;
	struct txn_coord *tc = txn_coord_of(c);
	uint16_t mn = DTXN_RADDR_MN(raddr);
	struct dtxn_wr *wr;

	if (b->error != 0)
		return NULL;
	if (mn >= DTXN_MASK_NODES || c->worker->qp[mn] == NULL) {
		b->error = -EINVAL;
		return NULL;
	}
	if (tc->wrs_used >= c->n_wrs) {
		b->error = -ENOBUFS;
		return NULL;
	}
	if (b->n_wr == 0)
		b->first = tc->wrs_used;
	wr = &c->wrs[tc->wrs_used++];
	memset(wr, 0, sizeof(*wr));
	wr->opcode = opcode;
	wr->raddr = raddr;
	wr->len = len;
	if (!signaled) {
		wr->wr_id = (uintptr_t)c->co | TXN_WR_ID_UNSIGNALED;
		b->tail_sig &= ~(UINT64_C(1) << mn);
	} else if (tc->selective) {
		/* signaled at post if it ends its chain (batch_signal_tails()) */
		wr->wr_id = (uintptr_t)c->co | TXN_WR_ID_FAIL_ONLY;
		b->sig_mask |= UINT64_C(1) << mn;
		b->tail_sig |= UINT64_C(1) << mn;
	} else {
		wr->flags = DTXN_WR_F_SIGNALED;
		wr->wr_id = (uintptr_t)c->co;
		b->n_signaled++;
		b->sig_mask |= UINT64_C(1) << mn;
	}
	if ((b->mn_mask & (UINT64_C(1) << mn)) == 0)
		b->head[mn] = wr;
	else
		b->tail[mn]->next = wr;
	b->tail[mn] = wr;
	if (tc->lease_exempt)
		wr->flags |= DTXN_WR_F_LEASE_EXEMPT; /* the agent: renewals, recoveries */
	b->mn_mask |= UINT64_C(1) << mn;
	b->n_wr++;
	b->n_mut += opcode != DTXN_WR_READ;
	b->ops[opcode]++;
	b->bytes += len;
	return wr;
}

void
dtxn_batch_read(struct dtxn_batch *b, dtxn_raddr_t src, void *dst, uint32_t len,
		bool signaled)
{
	struct dtxn_wr *wr = batch_wr(b, src, DTXN_WR_READ, len, signaled);

	if (wr == NULL)
		return;
	wr->local = dst;
}

void
dtxn_batch_write(struct dtxn_batch *b, dtxn_raddr_t dst, const void *src, uint32_t len,
		 bool signaled)
{
	struct dtxn_wr *wr = batch_wr(b, dst, DTXN_WR_WRITE, len, signaled);

	if (wr == NULL)
		return;
	wr->local = (void *)(uintptr_t)src;
	if (len <= DTXN_WR_INLINE_MAX)
		wr->flags |= DTXN_WR_F_INLINE;
}

void
dtxn_batch_cas(struct dtxn_batch *b, dtxn_raddr_t dst, uint64_t *old, uint64_t compare,
	       uint64_t swap, bool signaled)
{
	struct dtxn_wr *wr = batch_wr(b, dst, DTXN_WR_CAS, 8, signaled);

	if (wr == NULL)
		return;
	wr->local = old;
	wr->compare_add = compare;
	wr->swap = swap;
}

void
dtxn_batch_masked_cas(struct dtxn_batch *b, dtxn_raddr_t dst, uint64_t *old, uint64_t compare,
		      uint64_t compare_mask, uint64_t swap, uint64_t swap_mask, bool signaled)
{
	struct dtxn_wr *wr = batch_wr(b, dst, DTXN_WR_MASKED_CAS, 8, signaled);

	if (wr == NULL)
		return;
	wr->local = old;
	wr->compare_add = compare;
	wr->compare_mask = compare_mask;
	wr->swap = swap;
	wr->swap_mask = swap_mask;
}

void
dtxn_batch_faa(struct dtxn_batch *b, dtxn_raddr_t dst, uint64_t *old, uint64_t add,
	       bool signaled)
{
	struct dtxn_wr *wr = batch_wr(b, dst, DTXN_WR_FAA, 8, signaled);

	if (wr == NULL)
		return;
	wr->local = old;
	wr->compare_add = add;
}

/* A chain's verbs, as dtxn_coord_verbs() counts them, into @p ops and @p bytes. */
static void
batch_chain_verbs(const struct dtxn_wr *wr, uint64_t *ops, uint64_t *bytes)
{
	for (; wr != NULL; wr = wr->next) {
		if (wr->flags & DTXN_WR_F_CONTROL)
			continue; /* a commit record: not the protocol's verb */
		ops[wr->opcode]++;
		*bytes += wr->len;
	}
}

/*
 * The post of the chain of the lowest MN in @p left (the MNs not posted
 * yet) was refused with @p rc: nothing more is posted; the completions
 * expected for the chains in @p left are given back with @p rc (their
 * coroutine sees the error), and the chains posted before count as verbs.
 */
static void
batch_post_refused(struct dtxn_batch *b, uint64_t left, int rc)
{
	struct dtxn_coord *c = b->coord;
	uint64_t mask;

	for (mask = left; mask != 0; mask &= mask - 1)
		for (const struct dtxn_wr *wr = b->head[__builtin_ctzll(mask)]; wr != NULL;
		     wr = wr->next)
			if (wr->flags & DTXN_WR_F_SIGNALED)
				dtxn_co_complete_lc(c->co, rc);
	for (mask = b->mn_mask & ~left; mask != 0; mask &= mask - 1)
		batch_chain_verbs(b->head[__builtin_ctzll(mask)], c->verbs, &c->verb_bytes);
}

/* dtxn_db_conf.debug_post_gap_ns (debug_decide_gap_ns): one multi-MN
 * (early-decided) post in this many of a coordinator is descheduled
 * between its chains (before its first) (a preemption is rare;
 * a gap in every post would slow the conflicting txns as much) */
#define POST_GAP_EVERY 8

/*
 * TEST AID dtxn_db_conf.debug_stall_ns: @p c is about to post a mutating
 * batch; if it is its transaction's second (the first landed) and the aid
 * is armed for its CN, its worker's OS thread sleeps, once: a worker
 * descheduled by the OS in the middle of a commit, its CN's heartbeat
 * agent (a coroutine of the same lcore) with it.
 */
static void
batch_debug_stall(struct dtxn_coord *c)
{
	struct dtxn_db *db = c->worker->db;
	struct dtxn_txn *t = c->txn;
	uint64_t ns = db->conf.debug_stall_ns;

	if (t == NULL || !t->open || txn_coord_of(c)->lease_exempt ||
	    ((db->conf.debug_stall_cns >> c->worker->cn_node) & 1) == 0)
		return;
	if (t->debug_mut_posts < UINT8_MAX)
		t->debug_mut_posts++;
	if (t->debug_mut_posts < 2 || !__atomic_load_n(&db->debug_stall_armed, __ATOMIC_ACQUIRE) ||
	    !__atomic_exchange_n(&db->debug_stall_armed, 0, __ATOMIC_ACQ_REL))
		return;
	TXN_LOG(NOTICE, "test aid: txn %#" PRIx64 " stalls its worker %" PRIu64
		" ms before its second mutating batch", t->id, ns / 1000000);
	/* the OS thread sleeps (not a yield: the agent must stall too) */
	rte_delay_us_sleep((unsigned int)RTE_MIN(ns / 1000, (uint64_t)UINT32_MAX));
}

/*
 * Signals what batch_post() posts. Every chain's last WR is signaled, so
 * that the QP's WRs are reclaimed in order. Selective signaling
 * (txn_coord.selective): the WRs the protocol asked to be signaled were
 * added unsignaled (TXN_WR_ID_FAIL_ONLY), and a chain that ends with one
 * is signaled by that last WR alone: its completion follows the others'
 * (RC order), which complete only if they fail. A chain with such WRs
 * that ends with a WR asked unsignaled (a commit record) gets them
 * signaled back, as without selective signaling.
 */
static void
batch_signal_tails(struct dtxn_batch *b)
{
	const uint64_t co = (uintptr_t)b->coord->co;
	uint64_t mask;

	for (mask = b->mn_mask & (b->tail_sig | ~b->sig_mask); mask != 0; mask &= mask - 1) {
		struct dtxn_wr *tail = b->tail[__builtin_ctzll(mask)];

		tail->flags |= DTXN_WR_F_SIGNALED;
		tail->wr_id = co;
		b->n_signaled++;
	}
	for (mask = b->sig_mask & ~b->tail_sig; mask != 0 && txn_coord_of(b->coord)->selective;
	     mask &= mask - 1)
		for (struct dtxn_wr *wr = b->head[__builtin_ctzll(mask)]; wr != NULL; wr = wr->next)
			if (wr->wr_id == (co | TXN_WR_ID_FAIL_ONLY)) {
				wr->flags |= DTXN_WR_F_SIGNALED;
				wr->wr_id = co;
				b->n_signaled++;
			}
	b->sig_mask |= b->mn_mask;
}

/* dtxn_batch_post(); @p early, if not NULL, is decided once the CPU that
 * builds the chains is spent, before the first doorbell (no yield between) */
static int
batch_post(struct dtxn_batch *b, struct dtxn_txn *early)
{
	struct dtxn_coord *c;
	uint64_t mask, gap = 0;

	if (b == NULL || b->coord == NULL)
		return -EINVAL;
	if (b->error != 0)
		return b->error;
	c = b->coord;
	if (b->n_mut != 0) {
		int rc;

		if (unlikely(c->worker->db->conf.debug_stall_ns != 0))
			batch_debug_stall(c); /* test aid */
		/* self-fencing: nothing that changes MN memory leaves without a lease */
		rc = txn_lease_hold(c);

		if (rc != 0)
			return b->error = rc;
	}
	/* virtual time: the CPU that builds the WRs and rings the doorbells is
	 * spent before they leave (no-op and no yield in real time) */
	dtxn_sched_charge_op(c->worker->sched, DTXN_CPU_WR, b->n_wr);
	dtxn_sched_charge_op(c->worker->sched, DTXN_CPU_DOORBELL,
			     (uint64_t)__builtin_popcountll(b->mn_mask));
	dtxn_co_settle_lc(c->co);
	if (unlikely(c->worker->db->conf.debug_post_gap_ns != 0) &&
	    (b->mn_mask & (b->mn_mask - 1)) != 0 && c->debug_posts++ % POST_GAP_EVERY == 0)
		gap = c->worker->db->conf.debug_post_gap_ns;
	if (early != NULL) { /* before any chain can take effect (release: before the doorbells) */
		__atomic_store_n(&early->decided, 1, __ATOMIC_RELEASE);
		if (unlikely(c->worker->db->conf.debug_decide_gap_ns != 0) &&
		    c->debug_decides++ % POST_GAP_EVERY == 0)
			/* test aid: descheduled after deciding, before the first doorbell */
			dtxn_co_sleep_until_lc(c->co, dtxn_now_ns() +
						      c->worker->db->conf.debug_decide_gap_ns);
	}
	batch_signal_tails(b);
	/* the completions of every chain; a refused post gives back those of
	 * its chain and of the ones after it (batch_post_refused()) */
	dtxn_co_expect_lc(c->co, b->n_signaled);
	for (mask = b->mn_mask; mask != 0; mask &= mask - 1) {
		unsigned mn = (unsigned)__builtin_ctzll(mask);
		int rc = dtxn_qp_post(c->worker->qp[mn], b->head[mn]);

		if (rc != 0) {
			batch_post_refused(b, mask, rc);
			return rc;
		}
		if (unlikely(gap != 0) && (mask & (mask - 1)) != 0)
			/* test aid: descheduled between two doorbells of one post */
			dtxn_co_sleep_until_lc(c->co, dtxn_now_ns() + gap);
	}
	for (unsigned k = 0; k < DTXN_WR_OP_MAX; k++) /* posted: dtxn_coord_verbs() */
		c->verbs[k] += b->ops[k];
	c->verb_bytes += b->bytes;
	return 0;
}

int
dtxn_batch_post(struct dtxn_batch *b)
{
	return batch_post(b, NULL);
}

/* dtxn_batch_run(); @p t, if not NULL, is decided once every chain is
 * posted, or with @p early before the first one is (a refused post:
 * not decided) */
static int
batch_run(struct dtxn_batch *b, struct dtxn_txn *t, bool early)
{
	int rc, wrc;

	rc = batch_post(b, early ? t : NULL);
	if (b == NULL || b->coord == NULL)
		return rc;
	if (t != NULL)
		t->decided = rc == 0;
	if (rc == b->error && rc != 0)
		return rc; /* nothing posted */
	wrc = dtxn_co_wait_timed_lc(b->coord->co, &b->coord->wait_ns[DTXN_WAIT_VERBS]);
	if (wrc != 0 && t != NULL)
		/* posted, but a WR failed (an RNIC refused it once the lease ran
		 * out): not all of it took effect; the recovery decides now
		 * (struct dtxn_recovery.visible, .undone) */
		t->decided = 0;
	if (wrc != 0 && b->n_mut != 0)
		/* refused by the RNICs because the lease ran out (fabric
		 * dtxn_fabric_set_lease())? the txn may be half applied: the CN
		 * fences itself and the coordinator parks (lease.c) */
		txn_lease_refused(b->coord);
	if (rc != 0)
		return rc;
	return wrc != 0 ? -EIO : 0;
}

int
dtxn_batch_run(struct dtxn_batch *b)
{
	return batch_run(b, NULL, false);
}

/*
 * The coordinator's commit record, if it has one, joins the decisive
 * batch: one more WRITE at the end of the chain to EVERY MN the batch
 * touches, into the coordinator's slot on that MN (lib/store's
 * dtxn_store_crec_raddr()); the settler (app/dtxn-app's ctl_fabric.c)
 * READs the slot on every MN and settles from the newest record.
 *
 * Why this is consistent when a CN dies with its decisive batch of txn X
 * posted but not delivered whole (UCX over TCP loses what it had not sent
 * yet; each MN's chain of one post lands whole or not at all, but across
 * MNs any subset may land):
 * - a chain that carries any of X's data to MN k carries X's record to
 *   MN k, so "some of X landed" implies "a record of X landed somewhere",
 *   and the settler sees X's record, or a newer one;
 * - a newer record (a larger txn id: a coordinator's ids only grow) is
 *   one of a txn that began after X's batch completed on every chain:
 *   its acc[] already holds X's share, as the coordinator counted it;
 * - with X's record the newest, X's share counts by the recovery's
 *   verdict on X (visible: rolled forward; undone: rolled back), which
 *   is what MN memory holds after the recovery;
 * - if no chain of X landed, nothing of X is in MN memory, the newest
 *   record is the previous txn's (which completed), and X's share is
 *   rightly left out.
 * With the record on one MN only, X's data could land on MN 1 and be
 * rolled forward while MN 0's chain (and X's record) was lost: the
 * counters then missed X's share. An empty batch touches no MN and
 * carries no record: nothing of it can land.
 */
void
txn_batch_commit_record(struct dtxn_batch *b, const struct dtxn_txn *t)
{
	struct dtxn_coord *c = b != NULL ? b->coord : NULL;
	const struct dtxn_catalog *cat;
	uint64_t mask;

	if (c == NULL || c->crec_fn == NULL || t == NULL || b->error != 0 || b->mn_mask == 0)
		return;
	cat = dtxn_db_catalog(c->worker->db);
	c->crec_fn(c->crec_arg, t, c->crec_buf);
	for (mask = b->mn_mask; mask != 0; mask &= mask - 1) {
		uint16_t mn = (uint16_t)__builtin_ctzll(mask);
		dtxn_raddr_t at = dtxn_store_crec_raddr(cat, mn, c->crec_slot);

		if (at == 0) {
			b->error = -EINVAL; /* an MN the catalog does not lay out */
			return;
		}
		/* one buffer for every chain: inline, copied at post */
		dtxn_batch_write(b, at, c->crec_buf, sizeof(c->crec_buf), false);
		if (b->error != 0)
			return;
		b->tail[mn]->flags |= DTXN_WR_F_CONTROL;
		b->ops[DTXN_WR_WRITE]--; /* not the protocol's verb */
		b->bytes -= sizeof(c->crec_buf);
	}
}

int
dtxn_coord_set_commit_record(struct dtxn_coord *c, uint32_t slot, dtxn_commit_record_fn fn,
			     void *arg)
{
	if (c == NULL)
		return -EINVAL;
	if (fn != NULL &&
	    (c->worker == NULL ||
	     dtxn_store_crec_raddr(dtxn_db_catalog(c->worker->db), 0, slot) == 0))
		return -EINVAL;
	c->crec_fn = fn;
	c->crec_arg = arg;
	c->crec_slot = slot;
	return 0;
}

int
dtxn_batch_run_decide(struct dtxn_batch *b, struct dtxn_txn *t)
{
	int rc;

	txn_batch_commit_record(b, t);
	rc = batch_run(b, t, false);

	dtxn_batch_done(b);
	return dtxn_batch_reason(rc);
}

int
dtxn_batch_run_decide_acked(struct dtxn_batch *b, struct dtxn_txn *t)
{
	int rc;

	if (b == NULL || b->coord == NULL || t == NULL ||
	    dtxn_fabric_posted_survives(b->coord->worker->db->fabric))
		return dtxn_batch_run_decide(b, t);
	txn_batch_commit_record(b, t);
	rc = batch_run(b, NULL, false);
	t->decided = rc == 0; /* every chain completed: it landed everywhere */
	dtxn_batch_done(b);
	return dtxn_batch_reason(rc);
}

int
dtxn_batch_run_decide_early(struct dtxn_batch *b, struct dtxn_txn *t)
{
	int rc;

	txn_batch_commit_record(b, t);
	rc = batch_run(b, t, true);

	dtxn_batch_done(b);
	return dtxn_batch_reason(rc);
}

void
dtxn_batch_done(struct dtxn_batch *b)
{
	struct txn_coord *tc;

	if (b == NULL || b->coord == NULL || b->n_wr == 0)
		return;
	tc = txn_coord_of(b->coord);
	if (b->first + b->n_wr == tc->wrs_used) /* still on top of the pool */
		tc->wrs_used = b->first;
	dtxn_batch_init(b, b->coord);
}
