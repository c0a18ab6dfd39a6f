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
	m->version = 1;
}

/*
 * The [nic] keys and their ranges (dtxn_fabric.h, DTXN_NIC_*; the files in
 * config/nic). NIC_K_MODEL is a word, every other key a number; each number
 * key belongs to model v1, model v2 or both.
 */
enum nic_key {
	NIC_K_MODEL, NIC_K_RTT, NIC_K_RW_MOPS, NIC_K_RW_GBPS, NIC_K_ATOMIC, NIC_K_DM_ATOMIC,
	NIC_K_READ, NIC_K_WRITE, NIC_K_ATOMIC_SAME, NIC_K_DM_ATOMIC_SAME, NIC_K_LINK_GBPS,
	NIC_K_HEADER, NIC_K_MTU, NIC_K_MAX
};
static const char *const g_nic_keys[NIC_K_MAX] = {
	"model", "rtt_ns", "rw_mops", "rw_gbps", "atomic_mops", "dm_atomic_mops",
	"read_mops", "write_mops", "atomic_same_mops", "dm_atomic_same_mops", "link_gbps",
	"header_bytes", "mtu_bytes",
};
#define NIC_V1 1u
#define NIC_V2 2u
static const struct nic_range {
	double min, max;
	bool zero_ok;       /* 0 = unlimited (mtu_bytes: one packet per op) */
	const char *unit;
	unsigned models;    /* NIC_V1 | NIC_V2: the models the key belongs to */
} g_nic_ranges[NIC_K_MAX] = {
	[NIC_K_MODEL] = { 0, 0, false, "", NIC_V1 | NIC_V2 },
	[NIC_K_RTT] = { 0, DTXN_NIC_RTT_MAX_NS, false, "ns", NIC_V1 | NIC_V2 },
	[NIC_K_RW_MOPS] = { DTXN_NIC_MOPS_MIN, DTXN_NIC_MOPS_MAX, true, "Mops", NIC_V1 },
	[NIC_K_RW_GBPS] = { DTXN_NIC_GBPS_MIN, DTXN_NIC_GBPS_MAX, true, "Gbit/s", NIC_V1 },
	[NIC_K_ATOMIC] = { DTXN_NIC_MOPS_MIN, DTXN_NIC_MOPS_MAX, true, "Mops", NIC_V1 | NIC_V2 },
	[NIC_K_DM_ATOMIC] = { DTXN_NIC_MOPS_MIN, DTXN_NIC_MOPS_MAX, true, "Mops", NIC_V1 | NIC_V2 },
	[NIC_K_READ] = { DTXN_NIC_MOPS_MIN, DTXN_NIC_MOPS_MAX, true, "Mops", NIC_V2 },
	[NIC_K_WRITE] = { DTXN_NIC_MOPS_MIN, DTXN_NIC_MOPS_MAX, true, "Mops", NIC_V2 },
	[NIC_K_ATOMIC_SAME] = { DTXN_NIC_MOPS_MIN, DTXN_NIC_MOPS_MAX, true, "Mops", NIC_V2 },
	[NIC_K_DM_ATOMIC_SAME] = { DTXN_NIC_MOPS_MIN, DTXN_NIC_MOPS_MAX, true, "Mops", NIC_V2 },
	[NIC_K_LINK_GBPS] = { DTXN_NIC_GBPS_MIN, DTXN_NIC_GBPS_MAX, true, "Gbit/s", NIC_V2 },
	[NIC_K_HEADER] = { 0, DTXN_NIC_HEADER_MAX, true, "B", NIC_V2 },
	[NIC_K_MTU] = { DTXN_NIC_MTU_MIN, DTXN_NIC_MTU_MAX, true, "B", NIC_V2 },
};

/* Sets @p err to "path:line: msg" for entry @p e. */
static void
nic_err(const struct dtxn_ini *ini, const struct dtxn_ini_entry *e, char *err, size_t errlen,
	const char *msg, const char *arg)
{
	if (err != NULL && errlen > 0)
		snprintf(err, errlen, "%s:%u: %s %s", dtxn_ini_path(ini), e->line, msg, arg);
}

/* The model the file selects (its model key, else v1): NIC_V1 or NIC_V2; 0 on error. */
static unsigned
nic_model_version(const struct dtxn_ini *ini, char *err, size_t errlen)
{
	for (unsigned i = 0; i < dtxn_ini_count(ini); i++) {
		const struct dtxn_ini_entry *e = dtxn_ini_at(ini, i);

		if (strcmp(e->name, g_nic_keys[NIC_K_MODEL]) != 0)
			continue;
		if (strcmp(e->value, "v1") == 0)
			return NIC_V1;
		if (strcmp(e->value, "v2") == 0)
			return NIC_V2;
		nic_err(ini, e, err, errlen, "model must be v1 or v2, not", e->value);
		return 0;
	}
	return NIC_V1;
}

int
dtxn_nic_model_load(const char *path, struct dtxn_nic_model *m, char *err,
		    size_t errlen)
{
	double val[NIC_K_MAX] = { 0 };
	struct dtxn_nic_model nm;
	struct dtxn_ini *ini;
	unsigned model;
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
	model = nic_model_version(ini, err, errlen);
	if (model == 0)
		goto out;
	for (unsigned i = 0; i < dtxn_ini_count(ini); i++) {
		const struct dtxn_ini_entry *e = dtxn_ini_at(ini, i);
		int k = dtxn_ini_key_index(ini, e, g_nic_keys, RTE_DIM(g_nic_keys), err, errlen);

		if (k < 0)
			goto out;
		if ((g_nic_ranges[k].models & model) == 0) {
			nic_err(ini, e, err, errlen, e->name,
				model == NIC_V2 ? "is a model v1 key; this file has model = v2"
						: "is a model v2 key; add model = v2");
			goto out;
		}
		if (k == NIC_K_MODEL)
			continue;
		if (dtxn_ini_number(ini, e, g_nic_ranges[k].min, g_nic_ranges[k].max,
				    g_nic_ranges[k].zero_ok, g_nic_ranges[k].unit, &val[k], err,
				    errlen) != 0)
			goto out;
	}
	memset(&nm, 0, sizeof(nm));
	dtxn_ini_stem(path, nm.name, sizeof(nm.name));
	nm.version = (uint8_t)model;
	nm.rtt_ns = (uint64_t)llround(val[NIC_K_RTT]);
	nm.atomic_ops_per_s = (uint64_t)llround(val[NIC_K_ATOMIC] * 1e6);
	nm.dm_atomic_ops_per_s = (uint64_t)llround(val[NIC_K_DM_ATOMIC] * 1e6);
	if (model == NIC_V1) {
		nm.rw_ops_per_s = (uint64_t)llround(val[NIC_K_RW_MOPS] * 1e6);
		nm.rw_bytes_per_s = (uint64_t)llround(val[NIC_K_RW_GBPS] * 1e9 / 8);
	} else {
		nm.rw_ops_per_s = (uint64_t)llround(val[NIC_K_WRITE] * 1e6);
		nm.rw_bytes_per_s = (uint64_t)llround(val[NIC_K_LINK_GBPS] * 1e9 / 8);
		nm.read_ops_per_s = (uint64_t)llround(val[NIC_K_READ] * 1e6);
		nm.atomic_same_ops_per_s = (uint64_t)llround(val[NIC_K_ATOMIC_SAME] * 1e6);
		nm.dm_atomic_same_ops_per_s = (uint64_t)llround(val[NIC_K_DM_ATOMIC_SAME] * 1e6);
		nm.header_bytes = (uint32_t)llround(val[NIC_K_HEADER]);
		nm.mtu_bytes = (uint32_t)llround(val[NIC_K_MTU]);
	}
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

static bool
nic_is_atomic(unsigned opcode)
{
	return opcode == DTXN_WR_CAS || opcode == DTXN_WR_FAA || opcode == DTXN_WR_MASKED_CAS;
}

uint64_t
dtxn_nic_link_bytes(const struct dtxn_nic_model *m, uint32_t len)
{
	uint64_t pkts = 1;

	if (m->version != NIC_V2)
		return 0;
	if (m->mtu_bytes != 0 && len > m->mtu_bytes)
		pkts = ((uint64_t)len + m->mtu_bytes - 1) / m->mtu_bytes;
	return (uint64_t)len + pkts * m->header_bytes;
}

/* Model v2: the pipeline's cost of one op, ns. */
static uint64_t
nic_v2_service_ns(const struct dtxn_nic_model *m, unsigned opcode, uint32_t len, bool dm)
{
	uint64_t rate;

	switch (opcode) {
	case DTXN_WR_READ:
		rate = m->read_ops_per_s;
		break;
	case DTXN_WR_WRITE:
	case DTXN_WR_SEND:
		rate = m->rw_ops_per_s;
		break;
	case DTXN_WR_CAS:
	case DTXN_WR_FAA:
	case DTXN_WR_MASKED_CAS:
		rate = dm ? m->dm_atomic_ops_per_s : m->atomic_ops_per_s;
		len = 8;
		break;
	default:
		return 0; /* RECV: the receiving NIC's work is charged to the SEND */
	}
	return RTE_MAX(nic_time_ns(1, rate),
		       nic_time_ns((double)dtxn_nic_link_bytes(m, len), m->rw_bytes_per_s));
}

/* The computation dtxn_nic_model_prepare() caches. */
static uint64_t
nic_service_full_ns(const struct dtxn_nic_model *m, unsigned opcode, uint32_t len, bool dm)
{
	uint64_t t_ops, t_bytes;

	if (m->version == NIC_V2)
		return nic_v2_service_ns(m, opcode, len, dm);
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

/* The dtxn_nic_svc kind of @p opcode, or -1 (RECV and unknown opcodes: 0 ns). */
static int
nic_svc_kind(unsigned opcode, bool dm)
{
	switch (opcode) {
	case DTXN_WR_READ:
		return 0;
	case DTXN_WR_WRITE:
	case DTXN_WR_SEND:
		return 1;
	case DTXN_WR_CAS:
	case DTXN_WR_FAA:
	case DTXN_WR_MASKED_CAS:
		return dm ? 3 : 2;
	default:
		return -1;
	}
}

void
dtxn_nic_model_prepare(struct dtxn_nic_model *m)
{
	static const unsigned op[DTXN_NIC_SVC_KINDS] = {
		DTXN_WR_READ, DTXN_WR_WRITE, DTXN_WR_CAS, DTXN_WR_CAS,
	};

	m->svc.ready = 0;
	for (unsigned k = 0; k < DTXN_NIC_SVC_KINDS; k++) {
		bool dm = k == 3;
		uint64_t t0 = nic_service_full_ns(m, op[k], 0, dm);
		uint64_t lo = 0, hi = UINT32_MAX;

		/*
		 * The time never falls as the length grows (a rounded, monotone
		 * byte term under a max with the length-free op term), so the
		 * lengths served in t0 are a prefix [0, flat]: find its end.
		 */
		while (lo < hi) {
			uint64_t mid = lo + (hi - lo + 1) / 2;

			if (nic_service_full_ns(m, op[k], (uint32_t)mid, dm) == t0)
				lo = mid;
			else
				hi = mid - 1;
		}
		m->svc.ops_ns[k] = t0;
		m->svc.flat_len[k] = (uint32_t)lo;
	}
	m->svc.ready = 1;
}

uint64_t
dtxn_nic_service_ns(const struct dtxn_nic_model *m, unsigned opcode, uint32_t len, bool dm)
{
	int k;

	if (m->svc.ready) {
		k = nic_svc_kind(opcode, dm);
		if (k < 0)
			return 0;
		if (len <= m->svc.flat_len[k])
			return m->svc.ops_ns[k];
	}
	return nic_service_full_ns(m, opcode, len, dm);
}

uint64_t
dtxn_nic_rmw_ns(const struct dtxn_nic_model *m, unsigned opcode, bool dm)
{
	if (m->version != NIC_V2 || !nic_is_atomic(opcode))
		return 0;
	return nic_time_ns(1, dm ? m->dm_atomic_same_ops_per_s : m->atomic_same_ops_per_s);
}

uint64_t
dtxn_nic_tx_ns(const struct dtxn_nic_model *m, unsigned opcode, uint32_t len)
{
	if (m->version != NIC_V2)
		return 0;
	if (nic_is_atomic(opcode))
		return dtxn_nic_service_ns(m, DTXN_WR_READ, 8, false);
	return dtxn_nic_service_ns(m, opcode, len, false);
}

uint64_t
dtxn_nic_reserve(struct dtxn_nic_unit *u, uint64_t arrive_ns, uint64_t service_ns)
{
	uint64_t cur, start;

	if (u->one_thread) {
		start = RTE_MAX(arrive_ns, u->busy_until_ns);
		if (service_ns != 0)
			u->busy_until_ns = start + service_ns;
		u->busy_ns += service_ns;
		u->ops++;
		return start + service_ns;
	}
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

/* The same-word slot of the 8 B word at @p off (Fibonacci hashing of the word index). */
static unsigned
nic_word_slot(uint64_t off)
{
	return (unsigned)(((off >> 3) * UINT64_C(0x9e3779b97f4a7c15)) >> 52) &
	       (DTXN_NIC_WORD_SLOTS - 1);
}

uint64_t
dtxn_nic_word_reserve(struct dtxn_nic_state *s, struct dtxn_nic_unit *hot, uint64_t off,
		      uint64_t ready_ns, uint64_t rmw_ns)
{
	struct dtxn_nic_word *w = &s->words[nic_word_slot(off)];
	uint64_t cur, start, busy;

	if (hot->one_thread) {
		start = RTE_MAX(ready_ns, w->busy_until_ns);
		if (rmw_ns != 0)
			w->busy_until_ns = start + rmw_ns;
		w->busy_ns += rmw_ns;
		hot->busy_ns = RTE_MAX(hot->busy_ns, w->busy_ns);
		hot->ops++;
		return start + rmw_ns;
	}
	cur = __atomic_load_n(&w->busy_until_ns, __ATOMIC_RELAXED);
	do {
		start = RTE_MAX(ready_ns, cur);
		if (rmw_ns == 0)
			break;
	} while (!__atomic_compare_exchange_n(&w->busy_until_ns, &cur, start + rmw_ns, true,
					      __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	busy = __atomic_add_fetch(&w->busy_ns, rmw_ns, __ATOMIC_RELAXED);
	cur = __atomic_load_n(&hot->busy_ns, __ATOMIC_RELAXED);
	while (busy > cur && !__atomic_compare_exchange_n(&hot->busy_ns, &cur, busy, true,
							  __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	__atomic_fetch_add(&hot->ops, 1, __ATOMIC_RELAXED);
	return start + rmw_ns;
}
