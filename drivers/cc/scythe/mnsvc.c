/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The MN-side lock service (scythe.md §2, "Step 1: Lock RPC, run by the
 * MN CPU"; Fig. 16): lib/rpc's server (dtxn_rpc_srv) reaps a burst of
 * Lock messages from the CN workers (or, with rpc=rrpc, the MN's RRPC
 * service takes them from its rings, transport.c: same handler); the handler sorts all their requests
 * by (record, ts) and serves them in one scan with the grant rule
 * (takeout.c), writing the lock's lower and queued_ts words with CPU
 * stores and reading upper, which only the holders' FAAs change, with an
 * atomic load (no word is written by both the CPU and the NIC).
 *
 * A request names its record by its slot offset in this MN's region and
 * its table; one that is not a slot of a table whose primary is this MN
 * is refused (SCYTHE_LK_BAD) and touches nothing.
 *
 * Each ticket handed out (granted or queued) is noted in the requesting
 * coordinator's ticket table (struct scythe_ticket_tab, in its log region
 * on this MN), so that a survivor can serve the tickets of a dead
 * coordinator (recover.c). A request naming no coordinator of the db is
 * refused (SCYTHE_LK_BAD).
 *
 * Cancel (cancel=1, cancel.c): a coordinator gives up queued tickets; the
 * service marks them cancelled in its ticket table, keeps them, and gives
 * each back when upper reaches it: at each poll (in virtual time the
 * thread asks to be stepped every SCYTHE_CANCEL_POLL_NS while it keeps
 * any) and before it serves a Lock request on the same record. A batch's
 * Cancels are served before its Lock requests (a coordinator's Cancels
 * precede its next attempt's requests on its QP).
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "dtxn_fabric.h"
#include "scythe_private.h"

/** Most requests in one batch. */
#define MN_BATCH_MAX (DTXN_RPC_SRV_BURST * SCYTHE_LOCKS_PER_MSG)
/** While it keeps cancelled tickets, the service looks at their locks at least this often, ns. */
#define SCYTHE_CANCEL_POLL_NS UINT64_C(500)

struct scythe_mn {
	struct dtxn_db *db;
	uint16_t mn;
	uint8_t *base;
	struct dtxn_sched *sched;
	struct dtxn_rpc_srv *srv;
	struct dtxn_rrpc_mn *rr;       /**< rpc=rrpc: the Lock RPC's rings (transport.c); else NULL */
	struct dtxn_tso_proxy *px;     /**< the TSO proxy on this MN (tso_proxies), or NULL */
	struct scythe_opts opts;
	uint64_t by_status[SCYTHE_LK_STATUS_MAX];
	uint64_t tab_full;   /**< tickets a full ticket table could not note */
	uint64_t qhist[2][SCYTHE_QHIST]; /**< queue seen at Lock time, per mode */
	struct scythe_batch_ent ents[MN_BATCH_MAX];
	struct scythe_cancels cxl;     /**< cancelled tickets (cancel=1) */
};

/* Notes ticket @p ticket of record @p e->off in coordinator @p e->gid's ticket table. */
static void
mn_note_ticket(struct scythe_mn *m, const struct scythe_batch_ent *e, uint16_t ticket)
{
	const struct dtxn_catalog *cat = &m->db->cat;
	struct scythe_ticket_tab *tab = (void *)(m->base + DTXN_RADDR_OFF(dtxn_store_log_raddr(
							     cat, e->gid, m->mn)));
	uint64_t max = (cat->log_bytes - sizeof(*tab)) / sizeof(tab->ent[0]);

	if (tab->ts != e->ts || tab->gid != e->gid + 1) {
		/* a new attempt: its tickets replace the last one's (all given back) */
		__atomic_store_n(&tab->n, 0, __ATOMIC_RELEASE);
		tab->ts = e->ts;
		tab->gid = e->gid + 1;
	}
	if (tab->n >= max) {
		m->tab_full++;
		return;
	}
	tab->ent[tab->n].off = e->off;
	tab->ent[tab->n].ticket = ticket;
	__atomic_store_n(&tab->n, tab->n + 1, __ATOMIC_RELEASE);
}

/* Marks ticket @p ticket of record @p off cancelled in coordinator @p gid's table (attempt @p ts). */
static void
mn_mark_cancelled(struct scythe_mn *m, uint32_t gid, uint64_t ts, uint64_t off, uint16_t ticket)
{
	struct scythe_ticket_tab *tab = (void *)(m->base + DTXN_RADDR_OFF(dtxn_store_log_raddr(
							     &m->db->cat, gid, m->mn)));

	if (tab->ts != ts || tab->gid != gid + 1)
		return;
	for (uint32_t i = 0; i < tab->n; i++)
		if (tab->ent[i].off == off && (uint16_t)tab->ent[i].ticket == ticket)
			__atomic_store_n(&tab->ent[i].flags, SCYTHE_TICKET_F_CANCELLED,
					 __ATOMIC_RELEASE);
}

/* Whether @p off is the offset of a slot of table @p tid whose primary
 * (of its stripe, --placement key) is this MN. */
static bool
mn_slot_ok(const struct scythe_mn *m, uint8_t tid, uint64_t off)
{
	const struct dtxn_table *tab = dtxn_catalog_table(&m->db->cat, tid);

	return tab != NULL && off <= DTXN_RADDR_OFF_MASK &&
	       dtxn_store_slot_ok(tab, DTXN_RADDR(m->mn, off));
}

/* Serves one request: Lock(ts, mode) of Fig. 14. */
static void
mn_serve(struct scythe_mn *m, const struct scythe_batch_ent *e, struct scythe_lock_resp *r)
{
	struct scythe_slot *s;
	uint16_t lower, upper, live;

	memset(r, 0, sizeof(*r));
	if (!mn_slot_ok(m, e->table_id, e->off) || e->mode > SCYTHE_HOT ||
	    e->gid >= m->db->conf.n_coords) {
		r->status = SCYTHE_LK_BAD;
		return;
	}
	s = (struct scythe_slot *)(m->base + e->off);
	lower = (uint16_t)s->lower;
	/* cancelled tickets at the head go back first; those behind do not count (cancel.c) */
	upper = m->cxl.n == 0 ? (uint16_t)__atomic_load_n(&s->upper, __ATOMIC_ACQUIRE)
			      : scythe_cancel_head(&m->cxl, m->base, e->off);
	live = (uint16_t)(upper + (m->cxl.n == 0 ? 0 : scythe_cancel_queued(&m->cxl, e->off)));
	r->status = scythe_takeout_decide(lower, live, s->queued_ts, e->ts, e->mode,
					  (e->flags & SCYTHE_REQ_F_DEFERRED) != 0, &m->opts);
	r->ticket = lower;
	r->upper = upper;
	r->queue = (uint16_t)(lower - live);
	r->version = __atomic_load_n(&s->version, __ATOMIC_ACQUIRE);
	if (r->status == SCYTHE_LK_GRANTED || r->status == SCYTHE_LK_QUEUED) {
		/* queued_ts = ts (the largest: requests below it are refused); lower + 1 */
		__atomic_store_n(&s->queued_ts, e->ts, __ATOMIC_RELAXED);
		__atomic_store_n(&s->lower, (uint64_t)(uint16_t)(lower + 1), __ATOMIC_RELEASE);
		mn_note_ticket(m, e, lower);
	}
}

/* Serves one Cancel message: each ticket is marked in its table, then taken over. */
static void
mn_cancel_msg(struct scythe_mn *m, struct dtxn_rpc_srv_msg *msg)
{
	unsigned cnt = msg->len / sizeof(struct scythe_cancel_req);

	if (!m->opts.cancel || msg->len % sizeof(struct scythe_cancel_req) != 0 || cnt == 0 ||
	    cnt > SCYTHE_LOCKS_PER_MSG) {
		msg->resp_len = 0; /* the CN keeps its tickets */
		return;
	}
	dtxn_sched_charge_op(m->sched, DTXN_CPU_RECORD, cnt);
	for (unsigned j = 0; j < cnt; j++) {
		struct scythe_cancel_req q;
		struct scythe_lock_resp r = { .status = SCYTHE_LK_BAD };
		int rc;

		memcpy(&q, (const uint8_t *)msg->req + j * sizeof(q), sizeof(q));
		r.ticket = q.ticket;
		if (mn_slot_ok(m, q.table_id, q.off) && q.gid < m->db->conf.n_coords) {
			if (m->cxl.n == SCYTHE_CANCEL_MAX) {
				r.status = SCYTHE_LK_KEPT;
			} else {
				/* marked before taken over: recovery must never give it back too */
				mn_mark_cancelled(m, q.gid, q.ts, q.off, q.ticket);
				rc = scythe_cancel_add(&m->cxl, m->base, q.off, q.ticket);
				r.status = rc == 0 ? SCYTHE_LK_CANCELLED : SCYTHE_LK_BAD;
			}
		}
		m->by_status[r.status]++;
		memcpy((uint8_t *)msg->resp + j * sizeof(r), &r, sizeof(r));
	}
	msg->resp_len = (int)(cnt * sizeof(struct scythe_lock_resp));
}

/* The batch handler: every request of every message, sorted, one scan. */
static void
mn_batch(void *arg, struct dtxn_rpc_srv_msg *msgs, unsigned n)
{
	struct scythe_mn *m = arg;
	unsigned k = 0;

	(void)dtxn_tso_proxy_batch(m->px, msgs, n); /* the TSO proxy's requests, if it runs here */
	for (unsigned i = 0; i < n; i++) {
		struct dtxn_rpc_srv_msg *msg = &msgs[i];
		unsigned cnt = msg->len / sizeof(struct scythe_lock_req);

		if (msg->type == SCYTHE_RPC_TSO && m->px != NULL)
			continue;
		if (msg->type == SCYTHE_RPC_CANCEL) {
			mn_cancel_msg(m, msg);
			continue;
		}
		if (msg->type != SCYTHE_RPC_LOCK || msg->len % sizeof(struct scythe_lock_req) != 0 ||
		    cnt == 0 || cnt > SCYTHE_LOCKS_PER_MSG) {
			msg->resp_len = 0; /* an empty reply: the CN counts it as refused */
			continue;
		}
		for (unsigned j = 0; j < cnt; j++) {
			struct scythe_lock_req q;
			struct scythe_batch_ent *e = &m->ents[k++];

			memcpy(&q, (const uint8_t *)msg->req + j * sizeof(q), sizeof(q));
			*e = (struct scythe_batch_ent){
				.off = q.off, .ts = q.ts, .msg = (uint16_t)i, .idx = (uint16_t)j,
				.table_id = q.table_id, .mode = q.mode, .flags = q.flags,
				.gid = q.gid,
			};
		}
		msg->resp_len = (int)(cnt * sizeof(struct scythe_lock_resp));
	}
	/* CPU of the MN: one record per request (virtual time only) */
	dtxn_sched_charge_op(m->sched, DTXN_CPU_RECORD, k);
	scythe_batch_sort(m->ents, k);
	for (unsigned i = 0; i < k; i++) {
		const struct scythe_batch_ent *e = &m->ents[i];
		struct scythe_lock_resp r;

		mn_serve(m, e, &r);
		m->by_status[r.status]++;
		if (r.status != SCYTHE_LK_BAD)
			m->qhist[e->mode][RTE_MIN(r.queue, (uint16_t)(SCYTHE_QHIST - 1))]++;
		memcpy((uint8_t *)msgs[e->msg].resp + e->idx * sizeof(r), &r, sizeof(r));
	}
}

static void
mn_destroy(void *svc)
{
	struct scythe_mn *m = svc;

	if (m == NULL)
		return;
	SCYTHE_LOG(DEBUG, "MN %u lock service: granted %" PRIu64 " queued %" PRIu64
		   " refused ts %" PRIu64 " cold %" PRIu64 " hot %" PRIu64 " deferred %" PRIu64
		   " bad %" PRIu64 "; cancels taken %" PRIu64 " kept %" PRIu64 ", given back %" PRIu64
		   ", stale %" PRIu64, m->mn, m->by_status[SCYTHE_LK_GRANTED],
		   m->by_status[SCYTHE_LK_QUEUED], m->by_status[SCYTHE_LK_REJ_TS],
		   m->by_status[SCYTHE_LK_REJ_COLD], m->by_status[SCYTHE_LK_REJ_HOT],
		   m->by_status[SCYTHE_LK_DEFER], m->by_status[SCYTHE_LK_BAD],
		   m->by_status[SCYTHE_LK_CANCELLED], m->by_status[SCYTHE_LK_KEPT], m->cxl.served,
		   m->cxl.stale);
	if (m->tab_full != 0)
		SCYTHE_LOG(ERR, "MN %u: %" PRIu64 " tickets not noted (ticket table full: a larger --log-kib)",
			   m->mn, m->tab_full);
	dtxn_tso_proxy_destroy(m->px);
	for (unsigned mode = 0; mode < 2; mode++) {
		char line[SCYTHE_QHIST * 24];
		size_t at = 0;

		for (unsigned q = 0; q < SCYTHE_QHIST; q++)
			at += (size_t)snprintf(line + at, sizeof(line) - at, " %" PRIu64,
					       m->qhist[mode][q]);
		SCYTHE_LOG(DEBUG, "MN %u %s Lock requests by queue seen 0..%u+:%s", m->mn,
			   mode == SCYTHE_HOT ? "HOT" : "COLD", SCYTHE_QHIST - 1, line);
	}
	dtxn_rrpc_mn_destroy(m->rr); /* its QPs are on the server's CQ */
	dtxn_rpc_srv_destroy(m->srv);
	rte_free(m);
}

/* Completions on the server's CQ besides its messages: the TSO proxy's FAA. */
static void
mn_cqe(void *arg, const struct dtxn_cqe *cqe)
{
	dtxn_tso_proxy_cqe(((struct scythe_mn *)arg)->px, cqe);
}

static void *
mn_create(struct dtxn_db *db, uint16_t mn, unsigned workers_per_cn, unsigned max_coords,
	  struct dtxn_sched *sched)
{
	struct dtxn_rpc_srv_conf conf = {
		.size = sizeof(conf),
		.mn_node = mn,
		.workers_per_cn = workers_per_cn,
		.max_eps = max_coords,
		.socket_id = SOCKET_ID_ANY,
		.sched = sched,
		.fn = mn_batch,
		.cqe_fn = mn_cqe,
	};
	struct scythe_mn *m;
	uint8_t *base = dtxn_fabric_mn_base(db->fabric, mn);

	if (base == NULL) {
		rte_errno = EINVAL; /* the region is not mapped in this process */
		return NULL;
	}
	m = rte_zmalloc("scythe_mn", sizeof(*m), RTE_CACHE_LINE_SIZE);
	if (m == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	m->db = db;
	m->mn = mn;
	m->base = base;
	m->sched = sched;
	m->opts = scythe_shared_of(db)->opts;
	conf.arg = m;
	m->srv = dtxn_rpc_srv_create(db->fabric, &conf);
	if (m->srv != NULL && mn >= 1 && mn <= m->opts.tso_proxies) {
		/* Scythe §4.5: a TSO proxy on this MN's CPU, beside the lock service */
		struct dtxn_tso_proxy_conf pc = {
			.size = sizeof(pc), .mn = mn, .counter = scythe_shared_of(db)->tso_counter,
			.rpc_type = SCYTHE_RPC_TSO, .workers_per_cn = workers_per_cn,
			.max_eps = max_coords, .sched = sched, .socket_id = SOCKET_ID_ANY,
		};

		m->px = dtxn_tso_proxy_attach(db->fabric, m->srv, &pc);
	}
	if (m->srv == NULL || (mn >= 1 && mn <= m->opts.tso_proxies && m->px == NULL) ||
	    scythe_tp_mn_create(db, mn, dtxn_rpc_srv_cq(m->srv), sched, mn_batch, m, &m->rr) != 0) {
		int err = rte_errno;

		dtxn_tso_proxy_destroy(m->px); /* its QPs and the RRPC service's are on the server's CQ */
		dtxn_rpc_srv_destroy(m->srv);
		rte_free(m);
		rte_errno = err;
		return NULL;
	}
	return m;
}

size_t
scythe_mn_svc_size(void)
{
	return sizeof(struct scythe_mn);
}

static unsigned
mn_poll(void *svc)
{
	struct scythe_mn *m = svc;
	unsigned n = dtxn_rpc_srv_poll(m->srv) + dtxn_rrpc_mn_poll(m->rr);

	(void)dtxn_tso_proxy_poll(m->px); /* the proxy's next FAA, if requests wait */
	if (m->cxl.n != 0) {
		unsigned k = scythe_cancel_serve(&m->cxl, m->base);

		dtxn_sched_charge_op(m->sched, DTXN_CPU_RECORD, k);
		n += k;
		if (m->cxl.n != 0) /* the holders' FAAs wake nobody: look again soon */
			dtxn_sched_wake_at(m->sched, dtxn_now_ns() + SCYTHE_CANCEL_POLL_NS);
	}
	return n;
}

static struct dtxn_cq *
mn_cq(void *svc)
{
	return dtxn_rpc_srv_cq(((struct scythe_mn *)svc)->srv);
}

const struct dtxn_cc_mn_svc_ops scythe_mn_svc_ops = {
	.create = mn_create,
	.poll = mn_poll,
	.cq = mn_cq,
	.destroy = mn_destroy,
};
