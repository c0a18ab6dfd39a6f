/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The MN side of CN-to-MN messages (dtxn_rpc.h, "The MN side"): a CQ, one
 * RC QP per (CN, worker index) paired with that worker's QP to this MN,
 * RECV buffers for every request the workers' endpoints may have
 * outstanding, and a poll that hands each burst of requests to one batch
 * handler before answering them (inline SENDs, as rpc.c answers).
 *
 * Wire format: rpc.c's (struct dtxn_rpc_hdr, rpc_msg_decode()). A reply
 * echoes the request's endpoint, slot, sequence and worker index, so the
 * CN's rpc finds the waiting slot as it does for a CN's reply.
 */
#include <errno.h>
#include <string.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_log.h>
#include <rte_malloc.h>

#include "dtxn_fabric.h"
#include "dtxn_sched.h"
#include "rpc_private.h"

RTE_LOG_REGISTER(dtxn_rpc_srv_logtype, dtxn.rpc.srv, INFO);
#define SRV_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_##level, dtxn_rpc_srv_logtype, "dtxn.rpc.srv: " fmt "\n", ##__VA_ARGS__)

/** Spare RECVs per QP besides one per slot of every endpoint of the worker. */
#define SRV_RECV_SPARE 8

/** The QP to one worker of one CN. */
struct srv_qp {
	struct dtxn_qp *qp;
	uint16_t node;
	uint16_t worker;
	struct rpc_rbuf *rbufs;   /**< owner: this srv_qp */
};

struct dtxn_rpc_srv {
	struct dtxn_fabric *f;
	struct dtxn_cq *cq;
	struct dtxn_sched *sched;
	uint16_t mn;
	unsigned n_qps;
	unsigned n_rbufs;          /**< per QP */
	struct srv_qp *qps;
	dtxn_rpc_srv_batch_fn fn;
	void *arg;
	void (*cqe_fn)(void *arg, const struct dtxn_cqe *cqe);
	unsigned batch_n;          /**< messages of the batch being handled (dtxn_rpc_srv_defer()) */
	struct dtxn_rpc_stats st;
	/* one poll's batch */
	struct dtxn_cqe cqes[DTXN_RPC_SRV_BURST];
	struct dtxn_rpc_srv_msg msgs[DTXN_RPC_SRV_BURST];
	struct dtxn_rpc_hdr hdrs[DTXN_RPC_SRV_BURST];
	struct rpc_rbuf *from[DTXN_RPC_SRV_BURST];
	uint8_t out[DTXN_RPC_SRV_BURST][DTXN_WR_INLINE_MAX] __rte_aligned(8);
};

static inline struct srv_qp *
srv_qp_of(const struct rpc_rbuf *rb)
{
	return rb->owner;
}

static void
srv_repost(struct rpc_rbuf *rb)
{
	rb->wr.next = NULL;
	if (dtxn_qp_post_recv(srv_qp_of(rb)->qp, &rb->wr) != 0)
		SRV_LOG(ERR, "RECV from node %u not reposted", srv_qp_of(rb)->node);
}

static void
srv_free(struct dtxn_rpc_srv *srv)
{
	for (unsigned i = 0; i < srv->n_qps; i++) {
		if (srv->qps[i].qp != NULL)
			dtxn_qp_destroy(srv->qps[i].qp);
		rte_free(srv->qps[i].rbufs);
	}
	rte_free(srv->qps);
	dtxn_cq_destroy(srv->cq);
	rte_free(srv);
}

static int
srv_qp_init(struct dtxn_rpc_srv *srv, struct srv_qp *sq, uint16_t node, uint16_t worker,
	    unsigned depth, int socket_id)
{
	sq->node = node;
	sq->worker = worker;
	sq->qp = dtxn_qp_create(srv->f, srv->cq, srv->mn, node, depth);
	if (sq->qp == NULL)
		return -rte_errno;
	return rpc_rbufs_post(sq->qp, sq, srv->n_rbufs, socket_id, &sq->rbufs);
}

/* RECVs per QP, the QPs' depth and the CQ's: what dtxn_rpc_srv_create() sizes; -EINVAL if too many. */
static int
srv_sizes(unsigned n_cn, unsigned workers_per_cn, unsigned max_eps, unsigned *n_rbufs,
	  unsigned *depth, unsigned *cq_depth)
{
	uint64_t n = (uint64_t)max_eps * DTXN_RPC_SLOTS + SRV_RECV_SPARE;

	if (workers_per_cn == 0 || max_eps == 0 || workers_per_cn > UINT16_MAX || n_cn == 0 ||
	    n + 64 > 65536)
		return -EINVAL;
	*n_rbufs = (unsigned)n;
	*depth = rte_align32pow2((uint32_t)n + 64);
	/* every RECV of every QP may complete before a poll */
	*cq_depth = (unsigned)RTE_MIN(rte_align64pow2(n * n_cn * workers_per_cn + 64),
				      (uint64_t)65536);
	return 0;
}

int
dtxn_rpc_srv_footprint(unsigned n_cn, unsigned workers_per_cn, unsigned max_eps,
		       struct dtxn_footprint *fp)
{
	const uint64_t slack = DTXN_FOOTPRINT_ALLOC_SLACK;
	unsigned n_rbufs, depth, cq_depth;
	uint64_t n_qps = (uint64_t)n_cn * workers_per_cn;

	if (fp == NULL || srv_sizes(n_cn, workers_per_cn, max_eps, &n_rbufs, &depth, &cq_depth) != 0)
		return -EINVAL;
	fp->bytes += sizeof(struct dtxn_rpc_srv) + slack + sizeof(struct srv_qp) * n_qps + slack +
		     n_qps * (sizeof(struct rpc_rbuf) * n_rbufs + slack);
	dtxn_fabric_queue_footprint(0, cq_depth, fp);          /* the CQ */
	dtxn_fabric_queue_footprint((unsigned)n_qps, depth, fp); /* the QPs (and a CQ: a bound) */
	return 0;
}

struct dtxn_rpc_srv *
dtxn_rpc_srv_create(struct dtxn_fabric *f, const struct dtxn_rpc_srv_conf *conf)
{
	const struct dtxn_fabric_conf *fc;
	struct dtxn_rpc_srv *srv;
	unsigned n_rbufs, depth, cq_depth;
	int rc = -EINVAL;

	if (f == NULL || conf == NULL || conf->size < sizeof(*conf) || conf->fn == NULL)
		goto fail0;
	fc = dtxn_fabric_conf(f);
	if (conf->mn_node >= fc->n_mn ||
	    srv_sizes(fc->n_cn, conf->workers_per_cn, conf->max_eps, &n_rbufs, &depth,
		      &cq_depth) != 0)
		goto fail0;
	srv = rte_zmalloc_socket("dtxn_rpc_srv", sizeof(*srv), RTE_CACHE_LINE_SIZE,
				 conf->socket_id);
	if (srv == NULL) {
		rc = -ENOMEM;
		goto fail0;
	}
	srv->f = f;
	srv->mn = conf->mn_node;
	srv->sched = conf->sched;
	srv->fn = conf->fn;
	srv->arg = conf->arg;
	srv->cqe_fn = conf->cqe_fn;
	srv->n_rbufs = n_rbufs;
	srv->cq = dtxn_cq_create(f, conf->socket_id, cq_depth);
	srv->qps = rte_zmalloc_socket("dtxn_srv_qps",
				      sizeof(*srv->qps) * fc->n_cn * conf->workers_per_cn,
				      RTE_CACHE_LINE_SIZE, conf->socket_id);
	if (srv->cq == NULL || srv->qps == NULL) {
		rc = srv->cq == NULL ? -rte_errno : -ENOMEM;
		goto fail;
	}
	/* CN by CN, worker k's QP k: the k-th QP MN -> CN pairs with the k-th CN -> MN */
	for (uint16_t cn = 0; cn < fc->n_cn; cn++)
		for (unsigned k = 0; k < conf->workers_per_cn; k++) {
			rc = srv_qp_init(srv, &srv->qps[srv->n_qps++], (uint16_t)(fc->n_mn + cn),
					 (uint16_t)k, depth, conf->socket_id);
			if (rc != 0)
				goto fail;
		}
	return srv;
fail:
	srv_free(srv);
fail0:
	rte_errno = -rc;
	return NULL;
}

void
dtxn_rpc_srv_destroy(struct dtxn_rpc_srv *srv)
{
	if (srv != NULL)
		srv_free(srv);
}

/* Posts reply @p r with @p len payload bytes at @p payload on @p sq, inline. */
static int
srv_send(struct dtxn_rpc_srv *srv, struct srv_qp *sq, struct dtxn_rpc_hdr r, const void *payload,
	 uint32_t len, uint8_t *buf)
{
	struct dtxn_wr wr;
	int rc;

	r.kind = RPC_KIND_RESP;
	r.len = (uint16_t)len;
	memcpy(buf, &r, sizeof(r));
	if (len != 0 && payload != buf + sizeof(r))
		memcpy(buf + sizeof(r), payload, len);
	memset(&wr, 0, sizeof(wr));
	wr.opcode = DTXN_WR_SEND;
	wr.flags = DTXN_WR_F_INLINE; /* copied now; completes silently */
	wr.local = buf;
	wr.len = (uint32_t)sizeof(r) + len;
	dtxn_sched_charge_op(srv->sched, DTXN_CPU_WR, 1); /* sim only */
	dtxn_sched_charge_op(srv->sched, DTXN_CPU_DOORBELL, 1);
	rc = dtxn_qp_post(sq->qp, &wr);
	if (rc != 0)
		SRV_LOG(WARNING, "reply to node %u not posted", sq->node);
	return rc;
}

/* Answers message @p i of the batch (its handler's reply), inline. */
static void
srv_reply(struct dtxn_rpc_srv *srv, unsigned i)
{
	const struct dtxn_rpc_srv_msg *m = &srv->msgs[i];

	if (m->resp_len < 0)
		return;
	if (m->resp_len > (int)DTXN_RPC_RESP_MAX) {
		srv->st.bad++;
		SRV_LOG(ERR, "handler returned %d reply bytes", m->resp_len);
		return;
	}
	(void)srv_send(srv, srv_qp_of(srv->from[i]), srv->hdrs[i], m->resp,
		       (uint32_t)m->resp_len, srv->out[i]);
}

/* A deferred request's reply context (struct dtxn_rpc_srv_later). */
struct srv_later {
	struct dtxn_rpc_hdr h;
	uint32_t qp;
	uint32_t magic;
};
_Static_assert(sizeof(struct srv_later) <= sizeof(struct dtxn_rpc_srv_later), "later");
#define SRV_LATER_MAGIC 0x1a7e5eedu

int
dtxn_rpc_srv_defer(struct dtxn_rpc_srv *srv, const struct dtxn_rpc_srv_msg *m,
		   struct dtxn_rpc_srv_later *later)
{
	struct srv_later l;
	size_t i;

	if (srv == NULL || m == NULL || later == NULL || m < srv->msgs ||
	    m >= srv->msgs + srv->batch_n)
		return -EINVAL;
	i = (size_t)(m - srv->msgs);
	memset(&l, 0, sizeof(l));
	l.h = srv->hdrs[i];
	l.qp = (uint32_t)(srv_qp_of(srv->from[i]) - srv->qps);
	l.magic = SRV_LATER_MAGIC;
	memset(later, 0, sizeof(*later));
	memcpy(later, &l, sizeof(l));
	return 0;
}

int
dtxn_rpc_srv_reply_later(struct dtxn_rpc_srv *srv, const struct dtxn_rpc_srv_later *later,
			 const void *resp, uint32_t len)
{
	uint8_t buf[DTXN_WR_INLINE_MAX] __rte_aligned(8);
	struct srv_later l;

	if (srv == NULL || later == NULL || (resp == NULL && len != 0) ||
	    len > DTXN_RPC_RESP_MAX)
		return -EINVAL;
	memcpy(&l, later, sizeof(l));
	if (l.magic != SRV_LATER_MAGIC || l.qp >= srv->n_qps)
		return -EINVAL;
	return srv_send(srv, &srv->qps[l.qp], l.h, resp, len, buf);
}

unsigned
dtxn_rpc_srv_poll(struct dtxn_rpc_srv *srv)
{
	unsigned n, k = 0;

	if (srv == NULL)
		return 0;
	n = dtxn_cq_poll(srv->cq, srv->cqes, DTXN_RPC_SRV_BURST);
	for (unsigned i = 0; i < n; i++) {
		const struct dtxn_cqe *cqe = &srv->cqes[i];
		struct rpc_rbuf *rb = (struct rpc_rbuf *)(uintptr_t)cqe->wr_id;
		struct dtxn_rpc_hdr *h = &srv->hdrs[k];

		if (cqe->opcode != DTXN_WR_RECV || rb == NULL) {
			/* replies are inline and unsignaled: only errors; or the owner's WRs */
			if (srv->cqe_fn != NULL && cqe->opcode != DTXN_WR_SEND && cqe->wr_id != 0)
				srv->cqe_fn(srv->arg, cqe);
			continue;
		}
		if (cqe->status != DTXN_WC_SUCCESS) {
			if (cqe->status != DTXN_WC_WR_FLUSH_ERR) {
				srv->st.bad++;
				srv_repost(rb);
			}
			continue;
		}
		dtxn_sched_charge_op(srv->sched, DTXN_CPU_MSG, 1); /* sim only */
		if (rpc_msg_decode(rb->data, RTE_MIN(cqe->byte_len, (uint32_t)RPC_MSG_MAX),
				   srv_qp_of(rb)->worker, h) != RPC_KIND_REQ) {
			srv->st.bad++;
			SRV_LOG(WARNING, "malformed or misrouted message from node %u dropped",
				srv_qp_of(rb)->node);
			srv_repost(rb);
			continue;
		}
		srv->from[k] = rb;
		srv->msgs[k] = (struct dtxn_rpc_srv_msg){
			.src_node = srv_qp_of(rb)->node, .worker = srv_qp_of(rb)->worker,
			.type = h->type,
			.req = rb->data + sizeof(*h), .len = h->len,
			.resp = srv->out[k] + sizeof(*h), .resp_len = -1,
		};
		k++;
	}
	if (k == 0)
		return 0;
	srv->st.req_handled += k;
	srv->batch_n = k;
	srv->fn(srv->arg, srv->msgs, k);
	srv->batch_n = 0;
	for (unsigned i = 0; i < k; i++) {
		srv_reply(srv, i);
		srv_repost(srv->from[i]);
	}
	return k;
}

struct dtxn_cq *
dtxn_rpc_srv_cq(const struct dtxn_rpc_srv *srv)
{
	return srv == NULL ? NULL : srv->cq;
}

void
dtxn_rpc_srv_stats_get(const struct dtxn_rpc_srv *srv, struct dtxn_rpc_stats *st)
{
	if (srv != NULL && st != NULL)
		*st = srv->st;
}
