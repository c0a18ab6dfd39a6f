/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --role, --node and the cluster file's [nodes] section, checked before
 * the EAL starts (doc/guides/cluster.md, doc/guides/mlx5.md). [nodes] names
 * every process of a deployment with its EAL lcores and, for --fabric mlx5,
 * its address: "cn0 = 0@1,1@0" or "cn0 = lcores=0@1,1@0 addr=10.0.0.5:7471"
 * (blank-separated; a first word without '=' is the lcores), and, across
 * hosts, "host=NAME": the host the launcher starts the node on through the
 * [cluster] rsh template (doc/guides/cluster.md, "Across hosts"). The
 * launcher (usertools/dtxn-cluster) reads the lcores and hosts, dtxn-app
 * the names and the addresses (app_conf.node_addr, passed to the fabric by
 * role.c); dtxn-app checks host= and otherwise ignores it.
 */
#include <ctype.h>
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

/* A host= value: a host name or a network namespace's name (letters,
 * digits, '.', '_', '-'; not starting with '-'), 1..63 characters. */
static bool
role_host_valid(const char *h)
{
	size_t n = strlen(h);

	if (n == 0 || n > 63 || h[0] == '-')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)h[i]) && h[i] != '.' && h[i] != '_' && h[i] != '-')
			return false;
	return true;
}

/*
 * One [nodes] value: "LCORES", "lcores=LCORES", "addr=IPv4:port",
 * "host=NAME", blank-separated, each at most once. A valid addr= goes to
 * @p addr; host= is the launcher's (checked, then ignored).
 * @return 0, or -1 after one line naming file:line.
 */
static int
role_node_value(const struct app_conf *c, const struct dtxn_ini_entry *e, char *addr,
		size_t addr_len)
{
	char buf[256]; /* rte_cfgfile's CFG_VALUE_LEN */
	bool lcores = false, has_addr = false, has_host = false;
	char *save = NULL, *w;
	unsigned word = 0;

	snprintf(buf, sizeof(buf), "%s", e->value);
	for (w = strtok_r(buf, " \t", &save); w != NULL; w = strtok_r(NULL, " \t", &save), word++) {
		const char *eq = strchr(w, '=');

		if (eq == NULL && word == 0) {
			lcores = true;
		} else if (eq != NULL && strncmp(w, "lcores=", 7) == 0 && !lcores && eq[1] != '\0') {
			lcores = true;
		} else if (eq != NULL && strncmp(w, "addr=", 5) == 0 && !has_addr) {
			if (dtxn_fabric_addr_parse(eq + 1, NULL, NULL) != 0 ||
			    strlen(eq + 1) >= addr_len) {
				app_err("--cluster %s:%u: [nodes] %s: address '%s': expected IPv4:port (e.g. addr=10.0.0.1:7471)",
					c->cluster_path, e->line, e->name, eq + 1);
				return -1;
			}
			snprintf(addr, addr_len, "%s", eq + 1);
			has_addr = true;
		} else if (eq != NULL && strncmp(w, "host=", 5) == 0 && !has_host) {
			if (!role_host_valid(eq + 1)) {
				app_err("--cluster %s:%u: [nodes] %s: host '%s': expected a host or namespace name (letters, digits, '.', '_', '-')",
					c->cluster_path, e->line, e->name, eq + 1);
				return -1;
			}
			has_host = true;
		} else {
			app_err("--cluster %s:%u: [nodes] %s: '%s' is not lcores=LIST, addr=IPv4:port or host=NAME, each once",
				c->cluster_path, e->line, e->name, w);
			return -1;
		}
	}
	if (!lcores) {
		app_err("--cluster %s:%u: [nodes] %s: no lcores (e.g. '%s = lcores=0@0 addr=10.0.0.1:7471')",
			c->cluster_path, e->line, e->name, e->name);
		return -1;
	}
	return 0;
}

/* The [nodes] section: every mnI and cnJ of the [cluster] counts, no other
 * name, --node among them, each value well formed (role_node_value()), no
 * two nodes at one address. Fills c->node_addr. */
static int
role_nodes_check(struct app_conf *c)
{
	char err[APP_ORIGIN_MAX];
	uint64_t mn_seen = 0, cn_seen = 0;
	bool found = false;
	struct dtxn_ini *ini;
	int rc = -1;

	memset(c->node_addr, 0, sizeof(c->node_addr));
	ini = dtxn_ini_load(c->cluster_path, (const char *const[]){ "cluster", "nodes", NULL },
			    err, sizeof(err));
	if (ini == NULL) {
		app_err("--cluster %s", err);
		return -1;
	}
	for (unsigned i = 0; i < dtxn_ini_count(ini); i++) {
		const struct dtxn_ini_entry *e = dtxn_ini_at(ini, i);
		long m = role_node_index(e->name, "mn"), n = role_node_index(e->name, "cn");
		unsigned id;

		if (strcmp(e->section, "nodes") != 0)
			continue;
		if ((m < 0 || (uint64_t)m >= c->mn) && (n < 0 || (uint64_t)n >= c->cn)) {
			app_err("--cluster %s:%u: [nodes] %s: not a node of this cluster (mn0..mn%" PRIu64 ", cn0..cn%" PRIu64 ")",
				c->cluster_path, e->line, e->name, c->mn - 1, c->cn - 1);
			goto out;
		}
		id = m >= 0 ? (unsigned)m : (unsigned)(c->mn + (uint64_t)n);
		if (role_node_value(c, e, c->node_addr[id], sizeof(c->node_addr[id])) != 0)
			goto out;
		for (unsigned k = 0; k < DTXN_MAX_NODES && c->node_addr[id][0] != '\0'; k++)
			if (k != id && strcmp(c->node_addr[k], c->node_addr[id]) == 0) {
				app_err("--cluster %s:%u: [nodes] %s: address %s is already %s%u's",
					c->cluster_path, e->line, e->name, c->node_addr[id],
					k < c->mn ? "mn" : "cn", k < c->mn ? k : (unsigned)(k - c->mn));
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

/* --debug-lose mnI@S: which MN, when (run.c injects the error state). */
static int
role_debug_lose(struct app_conf *c)
{
	char node[16];
	const char *at = strchr(c->debug_lose, '@');
	char *end;
	long m;

	c->lose_mn = -1;
	if (c->debug_lose[0] == '\0')
		return 0;
	if (at == NULL || (size_t)(at - c->debug_lose) >= sizeof(node))
		goto bad;
	memcpy(node, c->debug_lose, (size_t)(at - c->debug_lose));
	node[at - c->debug_lose] = '\0';
	m = role_node_index(node, "mn");
	errno = 0;
	c->lose_at_s = strtod(at + 1, &end);
	if (m < 0 || (uint64_t)m >= c->mn || errno != 0 || end == at + 1 || *end != '\0' ||
	    !(c->lose_at_s >= 0 && c->lose_at_s <= 3600) || app_is_sim(c))
		goto bad;
	c->lose_mn = (int)m;
	return 0;
bad:
	app_err("--debug-lose %s: expected mnI@S (an MN of this run, 0 <= S <= 3600 seconds; not on --fabric sim)",
		c->debug_lose);
	return -1;
}

/* --debug-stall cnJ@S:MS: which CN, when, how long (run.c arms it). */
static int
role_debug_stall(struct app_conf *c)
{
	char node[16];
	const char *at = strchr(c->debug_stall, '@');
	const char *colon = at != NULL ? strchr(at, ':') : NULL;
	char *end, *end2;
	long j;

	c->stall_cn = -1;
	if (c->debug_stall[0] == '\0')
		return 0;
	if (at == NULL || colon == NULL || (size_t)(at - c->debug_stall) >= sizeof(node))
		goto bad;
	memcpy(node, c->debug_stall, (size_t)(at - c->debug_stall));
	node[at - c->debug_stall] = '\0';
	j = role_node_index(node, "cn");
	errno = 0;
	c->stall_at_s = strtod(at + 1, &end);
	c->stall_ms = strtod(colon + 1, &end2);
	if (j < 0 || (uint64_t)j >= c->cn || c->mn + (uint64_t)j >= 64 || errno != 0 ||
	    end != colon || end == at + 1 || end2 == colon + 1 || *end2 != '\0' ||
	    !(c->stall_at_s >= 0 && c->stall_at_s <= 3600) ||
	    !(c->stall_ms > 0 && c->stall_ms <= 60000) || app_is_sim(c))
		goto bad;
	c->stall_cn = (int)j;
	return 0;
bad:
	app_err("--debug-stall %s: expected cnJ@S:MS (a CN of this run, 0 <= S <= 3600 seconds, 0 < MS <= 60000 ms; not on --fabric sim)",
		c->debug_stall);
	return -1;
}

/* --announce-restart cnJ,...: CNs of the run. The announcement lives in
 * the control block the processes share (--control shared, shm) or in MN
 * 0's control area (--control fabric: MN 0 writes it there,
 * app_cf_area_init()). */
static int
role_announce(struct app_conf *c)
{
	const char *a = c->announce_restart;

	c->announce_mask = 0;
	if (a[0] == '\0')
		return 0;
	return app_cn_list_parse(c, "announce-restart", a, a, a + strlen(a), &c->announce_mask);
}

int
app_role_validate(struct app_conf *c)
{
	long idx;

	if (role_debug_lose(c) != 0 || role_debug_stall(c) != 0)
		return -1;

	if (strcmp(c->role, "all") == 0) {
		if (c->node[0] != '\0' || app_conf_given(c, "connect_timeout") ||
		    c->announce_restart[0] != '\0') {
			app_err("--%s: only with --role mn or --role cn",
				c->node[0] != '\0' ? "node" :
				c->announce_restart[0] != '\0' ? "announce-restart" : "connect-timeout");
			return -1;
		}
		return 0;
	}
	if (!app_role_split(c)) {
		app_err("--role: unknown role '%s' (all, mn, cn)", c->role);
		return -1;
	}
	if (strcmp(c->fabric, "sim") == 0) {
		app_err("--role %s: only on --fabric shm, mlx5 or ucx (the simulator runs the whole cluster in one process)",
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
	if (role_announce(c) != 0)
		return -1;
	return role_nodes_check(c);
}
