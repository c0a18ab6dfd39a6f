/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * TATP's update transactions (spec 3.4-3.7). The spec's expected failures
 * are application rollbacks (DTXN_BENCH_ROLLBACK), kept apart from
 * concurrency aborts:
 * - UPDATE_SUBSCRIBER_DATA: no SPECIAL_FACILITY (s, sf_type): the RW item
 *   is not found (DTXN_ABORT_NOT_FOUND from execute), rolled back;
 * - INSERT_CALL_FORWARDING: no SPECIAL_FACILITY (s, sf_type) (the foreign
 *   key), or the CALL_FORWARDING row exists (DTXN_ABORT_EXISTS from the
 *   insert: the spec's unique-key violation, where FORD overwrites);
 * - DELETE_CALL_FORWARDING: no such row (DTXN_ABORT_NOT_FOUND).
 * In each the subscriber itself always exists (never deleted), so those
 * reasons can only come from the row the spec allows to be missing.
 * Committed inserts and deletes add +1 / -1 to ctx->acc[TATP_ACC_CF_DELTA].
 */
#include <stdint.h>

#include "bench_private.h"
#include "tatp.h"

/* sub_nbr -> s_id through SEC_SUBSCRIBER (one execute round). */
static int
tatp_lookup_sub_nbr(struct dtxn_txn *t, uint64_t s_id_drawn, uint64_t *s_id)
{
	char nbr[TATP_SUB_NBR_LEN];
	struct tatp_sec_subscriber sec;
	struct dtxn_item *it;
	int rc;

	tatp_sub_nbr(s_id_drawn, nbr);
	it = dtxn_txn_add_ro(t, TATP_SEC_SUBSCRIBER, tatp_k_sec(tatp_sub_nbr_value(nbr)));
	rc = dtxn_txn_execute(t);
	if (rc != DTXN_OK)
		return rc;
	if (!bench_items_exist(t, &it, 1))
		return DTXN_ABORT_NOT_FOUND;  /* every sub_nbr is indexed */
	tatp_get(it, &sec, sizeof(sec));
	*s_id = sec.s_id;
	return DTXN_OK;
}

/* UPDATE_SUBSCRIBER_DATA (2%): SUBSCRIBER.bit_1 and SPECIAL_FACILITY.data_a. */
int
tatp_update_subscriber_data(struct dtxn_bench_ctx *ctx, const struct tatp_priv *p)
{
	struct dtxn_rng *r = &ctx->rng;
	const uint64_t s = tatp_pick_subscriber_rw(ctx, p);
	const uint16_t bit_1 = (uint16_t)dtxn_rng_range(r, 2);
	const uint32_t sf_type = (uint32_t)dtxn_rng_between(r, 1, TATP_TYPES);
	const uint8_t data_a = (uint8_t)dtxn_rng_range(r, 256);
	struct tatp_subscriber sub;
	struct tatp_special_facility sf;
	struct dtxn_item *sub_it, *sf_it;
	struct dtxn_txn *t;
	int rc;

	t = dtxn_txn_begin(ctx->coord, DTXN_TXN_RW);
	sub_it = dtxn_txn_add_rw_cells(t, TATP_SUBSCRIBER, tatp_k_subscriber(s), 0,
				       DTXN_CELL(TATP_S_BITS));
	sf_it = dtxn_txn_add_rw_cells(t, TATP_SPECIAL_FACILITY, tatp_k_special_facility(s, sf_type),
				      0, DTXN_CELL(TATP_SF_DATA_A));
	rc = dtxn_txn_execute(t);
	if (rc == DTXN_ABORT(DTXN_ABORT_NOT_FOUND))
		return DTXN_BENCH_ROLLBACK;  /* no such special facility */
	if (rc != DTXN_OK)
		return rc;
	tatp_get(sub_it, &sub, sizeof(sub));
	sub.bits = (uint16_t)((sub.bits & ~1u) | bit_1);
	tatp_put(sub_it, &sub, sizeof(sub));
	tatp_get(sf_it, &sf, sizeof(sf));
	sf.data_a = data_a;
	tatp_put(sf_it, &sf, sizeof(sf));
	return dtxn_txn_commit(t);
}

/* UPDATE_LOCATION (14%): sub_nbr -> s_id, then SUBSCRIBER.vlr_location. */
int
tatp_update_location(struct dtxn_bench_ctx *ctx, const struct tatp_priv *p)
{
	struct dtxn_rng *r = &ctx->rng;
	const uint64_t drawn = tatp_pick_subscriber_rw(ctx, p);
	const uint32_t vlr = (uint32_t)dtxn_rng_between(r, 1, UINT32_MAX);
	struct tatp_subscriber sub;
	struct dtxn_item *it;
	struct dtxn_txn *t;
	uint64_t s;
	int rc;

	t = dtxn_txn_begin(ctx->coord, DTXN_TXN_RW);
	rc = tatp_lookup_sub_nbr(t, drawn, &s);
	if (rc != DTXN_OK)
		return rc;
	it = dtxn_txn_add_rw_cells(t, TATP_SUBSCRIBER, tatp_k_subscriber(s), 0,
				   DTXN_CELL(TATP_S_VLR_LOCATION));
	rc = dtxn_txn_execute(t);
	if (rc != DTXN_OK)
		return rc;
	tatp_get(it, &sub, sizeof(sub));
	sub.vlr_location = vlr;
	tatp_put(it, &sub, sizeof(sub));
	return dtxn_txn_commit(t);
}

/*
 * INSERT_CALL_FORWARDING (2%): sub_nbr -> s_id; the subscriber's
 * SPECIAL_FACILITY rows (the spec's SELECT sf_type ... WHERE s_id); then
 * insert CALL_FORWARDING (s, sf_type, start) with end_time = start + 1..8.
 */
int
tatp_insert_call_forwarding(struct dtxn_bench_ctx *ctx, const struct tatp_priv *p)
{
	struct dtxn_rng *r = &ctx->rng;
	const uint64_t drawn = tatp_pick_subscriber_rw(ctx, p);
	const uint32_t sf_type = (uint32_t)dtxn_rng_between(r, 1, TATP_TYPES);
	const uint32_t start = 8 * (uint32_t)dtxn_rng_range(r, TATP_STARTS);
	struct tatp_call_forwarding cf;
	struct dtxn_item *sf_it[TATP_TYPES], *cf_it;
	struct dtxn_txn *t;
	uint64_t s;
	int rc;

	cf.end_time = (uint8_t)(start + dtxn_rng_between(r, 1, 8));
	for (unsigned k = 0; k < sizeof(cf.numberx); k++)
		cf.numberx[k] = (char)('0' + dtxn_rng_range(r, 10));

	t = dtxn_txn_begin(ctx->coord, DTXN_TXN_RW);
	rc = tatp_lookup_sub_nbr(t, drawn, &s);
	if (rc != DTXN_OK)
		return rc;
	for (uint32_t k = 0; k < TATP_TYPES; k++)
		sf_it[k] = dtxn_txn_add_ro_cells(t, TATP_SPECIAL_FACILITY,
						 tatp_k_special_facility(s, k + 1),
						 DTXN_CELL(TATP_SF_IS_ACTIVE));
	rc = dtxn_txn_execute(t);
	if (rc != DTXN_OK)
		return rc;
	if (!dtxn_item_exists(sf_it[sf_type - 1])) {
		dtxn_txn_abort(t, DTXN_ABORT_APP);
		return DTXN_BENCH_ROLLBACK;  /* foreign key: no such special facility */
	}
	cf_it = dtxn_txn_insert(t, TATP_CALL_FORWARDING, tatp_k_call_forwarding(s, sf_type, start));
	rc = dtxn_txn_execute(t);
	if (rc == DTXN_ABORT(DTXN_ABORT_EXISTS))
		return DTXN_BENCH_ROLLBACK;   /* unique key: the row exists */
	if (rc != DTXN_OK)
		return rc;
	tatp_put(cf_it, &cf, sizeof(cf));
	return bench_commit(ctx, t, TATP_ACC_CF_DELTA, 1);
}

/* DELETE_CALL_FORWARDING (2%): sub_nbr -> s_id, then delete CALL_FORWARDING (s, sf_type, start). */
int
tatp_delete_call_forwarding(struct dtxn_bench_ctx *ctx, const struct tatp_priv *p)
{
	struct dtxn_rng *r = &ctx->rng;
	const uint64_t drawn = tatp_pick_subscriber_rw(ctx, p);
	const uint32_t sf_type = (uint32_t)dtxn_rng_between(r, 1, TATP_TYPES);
	const uint32_t start = 8 * (uint32_t)dtxn_rng_range(r, TATP_STARTS);
	struct dtxn_txn *t;
	uint64_t s;
	int rc;

	t = dtxn_txn_begin(ctx->coord, DTXN_TXN_RW);
	rc = tatp_lookup_sub_nbr(t, drawn, &s);
	if (rc != DTXN_OK)
		return rc;
	(void)dtxn_txn_delete(t, TATP_CALL_FORWARDING, tatp_k_call_forwarding(s, sf_type, start));
	rc = dtxn_txn_execute(t);
	if (rc == DTXN_ABORT(DTXN_ABORT_NOT_FOUND))
		return DTXN_BENCH_ROLLBACK;   /* no such row */
	if (rc != DTXN_OK)
		return rc;
	return bench_commit(ctx, t, TATP_ACC_CF_DELTA, -1);
}
