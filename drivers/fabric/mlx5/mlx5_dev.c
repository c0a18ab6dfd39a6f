/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mlx5 driver: the device (choice, probe, capabilities), registration of
 * the process's DPDK memory (the lkeys of local buffers), and the MN
 * regions with their device memory (doc/guides/mlx5.md, "Memory").
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_memory.h>
#include <rte_memzone.h>

#include "mlx5_private.h"

#define MLX5_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | \
		     IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)

/* NUMA node of the device's PCI function, from sysfs; SOCKET_ID_ANY if unknown. */
static int
dev_socket(const struct ibv_device *dev)
{
	char path[512];
	FILE *fp;
	int node = -1;

	snprintf(path, sizeof(path), "%s/device/numa_node", dev->ibdev_path);
	fp = fopen(path, "r");
	if (fp == NULL)
		return SOCKET_ID_ANY;
	if (fscanf(fp, "%d", &node) != 1 || node < 0)
		node = SOCKET_ID_ANY;
	fclose(fp);
	return node;
}

/* Device capabilities: atomics, device memory, mlx5 direct verbs. */
static void
dev_caps(struct mlx5_dev *d)
{
	struct ibv_device_attr_ex attr;

	memset(&attr, 0, sizeof(attr));
	d->caps.max_inline = DTXN_WR_INLINE_MAX; /* lowered per QP at create */
	d->caps.masked_cas = false;
	d->dm = false;
	if (ibv_query_device_ex(d->ctx, NULL, &attr) != 0)
		return;
	d->dm = attr.max_dm_size >= DTXN_FABRIC_DM_BYTES;
	d->rd_atom = (uint8_t)RTE_MIN(RTE_MIN(attr.orig_attr.max_qp_rd_atom,
					      attr.orig_attr.max_qp_init_rd_atom), 16);
	/* masked atomics: ConnectX-4 and later, through raw WQEs; a QP that
	 * cannot take raw WQEs falls back per QP (mlx5_qp.c) */
	d->caps.masked_cas = mlx5dv_is_supported(d->ctx->device) &&
			     attr.orig_attr.atomic_cap != IBV_ATOMIC_NONE;
}

int
mlx5_dev_open(struct mlx5_dev *d, const struct dtxn_fabric_rdma_conf *rc)
{
	const char *want = rc != NULL && rc->dev != NULL && rc->dev[0] != '\0' ? rc->dev : NULL;
	uint8_t port = rc != NULL && rc->port != 0 ? rc->port : 1;
	struct ibv_device **vl;
	char seen[256] = "";
	int n = 0, i;

	memset(d, 0, sizeof(*d));
	/* ibverbs first: it says why there is no device without librdmacm's noise */
	errno = 0;
	vl = ibv_get_device_list(&n);
	if (vl == NULL || n == 0) {
		dtxn_fabric_open_error_set("--fabric mlx5: no RDMA device (%s); use --fabric shm to run on the emulated NIC",
					   vl == NULL && errno != 0 ?
					   strerror(errno) : "none in /sys/class/infiniband");
		if (vl != NULL)
			ibv_free_device_list(vl);
		return -ENODEV;
	}
	ibv_free_device_list(vl);
	d->list = rdma_get_devices(&n);
	if (d->list == NULL || n == 0) {
		dtxn_fabric_open_error_set("--fabric mlx5: RDMA devices present but rdma_cm is unavailable (%s; load rdma_ucm); use --fabric shm to run on the emulated NIC",
					   strerror(errno ? errno : ENODEV));
		return -ENODEV;
	}
	for (i = 0; i < n; i++) {
		struct ibv_context *ctx = d->list[i];
		const char *name = ibv_get_device_name(ctx->device);
		struct ibv_port_attr pa;
		size_t used = strlen(seen);

		if (want != NULL && strcmp(want, name) != 0)
			continue;
		if (ibv_query_port(ctx, port, &pa) != 0) {
			snprintf(seen + used, sizeof(seen) - used, "%s%s has no port %u", used ? ", " : "",
				 name, port);
			continue;
		}
		if (pa.state != IBV_PORT_ACTIVE) {
			snprintf(seen + used, sizeof(seen) - used, "%s%s port %u is %s", used ? ", " : "",
				 name, port, ibv_port_state_str(pa.state));
			continue;
		}
		d->ctx = ctx;
		snprintf(d->name, sizeof(d->name), "%s", name);
		break;
	}
	if (d->ctx == NULL) {
		if (seen[0] == '\0')
			dtxn_fabric_open_error_set("--dev %s: no such RDMA device; use --fabric shm to run on the emulated NIC",
						   want);
		else
			dtxn_fabric_open_error_set("--fabric mlx5: no usable RDMA port (%s); use --fabric shm to run on the emulated NIC",
						   seen);
		mlx5_dev_close(d);
		return -ENODEV;
	}
	d->port = port;
	d->gid_index = rc != NULL ? rc->gid_index : -1;
	d->socket_id = dev_socket(d->ctx->device);
	d->pd = ibv_alloc_pd(d->ctx);
	if (d->pd == NULL) {
		dtxn_fabric_open_error_set("--fabric mlx5: %s: cannot allocate a protection domain: %s",
					   d->name, strerror(errno));
		mlx5_dev_close(d);
		return -ENODEV;
	}
	dev_caps(d);
	MLX5_LOG(INFO, "%s port %u (NUMA %d): masked CAS %s, device memory %s", d->name, port,
		 d->socket_id, d->caps.masked_cas ? "raw WQE" : "CAS loop",
		 d->dm ? "yes" : "no");
	return 0;
}

void
mlx5_dev_close(struct mlx5_dev *d)
{
	if (d->pd != NULL)
		ibv_dealloc_pd(d->pd);
	if (d->list != NULL)
		rdma_free_devices(d->list);
	memset(d, 0, sizeof(*d));
}

/* One contiguous chunk of DPDK memory: registered once, kept sorted. */
static int
mem_chunk(const struct rte_memseg_list *msl, const struct rte_memseg *ms, size_t len, void *arg)
{
	struct mlx5_fabric *mf = arg;
	uint32_t lkey;
	unsigned i;
	struct ibv_mr *mr;

	(void)msl;
	if (mlx5_lkey_find(mf->ranges, mf->n_ranges, ms->addr, len, &lkey))
		return 0;
	if (mf->n_ranges == MLX5_MAX_RANGES) {
		MLX5_LOG(WARNING, "more than %u DPDK memory chunks: later ones go through bounce buffers",
			 MLX5_MAX_RANGES);
		return 1;
	}
	mr = ibv_reg_mr(mf->dev.pd, ms->addr, len, MLX5_ACCESS);
	if (mr == NULL) {
		MLX5_LOG(WARNING, "cannot register %zu B of DPDK memory at %p: %s", len, ms->addr,
			 strerror(errno));
		return 0;
	}
	for (i = mf->n_ranges; i > 0 && mf->ranges[i - 1].addr > (uintptr_t)ms->addr; i--) {
		mf->ranges[i] = mf->ranges[i - 1];
		mf->range_mr[i] = mf->range_mr[i - 1];
	}
	mf->ranges[i] = (struct mlx5_lkey_range){ (uintptr_t)ms->addr, len, mr->lkey };
	mf->range_mr[i] = mr;
	mf->n_ranges++;
	return 0;
}

int
mlx5_mem_register(struct mlx5_fabric *mf)
{
	return rte_memseg_contig_walk(mem_chunk, mf) < 0 ? -ENOMEM : 0;
}

int
mlx5_mn_region_open(struct mlx5_fabric *mf, const struct dtxn_fabric_conf *conf, uint16_t mn)
{
	struct mlx5_mn *m = &mf->mn[mn];
	char name[RTE_MEMZONE_NAMESIZE];
	uint8_t zero[DTXN_FABRIC_DM_BYTES];
	int socket = mf->dev.socket_id != SOCKET_ID_ANY ? mf->dev.socket_id : conf->socket_id;

	snprintf(name, sizeof(name), "%s_mn%u", conf->name, mn);
	m->mz = rte_memzone_reserve_aligned(name, conf->mn_region_size, socket, 0, 4096);
	if (m->mz == NULL) {
		rte_errno = ENOMEM;
		return -ENOMEM;
	}
	memset(m->mz->addr, 0, conf->mn_region_size);
	m->mr = ibv_reg_mr(mf->dev.pd, m->mz->addr, conf->mn_region_size, MLX5_ACCESS);
	if (m->mr == NULL) {
		dtxn_fabric_open_error_set("--fabric mlx5: MN %u: cannot register %" PRIu64 " B: %s (raise ulimit -l)",
					   mn, conf->mn_region_size, strerror(errno));
		return -ENOMEM;
	}
	/* The timestamp oracle's words (dtxn_fabric.h, DTXN_FABRIC_DM_BYTES) */
	if (mf->dev.dm) {
		struct ibv_alloc_dm_attr da = { .length = DTXN_FABRIC_DM_BYTES };

		m->dm = ibv_alloc_dm(mf->dev.ctx, &da);
		if (m->dm != NULL)
			m->dm_mr = ibv_reg_dm_mr(mf->dev.pd, m->dm, 0, DTXN_FABRIC_DM_BYTES,
						 MLX5_ACCESS | IBV_ACCESS_ZERO_BASED);
		memset(zero, 0, sizeof(zero));
		if (m->dm_mr != NULL && ibv_memcpy_to_dm(m->dm, 0, zero, sizeof(zero)) == 0) {
			m->dm_len = DTXN_FABRIC_DM_BYTES;
			return 0;
		}
		if (m->dm_mr != NULL)
			ibv_dereg_mr(m->dm_mr);
		if (m->dm != NULL)
			ibv_free_dm(m->dm);
		m->dm_mr = NULL;
		m->dm = NULL;
	}
	return 0;
}

void
mlx5_mn_region_close(struct mlx5_mn *m)
{
	if (m->dm_mr != NULL)
		ibv_dereg_mr(m->dm_mr);
	if (m->dm != NULL)
		ibv_free_dm(m->dm);
	if (m->mr != NULL)
		ibv_dereg_mr(m->mr);
	rte_memzone_free(m->mz);
	memset(m, 0, sizeof(*m));
}
