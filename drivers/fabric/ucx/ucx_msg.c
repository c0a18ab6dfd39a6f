/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The connect message of the ucx driver (ucx_pure.h has the layout).
 * Untrusted input: the decoder checks every field before anything uses it.
 */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "ucx_pure.h"

static void
put16(uint8_t *p, uint16_t v)
{
	v = htole16(v);
	memcpy(p, &v, sizeof(v));
}

static void
put32(uint8_t *p, uint32_t v)
{
	v = htole32(v);
	memcpy(p, &v, sizeof(v));
}

static void
put64(uint8_t *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, sizeof(v));
}

static uint16_t
get16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return le16toh(v);
}

static uint32_t
get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return le32toh(v);
}

static uint64_t
get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return le64toh(v);
}

/* The semantic checks both directions share: 0 or -EPROTO. */
static int
msg_check(const struct ucx_msg *m)
{
	bool fence = m->kind == UCX_MSG_FENCE || m->kind == UCX_MSG_FENCED;
	bool region = !fence && (m->region_len != 0 || m->base != 0);

	/* node masks of 64 bits (served nodes, fences): DTXN_MASK_NODES */
	if (m->src_node >= DTXN_MASK_NODES || m->dst_node >= DTXN_MASK_NODES ||
	    m->src_node == m->dst_node)
		return -EPROTO;
	if (m->n_mn == 0 || m->n_cn == 0 || m->n_mn + m->n_cn > DTXN_MASK_NODES)
		return -EPROTO;
	if (m->waddr_len > UCX_MSG_WADDR_MAX || m->rkey_len > UCX_MSG_RKEY_MAX)
		return -EPROTO;
	if ((m->waddr_len != 0 && m->waddr == NULL) || (m->rkey_len != 0 && m->rkey == NULL))
		return -EPROTO;
	/* an incarnation: any on a HELLO (UCX_INC_NEXT too), an ACCEPT's
	 * admitted one, a REFUSE FENCED's fenced one; none elsewhere */
	if (m->kind != UCX_MSG_HELLO &&
	    (m->incarnation == UCX_INC_NEXT ||
	     (m->incarnation != 0 && m->kind != UCX_MSG_ACCEPT &&
	      !(m->kind == UCX_MSG_REFUSE && m->reason == UCX_REFUSE_FENCED))))
		return -EPROTO;
	switch (m->kind) {
	case UCX_MSG_HELLO:
		if (m->reason != 0 || m->waddr_len != 0 || m->rkey_len != 0 || region)
			return -EPROTO;
		break;
	case UCX_MSG_ACCEPT:
		if (m->reason != 0 || m->waddr_len == 0)
			return -EPROTO;
		if (region && (m->region_len == 0 || m->base + m->region_len < m->base))
			return -EPROTO;
		if (region != (m->rkey_len != 0))
			return -EPROTO;
		break;
	case UCX_MSG_REFUSE:
		if (m->reason == UCX_REFUSE_NONE || m->reason > UCX_REFUSE_MAX ||
		    m->waddr_len != 0 || m->rkey_len != 0 || region)
			return -EPROTO;
		break;
	case UCX_MSG_FENCE:
	case UCX_MSG_FENCED:
		if (m->reason != 0 || m->waddr_len != 0 || m->rkey_len != 0 ||
		    m->base >= DTXN_MASK_NODES || (m->kind == UCX_MSG_FENCE && m->region_len != 0))
			return -EPROTO;
		break;
	default:
		return -EPROTO;
	}
	return 0;
}

int
ucx_msg_encode(uint8_t *buf, size_t len, const struct ucx_msg *m)
{
	size_t total;

	if (m == NULL || msg_check(m) != 0)
		return -EINVAL;
	total = UCX_MSG_HDR_BYTES + (size_t)m->waddr_len + m->rkey_len;
	if (buf == NULL || len < total)
		return -EMSGSIZE;
	memset(buf, 0, UCX_MSG_HDR_BYTES);
	put32(buf + 0, UCX_MSG_MAGIC);
	put16(buf + 4, UCX_MSG_VERSION);
	buf[6] = m->kind;
	buf[7] = m->reason;
	put32(buf + 8, (uint32_t)total);
	put16(buf + 12, m->src_node);
	put16(buf + 14, m->dst_node);
	put16(buf + 16, m->n_mn);
	put16(buf + 18, m->n_cn);
	put16(buf + 20, m->waddr_len);
	put16(buf + 22, m->rkey_len);
	put64(buf + 24, m->digest);
	put64(buf + 32, m->base);
	put64(buf + 40, m->region_len);
	put32(buf + 48, m->incarnation);
	if (m->waddr_len != 0)
		memcpy(buf + UCX_MSG_HDR_BYTES, m->waddr, m->waddr_len);
	if (m->rkey_len != 0)
		memcpy(buf + UCX_MSG_HDR_BYTES + m->waddr_len, m->rkey, m->rkey_len);
	return (int)total;
}

int
ucx_msg_peek_len(const uint8_t *hdr)
{
	uint32_t total;

	if (get32(hdr) != UCX_MSG_MAGIC)
		return -EPROTO;
	if (get16(hdr + 4) != UCX_MSG_VERSION)
		return -EPROTONOSUPPORT;
	total = get32(hdr + 8);
	if (total < UCX_MSG_HDR_BYTES || total > UCX_MSG_MAX)
		return -EPROTO;
	return (int)total;
}

int
ucx_msg_decode(const uint8_t *buf, size_t len, struct ucx_msg *m)
{
	struct ucx_msg d;
	int total, rc;

	if (buf == NULL || len < UCX_MSG_HDR_BYTES)
		return -EMSGSIZE;
	total = ucx_msg_peek_len(buf);
	if (total < 0)
		return total;
	if (len != (size_t)total)
		return -EMSGSIZE;
	memset(&d, 0, sizeof(d));
	d.kind = buf[6];
	d.reason = buf[7];
	d.src_node = get16(buf + 12);
	d.dst_node = get16(buf + 14);
	d.n_mn = get16(buf + 16);
	d.n_cn = get16(buf + 18);
	d.waddr_len = get16(buf + 20);
	d.rkey_len = get16(buf + 22);
	d.digest = get64(buf + 24);
	d.base = get64(buf + 32);
	d.region_len = get64(buf + 40);
	d.incarnation = get32(buf + 48);
	if (get32(buf + 52) != 0)
		return -EPROTO; /* reserved */
	if ((size_t)total != UCX_MSG_HDR_BYTES + (size_t)d.waddr_len + d.rkey_len)
		return -EPROTO;
	d.waddr = d.waddr_len != 0 ? buf + UCX_MSG_HDR_BYTES : NULL;
	d.rkey = d.rkey_len != 0 ? buf + UCX_MSG_HDR_BYTES + d.waddr_len : NULL;
	rc = msg_check(&d);
	if (rc != 0)
		return rc;
	*m = d;
	return 0;
}

uint64_t
ucx_msg_digest(const char *text)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);

	for (const unsigned char *p = (const unsigned char *)text; p != NULL && *p != '\0'; p++) {
		h ^= *p;
		h *= UINT64_C(0x100000001b3);
	}
	return h;
}
