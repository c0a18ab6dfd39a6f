/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Scythe's TSO proxy (§4.5; dtxn_tso.h, "TSO proxies"): a lib/rpc server
 * on an MN's CPU that keeps the leaders' requests, combines them into one
 * FAA on the TSO's counter over its own RC QP, hands out the sub-ranges
 * and records the largest timestamp it issued in a reserved word of its
 * MN. One FAA in flight; requests that arrive meanwhile wait for the next.
 *
 * Wire format: request [n u64], reply [old u64] (the range is old + 1 ..
 * old + n); an empty reply is a refusal (malformed request, failed FAA).
 */
#include <errno.h>
#include <string.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_log.h>
#include <rte_malloc.h>

#include "dtxn_sched.h"
#include "dtxn_tso.h"
#include "tso_private.h"

RTE_LOG_REGISTER(dtxn_tso_proxy_logtype, dtxn.tso.proxy, INFO);
#define PX_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_##level, dtxn_tso_proxy_logtype, "dtxn.tso.proxy: " fmt "\n", \
		##__VA_ARGS__)

/** A leader's request kept for the next FAA. */
struct px_req {
	struct dtxn_rpc_srv_later later;
	uint64_t n;
};

/** Requests of one FAA (the one in flight, or the next). */
struct px_set {
	struct px_req *req;
	unsigned n;
	uint64_t sum;
};

struct dtxn_tso_proxy {
	struct dtxn_fabric *f;
	struct dtxn_rpc_srv *srv;
	bool own_srv;                  /**< created the server (else attached to another's) */
	struct dtxn_qp *qp;            /**< to the counter's MN, on the server's CQ */
	struct dtxn_sched *sched;
	dtxn_raddr_t counter;
	uint64_t *record;              /**< DTXN_STORE_RSVD_TSO_MAX of the proxy's MN */
	uint8_t rpc_type;
	unsigned cap;                  /**< requests a set holds: all the workers' slots */
	struct px_set next, flight;
	bool busy;                     /**< flight's FAA is posted */
	uint64_t old;                  /**< its result */
	struct dtxn_wr wr;
	struct dtxn_tso_proxy_stats st;
};

static uint64_t *
px_record(struct dtxn_fabric *f, uint16_t mn)
{
	char *base = dtxn_fabric_mn_base(f, mn);

	return base == NULL ? NULL : (uint64_t *)(void *)(base + DTXN_STORE_RSVD_TSO_MAX * 8);
}

dtxn_raddr_t
dtxn_tso_proxy_record_raddr(const struct dtxn_catalog *cat, uint16_t mn)
{
	return dtxn_store_rsvd_raddr(cat, mn, DTXN_STORE_RSVD_TSO_MAX);
}

/* Posts the FAA of the waiting requests if none is in flight. */
static void
px_forward(struct dtxn_tso_proxy *px)
{
	struct px_set t;

	if (px->busy || px->next.n == 0)
		return;
	t = px->flight;
	px->flight = px->next;
	px->next = t;
	px->next.n = 0;
	px->next.sum = 0;
	memset(&px->wr, 0, sizeof(px->wr));
	px->wr.wr_id = (uintptr_t)px;
	px->wr.opcode = DTXN_WR_FAA;
	px->wr.flags = DTXN_WR_F_SIGNALED;
	px->wr.len = sizeof(px->old);
	px->wr.local = &px->old;
	px->wr.raddr = px->counter;
	px->wr.compare_add = px->flight.sum;
	dtxn_sched_charge_op(px->sched, DTXN_CPU_WR, 1); /* sim only */
	dtxn_sched_charge_op(px->sched, DTXN_CPU_DOORBELL, 1);
	px->busy = true;
	px->st.faas++;
	if (px->flight.n > px->st.max_combined)
		px->st.max_combined = px->flight.n;
	if (dtxn_qp_post(px->qp, &px->wr) != 0) {
		PX_LOG(ERR, "FAA on the counter not posted");
		px->busy = false;
		for (unsigned i = 0; i < px->flight.n; i++)
			(void)dtxn_rpc_srv_reply_later(px->srv, &px->flight.req[i].later, NULL, 0);
		px->st.errors++;
		px->flight.n = 0;
	}
}

/* The FAA completed: each leader's sub-range, the record, the next FAA. */
static void
px_on_cqe(void *arg, const struct dtxn_cqe *cqe)
{
	struct dtxn_tso_proxy *px = arg;
	uint64_t base = px->old;
	bool ok = cqe->status == DTXN_WC_SUCCESS;

	if (cqe->wr_id != (uintptr_t)px || !px->busy)
		return;
	px->busy = false;
	if (ok) {
		/* the record first: a recovery that sees a reply's timestamp sees it */
		uint64_t top = base + px->flight.sum;

		if (top > __atomic_load_n(px->record, __ATOMIC_RELAXED))
			__atomic_store_n(px->record, top, __ATOMIC_RELEASE);
	} else {
		px->st.errors++;
		PX_LOG(WARNING, "FAA on the counter failed (status %u)", cqe->status);
	}
	for (unsigned i = 0; i < px->flight.n; i++) {
		const struct px_req *q = &px->flight.req[i];

		if (ok) {
			(void)dtxn_rpc_srv_reply_later(px->srv, &q->later, &base, sizeof(base));
			base += q->n;
			px->st.requests++;
			px->st.timestamps += q->n;
		} else {
			(void)dtxn_rpc_srv_reply_later(px->srv, &q->later, NULL, 0);
		}
	}
	px->flight.n = 0;
	px->flight.sum = 0;
	px_forward(px);
}

/* Keeps every well-formed request of the proxy's type; others: refused if @p all. */
static unsigned
px_take(struct dtxn_tso_proxy *px, struct dtxn_rpc_srv_msg *msgs, unsigned n, bool all)
{
	unsigned taken = 0;

	for (unsigned i = 0; i < n; i++) {
		struct dtxn_rpc_srv_msg *m = &msgs[i];
		struct px_req *q;
		uint64_t k = 0;

		if (m->type != px->rpc_type && !all)
			continue;
		taken++;
		m->resp_len = 0; /* a refusal unless kept */
		if (m->type != px->rpc_type || m->len != sizeof(k)) {
			px->st.bad++;
			continue;
		}
		memcpy(&k, m->req, sizeof(k));
		if (k == 0 || k > DTXN_TSO_BATCH_MAX || px->next.n >= px->cap) {
			px->st.bad++;
			continue;
		}
		q = &px->next.req[px->next.n];
		if (dtxn_rpc_srv_defer(px->srv, m, &q->later) != 0) {
			px->st.bad++;
			continue;
		}
		q->n = k;
		px->next.n++;
		px->next.sum += k;
		m->resp_len = -1; /* answered when the FAA completes */
	}
	return taken;
}

/* The own server's batch handler. */
static void
px_batch(void *arg, struct dtxn_rpc_srv_msg *msgs, unsigned n)
{
	(void)px_take(arg, msgs, n, true);
}

unsigned
dtxn_tso_proxy_batch(struct dtxn_tso_proxy *px, struct dtxn_rpc_srv_msg *msgs, unsigned n)
{
	return px == NULL || msgs == NULL ? 0 : px_take(px, msgs, n, false);
}

void
dtxn_tso_proxy_cqe(struct dtxn_tso_proxy *px, const struct dtxn_cqe *cqe)
{
	if (px != NULL && cqe != NULL)
		px_on_cqe(px, cqe);
}

static void
px_free(struct dtxn_tso_proxy *px)
{
	if (px->qp != NULL)
		dtxn_qp_destroy(px->qp);
	if (px->own_srv)
		dtxn_rpc_srv_destroy(px->srv);
	rte_free(px->next.req);
	rte_free(px->flight.req);
	rte_free(px);
}

/* The proxy without its server: checks, memory, the record. */
static struct dtxn_tso_proxy *
px_alloc(struct dtxn_fabric *f, const struct dtxn_tso_proxy_conf *conf)
{
	const struct dtxn_fabric_conf *fc;
	struct dtxn_tso_proxy *px;
	uint64_t cap;
	int rc = -EINVAL;

	if (f == NULL || conf == NULL || conf->size < sizeof(*conf) || conf->counter == 0 ||
	    conf->rpc_type >= DTXN_RPC_TYPES || conf->workers_per_cn == 0 || conf->max_eps == 0)
		goto fail0;
	fc = dtxn_fabric_conf(f);
	if (conf->mn == 0 || conf->mn >= fc->n_mn || DTXN_RADDR_MN(conf->counter) == conf->mn ||
	    DTXN_RADDR_MN(conf->counter) >= fc->n_mn)
		goto fail0;
	cap = (uint64_t)fc->n_cn * conf->workers_per_cn * conf->max_eps * DTXN_RPC_SLOTS;
	if (cap > (1u << 20))
		goto fail0;
	px = rte_zmalloc_socket("dtxn_tso_proxy", sizeof(*px), RTE_CACHE_LINE_SIZE,
				conf->socket_id);
	if (px == NULL) {
		rc = -ENOMEM;
		goto fail0;
	}
	px->f = f;
	px->sched = conf->sched;
	px->counter = conf->counter;
	px->rpc_type = conf->rpc_type;
	px->cap = (unsigned)cap;
	px->record = px_record(f, conf->mn);
	px->next.req = rte_zmalloc_socket("dtxn_tso_px_req", sizeof(struct px_req) * cap, 0,
					  conf->socket_id);
	px->flight.req = rte_zmalloc_socket("dtxn_tso_px_req", sizeof(struct px_req) * cap, 0,
					    conf->socket_id);
	if (px->next.req == NULL || px->flight.req == NULL || px->record == NULL) {
		rc = px->record == NULL ? -ENXIO : -ENOMEM;
		px_free(px);
		goto fail0;
	}
	return px;
fail0:
	rte_errno = -rc;
	return NULL;
}

/* The proxy's QP to the counter's MN, on its server's CQ. */
static struct dtxn_tso_proxy *
px_connect(struct dtxn_tso_proxy *px, uint16_t mn)
{
	int rc;

	px->qp = dtxn_qp_create(px->f, dtxn_rpc_srv_cq(px->srv), mn,
				(uint16_t)DTXN_RADDR_MN(px->counter), 64);
	if (px->qp != NULL)
		return px;
	rc = rte_errno;
	px_free(px);
	rte_errno = rc;
	return NULL;
}

struct dtxn_tso_proxy *
dtxn_tso_proxy_create(struct dtxn_fabric *f, const struct dtxn_tso_proxy_conf *conf)
{
	struct dtxn_tso_proxy *px = px_alloc(f, conf);
	struct dtxn_rpc_srv_conf sc;
	int rc;

	if (px == NULL)
		return NULL;
	memset(&sc, 0, sizeof(sc));
	sc.size = sizeof(sc);
	sc.mn_node = conf->mn;
	sc.workers_per_cn = conf->workers_per_cn;
	sc.max_eps = conf->max_eps;
	sc.socket_id = conf->socket_id;
	sc.sched = conf->sched;
	sc.fn = px_batch;
	sc.cqe_fn = px_on_cqe;
	sc.arg = px;
	px->srv = dtxn_rpc_srv_create(f, &sc);
	if (px->srv == NULL) {
		rc = rte_errno;
		px_free(px);
		rte_errno = rc;
		return NULL;
	}
	px->own_srv = true;
	return px_connect(px, conf->mn);
}

struct dtxn_tso_proxy *
dtxn_tso_proxy_attach(struct dtxn_fabric *f, struct dtxn_rpc_srv *srv,
		      const struct dtxn_tso_proxy_conf *conf)
{
	struct dtxn_tso_proxy *px;

	if (srv == NULL) {
		rte_errno = EINVAL;
		return NULL;
	}
	px = px_alloc(f, conf);
	if (px == NULL)
		return NULL;
	px->srv = srv;
	return px_connect(px, conf->mn);
}

void
dtxn_tso_proxy_destroy(struct dtxn_tso_proxy *px)
{
	if (px == NULL)
		return;
	if (px->busy || px->next.n != 0)
		PX_LOG(ERR, "proxy destroyed with requests in flight");
	px_free(px);
}

unsigned
dtxn_tso_proxy_poll(struct dtxn_tso_proxy *px)
{
	unsigned n;

	if (px == NULL)
		return 0;
	n = px->own_srv ? dtxn_rpc_srv_poll(px->srv) : 0;
	px_forward(px);
	return n;
}

struct dtxn_cq *
dtxn_tso_proxy_cq(const struct dtxn_tso_proxy *px)
{
	return px == NULL ? NULL : dtxn_rpc_srv_cq(px->srv);
}

void
dtxn_tso_proxy_stats_get(const struct dtxn_tso_proxy *px, struct dtxn_tso_proxy_stats *st)
{
	if (px != NULL && st != NULL)
		*st = px->st;
}

int
dtxn_tso_proxy_fetch_add_lc(struct dtxn_rpc_ep *ep, uint16_t mn, uint8_t rpc_type, uint64_t n,
			    uint64_t *old)
{
	if (ep == NULL || old == NULL || n == 0 || n > DTXN_TSO_BATCH_MAX)
		return -EINVAL;
	return tso_rpc_add_lc(ep, mn, rpc_type, n, old);
}
