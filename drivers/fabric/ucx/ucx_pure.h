/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DTXN_UCX_PURE_H
#define DTXN_UCX_PURE_H

/**
 * @file
 * The ucx driver's pure part (doc/guides/ucx.md, "Connecting"): the connect
 * message two dtxn processes exchange over the control TCP connection
 * before their UCP endpoints exist. It builds without UCX, so the unit test
 * (test/unit/test_ucx.c) and the fuzz harness (test/fuzz/fuzz_ucx_msg.c)
 * run on every machine. Every call is thread-safe (no state but the
 * caller's).
 *
 * A connecting process sends HELLO (who it is, who it wants, the digest of
 * the run it was started for); the listener answers ACCEPT (the UCP worker
 * address that serves the node and, for an MN, its region's base, length
 * and packed rkey) or REFUSE (a reason). A survivor that declared a CN
 * dead sends FENCE (the CN in @c base) to every MN, which cuts that CN's
 * connections and answers FENCED (doc/guides/ucx.md, "Fencing").
 *
 * Incarnations (version 2; doc/guides/ucx.md, "Connecting"): a CN's HELLO
 * to an MN carries the incarnation of the process asking, or
 * UCX_INC_NEXT when it does not know it yet (a CN process's first HELLO,
 * to MN 0): the MN then admits the CN's first incarnation (0), or, once
 * its admitted one was fenced, the next one, and says which in its
 * ACCEPT. A REFUSE of reason FENCED carries the incarnation that was
 * fenced. Layout, little-endian, version 2:
 *
 *    0 magic u32 "DXUC" | 4 version u16 | 6 kind u8 | 7 reason u8
 *    8 length u32 (whole message, bytes)
 *   12 src_node u16 | 14 dst_node u16 | 16 n_mn u16 | 18 n_cn u16
 *   20 waddr_len u16 | 22 rkey_len u16
 *   24 digest u64 | 32 base u64 | 40 region_len u64
 *   48 incarnation u32 | 52 reserved u32 (zero)
 *   56 worker address (waddr_len bytes), then the packed rkey (rkey_len)
 */

#include <stddef.h>
#include <stdint.h>

#include "dtxn_fabric.h"

/** "DXUC" read as a little-endian u32. */
#define UCX_MSG_MAGIC UINT32_C(0x43555844)
/** The only version this build speaks (2: the incarnation at 48). */
#define UCX_MSG_VERSION 2
/** Bytes before the variable part. */
#define UCX_MSG_HDR_BYTES 56
/** HELLO's incarnation of a CN process that does not know its own yet:
 *  the MN admits the next one (ucx_pure.h's header comment). */
#define UCX_INC_NEXT UINT32_MAX
/** Largest UCP worker address carried, bytes (UCX 1.13 over TCP: ~100 B). */
#define UCX_MSG_WADDR_MAX 4096
/** Largest packed rkey carried, bytes. */
#define UCX_MSG_RKEY_MAX 4096
/** Largest message, bytes. */
#define UCX_MSG_MAX (UCX_MSG_HDR_BYTES + UCX_MSG_WADDR_MAX + UCX_MSG_RKEY_MAX)

enum ucx_msg_kind {
	UCX_MSG_HELLO = 1,   /**< connecting process -> listener */
	UCX_MSG_ACCEPT = 2,  /**< listener -> connecting process */
	UCX_MSG_REFUSE = 3,  /**< listener -> connecting process: see reason */
	UCX_MSG_FENCE = 4,   /**< a survivor -> an MN's listener: refuse CN @c base from now on */
	UCX_MSG_FENCED = 5,  /**< the MN's answer: done (@c base: the CN, @c region_len: connections cut) */
};

/** Why a listener refused (REFUSE's reason). */
enum ucx_msg_reason {
	UCX_REFUSE_NONE = 0,
	UCX_REFUSE_DIGEST = 1,   /**< started for another run (bench, protocol, catalog, version) */
	UCX_REFUSE_SHAPE = 2,    /**< another count of MNs or CNs */
	UCX_REFUSE_NODE = 3,     /**< the node asked for is not served by this process */
	UCX_REFUSE_NOT_READY = 4,/**< an MN not published yet (still loading): ask again */
	UCX_REFUSE_FENCED = 5,   /**< the asking node was fenced (declared dead), or is an
				  *   incarnation older than the one admitted */
	UCX_REFUSE_PREDECESSOR = 6, /**< another incarnation of the asking CN is admitted and not
				     *   fenced yet (its death not declared): ask again */
	UCX_REFUSE_MAX = UCX_REFUSE_PREDECESSOR,
};

/** A decoded message; waddr and rkey point into the buffer it was decoded from. */
struct ucx_msg {
	uint8_t kind;        /**< enum ucx_msg_kind */
	uint8_t reason;      /**< enum ucx_msg_reason (REFUSE only, else 0) */
	uint16_t src_node;   /**< sender's node id */
	uint16_t dst_node;   /**< node the HELLO asks for / the ACCEPT serves */
	uint16_t n_mn, n_cn; /**< the cluster's shape as the sender knows it */
	uint64_t digest;     /**< the run's digest (ucx_msg_digest()) */
	uint64_t base;       /**< ACCEPT of an MN: remote address of region offset 0;
			      *   FENCE, FENCED: the CN fenced */
	uint64_t region_len; /**< ACCEPT of an MN: region bytes; FENCED: connections cut; 0 otherwise */
	uint32_t incarnation;/**< HELLO: the asking process's incarnation of its node, or
			      *   UCX_INC_NEXT; ACCEPT of an MN: the incarnation admitted;
			      *   REFUSE FENCED: the one fenced; 0 otherwise */
	const void *waddr;   /**< ACCEPT: UCP worker address, waddr_len bytes */
	uint16_t waddr_len;
	const void *rkey;    /**< ACCEPT of an MN: packed rkey, rkey_len bytes */
	uint16_t rkey_len;
};

/**
 * Encodes @p m into @p buf.
 * @return the message's length (bytes, <= UCX_MSG_MAX), or -EMSGSIZE
 *   (@p len too small), -EINVAL (@p m fails a check ucx_msg_decode()
 *   applies).
 */
int ucx_msg_encode(uint8_t *buf, size_t len, const struct ucx_msg *m);

/**
 * Decodes and checks a message (untrusted input: every field is checked
 * before it is used).
 *
 * @param buf  the bytes received; @p len of them.
 * @return 0; -EMSGSIZE (fewer bytes than the header or its length field,
 *   or more than the length field says), -EPROTO (bad magic, unknown kind
 *   or reason, a length field that disagrees with waddr_len + rkey_len,
 *   a variable part over its maximum, node ids >= DTXN_MASK_NODES or equal,
 *   n_mn or n_cn 0 or n_mn + n_cn over DTXN_MASK_NODES, a HELLO with an
 *   address, keys or region, an ACCEPT without a worker address, a region
 *   of zero length or whose end overflows, an rkey without a region or a
 *   region without an rkey, a REFUSE with a payload or without a reason,
 *   a FENCE or FENCED with a payload, a reason or a node >= DTXN_MASK_NODES,
 *   an incarnation on a FENCE or FENCED, on a REFUSE of another reason than
 *   FENCED, or UCX_INC_NEXT on any kind but HELLO, a reserved field not zero),
 *   -EPROTONOSUPPORT (another version). @p m is written only on success.
 */
int ucx_msg_decode(const uint8_t *buf, size_t len, struct ucx_msg *m);

/**
 * @return the length of the message whose first UCX_MSG_HDR_BYTES bytes
 *   are @p hdr (what to read next from a stream), or -EPROTO (bad magic or
 *   a length outside [UCX_MSG_HDR_BYTES, UCX_MSG_MAX]), -EPROTONOSUPPORT.
 */
int ucx_msg_peek_len(const uint8_t *hdr);

/**
 * 64-bit FNV-1a of @p text: the digest of a run's description that HELLO
 * carries (processes started for different runs refuse each other).
 */
uint64_t ucx_msg_digest(const char *text);

#endif /* DTXN_UCX_PURE_H */
