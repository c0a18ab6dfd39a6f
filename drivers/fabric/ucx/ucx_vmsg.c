/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ucx driver: the verb message's checks (ucx_vmsg.h). Pure.
 */
#include <errno.h>
#include <string.h>

#include "dtxn_fabric.h"
#include "ucx_vmsg.h"

_Static_assert(sizeof(struct ucx_vdesc) == 40, "ucx_vdesc is a wire layout");
_Static_assert(sizeof(struct ucx_vrep) == 24, "ucx_vrep is a wire layout");
_Static_assert(sizeof(struct ucx_vmsg_hdr) == 16, "ucx_vmsg_hdr is a wire layout");

int
ucx_vmsg_check(const uint8_t *data, size_t len, uint32_t n, struct ucx_vmsg_shape *shape)
{
	struct ucx_vmsg_shape sh = { 0, 0 };
	uint64_t need = (uint64_t)n * sizeof(struct ucx_vdesc);

	if (data == NULL || n == 0 || n > UCX_VMSG_MAX_VERBS || len > UCX_VMSG_MAX_BYTES ||
	    need > len)
		return -EPROTO;
	for (uint32_t i = 0; i < n; i++) {
		struct ucx_vdesc d;

		memcpy(&d, data + (size_t)i * sizeof(d), sizeof(d));
		if (d.quiet > 1 || (d.quiet && d.opcode != DTXN_WR_WRITE))
			return -EPROTO;
		switch (d.opcode) {
		case DTXN_WR_WRITE:
			need += d.len;
			break;
		case DTXN_WR_READ:
			if ((uint64_t)sh.read_bytes + d.len > UCX_VMSG_MAX_BYTES)
				return -EPROTO;
			sh.read_bytes += d.len;
			break;
		case DTXN_WR_CAS:
		case DTXN_WR_FAA:
			if (d.len != 8 || (d.off & 7) != 0)
				return -EPROTO;
			break;
		default:
			return -EPROTO;
		}
		if (!d.quiet)
			sh.n_answer++;
		if (need > len)
			return -EPROTO;
	}
	if (need != len)
		return -EPROTO;
	if (shape != NULL)
		*shape = sh;
	return 0;
}

int
ucx_vdesc_in_region(const struct ucx_vdesc *d, uint64_t region_len)
{
	return region_len != 0 && d->off <= region_len && d->len <= region_len - d->off;
}

size_t
ucx_vrep_bytes(const struct ucx_vmsg_shape *shape)
{
	return (size_t)shape->n_answer * sizeof(struct ucx_vrep) + shape->read_bytes;
}
