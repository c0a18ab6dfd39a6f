/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Section "recovery" of the report (doc/guides/report.md,
 * doc/guides/cluster.md "Recovery"): a CN failure, its detection, each
 * recovery step, and the survivors' throughput timeline around it.
 */
#include <inttypes.h>
#include <stdio.h>

#include <jansson.h>

#include "stats_private.h"

void
stats_print_recovery(const struct dtxn_report *r, FILE *out)
{
	const struct dtxn_report_recovery *rc = r->recovery;

	if (rc == NULL)
		return;
	fprintf(out, "recovery\n");
	if (rc->dead[0] == '\0')
		fprintf(out, "  no --fault: a CN's lease expired (lease %.3g ms)\n", rc->lease_ms);
	else
		fprintf(out, "  %s died at %.3f ms (%" PRIu64 " txns committed before, kept); lease %.3g ms; detected after %.3f ms; recovered in %.3f ms\n",
			rc->dead, rc->fault_ms, rc->dead_committed, rc->lease_ms, rc->detect_ms,
			rc->recovery_ms);
	if (rc->dropped_chains != 0)
		fprintf(out, "  lost with it (--fault-drop): %" PRIu64 " posted chains, %" PRIu64 " WRs\n",
			rc->dropped_chains, rc->dropped_wrs);
	for (unsigned i = 0; i < rc->n_cn; i++) {
		const struct dtxn_report_recovery_cn *cn = &rc->cn[i];

		fprintf(out, "  %s: by %s at %.3f ms, done at %.3f ms%s: %" PRIu64 " in flight (%" PRIu64
			" rolled back, %" PRIu64 " forward), %" PRIu64 " locks released, %" PRIu64 " WRs\n",
			cn->node, cn->by, cn->detected_ms, cn->recovered_ms, cn->rc ? " (FAILED)" : "",
			cn->txns_seen, cn->rolled_back, cn->rolled_forward, cn->locks_released, cn->wrs);
		for (unsigned k = 0; k < cn->n_steps; k++)
			fprintf(out, "    %-12s %9.3f ms  %" PRIu64 " %s\n", cn->step[k].name,
				cn->step[k].ms, cn->step[k].work, cn->step[k].unit);
	}
	if (rc->back_ms >= 0)
		fprintf(out, "  survivors: %.1f txn/s before, low %.1f, back at 90%% %.3f ms after detection, %.1f after\n",
			rc->pre_tps, rc->low_tps, rc->back_ms, rc->post_tps);
	else
		fprintf(out, "  survivors: %.1f txn/s before, low %.1f, never back at 90%%\n",
			rc->pre_tps, rc->low_tps);
}

static json_t *
rec_steps(const struct dtxn_report_recovery_cn *cn)
{
	json_t *a = json_array();

	for (unsigned k = 0; a != NULL && k < cn->n_steps; k++) {
		json_t *o = json_object();
		bool ok = o != NULL;

		ok = ok && stats_json_put(o, "name", json_string(cn->step[k].name));
		ok = ok && stats_json_put(o, "start_ms", stats_json_num(cn->step[k].start_ms));
		ok = ok && stats_json_put(o, "ms", stats_json_num(cn->step[k].ms));
		ok = ok && stats_json_put(o, "work", stats_json_u64(cn->step[k].work));
		ok = ok && stats_json_put(o, "unit", json_string(cn->step[k].unit));
		if (!ok || json_array_append_new(a, o) != 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

static json_t *
rec_cns(const struct dtxn_report_recovery *rc)
{
	json_t *a = json_array();

	for (unsigned i = 0; a != NULL && i < rc->n_cn; i++) {
		const struct dtxn_report_recovery_cn *cn = &rc->cn[i];
		json_t *o = json_object();
		bool ok = o != NULL;

		ok = ok && stats_json_put(o, "node", json_string(cn->node));
		ok = ok && stats_json_put(o, "detected_by", json_string(cn->by));
		ok = ok && stats_json_put(o, "detected_ms", stats_json_num(cn->detected_ms));
		ok = ok && stats_json_put(o, "recovered_ms", stats_json_num(cn->recovered_ms));
		ok = ok && stats_json_put(o, "ok", json_boolean(cn->rc == 0));
		ok = ok && stats_json_put(o, "txns_in_flight", stats_json_u64(cn->txns_seen));
		ok = ok && stats_json_put(o, "rolled_back", stats_json_u64(cn->rolled_back));
		ok = ok && stats_json_put(o, "rolled_forward", stats_json_u64(cn->rolled_forward));
		ok = ok && stats_json_put(o, "locks_released", stats_json_u64(cn->locks_released));
		ok = ok && stats_json_put(o, "wrs", stats_json_u64(cn->wrs));
		ok = ok && stats_json_put(o, "steps", rec_steps(cn));
		if (!ok || json_array_append_new(a, o) != 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

json_t *
stats_json_recovery(const struct dtxn_report *r)
{
	const struct dtxn_report_recovery *rc = r->recovery;
	json_t *o;
	bool ok;

	if (rc == NULL || (o = json_object()) == NULL)
		return NULL;
	ok = stats_json_put(o, "dead", json_string(rc->dead));
	ok &= stats_json_put(o, "fault_ms", stats_json_num(rc->fault_ms));
	ok &= stats_json_put(o, "lease_ms", stats_json_num(rc->lease_ms));
	ok &= stats_json_put(o, "detect_ms", stats_json_num(rc->detect_ms));
	ok &= stats_json_put(o, "recovery_ms", stats_json_num(rc->recovery_ms));
	ok &= stats_json_put(o, "back_ms", stats_json_num(rc->back_ms));
	ok &= stats_json_put(o, "survivors_pre_tps", stats_json_num(rc->pre_tps));
	ok &= stats_json_put(o, "survivors_low_tps", stats_json_num(rc->low_tps));
	ok &= stats_json_put(o, "survivors_post_tps", stats_json_num(rc->post_tps));
	ok &= stats_json_put(o, "dead_committed", stats_json_u64(rc->dead_committed));
	ok &= stats_json_put(o, "dropped_chains", stats_json_u64(rc->dropped_chains));
	ok &= stats_json_put(o, "dropped_wrs", stats_json_u64(rc->dropped_wrs));
	ok &= stats_json_put(o, "cns", rec_cns(rc));
	ok &= stats_json_put(o, "survivor_intervals", stats_json_intervals(rc->survivors));
	if (!ok) {
		json_decref(o);
		return NULL;
	}
	return o;
}
