/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Coordinator-active garbage collection (paper §4.3): the writer of a new
 * version makes room for it itself, under the record's lock, without
 * tracking which versions running transactions still read.
 *
 * - Vcells: an empty one if any, else the one holding the oldest version
 *   is overwritten (Fig. 4b). Cells end up unsorted; readers scan them all.
 * - Attribute bar: a ring in commit order. The new version's pre-images
 *   go right after the newest version's (StartOffset = last StartOffset +
 *   the sizes of its bitmap's columns), or at offset 0 when they do not
 *   fit before the end. Bytes they overwrite belonged to older versions'
 *   pre-images: if version v's pre-images are overwritten, every version
 *   older than v can no longer be rebuilt (rebuilding applies the
 *   pre-images of each newer version), so those cells are invalidated.
 *   The paper invalidates "the Vcells whose segments were reclaimed";
 *   that is one version too many (v itself still rebuilds from the
 *   newer ones) and, done alone, leaves the versions below v valid but
 *   wrong; dtxn invalidates exactly the versions below v.
 *
 * - Pre-images larger than the whole bar (an update outside the table's
 *   declared shapes, Motor §4.2 ABS): the new version keeps none (its
 *   bitmap is cleared) and every older version is invalidated, as they
 *   could no longer be rebuilt.
 *
 * Invariant kept: the valid versions of a CVT are always the newest ones
 * ever written to it, with every pre-image needed to rebuild them. A
 * reader whose snapshot is older than all of them aborts (version_gone)
 * instead of picking a wrong one.
 */
#include <string.h>

#include "motor_private.h"

/* The cell the new version goes to: an empty one, else the oldest. */
static unsigned
gc_victim(const struct motor_cell *cells, uint32_t n)
{
	unsigned i, oldest = 0;
	bool have = false;

	for (i = 0; i < n; i++) {
		if (!cells[i].valid)
			return i;
		if (!have || cells[i].version < cells[oldest].version) {
			oldest = i;
			have = true;
		}
	}
	return oldest;
}

static inline bool
gc_overlap(uint32_t a, uint32_t alen, uint32_t b, uint32_t blen)
{
	return alen != 0 && blen != 0 && a < b + blen && b < a + alen;
}

unsigned
motor_gc_install(const struct dtxn_table *t, struct motor_cell *cells,
		 const struct motor_cell *nc, uint8_t anchor, unsigned *cell, uint32_t *start)
{
	const uint32_t n = motor_vnum(t), abs = motor_abs(t);
	uint32_t len = motor_seg_len(t, nc->bitmap), head = 0, i;
	uint64_t cut = 0;
	unsigned victim, dropped = 0;
	int newest = -1;

	for (i = 0; i < n; i++)
		if (cells[i].valid && (newest < 0 || cells[i].version > cells[newest].version))
			newest = (int)i;
	if (newest >= 0)
		head = cells[newest].start_off + motor_seg_len(t, cells[newest].bitmap);
	if (head + len > abs)
		head = 0; /* wrap: reclaim from the start of the bar */
	victim = gc_victim(cells, n);
	if (len > abs) {
		/* no room even in an empty bar: keep the new version alone */
		for (i = 0; i < n; i++) {
			if (i != victim && cells[i].valid) {
				cells[i].valid = 0;
				dropped++;
			}
		}
		cells[victim] = *nc;
		cells[victim].valid = 1;
		cells[victim].bitmap = 0;
		cells[victim].start_off = 0;
		goto stamp;
	}
	/* versions whose pre-images the new ones overwrite: those below them die */
	for (i = 0; i < n; i++) {
		const struct motor_cell *c = &cells[i];

		if (i != victim && c->valid &&
		    gc_overlap(head, len, c->start_off, motor_seg_len(t, c->bitmap)) &&
		    c->version > cut)
			cut = c->version;
	}
	for (i = 0; i < n; i++) {
		if (i != victim && cells[i].valid && cells[i].version < cut) {
			cells[i].valid = 0;
			dropped++;
		}
	}
	cells[victim] = *nc;
	cells[victim].valid = 1;
	cells[victim].start_off = head;
stamp:
	for (i = 0; i < n; i++) {
		cells[i].sa = anchor;
		cells[i].ea = anchor;
	}
	*cell = victim;
	*start = cells[victim].start_off;
	return dropped;
}
