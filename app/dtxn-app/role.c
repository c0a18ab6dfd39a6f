/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --role mn|cn: the control block every process of a cluster shares
 * (role.h), the claim of a node, and waiting for the other nodes.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_memzone.h>

#include "dtxn_bench.h"
#include "dtxn_plock.h"
#include "dtxn_sched.h"
#include "role.h"

#define ROLE_CTL_ZONE "dtxn_ctl"

/* The run every process must agree on: what shapes the catalog and the
 * layout of MN memory, and what the CNs split between them. */
void
app_role_desc(const struct app_conf *c, char *buf, size_t len)
{
	int n = snprintf(buf, len, "bench=%s protocol=%s isolation=%s mn=%" PRIu64 " cn=%" PRIu64
			 " threads=%" PRIu64 " coroutines=%" PRIu64 " replicas=%" PRIu64
			 " log_kib=%" PRIu64 " aux_chunk=%" PRIu64 " versions=%" PRIu64 " seed=%" PRIu64
			 " nic=%s cc_opts=%s control=%s",
			 c->bench, c->protocol, c->isolation, c->mn, c->cn, c->threads,
			 c->coroutines, c->replicas, c->log_kib, c->aux_chunk, c->versions, c->seed,
			 c->nic, c->cc_opts, c->control);

	for (unsigned i = 0; i < c->n_bench_opts && n > 0 && (size_t)n < len; i++)
		n += snprintf(buf + n, len - (size_t)n, " %s=%s", c->bench_opts[i].name,
			      c->bench_opts[i].value);
}

struct app_ctl_node *
app_role_self(const struct app_conf *c, struct app_ctl *ctl)
{
	return strcmp(c->role, "mn") == 0 ? &ctl->mn[c->node_idx] : &ctl->cn[c->node_idx];
}

static struct app_ctl *
role_ctl_get(void)
{
	const struct rte_memzone *mz = rte_memzone_lookup(ROLE_CTL_ZONE);

	if (mz == NULL) {
		mz = rte_memzone_reserve(ROLE_CTL_ZONE, sizeof(struct app_ctl), SOCKET_ID_ANY, 0);
		if (mz == NULL && rte_errno == EEXIST)
			mz = rte_memzone_lookup(ROLE_CTL_ZONE);
		else if (mz != NULL)
			memset(mz->addr, 0, sizeof(struct app_ctl)); /* magic 0 until set */
	}
	return mz == NULL ? NULL : mz->addr;
}

bool
app_role_slot_dead(const struct app_ctl_node *n)
{
	return n->pid != 0 && n->pid != getpid() && !dtxn_proc_alive(n->pid) &&
	       (n->state == APP_NODE_STARTING || n->state == APP_NODE_READY);
}

/* A CN ended its run and found every CN DONE or gone (app_cn_done()): the
 * checker reads the slots now, so a restart must not reset one (it would
 * come too late to be checked). Lock held. */
static bool
role_run_over(const struct app_ctl *ctl)
{
	return __atomic_load_n(&ctl->closed, __ATOMIC_ACQUIRE) != 0;
}

/*
 * A restart (the slot's process died during its run): waits, lock released
 * between looks, until a survivor settled it. Called and returns with the
 * lock held, unless it fails (one line, unlocked).
 */
static int
role_restart_wait(const struct app_conf *c, struct app_ctl *ctl, struct app_ctl_node *self)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = 10 * 1000 * 1000 };
	uint64_t t0 = dtxn_now_ns(), deadline = t0 + (uint64_t)(c->connect_timeout_s * 1e9);

	if (app_role_slot_dead(self))
		printf("dtxn: %s: restart of a dead process (%d): incarnation %u%s\n", c->node,
		       (int)self->pid, self->incarnation + 1,
		       self->settled ? "" : ", waiting until a survivor has recovered it");
	while (app_role_slot_dead(self) && !__atomic_load_n(&self->settled, __ATOMIC_ACQUIRE)) {
		int32_t pid = self->pid;

		if (role_run_over(ctl)) {
			dtxn_plock_unlock(&ctl->lock);
			app_err("--node %s: the cluster's run is over (every CN is done or gone; the invariants are being checked): too late to rejoin",
				c->node);
			return -1;
		}

		dtxn_plock_unlock(&ctl->lock);
		if (dtxn_now_ns() >= deadline) {
			app_err("--node %s: its previous process (%d) died and no survivor recovered it within %g s (--connect-timeout; is failure detection off: --lease-ms 0?)",
				c->node, (int)pid, c->connect_timeout_s);
			return -1;
		}
		nanosleep(&ts, NULL);
		dtxn_plock_lock(&ctl->lock, "ctl");
		if (self->settled)
			printf("dtxn: %s: its previous process was recovered; waited %.1f ms\n",
			       c->node, (double)(dtxn_now_ns() - t0) / 1e6);
	}
	if (app_role_slot_dead(self) && role_run_over(ctl)) {
		dtxn_plock_unlock(&ctl->lock);
		app_err("--node %s: the cluster's run is over (every CN is done or gone; the invariants are being checked): too late to rejoin",
			c->node);
		return -1;
	}
	return 0;
}

/* Claims @p self for this process (lock held): a restart keeps the dead
 * incarnations' counters and takes the next incarnation. */
static void
role_slot_take(struct app_ctl_node *self)
{
	int64_t prev[RTE_DIM(self->acc_prev)];
	uint32_t inc = self->incarnation;

	memcpy(prev, self->acc_prev, sizeof(prev));
	if (app_role_slot_dead(self) && self->settled) {
		/* its contexts are final (fail-stop) and settled: fold them in */
		for (unsigned w = 0; w < self->n_live; w++)
			for (unsigned i = 0; i < self->live_n[w]; i++)
				for (unsigned k = 0; k < RTE_DIM(prev); k++)
					prev[k] += self->live[w][i].acc[k];
		inc++;
	}
	memset(self, 0, sizeof(*self));
	self->incarnation = inc;
	memcpy(self->acc_prev, prev, sizeof(prev));
	self->pid = getpid();
	self->state = APP_NODE_STARTING;
}

/* A CN process of an announced restart that will not serve its node
 * (refused, or exiting) takes its announcement back, so that nobody waits
 * for it. */
static void
role_announce_withdraw(const struct app_conf *c, struct app_ctl *ctl)
{
	uint64_t bit = UINT64_C(1) << c->node_idx;

	if (strcmp(c->role, "cn") != 0)
		return;
	dtxn_plock_lock(&ctl->lock, "ctl");
	if (ctl->restart_pending & bit) {
		ctl->restart_pending &= ~bit;
		printf("dtxn: %s: its announced restart is withdrawn (this process does not serve it)\n",
		       c->node);
	}
	dtxn_plock_unlock(&ctl->lock);
}

static struct app_ctl *role_claim(const struct app_conf *c, struct app_ctl *ctl, int *rc);

struct app_ctl *
app_role_claim(const struct app_conf *c, int *rc)
{
	struct app_ctl *ctl = role_ctl_get(), *got;

	if (ctl == NULL) {
		app_err("--node %s: cannot reach the cluster's control block: %s", c->node,
			rte_strerror(rte_errno));
		*rc = APP_EXIT_FAIL;
		return NULL;
	}
	got = role_claim(c, ctl, rc);
	if (got == NULL)
		role_announce_withdraw(c, ctl);
	return got;
}

/* app_role_claim() once the block is reached: NULL after one line. */
static struct app_ctl *
role_claim(const struct app_conf *c, struct app_ctl *ctl, int *rc)
{
	char desc[APP_CTL_DESC_MAX];
	struct app_ctl_node *self;
	int32_t holder;

	app_role_desc(c, desc, sizeof(desc));
	dtxn_plock_lock(&ctl->lock, "ctl");
	if (ctl->magic != APP_CTL_MAGIC) {
		snprintf(ctl->version, sizeof(ctl->version), "%s", DTXN_VERSION);
		snprintf(ctl->desc, sizeof(ctl->desc), "%s", desc);
		ctl->restart_pending = c->announce_mask; /* before any CN: mn0 under the launcher */
		ctl->magic = APP_CTL_MAGIC;
	}
	if (strcmp(ctl->version, DTXN_VERSION) != 0) {
		dtxn_plock_unlock(&ctl->lock);
		app_err("--node %s: version mismatch: this dtxn-app is %s, the cluster runs %s",
			c->node, DTXN_VERSION, ctl->version);
		*rc = APP_EXIT_USAGE;
		return NULL;
	}
	if (strcmp(ctl->desc, desc) != 0) {
		dtxn_plock_unlock(&ctl->lock);
		app_err("--node %s: catalog mismatch: this process runs '%s', the cluster '%s'",
			c->node, desc, ctl->desc);
		*rc = APP_EXIT_USAGE;
		return NULL;
	}
	self = app_role_self(c, ctl);
	if (strcmp(c->role, "cn") == 0 && role_restart_wait(c, ctl, self) != 0) {
		*rc = APP_EXIT_UNREACHABLE;
		return NULL; /* unlocked, one line */
	}
	holder = self->pid;
	if (holder != getpid() && dtxn_proc_alive(holder)) {
		dtxn_plock_unlock(&ctl->lock);
		app_err("--node %s: already served by process %d", c->node, (int)holder);
		*rc = APP_EXIT_USAGE;
		return NULL;
	}
	if (strcmp(c->role, "cn") == 0 && self->state == APP_NODE_DONE) {
		dtxn_plock_unlock(&ctl->lock);
		app_err("--node %s: this cluster's MNs already served a run; restart them (usertools/dtxn-cluster stop, start)",
			c->node);
		*rc = APP_EXIT_USAGE;
		return NULL;
	}
	role_slot_take(self);
	if (strcmp(c->role, "cn") == 0) {
		uint64_t bit = UINT64_C(1) << c->node_idx;

		if (ctl->cn_claimed & bit) /* a node claimed before: a restart, announced or not */
			ctl->restart_pending &= ~bit;
		ctl->cn_claimed |= bit;
	}
	dtxn_plock_unlock(&ctl->lock);
	return ctl;
}

struct app_ctl *
app_role_attach(const struct app_conf *c, int *rc)
{
	struct app_ctl *ctl = role_ctl_get();
	char desc[APP_CTL_DESC_MAX];

	app_role_desc(c, desc, sizeof(desc));
	if (ctl == NULL || __atomic_load_n(&ctl->magic, __ATOMIC_ACQUIRE) != APP_CTL_MAGIC) {
		app_err("--recovery-pass: no cluster's control block to attach to (are the MNs up?)");
		*rc = APP_EXIT_UNREACHABLE;
		return NULL;
	}
	if (strcmp(ctl->version, DTXN_VERSION) != 0 || strcmp(ctl->desc, desc) != 0) {
		app_err("--recovery-pass: catalog mismatch: this process runs '%s' (%s), the cluster '%s' (%s)",
			desc, DTXN_VERSION, ctl->desc, ctl->version);
		*rc = APP_EXIT_USAGE;
		return NULL;
	}
	return ctl;
}

void
app_role_release(const struct app_conf *c, struct app_ctl *ctl)
{
	struct app_ctl_node *self;

	if (ctl == NULL)
		return;
	self = app_role_self(c, ctl);
	dtxn_plock_lock(&ctl->lock, "ctl");
	if (self->pid == getpid()) {
		self->pid = 0;
		if (self->state != APP_NODE_DONE)
			self->state = APP_NODE_FREE;
	}
	dtxn_plock_unlock(&ctl->lock);
}

/*
 * Sleeps 10 ms at a time until every slot passes: it has @p state and a
 * live process, or (@p gone_ok) it has @p state or its process is gone.
 * @return 0, or -1 after one line naming the first slot that did not.
 */
static int
role_wait(const struct app_conf *c, struct app_ctl_node *nodes, unsigned n, const char *kind,
	  enum app_node_state state, bool gone_ok, const char *what)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = 10 * 1000 * 1000 };
	uint64_t deadline = dtxn_now_ns() + (uint64_t)(c->connect_timeout_s * 1e9);
	unsigned i = 0;

	for (;;) {
		for (i = 0; i < n; i++) {
			bool has = __atomic_load_n(&nodes[i].state, __ATOMIC_ACQUIRE) >= (uint32_t)state;
			bool alive = dtxn_proc_alive(__atomic_load_n(&nodes[i].pid, __ATOMIC_RELAXED));

			if (gone_ok ? !has && alive : !has || !alive)
				break;
		}
		if (i == n)
			return 0;
		if (dtxn_now_ns() >= deadline)
			break;
		nanosleep(&ts, NULL);
	}
	app_err("--node %s: %s%u is not %s after %g s%s", c->node, kind, i, what,
		c->connect_timeout_s, gone_ok ? "" : " (--connect-timeout)");
	return -1;
}

int
app_role_wait(const struct app_conf *c, struct app_ctl_node *nodes, unsigned n, const char *kind,
	      enum app_node_state state, const char *what)
{
	return role_wait(c, nodes, n, kind, state, false, what);
}

int
app_role_wait_done(const struct app_conf *c, struct app_ctl_node *nodes, unsigned n,
		   const char *kind)
{
	return role_wait(c, nodes, n, kind, APP_NODE_DONE, true, "done");
}

bool
app_role_shared(const struct app_conf *c)
{
	return app_role_split(c) && strcmp(c->fabric, "shm") == 0;
}

void
app_role_fabric_conf(const struct app_conf *c, struct app_ctl *ctl, struct dtxn_fabric_conf *fc,
		     struct dtxn_fabric_rdma_conf *rdma)
{
	bool mn = strcmp(c->role, "mn") == 0;
	unsigned id = mn ? c->node_idx : (unsigned)(c->mn + c->node_idx);

	memset(fc, 0, sizeof(*fc));
	fc->size = sizeof(*fc);
	fc->driver = c->fabric;
	fc->n_mn = (uint16_t)c->mn;
	fc->n_cn = (uint16_t)c->cn;
	fc->socket_id = (int)rte_socket_id();
	fc->name = "dtxn";
	/* mlx5: this process serves its own node (an MN registers its region
	 * and listens; a CN listens for its peers) and reaches the others at
	 * their [nodes] addresses */
	app_rdma_conf(c, UINT64_C(1) << id, rdma);
	fc->rdma = rdma;
	if (!app_role_shared(c))
		return;
	fc->multi_process = 1;
	if (!mn && ctl != NULL) /* a restarted CN's QPs: fresh rings, re-paired (shm) */
		fc->incarnation = app_role_self(c, ctl)->incarnation;
	fc->mn_own = mn ? UINT64_C(1) << c->node_idx : 0;
	fc->mn_attach = mn ? 0 : (c->mn >= 64 ? UINT64_MAX : (UINT64_C(1) << c->mn) - 1);
}
