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
 *    polling (Lotus: peers' lock messages) until every CN is DONE or
 *    gone; a CN killed before (SIGKILL) leaves its coordinators' contexts
 *    in shared memory (app_cn_publish()), which the survivor that
 *    recovers it settles (app_cn_settle_dead()) and the checker sums
 *    (a restart of the node folds them into its slot's acc_prev first);
 *    the first CN that finds every CN DONE or gone closes the cluster to
 *    restarts (app_ctl.closed);
 * 4. the lowest CN that reached DONE (cn0 unless it died: then the lowest
 *    survivor; app_cn_checker()) then checks the benchmark's invariants
 *    for the whole cluster: its own coordinators plus one summary per
 *    peer CN and one for its own dead incarnations if it is a restart
 *    (every check reads only dtxn_bench_ctx.acc[], which sums exactly),
 *    over MN memory that no CN changes any more. The other CNs' reports
 *    name it.
 * These are the --control shared half of the CNs' control plane (ctl.c).
 * On a network fabric (app_role_shared() false) the control block is this
 * process's own: there are no slots of other nodes to wait on, and steps
 * 2-4 go through MN 0's control area instead (--control fabric,
 * ctl_fabric.c), which shm processes can use too. The driver connects to
 * each MN when a worker creates its QP, peers pair as their QPs come up,
 * and a lost MN shows as failed WRs (run.c stops the CN, exit 3).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <rte_common.h>
#include <rte_errno.h>

#include "dtxn_bench.h"
#include "dtxn_fabric.h"
#ifdef DTXN_HAVE_UCX
#include "dtxn_fabric_ucx.h"
#endif
#include "dtxn_sched.h"
#include "dtxn_txn.h"
#include "dtxn_txn_driver.h"
#include "agent.h"
#include "role.h"

/*
 * On a network fabric the control block is this process's own: its
 * incarnation of the CN is the one the MNs admitted at connect (ucx: MN 0
 * answers its first HELLO with the next one once its predecessor was
 * fenced; doc/guides/ucx.md, "Connecting"). Into its slot, whence the
 * lease gate, the coordinators' txn ids and the report take it; the
 * control area claim follows (app_cf_rejoin()). Lotus's rejoin needs the
 * routing state the CN processes share on one host (its dead set,
 * doc/guides/lotus.md "Rejoin"): refused across hosts, its announcement
 * withdrawn (app_cf_withdraw()).
 * @return APP_EXIT_OK, or APP_EXIT_USAGE after one line.
 */
static int
cn_incarnation(const struct app_conf *c, struct app_ctl *ctl, struct dtxn_db *db,
	       struct dtxn_fabric *f)
{
#ifdef DTXN_HAVE_UCX
	uint32_t inc;

	if (dtxn_ucx_incarnation(f, (uint16_t)(c->mn + c->node_idx), &inc) != 0 || inc == 0)
		return APP_EXIT_OK;
	if (strcmp(c->protocol, "lotus") == 0) {
		/* nobody waits for it (its line last: the launcher shows it) */
		(void)app_cf_withdraw(c, db, f, (uint16_t)(c->mn + c->node_idx));
		app_err("--node %s: a restart (incarnation %u) of a Lotus CN across hosts: Lotus's rejoin needs the routing state the CN processes share on one host (doc/guides/cluster.md, \"A restart across hosts\")",
			c->node, inc);
		return APP_EXIT_USAGE;
	}
	app_role_self(c, ctl)->incarnation = inc;
	(void)dtxn_fabric_set_incarnation(f, inc); /* lib/tso: a rejoined client */
	printf("dtxn: %s: a restart: the MNs admitted this process as incarnation %u\n", c->node,
	       inc);
#else
	RTE_SET_USED(c);
	RTE_SET_USED(ctl);
	RTE_SET_USED(db);
	RTE_SET_USED(f);
#endif
	return APP_EXIT_OK;
}

int
app_cn_connect(const struct app_conf *c, struct dtxn_bench *b, unsigned n_workers,
	       struct app_ctl **ctl, struct dtxn_db **db, struct dtxn_fabric **f)
{
	uint64_t n_coords = c->cn * c->threads * c->coroutines + app_agent_coords(c);
	struct dtxn_fabric_rdma_conf rdma;
	struct dtxn_fabric_conf fc;
	uint64_t region;
	int rc;

	/* the claim first: a process refused its node (served already)
	 * allocates nothing from the cluster's shared DPDK heap (role_mn.c) */
	*ctl = app_role_claim(c, &rc);
	if (*ctl == NULL)
		return rc;
	rc = app_db_make(c, b, (uint32_t)n_coords, (unsigned)c->threads, (uint32_t)c->addr_cache, db);
	if (rc != APP_EXIT_OK)
		return rc;
	if (app_role_shared(c) &&
	    app_role_wait(c, (*ctl)->mn, (unsigned)c->mn, "mn", APP_NODE_READY, "ready") != 0)
		return APP_EXIT_UNREACHABLE;
	app_role_fabric_conf(c, *ctl, &fc, &rdma);
	rc = app_fabric_open(c, *db, &fc, n_workers, f, &region);
	if (rc != APP_EXIT_OK)
		return rc;
	if (!app_role_shared(c) && cn_incarnation(c, *ctl, *db, *f) != APP_EXIT_OK)
		return APP_EXIT_USAGE;
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
	if (app_role_self(c, ctl)->incarnation != 0)
		return APP_EXIT_OK; /* a restart joins a running cluster: its peers began long ago */
	if (app_role_shared(c) && app_role_wait(c, ctl->cn, (unsigned)c->cn, "cn", APP_NODE_READY, "started") != 0)
		return APP_EXIT_UNREACHABLE;
	return APP_EXIT_OK;
}

/* The CNs whose announced restart has not claimed its node yet (bit J). */
static uint64_t
cn_pending(const struct app_ctl *ctl)
{
	return __atomic_load_n(&ctl->restart_pending, __ATOMIC_ACQUIRE);
}

/* With agents: the CNs whose process died during its run and that no
 * survivor has settled yet (bit J): their recovery is still to come. */
static uint64_t
cn_unsettled(const struct app_conf *c, const struct app_ctl *ctl)
{
	uint64_t m = 0;

	for (unsigned j = 0; j < c->cn && app_agents_on(c); j++)
		if (app_role_slot_dead(&ctl->cn[j]) &&
		    !__atomic_load_n(&ctl->cn[j].settled, __ATOMIC_ACQUIRE))
			m |= UINT64_C(1) << j;
	return m;
}

/*
 * Closes the cluster to restarts if every CN is DONE or gone and no
 * announced restart is pending, or if @p force. With @p expired (its bound
 * passed) or @p force, an announced restart still pending is missed (one
 * line) and no longer waited for. Under the control block's lock, which a
 * restart's claim holds while it checks ctl->closed, takes its slot and
 * clears its announcement. @return whether it is closed.
 */
static bool
cn_close(const struct app_conf *c, struct app_ctl *ctl, bool force, bool expired)
{
	bool all = true;
	uint64_t missed = 0;

	dtxn_plock_lock(&ctl->lock, "ctl");
	for (unsigned j = 0; j < c->cn && !force; j++)
		if (ctl->cn[j].state != APP_NODE_DONE && dtxn_proc_alive(ctl->cn[j].pid))
			all = false; /* running, or a restart that claimed its node meanwhile */
	if (force || expired) {
		missed = ctl->restart_pending;
		ctl->restart_missed |= missed;
		ctl->restart_pending = 0;
	}
	if (ctl->restart_pending != 0 || (!expired && cn_unsettled(c, ctl) != 0))
		all = false;
	if (all || force)
		__atomic_store_n(&ctl->closed, 1, __ATOMIC_RELEASE);
	dtxn_plock_unlock(&ctl->lock);
	for (unsigned j = 0; j < c->cn; j++)
		if (missed & (UINT64_C(1) << j))
			printf("dtxn: %s: cn%u's announced restart did not claim its node within %g s (--connect-timeout): the cluster closes without it\n",
			       c->node, j, c->connect_timeout_s);
	return all || force;
}

void
app_cn_done(const struct app_conf *c, struct app_ctl *ctl, struct dtxn_bench_ctx *const *ctxs,
	    unsigned n)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = 10 * 1000 * 1000 };
	struct app_ctl_node *self = app_role_self(c, ctl);
	struct app_conf wait_conf = *c;
	uint64_t deadline = 0, said_pending = 0, said_unsettled = 0;

	for (unsigned i = 0; i < n; i++)
		for (unsigned k = 0; k < RTE_DIM(self->acc); k++)
			self->acc[k] += ctxs[i]->acc[k];
	__atomic_store_n(&self->state, APP_NODE_DONE, __ATOMIC_RELEASE);
	if (!app_role_shared(c))
		return; /* mlx5: no peer slots here */
	/* the peers started with us and run as long: the timeout covers
	 * stragglers; a peer whose process is gone (killed) is not waited for,
	 * unless a restart claims its node before the cluster is closed, and
	 * an announced restart is waited for until it claims it (the bound:
	 * --connect-timeout after every CN was done or gone) */
	wait_conf.connect_timeout_s = c->connect_timeout_s + c->duration_s + c->warmup_s;
	for (;;) {
		bool late = app_role_wait_done(&wait_conf, ctl->cn, (unsigned)c->cn, "cn") != 0;
		uint64_t pending = cn_pending(ctl), unsettled = cn_unsettled(c, ctl);

		if (!late && (pending | unsettled) != 0 && deadline == 0)
			deadline = dtxn_now_ns() + (uint64_t)(c->connect_timeout_s * 1e9);
		if (!late && (pending & ~said_pending) != 0) {
			printf("dtxn: %s: waiting for the announced restart of cn%u (up to %g s, --connect-timeout)\n",
			       c->node, (unsigned)__builtin_ctzll(pending & ~said_pending), c->connect_timeout_s);
			said_pending |= pending;
		}
		if (!late && (unsettled & ~said_unsettled) != 0) {
			printf("dtxn: %s: waiting for the recovery of cn%u, whose process died (up to %g s, --connect-timeout)\n",
			       c->node, (unsigned)__builtin_ctzll(unsettled & ~said_unsettled), c->connect_timeout_s);
			said_unsettled |= unsettled;
		}
		fflush(stdout);
		if (!late && (pending | unsettled) != 0 && dtxn_now_ns() < deadline) {
			nanosleep(&ts, NULL);
			continue;
		}
		if (cn_close(c, ctl, late, (pending | unsettled) != 0 /* the bound passed */))
			break;
	}
}

/* A peer's counters: 0 lost, 1 handed over (DONE), 2 settled by a recovery,
 * 3 only its dead incarnations' (acc_prev: a restart that claimed its node,
 * then failed before its run and released the slot). */
static int
peer_counters(const struct app_ctl *ctl, unsigned j)
{
	uint32_t state = __atomic_load_n(&ctl->cn[j].state, __ATOMIC_ACQUIRE);

	if (state == APP_NODE_DONE)
		return 1;
	if (state == APP_NODE_FREE && __atomic_load_n(&ctl->cn[j].incarnation, __ATOMIC_ACQUIRE) != 0)
		return 3;
	return __atomic_load_n(&ctl->cn[j].settled, __ATOMIC_ACQUIRE) ? 2 : 0;
}

/** peers_named(): the CNs served by a restarted process (incarnation > 0), this one included. */
#define PEERS_RESTARTED 3

/** peers_named(): the CNs whose announced restart was missed, this one included. */
#define PEERS_MISSED 4

/* Whether cnJ is named for @p kind (peers_named()). */
static bool
peer_is(const struct app_conf *c, struct app_ctl *ctl, int kind, unsigned j)
{
	if (kind == PEERS_RESTARTED)
		return __atomic_load_n(&ctl->cn[j].incarnation, __ATOMIC_ACQUIRE) != 0;
	if (kind == PEERS_MISSED)
		return (__atomic_load_n(&ctl->restart_missed, __ATOMIC_ACQUIRE) >> j) & 1;
	return j != c->node_idx && peer_counters(ctl, j) == kind;
}

/* Names of the peers whose counters are @p kind (peer_counters()), or of the
 * restarted CNs, or of those whose announced restart was missed. */
static unsigned
peers_named(const struct app_conf *c, struct app_ctl *ctl, int kind, char *names, size_t len)
{
	unsigned n = 0;
	size_t used = 0;

	if (len > 0)
		names[0] = '\0';
	for (unsigned j = 0; j < c->cn; j++) {
		if (!peer_is(c, ctl, kind, j))
			continue;
		if (used < len)
			used += (size_t)snprintf(names + used, len - used, "%scn%u", n ? ", " : "", j);
		n++;
	}
	return n;
}

int
app_cn_checker(const struct app_conf *c, struct app_ctl *ctl)
{
	uint32_t want = 0, taken;

	for (unsigned j = 0; j < c->cn && want == 0; j++)
		if (__atomic_load_n(&ctl->cn[j].state, __ATOMIC_ACQUIRE) == APP_NODE_DONE)
			want = j + 1;
	if (want == 0)
		return -1;
	/* one claim: a CN that timed out waiting for a slower peer cannot make two checkers */
	if (want == c->node_idx + 1) {
		uint32_t none = 0;

		(void)__atomic_compare_exchange_n(&ctl->checker_taken, &none, want, false,
						  __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
	}
	/* not claimed yet: the lowest DONE one will (app_cn_checker_wait() if it died) */
	taken = __atomic_load_n(&ctl->checker_taken, __ATOMIC_ACQUIRE);
	return (int)(taken != 0 ? taken : want) - 1;
}

int
app_cn_checker_wait(const struct app_conf *c, struct app_ctl *ctl, int checker)
{
	const struct timespec nap = { 0, 10 * 1000 * 1000 };

	while (checker >= 0 && checker != (int)c->node_idx &&
	       !__atomic_load_n(&ctl->checked, __ATOMIC_ACQUIRE)) {
		int32_t pid = __atomic_load_n(&ctl->cn[checker].pid, __ATOMIC_ACQUIRE);
		uint32_t was = (uint32_t)checker + 1, want = 0, taken;

		if (pid != 0 && dtxn_proc_state(pid) != DTXN_PROC_GONE) {
			nanosleep(&nap, NULL);
			continue;
		}
		if (__atomic_load_n(&ctl->checked, __ATOMIC_ACQUIRE))
			break; /* it wrote its report, then exited */
		/* gone before its report: the lowest live DONE CN checks instead */
		for (unsigned j = 0; j < c->cn && want == 0; j++)
			if (__atomic_load_n(&ctl->cn[j].state, __ATOMIC_ACQUIRE) == APP_NODE_DONE &&
			    j + 1 != was &&
			    (j == c->node_idx || dtxn_proc_state(ctl->cn[j].pid) != DTXN_PROC_GONE))
				want = j + 1;
		if (want == 0)
			break; /* none left that could: unchecked, and the report says so */
		taken = __atomic_load_n(&ctl->checker_taken, __ATOMIC_ACQUIRE);
		if (want == c->node_idx + 1 && (taken == 0 || taken == was))
			(void)__atomic_compare_exchange_n(&ctl->checker_taken, &taken, want, false,
							  __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
		taken = __atomic_load_n(&ctl->checker_taken, __ATOMIC_ACQUIRE);
		if (taken == 0 || taken == was) {
			nanosleep(&nap, NULL); /* the next one's claim is due */
			continue;
		}
		printf("dtxn: %s: cn%d died before it checked the invariants; cn%u checks them\n",
		       c->node, checker, taken - 1);
		checker = (int)taken - 1;
	}
	return checker;
}

void
app_cn_checked(struct app_ctl *ctl)
{
	__atomic_store_n(&ctl->checked, 1, __ATOMIC_RELEASE);
}

unsigned
app_cn_lost_peers(const struct app_conf *c, struct app_ctl *ctl, char *names, size_t len)
{
	return peers_named(c, ctl, 0, names, len);
}

unsigned
app_cn_restarted_peers(const struct app_conf *c, struct app_ctl *ctl, char *names, size_t len)
{
	return peers_named(c, ctl, PEERS_RESTARTED, names, len);
}

unsigned
app_cn_missed_restarts(const struct app_conf *c, struct app_ctl *ctl, char *names, size_t len)
{
	return peers_named(c, ctl, PEERS_MISSED, names, len);
}

unsigned
app_cn_settled_peers(const struct app_conf *c, struct app_ctl *ctl, char *names, size_t len)
{
	return peers_named(c, ctl, 2, names, len);
}

int
app_cn_publish(const struct app_conf *c, struct app_ctl *ctl, unsigned w,
	       struct dtxn_bench_ctx *ctx, unsigned n)
{
	struct app_ctl_node *self = app_role_self(c, ctl);

	if (w >= APP_CN_MAX_WORKERS) {
		app_err("--node %s: at most %u worker lcores per CN process", c->node,
			APP_CN_MAX_WORKERS);
		return -ENOSPC;
	}
	self->live[w] = ctx;
	self->live_n[w] = n;
	__atomic_store_n(&self->n_live, RTE_MAX(self->n_live, w + 1), __ATOMIC_RELEASE);
	return 0;
}

/*
 * Whether the commit in flight of a killed CN's coordinator (@p x, in
 * shared memory) counts: still open, as its recovery decided; closed
 * (killed after dtxn_txn_commit() returned, before the bookkeeping), as
 * its outcome says (abort_reason is stored before open is cleared).
 */
static bool
cn_dead_committed(const struct dtxn_bench_ctx *x, const struct dtxn_recovery *rec)
{
	static const char *const verdicts[] = { "rolled back", "none", "kept" };
	const struct dtxn_txn *t = x->coord->txn;
	int64_t pending = __atomic_load_n(&x->pending, __ATOMIC_ACQUIRE);
	bool open, kept;
	int v;

	if (pending == 0)
		return false;
	open = __atomic_load_n(&t->open, __ATOMIC_ACQUIRE);
	v = app_agent_txn_verdict(x->coord, rec);
	kept = open ? app_agent_txn_kept(x->coord, rec) : t->abort_reason == DTXN_OK;
	/* one line per commit in flight that moves money: a post-mortem's facts */
	printf("dtxn: settled txn %#" PRIx64 " of dead node %u (%+" PRId64 "): %s, decided %u, recovery %s: %s\n",
	       t->id, rec->dead_cn, pending, open ? "open" : "closed", t->decided,
	       verdicts[v + 1], kept ? "counted" : "not counted");
	return kept;
}

int
app_cn_settle_dead(const struct app_conf *c, struct app_ctl *ctl, const struct dtxn_recovery *rec)
{
	struct app_ctl_node *dead = &ctl->cn[rec->dead_cn - c->mn];
	unsigned nw = __atomic_load_n(&dead->n_live, __ATOMIC_ACQUIRE);

	if (__atomic_load_n(&dead->settled, __ATOMIC_ACQUIRE))
		return 0;
	if (dtxn_proc_alive(__atomic_load_n(&dead->pid, __ATOMIC_ACQUIRE)))
		return -EAGAIN; /* fenced but not gone yet: its stores are not final */

	/* the dead process stores no more (fail-stop): its last stores are final */
	for (unsigned w = 0; w < nw; w++)
		for (unsigned k = 0; k < dead->live_n[w]; k++) {
			struct dtxn_bench_ctx *x = &dead->live[w][k];

			if (x->coord != NULL && cn_dead_committed(x, rec))
				dtxn_bench_ctx_settle(x);
		}
	__atomic_store_n(&dead->settled, 1, __ATOMIC_RELEASE);
	return 0;
}

int
app_cn_dead_mn(const struct app_conf *c, const struct app_ctl *ctl)
{
	if (!app_role_shared(c))
		return -1; /* mlx5: no MN pids here; a lost MN fails WRs instead */
	for (unsigned i = 0; i < c->mn; i++)
		if (!dtxn_proc_alive(__atomic_load_n(&ctl->mn[i].pid, __ATOMIC_RELAXED)))
			return (int)i;
	return -1;
}

unsigned
app_cn_peer_ctxs(const struct app_conf *c, struct app_ctl *ctl, struct dtxn_bench *b,
		 struct dtxn_bench_ctx *out)
{
	unsigned n = 0;

	for (unsigned j = 0; j < c->cn; j++) {
		const struct app_ctl_node *p = &ctl->cn[j];
		/* this CN: only its dead incarnations (its live one's are the caller's own) */
		int kind = j == c->node_idx ? (p->incarnation != 0 ? 3 : 0) : peer_counters(ctl, j);

		if (kind == 0)
			continue; /* a peer that died unsettled: app_cn_lost_peers() */
		memset(&out[n], 0, sizeof(out[n]));
		out[n].bench = b;
		out[n].finished = true;
		/* its earlier incarnations' (a restarted CN), then this one's */
		memcpy(out[n].acc, p->acc_prev, sizeof(out[n].acc));
		for (unsigned k = 0; kind == 1 && k < RTE_DIM(out[n].acc); k++)
			out[n].acc[k] += p->acc[k];
		for (unsigned w = 0; kind == 2 && w < p->n_live; w++)
			for (unsigned i = 0; i < p->live_n[w]; i++)
				for (unsigned k = 0; k < RTE_DIM(out[n].acc); k++)
					out[n].acc[k] += p->live[w][i].acc[k];
		n++;
	}
	return n;
}
