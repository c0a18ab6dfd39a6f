/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The timestamp service "in the compute pool" (Motor §5, "Timestamp
 * Generation"; Lotus §5): one 64-bit counter in the memory of one CN, the
 * server CN. Its own coordinators add to it with a CPU atomic (no round
 * trip); the other CNs' coordinators send one message per lib/tso batch,
 * and the server's handler adds while the request is in flight. Either
 * way the add happens after the request began and before its reply, so a
 * timestamp exceeds every one handed out before it was asked for: the
 * real-time order dtxn_tso.h promises, for every coordinator of every CN.
 *
 * The handler is not idempotent on purpose: a resent request (lib/rpc is
 * at-least-once) takes a second range; the first is never handed out
 * (its reply is dropped as stale), which leaves a gap, never a duplicate.
 */
#include <errno.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "dtxn_tso.h"
#include "tso_private.h"

struct dtxn_tso_cn {
	uint64_t counter;          /**< the service's counter; read-modify-write by atomics only */
	uint16_t server_node;
	uint8_t rpc_type;
	uint64_t local;            /**< adds by the server CN's own workers (statistics) */
	uint64_t remote;           /**< adds by requests from other CNs */
};

struct dtxn_tso_cn *
dtxn_tso_cn_create(uint16_t server_node, uint8_t rpc_type, int socket_id)
{
	struct dtxn_tso_cn *s;

	if (rpc_type >= DTXN_RPC_TYPES) {
		rte_errno = EINVAL;
		return NULL;
	}
	s = rte_zmalloc_socket("dtxn_tso_cn", sizeof(*s), RTE_CACHE_LINE_SIZE, socket_id);
	if (s == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	s->server_node = server_node;
	s->rpc_type = rpc_type;
	return s;
}

void
dtxn_tso_cn_destroy(struct dtxn_tso_cn *s)
{
	rte_free(s);
}

static uint64_t
tso_cn_add(struct dtxn_tso_cn *s, uint64_t n, uint64_t *stat)
{
	__atomic_fetch_add(stat, 1, __ATOMIC_RELAXED);
	return __atomic_fetch_add(&s->counter, n, __ATOMIC_SEQ_CST);
}

/* The server's handler: [n u64] -> [old u64]. */
static int
tso_cn_handle(void *arg, uint16_t src_node, const void *req, uint32_t len, void *resp)
{
	struct dtxn_tso_cn *s = arg;
	uint64_t n, old;

	RTE_SET_USED(src_node);
	if (len != sizeof(n))
		return -1;
	memcpy(&n, req, sizeof(n));
	if (n == 0 || n > DTXN_TSO_BATCH_MAX)
		return -1;
	old = tso_cn_add(s, n, &s->remote);
	memcpy(resp, &old, sizeof(old));
	return (int)sizeof(old);
}

int
dtxn_tso_cn_register(struct dtxn_tso_cn *s, struct dtxn_rpc *rpc)
{
	if (s == NULL || rpc == NULL)
		return -EINVAL;
	if (dtxn_rpc_worker(rpc)->cn_node != s->server_node)
		return 0; /* only the server answers */
	return dtxn_rpc_register(rpc, s->rpc_type, tso_cn_handle, s);
}

int
dtxn_tso_cn_fetch_add_lc(struct dtxn_tso_cn *s, const struct dtxn_coord *c,
			 struct dtxn_rpc_ep *ep, uint64_t n, uint64_t *old)
{
	if (s == NULL || c == NULL || old == NULL || n == 0)
		return -EINVAL;
	if (c->worker->cn_node == s->server_node) {
		*old = tso_cn_add(s, n, &s->local);
		return 0;
	}
	if (ep == NULL)
		return -EIO;
	return tso_rpc_add_lc(ep, s->server_node, s->rpc_type, n, old);
}

void
dtxn_tso_cn_stats(const struct dtxn_tso_cn *s, uint64_t *counter, uint64_t *local,
		  uint64_t *remote)
{
	if (s == NULL)
		return;
	if (counter != NULL)
		*counter = __atomic_load_n(&s->counter, __ATOMIC_ACQUIRE);
	if (local != NULL)
		*local = __atomic_load_n(&s->local, __ATOMIC_RELAXED);
	if (remote != NULL)
		*remote = __atomic_load_n(&s->remote, __ATOMIC_RELAXED);
}
