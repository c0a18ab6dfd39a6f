/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The direct serialization graph of a history (Adya 1999, §3.2-3.3).
 *
 * Nodes are the recorded transactions (aborted ones get no edge). Each
 * key's version order comes from the writes' overwritten versions: a
 * write with pre-version p follows p. If several committed writes claim
 * the same p (a lost update), they follow p in txn-id order; any order
 * yields the same anomaly. Edges:
 *   ww  p -> first writer over p, and writer -> next writer over p;
 *   wr  writer of the version read -> reader;
 *   rw  reader of version v -> the first writer over v (anti-dependency).
 * A read of an absent key anti-depends on the insert that followed only
 * when that is unambiguous (one insert over "absent", no delete of the
 * key, and a complete history); otherwise it is counted as unresolved and
 * draws no edge. A txn
 * that reads or overwrites its own version (its id) is garbage: that
 * version exists only once it committed.
 *
 * Cost: one pass to index txn ids (hash map), one sort of the writes (the
 * only O(n log n) step), two hash maps over them ((key, writer) and
 * (key, overwritten version)), one pass over the reads with hash lookups,
 * a counting sort of the edges into CSR form.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_private.h"

/* ------------------------------------------------------------------ */
/* txn id -> index                                                    */
/* ------------------------------------------------------------------ */

static inline uint64_t
idmap_hash(uint64_t x)
{
	x ^= x >> 33;
	x *= UINT64_C(0xff51afd7ed558ccd);
	x ^= x >> 33;
	x *= UINT64_C(0xc4ceb9fe1a85ec53);
	x ^= x >> 33;
	return x;
}

static int
idmap_init(struct chk_idmap *m, uint64_t n)
{
	uint64_t cap = 16;

	while (cap < 2 * n)
		cap <<= 1;
	m->slots = calloc(cap, sizeof(*m->slots));
	m->mask = cap - 1;
	return m->slots != NULL ? 0 : -ENOMEM;
}

/* @return 0, or -EEXIST if @p id is there already. */
static int
idmap_insert(struct chk_idmap *m, uint64_t id, uint32_t idx, bool committed)
{
	uint64_t h = idmap_hash(id) & m->mask;

	while (m->slots[h].id != 0) {
		if (m->slots[h].id == id)
			return -EEXIST;
		h = (h + 1) & m->mask;
	}
	m->slots[h].id = id;
	m->slots[h].idx = idx;
	m->slots[h].committed = committed;
	return 0;
}

const struct chk_idmap_slot *
chk_idmap_find(const struct chk_idmap *m, uint64_t id)
{
	uint64_t h = idmap_hash(id) & m->mask;

	if (id == 0)
		return NULL;
	while (m->slots[h].id != 0) {
		if (m->slots[h].id == id)
			return &m->slots[h];
		h = (h + 1) & m->mask;
	}
	return NULL;
}

/* ------------------------------------------------------------------ */
/* (table, key, version) -> u32                                       */
/* ------------------------------------------------------------------ */

static inline uint64_t
vmap_hash(uint32_t table, uint64_t key, uint64_t ver)
{
	return idmap_hash(key ^ (ver * UINT64_C(0x9e3779b97f4a7c15)) ^
			  ((uint64_t)table << 47 | (uint64_t)table >> 17));
}

static int
vmap_init(struct chk_vmap *m, uint64_t n)
{
	uint64_t cap = 16;

	while (cap < 2 * n)
		cap <<= 1;
	m->slots = malloc(cap * sizeof(*m->slots));
	if (m->slots == NULL)
		return -ENOMEM;
	for (uint64_t i = 0; i < cap; i++)
		m->slots[i].val = UINT32_MAX;
	m->mask = cap - 1;
	return 0;
}

/* Adds (table, key, ver) -> val unless present. */
static void
vmap_add(struct chk_vmap *m, uint32_t table, uint64_t key, uint64_t ver, uint32_t val)
{
	uint64_t h = vmap_hash(table, key, ver) & m->mask;
	struct chk_vmap_slot *s;

	for (s = &m->slots[h]; s->val != UINT32_MAX; s = &m->slots[h]) {
		if (s->key == key && s->ver == ver && s->table == table)
			return;
		h = (h + 1) & m->mask;
	}
	s->key = key;
	s->ver = ver;
	s->table = table;
	s->val = val;
}

/* @return the value of (table, key, ver), or UINT32_MAX. */
static uint32_t
vmap_find(const struct chk_vmap *m, uint32_t table, uint64_t key, uint64_t ver)
{
	uint64_t h = vmap_hash(table, key, ver) & m->mask;
	const struct chk_vmap_slot *s;

	for (s = &m->slots[h]; s->val != UINT32_MAX; s = &m->slots[h]) {
		if (s->key == key && s->ver == ver && s->table == table)
			return s->val;
		h = (h + 1) & m->mask;
	}
	return UINT32_MAX;
}

/* ------------------------------------------------------------------ */
/* Building                                                           */
/* ------------------------------------------------------------------ */

struct gb {
	struct chk_graph *g;
	struct dtxn_check_report *rep;
	uint32_t i;
	int rc;
	/* edges being gathered */
	uint32_t *src, *val;
	uint64_t n, cap;
	uint32_t *widx;   /* per item of the current txn: its w[] entry */
	unsigned max_items; /* items of the largest txn */
};

static int
gb_index(const struct dtxn_hist_txn *t, void *arg)
{
	struct gb *b = arg;
	struct chk_graph *g = b->g;

	if (!hist_id_valid(t->id)) {
		snprintf(b->rep->error, sizeof(b->rep->error),
			 "transaction id %#llx is reserved (0, absent, none)",
			 (unsigned long long)t->id);
		return -EINVAL;
	}
	if (idmap_insert(&g->map, t->id, b->i, t->status == DTXN_HIST_COMMITTED) != 0) {
		snprintf(b->rep->error, sizeof(b->rep->error),
			 "transaction id %#llx appears twice", (unsigned long long)t->id);
		return -EINVAL;
	}
	g->txn[b->i++] = t;
	if (t->n_items > b->max_items)
		b->max_items = t->n_items;
	if (t->status == DTXN_HIST_COMMITTED) {
		b->rep->committed++;
		b->rep->items += t->n_items;
	} else {
		b->rep->aborted++;
	}
	return 0;
}

static inline bool
same_key(const struct dtxn_hist_item *a, const struct dtxn_hist_item *b)
{
	return a->table == b->table && a->key == b->key;
}

static uint64_t
count_writes(const struct chk_graph *g)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < g->n; i++) {
		const struct dtxn_hist_txn *t = g->txn[i];

		if (t->status != DTXN_HIST_COMMITTED)
			continue;
		for (unsigned k = 0; k < t->n_items; k++)
			n += hist_item_writes(&t->items[k]);
	}
	return n;
}

static void
note_read_anom(struct chk_read_anom *ra, uint32_t reader, uint64_t writer,
	       const struct dtxn_hist_item *it)
{
	if (ra->count++ == 0) {
		ra->reader = reader;
		ra->writer_id = writer;
		ra->table = it->table;
		ra->key = it->key;
	}
}

/* One w[] entry per committed (txn, key) written; later writes of the key counted in it. */
static void
fill_writes(struct gb *b)
{
	struct chk_graph *g = b->g;

	g->n_w = 0;
	for (uint32_t i = 0; i < g->n; i++) {
		const struct dtxn_hist_txn *t = g->txn[i];

		if (t->status != DTXN_HIST_COMMITTED)
			continue;
		for (unsigned k = 0; k < t->n_items; k++) {
			const struct dtxn_hist_item *it = &t->items[k];
			struct chk_write *w;
			unsigned j;

			if (!hist_item_writes(it))
				continue;
			for (j = 0; j < k; j++)
				if (hist_item_writes(&t->items[j]) && same_key(&t->items[j], it))
					break;
			if (j < k) {
				w = &g->w[b->widx[j]];
				if (w->n_writes < UINT16_MAX)
					w->n_writes++;
				w->del |= (it->flags & DTXN_HIST_F_DELETE) != 0;
				b->widx[k] = b->widx[j];
				continue;
			}
			b->widx[k] = (uint32_t)g->n_w;
			w = &g->w[g->n_w++];
			memset(w, 0, sizeof(*w));
			w->table = it->table;
			w->key = it->key;
			w->pre = it->ver;
			w->id = t->id;
			w->txn = i;
			w->n_writes = 1;
			w->del = (it->flags & DTXN_HIST_F_DELETE) != 0;
			if (it->ver == t->id) {
				/* over its own version, which only its commit installs:
				 * garbage (an RMW is noted as a read), kept out of the
				 * version order */
				if (it->op == DTXN_HIST_WRITE)
					note_read_anom(&g->garbage, i, t->id, it);
				w->pre = DTXN_HIST_VER_NONE;
			}
		}
	}
}

static int
cmp_write(const void *pa, const void *pb)
{
	const struct chk_write *a = pa, *b = pb;

	if (a->table != b->table)
		return a->table < b->table ? -1 : 1;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	if (a->pre != b->pre)
		return a->pre < b->pre ? -1 : 1;
	if (a->id != b->id)
		return a->id < b->id ? -1 : 1;
	return 0;
}

/*
 * Over the sorted writes: marks every entry of a key some committed write
 * deletes, and fills the maps (key, writer) and (key, version overwritten).
 */
static void
index_writes(struct chk_graph *g)
{
	size_t a = 0;

	while (a < g->n_w) {
		size_t e = a;
		uint8_t del = 0;

		while (e < g->n_w && g->w[e].table == g->w[a].table && g->w[e].key == g->w[a].key)
			del |= g->w[e++].del;
		for (size_t i = a; i < e; i++) {
			struct chk_write *w = &g->w[i];

			w->key_has_delete = del;
			vmap_add(&g->by_writer, w->table, w->key, w->id, (uint32_t)i);
			if (i == a || w->pre != w[-1].pre)
				vmap_add(&g->by_pre, w->table, w->key, w->pre, (uint32_t)i);
		}
		a = e;
	}
}

/* First w[] entry of version (table, key, pre): its first overwriter; SIZE_MAX if none. */
static size_t
find_group(const struct chk_graph *g, uint32_t table, uint64_t key, uint64_t pre)
{
	uint32_t i = vmap_find(&g->by_pre, table, key, pre);

	return i == UINT32_MAX ? SIZE_MAX : i;
}

/* The w[] entry of txn @p id's write of (table, key), or NULL. */
static const struct chk_write *
find_write(const struct chk_graph *g, uint32_t table, uint64_t key, uint64_t id)
{
	uint32_t i = vmap_find(&g->by_writer, table, key, id);

	return i == UINT32_MAX ? NULL : &g->w[i];
}

static int
gb_edge(struct gb *b, uint32_t from, uint32_t to, unsigned dep)
{
	if (from == to)
		return 0;
	if (b->n == b->cap) {
		uint64_t cap = b->cap ? b->cap * 2 : 1024;
		uint32_t *s, *v;

		if (cap > UINT32_MAX)
			return -E2BIG;
		s = realloc(b->src, cap * sizeof(*s));
		if (s == NULL)
			return -ENOMEM;
		b->src = s;
		v = realloc(b->val, cap * sizeof(*v));
		if (v == NULL)
			return -ENOMEM;
		b->val = v;
		b->cap = cap;
	}
	b->src[b->n] = from;
	b->val[b->n] = CHK_EDGE(to, dep);
	b->n++;
	b->rep->edges[dep]++;
	return 0;
}

/* ww edges along each key's version order. */
static int
gb_ww(struct gb *b)
{
	struct chk_graph *g = b->g;
	size_t a = 0;
	int rc = 0;

	while (a < g->n_w && rc == 0) {
		const struct chk_write *w = &g->w[a];
		size_t e = a + 1;

		while (e < g->n_w && g->w[e].table == w->table && g->w[e].key == w->key &&
		       g->w[e].pre == w->pre)
			e++;
		if (w->pre == DTXN_HIST_VER_NONE || (w->pre == DTXN_HIST_VER_ABSENT && e - a > 1)) {
			b->rep->unresolved += e - a; /* no order among these writes */
			a = e;
			continue;
		}
		if (w->pre != DTXN_HIST_VER_INIT && w->pre != DTXN_HIST_VER_ABSENT) {
			const struct chk_idmap_slot *p = chk_idmap_find(&g->map, w->pre);

			if (p != NULL && p->committed && find_write(g, w->table, w->key, w->pre) != NULL)
				rc = gb_edge(b, p->idx, w->txn, DTXN_DEP_WW);
		}
		for (size_t i = a; i + 1 < e && rc == 0; i++)
			rc = gb_edge(b, g->w[i].txn, g->w[i + 1].txn, DTXN_DEP_WW);
		a = e;
	}
	return rc;
}

/* Whether transactions may be missing from the history: dropped while
 * recording, in a file cut short, or by design (partial). */
static inline bool
incomplete(const struct dtxn_check_report *rep)
{
	return rep->dropped != 0 || rep->cut != 0 || rep->partial;
}

/* wr and rw edges of one read, and the read anomalies. */
static int
gb_read(struct gb *b, uint32_t ti, const struct dtxn_hist_item *it)
{
	struct chk_graph *g = b->g;
	const uint64_t self = g->txn[ti]->id;
	const struct chk_idmap_slot *w;
	const struct chk_write *ww;
	size_t grp;
	int rc;

	if (it->ver == self) {
		/* its own version, which only its commit installs */
		note_read_anom(&g->garbage, ti, self, it);
		return 0;
	}
	if (it->ver == DTXN_HIST_VER_ABSENT) {
		grp = find_group(g, it->table, it->key, DTXN_HIST_VER_ABSENT);
		if (grp == SIZE_MAX)
			return 0; /* never inserted */
		/* an incomplete history may lack a delete and re-insert of the
		 * key between the read and the insert it holds (a peer CN's, a
		 * dead CN's last commit): the insert is not known to follow */
		if (g->w[grp].key_has_delete || incomplete(b->rep) ||
		    (grp + 1 < g->n_w && g->w[grp + 1].table == it->table &&
		     g->w[grp + 1].key == it->key && g->w[grp + 1].pre == DTXN_HIST_VER_ABSENT)) {
			b->rep->unresolved++;
			return 0;
		}
		return gb_edge(b, ti, g->w[grp].txn, DTXN_DEP_RW);
	}
	if (it->ver != DTXN_HIST_VER_INIT) {
		w = chk_idmap_find(&g->map, it->ver);
		if (w == NULL) {
			if (incomplete(b->rep))
				b->rep->unresolved++;
			else
				note_read_anom(&g->garbage, ti, it->ver, it);
			return 0;
		}
		if (!w->committed) {
			note_read_anom(&g->g1a, ti, it->ver, it);
			return 0;
		}
		ww = find_write(g, it->table, it->key, it->ver);
		/* (ww's fields are a cache miss: only read them when wseq asks) */
		if (ww == NULL || (it->wseq != 0 && it->wseq > ww->n_writes)) {
			note_read_anom(&g->garbage, ti, it->ver, it);
			return 0;
		}
		if (it->wseq != 0 && it->wseq < ww->n_writes)
			note_read_anom(&g->g1b, ti, it->ver, it);
		rc = gb_edge(b, w->idx, ti, DTXN_DEP_WR);
		if (rc != 0)
			return rc;
	}
	grp = find_group(g, it->table, it->key, it->ver);
	if (grp == SIZE_MAX)
		return 0; /* the last version of the key */
	return gb_edge(b, ti, g->w[grp].txn, DTXN_DEP_RW);
}

static int
gb_reads(struct gb *b)
{
	struct chk_graph *g = b->g;
	int rc = 0;

	for (uint32_t i = 0; i < g->n && rc == 0; i++) {
		const struct dtxn_hist_txn *t = g->txn[i];

		if (t->status != DTXN_HIST_COMMITTED)
			continue;
		for (unsigned k = 0; k < t->n_items && rc == 0; k++)
			if (hist_item_reads(&t->items[k]))
				rc = gb_read(b, i, &t->items[k]);
	}
	return rc;
}

/* Counting sort of the gathered edges by source into CSR. */
static int
gb_csr(struct gb *b)
{
	struct chk_graph *g = b->g;
	uint64_t *fill;

	g->off = calloc((size_t)g->n + 1, sizeof(*g->off));
	g->adj = malloc((b->n ? b->n : 1) * sizeof(*g->adj));
	fill = malloc(((size_t)g->n + 1) * sizeof(*fill));
	if (g->off == NULL || g->adj == NULL || fill == NULL) {
		free(fill);
		return -ENOMEM;
	}
	for (uint64_t e = 0; e < b->n; e++)
		g->off[b->src[e] + 1]++;
	for (uint32_t i = 0; i < g->n; i++)
		g->off[i + 1] += g->off[i];
	memcpy(fill, g->off, ((size_t)g->n + 1) * sizeof(*fill));
	for (uint64_t e = 0; e < b->n; e++)
		g->adj[fill[b->src[e]]++] = b->val[e];
	g->n_edges = b->n;
	free(fill);
	return 0;
}

int
chk_graph_build(struct chk_graph *g, const struct dtxn_history *h,
		struct dtxn_check_report *rep)
{
	struct gb b = { .g = g, .rep = rep };
	uint64_t n = dtxn_history_txns(h), n_w;
	int rc;

	memset(g, 0, sizeof(*g));
	g->rep = rep;
	rep->dropped = dtxn_history_dropped(h);
	rep->cut = dtxn_history_cut(h);
	rep->partial = dtxn_history_partial(h);
	if (n >= CHK_MAX_TXNS)
		return -E2BIG;
	g->txn = malloc((n ? n : 1) * sizeof(*g->txn));
	rc = g->txn != NULL ? idmap_init(&g->map, n) : -ENOMEM;
	if (rc == 0)
		rc = dtxn_history_foreach(h, gb_index, &b);
	g->n = b.i;
	if (rc != 0)
		goto out;
	b.widx = malloc((b.max_items ? b.max_items : 1) * sizeof(*b.widx));
	if (b.widx == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	n_w = count_writes(g);
	if (n_w >= UINT32_MAX) {
		rc = -E2BIG;
		goto out;
	}
	g->w = malloc((n_w ? n_w : 1) * sizeof(*g->w));
	if (g->w == NULL || vmap_init(&g->by_writer, n_w) != 0 ||
	    vmap_init(&g->by_pre, n_w) != 0) {
		rc = -ENOMEM;
		goto out;
	}
	fill_writes(&b);
	qsort(g->w, g->n_w, sizeof(*g->w), cmp_write);
	index_writes(g);
	rc = gb_ww(&b);
	if (rc == 0)
		rc = gb_reads(&b);
	if (rc == 0)
		rc = gb_csr(&b);
out:
	free(b.src);
	free(b.val);
	free(b.widx);
	return rc;
}

void
chk_graph_free(struct chk_graph *g)
{
	free(g->txn);
	free(g->map.slots);
	free(g->w);
	free(g->by_writer.slots);
	free(g->by_pre.slots);
	free(g->off);
	free(g->adj);
	memset(g, 0, sizeof(*g));
}

/* ------------------------------------------------------------------ */
/* Explaining an edge                                                 */
/* ------------------------------------------------------------------ */

static bool
writes_key(const struct dtxn_hist_txn *t, const struct dtxn_hist_item *k, uint64_t *pre)
{
	for (unsigned i = 0; i < t->n_items; i++)
		if (hist_item_writes(&t->items[i]) && same_key(&t->items[i], k)) {
			if (pre != NULL)
				*pre = t->items[i].ver;
			return true;
		}
	return false;
}

bool
chk_graph_explain(const struct chk_graph *g, uint32_t u, uint32_t v, unsigned dep,
		  uint32_t *table, uint64_t *key)
{
	const struct dtxn_hist_txn *tu = g->txn[u], *tv = g->txn[v];
	const struct dtxn_hist_item *found = NULL;
	uint64_t pre;

	for (unsigned i = 0; i < tv->n_items && found == NULL && dep != DTXN_DEP_RW; i++) {
		const struct dtxn_hist_item *it = &tv->items[i];

		if (dep == DTXN_DEP_WR && hist_item_reads(it) && it->ver == tu->id)
			found = it;
		if (dep == DTXN_DEP_WW && hist_item_writes(it) && it->ver == tu->id)
			found = it;
	}
	/* ww between writers over one version, rw: a key u read and v wrote */
	for (unsigned i = 0; i < tu->n_items && found == NULL && dep != DTXN_DEP_WR; i++) {
		const struct dtxn_hist_item *it = &tu->items[i];

		if (dep == DTXN_DEP_WW && hist_item_writes(it) && writes_key(tv, it, &pre) &&
		    pre == it->ver)
			found = it;
		if (dep == DTXN_DEP_RW && hist_item_reads(it) && writes_key(tv, it, &pre))
			found = it;
	}
	if (found == NULL)
		return false;
	*table = found->table;
	*key = found->key;
	return true;
}
