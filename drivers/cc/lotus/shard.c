/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Application-aware sharding, hybrid routing and pass-by-range resharding
 * (paper §4.2, §4.3; doc/guides/lotus.md, "Sharding, routing,
 * resharding").
 *
 * Shards. A key's shard is its low 12 bits (dtxn_key_shard()), which every
 * benchmark fills from its locality field (TPC-C warehouse, TATP
 * subscriber, SmallBank account, KVS key): 4096 shards. An index bucket's
 * lock belongs to the shard of the bucket index's low 12 bits.
 *
 * The shard -> CN map is the routing layer's (the paper assumes a
 * scalable, replicated one and leaves it out of scope): here one array
 * (struct lotus_route) in the process, or with CN processes in the
 * cluster's shared memzone LOTUS_ROUTE_MZ, read by every CN and by the
 * benchmark generators. It
 * starts as shard mod n_cn: "the key range is evenly distributed among
 * CNs" for any locality range a benchmark fills (105 warehouses would all
 * land on CN 0 under a split of 4096 shards into n_cn contiguous ranges).
 *
 * Routing. A read-only transaction runs wherever its generator drew it
 * (every CN's coordinators draw them alike: uniformly random CNs); a
 * read-write one runs on the owner of its first record's shard: the
 * generator draws its inputs again until lotus_route() says so
 * (dtxn_coord_routes_here()).
 *
 * Resharding, by the metrics worker (worker 0) of each CN, every
 * reshard_ms (100 ms): it writes the CN's average latency of the interval
 * to MN memory (a 64-byte mailbox at the end of coordinator i's log region
 * on MN 0 holds CN i's), and reads every CN's (the READ of one interval
 * is used at the next: no waiting in a poller). A CN whose latency is more
 * than reshard_pct above the average of the CNs for reshard_rounds
 * intervals in a row hands its hottest shard (most lock requests in the
 * interval) to the CN with the lowest latency: it marks the shard moving
 * (its lock requests are refused: the requester aborts and retries with
 * the new map), waits until no lock of the shard is held, drops the
 * shard's VT-cache entries, and stores the new owner in the map, which is
 * the receiver's notice and the routing layer's update at once. Where the
 * paper aborts holders after 10 ms, dtxn gives the move up (drain_ms) and
 * tries again later: nothing in the run can abort another CN's
 * transaction from outside it.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_memory.h>

#include "lotus_private.h"

#define SHARD_MAILBOX 64

/* The first owner of every shard. */
static void
shard_fill(const struct lotus_shared *sh, struct lotus_route *rt)
{
	for (unsigned s = 0; s < LOTUS_SHARDS; s++)
		rt->shard_owner[s] = sh->opts.shard_init_one ? 0 : (uint16_t)(s % sh->n_cn);
	__atomic_store_n(&rt->ready, 1, __ATOMIC_RELEASE);
}

int
lotus_shard_init(struct lotus_shared *sh, bool multi_process)
{
	bool first;

	if (!multi_process) {
		sh->rt = &sh->route;
		shard_fill(sh, sh->rt);
		return 0;
	}
	sh->rt = dtxn_fabric_shared_zone(LOTUS_ROUTE_MZ, sizeof(struct lotus_route), SOCKET_ID_ANY,
					 &first);
	if (sh->rt == NULL)
		return -ENOMEM;
	if (first) {
		shard_fill(sh, sh->rt);
		return 0;
	}
	/* the reserver fills it at once: control path, before any worker */
	for (unsigned ms = 0; !__atomic_load_n(&sh->rt->ready, __ATOMIC_ACQUIRE); ms++) {
		if (ms == 1000)
			return -ETIMEDOUT;
		rte_delay_us_sleep(1000);
	}
	return 0;
}

bool
lotus_route(const struct dtxn_coord *c, uint32_t table_id, uint64_t key)
{
	const struct lotus_shared *sh = lotus_shared_of(c->worker->db);

	RTE_SET_USED(table_id);
	if (sh->opts.routing == LOTUS_ROUTE_RANDOM)
		return true;
	return lotus_shard_owner(sh, dtxn_key_shard(key)) == c->worker->cn_node - sh->n_mn;
}

bool
lotus_shard_serves(const struct lotus_shared *sh, const struct lotus_cn *cn, uint16_t shard)
{
	return __atomic_load_n(&sh->rt->shard_owner[shard], __ATOMIC_SEQ_CST) == cn->idx;
}

void
lotus_shard_latency(struct lotus_cn *cn, uint64_t ns)
{
	__atomic_fetch_add(&cn->lat_sum_ns, ns, __ATOMIC_RELAXED);
	__atomic_fetch_add(&cn->lat_n, 1, __ATOMIC_RELAXED);
}

bool
lotus_overloaded(const uint64_t *lat, unsigned n, unsigned me, unsigned pct)
{
	uint64_t sum = 0, k = 0;

	if (me >= n || lat[me] == 0)
		return false;
	for (unsigned i = 0; i < n; i++)
		if (lat[i] != 0) {
			sum += lat[i];
			k++;
		}
	if (k < 2)
		return false;
	/* lat[me] > avg * (100 + pct) / 100, avg = sum / k */
	return (double)lat[me] * 100.0 * (double)k > (double)sum * (100.0 + pct);
}

int
lotus_coolest(const uint64_t *lat, unsigned n, unsigned me)
{
	int best = -1;

	for (unsigned i = 0; i < n; i++)
		if (i != me && lat[i] != 0 && (best < 0 || lat[i] < lat[best]))
			best = (int)i;
	return best;
}

/* Metrics mailbox of CN @p i on MN 0, or 0 without room. */
static dtxn_raddr_t
shard_mailbox(const struct lotus_shared *sh, unsigned i)
{
	const struct dtxn_catalog *cat = &sh->db->cat;
	dtxn_raddr_t ra = dtxn_store_log_raddr(cat, i, 0);

	return ra == 0 || cat->log_bytes < 2 * SHARD_MAILBOX ? 0 : ra + cat->log_bytes - SHARD_MAILBOX;
}

/* WRITE our metrics, READ everyone's (unsignaled: read at the next interval). */
static void
shard_exchange(struct dtxn_worker *w, struct lotus_shared *sh, struct lotus_cn *cn)
{
	struct dtxn_wr wr[1 + DTXN_MAX_NODES];
	unsigned k = 0;
	dtxn_raddr_t mine = shard_mailbox(sh, cn->idx);

	if (mine == 0 || w->qp[0] == NULL || cn->peer_metrics == NULL)
		return;
	memset(wr, 0, sizeof(wr));
	wr[k].opcode = DTXN_WR_WRITE;
	wr[k].flags = DTXN_WR_F_INLINE;
	wr[k].local = cn->metrics;
	wr[k].len = sizeof(cn->metrics);
	wr[k].raddr = mine;
	k++;
	for (unsigned i = 0; i < sh->n_cn; i++) {
		dtxn_raddr_t ra = shard_mailbox(sh, i);

		if (ra == 0 || i == cn->idx)
			continue;
		wr[k].opcode = DTXN_WR_READ;
		wr[k].local = &cn->peer_metrics[2 * i];
		wr[k].len = 2 * sizeof(uint64_t);
		wr[k].raddr = ra;
		wr[k - 1].next = &wr[k];
		k++;
	}
	if (dtxn_qp_post(w->qp[0], &wr[0]) != 0)
		LOTUS_LOG(DEBUG, "CN %u: metrics not exchanged this interval", cn->node);
}

/* The hottest shard @p cn owns, if it owns another one too; -1 otherwise. */
static int
shard_hottest(const struct lotus_shared *sh, const struct lotus_cn *cn)
{
	unsigned owned = 0;
	int best = -1;

	for (unsigned s = 0; s < LOTUS_SHARDS; s++) {
		if (__atomic_load_n(&sh->rt->shard_owner[s], __ATOMIC_ACQUIRE) != cn->idx)
			continue;
		owned++;
		if (cn->reqs[s] != 0 && (best < 0 || cn->reqs[s] > cn->reqs[best]))
			best = (int)s;
	}
	return owned > 1 ? best : -1;
}

/* Moves on a handover in progress: finish once drained, give up after drain_ms. */
static void
shard_handover(struct lotus_shared *sh, struct lotus_cn *cn, uint64_t now)
{
	const uint16_t s = (uint16_t)cn->moving;

	if (lotus_cn_dead(sh, cn->moving_to)) { /* the receiver died: keep it */
		__atomic_store_n(&sh->rt->shard_owner[s], cn->idx, __ATOMIC_SEQ_CST);
		cn->moving = -1;
		return;
	}
	if (__atomic_load_n(&cn->held[s], __ATOMIC_SEQ_CST) == 0) {
		if (cn->vtc != NULL)
			(void)lotus_vtc_drop_shard(cn->vtc, s);
		__atomic_store_n(&sh->rt->shard_owner[s], cn->moving_to, __ATOMIC_SEQ_CST);
		cn->moves++;
		LOTUS_LOG(INFO, "reshard: shard %u from CN %u to CN %u after %.3f ms", s, cn->idx,
			  cn->moving_to, (double)(now - cn->moving_since_ns) / 1e6);
		cn->moving = -1;
		return;
	}
	if (now - cn->moving_since_ns > (uint64_t)sh->opts.drain_ms * 1000000) {
		__atomic_store_n(&sh->rt->shard_owner[s], cn->idx, __ATOMIC_SEQ_CST);
		LOTUS_LOG(DEBUG, "reshard: shard %u still locked after %u ms; kept", s,
			  sh->opts.drain_ms);
		cn->moving = -1;
	}
}

unsigned
lotus_shard_poll(void *arg)
{
	struct dtxn_worker *w = arg;
	struct lotus_worker *lw = w->cc_priv;
	struct lotus_shared *sh = lotus_shared_of(w->db);
	struct lotus_cn *cn = lw->cn;
	uint64_t now = dtxn_now_ns(), sum, n, lat[DTXN_MAX_NODES];

	if (cn->moving >= 0)
		shard_handover(sh, cn, now);
	if (now < cn->next_ns)
		return 0;
	if (cn->next_ns == 0) {
		cn->next_ns = now + (uint64_t)sh->opts.reshard_ms * 1000000;
		return 0;
	}
	cn->next_ns = now + (uint64_t)sh->opts.reshard_ms * 1000000;
	sum = __atomic_exchange_n(&cn->lat_sum_ns, 0, __ATOMIC_RELAXED);
	n = __atomic_exchange_n(&cn->lat_n, 0, __ATOMIC_RELAXED);
	cn->metrics[0] = n != 0 ? sum / n : 0;
	cn->metrics[1]++;
	for (unsigned i = 0; i < sh->n_cn; i++) /* a dead CN has no measurement */
		lat[i] = lotus_cn_dead(sh, i) ? 0 : i == cn->idx ? cn->metrics[0] : cn->peer_metrics[2 * i];
	shard_exchange(w, sh, cn);
	if (sh->opts.reshard && cn->moving < 0) {
		cn->over = lotus_overloaded(lat, sh->n_cn, cn->idx, sh->opts.reshard_pct) ?
				   cn->over + 1 : 0;
		if (cn->over >= sh->opts.reshard_rounds) {
			int s = shard_hottest(sh, cn), to = lotus_coolest(lat, sh->n_cn, cn->idx);

			cn->over = 0;
			if (s >= 0 && to >= 0) {
				cn->moving = s;
				cn->moving_to = (uint16_t)to;
				cn->moving_since_ns = now;
				/* stop serving it: requests see the mark, or the drain sees them */
				__atomic_store_n(&sh->rt->shard_owner[s], cn->idx | LOTUS_SHARD_MOVING,
						 __ATOMIC_SEQ_CST);
				shard_handover(sh, cn, now);
			}
		}
	}
	memset(cn->reqs, 0, sizeof(cn->reqs));
	return 1;
}
