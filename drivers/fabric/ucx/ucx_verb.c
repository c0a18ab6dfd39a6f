/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ucx driver: one-sided verbs as the driver's own active messages
 * (doc/guides/ucx.md, "Verbs as messages"). Over TCP UCX emulates RMA and
 * atomics on the target's CPU anyway, in its own code, where nothing can
 * refuse a fenced CN's late WRs (and a connection the MN cut may come
 * back). Carried as UCX_AM_VERB instead, the verbs are executed by the MN's
 * serve thread here.
 *
 * One doorbell, one message (ucx_vmsg.h): the READs, WRITEs, CASes and
 * FAAs one post call gives a QP travel together. The MN checks the whole
 * message, checks once that its source CN is not fenced
 * (dtxn_fabric_fence_node()) and that every verb lies in its region, then
 * executes them in order, or refuses them all. So a chain lands on its MN
 * whole or not at all: a SIGKILLed CN loses whole messages (what UCX had
 * not sent), a fence refuses from a chain boundary on. A commit batch
 * spread over several MNs may still land on some of them only: the
 * protocols' recoveries handle that (doc/guides/ucx.md, "Posted is not
 * delivered").
 *
 * The MN answers with one UCX_AM_VERB_REP to the asking lcore's worker:
 * one answer per verb that asked for one, READ data copied when the READ
 * executed (so a WRITE then a READ of it in one chain reads the new data).
 * The answer completes the slot, so a WRITE's completion means it took
 * effect, with no flush. An unsignaled WRITE asks for no answer (its slot
 * is free once its message is sent, as a put's): one a fence refused is
 * reported by the next signaled WR of its QP, which the fence refuses too.
 * One endpoint carries every message of a QP on one lane: posting order.
 */
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>

#include "ucx_private.h"

/* A verb message on its way out; freed by its send's completion. */
struct vmsg_out {
	struct ucx_qp *q;            /* CN side: whose slots; NULL: an MN's answer */
	uint32_t first, n;           /* the slots' ring positions */
	union {
		struct ucx_vmsg_hdr req;
		struct ucx_vrep_hdr rep;
	} hdr;
	uint8_t data[] __attribute__((aligned(8)));
};

static inline struct ucx_slot *
vmsg_slot(struct ucx_qp *q, uint32_t pos)
{
	return &q->slots[pos & q->mask];
}

/* The message left (or failed): every slot it carried has one request less. */
static void
vmsg_done(struct vmsg_out *m, ucs_status_t status)
{
	if (m->q != NULL)
		for (uint32_t i = 0; i < m->n; i++)
			ucx_slot_status(vmsg_slot(m->q, m->first + i), status);
	free(m);
}

static void
vmsg_sent(void *request, ucs_status_t status, void *user_data)
{
	vmsg_done(user_data, status);
	ucp_request_free(request);
}

/* Sends @p m (header and @p len bytes of data) on @p ep. */
static void
vmsg_send(ucp_ep_h ep, unsigned id, struct vmsg_out *m, size_t hdr_len, size_t len, bool reply)
{
	ucp_request_param_t p = {
		.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA |
				UCP_OP_ATTR_FIELD_FLAGS,
		.cb.send = vmsg_sent, .user_data = m,
		/* eager: the handlers take no rendezvous */
		.flags = UCP_AM_SEND_FLAG_EAGER | (reply ? UCP_AM_SEND_FLAG_REPLY : 0),
	};
	ucs_status_ptr_t sp = ucp_am_send_nbx(ep, id, &m->hdr, hdr_len, m->data, len, &p);

	if (sp == NULL)
		vmsg_done(m, UCS_OK); /* sent (copied) at once: no callback comes */
	else if (UCS_PTR_IS_ERR(sp))
		vmsg_done(m, UCS_PTR_STATUS(sp));
}

void
ucx_verb_post(struct ucx_qp *q, uint32_t first, uint32_t n)
{
	struct ucx_fabric *uf = q->uf;
	size_t len = (size_t)n * sizeof(struct ucx_vdesc);
	struct vmsg_out *m;
	uint8_t *at;

	for (uint32_t i = 0; i < n; i++) {
		struct ucx_slot *s = vmsg_slot(q, first + i);

		if (s->opcode == DTXN_WR_WRITE)
			len += s->len;
	}
	m = malloc(sizeof(*m) + len);
	for (uint32_t i = 0; i < n; i++) {
		struct ucx_slot *s = vmsg_slot(q, first + i);

		s->quiet = s->opcode == DTXN_WR_WRITE && !(s->flags & DTXN_WR_F_SIGNALED);
		s->pending = 1;                /* the message's local completion */
		s->awaiting = m != NULL && !s->quiet; /* and the answer (or the endpoint's failure) */
	}
	if (m == NULL) {
		for (uint32_t i = 0; i < n; i++)
			ucx_slot_status(vmsg_slot(q, first + i), UCS_ERR_NO_MEMORY);
		return;
	}
	m->q = q;
	m->first = first;
	m->n = n;
	m->hdr.req = (struct ucx_vmsg_hdr){ .src_node = q->base.local_node,
					    .dst_node = q->base.remote_node,
					    .n = (uint16_t)n, .bytes = (uint32_t)len,
					    .src_inc = uf->self_inc[q->base.local_node] };
	at = m->data + (size_t)n * sizeof(struct ucx_vdesc);
	for (uint32_t i = 0; i < n; i++) {
		struct ucx_slot *s = vmsg_slot(q, first + i);
		uint8_t op = s->opcode == DTXN_WR_MASKED_CAS ? DTXN_WR_CAS : s->opcode;
		struct ucx_vdesc d = {
			.cookie = (uintptr_t)s, .off = s->raddr - q->rbase, .operand = s->operand,
			.swap = s->result, .len = op == DTXN_WR_READ || op == DTXN_WR_WRITE ? s->len : 8,
			.opcode = op, .quiet = s->quiet,
		};

		memcpy(m->data + (size_t)i * sizeof(d), &d, sizeof(d));
		if (op == DTXN_WR_WRITE) {
			memcpy(at, (s->flags & DTXN_WR_F_INLINE) ? s->inl : s->local, s->len);
			at += s->len;
		}
	}
	__atomic_fetch_add(&uf->verb_msgs, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&uf->verbs_in_msgs, n, __ATOMIC_RELAXED);
	vmsg_send(q->ep, UCX_AM_VERB, m, sizeof(m->hdr.req), len, true);
}

/* MN side: executes verb @p d at @p at; a READ's data goes to *@p rd. */
static uint64_t
verb_exec(const struct ucx_vdesc *d, uint8_t *at, const uint8_t **payload, uint8_t **rd)
{
	uint64_t old = 0;

	/* this thread executes every remote verb on the region: the atomics
	 * are atomic against each other and against the MN's own CPU
	 * (Scythe's service) */
	switch (d->opcode) {
	case DTXN_WR_READ: /* never quiet: its answer carries the data */
		memcpy(*rd, at, d->len);
		*rd += d->len;
		break;
	case DTXN_WR_WRITE:
		memcpy(at, *payload, d->len);
		*payload += d->len;
		break;
	case DTXN_WR_CAS:
		old = d->operand;
		__atomic_compare_exchange_n((uint64_t *)(void *)at, &old, d->swap, false,
					    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
		break;
	default: /* FAA: ucx_vmsg_check() let no other through */
		old = __atomic_fetch_add((uint64_t *)(void *)at, d->operand, __ATOMIC_ACQ_REL);
		break;
	}
	return old;
}

ucs_status_t
ucx_verb_serve(void *arg, const void *header, size_t header_length, void *data, size_t length,
	       const ucp_am_recv_param_t *param)
{
	struct ucx_fabric *uf = arg;
	struct ucx_vmsg_shape shape;
	struct ucx_vmsg_hdr h;
	const struct ucx_region *r;
	const uint8_t *desc = data, *payload;
	struct vmsg_out *m;
	uint8_t *rd, *ans;
	bool refused;

	if (header_length != sizeof(h) || !(param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP) ||
	    (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV)) {
		__atomic_fetch_add(&uf->dropped, 1, __ATOMIC_RELAXED);
		return UCS_OK; /* not ours: nobody to answer */
	}
	memcpy(&h, header, sizeof(h));
	if (h.bytes != length || ucx_vmsg_check(data, length, h.n, &shape) != 0) {
		__atomic_fetch_add(&uf->dropped, 1, __ATOMIC_RELAXED);
		UCX_LOG(ERR, "node %u: a malformed verb message from node %u (%zu bytes), dropped",
			h.dst_node, h.src_node, length);
		return UCS_OK;
	}
	r = h.dst_node < uf->n_mn && uf->mn[h.dst_node].base != NULL ? &uf->mn[h.dst_node] : NULL;
	/* fenced: its access is revoked, from this chain on; an incarnation
	 * other than the one admitted (a fenced one, after its successor's
	 * HELLO un-fenced the node): refused too */
	refused = r == NULL || h.src_node >= uf->n_nodes ||
		  (__atomic_load_n(&uf->fenced, __ATOMIC_ACQUIRE) >> h.src_node & 1) ||
		  ((__atomic_load_n(&uf->admitted_mask, __ATOMIC_ACQUIRE) >> h.src_node & 1) &&
		   h.src_inc != __atomic_load_n(&uf->admitted[h.src_node], __ATOMIC_ACQUIRE));
	for (uint32_t i = 0; i < h.n && !refused; i++) {
		struct ucx_vdesc d;

		memcpy(&d, desc + (size_t)i * sizeof(d), sizeof(d));
		refused = !ucx_vdesc_in_region(&d, r->len);
	}
	if (refused) {
		__atomic_fetch_add(&uf->verb_refused, 1, __ATOMIC_RELAXED);
		shape.read_bytes = 0;
	}
	m = shape.n_answer != 0 ? malloc(sizeof(*m) + ucx_vrep_bytes(&shape)) : NULL;
	if (shape.n_answer != 0 && m == NULL) {
		/* no memory for the answer: nothing executes, the asker's QP
		 * fails when its endpoint does */
		__atomic_fetch_add(&uf->dropped, 1, __ATOMIC_RELAXED);
		return UCS_OK;
	}
	ans = m != NULL ? m->data : NULL;
	rd = m != NULL ? m->data + (size_t)shape.n_answer * sizeof(struct ucx_vrep) : NULL;
	payload = desc + (size_t)h.n * sizeof(struct ucx_vdesc);
	for (uint32_t i = 0; i < h.n; i++) {
		struct ucx_vdesc d;
		struct ucx_vrep a = { .status = refused ? DTXN_WC_REM_ACCESS_ERR : DTXN_WC_SUCCESS };

		memcpy(&d, desc + (size_t)i * sizeof(d), sizeof(d));
		if (!refused)
			a.old = verb_exec(&d, r->base + d.off, &payload, &rd);
		if (d.quiet)
			continue;
		a.cookie = d.cookie;
		memcpy(ans, &a, sizeof(a));
		ans += sizeof(a);
	}
	if (m == NULL)
		return UCS_OK; /* every verb was quiet */
	m->q = NULL;
	m->hdr.rep = (struct ucx_vrep_hdr){ .n = (uint16_t)shape.n_answer,
					    .bytes = (uint32_t)(rd - m->data) };
	vmsg_send(param->reply_ep, UCX_AM_VERB_REP, m, sizeof(m->hdr.rep), m->hdr.rep.bytes, false);
	return UCS_OK;
}

ucs_status_t
ucx_verb_answer(void *arg, const void *header, size_t header_length, void *data, size_t length,
		const ucp_am_recv_param_t *param)
{
	struct ucx_vrep_hdr h;
	const uint8_t *at = data, *rd, *end = (const uint8_t *)data + length;

	RTE_SET_USED(arg);
	if (header_length != sizeof(h) || (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV))
		return UCS_OK;
	memcpy(&h, header, sizeof(h));
	if (h.bytes != length || (size_t)h.n * sizeof(struct ucx_vrep) > length)
		return UCS_OK;
	rd = at + (size_t)h.n * sizeof(struct ucx_vrep);
	for (uint32_t i = 0; i < h.n; i++, at += sizeof(struct ucx_vrep)) {
		struct ucx_vrep a;
		struct ucx_slot *s;
		uint8_t status;

		memcpy(&a, at, sizeof(a));
		s = (struct ucx_slot *)(uintptr_t)a.cookie;
		status = a.status;
		if (status == DTXN_WC_SUCCESS && s->opcode == DTXN_WR_READ) {
			if ((size_t)(end - rd) < s->len) {
				status = DTXN_WC_REM_ACCESS_ERR;
			} else {
				memcpy(s->local, rd, s->len);
				rd += s->len;
			}
		}
		if (!s->awaiting)
			continue; /* the endpoint failed first: the slot is settled */
		s->result = a.old;
		if (status != DTXN_WC_SUCCESS && s->status == DTXN_WC_SUCCESS)
			s->status = status;
		ucx_slot_answered(s);
	}
	return UCS_OK;
}
