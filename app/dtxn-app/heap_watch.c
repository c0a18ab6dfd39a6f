/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DPDK's heap over a cluster run (--role cn): sampled when the run begins
 * and when it ends, and printed as one line, with the scratch arenas'
 * growth. The processes of a cluster share that heap: an allocation that
 * grows it takes DPDK's heap lock through a round of messages with every
 * process, which a stopped or slow process holds up for all (testing.md,
 * "Shared locks"); nothing is to allocate from it while the cluster runs.
 */
#include <inttypes.h>
#include <stdio.h>

#include <rte_lcore.h>
#include <rte_malloc.h>

#include "dtxn_txn.h"
#include "app.h"

void
app_heap_mark(struct app_heap_mark *m, struct dtxn_worker *const *w, unsigned n_workers)
{
	m->total = 0;
	m->elems = 0;
	m->grows = 0;
	for (unsigned i = 0; i < n_workers; i++)
		m->grows += dtxn_worker_arena_grows(w[i]);
	for (unsigned s = 0; s < rte_socket_count(); s++) {
		struct rte_malloc_socket_stats st;

		if (rte_malloc_get_socket_stats(rte_socket_id_by_idx(s), &st) != 0)
			continue;
		m->total += st.heap_totalsz_bytes;
		m->elems += st.alloc_count;
	}
}

void
app_heap_report(const struct app_conf *c, const struct app_heap_mark *begin,
		struct dtxn_worker *const *w, unsigned n_workers)
{
	struct app_heap_mark end;

	app_heap_mark(&end, w, n_workers);
	printf("dtxn: %s: DPDK heap during the run: grew %.1f MiB (%.1f MiB), %" PRId64
	       " allocated elements more; scratch arena chunks taken: %" PRIu64 "\n",
	       c->node, (double)(end.total - begin->total) / (1024.0 * 1024.0),
	       (double)end.total / (1024.0 * 1024.0), (int64_t)(end.elems - begin->elems), end.grows - begin->grows);
	fflush(stdout);
}
