/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * OOCC's global lease (§III, §VII; oocc.md §1 and §4): the per-machine
 * lease word (rv, ww), the read-only skip rule, the writer's wait, and the
 * Lease Manager, which adjusts every machine's word in two phases so that
 * Property 2 (every rv <= every ww) holds throughout, on the policy of
 * Fig. 13d (at least 80% of read-only txns skip validation).
 *
 * Timing anchors (oocc.md §1, [INF]): a reader reads its word when it
 * posts its first READ and times from then to the completion of its last
 * READ; a writer reads its word once its locks are in effect (the
 * completion of its last lock round) and posts its commit WRITE no earlier
 * than ww after that. Both times are taken around the rounds, so each is
 * on the safe side. Re-reading the word at lock time is what lets the
 * manager bound the wait between its two phases: a writer that read the
 * old ww has posted its commit WRITE within the old ww of the prepare.
 */
#include <string.h>

#include <rte_common.h>

#include "oocc_private.h"

uint64_t
oocc_lease_word(uint32_t lease_ns, uint32_t offset_ns)
{
	uint32_t rv = lease_ns > offset_ns ? lease_ns - offset_ns : 0;
	uint64_t ww = (uint64_t)lease_ns + offset_ns;

	return oocc_lease_pack(rv, (uint32_t)RTE_MIN(ww, (uint64_t)UINT32_MAX));
}

uint64_t
oocc_lease_prepare(uint64_t old, uint64_t new)
{
	return oocc_lease_pack(RTE_MIN(oocc_lease_rv(old), oocc_lease_rv(new)),
			       RTE_MAX(oocc_lease_ww(old), oocc_lease_ww(new)));
}

bool
oocc_lease_skip(uint64_t first_ns, uint64_t last_ns, uint32_t rv, bool saw_intent)
{
	return !saw_intent && oocc_elapsed(first_ns, last_ns) <= rv;
}

void
oocc_ro_stats_add(struct oocc_ro_stats *s, uint64_t ns, bool skipped)
{
	uint64_t *bin = &s->bins[RTE_MIN(ns / OOCC_ADAPT_BIN_NS, (uint64_t)OOCC_ADAPT_BINS - 1)];

	/* one writer (the coordinator); the manager reads them from its lcore */
	__atomic_store_n(&s->ro, s->ro + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&s->skipped, s->skipped + skipped, __ATOMIC_RELAXED);
	__atomic_store_n(bin, *bin + 1, __ATOMIC_RELAXED);
}

uint32_t
oocc_adapt_next(const struct oocc_ro_stats *s, uint32_t cur_ns, uint32_t offset_ns,
		uint32_t min_ns, uint32_t max_ns)
{
	uint64_t want, seen = 0, p80;
	unsigned b;

	if (s->ro == 0)
		return cur_ns;
	want = (s->ro * 8 + 9) / 10; /* the 80th percentile: ceil(0.8 n) */
	for (b = 0; b < OOCC_ADAPT_BINS - 1; b++) {
		seen += s->bins[b];
		if (seen >= want)
			break;
	}
	p80 = (uint64_t)(b + 1) * OOCC_ADAPT_BIN_NS + offset_ns;
	p80 = RTE_MIN(RTE_MAX(p80, (uint64_t)min_ns), (uint64_t)max_ns);
	if (s->skipped * 10 < s->ro * 8 && p80 > cur_ns)
		return (uint32_t)p80; /* grow: fewer than 80% skip validation */
	if (cur_ns > 2 * p80)
		return (uint32_t)p80; /* shrink: far above what reads take */
	return RTE_MIN(RTE_MAX(cur_ns, min_ns), max_ns);
}

uint64_t
oocc_clock_ns(const struct dtxn_txn *t)
{
	/* the machine's own clock: skewed and drifting on a simulated cluster */
	return dtxn_node_now_ns(t->coord->worker->cn_node);
}

uint64_t
oocc_lease_word_cn(const struct dtxn_txn *t)
{
	const struct oocc_shared *sh = oocc_coord_of(t)->sh;
	unsigned idx = (unsigned)(t->coord->worker->cn_node - sh->n_mn);

	if (idx >= sh->n_cn)
		idx = 0;
	return __atomic_load_n(&sh->cn[idx].lease_word, __ATOMIC_ACQUIRE);
}

void
oocc_lease_publish(struct oocc_shared *sh, uint64_t w)
{
	for (uint16_t i = 0; i < sh->n_cn; i++)
		__atomic_store_n(&sh->cn[i].lease_word, w, __ATOMIC_RELEASE);
}

/* Sums the registered coordinators' statistics into @p sum. */
static void
lease_stats_sum(struct oocc_shared *sh, struct oocc_ro_stats *sum)
{
	memset(sum, 0, sizeof(*sum));
	for (uint32_t i = 0; i < sh->n_stats; i++) {
		const struct oocc_ro_stats *s = &sh->stats[i];

		sum->ro += __atomic_load_n(&s->ro, __ATOMIC_RELAXED);
		sum->skipped += __atomic_load_n(&s->skipped, __ATOMIC_RELAXED);
		for (unsigned b = 0; b < OOCC_ADAPT_BINS; b++)
			sum->bins[b] += __atomic_load_n(&s->bins[b], __ATOMIC_RELAXED);
	}
}

void
oocc_lease_manage(struct oocc_shared *sh, uint64_t now_ns)
{
	const struct oocc_opts *o = &sh->opts;
	struct oocc_ro_stats sum, epoch;
	uint64_t old_w, new_w;
	uint32_t next;

	if (sh->phase == 1) {
		/* commit (Table III) once every txn that read the old word is past it */
		if ((int64_t)(now_ns - sh->phase_until) < 0)
			return;
		sh->lease_ns = sh->next_ns;
		oocc_lease_publish(sh, oocc_lease_word(sh->lease_ns, o->offset_ns));
		sh->phase = 0;
		sh->adjustments++;
		OOCC_LOG(DEBUG, "lease now %u ns", sh->lease_ns);
		return;
	}
	if ((int64_t)(now_ns - sh->next_epoch) < 0)
		return;
	sh->next_epoch = now_ns + (uint64_t)o->epoch_us * 1000;
	lease_stats_sum(sh, &sum);
	epoch = sum;
	epoch.ro -= sh->last.ro;
	epoch.skipped -= sh->last.skipped;
	for (unsigned b = 0; b < OOCC_ADAPT_BINS; b++)
		epoch.bins[b] -= sh->last.bins[b];
	sh->last = sum;
	next = oocc_adapt_next(&epoch, sh->lease_ns, o->offset_ns, o->lease_min_ns,
			       o->lease_max_ns);
	if (next == sh->lease_ns)
		return;
	/* prepare (Table II): rv = min, ww = max; then wait out the larger
	 * of the old and new ww before the commit */
	old_w = oocc_lease_word(sh->lease_ns, o->offset_ns);
	new_w = oocc_lease_word(next, o->offset_ns);
	oocc_lease_publish(sh, oocc_lease_prepare(old_w, new_w));
	sh->next_ns = next;
	sh->phase = 1;
	sh->phase_until = now_ns + RTE_MAX(oocc_lease_ww(old_w), oocc_lease_ww(new_w));
}
