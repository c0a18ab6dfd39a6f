/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DTXN_TSO_PRIVATE_H
#define DTXN_TSO_PRIVATE_H

/**
 * @file
 * lib/tso internals (never installed): the one message both remote
 * counters answer, the CN-side service (tso_cn.c) and a proxy
 * (tso_proxy.c): request [n u64], reply [old u64].
 */

#include <stdint.h>

#include "dtxn_rpc.h"

/**
 * Sends "add @p n" to node @p node (message type @p type) through @p ep
 * and yields until the reply: the counter before the add in @p old.
 * From @p ep's coordinator's coroutine.
 * @return 0; -EIO (a refusal: an empty or malformed reply, or a post
 *   error); -ETIMEDOUT (no reply after lib/rpc's resends).
 */
int tso_rpc_add_lc(struct dtxn_rpc_ep *ep, uint16_t node, uint8_t type, uint64_t n, uint64_t *old);

#endif /* DTXN_TSO_PRIVATE_H */
