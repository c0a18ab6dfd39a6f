/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CREST's record cache (crest.md §2, paper §5; doc/guides/crest.md,
 * "Localized execution"): the local objects of the records the local
 * transactions use, with their reference counts, the local 2PL lock, the
 * MN cell locks the lcore holds, the epoch array (the MN's ENs of the
 * cached image), the per-cell read and write TS_exec, and the append-only
 * list of local versions.
 *
 * One cache per worker lcore (cache=lcore, the default), used only by the
 * coordinators of that lcore (coroutines, so nothing here needs an atomic
 * or a lock: ARCHITECTURE.md rule 3); or, with cache=cn on the sim fabric,
 * one per CN shared by all its workers, whose lcores the simulation runs
 * on one OS thread (still no atomic, no lock). See crest.md, "Localized
 * execution" and "A CN-wide cache".
 *
 * Nothing here touches the fabric or yields: execute.c and commit.c wait
 * (by yielding) and post the WRs; this file only decides.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_jhash.h>
#include <rte_malloc.h>
#include <rte_mempool.h>

#include "crest_private.h"

struct lc_key {
	uint64_t key;
	uint32_t table_id;
	uint32_t pad;
};

struct crest_lc {
	TAILQ_HEAD(, crest_lc_obj) idle; /**< objects no txn uses, oldest first */
	bool keep_idle;             /**< keep them (RO mode) */
	struct rte_hash *h;
	struct rte_mempool *imgs;
	struct crest_lc_obj *objs;  /**< by hash position */
	uint32_t img_size;
	uint64_t ts;                /**< last TS_exec handed out */
	uint32_t part;              /**< cache=part: this cache's partition ... */
	uint32_t n_parts;           /**< ... of n_parts (0, 1: not partitioned) */
};

struct crest_lc *
crest_lc_create(const char *name, uint32_t max_objs, uint32_t img_size, uint32_t max_imgs,
		int socket_id)
{
	char hn[RTE_HASH_NAMESIZE];
	struct rte_hash_parameters p = {
		.name = hn,
		.entries = RTE_MAX(max_objs, 8u),
		.key_len = sizeof(struct lc_key),
		.hash_func = rte_jhash,
		.socket_id = socket_id,
		.extra_flag = RTE_HASH_EXTRA_FLAGS_EXT_TABLE,
	};
	struct crest_lc *lc;
	int32_t maxk;

	if (max_objs == 0 || img_size == 0 || max_imgs == 0) {
		rte_errno = EINVAL;
		return NULL;
	}
	lc = rte_zmalloc_socket("crest_lc", sizeof(*lc), RTE_CACHE_LINE_SIZE, socket_id);
	if (lc == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	lc->img_size = img_size;
	TAILQ_INIT(&lc->idle);
	snprintf(hn, sizeof(hn), "%.24s_h", name);
	lc->h = rte_hash_create(&p);
	if (lc->h == NULL)
		goto fail;
	maxk = rte_hash_max_key_id(lc->h);
	if (maxk < 0)
		goto fail;
	lc->objs = rte_zmalloc_socket("crest_lc_objs", ((size_t)maxk + 1) * sizeof(*lc->objs),
				      RTE_CACHE_LINE_SIZE, socket_id);
	snprintf(hn, sizeof(hn), "%.24s_i", name);
	lc->imgs = rte_mempool_create(hn, max_imgs, img_size, 0, 0, NULL, NULL, NULL, NULL,
				      socket_id, RTE_MEMPOOL_F_SP_PUT | RTE_MEMPOOL_F_SC_GET);
	if (lc->objs == NULL || lc->imgs == NULL)
		goto fail;
	return lc;
fail:
	crest_lc_destroy(lc);
	rte_errno = ENOMEM;
	return NULL;
}

void
crest_lc_destroy(struct crest_lc *lc)
{
	if (lc == NULL)
		return;
	rte_hash_free(lc->h);
	rte_mempool_free(lc->imgs);
	rte_free(lc->objs);
	rte_free(lc);
}

void
crest_lc_keep_idle(struct crest_lc *lc, bool keep)
{
	lc->keep_idle = keep;
}

uint64_t
crest_lc_next_ts(struct crest_lc *lc)
{
	return ++lc->ts;
}

/* Frees object @p o (no txn uses it, no version left): its image, its entry. */
static void
lc_free(struct crest_lc *lc, struct crest_lc_obj *o)
{
	const struct lc_key k = { .key = o->key, .table_id = o->table_id };

	if (o->idle) {
		TAILQ_REMOVE(&lc->idle, o, idle_link);
		o->idle = 0;
	}
	rte_mempool_put(lc->imgs, o->base);
	o->base = NULL;
	rte_hash_del_key(lc->h, &k);
}

/* Frees the least recently used idle object. false: none. */
static bool
lc_evict(struct crest_lc *lc)
{
	struct crest_lc_obj *o = TAILQ_FIRST(&lc->idle);

	if (o == NULL)
		return false;
	lc_free(lc, o);
	return true;
}

void
crest_lc_partition(struct crest_lc *lc, uint32_t part, uint32_t n_parts)
{
	lc->part = part;
	lc->n_parts = n_parts;
}

bool
crest_lc_homes(const struct crest_lc *lc, uint64_t key)
{
	return lc->n_parts <= 1 || dtxn_key_shard(key) % lc->n_parts == lc->part;
}

struct crest_lc_obj *
crest_lc_get(struct crest_lc *lc, uint32_t table_id, uint64_t key)
{
	const struct lc_key k = { .key = key, .table_id = table_id };
	struct crest_lc_obj *o;
	int32_t pos;
	void *base;

	if (!crest_lc_homes(lc, key))
		return NULL;
	pos = rte_hash_lookup(lc->h, &k);
	if (pos >= 0) {
		o = &lc->objs[pos];
		if (o->idle) {
			TAILQ_REMOVE(&lc->idle, o, idle_link);
			o->idle = 0;
		}
		o->refs++;
		return o;
	}
	while (rte_mempool_get(lc->imgs, &base) != 0)
		if (!lc_evict(lc))
			return NULL;
	while ((pos = rte_hash_add_key(lc->h, &k)) < 0)
		if (!lc_evict(lc)) {
			rte_mempool_put(lc->imgs, base);
			return NULL;
		}
	o = &lc->objs[pos];
	o->base = base;
	memset(o, 0, offsetof(struct crest_lc_obj, base));
	o->table_id = table_id;
	o->key = key;
	o->refs = 1;
	o->next_seq = 1;
	return o;
}

/*
 * Frees the versions of @p o, all decided; a committed one is composed
 * into the write-back being posted, so its writer's redo entry is no
 * longer needed once that lands. @p unpin NULL (cache=lcore): its log pin
 * is lowered now (RC order on the lcore's QPs: the writer's next log
 * WRITE to an MN follows the write-back there); else (cache=cn) the
 * writer goes to @p unpin, lowered by the caller once the write-back
 * completed.
 */
static void
lc_free_vers(struct crest_lc *lc, struct crest_lc_obj *o, struct crest_lc_txn **unpin,
	     uint32_t *n_unpin)
{
	for (uint32_t v = 0; v < o->n_vers; v++) {
		if (o->vers[v].state == CREST_LC_COMMITTED) {
			if (unpin != NULL)
				unpin[(*n_unpin)++] = o->vers[v].wr.t;
			else
				o->vers[v].wr.t->log_pins--;
		}
		rte_mempool_put(lc->imgs, o->vers[v].img);
	}
	o->n_vers = 0;
}

void
crest_lc_put(struct crest_lc *lc, struct crest_lc_obj *o)
{
	if (--o->refs != 0 || o->lww.writers != 0)
		return;
	lc_free_vers(lc, o, NULL, NULL); /* none left: the last writer freed its round's */
	if (!o->ready || !lc->keep_idle) { /* nothing worth keeping */
		lc_free(lc, o);
		return;
	}
	/* no live txn touched it: TS_exec order constraints end with them */
	memset(o->wts, 0, sizeof(o->wts));
	memset(o->rts, 0, sizeof(o->rts));
	TAILQ_INSERT_TAIL(&lc->idle, o, idle_link);
	o->idle = 1;
}

uint32_t
crest_lc_cacheable(const struct crest_lc_obj *o, uint32_t cells, uint64_t now)
{
	const struct crest_hdr *h = o->base;
	uint32_t ok = 0;

	if (!o->ready || !(h->slot.flags & DTXN_SLOT_VALID) || (h->lock & CREST_LOCK_DELETED))
		return 0;
	for (cells &= ~o->stale; cells != 0; cells &= cells - 1) {
		unsigned c = (unsigned)__builtin_ctz(cells);

		if (!(o->mn_bits & CREST_LOCK_BIT(c)) && now - o->seen_ns[c] < CREST_EN_WRAP_NS / 2)
			ok |= UINT32_C(1) << c;
	}
	return ok;
}

void
crest_lc_confirm(struct crest_lc_obj *o, uint32_t cells, const uint16_t *en, bool ok,
		 uint64_t now)
{
	for (; cells != 0; cells &= cells - 1) {
		unsigned c = (unsigned)__builtin_ctz(cells);

		if (en[c] != o->epoch[c])
			continue; /* the base moved on since (a write-back) */
		if (ok)
			o->seen_ns[c] = now;
		else
			o->stale |= UINT32_C(1) << c;
	}
}

int
crest_lc_lock(struct crest_lc_obj *o, struct crest_lc_txn *lt, bool excl, int held)
{
	if (held == 2 || (held == 1 && !excl))
		return 0;
	if (held == 1) { /* upgrade: the only sharer */
		if (o->s_count != 1)
			return -EBUSY;
		o->s_count = 0;
		o->x_owner = lt;
		return 0;
	}
	if (o->x_owner != NULL || (excl && o->s_count != 0))
		return -EBUSY;
	if (excl)
		o->x_owner = lt;
	else
		o->s_count++;
	return 0;
}

void
crest_lc_unlock(struct crest_lc_obj *o, struct crest_lc_txn *lt, bool excl)
{
	if (excl) {
		if (o->x_owner == lt)
			o->x_owner = NULL;
	} else if (o->s_count != 0) {
		o->s_count--;
	}
}

/* Copies cell @p c (its lines with their versions) from image @p src to @p dst. */
static void
lc_copy_cell(const struct crest_layout *lay, void *dst, const void *src, unsigned c)
{
	memcpy((char *)dst + lay->rec_off[c], (const char *)src + lay->rec_off[c],
	       crest_cell_span(lay, c));
}

void
crest_lc_fill(struct crest_lc *lc, struct crest_lc_obj *o, const struct crest_layout *lay,
	      const void *rec, dtxn_raddr_t raddr, uint32_t cells)
{
	const struct crest_hdr *h = rec;
	const uint64_t now = dtxn_now_ns();

	if (!o->ready) {
		memcpy(o->base, rec, RTE_MIN(lc->img_size, lay->image_size));
		memcpy(o->epoch, h->en, sizeof(o->epoch));
		for (unsigned c = 0; c < CREST_MAX_CELLS; c++)
			o->seen_ns[c] = now;
		o->stale = 0;
		o->raddr = raddr;
		o->ready = 1;
		return;
	}
	for (; cells != 0; cells &= cells - 1) {
		unsigned c = (unsigned)__builtin_ctz(cells);

		lc_copy_cell(lay, o->base, rec, c);
		o->epoch[c] = h->en[c];
		((struct crest_hdr *)o->base)->en[c] = h->en[c];
		o->seen_ns[c] = now;
		o->stale &= ~(UINT32_C(1) << c);
	}
}

/* Whether the base of @p o may be replaced: no local writer holds cells of its record. */
static bool
lc_base_free(const struct crest_lc_obj *o)
{
	return o->mn_bits == 0 && o->lww.writers == 0 && o->n_vers == 0;
}

void
crest_lc_inserted(struct crest_lc *lc, const struct crest_layout *lay, uint32_t table_id,
		  uint64_t key, const void *rec, dtxn_raddr_t raddr)
{
	const struct lc_key k = { .key = key, .table_id = table_id };
	struct crest_lc_obj *o;

	if (!lc->keep_idle && rte_hash_lookup(lc->h, &k) < 0)
		return; /* it would go again at once (crest_lc_put()) */
	o = crest_lc_get(lc, table_id, key);
	if (o == NULL)
		return; /* full: the next reader READs it */
	if (lc_base_free(o)) {
		o->ready = 0; /* every cell from @p rec */
		crest_lc_fill(lc, o, lay, rec, raddr, 0);
		((struct crest_hdr *)o->base)->lock = 0; /* as the commit's unlock leaves it */
	} else {
		o->stale = UINT32_MAX;
	}
	crest_lc_put(lc, o);
}

void
crest_lc_deleted(struct crest_lc *lc, uint32_t table_id, uint64_t key)
{
	const struct lc_key k = { .key = key, .table_id = table_id };
	const int32_t pos = rte_hash_lookup(lc->h, &k);
	struct crest_lc_obj *o;

	if (pos < 0)
		return;
	o = &lc->objs[pos];
	if (o->idle) {
		lc_free(lc, o);
		return;
	}
	/* in use: no cell served from the cache again; the last crest_lc_put() frees it */
	o->stale = UINT32_MAX;
	if (lc_base_free(o))
		o->ready = 0;
}

/* The newest version of @p o that wrote cell @p c and is not aborted, or NULL. */
static const struct crest_lc_ver *
lc_newest(const struct crest_lc_obj *o, unsigned c)
{
	for (uint32_t v = o->n_vers; v-- > 0;) {
		const struct crest_lc_ver *ver = &o->vers[v];

		if ((ver->cells & (UINT32_C(1) << c)) && ver->state != CREST_LC_ABORTED)
			return ver;
	}
	return NULL;
}

/* Whether @p r's txn is decided (ended, or a newer one runs on its coordinator). */
static bool
lc_decided(const struct crest_lc_ref *r)
{
	return r->t->id != r->id || r->t->state != CREST_LC_RUNNING;
}

/* @p lt depends on @p w's txn (undecided): recorded on both sides. */
static int
lc_depend(struct crest_lc_txn *lt, const struct crest_lc_ref *w)
{
	struct crest_lc_txn *wt = w->t;

	if (wt == lt)
		return 0;
	for (uint16_t d = 0; d < lt->n_deps; d++)
		if (lt->deps[d].t == wt && lt->deps[d].id == w->id)
			return 0;
	if (lt->n_deps == CREST_LC_MAX_DEPS || wt->n_dependents == CREST_LC_MAX_DEPS)
		return -ENOSPC;
	lt->deps[lt->n_deps++] = *w;
	wt->dependents[wt->n_dependents++] = (struct crest_lc_ref){ .t = lt, .id = lt->id };
	return 0;
}

int
crest_lc_read(struct crest_lc_obj *o, struct crest_lc_txn *lt, const struct crest_layout *lay,
	      uint32_t cells, void *rec, struct crest_lc_seen *seen)
{
	for (; cells != 0; cells &= cells - 1) {
		unsigned c = (unsigned)__builtin_ctz(cells);
		const struct crest_lc_ver *ver = NULL;

		if (lt->ts != 0 && o->wts[c] > lt->ts)
			return -EAGAIN;
		if (o->mn_bits & CREST_LOCK_BIT(c)) {
			ver = lc_newest(o, c);
			if (seen->loc_cells == 0)
				seen->gen = o->lock_gen;
			seen->loc_cells |= UINT32_C(1) << c;
		}
		if (ver != NULL && !lc_decided(&ver->wr) && lc_depend(lt, &ver->wr) != 0)
			return -ENOSPC;
		lc_copy_cell(lay, rec, ver != NULL ? ver->img : o->base, c);
		((struct crest_hdr *)rec)->en[c] = o->epoch[c];
	}
	return 0;
}

void
crest_lc_note_read(struct crest_lc_obj *o, const struct crest_lc_txn *lt, uint32_t cells)
{
	for (; cells != 0; cells &= cells - 1) {
		unsigned c = (unsigned)__builtin_ctz(cells);

		o->rts[c] = RTE_MAX(o->rts[c], lt->ts);
	}
}

int64_t
crest_lc_append(struct crest_lc *lc, struct crest_lc_obj *o, struct crest_lc_txn *lt,
		const struct crest_layout *lay, const void *rec, uint32_t cells)
{
	struct crest_lc_ver *ver;

	for (uint32_t m = cells; m != 0; m &= m - 1) {
		unsigned c = (unsigned)__builtin_ctz(m);

		if (o->wts[c] > lt->ts || o->rts[c] > lt->ts)
			return -EAGAIN;
	}
	if (o->n_vers == CREST_LC_MAX_VERS)
		return -ENOSPC;
	ver = &o->vers[o->n_vers];
	while (rte_mempool_get(lc->imgs, &ver->img) != 0)
		if (!lc_evict(lc)) /* idle objects give way to versions */
			return -ENOSPC;
	memcpy(ver->img, rec, RTE_MIN(lc->img_size, lay->image_size));
	ver->wr = (struct crest_lc_ref){ .t = lt, .id = lt->id };
	ver->tag = lt->ts;
	ver->seq = o->next_seq++;
	ver->cells = cells;
	ver->state = CREST_LC_RUNNING;
	ver->durable = 0;
	o->n_vers++;
	for (uint32_t m = cells; m != 0; m &= m - 1)
		o->wts[__builtin_ctz(m)] = lt->ts;
	return (int64_t)ver->seq;
}

/* The version of @p o appended at sequence @p seq, or NULL (written back since). */
static struct crest_lc_ver *
lc_ver_of(struct crest_lc_obj *o, uint64_t seq)
{
	for (uint32_t v = 0; v < o->n_vers; v++)
		if (o->vers[v].seq == seq)
			return &o->vers[v];
	return NULL;
}

void
crest_lc_decide(struct crest_lc_obj *o, uint64_t seq, bool committed, bool durable)
{
	struct crest_lc_ver *ver = lc_ver_of(o, seq);

	if (ver != NULL) {
		ver->state = committed ? CREST_LC_COMMITTED : CREST_LC_ABORTED;
		ver->durable = committed && durable;
	}
}

void
crest_lc_persisted(struct crest_lc_obj *o, uint64_t seq)
{
	struct crest_lc_ver *ver = lc_ver_of(o, seq);

	if (ver != NULL && ver->state == CREST_LC_COMMITTED)
		ver->durable = 1;
}

bool
crest_lc_undurable(const struct crest_lc_obj *o, const struct crest_lc_txn *lt)
{
	for (uint32_t v = 0; v < o->n_vers; v++) {
		const struct crest_lc_ver *ver = &o->vers[v];

		if (ver->state == CREST_LC_COMMITTED && !ver->durable && ver->wr.t != lt)
			return true;
	}
	return false;
}

void
crest_lc_txn_begin(struct crest_lc_txn *lt, uint64_t id)
{
	lt->id = id;
	lt->ts = 0;
	lt->state = CREST_LC_RUNNING;
	lt->doomed = 0;
	lt->n_deps = 0;
	lt->n_dependents = 0;
}

void
crest_lc_txn_end(struct crest_lc_txn *lt, bool committed)
{
	if (!committed)
		for (uint16_t d = 0; d < lt->n_dependents; d++)
			if (lt->dependents[d].t->id == lt->dependents[d].id)
				lt->dependents[d].t->doomed = 1;
	lt->state = committed ? CREST_LC_COMMITTED : CREST_LC_ABORTED;
}

bool
crest_lc_deps_decided(const struct crest_lc_txn *lt)
{
	for (uint16_t d = 0; d < lt->n_deps; d++)
		if (!lc_decided(&lt->deps[d]))
			return false;
	return true;
}

/* The MN locks are given back: readers under them must not trust what they read. */
static void
lc_unlocked(struct crest_lc *lc, struct crest_lc_obj *o, struct crest_lc_txn **unpin,
	    uint32_t *n_unpin)
{
	lc_free_vers(lc, o, unpin, n_unpin);
	o->admitted = 0;
	o->mn_bits = 0;
	o->lock_gen++;
}

uint32_t
crest_lc_compose(struct crest_lc *lc, struct crest_lc_obj *o, const struct crest_layout *lay,
		 struct crest_lc_txn **unpin, uint32_t *n_unpin)
{
	struct crest_hdr *h = o->base;
	uint32_t out = 0;

	for (unsigned c = 0; c < lay->n_cells; c++) {
		const struct crest_lc_ver *ver = NULL;

		for (uint32_t v = o->n_vers; v-- > 0 && ver == NULL;)
			if ((o->vers[v].cells & (UINT32_C(1) << c)) &&
			    o->vers[v].state == CREST_LC_COMMITTED)
				ver = &o->vers[v];
		if (ver == NULL)
			continue;
		lc_copy_cell(lay, o->base, ver->img, c);
		h->en[c] = ++o->epoch[c]; /* as the write-back will leave the MN */
		o->stale &= ~(UINT32_C(1) << c);
		o->seen_ns[c] = dtxn_now_ns();
		for (unsigned k = 0; k < lay->n_lines[c]; k++) {
			uint64_t *lv = crest_line_ver(o->base, lay, c, k);

			*lv = CREST_VER(h->en[c], CREST_VER_TS(*lv));
		}
		out |= UINT32_C(1) << c;
	}
	lc_unlocked(lc, o, unpin, n_unpin);
	return out;
}

void
crest_lc_drop(struct crest_lc *lc, struct crest_lc_obj *o)
{
	lc_unlocked(lc, o, NULL, NULL); /* nothing committed: no pin */
}
