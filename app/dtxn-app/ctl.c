/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The CNs' control plane, the interface run.c calls (role.h, struct
 * app_cp): each call goes to the shm control block (--control shared,
 * role_cn.c) or to MN 0's control area over the fabric (--control fabric,
 * ctl_fabric.c). The control block itself (claims, the slot's state,
 * telemetry) stays this process's in both cases.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_common.h>

#include "dtxn_bench.h"
#include "dtxn_stats.h"
#include "role.h"

int
app_cp_open(struct app_cp *cp, const struct app_conf *c, struct app_ctl *ctl, struct dtxn_db *db,
	    struct dtxn_fabric *f, uint16_t node)
{
	memset(cp, 0, sizeof(*cp));
	cp->c = c;
	cp->ctl = ctl;
	if (strcmp(c->control, "fabric") != 0)
		return APP_EXIT_OK;
	cp->cf = app_cf_open(c, db, f, node);
	return cp->cf != NULL ? APP_EXIT_OK : APP_EXIT_FAIL;
}

void
app_cp_close(struct app_cp *cp)
{
	app_cf_close(cp->cf);
	cp->cf = NULL;
}

int
app_cp_start(struct app_cp *cp)
{
	const struct app_conf *c = cp->c;

	if (cp->cf == NULL)
		return app_cn_start(c, cp->ctl);
	__atomic_store_n(&app_role_self(c, cp->ctl)->state, APP_NODE_READY, __ATOMIC_RELEASE);
	if (app_role_self(c, cp->ctl)->incarnation != 0) {
		/* a restart joins a running cluster, once its dead incarnation is settled */
		return app_cf_rejoin(cp->cf, app_role_self(c, cp->ctl)->incarnation) == 0 ?
			       APP_EXIT_OK : APP_EXIT_UNREACHABLE;
	}
	switch (app_cf_start(cp->cf)) {
	case 0:
		return APP_EXIT_OK;
	default:
		return APP_EXIT_UNREACHABLE;
	}
}

void
app_cp_poll(struct app_cp *cp)
{
	if (cp->cf != NULL)
		(void)app_cf_poll(cp->cf); /* a failure: app_cf_done() tries again, and says so */
}

int
app_cp_done(struct app_cp *cp, struct dtxn_bench_ctx *const *ctxs, unsigned n, uint64_t committed)
{
	const struct app_conf *c = cp->c;
	struct app_ctl_node *self;
	int64_t acc[4] = { 0 };

	if (cp->cf == NULL) {
		app_cn_done(c, cp->ctl, ctxs, n);
		return APP_EXIT_OK;
	}
	self = app_role_self(c, cp->ctl);
	for (unsigned i = 0; i < n; i++) {
		for (unsigned k = 0; k < RTE_DIM(acc); k++)
			acc[k] += ctxs[i]->acc[k];
	}
	/* this process's slot too: telemetry and a restart's claim read it */
	memcpy(self->acc, acc, sizeof(self->acc));
	self->committed = committed;
	__atomic_store_n(&self->state, APP_NODE_DONE, __ATOMIC_RELEASE);
	return app_cf_done(cp->cf, acc, committed, n) == 0 ? APP_EXIT_OK : APP_EXIT_UNREACHABLE;
}

int
app_cp_checker(struct app_cp *cp)
{
	if (cp->cf != NULL)
		return app_cf_checker(cp->cf);
	return app_cn_checker(cp->c, cp->ctl);
}

int
app_cp_checker_wait(struct app_cp *cp, int checker)
{
	return cp->cf != NULL ? checker : app_cn_checker_wait(cp->c, cp->ctl, checker);
}

void
app_cp_checked(struct app_cp *cp)
{
	if (cp->cf == NULL)
		app_cn_checked(cp->ctl);
}

/* The shm control block's account of the peers' counters (run.c's, as it was). */
static int
cp_shared_counters(struct app_cp *cp, struct dtxn_bench *b, struct dtxn_bench_ctx *out,
		   struct dtxn_report *rep)
{
	const struct app_conf *c = cp->c;
	unsigned np = app_cn_peer_ctxs(c, cp->ctl, b, out);
	char lost[128], settled[128];

	if (app_cn_lost_peers(c, cp->ctl, lost, sizeof(lost)) != 0)
		dtxn_report_check(rep, "cluster_counters", false,
				  "%s died before handing over its counters: the invariants that read them miss its share",
				  lost);
	else if (app_cn_settled_peers(c, cp->ctl, settled, sizeof(settled)) != 0)
		dtxn_report_check(rep, "cluster_counters", true,
				  "%s died; its counters were read from shared memory, its commit in flight settled as its recovery decided",
				  settled);
	else if (app_cn_restarted_peers(c, cp->ctl, settled, sizeof(settled)) != 0)
		dtxn_report_check(rep, "cluster_counters", true,
				  "%s restarted: the counters of its dead incarnations were settled by their recovery, the live one's handed over",
				  settled);
	if (app_cn_missed_restarts(c, cp->ctl, lost, sizeof(lost)) != 0)
		dtxn_report_check(rep, "announced_restart", false,
				  "%s: its announced restart did not claim its node within %g s of the end of the run (--connect-timeout): the cluster closed without it",
				  lost, c->connect_timeout_s);
	return (int)np;
}

int
app_cp_counters(struct app_cp *cp, struct dtxn_bench *b, struct dtxn_bench_ctx *out,
		struct dtxn_report *rep)
{
	if (cp->cf != NULL)
		return app_cf_counters(cp->cf, b, out, rep);
	return cp_shared_counters(cp, b, out, rep);
}
