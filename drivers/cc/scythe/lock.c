/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The CN side of the Takeout Lock (scythe.md §2): Lock(ts, mode) by RPC to
 * the record's MN, one message per MN for a whole lock set (RRPC batches
 * a transaction's requests per MN); a ticket not served at once waits
 * T_Hangout = (ticket - upper) x SRTT (Eq. 3) and then Polls upper with
 * one READ; Unlock is one FAA +1 on upper. SRTT is the moving average of
 * Eq. 2 per MN (per worker: its coordinators share the samples), fed by
 * the Lock round trips and the Polls.
 *
 * A ticket, once taken, must be given back, and only by its holder: a
 * ticket given back before it is served would hand the lock to the next
 * waiter while the holder still works. So a transaction that aborts with
 * queued tickets waits until they are served, then gives them back
 * (scythe_release()); the queue ahead is bounded by HotWatermark and
 * drains in timestamp order (no deadlock, §3.2). With cancel=1 it hands
 * them to their MNs instead (one Cancel round; cancel.c).
 */
#include <inttypes.h>
#include <string.h>

#include "scythe_private.h"

/** SRTT before the first sample, ns: one round trip of the cx5 model. */
#define LK_SRTT_INIT_NS 2000
/** Shortest Hangout, ns. */
#define LK_HANGOUT_MIN_NS UINT64_C(200)

static uint64_t
lk_srtt(const struct scythe_worker *sw, uint16_t mn)
{
	return sw->srtt_ns[mn] != 0 ? sw->srtt_ns[mn] : LK_SRTT_INIT_NS;
}

/* Eq. 2: T_rtt = alpha T_rtt + (1 - alpha) Current_T_rtt. */
static void
lk_srtt_sample(struct scythe_worker *sw, const struct scythe_opts *o, uint16_t mn,
	       uint64_t sample)
{
	uint64_t *s = &sw->srtt_ns[mn];

	*s = *s == 0 ? sample : (o->alpha_pct * *s + (100 - o->alpha_pct) * sample) / 100;
}

bool
scythe_lk_any(const struct dtxn_txn *t, uint8_t state)
{
	for (uint32_t i = 0; i < t->n_items; i++) {
		const struct scythe_item *si = scythe_item_of(&t->items[i]);

		if (si != NULL && si->lk == state)
			return true;
	}
	return false;
}

/*
 * The item other than @p i that holds, waits for, or (an earlier one) is
 * about to ask for the lock of @p i's record; -1 if none.
 */
static int
lk_owner(const struct dtxn_txn *t, uint32_t i)
{
	dtxn_raddr_t ra = t->items[i].slot_raddr;

	for (uint32_t j = 0; j < t->n_items; j++) {
		const struct scythe_item *sj = scythe_item_of(&t->items[j]);

		if (j == i || sj == NULL || t->items[j].slot_raddr != ra)
			continue;
		if (sj->lk == SCYTHE_LK_WAIT || sj->lk == SCYTHE_LK_HELD ||
		    (sj->lk == SCYTHE_LK_NEED && j < i))
			return (int)j;
	}
	return -1;
}

bool
scythe_holds(const struct dtxn_txn *t, uint32_t i)
{
	dtxn_raddr_t ra = t->items[i].slot_raddr;

	for (uint32_t j = 0; j < t->n_items; j++) {
		const struct scythe_item *sj = scythe_item_of(&t->items[j]);

		if (sj != NULL && sj->lk == SCYTHE_LK_HELD && t->items[j].slot_raddr == ra)
			return true;
	}
	return false;
}

void
scythe_lk_alias(struct dtxn_txn *t)
{
	for (uint32_t i = 0; i < t->n_items; i++) {
		struct scythe_item *si = scythe_item_of(&t->items[i]);
		int j;

		if (si == NULL || si->lk != SCYTHE_LK_NEED)
			continue;
		j = lk_owner(t, i);
		if (j >= 0) {
			si->lk = SCYTHE_LK_ALIAS;
			si->alias = (uint32_t)j;
		}
	}
}

/* One Lock or Cancel call: up to SCYTHE_LOCKS_PER_MSG requests to one MN. */
struct lk_call {
	uint32_t item[SCYTHE_LOCKS_PER_MSG];
	uint8_t req[SCYTHE_LOCKS_PER_MSG * sizeof(struct scythe_lock_req)] __rte_aligned(8);
	uint8_t resp[DTXN_RPC_RESP_MAX] __rte_aligned(8);
};

/* Writes item @p it's request of message type @p type at @p dst. */
static void
lk_fill(const struct dtxn_txn *t, const struct dtxn_item *it, uint8_t type, void *dst)
{
	const struct scythe_coord *sc = scythe_coord_of(t);
	const struct scythe_item *si = scythe_item_of(it);

	if (type == SCYTHE_RPC_CANCEL) {
		struct scythe_cancel_req q = {
			.off = DTXN_RADDR_OFF(it->slot_raddr), .ts = sc->ts, .gid = t->coord->gid,
			.ticket = si->ticket, .table_id = (uint8_t)it->table->def.id,
		};

		memcpy(dst, &q, sizeof(q));
	} else {
		struct scythe_lock_req q = {
			.off = DTXN_RADDR_OFF(it->slot_raddr), .ts = sc->ts,
			.table_id = (uint8_t)it->table->def.id, .mode = sc->mode,
			.flags = si->deferred ? SCYTHE_REQ_F_DEFERRED : 0,
			.gid = t->coord->gid,
		};

		memcpy(dst, &q, sizeof(q));
	}
}

/*
 * Builds the calls of message type @p type for every item in lock state
 * @p state, MN by MN. @return calls, or -1 (arena).
 */
static int
lk_build(struct dtxn_txn *t, uint8_t state, uint8_t type, struct dtxn_rpc_call **callsp,
	 struct lk_call **lcp)
{
	uint32_t per_mn[DTXN_MASK_NODES] = { 0 }; /* by MN id */
	struct dtxn_rpc_call *calls;
	struct lk_call *lc;
	unsigned n = 0, at[DTXN_MASK_NODES];

	for (uint32_t i = 0; i < t->n_items; i++) {
		const struct scythe_item *si = scythe_item_of(&t->items[i]);

		if (si != NULL && si->lk == state)
			per_mn[DTXN_RADDR_MN(t->items[i].slot_raddr)]++;
	}
	for (unsigned m = 0; m < DTXN_MASK_NODES; m++)
		n += (per_mn[m] + SCYTHE_LOCKS_PER_MSG - 1) / SCYTHE_LOCKS_PER_MSG;
	calls = dtxn_txn_alloc(t, sizeof(*calls) * n);
	lc = dtxn_txn_alloc(t, sizeof(*lc) * n);
	if (calls == NULL || lc == NULL)
		return -1;
	memset(calls, 0, sizeof(*calls) * n);
	n = 0;
	for (unsigned m = 0; m < DTXN_MASK_NODES; m++)
		at[m] = UINT32_MAX;
	for (uint32_t i = 0; i < t->n_items; i++) {
		struct dtxn_item *it = &t->items[i];
		struct scythe_item *si = scythe_item_of(it);
		uint16_t mn = DTXN_RADDR_MN(it->slot_raddr);
		struct dtxn_rpc_call *c;
		unsigned k;

		if (si == NULL || si->lk != state)
			continue;
		if (at[mn] == UINT32_MAX || calls[at[mn]].req_len == sizeof(lc->req)) {
			at[mn] = n++;
			calls[at[mn]].dst_node = mn;
			calls[at[mn]].type = type;
			calls[at[mn]].req = lc[at[mn]].req;
			calls[at[mn]].resp = lc[at[mn]].resp;
		}
		c = &calls[at[mn]];
		k = c->req_len / sizeof(struct scythe_lock_req);
		lc[at[mn]].item[k] = i;
		lk_fill(t, it, type, lc[at[mn]].req + c->req_len);
		c->req_len += (uint32_t)sizeof(struct scythe_lock_req);
	}
	*callsp = calls;
	*lcp = lc;
	return (int)n;
}

/* Takes the reply to one request of item @p si; DTXN_OK or the abort reason. */
static int
lk_reply(struct dtxn_txn *t, struct scythe_item *si, const struct scythe_lock_resp *r,
	 bool *defer)
{
	struct scythe_worker *sw = scythe_worker_of(t);

	switch (r->status) {
	case SCYTHE_LK_GRANTED:
		si->lk = SCYTHE_LK_HELD;
		si->ticket = r->ticket;
		si->lversion = r->version;
		return DTXN_OK;
	case SCYTHE_LK_QUEUED:
		si->lk = SCYTHE_LK_WAIT;
		si->ticket = r->ticket;
		si->upper = r->upper;
		sw->st.queued++;
		return DTXN_OK;
	case SCYTHE_LK_DEFER:
		si->lk = SCYTHE_LK_NEED;
		si->deferred = 1;
		*defer = true;
		sw->st.deferred++;
		return DTXN_OK;
	case SCYTHE_LK_REJ_COLD:
		scythe_coord_of(t)->hot_next = 1; /* §3.1: the retry runs HOT */
		/* fall through */
	case SCYTHE_LK_REJ_TS:
	case SCYTHE_LK_REJ_HOT:
		si->lk = SCYTHE_LK_NONE;
		sw->st.rejected++;
		return DTXN_ABORT(DTXN_ABORT_LOCK_CONFLICT);
	default:
		si->lk = SCYTHE_LK_NONE;
		SCYTHE_LOG(ERR, "txn %" PRIx64 ": the MN refused a lock request as malformed", t->id);
		return DTXN_ABORT(DTXN_ABORT_FABRIC);
	}
}

/* One Lock round: the requests of every SCYTHE_LK_NEED item. */
static int
lk_request(struct dtxn_txn *t, bool *defer)
{
	struct scythe_worker *sw = scythe_worker_of(t);
	const struct scythe_opts *o = scythe_opts_t(t);
	struct dtxn_rpc_call *calls;
	struct lk_call *lc;
	uint64_t t0, rtt;
	int n, reason = DTXN_OK;

	scythe_lk_alias(t);
	n = lk_build(t, SCYTHE_LK_NEED, SCYTHE_RPC_LOCK, &calls, &lc);

	if (n < 0)
		return DTXN_ABORT(DTXN_ABORT_TOO_LARGE);
	t0 = dtxn_now_ns();
	(void)scythe_lock_call_lc(scythe_coord_of(t), calls, (unsigned)n);
	rtt = dtxn_now_ns() - t0;
	for (int c = 0; c < n; c++) {
		unsigned cnt = calls[c].req_len / sizeof(struct scythe_lock_req);

		sw->st.lock_reqs += cnt;
		if (calls[c].status == 0 &&
		    calls[c].resp_len == cnt * sizeof(struct scythe_lock_resp))
			lk_srtt_sample(sw, o, calls[c].dst_node, rtt);
		for (unsigned k = 0; k < cnt; k++) {
			struct scythe_item *si = scythe_item_of(&t->items[lc[c].item[k]]);
			struct scythe_lock_resp r = { .status = SCYTHE_LK_BAD };
			unsigned tid = RTE_MIN(t->items[lc[c].item[k]].table->def.id,
					       SCYTHE_STAT_TABLES - 1);
			int rc;

			if (calls[c].status == 0 &&
			    calls[c].resp_len == cnt * sizeof(struct scythe_lock_resp))
				memcpy(&r, lc[c].resp + k * sizeof(r), sizeof(r));
			else if (calls[c].status != 0)
				r.status = UINT8_MAX; /* no reply: nothing was taken */
			rc = r.status == UINT8_MAX ? (si->lk = SCYTHE_LK_NONE, DTXN_ABORT(DTXN_ABORT_FABRIC))
						   : lk_reply(t, si, &r, defer);
			sw->st.locks_by_table[tid]++;
			if (si->lk == SCYTHE_LK_WAIT)
				sw->st.queued_by_table[tid]++;
			if (reason == DTXN_OK)
				reason = rc;
		}
	}
	return reason;
}

/* Hangout (Eq. 3) for the nearest waiting ticket, then one Poll READ of every waiting one. */
static int
lk_poll(struct dtxn_txn *t)
{
	struct scythe_worker *sw = scythe_worker_of(t);
	const struct scythe_opts *o = scythe_opts_t(t);
	uint64_t wait = UINT64_MAX, t0, rtt, polled = 0;
	struct dtxn_batch b;
	int rc;

	for (uint32_t i = 0; i < t->n_items; i++) {
		struct dtxn_item *it = &t->items[i];
		struct scythe_item *si = scythe_item_of(it);

		if (si != NULL && si->lk == SCYTHE_LK_WAIT) {
			uint64_t left = (uint16_t)(si->ticket - si->upper);

			wait = RTE_MIN(wait, left * lk_srtt(sw, DTXN_RADDR_MN(it->slot_raddr)));
		}
	}
	if (wait == UINT64_MAX)
		return DTXN_OK;
	dtxn_co_sleep_until_lc(t->coord->co, dtxn_now_ns() + RTE_MAX(wait, LK_HANGOUT_MIN_NS));
	dtxn_batch_init(&b, t->coord);
	for (uint32_t i = 0; i < t->n_items; i++) {
		struct dtxn_item *it = &t->items[i];
		struct scythe_item *si = scythe_item_of(it);

		if (si == NULL || si->lk != SCYTHE_LK_WAIT)
			continue;
		dtxn_batch_read(&b, it->slot_raddr + SCYTHE_UPPER_OFF, si->poll, sizeof(si->poll),
				true);
		polled |= UINT64_C(1) << (DTXN_RADDR_MN(it->slot_raddr) % 64);
		sw->st.polls++;
	}
	t0 = dtxn_now_ns();
	rc = dtxn_batch_run_reason(&b);
	if (rc != DTXN_OK)
		return rc;
	rtt = dtxn_now_ns() - t0;
	for (uint16_t mn = 0; mn < DTXN_MASK_NODES; mn++)
		if (polled & (UINT64_C(1) << mn))
			lk_srtt_sample(sw, o, mn, rtt);
	for (uint32_t i = 0; i < t->n_items; i++) {
		struct scythe_item *si = scythe_item_of(&t->items[i]);

		if (si == NULL || si->lk != SCYTHE_LK_WAIT)
			continue;
		si->upper = (uint16_t)si->poll[0];
		if (si->upper == si->ticket) {
			si->lk = SCYTHE_LK_HELD;
			si->lversion = si->poll[1];
		}
	}
	return DTXN_OK;
}

static int
lk_run(struct dtxn_txn *t)
{
	const struct scythe_opts *o = scythe_opts_t(t);

	if (o->cas_lock)
		return scythe_cas_lock_run(t);
	for (;;) {
		bool defer = false;
		int rc;

		if (scythe_lk_any(t, SCYTHE_LK_NEED)) {
			rc = lk_request(t, &defer);
			if (rc != DTXN_OK)
				return rc;
			if (defer) /* §3.2: the band wait, then ask again */
				dtxn_co_sleep_until_lc(t->coord->co,
						       dtxn_now_ns() + (uint64_t)o->band_us * 1000);
			continue;
		}
		if (!scythe_lk_any(t, SCYTHE_LK_WAIT))
			return DTXN_OK;
		rc = lk_poll(t);
		if (rc != DTXN_OK)
			return rc;
	}
}

int
scythe_lock_run(struct dtxn_txn *t)
{
	struct scythe_worker *sw = scythe_worker_of(t);
	uint64_t t0 = dtxn_now_ns();
	int rc = lk_run(t);

	sw->st.lock_wait_ns += dtxn_now_ns() - t0;
	return rc;
}

void
scythe_unlock_held(struct dtxn_txn *t, struct dtxn_batch *b)
{
	struct scythe_coord *sc = scythe_coord_of(t);
	bool cas = scythe_opts_t(t)->cas_lock != 0;

	for (uint32_t i = 0; i < t->n_items; i++) {
		struct dtxn_item *it = &t->items[i];
		struct scythe_item *si = scythe_item_of(it);

		if (si == NULL || si->lk != SCYTHE_LK_HELD)
			continue;
		/*
		 * Unlock: upper + 1, one FAA on the word only the NIC writes;
		 * the CAS lock: lower - 1 (1 -> 0), an atomic too, so that no
		 * plain write races the other CNs' CASes
		 */
		if (cas)
			dtxn_batch_faa(b, it->slot_raddr + SCYTHE_LOWER_OFF, &sc->sink, UINT64_MAX,
				       false);
		else
			dtxn_batch_faa(b, it->slot_raddr + SCYTHE_UPPER_OFF, &sc->sink, 1, false);
		si->lk = SCYTHE_LK_NONE;
	}
}

/*
 * cancel=1: hands every queued ticket of the txn to its MN (one Cancel
 * round, one message per MN); the tickets the MN took over are no longer
 * the txn's (cancel.c). Those it kept (a full table, no reply) stay queued.
 * @return how long waiting them out would have taken (Eq. 3: tickets
 *   ahead x SRTT, the longest), ns: the txn pauses that long, holding
 *   nothing, before it retries (its retry would meet the same queues).
 */
static uint64_t
lk_cancel(struct dtxn_txn *t)
{
	struct scythe_worker *sw = scythe_worker_of(t);
	struct dtxn_rpc_call *calls;
	struct lk_call *lc;
	uint64_t left = 0;
	int n;

	/* what waiting them out would have taken (Eq. 3): the pause before the retry */
	for (uint32_t i = 0; i < t->n_items; i++) {
		const struct dtxn_item *it = &t->items[i];
		const struct scythe_item *si = scythe_item_of(it);

		if (si != NULL && si->lk == SCYTHE_LK_WAIT)
			left = RTE_MAX(left, (uint16_t)(si->ticket - si->upper) *
						     lk_srtt(sw, DTXN_RADDR_MN(it->slot_raddr)));
	}
	n = lk_build(t, SCYTHE_LK_WAIT, SCYTHE_RPC_CANCEL, &calls, &lc);
	if (n <= 0)
		return 0;
	(void)scythe_lock_call_lc(scythe_coord_of(t), calls, (unsigned)n);
	for (int c = 0; c < n; c++) {
		unsigned cnt = calls[c].req_len / sizeof(struct scythe_cancel_req);

		if (calls[c].status != 0 || calls[c].resp_len != cnt * sizeof(struct scythe_lock_resp))
			continue; /* no answer: the tickets stay ours */
		for (unsigned k = 0; k < cnt; k++) {
			struct scythe_item *si = scythe_item_of(&t->items[lc[c].item[k]]);
			struct scythe_lock_resp r;

			memcpy(&r, lc[c].resp + k * sizeof(r), sizeof(r));
			if (r.status == SCYTHE_LK_KEPT)
				continue;
			if (r.status != SCYTHE_LK_CANCELLED)
				SCYTHE_LOG(ERR, "txn %" PRIx64 ": the MN found ticket %u not queued",
					   t->id, si->ticket);
			si->lk = SCYTHE_LK_NONE;
			sw->st.cancelled++;
		}
	}
	return left;
}

void
scythe_release(struct dtxn_txn *t)
{
	struct scythe_worker *sw = scythe_worker_of(t);
	struct dtxn_batch b;
	uint32_t waiting = 0;
	uint64_t t0 = dtxn_now_ns(), pause = 0;

	if (scythe_opts_t(t)->cancel && scythe_lk_any(t, SCYTHE_LK_WAIT))
		pause = lk_cancel(t);
	for (uint32_t i = 0; i < t->n_items; i++) {
		const struct scythe_item *si = scythe_item_of(&t->items[i]);

		waiting += si != NULL && si->lk == SCYTHE_LK_WAIT;
	}
	if (waiting != 0) {
		sw->st.release_waits++;
		sw->st.release_tickets += waiting;
	}
	/* queued tickets first become ours, then go back with the others */
	while (scythe_lk_any(t, SCYTHE_LK_WAIT))
		if (lk_poll(t) != DTXN_OK) {
			SCYTHE_LOG(ERR, "txn %" PRIx64 ": a Poll failed; queued tickets stay taken",
				   t->id);
			break;
		}
	sw->st.release_wait_ns += dtxn_now_ns() - t0;
	dtxn_batch_init(&b, t->coord);
	scythe_unlock_held(t, &b);
	dtxn_txn_unlock_held(t, &b);
	dtxn_batch_post_forget(&b, t, "lock release");
	if (pause != 0) /* cancel=1: the queues move on without us; we wait, holding nothing */
		dtxn_co_sleep_until_lc(t->coord->co, t0 + pause);
	for (uint32_t i = 0; i < t->n_items; i++) {
		struct scythe_item *si = scythe_item_of(&t->items[i]);

		if (si != NULL && (si->lk == SCYTHE_LK_NEED || si->lk == SCYTHE_LK_ALIAS))
			si->lk = SCYTHE_LK_NONE;
	}
}
