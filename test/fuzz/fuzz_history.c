/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The history reader (dtxn_history_read(), lib/check/hist_io.c), then the
 * checker at both levels on every history it accepts (lib/check: graph,
 * cycles, the report). The input is the file.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "dtxn_check.h"
#include "fuzz_common.h"

static FILE *g_null;

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct dtxn_check_report r;
	struct dtxn_history *h;
	char err[256];
	FILE *f;

	if (g_null == NULL)
		g_null = fopen("/dev/null", "w");
	f = fopen(fuzz_file(data, size), "r");
	if (f == NULL || g_null == NULL)
		abort();
	h = dtxn_history_read(f, "fuzz", err, sizeof(err));
	fclose(f);
	if (h == NULL)
		return 0;
	for (int level = 0; level < DTXN_CHECK_LEVEL_MAX; level++)
		if (dtxn_check_run(h, (enum dtxn_check_level)level, &r) == 0)
			dtxn_check_print(&r, g_null);
	dtxn_history_free(h);
	return 0;
}
