/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RRPC buckets (rrpc_private.h): filling, sealing with the two length
 * labels, and checking and reading a bucket in the receiver's ring. The
 * one place where bytes written by another node are trusted or not.
 */
#include <errno.h>
#include <string.h>

#include "rrpc_private.h"

static inline uint32_t
rrpc_label(uint32_t idx, uint32_t len)
{
	return ((idx & 0xffffu) << 16) | len;
}

void
rrpc_bucket_reset(struct rrpc_bucket *b)
{
	b->len = RRPC_BUCKET_HDR;
	b->n_msgs = 0;
}

int
rrpc_bucket_add(struct rrpc_bucket *b, const struct rrpc_msg_hdr *h, const void *payload)
{
	uint32_t room;

	if (h->len > RRPC_MSG_PAYLOAD_MAX || (payload == NULL && h->len != 0))
		return -EINVAL;
	room = rrpc_msg_room(h->len);
	if (b->len + room + RRPC_BUCKET_TRL > RRPC_BUCKET_BYTES)
		return -ENOSPC;
	memcpy(b->data + b->len, h, sizeof(*h));
	if (h->len != 0)
		memcpy(b->data + b->len + sizeof(*h), payload, h->len);
	/* padding zeroed: nothing of an earlier batch leaks into the WRITE */
	memset(b->data + b->len + sizeof(*h) + h->len, 0, room - sizeof(*h) - h->len);
	b->len += room;
	b->n_msgs++;
	return 0;
}

uint32_t
rrpc_bucket_seal(struct rrpc_bucket *b, uint32_t idx)
{
	uint32_t len = b->len + RRPC_BUCKET_TRL;
	uint32_t label = rrpc_label(idx, len);
	uint16_t n = b->n_msgs, z = 0;

	memcpy(b->data, &label, sizeof(label));
	memcpy(b->data + 4, &n, sizeof(n));
	memcpy(b->data + 6, &z, sizeof(z));
	memset(b->data + b->len, 0, RRPC_BUCKET_TRL - sizeof(label));
	memcpy(b->data + len - sizeof(label), &label, sizeof(label));
	return len;
}

int
rrpc_bucket_ready(const void *mem, uint32_t idx)
{
	const uint32_t *w = mem;
	uint32_t head = __atomic_load_n(&w[0], __ATOMIC_ACQUIRE), len, tail;

	if (head == 0 || (head >> 16) != (idx & 0xffffu))
		return 0; /* empty, or another lap's bucket */
	len = head & 0xffffu;
	if (len < RRPC_BUCKET_MIN || len > RRPC_BUCKET_BYTES || (len & 7u) != 0)
		return -EBADMSG;
	tail = __atomic_load_n(&w[len / 4 - 1], __ATOMIC_ACQUIRE);
	return tail == head ? (int)len : 0; /* torn: the tail has not landed */
}

int
rrpc_bucket_parse(const void *mem, uint32_t len, rrpc_msg_fn fn, void *arg)
{
	const uint8_t *p = mem;
	uint32_t off = RRPC_BUCKET_HDR, end = len - RRPC_BUCKET_TRL;
	uint16_t n;
	int k;

	if (len < RRPC_BUCKET_MIN || len > RRPC_BUCKET_BYTES)
		return -EBADMSG;
	memcpy(&n, p + 4, sizeof(n));
	for (k = 0; k < n; k++) {
		struct rrpc_msg_hdr h;

		if (off + sizeof(h) > end)
			return -EBADMSG;
		memcpy(&h, p + off, sizeof(h));
		if (h.len > end - off - sizeof(h))
			return -EBADMSG;
		fn(arg, &h, p + off + sizeof(h));
		off += rrpc_msg_room(h.len);
	}
	return k;
}

void
rrpc_bucket_clear(void *mem, uint32_t len)
{
	memset(mem, 0, len);
}
