/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dtxn-app [EAL args] -- [options]
 *
 * The application's own arguments are checked before the EAL starts, so a
 * bad input is reported in one line with nothing else printed. When no EAL
 * memory option is given and no hugepages are available, dtxn-app runs in
 * process memory (--no-huge) and says so in one line.
 */
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_eal.h>
#include <rte_errno.h>

#include "dtxn_sched.h"
#include "app.h"
#include "role.h"

#define FALLBACK_MEM_MB "2048"
/* --fabric sim without EAL memory options: process memory (90 simulated
 * threads need about 1.4 GB) */
#define FALLBACK_SIM_MEM_MB "4096"

static bool
has_arg(int argc, char **argv, const char *const *names)
{
	for (int i = 0; i < argc; i++)
		for (const char *const *n = names; *n != NULL; n++) {
			size_t len = strlen(*n);
			if (strncmp(argv[i], *n, len) == 0 &&
			    (argv[i][len] == '\0' || argv[i][len] == '='))
				return true;
		}
	return false;
}

/* hugetlbfs mounted and at least one free hugepage of some size */
static bool
hugepages_available(void)
{
	FILE *f = fopen("/proc/mounts", "r");
	char line[512];
	bool mounted = false;

	if (f == NULL)
		return false;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strstr(line, " hugetlbfs ") != NULL)
			mounted = true;
	fclose(f);
	if (!mounted)
		return false;
	static const char *const sizes[] = {
		"/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages",
		"/sys/kernel/mm/hugepages/hugepages-1048576kB/free_hugepages",
	};
	for (size_t i = 0; i < RTE_DIM(sizes); i++) {
		unsigned long n = 0;
		f = fopen(sizes[i], "r");
		if (f == NULL)
			continue;
		if (fscanf(f, "%lu", &n) != 1)
			n = 0;
		fclose(f);
		if (n > 0)
			return true;
	}
	return false;
}

/* The cluster file's name without folder and ".ini": "local". */
const char *
app_cluster_name(const struct app_conf *c)
{
	static char name[64];
	char path[PATH_MAX];
	char *dot;

	snprintf(path, sizeof(path), "%s", c->cluster_path);
	snprintf(name, sizeof(name), "%s", basename(path));
	dot = strstr(name, ".ini");
	if (dot != NULL)
		*dot = '\0';
	return name;
}

/*
 * rte_eal_init(); while the logs are captured, also with stdout and stderr
 * on /dev/null: on a bad EAL argument EAL prints getopt's complaint and
 * its whole usage text there, and the app's one line says it instead.
 */
static int
eal_init_quiet(int argc, char **argv, bool quiet)
{
	int null_fd = -1, out = -1, err = -1, rc;

	if (quiet) {
		fflush(stdout);
		fflush(stderr);
		null_fd = open("/dev/null", O_WRONLY);
		out = dup(STDOUT_FILENO);
		err = dup(STDERR_FILENO);
		if (null_fd >= 0 && out >= 0 && err >= 0) {
			dup2(null_fd, STDOUT_FILENO);
			dup2(null_fd, STDERR_FILENO);
		}
	}
	rc = rte_eal_init(argc, argv);
	if (quiet) {
		fflush(stdout);
		fflush(stderr);
		if (out >= 0 && err >= 0) {
			dup2(out, STDOUT_FILENO);
			dup2(err, STDERR_FILENO);
		}
		if (null_fd >= 0)
			close(null_fd);
		if (out >= 0)
			close(out);
		if (err >= 0)
			close(err);
	}
	return rc;
}

int
main(int argc, char **argv)
{
	static const char *const mem_opts[] = { "--no-huge", "--in-memory", "-m",
		"--socket-mem", "--huge-dir", "--legacy-mem", NULL };
	static const char *const prefix_opts[] = { "--file-prefix", "--proc-type", NULL };
	static const char *const log_opts[] = { "--log-level", NULL };
	struct app_conf conf;
	char *eal_argv[256];
	int eal_argc = 0, sep, rc;
	bool capturing = false;

	for (sep = 1; sep < argc; sep++)
		if (strcmp(argv[sep], "--") == 0)
			break;
	/* no "--": "dtxn-app --help" or app options alone are accepted too */
	if (sep == argc) {
		bool app_only = argc > 1 && strncmp(argv[1], "--", 2) == 0 &&
				!has_arg(argc - 1, argv + 1, mem_opts) &&
				!has_arg(argc - 1, argv + 1, (const char *const[]){ "--no-pci", "--lcores", NULL });
		sep = app_only ? 0 : argc;
	}
	if (sep > (int)RTE_DIM(eal_argv) - 8) {
		app_err("too many EAL arguments");
		return APP_EXIT_USAGE;
	}

	app_crash_report_install();
	if (app_crash_test_aid() != 0)
		return APP_EXIT_USAGE;
	app_conf_defaults(&conf);
	rc = app_parse_args(&conf, sep < argc ? argc - sep - 1 : 0, argv + sep + 1);
	if (rc == 1)
		return APP_EXIT_OK;
	if (rc != 0 || app_validate(&conf) != 0)
		return APP_EXIT_USAGE;

	eal_argv[eal_argc++] = argv[0];
	for (int i = 1; i < sep && i < argc; i++)
		eal_argv[eal_argc++] = argv[i];
	if (!has_arg(eal_argc, eal_argv, mem_opts)) {
		if (app_is_sim(&conf)) {
			/* a simulation needs no DMA memory, only plenty of it */
			eal_argv[eal_argc++] = "--no-huge";
			eal_argv[eal_argc++] = "-m";
			eal_argv[eal_argc++] = FALLBACK_SIM_MEM_MB;
		} else if (!hugepages_available()) {
			fprintf(stderr, "dtxn-app: no hugepages available; running in process memory "
				"(--no-huge -m " FALLBACK_MEM_MB ")\n");
			eal_argv[eal_argc++] = "--no-huge";
			eal_argv[eal_argc++] = "-m";
			eal_argv[eal_argc++] = FALLBACK_MEM_MB;
		}
	}
	/* --role mn|cn: the processes of one cluster are DPDK primary (the first
	 * to start) + secondaries sharing the cluster's --file-prefix and its
	 * hugepages (doc/guides/cluster.md); on mlx5 each is its own primary */
	if (app_role_shared(&conf)) {
		static char prefix_arg[96];

		if (has_arg(eal_argc, eal_argv, (const char *const[]){ "--no-huge", "--in-memory",
			    "--no-shconf", NULL }) || !hugepages_available()) {
			app_err("--role %s: the processes of a cluster share hugepages: mount them and leave out --no-huge, --in-memory, --no-shconf (usertools/dtxn-setup)",
				conf.role);
			return APP_EXIT_USAGE;
		}
		if (!has_arg(eal_argc, eal_argv, (const char *const[]){ "--file-prefix", NULL })) {
			snprintf(prefix_arg, sizeof(prefix_arg), "--file-prefix=dtxn-%s",
				 app_cluster_name(&conf));
			eal_argv[eal_argc++] = prefix_arg;
		}
		if (!has_arg(eal_argc, eal_argv, (const char *const[]){ "--proc-type", NULL }))
			eal_argv[eal_argc++] = "--proc-type=auto";
	}
	/* runs side by side (other users, other runs): no shared runtime files
	 * unless the user names a prefix */
	if (!app_role_shared(&conf) && !has_arg(eal_argc, eal_argv, prefix_opts) &&
	    !has_arg(eal_argc, eal_argv, (const char *const[]){ "--in-memory", "--no-shconf", NULL })) {
		bool no_huge = has_arg(eal_argc, eal_argv, (const char *const[]){ "--no-huge", NULL });

		eal_argv[eal_argc++] = no_huge ? "--no-shconf" : "--in-memory";
	}
	/* dtxn drives no PCI device through DPDK (mlx5 goes through rdma-core):
	 * without this, EAL probes the machine's NICs and prints what it cannot use */
	if (!has_arg(eal_argc, eal_argv, (const char *const[]){ "--no-pci", "-a", "--allow", "-b",
		     "--block", "--vdev", NULL }))
		eal_argv[eal_argc++] = "--no-pci";
	/* the processes of a cluster are watched with dpdk-telemetry.py (the
	 * primary's socket answers for every node: telemetry.c); an embedded
	 * run opens no socket unless asked (--telemetry) */
	if (!app_role_shared(&conf) &&
	    !has_arg(eal_argc, eal_argv, (const char *const[]){ "--telemetry", "--no-telemetry", NULL }))
		eal_argv[eal_argc++] = "--no-telemetry";
	/* --log-level: the user wants the libraries' logs as they come */
	if (!has_arg(eal_argc, eal_argv, log_opts)) {
		eal_argv[eal_argc++] = "--log-level=lib.eal:warning";
		capturing = app_log_capture() == 0;
	}
	eal_argv[eal_argc] = NULL;

	/* a CN of a cluster: its start-up allocates from DPDK's shared heap,
	 * whose lock a process killed inside it leaves held (testing.md
	 * "Shared locks"): bounded; disarmed at its start barrier (run.c) */
	if (app_role_shared(&conf) && strcmp(conf.role, "cn") == 0)
		app_watchdog_arm((unsigned)conf.connect_timeout_s + APP_STARTUP_WATCHDOG_S, APP_EXIT_FAIL,
				 "dtxn-app: --node %s: start-up not done after %u s (a lock in DPDK's shared memory held by a process that died inside it?): exiting",
				 conf.node, (unsigned)conf.connect_timeout_s + APP_STARTUP_WATCHDOG_S);
	if (eal_init_quiet(eal_argc, eal_argv, capturing) < 0) {
		app_err("EAL initialisation failed%s%s (check the EAL arguments before '--')",
			rte_errno != 0 ? ": " : "", rte_errno != 0 ? rte_strerror(rte_errno) : "");
		app_log_release(false);
		return APP_EXIT_USAGE;
	}
	if (dtxn_clock_init() != 0) {
		app_err("cannot calibrate the clock (TSC frequency unknown)");
		rte_eal_cleanup();
		app_log_release(false);
		return APP_EXIT_FAIL;
	}
	rc = app_run(&conf);
	rte_eal_cleanup();
	app_log_release(rc == APP_EXIT_OK);
	return rc;
}
