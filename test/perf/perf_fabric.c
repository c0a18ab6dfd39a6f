/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * perf_fabric: latency and message rate of one-sided verbs through dtxn's
 * fabric API (dtxn_fabric.h), between two processes, on any network
 * driver (made for --fabric ucx over TCP between two network namespaces;
 * doc/guides/ucx.md, "Figures"; usertools/dtxn-ucx-bench runs it next to
 * UCX's own ucx_perftest). Not a test: it prints, asserts nothing.
 *
 * Two roles, one cluster of MN 0 and CN 1 (n_mn = 1, n_cn = 1):
 * - target: serves MN 0 (serve mask bit 0): opens the fabric, publishes
 *   its region and waits for SIGTERM or SIGINT (the driver's control
 *   thread executes the one-sided ops, TCP);
 * - initiator: serves CN 1, drives one QP to MN 0 from the main lcore:
 *   per opcode (8 B READ, signaled WRITE, CAS, FAA) the latency of one
 *   outstanding WR (P50, P99, mean) and the rate with --depth WRs
 *   outstanding (every WR signaled, ops/s); and the rate of WRITEs posted
 *   as the protocols post them, chains of --depth with the last signaled
 *   ("write-sel"); then a table and, with --json, the same as JSON.
 * Both must be given the same --mn/--cn addresses and --run-desc (the
 * ucx driver's connect digest).
 *
 * Usage (EAL arguments first, as DPDK's apps):
 *   perf_fabric --no-pci --no-huge -m 256 -l 0 --file-prefix=pf_t -- \
 *       --role target --mn 10.77.0.1:18515 --cn 10.77.0.4:18518
 *   perf_fabric --no-pci --no-huge -m 256 -l 0 --file-prefix=pf_i -- \
 *       --role initiator --mn 10.77.0.1:18515 --cn 10.77.0.4:18518 \
 *       [--fabric ucx] [--iters 20000] [--warmup 2000] [--depth 16]
 *       [--seconds 2] [--ops read,write,cas,faa] [--json FILE] [--tag TEXT]
 * Exit: 0; 2 bad arguments; 1 a fabric error (one line on stderr).
 */
#include <assert.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_memory.h>

#include "dtxn_fabric.h"
#include "dtxn_sched.h"

#define PF_MN 0
#define PF_CN 1
/** MN region, bytes: room for one 8 B word per outstanding WR, cache-line apart. */
#define PF_REGION (UINT64_C(1) << 20)
/** Past the device-memory bytes (DTXN_FABRIC_DM_BYTES), where every word is host memory. */
#define PF_BASE_OFF 4096
#define PF_STRIDE 64
#define PF_DEPTH_MAX 256
#define PF_QP_DEPTH 512
#define PF_CQ_DEPTH 512
#define PF_OPS 4
/** A WR that gets no completion in this long is reported as a fabric error. */
#define PF_TIMEOUT_NS (UINT64_C(5) * 1000000000)

static_assert(PF_DEPTH_MAX <= PF_QP_DEPTH && PF_DEPTH_MAX <= PF_CQ_DEPTH,
	      "the window fits the QP and the CQ");
static_assert(PF_BASE_OFF + PF_DEPTH_MAX * PF_STRIDE <= PF_REGION, "words fit the region");

static const uint8_t g_opcodes[PF_OPS] = { DTXN_WR_READ, DTXN_WR_WRITE, DTXN_WR_CAS, DTXN_WR_FAA };

struct pf_args {
	const char *role;
	const char *fabric;
	const char *mn_addr, *cn_addr;
	const char *run_desc;
	const char *json;
	const char *tag;
	unsigned iters, warmup, depth;
	double seconds;
	bool op_on[PF_OPS];
};

struct pf_result {
	bool done;
	double p50_us, p99_us, mean_us;
	uint64_t lat_n;
	double rate_ops;
	uint64_t rate_n;
	double rate_s;
};

static volatile sig_atomic_t g_stop;

static void
pf_on_signal(int sig)
{
	RTE_SET_USED(sig);
	g_stop = 1;
}

static void
pf_usage(void)
{
	fprintf(stderr,
		"usage: perf_fabric EAL-ARGS -- --role target|initiator --mn IPv4:PORT --cn IPv4:PORT\n"
		"       [--fabric ucx] [--run-desc TEXT] [--iters N] [--warmup N] [--depth N]\n"
		"       [--seconds S] [--ops read,write,cas,faa] [--json FILE] [--tag TEXT]\n");
}

static int
pf_uint(const char *opt, const char *s, unsigned lo, unsigned hi, unsigned *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi) {
		fprintf(stderr, "perf_fabric: %s '%s': expected an integer in %u..%u\n", opt, s, lo, hi);
		return -EINVAL;
	}
	*out = (unsigned)v;
	return 0;
}

static int
pf_ops_parse(const char *s, bool *on)
{
	char buf[128], *tok, *save = NULL;

	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s);
	memset(on, 0, sizeof(bool) * PF_OPS);
	for (tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		unsigned i;

		for (i = 0; i < PF_OPS; i++)
			if (strcmp(tok, dtxn_wr_opcode_name(g_opcodes[i])) == 0)
				break;
		if (i == PF_OPS) {
			fprintf(stderr, "perf_fabric: --ops: unknown opcode '%s' (read, write, cas, faa)\n", tok);
			return -EINVAL;
		}
		on[i] = true;
	}
	return 0;
}

static int
pf_args_parse(int argc, char **argv, struct pf_args *a)
{
	static const struct option lo[] = {
		{ "role", required_argument, NULL, 'r' }, { "fabric", required_argument, NULL, 'f' },
		{ "mn", required_argument, NULL, 'M' },   { "cn", required_argument, NULL, 'C' },
		{ "run-desc", required_argument, NULL, 'd' },
		{ "iters", required_argument, NULL, 'n' }, { "warmup", required_argument, NULL, 'w' },
		{ "depth", required_argument, NULL, 'o' }, { "seconds", required_argument, NULL, 's' },
		{ "ops", required_argument, NULL, 'O' },  { "json", required_argument, NULL, 'j' },
		{ "tag", required_argument, NULL, 't' },  { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	*a = (struct pf_args){ .fabric = "ucx", .run_desc = "perf_fabric", .iters = 20000,
			       .warmup = 2000, .depth = 16, .seconds = 2.0, .tag = "" };
	for (unsigned i = 0; i < PF_OPS; i++)
		a->op_on[i] = true;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		char *end;

		switch (c) {
		case 'r': a->role = optarg; break;
		case 'f': a->fabric = optarg; break;
		case 'M': a->mn_addr = optarg; break;
		case 'C': a->cn_addr = optarg; break;
		case 'd': a->run_desc = optarg; break;
		case 'j': a->json = optarg; break;
		case 't': a->tag = optarg; break;
		case 'n':
			if (pf_uint("--iters", optarg, 1, 10000000, &a->iters) != 0)
				return -EINVAL;
			break;
		case 'w':
			if (pf_uint("--warmup", optarg, 0, 10000000, &a->warmup) != 0)
				return -EINVAL;
			break;
		case 'o':
			if (pf_uint("--depth", optarg, 1, PF_DEPTH_MAX, &a->depth) != 0)
				return -EINVAL;
			break;
		case 's':
			a->seconds = strtod(optarg, &end);
			if (end == optarg || *end != '\0' || !(a->seconds > 0 && a->seconds <= 600)) {
				fprintf(stderr, "perf_fabric: --seconds '%s': expected 0 < S <= 600\n", optarg);
				return -EINVAL;
			}
			break;
		case 'O':
			if (pf_ops_parse(optarg, a->op_on) != 0)
				return -EINVAL;
			break;
		default:
			pf_usage();
			return -EINVAL;
		}
	}
	if (optind != argc || a->role == NULL || a->mn_addr == NULL || a->cn_addr == NULL ||
	    (strcmp(a->role, "target") != 0 && strcmp(a->role, "initiator") != 0)) {
		pf_usage();
		return -EINVAL;
	}
	if (dtxn_fabric_addr_parse(a->mn_addr, NULL, NULL) != 0 ||
	    dtxn_fabric_addr_parse(a->cn_addr, NULL, NULL) != 0) {
		fprintf(stderr, "perf_fabric: --mn/--cn: expected IPv4:PORT\n");
		return -EINVAL;
	}
	return 0;
}

static struct dtxn_fabric *
pf_open(const struct pf_args *a, bool target)
{
	static struct dtxn_fabric_rdma_conf rc;
	struct dtxn_fabric_conf c = {
		.size = sizeof(c), .driver = a->fabric, .n_mn = 1, .n_cn = 1,
		.mn_region_size = PF_REGION, .socket_id = SOCKET_ID_ANY, .name = "pf", .rdma = &rc,
	};
	struct dtxn_fabric *f;

	memset(&rc, 0, sizeof(rc));
	rc.gid_index = -1;
	rc.node_addr[PF_MN] = a->mn_addr;
	rc.node_addr[PF_CN] = a->cn_addr;
	rc.serve = UINT64_C(1) << (target ? PF_MN : PF_CN);
	rc.run_desc = a->run_desc;
	rc.connect_timeout_ms = 20000;
	dtxn_nic_model_none(&c.nic);
	f = dtxn_fabric_open(&c);
	if (f == NULL)
		fprintf(stderr, "perf_fabric: --fabric %s: open failed: %s%s%s\n", a->fabric,
			rte_strerror(rte_errno), dtxn_fabric_open_error()[0] != '\0' ? ": " : "",
			dtxn_fabric_open_error());
	return f;
}

/* The target: serve MN 0 until SIGTERM/SIGINT. */
static int
pf_target(const struct pf_args *a)
{
	struct dtxn_fabric *f = pf_open(a, true);
	sigset_t stop, old;

	if (f == NULL)
		return 1;
	dtxn_fabric_publish(f);
	printf("perf_fabric: target: serving mn0 at %s (--fabric %s), SIGTERM ends\n", a->mn_addr,
	       a->fabric);
	fflush(stdout);
	/* blocked between the check and the wait, so that no signal is missed */
	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	pthread_sigmask(SIG_BLOCK, &stop, &old);
	while (!g_stop)
		sigsuspend(&old);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	dtxn_fabric_close(f);
	return 0;
}

struct pf_ctx {
	struct dtxn_fabric *f;
	struct dtxn_cq *cq;
	struct dtxn_qp *qp;
	uint64_t *buf;            /* one 8 B local word per window slot, a cache line apart */
};

static void
pf_wr(struct dtxn_wr *wr, struct pf_ctx *x, unsigned op, unsigned slot, uint64_t seq)
{
	uint64_t *local = &x->buf[slot * (PF_STRIDE / sizeof(uint64_t))];

	memset(wr, 0, sizeof(*wr));
	wr->wr_id = slot;
	wr->opcode = g_opcodes[op];
	wr->flags = DTXN_WR_F_SIGNALED;
	wr->len = sizeof(uint64_t);
	wr->local = local;
	wr->raddr = DTXN_RADDR(PF_MN, PF_BASE_OFF + (uint64_t)slot * PF_STRIDE);
	switch (wr->opcode) {
	case DTXN_WR_WRITE:
		*local = seq;
		wr->flags |= DTXN_WR_F_INLINE;
		break;
	case DTXN_WR_CAS:  /* alternates between success and failure: same work either way */
		wr->compare_add = seq;
		wr->swap = seq + 1;
		break;
	case DTXN_WR_FAA:
		wr->compare_add = 1;
		break;
	default:
		break;
	}
}

/* Polls until one completion; returns its wr_id, or -1 on error or timeout. */
static int64_t
pf_wait_one(struct pf_ctx *x)
{
	struct dtxn_cqe cqe;
	uint64_t t0 = dtxn_now_ns();
	unsigned spins = 0;

	while (dtxn_cq_poll(x->cq, &cqe, 1) == 0) {
		if (++spins == 4096) {
			spins = 0;
			if (dtxn_now_ns() - t0 > PF_TIMEOUT_NS) {
				fprintf(stderr, "perf_fabric: no completion in %" PRIu64 " s\n",
					PF_TIMEOUT_NS / 1000000000);
				return -1;
			}
		}
	}
	if (cqe.status != DTXN_WC_SUCCESS) {
		fprintf(stderr, "perf_fabric: %s completed with status %u\n",
			dtxn_wr_opcode_name(cqe.opcode), cqe.status);
		return -1;
	}
	return (int64_t)cqe.wr_id;
}

static int
pf_cmp_u64(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;

	return a < b ? -1 : a > b;
}

/* One outstanding WR: post, wait, repeat. */
static int
pf_latency(struct pf_ctx *x, const struct pf_args *a, unsigned op, uint64_t *lat,
	   struct pf_result *r)
{
	struct dtxn_wr wr;
	double sum = 0;

	for (unsigned i = 0; i < a->warmup + a->iters; i++) {
		uint64_t t0, t1;
		int rc;

		pf_wr(&wr, x, op, 0, i);
		t0 = dtxn_now_ns();
		rc = dtxn_qp_post(x->qp, &wr);
		if (rc != 0) {
			fprintf(stderr, "perf_fabric: post: %s\n", strerror(-rc));
			return -1;
		}
		if (pf_wait_one(x) < 0)
			return -1;
		t1 = dtxn_now_ns();
		if (i >= a->warmup)
			lat[i - a->warmup] = t1 - t0;
	}
	qsort(lat, a->iters, sizeof(*lat), pf_cmp_u64);
	for (unsigned i = 0; i < a->iters; i++)
		sum += (double)lat[i];
	r->lat_n = a->iters;
	r->p50_us = (double)lat[(a->iters - 1) / 2] / 1e3;
	r->p99_us = (double)lat[(uint64_t)(a->iters - 1) * 99 / 100] / 1e3;
	r->mean_us = sum / a->iters / 1e3;
	return 0;
}

/* --depth WRs outstanding, each completion replaced by a new WR, for --seconds. */
static int
pf_rate(struct pf_ctx *x, const struct pf_args *a, unsigned op, struct pf_result *r)
{
	struct dtxn_wr wr;
	uint64_t seq = 0, done = 0, t0, t_end, t1;
	unsigned out = 0;

	for (unsigned s = 0; s < a->depth; s++) {
		pf_wr(&wr, x, op, s, seq++);
		if (dtxn_qp_post(x->qp, &wr) != 0)
			return -1;
		out++;
	}
	/* warm the window for a tenth of the run before timing */
	t0 = dtxn_now_ns();
	t_end = t0 + (uint64_t)(a->seconds * 1e8);
	while (dtxn_now_ns() < t_end) {
		int64_t s = pf_wait_one(x);

		if (s < 0)
			return -1;
		pf_wr(&wr, x, op, (unsigned)s, seq++);
		if (dtxn_qp_post(x->qp, &wr) != 0)
			return -1;
	}
	t0 = dtxn_now_ns();
	t_end = t0 + (uint64_t)(a->seconds * 1e9);
	while ((t1 = dtxn_now_ns()) < t_end) {
		int64_t s = pf_wait_one(x);

		if (s < 0)
			return -1;
		done++;
		pf_wr(&wr, x, op, (unsigned)s, seq++);
		if (dtxn_qp_post(x->qp, &wr) != 0)
			return -1;
	}
	while (out-- > 0) /* drain the window */
		if (pf_wait_one(x) < 0)
			return -1;
	r->rate_n = done;
	r->rate_s = (double)(t1 - t0) / 1e9;
	r->rate_ops = (double)done / r->rate_s;
	return 0;
}

/*
 * Selective signaling, as the protocols post: chains of --depth 8 B
 * WRITEs, one doorbell each, only the last signaled (so one flush per
 * chain and a fence before every WR but the first), the next chain once
 * its completion came.
 */
/* Posts chains until @p until_ns; returns the WRITEs completed, or -1. */
static int64_t
pf_chains(struct pf_ctx *x, const struct pf_args *a, uint64_t until_ns, uint64_t *seq)
{
	struct dtxn_wr wr[PF_DEPTH_MAX];
	int64_t n = 0;

	while (dtxn_now_ns() < until_ns) {
		for (unsigned s = 0; s < a->depth; s++) {
			pf_wr(&wr[s], x, 1 /* WRITE */, s, (*seq)++);
			wr[s].flags &= ~DTXN_WR_F_SIGNALED;
			wr[s].next = s + 1 < a->depth ? &wr[s + 1] : NULL;
		}
		wr[a->depth - 1].flags |= DTXN_WR_F_SIGNALED;
		if (dtxn_qp_post(x->qp, wr) != 0 || pf_wait_one(x) < 0)
			return -1;
		n += a->depth;
	}
	return n;
}

static int
pf_rate_chain(struct pf_ctx *x, const struct pf_args *a, struct pf_result *r)
{
	uint64_t seq = 0, t0, t1;
	int64_t n;

	/* a tenth of the run warms up, untimed */
	if (pf_chains(x, a, dtxn_now_ns() + (uint64_t)(a->seconds * 1e8), &seq) < 0)
		return -1;
	t0 = dtxn_now_ns();
	n = pf_chains(x, a, t0 + (uint64_t)(a->seconds * 1e9), &seq);
	t1 = dtxn_now_ns();
	if (n < 0)
		return -1;
	r->rate_n = (uint64_t)n;
	r->rate_s = (double)(t1 - t0) / 1e9;
	r->rate_ops = (double)n / r->rate_s;
	return 0;
}

static void
pf_print(const struct pf_args *a, const struct pf_result *res)
{
	printf("perf_fabric: --fabric %s, mn0 %s <- cn1 %s, 8 B, %u iterations (latency, 1 outstanding), "
	       "%.1f s at %u outstanding (rate, every WR signaled)%s%s\n",
	       a->fabric, a->mn_addr, a->cn_addr, a->iters, a->seconds, a->depth,
	       a->tag[0] != '\0' ? ", " : "", a->tag);
	printf("%-8s %10s %10s %10s %14s\n", "opcode", "P50 us", "P99 us", "mean us", "rate ops/s");
	for (unsigned i = 0; i < PF_OPS; i++) {
		if (!res[i].done)
			continue;
		printf("%-8s %10.2f %10.2f %10.2f %14.0f\n", dtxn_wr_opcode_name(g_opcodes[i]),
		       res[i].p50_us, res[i].p99_us, res[i].mean_us, res[i].rate_ops);
	}
	if (res[PF_OPS].done)
		printf("%-8s %10s %10s %10s %14.0f\n", "write-sel", "-", "-", "-", res[PF_OPS].rate_ops);
}

static int
pf_json(const struct pf_args *a, const struct pf_result *res)
{
	FILE *fp = fopen(a->json, "w");
	bool first = true;

	if (fp == NULL) {
		fprintf(stderr, "perf_fabric: --json %s: %s\n", a->json, strerror(errno));
		return -1;
	}
	fprintf(fp, "{\"tool\": \"perf_fabric\", \"fabric\": \"%s\", \"tag\": \"%s\", \"bytes\": 8, "
		"\"iters\": %u, \"depth\": %u, \"seconds\": %.3f, \"ops\": {",
		a->fabric, a->tag, a->iters, a->depth, a->seconds);
	for (unsigned i = 0; i < PF_OPS; i++) {
		if (!res[i].done)
			continue;
		fprintf(fp, "%s\n  \"%s\": {\"p50_us\": %.3f, \"p99_us\": %.3f, \"mean_us\": %.3f, "
			"\"rate_ops\": %.0f, \"rate_n\": %" PRIu64 "}",
			first ? "" : ",", dtxn_wr_opcode_name(g_opcodes[i]), res[i].p50_us,
			res[i].p99_us, res[i].mean_us, res[i].rate_ops, res[i].rate_n);
		first = false;
	}
	if (res[PF_OPS].done)
		fprintf(fp, "%s\n  \"write-sel\": {\"rate_ops\": %.0f, \"rate_n\": %" PRIu64 "}",
			first ? "" : ",", res[PF_OPS].rate_ops, res[PF_OPS].rate_n);
	fprintf(fp, "\n}}\n");
	return fclose(fp) == 0 ? 0 : -1;
}

static int
pf_initiator(const struct pf_args *a)
{
	struct pf_result res[PF_OPS + 1]; /* + WRITE chains, selective signaling */
	struct pf_ctx x = { 0 };
	uint64_t *lat = NULL;
	int rc = 1;

	memset(res, 0, sizeof(res));
	x.f = pf_open(a, false);
	if (x.f == NULL)
		return 1;
	x.cq = dtxn_cq_create(x.f, SOCKET_ID_ANY, PF_CQ_DEPTH);
	x.qp = x.cq == NULL ? NULL : dtxn_qp_create(x.f, x.cq, PF_CN, PF_MN, PF_QP_DEPTH);
	x.buf = rte_zmalloc("pf_buf", PF_DEPTH_MAX * PF_STRIDE, PF_STRIDE);
	lat = malloc(sizeof(*lat) * a->iters);
	if (x.qp == NULL || x.buf == NULL || lat == NULL) {
		fprintf(stderr, "perf_fabric: CQ/QP/buffers: %s\n", rte_strerror(rte_errno));
		goto out;
	}
	for (unsigned i = 0; i < PF_OPS && !g_stop; i++) {
		if (!a->op_on[i])
			continue;
		if (pf_latency(&x, a, i, lat, &res[i]) != 0 || pf_rate(&x, a, i, &res[i]) != 0)
			goto out;
		res[i].done = true;
	}
	if (a->op_on[1] && !g_stop) {
		if (pf_rate_chain(&x, a, &res[PF_OPS]) != 0)
			goto out;
		res[PF_OPS].done = true;
	}
	pf_print(a, res);
	rc = a->json != NULL && pf_json(a, res) != 0 ? 1 : 0;
out:
	free(lat);
	rte_free(x.buf);
	dtxn_qp_destroy(x.qp);
	dtxn_cq_destroy(x.cq);
	dtxn_fabric_close(x.f);
	return rc;
}

int
main(int argc, char **argv)
{
	struct pf_args a;
	int n, rc;

	n = rte_eal_init(argc, argv);
	if (n < 0) {
		fprintf(stderr, "perf_fabric: rte_eal_init: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	argc -= n;
	argv += n;
	argv[0] = "perf_fabric"; /* getopt starts after it */
	if (pf_args_parse(argc, argv, &a) != 0) {
		rte_eal_cleanup();
		return 2;
	}
	if (dtxn_clock_init() != 0) {
		fprintf(stderr, "perf_fabric: dtxn_clock_init failed\n");
		rte_eal_cleanup();
		return 1;
	}
	signal(SIGTERM, pf_on_signal);
	signal(SIGINT, pf_on_signal);
	rc = strcmp(a.role, "target") == 0 ? pf_target(&a) : pf_initiator(&a);
	rte_eal_cleanup();
	return rc;
}
