/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * shm fabric driver: registration and the fabric's memory. Each MN region
 * is a zeroed memzone "<name>_mn<i>", the RNIC units of every node live in
 * the memzone "<name>_nic", the SEND/RECV pairing directory in
 * "<name>_qpdir" and message buffers in the mempool "<name>_msg". In
 * multi-process mode (conf->multi_process: DPDK primary + secondaries
 * sharing one --file-prefix, doc/guides/cluster.md) a process reserves
 * the regions of the MNs it serves and looks the others up by name; the
 * shared objects are reserved by the first process that needs them and
 * looked up by the others (memzones map at the same address in every
 * process, so the pointers they hold are valid everywhere).
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

static int
shm_zone_name(char *name, const char *fname, const char *what)
{
	if ((size_t)snprintf(name, RTE_MEMZONE_NAMESIZE, "%s_%s", fname, what) >=
	    RTE_MEMZONE_NAMESIZE) {
		rte_errno = EINVAL;
		return -1;
	}
	return 0;
}

/* Reserves and zeroes "<fname>_<what>"; NULL with rte_errno EEXIST or ENOMEM. */
static const struct rte_memzone *
shm_zone_reserve(const char *fname, const char *what, size_t len, int socket_id)
{
	char name[RTE_MEMZONE_NAMESIZE];
	const struct rte_memzone *mz;

	if (shm_zone_name(name, fname, what) != 0)
		return NULL;
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

/* Multi-process: the memzone another process reserved; NULL with rte_errno
 * EAGAIN if there is none yet, EINVAL if it is smaller than @p len. */
static const struct rte_memzone *
shm_zone_lookup(const char *fname, const char *what, size_t len)
{
	char name[RTE_MEMZONE_NAMESIZE];
	const struct rte_memzone *mz;

	if (shm_zone_name(name, fname, what) != 0)
		return NULL;
	mz = rte_memzone_lookup(name);
	if (mz == NULL) {
		rte_errno = EAGAIN;
		return NULL;
	}
	if (mz->len < len) {
		SHM_LOG(ERR, "memzone %s: %zu bytes, this process expects %zu", name, mz->len, len);
		rte_errno = EINVAL;
		return NULL;
	}
	return mz;
}

/* A zone every process of the cluster shares: the first one reserves it. */
static const struct rte_memzone *
shm_zone_shared(const struct dtxn_fabric_conf *conf, const char *what, size_t len)
{
	const struct rte_memzone *mz;

	if (!conf->multi_process)
		return shm_zone_reserve(conf->name, what, len, conf->socket_id);
	mz = shm_zone_lookup(conf->name, what, len);
	if (mz != NULL || rte_errno != EAGAIN)
		return mz;
	mz = shm_zone_reserve(conf->name, what, len, conf->socket_id);
	if (mz == NULL && rte_errno == EEXIST) /* lost the race */
		mz = shm_zone_lookup(conf->name, what, len);
	return mz;
}

/*
 * The multi-process message pool: DPDK's lock-free stack ("lf_stack"),
 * not its default ring. Every CN process of a cluster gets and puts its
 * buffers, and a ring's producers and consumers each wait for the one
 * before them to publish: a process SIGKILLed inside a get or a put left
 * the ring's tail behind for good, and every other process spun in its
 * next SEND (tcl-cluster hung in a Lotus kill row, the survivor's worker
 * in librte_mempool_ring). A lock-free stack's push and pop are one CAS
 * each: a process killed inside one leaks at most its buffers. Falls back
 * to the ring if the stack driver is not loaded (one log line).
 */
static struct rte_mempool *
shm_msg_pool_lf(const char *name, int socket_id)
{
	struct rte_mempool *mp;

	mp = rte_mempool_create_empty(name, SHM_MSG_POOL_SIZE,
				      sizeof(struct shm_msg) + SHM_MSG_POOL_DATA, 0, 0, socket_id, 0);
	if (mp == NULL)
		return NULL;
	if (rte_mempool_set_ops_byname(mp, "lf_stack", NULL) != 0) {
		SHM_LOG(WARNING, "mempool %s: no lf_stack driver, a ring (not robust to a process killed inside it)",
			name);
		if (rte_mempool_set_ops_byname(mp, "ring_mp_mc", NULL) != 0) {
			rte_mempool_free(mp);
			return NULL;
		}
	}
	if (rte_mempool_populate_default(mp) < 0) {
		rte_mempool_free(mp);
		return NULL;
	}
	return mp;
}

/* The message pool (SENDs): shared in multi-process mode, without per-lcore
 * caches there (lcore ids repeat between processes). */
static struct rte_mempool *
shm_msg_pool(const struct dtxn_fabric_conf *conf)
{
	char name[RTE_MEMPOOL_NAMESIZE];
	struct rte_mempool *mp;

	snprintf(name, sizeof(name), "%s_msg", conf->name);
	if (conf->multi_process) {
		mp = rte_mempool_lookup(name);
		if (mp != NULL)
			return mp;
	}
	if (conf->multi_process)
		mp = shm_msg_pool_lf(name, conf->socket_id);
	else
		mp = rte_mempool_create(name, SHM_MSG_POOL_SIZE,
					sizeof(struct shm_msg) + SHM_MSG_POOL_DATA, 64, 0, NULL, NULL,
					NULL, NULL, conf->socket_id, 0);
	if (mp == NULL && conf->multi_process && rte_errno == EEXIST)
		mp = rte_mempool_lookup(name);
	if (mp == NULL) {
		SHM_LOG(DEBUG, "mempool %s: %s", name, rte_strerror(rte_errno));
		if (rte_errno != EEXIST)
			rte_errno = ENOMEM;
	}
	return mp;
}

static void
shm_close(struct dtxn_fabric *f)
{
	struct shm_fabric *sf = SHM_FABRIC(f);
	unsigned i;

	if (!TAILQ_EMPTY(&sf->qps))
		SHM_LOG(ERR, "fabric %s closed with QPs alive", f->name);
	if (!sf->multi_process) { /* shared ones outlive this process's fabric */
		rte_mempool_free(sf->msg_pool);
		rte_memzone_free(sf->nic_mz);
		rte_memzone_free(sf->qpdir_mz);
	}
	for (i = 0; i < DTXN_MAX_NODES; i++)
		if (sf->mn_owned[i])
			rte_memzone_free(sf->mn_mz[i]);
	rte_free(sf);
}

/* MN i's region: reserved (embedded, or mn_own), looked up (mn_attach), or none. */
static int
shm_region_open(struct shm_fabric *sf, const struct dtxn_fabric_conf *conf, unsigned i)
{
	bool own = !conf->multi_process || (conf->mn_own >> i & 1);
	char what[16];

	snprintf(what, sizeof(what), "mn%u", i);
	if (own) {
		sf->mn_mz[i] = shm_zone_reserve(conf->name, what, conf->mn_region_size,
						conf->socket_id);
		sf->mn_owned[i] = sf->mn_mz[i] != NULL;
	} else if (conf->mn_attach >> i & 1) {
		sf->mn_mz[i] = shm_zone_lookup(conf->name, what, conf->mn_region_size);
	} else {
		return 0;
	}
	return sf->mn_mz[i] == NULL ? -1 : 0;
}

static struct dtxn_fabric *
shm_open(const struct dtxn_fabric_conf *conf)
{
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
	sf->n_mn = conf->n_mn;
	sf->multi_process = conf->multi_process != 0;
	sf->base.heap_shared = sf->multi_process; /* DPDK multi-process: one heap (dtxn_fabric_heap_shared()) */
	sf->modelled = !shm_model_is_none(&conf->nic);
	for (i = 0; i < conf->n_mn; i++)
		if (shm_region_open(sf, conf, i) != 0)
			goto fail;
	sf->nic_mz = shm_zone_shared(conf, "nic", sizeof(struct dtxn_nic_state) * sf->n_nodes);
	if (sf->nic_mz == NULL)
		goto fail;
	sf->nic = sf->nic_mz->addr;
	sf->qpdir_mz = shm_zone_shared(conf, "qpdir", sizeof(struct shm_qpdir));
	if (sf->qpdir_mz == NULL)
		goto fail;
	sf->qpdir = sf->qpdir_mz->addr;
	sf->msg_pool = shm_msg_pool(conf);
	if (sf->msg_pool == NULL)
		goto fail;
	SHM_LOG(INFO, "fabric %s: %u MNs x %" PRIu64 " B, %u CNs, NIC model %s%s",
		conf->name, conf->n_mn, conf->mn_region_size, conf->n_cn,
		sf->modelled ? conf->nic.name : "none",
		sf->multi_process ? ", multi-process" : "");
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
	.drain_node = shm_drain_node,
};

DTXN_FABRIC_REGISTER(shm, &shm_ops);
