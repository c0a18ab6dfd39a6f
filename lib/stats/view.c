/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Figures derived from a report, shared by the text summary and the JSON
 * report so that both print the same numbers (stats_private.h).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "stats_private.h"

RTE_LOG_REGISTER_DEFAULT(dtxn_stats_logtype, WARNING);

_Static_assert(DTXN_WR_READ == 0 && DTXN_WR_WRITE == 1 && DTXN_WR_CAS == 2 &&
	       DTXN_WR_FAA == 3 && DTXN_WR_MASKED_CAS == 4 && DTXN_WR_SEND == 5,
	       "stats assumes the verbs are opcodes 0..DTXN_WR_SEND");

double
stats_ratio(double num, double den)
{
	if (den == 0.0)
		return 0.0;
	double q = num / den;
	return isfinite(q) ? q : 0.0;
}

uint64_t
stats_type_aborts(const struct dtxn_txn_stats *t, unsigned n_reasons)
{
	uint64_t n = 0;

	for (unsigned i = 0; i < n_reasons && i < DTXN_STATS_MAX_REASONS; i++)
		n += t->aborts[i];
	return n;
}

const char *
stats_reason_name(const struct dtxn_report *r, unsigned i)
{
	/* n_reasons, when set, bounds the named slots; 0 means all of them */
	if (i >= DTXN_STATS_MAX_REASONS || (r->n_reasons != 0 && i >= r->n_reasons))
		return NULL;
	return r->reason_names[i];
}

const char *
stats_type_name(const struct dtxn_report *r, unsigned i, char *buf, size_t len)
{
	if (i < DTXN_STATS_MAX_TYPES && r->type_names[i] != NULL)
		return r->type_names[i];
	snprintf(buf, len, "type%u", i);
	return buf;
}

const char *
stats_op_name(unsigned op, char *buf, size_t len)
{
	const char *n = dtxn_wr_opcode_name(op);

	if (n != NULL && n[0] != '\0')
		return n;
	snprintf(buf, len, "op%u", op);
	return buf;
}

void
stats_view_build(const struct dtxn_report *r, struct stats_view *v)
{
	memset(v, 0, sizeof(*v));
	v->n_types = r->stats.n_types > DTXN_STATS_MAX_TYPES ?
		DTXN_STATS_MAX_TYPES : r->stats.n_types;
	/*
	 * Abort counts are summed over every slot: a count with no name is
	 * not listed by reason, but still counts in the abort rate.
	 */
	v->n_reasons = DTXN_STATS_MAX_REASONS;
	v->n_mn = r->n_mn > DTXN_MAX_NODES ? DTXN_MAX_NODES : r->n_mn;

	for (unsigned t = 0; t < v->n_types; t++) {
		const struct dtxn_txn_stats *ts = &r->stats.type[t];

		v->commits += ts->commits;
		v->attempts += ts->attempts;
		v->rollbacks += ts->rollbacks;
		for (unsigned i = 0; i < v->n_reasons; i++) {
			v->reason[i] += ts->aborts[i];
			v->aborts += ts->aborts[i];
		}
		v->false_aborts += ts->false_aborts;
		dtxn_hist_merge(&v->lat, &ts->lat);
	}
	v->committed_tps = stats_ratio((double)v->commits, r->seconds);
	v->attempted_tps = stats_ratio((double)v->attempts, r->seconds);
	v->abort_rate = stats_ratio((double)v->aborts, (double)v->attempts);
	v->false_share = stats_ratio((double)v->false_aborts, (double)v->aborts);

	for (unsigned m = 0; m < v->n_mn; m++) {
		for (unsigned op = 0; op < DTXN_WR_OP_MAX; op++) {
			v->ops[op] += r->per_mn[m].ops[op];
			v->bytes[op] += r->per_mn[m].bytes[op];
		}
	}
	uint64_t total = 0, bytes = 0;
	for (unsigned op = 0; op < STATS_N_VERBS; op++) {
		v->verbs_per_txn[op] = stats_ratio((double)v->ops[op], (double)v->commits);
		total += v->ops[op];
		bytes += v->bytes[op];
	}
	v->mn_atomics_per_txn = stats_ratio((double)(v->ops[DTXN_WR_CAS] + v->ops[DTXN_WR_FAA] +
						     v->ops[DTXN_WR_MASKED_CAS]),
					    (double)v->commits);
	v->total_verbs_per_txn = stats_ratio((double)total, (double)v->commits);
	v->bytes_per_txn = stats_ratio((double)bytes, (double)v->commits);
	for (unsigned n = 0; n < DTXN_MAX_NODES; n++)
		v->cn_msgs += r->cn_msgs[n];
	v->cn_msgs_per_txn = stats_ratio((double)v->cn_msgs, (double)v->commits);
}
