/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The history file: line-oriented text (doc/guides/checker.md, "History
 * file"), one transaction per line, so a file can be read, grepped and
 * written by hand (the unit tests do):
 *
 *   dtxn-history 1
 *   meta isolation sr
 *   dropped 0
 *   C 0x10000000001 0 r 0:0x1005:0 m 0:0x2005:0x20000000003
 *   A 0x10000000002 0 m 0:0x6:none
 *   end 2
 *
 * C/A: committed/aborted, txn id, coordinator, then its items
 * OP TABLE:KEY:VERSION[#WSEQ] with OP r (read), m (read-modify-write),
 * w (blind write), a "d" suffix for a delete; VERSION a number, "absent"
 * or "none". Saving is atomic (temporary file renamed into place).
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_errno.h>

#include "check_private.h"

#define HIST_MAGIC "dtxn-history"
#define HIST_FORMAT 1
/* Longest line dtxn_history_save() writes: a record of DTXN_HIST_MAX_ITEMS items. */
_Static_assert(HIST_LINE_TEXT(DTXN_HIST_MAX_ITEMS) < DTXN_HIST_LINE_MAX, "a saved line must be read back");

/* ------------------------------------------------------------------ */
/* Save                                                               */
/* ------------------------------------------------------------------ */

static char *
io_hex(char *p, uint64_t v)
{
	char tmp[16];
	int n = 0;

	*p++ = '0';
	*p++ = 'x';
	do {
		tmp[n++] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v != 0);
	while (n > 0)
		*p++ = tmp[--n];
	return p;
}

static char *
io_dec(char *p, uint64_t v)
{
	char tmp[20];
	int n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	while (n > 0)
		*p++ = tmp[--n];
	return p;
}

static char *
io_ver(char *p, uint64_t v)
{
	if (v == DTXN_HIST_VER_ABSENT) {
		memcpy(p, "absent", 6);
		return p + 6;
	}
	if (v == DTXN_HIST_VER_NONE) {
		memcpy(p, "none", 4);
		return p + 4;
	}
	if (v == 0) {
		*p++ = '0';
		return p;
	}
	return io_hex(p, v);
}

size_t
hist_line_format(const struct dtxn_hist_txn *t, char *line)
{
	static const char ops[DTXN_HIST_OP_MAX] = { 'r', 'm', 'w' };
	char *p = line;

	*p++ = t->status == DTXN_HIST_COMMITTED ? 'C' : 'A';
	*p++ = ' ';
	p = io_hex(p, t->id);
	*p++ = ' ';
	p = io_dec(p, t->coord);
	for (unsigned i = 0; i < t->n_items; i++) {
		const struct dtxn_hist_item *it = &t->items[i];

		*p++ = ' ';
		*p++ = it->op < DTXN_HIST_OP_MAX ? ops[it->op] : '?';
		if (it->flags & DTXN_HIST_F_DELETE)
			*p++ = 'd';
		*p++ = ' ';
		p = io_dec(p, it->table);
		*p++ = ':';
		p = io_hex(p, it->key);
		*p++ = ':';
		p = io_ver(p, it->ver);
		if (it->wseq != 0) {
			*p++ = '#';
			p = io_dec(p, it->wseq);
		}
	}
	*p++ = '\n';
	return (size_t)(p - line);
}

struct io_save {
	FILE *f;
	char *line;
	size_t cap;
	uint64_t n;
};

static int
io_save_txn(const struct dtxn_hist_txn *t, void *arg)
{
	struct io_save *s = arg;
	size_t need = hist_line_max(t->n_items), len;

	if (need > s->cap) {
		char *nl = realloc(s->line, need);

		if (nl == NULL)
			return -ENOMEM;
		s->line = nl;
		s->cap = need;
	}
	len = hist_line_format(t, s->line);
	if (fwrite(s->line, 1, len, s->f) != len)
		return -EIO;
	s->n++;
	return 0;
}

void
hist_header_write(FILE *f, const struct dtxn_history *h)
{
	const char *k, *v;

	fprintf(f, "%s %d\n", HIST_MAGIC, HIST_FORMAT);
	for (unsigned i = 0; h != NULL && hist_meta_at(h, i, &k, &v); i++)
		fprintf(f, "meta %s %s\n", k, v);
}

int
dtxn_history_save(const struct dtxn_history *h, const char *path)
{
	struct io_save s = { 0 };
	char tmp[PATH_MAX];
	int rc = 0;

	if (h == NULL || path == NULL || path[0] == '\0')
		return -EINVAL;
	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	s.f = fopen(tmp, "w");
	if (s.f == NULL)
		return -errno;
	setvbuf(s.f, NULL, _IOFBF, 1 << 20);
	hist_header_write(s.f, h);
	fprintf(s.f, "dropped %" PRIu64 "\n", dtxn_history_dropped(h));
	rc = dtxn_history_foreach(h, io_save_txn, &s);
	if (rc == 0)
		fprintf(s.f, "end %" PRIu64 "\n", s.n);
	free(s.line);
	if (rc == 0 && (fflush(s.f) != 0 || ferror(s.f) || fsync(fileno(s.f)) != 0))
		rc = -(errno ? errno : EIO);
	if (fclose(s.f) != 0 && rc == 0)
		rc = -(errno ? errno : EIO);
	if (rc == 0 && rename(tmp, path) != 0)
		rc = -errno;
	if (rc != 0)
		unlink(tmp);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Read                                                               */
/* ------------------------------------------------------------------ */

struct io_read {
	const char *name;
	uint64_t line;
	char *err;
	size_t errlen;
};

static void __attribute__((format(printf, 2, 3)))
io_err(struct io_read *r, const char *fmt, ...)
{
	char msg[192];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (r->err == NULL || r->errlen == 0)
		return;
	if (r->line != 0)
		snprintf(r->err, r->errlen, "%s:%" PRIu64 ": %s", r->name, r->line, msg);
	else
		snprintf(r->err, r->errlen, "%s: %s", r->name, msg);
}

/* Strict unsigned number (decimal or 0x hex) of [s, e). */
static bool
io_u64(const char *s, const char *e, uint64_t *v)
{
	uint64_t x = 0;
	unsigned base = 10;

	if (s == e)
		return false;
	if (e - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	for (; s < e; s++) {
		unsigned d;

		if (*s >= '0' && *s <= '9')
			d = (unsigned)(*s - '0');
		else if (base == 16 && *s >= 'a' && *s <= 'f')
			d = (unsigned)(*s - 'a' + 10);
		else if (base == 16 && *s >= 'A' && *s <= 'F')
			d = (unsigned)(*s - 'A' + 10);
		else
			return false;
		if (x > (UINT64_MAX - d) / base)
			return false;
		x = x * base + d;
	}
	*v = x;
	return true;
}

static bool
io_ver_parse(const char *s, const char *e, uint64_t *v)
{
	if (e - s == 6 && memcmp(s, "absent", 6) == 0) {
		*v = DTXN_HIST_VER_ABSENT;
		return true;
	}
	if (e - s == 4 && memcmp(s, "none", 4) == 0) {
		*v = DTXN_HIST_VER_NONE;
		return true;
	}
	return io_u64(s, e, v);
}

/* Next space-separated token of *p: [*s, *e); false at the end. */
static bool
io_tok(char **p, char **s, char **e)
{
	char *q = *p;

	while (*q == ' ' || *q == '\t')
		q++;
	if (*q == '\0')
		return false;
	*s = q;
	while (*q != '\0' && *q != ' ' && *q != '\t')
		q++;
	*e = q;
	*p = q;
	return true;
}

static int
io_item(struct io_read *r, char *os, char *oe, char *as, char *ae,
	struct dtxn_hist_item *it)
{
	char *c1, *c2, *hash;
	uint64_t table, wseq = 0;

	memset(it, 0, sizeof(*it));
	if (oe - os < 1 || oe - os > 2 || (oe - os == 2 && (os[1] != 'd' || os[0] == 'r'))) {
		io_err(r, "bad item operation '%.*s' (r, m, w, md, wd)", (int)(oe - os), os);
		return -EINVAL;
	}
	switch (os[0]) {
	case 'r':
		it->op = DTXN_HIST_READ;
		break;
	case 'm':
		it->op = DTXN_HIST_RMW;
		break;
	case 'w':
		it->op = DTXN_HIST_WRITE;
		break;
	default:
		io_err(r, "bad item operation '%.*s' (r, m, w, md, wd)", (int)(oe - os), os);
		return -EINVAL;
	}
	if (oe - os == 2)
		it->flags |= DTXN_HIST_F_DELETE;
	c1 = memchr(as, ':', (size_t)(ae - as));
	c2 = c1 != NULL ? memchr(c1 + 1, ':', (size_t)(ae - c1 - 1)) : NULL;
	if (c2 == NULL) {
		io_err(r, "bad item '%.*s' (expected TABLE:KEY:VERSION)", (int)(ae - as), as);
		return -EINVAL;
	}
	hash = memchr(c2 + 1, '#', (size_t)(ae - c2 - 1));
	if (!io_u64(as, c1, &table) || table > UINT32_MAX || !io_u64(c1 + 1, c2, &it->key) ||
	    !io_ver_parse(c2 + 1, hash != NULL ? hash : ae, &it->ver) ||
	    (hash != NULL && (!io_u64(hash + 1, ae, &wseq) || wseq == 0 || wseq > UINT16_MAX))) {
		io_err(r, "bad item '%.*s' (expected TABLE:KEY:VERSION[#WSEQ])", (int)(ae - as),
		       as);
		return -EINVAL;
	}
	it->table = (uint32_t)table;
	it->wseq = (uint16_t)wseq;
	return 0;
}

/* Counts the items of a txn line after its first three tokens. */
static unsigned
io_count_items(char *p)
{
	char *s, *e;
	unsigned n = 0;

	while (io_tok(&p, &s, &e))
		n++;
	return n;
}

static int
io_txn(struct io_read *r, struct dtxn_hist_buf *b, char *p, char status)
{
	struct dtxn_hist_item *items;
	char *s = NULL, *e = NULL, *os = NULL, *oe = NULL;
	uint64_t id, coord;
	unsigned n, i;

	if (!io_tok(&p, &s, &e) || !io_u64(s, e, &id)) {
		io_err(r, "bad or missing transaction id");
		return -EINVAL;
	}
	if (!hist_id_valid(id)) {
		io_err(r, "transaction id %.*s is reserved (0, absent, none)", (int)(e - s), s);
		return -EINVAL;
	}
	if (!io_tok(&p, &s, &e) || !io_u64(s, e, &coord) || coord > UINT32_MAX) {
		io_err(r, "bad or missing coordinator number");
		return -EINVAL;
	}
	n = io_count_items(p);
	if (n % 2 != 0) {
		io_err(r, "odd number of item fields (each item is OP TABLE:KEY:VERSION)");
		return -EINVAL;
	}
	n /= 2;
	if (n > DTXN_HIST_MAX_ITEMS) {
		io_err(r, "%u items; at most %u", n, (unsigned)DTXN_HIST_MAX_ITEMS);
		return -EINVAL;
	}
	items = dtxn_hist_buf_append(b, id, status == 'C' ? DTXN_HIST_COMMITTED :
							    DTXN_HIST_ABORTED, n);
	if (items == NULL) {
		io_err(r, "out of memory");
		return -ENOMEM;
	}
	hist_rec_of(items)->coord = (uint32_t)coord;
	for (i = 0; i < n; i++) {
		int rc;

		io_tok(&p, &os, &oe);
		io_tok(&p, &s, &e);
		rc = io_item(r, os, oe, s, e, &items[i]);
		if (rc != 0)
			return rc;
	}
	return 0;
}

static int
io_meta(struct io_read *r, struct dtxn_history *h, char *p)
{
	char *ks, *ke, *vs;
	int rc;

	if (!io_tok(&p, &ks, &ke)) {
		io_err(r, "meta line without a key");
		return -EINVAL;
	}
	vs = *ke != '\0' ? ke + 1 : ke; /* no value: empty */
	*ke = '\0';
	while (*vs == ' ' || *vs == '\t')
		vs++;
	rc = dtxn_history_set_meta(h, ks, vs);
	if (rc != 0)
		io_err(r, "bad meta entry '%s'%s", ks, rc == -ENOSPC ? " (too many)" : "");
	return rc;
}

/*
 * Reads one line into *line (grown as needed, never past
 * DTXN_HIST_LINE_MAX bytes), without its newline.
 * @return 1 (a line, length in *len), 2 (the same, but the file ended
 *   before its newline), 0 (end of file), -E2BIG (longer
 *   than DTXN_HIST_LINE_MAX: nothing more is read), -EILSEQ (a NUL byte),
 *   -ENOMEM.
 */
static int
io_getline(FILE *f, char **line, size_t *cap, size_t *len)
{
	size_t n = 0;
	int c;

	if (*cap == 0) {
		*line = malloc(4096);
		if (*line == NULL)
			return -ENOMEM;
		*cap = 4096;
	}
	while ((c = getc_unlocked(f)) != EOF && c != '\n') {
		if (c == '\0')
			return -EILSEQ;
		if (n + 1 >= *cap) {
			size_t ncap = *cap * 2;
			char *nl;

			if (n >= DTXN_HIST_LINE_MAX)
				return -E2BIG;
			if (ncap > DTXN_HIST_LINE_MAX + 1)
				ncap = DTXN_HIST_LINE_MAX + 1;
			nl = realloc(*line, ncap);
			if (nl == NULL)
				return -ENOMEM;
			*line = nl;
			*cap = ncap;
		}
		(*line)[n++] = (char)c;
	}
	if (c == EOF && n == 0)
		return 0;
	(*line)[n] = '\0';
	*len = n;
	return c == EOF ? 2 : 1;
}

/* Parses every line into @p h / @p b. */
static int
io_parse(struct io_read *r, FILE *f, struct dtxn_history *h, struct dtxn_hist_buf *b)
{
	char *line = NULL, *s, *e, *p;
	size_t cap = 0, len;
	uint64_t n = 0, v;
	bool ended = false, stream = false;
	char note[PATH_MAX + 160];
	size_t torn = SIZE_MAX;
	int rc = 0, got;

	errno = 0;
	while (rc == 0 && (got = io_getline(f, &line, &cap, &len)) != 0) {
		r->line++;
		if (got < 0) {
			if (got == -E2BIG)
				io_err(r, "line longer than %u bytes (not a dtxn history)",
				       (unsigned)DTXN_HIST_LINE_MAX);
			else if (got == -EILSEQ)
				io_err(r, "NUL byte in the line (not a text history)");
			else
				io_err(r, "out of memory");
			rc = got == -ENOMEM ? -ENOMEM : -EINVAL;
			break;
		}
		if (got == 2 && stream && !ended) {
			/* a streamed file whose writer died in the middle of a line */
			torn = len;
			break;
		}
		if (len > 0 && line[len - 1] == '\r')
			line[--len] = '\0';
		p = line;
		if (r->line == 1) {
			if (!io_tok(&p, &s, &e) || (size_t)(e - s) != strlen(HIST_MAGIC) ||
			    memcmp(s, HIST_MAGIC, (size_t)(e - s)) != 0 || !io_tok(&p, &s, &e) ||
			    !io_u64(s, e, &v) || io_tok(&p, &s, &e)) {
				io_err(r, "not a dtxn history (expected '%s %d')", HIST_MAGIC,
				       HIST_FORMAT);
				rc = -EINVAL;
			} else if (v != HIST_FORMAT) {
				io_err(r, "history format %" PRIu64 " not supported (this dtxn reads %d)",
				       v, HIST_FORMAT);
				rc = -EINVAL;
			}
			continue;
		}
		if (!io_tok(&p, &s, &e) || *s == '#')
			continue; /* blank line or comment */
		if (ended) {
			io_err(r, "data after the 'end' line");
			rc = -EINVAL;
		} else if (e - s == 1 && (*s == 'C' || *s == 'A')) {
			rc = io_txn(r, b, p, *s);
			n++;
		} else if (e - s == 4 && memcmp(s, "meta", 4) == 0) {
			rc = io_meta(r, h, p);
		} else if (e - s == 6 && memcmp(s, "stream", 6) == 0) {
			if (n != 0 || stream || io_tok(&p, &s, &e)) {
				io_err(r, "'stream' goes once, alone on its line, before the transactions");
				rc = -EINVAL;
			}
			stream = true;
		} else if (e - s == 7 && memcmp(s, "dropped", 7) == 0) {
			if (!io_tok(&p, &s, &e) || !io_u64(s, e, &v) || io_tok(&p, &s, &e)) {
				io_err(r, "bad 'dropped' line (expected 'dropped N')");
				rc = -EINVAL;
			} else {
				hist_buf_add_dropped(b, v);
			}
		} else if (e - s == 3 && memcmp(s, "end", 3) == 0) {
			if (!io_tok(&p, &s, &e) || !io_u64(s, e, &v) || io_tok(&p, &s, &e)) {
				io_err(r, "bad 'end' line (expected 'end N')");
				rc = -EINVAL;
			} else if (v != n) {
				io_err(r, "'end %" PRIu64 "' but %" PRIu64 " transactions were read",
				       v, n);
				rc = -EINVAL;
			}
			ended = true;
		} else {
			io_err(r, "unknown record '%.*s' (C, A, meta, stream, dropped, end)",
			       (int)(e - s < 32 ? e - s : 32), s);
			rc = -EINVAL;
		}
	}
	if (rc == 0 && ferror(f)) {
		r->line = 0;
		io_err(r, "read error: %s", strerror(errno ? errno : EIO));
		rc = -EIO;
	}
	free(line);
	if (rc == 0 && r->line == 0) {
		io_err(r, "empty file (not a dtxn history)");
		rc = -EINVAL;
	} else if (rc == 0 && !ended && stream) {
		/* streamed as the run went: its writer died before the end */
		int k = snprintf(note, sizeof(note), "%s: cut short after %" PRIu64 " transactions (streamed, no 'end' line: its writer died)",
				 r->name, n);

		if (torn != SIZE_MAX && k > 0 && (size_t)k < sizeof(note))
			snprintf(note + k, sizeof(note) - (size_t)k, "; its last line (%zu bytes, no newline) ignored",
				 torn);
		hist_set_cut(h, note);
	} else if (rc == 0 && !ended) {
		r->line = 0;
		io_err(r, "no 'end' line: the file is cut short");
		rc = -EINVAL;
	}
	return rc;
}

struct dtxn_history *
dtxn_history_read(FILE *f, const char *name, char *err, size_t errlen)
{
	struct io_read r = { .name = name != NULL ? name : "history", .err = err,
			     .errlen = errlen };
	struct dtxn_history *h;
	struct dtxn_hist_buf *b;
	int rc;

	if (err != NULL && errlen > 0)
		err[0] = '\0';
	if (f == NULL) {
		io_err(&r, "no file");
		rte_errno = EINVAL;
		return NULL;
	}
	h = dtxn_history_create();
	b = dtxn_hist_buf_create(0, UINT64_MAX);
	if (h == NULL || b == NULL || dtxn_history_add_buf(h, b) != 0) {
		dtxn_history_free(h);
		dtxn_hist_buf_free(b);
		io_err(&r, "out of memory");
		rte_errno = ENOMEM;
		return NULL;
	}
	rc = io_parse(&r, f, h, b);
	if (rc != 0) {
		dtxn_history_free(h);
		rte_errno = -rc;
		return NULL;
	}
	return h;
}

struct dtxn_history *
dtxn_history_load(const char *path, char *err, size_t errlen)
{
	struct dtxn_history *h;
	FILE *f;
	int e;

	if (path == NULL || path[0] == '\0') {
		if (err != NULL && errlen > 0)
			snprintf(err, errlen, "no history file named");
		rte_errno = EINVAL;
		return NULL;
	}
	f = fopen(path, "r");
	if (f == NULL) {
		e = errno;
		if (err != NULL && errlen > 0)
			snprintf(err, errlen, "%s: %s", path, strerror(e));
		rte_errno = e;
		return NULL;
	}
	h = dtxn_history_read(f, path, err, errlen);
	e = rte_errno;
	fclose(f);
	rte_errno = e;
	return h;
}
