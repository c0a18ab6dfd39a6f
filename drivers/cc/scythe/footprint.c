/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What Scythe allocates in a run, before it starts (dtxn_cc_ops.footprint,
 * dtxn_cc_footprint(); the memory check of dtxn-app): per worker what
 * scythe_worker_init() and its coordinators' scythe_coord_init() allocate
 * (the worker and coordinator state, the TSO client, the rpc with its
 * RECV buffers on the QPs to the MNs), and the worker's share of every
 * MN's lock service (mnsvc.c: the service, and lib/rpc's server with its
 * CQ, its QP to this worker and that QP's RECV buffers); with rpc=rrpc,
 * RRPC's (per CN: the registered message memory; per worker: its rrpc and
 * Rockets, and its Rocket in each MN's RRPC service).
 *
 * The MN services are counted per worker as if each served one worker
 * alone (their fixed part once per worker and MN, an upper bound), and
 * in every process, though only the process that owns an MN region runs
 * its service.
 */
#include <errno.h>

#include "dtxn_sched.h"
#include "scythe_private.h"

int
scythe_footprint(const struct dtxn_db *db, unsigned n_cn, unsigned max_coords,
		 struct dtxn_footprint *per_cn, struct dtxn_footprint *per_worker)
{
	const uint64_t slack = DTXN_FOOTPRINT_ALLOC_SLACK;
	unsigned n_mn = db->cat.n_mn;
	struct scythe_opts o;
	char err[160];
	int rc;

	scythe_opts_default(&o);
	if (scythe_opts_parse(db->conf.cc_options, &o, err, sizeof(err)) != 0 || n_mn == 0)
		return -EINVAL;
	/* scythe_worker_init(), scythe_coord_init() */
	per_worker->bytes += sizeof(struct scythe_worker) + slack +
			     (uint64_t)max_coords * (sizeof(struct scythe_coord) + slack);
	dtxn_tso_footprint(per_worker);
	rc = dtxn_rpc_footprint(n_cn, max_coords, per_worker);
	if (rc == 0)
		rc = dtxn_rpc_footprint_mn(n_mn, max_coords, per_worker);
	/* the MN services (mnsvc.c): this worker's share of each */
	for (unsigned m = 0; m < n_mn && rc == 0; m++) {
		per_worker->bytes += scythe_mn_svc_size() + slack;
		rc = dtxn_rpc_srv_footprint(1, 1, max_coords, per_worker);
	}
	/* rpc=rrpc (transport.c): the RRPC domain's share, the worker's rrpc, its Rockets */
	if (rc == 0 && scythe_mn_msg_bytes(db) != 0)
		rc = dtxn_rrpc_footprint(n_mn, n_cn, db->conf.cn_workers, max_coords,
					 scythe_tp_buckets(db), true, per_cn, per_worker);
	return rc;
}
