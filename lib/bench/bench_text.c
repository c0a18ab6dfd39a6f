/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Random text for the loaders (bench_text.h): 16 random bits per
 * character, mapped with a multiply-shift onto the alphabet.
 */
#include <stdint.h>
#include <string.h>

#include "bench_text.h"

static const char g_alnum[] =
	"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
static const char g_upper[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
static const char g_digits[] = "0123456789";

static void
text_fill(struct dtxn_rng *r, char *dst, size_t len, const char *alpha, uint32_t n)
{
	uint64_t bits = 0;
	unsigned left = 0;

	for (size_t i = 0; i < len; i++) {
		if (left == 0) {
			bits = dtxn_rng_next(r);
			left = 4;
		}
		dst[i] = alpha[((bits & 0xffff) * n) >> 16];
		bits >>= 16;
		left--;
	}
}

void
bench_text_alnum(struct dtxn_rng *r, char *dst, size_t len)
{
	text_fill(r, dst, len, g_alnum, sizeof(g_alnum) - 1);
}

void
bench_text_digits(struct dtxn_rng *r, char *dst, size_t len)
{
	text_fill(r, dst, len, g_digits, sizeof(g_digits) - 1);
}

void
bench_text_upper(struct dtxn_rng *r, char *dst, size_t len)
{
	text_fill(r, dst, len, g_upper, sizeof(g_upper) - 1);
}

size_t
bench_text_astring(struct dtxn_rng *r, char *dst, size_t min, size_t max, size_t cap)
{
	size_t len = (size_t)dtxn_rng_between(r, min, max);

	bench_text_alnum(r, dst, len);
	memset(dst + len, 0, cap - len);
	return len;
}

size_t
bench_text_nstring(struct dtxn_rng *r, char *dst, size_t min, size_t max, size_t cap)
{
	size_t len = (size_t)dtxn_rng_between(r, min, max);

	bench_text_digits(r, dst, len);
	memset(dst + len, 0, cap - len);
	return len;
}

size_t
bench_text_len(const char *s, size_t cap)
{
	const char *z = memchr(s, '\0', cap);

	return z == NULL ? cap : (size_t)(z - s);
}
