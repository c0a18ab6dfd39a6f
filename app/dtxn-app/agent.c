/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A CN's cluster agent (agent.h): heartbeat, failure detection by lease,
 * and recovery of the dead CNs by the designated survivor. Everything
 * through lib/txn's lease calls and dtxn_coord_recover(): fabric WRs,
 * dtxn_now_ns(), yields; nothing else.
 */
#include <errno.h>
#include <string.h>

#include <rte_common.h>

#include <rte_errno.h>

#include "dtxn_fabric.h"
#include "dtxn_sched.h"
#include "dtxn_txn_driver.h"
#include "agent.h"
#include "app.h"

unsigned
app_agent_settle(struct app_agent *a)
{
	unsigned left = 0;

	for (unsigned i = 0; i < a->n_recs; i++) {
		struct app_agent_rec *r = &a->recs[i];

		if (r->unsettled && a->recovered(a->recovered_arg, &r->rec) == 0)
			r->unsettled = false;
		left += r->unsettled;
	}
	return left;
}

/*
 * Fencing: takes dead CN @p node's lease away (its state word as last
 * polled: @p seen), then waits a lease, so that whatever the fenced
 * incarnation let go under its last renewal has landed before the
 * recovery reads anything. @return 0, -EAGAIN (it moved: not dead), or an error.
 */
static int
agent_fence(struct dtxn_coord *c, const struct app_agent *a, uint16_t node, uint64_t seen,
	    uint64_t *fence_ns)
{
	int rc = dtxn_lease_fence(c, node, seen);

	if (rc != 0)
		return rc;
	if (a->fence_mns != NULL)
		(void)a->fence_mns(a->fence_arg, node); /* an MN that does not answer is gone */
	*fence_ns = dtxn_now_ns();
	dtxn_co_sleep_until_lc(dtxn_coord_co(c), *fence_ns + a->lease_ns);
	return 0;
}

/* Recovers every CN of @p dead (a node mask) in view @p v, every CN of
 * @p known (a superset) known dead; returns the first error. */
static int
agent_recover(struct dtxn_coord *c, struct app_agent *a, uint64_t dead, uint64_t known,
	      const struct dtxn_lease_view *v, uint64_t now)
{
	for (uint64_t left = dead; left != 0; left &= left - 1) {
		uint16_t node = (uint16_t)__builtin_ctzll(left);
		uint64_t fence_ns = 0;
		struct app_agent_rec *r;

		if (a->n_recs == (unsigned)RTE_DIM(a->recs))
			return -ENOSPC;
		if (a->fencing) {
			int rc = agent_fence(c, a, node, v->state[node], &fence_ns);

			if (rc == -EAGAIN)
				continue; /* it renewed or rejoined since the poll */
			if (rc != 0)
				return rc;
		}
		r = &a->recs[a->n_recs++];
		memset(r, 0, sizeof(*r));
		r->by_node = dtxn_coord_cn_node(c);
		r->inc = DTXN_LEASE_WORD_INC(v->state[node]);
		r->detect_ns = now;
		r->fence_ns = fence_ns;
		r->rec.dead_cn = node;
		r->rec.gid_first = (uint32_t)(node - v->n_mn) * a->gids_per_cn;
		r->rec.n_gids = a->gids_per_cn;
		r->rec.dead_mask = known;
		if (a->drained_ns != NULL) {
			/* what the dead CN's RNIC had sent still lands: let it
			 * (asked again after each wait: not done until it says so) */
			uint64_t t;

			while ((t = a->drained_ns(a->drained_arg, node, r->inc)) > dtxn_now_ns())
				dtxn_co_sleep_until_lc(dtxn_coord_co(c), t);
		}
		r->rc = dtxn_coord_recover(c, &r->rec);
		if (r->rc != 0)
			return r->rc;
		if (a->recovered != NULL)
			r->unsettled = a->recovered(a->recovered_arg, &r->rec) != 0;
		r->rc = dtxn_lease_mark_recovered(c, node, r->inc);
		if (r->rc != 0)
			return r->rc;
	}
	return 0;
}

int
app_agent_recover_now(struct dtxn_coord *c, struct app_agent *a, uint64_t dead, uint64_t which)
{
	struct dtxn_lease_view v;
	uint64_t now;
	int rc;

	memset(&v, 0, sizeof(v));
	rc = dtxn_lease_poll(c, &v); /* each dead CN's incarnation, from its state word */
	if (rc != 0)
		return rc;
	now = dtxn_now_ns();
	return agent_recover(c, a, which, dead | which, &v, now);
}

int
app_agent_txn_verdict(const struct dtxn_coord *co, const struct dtxn_recovery *rec)
{
	const struct dtxn_txn *t = co->txn;

	if (rec == NULL || !__atomic_load_n(&t->open, __ATOMIC_ACQUIRE))
		return 0;
	return dtxn_recovery_verdict(rec, t->id, true);
}

bool
app_agent_txn_kept(const struct dtxn_coord *co, const struct dtxn_recovery *rec)
{
	int v;

	if (!__atomic_load_n(&co->txn->open, __ATOMIC_ACQUIRE))
		return false;
	/* the recovery's verdict first: a posted commit may have been refused */
	v = app_agent_txn_verdict(co, rec);
	return v != 0 ? v > 0 : co->txn->decided != 0;
}

/* Sleeps until the next beat of @p a after *@p next. */
static void
agent_sleep(struct dtxn_coord *c, const struct app_agent *a, uint64_t *next)
{
	*next += a->beat_ns;
	if (*next < dtxn_now_ns())
		*next = dtxn_now_ns() + a->beat_ns;
	dtxn_co_sleep_until_lc(dtxn_coord_co(c), *next);
}

/* Whether the heartbeat goes on: until the run stops (after it, while it
 * lingers: struct app_agent.linger, dtxn_coord_set_linger()); with
 * fencing, until the last other coroutine of its worker ended (a
 * coordinator finishing its last transaction after the stop still needs
 * the lease for its writes). */
static bool
agent_beating(struct dtxn_coord *c, const struct app_agent *a)
{
	return !dtxn_coord_stopping(c) ||
	       (a->fencing && dtxn_sched_alive(dtxn_co_sched(dtxn_coord_co(c))) > 1);
}

uint64_t
app_agent_beat_gap_ns(const struct app_agent *a)
{
	uint64_t gap = __atomic_load_n(&a->beat_gap_max_ns, __ATOMIC_RELAXED);
	uint64_t last = __atomic_load_n(&a->beat_last_ns, __ATOMIC_RELAXED);
	uint64_t now = dtxn_now_ns();

	return last != 0 && now > last && now - last > gap ? now - last : gap;
}

void
app_agent_beat(struct dtxn_coord *c, void *arg)
{
	struct app_agent *a = arg;
	uint64_t next = dtxn_now_ns(), last = 0;

	while (agent_beating(c, a)) {
		uint64_t now = dtxn_now_ns();

		if (last != 0 && now - last > a->beat_gap_max_ns)
			__atomic_store_n(&a->beat_gap_max_ns, now - last, __ATOMIC_RELAXED);
		last = now;
		__atomic_store_n(&a->beat_last_ns, now, __ATOMIC_RELAXED);
		int rc = a->fencing ? dtxn_lease_renew(c, &a->beat, &a->gate, a->lease_ns, a->guard_ns) :
				      dtxn_lease_beat(c, &a->beat);

		if (rc == -ESHUTDOWN) {
			a->fenced_ns = dtxn_now_ns(); /* the main lcore stops the process */
			__atomic_fetch_add(&a->ended, 1, __ATOMIC_RELEASE);
			return;
		}
		if (rc != 0 && a->error == 0)
			a->error = rc;
		agent_sleep(c, a, &next);
	}
	if (a->fencing) { /* a peer that outlives this run must not recover it */
		int rc = dtxn_lease_leave(c, &a->gate);

		if (rc != 0 && a->error == 0)
			a->error = rc;
	}
	__atomic_fetch_add(&a->ended, 1, __ATOMIC_RELEASE);
}

void
app_agent_watch(struct dtxn_coord *c, void *arg)
{
	struct app_agent *a = arg;
	struct dtxn_lease_view v;
	uint16_t self = dtxn_coord_cn_node(c);
	uint64_t next = dtxn_now_ns();

	memset(&v, 0, sizeof(v));
	v.period_ns = a->beat_ns; /* suspect on time it watched: dtxn_lease_poll() */
	while (!dtxn_coord_stopping(c)) { /* lingering: see agent_beating() */
		uint64_t now, dead;
		int rc = dtxn_lease_poll(c, &v);

		__atomic_store_n(&a->watch_gaps, v.gaps, __ATOMIC_RELAXED);
		__atomic_store_n(&a->unwatched_ns, v.unwatched_ns, __ATOMIC_RELAXED);

		now = dtxn_now_ns();
		dead = rc == 0 ? dtxn_lease_expired(&v, now, a->lease_ns) : 0;
		if (dead != 0 && dtxn_lease_recoverer(&v, now, a->lease_ns) == self)
			rc = agent_recover(c, a, dead, dead, &v, now);
		if (a->recovered != NULL)
			(void)app_agent_settle(a);
		if (rc != 0 && a->error == 0)
			a->error = rc;
		agent_sleep(c, a, &next);
	}
	__atomic_fetch_add(&a->ended, 1, __ATOMIC_RELEASE);
}

int
app_agent_create(const struct app_conf *c, struct dtxn_worker *w, uint32_t gid,
		 uint32_t gids_per_cn, struct app_agent *a)
{
	_Static_assert(APP_AGENT_COORDS == 2, "app_agent_coords() counts two per CN");
	a->lease_ns = (uint64_t)(c->lease_ms * 1e6 + 0.5);
	a->beat_ns = RTE_MAX(a->lease_ns / 5, (uint64_t)1);
	a->guard_ns = a->beat_ns;
	a->gids_per_cn = gids_per_cn;
	for (unsigned k = 0; k < APP_AGENT_COORDS; k++) {
		struct dtxn_coord *co = dtxn_coord_create(w, gid + k, k == 0 ? app_agent_beat :
									   app_agent_watch, a);

		if (co == NULL) {
			app_err("cannot create a CN agent: %s", rte_strerror(rte_errno));
			return APP_EXIT_FAIL;
		}
		dtxn_coord_lease_exempt(co); /* its beats and recoveries pass the gate */
		/* after the run while the CN waits for its peers: its recoveries
		 * run as in the run (a protocol's recovery gives up when stopping) */
		dtxn_coord_set_linger(co, &a->linger);
	}
	return APP_EXIT_OK;
}
