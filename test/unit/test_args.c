/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dtxn-app's argument and INI parsing (app/dtxn-app/args.c, config.c):
 * every bad input is refused (the app then exits 2), good input lands in
 * the configuration, and the command line overrides the INI file.
 * Parsing needs no EAL: it runs before rte_eal_init() in the app too.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "app.h"

static char g_dir[PATH_MAX];

static const char *
write_file(const char *name, const char *body)
{
	static char path[PATH_MAX + 64];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", g_dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(body, f);
	fclose(f);
	return path;
}

/* Parses an argument vector given as a NULL-terminated list. */
static int
parse(struct app_conf *c, ...)
{
	char *argv[32];
	int argc = 0;
	va_list ap;

	va_start(ap, c);
	for (char *a = va_arg(ap, char *); a != NULL && argc < 32; a = va_arg(ap, char *))
		argv[argc++] = a;
	va_end(ap);
	app_conf_defaults(c);
	return app_parse_args(c, argc, argv);
}

static void
test_defaults(void **state)
{
	struct app_conf c;

	(void)state;
	app_conf_defaults(&c);
	assert_string_equal(c.role, "all");
	assert_string_equal(c.protocol, "ford");
	assert_string_equal(c.fabric, "shm");
	assert_int_equal(c.mn, 3);
	assert_int_equal(c.replicas, 3);
	assert_int_equal(c.coroutines, 8);
	assert_int_equal(app_validate(&c), 0);
}

static void
test_numbers(void **state)
{
	struct app_conf c;

	(void)state;
	assert_int_equal(parse(&c, "--coroutines", "16", "--duration=2.5", "--seed", "0x10", NULL), 0);
	assert_int_equal(c.coroutines, 16);
	assert_true(c.duration_s == 2.5);
	assert_int_equal(c.seed, 16);
	assert_int_equal(parse(&c, "--coroutines", "0", NULL), -1);       /* below range */
	assert_int_equal(parse(&c, "--coroutines", "100000", NULL), -1);  /* above range */
	assert_int_equal(parse(&c, "--coroutines", "12x", NULL), -1);     /* not a number */
	assert_int_equal(parse(&c, "--seed", "-5", NULL), -1);            /* negative */
	assert_int_equal(parse(&c, "--mn", "", NULL), -1);                /* empty */
	assert_int_equal(parse(&c, "--duration", "nan", NULL), -1);
	assert_int_equal(parse(&c, "--duration", "abc", NULL), -1);
	assert_int_equal(parse(&c, "--live", "maybe", NULL), -1);
	assert_int_equal(parse(&c, "--live", "0", NULL), 0);
	assert_false(c.live);
}

static void
test_shape(void **state)
{
	struct app_conf c;
	char longname[300];

	(void)state;
	assert_int_equal(parse(&c, "--duration", NULL), -1);          /* missing value */
	assert_int_equal(parse(&c, "--bench", "--duration", "1", NULL), -1);
	assert_int_equal(parse(&c, "smallbank", NULL), -1);           /* stray argument */
	assert_int_equal(parse(&c, "--frobnicate", "1", NULL), -1);   /* unknown */
	assert_int_equal(parse(&c, "--", NULL), -1);
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	assert_int_equal(parse(&c, "--bench", longname, NULL), -1);   /* too long */
	assert_int_equal(parse(&c, "--help", NULL), 1);
	assert_int_equal(parse(&c, "--version", NULL), 1);
}

static void
test_bench_options(void **state)
{
	struct app_conf c;

	(void)state;
	/* dashes and underscores name the same option; the last one wins */
	assert_int_equal(parse(&c, "--bench", "kvs", "--write-ratio", "50", "--write_ratio", "60",
			       NULL), 0);
	assert_int_equal(c.n_bench_opts, 1);
	assert_string_equal(c.bench_opts[0].name, "write_ratio");
	assert_string_equal(c.bench_opts[0].value, "60");
	assert_int_equal(app_validate(&c), 0);
	/* an option of another benchmark */
	assert_int_equal(parse(&c, "--bench", "smallbank", "--keys", "10", NULL), 0);
	assert_int_equal(app_validate(&c), -1);
	/* a bad value is caught before the EAL starts */
	assert_int_equal(parse(&c, "--bench", "kvs", "--theta", "1.5", NULL), 0);
	assert_int_equal(app_validate(&c), -1);
	assert_int_equal(parse(&c, "--bench", "smallbank", "--accounts", "12x", NULL), 0);
	assert_int_equal(app_validate(&c), -1);
}

static void
test_names(void **state)
{
	struct app_conf c;

	(void)state;
	assert_int_equal(parse(&c, "--protocol", "nope", NULL), 0);
	assert_int_equal(app_validate(&c), -1);
	assert_int_equal(parse(&c, "--bench", "tpcx", NULL), 0);
	assert_int_equal(app_validate(&c), -1);
	assert_int_equal(parse(&c, "--fabric", "ib", NULL), 0);
	assert_int_equal(app_validate(&c), -1);
	assert_int_equal(parse(&c, "--nic", "cx9", NULL), 0);
	assert_int_equal(app_validate(&c), -1);
	assert_int_equal(parse(&c, "--isolation", "rc", NULL), 0);
	assert_int_equal(app_validate(&c), -1);
	assert_int_equal(parse(&c, "--mn", "2", "--replicas", "3", NULL), 0);
	assert_int_equal(app_validate(&c), -1);
	assert_int_equal(parse(&c, "--role", "mn", NULL), 0);
	assert_int_equal(app_validate(&c), -1);
	assert_int_equal(parse(&c, "--role", "boss", NULL), 0);
	assert_int_equal(app_validate(&c), -1);
	/* presets and paths */
	assert_int_equal(parse(&c, "--nic", "cx5", NULL), 0);
	assert_int_equal(app_validate(&c), 0);
	assert_non_null(strstr(c.nic_path, "nic/cx5.ini"));
	assert_int_equal(parse(&c, "--nic", "/nonexistent/x.ini", NULL), 0);
	assert_int_equal(app_validate(&c), -1);
}

static void
test_config_find(void **state)
{
	char path[PATH_MAX];

	(void)state;
	assert_int_equal(app_config_find("nic", "cx3", path, sizeof(path)), 0);
	assert_int_equal(access(path, R_OK), 0);
	assert_int_equal(app_config_find("nic", "no-such-model", path, sizeof(path)), -ENOENT);
}

static void
test_ini(void **state)
{
	struct app_conf c;
	const char *p;

	(void)state;
	p = write_file("good.ini", "; comment\n[dtxn]\nbench = kvs\ncoroutines = 4\n"
				   "duration = 1\n\n[bench]\nkeys = 5000\nwrite-ratio = 10\n");
	assert_int_equal(parse(&c, "--config", p, "--coroutines", "2", NULL), 0);
	assert_string_equal(c.bench, "kvs");
	assert_int_equal(c.coroutines, 2);          /* the command line wins */
	assert_true(c.duration_s == 1.0);
	assert_int_equal(c.n_bench_opts, 2);
	assert_int_equal(app_validate(&c), 0);
	/* ... whatever the order on the command line */
	assert_int_equal(parse(&c, "--coroutines", "2", "--config", p, NULL), 0);
	assert_int_equal(c.coroutines, 2);

	assert_int_equal(parse(&c, "--config", "/nonexistent/dtxn.ini", NULL), -1);
	assert_int_equal(parse(&c, "--config", NULL), -1);
	p = write_file("b1.ini", "[dtxn]\nthis is not a pair\n");
	assert_int_equal(parse(&c, "--config", p, NULL), -1);
	p = write_file("b2.ini", "bench = kvs\n");
	assert_int_equal(parse(&c, "--config", p, NULL), -1);  /* outside a section */
	p = write_file("b3.ini", "[network]\nmtu = 9000\n");
	assert_int_equal(parse(&c, "--config", p, NULL), -1);
	p = write_file("b4.ini", "[dtxn]\ncolour = blue\n");
	assert_int_equal(parse(&c, "--config", p, NULL), -1);
	p = write_file("b5.ini", "[dtxn]\ncoroutines = 0\n");
	assert_int_equal(parse(&c, "--config", p, NULL), -1);
	p = write_file("b6.ini", "[dtxn\nbench = kvs\n");
	assert_int_equal(parse(&c, "--config", p, NULL), -1);
	p = write_file("b7.ini", "[dtxn]\nconfig = other.ini\n");
	assert_int_equal(parse(&c, "--config", p, NULL), -1);
	p = write_file("b8.ini", "[dtxn]\n= 3\n");
	assert_int_equal(parse(&c, "--config", p, NULL), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_shape),
		cmocka_unit_test(test_bench_options),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_config_find),
		cmocka_unit_test(test_ini),
	};
	char tmpl[] = "/tmp/ut_args.XXXXXX";
	int rc;

	if (mkdtemp(tmpl) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(g_dir, sizeof(g_dir), "%s", tmpl);
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", g_dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", g_dir);
	return rc;
}
