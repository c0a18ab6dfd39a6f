/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DTXN_FUZZ_COMMON_H
#define DTXN_FUZZ_COMMON_H

/**
 * @file
 * What the libFuzzer harnesses (test/fuzz/fuzz_*.c) share: readers that
 * take a path get the input through a memfd, named /proc/self/fd/N, so
 * that no harness touches the file system; library logs are silenced
 * (the harness looks for crashes, leaks and undefined behaviour, not for
 * messages). Nothing here needs the EAL: the code under test runs before
 * rte_eal_init() in dtxn-app and dtxn-check too.
 */

#include <stddef.h>
#include <stdint.h>

/**
 * Replaces the content of the harness's memfd with @p size bytes of
 * @p data (created on first use) and returns its path.
 * Aborts if the memfd cannot be made or written (not an input problem).
 */
const char *fuzz_file(const uint8_t *data, size_t size);

/** The harness: one input of @p size bytes (libFuzzer's entry point). @return 0. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/** Once, before the first input (fuzz_common.c): silences rte_log. @return 0. */
int LLVMFuzzerInitialize(int *argc, char ***argv);

#endif /* DTXN_FUZZ_COMMON_H */
