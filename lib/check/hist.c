/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Recording buffers (one per coordinator, append-only, chunked) and the
 * history container (the buffers of a run plus metadata).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_errno.h>

#include "check_private.h"

RTE_LOG_REGISTER(dtxn_check_logtype, dtxn.check, INFO);

struct hist_chunk {
	struct hist_chunk *next;   /**< newer chunk */
	size_t used;               /**< bytes of data[] holding records */
	size_t size;
	char data[] __rte_aligned(8);
};

struct dtxn_hist_buf {
	uint32_t coord;
	uint64_t max_bytes;
	uint64_t bytes;            /**< chunk bytes allocated */
	uint64_t txns;
	uint64_t dropped;
	struct hist_chunk *head;   /**< oldest */
	struct hist_chunk *tail;   /**< being filled */
	/* dtxn_hist_buf_stream(): each sealed record also goes to a file */
	struct dtxn_hist_stream *stream;
	unsigned lane;             /**< the stream's lane this buffer's thread fills */
	bool keep;                 /**< keep sealed records in the chunks too */
	struct dtxn_hist_txn *pending; /**< appended, not sealed yet; NULL: none */
	char *line;                /**< scratch for the record's text */
	size_t line_cap;
	size_t line_len;           /**< the pending record's text is in line (a seal to retry); 0: not */
};

struct dtxn_history {
	struct dtxn_hist_buf **bufs;
	unsigned n_bufs;
	unsigned cap_bufs;
	unsigned cut;              /**< files read that were cut short */
	bool partial;              /**< one CN's part of a cluster's history */
	char *note;                /**< notes of reading (malloc'd lines), NULL: none */
	unsigned n_meta;
	char meta_key[HIST_MAX_META][HIST_META_KEY_MAX];
	char meta_val[HIST_MAX_META][HIST_META_VAL_MAX];
};

/* A new chunk with room for @p need bytes: HIST_CHUNK_MIN first, twice the last one next, up to HIST_CHUNK_BYTES. */
static struct hist_chunk *
hist_chunk_new(struct dtxn_hist_buf *b, size_t need)
{
	size_t size = b->tail == NULL ? HIST_CHUNK_MIN : RTE_MIN(2 * b->tail->size, (size_t)HIST_CHUNK_BYTES);
	struct hist_chunk *c;

	size = RTE_MAX(size, need);
	if (b->bytes != 0 && b->bytes + size > b->max_bytes)
		return NULL;
	c = malloc(sizeof(*c) + size);
	if (c == NULL)
		return NULL;
	c->next = NULL;
	c->used = 0;
	c->size = size;
	if (b->tail != NULL)
		b->tail->next = c;
	else
		b->head = c;
	b->tail = c;
	b->bytes += size;
	return c;
}

struct dtxn_hist_buf *
dtxn_hist_buf_create(uint32_t coord, uint64_t max_bytes)
{
	struct dtxn_hist_buf *b = calloc(1, sizeof(*b));

	if (b == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	b->coord = coord;
	b->max_bytes = max_bytes;
	if (hist_chunk_new(b, 0) == NULL) {
		free(b);
		rte_errno = ENOMEM;
		return NULL;
	}
	return b;
}

void
dtxn_hist_buf_free(struct dtxn_hist_buf *b)
{
	if (b == NULL)
		return;
	while (b->head != NULL) {
		struct hist_chunk *n = b->head->next;

		free(b->head);
		b->head = n;
	}
	free(b->line);
	free(b);
}

struct dtxn_hist_item *
dtxn_hist_buf_append(struct dtxn_hist_buf *b, uint64_t id, enum dtxn_hist_status status,
		     unsigned n_items)
{
	struct dtxn_hist_txn *t;
	struct hist_chunk *c;
	size_t need;

	if (b == NULL)
		return NULL;
	need = hist_rec_bytes(n_items);
	if (n_items > DTXN_HIST_MAX_ITEMS || need > HIST_CHUNK_BYTES) {
		b->dropped = hist_sat_add(b->dropped, 1);
		return NULL;
	}
	c = b->tail;
	if (c->size - c->used < need) {
		c = hist_chunk_new(b, need);
		if (c == NULL) {
			b->dropped = hist_sat_add(b->dropped, 1);
			return NULL;
		}
	}
	t = (struct dtxn_hist_txn *)(c->data + c->used);
	c->used += need;
	t->id = id;
	t->coord = b->coord;
	t->status = (uint8_t)status;
	t->rsvd = 0;
	t->n_items = (uint16_t)n_items;
	b->txns++;
	b->pending = t;
	b->line_len = 0;
	return t->items;
}

int
dtxn_hist_buf_stream(struct dtxn_hist_buf *b, struct dtxn_hist_stream *s, bool keep,
		     unsigned lane)
{
	if (b == NULL || s == NULL || !hist_stream_lane_ok(lane))
		return -EINVAL;
	b->stream = s;
	b->keep = keep;
	b->lane = lane;
	return 0;
}

int
dtxn_hist_buf_seal(struct dtxn_hist_buf *b)
{
	struct dtxn_hist_txn *t;
	size_t need;
	int rc;

	if (b == NULL || b->pending == NULL || b->stream == NULL) {
		if (b != NULL)
			b->pending = NULL;
		return 0;
	}
	t = b->pending;
	if (b->line_len == 0) {
		need = hist_line_max(t->n_items);
		if (need > b->line_cap) {
			char *nl = realloc(b->line, need);

			if (nl == NULL) {
				rc = -ENOMEM;
				goto drop;
			}
			b->line = nl;
			b->line_cap = need;
		}
		b->line_len = hist_line_format(t, b->line);
	}
	rc = hist_stream_put(b->stream, b->lane, b->line, b->line_len);
	if (rc == -EAGAIN)
		return rc; /* still pending: the caller waits and calls again */
	b->line_len = 0;
	b->pending = NULL;
	if (rc != 0)
		goto drop;
	if (!b->keep) { /* the stream has it: forget it (it was the chunk's last) */
		b->tail->used -= hist_rec_bytes(t->n_items);
		b->txns--;
	}
	return 0;
drop:
	b->line_len = 0;
	b->pending = NULL;
	b->tail->used -= hist_rec_bytes(t->n_items);
	b->txns--;
	b->dropped = hist_sat_add(b->dropped, 1);
	return rc;
}

uint64_t
dtxn_hist_buf_txns(const struct dtxn_hist_buf *b)
{
	return b == NULL ? 0 : b->txns;
}

uint64_t
dtxn_hist_buf_dropped(const struct dtxn_hist_buf *b)
{
	return b == NULL ? 0 : b->dropped;
}

uint64_t
dtxn_hist_buf_bytes(const struct dtxn_hist_buf *b)
{
	return b == NULL ? 0 : b->bytes;
}

/* ------------------------------------------------------------------ */
/* History                                                            */
/* ------------------------------------------------------------------ */

struct dtxn_history *
dtxn_history_create(void)
{
	struct dtxn_history *h = calloc(1, sizeof(*h));

	if (h == NULL)
		rte_errno = ENOMEM;
	return h;
}

void
dtxn_history_free(struct dtxn_history *h)
{
	if (h == NULL)
		return;
	for (unsigned i = 0; i < h->n_bufs; i++)
		dtxn_hist_buf_free(h->bufs[i]);
	free(h->bufs);
	free(h->note);
	free(h);
}

/* Appends one line to the notes. */
static int
hist_note_add(struct dtxn_history *h, const char *line)
{
	size_t old = h->note != NULL ? strlen(h->note) : 0, add = strlen(line);
	char *n = realloc(h->note, old + add + 2);

	if (n == NULL)
		return -ENOMEM;
	memcpy(n + old, line, add);
	n[old + add] = '\n';
	n[old + add + 1] = '\0';
	h->note = n;
	return 0;
}

void
hist_set_cut(struct dtxn_history *h, const char *note)
{
	h->cut++;
	(void)hist_note_add(h, note); /* a note lost to ENOMEM loses no data */
}

unsigned
dtxn_history_cut(const struct dtxn_history *h)
{
	return h == NULL ? 0 : h->cut;
}

void
dtxn_history_set_partial(struct dtxn_history *h)
{
	if (h != NULL)
		h->partial = true;
}

bool
dtxn_history_partial(const struct dtxn_history *h)
{
	return h != NULL && h->partial;
}

const char *
dtxn_history_note(const struct dtxn_history *h)
{
	return h == NULL || h->note == NULL ? "" : h->note;
}

int
dtxn_history_add_buf(struct dtxn_history *h, struct dtxn_hist_buf *b)
{
	if (h == NULL || b == NULL)
		return -EINVAL;
	if (h->n_bufs == h->cap_bufs) {
		unsigned cap = h->cap_bufs ? h->cap_bufs * 2 : 16;
		struct dtxn_hist_buf **nb = realloc(h->bufs, sizeof(*nb) * cap);

		if (nb == NULL)
			return -ENOMEM;
		h->bufs = nb;
		h->cap_bufs = cap;
	}
	h->bufs[h->n_bufs++] = b;
	return 0;
}

int
dtxn_history_merge(struct dtxn_history *dst, struct dtxn_history *src)
{
	const char *k, *v;
	unsigned need;

	if (dst == NULL || src == NULL || dst == src)
		return -EINVAL;
	need = dst->n_bufs + src->n_bufs;
	if (need > dst->cap_bufs) {
		struct dtxn_hist_buf **nb = realloc(dst->bufs, sizeof(*nb) * need);

		if (nb == NULL)
			return -ENOMEM;
		dst->bufs = nb;
		dst->cap_bufs = need;
	}
	if (src->note != NULL && hist_note_add(dst, src->note) == 0)
		dst->note[strlen(dst->note) - 1] = '\0'; /* src's note ends in its newline */
	memcpy(dst->bufs + dst->n_bufs, src->bufs, sizeof(*src->bufs) * src->n_bufs);
	dst->n_bufs = need;
	src->n_bufs = 0;
	dst->cut += src->cut;
	src->cut = 0;
	dst->partial = dst->partial || src->partial;
	for (unsigned i = 0; hist_meta_at(src, i, &k, &v); i++)
		if (dtxn_history_meta(dst, k) == NULL)
			(void)dtxn_history_set_meta(dst, k, v); /* both valid; full: dropped */
	return 0;
}

static bool
hist_meta_key_ok(const char *k)
{
	size_t n = 0;

	for (; k[n] != '\0'; n++) {
		char ch = k[n];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '_' || ch == '.' || ch == '-'))
			return false;
	}
	return n > 0 && n < HIST_META_KEY_MAX;
}

static bool
hist_meta_val_ok(const char *v)
{
	size_t n = 0;

	for (; v[n] != '\0'; n++)
		if ((unsigned char)v[n] < 0x20 || v[n] == 0x7f)
			return false;
	return n < HIST_META_VAL_MAX;
}

int
dtxn_history_set_meta(struct dtxn_history *h, const char *key, const char *value)
{
	unsigned i;

	if (h == NULL || key == NULL || value == NULL || !hist_meta_key_ok(key) ||
	    !hist_meta_val_ok(value))
		return -EINVAL;
	for (i = 0; i < h->n_meta; i++)
		if (strcmp(h->meta_key[i], key) == 0)
			break;
	if (i == h->n_meta) {
		if (h->n_meta == HIST_MAX_META)
			return -ENOSPC;
		h->n_meta++;
		strcpy(h->meta_key[i], key);
	}
	strcpy(h->meta_val[i], value);
	return 0;
}

const char *
dtxn_history_meta(const struct dtxn_history *h, const char *key)
{
	if (h == NULL || key == NULL)
		return NULL;
	for (unsigned i = 0; i < h->n_meta; i++)
		if (strcmp(h->meta_key[i], key) == 0)
			return h->meta_val[i];
	return NULL;
}

bool
hist_meta_at(const struct dtxn_history *h, unsigned i, const char **key, const char **val)
{
	if (i >= h->n_meta)
		return false;
	*key = h->meta_key[i];
	*val = h->meta_val[i];
	return true;
}

uint64_t
dtxn_history_txns(const struct dtxn_history *h)
{
	uint64_t n = 0;

	if (h != NULL)
		for (unsigned i = 0; i < h->n_bufs; i++)
			n += h->bufs[i]->txns;
	return n;
}

uint64_t
dtxn_history_dropped(const struct dtxn_history *h)
{
	uint64_t n = 0;

	if (h != NULL)
		for (unsigned i = 0; i < h->n_bufs; i++)
			n = hist_sat_add(n, h->bufs[i]->dropped);
	return n;
}

void
hist_buf_add_dropped(struct dtxn_hist_buf *b, uint64_t n)
{
	b->dropped = hist_sat_add(b->dropped, n);
}

int
dtxn_history_foreach(const struct dtxn_history *h, dtxn_hist_visit_fn fn, void *arg)
{
	if (h == NULL || fn == NULL)
		return 0;
	for (unsigned i = 0; i < h->n_bufs; i++) {
		for (const struct hist_chunk *c = h->bufs[i]->head; c != NULL; c = c->next) {
			size_t off = 0;

			while (off < c->used) {
				const struct dtxn_hist_txn *t =
					(const struct dtxn_hist_txn *)(c->data + off);
				int rc = fn(t, arg);

				if (rc != 0)
					return rc;
				off += hist_rec_bytes(t->n_items);
			}
		}
	}
	return 0;
}
