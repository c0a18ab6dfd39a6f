/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DTXN_BENCH_TPCC_H
#define DTXN_BENCH_TPCC_H

/*
 * TPC-C (--bench tpcc), private to lib/bench (never installed). The spec
 * is TPC-C 5.11; what FORD and Motor changed, and the consistency
 * conditions: bench-specs.md §4 and §5; the user's page:
 * doc/guides/tpcc.md.
 *
 * Which file does what:
 * - tpcc.c:              options, create/destroy, table definitions, mix, dispatch
 * - tpcc_input.c:        NURand constants, warehouse/customer choice, dates, last names
 * - tpcc_load.c:         the initial population (clause 4.3.3.1)
 * - tpcc_new_order.c:    NewOrder (clause 2.4)
 * - tpcc_payment.c:      Payment (clause 2.5) and customer-by-last-name lookup
 * - tpcc_order_status.c: OrderStatus (clause 2.6)
 * - tpcc_delivery.c:     Delivery (clause 2.7)
 * - tpcc_stock_level.c:  StockLevel (clause 2.8)
 * - tpcc_check.c:        scans MN memory after the run into tpcc_check.h's picture;
 *   tpcc_check_cond.c:   evaluates the conditions on it
 * - bench_room.c, bench_text.c (shared with tatp): growing-table sizing, random strings
 *
 * Money is int64 cents; rates (taxes, discount) are int32 in 1/10000.
 * Dates are microseconds of dtxn_now_ns() plus one; 0 is "null".
 * Rows are fixed-width structs; character fields are not NUL-terminated
 * (NUL-padded when shorter). The procedures copy a row out of the item
 * buffer and back (memcpy), so they assume no alignment of the protocol's
 * value buffers.
 */

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "dtxn_bench.h"
#include "dtxn_store.h"
#include "dtxn_txn.h"

/* ------------------------------------------------------------------ */
/* Tables                                                             */
/* ------------------------------------------------------------------ */

enum tpcc_table {
	TPCC_WAREHOUSE = 0,
	TPCC_DISTRICT = 1,
	TPCC_CUSTOMER = 2,
	TPCC_HISTORY = 3,
	TPCC_NEW_ORDER = 4,
	TPCC_ORDER = 5,
	TPCC_ORDER_LINE = 6,
	TPCC_ITEM = 7,
	TPCC_STOCK = 8,
	TPCC_CUSTOMER_NAME = 9,   /* secondary index: (w, d, last name) -> c_ids */
	TPCC_LAST_ORDER = 10,     /* (w, d, c) -> the customer's latest O_ID */
	TPCC_DELIVERY_CURSOR = 11, /* (w, d) -> the lowest undelivered O_ID */
	TPCC_N_TABLES,
};

/* Spec constants (clause 1.2, 4.3.3.1) */
#define TPCC_DISTRICTS 10            /* per warehouse */
#define TPCC_CUSTOMERS 3000          /* per district, at scale 1 */
#define TPCC_ITEMS 100000            /* at scale 1 */
#define TPCC_NAMES 1000              /* last names (syllable numbers 0..999) */
#define TPCC_MIN_OL 5
#define TPCC_MAX_OL 15
#define TPCC_STOCK_LEVEL_ORDERS 20   /* StockLevel looks at the last 20 orders */
#define TPCC_MAX_WAREHOUSES 4095     /* the 12-bit locality field of a key */
/* Most customers of one district sharing a last name (the index row's capacity). */
#define TPCC_NAME_MAX 128

/* NURand A values (clause 2.1.6). */
#define TPCC_A_C_LAST 255
#define TPCC_A_C_ID 1023
#define TPCC_A_OL_I_ID 8191

#define TPCC_H_AMOUNT_LOAD INT64_C(1000)     /* 10.00; D_YTD = customers x this at load */
#define TPCC_C_BALANCE_LOAD INT64_C(-1000)   /* -10.00 */
#define TPCC_C_CREDIT_LIM INT64_C(5000000)   /* 50,000.00 */

/* Key ids (dtxn_key_make(id, w): the warehouse is the locality field). */
#define TPCC_O_BITS 28                     /* O_ID < 2^28 per district */
#define TPCC_C_BITS 12                     /* C_ID < 4096 */
#define TPCC_OL_BITS 4                     /* OL_NUMBER < 16 */
#define TPCC_NAME_BITS 10                  /* last-name number < 1024 */
#define TPCC_HIST_SEQ_BITS 32              /* history: per-coordinator sequence */

static inline uint64_t tpcc_k_warehouse(uint32_t w) { return dtxn_key_make(w, w); }
static inline uint64_t tpcc_k_district(uint32_t w, uint32_t d) { return dtxn_key_make(d, w); }
static inline uint64_t
tpcc_k_customer(uint32_t w, uint32_t d, uint32_t c)
{
	return dtxn_key_make(((uint64_t)d << TPCC_C_BITS) | c, w);
}
/*
 * ORDER, NEW-ORDER (the same key in two tables) and ORDER-LINE keys depend
 * on the table layout (option tpcc_layout, struct tpcc_priv): defined
 * after it, below.
 */
/* ITEM rows belong to no warehouse: locality field 0 (never a warehouse id). */
static inline uint64_t tpcc_k_item(uint32_t i) { return dtxn_key_make(i, 0); }
static inline uint64_t tpcc_k_stock(uint32_t w, uint32_t i) { return dtxn_key_make(i, w); }
static inline uint64_t
tpcc_k_name(uint32_t w, uint32_t d, uint32_t name)
{
	return dtxn_key_make(((uint64_t)d << TPCC_NAME_BITS) | name, w);
}
/*
 * HISTORY keys depend on the table layout (tpcc_k_history(), after
 * struct tpcc_priv): load rows are (gid 0, d << 12 | c), run rows
 * (coordinator gid + 1, its finished-txn count).
 */

/* ------------------------------------------------------------------ */
/* Rows (clause 1.3; sizes checked below and listed in doc/guides/tpcc.md) */
/* ------------------------------------------------------------------ */

struct tpcc_warehouse {
	int64_t ytd;           /* W_YTD, cents */
	int32_t tax;           /* W_TAX, 1/10000 */
	char name[10];
	char street_1[20];
	char street_2[20];
	char city[20];
	char state[2];
	char zip[9];
};

struct tpcc_district {
	int64_t ytd;           /* D_YTD, cents */
	int32_t tax;           /* D_TAX, 1/10000 */
	uint32_t next_o_id;    /* D_NEXT_O_ID */
	char name[10];
	char street_1[20];
	char street_2[20];
	char city[20];
	char state[2];
	char zip[9];
};

struct tpcc_customer {
	int64_t credit_lim;    /* cents */
	int64_t balance;       /* cents */
	int64_t ytd_payment;   /* cents */
	uint64_t since;        /* date */
	int32_t discount;      /* 1/10000 */
	uint32_t payment_cnt;
	uint32_t delivery_cnt;
	char first[16];
	char middle[2];
	char last[16];
	char street_1[20];
	char street_2[20];
	char city[20];
	char state[2];
	char zip[9];
	char phone[16];
	char credit[2];        /* "GC" or "BC" */
	char data[500];
};

struct tpcc_history {
	uint64_t date;
	int64_t amount;        /* cents */
	uint32_t c_id;
	uint16_t c_w_id;
	uint16_t w_id;
	uint8_t c_d_id;
	uint8_t d_id;
	char data[24];
};

struct tpcc_new_order {
	uint32_t o_id;
	uint16_t w_id;
	uint8_t d_id;
	uint8_t pad;
};

struct tpcc_order {
	uint64_t entry_d;
	uint32_t c_id;
	uint8_t carrier_id;    /* 0: null */
	uint8_t ol_cnt;
	uint8_t all_local;
	uint8_t pad;
};

struct tpcc_order_line {
	uint64_t delivery_d;   /* 0: null */
	int64_t amount;        /* cents */
	uint32_t i_id;
	uint16_t supply_w_id;
	uint8_t quantity;
	uint8_t pad;
	char dist_info[24];
};

struct tpcc_item {
	int64_t price;         /* cents */
	uint32_t im_id;
	char name[24];
	char data[50];
};

struct tpcc_stock {
	int32_t quantity;
	uint32_t ytd;
	uint16_t order_cnt;
	uint16_t remote_cnt;
	char dist[TPCC_DISTRICTS][24];
	char data[50];
};

/* Secondary index row: the district's customers with one last name, by C_FIRST. */
struct tpcc_customer_name {
	uint16_t n;
	uint16_t c_id[TPCC_NAME_MAX];
};

/* The customer's latest order (OrderStatus). */
struct tpcc_last_order {
	uint32_t o_id;
	uint32_t pad;
};

/* The district's lowest undelivered order (Delivery). */
struct tpcc_delivery_cursor {
	uint32_t o_id;
	uint32_t pad;
};

_Static_assert(sizeof(struct tpcc_warehouse) == 96, "warehouse row");
_Static_assert(sizeof(struct tpcc_district) == 104, "district row");
_Static_assert(sizeof(struct tpcc_customer) == 672, "customer row");
_Static_assert(sizeof(struct tpcc_history) == 56, "history row");
_Static_assert(sizeof(struct tpcc_new_order) == 8, "new_order row");
_Static_assert(sizeof(struct tpcc_order) == 16, "order row");
_Static_assert(sizeof(struct tpcc_order_line) == 48, "order_line row");
_Static_assert(sizeof(struct tpcc_item) == 88, "item row");
_Static_assert(sizeof(struct tpcc_stock) == 304, "stock row");
_Static_assert(sizeof(struct tpcc_customer_name) == 258, "customer_name row");

/* ------------------------------------------------------------------ */
/* Columns (cells): one per field of each spec table's row, in field   */
/* order (clause 1.3; the key columns are the record key, not in the   */
/* row). tpcc.c declares them; the procedures pass cell masks.         */
/* ------------------------------------------------------------------ */

enum { TPCC_W_YTD, TPCC_W_TAX, TPCC_W_NAME, TPCC_W_STREET_1, TPCC_W_STREET_2, TPCC_W_CITY,
       TPCC_W_STATE, TPCC_W_ZIP, TPCC_W_COLS };
enum { TPCC_D_YTD, TPCC_D_TAX, TPCC_D_NEXT_O_ID, TPCC_D_NAME, TPCC_D_STREET_1,
       TPCC_D_STREET_2, TPCC_D_CITY, TPCC_D_STATE, TPCC_D_ZIP, TPCC_D_COLS };
enum { TPCC_C_CRED_LIM, TPCC_C_BALANCE, TPCC_C_YTD_PAYMENT, TPCC_C_SINCE, TPCC_C_DISCOUNT,
       TPCC_C_PAYMENT_CNT, TPCC_C_DELIVERY_CNT, TPCC_C_FIRST, TPCC_C_MIDDLE, TPCC_C_LAST,
       TPCC_C_STREET_1, TPCC_C_STREET_2, TPCC_C_CITY, TPCC_C_STATE, TPCC_C_ZIP, TPCC_C_PHONE,
       TPCC_C_CREDIT, TPCC_C_DATA, TPCC_C_COLS };
enum { TPCC_H_DATE, TPCC_H_AMOUNT, TPCC_H_C_ID, TPCC_H_C_W_ID, TPCC_H_W_ID, TPCC_H_C_D_ID,
       TPCC_H_D_ID, TPCC_H_DATA, TPCC_H_COLS };
enum { TPCC_NO_O_ID, TPCC_NO_W_ID, TPCC_NO_D_ID, TPCC_NO_COLS };
enum { TPCC_O_ENTRY_D, TPCC_O_C_ID, TPCC_O_CARRIER_ID, TPCC_O_OL_CNT, TPCC_O_ALL_LOCAL,
       TPCC_O_COLS };
enum { TPCC_OL_DELIVERY_D, TPCC_OL_AMOUNT, TPCC_OL_I_ID, TPCC_OL_SUPPLY_W_ID,
       TPCC_OL_QUANTITY, TPCC_OL_DIST_INFO, TPCC_OL_COLS };
enum { TPCC_I_PRICE, TPCC_I_IM_ID, TPCC_I_NAME, TPCC_I_DATA, TPCC_I_COLS };
/* S_DIST_01 .. S_DIST_10 are TPCC_S_DIST + 0 .. 9 */
enum { TPCC_S_QUANTITY, TPCC_S_YTD, TPCC_S_ORDER_CNT, TPCC_S_REMOTE_CNT, TPCC_S_DIST,
       TPCC_S_DATA = TPCC_S_DIST + TPCC_DISTRICTS, TPCC_S_COLS };

/* ------------------------------------------------------------------ */
/* Benchmark state                                                    */
/* ------------------------------------------------------------------ */

enum tpcc_type {
	TPCC_NEW_ORDER_TXN,
	TPCC_PAYMENT_TXN,
	TPCC_ORDER_STATUS_TXN,
	TPCC_DELIVERY_TXN,
	TPCC_STOCK_LEVEL_TXN,
	TPCC_N_TYPES,
};

/* ctx->acc bookkeeping (acc[3] is bench_room's). */
#define TPCC_ACC_NEW_ORDERS 0   /* committed NewOrders */
#define TPCC_ACC_PAYMENTS 1     /* committed Payments */
#define TPCC_ACC_DELIVERED 2    /* orders delivered by committed Deliveries */

/* Options (struct tpcc_conf, filled by the option table of tpcc.c). */
struct tpcc_conf {
	uint64_t warehouses;
	uint64_t tpcc_scale;
	uint64_t max_new_orders;
	uint64_t mix_preset;   /* enum tpcc_mix_preset (option `mix`) */
	uint64_t mix[TPCC_N_TYPES]; /* DTXN_OPT_U64_UNSET: the preset's share */
	double theta;          /* DTXN_OPT_UNSET: NURand items */
	uint64_t layout;       /* enum tpcc_layout (option `tpcc_layout`) */
};

/*
 * Where the growing tables ORDER, NEW-ORDER, ORDER-LINE and HISTORY keep their rows
 * (option tpcc_layout; doc/guides/tpcc.md, "Table layouts"). Every
 * protocol runs either; a workload property, not a protocol's.
 */
enum tpcc_layout {
	/*
	 * Hashed (the default, every figure before it): keys (district,
	 * O_ID [, OL_NUMBER]) hashed into 32-slot buckets sized by
	 * bench_room_buckets(); an insert READs its home bucket.
	 */
	TPCC_LAYOUT_HASHED = 0,
	/*
	 * CREST's artifact's (benchmark/TPCC/TpccContext.h): dense ids per
	 * table, an order's id (district x orders per district + O_ID - 1)
	 * direct-mapped (DTXN_TABLE_F_DIRECT_INDEX) to a one-slot bucket of
	 * ORDER and of NEW-ORDER and to a 15-slot bucket of ORDER-LINE that
	 * holds its lines (OL_NUMBER - 1 x the orders + the order's id, so
	 * the id modulo the buckets is the order's): an order's line inserts
	 * share one bucket READ (doc/guides/store.md, "Table format");
	 * HISTORY one slot per id (tpcc_k_history()). The orders per
	 * district and the HISTORY ids per coordinator are sized per run
	 * (tpcc_priv.o_cap, h_cap).
	 */
	TPCC_LAYOUT_ARTIFACT,
	TPCC_N_LAYOUTS,
};

/*
 * The mix presets (option `mix`; doc/guides/tpcc.md, "Mix presets"), each
 * the mix an artifact runs. tpcc.c holds their shares and sources.
 */
enum tpcc_mix_preset {
	TPCC_MIX_STANDARD = 0, /* clause 5.2.3's minimums: 45/43/4/4/4 */
	TPCC_MIX_FORD,         /* FORD's artifact: the standard mix */
	TPCC_MIX_MOTOR,        /* Motor's artifact: the standard mix */
	TPCC_MIX_LOTUS,        /* Lotus (no public code): the standard mix */
	TPCC_MIX_CREST,        /* CREST's artifact and its FORD and Motor: 50/46/4/0/0 */
	TPCC_N_MIX_PRESETS,
};

/*
 * Resolves the mix of @p conf: the preset's shares, each replaced by its
 * mix_* option where one was given (not DTXN_OPT_U64_UNSET), into
 * conf->mix[]. Create time (tpcc.c).
 * @return the sum of the five shares (a valid mix sums to 100).
 */
uint64_t tpcc_mix_resolve(struct tpcc_conf *conf);

/* The run-time constants C of NURand (clause 2.1.6). */
struct tpcc_nurand_c {
	uint32_t c_last;   /* C for C_LAST */
	uint32_t c_id;     /* C for C_ID */
	uint32_t ol_i_id;  /* C for OL_I_ID */
};

struct tpcc_priv {
	struct tpcc_conf conf;
	uint32_t w;             /* warehouses */
	uint32_t customers;     /* per district: 3000 / scale */
	uint32_t items;         /* 100000 / scale; also stock rows per warehouse */
	uint32_t names;         /* last-name numbers in use: min(1000, customers) */
	uint32_t undelivered;   /* loaded orders without a carrier per district (the last 30%) */
	struct tpcc_nurand_c c_load;  /* C used by the loader */
	struct tpcc_nurand_c c_run;   /* C used by the transactions (clause 2.1.6.1) */
	bool item_skewed;       /* theta given: OL_I_ID from item_zipf, not NURand */
	struct dtxn_zipf item_zipf;   /* over the items; rank r is item r + 1 */
	/*
	 * TPCC_LAYOUT_ARTIFACT: order ids per district (O_ID 1..o_cap): the
	 * loaded orders and room for the run's NewOrders in the district
	 * (max_new_orders spread over the districts, a Poisson bound,
	 * bench_room_cap()); a NewOrder past it aborts index_full. 0: hashed.
	 */
	uint32_t o_cap;
	uint64_t n_orders;      /* artifact: order ids of all districts, W x 10 x o_cap */
	/*
	 * TPCC_LAYOUT_ARTIFACT, set by tpcc_define() (it needs the cluster's
	 * coordinators): HISTORY ids per coordinator for its run rows (its
	 * finished-txn count below h_cap; a Payment past it aborts
	 * index_full), after h_base = W x 10 x customers ids of the loaded
	 * rows; n_hist ids in all. 0: hashed.
	 */
	uint64_t h_cap;
	uint64_t h_base;
	uint64_t n_hist;
};

/* An id no ORDER, NEW-ORDER or ORDER-LINE row has (artifact layout, O_ID
 * out of range): a lookup finds it absent; NewOrder never inserts it. */
#define TPCC_NO_ID DTXN_KEY_ID_MAX

/* An order's id, artifact layout: dense over districts x o_cap; TPCC_NO_ID if out of range. */
static inline uint64_t
tpcc_order_dense(const struct tpcc_priv *p, uint32_t w, uint32_t d, uint32_t o)
{
	if (o == 0 || o > p->o_cap || w == 0 || d == 0)
		return TPCC_NO_ID;
	return ((uint64_t)(w - 1) * TPCC_DISTRICTS + (d - 1)) * p->o_cap + (o - 1);
}

static inline uint64_t
tpcc_order_id(uint32_t d, uint32_t o)
{
	return ((uint64_t)d << TPCC_O_BITS) | o;
}

/* ORDER, NEW-ORDER: the same key in two tables. */
static inline uint64_t
tpcc_k_order(const struct tpcc_priv *p, uint32_t w, uint32_t d, uint32_t o)
{
	if (p->o_cap != 0)
		return dtxn_key_make(tpcc_order_dense(p, w, d, o), w);
	return dtxn_key_make(tpcc_order_id(d, o), w);
}

static inline uint64_t
tpcc_k_order_line(const struct tpcc_priv *p, uint32_t w, uint32_t d, uint32_t o, uint32_t ol)
{
	if (p->o_cap != 0) {
		uint64_t od = tpcc_order_dense(p, w, d, o);

		if (od == TPCC_NO_ID || ol == 0 || ol > TPCC_MAX_OL)
			return dtxn_key_make(TPCC_NO_ID, w);
		return dtxn_key_make((uint64_t)(ol - 1) * p->n_orders + od, w);
	}
	return dtxn_key_make((tpcc_order_id(d, o) << TPCC_OL_BITS) | ol, w);
}

/*
 * HISTORY: a load row (@p gid1 0, @p seq = d << 12 | c) or a run row of
 * coordinator gid1 - 1 (@p seq its finished-txn count). Hashed: id
 * gid1 << 32 | seq. Artifact: dense (load rows by customer, then h_cap
 * per coordinator); TPCC_NO_ID past the coordinator's room.
 */
static inline uint64_t
tpcc_k_history(const struct tpcc_priv *p, uint32_t w, uint64_t gid1, uint64_t seq)
{
	if (p->h_cap == 0)
		return dtxn_key_make((gid1 << TPCC_HIST_SEQ_BITS) | (seq & 0xffffffffu), w);
	if (gid1 == 0) {
		uint64_t d = seq >> TPCC_C_BITS, c = seq & ((1u << TPCC_C_BITS) - 1);

		return dtxn_key_make(((uint64_t)(w - 1) * TPCC_DISTRICTS + (d - 1)) * p->customers +
					     (c - 1), w);
	}
	if (seq >= p->h_cap || p->h_base + gid1 * p->h_cap > p->n_hist)
		return dtxn_key_make(TPCC_NO_ID, w);
	return dtxn_key_make(p->h_base + (gid1 - 1) * p->h_cap + seq, w);
}

/**
 * The district, O_ID and OL_NUMBER of an ORDER, NEW-ORDER (@p line false)
 * or ORDER-LINE (@p line true) key, either layout; *ol is 0 for an order.
 * @return false if the key is none of the layout's (a bad key).
 */
static inline bool
tpcc_key_order_parts(const struct tpcc_priv *p, uint64_t key, bool line, uint32_t *d,
		     uint32_t *o, uint32_t *ol)
{
	uint64_t id = dtxn_key_id(key), w = dtxn_key_shard(key), od;

	*ol = 0;
	if (p->o_cap == 0) {
		if (line) {
			*ol = (uint32_t)(id & ((1u << TPCC_OL_BITS) - 1));
			id >>= TPCC_OL_BITS;
		}
		*d = (uint32_t)(id >> TPCC_O_BITS);
		*o = (uint32_t)(id & ((UINT64_C(1) << TPCC_O_BITS) - 1));
		return true;
	}
	if (line) {
		if (id / p->n_orders >= TPCC_MAX_OL)
			return false;
		*ol = (uint32_t)(id / p->n_orders) + 1;
		id %= p->n_orders;
	} else if (id >= p->n_orders) {
		return false;
	}
	od = id / p->o_cap;
	*o = (uint32_t)(id % p->o_cap) + 1;
	*d = (uint32_t)(od % TPCC_DISTRICTS) + 1;
	return od / TPCC_DISTRICTS + 1 == w;
}

/* ------------------------------------------------------------------ */
/* Shared helpers (tpcc_input.c)                                      */
/* ------------------------------------------------------------------ */

/** Draws the C constants for the load and the run from @p seed (clause 2.1.6.1). */
void tpcc_nurand_constants(uint64_t seed, struct tpcc_nurand_c *load, struct tpcc_nurand_c *run);

/** Home warehouse of a transaction: uniform in [1, W]. */
uint32_t tpcc_pick_warehouse(const struct tpcc_priv *p, struct dtxn_rng *r);
/**
 * The home warehouse of a read-write transaction (New-Order, Payment,
 * Delivery): drawn again until its first record, keyed by the warehouse,
 * is routed to this CN (dtxn_bench_routes_here()).
 */
uint32_t tpcc_pick_home_warehouse(struct dtxn_bench_ctx *ctx, const struct tpcc_priv *p);
/** A warehouse other than @p w, uniform (W > 1); @p w when W == 1. */
uint32_t tpcc_pick_other_warehouse(const struct tpcc_priv *p, struct dtxn_rng *r, uint32_t w);
/** C_ID by NURand(1023, 1, customers). */
uint32_t tpcc_pick_customer(const struct tpcc_priv *p, struct dtxn_rng *r);
/** A run-time last-name number: NURand(255, 0, names - 1). */
uint32_t tpcc_pick_last_name(const struct tpcc_priv *p, struct dtxn_rng *r);
/**
 * OL_I_ID by NURand(8191, 1, items) (clause 2.4.1.5), or with `theta`
 * zipf(theta) over the items, item 1 the hottest (Scythe's evaluation:
 * "Zipf 0.99 on accounts and items").
 */
uint32_t tpcc_pick_item(const struct tpcc_priv *p, struct dtxn_rng *r);
/** The spec's last name (clause 4.3.2.3) of number @p num into a 16-byte field. */
void tpcc_last_name(uint32_t num, char out[16]);
/** A date: microseconds of dtxn_now_ns() plus one (never 0, which is null). */
uint64_t tpcc_now_date(void);

/** Copies an item's value out (@p len bytes: the table's row struct). */
static inline void
tpcc_get(struct dtxn_item *it, void *row, size_t len)
{
	const void *v = dtxn_item_value(it);

	if (v != NULL) /* never NULL for an item added (LTO sees the NULL path) */
		memcpy(row, v, len);
	else
		memset(row, 0, len);
}

/** Copies a row into an item's value buffer. */
static inline void
tpcc_put(struct dtxn_item *it, const void *row, size_t len)
{
	memcpy(dtxn_item_value(it), row, len);
}

/* ------------------------------------------------------------------ */
/* The parts                                                          */
/* ------------------------------------------------------------------ */

/**
 * Declares the columns of the nine spec tables and, from the mix, how
 * NewOrder, Payment and Delivery update them (tpcc_columns.c).
 * @return 0 or -EINVAL (a declaration lib/store refuses).
 */
int tpcc_columns(const struct tpcc_priv *p, struct dtxn_table_def *defs);

/** Loads the initial population (tpcc_load.c). @return 0 or -errno, b->err set. */
int tpcc_load(struct dtxn_bench *b, struct dtxn_db *db);

/* The transactions: one attempt each; DTXN_OK, an abort reason, or DTXN_BENCH_ROLLBACK. */
int tpcc_new_order(struct dtxn_bench_ctx *ctx, const struct tpcc_priv *p);
int tpcc_payment(struct dtxn_bench_ctx *ctx, const struct tpcc_priv *p);
int tpcc_order_status(struct dtxn_bench_ctx *ctx, const struct tpcc_priv *p);
int tpcc_delivery(struct dtxn_bench_ctx *ctx, const struct tpcc_priv *p);
int tpcc_stock_level(struct dtxn_bench_ctx *ctx, const struct tpcc_priv *p);

/**
 * Finds a customer by last name through TPCC_CUSTOMER_NAME (one execute
 * round): the row at position ceil(n / 2) of the customers with that name
 * sorted by C_FIRST (clause 2.5.2.2). Adds the index item as read-only.
 * @param c_id  out.
 * @return DTXN_OK, an abort reason, or -ENOENT if no customer has the name
 *   (the caller rolls back).
 */
int tpcc_customer_by_name(struct dtxn_txn *t, uint32_t w, uint32_t d, uint32_t name,
			  uint32_t *c_id);

/** The consistency checks (tpcc_check.c). */
int tpcc_check(struct dtxn_bench *b, struct dtxn_db *db, struct dtxn_bench_ctx *const *ctxs,
	       unsigned n_ctx, struct dtxn_report *r);

#endif /* DTXN_BENCH_TPCC_H */
