/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --role cn --recovery-pass 1 (doc/guides/cluster.md, "The recovery
 * pass"): the end of a cluster whose every CN process ended killed,
 * fenced or failed before any of them checked the invariants, so no
 * survivor recovered the others. One process, started by dtxn-cluster
 * once every CN has exited and while the MNs still serve, runs no
 * workload: it attaches to the MNs and the control block (claiming no
 * node), applies what each dead CN process had posted (the drain), then
 * recovers each dead CN with the survivor's own code (agent.c,
 * app_agent_recover_now(): dtxn_coord_recover(), the counters settled
 * from the dead process's contexts, its state word RECOVERED), checks the
 * benchmark's invariants over MN memory with every CN's counters, and
 * writes the report the cluster's verdict reads.
 *
 * What it needs travels one of two ways, as the CNs' control plane does
 * (ctl.c): with --control shared, the shm control block (the run's
 * description, each CN's pid, state and published benchmark contexts);
 * with --control fabric, MN 0's control area and lease area, through
 * one-sided WRs on a QP of its own (ctl_fabric.c, app_cf_pass_dead(): the
 * run's digest, who handed its counters over, each CN's lease state
 * word and heartbeat), and each dead CN's counters are settled from its
 * coordinators' commit records on every MN (app_cf_note_recovery(),
 * app_cf_poll()), as a survivor on another host does.
 *
 * A coordinator never recovers its own CN (dtxn_coord_recover()), and
 * every CN is dead here: the pass takes two CN identities, cn0 and cn1,
 * with a fresh incarnation (its QPs replace the dead processes' in shm's
 * directory, after the drain): cn0's coordinator recovers every dead CN
 * but cn0, then cn1's recovers cn0. A cluster of one CN has no second
 * identity: the pass says so, and the check fails.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>

#include "dtxn_bench.h"
#include "dtxn_fabric.h"
#include "dtxn_sched.h"
#include "dtxn_stats.h"
#include "dtxn_store.h"
#include "dtxn_txn.h"
#ifdef DTXN_HAVE_UCX
#include "dtxn_fabric_ucx.h"
#endif
#include "agent.h"
#include "app.h"
#include "role.h"

/** CN identities the pass takes (cn0, cn1). */
#define PASS_IDS 2
/**
 * --control fabric: the pass's incarnation of cn0 and cn1 (shm names its
 * QPs' rings with it), read from no control block: the largest a
 * transaction id holds (8 bits, DTXN_TXN_SEQ_INC_SHIFT), which restarts
 * (one per node and run, dtxn-cluster) never reach.
 */
#define PASS_INC_FABRIC 255u

/** One identity's share: its worker, its agent (records), what it recovers. */
struct pass_id {
	struct dtxn_worker *w;
	struct app_agent agent;
	uint64_t which;         /* fabric node bits it recovers */
	int rc;
	volatile int done;
	struct pass_id *after;  /* runs once this one is done (NULL: at once) */
};

struct pass {
	const struct app_conf *c;
	struct app_ctl *ctl;    /* --control shared: the shm control block; NULL on fabric */
	struct app_cf *cf;      /* --control fabric: MN 0's control area; NULL on shared */
	/* c as no CN of the run (node_idx = cn): the checker's view of every CN's
	 * counters, and the control area's "settled by" of the pass */
	struct app_conf *none;
	uint64_t dead;          /* every CN (node bits) whose process died unrecovered */
	struct pass_id id[PASS_IDS];
	unsigned n_ids;
};

/* struct app_agent.recovered: the dead process's counters, as a survivor settles them. */
static int
pass_settle(void *arg, const struct dtxn_recovery *rec)
{
	struct pass *p = arg;

	if (p->cf != NULL) /* from its commit records, by app_cf_poll() once the recoveries ran */
		return app_cf_note_recovery(p->cf, rec);
	return app_cn_settle_dead(p->c, p->ctl, rec);
}

/* The coordinator of one identity: waits for the one before, then recovers its CNs. */
static void
pass_recover(struct dtxn_coord *co, void *arg)
{
	struct pass_id *id = arg;
	struct pass *p = id->agent.recovered_arg;

	while (id->after != NULL && !__atomic_load_n(&id->after->done, __ATOMIC_ACQUIRE))
		dtxn_co_sleep_until_lc(dtxn_coord_co(co), dtxn_now_ns() + 100000);
	if (id->which != 0)
		id->rc = app_agent_recover_now(co, &id->agent, p->dead, id->which);
	__atomic_store_n(&id->done, 1, __ATOMIC_RELEASE);
}

/* The worker lcore: steps every identity's scheduler until all are done. */
static int
pass_lcore(void *arg)
{
	struct pass *p = arg;
	unsigned alive;

	do {
		alive = 0;
		for (unsigned i = 0; i < p->n_ids; i++)
			alive += dtxn_sched_step_lc(dtxn_worker_sched(p->id[i].w));
	} while (alive != 0);
	return 0;
}

/*
 * The CNs to recover: every slot whose process died during its run and
 * that no survivor settled. @return 0, or APP_EXIT_USAGE after one line
 * if a CN process still runs (the pass comes after every CN ended).
 */
static int
pass_find_dead(struct pass *p)
{
	const struct app_conf *c = p->c;

	for (unsigned j = 0; j < c->cn; j++) {
		const struct app_ctl_node *n = &p->ctl->cn[j];
		int32_t pid = __atomic_load_n(&n->pid, __ATOMIC_ACQUIRE);

		if (pid != 0 && dtxn_proc_state(pid) != DTXN_PROC_GONE) {
			app_err("--recovery-pass: cn%u's process %d still runs: the pass runs once every CN process has ended",
				j, (int)pid);
			return APP_EXIT_USAGE;
		}
		if (app_role_slot_dead(n) && !__atomic_load_n(&n->settled, __ATOMIC_ACQUIRE))
			p->dead |= UINT64_C(1) << (c->mn + j);
	}
	return APP_EXIT_OK;
}

/* The fabric as a CN process's, under a fresh incarnation (no ring of a dead process's name). */
static int
pass_fabric(const struct app_conf *c, struct app_ctl *ctl, struct dtxn_db *db,
	    struct dtxn_fabric **f)
{
	struct dtxn_fabric_rdma_conf rdma;
	struct dtxn_fabric_conf fc;
	uint32_t inc = 0;
	uint64_t region;
	int rc;

	app_role_fabric_conf(c, ctl, &fc, &rdma);
	/* ucx: it serves cn0 and cn1 without listening on their addresses,
	 * each fenced at every MN and admitted anew before its first HELLO
	 * (nobody fenced a CN that died with no survivor; shm ignores it) */
	rdma.serve = UINT64_C(1) << c->mn | (c->cn >= PASS_IDS ? UINT64_C(1) << (c->mn + 1) : 0);
	rdma.take_over = rdma.serve;
	if (ctl == NULL) {
		inc = PASS_INC_FABRIC - 1; /* --control fabric: no block to read them from */
	} else {
		for (unsigned j = 0; j < c->cn; j++)
			inc = RTE_MAX(inc, __atomic_load_n(&ctl->cn[j].incarnation,
							   __ATOMIC_ACQUIRE));
	}
	fc.incarnation = inc + 1;
	rc = app_fabric_open(c, db, &fc, PASS_IDS, f, &region);
	if (rc != APP_EXIT_OK)
		return rc;
#ifdef DTXN_HAVE_UCX
	if (dtxn_ucx_is(*f) && dtxn_ucx_incarnation(*f, (uint16_t)c->mn, &inc) == 0)
		(void)dtxn_fabric_set_incarnation(*f, inc); /* as the MNs admitted cn0 */
#endif
	rc = dtxn_db_attach(db, *f);
	if (rc != 0) {
		app_err("--recovery-pass: cannot attach the database to the MN regions: %s",
			strerror(-rc));
		return APP_EXIT_FAIL;
	}
	return APP_EXIT_OK;
}

/* The identities' workers and coordinators: after the drain (their QPs replace the dead ones'). */
static int
pass_workers(struct pass *p, struct dtxn_db *db, uint64_t bench_coords)
{
	const struct app_conf *c = p->c;

	p->n_ids = c->cn >= PASS_IDS ? PASS_IDS : 1;
	if (p->n_ids > 1)
		p->id[1].after = &p->id[0];
	for (unsigned i = 0; i < p->n_ids; i++) {
		struct pass_id *id = &p->id[i];
		struct app_agent *a = &id->agent;
		/* the gid of cnI's watcher (build_workers()): a coordinator with no txn */
		uint32_t gid = (uint32_t)(bench_coords + i * APP_AGENT_COORDS + 1);

		a->lease_ns = (uint64_t)(c->lease_ms * 1e6 + 0.5);
		a->gids_per_cn = (uint32_t)(c->threads * c->coroutines);
		a->recovered = pass_settle;
		a->recovered_arg = p;
		id->w = dtxn_worker_create(db, (uint16_t)(c->mn + i), 0, 1, (int)rte_socket_id());
		if (id->w == NULL || dtxn_coord_create(id->w, gid, pass_recover, id) == NULL) {
			app_err("--recovery-pass: cannot create cn%u's recovering coordinator: %s", i,
				rte_strerror(rte_errno));
			return APP_EXIT_FAIL;
		}
	}
	return APP_EXIT_OK;
}

/* Who recovers whom, once the dead are known: cn0's identity every dead CN but cn0, then cn1's cn0. */
static void
pass_assign(struct pass *p)
{
	const uint64_t cn0 = UINT64_C(1) << p->c->mn;

	p->id[0].which = p->dead & ~cn0;
	if (p->n_ids > 1)
		p->id[1].which = p->dead & cn0;
}

/* "cnJ, cnK" of the CN bits of @p nodes (fabric node bits). */
static void
pass_names(const struct app_conf *c, uint64_t nodes, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (unsigned j = 0; j < c->cn && used < len; j++)
		if (nodes & (UINT64_C(1) << (c->mn + j)))
			used += (size_t)snprintf(buf + used, len - used, "%scn%u", used ? ", " : "", j);
}

/* The report: no workload; the recoveries, the counters' account, the invariants. */
static int
pass_report(struct pass *p, struct dtxn_bench *b, struct dtxn_db *db, uint64_t t0)
{
	const struct app_conf *c = p->c;
	struct dtxn_report *rep = calloc(1, sizeof(*rep));
	struct dtxn_report_recovery *recov = calloc(1, sizeof(*recov));
	struct dtxn_bench_ctx *peers = calloc(c->cn, sizeof(*peers));
	struct dtxn_bench_ctx **ctxs = calloc(c->cn, sizeof(*ctxs));
	struct app_agent agents[PASS_IDS];
	struct app_cp cp;
	char names[128];
	int np, rc;
	bool ok = true;

	if (rep == NULL || recov == NULL || peers == NULL || ctxs == NULL) {
		app_err("out of memory for the report");
		rc = APP_EXIT_FAIL;
		goto out;
	}
	dtxn_report_conf(rep, "bench", "%s", c->bench);
	app_report_protocol(rep, c, db);
	dtxn_report_conf(rep, "isolation", "%s", c->isolation);
	dtxn_report_conf(rep, "fabric", "%s", c->fabric);
	dtxn_report_conf(rep, "mn", "%" PRIu64, c->mn);
	dtxn_report_conf(rep, "cn", "%" PRIu64, c->cn);
	dtxn_report_conf(rep, "node", "recovery");
	dtxn_report_conf(rep, "recovery_pass", "1");
	app_report_bench_conf(rep, b);
	app_report_begin(rep, b, 0, (uint16_t)c->mn);
	for (unsigned i = 0; i < p->n_ids; i++) {
		agents[i] = p->id[i].agent;
		if (p->id[i].rc != 0)
			ok = false;
	}
	app_agent_report(c, agents, p->n_ids, (uint16_t)c->mn, t0, NULL, recov);
	rep->recovery = recov;
	pass_names(c, p->dead, names, sizeof(names));
	if (p->dead == 0)
		dtxn_report_check(rep, "recovery_pass", true,
				  "no CN left to recover: every one handed its counters over or was recovered");
	else if (p->n_ids < PASS_IDS)
		dtxn_report_check(rep, "recovery_pass", false,
				  "%s died unrecovered, and a cluster of one CN has no other CN's identity to recover it with",
				  names);
	else
		dtxn_report_check(rep, "recovery_pass", ok,
				  "%s recovered by the recovery pass (no survivor was left): %u recoveries%s",
				  names, recov->n_cn, ok ? "" : ", one failed (see its log)");
	/* every CN's counters, as a checker's peers' (no CN is this process):
	 * the control block's, or MN 0's control area (which also copies the
	 * MN regions this process does not map, for the check) */
	memset(&cp, 0, sizeof(cp));
	cp.c = p->none;
	cp.ctl = p->ctl;
	cp.cf = p->cf;
	np = app_cp_counters(&cp, b, peers, rep);
	for (int j = 0; j < np; j++)
		ctxs[j] = &peers[j];
	rc = app_report_finish(c, b, db, ctxs, np < 0 ? 0 : (unsigned)np, np >= 0, rep);
out:
	free(ctxs);
	free(peers);
	free(recov);
	free(rep);
	return rc;
}

/* What each dead process had posted lands first (shm: its poller died), before any QP of the pass's. */
static void
pass_drain(const struct app_conf *c, struct dtxn_fabric *f, uint64_t nodes)
{
	for (unsigned j = 0; j < c->cn; j++)
		if (nodes & (UINT64_C(1) << (c->mn + j))) {
			int n = dtxn_fabric_drain_node(f, (uint16_t)(c->mn + j));

			if (n > 0)
				printf("dtxn: recovery pass: %d WRs the dead process of cn%u had posted took effect before its recovery\n",
				       n, j);
		}
}

/*
 * --control fabric on shm, before the drain (which would apply a live
 * process's posted WRs beside its own poller): every CN's heartbeat read
 * twice, one lease apart, from MN 0's region as this process maps it (no
 * QP of the pass's may exist before the drain: it would take a dead
 * one's place in shm's directory). @return APP_EXIT_OK, or
 * APP_EXIT_USAGE after one line (a heartbeat moved: a CN process lives).
 */
static int
pass_watch_mapped(const struct app_conf *c, struct dtxn_db *db, struct dtxn_fabric *f)
{
	const struct dtxn_catalog *cat = dtxn_db_catalog(db);
	const uint8_t *base = dtxn_fabric_mn_base(f, 0);
	uint64_t before[DTXN_MAX_NODES];
	const uint64_t *beat[DTXN_MAX_NODES];

	if (!app_agents_on(c) || base == NULL)
		return APP_EXIT_OK;
	for (unsigned j = 0; j < c->cn; j++) {
		dtxn_raddr_t ra = dtxn_store_lease_raddr(cat, (uint16_t)(c->mn + j), false);

		beat[j] = (const uint64_t *)(const void *)(base + DTXN_RADDR_OFF(ra));
		before[j] = __atomic_load_n(beat[j], __ATOMIC_ACQUIRE);
	}
	rte_delay_us_sleep((unsigned)(c->lease_ms * 1000.0 + 0.5));
	for (unsigned j = 0; j < c->cn; j++)
		if (__atomic_load_n(beat[j], __ATOMIC_ACQUIRE) != before[j]) {
			app_err("--recovery-pass: cn%u's heartbeat moved within one lease (%g ms): its process lives; the pass runs once every CN process has ended",
				j, c->lease_ms);
			return APP_EXIT_USAGE;
		}
	return APP_EXIT_OK;
}

/*
 * --control fabric: the dead CNs from MN 0's control and lease areas, on
 * a QP of the pass's own, opened after the identities' workers (their
 * QPs pair as the dead processes' did). @return APP_EXIT_*.
 */
static int
pass_find_dead_fabric(struct pass *p, struct dtxn_db *db, struct dtxn_fabric *f, bool watched)
{
	uint64_t dead;
	int rc;

	p->cf = app_cf_open(p->none, db, f, (uint16_t)p->c->mn);
	if (p->cf == NULL)
		return APP_EXIT_FAIL;
	rc = app_cf_pass_dead(p->cf, watched, &dead);
	p->dead = dead << p->c->mn;
	return rc;
}

int
app_run_recovery_pass(const struct app_conf *conf)
{
	struct app_conf *c = malloc(sizeof(*c));
	struct pass p;
	struct dtxn_bench *b = NULL;
	struct dtxn_db *db = NULL;
	struct dtxn_fabric *f = NULL;
	uint64_t bench_coords, t0;
	unsigned lcore = rte_get_next_lcore(-1, 1, 0);
	bool fabric = strcmp(conf->control, "fabric") == 0, watched;
	char names[128];
	int rc;

	memset(&p, 0, sizeof(p));
	p.none = malloc(sizeof(*p.none));
	if (c == NULL || p.none == NULL) {
		free(c);
		free(p.none);
		return APP_EXIT_FAIL;
	}
	*c = *conf;
	/* no workload, so no history of its own (the CNs' are the launcher's to check) */
	snprintf(c->check, sizeof(c->check), "none");
	c->history[0] = '\0';
	p.c = c;
	*p.none = *c;
	p.none->node_idx = (unsigned)c->cn;
	snprintf(p.none->node, sizeof(p.none->node), "recovery"); /* its lines name the pass */
	if (lcore >= RTE_MAX_LCORE) {
		app_err("--recovery-pass: too few lcores: it needs the main lcore and one worker lcore (e.g. -l 0-1)");
		rc = APP_EXIT_USAGE;
		goto out;
	}
	bench_coords = c->cn * c->threads * c->coroutines;
	rc = app_bench_build(c, &b);
	/* --control shared: the block says who died, before anything opens */
	if (rc == APP_EXIT_OK && !fabric && (p.ctl = app_role_attach(c, &rc)) == NULL)
		goto out;
	if (rc == APP_EXIT_OK && !fabric &&
	    app_role_wait(c, p.ctl->mn, (unsigned)c->mn, "mn", APP_NODE_READY, "ready") != 0)
		rc = APP_EXIT_UNREACHABLE;
	if (rc == APP_EXIT_OK && !fabric)
		rc = pass_find_dead(&p);
	if (rc == APP_EXIT_OK)
		rc = app_db_make(c, b, (uint32_t)(bench_coords + app_agent_coords(c)),
				 (unsigned)c->threads, (uint32_t)c->addr_cache, &db);
	if (rc == APP_EXIT_OK)
		rc = pass_fabric(c, p.ctl, db, &f);
	if (rc != APP_EXIT_OK)
		goto out;
	app_watchdog_disarm(); /* main.c's bound on the start-up */
	t0 = dtxn_now_ns();
	/* --control fabric: before the pass knows who died, every CN once no
	 * heartbeat moves (shm; a CN that handed its counters over and exited
	 * left no QP to drain) */
	watched = fabric && dtxn_fabric_heap_shared(f);
	if (watched)
		rc = pass_watch_mapped(c, db, f);
	if (rc != APP_EXIT_OK)
		goto out;
	pass_drain(c, f, fabric ? ((UINT64_C(1) << c->cn) - 1) << c->mn : p.dead);
	rc = pass_workers(&p, db, bench_coords);
	if (rc == APP_EXIT_OK && fabric)
		rc = pass_find_dead_fabric(&p, db, f, watched);
	if (rc != APP_EXIT_OK)
		goto out;
	pass_assign(&p);
	pass_names(c, p.dead, names, sizeof(names));
	printf("dtxn: recovery pass: %s to recover (as cn0 and cn1, incarnation %u), then the invariants%s\n",
	       p.dead != 0 ? names : "no CN", dtxn_fabric_conf(f)->incarnation,
	       fabric ? " (MN 0's control area: --control fabric)" : "");
	fflush(stdout);
	rte_eal_remote_launch(pass_lcore, &p, lcore);
	rte_eal_wait_lcore(lcore);
	for (unsigned i = 0; i < p.n_ids; i++)
		if (p.id[i].rc != 0)
			app_err("--recovery-pass: cn%u's recoveries failed: %s", i, strerror(-p.id[i].rc));
	/* --control fabric: each recovered CN's counters from its commit records, into its slot */
	if (p.cf != NULL && app_cf_poll(p.cf) != 0)
		rc = APP_EXIT_UNREACHABLE;
	if (rc == APP_EXIT_OK)
		rc = pass_report(&p, b, db, t0);
	app_watchdog_teardown("recovery", rc);
out:
	app_cf_close(p.cf); /* its QP before the fabric closes */
	for (unsigned i = 0; i < p.n_ids; i++)
		dtxn_worker_destroy(p.id[i].w);
	app_release(db, f, b);
	free(p.none);
	free(c);
	return rc;
}
