/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * INI files (rte_cfgfile) and the checks that need no EAL: every name
 * resolved, every file readable, every benchmark option parsed.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <rte_common.h>
#include <rte_string_fns.h>

#include "dtxn_bench.h"
#include "dtxn_fabric_driver.h"
#include "dtxn_ini.h"
#include "dtxn_txn.h"
#include "app.h"

int
app_config_load(struct app_conf *c, const char *path)
{
	static const char *const sections[] = { "dtxn", "bench", NULL };
	struct dtxn_ini *ini;
	char err[APP_ORIGIN_MAX];
	int rc = -1;

	ini = dtxn_ini_load(path, sections, err, sizeof(err));
	if (ini == NULL) {
		app_err("--config %s", err);
		return -1;
	}
	for (unsigned i = 0; i < dtxn_ini_count(ini); i++) {
		const struct dtxn_ini_entry *e = dtxn_ini_at(ini, i);
		char origin[APP_ORIGIN_MAX];
		char name[DTXN_INI_NAME_MAX + 1];

		snprintf(origin, sizeof(origin), "%.4000s:%u: %s", path, e->line, e->name);
		strlcpy(name, e->name, sizeof(name));
		for (char *p = name; *p; p++)
			if (*p == '-')
				*p = '_';
		if (strcmp(name, "config") == 0) {
			app_err("%s: an INI file cannot include another", origin);
			goto out;
		}
		if (app_conf_set(c, name, e->value, origin) != 0)
			goto out;
	}
	rc = 0;
out:
	dtxn_ini_free(ini);
	return rc;
}

/* The i-th folder dtxn's config files are searched in: $DTXN_CONFIG_DIR,
 * the source tree's config/, ../share/dtxn/config beside the binary.
 * @return 0 and the folder in @p out, or -ENOENT past the last one. */
static int
config_root(unsigned i, char *out, size_t len)
{
	const char *env = getenv("DTXN_CONFIG_DIR");
	char exe[PATH_MAX], *slash;
	ssize_t n;

	switch (i) {
	case 0:
		snprintf(out, len, "%s", env != NULL ? env : "");
		return 0;
	case 1:
		snprintf(out, len, "%s", DTXN_SRC_CONFIG_DIR);
		return 0;
	case 2:
		out[0] = '\0';
		n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (n <= 0)
			return 0;
		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash != NULL) {
			*slash = '\0';
			snprintf(out, len, "%.*s/../share/dtxn/config", (int)(len - 32), exe);
		}
		return 0;
	default:
		return -ENOENT;
	}
}

int
app_config_find(const char *kind, const char *name, char *out, size_t len)
{
	char dir[PATH_MAX];

	for (unsigned i = 0; config_root(i, dir, sizeof(dir)) == 0; i++) {
		int n = snprintf(out, len, "%s/%s/%s.ini", dir, kind, name);

		if (dir[0] != '\0' && n > 0 && (size_t)n < len && access(out, R_OK) == 0)
			return 0;
	}
	return -ENOENT;
}

/* The first folder of the search (app_config_find()) that has @p kind/. */
static int
config_dir(const char *kind, char *out, size_t len)
{
	char dir[PATH_MAX];

	for (unsigned i = 0; config_root(i, dir, sizeof(dir)) == 0; i++) {
		int n = snprintf(out, len, "%s/%s", dir, kind);

		if (dir[0] != '\0' && n > 0 && (size_t)n < len && access(out, R_OK | X_OK) == 0)
			return 0;
	}
	return -ENOENT;
}

static int
ini_filter(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return d->d_name[0] != '.' && n > 4 && strcmp(d->d_name + n - 4, ".ini") == 0;
}

void
app_config_list(const char *kind, char *buf, size_t len)
{
	struct dirent **ents = NULL;
	char dir[PATH_MAX];
	size_t used = 0;
	int n;

	if (len == 0)
		return;
	buf[0] = '\0';
	if (config_dir(kind, dir, sizeof(dir)) != 0)
		return;
	n = scandir(dir, &ents, ini_filter, alphasort);
	for (int i = 0; i < n; i++) {
		int w = snprintf(buf + used, len - used, "%s%.*s", used ? "," : "",
				 (int)strlen(ents[i]->d_name) - 4, ents[i]->d_name);

		if (w > 0 && (size_t)w < len - used)
			used += (size_t)w;
		free(ents[i]);
	}
	free(ents);
}

void
app_names(const char *what, char *buf, size_t len)
{
	char raw[512];
	size_t used = 0;

	if (strcmp(what, "bench") == 0)
		dtxn_bench_list(raw, sizeof(raw));
	else if (strcmp(what, "protocol") == 0)
		dtxn_cc_list(raw, sizeof(raw));
	else if (strcmp(what, "fabric") == 0)
		dtxn_fabric_driver_list(raw, sizeof(raw));
	else
		app_config_list(what, raw, sizeof(raw));
	/* "a,b,c" -> "a, b, c" */
	for (const char *p = raw; *p != '\0' && used + 3 < len; p++) {
		buf[used++] = *p;
		if (*p == ',')
			buf[used++] = ' ';
	}
	buf[used] = '\0';
}

int
app_nic_resolve(const char *opt, const char *val, char *path, size_t len)
{
	struct dtxn_nic_model m;
	char err[APP_ORIGIN_MAX];

	path[0] = '\0';
	if (val[0] == '\0' || strcmp(val, "none") == 0)
		return 0;
	if (app_preset_resolve(opt, "nic", val, path, len) != 0)
		return -1;
	if (dtxn_nic_model_load(path, &m, err, sizeof(err)) != 0) {
		app_err("--%s: %s", opt, err);
		return -1;
	}
	return 0;
}

int
app_out_path_check(const char *opt, const char *path)
{
	const char *base = strrchr(path, '/');
	char dir[PATH_MAX];
	struct stat st;
	int fd;

	base = base == NULL ? path : base + 1;
	if (base[0] == '\0' || strcmp(base, ".") == 0 || strcmp(base, "..") == 0) {
		app_err("%s %s: names a directory, not a file", opt, path);
		return -1;
	}
	if (strlen(base) > NAME_MAX) {
		app_err("%s: file name longer than %d characters", opt, NAME_MAX);
		return -1;
	}
	/* "f" -> ".", "/f" -> "/", "d/f" -> "d" */
	snprintf(dir, sizeof(dir), "%.*s", base == path ? 1 : RTE_MAX((int)(base - path) - 1, 1),
		 base == path ? "." : path);
	if (stat(dir, &st) != 0) {
		app_err("%s %s: directory %s: %s", opt, path, dir, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		app_err("%s %s: %s is not a directory", opt, path, dir);
		return -1;
	}
	if (stat(path, &st) == 0) {
		if (S_ISDIR(st.st_mode)) {
			app_err("%s %s: is a directory", opt, path);
			return -1;
		}
		/* opened for writing, not truncated: access() says yes to root
		 * on a read-only or special file system */
		fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd < 0) {
			app_err("%s %s: %s", opt, path, strerror(errno));
			return -1;
		}
		close(fd);
	} else if (errno != ENOENT) {
		app_err("%s %s: %s", opt, path, strerror(errno));
		return -1;
	} else {
		/* the file itself, created and removed: a directory root may
		 * "write" (access()) where no file can be made, e.g. /proc */
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd < 0) {
			app_err("%s %s: cannot create a file in %s: %s", opt, path, dir,
				strerror(errno));
			return -1;
		}
		close(fd);
		unlink(path);
	}
	return 0;
}

/* --out and --history: both checked now, so that a run never ends unable
 * to save what it measured. */
static int
check_outputs(const struct app_conf *c)
{
	if (c->out[0] != '\0' && app_out_path_check("--out", c->out) != 0)
		return -1;
	if (c->history[0] != '\0' && app_out_path_check("--history", c->history) != 0)
		return -1;
	if (c->out[0] != '\0' && strcmp(c->out, c->history) == 0) {
		app_err("--history %s: the same file as --out", c->history);
		return -1;
	}
	if (c->series_out[0] == '\0')
		return 0;
	if (app_is_sim(c)) {
		app_err("--series-out: a wall-clock file for shm runs; a simulated run's intervals are in --out");
		return -1;
	}
	if (app_out_path_check("--series-out", c->series_out) != 0)
		return -1;
	if (strcmp(c->series_out, c->out) == 0 || strcmp(c->series_out, c->history) == 0) {
		app_err("--series-out %s: the same file as --out or --history", c->series_out);
		return -1;
	}
	return 0;
}

/* Parses every benchmark option into a scratch conf, so a bad value is
 * reported before the EAL starts. */
static int
check_bench_values(const struct app_conf *c, const struct dtxn_bench_ops *bops)
{
	void *scratch = calloc(1, bops->conf_size ? bops->conf_size : 1);
	char err[256];
	int rc = 0;

	if (scratch == NULL) {
		app_err("out of memory");
		return -1;
	}
	for (unsigned i = 0; i < c->n_bench_opts && rc == 0; i++)
		for (unsigned k = 0; k < bops->n_opts; k++)
			if (strcmp(bops->opts[k].name, c->bench_opts[i].name) == 0 &&
			    dtxn_opt_set(&bops->opts[k], scratch, c->bench_opts[i].value, err,
					 sizeof(err)) != 0) {
				if (strncmp(c->bench_opts[i].origin, "--", 2) != 0) /* the INI */
					app_err("%s: %s", c->bench_opts[i].origin, err);
				else
					app_err("%s", err);
				rc = -1;
				break;
			}
	free(scratch);
	return rc;
}

int
app_control_validate(struct app_conf *c)
{
	bool split = strcmp(c->role, "mn") == 0 || strcmp(c->role, "cn") == 0;

	if (c->control[0] == '\0') {
		snprintf(c->control, sizeof(c->control), "%s",
			 split && strcmp(c->fabric, "shm") != 0 ? "fabric" : "shared");
		return 0;
	}
	if (strcmp(c->control, "fabric") != 0 && strcmp(c->control, "shared") != 0) {
		app_err("--control: unknown control plane '%s' (fabric, shared)", c->control);
		return -1;
	}
	if (!split) {
		app_err("--control %s: only with --role mn|cn (one node per process)", c->control);
		return -1;
	}
	if (strcmp(c->control, "shared") == 0 && strcmp(c->fabric, "shm") != 0) {
		app_err("--control shared: only on --fabric shm (the processes of --fabric %s share no memory)",
			c->fabric);
		return -1;
	}
	return 0;
}

/* --placement: table (default) or key. */
static int
app_placement_validate(struct app_conf *c)
{
	enum dtxn_placement p;

	if (c->placement[0] == '\0')
		snprintf(c->placement, sizeof(c->placement), "table");
	if (dtxn_placement_parse(c->placement, &p) != 0) {
		app_err("--placement: unknown placement '%s' (table, key)", c->placement);
		return -1;
	}
	return 0;
}

int
app_validate(struct app_conf *c)
{
	const struct dtxn_bench_ops *bops;
	char names[256];
	int iso;

	if (app_sim_validate(c) != 0) /* cluster.c: --cluster fills what was not given */
		return -1;
	/* the same node limits on every fabric */
	if (c->mn + c->cn > DTXN_MAX_NODES) {
		app_err("--cn %" PRIu64 ": %" PRIu64 " MNs + %" PRIu64 " CNs is more than %u nodes",
			c->cn, c->mn, c->cn, DTXN_MAX_NODES);
		return -1;
	}
	/* node masks of 64 bits: the real fabrics and multi-process roles */
	if (c->mn + c->cn > DTXN_MASK_NODES && strcmp(c->fabric, "sim") != 0) {
		app_err("--cn %" PRIu64 ": %" PRIu64 " MNs + %" PRIu64 " CNs is more than %u nodes, which only --fabric sim runs",
			c->cn, c->mn, c->cn, DTXN_MASK_NODES);
		return -1;
	}
	if (c->cn * c->threads * c->coroutines > UINT32_MAX / 2) {
		app_err("--coroutines: %" PRIu64 " CNs x %" PRIu64 " threads x %" PRIu64 " coroutines is too many coordinators",
			c->cn, c->threads, c->coroutines);
		return -1;
	}
	if (app_method_validate(c) != 0) /* build.c: --warmup, --interval, --retry */
		return -1;
	if (app_role_validate(c) != 0) /* role.c: --role, --node, the cluster file's [nodes] */
		return -1;
	app_lease_default(c); /* fault.c: failure detection on by default across processes */
	if (app_control_validate(c) != 0) /* --control */
		return -1;
	if (app_placement_validate(c) != 0) /* --placement */
		return -1;
	if (c->recovery_pass && (strcmp(c->role, "cn") != 0 ||
				 (strcmp(c->fabric, "shm") != 0 && strcmp(c->fabric, "ucx") != 0))) {
		app_err("--recovery-pass: only with --role cn on --fabric shm or ucx (mlx5's RNICs cannot refuse the dead CNs' identities it takes over: doc/guides/cluster.md, \"The recovery pass\")");
		return -1;
	}
	if (c->addr_prewarm && strcmp(c->role, "all") != 0) {
		app_err("--addr-prewarm: only with --role all (a CN fills its address caches from the MN regions of its own process)");
		return -1;
	}
	bops = dtxn_bench_find(c->bench);
	if (bops == NULL) {
		app_names("bench", names, sizeof(names));
		app_err("--bench: unknown benchmark '%s' (available: %s)", c->bench, names);
		return -1;
	}
	iso = dtxn_isolation_parse(c->isolation);
	if (iso < 0) {
		app_err("--isolation: unknown isolation level '%s' (sr, si)", c->isolation);
		return -1;
	}
	switch (dtxn_cc_supports(c->protocol, (enum dtxn_isolation)iso)) {
	case 1:
		break;
	case 0:
		app_err("--isolation %s: protocol %s does not support it", c->isolation,
			c->protocol);
		return -1;
	default:
		app_names("protocol", names, sizeof(names));
		app_err("--protocol: unknown protocol '%s' (available: %s)", c->protocol, names);
		return -1;
	}
	if (c->cc_opts[0] != '\0') {
		char msg[200];

		if (dtxn_cc_check_options(c->protocol, c->cc_opts, msg, sizeof(msg)) != 0) {
			app_err("--cc-opts: %s", msg);
			return -1;
		}
	}
	if (dtxn_fabric_driver_find(c->fabric) == NULL) {
		app_names("fabric", names, sizeof(names));
		app_err("--fabric: unknown fabric driver '%s' (available: %s)", c->fabric, names);
		return -1;
	}
	if (strcmp(c->fabric, "mlx5") != 0) {
		static const char *const rdma_opts[][2] = {
			{ "dev", "--dev" }, { "port", "--port" }, { "gid_index", "--gid-index" },
		};

		for (unsigned i = 0; i < RTE_DIM(rdma_opts); i++)
			if (app_conf_given(c, rdma_opts[i][0])) {
				app_err("%s: only with --fabric mlx5 (doc/guides/mlx5.md)",
					rdma_opts[i][1]);
				return -1;
			}
	}
	if (c->replicas > c->mn) {
		app_err("--replicas %" PRIu64 ": more copies than memory nodes (--mn %" PRIu64 ")",
			c->replicas, c->mn);
		return -1;
	}
	{
		char msg[200];

		uint64_t n_coords = c->cn * c->threads * c->coroutines + app_agent_coords(c);
		uint32_t max = dtxn_cc_max_coords(c->protocol);

		if (dtxn_cc_check_cluster(c->protocol, c->cc_opts, (unsigned)c->mn, (unsigned)c->cn,
					  c->fabric, msg, sizeof(msg)) != 0) {
			app_err("--cc-opts: %s", msg);
			return -1;
		}
		if (max != 0 && n_coords > max) {
			app_err("--protocol %s runs at most %u coordinators; --cn x --threads x "
				"--coroutines (+ recovery agents) gives %" PRIu64,
				c->protocol, max, n_coords);
			return -1;
		}
	}
	for (unsigned i = 0; i < c->n_bench_opts; i++) {
		bool found = false;
		for (unsigned k = 0; k < bops->n_opts; k++)
			if (strcmp(bops->opts[k].name, c->bench_opts[i].name) == 0)
				found = true;
		if (!found) {
			app_err("%s: not an option of benchmark %s", c->bench_opts[i].origin,
				bops->name);
			return -1;
		}
	}
	if (check_bench_values(c, bops) != 0)
		return -1;
	if (app_check_validate(c) != 0) /* check.c: --check, --debug-weaken */
		return -1;
	if (app_fault_validate(c) != 0) /* fault.c: --fault, --lease-ms */
		return -1;
	if (app_table_mn_check(c->table_mn) != 0) /* table_mn.c: --table-mn */
		return -1;
	if (check_outputs(c) != 0)
		return -1;
	return app_nic_resolve("nic", c->nic, c->nic_path, sizeof(c->nic_path));
}
