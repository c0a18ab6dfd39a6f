/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The CNs' control plane over the fabric (--control fabric; role.h,
 * "ctl_fabric.c"; doc/guides/cluster.md, "The control plane over the
 * fabric"): the start barrier, the CNs' benchmark counters for the
 * invariant check and the choice of the checker live in MN 0's control
 * area (lib/store's DTXN_STORE_CTL_BYTES at dtxn_store_ctl_raddr()),
 * reached with one-sided READ, WRITE, CAS and FAA from each CN's main
 * lcore on a QP of its own. Nothing is shared between the processes but
 * the fabric, so shm processes, mlx5 and ucx run the same code.
 *
 * Every call here runs on the main lcore, off the data path: it posts one
 * chain, then polls its CQ, sleeping APP_CF_SPIN_US between empty polls
 * (the main lcore may sleep; coordinators never come here).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_hash_crc.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include "dtxn_bench.h"
#include "dtxn_fabric.h"
#include "dtxn_sched.h"
#include "dtxn_stats.h"
#include "dtxn_store.h"
#include "dtxn_txn.h"
#include "dtxn_txn_driver.h"
#include "role.h"

/** Barrier polls: one READ of the header this often, us. */
#define APP_CF_POLL_US 200
/** End of run: one READ of the header (and the lease states) this often, us. */
#define APP_CF_DONE_POLL_US 2000
/** Sleep between empty polls of the control QP's CQ, us. */
#define APP_CF_SPIN_US 20
/** Bytes per READ when a CN copies an MN region for the check. */
#define APP_CF_COPY_CHUNK (UINT32_C(1) << 20)
/** How long a CN's end of run waits for a dead peer's recoverer to settle its slot, ns. */
#define APP_CF_SETTLE_GRACE_NS (2000ull * 1000 * 1000)
/** WRs the control QP may have outstanding (one chain at a time). */
#define APP_CF_QP_DEPTH 64

_Static_assert(APP_CF_HDR_BYTES + DTXN_MAX_NODES * APP_CF_SLOT_BYTES <= DTXN_STORE_CTL_BYTES,
	       "every CN's slot fits the control area");
_Static_assert(APP_CF_SLOT_WORDS * 8 <= APP_CF_SLOT_BYTES, "a slot's words fit its slot");
_Static_assert(APP_CF_SLOT_WORDS * 8 <= DTXN_WR_INLINE_MAX, "a slot's WRITE is inline");

/* The local buffers of the control QP's WRs: DPDK memory (registered on mlx5). */
struct cf_bufs {
	uint64_t area[DTXN_STORE_CTL_BYTES / 8]; /* a READ of the area: header, then slots */
	uint64_t slot[APP_CF_SLOT_WORDS];        /* this CN's slot, as WRITTEn */
	uint64_t atom;                           /* a CAS's or FAA's old value */
	uint64_t lease[DTXN_MAX_NODES];          /* the CNs' lease state words */
	uint64_t beat[DTXN_MAX_NODES];           /* the CNs' heartbeat words (the recovery pass) */
};

struct app_cf {
	const struct app_conf *c;
	struct dtxn_db *db;
	struct dtxn_fabric *f;
	struct dtxn_cq *cq;
	struct dtxn_qp *qp;              /* this CN -> MN 0 */
	uint16_t node;                   /* this CN's fabric node id */
	uint64_t all;                    /* bit J for every CN of the run */
	uint64_t me;                     /* this CN's bit */
	uint64_t wr_id;                  /* the last WR id handed out */
	struct cf_bufs *buf;
	void *copy[DTXN_MAX_NODES];      /* region copies for the check (dtxn_fabric_mn_mirror()) */
	/* recoveries this CN's agents ran (app_cf_note_recovery()): written by
	 * the watcher's lcore, n_noted published last (release); settled by
	 * the main lcore (cf_settle_noted()) */
	struct dtxn_recovery noted[DTXN_MAX_NODES];
	uint32_t n_noted;
	uint32_t n_settled;
	uint32_t inc;                    /* this process's incarnation of its CN (app_cf_rejoin()) */
	uint64_t missed;                 /* announced restarts that did not claim their node in time */
};

static void
cf_sleep_us(unsigned us)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = (long)us * 1000 };

	nanosleep(&ts, NULL);
}

/* "cnJ, cnK" of the bits of @p mask into @p names (@p len bytes). */
static void
cf_names(uint64_t mask, char *names, size_t len)
{
	size_t used = 0;

	names[0] = '\0';
	for (unsigned j = 0; j < 64 && used < len; j++)
		if (mask & (UINT64_C(1) << j))
			used += (size_t)snprintf(names + used, len - used, "%scn%u",
						 used != 0 ? ", " : "", j);
}

/*
 * Posts @p chain on @p qp (its last WR signaled, the others not) and polls until
 * the last WR completes, up to --connect-timeout. @p what names the step
 * for the one line on failure. @return 0, or -EIO after one line (a
 * failed completion: MN 0 lost; a post error; no completion in time).
 */
static int
cf_run_on(struct app_cf *cf, struct dtxn_qp *qp, struct dtxn_wr *chain, const char *what)
{
	const struct app_conf *c = cf->c;
	uint64_t deadline = dtxn_now_ns() + (uint64_t)(c->connect_timeout_s * 1e9);
	struct dtxn_wr *last = chain;
	struct dtxn_cqe cqe;
	int rc;

	while (last->next != NULL)
		last = last->next;
	for (struct dtxn_wr *w = chain; w != NULL; w = w->next) {
		w->wr_id = ++cf->wr_id;
		w->flags |= DTXN_WR_F_LEASE_EXEMPT; /* control path: not the CN's data */
	}
	last->flags |= DTXN_WR_F_SIGNALED;
	rc = dtxn_qp_post(qp, chain);
	if (rc != 0) {
		app_err("--node %s: mn%u: cannot post the %s: %s", c->node,
			(unsigned)dtxn_qp_remote_node(qp), what, strerror(-rc));
		return -EIO;
	}
	for (;;) {
		if (dtxn_cq_poll(cf->cq, &cqe, 1) == 1) {
			if (cqe.status != DTXN_WC_SUCCESS) {
				app_err("--node %s: mn%u is lost: the %s failed (completion status %u): stopping",
					c->node, (unsigned)cqe.src_node, what, cqe.status);
				return -EIO;
			}
			if (cqe.wr_id == last->wr_id)
				return 0;
			continue;
		}
		if (dtxn_now_ns() >= deadline) {
			app_err("--node %s: mn%u is lost: the %s did not complete within %g s (--connect-timeout): stopping",
				c->node, (unsigned)dtxn_qp_remote_node(qp), what, c->connect_timeout_s);
			return -EIO;
		}
		cf_sleep_us(APP_CF_SPIN_US);
	}
}

/* cf_run_on() on the QP to MN 0 (the control area). */
static int
cf_run(struct app_cf *cf, struct dtxn_wr *chain, const char *what)
{
	return cf_run_on(cf, cf->qp, chain, what);
}

/* READ @p len bytes at @p raddr into @p local. */
static int
cf_read(struct app_cf *cf, dtxn_raddr_t raddr, void *local, uint32_t len, const char *what)
{
	struct dtxn_wr wr = {
		.opcode = DTXN_WR_READ, .len = len, .local = local, .raddr = raddr,
	};

	return cf_run(cf, &wr, what);
}

/* READ the area's header and the first @p n_slots slots into buf->area. */
static int
cf_read_area(struct app_cf *cf, unsigned n_slots, const char *what)
{
	const struct dtxn_catalog *cat = dtxn_db_catalog(cf->db);

	return cf_read(cf, dtxn_store_ctl_raddr(cat, 0), cf->buf->area,
		       APP_CF_HDR_BYTES + n_slots * APP_CF_SLOT_BYTES, what);
}

/* FAA @p add on the area's word at @p off; the old value in buf->atom. */
static int
cf_faa(struct app_cf *cf, uint64_t off, uint64_t add, const char *what)
{
	struct dtxn_wr wr = {
		.opcode = DTXN_WR_FAA, .len = 8, .local = &cf->buf->atom,
		.raddr = dtxn_store_ctl_raddr(dtxn_db_catalog(cf->db), off), .compare_add = add,
	};

	return cf_run(cf, &wr, what);
}

static uint64_t
cf_word(const struct app_cf *cf, uint64_t off)
{
	return __atomic_load_n(&cf->buf->area[off / 8], __ATOMIC_ACQUIRE);
}

int
app_cf_crec_init(const struct app_conf *c, struct dtxn_db *db, struct dtxn_fabric *f)
{
	const struct dtxn_catalog *cat = dtxn_db_catalog(db);
	uint16_t mn = (uint16_t)c->node_idx;
	dtxn_raddr_t first;
	uint8_t *base;

	if (strcmp(c->role, "mn") != 0 || cat->n_logs == 0)
		return 0;
	base = dtxn_fabric_mn_base(f, mn);
	first = dtxn_store_crec_raddr(cat, mn, 0);
	if (base == NULL || first == 0)
		return -ENXIO;
	memset(base + DTXN_RADDR_OFF(first), 0, (size_t)cat->n_logs * DTXN_STORE_CREC_BYTES);
	return 0;
}

int
app_cf_area_init(const struct app_conf *c, struct dtxn_db *db, struct dtxn_fabric *f)
{
	const struct dtxn_catalog *cat = dtxn_db_catalog(db);
	uint8_t *base;
	uint64_t off;

	if (strcmp(c->role, "mn") != 0 || c->node_idx != 0)
		return 0;
	base = dtxn_fabric_mn_base(f, 0);
	if (base == NULL || dtxn_store_ctl_raddr(cat, 0) == 0)
		return -ENXIO;
	off = DTXN_RADDR_OFF(dtxn_store_ctl_raddr(cat, 0));
	memset(base + off, 0, DTXN_STORE_CTL_BYTES);
	/* restarts to come (dtxn-cluster run --restart): the CNs' end of run waits for them */
	*(uint64_t *)(void *)(base + off + APP_CF_OFF_PENDING) =
		c->announce_mask & (c->cn >= 64 ? UINT64_MAX : (UINT64_C(1) << c->cn) - 1);
	/* the run it was loaded for: the recovery pass compares its own */
	*(uint64_t *)(void *)(base + off + APP_CF_OFF_DESC) = app_cf_desc_digest(c);
	/* last: a CN writes nothing before it reads the magic */
	__atomic_store_n((uint64_t *)(void *)(base + off + APP_CF_OFF_MAGIC), APP_CF_MAGIC,
			 __ATOMIC_RELEASE);
	return 0;
}

struct app_cf *
app_cf_open(const struct app_conf *c, struct dtxn_db *db, struct dtxn_fabric *f, uint16_t node)
{
	int socket = (int)rte_socket_id();
	struct app_cf *cf = rte_zmalloc_socket("dtxn_cf", sizeof(*cf), RTE_CACHE_LINE_SIZE, socket);

	if (cf == NULL)
		goto nomem;
	cf->c = c;
	cf->db = db;
	cf->f = f;
	cf->node = node;
	cf->all = c->cn >= 64 ? UINT64_MAX : (UINT64_C(1) << c->cn) - 1;
	cf->me = UINT64_C(1) << c->node_idx;
	cf->buf = rte_zmalloc_socket("dtxn_cf_buf", sizeof(*cf->buf), RTE_CACHE_LINE_SIZE, socket);
	if (cf->buf == NULL)
		goto nomem;
	cf->cq = dtxn_cq_create(f, socket, APP_CF_QP_DEPTH);
	if (cf->cq == NULL)
		goto fail;
	cf->qp = dtxn_qp_create(f, cf->cq, node, 0, APP_CF_QP_DEPTH);
	if (cf->qp == NULL)
		goto fail;
	return cf;
nomem:
	rte_errno = ENOMEM;
fail:
	app_err("--node %s: cannot open the control plane's QP to mn0: %s", c->node,
		rte_strerror(rte_errno));
	app_cf_close(cf);
	return NULL;
}

void
app_cf_close(struct app_cf *cf)
{
	if (cf == NULL)
		return;
	for (uint16_t m = 0; m < DTXN_MAX_NODES; m++)
		if (cf->copy[m] != NULL) {
			(void)dtxn_fabric_mn_mirror(cf->f, m, NULL);
			rte_free(cf->copy[m]);
		}
	dtxn_qp_destroy(cf->qp);
	dtxn_cq_destroy(cf->cq);
	rte_free(cf->buf);
	rte_free(cf);
}

int
app_cf_start(struct app_cf *cf)
{
	const struct app_conf *c = cf->c;
	uint64_t t0 = dtxn_now_ns(), deadline = t0 + (uint64_t)(c->connect_timeout_s * 1e9);
	uint64_t arrived;
	char names[256];

	/* MN 0 loaded and zeroed the area (app_cf_area_init()) */
	for (;;) {
		if (cf_read_area(cf, 0, "READ of the start barrier") != 0)
			return -EIO;
		if (cf_word(cf, APP_CF_OFF_MAGIC) == APP_CF_MAGIC)
			break;
		if (dtxn_now_ns() >= deadline) {
			app_err("--node %s: the start barrier: mn0's control area is not ready after %g s (--connect-timeout): mn0 has not loaded",
				c->node, c->connect_timeout_s);
			return -ETIMEDOUT;
		}
		cf_sleep_us(APP_CF_POLL_US);
	}
	if (cf_faa(cf, APP_CF_OFF_ARRIVED, cf->me, "FAA of the start barrier") != 0)
		return -EIO;
	arrived = cf->buf->atom | cf->me;
	while ((arrived & cf->all) != cf->all) {
		if (dtxn_now_ns() >= deadline) {
			cf_names(cf->all & ~arrived, names, sizeof(names));
			app_err("--node %s: the start barrier: %s did not arrive within %g s (--connect-timeout)",
				c->node, names, c->connect_timeout_s);
			return -ETIMEDOUT;
		}
		cf_sleep_us(APP_CF_POLL_US);
		if (cf_read_area(cf, 0, "READ of the start barrier") != 0)
			return -EIO;
		arrived = cf_word(cf, APP_CF_OFF_ARRIVED);
	}
	printf("dtxn: %s: every CN is at the start barrier (mn0's control area; waited %.1f ms)\n",
	       c->node, (double)(dtxn_now_ns() - t0) / 1e6);
	fflush(stdout);
	return 0;
}

/* cnJ's slot in buf->area (read with cf_read_area(cf, n > J)). */
static const uint64_t *
cf_slot(const struct app_cf *cf, unsigned j)
{
	return &cf->buf->area[(APP_CF_HDR_BYTES + j * APP_CF_SLOT_BYTES) / 8];
}

/*
 * With agents (--lease-ms): the CNs a survivor declared dead (their lease
 * state word says fenced or recovered, of an incarnation no older than
 * the one their slot in buf->area names: a restart that claimed its node
 * and has not taken its lease yet is not gone): no counters will come
 * from them. 0 without agents, or when the READ fails (MN 0 lost: the
 * caller's next READ says so).
 */
static uint64_t
cf_gone(struct app_cf *cf)
{
	const struct dtxn_catalog *cat = dtxn_db_catalog(cf->db);
	uint64_t gone = 0;

	if (!app_agents_on(cf->c))
		return 0;
	if (cf_read(cf, dtxn_store_lease_raddr(cat, (uint16_t)cf->c->mn, true), cf->buf->lease,
		    (uint32_t)(cf->c->cn * 8), "READ of the lease states") != 0)
		return 0;
	for (unsigned j = 0; j < cf->c->cn; j++) {
		unsigned st = DTXN_LEASE_WORD_STATE(cf->buf->lease[j]);

		if ((st == DTXN_LEASE_STATE_RECOVERED || st == DTXN_LEASE_STATE_FENCED) &&
		    DTXN_LEASE_WORD_INC(cf->buf->lease[j]) >= cf_slot(cf, j)[APP_CF_SLOT_INC])
			gone |= UINT64_C(1) << j;
	}
	return gone;
}

int
app_cf_note_recovery(struct app_cf *cf, const struct dtxn_recovery *rec)
{
	uint32_t n = __atomic_load_n(&cf->n_noted, __ATOMIC_ACQUIRE);

	if (n >= RTE_DIM(cf->noted))
		return 0; /* more deaths than nodes: cannot be */
	cf->noted[n] = *rec;
	__atomic_store_n(&cf->n_noted, n + 1, __ATOMIC_RELEASE);
	return 0;
}

/* The incarnation of the CN process whose coordinator began transaction
 * @p id: its sequence numbers begin at inc << DTXN_TXN_SEQ_INC_SHIFT. */
static uint64_t
cf_txn_inc(uint64_t id)
{
	return (id & ((UINT64_C(1) << DTXN_TXN_SEQ_BITS) - 1)) >> DTXN_TXN_SEQ_INC_SHIFT;
}

/* Did the recovery @p rec keep transaction @p id (visible, or not undone)? */
static bool
cf_kept(const struct dtxn_recovery *rec, uint64_t id)
{
	/* not undone: its decisive batch wrote the record (a commit record
	 * names no open txn of a coordinator that landed nothing: undone_open
	 * does not apply) */
	return dtxn_recovery_verdict(rec, id, false) >= 0;
}

/*
 * READs @p len bytes at @p raddr on MN DTXN_RADDR_MN(@p raddr): on the
 * control QP for MN 0, else on a QP of its own, opened for this READ and
 * closed after it (a dead CN's commit records: once per death).
 * @return 0, or -EIO after one line.
 */
static int
cf_read_mn(struct app_cf *cf, dtxn_raddr_t raddr, void *local, uint32_t len, const char *what)
{
	uint16_t m = DTXN_RADDR_MN(raddr);
	struct dtxn_wr wr = {
		.opcode = DTXN_WR_READ, .len = len, .local = local, .raddr = raddr,
	};
	struct dtxn_qp *qp;
	int rc;

	if (m == 0)
		return cf_run(cf, &wr, what);
	qp = dtxn_qp_create(cf->f, cf->cq, cf->node, m, APP_CF_QP_DEPTH);
	if (qp == NULL) {
		app_err("--node %s: cannot open a QP to mn%u for the %s: %s", cf->c->node,
			(unsigned)m, what, rte_strerror(rte_errno));
		return -EIO;
	}
	rc = cf_run_on(cf, qp, &wr, what);
	dtxn_qp_destroy(qp);
	return rc;
}

/*
 * Settles the counters of the CN that recovery @p rec recovered: READs
 * its coordinators' commit-record slots (lib/store's
 * dtxn_store_crec_raddr()) from every MN, takes each coordinator's newest
 * record (dtxn_bench_record_newest(): the largest txn id with the magic
 * set), adds its counters and, if its transaction stayed, that
 * transaction's share (dtxn_bench_record_settle()), then WRITEs the dead
 * CN's slot (DONE, settled by this CN) and FAAs its done bit, on the
 * control QP: RC order makes the slot visible before the bit, and both
 * before this CN's own slot. @return 0, or -EIO after one line.
 *
 * Why the newest record over every MN (lib/txn's batch.c says it at
 * length): a decisive batch writes the record at the end of its chain to
 * every MN it touches, and a dead CN's batch may have landed on some MNs
 * only (each MN's chain whole or not at all). Any of transaction X's data
 * on an MN came with X's record to that MN, so if some of X landed, the
 * newest record is X's (its share counts by the recovery's verdict on X)
 * or a later transaction's (whose acc[] holds X's share already); if
 * nothing of X landed, the newest is the previous transaction's, and X's
 * share is rightly missing. The record on MN 0 alone missed a
 * transaction whose chain to MN 0 was lost but whose data on another MN
 * the recovery rolled forward.
 */
static int
cf_settle_one(struct app_cf *cf, const struct dtxn_recovery *rec)
{
	const struct app_conf *c = cf->c;
	const struct dtxn_catalog *cat = dtxn_db_catalog(cf->db);
	unsigned j = (unsigned)(rec->dead_cn - c->mn);
	uint16_t n_mn = cat->n_mn;
	uint64_t *s = cf->buf->slot;
	struct dtxn_bench_record *r, cand[DTXN_MAX_NODES];
	int64_t acc[4] = { 0 };
	unsigned written = 0, older = 0;
	struct dtxn_wr wr[2];
	uint64_t dead_inc;
	int rc = 0;

	if (rec->n_gids == 0 || n_mn == 0 || n_mn > DTXN_MAX_NODES ||
	    dtxn_store_crec_raddr(cat, 0, rec->gid_first + rec->n_gids - 1) == 0)
		return 0; /* no records for those gids: nothing to settle */
	/* the dead incarnation (its slot names it once a restart claimed the
	 * node): an earlier incarnation's records are in acc_prev already */
	if (cf_read_area(cf, j + 1, "READ of a dead CN's slot") != 0)
		return -EIO;
	dead_inc = cf_slot(cf, j)[APP_CF_SLOT_INC];
	/* r[m * n_gids + g]: gid_first + g's slot on MN m */
	r = rte_malloc_socket("dtxn_cf_crec", (size_t)n_mn * rec->n_gids * sizeof(*r), 64,
			      (int)rte_socket_id());
	if (r == NULL) {
		app_err("--node %s: no memory to read cn%u's commit records", c->node, j);
		return -EIO;
	}
	for (uint16_t m = 0; rc == 0 && m < n_mn; m++)
		rc = cf_read_mn(cf, dtxn_store_crec_raddr(cat, m, rec->gid_first),
				&r[(size_t)m * rec->n_gids], (uint32_t)(rec->n_gids * sizeof(*r)),
				"READ of a dead CN's commit records");
	for (uint32_t g = 0; rc == 0 && g < rec->n_gids; g++) {
		const struct dtxn_bench_record *newest;

		for (uint16_t m = 0; m < n_mn; m++) {
			cand[m] = r[(size_t)m * rec->n_gids + g];
			if (cf_txn_inc(cand[m].txn_id) < dead_inc)
				cand[m].magic = 0; /* an earlier incarnation's: settled before */
		}
		newest = dtxn_bench_record_newest(cand, n_mn);
		if (newest == NULL)
			continue; /* committed nothing through bench_commit() */
		dtxn_bench_record_settle(newest, cf_kept(rec, newest->txn_id), acc);
		written++;
		/* slots that hold an older record: MNs the newest one's batch did not touch */
		for (uint16_t m = 0; m < n_mn; m++)
			older += cand[m].magic == DTXN_BENCH_RECORD_MAGIC &&
				 cand[m].txn_id < newest->txn_id;
	}
	rte_free(r);
	if (rc != 0)
		return -EIO;
	memset(s, 0, sizeof(cf->buf->slot));
	s[0] = APP_NODE_DONE;
	memcpy(&s[3], acc, sizeof(acc));
	s[7] = written;
	s[APP_CF_SLOT_SETTLED] = APP_CF_SETTLED_BY + c->node_idx;
	memset(wr, 0, sizeof(wr));
	wr[0] = (struct dtxn_wr){
		.next = &wr[1], .opcode = DTXN_WR_WRITE, .flags = DTXN_WR_F_INLINE,
		.len = APP_CF_SLOT_WORDS * 8, .local = s,
		.raddr = dtxn_store_ctl_raddr(cat, APP_CF_HDR_BYTES + j * APP_CF_SLOT_BYTES),
	};
	wr[1] = (struct dtxn_wr){
		.opcode = DTXN_WR_FAA, .len = 8, .local = &cf->buf->atom,
		.raddr = dtxn_store_ctl_raddr(cat, APP_CF_OFF_DONE), .compare_add = UINT64_C(1) << j,
	};
	if (cf_run(cf, wr, "hand-over of a dead CN's settled counters") != 0)
		return -EIO;
	printf("dtxn: %s: cn%u's counters settled from %u commit records, the newest of each coordinator's slots on %u MNs (%u older ones passed over; its recovery's verdict on the transactions they name)\n",
	       c->node, j, written, (unsigned)n_mn, older);
	fflush(stdout);
	return 0;
}

/* Settles every recovery noted since the last call. @return 0 or -EIO. */
static int
cf_settle_noted(struct app_cf *cf)
{
	uint32_t n = __atomic_load_n(&cf->n_noted, __ATOMIC_ACQUIRE);

	for (; cf->n_settled < n; cf->n_settled++)
		if (cf_settle_one(cf, &cf->noted[cf->n_settled]) != 0)
			return -EIO;
	return 0;
}

int
app_cf_withdraw(const struct app_conf *c, struct dtxn_db *db, struct dtxn_fabric *f,
		uint16_t node)
{
	struct app_cf *cf = app_cf_open(c, db, f, node);
	int rc = -EIO;

	if (cf == NULL)
		return -EIO;
	if (cf_read_area(cf, 0, "READ of the announced restarts") == 0) {
		rc = 0;
		if (cf_word(cf, APP_CF_OFF_MAGIC) == APP_CF_MAGIC &&
		    (cf_word(cf, APP_CF_OFF_PENDING) & cf->me)) {
			rc = cf_faa(cf, APP_CF_OFF_PENDING, -cf->me, "FAA of its announcement");
			if (rc == 0)
				printf("dtxn: %s: its announced restart is withdrawn (this process does not serve it)\n",
				       c->node);
			fflush(stdout);
		}
	}
	app_cf_close(cf);
	return rc;
}

int
app_cf_poll(struct app_cf *cf)
{
	return cf_settle_noted(cf);
}

int
app_cf_rejoin(struct app_cf *cf, uint32_t inc)
{
	const struct app_conf *c = cf->c;
	const struct dtxn_catalog *cat = dtxn_db_catalog(cf->db);
	unsigned j = c->node_idx;
	uint64_t t0 = dtxn_now_ns(), deadline = t0 + (uint64_t)(c->connect_timeout_s * 1e9);
	uint64_t *w = cf->buf->slot, pending;
	const uint64_t *s;
	struct dtxn_wr wr[3];
	int64_t prev[4];
	unsigned n = 0;

	cf->inc = inc;
	printf("dtxn: %s: incarnation %u (admitted by the MNs): waiting until a survivor has recovered and settled its previous incarnation\n",
	       c->node, inc);
	fflush(stdout);
	for (;;) {
		if (cf_read_area(cf, j + 1, "READ of its slot (restart)") != 0)
			return -EIO;
		s = cf_slot(cf, j);
		if (cf_word(cf, APP_CF_OFF_CHECKER) != 0) {
			app_err("--node %s: the cluster's run is over (the invariants are being checked): too late to rejoin",
				c->node);
			return -EALREADY;
		}
		if (cf_word(cf, APP_CF_OFF_MAGIC) == APP_CF_MAGIC &&
		    (cf_word(cf, APP_CF_OFF_DONE) & cf->me) && s[APP_CF_SLOT_SETTLED] == 0 &&
		    s[APP_CF_SLOT_INC] < inc) {
			app_err("--node %s: its previous process ended its run and handed its counters over: this cluster's MNs already served a run; restart them (usertools/dtxn-cluster stop, start)",
				c->node);
			return -EALREADY;
		}
		if (cf_word(cf, APP_CF_OFF_MAGIC) == APP_CF_MAGIC &&
		    (cf_word(cf, APP_CF_OFF_DONE) & cf->me) && s[APP_CF_SLOT_SETTLED] >= APP_CF_SETTLED_BY &&
		    s[APP_CF_SLOT_INC] < inc)
			break;
		if (dtxn_now_ns() >= deadline) {
			app_err("--node %s: its previous incarnation was not recovered and settled within %g s (--connect-timeout; is failure detection off: --lease-ms 0?)",
				c->node, c->connect_timeout_s);
			return -ETIMEDOUT;
		}
		cf_sleep_us(APP_CF_DONE_POLL_US);
	}
	/* the dead incarnations' counters: the earlier ones', and the settled one's */
	for (unsigned k = 0; k < RTE_DIM(prev); k++)
		prev[k] = (int64_t)s[APP_CF_SLOT_PREV + k] + (int64_t)s[3 + k];
	pending = cf_word(cf, APP_CF_OFF_PENDING);
	memset(w, 0, sizeof(cf->buf->slot));
	w[0] = inc;
	memcpy(&w[1], prev, sizeof(prev));
	/* one chain: the slot's incarnation and acc_prev, then the done bit
	 * and the announcement away (RC order: the peers see the claim whole) */
	memset(wr, 0, sizeof(wr));
	wr[n] = (struct dtxn_wr){
		.opcode = DTXN_WR_WRITE, .flags = DTXN_WR_F_INLINE, .len = 5 * 8, .local = w,
		.raddr = dtxn_store_ctl_raddr(cat, APP_CF_HDR_BYTES + j * APP_CF_SLOT_BYTES +
							   APP_CF_SLOT_INC * 8),
	};
	n++;
	wr[n - 1].next = &wr[n];
	wr[n] = (struct dtxn_wr){
		.opcode = DTXN_WR_FAA, .len = 8, .local = &cf->buf->atom,
		.raddr = dtxn_store_ctl_raddr(cat, APP_CF_OFF_DONE), .compare_add = -cf->me,
	};
	n++;
	if (pending & cf->me) {
		wr[n - 1].next = &wr[n];
		wr[n] = (struct dtxn_wr){
			.opcode = DTXN_WR_FAA, .len = 8, .local = &cf->buf->atom,
			.raddr = dtxn_store_ctl_raddr(cat, APP_CF_OFF_PENDING), .compare_add = -cf->me,
		};
	}
	if (cf_run(cf, wr, "claim of its node (restart)") != 0)
		return -EIO;
	printf("dtxn: %s: its previous incarnation was recovered and settled (waited %.1f ms): incarnation %u rejoins\n",
	       c->node, (double)(dtxn_now_ns() - t0) / 1e6, inc);
	fflush(stdout);
	return 0;
}

int
app_cf_done(struct app_cf *cf, const int64_t acc[4], uint64_t committed, uint64_t n_ctx)
{
	const struct app_conf *c = cf->c;
	const struct dtxn_catalog *cat = dtxn_db_catalog(cf->db);
	uint64_t *s = cf->buf->slot;
	uint64_t deadline, done, gone = 0, gone_since = 0, pending = 0, all_since = 0;
	struct dtxn_wr wr[2];
	char names[256];

	/* the CNs this one recovered first: their slots before its own */
	if (cf_settle_noted(cf) != 0)
		return -EIO;
	memset(s, 0, sizeof(cf->buf->slot));
	s[0] = APP_NODE_DONE;
	s[1] = cf->inc;
	s[2] = committed;
	memcpy(&s[3], acc, 4 * sizeof(int64_t));
	s[7] = n_ctx;
	/* the slot, then the done bit, on one QP: RC order shows the slot first */
	memset(wr, 0, sizeof(wr));
	wr[0] = (struct dtxn_wr){
		.next = &wr[1], .opcode = DTXN_WR_WRITE, .flags = DTXN_WR_F_INLINE,
		.len = APP_CF_SLOT_WORDS * 8, .local = s,
		.raddr = dtxn_store_ctl_raddr(cat, APP_CF_HDR_BYTES + c->node_idx * APP_CF_SLOT_BYTES),
	};
	wr[1] = (struct dtxn_wr){
		.opcode = DTXN_WR_FAA, .len = 8, .local = &cf->buf->atom,
		.raddr = dtxn_store_ctl_raddr(cat, APP_CF_OFF_DONE), .compare_add = cf->me,
	};
	if (cf_run(cf, wr, "hand-over of the counters") != 0)
		return -EIO;
	/* the peers started with us and run as long: the bound covers stragglers */
	deadline = dtxn_now_ns() +
		   (uint64_t)((c->connect_timeout_s + c->duration_s + c->warmup_s) * 1e9);
	for (;;) {
		/* a recovery this CN's agent ran after its own hand-over */
		if (cf_settle_noted(cf) != 0)
			return -EIO;
		if (cf_read_area(cf, (unsigned)c->cn, "READ of the CNs' hand-over") != 0)
			return -EIO;
		done = cf_word(cf, APP_CF_OFF_DONE) | cf->me;
		pending = cf_word(cf, APP_CF_OFF_PENDING) & cf->all;
		gone = (done & cf->all) != cf->all ? cf_gone(cf) : 0;
		if (((done | gone) & cf->all) == cf->all && pending != 0) {
			/* an announced restart still to claim its node (doc/guides/cluster.md,
			 * "Announced restarts"): up to --connect-timeout */
			if (all_since == 0) {
				all_since = dtxn_now_ns();
				cf_names(pending, names, sizeof(names));
				printf("dtxn: %s: waiting for the announced restart of %s (up to %g s, --connect-timeout)\n",
				       c->node, names, c->connect_timeout_s);
				fflush(stdout);
			} else if (dtxn_now_ns() - all_since >= (uint64_t)(c->connect_timeout_s * 1e9)) {
				cf_names(pending, names, sizeof(names));
				printf("dtxn: %s: %s's announced restart did not claim its node within %g s (--connect-timeout): not waited for\n",
				       c->node, names, c->connect_timeout_s);
				cf->missed = pending;
				pending = 0;
				break;
			}
			cf_sleep_us(APP_CF_DONE_POLL_US);
			continue;
		}
		all_since = 0;
		if ((done & cf->all) == cf->all)
			break;
		/* a CN declared dead: its recoverer settles its slot right after
		 * marking it recovered; give it that long before going without */
		if (((done | gone) & cf->all) == cf->all) {
			if (gone_since == 0)
				gone_since = dtxn_now_ns();
			else if (dtxn_now_ns() - gone_since >= APP_CF_SETTLE_GRACE_NS)
				break;
		}
		if (dtxn_now_ns() >= deadline) {
			cf_names(cf->all & ~(done | gone), names, sizeof(names));
			printf("dtxn: %s: %s did not hand over its counters within %g s (--connect-timeout + --warmup + --duration): not waited for\n",
			       c->node, names, c->connect_timeout_s + c->duration_s + c->warmup_s);
			break;
		}
		cf_sleep_us(APP_CF_DONE_POLL_US);
	}
	if (gone & ~done) {
		cf_names(gone & ~done, names, sizeof(names));
		printf("dtxn: %s: %s died before handing over its counters (its lease state says so)\n",
		       c->node, names);
	}
	fflush(stdout);
	return 0;
}

int
app_cf_checker(struct app_cf *cf)
{
	const struct app_conf *c = cf->c;
	uint64_t done, chk;
	unsigned want;

	if (cf_read_area(cf, (unsigned)c->cn, "READ of the checker") != 0)
		return -1;
	done = cf_word(cf, APP_CF_OFF_DONE) & cf->all;
	/* a slot its recoverer settled is a dead CN's: it checks nothing
	 * (before, the lowest such was named checker, and nobody checked) */
	for (unsigned j = 0; j < c->cn; j++)
		if (cf_slot(cf, j)[APP_CF_SLOT_SETTLED] >= APP_CF_SETTLED_BY)
			done &= ~(UINT64_C(1) << j);
	if (done == 0)
		return -1;
	want = (unsigned)__builtin_ctzll(done);
	if (want == c->node_idx) {
		/* one claim: a CN that stopped waiting for a slow peer makes no second checker */
		struct dtxn_wr wr = {
			.opcode = DTXN_WR_CAS, .len = 8, .local = &cf->buf->atom,
			.raddr = dtxn_store_ctl_raddr(dtxn_db_catalog(cf->db), APP_CF_OFF_CHECKER),
			.compare_add = 0, .swap = want + 1,
		};

		if (cf_run(cf, &wr, "CAS of the checker") != 0)
			return -1;
		return cf->buf->atom == 0 ? (int)want : (int)cf->buf->atom - 1;
	}
	chk = cf_word(cf, APP_CF_OFF_CHECKER);
	return chk != 0 ? (int)chk - 1 : (int)want;
}

/*
 * Makes MN @p m's region readable here for the check: READs it whole
 * into DPDK memory (registered on mlx5) and hands the copy to
 * dtxn_fabric_mn_mirror(). A region this process maps: nothing to do,
 * unless --debug-copy-regions.
 * @return 0, or -1 after one line.
 */
static int
cf_copy_region(struct app_cf *cf, uint16_t m)
{
	const struct app_conf *c = cf->c;
	uint64_t size = dtxn_fabric_conf(cf->f)->mn_region_size;
	uint64_t t0 = dtxn_now_ns();
	struct dtxn_qp *qp;
	uint8_t *copy;
	int rc = 0;

	if (dtxn_fabric_mn_base(cf->f, m) != NULL && !c->debug_copy_regions)
		return 0;
	copy = rte_malloc_socket("dtxn_cf_copy", size, 64, (int)rte_socket_id());
	if (copy == NULL) {
		app_err("--node %s: no memory for a copy of mn%u's region (%.1f MiB) for the invariant check",
			c->node, m, (double)size / (1 << 20));
		return -1;
	}
	/* a QP of its own to that MN (MN 0's too: the control QP stays as it was) */
	qp = dtxn_qp_create(cf->f, cf->cq, cf->node, m, APP_CF_QP_DEPTH);
	if (qp == NULL) {
		app_err("--node %s: cannot open a QP to mn%u to read its region for the invariant check: %s",
			c->node, m, rte_strerror(rte_errno));
		rte_free(copy);
		return -1;
	}
	for (uint64_t off = 0; off < size && rc == 0; off += APP_CF_COPY_CHUNK) {
		struct dtxn_wr wr = {
			.opcode = DTXN_WR_READ, .local = copy + off, .raddr = DTXN_RADDR(m, off),
			.len = (uint32_t)RTE_MIN((uint64_t)APP_CF_COPY_CHUNK, size - off),
		};

		rc = cf_run_on(cf, qp, &wr, "READ of its region for the invariant check");
	}
	dtxn_qp_destroy(qp);
	if (rc != 0 || dtxn_fabric_mn_mirror(cf->f, m, copy) != 0) {
		rte_free(copy);
		return -1;
	}
	cf->copy[m] = copy;
	printf("dtxn: %s: read mn%u's region (%.1f MiB) for the invariant check in %.1f ms\n",
	       c->node, m, (double)size / (1 << 20), (double)(dtxn_now_ns() - t0) / 1e6);
	return 0;
}

int
app_cf_counters(struct app_cf *cf, struct dtxn_bench *b, struct dtxn_bench_ctx *out,
		struct dtxn_report *rep)
{
	const struct app_conf *c = cf->c;
	uint64_t done, lost, settled = 0, restarted = 0;
	char inc[256], miss[256], res[256];
	unsigned n = 0;

	if (cf_read_area(cf, (unsigned)c->cn, "READ of the CNs' counters") != 0)
		return -1;
	done = (cf_word(cf, APP_CF_OFF_DONE) | cf->me) & cf->all;
	for (unsigned j = 0; j < c->cn; j++) {
		const uint64_t *s = cf_slot(cf, j);

		bool has = j != c->node_idx && (done & (UINT64_C(1) << j));

		if ((done & (UINT64_C(1) << j)) && s[APP_CF_SLOT_SETTLED] >= APP_CF_SETTLED_BY)
			settled |= UINT64_C(1) << j;
		if (s[APP_CF_SLOT_INC] != 0)
			restarted |= UINT64_C(1) << j;
		if (!has && s[APP_CF_SLOT_INC] == 0)
			continue; /* its own coordinators are the caller's; a lost peer: none */
		/* one context per CN (room for --cn): a peer's handed-over (or
		 * settled) counters, plus, for a restarted CN, its dead
		 * incarnations' (acc_prev; this CN's own too) */
		memset(&out[n], 0, sizeof(out[n]));
		out[n].bench = b;
		out[n].finished = true;
		for (unsigned k = 0; k < RTE_DIM(out[n].acc); k++)
			out[n].acc[k] = (int64_t)s[APP_CF_SLOT_PREV + k] + (has ? (int64_t)s[3 + k] : 0);
		n++;
	}
	if (cf->missed != 0) {
		cf_names(cf->missed, miss, sizeof(miss));
		dtxn_report_check(rep, "announced_restart", false,
				  "%s: its announced restart did not claim its node within %g s of the end of the run (--connect-timeout): the cluster closed without it",
				  miss, c->connect_timeout_s);
	}
	cf_names(restarted, res, sizeof(res));
	lost = cf->all & ~done;
	cf_names(done, inc, sizeof(inc));
	if (lost != 0) {
		cf_names(lost, miss, sizeof(miss));
		dtxn_report_check(rep, "cluster_counters", false,
				  "%s did not hand over its counters through mn0's control area: the invariants that read them miss its share (included: %s)",
				  miss, inc);
	} else if (settled != 0) {
		cf_names(settled, miss, sizeof(miss));
		dtxn_report_check(rep, "cluster_counters", true,
				  "the counters of %s via mn0 (--control fabric); %s died: settled from its commit records by its recovery%s%s%s",
				  inc, miss, restarted != 0 ? "; " : "", res,
				  restarted != 0 ? " restarted" : "");
	} else if (restarted != 0) {
		dtxn_report_check(rep, "cluster_counters", true,
				  "the counters of %s via mn0 (--control fabric); %s restarted: its dead incarnations' settled, the live one's handed over",
				  inc, res);
	} else {
		dtxn_report_check(rep, "cluster_counters", true,
				  "the counters of %s, handed over through mn0's control area (--control fabric)",
				  inc);
	}
	for (uint16_t m = 0; m < c->mn; m++)
		if (cf_copy_region(cf, m) != 0)
			return -1;
	return (int)n;
}

uint64_t
app_cf_desc_digest(const struct app_conf *c)
{
	char desc[APP_CTL_DESC_MAX + 64];
	int n = snprintf(desc, sizeof(desc), "dtxn %s ", DTXN_VERSION);
	uint32_t len;

	app_role_desc(c, desc + n, sizeof(desc) - (size_t)n);
	len = (uint32_t)strlen(desc);
	return (uint64_t)len << 32 | rte_hash_crc(desc, len, 0);
}

/* READs the CNs' heartbeat words (lease area, MN 0) into buf->beat. */
static int
cf_read_beats(struct app_cf *cf)
{
	const struct dtxn_catalog *cat = dtxn_db_catalog(cf->db);

	return cf_read(cf, dtxn_store_lease_raddr(cat, (uint16_t)cf->c->mn, false), cf->buf->beat,
		       (uint32_t)(cf->c->cn * 8), "READ of the heartbeats");
}

int
app_cf_pass_dead(struct app_cf *cf, bool watched, uint64_t *dead)
{
	const struct app_conf *c = cf->c;
	const struct dtxn_catalog *cat = dtxn_db_catalog(cf->db);
	uint64_t done, alive = 0, lost = 0, beat0[DTXN_MAX_NODES];
	char names[256];

	*dead = 0;
	if (cf_read_area(cf, (unsigned)c->cn, "READ of the control area") != 0)
		return APP_EXIT_UNREACHABLE;
	if (cf_word(cf, APP_CF_OFF_MAGIC) != APP_CF_MAGIC) {
		app_err("--recovery-pass: mn0's control area is not ready: mn0 has not loaded (are the MNs of this run up?)");
		return APP_EXIT_UNREACHABLE;
	}
	if (cf_word(cf, APP_CF_OFF_DESC) != app_cf_desc_digest(c)) {
		app_err("--recovery-pass: catalog mismatch: the MNs were loaded for another run than this process's (mn0's control area holds the digest of another run description)");
		return APP_EXIT_USAGE;
	}
	done = cf_word(cf, APP_CF_OFF_DONE) & cf->all;
	if (!app_agents_on(c)) {
		*dead = cf->all & ~done; /* no leases: whoever did not hand over */
		return APP_EXIT_OK;
	}
	if (cf_read(cf, dtxn_store_lease_raddr(cat, (uint16_t)c->mn, true), cf->buf->lease,
		    (uint32_t)(c->cn * 8), "READ of the lease states") != 0 ||
	    cf_read_beats(cf) != 0)
		return APP_EXIT_UNREACHABLE;
	memcpy(beat0, cf->buf->beat, c->cn * 8);
	for (unsigned j = 0; j < c->cn; j++) {
		uint64_t bit = UINT64_C(1) << j;
		unsigned st = DTXN_LEASE_WORD_STATE(cf->buf->lease[j]);

		if (done & bit)
			continue; /* handed over, or settled by a survivor */
		if (st == DTXN_LEASE_STATE_ALIVE || st == DTXN_LEASE_STATE_FENCED)
			*dead |= bit;
		else
			lost |= bit; /* recovered (or left) and never settled */
		if (st == DTXN_LEASE_STATE_ALIVE)
			alive |= bit;
	}
	if (lost != 0) {
		cf_names(lost, names, sizeof(names));
		printf("dtxn: recovery pass: %s: recovered by a survivor that ended before it settled the counters (the recovery's verdict went with it): not recovered again\n",
		       names);
	}
	if (alive == 0 || watched)
		return APP_EXIT_OK;
	/* a live process renews its lease every lease / 5: watch one lease */
	rte_delay_us_sleep((unsigned)(c->lease_ms * 1000.0 + 0.5));
	if (cf_read_beats(cf) != 0)
		return APP_EXIT_UNREACHABLE;
	for (unsigned j = 0; j < c->cn; j++)
		if ((alive & (UINT64_C(1) << j)) && cf->buf->beat[j] != beat0[j]) {
			app_err("--recovery-pass: cn%u's heartbeat moved within one lease (%g ms): its process lives; the pass runs once every CN process has ended",
				j, c->lease_ms);
			return APP_EXIT_USAGE;
		}
	return APP_EXIT_OK;
}
