/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What every emulating driver (shm, sim) does the same way, so that they
 * cannot drift apart (dtxn_fabric_driver.h, "Shared by emulating drivers"):
 * - the memory effect of a one-sided WR on an MN region, as the remote RNIC
 *   applies it: copies word by word in increasing address order (a lock or
 *   version at a record's highest address is seen last: OOCC, FaRM), and
 *   atomics as CPU atomics on the 8-byte word;
 * - the NIC-model timing of a WR (ARCHITECTURE.md, "NIC performance model");
 * - delivering a message into a posted RECV.
 */
#include <string.h>

#include <rte_common.h>

#include "dtxn_fabric.h"
#include "dtxn_fabric_driver.h"

/*
 * Local -> MN, increasing addresses, each store visible after the previous.
 * Not memcpy(): it promises neither the order nor whole 8-byte words to a
 * reader on another lcore or process (glibc copies a 16-32 B tail first;
 * ERMS rep movsb stores are not ordered among themselves). Nor is it the
 * cost: on the 2-core EPYC VM (issue 30) this loop takes 23 cycles for
 * 64 B and 29 for 136 B in cache against memcpy's 20 and 22, and 53 for
 * 64 B out of cache against 42: the MN memory's misses, not the loop,
 * are what dtxn_fabric_mem_exec() costs in a profile (the samples sit on
 * the first load or store of a record, and on the lock CAS).
 */
static void
exec_copy_to_mn(uint8_t *dst, const uint8_t *src, size_t len)
{
	size_t i = 0;

	while (i < len && ((uintptr_t)(dst + i) & 7) != 0) {
		__atomic_store_n(dst + i, src[i], __ATOMIC_RELEASE);
		i++;
	}
	for (; i + 32 <= len; i += 32) { /* the same stores, 4 a turn */
		uint64_t v[4];

		memcpy(v, src + i, 32);
		__atomic_store_n((uint64_t *)(void *)(dst + i), v[0], __ATOMIC_RELEASE);
		__atomic_store_n((uint64_t *)(void *)(dst + i + 8), v[1], __ATOMIC_RELEASE);
		__atomic_store_n((uint64_t *)(void *)(dst + i + 16), v[2], __ATOMIC_RELEASE);
		__atomic_store_n((uint64_t *)(void *)(dst + i + 24), v[3], __ATOMIC_RELEASE);
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
exec_copy_from_mn(uint8_t *dst, const uint8_t *src, size_t len)
{
	size_t i = 0;

	while (i < len && ((uintptr_t)(src + i) & 7) != 0) {
		dst[i] = __atomic_load_n(src + i, __ATOMIC_ACQUIRE);
		i++;
	}
	for (; i + 32 <= len; i += 32) { /* the same loads, 4 a turn */
		uint64_t v[4];

		v[0] = __atomic_load_n((const uint64_t *)(const void *)(src + i), __ATOMIC_ACQUIRE);
		v[1] = __atomic_load_n((const uint64_t *)(const void *)(src + i + 8), __ATOMIC_ACQUIRE);
		v[2] = __atomic_load_n((const uint64_t *)(const void *)(src + i + 16), __ATOMIC_ACQUIRE);
		v[3] = __atomic_load_n((const uint64_t *)(const void *)(src + i + 24), __ATOMIC_ACQUIRE);
		memcpy(dst + i, v, 32);
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
exec_mn_addr(uint8_t *mn_base, uint64_t mn_size, dtxn_raddr_t raddr, uint32_t len)
{
	uint64_t off = DTXN_RADDR_OFF(raddr);

	if (mn_base == NULL || off > mn_size || len > mn_size - off)
		return NULL;
	return mn_base + off;
}

static uint64_t
exec_masked_cas(uint64_t *p, uint64_t cmp, uint64_t swap, uint64_t cmp_mask,
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
exec_atomic(uint8_t *mn_base, uint64_t mn_size, const struct dtxn_wr *wr)
{
	uint8_t *a = exec_mn_addr(mn_base, mn_size, wr->raddr, 8);
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
		old = exec_masked_cas(p, wr->compare_add, wr->swap, wr->compare_mask,
				      wr->swap_mask);
		break;
	}
	memcpy(wr->local, &old, 8);
	return DTXN_WC_SUCCESS;
}

uint8_t
dtxn_fabric_mem_exec(uint8_t *mn_base, uint64_t mn_size, const struct dtxn_wr *wr)
{
	uint8_t *a;

	switch (wr->opcode) {
	case DTXN_WR_READ:
	case DTXN_WR_WRITE:
		a = exec_mn_addr(mn_base, mn_size, wr->raddr, wr->len);
		if (a == NULL)
			return DTXN_WC_REM_ACCESS_ERR;
		if (wr->opcode == DTXN_WR_READ)
			exec_copy_from_mn(wr->local, a, wr->len);
		else
			exec_copy_to_mn(a, wr->local, wr->len);
		return DTXN_WC_SUCCESS;
	case DTXN_WR_CAS:
	case DTXN_WR_FAA:
	case DTXN_WR_MASKED_CAS:
		return exec_atomic(mn_base, mn_size, wr);
	default:
		return DTXN_WC_REM_ACCESS_ERR; /* SEND/RECV are not memory ops */
	}
}

struct dtxn_nic_unit *
dtxn_nic_unit_of(struct dtxn_nic_state *rnic, unsigned opcode)
{
	switch (opcode) {
	case DTXN_WR_CAS:
	case DTXN_WR_FAA:
	case DTXN_WR_MASKED_CAS:
		return &rnic->atomic;
	default:
		return &rnic->rw;
	}
}

/* Model v1 timing (dtxn_fabric_wr_time()): from @p post_ns on, unchanged since v1. */
static void
exec_wr_time_v1(const struct dtxn_nic_model *m, struct dtxn_nic_state *rnic,
		const struct dtxn_wr *wr, uint64_t post_ns, uint64_t *last_effect_ns,
		uint64_t *effect_ns, uint64_t *done_ns)
{
	uint64_t out = m->rtt_ns / 2;
	uint64_t effect = post_ns;

	if (rnic != NULL) {
		struct dtxn_nic_unit *unit = dtxn_nic_unit_of(rnic, wr->opcode);
		/* an atomic on the region's first bytes: the RNIC's device memory */
		bool dm = unit == &rnic->atomic && DTXN_RADDR_OFF(wr->raddr) < DTXN_FABRIC_DM_BYTES;
		uint64_t svc = dtxn_nic_service_ns(m, wr->opcode, wr->len, dm);

		effect = dtxn_nic_reserve(dm ? &rnic->dm_atomic : unit, post_ns + out, svc);
	}
	effect = RTE_MAX(effect, *last_effect_ns);
	*last_effect_ns = effect;
	*effect_ns = effect;
	*done_ns = effect + (rnic != NULL ? m->rtt_ns - out : 0);
}

/*
 * Model v2 timing at the remote RNIC, the op having left its poster at
 * @p sent_ns. The flight is what the unloaded round trip of an 8 B READ
 * leaves after its two pipeline costs (@p read_tx_ns at the poster, the
 * READ's here), the same for every opcode so that ops arrive in the order
 * they were sent; half out, half back. The pipeline serves every opcode;
 * an atomic's read-modify-write of its word starts when the op enters the
 * pipeline, once the word's previous atomic is done, and the op takes
 * effect when both are done.
 */
static void
exec_wr_time_v2(const struct dtxn_nic_model *m, struct dtxn_nic_state *rnic,
		const struct dtxn_wr *wr, uint64_t sent_ns, uint64_t read_tx_ns,
		uint64_t *last_effect_ns, uint64_t *effect_ns, uint64_t *done_ns)
{
	bool atomic = wr->opcode == DTXN_WR_CAS || wr->opcode == DTXN_WR_FAA ||
		      wr->opcode == DTXN_WR_MASKED_CAS;
	bool dm = atomic && DTXN_RADDR_OFF(wr->raddr) < DTXN_FABRIC_DM_BYTES;
	uint64_t svc = dtxn_nic_service_ns(m, wr->opcode, wr->len, dm);
	uint64_t base = read_tx_ns + dtxn_nic_service_ns(m, DTXN_WR_READ, 8, false);
	uint64_t fly = m->rtt_ns > base ? m->rtt_ns - base : 0;
	uint64_t effect;

	effect = dtxn_nic_reserve(&rnic->rw, sent_ns + fly / 2, svc);
	if (atomic)
		effect = RTE_MAX(effect,
				 dtxn_nic_word_reserve(rnic, dm ? &rnic->dm_atomic : &rnic->atomic,
						       DTXN_RADDR_OFF(wr->raddr), effect - svc,
						       dtxn_nic_rmw_ns(m, wr->opcode, dm)));
	effect = RTE_MAX(effect, *last_effect_ns);
	*last_effect_ns = effect;
	*effect_ns = effect;
	*done_ns = effect + (fly - fly / 2);
}

void
dtxn_fabric_wr_time_ex(const struct dtxn_nic_model *lm, struct dtxn_nic_state *lnic,
		       const struct dtxn_nic_model *m, struct dtxn_nic_state *rnic,
		       const struct dtxn_wr *wr, uint64_t post_ns, uint64_t *last_effect_ns,
		       uint64_t *effect_ns, uint64_t *done_ns)
{
	uint64_t sent = post_ns, read_tx = 0;

	if (lm != NULL && lnic != NULL && lm->version == 2) {
		sent = dtxn_nic_reserve(&lnic->tx, post_ns,
					dtxn_nic_tx_ns(lm, wr->opcode, wr->len));
		read_tx = dtxn_nic_tx_ns(lm, DTXN_WR_READ, 8);
	}
	if (rnic != NULL && m->version == 2)
		exec_wr_time_v2(m, rnic, wr, sent, read_tx, last_effect_ns, effect_ns, done_ns);
	else
		exec_wr_time_v1(m, rnic, wr, sent, last_effect_ns, effect_ns, done_ns);
}

void
dtxn_fabric_wr_time(const struct dtxn_nic_model *m, struct dtxn_nic_state *rnic,
		    const struct dtxn_wr *wr, uint64_t post_ns, uint64_t *last_effect_ns,
		    uint64_t *effect_ns, uint64_t *done_ns)
{
	dtxn_fabric_wr_time_ex(NULL, NULL, m, rnic, wr, post_ns, last_effect_ns, effect_ns,
			       done_ns);
}

uint8_t
dtxn_fabric_recv_fill(const struct dtxn_wr *recv, const void *data, uint32_t len)
{
	if (len > recv->len)
		return DTXN_WC_LOC_LEN_ERR;
	if (len > 0)
		memcpy(recv->local, data, len);
	return DTXN_WC_SUCCESS;
}

uint8_t
dtxn_fabric_node_exec(struct dtxn_fabric *f, uint8_t *mn_base, uint64_t mn_size, uint16_t node,
		      const struct dtxn_wr *wr)
{
	const struct dtxn_fabric_cn_mr *mr;
	uint8_t st;

	if (node >= DTXN_MAX_NODES)
		return dtxn_fabric_mem_exec(mn_base, mn_size, wr);
	if (mn_base != NULL) {
		const struct dtxn_fabric_mn_watch *w = &f->mn_watch[node];
		uint64_t wsize = __atomic_load_n(&w->size, __ATOMIC_ACQUIRE), off;

		st = dtxn_fabric_mem_exec(mn_base, mn_size, wr);
		off = DTXN_RADDR_OFF(wr->raddr);
		if (wsize != 0 && st == DTXN_WC_SUCCESS && wr->opcode == DTXN_WR_WRITE &&
		    off < w->off + wsize && off + wr->len > w->off)
			w->on_write(w->arg, off, wr->len);
		return st;
	}
	mr = &f->cn_mr[node];
	st = dtxn_fabric_mem_exec(__atomic_load_n(&mr->base, __ATOMIC_ACQUIRE), mr->size, wr);
	if (st == DTXN_WC_SUCCESS && wr->opcode == DTXN_WR_WRITE && mr->on_write != NULL)
		mr->on_write(mr->arg, DTXN_RADDR_OFF(wr->raddr), wr->len);
	return st;
}
