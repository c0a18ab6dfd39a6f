/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The timestamp service "in the compute pool" (Motor §5, "Timestamp
 * Generation"; Lotus §5): one 64-bit counter in the memory of one CN, the
 * host. Its own coordinators add to it with a CPU atomic (no round trip);
 * the other CNs' coordinators send one message per lib/tso batch, and the
 * host's handler adds while the request is in flight. Either way the add
 * happens after the request began and before its reply, so a timestamp
 * exceeds every one handed out before it was asked for: the real-time
 * order dtxn_tso.h promises, for every coordinator of every CN.
 *
 * Surviving the host (dtxn_tso.h): the counter never passes the limit,
 * and the limit is always a high-water mark already stored in MN memory
 * (raised by FAA, so concurrent raisers only leave gaps); the CN that
 * recovers a dead host takes a block above the stored mark and names
 * itself in the host word; clients READ that word when the host they
 * know does not answer.
 *
 * The handler is not idempotent on purpose: a resent request (lib/rpc is
 * at-least-once) takes a second range; the first is never handed out
 * (its reply is dropped as stale), which leaves a gap, never a duplicate.
 *
 * Wire format: request [n u64][mark u64] (mark: a value of the stored
 * high-water mark the client raised it to, 0 if none); reply [status
 * u64][value u64]: TSO_CN_OK (value: the counter before the add),
 * TSO_CN_USED_UP (the block is used up: raise the mark), TSO_CN_NOT_HOST
 * (value: the host this CN knows).
 */
#include <errno.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_log.h>
#include <rte_malloc.h>

#include "dtxn_tso.h"
#include "tso_private.h"

enum { TSO_CN_OK = 0, TSO_CN_USED_UP = 1, TSO_CN_NOT_HOST = 2 };

/** struct dtxn_tso_cn.host of a rejoined process before it read the host word. */
#define TSO_CN_HOST_UNKNOWN UINT16_MAX

/** The handler's argument on one CN: which node answers. */
struct tso_cn_node {
	struct dtxn_tso_cn *s;
	uint16_t node;
};

struct dtxn_tso_cn {
	uint64_t counter;          /**< the last timestamp handed out; atomics only */
	uint64_t limit;            /**< counter never passes it; a stored mark; atomics only */
	uint16_t host;             /**< the host as this process knows it; atomics only */
	uint8_t rpc_type;
	uint32_t block;
	dtxn_raddr_t mark_ra;      /**< MN 0's high-water mark word */
	dtxn_raddr_t host_ra;      /**< MN 0's host word (node id + 1; 0: the first host) */
	uint16_t first_host;
	uint64_t retry_ns;
	bool failover;
	struct dtxn_tso_cn_stats st; /**< counters (relaxed atomics); counter, limit, host unused */
	struct tso_cn_node nodes[DTXN_MAX_NODES];
};

struct dtxn_tso_cn *
dtxn_tso_cn_create(const struct dtxn_tso_cn_conf *conf)
{
	struct dtxn_tso_cn *s;

	if (conf == NULL || conf->size < sizeof(*conf) || conf->rpc_type >= DTXN_RPC_TYPES ||
	    conf->cat == NULL || conf->host >= DTXN_MAX_NODES ||
	    dtxn_store_rsvd_raddr(conf->cat, 0, DTXN_STORE_RSVD_TSO_CN_MARK) == 0) {
		rte_errno = EINVAL;
		return NULL;
	}
	s = rte_zmalloc_socket("dtxn_tso_cn", sizeof(*s), RTE_CACHE_LINE_SIZE, conf->socket_id);
	if (s == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	s->host = conf->host;
	s->first_host = conf->host;
	s->rpc_type = conf->rpc_type;
	s->block = conf->block != 0 ? conf->block : DTXN_TSO_CN_BLOCK_DEFAULT;
	s->mark_ra = dtxn_store_rsvd_raddr(conf->cat, 0, DTXN_STORE_RSVD_TSO_CN_MARK);
	s->host_ra = dtxn_store_rsvd_raddr(conf->cat, 0, DTXN_STORE_RSVD_TSO_CN_HOST);
	s->retry_ns = conf->retry_ns != 0 ? conf->retry_ns : DTXN_TSO_CN_RETRY_NS_DEFAULT;
	if (!conf->failover)
		s->limit = UINT64_MAX; /* no mark: the counter is the host's alone */
	s->failover = conf->failover;
	if (conf->failover && conf->rejoin)
		s->host = TSO_CN_HOST_UNKNOWN; /* read the host word first: never assume the first host */
	for (unsigned i = 0; i < DTXN_MAX_NODES; i++) {
		s->nodes[i].s = s;
		s->nodes[i].node = (uint16_t)i;
	}
	return s;
}

struct dtxn_tso_cn *
dtxn_tso_cn_create_db(const struct dtxn_db *db, uint8_t rpc_type)
{
	const struct dtxn_fabric_conf *fc = db != NULL ? dtxn_fabric_conf(db->fabric) : NULL;
	struct dtxn_tso_cn_conf tc = {
		.size = sizeof(tc),
		.rpc_type = rpc_type,
		.socket_id = SOCKET_ID_ANY,
	};

	if (fc == NULL) {
		rte_errno = EINVAL;
		return NULL;
	}
	tc.host = fc->n_mn;
	tc.cat = &db->cat;
	tc.failover = db->conf.cn_recovery != 0;
	tc.rejoin = fc->incarnation != 0;
	return dtxn_tso_cn_create(&tc);
}

void
dtxn_tso_cn_destroy(struct dtxn_tso_cn *s)
{
	rte_free(s);
}

static void
tso_cn_count(uint64_t *stat)
{
	__atomic_fetch_add(stat, 1, __ATOMIC_RELAXED);
}

/* Raises *@p word to at least @p v. */
static void
tso_cn_max(uint64_t *word, uint64_t v)
{
	uint64_t cur = __atomic_load_n(word, __ATOMIC_ACQUIRE);

	while (cur < v &&
	       !__atomic_compare_exchange_n(word, &cur, v, false, __ATOMIC_SEQ_CST, __ATOMIC_ACQUIRE))
		;
}

/* Takes n timestamps below the limit: 0 and *old, or -EAGAIN (used up). */
static int
tso_cn_take(struct dtxn_tso_cn *s, uint64_t n, uint64_t *stat, uint64_t *old)
{
	uint64_t cur = __atomic_load_n(&s->counter, __ATOMIC_ACQUIRE);

	do {
		if (cur + n > __atomic_load_n(&s->limit, __ATOMIC_ACQUIRE))
			return -EAGAIN;
	} while (!__atomic_compare_exchange_n(&s->counter, &cur, cur + n, false, __ATOMIC_SEQ_CST,
					      __ATOMIC_ACQUIRE));
	tso_cn_count(stat);
	*old = cur;
	return 0;
}

/* One signaled WR on MN 0, waited for: 0, -EIO or -ENOBUFS. */
static int
tso_cn_wr(struct dtxn_batch *b)
{
	int rc = dtxn_batch_run(b);

	dtxn_batch_done(b);
	return rc == 0 || rc == -ENOBUFS ? rc : -EIO;
}

/* FAA of a block on the stored mark: *@p from is the mark before, the new mark is *@p from + block. */
static int
tso_cn_raise(struct dtxn_tso_cn *s, struct dtxn_coord *c, uint64_t *from)
{
	struct dtxn_batch b;

	dtxn_batch_init(&b, c);
	dtxn_batch_faa(&b, s->mark_ra, from, s->block, true);
	tso_cn_count(&s->st.raises);
	return tso_cn_wr(&b);
}

/* READs the host word into the process's view: the host's node id. */
static int
tso_cn_find_host(struct dtxn_tso_cn *s, struct dtxn_coord *c, uint16_t *host)
{
	struct dtxn_batch b;
	uint64_t word = 0;
	int rc;

	dtxn_batch_init(&b, c);
	dtxn_batch_read(&b, s->host_ra, &word, sizeof(word), true);
	rc = tso_cn_wr(&b);
	if (rc != 0)
		return rc;
	*host = word == 0 || word > DTXN_MAX_NODES ? s->first_host : (uint16_t)(word - 1);
	__atomic_store_n(&s->host, *host, __ATOMIC_RELEASE);
	return 0;
}

/* The handler, on CN @p arg's node: [n][mark] -> [status][value]. */
static int
tso_cn_handle(void *arg, uint16_t src_node, const void *req, uint32_t len, void *resp)
{
	const struct tso_cn_node *me = arg;
	struct dtxn_tso_cn *s = me->s;
	uint64_t in[2], out[2] = { TSO_CN_OK, 0 };

	RTE_SET_USED(src_node);
	if (len != sizeof(in))
		return -1;
	memcpy(in, req, sizeof(in));
	if (in[0] == 0 || in[0] > DTXN_TSO_BATCH_MAX)
		return -1;
	if (__atomic_load_n(&s->host, __ATOMIC_ACQUIRE) != me->node) {
		out[0] = TSO_CN_NOT_HOST;
		out[1] = __atomic_load_n(&s->host, __ATOMIC_ACQUIRE);
	} else {
		if (in[1] != 0)
			tso_cn_max(&s->limit, in[1]); /* the client stored it before asking */
		if (tso_cn_take(s, in[0], &s->st.remote, &out[1]) != 0) {
			out[0] = TSO_CN_USED_UP;
			out[1] = __atomic_load_n(&s->limit, __ATOMIC_ACQUIRE);
		}
	}
	memcpy(resp, out, sizeof(out));
	return (int)sizeof(out);
}

int
dtxn_tso_cn_register(struct dtxn_tso_cn *s, struct dtxn_rpc *rpc)
{
	uint16_t node;

	if (s == NULL || rpc == NULL)
		return -EINVAL;
	node = dtxn_rpc_worker(rpc)->cn_node;
	if (node >= DTXN_MAX_NODES)
		return -EINVAL;
	return dtxn_rpc_register(rpc, s->rpc_type, tso_cn_handle, &s->nodes[node]);
}

/* One request to @p host: 0 and the reply in out[], or the call's error. */
static int
tso_cn_ask(struct dtxn_tso_cn *s, struct dtxn_rpc_ep *ep, uint16_t host, const uint64_t in[2],
	   uint64_t out[2])
{
	uint8_t resp[DTXN_RPC_RESP_MAX];
	struct dtxn_rpc_call call;

	memset(&call, 0, sizeof(call));
	call.dst_node = host;
	call.type = s->rpc_type;
	call.req = in;
	call.req_len = 2 * sizeof(uint64_t);
	call.resp = resp;
	if (dtxn_rpc_call_lc(ep, &call, 1) != 0)
		return call.status != 0 ? call.status : -EIO;
	if (call.resp_len != 2 * sizeof(uint64_t))
		return -EIO;
	memcpy(out, resp, 2 * sizeof(uint64_t));
	return 0;
}

int
dtxn_tso_cn_fetch_add_lc(struct dtxn_tso_cn *s, struct dtxn_coord *c, struct dtxn_rpc_ep *ep,
			 uint64_t n, uint64_t *old)
{
	uint16_t self, host, prev;
	uint64_t in[2], out[2], from;
	int rc;

	if (s == NULL || c == NULL || old == NULL || n == 0 || n > DTXN_TSO_BATCH_MAX)
		return -EINVAL;
	self = c->worker->cn_node;
	in[0] = n;
	in[1] = 0;
	for (;;) {
		host = __atomic_load_n(&s->host, __ATOMIC_ACQUIRE);
		if (host == TSO_CN_HOST_UNKNOWN) {
			rc = tso_cn_find_host(s, c, &host); /* a rejoined CN: who serves now */
			if (rc != 0)
				return rc;
			continue;
		}
		if (host == self) {
			if (tso_cn_take(s, n, &s->st.local, old) == 0)
				return 0;
			rc = tso_cn_raise(s, c, &from); /* used up: one more block */
			if (rc != 0)
				return rc;
			tso_cn_max(&s->limit, from + s->block);
			continue;
		}
		if (ep == NULL)
			return -EIO;
		rc = tso_cn_ask(s, ep, host, in, out);
		if (rc == 0 && out[0] == TSO_CN_OK) {
			*old = out[1];
			return 0;
		}
		tso_cn_count(&s->st.retries);
		if (rc == 0 && out[0] == TSO_CN_USED_UP) {
			/* raise the stored mark for the host, which adopts it with our next request */
			rc = tso_cn_raise(s, c, &from);
			if (rc != 0)
				return rc;
			in[1] = from + s->block;
			continue;
		}
		if (rc == 0 && out[0] == TSO_CN_NOT_HOST && out[1] < DTXN_MAX_NODES &&
		    out[1] != host) {
			__atomic_store_n(&s->host, (uint16_t)out[1], __ATOMIC_RELEASE);
			continue;
		}
		if (rc == 0 && out[0] != TSO_CN_NOT_HOST)
			return -EIO; /* a bad reply */
		/*
		 * No answer, or a CN that is no host and knows none (one that
		 * rejoined and has not read the host word yet): the host may be dead. Learn who serves now from the
		 * host word, for the next request, and fail this one: the
		 * transaction in flight aborts (it may hold what the dead CN
		 * granted, e.g. Lotus's locks, which its recovery waits for). If
		 * the service has not moved yet, wait retry_ns first, so that
		 * the retried transactions do not spin while the recovery runs.
		 */
		prev = host;
		rc = tso_cn_find_host(s, c, &host);
		if (rc != 0)
			return rc;
		if (host == prev)
			dtxn_co_sleep_until_lc(c->co, dtxn_now_ns() + s->retry_ns);
		return -ETIMEDOUT;
	}
}

int
dtxn_tso_cn_take_over_lc(struct dtxn_tso_cn *s, struct dtxn_coord *c, uint16_t dead,
			 struct dtxn_recovery *rec)
{
	struct dtxn_recovery_step *st = NULL;
	struct dtxn_batch b;
	uint64_t word, from;
	uint16_t host, self;
	int rc;

	if (s == NULL || c == NULL)
		return -EINVAL;
	self = c->worker->cn_node;
	rc = tso_cn_find_host(s, c, &host);
	if (rc != 0 || host != dead)
		return rc;
	if (!s->failover)
		return -ENOTSUP;
	if (rec != NULL)
		st = dtxn_recovery_step_begin(rec, "tso", "blocks");
	/* a block above every timestamp the dead host handed out (all <= the stored mark) */
	rc = tso_cn_raise(s, c, &from);
	if (rc != 0)
		goto out;
	tso_cn_max(&s->counter, from);
	tso_cn_max(&s->limit, from + s->block);
	word = (uint64_t)self + 1;
	dtxn_batch_init(&b, c);
	dtxn_batch_write(&b, s->host_ra, &word, sizeof(word), true);
	rc = tso_cn_wr(&b);
	if (rc != 0)
		goto out;
	__atomic_store_n(&s->host, self, __ATOMIC_RELEASE);
	tso_cn_count(&s->st.takeovers);
	rc = 1;
out:
	if (st != NULL) {
		st->work = rc == 1;
		dtxn_recovery_step_end(st);
	}
	return rc;
}

void
dtxn_tso_cn_stats(const struct dtxn_tso_cn *s, uint64_t *counter, uint64_t *local,
		  uint64_t *remote)
{
	struct dtxn_tso_cn_stats st;

	if (s == NULL)
		return;
	dtxn_tso_cn_stats_get(s, &st);
	if (counter != NULL)
		*counter = st.counter;
	if (local != NULL)
		*local = st.local;
	if (remote != NULL)
		*remote = st.remote;
}

void
dtxn_tso_cn_stats_get(const struct dtxn_tso_cn *s, struct dtxn_tso_cn_stats *st)
{
	if (s == NULL || st == NULL)
		return;
	st->counter = __atomic_load_n(&s->counter, __ATOMIC_ACQUIRE);
	st->limit = __atomic_load_n(&s->limit, __ATOMIC_ACQUIRE);
	st->local = __atomic_load_n(&s->st.local, __ATOMIC_RELAXED);
	st->remote = __atomic_load_n(&s->st.remote, __ATOMIC_RELAXED);
	st->raises = __atomic_load_n(&s->st.raises, __ATOMIC_RELAXED);
	st->retries = __atomic_load_n(&s->st.retries, __ATOMIC_RELAXED);
	st->takeovers = __atomic_load_n(&s->st.takeovers, __ATOMIC_RELAXED);
	st->host = __atomic_load_n(&s->host, __ATOMIC_ACQUIRE);
}
