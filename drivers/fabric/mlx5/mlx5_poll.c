/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mlx5 driver: reaping completions on the owning lcore. A send CQE names
 * a slot of its QP's shadow ring; every older slot completed with it (RC
 * order, selective signaling): their bounce buffers are copied back and
 * raw masked-CAS results turned to host order. A CAS of an emulated
 * masked CAS feeds the loop (mlx5_plan.c) and posts the next CAS or ends
 * it. Errors map to enum dtxn_wc_status; a failing WR is reported even if
 * it was not signaled.
 */
#include <errno.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_common.h>

#include "mlx5_private.h"

void
mlx5_cq_soft_push(struct mlx5_cq *cq, uint64_t wr_id, uint32_t byte_len, uint8_t opcode,
		  uint8_t status, uint16_t src_node)
{
	if (!dtxn_cqe_ring_push(&cq->soft, wr_id, byte_len, opcode, status, src_node))
		MLX5_LOG(ERR, "CQ overrun: a driver completion is lost");
}

static uint8_t
poll_status(enum ibv_wc_status st)
{
	switch (st) {
	case IBV_WC_SUCCESS:
		return DTXN_WC_SUCCESS;
	case IBV_WC_REM_ACCESS_ERR:
		return DTXN_WC_REM_ACCESS_ERR;
	case IBV_WC_LOC_LEN_ERR:
		return DTXN_WC_LOC_LEN_ERR;
	case IBV_WC_WR_FLUSH_ERR:
		return DTXN_WC_WR_FLUSH_ERR;
	default:
		return DTXN_WC_FATAL_ERR;
	}
}

static struct mlx5_qp *
poll_qp(struct mlx5_cq *mc, uint32_t qpn)
{
	struct mlx5_qp *q;

	TAILQ_FOREACH(q, &mc->qps, cq_next)
		if (q->qp->qp_num == qpn)
			return q;
	return NULL; /* destroyed: its late CQEs are dropped */
}

/* A slot's WQE completed (successfully): its local data to the caller. */
static void
poll_fixup(struct mlx5_qp *q, uint32_t idx, struct mlx5_slot *s)
{
	uint8_t *src = s->bounce ? q->bounce + (size_t)(idx & q->mask) * MLX5_BOUNCE_BYTES :
				   s->local;

	if (s->swap64) {
		uint64_t v;

		memcpy(&v, src, 8);
		v = rte_be_to_cpu_64(v);
		memcpy(s->local, &v, 8);
	} else if (s->bounce) {
		memcpy(s->local, src, s->len);
	}
}

/* One send CQE for slot @p idx: retire up to it; 1 if a CQE goes to the caller. */
static unsigned
poll_send(struct mlx5_qp *q, uint32_t idx, uint8_t status, struct dtxn_cqe *out)
{
	struct mlx5_slot *s;
	uint64_t got;

	if ((uint32_t)(idx - q->head) >= q->tail - q->head)
		return 0; /* not outstanding (flushed at destroy) */
	for (; q->head != idx; q->head++) /* older, unsignaled, done */
		poll_fixup(q, q->head, &q->slots[q->head & q->mask]);
	s = &q->slots[idx & q->mask];
	q->head++;
	if (status == DTXN_WC_SUCCESS) {
		poll_fixup(q, idx, s);
		if (s->loop) {
			memcpy(&got, s->local, 8);
			if (!dtxn_mcas_loop_step(&s->mcas.l, got)) {
				if (mlx5_post_loop_cas(q, s) == 0)
					return 0;
				status = DTXN_WC_FATAL_ERR; /* send queue full: give up */
			}
		}
	} else {
		q->errored = true;
	}
	if (!s->user_cqe && status == DTXN_WC_SUCCESS)
		return 0;
	*out = (struct dtxn_cqe){ .wr_id = s->wr_id, .byte_len = s->len, .opcode = s->opcode,
				  .status = status, .src_node = q->base.remote_node };
	return 1;
}

static unsigned
poll_recv(struct mlx5_qp *q, uint32_t idx, uint8_t status, uint32_t byte_len,
	  struct dtxn_cqe *out)
{
	const struct dtxn_wr *r;

	if (idx != q->rq.head || dtxn_wr_queue_count(&q->rq) == 0)
		return 0;
	r = dtxn_wr_queue_pop(&q->rq);
	*out = (struct dtxn_cqe){ .wr_id = r->wr_id, .byte_len = byte_len,
				  .opcode = DTXN_WR_RECV, .status = status,
				  .src_node = q->base.remote_node };
	return 1;
}

unsigned
mlx5_cq_poll(struct dtxn_cq *cq, struct dtxn_cqe *cqes, unsigned n)
{
	struct mlx5_cq *mc = MLX5_CQ(cq);
	struct ibv_poll_cq_attr pa = { .comp_mask = 0 };
	unsigned got = dtxn_cqe_ring_pop(&mc->soft, cqes, n);

	if (got == n || ibv_start_poll(mc->cq, &pa) != 0)
		return got;
	do {
		struct ibv_cq_ex *c = mc->cq;
		struct mlx5_qp *q = poll_qp(mc, ibv_wc_read_qp_num(c));
		uint8_t st = poll_status(c->status);

		if (q == NULL)
			continue;
		if (c->wr_id & MLX5_WRID_RECV)
			got += poll_recv(q, (uint32_t)c->wr_id, st,
					 st == DTXN_WC_SUCCESS ? ibv_wc_read_byte_len(c) : 0,
					 &cqes[got]);
		else
			got += poll_send(q, (uint32_t)c->wr_id, st, &cqes[got]);
	} while (got < n && ibv_next_poll(mc->cq) == 0);
	ibv_end_poll(mc->cq);
	return got;
}
