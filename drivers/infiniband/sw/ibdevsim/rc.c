// SPDX-License-Identifier: GPL-2.0
/*
 * ibdevsim: reliable connected QPs, with the transport of IBTA chapter 9.
 *
 * Requester.  The QP's send work cuts each request into packets of the
 * path MTU, numbers them with PSNs and puts them on the wire, reading the
 * payload from the requester's buffers at each transmission as an HCA's
 * DMA does.  Requests stay on @rc_inflight until acknowledged.  The ACKs,
 * NAKs and READ responses come back through the fabric to the requester
 * port's receive work, which completes what they acknowledge, in order.
 * A request or an ACK lost on the way (the fault knobs act on RC packets
 * as on any) is sent again when the local ACK timer (4.096 us << timeout)
 * expires, retry_cnt times, then fails with IB_WC_RETRY_EXC_ERR; a
 * sequence NAK sends again at once from the PSN it names; an RNR NAK
 * waits the responder's min_rnr_timer, rnr_retry times (7: for ever).
 * READs in flight are bounded by max_rd_atomic, and a fenced request
 * waits for them.
 *
 * Responder.  The receive work of the responder's port takes packets in
 * PSN order: a packet ahead of the expected PSN gets one sequence NAK, a
 * duplicate is acknowledged again (a READ is carried out again), a SEND
 * that finds no receive posted gets an RNR NAK.  SENDs land in the
 * receive at the head of the queue packet by packet, WRITEs where their
 * RETH says, READs are answered with response packets.  A bad R_Key, a
 * SEND longer than its receive or packets out of protocol get a NAK and
 * move the responder to the error state, as IBTA's class C errors do.
 *
 * Buffers are checked against the MRs their keys name (mem.c) when the
 * data moves.  The DMA key, which kernel ULPs use as L_Key and R_Key,
 * covers all kernel memory, as an unsafe global R_Key does on hardware;
 * user QPs must use registered MRs.
 */

#include <kunit/visibility.h>
#include <linux/slab.h>
#include <rdma/ib_pack.h>

#include "ibdevsim.h"

/* PSNs in flight at most: keeps the fabric's queues bounded. */
#define IBDEVSIM_RC_WINDOW	1024

/* AETH syndromes (IBTA 9.7.5.1.2). */
#define AETH_ACK		0x1f	/* ACK without end-to-end credits */
#define AETH_RNR_NAK		0x20	/* low 5 bits: the RNR timer code */
#define AETH_NAK_SEQ		0x60
#define AETH_NAK_INV_REQ	0x61
#define AETH_NAK_REM_ACCESS	0x62
#define AETH_NAK_REM_OP		0x63
#define AETH_TYPE(s)		((s) & 0x60)

const struct rdma_stat_desc ibdevsim_rc_stat_descs[IBDEVSIM_RC_NSTATS] = {
	[IBDEVSIM_RC_RETRANSMITS].name = "rc_retransmits",
	[IBDEVSIM_RC_ACK_TIMEOUTS].name = "local_ack_timeout_err",
	[IBDEVSIM_RC_RCVD_SEQ_NAKS].name = "rcvd_seq_err",
	[IBDEVSIM_RC_IMPLIED_NAKS].name = "implied_nak_seq_err",
	[IBDEVSIM_RC_RCVD_RNR_NAKS].name = "rcvd_rnr_err",
	[IBDEVSIM_RC_SENT_RNR_NAKS].name = "send_rnr_err",
	[IBDEVSIM_RC_OUT_OF_SEQ].name = "out_of_seq_request",
	[IBDEVSIM_RC_DUPLICATES].name = "duplicate_request",
	[IBDEVSIM_RC_RETRY_EXC].name = "retry_exceeded_err",
	[IBDEVSIM_RC_RNR_RETRY_EXC].name = "retry_rnr_exceeded_err",
};

static struct ibdevsim_port *rc_port(const struct ibdevsim_qp *qp)
{
	return &qp->hca->node->ports[qp->port];
}

static void rc_count(const struct ibdevsim_qp *qp, enum ibdevsim_rc_stat st)
{
	atomic64_inc(&rc_port(qp)->rc_stats[st]);
}

/**
 * ibdevsim_rc_post_check() - validate an RC send work request
 * @qp: the QP
 * @wr: the request
 * @len: set to the bytes it moves
 *
 * Return: 0, or -EINVAL for an opcode the simulator lacks (atomics,
 * memory windows) or too many SGEs.
 */
int ibdevsim_rc_post_check(const struct ibdevsim_qp *qp,
			   const struct ib_send_wr *wr, u32 *len)
{
	int i;

	if (wr->num_sge < 0 || wr->num_sge > qp->max_send_sge)
		return -EINVAL;
	switch (wr->opcode) {
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
	case IB_WR_SEND_WITH_INV:
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
		break;
	case IB_WR_REG_MR:
		if (!reg_wr(wr)->mr)
			return -EINVAL;
		*len = 0;
		return 0;
	case IB_WR_LOCAL_INV:
		*len = 0;
		return 0;
	default:
		return -EINVAL;
	}
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
	swqe->fence = wr->send_flags & IB_SEND_FENCE;
	switch (wr->opcode) {
	case IB_WR_REG_MR:
		swqe->opcode = IB_WC_REG_MR;
		swqe->reg_mr = reg_wr(wr)->mr;
		swqe->reg_access = reg_wr(wr)->access;
		swqe->rkey = reg_wr(wr)->key;
		return;
	case IB_WR_LOCAL_INV:
		swqe->opcode = IB_WC_LOCAL_INV;
		swqe->ex.invalidate_rkey = wr->ex.invalidate_rkey;
		return;
	default:
		break;
	}
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
EXPORT_SYMBOL_IF_KUNIT(ibdevsim_rc_fill_swqe);

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
 * worker reaches them; a QP of an SRQ raises
 * IB_EVENT_QP_LAST_WQE_REACHED.
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
	/* What ib_drain_qp() waits for on a QP of an SRQ. */
	if (qp->srq)
		ibdevsim_qp_event(qp, IBDEVSIM_QP_EV_LAST_WQE);
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
		[IBDEVSIM_QP_EV_LAST_WQE] = IB_EVENT_QP_LAST_WQE_REACHED,
		[IBDEVSIM_QP_EV_REQ_ERR] = IB_EVENT_QP_REQ_ERR,
		[IBDEVSIM_QP_EV_ACCESS_ERR] = IB_EVENT_QP_ACCESS_ERR,
		[IBDEVSIM_QP_EV_RESP_FATAL] = IB_EVENT_QP_FATAL,
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
		/* The CQ raised its own event (IB_EVENT_CQ_ERR). */
		if (ev == IBDEVSIM_QP_EV_CQ_OVERRUN) {
			ibdevsim_qp_error(qp);
			continue;
		}
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
 * Address a packet to @qp's connected peer, from @qp's port.  The LID and
 * P_Key are read when the packet leaves, as the port has them then.
 */
static void rc_address(struct ibdevsim_qp *qp, struct ibdevsim_pkt *pkt)
{
	struct ibdevsim_port *port = rc_port(qp);
	unsigned long flags;

	pkt->rc = true;
	pkt->dlid = qp->dlid;
	pkt->sl = qp->sl;
	pkt->src_qpn = qp->ibqp.qp_num;
	pkt->dest_qpn = qp->dest_qpn;
	spin_lock_irqsave(&port->node->lock, flags);
	pkt->slid = port->st.lid | qp->path_bits;
	pkt->pkey = port->pkeys[qp->pkey_index % IBDEVSIM_PKEY_TBL_LEN];
	spin_unlock_irqrestore(&port->node->lock, flags);
}

/* (Re)start the local ACK timer; a timeout of 0 means none. */
static void rc_arm_locked(struct ibdevsim_qp *qp)
{
	u64 ns = ibdevsim_rc_ack_timeout_ns(qp->timeout);

	lockdep_assert_held(&qp->sq_lock);
	if (ns)
		mod_timer(&qp->rc_timer,
			  jiffies + max_t(unsigned long, 1,
					  nsecs_to_jiffies(ns)));
}

static void rc_timer_fn(struct timer_list *t)
{
	struct ibdevsim_qp *qp = timer_container_of(qp, t, rc_timer);
	unsigned long flags;

	spin_lock_irqsave(&qp->sq_lock, flags);
	qp->rc_expired = true;
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	queue_work(ibdevsim_wq, &qp->send_work);
}

/**
 * ibdevsim_rc_qp_init() - set up a new QP's RC transport state
 * @qp: the QP
 */
void ibdevsim_rc_qp_init(struct ibdevsim_qp *qp)
{
	INIT_LIST_HEAD(&qp->rc_inflight);
	INIT_LIST_HEAD(&qp->rc_done);
	timer_setup(&qp->rc_timer, rc_timer_fn, 0);
	qp->mtu = IBDEVSIM_MTU;
}
EXPORT_SYMBOL_IF_KUNIT(ibdevsim_rc_qp_init);

/**
 * ibdevsim_rc_stop() - stop a QP's RC timer and send work for good
 * @qp: the QP, reset or being destroyed: no receive work reaches it
 *	(flushed by the caller) and nothing is posted any more
 *
 * Context: process, no lock held.
 */
void ibdevsim_rc_stop(struct ibdevsim_qp *qp)
{
	timer_delete_sync(&qp->rc_timer);
	/* The timer may have queued the work just before. */
	cancel_work_sync(&qp->send_work);
}

/*
 * The QP is in error: every request not yet completed is flushed, in
 * order, after those already finished.
 */
static void rc_flush_locked(struct ibdevsim_qp *qp)
{
	struct ibdevsim_swqe *s;

	lockdep_assert_held(&qp->sq_lock);
	list_splice_tail_init(&qp->sendq, &qp->rc_inflight);
	list_for_each_entry(s, &qp->rc_inflight, list)
		s->status = IB_WC_WR_FLUSH_ERR;
	list_splice_tail_init(&qp->rc_inflight, &qp->rc_done);
	qp->rc_rd_out = 0;
	qp->rc_rnr_wait = false;
	timer_delete(&qp->rc_timer);
}

/*
 * Request @s failed with @status: it completes with it, first, and the QP
 * goes to the error state, which flushes the rest.  The caller calls
 * ibdevsim_qp_error() once it dropped the lock.
 */
static void rc_fail_locked(struct ibdevsim_qp *qp, struct ibdevsim_swqe *s,
			   enum ib_wc_status status)
{
	lockdep_assert_held(&qp->sq_lock);
	s->status = status;
	list_move_tail(&s->list, &qp->rc_done);
	qp->state = IB_QPS_ERR;
	rc_flush_locked(qp);
}

static struct ibdevsim_swqe *rc_oldest_locked(struct ibdevsim_qp *qp)
{
	return list_first_entry_or_null(&qp->rc_inflight,
					struct ibdevsim_swqe, list);
}

/*
 * READ responses from @miss on were lost (a later one, or an ACK past
 * them, arrived): ask the READ again from @miss, once per gap: the
 * responses still on their way from the first request must not ask it
 * again each.  Returns true when the send work is to send.
 */
static bool rc_read_gap_locked(struct ibdevsim_qp *qp, u32 miss)
{
	if (qp->rc_rd_gap && qp->rc_rd_gap_psn == miss)
		return false;
	qp->rc_rd_gap = true;
	qp->rc_rd_gap_psn = miss;
	rc_count(qp, IBDEVSIM_RC_IMPLIED_NAKS);
	if (ibdevsim_psn_cmp(qp->rc_tx_psn, miss) > 0)
		qp->rc_tx_psn = miss;
	return true;
}

/*
 * Complete, in order, what the peer acknowledged: every PSN before @una.
 * A READ completes only with its last response; an ACK past a READ whose
 * responses are missing says they were lost (an implied NAK), and the
 * READ is asked again from the first missing one.  Progress restarts the
 * retry counts and the timer.  Returns true when the send work has
 * something to do: room opened in the window, or a READ to ask again.
 */
static bool rc_advance_locked(struct ibdevsim_qp *qp, u32 una)
{
	struct ibdevsim_swqe *s, *tmp;
	bool kick = false;

	lockdep_assert_held(&qp->sq_lock);
	if (ibdevsim_psn_cmp(una, qp->rc_una) <= 0 ||
	    ibdevsim_psn_cmp(una, qp->rc_next_psn) > 0)
		return false;
	list_for_each_entry_safe(s, tmp, &qp->rc_inflight, list) {
		u32 end = ibdevsim_psn_add(s->psn, s->npsn);

		if (s->wr_opcode == IB_WR_RDMA_READ && s->rd_got < s->npsn) {
			u32 miss = ibdevsim_psn_add(s->psn, s->rd_got);

			if (ibdevsim_psn_cmp(una, miss) > 0) {
				una = miss;
				kick = rc_read_gap_locked(qp, miss);
			}
			break;
		}
		if (ibdevsim_psn_cmp(una, end) < 0)
			break;
		s->status = IB_WC_SUCCESS;
		list_move_tail(&s->list, &qp->rc_done);
		if (s->wr_opcode == IB_WR_RDMA_READ)
			qp->rc_rd_out--;
	}
	if (ibdevsim_psn_cmp(una, qp->rc_una) <= 0)
		return kick;
	qp->rc_una = una;
	qp->rc_rd_gap = false;
	if (ibdevsim_psn_cmp(qp->rc_tx_psn, una) < 0)
		qp->rc_tx_psn = una;
	qp->rc_retry_left = qp->retry_cnt;
	qp->rc_rnr_left = qp->rnr_retry;
	if (!qp->rc_rnr_wait) {
		qp->rc_expired = false;
		if (list_empty(&qp->rc_inflight))
			timer_delete(&qp->rc_timer);
		else
			rc_arm_locked(qp);
	}
	return true;
}

/*
 * A READ response: its data lands in the requester's buffers if it is
 * the one expected next; a gap means responses were lost, and the READ is
 * asked again from the first missing one.  Returns true when the send
 * work has something to do; *@failed when a local buffer no longer
 * checks and the QP went to error.
 */
static bool rc_read_resp_locked(struct ibdevsim_qp *qp,
				const struct ibdevsim_pkt *pkt, bool *failed)
{
	struct ibdevsim_seg segs[IBDEVSIM_MAX_SGE], from;
	u32 psn = pkt->rch.psn, want, off, len;
	struct ibdevsim_swqe *s;
	bool found = false;

	list_for_each_entry(s, &qp->rc_inflight, list) {
		if (s->wr_opcode == IB_WR_RDMA_READ &&
		    ibdevsim_psn_cmp(psn, s->psn) >= 0 &&
		    ibdevsim_psn_cmp(psn, ibdevsim_psn_add(s->psn,
							   s->npsn)) < 0) {
			found = true;
			break;
		}
	}
	if (!found)
		return false;
	want = ibdevsim_psn_add(s->psn, s->rd_got);
	if (ibdevsim_psn_cmp(psn, want) < 0)
		return false;
	if (ibdevsim_psn_cmp(psn, want) > 0)
		return rc_read_gap_locked(qp, want);
	off = s->rd_got * qp->mtu;
	len = min(qp->mtu, s->byte_len - off);
	if (pkt->len != len)
		return false;
	if (len) {
		if (!ibdevsim_sges_resolve(qp, s->sgl, s->num_sge,
					   IB_ACCESS_LOCAL_WRITE, segs)) {
			rc_fail_locked(qp, s, IB_WC_LOC_PROT_ERR);
			*failed = true;
			return false;
		}
		ibdevsim_segs_skip(segs, s->num_sge, off);
		from = ibdevsim_kseg(pkt->data, len);
		ibdevsim_seg_copy(segs, s->num_sge, &from, 1, len);
	}
	s->rd_got++;
	rc_advance_locked(qp, ibdevsim_psn_add(psn, 1));
	return true;
}

/*
 * An ACK, NAK or READ response reaches the requester.  Returns true when
 * the send work has something to do; *@failed when the QP went to error.
 */
VISIBLE_IF_KUNIT bool
ibdevsim_rc_req_recv_locked(struct ibdevsim_qp *qp,
			    const struct ibdevsim_pkt *pkt, bool *failed)
{
	const struct ibdevsim_rc_hdr *h = &pkt->rch;
	struct ibdevsim_swqe *s;
	enum ib_wc_status status;
	bool kick;

	lockdep_assert_held(&qp->sq_lock);
	if (qp->state != IB_QPS_RTS && qp->state != IB_QPS_SQD)
		return false;
	/* Only what was sent and is not yet acknowledged is answered. */
	if (ibdevsim_psn_cmp(h->psn, qp->rc_una) < 0 ||
	    ibdevsim_psn_cmp(h->psn, qp->rc_next_psn) >= 0)
		return false;
	if (h->opcode != IB_OPCODE_RC_ACKNOWLEDGE)
		return rc_read_resp_locked(qp, pkt, failed);

	switch (AETH_TYPE(h->syndrome)) {
	case 0:
		return rc_advance_locked(qp, ibdevsim_psn_add(h->psn, 1));
	case AETH_RNR_NAK:
		rc_count(qp, IBDEVSIM_RC_RCVD_RNR_NAKS);
		kick = rc_advance_locked(qp, h->psn);
		s = rc_oldest_locked(qp);
		if (!s)
			return kick;
		if (qp->rnr_retry != 7 && !qp->rc_rnr_left--) {
			rc_count(qp, IBDEVSIM_RC_RNR_RETRY_EXC);
			rc_fail_locked(qp, s, IB_WC_RNR_RETRY_EXC_ERR);
			*failed = true;
			return false;
		}
		qp->rc_tx_psn = h->psn;
		qp->rc_rnr_wait = true;
		mod_timer(&qp->rc_timer, jiffies +
			  usecs_to_jiffies(ibdevsim_rnr_timer_us(h->syndrome)));
		return false;
	case AETH_NAK_SEQ:
		if (h->syndrome == AETH_NAK_SEQ) {
			rc_count(qp, IBDEVSIM_RC_RCVD_SEQ_NAKS);
			rc_advance_locked(qp, h->psn);
			s = rc_oldest_locked(qp);
			if (!s)
				return false;
			if (!qp->rc_retry_left--) {
				rc_count(qp, IBDEVSIM_RC_RETRY_EXC);
				rc_fail_locked(qp, s, IB_WC_RETRY_EXC_ERR);
				*failed = true;
				return false;
			}
			qp->rc_tx_psn = h->psn;
			return true;
		}
		status = h->syndrome == AETH_NAK_INV_REQ ?
			 IB_WC_REM_INV_REQ_ERR :
			 h->syndrome == AETH_NAK_REM_ACCESS ?
			 IB_WC_REM_ACCESS_ERR : IB_WC_REM_OP_ERR;
		rc_advance_locked(qp, h->psn);
		s = rc_oldest_locked(qp);
		if (s) {
			rc_fail_locked(qp, s, status);
			*failed = true;
		}
		return false;
	default:
		return false;
	}
}
EXPORT_SYMBOL_IF_KUNIT(ibdevsim_rc_req_recv_locked);

/*
 * Complete the requests on @rc_done, in order.  One context at a time
 * does it, so that completions keep their order whichever of the send
 * work and the port's receive work finished them.
 */
static void rc_reap(struct ibdevsim_qp *qp)
{
	struct ibdevsim_swqe *s;
	unsigned long flags;

	spin_lock_irqsave(&qp->sq_lock, flags);
	if (qp->rc_reaping) {
		spin_unlock_irqrestore(&qp->sq_lock, flags);
		return;
	}
	qp->rc_reaping = true;
	while ((s = list_first_entry_or_null(&qp->rc_done,
					     struct ibdevsim_swqe, list))) {
		list_del(&s->list);
		spin_unlock_irqrestore(&qp->sq_lock, flags);
		ibdevsim_sq_retire(qp, s, s->status);
		kfree(s);
		spin_lock_irqsave(&qp->sq_lock, flags);
	}
	qp->rc_reaping = false;
	spin_unlock_irqrestore(&qp->sq_lock, flags);
}

/*
 * The timer expired: after an RNR NAK's wait, send again from the PSN it
 * named; otherwise from the oldest unacknowledged PSN, while retries
 * last.  Returns false when the QP failed.
 */
VISIBLE_IF_KUNIT bool ibdevsim_rc_expire_locked(struct ibdevsim_qp *qp)
{
	struct ibdevsim_swqe *s = rc_oldest_locked(qp);

	qp->rc_expired = false;
	if (qp->rc_rnr_wait) {
		qp->rc_rnr_wait = false;
		if (s)
			rc_arm_locked(qp);
		return true;
	}
	if (!s)
		return true;
	rc_count(qp, IBDEVSIM_RC_ACK_TIMEOUTS);
	if (!qp->rc_retry_left--) {
		rc_count(qp, IBDEVSIM_RC_RETRY_EXC);
		rc_fail_locked(qp, s, IB_WC_RETRY_EXC_ERR);
		return false;
	}
	qp->rc_tx_psn = qp->rc_una;
	rc_arm_locked(qp);
	return true;
}
EXPORT_SYMBOL_IF_KUNIT(ibdevsim_rc_expire_locked);

static bool rc_is_local(const struct ibdevsim_swqe *s)
{
	return s->wr_opcode == IB_WR_REG_MR || s->wr_opcode == IB_WR_LOCAL_INV;
}

/*
 * Carry out a memory registration or local invalidation, the oldest
 * posted request: it takes no PSN and completes, in order, once what is
 * before it is acknowledged.  Returns false when it failed, which put the
 * QP in error.
 */
static bool rc_local_locked(struct ibdevsim_qp *qp, struct ibdevsim_swqe *s)
{
	enum ib_wc_status status = IB_WC_SUCCESS;

	if (s->wr_opcode == IB_WR_REG_MR) {
		status = ibdevsim_fr_reg(qp, s->reg_mr, s->rkey,
					 s->reg_access);
	} else {
		rcu_read_lock();
		if (!ibdevsim_fr_inv(qp, s->ex.invalidate_rkey))
			status = IB_WC_LOC_PROT_ERR;
		rcu_read_unlock();
	}
	if (status != IB_WC_SUCCESS) {
		rc_fail_locked(qp, s, status);
		return false;
	}
	s->psn = qp->rc_next_psn;
	s->npsn = 0;
	s->status = IB_WC_SUCCESS;
	list_move_tail(&s->list, list_empty(&qp->rc_inflight) ?
				 &qp->rc_done : &qp->rc_inflight);
	return true;
}

/*
 * The request and PSN to transmit next: a PSN to send again, or the
 * first PSN of the oldest posted request if the window, the READ limit
 * and a fence let it go.  NULL when there is nothing to send now.
 */
VISIBLE_IF_KUNIT struct ibdevsim_swqe *
ibdevsim_rc_next_locked(struct ibdevsim_qp *qp, u32 *psn, bool *again)
{
	u32 rd_max = max_t(u32, qp->max_rd_atomic, 1);
	struct ibdevsim_swqe *s;

	if (qp->rc_rnr_wait)
		return NULL;
	if (ibdevsim_psn_cmp(qp->rc_tx_psn, qp->rc_next_psn) < 0) {
		list_for_each_entry(s, &qp->rc_inflight, list) {
			if (ibdevsim_psn_cmp(qp->rc_tx_psn,
					     ibdevsim_psn_add(s->psn,
							      s->npsn)) < 0) {
				*psn = qp->rc_tx_psn;
				*again = true;
				return s;
			}
		}
		qp->rc_tx_psn = qp->rc_next_psn;
	}
	if (qp->state != IB_QPS_RTS)
		return NULL;
	s = list_first_entry_or_null(&qp->sendq, struct ibdevsim_swqe, list);
	while (s && rc_is_local(s)) {
		if (s->fence && qp->rc_rd_out)
			return NULL;
		if (!rc_local_locked(qp, s))
			return NULL;
		s = list_first_entry_or_null(&qp->sendq, struct ibdevsim_swqe,
					     list);
	}
	if (!s ||
	    ((qp->rc_next_psn - qp->rc_una) & IBDEVSIM_PSN_MASK) >=
	    IBDEVSIM_RC_WINDOW ||
	    (s->wr_opcode == IB_WR_RDMA_READ && qp->rc_rd_out >= rd_max) ||
	    (s->fence && qp->rc_rd_out))
		return NULL;
	list_move_tail(&s->list, &qp->rc_inflight);
	s->psn = qp->rc_next_psn;
	s->npsn = ibdevsim_rc_npkts(s->byte_len, qp->mtu);
	s->rd_got = 0;
	if (s->wr_opcode == IB_WR_RDMA_READ)
		qp->rc_rd_out++;
	qp->rc_next_psn = ibdevsim_psn_add(s->psn, s->npsn);
	*psn = s->psn;
	*again = false;
	return s;
}
EXPORT_SYMBOL_IF_KUNIT(ibdevsim_rc_next_locked);

/*
 * Fill @pkt (room for IBDEVSIM_MTU bytes) with the packet of request @s
 * at @psn: its headers and, for a SEND or WRITE, its payload, read from
 * the requester's buffers now.  Returns the PSN after it (for a READ
 * request, after all its responses), or sets *@status when a buffer no
 * longer checks.
 */
VISIBLE_IF_KUNIT u32
ibdevsim_rc_build_locked(struct ibdevsim_qp *qp, struct ibdevsim_swqe *s,
			 u32 psn, struct ibdevsim_pkt *pkt,
			 enum ib_wc_status *status)
{
	u32 idx = (psn - s->psn) & IBDEVSIM_PSN_MASK, off = idx * qp->mtu;
	struct ibdevsim_rc_hdr *h = &pkt->rch;
	struct ibdevsim_seg segs[IBDEVSIM_MAX_SGE], to;
	bool write = s->wr_opcode == IB_WR_RDMA_WRITE ||
		     s->wr_opcode == IB_WR_RDMA_WRITE_WITH_IMM;
	u32 n;

	h->psn = psn;
	if (s->wr_opcode == IB_WR_RDMA_READ) {
		h->opcode = IB_OPCODE_RC_RDMA_READ_REQUEST;
		h->va = s->remote_addr + off;
		h->rkey = s->rkey;
		h->dma_len = s->byte_len - off;
		pkt->len = 0;
		return ibdevsim_psn_add(s->psn, s->npsn);
	}
	n = min(qp->mtu, s->byte_len - off);
	h->opcode = ibdevsim_rc_opcode(s->wr_opcode, idx, s->npsn);
	h->ack_req = idx + 1 == s->npsn;
	if (write && !idx) {
		h->va = s->remote_addr;
		h->rkey = s->rkey;
		h->dma_len = s->byte_len;
	}
	if (idx + 1 == s->npsn) {
		h->se = s->solicited;
		if (s->wr_opcode == IB_WR_SEND_WITH_INV) {
			h->ieth = s->ex.invalidate_rkey;
		} else if (s->wr_opcode == IB_WR_SEND_WITH_IMM ||
			   s->wr_opcode == IB_WR_RDMA_WRITE_WITH_IMM) {
			pkt->has_imm = true;
			pkt->imm = s->ex.imm_data;
		}
	}
	pkt->len = n;
	if (!n)
		return ibdevsim_psn_add(psn, 1);
	rcu_read_lock();
	if (ibdevsim_rc_local(qp, s, segs)) {
		ibdevsim_segs_skip(segs, s->num_sge, off);
		to = ibdevsim_kseg(pkt->data, n);
		ibdevsim_seg_copy(&to, 1, segs, s->num_sge, n);
	} else {
		*status = IB_WC_LOC_PROT_ERR;
	}
	rcu_read_unlock();
	return ibdevsim_psn_add(psn, 1);
}
EXPORT_SYMBOL_IF_KUNIT(ibdevsim_rc_build_locked);

/*
 * Nothing for the send work to do: no error to flush, no timer to act
 * on, nothing to send again, and no new request it may start (an RNR
 * wait holds everything).  A request the window or a READ limit holds
 * back is not looked at here: the work then finds that out itself.
 */
static bool rc_idle_locked(struct ibdevsim_qp *qp)
{
	lockdep_assert_held(&qp->sq_lock);
	if (qp->state == IB_QPS_ERR || qp->rc_expired)
		return false;
	if (qp->rc_rnr_wait)
		return true;
	return qp->rc_tx_psn == qp->rc_next_psn &&
	       (list_empty(&qp->sendq) || qp->state != IB_QPS_RTS);
}

/**
 * ibdevsim_rc_send_work() - the requester side of an RC QP's send work
 * @qp: the QP
 *
 * Puts one packet on the wire at a time while there is something to send
 * (new requests, or what a timeout or NAK asks to send again), acts on an
 * expired timer, flushes everything once the QP is in error, and
 * completes what finished.
 *
 * Context: the QP's send work (process context, no lock held).
 */
void ibdevsim_rc_send_work(struct ibdevsim_qp *qp)
{
	struct ibdevsim_port *port = rc_port(qp);
	enum ib_wc_status status;
	struct ibdevsim_swqe *s;
	struct ibdevsim_pkt *pkt;
	bool failed, idle, again = false;
	unsigned long flags;
	u32 psn;

	for (;;) {
		/* Each ACK wakes this work: most often with nothing to send. */
		spin_lock_irqsave(&qp->sq_lock, flags);
		idle = rc_idle_locked(qp);
		spin_unlock_irqrestore(&qp->sq_lock, flags);
		if (idle)
			break;
		pkt = ibdevsim_pkt_alloc(IBDEVSIM_MTU, GFP_KERNEL);
		failed = false;
		s = NULL;
		status = IB_WC_SUCCESS;
		spin_lock_irqsave(&qp->sq_lock, flags);
		if (qp->rc_expired && qp->state != IB_QPS_ERR)
			failed = !ibdevsim_rc_expire_locked(qp);
		if (qp->state == IB_QPS_ERR) {
			rc_flush_locked(qp);
		} else if (pkt) {
			s = ibdevsim_rc_next_locked(qp, &psn, &again);
			/* A registration that failed put the QP in error. */
			failed = qp->state == IB_QPS_ERR;
		} else if (!list_empty(&qp->rc_inflight)) {
			rc_arm_locked(qp);	/* try again when it fires */
		}
		if (s) {
			qp->rc_tx_psn = ibdevsim_rc_build_locked(qp, s, psn,
								 pkt, &status);
			if (status != IB_WC_SUCCESS) {
				rc_fail_locked(qp, s, status);
				failed = true;
				s = NULL;
			} else if (!timer_pending(&qp->rc_timer)) {
				rc_arm_locked(qp);
			}
		}
		spin_unlock_irqrestore(&qp->sq_lock, flags);
		if (failed)
			ibdevsim_qp_error(qp);
		if (!s) {
			kfree(pkt);
			break;
		}
		if (again)
			rc_count(qp, IBDEVSIM_RC_RETRANSMITS);
		rc_address(qp, pkt);
		ibdevsim_xmit(port, pkt);
		cond_resched();
	}
	rc_reap(qp);
}

/* Send an ACK or a NAK with @syndrome for @psn to @qp's peer. */
static void rc_send_ack(struct ibdevsim_qp *qp, u8 syndrome, u32 psn)
{
	struct ibdevsim_pkt *pkt = ibdevsim_pkt_alloc(0, GFP_ATOMIC);

	if (!pkt)
		return;
	pkt->rch.opcode = IB_OPCODE_RC_ACKNOWLEDGE;
	pkt->rch.syndrome = syndrome;
	pkt->rch.psn = psn;
	rc_address(qp, pkt);
	ibdevsim_xmit(rc_port(qp), pkt);
}

/* May the responder be read (or written) where a RETH says? */
static bool rc_reth_ok(struct ibdevsim_qp *qp, u64 va, u32 rkey, u32 len,
		       int need, struct ibdevsim_seg *seg)
{
	/* A zero-length RDMA touches no memory: no R_Key check (IBTA 9.4). */
	if (!len) {
		*seg = ibdevsim_kseg(NULL, 0);
		return true;
	}
	return (qp->access & need) &&
	       ibdevsim_mem_resolve(qp->hca, qp->ibqp.pd, rkey, va, len, need,
				    seg);
}

/*
 * Answer a READ request: response packets from @h->psn on, the data read
 * from the responder's memory now.  A bad R_Key gets a NAK instead.
 * Returns false in that case.
 */
static bool rc_read_respond(struct ibdevsim_qp *qp,
			    const struct ibdevsim_rc_hdr *h)
{
	u32 n = ibdevsim_rc_npkts(h->dma_len, qp->mtu), i;
	struct ibdevsim_seg seg, to;

	for (i = 0; i < n; i++) {
		u32 off = i * qp->mtu, len = min(qp->mtu, h->dma_len - off);
		struct ibdevsim_pkt *pkt;

		if (!rc_reth_ok(qp, h->va + off, h->rkey, len,
				IB_ACCESS_REMOTE_READ, &seg)) {
			rc_send_ack(qp, AETH_NAK_REM_ACCESS, h->psn);
			return false;
		}
		/* Out of memory: the requester's timer asks again. */
		pkt = ibdevsim_pkt_alloc(len, GFP_ATOMIC);
		if (!pkt)
			return true;
		to = ibdevsim_kseg(pkt->data, len);
		if (len)
			ibdevsim_seg_copy(&to, 1, &seg, 1, len);
		pkt->rch.psn = ibdevsim_psn_add(h->psn, i);
		pkt->rch.syndrome = AETH_ACK;
		if (n == 1)
			pkt->rch.opcode = IB_OPCODE_RC_RDMA_READ_RESPONSE_ONLY;
		else if (!i)
			pkt->rch.opcode = IB_OPCODE_RC_RDMA_READ_RESPONSE_FIRST;
		else if (i + 1 == n)
			pkt->rch.opcode = IB_OPCODE_RC_RDMA_READ_RESPONSE_LAST;
		else
			pkt->rch.opcode =
				IB_OPCODE_RC_RDMA_READ_RESPONSE_MIDDLE;
		rc_address(qp, pkt);
		ibdevsim_xmit(rc_port(qp), pkt);
	}
	return true;
}

static bool rc_opcode_in(u8 op, const u8 *set, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (set[i] == op)
			return true;
	return false;
}

/*
 * Take the oldest receive posted to @qp, or to its SRQ, into
 * @qp->rc_rwqe; false when there is none.  @qp->rq_lock held.
 */
static bool rc_take_recv_locked(struct ibdevsim_qp *qp)
{
	if (qp->srq)
		return ibdevsim_srq_take(qp->srq, qp->rc_rwqe);
	if (!qp->rq_count)
		return false;
	memcpy(qp->rc_rwqe, ibdevsim_rq_slot(qp, qp->rq_head), qp->rq_stride);
	qp->rq_head = (qp->rq_head + 1) % qp->rq_max;
	qp->rq_count--;
	return true;
}

/*
 * A message that needs a receive begins: take one into @qp->rc_rwqe.
 * Returns AETH_ACK, or the syndrome of an RNR NAK when none is posted.
 */
static u8 rc_begin_recv_locked(struct ibdevsim_qp *qp)
{
	if (!rc_take_recv_locked(qp)) {
		rc_count(qp, IBDEVSIM_RC_SENT_RNR_NAKS);
		return AETH_RNR_NAK | (qp->min_rnr_timer & 31);
	}
	qp->rc_in_send = true;
	qp->rc_rcv_off = 0;
	return AETH_ACK;
}

/*
 * A packet of a SEND (or the last packet of a WRITE with immediate, with
 * @data false) lands in the receive taken at its first packet.  Returns the
 * syndrome to answer with; *@wc is to be posted when *@post.
 */
static u8 rc_recv_send_locked(struct ibdevsim_qp *qp,
			      const struct ibdevsim_pkt *pkt, bool first,
			      bool last, bool data, struct ib_wc *wc,
			      bool *post)
{
	struct ibdevsim_seg dst[IBDEVSIM_MAX_SGE], from;
	u32 len = data ? pkt->len : 0, room = 0, i;
	struct ibdevsim_rwqe *rwqe;
	u8 syn;

	if (first) {
		syn = rc_begin_recv_locked(qp);
		if (syn != AETH_ACK)
			return syn;
	}
	rwqe = qp->rc_rwqe;
	for (i = 0; i < rwqe->num_sge; i++)
		room += rwqe->sge[i].length;
	wc->status = IB_WC_SUCCESS;
	if (room < qp->rc_rcv_off + len) {
		wc->status = IB_WC_LOC_LEN_ERR;
	} else if (len) {
		if (!ibdevsim_sges_resolve(qp, rwqe->sge, rwqe->num_sge,
					   IB_ACCESS_LOCAL_WRITE, dst)) {
			wc->status = IB_WC_LOC_PROT_ERR;
		} else {
			ibdevsim_segs_skip(dst, rwqe->num_sge,
					   qp->rc_rcv_off);
			from = ibdevsim_kseg(pkt->data, len);
			ibdevsim_seg_copy(dst, rwqe->num_sge, &from, 1, len);
		}
	}
	qp->rc_rcv_off += len;
	if (!last && wc->status == IB_WC_SUCCESS)
		return AETH_ACK;
	/* The receive completes: done, or failed on the way. */
	qp->rc_in_send = false;
	wc->wr_id = rwqe->wr_id;
	wc->byte_len = qp->rc_rcv_off;
	*post = true;
	if (wc->status == IB_WC_LOC_LEN_ERR)
		return AETH_NAK_INV_REQ;
	return wc->status == IB_WC_SUCCESS ? AETH_ACK : AETH_NAK_REM_OP;
}

/* A packet of an RDMA WRITE lands where its RETH said. */
static u8 rc_recv_write_locked(struct ibdevsim_qp *qp,
			       const struct ibdevsim_pkt *pkt, bool first,
			       bool last)
{
	const struct ibdevsim_rc_hdr *h = &pkt->rch;
	struct ibdevsim_seg seg, from;

	if (first) {
		qp->rc_in_write = true;
		qp->rc_wr_va = h->va;
		qp->rc_wr_rkey = h->rkey;
		qp->rc_wr_left = h->dma_len;
		qp->rc_wr_len = h->dma_len;
	}
	if (pkt->len > qp->rc_wr_left || (last && pkt->len != qp->rc_wr_left)) {
		qp->rc_in_write = false;
		return AETH_NAK_INV_REQ;
	}
	if (!rc_reth_ok(qp, qp->rc_wr_va, qp->rc_wr_rkey, pkt->len,
			IB_ACCESS_REMOTE_WRITE, &seg)) {
		qp->rc_in_write = false;
		return AETH_NAK_REM_ACCESS;
	}
	if (pkt->len) {
		from = ibdevsim_kseg(pkt->data, pkt->len);
		ibdevsim_seg_copy(&seg, 1, &from, 1, pkt->len);
	}
	qp->rc_wr_va += pkt->len;
	qp->rc_wr_left -= pkt->len;
	if (last)
		qp->rc_in_write = false;
	return AETH_ACK;
}

/*
 * A request packet at the expected PSN: carry it out.  Returns the
 * syndrome to answer with (AETH_ACK when all went well).
 */
static u8 rc_execute_locked(struct ibdevsim_qp *qp,
			    const struct ibdevsim_pkt *pkt, struct ib_wc *wc,
			    bool *post, bool *read)
{
	static const u8 send_first[] = {
		IB_OPCODE_RC_SEND_FIRST, IB_OPCODE_RC_SEND_ONLY,
		IB_OPCODE_RC_SEND_ONLY_WITH_IMMEDIATE,
		IB_OPCODE_RC_SEND_ONLY_WITH_INVALIDATE,
	};
	static const u8 send_last[] = {
		IB_OPCODE_RC_SEND_LAST, IB_OPCODE_RC_SEND_ONLY,
		IB_OPCODE_RC_SEND_LAST_WITH_IMMEDIATE,
		IB_OPCODE_RC_SEND_ONLY_WITH_IMMEDIATE,
		IB_OPCODE_RC_SEND_LAST_WITH_INVALIDATE,
		IB_OPCODE_RC_SEND_ONLY_WITH_INVALIDATE,
	};
	static const u8 write_first[] = {
		IB_OPCODE_RC_RDMA_WRITE_FIRST, IB_OPCODE_RC_RDMA_WRITE_ONLY,
		IB_OPCODE_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE,
	};
	static const u8 write_last[] = {
		IB_OPCODE_RC_RDMA_WRITE_LAST, IB_OPCODE_RC_RDMA_WRITE_ONLY,
		IB_OPCODE_RC_RDMA_WRITE_LAST_WITH_IMMEDIATE,
		IB_OPCODE_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE,
	};
	const struct ibdevsim_rc_hdr *h = &pkt->rch;
	bool first, last, imm;
	struct ibdevsim_seg seg;
	u8 syn;

	/* FIRST and MIDDLE packets carry exactly the path MTU. */
	if (pkt->len > qp->mtu)
		return AETH_NAK_INV_REQ;
	switch (h->opcode) {
	case IB_OPCODE_RC_RDMA_READ_REQUEST:
		if (qp->rc_in_send || qp->rc_in_write ||
		    !qp->max_dest_rd_atomic)
			return AETH_NAK_INV_REQ;
		if (!rc_reth_ok(qp, h->va, h->rkey, h->dma_len,
				IB_ACCESS_REMOTE_READ, &seg))
			return AETH_NAK_REM_ACCESS;
		*read = true;
		return AETH_ACK;
	case IB_OPCODE_RC_SEND_FIRST:
	case IB_OPCODE_RC_SEND_MIDDLE:
	case IB_OPCODE_RC_SEND_LAST:
	case IB_OPCODE_RC_SEND_LAST_WITH_IMMEDIATE:
	case IB_OPCODE_RC_SEND_ONLY:
	case IB_OPCODE_RC_SEND_ONLY_WITH_IMMEDIATE:
	case IB_OPCODE_RC_SEND_LAST_WITH_INVALIDATE:
	case IB_OPCODE_RC_SEND_ONLY_WITH_INVALIDATE:
		first = rc_opcode_in(h->opcode, send_first,
				     ARRAY_SIZE(send_first));
		last = rc_opcode_in(h->opcode, send_last,
				    ARRAY_SIZE(send_last));
		if (first == qp->rc_in_send || qp->rc_in_write ||
		    (!last && pkt->len != qp->mtu))
			return AETH_NAK_INV_REQ;
		wc->opcode = IB_WC_RECV;
		syn = rc_recv_send_locked(qp, pkt, first, last, true, wc,
					  post);
		/* The sender asks to invalidate one of our MRs (IBTA 9.4.6). */
		if (syn == AETH_ACK && *post &&
		    (h->opcode == IB_OPCODE_RC_SEND_LAST_WITH_INVALIDATE ||
		     h->opcode == IB_OPCODE_RC_SEND_ONLY_WITH_INVALIDATE) &&
		    !ibdevsim_fr_inv(qp, h->ieth)) {
			wc->status = IB_WC_REM_INV_REQ_ERR;
			syn = AETH_NAK_INV_REQ;
		}
		return syn;
	case IB_OPCODE_RC_RDMA_WRITE_FIRST:
	case IB_OPCODE_RC_RDMA_WRITE_MIDDLE:
	case IB_OPCODE_RC_RDMA_WRITE_LAST:
	case IB_OPCODE_RC_RDMA_WRITE_LAST_WITH_IMMEDIATE:
	case IB_OPCODE_RC_RDMA_WRITE_ONLY:
	case IB_OPCODE_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE:
		first = rc_opcode_in(h->opcode, write_first,
				     ARRAY_SIZE(write_first));
		last = rc_opcode_in(h->opcode, write_last,
				    ARRAY_SIZE(write_last));
		imm = pkt->has_imm;
		if (first == qp->rc_in_write || qp->rc_in_send ||
		    (!last && pkt->len != qp->mtu))
			return AETH_NAK_INV_REQ;
		/*
		 * The immediate data needs a receive, taken before the data
		 * moves: none, nothing done.  A write that fails leaves it
		 * taken, and the error that follows flushes it.
		 */
		if (imm) {
			syn = rc_begin_recv_locked(qp);
			if (syn != AETH_ACK)
				return syn;
		}
		syn = rc_recv_write_locked(qp, pkt, first, last);
		if (syn != AETH_ACK || !imm)
			return syn;
		wc->opcode = IB_WC_RECV_RDMA_WITH_IMM;
		syn = rc_recv_send_locked(qp, pkt, false, true, false, wc,
					  post);
		wc->byte_len = qp->rc_wr_len;
		return syn;
	default:
		return AETH_NAK_INV_REQ;
	}
}

/*
 * The responder of @qp refused a request with NAK @syn and goes to the
 * error state.  Unless a receive completion with an error already said
 * why (@told), the consumer hears it as hardware tells it, by an
 * affiliated asynchronous event: QP_REQ_ERR for an invalid request,
 * QP_ACCESS_ERR for an access violation, QP_FATAL for anything else.
 */
static void rc_resp_fail(struct ibdevsim_qp *qp, u8 syn, bool told)
{
	ibdevsim_qp_error(qp);
	if (told)
		return;
	if (syn == AETH_NAK_INV_REQ)
		ibdevsim_qp_event(qp, IBDEVSIM_QP_EV_REQ_ERR);
	else if (syn == AETH_NAK_REM_ACCESS)
		ibdevsim_qp_event(qp, IBDEVSIM_QP_EV_ACCESS_ERR);
	else
		ibdevsim_qp_event(qp, IBDEVSIM_QP_EV_RESP_FATAL);
}

/*
 * A request packet reaches the responder: classify its PSN, carry it out
 * if it is the one expected, and answer.
 */
static void rc_resp_recv(struct ibdevsim_qp *qp,
			 const struct ibdevsim_pkt *pkt)
{
	const struct ibdevsim_rc_hdr *h = &pkt->rch;
	struct ib_wc wc = {
		.qp = &qp->ibqp,
		.src_qp = qp->dest_qpn,
		.slid = pkt->slid,
		.sl = pkt->sl,
		.pkey_index = qp->pkey_index,
		.port_num = qp->port,
	};
	bool post = false, read = false, ack = false, fatal = false;
	u8 syn = AETH_ACK;
	unsigned long flags;
	u32 apsn = h->psn;
	int d;

	spin_lock_irqsave(&qp->rq_lock, flags);
	d = ibdevsim_psn_cmp(h->psn, qp->rc_epsn);
	if (d > 0) {
		/* Packets were lost: one NAK per gap asks them again. */
		rc_count(qp, IBDEVSIM_RC_OUT_OF_SEQ);
		if (!qp->rc_nak_sent) {
			qp->rc_nak_sent = true;
			ack = true;
			syn = AETH_NAK_SEQ;
			apsn = qp->rc_epsn;
		}
	} else if (d < 0) {
		/*
		 * A duplicate: its ACK was lost or is late.  A READ is
		 * answered again; anything else acknowledged up to the last
		 * PSN taken.
		 */
		rc_count(qp, IBDEVSIM_RC_DUPLICATES);
		if (h->opcode == IB_OPCODE_RC_RDMA_READ_REQUEST) {
			read = true;
		} else if (h->ack_req) {
			ack = true;
			apsn = ibdevsim_psn_add(qp->rc_epsn, -1);
		}
	} else {
		qp->rc_nak_sent = false;
		syn = rc_execute_locked(qp, pkt, &wc, &post, &read);
		if (read) {
			u32 n = ibdevsim_rc_npkts(h->dma_len, qp->mtu);

			qp->rc_epsn = ibdevsim_psn_add(qp->rc_epsn, n);
		} else if (syn == AETH_ACK) {
			qp->rc_epsn = ibdevsim_psn_add(qp->rc_epsn, 1);
			ack = h->ack_req;
		} else {
			ack = true;
			fatal = AETH_TYPE(syn) != AETH_RNR_NAK;
		}
	}
	spin_unlock_irqrestore(&qp->rq_lock, flags);

	if (post) {
		if (h->opcode == IB_OPCODE_RC_SEND_LAST_WITH_INVALIDATE ||
		    h->opcode == IB_OPCODE_RC_SEND_ONLY_WITH_INVALIDATE) {
			wc.wc_flags |= IB_WC_WITH_INVALIDATE;
			wc.ex.invalidate_rkey = h->ieth;
		} else if (pkt->has_imm) {
			wc.wc_flags |= IB_WC_WITH_IMM;
			wc.ex.imm_data = pkt->imm;
		}
		ibdevsim_cq_post(to_cq(qp->ibqp.recv_cq), &wc, h->se);
	}
	if (read && !rc_read_respond(qp, h)) {
		syn = AETH_NAK_REM_ACCESS;
		fatal = true;
	}
	if (ack)
		rc_send_ack(qp, syn, apsn);
	if (fatal)
		rc_resp_fail(qp, syn, post && wc.status != IB_WC_SUCCESS);
}

/**
 * ibdevsim_rc_recv() - an RC packet lands at the QP it names
 * @qp: the QP
 * @pkt: the packet
 *
 * Requests go to the responder side, ACKs and READ responses to the
 * requester side.  A QP that is not an RC QP connected to the sender, or
 * not in a state that takes the packet, ignores it (the sender's retries
 * run out).  The first request to reach a QP in RTR raises
 * IB_EVENT_COMM_EST.
 *
 * Context: the receive work of @qp's port, in an RCU read section, bottom
 * halves off; no lock held.
 */
void ibdevsim_rc_recv(struct ibdevsim_qp *qp, const struct ibdevsim_pkt *pkt)
{
	enum ib_qp_state state = READ_ONCE(qp->state);
	u8 op = pkt->rch.opcode;
	bool first = false, kick, failed = false;
	unsigned long flags;

	/* A packet off a remote cable does not say; hardware cannot check. */
	if (qp->ibqp.qp_type != IB_QPT_RC ||
	    (pkt->src_qpn != IBDEVSIM_QPN_UNKNOWN &&
	     qp->dest_qpn != pkt->src_qpn))
		return;
	if (op == IB_OPCODE_RC_ACKNOWLEDGE ||
	    (op >= IB_OPCODE_RC_RDMA_READ_RESPONSE_FIRST &&
	     op <= IB_OPCODE_RC_RDMA_READ_RESPONSE_ONLY)) {
		spin_lock_irqsave(&qp->sq_lock, flags);
		kick = ibdevsim_rc_req_recv_locked(qp, pkt, &failed);
		spin_unlock_irqrestore(&qp->sq_lock, flags);
		if (failed)
			ibdevsim_qp_error(qp);
		else if (kick)
			queue_work(ibdevsim_wq, &qp->send_work);
		rc_reap(qp);
		return;
	}
	if (state != IB_QPS_RTR && state != IB_QPS_RTS && state != IB_QPS_SQD)
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
	rc_resp_recv(qp, pkt);
}
