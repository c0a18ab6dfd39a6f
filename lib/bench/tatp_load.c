/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * TATP population (spec 4.x), subscribers s_id 1..P:
 * - SUBSCRIBER: sub_nbr = s_id as 15 digits, bit_k 0/1, hex_k 0..15,
 *   byte2_k 0..255, msc_location and vlr_location 1..2^32-1;
 *   SEC_SUBSCRIBER: the sub_nbr -> s_id index row;
 * - ACCESS_INFO: 1..4 rows, distinct ai_types; data1, data2 0..255, data3
 *   3 and data4 5 upper-case letters;
 * - SPECIAL_FACILITY: 1..4 rows, distinct sf_types; is_active 1 with
 *   probability 85%; error_cntrl, data_a 0..255; data_b 5 upper-case;
 * - CALL_FORWARDING: 0..3 rows per SPECIAL_FACILITY row, distinct
 *   start_times of {0, 8, 16}; end_time = start_time + 1..8; numberx 15 digits.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>

#include "bench_private.h"
#include "bench_text.h"
#include "tatp.h"

void
tatp_sub_nbr(uint64_t s_id, char out[TATP_SUB_NBR_LEN])
{
	for (int i = TATP_SUB_NBR_LEN - 1; i >= 0; i--) {
		out[i] = (char)('0' + s_id % 10);
		s_id /= 10;
	}
}

uint64_t
tatp_sub_nbr_value(const char nbr[TATP_SUB_NBR_LEN])
{
	uint64_t v = 0;

	for (int i = 0; i < TATP_SUB_NBR_LEN; i++)
		v = v * 10 + (uint64_t)(nbr[i] - '0');
	return v;
}

/* @p k distinct values of {1..4} in random order, into out[0..k-1]. */
static void
load_types(struct dtxn_rng *r, unsigned k, uint32_t out[TATP_TYPES])
{
	uint32_t all[TATP_TYPES] = { 1, 2, 3, 4 };

	for (unsigned i = 0; i < k; i++) {
		unsigned j = i + (unsigned)dtxn_rng_range(r, TATP_TYPES - i);
		uint32_t t = all[i];

		all[i] = all[j];
		all[j] = t;
		out[i] = all[i];
	}
}

static int
load_fail(struct dtxn_bench *b, const char *table, uint64_t s_id, int rc)
{
	bench_set_err(b, "tatp: loading a %s row of subscriber %" PRIu64 " failed: %s", table,
		      s_id, rte_strerror(-rc));
	return rc;
}

/*
 * dtxn_db_load(), or nothing when @p db is NULL: the count-only replay of
 * tatp_count_loaded() draws the same numbers and writes no row.
 */
static int
load_row(struct dtxn_db *db, uint32_t table, uint64_t key, const void *value)
{
	return db == NULL ? 0 : dtxn_db_load(db, table, key, value);
}

/* One subscriber's rows; @p db NULL: drawn and counted, not written. */
static int
load_subscriber(struct dtxn_bench *b, struct dtxn_db *db, struct dtxn_rng *r, uint64_t s)
{
	struct tatp_priv *p = b->priv;
	struct tatp_subscriber sub;
	struct tatp_sec_subscriber sec = { .s_id = (uint32_t)s };
	uint32_t types[TATP_TYPES];
	unsigned n;
	int rc;

	memset(&sub, 0, sizeof(sub));
	sub.s_id = (uint32_t)s;
	tatp_sub_nbr(s, sub.sub_nbr);
	sub.bits = (uint16_t)(dtxn_rng_next(r) & 0x3ff);
	for (unsigned k = 0; k < 10; k++) {
		sub.hex[k] = (uint8_t)dtxn_rng_range(r, 16);
		sub.byte2[k] = (uint8_t)dtxn_rng_range(r, 256);
	}
	sub.msc_location = (uint32_t)dtxn_rng_between(r, 1, UINT32_MAX);
	sub.vlr_location = (uint32_t)dtxn_rng_between(r, 1, UINT32_MAX);
	rc = load_row(db, TATP_SUBSCRIBER, tatp_k_subscriber(s), &sub);
	if (rc != 0)
		return load_fail(b, "subscriber", s, rc);
	rc = load_row(db, TATP_SEC_SUBSCRIBER, tatp_k_sec(tatp_sub_nbr_value(sub.sub_nbr)),
			  &sec);
	if (rc != 0)
		return load_fail(b, "sec_subscriber", s, rc);

	n = (unsigned)dtxn_rng_between(r, 1, TATP_TYPES);
	load_types(r, n, types);
	for (unsigned k = 0; k < n; k++) {
		struct tatp_access_info ai;

		ai.data1 = (uint8_t)dtxn_rng_range(r, 256);
		ai.data2 = (uint8_t)dtxn_rng_range(r, 256);
		bench_text_upper(r, ai.data3, sizeof(ai.data3));
		bench_text_upper(r, ai.data4, sizeof(ai.data4));
		rc = load_row(db, TATP_ACCESS_INFO, tatp_k_access_info(s, types[k]), &ai);
		if (rc != 0)
			return load_fail(b, "access_info", s, rc);
		p->loaded_ai++;
	}

	n = (unsigned)dtxn_rng_between(r, 1, TATP_TYPES);
	load_types(r, n, types);
	for (unsigned k = 0; k < n; k++) {
		struct tatp_special_facility sf;
		uint32_t starts[TATP_STARTS];
		unsigned n_cf;

		sf.is_active = dtxn_rng_range(r, 100) < 85 ? 1 : 0;
		sf.error_cntrl = (uint8_t)dtxn_rng_range(r, 256);
		sf.data_a = (uint8_t)dtxn_rng_range(r, 256);
		bench_text_upper(r, sf.data_b, sizeof(sf.data_b));
		rc = load_row(db, TATP_SPECIAL_FACILITY, tatp_k_special_facility(s, types[k]),
				  &sf);
		if (rc != 0)
			return load_fail(b, "special_facility", s, rc);
		p->loaded_sf++;

		/* 0..3 distinct start times of {0, 8, 16}: the first n_cf of a shuffle */
		n_cf = (unsigned)dtxn_rng_between(r, 0, TATP_STARTS);
		for (unsigned j = 0; j < TATP_STARTS; j++)
			starts[j] = 8 * j;
		for (unsigned j = 0; j < n_cf; j++) {
			unsigned x = j + (unsigned)dtxn_rng_range(r, TATP_STARTS - j);
			uint32_t t = starts[j];
			struct tatp_call_forwarding cf;

			starts[j] = starts[x];
			starts[x] = t;
			cf.end_time = (uint8_t)(starts[j] + dtxn_rng_between(r, 1, 8));
			bench_text_digits(r, cf.numberx, sizeof(cf.numberx));
			rc = load_row(db, TATP_CALL_FORWARDING,
					  tatp_k_call_forwarding(s, types[k], starts[j]), &cf);
			if (rc != 0)
				return load_fail(b, "call_forwarding", s, rc);
			p->loaded_cf++;
		}
	}
	return 0;
}

/* Every subscriber's rows (@p db NULL: counted only); the counts from 0. */
static int
load_all(struct dtxn_bench *b, struct dtxn_db *db)
{
	struct tatp_priv *p = b->priv;
	struct dtxn_rng r;

	p->loaded_ai = p->loaded_sf = p->loaded_cf = 0;
	dtxn_rng_seed(&r, b->seed ^ UINT64_C(0x746174706c6f6164)); /* "tatpload" */
	for (uint64_t s = 1; s <= p->n; s++) {
		int rc = load_subscriber(b, db, &r, s);

		if (rc != 0)
			return rc;
	}
	p->counted = true;
	return 0;
}

int
tatp_load(struct dtxn_bench *b, struct dtxn_db *db)
{
	if (b->priv == NULL) {
		bench_set_err(b, "tatp: load before create");
		return -EINVAL;
	}
	return load_all(b, db);
}

int
tatp_count_loaded(struct dtxn_bench *b)
{
	if (b->priv == NULL) {
		bench_set_err(b, "tatp: count before create");
		return -EINVAL;
	}
	return load_all(b, NULL);
}
