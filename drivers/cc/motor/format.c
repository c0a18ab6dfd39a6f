/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Motor's record format on lib/store (paper §4.1, §4.2; doc/guides/motor.md,
 * "Layout"):
 *
 *   slot (in the hash index):  [slot header: Key, TableID, aux][Lock][Vcell (24 B) x VNum]
 *   slot's aux area aux:       [Vpkg: SA | value | EA]
 *   delta area aux:            [attribute bar, ABS B], in use from the row's first update
 *
 * The CVT is what lives in the index (one READ fetches every version);
 * the newest full value sits in the slot's aux area, which lib/store lays
 * out after the table's buckets on the same MN and keeps with its slot on
 * every replica (the slot header's aux is VpkgPtr, motor_vpkg_raddr());
 * the pre-images of older versions in the record's attribute bar, the
 * area of the table's delta heap numbered as the Vpkg's, in use from the
 * row's first update (commit.c; the paper's AttrBarPtr is that number,
 * motor_bar_raddr()). A replica's copies are at
 * the same place in its own heaps (dtxn_store_replica_raddr()).
 *
 * Also here: the version choice and the rebuilding of an old version,
 * which the execution and validation phases share.
 */
#include <errno.h>
#include <string.h>

#include <rte_common.h>
#include <rte_malloc.h>

#include "motor_private.h"

/* The table's VNum: its own, or Motor's default; a table the workload
 * never updates in place has at most an insert and its deletion to keep,
 * one it never writes only its loaded version. */
static uint32_t
fmt_vnum(const struct dtxn_table_def *def)
{
	if (def->n_versions != 0)
		return def->n_versions;
	if (def->flags & DTXN_TABLE_F_READ_ONLY)
		return 1;
	return (def->flags & DTXN_TABLE_F_NO_UPDATE) ? MOTOR_VNUM_MIN : MOTOR_VNUM_DEFAULT;
}

/* A declared VNum Motor refuses: one is not multi-versioning (the default
 * of a read-only table, 1, is not declared), or more than the store keeps. */
static bool
fmt_vnum_bad(const struct dtxn_table_def *def)
{
	return def->n_versions != 0 &&
	       (def->n_versions < MOTOR_VNUM_MIN || def->n_versions > DTXN_TABLE_MAX_VERSIONS);
}

/*
 * ABS, the attribute bar's size (§4.2): ABS = sum over the table's update
 * shapes i of max(floor(VNum x Frequency_i), 1) x TotAttrSize_i, the
 * frequencies the benchmark declares (dtxn_table_def.updates) in place of
 * the paper's sampling. The paper's CUSTOMER: 512 B / 12 B / 4 B at 10% /
 * 88% / 2%, VNum 4: 1 x 512 + 3 x 12 + 1 x 4 = 552 B. A table the
 * workload never updates in place (DTXN_TABLE_F_NO_UPDATE) has no bar:
 * a re-insert over a tombstone then keeps only itself. Without shapes (or
 * without columns) every update is assumed to rewrite the value: (VNum -
 * 1) x value_size, enough to keep every older Vcell rebuildable (the
 * oldest Vcell's own pre-images are never read). An update whose
 * pre-images exceed ABS keeps only itself (gc.c). ABS is at most
 * MOTOR_ABS_MAX (the Vcell's 16-bit StartOffset).
 */
static uint64_t
fmt_abs(const struct dtxn_table_def *def, uint32_t vnum)
{
	uint64_t abs = 0;
	uint32_t u;

	if (def->flags & (DTXN_TABLE_F_NO_UPDATE | DTXN_TABLE_F_READ_ONLY))
		return 0;
	if (def->n_updates == 0 || def->n_columns == 0)
		return (uint64_t)(vnum - 1) * def->value_size;
	for (u = 0; u < def->n_updates; u++) {
		uint64_t k = (uint64_t)vnum * def->updates[u].permille / 1000;

		abs += RTE_MAX(k, (uint64_t)1) * dtxn_table_cells_bytes(def, def->updates[u].cells);
	}
	return abs;
}

int
motor_table_sizes(const struct dtxn_table_def *def, uint32_t *slot_size, uint32_t *aux_size)
{
	uint32_t vnum;

	if (def == NULL || slot_size == NULL || aux_size == NULL)
		return -EINVAL;
	if (fmt_vnum_bad(def)) {
		MOTOR_LOG(ERR, "table %s: %u versions per record, Motor needs %u..%u",
			  def->name, def->n_versions, MOTOR_VNUM_MIN, DTXN_TABLE_MAX_VERSIONS);
		return -EINVAL;
	}
	vnum = fmt_vnum(def);
	*slot_size = MOTOR_CELLS_OFF + vnum * MOTOR_CELL_SIZE;
	*aux_size = (uint32_t)RTE_ALIGN_CEIL((uint64_t)def->value_size + 2, 8); /* the Vpkg */
	return 0;
}

uint32_t
motor_table_delta(const struct dtxn_table_def *def)
{
	uint32_t vnum = fmt_vnum(def);

	if (fmt_vnum_bad(def))
		return 0; /* refused by motor_table_sizes() */
	/* StartOffset is 16 bits: a larger bar is cut (an update that does
	 * not fit keeps only itself, gc.c) */
	return (uint32_t)RTE_MIN(RTE_ALIGN_CEIL(fmt_abs(def, vnum), 8), (uint64_t)MOTOR_ABS_MAX);
}

uint32_t
motor_local_extra(const struct dtxn_table *t)
{
	/* the Vpkg image starts 7 B into its buffer: up to 8 B past aux_size */
	return motor_abs(t) + (motor_vpkg_local_size(t) - t->aux_size);
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
	uint8_t *aux = dtxn_store_slot_aux_ptr(db->fabric, t, slot);

	if (aux == NULL) {
		MOTOR_LOG(ERR, "table %s: no aux area for a loaded record", t->def.name);
		return;
	}
	cvt->lock = 0; /* the bar is not in use until the row's first update (commit.c) */
	/* the loaded version: version 0 by writer 0 (the checker's INIT),
	 * anchors 0 on every cell and on the Vpkg (the loader zeroed them) */
	memset(cvt->cells, 0, (size_t)motor_vnum(t) * MOTOR_CELL_SIZE);
	cvt->cells[0].valid = 1;
	memcpy(aux + MOTOR_VPKG_VALUE_OFF, value, t->def.value_size);
}

void *
motor_slot_value(const struct dtxn_table *t, void *slot)
{
	/* local copies only: [slot][Vpkg][bar image] */
	return (uint8_t *)slot + t->slot_size + MOTOR_VPKG_LOCAL_OFF + MOTOR_VPKG_VALUE_OFF;
}

void *
motor_mn_value(struct dtxn_db *db, const struct dtxn_table *t, void *mn_slot)
{
	const struct motor_cvt *cvt = mn_slot;
	struct motor_shared *sh = db->cc_shared;
	uint8_t *aux, *buf;
	int n;

	n = motor_cvt_newest(t, cvt);
	if (n < 0 || (cvt->cells[n].flags & MOTOR_CELL_TOMB) != 0)
		return NULL; /* deleted */
	aux = dtxn_store_aux_ptr(db->fabric, t, 0, mn_slot);
	if (aux == NULL || sh == NULL)
		return NULL;
	/* the packed Vpkg's value is at an odd offset: hand out an aligned copy */
	if (sh->mn_value_size < t->def.value_size) {
		buf = rte_realloc(sh->mn_value, RTE_MAX(t->def.value_size, 64u), 8);
		if (buf == NULL)
			return NULL;
		sh->mn_value = buf;
		sh->mn_value_size = RTE_MAX(t->def.value_size, 64u);
	}
	memcpy(sh->mn_value, aux + MOTOR_VPKG_VALUE_OFF, t->def.value_size);
	return sh->mn_value;
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

void
motor_fa_newer(struct dtxn_txn *t, const struct dtxn_item *it, const struct motor_cvt *cvt,
	       uint64_t after)
{
	uint32_t n = motor_vnum(it->table), i;
	bool base = false, newer = false;

	for (i = 0; i < n; i++) {
		const struct motor_cell *c = &cvt->cells[i];

		if (!c->valid)
			continue;
		if (c->version <= after) {
			base = true;
			continue;
		}
		newer = true;
		dtxn_fa_holder(t, it, c->writer); /* each writer's cells must miss it */
	}
	/* without a version at or before @p after some newer ones may be gone (gc.c) */
	if (!base || !newer)
		dtxn_fa_verdict(t, false);
}

void
motor_rebuild(const struct dtxn_table *t, const struct motor_cvt *cvt, int v0, uint32_t cells,
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
		if (cvt->cells[next].bitmap & cells)
			(void)dtxn_table_cells_unpack(&t->def, cvt->cells[next].bitmap,
						      bar + cvt->cells[next].start_off, out);
		below = cvt->cells[next].version;
	}
}
