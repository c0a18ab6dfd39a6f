/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One Rocket (rrpc_peer.h), the same on a CN worker and on an MN's
 * service: filling the outbound ring's staging buckets, posting them as
 * one chain of WRITEs, and taking the complete buckets of the inbound
 * ring with the credit they carry.
 *
 * A Rocket's buckets are numbered from 0: [posted, sealed) are sealed and
 * wait for credit, [credit, posted) are in the peer's ring, unconsumed.
 * The staging copy of bucket i is stage[i % (2 * nb)]: it stays untouched
 * until the peer consumed bucket i (then its WRITE took effect), so the
 * WRITEs need no completion (unsignaled, wr_id 0).
 */
#include <errno.h>
#include <string.h>

#include <rte_common.h>
#include <rte_log.h>
#include <rte_malloc.h>

#include "rrpc_peer.h"

RTE_LOG_REGISTER(dtxn_rrpc_logtype, dtxn.rrpc, INFO);

static inline struct rrpc_bucket *
rrpc_stage(const struct rrpc_io *io, struct rrpc_peer *p, uint32_t i)
{
	return &p->stage[i % (2 * io->nb)];
}

int
rrpc_peer_alloc(const struct rrpc_io *io, struct rrpc_peer *p, int socket_id)
{
	p->stage = rte_zmalloc_socket("dtxn_rrpc_stage", sizeof(*p->stage) * 2 * io->nb,
				      RTE_CACHE_LINE_SIZE, socket_id);
	p->wrs = rte_zmalloc_socket("dtxn_rrpc_wrs", sizeof(*p->wrs) * (io->nb + 1), 0,
				    socket_id);
	return p->stage == NULL || p->wrs == NULL ? -ENOMEM : 0;
}

void
rrpc_peer_free(struct rrpc_peer *p)
{
	if (p->own_qp && p->qp != NULL)
		dtxn_qp_destroy(p->qp);
	p->qp = NULL;
	rte_free(p->stage);
	rte_free(p->zc_stage);
	rte_free(p->wrs);
	p->stage = NULL;
	p->zc_stage = NULL;
	p->wrs = NULL;
}

/* Takes the peer's credit word (its consumption of our ring) if it grew. */
static inline void
rrpc_credit_refresh(struct rrpc_peer *p)
{
	uint32_t c = (uint32_t)__atomic_load_n(p->credit_word, __ATOMIC_ACQUIRE);

	if ((int32_t)(c - p->credit) > 0)
		p->credit = c;
}

int
rrpc_peer_append(const struct rrpc_io *io, struct rrpc_peer *p, const struct rrpc_msg_hdr *h,
		 const void *payload)
{
	struct rrpc_bucket *b;
	int rc;

	if (h->len > RRPC_MSG_PAYLOAD_MAX)
		return -EINVAL;
	for (;;) {
		if (!p->open) {
			if (p->sealed - p->credit >= 2 * io->nb)
				return -EAGAIN;
			rrpc_bucket_reset(rrpc_stage(io, p, p->sealed));
			p->open = true;
		}
		b = rrpc_stage(io, p, p->sealed);
		rc = rrpc_bucket_add(b, h, payload);
		if (rc != -ENOSPC)
			break;
		(void)rrpc_bucket_seal(b, p->sealed);
		p->sealed++;
		p->open = false;
	}
	if (rc == 0)
		p->dirty = true;
	return rc;
}

void
rrpc_peer_flush(const struct rrpc_io *io, struct rrpc_peer *p)
{
	struct dtxn_wr *head = NULL, **link = &head;
	bool credit_only = false;
	unsigned n = 0;
	uint32_t i, end;

	if (p->open) {
		(void)rrpc_bucket_seal(rrpc_stage(io, p, p->sealed), p->sealed);
		p->sealed++;
		p->open = false;
	}
	rrpc_credit_refresh(p);
	end = p->sealed;
	if (end - p->credit > io->nb)
		end = p->credit + io->nb;
	for (i = p->posted; i != end; i++) {
		struct rrpc_bucket *b = rrpc_stage(io, p, i);
		struct dtxn_wr *wr = &p->wrs[n++];
		uint32_t label;

		memcpy(&label, b->data, sizeof(label));
		rrpc_bucket_set_ack(b, p->cons);
		memset(wr, 0, sizeof(*wr));
		wr->opcode = DTXN_WR_WRITE;
		wr->local = b->data;
		wr->len = label & 0xffffu;
		wr->raddr = p->tx_ring + (uint64_t)(i % io->nb) * RRPC_BUCKET_BYTES;
		*link = wr;
		link = &wr->next;
	}
	if (n == 0 && p->cons - p->acked >= io->nb / 2) {
		struct dtxn_wr *wr = &p->wrs[n++];

		p->credit_val = p->cons;
		memset(wr, 0, sizeof(*wr));
		wr->opcode = DTXN_WR_WRITE;
		wr->flags = DTXN_WR_F_INLINE;
		wr->local = &p->credit_val;
		wr->len = sizeof(p->credit_val);
		wr->raddr = p->credit_raddr;
		head = wr;
		credit_only = true;
	}
	p->dirty = p->posted != p->sealed;
	if (n == 0)
		return;
	dtxn_sched_charge_op(io->sched, DTXN_CPU_WR, n);        /* sim only */
	dtxn_sched_charge_op(io->sched, DTXN_CPU_DOORBELL, 1);
	if (dtxn_qp_post(p->qp, head) != 0) {
		RRPC_LOG(WARNING, "%u WRITEs to node %u not posted; the next flush retries", n,
			 p->node);
		p->dirty = true;
		return;
	}
	io->st->doorbells++;
	p->acked = p->cons;
	if (credit_only) {
		io->st->credits++;
		return;
	}
	io->st->buckets += n;
	p->posted = end;
	p->dirty = p->posted != p->sealed;
}

unsigned
rrpc_peer_take(const struct rrpc_io *io, struct rrpc_peer *p, rrpc_msg_fn fn, void *arg)
{
	unsigned taken = 0;

	for (;;) {
		uint8_t *mem = p->rx_ring + (uint64_t)(p->cons % io->nb) * RRPC_BUCKET_BYTES;
		int len = rrpc_bucket_ready(mem, p->cons);
		uint16_t ack;

		if (len == 0)
			break;
		taken++;
		if (len < 0) {
			io->st->bad++;
			RRPC_LOG(WARNING, "bad bucket from node %u dropped", p->node);
			rrpc_bucket_clear(mem, RRPC_BUCKET_BYTES);
			p->cons++;
			continue;
		}
		ack = rrpc_bucket_ack(mem);
		if ((int16_t)(ack - (uint16_t)p->credit) > 0)
			p->credit += (uint16_t)(ack - (uint16_t)p->credit);
		if (rrpc_bucket_parse(mem, (uint32_t)len, fn, arg) < 0)
			io->st->bad++;
		rrpc_bucket_clear(mem, (uint32_t)len);
		p->cons++;
	}
	return taken;
}
