/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MN-side services (dtxn_txn.h, "MN-side services"): the handle the app
 * polls, around the protocol's own service (dtxn_cc_ops.mn_svc), or one
 * set on the db (dtxn_db_set_mn_svc(): the "tso" benchmark's proxies).
 */
#include <errno.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "txn_private.h"

struct dtxn_mn_svc {
	const struct dtxn_cc_mn_svc_ops *ops;
	void *priv;
};

/* The db's MN service: the protocol's, else the one set on it. */
static const struct dtxn_cc_mn_svc_ops *
mn_svc_ops(const struct dtxn_db *db)
{
	return db->cc->mn_svc != NULL ? db->cc->mn_svc : db->mn_svc_ext;
}

bool
dtxn_db_has_mn_svc(const struct dtxn_db *db)
{
	return db != NULL && mn_svc_ops(db) != NULL;
}

int
dtxn_db_set_mn_svc(struct dtxn_db *db, const struct dtxn_cc_mn_svc_ops *ops, void *arg)
{
	if (db == NULL || ops == NULL)
		return -EINVAL;
	if (mn_svc_ops(db) != NULL)
		return -EEXIST;
	db->mn_svc_ext = ops;
	db->mn_svc_ext_arg = arg;
	return 0;
}

void *
dtxn_db_mn_svc_arg(const struct dtxn_db *db)
{
	return db == NULL ? NULL : db->mn_svc_ext_arg;
}

struct dtxn_mn_svc *
dtxn_mn_svc_create(struct dtxn_db *db, uint16_t mn, unsigned workers_per_cn,
		   unsigned max_coords, struct dtxn_sched *sched)
{
	struct dtxn_mn_svc *svc;

	if (db == NULL || db->fabric == NULL || mn >= db->conf.n_mn || workers_per_cn == 0 ||
	    max_coords == 0) {
		rte_errno = EINVAL;
		return NULL;
	}
	if (mn_svc_ops(db) == NULL) {
		rte_errno = ENOTSUP;
		return NULL;
	}
	svc = rte_zmalloc("dtxn_mn_svc", sizeof(*svc), 0);
	if (svc == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	svc->ops = mn_svc_ops(db);
	svc->priv = svc->ops->create(db, mn, workers_per_cn, max_coords, sched);
	if (svc->priv == NULL) {
		int err = rte_errno;

		rte_free(svc);
		rte_errno = err;
		return NULL;
	}
	return svc;
}

unsigned
dtxn_mn_svc_poll(struct dtxn_mn_svc *svc)
{
	return svc == NULL ? 0 : svc->ops->poll(svc->priv);
}

struct dtxn_cq *
dtxn_mn_svc_cq(const struct dtxn_mn_svc *svc)
{
	return svc == NULL ? NULL : svc->ops->cq(svc->priv);
}

void
dtxn_mn_svc_destroy(struct dtxn_mn_svc *svc)
{
	if (svc == NULL)
		return;
	svc->ops->destroy(svc->priv);
	rte_free(svc);
}
