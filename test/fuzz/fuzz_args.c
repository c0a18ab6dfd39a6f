/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dtxn-app's command line (app/dtxn-app/args.c, then app_validate()):
 * the input is the argument vector, arguments separated by NUL bytes.
 * Any input must be parsed or refused without a crash, leak or undefined
 * behaviour; what is refused is printed on one line (not checked here:
 * test/unit/test_args.c and test/tcl/badinput.test do).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "fuzz_common.h"

/** Most arguments a vector may have (more are ignored). */
#define FUZZ_ARGS_MAX 64

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct app_conf c;
	char *argv[FUZZ_ARGS_MAX + 1];
	char *buf = malloc(size + 1);
	int argc = 0;

	if (buf == NULL)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	for (size_t i = 0; i <= size && argc < FUZZ_ARGS_MAX;) {
		argv[argc++] = &buf[i];
		i += strlen(&buf[i]) + 1;
	}
	argv[argc] = NULL;
	app_conf_defaults(&c);
	if (app_parse_args(&c, argc, argv) == 0)
		(void)app_validate(&c);
	free(buf);
	return 0;
}
