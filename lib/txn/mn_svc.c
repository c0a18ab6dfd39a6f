/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MN-side services (dtxn_txn.h, "MN-side services"): the handle the app
 * polls, around the protocol's own service (dtxn_cc_ops.mn_svc).
 */
#include <errno.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "txn_private.h"

struct dtxn_mn_svc {
	const struct dtxn_cc_mn_svc_ops *ops;
	void *priv;
};

bool
dtxn_db_has_mn_svc(const struct dtxn_db *db)
{
	return db != NULL && db->cc->mn_svc != NULL;
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
	if (db->cc->mn_svc == NULL) {
		rte_errno = ENOTSUP;
		return NULL;
	}
	svc = rte_zmalloc("dtxn_mn_svc", sizeof(*svc), 0);
	if (svc == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	svc->ops = db->cc->mn_svc;
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
