/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mlx5 fabric driver: registration, fabric open/close and statistics.
 * open: choose the device (--dev, --port) or fail with one line naming the
 * device state; register the process's DPDK memory; register the region
 * (and device memory) of every MN this process serves; listen on the
 * address of every node it serves. QPs connect on dtxn_qp_create().
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_memzone.h>

#include "dtxn_fabric_mlx5.h"
#include "mlx5_private.h"

RTE_LOG_REGISTER(dtxn_mlx5_logtype, dtxn.fabric.mlx5, NOTICE);

/* The pure encoder's constants are rdma-core's. */
_Static_assert(MLX5_PRM_OPCODE_ATOMIC_MASKED_CS == MLX5_OPCODE_ATOMIC_MASKED_CS, "PRM opcode");
_Static_assert(MLX5_PRM_CTRL_CQ_UPDATE == MLX5_WQE_CTRL_CQ_UPDATE, "PRM fm_ce_se");
_Static_assert(MLX5_PRM_WQEBB_BYTES == MLX5_SEND_WQE_BB, "PRM WQEBB");
_Static_assert(sizeof(struct mlx5_wqe_ctrl_seg) + sizeof(struct mlx5_wqe_raddr_seg) +
	       2 * sizeof(struct mlx5_wqe_atomic_seg) + sizeof(struct mlx5_wqe_data_seg) ==
	       MLX5_MCAS_WQE_BYTES, "masked-CAS WQE size");

static const struct dtxn_fabric_ops mlx5_ops;

static void
mlx5_close(struct dtxn_fabric *f)
{
	struct mlx5_fabric *mf = MLX5_FABRIC(f);
	struct dtxn_mlx5_stats st;
	unsigned i;

	if (dtxn_mlx5_stats_get(f, &st) == 0 && st.mcas_loop != 0) /* counted and reported */
		MLX5_LOG(NOTICE, "%s: %" PRIu64 " masked CAS emulated by a CAS loop (%" PRIu64 " CAS), %" PRIu64 " as raw WQEs",
			 mf->dev.name, st.mcas_loop, st.mcas_loop_cas, st.mcas_raw);
	mlx5_listen_stop(mf);
	for (i = 0; i < DTXN_MAX_NODES; i++)
		if (mf->mn[i].mz != NULL)
			mlx5_mn_region_close(&mf->mn[i]);
	for (i = 0; i < mf->n_ranges; i++)
		ibv_dereg_mr(mf->range_mr[i]);
	mlx5_dev_close(&mf->dev);
	rte_free(mf);
}

static struct dtxn_fabric *
mlx5_open(const struct dtxn_fabric_conf *conf)
{
	const struct dtxn_fabric_rdma_conf *rc = conf->rdma;
	struct mlx5_fabric *mf;
	bool dm_said = false;
	unsigned i;
	int rc_;

	mf = rte_zmalloc("mlx5_fabric", sizeof(*mf), RTE_CACHE_LINE_SIZE);
	if (mf == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	rte_spinlock_init(&mf->lock);
	LIST_INIT(&mf->accepted);
	LIST_INIT(&mf->waiting);
	mf->n_mn = conf->n_mn;
	mf->n_nodes = conf->n_mn + conf->n_cn;
	mf->serve = rc != NULL && rc->serve != 0 ? rc->serve :
		    dtxn_fabric_node_mask(mf->n_nodes);
	for (i = 0; i < mf->n_nodes; i++) {
		rc_ = dtxn_fabric_node_sockaddr(rc != NULL ? rc->node_addr[i] : NULL, (uint16_t)i, "mlx5",
						&mf->addr[i]);
		if (rc_ != 0)
			goto fail;
	}
	rc_ = mlx5_dev_open(&mf->dev, rc);
	if (rc_ != 0)
		goto fail;
	rc_ = mlx5_mem_register(mf);
	if (rc_ != 0)
		goto fail;
	for (i = 0; i < mf->n_mn; i++) {
		if (!(mf->serve >> i & 1))
			continue;
		rc_ = mlx5_mn_region_open(mf, conf, (uint16_t)i);
		if (rc_ != 0)
			goto fail;
		if (mf->mn[i].dm_len == 0 && !dm_said) {
			MLX5_LOG(NOTICE, "%s has no device memory: the timestamp words of each MN live in host memory",
				 mf->dev.name);
			dm_said = true;
		}
	}
	rc_ = mlx5_listen_start(mf);
	if (rc_ != 0)
		goto fail;
	MLX5_LOG(INFO, "fabric %s: %u MNs x %" PRIu64 " B, %u CNs on %s port %u", conf->name,
		 conf->n_mn, conf->mn_region_size, conf->n_cn, mf->dev.name, mf->dev.port);
	return &mf->base;
fail:
	mlx5_close(&mf->base);
	rte_errno = -rc_;
	return NULL;
}

static void *
mlx5_mn_base(struct dtxn_fabric *f, uint16_t mn)
{
	struct mlx5_fabric *mf = MLX5_FABRIC(f);

	return mf->mn[mn].mz == NULL ? NULL : mf->mn[mn].mz->addr;
}

bool
dtxn_mlx5_is(const struct dtxn_fabric *f)
{
	return f != NULL && f->ops == &mlx5_ops;
}

int
dtxn_mlx5_stats_get(const struct dtxn_fabric *f, struct dtxn_mlx5_stats *s)
{
	const struct mlx5_fabric *mf = (const struct mlx5_fabric *)f;

	if (!dtxn_mlx5_is(f) || s == NULL)
		return -EINVAL;
	memset(s, 0, sizeof(*s));
	snprintf(s->dev, sizeof(s->dev), "%s", mf->dev.name);
	s->port = mf->dev.port;
	s->masked_cas_raw = mf->dev.caps.masked_cas;
	s->max_inline = mf->dev.caps.max_inline;
	for (unsigned i = 0; i < mf->n_mn; i++)
		s->dm = s->dm || mf->mn[i].dm_len != 0;
	for (unsigned l = 0; l < MLX5_STATS_SLOTS; l++) {
		const struct mlx5_lcore_stats *c = &mf->stats[l];

		s->doorbells += __atomic_load_n(&c->doorbells, __ATOMIC_RELAXED);
		s->wrs += __atomic_load_n(&c->wrs, __ATOMIC_RELAXED);
		s->inline_wrs += __atomic_load_n(&c->inline_wrs, __ATOMIC_RELAXED);
		s->signaled += __atomic_load_n(&c->signaled, __ATOMIC_RELAXED);
		s->mcas_raw += __atomic_load_n(&c->mcas_raw, __ATOMIC_RELAXED);
		s->mcas_loop += __atomic_load_n(&c->mcas_loop, __ATOMIC_RELAXED);
		s->mcas_loop_cas += __atomic_load_n(&c->mcas_loop_cas, __ATOMIC_RELAXED);
		s->bounced += __atomic_load_n(&c->bounced, __ATOMIC_RELAXED);
	}
	return 0;
}

static const struct dtxn_fabric_ops mlx5_ops = {
	.name = "mlx5",
	.open = mlx5_open,
	.close = mlx5_close,
	.mn_base = mlx5_mn_base,
	.cq_create = mlx5_cq_create,
	.cq_destroy = mlx5_cq_destroy,
	.qp_create = mlx5_qp_create,
	.qp_destroy = mlx5_qp_destroy,
	.post = mlx5_qp_post,
	.post_recv = mlx5_qp_post_recv,
	.poll = mlx5_cq_poll,
};

DTXN_FABRIC_REGISTER(mlx5, &mlx5_ops);
