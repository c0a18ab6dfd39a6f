/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * FORD's record format: [slot header][lock][version][value].
 */
#include <string.h>

#include <rte_common.h>

#include "ford_private.h"

uint32_t
ford_slot_size(uint32_t value_size)
{
	return FORD_VALUE_OFF + RTE_ALIGN_CEIL(value_size, 8);
}

void
ford_slot_format(const struct dtxn_table *t, void *slot, const void *value, void *arg)
{
	struct ford_slot *s = slot;

	RTE_SET_USED(arg);
	s->lock = 0;
	s->version = 0;
	memcpy(s->value, value, t->def.value_size);
}

void *
ford_slot_value(const struct dtxn_table *t, void *slot)
{
	RTE_SET_USED(t);
	return (char *)slot + FORD_VALUE_OFF;
}
