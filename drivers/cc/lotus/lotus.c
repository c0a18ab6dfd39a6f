/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Lotus as a dtxn protocol: ops table, registration, and the state it
 * keeps on the CNs (doc/guides/lotus.md):
 * - shared (db->cc_shared): options, the shard -> CN map, one struct
 *   lotus_cn per CN: its lock table and VT cache (allocated by the CN's
 *   first worker, on that worker's NUMA socket), its resharding counters;
 * - per worker: the CN it belongs to, its lib/rpc (a QP to each other
 *   CN), its lib/tso client, the lock state of the locks it grants;
 * - per coordinator: its rpc endpoint, its TSO request, its log head.
 * SR and SI.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "lotus_private.h"

RTE_LOG_REGISTER(dtxn_lotus_logtype, dtxn.cc.lotus, INFO);

/** Largest value a table may have (dtxn_table_def.value_size): the scratch buffer. */
#define LOTUS_VALUE_MAX 65536

uint32_t
lotus_cvt_max(const struct dtxn_db *db)
{
	uint32_t m = 0;

	for (uint32_t t = 0; t < DTXN_MAX_TABLES; t++) {
		const struct dtxn_table *tab = dtxn_catalog_table(&db->cat, t);

		if (tab != NULL && tab->slot_size > m)
			m = tab->slot_size;
	}
	return m;
}

static int
lotus_db_init(struct dtxn_db *db)
{
	const struct dtxn_fabric_conf *fc = dtxn_fabric_conf(db->fabric);
	struct lotus_shared *sh;
	char err[160];

	sh = rte_zmalloc("lotus_shared", sizeof(*sh), RTE_CACHE_LINE_SIZE);
	if (sh == NULL)
		return -ENOMEM;
	sh->db = db;
	lotus_opts_default(&sh->opts);
	if (lotus_opts_parse(db->conf.cc_options, &sh->opts, err, sizeof(err)) != 0) {
		LOTUS_LOG(ERR, "%s", err);
		rte_free(sh);
		return -EINVAL;
	}
	sh->n_mn = fc->n_mn;
	sh->n_cn = fc->n_cn;
	sh->cn = rte_zmalloc("lotus_cns", sizeof(*sh->cn) * sh->n_cn, RTE_CACHE_LINE_SIZE);
	sh->scratch = rte_zmalloc("lotus_scratch", LOTUS_VALUE_MAX, 8);
	if (sh->cn == NULL || sh->scratch == NULL) {
		rte_free(sh->cn);
		rte_free(sh->scratch);
		rte_free(sh);
		return -ENOMEM;
	}
	for (uint16_t i = 0; i < sh->n_cn; i++) {
		sh->cn[i].sh = sh;
		sh->cn[i].idx = i;
		sh->cn[i].node = (uint16_t)(sh->n_mn + i);
		sh->cn[i].moving = -1;
	}
	sh->cvt_max = lotus_cvt_max(db);
	if (lotus_shard_init(sh, fc->multi_process != 0) != 0) {
		LOTUS_LOG(ERR, "cannot share the shard map between the CN processes");
		rte_free(sh->cn);
		rte_free(sh->scratch);
		rte_free(sh);
		return -ENOMEM;
	}
	sh->tso_counter = dtxn_tso_counter_raddr(&db->cat);
	if (!sh->opts.ts_mn) {
		sh->tso_cn = dtxn_tso_cn_create_db(db, LOTUS_RPC_TS);
		if (sh->tso_cn == NULL) {
			rte_free(sh->cn);
			rte_free(sh->scratch);
			rte_free(sh);
			return -ENOMEM;
		}
	}
	db->cc_shared = sh;
	return 0;
}

static void
lotus_db_fini(struct dtxn_db *db)
{
	struct lotus_shared *sh = db->cc_shared;

	if (sh == NULL)
		return;
	for (uint16_t i = 0; i < sh->n_cn; i++) {
		lotus_lt_fini(&sh->cn[i].lt);
		lotus_vtc_destroy(sh->cn[i].vtc);
		rte_free(sh->cn[i].peer_metrics);
	}
	dtxn_tso_cn_destroy(sh->tso_cn);
	rte_free(sh->cn);
	rte_free(sh->scratch);
	rte_free(sh);
	db->cc_shared = NULL;
}

/* The CN's lock table and VT cache, by its first worker, on that worker's socket. */
static int
lotus_cn_init(struct lotus_shared *sh, struct lotus_cn *cn, int socket_id)
{
	char name[32];
	int rc;

	if (cn->ready)
		return 0;
	if (dtxn_fabric_conf(sh->db->fabric)->multi_process &&
	    dtxn_fabric_conf(sh->db->fabric)->incarnation != 0)
		lotus_recover_rejoin(sh, cn);
	rc = lotus_lt_init(&cn->lt, (uint64_t)sh->opts.lock_table_mb << 20, socket_id);
	if (rc != 0)
		return rc;
	if (sh->opts.vt_cache != 0 && sh->opts.locks == LOTUS_LOCKS_CN) {
		uint32_t inc = dtxn_fabric_conf(sh->db->fabric)->incarnation;

		/* a restarted CN's names differ from its dead predecessor's */
		snprintf(name, sizeof(name), "lvtc%u.%u", cn->node, inc);
		cn->vtc = lotus_vtc_create(name, sh->opts.vt_cache, sh->opts.vt_subcaches,
					   sh->cvt_max, socket_id);
		if (cn->vtc == NULL)
			return -rte_errno;
	}
	cn->peer_metrics = rte_zmalloc_socket("lotus_metrics", 2 * sizeof(uint64_t) * sh->n_cn,
					      RTE_CACHE_LINE_SIZE, socket_id);
	if (cn->peer_metrics == NULL)
		return -ENOMEM;
	cn->ready = true;
	return 0;
}

static void lotus_worker_fini(struct dtxn_worker *w);

/*
 * The timestamp service "deployed in the compute pool" (§5): lib/tso's
 * leader batching over lib/tso's CN-side counter (struct dtxn_tso_cn) in
 * CN 0's memory instead of an MN word.
 */
int
lotus_ts_fetch_add(void *arg, struct dtxn_coord *c, uint64_t n, uint64_t *old)
{
	struct dtxn_worker *w = arg;
	struct lotus_coord *lc = c->cc_priv;

	return dtxn_tso_cn_fetch_add_lc(lotus_shared_of(w->db)->tso_cn, c,
					lc != NULL ? lc->ep : NULL, n, old);
}

static int
lotus_worker_init(struct dtxn_worker *w)
{
	struct lotus_shared *sh = lotus_shared_of(w->db);
	struct dtxn_tso_conf tc = {
		.size = sizeof(tc),
		.counter = sh->tso_counter,
		.socket_id = w->socket_id,
		.fetch_add = sh->opts.ts_mn ? NULL : lotus_ts_fetch_add,
		.fetch_add_arg = w,
	};
	struct lotus_worker *lw;
	char name[32];
	int rc;

	if (w->cn_node < sh->n_mn || w->cn_node >= sh->n_mn + sh->n_cn)
		return -EINVAL;
	lw = rte_zmalloc_socket("lotus_worker", sizeof(*lw), RTE_CACHE_LINE_SIZE, w->socket_id);
	if (lw == NULL)
		return -ENOMEM;
	w->cc_priv = lw;
	lw->cn = &sh->cn[w->cn_node - sh->n_mn];
	rc = lotus_cn_init(sh, lw->cn, w->socket_id);
	if (rc != 0)
		goto fail;
	snprintf(name, sizeof(name), "lls%u.%u.%u", w->cn_node, w->index,
		 dtxn_fabric_conf(w->db->fabric)->incarnation);
	rc = lotus_ls_init(&lw->ls, name, lotus_ls_cap(dtxn_worker_max_coords(w), sh->n_cn),
			   w->socket_id);
	if (rc != 0)
		goto fail;
	lw->tso = dtxn_tso_create(&tc);
	if (lw->tso == NULL) {
		rc = -rte_errno;
		goto fail;
	}
	if (sh->n_cn > 1) {
		struct dtxn_rpc_conf rc_conf = {
			.size = sizeof(rc_conf),
			.timeout_ns = (uint64_t)sh->opts.rpc_timeout_us * 1000,
		};

		lw->rpc = dtxn_rpc_create(w, &rc_conf);
		if (lw->rpc == NULL) {
			rc = -rte_errno;
			goto fail;
		}
		rc = lotus_lock_handlers(w);
		if (rc == 0 && sh->tso_cn != NULL)
			rc = dtxn_tso_cn_register(sh->tso_cn, lw->rpc);
		if (rc != 0)
			goto fail;
	}
	if (lw->rpc != NULL) {
		/* CN crash recovery: every worker cleans up after a dead CN */
		rc = dtxn_sched_add_poller(w->sched, lotus_recover_poll, w);
		if (rc != 0)
			goto fail;
		lotus_recover_worker_start(sh, lw);
		__atomic_fetch_add(&sh->rt->n_workers[lw->cn->idx], 1, __ATOMIC_RELEASE);
	}
	if (w->index == 0) {
		/* the CN's metrics worker (§4.3): metrics every reshard_ms */
		rc = dtxn_sched_add_poller(w->sched, lotus_shard_poll, w);
		if (rc != 0)
			goto fail;
	}
	return 0;
fail:
	lotus_worker_fini(w);
	return rc;
}

static void
lotus_worker_fini(struct dtxn_worker *w)
{
	struct lotus_worker *lw = w->cc_priv;

	if (lw == NULL)
		return;
	if (lw->rpc != NULL) {
		struct dtxn_rpc_stats st;

		dtxn_rpc_stats_get(lw->rpc, &st);
		LOTUS_LOG(DEBUG, "CN %u worker %u: rpc sent %" PRIu64 " resent %" PRIu64
			  " handled %" PRIu64 " replies %" PRIu64 " failed %" PRIu64,
			  w->cn_node, w->index, st.req_sent, st.resent, st.req_handled,
			  st.resp_recv, st.failed);
	}
	if (w->index == 0 && lw->cn->vtc != NULL) {
		struct lotus_vtc_stats vs;

		lotus_vtc_stats_get(lw->cn->vtc, &vs);
		LOTUS_LOG(DEBUG, "CN %u: VT cache hits %" PRIu64 " misses %" PRIu64
			  " invalidations %" PRIu64 " evictions %" PRIu64 "; shards moved %" PRIu64,
			  w->cn_node, vs.hits, vs.misses, vs.invalidations, vs.evictions,
			  lw->cn->moves);
	}
	dtxn_rpc_destroy(lw->rpc);
	dtxn_tso_destroy(lw->tso);
	lotus_ls_fini(&lw->ls);
	rte_free(lw);
	w->cc_priv = NULL;
}

static int
lotus_coord_init(struct dtxn_coord *c)
{
	struct lotus_worker *lw = c->worker->cc_priv;
	struct lotus_coord *lc;

	lc = rte_zmalloc_socket("lotus_coord", sizeof(*lc), RTE_CACHE_LINE_SIZE,
				c->worker->socket_id);
	if (lc == NULL)
		return -ENOMEM;
	if (lw->rpc != NULL) {
		lc->ep = dtxn_rpc_ep_create(lw->rpc, c);
		if (lc->ep == NULL) {
			int err = rte_errno;

			rte_free(lc);
			return -err;
		}
	}
	c->cc_priv = lc;
	return 0;
}

static void
lotus_coord_fini(struct dtxn_coord *c)
{
	struct lotus_coord *lc = c->cc_priv;

	if (lc == NULL)
		return;
	dtxn_rpc_ep_destroy(lc->ep);
	rte_free(lc);
	c->cc_priv = NULL;
}

/* dtxn_cc_ops.begin: the txn's start, for the shard latency (commit.c) */
static int
lotus_begin(struct dtxn_txn *t)
{
	t->start_ns = dtxn_now_ns();
	return DTXN_OK;
}

static const struct dtxn_cc_ops lotus_ops = {
	.name = "lotus",
	.isolations = (1u << DTXN_ISO_SR) | (1u << DTXN_ISO_SI),
	.weaken = { [DTXN_ISO_SR] = DTXN_DEBUG_SKIP_LOCK_CHECK | LOTUS_CRASH_POINTS,
		    [DTXN_ISO_SI] = DTXN_DEBUG_SKIP_WW_CHECK | LOTUS_CRASH_POINTS },
	.slot_size = lotus_slot_size,
	.slot_format = lotus_slot_format,
	.slot_value = lotus_slot_value,
	.db_init = lotus_db_init,
	.db_fini = lotus_db_fini,
	.worker_init = lotus_worker_init,
	.worker_fini = lotus_worker_fini,
	.coord_init = lotus_coord_init,
	.coord_fini = lotus_coord_fini,
	.begin = lotus_begin,
	.execute = lotus_execute,
	.commit = lotus_commit,
	.abort = lotus_abort,
	.table_geometry = lotus_table_geometry,
	.table_delta = lotus_table_delta,
	.local_extra = lotus_local_extra,
	.mn_value = lotus_mn_value,
	.mn_unfinished = lotus_mn_unfinished,
	.route = lotus_route,
	.check_options = lotus_check_options,
	.footprint = lotus_footprint,
	.recover = lotus_recover,
};

DTXN_CC_REGISTER(lotus, &lotus_ops);
