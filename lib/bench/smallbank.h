/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DTXN_BENCH_SMALLBANK_H
#define DTXN_BENCH_SMALLBANK_H

/*
 * SmallBank (--bench smallbank), private to lib/bench (never installed):
 * the conf, the state create() prepares, and the account choice, which
 * the unit tests draw directly (test/unit/test_bench.c). The benchmark:
 * smallbank.c; the user's page: doc/guides/benchmarks.md, "SmallBank".
 */

#include <stdbool.h>
#include <stdint.h>

#include "dtxn_bench.h"

/* Options (filled by smallbank.c's option table). */
struct sb_conf {
	uint64_t accounts;
	uint64_t hot_percent;
	uint64_t hot_txn_percent;
	double theta;            /* DTXN_OPT_UNSET: the hot set */
	uint64_t account_table;  /* 1: the ACCOUNT table, read by every txn */
};

struct sb_priv {
	struct sb_conf conf;
	uint64_t hot;            /* accounts in the hot set [0, hot) */
	bool skewed;             /* theta given: accounts drawn from zipf */
	struct dtxn_zipf zipf;   /* over all accounts; rank r is account r */
};

/**
 * Draws a transaction's account @p a, and @p b != a when @p b is not
 * NULL (bench-specs.md §2). Without theta: with probability
 * hot_txn_percent% both uniform over the hot set [0, hot), else over all
 * accounts. With theta: each zipf(theta) over all accounts (rank r is
 * account r; CREST Fig. 11 and Scythe Fig. 22 run theta 0.99), b redrawn
 * while it equals a (dtxn_zipf_next_distinct()). Any lcore; @p r is the
 * caller's.
 */
void smallbank_pick_accounts(const struct sb_priv *p, struct dtxn_rng *r, uint64_t *a,
			     uint64_t *b);

#endif /* DTXN_BENCH_SMALLBANK_H */
