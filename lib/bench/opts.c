/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Benchmark options: strict parsing and range checks of one value, for
 * both the command line (--name VALUE) and INI files (name = VALUE).
 * Nothing here trusts its input: no leading or trailing junk, no sign on
 * an unsigned option, no NaN or infinity, every value inside [min, max].
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtxn_bench.h"

/* 2^64 as a double: the first value a uint64_t cannot hold. */
#define OPTS_TWO_POW_64 18446744073709551616.0

static int
opts_fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int
opts_fail(char *err, size_t errlen, const char *fmt, ...)
{
	if (err != NULL && errlen > 0) {
		va_list ap;

		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* Formats a range bound: integers in full, other values with %g. */
static const char *
opts_fmt_bound(char *buf, size_t len, double v)
{
	if (v == floor(v) && fabs(v) < 0x1.0p53)
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len, "%g", v);
	return buf;
}

static int
opts_range_fail(const struct dtxn_opt *o, const char *value, char *err, size_t errlen)
{
	char lo[32], hi[32];

	return opts_fail(err, errlen, "--%s: %s is out of range [%s, %s]", o->name, value,
			 opts_fmt_bound(lo, sizeof(lo), o->min),
			 opts_fmt_bound(hi, sizeof(hi), o->max));
}

static int
opts_set_u64(const struct dtxn_opt *o, void *conf, const char *value, char *err,
	     size_t errlen)
{
	char *end = NULL;
	unsigned long long v;

	/* strtoull skips blanks and accepts a sign (wrapping '-1'): refuse both. */
	if (!isdigit((unsigned char)value[0])) {
		if (value[0] == '-' && isdigit((unsigned char)value[1]))
			return opts_fail(err, errlen, "--%s: '%s' is negative", o->name, value);
		return opts_fail(err, errlen, "--%s: '%s' is not a number", o->name, value);
	}
	errno = 0;
	v = strtoull(value, &end, 10);
	if (end == value || *end != '\0')
		return opts_fail(err, errlen, "--%s: '%s' is not a number", o->name, value);
	if (errno == ERANGE)
		return opts_range_fail(o, value, err, errlen);

	/* Compare as integers, so that values beyond 2^53 are exact. */
	const uint64_t umin = o->min <= 0.0 ? 0 : (uint64_t)ceil(o->min);
	const uint64_t umax = o->max >= OPTS_TWO_POW_64 ? UINT64_MAX : (uint64_t)floor(o->max);

	if (v < umin || v > umax)
		return opts_range_fail(o, value, err, errlen);
	memcpy((char *)conf + o->offset, &(uint64_t){ v }, sizeof(uint64_t));
	return 0;
}

static int
opts_set_double(const struct dtxn_opt *o, void *conf, const char *value, char *err,
		size_t errlen)
{
	char *end = NULL;
	double v;

	if (isspace((unsigned char)value[0]))
		return opts_fail(err, errlen, "--%s: '%s' is not a number", o->name, value);
	errno = 0;
	v = strtod(value, &end);
	if (end == value || *end != '\0')
		return opts_fail(err, errlen, "--%s: '%s' is not a number", o->name, value);
	if (errno == ERANGE && isinf(v))
		return opts_range_fail(o, value, err, errlen);
	if (!isfinite(v))
		return opts_fail(err, errlen, "--%s: '%s' is not a number", o->name, value);
	if (v < o->min || v > o->max)
		return opts_range_fail(o, value, err, errlen);
	memcpy((char *)conf + o->offset, &v, sizeof(double));
	return 0;
}

const char *
dtxn_opt_name(const struct dtxn_opt *o, uint64_t v)
{
	if (o == NULL || o->type != DTXN_OPT_NAME || o->names == NULL || (double)v > o->max)
		return NULL;
	for (uint64_t i = 0; o->names[i] != NULL; i++)
		if (i == v)
			return o->names[i];
	return NULL;
}

/* A DTXN_OPT_NAME value: exactly one of o->names (case matters). */
static int
opts_set_name(const struct dtxn_opt *o, void *conf, const char *value, char *err,
	      size_t errlen)
{
	char list[256];
	size_t off = 0;

	for (uint64_t i = 0; o->names != NULL && o->names[i] != NULL; i++) {
		if (strcmp(o->names[i], value) == 0) {
			memcpy((char *)conf + o->offset, &i, sizeof(uint64_t));
			return 0;
		}
		int n = snprintf(list + off, sizeof(list) - off, "%s%s", i > 0 ? ", " : "",
				 o->names[i]);
		if (n > 0 && (size_t)n < sizeof(list) - off)
			off += (size_t)n;
	}
	list[off] = '\0';
	return opts_fail(err, errlen, "--%s: '%s' is not one of %s", o->name, value, list);
}

int
dtxn_opt_set(const struct dtxn_opt *o, void *conf, const char *value, char *err,
	     size_t errlen)
{
	if (o == NULL || o->name == NULL || conf == NULL)
		return opts_fail(err, errlen, "option: internal error (no option or conf)");
	if (value == NULL || value[0] == '\0')
		return opts_fail(err, errlen, "--%s: empty value", o->name);

	switch (o->type) {
	case DTXN_OPT_U64:
		return opts_set_u64(o, conf, value, err, errlen);
	case DTXN_OPT_DOUBLE:
		return opts_set_double(o, conf, value, err, errlen);
	case DTXN_OPT_NAME:
		return opts_set_name(o, conf, value, err, errlen);
	}
	return opts_fail(err, errlen, "--%s: unknown option type %d", o->name, (int)o->type);
}
