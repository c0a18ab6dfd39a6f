/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ucx driver: posting. Each WR takes a slot of its QP's send queue (the
 * slot is the user data of its UCX requests) and is issued at once. By
 * default READ, WRITE, CAS, FAA and a masked-CAS loop's CAS are verbs as
 * messages (ucx_verb.c), SEND an eager active message. With
 * DTXN_UCX_VERBS=rma: READ ucp_get_nbx, WRITE ucp_put_nbx (+
 * ucp_ep_flush_nbx when signaled: its completion must mean the data
 * reached the target), CAS and FAA ucp_atomic_op_nbx with the slot's reply
 * buffer, and a WR that follows one still in flight on the same QP is
 * preceded by ucp_worker_fence(): UCX keeps no order between the
 * operations of an endpoint by itself.
 */
#include <errno.h>
#include <string.h>

#include <rte_common.h>

#include "ucx_private.h"

static inline ucp_request_param_t
post_param(struct ucx_slot *s)
{
	return (ucp_request_param_t){
		.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA,
		.cb.send = ucx_req_done,
		.user_data = s,
	};
}

/* The atomic with the slot's operand and reply buffer. */
static void
post_atomic(struct ucx_slot *s, ucp_atomic_op_t op)
{
	struct ucx_qp *q = s->qp;
	ucp_request_param_t p = post_param(s);

	if (q->uf->am_verbs) { /* a masked-CAS loop's CAS: a message of its own */
		ucx_verb_post(q, (uint32_t)(s - q->slots), 1);
		return;
	}
	p.op_attr_mask |= UCP_OP_ATTR_FIELD_DATATYPE | UCP_OP_ATTR_FIELD_REPLY_BUFFER;
	p.datatype = ucp_dt_make_contig(sizeof(uint64_t));
	p.reply_buffer = &s->result;
	s->pending = 1;
	ucx_req_settle(s, ucp_atomic_op_nbx(q->ep, op, &s->operand, 1, s->raddr, q->rkey, &p));
}

void
ucx_slot_issue_cas(struct ucx_slot *s)
{
	s->operand = s->mcas.expect;
	s->result = s->mcas.desired;
	__atomic_fetch_add(&s->qp->uf->mcas_loop_cas, 1, __ATOMIC_RELAXED);
	post_atomic(s, UCP_ATOMIC_OP_CSWAP);
}

/* A one-sided WR's remote address; false: outside the region (or no region). */
static bool
post_raddr(struct ucx_qp *q, struct ucx_slot *s, const struct dtxn_wr *wr)
{
	uint64_t off = DTXN_RADDR_OFF(wr->raddr);

	if (q->rkey == NULL || off > q->rlen || wr->len > q->rlen - off)
		return false;
	s->raddr = q->rbase + off;
	return true;
}

/* True if @p op travels in the doorbell's verb message (verbs as messages). */
static inline bool
post_in_vmsg(const struct ucx_fabric *uf, uint8_t op)
{
	return uf->am_verbs && (op == DTXN_WR_READ || op == DTXN_WR_WRITE || op == DTXN_WR_CAS ||
				op == DTXN_WR_FAA);
}

/* Issues one WR from its slot; a verb that joins the doorbell's verb
 * message (post_in_vmsg()) is only prepared: ucx_qp_post() sends it. */
static void
post_one(struct ucx_qp *q, struct ucx_slot *s, const struct dtxn_wr *wr)
{
	struct ucx_fabric *uf = q->uf;
	ucp_request_param_t p = post_param(s);
	const void *src = (wr->flags & DTXN_WR_F_INLINE) ? s->inl : wr->local;

	if (wr->opcode != DTXN_WR_SEND && !post_raddr(q, s, wr)) {
		s->status = DTXN_WC_REM_ACCESS_ERR;
		s->done = 1;
		return;
	}
	if (q->in_flight > 0 && !uf->am_verbs) { /* messages: one lane, in order */
		ucp_worker_fence(q->cq->w);
		__atomic_fetch_add(&uf->fences, 1, __ATOMIC_RELAXED);
	}
	q->in_flight++;
	if (post_in_vmsg(uf, wr->opcode)) {
		s->operand = wr->compare_add;
		s->result = wr->swap;
		return;
	}
	switch (wr->opcode) {
	case DTXN_WR_READ:
		s->pending = 1;
		ucx_req_settle(s, ucp_get_nbx(q->ep, wr->local, wr->len, s->raddr, q->rkey, &p));
		break;
	case DTXN_WR_WRITE: {
		bool flush = (wr->flags & DTXN_WR_F_SIGNALED) != 0;

		s->pending = flush ? 2 : 1; /* the put's local completion (and the flush) */
		ucx_req_settle(s, ucp_put_nbx(q->ep, src, wr->len, s->raddr, q->rkey, &p));
		if (flush) {
			__atomic_fetch_add(&uf->flushes, 1, __ATOMIC_RELAXED);
			ucx_req_settle(s, ucp_ep_flush_nbx(q->ep, &p));
		}
		break;
	}
	case DTXN_WR_CAS:
		s->operand = wr->compare_add;
		s->result = wr->swap;
		post_atomic(s, UCP_ATOMIC_OP_CSWAP);
		break;
	case DTXN_WR_FAA:
		s->operand = wr->compare_add;
		s->result = 0;
		post_atomic(s, UCP_ATOMIC_OP_ADD);
		break;
	case DTXN_WR_MASKED_CAS:
		dtxn_mcas_loop_start(&s->mcas, wr);
		ucx_slot_issue_cas(s);
		break;
	case DTXN_WR_SEND:
		p.op_attr_mask |= UCP_OP_ATTR_FIELD_FLAGS;
		p.flags = UCP_AM_SEND_FLAG_EAGER;
		s->hdr = (struct ucx_am_hdr){ q->base.local_node, q->base.remote_node, q->seq,
					       UCX_AM_MSG };
		s->pending = 1;
		ucx_req_settle(s, ucp_am_send_nbx(q->ep, UCX_AM_SEND, &s->hdr, sizeof(s->hdr), src,
						  wr->len, &p));
		break;
	default: /* lib/fabric checked the chain */
		s->status = DTXN_WC_REM_ACCESS_ERR;
		s->pending = 0;
		s->done = 1;
		q->in_flight--;
		break;
	}
}

int
ucx_qp_post(struct dtxn_qp *qp, struct dtxn_wr *wr_list)
{
	struct ucx_qp *q = UCX_QP(qp);
	const struct dtxn_wr *wr;
	uint32_t n_send, n = dtxn_wr_chain_count(wr_list, &n_send);
	uint32_t first = 0, run = 0;
	uint64_t bytes = 0, wlen;
	bool joins;

	if (n_send != 0 && !__atomic_load_n(&q->peer_up, __ATOMIC_ACQUIRE))
		return -ENOTCONN;
	if (unlikely(q->ep == NULL) && !q->lost) { /* a CN whose process was not up at create */
		if (!__atomic_load_n(&q->peer_up, __ATOMIC_ACQUIRE))
			return -ENOTCONN;
		(void)ucx_qp_connect_late(q); /* failed: lost, its WRs complete in error */
	}
	if (n > qp->max_wr - (q->tail - q->head))
		return -ENOBUFS;
	/* verbs as messages: the doorbell's run of READ/WRITE/CAS/FAA goes
	 * out as one message, which lands whole or not at all (ucx_verb.c) */
	for (wr = wr_list; wr != NULL; wr = wr->next) {
		uint32_t pos = q->tail++;
		struct ucx_slot *s = &q->slots[pos & q->mask];

		s->wr_id = wr->wr_id;
		s->local = wr->local;
		s->len = wr->len;
		s->opcode = wr->opcode;
		s->flags = wr->flags;
		s->status = DTXN_WC_SUCCESS;
		s->done = 0;
		s->pending = 0;
		s->awaiting = 0;
		s->quiet = 0;
		if (wr->flags & DTXN_WR_F_INLINE)
			memcpy(s->inl, wr->local, wr->len);
		if (q->lost) { /* the endpoint failed: nothing reaches the peer */
			s->status = DTXN_WC_FATAL_ERR;
			s->done = 1;
			continue;
		}
		joins = post_in_vmsg(q->uf, wr->opcode);
		if (!joins && run != 0) { /* the run goes first: one lane, posting order */
			ucx_verb_post(q, first, run);
			run = 0;
		}
		post_one(q, s, wr);
		if (!joins || s->done) /* issued, or refused at post (outside the region) */
			continue;
		wlen = sizeof(struct ucx_vdesc) + (wr->opcode == DTXN_WR_READ ||
						   wr->opcode == DTXN_WR_WRITE ? wr->len : 0);
		if (run != 0 && (first + run != pos || bytes + wlen > UCX_VMSG_SPLIT_BYTES)) {
			/* a refused WR in between (runs are contiguous), or a long one */
			ucx_verb_post(q, first, run);
			run = 0;
		}
		if (run == 0) {
			first = pos;
			bytes = 0;
		}
		bytes += wlen;
		if (++run == UCX_VMSG_MAX_VERBS) {
			ucx_verb_post(q, first, run);
			run = 0;
		}
	}
	if (run != 0)
		ucx_verb_post(q, first, run);
	return 0;
}

int
ucx_qp_post_recv(struct dtxn_qp *qp, struct dtxn_wr *wr_list)
{
	return dtxn_wr_queue_post(&UCX_QP(qp)->rq, wr_list, qp->max_wr);
}
