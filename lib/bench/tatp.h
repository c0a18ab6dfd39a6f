/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DTXN_BENCH_TATP_H
#define DTXN_BENCH_TATP_H

/*
 * TATP (--bench tatp), private to lib/bench (never installed). The spec is
 * the Telecom Application Transaction Processing benchmark 1.0; what FORD
 * and Motor changed: bench-specs.md §3; the user's page:
 * doc/guides/tatp.md.
 *
 * Which file does what:
 * - tatp.c:       options, create/destroy, tables, mix, dispatch
 * - tatp_load.c:  the population (spec 4.x) and the sub_nbr strings
 * - tatp_read.c:  GetSubscriberData, GetNewDestination, GetAccessData
 * - tatp_write.c: UpdateSubscriberData, UpdateLocation, InsertCallForwarding,
 *                 DeleteCallForwarding
 * - tatp_check.c: the referential checks after the run
 *
 * Every key of a subscriber's rows carries the same locality field: the
 * low 12 bits of its s_id (s_id & 0xfff).
 */

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "dtxn_bench.h"
#include "dtxn_store.h"
#include "dtxn_txn.h"

enum tatp_table {
	TATP_SUBSCRIBER = 0,
	TATP_SEC_SUBSCRIBER = 1,  /* secondary index: sub_nbr -> s_id */
	TATP_SPECIAL_FACILITY = 2,
	TATP_ACCESS_INFO = 3,
	TATP_CALL_FORWARDING = 4,
	TATP_N_TABLES,
};

#define TATP_SUB_NBR_LEN 15
#define TATP_TYPES 4              /* ai_type, sf_type: 1..4 */
#define TATP_STARTS 3             /* start_time: 0, 8, 16 */

static inline uint64_t
tatp_shard(uint64_t s_id)
{
	return s_id & DTXN_KEY_SHARD_MASK;
}
static inline uint64_t
tatp_k_subscriber(uint64_t s_id)
{
	return dtxn_key_make(s_id, tatp_shard(s_id));
}
/* sub_nbr is s_id as 15 decimal digits; the index key is its numeric value. */
static inline uint64_t
tatp_k_sec(uint64_t sub_nbr_value)
{
	return dtxn_key_make(sub_nbr_value, tatp_shard(sub_nbr_value));
}
static inline uint64_t
tatp_k_access_info(uint64_t s_id, uint32_t ai_type)
{
	return dtxn_key_make((s_id << 2) | (ai_type - 1), tatp_shard(s_id));
}
static inline uint64_t
tatp_k_special_facility(uint64_t s_id, uint32_t sf_type)
{
	return dtxn_key_make((s_id << 2) | (sf_type - 1), tatp_shard(s_id));
}
static inline uint64_t
tatp_k_call_forwarding(uint64_t s_id, uint32_t sf_type, uint32_t start_time)
{
	return dtxn_key_make((s_id << 4) | ((sf_type - 1) << 2) | (start_time / 8),
			     tatp_shard(s_id));
}

/* Rows (spec 2.x; sizes in doc/guides/tatp.md). */
struct tatp_subscriber {
	uint32_t s_id;
	uint32_t msc_location;
	uint32_t vlr_location;
	uint16_t bits;            /* bit_1 .. bit_10: bit k-1 */
	char sub_nbr[TATP_SUB_NBR_LEN];
	uint8_t hex[10];          /* hex_1 .. hex_10: 0..15 */
	uint8_t byte2[10];        /* byte2_1 .. byte2_10 */
};

struct tatp_sec_subscriber {
	uint32_t s_id;
	uint32_t pad;
};

struct tatp_access_info {
	uint8_t data1, data2;
	char data3[3];
	char data4[5];
};

struct tatp_special_facility {
	uint8_t is_active;
	uint8_t error_cntrl;
	uint8_t data_a;
	char data_b[5];
};

struct tatp_call_forwarding {
	uint8_t end_time;         /* start_time + 1..8 */
	char numberx[15];
};

_Static_assert(sizeof(struct tatp_subscriber) == 52, "subscriber row");
_Static_assert(sizeof(struct tatp_access_info) == 10, "access_info row");
_Static_assert(sizeof(struct tatp_special_facility) == 8, "special_facility row");
_Static_assert(sizeof(struct tatp_call_forwarding) == 16, "call_forwarding row");

/* Columns (cells), in field order (spec 2.x; BIT_1..BIT_10 share one). */
enum { TATP_S_S_ID, TATP_S_MSC_LOCATION, TATP_S_VLR_LOCATION, TATP_S_BITS, TATP_S_SUB_NBR,
       TATP_S_HEX, /* HEX_1..HEX_10: + 0..9 */
       TATP_S_BYTE2 = TATP_S_HEX + 10, /* BYTE2_1..BYTE2_10: + 0..9 */
       TATP_S_COLS = TATP_S_BYTE2 + 10 };
enum { TATP_AI_DATA1, TATP_AI_DATA2, TATP_AI_DATA3, TATP_AI_DATA4, TATP_AI_COLS };
enum { TATP_SF_IS_ACTIVE, TATP_SF_ERROR_CNTRL, TATP_SF_DATA_A, TATP_SF_DATA_B, TATP_SF_COLS };
enum { TATP_CF_END_TIME, TATP_CF_NUMBERX, TATP_CF_COLS };

enum tatp_type {
	TATP_GET_SUBSCRIBER_DATA,
	TATP_GET_NEW_DESTINATION,
	TATP_GET_ACCESS_DATA,
	TATP_UPDATE_SUBSCRIBER_DATA,
	TATP_UPDATE_LOCATION,
	TATP_INSERT_CALL_FORWARDING,
	TATP_DELETE_CALL_FORWARDING,
	TATP_N_TYPES,
};

/* ctx->acc bookkeeping (acc[3] is bench_room's). */
#define TATP_ACC_CF_DELTA 0   /* committed CF inserts - committed CF deletes */

struct tatp_conf {
	uint64_t subscribers;
};

struct tatp_priv {
	struct tatp_conf conf;
	uint64_t n;               /* subscribers */
	uint64_t nurand_a;        /* A of the s_id NURand (spec 2.x) */
	/* what the loader wrote (checks) */
	uint64_t loaded_ai, loaded_sf, loaded_cf;
	/* the three counts hold: this process loaded, or replayed the loader
	 * (tatp_count_loaded(): a CN process, whose MNs loaded) */
	bool counted;
};

/** The s_id of a transaction: NURand(A, 1, P) (spec). */
static inline uint64_t
tatp_pick_subscriber(const struct tatp_priv *p, struct dtxn_rng *r)
{
	return dtxn_nurand(r, p->nurand_a, 1, p->n, 0);
}

/**
 * The s_id of a read-write transaction: drawn again until its records
 * (all in the subscriber's shard) are routed to this CN
 * (dtxn_bench_routes_here()).
 */
static inline uint64_t
tatp_pick_subscriber_rw(struct dtxn_bench_ctx *ctx, const struct tatp_priv *p)
{
	uint64_t s = tatp_pick_subscriber(p, &ctx->rng);

	for (unsigned k = 1; k < DTXN_BENCH_ROUTE_TRIES &&
			     !dtxn_bench_routes_here(ctx, TATP_SUBSCRIBER, tatp_k_subscriber(s)); k++)
		s = tatp_pick_subscriber(p, &ctx->rng);
	return s;
}

/** Writes s_id as the 15-digit sub_nbr string (no NUL). */
void tatp_sub_nbr(uint64_t s_id, char out[TATP_SUB_NBR_LEN]);
/** The numeric value of a sub_nbr string (the index key's id). */
uint64_t tatp_sub_nbr_value(const char nbr[TATP_SUB_NBR_LEN]);

/** Loads the population (tatp_load.c). @return 0 or -errno, b->err set. */
int tatp_load(struct dtxn_bench *b, struct dtxn_db *db);

/**
 * Sets the loaded_* counts of @p b's priv as tatp_load() would, without a
 * db: it draws the loader's numbers (same seed) and writes nothing. For a
 * process that checks the invariants but did not load (a CN process of a
 * cluster: its MNs loaded; doc/guides/cluster.md). Milliseconds per
 * 100,000 subscribers. Not thread-safe with other uses of @p b.
 * @return 0, or -EINVAL (no priv: b->err set).
 */
int tatp_count_loaded(struct dtxn_bench *b);

/* The transactions: one attempt each; DTXN_OK, an abort reason, or DTXN_BENCH_ROLLBACK. */
int tatp_get_subscriber_data(struct dtxn_bench_ctx *ctx, const struct tatp_priv *p);
int tatp_get_new_destination(struct dtxn_bench_ctx *ctx, const struct tatp_priv *p);
int tatp_get_access_data(struct dtxn_bench_ctx *ctx, const struct tatp_priv *p);
int tatp_update_subscriber_data(struct dtxn_bench_ctx *ctx, const struct tatp_priv *p);
int tatp_update_location(struct dtxn_bench_ctx *ctx, const struct tatp_priv *p);
int tatp_insert_call_forwarding(struct dtxn_bench_ctx *ctx, const struct tatp_priv *p);
int tatp_delete_call_forwarding(struct dtxn_bench_ctx *ctx, const struct tatp_priv *p);

/** The referential checks (tatp_check.c). */
int tatp_check(struct dtxn_bench *b, struct dtxn_db *db, struct dtxn_bench_ctx *const *ctxs,
	       unsigned n_ctx, struct dtxn_report *r);

/** Copies an item's value out / a row in (no alignment assumed). */
static inline void
tatp_get(struct dtxn_item *it, void *row, size_t len)
{
	memcpy(row, dtxn_item_value(it), len);
}
static inline void
tatp_put(struct dtxn_item *it, const void *row, size_t len)
{
	memcpy(dtxn_item_value(it), row, len);
}

#endif /* DTXN_BENCH_TATP_H */
