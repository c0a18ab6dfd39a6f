/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * OOCC as a dtxn protocol: ops table, registration, the shared state (the
 * options, one lease word per CN, the Lease Manager's) and the
 * per-coordinator state.
 */
#include <errno.h>

#include <rte_malloc.h>

#include "dtxn_fabric.h"
#include "oocc_private.h"

RTE_LOG_REGISTER(dtxn_oocc_logtype, dtxn.cc.oocc, INFO);

static int
oocc_db_init(struct dtxn_db *db)
{
	const struct dtxn_fabric_conf *fc = dtxn_fabric_conf(db->fabric);
	struct oocc_shared *sh;
	char err[200];

	sh = rte_zmalloc("oocc_shared", sizeof(*sh), RTE_CACHE_LINE_SIZE);
	if (sh == NULL)
		return -ENOMEM;
	oocc_opts_default(&sh->opts);
	if (oocc_opts_parse(db->conf.cc_options, &sh->opts, err, sizeof(err)) != 0) {
		OOCC_LOG(ERR, "%s", err);
		rte_free(sh);
		return -EINVAL;
	}
	sh->n_mn = fc->n_mn;
	sh->n_cn = fc->n_cn;
	sh->cn = rte_zmalloc("oocc_cns", sizeof(*sh->cn) * sh->n_cn, RTE_CACHE_LINE_SIZE);
	if (sh->cn == NULL) {
		rte_free(sh);
		return -ENOMEM;
	}
	if (sh->opts.adapt) {
		sh->n_stats = db->conf.n_coords;
		sh->stats = rte_zmalloc("oocc_stats", sizeof(*sh->stats) * sh->n_stats,
					RTE_CACHE_LINE_SIZE);
		if (sh->stats == NULL) {
			rte_free(sh->cn);
			rte_free(sh);
			return -ENOMEM;
		}
	}
	sh->lease_ns = sh->opts.lease_ns;
	oocc_lease_publish(sh, oocc_lease_word(sh->lease_ns, sh->opts.offset_ns));
	db->cc_shared = sh;
	return 0;
}

static void
oocc_db_fini(struct dtxn_db *db)
{
	struct oocc_shared *sh = db->cc_shared;

	if (sh == NULL)
		return;
	if (sh->opts.adapt)
		OOCC_LOG(INFO, "lease manager: %u adjustments, lease %u ns at the end",
			 sh->adjustments, sh->lease_ns);
	rte_free(sh->stats);
	rte_free(sh->cn);
	rte_free(sh);
	db->cc_shared = NULL;
}

static int
oocc_coord_init(struct dtxn_coord *c)
{
	struct oocc_shared *sh = c->worker->db->cc_shared;
	struct oocc_coord *oc;

	oc = rte_zmalloc_socket("oocc_coord", sizeof(*oc), RTE_CACHE_LINE_SIZE,
				c->worker->socket_id);
	if (oc == NULL)
		return -ENOMEM;
	oc->sh = sh;
	c->cc_priv = oc;
	if (sh->stats != NULL && c->gid < sh->n_stats)
		oc->ro = &sh->stats[c->gid];
	return 0;
}

static void
oocc_coord_fini(struct dtxn_coord *c)
{
	/* the statistics are the db's (oocc_shared.stats): they outlive the coordinator */
	rte_free(c->cc_priv);
	c->cc_priv = NULL;
}

/* Coordinator 0 runs the Lease Manager's steps (no extra lcore, no RPC). */
static int
oocc_begin(struct dtxn_txn *t)
{
	struct oocc_shared *sh = oocc_coord_of(t)->sh;

	if (sh->opts.adapt && t->coord->gid == 0)
		oocc_lease_manage(sh, oocc_clock_ns(t));
	return DTXN_OK;
}

static const struct dtxn_cc_ops oocc_ops = {
	.name = "oocc",
	.isolations = 1u << DTXN_ISO_SR,
	.weaken = { [DTXN_ISO_SR] = DTXN_DEBUG_OOCC_ALG1 },
	.slot_size = oocc_slot_size,
	.slot_format = oocc_slot_format,
	.slot_value = oocc_slot_value,
	.db_init = oocc_db_init,
	.db_fini = oocc_db_fini,
	.coord_init = oocc_coord_init,
	.coord_fini = oocc_coord_fini,
	.begin = oocc_begin,
	.execute = oocc_execute,
	.commit = oocc_commit,
	.abort = oocc_abort,
	.recover = oocc_recover,
	.check_options = oocc_check_options,
	.variant = oocc_variant,
};

DTXN_CC_REGISTER(oocc, &oocc_ops);
