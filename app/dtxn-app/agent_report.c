/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Report section "recovery" from the CN agents' records (agent.h) and the
 * survivors' throughput series: detection, each recovery step, and when
 * the survivors were back at 90% of their rate before the fault.
 */
#include <stdio.h>
#include <string.h>

#include <rte_common.h>

#include "agent.h"
#include "app.h"

static double
ms_since(uint64_t t_ns, uint64_t t0_ns)
{
	return t_ns >= t0_ns ? (double)(t_ns - t0_ns) / 1e6 : 0.0;
}

static void
agent_report_cn(const struct app_agent_rec *a, uint16_t n_mn, uint64_t t0_ns,
		struct dtxn_report_recovery_cn *cn)
{
	/* a restarted process (incarnation > 0) by the launcher's name of it,
	 * which restarts a CN once: cnJ.restart */
	snprintf(cn->node, sizeof(cn->node), a->inc == 0 ? "cn%u" : "cn%u.restart",
		 a->rec.dead_cn - n_mn);
	snprintf(cn->by, sizeof(cn->by), "cn%u", a->by_node - n_mn);
	cn->detected_ms = ms_since(a->detect_ns, t0_ns);
	cn->recovered_ms = ms_since(a->rec.end_ns, t0_ns);
	cn->rc = a->rc;
	cn->txns_seen = a->rec.txns_seen;
	cn->rolled_back = a->rec.rolled_back;
	cn->rolled_forward = a->rec.rolled_forward;
	cn->locks_released = a->rec.locks_released;
	cn->wrs = a->rec.wrs;
	cn->n_steps = RTE_MIN(a->rec.n_steps, (unsigned)RTE_DIM(cn->step));
	for (unsigned k = 0; k < cn->n_steps; k++) {
		const struct dtxn_recovery_step *st = &a->rec.step[k];

		snprintf(cn->step[k].name, sizeof(cn->step[k].name), "%s", st->name);
		snprintf(cn->step[k].unit, sizeof(cn->step[k].unit), "%s", st->unit);
		cn->step[k].start_ms = ms_since(st->start_ns, t0_ns);
		cn->step[k].ms = (double)st->ns / 1e6;
		cn->step[k].work = st->work;
	}
}

static double
iv_tps(const struct dtxn_interval *e)
{
	return e->seconds > 0 ? (double)e->commits / e->seconds : 0.0;
}

/* Survivors' rates: before the fault, lowest until back at 90%, after. */
static void
agent_report_timeline(const struct dtxn_series *s, double fault_ms, double detect_ms,
		      struct dtxn_report_recovery *out)
{
	double pre = 0, pre_s = 0, post = 0, post_s = 0, low = -1;
	bool back = false;

	out->back_ms = -1;
	for (unsigned i = 0; i < s->n; i++) {
		const struct dtxn_interval *e = &s->v[i];

		if (!e->warmup && e->t_s * 1e3 <= fault_ms + 1e-9) {
			pre += (double)e->commits;
			pre_s += e->seconds;
		}
	}
	out->pre_tps = pre_s > 0 ? pre / pre_s : 0;
	for (unsigned i = 0; i < s->n; i++) {
		const struct dtxn_interval *e = &s->v[i];
		double end_ms = e->t_s * 1e3;

		if (end_ms <= fault_ms + 1e-9)
			continue;
		if (back) {
			post += (double)e->commits;
			post_s += e->seconds;
			continue;
		}
		if (low < 0 || iv_tps(e) < low)
			low = iv_tps(e);
		if (end_ms >= detect_ms && iv_tps(e) >= 0.9 * out->pre_tps) {
			back = true;
			out->back_ms = end_ms - detect_ms;
		}
	}
	out->low_tps = low < 0 ? 0 : low;
	out->post_tps = post_s > 0 ? post / post_s : 0;
}

void
app_agent_report(const struct app_conf *c, const struct app_agent *agents, unsigned n_cn,
		 uint16_t n_mn, uint64_t t0_ns, const struct dtxn_series *surv,
		 struct dtxn_report_recovery *out)
{
	double first = -1, last = 0;
	size_t len = 0;

	memset(out, 0, sizeof(*out));
	for (unsigned j = 0; j < n_cn && j < 64; j++)
		if (c->fault_mask & (UINT64_C(1) << j))
			len += (size_t)snprintf(out->dead + len, sizeof(out->dead) - RTE_MIN(len, sizeof(out->dead)),
						"%scn%u", len ? "," : "", j);
	out->fault_ms = c->fault_at_s * 1e3;
	out->lease_ms = c->lease_ms;
	for (unsigned j = 0; j < n_cn; j++)
		for (unsigned k = 0; k < agents[j].n_recs && out->n_cn < RTE_DIM(out->cn); k++) {
			struct dtxn_report_recovery_cn *cn = &out->cn[out->n_cn++];

			agent_report_cn(&agents[j].recs[k], n_mn, t0_ns, cn);
			if (first < 0 || cn->detected_ms < first)
				first = cn->detected_ms;
			last = RTE_MAX(last, cn->recovered_ms);
		}
	out->detect_ms = first >= 0 ? first - out->fault_ms : -1;
	out->recovery_ms = first >= 0 ? last - first : -1;
	out->survivors = surv;
	if (surv != NULL && first >= 0)
		agent_report_timeline(surv, out->fault_ms, first, out);
	else
		out->back_ms = -1;
}
