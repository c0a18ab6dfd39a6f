/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Scythe's record format: [slot header][lower][queued_ts][upper][version]
 * [value] (scythe_private.h: one word per writer, so that the MN CPU's
 * stores and the holders' FAAs never meet on one word).
 */
#include <string.h>

#include <rte_common.h>

#include "scythe_private.h"

uint32_t
scythe_slot_size(uint32_t value_size)
{
	return SCYTHE_VALUE_OFF + RTE_ALIGN_CEIL(value_size, 8);
}

void
scythe_slot_format(const struct dtxn_table *t, void *slot, const void *value, void *arg)
{
	struct scythe_slot *s = slot;

	RTE_SET_USED(arg);
	s->lower = 0;
	s->queued_ts = 0;
	s->upper = 0;
	s->version = 0;
	memcpy(s->value, value, t->def.value_size);
}

void *
scythe_slot_value(const struct dtxn_table *t, void *slot)
{
	RTE_SET_USED(t);
	return (char *)slot + SCYTHE_VALUE_OFF;
}
