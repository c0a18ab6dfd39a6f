/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Workers (one per lcore: scheduler, CQ, a QP per MN, address cache, CQ
 * poller) and coordinators (coroutine trampoline, scratch arena, WR pool).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_malloc.h>

#include "txn_private.h"

#define WORKER_POLL_BURST 32

/* ------------------------------------------------------------------ */
/* CQ poller                                                          */
/* ------------------------------------------------------------------ */

static unsigned
worker_poll_cq(void *arg)
{
	struct dtxn_worker *w = arg;
	struct dtxn_cqe cqes[WORKER_POLL_BURST];
	unsigned total = 0, n, i;

	do {
		n = dtxn_cq_poll(w->cq, cqes, WORKER_POLL_BURST);
		for (i = 0; i < n; i++) {
			uint64_t id = cqes[i].wr_id;
			int st = cqes[i].status == DTXN_WC_SUCCESS ? 0 : -EIO;

			if (unlikely(cqes[i].status == DTXN_WC_FATAL_ERR) &&
			    cqes[i].src_node < DTXN_MASK_NODES)
				__atomic_fetch_or(&w->lost_nodes, UINT64_C(1) << cqes[i].src_node,
						  __ATOMIC_RELAXED); /* the peer is gone */
			if ((cqes[i].opcode == DTXN_WR_RECV || cqes[i].opcode == DTXN_WR_SEND) &&
			    w->msg_cqe != NULL) {
				w->msg_cqe(w->msg_arg, &cqes[i]); /* lib/rpc */
				continue;
			}
			if (id & TXN_WR_ID_FAIL_ONLY) {
				/* ahead of its chain's signaled WR: its error, no count */
				dtxn_co_fail_lc((struct dtxn_co *)(uintptr_t)(id & ~(uint64_t)TXN_WR_ID_FAIL_ONLY),
						st);
				continue;
			}
			if (id & TXN_WR_ID_UNSIGNALED) {
				/* an unsignaled WR failed: nobody waits for it */
				TXN_LOG(WARNING, "unsignaled %s failed (status %u)",
					dtxn_wr_opcode_name(cqes[i].opcode),
					cqes[i].status);
				continue;
			}
			if (id != 0)
				dtxn_co_complete_lc((struct dtxn_co *)(uintptr_t)id, st);
		}
		total += n;
	} while (n == WORKER_POLL_BURST);
	dtxn_sched_charge_op(w->sched, DTXN_CPU_CQE, total); /* sim only */
	return total;
}

/* ------------------------------------------------------------------ */
/* Workers                                                            */
/* ------------------------------------------------------------------ */

uint64_t
dtxn_worker_lost_nodes(const struct dtxn_worker *w)
{
	return w == NULL ? 0 : __atomic_load_n(&w->lost_nodes, __ATOMIC_RELAXED);
}

uint64_t
dtxn_worker_arena_grows(const struct dtxn_worker *w)
{
	const struct txn_worker *tw = (const struct txn_worker *)w;
	uint64_t n = 0;

	if (w == NULL)
		return 0;
	for (unsigned i = 0; i < tw->n_coords; i++)
		n += __atomic_load_n(&tw->coords[i]->arena_grows, __ATOMIC_RELAXED);
	return n;
}

int
dtxn_worker_error_inject(struct dtxn_worker *w, uint16_t node)
{
	struct dtxn_qp *qp;

	if (w == NULL || node >= DTXN_MAX_NODES)
		return -EINVAL;
	qp = w->qp[node] != NULL ? w->qp[node] : w->peer_qp[node];
	return qp == NULL ? -ENOENT : dtxn_qp_error_inject(qp);
}

/* Stripes per table of @p db's catalog: the per-stripe heap chunks each coordinator keeps. */
static uint16_t
worker_stripes(const struct dtxn_db *db)
{
	return db->cat.placement == DTXN_PLACEMENT_KEY ? db->cat.n_mn : 1;
}

/* CQ and QP depth: room for every coordinator's usual outstanding WRs. */
static unsigned
worker_depth(unsigned max_coords)
{
	uint64_t d = (uint64_t)max_coords * TXN_WORKER_WRS_PER_COORD;

	if (d < 64)
		d = 64;
	if (d > 65536)
		d = 65536;
	return rte_align32pow2((uint32_t)d);
}

static size_t arena_init_size(const struct dtxn_db *db);

/** Protocol state per coordinator in dtxn_worker_footprint(), bytes: all
 * of it for a protocol without dtxn_cc_ops.footprint, else a margin
 * (Lotus's coordinator takes 9 KiB, counted by dtxn_cc_footprint() too;
 * the test of lotus shows the sum bounds the heap use). */
#define TXN_CC_COORD_FOOTPRINT (16 * 1024)

int
dtxn_worker_footprint(const struct dtxn_db *db, unsigned max_coords, struct dtxn_footprint *fp)
{
	const uint64_t slack = DTXN_FOOTPRINT_ALLOC_SLACK;
	unsigned depth;

	if (db == NULL || fp == NULL || max_coords == 0)
		return -EINVAL;
	depth = worker_depth(max_coords);
	fp->bytes += sizeof(struct txn_worker) + slack +
		     (uint64_t)max_coords * sizeof(struct txn_coord *) + slack;
	dtxn_sched_footprint(max_coords, 0, fp);
	dtxn_fabric_queue_footprint(db->conf.n_mn, depth, fp);
	if (db->conf.addr_prewarm) /* an overlay; the base is the db's (dtxn_db_addr_base_footprint()) */
		dtxn_addr_cache_overlay_footprint(dtxn_db_addr_cache_entries(db),
						  db->conf.addr_cache_entries == DTXN_ADDR_CACHE_UNBOUNDED,
						  fp);
	else
		dtxn_addr_cache_footprint(dtxn_db_addr_cache_entries(db), fp);
	/* + a CN copy of the coordinator's log (Motor's op log in CN memory,
	 * FORD-as-published's log mirror: up to log_bytes each) */
	/* the txn, its WR array and its arena (dtxn_local_zalloc()) are
	 * counted even where they are mapped outside the heap: the check
	 * bounds what a run may touch */
	fp->bytes += (uint64_t)max_coords *
		     (sizeof(struct txn_coord) + sizeof(struct dtxn_txn) +
		      TXN_COORD_WRS * sizeof(struct dtxn_wr) + arena_init_size(db) +
		      TXN_CC_COORD_FOOTPRINT + db->cat.log_bytes + 6 * slack);
	if (db->fabric != NULL && dtxn_fabric_heap_shared(db->fabric))
		fp->bytes += TXN_ARENA_RESERVE + slack;
	/* per-stripe heap chunks (--placement key) */
	if (worker_stripes(db) > 1)
		fp->bytes += (uint64_t)max_coords * ((uint64_t)(worker_stripes(db) - 1) *
						     DTXN_MAX_TABLES *
						     (sizeof(struct txn_aux_heap) +
						      sizeof(struct dtxn_heap_chunk)) + 2 * slack);
	return 0;
}

int
dtxn_cc_footprint(const struct dtxn_db *db, unsigned n_cn, unsigned max_coords,
		  struct dtxn_footprint *per_cn, struct dtxn_footprint *per_worker)
{
	if (db == NULL || per_cn == NULL || per_worker == NULL || n_cn == 0 || max_coords == 0)
		return -EINVAL;
	if (db->cc->footprint == NULL)
		return -ENOTSUP;
	return db->cc->footprint(db, n_cn, max_coords, per_cn, per_worker);
}

struct dtxn_worker *
dtxn_worker_create(struct dtxn_db *db, uint16_t cn_node, unsigned index,
		   unsigned max_coords, int socket_id)
{
	struct txn_worker *tw = NULL;
	struct dtxn_worker *w = NULL;
	char name[32];
	uint32_t inc;
	unsigned depth;
	uint16_t mn;
	int err = EINVAL;

	/* node ids are the fabric's to check (dtxn_qp_create) */
	if (db == NULL || db->fabric == NULL || max_coords == 0 || max_coords > 65535 ||
	    cn_node >= DTXN_MAX_NODES)
		goto fail;
	err = ENOMEM;
	tw = rte_zmalloc_socket("dtxn_worker", sizeof(*tw), RTE_CACHE_LINE_SIZE, socket_id);
	if (tw == NULL)
		goto fail;
	w = &tw->pub;
	w->db = db;
	w->cn_node = cn_node;
	w->index = index;
	w->socket_id = socket_id;
	tw->max_coords = max_coords;
	tw->n_mn = db->conf.n_mn;
	tw->coords = rte_zmalloc_socket("dtxn_coords", sizeof(*tw->coords) * max_coords,
					0, socket_id);
	if (tw->coords == NULL)
		goto fail;
	if (dtxn_fabric_heap_shared(db->fabric)) {
		/* the arenas' growth, taken now: never from the shared heap in the run */
		tw->arena_res = rte_malloc_socket("dtxn_arena_res", TXN_ARENA_RESERVE,
						  RTE_CACHE_LINE_SIZE, socket_id);
		if (tw->arena_res == NULL)
			goto fail;
		tw->arena_res_size = TXN_ARENA_RESERVE;
	}

	/* names are global to a cluster's processes: a restarted CN's (its
	 * incarnation, dtxn_fabric_conf) never meet its dead predecessor's */
	inc = dtxn_fabric_conf(db->fabric)->incarnation;
	snprintf(name, sizeof(name), "w%u.%u.%u", cn_node, index, inc);
	w->sched = dtxn_sched_create(name, socket_id, max_coords, 0);
	if (w->sched == NULL) {
		err = rte_errno;
		goto fail;
	}
	depth = worker_depth(max_coords);
	w->cq = dtxn_cq_create(db->fabric, socket_id, depth);
	if (w->cq == NULL) {
		err = rte_errno;
		goto fail;
	}
	for (mn = 0; mn < db->conf.n_mn; mn++) {
		w->qp[mn] = dtxn_qp_create(db->fabric, w->cq, cn_node, mn, depth);
		if (w->qp[mn] == NULL) {
			err = rte_errno;
			goto fail;
		}
	}
	snprintf(name, sizeof(name), "ac%u.%u.%u", cn_node, index, inc);
	if (db->conf.addr_prewarm)
		w->addr_cache = dtxn_addr_cache_overlay_create(
			name, dtxn_db_addr_cache_entries(db),
			db->conf.addr_cache_entries == DTXN_ADDR_CACHE_UNBOUNDED, socket_id);
	else
		w->addr_cache = dtxn_addr_cache_create(name, dtxn_db_addr_cache_entries(db),
						       socket_id);
	if (w->addr_cache == NULL) {
		err = rte_errno;
		goto fail;
	}
	if (dtxn_sched_add_poller(w->sched, worker_poll_cq, w) != 0) {
		err = ENOSPC;
		goto fail;
	}
	if (db->cc->worker_init != NULL) {
		int rc = db->cc->worker_init(w);
		if (rc != 0) {
			err = -rc;
			goto fail;
		}
	}
	return w;
fail:
	if (tw != NULL) {
		if (w->addr_cache != NULL)
			dtxn_addr_cache_destroy(w->addr_cache);
		for (mn = 0; mn < DTXN_MAX_NODES; mn++)
			if (w->qp[mn] != NULL)
				dtxn_qp_destroy(w->qp[mn]);
		dtxn_cq_destroy(w->cq);
		dtxn_sched_destroy(w->sched);
		rte_free(tw->arena_res);
		rte_free(tw->coords);
		rte_free(tw);
	}
	rte_errno = err ? err : EINVAL;
	return NULL;
}

/* Builds @p db's pre-warmed base: every table's primary scanned. @return 0 or -errno. */
static int
worker_addr_base_build(struct dtxn_db *db)
{
	struct dtxn_addr_cache *base = dtxn_addr_cache_create("dtxn_addr_base", txn_db_addr_keys(db),
							      SOCKET_ID_ANY);

	if (base == NULL)
		return -rte_errno;
	for (uint32_t id = 0; id < DTXN_MAX_TABLES; id++) {
		const struct dtxn_table *t = dtxn_catalog_table(&db->cat, id);
		long n = t != NULL ? dtxn_addr_cache_prewarm(base, db->fabric, t) : 0;

		if (n < 0) {
			dtxn_addr_cache_destroy(base);
			return (int)n;
		}
	}
	db->addr_base = base;
	return 0;
}

int
dtxn_worker_addr_cache_prewarm(struct dtxn_worker *w, uint64_t *n_cached)
{
	int rc;

	if (w == NULL || !w->db->conf.addr_prewarm)
		return -EINVAL;
	if (w->db->addr_base == NULL) {
		rc = worker_addr_base_build(w->db);
		if (rc != 0)
			return rc;
	}
	rc = dtxn_addr_cache_set_base(w->addr_cache, w->db->addr_base);
	if (n_cached != NULL)
		*n_cached = dtxn_addr_cache_count(w->addr_cache);
	return rc;
}

static void
coord_free(struct txn_coord *tc)
{
	struct dtxn_coord *c = &tc->pub;
	struct dtxn_db *db = c->worker->db;

	if (db->cc->coord_fini != NULL && c->cc_priv != NULL)
		db->cc->coord_fini(c);
	txn_arena_free(tc);
	rte_free(tc->aux_stripes);
	rte_free(tc->delta_stripes);
	dtxn_local_free(c->wrs, sizeof(*c->wrs) * c->n_wrs);
	dtxn_local_free(c->txn, sizeof(*c->txn));
	rte_free(tc);
}

int
txn_coord_stripes_alloc(struct txn_coord *tc, uint16_t n_stripes, int socket_id)
{
	size_t n = (size_t)(n_stripes - 1) * DTXN_MAX_TABLES;

	if (n_stripes <= 1)
		return 0;
	tc->aux_stripes = rte_zmalloc_socket("dtxn_aux_stripes", n * sizeof(*tc->aux_stripes), 0,
					     socket_id);
	tc->delta_stripes = rte_zmalloc_socket("dtxn_delta_stripes",
					       n * sizeof(*tc->delta_stripes), 0, socket_id);
	return tc->aux_stripes == NULL || tc->delta_stripes == NULL ? -ENOMEM : 0;
}

void
dtxn_worker_destroy(struct dtxn_worker *w)
{
	struct txn_worker *tw = (struct txn_worker *)w;
	unsigned i;

	if (w == NULL)
		return;
	for (i = 0; i < tw->n_coords; i++)
		coord_free(tw->coords[i]);
	if (w->db->cc->worker_fini != NULL)
		w->db->cc->worker_fini(w);
	if (w->addr_cache != NULL)
		dtxn_addr_cache_destroy(w->addr_cache);
	for (i = 0; i < DTXN_MAX_NODES; i++)
		if (w->qp[i] != NULL)
			dtxn_qp_destroy(w->qp[i]);
	dtxn_cq_destroy(w->cq);
	dtxn_sched_destroy(w->sched);
	rte_free(tw->arena_res);
	rte_free(tw->coords);
	rte_free(tw);
}

unsigned
dtxn_worker_max_coords(const struct dtxn_worker *w)
{
	return w == NULL ? 0 : ((const struct txn_worker *)w)->max_coords;
}

struct dtxn_sched *
dtxn_worker_sched(struct dtxn_worker *w)
{
	return w == NULL ? NULL : w->sched;
}

void
dtxn_worker_cpu(const struct dtxn_worker *w, uint64_t *busy_ns, uint64_t *nic_ns)
{
	*busy_ns = w == NULL ? 0 : dtxn_sched_loop_busy_ns(w->sched);
	*nic_ns = w == NULL ? 0 : dtxn_cycles_to_ns(dtxn_cq_nic_cycles(w->cq));
}

void
dtxn_worker_counters(const struct dtxn_worker *w, struct dtxn_fabric_counters *per_mn)
{
	const struct txn_worker *tw = (const struct txn_worker *)w;
	uint16_t mn;
	unsigned op;

	if (w == NULL || per_mn == NULL)
		return;
	for (mn = 0; mn < tw->n_mn; mn++) {
		const struct dtxn_fabric_counters *q;

		memset(&per_mn[mn], 0, sizeof(per_mn[mn]));
		if (w->qp[mn] == NULL)
			continue;
		q = dtxn_qp_counters(w->qp[mn]);
		for (op = 0; op < DTXN_WR_OP_MAX; op++) {
			per_mn[mn].ops[op] += q->ops[op];
			per_mn[mn].bytes[op] += q->bytes[op];
		}
	}
}

void
dtxn_worker_peer_counters(const struct dtxn_worker *w, struct dtxn_fabric_counters *per_node)
{
	if (w == NULL || per_node == NULL)
		return;
	for (unsigned n = 0; n < DTXN_MAX_NODES; n++) {
		const struct dtxn_fabric_counters *q;

		if (w->peer_qp[n] == NULL)
			continue;
		q = dtxn_qp_counters(w->peer_qp[n]);
		for (unsigned op = 0; op < DTXN_WR_OP_MAX; op++) {
			per_node[n].ops[op] += q->ops[op];
			per_node[n].bytes[op] += q->bytes[op];
		}
	}
}

/* ------------------------------------------------------------------ */
/* Coordinators                                                       */
/* ------------------------------------------------------------------ */

static void
coord_trampoline(struct dtxn_co *co, void *arg)
{
	struct txn_coord *tc = arg;
	struct dtxn_coord *c = &tc->pub;

	c->fn(c, c->fn_arg);
	if (c->txn->open)
		dtxn_txn_abort(c->txn, DTXN_ABORT_APP);
	/* drain completions still owed to this coroutine (async unlocks) */
	(void)dtxn_co_wait_lc(co);
	tc->ended = true;
}

struct dtxn_coord *
dtxn_coord_create(struct dtxn_worker *w, uint32_t gid, dtxn_coord_fn fn, void *arg)
{
	struct txn_worker *tw = (struct txn_worker *)w;
	struct txn_coord *tc = NULL;
	struct dtxn_coord *c = NULL;
	int err = EINVAL;

	if (w == NULL || fn == NULL || gid >= w->db->conf.n_coords)
		goto fail;
	if (tw->n_coords >= tw->max_coords) {
		err = ENOSPC;
		goto fail;
	}
	err = ENOMEM;
	tc = rte_zmalloc_socket("dtxn_coord", sizeof(*tc), RTE_CACHE_LINE_SIZE, w->socket_id);
	if (tc == NULL)
		goto fail;
	c = &tc->pub;
	c->worker = w;
	c->gid = gid;
	tc->selective = dtxn_fabric_selective_signaling(w->db->fabric);
	c->fn = fn;
	c->fn_arg = arg;
	if (tw->gate != NULL) /* a restarted CN's txn ids follow its earlier incarnations' (txn.c) */
		c->txn_seq = (uint64_t)tw->gate->inc << DTXN_TXN_SEQ_INC_SHIFT;
	/* large, and mostly untouched by a run: dtxn_local_zalloc() */
	c->txn = dtxn_local_zalloc("dtxn_txn", sizeof(*c->txn), w->socket_id);
	if (c->txn == NULL)
		goto fail;
	c->txn->coord = c;
	c->n_wrs = TXN_COORD_WRS;
	c->wrs = dtxn_local_zalloc("dtxn_wrs", sizeof(*c->wrs) * c->n_wrs, w->socket_id);
	if (c->wrs == NULL)
		goto fail;
	txn_arena_reset(tc);
	if (c->arena == NULL)
		goto fail;
	if (txn_coord_stripes_alloc(tc, worker_stripes(w->db), w->socket_id) != 0)
		goto fail;
	if (w->db->cc->coord_init != NULL) {
		int rc = w->db->cc->coord_init(c);
		if (rc != 0) {
			err = -rc;
			goto fail;
		}
	}
	c->co = dtxn_co_create(w->sched, coord_trampoline, tc);
	if (c->co == NULL) {
		err = rte_errno;
		if (w->db->cc->coord_fini != NULL)
			w->db->cc->coord_fini(c);
		c->cc_priv = NULL;
		goto fail;
	}
	tw->coords[tw->n_coords++] = tc;
	return c;
fail:
	if (tc != NULL) {
		txn_arena_free(tc);
		rte_free(tc->aux_stripes);
		rte_free(tc->delta_stripes);
		dtxn_local_free(c->wrs, sizeof(*c->wrs) * c->n_wrs);
		dtxn_local_free(c->txn, sizeof(*c->txn));
		rte_free(tc);
	}
	rte_errno = err ? err : EINVAL;
	return NULL;
}

bool
dtxn_coord_stopping(const struct dtxn_coord *c)
{
	const uint32_t *linger = txn_coord_of((struct dtxn_coord *)(uintptr_t)c)->linger;

	if (linger != NULL && __atomic_load_n(linger, __ATOMIC_ACQUIRE) != 0)
		return false; /* dtxn_coord_set_linger() */
	return dtxn_sched_stopping(c->worker->sched);
}

uint16_t
dtxn_coord_cn_node(const struct dtxn_coord *c)
{
	return c->worker->cn_node;
}

uint32_t
dtxn_coord_gid(const struct dtxn_coord *c)
{
	return c->gid;
}

bool
dtxn_coord_false_abort(const struct dtxn_coord *c)
{
	int r;

	if (c == NULL || c->txn == NULL || c->txn->false_conflict != DTXN_FA_FALSE)
		return false;
	r = c->txn->abort_reason;
	/* a conflict's abort; another reason (the application's, not_found) is not false */
	return r == DTXN_ABORT(DTXN_ABORT_LOCK_CONFLICT) || r == DTXN_ABORT(DTXN_ABORT_VALIDATION) ||
	       r == DTXN_ABORT(DTXN_ABORT_LOCKED_READ);
}

/* The report's names of the wait kinds, in enum dtxn_wait_kind's order. */
static const char *const worker_wait_names[DTXN_WAIT_MAX] = {
	"verbs", "local_lock_x", "local_lock_s", "deps", "writer_limit", "durable",
};

const char *
dtxn_wait_name(unsigned k)
{
	return k < DTXN_WAIT_MAX ? worker_wait_names[k] : NULL;
}

void
dtxn_coord_waits(const struct dtxn_coord *c, uint64_t ns[DTXN_WAIT_MAX])
{
	memcpy(ns, c->wait_ns, sizeof(c->wait_ns));
}

void
dtxn_coord_verbs(const struct dtxn_coord *c, uint64_t ops[DTXN_WR_OP_MAX], uint64_t *bytes)
{
	memcpy(ops, c->verbs, sizeof(c->verbs));
	*bytes = c->verb_bytes;
}

struct dtxn_co *
dtxn_coord_co(const struct dtxn_coord *c)
{
	return c->co;
}

bool
dtxn_coord_routes_here(const struct dtxn_coord *c, uint32_t table_id, uint64_t key)
{
	if (c == NULL || c->worker->db->cc->route == NULL)
		return true;
	return c->worker->db->cc->route(c, table_id, key);
}

/* ------------------------------------------------------------------ */
/* Scratch arena                                                      */
/* ------------------------------------------------------------------ */

/* Appends a chunk of @p size bytes to @p tc's chain (oldest first). */
static struct txn_arena_chunk *
arena_chunk_new(struct txn_coord *tc, size_t size)
{
	struct txn_worker *tw = (struct txn_worker *)tc->pub.worker;
	size_t bytes = RTE_ALIGN_CEIL(sizeof(struct txn_arena_chunk) + size, RTE_CACHE_LINE_SIZE);
	struct txn_arena_chunk *ch, **tail = &tc->chunk;
	bool reserved = tc->chunk != NULL && tw->arena_res_size - tw->arena_res_used >= bytes;

	if (reserved) { /* growth: from the worker's reserve while it lasts */
		ch = (struct txn_arena_chunk *)(tw->arena_res + tw->arena_res_used);
		tw->arena_res_used += bytes;
	} else {
		ch = dtxn_local_zalloc("dtxn_arena", sizeof(*ch) + size,
				       tc->pub.worker->socket_id);
	}
	if (ch == NULL)
		return NULL;
	ch->reserved = reserved;
	ch->size = size;
	ch->next = NULL;
	while (*tail != NULL)
		tail = &(*tail)->next;
	*tail = ch;
	if (!reserved && tc->chunk != ch) /* the heap served a growth (a txn needed more) */
		__atomic_fetch_add(&tc->arena_grows, 1, __ATOMIC_RELAXED);
	tc->arena_total += size;
	return ch;
}

/* Makes @p ch the chunk @p tc's transaction allocates from, empty. */
static void
arena_use(struct txn_coord *tc, struct txn_arena_chunk *ch)
{
	tc->cur = ch;
	tc->pub.arena = ch->data;
	tc->pub.arena_size = ch->size;
	tc->pub.arena_used = 0;
}

void
txn_arena_free(struct txn_coord *tc)
{
	while (tc->chunk != NULL) {
		struct txn_arena_chunk *next = tc->chunk->next;

		if (!tc->chunk->reserved)
			dtxn_local_free(tc->chunk, sizeof(*tc->chunk) + tc->chunk->size);
		tc->chunk = next;
	}
	tc->cur = NULL;
	tc->arena_total = 0;
	tc->pub.arena = NULL;
	tc->pub.arena_size = 0;
	tc->pub.arena_used = 0;
}

/* The first chunk's bytes: larger where the DPDK heap is shared by the
 * processes of a cluster, so that a txn of the benchmarks (TPC-C's take
 * up to 256 KiB) never grows it during the run. */
static size_t
arena_init_size(const struct dtxn_db *db)
{
	return db->fabric != NULL && dtxn_fabric_heap_shared(db->fabric) ? TXN_ARENA_SHARED_INIT :
									    TXN_ARENA_INIT;
}

void
txn_arena_reset(struct txn_coord *tc)
{
	if (tc->chunk == NULL && arena_chunk_new(tc, arena_init_size(tc->pub.worker->db)) == NULL)
		return;
	arena_use(tc, tc->chunk);
}

/*
 * Every chunk stays for the next transactions (from the first again): an
 * arena allocates only when a transaction needs more than any before,
 * never to replace chunks, so after its high-water mark a coordinator
 * takes nothing from the DPDK heap (a heap the processes of a cluster
 * share: doc/guides/testing.md, "Shared locks").
 */
void *
dtxn_txn_alloc(struct dtxn_txn *t, size_t len)
{
	struct txn_arena_chunk *ch;
	struct txn_coord *tc;
	struct dtxn_coord *c;
	size_t need, size;
	void *p;

	if (t == NULL)
		return NULL;
	c = t->coord;
	tc = txn_coord_of(c);
	need = RTE_ALIGN_CEIL(len ? len : 1, 8);
	if (c->arena == NULL || c->arena_size - c->arena_used < need) {
		/* the next kept chunk that holds it; else a new one, twice the largest */
		for (ch = tc->cur != NULL ? tc->cur->next : NULL; ch != NULL && ch->size < need;)
			ch = ch->next;
		if (ch == NULL) {
			if (need > TXN_ARENA_MAX || tc->arena_total + need > TXN_ARENA_MAX)
				return NULL;
			/* twice the largest; from a worker's reserve, as large as the first */
			for (size = TXN_ARENA_INIT, ch = tc->chunk; ch != NULL; ch = ch->next)
				size = RTE_MAX(size, ((struct txn_worker *)c->worker)->arena_res != NULL ?
							     ch->size : ch->size * 2);
			if (size < need)
				size = need;
			if (tc->arena_total + size > TXN_ARENA_MAX)
				size = need;
			ch = arena_chunk_new(tc, size);
			if (ch == NULL)
				return NULL;
		}
		arena_use(tc, ch);
	}
	p = c->arena + c->arena_used;
	c->arena_used += need;
	return p;
}
