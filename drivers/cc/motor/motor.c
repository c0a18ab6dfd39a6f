/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Motor (OSDI'24) as a dtxn protocol: ops table, registration, the shared
 * state (options, the timestamp service), the per-worker timestamp-oracle
 * client (lib/tso) and the per-coordinator operation-log buffer. SR and SI.
 *
 * Timestamps (§5, "Timestamp Generation"): by default from lib/tso's
 * CN-side service (struct dtxn_tso_cn) on the first CN, as the paper
 * assumes "a scalable timestamp service ... in the compute pool" and its
 * artifact runs one process-wide atomic on its single CN: the first CN's
 * coordinators take them with a CPU atomic, the others with one CN-CN
 * message round trip per lib/tso batch. tso=mn: one FAA on MN 0's word
 * (in the RNIC's device memory) per lib/tso group, Scythe's batched TSO
 * (dtxn's earlier default); tso=mn-single: one FAA per timestamp, the
 * baseline that shows what the group saves (doc/guides/motor.md).
 */
#include <errno.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "motor_private.h"

RTE_LOG_REGISTER(dtxn_motor_logtype, dtxn.cc.motor, INFO);

/** Op log buffer per coordinator (oplog=cn), at most: the MN log's size cap. */
#define MOTOR_OPLOG_CN_MAX (64u << 10)

static int
motor_db_init(struct dtxn_db *db)
{
	struct motor_shared *sh;
	char err[160];

	/* a Vcell keeps MOTOR_WRITER_BITS of its writer's txn id (DTXN_TXN_SEQ_BITS) */
	if (db->conf.n_coords > MOTOR_MAX_COORDS) {
		MOTOR_LOG(ERR, "%u coordinators: a Vcell's writer field holds txn ids of at most %u",
			  db->conf.n_coords, MOTOR_MAX_COORDS);
		return -EINVAL;
	}
	sh = rte_zmalloc("motor_shared", sizeof(*sh), RTE_CACHE_LINE_SIZE);
	if (sh == NULL)
		return -ENOMEM;
	if (motor_opts_parse(db->conf.cc_options, &sh->opts, err, sizeof(err)) != 0) {
		MOTOR_LOG(ERR, "%s", err);
		rte_free(sh);
		return -EINVAL;
	}
	/*
	 * oplog=cn's recovery trusts that a posted commit batch reaches every
	 * replica (recover.c). Where posted WRs die with their CN (UCX over
	 * TCP; sim's --fault-drop) a batch may land on some MNs only, and
	 * only the MN-resident log lets a survivor finish it: the default
	 * there is oplog=mn (doc/guides/motor.md, "Options").
	 */
	if (!sh->opts.oplog_given && !dtxn_fabric_posted_survives(db->fabric)) {
		sh->opts.oplog = MOTOR_OPLOG_MN;
		MOTOR_LOG(INFO, "oplog=mn: the fabric's posted WRs may die with their CN");
	}
	if (sh->opts.tso == MOTOR_TSO_CN) {
		sh->tso_cn = dtxn_tso_cn_create_db(db, MOTOR_RPC_TS);
		if (sh->tso_cn == NULL) {
			rte_free(sh);
			return -ENOMEM;
		}
	}
	db->cc_shared = sh;
	return 0;
}

static void
motor_db_fini(struct dtxn_db *db)
{
	struct motor_shared *sh = db->cc_shared;

	if (sh == NULL)
		return;
	dtxn_tso_cn_destroy(sh->tso_cn);
	rte_free(sh->mn_value);
	rte_free(sh);
	db->cc_shared = NULL;
}

/* lib/tso's fetch_add (tso=cn): the service, through the coordinator's endpoint. */
static int
motor_ts_fetch_add(void *arg, struct dtxn_coord *c, uint64_t n, uint64_t *old)
{
	const struct motor_shared *sh = arg;
	const struct motor_coord *mc = c->cc_priv;

	return dtxn_tso_cn_fetch_add_lc(sh->tso_cn, c, mc != NULL ? mc->ep : NULL, n, old);
}

static void motor_worker_fini(struct dtxn_worker *w);

static int
motor_worker_init(struct dtxn_worker *w)
{
	struct motor_shared *sh = w->db->cc_shared;
	const struct dtxn_fabric_conf *fc = dtxn_fabric_conf(w->db->fabric);
	struct dtxn_tso_conf tc = {
		.size = sizeof(tc),
		.counter = dtxn_tso_counter_raddr(&w->db->cat),
		.max_batch = sh->opts.tso == MOTOR_TSO_MN_SINGLE ? 1 : 0,
		.socket_id = w->socket_id,
		.fetch_add = sh->tso_cn != NULL ? motor_ts_fetch_add : NULL,
		.fetch_add_arg = sh,
	};
	struct motor_worker *mw;
	int rc;

	mw = rte_zmalloc_socket("motor_worker", sizeof(*mw), 0, w->socket_id);
	if (mw == NULL)
		return -ENOMEM;
	w->cc_priv = mw;
	mw->tso = dtxn_tso_create(&tc);
	if (mw->tso == NULL) {
		rc = -rte_errno;
		goto fail;
	}
	if (sh->tso_cn != NULL && fc->n_cn > 1) {
		/* its only requests are timestamps: a dead host fails them fast (dtxn_tso.h) */
		struct dtxn_rpc_conf rconf = {
			.size = sizeof(rconf),
			.timeout_ns = DTXN_TSO_CN_RPC_TIMEOUT_NS,
		};

		mw->rpc = dtxn_rpc_create(w, &rconf);
		if (mw->rpc == NULL) {
			rc = -rte_errno;
			goto fail;
		}
		rc = dtxn_tso_cn_register(sh->tso_cn, mw->rpc);
		if (rc != 0)
			goto fail;
	}
	return 0;
fail:
	motor_worker_fini(w);
	return rc;
}

static void
motor_worker_fini(struct dtxn_worker *w)
{
	struct motor_worker *mw = w->cc_priv;

	if (mw == NULL)
		return;
	dtxn_rpc_destroy(mw->rpc);
	dtxn_tso_destroy(mw->tso);
	rte_free(mw);
	w->cc_priv = NULL;
}

static void motor_coord_fini(struct dtxn_coord *c);

static int
motor_coord_init(struct dtxn_coord *c)
{
	const struct motor_shared *sh = c->worker->db->cc_shared;
	const struct motor_worker *mw = c->worker->cc_priv;
	struct motor_coord *mc;

	mc = rte_zmalloc_socket("motor_coord", sizeof(*mc), 0, c->worker->socket_id);
	if (mc == NULL)
		return -ENOMEM;
	c->cc_priv = mc;
	if (mw->rpc != NULL) {
		mc->ep = dtxn_rpc_ep_create(mw->rpc, c);
		if (mc->ep == NULL) {
			int rc = -rte_errno;

			motor_coord_fini(c);
			return rc;
		}
	}
	if (sh->opts.oplog == MOTOR_OPLOG_CN) {
		mc->oplog_cap = (uint32_t)RTE_MIN(c->worker->db->cat.log_bytes,
						  (uint64_t)MOTOR_OPLOG_CN_MAX);
		mc->oplog = rte_zmalloc_socket("motor_oplog", mc->oplog_cap, 8,
					       c->worker->socket_id);
		if (mc->oplog == NULL) {
			motor_coord_fini(c);
			return -ENOMEM;
		}
	}
	return 0;
}

static void
motor_coord_fini(struct dtxn_coord *c)
{
	struct motor_coord *mc = c->cc_priv;

	if (mc == NULL)
		return;
	dtxn_rpc_ep_destroy(mc->ep);
	rte_free(mc->oplog);
	rte_free(mc);
	c->cc_priv = NULL;
}

static const struct dtxn_cc_ops motor_ops = {
	.name = "motor",
	.max_coords = MOTOR_MAX_COORDS,
	.isolations = (1u << DTXN_ISO_SR) | (1u << DTXN_ISO_SI),
	.weaken = { [DTXN_ISO_SR] = DTXN_DEBUG_SKIP_READ_VALIDATION,
		    [DTXN_ISO_SI] = DTXN_DEBUG_SKIP_WW_CHECK },
	.slot_size = motor_slot_size,
	.slot_format = motor_slot_format,
	.slot_value = motor_slot_value,
	.db_init = motor_db_init,
	.db_fini = motor_db_fini,
	.worker_init = motor_worker_init,
	.worker_fini = motor_worker_fini,
	.coord_init = motor_coord_init,
	.coord_fini = motor_coord_fini,
	.execute = motor_execute,
	.commit = motor_commit,
	.abort = motor_abort,
	.table_geometry = motor_table_geometry,
	.table_delta = motor_table_delta,
	.local_extra = motor_local_extra,
	.mn_value = motor_mn_value,
	.check_options = motor_check_options,
	.recover = motor_recover,
	.false_aborts = true,
};

DTXN_CC_REGISTER(motor, &motor_ops);
