/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DTXN_UNIT_EAL_H
#define DTXN_UNIT_EAL_H

#include <stdint.h>

/**
 * Initialises the EAL for a unit-test binary: --no-huge --no-pci -m 512,
 * lcores 0-1 (two, as the CI machine has), a --file-prefix of its own so
 * binaries can run side by side, warnings only. Also calibrates the clock.
 *
 * @param prefix  file prefix, e.g. "ut_fabric".
 * @return 0, or -1 after printing why.
 */
int dtxn_unit_eal_init(const char *prefix);

/** @return bytes of the DPDK heap in use, every socket, plus the tables
 * dtxn_local_zalloc() maps outside it (footprint tests). */
uint64_t dtxn_unit_heap_in_use(void);

/** Releases the EAL (rte_eal_cleanup). */
void dtxn_unit_eal_fini(void);

#endif
