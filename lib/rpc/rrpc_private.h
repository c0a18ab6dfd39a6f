/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DTXN_RRPC_PRIVATE_H
#define DTXN_RRPC_PRIVATE_H

/**
 * @file
 * RRPC's message rings (Scythe §4.6; ../shared/papers/scythe.md §4), the
 * part that is only memory: the bucket format and the producer/consumer
 * positions of one ring. Never installed. rrpc_bucket.c implements it with
 * no fabric and no EAL, so the unit tests (and a fuzzer) can feed it any
 * bytes.
 *
 * A ring is a power-of-two number of buckets of RRPC_BUCKET_BYTES in the
 * receiver's registered memory. The sender fills one bucket with a batch
 * of small messages and sends it with ONE RDMA WRITE; the buckets of one
 * flush go to the NIC as one chain of WRITEs (one doorbell). Bucket
 * layout, all little-endian:
 *
 *   [0, 4)        head label: (seq << 16) | len
 *   [4, 6)        number of messages
 *   [6, 8)        ack: buckets of the reverse ring the sender has consumed
 *                 (low 16 bits; the receiver's credit, dtxn_rrpc.h)
 *   [8, len - 8)  messages: struct rrpc_msg_hdr + payload, each padded to 8
 *   [len - 8, len - 4)  padding (0)
 *   [len - 4, len) tail label: the head label again
 *
 * len is the bytes the WRITE carries (a multiple of 8, 16..512); seq is
 * the low 16 bits of the bucket's number in the ring (0, 1, 2, ...). A
 * WRITE lands in increasing address order (RC WRITE on ConnectX, and
 * lib/fabric's dtxn_fabric_mem_exec()), so the tail label is the last
 * thing to appear: the receiver takes a bucket only when the head label
 * is there, carries the seq it expects, and the tail label at len - 4
 * equals it. A torn bucket (head written, tail not yet) is not delivered;
 * the receiver looks again at its next poll. A bucket left from the
 * previous lap carries another seq. After a bucket is consumed the
 * receiver zeroes its bytes, so no stale byte can pass for a new tail.
 */

#include <stdbool.h>
#include <stdint.h>

/** Bytes of one bucket: one message batch, one WRITE (Scythe §4.6: 512 B). */
#define RRPC_BUCKET_BYTES 512u
/** Bucket header bytes (head label, count, ack). */
#define RRPC_BUCKET_HDR 8u
/** Bucket trailer bytes (padding, tail label). */
#define RRPC_BUCKET_TRL 8u
/** Smallest bucket: header and trailer, no message. */
#define RRPC_BUCKET_MIN (RRPC_BUCKET_HDR + RRPC_BUCKET_TRL)

#define RRPC_KIND_REQ 1
#define RRPC_KIND_RESP 2
#define RRPC_KIND_REQ_ZC 3   /**< mode (c): payload struct rrpc_zc_req + the request */
#define RRPC_KIND_RESP_ZC 4  /**< mode (c): payload struct rrpc_zc_resp; the data was WRITten */

/** The head of a zero-copy request: where the reply goes. */
struct rrpc_zc_req {
	uint64_t raddr;    /**< the requester slot's buffer (a registered CN address) */
	uint32_t cap;      /**< its bytes */
	uint32_t rsvd;
};
_Static_assert(sizeof(struct rrpc_zc_req) == 16, "rrpc zero-copy request");

/** A zero-copy completion. */
struct rrpc_zc_resp {
	int32_t len;       /**< bytes WRITten; negative: refused (no data) */
	uint32_t crc;      /**< CRC32-C of them (rrpc_zc_crc()) */
};

/**
 * CRC32-C of @p len bytes at @p data: what a zero-copy completion carries
 * and the requester checks against its buffer.
 */
uint32_t rrpc_zc_crc(const void *data, uint32_t len);

/** One message in a bucket. */
struct rrpc_msg_hdr {
	uint16_t len;      /**< payload bytes */
	uint8_t kind;      /**< RRPC_KIND_* */
	uint8_t type;      /**< handler */
	uint16_t ep;       /**< requester's endpoint */
	uint8_t slot;      /**< requester's slot */
	uint8_t rsvd;
	uint32_t seq;      /**< the slot's sequence number */
};
_Static_assert(sizeof(struct rrpc_msg_hdr) == 12, "rrpc message header");

/** Largest payload of one message: a bucket holding only it. */
#define RRPC_MSG_PAYLOAD_MAX \
	(RRPC_BUCKET_BYTES - RRPC_BUCKET_MIN - sizeof(struct rrpc_msg_hdr))

/** A bucket being filled (the sender's staging copy). */
struct rrpc_bucket {
	uint32_t len;      /**< bytes used so far: header + messages */
	uint16_t n_msgs;
	uint8_t data[RRPC_BUCKET_BYTES] __attribute__((aligned(8)));
};

/** Bytes a message of @p payload bytes takes in a bucket. */
static inline uint32_t
rrpc_msg_room(uint32_t payload)
{
	return (uint32_t)((sizeof(struct rrpc_msg_hdr) + payload + 7u) & ~7u);
}

/** Empties @p b (no message). */
void rrpc_bucket_reset(struct rrpc_bucket *b);

/**
 * Appends one message to @p b.
 * @return 0; -ENOSPC (does not fit next to the messages already there:
 *   seal and send @p b, then add to a fresh one); -EINVAL (payload over
 *   RRPC_MSG_PAYLOAD_MAX, or NULL with a non-zero length).
 */
int rrpc_bucket_add(struct rrpc_bucket *b, const struct rrpc_msg_hdr *h, const void *payload);

/**
 * Writes the labels of @p b for bucket number @p idx of its ring.
 * @return the bytes to WRITE (len), RRPC_BUCKET_MIN..RRPC_BUCKET_BYTES.
 */
uint32_t rrpc_bucket_seal(struct rrpc_bucket *b, uint32_t idx);

/**
 * Looks at a bucket of the receiver's ring (@p mem, RRPC_BUCKET_BYTES,
 * 8-byte aligned) that should hold bucket number @p idx.
 * @return its len if it is complete (head label with @p idx's seq and a
 *   sane len, tail label equal); 0 if it is empty, from another lap, or
 *   torn (not delivered: look again later); -EBADMSG if its head label
 *   has the right seq but an impossible len (drop it).
 */
int rrpc_bucket_ready(const void *mem, uint32_t idx);

/** Callback for each message of a bucket (rrpc_bucket_parse()). */
typedef void (*rrpc_msg_fn)(void *arg, const struct rrpc_msg_hdr *h, const uint8_t *payload);

/**
 * Calls @p fn for each message of a complete bucket of @p len bytes
 * (rrpc_bucket_ready()), in order. Reads nothing past @p len; stops at
 * the first message that does not fit.
 * @return messages delivered, or -EBADMSG if the count or a message
 *   length is inconsistent with @p len (the messages before it were
 *   delivered).
 */
int rrpc_bucket_parse(const void *mem, uint32_t len, rrpc_msg_fn fn, void *arg);

/** Sets the ack of a sealed bucket (before its WRITE is posted). */
static inline void
rrpc_bucket_set_ack(struct rrpc_bucket *b, uint32_t consumed)
{
	uint16_t a = (uint16_t)consumed;

	__builtin_memcpy(b->data + 6, &a, sizeof(a));
}

/** @return the ack of a complete bucket in a ring (rrpc_bucket_ready()). */
static inline uint16_t
rrpc_bucket_ack(const void *mem)
{
	uint16_t a;

	__builtin_memcpy(&a, (const uint8_t *)mem + 6, sizeof(a));
	return a;
}

/** Zeroes a consumed bucket's @p len bytes (so its slot reads empty). */
void rrpc_bucket_clear(void *mem, uint32_t len);

#endif /* DTXN_RRPC_PRIVATE_H */
