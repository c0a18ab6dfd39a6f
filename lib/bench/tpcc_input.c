/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * TPC-C inputs shared by the loader and the transactions: the NURand
 * constants (clause 2.1.6), warehouse, customer, item (NURand, or zipf
 * with `theta`) and last-name choice, last names from syllables (clause 4.3.2.3), and dates.
 */
#include <stdint.h>
#include <string.h>

#include "dtxn_sched.h"
#include "tpcc.h"

static const char *const g_syllables[10] = {
	"BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING",
};

void
tpcc_nurand_constants(uint64_t seed, struct tpcc_nurand_c *load, struct tpcc_nurand_c *run)
{
	struct dtxn_rng r;
	uint32_t delta;

	dtxn_rng_seed(&r, seed ^ UINT64_C(0x7470636331313500)); /* "tpcc115" */
	load->c_last = (uint32_t)dtxn_rng_between(&r, 0, TPCC_A_C_LAST);
	load->c_id = (uint32_t)dtxn_rng_between(&r, 0, TPCC_A_C_ID);
	load->ol_i_id = (uint32_t)dtxn_rng_between(&r, 0, TPCC_A_OL_I_ID);
	/* clause 2.1.6.1: C_LAST run - load in [65, 119], but not 96 or 112 */
	do {
		delta = (uint32_t)dtxn_rng_between(&r, 65, 119);
	} while (delta == 96 || delta == 112);
	run->c_last = load->c_last + delta <= TPCC_A_C_LAST ? load->c_last + delta
							     : load->c_last - delta;
	run->c_id = (uint32_t)dtxn_rng_between(&r, 0, TPCC_A_C_ID);
	run->ol_i_id = (uint32_t)dtxn_rng_between(&r, 0, TPCC_A_OL_I_ID);
}

uint32_t
tpcc_pick_warehouse(const struct tpcc_priv *p, struct dtxn_rng *r)
{
	return (uint32_t)dtxn_rng_between(r, 1, p->w);
}

uint32_t
tpcc_pick_home_warehouse(struct dtxn_bench_ctx *ctx, const struct tpcc_priv *p)
{
	uint32_t w = tpcc_pick_warehouse(p, &ctx->rng);

	for (unsigned k = 1; k < DTXN_BENCH_ROUTE_TRIES &&
			     !dtxn_bench_routes_here(ctx, TPCC_WAREHOUSE, tpcc_k_warehouse(w)); k++)
		w = tpcc_pick_warehouse(p, &ctx->rng);
	return w;
}

uint32_t
tpcc_pick_other_warehouse(const struct tpcc_priv *p, struct dtxn_rng *r, uint32_t w)
{
	uint32_t o;

	if (p->w < 2)
		return w;
	o = (uint32_t)dtxn_rng_between(r, 1, p->w - 1);
	return o >= w ? o + 1 : o;
}

uint32_t
tpcc_pick_customer(const struct tpcc_priv *p, struct dtxn_rng *r)
{
	return (uint32_t)dtxn_nurand(r, TPCC_A_C_ID, 1, p->customers, p->c_run.c_id);
}

uint32_t
tpcc_pick_last_name(const struct tpcc_priv *p, struct dtxn_rng *r)
{
	return (uint32_t)dtxn_nurand(r, TPCC_A_C_LAST, 0, p->names - 1, p->c_run.c_last);
}

uint32_t
tpcc_pick_item(const struct tpcc_priv *p, struct dtxn_rng *r)
{
	if (p->item_skewed)
		return (uint32_t)dtxn_zipf_next(&p->item_zipf, r) + 1;
	return (uint32_t)dtxn_nurand(r, TPCC_A_OL_I_ID, 1, p->items, p->c_run.ol_i_id);
}

void
tpcc_last_name(uint32_t num, char out[16])
{
	const char *s[3] = {
		g_syllables[(num / 100) % 10], g_syllables[(num / 10) % 10], g_syllables[num % 10],
	};
	size_t n = 0;

	memset(out, 0, 16);
	for (unsigned i = 0; i < 3; i++) {
		size_t l = strlen(s[i]);

		memcpy(out + n, s[i], l);  /* at most 3 x 5 = 15 bytes */
		n += l;
	}
}

uint64_t
tpcc_now_date(void)
{
	return dtxn_now_ns() / 1000 + 1;
}
