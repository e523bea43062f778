// SPDX-License-Identifier: GPL-2.0
/*
 * ibdevsim: the ib_device of an HCA and its verbs (PD, MRs, AH, CQ, the
 * SMI, GSI, UD and RC QPs and UD multicast attachments; RC requests are
 * carried out in rc.c, MRs and the copies checked against them live in
 * mem.c), for kernel ULPs and, through ib_uverbs, for user processes.
 *
 * post_send() copies the payload into a packet and queues it; the QP's
 * send work puts it on the wire (ibdevsim_xmit()) and completes it, never
 * under the caller's locks.  A packet arriving at a port is copied into
 * the destination QP's oldest posted receive by ibdevsim_qp_deliver(), in
 * the receive work of the port (fabric.c).  Completion handlers are called
 * with bottom halves off and no simulator lock held, as a hardware
 * driver calls them from its interrupt.
 *
 * The queues are accounted as hardware accounts them: a send queue slot
 * is free again only when the WQE's completion, or that of a later
 * signaled WQE, is polled; a failed UD, GSI or SMI send stops the send
 * queue in SQE, which flushes what follows until the QP is modified back
 * to RTS; a CQ that overflows loses the completion and raises
 * IB_EVENT_CQ_ERR, moving the QP that lost it to error; and a QP reset
 * or destroyed takes its completions out of its CQs.
 */

#include <linux/slab.h>
#include <rdma/ib_mad.h>

#include <kunit/visibility.h>

#include "ibdevsim.h"

#define IBDEVSIM_MAX_CQE	65536

static int ibdevsim_query_device(struct ib_device *ibdev,
				 struct ib_device_attr *attr,
				 struct ib_udata *udata)
{
	struct ibdevsim_node *node = to_hca(ibdev)->node;

	if (udata && (udata->inlen || udata->outlen))
		return -EINVAL;
	memset(attr, 0, sizeof(*attr));
	attr->sys_image_guid = cpu_to_be64(node->guid);
	attr->max_mr_size = U64_MAX;
	attr->page_size_cap = PAGE_SIZE;
	attr->vendor_id = IBDEVSIM_VENDOR_ID;
	attr->vendor_part_id = IBDEVSIM_HCA_DEVICE_ID;
	attr->max_qp = 1 << 16;
	attr->max_qp_wr = IBDEVSIM_MAX_WR;
	attr->kernel_cap_flags = IBK_LOCAL_DMA_LKEY;
	attr->device_cap_flags = IB_DEVICE_MEM_MGT_EXTENSIONS;
	attr->max_fast_reg_page_list_len = IBDEVSIM_FR_MAX_PAGES;
	attr->max_send_sge = IBDEVSIM_MAX_SGE;
	attr->max_recv_sge = IBDEVSIM_MAX_SGE;
	attr->max_sge_rd = IBDEVSIM_MAX_SGE;
	attr->max_cq = 1 << 16;
	attr->max_cqe = IBDEVSIM_MAX_CQE;
	attr->max_mr = 1 << 16;
	attr->max_srq = 1 << 16;
	attr->max_srq_wr = IBDEVSIM_MAX_WR;
	attr->max_srq_sge = IBDEVSIM_MAX_SGE;
	attr->max_pd = 1 << 16;
	attr->max_ah = 1 << 16;
	attr->max_pkeys = IBDEVSIM_PKEY_TBL_LEN;
	attr->max_mcast_grp = IBDEVSIM_MAX_MCAST_GRP;
	attr->max_mcast_qp_attach = IBDEVSIM_MAX_MCAST_QP_ATTACH;
	attr->max_total_mcast_qp_attach = IBDEVSIM_MAX_MCAST_ATTACH;
	attr->max_qp_rd_atom = 16;
	attr->max_qp_init_rd_atom = 16;
	attr->max_res_rd_atom = 16 << 16;
	attr->local_ca_ack_delay = 15;
	return 0;
}

static int ibdevsim_query_port(struct ib_device *ibdev, u32 port_num,
			       struct ib_port_attr *attr)
{
	struct ibdevsim_port *port = &to_hca(ibdev)->node->ports[port_num];
	unsigned long flags;

	spin_lock_irqsave(&port->node->lock, flags);
	attr->state = port->st.state;
	attr->phys_state = port->st.phys_state;
	attr->max_mtu = IB_MTU_4096;
	attr->active_mtu = ib_mtu_int_to_enum(ibdevsim_port_mtu(port));
	attr->gid_tbl_len = IBDEVSIM_GID_TBL_LEN;
	attr->port_cap_flags = port->st.cap_mask;
	attr->max_msg_sz = 1U << 31;
	attr->bad_pkey_cntr = port->st.pkey_violations;
	attr->qkey_viol_cntr = port->st.qkey_violations;
	attr->pkey_tbl_len = IBDEVSIM_PKEY_TBL_LEN;
	attr->lid = port->st.lid;
	attr->sm_lid = port->st.sm_lid;
	attr->lmc = port->st.lmc;
	attr->max_vl_num = IBDEVSIM_VL_CAP;
	attr->sm_sl = port->st.sm_sl;
	attr->subnet_timeout = port->st.subnet_timeout;
	attr->active_width = IB_WIDTH_4X;
	attr->active_speed = IB_SPEED_QDR;
	spin_unlock_irqrestore(&port->node->lock, flags);
	return 0;
}

static int ibdevsim_modify_port(struct ib_device *ibdev, u32 port_num,
				int mask, struct ib_port_modify *props)
{
	struct ibdevsim_port *port = &to_hca(ibdev)->node->ports[port_num];
	unsigned long flags;
	bool changed;
	u32 old;

	if (mask & IB_PORT_SHUTDOWN)
		return -EOPNOTSUPP;
	spin_lock_irqsave(&port->node->lock, flags);
	old = port->st.cap_mask;
	port->st.cap_mask |= props->set_port_cap_mask;
	port->st.cap_mask &= ~props->clr_port_cap_mask;
	changed = port->st.cap_mask != old;
	if (mask & IB_PORT_RESET_QKEY_CNTR)
		port->st.qkey_violations = 0;
	spin_unlock_irqrestore(&port->node->lock, flags);
	if (changed)
		ibdevsim_sma_trap144(port);
	return 0;
}

static int ibdevsim_modify_device(struct ib_device *ibdev, int mask,
				  struct ib_device_modify *props)
{
	struct ibdevsim_node *node = to_hca(ibdev)->node;
	unsigned long flags;

	if (mask & ~IB_DEVICE_MODIFY_NODE_DESC)
		return -EOPNOTSUPP;
	spin_lock_irqsave(&node->lock, flags);
	memcpy(node->desc, props->node_desc, IB_DEVICE_NODE_DESC_MAX);
	memcpy(ibdev->node_desc, props->node_desc, IB_DEVICE_NODE_DESC_MAX);
	spin_unlock_irqrestore(&node->lock, flags);
	return 0;
}

static int ibdevsim_query_gid(struct ib_device *ibdev, u32 port_num,
			      int index, union ib_gid *gid)
{
	struct ibdevsim_node *node = to_hca(ibdev)->node;
	unsigned long flags;

	if (index)
		return -EINVAL;
	spin_lock_irqsave(&node->lock, flags);
	gid->global.subnet_prefix =
		cpu_to_be64(node->ports[port_num].st.gid_prefix);
	spin_unlock_irqrestore(&node->lock, flags);
	gid->global.interface_id =
		cpu_to_be64(ibdevsim_port_guid(node, port_num));
	return 0;
}

static int ibdevsim_query_pkey(struct ib_device *ibdev, u32 port_num,
			       u16 index, u16 *pkey)
{
	struct ibdevsim_node *node = to_hca(ibdev)->node;
	unsigned long flags;

	if (index >= IBDEVSIM_PKEY_TBL_LEN)
		return -EINVAL;
	spin_lock_irqsave(&node->lock, flags);
	*pkey = node->ports[port_num].pkeys[index];
	spin_unlock_irqrestore(&node->lock, flags);
	return 0;
}

static int ibdevsim_port_immutable(struct ib_device *ibdev, u32 port_num,
				   struct ib_port_immutable *imm)
{
	imm->pkey_tbl_len = IBDEVSIM_PKEY_TBL_LEN;
	imm->gid_tbl_len = IBDEVSIM_GID_TBL_LEN;
	imm->core_cap_flags = RDMA_CORE_PORT_IBA_IB;
	imm->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

static enum rdma_link_layer ibdevsim_link_layer(struct ib_device *ibdev,
						u32 port_num)
{
	return IB_LINK_LAYER_INFINIBAND;
}

static int ibdevsim_alloc_pd(struct ib_pd *pd, struct ib_udata *udata)
{
	return 0;
}

static int ibdevsim_dealloc_pd(struct ib_pd *pd, struct ib_udata *udata)
{
	return 0;
}

static struct ib_mr *ibdevsim_get_dma_mr(struct ib_pd *pd, int access)
{
	struct ibdevsim_mr *mr;

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->ibmr.lkey = IBDEVSIM_DMA_LKEY;
	mr->ibmr.rkey = IBDEVSIM_DMA_LKEY;
	return &mr->ibmr;
}

static int ibdevsim_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct ibdevsim_mr *mr = container_of(ibmr, struct ibdevsim_mr, ibmr);

	if (mr->umem)
		return ibdevsim_dereg_user_mr(mr);
	if (mr->fr_pages) {
		ibdevsim_dereg_fr_mr(mr);
		return 0;
	}
	kfree(mr);
	return 0;
}

static int ibdevsim_alloc_ucontext(struct ib_ucontext *uctx,
				   struct ib_udata *udata)
{
	return 0;
}

static void ibdevsim_dealloc_ucontext(struct ib_ucontext *uctx)
{
}

static int ibdevsim_create_ah(struct ib_ah *ibah,
			      struct rdma_ah_init_attr *init,
			      struct ib_udata *udata)
{
	struct ibdevsim_ah *ah = container_of(ibah, struct ibdevsim_ah, ibah);

	if (init->ah_attr->type != RDMA_AH_ATTR_TYPE_IB)
		return -EINVAL;
	ah->attr = *init->ah_attr;
	return 0;
}

static int ibdevsim_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr)
{
	*attr = container_of(ibah, struct ibdevsim_ah, ibah)->attr;
	return 0;
}

static int ibdevsim_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	return 0;
}

/* A CQ armed with completions in it: the event hardware would raise. */
static void ibdevsim_cq_event_work(struct work_struct *work)
{
	struct ibdevsim_cq *cq = container_of(work, struct ibdevsim_cq,
					      event_work);

	/* As from an interrupt: softirqs it raises (NAPI) run on return. */
	local_bh_disable();
	if (cq->ibcq.comp_handler)
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
	local_bh_enable();
}

/* The ring overflowed: the affiliated asynchronous error hardware raises. */
static void ibdevsim_cq_err_work(struct work_struct *work)
{
	struct ibdevsim_cq *cq = container_of(work, struct ibdevsim_cq,
					      err_work);
	struct ib_event ev = {
		.device = cq->ibcq.device,
		.element.cq = &cq->ibcq,
		.event = IB_EVENT_CQ_ERR,
	};

	if (cq->ibcq.event_handler)
		cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
}

static int ibdevsim_create_cq(struct ib_cq *ibcq,
			      const struct ib_cq_init_attr *attr,
			      struct uverbs_attr_bundle *attrs)
{
	struct ibdevsim_cq *cq = to_cq(ibcq);

	if (attr->flags || !attr->cqe || attr->cqe > IBDEVSIM_MAX_CQE)
		return -EINVAL;
	cq->ring = kvcalloc(attr->cqe, sizeof(*cq->ring), GFP_KERNEL);
	if (!cq->ring)
		return -ENOMEM;
	spin_lock_init(&cq->lock);
	INIT_WORK(&cq->event_work, ibdevsim_cq_event_work);
	INIT_WORK(&cq->err_work, ibdevsim_cq_err_work);
	cq->size = attr->cqe;
	ibcq->cqe = attr->cqe;
	return 0;
}

static int ibdevsim_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct ibdevsim_cq *cq = to_cq(ibcq);

	cancel_work_sync(&cq->event_work);
	cancel_work_sync(&cq->err_work);
	kvfree(cq->ring);
	return 0;
}

/*
 * Add a completion to a CQ and call its handler if it was armed.  False
 * when the ring is full: the completion is lost, the first loss raises
 * IB_EVENT_CQ_ERR, and the QP whose completion it was moves to the error
 * state (from its event work, not here: its flushes would overrun the CQ
 * again), as a CQ overrun does on hardware.
 */
VISIBLE_IF_KUNIT bool ibdevsim_cq_add(struct ibdevsim_cq *cq,
				      const struct ib_wc *wc, bool solicited,
				      struct ibdevsim_qp *sq, u32 sq_slots)
{
	struct ibdevsim_cqe *cqe;
	bool notify = false;
	unsigned long flags;

	spin_lock_irqsave(&cq->lock, flags);
	if (cq->count == cq->size) {
		bool first = !cq->overflow;

		cq->overflow = true;
		spin_unlock_irqrestore(&cq->lock, flags);
		if (first)
			queue_work(ibdevsim_wq, &cq->err_work);
		/* The QP whose completion was lost goes to error too. */
		if (wc->qp)
			ibdevsim_qp_event(to_qp(wc->qp),
					  IBDEVSIM_QP_EV_CQ_OVERRUN);
		return false;
	}
	cqe = &cq->ring[(cq->head + cq->count) % cq->size];
	cqe->wc = *wc;
	cqe->sq = sq;
	cqe->sq_slots = sq_slots;
	cq->count++;
	if (cq->notify == IB_CQ_NEXT_COMP ||
	    (cq->notify == IB_CQ_SOLICITED && solicited)) {
		cq->notify = 0;
		notify = true;
	}
	spin_unlock_irqrestore(&cq->lock, flags);
	/* As from the HCA's interrupt: softirqs it raises run on return. */
	if (notify && cq->ibcq.comp_handler) {
		local_bh_disable();
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
		local_bh_enable();
	}
	return true;
}
EXPORT_SYMBOL_IF_KUNIT(ibdevsim_cq_add);

/**
 * ibdevsim_cq_post() - add a receive completion to a CQ
 * @cq: the CQ
 * @wc: the completion
 * @solicited: the completion is solicited (for IB_CQ_SOLICITED)
 *
 * Calls the CQ's handler if it was armed.  A completion that does not fit
 * is lost and the CQ raises IB_EVENT_CQ_ERR.
 *
 * Context: process or bottom half, interrupts on, no simulator lock held.
 */
void ibdevsim_cq_post(struct ibdevsim_cq *cq, const struct ib_wc *wc,
		      bool solicited)
{
	ibdevsim_cq_add(cq, wc, solicited, NULL, 0);
}

/**
 * ibdevsim_cq_clean() - take a QP's completions out of a CQ
 * @cq: the CQ
 * @qp: the QP, being reset or destroyed
 *
 * As hardware drivers do for a kernel QP that goes away: what the QP left
 * in the ring is removed, the other QPs' completions keep their order, and
 * no entry refers to @qp afterwards.
 *
 * Context: process or any; takes @cq->lock.
 */
void ibdevsim_cq_clean(struct ibdevsim_cq *cq, const struct ibdevsim_qp *qp)
{
	unsigned long flags;
	u32 i, kept = 0;

	spin_lock_irqsave(&cq->lock, flags);
	for (i = 0; i < cq->count; i++) {
		struct ibdevsim_cqe *cqe = &cq->ring[(cq->head + i) % cq->size];

		if (cqe->wc.qp == &qp->ibqp)
			continue;
		if (kept != i)
			cq->ring[(cq->head + kept) % cq->size] = *cqe;
		kept++;
	}
	cq->count = kept;
	spin_unlock_irqrestore(&cq->lock, flags);
}
EXPORT_SYMBOL_IF_KUNIT(ibdevsim_cq_clean);

/*
 * Hand out completions.  Polling a send completion frees the send queue
 * slots it carries, which is when hardware frees them; the QP's sq_lock
 * nests inside the CQ's lock.
 */
VISIBLE_IF_KUNIT int ibdevsim_poll_cq(struct ib_cq *ibcq, int n,
				      struct ib_wc *wc)
{
	struct ibdevsim_cq *cq = to_cq(ibcq);
	unsigned long flags;
	int i;

	spin_lock_irqsave(&cq->lock, flags);
	for (i = 0; i < n && cq->count; i++) {
		struct ibdevsim_cqe *cqe = &cq->ring[cq->head];

		wc[i] = cqe->wc;
		if (cqe->sq) {
			spin_lock(&cqe->sq->sq_lock);
			cqe->sq->sq_used -= cqe->sq_slots;
			spin_unlock(&cqe->sq->sq_lock);
		}
		cq->head = (cq->head + 1) % cq->size;
		cq->count--;
	}
	spin_unlock_irqrestore(&cq->lock, flags);
	return i;
}
EXPORT_SYMBOL_IF_KUNIT(ibdevsim_poll_cq);

static int ibdevsim_req_notify_cq(struct ib_cq *ibcq,
				  enum ib_cq_notify_flags flags)
{
	struct ibdevsim_cq *cq = to_cq(ibcq);
	unsigned long irqflags;
	bool event = false;
	int ret = 0;

	spin_lock_irqsave(&cq->lock, irqflags);
	if (cq->notify != IB_CQ_NEXT_COMP)
		cq->notify = flags & IB_CQ_SOLICITED_MASK;
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) && cq->count)
		ret = 1;
	/*
	 * Armed with completions already in the ring: an event at once, as
	 * hardware raises it (IPoIB's send path counts on that).
	 */
	if (cq->count && cq->notify) {
		cq->notify = 0;
		event = true;
	}
	spin_unlock_irqrestore(&cq->lock, irqflags);
	if (event)
		queue_work(ibdevsim_wq, &cq->event_work);
	return ret;
}

/**
 * ibdevsim_rq_slot() - the receive WQE at a position of a QP's ring
 * @qp: the QP
 * @i: the position (taken modulo the ring size)
 *
 * Context: @qp->rq_lock held, or the QP not yet in use.
 * Return: the WQE.
 */
struct ibdevsim_rwqe *ibdevsim_rq_slot(struct ibdevsim_qp *qp, u32 i)
{
	return qp->rq + (size_t)(i % qp->rq_max) * qp->rq_stride;
}

/* Free the sends queued and never run, without completions. */
static void ibdevsim_sq_drain(struct ibdevsim_qp *qp)
{
	struct ibdevsim_swqe *swqe, *tmp;
	unsigned long flags;
	LIST_HEAD(list);

	spin_lock_irqsave(&qp->sq_lock, flags);
	list_splice_init(&qp->rc_done, &list);
	list_splice_init(&qp->rc_inflight, &list);
	list_splice_init(&qp->sendq, &list);
	qp->rc_rd_out = 0;
	qp->rc_rd_gap = false;
	qp->rc_rnr_wait = false;
	qp->rc_expired = false;
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	list_for_each_entry_safe(swqe, tmp, &list, list) {
		kfree(swqe->pkt);
		kfree(swqe);
	}
}

/**
 * ibdevsim_rq_drain() - drop a QP's posted receives
 * @qp: the QP
 * @flush: complete them with a flush error
 *
 * Context: any; takes @qp->rq_lock.
 */
void ibdevsim_rq_drain(struct ibdevsim_qp *qp, bool flush)
{
	struct ib_wc wc = {
		.status = IB_WC_WR_FLUSH_ERR,
		.opcode = IB_WC_RECV,
		.qp = &qp->ibqp,
	};
	unsigned long flags;

	spin_lock_irqsave(&qp->rq_lock, flags);
	/* The receive a multi-packet SEND was landing in. */
	if (qp->rc_in_send) {
		qp->rc_in_send = false;
		wc.wr_id = qp->rc_rwqe->wr_id;
		if (flush) {
			spin_unlock_irqrestore(&qp->rq_lock, flags);
			ibdevsim_cq_post(to_cq(qp->ibqp.recv_cq), &wc, false);
			spin_lock_irqsave(&qp->rq_lock, flags);
		}
	}
	while (qp->rq_count) {
		wc.wr_id = ibdevsim_rq_slot(qp, qp->rq_head)->wr_id;
		qp->rq_head = (qp->rq_head + 1) % qp->rq_max;
		qp->rq_count--;
		if (flush) {
			spin_unlock_irqrestore(&qp->rq_lock, flags);
			ibdevsim_cq_post(to_cq(qp->ibqp.recv_cq), &wc, false);
			spin_lock_irqsave(&qp->rq_lock, flags);
		}
	}
	spin_unlock_irqrestore(&qp->rq_lock, flags);
}

/*
 * A send WQE has run.  It completes if it asked to or failed; its slot,
 * and those of the unsignaled WQEs that ran before it, are freed when that
 * completion is polled.
 */
void ibdevsim_sq_retire(struct ibdevsim_qp *qp,
			const struct ibdevsim_swqe *swqe,
			enum ib_wc_status status)
{
	bool complete = swqe->signaled || status != IB_WC_SUCCESS;
	struct ib_wc wc = {
		.wr_id = swqe->wr_id,
		.status = status,
		.opcode = swqe->opcode,
		.byte_len = swqe->byte_len,
		.qp = &qp->ibqp,
	};
	unsigned long flags;
	u32 slots;

	spin_lock_irqsave(&qp->sq_lock, flags);
	slots = ++qp->sq_unsignaled;
	if (complete)
		qp->sq_unsignaled = 0;
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	if (!complete ||
	    ibdevsim_cq_add(to_cq(qp->ibqp.send_cq), &wc, false, qp, slots))
		return;
	/* Lost to an overrun CQ: no poll will free the slots. */
	spin_lock_irqsave(&qp->sq_lock, flags);
	qp->sq_used -= slots;
	spin_unlock_irqrestore(&qp->sq_lock, flags);
}

/*
 * A UD, GSI or SMI send failed: as on hardware the send queue stops in
 * SQE until the QP is modified back to RTS.  What is queued behind the
 * failed send moves to @stopped, to be flushed right after it (even if
 * the QP is back in RTS by then); what is posted later is flushed while
 * the QP stays in SQE.
 */
static void ibdevsim_qp_sq_error(struct ibdevsim_qp *qp,
				 struct list_head *stopped)
{
	struct ibdevsim_node *node = qp->hca->node;
	unsigned long flags;
	bool stop = false;

	spin_lock_irqsave(&qp->sq_lock, flags);
	if (qp->state == IB_QPS_RTS || qp->state == IB_QPS_SQD) {
		qp->state = IB_QPS_SQE;
		list_splice_init(&qp->sendq, stopped);
		stop = true;
	}
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	if (!stop)
		return;
	spin_lock_irqsave(&node->lock, flags);
	node->ports[qp->port].sq_errors++;
	spin_unlock_irqrestore(&node->lock, flags);
}

/* The QP's send work: put queued sends on the wire and complete them. */
static void ibdevsim_send_work(struct work_struct *work)
{
	struct ibdevsim_qp *qp = container_of(work, struct ibdevsim_qp,
					      send_work);
	struct ibdevsim_port *port = &qp->hca->node->ports[qp->port];
	struct ibdevsim_swqe *swqe, *tmp;
	enum ib_wc_status status;
	unsigned long flags;
	LIST_HEAD(stopped);
	bool flush;

	if (qp->ibqp.qp_type == IB_QPT_RC) {
		ibdevsim_rc_send_work(qp);
		return;
	}
	for (;;) {
		spin_lock_irqsave(&qp->sq_lock, flags);
		swqe = list_first_entry_or_null(&qp->sendq,
						struct ibdevsim_swqe, list);
		if (swqe)
			list_del(&swqe->list);
		flush = qp->state == IB_QPS_ERR || qp->state == IB_QPS_SQE;
		spin_unlock_irqrestore(&qp->sq_lock, flags);
		if (!swqe)
			break;
		status = flush ? IB_WC_WR_FLUSH_ERR : swqe->status;
		if (swqe->pkt && status == IB_WC_SUCCESS) {
			ibdevsim_xmit(port, swqe->pkt);
		} else {
			kfree(swqe->pkt);
			if (status != IB_WC_WR_FLUSH_ERR)
				ibdevsim_qp_sq_error(qp, &stopped);
		}
		ibdevsim_sq_retire(qp, swqe, status);
		kfree(swqe);
		list_for_each_entry_safe(swqe, tmp, &stopped, list) {
			list_del(&swqe->list);
			kfree(swqe->pkt);
			ibdevsim_sq_retire(qp, swqe, IB_WC_WR_FLUSH_ERR);
			kfree(swqe);
		}
		cond_resched();
	}
}

static int ibdevsim_create_qp(struct ib_qp *ibqp,
			      struct ib_qp_init_attr *init,
			      struct ib_udata *udata)
{
	struct ibdevsim_hca *hca = to_hca(ibqp->device);
	struct ibdevsim_qp *qp = to_qp(ibqp);
	struct ib_qp_cap *cap = &init->cap;
	struct ibdevsim_port *port = NULL;
	unsigned long flags;
	u32 qpn;
	int ret;

	if (init->create_flags ||
	    (init->srq && init->qp_type != IB_QPT_RC))
		return -EOPNOTSUPP;
	if (udata && (init->qp_type == IB_QPT_SMI ||
		      init->qp_type == IB_QPT_GSI))
		return -EINVAL;
	if (init->qp_type != IB_QPT_SMI && init->qp_type != IB_QPT_GSI &&
	    init->qp_type != IB_QPT_UD && init->qp_type != IB_QPT_RC)
		return -EOPNOTSUPP;
	if (!cap->max_send_wr || cap->max_send_wr > IBDEVSIM_MAX_WR ||
	    (!init->srq && (!cap->max_recv_wr ||
			    cap->max_recv_wr > IBDEVSIM_MAX_WR)) ||
	    cap->max_send_sge > IBDEVSIM_MAX_SGE ||
	    cap->max_recv_sge > IBDEVSIM_MAX_SGE || cap->max_inline_data)
		return -EINVAL;
	if (init->qp_type == IB_QPT_SMI || init->qp_type == IB_QPT_GSI) {
		if (init->port_num < 1 || init->port_num > hca->node->nports)
			return -EINVAL;
		port = &hca->node->ports[init->port_num];
		qp->port = init->port_num;
	} else {
		qp->port = 1;
	}

	qp->hca = hca;
	qp->state = IB_QPS_RESET;
	qp->sq_sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;
	spin_lock_init(&qp->sq_lock);
	INIT_LIST_HEAD(&qp->sendq);
	qp->sq_max = cap->max_send_wr;
	qp->max_send_sge = max_t(u32, cap->max_send_sge, 1);
	INIT_WORK(&qp->send_work, ibdevsim_send_work);
	INIT_WORK(&qp->event_work, ibdevsim_qp_event_work);
	ibdevsim_rc_qp_init(qp);
	spin_lock_init(&qp->rq_lock);
	if (init->srq) {
		/* Receives come from the SRQ: no ring of its own. */
		qp->srq = to_srq(init->srq);
		qp->max_recv_sge = qp->srq->max_sge;
		qp->rq_stride = qp->srq->stride;
	} else {
		qp->rq_max = cap->max_recv_wr;
		qp->max_recv_sge = max_t(u32, cap->max_recv_sge, 1);
		qp->rq_stride = struct_size_t(struct ibdevsim_rwqe, sge,
					      qp->max_recv_sge);
		qp->rq = kvcalloc(qp->rq_max, qp->rq_stride, GFP_KERNEL);
		if (!qp->rq)
			return -ENOMEM;
	}
	if (init->qp_type == IB_QPT_RC) {
		qp->rc_rwqe = kzalloc(qp->rq_stride, GFP_KERNEL);
		if (!qp->rc_rwqe) {
			ret = -ENOMEM;
			goto err_free;
		}
	}

	if (init->qp_type == IB_QPT_UD || init->qp_type == IB_QPT_RC) {
		ret = xa_alloc_cyclic_irq(&hca->qps, &qpn, qp,
					  XA_LIMIT(2, 0xffffff),
					  &hca->qpn_next, GFP_KERNEL);
		if (ret < 0)
			goto err_free;
		ibqp->qp_num = qpn;
	} else {
		struct ibdevsim_qp **slot;

		slot = init->qp_type == IB_QPT_SMI ? &port->qp0 : &port->qp1;
		spin_lock_irqsave(&hca->node->lock, flags);
		if (*slot) {
			spin_unlock_irqrestore(&hca->node->lock, flags);
			ret = -EBUSY;
			goto err_free;
		}
		*slot = qp;
		spin_unlock_irqrestore(&hca->node->lock, flags);
		ibqp->qp_num = init->qp_type == IB_QPT_SMI ? 0 : 1;
	}
	cap->max_send_sge = qp->max_send_sge;
	cap->max_recv_sge = qp->max_recv_sge;
	return 0;

err_free:
	kfree(qp->rc_rwqe);
	kvfree(qp->rq);
	return ret;
}

/*
 * Drop an attachment; the node lock held.  The receive side may still be
 * walking past it: it is freed after a grace period.
 */
static void ibdevsim_mcast_del_locked(struct ibdevsim_hca *hca,
				      struct ibdevsim_mcast_att *att)
{
	lockdep_assert_held(&hca->node->lock);
	list_del_rcu(&att->list);
	if (!ibdevsim_mcast_grp_used(&hca->mcast, &att->mgid))
		hca->mcast_ngrps--;
	kfree_rcu(att, rcu);
}

static int ibdevsim_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid,
				 u16 lid)
{
	struct ibdevsim_qp *qp = to_qp(ibqp);
	struct ibdevsim_hca *hca = qp->hca;
	struct ibdevsim_mcast_att *att, *dup;
	unsigned long flags;
	bool new_grp;
	int ret;

	att = kzalloc(sizeof(*att), GFP_KERNEL);
	if (!att)
		return -ENOMEM;
	att->mgid = *gid;
	att->mlid = lid;
	att->qp = qp;
	att->refs = 1;
	spin_lock_irqsave(&hca->node->lock, flags);
	ret = ibdevsim_mcast_attach_check(&hca->mcast, hca->mcast_ngrps, gid,
					  lid, qp, ibqp->qp_type == IB_QPT_UD,
					  &dup, &new_grp);
	if (!ret && dup) {
		dup->refs++;
	} else if (!ret) {
		list_add_tail_rcu(&att->list, &hca->mcast);
		if (new_grp)
			hca->mcast_ngrps++;
		att = NULL;
	}
	spin_unlock_irqrestore(&hca->node->lock, flags);
	kfree(att);
	return ret;
}

static int ibdevsim_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid,
				 u16 lid)
{
	struct ibdevsim_qp *qp = to_qp(ibqp);
	struct ibdevsim_hca *hca = qp->hca;
	struct ibdevsim_mcast_att *att;
	unsigned long flags;
	int ret = 0;

	spin_lock_irqsave(&hca->node->lock, flags);
	att = ibdevsim_mcast_find(&hca->mcast, gid, lid, qp);
	if (!att)
		ret = -EINVAL;
	else if (!--att->refs)
		ibdevsim_mcast_del_locked(hca, att);
	spin_unlock_irqrestore(&hca->node->lock, flags);
	return ret;
}

/**
 * ibdevsim_mcast_recv() - a multicast datagram reaches an HCA port
 * @in: the port
 * @pkt: the packet (to QP 0xffffff, its DLID a multicast LID)
 *
 * Every UD QP bound to @in and attached to the group (the MLID, and the
 * MGID of the GRH when there is one) gets a copy, as it would get a
 * unicast datagram: the P_Key checked against that of the QP's P_Key
 * index, the Q_Key against the QP's.  A group without members here drops
 * the packet.
 *
 * Context: the port's receive work, in an RCU read section; no lock held.
 */
void ibdevsim_mcast_recv(struct ibdevsim_port *in,
			 const struct ibdevsim_pkt *pkt)
{
	const union ib_gid *dgid = pkt->has_grh ? &pkt->grh.dgid : NULL;
	struct ibdevsim_hca *hca = in->node->hca;
	u16 pkeys[IBDEVSIM_PKEY_TBL_LEN];
	u32 qkey_bad = 0, pkey_bad = 0;
	struct ibdevsim_mcast_att *att;
	unsigned long flags;

	spin_lock_irqsave(&in->node->lock, flags);
	memcpy(pkeys, in->pkeys, sizeof(pkeys));
	spin_unlock_irqrestore(&in->node->lock, flags);
	list_for_each_entry_rcu(att, &hca->mcast, list) {
		struct ibdevsim_qp *qp = att->qp;
		u16 pkey_index = qp->pkey_index % IBDEVSIM_PKEY_TBL_LEN;

		if (qp->port != in->num ||
		    !ibdevsim_mcast_match(att, pkt->dlid, dgid))
			continue;
		if (!ibdevsim_pkey_match(pkeys[pkey_index], pkt->pkey)) {
			pkey_bad++;
			continue;
		}
		if (pkt->qkey != qp->qkey) {
			qkey_bad++;
			continue;
		}
		ibdevsim_qp_deliver(qp, pkt, pkey_index, in->num);
	}
	if (!qkey_bad && !pkey_bad)
		return;
	spin_lock_irqsave(&in->node->lock, flags);
	in->st.qkey_violations += qkey_bad;
	in->st.pkey_violations += pkey_bad;
	if (pkey_bad)
		in->cnt.rcv_errors++;
	if (pkey_bad && !in->st.mcast_trap_suppress)
		ibdevsim_sma_bad_pkey_locked(in, pkt);
	spin_unlock_irqrestore(&in->node->lock, flags);
}

/*
 * A QP reset or destroyed: its sends that never ran are freed, its
 * receives dropped, its completions taken out of its CQs, and every send
 * queue slot is free again.  The ports' receive work is flushed first, so
 * that a packet it was delivering when the QP left its state adds nothing
 * to the CQs afterwards.
 */
static void ibdevsim_qp_reset_queues(struct ibdevsim_qp *qp)
{
	unsigned long flags;

	cancel_work_sync(&qp->send_work);
	ibdevsim_hca_rx_flush(qp->hca->node);
	ibdevsim_rc_stop(qp);
	ibdevsim_sq_drain(qp);
	ibdevsim_rq_drain(qp, false);
	ibdevsim_cq_clean(to_cq(qp->ibqp.send_cq), qp);
	if (qp->ibqp.recv_cq != qp->ibqp.send_cq)
		ibdevsim_cq_clean(to_cq(qp->ibqp.recv_cq), qp);
	spin_lock_irqsave(&qp->sq_lock, flags);
	qp->sq_used = 0;
	qp->sq_unsignaled = 0;
	spin_unlock_irqrestore(&qp->sq_lock, flags);
}

static int ibdevsim_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct ibdevsim_qp *qp = to_qp(ibqp);
	struct ibdevsim_port *port = &qp->hca->node->ports[qp->port];
	struct ibdevsim_mcast_att *att, *tmp;
	unsigned long flags;

	spin_lock_irqsave(&qp->hca->node->lock, flags);
	/* The core refuses while attached; drop what a bad caller left. */
	list_for_each_entry_safe(att, tmp, &qp->hca->mcast, list)
		if (att->qp == qp)
			ibdevsim_mcast_del_locked(qp->hca, att);
	if (ibqp->qp_type == IB_QPT_SMI && port->qp0 == qp)
		port->qp0 = NULL;
	else if (ibqp->qp_type == IB_QPT_GSI && port->qp1 == qp)
		port->qp1 = NULL;
	spin_unlock_irqrestore(&qp->hca->node->lock, flags);
	if (ibqp->qp_type == IB_QPT_UD || ibqp->qp_type == IB_QPT_RC)
		xa_erase_irq(&qp->hca->qps, ibqp->qp_num);
	spin_lock_irqsave(&qp->sq_lock, flags);
	qp->state = IB_QPS_ERR;
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	/*
	 * Unreachable now: once the receive work that may have found it is
	 * flushed, no new event can be raised.
	 */
	ibdevsim_hca_rx_flush(qp->hca->node);
	cancel_work_sync(&qp->event_work);
	ibdevsim_qp_reset_queues(qp);
	/* A completion lost to an overrun CQ on the way queued it again. */
	cancel_work_sync(&qp->event_work);
	kfree(qp->rc_rwqe);
	kvfree(qp->rq);
	return 0;
}

static int ibdevsim_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
			      int mask, struct ib_udata *udata)
{
	struct ibdevsim_qp *qp = to_qp(ibqp);
	enum ib_qp_state cur, next;
	unsigned long flags;

	cur = mask & IB_QP_CUR_STATE ? attr->cur_qp_state : qp->state;
	next = mask & IB_QP_STATE ? attr->qp_state : cur;
	if (!ib_modify_qp_is_ok(cur, next, ibqp->qp_type, mask))
		return -EINVAL;
	if ((mask & IB_QP_PKEY_INDEX) &&
	    attr->pkey_index >= IBDEVSIM_PKEY_TBL_LEN)
		return -EINVAL;
	if ((mask & IB_QP_PORT) &&
	    (attr->port_num < 1 || attr->port_num > qp->hca->node->nports))
		return -EINVAL;
	/* The ports' MTU is 4096: a path can have no more. */
	if ((mask & IB_QP_PATH_MTU) &&
	    (attr->path_mtu < IB_MTU_256 || attr->path_mtu > IB_MTU_4096))
		return -EINVAL;

	spin_lock_irqsave(&qp->sq_lock, flags);
	if (mask & IB_QP_PKEY_INDEX)
		qp->pkey_index = attr->pkey_index;
	if ((mask & IB_QP_PORT) &&
	    (ibqp->qp_type == IB_QPT_UD || ibqp->qp_type == IB_QPT_RC))
		qp->port = attr->port_num;
	if (mask & IB_QP_AV) {
		qp->dlid = rdma_ah_get_dlid(&attr->ah_attr);
		qp->sl = rdma_ah_get_sl(&attr->ah_attr);
		qp->path_bits = rdma_ah_get_path_bits(&attr->ah_attr);
	}
	if (mask & IB_QP_DEST_QPN)
		qp->dest_qpn = attr->dest_qp_num;
	if (mask & IB_QP_ACCESS_FLAGS)
		qp->access = attr->qp_access_flags;
	if (mask & IB_QP_RNR_RETRY)
		qp->rnr_retry = attr->rnr_retry;
	if (mask & IB_QP_RETRY_CNT)
		qp->retry_cnt = attr->retry_cnt;
	if (mask & IB_QP_TIMEOUT)
		qp->timeout = attr->timeout;
	if (mask & IB_QP_MIN_RNR_TIMER)
		qp->min_rnr_timer = attr->min_rnr_timer;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		qp->max_rd_atomic = attr->max_rd_atomic;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		qp->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (mask & IB_QP_PATH_MTU)
		qp->mtu = ib_mtu_enum_to_int(attr->path_mtu);
	if (mask & IB_QP_SQ_PSN) {
		qp->rc_next_psn = attr->sq_psn & IBDEVSIM_PSN_MASK;
		qp->rc_tx_psn = qp->rc_next_psn;
		qp->rc_una = qp->rc_next_psn;
	}
	if (next == IB_QPS_RTS && cur != IB_QPS_RTS) {
		qp->rc_retry_left = qp->retry_cnt;
		qp->rc_rnr_left = qp->rnr_retry;
	}
	if (mask & IB_QP_QKEY)
		qp->qkey = attr->qkey;
	qp->state = next;
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	spin_lock_irqsave(&qp->rq_lock, flags);
	if (next == IB_QPS_RESET) {
		qp->comm_est = false;
		qp->rc_in_send = false;
		qp->rc_in_write = false;
		qp->rc_nak_sent = false;
	}
	if (mask & IB_QP_RQ_PSN)
		qp->rc_epsn = attr->rq_psn & IBDEVSIM_PSN_MASK;
	spin_unlock_irqrestore(&qp->rq_lock, flags);

	if (next == IB_QPS_ERR) {
		ibdevsim_rq_drain(qp, true);
		if (qp->srq && cur != IB_QPS_ERR)
			ibdevsim_qp_event(qp, IBDEVSIM_QP_EV_LAST_WQE);
		queue_work(ibdevsim_wq, &qp->send_work);
	} else if (next == IB_QPS_RESET) {
		ibdevsim_qp_reset_queues(qp);
	} else if (next == IB_QPS_RTS && cur == IB_QPS_SQE) {
		/* Sends queued and not yet flushed go out now. */
		queue_work(ibdevsim_wq, &qp->send_work);
	}
	return 0;
}

static int ibdevsim_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
			     int mask, struct ib_qp_init_attr *init)
{
	struct ibdevsim_qp *qp = to_qp(ibqp);

	memset(attr, 0, sizeof(*attr));
	memset(init, 0, sizeof(*init));
	attr->qp_state = qp->state;
	attr->cur_qp_state = qp->state;
	attr->qkey = qp->qkey;
	attr->pkey_index = qp->pkey_index;
	attr->port_num = qp->port;
	attr->dest_qp_num = qp->dest_qpn;
	attr->qp_access_flags = qp->access;
	attr->path_mtu = ib_mtu_int_to_enum(qp->mtu);
	attr->timeout = qp->timeout;
	attr->retry_cnt = qp->retry_cnt;
	attr->rnr_retry = qp->rnr_retry;
	attr->min_rnr_timer = qp->min_rnr_timer;
	attr->max_rd_atomic = qp->max_rd_atomic;
	attr->max_dest_rd_atomic = qp->max_dest_rd_atomic;
	attr->sq_psn = READ_ONCE(qp->rc_next_psn);
	attr->rq_psn = READ_ONCE(qp->rc_epsn);
	attr->cap.max_send_wr = qp->sq_max;
	attr->cap.max_recv_wr = qp->rq_max;
	attr->cap.max_send_sge = qp->max_send_sge;
	attr->cap.max_recv_sge = qp->max_recv_sge;
	init->cap = attr->cap;
	init->qp_type = ibqp->qp_type;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->sq_sig_type = qp->sq_sig_all ? IB_SIGNAL_ALL_WR :
					     IB_SIGNAL_REQ_WR;
	return 0;
}

/* Build the packet of a UD, GSI or SMI send; sets *status on bad input. */
static struct ibdevsim_pkt *ibdevsim_build_pkt(struct ibdevsim_qp *qp,
					       const struct ib_ud_wr *wr,
					       u32 len,
					       enum ib_wc_status *status)
{
	struct ibdevsim_port *port = &qp->hca->node->ports[qp->port];
	struct ibdevsim_ah *ah = container_of(wr->ah, struct ibdevsim_ah, ibah);
	const struct rdma_ah_attr *aa = &ah->attr;
	struct ibdevsim_seg segs[IBDEVSIM_MAX_SGE], to;
	struct ibdevsim_pkt *pkt;
	unsigned long flags;
	u16 pkey_index;

	pkt = ibdevsim_pkt_alloc(len, GFP_ATOMIC);
	if (!pkt)
		return NULL;
	to = ibdevsim_kseg(pkt->data, len);
	rcu_read_lock();
	if (ibdevsim_sges_resolve(qp, wr->wr.sg_list, wr->wr.num_sge, 0, segs))
		ibdevsim_seg_copy(&to, 1, segs, wr->wr.num_sge, len);
	else
		*status = IB_WC_LOC_PROT_ERR;
	rcu_read_unlock();
	pkt->vl15 = qp->ibqp.qp_type == IB_QPT_SMI;
	pkt->dlid = rdma_ah_get_dlid(aa);
	pkt->sl = rdma_ah_get_sl(aa);
	pkt->src_qpn = qp->ibqp.qp_num;
	pkt->dest_qpn = wr->remote_qpn;
	pkt->qkey = wr->remote_qkey & 0x80000000 ? qp->qkey : wr->remote_qkey;
	if (wr->wr.opcode == IB_WR_SEND_WITH_IMM) {
		pkt->has_imm = true;
		pkt->imm = wr->wr.ex.imm_data;
	}
	pkey_index = qp->ibqp.qp_type == IB_QPT_GSI ? wr->pkey_index :
						      qp->pkey_index;
	if (pkey_index >= IBDEVSIM_PKEY_TBL_LEN)
		*status = IB_WC_LOC_QP_OP_ERR;

	spin_lock_irqsave(&port->node->lock, flags);
	pkt->slid = ibdevsim_ud_slid(pkt->vl15, pkt->dlid, port->st.lid,
				     rdma_ah_get_path_bits(aa));
	pkt->pkey = pkt->vl15 ? IB_DEFAULT_PKEY_FULL :
		    port->pkeys[pkey_index % IBDEVSIM_PKEY_TBL_LEN];
	if (rdma_ah_get_ah_flags(aa) & IB_AH_GRH) {
		const struct ib_global_route *g = rdma_ah_read_grh(aa);

		pkt->has_grh = true;
		pkt->grh.version_tclass_flow =
			cpu_to_be32(6 << 28 | g->traffic_class << 20 |
				    (g->flow_label & 0xfffff));
		pkt->grh.paylen = cpu_to_be16(len);
		pkt->grh.next_hdr = 0x1b;
		pkt->grh.hop_limit = g->hop_limit;
		pkt->grh.sgid.global.subnet_prefix =
			cpu_to_be64(port->st.gid_prefix);
		pkt->grh.sgid.global.interface_id =
			cpu_to_be64(ibdevsim_port_guid(qp->hca->node, qp->port));
		pkt->grh.dgid = g->dgid;
	}
	spin_unlock_irqrestore(&port->node->lock, flags);
	return pkt;
}

static int ibdevsim_post_one_send(struct ibdevsim_qp *qp,
				  const struct ib_send_wr *wr)
{
	enum ib_wc_status status = IB_WC_SUCCESS;
	struct ibdevsim_swqe *swqe;
	unsigned long flags;
	u32 len = 0;
	int i;

	bool rc = qp->ibqp.qp_type == IB_QPT_RC;

	if (rc) {
		if (ibdevsim_rc_post_check(qp, wr, &len))
			return -EINVAL;
	} else {
		if (wr->opcode != IB_WR_SEND &&
		    wr->opcode != IB_WR_SEND_WITH_IMM)
			return -EINVAL;
		if (wr->num_sge > qp->max_send_sge || !ud_wr(wr)->ah)
			return -EINVAL;
		for (i = 0; i < wr->num_sge; i++)
			len += wr->sg_list[i].length;
		/* A datagram fits in one packet of the port's active MTU. */
		if (len > (qp->ibqp.qp_type == IB_QPT_SMI ? IB_MGMT_MAD_SIZE :
			   ibdevsim_port_mtu(&qp->hca->node->ports[qp->port])))
			status = IB_WC_LOC_LEN_ERR;
	}

	swqe = kzalloc(struct_size(swqe, sgl, rc ? wr->num_sge : 0),
		       GFP_ATOMIC);
	if (!swqe)
		return -ENOMEM;
	swqe->wr_id = wr->wr_id;
	swqe->opcode = IB_WC_SEND;
	swqe->byte_len = len;
	swqe->signaled = qp->sq_sig_all || (wr->send_flags & IB_SEND_SIGNALED);
	if (rc) {
		ibdevsim_rc_fill_swqe(swqe, wr);
	} else if (status == IB_WC_SUCCESS) {
		swqe->pkt = ibdevsim_build_pkt(qp, ud_wr(wr), len, &status);
		if (!swqe->pkt) {
			kfree(swqe);
			return -ENOMEM;
		}
	}
	swqe->status = status;

	spin_lock_irqsave(&qp->sq_lock, flags);
	/*
	 * A QP in error, or whose send queue stopped on an error (SQE), takes
	 * sends and flushes them (ib_drain_sq()).
	 */
	if (qp->state != IB_QPS_RTS && qp->state != IB_QPS_SQD &&
	    qp->state != IB_QPS_SQE && qp->state != IB_QPS_ERR) {
		spin_unlock_irqrestore(&qp->sq_lock, flags);
		kfree(swqe->pkt);
		kfree(swqe);
		return -EINVAL;
	}
	if (qp->sq_used >= qp->sq_max) {
		spin_unlock_irqrestore(&qp->sq_lock, flags);
		kfree(swqe->pkt);
		kfree(swqe);
		return -ENOMEM;
	}
	qp->sq_used++;
	list_add_tail(&swqe->list, &qp->sendq);
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	return 0;
}

static int ibdevsim_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
			      const struct ib_send_wr **bad)
{
	struct ibdevsim_qp *qp = to_qp(ibqp);
	int ret = 0;

	for (; wr; wr = wr->next) {
		ret = ibdevsim_post_one_send(qp, wr);
		if (ret) {
			*bad = wr;
			break;
		}
	}
	queue_work(ibdevsim_wq, &qp->send_work);
	return ret;
}

static int ibdevsim_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
			      const struct ib_recv_wr **bad)
{
	struct ibdevsim_qp *qp = to_qp(ibqp);
	struct ibdevsim_rwqe *rwqe;
	unsigned long flags;
	bool flush;
	int ret = 0;

	for (; wr; wr = wr->next) {
		/* A QP of an SRQ receives through the SRQ only. */
		if (wr->num_sge > qp->max_recv_sge || qp->srq) {
			ret = -EINVAL;
			break;
		}
		spin_lock_irqsave(&qp->rq_lock, flags);
		if (qp->state == IB_QPS_RESET) {
			ret = -EINVAL;
		} else if (qp->rq_count >= qp->rq_max) {
			ret = -ENOMEM;
		} else {
			rwqe = ibdevsim_rq_slot(qp, qp->rq_head + qp->rq_count);
			rwqe->wr_id = wr->wr_id;
			rwqe->num_sge = wr->num_sge;
			memcpy(rwqe->sge, wr->sg_list,
			       wr->num_sge * sizeof(*wr->sg_list));
			qp->rq_count++;
		}
		flush = qp->state == IB_QPS_ERR;
		spin_unlock_irqrestore(&qp->rq_lock, flags);
		if (ret)
			break;
		if (flush)
			ibdevsim_rq_drain(qp, true);
	}
	if (ret)
		*bad = wr;
	return ret;
}

/**
 * ibdevsim_qp_deliver() - a packet lands in a QP's receive queue
 * @qp: the destination QP
 * @pkt: the packet
 * @pkey_index: the index of the packet's P_Key in the port's table
 * @port: the port it came in on
 *
 * The oldest posted receive takes the GRH area (40 bytes, filled when the
 * packet has a GRH) and then the payload.  A packet for a QP that is not
 * ready to receive or has no receive posted is dropped, as on the wire.
 *
 * Context: the receive work of @port, in an RCU read section; no lock
 * held.
 */
void ibdevsim_qp_deliver(struct ibdevsim_qp *qp,
			 const struct ibdevsim_pkt *pkt,
			 u16 pkey_index, u8 port)
{
	struct ibdevsim_port *p = &qp->hca->node->ports[port];
	struct ibdevsim_seg segs[IBDEVSIM_MAX_SGE], from[2];
	enum ib_qp_state state = READ_ONCE(qp->state);
	struct ibdevsim_rwqe *rwqe;
	struct ib_wc wc = {};
	unsigned long flags;
	u32 i, room = 0;

	if (state != IB_QPS_RTR && state != IB_QPS_RTS &&
	    state != IB_QPS_SQD && state != IB_QPS_SQE)
		return;
	spin_lock_irqsave(&qp->rq_lock, flags);
	if (!qp->rq_count) {
		spin_unlock_irqrestore(&qp->rq_lock, flags);
		spin_lock_irqsave(&p->node->lock, flags);
		p->cnt.rcv_errors++;
		spin_unlock_irqrestore(&p->node->lock, flags);
		return;
	}
	rwqe = ibdevsim_rq_slot(qp, qp->rq_head);
	qp->rq_head = (qp->rq_head + 1) % qp->rq_max;
	qp->rq_count--;
	wc.status = IB_WC_SUCCESS;
	for (i = 0; i < rwqe->num_sge; i++)
		room += rwqe->sge[i].length;
	rcu_read_lock();
	if (!ibdevsim_sges_resolve(qp, rwqe->sge, rwqe->num_sge,
				   IB_ACCESS_LOCAL_WRITE, segs))
		wc.status = IB_WC_LOC_PROT_ERR;
	else if (room < sizeof(struct ib_grh) + pkt->len)
		wc.status = IB_WC_LOC_LEN_ERR;
	if (wc.status == IB_WC_SUCCESS) {
		/* The GRH area is left as it was when there is no GRH. */
		from[0] = ibdevsim_kseg(&pkt->grh, sizeof(pkt->grh));
		from[1] = ibdevsim_kseg(pkt->data, pkt->len);
		if (!pkt->has_grh) {
			ibdevsim_segs_skip(segs, rwqe->num_sge,
					   sizeof(pkt->grh));
			from[0].len = 0;
		}
		ibdevsim_seg_copy(segs, rwqe->num_sge, from, 2,
				  from[0].len + pkt->len);
	}
	rcu_read_unlock();
	wc.wr_id = rwqe->wr_id;
	spin_unlock_irqrestore(&qp->rq_lock, flags);

	wc.opcode = IB_WC_RECV;
	wc.byte_len = sizeof(struct ib_grh) + pkt->len;
	wc.qp = &qp->ibqp;
	wc.src_qp = pkt->src_qpn;
	wc.slid = pkt->slid;
	wc.sl = pkt->sl;
	wc.dlid_path_bits = pkt->dlid & ((1U << READ_ONCE(p->st.lmc)) - 1);
	wc.pkey_index = pkey_index;
	wc.port_num = port;
	if (pkt->has_grh)
		wc.wc_flags |= IB_WC_GRH;
	if (pkt->has_imm) {
		wc.wc_flags |= IB_WC_WITH_IMM;
		wc.ex.imm_data = pkt->imm;
	}
	ibdevsim_cq_post(to_cq(qp->ibqp.recv_cq), &wc, false);
}

/* The RC transport's counters, per port, as hw_counters in sysfs. */
static struct rdma_hw_stats *
ibdevsim_alloc_hw_port_stats(struct ib_device *ibdev, u32 port_num)
{
	return rdma_alloc_hw_stats_struct(ibdevsim_rc_stat_descs,
					  IBDEVSIM_RC_NSTATS,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

static int ibdevsim_get_hw_stats(struct ib_device *ibdev,
				 struct rdma_hw_stats *stats, u32 port_num,
				 int index)
{
	struct ibdevsim_node *node = to_hca(ibdev)->node;
	int i;

	if (port_num < 1 || port_num > node->nports)
		return -EINVAL;
	for (i = 0; i < IBDEVSIM_RC_NSTATS; i++)
		stats->value[i] =
			atomic64_read(&node->ports[port_num].rc_stats[i]);
	return IBDEVSIM_RC_NSTATS;
}

static const struct ib_device_ops ibdevsim_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_UNKNOWN,

	.alloc_hw_port_stats = ibdevsim_alloc_hw_port_stats,
	.alloc_mr = ibdevsim_alloc_mr,
	.alloc_pd = ibdevsim_alloc_pd,
	.attach_mcast = ibdevsim_attach_mcast,
	.create_ah = ibdevsim_create_ah,
	.create_cq = ibdevsim_create_cq,
	.create_qp = ibdevsim_create_qp,
	.create_srq = ibdevsim_create_srq,
	.create_user_ah = ibdevsim_create_ah,
	.dealloc_pd = ibdevsim_dealloc_pd,
	.dereg_mr = ibdevsim_dereg_mr,
	.destroy_ah = ibdevsim_destroy_ah,
	.destroy_cq = ibdevsim_destroy_cq,
	.destroy_qp = ibdevsim_destroy_qp,
	.destroy_srq = ibdevsim_destroy_srq,
	.detach_mcast = ibdevsim_detach_mcast,
	.get_dma_mr = ibdevsim_get_dma_mr,
	.get_hw_stats = ibdevsim_get_hw_stats,
	.get_link_layer = ibdevsim_link_layer,
	.get_port_immutable = ibdevsim_port_immutable,
	.modify_device = ibdevsim_modify_device,
	.modify_port = ibdevsim_modify_port,
	.map_mr_sg = ibdevsim_map_mr_sg,
	.modify_qp = ibdevsim_modify_qp,
	.modify_srq = ibdevsim_modify_srq,
	.poll_cq = ibdevsim_poll_cq,
	.post_recv = ibdevsim_post_recv,
	.post_send = ibdevsim_post_send,
	.post_srq_recv = ibdevsim_post_srq_recv,
	.process_mad = ibdevsim_process_mad,
	.query_ah = ibdevsim_query_ah,
	.query_device = ibdevsim_query_device,
	.query_gid = ibdevsim_query_gid,
	.query_pkey = ibdevsim_query_pkey,
	.query_port = ibdevsim_query_port,
	.query_qp = ibdevsim_query_qp,
	.query_srq = ibdevsim_query_srq,
	.reg_user_mr = ibdevsim_reg_user_mr,
	.req_notify_cq = ibdevsim_req_notify_cq,

	INIT_RDMA_OBJ_SIZE(ib_ah, ibdevsim_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_cq, ibdevsim_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_pd, ibdevsim_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, ibdevsim_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_srq, ibdevsim_srq, ibsrq),
};

static bool user_verbs = true;
module_param(user_verbs, bool, 0444);
MODULE_PARM_DESC(user_verbs,
		 "Give each HCA a uverbs device that rdma-core's ipathverbs provider drives (default: yes)");

/*
 * User verbs.  Debian's rdma-core ships providers, not the headers to
 * build one, so ibdevsim speaks the oldest user ABI a shipped provider
 * still drives: qib's version 1, in which every post, poll and CQ arm is
 * an ib_uverbs command and nothing is shared with user space through
 * mmap().  ipathverbs takes a device by its driver ID, so an HCA reports
 * qib's; the ID means nothing else to the kernel (qib itself never
 * unregisters by driver ID).
 */
static const struct ib_device_ops ibdevsim_uverbs_ops = {
	.driver_id = RDMA_DRIVER_QIB,
	.uverbs_abi_ver = 1,

	.alloc_ucontext = ibdevsim_alloc_ucontext,
	.dealloc_ucontext = ibdevsim_dealloc_ucontext,

	INIT_RDMA_OBJ_SIZE(ib_ucontext, ibdevsim_ucontext, ibuc),
};

/* The removal_events knob, and how many events it raised. */
bool ibdevsim_removal_events;
atomic_t ibdevsim_removal_events_sent = ATOMIC_INIT(0);

/*
 * Hardware may report port changes while its driver unregisters the
 * device (mlx5 tears its event notifier down only afterwards), so a
 * client must stop acting on events before its remove callback is done
 * with what they touch.  With the knob set, this raises LID_CHANGE on
 * every port about every millisecond for the whole ib_unregister_device().
 */
static void ibdevsim_removal_storm(struct work_struct *work)
{
	struct ibdevsim_hca *hca = container_of(work, struct ibdevsim_hca,
						storm);
	struct ib_event ev = {
		.device = &hca->ibdev,
		.event = IB_EVENT_LID_CHANGE,
	};
	u32 p;

	while (!READ_ONCE(hca->storm_stop)) {
		rdma_for_each_port(&hca->ibdev, p) {
			ev.element.port_num = p;
			ib_dispatch_event(&ev);
			atomic_inc(&ibdevsim_removal_events_sent);
		}
		usleep_range(500, 1000);
	}
}

/**
 * ibdevsim_hca_register() - give an HCA node its ib_device
 * @node: the node
 *
 * Context: ibdevsim_topo_mutex held.
 * Return: 0 or a negative errno (nothing left allocated).
 */
int ibdevsim_hca_register(struct ibdevsim_node *node)
{
	struct ibdevsim_hca *hca;
	int ret;

	hca = ib_alloc_device(ibdevsim_hca, ibdev);
	if (!hca)
		return -ENOMEM;
	hca->node = node;
	xa_init_flags(&hca->qps, XA_FLAGS_ALLOC | XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&hca->mrs, XA_FLAGS_ALLOC | XA_FLAGS_LOCK_IRQ);
	hca->qpn_next = 2;
	INIT_LIST_HEAD(&hca->mcast);
	INIT_WORK(&hca->storm, ibdevsim_removal_storm);
	hca->ibdev.node_type = RDMA_NODE_IB_CA;
	hca->ibdev.node_guid = cpu_to_be64(node->guid);
	hca->ibdev.phys_port_cnt = node->nports;
	hca->ibdev.num_comp_vectors = 1;
	hca->ibdev.local_dma_lkey = IBDEVSIM_DMA_LKEY;
	hca->ibdev.dev.parent = &node->dev;
	memcpy(hca->ibdev.node_desc, node->desc, IB_DEVICE_NODE_DESC_MAX);
	ib_set_device_ops(&hca->ibdev, &ibdevsim_dev_ops);
	if (user_verbs) {
		ib_set_device_ops(&hca->ibdev, &ibdevsim_uverbs_ops);
		/* The data-path commands the ABI carries, off by default. */
		hca->ibdev.uverbs_cmd_mask |=
			BIT_ULL(IB_USER_VERBS_CMD_POLL_CQ) |
			BIT_ULL(IB_USER_VERBS_CMD_REQ_NOTIFY_CQ) |
			BIT_ULL(IB_USER_VERBS_CMD_POST_SEND) |
			BIT_ULL(IB_USER_VERBS_CMD_POST_RECV);
	}
	node->hca = hca;
	ret = ib_register_device(&hca->ibdev, "ibdevsim%d", NULL);
	if (ret) {
		node->hca = NULL;
		xa_destroy(&hca->qps);
		xa_destroy(&hca->mrs);
		ib_dealloc_device(&hca->ibdev);
	}
	return ret;
}

/**
 * ibdevsim_hca_unregister() - unregister an HCA node's ib_device
 * @node: the node, its cables still in: packets keep arriving while the
 *	  clients' remove callbacks run
 *
 * With the removal_events knob set, port events keep coming while the
 * device is unregistered (see ibdevsim_removal_storm()).
 *
 * Context: ibdevsim_topo_mutex held.
 */
void ibdevsim_hca_unregister(struct ibdevsim_node *node)
{
	struct ibdevsim_hca *hca = node->hca;
	bool storm = READ_ONCE(ibdevsim_removal_events);

	if (storm) {
		hca->storm_stop = false;
		queue_work(system_unbound_wq, &hca->storm);
	}
	ib_unregister_device(&hca->ibdev);
	if (storm) {
		WRITE_ONCE(hca->storm_stop, true);
		flush_work(&hca->storm);
	}
}

/**
 * ibdevsim_hca_free() - free an HCA node's ib_device
 * @node: the node: device unregistered, receive side stopped, cables
 *	  pulled and a grace period passed
 *
 * Context: ibdevsim_topo_mutex held.
 */
void ibdevsim_hca_free(struct ibdevsim_node *node)
{
	struct ibdevsim_hca *hca = node->hca;

	/*
	 * The port events the core still has queued (the storm's, or those
	 * the SM's Sets raised while the device went) name this device.
	 */
	flush_workqueue(ib_wq);
	xa_destroy(&hca->qps);
	xa_destroy(&hca->mrs);
	node->hca = NULL;
	ib_dealloc_device(&hca->ibdev);
}
