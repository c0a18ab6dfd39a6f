/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RRPC to the MNs, the MN side (dtxn_rrpc.h, "RRPC to the MNs"; Scythe
 * §4.6: the Lock RPC's requests WRITten into rings in MN memory, polled by
 * the MN's CPU). One Rocket per CN worker: its inbound ring in this MN's
 * message area (rrpc_mn_ring_off()), its outbound ring the worker's ring
 * for this MN in the CN's registered memory. A poll takes every complete
 * bucket, hands the requests to the batch handler DTXN_RPC_SRV_BURST at a
 * time (payloads copied out, so a bucket is zeroed as soon as it is read),
 * appends the replies to the requesters' Rockets, and posts each Rocket's
 * buckets as one chain of WRITEs.
 */
#include <errno.h>
#include <string.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_log.h>
#include <rte_malloc.h>

#include "rpc_private.h"
#include "rrpc_peer.h"

struct rrpc_mn_req {
	struct rrpc_peer *p;
	struct rrpc_msg_hdr h;
	uint8_t req[DTXN_RRPC_REQ_MAX] __rte_aligned(8);
	uint8_t resp[DTXN_RPC_RESP_MAX] __rte_aligned(8);
};

struct dtxn_rrpc_mn {
	struct dtxn_rrpc_domain *d;        /**< at create only: the service outlives it safely */
	struct dtxn_fabric *f;
	unsigned max_workers;
	uint16_t mn;
	struct dtxn_rrpc_mn_conf conf;
	struct rrpc_io io;
	struct dtxn_rrpc_stats st;
	unsigned n_cn;
	unsigned n_peers;                  /**< n_cn x max_workers */
	struct dtxn_qp *qp[DTXN_MAX_NODES]; /**< to each CN, by node id */
	struct rrpc_peer *peers;           /**< [cn_idx * max_workers + k] */
	bool watched;
	bool shared;                       /**< multi-process: CN memory attached on first use */
	uint64_t cn_bytes;                 /**< bytes of a CN's message memory */
	bool attached[DTXN_MAX_NODES];     /**< shared: CN memory registered, by node id */
	/* the batch being collected */
	unsigned n;
	unsigned handled;
	struct dtxn_rpc_srv_msg msgs[DTXN_RPC_SRV_BURST];
	struct rrpc_mn_req reqs[DTXN_RPC_SRV_BURST];
};

uint64_t
dtxn_rrpc_mn_area_bytes(unsigned n_cn, unsigned workers_per_cn, unsigned buckets)
{
	unsigned nb = buckets != 0 ? buckets : DTXN_RRPC_BUCKETS_DEFAULT;

	if (n_cn == 0 || n_cn > DTXN_MAX_NODES || workers_per_cn == 0 || workers_per_cn > 1024 ||
	    nb < 8 || nb > 4096 || (nb & (nb - 1)) != 0)
		return 0;
	return (uint64_t)n_cn * workers_per_cn * (RRPC_CTRL_BYTES + (uint64_t)nb * RRPC_BUCKET_BYTES);
}

/* A WRITE landed in the message area: wake the thread that polls it (sim). */
static void
rrpc_mn_on_write(void *arg, uint64_t off, uint32_t len)
{
	const struct dtxn_rrpc_mn *m = arg;

	RTE_SET_USED(off);
	RTE_SET_USED(len);
	dtxn_cq_kick(m->conf.cq);
}

/* Runs the handler on the batch collected and appends the replies. */
static void
rrpc_mn_run(struct dtxn_rrpc_mn *m)
{
	if (m->n == 0)
		return;
	m->conf.fn(m->conf.arg, m->msgs, m->n);
	for (unsigned i = 0; i < m->n; i++) {
		struct rrpc_mn_req *q = &m->reqs[i];
		int len = m->msgs[i].resp_len;
		struct rrpc_msg_hdr rh = q->h;

		if (len > (int)DTXN_RPC_RESP_MAX) {
			m->st.bad++;
			RRPC_LOG(ERR, "MN %u: handler returned %d reply bytes", m->mn, len);
			len = 0;
		}
		rh.kind = RRPC_KIND_RESP;
		rh.len = (uint16_t)(len < 0 ? 0 : len);
		if (rrpc_peer_append(&m->io, q->p, &rh, q->resp) != 0) {
			/* cannot happen while buckets >= outstanding requests / 2 (create checks) */
			m->st.bad++;
			RRPC_LOG(ERR, "MN %u: no ring room for a reply to node %u", m->mn,
				 q->p->node);
		}
	}
	m->handled += m->n;
	m->st.req_handled += m->n;
	m->n = 0;
}

struct rrpc_mn_rx {
	struct dtxn_rrpc_mn *m;
	struct rrpc_peer *p;
	uint16_t worker;
};

static void
rrpc_mn_on_msg(void *arg, const struct rrpc_msg_hdr *h, const uint8_t *payload)
{
	struct rrpc_mn_rx *x = arg;
	struct dtxn_rrpc_mn *m = x->m;
	struct rrpc_mn_req *q;

	if (h->kind != RRPC_KIND_REQ || h->type >= DTXN_RPC_TYPES) {
		m->st.bad++; /* an MN answers plain requests only */
		return;
	}
	if (m->n == DTXN_RPC_SRV_BURST)
		rrpc_mn_run(m);
	q = &m->reqs[m->n];
	q->p = x->p;
	q->h = *h;
	memcpy(q->req, payload, h->len);
	m->msgs[m->n] = (struct dtxn_rpc_srv_msg){
		.src_node = x->p->node, .worker = x->worker, .type = h->type,
		.req = q->req, .len = h->len, .resp = q->resp, .resp_len = -1,
	};
	m->n++;
}

/* Multi-process: whether CN @p node's memory is registered (looked up on first use). */
static bool
rrpc_mn_attach(struct dtxn_rrpc_mn *m, uint16_t node)
{
	int rc;

	if (m->attached[node])
		return true;
	rc = rrpc_shared_attach(m->f, node, m->cn_bytes);
	if (rc == 0 || rc == -EEXIST) {
		m->attached[node] = true;
		RRPC_LOG(DEBUG, "MN %u: CN %u's message memory attached", m->mn, node);
	} else if (rc != -ENOENT) {
		m->st.bad++;
	}
	return m->attached[node];
}

unsigned
dtxn_rrpc_mn_poll(struct dtxn_rrpc_mn *m)
{
	unsigned buckets = 0;

	if (m == NULL)
		return 0;
	m->handled = 0;
	for (unsigned i = 0; i < m->n_peers; i++) {
		struct rrpc_mn_rx x = {
			.m = m, .p = &m->peers[i], .worker = (uint16_t)(i % m->max_workers),
		};

		/* a CN posts only after reserving its memory: until found, nothing to take */
		if (m->shared && !rrpc_mn_attach(m, m->peers[i].node))
			continue;
		buckets += rrpc_peer_take(&m->io, &m->peers[i], rrpc_mn_on_msg, &x);
	}
	rrpc_mn_run(m);
	if (m->handled != 0)
		dtxn_sched_charge_op(m->io.sched, DTXN_CPU_MSG, m->handled); /* sim only */
	for (unsigned i = 0; i < m->n_peers; i++)
		if (rrpc_peer_needs_flush(&m->io, &m->peers[i]))
			rrpc_peer_flush(&m->io, &m->peers[i]);
	return m->handled != 0 ? m->handled : buckets;
}

void
dtxn_rrpc_mn_destroy(struct dtxn_rrpc_mn *m)
{
	if (m == NULL)
		return;
	if (m->watched)
		dtxn_fabric_mn_unwatch(m->f, m->mn);
	for (unsigned n = 0; m->shared && n < DTXN_MAX_NODES; n++)
		if (m->attached[n])
			dtxn_fabric_cn_mr_dereg(m->f, (uint16_t)n);
	for (unsigned i = 0; m->peers != NULL && i < m->n_peers; i++)
		rrpc_peer_free(&m->peers[i]);
	for (unsigned n = 0; n < DTXN_MAX_NODES; n++)
		if (m->qp[n] != NULL)
			dtxn_qp_destroy(m->qp[n]);
	rte_free(m->peers);
	rte_free(m);
}

/* The Rocket to CN worker (@p cn, @p k). */
static int
rrpc_mn_peer_init(struct dtxn_rrpc_mn *m, uint8_t *base, unsigned cn_idx, unsigned k)
{
	struct dtxn_rrpc_domain *d = m->d;
	struct rrpc_peer *p = &m->peers[cn_idx * d->max_workers + k];
	uint16_t node = (uint16_t)(d->n_mn + cn_idx);
	uint64_t rx = rrpc_mn_ring_off(d, cn_idx, k), tx = rrpc_ring_off(d, k, m->mn);
	int rc;

	p->node = node;
	p->own_qp = false;
	p->qp = m->qp[node];
	rc = rrpc_peer_alloc(&m->io, p, m->conf.socket_id);
	if (rc != 0)
		return rc;
	/* ours -> the worker: its ring for this MN in its CN's memory */
	p->tx_ring = DTXN_RADDR(node, tx + RRPC_CTRL_BYTES);
	p->credit_raddr = DTXN_RADDR(node, tx);
	/* the worker -> ours: its ring in our message area */
	p->rx_ring = base + rx + RRPC_CTRL_BYTES;
	p->credit_word = (const uint64_t *)(const void *)(base + rx);
	return 0;
}

struct dtxn_rrpc_mn *
dtxn_rrpc_mn_create(struct dtxn_rrpc_domain *d, const struct dtxn_rrpc_mn_conf *conf)
{
	struct dtxn_rrpc_mn *m = NULL;
	uint8_t *base;
	int rc = -EINVAL;

	if (d == NULL || conf == NULL || conf->size < sizeof(*conf) || conf->fn == NULL ||
	    conf->cq == NULL || d->mn_ring_off == 0 || conf->mn >= d->n_mn)
		goto fail;
	base = dtxn_fabric_mn_base(d->f, conf->mn);
	if (base == NULL)
		goto fail;
	m = rte_zmalloc_socket("dtxn_rrpc_mn", sizeof(*m), RTE_CACHE_LINE_SIZE, conf->socket_id);
	if (m == NULL) {
		rc = -ENOMEM;
		goto fail;
	}
	m->d = d;
	m->f = d->f;
	m->max_workers = d->max_workers;
	m->mn = conf->mn;
	m->conf = *conf;
	m->io.nb = d->nb;
	m->io.sched = conf->sched;
	m->io.st = &m->st;
	m->n_cn = d->n_nodes - d->n_mn;
	m->shared = d->shared;
	m->cn_bytes = d->region_bytes;
	m->n_peers = m->n_cn * d->max_workers;
	m->peers = rte_zmalloc_socket("dtxn_rrpc_mn_peers", sizeof(*m->peers) * m->n_peers,
				      RTE_CACHE_LINE_SIZE, conf->socket_id);
	if (m->peers == NULL) {
		rc = -ENOMEM;
		goto fail;
	}
	for (unsigned c = 0; c < m->n_cn; c++) {
		uint16_t node = (uint16_t)(d->n_mn + c);

		/* one QP per CN: every worker's ring is in that CN's memory */
		m->qp[node] = dtxn_qp_create(d->f, conf->cq, conf->mn, node,
					     RTE_MIN(rte_align32pow2(2 * d->nb * d->max_workers + 64), 65536u));
		if (m->qp[node] == NULL) {
			rc = -rte_errno;
			goto fail;
		}
		for (unsigned k = 0; k < d->max_workers; k++) {
			rc = rrpc_mn_peer_init(m, base, c, k);
			if (rc != 0)
				goto fail;
		}
	}
	rc = dtxn_fabric_mn_watch(d->f, conf->mn, d->mn_ring_off,
				  rrpc_mn_ring_off(d, m->n_cn, 0) - d->mn_ring_off,
				  rrpc_mn_on_write, m);
	if (rc != 0)
		goto fail;
	m->watched = true;
	return m;
fail:
	dtxn_rrpc_mn_destroy(m);
	rte_errno = -rc;
	return NULL;
}

void
dtxn_rrpc_mn_stats_get(const struct dtxn_rrpc_mn *m, struct dtxn_rrpc_stats *st)
{
	if (m != NULL && st != NULL)
		*st = m->st;
}

size_t
rrpc_mn_size(void)
{
	return sizeof(struct dtxn_rrpc_mn);
}
