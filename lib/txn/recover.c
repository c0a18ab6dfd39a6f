/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CN crash recovery: the protocol-independent part of
 * dtxn_coord_recover() (argument checks, timing, steps); the mechanism
 * is the protocol's (dtxn_cc_ops.recover; doc/guides/cluster.md,
 * "Recovery").
 */
#include <errno.h>
#include <string.h>

#include <stdlib.h>


#include "txn_private.h"

bool
dtxn_db_can_recover(const struct dtxn_db *db)
{
	return db != NULL && db->cc->recover != NULL &&
	       (db->cc->can_recover == NULL || db->cc->can_recover(db));
}

bool
dtxn_protocol_can_recover(const char *protocol, const char *cc_options)
{
	const struct dtxn_cc_ops *ops = protocol != NULL ? dtxn_cc_find(protocol) : NULL;
	struct dtxn_db *db;
	bool can;

	if (ops == NULL || ops->recover == NULL)
		return false;
	if (ops->can_recover == NULL)
		return true;
	/* a db of options only: can_recover reads db->conf.cc_options alone */
	db = calloc(1, sizeof(*db));
	if (db == NULL)
		return false;
	db->conf.cc_options = cc_options != NULL ? cc_options : "";
	db->cc = ops;
	can = ops->can_recover(db);
	free(db);
	return can;
}

struct dtxn_recovery_step *
dtxn_recovery_step_begin(struct dtxn_recovery *rec, const char *name, const char *unit)
{
	struct dtxn_recovery_step *st;

	if (rec->n_steps < DTXN_RECOVERY_MAX_STEPS)
		rec->n_steps++;
	st = &rec->step[rec->n_steps - 1];
	st->name = name;
	st->unit = unit;
	st->work = 0;
	st->ns = 0;
	st->start_ns = dtxn_now_ns();
	return st;
}

void
dtxn_recovery_step_end(struct dtxn_recovery_step *st)
{
	st->ns = dtxn_now_ns() - st->start_ns;
}

int
dtxn_coord_recover(struct dtxn_coord *c, struct dtxn_recovery *rec)
{
	const struct dtxn_fabric_conf *fc;
	struct dtxn_db *db;
	int rc;

	if (c == NULL || rec == NULL)
		return -EINVAL;
	db = c->worker->db;
	fc = dtxn_fabric_conf(db->fabric);
	if (rec->dead_cn < fc->n_mn || rec->dead_cn >= fc->n_mn + fc->n_cn ||
	    rec->dead_cn == c->worker->cn_node || rec->n_gids > db->conf.n_coords ||
	    rec->gid_first > db->conf.n_coords - rec->n_gids)
		return -EINVAL;
	if (db->cc->recover == NULL)
		return -ENOTSUP;
	if (c->txn->open)
		return -EBUSY;
	rec->n_steps = 0;
	rec->start_ns = dtxn_now_ns();
	rc = db->cc->recover(c, rec);
	rec->end_ns = dtxn_now_ns();
	return rc;
}

int
dtxn_recovery_run(struct dtxn_recovery *rec, struct dtxn_batch *b)
{
	int rc;

	rec->wrs += b->n_wr;
	rc = dtxn_batch_run(b);
	dtxn_batch_done(b);
	return rc == 0 ? 0 : -EIO;
}

int
dtxn_recovery_read_replicas(struct dtxn_coord *c, struct dtxn_recovery *rec,
			    const struct dtxn_table *t, dtxn_raddr_t slot, void *buf)
{
	struct dtxn_batch b;

	dtxn_batch_init(&b, c);
	for (uint16_t r = 0; r < t->n_replicas; r++)
		dtxn_batch_read(&b, dtxn_store_replica_raddr(t, r, slot),
				(char *)buf + (size_t)r * t->slot_size, t->slot_size, true);
	return dtxn_recovery_run(rec, &b);
}

int
dtxn_recovery_bucket_words(struct dtxn_coord *c, struct dtxn_recovery *rec,
			   const struct dtxn_table *t, dtxn_raddr_t raddr)
{
	const uint32_t len = RTE_MIN(t->bucket_hdr_size, 3u * (uint32_t)sizeof(uint64_t)) -
			     (uint32_t)sizeof(uint64_t);
	uint64_t w[DTXN_MAX_REPLICAS][2] = { { 0 } };
	struct dtxn_batch b;
	uint16_t src = 0;
	int rc;

	dtxn_batch_init(&b, c);
	for (uint16_t r = 0; r < t->n_replicas; r++)
		dtxn_batch_read(&b, dtxn_store_replica_raddr(t, r, raddr) + sizeof(uint64_t), w[r],
				len, true);
	rc = dtxn_recovery_run(rec, &b);
	if (rc != 0)
		return rc;
	for (uint16_t r = 1; r < t->n_replicas; r++)
		if ((w[r][0] & ~DTXN_BUCKET_OVERFLOW) > (w[src][0] & ~DTXN_BUCKET_OVERFLOW))
			src = r;
	if (src == 0)
		return 0;
	dtxn_batch_init(&b, c);
	dtxn_batch_write(&b, raddr + sizeof(uint64_t), w[src], len, true);
	return dtxn_recovery_run(rec, &b);
}

/** Bytes of a table's primary READ at once by the unlock scan. */
#define RECOVER_SCAN_CHUNK (256u * 1024u)
/** CASes in one batch of the unlock scan. */
#define RECOVER_SCAN_CAS 64u

/* Releases the held words found in @p n buckets at @p buf (primary address @p ra). */
struct scan_visit {
	void (*fn)(struct dtxn_recovery *rec, const struct dtxn_table *t, const void *slot,
		   dtxn_raddr_t raddr, void *arg);
	void (*bucket)(struct dtxn_recovery *rec, const struct dtxn_table *t, const void *img,
		       dtxn_raddr_t raddr, uint64_t x, void *arg);
	void *arg;
};

/*
 * Whether a lock word @p w is released: by its owner (@p all false: a dead
 * coordinator's txn id, word & @p mask), or every bit but @p mask (@p all:
 * lock words that name no owner, survivors fenced). *@p to: its new value.
 */
static bool
scan_held(const struct dtxn_recovery *rec, uint64_t w, uint64_t mask, bool all, uint64_t *to)
{
	if (all) {
		*to = w & mask;
		return (w & ~mask) != 0;
	}
	*to = 0;
	return dtxn_recovery_owns(rec, w & mask);
}

static int
scan_release(struct dtxn_coord *c, struct dtxn_recovery *rec, struct dtxn_recovery_step *st,
	     const struct dtxn_table *t, const char *buf, dtxn_raddr_t ra, uint64_t n,
	     uint32_t lock_off, uint64_t id_mask, bool all, const struct scan_visit *v)
{
	uint64_t old[RECOVER_SCAN_CAS];
	uint64_t want[RECOVER_SCAN_CAS];
	struct dtxn_batch b;
	unsigned k = 0;
	int rc = 0;

	dtxn_batch_init(&b, c);
	for (uint64_t i = 0; i < n; i++) {
		for (uint32_t s = 0; s <= t->def.slots_per_bucket; s++) {
			/* word 0: the bucket header's lock; then each slot's */
			uint64_t off = i * t->bucket_size +
				       (s == 0 ? 0 : t->bucket_hdr_size +
						     (uint64_t)(s - 1) * t->slot_size + lock_off);
			uint64_t w, to;

			if (s != 0 && v->fn != NULL &&
			    (((const struct dtxn_slot_hdr *)(const void *)(buf + off - lock_off))->flags &
			     DTXN_SLOT_VALID))
				v->fn(rec, t, buf + off - lock_off, ra + off - lock_off, v->arg);
			if (s != 0 && lock_off == DTXN_RECOVERY_LOCK_NONE)
				continue; /* the protocol's slots carry no lock word */
			memcpy(&w, buf + off, 8);
			/* a bucket header's lock always names its owner (lib/txn) */
			if (!scan_held(rec, w, s == 0 && all ? UINT64_MAX : id_mask, all && s != 0,
				       &to))
				continue;
			if (s == 0 && v->bucket != NULL) /* before its lock goes */
				v->bucket(rec, t, buf + off, ra + off, w, v->arg);
			want[k] = w;
			dtxn_batch_cas(&b, ra + off, &old[k], w, to, true);
			if (++k < RECOVER_SCAN_CAS)
				continue;
			rc = dtxn_recovery_run(rec, &b);
			for (unsigned j = 0; j < k && rc == 0; j++)
				st->work += old[j] == want[j];
			k = 0;
			dtxn_batch_init(&b, c);
			if (rc != 0)
				return rc;
		}
	}
	if (k == 0)
		return 0;
	rc = dtxn_recovery_run(rec, &b);
	for (unsigned j = 0; j < k && rc == 0; j++)
		st->work += old[j] == want[j];
	return rc;
}

static int
scan(struct dtxn_coord *c, struct dtxn_recovery *rec, uint32_t lock_off, uint64_t id_mask, bool all,
     const struct scan_visit *vp)
{
	const struct scan_visit v = *vp;
	const struct dtxn_catalog *cat = &c->worker->db->cat;
	struct dtxn_recovery_step *st = dtxn_recovery_step_begin(rec, "unlock", "locks");
	char *buf = dtxn_recovery_alloc(c, RECOVER_SCAN_CHUNK, false);
	int rc = 0;

	if (buf == NULL)
		return -ENOMEM;
	for (uint32_t id = 0; id < DTXN_MAX_TABLES && rc == 0; id++) {
		const struct dtxn_table *t = dtxn_catalog_table(cat, id);
		uint64_t per, done = 0;

		uint32_t loff = lock_off;

		if (t == NULL)
			continue;
		if (lock_off == DTXN_RECOVERY_LOCK_LAST)
			loff = t->slot_size - 8;
		per = RTE_MAX(RECOVER_SCAN_CHUNK / t->bucket_size, (uint64_t)1);
		if (t->bucket_size > RECOVER_SCAN_CHUNK) {
			rc = -ENOMEM;
			break;
		}
		while (done < t->n_buckets && rc == 0) {
			/* one READ stays within a stripe (contiguous on its MN) */
			uint64_t n = RTE_MIN(RTE_MIN(per, t->n_buckets - done),
					     t->stripe_buckets - done % t->stripe_buckets);
			dtxn_raddr_t ra = dtxn_store_bucket_raddr(t, 0, done);
			struct dtxn_batch b;

			dtxn_batch_init(&b, c);
			dtxn_batch_read(&b, ra, buf, (uint32_t)(n * t->bucket_size), true);
			rc = dtxn_recovery_run(rec, &b);
			if (rc == 0)
				rc = scan_release(c, rec, st, t, buf, ra, n, loff, id_mask, all, &v);
			done += n;
		}
	}
	dtxn_recovery_free(c, buf);
	rec->locks_released += st->work;
	dtxn_recovery_step_end(st);
	return rc;
}

int
dtxn_recovery_unlock_scan(struct dtxn_coord *c, struct dtxn_recovery *rec, uint32_t lock_off,
			  uint64_t id_mask,
			  void (*visit)(struct dtxn_recovery *rec, const struct dtxn_table *t,
					const void *slot, dtxn_raddr_t raddr, void *arg),
			  void *arg)
{
	const struct scan_visit v = { .fn = visit, .arg = arg };

	return scan(c, rec, lock_off, id_mask, false, &v);
}

int
dtxn_recovery_unlock_scan_buckets(struct dtxn_coord *c, struct dtxn_recovery *rec,
				  uint32_t lock_off, uint64_t id_mask,
				  void (*slot)(struct dtxn_recovery *rec, const struct dtxn_table *t,
					       const void *img, dtxn_raddr_t raddr, void *arg),
				  void (*bucket)(struct dtxn_recovery *rec, const struct dtxn_table *t,
						 const void *img, dtxn_raddr_t raddr, uint64_t x,
						 void *arg),
				  void *arg)
{
	const struct scan_visit v = { .fn = slot, .bucket = bucket, .arg = arg };

	return scan(c, rec, lock_off, id_mask, false, &v);
}

int
dtxn_recovery_unlock_scan_all(struct dtxn_coord *c, struct dtxn_recovery *rec, uint32_t lock_off,
			      uint64_t keep_mask)
{
	const struct scan_visit v = { .fn = NULL };

	return scan(c, rec, lock_off, keep_mask, true, &v);
}

/* Adds @p id to the list @p ids of *@p n entries, once. */
static void
note_id(uint64_t *ids, unsigned *n, uint64_t id)
{
	for (unsigned i = 0; i < *n; i++)
		if (ids[i] == id)
			return;
	if (*n < DTXN_RECOVERY_MAX_VISIBLE)
		ids[(*n)++] = id;
}

void
dtxn_recovery_note_visible(struct dtxn_recovery *rec, uint64_t id)
{
	note_id(rec->visible, &rec->n_visible, id);
}

void
dtxn_recovery_note_undone(struct dtxn_recovery *rec, uint64_t id)
{
	note_id(rec->undone, &rec->n_undone, id);
}

bool
dtxn_recovery_note_undone_open(struct dtxn_recovery *rec, uint32_t gid)
{
	for (unsigned i = 0; i < rec->n_undone_open; i++)
		if (rec->undone_open[i] == gid)
			return false;
	if (rec->n_undone_open < DTXN_RECOVERY_MAX_VISIBLE)
		rec->undone_open[rec->n_undone_open++] = gid;
	return true;
}

int
dtxn_recovery_verdict(const struct dtxn_recovery *rec, uint64_t id, bool open)
{
	if (rec == NULL)
		return 0;
	for (unsigned v = 0; v < rec->n_undone; v++)
		if (rec->undone[v] == id)
			return -1;
	for (unsigned v = 0; open && v < rec->n_undone_open; v++)
		if (rec->undone_open[v] == dtxn_txn_id_gid(id))
			return -1;
	for (unsigned v = 0; v < rec->n_visible; v++)
		if (rec->visible[v] == id)
			return 1;
	return 0;
}

int
dtxn_recovery_read_logs(struct dtxn_coord *c, struct dtxn_recovery *rec, uint32_t gid,
			uint32_t len, void *buf, bool replicated)
{
	const struct dtxn_catalog *cat = &c->worker->db->cat;
	uint16_t n = cat->n_mn;
	struct dtxn_batch b;
	int rc;

	/* where posted WRs die with their CN, a record's chain may have
	 * reached some MNs only: MN 0's copy need not hold the newest one */
	if (replicated && dtxn_fabric_posted_survives(c->worker->db->fabric)) {
		n = 1;
		for (uint32_t id = 0; id < DTXN_MAX_TABLES; id++) {
			const struct dtxn_table *t = dtxn_catalog_table(cat, id);

			if (t != NULL && t->n_replicas < cat->n_mn)
				n = cat->n_mn; /* some MN lacks some records */
		}
	}
	dtxn_batch_init(&b, c);
	for (uint16_t mn = 0; mn < n; mn++)
		dtxn_batch_read(&b, dtxn_store_log_raddr(cat, gid, mn), (char *)buf + (size_t)mn * len,
				len, true);
	rc = dtxn_recovery_run(rec, &b);
	return rc == 0 ? n : rc;
}

const struct dtxn_log_hdr *
dtxn_recovery_log_latest(const void *log, uint64_t log_bytes, uint32_t gid)
{
	const struct dtxn_log_hdr *best = NULL;
	uint64_t off = 0, last_id = 0;

	while (off + sizeof(struct dtxn_log_hdr) <= log_bytes) {
		const struct dtxn_log_hdr *h = (const void *)((const char *)log + off);
		const char *p = (const char *)(h + 1);
		uint64_t need = sizeof(*h);

		if (h->n_entries == 0 || h->bytes == 0 || h->bytes % 64 != 0 ||
		    h->bytes > log_bytes - off)
			break;
		if (h->txn_id == 0) {
			off += h->bytes; /* voided after its txn aborted */
			continue;
		}
		if (h->txn_id <= last_id || dtxn_txn_id_gid(h->txn_id) != gid)
			break;
		for (uint32_t e = 0; e < h->n_entries && need <= h->bytes; e++) {
			const struct dtxn_log_entry *en = (const void *)(p + need - sizeof(*h));

			if (need + sizeof(*en) > h->bytes)
				break;
			need += sizeof(*en) + en->slot_size;
		}
		if (need > h->bytes || RTE_ALIGN_CEIL(need, 64) != h->bytes ||
		    !dtxn_txn_log_intact(h))
			break; /* torn: its txn had not begun its writes */
		best = h;
		last_id = h->txn_id;
		off += h->bytes;
	}
	return best;
}

int
dtxn_recovery_chains_apply(struct dtxn_coord *c, struct dtxn_recovery *rec,
			   const struct dtxn_recovery_logfmt *f)
{
	const struct dtxn_catalog *cat = &c->worker->db->cat;
	const uint64_t room = f->room != 0 ? f->room : cat->log_bytes;
	const uint32_t g_first = f->gid_end != 0 ? 0 : rec->gid_first;
	const uint32_t g_end = f->gid_end != 0 ? f->gid_end : rec->gid_first + rec->n_gids;
	struct dtxn_recovery_step *st = dtxn_recovery_step_begin(rec, f->step, f->unit);
	char *logs = dtxn_recovery_alloc(c, room * cat->n_mn, false);
	int rc = logs == NULL ? -ENOMEM : 0;

	for (uint32_t g = g_first; g < g_end && rc == 0; g++) {
		const void *newest = NULL;
		uint64_t newest_id = 0;
		int n;

		if (f->gid_end != 0 && !dtxn_recovery_gid_dead(rec, cat->n_mn, g))
			continue;
		n = dtxn_recovery_read_logs(c, rec, g, (uint32_t)room, logs, true);
		rc = RTE_MIN(n, 0);
		for (int mn = 0; mn < n; mn++) {
			uint64_t id = 0;
			const void *h = f->latest(logs + (size_t)mn * room, room, g, &id);

			if (h != NULL && (newest == NULL || id > newest_id)) {
				newest = h;
				newest_id = id;
			}
		}
		if (rc == 0 && newest != NULL) {
			st->work++;
			rc = f->apply(c, rec, newest, f->arg);
		}
	}
	dtxn_recovery_free(c, logs);
	dtxn_recovery_step_end(st);
	return rc;
}

/* dtxn_recovery_logs_apply()'s format: struct dtxn_log_hdr records. */
static const void *
logs_latest(const void *log, uint64_t room, uint32_t gid, uint64_t *txn_id)
{
	const struct dtxn_log_hdr *h = dtxn_recovery_log_latest(log, room, gid);

	*txn_id = h != NULL ? h->txn_id : 0;
	return h;
}

static int
logs_apply(struct dtxn_coord *c, struct dtxn_recovery *rec, const void *h, void *arg)
{
	int (*const *apply)(struct dtxn_coord *, struct dtxn_recovery *,
			    const struct dtxn_log_hdr *) = arg;

	return (*apply)(c, rec, h);
}

int
dtxn_recovery_logs_apply(struct dtxn_coord *c, struct dtxn_recovery *rec, const char *step,
			 int (*apply)(struct dtxn_coord *c, struct dtxn_recovery *rec,
				      const struct dtxn_log_hdr *h))
{
	const struct dtxn_recovery_logfmt f = {
		.step = step, .unit = "records", .latest = logs_latest, .apply = logs_apply,
		.arg = (void *)&apply,
	};

	return dtxn_recovery_chains_apply(c, rec, &f);
}
