/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Large process-local tables (issue 30, set-up proportional to what a run
 * touches): without hugepages the EAL's --no-huge heap is shared memory
 * (dearer first-touch faults) and rte_free() writes zeros over every byte
 * it frees, touched or not; anonymous pages are backed as the run first
 * touches them and unmapped without a write. With hugepages the heap's
 * pages are the better ones (no faults, fewer TLB misses): the heap.
 */
#include <errno.h>
#include <sys/mman.h>

#include <rte_common.h>
#include <rte_eal.h>
#include <rte_malloc.h>

#include "dtxn_sched.h"

/* bytes mapped by dtxn_local_zalloc() and not yet freed */
static uint64_t local_bytes;

uint64_t
dtxn_local_bytes(void)
{
	return __atomic_load_n(&local_bytes, __ATOMIC_RELAXED);
}

bool
dtxn_local_mapped(void)
{
	return !rte_eal_has_hugepages();
}

void *
dtxn_local_zalloc(const char *name, size_t size, int socket_id)
{
	void *p;

	if (size == 0)
		return NULL;
	if (!dtxn_local_mapped())
		return rte_zmalloc_socket(name, size, RTE_CACHE_LINE_SIZE, socket_id);
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		 -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	__atomic_fetch_add(&local_bytes, size, __ATOMIC_RELAXED);
	return p;
}

void
dtxn_local_free(void *p, size_t size)
{
	if (p == NULL)
		return;
	if (dtxn_local_mapped()) {
		(void)munmap(p, size);
		__atomic_fetch_sub(&local_bytes, size, __ATOMIC_RELAXED);
	} else
		rte_free(p);
}
