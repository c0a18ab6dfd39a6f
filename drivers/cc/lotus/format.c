/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Lotus's memory store on lib/store (paper §7.1; doc/guides/lotus.md,
 * "Memory store"):
 *
 *   slot (in the hash index):  [slot header: Key, TableID][Length, VNum][lock]
 *                              [cell (16 B) x VNum: meta | addr | commit_t]
 *   slot's aux area:           [record of cell 0]
 *   row's delta area:          [record of cell 1] ... [record of cell VNum-1]
 *
 * A CVT per record; a full record per version ("full record store", not
 * Motor's newest value plus deltas). A record is lines of 64 B, each
 * starting with a cacheline version (CV) byte, the last byte of the
 * record a tail CV; its payload is the writer's txn id (what the history
 * checker needs) then the value. A cell's meta word packs the version,
 * the cell's CV and its flags: readers compare the cell's CV with every
 * CV of the record and read again on a mismatch.
 *
 * One fixed record buffer per cell, and overwriting the oldest version
 * reuses its buffer. Cell 0's is the slot's aux area, which MN memory
 * holds for every row (the loaded or inserted version); the others are
 * in an area of the table's delta heap (lib/store, "Delta heaps") that
 * the row takes on its first second version, from its writer's chunk
 * (commit.c), and keeps for good; every cell 1..VNum-1 names it in its
 * Address (LOTUS_ADDR_DELTA | number: numbers, not absolute addresses,
 * because the loader may move a slot with its aux area before the run).
 * So a row that is only read holds one record, as Motor's holds one value.
 */
#include <errno.h>
#include <string.h>

#include "lotus_private.h"

static uint32_t
fmt_vnum(const struct dtxn_table_def *def)
{
	return def->n_versions != 0 ? def->n_versions : LOTUS_VNUM_DEFAULT;
}

int
lotus_table_sizes(const struct dtxn_table_def *def, uint32_t *slot_size, uint32_t *aux_size)
{
	uint32_t vnum;

	if (def == NULL || slot_size == NULL || aux_size == NULL)
		return -EINVAL;
	vnum = fmt_vnum(def);
	if (vnum < LOTUS_VNUM_MIN || vnum > LOTUS_VNUM_MAX) {
		LOTUS_LOG(ERR, "table %s: %u versions per record, Lotus keeps %u..%u", def->name,
			  vnum, LOTUS_VNUM_MIN, LOTUS_VNUM_MAX);
		return -EINVAL;
	}
	*slot_size = lotus_cvt_size(vnum, false);
	/* cell 0's record; the others' are in the delta heap (lotus_table_delta()) */
	*aux_size = lotus_rec_size_v(def->value_size);
	return 0;
}

int
lotus_table_geometry(const struct dtxn_db *db, struct dtxn_table_def *def, uint32_t *slot_size,
		     uint32_t *aux_size)
{
	struct lotus_opts o;
	int rc;

	(void)lotus_opts_of_db(db, &o); /* refused ones: dtxn_db_create() said so first */
	rc = lotus_table_sizes(def, slot_size, aux_size);
	if (rc == 0 && o.locks == LOTUS_LOCKS_MN)
		*slot_size += 8; /* the ablation's lock word, the slot's last 8 B */
	return rc;
}

uint32_t
lotus_table_delta(const struct dtxn_table_def *def)
{
	uint32_t vnum = fmt_vnum(def);

	if (vnum < LOTUS_VNUM_MIN || vnum > LOTUS_VNUM_MAX)
		return 0; /* refused by lotus_table_sizes() */
	/* a table never written after loading never has a second version (a
	 * workload that writes one anyway aborts delta_full: no delta heap) */
	if (def->flags & DTXN_TABLE_F_READ_ONLY)
		return 0;
	/* every other table: a delete's tombstone is a second version too */
	return (vnum - 1) * lotus_rec_size_v(def->value_size);
}

uint32_t
lotus_local_extra(const struct dtxn_table *t)
{
	/* the local copy is [CVT][value][staging record]: the aux area's room
	 * holds the record, this the value before it */
	return RTE_ALIGN_CEIL(t->def.value_size, 8);
}

uint32_t
lotus_slot_size(uint32_t value_size)
{
	RTE_SET_USED(value_size);
	return LOTUS_CVT_HDR + LOTUS_VNUM_DEFAULT * LOTUS_CELL_SIZE;
}

void
lotus_rec_pack(const struct dtxn_table *t, uint8_t *rec, uint8_t cv, uint64_t writer,
	       const void *value)
{
	const uint32_t size = lotus_rec_size(t), len = t->def.value_size;
	const uint8_t *v = value;
	uint32_t pos = 0, line;

	memset(rec, 0, size);
	for (line = 0; line * LOTUS_LINE < size; line++)
		rec[line * LOTUS_LINE] = cv;
	rec[size - 1] = cv;
	/* payload stream: bytes 1..63 of each line */
	for (uint32_t i = 0; i < LOTUS_REC_WRITER + len; i++, pos++) {
		uint8_t b = i < LOTUS_REC_WRITER ? (uint8_t)(writer >> (8 * i)) :
						   v[i - LOTUS_REC_WRITER];

		if (pos % LOTUS_LINE == 0)
			pos++;
		rec[pos] = b;
	}
}

int
lotus_rec_unpack(const struct dtxn_table *t, const uint8_t *rec, uint8_t cv, uint64_t *writer,
		 void *value)
{
	const uint32_t size = lotus_rec_size(t), len = t->def.value_size;
	uint8_t *v = value;
	uint64_t w = 0;
	uint32_t pos = 0, line;

	for (line = 0; line * LOTUS_LINE < size; line++)
		if (rec[line * LOTUS_LINE] != cv)
			return -EAGAIN;
	if (rec[size - 1] != cv)
		return -EAGAIN;
	for (uint32_t i = 0; i < LOTUS_REC_WRITER + len; i++, pos++) {
		if (pos % LOTUS_LINE == 0)
			pos++;
		if (i < LOTUS_REC_WRITER)
			w |= (uint64_t)rec[pos] << (8 * i);
		else if (v != NULL)
			v[i - LOTUS_REC_WRITER] = rec[pos];
	}
	if (writer != NULL)
		*writer = w;
	return 0;
}

void
lotus_slot_format(const struct dtxn_table *t, void *slot, const void *value, void *arg)
{
	struct dtxn_db *db = arg;
	struct lotus_cvt *cvt = slot;
	uint8_t *aux = dtxn_store_slot_aux_ptr(db->fabric, t, slot);

	if (aux == NULL) {
		LOTUS_LOG(ERR, "table %s: no aux area for a loaded record", t->def.name);
		return;
	}
	/* no delta area: the row takes one on its first second version; with
	 * locks=mn, the lock word after the cells is 0 (free) */
	memset(cvt->cells, 0, t->slot_size - LOTUS_CVT_HDR);
	/* the loaded version: version 0 by writer 0 (the checker's INIT), CV 0 */
	cvt->cells[0].meta = lotus_meta(0, 0, LOTUS_CELL_VALID);
	lotus_rec_pack(t, aux, 0, 0, value);
}

void *
lotus_slot_value(const struct dtxn_table *t, void *slot)
{
	/* local copies only: [CVT][value][staging record] */
	return (uint8_t *)slot + t->slot_size;
}

/* The newest valid cell, INVISIBLE ones left out if @p committed. */
static int
cvt_newest(const struct dtxn_table *t, const struct lotus_cvt *cvt, bool committed)
{
	const uint32_t n = lotus_vnum(t);
	int best = -1;

	for (uint32_t i = 0; i < n; i++) {
		uint64_t m = cvt->cells[i].meta;

		if ((lotus_meta_flags(m) & LOTUS_CELL_VALID) == 0 ||
		    (committed && lotus_meta_ver(m) == LOTUS_INVISIBLE))
			continue;
		if (best < 0 || lotus_meta_ver(m) > lotus_meta_ver(cvt->cells[best].meta))
			best = (int)i;
	}
	return best;
}

int
lotus_cvt_newest(const struct dtxn_table *t, const struct lotus_cvt *cvt)
{
	return cvt_newest(t, cvt, false);
}

int
lotus_cvt_committed(const struct dtxn_table *t, const struct lotus_cvt *cvt)
{
	return cvt_newest(t, cvt, true);
}

bool
lotus_mn_unfinished(const struct dtxn_table *t, const void *mn_slot)
{
	const struct lotus_cvt *cvt = mn_slot;
	const uint32_t n = lotus_vnum(t);

	for (uint32_t i = 0; i < n; i++) {
		uint64_t m = cvt->cells[i].meta;

		if ((lotus_meta_flags(m) & LOTUS_CELL_VALID) != 0 &&
		    lotus_meta_ver(m) == LOTUS_INVISIBLE)
			return true;
	}
	return false;
}

void *
lotus_mn_value(struct dtxn_db *db, const struct dtxn_table *t, void *mn_slot)
{
	const struct lotus_cvt *cvt = mn_slot;
	struct lotus_shared *sh = lotus_shared_of(db);
	const uint8_t *rec;
	uint64_t m;
	int n;

	/* the newest committed version: an INVISIBLE one (a commit neither
	 * finished nor undone) is no value of the row; lotus_mn_unfinished()
	 * reports it */
	n = lotus_cvt_committed(t, cvt);
	if (n < 0 || sh == NULL || sh->scratch == NULL)
		return NULL;
	m = cvt->cells[n].meta;
	if ((lotus_meta_flags(m) & LOTUS_CELL_TOMB) != 0)
		return NULL; /* deleted */
	if (n == 0)
		rec = dtxn_store_aux_ptr(db->fabric, t, 0, mn_slot);
	else
		rec = dtxn_store_heap_area_ptr(db->fabric, t, DTXN_HEAP_DELTA, 0, mn_slot,
					       cvt->cells[n].addr & ~LOTUS_ADDR_DELTA);
	if (rec == NULL || lotus_rec_unpack(t, rec + lotus_rec_off(t, (unsigned)n),
					    lotus_meta_cv(m), NULL, sh->scratch) != 0)
		return NULL;
	return sh->scratch;
}

enum lotus_pick
lotus_cvt_pick(const struct dtxn_table *t, const struct lotus_cvt *cvt, uint64_t ts, int *idx)
{
	const uint32_t n = lotus_vnum(t);
	int best = -1, oldest = -1;

	*idx = -1;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t m = cvt->cells[i].meta, v = lotus_meta_ver(m);

		if ((lotus_meta_flags(m) & LOTUS_CELL_VALID) == 0)
			continue;
		if (v == LOTUS_INVISIBLE)
			return LOTUS_PICK_INVISIBLE;
		if (oldest < 0 || v < lotus_meta_ver(cvt->cells[oldest].meta))
			oldest = (int)i;
		if (v < ts && (best < 0 || v > lotus_meta_ver(cvt->cells[best].meta)))
			best = (int)i;
	}
	*idx = best;
	if (best >= 0)
		return LOTUS_PICK_FOUND;
	/* nothing older than ts: the key did not exist yet (its first version
	 * is kept), or the version ts needs was reclaimed */
	if (oldest >= 0 && (lotus_meta_flags(cvt->cells[oldest].meta) & LOTUS_CELL_INSERT) != 0)
		return LOTUS_PICK_ABSENT;
	return LOTUS_PICK_GONE;
}
