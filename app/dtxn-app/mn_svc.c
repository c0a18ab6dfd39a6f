/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The protocol's MN-side services in a real-time run (issue 14: Scythe's
 * Lock RPC runs on the MN's CPU). The process that owns an MN's region
 * polls its service: the main lcore of the embedded run (--role all),
 * between its supervision steps, and the MN process (--role mn). The
 * simulation gives each MN's service a simulated thread instead
 * (run_sim.c).
 */
#include <time.h>

#include <rte_common.h>
#include <rte_errno.h>

#include "dtxn_sched.h"
#include "dtxn_txn.h"
#include "app.h"

int
app_mn_svcs_create(struct app_mn_svcs *s, struct dtxn_db *db, uint16_t mn0, uint16_t n_mn,
		   unsigned per_cn, unsigned coords)
{
	s->n = 0;
	if (!dtxn_db_has_mn_svc(db))
		return APP_EXIT_OK;
	for (uint16_t mn = mn0; mn < mn0 + n_mn && s->n < RTE_DIM(s->svc); mn++) {
		struct dtxn_mn_svc *svc = dtxn_mn_svc_create(db, mn, per_cn, coords, NULL);

		if (svc == NULL) {
			app_err("cannot start the %s service of MN %u: %s (more memory: -m)",
				dtxn_db_protocol(db), mn, rte_strerror(rte_errno));
			app_mn_svcs_destroy(s);
			return APP_EXIT_FAIL;
		}
		s->svc[s->n++] = svc;
	}
	return APP_EXIT_OK;
}

void
app_mn_svcs_serve_ms(struct app_mn_svcs *s, unsigned ms)
{
	uint64_t end;

	if (s == NULL || s->n == 0) {
		struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L };

		nanosleep(&ts, NULL);
		return;
	}
	end = dtxn_now_ns() + (uint64_t)ms * 1000000;
	do {
		for (unsigned i = 0; i < s->n; i++)
			(void)dtxn_mn_svc_poll(s->svc[i]);
	} while (dtxn_now_ns() < end);
}

void
app_mn_svcs_destroy(struct app_mn_svcs *s)
{
	if (s == NULL)
		return;
	for (unsigned i = 0; i < s->n; i++)
		dtxn_mn_svc_destroy(s->svc[i]);
	s->n = 0;
}
