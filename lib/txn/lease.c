/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CN failure detection by leases in MN memory (doc/guides/cluster.md,
 * "Recovery"): per CN a heartbeat word, bumped by its agent's WRITE, and a
 * state word written by the survivor that recovered it; both in lib/store's
 * lease area on MN 0 (dtxn_store_lease_raddr()). Only fabric WRs touch
 * them; time only from dtxn_now_ns() (virtual on sim).
 */
#include <errno.h>
#include <string.h>

#include "txn_private.h"

/* Runs @p b and maps its outcome to 0 / -EIO. */
static int
lease_run(struct dtxn_batch *b)
{
	int rc = dtxn_batch_run(b);

	dtxn_batch_done(b);
	return rc == 0 ? 0 : -EIO;
}

int
dtxn_lease_beat(struct dtxn_coord *c, uint64_t *beat)
{
	dtxn_raddr_t ra;
	struct dtxn_batch b;

	if (c == NULL || beat == NULL)
		return -EINVAL;
	ra = dtxn_store_lease_raddr(&c->worker->db->cat, c->worker->cn_node, false);
	if (ra == 0)
		return -EINVAL;
	(*beat)++;
	dtxn_batch_init(&b, c);
	dtxn_batch_write(&b, ra, beat, 8, true);
	return lease_run(&b);
}

int
dtxn_lease_poll(struct dtxn_coord *c, struct dtxn_lease_view *v)
{
	uint64_t beat[DTXN_MAX_NODES], state[DTXN_MAX_NODES];
	const struct dtxn_fabric_conf *fc;
	const struct dtxn_catalog *cat;
	struct dtxn_batch b;
	uint64_t now;
	uint16_t n0;
	uint32_t len;
	int rc;

	if (c == NULL || v == NULL)
		return -EINVAL;
	cat = &c->worker->db->cat;
	fc = dtxn_fabric_conf(c->worker->db->fabric);
	n0 = fc->n_mn;
	len = (uint32_t)fc->n_cn * 8u;
	if (dtxn_store_lease_raddr(cat, n0, false) == 0)
		return -EINVAL;
	dtxn_batch_init(&b, c);
	dtxn_batch_read(&b, dtxn_store_lease_raddr(cat, n0, false), &beat[n0], len, true);
	dtxn_batch_read(&b, dtxn_store_lease_raddr(cat, n0, true), &state[n0], len, true);
	rc = lease_run(&b);
	if (rc != 0)
		return rc;
	now = dtxn_now_ns();
	for (uint16_t n = n0; n < n0 + fc->n_cn; n++) {
		if (!v->started || beat[n] != v->beat[n])
			v->moved_ns[n] = now;
		v->beat[n] = beat[n];
		v->state[n] = state[n];
	}
	v->n_mn = fc->n_mn;
	v->n_cn = fc->n_cn;
	v->started = true;
	return 0;
}

uint64_t
dtxn_lease_expired(const struct dtxn_lease_view *v, uint64_t now_ns, uint64_t lease_ns)
{
	uint64_t mask = 0;

	if (v == NULL || !v->started)
		return 0;
	for (uint16_t n = v->n_mn; n < v->n_mn + v->n_cn; n++)
		if (v->state[n] != DTXN_LEASE_STATE_RECOVERED && v->beat[n] != 0 &&
		    now_ns > v->moved_ns[n] && now_ns - v->moved_ns[n] > lease_ns)
			mask |= UINT64_C(1) << n;
	return mask;
}

uint16_t
dtxn_lease_recoverer(const struct dtxn_lease_view *v, uint64_t now_ns, uint64_t lease_ns)
{
	uint64_t dead = dtxn_lease_expired(v, now_ns, lease_ns);

	if (v == NULL || !v->started)
		return UINT16_MAX;
	for (uint16_t n = v->n_mn; n < v->n_mn + v->n_cn; n++)
		if (!(dead & (UINT64_C(1) << n)) && v->state[n] != DTXN_LEASE_STATE_RECOVERED)
			return n;
	return UINT16_MAX;
}

int
dtxn_lease_mark_recovered(struct dtxn_coord *c, uint16_t node)
{
	static const uint64_t recovered = DTXN_LEASE_STATE_RECOVERED;
	struct dtxn_batch b;
	dtxn_raddr_t ra;

	if (c == NULL)
		return -EINVAL;
	ra = dtxn_store_lease_raddr(&c->worker->db->cat, node, true);
	if (ra == 0)
		return -EINVAL;
	dtxn_batch_init(&b, c);
	dtxn_batch_write(&b, ra, &recovered, 8, true);
	return lease_run(&b);
}
