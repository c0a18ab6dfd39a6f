/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ucx driver: the control thread and the connect exchange.
 *
 * The control thread owns the serve worker and one listening TCP socket
 * per node this process serves. It progresses the worker until it has
 * nothing to do for DTXN_UCX_SPIN_US (30 us by default on a host of 4 CPUs
 * or more, so that a verb that follows its predecessor's answer finds it
 * awake; 0 on a smaller one), arms it (ucp_worker_arm) and
 * sleeps in epoll_wait on the worker's event fd, the listening sockets and
 * a stop eventfd: an idle MN costs no CPU, and wakes for a READ as fast as
 * for any other operation.
 *
 * A listening socket takes one connect message (HELLO) per connection and
 * answers ACCEPT (the serve worker's address; for an MN its region's base,
 * length and packed rkey) or REFUSE (ucx_pure.h). Until the process calls
 * dtxn_fabric_publish() its MNs answer REFUSE/NOT_READY, which the asking
 * side retries: a CN never reads a region that is still being loaded.
 * An MN admits one incarnation of each CN at a time (ctl_admit()): a
 * restarted CN's process is admitted once its predecessor was fenced.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <netinet/tcp.h>
#include <time.h>
#include <unistd.h>

#include <rte_common.h>

#include "dtxn_sched.h"
#include "ucx_private.h"

/** epoll data of the stop eventfd and of the serve worker's fd. */
#define CTL_EV_STOP UINT64_C(0xffff0001)
#define CTL_EV_WORKER UINT64_C(0xffff0002)
/** Socket timeout of one connect exchange, ms. */
#define CTL_IO_MS 2000
/** Pause between connect attempts to a node not answering yet, ms. */
#define CTL_RETRY_MS 50

static const char *
ctl_node_name(const struct ucx_fabric *uf, uint16_t node, char *buf, size_t len)
{
	if (node < uf->n_mn)
		snprintf(buf, len, "mn%u", node);
	else
		snprintf(buf, len, "cn%u", node - uf->n_mn);
	return buf;
}

static const char *
ctl_addr_str(const struct sockaddr_in *sa, char *buf, size_t len)
{
	char ip[INET_ADDRSTRLEN];

	inet_ntop(AF_INET, &sa->sin_addr, ip, sizeof(ip));
	snprintf(buf, len, "%s:%u", ip, ntohs(sa->sin_port));
	return buf;
}

static void
ctl_timeouts(int fd)
{
	struct timeval tv = { .tv_sec = CTL_IO_MS / 1000, .tv_usec = (CTL_IO_MS % 1000) * 1000 };
	int one = 1;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* Reads or writes exactly @p len bytes. @return 0 or -1. */
static int
ctl_io(int fd, void *buf, size_t len, bool wr)
{
	uint8_t *p = buf;

	while (len > 0) {
		ssize_t n = wr ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Reads one whole message into @p buf (UCX_MSG_MAX bytes). @return its length or -errno. */
static int
ctl_read_msg(int fd, uint8_t *buf)
{
	int total;

	if (ctl_io(fd, buf, UCX_MSG_HDR_BYTES, false) != 0)
		return -EIO;
	total = ucx_msg_peek_len(buf);
	if (total < 0)
		return total;
	if (ctl_io(fd, buf + UCX_MSG_HDR_BYTES, (size_t)total - UCX_MSG_HDR_BYTES, false) != 0)
		return -EIO;
	return total;
}

/*
 * MN side: which incarnation of CN @p cn a HELLO to one of this process's
 * MNs may be (doc/guides/ucx.md, "Connecting"): never two at once, and
 * none the fence refused. A HELLO of UCX_INC_NEXT (a process that does
 * not know its own yet) is the CN's first incarnation (0) if none was
 * admitted, or the one after the fenced one; an explicit one passes if it
 * is the admitted one, or newer than the fenced one. A newer incarnation
 * un-fences the CN: the fenced one's connections were cut, and its verbs
 * carry its incarnation, which is no longer the admitted one
 * (ucx_verb_serve()). The control thread.
 * @return UCX_REFUSE_NONE with *@p inc the incarnation admitted, or
 *   UCX_REFUSE_FENCED (*@p inc: the fenced one) or UCX_REFUSE_PREDECESSOR
 *   (the admitted one is not fenced yet: ask again).
 */
static uint8_t
ctl_admit(struct ucx_fabric *uf, uint16_t cn, uint32_t want, uint32_t *inc)
{
	uint64_t bit = UINT64_C(1) << cn;
	bool seen = __atomic_load_n(&uf->admitted_mask, __ATOMIC_ACQUIRE) & bit;
	bool fenced = __atomic_load_n(&uf->fenced, __ATOMIC_ACQUIRE) & bit;
	uint32_t fenced_inc = __atomic_load_n(&uf->fenced_inc[cn], __ATOMIC_ACQUIRE);
	uint32_t cur = __atomic_load_n(&uf->admitted[cn], __ATOMIC_ACQUIRE);
	char name[16];

	/* (fenced but never admitted here: a CN taken over, ucx_take_over()) */
	if (want == UCX_INC_NEXT)
		want = fenced ? fenced_inc + 1 : !seen ? 0 : cur + 1;
	if (fenced ? want <= fenced_inc : seen && want < cur) {
		*inc = fenced ? fenced_inc : cur;
		return UCX_REFUSE_FENCED;
	}
	if (!fenced && seen && want > cur)
		return UCX_REFUSE_PREDECESSOR;
	*inc = want;
	if (seen && want == cur && !fenced)
		return UCX_REFUSE_NONE;
	__atomic_store_n(&uf->admitted[cn], want, __ATOMIC_RELEASE);
	__atomic_fetch_or(&uf->admitted_mask, bit, __ATOMIC_RELEASE);
	if (fenced) {
		__atomic_fetch_and(&uf->fenced, ~bit, __ATOMIC_RELEASE);
		UCX_LOG(NOTICE, "%s: incarnation %u admitted (incarnation %u was fenced): un-fenced",
			ctl_node_name(uf, cn, name, sizeof(name)), want, fenced_inc);
	}
	return UCX_REFUSE_NONE;
}

/* The listener's side of one connection: HELLO in, ACCEPT or REFUSE out;
 * or FENCE in (a survivor declared a CN dead), FENCED out. */
static void
ctl_serve_conn(struct ucx_fabric *uf, int fd)
{
	static uint8_t buf[UCX_MSG_MAX]; /* the control thread's only */
	struct ucx_msg in, out = { 0 };
	int len;

	ctl_timeouts(fd);
	len = ctl_read_msg(fd, buf);
	if (len < 0 || ucx_msg_decode(buf, (size_t)len, &in) != 0 ||
	    (in.kind != UCX_MSG_HELLO && in.kind != UCX_MSG_FENCE)) {
		UCX_LOG(WARNING, "a connect message that is not a valid HELLO or FENCE (%s): connection closed",
			len < 0 ? strerror(-len) : "bad fields");
		return;
	}
	out.src_node = in.dst_node;
	out.dst_node = in.src_node;
	out.n_mn = uf->n_mn;
	out.n_cn = (uint16_t)(uf->n_nodes - uf->n_mn);
	out.digest = uf->digest;
	if (in.n_mn != uf->n_mn || in.n_cn != out.n_cn)
		out.reason = UCX_REFUSE_SHAPE;
	else if (in.digest != uf->digest)
		out.reason = UCX_REFUSE_DIGEST;
	else if (in.dst_node >= uf->n_nodes || !(uf->serve_mask >> in.dst_node & 1))
		out.reason = UCX_REFUSE_NODE;
	else if (in.kind == UCX_MSG_HELLO && in.dst_node >= uf->n_mn &&
		 (__atomic_load_n(&uf->fenced, __ATOMIC_ACQUIRE) >> in.src_node & 1))
		out.reason = UCX_REFUSE_FENCED;
	else if (in.dst_node < uf->n_mn && !__atomic_load_n(&uf->published, __ATOMIC_ACQUIRE))
		out.reason = UCX_REFUSE_NOT_READY;
	else if (in.kind == UCX_MSG_HELLO && in.dst_node < uf->n_mn && in.src_node >= uf->n_mn &&
		 in.src_node < uf->n_nodes)
		out.reason = ctl_admit(uf, in.src_node, in.incarnation, &out.incarnation);
	if (out.reason != UCX_REFUSE_NONE && out.reason != UCX_REFUSE_FENCED)
		out.incarnation = 0;
	if (out.reason == UCX_REFUSE_NOT_READY && in.kind == UCX_MSG_FENCE)
		out.reason = UCX_REFUSE_NONE; /* fencing needs no loaded region */
	if (out.reason == UCX_REFUSE_NONE && in.kind == UCX_MSG_FENCE) {
		out.kind = UCX_MSG_FENCED;
		out.base = in.base;
		out.region_len = ucx_cut_node(uf, (uint16_t)in.base, fd);
	} else if (out.reason != UCX_REFUSE_NONE) {
		out.kind = UCX_MSG_REFUSE;
		if (out.reason != UCX_REFUSE_NOT_READY && out.reason != UCX_REFUSE_PREDECESSOR)
			UCX_LOG(NOTICE, "node %u refused node %u: reason %u", in.dst_node, in.src_node,
				out.reason);
	} else {
		out.kind = UCX_MSG_ACCEPT;
		out.waddr = uf->serve_addr;
		out.waddr_len = (uint16_t)uf->serve_addr_len;
		if (in.dst_node < uf->n_mn) {
			const struct ucx_region *r = &uf->mn[in.dst_node];

			out.base = (uint64_t)(uintptr_t)r->base;
			out.region_len = r->len;
			out.rkey = r->rkey_buf;
			out.rkey_len = (uint16_t)r->rkey_len;
		}
	}
	len = ucx_msg_encode(buf, sizeof(buf), &out);
	if (len > 0)
		(void)ctl_io(fd, buf, (size_t)len, true);
}

/* Progresses the serve worker until it has been idle for spin_ns, and
 * arms it. The spin keeps the MN awake between a verb's answer and the
 * asker's next verb (a round trip later): a wake-up from epoll costs
 * about as much as the round trip itself (doc/guides/ucx.md, "Figures"). */
static void
ctl_progress(struct ucx_fabric *uf)
{
	uint64_t idle_since = 0;

	for (;;) {
		uint64_t now;

		if (ucp_worker_progress(uf->serve) != 0) {
			idle_since = 0;
			continue;
		}
		if (uf->spin_ns != 0) {
			now = dtxn_now_ns();
			if (idle_since == 0)
				idle_since = now;
			if (now - idle_since < uf->spin_ns)
				continue;
		}
		if (ucp_worker_arm(uf->serve) != UCS_ERR_BUSY)
			return;
		idle_since = 0;
	}
}

static void *
ctl_main(void *arg)
{
	struct ucx_fabric *uf = arg;
	struct epoll_event ev[16];

	for (;;) {
		int n;

		ctl_progress(uf);
		n = epoll_wait(uf->epfd, ev, RTE_DIM(ev), -1);
		if (n < 0 && errno != EINTR)
			break;
		__atomic_fetch_add(&uf->wakeups, 1, __ATOMIC_RELAXED);
		for (int i = 0; i < n; i++) {
			uint64_t d = ev[i].data.u64;
			int fd;

			if (d == CTL_EV_STOP)
				return NULL;
			if (d == CTL_EV_WORKER)
				continue; /* progressed at the top */
			while ((fd = accept4(uf->listen_fd[d], NULL, NULL, SOCK_CLOEXEC)) >= 0) {
				ctl_serve_conn(uf, fd);
				close(fd);
				ctl_progress(uf); /* a slow peer must not starve the worker */
			}
		}
	}
	return NULL;
}

static int
ctl_listen(struct ucx_fabric *uf, uint16_t node)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = node };
	char name[16], addr[32];
	int one = 1, fd;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (const struct sockaddr *)&uf->addr[node], sizeof(uf->addr[node])) != 0 ||
	    listen(fd, 128) != 0 || epoll_ctl(uf->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
		int e = errno;

		close(fd);
		dtxn_fabric_open_error_set("--fabric ucx: %s cannot listen on %s: %s",
					   ctl_node_name(uf, node, name, sizeof(name)),
					   ctl_addr_str(&uf->addr[node], addr, sizeof(addr)),
					   strerror(e));
		return -e;
	}
	uf->listen_fd[node] = fd;
	if (uf->addr[node].sin_port == 0) { /* an ephemeral port: the one bound */
		socklen_t sl = sizeof(uf->addr[node]);

		getsockname(fd, (struct sockaddr *)&uf->addr[node], &sl);
	}
	return 0;
}

/*
 * The control thread may run on any CPU the process may use: it would
 * otherwise inherit the main lcore's pinning, and MN processes whose main
 * lcores share a core (two MNs on one host) would serve every remote
 * operation from that one core.
 */
static void
ctl_unpin(pthread_t t)
{
	cpu_set_t all;

	CPU_ZERO(&all); /* the kernel keeps it within the process's cpuset */
	for (long cpu = 0, n = sysconf(_SC_NPROCESSORS_ONLN); cpu < n && cpu < CPU_SETSIZE; cpu++)
		CPU_SET((int)cpu, &all);
	if (pthread_setaffinity_np(t, sizeof(all), &all) != 0)
		UCX_LOG(INFO, "control thread: left on the main lcore's CPUs");
}

int
ucx_ctl_start(struct ucx_fabric *uf)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int rc;

	uf->epfd = epoll_create1(EPOLL_CLOEXEC);
	uf->stop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (uf->epfd < 0 || uf->stop_fd < 0)
		return -errno;
	ev.data.u64 = CTL_EV_STOP;
	if (epoll_ctl(uf->epfd, EPOLL_CTL_ADD, uf->stop_fd, &ev) != 0)
		return -errno;
	ev.data.u64 = CTL_EV_WORKER;
	if (epoll_ctl(uf->epfd, EPOLL_CTL_ADD, uf->serve_efd, &ev) != 0)
		return -errno;
	for (uint16_t i = 0; i < uf->n_nodes; i++) {
		if (!(uf->serve_mask >> i & 1) || (uf->take_over >> i & 1))
			continue;
		rc = ctl_listen(uf, i);
		if (rc != 0)
			return rc;
	}
	rc = pthread_create(&uf->ctl, NULL, ctl_main, uf);
	if (rc != 0)
		return -rc;
	pthread_setname_np(uf->ctl, "dtxn-ucx-ctl");
	ctl_unpin(uf->ctl);
	uf->ctl_up = true;
	return 0;
}

void
ucx_ctl_stop(struct ucx_fabric *uf)
{
	if (uf->ctl_up) {
		uint64_t one = 1;

		if (write(uf->stop_fd, &one, sizeof(one)) != sizeof(one))
			UCX_LOG(ERR, "control thread: stop signal not sent");
		pthread_join(uf->ctl, NULL);
		uf->ctl_up = false;
	}
	for (unsigned i = 0; i < DTXN_MAX_NODES; i++)
		if (uf->listen_fd[i] >= 0) {
			close(uf->listen_fd[i]);
			uf->listen_fd[i] = -1;
		}
	if (uf->stop_fd >= 0)
		close(uf->stop_fd);
	if (uf->epfd >= 0)
		close(uf->epfd);
	uf->stop_fd = uf->epfd = -1;
}

/* One attempt: connect to @p node's listener, send @p out, answer into
 * @p buf / @p m. @return 0 (m decoded), -EAGAIN (nobody listens yet: try
 * again), -errno. */
static int
ctl_exchange(struct ucx_fabric *uf, const struct ucx_msg *out, uint8_t *buf, struct ucx_msg *m)
{
	uint16_t local = out->src_node, node = out->dst_node;
	struct pollfd pfd;
	int fd, len, err = 0;
	socklen_t elen = sizeof(err);

	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (const struct sockaddr *)&uf->addr[node], sizeof(uf->addr[node])) != 0) {
		if (errno != EINPROGRESS) {
			close(fd);
			return -EAGAIN;
		}
		pfd = (struct pollfd){ .fd = fd, .events = POLLOUT };
		if (poll(&pfd, 1, CTL_IO_MS) != 1 ||
		    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) != 0 || err != 0) {
			close(fd);
			return -EAGAIN;
		}
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	ctl_timeouts(fd);
	len = ucx_msg_encode(buf, UCX_MSG_MAX, out);
	if (len < 0 || ctl_io(fd, buf, (size_t)len, true) != 0) {
		close(fd);
		return -EAGAIN;
	}
	len = ctl_read_msg(fd, buf);
	close(fd);
	if (len == -EIO)
		return -EAGAIN; /* closed before answering: a listener going down or up */
	if (len < 0)
		return len;
	len = ucx_msg_decode(buf, (size_t)len, m);
	if (len != 0)
		return len;
	if (m->kind == UCX_MSG_HELLO || m->kind == UCX_MSG_FENCE || m->src_node != node ||
	    m->dst_node != local)
		return -EPROTO;
	return 0;
}

/* A HELLO or FENCE from @p local to @p node. */
static struct ucx_msg
ctl_msg(const struct ucx_fabric *uf, uint8_t kind, uint16_t local, uint16_t node)
{
	return (struct ucx_msg){ .kind = kind, .src_node = local, .dst_node = node,
				 .n_mn = uf->n_mn, .n_cn = (uint16_t)(uf->n_nodes - uf->n_mn),
				 .digest = uf->digest };
}

unsigned
ucx_cut_node(struct ucx_fabric *uf, uint16_t node, int keep_fd)
{
	struct sockaddr_in peer;
	unsigned cut = 0;
	char name[16];
	long max_fd = sysconf(_SC_OPEN_MAX);

	if (node < uf->n_mn || node >= uf->n_nodes)
		return 0;
	/* the incarnation admitted is the one fenced: a newer one's HELLO un-fences (ctl_admit()) */
	__atomic_store_n(&uf->fenced_inc[node], __atomic_load_n(&uf->admitted[node], __ATOMIC_ACQUIRE),
			 __ATOMIC_RELEASE);
	__atomic_fetch_or(&uf->fenced, UINT64_C(1) << node, __ATOMIC_RELEASE);
	/* a connection is the node's only if no other node has its IP */
	for (uint16_t i = 0; i < uf->n_nodes; i++)
		if (i != node && uf->addr[i].sin_addr.s_addr == uf->addr[node].sin_addr.s_addr) {
			UCX_LOG(WARNING, "%s is fenced, but its connections cannot be told apart (another node has its IP address): none cut",
				ctl_node_name(uf, node, name, sizeof(name)));
			return 0;
		}
	for (int fd = 0; fd < max_fd && fd < 65536; fd++) {
		socklen_t pl = sizeof(peer);
		int type;
		socklen_t tl = sizeof(type);

		if (fd == keep_fd || getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) != 0 ||
		    type != SOCK_STREAM || getpeername(fd, (struct sockaddr *)&peer, &pl) != 0 ||
		    peer.sin_family != AF_INET ||
		    peer.sin_addr.s_addr != uf->addr[node].sin_addr.s_addr)
			continue;
		/* UCX sees the connection fail: its endpoints to the node go to
		 * the error state; the node's later segments meet a closed port */
		if (shutdown(fd, SHUT_RDWR) == 0)
			cut++;
	}
	UCX_LOG(NOTICE, "%s fenced: %u of its connections cut", ctl_node_name(uf, node, name, sizeof(name)),
		cut);
	return cut;
}

int
ucx_fence_node(struct dtxn_fabric *f, uint16_t node)
{
	struct ucx_fabric *uf = UCX_FABRIC(f);
	uint16_t self = (uint16_t)__builtin_ctzll(uf->serve_mask);
	uint8_t *buf;
	int failed = 0;

	if (node < uf->n_mn || node >= uf->n_nodes)
		return -EINVAL;
	buf = malloc(UCX_MSG_MAX);
	if (buf == NULL)
		return -ENOMEM;
	for (uint16_t m = 0; m < uf->n_mn; m++) {
		struct ucx_msg fence = ctl_msg(uf, UCX_MSG_FENCE, self, m), ans;
		char name[16];

		if (uf->serve_mask >> m & 1) {
			(void)ucx_cut_node(uf, node, -1);
			continue;
		}
		fence.base = node;
		if (ctl_exchange(uf, &fence, buf, &ans) != 0 || ans.kind != UCX_MSG_FENCED) {
			UCX_LOG(WARNING, "%s did not confirm the fence of node %u",
				ctl_node_name(uf, m, name, sizeof(name)), node);
			failed = -EIO;
		}
	}
	free(buf);
	return failed;
}

static uint64_t
ctl_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ucx_take_over() for one CN @p cn: its HELLO to every MN, UCX_INC_NEXT to
 * MN 0, then the incarnation MN 0 admitted. */
static int
ctl_take_over_one(struct ucx_fabric *uf, uint16_t cn, uint8_t *buf)
{
	uint64_t deadline = ctl_mono_ns() + uf->connect_timeout_ns;
	uint32_t inc = UCX_INC_NEXT;
	char name[16], mn[16];

	for (uint16_t m = 0; m < uf->n_mn; m++) {
		struct ucx_msg hello = ctl_msg(uf, UCX_MSG_HELLO, cn, m), ans;
		int rc;

		hello.incarnation = inc;
		while ((rc = ctl_exchange(uf, &hello, buf, &ans)) == -EAGAIN ||
		       (rc == 0 && ans.kind == UCX_MSG_REFUSE && ans.reason == UCX_REFUSE_NOT_READY)) {
			if (ctl_mono_ns() >= deadline) {
				dtxn_fabric_open_error_set("--fabric ucx: %s did not answer within %.1f s (--connect-timeout) while %s was taken over",
							   ctl_node_name(uf, m, mn, sizeof(mn)),
							   (double)uf->connect_timeout_ns / 1e9,
							   ctl_node_name(uf, cn, name, sizeof(name)));
				return -ETIMEDOUT;
			}
			usleep(CTL_RETRY_MS * 1000);
		}
		if (rc != 0 || ans.kind != UCX_MSG_ACCEPT) {
			dtxn_fabric_open_error_set("--fabric ucx: %s did not admit %s after its fence (%s)",
						   ctl_node_name(uf, m, mn, sizeof(mn)),
						   ctl_node_name(uf, cn, name, sizeof(name)),
						   rc != 0 ? strerror(-rc) : "refused");
			return -ECONNREFUSED;
		}
		inc = ans.incarnation; /* MN 0's: the others are asked for it */
	}
	uf->self_inc[cn] = inc;
	__atomic_fetch_or(&uf->self_inc_known, UINT64_C(1) << cn, __ATOMIC_RELEASE);
	UCX_LOG(NOTICE, "%s taken over: fenced at every MN, admitted as its incarnation %u",
		ctl_node_name(uf, cn, name, sizeof(name)), inc);
	return 0;
}

int
ucx_take_over(struct ucx_fabric *uf)
{
	uint8_t *buf;
	int rc = 0;

	if (uf->take_over == 0)
		return 0;
	buf = malloc(UCX_MSG_MAX);
	if (buf == NULL)
		return -ENOMEM;
	for (uint64_t left = uf->take_over; left != 0 && rc == 0; left &= left - 1) {
		uint16_t cn = (uint16_t)__builtin_ctzll(left);

		rc = ucx_fence_node(&uf->base, cn);
		if (rc != 0) {
			dtxn_fabric_open_error_set("--fabric ucx: an MN did not confirm the fence of node %u before it was taken over",
						   cn);
			break;
		}
		rc = ctl_take_over_one(uf, cn, buf);
	}
	free(buf);
	return rc;
}

int
ucx_remote_get(struct ucx_fabric *uf, uint16_t local, uint16_t node, bool once,
	       const struct ucx_remote **out)
{
	static const char *const why[] = {
		[UCX_REFUSE_DIGEST] = "it was started for another run (benchmark, protocol, options, catalog or dtxn version differ)",
		[UCX_REFUSE_SHAPE] = "it was started for another cluster shape (--mn/--cn)",
		[UCX_REFUSE_NODE] = "the process at that address does not serve it",
		[UCX_REFUSE_FENCED] = "it was fenced: declared dead by a survivor",
		[UCX_REFUSE_PREDECESSOR] = "", /* retried */
	};
	uint8_t *buf = NULL;
	struct ucx_remote *r = &uf->remote[node];
	uint64_t deadline = ctl_mono_ns() + uf->connect_timeout_ns;
	char name[16], self[16], addr[32];
	struct ucx_msg m;
	int rc;

	pthread_mutex_lock(&uf->connect_lock);
	if (r->known)
		goto done;
	buf = malloc(UCX_MSG_MAX);
	if (buf == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	for (;;) {
		struct ucx_msg hello = ctl_msg(uf, UCX_MSG_HELLO, local, node);
		bool know = uf->self_inc_known >> local & 1;

		/* a CN to an MN: its incarnation, or the next one while it does
		 * not know it (its first HELLO, to MN 0: ucx_open()) */
		if (local >= uf->n_mn && node < uf->n_mn)
			hello.incarnation = know ? uf->self_inc[local] : UCX_INC_NEXT;
		else if (know)
			hello.incarnation = uf->self_inc[local];
		rc = ctl_exchange(uf, &hello, buf, &m);
		if (rc == 0 && m.kind == UCX_MSG_ACCEPT)
			break;
		if (rc == 0 && m.reason == UCX_REFUSE_FENCED && hello.incarnation != UCX_INC_NEXT) {
			dtxn_fabric_open_error_set("--fabric ucx: %s at %s refused %s's incarnation %u: it was fenced, declared dead by a survivor (the fenced incarnation there: %u)",
						   ctl_node_name(uf, node, name, sizeof(name)),
						   ctl_addr_str(&uf->addr[node], addr, sizeof(addr)),
						   ctl_node_name(uf, local, self, sizeof(self)),
						   hello.incarnation, m.incarnation);
			rc = -ECONNREFUSED;
			goto out;
		}
		if (rc == 0 && m.reason != UCX_REFUSE_NOT_READY && m.reason != UCX_REFUSE_PREDECESSOR) {
			dtxn_fabric_open_error_set("--fabric ucx: %s at %s refused %s: %s",
						   ctl_node_name(uf, node, name, sizeof(name)),
						   ctl_addr_str(&uf->addr[node], addr, sizeof(addr)),
						   ctl_node_name(uf, local, self, sizeof(self)), why[m.reason]);
			rc = -ECONNREFUSED;
			goto out;
		}
		if (rc == 0 && m.reason == UCX_REFUSE_PREDECESSOR && ctl_mono_ns() >= deadline) {
			dtxn_fabric_open_error_set("--fabric ucx: %s at %s still serves %s's previous incarnation after %.1f s (--connect-timeout): nobody declared it dead (a restart needs --lease-ms and a survivor)",
						   ctl_node_name(uf, node, name, sizeof(name)),
						   ctl_addr_str(&uf->addr[node], addr, sizeof(addr)),
						   ctl_node_name(uf, local, self, sizeof(self)),
						   (double)uf->connect_timeout_ns / 1e9);
			rc = -ETIMEDOUT;
			goto out;
		}
		if (rc != 0 && rc != -EAGAIN) {
			dtxn_fabric_open_error_set("--fabric ucx: %s at %s answered a bad connect message (%s)",
						   ctl_node_name(uf, node, name, sizeof(name)),
						   ctl_addr_str(&uf->addr[node], addr, sizeof(addr)),
						   strerror(-rc));
			goto out;
		}
		if (once) {
			rc = -EAGAIN; /* not there yet: the caller waits for its CONNECT */
			goto out;
		}
		if (ctl_mono_ns() >= deadline) {
			dtxn_fabric_open_error_set("--fabric ucx: %s at %s did not answer within %.1f s (--connect-timeout)",
						   ctl_node_name(uf, node, name, sizeof(name)),
						   ctl_addr_str(&uf->addr[node], addr, sizeof(addr)),
						   (double)uf->connect_timeout_ns / 1e9);
			rc = -ETIMEDOUT;
			goto out;
		}
		usleep(CTL_RETRY_MS * 1000);
	}
	r->waddr = malloc(m.waddr_len);
	r->rkey = m.rkey_len != 0 ? malloc(m.rkey_len) : NULL;
	if (r->waddr == NULL || (m.rkey_len != 0 && r->rkey == NULL)) {
		free(r->waddr);
		free(r->rkey);
		r->waddr = r->rkey = NULL;
		rc = -ENOMEM;
		goto out;
	}
	memcpy(r->waddr, m.waddr, m.waddr_len);
	r->waddr_len = m.waddr_len;
	if (m.rkey_len != 0)
		memcpy(r->rkey, m.rkey, m.rkey_len);
	r->rkey_len = m.rkey_len;
	r->base = m.base;
	r->len = m.region_len;
	if (local >= uf->n_mn && node < uf->n_mn && !(uf->self_inc_known >> local & 1)) {
		/* the incarnation this MN admitted: every other MN's HELLO says it */
		uf->self_inc[local] = m.incarnation;
		__atomic_fetch_or(&uf->self_inc_known, UINT64_C(1) << local, __ATOMIC_RELEASE);
		if (m.incarnation != 0)
			UCX_LOG(NOTICE, "%s: %s admitted this process as its incarnation %u",
				ctl_node_name(uf, local, self, sizeof(self)),
				ctl_node_name(uf, node, name, sizeof(name)), m.incarnation);
	}
	if (node < uf->n_mn && r->len == 0) {
		rc = -EPROTO;
		dtxn_fabric_open_error_set("--fabric ucx: %s answered without its region",
					   ctl_node_name(uf, node, name, sizeof(name)));
		goto out;
	}
	r->gen++;
	__atomic_store_n(&r->known, true, __ATOMIC_RELEASE);
done:
	*out = r;
	rc = 0;
out:
	pthread_mutex_unlock(&uf->connect_lock);
	free(buf);
	return rc;
}

int
ucx_remote_refresh(struct ucx_fabric *uf, uint16_t local, uint16_t node, uint32_t *gen,
		   const struct ucx_remote **out)
{
	struct ucx_remote *r = &uf->remote[node];
	int rc;

	pthread_mutex_lock(&uf->connect_lock);
	if (r->known && r->gen == *gen) {
		/* the restarted process's: asked again; the old buffers stay */
		r->known = false;
		r->waddr = r->rkey = NULL;
	}
	pthread_mutex_unlock(&uf->connect_lock);
	rc = ucx_remote_get(uf, local, node, false, out);
	if (rc == 0)
		*gen = (*out)->gen;
	return rc;
}

void
ucx_remote_forget(struct ucx_fabric *uf)
{
	for (unsigned i = 0; i < DTXN_MAX_NODES; i++) {
		free(uf->remote[i].waddr);
		free(uf->remote[i].rkey);
		memset(&uf->remote[i], 0, sizeof(uf->remote[i]));
	}
}
