/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DTXN_FABRIC_PRIVATE_H
#define DTXN_FABRIC_PRIVATE_H

/**
 * @file
 * lib/fabric internals: the log type shared by fabric.c and nic_model.c.
 * Never installed, never included outside lib/fabric.
 */

#include <rte_log.h>

extern int dtxn_fabric_logtype;

#define FABRIC_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_##level, dtxn_fabric_logtype, "dtxn.fabric: " fmt "\n", ##__VA_ARGS__)

#endif /* DTXN_FABRIC_PRIVATE_H */
