/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Cancelled tickets (cancel=1; doc/guides/scythe.md, "Cancelling a queued
 * ticket"; not in the paper, whose only release is the holder's FAA):
 * an aborting txn hands its queued tickets to the MN service, which gives
 * each back (upper + 1) when upper reaches it, so that the txn need not
 * wait until they are served and the waiters behind them do not wait for
 * a txn that gave up.
 *
 * Why the MN CPU may add to upper, a word only the NIC's FAAs change
 * otherwise: it adds only when upper equals a cancelled ticket, i.e. when
 * the lock is the cancelled ticket's, whose holder gave it up; nobody else
 * holds the lock then, so no FAA on the word is in flight or can come
 * until this add. Recovery leaves the ticket alone (its ticket table
 * entry is marked cancelled before the reply leaves the MN).
 *
 * The grant rule counts live waiters only: scythe_cancel_head() first
 * gives back the cancelled tickets at the head of the record's queue, so
 * the upper it returns is a live holder's ticket (which may still change
 * by its FAA: then the queue only looks longer than it is) or lower; the
 * cancelled tickets behind it are subtracted (scythe_cancel_queued()).
 * u16 arithmetic throughout, as everywhere (scythe_ticket_out()).
 *
 * Pure functions on the MN's region: the MN service (mnsvc.c) and the
 * unit tests use them.
 */
#include <errno.h>

#include "scythe_private.h"

static struct scythe_slot *
cxl_slot(uint8_t *base, uint64_t off)
{
	return (struct scythe_slot *)(base + off);
}

static uint16_t
cxl_upper(uint8_t *base, uint64_t off)
{
	return (uint16_t)__atomic_load_n(&cxl_slot(base, off)->upper, __ATOMIC_ACQUIRE);
}

static void
cxl_drop(struct scythe_cancels *c, uint32_t i)
{
	c->ent[i] = c->ent[--c->n];
}

/* Gives back entry @p i, whose ticket upper has reached; drops it. */
static void
cxl_give_back(struct scythe_cancels *c, uint8_t *base, uint32_t i)
{
	__atomic_fetch_add(&cxl_slot(base, c->ent[i].off)->upper, 1, __ATOMIC_ACQ_REL);
	c->served++;
	cxl_drop(c, i);
}

int
scythe_cancel_add(struct scythe_cancels *c, uint8_t *base, uint64_t off, uint16_t ticket)
{
	struct scythe_slot *s = cxl_slot(base, off);
	uint16_t lower = (uint16_t)__atomic_load_n(&s->lower, __ATOMIC_ACQUIRE);

	if (!scythe_ticket_out(ticket, lower, cxl_upper(base, off)))
		return -ENOENT;
	if (c->n == SCYTHE_CANCEL_MAX)
		return -ENOSPC;
	c->ent[c->n].off = off;
	c->ent[c->n].ticket = ticket;
	c->n++;
	(void)scythe_cancel_head(c, base, off); /* served already: give it back now */
	return 0;
}

uint16_t
scythe_cancel_head(struct scythe_cancels *c, uint8_t *base, uint64_t off)
{
	uint16_t upper = cxl_upper(base, off);

	for (uint32_t i = 0; i < c->n;) {
		if (c->ent[i].off != off || c->ent[i].ticket != upper) {
			i++;
			continue;
		}
		cxl_give_back(c, base, i);
		upper = cxl_upper(base, off);
		i = 0; /* the next ticket may be cancelled too */
	}
	return upper;
}

unsigned
scythe_cancel_serve(struct scythe_cancels *c, uint8_t *base)
{
	uint64_t before = c->served;

	for (uint32_t i = 0; i < c->n;) {
		const struct scythe_cancel *e = &c->ent[i];
		struct scythe_slot *s = cxl_slot(base, e->off);
		uint16_t lower = (uint16_t)__atomic_load_n(&s->lower, __ATOMIC_ACQUIRE);
		uint16_t upper = cxl_upper(base, e->off);

		if (upper == e->ticket) {
			(void)scythe_cancel_head(c, base, e->off);
			i = 0; /* entries moved */
		} else if (!scythe_ticket_out(e->ticket, lower, upper)) {
			c->stale++;
			cxl_drop(c, i);
		} else {
			i++;
		}
	}
	return (unsigned)(c->served - before);
}

uint16_t
scythe_cancel_queued(const struct scythe_cancels *c, uint64_t off)
{
	uint16_t n = 0;

	for (uint32_t i = 0; i < c->n; i++)
		n += c->ent[i].off == off;
	return n;
}
