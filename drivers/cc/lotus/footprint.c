/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What Lotus allocates on the CNs, before the run (dtxn_cc_ops.footprint,
 * dtxn_cc_footprint(); issue 11): from its options as lotus_db_init()
 * parses them, per CN what lotus_cn_init() allocates (lock table, VT
 * cache, metrics), per worker what lotus_worker_init() and its
 * coordinators' lotus_coord_init() allocate (lock state, TSO client, RPC
 * QPs, rings and endpoints).
 */
#include <errno.h>

#include "dtxn_sched.h"
#include "dtxn_store.h"
#include "lotus_private.h"

int
lotus_footprint(const struct dtxn_db *db, unsigned n_cn, unsigned max_coords,
		struct dtxn_footprint *per_cn, struct dtxn_footprint *per_worker)
{
	const uint64_t slack = DTXN_FOOTPRINT_ALLOC_SLACK;
	struct lotus_opts o;

	if (lotus_opts_of_db(db, &o) != 0)
		return -EINVAL;
	/* per CN: lotus_cn_init() */
	lotus_lt_footprint((uint64_t)o.lock_table_mb << 20, per_cn);
	if (o.vt_cache != 0 && o.locks == LOTUS_LOCKS_CN)
		lotus_vtc_footprint(o.vt_cache, o.vt_subcaches, lotus_cvt_max(db), per_cn);
	per_cn->bytes += 2 * sizeof(uint64_t) * n_cn + slack;
	/* per worker: lotus_worker_init(), lotus_coord_init() */
	per_worker->bytes += sizeof(struct lotus_worker) + slack +
			     (uint64_t)max_coords * (sizeof(struct lotus_coord) + slack);
	lotus_ls_footprint(lotus_ls_cap(max_coords, n_cn), per_worker);
	dtxn_tso_footprint(per_worker);
	if (n_cn > 1)
		return dtxn_rpc_footprint(n_cn, max_coords, per_worker);
	return 0;
}
