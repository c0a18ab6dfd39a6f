/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A history file written as the run goes (dtxn_check.h, "Streamed history
 * file"): a CN process appends each ended transaction as one line with
 * one O_APPEND write(2), so once the call returns the line is in the
 * kernel's page cache and survives a SIGKILL of the process. No user-space
 * buffer holds a transaction the process reported as ended.
 *
 *   dtxn-history 1
 *   meta ...
 *   stream
 *   C ... (one line per transaction, in the order they ended per lcore)
 *   dropped D      } only after a clean end:
 *   end N          } a file without them was cut short
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_errno.h>

#include "check_private.h"

struct dtxn_hist_stream {
	int fd;
	uint64_t txns;   /**< lines written (atomic: several lcores seal) */
	uint64_t slowest_ns; /**< the longest write(2) of a line (atomic max) */
};

/* CLOCK_MONOTONIC, ns: the OS call's own wall time (dtxn_now_ns() is
 * virtual on the simulator). */
static uint64_t
stream_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int
stream_write_all(int fd, const char *p, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

struct dtxn_hist_stream *
dtxn_hist_stream_open(const char *path, const struct dtxn_history *meta)
{
	struct dtxn_hist_stream *s;
	char *head = NULL;
	size_t head_len = 0;
	FILE *mf;
	int rc;

	if (path == NULL || path[0] == '\0') {
		rte_errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	mf = open_memstream(&head, &head_len);
	if (s == NULL || mf == NULL) {
		if (mf != NULL)
			fclose(mf);
		free(head);
		free(s);
		rte_errno = ENOMEM;
		return NULL;
	}
	hist_header_write(mf, meta);
	fputs("stream\n", mf);
	if (fclose(mf) != 0) {
		free(head);
		free(s);
		rte_errno = ENOMEM;
		return NULL;
	}
	s->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
	if (s->fd < 0) {
		rc = -errno;
		goto fail;
	}
	rc = stream_write_all(s->fd, head, head_len);
	if (rc != 0) {
		close(s->fd);
		goto fail;
	}
	free(head);
	return s;
fail:
	free(head);
	free(s);
	rte_errno = -rc;
	return NULL;
}

int
hist_stream_write(struct dtxn_hist_stream *s, const char *line, size_t len)
{
	uint64_t t0 = stream_mono_ns(), d, cur;
	int rc = stream_write_all(s->fd, line, len);

	d = stream_mono_ns() - t0;
	cur = __atomic_load_n(&s->slowest_ns, __ATOMIC_RELAXED);
	while (d > cur && !__atomic_compare_exchange_n(&s->slowest_ns, &cur, d, true,
						       __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	if (rc == 0)
		__atomic_fetch_add(&s->txns, 1, __ATOMIC_RELAXED);
	return rc;
}

uint64_t
dtxn_hist_stream_slowest_ns(const struct dtxn_hist_stream *s)
{
	return s == NULL ? 0 : __atomic_load_n(&s->slowest_ns, __ATOMIC_RELAXED);
}

uint64_t
dtxn_hist_stream_txns(const struct dtxn_hist_stream *s)
{
	return s == NULL ? 0 : __atomic_load_n(&s->txns, __ATOMIC_RELAXED);
}

int
dtxn_hist_stream_close(struct dtxn_hist_stream *s, uint64_t dropped)
{
	char tail[64];
	int n, rc;

	if (s == NULL)
		return 0;
	n = snprintf(tail, sizeof(tail), "dropped %" PRIu64 "\nend %" PRIu64 "\n", dropped,
		     dtxn_hist_stream_txns(s));
	rc = stream_write_all(s->fd, tail, (size_t)n);
	if (rc == 0 && fsync(s->fd) != 0)
		rc = -errno;
	if (close(s->fd) != 0 && rc == 0)
		rc = -errno;
	free(s);
	return rc;
}
