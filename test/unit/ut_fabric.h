/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DTXN_UT_FABRIC_H
#define DTXN_UT_FABRIC_H

/**
 * @file
 * Helpers the fabric tests share (test_fabric.c, test_conformance.c):
 * building a WR and reading a word of an MN region from its CPU.
 */

#include <stdint.h>
#include <string.h>

#include "dtxn_fabric.h"

/** Fills @p wr (not chained) with the fields every test sets. */
static inline void
ut_wr(struct dtxn_wr *wr, uint8_t op, uint64_t id, void *local, uint32_t len,
      dtxn_raddr_t raddr, uint8_t flags)
{
	memset(wr, 0, sizeof(*wr));
	wr->opcode = op;
	wr->wr_id = id;
	wr->local = local;
	wr->len = len;
	wr->raddr = raddr;
	wr->flags = flags;
}

/** @return the 8-byte word at @p off of an MN region (any alignment). */
static inline uint64_t
ut_word(const uint8_t *region, uint64_t off)
{
	uint64_t v;

	memcpy(&v, region + off, 8);
	return v;
}

#endif /* DTXN_UT_FABRIC_H */
