/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ucx fabric driver: registration, fabric open/close, MN regions and the
 * driver's counters. open: read UCX's configuration from the environment
 * (UCX_TLS, ...), create the context (RMA, 64-bit atomics, active messages,
 * wakeup) and the serve worker, allocate and map the region of every MN
 * this process serves, start the control thread (listeners, serve worker),
 * and, for a process that serves no MN, fetch every MN's connect message
 * now, so that an MN that does not answer fails the open (ETIMEDOUT) rather
 * than the first QP.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_malloc.h>

#include "dtxn_fabric_ucx.h"
#include "ucx_private.h"

RTE_LOG_REGISTER(dtxn_ucx_logtype, dtxn.fabric.ucx, NOTICE);

static const struct dtxn_fabric_ops ucx_ops;

static void
ucx_region_close(struct ucx_fabric *uf, struct ucx_region *r)
{
	if (r->rkey_buf != NULL)
		ucp_rkey_buffer_release(r->rkey_buf);
	if (r->memh != NULL)
		ucp_mem_unmap(uf->ctx, r->memh);
	rte_free(r->base);
	memset(r, 0, sizeof(*r));
}

/* Allocates (zeroed) and maps MN @p mn's region, packs its rkey. */
static int
ucx_region_open(struct ucx_fabric *uf, const struct dtxn_fabric_conf *conf, uint16_t mn)
{
	struct ucx_region *r = &uf->mn[mn];
	ucp_mem_map_params_t mp = { 0 };
	ucs_status_t st;

	r->base = rte_zmalloc_socket("dtxn_ucx_mn", conf->mn_region_size, RTE_CACHE_LINE_SIZE,
				     conf->socket_id);
	if (r->base == NULL)
		return -ENOMEM;
	r->len = conf->mn_region_size;
	mp.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH;
	mp.address = r->base;
	mp.length = r->len;
	st = ucp_mem_map(uf->ctx, &mp, &r->memh);
	if (st != UCS_OK) {
		r->memh = NULL;
		dtxn_fabric_open_error_set("--fabric ucx: mn%u: ucp_mem_map of %" PRIu64 " B: %s",
					   mn, r->len, ucs_status_string(st));
		return -ENOMEM;
	}
	st = ucp_rkey_pack(uf->ctx, r->memh, &r->rkey_buf, &r->rkey_len);
	if (st != UCS_OK || r->rkey_len > UCX_MSG_RKEY_MAX) {
		dtxn_fabric_open_error_set("--fabric ucx: mn%u: ucp_rkey_pack: %s", mn,
					   st != UCS_OK ? ucs_status_string(st) : "rkey too large");
		return -EIO;
	}
	return 0;
}

static void ucx_close(struct dtxn_fabric *f);

static int
ucx_context_open(struct ucx_fabric *uf)
{
	ucp_params_t p = { 0 };
	ucp_worker_params_t wp = { 0 };
	ucp_am_handler_param_t hp = { 0 };
	ucp_config_t *cfg;
	ucs_status_t st;

	st = ucp_config_read(NULL, NULL, &cfg);
	if (st != UCS_OK) {
		dtxn_fabric_open_error_set("--fabric ucx: UCX configuration (UCX_* variables): %s",
					   ucs_status_string(st));
		return -EINVAL;
	}
	p.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED;
	p.features = UCP_FEATURE_RMA | UCP_FEATURE_AMO64 | UCP_FEATURE_AM | UCP_FEATURE_WAKEUP;
	p.mt_workers_shared = 1; /* one worker per lcore, and the control thread's */
	st = ucp_init(&p, cfg, &uf->ctx);
	ucp_config_release(cfg);
	if (st != UCS_OK) {
		uf->ctx = NULL;
		dtxn_fabric_open_error_set("--fabric ucx: ucp_init: %s (is UCX_TLS valid here?)",
					   ucs_status_string(st));
		return -ENODEV;
	}
	wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
	wp.thread_mode = UCS_THREAD_MODE_SINGLE; /* the control thread only */
	st = ucp_worker_create(uf->ctx, &wp, &uf->serve);
	if (st != UCS_OK) {
		uf->serve = NULL;
		dtxn_fabric_open_error_set("--fabric ucx: ucp_worker_create: %s", ucs_status_string(st));
		return -ENODEV;
	}
	st = ucp_worker_get_address(uf->serve, &uf->serve_addr, &uf->serve_addr_len);
	if (st != UCS_OK || uf->serve_addr_len > UCX_MSG_WADDR_MAX) {
		uf->serve_addr = NULL;
		dtxn_fabric_open_error_set("--fabric ucx: worker address: %s",
					   st != UCS_OK ? ucs_status_string(st) : "too large");
		return -EIO;
	}
	hp.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
			UCP_AM_HANDLER_PARAM_FIELD_ARG;
	hp.id = UCX_AM_SEND;
	hp.cb = ucx_am_recv;
	hp.arg = uf;
	st = ucp_worker_set_am_recv_handler(uf->serve, &hp);
	if (st == UCS_OK) {
		hp.id = UCX_AM_VERB;
		hp.cb = ucx_verb_serve;
		st = ucp_worker_set_am_recv_handler(uf->serve, &hp);
	}
	if (st != UCS_OK) {
		dtxn_fabric_open_error_set("--fabric ucx: active-message handler: %s",
					   ucs_status_string(st));
		return -EIO;
	}
	st = ucp_worker_get_efd(uf->serve, &uf->serve_efd);
	if (st != UCS_OK) {
		dtxn_fabric_open_error_set("--fabric ucx: worker event fd: %s", ucs_status_string(st));
		return -EIO;
	}
	return 0;
}

/* *@p ns from environment variable @p name in microseconds (0..1 s), or @p dflt. */
static int
ucx_env_us(const char *name, uint64_t dflt, uint64_t *ns)
{
	const char *v = getenv(name);
	unsigned long us = dflt;
	char *end = NULL;

	if (v != NULL) {
		errno = 0;
		us = strtoul(v, &end, 10);
		if (*v == '\0' || *v == '-' || *end != '\0' || errno != 0 || us > 1000000) {
			dtxn_fabric_open_error_set("%s '%s': expected 0..1000000 (microseconds)", name, v);
			return -EINVAL;
		}
	}
	*ns = (uint64_t)us * 1000;
	return 0;
}

static struct dtxn_fabric *
ucx_open(const struct dtxn_fabric_conf *conf)
{
	const struct dtxn_fabric_rdma_conf *rc = conf->rdma;
	struct ucx_fabric *uf;
	unsigned i;
	int rc_;

	uf = rte_zmalloc("ucx_fabric", sizeof(*uf), RTE_CACHE_LINE_SIZE);
	if (uf == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	uf->base.ops = &ucx_ops; /* ucx_close() before lib/fabric fills it */
	uf->base.posted_lost = true; /* what UCX had not sent dies with the process: dtxn_fabric_posted_survives() */
	/* an lcore whose WRs all wait sleeps on its worker's event fd: on by
	 * default (TCP: the targets' CPUs need the cores); 0 keeps it spinning */
	uf->block = getenv("DTXN_UCX_BLOCK") == NULL || strcmp(getenv("DTXN_UCX_BLOCK"), "0") != 0;
	/* verbs as the driver's messages (fenceable at the MN) unless UCP's
	 * RMA is asked for (DTXN_UCX_VERBS=rma: on RDMA, the NIC's verbs) */
	uf->am_verbs = getenv("DTXN_UCX_VERBS") == NULL || strcmp(getenv("DTXN_UCX_VERBS"), "rma") != 0;
	rte_spinlock_init(&uf->lock);
	pthread_mutex_init(&uf->connect_lock, NULL);
	STAILQ_INIT(&uf->parked);
	uf->epfd = uf->stop_fd = -1;
	for (i = 0; i < DTXN_MAX_NODES; i++)
		uf->listen_fd[i] = -1;
	/* before sleeping, an idle worker polls DTXN_UCX_SPIN_US (0: sleeps
	 * at once); by default only where there are cores to spare */
	rc_ = ucx_env_us("DTXN_UCX_SPIN_US",
			 sysconf(_SC_NPROCESSORS_ONLN) >= UCX_SPIN_MIN_CPUS ? UCX_SPIN_US_DEFAULT : 0,
			 &uf->spin_ns);
	if (rc_ != 0)
		goto fail;
	uf->n_mn = conf->n_mn;
	uf->n_nodes = conf->n_mn + conf->n_cn;
	uf->serve_mask = rc != NULL && rc->serve != 0 ? rc->serve :
			 dtxn_fabric_node_mask(uf->n_nodes);
	uf->take_over = rc != NULL ? rc->take_over & uf->serve_mask &
					     ~dtxn_fabric_node_mask(uf->n_mn) : 0;
	uf->digest = ucx_msg_digest(rc != NULL && rc->run_desc != NULL ? rc->run_desc : "");
	uf->connect_timeout_ns = (uint64_t)(rc != NULL && rc->connect_timeout_ms != 0 ?
					    rc->connect_timeout_ms : 10000) * 1000000;
	for (i = 0; i < uf->n_nodes; i++) {
		const char *a = rc != NULL ? rc->node_addr[i] : NULL;

		rc_ = dtxn_fabric_node_sockaddr(a, (uint16_t)i, "ucx", &uf->addr[i]);
		if (rc_ != 0)
			goto fail;
		/* a node served here without an address (--role all): any free
		 * port of loopback, so that runs side by side never collide */
		if (a == NULL && (uf->serve_mask >> i & 1))
			uf->addr[i].sin_port = 0;
	}
	rc_ = ucx_context_open(uf);
	if (rc_ != 0)
		goto fail;
	for (i = 0; i < uf->n_mn; i++) {
		if (!(uf->serve_mask >> i & 1))
			continue;
		rc_ = ucx_region_open(uf, conf, (uint16_t)i);
		if (rc_ != 0)
			goto fail;
	}
	if (uf->serve_mask & ((UINT64_C(1) << uf->n_mn) - 1))
		UCX_LOG(INFO, "no device memory in UCX 1.13: the timestamp words of each MN live in host memory");
	rc_ = ucx_ctl_start(uf);
	if (rc_ == 0)
		rc_ = ucx_take_over(uf); /* before any HELLO of this process */
	if (rc_ != 0)
		goto fail;
	/* a process that serves no MN (a CN): every MN must answer now */
	for (i = 0; i < uf->n_mn && !(uf->serve_mask & ((UINT64_C(1) << uf->n_mn) - 1)); i++) {
		const struct ucx_remote *r;
		uint16_t self = (uint16_t)__builtin_ctzll(uf->serve_mask);

		rc_ = ucx_remote_get(uf, self, (uint16_t)i, false, &r);
		if (rc_ != 0)
			goto fail;
	}
	UCX_LOG(INFO, "fabric %s: %u MNs x %" PRIu64 " B, %u CNs", conf->name, conf->n_mn,
		conf->mn_region_size, conf->n_cn);
	return &uf->base;
fail:
	ucx_close(&uf->base);
	rte_errno = -rc_;
	return NULL;
}

static void
ucx_close(struct dtxn_fabric *f)
{
	struct ucx_fabric *uf = UCX_FABRIC(f);
	struct ucx_inmsg *m;

	ucx_ctl_stop(uf);
	while ((m = STAILQ_FIRST(&uf->parked)) != NULL) {
		STAILQ_REMOVE_HEAD(&uf->parked, next);
		free(m);
	}
	ucx_remote_forget(uf);
	for (unsigned i = 0; i < DTXN_MAX_NODES; i++)
		if (uf->mn[i].base != NULL)
			ucx_region_close(uf, &uf->mn[i]);
	if (uf->serve_addr != NULL)
		ucp_worker_release_address(uf->serve, uf->serve_addr);
	if (uf->serve != NULL)
		ucp_worker_destroy(uf->serve);
	if (uf->ctx != NULL)
		ucp_cleanup(uf->ctx);
	pthread_mutex_destroy(&uf->connect_lock);
	rte_free(uf);
}

static void *
ucx_mn_base(struct dtxn_fabric *f, uint16_t mn)
{
	return UCX_FABRIC(f)->mn[mn].base;
}

static void
ucx_publish(struct dtxn_fabric *f)
{
	__atomic_store_n(&UCX_FABRIC(f)->published, true, __ATOMIC_RELEASE);
}

bool
dtxn_ucx_is(const struct dtxn_fabric *f)
{
	return f != NULL && f->ops == &ucx_ops;
}

int
dtxn_ucx_stats_get(const struct dtxn_fabric *f, struct dtxn_ucx_stats *s)
{
	const struct ucx_fabric *uf = (const struct ucx_fabric *)f;

	if (!dtxn_ucx_is(f) || s == NULL)
		return -EINVAL;
	s->fences = __atomic_load_n(&uf->fences, __ATOMIC_RELAXED);
	s->flushes = __atomic_load_n(&uf->flushes, __ATOMIC_RELAXED);
	s->mcas_loop_cas = __atomic_load_n(&uf->mcas_loop_cas, __ATOMIC_RELAXED);
	s->dropped = __atomic_load_n(&uf->dropped, __ATOMIC_RELAXED);
	s->wakeups = __atomic_load_n(&uf->wakeups, __ATOMIC_RELAXED);
	s->verb_msgs = __atomic_load_n(&uf->verb_msgs, __ATOMIC_RELAXED);
	s->verbs_in_msgs = __atomic_load_n(&uf->verbs_in_msgs, __ATOMIC_RELAXED);
	s->verb_refused = __atomic_load_n(&uf->verb_refused, __ATOMIC_RELAXED);
	return 0;
}

int
dtxn_ucx_incarnation(const struct dtxn_fabric *f, uint16_t node, uint32_t *inc)
{
	const struct ucx_fabric *uf = (const struct ucx_fabric *)f;

	if (!dtxn_ucx_is(f) || inc == NULL || node < uf->n_mn || node >= uf->n_nodes)
		return -EINVAL;
	if (!(__atomic_load_n(&uf->self_inc_known, __ATOMIC_ACQUIRE) >> node & 1))
		return -ENOENT;
	*inc = uf->self_inc[node];
	return 0;
}

static const struct dtxn_fabric_ops ucx_ops = {
	.name = "ucx",
	.open = ucx_open,
	.close = ucx_close,
	.mn_base = ucx_mn_base,
	.cq_create = ucx_cq_create,
	.cq_destroy = ucx_cq_destroy,
	.qp_create = ucx_qp_create,
	.qp_destroy = ucx_qp_destroy,
	.post = ucx_qp_post,
	.post_recv = ucx_qp_post_recv,
	.poll = ucx_cq_poll,
	.publish = ucx_publish,
	.fence_node = ucx_fence_node,
};

DTXN_FABRIC_REGISTER(ucx, &ucx_ops);
