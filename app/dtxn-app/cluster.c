/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Simulation options (doc/guides/sim.md, "Cluster files"): --cluster reads
 * config/cluster/<name>.ini (or a path), whose [cluster] keys are dtxn-app
 * options (mn, cn, threads, coroutines, replicas, nic, cn_nic, cpu). A key
 * applies unless the same option was given on the command line or in the
 * --config INI, so a sweep can vary one figure of a preset. Then the CPU
 * model (--cpu) and the CN RNIC model (--cn-nic) are resolved and loaded,
 * so that a bad file is reported before the EAL starts.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_cfgfile.h>
#include <rte_common.h>

#include "dtxn_fabric.h"
#include "dtxn_sched.h"
#include "app.h"

#define CLUSTER_SECTION "cluster"

/* [cluster] keys: the dtxn-app options they set; the first five are mandatory. */
static const char *const g_cluster_keys[] = {
	"mn", "cn", "threads", "coroutines", "nic", "replicas", "cn_nic", "cpu",
};
#define CLUSTER_N_MANDATORY 5

/* Options that mean nothing without --fabric sim. */
static const char *const g_sim_only[] = { "cluster", "threads", "cpu", "cn_nic" };

bool
app_is_sim(const struct app_conf *c)
{
	return strcmp(c->fabric, "sim") == 0;
}

/* A preset name or a path ("/" or ".ini" in it): 0 and the path, or -1 after one line. */
static int
resolve(const char *opt, const char *kind, const char *val, char *out, size_t len,
	const char *presets)
{
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
	struct rte_cfgfile_entry entries[32];
	bool seen[RTE_DIM(g_cluster_keys)] = { false };
	const char *path = c->cluster_path;
	struct rte_cfgfile *cfg;
	int n, rc = -1;

	cfg = rte_cfgfile_load(path, 0);
	if (cfg == NULL) {
		app_err("--cluster %s: not a valid INI file", path);
		return -1;
	}
	if (rte_cfgfile_num_sections(cfg, NULL, 0) != 1 ||
	    !rte_cfgfile_has_section(cfg, CLUSTER_SECTION)) {
		app_err("--cluster %s: needs exactly one section, [" CLUSTER_SECTION "]", path);
		goto out;
	}
	n = rte_cfgfile_section_entries(cfg, CLUSTER_SECTION, entries, RTE_DIM(entries));
	if (n < 0) {
		app_err("--cluster %s: cannot read [" CLUSTER_SECTION "]", path);
		goto out;
	}
	for (int i = 0; i < n; i++) {
		char origin[APP_ORIGIN_MAX];
		unsigned k;

		for (k = 0; k < RTE_DIM(g_cluster_keys); k++)
			if (strcmp(entries[i].name, g_cluster_keys[k]) == 0)
				break;
		if (k == RTE_DIM(g_cluster_keys)) {
			app_err("--cluster %s: [" CLUSTER_SECTION "] unknown key '%s' (keys: mn, cn, threads, coroutines, nic, replicas, cn_nic, cpu)",
				path, entries[i].name);
			goto out;
		}
		seen[k] = true;
		snprintf(origin, sizeof(origin), "%.4000s: %.100s", path, entries[i].name);
		if (app_conf_given(c, g_cluster_keys[k]))
			continue; /* the command line or --config wins */
		if (app_conf_set(c, g_cluster_keys[k], entries[i].value, origin) != 0)
			goto out;
	}
	for (unsigned k = 0; k < CLUSTER_N_MANDATORY; k++)
		if (!seen[k]) {
			app_err("--cluster %s: [" CLUSTER_SECTION "] has no '%s'", path,
				g_cluster_keys[k]);
			goto out;
		}
	rc = 0;
out:
	c->given = given; /* what the user set, not what the preset filled */
	rte_cfgfile_close(cfg);
	return rc;
}

static int
check_models(struct app_conf *c)
{
	struct dtxn_cpu_model cm;
	struct dtxn_nic_model nm;
	char err[256];

	if (resolve("cpu", "cpu", c->cpu, c->cpu_path, sizeof(c->cpu_path), "default, zero") != 0)
		return -1;
	if (dtxn_cpu_model_load(c->cpu_path, &cm, err, sizeof(err)) != 0) {
		app_err("--cpu: %s", err);
		return -1;
	}
	c->cn_nic_path[0] = '\0';
	if (c->cn_nic[0] == '\0' || strcmp(c->cn_nic, "none") == 0)
		return 0;
	if (resolve("cn-nic", "nic", c->cn_nic, c->cn_nic_path, sizeof(c->cn_nic_path),
		    "none, cx3, cx5, cx6") != 0)
		return -1;
	if (dtxn_nic_model_load(c->cn_nic_path, &nm, err, sizeof(err)) != 0) {
		app_err("--cn-nic: %s", err);
		return -1;
	}
	return 0;
}

int
app_sim_validate(struct app_conf *c)
{
	if (!app_is_sim(c)) {
		for (unsigned i = 0; i < RTE_DIM(g_sim_only); i++)
			if (app_conf_given(c, g_sim_only[i])) {
				app_err("--%s: only for the simulated cluster (--fabric sim)",
					strcmp(g_sim_only[i], "cn_nic") == 0 ? "cn-nic" : g_sim_only[i]);
				return -1;
			}
		return 0;
	}
	if (c->cluster[0] != '\0') {
		if (resolve("cluster", "cluster", c->cluster, c->cluster_path,
			    sizeof(c->cluster_path), "lotus, motor, crest, scythe, oocc") != 0)
			return -1;
		if (cluster_apply(c) != 0)
			return -1;
	}
	if (c->mn + c->cn > DTXN_MAX_NODES) {
		app_err("--cn %" PRIu64 ": %" PRIu64 " MNs + %" PRIu64 " CNs is more than %u nodes",
			c->cn, c->mn, c->cn, DTXN_MAX_NODES);
		return -1;
	}
	if (c->cn * c->threads * c->coroutines > UINT32_MAX / 2) {
		app_err("--coroutines: %" PRIu64 " CNs x %" PRIu64 " threads x %" PRIu64 " coroutines is too many coordinators",
			c->cn, c->threads, c->coroutines);
		return -1;
	}
	return check_models(c);
}
