/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * "tso": the timestamp-oracle micro-benchmark (Scythe Fig. 28;
 * doc/guides/tso.md). Each "transaction" is one timestamp from lib/tso:
 * one dtxn_tso_get_lc() on the worker's TSO client, a TSO group per worker
 * lcore that takes up to `batch` timestamps with one FAA on the counter in
 * MN 0's device memory. Committed txn/s is timestamps/s, and the report's
 * MN verbs per txn (faa) is FAAs per timestamp. No table is read: the
 * protocol (--protocol) plays no part.
 *
 * Each worker's client is made by its first coordinator (a slot claimed
 * with one CAS, at the first timestamp only; after that every coordinator
 * keeps its slot in ctx->acc[1]). Invariants after the run: every
 * coordinator's timestamps increased (ctx->acc[2] counts the ones that did
 * not), and, where MN 0's memory is mapped, the counter equals the number
 * of timestamps handed out (nothing reused, nothing lost: timestamps are
 * unique). The table the benchmark defines is one 8-byte record: the
 * store wants a table, nobody touches it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <rte_common.h>
#include <rte_malloc.h>

#include "anomaly_common.h"
#include "bench_private.h"
#include "dtxn_fabric.h"
#include "dtxn_tso.h"

/** Most worker lcores (threads of every CN) the benchmark serves. */
#define TSO_BENCH_WORKERS 1024

struct tso_conf {
	uint64_t batch;
};

static const struct dtxn_opt tso_opts[] = {
	{ "batch", DTXN_OPT_U64, offsetof(struct tso_conf, batch), DTXN_TSO_BATCH_DEFAULT, 1,
	  DTXN_TSO_BATCH_MAX, "most timestamps per FAA (1: no TSO group)" },
};

enum { TSO_GET, TSO_N_TYPES };
static const char *const tso_type_names[TSO_N_TYPES] = { "get_ts" };

/* acc[] of a coordinator: 0 last timestamp, 1 slot + 1, 2 order violations */
#define ACC_LAST 0
#define ACC_SLOT 1
#define ACC_BAD 2

struct tso_slot {
	struct dtxn_worker *w;   /**< claimed by CAS from NULL */
	struct dtxn_tso *tso;    /**< set by the claiming coordinator; its lcore only */
};

struct tso_priv {
	struct tso_conf conf;
	struct tso_slot slot[TSO_BENCH_WORKERS];
};

static int
tso_bench_create(struct dtxn_bench *b)
{
	struct tso_priv *p;
	int rc = bench_conf_check(b);

	if (rc != 0)
		return rc;
	p = rte_zmalloc("tso_bench", sizeof(*p), 0);
	if (p == NULL) {
		bench_set_err(b, "tso: out of memory");
		return -ENOMEM;
	}
	memcpy(&p->conf, b->conf, sizeof(p->conf));
	b->priv = p;
	return 0;
}

static void
tso_bench_destroy(struct dtxn_bench *b)
{
	struct tso_priv *p = b->priv;

	if (p == NULL)
		return;
	for (unsigned i = 0; i < TSO_BENCH_WORKERS; i++)
		dtxn_tso_destroy(p->slot[i].tso);
	rte_free(p);
	b->priv = NULL;
}

static int
tso_bench_define(struct dtxn_bench *b, struct dtxn_db *db)
{
	return anom_define(b, db, "tso", sizeof(uint64_t), 1);
}

static int
tso_bench_load(struct dtxn_bench *b, struct dtxn_db *db)
{
	return anom_load(b, db, "tso", sizeof(uint64_t), 1, 0);
}

static unsigned
tso_bench_pick(struct dtxn_bench *b, struct dtxn_rng *r)
{
	RTE_SET_USED(b);
	RTE_SET_USED(r);
	return TSO_GET;
}

/* The worker's client: claims a slot for it at its first timestamp. */
static struct dtxn_tso *
tso_bench_client(struct dtxn_bench_ctx *ctx)
{
	struct tso_priv *p = ctx->bench->priv;
	struct dtxn_worker *w = ctx->coord->worker;
	struct dtxn_tso_conf tc = {
		.size = sizeof(tc),
		.counter = dtxn_tso_counter_raddr(&w->db->cat),
		.max_batch = (unsigned)p->conf.batch,
		.socket_id = w->socket_id,
	};

	if (ctx->acc[ACC_SLOT] != 0)
		return p->slot[ctx->acc[ACC_SLOT] - 1].tso;
	for (unsigned i = 0; i < TSO_BENCH_WORKERS; i++) {
		struct dtxn_worker *none = NULL;
		struct tso_slot *s = &p->slot[i];

		if (__atomic_load_n(&s->w, __ATOMIC_ACQUIRE) == w ||
		    __atomic_compare_exchange_n(&s->w, &none, w, false, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE)) {
			/* only coordinators of w (one lcore) reach here for slot i */
			if (s->tso == NULL)
				s->tso = dtxn_tso_create(&tc);
			if (s->tso == NULL)
				return NULL;
			bench_acc_add(ctx, ACC_SLOT, (int64_t)i + 1);
			return s->tso;
		}
	}
	return NULL;
}

static int
tso_bench_run(struct dtxn_bench_ctx *ctx, unsigned type)
{
	struct dtxn_tso *tso = tso_bench_client(ctx);
	struct dtxn_tso_req req;
	uint64_t ts;
	int rc;

	RTE_SET_USED(type);
	if (tso == NULL)
		return DTXN_ABORT_TOO_LARGE; /* no client: more workers than slots, or no memory */
	rc = dtxn_tso_get_lc(tso, ctx->coord, &req, &ts);
	if (rc != 0)
		return dtxn_batch_reason(rc);
	if (ts <= (uint64_t)ctx->acc[ACC_LAST])
		bench_acc_add(ctx, ACC_BAD, 1);
	bench_acc_add(ctx, ACC_LAST, (int64_t)ts - ctx->acc[ACC_LAST]);
	return DTXN_OK;
}

static int
tso_bench_check(struct dtxn_bench *b, struct dtxn_db *db, struct dtxn_bench_ctx *const *ctxs,
		unsigned n_ctx, struct dtxn_report *r)
{
	dtxn_raddr_t ra = dtxn_tso_counter_raddr(dtxn_db_catalog(db));
	const uint8_t *base = dtxn_fabric_mn_base(dtxn_db_fabric(db), DTXN_RADDR_MN(ra));
	uint64_t handed = 0, bad = 0;
	struct dtxn_tso_stats st;
	const struct tso_priv *p = b->priv;

	for (unsigned i = 0; i < n_ctx; i++)
		bad += (uint64_t)ctxs[i]->acc[ACC_BAD];
	for (unsigned i = 0; i < TSO_BENCH_WORKERS; i++) {
		if (p->slot[i].tso == NULL)
			continue;
		dtxn_tso_stats_get(p->slot[i].tso, &st);
		handed += st.requests;
	}
	dtxn_report_check(r, "tso_monotone_per_coordinator", bad == 0,
			  "%" PRIu64 " timestamps not above the coordinator's previous one", bad);
	if (base != NULL) {
		uint64_t counter = __atomic_load_n(
			(const uint64_t *)(const void *)(base + DTXN_RADDR_OFF(ra)), __ATOMIC_ACQUIRE);

		dtxn_report_check(r, "tso_counter_equals_handed_out", counter == handed,
				  "counter=%" PRIu64 " handed_out=%" PRIu64, counter, handed);
	}
	return 0;
}

static const struct dtxn_bench_ops tso_bench_ops = {
	.name = "tso",
	.desc = "timestamp oracle: one lib/tso timestamp per transaction (Scythe Fig. 28)",
	.opts = tso_opts,
	.n_opts = RTE_DIM(tso_opts),
	.conf_size = sizeof(struct tso_conf),
	.n_types = TSO_N_TYPES,
	.type_names = tso_type_names,
	.create = tso_bench_create,
	.destroy = tso_bench_destroy,
	.define = tso_bench_define,
	.load = tso_bench_load,
	.pick = tso_bench_pick,
	.run = tso_bench_run,
	.check = tso_bench_check,
};

DTXN_BENCH_REGISTER(tso, &tso_bench_ops);
