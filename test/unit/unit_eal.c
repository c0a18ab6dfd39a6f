/* SPDX-License-Identifier: BSD-3-Clause */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include "dtxn_sched.h"
#include "unit_eal.h"

int
dtxn_unit_eal_init(const char *prefix)
{
	char pfx[64];
	snprintf(pfx, sizeof(pfx), "--file-prefix=%s", prefix);
	char *argv[] = { "unit", "--no-huge", "--no-pci", "-m", "512", "-l", "0-1",
			 pfx, "--log-level=*:warning", NULL };
	int argc = (int)(sizeof(argv) / sizeof(argv[0])) - 1;

	if (rte_eal_init(argc, argv) < 0) {
		fprintf(stderr, "unit: rte_eal_init failed: %s\n", rte_strerror(rte_errno));
		return -1;
	}
	if (dtxn_clock_init() != 0) {
		fprintf(stderr, "unit: dtxn_clock_init failed\n");
		return -1;
	}
	return 0;
}

/* Removes the EAL's runtime folder (/var/run/dpdk/<prefix>: its config
 * and fbarray files), which rte_eal_cleanup() leaves behind: every run
 * removes its own (they once filled a disk). */
static void
unit_runtime_dir_remove(const char *dir)
{
	char path[PATH_MAX];
	struct dirent *e;
	DIR *d = opendir(dir);

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) < sizeof(path))
			(void)unlink(path);
	}
	closedir(d);
	(void)rmdir(dir);
}

void
dtxn_unit_eal_fini(void)
{
	char dir[PATH_MAX];

	snprintf(dir, sizeof(dir), "%s", rte_eal_get_runtime_dir());
	rte_eal_cleanup();
	unit_runtime_dir_remove(dir);
}

uint64_t
dtxn_unit_heap_in_use(void)
{
	struct rte_malloc_socket_stats st;
	uint64_t n = 0;

	for (unsigned i = 0; i < rte_socket_count(); i++)
		if (rte_malloc_get_socket_stats(rte_socket_id_by_idx(i), &st) == 0)
			n += st.heap_allocsz_bytes;
	return n + dtxn_local_bytes();
}
