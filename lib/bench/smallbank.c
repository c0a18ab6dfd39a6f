/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * "smallbank": SmallBank as in FORD and Motor (H-Store's six transactions,
 * FaSST's hot set), with integer money (bench-specs.md §2 and §6;
 * doc/guides/benchmarks.md, "SmallBank").
 *
 * Tables SAVINGS (id 0) and CHECKING (id 1): one 8-byte int64 balance in
 * cents per account, key dtxn_key_make(a, a & 0xfff) (the locality field is
 * the account), every balance 10,000,000 cents at load. Per transaction,
 * with probability hot_txn_percent% all its accounts are uniform over the
 * hot set [0, hot), otherwise over [0, accounts); with `theta`, every
 * account is zipf(theta) over [0, accounts) instead (smallbank.h);
 * two-account transactions use distinct accounts. Mix 15/15/15/25/15/15.
 *
 * With account_table=1, the ACCOUNT table of the original schema (H-Store,
 * OLTP-Bench; CREST's Table 1 counts it: one cell per record of 26.7 B on
 * average over the three tables) is loaded too: ACCOUNT (id 2), a 64-byte
 * customer name per account, read-only; every transaction first reads the
 * ACCOUNT row of each customer it names, as OLTP-Bench's procedures do
 * (GetAccount, by customer id), and aborts if one is missing.
 *
 * Each committed transaction's external delta (money in or out of the
 * bank) is added to ctx->acc[0] in cents. Invariant: the sum of all
 * balances == 2 * accounts * 10,000,000 + sum of deltas.
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_malloc.h>

#include "bench_private.h"
#include "dtxn_bench.h"
#include "smallbank.h"

#define SB_SAVINGS 0
#define SB_CHECKING 1
#define SB_ACCOUNT 2

/* ACCOUNT's value: the customer's name, NUL-padded (H-Store: VARCHAR(64)). */
#define SB_NAME_SIZE 64

/* Money in cents. FORD and Motor use a float 1e9 (see the guide). */
#define SB_INITIAL_CENTS INT64_C(10000000)
#define SB_DEPOSIT_CENTS 130      /* DepositChecking: 1.30 */
#define SB_PAYMENT_CENTS 500      /* SendPayment: 5.00 */
#define SB_SAVING_CENTS 2020      /* TransactSaving: 20.20 */
#define SB_CHECK_CENTS 500        /* WriteCheck: 5.00 */
#define SB_OVERDRAFT_CENTS 100    /* WriteCheck penalty when sav + chk < amount */

enum sb_type {
	SB_AMALGAMATE,
	SB_BALANCE,
	SB_DEPOSIT_CHECKING,
	SB_SEND_PAYMENT,
	SB_TRANSACT_SAVING,
	SB_WRITE_CHECK,
	SB_N_TYPES,
};

static const char *const sb_type_names[SB_N_TYPES] = {
	"amalgamate", "balance", "deposit_checking",
	"send_payment", "transact_saving", "write_check",
};

/* The standard mix, percent (H-Store / OLTP-Bench, FORD, Motor). */
static const unsigned sb_mix[SB_N_TYPES] = { 15, 15, 15, 25, 15, 15 };

static const struct dtxn_opt sb_opts[] = {
	{ "accounts", DTXN_OPT_U64, offsetof(struct sb_conf, accounts), 100000, 2,
	  4294967296.0 /* 2^32 */, "accounts (rows in SAVINGS and in CHECKING)" },
	{ "hot_percent", DTXN_OPT_U64, offsetof(struct sb_conf, hot_percent), 4, 0, 100,
	  "percent of the accounts in the hot set" },
	{ "hot_txn_percent", DTXN_OPT_U64, offsetof(struct sb_conf, hot_txn_percent), 90, 0, 100,
	  "percent of transactions whose accounts all come from the hot set" },
	BENCH_THETA_OPT(struct sb_conf, theta,
			"zipf skew of every account over all accounts, replacing the hot set; 0 is uniform"),
	{ "account_table", DTXN_OPT_U64, offsetof(struct sb_conf, account_table), 0, 0, 1,
	  "1: load the ACCOUNT table (64 B names) and read it in every txn, as H-Store" },
};

static inline uint64_t
sb_key(uint64_t account)
{
	return dtxn_key_make(account, account & DTXN_KEY_SHARD_MASK);
}

static inline int64_t
sb_get(struct dtxn_item *it)
{
	int64_t v;

	memcpy(&v, dtxn_item_value(it), sizeof(v));
	return v;
}

static inline void
sb_put(struct dtxn_item *it, int64_t v)
{
	memcpy(dtxn_item_value(it), &v, sizeof(v));
}

static int
sb_create(struct dtxn_bench *b)
{
	const struct sb_conf *conf = b->conf;
	struct sb_priv *p;
	uint64_t hot;
	int rc = bench_conf_check(b);

	if (rc != 0)
		return rc;
	hot = conf->accounts * conf->hot_percent / 100;
	if (conf->theta == DTXN_OPT_UNSET && conf->hot_txn_percent > 0 && hot < 2) {
		bench_set_err(b, "smallbank: hot_percent %" PRIu64 " of %" PRIu64
			      " accounts gives %" PRIu64 " hot accounts, but hot_txn_percent %"
			      PRIu64 " needs at least 2", conf->hot_percent, conf->accounts,
			      hot, conf->hot_txn_percent);
		return -EINVAL;
	}
	p = rte_zmalloc("smallbank_priv", sizeof(*p), 0);
	if (p == NULL) {
		bench_set_err(b, "smallbank: out of memory");
		return -ENOMEM;
	}
	p->conf = *conf;
	p->hot = hot;
	rc = bench_theta_init(b, &p->zipf, conf->accounts, conf->theta, "accounts");
	if (rc < 0) {
		rte_free(p);
		return rc;
	}
	p->skewed = rc == 1;
	b->priv = p;
	return 0;
}

static void
sb_destroy(struct dtxn_bench *b)
{
	rte_free(b->priv);
	b->priv = NULL;
}

static int
sb_define(struct dtxn_bench *b, struct dtxn_db *db)
{
	const struct sb_priv *p = b->priv;
	const struct dtxn_table_def defs[] = {
		/* n_versions: MVCC protocols, Motor's VNum for SmallBank (§7.2);
		 * one cell per record (the balance), which every update changes;
		 * the key ids are the account numbers 0..accounts-1 (dense) */
		{ .id = SB_SAVINGS, .name = "savings", .value_size = sizeof(int64_t),
		  .max_keys = p->conf.accounts, .n_versions = 3, .n_columns = 1,
		  .column_size = { sizeof(int64_t) }, .n_updates = 1,
		  .updates = { { .cells = DTXN_CELL(0), .permille = 1000 } },
		  .flags = DTXN_TABLE_F_DENSE_IDS },
		{ .id = SB_CHECKING, .name = "checking", .value_size = sizeof(int64_t),
		  .max_keys = p->conf.accounts, .n_versions = 3, .n_columns = 1,
		  .column_size = { sizeof(int64_t) }, .n_updates = 1,
		  .updates = { { .cells = DTXN_CELL(0), .permille = 1000 } },
		  .flags = DTXN_TABLE_F_DENSE_IDS },
		/* the customers' names: loaded, then only read */
		{ .id = SB_ACCOUNT, .name = "account", .value_size = SB_NAME_SIZE,
		  .max_keys = p->conf.accounts, .n_columns = 1,
		  .column_size = { SB_NAME_SIZE },
		  .flags = DTXN_TABLE_F_DENSE_IDS | DTXN_TABLE_F_NO_UPDATE |
			   DTXN_TABLE_F_READ_ONLY },
	};
	const unsigned n_defs = p->conf.account_table ? RTE_DIM(defs) : RTE_DIM(defs) - 1;

	for (unsigned i = 0; i < n_defs; i++) {
		int rc = dtxn_db_add_table(db, &defs[i]);

		if (rc != 0) {
			bench_set_err(b, "smallbank: adding table %s failed: %s", defs[i].name,
				      rte_strerror(-rc));
			return rc;
		}
	}
	return 0;
}

/* The name of customer @p a, NUL-padded to SB_NAME_SIZE bytes. */
static void
sb_name(uint64_t a, char name[SB_NAME_SIZE])
{
	memset(name, 0, SB_NAME_SIZE);
	snprintf(name, SB_NAME_SIZE, "customer %010" PRIu64, a);
}

static int
sb_load(struct dtxn_bench *b, struct dtxn_db *db)
{
	const struct sb_priv *p = b->priv;
	const int64_t bal = SB_INITIAL_CENTS;
	char name[SB_NAME_SIZE];

	for (uint64_t a = 0; a < p->conf.accounts; a++) {
		if (p->conf.account_table) {
			int rc;

			sb_name(a, name);
			rc = dtxn_db_load(db, SB_ACCOUNT, sb_key(a), name);
			if (rc != 0) {
				bench_set_err(b, "smallbank: loading account %" PRIu64
					      " into account failed: %s", a, rte_strerror(-rc));
				return rc;
			}
		}
		for (uint32_t tbl = SB_SAVINGS; tbl <= SB_CHECKING; tbl++) {
			int rc = dtxn_db_load(db, tbl, sb_key(a), &bal);

			if (rc != 0) {
				bench_set_err(b, "smallbank: loading account %" PRIu64
					      " into %s failed: %s", a,
					      tbl == SB_SAVINGS ? "savings" : "checking",
					      rte_strerror(-rc));
				return rc;
			}
		}
	}
	return 0;
}

static unsigned
sb_pick(struct dtxn_bench *b, struct dtxn_rng *r)
{
	uint64_t x = dtxn_rng_range(r, 100);

	RTE_SET_USED(b);
	for (unsigned i = 0; i < SB_N_TYPES; i++) {
		if (x < sb_mix[i])
			return i;
		x -= sb_mix[i];
	}
	return SB_N_TYPES - 1;  /* unreachable: the mix sums to 100 */
}

void
smallbank_pick_accounts(const struct sb_priv *p, struct dtxn_rng *r, uint64_t *a, uint64_t *b)
{
	if (p->skewed) {
		*a = dtxn_zipf_next(&p->zipf, r);
		if (b != NULL)
			*b = dtxn_zipf_next_distinct(&p->zipf, r, a, 1);
		return;
	}

	const bool hot = dtxn_rng_range(r, 100) < p->conf.hot_txn_percent;
	const uint64_t span = hot ? p->hot : p->conf.accounts;

	*a = dtxn_rng_range(r, span);
	if (b != NULL) {
		*b = dtxn_rng_range(r, span - 1);
		if (*b >= *a)
			(*b)++;
	}
}

/*
 * The accounts of a read-write txn: drawn again until its first record
 * (keyed by account a) is routed to this CN (dtxn_bench_routes_here()).
 */
static void
sb_accounts_rw(struct dtxn_bench_ctx *ctx, const struct sb_priv *p, uint64_t *a, uint64_t *b)
{
	smallbank_pick_accounts(p, &ctx->rng, a, b);
	for (unsigned k = 1; k < DTXN_BENCH_ROUTE_TRIES &&
			     !dtxn_bench_routes_here(ctx, SB_CHECKING, sb_key(*a)); k++)
		smallbank_pick_accounts(p, &ctx->rng, a, b);
}

/*
 * With account_table=1: adds to @p t a read of the ACCOUNT row of customer
 * @p a, and of customer *@p b when @p b is not NULL, at @p it[0..] (as
 * OLTP-Bench's GetAccount, by customer id). @return the items added: 0
 * without the table, else 1 or 2.
 */
static unsigned
sb_add_customers(struct dtxn_txn *t, const struct sb_priv *p, struct dtxn_item **it,
		 uint64_t a, const uint64_t *b)
{
	unsigned n = 0;

	if (!p->conf.account_table)
		return 0;
	it[n++] = dtxn_txn_add_ro(t, SB_ACCOUNT, sb_key(a));
	if (b != NULL)
		it[n++] = dtxn_txn_add_ro(t, SB_ACCOUNT, sb_key(*b));
	return n;
}

/* Commits; on success adds the external delta (cents) to ctx->acc[0]. */
static int
sb_commit(struct dtxn_bench_ctx *ctx, struct dtxn_txn *t, int64_t delta)
{
	return bench_commit(ctx, t, 0, delta);
}

static int
sb_amalgamate(struct dtxn_bench_ctx *ctx, const struct sb_priv *p)
{
	uint64_t a, b;
	struct dtxn_item *it[5];
	struct dtxn_txn *t;
	unsigned n;
	int rc;

	sb_accounts_rw(ctx, p, &a, &b);
	t = dtxn_txn_begin(ctx->coord, DTXN_TXN_RW);
	it[0] = dtxn_txn_add_rw(t, SB_SAVINGS, sb_key(a));
	it[1] = dtxn_txn_add_rw(t, SB_CHECKING, sb_key(a));
	it[2] = dtxn_txn_add_rw(t, SB_CHECKING, sb_key(b));
	n = 3 + sb_add_customers(t, p, &it[3], a, &b);
	rc = dtxn_txn_execute(t);
	if (rc != DTXN_OK)
		return rc;
	if (!bench_items_exist(t, it, n))
		return DTXN_ABORT_NOT_FOUND;
	sb_put(it[2], sb_get(it[2]) + sb_get(it[0]) + sb_get(it[1]));
	sb_put(it[0], 0);
	sb_put(it[1], 0);
	return sb_commit(ctx, t, 0);
}

static int
sb_balance(struct dtxn_bench_ctx *ctx, const struct sb_priv *p)
{
	uint64_t a;
	struct dtxn_item *it[3];
	struct dtxn_txn *t;
	unsigned n;
	int rc;

	smallbank_pick_accounts(p, &ctx->rng, &a, NULL);
	t = dtxn_txn_begin(ctx->coord, DTXN_TXN_RO);
	it[0] = dtxn_txn_add_ro(t, SB_SAVINGS, sb_key(a));
	it[1] = dtxn_txn_add_ro(t, SB_CHECKING, sb_key(a));
	n = 2 + sb_add_customers(t, p, &it[2], a, NULL);
	rc = dtxn_txn_execute(t);
	if (rc != DTXN_OK)
		return rc;
	if (!bench_items_exist(t, it, n))
		return DTXN_ABORT_NOT_FOUND;
	/* The result (sav + chk) goes nowhere: the benchmark measures the txn. */
	return sb_commit(ctx, t, 0);
}

/* DepositChecking and TransactSaving: one RW balance += amount. */
static int
sb_deposit(struct dtxn_bench_ctx *ctx, const struct sb_priv *p, uint32_t table,
	   int64_t amount)
{
	uint64_t a;
	struct dtxn_item *it[2];
	struct dtxn_txn *t;
	unsigned n;
	int rc;

	sb_accounts_rw(ctx, p, &a, NULL);
	t = dtxn_txn_begin(ctx->coord, DTXN_TXN_RW);
	it[0] = dtxn_txn_add_rw(t, table, sb_key(a));
	n = 1 + sb_add_customers(t, p, &it[1], a, NULL);
	rc = dtxn_txn_execute(t);
	if (rc != DTXN_OK)
		return rc;
	if (!bench_items_exist(t, it, n))
		return DTXN_ABORT_NOT_FOUND;
	sb_put(it[0], sb_get(it[0]) + amount);
	return sb_commit(ctx, t, amount);
}

static int
sb_send_payment(struct dtxn_bench_ctx *ctx, const struct sb_priv *p)
{
	uint64_t a, b;
	struct dtxn_item *it[4];
	struct dtxn_txn *t;
	unsigned n;
	int rc;

	sb_accounts_rw(ctx, p, &a, &b);
	t = dtxn_txn_begin(ctx->coord, DTXN_TXN_RW);
	it[0] = dtxn_txn_add_rw(t, SB_CHECKING, sb_key(a));
	it[1] = dtxn_txn_add_rw(t, SB_CHECKING, sb_key(b));
	n = 2 + sb_add_customers(t, p, &it[2], a, &b);
	rc = dtxn_txn_execute(t);
	if (rc != DTXN_OK)
		return rc;
	if (!bench_items_exist(t, it, n))
		return DTXN_ABORT_NOT_FOUND;
	if (sb_get(it[0]) < SB_PAYMENT_CENTS) {
		dtxn_txn_abort(t, DTXN_ABORT_APP);
		return DTXN_BENCH_ROLLBACK;
	}
	sb_put(it[0], sb_get(it[0]) - SB_PAYMENT_CENTS);
	sb_put(it[1], sb_get(it[1]) + SB_PAYMENT_CENTS);
	return sb_commit(ctx, t, 0);
}

static int
sb_write_check(struct dtxn_bench_ctx *ctx, const struct sb_priv *p)
{
	uint64_t a;
	struct dtxn_item *it[3];
	struct dtxn_txn *t;
	int64_t amount = SB_CHECK_CENTS;
	unsigned n;
	int rc;

	sb_accounts_rw(ctx, p, &a, NULL);
	t = dtxn_txn_begin(ctx->coord, DTXN_TXN_RW);
	it[0] = dtxn_txn_add_ro(t, SB_SAVINGS, sb_key(a));
	it[1] = dtxn_txn_add_rw(t, SB_CHECKING, sb_key(a));
	n = 2 + sb_add_customers(t, p, &it[2], a, NULL);
	rc = dtxn_txn_execute(t);
	if (rc != DTXN_OK)
		return rc;
	if (!bench_items_exist(t, it, n))
		return DTXN_ABORT_NOT_FOUND;
	if (sb_get(it[0]) + sb_get(it[1]) < SB_CHECK_CENTS)
		amount += SB_OVERDRAFT_CENTS;
	sb_put(it[1], sb_get(it[1]) - amount);
	return sb_commit(ctx, t, -amount);
}

static int
sb_run(struct dtxn_bench_ctx *ctx, unsigned type)
{
	const struct sb_priv *p = ctx->bench->priv;

	switch ((enum sb_type)type) {
	case SB_AMALGAMATE:
		return sb_amalgamate(ctx, p);
	case SB_BALANCE:
		return sb_balance(ctx, p);
	case SB_DEPOSIT_CHECKING:
		return sb_deposit(ctx, p, SB_CHECKING, SB_DEPOSIT_CENTS);
	case SB_SEND_PAYMENT:
		return sb_send_payment(ctx, p);
	case SB_TRANSACT_SAVING:
		return sb_deposit(ctx, p, SB_SAVINGS, SB_SAVING_CENTS);
	case SB_WRITE_CHECK:
		return sb_write_check(ctx, p);
	case SB_N_TYPES:
		break;
	}
	return DTXN_BENCH_ROLLBACK;  /* not a type: the runner logs it */
}

/* One table's scan: its rows, bad keys (or ACCOUNT rows without their name), balances. */
struct sb_scan {
	uint32_t table;
	uint64_t accounts;
	uint64_t count;
	uint64_t bad;
	int64_t sum;
};

static int
sb_visit(uint64_t key, const void *value, void *arg)
{
	struct sb_scan *s = arg;
	const uint64_t a = dtxn_key_id(key);
	char name[SB_NAME_SIZE];
	int64_t bal;

	s->count++;
	if (a >= s->accounts || key != sb_key(a))
		s->bad++;
	if (s->table == SB_ACCOUNT) {
		sb_name(a, name);
		s->bad += memcmp(value, name, SB_NAME_SIZE) != 0;
	} else {
		memcpy(&bal, value, sizeof(bal));
		s->sum += bal;
	}
	return 0;
}

static int
sb_check(struct dtxn_bench *b, struct dtxn_db *db, struct dtxn_bench_ctx *const *ctxs,
	 unsigned n_ctx, struct dtxn_report *r)
{
	static const char *const names[] = { "savings", "checking", "account" };
	const struct sb_priv *p = b->priv;
	const uint32_t n_tables = p->conf.account_table ? 3 : 2;
	struct sb_scan s[3];
	int64_t deltas = 0, expected;

	for (unsigned i = 0; i < n_ctx; i++)
		deltas += ctxs[i]->acc[0];
	for (uint32_t tbl = 0; tbl < n_tables; tbl++) {
		int rc;

		s[tbl] = (struct sb_scan){ .table = tbl, .accounts = p->conf.accounts };
		rc = dtxn_db_scan(db, tbl, sb_visit, &s[tbl]);
		if (rc != 0) {
			bench_set_err(b, "smallbank: scanning %s failed: %s", names[tbl],
				      rte_strerror(rc < 0 ? -rc : rc));
			return rc < 0 ? rc : -EIO;
		}
	}
	expected = 2 * (int64_t)p->conf.accounts * SB_INITIAL_CENTS + deltas;
	dtxn_report_check(r, "smallbank_conservation", s[0].sum + s[1].sum == expected,
			  "sum=%" PRId64 " expected=%" PRId64 " (deltas %" PRId64 ")",
			  s[0].sum + s[1].sum, expected, deltas);
	dtxn_report_check(r, "smallbank_record_count",
			  s[0].count == p->conf.accounts && s[1].count == p->conf.accounts &&
			  s[0].bad == 0 && s[1].bad == 0,
			  "savings=%" PRIu64 " checking=%" PRIu64 " expected=%" PRIu64
			  " bad_keys=%" PRIu64, s[0].count, s[1].count, p->conf.accounts,
			  s[0].bad + s[1].bad);
	/* with account_table=1: one ACCOUNT row per account, with its name */
	if (p->conf.account_table)
		dtxn_report_check(r, "smallbank_accounts",
				  s[2].count == p->conf.accounts && s[2].bad == 0,
				  "account=%" PRIu64 " expected=%" PRIu64 " bad=%" PRIu64,
				  s[2].count, p->conf.accounts, s[2].bad);
	return 0;
}

static const struct dtxn_bench_ops sb_ops = {
	.name = "smallbank",
	.desc = "SmallBank (H-Store mix, FaSST hot set) with integer money",
	.opts = sb_opts,
	.n_opts = RTE_DIM(sb_opts),
	.conf_size = sizeof(struct sb_conf),
	.n_types = SB_N_TYPES,
	.type_names = sb_type_names,
	.create = sb_create,
	.destroy = sb_destroy,
	.define = sb_define,
	.load = sb_load,
	.pick = sb_pick,
	.run = sb_run,
	.check = sb_check,
};

DTXN_BENCH_REGISTER(smallbank, &sb_ops);
