/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DTXN_MLX5_PURE_H
#define DTXN_MLX5_PURE_H

/**
 * @file
 * The pure parts of the mlx5 fabric driver: no ibverbs, no EAL, no I/O, so
 * test/unit/test_mlx5.c checks them byte for byte on any machine, and they
 * build even where rdma-core is missing.
 *
 * - mlx5_wqe.c   the masked compare-and-swap WQE (ConnectX PRM, "Masked
 *                Atomic" send WQE) posted with mlx5dv_wr_raw_wqe();
 * - mlx5_msg.c   the connect message carried in rdma_cm private data
 *                (MR keys, base address and length of an MN region);
 * - mlx5_plan.c  how each WR of a chain is posted (verb, inline or not,
 *                bounce buffer, signaled or not), remote-address
 *                translation (device memory, host region), local-key
 *                lookup. The CAS loop that stands in for masked CAS where
 *                the device lacks it is lib/fabric's (struct dtxn_mcas_loop,
 *                dtxn_fabric_driver.h), shared with ucx.
 *
 * Never installed; included by the driver's files and its unit test only.
 * Every call is thread-safe (no state but the caller's).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dtxn_fabric.h"

/* ------------------------------------------------------------------ */
/* ConnectX PRM constants (checked against mlx5dv.h where it exists)  */
/* ------------------------------------------------------------------ */

/** Send WQE opcode of a masked compare-and-swap (PRM table "Send WQE opcodes"). */
#define MLX5_PRM_OPCODE_ATOMIC_MASKED_CS 0x14
/**
 * opmod of an extended (masked) atomic on an 8-byte operand: bit 3 says
 * "extended atomic", bits 2:0 carry log2(operand bytes) - 2 (3 - 2 = 1).
 */
#define MLX5_PRM_OPMOD_EXT_ATOMIC_8B 0x09
/** fm_ce_se: ask for a CQE (CE = 2, "always"). */
#define MLX5_PRM_CTRL_CQ_UPDATE 0x08
/** Every WQE segment is a multiple of this many bytes (a "DS", octoword). */
#define MLX5_PRM_DS_BYTES 16
/** Send WQE basic block, bytes. */
#define MLX5_PRM_WQEBB_BYTES 64

/** Segment offsets of the masked-CAS WQE, bytes from its start. */
enum {
	MLX5_MCAS_OFF_CTRL = 0,         /**< control segment, 16 B */
	MLX5_MCAS_OFF_RADDR = 16,       /**< remote address segment, 16 B */
	MLX5_MCAS_OFF_DATA = 32,        /**< swap (8 B), compare (8 B) */
	MLX5_MCAS_OFF_MASK = 48,        /**< swap mask (8 B), compare mask (8 B) */
	MLX5_MCAS_OFF_LOCAL = 64,       /**< data segment: where the old value lands */
	MLX5_MCAS_WQE_BYTES = 80,       /**< 5 DS, 2 WQEBBs */
};

/** What a masked-CAS WQE carries besides its fixed opcode. */
struct mlx5_mcas_args {
	uint32_t qpn;            /**< the QP's number (24 bits) */
	bool signaled;           /**< CQE requested */
	uint64_t raddr;          /**< remote virtual address (or DM offset) */
	uint32_t rkey;
	uint64_t laddr;          /**< local 8-byte buffer for the old value */
	uint32_t lkey;
	uint64_t swap, compare, swap_mask, compare_mask;
};

/**
 * Encodes a masked compare-and-swap send WQE, every field big-endian, as
 * the ConnectX PRM lays it out: control segment (opmod 0x09, opcode 0x14,
 * qpn, DS = 5, fm_ce_se; the WQE index and signature stay 0, rdma-core's
 * mlx5dv_wr_raw_wqe() sets them), remote address segment, the two
 * masked-atomic segments (swap, compare; swap mask, compare mask) and the
 * data segment of the local buffer (8 bytes).
 *
 * @param buf  output, at least MLX5_MCAS_WQE_BYTES bytes.
 * @param len  size of @p buf, bytes.
 * @return MLX5_MCAS_WQE_BYTES, or 0 if @p len is too small or qpn does not
 *   fit 24 bits (nothing written).
 */
size_t mlx5_wqe_masked_cas(uint8_t *buf, size_t len, const struct mlx5_mcas_args *a);

/* ------------------------------------------------------------------ */
/* Connect message                                                    */
/* ------------------------------------------------------------------ */

/** "dTx5", first 4 bytes of every connect message (big-endian). */
#define MLX5_MSG_MAGIC 0x64547835u
/** The only version this build speaks. */
#define MLX5_MSG_VERSION 1
/** Wire size of a version-1 message, bytes (fits rdma_cm's 56 B of REQ private data). */
#define MLX5_MSG_BYTES 48
/** Largest device-memory window a message may announce (dtxn_fabric.h). */
#define MLX5_MSG_DM_MAX DTXN_FABRIC_DM_BYTES

enum mlx5_msg_kind {
	MLX5_MSG_HELLO = 1,   /**< connecting side -> listener (REQ private data) */
	MLX5_MSG_ACCEPT = 2,  /**< listener -> connecting side (REP private data) */
};

/** Message flags. */
#define MLX5_MSG_F_REGION 0x1u  /**< base/len/rkey describe an MN region */
#define MLX5_MSG_F_DM 0x2u      /**< dm_rkey/dm_len describe device memory */
#define MLX5_MSG_F_ALL (MLX5_MSG_F_REGION | MLX5_MSG_F_DM)

/** A decoded connect message. */
struct mlx5_msg {
	uint8_t kind;        /**< enum mlx5_msg_kind */
	uint16_t src_node;   /**< sender's node id */
	uint16_t dst_node;   /**< node id the sender wants to reach */
	uint32_t qp_seq;     /**< which QP between the two nodes (lcore order) */
	uint32_t flags;      /**< MLX5_MSG_F_* */
	uint64_t base;       /**< region: remote virtual address of offset 0 */
	uint64_t len;        /**< region: bytes */
	uint32_t rkey;       /**< region's rkey */
	uint32_t dm_rkey;    /**< device memory's rkey (zero-based addressing) */
	uint32_t dm_len;     /**< device memory bytes, <= MLX5_MSG_DM_MAX */
};

/**
 * Encodes @p m (MLX5_MSG_BYTES, big-endian).
 * @return MLX5_MSG_BYTES, or -EMSGSIZE (@p len too small), -EINVAL (@p m
 *   fails the checks mlx5_msg_decode() applies).
 */
int mlx5_msg_encode(uint8_t *buf, size_t len, const struct mlx5_msg *m);

/**
 * Decodes and checks a connect message. rdma_cm may hand over more bytes
 * than were sent (zero padding): bytes past the message's own length are
 * ignored.
 *
 * @return 0; -EMSGSIZE (fewer bytes than the header or than its length
 *   field says), -EPROTO (bad magic, unknown kind or flag, length field not
 *   MLX5_MSG_BYTES, node id >= DTXN_MASK_NODES or src == dst, a region of
 *   zero length or whose end overflows, keys without their flag, DM larger than MLX5_MSG_DM_MAX or announced without a region, a HELLO
 *   carrying keys), -EPROTONOSUPPORT (another version). @p m is written
 *   only on success.
 */
int mlx5_msg_decode(const uint8_t *buf, size_t len, struct mlx5_msg *m);

/* ------------------------------------------------------------------ */
/* Posting plan                                                       */
/* ------------------------------------------------------------------ */

/** How a WR goes to the device. */
enum mlx5_verb {
	MLX5_VERB_READ = 0,
	MLX5_VERB_WRITE,           /**< payload by DMA from registered memory */
	MLX5_VERB_WRITE_INLINE,    /**< payload copied into the WQE */
	MLX5_VERB_CAS,
	MLX5_VERB_FAA,
	MLX5_VERB_MCAS_RAW,        /**< raw masked-CAS WQE (mlx5dv) */
	MLX5_VERB_MCAS_LOOP,       /**< masked CAS emulated by a CAS loop */
	MLX5_VERB_SEND,
	MLX5_VERB_SEND_INLINE,
};

/** What the device and the QP offer, from ibv_query_device_ex/mlx5dv. */
struct mlx5_caps {
	uint32_t max_inline;   /**< QP's max_inline_data, bytes */
	bool masked_cas;       /**< raw masked-CAS WQEs usable */
};

/** Registered local memory: [addr, addr+len) has @p lkey. */
struct mlx5_lkey_range {
	uintptr_t addr;
	size_t len;
	uint32_t lkey;
};

/** Bytes of a QP send slot's bounce buffer (local memory not registered). */
#define MLX5_BOUNCE_BYTES DTXN_WR_INLINE_MAX

/** The plan of one WR. */
struct mlx5_wr_plan {
	uint8_t verb;      /**< enum mlx5_verb */
	bool signaled;     /**< the WQE asks for a CQE */
	bool user_cqe;     /**< that CQE is reported to the caller */
	bool bounce;       /**< local data goes through the slot's bounce buffer */
	uint32_t lkey;     /**< key of the local buffer (or of the bounce area) */
};

/**
 * Looks up the lkey of [@p addr, @p addr + @p len) in @p ranges (sorted by
 * address, not overlapping): binary search.
 * @return true and *lkey if one range holds all of it.
 */
bool mlx5_lkey_find(const struct mlx5_lkey_range *ranges, unsigned n,
		    const void *addr, size_t len, uint32_t *lkey);

/**
 * Selective signaling with a bounded send queue: a WQE is signaled if the
 * caller asked, or if @p unsignaled_run earlier WQEs in a row were not and
 * one more would reach half of @p max_wr (the device frees send-queue
 * slots only when a later signaled WQE completes).
 *
 * @param user_signaled  DTXN_WR_F_SIGNALED was set.
 * @param unsignaled_run unsignaled WQEs posted since the last signaled one.
 * @param max_wr         the QP's send-queue depth, >= 2.
 */
bool mlx5_signal_needed(bool user_signaled, uint32_t unsignaled_run, uint32_t max_wr);

/**
 * Plans a checked WR chain (lib/fabric checked it) for one QP: the verb
 * of each WR (WRITE/SEND inline when len <= caps->max_inline; masked CAS
 * raw or looped), its signaling (mlx5_signal_needed, with *unsignaled_run
 * carried across chains), and where its local buffer is registered
 * (a bounce buffer of MLX5_BOUNCE_BYTES for unregistered memory).
 *
 * @param wr_list  the chain.
 * @param caps     device/QP capabilities.
 * @param ranges   registered local memory (mlx5_lkey_find), n_ranges entries.
 * @param bounce_lkey  lkey of the QP's bounce area.
 * @param max_wr   send-queue depth.
 * @param unsignaled_run in/out: updated only on success.
 * @param plan     out: one entry per WR.
 * @param n_plan   entries of @p plan.
 * @return the number of WRs (>= 1); -ENOBUFS (more WRs than @p n_plan),
 *   -EFAULT (a local buffer outside registered memory and larger than
 *   MLX5_BOUNCE_BYTES). Nothing is updated on error.
 */
int mlx5_chain_plan(const struct dtxn_wr *wr_list, const struct mlx5_caps *caps,
		    const struct mlx5_lkey_range *ranges, unsigned n_ranges,
		    uint32_t bounce_lkey, uint32_t max_wr, uint32_t *unsignaled_run,
		    struct mlx5_wr_plan *plan, unsigned n_plan);

/* ------------------------------------------------------------------ */
/* Remote addresses                                                   */
/* ------------------------------------------------------------------ */

/** What a CN knows of one MN (from its ACCEPT message). */
struct mlx5_peer_mr {
	uint64_t base;      /**< remote virtual address of offset 0 */
	uint64_t len;       /**< region bytes */
	uint32_t rkey;
	uint32_t dm_rkey;   /**< device memory, zero-based */
	uint32_t dm_len;    /**< 0: no device memory */
};

/**
 * Translates an MN offset range to what goes in the WQE. Offsets below
 * dm_len live in the MN's device memory (zero-based address = offset); the
 * rest in its host region (base + offset). A range that lies in neither
 * (crosses the DM boundary or the region's end) is sent to the first byte
 * past the region, so that the remote NIC refuses it and the WR completes
 * with a remote access error, as the fabric API promises.
 *
 * @return true if the range is valid (false: the address and rkey are still set to the
 *   refused address).
 */
bool mlx5_raddr_map(const struct mlx5_peer_mr *p, uint64_t off, uint32_t len,
		    uint64_t *addr, uint32_t *rkey);

#endif /* DTXN_MLX5_PURE_H */
