/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DTXN_UCX_VMSG_H
#define DTXN_UCX_VMSG_H

/**
 * @file
 * The ucx driver's verb message (doc/guides/ucx.md, "Verbs as messages"),
 * its pure part: one doorbell's one-sided verbs (READ, WRITE, CAS, FAA of
 * one QP's chain, in posting order) travel to the MN as ONE active
 * message, which the MN's serve thread executes whole, after one fence
 * check, or refuses whole. So a chain lands on its MN entirely or not at
 * all, whatever happens to the posting process (a SIGKILL loses only
 * whole messages) or to its fence (refused from a chain boundary on).
 * Builds without UCX (test/unit/test_ucx.c, test/fuzz/fuzz_ucx_msg.c).
 * Every call is pure and thread-safe.
 *
 * Request (UCX_AM_VERB): header struct ucx_vmsg_hdr; data: @c n
 * descriptors (struct ucx_vdesc) then every WRITE's payload, in order.
 * Answer (UCX_AM_VERB_REP): header struct ucx_vrep_hdr; data: one struct
 * ucx_vrep per descriptor that is not quiet, in order, then every answered
 * READ's data, in order. Little-endian as the CPU writes it (one build on
 * every host: the connect message's digest checks it).
 */

#include <stddef.h>
#include <stdint.h>

/** Most verbs in one message (a longer chain is split, at a cost to its atomicity). */
#define UCX_VMSG_MAX_VERBS 512
/** Most bytes of a message's data (descriptors and payloads), and of an answer's READ data. */
#define UCX_VMSG_MAX_BYTES (1u << 30)
/** A doorbell's run is split before a message's descriptors, WRITE and
 *  READ bytes pass this (a single WR larger goes alone). */
#define UCX_VMSG_SPLIT_BYTES (256u << 10)

/** Header of a verb message. */
struct ucx_vmsg_hdr {
	uint16_t src_node;   /**< the posting CN (fence check) */
	uint16_t dst_node;   /**< the MN whose region the verbs address */
	uint16_t n;          /**< descriptors, 1..UCX_VMSG_MAX_VERBS */
	uint16_t rsvd;
	uint32_t bytes;      /**< the message's data length */
	uint32_t src_inc;    /**< the posting process's incarnation of src_node: the MN
			      *   refuses another than the one it admitted (ucx_conn.c) */
};

/** One verb of a verb message, 40 bytes. */
struct ucx_vdesc {
	uint64_t cookie;     /**< the asking slot, echoed in its answer */
	uint64_t off;        /**< offset in the MN's region */
	uint64_t operand;    /**< CAS: compare; FAA: addend */
	uint64_t swap;       /**< CAS: new value */
	uint32_t len;        /**< READ/WRITE bytes (WRITE: its payload's); 8 for atomics */
	uint8_t opcode;      /**< enum dtxn_wr_opcode: READ, WRITE, CAS or FAA */
	uint8_t quiet;       /**< 1: no answer (an unsignaled WRITE) */
	uint16_t rsvd;
};

/** Header of an answer. */
struct ucx_vrep_hdr {
	uint16_t n;          /**< answers */
	uint16_t rsvd;
	uint32_t bytes;      /**< the answer's data length */
};

/** One answer, 24 bytes. */
struct ucx_vrep {
	uint64_t cookie;
	uint64_t old;        /**< CAS, FAA: the word before */
	uint8_t status;      /**< enum dtxn_wc_status */
	uint8_t rsvd[7];
};

/** What checking a request found (ucx_vmsg_check()). */
struct ucx_vmsg_shape {
	uint32_t n_answer;   /**< descriptors that are not quiet */
	uint32_t read_bytes; /**< READ data those answers carry */
};

/**
 * Checks a verb message's structure (untrusted input: every field before
 * it is used): @p n in 1..UCX_VMSG_MAX_VERBS, @p len equal to @c n
 * descriptors plus every WRITE's payload and at most UCX_VMSG_MAX_BYTES,
 * each opcode READ, WRITE, CAS or FAA, atomics 8 bytes at an 8-aligned
 * offset, only a WRITE quiet, READ data of the answers at most
 * UCX_VMSG_MAX_BYTES.
 *
 * @param data  the message's data (descriptors may be unaligned); @p len bytes.
 * @param n     the header's descriptor count.
 * @param shape out: the answer's shape (written on success only; may be NULL).
 * @return 0, or -EPROTO (any check failed).
 */
int ucx_vmsg_check(const uint8_t *data, size_t len, uint32_t n, struct ucx_vmsg_shape *shape);

/**
 * @return 1 if verb @p d (checked by ucx_vmsg_check()) lies inside a
 *   region of @p region_len bytes, else 0 (a region of 0 bytes: not served).
 */
int ucx_vdesc_in_region(const struct ucx_vdesc *d, uint64_t region_len);

/** @return the bytes of an answer of @p shape: its data, answers then READ data. */
size_t ucx_vrep_bytes(const struct ucx_vmsg_shape *shape);

#endif /* DTXN_UCX_VMSG_H */
