/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/check (issue 5): hand-built histories with each anomaly class (each
 * must be flagged with its class, at the right level) and clean ones
 * (none may be); the history file (round trip, malformed files refused
 * with a located message); recording buffers; a large generated history;
 * and lib/txn's recording hook under FORD on the shm fabric.
 *
 * Histories are written in the file format (doc/guides/checker.md):
 * "C id coord items..." with items "op table:key:version", where op is
 * r (read), m (read-modify-write), w (blind write), "d" suffix = delete.
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_memory.h>

#include "dtxn_check.h"
#include "dtxn_txn_driver.h"
#include "unit_eal.h"
#include "ut_txn.h"

#define HDR "dtxn-history 1\n"

/* ------------------------------------------------------------------ */
/* Helpers                                                            */
/* ------------------------------------------------------------------ */

static struct dtxn_history *
parse(const char *text, char *err, size_t errlen)
{
	FILE *f = fmemopen((void *)(uintptr_t)text, strlen(text), "r");
	struct dtxn_history *h;

	assert_non_null(f);
	h = dtxn_history_read(f, "t", err, errlen);
	fclose(f);
	return h;
}

/* Parses and checks @p text at @p level into @p r. */
static void
check_text(const char *text, enum dtxn_check_level level, struct dtxn_check_report *r)
{
	char err[256];
	struct dtxn_history *h = parse(text, err, sizeof(err));

	if (h == NULL)
		fail_msg("parse failed: %s", err);
	assert_int_equal(dtxn_check_run(h, level, r), 0);
	dtxn_history_free(h);
}

/* Bit mask of the classes found. */
static unsigned
found(const struct dtxn_check_report *r)
{
	unsigned m = 0;

	for (unsigned a = 0; a < DTXN_ANOM_MAX; a++)
		if (r->anom[a].count > 0)
			m |= 1u << a;
	return m;
}

#define BIT(a) (1u << (a))

static struct dtxn_check_report g_r;

/* ------------------------------------------------------------------ */
/* Clean histories                                                    */
/* ------------------------------------------------------------------ */

static void
test_clean_serial(void **state)
{
	/* T1 then T2 then T3, each seeing the previous one's writes */
	static const char *h = HDR
		"C 1 0 m 0:1:0 m 0:2:0\n"
		"C 2 1 r 0:1:1 m 0:2:1\n"
		"C 3 0 r 0:1:1 r 0:2:2\n"
		"A 4 1 m 0:1:1\n"
		"end 4\n";

	(void)state;
	check_text(h, DTXN_CHECK_SR, &g_r);
	assert_int_equal(found(&g_r), 0);
	assert_true(dtxn_check_ok(&g_r));
	assert_int_equal(g_r.committed, 3);
	assert_int_equal(g_r.aborted, 1);
	assert_int_equal(g_r.edges[DTXN_DEP_WW], 1);  /* key 2: 1 -> 2 */
	assert_int_equal(g_r.edges[DTXN_DEP_WR], 4);  /* 1->2 (x2), 1->3, 2->3 */
	assert_int_equal(g_r.edges[DTXN_DEP_RW], 0);
	check_text(h, DTXN_CHECK_SI, &g_r);
	assert_int_equal(found(&g_r), 0);
}

static void
test_clean_concurrent(void **state)
{
	/* a read-only txn serialized before a writer it overlapped (rw only),
	 * blind writes in a chain, an insert read as absent before it */
	static const char *h = HDR
		"C 1 0 m 0:1:0\n"
		"C 3 1 r 0:1:0 r 0:2:0 r 1:7:absent\n"
		"C 4 0 w 0:2:0\n"
		"C 5 1 w 0:2:4 w 1:7:absent\n"
		"C 6 0 r 0:2:5 r 1:7:5\n"
		"end 5\n";

	(void)state;
	check_text(h, DTXN_CHECK_SR, &g_r);
	assert_int_equal(found(&g_r), 0);
	assert_true(g_r.edges[DTXN_DEP_RW] >= 3);
	assert_int_equal(g_r.unresolved, 0);
}

static void
test_delete_reinsert_no_false_positive(void **state)
{
	/* absent after a delete and before a re-insert: ambiguous, no edge */
	static const char *h = HDR
		"C 1 0 w 0:1:absent\n"
		"C 2 0 md 0:1:1\n"
		"C 3 1 r 0:1:absent\n"
		"C 4 1 w 0:1:absent\n"
		"C 5 0 r 0:1:absent\n"
		"end 5\n";

	(void)state;
	check_text(h, DTXN_CHECK_SR, &g_r);
	assert_int_equal(found(&g_r), 0);
	assert_true(g_r.unresolved > 0);
}

/* Tombstones (DTXN_ITEM_F_TOMB): deleted keys are versions; reads and re-inserts are placed. */
static void
test_tombstones_placed(void **state)
{
	static const char *clean = HDR
		"C 1 0 w 0:1:absent\n"
		"C 2 0 md 0:1:1\n"
		"C 3 1 r 0:1:2\n"
		"C 4 1 w 0:1:2\n"
		"C 5 0 r 0:1:4\n"
		"end 5\n";
	/* T3 saw the key deleted and wrote key 5; T4 re-inserted the key and
	 * read key 5 before T3's write: a write skew through a tombstone */
	static const char *skew = HDR
		"C 1 0 w 0:1:absent\n"
		"C 2 0 md 0:1:1\n"
		"C 3 1 r 0:1:2 m 0:5:0\n"
		"C 4 1 w 0:1:2 r 0:5:0\n"
		"end 4\n";

	(void)state;
	check_text(clean, DTXN_CHECK_SR, &g_r);
	assert_int_equal(found(&g_r), 0);
	assert_int_equal(g_r.unresolved, 0);
	assert_int_equal(g_r.edges[DTXN_DEP_WW], 2); /* 1 -> 2 -> 4 */
	assert_int_equal(g_r.edges[DTXN_DEP_RW], 1); /* 3 read 2's tombstone, 4 followed it */
	check_text(skew, DTXN_CHECK_SR, &g_r);
	assert_int_equal(found(&g_r), BIT(DTXN_ANOM_G2));
	assert_int_equal(g_r.anom[DTXN_ANOM_G2].len, 2);
	assert_int_equal(g_r.unresolved, 0);
}

/* ------------------------------------------------------------------ */
/* One history per anomaly                                            */
/* ------------------------------------------------------------------ */

static void
test_g0(void **state)
{
	/* blind writes installed in opposite orders on two keys */
	static const char *h = HDR
		"C 1 0 w 0:1:0 w 0:2:2\n"
		"C 2 1 w 0:1:1 w 0:2:0\n"
		"end 2\n";

	(void)state;
	check_text(h, DTXN_CHECK_SR, &g_r);
	assert_int_equal(found(&g_r), BIT(DTXN_ANOM_G0));
	assert_int_equal(g_r.anom[DTXN_ANOM_G0].len, 2);
	assert_int_equal(g_r.anom[DTXN_ANOM_G0].steps[0].txn, 1);
	assert_int_equal(g_r.anom[DTXN_ANOM_G0].steps[0].dep, DTXN_DEP_WW);
	assert_int_equal(g_r.anom[DTXN_ANOM_G0].steps[1].txn, 2);
	assert_false(dtxn_check_ok(&g_r));
	check_text(h, DTXN_CHECK_SI, &g_r);
	assert_false(dtxn_check_ok(&g_r)); /* SI forbids G0 too */
}

static void
test_g1a(void **state)
{
	static const char *h = HDR
		"A 1 0 m 0:1:0\n"
		"C 2 1 r 0:1:1\n"
		"end 2\n";

	(void)state;
	check_text(h, DTXN_CHECK_SR, &g_r);
	assert_int_equal(found(&g_r), BIT(DTXN_ANOM_G1A));
	assert_int_equal(g_r.anom[DTXN_ANOM_G1A].count, 1);
	assert_int_equal(g_r.anom[DTXN_ANOM_G1A].steps[0].txn, 1); /* writer */
	assert_int_equal(g_r.anom[DTXN_ANOM_G1A].steps[1].txn, 2); /* reader */
	assert_int_equal(g_r.anom[DTXN_ANOM_G1A].steps[1].key, 1);
	check_text(h, DTXN_CHECK_SI, &g_r);
	assert_false(dtxn_check_ok(&g_r));
}

static void
test_g1b(void **state)
{
	/* T1 writes key 1 twice; T2 reads the first (intermediate) version */
	static const char *bad = HDR
		"C 1 0 w 0:1:0 w 0:1:1\n"
		"C 2 1 r 0:1:1#1\n"
		"end 2\n";
	static const char *good = HDR
		"C 1 0 w 0:1:0 w 0:1:1\n"
		"C 2 1 r 0:1:1#2 r 0:1:1\n"
		"end 2\n";

	(void)state;
	check_text(bad, DTXN_CHECK_SR, &g_r);
	assert_int_equal(found(&g_r), BIT(DTXN_ANOM_G1B));
	check_text(good, DTXN_CHECK_SR, &g_r);
	assert_int_equal(found(&g_r), 0);
}

static void
test_g1c(void **state)
{
	/* each reads what the other wrote */
	static const char *h = HDR
		"C 1 0 w 0:1:0 r 0:2:2\n"
		"C 2 1 w 0:2:0 r 0:1:1\n"
		"end 2\n";

	(void)state;
	check_text(h, DTXN_CHECK_SR, &g_r);
	assert_int_equal(found(&g_r), BIT(DTXN_ANOM_G1C));
	assert_int_equal(g_r.anom[DTXN_ANOM_G1C].len, 2);
	assert_int_equal(g_r.anom[DTXN_ANOM_G1C].steps[0].dep, DTXN_DEP_WR);
	assert_int_equal(g_r.anom[DTXN_ANOM_G1C].steps[1].dep, DTXN_DEP_WR);
	check_text(h, DTXN_CHECK_SI, &g_r);
	assert_false(dtxn_check_ok(&g_r));
}

static void
test_g2_write_skew(void **state)
{
	/* both read both keys at the initial version, each writes one */
	static const char *h = HDR
		"C 0x10000000001 0 r 0:1:0 m 0:2:0\n"
		"C 0x20000000001 1 r 0:2:0 m 0:1:0\n"
		"end 2\n";
	const struct dtxn_check_anomaly *a = &g_r.anom[DTXN_ANOM_G2];
	char line[256];

	(void)state;
	check_text(h, DTXN_CHECK_SR, &g_r);
	assert_int_equal(found(&g_r), BIT(DTXN_ANOM_G2));
	assert_int_equal(a->count, 1);
	assert_int_equal(a->len, 2);
	assert_int_equal(a->steps[0].txn, UINT64_C(0x10000000001));
	assert_int_equal(a->steps[0].dep, DTXN_DEP_RW);
	assert_int_equal(a->steps[0].key, 1);   /* T1 read key 1, T2 overwrote it */
	assert_int_equal(a->steps[1].txn, UINT64_C(0x20000000001));
	assert_int_equal(a->steps[1].key, 2);
	assert_false(dtxn_check_ok(&g_r));
	dtxn_check_describe(&g_r, DTXN_ANOM_G2, line, sizeof(line));
	assert_non_null(strstr(line, "1 cycle; shortest 2"));
	assert_non_null(strstr(line, "-rw 0:0x1->"));
	/* snapshot isolation allows write skew */
	check_text(h, DTXN_CHECK_SI, &g_r);
	assert_true(dtxn_check_ok(&g_r));
	assert_int_equal(g_r.anom[DTXN_ANOM_GSI].count, 0);
	assert_int_equal(g_r.anom[DTXN_ANOM_G2].count, 1); /* found, allowed */
}

static void
test_lost_update(void **state)
{
	/* two read-modify-writes over the same version: G2 and G-SI */
	static const char *h = HDR
		"C 1 0 m 0:1:0\n"
		"C 2 1 m 0:1:0\n"
		"end 2\n";

	(void)state;
	check_text(h, DTXN_CHECK_SR, &g_r);
	assert_int_equal(found(&g_r), BIT(DTXN_ANOM_G2) | BIT(DTXN_ANOM_GSI));
	assert_int_equal(g_r.anom[DTXN_ANOM_G2].len, 2);
	assert_false(dtxn_check_ok(&g_r));
	check_text(h, DTXN_CHECK_SI, &g_r);
	assert_false(dtxn_check_ok(&g_r)); /* SI forbids lost updates */
}

static void
test_read_skew(void **state)
{
	/* T2 sees T1's write of y but not of x: one rw edge, forbidden by SI */
	static const char *h = HDR
		"C 1 0 m 0:1:0 m 0:2:0\n"
		"C 2 1 r 0:1:0 r 0:2:1\n"
		"end 2\n";

	(void)state;
	check_text(h, DTXN_CHECK_SI, &g_r);
	assert_int_equal(found(&g_r), BIT(DTXN_ANOM_G2) | BIT(DTXN_ANOM_GSI));
	assert_false(dtxn_check_ok(&g_r));
	assert_int_equal(g_r.anom[DTXN_ANOM_GSI].len, 2);
}

static void
test_phantom_skew_via_absent(void **state)
{
	/* each reads a key as absent and inserts the other */
	static const char *h = HDR
		"C 1 0 r 0:1:absent w 0:2:absent\n"
		"C 2 1 r 0:2:absent w 0:1:absent\n"
		"end 2\n";

	(void)state;
	check_text(h, DTXN_CHECK_SR, &g_r);
	assert_int_equal(found(&g_r), BIT(DTXN_ANOM_G2));
}

/*
 * One CN's part of a cluster's history (dtxn_history_set_partial(), what
 * a --role cn process checks): its peers' txns are missing, so a read of
 * an absent key draws no anti-dependency on the insert recorded here (a
 * peer may have deleted and re-inserted the key in between: a soak run
 * under OOCC/TATP failed G2 per CN so, its cluster's merged history
 * passing), and a read of a peer's version is unresolved, not garbage.
 * The same history complete is phantom skew (G2); with a dropped txn it
 * is incomplete too.
 */
static void
test_partial_history(void **state)
{
	static const char *h = HDR
		"C 1 0 r 0:1:absent w 0:2:absent\n"
		"C 2 1 r 0:2:absent w 0:1:absent r 0:3:0x77\n"
		"end 2\n";
	static const char *dropped = HDR
		"dropped 1\n"
		"C 1 0 r 0:1:absent w 0:2:absent\n"
		"C 2 1 r 0:2:absent w 0:1:absent\n"
		"end 2\n";
	struct dtxn_history *hist;
	char err[256];

	(void)state;
	check_text(h, DTXN_CHECK_SR, &g_r);
	assert_int_equal(found(&g_r), BIT(DTXN_ANOM_G2) | BIT(DTXN_ANOM_GARBAGE));
	assert_false(g_r.partial);
	hist = parse(h, err, sizeof(err));
	assert_non_null(hist);
	assert_false(dtxn_history_partial(hist));
	dtxn_history_set_partial(hist);
	assert_true(dtxn_history_partial(hist));
	assert_int_equal(dtxn_check_run(hist, DTXN_CHECK_SR, &g_r), 0);
	dtxn_history_free(hist);
	assert_int_equal(found(&g_r), 0);
	assert_true(g_r.partial);
	assert_int_equal(g_r.unresolved, 3); /* two absent reads, the peer's version */
	check_text(dropped, DTXN_CHECK_SR, &g_r);
	assert_int_equal(found(&g_r), 0);
	assert_int_equal(g_r.unresolved, 2);
	dtxn_history_set_partial(NULL); /* no-op */
	assert_false(dtxn_history_partial(NULL));
}

static void
test_garbage_and_truncated(void **state)
{
	static const char *h = HDR
		"C 1 0 m 0:1:0\n"
		"C 2 1 r 0:1:0x99 r 0:1:1\n"
		"C 3 1 r 0:5:1\n"
		"end 3\n";
	static const char *cut = HDR
		"dropped 5\n"
		"C 1 0 m 0:1:0\n"
		"C 2 1 r 0:1:0x99\n"
		"end 2\n";

	(void)state;
	check_text(h, DTXN_CHECK_SR, &g_r);
	assert_int_equal(found(&g_r), BIT(DTXN_ANOM_GARBAGE));
	assert_int_equal(g_r.anom[DTXN_ANOM_GARBAGE].count, 2); /* unknown id; T1 never wrote key 5 */
	/* a truncated history: the unknown writer may have been dropped */
	check_text(cut, DTXN_CHECK_SR, &g_r);
	assert_int_equal(found(&g_r), 0);
	assert_int_equal(g_r.dropped, 5);
	assert_int_equal(g_r.unresolved, 1);
}

/* A txn's own version exists only once it committed: reading or overwriting it is garbage. */
static void
test_own_version_garbage(void **state)
{
	static const char *h = HDR
		"C 1 0 r 0:1:1\n"
		"C 2 0 m 0:2:2\n"
		"C 3 1 r 0:2:2\n"
		"C 4 1 m 0:3:0 r 0:3:4\n"
		"end 4\n";

	(void)state;
	check_text(h, DTXN_CHECK_SR, &g_r);
	assert_int_equal(found(&g_r), BIT(DTXN_ANOM_GARBAGE));
	assert_int_equal(g_r.anom[DTXN_ANOM_GARBAGE].count, 3);
	assert_int_equal(g_r.anom[DTXN_ANOM_GARBAGE].steps[1].txn, 1); /* first example: T1 */
	assert_int_equal(g_r.anom[DTXN_ANOM_GARBAGE].steps[0].key, 1);
}

static void
test_shortest_cycle(void **state)
{
	/* a ring of 4 anti-dependencies and a 2-cycle through T1 and T2 */
	static const char *h = HDR
		"C 1 0 r 0:1:0 m 0:2:0 r 0:5:0\n"
		"C 2 1 r 0:2:0 m 0:3:0 m 0:5:0\n"
		"C 3 0 r 0:3:0 m 0:4:0\n"
		"C 4 1 r 0:4:0 m 0:1:0\n"
		"end 4\n";
	static const char *ring = HDR
		"C 1 0 r 0:1:0 m 0:2:0\n"
		"C 2 1 r 0:2:0 m 0:3:0\n"
		"C 3 0 r 0:3:0 m 0:4:0\n"
		"C 4 1 r 0:4:0 m 0:1:0\n"
		"end 4\n";

	(void)state;
	check_text(h, DTXN_CHECK_SR, &g_r);
	assert_int_equal(g_r.anom[DTXN_ANOM_G2].count, 1);
	assert_int_equal(g_r.anom[DTXN_ANOM_G2].len, 2);
	check_text(ring, DTXN_CHECK_SR, &g_r);
	assert_int_equal(g_r.anom[DTXN_ANOM_G2].len, 4);
	assert_int_equal(g_r.anom[DTXN_ANOM_G2].n_steps, 4);
	assert_int_equal(g_r.anom[DTXN_ANOM_G2].steps[0].txn, 1);
	check_text(ring, DTXN_CHECK_SI, &g_r);
	assert_true(dtxn_check_ok(&g_r)); /* only rw edges: allowed by SI */
}

static void
test_two_sccs_counted(void **state)
{
	/* two independent write skews: 2 cycles */
	static const char *h = HDR
		"C 1 0 r 0:1:0 m 0:2:0\n"
		"C 2 1 r 0:2:0 m 0:1:0\n"
		"C 3 0 r 0:3:0 m 0:4:0\n"
		"C 4 1 r 0:4:0 m 0:3:0\n"
		"end 4\n";

	(void)state;
	check_text(h, DTXN_CHECK_SR, &g_r);
	assert_int_equal(g_r.anom[DTXN_ANOM_G2].count, 2);
}

/* ------------------------------------------------------------------ */
/* The file                                                           */
/* ------------------------------------------------------------------ */

static void
expect_malformed(const char *text, const char *where, const char *what)
{
	char err[256];
	struct dtxn_history *h = parse(text, err, sizeof(err));

	assert_null(h);
	assert_int_equal(rte_errno, EINVAL);
	if (strstr(err, where) == NULL || strstr(err, what) == NULL)
		fail_msg("'%s' lacks '%s' or '%s'", err, where, what);
	assert_null(strchr(err, '\n'));
}

static void
test_malformed(void **state)
{
	(void)state;
	expect_malformed("", "t:", "empty");
	expect_malformed("hello\n", "t:1:", "not a dtxn history");
	expect_malformed("dtxn-history 2\nend 0\n", "t:1:", "format 2");
	expect_malformed(HDR "C 1 0 r 0:1:0\n", "t:", "no 'end' line");
	expect_malformed(HDR "C 1 0 r 0:1:0\nend 2\n", "t:3:", "'end 2' but 1");
	expect_malformed(HDR "C 1 0 x 0:1:0\nend 1\n", "t:2:", "operation 'x'");
	expect_malformed(HDR "C 1 0 rd 0:1:0\nend 1\n", "t:2:", "operation 'rd'");
	expect_malformed(HDR "C 1 0 r 0:1:zz\nend 1\n", "t:2:", "bad item '0:1:zz'");
	expect_malformed(HDR "C 1 0 r 0:1\nend 1\n", "t:2:", "bad item");
	expect_malformed(HDR "C 1 0 r\nend 1\n", "t:2:", "odd number");
	expect_malformed(HDR "C 0 0 r 0:1:0\nend 1\n", "t:2:", "reserved");
	expect_malformed(HDR "C one 0\nend 1\n", "t:2:", "transaction id");
	expect_malformed(HDR "end 0\nC 1 0\n", "t:3:", "after the 'end'");
	expect_malformed(HDR "X 1 0\nend 1\n", "t:2:", "unknown record 'X'");
	expect_malformed(HDR "dropped -1\nend 0\n", "t:2:", "dropped");
	expect_malformed(HDR "C 1 0 r 0:1:0#0\nend 1\n", "t:2:", "bad item");
}

/* An endless stream of one byte (a multi-GB line, /dev/zero), counting what is read. */
struct endless {
	char byte;
	uint64_t served;
};

static ssize_t
endless_read(void *cookie, char *buf, size_t size)
{
	struct endless *e = cookie;

	memset(buf, e->byte, size);
	e->served += size;
	return (ssize_t)size;
}

/* A line longer than DTXN_HIST_LINE_MAX is refused after reading about that much. */
static void
test_line_bound(void **state)
{
	cookie_io_functions_t io = { .read = endless_read };
	struct endless e = { .byte = 'x' };
	char err[256];
	struct dtxn_history *h;
	FILE *f;

	(void)state;
	f = fopencookie(&e, "r", io);
	assert_non_null(f);
	h = dtxn_history_read(f, "t", err, sizeof(err));
	fclose(f);
	assert_null(h);
	assert_int_equal(rte_errno, EINVAL);
	assert_non_null(strstr(err, "t:1: line longer than"));
	assert_true(e.served <= DTXN_HIST_LINE_MAX + (UINT64_C(1) << 20));
	/* /dev/zero: the first byte is a NUL */
	h = dtxn_history_load("/dev/zero", err, sizeof(err));
	assert_null(h);
	assert_int_equal(rte_errno, EINVAL);
	assert_non_null(strstr(err, "/dev/zero:1: NUL byte"));
}

/* dropped counts saturate: a huge count never wraps to "complete". */
static void
test_dropped_saturates(void **state)
{
	static const char *h = HDR
		"dropped 18446744073709551615\n"
		"dropped 2\n"
		"end 0\n";
	char err[256];
	struct dtxn_history *hist = parse(h, err, sizeof(err));
	struct dtxn_hist_buf *b = dtxn_hist_buf_create(1, 64);

	(void)state;
	assert_non_null(hist);
	assert_int_equal(dtxn_history_dropped(hist), UINT64_MAX);
	/* over several buffers too */
	assert_non_null(b);
	assert_null(dtxn_hist_buf_append(b, 5, DTXN_HIST_COMMITTED, DTXN_HIST_MAX_ITEMS + 1));
	assert_int_equal(dtxn_hist_buf_dropped(b), 1);
	assert_int_equal(dtxn_history_add_buf(hist, b), 0);
	assert_int_equal(dtxn_history_dropped(hist), UINT64_MAX);
	dtxn_history_free(hist);
}

static void
test_duplicate_id_refused(void **state)
{
	static const char *h = HDR "C 1 0 r 0:1:0\nA 1 1\nend 2\n";
	char err[256];
	struct dtxn_history *hist = parse(h, err, sizeof(err));

	(void)state;
	assert_non_null(hist);
	assert_int_equal(dtxn_check_run(hist, DTXN_CHECK_SR, &g_r), -EINVAL);
	assert_non_null(strstr(g_r.error, "appears twice"));
	dtxn_history_free(hist);
}

struct collect {
	const struct dtxn_hist_txn *t[16];
	unsigned n;
};

static int
collect_txn(const struct dtxn_hist_txn *t, void *arg)
{
	struct collect *c = arg;

	if (c->n < 16)
		c->t[c->n] = t;
	c->n++;
	return 0;
}

static void
test_round_trip(void **state)
{
	static const char *h = HDR
		"meta isolation si\n"
		"meta protocol ford\n"
		"# a comment\n"
		"C 0x10000000001 3 r 0:1:0 m 0:2:0 w 1:0xffffffffffff:absent wd 2:3:none\n"
		"A 0x10000000002 3 md 0:9:0x10000000001 r 0:1:7#3\n"
		"C 0x20000000001 1 r 0:2:0 m 0:1:0\n"
		"C 0x20000000002 1\n"
		"end 4\n";
	char path[] = "/tmp/dtxn_ut_check_XXXXXX", err[256];
	struct dtxn_check_report r1, r2;
	struct dtxn_history *a, *b;
	struct collect ca = { 0 }, cb = { 0 };
	int fd;

	(void)state;
	a = parse(h, err, sizeof(err));
	assert_non_null(a);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(dtxn_history_save(a, path), 0);
	b = dtxn_history_load(path, err, sizeof(err));
	if (b == NULL)
		fail_msg("reload: %s", err);
	assert_string_equal(dtxn_history_meta(b, "isolation"), "si");
	assert_string_equal(dtxn_history_meta(b, "protocol"), "ford");
	assert_int_equal(dtxn_history_txns(b), 4);
	dtxn_history_foreach(a, collect_txn, &ca);
	dtxn_history_foreach(b, collect_txn, &cb);
	assert_int_equal(ca.n, 4);
	assert_int_equal(cb.n, 4);
	for (unsigned i = 0; i < 4; i++) {
		assert_int_equal(ca.t[i]->id, cb.t[i]->id);
		assert_int_equal(ca.t[i]->coord, cb.t[i]->coord);
		assert_int_equal(ca.t[i]->status, cb.t[i]->status);
		assert_int_equal(ca.t[i]->n_items, cb.t[i]->n_items);
		assert_memory_equal(ca.t[i]->items, cb.t[i]->items,
				    ca.t[i]->n_items * sizeof(struct dtxn_hist_item));
	}
	assert_int_equal(ca.t[0]->items[2].ver, DTXN_HIST_VER_ABSENT);
	assert_int_equal(ca.t[0]->items[3].ver, DTXN_HIST_VER_NONE);
	assert_int_equal(ca.t[0]->items[3].flags, DTXN_HIST_F_DELETE);
	assert_int_equal(ca.t[1]->items[1].wseq, 3);
	assert_int_equal(dtxn_check_run(a, DTXN_CHECK_SR, &r1), 0);
	assert_int_equal(dtxn_check_run(b, DTXN_CHECK_SR, &r2), 0);
	assert_int_equal(r1.anom[DTXN_ANOM_G2].count, 1);
	assert_memory_equal(&r1, &r2, sizeof(r1));
	/* a missing file and a directory are refused with their reason */
	assert_null(dtxn_history_load("/nonexistent/dir/h", err, sizeof(err)));
	assert_int_equal(rte_errno, ENOENT);
	assert_non_null(strstr(err, "/nonexistent/dir/h"));
	assert_int_equal(dtxn_history_save(a, "/nonexistent/dir/h"), -ENOENT);
	dtxn_history_free(a);
	dtxn_history_free(b);
	unlink(path);
}

static void
test_meta_rules(void **state)
{
	struct dtxn_history *h = dtxn_history_create();
	char key[8];

	(void)state;
	assert_non_null(h);
	assert_int_equal(dtxn_history_set_meta(h, "bad key", "x"), -EINVAL);
	assert_int_equal(dtxn_history_set_meta(h, "k", "line\nbreak"), -EINVAL);
	assert_int_equal(dtxn_history_set_meta(h, "k", "v1"), 0);
	assert_int_equal(dtxn_history_set_meta(h, "k", "v2"), 0);
	assert_string_equal(dtxn_history_meta(h, "k"), "v2");
	for (int i = 0; i < 15; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		assert_int_equal(dtxn_history_set_meta(h, key, ""), 0);
	}
	assert_int_equal(dtxn_history_set_meta(h, "one_more", "x"), -ENOSPC);
	dtxn_history_free(h);
}

/* ------------------------------------------------------------------ */
/* Buffers and a large history                                        */
/* ------------------------------------------------------------------ */

static void
test_buffer_cap(void **state)
{
	struct dtxn_hist_buf *b = dtxn_hist_buf_create(7, 1); /* one chunk only */
	struct dtxn_history *h = dtxn_history_create();
	struct dtxn_hist_item *it;
	struct collect c = { 0 };
	uint64_t n = 0;

	(void)state;
	assert_non_null(b);
	assert_non_null(h);
	assert_null(dtxn_hist_buf_append(b, 1, DTXN_HIST_COMMITTED, DTXN_HIST_MAX_ITEMS + 1));
	assert_int_equal(dtxn_hist_buf_dropped(b), 1);
	while ((it = dtxn_hist_buf_append(b, n + 1, DTXN_HIST_COMMITTED, 3)) != NULL) {
		for (int k = 0; k < 3; k++) {
			it[k].key = n;
			it[k].ver = 0;
			it[k].table = (uint32_t)k;
			it[k].op = DTXN_HIST_READ;
			it[k].flags = 0;
			it[k].wseq = 0;
		}
		n++;
	}
	assert_int_equal(dtxn_hist_buf_txns(b), n);
	assert_int_equal(n, (64u << 10) / (16 + 3 * 24)); /* the first chunk: 64 KiB */
	assert_int_equal(dtxn_hist_buf_dropped(b), 2);
	assert_int_equal(dtxn_hist_buf_bytes(b), 64u << 10);
	assert_int_equal(dtxn_history_add_buf(h, b), 0);
	assert_int_equal(dtxn_history_txns(h), n);
	assert_int_equal(dtxn_history_dropped(h), 2);
	dtxn_history_foreach(h, collect_txn, &c);
	assert_int_equal(c.n, n);
	assert_int_equal(c.t[5]->id, 6);
	assert_int_equal(c.t[5]->coord, 7);
	assert_int_equal(c.t[5]->items[2].table, 2);
	dtxn_history_free(h);
}

/* ------------------------------------------------------------------ */
/* Streamed files cut short (a CN process) and several files as one   */
/* ------------------------------------------------------------------ */

/* A streamed file without its end (the writer was killed) is read up to
 * its last whole line with a note, and counts as cut short: a reader of a
 * version the dead CN's lost last txn wrote is unresolved, not garbage.
 * The same cut in a saved (not streamed) file is still refused. */
static void
test_stream_cut_short(void **state)
{
	static const char cut[] = HDR "meta isolation sr\nstream\n"
				  "C 0x10 0 m 0:0x1:0\nC 0x11 0 m 0:0x1:0x10\nC 0x12 0 m 0:0x1:0x";
	static const char peer[] = HDR "stream\nC 0x20 1 r 0:0x1:0x12\ndropped 0\nend 1\n";
	struct dtxn_check_report r;
	struct dtxn_history *a, *b;
	char err[256];

	(void)state;
	a = parse(cut, err, sizeof(err));
	if (a == NULL)
		fail_msg("%s", err);
	assert_int_equal(dtxn_history_txns(a), 2);
	assert_int_equal(dtxn_history_cut(a), 1);
	assert_non_null(strstr(dtxn_history_note(a), "t: cut short after 2 transactions"));
	assert_non_null(strstr(dtxn_history_note(a), "last line (19 bytes, no newline) ignored"));
	b = parse(peer, err, sizeof(err));
	assert_non_null(b);
	assert_int_equal(dtxn_history_merge(a, b), 0);
	assert_int_equal(dtxn_history_txns(a), 3);
	assert_int_equal(dtxn_history_txns(b), 0);
	assert_int_equal(dtxn_history_merge(a, a), -EINVAL);
	assert_string_equal(dtxn_history_meta(a, "isolation"), "sr");
	assert_int_equal(dtxn_check_run(a, DTXN_CHECK_SR, &r), 0);
	assert_true(dtxn_check_ok(&r));
	assert_int_equal(r.cut, 1);
	assert_int_equal(r.unresolved, 1);
	assert_int_equal(r.anom[DTXN_ANOM_GARBAGE].count, 0);
	dtxn_history_free(a);
	dtxn_history_free(b);
	/* complete, the peer alone reads a version nobody wrote: garbage */
	b = parse(peer, err, sizeof(err));
	assert_int_equal(dtxn_check_run(b, DTXN_CHECK_SR, &r), 0);
	assert_int_equal(r.anom[DTXN_ANOM_GARBAGE].count, 1);
	dtxn_history_free(b);
	expect_malformed(HDR "C 1 0 r 0:1:0\nC 2 0 r 0:1", "t:3:", "bad item");
	expect_malformed(HDR "C 1 0 r 0:1:0\nstream\nend 1\n", "t:3:", "'stream' goes once");
}

/*
 * A generated history of many coordinators: each txn read-modify-writes
 * one of 1000 keys over its latest version and reads another key's
 * latest version. Serial, so clean; then one lost update is planted.
 */
static void
test_large_generated(void **state)
{
	enum { N_TXN = 200000, N_KEYS = 1000, N_COORD = 16 };
	struct dtxn_hist_buf *b[N_COORD];
	struct dtxn_history *h = dtxn_history_create();
	uint64_t *last = calloc(N_KEYS, sizeof(*last));
	uint64_t x = 88172645463325252ull;

	(void)state;
	assert_non_null(h);
	assert_non_null(last);
	for (int c = 0; c < N_COORD; c++) {
		b[c] = dtxn_hist_buf_create((uint32_t)c, UINT64_MAX);
		assert_non_null(b[c]);
		assert_int_equal(dtxn_history_add_buf(h, b[c]), 0);
	}
	for (uint64_t i = 0; i < N_TXN; i++) {
		unsigned c = (unsigned)(i % N_COORD);
		uint64_t id = ((uint64_t)(c + 1) << 40) | (i / N_COORD + 1);
		struct dtxn_hist_item *it;
		uint64_t kw, kr;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		kw = x % N_KEYS;
		kr = (x >> 20) % N_KEYS;
		it = dtxn_hist_buf_append(b[c], id, DTXN_HIST_COMMITTED, kr == kw ? 1 : 2);
		assert_non_null(it);
		it[0] = (struct dtxn_hist_item){ .key = kw, .ver = last[kw], .op = DTXN_HIST_RMW };
		if (kr != kw)
			it[1] = (struct dtxn_hist_item){ .key = kr, .ver = last[kr],
							 .op = DTXN_HIST_READ };
		last[kw] = id;
		if (i == N_TXN / 2) {
			/* a second writer over the same version: a lost update */
			uint64_t lid = ((uint64_t)(N_COORD + 1) << 40) | 1;

			it = dtxn_hist_buf_append(b[0], lid, DTXN_HIST_COMMITTED, 1);
			assert_non_null(it);
			it[0] = (struct dtxn_hist_item){ .key = kw, .ver = id, .op = DTXN_HIST_RMW };
		}
	}
	assert_int_equal(dtxn_check_run(h, DTXN_CHECK_SR, &g_r), 0);
	assert_int_equal(g_r.committed, N_TXN + 1);
	assert_int_equal(found(&g_r), BIT(DTXN_ANOM_G2) | BIT(DTXN_ANOM_GSI));
	assert_int_equal(g_r.anom[DTXN_ANOM_G2].count, 1);
	assert_int_equal(g_r.anom[DTXN_ANOM_G2].len, 2);
	free(last);
	dtxn_history_free(h);
}

/* ------------------------------------------------------------------ */
/* lib/txn's recording under FORD                                     */
/* ------------------------------------------------------------------ */

#define N_MN 3
#define KV_KEYS 64
#define ABSENT_KEY 5000

static struct dtxn_fabric *g_f;
static struct dtxn_db *g_db;

struct rec_ctx {
	uint64_t id[4];
	int rc[4];
};

static void
co_record(struct dtxn_coord *c, void *arg)
{
	struct rec_ctx *x = arg;
	struct dtxn_txn *t;
	struct dtxn_item *it;

	/* 1: RW key 1 */
	t = dtxn_txn_begin(c, DTXN_TXN_RW);
	x->id[0] = dtxn_txn_id(t);
	it = dtxn_txn_add_rw(t, 0, 1);
	x->rc[0] = dtxn_txn_execute(t);
	*(uint64_t *)dtxn_item_value(it) += 1;
	x->rc[0] |= dtxn_txn_commit(t);
	/* 2: read-only, key 1 and an absent key */
	t = dtxn_txn_begin(c, DTXN_TXN_RO);
	x->id[1] = dtxn_txn_id(t);
	dtxn_txn_add_ro(t, 0, 1);
	dtxn_txn_add_ro(t, 0, ABSENT_KEY);
	x->rc[1] = dtxn_txn_commit(t);
	/* 3: rolled back after execute */
	t = dtxn_txn_begin(c, DTXN_TXN_RW);
	x->id[2] = dtxn_txn_id(t);
	dtxn_txn_add_ro(t, 0, 2);
	dtxn_txn_add_rw(t, 0, 1);
	x->rc[2] = dtxn_txn_execute(t);
	dtxn_txn_abort(t, DTXN_ABORT_APP);
	/* 4: insert, then RW of key 1 again */
	t = dtxn_txn_begin(c, DTXN_TXN_RW);
	x->id[3] = dtxn_txn_id(t);
	*(uint64_t *)dtxn_item_value(dtxn_txn_insert(t, 0, ABSENT_KEY + 1)) = 9;
	dtxn_txn_add_rw(t, 0, 1);
	x->rc[3] = dtxn_txn_commit(t);
}

static int
find_txn(const struct dtxn_hist_txn *t, void *arg)
{
	const struct dtxn_hist_txn **out = arg;

	for (int i = 0; i < 4; i++)
		if (out[i] == NULL && (uintptr_t)out[4 + i] == t->id) {
			out[i] = t;
			return 0;
		}
	return 0;
}

static void
test_txn_recording(void **state)
{
	struct dtxn_hist_buf *buf = dtxn_hist_buf_create(0, UINT64_MAX);
	struct dtxn_history *h = dtxn_history_create();
	struct rec_ctx x = { { 0 } };
	const struct dtxn_hist_txn *found_t[8] = { NULL };
	struct dtxn_worker *w;
	struct dtxn_coord *c;

	(void)state;
	assert_non_null(buf);
	assert_non_null(h);
	assert_int_equal(dtxn_history_add_buf(h, buf), 0);
	w = dtxn_worker_create(g_db, N_MN, 0, 1, (int)rte_socket_id());
	assert_non_null(w);
	c = dtxn_coord_create(w, 0, co_record, &x);
	assert_non_null(c);
	assert_int_equal(dtxn_coord_history_attach(NULL, buf), -EINVAL);
	assert_int_equal(dtxn_coord_history_attach(c, buf), 0);
	assert_int_equal(dtxn_sched_run_lc(dtxn_worker_sched(w)), 0);
	dtxn_worker_destroy(w);
	assert_int_equal(x.rc[0], 0);
	assert_int_equal(x.rc[1], 0);
	assert_int_equal(x.rc[2], 0);
	assert_int_equal(x.rc[3], 0);
	assert_int_equal(dtxn_hist_buf_txns(buf), 4);
	for (int i = 0; i < 4; i++)
		found_t[4 + i] = (const void *)(uintptr_t)x.id[i];
	dtxn_history_foreach(h, find_txn, found_t);
	for (int i = 0; i < 4; i++)
		assert_non_null(found_t[i]);
	/* 1: RMW of key 1 over the loaded version */
	assert_int_equal(found_t[0]->status, DTXN_HIST_COMMITTED);
	assert_int_equal(found_t[0]->n_items, 1);
	assert_int_equal(found_t[0]->items[0].op, DTXN_HIST_RMW);
	assert_int_equal(found_t[0]->items[0].key, 1);
	assert_int_equal(found_t[0]->items[0].ver, DTXN_HIST_VER_INIT);
	/* 2: read of txn 1's version; absent read */
	assert_int_equal(found_t[1]->items[0].op, DTXN_HIST_READ);
	assert_int_equal(found_t[1]->items[0].ver, x.id[0]);
	assert_int_equal(found_t[1]->items[1].ver, DTXN_HIST_VER_ABSENT);
	/* 3: aborted, with what it had read */
	assert_int_equal(found_t[2]->status, DTXN_HIST_ABORTED);
	assert_int_equal(found_t[2]->items[0].ver, DTXN_HIST_VER_INIT);
	assert_int_equal(found_t[2]->items[1].ver, x.id[0]);
	/* 4: insert over absent, RMW over txn 1's version */
	assert_int_equal(found_t[3]->items[0].op, DTXN_HIST_WRITE);
	assert_int_equal(found_t[3]->items[0].ver, DTXN_HIST_VER_ABSENT);
	assert_int_equal(found_t[3]->items[1].ver, x.id[0]);
	assert_int_equal(dtxn_check_run(h, DTXN_CHECK_SR, &g_r), 0);
	assert_true(dtxn_check_ok(&g_r));
	assert_int_equal(g_r.committed, 3);
	assert_int_equal(g_r.aborted, 1);
	dtxn_history_free(h);
}

static int
group_setup(void **state)
{
	struct dtxn_db_conf dc = {
		.size = sizeof(dc), .protocol = "ford", .isolation = DTXN_ISO_SR,
		.n_mn = N_MN, .n_replicas = 3, .n_coords = 4,
		.log_bytes = 16384, .addr_cache_entries = 4096,
	};
	struct dtxn_table_def kv = { .id = 0, .name = "kv", .value_size = 8,
				     .max_keys = 1024 };
	struct dtxn_fabric_conf fc = { .size = sizeof(fc), .driver = "shm", .n_mn = N_MN,
				       .n_cn = 1, .socket_id = SOCKET_ID_ANY,
				       .name = "utcheck" };

	(void)state;
	if (ut_db_open(&dc, (const struct dtxn_table_def *[]){ &kv }, 1, &fc, &g_db, &g_f) != 0)
		return -1;
	for (uint64_t k = 1; k <= KV_KEYS; k++) {
		uint64_t v = k;

		if (dtxn_db_load(g_db, 0, k, &v) != 0)
			return -1;
	}
	return 0;
}

static int
group_teardown(void **state)
{
	(void)state;
	dtxn_db_destroy(g_db);
	dtxn_fabric_close(g_f);
	return 0;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clean_serial),
		cmocka_unit_test(test_clean_concurrent),
		cmocka_unit_test(test_delete_reinsert_no_false_positive),
		cmocka_unit_test(test_tombstones_placed),
		cmocka_unit_test(test_g0),
		cmocka_unit_test(test_g1a),
		cmocka_unit_test(test_g1b),
		cmocka_unit_test(test_g1c),
		cmocka_unit_test(test_g2_write_skew),
		cmocka_unit_test(test_lost_update),
		cmocka_unit_test(test_read_skew),
		cmocka_unit_test(test_phantom_skew_via_absent),
		cmocka_unit_test(test_garbage_and_truncated),
		cmocka_unit_test(test_partial_history),
		cmocka_unit_test(test_own_version_garbage),
		cmocka_unit_test(test_shortest_cycle),
		cmocka_unit_test(test_two_sccs_counted),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_line_bound),
		cmocka_unit_test(test_dropped_saturates),
		cmocka_unit_test(test_duplicate_id_refused),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_meta_rules),
		cmocka_unit_test(test_buffer_cap),
		cmocka_unit_test(test_stream_cut_short),
		cmocka_unit_test(test_large_generated),
		cmocka_unit_test(test_txn_recording),
	};
	int rc;

	if (dtxn_unit_eal_init("ut_check") != 0)
		return 1;
	rc = cmocka_run_group_tests(tests, group_setup, group_teardown);
	dtxn_unit_eal_fini();
	return rc;
}
