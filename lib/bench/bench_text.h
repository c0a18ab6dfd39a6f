/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DTXN_BENCH_TEXT_H
#define DTXN_BENCH_TEXT_H

/*
 * Random text for the loaders and the procedures of lib/bench (never
 * installed): TPC-C's a-strings and n-strings (clause 4.3.2.2) and TATP's
 * upper-case and digit strings. Fields are fixed-width char arrays, not
 * NUL-terminated: a shorter string is padded with NUL bytes.
 *
 * Each character takes 16 random bits (multiply-shift), so the bias
 * between characters is below 0.1%; four characters per 64-bit draw.
 * Thread-safety: the caller owns the generator.
 */

#include <stddef.h>

#include "dtxn_bench.h"

/** Fills @p len bytes with random letters and digits [a-zA-Z0-9]. */
void bench_text_alnum(struct dtxn_rng *r, char *dst, size_t len);

/** Fills @p len bytes with random decimal digits. */
void bench_text_digits(struct dtxn_rng *r, char *dst, size_t len);

/** Fills @p len bytes with random upper-case letters [A-Z]. */
void bench_text_upper(struct dtxn_rng *r, char *dst, size_t len);

/**
 * TPC-C a-string (clause 4.3.2.2): a random length in [min, max], random
 * alphanumerics, the rest of the @p cap-byte field zeroed.
 * Requires min <= max <= cap.
 * @return the length drawn.
 */
size_t bench_text_astring(struct dtxn_rng *r, char *dst, size_t min, size_t max, size_t cap);

/** As bench_text_astring(), with digits (TPC-C n-string). */
size_t bench_text_nstring(struct dtxn_rng *r, char *dst, size_t min, size_t max, size_t cap);

/**
 * Length of a fixed-width field: the bytes before the first NUL, at most
 * @p cap.
 */
size_t bench_text_len(const char *s, size_t cap);

#endif /* DTXN_BENCH_TEXT_H */
