/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The model-file readers: NIC models (dtxn_nic_model_load(),
 * lib/fabric/nic_model.c), CPU models (dtxn_cpu_model_load(),
 * lib/sched/sched_cpu.c) and cluster presets (--cluster, applied by
 * app_sim_validate(), app/dtxn-app/cluster.c). The first input byte
 * chooses the reader (mod 3), the rest is the file.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "app.h"
#include "dtxn_fabric.h"
#include "dtxn_sched.h"
#include "fuzz_common.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct app_conf c;
	struct dtxn_nic_model nm;
	struct dtxn_cpu_model cm;
	const char *path;
	char err[256];

	if (size == 0)
		return 0;
	path = fuzz_file(data + 1, size - 1);
	switch (data[0] % 3) {
	case 0:
		(void)dtxn_nic_model_load(path, &nm, err, sizeof(err));
		break;
	case 1:
		(void)dtxn_cpu_model_load(path, &cm, err, sizeof(err));
		break;
	default:
		app_conf_defaults(&c);
		snprintf(c.fabric, sizeof(c.fabric), "sim");
		snprintf(c.cluster, sizeof(c.cluster), "%s", path);
		(void)app_sim_validate(&c);
		break;
	}
	return 0;
}
