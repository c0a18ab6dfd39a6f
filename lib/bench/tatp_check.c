/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * TATP after the run: scans every table's primary on the MN and checks
 * the references the spec's schema declares (every ACCESS_INFO,
 * SPECIAL_FACILITY and CALL_FORWARDING row has its SUBSCRIBER; every
 * CALL_FORWARDING row has its SPECIAL_FACILITY), the sub_nbr index, and
 * the row counts against the load and the committed inserts and deletes.
 *
 * One byte per subscriber: bit 0 the SUBSCRIBER row was seen, bit k
 * (1..4) its SPECIAL_FACILITY row of sf_type k.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_errno.h>

#include "bench_private.h"
#include "tatp.h"

struct tck {
	const struct tatp_priv *p;
	uint8_t *seen;            /* [s_id - 1] */
	uint64_t rows[TATP_N_TABLES];
	uint64_t bad_key[TATP_N_TABLES];   /* malformed keys or values */
	uint64_t orphan[TATP_N_TABLES];    /* rows whose subscriber is missing */
	uint64_t cf_no_sf;                 /* CALL_FORWARDING rows whose SPECIAL_FACILITY is missing */
};

static bool
tck_sub(const struct tck *c, uint64_t s)
{
	return s >= 1 && s <= c->p->n && (c->seen[s - 1] & 1) != 0;
}

static int
tck_subscriber(uint64_t key, const void *value, void *arg)
{
	struct tck *c = arg;
	const uint64_t s = dtxn_key_id(key);
	struct tatp_subscriber row;
	char nbr[TATP_SUB_NBR_LEN];

	c->rows[TATP_SUBSCRIBER]++;
	memcpy(&row, value, sizeof(row));
	tatp_sub_nbr(s, nbr);
	if (s < 1 || s > c->p->n || key != tatp_k_subscriber(s) || row.s_id != s ||
	    memcmp(row.sub_nbr, nbr, sizeof(nbr)) != 0) {
		c->bad_key[TATP_SUBSCRIBER]++;
		return 0;
	}
	c->seen[s - 1] |= 1;
	return 0;
}

static int
tck_sec(uint64_t key, const void *value, void *arg)
{
	struct tck *c = arg;
	struct tatp_sec_subscriber row;

	c->rows[TATP_SEC_SUBSCRIBER]++;
	memcpy(&row, value, sizeof(row));
	/* sub_nbr is s_id in 15 digits: the key's id must be the row's s_id */
	if (key != tatp_k_sec(row.s_id))
		c->bad_key[TATP_SEC_SUBSCRIBER]++;
	else if (!tck_sub(c, row.s_id))
		c->orphan[TATP_SEC_SUBSCRIBER]++;
	return 0;
}

static int
tck_special_facility(uint64_t key, const void *value, void *arg)
{
	struct tck *c = arg;
	const uint64_t s = dtxn_key_id(key) >> 2;
	const uint32_t type = (uint32_t)(dtxn_key_id(key) & 3) + 1;

	RTE_SET_USED(value);
	c->rows[TATP_SPECIAL_FACILITY]++;
	if (key != tatp_k_special_facility(s, type))
		c->bad_key[TATP_SPECIAL_FACILITY]++;
	else if (!tck_sub(c, s))
		c->orphan[TATP_SPECIAL_FACILITY]++;
	else
		c->seen[s - 1] |= (uint8_t)(1u << type);
	return 0;
}

static int
tck_access_info(uint64_t key, const void *value, void *arg)
{
	struct tck *c = arg;
	const uint64_t s = dtxn_key_id(key) >> 2;

	RTE_SET_USED(value);
	c->rows[TATP_ACCESS_INFO]++;
	if (key != tatp_k_access_info(s, (uint32_t)(dtxn_key_id(key) & 3) + 1))
		c->bad_key[TATP_ACCESS_INFO]++;
	else if (!tck_sub(c, s))
		c->orphan[TATP_ACCESS_INFO]++;
	return 0;
}

static int
tck_call_forwarding(uint64_t key, const void *value, void *arg)
{
	struct tck *c = arg;
	const uint64_t id = dtxn_key_id(key), s = id >> 4;
	const uint32_t type = (uint32_t)((id >> 2) & 3) + 1, start = (uint32_t)(id & 3) * 8;
	struct tatp_call_forwarding row;

	c->rows[TATP_CALL_FORWARDING]++;
	memcpy(&row, value, sizeof(row));
	if (start > 16 || key != tatp_k_call_forwarding(s, type, start) ||
	    row.end_time <= start || row.end_time > start + 8)
		c->bad_key[TATP_CALL_FORWARDING]++;
	else if (!tck_sub(c, s))
		c->orphan[TATP_CALL_FORWARDING]++;
	else if ((c->seen[s - 1] & (1u << type)) == 0)
		c->cf_no_sf++;
	return 0;
}

static int
tck_scan(struct dtxn_bench *b, struct dtxn_db *db, uint32_t table, dtxn_record_visit_fn fn,
	 struct tck *c)
{
	int rc = dtxn_db_scan(db, table, fn, c);

	if (rc != 0) {
		bench_set_err(b, "tatp: scanning table %u failed: %s", table,
			      rte_strerror(rc < 0 ? -rc : rc));
		return rc < 0 ? rc : -EIO;
	}
	return 0;
}

int
tatp_check(struct dtxn_bench *b, struct dtxn_db *db, struct dtxn_bench_ctx *const *ctxs,
	   unsigned n_ctx, struct dtxn_report *r)
{
	const struct tatp_priv *p = b->priv;
	struct tck c;
	int64_t delta = 0, expect_cf;
	int rc;

	/* a CN process did not load: its MNs did, from the same seed */
	if (!p->counted) {
		rc = tatp_count_loaded(b);
		if (rc != 0)
			return rc;
	}
	memset(&c, 0, sizeof(c));
	c.p = p;
	c.seen = calloc(p->n, 1);
	if (c.seen == NULL) {
		bench_set_err(b, "tatp: out of memory for the checks");
		return -ENOMEM;
	}
	for (unsigned i = 0; i < n_ctx; i++)
		delta += ctxs[i]->acc[TATP_ACC_CF_DELTA];
	expect_cf = (int64_t)p->loaded_cf + delta;
	/* subscribers first, then what refers to them; SPECIAL_FACILITY before CALL_FORWARDING */
	rc = tck_scan(b, db, TATP_SUBSCRIBER, tck_subscriber, &c);
	if (rc == 0)
		rc = tck_scan(b, db, TATP_SEC_SUBSCRIBER, tck_sec, &c);
	if (rc == 0)
		rc = tck_scan(b, db, TATP_SPECIAL_FACILITY, tck_special_facility, &c);
	if (rc == 0)
		rc = tck_scan(b, db, TATP_ACCESS_INFO, tck_access_info, &c);
	if (rc == 0)
		rc = tck_scan(b, db, TATP_CALL_FORWARDING, tck_call_forwarding, &c);
	if (rc != 0) {
		free(c.seen);
		return rc;
	}
	dtxn_report_check(r, "tatp_subscriber_rows",
			  c.rows[TATP_SUBSCRIBER] == p->n && c.bad_key[TATP_SUBSCRIBER] == 0,
			  "rows=%" PRIu64 " expected=%" PRIu64 " malformed=%" PRIu64,
			  c.rows[TATP_SUBSCRIBER], p->n, c.bad_key[TATP_SUBSCRIBER]);
	dtxn_report_check(r, "tatp_sub_nbr_index",
			  c.rows[TATP_SEC_SUBSCRIBER] == p->n &&
			  c.bad_key[TATP_SEC_SUBSCRIBER] == 0 && c.orphan[TATP_SEC_SUBSCRIBER] == 0,
			  "rows=%" PRIu64 " expected=%" PRIu64 " wrong=%" PRIu64 " dangling=%" PRIu64,
			  c.rows[TATP_SEC_SUBSCRIBER], p->n, c.bad_key[TATP_SEC_SUBSCRIBER],
			  c.orphan[TATP_SEC_SUBSCRIBER]);
	dtxn_report_check(r, "tatp_access_info_has_subscriber",
			  c.orphan[TATP_ACCESS_INFO] == 0 && c.bad_key[TATP_ACCESS_INFO] == 0 &&
			  c.rows[TATP_ACCESS_INFO] == p->loaded_ai,
			  "rows=%" PRIu64 " loaded=%" PRIu64 " orphans=%" PRIu64 " malformed=%" PRIu64,
			  c.rows[TATP_ACCESS_INFO], p->loaded_ai, c.orphan[TATP_ACCESS_INFO],
			  c.bad_key[TATP_ACCESS_INFO]);
	dtxn_report_check(r, "tatp_special_facility_has_subscriber",
			  c.orphan[TATP_SPECIAL_FACILITY] == 0 &&
			  c.bad_key[TATP_SPECIAL_FACILITY] == 0 &&
			  c.rows[TATP_SPECIAL_FACILITY] == p->loaded_sf,
			  "rows=%" PRIu64 " loaded=%" PRIu64 " orphans=%" PRIu64 " malformed=%" PRIu64,
			  c.rows[TATP_SPECIAL_FACILITY], p->loaded_sf,
			  c.orphan[TATP_SPECIAL_FACILITY], c.bad_key[TATP_SPECIAL_FACILITY]);
	dtxn_report_check(r, "tatp_call_forwarding_has_subscriber",
			  c.orphan[TATP_CALL_FORWARDING] == 0,
			  "rows=%" PRIu64 " orphans=%" PRIu64, c.rows[TATP_CALL_FORWARDING],
			  c.orphan[TATP_CALL_FORWARDING]);
	dtxn_report_check(r, "tatp_call_forwarding_has_special_facility", c.cf_no_sf == 0,
			  "rows=%" PRIu64 " without their special_facility=%" PRIu64,
			  c.rows[TATP_CALL_FORWARDING], c.cf_no_sf);
	dtxn_report_check(r, "tatp_call_forwarding_count",
			  (int64_t)c.rows[TATP_CALL_FORWARDING] == expect_cf &&
			  c.bad_key[TATP_CALL_FORWARDING] == 0,
			  "rows=%" PRIu64 " expected=%" PRId64 " (loaded %" PRIu64 ", inserted - deleted %"
			  PRId64 ") malformed=%" PRIu64, c.rows[TATP_CALL_FORWARDING], expect_cf,
			  p->loaded_cf, delta, c.bad_key[TATP_CALL_FORWARDING]);
	free(c.seen);
	return 0;
}
