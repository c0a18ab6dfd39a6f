/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The fabric driver's own counters in the report (struct
 * dtxn_report_driver; doc/guides/report.md): JSON section
 * "fabric_driver" and the summary's "fabric driver" block, the same
 * entries in the same order.
 */
#include <inttypes.h>
#include <stdio.h>

#include <jansson.h>

#include "stats_private.h"

static unsigned
driver_n(const struct dtxn_report_driver *d)
{
	return d->n < DTXN_REPORT_MAX_DRIVER_KV ? d->n : DTXN_REPORT_MAX_DRIVER_KV;
}

json_t *
stats_json_driver(const struct dtxn_report *r)
{
	const struct dtxn_report_driver *d = r->driver;
	json_t *o;
	bool ok;

	if (d == NULL || (o = json_object()) == NULL)
		return NULL;
	ok = stats_json_put(o, "name", json_string(d->name != NULL ? d->name : ""));
	for (unsigned i = 0; i < driver_n(d) && ok; i++) {
		const struct dtxn_report_kv *kv = &d->kv[i];

		ok = stats_json_put(o, kv->key, kv->str != NULL ? json_string(kv->str) :
						stats_json_u64(kv->u64));
	}
	if (!ok) {
		json_decref(o);
		return NULL;
	}
	return o;
}

void
stats_print_driver(const struct dtxn_report *r, FILE *out)
{
	const struct dtxn_report_driver *d = r->driver;

	if (d == NULL)
		return;
	fprintf(out, "fabric driver %s\n", d->name != NULL ? d->name : "");
	for (unsigned i = 0; i < driver_n(d); i++) {
		const struct dtxn_report_kv *kv = &d->kv[i];

		if (kv->str != NULL)
			fprintf(out, "  %-34s %s\n", kv->key, kv->str);
		else
			fprintf(out, "  %-34s %" PRIu64 "\n", kv->key, kv->u64);
	}
}
