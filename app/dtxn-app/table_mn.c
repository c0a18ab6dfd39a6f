/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --table-mn NAME=MN[,NAME=MN...]: a table's primary on a given MN, its
 * backups on the MNs after it, in place of the default rule (primary on
 * MN id % n_mn), as an artifact places them: CREST puts TPC-C's stock on
 * MN 1 (issue 29 part 2; doc/guides/store.md "A table's MN"). The syntax
 * is checked before the EAL starts (app_validate()); the names and MNs
 * once the benchmark has added its tables (app_db_make()).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "dtxn_store.h"
#include "dtxn_txn.h"

/* Most tables one --table-mn names. */
#define TABLE_MN_MAX 16

/* One NAME=MN of the list. */
struct table_mn {
	char name[DTXN_TABLE_NAME_MAX];
	uint16_t mn;
};

/* One NAME=MN of the list, split in place (@p item is a copy). */
static int
table_mn_item(char *item, struct table_mn *out)
{
	char *eq = strchr(item, '=');
	char *end = NULL;
	unsigned long v;

	if (eq == NULL || eq == item || eq[1] == '\0') {
		app_err("--table-mn: '%s' is not NAME=MN", item);
		return -1;
	}
	*eq = '\0';
	if ((size_t)(eq - item) >= sizeof(out->name)) {
		app_err("--table-mn: table name '%s' is too long (at most %zu characters)", item,
			sizeof(out->name) - 1);
		return -1;
	}
	errno = 0;
	v = eq[1] >= '0' && eq[1] <= '9' ? strtoul(eq + 1, &end, 10) : 0;
	if (end == NULL || *end != '\0' || errno != 0 || v >= DTXN_MAX_NODES) {
		app_err("--table-mn %s=%s: the MN is not a number below %u", item, eq + 1,
			DTXN_MAX_NODES);
		return -1;
	}
	snprintf(out->name, sizeof(out->name), "%s", item);
	out->mn = (uint16_t)v;
	return 0;
}

/* Splits @p s into @p out[*n]; 0, or -1 after one line. */
static int
table_mn_parse(const char *s, struct table_mn *out, unsigned *n)
{
	char buf[sizeof(((struct app_conf *)0)->table_mn)];
	char *save = NULL;

	*n = 0;
	if (s[0] == '\0')
		return 0;
	snprintf(buf, sizeof(buf), "%s", s);
	if (buf[0] == ',' || buf[strlen(buf) - 1] == ',' || strstr(buf, ",,") != NULL) {
		app_err("--table-mn: '%s' has an empty item (expected NAME=MN[,NAME=MN...])", s);
		return -1;
	}
	for (char *it = strtok_r(buf, ",", &save); it != NULL; it = strtok_r(NULL, ",", &save)) {
		if (*n == TABLE_MN_MAX) {
			app_err("--table-mn: more than %u tables", TABLE_MN_MAX);
			return -1;
		}
		if (table_mn_item(it, &out[*n]) != 0)
			return -1;
		for (unsigned k = 0; k < *n; k++)
			if (strcmp(out[k].name, out[*n].name) == 0) {
				app_err("--table-mn: table '%s' is given twice", out[k].name);
				return -1;
			}
		(*n)++;
	}
	return 0;
}

int
app_table_mn_check(const char *s)
{
	struct table_mn tm[TABLE_MN_MAX];
	unsigned n;

	return table_mn_parse(s, tm, &n);
}

int
app_table_mn_apply(const struct app_conf *c, struct dtxn_db *db)
{
	struct table_mn tm[TABLE_MN_MAX];
	const struct dtxn_catalog *cat = dtxn_db_catalog(db);
	unsigned n;

	if (table_mn_parse(c->table_mn, tm, &n) != 0)
		return -1;
	for (unsigned i = 0; i < n; i++) {
		int rc = dtxn_db_set_table_mn(db, tm[i].name, tm[i].mn);
		char names[512] = "";
		size_t off = 0;

		if (rc == -ERANGE) {
			app_err("--table-mn %s=%u: MN %u is not below the run's %u MNs", tm[i].name,
				tm[i].mn, tm[i].mn, cat->n_mn);
			return -1;
		}
		if (rc == -ENOENT) {
			for (unsigned id = 0; id < DTXN_MAX_TABLES; id++) {
				int k;

				if (!cat->present[id])
					continue;
				k = snprintf(names + off, sizeof(names) - off, "%s%s",
					     off > 0 ? ", " : "", cat->tables[id].def.name);
				if (k < 0 || (size_t)k >= sizeof(names) - off)
					break;
				off += (size_t)k;
			}
			app_err("--table-mn %s=%u: benchmark %s has no table '%s' (its tables: %s)",
				tm[i].name, tm[i].mn, c->bench, tm[i].name, names);
			return -1;
		}
		if (rc != 0) {
			app_err("--table-mn %s=%u: %s", tm[i].name, tm[i].mn, strerror(-rc));
			return -1;
		}
	}
	return 0;
}
