/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CN failure detection by leases in MN memory (doc/guides/cluster.md,
 * "Recovery"): per CN a heartbeat word, bumped by its agent's WRITE, and a
 * state word written by the survivor that recovered it; both in lib/store's
 * lease area on MN 0 (dtxn_store_lease_raddr()). Only fabric WRs touch
 * them; time only from dtxn_now_ns() (virtual on sim).
 */
#include <errno.h>
#include <string.h>

#include "txn_private.h"

/** Pause of a coordinator whose CN's lease is not valid, ns. */
#define LEASE_HOLD_PAUSE_NS 100000
/** Sleep of a coordinator parked on a fenced CN, ns. */
#define LEASE_PARK_NS 1000000000ull
/** txn_lease_hold(): how long a coordinator of a stopping run waits for a renewal, ns */
#define LEASE_STOP_WAIT_NS 2000000000ull

/* Runs @p b and maps its outcome to 0 / -EIO. */
static int
lease_run(struct dtxn_batch *b)
{
	int rc = dtxn_batch_run(b);

	dtxn_batch_done(b);
	return rc == 0 ? 0 : -EIO;
}

int
dtxn_lease_beat(struct dtxn_coord *c, uint64_t *beat)
{
	dtxn_raddr_t ra;
	struct dtxn_batch b;

	if (c == NULL || beat == NULL)
		return -EINVAL;
	ra = dtxn_store_lease_raddr(&c->worker->db->cat, c->worker->cn_node, false);
	if (ra == 0)
		return -EINVAL;
	(*beat)++;
	dtxn_batch_init(&b, c);
	dtxn_batch_write(&b, ra, beat, 8, true);
	return lease_run(&b);
}

void
dtxn_lease_view_update(struct dtxn_lease_view *v, uint16_t n0, uint16_t n_cn, uint64_t now,
		       const uint64_t *beat, const uint64_t *state)
{
	uint64_t excess = 0;

	/* time the watcher did not watch (it was stopped, descheduled or
	 * recovering) is no CN's fault: suspect on watched time only */
	if (v->started && v->period_ns != 0 && now > v->polled_ns + 2 * v->period_ns) {
		excess = now - v->polled_ns - v->period_ns;
		v->unwatched_ns += excess;
		v->gaps++;
	}
	v->polled_ns = now;
	for (uint16_t n = n0; n < n0 + n_cn && n < DTXN_MAX_NODES; n++) {
		if (!v->started || beat[n] != v->beat[n] || state[n] != v->state[n])
			v->moved_ns[n] = now;
		else
			v->moved_ns[n] = RTE_MIN(v->moved_ns[n] + excess, now);
		v->beat[n] = beat[n];
		v->state[n] = state[n];
	}
	v->n_mn = n0;
	v->n_cn = n_cn;
	v->started = true;
}

int
dtxn_lease_poll(struct dtxn_coord *c, struct dtxn_lease_view *v)
{
	uint64_t beat[DTXN_MAX_NODES], state[DTXN_MAX_NODES];
	const struct dtxn_fabric_conf *fc;
	const struct dtxn_catalog *cat;
	struct dtxn_batch b;
	uint64_t now;
	uint16_t n0;
	uint32_t len;
	int rc;

	if (c == NULL || v == NULL)
		return -EINVAL;
	cat = &c->worker->db->cat;
	fc = dtxn_fabric_conf(c->worker->db->fabric);
	n0 = fc->n_mn;
	len = (uint32_t)fc->n_cn * 8u;
	if (dtxn_store_lease_raddr(cat, n0, false) == 0)
		return -EINVAL;
	now = dtxn_now_ns(); /* what the READs return is as of their posting (or later) */
	dtxn_batch_init(&b, c);
	dtxn_batch_read(&b, dtxn_store_lease_raddr(cat, n0, false), &beat[n0], len, true);
	dtxn_batch_read(&b, dtxn_store_lease_raddr(cat, n0, true), &state[n0], len, true);
	rc = lease_run(&b);
	if (rc != 0)
		return rc;
	dtxn_lease_view_update(v, n0, fc->n_cn, now, beat, state);
	return 0;
}

/* A state in which the CN may still run: neither recovered nor gone cleanly. */
static bool
lease_live(unsigned st)
{
	return st != DTXN_LEASE_STATE_RECOVERED && st != DTXN_LEASE_STATE_LEFT;
}

uint64_t
dtxn_lease_expired(const struct dtxn_lease_view *v, uint64_t now_ns, uint64_t lease_ns)
{
	uint64_t mask = 0;

	if (v == NULL || !v->started)
		return 0;
	if (v->polled_ns != 0 && v->polled_ns < now_ns)
		now_ns = v->polled_ns;
	for (uint16_t n = v->n_mn; n < v->n_mn + v->n_cn; n++) {
		unsigned st = DTXN_LEASE_WORD_STATE(v->state[n]);

		if (st == DTXN_LEASE_STATE_FENCED ||
		    (lease_live(st) && v->beat[n] != 0 &&
		     now_ns > v->moved_ns[n] && now_ns - v->moved_ns[n] > lease_ns))
			mask |= UINT64_C(1) << n;
	}
	return mask;
}

uint16_t
dtxn_lease_recoverer(const struct dtxn_lease_view *v, uint64_t now_ns, uint64_t lease_ns)
{
	uint64_t dead = dtxn_lease_expired(v, now_ns, lease_ns);

	if (v == NULL || !v->started)
		return UINT16_MAX;
	for (uint16_t n = v->n_mn; n < v->n_mn + v->n_cn; n++)
		if (!(dead & (UINT64_C(1) << n)) && lease_live(DTXN_LEASE_WORD_STATE(v->state[n])))
			return n;
	return UINT16_MAX;
}

int
dtxn_lease_mark_recovered(struct dtxn_coord *c, uint16_t node, uint32_t inc)
{
	const uint64_t recovered = DTXN_LEASE_WORD(inc, DTXN_LEASE_STATE_RECOVERED);
	struct dtxn_batch b;
	dtxn_raddr_t ra;

	if (c == NULL)
		return -EINVAL;
	ra = dtxn_store_lease_raddr(&c->worker->db->cat, node, true);
	if (ra == 0)
		return -EINVAL;
	dtxn_batch_init(&b, c);
	dtxn_batch_write(&b, ra, &recovered, 8, true);
	return lease_run(&b);
}

/* CAS of CN @p node's state word from @p expect to @p swap; its old value into *@p old. */
static int
lease_cas(struct dtxn_coord *c, uint16_t node, uint64_t expect, uint64_t swap, uint64_t *old)
{
	struct dtxn_batch b;
	dtxn_raddr_t ra;

	ra = dtxn_store_lease_raddr(&c->worker->db->cat, node, true);
	if (ra == 0)
		return -EINVAL;
	dtxn_batch_init(&b, c);
	dtxn_batch_cas(&b, ra, old, expect, swap, true);
	return lease_run(&b);
}

int
dtxn_lease_fence(struct dtxn_coord *c, uint16_t node, uint64_t seen)
{
	uint32_t inc = DTXN_LEASE_WORD_INC(seen);
	uint64_t old = 0;
	int rc;

	if (c == NULL)
		return -EINVAL;
	if (DTXN_LEASE_WORD_STATE(seen) == DTXN_LEASE_STATE_FENCED)
		return 0; /* a survivor fenced it before (and may have died since) */
	if (DTXN_LEASE_WORD_STATE(seen) != DTXN_LEASE_STATE_ALIVE)
		return -EAGAIN;
	rc = lease_cas(c, node, seen, DTXN_LEASE_WORD(inc, DTXN_LEASE_STATE_FENCED), &old);
	if (rc != 0)
		return rc;
	return old == seen || old == DTXN_LEASE_WORD(inc, DTXN_LEASE_STATE_FENCED) ? 0 : -EAGAIN;
}

int
dtxn_lease_renew(struct dtxn_coord *c, uint64_t *beat, struct dtxn_lease_gate *g,
		 uint64_t lease_ns, uint64_t guard_ns)
{
	uint64_t state = 0, t_post, old = 0;
	dtxn_raddr_t ra, rs;
	struct dtxn_batch b;
	unsigned st;
	int rc;

	if (c == NULL || beat == NULL || g == NULL || guard_ns >= lease_ns)
		return -EINVAL;
	ra = dtxn_store_lease_raddr(&c->worker->db->cat, c->worker->cn_node, false);
	rs = dtxn_store_lease_raddr(&c->worker->db->cat, c->worker->cn_node, true);
	if (ra == 0 || rs == 0)
		return -EINVAL;
	if (__atomic_load_n(&g->fenced, __ATOMIC_ACQUIRE))
		return -ESHUTDOWN;
	(*beat)++;
	t_post = dtxn_now_ns();
	dtxn_batch_init(&b, c);
	dtxn_batch_write(&b, ra, beat, 8, true);
	dtxn_batch_read(&b, rs, &state, 8, true); /* after the WRITE: one QP, RC order */
	rc = lease_run(&b);
	if (rc != 0)
		return rc;
	st = DTXN_LEASE_WORD_STATE(state);
	if (state == DTXN_LEASE_WORD(g->inc, DTXN_LEASE_STATE_ALIVE)) {
		/* no survivor fenced it before the READ: none recovers before t_post + lease */
		__atomic_store_n(&g->valid_until_ns, t_post + lease_ns - guard_ns, __ATOMIC_RELEASE);
		return 0;
	}
	if (DTXN_LEASE_WORD_INC(state) < g->inc) {
		if (lease_live(st))
			return 0; /* the previous incarnation is not recovered yet: wait */
		rc = lease_cas(c, c->worker->cn_node, state,
			       DTXN_LEASE_WORD(g->inc, DTXN_LEASE_STATE_ALIVE), &old);
		if (rc == 0 && old == state)
			__atomic_store_n(&g->rejoined_ns, dtxn_now_ns(), __ATOMIC_RELEASE);
		return rc; /* the next beat renews the new incarnation's lease */
	}
	__atomic_store_n(&g->valid_until_ns, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&g->fenced, DTXN_LEASE_FENCED_BY_PEER, __ATOMIC_RELEASE);
	return -ESHUTDOWN;
}

/*
 * The CN is fenced: this coordinator stops where it is, its transaction
 * open, exactly as if its process had been killed here. Its recoverer
 * decides the transaction (rolled back, or kept when its writes had
 * completed) and settles its bookkeeping once the process is gone; the
 * coordinator itself records no outcome it cannot know. Never returns:
 * the process exits (APP_EXIT_FENCED) while it sleeps.
 */
static void __attribute__((noreturn))
txn_lease_park(struct dtxn_coord *c)
{
	for (;;)
		dtxn_co_sleep_until_lc(c->co, dtxn_now_ns() + LEASE_PARK_NS);
}

void
dtxn_coord_park(struct dtxn_coord *c)
{
	txn_lease_park(c);
}

void
dtxn_coord_unfinished(struct dtxn_coord *c)
{
	struct dtxn_lease_gate *g = ((struct txn_worker *)c->worker)->gate;

	/* a lost MN refused the post: the run ends on that (exit 3, every CN
	 * alike); fencing here would make this CN's end read as a lapsed
	 * lease (its gate's validity zeroed: tcl-hosts 2.3, mn1 SIGKILLed) */
	if (g != NULL && dtxn_worker_lost_nodes(c->worker) == 0) {
		__atomic_store_n(&g->valid_until_ns, 0, __ATOMIC_RELEASE);
		__atomic_store_n(&g->fenced, DTXN_LEASE_FENCED_UNFINISHED, __ATOMIC_RELEASE);
	}
	txn_lease_park(c);
}

int
txn_lease_hold(struct dtxn_coord *c)
{
	struct dtxn_lease_gate *g = ((struct txn_worker *)c->worker)->gate;
	uint64_t stop_since = 0;
	bool counted = false;

	if (g == NULL || txn_coord_of(c)->lease_exempt)
		return 0;
	for (;;) {
		if (__atomic_load_n(&g->fenced, __ATOMIC_ACQUIRE))
			txn_lease_park(c);
		if (dtxn_now_ns() < __atomic_load_n(&g->valid_until_ns, __ATOMIC_ACQUIRE))
			return 0;
		/* a stopping coordinator waits too, for a while: the CN's renewer
		 * beats until the last coordinator of its worker has ended
		 * (app/dtxn-app agent_beating()). Giving up at once when the run
		 * stopped left a transaction whose first writes had landed with
		 * neither its commit nor its undo posted (Lotus's INVISIBLE
		 * cells, counted by the invariants) after a worker descheduled
		 * past its lease across the deadline (testing.md, "Lotus's
		 * conservation"); no renewal within LEASE_STOP_WAIT_NS (a renewer
		 * on another worker that has ended) gives up as before */
		if (dtxn_coord_stopping(c)) {
			if (stop_since == 0)
				stop_since = dtxn_now_ns();
			else if (dtxn_now_ns() - stop_since > LEASE_STOP_WAIT_NS)
				return -ESHUTDOWN;
		}
		if (!counted) {
			__atomic_fetch_add(&g->held, 1, __ATOMIC_RELAXED);
			counted = true;
		}
		dtxn_co_sleep_until_lc(c->co, dtxn_now_ns() + LEASE_HOLD_PAUSE_NS);
	}
}

void
txn_lease_refused(struct dtxn_coord *c)
{
	struct dtxn_lease_gate *g = ((struct txn_worker *)c->worker)->gate;

	if (g == NULL || txn_coord_of(c)->lease_exempt ||
	    dtxn_now_ns() < __atomic_load_n(&g->valid_until_ns, __ATOMIC_ACQUIRE))
		return;
	__atomic_store_n(&g->valid_until_ns, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&g->fenced, DTXN_LEASE_FENCED_SELF, __ATOMIC_RELEASE);
	txn_lease_park(c);
}

int
dtxn_worker_set_lease_gate(struct dtxn_worker *w, struct dtxn_lease_gate *g)
{
	if (w == NULL)
		return -EINVAL;
	((struct txn_worker *)w)->gate = g;
	return 0;
}

void
dtxn_coord_lease_exempt(struct dtxn_coord *c)
{
	if (c != NULL)
		txn_coord_of(c)->lease_exempt = true;
}

void
dtxn_coord_set_linger(struct dtxn_coord *c, const uint32_t *flag)
{
	if (c != NULL)
		txn_coord_of(c)->linger = flag;
}

int
dtxn_lease_leave(struct dtxn_coord *c, const struct dtxn_lease_gate *g)
{
	uint64_t old = 0;

	if (c == NULL || g == NULL)
		return -EINVAL;
	return lease_cas(c, c->worker->cn_node, DTXN_LEASE_WORD(g->inc, DTXN_LEASE_STATE_ALIVE),
			 DTXN_LEASE_WORD(g->inc, DTXN_LEASE_STATE_LEFT), &old);
}
