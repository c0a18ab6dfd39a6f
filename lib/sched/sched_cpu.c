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
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cfgfile.h>
#include <rte_string_fns.h>

#include "sched_private.h"

#define CPU_SECTION "cpu"
/** A cost above this many ns per unit is surely a typo (one second). */
#define CPU_COST_MAX 1e9

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

static void __rte_format_printf(3, 4)
cpu_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* Non-negative finite number up to CPU_COST_MAX: 0 or -EINVAL. */
static int
cpu_parse(const char *s, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	if (end == s || errno != 0 || !isfinite(*v) || *v < 0 || *v > CPU_COST_MAX)
		return -EINVAL;
	while (*end == ' ' || *end == '\t')
		end++;
	return *end == '\0' ? 0 : -EINVAL;
}

static void
cpu_name_from_path(const char *path, char *name, size_t len)
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

int
dtxn_cpu_model_load(const char *path, struct dtxn_cpu_model *m, char *err, size_t errlen)
{
	struct rte_cfgfile_entry *entries = NULL;
	struct rte_cfgfile *cfg = NULL;
	struct dtxn_cpu_model cm;
	int n, i, rc;
	unsigned k;

	if (err != NULL && errlen > 0)
		err[0] = '\0';
	if (path == NULL || m == NULL)
		return -EINVAL;
	if (access(path, R_OK) != 0) {
		cpu_err(err, errlen, "%s: cannot read CPU model file", path);
		return -ENOENT;
	}
	cfg = rte_cfgfile_load(path, 0);
	if (cfg == NULL) {
		cpu_err(err, errlen, "%s: not a valid INI file", path);
		return -EINVAL;
	}
	rc = -EINVAL;
	if (!rte_cfgfile_has_section(cfg, CPU_SECTION)) {
		cpu_err(err, errlen, "%s: no [" CPU_SECTION "] section", path);
		goto out;
	}
	n = rte_cfgfile_section_num_entries(cfg, CPU_SECTION);
	if (n < 0) {
		cpu_err(err, errlen, "%s: cannot read [" CPU_SECTION "]", path);
		goto out;
	}
	entries = calloc(n > 0 ? (size_t)n : 1, sizeof(*entries));
	if (entries == NULL) {
		rc = -ENOMEM;
		cpu_err(err, errlen, "%s: out of memory", path);
		goto out;
	}
	if (rte_cfgfile_section_entries(cfg, CPU_SECTION, entries, n) != n) {
		cpu_err(err, errlen, "%s: cannot read [" CPU_SECTION "]", path);
		goto out;
	}
	memset(&cm, 0, sizeof(cm));
	for (i = 0; i < n; i++) {
		double v;

		for (k = 0; k < DTXN_CPU_OP_MAX; k++)
			if (strcmp(entries[i].name, g_cpu_keys[k]) == 0)
				break;
		if (k == DTXN_CPU_OP_MAX) {
			cpu_err(err, errlen, "%s: [" CPU_SECTION "] unknown key '%s'", path,
				entries[i].name);
			goto out;
		}
		if (cpu_parse(entries[i].value, &v) != 0) {
			cpu_err(err, errlen,
				"%s: [" CPU_SECTION "] %s = '%s' is not a number of ns in [0, 1e9]",
				path, g_cpu_keys[k], entries[i].value);
			goto out;
		}
		cm.ns[k] = (uint64_t)llround(v);
	}
	cpu_name_from_path(path, cm.name, sizeof(cm.name));
	*m = cm;
	rc = 0;
out:
	if (rc != 0 && err != NULL && errlen > 0)
		SCHED_LOG(DEBUG, "%s", err);
	free(entries);
	rte_cfgfile_close(cfg);
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
dtxn_sched_charge_op(struct dtxn_sched *s, enum dtxn_cpu_op op, uint64_t n)
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
	if (s == NULL || s->heap_n == 0 || s->exclusive != NULL)
		return UINT64_MAX; /* a spinning thread serves no timer */
	return s->heap[0]->wake_ns;
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
