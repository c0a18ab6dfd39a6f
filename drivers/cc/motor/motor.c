/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Motor (OSDI'24) as a dtxn protocol: ops table, registration, and the
 * per-worker timestamp-oracle client (lib/tso). SR and SI.
 */
#include <errno.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "motor_private.h"

RTE_LOG_REGISTER(dtxn_motor_logtype, dtxn.cc.motor, INFO);

static int
motor_worker_init(struct dtxn_worker *w)
{
	struct dtxn_tso_conf tc = {
		.size = sizeof(tc),
		.counter = dtxn_tso_counter_raddr(&w->db->cat),
		.socket_id = w->socket_id,
	};
	struct motor_worker *mw;

	mw = rte_zmalloc_socket("motor_worker", sizeof(*mw), 0, w->socket_id);
	if (mw == NULL)
		return -ENOMEM;
	mw->tso = dtxn_tso_create(&tc);
	if (mw->tso == NULL) {
		int err = rte_errno;

		rte_free(mw);
		return -err;
	}
	w->cc_priv = mw;
	return 0;
}

static void
motor_worker_fini(struct dtxn_worker *w)
{
	struct motor_worker *mw = w->cc_priv;

	if (mw == NULL)
		return;
	dtxn_tso_destroy(mw->tso);
	rte_free(mw);
	w->cc_priv = NULL;
}

static int
motor_coord_init(struct dtxn_coord *c)
{
	c->cc_priv = rte_zmalloc_socket("motor_coord", sizeof(struct motor_coord), 0,
					c->worker->socket_id);
	return c->cc_priv == NULL ? -ENOMEM : 0;
}

static void
motor_coord_fini(struct dtxn_coord *c)
{
	rte_free(c->cc_priv);
	c->cc_priv = NULL;
}

static const struct dtxn_cc_ops motor_ops = {
	.name = "motor",
	.isolations = (1u << DTXN_ISO_SR) | (1u << DTXN_ISO_SI),
	.weaken = { [DTXN_ISO_SR] = DTXN_DEBUG_SKIP_READ_VALIDATION,
		    [DTXN_ISO_SI] = DTXN_DEBUG_SKIP_WW_CHECK },
	.slot_size = motor_slot_size,
	.slot_format = motor_slot_format,
	.slot_value = motor_slot_value,
	.worker_init = motor_worker_init,
	.worker_fini = motor_worker_fini,
	.coord_init = motor_coord_init,
	.coord_fini = motor_coord_fini,
	.execute = motor_execute,
	.commit = motor_commit,
	.abort = motor_abort,
	.table_sizes = motor_table_sizes,
	.mn_value = motor_mn_value,
};

DTXN_CC_REGISTER(motor, &motor_ops);
