/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/check's streamed history (hist_stream.c): a round trip through the
 * file (with a dropped record); the handoff from the
 * sealing threads (lanes) to the writer thread. Order is kept per lane and
 * nothing is lost across buffer boundaries (two lanes, tiny buffers); a
 * writer that cannot write (a pipe nobody reads) empties the pool, and a
 * seal then waits (-EAGAIN, counted once per seal) without dropping its
 * line, and goes on once the writer catches up; a line in a partly filled
 * buffer reaches the file without a flush or a close (the flush period).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <rte_errno.h>

#include "dtxn_check.h"
#include "unit_eal.h"

/* Appends a committed RMW of key @p key over version @p ver to @p b (not sealed). */
static void
put_rec(struct dtxn_hist_buf *b, uint64_t id, uint64_t key, uint64_t ver)
{
	struct dtxn_hist_item *it = dtxn_hist_buf_append(b, id, DTXN_HIST_COMMITTED, 1);

	assert_non_null(it);
	it->key = key;
	it->ver = ver;
	it->table = 0;
	it->op = DTXN_HIST_RMW;
	it->flags = 0;
	it->wseq = 0;
}

/* Seals the pending record, retrying while the pool is empty. @return the -EAGAIN count. */
static uint64_t
seal_wait(struct dtxn_hist_buf *b)
{
	uint64_t again = 0;
	int rc;

	while ((rc = dtxn_hist_buf_seal(b)) == -EAGAIN) {
		again++;
		sched_yield();
	}
	assert_int_equal(rc, 0);
	return again;
}

static void
read_file_text(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
}

/* Each sealed record is in the file after a flush (the writer thread's
 * handoff: test_hist_stream.c); a clean close ends it; keep = false holds
 * nothing in memory. */
static void
test_stream_round_trip(void **state)
{
	char path[] = "/tmp/ut_check_streamXXXXXX", text[1024], err[256];
	struct dtxn_history *meta = dtxn_history_create(), *h;
	struct dtxn_hist_stream *s;
	struct dtxn_hist_buf *b = dtxn_hist_buf_create(3, 1 << 20);
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	assert_non_null(meta);
	assert_non_null(b);
	assert_int_equal(dtxn_history_set_meta(meta, "isolation", "sr"), 0);
	s = dtxn_hist_stream_open(path, meta);
	assert_non_null(s);
	assert_int_equal(dtxn_hist_buf_stream(b, s, false, 0), 0);
	put_rec(b, 0x10, 1, DTXN_HIST_VER_INIT);
	assert_int_equal(dtxn_hist_buf_seal(b), 0);
	assert_int_equal(dtxn_hist_stream_flush(s), 0);
	read_file_text(path, text, sizeof(text));
	assert_string_equal(text, "dtxn-history 1\nmeta isolation sr\nstream\nC 0x10 3 m 0:0x1:0\n");
	put_rec(b, 0x11, 1, 0x10);
	assert_int_equal(dtxn_hist_buf_seal(b), 0);
	assert_null(dtxn_hist_buf_append(b, 0x12, DTXN_HIST_COMMITTED, DTXN_HIST_MAX_ITEMS + 1));
	assert_int_equal(dtxn_hist_buf_seal(b), 0); /* a dropped record writes nothing */
	assert_int_equal(dtxn_hist_stream_flush(s), 0);
	assert_int_equal(dtxn_hist_stream_txns(s), 2);
	assert_int_equal(dtxn_hist_buf_txns(b), 0); /* keep = false: all in the file */
	assert_int_equal(dtxn_hist_stream_close(s, dtxn_hist_buf_dropped(b)), 0);
	h = dtxn_history_load(path, err, sizeof(err));
	if (h == NULL)
		fail_msg("%s", err);
	assert_int_equal(dtxn_history_txns(h), 2);
	assert_int_equal(dtxn_history_dropped(h), 1);
	assert_int_equal(dtxn_history_cut(h), 0);
	assert_string_equal(dtxn_history_note(h), "");
	dtxn_history_free(h);
	dtxn_hist_buf_free(b);
	dtxn_history_free(meta);
	unlink(path);
}


#define LANE_TXNS 5000

struct lane_arg {
	struct dtxn_hist_buf *b;
	uint32_t coord;
	uint64_t again;
};

static void *
lane_main(void *arg)
{
	struct lane_arg *a = arg;

	for (uint64_t i = 1; i <= LANE_TXNS; i++) {
		put_rec(a->b, (uint64_t)a->coord << 32 | i, i, DTXN_HIST_VER_INIT);
		a->again += seal_wait(a->b);
	}
	return NULL;
}

struct order_check {
	uint64_t next[2]; /**< per coordinator: the id's sequence expected next */
	bool bad;
};

static int
order_visit(const struct dtxn_hist_txn *t, void *arg)
{
	struct order_check *oc = arg;

	if (t->coord > 1 || (t->id & 0xffffffffu) != oc->next[t->coord] ||
	    t->id >> 32 != t->coord) {
		oc->bad = true;
		return 1;
	}
	oc->next[t->coord]++;
	return 0;
}

/* Two lanes on two threads, buffers of 256 bytes (a few lines each) and a
 * pool of 4: every line is in the file once, in seal order per lane. */
static void
test_order_across_buffers(void **state)
{
	char path[] = "/tmp/ut_hist_streamXXXXXX", err[256];
	struct dtxn_hist_stream_conf conf = { .buf_bytes = 256, .n_bufs = 4, .flush_ns = 1000000 };
	struct dtxn_hist_stream_stats st;
	struct lane_arg la[2];
	struct order_check oc = { .next = { 1, 1 } };
	struct dtxn_hist_stream *s;
	struct dtxn_history *h;
	pthread_t th[2];
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	s = dtxn_hist_stream_open_conf(path, NULL, &conf);
	assert_non_null(s);
	for (unsigned i = 0; i < 2; i++) {
		la[i] = (struct lane_arg){ .b = dtxn_hist_buf_create(i, 1 << 20), .coord = i };
		assert_non_null(la[i].b);
		assert_int_equal(dtxn_hist_buf_stream(la[i].b, s, false, i), 0);
	}
	assert_int_equal(dtxn_hist_buf_stream(la[0].b, s, false, DTXN_HIST_STREAM_LANES), -EINVAL);
	for (unsigned i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&th[i], NULL, lane_main, &la[i]), 0);
	for (unsigned i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	assert_int_equal(dtxn_hist_stream_flush(s), 0);
	dtxn_hist_stream_stats(s, &st);
	assert_int_equal(st.txns, 2 * LANE_TXNS);
	assert_int_equal(st.lost, 0);
	assert_true(st.writes >= 2 * LANE_TXNS * 20 / 256); /* one buffer holds < 13 lines */
	printf("two lanes, 256 B buffers x 4: %" PRIu64 " lines in %" PRIu64 " writes, "
	       "%" PRIu64 " seals waited for a buffer (%" PRIu64 " + %" PRIu64 " retries)\n",
	       st.txns, st.writes, st.waits, la[0].again, la[1].again);
	assert_int_equal(dtxn_hist_stream_close(s, 0), 0);
	h = dtxn_history_load(path, err, sizeof(err));
	if (h == NULL)
		fail_msg("%s", err);
	assert_int_equal(dtxn_history_txns(h), 2 * LANE_TXNS);
	assert_int_equal(dtxn_history_cut(h), 0);
	assert_int_equal(dtxn_history_foreach(h, order_visit, &oc), 0);
	assert_false(oc.bad);
	assert_int_equal(oc.next[0], LANE_TXNS + 1);
	assert_int_equal(oc.next[1], LANE_TXNS + 1);
	dtxn_history_free(h);
	for (unsigned i = 0; i < 2; i++)
		dtxn_hist_buf_free(la[i].b);
	unlink(path);
}

struct pipe_reader {
	int fd;
	char *text;
	size_t len, cap;
};

static void *
reader_main(void *arg)
{
	struct pipe_reader *r = arg;
	ssize_t n;

	for (;;) {
		if (r->cap - r->len < 65536) {
			r->cap = r->cap * 2 + 65536;
			r->text = realloc(r->text, r->cap + 1);
			if (r->text == NULL)
				return NULL;
		}
		n = read(r->fd, r->text + r->len, r->cap - r->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		r->len += (size_t)n;
	}
	r->text[r->len] = '\0';
	return NULL;
}

/* The writer blocked in write(2) (a pipe nobody reads yet): the seals fill
 * the pool, the next one waits (-EAGAIN, its line still pending), counted
 * once however often it retries; once the pipe is read the wait ends, and
 * every line reaches the file, in order, with the end line. */
static void
test_full_pool_waits(void **state)
{
	char dir[] = "/tmp/ut_hist_pipeXXXXXX", path[64], want[64];
	struct dtxn_hist_stream_conf conf = { .buf_bytes = 4096, .n_bufs = 4, .flush_ns = 1000000 };
	struct pipe_reader rd = { 0 };
	struct dtxn_hist_stream_stats st;
	struct dtxn_hist_stream *s;
	struct dtxn_hist_buf *b = dtxn_hist_buf_create(7, 1 << 20);
	uint64_t n = 0, again = 0, total, waits;
	pthread_t th;
	const char *p;
	int rc;

	(void)state;
	assert_non_null(b);
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/fifo", dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	rd.fd = open(path, O_RDONLY | O_NONBLOCK); /* so the writer's open does not block */
	assert_true(rd.fd >= 0);
	s = dtxn_hist_stream_open_conf(path, NULL, &conf);
	assert_non_null(s);
	assert_int_equal(dtxn_hist_buf_stream(b, s, false, 3), 0);
	/* the pipe (64 KiB) and the pool (16 KiB) fill: ~4000 lines of ~20 B;
	 * a seal that waits 50 ms is behind a writer that cannot write */
	for (;;) {
		int tries = 0;

		put_rec(b, n + 1, n + 1, DTXN_HIST_VER_INIT);
		while ((rc = dtxn_hist_buf_seal(b)) == -EAGAIN && ++tries < 50)
			usleep(1000);
		if (rc == -EAGAIN)
			break;
		assert_int_equal(rc, 0);
		assert_true(++n < 1000000);
	}
	dtxn_hist_stream_stats(s, &st);
	waits = st.waits;
	assert_true(waits >= 1);
	for (int i = 0; i < 50; i++) { /* still waiting: the writer is blocked */
		usleep(1000);
		assert_int_equal(dtxn_hist_buf_seal(b), -EAGAIN);
		again++;
	}
	dtxn_hist_stream_stats(s, &st);
	assert_int_equal(st.waits, waits); /* counted once per seal, however many retries */
	assert_true(st.txns < n);      /* the rest sits in the pool */
	assert_int_equal(fcntl(rd.fd, F_SETFL, 0), 0);
	assert_int_equal(pthread_create(&th, NULL, reader_main, &rd), 0);
	again += seal_wait(b);
	n++;
	for (uint64_t i = 0; i < 1000; i++, n++) {
		put_rec(b, n + 1, n + 1, DTXN_HIST_VER_INIT);
		again += seal_wait(b);
	}
	dtxn_hist_stream_stats(s, &st);
	assert_true(st.waits >= 1);
	assert_true(st.wait_ns > 0);
	assert_true(st.handoff_max_ns >= st.wait_ns / st.waits);
	printf("pool of 4 x 4 KiB behind a blocked pipe: %" PRIu64 " seals waited (%" PRIu64
	       " retries), %.1f ms waiting, slowest handoff %.1f ms\n", st.waits, again,
	       (double)st.wait_ns / 1e6, (double)st.handoff_max_ns / 1e6);
	assert_int_equal(dtxn_hist_stream_close(s, 0), 0); /* fsync of a pipe: EINVAL, ignored */
	pthread_join(th, NULL);
	close(rd.fd);
	assert_non_null(rd.text);
	/* every line, in order: "C <id> 7 m 0:<key>:0" */
	p = strstr(rd.text, "stream\n");
	assert_non_null(p);
	p += strlen("stream\n");
	for (total = 1; total <= n; total++) {
		int len = snprintf(want, sizeof(want), "C 0x%" PRIx64 " 7 m 0:0x%" PRIx64 ":0\n", total,
				   total);

		if (strncmp(p, want, (size_t)len) != 0)
			fail_msg("line %" PRIu64 ": want '%.*s', got '%.40s'", total, len - 1, want, p);
		p += len;
	}
	snprintf(want, sizeof(want), "dropped 0\nend %" PRIu64 "\n", n);
	assert_string_equal(p, want);
	free(rd.text);
	dtxn_hist_buf_free(b);
	unlink(path);
	rmdir(dir);
}

/* A line in a partly filled buffer reaches the file by itself (no flush,
 * no close): the writer writes it within its flush period. How long it
 * took is printed, not asserted (the host may be loaded). */
static void
test_partial_written(void **state)
{
	char path[] = "/tmp/ut_hist_partXXXXXX", text[512];
	struct dtxn_hist_buf *b = dtxn_hist_buf_create(2, 1 << 20);
	struct dtxn_hist_stream *s;
	struct timespec t0, t1;
	FILE *f;
	size_t len = 0;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	assert_non_null(b);
	s = dtxn_hist_stream_open(path, NULL);
	assert_non_null(s);
	assert_int_equal(dtxn_hist_buf_stream(b, s, false, 0), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	put_rec(b, 0x42, 5, DTXN_HIST_VER_INIT);
	assert_int_equal(dtxn_hist_buf_seal(b), 0);
	for (int i = 0; i < 60000; i++) { /* up to a minute */
		f = fopen(path, "r");
		assert_non_null(f);
		len = fread(text, 1, sizeof(text) - 1, f);
		fclose(f);
		text[len] = '\0';
		if (strstr(text, "C 0x42 2 m 0:0x5:0\n") != NULL)
			break;
		usleep(1000);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_non_null(strstr(text, "C 0x42 2 m 0:0x5:0\n"));
	printf("a lone line reached the file %.1f ms after its seal (flush period %.1f ms)\n",
	       (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6,
	       DTXN_HIST_STREAM_FLUSH_NS / 1e6);
	assert_int_equal(dtxn_hist_stream_close(s, 0), 0);
	dtxn_hist_buf_free(b);
	unlink(path);
}

/* Bad configurations are refused. */
static void
test_conf_refused(void **state)
{
	struct dtxn_hist_stream_conf conf;

	(void)state;
	dtxn_hist_stream_conf_default(&conf);
	conf.n_bufs = 1;
	assert_null(dtxn_hist_stream_open_conf("/tmp/ut_hist_never", NULL, &conf));
	dtxn_hist_stream_conf_default(&conf);
	conf.flush_ns = 0;
	assert_null(dtxn_hist_stream_open_conf("/tmp/ut_hist_never", NULL, &conf));
	assert_null(dtxn_hist_stream_open_conf("/tmp/ut_hist_never", NULL, NULL));
	assert_int_equal(access("/tmp/ut_hist_never", F_OK), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stream_round_trip),
		cmocka_unit_test(test_order_across_buffers),
		cmocka_unit_test(test_full_pool_waits),
		cmocka_unit_test(test_partial_written),
		cmocka_unit_test(test_conf_refused),
	};
	int rc;

	if (dtxn_unit_eal_init("ut_hist_stream") != 0)
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	dtxn_unit_eal_fini();
	return rc;
}
