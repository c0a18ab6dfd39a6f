/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CREST (ASPLOS'26) as a dtxn protocol: ops table, registration,
 * per-coordinator state.
 */
#include <errno.h>
#include <stdio.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "crest_private.h"

RTE_LOG_REGISTER(dtxn_crest_logtype, dtxn.cc.crest, INFO);

/*
 * TS_commit (48 bits) holds the writer's txn id, (gid + 1) << 40 | seq
 * (lib/txn): (gid + 1) takes bits 40..47, 8 bits, so it fits for gids
 * below 255 (doc/guides/crest.md, "The coordinator limit"; the paper's
 * 240 coordinators are gids 0..239).
 */
#define CREST_MAX_COORDS ((1u << (48 - DTXN_TXN_SEQ_BITS)) - 1)

/*
 * Record cache of a worker (local=1): room for the records its
 * coordinators' transactions use at once, and for their bases and local
 * versions; a CN's (cache=cn) has this room per worker of the CN. An item
 * finding the cache full goes to the MN, uncached.
 */
#define CREST_LC_OBJS 512
#define CREST_LC_IMGS 2048

/*
 * Creates the record cache of worker @p w (@p workers 1), or of its CN
 * (@p workers: the CN's workers), named @p name.
 * @return the cache, or NULL + rte_errno (logged).
 */
static struct crest_lc *
crest_lc_make(const struct dtxn_worker *w, const struct crest_opts *o, const char *name,
	      uint32_t workers)
{
	const struct dtxn_db *db = w->db;
	uint32_t img = 0;
	struct crest_lc *lc;

	for (unsigned id = 0; id < DTXN_MAX_TABLES; id++) {
		const struct dtxn_table *t = dtxn_catalog_table(&db->cat, id);

		if (t != NULL)
			img = RTE_MAX(img, t->slot_size);
	}
	lc = crest_lc_create(name, CREST_LC_OBJS * workers, img, CREST_LC_IMGS * workers,
			     w->socket_id);
	if (lc == NULL) {
		CREST_LOG(ERR, "worker %u: no memory for the record cache %s (%u records, %u x %u B)",
			  w->index, name, CREST_LC_OBJS * workers, CREST_LC_IMGS * workers, img);
		return NULL;
	}
	crest_lc_keep_idle(lc, o->ro_cache);
	return lc;
}

/*
 * dtxn_cc_ops.worker_init: local=1 gives worker @p w its record cache
 * (w->cc_priv): its own (cache=lcore; cache=part: partition w->index of
 * the CN's dtxn_db_conf.cn_workers), or its CN's (cache=cn: created by
 * the CN's first worker, sized for dtxn_db_conf.cn_workers workers,
 * counted; the sim creates every worker on one thread).
 * @return 0, or -ENOMEM / -EINVAL (no room, no such CN node id).
 */
static int
crest_worker_init(struct dtxn_worker *w)
{
	struct crest_opts o;
	struct crest_cn_lc *s;
	char name[32];

	crest_opts_of_db(w->db, &o);
	if (!o.local)
		return 0;
	if (o.cache != CREST_CACHE_CN) {
		snprintf(name, sizeof(name), "crlc%u_%u", w->cn_node, w->index);
		w->cc_priv = crest_lc_make(w, &o, name, 1);
		if (w->cc_priv == NULL)
			return -rte_errno;
		if (o.cache == CREST_CACHE_PART && w->db->conf.cn_workers > 1)
			crest_lc_partition(w->cc_priv, w->index % w->db->conf.cn_workers,
					   w->db->conf.cn_workers);
		return 0;
	}
	s = crest_cn_lc_of(w->db, w->cn_node);
	if (s == NULL)
		return -EINVAL;
	if (s->lc == NULL) {
		snprintf(name, sizeof(name), "crlccn%u", w->cn_node);
		s->lc = crest_lc_make(w, &o, name, RTE_MAX(w->db->conf.cn_workers, 1u));
		if (s->lc == NULL)
			return -rte_errno;
	}
	s->refs++;
	w->cc_priv = s->lc;
	return 0;
}

/* dtxn_cc_ops.worker_fini: drops worker @p w's record cache (cache=cn: the CN's last worker does). */
static void
crest_worker_fini(struct dtxn_worker *w)
{
	struct crest_opts o;
	struct crest_cn_lc *s;

	crest_opts_of_db(w->db, &o);
	s = o.local && o.cache == CREST_CACHE_CN ? crest_cn_lc_of(w->db, w->cn_node) : NULL;
	if (s != NULL && w->cc_priv != NULL) {
		if (--s->refs == 0) {
			crest_lc_destroy(s->lc);
			s->lc = NULL;
		}
	} else {
		crest_lc_destroy(w->cc_priv);
	}
	w->cc_priv = NULL;
}

/*
 * dtxn_cc_ops.route (cache=part): a read-write txn runs on the lcore that
 * homes its first record, whose coordinators share that record's cache
 * (crest_lc_homes()); every lcore otherwise (no cache, or an
 * unpartitioned one). Coordinator's lcore.
 */
static bool
crest_route(const struct dtxn_coord *c, uint32_t table_id, uint64_t key)
{
	const struct crest_lc *lc = c->worker->cc_priv;

	RTE_SET_USED(table_id);
	return lc == NULL || crest_lc_homes(lc, key);
}

static int
crest_begin(struct dtxn_txn *t)
{
	struct crest_coord *cc = crest_coord_of(t);

	t->start_ns = dtxn_now_ns(); /* validate.c's "since" */
	crest_fence_enter(t); /* waits out a recovery's fence (recover.c) */
	if (cc->opts.local) {
		crest_lc_txn_begin(&cc->lt, t->id);
		cc->blk_start = 0;
		cc->cached_since = UINT64_MAX;
		cc->unpin = NULL;
		cc->n_unpin = 0;
		crest_local_waits_begin(t);
	}
	return 0;
}

static int
crest_coord_init(struct dtxn_coord *c)
{
	const struct dtxn_db *db = c->worker->db;
	struct crest_coord *cc;

	if (c->gid >= CREST_MAX_COORDS) {
		CREST_LOG(ERR, "coordinator %u: crest runs at most %u coordinators (TS_commit holds "
			  "the writer's 48-bit txn id)", c->gid, CREST_MAX_COORDS);
		return -EINVAL;
	}
	cc = rte_zmalloc_socket("crest_coord", sizeof(*cc), 0, c->worker->socket_id);
	if (cc == NULL)
		return -ENOMEM;
	crest_opts_of_db(db, &cc->opts);
	cc->rec = crest_shared_rec_of(db);
	for (unsigned id = 0; id < DTXN_MAX_TABLES; id++) {
		const struct dtxn_table *t = dtxn_catalog_table(&db->cat, id);

		if (t != NULL)
			crest_layout_make(&t->def, cc->opts.cell != 0, &cc->lay[id]);
	}
	cc->lc = c->worker->cc_priv;
	c->cc_priv = cc;
	return 0;
}

static void
crest_coord_fini(struct dtxn_coord *c)
{
	rte_free(c->cc_priv);
	c->cc_priv = NULL;
}

static const struct dtxn_cc_ops crest_ops = {
	.name = "crest",
	.isolations = 1u << DTXN_ISO_SR,
	.weaken = { [DTXN_ISO_SR] = DTXN_DEBUG_SKIP_READ_VALIDATION },
	.slot_size = crest_slot_size,
	.slot_format = crest_slot_format,
	.slot_value = crest_slot_value,
	.mn_value = crest_mn_value,
	.local_extra = crest_local_extra,
	.db_init = crest_db_init,
	.db_fini = crest_db_fini,
	.worker_init = crest_worker_init,
	.worker_fini = crest_worker_fini,
	.coord_init = crest_coord_init,
	.coord_fini = crest_coord_fini,
	.begin = crest_begin,
	.execute = crest_execute,
	.block_end = crest_block_end,
	.commit = crest_commit,
	.abort = crest_abort,
	.recover = crest_recover,
	.route = crest_route,
	.check_options = crest_check_options,
	.check_cluster = crest_check_cluster,
	.table_geometry = crest_table_geometry,
	.variant = crest_variant,
	.can_recover = crest_can_recover,
	.max_coords = CREST_MAX_COORDS,
};

DTXN_CC_REGISTER(crest, &crest_ops);
