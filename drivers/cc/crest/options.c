/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CREST's options (dtxn_db_conf.cc_options, dtxn-app --cc-opts;
 * doc/guides/crest.md, "Options"), split by lib/txn
 * (dtxn_cc_opts_parse()): cell=0 runs the protocol record-level (every
 * record one cell), the "cell-level CC" factor of Fig. 15; parallel_commit=0
 * writes no redo entry (the "parallel commits" factor); local=1 runs the
 * read and read-write items through the lcore's record cache (the
 * "localized execution" factor, local.c); ro_cache=1 (with local=1) serves
 * reads from the cached image; cache=cn (with local=1, sim fabric only)
 * shares one record cache among all the workers of a CN instead of one per
 * worker lcore (cache=lcore, the default); cache=part (with local=1)
 * partitions the CN's records by lcore, each worker caching only those
 * homed on it, with read-write txns routed to their first record's home.
 * The report names every option that is not the default
 * (crest_opts_name()).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "crest_private.h"

void
crest_opts_default(struct crest_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->cell = 1;
	o->parallel_commit = 1;
	o->local = 0;
}

static int
opts_one(void *obj, const char *k, const char *v, char *err, size_t errlen)
{
	static const char *const onoff[] = { "0", "1" };
	static const char *const caches[] = {
		[CREST_CACHE_LCORE] = "lcore", [CREST_CACHE_CN] = "cn", [CREST_CACHE_PART] = "part",
	};
	struct crest_opts *o = obj;
	uint8_t *field;

	if (strcmp(k, "cache") == 0) {
		if (dtxn_cc_opt_pick(v, caches, RTE_DIM(caches), &o->cache) != 0) {
			snprintf(err, errlen, "crest: cache=%s: expected lcore, cn, part", v);
			return -EINVAL;
		}
		return 0;
	}
	if (strcmp(k, "cell") == 0) {
		field = &o->cell;
	} else if (strcmp(k, "parallel_commit") == 0) {
		field = &o->parallel_commit;
	} else if (strcmp(k, "local") == 0) {
		field = &o->local;
	} else if (strcmp(k, "ro_cache") == 0) {
		field = &o->ro_cache;
	} else {
		snprintf(err, errlen,
			 "crest: unknown option '%s' (cell, parallel_commit, local, ro_cache, cache)",
			 k);
		return -EINVAL;
	}
	if (dtxn_cc_opt_pick(v, onoff, RTE_DIM(onoff), field) != 0) {
		snprintf(err, errlen, "crest: %s=%s: expected 0, 1", k, v);
		return -EINVAL;
	}
	return 0;
}

int
crest_opts_parse(const char *s, struct crest_opts *o, char *err, size_t errlen)
{
	int rc = dtxn_cc_opts_parse("crest", s, NULL, opts_one, o, err, errlen);

	if (rc == 0 && o->ro_cache && !o->local) {
		snprintf(err, errlen, "crest: ro_cache=1 needs local=1 (it reads the record cache)");
		return -EINVAL;
	}
	if (rc == 0 && o->cache != CREST_CACHE_LCORE && !o->local) {
		snprintf(err, errlen, "crest: cache=%s needs local=1 (it shares the record cache)",
			 o->cache == CREST_CACHE_CN ? "cn" : "part");
		return -EINVAL;
	}
	return rc;
}

int
crest_check_options(const char *opts, char *err, size_t errlen)
{
	struct crest_opts o;

	crest_opts_default(&o);
	return crest_opts_parse(opts, &o, err, errlen);
}

int
crest_check_cluster(const char *opts, unsigned n_mn, unsigned n_cn, const char *fabric, char *err,
		    size_t errlen)
{
	struct crest_opts o;
	int rc;

	RTE_SET_USED(n_mn + n_cn); /* any shape */
	crest_opts_default(&o);
	rc = crest_opts_parse(opts, &o, err, errlen);
	if (rc != 0 || o.cache != CREST_CACHE_CN || (fabric != NULL && strcmp(fabric, "sim") == 0))
		return rc;
	snprintf(err, errlen,
		 "crest: cache=cn runs only on --fabric sim (one OS thread runs every lcore of a "
		 "CN there; --fabric %s runs them on threads of their own)",
		 fabric != NULL ? fabric : "?");
	return -EINVAL;
}

void
crest_opts_of_db(const struct dtxn_db *db, struct crest_opts *o)
{
	char err[160];

	crest_opts_default(o);
	if (crest_opts_parse(db->conf.cc_options, o, err, sizeof(err)) != 0)
		crest_opts_default(o);
}

/*
 * The label of every option set, indexed by its non-default options
 * (bit 0 cell=0, bit 1 local=1, bit 2 ro_cache=1, bit 3
 * parallel_commit=0, bit 4 cache=cn, bit 5 cache=part): their names in the order of
 * g_opt_parts, joined by ", " (doc/guides/crest.md, "Options"). Built
 * once, before main(); read-only after, so any thread may read it.
 */
#define OPT_RECORD 1u
#define OPT_LOCAL 2u
#define OPT_RO_CACHE 4u
#define OPT_NO_PC 8u
#define OPT_CN_CACHE 16u
#define OPT_PART_CACHE 32u
#define OPT_SETS 64u
static const struct {
	unsigned bit;
	const char *name;
} g_opt_parts[] = {
	{ OPT_RECORD, "record-level" }, { OPT_LOCAL, "local" }, { OPT_CN_CACHE, "cn cache" },
	{ OPT_PART_CACHE, "partitioned cache" }, { OPT_RO_CACHE, "ro_cache" },
	{ OPT_NO_PC, "no parallel commit" },
};
static char g_opts_names[OPT_SETS][80];

RTE_INIT(crest_opts_names_init)
{
	for (unsigned m = 1; m < OPT_SETS; m++) {
		size_t n = 0;

		for (unsigned p = 0; p < RTE_DIM(g_opt_parts); p++)
			if (m & g_opt_parts[p].bit)
				n += (size_t)snprintf(g_opts_names[m] + n, sizeof(g_opts_names[m]) - n,
						      "%s%s", n != 0 ? ", " : "", g_opt_parts[p].name);
	}
}

const char *
crest_opts_name(const struct crest_opts *o)
{
	unsigned m = (o->cell ? 0 : OPT_RECORD) | (o->local ? OPT_LOCAL : 0) |
		     (o->ro_cache ? OPT_RO_CACHE : 0) | (o->parallel_commit ? 0 : OPT_NO_PC) |
		     (o->cache == CREST_CACHE_CN ? OPT_CN_CACHE : 0) |
		     (o->cache == CREST_CACHE_PART ? OPT_PART_CACHE : 0);

	return m != 0 ? g_opts_names[m] : NULL;
}

const char *
crest_variant(const struct dtxn_db *db)
{
	struct crest_opts o;

	crest_opts_of_db(db, &o);
	return crest_opts_name(&o);
}

bool
crest_can_recover(const struct dtxn_db *db)
{
	struct crest_opts o;

	crest_opts_of_db(db, &o);
	/* doc/guides/crest.md, "Recovery": a cached committed cell is only in its redo entry */
	return !o.local || o.parallel_commit;
}
