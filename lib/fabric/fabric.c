/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/fabric generic layer: the driver registry, fabric/CQ/QP life cycle,
 * the WR-chain checks every driver relies on, per-QP counters and dispatch
 * to the driver's ops (dtxn_fabric.h, dtxn_fabric_driver.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_log.h>
#include <rte_memory.h>
#include <rte_string_fns.h>

#include "dtxn_fabric.h"
#include "dtxn_fabric_driver.h"
#include "dtxn_sched.h"
#include "fabric_private.h"

RTE_LOG_REGISTER(dtxn_fabric_logtype, dtxn.fabric, NOTICE);

/** Most fabric drivers that can be registered. */
#define FABRIC_MAX_DRIVERS 8

/** Reason of this thread's last failed dtxn_fabric_open(). */
static __thread char g_fabric_open_error[256];

static const struct dtxn_fabric_ops *g_fabric_drivers[FABRIC_MAX_DRIVERS];
static unsigned g_fabric_n_drivers;

static const char *const g_fabric_opcode_names[DTXN_WR_OP_MAX] = {
	[DTXN_WR_READ] = "read",
	[DTXN_WR_WRITE] = "write",
	[DTXN_WR_CAS] = "cas",
	[DTXN_WR_FAA] = "faa",
	[DTXN_WR_MASKED_CAS] = "masked_cas",
	[DTXN_WR_SEND] = "send",
	[DTXN_WR_RECV] = "recv",
};

int
dtxn_fabric_register(const struct dtxn_fabric_ops *ops)
{
	unsigned i;

	if (ops == NULL || ops->name == NULL || ops->name[0] == '\0' ||
	    ops->open == NULL || ops->close == NULL || ops->mn_base == NULL ||
	    ops->cq_create == NULL || ops->cq_destroy == NULL ||
	    ops->qp_create == NULL || ops->qp_destroy == NULL ||
	    ops->post == NULL || ops->post_recv == NULL || ops->poll == NULL)
		return -EINVAL;
	for (i = 0; i < g_fabric_n_drivers; i++)
		if (strcmp(g_fabric_drivers[i]->name, ops->name) == 0)
			return -EEXIST;
	if (g_fabric_n_drivers == FABRIC_MAX_DRIVERS)
		return -ENOSPC;
	/* in name order, whatever order the constructors ran in (LTO reverses it) */
	for (i = g_fabric_n_drivers++; i > 0 && strcmp(g_fabric_drivers[i - 1]->name, ops->name) > 0; i--)
		g_fabric_drivers[i] = g_fabric_drivers[i - 1];
	g_fabric_drivers[i] = ops;
	return 0;
}

const struct dtxn_fabric_ops *
dtxn_fabric_driver_find(const char *name)
{
	unsigned i;

	if (name == NULL)
		return NULL;
	for (i = 0; i < g_fabric_n_drivers; i++)
		if (strcmp(g_fabric_drivers[i]->name, name) == 0)
			return g_fabric_drivers[i];
	return NULL;
}

void
dtxn_fabric_driver_list(char *buf, size_t len)
{
	size_t used = 0;

	if (buf == NULL || len == 0)
		return;
	buf[0] = '\0';
	for (unsigned i = 0; i < g_fabric_n_drivers; i++) {
		int n = snprintf(buf + used, len - used, "%s%s", i ? "," : "",
				 g_fabric_drivers[i]->name);

		if (n < 0 || (size_t)n >= len - used)
			break;
		used += (size_t)n;
	}
}

void
dtxn_fabric_footprint(const struct dtxn_fabric_conf *conf, struct dtxn_footprint *fp)
{
	uint64_t region = RTE_ALIGN_CEIL(conf->mn_region_size, RTE_PGSIZE_4K) + RTE_PGSIZE_4K;
	/* multi-process: only the regions this process allocates (mn_own) */
	unsigned n_own = conf->multi_process ?
		(unsigned)__builtin_popcountll(conf->mn_own) : conf->n_mn;

	const struct dtxn_fabric_ops *ops = dtxn_fabric_driver_find(conf->driver);

	if (ops != NULL && ops->regions_mapped != NULL && ops->regions_mapped()) {
		fp->mapped_bytes += (uint64_t)n_own * region;
		fp->bytes += DTXN_FABRIC_FIXED_BYTES;
		fp->memzones += 5;
		return;
	}
	fp->bytes += (uint64_t)n_own * region + DTXN_FABRIC_FIXED_BYTES;
	fp->memzones += n_own + 5;
}

bool
dtxn_fabric_queues_grow(const char *driver)
{
	const struct dtxn_fabric_ops *ops = driver != NULL ? dtxn_fabric_driver_find(driver) : NULL;

	return ops != NULL && ops->queues_grow;
}

void
dtxn_fabric_queue_footprint(unsigned n_qp, unsigned depth, struct dtxn_footprint *fp)
{
	const uint64_t slack = DTXN_FOOTPRINT_ALLOC_SLACK;
	uint64_t ring = (uint64_t)rte_align32pow2(depth + 1) * sizeof(void *) + RTE_PGSIZE_4K;
	/* a send-queue entry (WR, inline payload, the driver's fields) and a receive-queue WR */
	uint64_t wr = 2 * sizeof(struct dtxn_wr) + DTXN_WR_INLINE_MAX + DTXN_FABRIC_WQE_EXTRA;
	uint64_t wr_grow = wr - DTXN_FABRIC_WQE_EXTRA + DTXN_FABRIC_WQE_EXTRA_GROW;
	uint64_t first = RTE_MIN(depth, DTXN_FABRIC_QUEUE_INIT);
	uint64_t qb = (uint64_t)n_qp * (4 * slack + (uint64_t)depth * wr +
					RTE_CACHE_LINE_SIZE * 4 + ring);

	fp->bytes += 2 * slack + (uint64_t)depth * sizeof(struct dtxn_cqe) + qb;
	fp->queue_bytes += qb;
	fp->queue_init_bytes += (uint64_t)n_qp * (4 * slack + first * wr_grow + RTE_CACHE_LINE_SIZE * 4);
	fp->memzones += n_qp;
	fp->qp_memzones += n_qp;
}

static int
fabric_conf_check(const struct dtxn_fabric_conf *c)
{
	if (c->size < sizeof(*c)) {
		FABRIC_LOG(ERR, "conf.size %zu, expected %zu", c->size, sizeof(*c));
		return -EINVAL;
	}
	if (c->n_mn < 1 || c->n_mn > DTXN_MASK_NODES - 1 || c->n_cn < 1 ||
	    (unsigned)c->n_mn + c->n_cn > DTXN_MAX_NODES) {
		FABRIC_LOG(ERR, "%u MNs + %u CNs: need 1..%u MNs, >= 1 CN, at most %u nodes",
			   c->n_mn, c->n_cn, DTXN_MASK_NODES - 1, DTXN_MAX_NODES);
		return -EINVAL;
	}
	/* the real drivers keep node masks of 64 bits (served nodes, fences) */
	if ((unsigned)c->n_mn + c->n_cn > DTXN_MASK_NODES &&
	    (c->driver == NULL || strcmp(c->driver, "sim") != 0)) {
		FABRIC_LOG(ERR, "%u MNs + %u CNs: more than %u nodes run only on the sim driver",
			   c->n_mn, c->n_cn, DTXN_MASK_NODES);
		return -EINVAL;
	}
	if (c->mn_region_size == 0 || c->mn_region_size > DTXN_RADDR_OFF_MASK) {
		FABRIC_LOG(ERR, "MN region size %" PRIu64 " out of range", c->mn_region_size);
		return -EINVAL;
	}
	if (c->name != NULL && (c->name[0] == '\0' || strlen(c->name) >= 20)) {
		FABRIC_LOG(ERR, "fabric name must have 1..19 characters");
		return -EINVAL;
	}
	return 0;
}

void
dtxn_fabric_open_error_set(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(g_fabric_open_error, sizeof(g_fabric_open_error), fmt, ap);
	va_end(ap);
	g_fabric_open_error[strcspn(g_fabric_open_error, "\n")] = '\0';
}

const char *
dtxn_fabric_open_error(void)
{
	return g_fabric_open_error;
}

struct dtxn_fabric *
dtxn_fabric_open(const struct dtxn_fabric_conf *conf)
{
	const struct dtxn_fabric_ops *ops;
	struct dtxn_fabric_conf c;
	struct dtxn_fabric *f;
	int rc;

	g_fabric_open_error[0] = '\0';
	if (conf == NULL || conf->driver == NULL) {
		rte_errno = EINVAL;
		return NULL;
	}
	ops = dtxn_fabric_driver_find(conf->driver);
	if (ops == NULL) {
		FABRIC_LOG(ERR, "no fabric driver named '%s'", conf->driver);
		rte_errno = ENOENT;
		return NULL;
	}
	rc = fabric_conf_check(conf);
	if (rc != 0) {
		rte_errno = -rc;
		return NULL;
	}
	c = *conf;
	c.size = sizeof(c);
	c.driver = ops->name;
	if (c.name == NULL)
		c.name = "dtxn";
	f = ops->open(&c);
	if (f == NULL)
		return NULL; /* rte_errno set by the driver */
	f->ops = ops;
	f->conf = c;
	strlcpy(f->name, c.name, sizeof(f->name));
	f->conf.name = f->name; /* the caller's string may not outlive the fabric */
	f->conf.rdma = NULL;    /* nor its RDMA options: the driver copied them */
	f->serve = conf->rdma != NULL ? conf->rdma->serve : 0;
	return f;
}

void
dtxn_fabric_close(struct dtxn_fabric *f)
{
	if (f == NULL)
		return;
	f->ops->close(f);
}

const char *
dtxn_fabric_driver_name(const struct dtxn_fabric *f)
{
	return f->ops->name;
}

const struct dtxn_fabric_conf *
dtxn_fabric_conf(const struct dtxn_fabric *f)
{
	return &f->conf;
}

/* True if @p node is a CN of @p f. */
static bool
fabric_is_cn(const struct dtxn_fabric *f, unsigned node)
{
	return f != NULL && node >= f->conf.n_mn && node < (unsigned)f->conf.n_mn + f->conf.n_cn;
}

int
dtxn_fabric_drain_node(struct dtxn_fabric *f, uint16_t node)
{
	if (!fabric_is_cn(f, node))
		return -EINVAL;
	if (f->ops->drain_node == NULL)
		return -ENOTSUP;
	return f->ops->drain_node(f, node);
}

bool
dtxn_fabric_heap_shared(const struct dtxn_fabric *f)
{
	return f != NULL && f->heap_shared;
}

bool
dtxn_fabric_selective_signaling(const struct dtxn_fabric *f)
{
	return f != NULL && !f->signal_every_wr;
}

bool
dtxn_fabric_posted_survives(const struct dtxn_fabric *f)
{
	return f != NULL && !f->posted_lost;
}

bool
dtxn_fabric_partial(const struct dtxn_fabric *f)
{
	unsigned n;

	if (f == NULL)
		return false;
	if (f->conf.multi_process)
		return true;
	n = f->conf.n_mn + f->conf.n_cn;
	return f->serve != 0 && f->serve != dtxn_fabric_node_mask(n);
}

int
dtxn_fabric_fence_node(struct dtxn_fabric *f, uint16_t node)
{
	if (!fabric_is_cn(f, node))
		return -EINVAL;
	if (f->ops->fence_node == NULL)
		return -ENOTSUP;
	return f->ops->fence_node(f, node);
}

int
dtxn_fabric_publish(struct dtxn_fabric *f)
{
	if (f == NULL)
		return -EINVAL;
	if (f->ops->publish != NULL)
		f->ops->publish(f);
	return 0;
}

int
dtxn_fabric_set_incarnation(struct dtxn_fabric *f, uint32_t inc)
{
	if (f == NULL)
		return -EINVAL;
	f->conf.incarnation = inc;
	return 0;
}

int
dtxn_fabric_set_lease(struct dtxn_fabric *f, const uint64_t *until_ns, uint64_t slack_ns)
{
	if (f == NULL)
		return -EINVAL;
	f->lease_slack_ns = slack_ns;
	__atomic_store_n(&f->lease_until_ns, until_ns, __ATOMIC_RELEASE);
	return 0;
}

int
dtxn_fabric_test_hold_wr(struct dtxn_fabric *f, uint32_t ms, uint64_t from_ns)
{
	if (f == NULL)
		return -EINVAL;
	f->test_hold_wr_from_ns = from_ns;
	__atomic_store_n(&f->test_hold_wr_ms, ms, __ATOMIC_RELEASE);
	return 0;
}

void
dtxn_cq_kick(struct dtxn_cq *cq)
{
	if (cq != NULL && cq->fabric->ops->cq_kick != NULL)
		cq->fabric->ops->cq_kick(cq);
}

uint64_t
dtxn_cq_nic_cycles(const struct dtxn_cq *cq)
{
	return cq == NULL ? 0 : __atomic_load_n(&cq->nic_cycles, __ATOMIC_RELAXED);
}

int
dtxn_fabric_cn_mr_reg(struct dtxn_fabric *f, uint16_t cn, void *base, uint64_t size,
		      dtxn_fabric_write_fn on_write, void *arg)
{
	struct dtxn_fabric_cn_mr *mr;

	if (!fabric_is_cn(f, cn) || base == NULL || size == 0 ||
	    size > DTXN_RADDR_OFF_MASK || ((uintptr_t)base & 7) != 0)
		return -EINVAL;
	mr = &f->cn_mr[cn];
	if (mr->base != NULL)
		return -EEXIST;
	mr->size = size;
	mr->on_write = on_write;
	mr->arg = arg;
	__atomic_store_n(&mr->base, (uint8_t *)base, __ATOMIC_RELEASE);
	return 0;
}

void
dtxn_fabric_cn_mr_dereg(struct dtxn_fabric *f, uint16_t cn)
{
	if (f == NULL || cn >= DTXN_MAX_NODES)
		return;
	__atomic_store_n(&f->cn_mr[cn].base, NULL, __ATOMIC_RELEASE);
	f->cn_mr[cn].size = 0;
	f->cn_mr[cn].on_write = NULL;
}

int
dtxn_fabric_mn_watch(struct dtxn_fabric *f, uint16_t mn, uint64_t off, uint64_t size,
		     dtxn_fabric_write_fn on_write, void *arg)
{
	struct dtxn_fabric_mn_watch *w;

	if (f == NULL || on_write == NULL || mn >= f->conf.n_mn || size == 0 ||
	    off > DTXN_RADDR_OFF_MASK || size > DTXN_RADDR_OFF_MASK - off)
		return -EINVAL;
	w = &f->mn_watch[mn];
	if (w->size != 0)
		return -EEXIST;
	w->off = off;
	w->on_write = on_write;
	w->arg = arg;
	__atomic_store_n(&w->size, size, __ATOMIC_RELEASE);
	return 0;
}

void
dtxn_fabric_mn_unwatch(struct dtxn_fabric *f, uint16_t mn)
{
	if (f == NULL || mn >= DTXN_MAX_NODES)
		return;
	__atomic_store_n(&f->mn_watch[mn].size, 0, __ATOMIC_RELEASE);
}

void *
dtxn_fabric_mn_base(struct dtxn_fabric *f, uint16_t mn)
{
	void *base;

	if (f == NULL || mn >= f->conf.n_mn)
		return NULL;
	if (f->mn_mirror[mn] != NULL)
		return f->mn_mirror[mn];
	base = f->ops->mn_base(f, mn);
	return base;
}

int
dtxn_fabric_mn_mirror(struct dtxn_fabric *f, uint16_t mn, void *copy)
{
	if (f == NULL || mn >= f->conf.n_mn)
		return -EINVAL;
	f->mn_mirror[mn] = copy;
	return 0;
}

const struct dtxn_nic_state *
dtxn_fabric_nic_state(const struct dtxn_fabric *f, uint16_t node)
{
	if (f == NULL || f->ops->nic_state == NULL ||
	    node >= f->conf.n_mn + f->conf.n_cn)
		return NULL;
	return f->ops->nic_state(f, node);
}

static bool
fabric_depth_ok(unsigned d)
{
	return d >= 64 && d <= 65536 && rte_is_power_of_2(d);
}

struct dtxn_cq *
dtxn_cq_create(struct dtxn_fabric *f, int socket_id, unsigned depth)
{
	struct dtxn_cq *cq;

	if (f == NULL || !fabric_depth_ok(depth)) {
		rte_errno = EINVAL;
		return NULL;
	}
	cq = f->ops->cq_create(f, socket_id, depth);
	if (cq == NULL)
		return NULL;
	cq->fabric = f;
	cq->depth = depth;
	cq->err_ring = NULL;
	cq->err_head = cq->err_tail = 0;
	return cq;
}

void
dtxn_cq_destroy(struct dtxn_cq *cq)
{
	if (cq == NULL)
		return;
	fabric_cq_err_free(cq);
	cq->fabric->ops->cq_destroy(cq);
}

struct dtxn_qp *
dtxn_qp_create(struct dtxn_fabric *f, struct dtxn_cq *cq, uint16_t local_node,
	       uint16_t remote_node, unsigned max_wr)
{
	unsigned n_nodes;
	struct dtxn_qp *qp;

	if (f == NULL || cq == NULL || cq->fabric != f || !fabric_depth_ok(max_wr)) {
		rte_errno = EINVAL;
		return NULL;
	}
	n_nodes = (unsigned)f->conf.n_mn + f->conf.n_cn;
	if (local_node >= n_nodes || remote_node >= n_nodes || local_node == remote_node) {
		FABRIC_LOG(ERR, "QP %u -> %u: bad node id (%u nodes)", local_node,
			   remote_node, n_nodes);
		rte_errno = EINVAL;
		return NULL;
	}
	qp = f->ops->qp_create(f, cq, local_node, remote_node, max_wr);
	if (qp == NULL)
		return NULL;
	dtxn_qp_init(qp, f, cq, local_node, remote_node, max_wr);
	return qp;
}

void
dtxn_qp_destroy(struct dtxn_qp *qp)
{
	if (qp == NULL)
		return;
	qp->fabric->ops->qp_destroy(qp);
}

static bool
fabric_is_atomic(unsigned op)
{
	return op == DTXN_WR_CAS || op == DTXN_WR_FAA || op == DTXN_WR_MASKED_CAS;
}

/* One WR of a dtxn_qp_post() chain: 0 or -EINVAL (with a debug line). */
static int
fabric_wr_check(const struct dtxn_qp *qp, const struct dtxn_wr *wr)
{
	unsigned op = wr->opcode;

	if (op >= DTXN_WR_OP_MAX || op == DTXN_WR_RECV)
		goto bad;
	if (fabric_is_atomic(op)) {
		if (wr->len != 8 || wr->local == NULL ||
		    (DTXN_RADDR_OFF(wr->raddr) & 7) != 0 ||
		    (wr->flags & DTXN_WR_F_INLINE) != 0)
			goto bad;
	} else {
		if (wr->len > DTXN_WR_LEN_MAX)
			goto bad;
		if (wr->len > 0 && wr->local == NULL)
			goto bad;
		if ((wr->flags & DTXN_WR_F_INLINE) != 0 &&
		    (op == DTXN_WR_READ || wr->len > DTXN_WR_INLINE_MAX))
			goto bad;
	}
	if ((wr->flags & ~(DTXN_WR_F_SIGNALED | DTXN_WR_F_INLINE | DTXN_WR_F_LEASE_EXEMPT |
			   DTXN_WR_F_CONTROL)) != 0)
		goto bad;
	/* One-sided ops address the QP's remote node: an MN, or a CN with registered memory. */
	if (op != DTXN_WR_SEND &&
	    (DTXN_RADDR_MN(wr->raddr) != qp->remote_node ||
	     (qp->remote_node >= qp->fabric->conf.n_mn &&
	      __atomic_load_n(&qp->fabric->cn_mr[qp->remote_node].base, __ATOMIC_ACQUIRE) == NULL)))
		goto bad;
	return 0;
bad:
	FABRIC_LOG(DEBUG, "QP %u->%u: bad WR %#" PRIx64 " (opcode %u, len %u, raddr %#" PRIx64 ")",
		   qp->local_node, qp->remote_node, wr->wr_id, op, wr->len, wr->raddr);
	return -EINVAL;
}

/* Adds @p wr to @p qp's counters (@p sign 1), or takes it back (-1). */
static inline void
fabric_count_wr(struct dtxn_qp *qp, const struct dtxn_wr *wr, uint64_t sign)
{
	if (wr->flags & DTXN_WR_F_CONTROL)
		return; /* dtxn's bookkeeping, not the protocol's */
	qp->cnt.ops[wr->opcode] += sign;
	qp->cnt.bytes[wr->opcode] += sign * wr->len;
}

/* Takes back the counts of the WRs of @p wr_list before @p end (NULL: all). */
static void
fabric_uncount(struct dtxn_qp *qp, const struct dtxn_wr *wr_list, const struct dtxn_wr *end)
{
	for (const struct dtxn_wr *wr = wr_list; wr != end; wr = wr->next)
		fabric_count_wr(qp, wr, UINT64_MAX); /* -1, modulo 2^64 */
}

static void
fabric_count(struct dtxn_qp *qp, const struct dtxn_wr *wr_list)
{
	for (const struct dtxn_wr *wr = wr_list; wr != NULL; wr = wr->next)
		fabric_count_wr(qp, wr, 1);
}

int
dtxn_qp_post(struct dtxn_qp *qp, struct dtxn_wr *wr_list)
{
	const struct dtxn_wr *wr;
	int rc;

	if (qp == NULL || wr_list == NULL)
		return -EINVAL;
	/* one walk checks and counts the chain; a refused post takes its counts back */
	for (wr = wr_list; wr != NULL; wr = wr->next) {
		rc = fabric_wr_check(qp, wr);
		if (rc != 0) {
			fabric_uncount(qp, wr_list, wr);
			return rc;
		}
		fabric_count_wr(qp, wr, 1);
	}
	if (unlikely(__atomic_load_n(&qp->err_state, __ATOMIC_RELAXED) != FABRIC_QP_OK))
		rc = fabric_post_errored(qp, wr_list); /* fault.c */
	else
		rc = qp->fabric->ops->post(qp, wr_list);
	if (rc != 0)
		fabric_uncount(qp, wr_list, NULL);
	return rc;
}

int
dtxn_qp_post_recv(struct dtxn_qp *qp, struct dtxn_wr *wr_list)
{
	const struct dtxn_wr *wr;
	int rc;

	if (qp == NULL || wr_list == NULL)
		return -EINVAL;
	for (wr = wr_list; wr != NULL; wr = wr->next)
		if (wr->opcode != DTXN_WR_RECV || wr->len > DTXN_WR_LEN_MAX ||
		    (wr->len > 0 && wr->local == NULL))
			return -EINVAL;
	rc = qp->fabric->ops->post_recv(qp, wr_list);
	if (rc == 0)
		fabric_count(qp, wr_list);
	return rc;
}

unsigned
dtxn_cq_poll(struct dtxn_cq *cq, struct dtxn_cqe *cqes, unsigned n)
{
	unsigned got;

	if (cq == NULL || cqes == NULL || n == 0)
		return 0;
	if (likely(cq->err_head == cq->err_tail))
		return cq->fabric->ops->poll(cq, cqes, n);
	got = fabric_poll_errored(cq, cqes, n); /* fault.c */
	return got + (got < n ? cq->fabric->ops->poll(cq, cqes + got, n - got) : 0);
}

const struct dtxn_fabric_counters *
dtxn_qp_counters(const struct dtxn_qp *qp)
{
	return &qp->cnt;
}

uint16_t
dtxn_qp_remote_node(const struct dtxn_qp *qp)
{
	return qp->remote_node;
}

const char *
dtxn_wr_opcode_name(unsigned opcode)
{
	if (opcode >= DTXN_WR_OP_MAX)
		return "unknown";
	return g_fabric_opcode_names[opcode];
}
