/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The RNIC performance model shared by the shm and sim drivers
 * (ARCHITECTURE.md, "NIC performance model"): presets loaded from
 * config/nic/<name>.ini, service times per op, and the atomic busy-until
 * reservation of a service unit.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cfgfile.h>
#include <rte_common.h>
#include <rte_string_fns.h>

#include "dtxn_fabric.h"
#include "fabric_private.h"

#define NIC_SECTION "nic"
#define NS_PER_S 1e9

void
dtxn_nic_model_none(struct dtxn_nic_model *m)
{
	memset(m, 0, sizeof(*m));
	strlcpy(m->name, "none", sizeof(m->name));
}

/* Writes a one-line error message if the caller gave a buffer. */
static void __rte_format_printf(3, 4)
nic_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* Model name = file name without directory and ".ini". */
static void
nic_name_from_path(const char *path, char *name, size_t len)
{
	const char *base = strrchr(path, '/');
	size_t n;

	base = base == NULL ? path : base + 1;
	n = strlen(base);
	if (n > 4 && strcmp(base + n - 4, ".ini") == 0)
		n -= 4;
	if (n >= len)
		n = len - 1;
	memcpy(name, base, n);
	name[n] = '\0';
}

/* Parses a non-negative finite number: 0 or -EINVAL. */
static int
nic_parse_num(const char *s, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	if (end == s || errno != 0 || !isfinite(*v) || *v < 0)
		return -EINVAL;
	while (*end == ' ' || *end == '\t')
		end++;
	return *end == '\0' ? 0 : -EINVAL;
}

int
dtxn_nic_model_load(const char *path, struct dtxn_nic_model *m, char *err,
		    size_t errlen)
{
	static const char *const keys[] = {
		"rtt_ns", "rw_mops", "rw_gbps", "atomic_mops", "dm_atomic_mops",
	};
	double val[RTE_DIM(keys)] = { 0 };
	struct rte_cfgfile_entry *entries = NULL;
	struct rte_cfgfile *cfg = NULL;
	struct dtxn_nic_model nm;
	int n, i, rc;
	unsigned k;

	if (err != NULL && errlen > 0)
		err[0] = '\0';
	if (path == NULL || m == NULL)
		return -EINVAL;
	if (access(path, R_OK) != 0) {
		rc = -ENOENT;
		nic_err(err, errlen, "%s: cannot read NIC model file", path);
		goto fail;
	}
	cfg = rte_cfgfile_load(path, 0);
	if (cfg == NULL) {
		rc = -EINVAL;
		nic_err(err, errlen, "%s: not a valid INI file", path);
		goto fail;
	}
	if (!rte_cfgfile_has_section(cfg, NIC_SECTION)) {
		rc = -EINVAL;
		nic_err(err, errlen, "%s: no [" NIC_SECTION "] section", path);
		goto fail;
	}
	n = rte_cfgfile_section_num_entries(cfg, NIC_SECTION);
	if (n < 0) {
		rc = -EINVAL;
		nic_err(err, errlen, "%s: cannot read [" NIC_SECTION "]", path);
		goto fail;
	}
	entries = calloc(n > 0 ? (size_t)n : 1, sizeof(*entries));
	if (entries == NULL) {
		rc = -ENOMEM;
		nic_err(err, errlen, "%s: out of memory", path);
		goto fail;
	}
	if (rte_cfgfile_section_entries(cfg, NIC_SECTION, entries, n) != n) {
		rc = -EINVAL;
		nic_err(err, errlen, "%s: cannot read [" NIC_SECTION "]", path);
		goto fail;
	}
	for (i = 0; i < n; i++) {
		for (k = 0; k < RTE_DIM(keys); k++)
			if (strcmp(entries[i].name, keys[k]) == 0)
				break;
		if (k == RTE_DIM(keys)) {
			rc = -EINVAL;
			nic_err(err, errlen, "%s: [" NIC_SECTION "] unknown key '%s'",
				 path, entries[i].name);
			goto fail;
		}
		if (nic_parse_num(entries[i].value, &val[k]) != 0) {
			rc = -EINVAL;
			nic_err(err, errlen,
				 "%s: [" NIC_SECTION "] %s = '%s' is not a non-negative number",
				 path, keys[k], entries[i].value);
			goto fail;
		}
	}
	memset(&nm, 0, sizeof(nm));
	nic_name_from_path(path, nm.name, sizeof(nm.name));
	nm.rtt_ns = (uint64_t)llround(val[0]);
	nm.rw_ops_per_s = (uint64_t)llround(val[1] * 1e6);
	nm.rw_bytes_per_s = (uint64_t)llround(val[2] * 1e9 / 8);
	nm.atomic_ops_per_s = (uint64_t)llround(val[3] * 1e6);
	nm.dm_atomic_ops_per_s = (uint64_t)llround(val[4] * 1e6);
	*m = nm;
	free(entries);
	rte_cfgfile_close(cfg);
	return 0;
fail:
	if (err != NULL && errlen > 0)
		FABRIC_LOG(DEBUG, "%s", err);
	free(entries);
	if (cfg != NULL)
		rte_cfgfile_close(cfg);
	return rc;
}

/* Nearest-ns time for @p units at @p per_s units per second. */
static uint64_t
nic_time_ns(double units, uint64_t per_s)
{
	if (per_s == 0)
		return 0;
	return (uint64_t)llround(units * NS_PER_S / (double)per_s);
}

uint64_t
dtxn_nic_service_ns(const struct dtxn_nic_model *m, unsigned opcode, uint32_t len,
		    bool dm)
{
	uint64_t t_ops, t_bytes;

	switch (opcode) {
	case DTXN_WR_READ:
	case DTXN_WR_WRITE:
	case DTXN_WR_SEND:
		t_ops = nic_time_ns(1, m->rw_ops_per_s);
		t_bytes = nic_time_ns(len, m->rw_bytes_per_s);
		return RTE_MAX(t_ops, t_bytes);
	case DTXN_WR_CAS:
	case DTXN_WR_FAA:
	case DTXN_WR_MASKED_CAS:
		return nic_time_ns(1, dm ? m->dm_atomic_ops_per_s : m->atomic_ops_per_s);
	default:
		return 0; /* RECV: the receiving NIC's work is charged to the SEND */
	}
}

uint64_t
dtxn_nic_reserve(struct dtxn_nic_unit *u, uint64_t arrive_ns, uint64_t service_ns)
{
	uint64_t cur, start;

	cur = __atomic_load_n(&u->busy_until_ns, __ATOMIC_RELAXED);
	do {
		start = RTE_MAX(arrive_ns, cur);
		if (service_ns == 0)
			break; /* nothing to reserve; still FIFO behind the queue */
	} while (!__atomic_compare_exchange_n(&u->busy_until_ns, &cur, start + service_ns,
					      true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	__atomic_fetch_add(&u->busy_ns, service_ns, __ATOMIC_RELAXED);
	__atomic_fetch_add(&u->ops, 1, __ATOMIC_RELAXED);
	return start + service_ns;
}
