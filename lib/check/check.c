/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dtxn_check_run(): the graph (graph.c), the cycle classes (cycle.c), the
 * read classes found while drawing edges; names, descriptions, printing.
 *
 * Classes and the level that proscribes them (Adya 1999, §4; Cerone and
 * Gotsman 2016 for SI):
 *   G0, G1a, G1b, G1c, garbage: both levels;
 *   G2 (a cycle with an rw edge): SR only;
 *   G-SI (a cycle with an rw edge, never two in a row): SI; under SR it
 *   is a subset of G2 and shown as information.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "check_private.h"

static const char *const g_anom_names[DTXN_ANOM_MAX] = {
	[DTXN_ANOM_G0] = "G0",
	[DTXN_ANOM_G1A] = "G1a",
	[DTXN_ANOM_G1B] = "G1b",
	[DTXN_ANOM_G1C] = "G1c",
	[DTXN_ANOM_G2] = "G2",
	[DTXN_ANOM_GSI] = "G-SI",
	[DTXN_ANOM_GARBAGE] = "garbage",
};

static const char *const g_dep_names[DTXN_DEP_MAX] = { "ww", "wr", "rw" };

const char *
dtxn_anomaly_name(enum dtxn_anomaly a)
{
	return (unsigned)a < DTXN_ANOM_MAX ? g_anom_names[a] : "?";
}

const char *
dtxn_dep_name(enum dtxn_dep d)
{
	return (unsigned)d < DTXN_DEP_MAX ? g_dep_names[d] : "?";
}

const char *
dtxn_check_level_name(enum dtxn_check_level level)
{
	switch (level) {
	case DTXN_CHECK_SR:
		return "sr";
	case DTXN_CHECK_SI:
		return "si";
	default:
		return "?";
	}
}

int
dtxn_check_level_parse(const char *name)
{
	if (name == NULL)
		return -EINVAL;
	if (strcmp(name, "sr") == 0)
		return DTXN_CHECK_SR;
	if (strcmp(name, "si") == 0)
		return DTXN_CHECK_SI;
	return -EINVAL;
}

bool
dtxn_anomaly_forbidden(enum dtxn_check_level level, enum dtxn_anomaly a)
{
	if ((unsigned)a >= DTXN_ANOM_MAX)
		return false;
	if (a == DTXN_ANOM_G2)
		return level == DTXN_CHECK_SR;
	if (a == DTXN_ANOM_GSI)
		return level == DTXN_CHECK_SI;
	return true;
}

static bool
is_read_class(enum dtxn_anomaly a)
{
	return a == DTXN_ANOM_G1A || a == DTXN_ANOM_G1B || a == DTXN_ANOM_GARBAGE;
}

/* A read anomaly's example: steps[0] the writer (wr), steps[1] the reader. */
static void
read_example(const struct chk_graph *g, const struct chk_read_anom *ra,
	     struct dtxn_check_anomaly *a)
{
	const struct chk_idmap_slot *w;

	a->count = ra->count;
	if (ra->count == 0)
		return;
	w = chk_idmap_find(&g->map, ra->writer_id);
	a->len = 1;
	a->n_steps = 2;
	a->steps[0].txn = ra->writer_id;
	a->steps[0].coord = w != NULL ? g->txn[w->idx]->coord : UINT32_MAX;
	a->steps[0].dep = DTXN_DEP_WR;
	a->steps[0].table = ra->table;
	a->steps[0].key = ra->key;
	a->steps[1].txn = g->txn[ra->reader]->id;
	a->steps[1].coord = g->txn[ra->reader]->coord;
	a->steps[1].dep = DTXN_DEP_WR;
	a->steps[1].table = ra->table;
	a->steps[1].key = ra->key;
}

int
dtxn_check_run(const struct dtxn_history *h, enum dtxn_check_level level,
	       struct dtxn_check_report *r)
{
	struct chk_graph g;
	uint64_t cyclic = 0;
	int rc;

	if (r == NULL)
		return -EINVAL;
	memset(r, 0, sizeof(*r));
	r->level = level;
	if (h == NULL || (unsigned)level >= DTXN_CHECK_LEVEL_MAX) {
		snprintf(r->error, sizeof(r->error), "no history or bad level");
		return -EINVAL;
	}
	rc = chk_graph_build(&g, h, r);
	if (rc == 0) {
		read_example(&g, &g.g1a, &r->anom[DTXN_ANOM_G1A]);
		read_example(&g, &g.g1b, &r->anom[DTXN_ANOM_G1B]);
		read_example(&g, &g.garbage, &r->anom[DTXN_ANOM_GARBAGE]);
		/* every cycle lies in an SCC of the full graph: look there first */
		rc = chk_find_cycles(&g, CHK_MODE_ALL, &r->anom[DTXN_ANOM_G2], &cyclic);
	}
	/* an acyclic graph (the usual case) needs no other search */
	if (rc == 0 && r->anom[DTXN_ANOM_G2].count > 0)
		rc = chk_find_cycles(&g, CHK_MODE_SI, &r->anom[DTXN_ANOM_GSI], NULL);
	if (rc == 0 && cyclic > 0)
		rc = chk_find_cycles(&g, CHK_MODE_WWWR, &r->anom[DTXN_ANOM_G1C], &cyclic);
	if (rc == 0 && cyclic > 0)
		rc = chk_find_cycles(&g, CHK_MODE_WW, &r->anom[DTXN_ANOM_G0], NULL);
	if (rc != 0)
		CHECK_LOG(DEBUG, "check failed: %d %s", rc, r->error);
	chk_graph_free(&g);
	return rc;
}

bool
dtxn_check_ok(const struct dtxn_check_report *r)
{
	if (r == NULL)
		return false;
	for (unsigned a = 0; a < DTXN_ANOM_MAX; a++)
		if (r->anom[a].count > 0 && dtxn_anomaly_forbidden(r->level, (enum dtxn_anomaly)a))
			return false;
	return true;
}

/* Appends to a bounded buffer, keeping the length a full line would need. */
struct out {
	char *buf;
	size_t len;
	size_t n;
};

static void __attribute__((format(printf, 2, 3)))
out_add(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int k;

	va_start(ap, fmt);
	k = vsnprintf(o->n < o->len ? o->buf + o->n : NULL, o->n < o->len ? o->len - o->n : 0,
		      fmt, ap);
	va_end(ap);
	if (k > 0)
		o->n += (size_t)k;
}

static void
out_txn(struct out *o, const struct dtxn_check_step *s)
{
	if (s->coord != UINT32_MAX)
		out_add(o, "T%#" PRIx64 "@c%" PRIu32, s->txn, s->coord);
	else
		out_add(o, "T%#" PRIx64, s->txn);
}

static void
out_key(struct out *o, const struct dtxn_check_step *s)
{
	if (s->table != UINT32_MAX)
		out_add(o, "%" PRIu32 ":%#" PRIx64, s->table, s->key);
	else
		out_add(o, "?");
}

int
dtxn_check_describe(const struct dtxn_check_report *r, enum dtxn_anomaly a, char *buf,
		    size_t len)
{
	const struct dtxn_check_anomaly *x;
	struct out o = { .buf = buf, .len = len };

	if (r == NULL || (unsigned)a >= DTXN_ANOM_MAX || (buf == NULL && len != 0))
		return -EINVAL;
	if (len > 0)
		buf[0] = '\0';
	x = &r->anom[a];
	if (x->count == 0) {
		out_add(&o, "none");
		return (int)o.n;
	}
	if (is_read_class(a)) {
		out_add(&o, "%" PRIu64 " read%s; e.g. ", x->count, x->count == 1 ? "" : "s");
		out_txn(&o, &x->steps[1]);
		out_add(&o, " read ");
		out_key(&o, &x->steps[1]);
		out_add(&o, " at version ");
		out_txn(&o, &x->steps[0]);
		out_add(&o, "%s", a == DTXN_ANOM_G1A ? ", which aborted" :
				  a == DTXN_ANOM_G1B ? ", which overwrote it later" :
						       ", which no recorded txn wrote there");
		return (int)o.n;
	}
	out_add(&o, "%" PRIu64 " cycle%s; shortest %u: ", x->count, x->count == 1 ? "" : "s",
		x->len);
	for (unsigned i = 0; i < x->n_steps; i++) {
		out_txn(&o, &x->steps[i]);
		out_add(&o, " -%s ", dtxn_dep_name((enum dtxn_dep)x->steps[i].dep));
		out_key(&o, &x->steps[i]);
		out_add(&o, "-> ");
	}
	if (x->n_steps < x->len)
		out_add(&o, "... (%u more) ", x->len - x->n_steps);
	out_add(&o, "T%#" PRIx64, x->steps[0].txn);
	return (int)o.n;
}

void
dtxn_check_print(const struct dtxn_check_report *r, FILE *out)
{
	char line[2048];
	bool ok;

	if (r == NULL || out == NULL)
		return;
	ok = dtxn_check_ok(r);
	fprintf(out, "history check (%s): %" PRIu64 " committed, %" PRIu64 " aborted, %" PRIu64
		" items; edges ww %" PRIu64 " wr %" PRIu64 " rw %" PRIu64 "; unresolved %" PRIu64
		"%s\n", dtxn_check_level_name(r->level), r->committed, r->aborted, r->items,
		r->edges[DTXN_DEP_WW], r->edges[DTXN_DEP_WR], r->edges[DTXN_DEP_RW], r->unresolved,
		r->dropped || r->cut ? "; TRUNCATED" : r->partial ? "; PARTIAL" : "");
	if (r->dropped)
		fprintf(out, "  %" PRIu64 " transactions were dropped while recording: reads of "
			"their versions are unresolved\n", r->dropped);
	if (r->cut)
		fprintf(out, "  %" PRIu64 " history files were cut short (their writer died): reads of "
			"versions no recorded txn wrote are unresolved\n", r->cut);
	if (r->partial)
		fprintf(out, "  one CN's part of the cluster's history: reads of versions its peers "
			"wrote, and of absent keys, are unresolved (the CNs' files as one: dtxn-check)\n");
	for (unsigned a = 0; a < DTXN_ANOM_MAX; a++) {
		bool forbidden = dtxn_anomaly_forbidden(r->level, (enum dtxn_anomaly)a);
		const char *verdict = r->anom[a].count == 0 ? "PASS" : forbidden ? "FAIL" : "allowed";

		dtxn_check_describe(r, (enum dtxn_anomaly)a, line, sizeof(line));
		fprintf(out, "  %-8s %-7s %s\n", dtxn_anomaly_name((enum dtxn_anomaly)a), verdict,
			line);
	}
	if (ok) {
		fprintf(out, "result: PASS\n");
		return;
	}
	fprintf(out, "result: FAIL (");
	for (unsigned a = 0, first = 1; a < DTXN_ANOM_MAX; a++)
		if (r->anom[a].count > 0 && dtxn_anomaly_forbidden(r->level, (enum dtxn_anomaly)a)) {
			fprintf(out, "%s%s", first ? "" : ", ", dtxn_anomaly_name((enum dtxn_anomaly)a));
			first = 0;
		}
	fprintf(out, ")\n");
}
