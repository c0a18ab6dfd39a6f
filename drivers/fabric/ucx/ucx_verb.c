/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ucx driver: one-sided verbs as the driver's own active messages
 * (doc/guides/ucx.md, "Verbs as messages"). Over TCP UCX emulates RMA and
 * atomics on the target's CPU anyway, in its own code, where nothing can
 * refuse a fenced CN's late WRs (and a connection the MN cut may come
 * back). Carried as UCX_AM_VERB instead, each READ, WRITE, CAS or FAA is
 * executed by the MN's serve thread here, which first checks that its
 * source CN is not fenced (dtxn_fabric_fence_node()), then answers with
 * UCX_AM_VERB_REP to the asking lcore's worker: the answer completes the
 * slot, so a WRITE's completion means it took effect, with no flush. An
 * unsignaled WRITE asks for no answer (its slot is free once sent, as a
 * put's): one a fence refused is reported by the next signaled WR of its
 * QP, which the fence refuses too.
 * One endpoint carries every verb of a QP on one lane: posting order.
 */
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>

#include "ucx_private.h"

static void
verb_sent(void *request, ucs_status_t status, void *user_data)
{
	RTE_SET_USED(status); /* a lost peer fails the asking side's endpoint */
	free(user_data);
	ucp_request_free(request);
}

/* MN side: answers @p req on @p ep (the asker's worker). */
static void
verb_reply(ucp_ep_h ep, const struct ucx_verb_req *req, uint8_t status, uint64_t old,
	   const void *data, uint32_t len)
{
	struct ucx_verb_rep *rep = malloc(sizeof(*rep));
	ucp_request_param_t p = {
		.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA |
				UCP_OP_ATTR_FIELD_FLAGS,
		.cb.send = verb_sent, .user_data = rep, .flags = UCP_AM_SEND_FLAG_EAGER,
	};
	ucs_status_ptr_t sp;

	if (rep == NULL)
		return; /* the asker's QP waits: it fails when the endpoint does */
	*rep = (struct ucx_verb_rep){ .cookie = req->cookie, .old = old, .status = status };
	sp = ucp_am_send_nbx(ep, UCX_AM_VERB_REP, rep, sizeof(*rep), data,
			     status == DTXN_WC_SUCCESS ? len : 0, &p);
	if (!UCS_PTR_IS_PTR(sp))
		free(rep); /* sent (copied) at once, or failed: no callback comes */
}

ucs_status_t
ucx_verb_serve(void *arg, const void *header, size_t header_length, void *data, size_t length,
	       const ucp_am_recv_param_t *param)
{
	struct ucx_fabric *uf = arg;
	struct ucx_verb_req req;
	const struct ucx_region *r;
	uint8_t status = DTXN_WC_SUCCESS;
	uint64_t old = 0;
	uint8_t *at;

	if (header_length != sizeof(req) || !(param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP) ||
	    (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV)) {
		__atomic_fetch_add(&uf->dropped, 1, __ATOMIC_RELAXED);
		return UCS_OK; /* not ours: nobody to answer */
	}
	memcpy(&req, header, sizeof(req));
	r = req.dst_node < uf->n_mn ? &uf->mn[req.dst_node] : NULL;
	if (req.src_node >= uf->n_nodes ||
	    (__atomic_load_n(&uf->fenced, __ATOMIC_ACQUIRE) >> req.src_node & 1)) {
		status = DTXN_WC_REM_ACCESS_ERR; /* fenced: its access is revoked */
	} else if (r == NULL || r->base == NULL || req.off > r->len || req.len > r->len - req.off ||
		   (req.opcode == DTXN_WR_WRITE && length != req.len) ||
		   (req.opcode != DTXN_WR_READ && req.opcode != DTXN_WR_WRITE &&
		    (req.len != 8 || (req.off & 7) != 0))) {
		status = DTXN_WC_REM_ACCESS_ERR;
	} else {
		at = r->base + req.off;
		/* this thread executes every remote verb on the region (UCX's
		 * GETs too, if any): the atomics are atomic against each other
		 * and against the MN's own CPU (Scythe's service) */
		switch (req.opcode) {
		case DTXN_WR_READ:
			verb_reply(param->reply_ep, &req, status, 0, at, req.len);
			return UCS_OK;
		case DTXN_WR_WRITE:
			memcpy(at, data, req.len);
			break;
		case DTXN_WR_CAS:
			old = req.operand;
			__atomic_compare_exchange_n((uint64_t *)(void *)at, &old, req.swap, false,
						    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
			break;
		case DTXN_WR_FAA:
			old = __atomic_fetch_add((uint64_t *)(void *)at, req.operand, __ATOMIC_ACQ_REL);
			break;
		default:
			status = DTXN_WC_REM_ACCESS_ERR;
			break;
		}
	}
	if (!req.quiet)
		verb_reply(param->reply_ep, &req, status, old, NULL, 0);
	return UCS_OK;
}

ucs_status_t
ucx_verb_answer(void *arg, const void *header, size_t header_length, void *data, size_t length,
		const ucp_am_recv_param_t *param)
{
	struct ucx_verb_rep rep;
	struct ucx_slot *s;

	RTE_SET_USED(arg);
	if (header_length != sizeof(rep) || (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV))
		return UCS_OK;
	memcpy(&rep, header, sizeof(rep));
	s = (struct ucx_slot *)(uintptr_t)rep.cookie;
	if (rep.status == DTXN_WC_SUCCESS && s->opcode == DTXN_WR_READ) {
		if (length != s->len)
			rep.status = DTXN_WC_REM_ACCESS_ERR;
		else
			memcpy(s->local, data, length);
	}
	if (!s->awaiting)
		return UCS_OK; /* the endpoint failed first: the slot is settled */
	s->result = rep.old;
	if (rep.status != DTXN_WC_SUCCESS && s->status == DTXN_WC_SUCCESS)
		s->status = rep.status;
	ucx_slot_answered(s);
	return UCS_OK;
}

void
ucx_verb_post(struct ucx_slot *s, const void *payload)
{
	struct ucx_qp *q = s->qp;
	ucp_request_param_t p = {
		.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA |
				UCP_OP_ATTR_FIELD_FLAGS,
		.cb.send = ucx_req_done, .user_data = s,
		.flags = UCP_AM_SEND_FLAG_EAGER | UCP_AM_SEND_FLAG_REPLY,
	};
	uint8_t op = s->opcode == DTXN_WR_MASKED_CAS ? DTXN_WR_CAS : s->opcode;
	ucs_status_ptr_t sp;

	s->req = (struct ucx_verb_req){
		.cookie = (uintptr_t)s, .off = s->raddr - q->rbase, .operand = s->operand,
		.swap = s->result, .len = op == DTXN_WR_READ || op == DTXN_WR_WRITE ? s->len : 8,
		.src_node = q->base.local_node, .dst_node = q->base.remote_node, .opcode = op,
	};
	/* an unsignaled WRITE asks for no answer: its slot is free once sent,
	 * as a put's; a signaled WR after it on the QP answers for both */
	s->req.quiet = op == DTXN_WR_WRITE && !(s->flags & DTXN_WR_F_SIGNALED);
	s->pending = 1;  /* the send's local completion */
	s->awaiting = !s->req.quiet; /* and the answer (ucx_verb_answer(), or the endpoint's failure) */
	sp = ucp_am_send_nbx(q->ep, UCX_AM_VERB, &s->req, sizeof(s->req), payload,
			     op == DTXN_WR_WRITE ? s->len : 0, &p);
	if (UCS_PTR_IS_ERR(sp))
		s->awaiting = 0; /* never left: no answer comes */
	ucx_req_settle(s, sp);
}
