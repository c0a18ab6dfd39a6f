/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CREST's MN record (crest.md §1, Fig. 6; doc/guides/crest.md, "Record"):
 *
 *   line 0   [slot header: Key, TableID, flags 16 B][Lock 8 B][EN x 20, 2 B each]
 *   cell c   [version 8 B: EN 16 bits | TS_commit 48 bits][cell c's value]
 *
 * Cells follow in order, 8 B-aligned, packed: a cell of at most 56 B sits
 * with its version inside one cacheline (it starts a new line if the
 * current one lacks room); a wider cell starts a line and carries a
 * version in each of its lines (cacheline versions, 56 B of value per
 * line). So one cell is read or written with its version by accesses
 * that are each atomic on the RNIC. The table's columns are the
 * cells, in value order; columns past the 20th are merged into the 20th
 * (the EN array has 20 entries); with cell=0 the whole value is one cell.
 *
 * The application sees the value contiguous: the local copy of a record
 * is [record image][value] (crest_local_extra()), execute gathers the
 * cells into the value and commit scatters the written ones back; on the
 * MN (scans, gets: main lcore, after the run) crest_mn_value() gathers
 * into the db's buffer.
 */
#include <errno.h>
#include <string.h>

#include <rte_common.h>
#include <rte_malloc.h>

#include "crest_private.h"

/** The db's state: options, per-table layouts, the MN gather buffer. */
struct crest_shared {
	struct crest_opts opts;
	struct crest_layout lay[DTXN_MAX_TABLES];
	uint8_t *buf;           /**< crest_mn_value()'s value, the largest table's bytes */
	struct crest_shared_rec rec; /**< recovery's fence (recover.c) */
	struct crest_cn_lc cn_lc[DTXN_MAX_NODES]; /**< cache=cn: each CN's record cache, by node id */
};

const struct crest_shared_rec *
crest_shared_rec_of(const struct dtxn_db *db)
{
	return &((const struct crest_shared *)db->cc_shared)->rec;
}

struct crest_cn_lc *
crest_cn_lc_of(const struct dtxn_db *db, uint16_t cn_node)
{
	struct crest_shared *sh = db->cc_shared;

	return cn_node < DTXN_MAX_NODES ? &sh->cn_lc[cn_node] : NULL;
}

void
crest_layout_make(const struct dtxn_table_def *def, bool cell_level, struct crest_layout *lay)
{
	unsigned cols = dtxn_table_n_cells(def), c;
	uint32_t cur = CREST_HDR_SIZE;

	memset(lay, 0, sizeof(*lay));
	lay->n_cells = cell_level ? RTE_MIN(cols, (unsigned)CREST_MAX_CELLS) : 1;
	for (c = 0; c < cols; c++) {
		unsigned k = RTE_MIN(c, lay->n_cells - 1);
		uint32_t off, size;

		dtxn_table_cell(def, c, &off, &size);
		if (lay->val_len[k] == 0)
			lay->val_off[k] = off;
		lay->val_len[k] += size;
	}
	/* cells packed in order; a cell and its version never cross a line,
	 * a wider cell starts a line and has a version in each of its lines */
	for (c = 0; c < lay->n_cells; c++) {
		uint32_t len = lay->val_len[c];

		cur = RTE_ALIGN_CEIL(cur, 8);
		if (len > CREST_LINE_DATA || cur % CREST_LINE + 8 + len > CREST_LINE)
			cur = RTE_ALIGN_CEIL(cur, CREST_LINE);
		lay->rec_off[c] = cur;
		lay->n_lines[c] = RTE_MAX(1u, (len + CREST_LINE_DATA - 1) / CREST_LINE_DATA);
		cur += (lay->n_lines[c] - 1) * CREST_LINE + 8 + (len - (lay->n_lines[c] - 1) * CREST_LINE_DATA);
	}
	lay->image_size = RTE_ALIGN_CEIL(cur, 8);
}

uint32_t
crest_cell_span(const struct crest_layout *lay, unsigned c)
{
	return (lay->n_lines[c] - 1) * CREST_LINE + 8 +
	       (lay->val_len[c] - (lay->n_lines[c] - 1) * CREST_LINE_DATA);
}

uint32_t
crest_cells_of(const struct dtxn_table_def *def, const struct crest_layout *lay, uint32_t cols)
{
	unsigned n = dtxn_table_n_cells(def);
	uint32_t cells = 0;

	for (unsigned c = 0; c < n; c++)
		if (cols & DTXN_CELL(c))
			cells |= UINT32_C(1) << RTE_MIN(c, lay->n_cells - 1);
	return cells;
}

uint64_t *
crest_line_ver(void *rec, const struct crest_layout *lay, unsigned c, unsigned k)
{
	return (uint64_t *)(void *)((char *)rec + lay->rec_off[c] + (size_t)k * CREST_LINE);
}

/* Walks cell @p c's lines: value bytes [pos, pos + len) <-> line k's data. */
#define CREST_FOR_LINES(lay, c, k, pos, len)                                              \
	for (uint32_t k = 0, pos = 0, len; k < (lay)->n_lines[c] &&                       \
					   (len = RTE_MIN((uint32_t)CREST_LINE_DATA,      \
							  (lay)->val_len[c] - pos), 1);    \
	     k++, pos += CREST_LINE_DATA)

void
crest_gather(const struct crest_layout *lay, const void *rec, void *val, uint32_t cells)
{
	for (; cells != 0; cells &= cells - 1) {
		unsigned c = (unsigned)__builtin_ctz(cells);

		CREST_FOR_LINES(lay, c, k, pos, len)
			memcpy((char *)val + lay->val_off[c] + pos,
			       (const char *)rec + lay->rec_off[c] + k * CREST_LINE + 8, len);
	}
}

void
crest_scatter(const struct crest_layout *lay, void *rec, const void *val, uint32_t cells)
{
	for (; cells != 0; cells &= cells - 1) {
		unsigned c = (unsigned)__builtin_ctz(cells);

		CREST_FOR_LINES(lay, c, k, pos, len)
			memcpy((char *)rec + lay->rec_off[c] + k * CREST_LINE + 8,
			       (const char *)val + lay->val_off[c] + pos, len);
	}
}

int
crest_snapshot_check(const struct crest_layout *lay, const void *rec, uint32_t cells,
		     uint64_t foreign)
{
	const struct crest_hdr *h = rec;

	if ((foreign & crest_lock_bits(cells)) != 0)
		return DTXN_ABORT(DTXN_ABORT_LOCKED_READ);
	for (; cells != 0; cells &= cells - 1) {
		unsigned c = (unsigned)__builtin_ctz(cells);

		for (unsigned k = 0; k < lay->n_lines[c]; k++)
			if (CREST_VER_EN(*crest_line_ver((void *)(uintptr_t)rec, lay, c, k)) !=
			    h->en[c])
				return DTXN_ABORT(DTXN_ABORT_VALIDATION);
	}
	return DTXN_OK;
}

int
crest_table_geometry(const struct dtxn_db *db, struct dtxn_table_def *def, uint32_t *slot_size,
		     uint32_t *aux_size)
{
	struct crest_opts o;
	struct crest_layout lay;

	crest_opts_of_db(db, &o);
	crest_layout_make(def, o.cell != 0, &lay);
	*slot_size = lay.image_size;
	*aux_size = 0;
	return 0;
}

uint32_t
crest_slot_size(uint32_t value_size)
{
	/* one cell (tables are sized by crest_table_geometry()) */
	struct dtxn_table_def def = { .value_size = value_size };
	struct crest_layout lay;

	crest_layout_make(&def, false, &lay);
	return lay.image_size;
}

uint32_t
crest_local_extra(const struct dtxn_table *t)
{
	return RTE_ALIGN_CEIL(t->def.value_size, 8);
}

void *
crest_slot_value(const struct dtxn_table *t, void *slot)
{
	return (char *)slot + t->slot_size;
}

static const struct crest_layout *
fmt_layout(struct dtxn_db *db, const struct dtxn_table *t)
{
	const struct crest_shared *sh = db->cc_shared;

	return &sh->lay[t->def.id];
}

void
crest_slot_format(const struct dtxn_table *t, void *slot, const void *value, void *arg)
{
	const struct crest_layout *lay = fmt_layout(arg, t);
	struct crest_hdr *h = slot;

	/* the store filled the slot header; ENs and versions start at 0 */
	h->lock = 0;
	memset(h->en, 0, sizeof(h->en));
	memset((char *)slot + CREST_HDR_SIZE, 0, lay->image_size - CREST_HDR_SIZE);
	crest_scatter(lay, slot, value, (uint32_t)((UINT64_C(1) << lay->n_cells) - 1));
}

void *
crest_mn_value(struct dtxn_db *db, const struct dtxn_table *t, void *mn_slot)
{
	const struct crest_shared *sh = db->cc_shared;
	const struct crest_layout *lay = &sh->lay[t->def.id];

	crest_gather(lay, mn_slot, sh->buf, (uint32_t)((UINT64_C(1) << lay->n_cells) - 1));
	return sh->buf;
}

int
crest_db_init(struct dtxn_db *db)
{
	struct crest_shared *sh;
	uint32_t max_value = 8;
	char err[200];

	/* the app checked before (dtxn_cc_check_cluster()): a library caller's mistake */
	if (crest_check_cluster(db->conf.cc_options != NULL ? db->conf.cc_options : "", 0, 0,
				dtxn_fabric_driver_name(db->fabric), err, sizeof(err)) != 0) {
		CREST_LOG(ERR, "%s", err);
		return -ENOTSUP;
	}
	sh = rte_zmalloc("crest_shared", sizeof(*sh), 0);
	if (sh == NULL)
		return -ENOMEM;
	crest_opts_of_db(db, &sh->opts);
	for (unsigned id = 0; id < DTXN_MAX_TABLES; id++) {
		const struct dtxn_table *t = dtxn_catalog_table(&db->cat, id);

		if (t == NULL)
			continue;
		crest_layout_make(&t->def, sh->opts.cell != 0, &sh->lay[id]);
		max_value = RTE_MAX(max_value, t->def.value_size);
	}
	sh->buf = rte_zmalloc("crest_mn_value", max_value, 8);
	if (sh->buf == NULL ||
	    crest_fence_init(&sh->rec, db->conf.n_coords,
			     dtxn_fabric_conf(db->fabric)->multi_process != 0) != 0) {
		rte_free(sh->buf);
		rte_free(sh);
		return -ENOMEM;
	}
	db->cc_shared = sh;
	return 0;
}

void
crest_db_fini(struct dtxn_db *db)
{
	struct crest_shared *sh = db->cc_shared;

	if (sh != NULL) {
		crest_fence_fini(&sh->rec);
		rte_free(sh->buf);
	}
	rte_free(sh);
	db->cc_shared = NULL;
}
