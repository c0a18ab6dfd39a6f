/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Cycles of the serialization graph: Tarjan's strongly connected
 * components (iterative, O(V + E)) over the edges a mode follows, then,
 * for up to CYC_MAX_WITNESS witness edges u -> v lying inside an SCC, a
 * BFS from v back to u inside that SCC: u -> v plus the path is a
 * shortest cycle through that edge. The shortest of those is reported.
 *
 * Mode SI runs on a derived graph with two nodes per txn, (t, 0) "may
 * take an rw edge next" and (t, 1) "just took one": ww/wr edges lead to
 * (v, 0) from both, rw edges only from (u, 0) to (v, 1). Its cycles are
 * exactly the closed walks without two adjacent rw edges (Cerone and
 * Gotsman's characterization of SI); a witness is an rw edge.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check_private.h"

#define CYC_UNSET UINT32_MAX
/** Witness edges tried, in all, and per SCC. */
#define CYC_MAX_WITNESS 32
#define CYC_PER_SCC 4

struct cyc {
	const struct chk_graph *g;
	enum chk_mode mode;
	uint32_t n;          /* nodes */
	uint32_t *comp;      /* SCC of each node */
	uint32_t n_comp;
};

static inline uint32_t
cyc_txn(enum chk_mode mode, uint32_t x)
{
	return mode == CHK_MODE_SI ? x >> 1 : x;
}

static inline uint64_t
cyc_first(const struct cyc *c, uint32_t x)
{
	return c->g->off[cyc_txn(c->mode, x)];
}

static inline uint64_t
cyc_end(const struct cyc *c, uint32_t x)
{
	return c->g->off[cyc_txn(c->mode, x) + 1];
}

/* Next out-edge of @p x the mode follows, from CSR position *pos. */
static inline uint32_t
cyc_next(const struct cyc *c, uint32_t x, uint64_t *pos, uint64_t end, unsigned *dep)
{
	const unsigned state = c->mode == CHK_MODE_SI ? x & 1 : 0;

	while (*pos < end) {
		uint32_t e = c->g->adj[(*pos)++];
		unsigned d = CHK_EDGE_DEP(e);
		uint32_t v = CHK_EDGE_DST(e);

		switch (c->mode) {
		case CHK_MODE_WW:
			if (d != DTXN_DEP_WW)
				continue;
			break;
		case CHK_MODE_WWWR:
			if (d == DTXN_DEP_RW)
				continue;
			break;
		case CHK_MODE_ALL:
			break;
		case CHK_MODE_SI:
			if (d == DTXN_DEP_RW) {
				if (state != 0)
					continue;
				v = v * 2 + 1;
			} else {
				v = v * 2;
			}
			break;
		}
		*dep = d;
		return v;
	}
	return CYC_UNSET;
}

/* Is an edge of type @p dep a witness of the mode's anomaly? */
static inline bool
cyc_witness(enum chk_mode mode, unsigned dep)
{
	switch (mode) {
	case CHK_MODE_WW:
		return dep == DTXN_DEP_WW;
	case CHK_MODE_WWWR:
		return dep == DTXN_DEP_WR;
	default:
		return dep == DTXN_DEP_RW;
	}
}

/* Tarjan's SCC, iterative; fills c->comp and c->n_comp. */
static int
cyc_scc(struct cyc *c)
{
	const uint32_t n = c->n;
	uint32_t *idx = malloc((size_t)n * sizeof(*idx));
	uint32_t *low = malloc((size_t)n * sizeof(*low));
	uint32_t *stk = malloc((size_t)n * sizeof(*stk));
	uint32_t *cs = malloc((size_t)n * sizeof(*cs));
	uint64_t *cpos = malloc((size_t)n * sizeof(*cpos));
	uint32_t counter = 0, sp = 0, top = 0;
	int rc = 0;

	c->comp = malloc((size_t)n * sizeof(*c->comp));
	if (idx == NULL || low == NULL || stk == NULL || cs == NULL || cpos == NULL ||
	    c->comp == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	memset(idx, 0xff, (size_t)n * sizeof(*idx));
	memset(c->comp, 0xff, (size_t)n * sizeof(*c->comp));
	c->n_comp = 0;
	for (uint32_t root = 0; root < n; root++) {
		if (idx[root] != CYC_UNSET)
			continue;
		idx[root] = low[root] = counter++;
		stk[sp++] = root;
		cs[top] = root;
		cpos[top++] = cyc_first(c, root);
		while (top > 0) {
			uint32_t x = cs[top - 1], v;
			unsigned dep;

			v = cyc_next(c, x, &cpos[top - 1], cyc_end(c, x), &dep);
			if (v != CYC_UNSET) {
				if (idx[v] == CYC_UNSET) {
					idx[v] = low[v] = counter++;
					stk[sp++] = v;
					cs[top] = v;
					cpos[top++] = cyc_first(c, v);
				} else if (c->comp[v] == CYC_UNSET && idx[v] < low[x]) {
					low[x] = idx[v]; /* v is on the stack */
				}
				continue;
			}
			top--;
			if (low[x] == idx[x]) {
				uint32_t y;

				do {
					y = stk[--sp];
					c->comp[y] = c->n_comp;
				} while (y != x);
				c->n_comp++;
			}
			if (top > 0 && low[x] < low[cs[top - 1]])
				low[cs[top - 1]] = low[x];
		}
	}
out:
	free(idx);
	free(low);
	free(stk);
	free(cs);
	free(cpos);
	return rc;
}

struct cyc_bfs {
	uint32_t *parent;
	uint8_t *pdep;
	uint32_t *dist;
	uint32_t *mark;
	uint32_t *queue;
	uint32_t gen;
};

/*
 * Shortest path from @p from to @p to inside SCC @p comp, no longer than
 * @p limit edges. @return its length, or UINT32_MAX.
 */
static uint32_t
cyc_bfs(const struct cyc *c, struct cyc_bfs *b, uint32_t from, uint32_t to, uint32_t limit)
{
	const uint32_t comp = c->comp[from];
	uint32_t head = 0, tail = 0;

	b->gen++;
	b->mark[from] = b->gen;
	b->dist[from] = 0;
	b->queue[tail++] = from;
	while (head < tail) {
		uint32_t y = b->queue[head++], z;
		uint64_t pos = cyc_first(c, y), end = cyc_end(c, y);
		unsigned dep;

		if (y == to)
			return b->dist[y];
		if (b->dist[y] + 1 > limit)
			break;
		while ((z = cyc_next(c, y, &pos, end, &dep)) != CYC_UNSET) {
			if (c->comp[z] != comp || b->mark[z] == b->gen)
				continue;
			b->mark[z] = b->gen;
			b->parent[z] = y;
			b->pdep[z] = (uint8_t)dep;
			b->dist[z] = b->dist[y] + 1;
			b->queue[tail++] = z;
		}
	}
	return UINT32_MAX;
}

/* Fills @p a's steps from a cycle of nodes (each with the dep of its out-edge). */
static void
cyc_report(const struct cyc *c, const uint32_t *nodes, const uint8_t *deps, uint32_t len,
	   struct dtxn_check_anomaly *a)
{
	const struct chk_graph *g = c->g;
	uint32_t start = 0;

	/* start at the smallest txn id: the same cycle always reads the same */
	for (uint32_t i = 1; i < len; i++)
		if (g->txn[cyc_txn(c->mode, nodes[i])]->id <
		    g->txn[cyc_txn(c->mode, nodes[start])]->id)
			start = i;
	a->len = len;
	a->n_steps = len < DTXN_CHECK_MAX_STEPS ? len : DTXN_CHECK_MAX_STEPS;
	for (uint32_t k = 0; k < a->n_steps; k++) {
		uint32_t i = (start + k) % len;
		uint32_t u = cyc_txn(c->mode, nodes[i]);
		uint32_t v = cyc_txn(c->mode, nodes[(i + 1) % len]);
		struct dtxn_check_step *s = &a->steps[k];

		s->txn = g->txn[u]->id;
		s->coord = g->txn[u]->coord;
		s->dep = deps[i];
		if (!chk_graph_explain(g, u, v, deps[i], &s->table, &s->key)) {
			s->table = UINT32_MAX;
			s->key = 0;
		}
	}
}

/* Shortest cycle through the witnesses; fills a->len and a->steps. */
static int
cyc_shortest(const struct cyc *c, const uint32_t *wu, const uint32_t *wv,
	     const uint8_t *wd, unsigned n_wit, struct dtxn_check_anomaly *a)
{
	struct cyc_bfs b = { 0 };
	uint32_t best = UINT32_MAX, *nodes = NULL;
	uint8_t *deps = NULL;
	int rc = -ENOMEM;

	b.parent = malloc((size_t)c->n * sizeof(*b.parent));
	b.pdep = malloc((size_t)c->n * sizeof(*b.pdep));
	b.dist = malloc((size_t)c->n * sizeof(*b.dist));
	b.mark = calloc(c->n, sizeof(*b.mark));
	b.queue = malloc((size_t)c->n * sizeof(*b.queue));
	if (b.parent == NULL || b.pdep == NULL || b.dist == NULL || b.mark == NULL ||
	    b.queue == NULL)
		goto out;
	for (unsigned w = 0; w < n_wit && best > 2; w++) {
		/* a cycle shorter than best needs a path of at most best - 2 edges */
		uint32_t d = cyc_bfs(c, &b, wv[w], wu[w], best == UINT32_MAX ? UINT32_MAX - 1 :
							   best - 2);
		uint32_t len, y, i;

		if (d == UINT32_MAX)
			continue;
		len = d + 1;
		free(nodes);
		free(deps);
		nodes = malloc((size_t)len * sizeof(*nodes));
		deps = malloc(len);
		if (nodes == NULL || deps == NULL)
			goto out;
		/* nodes: wv .. wu along the path, then the witness back to wv */
		for (y = wu[w], i = d; ; y = b.parent[y], i--) {
			nodes[i] = y;
			if (i < d)
				deps[i] = b.pdep[nodes[i + 1]];
			if (i == 0)
				break;
		}
		deps[d] = wd[w];
		best = len;
		cyc_report(c, nodes, deps, len, a);
	}
	rc = 0;
out:
	free(nodes);
	free(deps);
	free(b.parent);
	free(b.pdep);
	free(b.dist);
	free(b.mark);
	free(b.queue);
	return rc;
}

int
chk_find_cycles(const struct chk_graph *g, enum chk_mode mode, struct dtxn_check_anomaly *a,
		uint64_t *cyclic)
{
	struct cyc c = { .g = g, .mode = mode };
	uint32_t wu[CYC_MAX_WITNESS], wv[CYC_MAX_WITNESS];
	uint8_t wd[CYC_MAX_WITNESS], *seen = NULL;
	unsigned n_wit = 0;
	int rc;

	memset(a, 0, sizeof(*a));
	if (cyclic != NULL)
		*cyclic = 0;
	c.n = mode == CHK_MODE_SI ? g->n * 2 : g->n;
	if (c.n == 0)
		return 0;
	rc = cyc_scc(&c);
	if (rc != 0)
		goto out;
	seen = calloc(c.n_comp, 1);
	if (seen == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	for (uint32_t x = 0; x < c.n; x++) {
		uint64_t pos = cyc_first(&c, x), end = cyc_end(&c, x);
		unsigned dep;
		uint32_t v;

		while ((v = cyc_next(&c, x, &pos, end, &dep)) != CYC_UNSET) {
			uint32_t k = c.comp[x];

			if (c.comp[v] != k)
				continue;
			if (cyclic != NULL && (seen[k] & 0x80) == 0) {
				(*cyclic)++;
				seen[k] |= 0x80;
			}
			if (!cyc_witness(mode, dep))
				continue;
			/* low 7 bits: witnesses taken in this SCC */
			if ((seen[k] & 0x7f) == 0)
				a->count++;
			if ((seen[k] & 0x7f) < CYC_PER_SCC && n_wit < CYC_MAX_WITNESS) {
				wu[n_wit] = x;
				wv[n_wit] = v;
				wd[n_wit++] = (uint8_t)dep;
			}
			if ((seen[k] & 0x7f) < 0x7f)
				seen[k]++;
		}
	}
	if (n_wit > 0)
		rc = cyc_shortest(&c, wu, wv, wd, n_wit, a);
out:
	free(seen);
	free(c.comp);
	return rc;
}
