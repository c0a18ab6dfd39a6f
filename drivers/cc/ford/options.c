/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * FORD's options (dtxn_db_conf.cc_options, dtxn-app --cc-opts;
 * doc/guides/ford.md, "FORD as published"), split by lib/txn
 * (dtxn_cc_opts_parse()). published=1 is a preset, applied first: the
 * public code's protocol and its geometry (720 B items, 22-slot buckets);
 * item_size= and bucket_slots= then refine the geometry.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ford_private.h"

void
ford_opts_default(struct ford_opts *o)
{
	memset(o, 0, sizeof(*o));
}

static int
opts_one(void *obj, const char *k, const char *v, char *err, size_t errlen)
{
	static const char *const onoff[] = { "0", "1" };
	struct ford_opts *o = obj;
	const char *range;
	int rc;

	if (strcmp(k, "published") == 0) {
		rc = dtxn_cc_opt_pick(v, onoff, RTE_DIM(onoff), &o->published);
		if (rc == 0) {
			o->item_size = o->published ? FORD_PUB_ITEM_SIZE : 0;
			o->bucket_slots = o->published ? FORD_PUB_BUCKET_SLOTS : 0;
		}
		range = "0, 1";
	} else if (strcmp(k, "item_size") == 0) {
		rc = dtxn_cc_opt_u32(v, 0, FORD_ITEM_SIZE_MAX, &o->item_size);
		if (rc == 0 && o->item_size != 0 && o->item_size < FORD_VALUE_OFF + 8)
			rc = -EINVAL;
		range = "0 (value-sized slots) or 40..65536 bytes";
	} else if (strcmp(k, "bucket_slots") == 0) {
		rc = dtxn_cc_opt_u32(v, 0, 256, &o->bucket_slots);
		range = "0 (the benchmark's) or 1..256";
	} else {
		snprintf(err, errlen, "ford: unknown option '%s' (published, item_size, bucket_slots)",
			 k);
		return -EINVAL;
	}
	if (rc != 0)
		snprintf(err, errlen, "ford: %s=%s: expected %s", k, v, range);
	return rc;
}

int
ford_opts_parse(const char *s, struct ford_opts *o, char *err, size_t errlen)
{
	return dtxn_cc_opts_parse("ford", s, "published", opts_one, o, err, errlen);
}

int
ford_check_options(const char *opts, char *err, size_t errlen)
{
	struct ford_opts o;

	ford_opts_default(&o);
	return ford_opts_parse(opts, &o, err, errlen);
}

/* The db's options; checked by dtxn_db_create(), so they parse. */
static void
opts_of_db(const struct dtxn_db *db, struct ford_opts *o)
{
	char err[160];

	ford_opts_default(o);
	if (ford_opts_parse(db->conf.cc_options, o, err, sizeof(err)) != 0)
		ford_opts_default(o);
}

int
ford_table_geometry(const struct dtxn_db *db, struct dtxn_table_def *def, uint32_t *slot_size,
		    uint32_t *aux_size)
{
	struct ford_opts o;
	uint32_t natural = ford_slot_size(def->value_size);

	opts_of_db(db, &o);
	/* one item size for every table, as FORD's DataItem; a value that
	 * does not fit gets the smallest slot that holds it */
	*slot_size = RTE_MAX(natural, RTE_ALIGN_CEIL(o.item_size, 8));
	*aux_size = 0;
	/* a direct index the workload declared keeps its geometry (its ids map to buckets) */
	if (o.bucket_slots != 0 && !(def->flags & DTXN_TABLE_F_DIRECT_INDEX))
		def->slots_per_bucket = o.bucket_slots;
	return 0;
}

const char *
ford_variant(const struct dtxn_db *db)
{
	struct ford_opts o;

	opts_of_db(db, &o);
	return o.published ? "published" : NULL;
}

bool
ford_can_recover(const struct dtxn_db *db)
{
	struct ford_opts o;

	opts_of_db(db, &o);
	return !o.published; /* doc/guides/ford.md, "Recovery": published mode cannot be */
}
