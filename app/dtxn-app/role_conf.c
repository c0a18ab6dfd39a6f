/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --role, --node and the cluster file's [nodes] section, checked before
 * the EAL starts (doc/guides/cluster.md). [nodes] names every process of a
 * local deployment with its EAL lcores ("cn0 = 0@1,1@0"); the launcher
 * (usertools/dtxn-cluster) reads the lcores, dtxn-app the names.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtxn_ini.h"
#include "app.h"
#include "role.h"

bool
app_role_split(const struct app_conf *c)
{
	return strcmp(c->role, "mn") == 0 || strcmp(c->role, "cn") == 0;
}

/* "mn12" -> 12 for kind "mn"; -1 if it is not of that form. */
static long
role_node_index(const char *name, const char *kind)
{
	size_t k = strlen(kind);
	char *end;
	long v;

	if (strncmp(name, kind, k) != 0 || name[k] < '0' || name[k] > '9')
		return -1;
	errno = 0;
	v = strtol(name + k, &end, 10);
	if (errno != 0 || *end != '\0' || v >= DTXN_MAX_NODES || (v > 0 && name[k] == '0'))
		return -1;
	return v;
}

/* The [nodes] section: every mnI and cnJ of the [cluster] counts, no other
 * name, and --node among them. */
static int
role_nodes_check(const struct app_conf *c)
{
	char err[APP_ORIGIN_MAX];
	uint64_t mn_seen = 0, cn_seen = 0;
	bool found = false;
	struct dtxn_ini *ini;
	int rc = -1;

	ini = dtxn_ini_load(c->cluster_path, (const char *const[]){ "cluster", "nodes", NULL },
			    err, sizeof(err));
	if (ini == NULL) {
		app_err("--cluster %s", err);
		return -1;
	}
	for (unsigned i = 0; i < dtxn_ini_count(ini); i++) {
		const struct dtxn_ini_entry *e = dtxn_ini_at(ini, i);
		long m = role_node_index(e->name, "mn"), n = role_node_index(e->name, "cn");

		if (strcmp(e->section, "nodes") != 0)
			continue;
		if ((m < 0 || (uint64_t)m >= c->mn) && (n < 0 || (uint64_t)n >= c->cn)) {
			app_err("--cluster %s:%u: [nodes] %s: not a node of this cluster (mn0..mn%" PRIu64 ", cn0..cn%" PRIu64 ")",
				c->cluster_path, e->line, e->name, c->mn - 1, c->cn - 1);
			goto out;
		}
		if (m >= 0)
			mn_seen |= UINT64_C(1) << m;
		else
			cn_seen |= UINT64_C(1) << n;
		found = found || strcmp(e->name, c->node) == 0;
	}
	if (!found) {
		app_err("--node %s: not in the cluster file %s (its [nodes] section names the processes)",
			c->node, c->cluster_path);
		goto out;
	}
	if (__builtin_popcountll(mn_seen) != (int)c->mn || __builtin_popcountll(cn_seen) != (int)c->cn) {
		app_err("--cluster %s: [nodes] must name mn0..mn%" PRIu64 " and cn0..cn%" PRIu64 ", each once",
			c->cluster_path, c->mn - 1, c->cn - 1);
		goto out;
	}
	rc = 0;
out:
	dtxn_ini_free(ini);
	return rc;
}

int
app_role_validate(struct app_conf *c)
{
	long idx;

	if (strcmp(c->role, "all") == 0) {
		if (c->node[0] != '\0' || app_conf_given(c, "connect_timeout")) {
			app_err("--%s: only with --role mn or --role cn",
				c->node[0] != '\0' ? "node" : "connect-timeout");
			return -1;
		}
		return 0;
	}
	if (!app_role_split(c)) {
		app_err("--role: unknown role '%s' (all, mn, cn)", c->role);
		return -1;
	}
	if (strcmp(c->fabric, "shm") != 0) {
		app_err("--role %s: only on --fabric shm (the simulator runs the whole cluster in one process)",
			c->role);
		return -1;
	}
	if (c->node[0] == '\0' || c->cluster[0] == '\0') {
		app_err("--role %s: give --node %sI and --cluster FILE (doc/guides/cluster.md)", c->role,
			c->role);
		return -1;
	}
	idx = role_node_index(c->node, c->role);
	if (idx < 0 || (uint64_t)idx >= (strcmp(c->role, "mn") == 0 ? c->mn : c->cn)) {
		app_err("--node %s: unknown node name for --role %s (mn0..mn%" PRIu64 " or cn0..cn%" PRIu64 ")",
			c->node, c->role, c->mn - 1, c->cn - 1);
		return -1;
	}
	c->node_idx = (unsigned)idx;
	return role_nodes_check(c);
}
