/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The timestamp oracle client: FAA on the MN counter, with leader
 * batching of the requests of one worker's coordinators (Scythe §4.5).
 * All state is touched by the coroutines of one lcore, which switch only
 * where they yield, so it needs no atomics: the queue is a plain list of
 * the waiting coordinators' request records (struct dtxn_tso_req).
 */
#include <errno.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_log.h>
#include <rte_malloc.h>

#include "dtxn_tso.h"

RTE_LOG_REGISTER(dtxn_tso_logtype, dtxn.tso, INFO);
#define TSO_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_##level, dtxn_tso_logtype, "dtxn.tso: " fmt "\n", ##__VA_ARGS__)

struct dtxn_tso {
	dtxn_raddr_t counter;
	int (*fetch_add)(void *arg, struct dtxn_coord *c, uint64_t n, uint64_t *old);
	void *fetch_add_arg;
	unsigned max_batch;
	unsigned n_proxies;
	int (*proxy_fetch_add)(void *arg, struct dtxn_coord *c, unsigned proxy, uint64_t n,
			       uint64_t *old);
	void *proxy_arg;
	uint64_t rng;                /**< xorshift64 state of the TSO-or-proxy pick */
	bool busy;                   /**< a leader's FAA is in flight */
	struct dtxn_tso_req *head;   /**< queued for the next FAA, oldest first */
	struct dtxn_tso_req *tail;
	struct dtxn_tso_stats st;
};

dtxn_raddr_t
dtxn_tso_counter_raddr(const struct dtxn_catalog *cat)
{
	return dtxn_store_rsvd_raddr(cat, 0, DTXN_STORE_RSVD_TSO);
}

void
dtxn_tso_footprint(struct dtxn_footprint *fp)
{
	fp->bytes += sizeof(struct dtxn_tso) + DTXN_FOOTPRINT_ALLOC_SLACK;
}

struct dtxn_tso *
dtxn_tso_create(const struct dtxn_tso_conf *conf)
{
	struct dtxn_tso *tso;
	bool has_hook, has_px;

	if (conf == NULL || conf->size < offsetof(struct dtxn_tso_conf, fetch_add) ||
	    conf->max_batch > DTXN_TSO_BATCH_MAX) {
		rte_errno = EINVAL;
		return NULL;
	}
	has_hook = conf->size >= offsetof(struct dtxn_tso_conf, n_proxies) && conf->fetch_add != NULL;
	has_px = conf->size >= sizeof(*conf) && conf->n_proxies != 0;
	if ((!has_hook && (conf->counter == 0 || (DTXN_RADDR_OFF(conf->counter) & 7) != 0)) ||
	    (has_px && (conf->n_proxies > DTXN_TSO_PROXIES_MAX || conf->proxy_fetch_add == NULL))) {
		rte_errno = EINVAL;
		return NULL;
	}
	tso = rte_zmalloc_socket("dtxn_tso", sizeof(*tso), RTE_CACHE_LINE_SIZE, conf->socket_id);
	if (tso == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	tso->counter = conf->counter;
	if (has_hook) {
		tso->fetch_add = conf->fetch_add;
		tso->fetch_add_arg = conf->fetch_add_arg;
	}
	if (has_px) {
		tso->n_proxies = conf->n_proxies;
		tso->proxy_fetch_add = conf->proxy_fetch_add;
		tso->proxy_arg = conf->proxy_arg;
		tso->rng = conf->seed * UINT64_C(0x9e3779b97f4a7c15) + 1; /* never 0 */
	}
	tso->max_batch = conf->max_batch != 0 ? conf->max_batch : DTXN_TSO_BATCH_DEFAULT;
	return tso;
}

void
dtxn_tso_destroy(struct dtxn_tso *tso)
{
	if (tso == NULL)
		return;
	if (tso->busy || tso->head != NULL)
		TSO_LOG(ERR, "client destroyed with requests in flight");
	rte_free(tso);
}

static void
tso_enqueue(struct dtxn_tso *tso, struct dtxn_tso_req *w)
{
	w->next = NULL;
	if (tso->tail == NULL)
		tso->head = w;
	else
		tso->tail->next = w;
	tso->tail = w;
}

static struct dtxn_tso_req *
tso_dequeue(struct dtxn_tso *tso)
{
	struct dtxn_tso_req *w = tso->head;

	if (w != NULL) {
		tso->head = w->next;
		if (tso->head == NULL)
			tso->tail = NULL;
		w->next = NULL;
	}
	return w;
}

/* Wakes a queued waiter (it waits with one expected completion). */
static void
tso_wake(struct dtxn_tso_req *w)
{
	dtxn_co_complete_lc(w->c->co, 0);
}

/*
 * Where a batch goes (Scythe §4.5: "randomly selects a TSO proxy or TSO
 * service"): proxy 0..n_proxies - 1, or n_proxies for the TSO itself.
 */
static unsigned
tso_pick(struct dtxn_tso *tso)
{
	uint64_t x = tso->rng;

	if (tso->n_proxies == 0)
		return 0;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	tso->rng = x;
	return (unsigned)((x >> 32) % (tso->n_proxies + 1));
}

/* The leader's part: one FAA for itself and the followers it takes. */
static int
tso_lead(struct dtxn_tso *tso, struct dtxn_tso_req *me)
{
	struct dtxn_tso_req *batch = NULL, **link = &batch, *w, *next;
	struct dtxn_batch b;
	uint64_t n = 1, old = 0, k;
	unsigned pick;
	int rc;

	tso->busy = true;
	if (!me->lead && tso->max_batch > 1) {
		/*
		 * A fresh leader lets the group form first: one yield runs every
		 * coroutine of this lcore that is ready now, and each one that
		 * asks for a timestamp queues behind the leader (busy is set), so
		 * requesters that arrive together share this FAA instead of the
		 * next one (Scythe §4.5: followers join the list, the leader
		 * counts n).
		 */
		dtxn_co_yield_lc(me->c->co);
	}
	while (n < tso->max_batch && (w = tso_dequeue(tso)) != NULL) {
		*link = w;
		link = &w->next;
		n++;
	}
	pick = tso_pick(tso);
	if (pick < tso->n_proxies) {
		rc = tso->proxy_fetch_add(tso->proxy_arg, me->c, pick, n, &old);
		tso->st.proxied++;
	} else if (tso->fetch_add != NULL) {
		rc = tso->fetch_add(tso->fetch_add_arg, me->c, n, &old);
	} else {
		dtxn_batch_init(&b, me->c);
		dtxn_batch_faa(&b, tso->counter, &old, n, true);
		rc = dtxn_batch_run(&b);
		dtxn_batch_done(&b);
	}
	tso->st.faas++;
	if (rc != 0) {
		rc = rc == -ENOBUFS ? -ENOBUFS : -EIO;
		tso->st.errors++;
		TSO_LOG(WARNING, "timestamp batch failed (%d)", rc);
	} else {
		tso->st.requests += n;
		if (n > tso->st.max_batch)
			tso->st.max_batch = n;
	}
	/* [old + 1, old + n]: the leader first, then the followers in queue order */
	me->ts = old + 1;
	me->err = rc;
	me->done = true;
	for (w = batch, k = 2; w != NULL; w = next, k++) {
		next = w->next;
		w->ts = old + k;
		w->err = rc;
		w->done = true;
		tso_wake(w);
	}
	/* requests that came during the FAA: the oldest leads the next one
	 * (busy stays set until it runs, so nobody else starts an FAA) */
	if (tso->max_batch == 1) {
		tso->busy = false; /* no group: nothing queues */
		return rc;
	}
	w = tso_dequeue(tso);
	tso->busy = w != NULL;
	if (w != NULL) {
		w->lead = true;
		tso_wake(w);
	}
	return rc;
}

int
dtxn_tso_get_lc(struct dtxn_tso *tso, struct dtxn_coord *c, struct dtxn_tso_req *me,
		uint64_t *ts)
{
	if (tso == NULL || c == NULL || me == NULL || ts == NULL)
		return -EINVAL;
	memset(me, 0, sizeof(*me));
	me->c = c;
	if (tso->max_batch == 1) {
		/* no group: every request posts its own FAA, concurrently */
		me->lead = true;
		if (tso_lead(tso, me) != 0)
			return me->err;
		*ts = me->ts;
		return 0;
	}
	if (tso->busy || tso->head != NULL) {
		/* follower: wait to be served, or to be made the next leader */
		tso_enqueue(tso, me);
		while (!me->done && !me->lead) {
			dtxn_co_expect_lc(c->co, 1);
			(void)dtxn_co_wait_lc(c->co);
		}
		if (me->done) {
			if (me->err == 0)
				*ts = me->ts;
			return me->err;
		}
	}
	if (tso_lead(tso, me) != 0)
		return me->err;
	*ts = me->ts;
	return 0;
}

int
dtxn_tso_txn_ts(struct dtxn_tso *tso, struct dtxn_txn *t, struct dtxn_tso_req *req,
		uint64_t *ts)
{
	return dtxn_batch_reason(dtxn_tso_get_lc(tso, t != NULL ? t->coord : NULL, req, ts));
}

void
dtxn_tso_stats_get(const struct dtxn_tso *tso, struct dtxn_tso_stats *st)
{
	if (tso == NULL || st == NULL)
		return;
	*st = tso->st;
}
