/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Motor's options (dtxn_db_conf.cc_options, dtxn-app --cc-opts;
 * doc/guides/motor.md, "Options"): "key=value" pairs separated by ',' or
 * ';'. Each key picks one of a few named choices; the first choice is the
 * default, which is what the paper does, but for oplog on a fabric whose
 * posted WRs die with their CN (motor_db_init()). bucket_slots takes a number
 * (with index=direct, the Motor artifact's index geometry: motor.md
 * "Index geometry").
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "motor_private.h"

/* One key: its choices, the default first, and where the choice goes. */
struct opt_key {
	const char *key;
	const char *choices[3];
	size_t off;
};

static const struct opt_key g_keys[] = {
	{ "tso", { "cn", "mn", "mn-single" }, offsetof(struct motor_opts, tso) },
	{ "oplog", { "cn", "mn", NULL }, offsetof(struct motor_opts, oplog) },
	{ "index", { "hash", "direct", NULL }, offsetof(struct motor_opts, index) },
};

/* Applies one "key=value" token; 0 or -EINVAL with a message. */
static int
opt_apply(char *tok, struct motor_opts *o, char *err, size_t errlen)
{
	char *eq = strchr(tok, '=');
	unsigned k, c;

	if (eq == NULL || eq == tok || eq[1] == '\0') {
		snprintf(err, errlen, "motor: '%s' is not key=value", tok);
		return -EINVAL;
	}
	*eq = '\0';
	if (strcmp(tok, "bucket_slots") == 0) {
		if (dtxn_cc_opt_u32(eq + 1, 1, 256, &o->bucket_slots) == 0)
			return 0;
		snprintf(err, errlen, "motor: bucket_slots=%s: expected 1..256", eq + 1);
		return -EINVAL;
	}
	for (k = 0; k < RTE_DIM(g_keys); k++)
		if (strcmp(tok, g_keys[k].key) == 0)
			break;
	if (k == RTE_DIM(g_keys)) {
		snprintf(err, errlen, "motor: unknown option '%s' (tso, oplog, index, bucket_slots)",
			 tok);
		return -EINVAL;
	}
	for (c = 0; c < RTE_DIM(g_keys[k].choices) && g_keys[k].choices[c] != NULL; c++)
		if (strcmp(eq + 1, g_keys[k].choices[c]) == 0) {
			*((uint8_t *)o + g_keys[k].off) = (uint8_t)c;
			if (g_keys[k].off == offsetof(struct motor_opts, oplog))
				o->oplog_given = 1;
			return 0;
		}
	if (c > 2)
		snprintf(err, errlen, "motor: %s=%s: expected %s, %s or %s", tok, eq + 1,
			 g_keys[k].choices[0], g_keys[k].choices[1], g_keys[k].choices[2]);
	else
		snprintf(err, errlen, "motor: %s=%s: expected %s or %s", tok, eq + 1,
			 g_keys[k].choices[0], g_keys[k].choices[1]);
	return -EINVAL;
}

int
motor_opts_parse(const char *s, struct motor_opts *o, char *err, size_t errlen)
{
	char buf[256], *save = NULL, *tok;

	memset(o, 0, sizeof(*o));
	if (s == NULL || s[0] == '\0')
		return 0;
	if (strlen(s) >= sizeof(buf)) {
		snprintf(err, errlen, "motor: options longer than %zu characters", sizeof(buf) - 1);
		return -EINVAL;
	}
	snprintf(buf, sizeof(buf), "%s", s);
	for (tok = strtok_r(buf, ",;", &save); tok != NULL; tok = strtok_r(NULL, ",;", &save))
		if (opt_apply(tok, o, err, errlen) != 0)
			return -EINVAL;
	return 0;
}

int
motor_check_options(const char *opts, char *err, size_t errlen)
{
	struct motor_opts o;

	return motor_opts_parse(opts, &o, err, errlen);
}

int
motor_table_geometry(const struct dtxn_db *db, struct dtxn_table_def *def, uint32_t *slot_size,
		     uint32_t *aux_size)
{
	struct motor_opts o;
	char err[160];

	/* checked by dtxn_db_create(), so they parse */
	if (motor_opts_parse(db->conf.cc_options, &o, err, sizeof(err)) != 0)
		memset(&o, 0, sizeof(o));
	/* a direct index the workload declared keeps its geometry (its ids map to buckets) */
	if (o.bucket_slots != 0 && !(def->flags & DTXN_TABLE_F_DIRECT_INDEX))
		def->slots_per_bucket = o.bucket_slots;
	if (o.index == MOTOR_INDEX_DIRECT && (def->flags & DTXN_TABLE_F_DENSE_IDS))
		def->flags |= DTXN_TABLE_F_DIRECT_INDEX;
	/* a record's attribute bar is the delta area numbered as its Vpkg's */
	if (motor_table_delta(def) != 0)
		def->flags |= DTXN_TABLE_F_DELTA_BY_SLOT;
	/* inserts take over the slots of deleted records: buckets keep a watermark */
	def->flags |= DTXN_TABLE_F_RECLAIM;
	return motor_table_sizes(def, slot_size, aux_size);
}
