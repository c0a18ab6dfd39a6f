/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * shm driver: the memory effect of one WR, as the remote RNIC would apply
 * it. Copies to and from MN memory go word by word in increasing address
 * order (what protocols that put a lock at a record's highest address rely
 * on: OOCC, FaRM); atomics are CPU atomics on the 8-byte word.
 */
#include <string.h>

#include <rte_common.h>
#include <rte_malloc.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "shm_private.h"

/* Local -> MN, increasing addresses, each store visible after the previous. */
static void
shm_copy_to_mn(uint8_t *dst, const uint8_t *src, size_t len)
{
	size_t i = 0;

	while (i < len && ((uintptr_t)(dst + i) & 7) != 0) {
		__atomic_store_n(dst + i, src[i], __ATOMIC_RELEASE);
		i++;
	}
	for (; i + 8 <= len; i += 8) {
		uint64_t v;

		memcpy(&v, src + i, 8);
		__atomic_store_n((uint64_t *)(void *)(dst + i), v, __ATOMIC_RELEASE);
	}
	for (; i < len; i++)
		__atomic_store_n(dst + i, src[i], __ATOMIC_RELEASE);
}

/* MN -> local, increasing addresses. */
static void
shm_copy_from_mn(uint8_t *dst, const uint8_t *src, size_t len)
{
	size_t i = 0;

	while (i < len && ((uintptr_t)(src + i) & 7) != 0) {
		dst[i] = __atomic_load_n(src + i, __ATOMIC_ACQUIRE);
		i++;
	}
	for (; i + 8 <= len; i += 8) {
		uint64_t v = __atomic_load_n((const uint64_t *)(const void *)(src + i),
					     __ATOMIC_ACQUIRE);

		memcpy(dst + i, &v, 8);
	}
	for (; i < len; i++)
		dst[i] = __atomic_load_n(src + i, __ATOMIC_ACQUIRE);
}

/* @return the MN address of [off, off+len) or NULL if outside the region. */
static uint8_t *
shm_mn_addr(const struct shm_qp *qp, dtxn_raddr_t raddr, uint32_t len)
{
	uint64_t off = DTXN_RADDR_OFF(raddr);

	if (qp->mn_base == NULL || off > qp->mn_size || len > qp->mn_size - off)
		return NULL;
	return qp->mn_base + off;
}

static uint64_t
shm_masked_cas(uint64_t *p, uint64_t cmp, uint64_t swap, uint64_t cmp_mask,
	       uint64_t swap_mask)
{
	uint64_t old = __atomic_load_n(p, __ATOMIC_ACQUIRE);
	uint64_t nv;

	do {
		if (((old ^ cmp) & cmp_mask) != 0)
			break;
		nv = (old & ~swap_mask) | (swap & swap_mask);
	} while (!__atomic_compare_exchange_n(p, &old, nv, false, __ATOMIC_ACQ_REL,
					      __ATOMIC_ACQUIRE));
	return old;
}

static uint8_t
shm_atomic(struct shm_qp *qp, struct dtxn_wr *wr)
{
	uint8_t *a = shm_mn_addr(qp, wr->raddr, 8);
	uint64_t *p, old;

	if (a == NULL || ((uintptr_t)a & 7) != 0)
		return DTXN_WC_REM_ACCESS_ERR;
	p = (uint64_t *)(void *)a;
	switch (wr->opcode) {
	case DTXN_WR_CAS:
		old = wr->compare_add;
		__atomic_compare_exchange_n(p, &old, wr->swap, false, __ATOMIC_ACQ_REL,
					    __ATOMIC_ACQUIRE);
		break;
	case DTXN_WR_FAA:
		old = __atomic_fetch_add(p, wr->compare_add, __ATOMIC_ACQ_REL);
		break;
	default:
		old = shm_masked_cas(p, wr->compare_add, wr->swap, wr->compare_mask,
				     wr->swap_mask);
		break;
	}
	memcpy(wr->local, &old, 8);
	return DTXN_WC_SUCCESS;
}

/* Hands a SEND's payload to the peer QP. false: retry later (RNR). */
static bool
shm_send(struct shm_qp *qp, struct shm_wqe *w)
{
	struct shm_qp *peer = __atomic_load_n(&qp->peer, __ATOMIC_ACQUIRE);
	struct shm_msg *m = NULL;
	uint32_t len = w->wr.len;

	if (peer == NULL) {
		w->status = DTXN_WC_WR_FLUSH_ERR; /* the peer QP is gone */
		return true;
	}
	if (rte_ring_full(peer->inbound))
		return false;
	if (len <= SHM_MSG_POOL_DATA && rte_mempool_get(qp->sf->msg_pool, (void **)&m) == 0) {
		m->pooled = 1;
	} else {
		m = rte_malloc("shm_msg", sizeof(*m) + len, 0);
		if (m == NULL)
			return false;
		m->pooled = 0;
	}
	m->len = len;
	m->src_node = qp->base.local_node;
	if (len > 0)
		memcpy(m->data, w->wr.local, len);
	if (rte_ring_enqueue(peer->inbound, m) != 0) {
		shm_msg_free(m);
		return false;
	}
	return true;
}

bool
shm_wqe_execute(struct shm_qp *qp, struct shm_wqe *w)
{
	struct dtxn_wr *wr = &w->wr;
	uint8_t *a;

	switch (wr->opcode) {
	case DTXN_WR_READ:
	case DTXN_WR_WRITE:
		a = shm_mn_addr(qp, wr->raddr, wr->len);
		if (a == NULL) {
			w->status = DTXN_WC_REM_ACCESS_ERR;
		} else if (wr->opcode == DTXN_WR_READ) {
			shm_copy_from_mn(wr->local, a, wr->len);
		} else {
			shm_copy_to_mn(a, wr->local, wr->len);
		}
		return true;
	case DTXN_WR_SEND:
		return shm_send(qp, w);
	default:
		w->status = shm_atomic(qp, wr);
		return true;
	}
}
