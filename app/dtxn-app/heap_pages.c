/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The simulation's DPDK heap on 2 MiB pages when the EAL has no hugepages
 * (issue 30, doc/guides/sim.md "fifth pass"). Under --no-huge, DPDK 22.11
 * backs its whole heap with one shared memfd mapping ("/memfd:nohuge"):
 * 4 KiB shared-memory pages, which transparent huge pages never back
 * (shmem_enabled is "never" on common hosts, this VM's included). The
 * simulation's per-coordinator state lives there (QPs and their send
 * queues, CQ rings, coroutine stacks, schedulers, RPC buffers): one event
 * after another touches a different coordinator's, and nearly every such
 * touch missed the TLB (a 2048-entry TLB covers 8 MiB of 4 KiB pages).
 *
 * The embedded real-time run (--role all) is the same case (issue 30
 * part 2): its coordinators' QPs, send queues, CQ rings, stacks and
 * batches, and the MN regions the emulated NIC reads, live in that heap
 * (run.c).
 *
 * A simulation is one process (no secondary maps the memfd), so the
 * range is remapped in place as private anonymous memory
 * (app_heap_private()): the pages the heap has touched so far (found with
 * mincore()) are copied out and back, the rest reads as zeros, as before.
 * Addresses, contents and the heap's own bookkeeping are unchanged. Once
 * the run's size is known, the range is advised for transparent huge
 * pages (app_heap_large_pages()), unless the heap may grow past
 * APP_HEAP_THP_MAX: a fault on an advised range takes a free 2 MiB block
 * and compacts memory synchronously when there is none, and Lotus at 90
 * nodes (a 3 GiB heap estimate) lost more to that than it gained.
 * Nothing a run computes depends on the page size.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_eal.h>
#include <rte_memory.h>

#include "app.h"

/** Largest heap estimate (app_memory_estimate()) that gets 2 MiB pages. */
#define APP_HEAP_THP_MAX (UINT64_C(2) << 30)

/* the range app_heap_private() remapped (one memseg list under --no-huge) */
static void *heap_base;
static size_t heap_len;

/* Remaps one memseg list's VA range; 0 or -errno (the range untouched). */
static int
heap_remap(void *base, size_t len)
{
	const size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	size_t n = len / pg, saved = 0, k = 0;
	unsigned char *vec = malloc(n);
	uint8_t *copy = NULL;
	void *p;
	int rc = 0;

	if (vec == NULL)
		return -ENOMEM;
	if (mincore(base, len, vec) != 0) {
		rc = -errno;
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		saved += vec[i] & 1;
	copy = malloc(RTE_MAX(saved, (size_t)1) * pg);
	if (copy == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		if (vec[i] & 1)
			memcpy(copy + pg * k++, (uint8_t *)base + pg * i, pg);
	p = mmap(base, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
	if (p != base) {
		/* MAP_FIXED failed: the old mapping is still there */
		rc = -errno;
		goto out;
	}
	heap_base = base;
	heap_len = len;
	for (size_t i = 0, j = 0; i < n; i++)
		if (vec[i] & 1)
			memcpy((uint8_t *)base + pg * i, copy + pg * j++, pg);
out:
	free(copy);
	free(vec);
	return rc;
}

static int
heap_msl(const struct rte_memseg_list *msl, void *arg)
{
	int *rc = arg;

	if (msl->external || msl->base_va == NULL || msl->len == 0)
		return 0;
	*rc = heap_remap(msl->base_va, msl->len);
	return *rc != 0;
}

void
app_heap_large_pages(uint64_t need_bytes)
{
	if (heap_base != NULL && need_bytes <= APP_HEAP_THP_MAX)
		(void)madvise(heap_base, heap_len, MADV_HUGEPAGE);
}

int
app_heap_private(void)
{
	int rc = 0;

	if (rte_eal_has_hugepages() || rte_eal_process_type() != RTE_PROC_PRIMARY)
		return 0;
	(void)rte_memseg_list_walk(heap_msl, &rc);
	return rc;
}
