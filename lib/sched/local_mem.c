/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Large process-local tables (issue 30, set-up proportional to what a run
 * touches): without hugepages the EAL's --no-huge heap is shared memory
 * (dearer first-touch faults) and rte_free() writes zeros over every byte
 * it frees, touched or not; anonymous pages are backed as the run first
 * touches them and unmapped without a write. With hugepages the heap's
 * pages are the better ones (no faults, fewer TLB misses): the heap.
 * In real time a table of 2 MiB or more asks for transparent huge pages
 * (a run's few hot tables: the TLB misses of 4 KiB pages cost more than
 * backing 2 MiB at a time); the simulation's many workers keep 4 KiB
 * pages, backed only as touched.
 */
#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

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

/* Transparent huge pages for a table at least this large, in real time */
#define LOCAL_THP_BYTES ((size_t)2 << 20)

/*
 * Maps @p size bytes on a LOCAL_THP_BYTES boundary and asks for transparent
 * huge pages: an address cache of 32 MiB is 8192 4 KiB pages, more than
 * the CPU's TLB holds, so each lookup's line cost a page walk too (its
 * prefetch waited for it: dtxn_addr_cache_prefetch() 5.4% of the main
 * job's samples with --no-huge, 2.4% with huge pages; issue 30 part 2).
 * @return the mapping, or MAP_FAILED.
 */
static void *
local_map_huge(size_t size)
{
	const size_t len = RTE_ALIGN_CEIL(size, (size_t)getpagesize());
	uint8_t *raw, *p;
	size_t head;

	raw = mmap(NULL, len + LOCAL_THP_BYTES, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (raw == MAP_FAILED)
		return MAP_FAILED;
	p = RTE_PTR_ALIGN_CEIL(raw, LOCAL_THP_BYTES);
	head = (size_t)(p - raw);
	if (head != 0)
		(void)munmap(raw, head);
	(void)munmap(p + len, LOCAL_THP_BYTES - head);
	/* advice only: a kernel without THP (or with it off) keeps 4 KiB pages */
	(void)madvise(p, len, MADV_HUGEPAGE);
	return p;
}

void *
dtxn_local_zalloc(const char *name, size_t size, int socket_id)
{
	void *p;

	if (size == 0)
		return NULL;
	if (!dtxn_local_mapped())
		return rte_zmalloc_socket(name, size, RTE_CACHE_LINE_SIZE, socket_id);
	if (size >= LOCAL_THP_BYTES && !g_dtxn_clock.virtual_time)
		p = local_map_huge(size);
	else
		p = mmap(NULL, size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
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
