/* SPDX-License-Identifier: BSD-3-Clause */
/* Table, loader and read-back shared by the anomaly workloads. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "anomaly_common.h"
#include "bench_private.h"

int
anom_define(struct dtxn_bench *b, struct dtxn_db *db, const char *name, uint32_t value_size,
	    uint64_t keys)
{
	struct dtxn_table_def def = { .id = 0, .value_size = value_size, .max_keys = keys };
	int rc;

	snprintf(def.name, sizeof(def.name), "%s", name);
	rc = dtxn_db_add_table(db, &def);
	if (rc != 0)
		bench_set_err(b, "%s: adding table %s failed: %s", b->ops->name, name,
			      rte_strerror(-rc));
	return rc;
}

int
anom_load(struct dtxn_bench *b, struct dtxn_db *db, const char *name, uint32_t value_size,
	  uint64_t keys, int64_t first)
{
	uint8_t *v = rte_zmalloc("anom_load", value_size, 8);
	int rc = 0;

	if (v == NULL) {
		bench_set_err(b, "%s: out of memory", b->ops->name);
		return -ENOMEM;
	}
	memcpy(v, &first, sizeof(first));
	for (uint64_t i = 0; i < keys && rc == 0; i++) {
		rc = dtxn_db_load(db, 0, anom_key(i), v);
		if (rc != 0)
			bench_set_err(b, "%s: loading %s record %" PRIu64 " failed: %s",
				      b->ops->name, name, i, rte_strerror(-rc));
	}
	rte_free(v);
	return rc;
}

int
anom_read_all(struct dtxn_bench *b, struct dtxn_db *db, const char *name, uint32_t value_size,
	      uint64_t keys, int64_t *out)
{
	uint8_t *v = rte_zmalloc("anom_read", value_size, 8);
	int rc = 0;

	if (v == NULL) {
		bench_set_err(b, "%s: out of memory", b->ops->name);
		return -ENOMEM;
	}
	for (uint64_t i = 0; i < keys && rc == 0; i++) {
		rc = dtxn_db_get(db, 0, anom_key(i), v);
		if (rc != 0)
			bench_set_err(b, "%s: %s record %" PRIu64 " is missing", b->ops->name,
				      name, i);
		else
			memcpy(&out[i], v, sizeof(out[i]));
	}
	rte_free(v);
	return rc;
}
