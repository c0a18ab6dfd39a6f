/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Protocol registry (DTXN_CC_REGISTER), abort-reason and isolation names.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <rte_log.h>

#include "txn_private.h"

RTE_LOG_REGISTER(dtxn_txn_logtype, dtxn.txn, INFO);

#define REGISTRY_MAX 16

static const struct dtxn_cc_ops *g_cc_ops[REGISTRY_MAX];
static unsigned g_cc_n;

int
dtxn_cc_register(const struct dtxn_cc_ops *ops)
{
	if (ops == NULL || ops->name == NULL || ops->name[0] == '\0' ||
	    ops->slot_size == NULL || ops->slot_format == NULL ||
	    ops->slot_value == NULL || ops->execute == NULL ||
	    ops->commit == NULL || ops->abort == NULL ||
	    (ops->mn_svc != NULL && (ops->mn_svc->create == NULL || ops->mn_svc->poll == NULL ||
				     ops->mn_svc->cq == NULL || ops->mn_svc->destroy == NULL)))
		return -EINVAL;
	if (dtxn_cc_find(ops->name) != NULL)
		return -EEXIST;
	if (g_cc_n >= REGISTRY_MAX)
		return -ENOSPC;
	/* in name order, whatever order the constructors ran in (LTO reverses it) */
	unsigned i;

	for (i = g_cc_n++; i > 0 && strcmp(g_cc_ops[i - 1]->name, ops->name) > 0; i--)
		g_cc_ops[i] = g_cc_ops[i - 1];
	g_cc_ops[i] = ops;
	return 0;
}

const struct dtxn_cc_ops *
dtxn_cc_find(const char *name)
{
	unsigned i;

	if (name == NULL)
		return NULL;
	for (i = 0; i < g_cc_n; i++)
		if (strcmp(g_cc_ops[i]->name, name) == 0)
			return g_cc_ops[i];
	return NULL;
}

int
dtxn_cc_supports(const char *protocol, enum dtxn_isolation iso)
{
	const struct dtxn_cc_ops *ops;

	if (protocol == NULL || (unsigned)iso >= DTXN_ISO_MAX)
		return -EINVAL;
	ops = dtxn_cc_find(protocol);
	if (ops == NULL)
		return -ENOENT;
	return (ops->isolations & (1u << iso)) != 0;
}

/*
 * The checks of a protocol's option string: alone (@p cluster false), or
 * against the cluster's shape and fabric (dtxn_cc_check_cluster()).
 */
static int
cc_check(const char *protocol, const char *opts, bool cluster, unsigned n_mn, unsigned n_cn,
	 const char *fabric, char *err, size_t errlen)
{
	const struct dtxn_cc_ops *ops = dtxn_cc_find(protocol);
	char dummy[8];

	if (err == NULL || errlen == 0) {
		err = dummy;
		errlen = sizeof(dummy);
	}
	err[0] = '\0';
	if (ops == NULL) {
		snprintf(err, errlen, "unknown protocol '%s'", protocol != NULL ? protocol : "");
		return -ENOENT;
	}
	if (cluster)
		return ops->check_cluster == NULL ||
				       ops->check_cluster(opts != NULL ? opts : "", n_mn, n_cn, fabric,
							  err, errlen) == 0 ?
			       0 : -EINVAL;
	if (opts == NULL || opts[0] == '\0')
		return 0;
	if (ops->check_options == NULL) {
		snprintf(err, errlen, "protocol %s takes no options", ops->name);
		return -EINVAL;
	}
	return ops->check_options(opts, err, errlen) != 0 ? -EINVAL : 0;
}

int
dtxn_cc_check_options(const char *protocol, const char *opts, char *err, size_t errlen)
{
	return cc_check(protocol, opts, false, 0, 0, NULL, err, errlen);
}

int
dtxn_cc_check_cluster(const char *protocol, const char *opts, unsigned n_mn, unsigned n_cn,
		      const char *fabric, char *err, size_t errlen)
{
	return cc_check(protocol, opts, true, n_mn, n_cn, fabric, err, errlen);
}

uint32_t
dtxn_cc_max_coords(const char *protocol)
{
	const struct dtxn_cc_ops *ops = protocol != NULL ? dtxn_cc_find(protocol) : NULL;

	return ops != NULL ? ops->max_coords : 0;
}

void
dtxn_cc_list(char *buf, size_t len)
{
	size_t used = 0;
	unsigned i;

	if (buf == NULL || len == 0)
		return;
	buf[0] = '\0';
	for (i = 0; i < g_cc_n; i++) {
		int n = snprintf(buf + used, len - used, "%s%s", i ? "," : "",
				 g_cc_ops[i]->name);
		if (n < 0 || (size_t)n >= len - used)
			break;
		used += (size_t)n;
	}
}

static const char *const g_abort_names[DTXN_ABORT_REASON_MAX] = {
	[DTXN_ABORT_NONE] = "none",
	[DTXN_ABORT_LOCK_CONFLICT] = "lock_conflict",
	[DTXN_ABORT_VALIDATION] = "validation",
	[DTXN_ABORT_LOCKED_READ] = "locked_read",
	[DTXN_ABORT_INVISIBLE] = "invisible",
	[DTXN_ABORT_NOT_FOUND] = "not_found",
	[DTXN_ABORT_EXISTS] = "exists",
	[DTXN_ABORT_INDEX_FULL] = "index_full",
	[DTXN_ABORT_TOO_LARGE] = "too_large",
	[DTXN_ABORT_FABRIC] = "fabric",
	[DTXN_ABORT_APP] = "app",
	[DTXN_ABORT_WEAKENED] = "weakened",
	[DTXN_ABORT_VERSION_GONE] = "version_gone",
	[DTXN_ABORT_DELTA_FULL] = "delta_full",
};

const char *
dtxn_abort_reason_name(int reason)
{
	if (reason < 0 || reason >= DTXN_ABORT_REASON_MAX)
		return "unknown";
	return g_abort_names[reason];
}

static const char *const g_iso_names[DTXN_ISO_MAX] = {
	[DTXN_ISO_SR] = "sr",
	[DTXN_ISO_SI] = "si",
};

const char *
dtxn_isolation_name(enum dtxn_isolation iso)
{
	if ((unsigned)iso >= DTXN_ISO_MAX)
		return "unknown";
	return g_iso_names[iso];
}

int
dtxn_isolation_parse(const char *name)
{
	int i;

	if (name == NULL)
		return -EINVAL;
	for (i = 0; i < DTXN_ISO_MAX; i++)
		if (strcasecmp(name, g_iso_names[i]) == 0)
			return i;
	return -EINVAL;
}
