/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mlx5 driver: CQs (extended, polled by their lcore) and QPs (extended RC
 * QPs taking ibv_wr_* work requests and, where the device allows,
 * mlx5dv raw WQEs for masked CAS), their connection and their teardown.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_malloc.h>

#include "mlx5_private.h"

struct dtxn_cq *
mlx5_cq_create(struct dtxn_fabric *f, int socket_id, unsigned depth)
{
	struct mlx5_fabric *mf = MLX5_FABRIC(f);
	struct ibv_cq_init_attr_ex a = {
		.cqe = depth,
		.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_QP_NUM,
	};
	struct mlx5_cq *mc = rte_zmalloc_socket("mlx5_cq", sizeof(*mc), RTE_CACHE_LINE_SIZE,
						socket_id);

	if (mc == NULL)
		goto nomem;
	TAILQ_INIT(&mc->qps);
	if (dtxn_cqe_ring_init(&mc->soft, depth, socket_id) != 0)
		goto nomem;
	mc->cq = ibv_create_cq_ex(mf->dev.ctx, &a);
	if (mc->cq == NULL) {
		MLX5_LOG(ERR, "cannot create a CQ of %u entries: %s", depth, strerror(errno));
		goto nomem;
	}
	return &mc->base;
nomem:
	if (mc != NULL)
		dtxn_cqe_ring_free(&mc->soft);
	rte_free(mc);
	rte_errno = ENOMEM;
	return NULL;
}

void
mlx5_cq_destroy(struct dtxn_cq *cq)
{
	struct mlx5_cq *mc = MLX5_CQ(cq);

	if (!TAILQ_EMPTY(&mc->qps))
		MLX5_LOG(ERR, "CQ destroyed with QPs attached");
	ibv_destroy_cq(ibv_cq_ex_to_cq(mc->cq));
	dtxn_cqe_ring_free(&mc->soft);
	rte_free(mc);
}

struct ibv_qp *
mlx5_qp_new(struct mlx5_fabric *mf, struct ibv_cq *cq, unsigned max_wr, unsigned max_recv,
	    struct mlx5_caps *caps)
{
	struct ibv_qp_init_attr_ex a;
	struct mlx5dv_qp_init_attr dv = {
		.comp_mask = MLX5DV_QP_INIT_ATTR_MASK_SEND_OPS_FLAGS,
		.send_ops_flags = MLX5DV_QP_EX_WITH_RAW_WQE,
	};
	uint32_t inl = mf->dev.caps.max_inline;
	struct ibv_qp *qp = NULL;

	*caps = mf->dev.caps;
	for (;;) {
		memset(&a, 0, sizeof(a));
		a.qp_type = IBV_QPT_RC;
		a.send_cq = cq;
		a.recv_cq = cq;
		a.cap.max_send_wr = max_wr;
		a.cap.max_recv_wr = max_recv;
		a.cap.max_send_sge = 1;
		a.cap.max_recv_sge = 1;
		a.cap.max_inline_data = inl;
		a.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		a.pd = mf->dev.pd;
		a.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_READ |
				   IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
				   IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_SEND;
		if (caps->masked_cas) {
			qp = mlx5dv_create_qp(mf->dev.ctx, &a, &dv);
			if (qp == NULL) /* no raw WQEs here: the CAS loop, counted */
				caps->masked_cas = false;
		}
		if (qp == NULL)
			qp = ibv_create_qp_ex(mf->dev.ctx, &a);
		if (qp != NULL || inl == 0)
			break;
		inl /= 2; /* the device's max_inline_data is lower: halve until it fits */
	}
	if (qp != NULL) {
		caps->max_inline = a.cap.max_inline_data < inl ? a.cap.max_inline_data : inl;
		mf->dev.caps.max_inline = caps->max_inline;
	}
	return qp;
}

static void
qp_free(struct mlx5_qp *q)
{
	if (q->qp != NULL)
		ibv_destroy_qp(q->qp);
	if (q->bounce_mr != NULL)
		ibv_dereg_mr(q->bounce_mr);
	rte_free(q->bounce);
	rte_free(q->slots);
	rte_free(q->plan);
	dtxn_wr_queue_free(&q->rq);
	rte_free(q);
}

/* Waits (control path, at set-up) until the connection is up or failed. */
static int
qp_wait_connected(struct mlx5_qp *q)
{
	const struct timespec ms = { .tv_sec = 0, .tv_nsec = 1000 * 1000 };

	for (unsigned i = 0; i < MLX5_CONNECT_WAIT_MS && q->state == 0; i++)
		nanosleep(&ms, NULL);
	return q->state == 1 ? 0 : q->state == 0 ? -ETIMEDOUT : q->state;
}

struct dtxn_qp *
mlx5_qp_create(struct dtxn_fabric *f, struct dtxn_cq *cq, uint16_t local_node,
	       uint16_t remote_node, unsigned max_wr)
{
	struct mlx5_fabric *mf = MLX5_FABRIC(f);
	struct mlx5_cq *mc = MLX5_CQ(cq);
	struct mlx5_qp *q = rte_zmalloc("mlx5_qp", sizeof(*q), RTE_CACHE_LINE_SIZE);
	int rc = -ENOMEM;

	if (q == NULL)
		goto fail;
	q->mf = mf;
	q->cq = mc;
	q->base.local_node = local_node;   /* lib/fabric fills these too, after */
	q->base.remote_node = remote_node;
	q->base.max_wr = max_wr;
	q->to_mn = remote_node < mf->n_mn;
	q->mask = max_wr - 1;
	q->slots = rte_zmalloc("mlx5_slots", sizeof(*q->slots) * max_wr, 0);
	q->plan = rte_zmalloc("mlx5_plan", sizeof(*q->plan) * max_wr, 0);
	q->bounce = rte_zmalloc("mlx5_bounce", (size_t)MLX5_BOUNCE_BYTES * max_wr, 64);
	if (q->slots == NULL || q->plan == NULL || q->bounce == NULL ||
	    dtxn_wr_queue_init(&q->rq, max_wr, SOCKET_ID_ANY) != 0)
		goto fail;
	q->bounce_mr = ibv_reg_mr(mf->dev.pd, q->bounce, (size_t)MLX5_BOUNCE_BYTES * max_wr,
				  IBV_ACCESS_LOCAL_WRITE);
	q->qp = q->bounce_mr == NULL ? NULL :
		mlx5_qp_new(mf, ibv_cq_ex_to_cq(mc->cq), max_wr, q->to_mn ? 1 : max_wr, &q->caps);
	if (q->qp == NULL) {
		rc = -errno;
		MLX5_LOG(ERR, "QP %u -> %u: cannot create: %s", local_node, remote_node,
			 strerror(errno));
		goto fail;
	}
	q->qpx = ibv_qp_to_qp_ex(q->qp);
	q->mqpx = q->caps.masked_cas ? mlx5dv_qp_ex_from_ibv_qp_ex(q->qpx) : NULL;
	rc = mlx5_qp_modify_init(q);
	if (rc != 0)
		goto fail;
	rte_spinlock_lock(&mf->lock);
	q->seq = mf->qp_seq[local_node][remote_node]++;
	rte_spinlock_unlock(&mf->lock);
	TAILQ_INSERT_TAIL(&mc->qps, q, cq_next);
	if (q->to_mn || local_node > remote_node) {
		rc = mlx5_qp_connect(q);
		if (rc == 0 && q->to_mn)
			rc = qp_wait_connected(q);
		if (rc != 0) {
			MLX5_LOG(ERR, "QP %u -> %u: cannot connect: %s", local_node, remote_node,
				 strerror(-rc));
			TAILQ_REMOVE(&mc->qps, q, cq_next);
			if (q->id != NULL)
				rdma_destroy_id(q->id);
			goto fail;
		}
	} else {
		mlx5_qp_wait_peer(q);
	}
	return &q->base;
fail:
	if (q != NULL)
		qp_free(q);
	rte_errno = -rc;
	return NULL;
}

void
mlx5_qp_destroy(struct dtxn_qp *qp)
{
	struct mlx5_qp *q = MLX5_QP(qp);
	const struct dtxn_wr *r;

	mlx5_conn_forget(q);
	if (q->id != NULL) {
		q->id->context = NULL;
		rdma_disconnect(q->id);
	}
	/* what was posted and not reaped completes as flushed (fabric API) */
	for (; q->head != q->tail; q->head++) {
		struct mlx5_slot *s = &q->slots[q->head & q->mask];

		if (s->user_cqe || s->loop)
			mlx5_cq_soft_push(q->cq, s->wr_id, 0, s->opcode, DTXN_WC_WR_FLUSH_ERR,
					  qp->remote_node);
	}
	while ((r = dtxn_wr_queue_pop(&q->rq)) != NULL)
		mlx5_cq_soft_push(q->cq, r->wr_id, 0, DTXN_WR_RECV, DTXN_WC_WR_FLUSH_ERR,
				  qp->remote_node);
	TAILQ_REMOVE(&q->cq->qps, q, cq_next);
	if (q->qp != NULL)
		ibv_destroy_qp(q->qp);
	q->qp = NULL;
	if (q->id != NULL)
		rdma_destroy_id(q->id);
	qp_free(q);
}
