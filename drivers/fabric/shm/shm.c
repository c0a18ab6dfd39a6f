/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * shm fabric driver: registration and the fabric's memory. Each MN region
 * is a zeroed memzone "<name>_mn<i>", the RNIC units of every node live in
 * the memzone "<name>_nic", so another process of the cluster could find
 * them by name (multi-process mode; only single-process is exercised now).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_memzone.h>
#include <rte_mempool.h>

#include "shm_private.h"

RTE_LOG_REGISTER(dtxn_shm_logtype, dtxn.fabric.shm, NOTICE);

/** Alignment of an MN region: a page, so any 8 B word of it is aligned. */
#define SHM_REGION_ALIGN 4096

static bool
shm_model_is_none(const struct dtxn_nic_model *m)
{
	return m->rtt_ns == 0 && m->rw_ops_per_s == 0 && m->rw_bytes_per_s == 0 &&
	       m->atomic_ops_per_s == 0 && m->dm_atomic_ops_per_s == 0;
}

static const struct rte_memzone *
shm_zone_reserve(const char *fname, const char *what, size_t len, int socket_id)
{
	char name[RTE_MEMZONE_NAMESIZE];
	const struct rte_memzone *mz;

	if ((size_t)snprintf(name, sizeof(name), "%s_%s", fname, what) >= sizeof(name)) {
		rte_errno = EINVAL;
		return NULL;
	}
	mz = rte_memzone_reserve_aligned(name, len, socket_id, 0, SHM_REGION_ALIGN);
	if (mz == NULL) {
		SHM_LOG(DEBUG, "memzone %s: cannot reserve %zu bytes: %s", name, len,
			rte_strerror(rte_errno));
		if (rte_errno != EEXIST)
			rte_errno = ENOMEM;
		return NULL;
	}
	memset(mz->addr, 0, len);
	return mz;
}

static void
shm_close(struct dtxn_fabric *f)
{
	struct shm_fabric *sf = SHM_FABRIC(f);
	unsigned i;

	if (!TAILQ_EMPTY(&sf->qps))
		SHM_LOG(ERR, "fabric %s closed with QPs alive", f->name);
	rte_mempool_free(sf->msg_pool);
	rte_memzone_free(sf->nic_mz);
	for (i = 0; i < DTXN_MAX_NODES; i++)
		rte_memzone_free(sf->mn_mz[i]);
	rte_free(sf);
}

static struct dtxn_fabric *
shm_open(const struct dtxn_fabric_conf *conf)
{
	char name[RTE_MEMPOOL_NAMESIZE];
	struct shm_fabric *sf;
	unsigned i;
	int err;

	if (conf->mn_region_size > SIZE_MAX) {
		rte_errno = EINVAL;
		return NULL;
	}
	sf = rte_zmalloc_socket("shm_fabric", sizeof(*sf), RTE_CACHE_LINE_SIZE,
				conf->socket_id);
	if (sf == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	rte_spinlock_init(&sf->lock);
	TAILQ_INIT(&sf->qps);
	sf->n_nodes = conf->n_mn + conf->n_cn;
	sf->modelled = !shm_model_is_none(&conf->nic);
	for (i = 0; i < conf->n_mn; i++) {
		char what[16];

		snprintf(what, sizeof(what), "mn%u", i);
		sf->mn_mz[i] = shm_zone_reserve(conf->name, what, conf->mn_region_size,
						conf->socket_id);
		if (sf->mn_mz[i] == NULL)
			goto fail;
	}
	sf->nic_mz = shm_zone_reserve(conf->name, "nic",
				      sizeof(struct dtxn_nic_state) * sf->n_nodes,
				      conf->socket_id);
	if (sf->nic_mz == NULL)
		goto fail;
	sf->nic = sf->nic_mz->addr;
	snprintf(name, sizeof(name), "%s_msg", conf->name);
	sf->msg_pool = rte_mempool_create(name, SHM_MSG_POOL_SIZE,
					  sizeof(struct shm_msg) + SHM_MSG_POOL_DATA, 64, 0,
					  NULL, NULL, NULL, NULL, conf->socket_id, 0);
	if (sf->msg_pool == NULL) {
		SHM_LOG(DEBUG, "mempool %s: %s", name, rte_strerror(rte_errno));
		if (rte_errno != EEXIST)
			rte_errno = ENOMEM;
		goto fail;
	}
	SHM_LOG(INFO, "fabric %s: %u MNs x %" PRIu64 " B, %u CNs, NIC model %s",
		conf->name, conf->n_mn, conf->mn_region_size, conf->n_cn,
		sf->modelled ? conf->nic.name : "none");
	return &sf->base;
fail:
	err = rte_errno;
	shm_close(&sf->base);
	rte_errno = err;
	return NULL;
}

static void *
shm_mn_base(struct dtxn_fabric *f, uint16_t mn)
{
	struct shm_fabric *sf = SHM_FABRIC(f);

	return sf->mn_mz[mn] == NULL ? NULL : sf->mn_mz[mn]->addr;
}

static const struct dtxn_nic_state *
shm_nic_state(const struct dtxn_fabric *f, uint16_t node)
{
	const struct shm_fabric *sf = (const struct shm_fabric *)f;

	return sf->modelled ? &sf->nic[node] : NULL;
}

static const struct dtxn_fabric_ops shm_ops = {
	.name = "shm",
	.open = shm_open,
	.close = shm_close,
	.mn_base = shm_mn_base,
	.nic_state = shm_nic_state,
	.cq_create = shm_cq_create,
	.cq_destroy = shm_cq_destroy,
	.qp_create = shm_qp_create,
	.qp_destroy = shm_qp_destroy,
	.post = shm_qp_post,
	.post_recv = shm_qp_post_recv,
	.poll = shm_cq_poll,
};

DTXN_FABRIC_REGISTER(shm, &shm_ops);
