/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Motor's record format on lib/store (paper §4.1, §4.2; doc/guides/motor.md,
 * "Layout"):
 *
 *   slot (in the hash index):  [slot header: Key, TableID][Lock][Vcell x VNum]
 *   slot's aux area:           [Vpkg: SA | value | EA][attribute bar, ABS B]
 *
 * The CVT is what lives in the index (one READ fetches every version);
 * the newest full value and the pre-images of older versions sit in the
 * slot's aux area, which lib/store lays out after the table's buckets on
 * the same MN and keeps with its slot on every replica: the slot's
 * position gives VpkgPtr and AttrBarPtr (motor_vpkg_raddr()), and a
 * replica's copies are at the same place in its own aux area
 * (dtxn_store_replica_raddr()).
 *
 * Also here: the version choice and the rebuilding of an old version,
 * which the execution and validation phases share.
 */
#include <errno.h>
#include <string.h>

#include <rte_common.h>

#include "motor_private.h"

/* The table's VNum: its own, or Motor's default. */
static uint32_t
fmt_vnum(const struct dtxn_table_def *def)
{
	return def->n_versions != 0 ? def->n_versions : MOTOR_VNUM_DEFAULT;
}

int
motor_table_sizes(const struct dtxn_table_def *def, uint32_t *slot_size, uint32_t *aux_size)
{
	uint64_t vpkg, abs;
	uint32_t vnum;

	if (def == NULL || slot_size == NULL || aux_size == NULL)
		return -EINVAL;
	vnum = fmt_vnum(def);
	if (vnum < MOTOR_VNUM_MIN || vnum > DTXN_TABLE_MAX_VERSIONS) {
		MOTOR_LOG(ERR, "table %s: %u versions per record, Motor needs %u..%u",
			  def->name, vnum, MOTOR_VNUM_MIN, DTXN_TABLE_MAX_VERSIONS);
		return -EINVAL;
	}
	/*
	 * ABS: pre-images for VNum - 1 versions of the whole value. The
	 * paper's estimate (ABS = sum of max(VNum x frequency, 1) x size over
	 * the update shapes, §4.2) with no sampled frequencies and one shape
	 * (the whole value) is VNum x value_size; the oldest Vcell's own
	 * pre-images are never read (nothing older is kept), so VNum - 1 suffice
	 * to keep every Vcell readable when each update rewrites the value.
	 */
	vpkg = 16 + RTE_ALIGN_CEIL((uint64_t)def->value_size, 8);
	abs = RTE_ALIGN_CEIL((uint64_t)(vnum - 1) * def->value_size, 8);
	*slot_size = MOTOR_CELLS_OFF + vnum * MOTOR_CELL_SIZE;
	*aux_size = (uint32_t)(vpkg + abs);
	return 0;
}

uint32_t
motor_slot_size(uint32_t value_size)
{
	RTE_SET_USED(value_size);
	return MOTOR_CELLS_OFF + MOTOR_VNUM_DEFAULT * MOTOR_CELL_SIZE;
}

void
motor_slot_format(const struct dtxn_table *t, void *slot, const void *value, void *arg)
{
	struct dtxn_db *db = arg;
	struct motor_cvt *cvt = slot;
	uint8_t *aux = dtxn_store_aux_ptr(db->fabric, t, 0, slot);

	if (aux == NULL) {
		MOTOR_LOG(ERR, "table %s: no aux area for a loaded record", t->def.name);
		return;
	}
	cvt->lock = 0;
	/* the loaded version: version 0 by writer 0 (the checker's INIT),
	 * anchors 0 on every cell and on the Vpkg (the loader zeroed them) */
	memset(cvt->cells, 0, (size_t)motor_vnum(t) * MOTOR_CELL_SIZE);
	cvt->cells[0].valid = 1;
	memcpy(aux + MOTOR_VPKG_VALUE_OFF, value, t->def.value_size);
}

void *
motor_slot_value(const struct dtxn_table *t, void *slot)
{
	/* local copies only: [slot][Vpkg][bar] */
	return (uint8_t *)slot + t->slot_size + MOTOR_VPKG_VALUE_OFF;
}

void *
motor_mn_value(struct dtxn_db *db, const struct dtxn_table *t, void *mn_slot)
{
	const struct motor_cvt *cvt = mn_slot;
	uint8_t *aux;
	int n;

	n = motor_cvt_newest(t, cvt);
	if (n < 0 || (cvt->cells[n].flags & MOTOR_CELL_TOMB) != 0)
		return NULL; /* deleted */
	aux = dtxn_store_aux_ptr(db->fabric, t, 0, mn_slot);
	return aux == NULL ? NULL : aux + MOTOR_VPKG_VALUE_OFF;
}

int
motor_cvt_anchor(const struct dtxn_table *t, const struct motor_cvt *cvt)
{
	uint32_t n = motor_vnum(t), i;
	uint8_t a = cvt->cells[0].sa;

	for (i = 0; i < n; i++)
		if (cvt->cells[i].sa != a || cvt->cells[i].ea != a)
			return -1;
	return a;
}

int
motor_cvt_newest(const struct dtxn_table *t, const struct motor_cvt *cvt)
{
	uint32_t n = motor_vnum(t), i;
	int best = -1;

	for (i = 0; i < n; i++)
		if (cvt->cells[i].valid &&
		    (best < 0 || cvt->cells[i].version > cvt->cells[best].version))
			best = (int)i;
	return best;
}

enum motor_pick
motor_cvt_pick(const struct dtxn_table *t, const struct motor_cvt *cvt, uint64_t ts, int *idx)
{
	uint32_t n = motor_vnum(t), i;
	int best = -1, oldest = -1;

	for (i = 0; i < n; i++) {
		const struct motor_cell *c = &cvt->cells[i];

		if (!c->valid)
			continue;
		if (oldest < 0 || c->version < cvt->cells[oldest].version)
			oldest = (int)i;
		if (c->version < ts && (best < 0 || c->version > cvt->cells[best].version))
			best = (int)i;
	}
	*idx = best;
	if (best >= 0)
		return MOTOR_PICK_FOUND;
	/*
	 * Nothing older than ts. If the oldest version kept is the key's
	 * first (a new-key insert), the key did not exist at ts; otherwise the
	 * version ts needs was reclaimed (oldest-first GC: readers that are
	 * too old abort instead of picking a wrong version).
	 */
	if (oldest >= 0 && (cvt->cells[oldest].flags & MOTOR_CELL_INSERT) != 0)
		return MOTOR_PICK_ABSENT;
	return MOTOR_PICK_GONE;
}

uint64_t
motor_cvt_seen(const struct dtxn_table *t, const struct motor_cvt *cvt, uint64_t ts,
	       enum motor_pick *res)
{
	int idx;

	*res = motor_cvt_pick(t, cvt, ts, &idx);
	if (*res == MOTOR_PICK_FOUND)
		return cvt->cells[idx].version;
	return *res == MOTOR_PICK_ABSENT ? MOTOR_V_NONE : 0;
}

bool
motor_cvt_has_newer(const struct dtxn_table *t, const struct motor_cvt *cvt, uint64_t ts)
{
	uint32_t n = motor_vnum(t), i;

	for (i = 0; i < n; i++)
		if (cvt->cells[i].valid && cvt->cells[i].version > ts)
			return true;
	return false;
}

unsigned
motor_columns(const struct dtxn_table *t)
{
	return t->def.n_columns != 0 ? t->def.n_columns : 1;
}

void
motor_column(const struct dtxn_table *t, unsigned c, uint32_t *off, uint32_t *size)
{
	uint32_t o = 0;
	unsigned k;

	if (t->def.n_columns == 0) {
		*off = 0;
		*size = t->def.value_size;
		return;
	}
	for (k = 0; k < c; k++)
		o += t->def.column_size[k];
	*off = o;
	*size = t->def.column_size[c];
}

uint32_t
motor_seg_len(const struct dtxn_table *t, uint32_t bitmap)
{
	unsigned c, n = motor_columns(t);
	uint32_t len = 0, off, size;

	for (c = 0; c < n; c++) {
		if ((bitmap & (UINT32_C(1) << c)) == 0)
			continue;
		motor_column(t, c, &off, &size);
		len += size;
	}
	return len;
}

/* Copies the pre-images of @p cell's columns from the bar image into @p out. */
static void
fmt_apply(const struct dtxn_table *t, const struct motor_cell *cell, const uint8_t *bar,
	  uint8_t *out)
{
	unsigned c, n = motor_columns(t);
	uint32_t pos = cell->start_off, off, size;

	for (c = 0; c < n; c++) {
		if ((cell->bitmap & (UINT32_C(1) << c)) == 0)
			continue;
		motor_column(t, c, &off, &size);
		memcpy(out + off, bar + pos, size);
		pos += size;
	}
}

void
motor_rebuild(const struct dtxn_table *t, const struct motor_cvt *cvt, int v0,
	      const uint8_t *newest, const uint8_t *bar, uint8_t *out)
{
	uint32_t n = motor_vnum(t), i;
	uint64_t below = UINT64_MAX;

	memcpy(out, newest, t->def.value_size);
	/* newest first: each cell's pre-images are the value before it */
	for (;;) {
		int next = -1;

		for (i = 0; i < n; i++) {
			const struct motor_cell *c = &cvt->cells[i];

			if (c->valid && c->version > cvt->cells[v0].version && c->version < below &&
			    (next < 0 || c->version > cvt->cells[next].version))
				next = (int)i;
		}
		if (next < 0)
			break;
		fmt_apply(t, &cvt->cells[next], bar, out);
		below = cvt->cells[next].version;
	}
}
