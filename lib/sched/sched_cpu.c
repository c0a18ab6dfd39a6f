/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CPU time in virtual time (doc/guides/sim.md, "CPU cost model"): the cost
 * model loaded from config/cpu/<name>.ini, charges, the CPU debt that
 * dtxn_co_settle_lc() pays, and the getters the simulation loop reads to
 * know when a thread can run again.
 *
 * In real time a charge is a no-op: the CPU spends what it spends.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>

#include "dtxn_ini.h"

#include "sched_private.h"

#define CPU_SECTION "cpu"

static const char *const g_cpu_keys[DTXN_CPU_OP_MAX] = {
	[DTXN_CPU_TXN] = "txn_ns",
	[DTXN_CPU_RECORD] = "record_ns",
	[DTXN_CPU_WR] = "wr_ns",
	[DTXN_CPU_DOORBELL] = "doorbell_ns",
	[DTXN_CPU_CQE] = "cqe_ns",
	[DTXN_CPU_MSG] = "msg_ns",
};

const char *
dtxn_cpu_op_name(unsigned op)
{
	return op < DTXN_CPU_OP_MAX ? g_cpu_keys[op] : "unknown";
}

int
dtxn_cpu_model_load(const char *path, struct dtxn_cpu_model *m, char *err, size_t errlen)
{
	struct dtxn_cpu_model cm;
	struct dtxn_ini *ini;
	int rc = -EINVAL;

	if (err != NULL && errlen > 0)
		err[0] = '\0';
	if (path == NULL || m == NULL)
		return -EINVAL;
	ini = dtxn_ini_load_one(path, CPU_SECTION, err, errlen);
	if (ini == NULL) {
		rc = -rte_errno;
		goto out;
	}
	memset(&cm, 0, sizeof(cm));
	for (unsigned i = 0; i < dtxn_ini_count(ini); i++) {
		const struct dtxn_ini_entry *e = dtxn_ini_at(ini, i);
		int k = dtxn_ini_key_index(ini, e, g_cpu_keys, DTXN_CPU_OP_MAX, err, errlen);
		double v;

		if (k < 0 || dtxn_ini_number(ini, e, 0, DTXN_CPU_COST_MAX_NS, false, "ns", &v, err,
					     errlen) != 0)
			goto out;
		cm.ns[k] = (uint64_t)llround(v);
	}
	dtxn_ini_stem(path, cm.name, sizeof(cm.name));
	*m = cm;
	rc = 0;
out:
	if (rc != 0 && err != NULL && errlen > 0)
		SCHED_LOG(DEBUG, "%s", err);
	dtxn_ini_free(ini);
	return rc;
}

void
dtxn_sched_set_cpu_model(struct dtxn_sched *s, const struct dtxn_cpu_model *m)
{
	if (s == NULL)
		return;
	if (m == NULL) {
		s->has_cpu = false;
		memset(&s->cpu, 0, sizeof(s->cpu));
		return;
	}
	s->cpu = *m;
	s->has_cpu = true;
}

void
dtxn_sched_charge(struct dtxn_sched *s, uint64_t ns)
{
	if (s == NULL || !g_dtxn_clock.virtual_time)
		return;
	s->debt_ns += ns;
	s->cpu_ns += ns;
}

void
dtxn_sched_charge_op_virtual(struct dtxn_sched *s, enum dtxn_cpu_op op, uint64_t n)
{
	if (s == NULL || !s->has_cpu || (unsigned)op >= DTXN_CPU_OP_MAX ||
	    !g_dtxn_clock.virtual_time)
		return;
	s->cpu_ops[op] += n;
	dtxn_sched_charge(s, s->cpu.ns[op] * n);
}

void
dtxn_co_settle_lc(struct dtxn_co *co)
{
	if (co == NULL || co->s->debt_ns == 0)
		return;
	/* co_leave() sees the debt and returns to the loop, which settles it. */
	dtxn_co_sleep_until_lc(co, dtxn_now_ns() + co->s->debt_ns);
}

uint64_t
dtxn_sched_busy_until_ns(const struct dtxn_sched *s)
{
	return s == NULL ? 0 : s->busy_until_ns;
}

uint64_t
dtxn_sched_cpu_ns(const struct dtxn_sched *s)
{
	return s == NULL ? 0 : s->cpu_ns;
}

const uint64_t *
dtxn_sched_cpu_ops(const struct dtxn_sched *s)
{
	return s == NULL ? NULL : s->cpu_ops;
}

uint64_t
dtxn_sched_next_timer_ns(const struct dtxn_sched *s)
{
	if (s == NULL || s->exclusive != NULL)
		return UINT64_MAX; /* a spinning thread serves no timer */
	return RTE_MIN(s->heap_n == 0 ? UINT64_MAX : s->heap[0]->wake_ns, s->poll_wake_ns);
}

void
dtxn_sched_wake_at(struct dtxn_sched *s, uint64_t t_ns)
{
	if (s != NULL && t_ns < s->poll_wake_ns)
		s->poll_wake_ns = t_ns;
}

unsigned
dtxn_sched_ready_count(const struct dtxn_sched *s)
{
	if (s != NULL && s->exclusive != NULL)
		return s->exclusive->state == CO_READY; /* only the spinning one may run */
	return s == NULL ? 0 : s->ready_n;
}

unsigned
dtxn_sched_alive(const struct dtxn_sched *s)
{
	return s == NULL ? 0 : s->alive;
}
