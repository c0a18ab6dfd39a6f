/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DTXN_TEST_MASKED_CAS_REF_H
#define DTXN_TEST_MASKED_CAS_REF_H

/*
 * Reference model of the mlx5 masked compare-and-swap
 * (MLX5_OPCODE_ATOMIC_MASKED_CS, 8 B), written from its definition and
 * not from lib/fabric: the swap happens iff (old & compare_mask) ==
 * (compare & compare_mask); then new = (old & ~swap_mask) | (swap &
 * swap_mask); the old word is returned either way. test_fabric (shm) and
 * test_sim (sim) run random cases through their fabric against it.
 */
#include <stdint.h>

/** One random case: the word in memory and the WR's four operands. */
struct mcas_case {
	uint64_t word, compare, compare_mask, swap, swap_mask;
};

/** @return the word after the masked CAS of @p c. */
static inline uint64_t
mcas_ref(const struct mcas_case *c)
{
	if ((c->word & c->compare_mask) != (c->compare & c->compare_mask))
		return c->word;
	return (c->word & ~c->swap_mask) | (c->swap & c->swap_mask);
}

/* xorshift64*: a fixed sequence for every run. */
static inline uint64_t
mcas_rand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * UINT64_C(2685821657736338717);
}

/**
 * Case @p i of a run: random words and masks; every fourth case compares
 * equal on the masked bits (so both outcomes are covered), every eighth
 * uses CREST's single-bit cell masks.
 */
static inline void
mcas_case_make(uint64_t *seed, unsigned i, struct mcas_case *c)
{
	c->word = mcas_rand(seed);
	c->compare = mcas_rand(seed);
	c->compare_mask = mcas_rand(seed) & mcas_rand(seed);
	c->swap = mcas_rand(seed);
	c->swap_mask = mcas_rand(seed);
	if (i % 8 == 0) {
		c->compare_mask = UINT64_C(1) << (63 - i % 20);
		c->swap_mask = c->compare_mask;
	}
	if (i % 4 == 0)
		c->compare = (c->compare & ~c->compare_mask) | (c->word & c->compare_mask);
}

#endif /* DTXN_TEST_MASKED_CAS_REF_H */
