/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --role cn --node cnJ: the steps a CN process takes around the run
 * (run.c runs its workers as in the embedded run):
 * 1. the database's catalog, the claim of cnJ in the control block (the
 *    run description must match the cluster's), waiting for every MN to
 *    be READY (--connect-timeout, then exit 3), attaching to every MN
 *    region (no load: that is the MNs' job);
 * 2. after its workers exist: READY, and wait for every peer CN (their
 *    SEND/RECV QPs pair when both exist), so the CNs start together;
 * 3. after the run: its share of the invariant check (the sum of its
 *    coordinators' bench counters) into its slot, DONE, and it keeps
 *    polling (Lotus: peers' lock messages) until every CN is DONE;
 * 4. cn0 then checks the benchmark's invariants for the whole cluster:
 *    its own coordinators plus one summary per peer CN (every check reads
 *    only dtxn_bench_ctx.acc[], which sums exactly), over MN memory that
 *    no CN changes any more. The other CNs' reports say so.
 * On --fabric mlx5 (app_role_shared() false) the control block is this
 * process's own: there are no slots of other nodes to wait on. The driver
 * connects to each MN when a worker creates its QP (it waits for the MN's
 * listener), peers pair as their QPs come up, and a lost MN shows as
 * failed WRs (run.c stops the CN, exit 3). The counters of several CNs
 * are not exchanged across hosts: cn0 checks the invariants only when it
 * is the only CN.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>

#include "dtxn_bench.h"
#include "dtxn_fabric.h"
#include "dtxn_txn.h"
#include "role.h"

int
app_cn_connect(const struct app_conf *c, struct dtxn_bench *b, unsigned n_workers,
	       struct app_ctl **ctl, struct dtxn_db **db, struct dtxn_fabric **f)
{
	uint64_t n_coords = c->cn * c->threads * c->coroutines + app_agent_coords(c);
	struct dtxn_fabric_rdma_conf rdma;
	struct dtxn_fabric_conf fc;
	uint64_t region;
	int rc;

	rc = app_db_make(c, b, (uint32_t)n_coords, (uint32_t)c->addr_cache, db);
	if (rc != APP_EXIT_OK)
		return rc;
	*ctl = app_role_claim(c, &rc);
	if (*ctl == NULL)
		return rc;
	if (app_role_shared(c) &&
	    app_role_wait(c, (*ctl)->mn, (unsigned)c->mn, "mn", APP_NODE_READY, "ready") != 0)
		return APP_EXIT_UNREACHABLE;
	app_role_fabric_conf(c, &fc, &rdma);
	rc = app_fabric_open(c, *db, &fc, n_workers, f, &region);
	if (rc != APP_EXIT_OK)
		return rc;
	rc = dtxn_db_attach(*db, *f);
	if (rc != 0) {
		app_err("cannot attach the database to the MN regions: %s", strerror(-rc));
		return APP_EXIT_FAIL;
	}
	printf("dtxn: %s attached to %" PRIu64 " MNs x %.1f MiB\n", c->node, c->mn,
	       (double)region / (1 << 20));
	return APP_EXIT_OK;
}

int
app_cn_start(const struct app_conf *c, struct app_ctl *ctl)
{
	__atomic_store_n(&app_role_self(c, ctl)->state, APP_NODE_READY, __ATOMIC_RELEASE);
	if (app_role_shared(c) && app_role_wait(c, ctl->cn, (unsigned)c->cn, "cn", APP_NODE_READY, "started") != 0)
		return APP_EXIT_UNREACHABLE;
	return APP_EXIT_OK;
}

void
app_cn_done(const struct app_conf *c, struct app_ctl *ctl, struct dtxn_bench_ctx *const *ctxs,
	    unsigned n)
{
	struct app_ctl_node *self = app_role_self(c, ctl);
	struct app_conf wait_conf = *c;

	for (unsigned i = 0; i < n; i++)
		for (unsigned k = 0; k < RTE_DIM(self->acc); k++)
			self->acc[k] += ctxs[i]->acc[k];
	__atomic_store_n(&self->state, APP_NODE_DONE, __ATOMIC_RELEASE);
	if (!app_role_shared(c))
		return; /* mlx5: no peer slots here */
	/* the peers started with us and run as long: the timeout covers
	 * stragglers; a peer whose process is gone (killed) is not waited for */
	wait_conf.connect_timeout_s = c->connect_timeout_s + c->duration_s + c->warmup_s;
	(void)app_role_wait_done(&wait_conf, ctl->cn, (unsigned)c->cn, "cn");
}

unsigned
app_cn_lost_peers(const struct app_conf *c, struct app_ctl *ctl, char *names, size_t len)
{
	unsigned n = 0;
	size_t used = 0;

	if (len > 0)
		names[0] = '\0';
	for (unsigned j = 0; j < c->cn; j++) {
		if (j == c->node_idx || __atomic_load_n(&ctl->cn[j].state, __ATOMIC_ACQUIRE) == APP_NODE_DONE)
			continue;
		if (used < len)
			used += (size_t)snprintf(names + used, len - used, "%scn%u", n ? ", " : "", j);
		n++;
	}
	return n;
}

int
app_cn_dead_mn(const struct app_conf *c, const struct app_ctl *ctl)
{
	if (!app_role_shared(c))
		return -1; /* mlx5: no MN pids here; a lost MN fails WRs instead */
	for (unsigned i = 0; i < c->mn; i++)
		if (!app_role_alive(__atomic_load_n(&ctl->mn[i].pid, __ATOMIC_RELAXED)))
			return (int)i;
	return -1;
}

unsigned
app_cn_peer_ctxs(const struct app_conf *c, struct app_ctl *ctl, struct dtxn_bench *b,
		 struct dtxn_bench_ctx *out)
{
	unsigned n = 0;

	for (unsigned j = 0; j < c->cn; j++) {
		if (j == c->node_idx || __atomic_load_n(&ctl->cn[j].state, __ATOMIC_ACQUIRE) != APP_NODE_DONE)
			continue; /* a peer that died hands over nothing: app_cn_lost_peers() */
		memset(&out[n], 0, sizeof(out[n]));
		out[n].bench = b;
		out[n].finished = true;
		memcpy(out[n].acc, ctl->cn[j].acc, sizeof(out[n].acc));
		n++;
	}
	return n;
}
