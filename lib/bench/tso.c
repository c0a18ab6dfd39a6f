/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * "tso": the timestamp-oracle micro-benchmark (Scythe Fig. 28;
 * doc/guides/tso.md). Each "transaction" is one timestamp from lib/tso:
 * one dtxn_tso_get_lc() on the worker's TSO client, a TSO group per worker
 * lcore that takes up to `batch` timestamps with one FAA on the counter in
 * MN 0's device memory. Committed txn/s is timestamps/s, and the report's
 * MN verbs per txn (faa) is FAAs per timestamp. No table is read: the
 * protocol (--protocol) plays no part.
 *
 * Each worker's client is made by its first coordinator (a slot claimed
 * with one CAS, at the first timestamp only; after that every coordinator
 * keeps its slot in ctx->acc[1]). Invariants after the run: every
 * coordinator's timestamps increased (ctx->acc[2] counts the ones that did
 * not), and, where MN 0's memory is mapped, the counter equals the number
 * of timestamps handed out (nothing reused, nothing lost: timestamps are
 * unique). The table the benchmark defines is one 8-byte record: the
 * store wants a table, nobody touches it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_malloc.h>

#include "anomaly_common.h"
#include "bench_private.h"
#include "dtxn_fabric.h"
#include "dtxn_tso.h"

/** Most worker lcores (threads of every CN) the benchmark serves. */
#define TSO_BENCH_WORKERS 1024

/** lib/rpc message type of the proxies' requests (the benchmark's only one). */
#define TSO_PROXY_RPC_TYPE 1

struct tso_conf {
	uint64_t batch;
	uint64_t proxies;
};

static const struct dtxn_opt tso_opts[] = {
	{ "batch", DTXN_OPT_U64, offsetof(struct tso_conf, batch), DTXN_TSO_BATCH_DEFAULT, 1,
	  DTXN_TSO_BATCH_MAX, "most timestamps per FAA (1: no TSO group)" },
	{ "proxies", DTXN_OPT_U64, offsetof(struct tso_conf, proxies), 0, 0,
	  DTXN_TSO_PROXIES_MAX,
	  "TSO proxies on MNs 1..N (at most MNs - 1); a leader picks one or the TSO (0: none)" },
};

enum { TSO_GET, TSO_N_TYPES };
static const char *const tso_type_names[TSO_N_TYPES] = { "get_ts" };

/* acc[] of a coordinator: 0 last timestamp, 1 slot + 1, 2 order violations */
#define ACC_LAST 0
#define ACC_SLOT 1
#define ACC_BAD 2

struct tso_slot {
	struct dtxn_worker *w;   /**< claimed by CAS from NULL */
	struct dtxn_tso *tso;    /**< set by the claiming coordinator; its lcore only */
	/* with proxies: the worker's rpc to the MNs and its coordinators' endpoints */
	struct dtxn_rpc *rpc;
	unsigned n_eps;
	struct dtxn_coord **coord;
	struct dtxn_rpc_ep **ep;
};

/** The MN service of one MN: its proxy, or an idle CQ (no proxy there). */
struct tso_mnsvc {
	struct tso_priv *p;
	struct dtxn_tso_proxy *px;
	struct dtxn_cq *idle;
	unsigned idx;
};

struct tso_priv {
	struct tso_conf conf;
	struct tso_slot slot[TSO_BENCH_WORKERS];
	struct dtxn_tso_proxy *px[DTXN_TSO_PROXIES_MAX];   /**< live proxies (MN service threads) */
	struct dtxn_tso_proxy_stats px_gone;                /**< counters of destroyed ones */
};

static int
tso_bench_create(struct dtxn_bench *b)
{
	struct tso_priv *p;
	int rc = bench_conf_check(b);

	if (rc != 0)
		return rc;
	p = rte_zmalloc("tso_bench", sizeof(*p), 0);
	if (p == NULL) {
		bench_set_err(b, "tso: out of memory");
		return -ENOMEM;
	}
	memcpy(&p->conf, b->conf, sizeof(p->conf));
	b->priv = p;
	return 0;
}

static void
tso_bench_destroy(struct dtxn_bench *b)
{
	struct tso_priv *p = b->priv;

	if (p == NULL)
		return;
	for (unsigned i = 0; i < TSO_BENCH_WORKERS; i++) {
		struct tso_slot *s = &p->slot[i];

		dtxn_tso_destroy(s->tso);
		for (unsigned e = 0; e < s->n_eps; e++)
			dtxn_rpc_ep_destroy(s->ep[e]);
		dtxn_rpc_destroy(s->rpc);
		rte_free(s->ep);
		rte_free(s->coord);
	}
	rte_free(p);
	b->priv = NULL;
}

/* ------------------------------------------------------------------ */
/* The proxies: an MN service of the db (dtxn_db_set_mn_svc())        */
/* ------------------------------------------------------------------ */

static void *
tso_svc_create(struct dtxn_db *db, uint16_t mn, unsigned workers_per_cn, unsigned max_coords,
	       struct dtxn_sched *sched)
{
	struct tso_priv *p = dtxn_db_mn_svc_arg(db);
	struct dtxn_tso_proxy_conf pc = {
		.size = sizeof(pc), .mn = mn, .counter = dtxn_tso_counter_raddr(&db->cat),
		.rpc_type = TSO_PROXY_RPC_TYPE, .workers_per_cn = workers_per_cn,
		.max_eps = max_coords, .sched = sched, .socket_id = SOCKET_ID_ANY,
	};
	struct tso_mnsvc *sv = rte_zmalloc("tso_mnsvc", sizeof(*sv), 0);

	if (sv == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	sv->p = p;
	if (mn >= 1 && mn <= p->conf.proxies) {
		sv->idx = mn - 1u;
		sv->px = dtxn_tso_proxy_create(db->fabric, &pc);
		p->px[sv->idx] = sv->px;
	} else {
		sv->idle = dtxn_cq_create(db->fabric, SOCKET_ID_ANY, 64);
	}
	if (sv->px == NULL && sv->idle == NULL) {
		int err = rte_errno;

		rte_free(sv);
		rte_errno = err;
		return NULL;
	}
	return sv;
}

static unsigned
tso_svc_poll(void *arg)
{
	struct tso_mnsvc *sv = arg;

	return dtxn_tso_proxy_poll(sv->px);
}

static struct dtxn_cq *
tso_svc_cq(void *arg)
{
	struct tso_mnsvc *sv = arg;

	return sv->px != NULL ? dtxn_tso_proxy_cq(sv->px) : sv->idle;
}

static void
tso_svc_destroy(void *arg)
{
	struct tso_mnsvc *sv = arg;
	struct dtxn_tso_proxy_stats st;

	if (sv->px != NULL) {
		dtxn_tso_proxy_stats_get(sv->px, &st);
		sv->p->px_gone.requests += st.requests;
		sv->p->px_gone.faas += st.faas;
		sv->p->px[sv->idx] = NULL;
		dtxn_tso_proxy_destroy(sv->px);
	}
	dtxn_cq_destroy(sv->idle);
	rte_free(sv);
}

static const struct dtxn_cc_mn_svc_ops tso_svc_ops = {
	.create = tso_svc_create,
	.poll = tso_svc_poll,
	.cq = tso_svc_cq,
	.destroy = tso_svc_destroy,
};

static int
tso_bench_define(struct dtxn_bench *b, struct dtxn_db *db)
{
	struct tso_priv *p = b->priv;
	int rc;

	if (p->conf.proxies != 0) {
		if (p->conf.proxies + 1 > db->conf.n_mn) {
			bench_set_err(b, "tso: proxies=%" PRIu64 " needs %" PRIu64
				      " MNs (one per proxy besides MN 0, the TSO's); there are %u",
				      p->conf.proxies, p->conf.proxies + 1, db->conf.n_mn);
			return -EINVAL;
		}
		rc = dtxn_db_set_mn_svc(db, &tso_svc_ops, p);
		if (rc != 0) {
			bench_set_err(b, "tso: proxies need the MNs' CPUs, which the protocol's own "
				      "service takes (use a protocol without one, e.g. ford)");
			return rc;
		}
	}
	return anom_define(b, db, "tso", sizeof(uint64_t), 1);
}

static int
tso_bench_load(struct dtxn_bench *b, struct dtxn_db *db)
{
	return anom_load(b, db, "tso", sizeof(uint64_t), 1, 0);
}

static unsigned
tso_bench_pick(struct dtxn_bench *b, struct dtxn_rng *r)
{
	RTE_SET_USED(b);
	RTE_SET_USED(r);
	return TSO_GET;
}

/* proxy_fetch_add of a client: proxy i is on MN 1 + i; @p c's endpoint, made at its first use */
static int
tso_bench_proxy_add(void *arg, struct dtxn_coord *c, unsigned proxy, uint64_t n, uint64_t *old)
{
	struct tso_slot *s = arg;
	struct dtxn_rpc_ep *ep = NULL;

	for (unsigned e = 0; e < s->n_eps && ep == NULL; e++)
		if (s->coord[e] == c)
			ep = s->ep[e];
	if (ep == NULL) {
		ep = dtxn_rpc_ep_create(s->rpc, c);
		if (ep == NULL)
			return -ENOBUFS;
		s->coord[s->n_eps] = c;
		s->ep[s->n_eps++] = ep;
	}
	return dtxn_tso_proxy_fetch_add_lc(ep, (uint16_t)(1 + proxy), TSO_PROXY_RPC_TYPE, n, old);
}

/* With proxies: the worker's rpc to the MNs (their replies come on its QPs to them). */
static int
tso_bench_slot_rpc(struct tso_slot *s, struct dtxn_worker *w)
{
	struct dtxn_rpc_conf rc = {
		.size = sizeof(rc),
		.timeout_ns = UINT64_C(1000000000), /* RC is reliable: never resend a batch */
		.max_retries = 1,
		.mn_peers = 1,
	};
	unsigned n = dtxn_worker_max_coords(w);

	s->coord = rte_zmalloc_socket("tso_bench_coords", sizeof(*s->coord) * n, 0, w->socket_id);
	s->ep = rte_zmalloc_socket("tso_bench_eps", sizeof(*s->ep) * n, 0, w->socket_id);
	if (s->coord == NULL || s->ep == NULL)
		return -ENOMEM;
	s->rpc = dtxn_rpc_create(w, &rc);
	return s->rpc == NULL ? -rte_errno : 0;
}

/* The worker's client: claims a slot for it at its first timestamp. */
static struct dtxn_tso *
tso_bench_client(struct dtxn_bench_ctx *ctx)
{
	struct tso_priv *p = ctx->bench->priv;
	struct dtxn_worker *w = ctx->coord->worker;
	struct dtxn_tso_conf tc = {
		.size = sizeof(tc),
		.counter = dtxn_tso_counter_raddr(&w->db->cat),
		.max_batch = (unsigned)p->conf.batch,
		.socket_id = w->socket_id,
		.n_proxies = (unsigned)p->conf.proxies,
		.proxy_fetch_add = tso_bench_proxy_add,
		.seed = (uint64_t)w->cn_node << 32 | w->index,
	};

	if (ctx->acc[ACC_SLOT] != 0)
		return p->slot[ctx->acc[ACC_SLOT] - 1].tso;
	for (unsigned i = 0; i < TSO_BENCH_WORKERS; i++) {
		struct dtxn_worker *none = NULL;
		struct tso_slot *s = &p->slot[i];

		if (__atomic_load_n(&s->w, __ATOMIC_ACQUIRE) == w ||
		    __atomic_compare_exchange_n(&s->w, &none, w, false, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE)) {
			/* only coordinators of w (one lcore) reach here for slot i */
			tc.proxy_arg = s;
			if (s->tso == NULL && p->conf.proxies != 0 && s->rpc == NULL &&
			    tso_bench_slot_rpc(s, w) != 0)
				return NULL;
			if (s->tso == NULL)
				s->tso = dtxn_tso_create(&tc);
			if (s->tso == NULL)
				return NULL;
			bench_acc_add(ctx, ACC_SLOT, (int64_t)i + 1);
			return s->tso;
		}
	}
	return NULL;
}

static int
tso_bench_run(struct dtxn_bench_ctx *ctx, unsigned type)
{
	struct dtxn_tso *tso = tso_bench_client(ctx);
	struct dtxn_tso_req req;
	uint64_t ts;
	int rc;

	RTE_SET_USED(type);
	if (tso == NULL)
		return DTXN_ABORT_TOO_LARGE; /* no client: more workers than slots, or no memory */
	rc = dtxn_tso_get_lc(tso, ctx->coord, &req, &ts);
	if (rc != 0)
		return dtxn_batch_reason(rc);
	if (ts <= (uint64_t)ctx->acc[ACC_LAST])
		bench_acc_add(ctx, ACC_BAD, 1);
	bench_acc_add(ctx, ACC_LAST, (int64_t)ts - ctx->acc[ACC_LAST]);
	return DTXN_OK;
}

static int
tso_bench_check(struct dtxn_bench *b, struct dtxn_db *db, struct dtxn_bench_ctx *const *ctxs,
		unsigned n_ctx, struct dtxn_report *r)
{
	dtxn_raddr_t ra = dtxn_tso_counter_raddr(dtxn_db_catalog(db));
	const uint8_t *base = dtxn_fabric_mn_base(dtxn_db_fabric(db), DTXN_RADDR_MN(ra));
	uint64_t handed = 0, bad = 0, proxied = 0, batches = 0;
	struct dtxn_tso_proxy_stats st_px;
	struct dtxn_tso_stats st;
	const struct tso_priv *p = b->priv;

	for (unsigned i = 0; i < n_ctx; i++)
		bad += (uint64_t)ctxs[i]->acc[ACC_BAD];
	for (unsigned i = 0; i < TSO_BENCH_WORKERS; i++) {
		if (p->slot[i].tso == NULL)
			continue;
		dtxn_tso_stats_get(p->slot[i].tso, &st);
		handed += st.requests;
		proxied += st.proxied;
		batches += st.faas;
	}
	if (p->conf.proxies != 0) {
		struct dtxn_tso_proxy_stats ps = p->px_gone;

		for (unsigned i = 0; i < DTXN_TSO_PROXIES_MAX; i++) {
			if (p->px[i] == NULL)
				continue;
			dtxn_tso_proxy_stats_get(p->px[i], &st_px);
			ps.requests += st_px.requests;
			ps.faas += st_px.faas;
		}
		/* what the proxies did: not a pass/fail figure, a line of the report */
		dtxn_report_check(r, "tso_proxies_served", ps.requests == proxied,
				  "%" PRIu64 " of %" PRIu64 " batches via proxies, %" PRIu64
				  " proxy FAAs (%.2f batches per FAA)", ps.requests, batches, ps.faas,
				  ps.faas != 0 ? (double)ps.requests / (double)ps.faas : 0.0);
	}
	dtxn_report_check(r, "tso_monotone_per_coordinator", bad == 0,
			  "%" PRIu64 " timestamps not above the coordinator's previous one", bad);
	if (base != NULL) {
		uint64_t counter = __atomic_load_n(
			(const uint64_t *)(const void *)(base + DTXN_RADDR_OFF(ra)), __ATOMIC_ACQUIRE);

		dtxn_report_check(r, "tso_counter_equals_handed_out", counter == handed,
				  "counter=%" PRIu64 " handed_out=%" PRIu64, counter, handed);
	}
	return 0;
}

static const struct dtxn_bench_ops tso_bench_ops = {
	.name = "tso",
	.desc = "timestamp oracle: one lib/tso timestamp per transaction (Scythe Fig. 28)",
	.opts = tso_opts,
	.n_opts = RTE_DIM(tso_opts),
	.conf_size = sizeof(struct tso_conf),
	.n_types = TSO_N_TYPES,
	.type_names = tso_type_names,
	.create = tso_bench_create,
	.destroy = tso_bench_destroy,
	.define = tso_bench_define,
	.load = tso_bench_load,
	.pick = tso_bench_pick,
	.run = tso_bench_run,
	.check = tso_bench_check,
};

DTXN_BENCH_REGISTER(tso, &tso_bench_ops);
