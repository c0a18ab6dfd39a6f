/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * "tatp": TATP 1.0 on the transaction API (doc/guides/tatp.md;
 * bench-specs.md §3). This file: the options, create/destroy, the table
 * definitions, the mix (35/10/35/2/14/2/2) and the dispatch. The parts are
 * listed in tatp.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_malloc.h>

#include "bench_private.h"
#include "bench_room.h"
#include "tatp.h"

/* CALL_FORWARDING is the one table that grows and shrinks: size it for
 * 4 rows per subscriber (3.75 on average at load, the level inserts and
 * deletes keep it at) in buckets of 16 slots (bench_room.h). */
#define TATP_CF_ROWS_PER_SUB 4
#define TATP_CF_SLOTS 16
#define TATP_P_FULL 1e-6

static const char *const tatp_type_names[TATP_N_TYPES] = {
	"get_subscriber_data", "get_new_destination", "get_access_data",
	"update_subscriber_data", "update_location", "insert_call_forwarding",
	"delete_call_forwarding",
};

/* The spec's mix, percent. */
static const unsigned tatp_mix[TATP_N_TYPES] = { 35, 10, 35, 2, 14, 2, 2 };

static const struct dtxn_opt tatp_opts[] = {
	{ "subscribers", DTXN_OPT_U64, offsetof(struct tatp_conf, subscribers), 100000, 1,
	  1e9, "subscribers (P); s_id 1..P" },
};

static int
tatp_create(struct dtxn_bench *b)
{
	const struct tatp_conf *conf = b->conf;
	struct tatp_priv *p;
	int rc = bench_conf_check(b);

	if (rc != 0)
		return rc;
	p = rte_zmalloc("tatp_priv", sizeof(*p), 0);
	if (p == NULL) {
		bench_set_err(b, "tatp: out of memory");
		return -ENOMEM;
	}
	p->conf = *conf;
	p->n = conf->subscribers;
	/* the spec's A for NURand(A, 1, P) */
	p->nurand_a = p->n <= 1000000 ? 65535 : p->n <= 10000000 ? 1048575 : 2097151;
	b->priv = p;
	return 0;
}

static void
tatp_destroy(struct dtxn_bench *b)
{
	rte_free(b->priv);
	b->priv = NULL;
}

/*
 * Columns: every field of a row is a cell (the 10 bits of SUBSCRIBER
 * share one, as they share a u16). Update shapes from the mix (spec 1.x):
 * UPDATE_SUBSCRIBER_DATA changes BIT_1 and SPECIAL_FACILITY.DATA_A,
 * UPDATE_LOCATION VLR_LOCATION; ACCESS_INFO, SPECIAL_FACILITY keys and
 * CALL_FORWARDING rows are only read, inserted or deleted.
 */
static int
tatp_columns(struct dtxn_table_def *defs)
{
	static const uint32_t ai[] = {
		offsetof(struct tatp_access_info, data1), offsetof(struct tatp_access_info, data2),
		offsetof(struct tatp_access_info, data3), offsetof(struct tatp_access_info, data4),
	};
	static const uint32_t sf[] = {
		offsetof(struct tatp_special_facility, is_active),
		offsetof(struct tatp_special_facility, error_cntrl),
		offsetof(struct tatp_special_facility, data_a),
		offsetof(struct tatp_special_facility, data_b),
	};
	static const uint32_t cf[] = {
		offsetof(struct tatp_call_forwarding, end_time),
		offsetof(struct tatp_call_forwarding, numberx),
	};
	const unsigned usd = tatp_mix[TATP_UPDATE_SUBSCRIBER_DATA];
	const unsigned ul = tatp_mix[TATP_UPDATE_LOCATION];
	struct dtxn_table_def *s = &defs[TATP_SUBSCRIBER];
	uint32_t so[TATP_S_COLS];
	int rc;

	so[TATP_S_S_ID] = offsetof(struct tatp_subscriber, s_id);
	so[TATP_S_MSC_LOCATION] = offsetof(struct tatp_subscriber, msc_location);
	so[TATP_S_VLR_LOCATION] = offsetof(struct tatp_subscriber, vlr_location);
	so[TATP_S_BITS] = offsetof(struct tatp_subscriber, bits);
	so[TATP_S_SUB_NBR] = offsetof(struct tatp_subscriber, sub_nbr);
	for (unsigned k = 0; k < 10; k++) {
		so[TATP_S_HEX + k] = (uint32_t)(offsetof(struct tatp_subscriber, hex) + k);
		so[TATP_S_BYTE2 + k] = (uint32_t)(offsetof(struct tatp_subscriber, byte2) + k);
	}
	rc = dtxn_table_def_set_columns(s, so, RTE_DIM(so));
	rc |= dtxn_table_def_set_columns(&defs[TATP_ACCESS_INFO], ai, RTE_DIM(ai));
	rc |= dtxn_table_def_set_columns(&defs[TATP_SPECIAL_FACILITY], sf, RTE_DIM(sf));
	rc |= dtxn_table_def_set_columns(&defs[TATP_CALL_FORWARDING], cf, RTE_DIM(cf));
	if (rc != 0)
		return -EINVAL;
	s->updates[0] = (struct dtxn_update_shape){ DTXN_CELL(TATP_S_BITS),
						    (uint16_t)(usd * 1000 / (usd + ul)) };
	s->updates[1] = (struct dtxn_update_shape){ DTXN_CELL(TATP_S_VLR_LOCATION),
						    (uint16_t)(ul * 1000 / (usd + ul)) };
	s->n_updates = 2;
	defs[TATP_SPECIAL_FACILITY].updates[0] =
		(struct dtxn_update_shape){ DTXN_CELL(TATP_SF_DATA_A), 1000 };
	defs[TATP_SPECIAL_FACILITY].n_updates = 1;
	defs[TATP_SEC_SUBSCRIBER].flags |= DTXN_TABLE_F_NO_UPDATE | DTXN_TABLE_F_READ_ONLY;
	defs[TATP_ACCESS_INFO].flags |= DTXN_TABLE_F_NO_UPDATE | DTXN_TABLE_F_READ_ONLY;
	defs[TATP_CALL_FORWARDING].flags |= DTXN_TABLE_F_NO_UPDATE;
	return 0;
}

static int
tatp_define(struct dtxn_bench *b, struct dtxn_db *db)
{
	const struct tatp_priv *p = b->priv;
	const uint64_t cf_rows = p->n * TATP_CF_ROWS_PER_SUB;
	/* n_versions 2: MVCC protocols, Motor's VNum for TATP (§7.2) */
	struct dtxn_table_def defs[] = {
		{ .id = TATP_SUBSCRIBER, .name = "subscriber",
		  .value_size = sizeof(struct tatp_subscriber), .max_keys = p->n, .n_versions = 2 },
		{ .id = TATP_SEC_SUBSCRIBER, .name = "sec_subscriber",
		  .value_size = sizeof(struct tatp_sec_subscriber), .max_keys = p->n,
		  .n_versions = 2 },
		{ .id = TATP_SPECIAL_FACILITY, .name = "special_facility",
		  .value_size = sizeof(struct tatp_special_facility),
		  .max_keys = p->n * TATP_TYPES, .n_versions = 2 },
		{ .id = TATP_ACCESS_INFO, .name = "access_info",
		  .value_size = sizeof(struct tatp_access_info), .max_keys = p->n * TATP_TYPES,
		  .n_versions = 2 },
		{ .id = TATP_CALL_FORWARDING, .name = "call_forwarding",
		  .value_size = sizeof(struct tatp_call_forwarding), .max_keys = cf_rows,
		  .slots_per_bucket = TATP_CF_SLOTS,
		  .n_buckets = bench_room_buckets(cf_rows, TATP_CF_SLOTS, TATP_P_FULL),
		  .n_versions = 2 },
	};

	if (tatp_columns(defs) != 0) {
		bench_set_err(b, "tatp: declaring the columns failed");
		return -EINVAL;
	}
	for (unsigned i = 0; i < RTE_DIM(defs); i++) {
		int rc = dtxn_db_add_table(db, &defs[i]);

		if (rc != 0) {
			bench_set_err(b, "tatp: adding table %s failed: %s", defs[i].name,
				      rte_strerror(-rc));
			return rc;
		}
	}
	return 0;
}

static unsigned
tatp_pick(struct dtxn_bench *b, struct dtxn_rng *r)
{
	uint64_t x = dtxn_rng_range(r, 100);

	RTE_SET_USED(b);
	for (unsigned i = 0; i < TATP_N_TYPES; i++) {
		if (x < tatp_mix[i])
			return i;
		x -= tatp_mix[i];
	}
	return TATP_GET_SUBSCRIBER_DATA;  /* unreachable: the mix sums to 100 */
}

static int
tatp_run(struct dtxn_bench_ctx *ctx, unsigned type)
{
	const struct tatp_priv *p = ctx->bench->priv;
	int rc = DTXN_BENCH_ROLLBACK;  /* not a type: the runner logs it */

	switch ((enum tatp_type)type) {
	case TATP_GET_SUBSCRIBER_DATA:
		rc = tatp_get_subscriber_data(ctx, p);
		break;
	case TATP_GET_NEW_DESTINATION:
		rc = tatp_get_new_destination(ctx, p);
		break;
	case TATP_GET_ACCESS_DATA:
		rc = tatp_get_access_data(ctx, p);
		break;
	case TATP_UPDATE_SUBSCRIBER_DATA:
		rc = tatp_update_subscriber_data(ctx, p);
		break;
	case TATP_UPDATE_LOCATION:
		rc = tatp_update_location(ctx, p);
		break;
	case TATP_INSERT_CALL_FORWARDING:
		rc = tatp_insert_call_forwarding(ctx, p);
		break;
	case TATP_DELETE_CALL_FORWARDING:
		rc = tatp_delete_call_forwarding(ctx, p);
		break;
	case TATP_N_TYPES:
		break;
	}
	return bench_room_outcome(ctx, rc, "tatp");
}

static const struct dtxn_bench_ops tatp_ops = {
	.name = "tatp",
	.desc = "TATP 1.0: four tables and a sub_nbr index, the 35/10/35/2/14/2/2 mix",
	.opts = tatp_opts,
	.n_opts = RTE_DIM(tatp_opts),
	.conf_size = sizeof(struct tatp_conf),
	.n_types = TATP_N_TYPES,
	.type_names = tatp_type_names,
	.create = tatp_create,
	.destroy = tatp_destroy,
	.define = tatp_define,
	.load = tatp_load,
	.pick = tatp_pick,
	.run = tatp_run,
	.check = tatp_check,
};

DTXN_BENCH_REGISTER(tatp, &tatp_ops);
