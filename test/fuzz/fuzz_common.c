/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared helpers of the fuzz harnesses (fuzz_common.h). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rte_log.h>

#include "fuzz_common.h"

static int g_fd = -1;
static char g_path[64];

const char *
fuzz_file(const uint8_t *data, size_t size)
{
	if (g_fd < 0) {
		g_fd = memfd_create("dtxn_fuzz", MFD_CLOEXEC);
		if (g_fd < 0) {
			perror("fuzz: memfd_create");
			abort();
		}
		snprintf(g_path, sizeof(g_path), "/proc/self/fd/%d", g_fd);
	}
	if (ftruncate(g_fd, 0) != 0 || (size != 0 && pwrite(g_fd, data, size, 0) != (ssize_t)size)) {
		perror("fuzz: memfd write");
		abort();
	}
	return g_path;
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	/* the harnesses look for crashes, leaks and UB, not for messages */
	rte_log_set_global_level(RTE_LOG_EMERG);
	return 0;
}
