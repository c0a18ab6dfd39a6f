/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * INI files (rte_cfgfile) and the checks that need no EAL: every name
 * resolved, every file readable, every benchmark option parsed.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cfgfile.h>
#include <rte_string_fns.h>

#include "dtxn_bench.h"
#include "dtxn_fabric_driver.h"
#include "dtxn_txn.h"
#include "app.h"

/* Reads a whole INI file and checks that every line is a comment, a
 * section or key = value, because rte_cfgfile_load() accepts some broken
 * lines silently and refuses others without saying which. */
static int
ini_check_syntax(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[1024];
	unsigned lineno = 0;
	bool in_section = false;

	if (f == NULL) {
		app_err("%s: %s", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		char *p = line;

		lineno++;
		if (strchr(line, '\n') == NULL && !feof(f)) {
			app_err("%s:%u: line too long", path, lineno);
			fclose(f);
			return -1;
		}
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\0' || *p == '\n' || *p == '\r' || *p == ';' || *p == '#')
			continue;
		if (*p == '[') {
			if (strchr(p, ']') == NULL) {
				app_err("%s:%u: malformed section header", path, lineno);
				fclose(f);
				return -1;
			}
			in_section = true;
			continue;
		}
		if (strchr(p, '=') == NULL || *p == '=') {
			app_err("%s:%u: expected 'key = value'", path, lineno);
			fclose(f);
			return -1;
		}
		if (!in_section) {
			app_err("%s:%u: key outside a section ([dtxn] or [bench])", path, lineno);
			fclose(f);
			return -1;
		}
	}
	fclose(f);
	return 0;
}

int
app_config_load(struct app_conf *c, const char *path)
{
	struct rte_cfgfile *cfg;
	char sections[8][CFG_NAME_LEN];
	char *secp[8];
	int n, rc = -1;

	if (access(path, R_OK) != 0) {
		app_err("--config %s: %s", path, strerror(errno));
		return -1;
	}
	if (ini_check_syntax(path) != 0)
		return -1;
	cfg = rte_cfgfile_load(path, 0);
	if (cfg == NULL) {
		app_err("%s: malformed INI file", path);
		return -1;
	}
	for (int i = 0; i < 8; i++)
		secp[i] = sections[i];
	n = rte_cfgfile_num_sections(cfg, NULL, 0);
	if (n > 8) {
		app_err("%s: too many sections (only [dtxn] and [bench] are read)", path);
		goto out;
	}
	rte_cfgfile_sections(cfg, secp, 8);
	for (int s = 0; s < n; s++) {
		struct rte_cfgfile_entry entries[64];
		int ne;

		if (strcmp(sections[s], "dtxn") != 0 && strcmp(sections[s], "bench") != 0) {
			app_err("%s: unknown section [%s] (expected [dtxn] or [bench])", path,
				sections[s]);
			goto out;
		}
		ne = rte_cfgfile_section_entries(cfg, sections[s], entries, 64);
		if (ne < 0) {
			app_err("%s: cannot read section [%s]", path, sections[s]);
			goto out;
		}
		for (int e = 0; e < ne; e++) {
			char origin[APP_ORIGIN_MAX];
			char name[CFG_NAME_LEN];

			snprintf(origin, sizeof(origin), "%s: %.*s", path, CFG_NAME_LEN - 1,
				 entries[e].name);
			strlcpy(name, entries[e].name, sizeof(name));
			for (char *p = name; *p; p++)
				if (*p == '-')
					*p = '_';
			if (strcmp(name, "config") == 0) {
				app_err("%s: an INI file cannot include another", origin);
				goto out;
			}
			if (app_conf_set(c, name, entries[e].value, origin) != 0)
				goto out;
		}
	}
	rc = 0;
out:
	rte_cfgfile_close(cfg);
	return rc;
}

static int
try_dir(const char *dir, const char *kind, const char *name, char *out, size_t len)
{
	int n = snprintf(out, len, "%s/%s/%s.ini", dir, kind, name);

	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	return access(out, R_OK) == 0 ? 0 : -ENOENT;
}

int
app_config_find(const char *kind, const char *name, char *out, size_t len)
{
	const char *env = getenv("DTXN_CONFIG_DIR");
	char exe[PATH_MAX], dir[PATH_MAX];
	ssize_t n;

	if (env != NULL && try_dir(env, kind, name, out, len) == 0)
		return 0;
	if (try_dir(DTXN_SRC_CONFIG_DIR, kind, name, out, len) == 0)
		return 0;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		char *slash = strrchr(exe, '/');
		if (slash != NULL) {
			*slash = '\0';
			snprintf(dir, sizeof(dir), "%.*s/../share/dtxn/config",
				 (int)(sizeof(dir) - 32), exe);
			if (try_dir(dir, kind, name, out, len) == 0)
				return 0;
		}
	}
	return -ENOENT;
}

static int
resolve_nic(struct app_conf *c)
{
	struct dtxn_nic_model m;
	char err[256];

	if (strcmp(c->nic, "none") == 0) {
		c->nic_path[0] = '\0';
		return 0;
	}
	if (strchr(c->nic, '/') != NULL || strstr(c->nic, ".ini") != NULL) {
		if (strlen(c->nic) >= sizeof(c->nic_path)) {
			app_err("--nic: path too long");
			return -1;
		}
		snprintf(c->nic_path, sizeof(c->nic_path), "%s", c->nic);
	} else if (app_config_find("nic", c->nic, c->nic_path, sizeof(c->nic_path)) != 0) {
		app_err("--nic: unknown NIC model '%s' (presets: none, cx3, cx5, cx6; or a path to an INI file)",
			c->nic);
		return -1;
	}
	if (dtxn_nic_model_load(c->nic_path, &m, err, sizeof(err)) != 0) {
		app_err("--nic: %s", err);
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
				if (strstr(c->bench_opts[i].origin, ".ini") != NULL)
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
app_validate(struct app_conf *c)
{
	const struct dtxn_bench_ops *bops;
	char names[256];
	int iso;

	if (app_sim_validate(c) != 0) /* cluster.c: --cluster fills what was not given */
		return -1;
	if (app_method_validate(c) != 0) /* build.c: --warmup, --interval, --retry */
		return -1;
	if (strcmp(c->role, "all") != 0) {
		if (strcmp(c->role, "mn") == 0 || strcmp(c->role, "cn") == 0)
			app_err("--role %s: separate MN and CN processes are not supported yet; use --role all",
				c->role);
		else
			app_err("--role: unknown role '%s' (all, mn, cn)", c->role);
		return -1;
	}
	bops = dtxn_bench_find(c->bench);
	if (bops == NULL) {
		dtxn_bench_list(names, sizeof(names));
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
		dtxn_cc_list(names, sizeof(names));
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
		app_err("--fabric: unknown fabric driver '%s' (available: shm, sim)", c->fabric);
		return -1;
	}
	if (c->replicas > c->mn) {
		app_err("--replicas %" PRIu64 ": more copies than memory nodes (--mn %" PRIu64 ")",
			c->replicas, c->mn);
		return -1;
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
	if (app_check_validate(c) != 0) /* check.c: --check, --history, --debug-weaken */
		return -1;
	return resolve_nic(c);
}
