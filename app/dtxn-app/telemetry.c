/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DPDK telemetry commands of a dtxn process (issue 12; doc/guides/cluster.md,
 * "Watching a live node"):
 *
 *   /dtxn/info[,NODE]    role, node, protocol, bench, pid, state
 *   /dtxn/stats[,NODE]   per worker lcore: committed, attempted, aborts
 *   /dtxn/fabric[,NODE]  verbs posted to each MN
 *   /dtxn/rpc[,NODE]     messages sent to each peer CN
 *
 * Figures are cumulative counters a process's main lcore publishes every
 * 100 ms (run.c) into its slot of the cluster's control block (role.h),
 * so the telemetry thread of the process that serves the socket reads any
 * node's without touching another process's private memory. DPDK 22.11
 * opens the telemetry socket in the primary process only (mn0 with the
 * launcher); every process registers the commands.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_common.h>
#include <rte_telemetry.h>

#include "role.h"

static const struct app_conf *g_tel_conf;
static struct app_ctl *g_tel_ctl;
static struct app_tel g_tel_local; /* --role all */

struct app_tel *
app_telemetry_self(const struct app_conf *c, struct app_ctl *ctl)
{
	return ctl != NULL ? &app_role_self(c, ctl)->tel : &g_tel_local;
}

/* The node a command asks about: its slot (NULL: --role all, this
 * process), its role ("mn", "cn", "all") and name; -EINVAL for a name
 * that is no node of the cluster. */
static int
tel_node(const char *params, struct app_ctl_node **slot, const char **role, char *name,
	 size_t len)
{
	const struct app_conf *c = g_tel_conf;
	unsigned idx, n;
	char kind[3];
	int end = 0;

	*slot = NULL;
	if (params == NULL || params[0] == '\0') {
		snprintf(name, len, "%s", c->node[0] ? c->node : "all");
		*role = c->role;
		if (g_tel_ctl != NULL)
			*slot = app_role_self(c, g_tel_ctl);
		return 0;
	}
	if (g_tel_ctl == NULL || sscanf(params, "%2[mnc]%u%n", kind, &idx, &end) != 2 ||
	    params[end] != '\0' || (strcmp(kind, "mn") != 0 && strcmp(kind, "cn") != 0))
		return -EINVAL;
	n = (unsigned)(kind[0] == 'm' ? c->mn : c->cn);
	if (idx >= n)
		return -EINVAL;
	*slot = kind[0] == 'm' ? &g_tel_ctl->mn[idx] : &g_tel_ctl->cn[idx];
	*role = kind[0] == 'm' ? "mn" : "cn";
	snprintf(name, len, "%s%u", kind, idx);
	return 0;
}

static const struct app_tel *
tel_of(struct app_ctl_node *slot)
{
	return slot != NULL ? &slot->tel : &g_tel_local;
}

static int
tel_info(const char *cmd, const char *params, struct rte_tel_data *d)
{
	static const char *const states[] = { "free", "starting", "ready", "done" };
	struct app_ctl_node *slot;
	const char *role;
	char name[16];
	uint32_t st;

	(void)cmd;
	if (tel_node(params, &slot, &role, name, sizeof(name)) != 0)
		return -EINVAL;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "role", role);
	rte_tel_data_add_dict_string(d, "node", name);
	rte_tel_data_add_dict_string(d, "protocol", g_tel_conf->protocol);
	rte_tel_data_add_dict_string(d, "bench", g_tel_conf->bench);
	if (slot != NULL) {
		st = __atomic_load_n(&slot->state, __ATOMIC_RELAXED);
		rte_tel_data_add_dict_int(d, "pid", __atomic_load_n(&slot->pid, __ATOMIC_RELAXED));
		rte_tel_data_add_dict_string(d, "state", st < RTE_DIM(states) ? states[st] : "?");
	}
	return 0;
}

static int
tel_stats(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct app_ctl_node *slot;
	const struct app_tel *t;
	const char *role;
	char name[16], key[24];
	uint32_t n;

	(void)cmd;
	if (tel_node(params, &slot, &role, name, sizeof(name)) != 0)
		return -EINVAL;
	t = tel_of(slot);
	n = RTE_MIN(__atomic_load_n(&t->n_lcores, __ATOMIC_ACQUIRE), (uint32_t)APP_TEL_LCORES);
	rte_tel_data_start_dict(d);
	for (uint32_t i = 0; i < n; i++) {
		struct rte_tel_data *l = rte_tel_data_alloc();

		if (l == NULL)
			return -ENOMEM;
		rte_tel_data_start_dict(l);
		rte_tel_data_add_dict_u64(l, "committed", __atomic_load_n(&t->lc[i].committed, __ATOMIC_RELAXED));
		rte_tel_data_add_dict_u64(l, "attempted", __atomic_load_n(&t->lc[i].attempted, __ATOMIC_RELAXED));
		rte_tel_data_add_dict_u64(l, "aborts", __atomic_load_n(&t->lc[i].aborts, __ATOMIC_RELAXED));
		snprintf(key, sizeof(key), "lcore%u", t->lc[i].lcore);
		rte_tel_data_add_dict_container(d, key, l, 0);
	}
	return 0;
}

/* One u64 per node id in [from, to) whose counter is not 0, named by @p kind and index. */
static int
tel_per_node(const char *params, struct rte_tel_data *d, bool to_mn)
{
	const struct app_conf *c = g_tel_conf;
	struct app_ctl_node *slot;
	const uint64_t *v;
	const char *role;
	char name[16], key[16];
	unsigned from = to_mn ? 0 : (unsigned)c->mn;
	unsigned to = to_mn ? (unsigned)c->mn : (unsigned)(c->mn + c->cn);

	if (tel_node(params, &slot, &role, name, sizeof(name)) != 0)
		return -EINVAL;
	v = to_mn ? tel_of(slot)->mn_ops : tel_of(slot)->peer_msgs;
	rte_tel_data_start_dict(d);
	for (unsigned n = from; n < to && n < DTXN_MAX_NODES; n++) {
		snprintf(key, sizeof(key), "%s%u", to_mn ? "mn" : "cn", n - from);
		rte_tel_data_add_dict_u64(d, key, __atomic_load_n(&v[n], __ATOMIC_RELAXED));
	}
	return 0;
}

static int
tel_fabric(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	return tel_per_node(params, d, true);
}

static int
tel_rpc(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	return tel_per_node(params, d, false);
}

int
app_telemetry_register(const struct app_conf *c, struct app_ctl *ctl)
{
	static const struct {
		const char *cmd;
		telemetry_cb fn;
		const char *help;
	} cmds[] = {
		{ "/dtxn/info", tel_info, "Role, node, protocol, bench (pid, state of a cluster node). Parameters: node name (mnI, cnJ), default this process" },
		{ "/dtxn/stats", tel_stats, "Per worker lcore: committed, attempted, aborts (cumulative). Parameters: node name, default this process" },
		{ "/dtxn/fabric", tel_fabric, "Verbs posted to each MN (cumulative). Parameters: node name, default this process" },
		{ "/dtxn/rpc", tel_rpc, "Messages sent to each peer CN (cumulative). Parameters: node name, default this process" },
	};

	if (g_tel_conf != NULL)
		return 0;
	g_tel_conf = c;
	g_tel_ctl = ctl;
	for (unsigned i = 0; i < RTE_DIM(cmds); i++) {
		int rc = rte_telemetry_register_cmd(cmds[i].cmd, cmds[i].fn, cmds[i].help);

		if (rc != 0)
			return rc;
	}
	return 0;
}
