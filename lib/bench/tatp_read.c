/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * TATP's read-only transactions (spec 3.1-3.3), each one execute round
 * and a validating commit. A "not found" result is the spec's expected
 * failure: the transaction still commits (its reads are validated, so the
 * failure is a consistent answer) and is counted as a rollback.
 */
#include <stdint.h>

#include "bench_private.h"
#include "tatp.h"

/* Commits a read-only txn whose answer was "no row": a rollback if the
 * reads hold, else the abort reason (retried). */
static int
tatp_read_failed(struct dtxn_txn *t)
{
	int rc = dtxn_txn_commit(t);

	return rc == DTXN_OK ? DTXN_BENCH_ROLLBACK : rc;
}

/* GET_SUBSCRIBER_DATA (35%): the SUBSCRIBER row of a NURand s_id. */
int
tatp_get_subscriber_data(struct dtxn_bench_ctx *ctx, const struct tatp_priv *p)
{
	const uint64_t s = tatp_pick_subscriber(p, &ctx->rng);
	struct dtxn_txn *t = dtxn_txn_begin(ctx->coord, DTXN_TXN_RO);
	struct dtxn_item *it = dtxn_txn_add_ro(t, TATP_SUBSCRIBER, tatp_k_subscriber(s));
	int rc = dtxn_txn_execute(t);

	if (rc != DTXN_OK)
		return rc;
	if (!bench_items_exist(t, &it, 1))
		return DTXN_ABORT_NOT_FOUND;
	return dtxn_txn_commit(t);
}

/*
 * GET_NEW_DESTINATION (10%): SPECIAL_FACILITY (s, sf_type) if active, and
 * its CALL_FORWARDING rows with start_time <= start and end_time > end;
 * sf_type 1..4, start of {0, 8, 16}, end 1..24. It succeeds when at least
 * one such row exists (about 24% of the time); a missing CALL_FORWARDING
 * row is not an error (FORD aborts on one).
 */
int
tatp_get_new_destination(struct dtxn_bench_ctx *ctx, const struct tatp_priv *p)
{
	struct dtxn_rng *r = &ctx->rng;
	const uint64_t s = tatp_pick_subscriber(p, r);
	const uint32_t sf_type = (uint32_t)dtxn_rng_between(r, 1, TATP_TYPES);
	const uint32_t start = 8 * (uint32_t)dtxn_rng_range(r, TATP_STARTS);
	const uint32_t end = (uint32_t)dtxn_rng_between(r, 1, 24);
	struct dtxn_item *sf_it, *cf_it[TATP_STARTS];
	struct tatp_special_facility sf;
	struct dtxn_txn *t;
	unsigned n_cf = 0, found = 0;
	int rc;

	t = dtxn_txn_begin(ctx->coord, DTXN_TXN_RO);
	sf_it = dtxn_txn_add_ro_cells(t, TATP_SPECIAL_FACILITY, tatp_k_special_facility(s, sf_type),
				      DTXN_CELL(TATP_SF_IS_ACTIVE));
	for (uint32_t st = 0; st <= start; st += 8)
		cf_it[n_cf++] = dtxn_txn_add_ro(t, TATP_CALL_FORWARDING,
						tatp_k_call_forwarding(s, sf_type, st));
	rc = dtxn_txn_execute(t);
	if (rc != DTXN_OK)
		return rc;
	if (!dtxn_item_exists(sf_it))
		return tatp_read_failed(t);
	tatp_get(sf_it, &sf, sizeof(sf));
	if (sf.is_active != 1)
		return tatp_read_failed(t);
	for (unsigned k = 0; k < n_cf; k++) {
		struct tatp_call_forwarding cf;

		if (!dtxn_item_exists(cf_it[k]))
			continue;
		tatp_get(cf_it[k], &cf, sizeof(cf));
		found += cf.end_time > end;
	}
	if (found == 0)
		return tatp_read_failed(t);
	return dtxn_txn_commit(t);
}

/* GET_ACCESS_DATA (35%): ACCESS_INFO (s, ai_type 1..4); found about 62.5% of the time. */
int
tatp_get_access_data(struct dtxn_bench_ctx *ctx, const struct tatp_priv *p)
{
	struct dtxn_rng *r = &ctx->rng;
	const uint64_t s = tatp_pick_subscriber(p, r);
	const uint32_t ai_type = (uint32_t)dtxn_rng_between(r, 1, TATP_TYPES);
	struct dtxn_txn *t = dtxn_txn_begin(ctx->coord, DTXN_TXN_RO);
	struct dtxn_item *it = dtxn_txn_add_ro(t, TATP_ACCESS_INFO, tatp_k_access_info(s, ai_type));
	int rc = dtxn_txn_execute(t);

	if (rc != DTXN_OK)
		return rc;
	if (!dtxn_item_exists(it))
		return tatp_read_failed(t);
	return dtxn_txn_commit(t);
}
