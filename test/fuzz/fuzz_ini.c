/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dtxn-app's INI file (--config, app/dtxn-app/config.c: the syntax
 * pre-pass, rte_cfgfile, [dtxn] and [bench] keys), then app_validate()
 * of what it set. The input is the file.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "app.h"
#include "fuzz_common.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct app_conf c;

	app_conf_defaults(&c);
	if (app_config_load(&c, fuzz_file(data, size)) == 0)
		(void)app_validate(&c);
	return 0;
}
