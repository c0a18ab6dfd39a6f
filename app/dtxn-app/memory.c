/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Resources sized before the run (issue 11, part 2): once the tables are
 * laid out, and before anything large is allocated, the footprints of the
 * fabric (MN regions) and of every worker (scheduler and stacks, queues,
 * address cache, coordinators) are added up and compared with the memory
 * the EAL can still give and with RTE_MAX_MEMZONE; a shortfall is one line
 * naming what needs how much and the -m that would do. MN regions a driver
 * maps outside the heap (sim without hugepages: fp.mapped_bytes) are not
 * compared with it: the kernel backs them as the run touches them. The
 * same footprints, for the whole cluster, size the DPDK heap that mn0
 * reserves on shm before any other process attaches (app_heap_reserve()).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <rte_eal.h>
#include <rte_lcore.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_memory.h>
#include <rte_memzone.h>

#include "dtxn_fabric.h"
#include "dtxn_sched.h"
#include "dtxn_stats.h"
#include "dtxn_txn.h"
#include "app.h"

#define MIB (1024.0 * 1024.0)

/* app_heap_reserve(): what the processes of a cluster take from the heap
 * beyond the footprints, bytes. Measured on 2026-11-29 (heap allocated
 * at the end of 1 s runs of 1 MN + 2 CNs, 3 + 2 and 3 + 3, SmallBank,
 * TATP, KVS, TPC-C under FORD and Lotus, against the footprints): 53 MiB
 * more per CN of one worker, whatever the benchmark (its scratch arenas'
 * reserve and first chunks, 40 MiB, which dtxn_worker_footprint() counts
 * only once a fabric is attached, and the process's own state), about
 * 8 MiB more per MN process. */
#define APP_HEAP_PER_CN_WORKER (UINT64_C(64) << 20)
#define APP_HEAP_PER_PROCESS (UINT64_C(8) << 20)

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

/* What a run needs, bytes (@p need) and memzones: the fabric's footprint
 * (every MN region), --cn CNs' protocol state and @p n_workers workers;
 * @p mn, @p w, @p cn, @p per_worker: its parts. @return 0, or -1 (a
 * footprint that cannot be computed). */
static int
memory_need(const struct app_conf *c, const struct dtxn_db *db, const struct dtxn_fabric_conf *fc,
	    unsigned n_workers, struct dtxn_footprint *mn, struct dtxn_footprint *w,
	    struct dtxn_footprint *cn, uint64_t *per_worker, uint64_t *need)
{
	unsigned n_cn = (unsigned)RTE_MAX(c->cn, UINT64_C(1));

	dtxn_fabric_footprint(fc, mn);
	if (dtxn_worker_footprint(db, (unsigned)c->coroutines, w) != 0)
		return -1;
	/* --addr-prewarm: the workers' shared address cache, once per process */
	if (dtxn_db_addr_base_footprint(db, mn) != 0)
		return -1;
	/* the protocol's state per CN and per worker (Lotus: lock tables, VT caches, RPC) */
	int rc = dtxn_cc_footprint(db, n_cn, (unsigned)c->coroutines, cn, w);

	if (rc != 0 && rc != -ENOTSUP)
		return -1;
	/* a driver that grows its queues as used (sim) reserves no memzone
	 * per QP and allocates them small first: counted so, Lotus passes at
	 * 44 nodes and beyond (doc/guides/sim.md "Scale") */
	if (dtxn_fabric_queues_grow(fc->driver)) {
		struct dtxn_footprint *fps[] = { mn, w, cn };

		for (size_t i = 0; i < RTE_DIM(fps); i++) {
			fps[i]->memzones -= fps[i]->qp_memzones;
			fps[i]->bytes -= fps[i]->queue_bytes;
			fps[i]->bytes += fps[i]->queue_init_bytes;
		}
	}
	mn->bytes += (uint64_t)n_cn * cn->bytes;
	mn->memzones += n_cn * cn->memzones;
	/* the app's own share per worker: statistics and benchmark contexts */
	*per_worker = w->bytes + sizeof(struct dtxn_run_stats) + c->coroutines * 256 +
		      2 * DTXN_FOOTPRINT_ALLOC_SLACK;
	*need = mn->bytes + (uint64_t)n_workers * *per_worker;
	return 0;
}

int
app_memory_estimate(const struct app_conf *c, const struct dtxn_db *db,
		    const struct dtxn_fabric_conf *fc, unsigned n_workers, uint64_t *need)
{
	struct dtxn_footprint mn = { 0 }, w = { 0 }, cn = { 0 };
	uint64_t per_worker;

	return memory_need(c, db, fc, n_workers, &mn, &w, &cn, &per_worker, need) != 0 ? -1 : 0;
}

int
app_memory_check(const struct app_conf *c, const struct dtxn_db *db,
		 const struct dtxn_fabric_conf *fc, unsigned n_workers)
{
	struct dtxn_footprint mn = { 0 }, w = { 0 }, cn = { 0 };
	struct rte_malloc_socket_stats st;
	uint64_t need, have, per_worker;
	unsigned zones = 0;
	int socket = (int)rte_socket_id();
	unsigned n_cn = (unsigned)RTE_MAX(c->cn, UINT64_C(1));

	if (memory_need(c, db, fc, n_workers, &mn, &w, &cn, &per_worker, &need) != 0)
		return APP_EXIT_FAIL;
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

/* rte_memseg_walk(): the page stays mapped when the heap frees its last
 * element (DPDK's flag for the pages of EAL -m / --socket-mem) */
static int
reserve_keep(const struct rte_memseg_list *msl, const struct rte_memseg *ms, void *arg)
{
	RTE_SET_USED(msl);
	RTE_SET_USED(arg);
	((struct rte_memseg *)(uintptr_t)ms)->flags |= RTE_MEMSEG_FLAG_DO_NOT_FREE;
	return 0;
}

int
app_heap_reserve(const struct app_conf *c, const struct dtxn_db *db,
		 const struct dtxn_fabric_conf *fc)
{
	struct dtxn_footprint mn = { 0 }, w = { 0 }, cn = { 0 };
	struct rte_malloc_socket_stats st;
	uint64_t need, per_worker, n_proc = c->mn + c->cn;
	int socket = (int)rte_socket_id();

	/* every MN's region, not only this process's own */
	struct dtxn_fabric_conf all = *fc;

	all.multi_process = 0;
	if (rte_eal_process_type() != RTE_PROC_PRIMARY || !rte_eal_has_hugepages())
		return 0;
	if (memory_need(c, db, &all, (unsigned)(c->cn * c->threads), &mn, &w, &cn, &per_worker,
			&need) != 0)
		return -1;
	need += c->cn * c->threads * APP_HEAP_PER_CN_WORKER + n_proc * APP_HEAP_PER_PROCESS;
	if (rte_malloc_get_socket_stats(socket, &st) != 0)
		return -1;
	/* the heap now holds this process's own region and state, counted in need */
	uint64_t grow = st.heap_totalsz_bytes < need ? need - st.heap_totalsz_bytes : 0;
	void *p = grow != 0 ? rte_malloc_socket("dtxn_heap_reserve", grow, 0, socket) : NULL;

	if (grow != 0 && p == NULL) {
		printf("dtxn: %s: cannot reserve %.1f MiB of DPDK heap for the cluster up front (%s): its processes will grow the heap as they start\n",
		       c->node, (double)grow / MIB, rte_strerror(rte_errno));
		fflush(stdout);
		return -1;
	}
	rte_memseg_walk(reserve_keep, NULL);
	rte_free(p);
	rte_malloc_get_socket_stats(socket, &st);
	printf("dtxn: %s: DPDK heap reserved for the cluster: %.1f MiB (%" PRIu64 " MNs, %" PRIu64
	       " CNs x %" PRIu64 " workers), kept mapped\n",
	       c->node, (double)st.heap_totalsz_bytes / MIB, c->mn, c->cn, c->threads);
	fflush(stdout);
	return 0;
}
