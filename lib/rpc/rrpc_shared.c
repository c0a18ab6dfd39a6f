/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RRPC across processes (--role cn / --role mn on a multi-process shm
 * fabric; doc/guides/rpc.md, "RRPC to the MNs"): a CN's message memory
 * (its workers' reply rings) is a memzone "<fabric name>_rr<cn>" that the
 * CN process reserves when its first rrpc is created and an MN process
 * looks up and registers (dtxn_fabric_cn_mr_reg()) when it first serves
 * that CN. Memzones map at one address in every process of a DPDK
 * file-prefix, as shm's MN regions do. The memzone outlives the CN
 * process: an MN may still WRITE a credit into it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_memzone.h>

#include "rrpc_peer.h"

static void
rrpc_mz_name(struct dtxn_fabric *f, uint16_t cn, char *buf, size_t len)
{
	const char *prefix = dtxn_fabric_conf(f)->name;

	snprintf(buf, len, "%s_rr%u", prefix != NULL ? prefix : "dtxn", cn);
}

int
rrpc_shared_own(struct dtxn_rrpc_domain *d, uint16_t cn, int socket_id)
{
	char name[RTE_MEMZONE_NAMESIZE];
	uint8_t *mem;

	if (__atomic_load_n(&d->mem[cn], __ATOMIC_ACQUIRE) != NULL)
		return 0;
	rrpc_mz_name(d->f, cn, name, sizeof(name));
	/* another worker of this CN may have reserved it: then it is found */
	mem = dtxn_fabric_shared_zone(name, d->region_bytes, socket_id, NULL);
	if (mem == NULL)
		return -rte_errno;
	__atomic_store_n(&d->mem[cn], mem, __ATOMIC_RELEASE);
	return 0;
}

int
rrpc_shared_attach(struct dtxn_fabric *f, uint16_t cn, uint64_t bytes)
{
	char name[RTE_MEMZONE_NAMESIZE];
	const struct rte_memzone *mz;

	rrpc_mz_name(f, cn, name, sizeof(name));
	mz = rte_memzone_lookup(name);
	if (mz == NULL)
		return -ENOENT;
	if (mz->len < bytes)
		return -EINVAL;
	return dtxn_fabric_cn_mr_reg(f, cn, mz->addr, bytes, NULL, NULL);
}
