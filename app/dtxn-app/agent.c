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
#include "dtxn_txn_driver.h"
#include "agent.h"
#include "app.h"

/* Recovers every CN of @p dead (a node mask); returns the first error. */
static int
agent_recover(struct dtxn_coord *c, struct app_agent *a, uint64_t dead, uint16_t n_mn,
	      uint64_t now)
{
	for (uint64_t left = dead; left != 0; left &= left - 1) {
		uint16_t node = (uint16_t)__builtin_ctzll(left);
		struct app_agent_rec *r;

		if (a->n_recs == (unsigned)RTE_DIM(a->recs))
			return -ENOSPC;
		r = &a->recs[a->n_recs++];
		memset(r, 0, sizeof(*r));
		r->by_node = dtxn_coord_cn_node(c);
		r->detect_ns = now;
		r->rec.dead_cn = node;
		r->rec.gid_first = (uint32_t)(node - n_mn) * a->gids_per_cn;
		r->rec.n_gids = a->gids_per_cn;
		r->rec.dead_mask = dead;
		if (a->drained_ns != NULL) {
			/* what the dead CN's RNIC had sent still lands: let it */
			uint64_t t = a->drained_ns(a->drained_arg, node);

			if (t > dtxn_now_ns())
				dtxn_co_sleep_until_lc(dtxn_coord_co(c), t);
		}
		r->rc = dtxn_coord_recover(c, &r->rec);
		if (r->rc != 0)
			return r->rc;
		if (a->recovered != NULL)
			a->recovered(a->recovered_arg, &r->rec);
		r->rc = dtxn_lease_mark_recovered(c, node);
		if (r->rc != 0)
			return r->rc;
	}
	return 0;
}

bool
app_agent_txn_kept(const struct dtxn_coord *co, const struct dtxn_recovery *rec)
{
	const struct dtxn_txn *t = co->txn;

	if (!__atomic_load_n(&t->open, __ATOMIC_ACQUIRE))
		return false;
	if (t->decided)
		return true;
	for (unsigned v = 0; rec != NULL && v < rec->n_visible; v++)
		if (rec->visible[v] == t->id)
			return true;
	return false;
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

void
app_agent_beat(struct dtxn_coord *c, void *arg)
{
	struct app_agent *a = arg;
	uint64_t next = dtxn_now_ns();

	while (!dtxn_coord_stopping(c)) {
		int rc = dtxn_lease_beat(c, &a->beat);

		if (rc != 0 && a->error == 0)
			a->error = rc;
		agent_sleep(c, a, &next);
	}
}

void
app_agent_watch(struct dtxn_coord *c, void *arg)
{
	struct app_agent *a = arg;
	struct dtxn_lease_view v;
	uint16_t self = dtxn_coord_cn_node(c);
	uint64_t next = dtxn_now_ns();

	memset(&v, 0, sizeof(v));
	while (!dtxn_coord_stopping(c)) {
		uint64_t now, dead;
		int rc = dtxn_lease_poll(c, &v);

		now = dtxn_now_ns();
		dead = rc == 0 ? dtxn_lease_expired(&v, now, a->lease_ns) : 0;
		if (dead != 0 && dtxn_lease_recoverer(&v, now, a->lease_ns) == self)
			rc = agent_recover(c, a, dead, v.n_mn, now);
		if (rc != 0 && a->error == 0)
			a->error = rc;
		agent_sleep(c, a, &next);
	}
}

int
app_agent_create(const struct app_conf *c, struct dtxn_worker *w, uint32_t gid,
		 uint32_t gids_per_cn, struct app_agent *a)
{
	_Static_assert(APP_AGENT_COORDS == 2, "app_agent_coords() counts two per CN");
	a->lease_ns = (uint64_t)(c->lease_ms * 1e6 + 0.5);
	a->beat_ns = RTE_MAX(a->lease_ns / 5, (uint64_t)1);
	a->gids_per_cn = gids_per_cn;
	if (dtxn_coord_create(w, gid, app_agent_beat, a) == NULL ||
	    dtxn_coord_create(w, gid + 1, app_agent_watch, a) == NULL) {
		app_err("cannot create a CN agent: %s", rte_strerror(rte_errno));
		return APP_EXIT_FAIL;
	}
	return APP_EXIT_OK;
}
