/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Scythe: the ops table and the state of a db, a worker and a coordinator
 * (scythe_private.h says which file does what; doc/guides/scythe.md).
 *
 * - db: the options and the timestamp counter: lib/tso's counter word on
 *   MN 0, in the bytes that stand for the RNIC's device memory (Scythe
 *   §4.5: "the TSO is in one MN's RNIC memory"), taken with FAA and
 *   batched per worker by lib/tso (the TSO Group).
 * - worker: a lib/rpc with MN peers (its Lock RPCs ride its RC QPs to the
 *   MNs; with rpc=rrpc an rrpc carries them instead, transport.c), a TSO
 *   client, the SRTT per MN.
 * - coordinator: its rpc endpoint, its TSO request, the heat mode.
 * - begin: the attempt's heat mode: COLD, unless the last attempt of this
 *   coordinator aborted on a queue longer than ColdWatermark (or ran HOT
 *   and did not commit): then HOT (§3.1, "the retry runs HOT").
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "scythe_private.h"

RTE_LOG_REGISTER(dtxn_scythe_logtype, dtxn.cc.scythe, INFO);

/** Time before a Lock request is given up, ns: requests to an MN are never resent. */
#define SCYTHE_RPC_TIMEOUT_NS UINT64_C(10000000000)

static int
scythe_db_init(struct dtxn_db *db)
{
	struct scythe_shared *sh;
	char err[160];
	int rc;

	sh = rte_zmalloc("scythe_shared", sizeof(*sh), RTE_CACHE_LINE_SIZE);
	if (sh == NULL)
		return -ENOMEM;
	scythe_opts_default(&sh->opts);
	if (scythe_opts_parse(db->conf.cc_options, &sh->opts, err, sizeof(err)) != 0) {
		SCYTHE_LOG(ERR, "%s", err);
		rte_free(sh);
		return -EINVAL;
	}
	if (scythe_check_cluster(db->conf.cc_options, db->conf.n_mn, 0, NULL, err, sizeof(err)) != 0) {
		SCYTHE_LOG(ERR, "%s", err); /* the app checked before: a library caller's mistake */
		rte_free(sh);
		return -EINVAL;
	}
	sh->tso_counter = dtxn_tso_counter_raddr(&db->cat);
	rc = scythe_tp_db_init(db, sh);
	if (rc != 0) {
		rte_free(sh);
		return rc;
	}
	db->cc_shared = sh;
	return 0;
}

static void
scythe_db_fini(struct dtxn_db *db)
{
	if (db->cc_shared != NULL)
		scythe_tp_db_fini(db->cc_shared);
	rte_free(db->cc_shared);
	db->cc_shared = NULL;
}

static void scythe_worker_fini(struct dtxn_worker *w);

/* The TSO client's proxy_fetch_add: proxy i is on MN 1 + i, asked through the coordinator's endpoint. */
static int
scythe_tso_proxy_add(void *arg, struct dtxn_coord *c, unsigned proxy, uint64_t n, uint64_t *old)
{
	const struct scythe_coord *sc = c->cc_priv;

	RTE_SET_USED(arg);
	return dtxn_tso_proxy_fetch_add_lc(sc->ep, (uint16_t)(1 + proxy), SCYTHE_RPC_TSO, n, old);
}

static int
scythe_worker_init(struct dtxn_worker *w)
{
	struct scythe_shared *sh = scythe_shared_of(w->db);
	struct dtxn_tso_conf tc = {
		.size = sizeof(tc),
		.counter = sh->tso_counter,
		.socket_id = w->socket_id,
		.n_proxies = sh->opts.tso_proxies,
		.proxy_fetch_add = scythe_tso_proxy_add,
		.seed = (uint64_t)w->cn_node << 32 | w->index,
	};
	struct dtxn_rpc_conf rc_conf = {
		.size = sizeof(rc_conf),
		.timeout_ns = SCYTHE_RPC_TIMEOUT_NS,
		.max_retries = 1,
		.mn_peers = 1,
	};
	struct scythe_worker *sw;
	int rc;

	sw = rte_zmalloc_socket("scythe_worker", sizeof(*sw), RTE_CACHE_LINE_SIZE, w->socket_id);
	if (sw == NULL)
		return -ENOMEM;
	w->cc_priv = sw;
	sw->tso = dtxn_tso_create(&tc);
	sw->rpc = dtxn_rpc_create(w, &rc_conf);
	rc = sw->tso == NULL || sw->rpc == NULL ? -rte_errno : scythe_tp_worker_init(w, sw);
	if (rc != 0) {
		scythe_worker_fini(w);
		return rc;
	}
	return 0;
}

static void
scythe_worker_fini(struct dtxn_worker *w)
{
	struct scythe_worker *sw = w->cc_priv;

	if (sw == NULL)
		return;
	SCYTHE_LOG(DEBUG, "CN %u worker %u: attempts cold %" PRIu64 " hot %" PRIu64
		   "; lock requests %" PRIu64 " queued %" PRIu64 " deferred %" PRIu64
		   " refused %" PRIu64 "; polls %" PRIu64 "; CAS lock retries %" PRIu64
		   "; COLD reads/validations on a queue <= ColdWatermark %" PRIu64 ", above %" PRIu64
		   "; hot commits %" PRIu64 "; free reads %" PRIu64
		   "; lock wait %" PRIu64 " us; aborts waiting out %" PRIu64 " tickets in %" PRIu64
		   " txns for %" PRIu64 " us; tickets cancelled %" PRIu64, w->cn_node, w->index,
		   sw->st.cold_attempts, sw->st.hot_attempts, sw->st.lock_reqs, sw->st.queued,
		   sw->st.deferred, sw->st.rejected, sw->st.polls, sw->st.cas_retries,
		   sw->st.cold_q_low, sw->st.cold_q_high, sw->st.commits_hot, sw->st.free_reads,
		   sw->st.lock_wait_ns / 1000, sw->st.release_tickets, sw->st.release_waits,
		   sw->st.release_wait_ns / 1000, sw->st.cancelled);
	for (unsigned k = 0; k < SCYTHE_STAT_TABLES; k++)
		if (sw->st.locks_by_table[k] != 0 || sw->st.locked_by_table[k] != 0)
			SCYTHE_LOG(DEBUG, "CN %u worker %u: table %u: lock requests %" PRIu64
				   ", queued %" PRIu64 ", COLD reads of a locked record %" PRIu64,
				   w->cn_node, w->index, k, sw->st.locks_by_table[k],
				   sw->st.queued_by_table[k], sw->st.locked_by_table[k]);
	scythe_tp_worker_fini(sw);
	dtxn_rpc_destroy(sw->rpc);
	dtxn_tso_destroy(sw->tso);
	rte_free(sw);
	w->cc_priv = NULL;
}

static int
scythe_coord_init(struct dtxn_coord *c)
{
	struct scythe_worker *sw = c->worker->cc_priv;
	struct scythe_coord *sc;

	sc = rte_zmalloc_socket("scythe_coord", sizeof(*sc), RTE_CACHE_LINE_SIZE,
				c->worker->socket_id);
	if (sc == NULL)
		return -ENOMEM;
	sc->ep = dtxn_rpc_ep_create(sw->rpc, c);
	if (sc->ep == NULL || scythe_tp_coord_init(c, sc) != 0) {
		int err = rte_errno;

		dtxn_rpc_ep_destroy(sc->ep);
		rte_free(sc);
		return -err;
	}
	c->cc_priv = sc;
	return 0;
}

static void
scythe_coord_fini(struct dtxn_coord *c)
{
	struct scythe_coord *sc = c->cc_priv;

	if (sc == NULL)
		return;
	scythe_tp_coord_fini(sc);
	dtxn_rpc_ep_destroy(sc->ep);
	rte_free(sc);
	c->cc_priv = NULL;
}

static int
scythe_begin(struct dtxn_txn *t)
{
	struct scythe_coord *sc = scythe_coord_of(t);
	const struct scythe_opts *o = scythe_opts_t(t);
	struct scythe_worker *sw = scythe_worker_of(t);

	if (o->occ_only)
		sc->mode = SCYTHE_COLD;
	else if (o->tocc_only)
		sc->mode = SCYTHE_HOT;
	else
		sc->mode = sc->hot_next ? SCYTHE_HOT : SCYTHE_COLD;
	if (sc->mode == SCYTHE_HOT)
		sw->st.hot_attempts++;
	else
		sw->st.cold_attempts++;
	sc->ts = 0; /* HOT: taken at the first execute; COLD: in the locking phase */
	return DTXN_OK;
}

static const struct dtxn_cc_ops scythe_ops = {
	.name = "scythe",
	.isolations = 1u << DTXN_ISO_SR,
	.slot_size = scythe_slot_size,
	.slot_format = scythe_slot_format,
	.slot_value = scythe_slot_value,
	.db_init = scythe_db_init,
	.db_fini = scythe_db_fini,
	.worker_init = scythe_worker_init,
	.worker_fini = scythe_worker_fini,
	.coord_init = scythe_coord_init,
	.coord_fini = scythe_coord_fini,
	.begin = scythe_begin,
	.execute = scythe_execute,
	.commit = scythe_commit,
	.abort = scythe_abort,
	.recover = scythe_recover,
	.check_options = scythe_check_options,
	.check_cluster = scythe_check_cluster,
	.variant = scythe_variant,
	.can_recover = scythe_can_recover,
	.mn_svc = &scythe_mn_svc_ops,
	.mn_msg_bytes = scythe_mn_msg_bytes,
	.footprint = scythe_footprint,
	.weaken = { [DTXN_ISO_SR] = DTXN_DEBUG_SKIP_READ_VALIDATION },
};

DTXN_CC_REGISTER(scythe, &scythe_ops);
