/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Resources sized before the run (issue 11, part 2): once the tables are
 * laid out, and before anything large is allocated, the footprints of the
 * fabric (MN regions) and of every worker (scheduler and stacks, queues,
 * address cache, coordinators) are added up and compared with the memory
 * the EAL can still give and with RTE_MAX_MEMZONE; a shortfall is one line
 * naming what needs how much and the -m that would do. MN regions a driver
 * maps outside the heap (sim without hugepages: fp.mapped_bytes) are not
 * compared with it: the kernel backs them as the run touches them.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <rte_eal.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_memzone.h>

#include "dtxn_fabric.h"
#include "dtxn_sched.h"
#include "dtxn_stats.h"
#include "dtxn_txn.h"
#include "app.h"

#define MIB (1024.0 * 1024.0)

static void
count_zone(const struct rte_memzone *mz, void *arg)
{
	RTE_SET_USED(mz);
	(*(unsigned *)arg)++;
}

/* Free hugepages of every size, bytes (sysfs): what a dynamic-memory EAL may still map. */
static uint64_t
free_hugepage_bytes(void)
{
	static const struct { const char *path; uint64_t size; } sizes[] = {
		{ "/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages", UINT64_C(2) << 20 },
		{ "/sys/kernel/mm/hugepages/hugepages-1048576kB/free_hugepages", UINT64_C(1) << 30 },
	};
	uint64_t total = 0;

	for (size_t i = 0; i < RTE_DIM(sizes); i++) {
		FILE *f = fopen(sizes[i].path, "r");
		uint64_t n = 0;

		if (f == NULL)
			continue;
		if (fscanf(f, "%" SCNu64, &n) != 1)
			n = 0;
		fclose(f);
		total += n * sizes[i].size;
	}
	return total;
}

int
app_memory_check(const struct app_conf *c, const struct dtxn_db *db,
		 const struct dtxn_fabric_conf *fc, unsigned n_workers)
{
	struct dtxn_footprint mn = { 0 }, w = { 0 };
	struct rte_malloc_socket_stats st;
	uint64_t need, have, per_worker;
	unsigned zones = 0;
	int socket = (int)rte_socket_id();

	struct dtxn_footprint cn = { 0 };
	unsigned n_cn = (unsigned)RTE_MAX(c->cn, UINT64_C(1));

	dtxn_fabric_footprint(fc, &mn);
	if (dtxn_worker_footprint(db, (unsigned)c->coroutines, &w) != 0)
		return APP_EXIT_FAIL;
	/* --addr-prewarm: the workers' shared address cache, once per process */
	if (dtxn_db_addr_base_footprint(db, &mn) != 0)
		return APP_EXIT_FAIL;
	/* the protocol's state per CN and per worker (Lotus: lock tables, VT caches, RPC) */
	int rc = dtxn_cc_footprint(db, n_cn, (unsigned)c->coroutines, &cn, &w);

	if (rc != 0 && rc != -ENOTSUP)
		return APP_EXIT_FAIL;
	/* a driver that grows its queues as used (sim) reserves no memzone
	 * per QP and allocates them small first: counted so, Lotus passes at
	 * 44 nodes and beyond (doc/guides/sim.md "Scale") */
	if (dtxn_fabric_queues_grow(fc->driver)) {
		struct dtxn_footprint *fps[] = { &mn, &w, &cn };

		for (size_t i = 0; i < RTE_DIM(fps); i++) {
			fps[i]->memzones -= fps[i]->qp_memzones;
			fps[i]->bytes -= fps[i]->queue_bytes;
			fps[i]->bytes += fps[i]->queue_init_bytes;
		}
	}
	mn.bytes += (uint64_t)n_cn * cn.bytes;
	mn.memzones += n_cn * cn.memzones;
	/* the app's own share per worker: statistics and benchmark contexts */
	per_worker = w.bytes + sizeof(struct dtxn_run_stats) + c->coroutines * 256 +
		     2 * DTXN_FOOTPRINT_ALLOC_SLACK;
	need = mn.bytes + (uint64_t)n_workers * per_worker;
	rte_memzone_walk(count_zone, &zones);
	if ((uint64_t)zones + mn.memzones + (uint64_t)n_workers * w.memzones > RTE_MAX_MEMZONE) {
		app_err("the run needs %" PRIu64 " memzones (%u for the MNs and the CNs' protocol state + %u workers x %u), more than the %d RTE_MAX_MEMZONE allows with %u in use; use fewer workers (--threads, --cn, lcores)",
			mn.memzones + (uint64_t)n_workers * w.memzones, mn.memzones, n_workers,
			w.memzones, RTE_MAX_MEMZONE, zones);
		return APP_EXIT_USAGE;
	}
	if (rte_malloc_get_socket_stats(socket, &st) != 0)
		return APP_EXIT_OK; /* nothing to compare with: the allocations will tell */
	have = st.heap_totalsz_bytes - st.heap_allocsz_bytes;
	if (rte_eal_has_hugepages())
		have += free_hugepage_bytes();
	if (need <= have)
		return APP_EXIT_OK;
	/* the -m that would do: what is in use now, plus the run, plus 10%, in 256 MiB steps */
	uint64_t m = (uint64_t)((double)(st.heap_allocsz_bytes + need) * 1.1 / MIB);

	m = (m + 255) / 256 * 256;
	app_err("the run needs %.0f MiB (MN regions %" PRIu64 " x %.1f MiB%s, %u CNs x %.1f MiB of protocol state, %u workers x %.1f MiB: stacks, queues, address cache, coordinators), more than the memory given to the EAL (%.0f MiB free); give it %s%" PRIu64 "%s",
		(double)need / MIB, (uint64_t)fc->n_mn,
		(double)(mn.bytes + mn.mapped_bytes - n_cn * cn.bytes - DTXN_FABRIC_FIXED_BYTES) /
			(double)RTE_MAX(fc->n_mn, 1) / MIB,
		mn.mapped_bytes != 0 ? " mapped outside the EAL heap, not counted" : "",
		n_cn, (double)cn.bytes / MIB, n_workers,
		(double)per_worker / MIB, (double)have / MIB,
		rte_eal_has_hugepages() ? "" : "-m ", m,
		rte_eal_has_hugepages() ? " MiB of hugepages (usertools/dtxn-setup)" : "");
	return APP_EXIT_USAGE;
}
