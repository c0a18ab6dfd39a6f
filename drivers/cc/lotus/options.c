/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Lotus's options (dtxn_db_conf.cc_options, dtxn-app --cc-opts;
 * doc/guides/lotus.md, "Options"): "key=value,key=value" (or ';' between
 * pairs, for tools that split lists on commas, e.g. dtxn-sweep), split by
 * lib/txn (dtxn_cc_opts_parse()). The ablation steps of the paper's Figure
 * 14 are presets (ablation=...), applied first so that later keys override
 * them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lotus_private.h"

void
lotus_opts_default(struct lotus_opts *o)
{
	memset(o, 0, sizeof(*o));
	/* the paper's 32 MB (§4.4) holds 4 Mi locks; 8 MiB (1 Mi slots) is
	 * ample for the hundreds of transactions in flight here, and several
	 * CNs share one process's memory */
	o->lock_table_mb = 8;
	o->vt_cache = 65536;     /* §4.4: "64K CVTs" per CN */
	o->vt_subcaches = 16;
	o->routing = LOTUS_ROUTE_HYBRID;
	o->locks = LOTUS_LOCKS_CN;
	o->commit = LOTUS_COMMIT_VISIBLE;
	o->reshard = 1;
	o->log = 1;
	o->reshard_ms = 100;     /* §4.3 */
	o->reshard_pct = 50;
	o->reshard_rounds = 3;
	o->drain_ms = 10;
	o->gc_ms = 500;          /* §7.1 */
	o->rpc_timeout_us = 20000;
}

/* Figure 14's steps, cumulative from Motor. */
static int
opts_ablation(struct lotus_opts *o, const char *v)
{
	static const char *const steps[] = {
		"full-record", "log-visible", "lock-sharding", "two-level-lb", "vt-cache",
	};
	unsigned k;

	for (k = 0; k < RTE_DIM(steps); k++)
		if (strcmp(v, steps[k]) == 0)
			break;
	if (k == RTE_DIM(steps))
		return -EINVAL;
	o->locks = k >= 2 ? LOTUS_LOCKS_CN : LOTUS_LOCKS_MN;
	o->commit = k >= 1 ? LOTUS_COMMIT_VISIBLE : LOTUS_COMMIT_DIRECT;
	o->log = k >= 1;
	o->routing = k >= 3 ? LOTUS_ROUTE_HYBRID : LOTUS_ROUTE_RANDOM;
	o->reshard = k >= 3;
	if (k < 4)
		o->vt_cache = 0;
	return 0;
}

static int
opts_one(void *obj, const char *k, const char *v, char *err, size_t errlen)
{
	static const char *const routing[] = { "hybrid", "random" };
	static const char *const locks[] = { "cn", "mn" };
	static const char *const commit[] = { "visible", "direct" };
	static const char *const onoff[] = { "0", "1" };
	struct lotus_opts *o = obj;
	uint32_t x;
	int rc = -EINVAL;
	const char *range = "";

	if (strcmp(k, "ablation") == 0) {
		rc = opts_ablation(o, v);
		range = "full-record, log-visible, lock-sharding, two-level-lb, vt-cache";
	} else if (strcmp(k, "lock_table_mb") == 0) {
		rc = dtxn_cc_opt_u32(v, 1, 4096, &o->lock_table_mb);
		range = "1..4096";
	} else if (strcmp(k, "vt_cache") == 0) {
		rc = dtxn_cc_opt_u32(v, 0, 1u << 26, &o->vt_cache);
		range = "0 (off)..67108864";
	} else if (strcmp(k, "vt_subcaches") == 0) {
		rc = dtxn_cc_opt_u32(v, 1, 1024, &o->vt_subcaches);
		range = "1..1024";
	} else if (strcmp(k, "routing") == 0) {
		rc = dtxn_cc_opt_pick(v, routing, RTE_DIM(routing), &o->routing);
		range = "hybrid, random";
	} else if (strcmp(k, "locks") == 0) {
		rc = dtxn_cc_opt_pick(v, locks, RTE_DIM(locks), &o->locks);
		range = "cn, mn";
	} else if (strcmp(k, "commit") == 0) {
		rc = dtxn_cc_opt_pick(v, commit, RTE_DIM(commit), &o->commit);
		range = "visible, direct";
	} else if (strcmp(k, "reshard") == 0) {
		rc = dtxn_cc_opt_pick(v, onoff, RTE_DIM(onoff), &o->reshard);
		range = "0, 1";
	} else if (strcmp(k, "log") == 0) {
		rc = dtxn_cc_opt_pick(v, onoff, RTE_DIM(onoff), &o->log);
		range = "0, 1";
	} else if (strcmp(k, "shard_init") == 0) {
		static const char *const si[] = { "spread", "one" };
		rc = dtxn_cc_opt_pick(v, si, RTE_DIM(si), &o->shard_init_one);
		range = "spread, one";
	} else if (strcmp(k, "ts") == 0) {
		static const char *const ts[] = { "cn", "mn" };
		rc = dtxn_cc_opt_pick(v, ts, RTE_DIM(ts), &o->ts_mn);
		range = "cn, mn";
	} else if (strcmp(k, "reshard_ms") == 0) {
		rc = dtxn_cc_opt_u32(v, 1, 60000, &o->reshard_ms);
		range = "1..60000";
	} else if (strcmp(k, "reshard_pct") == 0) {
		rc = dtxn_cc_opt_u32(v, 0, 10000, &o->reshard_pct);
		range = "0..10000";
	} else if (strcmp(k, "reshard_rounds") == 0) {
		rc = dtxn_cc_opt_u32(v, 1, 1000, &o->reshard_rounds);
		range = "1..1000";
	} else if (strcmp(k, "drain_ms") == 0) {
		rc = dtxn_cc_opt_u32(v, 0, 60000, &o->drain_ms);
		range = "0..60000";
	} else if (strcmp(k, "gc_ms") == 0) {
		rc = dtxn_cc_opt_u32(v, 1, 3600000, &o->gc_ms);
		range = "1..3600000";
	} else if (strcmp(k, "rpc_timeout_us") == 0) {
		rc = dtxn_cc_opt_u32(v, 1, 60000000, &x);
		o->rpc_timeout_us = x;
		range = "1..60000000";
	} else {
		snprintf(err, errlen,
			 "lotus: unknown option '%s' (ablation, lock_table_mb, vt_cache, vt_subcaches, routing, locks, commit, reshard, log, shard_init, ts, reshard_ms, reshard_pct, reshard_rounds, drain_ms, gc_ms, rpc_timeout_us)",
			 k);
		return -EINVAL;
	}
	if (rc != 0)
		snprintf(err, errlen, "lotus: %s=%s: expected %s", k, v, range);
	return rc;
}

int
lotus_opts_parse(const char *s, struct lotus_opts *o, char *err, size_t errlen)
{
	if (dtxn_cc_opts_parse("lotus", s, "ablation", opts_one, o, err, errlen) != 0)
		return -EINVAL;
	if (o->commit == LOTUS_COMMIT_DIRECT && o->locks != LOTUS_LOCKS_MN) {
		/* lock-free readers could not tell a commit in flight */
		snprintf(err, errlen, "lotus: commit=direct needs locks=mn");
		return -EINVAL;
	}
	return 0;
}

int
lotus_opts_of_db(const struct dtxn_db *db, struct lotus_opts *o)
{
	char err[160];

	lotus_opts_default(o);
	if (lotus_opts_parse(db->conf.cc_options, o, err, sizeof(err)) != 0) {
		lotus_opts_default(o);
		return -EINVAL;
	}
	return 0;
}

int
lotus_check_options(const char *opts, char *err, size_t errlen)
{
	struct lotus_opts o;

	lotus_opts_default(&o);
	return lotus_opts_parse(opts, &o, err, errlen);
}
