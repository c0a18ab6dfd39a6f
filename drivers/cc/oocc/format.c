/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * OOCC's record format (oocc.md §2 "Layout", §7):
 *
 *   [slot header 16 B][version][value, 8-aligned][tail version][lock]
 *
 * The lock is the slot's last 8-byte word: the commit WRITE, which covers
 * the whole slot, places it last (RDMA WRITEs land in increasing address
 * order, as lib/fabric's emulation does) and so updates and unlocks the
 * record in one operation (§V). version and tail version hold the
 * writer's txn id; they differ in a READ that overlapped a commit WRITE.
 */
#include <string.h>

#include <rte_common.h>

#include "oocc_private.h"

uint32_t
oocc_slot_size(uint32_t value_size)
{
	return OOCC_VALUE_OFF + RTE_ALIGN_CEIL(value_size, 8) + OOCC_FOOTER;
}

void
oocc_slot_format(const struct dtxn_table *t, void *slot, const void *value, void *arg)
{
	struct oocc_slot *s = slot;
	struct oocc_footer *f = oocc_footer_of(t, slot);

	RTE_SET_USED(arg);
	s->version = 0;
	memcpy(s->value, value, t->def.value_size);
	f->tail = 0;
	f->lock = 0;
}

void *
oocc_slot_value(const struct dtxn_table *t, void *slot)
{
	RTE_SET_USED(t);
	return (char *)slot + OOCC_VALUE_OFF;
}

bool
oocc_slot_torn(const struct dtxn_table *tab, const void *slot)
{
	const struct oocc_slot *s = slot;

	return s->version != oocc_footer_of(tab, (void *)(uintptr_t)slot)->tail;
}

enum oocc_lock_state
oocc_lock_state(uint64_t lock, uint64_t self_id, bool delayed_lock)
{
	if (lock == 0 || (lock & ~OOCC_WLOCK) == self_id)
		return OOCC_LOCK_FREE;
	if ((lock & OOCC_WLOCK) != 0 || !delayed_lock)
		return OOCC_LOCK_WRITE;
	return OOCC_LOCK_INTENT;
}
