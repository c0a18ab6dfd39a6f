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

#include <rte_common.h>
#include <rte_errno.h>

#include "app.h"
#include "dtxn_ini.h"
#include "dtxn_fabric.h"
#include "dtxn_sched.h"

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


/* Loads @p body through dtxn_ini_load(); expects a refusal naming @p where
 * ("file:line") and @p what. */
static void
ini_refused(const char *body, const char *const *sections, unsigned line, const char *what)
{
	char err[512], where[2 * PATH_MAX];
	const char *p = write_file("strict.ini", body);

	assert_null(dtxn_ini_load(p, sections, err, sizeof(err)));
	snprintf(where, sizeof(where), "%s:%u: ", p, line);
	if (strstr(err, where) == NULL || strstr(err, what) == NULL)
		fail_msg("'%s' does not name '%s' and '%s'", err, where, what);
	assert_null(strchr(err, '\n'));
}

static void
test_ini_strict(void **state)
{
	static const char *const dtxn_only[] = { "dtxn", NULL };
	char body[80000], err[512], v255[256], k63[64];
	struct dtxn_ini *ini;
	size_t n = 0;

	(void)state;
	ini_refused("[dtxn]\na = 1\n[dtxn]\n", NULL, 3, "repeated (first at line 1)");
	ini_refused("[dtxn]\na = 1\na = 2\n", NULL, 3, "a: repeated in [dtxn]");
	ini_refused("[dtxn]\n[x]\n", dtxn_only, 2, "unknown section [x]");
	ini_refused("a = 1\n", NULL, 1, "outside a section");
	ini_refused("[dtxn]\na =\n", NULL, 2, "empty value");
	ini_refused("[dtxn]\n= 1\n", NULL, 2, "no key before '='");
	ini_refused("[dtxn]\n# a = 1\n", NULL, 2, "comments start with ';'");
	ini_refused("[dtxn]\njunk\n", NULL, 2, "expected 'key = value'");
	ini_refused("[dtxn\n", NULL, 1, "no ']'");
	ini_refused("[dtxn] x\n", NULL, 1, "text after ']'");
	ini_refused("[]\n", NULL, 1, "section name");
	ini_refused("[dtxn]\na b = 1\n", NULL, 2, "is not letters");
	{
		static const char nul[] = "[dtxn]\na = 1\0\n";
		const char *p = write_file("nul.ini", "");
		FILE *f = fopen(p, "wb");

		assert_non_null(f);
		assert_int_equal(fwrite(nul, 1, sizeof(nul) - 1, f), sizeof(nul) - 1);
		fclose(f);
		assert_null(dtxn_ini_load(p, NULL, err, sizeof(err)));
		assert_non_null(strstr(err, ":2: NUL byte"));
	}
	memset(v255, 'v', 255);
	v255[255] = '\0';
	memset(k63, 'k', 63);
	k63[63] = '\0';
	snprintf(body, sizeof(body), "[dtxn]\n%sk = 1\n", k63);
	ini_refused(body, NULL, 2, "longer than 63 characters");
	snprintf(body, sizeof(body), "[dtxn]\na = %sv\n", v255);
	ini_refused(body, NULL, 2, "value longer than 255 characters");
	snprintf(body, sizeof(body), "[dtxn]\n;%s%s\n", v255, v255);
	ini_refused(body, NULL, 2, "line longer than");

	/* at the limits, nothing is truncated; '\;' is a literal ';' */
	snprintf(body, sizeof(body), "; c\n[dtxn]\n%s = %s\nb = x\\;y ; comment\n", k63, v255);
	ini = dtxn_ini_load(write_file("limits.ini", body), NULL, err, sizeof(err));
	assert_non_null(ini);
	assert_int_equal(dtxn_ini_count(ini), 2);
	assert_string_equal(dtxn_ini_at(ini, 0)->name, k63);
	assert_string_equal(dtxn_ini_at(ini, 0)->value, v255);
	assert_int_equal(dtxn_ini_at(ini, 0)->line, 3);
	assert_string_equal(dtxn_ini_at(ini, 1)->value, "x;y ; comment");
	assert_int_equal(dtxn_ini_section_line(ini, "dtxn"), 2);
	assert_null(dtxn_ini_at(ini, 2));
	dtxn_ini_free(ini);

	/* hundreds of keys (rte_cfgfile callers used to read 64): every one kept */
	n = (size_t)snprintf(body, sizeof(body), "[a]\n");
	for (unsigned i = 0; i < 700; i++)
		n += (size_t)snprintf(body + n, sizeof(body) - n, "k%u = %u\n%s", i, i * 7,
				      i == 350 ? "[b]\n" : "");
	ini = dtxn_ini_load(write_file("many.ini", body), NULL, err, sizeof(err));
	assert_non_null(ini);
	assert_int_equal(dtxn_ini_count(ini), 700);
	assert_string_equal(dtxn_ini_at(ini, 699)->name, "k699");
	assert_string_equal(dtxn_ini_at(ini, 699)->value, "4893");
	assert_string_equal(dtxn_ini_at(ini, 699)->section, "b");
	assert_int_equal(dtxn_ini_at(ini, 699)->line, 702);
	dtxn_ini_free(ini);

	/* not a regular file */
	assert_null(dtxn_ini_load(g_dir, NULL, err, sizeof(err)));
	assert_int_equal(rte_errno, EISDIR);
	assert_null(dtxn_ini_load("", NULL, err, sizeof(err)));
	assert_null(dtxn_ini_load("/nonexistent/x.ini", NULL, NULL, 0));
	assert_int_equal(rte_errno, ENOENT);
}

static void
test_model_ranges(void **state)
{
	struct dtxn_nic_model nm;
	struct dtxn_cpu_model cm;
	char err[512];
	static const char *const bad_nic[] = {
		"[nic]\nrtt_ns = 1e12\n", "[nic]\nrw_mops = 1e300\n", "[nic]\nrw_gbps = -1\n",
		"[nic]\natomic_mops = nan\n", "[nic]\ndm_atomic_mops = 1e-6\n",
		"[nic]\nrtt_ns = inf\n", "[nic]\nrtt_ns = 0x5\n", "[nic]\nrtt_ns = 1\n[x]\ny = 1\n",
	};
	static const char *const bad_cpu[] = {
		"[cpu]\nwr_ns = 1e7\n", "[cpu]\ntxn_ns = -1\n", "[cpu]\nmsg_ns = nan\n",
	};

	(void)state;
	for (size_t i = 0; i < RTE_DIM(bad_nic); i++) {
		const char *p = write_file("nic.ini", bad_nic[i]);

		assert_int_equal(dtxn_nic_model_load(p, &nm, err, sizeof(err)), -EINVAL);
		if (strstr(err, ".ini:2: ") == NULL && strstr(err, ".ini:3: ") == NULL)
			fail_msg("no file:line in '%s'", err);
	}
	for (size_t i = 0; i < RTE_DIM(bad_cpu); i++) {
		const char *p = write_file("cpu.ini", bad_cpu[i]);

		assert_int_equal(dtxn_cpu_model_load(p, &cm, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, ".ini:2: "));
	}
	/* the bounds themselves are accepted; 0 is "unlimited" for a rate */
	assert_int_equal(dtxn_nic_model_load(write_file("nic.ini", "[nic]\nrtt_ns = 1e7\nrw_mops = 1e4\n"
							 "rw_gbps = 0.1\natomic_mops = 0\n"),
					     &nm, err, sizeof(err)), 0);
	assert_int_equal(nm.rtt_ns, 10000000);
	assert_int_equal(nm.rw_ops_per_s, 10000000000ull);
	assert_int_equal(nm.atomic_ops_per_s, 0);
	assert_int_equal(dtxn_cpu_model_load(write_file("cpu.ini", "[cpu]\nwr_ns = 1e6\n"), &cm, err,
					     sizeof(err)), 0);
	assert_int_equal(cm.ns[DTXN_CPU_WR], 1000000);
}

static void
test_out_paths(void **state)
{
	struct app_conf c;
	char path[2 * PATH_MAX + 400], longname[300];
	const char *file = write_file("exists.txt", "x");

	(void)state;
	assert_int_equal(app_out_path_check("--out", "/nonexistent/r.json"), -1);
	assert_int_equal(app_out_path_check("--out", g_dir), -1);          /* a directory */
	snprintf(path, sizeof(path), "%s/", g_dir);
	assert_int_equal(app_out_path_check("--out", path), -1);           /* ends in '/' */
	snprintf(path, sizeof(path), "%s/r.json", file);
	assert_int_equal(app_out_path_check("--out", path), -1);           /* parent is a file */
	memset(longname, 'n', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	snprintf(path, sizeof(path), "%s/%s", g_dir, longname);
	assert_int_equal(app_out_path_check("--out", path), -1);           /* name too long */
	snprintf(path, sizeof(path), "%s/r.json", g_dir);
	assert_int_equal(app_out_path_check("--out", path), 0);
	assert_int_equal(access(path, F_OK), -1);                          /* creates nothing */
	assert_int_equal(app_out_path_check("--out", file), 0);            /* overwrite a file */
	assert_int_equal(app_out_path_check("--out", "r.json"), 0);        /* the cwd */
	/* app_validate() checks both, and refuses the same file twice */
	assert_int_equal(parse(&c, "--out", path, "--history", path, NULL), 0);
	assert_int_equal(app_validate(&c), -1);
	assert_int_equal(parse(&c, "--history", "/nonexistent/h", NULL), 0);
	assert_int_equal(app_validate(&c), -1);
	assert_int_equal(parse(&c, "--config=", NULL), -1);
	assert_int_equal(parse(&c, "--config", g_dir, NULL), -1);
	assert_int_equal(parse(&c, "--config", "--live", "0", NULL), -1);
}

static void
test_seed_and_names(void **state)
{
	struct app_conf c;
	char names[512];

	(void)state;
	assert_int_equal(parse(&c, "--seed", "18446744073709551615", NULL), 0);
	assert_true(c.seed == UINT64_MAX);
	assert_int_equal(parse(&c, "--seed", "0xffffffffffffffff", NULL), 0);
	assert_true(c.seed == UINT64_MAX);
	assert_int_equal(parse(&c, "--seed", "18446744073709551616", NULL), -1);
	assert_int_equal(parse(&c, "--seed", " 5", NULL), -1);
	assert_int_equal(parse(&c, "--seed", " -5", NULL), -1);
	assert_int_equal(parse(&c, "--seed", "+5", NULL), -1);
	/* the same node limit on shm as on sim */
	assert_int_equal(parse(&c, "--mn", "40", "--replicas", "1", "--cn", "30", NULL), 0);
	assert_int_equal(app_validate(&c), -1);
	/* the lists --help prints come from the registries and preset folders */
	app_names("protocol", names, sizeof(names));
	assert_non_null(strstr(names, "ford"));
	app_names("bench", names, sizeof(names));
	assert_non_null(strstr(names, "smallbank, "));
	app_names("fabric", names, sizeof(names));
	assert_non_null(strstr(names, "shm"));
	assert_non_null(strstr(names, "sim"));
	app_names("nic", names, sizeof(names));
	assert_non_null(strstr(names, "cx5"));
	app_names("cluster", names, sizeof(names));
	assert_non_null(strstr(names, "lotus"));
	app_names("nosuchkind", names, sizeof(names));
	assert_string_equal(names, "");
}

/* --announce-restart (role_conf.c, doc/guides/cluster.md "Announced
 * restarts"): CNs of the cluster file, each once, only with --role mn|cn */
static void
test_announce_restart(void **state)
{
	const char *ini = write_file("announce.ini",
				     "[cluster]\nmn = 1\ncn = 2\nthreads = 1\ncoroutines = 2\n"
				     "replicas = 1\nnic = none\nfabric = shm\n"
				     "[nodes]\nmn0 = 0@0\ncn0 = 0@0,1@1\ncn1 = 0@1,1@0\n");
	static const struct {
		const char *list;
		int rc;
		uint64_t mask;
	} cases[] = {
		{ "cn1", 0, 2 }, { "cn1,cn0", 0, 3 },
		{ "cn2", -1, 0 },  /* not a CN of this cluster */
		{ "cn1,cn1", -1, 0 }, { "cn1,", -1, 0 }, { "mn0", -1, 0 }, { "cnx", -1, 0 },
	};
	struct app_conf c;

	(void)state;
	for (unsigned i = 0; i < RTE_DIM(cases); i++) {
		assert_int_equal(parse(&c, "--role", "mn", "--node", "mn0", "--cluster", ini,
				       "--announce-restart", cases[i].list, NULL), 0);
		assert_int_equal(app_validate(&c), cases[i].rc);
		if (cases[i].rc == 0)
			assert_int_equal(c.announce_mask, cases[i].mask);
	}
	/* the embedded run has no control block to announce in */
	assert_int_equal(parse(&c, "--announce-restart", "cn0", NULL), 0);
	assert_int_equal(app_validate(&c), -1);
}

/* Across hosts (doc/guides/cluster.md): [cluster] rsh and [nodes] host=
 * are the launcher's; dtxn-app accepts them, checks host=, ignores both */
static void
test_cluster_hosts(void **state)
{
	static const struct {
		const char *nodes;
		int rc;
	} cases[] = {
		{ "mn0 = lcores=0 addr=10.77.0.1:18515 host=dtxn-mn0\n"
		  "cn0 = lcores=0-1 addr=10.77.0.4:18518 host=dtxn-cn0\n", 0 },
		{ "mn0 = 0 host=node1.example.org\ncn0 = 0-1 host=node2\n", 0 },
		{ "mn0 = 0 host=\ncn0 = 0-1\n", -1 },                  /* empty */
		{ "mn0 = 0 host=a host=b\ncn0 = 0-1\n", -1 },           /* twice */
		{ "mn0 = 0 host=-x\ncn0 = 0-1\n", -1 },                 /* an option */
		{ "mn0 = 0 host=a/b\ncn0 = 0-1\n", -1 },                /* a path */
		{ "mn0 = host=a\ncn0 = 0-1\n", -1 },                    /* no lcores */
	};
	struct app_conf c;
	char body[512];

	(void)state;
	for (unsigned i = 0; i < RTE_DIM(cases); i++) {
		const char *ini;

		snprintf(body, sizeof(body),
			 "[cluster]\nmn = 1\ncn = 1\nthreads = 1\ncoroutines = 2\nreplicas = 1\n"
			 "nic = none\nfabric = shm\nrsh = ip netns exec {host}\n[nodes]\n%s",
			 cases[i].nodes);
		ini = write_file("hosts.ini", body);
		assert_int_equal(parse(&c, "--role", "mn", "--node", "mn0", "--cluster", ini, NULL), 0);
		assert_int_equal(app_validate(&c), cases[i].rc);
		if (cases[i].rc == 0)
			assert_string_equal(c.fabric, "shm"); /* rsh set no option */
	}
	/* the simulator reads the same file and ignores both */
	assert_int_equal(parse(&c, "--fabric", "sim", "--cluster",
			       write_file("hosts-sim.ini",
					  "[cluster]\nmn = 1\ncn = 1\nthreads = 1\ncoroutines = 2\n"
					  "replicas = 1\nnic = cx5\nrsh = ssh {host}\n"
					  "[nodes]\nmn0 = 0 host=a\ncn0 = 0-1 host=b\n"),
			       "--txns", "10", NULL), 0);
	assert_int_equal(app_validate(&c), 0);
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
		cmocka_unit_test(test_ini_strict),
		cmocka_unit_test(test_model_ranges),
		cmocka_unit_test(test_out_paths),
		cmocka_unit_test(test_seed_and_names),
		cmocka_unit_test(test_announce_restart),
		cmocka_unit_test(test_cluster_hosts),
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
