/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The lock step of Lotus's execution (paper §5.1 phase 1 step 1, §4.1
 * "remote locks"; doc/guides/lotus.md, "Protocol"): before any read, the
 * transaction locks its new items on the CNs that own their shards:
 *
 *   RW, delete item        write lock on (table, key)
 *   insert                 write lock on (table, key) and on its index
 *                          bucket (insert locking: "the index-bucket
 *                          address as a lock-table key")
 *   RO item, SR            read lock (SI: none, the read is a snapshot read)
 *   read-only txn          none
 *
 * Locks the coordinator's own CN owns are taken at once with CPU CAS
 * (Algorithm 1); the others go in one message per owner CN (split only
 * past DTXN_RPC_REQ_MAX), all CNs in parallel, one round trip. The owner
 * handles a message in its worker's CQ poller: Algorithm 1 per lock, in
 * order; at the first refusal it gives back the locks this message took
 * and says which one failed, so the requester only releases what other
 * messages (or earlier executes) took. NO_WAIT everywhere: any refusal
 * aborts the transaction.
 *
 * Releases: local at once; remote by an asynchronous message per CN
 * (the coordinator does not wait for the acknowledgement; lib/rpc resends
 * it if it is lost).
 *
 * An index bucket's lock is owned by the CN of the shard the bucket
 * index's low 12 bits name (the paper leaves it open): two inserts into
 * one bucket must meet on one CN whatever their keys' shards.
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <string.h>

#include "lotus_private.h"

/** Lock message: header, then ops. */
struct lk_msg_hdr {
	uint64_t txn;
	uint16_t cn;        /**< requester's CN node id */
	uint16_t n;
	uint32_t rsvd;
};

#define LK_OP_RELEASE 0
#define LK_OP_READ 1
#define LK_OP_WRITE 2

struct lk_op {
	uint32_t table;
	uint8_t op;         /**< LK_OP_* */
	uint8_t rsvd[3];
	uint64_t key;
};

#define LK_MAX_OPS ((DTXN_RPC_REQ_MAX - sizeof(struct lk_msg_hdr)) / sizeof(struct lk_op))
_Static_assert(LK_MAX_OPS <= DTXN_RPC_RESP_MAX, "one reply byte per op");

/** Reply byte of an op the handler did not reach (an earlier op failed). */
#define LK_NOT_TRIED 0xff

/* ------------------------------------------------------------------ */
/* Handlers (owner side, in the worker's CQ poller)                   */
/* ------------------------------------------------------------------ */

static void
lk_of(struct lotus_lk *lk, const struct lk_op *op)
{
	lk->table = op->table;
	lk->rsvd = 0;
	lk->key = op->key;
}

int
lotus_lk_msg_check(const void *req, uint32_t len, uint16_t src_node)
{
	const uint8_t *op;
	struct lk_msg_hdr h;

	if (req == NULL || len < sizeof(h))
		return -EBADMSG;
	memcpy(&h, req, sizeof(h));
	if (h.n > LK_MAX_OPS || len < sizeof(h) + (size_t)h.n * sizeof(struct lk_op) ||
	    h.cn != src_node)
		return -EBADMSG;
	op = (const uint8_t *)req + sizeof(h) + offsetof(struct lk_op, op);
	for (unsigned i = 0; i < h.n; i++, op += sizeof(struct lk_op))
		if (*op > LK_OP_WRITE)
			return -EBADMSG;
	return h.n;
}

static int
lk_handle(void *arg, uint16_t src_node, const void *req, uint32_t len, void *resp)
{
	struct dtxn_worker *w = arg;
	struct lotus_worker *lw = w->cc_priv;
	struct lk_msg_hdr h;
	const struct lk_op *ops;
	uint8_t *res = resp;
	bool fresh[LK_MAX_OPS];
	unsigned i, failed = UINT32_MAX;

	if (lotus_lk_msg_check(req, len, src_node) < 0)
		return -1;
	memcpy(&h, req, sizeof(h));
	ops = (const struct lk_op *)(const void *)((const uint8_t *)req + sizeof(h));
	for (i = 0; i < h.n; i++) {
		struct lotus_lk lk;
		enum lotus_lk_rc rc;

		lk_of(&lk, &ops[i]);
		fresh[i] = false;
		if (ops[i].op == LK_OP_RELEASE) {
			lotus_lock_release(lw->cn, &lw->ls, &lk, h.txn);
			res[i] = LOTUS_LK_OK;
			continue;
		}
		rc = lotus_lock_acquire(lw->cn, &lw->ls, &lk, ops[i].op == LK_OP_WRITE, h.cn, h.txn,
					&fresh[i]);
		res[i] = (uint8_t)rc;
		if (rc != LOTUS_LK_OK) {
			failed = i;
			break;
		}
	}
	if (failed != UINT32_MAX) {
		/* give back what this message took; the rest was not tried */
		for (i = 0; i < failed; i++) {
			struct lotus_lk lk;

			lk_of(&lk, &ops[i]);
			if (fresh[i])
				lotus_lock_release(lw->cn, &lw->ls, &lk, h.txn);
			res[i] = LK_NOT_TRIED;
		}
		for (i = failed + 1; i < h.n; i++)
			res[i] = LK_NOT_TRIED;
	}
	return (int)h.n;
}

static int
unlk_handle(void *arg, uint16_t src_node, const void *req, uint32_t len, void *resp)
{
	RTE_SET_USED(resp);
	(void)lk_handle(arg, src_node, req, len, resp);
	return 0; /* an acknowledgement */
}

int
lotus_lock_handlers(struct dtxn_worker *w)
{
	struct lotus_worker *lw = w->cc_priv;
	int rc;

	rc = dtxn_rpc_register(lw->rpc, LOTUS_RPC_LOCK, lk_handle, w);
	if (rc == 0)
		rc = dtxn_rpc_register(lw->rpc, LOTUS_RPC_UNLOCK, unlk_handle, w);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Requester side                                                     */
/* ------------------------------------------------------------------ */

/** One lock the txn asks for in this execute. */
struct lk_want {
	struct lotus_lk lk;
	uint32_t item;
	uint16_t node;       /**< owner CN */
	uint8_t op;          /**< LK_OP_READ / LK_OP_WRITE */
	uint8_t bucket;      /**< the item's bucket lock */
};

static uint16_t
lk_owner_node(const struct lotus_shared *sh, const struct lotus_lk *lk)
{
	return (uint16_t)(sh->n_mn + lotus_shard_owner(sh, lotus_lk_shard(lk)));
}

/*
 * The shard of @p lk is being handed over and its owner is dead (a
 * recovery's fence, recover.c): its requests abort at once (§6: "new
 * requests for the failed CN's locks abort immediately").
 */
static bool
lk_frozen(const struct lotus_shared *sh, const struct lotus_lk *lk)
{
	uint16_t o = __atomic_load_n(&sh->rt->shard_owner[lotus_lk_shard(lk)], __ATOMIC_ACQUIRE);

	return (o & LOTUS_SHARD_MOVING) && lotus_cn_dead(sh, o & ~LOTUS_SHARD_MOVING);
}

/* Another insert of this txn (before @p self) takes bucket @p b of the same table. */
static bool
lk_bucket_taken(const struct dtxn_txn *t, uint32_t self, uint32_t table, uint64_t b)
{
	for (uint32_t j = 0; j < self; j++) {
		const struct dtxn_item *o = &t->items[j];
		const struct lotus_item *om = lotus_item_of(o);

		if (o->kind == DTXN_ITEM_INSERT && om != NULL && om->loc.own_block &&
		    o->table->def.id == table && om->bkt == b)
			return true;
	}
	return false;
}

/* Marks want @p k held (a granted lock). */
static void
lk_mark(struct dtxn_txn *t, const struct lk_want *k)
{
	struct dtxn_item *it = &t->items[k->item];
	struct lotus_item *li = lotus_item_of(it);

	lotus_worker_of(t)->held_from[k->node]++;
	if (k->bucket) {
		it->flags |= DTXN_ITEM_F_BLOCKED;
		li->bowner = k->node;
	} else {
		it->flags |= DTXN_ITEM_F_LOCKED;
		li->owner = k->node;
	}
}

static int
lk_reason(uint8_t rc)
{
	switch (rc) {
	case LOTUS_LK_OK:
		return DTXN_OK;
	case LOTUS_LK_FULL:
	case LOTUS_LK_STATE:
		return DTXN_ABORT(DTXN_ABORT_TOO_LARGE);
	default:
		return DTXN_ABORT(DTXN_ABORT_LOCK_CONFLICT);
	}
}

/* The remote wants, one message per owner CN (and per LK_MAX_OPS ops). */
static int
lk_remote(struct dtxn_txn *t, struct lk_want *want, unsigned n)
{
	struct lotus_worker *lw = lotus_worker_of(t);
	struct lotus_coord *lc = t->coord->cc_priv;
	const uint16_t me = t->coord->worker->cn_node;
	struct dtxn_rpc_call *calls;
	uint8_t **bufs, **resps;
	unsigned *first, n_calls = 0, i, j;
	int reason = DTXN_OK;

	if (lw->rpc == NULL || lc->ep == NULL)
		return DTXN_ABORT(DTXN_ABORT_FABRIC);
	calls = dtxn_txn_alloc(t, sizeof(*calls) * n);
	bufs = dtxn_txn_alloc(t, sizeof(*bufs) * n);
	resps = dtxn_txn_alloc(t, sizeof(*resps) * n);
	first = dtxn_txn_alloc(t, sizeof(*first) * n);
	if (calls == NULL || bufs == NULL || resps == NULL || first == NULL)
		return DTXN_ABORT(DTXN_ABORT_TOO_LARGE);
	/* group: each want joins the open message of its node, or opens one */
	for (i = 0; i < n; i++) {
		struct lk_want *k = &want[i];
		struct lk_msg_hdr *h;
		struct lk_op *op;
		unsigned c;

		if (k->node == me)
			continue;
		for (c = 0; c < n_calls; c++) {
			h = (struct lk_msg_hdr *)(void *)bufs[c];
			if (calls[c].dst_node == k->node && h->n < LK_MAX_OPS)
				break;
		}
		if (c == n_calls) {
			bufs[c] = dtxn_txn_alloc(t, DTXN_RPC_REQ_MAX);
			resps[c] = dtxn_txn_alloc(t, DTXN_RPC_RESP_MAX);
			if (bufs[c] == NULL || resps[c] == NULL)
				return DTXN_ABORT(DTXN_ABORT_TOO_LARGE);
			h = (struct lk_msg_hdr *)(void *)bufs[c];
			memset(h, 0, sizeof(*h));
			h->txn = t->id;
			h->cn = me;
			memset(&calls[c], 0, sizeof(calls[c]));
			calls[c].dst_node = k->node;
			calls[c].type = LOTUS_RPC_LOCK;
			calls[c].req = bufs[c];
			calls[c].resp = resps[c];
			first[c] = i;
			n_calls++;
		}
		h = (struct lk_msg_hdr *)(void *)bufs[c];
		op = (struct lk_op *)(void *)(bufs[c] + sizeof(*h)) + h->n;
		memset(op, 0, sizeof(*op));
		op->table = k->lk.table;
		op->key = k->lk.key;
		op->op = k->op;
		h->n++;
		calls[c].req_len = (uint32_t)(sizeof(*h) + h->n * sizeof(*op));
	}
	if (n_calls == 0)
		return DTXN_OK;
	(void)dtxn_rpc_call_lc(lc->ep, calls, n_calls);
	/* results: walk each message's wants in the order they were packed */
	for (unsigned c = 0; c < n_calls; c++) {
		const struct lk_msg_hdr *h = (const struct lk_msg_hdr *)(const void *)bufs[c];
		unsigned k_op = 0;

		if (calls[c].status != 0) {
			/* no reply: the owner may hold some of them; count them held
			 * so that the abort releases them (releases are idempotent) */
			for (i = first[c]; i < n && k_op < h->n; i++) {
				if (want[i].node != calls[c].dst_node)
					continue;
				lk_mark(t, &want[i]);
				k_op++;
			}
			if (reason == DTXN_OK)
				reason = DTXN_ABORT(DTXN_ABORT_FABRIC);
			continue;
		}
		for (i = first[c], j = 0; i < n && j < h->n; i++) {
			uint8_t r;

			if (want[i].node != calls[c].dst_node)
				continue;
			/* the wants of this node before this message went in earlier ones */
			if (!(j < calls[c].resp_len))
				break;
			r = ((const uint8_t *)calls[c].resp)[j];
			j++;
			if (r == LOTUS_LK_OK) {
				lk_mark(t, &want[i]);
			} else if (r != LK_NOT_TRIED && reason == DTXN_OK) {
				reason = lk_reason(r);
			}
		}
		if (calls[c].resp_len < h->n && reason == DTXN_OK)
			reason = DTXN_ABORT(DTXN_ABORT_FABRIC);
	}
	return reason;
}

int
lotus_lock_items(struct dtxn_txn *t)
{
	struct lotus_shared *sh = lotus_shared_t(t);
	struct lotus_worker *lw = lotus_worker_of(t);
	const uint16_t me = t->coord->worker->cn_node;
	/* test aid (--debug-weaken skip-lock-check): SR without read locks,
	 * which the history checker must catch (test/tcl/lotus.test) */
	const bool sr = lotus_iso(t) == DTXN_ISO_SR &&
			!dtxn_txn_weakened(t, DTXN_DEBUG_SKIP_LOCK_CHECK);
	struct lk_want *want;
	unsigned n = 0, n_remote = 0, i;
	int reason = DTXN_OK;

	if (t->mode == DTXN_TXN_RO || lotus_mn_locks(t))
		return DTXN_OK; /* lock-free, or locks=mn: CAS with the CVT READ (mnlock.c) */
	want = dtxn_txn_alloc(t, sizeof(*want) * 2 * (t->n_items - t->n_fetched));
	if (want == NULL)
		return DTXN_ABORT(DTXN_ABORT_TOO_LARGE);
	for (uint32_t it_i = t->n_fetched; it_i < t->n_items; it_i++) {
		struct dtxn_item *it = &t->items[it_i];
		struct lotus_item *li = lotus_item_of(it);
		struct lk_want *k;

		if (it->kind == DTXN_ITEM_RO && !sr)
			continue; /* SI: snapshot read, no read lock (§5.2) */
		li->lock = it->kind == DTXN_ITEM_RO ? LOTUS_LOCK_READ : LOTUS_LOCK_WRITE;
		k = &want[n++];
		memset(k, 0, sizeof(*k));
		k->lk.table = it->table->def.id;
		k->lk.key = it->key;
		k->item = it_i;
		k->op = li->lock == LOTUS_LOCK_READ ? LK_OP_READ : LK_OP_WRITE;
		k->node = lk_owner_node(sh, &k->lk);
		if (lk_frozen(sh, &k->lk))
			return DTXN_ABORT(DTXN_ABORT_LOCK_CONFLICT);
		if (it->kind == DTXN_ITEM_INSERT) {
			li->bkt = dtxn_store_bucket_of(it->table, it->key) % it->table->n_buckets;
			li->loc.own_block = !lk_bucket_taken(t, it_i, it->table->def.id, li->bkt);
			if (li->loc.own_block) {
				k = &want[n++];
				memset(k, 0, sizeof(*k));
				k->lk.table = it->table->def.id | LOTUS_LK_BUCKET;
				k->lk.key = li->bkt;
				k->item = it_i;
				k->op = LK_OP_WRITE;
				k->bucket = 1;
				k->node = lk_owner_node(sh, &k->lk);
				if (lk_frozen(sh, &k->lk))
					return DTXN_ABORT(DTXN_ABORT_LOCK_CONFLICT);
			}
		}
	}
	/* local locks first: a conflict here saves the messages */
	for (i = 0; i < n && reason == DTXN_OK; i++) {
		enum lotus_lk_rc rc;
		bool fresh;

		if (want[i].node != me) {
			n_remote++;
			continue;
		}
		rc = lotus_lock_acquire(lw->cn, &lw->ls, &want[i].lk, want[i].op == LK_OP_WRITE,
					me, t->id, &fresh);
		if (rc == LOTUS_LK_OK)
			lk_mark(t, &want[i]);
		else
			reason = lk_reason((uint8_t)rc);
	}
	if (reason == DTXN_OK && n_remote != 0)
		reason = lk_remote(t, want, n);
	return reason;
}

/* ------------------------------------------------------------------ */
/* Release                                                            */
/* ------------------------------------------------------------------ */

/** Remote releases being gathered for one CN. */
struct rel_msg {
	uint16_t node;
	uint8_t buf[DTXN_RPC_REQ_MAX] __rte_aligned(8);
};

static void
rel_flush(struct dtxn_txn *t, struct rel_msg *m)
{
	struct lotus_coord *lc = t->coord->cc_priv;
	struct lk_msg_hdr *h = (struct lk_msg_hdr *)(void *)m->buf;

	if (h->n == 0)
		return;
	if (lc->ep == NULL ||
	    dtxn_rpc_send_lc(lc->ep, m->node, LOTUS_RPC_UNLOCK, m->buf,
			     (uint32_t)(sizeof(*h) + h->n * sizeof(struct lk_op))) != 0)
		LOTUS_LOG(WARNING, "txn %#" PRIx64 ": unlock message to node %u not sent", t->id,
			  m->node);
	h->n = 0;
}

static void
rel_add(struct dtxn_txn *t, struct rel_msg *msgs, unsigned *n_msgs, uint16_t node,
	const struct lotus_lk *lk)
{
	struct lotus_worker *lw = lotus_worker_of(t);
	struct lk_msg_hdr *h;
	struct lk_op *op;
	unsigned m;

	lw->held_from[node]--;
	if (lotus_cn_dead(lotus_shared_t(t), node - lotus_shared_t(t)->n_mn))
		return; /* the lock died with its CN's table (recover.c) */
	if (node == t->coord->worker->cn_node) {
		lotus_lock_release(lw->cn, &lw->ls, lk, t->id);
		return;
	}
	for (m = 0; m < *n_msgs; m++)
		if (msgs[m].node == node)
			break;
	if (m == *n_msgs) {
		msgs[m].node = node;
		h = (struct lk_msg_hdr *)(void *)msgs[m].buf;
		memset(h, 0, sizeof(*h));
		h->txn = t->id;
		h->cn = t->coord->worker->cn_node;
		(*n_msgs)++;
	}
	h = (struct lk_msg_hdr *)(void *)msgs[m].buf;
	if (h->n == LK_MAX_OPS)
		rel_flush(t, &msgs[m]);
	op = (struct lk_op *)(void *)(msgs[m].buf + sizeof(*h)) + h->n;
	memset(op, 0, sizeof(*op));
	op->table = lk->table;
	op->key = lk->key;
	op->op = LK_OP_RELEASE;
	h->n++;
}

void
lotus_release_all(struct dtxn_txn *t)
{
	struct lotus_shared *sh = lotus_shared_t(t);
	struct rel_msg *msgs = NULL;
	unsigned n_msgs = 0;

	if (lotus_mn_locks(t)) {
		dtxn_txn_release_held(t); /* MN lock words (mnlock.c) */
		return;
	}
	for (uint32_t i = 0; i < t->n_items; i++) {
		struct dtxn_item *it = &t->items[i];
		struct lotus_item *li = lotus_item_of(it);
		struct lotus_lk lk;

		if (li == NULL || (it->flags & (DTXN_ITEM_F_LOCKED | DTXN_ITEM_F_BLOCKED)) == 0)
			continue;
		if (msgs == NULL) {
			/* at most one message per CN at a time */
			msgs = dtxn_txn_alloc(t, sizeof(*msgs) * sh->n_cn);
			if (msgs == NULL) {
				LOTUS_LOG(ERR, "txn %#" PRIx64 ": no memory to release locks", t->id);
				return;
			}
		}
		if (it->flags & DTXN_ITEM_F_LOCKED) {
			lk.table = it->table->def.id;
			lk.rsvd = 0;
			lk.key = it->key;
			rel_add(t, msgs, &n_msgs, li->owner, &lk);
		}
		if (it->flags & DTXN_ITEM_F_BLOCKED) {
			lk.table = it->table->def.id | LOTUS_LK_BUCKET;
			lk.rsvd = 0;
			lk.key = li->bkt;
			rel_add(t, msgs, &n_msgs, li->bowner, &lk);
		}
		it->flags &= ~(DTXN_ITEM_F_LOCKED | DTXN_ITEM_F_BLOCKED);
		li->owner = li->bowner = 0;
	}
	for (unsigned m = 0; m < n_msgs; m++)
		rel_flush(t, &msgs[m]);
}
