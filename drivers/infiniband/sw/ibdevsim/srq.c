// SPDX-License-Identifier: GPL-2.0
/*
 * ibdevsim: shared receive queues.
 *
 * An SRQ is a ring of posted receives that the RC QPs created on it take
 * from, in posting order, whichever QP a SEND arrives on.  A QP takes a
 * receive at the first packet of a message, so a SEND spread over many
 * packets holds its receive alone.  ib_modify_srq() with IB_SRQ_LIMIT
 * arms the limit: when a take leaves fewer receives than the limit,
 * IB_EVENT_SRQ_LIMIT_REACHED is raised once, from a work item, as from a
 * hardware event queue.  A QP of an SRQ that goes to the error state
 * raises IB_EVENT_QP_LAST_WQE_REACHED (rc.c, verbs.c), which
 * ib_drain_qp() waits for.  Kernel users only; the SRQ cannot be
 * resized.
 */

#include <linux/slab.h>

#include "ibdevsim.h"

static struct ibdevsim_rwqe *ibdevsim_srq_slot(struct ibdevsim_srq *srq,
					       u32 i)
{
	return srq->rq + (size_t)(i % srq->max) * srq->stride;
}

static void ibdevsim_srq_event_work(struct work_struct *work)
{
	struct ibdevsim_srq *srq = container_of(work, struct ibdevsim_srq,
						event_work);
	struct ib_srq *ibsrq = &srq->ibsrq;
	struct ib_event ev = {
		.device = ibsrq->device,
		.element.srq = ibsrq,
		.event = IB_EVENT_SRQ_LIMIT_REACHED,
	};

	if (ibsrq->event_handler)
		ibsrq->event_handler(&ev, ibsrq->srq_context);
}

/**
 * ibdevsim_create_srq() - create a shared receive queue
 * @ibsrq: the core's SRQ, to fill in
 * @init: the caller's attributes; max_wr and max_sge are set to what the
 *	  SRQ has
 * @udata: user data: user SRQs are not supported
 *
 * Return: 0, -EOPNOTSUPP for a user or non-basic SRQ, -EINVAL for sizes
 * out of range, -ENOMEM.
 */
int ibdevsim_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
			struct ib_udata *udata)
{
	struct ibdevsim_srq *srq = to_srq(ibsrq);
	struct ib_srq_attr *attr = &init->attr;

	if (udata || init->srq_type != IB_SRQT_BASIC)
		return -EOPNOTSUPP;
	if (!attr->max_wr || attr->max_wr > IBDEVSIM_MAX_WR ||
	    attr->max_sge > IBDEVSIM_MAX_SGE)
		return -EINVAL;
	spin_lock_init(&srq->lock);
	INIT_WORK(&srq->event_work, ibdevsim_srq_event_work);
	srq->max = attr->max_wr;
	srq->max_sge = max_t(u32, attr->max_sge, 1);
	srq->stride = struct_size_t(struct ibdevsim_rwqe, sge, srq->max_sge);
	srq->rq = kvcalloc(srq->max, srq->stride, GFP_KERNEL);
	if (!srq->rq)
		return -ENOMEM;
	attr->max_sge = srq->max_sge;
	return 0;
}

/**
 * ibdevsim_modify_srq() - set an SRQ's limit
 * @ibsrq: the SRQ
 * @attr: the new attributes
 * @mask: IB_SRQ_LIMIT; IB_SRQ_MAX_WR (resizing) is refused
 * @udata: unused
 *
 * A non-zero limit arms the limit event; 0 disarms it.
 *
 * Return: 0 or -EINVAL.
 */
int ibdevsim_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
			enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct ibdevsim_srq *srq = to_srq(ibsrq);
	unsigned long flags;

	if (mask & IB_SRQ_MAX_WR)
		return -EINVAL;
	if (!(mask & IB_SRQ_LIMIT))
		return 0;
	if (attr->srq_limit > srq->max)
		return -EINVAL;
	spin_lock_irqsave(&srq->lock, flags);
	srq->limit = attr->srq_limit;
	srq->armed = srq->limit;
	spin_unlock_irqrestore(&srq->lock, flags);
	return 0;
}

/**
 * ibdevsim_query_srq() - an SRQ's attributes
 * @ibsrq: the SRQ
 * @attr: set to its size, SGEs and limit
 *
 * Return: 0.
 */
int ibdevsim_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct ibdevsim_srq *srq = to_srq(ibsrq);

	attr->max_wr = srq->max;
	attr->max_sge = srq->max_sge;
	attr->srq_limit = READ_ONCE(srq->limit);
	return 0;
}

/**
 * ibdevsim_destroy_srq() - free an SRQ
 * @ibsrq: the SRQ, no QP on it any more (the core counts them)
 * @udata: unused
 *
 * Return: 0.
 */
int ibdevsim_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct ibdevsim_srq *srq = to_srq(ibsrq);

	cancel_work_sync(&srq->event_work);
	kvfree(srq->rq);
	return 0;
}

/**
 * ibdevsim_post_srq_recv() - post receives to an SRQ
 * @ibsrq: the SRQ
 * @wr: the chain of receives
 * @bad: set to the first one not posted
 *
 * Return: 0, -EINVAL for too many SGEs, -ENOMEM when the ring is full.
 */
int ibdevsim_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			   const struct ib_recv_wr **bad)
{
	struct ibdevsim_srq *srq = to_srq(ibsrq);
	struct ibdevsim_rwqe *rwqe;
	unsigned long flags;
	int ret = 0;

	spin_lock_irqsave(&srq->lock, flags);
	for (; wr; wr = wr->next) {
		if (wr->num_sge > srq->max_sge) {
			ret = -EINVAL;
			break;
		}
		if (srq->count >= srq->max) {
			ret = -ENOMEM;
			break;
		}
		rwqe = ibdevsim_srq_slot(srq, srq->head + srq->count);
		rwqe->wr_id = wr->wr_id;
		rwqe->num_sge = wr->num_sge;
		memcpy(rwqe->sge, wr->sg_list,
		       wr->num_sge * sizeof(*wr->sg_list));
		srq->count++;
	}
	spin_unlock_irqrestore(&srq->lock, flags);
	if (ret)
		*bad = wr;
	return ret;
}

/**
 * ibdevsim_srq_take() - take the oldest receive posted to an SRQ
 * @srq: the SRQ
 * @out: the receive is copied here (room for @srq->max_sge SGEs)
 *
 * Context: any; takes @srq->lock.
 * Return: false when none is posted.
 */
bool ibdevsim_srq_take(struct ibdevsim_srq *srq, struct ibdevsim_rwqe *out)
{
	unsigned long flags;
	bool event = false;

	spin_lock_irqsave(&srq->lock, flags);
	if (!srq->count) {
		spin_unlock_irqrestore(&srq->lock, flags);
		return false;
	}
	memcpy(out, ibdevsim_srq_slot(srq, srq->head), srq->stride);
	srq->head = (srq->head + 1) % srq->max;
	srq->count--;
	if (srq->armed && srq->count < srq->limit) {
		srq->armed = false;
		event = true;
	}
	spin_unlock_irqrestore(&srq->lock, flags);
	if (event)
		queue_work(ibdevsim_wq, &srq->event_work);
	return true;
}
