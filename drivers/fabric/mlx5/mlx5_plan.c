/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * How the mlx5 driver turns a checked WR chain into WQEs (mlx5_pure.h):
 * verbs, inline payloads, bounce buffers, signaling; where an MN offset
 * lives (device memory or host region); local keys. Pure functions:
 * test/unit/test_mlx5.c. (The CAS loop that stands in for a masked CAS is
 * lib/fabric's dtxn_mcas_loop.)
 */
#include <errno.h>

#include "mlx5_pure.h"

bool
mlx5_lkey_find(const struct mlx5_lkey_range *ranges, unsigned n, const void *addr,
	       size_t len, uint32_t *lkey)
{
	uintptr_t a = (uintptr_t)addr;
	unsigned lo = 0, hi = n;

	if (addr == NULL)
		return false;
	while (lo < hi) { /* first range that starts after a */
		unsigned mid = lo + (hi - lo) / 2;

		if (ranges[mid].addr <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return false;
	const struct mlx5_lkey_range *r = &ranges[lo - 1];

	if (a - r->addr > r->len || len > r->len - (a - r->addr))
		return false;
	*lkey = r->lkey;
	return true;
}

bool
mlx5_signal_needed(bool user_signaled, uint32_t unsignaled_run, uint32_t max_wr)
{
	return user_signaled || unsignaled_run + 1 >= max_wr / 2;
}

static uint8_t
plan_verb(const struct dtxn_wr *wr, const struct mlx5_caps *caps)
{
	bool inl = wr->len <= caps->max_inline;

	switch (wr->opcode) {
	case DTXN_WR_READ:
		return MLX5_VERB_READ;
	case DTXN_WR_WRITE:
		return inl ? MLX5_VERB_WRITE_INLINE : MLX5_VERB_WRITE;
	case DTXN_WR_CAS:
		return MLX5_VERB_CAS;
	case DTXN_WR_FAA:
		return MLX5_VERB_FAA;
	case DTXN_WR_MASKED_CAS:
		return caps->masked_cas ? MLX5_VERB_MCAS_RAW : MLX5_VERB_MCAS_LOOP;
	default:
		return inl ? MLX5_VERB_SEND_INLINE : MLX5_VERB_SEND;
	}
}

int
mlx5_chain_plan(const struct dtxn_wr *wr_list, const struct mlx5_caps *caps,
		const struct mlx5_lkey_range *ranges, unsigned n_ranges, uint32_t bounce_lkey,
		uint32_t max_wr, uint32_t *unsignaled_run, struct mlx5_wr_plan *plan,
		unsigned n_plan)
{
	uint32_t run = *unsignaled_run;
	unsigned n = 0;

	for (const struct dtxn_wr *wr = wr_list; wr != NULL; wr = wr->next, n++) {
		struct mlx5_wr_plan *p;
		bool user = (wr->flags & DTXN_WR_F_SIGNALED) != 0;

		if (n == n_plan)
			return -ENOBUFS;
		p = &plan[n];
		p->verb = plan_verb(wr, caps);
		p->bounce = false;
		p->lkey = 0;
		if (p->verb != MLX5_VERB_WRITE_INLINE && p->verb != MLX5_VERB_SEND_INLINE &&
		    wr->len > 0 &&
		    !mlx5_lkey_find(ranges, n_ranges, wr->local, wr->len, &p->lkey)) {
			if (wr->len > MLX5_BOUNCE_BYTES)
				return -EFAULT;
			p->bounce = true;
			p->lkey = bounce_lkey;
		}
		/*
		 * The loop's CAS WQEs are the driver's own: the one that ends
		 * it reports the WR, so each is signaled (its value drives the
		 * next step).
		 */
		p->user_cqe = user;
		p->signaled = p->verb == MLX5_VERB_MCAS_LOOP ||
			      mlx5_signal_needed(user, run, max_wr);
		run = p->signaled ? 0 : run + 1;
	}
	*unsignaled_run = run;
	return (int)n;
}

bool
mlx5_raddr_map(const struct mlx5_peer_mr *p, uint64_t off, uint32_t len, uint64_t *addr,
	       uint32_t *rkey)
{
	if (p->dm_len != 0 && off < p->dm_len) {
		if (len <= p->dm_len - off) {
			*addr = off; /* zero-based DM MR */
			*rkey = p->dm_rkey;
			return true;
		}
	} else if (off <= p->len && len <= p->len - off) {
		*addr = p->base + off;
		*rkey = p->rkey;
		return true;
	}
	*addr = p->base + p->len;
	*rkey = p->rkey;
	return false;
}
