/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DTXN_BENCH_ANOMALY_COMMON_H
#define DTXN_BENCH_ANOMALY_COMMON_H

/*
 * What the anomaly workloads (writeskew.c, snapshot.c, hotkey.c; issue 5)
 * share (never installed): one table of fixed-size records whose first
 * 8 bytes are an int64, record i under key dtxn_key_make(i, i & 0xfff),
 * loaded with one value, read back after the run.
 */

#include <stdint.h>

#include "dtxn_bench.h"
#include "dtxn_store.h"

/** Key of record @p i: the locality field is the record id. */
static inline uint64_t
anom_key(uint64_t i)
{
	return dtxn_key_make(i, i & DTXN_KEY_SHARD_MASK);
}

/**
 * Adds table 0 named @p name of @p keys records of @p value_size bytes.
 * @return 0, or the dtxn_db_add_table() error with b->err set.
 */
int anom_define(struct dtxn_bench *b, struct dtxn_db *db, const char *name,
		uint32_t value_size, uint64_t keys);

/**
 * Loads records 0..keys-1 of table 0: the int64 @p first at offset 0,
 * zeros after it.
 * @return 0, or -errno with b->err set.
 */
int anom_load(struct dtxn_bench *b, struct dtxn_db *db, const char *name,
	      uint32_t value_size, uint64_t keys, int64_t first);

/**
 * Reads the int64 at offset 0 of records 0..keys-1 (MN CPU, after the
 * run) into @p out[keys].
 * @return 0, or -errno (-ENOENT: a record is missing) with b->err set.
 */
int anom_read_all(struct dtxn_bench *b, struct dtxn_db *db, const char *name,
		  uint32_t value_size, uint64_t keys, int64_t *out);

#endif /* DTXN_BENCH_ANOMALY_COMMON_H */
