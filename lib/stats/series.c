/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A run's throughput series (dtxn_stats.h, "Interval throughput"): one
 * entry per interval, from cumulative totals sampled at its end; with
 * dtxn_series_stream() each entry is also appended to a file as it closes.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stats_private.h"

/** Samples closer than this to the last one are ignored, s. */
#define SERIES_EPS_S 1e-9

int
dtxn_series_init(struct dtxn_series *s, double interval_s, double warmup_s)
{
	if (s == NULL || !(interval_s > 0) || !isfinite(interval_s) || !(warmup_s >= 0) ||
	    !isfinite(warmup_s))
		return -EINVAL;
	memset(s, 0, sizeof(*s));
	s->interval_s = interval_s;
	s->warmup_s = warmup_s;
	s->warm_done = !(warmup_s > 0);
	return 0;
}

static inline uint64_t
series_diff(uint64_t now, uint64_t before)
{
	return now >= before ? now - before : 0;
}

/* One interval line, one write(2): in the page cache at once, so a kill
 * loses no interval that closed. A failed write ends the file's series. */
static void
series_put(struct dtxn_series *s, const struct dtxn_interval *e)
{
	char line[160];
	int n = snprintf(line, sizeof(line), "%.6f %.6f %" PRIu64 " %" PRIu64 " %" PRIu64 " %d\n",
			 e->t_s, e->seconds, e->commits, e->attempts, e->aborts, e->warmup ? 1 : 0);

	if (write(s->out_fd, line, (size_t)n) != n) {
		STATS_LOG(WARNING, "series: cannot append to its file: %s; no more intervals there",
			  strerror(errno));
		close(s->out_fd);
		s->out_open = false;
	}
}

int
dtxn_series_stream(struct dtxn_series *s, const char *path, const char *label,
		   uint64_t t0_unix_ns)
{
	char head[160];
	int fd, n;

	if (s == NULL || path == NULL || path[0] == '\0' || label == NULL || s->out_open ||
	    strpbrk(label, " \t\n") != NULL || label[0] == '\0')
		return -EINVAL;
	n = snprintf(head, sizeof(head), "dtxn-series 1 %s %" PRIu64 " %.6f\n", label, t0_unix_ns,
		     s->interval_s);
	if (n < 0 || (size_t)n >= sizeof(head))
		return -EINVAL;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	if (write(fd, head, (size_t)n) != n) {
		int rc = errno ? -errno : -EIO;

		close(fd);
		return rc;
	}
	s->out_fd = fd;
	s->out_open = true;
	return 0;
}

int
dtxn_series_sample(struct dtxn_series *s, double t_s, uint64_t commits, uint64_t attempts,
		   uint64_t aborts)
{
	struct dtxn_interval *e;

	if (s == NULL || !(t_s > s->last_t_s + SERIES_EPS_S))
		return 0;
	if (s->n == s->cap) {
		unsigned cap = s->cap ? s->cap * 2 : 64;
		struct dtxn_interval *v = realloc(s->v, sizeof(*v) * cap);

		if (v == NULL) {
			STATS_LOG(WARNING, "series: out of memory, interval at %.3f s dropped", t_s);
			return -ENOMEM;
		}
		s->v = v;
		s->cap = cap;
	}
	e = &s->v[s->n++];
	e->t_s = t_s;
	e->seconds = t_s - s->last_t_s;
	e->commits = series_diff(commits, s->last_commits);
	e->attempts = series_diff(attempts, s->last_attempts);
	e->aborts = series_diff(aborts, s->last_aborts);
	e->warmup = !s->warm_done;
	s->last_t_s = t_s;
	s->last_commits = commits;
	s->last_attempts = attempts;
	s->last_aborts = aborts;
	if (s->out_open)
		series_put(s, e);
	return 0;
}

int
dtxn_series_end_warmup(struct dtxn_series *s, double t_s, uint64_t commits, uint64_t attempts,
		       uint64_t aborts)
{
	int rc;

	if (s == NULL || s->warm_done)
		return 0;
	rc = dtxn_series_sample(s, t_s, commits, attempts, aborts);
	s->warm_done = true;
	return rc;
}

void
dtxn_series_free(struct dtxn_series *s)
{
	if (s == NULL)
		return;
	free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
	if (s->out_open)
		close(s->out_fd);
	s->out_open = false;
}
