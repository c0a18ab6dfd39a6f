/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Columns (cells) of a table's value (doc/guides/store.md, "Columns and
 * cells"): declaring them from a row struct's field offsets, their place
 * in the value, the bytes of a set of them (a cell mask), and the check of
 * a definition's columns and update shapes.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "store_private.h"

int
dtxn_table_def_set_columns(struct dtxn_table_def *def, const uint32_t *offsets, unsigned n)
{
	unsigned c;

	if (def == NULL || offsets == NULL || n == 0 || n > DTXN_TABLE_MAX_COLUMNS ||
	    offsets[0] != 0)
		return -EINVAL;
	for (c = 0; c < n; c++) {
		uint32_t end = c + 1 < n ? offsets[c + 1] : def->value_size;

		if (end <= offsets[c] || end - offsets[c] > UINT16_MAX)
			return -EINVAL;
	}
	for (c = 0; c < n; c++)
		def->column_size[c] = (uint16_t)((c + 1 < n ? offsets[c + 1] : def->value_size) -
						 offsets[c]);
	def->n_columns = n;
	return 0;
}

unsigned
dtxn_table_n_cells(const struct dtxn_table_def *def)
{
	return def->n_columns != 0 ? def->n_columns : 1;
}

uint32_t
dtxn_table_cells_all(const struct dtxn_table_def *def)
{
	unsigned n = dtxn_table_n_cells(def);

	return n >= 32 ? UINT32_MAX : (UINT32_C(1) << n) - 1;
}

uint32_t
dtxn_table_cells_norm(const struct dtxn_table_def *def, uint32_t cells)
{
	uint32_t all = dtxn_table_cells_all(def);

	cells &= all;
	return cells != 0 ? cells : all;
}

void
dtxn_table_cell(const struct dtxn_table_def *def, unsigned c, uint32_t *off, uint32_t *size)
{
	uint32_t o = 0;
	unsigned k;

	if (def->n_columns == 0) {
		*off = 0;
		*size = def->value_size;
		return;
	}
	for (k = 0; k < c; k++)
		o += def->column_size[k];
	*off = o;
	*size = def->column_size[c];
}

uint32_t
dtxn_table_cells_bytes(const struct dtxn_table_def *def, uint32_t cells)
{
	unsigned c, n = dtxn_table_n_cells(def);
	uint32_t len = 0;

	for (c = 0; c < n; c++)
		if (cells & (UINT32_C(1) << c))
			len += def->n_columns != 0 ? def->column_size[c] : def->value_size;
	return len;
}

int
store_check_columns(const struct dtxn_table_def *def)
{
	uint32_t all = dtxn_table_cells_all(def), total = 0;
	uint64_t sum = 0;

	if (def->n_columns > DTXN_TABLE_MAX_COLUMNS) {
		STORE_LOG(ERR, "table %s: %u columns, expected 0..%u", def->name, def->n_columns,
			  DTXN_TABLE_MAX_COLUMNS);
		return -EINVAL;
	}
	for (uint32_t c = 0; c < def->n_columns; c++) {
		if (def->column_size[c] == 0) {
			STORE_LOG(ERR, "table %s: column %u has 0 bytes", def->name, c);
			return -EINVAL;
		}
		sum += def->column_size[c];
	}
	if (def->n_columns != 0 && sum != def->value_size) {
		STORE_LOG(ERR, "table %s: columns sum to %" PRIu64 " bytes, value_size is %u",
			  def->name, sum, def->value_size);
		return -EINVAL;
	}
	if ((def->flags & ~(DTXN_TABLE_F_NO_UPDATE | DTXN_TABLE_F_READ_ONLY |
			    DTXN_TABLE_F_DENSE_IDS | DTXN_TABLE_F_DIRECT_INDEX |
			    DTXN_TABLE_F_DELTA_BY_SLOT | DTXN_TABLE_F_RECLAIM)) != 0) {
		STORE_LOG(ERR, "table %s: unknown flags 0x%x", def->name, def->flags);
		return -EINVAL;
	}
	if ((def->flags & DTXN_TABLE_F_DIRECT_INDEX) && !(def->flags & DTXN_TABLE_F_DENSE_IDS)) {
		STORE_LOG(ERR, "table %s: a direct index needs dense key ids (DTXN_TABLE_F_DENSE_IDS)",
			  def->name);
		return -EINVAL;
	}
	if (def->n_updates > DTXN_TABLE_MAX_UPDATES) {
		STORE_LOG(ERR, "table %s: %u update shapes, expected 0..%u", def->name,
			  def->n_updates, DTXN_TABLE_MAX_UPDATES);
		return -EINVAL;
	}
	for (uint32_t u = 0; u < def->n_updates; u++) {
		const struct dtxn_update_shape *s = &def->updates[u];

		if (s->cells == 0 || (s->cells & ~all) != 0 || s->permille == 0 ||
		    s->permille > 1000) {
			STORE_LOG(ERR, "table %s: update shape %u (cells 0x%x, %u permille): "
				  "expected cells of the table and 1..1000 permille",
				  def->name, u, s->cells, s->permille);
			return -EINVAL;
		}
		total += s->permille;
	}
	if (total > 1000) {
		STORE_LOG(ERR, "table %s: update shapes sum to %u permille, expected <= 1000",
			  def->name, total);
		return -EINVAL;
	}
	return 0;
}

uint32_t
dtxn_table_cells_diff(const struct dtxn_table_def *def, uint32_t cells, const void *a,
		      const void *b)
{
	unsigned c, n = dtxn_table_n_cells(def);
	uint32_t diff = 0, off, size;

	for (c = 0; c < n; c++) {
		if ((cells & (UINT32_C(1) << c)) == 0)
			continue;
		dtxn_table_cell(def, c, &off, &size);
		if (memcmp((const uint8_t *)a + off, (const uint8_t *)b + off, size) != 0)
			diff |= UINT32_C(1) << c;
	}
	return diff;
}

void
dtxn_table_cells_copy(const struct dtxn_table_def *def, uint32_t cells, const void *src,
		      void *dst)
{
	unsigned c, n = dtxn_table_n_cells(def);
	uint32_t off, size;

	for (c = 0; c < n; c++) {
		if ((cells & (UINT32_C(1) << c)) == 0)
			continue;
		dtxn_table_cell(def, c, &off, &size);
		memcpy((uint8_t *)dst + off, (const uint8_t *)src + off, size);
	}
}

/* Packs (to_seg) or unpacks the cells of @p cells between a value and a segment. */
static uint32_t
cells_move(const struct dtxn_table_def *def, uint32_t cells, uint8_t *value, uint8_t *seg,
	   bool to_seg)
{
	unsigned c, n = dtxn_table_n_cells(def);
	uint32_t pos = 0, off, size;

	for (c = 0; c < n; c++) {
		if ((cells & (UINT32_C(1) << c)) == 0)
			continue;
		dtxn_table_cell(def, c, &off, &size);
		if (to_seg)
			memcpy(seg + pos, value + off, size);
		else
			memcpy(value + off, seg + pos, size);
		pos += size;
	}
	return pos;
}

uint32_t
dtxn_table_cells_pack(const struct dtxn_table_def *def, uint32_t cells, const void *value,
		      void *seg)
{
	return cells_move(def, cells, (uint8_t *)(uintptr_t)value, seg, true);
}

uint32_t
dtxn_table_cells_unpack(const struct dtxn_table_def *def, uint32_t cells, const void *seg,
			void *value)
{
	return cells_move(def, cells, value, (uint8_t *)(uintptr_t)seg, false);
}
