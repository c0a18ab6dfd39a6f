/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sim driver: the global event queue, a binary min-heap of events by value,
 * ordered by (virtual time, sequence number). Sequence numbers are given in
 * push order, so events due at the same time run in the order they were
 * created: deterministic, whatever the addresses of the objects involved.
 *
 * Room is reserved at post time for both events of every WR (its effect and
 * its completion), so that an event handler never fails to push.
 */
#include <errno.h>

#include <rte_common.h>
#include <rte_malloc.h>

#include "sim_private.h"

#define SIM_HEAP_INIT 1024

static inline bool
ev_before(const struct sim_event *a, const struct sim_event *b)
{
	return a->t_ns < b->t_ns || (a->t_ns == b->t_ns && a->seq < b->seq);
}

/* Makes room for @p extra more events. 0 or -ENOMEM. */
int
sim_event_reserve(struct sim_fabric *sf, uint32_t extra)
{
	uint64_t need = (uint64_t)sf->heap_n + extra;
	uint64_t cap = sf->heap_cap ? sf->heap_cap : SIM_HEAP_INIT;
	struct sim_event *h;

	if (need <= sf->heap_cap)
		return 0;
	while (cap < need)
		cap *= 2;
	if (cap > UINT32_MAX)
		return -ENOMEM;
	h = rte_realloc(sf->heap, cap * sizeof(*h), 0);
	if (h == NULL)
		return -ENOMEM;
	sf->heap = h;
	sf->heap_cap = (uint32_t)cap;
	return 0;
}

int
sim_event_push(struct sim_fabric *sf, uint64_t t_ns, uint8_t kind, uint32_t qp_id,
	       uint32_t wqe)
{
	struct sim_event ev = {
		.t_ns = t_ns, .seq = sf->ev_seq++, .qp_id = qp_id, .wqe = wqe, .kind = kind,
	};
	struct sim_event *h;
	uint32_t i;

	if (sf->heap_n == sf->heap_cap && sim_event_reserve(sf, 1) != 0)
		return -ENOMEM;
	h = sf->heap;
	i = sf->heap_n++;
	while (i > 0) {
		uint32_t p = (i - 1) / 2;

		if (!ev_before(&ev, &h[p]))
			break;
		h[i] = h[p];
		i = p;
	}
	h[i] = ev;
	return 0;
}

bool
sim_event_pop_due(struct sim_fabric *sf, uint64_t now_ns, struct sim_event *ev)
{
	struct sim_event *h = sf->heap, last;
	uint32_t n, i = 0;

	if (sf->heap_n == 0 || h[0].t_ns > now_ns)
		return false;
	*ev = h[0];
	last = h[--sf->heap_n];
	n = sf->heap_n;
	while (2 * i + 1 < n) {
		uint32_t c = 2 * i + 1;

		if (c + 1 < n && ev_before(&h[c + 1], &h[c]))
			c++;
		if (!ev_before(&h[c], &last))
			break;
		h[i] = h[c];
		i = c;
	}
	if (n > 0)
		h[i] = last;
	return true;
}

void
sim_event_fini(struct sim_fabric *sf)
{
	rte_free(sf->heap);
	sf->heap = NULL;
	sf->heap_n = sf->heap_cap = 0;
}
