/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * perf_false_abort: the cost of FORD's and Motor's false-abort
 * classification (lib/txn/false_abort.c; doc/guides/crest.md, "False
 * aborts"): ns per dtxn_fa_append() (one per record lock taken), per
 * dtxn_fa_cells() (one per lock conflict or locked read) and per
 * dtxn_fa_cells_since() (one per FORD validation failure), on the calling
 * lcore over R records (uniform), in real time. Not a test: it prints,
 * asserts nothing.
 *
 * Usage: perf_false_abort [records] [ops]   (defaults 100000, 4000000)
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <rte_memory.h>

#include "dtxn_sched.h"
#include "dtxn_txn.h"
#include "dtxn_txn_driver.h"
#include "unit_eal.h"

/* The slot address of record @p k (64 B slots on MN 0). */
static dtxn_raddr_t
rec_raddr(uint64_t k)
{
	return DTXN_RADDR(0, 4096 + k * 64);
}

int
main(int argc, char **argv)
{
	uint64_t n_rec = argc > 1 ? strtoull(argv[1], NULL, 0) : 100000;
	uint64_t n_ops = argc > 2 ? strtoull(argv[2], NULL, 0) : 4000000;
	struct dtxn_db_conf dc = { .size = sizeof(dc), .protocol = "ford", .n_mn = 1,
				   .n_replicas = 1, .n_coords = 1, .log_bytes = 4096,
				   .false_aborts = 1 };
	struct dtxn_table_def d = { .id = 0, .name = "t", .value_size = 32, .max_keys = 64 };
	struct dtxn_fabric_conf fc = { .size = sizeof(fc), .driver = "shm", .n_mn = 1, .n_cn = 1,
				       .socket_id = SOCKET_ID_ANY, .name = "perffa" };
	struct dtxn_fabric *f;
	struct dtxn_db *db;
	uint64_t region, t0, t1, t2, t3, x = 88172645463325252ull, found = 0;
	uint32_t cells;

	if (n_rec == 0 || n_ops == 0 || dtxn_unit_eal_init("perf_fa") != 0)
		return 1;
	db = dtxn_db_create(&dc);
	if (db == NULL || dtxn_db_add_table(db, &d) != 0 || dtxn_db_layout(db, &region) != 0)
		return 1;
	fc.mn_region_size = region;
	dtxn_nic_model_none(&fc.nic);
	f = dtxn_fabric_open(&fc);
	if (f == NULL || dtxn_db_attach(db, f) != 0 || db->fa == NULL)
		return 1;
	t0 = dtxn_now_ns();
	for (uint64_t i = 0; i < n_ops; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		dtxn_fa_append(db->fa, rec_raddr(x % n_rec), i + 1, 1u << (x % 4));
	}
	t1 = dtxn_now_ns();
	for (uint64_t i = 0; i < n_ops; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		found += dtxn_fa_cells(db->fa, rec_raddr(x % n_rec), n_ops - (x % 64), &cells) == 0;
	}
	t2 = dtxn_now_ns();
	for (uint64_t i = 0; i < n_ops; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		found += dtxn_fa_cells_since(db->fa, rec_raddr(x % n_rec), n_ops - (x % 64),
					     n_ops - (x % 8), &cells) == 0;
	}
	t3 = dtxn_now_ns();
	printf("side table, %" PRIu64 " records, %" PRIu64 " ops each: append %.1f ns, "
	       "cells %.1f ns, cells_since %.1f ns (%" PRIu64 " found)\n",
	       n_rec, n_ops, (double)(t1 - t0) / n_ops, (double)(t2 - t1) / n_ops,
	       (double)(t3 - t2) / n_ops, found);
	dtxn_db_destroy(db);
	dtxn_fabric_close(f);
	dtxn_unit_eal_fini();
	return 0;
}
