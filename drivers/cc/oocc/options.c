/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * OOCC's options (dtxn_db_conf.cc_options, dtxn-app --cc-opts;
 * doc/guides/oocc.md, "Options"), split by lib/txn (dtxn_cc_opts_parse()):
 * the ablation switches of Fig. 11 (lease, write_unlock, delayed_lock),
 * the lease and its clock allowance, and the Lease Manager (adapt).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "oocc_private.h"

void
oocc_opts_default(struct oocc_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->lease = 1;
	o->write_unlock = 1;
	o->delayed_lock = 1;
	o->upgrade_first = 1;
	o->lease_ns = 10000;     /* Fig. 13/14a's 10 us; the paper's Fig. 10 lease is not stated */
	o->offset_ns = 10;       /* 1000 ppm of 10 us (§VII-B) */
	o->epoch_us = 1000;
	o->lease_min_ns = 1000;
	o->lease_max_ns = 100000;
}

static int
opts_flag(const char *v, uint8_t *out)
{
	static const char *const onoff[] = { "0", "1" };

	return dtxn_cc_opt_pick(v, onoff, RTE_DIM(onoff), out);
}

static int
opts_one(void *obj, const char *k, const char *v, char *err, size_t errlen)
{
	struct oocc_opts *o = obj;
	const char *range = "0, 1";
	int rc;

	if (strcmp(k, "lease") == 0) {
		rc = opts_flag(v, &o->lease);
	} else if (strcmp(k, "write_unlock") == 0) {
		rc = opts_flag(v, &o->write_unlock);
	} else if (strcmp(k, "delayed_lock") == 0) {
		rc = opts_flag(v, &o->delayed_lock);
	} else if (strcmp(k, "upgrade_first") == 0) {
		rc = opts_flag(v, &o->upgrade_first);
	} else if (strcmp(k, "adapt") == 0) {
		rc = opts_flag(v, &o->adapt);
	} else if (strcmp(k, "lease_ns") == 0) {
		rc = dtxn_cc_opt_u32(v, 1, OOCC_LEASE_MAX_NS, &o->lease_ns);
		range = "1..1000000 ns";
	} else if (strcmp(k, "offset_ns") == 0) {
		rc = dtxn_cc_opt_u32(v, 0, OOCC_LEASE_MAX_NS, &o->offset_ns);
		range = "0..1000000 ns";
	} else if (strcmp(k, "epoch_us") == 0) {
		rc = dtxn_cc_opt_u32(v, 10, 10000000, &o->epoch_us);
		range = "10..10000000 us";
	} else if (strcmp(k, "lease_min_ns") == 0) {
		rc = dtxn_cc_opt_u32(v, 1, OOCC_LEASE_MAX_NS, &o->lease_min_ns);
		range = "1..1000000 ns";
	} else if (strcmp(k, "lease_max_ns") == 0) {
		rc = dtxn_cc_opt_u32(v, 1, OOCC_LEASE_MAX_NS, &o->lease_max_ns);
		range = "1..1000000 ns";
	} else {
		snprintf(err, errlen,
			 "oocc: unknown option '%s' (lease, write_unlock, delayed_lock, upgrade_first, lease_ns, "
			 "offset_ns, adapt, epoch_us, lease_min_ns, lease_max_ns)",
			 k);
		return -EINVAL;
	}
	if (rc != 0)
		snprintf(err, errlen, "oocc: %s=%s: expected %s", k, v, range);
	return rc;
}

int
oocc_opts_parse(const char *s, struct oocc_opts *o, char *err, size_t errlen)
{
	int rc = dtxn_cc_opts_parse("oocc", s, NULL, opts_one, o, err, errlen);

	if (rc != 0)
		return rc;
	if (o->lease_min_ns > o->lease_max_ns) {
		snprintf(err, errlen, "oocc: lease_min_ns=%u is above lease_max_ns=%u",
			 o->lease_min_ns, o->lease_max_ns);
		return -EINVAL;
	}
	if (o->adapt && !o->lease) {
		snprintf(err, errlen, "oocc: adapt=1 needs lease=1");
		return -EINVAL;
	}
	return 0;
}

int
oocc_check_options(const char *opts, char *err, size_t errlen)
{
	struct oocc_opts o;

	oocc_opts_default(&o);
	return oocc_opts_parse(opts, &o, err, errlen);
}

const char *
oocc_variant(const struct dtxn_db *db)
{
	struct oocc_opts o;
	char err[200];

	oocc_opts_default(&o);
	if (oocc_opts_parse(db->conf.cc_options, &o, err, sizeof(err)) != 0)
		return NULL;
	if (!o.lease)
		return "no-lease";
	if (!o.write_unlock)
		return o.delayed_lock ? "no-write-unlock" : "lease";
	if (!o.delayed_lock)
		return "lease+write-unlock";
	if (!o.upgrade_first) /* the paper's R2 order: unsafe (commit.c) */
		return o.adapt ? "adaptive-paper-r2" : "paper-r2";
	return o.adapt ? "adaptive" : NULL;
}
