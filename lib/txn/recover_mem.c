/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A recovery's scratch memory (dtxn_recovery_alloc()): from the C library
 * where DPDK's heap is shared by the processes of the cluster, whose lock
 * a dead process could leave held; from rte_malloc() elsewhere.
 */
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_malloc.h>

#include "txn_private.h"

/* Whether @p c's recoveries stay off the DPDK heap. */
static bool
recovery_off_heap(const struct dtxn_coord *c)
{
	return dtxn_fabric_heap_shared(c->worker->db->fabric);
}

void *
dtxn_recovery_alloc(const struct dtxn_coord *c, size_t size, bool zero)
{
	void *p;

	if (size == 0)
		return NULL;
	if (!recovery_off_heap(c))
		return zero ? rte_zmalloc("dtxn_recover", size, 64) : rte_malloc("dtxn_recover", size, 64);
	p = aligned_alloc(64, RTE_ALIGN_CEIL(size, 64));
	if (p != NULL && zero)
		memset(p, 0, size);
	return p;
}

void *
dtxn_recovery_realloc(const struct dtxn_coord *c, void *p, size_t size)
{
	if (!recovery_off_heap(c))
		return rte_realloc(p, size, 8);
	return realloc(p, size);
}

void
dtxn_recovery_free(const struct dtxn_coord *c, void *p)
{
	if (p == NULL)
		return;
	if (recovery_off_heap(c))
		free(p);
	else
		rte_free(p);
}
