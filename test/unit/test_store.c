/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/store: catalog, placement, layout, hash index, loader, scanner and
 * address cache. Loader tests open an shm fabric (NIC model none) and read
 * buckets back with memcpy from the MN base, as a READ would.
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <rte_errno.h>
#include <rte_memory.h>

#include "dtxn_fabric.h"
#include "dtxn_sched.h"
#include "dtxn_store.h"
#include "unit_eal.h"

/* ------------------------------------------------------------------ */
/* helpers                                                            */
/* ------------------------------------------------------------------ */

static struct dtxn_table_def
mkdef(uint32_t id, const char *name, uint32_t value_size, uint64_t max_keys)
{
	struct dtxn_table_def d;

	memset(&d, 0, sizeof(d));
	d.id = id;
	snprintf(d.name, sizeof(d.name), "%s", name);
	d.value_size = value_size;
	d.max_keys = max_keys;
	return d;
}

/* The slot size a simple protocol would use: header + value, 8-aligned. */
static uint32_t
slot_size_for(uint32_t value_size)
{
	return (DTXN_SLOT_HDR_SIZE + value_size + 7) & ~7u;
}

static struct dtxn_fabric *
open_fabric(const char *name, uint16_t n_mn, uint64_t region_size)
{
	struct dtxn_fabric_conf conf;

	memset(&conf, 0, sizeof(conf));
	conf.size = sizeof(conf);
	conf.driver = "shm";
	conf.n_mn = n_mn;
	conf.n_cn = 1;
	conf.mn_region_size = region_size;
	dtxn_nic_model_none(&conf.nic);
	conf.socket_id = SOCKET_ID_ANY;
	conf.name = name;
	return dtxn_fabric_open(&conf);
}

/* Value of key k in the tests: derived from the key, value_size bytes. */
static void
make_value(uint64_t key, void *buf, uint32_t len)
{
	uint8_t *b = buf;

	for (uint32_t i = 0; i < len; i++)
		b[i] = (uint8_t)(key * 31 + i * 7 + 1);
}

struct fmt_arg {
	uint64_t calls;
};

/* Test record format: the value right after the slot header. */
static void
test_fmt(const struct dtxn_table *t, void *slot, const void *value, void *arg)
{
	struct fmt_arg *a = arg;

	memcpy((char *)slot + DTXN_SLOT_HDR_SIZE, value, t->def.value_size);
	a->calls++;
}

/*
 * Emulated lookup on replica r: READ the home bucket (memcpy from the MN
 * base), match; follow the overflow flag up to DTXN_STORE_MAX_PROBE.
 * Fills *slot_raddr and copies the slot. Returns buckets read, or -ENOENT.
 */
static int
remote_lookup(struct dtxn_fabric *f, const struct dtxn_table *t, uint16_t r,
	      uint64_t key, dtxn_raddr_t *slot_raddr, void *slot_out)
{
	uint8_t *bucket = malloc(t->bucket_size);
	uint64_t home = dtxn_store_bucket_of(t, key);
	int rc = -ENOENT;

	assert_non_null(bucket);
	for (unsigned p = 0; p < DTXN_STORE_MAX_PROBE; p++) {
		dtxn_raddr_t ba = dtxn_store_bucket_raddr(t, r, home + p);
		const char *base = dtxn_fabric_mn_base(f, DTXN_RADDR_MN(ba));
		struct dtxn_bucket_hdr h;
		int i;

		assert_non_null(base);
		memcpy(bucket, base + DTXN_RADDR_OFF(ba), t->bucket_size);
		i = dtxn_store_bucket_find(t, bucket, key);
		if (i >= 0) {
			*slot_raddr = dtxn_store_slot_raddr(t, ba, (unsigned)i);
			if (slot_out != NULL)
				memcpy(slot_out, dtxn_store_bucket_slot(t, bucket, (unsigned)i),
				       t->slot_size);
			rc = (int)p + 1;
			break;
		}
		memcpy(&h, bucket, sizeof(h));
		if (!(h.version & DTXN_BUCKET_OVERFLOW))
			break;
	}
	free(bucket);
	return rc;
}

/* ------------------------------------------------------------------ */
/* catalog                                                            */
/* ------------------------------------------------------------------ */

static void
test_catalog_init_errors(void **state)
{
	struct dtxn_catalog cat;

	(void)state;
	assert_int_equal(dtxn_catalog_init(NULL, 3, 3), -EINVAL);
	assert_int_equal(dtxn_catalog_init(&cat, 0, 1), -EINVAL);
	assert_int_equal(dtxn_catalog_init(&cat, DTXN_MAX_NODES, 1), -EINVAL);
	assert_int_equal(dtxn_catalog_init(&cat, 3, 0), -EINVAL);
	assert_int_equal(dtxn_catalog_init(&cat, 5, DTXN_MAX_REPLICAS + 1), -EINVAL);
	assert_int_equal(dtxn_catalog_init(&cat, 2, 3), -EINVAL);
	assert_int_equal(dtxn_catalog_init(&cat, DTXN_MASK_NODES - 1, 3), 0);
	assert_int_equal(dtxn_catalog_init(&cat, 3, 3), 0);
	assert_int_equal(cat.n_mn, 3);
	assert_int_equal(cat.n_replicas, 3);
	assert_int_equal(cat.n_tables, 0);
	assert_null(dtxn_catalog_table(&cat, 0));
	assert_null(dtxn_catalog_table(&cat, DTXN_MAX_TABLES));
	assert_null(dtxn_catalog_table(NULL, 0));
}

static void
test_catalog_add_errors(void **state)
{
	struct dtxn_catalog cat, uninit;
	struct dtxn_table_def d;
	const struct dtxn_table *t;

	(void)state;
	memset(&uninit, 0, sizeof(uninit));
	assert_int_equal(dtxn_catalog_init(&cat, 3, 2), 0);
	d = mkdef(1, "acct", 40, 1000);
	assert_int_equal(dtxn_catalog_add_table(NULL, &d, 56), -EINVAL);
	assert_int_equal(dtxn_catalog_add_table(&cat, NULL, 56), -EINVAL);
	assert_int_equal(dtxn_catalog_add_table(&uninit, &d, 56), -EINVAL);

	d = mkdef(DTXN_MAX_TABLES, "bad_id", 40, 1000);
	assert_int_equal(dtxn_catalog_add_table(&cat, &d, 56), -EINVAL);
	d = mkdef(1, "", 40, 1000);
	assert_int_equal(dtxn_catalog_add_table(&cat, &d, 56), -EINVAL);
	d = mkdef(1, "x", 40, 1000);
	memset(d.name, 'x', sizeof(d.name));      /* not terminated */
	assert_int_equal(dtxn_catalog_add_table(&cat, &d, 56), -EINVAL);
	d = mkdef(1, "acct", 0, 1000);
	assert_int_equal(dtxn_catalog_add_table(&cat, &d, 56), -EINVAL);
	d = mkdef(1, "acct", 65537, 1000);
	assert_int_equal(dtxn_catalog_add_table(&cat, &d, 65560), -EINVAL);
	d = mkdef(1, "acct", 40, 0);
	assert_int_equal(dtxn_catalog_add_table(&cat, &d, 56), -EINVAL);
	d = mkdef(1, "acct", 40, 1000);
	d.slots_per_bucket = 257;
	assert_int_equal(dtxn_catalog_add_table(&cat, &d, 56), -EINVAL);
	d = mkdef(1, "acct", 40, 1000);
	assert_int_equal(dtxn_catalog_add_table(&cat, &d, 60), -EINVAL);  /* not x8 */
	assert_int_equal(dtxn_catalog_add_table(&cat, &d, 48), -EINVAL);  /* < 16 + 40 */
	d.n_buckets = UINT64_C(1) << 47;                                    /* > 48 bits */
	assert_int_equal(dtxn_catalog_add_table(&cat, &d, 56), -EINVAL);
	assert_int_equal(cat.n_tables, 0);

	/* Defaults: 8 slots, buckets for 75% load, bucket = header + 8 * slot. */
	d = mkdef(1, "acct", 40, 1000);
	assert_int_equal(dtxn_catalog_add_table(&cat, &d, 56), 0);
	t = dtxn_catalog_table(&cat, 1);
	assert_non_null(t);
	assert_int_equal(t->def.slots_per_bucket, 8);
	assert_int_equal(t->n_buckets, 167);                 /* ceil(1000 / 6) */
	assert_true(t->n_buckets * 8 * 3 >= 1000 * 4);       /* at most 75% full */
	assert_int_equal(t->slot_size, 56);
	assert_int_equal(t->bucket_size, DTXN_BUCKET_HDR_SIZE + 8 * 56);
	assert_int_equal(t->bucket_size % 8, 0);
	assert_int_equal(t->n_replicas, 2);
	assert_string_equal(t->def.name, "acct");

	/* Taken id; taken name. */
	d = mkdef(1, "other", 8, 10);
	assert_int_equal(dtxn_catalog_add_table(&cat, &d, 24), -EEXIST);
	d = mkdef(2, "acct", 8, 10);
	assert_int_equal(dtxn_catalog_add_table(&cat, &d, 24), -EEXIST);
	assert_int_equal(cat.n_tables, 1);

	/* Explicit sizes, and a tiny table: at least one bucket. */
	d = mkdef(2, "tiny", 8, 1);
	assert_int_equal(dtxn_catalog_add_table(&cat, &d, 24), 0);
	assert_int_equal(dtxn_catalog_table(&cat, 2)->n_buckets, 1);
	d = mkdef(3, "explicit", 8, 100);
	d.slots_per_bucket = 3;
	d.n_buckets = 5;
	assert_int_equal(dtxn_catalog_add_table(&cat, &d, 32), 0);
	t = dtxn_catalog_table(&cat, 3);
	assert_int_equal(t->n_buckets, 5);
	assert_int_equal(t->bucket_size, DTXN_BUCKET_HDR_SIZE + 3 * 32);
	assert_int_equal(t->bucket_hdr_size, 16);
	assert_int_equal(dtxn_store_slot_raddr(t, 0, 1) - dtxn_store_slot_raddr(t, 0, 0), 32);
	assert_int_equal(dtxn_store_slot_raddr(t, 0, 0), 16);
	assert_int_equal(cat.n_tables, 3);
	/* a reclaim watermark: 8 B more before the slots, read where it sits */
	d = mkdef(4, "reclaim", 8, 100);
	d.slots_per_bucket = 3;
	d.flags = DTXN_TABLE_F_RECLAIM;
	assert_int_equal(dtxn_catalog_add_table(&cat, &d, 32), 0);
	t = dtxn_catalog_table(&cat, 4);
	assert_int_equal(t->bucket_hdr_size, 24);
	assert_int_equal(t->bucket_size, 24 + 3 * 32);
	assert_int_equal(dtxn_store_slot_raddr(t, 0, 0), 24);
	{
		uint64_t bucket[(24 + 3 * 32) / 8] = { 0 };

		bucket[1] = DTXN_BUCKET_OVERFLOW | 7; /* version 7 of an overflowed bucket */
		bucket[DTXN_BUCKET_RECLAIM_OFF / 8] = 42;
		assert_true(dtxn_bucket_overflows(bucket));
		assert_int_equal(dtxn_bucket_reclaimed(t, bucket), 42);
		/* a table without the flag has no watermark: its slot 0 starts there */
		assert_int_equal(dtxn_bucket_reclaimed(dtxn_catalog_table(&cat, 3), bucket), 0);
		bucket[1] = 7;
		assert_false(dtxn_bucket_overflows(bucket));
	}
}

static void
test_catalog_placement(void **state)
{
	struct dtxn_catalog cat;
	struct dtxn_table_def d;
	char name[16];

	(void)state;
	assert_int_equal(dtxn_catalog_init(&cat, 3, 3), 0);
	for (uint32_t id = 0; id < 7; id++) {
		snprintf(name, sizeof(name), "t%u", id);
		d = mkdef(id, name, 8, 100);
		assert_int_equal(dtxn_catalog_add_table(&cat, &d, 24), 0);
	}
	for (uint32_t id = 0; id < 7; id++) {
		const struct dtxn_table *t = dtxn_catalog_table(&cat, id);

		assert_int_equal(t->n_replicas, 3);
		assert_int_equal(t->mn[0], id % 3);
		assert_int_equal(t->mn[1], (id + 1) % 3);
		assert_int_equal(t->mn[2], (id + 2) % 3);
	}

	/* 5 MNs, 2 replicas: backups wrap round robin. */
	assert_int_equal(dtxn_catalog_init(&cat, 5, 2), 0);
	d = mkdef(4, "wrap", 8, 100);
	assert_int_equal(dtxn_catalog_add_table(&cat, &d, 24), 0);
	assert_int_equal(dtxn_catalog_table(&cat, 4)->mn[0], 4);
	assert_int_equal(dtxn_catalog_table(&cat, 4)->mn[1], 0);
	d = mkdef(12, "wrap2", 8, 100);
	assert_int_equal(dtxn_catalog_add_table(&cat, &d, 24), 0);
	assert_int_equal(dtxn_catalog_table(&cat, 12)->mn[0], 2);
	assert_int_equal(dtxn_catalog_table(&cat, 12)->mn[1], 3);
}

/* A table's primary moved (dtxn_catalog_set_primary(), --table-mn): its
 * replicas follow it round robin, the other tables keep the default
 * rule, and the layout puts its bytes on the new MNs. */
static void
test_catalog_set_primary(void **state)
{
	struct dtxn_catalog cat;
	struct dtxn_table_def d;
	const struct dtxn_table *t;

	(void)state;
	assert_int_equal(dtxn_catalog_init(&cat, 3, 2), 0);
	d = mkdef(0, "t0", 8, 100);
	assert_int_equal(dtxn_catalog_add_table(&cat, &d, 24), 0);
	d = mkdef(2, "t2", 8, 100000);
	assert_int_equal(dtxn_catalog_add_table(&cat, &d, 24), 0);
	assert_int_equal(dtxn_catalog_layout(&cat, 0, 0), 0);
	assert_int_not_equal(cat.region_size, 0);
	/* default: t2 on MNs 2 and 0 */
	t = dtxn_catalog_table(&cat, 2);
	assert_int_equal(t->mn[0], 2);
	assert_int_equal(t->mn[1], 0);
	const uint64_t mn1_before = cat.mn_used[1];

	/* moved to MN 1: replicas on MNs 1 and 2; the layout is reset */
	assert_int_equal(dtxn_catalog_set_primary(&cat, 2, 1), 0);
	assert_int_equal(cat.region_size, 0);
	assert_int_equal(t->mn[0], 1);
	assert_int_equal(t->mn[1], 2);
	assert_int_equal(dtxn_catalog_table(&cat, 0)->mn[0], 0);
	assert_int_equal(dtxn_catalog_table(&cat, 0)->mn[1], 1);
	assert_int_equal(dtxn_catalog_layout(&cat, 0, 0), 0);
	/* MN 1 now holds t2's primary beside t0's backup */
	assert_true(cat.mn_used[1] > mn1_before + 100000 * 24);
	assert_true(t->off[0] + t->n_buckets * t->bucket_size <= cat.mn_used[1]);
	/* the last MN wraps: replicas on MNs 2 and 0 again */
	assert_int_equal(dtxn_catalog_set_primary(&cat, 2, 2), 0);
	assert_int_equal(t->mn[0], 2);
	assert_int_equal(t->mn[1], 0);

	/* an MN not below n_mn, a table not there */
	assert_int_equal(dtxn_catalog_set_primary(&cat, 2, 3), -ERANGE);
	assert_int_equal(t->mn[0], 2);
	assert_int_equal(dtxn_catalog_set_primary(&cat, 1, 0), -EINVAL);
	assert_int_equal(dtxn_catalog_set_primary(&cat, DTXN_MAX_TABLES, 0), -EINVAL);
	assert_int_equal(dtxn_catalog_set_primary(NULL, 2, 0), -EINVAL);
}

struct interval {
	uint64_t lo, hi;
};

static void
test_catalog_layout(void **state)
{
	struct dtxn_catalog cat;
	struct dtxn_table_def d;
	const uint32_t vs[] = { 8, 100, 1000, 24, 3, 640 };
	const uint64_t keys[] = { 1000, 333, 77, 5000, 1, 12345 };
	struct interval iv[DTXN_MAX_NODES][DTXN_MAX_TABLES];
	unsigned n_iv[DTXN_MAX_NODES] = { 0 };
	uint64_t max_used = 0;
	char name[16];

	(void)state;
	assert_int_equal(dtxn_catalog_init(&cat, 4, 3), 0);
	for (uint32_t i = 0; i < RTE_DIM(vs); i++) {
		snprintf(name, sizeof(name), "t%u", i * 2);
		d = mkdef(i * 2, name, vs[i], keys[i]);
		assert_int_equal(dtxn_catalog_add_table(&cat, &d, slot_size_for(vs[i]) + 8 * i), 0);
	}
	assert_int_equal(dtxn_catalog_layout(&cat, 10, 100), -EINVAL);    /* not x64 */
	assert_int_equal(dtxn_catalog_layout(&cat, 10, 0), -EINVAL);
	assert_int_equal(dtxn_catalog_layout(NULL, 10, 4096), -EINVAL);
	assert_int_equal(dtxn_catalog_layout(&cat, 10, 4096), 0);

	for (uint32_t id = 0; id < DTXN_MAX_TABLES; id++) {
		const struct dtxn_table *t = dtxn_catalog_table(&cat, id);

		if (t == NULL)
			continue;
		for (uint16_t r = 0; r < t->n_replicas; r++) {
			uint16_t m = t->mn[r];
			uint64_t lo = t->off[r], hi = lo + t->n_buckets * t->bucket_size;

			assert_int_equal(lo % 64, 0);
			assert_true(lo >= 64);             /* no store raddr is 0 */
			assert_true(hi <= cat.mn_used[m]);
			for (unsigned j = 0; j < n_iv[m]; j++)
				assert_true(hi <= iv[m][j].lo || lo >= iv[m][j].hi);
			iv[m][n_iv[m]].lo = lo;
			iv[m][n_iv[m]].hi = hi;
			n_iv[m]++;
		}
	}
	for (uint16_t m = 0; m < cat.n_mn; m++) {
		assert_true(n_iv[m] > 0);
		if (cat.mn_used[m] > max_used)
			max_used = cat.mn_used[m];
	}
	assert_int_equal(cat.log_off % 64, 0);
	assert_true(cat.log_off >= max_used);
	assert_true(cat.log_off < max_used + 64);
	assert_int_equal(cat.region_size % 4096, 0);
	assert_true(cat.region_size >=
		    cat.log_off + 10 * 4096 + DTXN_STORE_LEASE_BYTES + DTXN_STORE_CTL_BYTES +
			    10 * DTXN_STORE_CREC_BYTES);
	assert_true(cat.region_size <
		    cat.log_off + 10 * 4096 + DTXN_STORE_LEASE_BYTES + DTXN_STORE_CTL_BYTES +
			    10 * DTXN_STORE_CREC_BYTES + 4096);
	/* the commit records: after the control area, one per coordinator
	 * (log), at the same offset on every MN */
	assert_int_equal(cat.crec_off, cat.ctl_off + DTXN_STORE_CTL_BYTES);
	for (uint16_t m = 0; m < cat.n_mn; m++) {
		assert_int_equal(dtxn_store_crec_raddr(&cat, m, 9),
				 DTXN_RADDR(m, cat.crec_off + 9 * DTXN_STORE_CREC_BYTES));
		assert_true(cat.crec_off + 10 * DTXN_STORE_CREC_BYTES <= cat.region_size);
	}
	assert_int_equal(dtxn_store_crec_raddr(&cat, 0, 10), 0);
	assert_int_equal(dtxn_store_crec_raddr(&cat, cat.n_mn, 0), 0);

	/* The lease area: after the logs, on MN 0, heartbeats then states. */
	assert_int_equal(cat.lease_off, cat.log_off + 10 * 4096);
	assert_int_equal(dtxn_store_lease_raddr(&cat, 5, false), DTXN_RADDR(0, cat.lease_off + 40));
	assert_int_equal(dtxn_store_lease_raddr(&cat, 5, true),
			 DTXN_RADDR(0, cat.lease_off + DTXN_MAX_NODES * 8 + 40));
	assert_true(DTXN_RADDR_OFF(dtxn_store_lease_raddr(&cat, DTXN_MAX_NODES - 1, true)) + 8 <=
		    cat.region_size);
	assert_int_equal(dtxn_store_lease_raddr(&cat, DTXN_MAX_NODES, false), 0);

	/* The control area: after the lease area, on MN 0, inside the region. */
	assert_int_equal(cat.ctl_off, cat.lease_off + DTXN_STORE_LEASE_BYTES);
	assert_int_equal(cat.ctl_off % 64, 0);
	assert_int_equal(dtxn_store_ctl_raddr(&cat, 8), DTXN_RADDR(0, cat.ctl_off + 8));
	assert_true(cat.ctl_off + DTXN_STORE_CTL_BYTES <= cat.region_size);
	assert_int_equal(dtxn_store_ctl_raddr(&cat, DTXN_STORE_CTL_BYTES), 0);

	/* Log regions: same offset on every MN, back to back, in the region. */
	for (uint32_t c = 0; c < 10; c++) {
		dtxn_raddr_t a0 = dtxn_store_log_raddr(&cat, c, 0);

		assert_int_equal(DTXN_RADDR_OFF(a0), cat.log_off + c * 4096);
		for (uint16_t m = 0; m < cat.n_mn; m++) {
			dtxn_raddr_t a = dtxn_store_log_raddr(&cat, c, m);

			assert_int_equal(DTXN_RADDR_MN(a), m);
			assert_int_equal(DTXN_RADDR_OFF(a), DTXN_RADDR_OFF(a0));
			assert_true(DTXN_RADDR_OFF(a) + 4096 <= cat.region_size);
		}
	}
	assert_int_equal(dtxn_store_log_raddr(&cat, 10, 0), 0);
	assert_int_equal(dtxn_store_log_raddr(&cat, 0, 4), 0);

	/* Layout again: same result (idempotent). */
	{
		struct dtxn_catalog again = cat;

		assert_int_equal(dtxn_catalog_layout(&again, 10, 4096), 0);
		assert_memory_equal(&again, &cat, sizeof(cat));
	}
	assert_int_equal(cat.msg_off, 0); /* no message area asked for */
	/* A message area (RRPC's rings to the MNs): after the lease area, 64-aligned, counted. */
	{
		struct dtxn_catalog msg = cat;
		struct dtxn_store_mem mm;

		msg.msg_bytes = 100000;
		assert_int_equal(dtxn_catalog_layout(&msg, 10, 4096), 0);
		assert_int_equal(msg.msg_off,
				 (cat.crec_off + 10 * DTXN_STORE_CREC_BYTES + 63) / 64 * 64);
		assert_true(msg.region_size >= msg.msg_off + 100000);
		assert_true(msg.region_size < msg.msg_off + 100000 + 4096);
		assert_int_equal(msg.log_off, cat.log_off);
		assert_int_equal(msg.lease_off, cat.lease_off);
		assert_int_equal(dtxn_catalog_mem(&msg, 1, &mm), 0);
		assert_int_equal(mm.msgs, 100000);
		assert_int_equal(mm.index + mm.values + mm.logs + mm.msgs + mm.reserved + mm.unused,
				 mm.total);
		msg.msg_bytes = DTXN_RADDR_OFF_MASK;
		assert_int_equal(dtxn_catalog_layout(&msg, 10, 4096), -E2BIG);
	}
	/* A new table invalidates the layout. */
	d = mkdef(15, "late", 8, 10);
	assert_int_equal(dtxn_catalog_add_table(&cat, &d, 24), 0);
	assert_int_equal(cat.region_size, 0);
}

/*
 * MN memory accounting: each MN's parts add up to the region, the index
 * and aux bytes are those of the replicas it holds, and the loaded
 * population (dtxn_catalog_count_load) gives its raw and empty bytes.
 */
static void
test_catalog_mem(void **state)
{
	struct dtxn_catalog cat;
	struct dtxn_table_def d;
	struct dtxn_store_mem m[3], sum;
	const struct dtxn_table *t0, *t1;

	(void)state;
	assert_int_equal(dtxn_catalog_init(&cat, 3, 2), 0);
	d = mkdef(0, "plain", 40, 1000);
	assert_int_equal(dtxn_catalog_add_table(&cat, &d, slot_size_for(40)), 0);
	d = mkdef(1, "aux", 100, 300);
	assert_int_equal(dtxn_catalog_add_table_aux(&cat, &d, 64, 128), 0);
	assert_int_equal(dtxn_catalog_mem(&cat, 0, &m[0]), -EINVAL); /* no layout yet */
	assert_int_equal(dtxn_catalog_layout(&cat, 4, 1024), 0);
	assert_int_equal(dtxn_catalog_count_load(&cat, 2, 10), -EINVAL);
	assert_int_equal(dtxn_catalog_count_load(NULL, 0, 10), -EINVAL);
	for (unsigned k = 0; k < 700; k++)
		assert_int_equal(dtxn_catalog_count_load(&cat, 0, DTXN_KEY_BYTES + 40), 0);
	for (unsigned k = 0; k < 200; k++)
		assert_int_equal(dtxn_catalog_count_load(&cat, 1, DTXN_KEY_BYTES + 100), 0);
	t0 = dtxn_catalog_table(&cat, 0);
	t1 = dtxn_catalog_table(&cat, 1);
	assert_int_equal(t0->loaded_rows, 700);
	assert_int_equal(t1->loaded_raw_bytes, 200 * 108);

	memset(&sum, 0, sizeof(sum));
	for (uint16_t mn = 0; mn < 3; mn++) {
		uint64_t index = 0, values = 0, raw = 0, empty = 0;

		assert_int_equal(dtxn_catalog_mem(&cat, mn, &m[mn]), 0);
		assert_int_equal(m[mn].total, cat.region_size);
		assert_int_equal(m[mn].logs, 4 * 1024);
		assert_int_equal(m[mn].reserved, DTXN_STORE_RSVD_BYTES + DTXN_STORE_LEASE_BYTES +
							 DTXN_STORE_CTL_BYTES + 4 * DTXN_STORE_CREC_BYTES);
		assert_int_equal(m[mn].index + m[mn].values + m[mn].logs + m[mn].reserved +
				 m[mn].unused, m[mn].total);
		for (uint32_t id = 0; id < 2; id++) {
			const struct dtxn_table *t = dtxn_catalog_table(&cat, id);
			uint64_t slots = t->n_buckets * t->def.slots_per_bucket;

			for (uint16_t r = 0; r < t->n_replicas; r++) {
				if (t->mn[r] != mn)
					continue;
				uint64_t heap = t->aux_size == 0 ? 0 :
						DTXN_AUX_HEAP_HDR + t->aux_areas * t->aux_size;

				index += t->n_buckets * t->bucket_size;
				values += heap;
				raw += t->loaded_raw_bytes;
				/* free slots and their share of the headers; the aux
				 * areas no row took and the heap's header */
				empty += (slots - t->loaded_rows) * t->slot_size +
					 (slots - t->loaded_rows) * t->bucket_hdr_size /
						 t->def.slots_per_bucket +
					 (heap != 0 ? heap - t->loaded_rows * t->aux_size : 0);
			}
		}
		assert_int_equal(m[mn].index, index);
		assert_int_equal(m[mn].values, values);
		assert_int_equal(m[mn].raw, raw);
		assert_int_equal(m[mn].empty, empty);
		sum.raw += m[mn].raw;
	}
	/* every row counted once per copy: raw x replicas */
	assert_int_equal(sum.raw, 2 * (700 * 48 + 200 * 108));
	/* 400 slots, 300 keys + 4 coordinators x 32: one area per slot */
	assert_int_equal(t1->aux_areas, 400);
	assert_int_equal(t0->aux_areas, 0);
	assert_int_equal(m[0].values, 0);  /* table 1 (aux) lives on MNs 1 and 2 */
	assert_true(m[1].values > 0 && m[2].values > 0);
	assert_int_equal(dtxn_catalog_mem(&cat, 3, &m[0]), -EINVAL);
	assert_int_equal(dtxn_catalog_mem(&cat, 0, NULL), -EINVAL);
}

static void
test_catalog_layout_e2big(void **state)
{
	struct dtxn_catalog cat;
	struct dtxn_table_def d;
	uint64_t big;

	(void)state;
	/* Two tables of ~2^47 bytes each on one MN do not fit 48 bits. */
	assert_int_equal(dtxn_catalog_init(&cat, 1, 1), 0);
	d = mkdef(0, "a", 8, 1000);
	d.slots_per_bucket = 1;
	big = (UINT64_C(1) << 47) / (DTXN_BUCKET_HDR_SIZE + 24) + 1;
	d.n_buckets = big;
	assert_int_equal(dtxn_catalog_add_table(&cat, &d, 24), 0);
	assert_int_equal(dtxn_catalog_layout(&cat, 0, 0), 0);
	d = mkdef(1, "b", 8, 1000);
	d.slots_per_bucket = 1;
	d.n_buckets = big;
	assert_int_equal(dtxn_catalog_add_table(&cat, &d, 24), 0);
	assert_int_equal(dtxn_catalog_layout(&cat, 0, 0), -E2BIG);

	/* Logs past 48 bits. */
	assert_int_equal(dtxn_catalog_init(&cat, 2, 1), 0);
	d = mkdef(0, "a", 8, 1000);
	assert_int_equal(dtxn_catalog_add_table(&cat, &d, 24), 0);
	assert_int_equal(dtxn_catalog_layout(&cat, 1u << 20, UINT64_C(1) << 30), -E2BIG);
	assert_int_equal(dtxn_catalog_layout(&cat, 1u << 10, UINT64_C(1) << 30), 0);
}

/* ------------------------------------------------------------------ */
/* hash index                                                         */
/* ------------------------------------------------------------------ */

static void
test_bucket_of_uniform(void **state)
{
	struct dtxn_catalog cat;
	struct dtxn_table_def d;
	const struct dtxn_table *t, *t2;
	const uint64_t nb = 1024, per = 64;
	uint32_t *cnt = calloc(nb, sizeof(*cnt));
	double chi2 = 0, expect = (double)per;
	unsigned same = 0;

	(void)state;
	assert_non_null(cnt);
	assert_int_equal(dtxn_catalog_init(&cat, 1, 1), 0);
	d = mkdef(3, "u", 8, 1);
	d.n_buckets = nb;
	assert_int_equal(dtxn_catalog_add_table(&cat, &d, 24), 0);
	d = mkdef(4, "v", 8, 1);
	d.n_buckets = nb;
	assert_int_equal(dtxn_catalog_add_table(&cat, &d, 24), 0);
	t = dtxn_catalog_table(&cat, 3);
	t2 = dtxn_catalog_table(&cat, 4);

	/* Dense ids in a few shards: the worst case for a weak hash. */
	for (uint64_t i = 0; i < nb * per; i++) {
		uint64_t key = dtxn_key_make(i / 4, i % 4);
		uint64_t b = dtxn_store_bucket_of(t, key);

		assert_true(b < nb);
		assert_int_equal(b, dtxn_store_bucket_of(t, key));   /* deterministic */
		cnt[b]++;
		if (dtxn_store_bucket_of(t2, key) == b)
			same++;
	}
	for (uint64_t b = 0; b < nb; b++)
		chi2 += ((double)cnt[b] - expect) * ((double)cnt[b] - expect) / expect;
	/* df = 1023: mean 1023, sd ~45; allow 6 sd. */
	print_message("bucket_of: chi2 %.1f over %" PRIu64 " buckets\n", chi2, nb);
	assert_true(chi2 < 1023 + 6 * 45.2);
	assert_true(chi2 > 1023 - 6 * 45.2);
	/* The table id changes the bucket: ~1/1024 coincide. */
	assert_true(same < nb * per / 100);
	free(cnt);
}

static void
test_raddr(void **state)
{
	struct dtxn_catalog cat;
	struct dtxn_table_def d;
	const struct dtxn_table *t;
	dtxn_raddr_t b0, b5, s, s1;

	(void)state;
	assert_int_equal(dtxn_catalog_init(&cat, 3, 3), 0);
	d = mkdef(0, "pad", 8, 5000);
	assert_int_equal(dtxn_catalog_add_table(&cat, &d, 24), 0);
	d = mkdef(1, "r", 40, 100);
	d.n_buckets = 10;
	assert_int_equal(dtxn_catalog_add_table(&cat, &d, 64), 0);
	assert_int_equal(dtxn_catalog_layout(&cat, 1, 64), 0);
	t = dtxn_catalog_table(&cat, 1);

	b0 = dtxn_store_bucket_raddr(t, 0, 0);
	b5 = dtxn_store_bucket_raddr(t, 0, 5);
	assert_int_equal(DTXN_RADDR_MN(b0), t->mn[0]);
	assert_int_equal(DTXN_RADDR_OFF(b0), t->off[0]);
	assert_int_equal(DTXN_RADDR_OFF(b5), t->off[0] + 5 * t->bucket_size);
	assert_int_equal(dtxn_store_bucket_raddr(t, 0, 15), b5);          /* wraps */
	assert_int_equal(dtxn_store_bucket_raddr(t, 3, 0), 0);            /* bad replica */
	for (uint16_t r = 0; r < 3; r++) {
		dtxn_raddr_t br = dtxn_store_bucket_raddr(t, r, 7);

		assert_int_equal(DTXN_RADDR_MN(br), t->mn[r]);
		assert_int_equal(DTXN_RADDR_OFF(br), t->off[r] + 7 * t->bucket_size);
	}

	s = dtxn_store_slot_raddr(t, b5, 2);
	assert_int_equal(DTXN_RADDR_OFF(s), DTXN_RADDR_OFF(b5) + DTXN_BUCKET_HDR_SIZE + 2 * 64);
	assert_int_equal(dtxn_store_replica_raddr(t, 0, s), s);
	s1 = dtxn_store_replica_raddr(t, 1, s);
	assert_int_equal(DTXN_RADDR_MN(s1), t->mn[1]);
	assert_int_equal(DTXN_RADDR_OFF(s1) - t->off[1], DTXN_RADDR_OFF(s) - t->off[0]);
	assert_int_equal(dtxn_store_replica_raddr(t, 3, s), 0);
	assert_int_equal(dtxn_store_replica_raddr(t, 1, DTXN_RADDR(t->mn[1], DTXN_RADDR_OFF(s))), 0);
	assert_int_equal(dtxn_store_replica_raddr(t, 1, DTXN_RADDR(t->mn[0],
				t->off[0] + t->n_buckets * t->bucket_size)), 0);
}

static void
test_bucket_find_free(void **state)
{
	struct dtxn_catalog cat;
	struct dtxn_table_def d;
	const struct dtxn_table *t;
	uint64_t buf[(DTXN_BUCKET_HDR_SIZE + 4 * 32) / 8];
	struct dtxn_slot_hdr h;

	(void)state;
	assert_int_equal(dtxn_catalog_init(&cat, 1, 1), 0);
	d = mkdef(2, "f", 16, 10);
	d.slots_per_bucket = 4;
	assert_int_equal(dtxn_catalog_add_table(&cat, &d, 32), 0);
	t = dtxn_catalog_table(&cat, 2);
	assert_int_equal(t->bucket_size, sizeof(buf));

	memset(buf, 0, sizeof(buf));
	assert_int_equal(dtxn_store_bucket_find(t, buf, 0), -ENOENT);     /* zero != valid */
	assert_int_equal(dtxn_store_bucket_free_slot(t, buf), 0);

	h = (struct dtxn_slot_hdr){ .key = 77, .table_id = 2, .flags = DTXN_SLOT_VALID };
	memcpy(dtxn_store_bucket_slot(t, buf, 0), &h, sizeof(h));
	h = (struct dtxn_slot_hdr){ .key = 88, .table_id = 3, .flags = DTXN_SLOT_VALID };
	memcpy(dtxn_store_bucket_slot(t, buf, 1), &h, sizeof(h));        /* other table */
	h = (struct dtxn_slot_hdr){ .key = 99, .table_id = 2, .flags = 0 };
	memcpy(dtxn_store_bucket_slot(t, buf, 2), &h, sizeof(h));        /* not valid */
	h = (struct dtxn_slot_hdr){ .key = 88, .table_id = 2, .flags = DTXN_SLOT_VALID };
	memcpy(dtxn_store_bucket_slot(t, buf, 3), &h, sizeof(h));

	assert_int_equal(dtxn_store_bucket_find(t, buf, 77), 0);
	assert_int_equal(dtxn_store_bucket_find(t, buf, 88), 3);
	assert_int_equal(dtxn_store_bucket_find(t, buf, 99), -ENOENT);
	assert_int_equal(dtxn_store_bucket_find(t, buf, 5), -ENOENT);
	assert_int_equal(dtxn_store_bucket_free_slot(t, buf), 2);
	h.flags = DTXN_SLOT_VALID;
	h.key = 99;
	memcpy(dtxn_store_bucket_slot(t, buf, 2), &h, sizeof(h));
	assert_int_equal(dtxn_store_bucket_free_slot(t, buf), -ENOSPC);
	assert_int_equal(dtxn_store_bucket_find(t, buf, 99), 2);
}

/* ------------------------------------------------------------------ */
/* loader and scanner (shm fabric)                                    */
/* ------------------------------------------------------------------ */

struct scan_arg {
	uint64_t n;
	uint64_t max_key;
	uint8_t *seen;        /* by key id */
	int bad;
	uint64_t stop_after;  /* 0: never */
};

static int
scan_visit(const struct dtxn_table *t, const void *slot, void *arg)
{
	struct scan_arg *a = arg;
	struct dtxn_slot_hdr h;
	uint8_t want[1024];

	memcpy(&h, slot, sizeof(h));
	if (h.table_id != t->def.id || !(h.flags & DTXN_SLOT_VALID) || h.key > a->max_key ||
	    a->seen[h.key]) {
		a->bad++;
		return 0;
	}
	a->seen[h.key] = 1;
	make_value(h.key, want, t->def.value_size);
	if (memcmp((const char *)slot + DTXN_SLOT_HDR_SIZE, want, t->def.value_size) != 0)
		a->bad++;
	a->n++;
	if (a->stop_after != 0 && a->n == a->stop_after)
		return 42;
	return 0;
}

static void
test_load_find_replicas_scan(void **state)
{
	struct dtxn_catalog cat;
	struct dtxn_table_def d;
	const struct dtxn_table *t;
	struct dtxn_fabric *f;
	struct fmt_arg fa = { 0 };
	const uint64_t n = 20000;
	uint8_t value[100], slot[256];
	struct scan_arg sa;

	(void)state;
	assert_int_equal(dtxn_catalog_init(&cat, 3, 3), 0);
	d = mkdef(0, "other", 8, 1000);
	assert_int_equal(dtxn_catalog_add_table(&cat, &d, 24), 0);
	d = mkdef(1, "main", 100, n);
	assert_int_equal(dtxn_catalog_add_table(&cat, &d, slot_size_for(100)), 0);
	assert_int_equal(dtxn_catalog_layout(&cat, 4, 4096), 0);
	t = dtxn_catalog_table(&cat, 1);

	f = open_fabric("utst_a", 3, cat.region_size);
	if (f == NULL)
		fail_msg("shm fabric: %s", rte_strerror(rte_errno));

	assert_int_equal(dtxn_store_load(NULL, t, 1, value, test_fmt, &fa), -EINVAL);
	assert_int_equal(dtxn_store_load(f, t, 1, value, NULL, &fa), -EINVAL);

	for (uint64_t k = 0; k < n; k++) {
		make_value(k, value, sizeof(value));
		assert_int_equal(dtxn_store_load(f, t, k, value, test_fmt, &fa), 0);
	}
	assert_int_equal(fa.calls, n);      /* once per record, on the primary */
	/* A key in table 0 with the same number does not collide with table 1. */
	make_value(5, value, 8);
	assert_int_equal(dtxn_store_load(f, dtxn_catalog_table(&cat, 0), 5, value,
					 test_fmt, &fa), 0);
	/* Every key again: -EEXIST, wherever it landed along its chain. */
	for (uint64_t k = 0; k < n; k++)
		assert_int_equal(dtxn_store_load(f, t, k, value, test_fmt, &fa), -EEXIST);

	/* Find every key on every replica, as a CN would with READs. */
	for (uint64_t k = 0; k < n; k++) {
		dtxn_raddr_t sa0 = 0;

		make_value(k, value, sizeof(value));
		for (uint16_t r = 0; r < t->n_replicas; r++) {
			dtxn_raddr_t sr = 0;
			struct dtxn_slot_hdr h;

			assert_true(remote_lookup(f, t, r, k, &sr, slot) >= 1);
			memcpy(&h, slot, sizeof(h));
			assert_int_equal(h.key, k);
			assert_int_equal(h.table_id, 1);
			assert_int_equal(h.flags, DTXN_SLOT_VALID);
			assert_memory_equal(slot + DTXN_SLOT_HDR_SIZE, value, sizeof(value));
			if (r == 0)
				sa0 = sr;
			else
				assert_int_equal(dtxn_store_replica_raddr(t, r, sa0), sr);
		}
	}
	{
		dtxn_raddr_t sr;

		assert_int_equal(remote_lookup(f, t, 0, n + 1, &sr, NULL), -ENOENT);
	}

	/* Replicas are byte-identical. */
	for (uint16_t r = 1; r < t->n_replicas; r++) {
		const char *p = (const char *)dtxn_fabric_mn_base(f, t->mn[0]) + t->off[0];
		const char *q = (const char *)dtxn_fabric_mn_base(f, t->mn[r]) + t->off[r];

		assert_memory_equal(p, q, t->n_buckets * t->bucket_size);
	}

	/* Scan visits exactly the loaded keys, once each, on every replica. */
	for (uint16_t r = 0; r < t->n_replicas; r++) {
		memset(&sa, 0, sizeof(sa));
		sa.max_key = n;
		sa.seen = calloc(n + 1, 1);
		assert_non_null(sa.seen);
		assert_int_equal(dtxn_store_scan(f, t, r, scan_visit, &sa), 0);
		assert_int_equal(sa.bad, 0);
		assert_int_equal(sa.n, n);
		for (uint64_t k = 0; k < n; k++)
			assert_int_equal(sa.seen[k], 1);
		free(sa.seen);
	}
	/* Pre-warm: every loaded key's primary slot address, as a lookup finds it;
	 * an overlay over it shows the same; a cache too small, an overlay, no
	 * region: errors. */
	{
		struct dtxn_addr_cache *pw = dtxn_addr_cache_create("pw", (uint32_t)n, SOCKET_ID_ANY);
		struct dtxn_addr_cache *ov = dtxn_addr_cache_overlay_create("pw_ov", (uint32_t)n, true,
									    SOCKET_ID_ANY);
		struct dtxn_addr_cache *small = dtxn_addr_cache_create("pw_small", (uint32_t)n / 2,
									SOCKET_ID_ANY);
		struct dtxn_table bad = *t;

		assert_non_null(pw);
		assert_non_null(ov);
		assert_non_null(small);
		assert_int_equal(dtxn_addr_cache_prewarm(pw, f, t), (long)n);
		assert_int_equal(dtxn_addr_cache_count(pw), n);
		assert_int_equal(dtxn_addr_cache_set_base(ov, pw), 0);
		assert_int_equal(dtxn_addr_cache_count(ov), n);
		for (uint64_t k = 0; k < n; k++) {
			dtxn_raddr_t sr = 0;

			assert_true(remote_lookup(f, t, 0, k, &sr, NULL) >= 1);
			assert_int_equal(dtxn_addr_cache_lookup(pw, t->def.id, k), sr);
			/* a prefetch (the txn layer's, at add) changes no answer */
			dtxn_addr_cache_prefetch(ov, t->def.id, k);
			assert_int_equal(dtxn_addr_cache_lookup(ov, t->def.id, k), sr);
		}
		dtxn_addr_cache_prefetch(NULL, t->def.id, 0);       /* does nothing */
		dtxn_addr_cache_prefetch(pw, DTXN_MAX_TABLES, 0);   /* does nothing */
		assert_int_equal(dtxn_addr_cache_lookup(pw, t->def.id, n + 1), 0);
		assert_int_equal(dtxn_addr_cache_prewarm(small, f, t), -ENOSPC);
		assert_int_equal(dtxn_addr_cache_prewarm(ov, f, t), -EINVAL);
		assert_int_equal(dtxn_addr_cache_prewarm(NULL, f, t), -EINVAL);
		bad.off[0] = cat.region_size;
		assert_int_equal(dtxn_addr_cache_prewarm(small, f, &bad), -ENXIO);
		assert_int_equal(dtxn_addr_cache_count(NULL), 0);
		dtxn_addr_cache_destroy(small);
		dtxn_addr_cache_destroy(ov);
		dtxn_addr_cache_destroy(pw);
	}
	/* The visitor's non-zero return stops the scan. */
	memset(&sa, 0, sizeof(sa));
	sa.max_key = n;
	sa.seen = calloc(n + 1, 1);
	sa.stop_after = 10;
	assert_int_equal(dtxn_store_scan(f, t, 0, scan_visit, &sa), 42);
	assert_int_equal(sa.n, 10);
	free(sa.seen);
	assert_int_equal(dtxn_store_scan(f, t, 3, scan_visit, &sa), -EINVAL);
	assert_int_equal(dtxn_store_scan(f, t, 0, NULL, &sa), -EINVAL);

	/* A table laid out past the region: -ENXIO. */
	{
		struct dtxn_table bad = *t;

		bad.off[1] = cat.region_size;
		assert_int_equal(dtxn_store_load(f, &bad, n + 5, value, test_fmt, &fa), -ENXIO);
		assert_int_equal(dtxn_store_scan(f, &bad, 1, scan_visit, &sa), -ENXIO);
		bad = *t;
		bad.mn[2] = 7;      /* no such MN */
		assert_int_equal(dtxn_store_load(f, &bad, n + 5, value, test_fmt, &fa), -ENXIO);
	}
	dtxn_fabric_close(f);
}

static void
test_load_overflow_chain(void **state)
{
	struct dtxn_catalog cat;
	struct dtxn_table_def d;
	const struct dtxn_table *t;
	struct dtxn_fabric *f;
	struct fmt_arg fa = { 0 };
	uint64_t same[DTXN_STORE_MAX_PROBE + 1], home = 0;
	unsigned n_same = 0;
	uint8_t value[8];

	(void)state;
	/* 16 buckets of 1 slot, 2 replicas: collisions must spill. */
	assert_int_equal(dtxn_catalog_init(&cat, 2, 2), 0);
	d = mkdef(1, "chain", 8, 16);
	d.slots_per_bucket = 1;
	d.n_buckets = 16;
	assert_int_equal(dtxn_catalog_add_table(&cat, &d, 24), 0);
	assert_int_equal(dtxn_catalog_layout(&cat, 0, 0), 0);
	t = dtxn_catalog_table(&cat, 1);
	f = open_fabric("utst_b", 2, cat.region_size);
	if (f == NULL)
		fail_msg("shm fabric: %s", rte_strerror(rte_errno));

	/* MAX_PROBE + 1 keys with one home bucket. */
	for (uint64_t k = 1; n_same < RTE_DIM(same); k++) {
		if (n_same == 0)
			home = dtxn_store_bucket_of(t, k);
		if (dtxn_store_bucket_of(t, k) == home)
			same[n_same++] = k;
	}
	for (unsigned i = 0; i < DTXN_STORE_MAX_PROBE; i++) {
		dtxn_raddr_t sr = 0;

		make_value(same[i], value, sizeof(value));
		assert_int_equal(dtxn_store_load(f, t, same[i], value, test_fmt, &fa), 0);
		/* i-th collider sits i buckets past home, found after i+1 READs. */
		assert_int_equal(remote_lookup(f, t, 0, same[i], &sr, NULL), (int)i + 1);
		assert_int_equal(DTXN_RADDR_OFF(sr),
				 DTXN_RADDR_OFF(dtxn_store_bucket_raddr(t, 0, home + i)) + DTXN_BUCKET_HDR_SIZE);
		assert_int_equal(remote_lookup(f, t, 1, same[i], &sr, NULL), (int)i + 1);
	}
	/* Home + MAX_PROBE-1 overflow buckets full: -ENOSPC; a loaded one: -EEXIST. */
	make_value(same[DTXN_STORE_MAX_PROBE], value, sizeof(value));
	assert_int_equal(dtxn_store_load(f, t, same[DTXN_STORE_MAX_PROBE], value, test_fmt, &fa),
			 -ENOSPC);
	assert_int_equal(dtxn_store_load(f, t, same[DTXN_STORE_MAX_PROBE - 1], value, test_fmt,
					 &fa), -EEXIST);
	/* Overflow flags: set on the chain but its last bucket, on both replicas. */
	for (uint16_t r = 0; r < 2; r++) {
		const char *base = dtxn_fabric_mn_base(f, t->mn[r]);

		for (unsigned p = 0; p < DTXN_STORE_MAX_PROBE; p++) {
			struct dtxn_bucket_hdr h;

			memcpy(&h, base + DTXN_RADDR_OFF(dtxn_store_bucket_raddr(t, r, home + p)),
			       sizeof(h));
			assert_int_equal((h.version & DTXN_BUCKET_OVERFLOW) != 0,
					 p + 1 < DTXN_STORE_MAX_PROBE);
		}
	}
	dtxn_fabric_close(f);
}

static void
test_load_tiny_table(void **state)
{
	struct dtxn_catalog cat;
	struct dtxn_table_def d;
	const struct dtxn_table *t;
	struct dtxn_fabric *f;
	struct fmt_arg fa = { 0 };
	uint8_t value[8] = { 0 };
	struct scan_arg sa;
	uint64_t k;

	(void)state;
	/* 2 buckets of 2 slots: 4 keys fit, whatever their homes; no endless wrap. */
	assert_int_equal(dtxn_catalog_init(&cat, 1, 1), 0);
	d = mkdef(0, "tiny", 8, 4);
	d.slots_per_bucket = 2;
	d.n_buckets = 2;
	assert_int_equal(dtxn_catalog_add_table(&cat, &d, 24), 0);
	assert_int_equal(dtxn_catalog_layout(&cat, 0, 0), 0);
	t = dtxn_catalog_table(&cat, 0);
	f = open_fabric("utst_c", 1, cat.region_size);
	if (f == NULL)
		fail_msg("shm fabric: %s", rte_strerror(rte_errno));
	for (k = 0; k < 4; k++) {
		make_value(k, value, sizeof(value));
		assert_int_equal(dtxn_store_load(f, t, k, value, test_fmt, &fa), 0);
	}
	assert_int_equal(dtxn_store_load(f, t, k, value, test_fmt, &fa), -ENOSPC);
	for (k = 0; k < 4; k++) {
		dtxn_raddr_t sr;

		assert_true(remote_lookup(f, t, 0, k, &sr, NULL) >= 1);
	}
	memset(&sa, 0, sizeof(sa));
	sa.max_key = 10;
	sa.seen = calloc(11, 1);
	assert_int_equal(dtxn_store_scan(f, t, 0, scan_visit, &sa), 0);
	assert_int_equal(sa.n, 4);
	assert_int_equal(sa.bad, 0);
	free(sa.seen);
	dtxn_fabric_close(f);
}

/*
 * DTXN_TABLE_F_DIRECT_INDEX (the Motor artifact's kDirectFunc): refused
 * without dense ids; n_buckets = ceil(max_keys / slots); key id i lives in
 * bucket i % n_buckets, so 1-slot buckets hold every dense id with no
 * overflow, and each lookup reads one bucket.
 */
static void
test_direct_index(void **state)
{
	uint8_t value[8] = { 0 };
	struct fmt_arg fa = { 0 };
	const uint64_t n = 1000;
	struct dtxn_table_def d;
	struct dtxn_catalog cat;
	struct dtxn_fabric *f;
	const struct dtxn_table *t;

	(void)state;
	assert_int_equal(dtxn_catalog_init(&cat, 1, 1), 0);
	d = mkdef(0, "nodense", 8, n);
	d.flags = DTXN_TABLE_F_DIRECT_INDEX;
	assert_int_equal(dtxn_catalog_add_table(&cat, &d, 24), -EINVAL);
	d = mkdef(1, "three", 8, n);
	d.flags = DTXN_TABLE_F_DENSE_IDS | DTXN_TABLE_F_DIRECT_INDEX;
	d.slots_per_bucket = 3;
	assert_int_equal(dtxn_catalog_add_table(&cat, &d, 24), 0);
	assert_int_equal(dtxn_catalog_table(&cat, 1)->n_buckets, (n + 2) / 3);
	d = mkdef(0, "one", 8, n);
	d.flags = DTXN_TABLE_F_DENSE_IDS | DTXN_TABLE_F_DIRECT_INDEX;
	d.slots_per_bucket = 1;
	assert_int_equal(dtxn_catalog_add_table(&cat, &d, 24), 0);
	assert_int_equal(dtxn_catalog_layout(&cat, 0, 0), 0);
	t = dtxn_catalog_table(&cat, 0);
	assert_int_equal(t->n_buckets, n);
	f = open_fabric("utst_di", 1, cat.region_size);
	if (f == NULL)
		fail_msg("shm fabric: %s", rte_strerror(rte_errno));
	for (uint64_t i = 0; i < n; i++) {
		uint64_t key = dtxn_key_make(i, i & DTXN_KEY_SHARD_MASK);

		assert_int_equal(dtxn_store_bucket_of(t, key), i);
		make_value(key, value, sizeof(value));
		assert_int_equal(dtxn_store_load(f, t, key, value, test_fmt, &fa), 0);
	}
	for (uint64_t i = 0; i < n; i++) {
		uint64_t key = dtxn_key_make(i, i & DTXN_KEY_SHARD_MASK);
		dtxn_raddr_t sr;

		assert_int_equal(remote_lookup(f, t, 0, key, &sr, NULL), 1); /* one bucket */
		assert_int_equal((DTXN_RADDR_OFF(sr) - t->off[0]) / t->bucket_size, i);
	}
	dtxn_fabric_close(f);
}

static void
test_load_displace(void **state)
{
	struct dtxn_catalog cat;
	struct dtxn_table_def d;
	const struct dtxn_table *t;
	struct dtxn_fabric *f;
	struct fmt_arg fa = { 0 };
	uint64_t cap, loaded = 0, far = 0;
	uint8_t value[16];
	struct scan_arg sa;

	(void)state;
	/*
	 * Fill 2048 buckets of 8 slots, 2 replicas, until the first -ENOSPC.
	 * Plain linear probing with a 4-bucket window first fails near half
	 * load; moving records within their windows reaches the structural
	 * limit (some run of buckets holds more homes than slots), ~85%.
	 */
	assert_int_equal(dtxn_catalog_init(&cat, 2, 2), 0);
	d = mkdef(0, "dense", 16, 1);
	d.n_buckets = 2048;
	assert_int_equal(dtxn_catalog_add_table(&cat, &d, 32), 0);
	assert_int_equal(dtxn_catalog_layout(&cat, 0, 0), 0);
	t = dtxn_catalog_table(&cat, 0);
	cap = t->n_buckets * t->def.slots_per_bucket;
	f = open_fabric("utst_e", 2, cat.region_size);
	if (f == NULL)
		fail_msg("shm fabric: %s", rte_strerror(rte_errno));
	for (uint64_t k = 0; k < cap; k++) {
		int rc;

		make_value(k, value, sizeof(value));
		rc = dtxn_store_load(f, t, k, value, test_fmt, &fa);
		if (rc == -ENOSPC)
			break;
		assert_int_equal(rc, 0);
		loaded++;
	}
	print_message("displace: %" PRIu64 " of %" PRIu64 " slots filled\n", loaded, cap);
	assert_true(loaded * 100 >= cap * 80);
	for (uint64_t k = 0; k < loaded; k++) {
		dtxn_raddr_t sr;
		uint8_t slot[32];
		int reads = remote_lookup(f, t, 0, k, &sr, slot);

		assert_true(reads >= 1);
		if (reads > 1)
			far++;
		make_value(k, value, sizeof(value));
		assert_memory_equal(slot + DTXN_SLOT_HDR_SIZE, value, sizeof(value));
		assert_true(remote_lookup(f, t, 1, k, &sr, NULL) >= 1);
		assert_int_equal(dtxn_store_load(f, t, k, value, test_fmt, &fa), -EEXIST);
	}
	assert_true(far > 0);
	assert_memory_equal((char *)dtxn_fabric_mn_base(f, t->mn[0]) + t->off[0],
			    (char *)dtxn_fabric_mn_base(f, t->mn[1]) + t->off[1],
			    t->n_buckets * t->bucket_size);
	memset(&sa, 0, sizeof(sa));
	sa.max_key = cap;
	sa.seen = calloc(cap + 1, 1);
	assert_int_equal(dtxn_store_scan(f, t, 1, scan_visit, &sa), 0);
	assert_int_equal(sa.n, loaded);
	assert_int_equal(sa.bad, 0);
	free(sa.seen);
	dtxn_fabric_close(f);
}

/* Test record format with an aux area: value in the slot, its bytes inverted in the aux area. */
struct aux_fmt_arg {
	struct dtxn_fabric *f;
};

static void
test_fmt_aux(const struct dtxn_table *t, void *slot, const void *value, void *arg)
{
	struct aux_fmt_arg *a = arg;
	uint8_t *aux = dtxn_store_aux_ptr(a->f, t, 0, slot);
	const uint8_t *v = value;

	memcpy((char *)slot + DTXN_SLOT_HDR_SIZE, value, t->def.value_size);
	assert_non_null(aux);
	for (uint32_t i = 0; i < t->def.value_size; i++)
		aux[i] = (uint8_t)~v[i];
}

/* Fills table 0 of @p cat on @p f to its first -ENOSPC (records move to make room). */
static uint64_t
fill_aux_table(struct dtxn_fabric *f, struct dtxn_catalog *cat)
{
	const struct dtxn_table *t = dtxn_catalog_table(cat, 0);
	struct aux_fmt_arg fa = { f };
	uint64_t k, cap = t->n_buckets * t->def.slots_per_bucket;
	uint8_t value[16];

	for (k = 0; k < cap; k++) {
		int rc;

		make_value(k, value, sizeof(value));
		rc = dtxn_store_load(f, t, k, value, test_fmt_aux, &fa);
		if (rc == -ENOSPC)
			break;
		assert_int_equal(rc, 0);
	}
	return k;
}

/* Scan visitor of test_aux_heap: each slot's area, its bytes, replica 0's copy. */
struct aux_scan {
	struct dtxn_fabric *f;
	uint8_t seen[256];   /* by area number */
	unsigned n;
};

static int
aux_scan_visit(const struct dtxn_table *t, const void *slot, void *arg)
{
	struct aux_scan *x = arg;
	uint32_t n = dtxn_store_slot_aux(slot);
	const uint8_t *aux = dtxn_store_aux_ptr(x->f, t, 0, slot);
	const char *heap = (char *)dtxn_fabric_mn_base(x->f, t->mn[0]) + t->aux_off[0];
	uint8_t v[16];

	assert_true(n >= 1 && n <= t->aux_areas && n < 256);
	assert_int_equal(x->seen[n], 0); /* no two rows share an area */
	x->seen[n] = 1;
	x->n++;
	/* area n: heap + header + (n - 1) areas, holding the format's bytes */
	assert_ptr_equal(aux, heap + DTXN_AUX_HEAP_HDR + (n - 1) * t->aux_size);
	memcpy(v, (const char *)slot + DTXN_SLOT_HDR_SIZE, sizeof(v));
	for (unsigned i = 0; i < sizeof(v); i++)
		assert_int_equal(aux[i], (uint8_t)~v[i]);
	return 0;
}

/*
 * Delta heaps (store.md "Delta heaps"): set per table, laid out after the
 * aux heap with as many areas, the same addressing, chunks and replica
 * mapping as an aux heap; a coordinator's chunk carves them locally;
 * memory accounting counts them empty until a census reads the bump word.
 */
static void
test_delta_heap(void **state)
{
	struct dtxn_store_mem m0, m1;
	struct dtxn_heap_chunk c;
	struct dtxn_catalog cat;
	struct dtxn_table_def d;
	const struct dtxn_table *t;
	struct dtxn_fabric *f;
	uint32_t first, end, n;
	uint64_t used = 40;

	(void)state;
	assert_int_equal(dtxn_catalog_init(&cat, 2, 2), 0);
	d = mkdef(0, "bars", 16, 100);
	d.n_buckets = 16; /* 128 slots: the delta heap keeps its 132 areas */
	assert_int_equal(dtxn_catalog_add_table_aux(&cat, &d, 32, 16), 0);
	assert_int_equal(dtxn_catalog_set_delta(&cat, 1, 48), -EINVAL); /* no table 1 */
	assert_int_equal(dtxn_catalog_set_delta(&cat, 0, 44), -EINVAL); /* not a multiple of 8 */
	assert_int_equal(dtxn_catalog_set_delta(&cat, 0, (1u << 24) + 8), -EINVAL);
	assert_int_equal(dtxn_catalog_set_delta(&cat, 0, 48), 0);
	cat.aux_chunk = 16;
	assert_int_equal(dtxn_catalog_layout(&cat, 2, 1024), 0);
	t = dtxn_catalog_table(&cat, 0);
	assert_int_equal(t->delta_size, 48);
	assert_int_equal(t->delta_areas, 100 + 2 * 16);
	assert_int_equal(t->aux_areas, 128); /* an aux heap: at most one per slot */
	for (uint16_t r = 0; r < 2; r++) {
		assert_int_equal(t->delta_off[r] % 64, 0);
		assert_true(t->delta_off[r] >= t->aux_off[r] + DTXN_AUX_HEAP_HDR + 128 * 16);
	}
	assert_true(cat.mn_used[t->mn[0]] >= t->delta_off[0] + DTXN_AUX_HEAP_HDR + 132 * 48);

	/* addresses, bump word, chunks and replicas: as the aux heap's */
	assert_int_equal(dtxn_store_heap_area_raddr(t, DTXN_HEAP_DELTA, 0, 0, 0), 0);
	assert_int_equal(dtxn_store_heap_area_raddr(t, DTXN_HEAP_DELTA, 0, 0, 133), 0);
	assert_int_equal(dtxn_store_heap_area_raddr(t, DTXN_HEAP_DELTA, 2, 0, 1), 0);
	assert_int_equal(dtxn_store_heap_area_raddr(t, DTXN_HEAP_DELTA, 0, 0, 2),
			 DTXN_RADDR(t->mn[0], t->delta_off[0] + DTXN_AUX_HEAP_HDR + 48));
	assert_int_equal(dtxn_store_replica_raddr(t, 1, dtxn_store_heap_area_raddr(t, DTXN_HEAP_DELTA, 0, 0, 9) + 8),
			 dtxn_store_heap_area_raddr(t, DTXN_HEAP_DELTA, 1, 0, 9) + 8);
	assert_int_equal(dtxn_store_heap_bump_raddr(t, DTXN_HEAP_DELTA, 0),
			 DTXN_RADDR(t->mn[0], t->delta_off[0]));
	assert_int_equal(dtxn_store_heap_chunk(t, DTXN_HEAP_DELTA, 120, 16, &first, &end), 0);
	assert_int_equal(first, 121);
	assert_int_equal(end, 133);
	assert_int_equal(dtxn_store_heap_chunk(t, DTXN_HEAP_DELTA, 132, 16, &first, &end), -ENOSPC);

	/* a coordinator's chunk: carved in order, given-back areas first;
	 * a second chunk while one is held goes to the free list */
	memset(&c, 0, sizeof(c));
	assert_false(dtxn_heap_chunk_take(&c, &n));
	dtxn_heap_chunk_refill(&c, 17, 20);
	assert_true(dtxn_heap_chunk_take(&c, &n));
	assert_int_equal(n, 17);
	dtxn_heap_chunk_put(&c, 17);
	assert_true(dtxn_heap_chunk_take(&c, &n));
	assert_int_equal(n, 17);
	dtxn_heap_chunk_refill(&c, 33, 34);
	assert_true(dtxn_heap_chunk_take(&c, &n));
	assert_int_equal(n, 33);
	assert_true(dtxn_heap_chunk_take(&c, &n));
	assert_int_equal(n, 18);
	assert_true(dtxn_heap_chunk_take(&c, &n));
	assert_int_equal(n, 19);
	assert_false(dtxn_heap_chunk_take(&c, &n));
	for (uint32_t i = 0; i < DTXN_HEAP_CHUNK_FREE + 2; i++)
		dtxn_heap_chunk_put(&c, i + 1);
	assert_int_equal(c.n_free, DTXN_HEAP_CHUNK_FREE);
	assert_int_equal(c.lost, 2);

	/* accounting: every delta area is empty until handed out */
	f = open_fabric("utst_dh", 2, cat.region_size);
	if (f == NULL)
		fail_msg("shm fabric: %s", rte_strerror(rte_errno));
	assert_int_equal(dtxn_catalog_mem(&cat, t->mn[0], &m0), 0);
	assert_true(m0.values >= 2 * DTXN_AUX_HEAP_HDR + 128 * 16 + 132 * 48);
	memcpy((char *)dtxn_fabric_mn_base(f, t->mn[0]) + t->delta_off[0], &used, 8);
	assert_int_equal(dtxn_store_heap_census(f, &cat), 1);
	assert_int_equal(t->delta_used, 40);
	assert_int_equal(dtxn_catalog_mem(&cat, t->mn[0], &m1), 0);
	assert_int_equal(m0.values, m1.values);
	assert_int_equal(m0.empty - m1.empty, 40 * 48);
	/* heap_free: the aux areas no slot names (none yet) and the delta
	 * areas not handed out */
	assert_int_equal(m1.heap_free, t->aux_areas * t->aux_size + (t->delta_areas - 40) * 48);
	assert_true(t->aux_census);
	assert_int_equal(t->aux_held, 0);
	{
		/* a row in the primary's first slot holds aux area 5 */
		struct dtxn_slot_hdr h = { .key = 9, .table_id = (uint16_t)t->def.id,
					   .flags = DTXN_SLOT_VALID, .aux = 5 };

		memcpy((char *)dtxn_fabric_mn_base(f, t->mn[0]) + t->off[0] + t->bucket_hdr_size,
		       &h, sizeof(h));
		assert_int_equal(dtxn_store_heap_census(f, &cat), 1);
		assert_int_equal(t->aux_held, 1);
		assert_int_equal(dtxn_catalog_mem(&cat, t->mn[0], &m0), 0);
		assert_int_equal(m1.heap_free - m0.heap_free, t->aux_size);
	}
	used = 1000; /* FAAs past the end count the heap's areas at most */
	memcpy((char *)dtxn_fabric_mn_base(f, t->mn[0]) + t->delta_off[0], &used, 8);
	assert_int_equal(dtxn_store_heap_census(f, &cat), 1);
	assert_int_equal(t->delta_used, 132);
	assert_int_equal(dtxn_store_heap_census(NULL, &cat), -EINVAL);
	dtxn_fabric_close(f);
}

/*
 * Aux heaps: sized by max_keys plus a chunk per coordinator (not by
 * slots), areas numbered from 1 at the same place on every replica,
 * chunks handed out by the bump word's old value, densely packed areas
 * at load (each slot header names its own), a full heap refusing the
 * next row with -ENOSPC and leaving the loaded ones intact.
 */
static void
test_aux_heap(void **state)
{
	struct dtxn_catalog cat;
	struct dtxn_table_def d;
	const struct dtxn_table *t;
	struct aux_fmt_arg fa;
	struct aux_scan x;
	struct dtxn_fabric *f;
	uint32_t first, end;
	uint64_t bump[2];
	uint8_t value[16];
	char *p0, *p1;

	(void)state;
	assert_int_equal(dtxn_catalog_init(&cat, 2, 2), 0);
	d = mkdef(0, "lazy", 16, 100);
	d.n_buckets = 64;       /* 512 slots */
	assert_int_equal(dtxn_catalog_add_table_aux(&cat, &d, 32, 16), 0);
	cat.aux_chunk = DTXN_AUX_CHUNK_MAX + 1;
	assert_int_equal(dtxn_catalog_layout(&cat, 2, 1024), -EINVAL);
	cat.aux_chunk = 16;
	assert_int_equal(dtxn_catalog_layout(&cat, 2, 1024), 0);
	t = dtxn_catalog_table(&cat, 0);
	assert_int_equal(t->aux_areas, 100 + 2 * 16);
	assert_int_equal(t->aux_off[0] % 64, 0);
	assert_true(t->aux_off[0] >= t->off[0] + t->n_buckets * t->bucket_size);

	/* addresses: area 1 after the header, the same place on each replica */
	assert_int_equal(dtxn_store_aux_area_raddr(t, 0, 0, 0), 0);
	assert_int_equal(dtxn_store_aux_area_raddr(t, 0, 0, 133), 0);
	assert_int_equal(dtxn_store_aux_area_raddr(t, 2, 0, 1), 0);
	assert_int_equal(dtxn_store_aux_area_raddr(t, 0, 0, 1),
			 DTXN_RADDR(t->mn[0], t->aux_off[0] + DTXN_AUX_HEAP_HDR));
	for (uint32_t n = 1; n <= 132; n += 131)
		assert_int_equal(DTXN_RADDR_OFF(dtxn_store_aux_area_raddr(t, 1, 0, n)) - t->aux_off[1],
				 DTXN_RADDR_OFF(dtxn_store_aux_area_raddr(t, 0, 0, n)) - t->aux_off[0]);
	assert_int_equal(dtxn_store_replica_raddr(t, 1, dtxn_store_aux_area_raddr(t, 0, 0, 7)),
			 dtxn_store_aux_area_raddr(t, 1, 0, 7));
	assert_int_equal(dtxn_store_aux_bump_raddr(t, 0), DTXN_RADDR(t->mn[0], t->aux_off[0]));

	/* chunks: a FAA's old value names them, cut at the heap's end */
	assert_int_equal(dtxn_store_aux_chunk(t, 0, 16, &first, &end), 0);
	assert_int_equal(first, 1);
	assert_int_equal(end, 17);
	assert_int_equal(dtxn_store_aux_chunk(t, 120, 16, &first, &end), 0);
	assert_int_equal(first, 121);
	assert_int_equal(end, 133);
	assert_int_equal(dtxn_store_aux_chunk(t, 132, 16, &first, &end), -ENOSPC);
	assert_int_equal(dtxn_store_aux_chunk(t, 500, 16, &first, &end), -ENOSPC);
	assert_int_equal(dtxn_store_aux_chunk(t, 0, 0, &first, &end), -EINVAL);
	assert_int_equal(dtxn_store_aux_chunk(dtxn_catalog_table(&cat, 1), 0, 1, &first, &end),
			 -EINVAL);

	/* load until the heap is full: 132 rows, areas 1..132 */
	f = open_fabric("utst_ah", 2, cat.region_size);
	if (f == NULL)
		fail_msg("shm fabric: %s", rte_strerror(rte_errno));
	fa.f = f;
	for (uint64_t k = 0; k < 132; k++) {
		make_value(k, value, sizeof(value));
		assert_int_equal(dtxn_store_load(f, t, k, value, test_fmt_aux, &fa), 0);
	}
	make_value(132, value, sizeof(value));
	assert_int_equal(dtxn_store_load(f, t, 132, value, test_fmt_aux, &fa), -ENOSPC);
	p0 = (char *)dtxn_fabric_mn_base(f, t->mn[0]);
	p1 = (char *)dtxn_fabric_mn_base(f, t->mn[1]);
	memcpy(&bump[0], p0 + t->aux_off[0], 8);
	memcpy(&bump[1], p1 + t->aux_off[1], 8);
	assert_int_equal(bump[0], 132);
	assert_int_equal(bump[1], 132);
	memset(&x, 0, sizeof(x));
	x.f = f;
	assert_int_equal(dtxn_store_scan(f, t, 0, aux_scan_visit, &x), 0);
	assert_int_equal(x.n, 132);
	for (unsigned n = 1; n <= 132; n++)
		assert_int_equal(x.seen[n], 1);
	/* the backup's heap is the same bytes */
	assert_memory_equal(p0 + t->aux_off[0], p1 + t->aux_off[1],
			    DTXN_AUX_HEAP_HDR + t->aux_areas * t->aux_size);
	dtxn_fabric_close(f);
}

/*
 * Bulk load (dtxn_catalog_defer_copies): every record goes to the first
 * replica only, the backup stays as the fabric zeroed it until
 * dtxn_store_copy_replicas(), which makes it byte-identical, buckets and
 * aux areas; and the loaded replica is the same bytes as a load that
 * writes every replica per record (displacements included).
 */
static void
test_load_deferred_copies(void **state)
{
	struct dtxn_catalog cat, ref_cat;
	struct dtxn_table_def d;
	struct dtxn_table *t;
	struct dtxn_fabric *f, *g;
	uint64_t n, n_ref, tb, ab;
	char *p0, *p1;

	(void)state;
	assert_int_equal(dtxn_catalog_init(&cat, 2, 2), 0);
	d = mkdef(0, "bulk", 16, 256 * 8);
	d.n_buckets = 256;
	assert_int_equal(dtxn_catalog_add_table_aux(&cat, &d, 32, 16), 0);
	assert_int_equal(dtxn_catalog_layout(&cat, 0, 0), 0);
	ref_cat = cat;
	t = &cat.tables[0];
	tb = t->n_buckets * t->bucket_size;
	ab = DTXN_AUX_HEAP_HDR + t->aux_areas * t->aux_size;
	f = open_fabric("utst_bk", 2, cat.region_size);
	g = open_fabric("utst_bl", 2, cat.region_size);
	if (f == NULL || g == NULL)
		fail_msg("shm fabric: %s", rte_strerror(rte_errno));
	assert_int_equal(dtxn_catalog_defer_copies(NULL, true), -EINVAL);
	assert_int_equal(dtxn_store_copy_replicas(NULL, t), -EINVAL);
	assert_int_equal(dtxn_catalog_defer_copies(&cat, true), 0);
	assert_true(t->copies_deferred);
	n = fill_aux_table(f, &cat);
	n_ref = fill_aux_table(g, &ref_cat);
	assert_int_equal(n, n_ref);
	assert_true(n * 100 >= t->n_buckets * t->def.slots_per_bucket * 80);
	p0 = dtxn_fabric_mn_base(f, t->mn[0]);
	p1 = dtxn_fabric_mn_base(f, t->mn[1]);
	/* the backup was not written */
	for (uint64_t i = 0; i < tb; i++)
		if (p1[t->off[1] + i] != 0)
			fail_msg("backup byte %" PRIu64 " written before the copy", i);
	/* the loaded replica is what a per-record load writes */
	assert_memory_equal(p0 + t->off[0], (char *)dtxn_fabric_mn_base(g, t->mn[0]) + t->off[0],
			    tb);
	assert_memory_equal(p0 + t->aux_off[0],
			    (char *)dtxn_fabric_mn_base(g, t->mn[0]) + t->aux_off[0], ab);
	assert_int_equal(dtxn_store_copy_replicas(f, t), 0);
	assert_false(t->copies_deferred);
	assert_memory_equal(p0 + t->off[0], p1 + t->off[1], tb);
	assert_memory_equal(p0 + t->aux_off[0], p1 + t->aux_off[1], ab);
	/* and the backup equals the per-record load's backup */
	assert_memory_equal(p1 + t->off[1], (char *)dtxn_fabric_mn_base(g, t->mn[1]) + t->off[1],
			    tb);
	assert_int_equal(dtxn_store_copy_replicas(f, t), 0); /* nothing deferred: no-op */
	dtxn_fabric_close(g);
	dtxn_fabric_close(f);
}

/* ------------------------------------------------------------------ */
/* --placement key (store.md "Placement")                             */
/* ------------------------------------------------------------------ */

/*
 * DTXN_PLACEMENT_KEY: the option's names, set before any table only;
 * stripes of ceil(n_buckets / n_mn) buckets, stripe s of table id on MN
 * (id + s + r) % n_mn for replica r, at the same offsets on every MN;
 * every bucket's address, the replica mapping, the bucket of a slot and
 * slot_ok across stripes (the last one short); the stripes of all tables
 * and roles disjoint on each MN; heap areas and bump words per stripe.
 */
static void
test_placement_key_layout(void **state)
{
	struct dtxn_catalog cat;
	struct dtxn_table_def d;
	const struct dtxn_table *t;
	enum dtxn_placement p;

	(void)state;
	assert_int_equal(dtxn_placement_parse("key", &p), 0);
	assert_int_equal(p, DTXN_PLACEMENT_KEY);
	assert_int_equal(dtxn_placement_parse("table", &p), 0);
	assert_int_equal(p, DTXN_PLACEMENT_TABLE);
	assert_int_equal(dtxn_placement_parse("keys", &p), -EINVAL);
	assert_int_equal(dtxn_placement_parse(NULL, &p), -EINVAL);
	assert_string_equal(dtxn_placement_name(DTXN_PLACEMENT_KEY), "key");
	assert_null(dtxn_placement_name((enum dtxn_placement)7));

	assert_int_equal(dtxn_catalog_init(&cat, 3, 3), 0);
	assert_int_equal(cat.placement, DTXN_PLACEMENT_TABLE);
	assert_int_equal(dtxn_catalog_set_placement(NULL, DTXN_PLACEMENT_KEY), -EINVAL);
	assert_int_equal(dtxn_catalog_set_placement(&cat, (enum dtxn_placement)7), -EINVAL);
	assert_int_equal(dtxn_catalog_set_placement(&cat, DTXN_PLACEMENT_KEY), 0);
	d = mkdef(1, "ten", 16, 60);
	d.n_buckets = 10; /* stripes of 4, 4 and 2 buckets */
	assert_int_equal(dtxn_catalog_add_table_aux(&cat, &d, 32, 16), 0);
	assert_int_equal(dtxn_catalog_set_delta(&cat, 1, 24), 0);
	d = mkdef(2, "one", 8, 4);
	d.n_buckets = 1;  /* stripes of 1 bucket, two of them empty */
	assert_int_equal(dtxn_catalog_add_table(&cat, &d, 24), 0);
	assert_int_equal(dtxn_catalog_set_placement(&cat, DTXN_PLACEMENT_TABLE), -EBUSY);
	cat.aux_chunk = 4;
	assert_int_equal(dtxn_catalog_layout(&cat, 2, 1024), 0);

	t = dtxn_catalog_table(&cat, 1);
	assert_int_equal(t->n_stripes, 3);
	assert_int_equal(t->stripe_buckets, 4);
	/* a stripe's heaps: its slots (4 x 8) cap the aux heap, they and
	 * max_keys the delta heap's rows, plus the coordinators' chunks */
	assert_int_equal(t->aux_areas, 32);
	assert_int_equal(t->delta_areas, 32 + 2 * 4);
	for (uint64_t b = 0; b < 12; b++) {
		dtxn_raddr_t prim = dtxn_store_bucket_raddr(t, 0, b);

		for (uint16_t r = 0; r < 3; r++) {
			dtxn_raddr_t br = dtxn_store_bucket_raddr(t, r, b);
			dtxn_raddr_t s = dtxn_store_slot_raddr(t, prim, 7);

			assert_int_equal(DTXN_RADDR_MN(br), (1 + (b % 10) / 4 + r) % 3);
			assert_int_equal(DTXN_RADDR_OFF(br), t->off[r] + (b % 10 % 4) * t->bucket_size);
			assert_int_equal(dtxn_store_replica_raddr(t, r, prim), br);
			assert_int_equal(dtxn_store_row_mn(t, r, s), DTXN_RADDR_MN(br));
			assert_int_equal(dtxn_store_replica_raddr(t, r, s),
					 dtxn_store_slot_raddr(t, br, 7));
			/* the row's heap areas: on its stripe's replica-r MN */
			assert_int_equal(dtxn_store_aux_area_raddr(t, r, s, 3),
					 DTXN_RADDR(DTXN_RADDR_MN(br), t->aux_off[r] + DTXN_AUX_HEAP_HDR +
								     2 * 16));
			assert_int_equal(dtxn_store_replica_raddr(t, r, dtxn_store_aux_area_raddr(t, 0, s, 3)),
					 dtxn_store_aux_area_raddr(t, r, s, 3));
			assert_int_equal(dtxn_store_replica_raddr(t, r, dtxn_store_heap_area_raddr(
									     t, DTXN_HEAP_DELTA, 0, s, 40)),
					 dtxn_store_heap_area_raddr(t, DTXN_HEAP_DELTA, r, s, 40));
		}
		assert_int_equal(dtxn_store_stripe_of(t, prim), (int)((b % 10) / 4));
		assert_int_equal(dtxn_store_aux_bump_raddr(t, prim),
				 DTXN_RADDR(DTXN_RADDR_MN(prim), t->aux_off[0]));
		assert_int_equal(dtxn_store_heap_bump_raddr(t, DTXN_HEAP_DELTA, prim),
				 DTXN_RADDR(DTXN_RADDR_MN(prim), t->delta_off[0]));
		assert_true(dtxn_store_slot_ok(t, dtxn_store_slot_raddr(t, prim, 0)));
		assert_false(dtxn_store_slot_ok(t, prim)); /* a bucket header, not a slot */
		assert_int_equal(dtxn_store_bucket_of_slot(t, dtxn_store_slot_raddr(t, prim, 5)), prim);
	}
	/* the last stripe has 2 buckets: its 3rd and 4th hold no slot */
	assert_false(dtxn_store_slot_ok(t, DTXN_RADDR((1 + 2) % 3, t->off[0] + 2 * t->bucket_size +
							      t->bucket_hdr_size)));
	assert_false(dtxn_store_slot_ok(t, DTXN_RADDR(3, t->off[0] + t->bucket_hdr_size)));
	assert_int_equal(dtxn_store_stripe_of(t, DTXN_RADDR(3, t->off[0])), -EINVAL);
	assert_int_equal(dtxn_store_replica_raddr(t, 1, DTXN_RADDR(0, t->off[0] - 8)), 0);
	assert_int_equal(dtxn_store_aux_area_raddr(t, 0, DTXN_RADDR(5, 0), 1), 0);
	assert_int_equal(dtxn_store_row_mn(t, 3, dtxn_store_bucket_raddr(t, 0, 0)), UINT16_MAX);

	t = dtxn_catalog_table(&cat, 2);
	assert_int_equal(t->n_stripes, 3);
	assert_int_equal(t->stripe_buckets, 1);
	assert_int_equal(dtxn_store_bucket_raddr(t, 0, 1), dtxn_store_bucket_raddr(t, 0, 0));
	assert_int_equal(DTXN_RADDR_MN(dtxn_store_bucket_raddr(t, 1, 0)), 0);
	assert_false(dtxn_store_slot_ok(t, DTXN_RADDR(0, t->off[0] + t->bucket_hdr_size)));

	/* every MN: each table's stripes (one per role) and heaps apart, below mn_used */
	for (uint16_t m = 0; m < 3; m++) {
		uint64_t lo[16], hi[16];
		unsigned n = 0;

		for (uint32_t id = 1; id <= 2; id++) {
			t = dtxn_catalog_table(&cat, id);
			for (uint16_t r = 0; r < 3; r++) {
				lo[n] = t->off[r];
				hi[n++] = t->off[r] + t->stripe_buckets * t->bucket_size;
				if (t->aux_size != 0) {
					lo[n] = t->aux_off[r];
					hi[n++] = t->aux_off[r] + DTXN_AUX_HEAP_HDR + t->aux_areas * t->aux_size;
				}
				if (t->delta_size != 0) {
					lo[n] = t->delta_off[r];
					hi[n++] = t->delta_off[r] + DTXN_AUX_HEAP_HDR +
						  t->delta_areas * t->delta_size;
				}
			}
		}
		for (unsigned i = 0; i < n; i++) {
			assert_true(lo[i] >= DTXN_STORE_RSVD_BYTES);
			assert_true(hi[i] <= cat.mn_used[m]);
			for (unsigned j = i + 1; j < n; j++)
				assert_true(hi[i] <= lo[j] || hi[j] <= lo[i]);
		}
		assert_true(cat.log_off >= cat.mn_used[m]);
	}

	/* one MN: the same layout as DTXN_PLACEMENT_TABLE */
	{
		struct dtxn_catalog a, b;

		assert_int_equal(dtxn_catalog_init(&a, 1, 1), 0);
		assert_int_equal(dtxn_catalog_init(&b, 1, 1), 0);
		assert_int_equal(dtxn_catalog_set_placement(&b, DTXN_PLACEMENT_KEY), 0);
		d = mkdef(0, "solo", 16, 100);
		assert_int_equal(dtxn_catalog_add_table_aux(&a, &d, 32, 16), 0);
		assert_int_equal(dtxn_catalog_add_table_aux(&b, &d, 32, 16), 0);
		assert_int_equal(dtxn_catalog_layout(&a, 2, 1024), 0);
		assert_int_equal(dtxn_catalog_layout(&b, 2, 1024), 0);
		assert_int_equal(a.region_size, b.region_size);
		assert_int_equal(a.tables[0].off[0], b.tables[0].off[0]);
		assert_int_equal(a.tables[0].aux_off[0], b.tables[0].aux_off[0]);
		assert_int_equal(b.tables[0].n_stripes, 1);
	}
}

/* Scan visitor of test_placement_key_load: each row once, its aux area the format's bytes. */
struct key_scan {
	struct dtxn_fabric *f;
	uint16_t r;
	uint64_t n;
	uint8_t *seen;
};

static int
key_scan_visit(const struct dtxn_table *t, const void *slot, void *arg)
{
	struct key_scan *x = arg;
	struct dtxn_slot_hdr h;
	const uint8_t *aux = dtxn_store_aux_ptr(x->f, t, x->r, slot);

	memcpy(&h, slot, sizeof(h));
	assert_non_null(aux);
	assert_int_equal(x->seen[h.key], 0);
	x->seen[h.key] = 1;
	x->n++;
	for (unsigned i = 0; i < t->def.value_size; i++)
		assert_int_equal(aux[i], (uint8_t)~((const uint8_t *)slot)[DTXN_SLOT_HDR_SIZE + i]);
	return 0;
}

/*
 * Loading a key-placed table with aux areas to its first -ENOSPC (records
 * displaced, some across stripes, which moves their areas): every key is
 * found from its home bucket on every replica, on the MNs its stripe
 * names; its area, addressed from its slot, holds its bytes; each
 * stripe's bump word counts the areas its slots took; the scan visits
 * every key once; the rows spread over every MN; a deferred load copied
 * afterwards is the same bytes; the census counts every area.
 */
static void
test_placement_key_load(void **state)
{
	struct dtxn_catalog cat, ref_cat;
	struct dtxn_table_def d;
	struct dtxn_table *t;
	struct dtxn_fabric *f, *g;
	uint64_t n, per_mn[3] = { 0 }, areas = 0;
	uint8_t value[16], slot[64], area[16];
	struct key_scan x;

	(void)state;
	assert_int_equal(dtxn_catalog_init(&cat, 3, 3), 0);
	assert_int_equal(dtxn_catalog_set_placement(&cat, DTXN_PLACEMENT_KEY), 0);
	d = mkdef(0, "keyed", 16, 100 * 8);
	d.n_buckets = 100; /* stripes of 34, 34 and 32 */
	assert_int_equal(dtxn_catalog_add_table_aux(&cat, &d, 32, 16), 0);
	assert_int_equal(dtxn_catalog_layout(&cat, 0, 0), 0);
	ref_cat = cat;
	t = &cat.tables[0];
	f = open_fabric("utst_pk", 3, cat.region_size);
	g = open_fabric("utst_pl", 3, cat.region_size);
	if (f == NULL || g == NULL)
		fail_msg("shm fabric: %s", rte_strerror(rte_errno));
	assert_int_equal(dtxn_catalog_defer_copies(&cat, true), 0);
	n = fill_aux_table(f, &cat);
	assert_int_equal(fill_aux_table(g, &ref_cat), n);
	assert_true(n * 100 >= t->n_buckets * t->def.slots_per_bucket * 80);
	/* the deferred load wrote one replica: copy, then it is the per-record load's bytes */
	assert_int_equal(dtxn_store_copy_replicas(f, t), 0);
	for (uint16_t m = 0; m < 3; m++)
		assert_memory_equal(dtxn_fabric_mn_base(f, m), dtxn_fabric_mn_base(g, m),
				    cat.mn_used[m]);

	for (uint64_t k = 0; k < n; k++) {
		dtxn_raddr_t sa0 = 0;

		make_value(k, value, sizeof(value));
		for (uint16_t r = 0; r < 3; r++) {
			dtxn_raddr_t sr = 0, ar;
			uint32_t aux;

			assert_true(remote_lookup(f, t, r, k, &sr, slot) >= 1);
			assert_memory_equal(slot + DTXN_SLOT_HDR_SIZE, value, sizeof(value));
			if (r == 0) {
				sa0 = sr;
				per_mn[DTXN_RADDR_MN(sr)]++;
			} else {
				assert_int_equal(dtxn_store_replica_raddr(t, r, sa0), sr);
			}
			assert_int_equal(DTXN_RADDR_MN(sr), dtxn_store_row_mn(t, r, sa0));
			aux = dtxn_store_slot_aux(slot);
			ar = dtxn_store_aux_area_raddr(t, r, sa0, aux);
			assert_int_not_equal(ar, 0);
			assert_int_equal(DTXN_RADDR_MN(ar), DTXN_RADDR_MN(sr));
			memcpy(area, (char *)dtxn_fabric_mn_base(f, DTXN_RADDR_MN(ar)) + DTXN_RADDR_OFF(ar),
			       sizeof(area));
			for (unsigned i = 0; i < sizeof(area); i++)
				assert_int_equal(area[i], (uint8_t)~value[i]);
		}
	}
	for (uint16_t m = 0; m < 3; m++) {
		uint64_t bump;

		assert_true(per_mn[m] * 4 >= n); /* each MN is primary of about a third */
		memcpy(&bump, (char *)dtxn_fabric_mn_base(f, m) + t->aux_off[0], 8);
		assert_true(bump >= per_mn[m]); /* a row moved across stripes left an area behind */
		assert_true(bump <= t->aux_areas);
		areas += bump;
	}
	assert_true(areas >= n);
	for (uint16_t r = 0; r < 3; r++) {
		memset(&x, 0, sizeof(x));
		x.f = f;
		x.r = r;
		x.seen = calloc(n, 1);
		assert_non_null(x.seen);
		assert_int_equal(dtxn_store_scan(f, t, r, key_scan_visit, &x), 0);
		assert_int_equal(x.n, n);
		free(x.seen);
	}
	assert_int_equal(dtxn_store_heap_census(f, &cat), 0); /* no delta heap */
	assert_true(t->aux_census);
	assert_int_equal(t->aux_held, n);
	dtxn_fabric_close(g);
	dtxn_fabric_close(f);
}

static void
test_load_speed(void **state)
{
	struct dtxn_catalog cat;
	struct dtxn_table_def d;
	const struct dtxn_table *t;
	struct dtxn_fabric *f;
	struct fmt_arg fa = { 0 };
	const uint64_t n = 1000000;
	uint64_t t0, ns;
	uint8_t value[8];

	(void)state;
	assert_int_equal(dtxn_catalog_init(&cat, 1, 1), 0);
	d = mkdef(0, "speed", 8, n);
	assert_int_equal(dtxn_catalog_add_table(&cat, &d, 24), 0);
	assert_int_equal(dtxn_catalog_layout(&cat, 0, 0), 0);
	t = dtxn_catalog_table(&cat, 0);
	f = open_fabric("utst_d", 1, cat.region_size);
	if (f == NULL)
		fail_msg("shm fabric: %s", rte_strerror(rte_errno));
	t0 = dtxn_now_ns();
	for (uint64_t i = 0; i < n; i++) {
		uint64_t key = dtxn_key_make(i, i & 7);

		memcpy(value, &key, sizeof(value));
		assert_int_equal(dtxn_store_load(f, t, key, value, test_fmt, &fa), 0);
	}
	ns = dtxn_now_ns() - t0;
	print_message("load: %" PRIu64 " records in %.3f s (%.2f Mrec/s)\n", n, ns / 1e9,
		      n / (ns / 1e3));
	assert_true(ns < UINT64_C(10) * 1000 * 1000 * 1000);
	/* At 75% load some windows fill up: every key must still be reachable. */
	for (uint64_t i = 0; i < n; i++) {
		dtxn_raddr_t sr;

		assert_true(remote_lookup(f, t, 0, dtxn_key_make(i, i & 7), &sr, NULL) >= 1);
	}
	dtxn_fabric_close(f);
}

/* ------------------------------------------------------------------ */
/* address cache                                                      */
/* ------------------------------------------------------------------ */

static void
test_addr_cache(void **state)
{
	struct dtxn_addr_cache *c, *c2;
	unsigned hits = 0;

	(void)state;
	assert_null(dtxn_addr_cache_create(NULL, 64, SOCKET_ID_ANY));
	assert_int_equal(rte_errno, EINVAL);
	assert_null(dtxn_addr_cache_create("", 64, SOCKET_ID_ANY));
	assert_int_equal(rte_errno, EINVAL);
	assert_null(dtxn_addr_cache_create("a_name_longer_than_24_chr", 64, SOCKET_ID_ANY));
	assert_int_equal(rte_errno, EINVAL);
	assert_null(dtxn_addr_cache_create("ac0", 0, SOCKET_ID_ANY));
	assert_int_equal(rte_errno, EINVAL);

	c = dtxn_addr_cache_create("ac0", 4096, SOCKET_ID_ANY);
	assert_non_null(c);

	assert_int_equal(dtxn_addr_cache_lookup(c, 1, 100), 0);
	dtxn_addr_cache_insert(c, 1, 100, DTXN_RADDR(2, 4160));
	dtxn_addr_cache_insert(c, 2, 100, DTXN_RADDR(0, 64));
	assert_int_equal(dtxn_addr_cache_lookup(c, 1, 100), DTXN_RADDR(2, 4160));
	assert_int_equal(dtxn_addr_cache_lookup(c, 2, 100), DTXN_RADDR(0, 64));
	assert_int_equal(dtxn_addr_cache_lookup(c, 1, 101), 0);
	dtxn_addr_cache_insert(c, 1, 100, DTXN_RADDR(1, 128));            /* replace */
	assert_int_equal(dtxn_addr_cache_lookup(c, 1, 100), DTXN_RADDR(1, 128));
	dtxn_addr_cache_invalidate(c, 1, 100);
	assert_int_equal(dtxn_addr_cache_lookup(c, 1, 100), 0);
	assert_int_equal(dtxn_addr_cache_lookup(c, 2, 100), DTXN_RADDR(0, 64));
	dtxn_addr_cache_invalidate(c, 1, 100);                             /* absent: no-op */
	dtxn_addr_cache_insert(c, 3, 1, 0);                                /* 0 not cached */
	assert_int_equal(dtxn_addr_cache_lookup(c, 3, 1), 0);

	/* Many keys with 48-bit offsets and high MN ids round-trip. */
	for (uint64_t k = 0; k < 2000; k++)
		dtxn_addr_cache_insert(c, 5, k * 4099, DTXN_RADDR(k % 63, DTXN_RADDR_OFF_MASK - k));
	for (uint64_t k = 0; k < 2000; k++)
		assert_int_equal(dtxn_addr_cache_lookup(c, 5, k * 4099),
				 DTXN_RADDR(k % 63, DTXN_RADDR_OFF_MASK - k));

	/* Full: inserts are dropped silently, nothing breaks. */
	c2 = dtxn_addr_cache_create("ac_small", 64, SOCKET_ID_ANY);
	assert_non_null(c2);
	for (uint64_t k = 1; k <= 1000; k++)
		dtxn_addr_cache_insert(c2, 0, k, DTXN_RADDR(0, k * 64));
	for (uint64_t k = 1; k <= 1000; k++) {
		dtxn_raddr_t a = dtxn_addr_cache_lookup(c2, 0, k);

		if (a != 0) {
			assert_int_equal(a, DTXN_RADDR(0, k * 64));
			hits++;
		}
	}
	print_message("addr cache: %u of 1000 kept with capacity 64\n", hits);
	assert_int_equal(hits, 64); /* the first 64: no probe fails below half full */
	/* After an invalidate there is room again. */
	for (uint64_t k = 1; k <= 1000; k++)
		dtxn_addr_cache_invalidate(c2, 0, k);
	dtxn_addr_cache_insert(c2, 0, 5000, DTXN_RADDR(1, 64));
	assert_int_equal(dtxn_addr_cache_lookup(c2, 0, 5000), DTXN_RADDR(1, 64));

	dtxn_addr_cache_destroy(c2);
	dtxn_addr_cache_destroy(c);
	dtxn_addr_cache_destroy(NULL);
	assert_int_equal(dtxn_addr_cache_lookup(NULL, 0, 0), 0);
	/* Out of range: never cached, never found. */
	c = dtxn_addr_cache_create("ac0", 16, SOCKET_ID_ANY);
	assert_non_null(c);
	dtxn_addr_cache_insert(c, DTXN_MAX_TABLES, 1, DTXN_RADDR(0, 64));
	assert_int_equal(dtxn_addr_cache_lookup(c, DTXN_MAX_TABLES, 1), 0);
	dtxn_addr_cache_insert(c, 0, 1, DTXN_RADDR(DTXN_MAX_NODES, 64));
	assert_int_equal(dtxn_addr_cache_lookup(c, 0, 1), 0);
	dtxn_addr_cache_destroy(c);
}

/*
 * The address cache's deletes (open addressing, backward shift): a cache
 * filled to its capacity in long probe runs, keys invalidated in a random
 * order, checked against a reference after every step: what is left is
 * found, what was removed is not, and freed room is reused.
 */
static void
test_addr_cache_churn(void **state)
{
	enum { CAP = 512, KEYS = 4 * CAP };
	static dtxn_raddr_t ref[KEYS];
	struct dtxn_addr_cache *c = dtxn_addr_cache_create("ac_churn", CAP, SOCKET_ID_ANY);
	uint64_t x = 88172645463325252ull;
	unsigned in = 0;

	(void)state;
	assert_non_null(c);
	memset(ref, 0, sizeof(ref));
	for (unsigned step = 0; step < 40000; step++) {
		unsigned k;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		k = (unsigned)(x % KEYS);
		if (ref[k] != 0 && (x >> 40) % 3 == 0) {
			dtxn_addr_cache_invalidate(c, k % 3, k);
			ref[k] = 0;
			in--;
		} else if (in < CAP || ref[k] != 0) {
			dtxn_raddr_t a = DTXN_RADDR(k % 7, 64 * (uint64_t)(step + 1));

			dtxn_addr_cache_insert(c, k % 3, k, a);
			in += ref[k] == 0;
			ref[k] = a;
		}
		if (step % 997 == 0 || step > 39000)
			for (unsigned j = 0; j < KEYS; j++)
				assert_int_equal(dtxn_addr_cache_lookup(c, j % 3, j), ref[j]);
	}
	dtxn_addr_cache_destroy(c);
}

/* The raddr test_addr_cache_overlay's base holds for key k. */
#define OV_BASE_RADDR(k) DTXN_RADDR(1, 64 * ((uint64_t)(k) + 1))

/*
 * Overlays over a shared base (--addr-prewarm): a base hit, an insert
 * that shadows the base, an invalidation that hides a base entry (and a
 * later insert that shows it again), new keys past the first table (it
 * grows), the unbounded overlay's capacity on the keys it shows, a
 * bounded overlay that evicts, and the base never written.
 */
static void
test_addr_cache_overlay(void **state)
{
	enum { BASE = 1000 };
	struct dtxn_addr_cache *base = dtxn_addr_cache_create("ov_base", BASE, SOCKET_ID_ANY);
	struct dtxn_addr_cache *ov, *capped, *small;
	unsigned shown = 0;

	(void)state;
	assert_non_null(base);
	for (uint64_t k = 0; k < BASE; k++)
		dtxn_addr_cache_insert(base, 1, k, OV_BASE_RADDR(k));
	assert_null(dtxn_addr_cache_overlay_create("ov", 0, true, SOCKET_ID_ANY));
	ov = dtxn_addr_cache_overlay_create("ov", 20000, true, SOCKET_ID_ANY);
	assert_non_null(ov);
	/* no base yet: its own entries only */
	assert_int_equal(dtxn_addr_cache_lookup(ov, 1, 3), 0);
	assert_int_equal(dtxn_addr_cache_set_base(base, base), -EINVAL);  /* not an overlay */
	assert_int_equal(dtxn_addr_cache_set_base(ov, NULL), -EINVAL);
	assert_int_equal(dtxn_addr_cache_set_base(ov, base), 0);
	assert_int_equal(dtxn_addr_cache_set_base(base, ov), -EINVAL);
	/* base hit */
	assert_int_equal(dtxn_addr_cache_count(ov), BASE);
	for (uint64_t k = 0; k < BASE; k++)
		assert_int_equal(dtxn_addr_cache_lookup(ov, 1, k), OV_BASE_RADDR(k));
	assert_int_equal(dtxn_addr_cache_lookup(ov, 2, 5), 0);  /* other table */
	/* an insert shadows the base */
	dtxn_addr_cache_insert(ov, 1, 5, DTXN_RADDR(2, 4096));
	assert_int_equal(dtxn_addr_cache_lookup(ov, 1, 5), DTXN_RADDR(2, 4096));
	assert_int_equal(dtxn_addr_cache_count(ov), BASE);
	/* an invalidation hides a base entry (a tombstone) */
	dtxn_addr_cache_invalidate(ov, 1, 7);
	assert_int_equal(dtxn_addr_cache_lookup(ov, 1, 7), 0);
	assert_int_equal(dtxn_addr_cache_count(ov), BASE - 1);
	dtxn_addr_cache_invalidate(ov, 1, 7);                   /* twice: no change */
	assert_int_equal(dtxn_addr_cache_count(ov), BASE - 1);
	/* ... and an override's invalidation too */
	dtxn_addr_cache_invalidate(ov, 1, 5);
	assert_int_equal(dtxn_addr_cache_lookup(ov, 1, 5), 0);
	assert_int_equal(dtxn_addr_cache_count(ov), BASE - 2);
	/* the key found again: shows the new address, then the base's */
	dtxn_addr_cache_insert(ov, 1, 7, DTXN_RADDR(3, 64));
	assert_int_equal(dtxn_addr_cache_lookup(ov, 1, 7), DTXN_RADDR(3, 64));
	dtxn_addr_cache_insert(ov, 1, 5, OV_BASE_RADDR(5));
	assert_int_equal(dtxn_addr_cache_lookup(ov, 1, 5), OV_BASE_RADDR(5));
	assert_int_equal(dtxn_addr_cache_count(ov), BASE);
	/* the base was never written */
	for (uint64_t k = 0; k < BASE; k++)
		assert_int_equal(dtxn_addr_cache_lookup(base, 1, k), OV_BASE_RADDR(k));
	assert_int_equal(dtxn_addr_cache_count(base), BASE);
	/* new keys, past the first table of 4 Ki entries: it grows */
	for (uint64_t k = BASE; k < BASE + 10000; k++)
		dtxn_addr_cache_insert(ov, 1, k, DTXN_RADDR(4, 64 * k));
	for (uint64_t k = BASE; k < BASE + 10000; k++)
		assert_int_equal(dtxn_addr_cache_lookup(ov, 1, k), DTXN_RADDR(4, 64 * k));
	assert_int_equal(dtxn_addr_cache_count(ov), BASE + 10000);
	dtxn_addr_cache_invalidate(ov, 1, BASE);                /* a new key: gone */
	assert_int_equal(dtxn_addr_cache_lookup(ov, 1, BASE), 0);
	assert_int_equal(dtxn_addr_cache_count(ov), BASE + 9999);
	assert_int_equal(dtxn_addr_cache_lookup(ov, 1, 7), DTXN_RADDR(3, 64));

	/* unbounded: the keys it shows stop at its capacity, as a plain cache's */
	capped = dtxn_addr_cache_overlay_create("ov_capped", BASE + 5, true, SOCKET_ID_ANY);
	assert_non_null(capped);
	assert_int_equal(dtxn_addr_cache_set_base(capped, base), 0);
	for (uint64_t k = BASE; k < BASE + 10; k++)
		dtxn_addr_cache_insert(capped, 1, k, DTXN_RADDR(4, 64 * k));
	assert_int_equal(dtxn_addr_cache_count(capped), BASE + 5);
	assert_int_equal(dtxn_addr_cache_lookup(capped, 1, BASE + 4), DTXN_RADDR(4, 64 * (BASE + 4)));
	assert_int_equal(dtxn_addr_cache_lookup(capped, 1, BASE + 5), 0);
	dtxn_addr_cache_invalidate(capped, 1, 0);               /* room again */
	dtxn_addr_cache_insert(capped, 1, BASE + 5, DTXN_RADDR(4, 64));
	assert_int_equal(dtxn_addr_cache_lookup(capped, 1, BASE + 5), DTXN_RADDR(4, 64));

	/* bounded: at most 8 entries of its own; a change when full evicts one */
	small = dtxn_addr_cache_overlay_create("ov_small", 8, false, SOCKET_ID_ANY);
	assert_non_null(small);
	assert_int_equal(dtxn_addr_cache_set_base(small, base), 0);
	for (uint64_t k = 0; k < 100; k++) {
		dtxn_addr_cache_invalidate(small, 1, k);
		/* the key just changed is always hidden */
		assert_int_equal(dtxn_addr_cache_lookup(small, 1, k), 0);
	}
	for (uint64_t k = 0; k < 100; k++) {
		dtxn_raddr_t a = dtxn_addr_cache_lookup(small, 1, k);

		/* hidden, or shows the base again once its tombstone was evicted */
		assert_true(a == 0 || a == OV_BASE_RADDR(k));
		shown += a != 0;
	}
	assert_int_equal(shown, 100 - 8);                       /* 8 tombstones kept */
	assert_int_equal(dtxn_addr_cache_count(small), BASE - 8);
	for (uint64_t k = BASE; k < BASE + 100; k++) {
		dtxn_addr_cache_insert(small, 1, k, DTXN_RADDR(5, 64 * k));
		assert_int_equal(dtxn_addr_cache_lookup(small, 1, k), DTXN_RADDR(5, 64 * k));
	}
	assert_int_equal(dtxn_addr_cache_count(small), BASE + 8); /* 8 new keys kept */
	for (uint64_t k = 100; k < BASE; k++)                   /* untouched: the base's */
		assert_int_equal(dtxn_addr_cache_lookup(small, 1, k), OV_BASE_RADDR(k));
	dtxn_addr_cache_destroy(small);
	dtxn_addr_cache_destroy(capped);
	dtxn_addr_cache_destroy(ov);
	dtxn_addr_cache_destroy(base);
}

/*
 * An unbounded overlay answers as the full copy it replaces: random
 * inserts and invalidations (of base keys, new keys, up to the capacity)
 * applied to a plain cache holding the base's entries and to an overlay
 * over the base, of the same capacity; every lookup and count agree.
 */
static void
test_addr_cache_overlay_as_copy(void **state)
{
	enum { BASE = 600, CAP = 1024, KEYS = 3 * CAP };
	struct dtxn_addr_cache *base = dtxn_addr_cache_create("oc_base", CAP, SOCKET_ID_ANY);
	struct dtxn_addr_cache *full = dtxn_addr_cache_create("oc_full", CAP, SOCKET_ID_ANY);
	struct dtxn_addr_cache *ov = dtxn_addr_cache_overlay_create("oc_ov", CAP, true, SOCKET_ID_ANY);
	uint64_t x = 0x9e3779b97f4a7c15ull;

	(void)state;
	assert_non_null(base);
	assert_non_null(full);
	assert_non_null(ov);
	for (uint64_t k = 0; k < BASE; k++) {
		dtxn_addr_cache_insert(base, k % 3, k, DTXN_RADDR(1, 64 * (k + 1)));
		dtxn_addr_cache_insert(full, k % 3, k, DTXN_RADDR(1, 64 * (k + 1)));
	}
	assert_int_equal(dtxn_addr_cache_set_base(ov, base), 0);
	for (unsigned step = 0; step < 30000; step++) {
		unsigned k;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		k = (unsigned)(x % KEYS);
		if ((x >> 40) % 3 == 0) {
			dtxn_addr_cache_invalidate(full, k % 3, k);
			dtxn_addr_cache_invalidate(ov, k % 3, k);
		} else {
			/* a base key's own address half the time: the overlay drops its entry */
			dtxn_raddr_t a = (x >> 50) % 2 == 0 ? DTXN_RADDR(1, 64 * ((uint64_t)k + 1)) :
							      DTXN_RADDR(k % 7, 64 * (uint64_t)(step + 1));

			dtxn_addr_cache_insert(full, k % 3, k, a);
			dtxn_addr_cache_insert(ov, k % 3, k, a);
		}
		assert_int_equal(dtxn_addr_cache_count(ov), dtxn_addr_cache_count(full));
		if (step % 499 == 0 || step > 29500)
			for (unsigned j = 0; j < KEYS; j++)
				assert_int_equal(dtxn_addr_cache_lookup(ov, j % 3, j),
						 dtxn_addr_cache_lookup(full, j % 3, j));
	}
	dtxn_addr_cache_destroy(ov);
	dtxn_addr_cache_destroy(full);
	dtxn_addr_cache_destroy(base);
}

/* Columns, cell masks and update shapes (columns.c). */
struct col_row {
	uint64_t a;
	uint32_t b;
	uint8_t c;   /* 3 B of padding follow: they belong to c */
};

static void
test_columns_cells(void **state)
{
	const uint32_t off[] = { offsetof(struct col_row, a), offsetof(struct col_row, b),
				 offsetof(struct col_row, c) };
	const uint32_t bad[] = { 0, 8, 8 };
	struct dtxn_catalog cat;
	struct dtxn_table_def d = mkdef(1, "cols", sizeof(struct col_row), 100);
	struct col_row x = { 1, 2, 3 }, y = { 1, 5, 4 }, z;
	uint8_t seg[16];
	uint32_t o, sz;

	(void)state;
	/* declared from field offsets: padding goes with the field before it */
	assert_int_equal(dtxn_table_def_set_columns(&d, off, 3), 0);
	assert_int_equal(d.n_columns, 3);
	assert_int_equal(d.column_size[0], 8);
	assert_int_equal(d.column_size[1], 4);
	assert_int_equal(d.column_size[2], 4);
	assert_int_equal(dtxn_table_def_set_columns(&d, bad, 3), -EINVAL);
	assert_int_equal(dtxn_table_def_set_columns(&d, off, 0), -EINVAL);
	assert_int_equal(dtxn_table_n_cells(&d), 3);
	assert_int_equal(dtxn_table_cells_all(&d), 0x7);
	/* masks: absent cells dropped, nothing left or ALL: every cell */
	assert_int_equal(dtxn_table_cells_norm(&d, DTXN_CELL(1) | DTXN_CELL(9)), DTXN_CELL(1));
	assert_int_equal(dtxn_table_cells_norm(&d, 0), 0x7);
	assert_int_equal(dtxn_table_cells_norm(&d, DTXN_CELLS_ALL), 0x7);
	dtxn_table_cell(&d, 2, &o, &sz);
	assert_int_equal(o, 12);
	assert_int_equal(sz, 4);
	assert_int_equal(dtxn_table_cells_bytes(&d, 0x5), 12);
	/* diff, pack, unpack, copy */
	assert_int_equal(dtxn_table_cells_diff(&d, DTXN_CELLS_ALL, &x, &y), 0x6);
	assert_int_equal(dtxn_table_cells_diff(&d, DTXN_CELL(1), &x, &y), 0x2);
	assert_int_equal(dtxn_table_cells_pack(&d, 0x6, &x, seg), 8);
	z = y;
	assert_int_equal(dtxn_table_cells_unpack(&d, 0x6, seg, &z), 8);
	assert_memory_equal(&z, &x, sizeof(x));
	z = y;
	dtxn_table_cells_copy(&d, DTXN_CELL(1), &x, &z);
	assert_int_equal(z.b, 2);
	assert_int_equal(z.c, 4);
	/* a table without columns is one cell, the whole value */
	{
		struct dtxn_table_def w = mkdef(2, "whole", 40, 100);

		assert_int_equal(dtxn_table_n_cells(&w), 1);
		assert_int_equal(dtxn_table_cells_all(&w), 1);
		assert_int_equal(dtxn_table_cells_bytes(&w, DTXN_CELLS_ALL), 40);
	}
	/* update shapes: checked by the catalog */
	assert_int_equal(dtxn_catalog_init(&cat, 1, 1), 0);
	d.n_updates = 2;
	d.updates[0] = (struct dtxn_update_shape){ DTXN_CELL(1), 600 };
	d.updates[1] = (struct dtxn_update_shape){ DTXN_CELL(2), 500 }; /* sum 1100 */
	assert_int_equal(dtxn_catalog_add_table(&cat, &d, 64), -EINVAL);
	d.updates[1].permille = 400;
	d.updates[1].cells = DTXN_CELL(5);                              /* no such cell */
	assert_int_equal(dtxn_catalog_add_table(&cat, &d, 64), -EINVAL);
	d.updates[1].cells = 0;                                         /* no cell */
	assert_int_equal(dtxn_catalog_add_table(&cat, &d, 64), -EINVAL);
	d.updates[1].cells = DTXN_CELL(2);
	d.flags = 0x80;                                                 /* unknown flag */
	assert_int_equal(dtxn_catalog_add_table(&cat, &d, 64), -EINVAL);
	d.flags = DTXN_TABLE_F_NO_UPDATE;
	assert_int_equal(dtxn_catalog_add_table(&cat, &d, 64), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_catalog_init_errors),
		cmocka_unit_test(test_catalog_add_errors),
		cmocka_unit_test(test_columns_cells),
		cmocka_unit_test(test_catalog_placement),
		cmocka_unit_test(test_catalog_set_primary),
		cmocka_unit_test(test_catalog_layout),
		cmocka_unit_test(test_catalog_layout_e2big),
		cmocka_unit_test(test_catalog_mem),
		cmocka_unit_test(test_load_deferred_copies),
		cmocka_unit_test(test_aux_heap),
		cmocka_unit_test(test_delta_heap),
		cmocka_unit_test(test_bucket_of_uniform),
		cmocka_unit_test(test_raddr),
		cmocka_unit_test(test_bucket_find_free),
		cmocka_unit_test(test_load_find_replicas_scan),
		cmocka_unit_test(test_load_overflow_chain),
		cmocka_unit_test(test_load_tiny_table),
		cmocka_unit_test(test_load_displace),
		cmocka_unit_test(test_direct_index),
		cmocka_unit_test(test_placement_key_layout),
		cmocka_unit_test(test_placement_key_load),
		cmocka_unit_test(test_load_speed),
		cmocka_unit_test(test_addr_cache),
		cmocka_unit_test(test_addr_cache_churn),
		cmocka_unit_test(test_addr_cache_overlay),
		cmocka_unit_test(test_addr_cache_overlay_as_copy),
	};
	int rc;

	if (dtxn_unit_eal_init("ut_store") != 0)
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	dtxn_unit_eal_fini();
	return rc;
}
