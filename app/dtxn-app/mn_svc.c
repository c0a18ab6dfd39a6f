/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The protocol's MN-side services in a real-time run (issue 14: Scythe's
 * Lock RPC runs on the MN's CPU). The process that owns an MN's region
 * polls its service: in the embedded run (--role all) the worker lcores,
 * each at every step of its scheduler (a poller), so that a request is
 * served as soon as it lands even on a shared host; the MN process
 * (--role mn) with its main lcore, without a pause. The simulation gives
 * each MN's service a simulated thread instead (run_sim.c).
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

	if (s == NULL || s->n == 0 || s->on_workers) {
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

unsigned
app_mn_svcs_poll_share(void *arg)
{
	const struct app_mn_svc_share *sh = arg;
	unsigned n = 0;

	for (unsigned i = sh->slot; i < sh->s->n; i += sh->n_slots)
		n += dtxn_mn_svc_poll(sh->s->svc[i]);
	return n;
}

int
app_mn_svcs_on_workers(struct app_mn_svcs *s, struct dtxn_sched *const *scheds,
		       unsigned n_workers)
{
	if (s->n == 0 || n_workers == 0)
		return APP_EXIT_OK;
	for (unsigned w = 0; w < RTE_MIN(s->n, n_workers); w++) {
		s->share[w] = (struct app_mn_svc_share){ .s = s, .slot = w, .n_slots = n_workers };
		if (dtxn_sched_add_poller(scheds[w], app_mn_svcs_poll_share, &s->share[w]) != 0) {
			app_err("cannot hand the MN services to worker %u: no poller room", w);
			return APP_EXIT_FAIL;
		}
	}
	s->on_workers = true;
	return APP_EXIT_OK;
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
