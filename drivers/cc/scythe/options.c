/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Scythe's options (dtxn_db_conf.cc_options, dtxn-app --cc-opts;
 * doc/guides/scythe.md, "Options"): the two watermarks (§3.1), the band
 * wait (§3.2), the SRTT smoothing alpha (Eq. 2), the heat modes
 * forced (occ_only, tocc_only) for the ablations, the TSO proxies
 * (§4.5, tso_proxies), the 1-bit CAS lock instead of the Takeout
 * Lock (cas_lock, Fig. 27), the Lock RPC's transport (rpc=msg|rrpc,
 * §4.6, Fig. 29; transport.c), and cancelling queued tickets on abort
 * (cancel, not in the paper).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "scythe_private.h"

void
scythe_opts_default(struct scythe_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->cold_wm = 3;     /* §3.1: "ColdWatermark, default value is 3" */
	o->hot_wm = 10;     /* §3.1: "HotWatermark (default value is 10)" */
	o->band_us = 20;    /* §3.2: "wait for approximately 20 us before retrying" */
	o->alpha_pct = 90;  /* Eq. 2: "alpha = 0.9 by default" */
}

static int
opts_one(void *obj, const char *k, const char *v, char *err, size_t errlen)
{
	static const char *const onoff[] = { "0", "1" };
	struct scythe_opts *o = obj;
	const char *range = "";
	int rc;

	if (strcmp(k, "cold_wm") == 0) {
		rc = dtxn_cc_opt_u32(v, 0, 1000, &o->cold_wm);
		range = "0..1000";
	} else if (strcmp(k, "hot_wm") == 0) {
		rc = dtxn_cc_opt_u32(v, 0, 1000, &o->hot_wm);
		range = "0..1000";
	} else if (strcmp(k, "band_us") == 0) {
		rc = dtxn_cc_opt_u32(v, 0, 100000, &o->band_us);
		range = "0 (off)..100000";
	} else if (strcmp(k, "alpha") == 0) {
		rc = dtxn_cc_opt_u32(v, 0, 100, &o->alpha_pct);
		range = "0..100 (percent)";
	} else if (strcmp(k, "occ_only") == 0) {
		rc = dtxn_cc_opt_pick(v, onoff, RTE_DIM(onoff), &o->occ_only);
		range = "0, 1";
	} else if (strcmp(k, "tocc_only") == 0) {
		rc = dtxn_cc_opt_pick(v, onoff, RTE_DIM(onoff), &o->tocc_only);
		range = "0, 1";
	} else if (strcmp(k, "tso_proxies") == 0) {
		rc = dtxn_cc_opt_u32(v, 0, DTXN_TSO_PROXIES_MAX, &o->tso_proxies);
		range = "0..15 (at most MNs - 1)";
	} else if (strcmp(k, "cas_lock") == 0) {
		rc = dtxn_cc_opt_pick(v, onoff, RTE_DIM(onoff), &o->cas_lock);
		range = "0, 1";
	} else if (strcmp(k, "rpc") == 0) {
		static const char *const tps[] = { [SCYTHE_TP_MSG] = "msg", [SCYTHE_TP_RRPC] = "rrpc" };

		rc = dtxn_cc_opt_pick(v, tps, RTE_DIM(tps), &o->rpc);
		range = "msg, rrpc";
	} else if (strcmp(k, "cancel") == 0) {
		rc = dtxn_cc_opt_pick(v, onoff, RTE_DIM(onoff), &o->cancel);
		range = "0, 1";
	} else {
		snprintf(err, errlen,
			 "scythe: unknown option '%s' (cold_wm, hot_wm, band_us, alpha, occ_only, tocc_only, tso_proxies, cas_lock, rpc, cancel)",
			 k);
		return -EINVAL;
	}
	if (rc != 0)
		snprintf(err, errlen, "scythe: %s=%s: expected %s", k, v, range);
	return rc;
}

int
scythe_opts_parse(const char *s, struct scythe_opts *o, char *err, size_t errlen)
{
	if (dtxn_cc_opts_parse("scythe", s, NULL, opts_one, o, err, errlen) != 0)
		return -EINVAL;
	if (o->occ_only && o->tocc_only) {
		snprintf(err, errlen, "scythe: occ_only=1 and tocc_only=1 exclude each other");
		return -EINVAL;
	}
	if (o->hot_wm < o->cold_wm) {
		snprintf(err, errlen, "scythe: hot_wm=%u is below cold_wm=%u", o->hot_wm,
			 o->cold_wm);
		return -EINVAL;
	}
	return 0;
}

int
scythe_check_options(const char *opts, char *err, size_t errlen)
{
	struct scythe_opts o;

	scythe_opts_default(&o);
	return scythe_opts_parse(opts, &o, err, errlen);
}

int
scythe_check_cluster(const char *opts, unsigned n_mn, unsigned n_cn, const char *fabric, char *err,
		     size_t errlen)
{
	struct scythe_opts o;

	RTE_SET_USED(n_cn);
	RTE_SET_USED(fabric);
	scythe_opts_default(&o);
	if (scythe_opts_parse(opts, &o, err, errlen) != 0)
		return -EINVAL;
	if (o.tso_proxies >= n_mn) {
		snprintf(err, errlen,
			 "scythe: tso_proxies=%u needs %u MNs (one per proxy besides MN 0, the TSO's); there are %u",
			 o.tso_proxies, o.tso_proxies + 1, n_mn);
		return -EINVAL;
	}
	return 0;
}

const char *
scythe_variant(const struct dtxn_db *db)
{
	static const char *const names[2][3] = {
		{ NULL, "occ-only", "tocc-only" },
		{ "cas-lock", "cas-lock,occ-only", "cas-lock,tocc-only" },
	};
	const struct scythe_opts *o = &scythe_shared_of(db)->opts;

	return names[o->cas_lock][o->occ_only ? 1 : o->tocc_only ? 2 : 0];
}

bool
scythe_can_recover(const struct dtxn_db *db)
{
	struct scythe_opts o;
	char err[160];

	/* doc/guides/scythe.md, "Recovery": a CAS lock word names no owner */
	scythe_opts_default(&o);
	if (scythe_opts_parse(db->conf.cc_options, &o, err, sizeof(err)) != 0)
		return true; /* dtxn_db_create() refused these options already */
	return !o.cas_lock;
}
