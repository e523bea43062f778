// SPDX-License-Identifier: GPL-2.0
/*
 * ibdevsim: reliable connected QPs.
 *
 * The send worker of an RC QP hands each request to the fabric as a
 * packet carrying a struct ibdevsim_rc_op: it is routed like any packet
 * (LIDs, the switches' forwarding tables, ports ACTIVE) but not subject to
 * the fault knobs, and the responder's port carries the operation out in
 * its receive work when the packet lands, moving the data directly between
 * the two ends' buffers (one kernel, virtual DMA addresses).  The requester
 * waits for the packet to be freed, which ends the operation: a request no
 * responder took completes with IB_WC_RETRY_EXC_ERR, as a real HCA's does
 * once its transport retries are spent.  Any error moves the QP to the
 * error state, which flushes the rest of its work.
 *
 * Buffers are checked against the MRs their keys name (mem.c) when the
 * data moves.  The DMA key, which kernel ULPs use as L_Key and R_Key,
 * covers all kernel memory, as an unsafe global R_Key does on hardware;
 * user QPs must use registered MRs.
 */

#include <linux/delay.h>
#include <linux/slab.h>

#include "ibdevsim.h"

/**
 * ibdevsim_rc_post_check() - validate an RC send work request
 * @qp: the QP
 * @wr: the request
 * @len: set to the bytes it moves
 *
 * Return: 0, or -EINVAL for an opcode the simulator lacks (atomics, fast
 * registration) or too many SGEs.
 */
int ibdevsim_rc_post_check(const struct ibdevsim_qp *qp,
			   const struct ib_send_wr *wr, u32 *len)
{
	int i;

	switch (wr->opcode) {
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
	case IB_WR_SEND_WITH_INV:
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
		break;
	default:
		return -EINVAL;
	}
	if (wr->num_sge < 0 || wr->num_sge > qp->max_send_sge)
		return -EINVAL;
	*len = 0;
	for (i = 0; i < wr->num_sge; i++)
		*len += wr->sg_list[i].length;
	return 0;
}

/**
 * ibdevsim_rc_fill_swqe() - copy what an RC request needs into its WQE
 * @swqe: the WQE, with room for @wr's SGEs
 * @wr: the request, checked by ibdevsim_rc_post_check()
 */
void ibdevsim_rc_fill_swqe(struct ibdevsim_swqe *swqe,
			   const struct ib_send_wr *wr)
{
	swqe->wr_opcode = wr->opcode;
	swqe->solicited = wr->send_flags & IB_SEND_SOLICITED;
	swqe->num_sge = wr->num_sge;
	memcpy(swqe->sgl, wr->sg_list, wr->num_sge * sizeof(*wr->sg_list));
	switch (wr->opcode) {
	case IB_WR_RDMA_READ:
		swqe->opcode = IB_WC_RDMA_READ;
		break;
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		swqe->opcode = IB_WC_RDMA_WRITE;
		break;
	default:
		swqe->opcode = IB_WC_SEND;
		break;
	}
	if (wr->opcode == IB_WR_RDMA_READ || wr->opcode == IB_WR_RDMA_WRITE ||
	    wr->opcode == IB_WR_RDMA_WRITE_WITH_IMM) {
		swqe->remote_addr = rdma_wr(wr)->remote_addr;
		swqe->rkey = rdma_wr(wr)->rkey;
	}
	if (wr->opcode == IB_WR_SEND_WITH_INV)
		swqe->ex.invalidate_rkey = wr->ex.invalidate_rkey;
	else
		swqe->ex.imm_data = wr->ex.imm_data;
}

/*
 * Check the requester's own buffers of @swqe, which a READ writes into;
 * false if an L_Key, a bound or a right is wrong.
 */
static bool ibdevsim_rc_local(struct ibdevsim_qp *req,
			      const struct ibdevsim_swqe *swqe,
			      struct ibdevsim_seg *segs)
{
	return ibdevsim_sges_resolve(req, swqe->sgl, swqe->num_sge,
				     swqe->wr_opcode == IB_WR_RDMA_READ ?
				     IB_ACCESS_LOCAL_WRITE : 0, segs);
}

/**
 * ibdevsim_qp_error() - move a QP to the error state
 * @qp: the QP
 *
 * Posted receives complete with a flush error now, sends as the send
 * worker reaches them.
 *
 * Context: any, no simulator lock held; @qp alive (its own work, or the
 * receive work of a port it is reachable from).
 */
void ibdevsim_qp_error(struct ibdevsim_qp *qp)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->sq_lock, flags);
	qp->state = IB_QPS_ERR;
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	ibdevsim_rq_drain(qp, true);
	queue_work(ibdevsim_wq, &qp->send_work);
}

/**
 * ibdevsim_qp_event() - raise an asynchronous event of a QP
 * @qp: the QP
 * @ev: IBDEVSIM_QP_EV_*
 *
 * The QP's event handler is called from the QP's event work, never under
 * the simulator's locks, as a hardware driver calls it from its event
 * queue.  Destroying the QP cancels what is pending.
 *
 * Context: any; @qp reachable (not yet destroyed).
 */
void ibdevsim_qp_event(struct ibdevsim_qp *qp, int ev)
{
	set_bit(ev, &qp->events);
	queue_work(ibdevsim_wq, &qp->event_work);
}

/**
 * ibdevsim_qp_event_work() - deliver a QP's pending asynchronous events
 * @work: the QP's event_work
 */
void ibdevsim_qp_event_work(struct work_struct *work)
{
	static const enum ib_event_type type[IBDEVSIM_QP_EV_NUM] = {
		[IBDEVSIM_QP_EV_COMM_EST] = IB_EVENT_COMM_EST,
		[IBDEVSIM_QP_EV_FATAL] = IB_EVENT_QP_FATAL,
	};
	struct ibdevsim_qp *qp = container_of(work, struct ibdevsim_qp,
					      event_work);
	int ev;

	for (ev = 0; ev < IBDEVSIM_QP_EV_NUM; ev++) {
		struct ib_event e = {
			.device = qp->ibqp.device,
			.element.qp = &qp->ibqp,
			.event = type[ev],
		};

		if (!test_and_clear_bit(ev, &qp->events))
			continue;
		/* A fatal QP error puts the QP in error before it is told. */
		if (ev == IBDEVSIM_QP_EV_FATAL)
			ibdevsim_qp_error(qp);
		if (qp->ibqp.event_handler)
			qp->ibqp.event_handler(&e, qp->ibqp.qp_context);
	}
}

/**
 * ibdevsim_qp_inject_fatal() - a QP fails as hardware QPs sometimes do
 * @hca: the HCA
 * @qpn: the number of one of its UD or RC QPs
 *
 * The QP's event work moves it to the error state, which flushes its
 * work, and raises IB_EVENT_QP_FATAL (debugfs "qp_fatal" of the node).
 *
 * Context: process; takes the lock of @hca's QP table, which
 * ibdevsim_destroy_qp() takes before it cancels the event work.
 * Return: 0, or -ENOENT if @hca has no such QP.
 */
int ibdevsim_qp_inject_fatal(struct ibdevsim_hca *hca, u32 qpn)
{
	struct ibdevsim_qp *qp;
	unsigned long flags;
	int ret = -ENOENT;

	xa_lock_irqsave(&hca->qps, flags);
	qp = xa_load(&hca->qps, qpn);
	if (qp) {
		ibdevsim_qp_event(qp, IBDEVSIM_QP_EV_FATAL);
		ret = 0;
	}
	xa_unlock_irqrestore(&hca->qps, flags);
	return ret;
}

/*
 * The responder consumes a receive for a SEND or an RDMA WRITE with
 * immediate data; returns the requester's status.
 */
static enum ib_wc_status ibdevsim_rc_consume_recv(struct ibdevsim_qp *qp,
						  const struct ibdevsim_pkt *pkt,
						  u32 len, bool copy)
{
	const struct ibdevsim_swqe *swqe = pkt->rc->swqe;
	struct ibdevsim_seg dst[IBDEVSIM_MAX_SGE], src[IBDEVSIM_MAX_SGE];
	struct ib_wc wc = {
		.status = IB_WC_SUCCESS,
		.opcode = copy ? IB_WC_RECV : IB_WC_RECV_RDMA_WITH_IMM,
		.byte_len = len,
		.qp = &qp->ibqp,
		.src_qp = pkt->src_qpn,
		.slid = pkt->slid,
		.sl = pkt->sl,
		.pkey_index = qp->pkey_index,
		.port_num = qp->port,
	};
	struct ibdevsim_rwqe *rwqe;
	unsigned long flags;
	u32 i, room = 0;

	/* The requester's buffers, checked when it sent: the MR may be gone. */
	if (copy && !ibdevsim_rc_local(pkt->rc->qp, swqe, src))
		return IB_WC_LOC_PROT_ERR;
	spin_lock_irqsave(&qp->rq_lock, flags);
	if (!qp->rq_count) {
		spin_unlock_irqrestore(&qp->rq_lock, flags);
		return IB_WC_RNR_RETRY_EXC_ERR;
	}
	rwqe = ibdevsim_rq_slot(qp, qp->rq_head);
	qp->rq_head = (qp->rq_head + 1) % qp->rq_max;
	qp->rq_count--;
	wc.wr_id = rwqe->wr_id;
	for (i = 0; i < rwqe->num_sge; i++)
		room += rwqe->sge[i].length;
	if (copy) {
		if (!ibdevsim_sges_resolve(qp, rwqe->sge, rwqe->num_sge,
					   IB_ACCESS_LOCAL_WRITE, dst))
			wc.status = IB_WC_LOC_PROT_ERR;
		else if (room < len)
			wc.status = IB_WC_LOC_LEN_ERR;
		else
			ibdevsim_seg_copy(dst, rwqe->num_sge, src,
					  swqe->num_sge, len);
	}
	spin_unlock_irqrestore(&qp->rq_lock, flags);

	if (swqe->wr_opcode == IB_WR_SEND_WITH_INV) {
		wc.wc_flags |= IB_WC_WITH_INVALIDATE;
		wc.ex.invalidate_rkey = swqe->ex.invalidate_rkey;
	} else if (swqe->wr_opcode != IB_WR_SEND) {
		wc.wc_flags |= IB_WC_WITH_IMM;
		wc.ex.imm_data = swqe->ex.imm_data;
	}
	ibdevsim_cq_post(to_cq(qp->ibqp.recv_cq), &wc, swqe->solicited);
	if (wc.status == IB_WC_SUCCESS)
		return IB_WC_SUCCESS;
	ibdevsim_qp_error(qp);
	return wc.status == IB_WC_LOC_LEN_ERR ? IB_WC_REM_INV_REQ_ERR :
						IB_WC_REM_OP_ERR;
}

/*
 * Carry out an RDMA WRITE or READ of @req at the responder @qp: the R_Key
 * must name memory of @qp's PD, with the right the QP grants too.
 */
static enum ib_wc_status ibdevsim_rc_rdma(struct ibdevsim_qp *qp,
					  struct ibdevsim_qp *req,
					  const struct ibdevsim_swqe *swqe,
					  u32 len)
{
	int need = swqe->wr_opcode == IB_WR_RDMA_READ ?
		   IB_ACCESS_REMOTE_READ : IB_ACCESS_REMOTE_WRITE;
	struct ibdevsim_seg local[IBDEVSIM_MAX_SGE], remote;

	/* A zero-length RDMA touches no memory: no R_Key check (IBTA 9.4). */
	if (!len)
		return IB_WC_SUCCESS;
	if (!(qp->access & need) ||
	    !ibdevsim_mem_resolve(qp->hca, qp->ibqp.pd, swqe->rkey,
				  swqe->remote_addr, len, need, &remote))
		return IB_WC_REM_ACCESS_ERR;
	if (!ibdevsim_rc_local(req, swqe, local))
		return IB_WC_LOC_PROT_ERR;
	if (swqe->wr_opcode == IB_WR_RDMA_READ)
		ibdevsim_seg_copy(local, swqe->num_sge, &remote, 1, len);
	else
		ibdevsim_seg_copy(&remote, 1, local, swqe->num_sge, len);
	return IB_WC_SUCCESS;
}

/**
 * ibdevsim_rc_recv() - an RC request lands at its responder QP
 * @qp: the QP the packet names
 * @pkt: the packet, whose @rc says what to do and takes the outcome
 *
 * A QP that is not an RC QP in RTR or later, or not connected to the
 * requester, ignores the request (the requester's retries run out).  The
 * first request to reach a QP in RTR raises IB_EVENT_COMM_EST.
 *
 * Context: the receive work of @qp's port; the caller frees @pkt, which
 * tells the requester.
 */
void ibdevsim_rc_recv(struct ibdevsim_qp *qp, const struct ibdevsim_pkt *pkt)
{
	struct ibdevsim_rc_op *op = pkt->rc;
	const struct ibdevsim_swqe *swqe = op->swqe;
	enum ib_qp_state state = READ_ONCE(qp->state);
	u32 len = swqe->byte_len;
	unsigned long flags;
	bool first = false;

	if (qp->ibqp.qp_type != IB_QPT_RC ||
	    (state != IB_QPS_RTR && state != IB_QPS_RTS &&
	     state != IB_QPS_SQD) ||
	    qp->dest_qpn != op->qp->ibqp.qp_num)
		return;
	/*
	 * The first request to reach a QP still in RTR: the connection is
	 * up though the CM has not said so (its RTU is late or lost).
	 */
	if (state == IB_QPS_RTR) {
		spin_lock_irqsave(&qp->rq_lock, flags);
		first = !qp->comm_est;
		qp->comm_est = true;
		spin_unlock_irqrestore(&qp->rq_lock, flags);
	}
	if (first)
		ibdevsim_qp_event(qp, IBDEVSIM_QP_EV_COMM_EST);
	/* Keeps the MRs the buffers resolve to until the copies are done. */
	rcu_read_lock();
	switch (swqe->wr_opcode) {
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
	case IB_WR_SEND_WITH_INV:
		op->status = ibdevsim_rc_consume_recv(qp, pkt, len, true);
		break;
	case IB_WR_RDMA_WRITE_WITH_IMM:
		op->status = ibdevsim_rc_rdma(qp, op->qp, swqe, len);
		if (op->status == IB_WC_SUCCESS)
			op->status = ibdevsim_rc_consume_recv(qp, pkt, len,
							      false);
		break;
	default:
		op->status = ibdevsim_rc_rdma(qp, op->qp, swqe, len);
		break;
	}
	rcu_read_unlock();
}

/* One try of an RC request: the status the responder gave. */
static enum ib_wc_status ibdevsim_rc_try(struct ibdevsim_qp *qp,
					 struct ibdevsim_swqe *swqe)
{
	struct ibdevsim_port *port = &qp->hca->node->ports[qp->port];
	struct ibdevsim_rc_op op = {
		.qp = qp,
		.swqe = swqe,
		.status = IB_WC_RETRY_EXC_ERR,
	};
	struct ibdevsim_seg segs[IBDEVSIM_MAX_SGE];
	struct ibdevsim_pkt *pkt;
	unsigned long flags;
	bool ok;

	/* Checked again where the data moves: the MR may go meanwhile. */
	rcu_read_lock();
	ok = ibdevsim_rc_local(qp, swqe, segs);
	rcu_read_unlock();
	if (!ok)
		return IB_WC_LOC_PROT_ERR;
	pkt = ibdevsim_pkt_alloc(0, GFP_KERNEL);
	if (!pkt)
		return IB_WC_LOC_QP_OP_ERR;
	init_completion(&op.done);
	pkt->rc = &op;
	pkt->dlid = qp->dlid;
	pkt->sl = qp->sl;
	pkt->src_qpn = qp->ibqp.qp_num;
	pkt->dest_qpn = qp->dest_qpn;
	spin_lock_irqsave(&port->node->lock, flags);
	pkt->slid = port->st.lid | qp->path_bits;
	pkt->pkey = port->pkeys[qp->pkey_index % IBDEVSIM_PKEY_TBL_LEN];
	spin_unlock_irqrestore(&port->node->lock, flags);
	/* RC packets skip the fault knobs, so they are never delayed. */
	ibdevsim_xmit(port, pkt);
	wait_for_completion(&op.done);
	return op.status;
}

/**
 * ibdevsim_rc_send() - carry out one RC request of a QP's send queue
 * @qp: the requester, in RTS
 * @swqe: the request
 *
 * A request that finds no receive posted (receiver not ready) is tried
 * again every millisecond, @qp->rnr_retry times or, for 7, until it is
 * taken or the QP leaves RTS: a ULP that posts its receives right after
 * the connection is established may see its peer's first SEND early.
 *
 * Context: the QP's send work (process context, no lock held).
 * Return: the status to complete @swqe with; the caller moves the QP to
 * the error state on anything but success.
 */
enum ib_wc_status ibdevsim_rc_send(struct ibdevsim_qp *qp,
				   struct ibdevsim_swqe *swqe)
{
	enum ib_wc_status status;
	u32 tries = 0;

	for (;;) {
		status = ibdevsim_rc_try(qp, swqe);
		if (status != IB_WC_RNR_RETRY_EXC_ERR)
			return status;
		if (qp->rnr_retry != 7 && tries++ >= qp->rnr_retry)
			return status;
		if (READ_ONCE(qp->state) != IB_QPS_RTS)
			return IB_WC_WR_FLUSH_ERR;
		usleep_range(1000, 2000);
	}
}
