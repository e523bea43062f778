// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Per-port MAD resources: QP0 and QP1, their shared CQ, the receive ring,
 * the send queue and its overflow list, and the port's workqueue; set up
 * and torn down by the "mad" ib_client, which device.c registers through
 * ib_mad_init().
 */

#include <linux/debugfs.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <kunit/static_stub.h>
#include <kunit/visibility.h>
#include <rdma/ib_cache.h>

#include "core_priv.h"
#include "mad_priv.h"

#define CREATE_TRACE_POINTS
#include <trace/events/ib_mad.h>

static int ib_mad_sendq_size = IB_MAD_QP_SEND_SIZE;
static int ib_mad_recvq_size = IB_MAD_QP_RECV_SIZE;
module_param_named(send_queue_size, ib_mad_sendq_size, int, 0444);
MODULE_PARM_DESC(send_queue_size, "Size of send queue in number of work requests");
module_param_named(recv_queue_size, ib_mad_recvq_size, int, 0444);
MODULE_PARM_DESC(recv_queue_size, "Size of receive queue in number of work requests");

/**
 * struct ib_mad_device - the MAD client's data for one device
 * @num_ports: entries in @ports (highest port number + 1)
 * @ports: per-port state, indexed by port number; NULL for ports without
 *	MAD support
 */
struct ib_mad_device {
	u32 num_ports;
	struct ib_mad_port_private *ports[] __counted_by(num_ports);
};

static struct ib_client ib_mad_client;
static struct dentry *ib_mad_debugfs_root;

/**
 * ib_mad_port_get() - MAD state of a port
 * @device: the device
 * @port_num: the port
 *
 * Context: any; valid while the MAD client is registered with @device.
 * Return: the port, or NULL if it has no MAD support.
 */
struct ib_mad_port_private *ib_mad_port_get(struct ib_device *device,
					    u32 port_num)
{
	struct ib_mad_device *mdev = ib_get_client_data(device, &ib_mad_client);

	if (!mdev || !rdma_is_port_valid(device, port_num))
		return NULL;
	return mdev->ports[port_num];
}

/* Receive buffers ------------------------------------------------------ */

/**
 * ib_mad_recv_priv_alloc() - allocate a receive buffer
 * @mad_size: room for the MAD (IB or OPA size)
 * @gfp: allocation flags
 *
 * Return: the zeroed buffer, or NULL.
 */
struct ib_mad_recv_priv *ib_mad_recv_priv_alloc(size_t mad_size, gfp_t gfp)
{
	struct ib_mad_recv_priv *priv;

	priv = kzalloc(struct_size(priv, mad, mad_size), gfp);
	if (priv)
		priv->mad_size = mad_size;
	return priv;
}
EXPORT_SYMBOL_IF_KUNIT(ib_mad_recv_priv_alloc);

/**
 * ib_mad_recv_priv_free() - free one receive buffer
 * @priv: the buffer (not linked to other segments)
 */
void ib_mad_recv_priv_free(struct ib_mad_recv_priv *priv)
{
	kfree(priv);
}
EXPORT_SYMBOL_IF_KUNIT(ib_mad_recv_priv_free);

static size_t ib_mad_recv_dma_len(const struct ib_mad_recv_priv *priv)
{
	return sizeof(struct ib_grh) + priv->mad_size;
}

/**
 * ib_free_recv_mad() - free a received MAD and all of its segments
 * @mad_recv_wc: what the receive handler got
 *
 * Context: any.
 */
void ib_free_recv_mad(struct ib_mad_recv_wc *mad_recv_wc)
{
	struct ib_mad_recv_buf *buf, *tmp;
	struct ib_mad_recv_wc *wc;
	LIST_HEAD(segments);

	/* The list head lives in the first segment: take it out first. */
	list_splice_init(&mad_recv_wc->rmpp_list, &segments);
	list_for_each_entry_safe(buf, tmp, &segments, list) {
		wc = container_of(buf, struct ib_mad_recv_wc, recv_buf);
		ib_mad_recv_priv_free(container_of(wc, struct ib_mad_recv_priv,
						   recv_wc));
	}
}
EXPORT_SYMBOL(ib_free_recv_mad);

/*
 * Receive buffers are posted in batches: the ring is refilled once it is
 * this many buffers short of full (an eighth of a smaller ring), with
 * one chain of work requests, one lock round and one driver call for the
 * batch instead of one of each per MAD received.
 */
#define IB_MAD_RECV_BATCH	16

static int ib_mad_recv_batch(const struct ib_mad_queue *q)
{
	return clamp(q->max_active / 8, 1, IB_MAD_RECV_BATCH);
}

/* A new receive buffer of @qp_info, mapped, its work request set up. */
static struct ib_mad_recv_priv *ib_mad_recv_prepare(struct ib_mad_qp_info *qp_info,
						    gfp_t gfp)
{
	struct ib_mad_port_private *port = qp_info->port_priv;
	struct ib_mad_recv_priv *priv;

	priv = ib_mad_recv_priv_alloc(rdma_max_mad_size(port->device,
							port->port_num), gfp);
	if (!priv)
		return NULL;
	priv->mad_list.mad_queue = &qp_info->recv_queue;
	priv->mad_list.cqe.done = ib_mad_recv_done;
	priv->mapping = ib_dma_map_single(port->device, &priv->grh,
					  ib_mad_recv_dma_len(priv),
					  DMA_FROM_DEVICE);
	if (unlikely(ib_dma_mapping_error(port->device, priv->mapping))) {
		ib_mad_recv_priv_free(priv);
		return NULL;
	}
	priv->post.sge.addr = priv->mapping;
	priv->post.sge.length = ib_mad_recv_dma_len(priv);
	priv->post.sge.lkey = port->pd->local_dma_lkey;
	priv->post.wr.next = NULL;
	priv->post.wr.wr_cqe = &priv->mad_list.cqe;
	priv->post.wr.sg_list = &priv->post.sge;
	priv->post.wr.num_sge = 1;
	return priv;
}

/* Undo ib_mad_recv_prepare() for a buffer that was never posted. */
static void ib_mad_recv_unprepare(struct ib_mad_port_private *port,
				  struct ib_mad_recv_priv *priv)
{
	ib_dma_unmap_single(port->device, priv->mapping,
			    ib_mad_recv_dma_len(priv), DMA_FROM_DEVICE);
	ib_mad_recv_priv_free(priv);
}

/*
 * Post the buffers on @batch (linked by mad_list.list), as many as the
 * ring has room for, as one chain; those posted move onto the ring, the
 * others stay on @batch. recv_queue.lock held.
 */
static int ib_mad_post_recv_batch_locked(struct ib_mad_qp_info *qp_info,
					 struct list_head *batch)
{
	struct ib_mad_queue *q = &qp_info->recv_queue;
	struct ib_mad_recv_priv *priv, *next, *last = NULL;
	const struct ib_recv_wr *bad_wr = NULL;
	int room = q->max_active - q->count;
	int n = 0, ret;

	lockdep_assert_held(&q->lock);
	list_for_each_entry(priv, batch, mad_list.list) {
		if (n == room)
			break;
		priv->post.wr.next = NULL;
		if (last)
			last->post.wr.next = &priv->post.wr;
		last = priv;
		n++;
	}
	if (!last)
		return 0;
	priv = list_first_entry(batch, struct ib_mad_recv_priv, mad_list.list);
	ret = ib_post_recv(qp_info->qp, &priv->post.wr, &bad_wr);
	/* Every buffer in front of the one the driver refused was posted. */
	list_for_each_entry_safe(priv, next, batch, mad_list.list) {
		if (!n || (ret && &priv->post.wr == bad_wr))
			break;
		list_move_tail(&priv->mad_list.list, &q->list);
		q->count++;
		n--;
	}
	return ret;
}

/**
 * ib_mad_fill_recv_ring() - post receive buffers until the ring is full
 * @qp_info: the QP
 * @gfp: allocation flags
 * @min: post nothing unless at least this many buffers are missing
 *
 * The missing buffers are allocated and mapped first, then posted as one
 * chain under the queue lock. Buffers the ring no longer has room for
 * (it is being closed) or that the QP refuses are freed again.
 *
 * Context: process context unless @gfp is atomic.
 * Return: 0, or a negative errno if the ring could not be filled.
 */
static int ib_mad_fill_recv_ring(struct ib_mad_qp_info *qp_info, gfp_t gfp,
				 int min)
{
	struct ib_mad_port_private *port = qp_info->port_priv;
	struct ib_mad_queue *q = &qp_info->recv_queue;
	int missing = q->max_active - READ_ONCE(q->count);
	struct ib_mad_recv_priv *priv, *next;
	unsigned long flags;
	LIST_HEAD(batch);
	int ret = 0, err;

	if (missing < max(min, 1))
		return 0;
	while (missing--) {
		priv = ib_mad_recv_prepare(qp_info, gfp);
		if (!priv) {
			ret = -ENOMEM;
			break;
		}
		list_add_tail(&priv->mad_list.list, &batch);
	}
	if (list_empty(&batch))
		return ret;

	spin_lock_irqsave(&q->lock, flags);
	err = port->closing ? 0 : ib_mad_post_recv_batch_locked(qp_info, &batch);
	spin_unlock_irqrestore(&q->lock, flags);

	list_for_each_entry_safe(priv, next, &batch, mad_list.list) {
		list_del(&priv->mad_list.list);
		ib_mad_recv_unprepare(port, priv);
	}
	return err ?: ret;
}

/**
 * ib_mad_recv_take() - take a completed receive buffer off the ring
 * @priv: the buffer of a receive completion
 *
 * Unlinks and unmaps the buffer; the caller refills the ring with
 * ib_mad_recv_refill() once the MAD was handled, so that allocating and
 * posting a new buffer does not delay its delivery.
 *
 * Context: CQ work.
 */
void ib_mad_recv_take(struct ib_mad_recv_priv *priv)
{
	struct ib_mad_queue *q = priv->mad_list.mad_queue;
	struct ib_mad_port_private *port = q->qp_info->port_priv;
	unsigned long flags;

	spin_lock_irqsave(&q->lock, flags);
	list_del(&priv->mad_list.list);
	q->count--;
	spin_unlock_irqrestore(&q->lock, flags);
	ib_dma_unmap_single(port->device, priv->mapping,
			    ib_mad_recv_dma_len(priv), DMA_FROM_DEVICE);
}

/**
 * ib_mad_recv_refill() - post receive buffers for those taken off the ring
 * @qp_info: the QP
 *
 * Posts nothing until a batch is missing (IB_MAD_RECV_BATCH, or an eighth
 * of a small ring), then the whole batch at once.
 *
 * Context: CQ work.
 */
void ib_mad_recv_refill(struct ib_mad_qp_info *qp_info)
{
	struct ib_mad_port_private *port = qp_info->port_priv;

	if (ib_mad_fill_recv_ring(qp_info, GFP_KERNEL,
				  ib_mad_recv_batch(&qp_info->recv_queue)))
		dev_warn_ratelimited(&port->device->dev,
				     "MAD port %u: receive ring not refilled\n",
				     port->port_num);
}
EXPORT_SYMBOL_IF_KUNIT(ib_mad_recv_refill);

static void ib_mad_drain_recv_ring(struct ib_mad_qp_info *qp_info)
{
	struct ib_mad_port_private *port = qp_info->port_priv;
	struct ib_mad_recv_priv *priv, *tmp;

	list_for_each_entry_safe(priv, tmp, &qp_info->recv_queue.list,
				 mad_list.list) {
		list_del(&priv->mad_list.list);
		ib_dma_unmap_single(port->device, priv->mapping,
				    ib_mad_recv_dma_len(priv), DMA_FROM_DEVICE);
		ib_mad_recv_priv_free(priv);
	}
	qp_info->recv_queue.count = 0;
}

/* Send queue ----------------------------------------------------------- */

static void ib_mad_send_cqe_done(struct ib_cq *cq, struct ib_wc *wc);

/* Why a work request is handed to the QP: each has its trace point. */
enum ib_mad_post_cause {
	IB_MAD_POST_PROMOTED,	/* off the overflow list, a slot freed */
	IB_MAD_POST_RECOVERED,	/* flushed by a send error recovery */
};

/* Hand @wr to the QP of @qp_info; send queue lock held. */
static int ib_mad_qp_post_locked(struct ib_mad_qp_info *qp_info,
				 struct ib_mad_send_wr_private *wr,
				 enum ib_mad_post_cause cause)
{
	lockdep_assert_held(&qp_info->send_queue.lock);
	switch (cause) {
	case IB_MAD_POST_PROMOTED:
		trace_ib_mad_send_done_resend(wr, qp_info);
		break;
	case IB_MAD_POST_RECOVERED:
		trace_ib_mad_error_handler(wr, qp_info);
		break;
	}
	return ib_post_send(qp_info->qp, &wr->send_wr.wr, NULL);
}

static int ib_mad_send_release_locked(struct ib_mad_qp_info *qp_info,
				      struct ib_mad_send_wr_private *wr,
				      struct list_head *refused);

/*
 * The QP refused @wr, which held a slot of its send queue: the slot goes
 * to the oldest send waiting, if any came meanwhile. Sends the QP refuses
 * in turn are completed by the QP's refused work, as the caller may hold
 * an agent lock (ib_mad_send_post_locked()).
 */
static void ib_mad_qp_post_undo(struct ib_mad_qp_info *qp_info,
				struct ib_mad_send_wr_private *wr)
{
	struct ib_mad_queue *q = &qp_info->send_queue;
	unsigned long flags;
	LIST_HEAD(refused);

	spin_lock_irqsave(&q->lock, flags);
	ib_mad_send_release_locked(qp_info, wr, &refused);
	if (!list_empty(&refused)) {
		list_splice_tail(&refused, &qp_info->refused_list);
		queue_work(qp_info->port_priv->wq, &qp_info->refused_work);
	}
	spin_unlock_irqrestore(&q->lock, flags);
}

/**
 * ib_mad_qp_post_send() - hand a send work request to its QP
 * @wr: the send, DMA-mapped
 *
 * When the QP's send queue is full the request waits on the overflow list
 * and goes out when an earlier one completes. Otherwise it takes its slot
 * under the queue lock and is posted after the lock is dropped, so that
 * the driver's post (which may copy the MAD and wake its own send work)
 * runs with interrupts on and holds up neither the completions nor the
 * other senders of the QP. An RCU read section covers that post: the port
 * waits for it before it destroys the QP (ib_mad_port_close()).
 *
 * Context: any, with or without the agent lock (see ib_mad_send_one()).
 * Return: 0, -ENODEV if the port is going away, or the error of
 * ib_post_send().
 */
int ib_mad_qp_post_send(struct ib_mad_send_wr_private *wr)
{
	struct ib_mad_qp_info *qp_info = wr->mad_agent_priv->qp_info;
	struct ib_mad_port_private *port = qp_info->port_priv;
	struct ib_mad_queue *q = &qp_info->send_queue;
	unsigned long flags;
	int ret;

	KUNIT_STATIC_STUB_REDIRECT(ib_mad_qp_post_send, wr);
	wr->mad_list.mad_queue = q;
	wr->mad_list.cqe.done = ib_mad_send_cqe_done;
	wr->send_wr.wr.wr_cqe = &wr->mad_list.cqe;
	wr->send_wr.wr.next = NULL;

	spin_lock_irqsave(&q->lock, flags);
	if (port->closing) {
		spin_unlock_irqrestore(&q->lock, flags);
		return -ENODEV;
	}
	wr->repost_on_flush = false;
	if (q->count++ >= q->max_active) {
		list_add_tail(&wr->mad_list.list, &qp_info->overflow_list);
		spin_unlock_irqrestore(&q->lock, flags);
		ib_mad_stat_inc(port, IB_MAD_STAT_SENT);
		return 0;
	}
	list_add_tail(&wr->mad_list.list, &q->list);
	trace_ib_mad_ib_send_mad(wr, qp_info);
	rcu_read_lock();
	spin_unlock_irqrestore(&q->lock, flags);

	/* Once posted, its completion may free @wr on another CPU. */
	ret = ib_post_send(qp_info->qp, &wr->send_wr.wr, NULL);
	if (unlikely(ret))
		ib_mad_qp_post_undo(qp_info, wr);
	rcu_read_unlock();
	if (!ret)
		ib_mad_stat_inc(port, IB_MAD_STAT_SENT);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(ib_mad_qp_post_send);

/*
 * Send errors ------------------------------------------------------------
 *
 * A send that fails with anything but a flush moves the QP to SQE, which
 * flushes every work request behind it. The failed send is completed with
 * its status; the QP is told to go back to RTS and, if it does, the
 * requests it holds are flagged: each one's flush is then not a failure
 * but the cue to post it again. A flush of an unflagged request (or one
 * whose new post fails) completes it with the flush status.
 */

/* SQE -> RTS, then flag what the QP holds; CQ work, no lock held. */
static void ib_mad_send_rewind(struct ib_mad_qp_info *qp_info)
{
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_RTS,
		.cur_qp_state = IB_QPS_SQE,
	};
	struct ib_mad_send_wr_private *wr;
	unsigned long flags;
	int err;

	err = ib_modify_qp(qp_info->qp, &attr, IB_QP_STATE | IB_QP_CUR_STATE);
	if (err) {
		dev_err(&qp_info->port_priv->device->dev,
			"MAD QP%u: cannot return to RTS after a send error: %d\n",
			qp_info->qp_num, err);
		return;
	}
	spin_lock_irqsave(&qp_info->send_queue.lock, flags);
	list_for_each_entry(wr, &qp_info->send_queue.list, mad_list.list)
		wr->repost_on_flush = true;
	spin_unlock_irqrestore(&qp_info->send_queue.lock, flags);
}

/**
 * ib_mad_send_cqe_absorbed() - apply the error rules to a send completion
 * @qp_info: the QP @wr was posted on
 * @wr: the send work request that completed
 * @status: its completion status
 *
 * Context: CQ work, no lock held.
 * Return: true if the completion is absorbed (@wr, flushed by a recovery,
 * is on the QP again), false if it is to be completed with @status.
 */
static bool ib_mad_send_cqe_absorbed(struct ib_mad_qp_info *qp_info,
				     struct ib_mad_send_wr_private *wr,
				     enum ib_wc_status status)
{
	struct ib_mad_port_private *port = qp_info->port_priv;
	unsigned long flags;
	bool absorbed;

	if (status == IB_WC_SUCCESS)
		return false;
	if (status != IB_WC_WR_FLUSH_ERR) {
		if (!READ_ONCE(port->closing))
			ib_mad_send_rewind(qp_info);
		ib_mad_stat_inc(port, IB_MAD_STAT_SEND_ERR);
		return false;
	}
	/*
	 * The flag is spent either way, before the post (whose trace event
	 * shows it, as upstream's does): a second flush is final.
	 */
	spin_lock_irqsave(&qp_info->send_queue.lock, flags);
	absorbed = wr->repost_on_flush && !port->closing;
	wr->repost_on_flush = false;
	if (absorbed)
		absorbed = !ib_mad_qp_post_locked(qp_info, wr,
						  IB_MAD_POST_RECOVERED);
	spin_unlock_irqrestore(&qp_info->send_queue.lock, flags);
	if (!absorbed)
		ib_mad_stat_inc(port, IB_MAD_STAT_SEND_ERR);
	return absorbed;
}

/* Completions and the overflow list ------------------------------------- */

static void ib_mad_send_unmap(struct ib_device *dev,
			      struct ib_mad_send_wr_private *wr)
{
	ib_dma_unmap_single(dev, wr->header_mapping, wr->sg_list[0].length,
			    DMA_TO_DEVICE);
	ib_dma_unmap_single(dev, wr->payload_mapping, wr->sg_list[1].length,
			    DMA_TO_DEVICE);
}

/*
 * Take @wr off the QP's send queue; send queue lock held. @q->count
 * counts the requests on the QP and on the overflow list alike, so the
 * overflow list is not empty exactly while count > max_active. The slot
 * @wr frees goes to the oldest waiting request, posted here under the
 * queue lock so that nothing overtakes it; one the QP refuses frees the
 * slot again for the next and moves to @refused, for the caller to
 * complete (in order) where no MAD lock is held; on a closing port every
 * waiting request is refused with -ENODEV. Returns 0, or the error of the
 * last post the QP refused.
 */
static int ib_mad_send_release_locked(struct ib_mad_qp_info *qp_info,
				      struct ib_mad_send_wr_private *wr,
				      struct list_head *refused)
{
	struct ib_mad_queue *q = &qp_info->send_queue;
	struct ib_mad_send_wr_private *next;
	int err, refusal = 0;

	lockdep_assert_held(&q->lock);
	list_del(&wr->mad_list.list);
	while (--q->count >= q->max_active) {
		next = list_first_entry_or_null(&qp_info->overflow_list,
						struct ib_mad_send_wr_private,
						mad_list.list);
		if (!next)
			break;
		/* A closing port's QP may be gone: it refuses them all. */
		err = qp_info->port_priv->closing ? -ENODEV :
		      ib_mad_qp_post_locked(qp_info, next,
					    IB_MAD_POST_PROMOTED);
		list_move_tail(&next->mad_list.list, err ? refused : &q->list);
		if (!err)
			break;
		refusal = err;
	}
	return refusal;
}

/**
 * ib_mad_send_retire() - take a completed request off its QP's send queue
 * @qp_info: the QP
 * @wr: the request whose completion arrived
 * @refused: gets the requests of the overflow list the QP refused
 *
 * Unmaps @wr and releases its slot (ib_mad_send_release_locked()).
 *
 * Context: CQ work, no lock held.
 * Return: 0, or the error of the last post the QP refused.
 */
static int ib_mad_send_retire(struct ib_mad_qp_info *qp_info,
			      struct ib_mad_send_wr_private *wr,
			      struct list_head *refused)
{
	struct ib_mad_queue *q = &qp_info->send_queue;
	unsigned long flags;
	int err;

	ib_mad_send_unmap(qp_info->port_priv->device, wr);
	spin_lock_irqsave(&q->lock, flags);
	err = ib_mad_send_release_locked(qp_info, wr, refused);
	spin_unlock_irqrestore(&q->lock, flags);
	return err;
}

/* Complete, in order, sends the QP refused when they left the overflow list. */
static void ib_mad_send_complete_refused(struct ib_device *dev,
					 struct list_head *refused)
{
	const struct ib_wc refused_wc = { .status = IB_WC_LOC_QP_OP_ERR };
	struct ib_mad_send_wr_private *wr;

	while ((wr = list_first_entry_or_null(refused,
					      struct ib_mad_send_wr_private,
					      mad_list.list))) {
		list_del(&wr->mad_list.list);
		ib_mad_send_unmap(dev, wr);
		ib_mad_send_wc_done(wr, &refused_wc);
	}
}

/**
 * ib_mad_send_refused_work() - the refused work of a MAD QP
 * @work: &ib_mad_qp_info.refused_work
 *
 * Completes the sends of ib_mad_qp_info.refused_list, see
 * ib_mad_qp_post_undo().
 *
 * Context: the port's workqueue.
 */
void ib_mad_send_refused_work(struct work_struct *work)
{
	struct ib_mad_qp_info *qp_info =
		container_of(work, struct ib_mad_qp_info, refused_work);
	unsigned long flags;
	LIST_HEAD(refused);

	spin_lock_irqsave(&qp_info->send_queue.lock, flags);
	list_splice_init(&qp_info->refused_list, &refused);
	spin_unlock_irqrestore(&qp_info->send_queue.lock, flags);
	ib_mad_send_complete_refused(qp_info->port_priv->device, &refused);
}
EXPORT_SYMBOL_IF_KUNIT(ib_mad_send_refused_work);

/**
 * ib_mad_send_cqe_done() - a send work request of a MAD QP completed
 * @cq: the port's CQ
 * @wc: the completion
 *
 * Unless the error rules absorb it, the request leaves the send queue, its
 * slot goes to the overflow list, and the send's owner learns @wc's
 * status; sends taken off the overflow list that the QP refused follow,
 * completed with IB_WC_LOC_QP_OP_ERR.
 *
 * Context: CQ work (IB_POLL_UNBOUND_WORKQUEUE), no lock held.
 */
static void ib_mad_send_cqe_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ib_mad_send_wr_private *wr =
		container_of(wc->wr_cqe, struct ib_mad_send_wr_private,
			     mad_list.cqe);
	struct ib_mad_qp_info *qp_info = wr->mad_agent_priv->qp_info;
	struct ib_device *dev = qp_info->port_priv->device;
	LIST_HEAD(refused);
	int err;

	if (ib_mad_send_cqe_absorbed(qp_info, wr, wc->status))
		return;
	trace_ib_mad_send_done_agent(wr->mad_agent_priv);
	trace_ib_mad_send_done_handler(wr, wc);
	err = ib_mad_send_retire(qp_info, wr, &refused);
	ib_mad_send_wc_done(wr, wc);
	if (err)
		dev_err_ratelimited(&dev->dev,
				    "MAD: posting a queued send failed: %d\n",
				    err);

	/* Completed in the order they were queued, after @wr. */
	ib_mad_send_complete_refused(dev, &refused);
}

/* Port setup ------------------------------------------------------------ */

static void ib_mad_qp_event(struct ib_event *event, void *context)
{
	struct ib_mad_qp_info *qp_info = context;

	dev_err(&qp_info->port_priv->device->dev,
		"MAD QP%u: fatal event %d\n", qp_info->qp_num, event->event);
}

/*
 * The send and receive queue locks of a QP nest (send, then receive) in
 * ib_mad_port_mark_closing(); each kind gets its own lockdep class so the
 * nesting is not mistaken for recursion.
 */
static struct lock_class_key ib_mad_send_queue_key;
static struct lock_class_key ib_mad_recv_queue_key;

static void ib_mad_init_queue(struct ib_mad_qp_info *qp_info,
			      struct ib_mad_queue *q, int size)
{
	spin_lock_init(&q->lock);
	lockdep_set_class(&q->lock, q == &qp_info->send_queue ?
			  &ib_mad_send_queue_key : &ib_mad_recv_queue_key);
	INIT_LIST_HEAD(&q->list);
	q->count = 0;
	q->max_active = size;
	q->qp_info = qp_info;
}

static int ib_mad_create_qp(struct ib_mad_port_private *port, int index,
			    enum ib_qp_type type)
{
	struct ib_mad_qp_info *qp_info = &port->qp_info[index];
	struct ib_qp_init_attr init = {
		.send_cq = port->cq,
		.recv_cq = port->cq,
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.cap = {
			.max_send_wr = ib_mad_sendq_size,
			.max_recv_wr = ib_mad_recvq_size,
			.max_send_sge = IB_MAD_SEND_REQ_MAX_SG,
			.max_recv_sge = IB_MAD_RECV_REQ_MAX_SG,
		},
		.qp_type = type,
		.port_num = port->port_num,
		.qp_context = qp_info,
		.event_handler = ib_mad_qp_event,
	};
	struct ib_qp *qp;

	qp = ib_create_qp(port->pd, &init);
	if (IS_ERR(qp)) {
		dev_err(&port->device->dev, "MAD: cannot create QP%d: %ld\n",
			index, PTR_ERR(qp));
		return PTR_ERR(qp);
	}
	qp_info->qp = qp;
	return 0;
}

/* Reset -> Init -> RTR -> RTS, as a special QP needs. */
static int ib_mad_qp_to_rts(struct ib_mad_qp_info *qp_info, u16 pkey_index)
{
	struct ib_qp *qp = qp_info->qp;
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_INIT,
		.pkey_index = pkey_index,
		.qkey = qp->qp_num == 0 ? 0 : IB_QP1_QKEY,
	};
	int ret;

	ret = ib_modify_qp(qp, &attr,
			   IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_QKEY);
	if (ret)
		return ret;
	attr.qp_state = IB_QPS_RTR;
	ret = ib_modify_qp(qp, &attr, IB_QP_STATE);
	if (ret)
		return ret;
	attr.qp_state = IB_QPS_RTS;
	attr.sq_psn = 0;
	return ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_SQ_PSN);
}

static int ib_mad_port_start(struct ib_mad_port_private *port)
{
	u16 pkey_index;
	int i, ret;

	/* QP1 ignores the P_Key index, but INIT needs a valid one. */
	if (ib_find_pkey(port->device, port->port_num, IB_DEFAULT_PKEY_FULL,
			 &pkey_index))
		pkey_index = 0;
	for (i = 0; i < IB_MAD_QPS_CORE; i++) {
		if (!port->qp_info[i].qp)
			continue;
		ret = ib_mad_qp_to_rts(&port->qp_info[i], pkey_index);
		if (ret) {
			dev_err(&port->device->dev,
				"MAD: QP%d does not reach RTS: %d\n", i, ret);
			return ret;
		}
	}
	ret = ib_req_notify_cq(port->cq, IB_CQ_NEXT_COMP);
	if (ret)
		return ret;
	for (i = 0; i < IB_MAD_QPS_CORE; i++) {
		if (!port->qp_info[i].qp)
			continue;
		ret = ib_mad_fill_recv_ring(&port->qp_info[i], GFP_KERNEL, 1);
		if (ret)
			return ret;
	}
	return 0;
}

/* Stop posting to the QPs: taken under each queue lock. */
static void ib_mad_port_mark_closing(struct ib_mad_port_private *port)
{
	unsigned long flags;
	int i;

	for (i = 0; i < IB_MAD_QPS_CORE; i++) {
		struct ib_mad_qp_info *qp_info = &port->qp_info[i];

		spin_lock_irqsave(&qp_info->send_queue.lock, flags);
		spin_lock(&qp_info->recv_queue.lock);
		port->closing = true;
		spin_unlock(&qp_info->recv_queue.lock);
		spin_unlock_irqrestore(&qp_info->send_queue.lock, flags);
	}
}

static void ib_mad_port_destroy_qps(struct ib_mad_port_private *port)
{
	int i;

	for (i = IB_MAD_QPS_CORE - 1; i >= 0; i--) {
		if (port->qp_info[i].qp)
			ib_destroy_qp(port->qp_info[i].qp);
		port->qp_info[i].qp = NULL;
	}
}

static struct ib_mad_port_private *ib_mad_port_alloc(struct ib_device *device,
						     u32 port_num)
{
	struct ib_mad_port_private *port;
	int i;

	port = kzalloc(sizeof(*port), GFP_KERNEL);
	if (!port)
		return NULL;
	port->device = device;
	port->port_num = port_num;
	spin_lock_init(&port->reg_lock);
	for (i = 0; i < IB_MAD_QPS_CORE; i++) {
		struct ib_mad_qp_info *qp_info = &port->qp_info[i];

		qp_info->port_priv = port;
		qp_info->qp_num = i;
		ib_mad_init_queue(qp_info, &qp_info->send_queue,
				  ib_mad_sendq_size);
		ib_mad_init_queue(qp_info, &qp_info->recv_queue,
				  ib_mad_recvq_size);
		INIT_LIST_HEAD(&qp_info->overflow_list);
		INIT_LIST_HEAD(&qp_info->refused_list);
		INIT_WORK(&qp_info->refused_work, ib_mad_send_refused_work);
	}
	return port;
}

static int ib_mad_port_open(struct ib_device *device, u32 port_num,
			    struct ib_mad_port_private **out)
{
	bool has_smi = rdma_cap_ib_smi(device, port_num);
	struct ib_mad_port_private *port;
	int cq_size, ret;

	if (WARN_ON(rdma_max_mad_size(device, port_num) < IB_MGMT_MAD_SIZE) ||
	    WARN_ON(rdma_cap_opa_mad(device, port_num) &&
		    rdma_max_mad_size(device, port_num) < OPA_MGMT_MAD_SIZE))
		return -EFAULT;
	port = ib_mad_port_alloc(device, port_num);
	if (!port)
		return -ENOMEM;

	port->pd = ib_alloc_pd(device, 0);
	if (IS_ERR(port->pd)) {
		ret = PTR_ERR(port->pd);
		goto err_free_port;
	}
	cq_size = (ib_mad_sendq_size + ib_mad_recvq_size) * (has_smi ? 2 : 1);
	port->cq = ib_alloc_cq(device, port, cq_size, 0,
			       IB_POLL_UNBOUND_WORKQUEUE);
	if (IS_ERR(port->cq)) {
		ret = PTR_ERR(port->cq);
		goto err_dealloc_pd;
	}
	if (has_smi) {
		ret = ib_mad_create_qp(port, 0, IB_QPT_SMI);
		if (ret)
			goto err_free_cq;
	}
	if (rdma_cap_ib_cm(device, port_num)) {
		ret = ib_mad_create_qp(port, 1, IB_QPT_GSI);
		if (ret)
			goto err_destroy_qps;
	}
	port->wq = alloc_ordered_workqueue("ib_mad%u", WQ_MEM_RECLAIM,
					   port_num);
	if (!port->wq) {
		ret = -ENOMEM;
		goto err_destroy_qps;
	}
	ret = ib_mad_port_start(port);
	if (ret)
		goto err_stop_port;
	*out = port;
	return 0;

err_stop_port:
	ib_mad_port_mark_closing(port);
	destroy_workqueue(port->wq);
err_destroy_qps:
	ib_mad_port_destroy_qps(port);
err_free_cq:
	ib_free_cq(port->cq);
	ib_mad_drain_recv_ring(&port->qp_info[1]);
	ib_mad_drain_recv_ring(&port->qp_info[0]);
err_dealloc_pd:
	ib_dealloc_pd(port->pd);
err_free_port:
	kfree(port);
	return ret;
}

/*
 * Tear a port down. Clients unregistered their agents before (the MAD
 * client is removed last): an agent left is a client's bug, and only
 * sends of no agent can remain queued.
 */
static void ib_mad_port_close(struct ib_mad_port_private *port)
{
	ib_mad_port_mark_closing(port);
	/* Posts that took their slot before are done (ib_mad_qp_post_send()). */
	synchronize_rcu();
	ib_mad_port_destroy_qps(port);
	/* After this no completion handler runs any more. */
	ib_free_cq(port->cq);
	destroy_workqueue(port->wq);
	ib_mad_drain_recv_ring(&port->qp_info[1]);
	ib_mad_drain_recv_ring(&port->qp_info[0]);
	WARN_ON_ONCE(!list_empty(&port->qp_info[0].send_queue.list) ||
		     !list_empty(&port->qp_info[1].send_queue.list));
	WARN_ON_ONCE(ib_mad_port_agents_left(port));
	ib_dealloc_pd(port->pd);
	ib_mad_reg_tables_free(port);
	kfree(port);
}

/* ib_client ------------------------------------------------------------- */

static void ib_mad_port_down(struct ib_mad_port_private *port)
{
	ib_mad_reply_port_close(port);
	ib_mad_port_debugfs_remove(port);
	ib_mad_port_close(port);
}

static void ib_mad_remove_device(struct ib_device *device, void *client_data)
{
	struct ib_mad_device *mdev = client_data;
	u32 p;

	rdma_for_each_port(device, p) {
		if (mdev->ports[p])
			ib_mad_port_down(mdev->ports[p]);
		mdev->ports[p] = NULL;
	}
	kfree(mdev);
}

static int ib_mad_add_device(struct ib_device *device)
{
	struct ib_mad_device *mdev;
	unsigned int count = 0;
	u32 p;
	int ret;

	mdev = kzalloc(struct_size(mdev, ports, rdma_end_port(device) + 1),
		       GFP_KERNEL);
	if (!mdev)
		return -ENOMEM;
	mdev->num_ports = rdma_end_port(device) + 1;
	/* Reply agents register through ib_mad_port_get(): publish first. */
	ib_set_client_data(device, &ib_mad_client, mdev);
	rdma_for_each_port(device, p) {
		if (!rdma_cap_ib_mad(device, p))
			continue;
		ret = ib_mad_port_open(device, p, &mdev->ports[p]);
		if (ret)
			goto err_close_ports;
		ib_mad_port_debugfs_add(mdev->ports[p]);
		ret = ib_mad_reply_port_open(mdev->ports[p]);
		if (ret)
			goto err_close_ports;
		count++;
	}
	if (!count) {
		ret = -EOPNOTSUPP;
		goto err_close_ports;
	}
	return 0;

err_close_ports:
	if (ret != -EOPNOTSUPP)
		dev_err(&device->dev, "MAD: cannot open port %u: %d\n", p, ret);
	/* device.c drops the client data when add fails. */
	ib_mad_remove_device(device, mdev);
	return ret;
}

static struct ib_client ib_mad_client = {
	.name = "mad",
	.add = ib_mad_add_device,
	.remove = ib_mad_remove_device,
};

/**
 * ib_mad_init() - start the MAD layer
 *
 * Context: ib_core module init, process context.
 * Return: 0 or a negative errno.
 */
int ib_mad_init(void)
{
	int ret;

	ib_mad_recvq_size = clamp(ib_mad_recvq_size, IB_MAD_QP_MIN_SIZE,
				  IB_MAD_QP_MAX_SIZE);
	ib_mad_sendq_size = clamp(ib_mad_sendq_size, IB_MAD_QP_MIN_SIZE,
				  IB_MAD_QP_MAX_SIZE);
	ib_mad_debugfs_root = debugfs_create_dir("ib_mad", NULL);
	ret = ib_register_client(&ib_mad_client);
	if (ret) {
		pr_err("ib_mad: cannot register the MAD client: %d\n", ret);
		debugfs_remove_recursive(ib_mad_debugfs_root);
	}
	return ret;
}

/**
 * ib_mad_cleanup() - stop the MAD layer
 *
 * Context: ib_core module exit, process context.
 */
void ib_mad_cleanup(void)
{
	ib_unregister_client(&ib_mad_client);
	debugfs_remove_recursive(ib_mad_debugfs_root);
}

/* Counters in debugfs ---------------------------------------------------- */

static const char *const ib_mad_stat_names[IB_MAD_STAT_COUNT] = {
	[IB_MAD_STAT_SENT] = "sent",
	[IB_MAD_STAT_SEND_ERR] = "send_errors",
	[IB_MAD_STAT_RECV] = "received",
	[IB_MAD_STAT_DROP_INVALID] = "dropped_invalid",
	[IB_MAD_STAT_DROP_NO_AGENT] = "dropped_no_agent",
	[IB_MAD_STAT_DROP_SECURITY] = "dropped_security",
	[IB_MAD_STAT_DROP_SMI] = "dropped_smi",
	[IB_MAD_STAT_DROP_NOMEM] = "dropped_nomem",
	[IB_MAD_STAT_UNMATCHED_RESP] = "unmatched_responses",
	[IB_MAD_STAT_TIMEOUT] = "timeouts",
	[IB_MAD_STAT_RETRY] = "retries",
	[IB_MAD_STAT_CANCEL] = "cancels",
	[IB_MAD_STAT_UNSUPPORTED] = "unsupported_replies",
	[IB_MAD_STAT_OUTSTANDING] = "outstanding",
	[IB_MAD_STAT_FC_QUEUED] = "fc_queued",
	[IB_MAD_STAT_FC_BACKLOG] = "fc_backlog",
	[IB_MAD_STAT_FC_BACKOFF] = "fc_backoffs",
	[IB_MAD_STAT_FC_LATE] = "fc_late_answers",
	[IB_MAD_STAT_DUP_DROPPED] = "dup_requests_dropped",
	[IB_MAD_STAT_FC_DROPPED] = "fc_dropped",
	[IB_MAD_STAT_RECV_FLUSHED] = "recv_flushed",
	[IB_MAD_STAT_SMI_RELAYED] = "relayed_smi",
	[IB_MAD_STAT_RMPP_SEGS] = "rmpp_segs",
	[IB_MAD_STAT_RMPP_SEGS_PEAK] = "rmpp_segs_peak",
	[IB_MAD_STAT_RMPP_SRC_SEGS_PEAK] = "rmpp_src_segs_peak",
	[IB_MAD_STAT_RMPP_RECVS_PEAK] = "rmpp_recvs_peak",
	[IB_MAD_STAT_RMPP_SRC_RECVS_PEAK] = "rmpp_src_recvs_peak",
	[IB_MAD_STAT_RMPP_DONE_PEAK] = "rmpp_done_peak",
	[IB_MAD_STAT_RMPP_EVICTED] = "rmpp_evicted",
};

static int ib_mad_stats_show(struct seq_file *m, void *unused)
{
	struct ib_mad_port_private *port = m->private;
	int i;

	for (i = 0; i < IB_MAD_STAT_COUNT; i++)
		seq_printf(m, "%s %lld\n", ib_mad_stat_names[i],
			   (long long)atomic64_read(&port->stats[i]));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(ib_mad_stats);

/**
 * ib_mad_port_debugfs_add() - publish a port's counters
 * @port: the port
 *
 * Creates ib_mad/<device>-<port>/stats in debugfs. Failure is harmless.
 */
void ib_mad_port_debugfs_add(struct ib_mad_port_private *port)
{
	char name[IB_DEVICE_NAME_MAX + 16];

	snprintf(name, sizeof(name), "%s-%u", dev_name(&port->device->dev),
		 port->port_num);
	port->debugfs = debugfs_create_dir(name, ib_mad_debugfs_root);
	debugfs_create_file("stats", 0444, port->debugfs, port,
			    &ib_mad_stats_fops);
}

/**
 * ib_mad_port_debugfs_remove() - remove a port's counters
 * @port: the port
 */
void ib_mad_port_debugfs_remove(struct ib_mad_port_private *port)
{
	debugfs_remove_recursive(port->debugfs);
	port->debugfs = NULL;
}
