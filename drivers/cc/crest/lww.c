/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Last-writer-wins (crest.md §3 "Last-writer-wins"; doc/guides/crest.md,
 * "Parallel commits"): the local transactions that write a record the CN
 * holds cell locks on each join its writer count; each leaves once it is
 * decided, committable or aborted. The one that brings the count to zero
 * acts for all of them: it writes the newest committable version (the
 * highest append sequence in the record's version list: versions are
 * appended in local 2PL order, so the last appended is the last in the
 * serial order, whatever order the writers finish in) and releases the
 * locks, or, when none was committable, only releases them. So a last
 * writer that aborts still writes the versions of the others that
 * committed: they have passed their commit point (committable, redo entry
 * persisted) and their updates must reach the MN before the cells are
 * unlocked.
 */
#include "crest_private.h"

void
crest_lww_join(struct crest_lww *o)
{
	o->writers++;
}

enum crest_lww_act
crest_lww_leave(struct crest_lww *o, bool committable, uint64_t seq, const void *ver)
{
	if (committable && (o->best == NULL || seq > o->best_seq)) {
		o->best = ver;
		o->best_seq = seq;
	}
	if (--o->writers != 0)
		return CREST_LWW_WAIT;
	return o->best != NULL ? CREST_LWW_WRITE : CREST_LWW_RELEASE;
}
