/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sim fabric driver: registration, the fabric's memory (MN regions, the
 * RNIC units and model of every node) and the dtxn_sim_* calls of
 * dtxn_fabric_sim.h. The run loop that drives the events lives in the
 * application (app/dtxn-app/run_sim.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <sys/mman.h>

#include <rte_common.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_malloc.h>

#include "sim_private.h"

RTE_LOG_REGISTER(dtxn_sim_logtype, dtxn.fabric.sim, NOTICE);

/** Alignment of an MN region: a page, so any 8 B word of it is aligned. */
#define SIM_REGION_ALIGN 4096
/*
 * MN regions (doc/guides/sim.md, "Simulation speed"): from the DPDK heap
 * when the EAL has hugepages (few TLB misses; the pages are there
 * already); otherwise mapped as anonymous process memory, which the kernel
 * backs with zeroed 4 KiB pages as the run first touches them and unmaps
 * at close without writing them. The heap would take them from the EAL's
 * --no-huge memory (shared memory, dearer faults) and rte_free() would
 * zero every page of them, read or not. Transparent huge pages only for
 * the tables (dtxn_sim_regions_large_pages()): the log regions are
 * written sparsely, and 2 MiB pages there made the loop zero all of them
 * (clear_page 5% of the lotus run's loop).
 */
/*
 * At most this many bytes of tables (over every MN) go on 2 MiB pages
 * (dtxn_sim_regions_large_pages()). A fault on an advised range takes a
 * free 2 MiB block, and compacts memory synchronously when there is none:
 * TPC-C with 100 warehouses (some 4 GiB of tables) spent 8.1 s of system
 * CPU against 3.1 s on 4 KiB pages (sim.md, "fifth pass").
 */
#define SIM_TABLES_THP_MAX (UINT64_C(1) << 30)

static bool
sim_regions_mapped(void)
{
	return !rte_eal_has_hugepages();
}

static uint8_t *
sim_region_alloc(struct sim_fabric *sf, uint64_t size, int socket_id)
{
	void *p;

	if (!sf->regions_mapped)
		return rte_zmalloc_socket("sim_mn", size, SIM_REGION_ALIGN, socket_id);
	sf->region_map_len = RTE_ALIGN_CEIL(RTE_MAX(size, UINT64_C(1)), SIM_REGION_ALIGN);
	p = mmap(NULL, sf->region_map_len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static void
sim_region_free(struct sim_fabric *sf, uint8_t *region)
{
	if (region == NULL)
		return;
	if (sf->regions_mapped)
		(void)munmap(region, sf->region_map_len);
	else
		rte_free(region);
}

static const struct dtxn_fabric_ops sim_ops;

static bool
sim_model_is_none(const struct dtxn_nic_model *m)
{
	return m->rtt_ns == 0 && m->rw_ops_per_s == 0 && m->rw_bytes_per_s == 0 &&
	       m->atomic_ops_per_s == 0 && m->dm_atomic_ops_per_s == 0;
}

static void
sim_close(struct dtxn_fabric *f)
{
	struct sim_fabric *sf = SIM_FABRIC(f);
	unsigned i;

	for (i = 0; i < sf->n_qps; i++)
		if (sf->qps[i] != NULL) {
			SIM_LOG(ERR, "fabric %s closed with QPs alive", f->name);
			break;
		}
	if (sf->evq.n > 0)
		SIM_LOG(DEBUG, "fabric %s closed with %u events pending", f->name, sf->evq.n);
	sim_event_fini(sf);
	rte_free(sf->qps);
	rte_free(sf->sqs);
	rte_free(sf->nic);
	for (i = 0; i < DTXN_MAX_NODES; i++)
		sim_region_free(sf, sf->mn[i]);
	rte_free(sf);
}

static struct dtxn_fabric *
sim_open(const struct dtxn_fabric_conf *conf)
{
	struct sim_fabric *sf;
	unsigned i;

	if (conf->mn_region_size > SIZE_MAX) {
		rte_errno = EINVAL;
		return NULL;
	}
	sf = rte_zmalloc_socket("sim_fabric", sizeof(*sf), RTE_CACHE_LINE_SIZE,
				conf->socket_id);
	if (sf == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	sf->n_nodes = conf->n_mn + conf->n_cn;
	sf->regions_mapped = sim_regions_mapped();
	for (i = 0; i < sf->n_nodes; i++) {
		sf->model[i] = conf->nic;
		dtxn_nic_model_prepare(&sf->model[i]);
		sf->modelled[i] = !sim_model_is_none(&conf->nic);
	}
	for (i = 0; i < conf->n_mn; i++) {
		sf->mn[i] = sim_region_alloc(sf, conf->mn_region_size, conf->socket_id);
		if (sf->mn[i] == NULL) {
			SIM_LOG(DEBUG, "MN %u: cannot allocate %" PRIu64 " bytes", i,
				conf->mn_region_size);
			goto nomem;
		}
	}
	sf->nic = rte_zmalloc_socket("sim_nic", sizeof(*sf->nic) * sf->n_nodes,
				     RTE_CACHE_LINE_SIZE, conf->socket_id);
	if (sf->nic == NULL || sim_event_reserve(sf, 1) != 0)
		goto nomem;
	for (i = 0; i < sf->n_nodes; i++) { /* one OS thread reserves every unit */
		sf->nic[i].rw.one_thread = 1;
		sf->nic[i].atomic.one_thread = 1;
		sf->nic[i].dm_atomic.one_thread = 1;
		sf->nic[i].tx.one_thread = 1;
	}
	/* every WR signaled as the protocol asked: each CQE is charged by the
	 * CPU model and counted as an event (dtxn_fabric_selective_signaling()) */
	sf->base.signal_every_wr = true;
	SIM_LOG(INFO, "fabric %s: %u MNs x %" PRIu64 " B, %u CNs, NIC model %s",
		conf->name, conf->n_mn, conf->mn_region_size, conf->n_cn, conf->nic.name);
	return &sf->base;
nomem:
	sim_close(&sf->base);
	rte_errno = ENOMEM;
	return NULL;
}

static void *
sim_mn_base(struct dtxn_fabric *f, uint16_t mn)
{
	return SIM_FABRIC(f)->mn[mn];
}

static const struct dtxn_nic_state *
sim_nic_state(const struct dtxn_fabric *f, uint16_t node)
{
	const struct sim_fabric *sf = (const struct sim_fabric *)f;

	return sf->modelled[node] ? &sf->nic[node] : NULL;
}

bool
dtxn_sim_is(const struct dtxn_fabric *f)
{
	return f != NULL && f->ops == &sim_ops;
}

int
dtxn_sim_regions_large_pages(struct dtxn_fabric *f, uint64_t bytes)
{
	struct sim_fabric *sf = SIM_FABRIC(f);
	uint64_t len;

	if (!dtxn_sim_is(f))
		return -EINVAL;
	if (!sf->regions_mapped)
		return 0;
	len = RTE_MIN(RTE_ALIGN_CEIL(bytes, SIM_REGION_ALIGN), sf->region_map_len);
	if (len * sf->base.conf.n_mn > SIM_TABLES_THP_MAX)
		return 0;
	for (unsigned i = 0; i < DTXN_MAX_NODES && len > 0; i++)
		if (sf->mn[i] != NULL)
			(void)madvise(sf->mn[i], len, MADV_HUGEPAGE);
	return 0;
}

int
dtxn_sim_node_nic_set(struct dtxn_fabric *f, uint16_t node, const struct dtxn_nic_model *m)
{
	struct sim_fabric *sf = SIM_FABRIC(f);

	if (!dtxn_sim_is(f) || m == NULL || node >= sf->n_nodes)
		return -EINVAL;
	sf->model[node] = *m;
	dtxn_nic_model_prepare(&sf->model[node]);
	sf->modelled[node] = !sim_model_is_none(m);
	return 0;
}

const struct dtxn_nic_model *
dtxn_sim_node_nic(const struct dtxn_fabric *f, uint16_t node)
{
	const struct sim_fabric *sf = (const struct sim_fabric *)f;

	if (!dtxn_sim_is(f) || node >= sf->n_nodes)
		return NULL;
	return &sf->model[node];
}

uint64_t
dtxn_sim_next_event_ns(const struct dtxn_fabric *f)
{
	const struct sim_fabric *sf = (const struct sim_fabric *)f;

	if (!dtxn_sim_is(f))
		return UINT64_MAX;
	return dtxn_timeq_top_ns(&sf->evq);
}

uint64_t
dtxn_sim_run_events(struct dtxn_fabric *f, uint64_t now_ns)
{
	if (!dtxn_sim_is(f))
		return 0;
	return sim_run_due(SIM_FABRIC(f), now_ns);
}

uint64_t
dtxn_sim_events(const struct dtxn_fabric *f)
{
	return dtxn_sim_is(f) ? ((const struct sim_fabric *)f)->events : 0;
}

int
dtxn_sim_cq_set_notify(struct dtxn_cq *cq, dtxn_sim_cq_notify_fn fn, void *arg)
{
	if (cq == NULL || !dtxn_sim_is(cq->fabric))
		return -EINVAL;
	SIM_CQ(cq)->notify = fn;
	SIM_CQ(cq)->notify_arg = arg;
	return 0;
}

/* A WRITE landed in memory the CQ's thread polls: wake it as a completion would. */
static void
sim_cq_kick(struct dtxn_cq *cq)
{
	struct sim_cq *scq = SIM_CQ(cq);

	if (scq->notify != NULL)
		scq->notify(cq, scq->notify_arg);
}

int
dtxn_sim_set_fault_drop(struct dtxn_fabric *f, double p, uint64_t seed)
{
	struct sim_fabric *sf = SIM_FABRIC(f);

	if (!dtxn_sim_is(f) || !(p >= 0 && p <= 1))
		return -EINVAL;
	sf->drop_p = p;
	/* a stream of its own: the workload's draws are not moved by it */
	sf->drop_rng = seed ^ UINT64_C(0xd1b54a32d192ed03);
	f->posted_lost = p > 0;
	if (p > 0)
		SIM_LOG(INFO, "fabric %s: a dead node's unstarted chains dropped with p = %g",
			f->name, p);
	return 0;
}

unsigned
dtxn_sim_cq_pending(const struct dtxn_cq *cq)
{
	const struct sim_cq *scq = (const struct sim_cq *)cq;

	if (cq == NULL || !dtxn_sim_is(cq->fabric))
		return 0;
	return dtxn_cqe_ring_count(&scq->core.ring);
}

static const struct dtxn_fabric_ops sim_ops = {
	.name = "sim",
	.open = sim_open,
	.close = sim_close,
	.mn_base = sim_mn_base,
	.cq_kick = sim_cq_kick,
	.nic_state = sim_nic_state,
	.cq_create = sim_cq_create,
	.cq_destroy = sim_cq_destroy,
	.qp_create = sim_qp_create,
	.qp_destroy = sim_qp_destroy,
	.post = sim_qp_post,
	.post_recv = sim_qp_post_recv,
	.poll = sim_cq_poll,
	.regions_mapped = sim_regions_mapped,
	.queues_grow = true,
};

DTXN_FABRIC_REGISTER(sim, &sim_ops);
