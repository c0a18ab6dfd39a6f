/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The benchmark registry (filled by DTXN_BENCH_REGISTER constructors) and
 * benchmark instances: allocation with the option defaults, and freeing.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_log.h>
#include <rte_malloc.h>

#include "bench_private.h"
#include "dtxn_bench.h"

RTE_LOG_REGISTER(dtxn_bench_logtype, dtxn.bench, INFO);

/* Most benchmarks the registry holds. */
#define BENCH_MAX 16

static const struct dtxn_bench_ops *g_bench[BENCH_MAX];
static unsigned g_n_bench;

void
bench_set_err(struct dtxn_bench *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(b->err, sizeof(b->err), fmt, ap);
	va_end(ap);
}

int
bench_conf_check(struct dtxn_bench *b)
{
	const struct dtxn_bench_ops *ops = b->ops;

	for (unsigned i = 0; i < ops->n_opts; i++) {
		const struct dtxn_opt *o = &ops->opts[i];
		const char *src = (const char *)b->conf + o->offset;
		double v;

		if (o->type != DTXN_OPT_DOUBLE) {
			uint64_t u;

			memcpy(&u, src, sizeof(u));
			if (o->def == DTXN_OPT_UNSET && u == DTXN_OPT_U64_UNSET)
				continue; /* off: not given */
			v = (double)u;
		} else {
			memcpy(&v, src, sizeof(v));
		}
		if (o->def == DTXN_OPT_UNSET && v == DTXN_OPT_UNSET)
			continue; /* off: not given */
		if (!(v >= o->min && v <= o->max)) {
			bench_set_err(b, "%s: %s = %g is out of range [%g, %g]", ops->name,
				      o->name, v, o->min, o->max);
			return -EINVAL;
		}
	}
	return 0;
}

int
bench_theta_init(struct dtxn_bench *b, struct dtxn_zipf *z, uint64_t n, double theta,
		 const char *what)
{
	if (theta == DTXN_OPT_UNSET)
		return 0;
	if (dtxn_zipf_init(z, n, theta) != 0) {
		bench_set_err(b, "%s: theta %g is not in [0, %g]", b->ops->name, theta,
			      DTXN_ZIPF_THETA_MAX);
		return -EINVAL;
	}
	BENCH_LOG(DEBUG, "%s: %s zipf(%g) over %" PRIu64 "\n", b->ops->name, what, theta, n);
	return 1;
}

/* Checks an option table against its conf struct. */
static bool
bench_opts_valid(const struct dtxn_bench_ops *ops)
{
	if (ops->n_opts > 0 && ops->opts == NULL)
		return false;
	for (unsigned i = 0; i < ops->n_opts; i++) {
		const struct dtxn_opt *o = &ops->opts[i];
		size_t sz;

		if (o->name == NULL || o->name[0] == '\0')
			return false;
		switch (o->type) {
		case DTXN_OPT_U64:
			sz = sizeof(uint64_t);
			if (o->min < 0.0)
				return false;
			/* an option off by default: no input may reach its marker */
			if (o->def == DTXN_OPT_UNSET && o->max >= (double)DTXN_OPT_U64_UNSET)
				return false;
			break;
		case DTXN_OPT_NAME: {
			unsigned n = 0;

			sz = sizeof(uint64_t);
			while (o->names != NULL && o->names[n] != NULL)
				n++;
			if (n == 0 || o->min != 0.0 || o->max != (double)(n - 1) ||
			    o->def == DTXN_OPT_UNSET)
				return false;
			break;
		}
		case DTXN_OPT_DOUBLE:
			sz = sizeof(double);
			/* an option off by default: no input may reach its default */
			if (o->def == DTXN_OPT_UNSET && o->min < 0.0)
				return false;
			break;
		default:
			return false;
		}
		if (o->offset + sz > ops->conf_size || o->min > o->max ||
		    (o->def != DTXN_OPT_UNSET && (o->def < o->min || o->def > o->max)))
			return false;
	}
	return true;
}

int
dtxn_bench_register(const struct dtxn_bench_ops *ops)
{
	if (ops == NULL || ops->name == NULL || ops->name[0] == '\0' ||
	    ops->create == NULL || ops->define == NULL || ops->load == NULL ||
	    ops->pick == NULL || ops->run == NULL || ops->check == NULL ||
	    ops->n_types == 0 || ops->n_types > DTXN_STATS_MAX_TYPES ||
	    ops->type_names == NULL || !bench_opts_valid(ops))
		return -EINVAL;
	for (unsigned i = 0; i < ops->n_types; i++)
		if (ops->type_names[i] == NULL)
			return -EINVAL;
	if (dtxn_bench_find(ops->name) != NULL)
		return -EEXIST;
	if (g_n_bench == BENCH_MAX)
		return -ENOSPC;
	/* in name order, whatever order the constructors ran in (LTO reverses it) */
	unsigned k;

	for (k = g_n_bench++; k > 0 && strcmp(g_bench[k - 1]->name, ops->name) > 0; k--)
		g_bench[k] = g_bench[k - 1];
	g_bench[k] = ops;
	return 0;
}

const struct dtxn_bench_ops *
dtxn_bench_find(const char *name)
{
	if (name == NULL)
		return NULL;
	for (unsigned i = 0; i < g_n_bench; i++)
		if (strcmp(g_bench[i]->name, name) == 0)
			return g_bench[i];
	return NULL;
}

void
dtxn_bench_list(char *buf, size_t len)
{
	size_t off = 0;

	if (buf == NULL || len == 0)
		return;
	buf[0] = '\0';
	for (unsigned i = 0; i < g_n_bench && off < len; i++) {
		int n = snprintf(buf + off, len - off, "%s%s", i > 0 ? "," : "",
				 g_bench[i]->name);
		if (n < 0)
			break;
		off += (size_t)n;
	}
}

unsigned
dtxn_bench_count(void)
{
	return g_n_bench;
}

const struct dtxn_bench_ops *
dtxn_bench_at(unsigned i)
{
	return i < g_n_bench ? g_bench[i] : NULL;
}

struct dtxn_bench *
dtxn_bench_alloc(const struct dtxn_bench_ops *ops, uint64_t seed)
{
	struct dtxn_bench *b;

	if (ops == NULL) {
		rte_errno = EINVAL;
		return NULL;
	}
	b = rte_zmalloc("dtxn_bench", sizeof(*b), 0);
	if (b == NULL)
		goto fail;
	b->ops = ops;
	b->seed = seed;
	if (ops->conf_size > 0) {
		b->conf = rte_zmalloc("dtxn_bench_conf", ops->conf_size, 0);
		if (b->conf == NULL)
			goto fail;
	}
	for (unsigned i = 0; i < ops->n_opts; i++) {
		const struct dtxn_opt *o = &ops->opts[i];
		char *dst = (char *)b->conf + o->offset;

		if (o->type != DTXN_OPT_DOUBLE)
			memcpy(dst,
			       &(uint64_t){ o->def == DTXN_OPT_UNSET ? DTXN_OPT_U64_UNSET :
					    (uint64_t)o->def },
			       sizeof(uint64_t));
		else
			memcpy(dst, &o->def, sizeof(double));
	}
	return b;
fail:
	rte_free(b);
	rte_errno = ENOMEM;
	return NULL;
}

void
dtxn_bench_free(struct dtxn_bench *b)
{
	if (b == NULL)
		return;
	if (b->ops->destroy != NULL)
		b->ops->destroy(b);
	rte_free(b->conf);
	rte_free(b);
}
