/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The RNIC performance model shared by the shm and sim drivers
 * (ARCHITECTURE.md, "NIC performance model"): presets loaded from
 * config/nic/<name>.ini, service times per op, and the atomic busy-until
 * reservation of a service unit.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_string_fns.h>

#include "dtxn_ini.h"

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

/* The [nic] keys and their ranges (dtxn_fabric.h, DTXN_NIC_*; the files in config/nic). */
static const char *const g_nic_keys[] = {
	"rtt_ns", "rw_mops", "rw_gbps", "atomic_mops", "dm_atomic_mops",
};
static const struct nic_range {
	double min, max;
	bool zero_ok;       /* 0 = unlimited */
	const char *unit;
} g_nic_ranges[RTE_DIM(g_nic_keys)] = {
	{ 0, DTXN_NIC_RTT_MAX_NS, false, "ns" },
	{ DTXN_NIC_MOPS_MIN, DTXN_NIC_MOPS_MAX, true, "Mops" },
	{ DTXN_NIC_GBPS_MIN, DTXN_NIC_GBPS_MAX, true, "Gbit/s" },
	{ DTXN_NIC_MOPS_MIN, DTXN_NIC_MOPS_MAX, true, "Mops" },
	{ DTXN_NIC_MOPS_MIN, DTXN_NIC_MOPS_MAX, true, "Mops" },
};

int
dtxn_nic_model_load(const char *path, struct dtxn_nic_model *m, char *err,
		    size_t errlen)
{
	double val[RTE_DIM(g_nic_keys)] = { 0 };
	struct dtxn_nic_model nm;
	struct dtxn_ini *ini;
	int rc = -EINVAL;

	if (err != NULL && errlen > 0)
		err[0] = '\0';
	if (path == NULL || m == NULL)
		return -EINVAL;
	ini = dtxn_ini_load_one(path, NIC_SECTION, err, errlen);
	if (ini == NULL) {
		rc = -rte_errno;
		goto out;
	}
	for (unsigned i = 0; i < dtxn_ini_count(ini); i++) {
		const struct dtxn_ini_entry *e = dtxn_ini_at(ini, i);
		int k = dtxn_ini_key_index(ini, e, g_nic_keys, RTE_DIM(g_nic_keys), err, errlen);

		if (k < 0 || dtxn_ini_number(ini, e, g_nic_ranges[k].min, g_nic_ranges[k].max,
					     g_nic_ranges[k].zero_ok, g_nic_ranges[k].unit,
					     &val[k], err, errlen) != 0)
			goto out;
	}
	memset(&nm, 0, sizeof(nm));
	dtxn_ini_stem(path, nm.name, sizeof(nm.name));
	nm.rtt_ns = (uint64_t)llround(val[0]);
	nm.rw_ops_per_s = (uint64_t)llround(val[1] * 1e6);
	nm.rw_bytes_per_s = (uint64_t)llround(val[2] * 1e9 / 8);
	nm.atomic_ops_per_s = (uint64_t)llround(val[3] * 1e6);
	nm.dm_atomic_ops_per_s = (uint64_t)llround(val[4] * 1e6);
	*m = nm;
	rc = 0;
out:
	if (rc != 0 && err != NULL && errlen > 0)
		FABRIC_LOG(DEBUG, "%s", err);
	dtxn_ini_free(ini);
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
