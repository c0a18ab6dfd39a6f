/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A history file written as the run goes (dtxn_check.h, "Streamed history
 * file"), without a system call on the worker lcores: each worker (a
 * lane) copies every ended transaction's line into its current buffer, a
 * fixed one taken from a pool allocated at open; a full buffer goes to the
 * stream's writer thread through a ring, and the writer appends it with
 * write(2). The writer also writes, within flush_ns of its sealing, what
 * a lane has published in the buffer it is still filling, so a SIGKILL of
 * the process loses at most the lines sealed in the last flush_ns (plus
 * what a write the file system holds up keeps waiting).
 *
 *   dtxn-history 1
 *   meta ...
 *   stream
 *   C ... (one line per transaction, in the order they ended per lane)
 *   dropped D      } only after a clean end:
 *   end N          } a file without them was cut short
 *
 * Lock-free handoff: a buffer's published length (bytes and lines in one
 * 64-bit word) is stored with release after its bytes; the full ring is
 * multi-producer (RTS: a preempted worker holds up no other), single
 * consumer; the free ring single producer (the writer), multi-consumer.
 * Each buffer carries its lane's sequence number, so the writer writes a
 * lane's partial buffer only once every earlier buffer of the lane is
 * written: per lane, lines reach the file in seal order.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sem_clockwait, pthread_setname_np */
#endif
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_ring.h>

#include "check_private.h"

/* One buffer of the pool. */
struct stream_buf {
	uint64_t pub;        /**< published: bytes | lines << 32 (release, by the filler) */
	uint32_t lane;
	uint32_t seq;        /**< its lane's buffer sequence number */
	uint32_t wr_bytes;   /**< writer only: bytes of it already written */
	uint32_t wr_lines;
	char *data;
};

/* A lane: the buffer one thread fills. Cache-aligned: lanes are on different lcores. */
struct stream_lane {
	/* the filling thread's */
	struct stream_buf *cur;     /**< being filled (read by the writer: atomic); NULL: none */
	uint32_t fill_bytes, fill_lines;
	uint32_t seq_next;
	uint64_t wait_since;        /**< the pending line found no free buffer at (ns); 0: not */
	uint64_t sealed;            /**< bytes sealed, ever (seq_cst: the wake-up handshake) */
	uint64_t handoff_max_ns;    /**< slowest seal (relaxed; read by others) */
	uint64_t waits;             /**< seals that found no free buffer (relaxed) */
	uint64_t wait_ns;           /**< their time waiting, summed (relaxed) */
	/* the writer's */
	uint64_t written __rte_cache_aligned; /**< bytes written, ever (seq_cst) */
	uint32_t wseq;              /**< sequence number of the lane's next buffer to finish */
} __rte_cache_aligned;

struct dtxn_hist_stream {
	int fd;
	struct dtxn_hist_stream_conf conf;
	struct stream_lane *lanes;  /**< DTXN_HIST_STREAM_LANES */
	struct stream_buf *bufs;
	char *mem;                  /**< every buffer's data */
	struct rte_ring *free_ring, *full_ring;
	void *ring_mem[2];
	sem_t kick;                 /**< a full buffer, a clean lane that got a line, a flush, the stop */
	pthread_t writer;
	bool writer_on;
	bool stop;                  /**< atomic */
	/* dtxn_hist_stream_flush(): the main thread and the writer */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint64_t flush_req, flush_done;
	/* the writer's figures (atomic: read by any thread) */
	uint64_t txns;              /**< lines written */
	uint64_t writes;            /**< write(2) calls of lines */
	uint64_t slowest_ns;        /**< the longest of them */
	uint64_t lost;              /**< lines a write error lost */
	int error;                  /**< the first write error (-errno), 0: none */
};

/* CLOCK_MONOTONIC, ns: the writer is an OS thread (dtxn_now_ns() is
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

static void
stream_max(uint64_t *at, uint64_t v)
{
	if (v > __atomic_load_n(at, __ATOMIC_RELAXED))
		__atomic_store_n(at, v, __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------------ */
/* The writer thread                                                  */
/* ------------------------------------------------------------------ */

/* Writes bytes [wr_bytes, @p bytes) of @p b (@p lines lines end there). */
static void
writer_put(struct dtxn_hist_stream *s, struct stream_buf *b, uint32_t bytes, uint32_t lines)
{
	struct stream_lane *l = &s->lanes[b->lane];
	uint32_t n = bytes - b->wr_bytes, nl = lines - b->wr_lines;
	uint64_t t0;
	int rc;

	if (n == 0)
		return;
	if (s->error == 0) {
		t0 = stream_mono_ns();
		rc = stream_write_all(s->fd, b->data + b->wr_bytes, n);
		stream_max(&s->slowest_ns, stream_mono_ns() - t0);
		__atomic_fetch_add(&s->writes, 1, __ATOMIC_RELAXED);
		if (rc != 0)
			s->error = rc;
	}
	if (s->error == 0)
		__atomic_fetch_add(&s->txns, nl, __ATOMIC_RELAXED);
	else
		__atomic_fetch_add(&s->lost, nl, __ATOMIC_RELAXED);
	b->wr_bytes = bytes;
	b->wr_lines = lines;
	__atomic_fetch_add(&l->written, n, __ATOMIC_SEQ_CST);
}

/* Writes the rest of every full buffer, in ring order, and frees them. */
static void
writer_drain_full(struct dtxn_hist_stream *s)
{
	void *p;

	while (rte_ring_dequeue(s->full_ring, &p) == 0) {
		struct stream_buf *b = p;
		uint64_t pub = __atomic_load_n(&b->pub, __ATOMIC_ACQUIRE);

		writer_put(s, b, (uint32_t)pub, (uint32_t)(pub >> 32));
		s->lanes[b->lane].wseq = b->seq + 1;
		/* free: nothing published; the worker that takes it reads this
		 * with acquire, so its writes to the buffer come after ours */
		__atomic_store_n(&b->pub, 0, __ATOMIC_RELEASE);
		(void)rte_ring_enqueue(s->free_ring, b); /* room for every buffer */
	}
}

/* Writes what each lane published in the buffer it fills, when every earlier buffer of the lane is written. */
static void
writer_partials(struct dtxn_hist_stream *s)
{
	for (unsigned i = 0; i < DTXN_HIST_STREAM_LANES; i++) {
		struct stream_lane *l = &s->lanes[i];
		struct stream_buf *b;
		uint64_t pub;

		if (__atomic_load_n(&l->sealed, __ATOMIC_SEQ_CST) ==
		    __atomic_load_n(&l->written, __ATOMIC_RELAXED))
			continue;
		b = __atomic_load_n(&l->cur, __ATOMIC_ACQUIRE);
		if (b == NULL || b->seq != l->wseq)
			continue; /* an earlier buffer is still in the full ring */
		pub = __atomic_load_n(&b->pub, __ATOMIC_ACQUIRE);
		writer_put(s, b, (uint32_t)pub, (uint32_t)(pub >> 32));
	}
}

/* Some lane has sealed bytes not written yet. */
static bool
writer_pending(struct dtxn_hist_stream *s)
{
	for (unsigned i = 0; i < DTXN_HIST_STREAM_LANES; i++)
		if (__atomic_load_n(&s->lanes[i].written, __ATOMIC_SEQ_CST) !=
		    __atomic_load_n(&s->lanes[i].sealed, __ATOMIC_SEQ_CST))
			return true;
	return false;
}

static void *
writer_main(void *arg)
{
	struct dtxn_hist_stream *s = arg;
	uint64_t due = 0, req;

	for (;;) {
		bool stop = __atomic_load_n(&s->stop, __ATOMIC_ACQUIRE);
		uint64_t now;

		pthread_mutex_lock(&s->mu);
		req = s->flush_req;
		pthread_mutex_unlock(&s->mu);
		writer_drain_full(s);
		now = stream_mono_ns();
		if (due == 0)
			due = now + s->conf.flush_ns;
		if (stop || req != s->flush_done || now >= due) {
			writer_partials(s);
			writer_drain_full(s); /* a buffer handed meanwhile */
			writer_partials(s);
			due = 0;
		}
		if (req != s->flush_done) {
			pthread_mutex_lock(&s->mu);
			s->flush_done = req;
			pthread_cond_broadcast(&s->cv);
			pthread_mutex_unlock(&s->mu);
		}
		if (writer_pending(s)) {
			struct timespec ts = { .tv_sec = (time_t)(due / 1000000000ull),
					       .tv_nsec = (long)(due % 1000000000ull) };

			if (due == 0)
				continue;
			if (sem_clockwait(&s->kick, CLOCK_MONOTONIC, &ts) == 0)
				while (sem_trywait(&s->kick) == 0)
					;
			continue;
		}
		due = 0;
		if (stop)
			break;
		while (sem_wait(&s->kick) != 0 && errno == EINTR)
			;
		while (sem_trywait(&s->kick) == 0) /* one pass serves every kick so far */
			;
	}
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Open, seal, flush, close                                           */
/* ------------------------------------------------------------------ */

void
dtxn_hist_stream_conf_default(struct dtxn_hist_stream_conf *conf)
{
	conf->buf_bytes = DTXN_HIST_STREAM_BUF_BYTES;
	conf->n_bufs = DTXN_HIST_STREAM_BUFS;
	conf->flush_ns = DTXN_HIST_STREAM_FLUSH_NS;
}

static struct rte_ring *
stream_ring(struct dtxn_hist_stream *s, unsigned i, const char *name, unsigned flags)
{
	unsigned count = rte_align32pow2(s->conf.n_bufs + 1);
	ssize_t size = rte_ring_get_memsize(count);
	struct rte_ring *r;

	if (size < 0 || posix_memalign(&s->ring_mem[i], RTE_CACHE_LINE_SIZE, (size_t)size) != 0)
		return NULL;
	r = s->ring_mem[i];
	if (rte_ring_init(r, name, count, flags) != 0)
		return NULL;
	return r;
}

static void
stream_free(struct dtxn_hist_stream *s)
{
	free(s->ring_mem[0]);
	free(s->ring_mem[1]);
	free(s->mem);
	free(s->bufs);
	free(s->lanes);
	sem_destroy(&s->kick);
	pthread_mutex_destroy(&s->mu);
	pthread_cond_destroy(&s->cv);
	free(s);
}

/* The pool, the rings and the lanes (@p s->conf set): 0 or -ENOMEM. */
static int
stream_alloc(struct dtxn_hist_stream *s)
{
	const struct dtxn_hist_stream_conf *cf = &s->conf;

	s->lanes = aligned_alloc(RTE_CACHE_LINE_SIZE,
				 sizeof(*s->lanes) * DTXN_HIST_STREAM_LANES);
	s->bufs = calloc(cf->n_bufs, sizeof(*s->bufs));
	s->mem = malloc((size_t)cf->n_bufs * cf->buf_bytes);
	if (s->lanes == NULL || s->bufs == NULL || s->mem == NULL)
		return -ENOMEM;
	memset(s->lanes, 0, sizeof(*s->lanes) * DTXN_HIST_STREAM_LANES);
	s->free_ring = stream_ring(s, 0, "hist_free", RING_F_SP_ENQ | RING_F_MC_RTS_DEQ);
	s->full_ring = stream_ring(s, 1, "hist_full", RING_F_MP_RTS_ENQ | RING_F_SC_DEQ);
	if (s->free_ring == NULL || s->full_ring == NULL)
		return -ENOMEM;
	for (unsigned i = 0; i < cf->n_bufs; i++) {
		s->bufs[i].data = s->mem + (size_t)i * cf->buf_bytes;
		(void)rte_ring_enqueue(s->free_ring, &s->bufs[i]);
	}
	return 0;
}

struct dtxn_hist_stream *
dtxn_hist_stream_open_conf(const char *path, const struct dtxn_history *meta,
			   const struct dtxn_hist_stream_conf *conf)
{
	struct dtxn_hist_stream *s;
	char *head = NULL;
	size_t head_len = 0;
	FILE *mf;
	int rc;

	if (path == NULL || path[0] == '\0' || conf == NULL || conf->n_bufs < 2 ||
	    conf->buf_bytes < 64 || conf->buf_bytes > UINT32_MAX || conf->flush_ns == 0) {
		rte_errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (s == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	s->fd = -1;
	s->conf = *conf;
	sem_init(&s->kick, 0, 0);
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	rc = stream_alloc(s);
	mf = rc == 0 ? open_memstream(&head, &head_len) : NULL;
	if (mf == NULL) {
		rc = -ENOMEM;
		goto fail;
	}
	hist_header_write(mf, meta);
	fputs("stream\n", mf);
	if (fclose(mf) != 0) {
		rc = -ENOMEM;
		goto fail;
	}
	s->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
	if (s->fd < 0) {
		rc = -errno;
		goto fail;
	}
	rc = stream_write_all(s->fd, head, head_len);
	if (rc == 0)
		rc = -pthread_create(&s->writer, NULL, writer_main, s);
	if (rc != 0)
		goto fail;
	s->writer_on = true;
	(void)pthread_setname_np(s->writer, "dtxn-hist");
	free(head);
	return s;
fail:
	if (s->fd >= 0)
		close(s->fd);
	free(head);
	stream_free(s);
	rte_errno = -rc;
	return NULL;
}

struct dtxn_hist_stream *
dtxn_hist_stream_open(const char *path, const struct dtxn_history *meta)
{
	struct dtxn_hist_stream_conf conf;

	dtxn_hist_stream_conf_default(&conf);
	return dtxn_hist_stream_open_conf(path, meta, &conf);
}

bool
hist_stream_lane_ok(unsigned lane)
{
	return lane < DTXN_HIST_STREAM_LANES;
}

int
hist_stream_put(struct dtxn_hist_stream *s, unsigned lane, const char *line, size_t len)
{
	struct stream_lane *l = &s->lanes[lane];
	struct stream_buf *b = l->cur;
	uint64_t t0 = stream_mono_ns(), old;
	void *p;

	if (len > s->conf.buf_bytes)
		return -EMSGSIZE;
	if (b == NULL || l->fill_bytes + len > s->conf.buf_bytes) {
		if (rte_ring_dequeue(s->free_ring, &p) != 0) { /* the writer is behind */
			if (l->wait_since == 0) {
				l->wait_since = t0;
				__atomic_store_n(&l->waits, l->waits + 1, __ATOMIC_RELAXED);
			}
			return -EAGAIN;
		}
		if (b != NULL) {
			(void)rte_ring_enqueue(s->full_ring, b); /* room for every buffer */
			sem_post(&s->kick);
		}
		b = p;
		(void)__atomic_load_n(&b->pub, __ATOMIC_ACQUIRE); /* 0: the writer is done with it */
		b->lane = lane;
		b->seq = l->seq_next++;
		b->wr_bytes = b->wr_lines = 0;
		l->fill_bytes = l->fill_lines = 0;
		__atomic_store_n(&l->cur, b, __ATOMIC_RELEASE);
	}
	memcpy(b->data + l->fill_bytes, line, len);
	l->fill_bytes += (uint32_t)len;
	l->fill_lines++;
	__atomic_store_n(&b->pub, (uint64_t)l->fill_lines << 32 | l->fill_bytes, __ATOMIC_RELEASE);
	/* a lane the writer had written up to here gets a line: wake it (it
	 * stores written, then loads sealed; this stores sealed, then loads
	 * written: one of the two sees the other) */
	old = l->sealed;
	__atomic_store_n(&l->sealed, old + len, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&l->written, __ATOMIC_SEQ_CST) == old)
		sem_post(&s->kick);
	if (l->wait_since != 0) {
		__atomic_store_n(&l->wait_ns, l->wait_ns + (stream_mono_ns() - l->wait_since),
				 __ATOMIC_RELAXED);
		t0 = l->wait_since;
		l->wait_since = 0;
	}
	stream_max(&l->handoff_max_ns, stream_mono_ns() - t0);
	return 0;
}

int
dtxn_hist_stream_flush(struct dtxn_hist_stream *s)
{
	uint64_t req;
	int rc;

	if (s == NULL)
		return 0;
	pthread_mutex_lock(&s->mu);
	req = ++s->flush_req;

	sem_post(&s->kick);
	while (s->flush_done < req)
		pthread_cond_wait(&s->cv, &s->mu);
	rc = s->error;
	pthread_mutex_unlock(&s->mu);
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

void
dtxn_hist_stream_stats(const struct dtxn_hist_stream *s, struct dtxn_hist_stream_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (s == NULL)
		return;
	st->txns = __atomic_load_n(&s->txns, __ATOMIC_RELAXED);
	st->writes = __atomic_load_n(&s->writes, __ATOMIC_RELAXED);
	st->write_max_ns = __atomic_load_n(&s->slowest_ns, __ATOMIC_RELAXED);
	st->lost = __atomic_load_n(&s->lost, __ATOMIC_RELAXED);
	for (unsigned i = 0; i < DTXN_HIST_STREAM_LANES; i++) {
		const struct stream_lane *l = &s->lanes[i];
		uint64_t h = __atomic_load_n(&l->handoff_max_ns, __ATOMIC_RELAXED);

		st->handoff_max_ns = RTE_MAX(st->handoff_max_ns, h);
		st->waits += __atomic_load_n(&l->waits, __ATOMIC_RELAXED);
		st->wait_ns += __atomic_load_n(&l->wait_ns, __ATOMIC_RELAXED);
	}
}

int
dtxn_hist_stream_close(struct dtxn_hist_stream *s, uint64_t dropped)
{
	char tail[64];
	int n, rc;

	if (s == NULL)
		return 0;
	if (s->writer_on) { /* it writes every sealed line, then ends */
		__atomic_store_n(&s->stop, true, __ATOMIC_RELEASE);
		sem_post(&s->kick);
		pthread_join(s->writer, NULL);
	}
	rc = s->error;
	dropped = hist_sat_add(dropped, s->lost);
	n = snprintf(tail, sizeof(tail), "dropped %" PRIu64 "\nend %" PRIu64 "\n", dropped,
		     dtxn_hist_stream_txns(s));
	if (rc == 0)
		rc = stream_write_all(s->fd, tail, (size_t)n);
	/* fsync: EINVAL for a pipe or socket, nothing to sync */
	if (rc == 0 && fsync(s->fd) != 0 && errno != EINVAL)
		rc = -errno;
	if (close(s->fd) != 0 && rc == 0)
		rc = -errno;
	stream_free(s);
	return rc;
}
