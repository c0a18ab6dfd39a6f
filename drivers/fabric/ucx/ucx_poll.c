/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ucx driver: completions. UCX calls ucx_req_done() from the lcore's
 * ucp_worker_progress() (or the post settles an immediate completion);
 * the slot is done when its last request is. dtxn_cq_poll() retires each
 * QP's slots in posting order, as an RC QP's completions come: a
 * completion for a signaled WR and for any failed one. A failed endpoint
 * (peer lost) gives DTXN_WC_FATAL_ERR for its first failed WR and
 * DTXN_WC_WR_FLUSH_ERR for the later ones. Inbound SENDs come from the
 * control thread (ucx_am_recv()) through the QP's ring into posted RECVs.
 */
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>

#include "dtxn_sched.h"
#include "ucx_private.h"

/* The last request of slot @p s ended with @p st. */
static void
slot_finish(struct ucx_slot *s)
{
	if (s->status == DTXN_WC_SUCCESS) {
		if (s->opcode == DTXN_WR_MASKED_CAS && !dtxn_mcas_loop_step(&s->mcas, s->result)) {
			ucx_slot_issue_cas(s); /* the word changed outside the mask: again */
			return;
		}
		if (s->opcode == DTXN_WR_CAS || s->opcode == DTXN_WR_FAA ||
		    s->opcode == DTXN_WR_MASKED_CAS)
			memcpy(s->local, &s->result, sizeof(uint64_t));
	}
	s->done = 1;
	s->qp->in_flight--;
}

void
ucx_slot_status(struct ucx_slot *s, ucs_status_t st)
{
	if (st != UCS_OK && s->status == DTXN_WC_SUCCESS)
		s->status = DTXN_WC_FATAL_ERR; /* ucx_qp_retire() makes the later ones FLUSH */
	if (st != UCS_OK)
		s->awaiting = 0; /* the request failed: no answer will come */
	if (--s->pending == 0 && !s->awaiting)
		slot_finish(s);
}

void
ucx_slot_answered(struct ucx_slot *s)
{
	s->awaiting = 0;
	if (s->pending == 0)
		slot_finish(s);
}

void
ucx_req_done(void *request, ucs_status_t status, void *user_data)
{
	ucx_slot_status(user_data, status);
	ucp_request_free(request);
}

void
ucx_req_settle(struct ucx_slot *s, ucs_status_ptr_t sp)
{
	if (sp == NULL)
		ucx_slot_status(s, UCS_OK); /* completed in the call: no callback comes */
	else if (UCS_PTR_IS_ERR(sp))
		ucx_slot_status(s, UCS_PTR_STATUS(sp));
	/* else in flight: ucx_req_done() comes from the worker's progress */
}

void
ucx_ep_error(void *arg, ucp_ep_h ep, ucs_status_t status)
{
	struct ucx_qp *q = arg;

	RTE_SET_USED(ep);
	if (!q->lost)
		UCX_LOG(ERR, "node %u -> %u: endpoint failed (%s): peer lost", q->base.local_node,
			q->base.remote_node, ucs_status_string(status));
	q->lost = true;
}

void
ucx_qp_retire(struct ucx_qp *q)
{
	struct dtxn_cqe_ring *ring = &q->cq->core.ring;
	struct ucx_inmsg *m;

	while (q->head != q->tail) {
		struct ucx_slot *s = &q->slots[q->head & q->mask];
		uint8_t status;

		if (!s->done && s->awaiting && q->lost) { /* its answer will not come */
			if (s->status == DTXN_WC_SUCCESS)
				s->status = DTXN_WC_FATAL_ERR;
			ucx_slot_answered(s);
		}
		if (!s->done)
			break;
		status = s->status;
		if (status == DTXN_WC_FATAL_ERR && q->fatal_said)
			status = DTXN_WC_WR_FLUSH_ERR;
		if ((s->flags & DTXN_WR_F_SIGNALED) || status != DTXN_WC_SUCCESS) {
			uint32_t byte_len = status != DTXN_WC_SUCCESS ? 0 :
					    s->opcode == DTXN_WR_READ || s->opcode == DTXN_WR_WRITE ||
					    s->opcode == DTXN_WR_SEND ? s->len : sizeof(uint64_t);

			if (!dtxn_cqe_ring_push(ring, s->wr_id, byte_len, s->opcode, status,
						q->base.remote_node))
				break; /* CQ full: at the next poll */
		}
		if (status == DTXN_WC_FATAL_ERR)
			q->fatal_said = true;
		q->head++;
	}
	while (dtxn_wr_queue_count(&q->rq) != 0 && !dtxn_cqe_ring_full(ring) &&
	       rte_ring_dequeue(q->inbound, (void **)&m) == 0) {
		const struct dtxn_wr *r = dtxn_wr_queue_pop(&q->rq);

		dtxn_cqe_ring_push(ring, r->wr_id, m->len, DTXN_WR_RECV,
				   dtxn_fabric_recv_fill(r, m->data, m->len), q->base.remote_node);
		free(m);
	}
}

/*
 * The lcore's worker found nothing UCX_IDLE_POLLS times in a row, and for
 * DTXN_UCX_SPIN_US, while WRs are in flight: its coordinators wait on the
 * network. Over TCP the
 * targets' CPUs execute those WRs, and on a host with fewer cores than
 * busy threads a spinning CN starves them: arm the worker and sleep on
 * its event fd until a reply arrives, UCX_IDLE_SLEEP_MS at most (a
 * coordinator's timer is late by that much at worst).
 */
static void
cq_idle(struct ucx_cq *cq)
{
	struct pollfd pfd = { .events = POLLIN };

	if (cq->efd < 0 && ucp_worker_get_efd(cq->w, &cq->efd) != UCS_OK) {
		cq->efd = -2; /* no event fd: keep spinning */
		return;
	}
	if (cq->efd < 0 || ucp_worker_arm(cq->w) != UCS_OK)
		return; /* UCS_ERR_BUSY: events are there already */
	pfd.fd = cq->efd;
	(void)poll(&pfd, 1, UCX_IDLE_SLEEP_MS);
	__atomic_fetch_add(&cq->sleeps, 1, __ATOMIC_RELAXED);
}

unsigned
ucx_cq_poll(struct dtxn_cq *c, struct dtxn_cqe *cqes, unsigned n)
{
	struct ucx_cq *cq = UCX_CQ(c);
	struct ucx_qp *q;

	if (dtxn_cqe_ring_count(&cq->core.ring) < n) {
		uint32_t in_flight = 0;

		if (ucp_worker_progress(cq->w) != 0) {
			cq->idle = 0;
		} else if (cq->block && ++cq->idle >= UCX_IDLE_POLLS) {
			uint64_t now = dtxn_now_ns();

			if (cq->idle == UCX_IDLE_POLLS)
				cq->idle_since = now;
			if (now - cq->idle_since >= cq->spin_ns) {
				TAILQ_FOREACH(q, &cq->qps, cq_next)
					in_flight += q->in_flight;
				if (in_flight != 0)
					cq_idle(cq);
				cq->idle = 0;
			}
		}
		TAILQ_FOREACH(q, &cq->qps, cq_next) {
			/* a restarted peer CN announced itself: connect to it instead */
			if (unlikely(__atomic_load_n(&q->rejoin, __ATOMIC_ACQUIRE)))
				ucx_qp_rejoin(q);
			/* a late peer announced itself: connect back, so that it may SEND */
			if (unlikely(q->ep == NULL) && !q->lost &&
			    __atomic_load_n(&q->peer_up, __ATOMIC_ACQUIRE))
				(void)ucx_qp_connect_late(q);
			ucx_qp_retire(q);
		}
	}
	return dtxn_cqe_ring_pop(&cq->core.ring, cqes, n);
}

ucs_status_t
ucx_am_recv(void *arg, const void *header, size_t header_length, void *data, size_t length,
	    const ucp_am_recv_param_t *param)
{
	struct ucx_fabric *uf = arg;
	struct ucx_inmsg *m;

	if (header_length != sizeof(struct ucx_am_hdr) ||
	    (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) || length > DTXN_WR_LEN_MAX) {
		__atomic_fetch_add(&uf->dropped, 1, __ATOMIC_RELAXED);
		UCX_LOG(WARNING, "a SEND message of an unexpected form (header %zu B, %zu B%s): dropped",
			header_length, length,
			(param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) ? ", rendezvous" : "");
		return UCS_OK;
	}
	m = malloc(sizeof(*m) + length);
	if (m == NULL) {
		__atomic_fetch_add(&uf->dropped, 1, __ATOMIC_RELAXED);
		return UCS_OK;
	}
	memcpy(&m->hdr, header, sizeof(m->hdr));
	m->len = (uint32_t)length;
	if (length != 0)
		memcpy(m->data, data, length);
	ucx_route_deliver(uf, m);
	return UCS_OK;
}
