// SPDX-License-Identifier: GPL-2.0-only
/*
 * ib_srpt: RDMA channels - message buffers, queue pairs, the channel state
 * machine, disconnecting and draining, and releasing a channel.
 *
 * A channel's state only moves forward:
 *
 *   CONNECTING --RTU--> LIVE --DREQ sent/received--> DISCONNECTING
 *        \                 \                              |
 *         `-----------------`---- close -----> DRAINING <-'
 *                                                 |
 *                 zero-length write completed --> DISCONNECTED --> release
 *
 * Closing moves the QP to the error state and posts a zero-length RDMA
 * write behind everything already queued; its (flushed) completion proves
 * that the send queue is empty. The release work then drains the receive
 * side, waits for LIO to finish every command of the session and frees
 * the channel. From DISCONNECTING on, received IUs are dropped.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <kunit/visibility.h>
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/wait_bit.h>
#include <rdma/ib_cache.h>
#include <target/target_core_base.h>
#include <target/target_core_fabric.h>

#include "srpt_priv.h"

/*
 * Message rings.  Every context of a ring owns one buffer from a slab
 * cache, DMA-mapped for as long as the ring exists: receive rings from the
 * device, send rings to it.  Both context types start with struct
 * srpt_ioctx, so one pair of functions builds and frees either.
 */
static_assert(offsetof(struct srpt_recv_ioctx, ioctx) == 0);
static_assert(offsetof(struct srpt_send_ioctx, ioctx) == 0);

/**
 * srpt_alloc_ioctx - allocate one context of a ring and map its buffer
 * @sdev: device the buffer is used with.
 * @size: size of the context, a structure that starts with struct
 *	srpt_ioctx.
 * @cache: slab the buffer comes from; its whole object is mapped.
 * @dir: DMA direction.
 *
 * Context: process context; may sleep.
 * Return: the context, zeroed but for @buf and @dma, or NULL.
 */
static struct srpt_ioctx *srpt_alloc_ioctx(struct srpt_device *sdev,
					   size_t size,
					   struct kmem_cache *cache,
					   enum dma_data_direction dir)
{
	struct srpt_ioctx *ctx = kzalloc(size, GFP_KERNEL);
	void *buf = ctx ? kmem_cache_alloc(cache, GFP_KERNEL) : NULL;

	if (buf) {
		ctx->buf = buf;
		ctx->dma = ib_dma_map_single(sdev->device, buf,
					     kmem_cache_size(cache), dir);
		if (!ib_dma_mapping_error(sdev->device, ctx->dma))
			return ctx;
		kmem_cache_free(cache, buf);
	}
	kfree(ctx);
	return NULL;
}

/**
 * srpt_free_ioctx - undo srpt_alloc_ioctx()
 * @sdev: device the buffer was mapped for.
 * @ctx: the context.
 * @cache: slab of the buffer.
 * @dir: DMA direction it was mapped with.
 *
 * Context: process context.
 */
static void srpt_free_ioctx(struct srpt_device *sdev, struct srpt_ioctx *ctx,
			    struct kmem_cache *cache,
			    enum dma_data_direction dir)
{
	ib_dma_unmap_single(sdev->device, ctx->dma, kmem_cache_size(cache),
			    dir);
	kmem_cache_free(cache, ctx->buf);
	kfree(ctx);
}

/**
 * srpt_free_ioctx_ring - free the first contexts of a ring, and the ring
 * @sdev: device the buffers were mapped for.
 * @ring: the ring; NULL is ignored.
 * @n: how many contexts to free, from the first.
 * @cache: slab of the buffers.
 * @dir: DMA direction they were mapped with.
 *
 * Context: process context.
 */
static void srpt_free_ioctx_ring(struct srpt_device *sdev,
				 struct srpt_ioctx **ring, u32 n,
				 struct kmem_cache *cache,
				 enum dma_data_direction dir)
{
	if (!ring)
		return;
	while (n--)
		srpt_free_ioctx(sdev, ring[n], cache, dir);
	kvfree(ring);
}

/**
 * srpt_alloc_ioctx_ring - allocate a ring of contexts with mapped buffers
 * @sdev: device the buffers are used with.
 * @n: number of contexts.
 * @size: size of each context (see srpt_alloc_ioctx()).
 * @cache: slab of the buffers.
 * @offset: where in its buffer a message starts.
 * @dir: DMA direction.
 *
 * All or nothing: on failure what was allocated is freed again.
 *
 * Context: process context; may sleep.
 * Return: the ring, each context knowing its index, or NULL.
 */
static struct srpt_ioctx **srpt_alloc_ioctx_ring(struct srpt_device *sdev,
						 u32 n, size_t size,
						 struct kmem_cache *cache,
						 u32 offset,
						 enum dma_data_direction dir)
{
	struct srpt_ioctx **ring = kvcalloc(n, sizeof(*ring), GFP_KERNEL);
	u32 i;

	for (i = 0; ring && i < n; i++) {
		ring[i] = srpt_alloc_ioctx(sdev, size, cache, dir);
		if (!ring[i]) {
			srpt_free_ioctx_ring(sdev, ring, i, cache, dir);
			return NULL;
		}
		ring[i]->index = i;
		ring[i]->offset = offset;
	}
	return ring;
}

/**
 * srpt_recv_ring_alloc - allocate the receive contexts of a channel or SRQ
 * @sdev: device the buffers are used with.
 * @n: number of contexts.
 * @cache: slab of the receive buffers.
 * @offset: where a received IU starts in its buffer (immediate data
 *	alignment).
 *
 * Context: process context; may sleep.
 * Return: the ring, or NULL.
 */
struct srpt_recv_ioctx **srpt_recv_ring_alloc(struct srpt_device *sdev, u32 n,
					      struct kmem_cache *cache,
					      u32 offset)
{
	struct srpt_recv_ioctx **ring;
	u32 i;

	ring = (struct srpt_recv_ioctx **)
		srpt_alloc_ioctx_ring(sdev, n, sizeof(**ring), cache, offset,
				      DMA_FROM_DEVICE);
	for (i = 0; ring && i < n; i++)
		INIT_LIST_HEAD(&ring[i]->wait_list);
	return ring;
}

/**
 * srpt_recv_ring_free - undo srpt_recv_ring_alloc()
 * @sdev: device the buffers were mapped for.
 * @ring: the ring; NULL is ignored.
 * @n: its number of contexts.
 * @cache: slab of the buffers.
 *
 * Context: process context.
 */
void srpt_recv_ring_free(struct srpt_device *sdev, struct srpt_recv_ioctx **ring,
			 u32 n, struct kmem_cache *cache)
{
	srpt_free_ioctx_ring(sdev, (struct srpt_ioctx **)ring, n, cache,
			     DMA_FROM_DEVICE);
}

/**
 * srpt_send_ring_alloc - allocate a channel's send contexts
 * @ch: the channel; one context per credit (@ch->rq_size), with buffers
 *	from @ch->rsp_buf_cache.
 *
 * Context: process context; may sleep.
 * Return: 0 or -ENOMEM.
 */
int srpt_send_ring_alloc(struct srpt_rdma_ch *ch)
{
	struct srpt_send_ioctx **ring;
	u32 i;

	ring = (struct srpt_send_ioctx **)
		srpt_alloc_ioctx_ring(ch->sport->sdev, ch->rq_size,
				      sizeof(**ring), ch->rsp_buf_cache, 0,
				      DMA_TO_DEVICE);
	if (!ring)
		return -ENOMEM;
	for (i = 0; i < ch->rq_size; i++) {
		ring[i]->ch = ch;
		ring[i]->state = SRPT_STATE_DONE;	/* free */
	}
	ch->ioctx_ring = ring;
	return 0;
}

/**
 * srpt_ch_free_rings - free a channel's rings and put their slab caches
 * @ch: the channel; rings and caches not (yet) there are skipped.
 *
 * Context: process context.
 */
void srpt_ch_free_rings(struct srpt_rdma_ch *ch)
{
	struct srpt_device *sdev = ch->sport->sdev;

	srpt_recv_ring_free(sdev, ch->ioctx_recv_ring, ch->rq_size,
			    ch->req_buf_cache);
	ch->ioctx_recv_ring = NULL;
	srpt_cache_put(ch->req_buf_cache);
	ch->req_buf_cache = NULL;
	srpt_free_ioctx_ring(sdev, (struct srpt_ioctx **)ch->ioctx_ring,
			     ch->rq_size, ch->rsp_buf_cache, DMA_TO_DEVICE);
	ch->ioctx_ring = NULL;
	srpt_cache_put(ch->rsp_buf_cache);
	ch->rsp_buf_cache = NULL;
}

/**
 * srpt_post_recv - post a receive buffer
 * @sdev: device.
 * @ch: channel whose receive queue gets the buffer, or NULL (or a channel
 *	using the SRQ) to post to the device's shared receive queue.
 * @ioctx: the receive context.
 *
 * Context: any context.
 * Return: 0 or the error of the post.
 */
int srpt_post_recv(struct srpt_device *sdev, struct srpt_rdma_ch *ch,
		   struct srpt_recv_ioctx *ioctx)
{
	struct ib_sge sge = {
		.addr = ioctx->ioctx.dma + ioctx->ioctx.offset,
		.length = srp_max_req_size,
		.lkey = sdev->lkey,
	};
	struct ib_recv_wr wr = {
		.wr_cqe = &ioctx->ioctx.cqe,
		.sg_list = &sge,
		.num_sge = 1,
	};

	ioctx->ioctx.cqe.done = srpt_recv_done;
	if (!ch || ch->use_srq)
		return ib_post_srq_recv(sdev->srq, &wr, NULL);
	return ib_post_recv(ch->qp, &wr, NULL);
}

/**
 * srpt_set_ch_state - move a channel forward to a new state
 * @ch: the channel.
 * @new: the new state.
 *
 * Context: any context; takes @ch->lock.
 * Return: true if the state changed, false if the channel already was in
 * @new or a later state.
 */
bool srpt_set_ch_state(struct srpt_rdma_ch *ch, enum srpt_ch_state new)
{
	unsigned long flags;
	bool changed = false;

	spin_lock_irqsave(&ch->lock, flags);
	if (new > ch->state) {
		ch->state = new;
		changed = true;
	}
	spin_unlock_irqrestore(&ch->lock, flags);
	return changed;
}
EXPORT_SYMBOL_IF_KUNIT(srpt_set_ch_state);

/**
 * srpt_ch_state_name - printable name of a channel state
 * @state: the state.
 *
 * Return: a static string.
 */
const char *srpt_ch_state_name(enum srpt_ch_state state)
{
	static const char * const names[] = {
		[CH_CONNECTING]		= "connecting",
		[CH_LIVE]		= "live",
		[CH_DISCONNECTING]	= "disconnecting",
		[CH_DRAINING]		= "draining",
		[CH_DISCONNECTED]	= "disconnected",
	};

	return state < ARRAY_SIZE(names) ? names[state] : "?";
}

/*
 * Process-context half of srpt_ch_fatal(): the DREQ. The channel closes
 * when the CM ends that exchange (DREP, the DREQ's last retry timed out,
 * or a crossing DREQ), as after any disconnect of ours, and not at once:
 * the release destroys the CM ID, which cancels the DREQ's retries, and
 * the fault that failed the QP (a link down, a lost ACK) may have lost
 * the first copy as well. The initiator would then not learn that the
 * channel is gone until its commands time out.
 */
static void srpt_ch_fatal_work(struct work_struct *w)
{
	struct srpt_rdma_ch *ch = container_of(w, struct srpt_rdma_ch,
					       fatal_work);
	srpt_end_ch(ch);
	srpt_put_ch(ch);
}

static void srpt_ch_close_work(struct work_struct *w)
{
	struct srpt_rdma_ch *ch = container_of(to_delayed_work(w),
					       struct srpt_rdma_ch, close_work);

	if (READ_ONCE(ch->state) == CH_DISCONNECTING) {
		pr_info("%s: channel %u: no answer to its DREQ in %d s, closing it\n",
			ch->sess_name, ch->id, SRPT_CLOSE_WAIT_SECS);
		srpt_close_ch(ch);
	}
	srpt_put_ch(ch);
}

/**
 * srpt_ch_close_later - close a disconnecting channel if its DREQ goes
 *	unanswered
 * @ch: the channel, DREQ sent.
 *
 * For a channel the initiator replaced by logging in again: it is alive,
 * and needs the old channel no more. Without this the channel would last
 * as long as the CM repeats the DREQ, which the initiator's REQ sets (up
 * to about 37 hours), holding its QP, CQ and rings. The work holds a
 * channel reference; the release work cancels it.
 *
 * Context: any context.
 */
void srpt_ch_close_later(struct srpt_rdma_ch *ch)
{
	kref_get(&ch->kref);
	if (!queue_delayed_work(srpt_wq, &ch->close_work,
				SRPT_CLOSE_WAIT_SECS * HZ))
		srpt_put_ch(ch);
}

/**
 * srpt_ch_fatal - close a channel whose QP can no longer be used
 * @ch: the channel.
 *
 * A fatal QP event or a receive that failed leaves the QP in the error
 * state while the CM still sees a connection: without this the channel
 * would stay LIVE, its commands never answered, until the initiator gave
 * up. The initiator is sent a DREQ from a work item, which holds a channel
 * reference; the release work cancels it, so it never runs on a channel
 * being freed. The channel is drained when the CM ends the DREQ's
 * exchange (answered or given up), so that the DREQ is repeated until
 * the initiator has it.
 *
 * Context: any context; takes @ch->lock.
 */
void srpt_ch_fatal(struct srpt_rdma_ch *ch)
{
	unsigned long flags;

	spin_lock_irqsave(&ch->lock, flags);
	/*
	 * Before LIVE a failed login may still free the channel and its CM
	 * id without a release (the CM times out a connection that never
	 * gets its RTU); from DRAINING on it is already on its way out.
	 */
	if (ch->state >= CH_LIVE && ch->state < CH_DRAINING) {
		kref_get(&ch->kref);
		if (!queue_work(srpt_wq, &ch->fatal_work))
			kref_put(&ch->kref, srpt_free_ch);
	}
	spin_unlock_irqrestore(&ch->lock, flags);
}

/**
 * srpt_ch_send_failed - close a channel whose send queue failed
 * @ch: the channel.
 * @wc: the completion of a send-side work request, not successful.
 * @what: what the work request was, for the log.
 *
 * A send-side error (an R_Key the initiator never registered, retries
 * exceeded) moves the QP to the error state; unless something closes the
 * channel it stays LIVE, holding its session, until the initiator logs in
 * again. A flush on a channel still LIVE means the same: the failed work
 * request may have been an unsignaled RDMA WRITE chained in front of a
 * response, whose error completion carries no cqe and never reaches
 * ib_srpt. Flushes once the channel is being closed are expected.
 *
 * Context: any context; takes @ch->lock.
 */
void srpt_ch_send_failed(struct srpt_rdma_ch *ch, const struct ib_wc *wc,
			 const char *what)
{
	if (wc->status == IB_WC_WR_FLUSH_ERR && READ_ONCE(ch->state) != CH_LIVE)
		return;
	pr_info_ratelimited("%s: %s failed with status %s, closing the channel\n",
			    ch->sess_name, what, ib_wc_status_msg(wc->status));
	srpt_ch_fatal(ch);
}

/**
 * srpt_qp_event - QP asynchronous event callback
 * @event: the event.
 * @ptr: the channel.
 *
 * A receive arriving before the RTU makes the CM report COMM_EST, which is
 * passed on so that the connection is established. The events that mean
 * the QP went to the error state on its own close the channel.
 *
 * Context: may be called in interrupt context.
 */
VISIBLE_IF_KUNIT void srpt_qp_event(struct ib_event *event, void *ptr)
{
	struct srpt_rdma_ch *ch = ptr;

	switch (event->event) {
	case IB_EVENT_COMM_EST:
		if (ch->using_rdma_cm)
			rdma_notify(ch->rdma_cm_id, event->event);
		else
			ib_cm_notify(ch->ib_cm_id, event->event);
		break;
	case IB_EVENT_QP_LAST_WQE_REACHED:
		pr_debug("%s: last WQE reached\n", ch->sess_name);
		break;
	case IB_EVENT_QP_FATAL:
	case IB_EVENT_QP_REQ_ERR:
	case IB_EVENT_QP_ACCESS_ERR:
		pr_warn_ratelimited("%s: QP error event (%s) in state %s, closing the channel\n",
				    ch->sess_name, ib_event_msg(event->event),
				    srpt_ch_state_name(ch->state));
		srpt_ch_fatal(ch);
		break;
	default:
		pr_info_ratelimited("%s: QP event %s in state %s\n",
				    ch->sess_name, ib_event_msg(event->event),
				    srpt_ch_state_name(ch->state));
		break;
	}
}
EXPORT_SYMBOL_IF_KUNIT(srpt_qp_event);

/**
 * srpt_zerolength_write - post a zero-length RDMA write
 * @ch: the channel.
 * @cqe: completion entry for it.
 *
 * A zero-length RDMA WRITE carries no data and needs no valid R_Key
 * (IBA C9-88), so it can always be posted; its completion arrives after
 * those of all work requests posted before it.
 *
 * Context: any context.
 * Return: 0 or the error of ib_post_send().
 */
int srpt_zerolength_write(struct srpt_rdma_ch *ch, struct ib_cqe *cqe)
{
	struct ib_rdma_wr wr = {
		.wr = {
			.wr_cqe = cqe,
			.opcode = IB_WR_RDMA_WRITE,
			.send_flags = IB_SEND_SIGNALED,
		},
	};

	return ib_post_send(ch->qp, &wr.wr, NULL);
}

static void srpt_schedule_release(struct srpt_rdma_ch *ch)
{
	if (srpt_set_ch_state(ch, CH_DISCONNECTED))
		queue_work(srpt_wq, &ch->release_work);
}

/* Completion of the drain marker posted by srpt_close_ch(). */
static void srpt_drain_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct srpt_rdma_ch *ch = wc->qp->qp_context;

	pr_debug("%s: send queue drained (status %d)\n", ch->sess_name,
		 wc->status);
	srpt_schedule_release(ch);
}

/**
 * srpt_init_ch_qp - move a new IB CM channel's QP to INIT
 * @ch: the channel.
 * @qp: its queue pair.
 *
 * Grants local write access (remote access is not needed: the target
 * initiates every RDMA operation) and selects the port and the P_Key index
 * of the login's partition, falling back to index 0.
 *
 * Context: process context; may sleep.
 * Return: 0 or the error of ib_modify_qp().
 */
static int srpt_init_ch_qp(struct srpt_rdma_ch *ch, struct ib_qp *qp)
{
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_INIT,
		.qp_access_flags = IB_ACCESS_LOCAL_WRITE,
		.port_num = ch->sport->port,
	};
	int ret;

	ret = ib_find_cached_pkey(ch->sport->sdev->device, ch->sport->port,
				  ch->pkey, &attr.pkey_index);
	if (ret)
		pr_warn("%s: P_Key %#x not found (%d), using index 0\n",
			ch->sess_name, ch->pkey, ret);
	return ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_ACCESS_FLAGS |
			    IB_QP_PORT | IB_QP_PKEY_INDEX);
}

static int srpt_ch_qp_modify_cm(struct srpt_rdma_ch *ch, struct ib_qp *qp,
				enum ib_qp_state state)
{
	struct ib_qp_attr attr = { .qp_state = state };
	int mask, ret;

	if (WARN_ON_ONCE(ch->using_rdma_cm))
		return -EINVAL;
	ret = ib_cm_init_qp_attr(ch->ib_cm_id, &attr, &mask);
	if (ret)
		return ret;
	/* What the REP says, which the CM's values may exceed. */
	if (state == IB_QPS_RTR)
		attr.max_dest_rd_atomic = ch->rd_resp;
	else
		attr.max_rd_atomic = ch->rd_init;
	return ib_modify_qp(qp, &attr, mask);
}

/**
 * srpt_ch_qp_rtr - move an IB CM channel's QP to ready-to-receive
 * @ch: the channel.
 * @qp: its queue pair.
 *
 * Context: process context; may sleep.
 * Return: 0 or a negative errno.
 */
int srpt_ch_qp_rtr(struct srpt_rdma_ch *ch, struct ib_qp *qp)
{
	return srpt_ch_qp_modify_cm(ch, qp, IB_QPS_RTR);
}

/**
 * srpt_ch_qp_rts - move an IB CM channel's QP to ready-to-send
 * @ch: the channel.
 * @qp: its queue pair.
 *
 * Context: process context; may sleep.
 * Return: 0 or a negative errno.
 */
int srpt_ch_qp_rts(struct srpt_rdma_ch *ch, struct ib_qp *qp)
{
	return srpt_ch_qp_modify_cm(ch, qp, IB_QPS_RTS);
}

/**
 * srpt_ch_qp_err - move a channel's QP to the error state
 * @ch: the channel.
 *
 * Outstanding and later work requests complete with a flush status.
 *
 * Context: process context.
 * Return: 0 or the error of ib_modify_qp().
 */
static int srpt_ch_qp_err(struct srpt_rdma_ch *ch)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };

	return ib_modify_qp(ch->qp, &attr, IB_QP_STATE);
}

static int srpt_ch_create_qp(struct srpt_rdma_ch *ch,
			     struct ib_qp_init_attr *init)
{
	struct srpt_device *sdev = ch->sport->sdev;
	int ret;

	if (ch->using_rdma_cm) {
		ret = rdma_create_qp(ch->rdma_cm_id, sdev->pd, init);
		if (!ret)
			ch->qp = ch->rdma_cm_id->qp;
		return ret;
	}
	ch->qp = ib_create_qp(sdev->pd, init);
	if (IS_ERR(ch->qp)) {
		ret = PTR_ERR(ch->qp);
		ch->qp = NULL;
		return ret;
	}
	ret = srpt_init_ch_qp(ch, ch->qp);
	if (ret) {
		ib_destroy_qp(ch->qp);
		ch->qp = NULL;
	}
	return ret;
}

static void srpt_ch_destroy_qp(struct srpt_rdma_ch *ch)
{
	if (ch->using_rdma_cm)
		rdma_destroy_qp(ch->rdma_cm_id);
	else
		ib_destroy_qp(ch->qp);
	ch->qp = NULL;
}

/**
 * srpt_ch_cq_need - the CQ entries a channel's QP needs
 * @cq_size: the entries reserved for the channel.
 * @cap: the QP's capabilities as created: the device may round them up,
 *	and rdma_rw adds the work requests of its contexts to max_send_wr.
 * @rq_size: the channel's receive ring.
 * @use_srq: the QP receives through the SRQ.
 *
 * Once the QP is in the error state every work request still posted
 * completes at once, flushed: a full send queue and a full receive queue
 * (on the SRQ, the IUs of the channel's credits and the drain marker).
 * A pool CQ shared with other QPs overflows when the entries reserved for
 * one of them are fewer.
 *
 * Context: any context.
 * Return: @cq_size when it is enough, otherwise the number that is.
 */
VISIBLE_IF_KUNIT u32 srpt_ch_cq_need(u32 cq_size, const struct ib_qp_cap *cap,
				     u32 rq_size, bool use_srq)
{
	u32 need = cap->max_send_wr +
		   (use_srq ? rq_size + 1 : cap->max_recv_wr);

	return max(cq_size, need);
}
EXPORT_SYMBOL_IF_KUNIT(srpt_ch_cq_need);

static int srpt_ch_try_create(struct srpt_rdma_ch *ch, u32 sq_size)
{
	struct srpt_device *sdev = ch->sport->sdev;
	const struct ib_device_attr *attrs = &sdev->device->attrs;
	struct ib_qp_init_attr init = {
		.qp_context = ch,
		.event_handler = srpt_qp_event,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
		.port_num = ch->sport->port,
		/*
		 * Half of the send queue is for SRP_RSP sends, the other
		 * half is handed to rdma_rw for READ/WRITE work requests.
		 */
		.cap.max_send_wr = min_t(u32, sq_size / 2, attrs->max_qp_wr),
		.cap.max_rdma_ctxs = sq_size / 2,
		.cap.max_send_sge = attrs->max_send_sge,
		.cap.max_recv_sge = 1,
	};
	struct ib_qp_cap req;
	bool grown = false;
	u32 need;
	int ret;

	if (!ch->use_srq)
		/* One more for the marker of ib_drain_rq(). */
		init.cap.max_recv_wr = ch->rq_size + 1;
	req = init.cap;
	ch->cq_size = ch->rq_size + 1 + sq_size;
	/* Once more with a larger CQ if the QP came out larger than asked. */
	for (;;) {
		ch->cq = ib_cq_pool_get(sdev->device, ch->cq_size, -1,
					IB_POLL_WORKQUEUE);
		if (IS_ERR(ch->cq)) {
			ret = PTR_ERR(ch->cq);
			ch->cq = NULL;
			return ret;
		}
		init.send_cq = ch->cq;
		init.recv_cq = ch->cq;
		init.srq = ch->use_srq ? sdev->srq : NULL;
		init.cap = req;
		ret = srpt_ch_create_qp(ch, &init);
		if (ret)
			goto err_put_cq;
		need = srpt_ch_cq_need(ch->cq_size, &init.cap, ch->rq_size,
				       ch->use_srq);
		if (need == ch->cq_size)
			break;
		pr_debug("%s: QP of %u+%u work requests, CQ of %u: retrying\n",
			 ch->sess_name, init.cap.max_send_wr,
			 init.cap.max_recv_wr, ch->cq_size);
		srpt_ch_destroy_qp(ch);
		ib_cq_pool_put(ch->cq, ch->cq_size);
		ch->cq = NULL;
		if (grown)
			return -ENOSPC;	/* larger again: the device is erratic */
		grown = true;
		ch->cq_size = need;
	}
	/* Keep two slots for the live and drain zero-length writes. */
	ch->sq_wr_max = init.cap.max_send_wr - 2;
	atomic_set(&ch->sq_wr_avail, ch->sq_wr_max);
	return 0;

err_put_cq:
	ib_cq_pool_put(ch->cq, ch->cq_size);
	ch->cq = NULL;
	return ret;
}

/**
 * srpt_create_ch_ib - create a channel's completion queue and queue pair
 * @ch: the channel, with @rq_size, @use_srq and its CM id set.
 * @sq_size: requested send queue size; halved down to %SRPT_MIN_SQ_SIZE
 *	while the device refuses it.
 *
 * On success the receive ring (if the channel has one) is posted.
 *
 * Context: process context; may sleep.
 * Return: 0 or a negative errno with nothing left allocated.
 */
int srpt_create_ch_ib(struct srpt_rdma_ch *ch, u32 sq_size)
{
	u32 i;
	int ret;

	for (;;) {
		ret = srpt_ch_try_create(ch, sq_size);
		if (!ret || sq_size <= SRPT_MIN_SQ_SIZE)
			break;
		pr_debug("%s: QP with sq_size %u failed (%d), retrying\n",
			 ch->sess_name, sq_size, ret);
		sq_size = max_t(u32, sq_size / 2, SRPT_MIN_SQ_SIZE);
	}
	if (ret)
		return ret;

	if (ch->use_srq)
		return 0;
	for (i = 0; i < ch->rq_size; i++) {
		ret = srpt_post_recv(ch->sport->sdev, ch,
				     ch->ioctx_recv_ring[i]);
		if (ret) {
			srpt_destroy_ch_ib(ch);
			return ret;
		}
	}
	return 0;
}

/**
 * srpt_destroy_ch_ib - undo srpt_create_ch_ib()
 * @ch: the channel.
 *
 * Context: process context; may sleep.
 */
void srpt_destroy_ch_ib(struct srpt_rdma_ch *ch)
{
	srpt_ch_destroy_qp(ch);
	ib_cq_pool_put(ch->cq, ch->cq_size);
	ch->cq = NULL;
}

/**
 * srpt_close_ch - start draining a channel
 * @ch: the channel.
 *
 * Moves the channel to DRAINING, its QP to the error state and posts the
 * drain marker. When the marker cannot be posted the channel is released
 * right away.
 *
 * Context: process context.
 * Return: true if this call moved the channel to DRAINING, false if it was
 * already draining or drained.
 */
bool srpt_close_ch(struct srpt_rdma_ch *ch)
{
	int ret;

	if (!srpt_set_ch_state(ch, CH_DRAINING))
		return false;

	ret = srpt_ch_qp_err(ch);
	if (ret)
		pr_warn("%s: moving QP to error state failed (%d)\n",
			ch->sess_name, ret);
	ret = srpt_zerolength_write(ch, &ch->zw_drain_cqe);
	if (ret) {
		pr_warn("%s: posting drain marker failed (%d)\n",
			ch->sess_name, ret);
		srpt_schedule_release(ch);
	}
	return true;
}

/**
 * srpt_disconnect_ch - start a channel's disconnect with the initiator
 * @ch: the channel.
 *
 * Moves the channel to DISCONNECTING and has the CM tell the initiator
 * (srpt_cm_send_disconnect()); the CM event that ends the exchange closes
 * the channel. When nothing could be sent no such event comes, so the
 * channel is closed here.
 *
 * Context: process context, from a CM callback of @ch or with
 * srpt_port.mutex held, so that it cannot race with accepting @ch.
 * Return: true if this call started the disconnect, false if the channel
 * was disconnecting already.
 */
bool srpt_disconnect_ch(struct srpt_rdma_ch *ch)
{
	bool started = srpt_set_ch_state(ch, CH_DISCONNECTING);

	if (started && srpt_cm_send_disconnect(ch))
		srpt_close_ch(ch);
	return started;
}

/**
 * srpt_end_ch - disconnect a channel on the target's own initiative
 * @ch: the channel.
 *
 * srpt_disconnect_ch() for callers outside the CM callbacks: it takes the
 * port mutex that keeps the disconnect from racing with the accept.
 *
 * Context: process context; may sleep. Not from @ch's CM callbacks.
 * Return: as srpt_disconnect_ch().
 */
bool srpt_end_ch(struct srpt_rdma_ch *ch)
{
	guard(mutex)(&ch->sport->mutex);
	return srpt_disconnect_ch(ch);
}

/**
 * srpt_put_ch - drop a channel reference
 * @ch: the channel.
 *
 * Context: any context.
 */
void srpt_put_ch(struct srpt_rdma_ch *ch)
{
	kref_put(&ch->kref, srpt_free_ch);
}

/**
 * srpt_disconnect_ch_sync - disconnect a channel and wait until released
 * @ch: the channel.
 *
 * When the initiator does not answer the DREQ within a few seconds the
 * channel is closed without its consent, so the wait always ends.
 *
 * Context: process context; may sleep. Must not be called from the
 * channel's CM callbacks or from its CQ context.
 */
void srpt_disconnect_ch_sync(struct srpt_rdma_ch *ch)
{
	kref_get(&ch->kref);
	srpt_end_ch(ch);

	while (!wait_for_completion_timeout(&ch->released,
					    SRPT_CLOSE_WAIT_SECS * HZ)) {
		pr_info("%s: waiting for release, state %s\n", ch->sess_name,
			srpt_ch_state_name(ch->state));
		srpt_close_ch(ch);
	}
	srpt_put_ch(ch);
}

/* Disconnect and close the channels of @nexus that carry @stpg (NULL: all). */
static void srpt_close_nexus_channels(struct srpt_nexus *nexus,
				      struct srpt_tpg *stpg)
{
	struct srpt_rdma_ch *ch;

	list_for_each_entry(ch, &nexus->ch_list, list) {
		if (stpg && ch->stpg != stpg)
			continue;
		pr_info("%s: closing channel\n", ch->sess_name);
		srpt_disconnect_ch(ch);
		srpt_close_ch(ch);
	}
}

/**
 * srpt_close_tpg_channels - close the channels of one TPG or of all TPGs
 * @sport: the port.
 * @stpg: the TPG, or NULL for every channel of the port.
 *
 * Each channel gets a DREQ and is closed without waiting for the answer.
 *
 * Context: process context; caller holds @sport->mutex.
 */
void srpt_close_tpg_channels(struct srpt_port *sport, struct srpt_tpg *stpg)
	__must_hold(&sport->mutex)
{
	struct srpt_nexus *nexus;

	lockdep_assert_held(&sport->mutex);
	list_for_each_entry(nexus, &sport->nexus_list, entry)
		srpt_close_nexus_channels(nexus, stpg);
}

/**
 * srpt_get_nexus - find or add the nexus of an initiator/target pair
 * @sport: the port.
 * @i_port_id: initiator port id.
 * @t_port_id: target port id.
 * @src: the initiator logging in (srpt_login.src_name).
 * @new: a zeroed nexus, added when the pair has none yet; the caller
 *	frees it unless it is returned.
 *
 * A port keeps at most %SRPT_MAX_NEXUS nexuses, and at most
 * %SRPT_MAX_NEXUS_PER_SRC of one initiator: without the first bound,
 * logins with ever new initiator port ids would fill memory; without the
 * second, one initiator doing so would lock every other out.
 *
 * Context: process context; caller holds @sport->mutex.
 * Return: the nexus (freed with its last channel by srpt_unlink_ch()),
 * ERR_PTR(-EBUSY) when a new one would exceed the port's bound, or
 * ERR_PTR(-EUSERS) when it would exceed the initiator's.
 */
struct srpt_nexus *srpt_get_nexus(struct srpt_port *sport,
				  const u8 i_port_id[16],
				  const u8 t_port_id[16], const char *src,
				  struct srpt_nexus *new)
	__must_hold(&sport->mutex)
{
	struct srpt_nexus *nexus;
	unsigned int of_src = 0;

	lockdep_assert_held(&sport->mutex);
	list_for_each_entry(nexus, &sport->nexus_list, entry) {
		if (!memcmp(nexus->i_port_id, i_port_id, 16) &&
		    !memcmp(nexus->t_port_id, t_port_id, 16))
			return nexus;
		of_src += !strcmp(nexus->src, src);
	}
	if (sport->nr_nexus >= SRPT_MAX_NEXUS)
		return ERR_PTR(-EBUSY);
	if (of_src >= SRPT_MAX_NEXUS_PER_SRC)
		return ERR_PTR(-EUSERS);
	INIT_LIST_HEAD(&new->ch_list);
	memcpy(new->i_port_id, i_port_id, 16);
	memcpy(new->t_port_id, t_port_id, 16);
	strscpy(new->src, src, sizeof(new->src));
	list_add_tail(&new->entry, &sport->nexus_list);
	sport->nr_nexus++;
	return new;
}
EXPORT_SYMBOL_IF_KUNIT(srpt_get_nexus);

/**
 * srpt_unlink_ch - take a released channel out of its nexus
 * @ch: the channel.
 *
 * The nexus goes with its last channel; a later login of the same pair
 * makes a new one, with a new session number.
 *
 * Context: process context; caller holds srpt_port.mutex of @ch's port.
 */
void srpt_unlink_ch(struct srpt_rdma_ch *ch)
	__must_hold(&ch->sport->mutex)
{
	struct srpt_nexus *nexus = ch->nexus;

	lockdep_assert_held(&ch->sport->mutex);
	list_del_init(&ch->list);
	ch->nexus = NULL;
	if (!nexus || !list_empty(&nexus->ch_list))
		return;
	list_del(&nexus->entry);
	ch->sport->nr_nexus--;
	kfree(nexus);
}
EXPORT_SYMBOL_IF_KUNIT(srpt_unlink_ch);

/* Give SRQ buffers that were waiting on a dead channel back to the SRQ. */
static void srpt_ch_return_waiting(struct srpt_rdma_ch *ch)
{
	struct srpt_recv_ioctx *recv, *tmp;

	list_for_each_entry_safe(recv, tmp, &ch->cmd_wait_list, wait_list) {
		list_del_init(&recv->wait_list);
		if (ch->use_srq)
			srpt_post_recv(ch->sport->sdev, NULL, recv);
	}
}

/**
 * srpt_drain_recv - wait until no receive completion of a channel is left
 * @ch: the channel, its QP in the error state.
 *
 * Afterwards no IU handler of @ch runs or will run, so no command can
 * reach LIO after the session is stopped. A channel with its own receive
 * queue drains it. A QP on the SRQ has no receive queue to flush: the HCA
 * says with the Last WQE Reached event that it takes no more SRQ buffers,
 * and a drain of the send queue, on the same CQ, then proves that the
 * completions of the buffers it took have been handled.
 *
 * Context: process context; may sleep.
 */
static void srpt_drain_recv(struct srpt_rdma_ch *ch)
{
	if (!ch->use_srq) {
		ib_drain_rq(ch->qp);
		return;
	}
	if (!wait_for_completion_timeout(&ch->qp->srq_completion,
					 SRPT_LAST_WQE_WAIT_SECS * HZ))
		pr_warn("%s: no Last WQE Reached event after %d s\n",
			ch->sess_name, SRPT_LAST_WQE_WAIT_SECS);
	ib_drain_sq(ch->qp);
}

/**
 * srpt_release_channel_work - free a drained channel
 * @w: the channel's release_work.
 *
 * Order matters: the login must be done with the channel (it links the
 * channel before it sets up the session, which a close may overtake), no
 * IU may be handled any more (the receive side is drained) before the
 * session is stopped, LIO must be done with every
 * command (their completions touch the QP and the rings) before the CM
 * id is destroyed (no more CM callbacks), the channel unlinked, and the
 * QP, CQ and rings freed. The port and TPG counts drop last, since
 * waiters on them free the device and the TPG.
 *
 * Context: process context (workqueue).
 */
static void srpt_release_channel_work(struct work_struct *w)
{
	struct srpt_rdma_ch *ch = container_of(w, struct srpt_rdma_ch,
					       release_work);
	struct srpt_port *sport = ch->sport;
	struct srpt_tpg *stpg = ch->stpg;

	if (cancel_work_sync(&ch->fatal_work))
		srpt_put_ch(ch);
	if (cancel_delayed_work_sync(&ch->close_work))
		srpt_put_ch(ch);
	/* A channel closed during its login may still be getting a session. */
	wait_for_completion(&ch->login_done);
	srpt_drain_recv(ch);
	if (ch->sess)
		target_stop_session(ch->sess);
	/* The send queue is drained: nothing would post what still waits. */
	srpt_close_rsp_backlog(ch);
	if (ch->sess)
		target_wait_for_sess_cmds(ch->sess);
	srpt_ch_return_waiting(ch);
	if (ch->sess)
		target_remove_session(ch->sess);
	ch->sess = NULL;

	if (ch->using_rdma_cm) {
		srpt_destroy_ch_ib(ch);
		rdma_destroy_id(ch->rdma_cm_id);
	} else {
		ib_destroy_cm_id(ch->ib_cm_id);
		srpt_destroy_ch_ib(ch);
	}

	mutex_lock(&sport->mutex);
	srpt_unlink_ch(ch);
	mutex_unlock(&sport->mutex);

	srpt_ch_free_rings(ch);
	pr_info("%s: channel released\n", ch->sess_name);

	complete_all(&ch->released);
	if (atomic_dec_and_test(&stpg->nr_channels))
		wake_up_var(&stpg->nr_channels);
	if (atomic_dec_and_test(&sport->refcount))
		wake_up_var(&sport->refcount);
	srpt_put_ch(ch);
}

/**
 * srpt_init_ch - initialise the fields of a new channel
 * @ch: zeroed channel.
 * @sport: port it is created on.
 *
 * Context: any context.
 */
void srpt_init_ch(struct srpt_rdma_ch *ch, struct srpt_port *sport)
{
	ch->sport = sport;
	kref_init(&ch->kref);
	init_completion(&ch->released);
	init_completion(&ch->login_done);
	spin_lock_init(&ch->lock);
	ch->state = CH_CONNECTING;
	INIT_LIST_HEAD(&ch->list);
	INIT_LIST_HEAD(&ch->cmd_wait_list);
	spin_lock_init(&ch->rsp_lock);
	INIT_LIST_HEAD(&ch->rsp_backlog);
	INIT_DELAYED_WORK(&ch->rsp_work, srpt_rsp_work);
	INIT_WORK(&ch->release_work, srpt_release_channel_work);
	INIT_WORK(&ch->fatal_work, srpt_ch_fatal_work);
	INIT_DELAYED_WORK(&ch->close_work, srpt_ch_close_work);
	ch->zw_live_cqe.done = srpt_zerolength_write_done;
	ch->zw_drain_cqe.done = srpt_drain_done;
}
EXPORT_SYMBOL_IF_KUNIT(srpt_init_ch);

/**
 * srpt_free_ch - kref release function of a channel
 * @kref: the channel's kref.
 *
 * Context: any context.
 */
void srpt_free_ch(struct kref *kref)
{
	kfree(container_of(kref, struct srpt_rdma_ch, kref));
}

/**
 * srpt_release_sport - close a port's channels and wait until released
 * @sport: the port.
 *
 * Marks the port as going away so that no login starts any more, closes
 * every channel and waits, reporting progress every few seconds, until all
 * channels (and logins in progress) are gone. Then frees the nexuses.
 *
 * Context: process context; may sleep.
 * Return: 0.
 */
int srpt_release_sport(struct srpt_port *sport)
{
	struct srpt_nexus *nexus, *next;

	mutex_lock(&sport->mutex);
	sport->removing = true;
	srpt_close_tpg_channels(sport, NULL);
	mutex_unlock(&sport->mutex);

	while (!wait_var_event_timeout(&sport->refcount,
				       !atomic_read(&sport->refcount),
				       SRPT_CLOSE_WAIT_SECS * HZ)) {
		pr_info("%s-%u: waiting for %d channels\n",
			dev_name(&sport->sdev->device->dev), sport->port,
			atomic_read(&sport->refcount));
		mutex_lock(&sport->mutex);
		srpt_close_tpg_channels(sport, NULL);
		mutex_unlock(&sport->mutex);
	}

	mutex_lock(&sport->mutex);
	list_for_each_entry_safe(nexus, next, &sport->nexus_list, entry) {
		WARN_ON_ONCE(!list_empty(&nexus->ch_list));
		list_del(&nexus->entry);
		kfree(nexus);
	}
	sport->nr_nexus = 0;
	mutex_unlock(&sport->mutex);
	return 0;
}
