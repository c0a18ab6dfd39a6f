/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CN crash recovery: the protocol-independent part of
 * dtxn_coord_recover() (argument checks, timing, steps); the mechanism
 * is the protocol's (dtxn_cc_ops.recover; doc/guides/cluster.md,
 * "Recovery").
 */
#include <errno.h>
#include <string.h>

#include "txn_private.h"

bool
dtxn_db_can_recover(const struct dtxn_db *db)
{
	return db != NULL && db->cc->recover != NULL;
}

struct dtxn_recovery_step *
dtxn_recovery_step_begin(struct dtxn_recovery *rec, const char *name, const char *unit)
{
	struct dtxn_recovery_step *st;

	if (rec->n_steps < DTXN_RECOVERY_MAX_STEPS)
		rec->n_steps++;
	st = &rec->step[rec->n_steps - 1];
	st->name = name;
	st->unit = unit;
	st->work = 0;
	st->ns = 0;
	st->start_ns = dtxn_now_ns();
	return st;
}

void
dtxn_recovery_step_end(struct dtxn_recovery_step *st)
{
	st->ns = dtxn_now_ns() - st->start_ns;
}

int
dtxn_coord_recover(struct dtxn_coord *c, struct dtxn_recovery *rec)
{
	const struct dtxn_fabric_conf *fc;
	struct dtxn_db *db;
	int rc;

	if (c == NULL || rec == NULL)
		return -EINVAL;
	db = c->worker->db;
	fc = dtxn_fabric_conf(db->fabric);
	if (rec->dead_cn < fc->n_mn || rec->dead_cn >= fc->n_mn + fc->n_cn ||
	    rec->dead_cn == c->worker->cn_node || rec->n_gids > db->conf.n_coords ||
	    rec->gid_first > db->conf.n_coords - rec->n_gids)
		return -EINVAL;
	if (db->cc->recover == NULL)
		return -ENOTSUP;
	if (c->txn->open)
		return -EBUSY;
	rec->n_steps = 0;
	rec->start_ns = dtxn_now_ns();
	rc = db->cc->recover(c, rec);
	rec->end_ns = dtxn_now_ns();
	return rc;
}
