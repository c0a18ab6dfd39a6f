/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --role mn --node mnI: one memory node per process. It reserves its
 * region (a hugepage memzone, "dtxn_mn<I>"), loads its copies of the
 * tables through the protocol's record format (lib/store's loader writes
 * the replicas mapped here; before it, every MN zeroes the coordinators'
 * commit-record slots in its region, app_cf_crec_init()), MN 0 zeroes the
 * control area of the CNs' control plane in its region
 * (app_cf_area_init()), marks itself READY in the control block,
 * prints one ready line, and then stays out of the data path: the CNs
 * reach its memory with posted WRs only; a protocol with an MN-side
 * service (Scythe's Lock RPC) has it polled here by the MN's CPU. SIGTERM or SIGINT ends it; the
 * region is freed on the way out.
 */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dtxn_bench.h"
#include "dtxn_fabric.h"
#include "dtxn_txn.h"
#include "role.h"

static volatile sig_atomic_t g_mn_stop;

static void
mn_on_signal(int sig)
{
	g_mn_stop = sig;
}

int
app_run_mn(const struct app_conf *c)
{
	struct app_mn_svcs svcs = { .n = 0 };
	struct sigaction sa = { .sa_handler = mn_on_signal };
	uint64_t n_coords = c->cn * c->threads * c->coroutines + app_agent_coords(c);
	struct dtxn_fabric_rdma_conf rdma;
	struct dtxn_fabric_conf fc;
	struct dtxn_bench *b = NULL;
	struct dtxn_fabric *f = NULL;
	struct dtxn_db *db = NULL;
	struct app_ctl *ctl = NULL;
	uint64_t region = 0;
	double load_s = 0;
	int rc = APP_EXIT_OK;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	/* the claim first: a second process for a served node is refused
	 * before it allocates from the cluster's shared DPDK heap, whose
	 * growth it would contend for with the CNs that start (a CN's worker
	 * allocation timed out, EAL "Request timed out", beside a second mn0) */
	ctl = app_role_claim(c, &rc);
	if (ctl != NULL)
		rc = app_bench_build(c, &b);
	if (rc == APP_EXIT_OK)
		rc = app_db_make(c, b, (uint32_t)n_coords, (unsigned)c->threads, (uint32_t)c->addr_cache, &db);
	if (rc == APP_EXIT_OK) {
		app_role_fabric_conf(c, ctl, &fc, &rdma);
		rc = app_fabric_open(c, db, &fc, 0, &f, &region);
	}
	/* the primary (mn0): the cluster's heap, before any other process attaches */
	if (rc == APP_EXIT_OK && app_role_shared(c))
		(void)app_heap_reserve(c, db, &fc);
	/* every MN: the coordinators' commit-record slots, zeroed before the
	 * load publishes the region (a CN may connect from then on) */
	if (rc == APP_EXIT_OK && app_cf_crec_init(c, db, f) != 0) {
		app_err("--node %s: cannot reach the commit records in its own region", c->node);
		rc = APP_EXIT_FAIL;
	}
	if (rc == APP_EXIT_OK)
		rc = app_db_load(c, db, f, b, region, &load_s);
	if (rc == APP_EXIT_OK && app_cf_area_init(c, db, f) != 0) { /* MN 0: the control area */
		app_err("--node %s: cannot reach the control area in its own region", c->node);
		rc = APP_EXIT_FAIL;
	}
	if (rc == APP_EXIT_OK && app_telemetry_register(c, ctl) != 0)
		printf("dtxn: telemetry: the /dtxn/ commands could not be registered\n");
	if (rc == APP_EXIT_OK) /* Scythe: this MN's lock service, before the CNs connect */
		rc = app_mn_svcs_create(&svcs, db, (uint16_t)c->node_idx, 1, (unsigned)c->threads,
					(unsigned)c->coroutines);
	if (rc == APP_EXIT_OK) {
		__atomic_store_n(&app_role_self(c, ctl)->state, APP_NODE_READY, __ATOMIC_RELEASE);
		printf("dtxn: %s ready: %s under %s, region %.1f MiB, loaded in %.2f s, pid %d\n",
		       c->node, c->bench, c->protocol, (double)region / (1 << 20), load_s,
		       (int)getpid());
		fflush(stdout);
		while (!g_mn_stop)
			app_mn_svcs_serve_ms(&svcs, 20); /* the protocol's MN service, or asleep */
		printf("dtxn: %s stopped (%s)\n", c->node, g_mn_stop == SIGINT ? "SIGINT" : "SIGTERM");
		fflush(stdout);
	}
	if (app_role_shared(c)) /* its frees take DPDK's shared heap lock: bounded (watchdog.c) */
		app_watchdog_teardown(c->node, rc);
	app_mn_svcs_destroy(&svcs);
	app_role_release(c, ctl);
	app_release(db, f, b);
	return rc;
}
