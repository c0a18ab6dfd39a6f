/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * FORD (FAST'22) as a dtxn protocol: ops table and registration.
 */
#include <errno.h>

#include <rte_malloc.h>

#include "ford_private.h"

RTE_LOG_REGISTER(dtxn_ford_logtype, dtxn.cc.ford, INFO);

static void ford_coord_fini(struct dtxn_coord *c);

static int
ford_coord_init(struct dtxn_coord *c)
{
	struct ford_coord *fc;
	char err[160];

	fc = rte_zmalloc_socket("ford_coord", sizeof(*fc), 0, c->worker->socket_id);
	if (fc == NULL)
		return -ENOMEM;
	c->cc_priv = fc;
	ford_opts_default(&fc->opts);
	/* checked by dtxn_db_create() */
	if (ford_opts_parse(c->worker->db->conf.cc_options, &fc->opts, err, sizeof(err)) != 0) {
		FORD_LOG(ERR, "%s", err);
		ford_coord_fini(c);
		return -EINVAL;
	}
	if (fc->opts.published && ford_pub_log_init(c) != 0) {
		ford_coord_fini(c);
		return -ENOMEM;
	}
	return 0;
}

static void
ford_coord_fini(struct dtxn_coord *c)
{
	struct ford_coord *fc = c->cc_priv;

	if (fc != NULL)
		rte_free(fc->log_mirror);
	rte_free(fc);
	c->cc_priv = NULL;
}

static const struct dtxn_cc_ops ford_ops = {
	.name = "ford",
	.isolations = 1u << DTXN_ISO_SR,
	.weaken = { [DTXN_ISO_SR] = DTXN_DEBUG_SKIP_LOCK_CHECK },
	.slot_size = ford_slot_size,
	.slot_format = ford_slot_format,
	.slot_value = ford_slot_value,
	.coord_init = ford_coord_init,
	.coord_fini = ford_coord_fini,
	.execute = ford_execute,
	.commit = ford_commit,
	.abort = ford_abort,
	.check_options = ford_check_options,
	.table_geometry = ford_table_geometry,
	.variant = ford_variant,
	.recover = ford_recover,
	.can_recover = ford_can_recover,
	.false_aborts = true,
};

DTXN_CC_REGISTER(ford, &ford_ops);
