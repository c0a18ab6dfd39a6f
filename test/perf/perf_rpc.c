/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * perf_rpc: RRPC (dtxn_rrpc.h) against lib/rpc's SEND/RECV (dtxn_rpc.h)
 * on the same echo-put workload (Scythe Fig. 29, YCSB write-only: a put
 * of an 8-byte key and a 40-byte value, answered with 8 bytes). Two CNs
 * on the shm fabric with a NIC model, in real time: C coordinators on CN
 * A call CN B; both workers are stepped in turn on the main lcore, the
 * same way for both transports. Prints calls/s, latency P50/P99, and the
 * WRs and doorbells per call from each transport's own counters.
 * doc/guides/rpc.md. Not a test: it prints, asserts nothing.
 *
 * Usage: perf_rpc [coordinators] [seconds] [nic.ini]
 *        (defaults 8, 1, config/nic/cx5.ini; "none" for no model)
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_memory.h>

#include "dtxn_rpc.h"
#include "dtxn_rrpc.h"
#include "dtxn_sched.h"
#include "dtxn_txn.h"
#include "unit_eal.h"

#define T_PUT 1
#define MAX_COORDS 64
/** Latency samples kept per coordinator. */
#define LAT_PER 25000
#define PUT_BYTES 48

struct put_server {
	uint64_t puts;
	uint8_t last[PUT_BYTES];
};

/* The put handler: keep the value, answer with the count (8 B). */
static int
h_put(void *arg, uint16_t src, const void *req, uint32_t len, void *resp)
{
	struct put_server *s = arg;

	RTE_SET_USED(src);
	memcpy(s->last, req, RTE_MIN(len, (uint32_t)PUT_BYTES));
	s->puts++;
	memcpy(resp, &s->puts, sizeof(s->puts));
	return (int)sizeof(s->puts);
}

struct client {
	bool rrpc;
	struct dtxn_rpc_ep *ep;
	struct dtxn_rrpc_ep *rep;
	uint64_t until_ns;
	uint64_t calls;
	int rc;
	uint32_t n_lat;
	uint32_t *lat;
};

static void
client_main(struct dtxn_coord *c, void *arg)
{
	struct client *cl = arg;
	uint8_t req[PUT_BYTES], resp[DTXN_RPC_RESP_MAX];
	struct dtxn_rpc_call call;

	RTE_SET_USED(c);
	while (dtxn_now_ns() < cl->until_ns) {
		uint64_t t0 = dtxn_now_ns();

		memset(req, (int)cl->calls, sizeof(req));
		memset(&call, 0, sizeof(call));
		call.dst_node = 2;
		call.type = T_PUT;
		call.req = req;
		call.req_len = sizeof(req);
		call.resp = resp;
		cl->rc = cl->rrpc ? dtxn_rrpc_call_lc(cl->rep, &call, 1) :
				    dtxn_rpc_call_lc(cl->ep, &call, 1);
		if (cl->rc != 0)
			return;
		if (cl->n_lat < LAT_PER)
			cl->lat[cl->n_lat++] = (uint32_t)RTE_MIN(dtxn_now_ns() - t0, (uint64_t)UINT32_MAX);
		cl->calls++;
	}
}

static int
cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* One run of one transport; prints one line. */
static int
run(bool rrpc, unsigned n_coords, double seconds, const struct dtxn_nic_model *nic)
{
	struct dtxn_db_conf dc = {
		.size = sizeof(dc), .protocol = "ford", .isolation = DTXN_ISO_SR,
		.n_mn = 1, .n_replicas = 1, .n_coords = 2 * MAX_COORDS, .log_bytes = 64,
		.addr_cache_entries = 16,
	};
	struct dtxn_table_def kv = { .id = 0, .name = "kv", .value_size = 8, .max_keys = 16 };
	struct dtxn_fabric_conf fc = { .size = sizeof(fc), .driver = "shm", .n_mn = 1, .n_cn = 2,
				       .socket_id = SOCKET_ID_ANY,
				       .name = rrpc ? "perfrrpc" : "perfrpc" };
	struct dtxn_rrpc_domain_conf rdc = { .size = sizeof(rdc), .max_workers = 1,
					     .socket_id = SOCKET_ID_ANY };
	struct dtxn_rpc_conf rc_conf = { .size = sizeof(rc_conf) };
	static struct client cl[MAX_COORDS];
	static uint32_t all[MAX_COORDS * LAT_PER];
	struct put_server server = { 0 };
	struct dtxn_rrpc_domain *dom = NULL;
	struct dtxn_worker *w[2];
	struct dtxn_rpc *rp[2] = { NULL, NULL };
	struct dtxn_rrpc *rr[2] = { NULL, NULL };
	struct dtxn_fabric *f;
	struct dtxn_db *db;
	uint64_t region, t0, t1, calls = 0, wrs, doorbells;
	unsigned alive, n_all = 0;
	double secs;

	db = dtxn_db_create(&dc);
	if (db == NULL || dtxn_db_add_table(db, &kv) != 0 || dtxn_db_layout(db, &region) != 0)
		return -1;
	fc.mn_region_size = region;
	fc.nic = *nic;
	f = dtxn_fabric_open(&fc);
	if (f == NULL || dtxn_db_attach(db, f) != 0)
		return -1;
	if (rrpc) {
		rdc.buckets = rte_align32pow2(RTE_MAX(n_coords * DTXN_RPC_SLOTS / 2, 8u));
		dom = dtxn_rrpc_domain_create(f, &rdc);
		if (dom == NULL)
			return -1;
	}
	for (unsigned i = 0; i < 2; i++) {
		w[i] = dtxn_worker_create(db, (uint16_t)(1 + i), 0, i == 0 ? n_coords : 1,
					  SOCKET_ID_ANY);
		if (w[i] == NULL)
			return -1;
		if (rrpc) {
			rr[i] = dtxn_rrpc_create(dom, w[i]);
			if (rr[i] == NULL || dtxn_rrpc_register(rr[i], T_PUT, h_put, &server) != 0)
				return -1;
		} else {
			rp[i] = dtxn_rpc_create(w[i], &rc_conf);
			if (rp[i] == NULL || dtxn_rpc_register(rp[i], T_PUT, h_put, &server) != 0)
				return -1;
		}
	}
	t0 = dtxn_now_ns();
	for (unsigned i = 0; i < n_coords; i++) {
		struct dtxn_coord *co = dtxn_coord_create(w[0], i, client_main, &cl[i]);

		memset(&cl[i], 0, sizeof(cl[i]));
		cl[i].rrpc = rrpc;
		cl[i].until_ns = t0 + (uint64_t)(seconds * 1e9);
		cl[i].lat = &all[(size_t)i * LAT_PER];
		if (co == NULL)
			return -1;
		if (rrpc)
			cl[i].rep = dtxn_rrpc_ep_create(rr[0], co);
		else
			cl[i].ep = dtxn_rpc_ep_create(rp[0], co);
		if (cl[i].rep == NULL && cl[i].ep == NULL)
			return -1;
	}
	do {
		alive = dtxn_sched_step_lc(dtxn_worker_sched(w[0]));
		(void)dtxn_sched_step_lc(dtxn_worker_sched(w[1]));
	} while (alive != 0);
	t1 = dtxn_now_ns();
	for (unsigned i = 0; i < n_coords; i++) {
		if (cl[i].rc != 0)
			fprintf(stderr, "perf_rpc: a call failed (%d)\n", cl[i].rc);
		calls += cl[i].calls;
		memmove(&all[n_all], cl[i].lat, cl[i].n_lat * sizeof(*all));
		n_all += cl[i].n_lat;
	}
	qsort(all, n_all, sizeof(*all), cmp_u32);
	if (rrpc) {
		struct dtxn_rrpc_stats a, b;

		dtxn_rrpc_stats_get(rr[0], &a);
		dtxn_rrpc_stats_get(rr[1], &b);
		wrs = a.buckets + b.buckets + a.credits + b.credits;
		doorbells = a.doorbells + b.doorbells;
	} else {
		struct dtxn_rpc_stats a, b;

		dtxn_rpc_stats_get(rp[0], &a);
		dtxn_rpc_stats_get(rp[1], &b);
		wrs = a.req_sent + a.resent + b.req_handled; /* a SEND each way */
		doorbells = wrs;                             /* one post per SEND */
	}
	secs = (double)(t1 - t0) / 1e9;
	printf("%-5s coords %2u  calls/s %10.0f  p50 %6.2f us  p99 %6.2f us  WRs/call %.3f  "
	       "doorbells/call %.3f\n",
	       rrpc ? "rrpc" : "send", n_coords, (double)calls / secs,
	       n_all ? all[n_all / 2] / 1e3 : 0.0, n_all ? all[(size_t)n_all * 99 / 100] / 1e3 : 0.0,
	       calls ? (double)wrs / (double)calls : 0.0,
	       calls ? (double)doorbells / (double)calls : 0.0);
	for (unsigned i = 0; i < n_coords; i++) {
		if (rrpc)
			dtxn_rrpc_ep_destroy(cl[i].rep);
		else
			dtxn_rpc_ep_destroy(cl[i].ep);
	}
	for (unsigned i = 0; i < 2; i++) {
		dtxn_rrpc_destroy(rr[i]);
		dtxn_rpc_destroy(rp[i]);
		dtxn_worker_destroy(w[i]);
	}
	dtxn_rrpc_domain_destroy(dom);
	dtxn_db_destroy(db);
	dtxn_fabric_close(f);
	return 0;
}

int
main(int argc, char **argv)
{
	unsigned coords = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 8;
	double seconds = argc > 2 ? strtod(argv[2], NULL) : 1.0;
	const char *nic_path = argc > 3 ? argv[3] : DTXN_SRC_CONFIG_DIR "/nic/cx5.ini";
	struct dtxn_nic_model nic;
	char err[256];
	int rc = 0;

	if (coords == 0 || coords > MAX_COORDS || !(seconds > 0 && seconds <= 60)) {
		fprintf(stderr, "perf_rpc: coordinators 1..%u, seconds (0, 60]\n", MAX_COORDS);
		return 2;
	}
	if (strcmp(nic_path, "none") == 0)
		dtxn_nic_model_none(&nic);
	else if (dtxn_nic_model_load(nic_path, &nic, err, sizeof(err)) != 0) {
		fprintf(stderr, "perf_rpc: %s\n", err);
		return 2;
	}
	if (dtxn_unit_eal_init("perf_rpc") != 0)
		return 1;
	printf("perf_rpc: echo-put %u B -> 8 B, CN 1 -> CN 2, shm fabric, NIC model %s, %.1f s\n",
	       PUT_BYTES, nic.name, seconds);
	if (run(false, coords, seconds, &nic) != 0 || run(true, coords, seconds, &nic) != 0) {
		fprintf(stderr, "perf_rpc: setup failed (%s)\n", rte_strerror(rte_errno));
		rc = 1;
	}
	dtxn_unit_eal_fini();
	return rc;
}
