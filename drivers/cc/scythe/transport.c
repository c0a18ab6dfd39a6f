/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The Lock RPC's transport (doc/guides/scythe.md, "The MN-side service";
 * option rpc=msg|rrpc): lib/rpc's SEND/RECV messages to the MN's lib/rpc
 * server (msg), or RRPC (Scythe §4.6, the paper's transport): requests
 * WRITten in 512 B buckets into a ring per CN worker in each MN region's
 * message area, polled by the MN's service, replies WRITten into the
 * worker's ring in its CN's registered memory (dtxn_rrpc.h, "RRPC to the
 * MNs"). The TSO proxies' requests (tso_proxies) stay on lib/rpc either
 * way; so does the worker's lib/rpc.
 */
#include <errno.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_memory.h>

#include "scythe_private.h"

/* Buckets per ring: a reply always has room (dtxn_rrpc_create()), at least the default. */
unsigned
scythe_tp_buckets(const struct dtxn_db *db)
{
	uint64_t workers = (uint64_t)db->conf.n_cn * db->conf.cn_workers;
	uint64_t coords = workers != 0 ? (db->conf.n_coords + workers - 1) / workers : 0;
	uint64_t need = coords * DTXN_RPC_SLOTS / 2;
	unsigned nb = DTXN_RRPC_BUCKETS_DEFAULT;

	while (nb < need && nb < 4096)
		nb *= 2;
	return nb;
}

uint64_t
scythe_mn_msg_bytes(const struct dtxn_db *db)
{
	struct scythe_opts o;
	char err[160];

	scythe_opts_default(&o);
	if (scythe_opts_parse(db->conf.cc_options, &o, err, sizeof(err)) != 0 ||
	    o.rpc != SCYTHE_TP_RRPC || o.cas_lock)
		return 0;
	return dtxn_rrpc_mn_area_bytes(db->conf.n_cn, db->conf.cn_workers, scythe_tp_buckets(db));
}

int
scythe_tp_db_init(struct dtxn_db *db, struct scythe_shared *sh)
{
	struct dtxn_rrpc_domain_conf dc = {
		.size = sizeof(dc),
		.max_workers = db->conf.cn_workers,
		.buckets = scythe_tp_buckets(db),
		.socket_id = SOCKET_ID_ANY,
		.mn_ring_off = db->cat.msg_off,
	};

	/* a recovery pass posts no Lock RPC: no rings to join */
	if (sh->opts.rpc != SCYTHE_TP_RRPC || sh->opts.cas_lock || db->conf.recovery_only)
		return 0;
	if (db->cat.msg_bytes == 0) {
		SCYTHE_LOG(ERR, "rpc=rrpc: the db conf names no CNs and workers per CN (n_cn, cn_workers): no MN rings");
		return -EINVAL;
	}
	if (dtxn_fabric_conf(db->fabric)->incarnation != 0) {
		SCYTHE_LOG(ERR, "rpc=rrpc: a restarted CN cannot rejoin RRPC's rings (doc/guides/scythe.md, Not done); use rpc=msg");
		return -ENOTSUP;
	}
	sh->rrpc = dtxn_rrpc_domain_create(db->fabric, &dc);
	if (sh->rrpc == NULL) {
		SCYTHE_LOG(ERR, "rpc=rrpc: no RRPC domain: %s", rte_strerror(rte_errno));
		return -rte_errno;
	}
	return 0;
}

void
scythe_tp_db_fini(struct scythe_shared *sh)
{
	dtxn_rrpc_domain_destroy(sh->rrpc);
	sh->rrpc = NULL;
}

int
scythe_tp_worker_init(struct dtxn_worker *w, struct scythe_worker *sw)
{
	struct scythe_shared *sh = scythe_shared_of(w->db);

	if (sh->rrpc == NULL)
		return 0;
	sw->rr = dtxn_rrpc_create(sh->rrpc, w);
	return sw->rr == NULL ? -rte_errno : 0;
}

void
scythe_tp_worker_fini(struct scythe_worker *sw)
{
	dtxn_rrpc_destroy(sw->rr);
	sw->rr = NULL;
}

int
scythe_tp_coord_init(struct dtxn_coord *c, struct scythe_coord *sc)
{
	const struct scythe_worker *sw = c->worker->cc_priv;

	if (sw->rr == NULL)
		return 0;
	sc->rep = dtxn_rrpc_ep_create(sw->rr, c);
	return sc->rep == NULL ? -rte_errno : 0;
}

void
scythe_tp_coord_fini(struct scythe_coord *sc)
{
	dtxn_rrpc_ep_destroy(sc->rep);
	sc->rep = NULL;
}

int
scythe_lock_call_lc(struct scythe_coord *sc, struct dtxn_rpc_call *calls, unsigned n)
{
	if (sc->rep != NULL)
		return dtxn_rrpc_call_lc(sc->rep, calls, n);
	return dtxn_rpc_call_lc(sc->ep, calls, n);
}

int
scythe_tp_mn_create(struct dtxn_db *db, uint16_t mn, struct dtxn_cq *cq, struct dtxn_sched *sched,
		    dtxn_rpc_srv_batch_fn fn, void *arg, struct dtxn_rrpc_mn **out)
{
	const struct scythe_shared *sh = scythe_shared_of(db);
	struct dtxn_rrpc_mn_conf mc = {
		.size = sizeof(mc), .mn = mn, .cq = cq, .sched = sched, .fn = fn, .arg = arg,
		.socket_id = SOCKET_ID_ANY,
	};

	*out = NULL;
	if (sh->rrpc == NULL)
		return 0;
	*out = dtxn_rrpc_mn_create(sh->rrpc, &mc);
	return *out == NULL ? -rte_errno : 0;
}
