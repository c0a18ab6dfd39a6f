/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DTXN_RRPC_PEER_H
#define DTXN_RRPC_PEER_H

/**
 * @file
 * RRPC internals shared by the CN side (rrpc.c) and the MN side
 * (rrpc_mn.c), never installed: the domain (where every ring is), and one
 * Rocket, i.e. an outbound ring and its inbound twin between two
 * endpoints (rrpc_peer.c: appending, flushing as one chain of WRITEs,
 * taking complete buckets with the credit they carry).
 *
 * Rings in a CN's registered memory (the domain's): ring of worker k for
 * messages from node a at rrpc_ring_off(k, a), for CNs and MNs alike.
 * Rings in an MN's region (its message area, dtxn_catalog msg_off): ring
 * of CN worker (c, k) at rrpc_mn_ring_off(c, k), c = CN node - n_mn. Each
 * ring: one 64-byte control line (its first word: the credit of the
 * opposite ring, written by the ring's sender), then the buckets.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dtxn_fabric.h"
#include "dtxn_rrpc.h"
#include "dtxn_sched.h"
#include "rrpc_private.h"

/** Bytes of a ring's control line. */
#define RRPC_CTRL_BYTES 64u

extern int dtxn_rrpc_logtype;
#define RRPC_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_##level, dtxn_rrpc_logtype, "dtxn.rrpc: " fmt "\n", ##__VA_ARGS__)

struct dtxn_rrpc_domain;

/** on_write's argument for one CN's memory. */
struct rrpc_row {
	const struct dtxn_rrpc_domain *d;
	unsigned cn_idx;                   /**< node - n_mn */
};

struct dtxn_rrpc_domain {
	struct dtxn_fabric *f;
	struct rrpc_row rows[DTXN_MAX_NODES];
	unsigned n_nodes;
	unsigned n_mn;
	unsigned max_workers;
	unsigned nb;                       /**< buckets per ring */
	uint64_t mn_ring_off;              /**< MN regions' message area; 0: no MN rings */
	uint32_t zc_bytes;                 /**< mode (c): reply buffer per slot */
	unsigned zc_eps;                   /**< endpoints per worker with such buffers */
	uint64_t zc_off;                   /**< the buffers' offset in a CN's memory */
	uint64_t ring_bytes;
	uint64_t region_bytes;             /**< per CN */
	uint8_t *mem[DTXN_MAX_NODES];      /**< CN message memory, by node id */
	bool shared;                       /**< multi-process: mem[] are memzones (rrpc_shared.c) */
	struct dtxn_rrpc **by_worker;      /**< [cn - n_mn][k] */
};

/** Offset of worker @p k's ring for messages from node @p src, in its CN's memory. */
static inline uint64_t
rrpc_ring_off(const struct dtxn_rrpc_domain *d, unsigned k, unsigned src)
{
	return ((uint64_t)k * d->n_nodes + src) * d->ring_bytes;
}

/** Offset of CN worker (@p cn_idx, @p k)'s ring in every MN's region. */
static inline uint64_t
rrpc_mn_ring_off(const struct dtxn_rrpc_domain *d, unsigned cn_idx, unsigned k)
{
	return d->mn_ring_off + ((uint64_t)cn_idx * d->max_workers + k) * d->ring_bytes;
}

/** What a Rocket's owner lends it: ring size, CPU model, counters. */
struct rrpc_io {
	unsigned nb;                       /**< buckets per ring */
	struct dtxn_sched *sched;          /**< charged in virtual time; NULL: none */
	struct dtxn_rrpc_stats *st;
};

/** One outbound ring and its inbound twin: the Rocket to one node (one CN worker). */
struct rrpc_peer {
	uint16_t node;
	bool own_qp;                       /**< the peer's QP is destroyed with it */
	struct dtxn_qp *qp;
	/* outbound: this side -> node */
	dtxn_raddr_t tx_ring;              /**< the ring's first bucket */
	uint32_t sealed, posted, credit;
	bool open;                         /**< stage[sealed % S] holds messages */
	bool dirty;
	struct rrpc_bucket *stage;         /**< 2 * nb */
	const uint64_t *credit_word;       /**< written by node: its consumption */
	/* inbound: node -> this side */
	uint8_t *rx_ring;                  /**< first bucket */
	uint32_t cons, acked;
	dtxn_raddr_t credit_raddr;         /**< node's word for our consumption */
	uint64_t credit_val;
	struct dtxn_wr *wrs;               /**< nb + 1 */
	/* mode (c), server side: the staging copy of each zero-copy reply to node, by the
	 * requester's (endpoint, slot): a slot is reused only after its reply was consumed,
	 * which is after the data WRITE (posted before the reply's bucket) landed */
	uint8_t *zc_stage;
};

/**
 * Allocates @p p's staging buckets and WRs (@p io->nb), on @p socket_id.
 * @return 0 or -ENOMEM.
 */
int rrpc_peer_alloc(const struct rrpc_io *io, struct rrpc_peer *p, int socket_id);

/** Frees what rrpc_peer_alloc() took and the QP if the peer owns it. */
void rrpc_peer_free(struct rrpc_peer *p);

/**
 * Appends one message to the Rocket's open bucket, sealing it and opening
 * the next when full. @return 0, or -EAGAIN (every staging bucket is
 * taken: wait for credit), or -EINVAL (too long).
 */
int rrpc_peer_append(const struct rrpc_io *io, struct rrpc_peer *p,
		     const struct rrpc_msg_hdr *h, const void *payload);

/**
 * Posts what the Rocket may send now as one chain of WRITEs (one
 * doorbell): the sealed buckets in credit, each carrying our consumption
 * of the reverse ring; or, with nothing to send, a standalone credit
 * WRITE once half a ring was consumed unacknowledged.
 */
void rrpc_peer_flush(const struct rrpc_io *io, struct rrpc_peer *p);

/** Whether rrpc_peer_flush() has something to post. */
static inline bool
rrpc_peer_needs_flush(const struct rrpc_io *io, const struct rrpc_peer *p)
{
	return p->dirty || p->cons - p->acked >= io->nb / 2;
}

/**
 * Takes the complete buckets of @p p's inbound ring in order: the credit
 * each carries, @p fn for each message (rrpc_bucket_parse()), then zeroes
 * the bucket. A bucket with an impossible length is dropped (counted bad).
 * @return buckets taken.
 */
unsigned rrpc_peer_take(const struct rrpc_io *io, struct rrpc_peer *p, rrpc_msg_fn fn, void *arg);

/** Bytes of an MN's RRPC service besides its Rockets and QPs (rrpc_mn.c; footprints). */
size_t rrpc_mn_size(void);

/**
 * Multi-process, the CN side: reserves (or, for a second worker, looks up)
 * CN @p cn's message memory as a memzone the MN processes can find, and
 * sets d->mem[@p cn]. Main lcore or the worker's, before its rrpc posts.
 * @return 0; -ENOMEM (no memory), -EEXIST (a memzone of that name but
 *   too small), or the memzone's -errno.
 */
int rrpc_shared_own(struct dtxn_rrpc_domain *d, uint16_t cn, int socket_id);

/**
 * Multi-process, the MN side: looks up CN @p cn's message memory
 * (rrpc_shared_own() in the CN process) and registers its first @p bytes
 * with fabric @p f, so the MN's replies can be WRITten there.
 * @return 0; -ENOENT (the CN has not reserved it yet: try again later);
 *   -EINVAL (smaller than @p bytes); dtxn_fabric_cn_mr_reg()'s errors.
 */
int rrpc_shared_attach(struct dtxn_fabric *f, uint16_t cn, uint64_t bytes);

#endif /* DTXN_RRPC_PEER_H */
