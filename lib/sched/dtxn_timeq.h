/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DTXN_TIMEQ_H
#define DTXN_TIMEQ_H

/**
 * @file
 * A time queue for virtual-time simulation (doc/guides/sim.md, "Simulation
 * speed"): entries ordered by (time, sequence), the sequence given in push
 * order (or taken earlier, dtxn_timeq_take_seq()), so that entries due at
 * the same time come out in the order they went in, whatever their payload
 * or address: the order a deterministic simulation needs. The sim fabric's
 * event queue and dtxn-app's agenda of simulated threads are two of them.
 *
 * A 4-ary min-heap of 24-byte entries held by value: fewer levels than a
 * binary heap, and a node's four children on two cache lines. Any correct
 * priority queue on a total order pops the same sequence, so the choice of
 * heap changes nothing a run reports.
 *
 * Memory: libc realloc, doubling; a queue starts empty (no allocation).
 * Thread-safety: none; a queue belongs to one thread.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#ifdef __cplusplus
extern "C" {
#endif

/** One entry: due at t_ns, with sequence number seq and a caller's payload. */
struct dtxn_timeq_ent {
	uint64_t t_ns;
	uint64_t seq;
	uint64_t val;
};

/** A time queue; zero-initialized is empty and valid. */
struct dtxn_timeq {
	struct dtxn_timeq_ent *h;   /**< heap array, h[0] the earliest */
	uint32_t n;                 /**< entries */
	uint32_t cap;               /**< room in h */
	uint64_t seq;               /**< the next sequence number */
};

/** Fan-out of the heap. */
#define DTXN_TIMEQ_ARITY 4u
/** First allocation, entries. */
#define DTXN_TIMEQ_INIT 1024u

/** @internal (a.t_ns, a.seq) < (b.t_ns, b.seq). */
static inline bool
dtxn_timeq_before(const struct dtxn_timeq_ent *a, const struct dtxn_timeq_ent *b)
{
	return a->t_ns < b->t_ns || (a->t_ns == b->t_ns && a->seq < b->seq);
}

/**
 * Makes room for @p extra more entries, so that the next @p extra pushes
 * cannot fail.
 * @return 0, or -ENOMEM (q unchanged).
 */
static inline int
dtxn_timeq_reserve(struct dtxn_timeq *q, uint32_t extra)
{
	uint64_t need = (uint64_t)q->n + extra;
	uint64_t cap = q->cap ? q->cap : DTXN_TIMEQ_INIT;
	struct dtxn_timeq_ent *h;

	if (need <= q->cap)
		return 0;
	while (cap < need)
		cap *= 2;
	if (cap > UINT32_MAX)
		return -ENOMEM;
	h = (struct dtxn_timeq_ent *)realloc(q->h, cap * sizeof(*h));
	if (h == NULL)
		return -ENOMEM;
	q->h = h;
	q->cap = (uint32_t)cap;
	return 0;
}

/**
 * Takes the next sequence number, for an entry queued later with
 * dtxn_timeq_push_seq(): it keeps its place among the entries pushed after
 * it, as if pushed now. A caller holding a FIFO of entries with
 * non-decreasing times (a QP's WRs) can so keep only its head queued.
 */
static inline uint64_t
dtxn_timeq_take_seq(struct dtxn_timeq *q)
{
	return q->seq++;
}

/**
 * Queues @p val due at @p t_ns with sequence number @p seq
 * (dtxn_timeq_take_seq()).
 * @return 0, or -ENOMEM (full and no memory to grow; nothing queued).
 */
static inline int
dtxn_timeq_push_seq(struct dtxn_timeq *q, uint64_t t_ns, uint64_t seq, uint64_t val)
{
	struct dtxn_timeq_ent e = { .t_ns = t_ns, .seq = seq, .val = val };
	struct dtxn_timeq_ent *h;
	uint32_t i;

	if (q->n == q->cap && dtxn_timeq_reserve(q, 1) != 0)
		return -ENOMEM;
	h = q->h;
	i = q->n++;
	while (i > 0) {
		uint32_t p = (i - 1) / DTXN_TIMEQ_ARITY;

		if (!dtxn_timeq_before(&e, &h[p]))
			break;
		h[i] = h[p];
		i = p;
	}
	h[i] = e;
	return 0;
}

/**
 * Queues @p val due at @p t_ns, after every entry already queued for the
 * same time.
 * @return 0, or -ENOMEM (full and no memory to grow; nothing queued, the
 *   sequence number not used).
 */
static inline int
dtxn_timeq_push(struct dtxn_timeq *q, uint64_t t_ns, uint64_t val)
{
	int rc = dtxn_timeq_push_seq(q, t_ns, q->seq, val);

	if (rc == 0)
		q->seq++;
	return rc;
}

/** The earliest entry, or NULL when empty. Valid until the next push or pop. */
static inline const struct dtxn_timeq_ent *
dtxn_timeq_top(const struct dtxn_timeq *q)
{
	return q->n > 0 ? &q->h[0] : NULL;
}

/**
 * The entry that pops after the earliest if nothing is pushed meanwhile
 * (the least of the root's children), or NULL with fewer than two entries:
 * what a caller may prefetch one step ahead. Valid until the next push or pop.
 */
static inline const struct dtxn_timeq_ent *
dtxn_timeq_second(const struct dtxn_timeq *q)
{
	uint32_t end = q->n < 1 + DTXN_TIMEQ_ARITY ? q->n : 1 + DTXN_TIMEQ_ARITY, m = 1;

	if (q->n < 2)
		return NULL;
	for (uint32_t k = 2; k < end; k++)
		if (dtxn_timeq_before(&q->h[k], &q->h[m]))
			m = k;
	return &q->h[m];
}

/** Due time of the earliest entry, or UINT64_MAX when empty. */
static inline uint64_t
dtxn_timeq_top_ns(const struct dtxn_timeq *q)
{
	return q->n > 0 ? q->h[0].t_ns : UINT64_MAX;
}

/** Removes the earliest entry (the queue must not be empty). */
static inline void
dtxn_timeq_pop(struct dtxn_timeq *q)
{
	struct dtxn_timeq_ent *h = q->h, last = h[--q->n];
	uint32_t n = q->n, i = 0, c;

	while ((c = DTXN_TIMEQ_ARITY * i + 1) < n) {
		uint32_t end = n - c < DTXN_TIMEQ_ARITY ? n : c + DTXN_TIMEQ_ARITY, m = c;

		for (uint32_t k = c + 1; k < end; k++)
			if (dtxn_timeq_before(&h[k], &h[m]))
				m = k;
		if (!dtxn_timeq_before(&h[m], &last))
			break;
		h[i] = h[m];
		i = m;
	}
	if (n > 0)
		h[i] = last;
}

/** Frees the queue's memory; it is empty (and valid) after. */
static inline void
dtxn_timeq_fini(struct dtxn_timeq *q)
{
	free(q->h);
	q->h = NULL;
	q->n = q->cap = 0;
}

#ifdef __cplusplus
}
#endif

#endif /* DTXN_TIMEQ_H */
