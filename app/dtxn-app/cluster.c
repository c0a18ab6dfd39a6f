/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Simulation options (doc/guides/sim.md, "Cluster files"): --cluster reads
 * config/cluster/<name>.ini (or a path), whose [cluster] keys are dtxn-app
 * options (mn, cn, threads, coroutines, replicas, nic, cn_nic, cpu, fabric,
 * clock_skew_ns, clock_drift_ppm), but for rsh, the launcher's remote-shell
 * template (doc/guides/cluster.md, "Across hosts"), which dtxn-app
 * accepts and ignores. A key
 * applies unless the same option was given on the command line or in the
 * --config INI, so a sweep can vary one figure of a preset; a --nic given
 * there replaces the preset's cn_nic too (the CNs take --nic unless
 * --cn-nic is given: `--cluster lotus --nic cx3` is model v1 on every
 * node, doc/guides/fabric.md, "NIC model v2"). Then the CPU
 * model (--cpu) and the CN RNIC model (--cn-nic) are resolved and loaded,
 * so that a bad file is reported before the EAL starts.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_common.h>

#include "dtxn_fabric.h"
#include "dtxn_ini.h"
#include "dtxn_sched.h"
#include "app.h"

#define CLUSTER_SECTION "cluster"

/* [cluster] keys: the dtxn-app options they set; the first five are mandatory. */
static const char *const g_cluster_keys[] = {
	"mn", "cn", "threads", "coroutines", "nic", "replicas", "cn_nic", "cpu", "fabric",
	"clock_skew_ns", "clock_drift_ppm", "rsh",
};
#define CLUSTER_N_MANDATORY 5
/* The one key that is not an option: usertools/dtxn-cluster's. */
#define CLUSTER_KEY_RSH (RTE_DIM(g_cluster_keys) - 1)

/* Options that mean nothing without --fabric sim. */
static const char *const g_sim_only[] = { "cluster", "threads", "cpu", "cn_nic",
					   "clock_skew_ns", "clock_drift_ppm" };

bool
app_is_sim(const struct app_conf *c)
{
	return strcmp(c->fabric, "sim") == 0;
}

int
app_preset_resolve(const char *opt, const char *kind, const char *val, char *out, size_t len)
{
	char presets[256];

	if (strchr(val, '/') != NULL || strstr(val, ".ini") != NULL) {
		if (access(val, R_OK) != 0) {
			app_err("--%s %s: %s", opt, val, strerror(errno));
			return -1;
		}
		if ((size_t)snprintf(out, len, "%s", val) >= len) {
			app_err("--%s: path too long", opt);
			return -1;
		}
		return 0;
	}
	if (app_config_find(kind, val, out, len) != 0) {
		app_names(kind, presets, sizeof(presets));
		app_err("--%s: unknown %s preset '%s' (presets: %s; or a path to an INI file)",
			opt, kind, val, presets);
		return -1;
	}
	return 0;
}

static int
cluster_apply(struct app_conf *c)
{
	const uint64_t given = c->given;
	const bool own_nic = app_conf_given(c, "nic"); /* before the preset sets it */
	bool seen[RTE_DIM(g_cluster_keys)] = { false };
	const char *path = c->cluster_path;
	char err[APP_ORIGIN_MAX];
	struct dtxn_ini *ini;
	int rc = -1;

	/* [nodes]: the processes of a local deployment (role.c; the sim ignores it) */
	ini = dtxn_ini_load(path, (const char *const[]){ CLUSTER_SECTION, "nodes", NULL }, err,
			    sizeof(err));
	if (ini == NULL) {
		app_err("--cluster %s", err);
		return -1;
	}
	for (unsigned i = 0; i < dtxn_ini_count(ini); i++) {
		const struct dtxn_ini_entry *e = dtxn_ini_at(ini, i);
		char origin[APP_ORIGIN_MAX];
		int k;

		if (strcmp(e->section, CLUSTER_SECTION) != 0)
			continue;
		k = dtxn_ini_key_index(ini, e, g_cluster_keys, RTE_DIM(g_cluster_keys), err,
				       sizeof(err));
		if (k < 0) {
			app_err("--cluster %s", err);
			goto out;
		}
		seen[k] = true;
		if ((unsigned)k == CLUSTER_KEY_RSH)
			continue; /* the launcher's remote shell: not an option */
		snprintf(origin, sizeof(origin), "--cluster %.4000s:%u: %s", path, e->line, e->name);
		if (app_conf_given(c, g_cluster_keys[k]))
			continue; /* the command line or --config wins */
		if (strcmp(g_cluster_keys[k], "cn_nic") == 0 && own_nic)
			continue; /* a --nic of one's own is every node's, unless --cn-nic */
		if (app_conf_set(c, g_cluster_keys[k], e->value, origin) != 0)
			goto out;
	}
	for (unsigned k = 0; k < CLUSTER_N_MANDATORY; k++)
		if (!seen[k]) {
			app_err("--cluster %s:%u: [" CLUSTER_SECTION "] has no '%s'", path,
				dtxn_ini_section_line(ini, CLUSTER_SECTION), g_cluster_keys[k]);
			goto out;
		}
	rc = 0;
out:
	c->given = given; /* what the user set, not what the preset filled */
	dtxn_ini_free(ini);
	return rc;
}

static int
check_models(struct app_conf *c)
{
	struct dtxn_cpu_model cm;
	char err[256];

	if (app_preset_resolve("cpu", "cpu", c->cpu, c->cpu_path, sizeof(c->cpu_path)) != 0)
		return -1;
	if (dtxn_cpu_model_load(c->cpu_path, &cm, err, sizeof(err)) != 0) {
		app_err("--cpu: %s", err);
		return -1;
	}
	if (app_nic_resolve("cn-nic", c->cn_nic, c->cn_nic_path, sizeof(c->cn_nic_path)) != 0)
		return -1;
	if (c->cn_nic_path[0] == '\0' && strcmp(c->nic, "none") == 0 && c->txns == 0) {
		bool free_cpu = true;

		for (unsigned k = 0; k < DTXN_CPU_OP_MAX; k++)
			free_cpu = free_cpu && cm.ns[k] == 0;
		if (free_cpu) {
			app_err("--cpu %s with --nic none: nothing costs virtual time, so --duration is never reached (use --txns N, or a NIC or CPU model)",
				c->cpu);
			return -1;
		}
	}
	return 0;
}

int
app_sim_validate(struct app_conf *c)
{
	if (!app_is_sim(c)) {
		/* --role mn|cn: the cluster file describes the deployment (role.c) */
		bool roles = strcmp(c->role, "all") != 0;

		for (unsigned i = 0; i < RTE_DIM(g_sim_only); i++)
			if (app_conf_given(c, g_sim_only[i]) &&
			    !(roles && (strcmp(g_sim_only[i], "cluster") == 0 ||
					strcmp(g_sim_only[i], "threads") == 0))) {
				char opt[32];

				/* the option as typed: dashes, not the table's underscores */
				snprintf(opt, sizeof(opt), "%s", g_sim_only[i]);
				for (char *p = opt; *p != '\0'; p++)
					*p = *p == '_' ? '-' : *p;
				app_err("--%s: only for the simulated cluster (--fabric sim)", opt);
				return -1;
			}
		if (roles && c->cluster[0] != '\0')
			return app_preset_resolve("cluster", "cluster", c->cluster, c->cluster_path,
						  sizeof(c->cluster_path)) == 0 ? cluster_apply(c) : -1;
		return 0;
	}
	if (c->cluster[0] != '\0') {
		if (app_preset_resolve("cluster", "cluster", c->cluster, c->cluster_path,
			    sizeof(c->cluster_path)) != 0)
			return -1;
		if (cluster_apply(c) != 0)
			return -1;
	}
	return check_models(c);
}
