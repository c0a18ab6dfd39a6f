/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Protocol option strings (dtxn_db_conf.cc_options, dtxn-app --cc-opts):
 * "key=value,key=value" (or ';' between pairs), split here and handed to
 * the protocol's per-key callback; value parsers every protocol uses.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "txn_private.h"

/** Longest option string, characters. */
#define OPTS_MAX 511

int
dtxn_cc_opts_parse(const char *proto, const char *s, const char *first, dtxn_cc_opt_fn one,
		   void *obj, char *err, size_t errlen)
{
	char buf[OPTS_MAX + 1], *save = NULL, *tok;

	if (s == NULL || s[0] == '\0')
		return 0;
	if (one == NULL)
		return -EINVAL;
	if (strlen(s) > OPTS_MAX) {
		snprintf(err, errlen, "%s: options longer than %d characters", proto, OPTS_MAX);
		return -EINVAL;
	}
	/* @p first (a preset) before the others, wherever it is, so that they refine it */
	for (int pass = first != NULL ? 0 : 1; pass < 2; pass++) {
		snprintf(buf, sizeof(buf), "%s", s);
		for (tok = strtok_r(buf, ",;", &save); tok != NULL; tok = strtok_r(NULL, ",;", &save)) {
			char *eq = strchr(tok, '=');
			bool is_first;

			if (eq == NULL || eq == tok || eq[1] == '\0') {
				snprintf(err, errlen, "%s: '%s' is not key=value", proto, tok);
				return -EINVAL;
			}
			*eq = '\0';
			is_first = first != NULL && strcmp(tok, first) == 0;
			if (is_first != (pass == 0))
				continue;
			if (one(obj, tok, eq + 1, err, errlen) != 0)
				return -EINVAL;
		}
	}
	return 0;
}

int
dtxn_cc_opt_u32(const char *v, uint32_t min, uint32_t max, uint32_t *out)
{
	char *end;
	unsigned long long x;

	if (v == NULL || *v == '\0' || *v == '-' || *v == '+' || *v == ' ')
		return -EINVAL;
	errno = 0;
	x = strtoull(v, &end, 10);
	if (errno != 0 || *end != '\0' || x < min || x > max)
		return -EINVAL;
	*out = (uint32_t)x;
	return 0;
}

int
dtxn_cc_opt_pick(const char *v, const char *const *names, unsigned n, uint8_t *out)
{
	if (v == NULL)
		return -EINVAL;
	for (unsigned i = 0; i < n && i <= UINT8_MAX; i++)
		if (strcmp(v, names[i]) == 0) {
			*out = (uint8_t)i;
			return 0;
		}
	return -EINVAL;
}
