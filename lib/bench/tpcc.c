/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * "tpcc": TPC-C 5.11 on the transaction API (doc/guides/tpcc.md;
 * bench-specs.md §4-§5). This file: the options, create/destroy, the table
 * definitions and their sizes, the mix and the dispatch. The parts are
 * listed in tpcc.h.
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
#include "tpcc.h"

/* Slots per bucket and the chance an insert finds its home bucket full
 * once the table holds all the rows it was sized for (bench_room.h). An
 * ORDER or NEW-ORDER insert that cannot go in blocks its district (the
 * next NewOrder there has the same O_ID), so those get the smaller one. */
#define TPCC_GROW_SLOTS 32
#define TPCC_OL_SLOTS 32
#define TPCC_P_FULL_BLOCKING 1e-7
#define TPCC_P_FULL 1e-6

static const char *const tpcc_type_names[TPCC_N_TYPES] = {
	"new_order", "payment", "order_status", "delivery", "stock_level",
};

/*
 * The mix presets (doc/guides/tpcc.md, "Mix presets"): percent of
 * NewOrder, Payment, OrderStatus, Delivery, StockLevel.
 * - standard: TPC-C 5.11 clause 5.2.3 (the minimums 43/4/4/4, NewOrder
 *   the rest).
 * - ford, motor: the artifacts' FREQUENCY_* (FORD's and Motor's
 *   tpcc_table.h; shared/papers/bench-specs.md §4 "Mix"): the standard mix.
 * - lotus: Lotus has no public code; its paper runs TPC-C "[tpccspec]"
 *   (Lotus l.261) with StockLevel in the mix (l.343): the standard mix.
 * - crest: CREST's artifact, benchmark/TPCC/TpccConstant.h FREQUENCY_*
 *   (50/46/0/4/0 in its own order), and its FORD and Motor baselines'
 *   TPCC_NP mix (issue 29 cause 3): no Delivery, no StockLevel.
 */
static const char *const tpcc_mix_names[TPCC_N_MIX_PRESETS + 1] = {
	[TPCC_MIX_STANDARD] = "standard", [TPCC_MIX_FORD] = "ford",
	[TPCC_MIX_MOTOR] = "motor",       [TPCC_MIX_LOTUS] = "lotus",
	[TPCC_MIX_CREST] = "crest",       [TPCC_N_MIX_PRESETS] = NULL,
};

/* Option tpcc_layout (enum tpcc_layout; doc/guides/tpcc.md, "Table layouts"). */
static const char *const tpcc_layout_names[TPCC_N_LAYOUTS + 1] = {
	[TPCC_LAYOUT_HASHED] = "hashed", [TPCC_LAYOUT_ARTIFACT] = "artifact",
	[TPCC_N_LAYOUTS] = NULL,
};

static const uint64_t tpcc_mix_presets[TPCC_N_MIX_PRESETS][TPCC_N_TYPES] = {
	[TPCC_MIX_STANDARD] = { 45, 43, 4, 4, 4 },
	[TPCC_MIX_FORD] = { 45, 43, 4, 4, 4 },
	[TPCC_MIX_MOTOR] = { 45, 43, 4, 4, 4 },
	[TPCC_MIX_LOTUS] = { 45, 43, 4, 4, 4 },
	[TPCC_MIX_CREST] = { 50, 46, 4, 0, 0 },
};

uint64_t
tpcc_mix_resolve(struct tpcc_conf *conf)
{
	const uint64_t *preset = tpcc_mix_presets[conf->mix_preset < TPCC_N_MIX_PRESETS ?
						  conf->mix_preset : TPCC_MIX_STANDARD];
	uint64_t sum = 0;

	for (unsigned i = 0; i < TPCC_N_TYPES; i++) {
		if (conf->mix[i] == DTXN_OPT_U64_UNSET)
			conf->mix[i] = preset[i];
		sum += conf->mix[i];
	}
	return sum;
}

static const struct dtxn_opt tpcc_opts[] = {
	{ "warehouses", DTXN_OPT_U64, offsetof(struct tpcc_conf, warehouses), 1, 1,
	  TPCC_MAX_WAREHOUSES, "warehouses (W); the warehouse id is the key's locality field" },
	{ "tpcc_scale", DTXN_OPT_U64, offsetof(struct tpcc_conf, tpcc_scale), 1, 1, 100,
	  "divides items, stock and customers per district (10: the papers' population)" },
	{ "max_new_orders", DTXN_OPT_U64, offsetof(struct tpcc_conf, max_new_orders), 25000, 0,
	  1e9, "NewOrders (and Payments) the growing tables have room for, whole run" },
	{ "mix", DTXN_OPT_NAME, offsetof(struct tpcc_conf, mix_preset), TPCC_MIX_STANDARD, 0,
	  TPCC_N_MIX_PRESETS - 1, "the mix an artifact runs; a mix_* given replaces its share",
	  tpcc_mix_names },
	{ "mix_new_order", DTXN_OPT_U64, offsetof(struct tpcc_conf, mix[TPCC_NEW_ORDER_TXN]),
	  DTXN_OPT_UNSET, 0, 100, "percent of NewOrder (the five shares sum to 100; not set: mix's)" },
	{ "mix_payment", DTXN_OPT_U64, offsetof(struct tpcc_conf, mix[TPCC_PAYMENT_TXN]),
	  DTXN_OPT_UNSET, 0, 100, "percent of Payment" },
	{ "mix_order_status", DTXN_OPT_U64, offsetof(struct tpcc_conf, mix[TPCC_ORDER_STATUS_TXN]),
	  DTXN_OPT_UNSET, 0, 100, "percent of OrderStatus" },
	{ "mix_delivery", DTXN_OPT_U64, offsetof(struct tpcc_conf, mix[TPCC_DELIVERY_TXN]),
	  DTXN_OPT_UNSET, 0, 100, "percent of Delivery" },
	{ "mix_stock_level", DTXN_OPT_U64, offsetof(struct tpcc_conf, mix[TPCC_STOCK_LEVEL_TXN]),
	  DTXN_OPT_UNSET, 0, 100, "percent of StockLevel" },
	BENCH_THETA_OPT(struct tpcc_conf, theta,
			"zipf skew of NewOrder's item ids, replacing NURand(8191); 0 is uniform"),
	{ "tpcc_layout", DTXN_OPT_NAME, offsetof(struct tpcc_conf, layout), TPCC_LAYOUT_HASHED, 0,
	  TPCC_N_LAYOUTS - 1,
	  "ORDER, NEW-ORDER, ORDER-LINE, HISTORY: hashed 32-slot buckets, or artifact (CREST's: dense ids direct-mapped, an order's lines in one 15-slot bucket)",
	  tpcc_layout_names },
};

static int
tpcc_create(struct dtxn_bench *b)
{
	struct tpcc_conf *conf = b->conf;
	struct tpcc_priv *p;
	uint64_t sum;
	int rc = bench_conf_check(b);

	if (rc != 0)
		return rc;
	/* The preset's shares, each mix_* given in its place; written back
	 * into b->conf, so the report's config shows the mix that runs. */
	sum = tpcc_mix_resolve(conf);
	if (sum != 100) {
		bench_set_err(b, "tpcc: mix %s with the mix_* given: new_order %" PRIu64 " + payment %" PRIu64 " + order_status %" PRIu64 " + delivery %" PRIu64 " + stock_level %" PRIu64 " = %" PRIu64 ", must be 100",
			      tpcc_mix_names[conf->mix_preset], conf->mix[0], conf->mix[1],
			      conf->mix[2], conf->mix[3], conf->mix[4], sum);
		return -EINVAL;
	}
	p = rte_zmalloc("tpcc_priv", sizeof(*p), 0);
	if (p == NULL) {
		bench_set_err(b, "tpcc: out of memory");
		return -ENOMEM;
	}
	p->conf = *conf;
	p->w = (uint32_t)conf->warehouses;
	p->customers = TPCC_CUSTOMERS / (uint32_t)conf->tpcc_scale;
	p->items = TPCC_ITEMS / (uint32_t)conf->tpcc_scale;
	p->names = RTE_MIN(p->customers, (uint32_t)TPCC_NAMES);
	/* clause 4.3.3.1: O_ID 2101..3000 of 3000 are undelivered (the last 30%) */
	p->undelivered = p->customers - p->customers * 7 / 10;
	tpcc_nurand_constants(b->seed, &p->c_load, &p->c_run);
	rc = bench_theta_init(b, &p->item_zipf, p->items, conf->theta, "items");
	if (rc < 0) {
		rte_free(p);
		return rc;
	}
	p->item_skewed = rc == 1;
	if (conf->layout == TPCC_LAYOUT_ARTIFACT) {
		const uint64_t wd = (uint64_t)p->w * TPCC_DISTRICTS;
		/* the loaded orders, and the run's NewOrders on random districts */
		const uint64_t cap = p->customers +
				     bench_room_cap(conf->max_new_orders, wd, TPCC_P_FULL_BLOCKING);

		if (cap > UINT32_MAX) {
			bench_set_err(b, "tpcc: tpcc_layout artifact: %" PRIu64 " orders per district do not fit (max_new_orders too large)",
				      cap);
			rte_free(p);
			return -EINVAL;
		}
		p->o_cap = (uint32_t)cap;
		p->n_orders = wd * cap;
	}
	b->priv = p;
	return 0;
}

static void
tpcc_destroy(struct dtxn_bench *b)
{
	rte_free(b->priv);
	b->priv = NULL;
}

/*
 * TPCC_LAYOUT_ARTIFACT (tpcc.h): ORDER and NEW-ORDER one slot per order
 * id, ORDER-LINE a 15-slot bucket per order id, HISTORY one slot per id
 * (tpcc_history_room()) (CREST's TpccContext.h:
 * records_per_bucket_ 1, and MAX_OL_CNT with the hasher key / 15; its
 * MAX_ORDERID_PER_DISTRICT is 20000, here p->o_cap, sized per run).
 * Explicit n_buckets: a protocol's bucket_slots option leaves a direct
 * index declared by the workload alone (ford.md, motor.md).
 */
static void
tpcc_artifact_geometry(const struct tpcc_priv *p, struct dtxn_table_def *defs)
{
	static const struct {
		enum tpcc_table t;
		uint32_t slots;
	} direct[] = { { TPCC_ORDER, 1 }, { TPCC_NEW_ORDER, 1 }, { TPCC_ORDER_LINE, TPCC_MAX_OL } };

	for (unsigned i = 0; i < RTE_DIM(direct); i++) {
		struct dtxn_table_def *d = &defs[direct[i].t];

		d->slots_per_bucket = direct[i].slots;
		d->n_buckets = p->n_orders;
		d->max_keys = p->n_orders * direct[i].slots;
		d->flags |= DTXN_TABLE_F_DENSE_IDS | DTXN_TABLE_F_DIRECT_INDEX;
	}
	/* HISTORY: one slot per id (the artifact's records_per_bucket_ 1) */
	defs[TPCC_HISTORY].slots_per_bucket = 1;
	defs[TPCC_HISTORY].n_buckets = p->n_hist;
	defs[TPCC_HISTORY].max_keys = p->n_hist;
	defs[TPCC_HISTORY].flags |= DTXN_TABLE_F_DENSE_IDS | DTXN_TABLE_F_DIRECT_INDEX;
}

/*
 * TPCC_LAYOUT_ARTIFACT: HISTORY's ids (tpcc_k_history()). A run row is
 * keyed by its coordinator and that coordinator's finished-txn count
 * (as in the hashed layout), so each of the cluster's coordinators
 * (spares included) gets h_cap ids: an even share of the txns the run
 * finishes once it has done max_new_orders Payments (by the mix's
 * Payment share), with bench_room_cap()'s Poisson margin.
 */
static void
tpcc_history_room(struct tpcc_priv *p, uint32_t n_coords)
{
	const uint64_t pay = p->conf.mix[TPCC_PAYMENT_TXN];
	const uint64_t done = pay == 0 ? 0 : (p->conf.max_new_orders * 100 + pay - 1) / pay;
	const uint64_t n = n_coords == 0 ? 1 : n_coords;

	p->h_base = (uint64_t)p->w * TPCC_DISTRICTS * p->customers;
	p->h_cap = bench_room_cap(done, n, TPCC_P_FULL);
	p->n_hist = p->h_base + n * p->h_cap;
}

static int
tpcc_define(struct dtxn_bench *b, struct dtxn_db *db)
{
	struct tpcc_priv *p = b->priv;
	const uint64_t wd = (uint64_t)p->w * TPCC_DISTRICTS;
	const uint64_t room = p->conf.max_new_orders;
	const uint64_t orders = wd * p->customers + room;
	/* order lines: 5..15 per order, 10 on average; a 5% margin for the draw */
	const uint64_t lines = orders * 10 + orders / 2;
	const uint64_t new_orders = wd * p->undelivered + room;
	struct dtxn_table_def defs[TPCC_N_TABLES] = {
		{ .id = TPCC_WAREHOUSE, .name = "warehouse", .value_size = sizeof(struct tpcc_warehouse),
		  .max_keys = p->w },
		{ .id = TPCC_DISTRICT, .name = "district", .value_size = sizeof(struct tpcc_district),
		  .max_keys = wd },
		{ .id = TPCC_CUSTOMER, .name = "customer", .value_size = sizeof(struct tpcc_customer),
		  .max_keys = wd * p->customers },
		{ .id = TPCC_HISTORY, .name = "history", .value_size = sizeof(struct tpcc_history),
		  .max_keys = orders, .slots_per_bucket = TPCC_GROW_SLOTS,
		  .n_buckets = bench_room_buckets(orders, TPCC_GROW_SLOTS, TPCC_P_FULL) },
		{ .id = TPCC_NEW_ORDER, .name = "new_order", .value_size = sizeof(struct tpcc_new_order),
		  .max_keys = new_orders, .slots_per_bucket = TPCC_GROW_SLOTS,
		  .n_buckets = bench_room_buckets(new_orders, TPCC_GROW_SLOTS,
						  TPCC_P_FULL_BLOCKING) },
		{ .id = TPCC_ORDER, .name = "order", .value_size = sizeof(struct tpcc_order),
		  .max_keys = orders, .slots_per_bucket = TPCC_GROW_SLOTS,
		  .n_buckets = bench_room_buckets(orders, TPCC_GROW_SLOTS, TPCC_P_FULL_BLOCKING) },
		{ .id = TPCC_ORDER_LINE, .name = "order_line",
		  .value_size = sizeof(struct tpcc_order_line), .max_keys = lines,
		  .slots_per_bucket = TPCC_OL_SLOTS,
		  .n_buckets = bench_room_buckets(lines, TPCC_OL_SLOTS, TPCC_P_FULL) },
		{ .id = TPCC_ITEM, .name = "item", .value_size = sizeof(struct tpcc_item),
		  .max_keys = p->items },
		{ .id = TPCC_STOCK, .name = "stock", .value_size = sizeof(struct tpcc_stock),
		  .max_keys = (uint64_t)p->w * p->items },
		{ .id = TPCC_CUSTOMER_NAME, .name = "customer_name",
		  .value_size = sizeof(struct tpcc_customer_name), .max_keys = wd * p->names },
		{ .id = TPCC_LAST_ORDER, .name = "last_order",
		  .value_size = sizeof(struct tpcc_last_order), .max_keys = wd * p->customers },
		{ .id = TPCC_DELIVERY_CURSOR, .name = "delivery_cursor",
		  .value_size = sizeof(struct tpcc_delivery_cursor), .max_keys = wd },
	};

	if (tpcc_columns(p, defs) != 0) {
		bench_set_err(b, "tpcc: declaring the columns failed");
		return -EINVAL;
	}
	if (p->o_cap != 0) {
		tpcc_history_room(p, dtxn_db_n_coords(db));
		tpcc_artifact_geometry(p, defs);
	}
	for (unsigned i = 0; i < RTE_DIM(defs); i++) {
		int rc = dtxn_db_add_table(db, &defs[i]);

		if (rc != 0) {
			bench_set_err(b, "tpcc: adding table %s failed: %s", defs[i].name,
				      rte_strerror(-rc));
			return rc;
		}
	}
	return 0;
}

static unsigned
tpcc_pick(struct dtxn_bench *b, struct dtxn_rng *r)
{
	const struct tpcc_priv *p = b->priv;
	uint64_t x = dtxn_rng_range(r, 100);

	for (unsigned i = 0; i < TPCC_N_TYPES; i++) {
		if (x < p->conf.mix[i])
			return i;
		x -= p->conf.mix[i];
	}
	return TPCC_NEW_ORDER_TXN;  /* unreachable: the mix sums to 100 */
}

static int
tpcc_run(struct dtxn_bench_ctx *ctx, unsigned type)
{
	const struct tpcc_priv *p = ctx->bench->priv;
	int rc = DTXN_BENCH_ROLLBACK;  /* not a type: the runner logs it */

	switch ((enum tpcc_type)type) {
	case TPCC_NEW_ORDER_TXN:
		rc = tpcc_new_order(ctx, p);
		break;
	case TPCC_PAYMENT_TXN:
		rc = tpcc_payment(ctx, p);
		break;
	case TPCC_ORDER_STATUS_TXN:
		rc = tpcc_order_status(ctx, p);
		break;
	case TPCC_DELIVERY_TXN:
		rc = tpcc_delivery(ctx, p);
		break;
	case TPCC_STOCK_LEVEL_TXN:
		rc = tpcc_stock_level(ctx, p);
		break;
	case TPCC_N_TYPES:
		break;
	}
	return bench_room_outcome(ctx, rc, "tpcc");
}

static const struct dtxn_bench_ops tpcc_ops = {
	.name = "tpcc",
	.desc = "TPC-C 5.11: nine tables, five transactions, consistency conditions 1-12",
	.opts = tpcc_opts,
	.n_opts = RTE_DIM(tpcc_opts),
	.conf_size = sizeof(struct tpcc_conf),
	.n_types = TPCC_N_TYPES,
	.type_names = tpcc_type_names,
	.create = tpcc_create,
	.destroy = tpcc_destroy,
	.define = tpcc_define,
	.load = tpcc_load,
	.pick = tpcc_pick,
	.run = tpcc_run,
	.check = tpcc_check,
};

DTXN_BENCH_REGISTER(tpcc, &tpcc_ops);
