/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mlx5 driver: connections through librdmacm (doc/guides/mlx5.md,
 * "Connections"). One control thread per fabric runs the rdma_cm event
 * channel of every id of this process: the listeners (one per node it
 * serves), the ids it accepts and the ids of its own connects.
 *
 * - CN -> MN (one-sided QPs): the CN's dtxn_qp_create() resolves the MN's
 *   address, connects with a HELLO message and waits; the MN's listener
 *   creates the responder QP, accepts with an ACCEPT message carrying the
 *   region's base, length and rkey (and the device memory's), which the
 *   CN decodes and checks (mlx5_msg.c) before the QP is used.
 * - CN <-> CN (SEND/RECV): the QP of the higher node id connects; the
 *   other side accepts when its matching QP exists (a request that arrives
 *   first is held until then). The QPs are the driver's own (extended,
 *   mlx5dv), moved to RTR/RTS with rdma_init_qp_attr().
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_memzone.h>

#include "mlx5_private.h"

/*
 * Refuses a connection request from inside its event: the id is destroyed
 * once the event is acked (conn_thread); from elsewhere, at once.
 */
static void
conn_refuse(struct mlx5_fabric *mf, struct rdma_cm_id *id, bool in_event)
{
	rdma_reject(id, NULL, 0);
	if (in_event)
		mf->doomed = id;
	else
		rdma_destroy_id(id);
}

/* Moves @p qp to @p st with the attributes rdma_cm derived for @p id. */
static int
conn_qp_to(struct mlx5_fabric *mf, struct ibv_qp *qp, struct rdma_cm_id *id,
	   enum ibv_qp_state st)
{
	struct ibv_qp_attr a;
	int mask = 0;

	memset(&a, 0, sizeof(a));
	a.qp_state = st;
	if (rdma_init_qp_attr(id, &a, &mask) != 0)
		return -errno;
	if (st == IBV_QPS_RTR) {
		a.max_dest_rd_atomic = mf->dev.rd_atom;
		if (mf->dev.gid_index >= 0 && (mask & IBV_QP_AV) && a.ah_attr.is_global)
			a.ah_attr.grh.sgid_index = (uint8_t)mf->dev.gid_index;
	} else if (st == IBV_QPS_RTS) {
		a.max_rd_atomic = mf->dev.rd_atom;
	}
	return ibv_modify_qp(qp, &a, mask) != 0 ? -errno : 0;
}

int
mlx5_qp_modify_init(struct mlx5_qp *q)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = q->mf->dev.port,
		.qp_access_flags = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_ATOMIC,
	};

	return ibv_modify_qp(q->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			     IBV_QP_ACCESS_FLAGS) != 0 ? -errno : 0;
}

static void
conn_param(struct rdma_conn_param *p, const struct mlx5_fabric *mf, const uint8_t *msg,
	   uint32_t qp_num)
{
	memset(p, 0, sizeof(*p));
	p->private_data = msg;
	p->private_data_len = MLX5_MSG_BYTES;
	p->responder_resources = mf->dev.rd_atom;
	p->initiator_depth = mf->dev.rd_atom;
	p->retry_count = 7;
	p->rnr_retry_count = 7;  /* infinite: a SEND waits for its RECV */
	p->qp_num = qp_num;
}

int
mlx5_qp_connect(struct mlx5_qp *q)
{
	struct mlx5_fabric *mf = q->mf;
	struct rdma_cm_id *id;

	if (rdma_create_id(mf->listen_ch, &id, q, RDMA_PS_TCP) != 0)
		return -errno;
	q->id = id;
	if (rdma_resolve_addr(id, NULL, (struct sockaddr *)&mf->addr[q->base.remote_node],
			      MLX5_CM_TIMEOUT_MS) != 0) {
		int err = -errno;

		q->id = NULL;
		rdma_destroy_id(id);
		return err;
	}
	return 0;
}

/* Active side, route known: send the HELLO. */
static void
conn_route_resolved(struct mlx5_qp *q)
{
	struct mlx5_fabric *mf = q->mf;
	struct mlx5_msg hello = { .kind = MLX5_MSG_HELLO, .src_node = q->base.local_node,
				  .dst_node = q->base.remote_node, .qp_seq = q->seq };
	struct rdma_conn_param p;
	uint8_t buf[MLX5_MSG_BYTES];

	if (q->id->verbs != mf->dev.ctx) {
		MLX5_LOG(ERR, "node %u: route goes through %s, not %s (--dev)", q->base.remote_node,
			 ibv_get_device_name(q->id->verbs->device), mf->dev.name);
		q->state = -ENODEV;
		return;
	}
	if (mlx5_msg_encode(buf, sizeof(buf), &hello) < 0) {
		q->state = -EINVAL;
		return;
	}
	conn_param(&p, mf, buf, q->qp->qp_num);
	if (rdma_connect(q->id, &p) != 0)
		q->state = -errno;
}

/* Active side: the peer accepted; check its message, go to RTS. */
static void
conn_response(struct mlx5_qp *q, const struct rdma_cm_event *ev)
{
	struct mlx5_msg m;
	int rc = mlx5_msg_decode(ev->param.conn.private_data, ev->param.conn.private_data_len, &m);

	if (rc == 0 && (m.kind != MLX5_MSG_ACCEPT || m.src_node != q->base.remote_node ||
			m.dst_node != q->base.local_node ||
			q->to_mn != ((m.flags & MLX5_MSG_F_REGION) != 0)))
		rc = -EPROTO;
	if (rc != 0) {
		MLX5_LOG(ERR, "QP %u -> %u: malformed connect message refused (%s)",
			 q->base.local_node, q->base.remote_node, strerror(-rc));
		q->state = rc; /* dtxn_qp_create() fails and destroys the id */
		return;
	}
	if (q->to_mn)
		q->peer = (struct mlx5_peer_mr){ .base = m.base, .len = m.len, .rkey = m.rkey,
						 .dm_rkey = m.dm_rkey, .dm_len = m.dm_len };
	rc = conn_qp_to(q->mf, q->qp, q->id, IBV_QPS_RTR);
	if (rc == 0)
		rc = conn_qp_to(q->mf, q->qp, q->id, IBV_QPS_RTS);
	if (rc == 0 && rdma_establish(q->id) != 0)
		rc = -errno;
	q->state = rc == 0 ? 1 : rc;
}

/* Passive side, MN: a responder QP on the request's id and the region's keys. */
static void
conn_accept_mn(struct mlx5_fabric *mf, struct rdma_cm_id *id, const struct mlx5_msg *hello)
{
	const struct mlx5_mn *mn = &mf->mn[hello->dst_node];
	struct mlx5_msg acc = {
		.kind = MLX5_MSG_ACCEPT, .src_node = hello->dst_node, .dst_node = hello->src_node,
		.qp_seq = hello->qp_seq, .flags = MLX5_MSG_F_REGION,
		.base = (uintptr_t)mn->mz->addr, .len = mn->mz->len, .rkey = mn->mr->rkey,
	};
	struct ibv_qp_init_attr qa = {
		.send_cq = mf->accept_cq, .recv_cq = mf->accept_cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct mlx5_accepted *a = calloc(1, sizeof(*a));
	struct rdma_conn_param p;
	uint8_t buf[MLX5_MSG_BYTES];

	if (mn->dm_len != 0) {
		acc.flags |= MLX5_MSG_F_DM;
		acc.dm_rkey = mn->dm_mr->rkey;
		acc.dm_len = mn->dm_len;
	}
	if (a == NULL || mlx5_msg_encode(buf, sizeof(buf), &acc) < 0 ||
	    rdma_create_qp(id, mf->dev.pd, &qa) != 0) {
		free(a);
		conn_refuse(mf, id, true);
		return;
	}
	conn_param(&p, mf, buf, 0);
	id->context = NULL;
	if (rdma_accept(id, &p) != 0) {
		MLX5_LOG(ERR, "MN %u: accept of node %u failed: %s", hello->dst_node,
			 hello->src_node, strerror(errno));
		rdma_destroy_qp(id);
		free(a);
		conn_refuse(mf, id, true);
		return;
	}
	a->id = id;
	a->hello = *hello;
	rte_spinlock_lock(&mf->lock);
	LIST_INSERT_HEAD(&mf->accepted, a, next);
	rte_spinlock_unlock(&mf->lock);
}

/* Passive side, CN: the matching QP exists; bring it up and accept. */
static void
conn_accept_cn(struct mlx5_qp *q, struct rdma_cm_id *id, bool in_event)
{
	struct mlx5_msg acc = { .kind = MLX5_MSG_ACCEPT, .src_node = q->base.local_node,
				.dst_node = q->base.remote_node, .qp_seq = q->seq };
	struct rdma_conn_param p;
	uint8_t buf[MLX5_MSG_BYTES];
	int rc;

	id->context = q;
	q->id = id;
	rc = mlx5_msg_encode(buf, sizeof(buf), &acc) < 0 ? -EINVAL : 0;
	if (rc == 0)
		rc = conn_qp_to(q->mf, q->qp, id, IBV_QPS_RTR);
	if (rc == 0)
		rc = conn_qp_to(q->mf, q->qp, id, IBV_QPS_RTS);
	conn_param(&p, q->mf, buf, q->qp->qp_num);
	if (rc == 0 && rdma_accept(id, &p) != 0)
		rc = -errno;
	if (rc != 0) {
		conn_refuse(q->mf, id, in_event);
		q->id = NULL;
		q->state = rc;
	}
}

void
mlx5_qp_wait_peer(struct mlx5_qp *q)
{
	struct mlx5_fabric *mf = q->mf;
	struct mlx5_accepted *a;

	rte_spinlock_lock(&mf->lock);
	LIST_FOREACH(a, &mf->pending, next)
		if (a->hello.src_node == q->base.remote_node &&
		    a->hello.dst_node == q->base.local_node && a->hello.qp_seq == q->seq)
			break;
	if (a != NULL)
		LIST_REMOVE(a, next);
	else
		LIST_INSERT_HEAD(&mf->waiting, q, wait_next);
	rte_spinlock_unlock(&mf->lock);
	if (a != NULL) {
		conn_accept_cn(q, a->id, false);
		free(a);
	}
}

void
mlx5_conn_forget(struct mlx5_qp *q)
{
	struct mlx5_fabric *mf = q->mf;
	struct mlx5_qp *w;

	rte_spinlock_lock(&mf->lock);
	LIST_FOREACH(w, &mf->waiting, wait_next)
		if (w == q) {
			LIST_REMOVE(q, wait_next);
			break;
		}
	rte_spinlock_unlock(&mf->lock);
}

static void
conn_request(struct mlx5_fabric *mf, struct rdma_cm_event *ev)
{
	uint16_t node = (uint16_t)((uint8_t *)ev->listen_id->context - mf->listen_tag);
	struct mlx5_accepted *a;
	struct mlx5_qp *q;
	struct mlx5_msg m;
	int rc = mlx5_msg_decode(ev->param.conn.private_data, ev->param.conn.private_data_len, &m);

	if (rc == 0 && (m.kind != MLX5_MSG_HELLO || m.dst_node != node ||
			m.src_node < mf->n_mn || m.src_node >= mf->n_nodes))
		rc = -EPROTO;
	if (rc != 0) {
		MLX5_LOG(WARNING, "node %u: malformed connect request refused (%s)", node,
			 strerror(-rc));
		conn_refuse(mf, ev->id, true);
		return;
	}
	if (node < mf->n_mn) {
		conn_accept_mn(mf, ev->id, &m);
		return;
	}
	rte_spinlock_lock(&mf->lock);
	LIST_FOREACH(q, &mf->waiting, wait_next)
		if (q->base.local_node == node && q->base.remote_node == m.src_node &&
		    q->seq == m.qp_seq)
			break;
	if (q != NULL) {
		LIST_REMOVE(q, wait_next);
	} else {
		a = calloc(1, sizeof(*a));
		if (a != NULL) {
			a->id = ev->id;
			a->hello = m;
			ev->id->context = NULL;
			LIST_INSERT_HEAD(&mf->pending, a, next);
		}
	}
	rte_spinlock_unlock(&mf->lock);
	if (q != NULL)
		conn_accept_cn(q, ev->id, true);
	else if (a == NULL)
		conn_refuse(mf, ev->id, true);
}

static void
conn_event(struct mlx5_fabric *mf, struct rdma_cm_event *ev)
{
	struct mlx5_qp *q = ev->listen_id == NULL ? ev->id->context : NULL;

	switch (ev->event) {
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		conn_request(mf, ev);
		return;
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		if (q != NULL && rdma_resolve_route(q->id, MLX5_CM_TIMEOUT_MS) != 0)
			q->state = -errno;
		return;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		if (q != NULL)
			conn_route_resolved(q);
		return;
	case RDMA_CM_EVENT_CONNECT_RESPONSE:
		if (q != NULL)
			conn_response(q, ev);
		return;
	case RDMA_CM_EVENT_ESTABLISHED:
		if (q != NULL && q->state == 0)
			q->state = 1;
		return;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_CONNECT_ERROR:
		if (q != NULL)
			q->state = -EHOSTUNREACH;
		return;
	case RDMA_CM_EVENT_REJECTED:
		if (q != NULL)
			q->state = -ECONNREFUSED;
		return;
	case RDMA_CM_EVENT_DISCONNECTED:
		/* the peer is gone: its WRs fail (transport retries), the QP errors */
		if (q != NULL && q->state == 1)
			MLX5_LOG(WARNING, "QP %u -> %u: peer disconnected", q->base.local_node,
				 q->base.remote_node);
		return;
	default:
		return;
	}
}

static void *
conn_thread(void *arg)
{
	struct mlx5_fabric *mf = arg;
	struct pollfd pfd = { .fd = mf->listen_ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	while (!mf->stop) {
		if (poll(&pfd, 1, 20) <= 0)
			continue;
		while (rdma_get_cm_event(mf->listen_ch, &ev) == 0) {
			conn_event(mf, ev);
			rdma_ack_cm_event(ev);
			if (mf->doomed != NULL) { /* a refused request */
				rdma_destroy_id(mf->doomed);
				mf->doomed = NULL;
			}
		}
	}
	return NULL;
}

int
mlx5_listen_start(struct mlx5_fabric *mf)
{
	int flags, rc;

	mf->listen_ch = rdma_create_event_channel();
	if (mf->listen_ch == NULL)
		return -errno;
	flags = fcntl(mf->listen_ch->fd, F_GETFL);
	if (fcntl(mf->listen_ch->fd, F_SETFL, flags | O_NONBLOCK) != 0)
		return -errno;
	mf->accept_cq = ibv_create_cq(mf->dev.ctx, 16, NULL, NULL, 0);
	if (mf->accept_cq == NULL)
		return -errno;
	for (unsigned i = 0; i < mf->n_nodes; i++) {
		struct rdma_cm_id *id;

		if (!(mf->serve >> i & 1))
			continue;
		if (rdma_create_id(mf->listen_ch, &id, &mf->listen_tag[i], RDMA_PS_TCP) != 0)
			return -errno;
		mf->listen_id[i] = id;
		if (rdma_bind_addr(id, (struct sockaddr *)&mf->addr[i]) != 0 ||
		    rdma_listen(id, 64) != 0) {
			rc = errno;
			dtxn_fabric_open_error_set("--fabric mlx5: node %u cannot listen on %s:%u: %s",
						   i, inet_ntoa(mf->addr[i].sin_addr),
						   ntohs(mf->addr[i].sin_port), strerror(rc));
			return -rc;
		}
	}
	rc = rte_ctrl_thread_create(&mf->listener, "dtxn-mlx5-cm", NULL, conn_thread, mf);
	if (rc != 0)
		return -rc;
	mf->listener_up = true;
	return 0;
}

void
mlx5_listen_stop(struct mlx5_fabric *mf)
{
	struct mlx5_accepted *a;

	if (mf->listener_up) {
		mf->stop = true;
		pthread_join(mf->listener, NULL);
		mf->listener_up = false;
	}
	while ((a = LIST_FIRST(&mf->accepted)) != NULL) {
		LIST_REMOVE(a, next);
		rdma_disconnect(a->id);
		rdma_destroy_qp(a->id);
		rdma_destroy_id(a->id);
		free(a);
	}
	while ((a = LIST_FIRST(&mf->pending)) != NULL) {
		LIST_REMOVE(a, next);
		rdma_reject(a->id, NULL, 0);
		rdma_destroy_id(a->id);
		free(a);
	}
	for (unsigned i = 0; i < DTXN_MAX_NODES; i++)
		if (mf->listen_id[i] != NULL) {
			rdma_destroy_id(mf->listen_id[i]);
			mf->listen_id[i] = NULL;
		}
	if (mf->accept_cq != NULL)
		ibv_destroy_cq(mf->accept_cq);
	mf->accept_cq = NULL;
	if (mf->listen_ch != NULL)
		rdma_destroy_event_channel(mf->listen_ch);
	mf->listen_ch = NULL;
}
