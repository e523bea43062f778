// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * MAD sends: posting, and the lifecycle of a posted send (buffers are
 * allocated in mad_buf.c).
 *
 * A send buffer moves through the states of enum ib_mad_send_state (see
 * mad_priv.h for the diagram), always under its agent's lock. Outstanding
 * sends (ON_WIRE, WAIT_RESP) sit in the agent's TID hash so that responses,
 * RMPP ACKs and cancels find them without scanning; sends waiting for a
 * response also sit in the agent's wait tree, ordered by deadline, which a
 * single delayed work per agent serves.
 *
 * The send handler runs exactly once per posted buffer, never from
 * ib_post_send_mad(), ib_modify_mad() or anything else a client calls
 * under its own locks: completions found in those paths go on the agent's
 * done_list and the timed work runs them.
 */

#include <linux/slab.h>
#include <kunit/visibility.h>
#include <rdma/ib_cache.h>

#include "core_priv.h"
#include "mad_kabi.h"
#include "mad_priv.h"

#include <trace/events/ib_mad.h>

/* State machine helpers (agent lock held) ------------------------------ */

static bool ib_mad_wait_before(struct rb_node *a, const struct rb_node *b)
{
	return time_before(rb_entry(a, struct ib_mad_send_wr_private,
				    wait_node)->timeout,
			   rb_entry(b, struct ib_mad_send_wr_private,
				    wait_node)->timeout);
}

static void ib_mad_agent_rearm_locked(struct ib_mad_agent_private *priv);

/* Take a send out of the wait tree, if it is there. Agent lock held. */
static void ib_mad_send_unwait_locked(struct ib_mad_send_wr_private *wr)
{
	struct ib_mad_agent_private *priv = wr->mad_agent_priv;

	lockdep_assert_held(&priv->lock);
	if (RB_EMPTY_NODE(&wr->wait_node))
		return;
	rb_erase_cached(&wr->wait_node, &priv->wait_tree);
	RB_CLEAR_NODE(&wr->wait_node);
}

/* The earliest deadline's send, or NULL. Agent lock held. */
static struct ib_mad_send_wr_private *
ib_mad_agent_first_wait_locked(struct ib_mad_agent_private *priv)
{
	struct rb_node *node = rb_first_cached(&priv->wait_tree);

	return node ? rb_entry(node, struct ib_mad_send_wr_private, wait_node) :
		      NULL;
}

/* Put a send in the wait tree until @when; re-arm if it is the earliest. */
static void ib_mad_send_wait_until_locked(struct ib_mad_send_wr_private *wr,
					  unsigned long when)
{
	struct ib_mad_agent_private *priv = wr->mad_agent_priv;

	ib_mad_send_unwait_locked(wr);
	wr->timeout = when;
	if (rb_add_cached(&wr->wait_node, &priv->wait_tree, ib_mad_wait_before))
		ib_mad_agent_rearm_locked(priv);
}

static void ib_mad_fc_settle_locked(struct ib_mad_agent_private *priv,
				    struct ib_mad_fc_dest *dest);

/*
 * A flow-controlled request no longer needs its destination's flow
 * control: it leaves the backlog, or gives back its slot to the oldest
 * request of the backlog.
 */
static void ib_mad_send_fc_release_locked(struct ib_mad_send_wr_private *wr)
{
	struct ib_mad_agent_private *priv = wr->mad_agent_priv;
	struct ib_mad_fc_dest *dest = wr->fc_dest;

	if (!dest)
		return;
	if (wr->state == IB_MAD_SEND_QUEUED) {
		list_del_init(&wr->agent_list);
		ib_mad_stat_dec(ib_mad_agent_port(priv), IB_MAD_STAT_FC_BACKLOG);
	}
	if (wr->fc_slot) {
		wr->fc_slot = false;
		dest->active--;
		priv->fc_active--;
	}
	wr->fc_dest = NULL;
	ib_mad_fc_settle_locked(priv, dest);
}

/*
 * A send stops being outstanding: out of the TID hash, the wait tree and
 * the backlog. A slot it held goes to the oldest request of the backlog.
 */
static void ib_mad_send_unhash_locked(struct ib_mad_send_wr_private *wr)
{
	struct ib_mad_agent_private *priv = wr->mad_agent_priv;

	lockdep_assert_held(&priv->lock);
	hash_del(&wr->tid_node);
	ib_mad_send_unwait_locked(wr);
	ib_mad_send_fc_release_locked(wr);
}

/*
 * Arm the agent's work: now if completions wait on the done list, else for
 * the earliest deadline in the wait tree.
 */
static void ib_mad_agent_rearm_locked(struct ib_mad_agent_private *priv)
{
	struct ib_mad_send_wr_private *first;
	long delay = 0;

	lockdep_assert_held(&priv->lock);
	if (list_empty(&priv->done_list)) {
		first = ib_mad_agent_first_wait_locked(priv);
		if (!first)
			return;
		delay = max_t(long, (long)(first->timeout - jiffies), 0);
	}
	mod_delayed_work(ib_mad_agent_port(priv)->wq, &priv->timed_work, delay);
}

static void ib_mad_send_late_remember_locked(struct ib_mad_send_wr_private *wr);

/*
 * The one way a send ends: it leaves the TID hash and its list and becomes
 * DONE. Its completion then runs either from the timed work (@defer: it
 * waits on the done list, and the caller makes sure the work runs) or by
 * the caller, with ib_mad_send_complete() once the agent lock is dropped.
 */
static void ib_mad_send_done_locked(struct ib_mad_send_wr_private *wr,
				    bool defer)
{
	struct ib_mad_agent_private *priv = wr->mad_agent_priv;

	lockdep_assert_held(&priv->lock);
	ib_mad_send_unhash_locked(wr);
	ib_mad_send_late_remember_locked(wr);
	wr->state = IB_MAD_SEND_DONE;
	if (defer)
		list_add_tail(&wr->agent_list, &priv->done_list);
}

/*
 * Run the completion of a DONE send. No MAD lock held. The handler may
 * free the buffer and, with it, drop the last reference on the agent.
 */
static void ib_mad_send_complete(struct ib_mad_send_wr_private *wr)
{
	struct ib_mad_agent_private *priv = wr->mad_agent_priv;
	struct ib_mad_port_private *port = ib_mad_agent_port(priv);
	struct ib_mad_send_wc wc = {
		.send_buf = &wr->send_buf,
		.status = wr->status,
		.vendor_err = wr->vendor_err,
	};

	trace_ib_mad_send_complete(wr, &wc);
	ib_mad_stat_dec(port, IB_MAD_STAT_OUTSTANDING);
	if (wc.status == IB_WC_RESP_TIMEOUT_ERR)
		ib_mad_stat_inc(port, IB_MAD_STAT_TIMEOUT);
	if (wr->internal_done)
		wr->internal_done(wr, &wc);
	else
		priv->agent.send_handler(&priv->agent, &wc);
}

/*
 * Map the header and the payload (ib_mad_send_payload()) of a send and hand
 * its work request to the QP or its overflow list. On error nothing was
 * posted and nothing stays mapped. No MAD lock needed: the caller owns the
 * work request until it is posted (wr_inflight already counts it, or the
 * agent lock is held).
 */
static int ib_mad_send_map_post(struct ib_mad_send_wr_private *wr)
{
	struct ib_device *dev = wr->mad_agent_priv->agent.device;
	void *payload = ib_mad_send_payload(wr);
	int ret;

	if (WARN_ON_ONCE(!payload))
		return -EINVAL;
	wr->sg_list[0].addr = ib_dma_map_single(dev, wr->send_buf.mad,
						wr->sg_list[0].length,
						DMA_TO_DEVICE);
	if (unlikely(ib_dma_mapping_error(dev, wr->sg_list[0].addr)))
		return -ENOMEM;
	wr->sg_list[1].addr = ib_dma_map_single(dev, payload,
						wr->sg_list[1].length,
						DMA_TO_DEVICE);
	if (unlikely(ib_dma_mapping_error(dev, wr->sg_list[1].addr))) {
		ret = -ENOMEM;
		goto err_unmap_header;
	}
	wr->header_mapping = wr->sg_list[0].addr;
	wr->payload_mapping = wr->sg_list[1].addr;
	ret = ib_mad_qp_post_send(wr);
	if (ret)
		goto err_unmap_payload;
	return 0;

err_unmap_payload:
	ib_dma_unmap_single(dev, wr->sg_list[1].addr, wr->sg_list[1].length,
			    DMA_TO_DEVICE);
err_unmap_header:
	ib_dma_unmap_single(dev, wr->sg_list[0].addr, wr->sg_list[0].length,
			    DMA_TO_DEVICE);
	return ret;
}

/**
 * ib_mad_send_post_locked() - post one work request of a send
 * @wr: the send, ON_WIRE or WAIT_RESP
 *
 * Maps the header and the payload (ib_mad_send_payload()) and hands the
 * work request to the QP or its overflow list. The send becomes ON_WIRE.
 * Used for retries, RMPP segments and requests leaving a backlog; the
 * first transmission of a plain send posts without the agent lock (see
 * ib_mad_send_one()).
 *
 * Context: agent lock held; does not sleep.
 * Return: 0 or a negative errno; on error nothing was posted.
 */
int ib_mad_send_post_locked(struct ib_mad_send_wr_private *wr)
{
	int ret;

	lockdep_assert_held(&wr->mad_agent_priv->lock);
	ret = ib_mad_send_map_post(wr);
	if (ret)
		return ret;
	wr->wr_inflight++;
	wr->state = IB_MAD_SEND_ON_WIRE;
	ib_mad_send_unwait_locked(wr);
	trace_ib_mad_send_post(wr);
	return 0;
}

/**
 * ib_mad_send_wait_locked() - wait for a response or an ACK
 * @wr: an ON_WIRE send with no work request in flight, or a WAIT_RESP one
 * @timeout_ms: how long to wait from now
 *
 * The send moves to WAIT_RESP, into the agent's wait tree. When the
 * time is up the timed work retries it or completes it with
 * IB_WC_RESP_TIMEOUT_ERR.
 *
 * Context: agent lock held; does not sleep.
 */
void ib_mad_send_wait_locked(struct ib_mad_send_wr_private *wr,
			     unsigned int timeout_ms)
{
	struct ib_mad_agent_private *priv = wr->mad_agent_priv;

	lockdep_assert_held(&priv->lock);
	if (WARN_ON_ONCE(wr->wr_inflight ||
			 (wr->state != IB_MAD_SEND_ON_WIRE &&
			  wr->state != IB_MAD_SEND_WAIT_RESP)))
		return;
	wr->state = IB_MAD_SEND_WAIT_RESP;
	wr->wait_start = jiffies;
	ib_mad_send_wait_until_locked(wr, jiffies + msecs_to_jiffies(timeout_ms));
}

/* The slot of @key in @priv's table of late destinations. */
static struct ib_mad_late_dest *
ib_mad_late_slot(struct ib_mad_agent_private *priv, u64 key)
{
	return &priv->late[hash_64(key, IB_MAD_LATE_BITS)];
}

/*
 * The late level of destination @key: how many times the tries of a
 * request to it double their wait. Agent lock held.
 */
static unsigned int ib_mad_late_level_locked(struct ib_mad_agent_private *priv,
					     u64 key)
{
	struct ib_mad_late_dest *late = ib_mad_late_slot(priv, key);

	if (!late->level || late->key != key)
		return 0;
	if (time_after(jiffies, late->raised +
		       msecs_to_jiffies(IB_MAD_LATE_TTL_MS))) {
		late->level = 0;
		return 0;
	}
	return late->level;
}

/* The slot of the request with @tid in @priv's table of late requests. */
static struct ib_mad_late_req *
ib_mad_late_req_slot(struct ib_mad_agent_private *priv, __be64 tid)
{
	return &priv->late_reqs[hash_64((__force u64)tid,
					IB_MAD_LATE_REQ_BITS)];
}

/*
 * @wr finishes: if it is a flow-controlled request that was retried or
 * timed out, an answer to it may still come, and that one is late.
 */
static void ib_mad_send_late_remember_locked(struct ib_mad_send_wr_private *wr)
{
	struct ib_mad_late_req *req;

	lockdep_assert_held(&wr->mad_agent_priv->lock);
	if (!wr->fc || (!wr->send_buf.retries &&
			wr->status != IB_WC_RESP_TIMEOUT_ERR))
		return;
	req = ib_mad_late_req_slot(wr->mad_agent_priv, wr->tid);
	req->tid = wr->tid;
	req->key = wr->fc_key;
	req->done = jiffies;
	req->used = true;
}

/**
 * ib_mad_send_late_answer_locked() - a response came after its request
 * @priv: the agent that sent the request
 * @tid: the TID of the response, which matched no outstanding request
 *
 * A response that answers a flow-controlled request of the agent that
 * finished after a retry or a timeout, within IB_MAD_LATE_ANSWER_MS: its
 * responder took longer than the request's timeout. Under a load such as
 * every node of a fabric querying the SA at once, each retry sent that
 * early only adds another copy to the responder's queue, and the extra
 * copies delay every answer further until hardly any comes in time. So
 * the agent remembers the destination it sent that request to: a late
 * answer raises its level by one (at most once per IB_MAD_LATE_RAISE_MS,
 * up to IB_MAD_FC_BACKOFF_MAX), and each try of a flow-controlled request
 * to it then waits 2^level times its timeout, never past the request's
 * total deadline. An answer to a request sent once, in less than half
 * that wait, lowers the level again (ib_mad_send_late_fast_locked()). A
 * request or a response that is lost leaves no late answer behind, so on
 * a lossy but prompt fabric every try the caller allows is still sent on
 * time.
 *
 * The destination is the one the request went to, never one read from
 * the response: a directed-route response carries a path its sender
 * chose, and any source LID can be forged. Each request counts once, so
 * forged responses can at most repeat what real retries showed, for
 * requests whose TIDs they guess.
 *
 * Context: agent lock held.
 */
void ib_mad_send_late_answer_locked(struct ib_mad_agent_private *priv,
				    __be64 tid)
{
	struct ib_mad_late_req *req = ib_mad_late_req_slot(priv, tid);
	struct ib_mad_late_dest *late;
	unsigned int level;

	lockdep_assert_held(&priv->lock);
	if (!req->used || req->tid != tid ||
	    time_after(jiffies, req->done +
		       msecs_to_jiffies(IB_MAD_LATE_ANSWER_MS)))
		return;
	req->used = false;
	late = ib_mad_late_slot(priv, req->key);
	level = ib_mad_late_level_locked(priv, req->key);
	if (level && time_before(jiffies, late->raised +
				 msecs_to_jiffies(IB_MAD_LATE_RAISE_MS)))
		return;
	late->key = req->key;
	late->level = min(level + 1, IB_MAD_FC_BACKOFF_MAX);
	late->raised = jiffies;
	ib_mad_stat_inc(ib_mad_agent_port(priv), IB_MAD_STAT_FC_LATE);
}
EXPORT_SYMBOL_IF_KUNIT(ib_mad_send_late_answer_locked);

/*
 * @wr was answered: if it went out once and its answer came in less than
 * half its wait, its destination is not late any more by one level.
 */
static void ib_mad_send_late_fast_locked(struct ib_mad_send_wr_private *wr)
{
	struct ib_mad_agent_private *priv = wr->mad_agent_priv;
	struct ib_mad_late_dest *late;
	unsigned int level;
	u64 half;

	if (!wr->fc || wr->send_buf.retries || wr->state != IB_MAD_SEND_WAIT_RESP)
		return;
	level = ib_mad_late_level_locked(priv, wr->fc_key);
	if (!level)
		return;
	half = (u64)wr->send_buf.timeout_ms << (level - 1);
	if (jiffies_to_msecs(jiffies - wr->wait_start) >= half)
		return;
	late = ib_mad_late_slot(priv, wr->fc_key);
	late->level--;
}

/*
 * Is the destination of a flow-controlled request overloaded: requests
 * waiting for a slot, or three quarters of its slots taken? Then retries
 * back off (so do tries to a destination that answers late, see
 * ib_mad_send_late_answer_locked()): a request that is merely lost (a
 * dropped packet, a dead node) keeps every try its caller allowed. A
 * request that gave its slot back (its responder sent an MRA) is not
 * limited any more.
 */
static bool ib_mad_send_fc_busy(const struct ib_mad_send_wr_private *wr)
{
	const struct ib_mad_fc_dest *dest = wr->fc_dest;

	return dest && (!list_empty(&dest->backlog) ||
			(u64)dest->active * 4 >=
			(u64)wr->mad_agent_priv->fc_max * 3);
}

/*
 * Whether a try of flow-controlled @wr sent now would have less than half
 * its timeout before the request's total deadline: such a try is not
 * worth sending. Other sends have no total deadline (each try waits its
 * timeout from its send completion, as upstream's do).
 */
static bool ib_mad_send_too_late(const struct ib_mad_send_wr_private *wr)
{
	unsigned long half = msecs_to_jiffies(wr->send_buf.timeout_ms) / 2;

	return wr->fc && time_after(jiffies + half, wr->deadline);
}

/*
 * Whether @wr, waiting on its destination's backlog, is too late for its
 * first try. It waited because the destination was overloaded, where an
 * answer takes longer: it must still have a whole try (its timeout)
 * before the deadline, or half its total time if that is shorter (no
 * retries). A try sent with less mostly times out at the requester while
 * the responder still spends its time answering it, and under sustained
 * overload such late tries fill the responder's queue until almost no
 * answer comes in time (make bench overload-500 on the test kernels: 18
 * answered a second with the half-timeout rule, 223 with this one).
 */
static bool
ib_mad_send_promote_too_late(const struct ib_mad_send_wr_private *wr)
{
	unsigned long t = msecs_to_jiffies(wr->send_buf.timeout_ms);
	unsigned long need = min(t, t * (unsigned long)(wr->retries_left + 1) / 2);

	return time_after(jiffies + need, wr->deadline);
}

/*
 * How long to wait for the response to the transmission that just ended.
 *
 * A send that is not flow-controlled waits its timeout. A flow-controlled
 * request keeps to a schedule anchored at its total deadline: try k of
 * n ends where the n - k tries after it begin, so the lateness of one try
 * (a late timer, a slow send completion) shortens its own wait rather than
 * pushing every later try, and the last one past the deadline. A request
 * behind its schedule (sent late from a backlog) waits a whole timeout,
 * but never past the deadline, and its later tries are cut instead. On an
 * overloaded destination its retries back off: each waits twice as long as the
 * one before, so that the responder gets time to drain its queue rather
 * than more copies of the same request, again never past the deadline.
 * To a destination whose answers have come late, every try, the first
 * too, waits 2^level times the timeout (ib_mad_send_late_answer_locked()),
 * within the deadline as well.
 */
VISIBLE_IF_KUNIT unsigned int
ib_mad_send_resp_wait_ms(struct ib_mad_send_wr_private *wr)
{
	unsigned int ms = wr->send_buf.timeout_ms, shift = 0;
	unsigned long now = jiffies, t = msecs_to_jiffies(ms), end;
	long left = (long)(wr->deadline - now);
	u64 backoff;

	if (!wr->fc)
		return ms;
	if (left <= 0)
		return 0;
	if (wr->send_buf.retries && ib_mad_send_fc_busy(wr))
		shift = min(wr->send_buf.retries, IB_MAD_FC_BACKOFF_MAX);
	shift = max(shift, ib_mad_late_level_locked(wr->mad_agent_priv,
						    wr->fc_key));
	if (shift) {
		backoff = (u64)ms << shift;
		backoff = min_t(u64, backoff, jiffies_to_msecs(left));
		if (backoff > ms)
			ib_mad_stat_inc(ib_mad_agent_port(wr->mad_agent_priv),
					IB_MAD_STAT_FC_BACKOFF);
		return backoff;
	}
	end = wr->deadline - min_t(u64, (u64)t * wr->retries_left, left);
	if (time_after(end, now + t))
		end = now + t;
	else if (time_before(end, now + t / 2))
		end = now + min_t(unsigned long, t, left);
	return jiffies_to_msecs(end - now);
}
EXPORT_SYMBOL_IF_KUNIT(ib_mad_send_resp_wait_ms);

/*
 * All data of a send reached the peer (sent, or for RMPP acknowledged):
 * wait for the response if one is expected and nothing failed, else the
 * send is done. @defer as for ib_mad_send_done_locked(). Returns true if
 * the caller must run the completion.
 */
static bool ib_mad_send_data_sent_locked(struct ib_mad_send_wr_private *wr,
					 bool defer)
{
	if (wr->status == IB_WC_SUCCESS && wr->expect_resp) {
		ib_mad_send_wait_locked(wr, ib_mad_send_resp_wait_ms(wr));
		return false;
	}
	ib_mad_send_done_locked(wr, defer);
	if (defer)
		ib_mad_agent_rearm_locked(wr->mad_agent_priv);
	return !defer;
}

/**
 * ib_mad_send_acked_locked() - the receiver acknowledged the whole message
 * @wr: an RMPP send with no work request in flight
 *
 * Waits for the response if one is expected, else completes the send with
 * success (from the timed work).
 *
 * Context: agent lock held; does not sleep.
 */
void ib_mad_send_acked_locked(struct ib_mad_send_wr_private *wr)
{
	lockdep_assert_held(&wr->mad_agent_priv->lock);
	if (WARN_ON_ONCE(wr->wr_inflight))
		return;
	ib_mad_send_data_sent_locked(wr, true);
}

/**
 * ib_mad_send_finish_locked() - end an outstanding send now
 * @wr: a QUEUED, ON_WIRE or WAIT_RESP send
 * @status: completion status to report (the first error sticks)
 * @vendor_err: reported with @status, e.g. the RMPP status of an ABORT
 *
 * The send leaves the TID hash at once. Its completion runs from the timed
 * work, or when its last work request completes if some are in flight.
 *
 * Context: agent lock held; does not sleep.
 */
void ib_mad_send_finish_locked(struct ib_mad_send_wr_private *wr,
			       enum ib_wc_status status, u32 vendor_err)
{
	lockdep_assert_held(&wr->mad_agent_priv->lock);
	if (wr->state != IB_MAD_SEND_ON_WIRE &&
	    wr->state != IB_MAD_SEND_WAIT_RESP &&
	    wr->state != IB_MAD_SEND_QUEUED)
		return;
	if (wr->status == IB_WC_SUCCESS) {
		wr->status = status;
		wr->vendor_err = vendor_err;
	}
	if (wr->wr_inflight) {
		ib_mad_send_unhash_locked(wr);
		wr->state = IB_MAD_SEND_CANCELLED;
		return;
	}
	ib_mad_send_done_locked(wr, true);
	ib_mad_agent_rearm_locked(wr->mad_agent_priv);
}

/**
 * ib_mad_send_wc_done() - one work request of a send completed
 * @wr: the send
 * @wc: the verbs completion
 *
 * Called by the port's CQ handler after the WR was unmapped and left the
 * send queue. Advances the state machine; runs the send handler if the
 * send is over.
 *
 * Context: process context (CQ work), no MAD lock held.
 */
void ib_mad_send_wc_done(struct ib_mad_send_wr_private *wr,
			 const struct ib_wc *wc)
{
	struct ib_mad_agent_private *priv = wr->mad_agent_priv;
	struct ib_mad_send_wc swc = {
		.send_buf = &wr->send_buf,
		.status = wc->status,
		.vendor_err = wc->vendor_err,
	};
	bool complete = false;
	unsigned long flags;

	spin_lock_irqsave(&priv->lock, flags);
	if (WARN_ON_ONCE(!wr->wr_inflight))
		goto out_unlock;
	wr->wr_inflight--;
	if (wc->status != IB_WC_SUCCESS && wr->status == IB_WC_SUCCESS) {
		wr->status = wc->status;
		wr->vendor_err = wc->vendor_err;
	}

	switch (wr->state) {
	case IB_MAD_SEND_ON_WIRE:
		if (wr->wr_inflight)
			break;
		if (wr->status == IB_WC_SUCCESS && wr->rmpp_active &&
		    ib_mad_rmpp_send_wc(wr, &swc) == IB_MAD_RMPP_SEND_HANDLED)
			break;
		complete = ib_mad_send_data_sent_locked(wr, false);
		break;
	case IB_MAD_SEND_RESPONDED:
		if (!wr->wr_inflight && !wr->resp_pending) {
			wr->status = IB_WC_SUCCESS;
			ib_mad_send_done_locked(wr, false);
			complete = true;
		}
		break;
	case IB_MAD_SEND_CANCELLED:
		if (!wr->wr_inflight) {
			ib_mad_send_done_locked(wr, false);
			complete = true;
		}
		break;
	default:
		WARN_ONCE(1, "MAD send completion in state %d\n", wr->state);
		break;
	}
out_unlock:
	spin_unlock_irqrestore(&priv->lock, flags);
	if (complete)
		ib_mad_send_complete(wr);
}
EXPORT_SYMBOL_IF_KUNIT(ib_mad_send_wc_done);

/**
 * ib_mad_send_response_begin_locked() - a response matched this send
 * @wr: the send, found by ib_mad_find_send_locked()
 *
 * The send leaves the TID hash and the wait tree and becomes RESPONDED;
 * its completion waits for ib_mad_send_response_done() and for any work
 * request still in flight.
 *
 * Context: agent lock held.
 */
void ib_mad_send_response_begin_locked(struct ib_mad_send_wr_private *wr)
{
	lockdep_assert_held(&wr->mad_agent_priv->lock);
	ib_mad_send_late_fast_locked(wr);
	ib_mad_send_unhash_locked(wr);
	wr->state = IB_MAD_SEND_RESPONDED;
	wr->resp_pending = true;
}

/**
 * ib_mad_send_response_done() - the response's receive handler returned
 * @wr: a RESPONDED send
 *
 * Completes the send with success unless a work request is still in
 * flight (the response overtook the send completion); then the CQ handler
 * completes it.
 *
 * Context: process context, no MAD lock held.
 */
void ib_mad_send_response_done(struct ib_mad_send_wr_private *wr)
{
	struct ib_mad_agent_private *priv = wr->mad_agent_priv;
	bool complete = false;
	unsigned long flags;

	spin_lock_irqsave(&priv->lock, flags);
	wr->resp_pending = false;
	if (!wr->wr_inflight) {
		wr->status = IB_WC_SUCCESS;
		ib_mad_send_done_locked(wr, false);
		complete = true;
	}
	spin_unlock_irqrestore(&priv->lock, flags);
	if (complete)
		ib_mad_send_complete(wr);
}

/* Lookup -------------------------------------------------------------- */

static bool ib_mad_send_same_class(const struct ib_mad_send_wr_private *wr,
				   const struct ib_mad_recv_wc *recv_wc)
{
	const struct ib_mad_hdr *hdr = wr->send_buf.mad;

	return hdr->mgmt_class == recv_wc->recv_buf.mad->mad_hdr.mgmt_class;
}

static bool ib_mad_send_matches(struct ib_mad_agent_private *priv,
				const struct ib_mad_send_wr_private *wr,
				const struct ib_mad_recv_wc *recv_wc)
{
	const struct ib_mad_hdr *hdr = &recv_wc->recv_buf.mad->mad_hdr;

	if (wr->tid != hdr->tid || wr->status != IB_WC_SUCCESS ||
	    !ib_mad_send_same_class(wr, recv_wc))
		return false;
	/* Directed-route SMPs may come back with permissive LIDs. */
	if (hdr->mgmt_class == IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE)
		return true;
	return ib_mad_recv_matches_send(priv, wr, recv_wc);
}

/**
 * ib_mad_find_send_locked() - find the request a response answers
 * @priv: the agent the response was routed to
 * @recv_wc: the response
 *
 * Looks in the agent's TID hash for an outstanding send that expects a
 * response with this TID and class, sent to where the response comes
 * from.
 *
 * Context: agent lock held.
 * Return: the send, or NULL.
 */
struct ib_mad_send_wr_private *
ib_mad_find_send_locked(struct ib_mad_agent_private *priv,
			const struct ib_mad_recv_wc *recv_wc)
{
	__be64 tid = recv_wc->recv_buf.mad->mad_hdr.tid;
	struct ib_mad_send_wr_private *wr;

	lockdep_assert_held(&priv->lock);
	hash_for_each_possible(priv->send_hash, wr, tid_node, (__force u64)tid)
		if (wr->expect_resp && !wr->internal_done &&
		    wr->state != IB_MAD_SEND_QUEUED &&
		    ib_mad_send_matches(priv, wr, recv_wc))
			return wr;
	return NULL;
}

/**
 * ib_mad_find_rmpp_send_locked() - find the RMPP send an ACK/STOP/ABORT is for
 * @priv: the agent
 * @recv_wc: the RMPP control MAD
 *
 * Context: agent lock held.
 * Return: the outstanding kernel-RMPP send with the same TID and class to
 * the sender of @recv_wc, or NULL.
 */
struct ib_mad_send_wr_private *
ib_mad_find_rmpp_send_locked(struct ib_mad_agent_private *priv,
			     const struct ib_mad_recv_wc *recv_wc)
{
	__be64 tid = recv_wc->recv_buf.mad->mad_hdr.tid;
	struct ib_mad_send_wr_private *wr;

	lockdep_assert_held(&priv->lock);
	hash_for_each_possible(priv->send_hash, wr, tid_node, (__force u64)tid)
		if (wr->rmpp_active && ib_mad_send_matches(priv, wr, recv_wc))
			return wr;
	return NULL;
}

/* Posting -------------------------------------------------------------- */

/* The jiffies by which @tries tries of @timeout_ms each are over. */
static unsigned long ib_mad_send_deadline(unsigned int timeout_ms, u64 tries)
{
	u64 total = (u64)msecs_to_jiffies(timeout_ms) * tries;

	return jiffies + min_t(u64, total, MAX_JIFFY_OFFSET / 2);
}

/*
 * Check that the agent may send this buffer now and, if so, reset its
 * per-post state: the TID it is matched by, the retry budget taken from
 * send_buf.retries (which from now on counts the retries used) and whether
 * the kernel runs RMPP for it.
 */
static int ib_mad_send_accept(struct ib_mad_agent_private *priv,
			      struct ib_mad_send_wr_private *wr)
{
	struct ib_rmpp_mad *rmpp_mad = wr->send_buf.mad;
	const struct ib_mad_hdr *hdr = &rmpp_mad->mad_hdr;
	int ret;

	if (wr->state != IB_MAD_SEND_IDLE && wr->state != IB_MAD_SEND_DONE)
		return -EBUSY;
	ret = ib_mad_enforce_security(priv, wr->send_wr.pkey_index);
	if (ret)
		return ret;
	if (!priv->agent.send_handler)
		return -EINVAL;
	if (wr->send_buf.timeout_ms < 0 || wr->send_buf.retries < 0)
		return -EINVAL;
	if (priv->agent.rmpp_version && !ib_is_mad_class_rmpp(hdr->mgmt_class))
		return -EINVAL;

	wr->rmpp_active = ib_mad_kernel_rmpp_agent(&priv->agent) &&
			  wr->send_buf.seg_count &&
			  (ib_get_rmpp_flags(&rmpp_mad->rmpp_hdr) &
			   IB_MGMT_RMPP_FLAG_ACTIVE);
	/*
	 * A timeout on a send-only agent is a wait that no response ends
	 * (see &ib_mad_send_buf.timeout_ms): 7.x's ib_cm sends its REPs so.
	 * An RMPP transfer, though, needs the ACKs such an agent never gets.
	 */
	if (wr->rmpp_active && !priv->agent.recv_handler)
		return -EINVAL;
	wr->send_wr.ah = wr->send_buf.ah;
	wr->tid = hdr->tid;
	wr->max_retries = wr->send_buf.retries;
	wr->retries_left = wr->send_buf.retries;
	wr->send_buf.retries = 0;
	wr->status = IB_WC_SUCCESS;
	wr->vendor_err = 0;
	wr->expect_resp = wr->send_buf.timeout_ms > 0;
	wr->deadline = ib_mad_send_deadline(wr->send_buf.timeout_ms,
					    (u64)wr->max_retries + 1);
	wr->fc = priv->fc_max > 0 && wr->expect_resp && !wr->rmpp_active &&
		 ib_mad_fc_request(hdr);
	if (wr->fc)
		wr->fc_key = ib_mad_fc_key(hdr, wr->send_buf.ah);
	wr->fc_slot = false;
	wr->fc_dest = NULL;
	wr->resp_pending = false;
	wr->repost_on_flush = false;
	wr->wr_inflight = 0;
	return 0;
}

/* A flow-controlled send posted: it holds one of its destination's slots. */
static void ib_mad_send_fc_take_locked(struct ib_mad_send_wr_private *wr)
{
	wr->fc_slot = true;
	wr->fc_dest->active++;
	wr->mad_agent_priv->fc_active++;
}

/*
 * Hand the free slots of @dest to its backlog, oldest request first, and
 * free @dest once nothing uses it. A request whose deadline (nearly) went
 * by on the backlog completes unsent with IB_WC_RESP_TIMEOUT_ERR; one the
 * QP refuses with IB_WC_GENERAL_ERR (its poster got 0 long ago). Nothing
 * starts once the agent is dying: unregistration cancels the backlog.
 *
 * Completing a request here comes back through
 * ib_mad_send_fc_release_locked(): @dest is then settling already and
 * is left to this loop.
 */
static void ib_mad_fc_settle_locked(struct ib_mad_agent_private *priv,
				    struct ib_mad_fc_dest *dest)
{
	struct ib_mad_port_private *port = ib_mad_agent_port(priv);
	struct ib_mad_send_wr_private *wr;

	lockdep_assert_held(&priv->lock);
	if (dest->settling)
		return;
	dest->settling = true;
	while (!priv->dying && dest->active < priv->fc_max &&
	       !list_empty(&dest->backlog)) {
		wr = list_first_entry(&dest->backlog,
				      struct ib_mad_send_wr_private, agent_list);
		if (ib_mad_send_promote_too_late(wr)) {
			ib_mad_stat_inc(port, IB_MAD_STAT_FC_DROPPED);
			wr->status = IB_WC_RESP_TIMEOUT_ERR;
			ib_mad_send_done_locked(wr, true);
			ib_mad_agent_rearm_locked(priv);
			continue;
		}
		list_del_init(&wr->agent_list);
		ib_mad_stat_dec(port, IB_MAD_STAT_FC_BACKLOG);
		wr->state = IB_MAD_SEND_ON_WIRE;
		if (!ib_mad_send_post_locked(wr)) {
			ib_mad_send_fc_take_locked(wr);
			continue;
		}
		wr->status = IB_WC_GENERAL_ERR;
		ib_mad_send_done_locked(wr, true);
		ib_mad_agent_rearm_locked(priv);
	}
	dest->settling = false;
	if (!dest->active && list_empty(&dest->backlog)) {
		hash_del(&dest->node);
		kfree(dest);
	}
}

/* The flow control toward destination @key, created if need be. */
static struct ib_mad_fc_dest *
ib_mad_fc_dest_get_locked(struct ib_mad_agent_private *priv, u64 key)
{
	struct ib_mad_fc_dest *dest;

	hash_for_each_possible(priv->fc_dests, dest, node, key)
		if (dest->key == key)
			return dest;
	/* Under a spinlock, and ib_post_send_mad() may be called atomic. */
	dest = kzalloc(sizeof(*dest), GFP_ATOMIC);
	if (!dest)
		return NULL;
	dest->key = key;
	INIT_LIST_HEAD(&dest->backlog);
	hash_add(priv->fc_dests, &dest->node, key);
	return dest;
}

/*
 * Put a flow-controlled request on its destination's backlog when it has
 * no free slot, or when older requests to it wait (first come, first
 * served). It waits there until its total deadline at most. Returns true
 * if it was queued. Without memory for the destination's state the
 * request goes out unlimited.
 */
static bool ib_mad_send_fc_queue_locked(struct ib_mad_send_wr_private *wr)
{
	struct ib_mad_agent_private *priv = wr->mad_agent_priv;
	struct ib_mad_port_private *port = ib_mad_agent_port(priv);
	struct ib_mad_fc_dest *dest;

	if (!wr->fc)
		return false;
	dest = ib_mad_fc_dest_get_locked(priv, wr->fc_key);
	if (!dest) {
		wr->fc = false;
		return false;
	}
	wr->fc_dest = dest;
	if (dest->active < priv->fc_max && list_empty(&dest->backlog))
		return false;
	wr->state = IB_MAD_SEND_QUEUED;
	list_add_tail(&wr->agent_list, &dest->backlog);
	ib_mad_send_wait_until_locked(wr, wr->deadline);
	ib_mad_stat_inc(port, IB_MAD_STAT_FC_QUEUED);
	ib_mad_stat_inc(port, IB_MAD_STAT_FC_BACKLOG);
	trace_ib_mad_send_queued(wr);
	return true;
}

/*
 * The QP refused the first work request of a send that ib_mad_send_one()
 * posted without the agent lock. If nothing touched the send meanwhile it
 * is taken back and stays with the caller: @err is returned. If a response
 * or a cancel (ib_modify_mad(), unregistration) found it in the window, the
 * send was already visible as posted: it completes like any other, from
 * the timed work, and 0 is returned, so that the handler runs exactly once.
 */
static int ib_mad_send_post_failed(struct ib_mad_send_wr_private *wr, int err)
{
	struct ib_mad_agent_private *priv = wr->mad_agent_priv;
	unsigned long flags;

	spin_lock_irqsave(&priv->lock, flags);
	wr->wr_inflight--;
	switch (wr->state) {
	case IB_MAD_SEND_ON_WIRE:
		/* Frees the flow-control slot, if it held one. */
		ib_mad_send_unhash_locked(wr);
		wr->state = IB_MAD_SEND_IDLE;
		spin_unlock_irqrestore(&priv->lock, flags);
		return err;
	case IB_MAD_SEND_RESPONDED:
		/* Still in the receive handler: it completes the send. */
		if (wr->resp_pending)
			break;
		wr->status = IB_WC_SUCCESS;
		ib_mad_send_done_locked(wr, true);
		ib_mad_agent_rearm_locked(priv);
		break;
	case IB_MAD_SEND_CANCELLED:
		/* Its status (IB_WC_WR_FLUSH_ERR) is set already. */
		ib_mad_send_done_locked(wr, true);
		ib_mad_agent_rearm_locked(priv);
		break;
	default:
		WARN_ONCE(1, "MAD send post failed in state %d\n", wr->state);
		break;
	}
	spin_unlock_irqrestore(&priv->lock, flags);
	return 0;
}

/*
 * Start one accepted send: on the backlog if flow control says so, else
 * onto the QP. A plain send becomes outstanding (ON_WIRE, in the TID hash,
 * its work request counted in flight) under the agent lock and is posted
 * after the lock is dropped, so that a response being matched on another
 * CPU does not wait for the driver's post. An RMPP send builds its first
 * window under the lock and posts there.
 */
static int ib_mad_send_one(struct ib_mad_agent_private *priv,
			   struct ib_mad_send_wr_private *wr)
{
	unsigned long flags;
	int ret;

	spin_lock_irqsave(&priv->lock, flags);
	if (priv->dying) {
		/* Unregistration flushed the sends already: none may start. */
		spin_unlock_irqrestore(&priv->lock, flags);
		return -ESHUTDOWN;
	}
	hash_add(priv->send_hash, &wr->tid_node, (__force u64)wr->tid);
	if (ib_mad_send_fc_queue_locked(wr)) {
		spin_unlock_irqrestore(&priv->lock, flags);
		return 0;
	}
	wr->state = IB_MAD_SEND_ON_WIRE;
	if (wr->rmpp_active) {
		ret = ib_mad_rmpp_send_start(wr);
		if (!ret)
			ret = ib_mad_send_post_locked(wr);
		if (ret) {
			ib_mad_send_unhash_locked(wr);
			wr->state = IB_MAD_SEND_IDLE;
		}
		spin_unlock_irqrestore(&priv->lock, flags);
		return ret;
	}
	wr->wr_inflight++;
	if (wr->fc)
		ib_mad_send_fc_take_locked(wr);
	trace_ib_mad_send_post(wr);
	spin_unlock_irqrestore(&priv->lock, flags);

	/* Once posted, its completion may free @wr on another CPU. */
	ret = ib_mad_send_map_post(wr);
	if (unlikely(ret))
		return ib_mad_send_post_failed(wr, ret);
	return 0;
}

/**
 * ib_post_send_mad() - post MADs to the agent's QP
 * @send_buf: first buffer of a chain linked through send_buf->next
 * @bad_send_buf: set to the first buffer that was not posted, on error;
 *	may be NULL when a single buffer is posted
 *
 * Each buffer is checked (security, handlers, class vs RMPP), gets its TID
 * recorded and its retry budget taken from send_buf->retries (which then
 * counts the retries used), and is handed to the QP. A buffer with an
 * RMPP header marked active on a kernel RMPP agent is sent with RMPP: the
 * buffer holds one copy of the headers and the class data in segments;
 * the caller does not set paylen_newwin, the layer writes the RMPP header
 * of every segment it sends (see <rdma/ib_mad.h>). Directed-route SMPs
 * for the local node are answered by the driver without going to the
 * wire.
 *
 * Requests to the SA, SMPs and the CM messages that open an exchange are
 * flow-controlled when they expect a response: an agent keeps at most a
 * quarter of a receive ring's worth of them (recv_queue_size / 4)
 * outstanding at each destination, and later ones to that destination
 * wait, accepted, on its backlog in the order they were posted. The
 * caller's total deadline, timeout_ms for the first try and for each
 * retry, runs from this call, and the tries keep to it: a request still
 * on the backlog then completes with IB_WC_RESP_TIMEOUT_ERR unsent. When
 * the destination is overloaded their retries back off, each waiting
 * twice as long as the one before, within that same deadline; toward a
 * destination whose answers have come after their requests were retried
 * or given up, every try waits longer, within that deadline too.
 *
 * Sends may complete in any order. The send handler runs exactly once for
 * every buffer posted here, never from within this call; a buffer that
 * was not posted stays with the caller. A buffer that another thread
 * cancelled, or whose response arrived, while this call was handing it to
 * the QP counts as posted even if the QP then refuses it: its handler
 * reports the cancel or the response.
 *
 * Once ib_unregister_mad_agent() has begun for the buffer's agent, posting
 * fails with -ESHUTDOWN: the sends it cancelled are gone, and a new one
 * would make it wait for that send's timeouts and retries.
 *
 * Context: any, including atomic context and with spinlocks held.
 * Return: 0, or a negative errno for the buffer named in @bad_send_buf:
 * -ESHUTDOWN when the agent is being unregistered, -ENODEV when its port
 * is going away, -EBUSY when the buffer is already posted, -EINVAL for a
 * buffer the agent cannot send, -ENOMEM, or an error of the QP.
 */
int ib_post_send_mad(struct ib_mad_send_buf *send_buf,
		     struct ib_mad_send_buf **bad_send_buf)
{
	struct ib_mad_send_buf *next;
	int ret = -EINVAL;

	for (; send_buf; send_buf = next) {
		struct ib_mad_send_wr_private *wr = ib_mad_send_wr(send_buf);
		struct ib_mad_agent_private *priv = wr->mad_agent_priv;
		const struct ib_mad_hdr *hdr = send_buf->mad;

		ret = ib_mad_send_accept(priv, wr);
		if (ret)
			goto err;
		if (priv->dup && hdr->mgmt_class == IB_MGMT_CLASS_SUBN_ADM &&
		    ib_response_mad(hdr))
			ib_mad_dup_answered(priv, wr);
		/* The handler of this buffer may repost or free it. */
		next = send_buf->next;
		ib_mad_stat_inc(ib_mad_agent_port(priv), IB_MAD_STAT_OUTSTANDING);

		if (hdr->mgmt_class == IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE) {
			ret = ib_mad_local_smp(priv, wr);
			if (ret > 0)
				continue;	/* answered locally */
			if (ret < 0)
				goto err_uncount;
		}
		ret = ib_mad_send_one(priv, wr);
		if (ret)
			goto err_uncount;
	}
	return 0;

err_uncount:
	ib_mad_stat_dec(ib_mad_agent_port(ib_mad_send_wr(send_buf)->mad_agent_priv),
			IB_MAD_STAT_OUTSTANDING);
err:
	if (bad_send_buf)
		*bad_send_buf = send_buf;
	return ret;
}
EXPORT_SYMBOL(ib_post_send_mad);

/* Modify, cancel, timeouts -------------------------------------------- */

/**
 * ib_modify_mad() - change the timeout of a posted send, or cancel it
 * @send_buf: a posted buffer
 * @timeout_ms: new response timeout; 0 cancels the send
 *
 * A new timeout counts from now for a send already waiting for its
 * response, and from the send completion for one still on the wire; the
 * send's total deadline grows to leave every try left the new timeout. A
 * cancelled send completes with IB_WC_WR_FLUSH_ERR: from the agent's work
 * if it was waiting, or when its work request completes.
 *
 * Context: any, including atomic context; never runs a handler.
 * Return: 0, or -EINVAL if the send is not outstanding (it completed, is
 * completing, or was never posted).
 */
int ib_modify_mad(struct ib_mad_send_buf *send_buf, u32 timeout_ms)
{
	struct ib_mad_send_wr_private *wr;
	struct ib_mad_agent_private *priv;
	unsigned long flags, deadline;
	int ret = 0;

	if (!send_buf)
		return -EINVAL;
	wr = ib_mad_send_wr(send_buf);
	priv = wr->mad_agent_priv;
	spin_lock_irqsave(&priv->lock, flags);
	if ((wr->state != IB_MAD_SEND_ON_WIRE &&
	     wr->state != IB_MAD_SEND_WAIT_RESP &&
	     wr->state != IB_MAD_SEND_QUEUED) ||
	    wr->status != IB_WC_SUCCESS) {
		ret = -EINVAL;
		goto out_unlock;
	}
	trace_ib_mad_send_modify(wr, timeout_ms);
	if (!timeout_ms) {
		ib_mad_stat_inc(ib_mad_agent_port(priv), IB_MAD_STAT_CANCEL);
		ib_mad_send_finish_locked(wr, IB_WC_WR_FLUSH_ERR, 0);
		goto out_unlock;
	}
	/*
	 * A longer wait for a request on the wire is an MRA: the responder
	 * has it and works on it, so it holds no place in the responder's
	 * receive queue any more, and its slot goes to the next request.
	 */
	if (wr->state == IB_MAD_SEND_WAIT_RESP &&
	    timeout_ms > send_buf->timeout_ms)
		ib_mad_send_fc_release_locked(wr);
	send_buf->timeout_ms = timeout_ms;
	/*
	 * The tries left get the new timeout in full, backoff or not. The
	 * later of two jiffies values is not max(): jiffies wrap.
	 */
	deadline = ib_mad_send_deadline(timeout_ms, (u64)wr->retries_left + 1);
	if (time_after(deadline, wr->deadline))
		wr->deadline = deadline;
	if (wr->state == IB_MAD_SEND_WAIT_RESP)
		ib_mad_send_wait_locked(wr, timeout_ms);
	else if (wr->state == IB_MAD_SEND_QUEUED)
		ib_mad_send_wait_until_locked(wr, wr->deadline);
out_unlock:
	spin_unlock_irqrestore(&priv->lock, flags);
	return ret;
}
EXPORT_SYMBOL(ib_modify_mad);

/* A WAIT_RESP send ran out of time: retry it or let it complete. */
static bool ib_mad_send_retry_locked(struct ib_mad_send_wr_private *wr)
{
	struct ib_mad_port_private *port = ib_mad_agent_port(wr->mad_agent_priv);
	int ret;

	lockdep_assert_held(&wr->mad_agent_priv->lock);
	if (wr->status != IB_WC_SUCCESS || wr->retries_left <= 0)
		return false;
	/* Backoff or late tries may have used up the total deadline. */
	if (ib_mad_send_too_late(wr))
		return false;
	wr->retries_left--;
	wr->send_buf.retries++;
	ret = wr->rmpp_active ? ib_mad_rmpp_send_retry(wr) : 0;
	if (!ret)
		ret = ib_mad_send_post_locked(wr);
	if (ret)
		return false;
	ib_mad_stat_inc(port, IB_MAD_STAT_RETRY);
	trace_ib_mad_send_retry(wr);
	return true;
}

/*
 * Move expired sends out of the wait tree, retried or onto the done list, at
 * most @budget of them. Agent lock held.
 */
static void ib_mad_agent_expire_locked(struct ib_mad_agent_private *priv,
				       int budget)
{
	struct ib_mad_send_wr_private *wr;

	lockdep_assert_held(&priv->lock);
	while (budget-- > 0) {
		wr = ib_mad_agent_first_wait_locked(priv);
		if (!wr || time_before(jiffies, wr->timeout))
			break;
		ib_mad_send_unwait_locked(wr);
		if (wr->state == IB_MAD_SEND_QUEUED) {
			/* Never sent: its whole deadline went by waiting. */
			ib_mad_stat_inc(ib_mad_agent_port(priv),
					IB_MAD_STAT_FC_DROPPED);
			wr->status = IB_WC_RESP_TIMEOUT_ERR;
			ib_mad_send_done_locked(wr, true);
			continue;
		}
		if (ib_mad_send_retry_locked(wr))
			continue;
		if (wr->status == IB_WC_SUCCESS)
			wr->status = IB_WC_RESP_TIMEOUT_ERR;
		/* The timed work re-arms itself when it is done. */
		ib_mad_send_done_locked(wr, true);
	}
}

/* Take at most @budget sends off the done list; agent lock held. */
static void ib_mad_agent_take_done_locked(struct ib_mad_agent_private *priv,
					  struct list_head *done, int budget)
{
	lockdep_assert_held(&priv->lock);
	while (budget-- > 0 && !list_empty(&priv->done_list))
		list_move_tail(priv->done_list.next, done);
}

static void ib_mad_send_complete_list(struct list_head *done)
{
	struct ib_mad_send_wr_private *wr, *tmp;

	list_for_each_entry_safe(wr, tmp, done, agent_list) {
		list_del_init(&wr->agent_list);
		ib_mad_send_complete(wr);
	}
}

/**
 * ib_mad_agent_timed_work() - the agent's timer and deferred completions
 * @work: ib_mad_agent_private.timed_work
 *
 * Retries or times out the sends whose deadline passed and runs the
 * completions on the done list, at most IB_MAD_TIMEOUT_BATCH of each, then
 * re-arms itself: at once if work is left, else for the next deadline.
 * However many sends expire together, the agent lock and the workqueue
 * are never held for more than one batch.
 *
 * Context: the port's workqueue.
 */
void ib_mad_agent_timed_work(struct work_struct *work)
{
	struct ib_mad_agent_private *priv =
		container_of(work, struct ib_mad_agent_private, timed_work.work);
	unsigned long flags;
	LIST_HEAD(done);

	spin_lock_irqsave(&priv->lock, flags);
	ib_mad_agent_expire_locked(priv, IB_MAD_TIMEOUT_BATCH);
	ib_mad_agent_take_done_locked(priv, &done, IB_MAD_TIMEOUT_BATCH);
	ib_mad_agent_rearm_locked(priv);
	spin_unlock_irqrestore(&priv->lock, flags);

	ib_mad_send_complete_list(&done);
}
EXPORT_SYMBOL_IF_KUNIT(ib_mad_agent_timed_work);

/* Cancel up to @budget outstanding sends; returns false once none is left. */
static bool ib_mad_agent_cancel_some_locked(struct ib_mad_agent_private *priv,
					    int budget)
{
	struct ib_mad_send_wr_private *wr;
	struct hlist_node *next;
	int bkt;

	lockdep_assert_held(&priv->lock);
	hash_for_each_safe(priv->send_hash, bkt, next, wr, tid_node) {
		if (budget-- <= 0)
			return true;
		/* Leaves the hash: ON_WIRE ones become CANCELLED. */
		ib_mad_send_finish_locked(wr, IB_WC_WR_FLUSH_ERR, 0);
	}
	return false;
}

/**
 * ib_mad_agent_flush_sends() - cancel every outstanding send of an agent
 * @priv: an agent being unregistered (already out of the tables)
 *
 * Waiting sends complete here with IB_WC_WR_FLUSH_ERR; sends with work
 * requests in flight complete so when those do. Works in batches of
 * IB_MAD_TIMEOUT_BATCH sends, dropping the agent lock in between.
 *
 * Context: process context; runs send handlers.
 */
void ib_mad_agent_flush_sends(struct ib_mad_agent_private *priv)
{
	unsigned long flags;
	bool more;
	LIST_HEAD(done);

	do {
		spin_lock_irqsave(&priv->lock, flags);
		more = ib_mad_agent_cancel_some_locked(priv,
						       IB_MAD_TIMEOUT_BATCH);
		ib_mad_agent_take_done_locked(priv, &done,
					      IB_MAD_TIMEOUT_BATCH);
		more |= !list_empty(&priv->done_list);
		spin_unlock_irqrestore(&priv->lock, flags);

		ib_mad_send_complete_list(&done);
		cond_resched();
	} while (more);
}
EXPORT_SYMBOL_IF_KUNIT(ib_mad_agent_flush_sends);

/**
 * ib_mad_send_local_complete() - complete a send answered on this node
 * @wr: a send that ib_mad_local_smp() took (state RESPONDED)
 * @status: its completion status
 *
 * Context: process context, no MAD lock held; runs the send handler.
 */
void ib_mad_send_local_complete(struct ib_mad_send_wr_private *wr,
				enum ib_wc_status status)
{
	struct ib_mad_agent_private *priv = wr->mad_agent_priv;
	unsigned long flags;

	spin_lock_irqsave(&priv->lock, flags);
	wr->resp_pending = false;
	wr->status = status;
	ib_mad_send_done_locked(wr, false);
	spin_unlock_irqrestore(&priv->lock, flags);
	ib_mad_send_complete(wr);
}
