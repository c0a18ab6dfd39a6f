/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A zone shared by the processes of one cluster (same --file-prefix):
 * the first process reserves and zeroes it, the others look it up.
 */
#include <errno.h>
#include <string.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_memzone.h>

#include "dtxn_fabric.h"

void *
dtxn_fabric_shared_zone(const char *name, size_t len, int socket_id, bool *first)
{
	const struct rte_memzone *mz;

	mz = rte_memzone_reserve_aligned(name, len, socket_id, 0, RTE_CACHE_LINE_SIZE);
	if (mz != NULL) {
		memset(mz->addr, 0, len);
		if (first != NULL)
			*first = true;
		return mz->addr;
	}
	if (rte_errno != EEXIST)
		return NULL;
	mz = rte_memzone_lookup(name);
	if (mz == NULL || mz->len < len) {
		rte_errno = EEXIST;
		return NULL;
	}
	if (first != NULL)
		*first = false;
	return mz->addr;
}
