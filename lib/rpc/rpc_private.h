/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DTXN_RPC_PRIVATE_H
#define DTXN_RPC_PRIVATE_H

/**
 * @file
 * lib/rpc internals (never installed): the wire format. rpc.c sends and
 * receives; rpc_msg.c decodes a received message (and nothing else, so
 * that test/fuzz/fuzz_rpc.c can feed it any bytes).
 */

#include <stdint.h>

#include "dtxn_rpc.h"

#define RPC_MAGIC 0xd7c5
#define RPC_KIND_REQ 1
#define RPC_KIND_RESP 2

/** Message header. */
struct dtxn_rpc_hdr {
	uint16_t magic;
	uint8_t kind;      /**< RPC_KIND_* */
	uint8_t type;      /**< handler */
	uint16_t ep;       /**< requester's endpoint */
	uint8_t slot;      /**< requester's slot */
	uint8_t rsvd;
	uint32_t seq;      /**< slot's sequence number */
	uint16_t worker;   /**< sender's worker index (pairing check) */
	uint16_t len;      /**< payload bytes */
};
_Static_assert(sizeof(struct dtxn_rpc_hdr) == 16, "rpc header");

/** Largest message, bytes: a header and the largest request. */
#define RPC_MSG_MAX (sizeof(struct dtxn_rpc_hdr) + DTXN_RPC_REQ_MAX)

/** A posted receive buffer, for a CN's rpc (owner: its peer) or an MN's server (its QP). */
struct rpc_rbuf {
	struct dtxn_wr wr;
	void *owner;
	uint8_t data[RPC_MSG_MAX] __attribute__((aligned(8)));
};

/**
 * Allocates @p n receive buffers owned by @p owner, chains their RECV WRs
 * and posts them on @p qp (rpc_rbuf.c). Main lcore or the QP's lcore.
 * @param rbufs  out: the buffers (rte_free() them after the QP is gone).
 * @return 0, -ENOMEM, or dtxn_qp_post_recv()'s error (*rbufs is then set).
 */
int rpc_rbufs_post(struct dtxn_qp *qp, void *owner, unsigned n, int socket_id,
		   struct rpc_rbuf **rbufs);

/**
 * Decodes a received message: @p len bytes at @p msg (any alignment).
 * Accepts it only if it holds a whole header with the magic, a known
 * kind, a handler type < DTXN_RPC_TYPES, the receiving worker's index
 * @p worker (QPs pair workers of the same index), and a payload of
 * hdr.len bytes that fits in @p len. Reads nothing past @p len. Any
 * thread.
 * @param h  out: the header (copied, so the caller may read it aligned).
 * @return RPC_KIND_REQ or RPC_KIND_RESP, or -EBADMSG (drop the message).
 */
int rpc_msg_decode(const void *msg, uint32_t len, uint16_t worker, struct dtxn_rpc_hdr *h);

/** A registered request handler (rpc_handler.c; both transports keep a table of DTXN_RPC_TYPES). */
struct rpc_handler {
	dtxn_rpc_handler_fn fn;
	void *arg;
};

/**
 * Registers @p fn (with @p arg) for requests of @p type in table @p tab.
 * Main lcore, before traffic.
 * @return 0, -EINVAL (fn NULL or type >= DTXN_RPC_TYPES), -EEXIST (taken).
 */
int rpc_handler_set(struct rpc_handler *tab, uint8_t type, dtxn_rpc_handler_fn fn, void *arg);

/** rpc_handler_run(): the handler wants no reply sent. */
#define RPC_HANDLER_NO_REPLY (-1)
/** rpc_handler_run(): no handler for the type, or a reply too long (logged); count it bad. */
#define RPC_HANDLER_BAD (-2)

/**
 * Runs the handler of @p type (< DTXN_RPC_TYPES, checked by the decoder)
 * on a request of @p len bytes at @p payload from node @p src; its reply
 * goes to @p out (DTXN_RPC_RESP_MAX bytes). The worker's lcore.
 * @param logtype  the transport's rte_log type, for the two errors.
 * @return reply bytes (0..DTXN_RPC_RESP_MAX), RPC_HANDLER_NO_REPLY, or
 *   RPC_HANDLER_BAD.
 */
int rpc_handler_run(const struct rpc_handler *tab, uint8_t type, uint16_t src, const void *payload,
		    uint16_t len, void *out, int logtype);

#endif /* DTXN_RPC_PRIVATE_H */
