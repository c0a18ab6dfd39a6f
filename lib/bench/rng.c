/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Seeded generators shared by every benchmark: xoshiro256** (Blackman and
 * Vigna) seeded through splitmix64, Lemire's unbiased bounded integers,
 * Gray et al.'s zipf generator (the one YCSB and MICA use) and the TPC-C /
 * TATP NURand function. No global state: every call takes its generator.
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "bench_private.h"
#include "dtxn_bench.h"

/* splitmix64: expands one 64-bit seed into the four state words. */
static uint64_t
rng_splitmix64(uint64_t *x)
{
	uint64_t z = (*x += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

static inline uint64_t
rng_rotl(uint64_t v, unsigned k)
{
	return (v << k) | (v >> (64 - k));
}

void
dtxn_rng_seed(struct dtxn_rng *r, uint64_t seed)
{
	uint64_t x = seed;

	for (unsigned i = 0; i < 4; i++)
		r->s[i] = rng_splitmix64(&x);
	/* splitmix64 never yields four zero words in a row, but be explicit. */
	if ((r->s[0] | r->s[1] | r->s[2] | r->s[3]) == 0)
		r->s[0] = 1;
}

uint64_t
dtxn_rng_next(struct dtxn_rng *r)
{
	uint64_t *s = r->s;
	const uint64_t out = rng_rotl(s[1] * 5, 7) * 9;
	const uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rng_rotl(s[3], 45);
	return out;
}

uint64_t
dtxn_rng_range(struct dtxn_rng *r, uint64_t n)
{
	if (n == 0)
		return 0; /* documented as n > 0; stay defined anyway */

	/* Lemire, "Fast random integer generation in an interval" (2019). */
	unsigned __int128 m = (unsigned __int128)dtxn_rng_next(r) * n;
	uint64_t low = (uint64_t)m;

	if (low < n) {
		const uint64_t thresh = (0 - n) % n;

		while (low < thresh) {
			m = (unsigned __int128)dtxn_rng_next(r) * n;
			low = (uint64_t)m;
		}
	}
	return (uint64_t)(m >> 64);
}

uint64_t
dtxn_rng_between(struct dtxn_rng *r, uint64_t lo, uint64_t hi)
{
	if (hi <= lo)
		return lo;
	if (lo == 0 && hi == UINT64_MAX)
		return dtxn_rng_next(r);
	return lo + dtxn_rng_range(r, hi - lo + 1);
}

double
dtxn_rng_double(struct dtxn_rng *r)
{
	/* The top 53 bits, scaled by 2^-53: uniform over [0, 1). */
	return (double)(dtxn_rng_next(r) >> 11) * 0x1.0p-53;
}

/* ------------------------------------------------------------------ */
/* Zipf                                                               */
/* ------------------------------------------------------------------ */

/* Terms summed exactly; above this the tail comes from Euler-Maclaurin. */
#define ZIPF_EXACT_TERMS (UINT64_C(1) << 20)

/*
 * zeta(n, theta) = sum_{i=1..n} i^-theta. Exact for n <= 2^20; beyond,
 * the first 2^20 terms are summed and the rest is the Euler-Maclaurin
 * expansion of the tail (integral, end-point and first-derivative terms;
 * the next term is below 1e-30 of the sum), so that start-up stays in
 * milliseconds even for 2^40 keys.
 */
static double
zipf_zeta(uint64_t n, double theta)
{
	const uint64_t m = n < ZIPF_EXACT_TERMS ? n : ZIPF_EXACT_TERMS;
	double sum = 0.0;

	/* Smallest terms first: less rounding error. */
	for (uint64_t i = m; i >= 1; i--)
		sum += pow((double)i, -theta);
	if (n == m)
		return sum;

	const double dm = (double)m, dn = (double)n;
	const double fm = pow(dm, -theta), fn = pow(dn, -theta);
	const double integral = (pow(dn, 1.0 - theta) - pow(dm, 1.0 - theta)) / (1.0 - theta);
	const double d1m = -theta * fm / dm, d1n = -theta * fn / dn;

	return sum + integral + (fn - fm) / 2.0 + (d1n - d1m) / 12.0;
}

int
dtxn_zipf_init(struct dtxn_zipf *z, uint64_t n, double theta)
{
	if (z == NULL || n == 0 || !isfinite(theta) || theta < 0.0 || theta >= 1.0)
		return -EINVAL;

	z->n = n;
	z->theta = theta;
	if (theta == 0.0) {
		/* Uniform: dtxn_zipf_next() takes the plain range path. */
		z->zetan = (double)n;
		z->zeta2 = 2.0;
		z->alpha = 1.0;
		z->eta = 0.0;
		return 0;
	}
	z->zetan = zipf_zeta(n, theta);
	z->zeta2 = 1.0 + pow(0.5, theta);
	z->alpha = 1.0 / (1.0 - theta);
	/* For n <= 2 the two first-rank cases cover every draw. */
	z->eta = n <= 2 ? 0.0 :
		(1.0 - pow(2.0 / (double)n, 1.0 - theta)) / (1.0 - z->zeta2 / z->zetan);
	return 0;
}

uint64_t
dtxn_zipf_next(const struct dtxn_zipf *z, struct dtxn_rng *r)
{
	if (z->n <= 1)
		return 0;
	if (z->theta == 0.0)
		return dtxn_rng_range(r, z->n);

	const double u = dtxn_rng_double(r);
	const double uz = u * z->zetan;

	if (uz < 1.0)
		return 0;
	if (uz < z->zeta2)
		return 1;

	const uint64_t rank = (uint64_t)((double)z->n * pow(z->eta * u - z->eta + 1.0, z->alpha));

	return rank < z->n ? rank : z->n - 1;
}

uint64_t
dtxn_zipf_next_distinct(const struct dtxn_zipf *z, struct dtxn_rng *r, const uint64_t *taken,
			unsigned n_taken)
{
	uint64_t rank = dtxn_zipf_next(z, r);

	for (unsigned k = 0; k < DTXN_ZIPF_MAX_REDRAWS && bench_id_taken(taken, n_taken, rank); k++)
		rank = dtxn_zipf_next(z, r);
	if (n_taken >= z->n)
		return rank; /* nothing is free: documented */
	while (bench_id_taken(taken, n_taken, rank))
		rank = rank + 1 < z->n ? rank + 1 : 0;
	return rank;
}

/* ------------------------------------------------------------------ */
/* NURand                                                             */
/* ------------------------------------------------------------------ */

uint64_t
dtxn_nurand(struct dtxn_rng *r, uint64_t A, uint64_t x, uint64_t y, uint64_t C)
{
	if (y < x)
		return x;

	const uint64_t span = y - x + 1;
	const uint64_t a = dtxn_rng_between(r, 0, A);
	const uint64_t b = dtxn_rng_between(r, x, y);

	return span == 0 ? ((a | b) + C) : (((a | b) + C) % span) + x;
}
