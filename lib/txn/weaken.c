/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --debug-weaken (issue 11, part 4): the names of the planted defects
 * (DTXN_DEBUG_*) and which protocol implements which at which isolation
 * level (dtxn_cc_ops.weaken). Test aids only; see doc/guides/checker.md.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "txn_private.h"

/** A planted defect: its flag, its name on the command line. */
struct weaken_mode {
	uint32_t flag;
	const char *name;
};

static const struct weaken_mode g_weaken_modes[] = {
	{ DTXN_DEBUG_SKIP_LOCK_CHECK, "skip-lock-check" },
	{ DTXN_DEBUG_SKIP_READ_VALIDATION, "skip-read-validation" },
	{ DTXN_DEBUG_SKIP_WW_CHECK, "skip-ww-check" },
	{ DTXN_DEBUG_OOCC_ALG1, "oocc-alg1" },
};

int
dtxn_debug_weaken_parse(const char *name, uint32_t *flag)
{
	if (name == NULL || flag == NULL)
		return -EINVAL;
	if (name[0] == '\0' || strcmp(name, "none") == 0) {
		*flag = 0;
		return 0;
	}
	for (size_t i = 0; i < RTE_DIM(g_weaken_modes); i++) {
		if (strcmp(name, g_weaken_modes[i].name) == 0) {
			*flag = g_weaken_modes[i].flag;
			return 0;
		}
	}
	return -EINVAL;
}

/* Appends the names of the modes in @p mask to @p buf, comma-separated. */
static void
weaken_names(uint32_t mask, char *buf, size_t len)
{
	size_t used = 0;

	if (buf == NULL || len == 0)
		return;
	buf[0] = '\0';
	for (size_t i = 0; i < RTE_DIM(g_weaken_modes); i++) {
		int n;

		if ((mask & g_weaken_modes[i].flag) == 0)
			continue;
		n = snprintf(buf + used, len - used, "%s%s", used ? ", " : "",
			     g_weaken_modes[i].name);
		if (n < 0 || (size_t)n >= len - used)
			break;
		used += (size_t)n;
	}
}

void
dtxn_debug_weaken_list(char *buf, size_t len)
{
	weaken_names(UINT32_MAX, buf, len);
}

int
dtxn_cc_weaken_supported(const char *protocol, enum dtxn_isolation iso, uint32_t flags,
			 char *names, size_t len)
{
	const struct dtxn_cc_ops *ops;

	if (names != NULL && len != 0)
		names[0] = '\0';
	if (protocol == NULL || (unsigned)iso >= DTXN_ISO_MAX)
		return -EINVAL;
	ops = dtxn_cc_find(protocol);
	if (ops == NULL)
		return -ENOENT;
	weaken_names(ops->weaken[iso], names, len);
	return (flags & ~ops->weaken[iso]) == 0;
}
