/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mlx5 driver: posting. A checked chain is planned (mlx5_plan.c), built
 * WR by WR between ibv_wr_start() and ibv_wr_complete(), which rings the
 * doorbell once for the whole chain. Every WQE takes the next slot of the
 * QP's shadow ring: its wr_id is the slot's free-running index, so a
 * completion retires every slot up to it (RC order). Nothing here
 * allocates, locks or blocks.
 */
#include <errno.h>
#include <string.h>

#include <rte_common.h>

#include "mlx5_private.h"

static uint8_t *
post_bounce(const struct mlx5_qp *q, uint32_t idx)
{
	return q->bounce + (size_t)(idx & q->mask) * MLX5_BOUNCE_BYTES;
}

/* The local address a WQE names: the caller's buffer or the slot's bounce. */
static uint64_t
post_local(const struct mlx5_qp *q, const struct dtxn_wr *wr, const struct mlx5_wr_plan *p)
{
	uint8_t *b;

	if (!p->bounce)
		return (uintptr_t)wr->local;
	b = post_bounce(q, q->tail);
	if (wr->opcode == DTXN_WR_WRITE || wr->opcode == DTXN_WR_SEND)
		memcpy(b, wr->local, wr->len);
	return (uintptr_t)b;
}

static void
post_one(struct mlx5_qp *q, const struct dtxn_wr *wr, const struct mlx5_wr_plan *p)
{
	struct mlx5_slot *s = &q->slots[q->tail & q->mask];
	struct ibv_qp_ex *x = q->qpx;
	uint64_t raddr = 0, laddr = post_local(q, wr, p);
	uint32_t rkey = 0;

	if (wr->opcode != DTXN_WR_SEND)
		(void)mlx5_raddr_map(&q->peer, DTXN_RADDR_OFF(wr->raddr), wr->len, &raddr, &rkey);
	memset(s, 0, sizeof(*s));
	s->wr_id = wr->wr_id;
	s->local = wr->local;
	s->len = wr->len;
	s->opcode = wr->opcode;
	s->user_cqe = p->user_cqe;
	s->bounce = p->bounce && wr->opcode != DTXN_WR_WRITE && wr->opcode != DTXN_WR_SEND;
	x->wr_id = q->tail;
	x->wr_flags = p->signaled ? IBV_SEND_SIGNALED : 0;
	switch (p->verb) {
	case MLX5_VERB_READ:
		ibv_wr_rdma_read(x, rkey, raddr);
		ibv_wr_set_sge(x, p->lkey, laddr, wr->len);
		break;
	case MLX5_VERB_WRITE:
	case MLX5_VERB_WRITE_INLINE:
		ibv_wr_rdma_write(x, rkey, raddr);
		if (p->verb == MLX5_VERB_WRITE_INLINE)
			ibv_wr_set_inline_data(x, wr->local, wr->len);
		else
			ibv_wr_set_sge(x, p->lkey, laddr, wr->len);
		break;
	case MLX5_VERB_CAS:
		ibv_wr_atomic_cmp_swp(x, rkey, raddr, wr->compare_add, wr->swap);
		ibv_wr_set_sge(x, p->lkey, laddr, 8);
		break;
	case MLX5_VERB_FAA:
		ibv_wr_atomic_fetch_add(x, rkey, raddr, wr->compare_add);
		ibv_wr_set_sge(x, p->lkey, laddr, 8);
		break;
	case MLX5_VERB_MCAS_RAW: {
		uint8_t wqe[MLX5_MCAS_WQE_BYTES] __rte_aligned(16);
		struct mlx5_mcas_args a = {
			.qpn = q->qp->qp_num, .signaled = p->signaled, .raddr = raddr, .rkey = rkey,
			.laddr = laddr, .lkey = p->lkey, .swap = wr->swap, .compare = wr->compare_add,
			.swap_mask = wr->swap_mask, .compare_mask = wr->compare_mask,
		};

		(void)mlx5_wqe_masked_cas(wqe, sizeof(wqe), &a);
		mlx5dv_wr_raw_wqe(q->mqpx, wqe);
		s->swap64 = 1; /* the raw WQE's result lands big-endian */
		MLX5_STAT_ADD(q->mf, mcas_raw, 1);
		break;
	}
	case MLX5_VERB_MCAS_LOOP:
		s->loop = 1;
		dtxn_mcas_loop_start(&s->mcas.l, wr);
		ibv_wr_atomic_cmp_swp(x, rkey, raddr, s->mcas.l.expect, s->mcas.l.desired);
		ibv_wr_set_sge(x, p->lkey, laddr, 8);
		MLX5_STAT_ADD(q->mf, mcas_loop, 1);
		MLX5_STAT_ADD(q->mf, mcas_loop_cas, 1);
		break;
	case MLX5_VERB_SEND:
	case MLX5_VERB_SEND_INLINE:
		ibv_wr_send(x);
		if (p->verb == MLX5_VERB_SEND_INLINE)
			ibv_wr_set_inline_data(x, wr->local, wr->len);
		else
			ibv_wr_set_sge(x, p->lkey, laddr, wr->len);
		break;
	}
	if (p->bounce)
		MLX5_STAT_ADD(q->mf, bounced, 1);
	/* the remote address of a one-sided loop CAS is kept for its retries */
	s->mcas.raddr = raddr;
	s->mcas.rkey = rkey;
	q->tail++;
}

int
mlx5_qp_post(struct dtxn_qp *qp, struct dtxn_wr *wr_list)
{
	struct mlx5_qp *q = MLX5_QP(qp);
	const struct dtxn_wr *wr;
	uint32_t n, run = q->unsignaled_run, n_inline = 0, n_signaled = 0;
	struct mlx5_lcore_stats *st;
	int rc;

	n = dtxn_wr_chain_count(wr_list, NULL);
	if (n > qp->max_wr - (q->tail - q->head))
		return -ENOBUFS;
	if (q->state != 1)
		return q->to_mn ? -EIO : -ENOTCONN;
	rc = mlx5_chain_plan(wr_list, &q->caps, q->mf->ranges, q->mf->n_ranges,
			     q->bounce_mr->lkey, qp->max_wr, &run, q->plan, qp->max_wr);
	if (rc < 0)
		return rc;
	ibv_wr_start(q->qpx);
	n = 0;
	for (wr = wr_list; wr != NULL; wr = wr->next, n++) {
		post_one(q, wr, &q->plan[n]);
		n_inline += q->plan[n].verb == MLX5_VERB_WRITE_INLINE ||
			    q->plan[n].verb == MLX5_VERB_SEND_INLINE;
		n_signaled += q->plan[n].signaled;
	}
	rc = ibv_wr_complete(q->qpx); /* one doorbell */
	if (rc != 0) {
		q->tail -= n; /* nothing was posted */
		return -rc;
	}
	q->unsignaled_run = run;
	st = mlx5_stats_lc(q->mf);
	__atomic_fetch_add(&st->doorbells, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&st->wrs, n, __ATOMIC_RELAXED);
	__atomic_fetch_add(&st->inline_wrs, n_inline, __ATOMIC_RELAXED);
	__atomic_fetch_add(&st->signaled, n_signaled, __ATOMIC_RELAXED);
	return 0;
}

int
mlx5_post_loop_cas(struct mlx5_qp *q, const struct mlx5_slot *from)
{
	struct mlx5_slot *s;
	struct ibv_qp_ex *x = q->qpx;
	uint64_t laddr;
	uint32_t lkey;
	int rc;

	if (q->tail - q->head >= q->base.max_wr)
		return -ENOBUFS;
	s = &q->slots[q->tail & q->mask];
	*s = *from;
	if (!mlx5_lkey_find(q->mf->ranges, q->mf->n_ranges, s->local, 8, &lkey)) {
		s->bounce = 1;
		lkey = q->bounce_mr->lkey;
		laddr = (uintptr_t)post_bounce(q, q->tail);
	} else {
		s->bounce = 0;
		laddr = (uintptr_t)s->local;
	}
	ibv_wr_start(x);
	x->wr_id = q->tail;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_cmp_swp(x, s->mcas.rkey, s->mcas.raddr, s->mcas.l.expect,
			      s->mcas.l.desired);
	ibv_wr_set_sge(x, lkey, laddr, 8);
	rc = ibv_wr_complete(x);
	if (rc != 0)
		return -rc;
	q->tail++;
	q->unsignaled_run = 0;
	MLX5_STAT_ADD(q->mf, mcas_loop_cas, 1);
	MLX5_STAT_ADD(q->mf, doorbells, 1);
	MLX5_STAT_ADD(q->mf, wrs, 1);
	MLX5_STAT_ADD(q->mf, signaled, 1);
	return 0;
}

int
mlx5_qp_post_recv(struct dtxn_qp *qp, struct dtxn_wr *wr_list)
{
	struct mlx5_qp *q = MLX5_QP(qp);
	const struct dtxn_wr *wr;
	struct ibv_recv_wr rw[16], *bad;
	struct ibv_sge sge[16];
	uint32_t lkey;

	if (dtxn_wr_chain_count(wr_list, NULL) > qp->max_wr - dtxn_wr_queue_count(&q->rq))
		return -ENOBUFS;
	/* RECV buffers must be registered: no bounce on the receive side */
	for (wr = wr_list; wr != NULL; wr = wr->next)
		if (wr->len > 0 && !mlx5_lkey_find(q->mf->ranges, q->mf->n_ranges, wr->local,
						   wr->len, &lkey))
			return -EFAULT;
	for (const struct dtxn_wr *batch = wr_list; batch != NULL; batch = wr) {
		unsigned k = 0;

		for (wr = batch; wr != NULL && k < RTE_DIM(rw); wr = wr->next, k++) {
			lkey = 0;
			if (wr->len > 0)
				(void)mlx5_lkey_find(q->mf->ranges, q->mf->n_ranges, wr->local,
						     wr->len, &lkey);
			sge[k] = (struct ibv_sge){ (uintptr_t)wr->local, wr->len, lkey };
			rw[k] = (struct ibv_recv_wr){
				.wr_id = MLX5_WRID_RECV | (q->rq.tail + k),
				.next = k + 1 < RTE_DIM(rw) && wr->next != NULL ? &rw[k + 1] : NULL,
				.sg_list = &sge[k], .num_sge = 1,
			};
			q->rq.e[(q->rq.tail + k) & q->rq.mask] = *wr;
		}
		if (ibv_post_recv(q->qp, rw, &bad) != 0)
			return -EIO; /* the earlier batches stay posted */
		q->rq.tail += k;
	}
	return 0;
}
