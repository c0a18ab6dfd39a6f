/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the TATP benchmark (lib/bench/tatp*.c): sub_nbr strings,
 * the mix, and on a one-MN cluster: the population, a run whose expected
 * failures are rollbacks (not aborts), the referential checks passing, and
 * failing when a reference is broken on purpose.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "tatp.h"
#include "unit_eal.h"
#include "ut_cluster.h"

static void
test_sub_nbr(void **state)
{
	char nbr[TATP_SUB_NBR_LEN];

	(void)state;
	tatp_sub_nbr(42, nbr);
	assert_memory_equal(nbr, "000000000000042", TATP_SUB_NBR_LEN);
	assert_int_equal(tatp_sub_nbr_value(nbr), 42);
	tatp_sub_nbr(999999999, nbr);
	assert_memory_equal(nbr, "000000999999999", TATP_SUB_NBR_LEN);
	assert_int_equal(tatp_sub_nbr_value(nbr), 999999999);
	/* one shard per subscriber for all its rows */
	assert_int_equal(dtxn_key_shard(tatp_k_subscriber(5000)),
			 dtxn_key_shard(tatp_k_call_forwarding(5000, 4, 16)));
	assert_int_equal(dtxn_key_shard(tatp_k_access_info(5000, 2)), 5000 & 0xfff);
	assert_true(tatp_k_call_forwarding(7, 1, 8) != tatp_k_call_forwarding(7, 1, 16));
}

static void
test_mix(void **state)
{
	const struct dtxn_bench_ops *ops = dtxn_bench_find("tatp");
	struct dtxn_bench *b = dtxn_bench_alloc(ops, 1);
	static const double want[TATP_N_TYPES] = { 0.35, 0.10, 0.35, 0.02, 0.14, 0.02, 0.02 };
	unsigned hist[TATP_N_TYPES] = { 0 };
	const unsigned draws = 200000;
	struct dtxn_rng r;

	(void)state;
	assert_non_null(b);
	assert_int_equal(ops->create(b), 0);
	dtxn_rng_seed(&r, 2);
	for (unsigned i = 0; i < draws; i++)
		hist[ops->pick(b, &r)]++;
	for (unsigned t = 0; t < TATP_N_TYPES; t++)
		assert_true(fabs((double)hist[t] / draws - want[t]) < 0.005);
	dtxn_bench_free(b);
}

static void
test_run_and_teeth(void **state)
{
	const struct dtxn_bench_ops *ops = dtxn_bench_find("tatp");
	struct dtxn_bench *b = dtxn_bench_alloc(ops, 77);
	struct tatp_priv *p;
	struct ut_cluster u;
	char err[160];
	uint64_t s_sf = 0;
	uint32_t sf_type = 0, start = 0;

	(void)state;
	assert_int_equal(dtxn_opt_set(&ops->opts[0], b->conf, "2000", err, sizeof(err)), 0);
	assert_int_equal(ops->create(b), 0);
	p = b->priv;
	if (!ut_cluster_up(&u, b, "ut_tatp")) {
		dtxn_bench_free(b);
		skip();
	}
	/* the population's averages: 2.5 AI and SF rows, 1.5 CF rows per SF row */
	print_message("  loaded ai %" PRIu64 " sf %" PRIu64 " cf %" PRIu64 "\n", p->loaded_ai,
		      p->loaded_sf, p->loaded_cf);
	assert_true(fabs((double)p->loaded_ai / 2000 - 2.5) < 0.15);
	assert_true(fabs((double)p->loaded_sf / 2000 - 2.5) < 0.15);
	assert_true(fabs((double)p->loaded_cf / p->loaded_sf - 1.5) < 0.1);
	ut_check(&u, 0);
	assert_int_equal(u.rep->n_checks, 7);
	ut_expect_failing(u.rep, NULL);

	ut_cluster_run(&u, 2000);
	for (unsigned t = 0; t < TATP_N_TYPES; t++) {
		const struct dtxn_txn_stats *ts = &u.stats->type[t];

		print_message("  %-24s commits %6" PRIu64 " rollbacks %6" PRIu64 "\n",
			      ops->type_names[t], ts->commits, ts->rollbacks);
		assert_true(ts->commits > 0);
	}
	/* expected failures are rollbacks; GetSubscriberData and UpdateLocation never fail */
	assert_int_equal(u.stats->type[TATP_GET_SUBSCRIBER_DATA].rollbacks, 0);
	assert_int_equal(u.stats->type[TATP_UPDATE_LOCATION].rollbacks, 0);
	for (unsigned t = TATP_GET_NEW_DESTINATION; t < TATP_N_TYPES; t++)
		if (t != TATP_UPDATE_LOCATION)
			assert_true(u.stats->type[t].rollbacks > 0);
	/* about 62.5% of GetAccessData find their row */
	{
		const struct dtxn_txn_stats *ts = &u.stats->type[TATP_GET_ACCESS_DATA];
		double ok = (double)ts->commits / (double)(ts->commits + ts->rollbacks);

		assert_true(fabs(ok - 0.625) < 0.05);
	}
	ut_check(&u, UT_COORDS);
	ut_expect_failing(u.rep, NULL);

	/* find a SPECIAL_FACILITY row with a CALL_FORWARDING row */
	for (uint64_t s = 1; s <= 2000 && s_sf == 0; s++)
		for (uint32_t t = 1; t <= 4 && s_sf == 0; t++)
			for (uint32_t st = 0; st <= 16 && s_sf == 0; st += 8) {
				struct tatp_call_forwarding cf;

				if (dtxn_db_get(u.db, TATP_CALL_FORWARDING,
						tatp_k_call_forwarding(s, t, st), &cf) == 0) {
					s_sf = s;
					sf_type = t;
					start = st;
				}
			}
	assert_true(s_sf != 0);

	/* a CALL_FORWARDING row without its SPECIAL_FACILITY */
	{
		struct tatp_special_facility sf;
		const uint64_t key = tatp_k_special_facility(s_sf, sf_type);
		struct ut_mutation del = { .op = UT_DELETE, .table = TATP_SPECIAL_FACILITY,
					   .key = key };
		struct ut_mutation ins = { .op = UT_INSERT, .table = TATP_SPECIAL_FACILITY,
					   .key = key, .value = &sf, .len = sizeof(sf) };

		assert_int_equal(dtxn_db_get(u.db, TATP_SPECIAL_FACILITY, key, &sf), 0);
		ut_mutate(&u, &del);
		ut_check(&u, UT_COORDS);
		ut_expect_failing(u.rep, (const char *[]){ "tatp_special_facility_has_subscriber",
							  "tatp_call_forwarding_has_special_facility",
							  NULL });
		ut_mutate(&u, &ins);
		ut_check(&u, UT_COORDS);
		ut_expect_failing(u.rep, NULL);
	}
	/* a CALL_FORWARDING row of a subscriber that does not exist */
	{
		struct tatp_call_forwarding cf = { .end_time = (uint8_t)(start + 1) };
		const uint64_t key = tatp_k_call_forwarding(2001, sf_type, start);
		struct ut_mutation ins = { .op = UT_INSERT, .table = TATP_CALL_FORWARDING,
					   .key = key, .value = &cf, .len = sizeof(cf) };
		struct ut_mutation del = { .op = UT_DELETE, .table = TATP_CALL_FORWARDING,
					   .key = key };

		memset(cf.numberx, '1', sizeof(cf.numberx));
		ut_mutate(&u, &ins);
		ut_check(&u, UT_COORDS);
		ut_expect_failing(u.rep, (const char *[]){ "tatp_call_forwarding_has_subscriber",
							  "tatp_call_forwarding_count", NULL });
		ut_mutate(&u, &del);
		ut_check(&u, UT_COORDS);
		ut_expect_failing(u.rep, NULL);
	}
	/* a lost CALL_FORWARDING delete in the books */
	u.ctx[1].acc[TATP_ACC_CF_DELTA]--;
	ut_check(&u, UT_COORDS);
	ut_expect_failing(u.rep, (const char *[]){ "tatp_call_forwarding_count", NULL });
	u.ctx[1].acc[TATP_ACC_CF_DELTA]++;
	/* a subscriber whose index entry points elsewhere */
	{
		const uint64_t key = tatp_k_sec(10);
		struct ut_mutation m = { .op = UT_ADD_U32, .table = TATP_SEC_SUBSCRIBER, .key = key,
					 .off = offsetof(struct tatp_sec_subscriber, s_id),
					 .delta = 1 };

		ut_mutate(&u, &m);
		ut_check(&u, UT_COORDS);
		ut_expect_failing(u.rep, (const char *[]){ "tatp_sub_nbr_index", NULL });
		m.delta = -1;
		ut_mutate(&u, &m);
		ut_check(&u, UT_COORDS);
		ut_expect_failing(u.rep, NULL);
	}
	ut_cluster_down(&u);
	dtxn_bench_free(b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sub_nbr),
		cmocka_unit_test(test_mix),
		cmocka_unit_test(test_run_and_teeth),
	};
	int rc;

	if (dtxn_unit_eal_init("ut_tatp") != 0)
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	dtxn_unit_eal_fini();
	return rc;
}
