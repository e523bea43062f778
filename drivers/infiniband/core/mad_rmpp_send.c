// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * RMPP sender: cuts a message into segments and paces them by the
 * receiver's ACKs.
 *
 * All segments of a send share send_buf.mad as their header (the core maps
 * it together with the data of segment wr->seg_num), so only one segment
 * is on the wire at a time.  The first segment, and the first one repeated
 * after an ACK timeout, are selected here and posted by the core; each
 * send completion posts the next segment while the window allows, then
 * the send waits for an ACK.  An ACK moves the window; a timeout rewinds
 * to the last acknowledged segment and repeats the rest of the window.
 * The window numbers live in the ib_mad_send_wr_private fields the core
 * reserves for RMPP and are worked on through struct mad_rmpp_send_win
 * (mad_rmpp_wire.c); wr->rmpp_state holds the highest segment ever posted.
 *
 * Every function here runs under the agent lock except the two ACK/ABORT
 * handlers, which take it themselves and send their answers after
 * dropping it.
 */
#include <rdma/ib_verbs.h>

#include "mad_rmpp.h"

static struct ib_rmpp_hdr *mad_rmpp_send_hdr(struct ib_mad_send_wr_private *wr)
{
	return &((struct ib_rmpp_mad *)wr->send_buf.mad)->rmpp_hdr;
}

/*
 * A client may post an RMPP-active buffer that is not DATA (a hand-made
 * ACK, say).  It goes out once, as it is, with no window around it.
 */
static bool mad_rmpp_send_is_data(struct ib_mad_send_wr_private *wr)
{
	return mad_rmpp_send_hdr(wr)->rmpp_type == IB_MGMT_RMPP_TYPE_DATA;
}

static void mad_rmpp_win_load(const struct ib_mad_send_wr_private *wr,
			      struct mad_rmpp_send_win *win)
{
	win->seg_count = wr->send_buf.seg_count;
	win->seg_num = wr->seg_num;
	win->sent_max = wr->rmpp_state;
	win->last_ack = wr->last_ack;
	win->newwin = wr->newwin;
}

static void mad_rmpp_win_store(struct ib_mad_send_wr_private *wr,
			       const struct mad_rmpp_send_win *win)
{
	wr->seg_num = win->seg_num;
	wr->rmpp_state = win->sent_max;
	wr->last_ack = win->last_ack;
	wr->newwin = win->newwin;
}

/*
 * The layout ib_create_send_mad() gave the buffer must be the one our
 * arithmetic expects, or the paylen we announce would lie.
 */
static int mad_rmpp_send_layout(const struct ib_mad_send_wr_private *wr,
				struct mad_rmpp_layout *lay)
{
	const struct ib_mad_send_buf *buf = &wr->send_buf;
	int ret;

	/* Refused for lengths whose total paylen does not fit 32 bits. */
	ret = mad_rmpp_layout_init(lay, buf->hdr_len + buf->seg_size,
				   buf->hdr_len, buf->data_len);
	if (ret)
		return ret;
	if (WARN_ON_ONCE(lay->seg_count != buf->seg_count ||
			 lay->pad != wr->pad ||
			 lay->rmpp_size != buf->seg_rmpp_size))
		return -EINVAL;
	return 0;
}

/*
 * How long to wait for an ACK: the caller's response timeout if that is
 * shorter than the ACK bound, plus whatever the receiver advertised.
 */
static unsigned int mad_rmpp_ack_wait_ms(const struct ib_mad_send_wr_private *wr,
					 u8 peer_rtime)
{
	unsigned int wait = MAD_RMPP_ACK_WAIT_MAX_MS;

	if (wr->send_buf.timeout_ms > 0)
		wait = min_t(unsigned int, wait, wr->send_buf.timeout_ms);
	return wait + mad_rmpp_peer_wait_ms(peer_rtime);
}

/*
 * Point the send at the next segment of its window: take the number, keep
 * the window in @wr and write the segment's RMPP header into
 * send_buf.mad.  The core's ib_mad_send_post_locked() then maps that
 * segment's data (and fails for a segment the buffer does not hold).
 * Returns 0, or a negative errno for a buffer whose layout is not the one
 * ib_create_send_mad() gave it.
 */
static int mad_rmpp_select_next(struct ib_mad_send_wr_private *wr,
				struct mad_rmpp_send_win *win)
{
	struct ib_rmpp_hdr *hdr = mad_rmpp_send_hdr(wr);
	u32 seg_num = mad_rmpp_send_win_next(win);
	struct mad_rmpp_layout lay;
	int ret;

	mad_rmpp_win_store(wr, win);
	ret = mad_rmpp_send_layout(wr, &lay);
	if (ret)
		return ret;
	mad_rmpp_format_data(hdr, &lay, seg_num);
	return 0;
}

/**
 * mad_rmpp_post_next() - put the next segment of the window on the wire
 * @wr: the send, with no work request in flight
 * @win: its window, loaded by the caller
 *
 * Context: Agent lock held.
 * Return: 0, or a negative errno with @wr's window unchanged.
 */
static int mad_rmpp_post_next(struct ib_mad_send_wr_private *wr,
			      struct mad_rmpp_send_win *win)
{
	struct mad_rmpp_send_win old = *win;
	int ret;

	lockdep_assert_held(&wr->mad_agent_priv->lock);

	ret = mad_rmpp_select_next(wr, win);
	if (!ret)
		ret = ib_mad_send_post_locked(wr);
	if (ret) {
		*win = old;
		mad_rmpp_win_store(wr, win);
	}
	return ret;
}

/**
 * ib_mad_rmpp_send_start() - set up a kernel RMPP send
 * @wr: a send the core accepted, ON_WIRE with nothing in flight
 *
 * Opens the window (one segment, or the window the requester granted when
 * this is the response of a double-sided transfer) and makes segment 1
 * the one the core posts next.  A buffer whose RMPP type is not DATA (a
 * hand-made ACK, say) goes out once, as it is, with no window around it.
 *
 * Context: Any context, agent lock held.
 * Return: 0, or a negative errno for a buffer whose layout is not the one
 * ib_create_send_mad() gave it; the core then fails the post.
 */
int ib_mad_rmpp_send_start(struct ib_mad_send_wr_private *wr)
{
	struct mad_rmpp_send_win win;
	u32 peer_win;

	lockdep_assert_held(&wr->mad_agent_priv->lock);

	wr->seg_num = 1;
	if (!mad_rmpp_send_is_data(wr))
		return 0;

	wr->last_ack_seg = NULL;
	wr->rmpp_wait_ms = mad_rmpp_ack_wait_ms(wr, IB_MGMT_RMPP_NO_RESPTIME);
	peer_win = mad_rmpp_recv_peer_window(wr->mad_agent_priv, wr);
	mad_rmpp_send_win_init(&win, wr->send_buf.seg_count, peer_win);
	return mad_rmpp_select_next(wr, &win);
}

/**
 * ib_mad_rmpp_send_wc() - a segment of an RMPP send left the wire
 * @wr: the send, still ON_WIRE, with no work request in flight
 * @wc: the successful completion
 *
 * Posts the next segment while the window allows, else waits for an ACK;
 * a failure to post ends the send.
 *
 * Context: Agent lock held.
 * Return: %IB_MAD_RMPP_SEND_DATA_DONE once every segment is acknowledged
 * (the core then waits for the response or completes the send), else
 * %IB_MAD_RMPP_SEND_HANDLED.
 */
enum ib_mad_rmpp_send_verdict
ib_mad_rmpp_send_wc(struct ib_mad_send_wr_private *wr,
		    const struct ib_mad_send_wc *wc)
{
	struct mad_rmpp_send_win win;

	lockdep_assert_held(&wr->mad_agent_priv->lock);

	if (!mad_rmpp_send_is_data(wr))
		return IB_MAD_RMPP_SEND_DATA_DONE;

	mad_rmpp_win_load(wr, &win);
	if (win.last_ack == win.seg_count)
		return IB_MAD_RMPP_SEND_DATA_DONE;

	if (!mad_rmpp_send_win_may_send(&win))
		ib_mad_send_wait_locked(wr, wr->rmpp_wait_ms);
	else if (mad_rmpp_post_next(wr, &win))
		ib_mad_send_finish_locked(wr, IB_WC_GENERAL_ERR, 0);
	return IB_MAD_RMPP_SEND_HANDLED;
}

/**
 * ib_mad_rmpp_send_retry() - no ACK came in time: go back in the window
 * @wr: the send, WAIT_RESP, with retries left
 *
 * Makes the first unacknowledged segment the one the core posts next; a
 * non-DATA buffer is simply posted again.
 *
 * Context: Agent lock held.
 * Return: 0, -ETIMEDOUT when all data was acknowledged (the wait was for
 * the response), or another negative errno for a broken layout.
 */
int ib_mad_rmpp_send_retry(struct ib_mad_send_wr_private *wr)
{
	struct mad_rmpp_send_win win;

	lockdep_assert_held(&wr->mad_agent_priv->lock);

	if (!mad_rmpp_send_is_data(wr))
		return 0;

	mad_rmpp_win_load(wr, &win);
	if (win.last_ack == win.seg_count)
		return -ETIMEDOUT;
	mad_rmpp_send_win_rewind(&win);
	return mad_rmpp_select_next(wr, &win);
}

/*
 * What mad_rmpp_send_apply_ack() wants sent once the agent lock is
 * dropped: nothing, an ABORT with *status, or the ACK that hands a
 * double-sided transfer over to its response.
 */
enum mad_rmpp_ack_answer {
	MAD_RMPP_ANSWER_NONE,
	MAD_RMPP_ANSWER_ABORT,
	MAD_RMPP_ANSWER_TURN,
};

/* Continue a send that waits for an ACK and just got one. */
static void mad_rmpp_send_resume(struct ib_mad_send_wr_private *wr,
				 struct mad_rmpp_send_win *win,
				 enum mad_rmpp_ack_verdict verdict)
{
	if (verdict == MAD_RMPP_ACK_DONE)
		ib_mad_send_acked_locked(wr);
	else if (!mad_rmpp_send_win_may_send(win))
		ib_mad_send_wait_locked(wr, wr->rmpp_wait_ms);
	else if (mad_rmpp_post_next(wr, win))
		ib_mad_send_finish_locked(wr, IB_WC_GENERAL_ERR, 0);
}

/**
 * mad_rmpp_send_apply_ack() - apply an ACK to the send it matched
 * @wr: the send
 * @ack: RMPP header of the ACK
 * @status: set to the ABORT status to send back
 *
 * Context: Agent lock held.
 * Return: what to send back once the lock is dropped.
 */
static enum mad_rmpp_ack_answer
mad_rmpp_send_apply_ack(struct ib_mad_send_wr_private *wr,
			const struct ib_rmpp_hdr *ack, u8 *status)
{
	enum mad_rmpp_ack_verdict verdict;
	struct mad_rmpp_send_win win;
	u32 old_ack;
	u8 rtime;

	lockdep_assert_held(&wr->mad_agent_priv->lock);

	if (!mad_rmpp_send_is_data(wr))
		return MAD_RMPP_ANSWER_NONE;

	mad_rmpp_win_load(wr, &win);
	old_ack = win.last_ack;
	verdict = mad_rmpp_send_win_ack(&win, ack, status);
	switch (verdict) {
	case MAD_RMPP_ACK_ABORT:
		/* Data already through: the abort cannot concern this send. */
		if (old_ack != win.seg_count)
			ib_mad_send_finish_locked(wr, IB_WC_REM_ABORT_ERR,
						  *status);
		return MAD_RMPP_ANSWER_ABORT;
	case MAD_RMPP_ACK_STALE:
		/* The final ACK again: our turnaround ACK was lost. */
		if (old_ack == win.seg_count && wr->expect_resp)
			return MAD_RMPP_ANSWER_TURN;
		return MAD_RMPP_ANSWER_NONE;
	default:
		break;
	}

	mad_rmpp_win_store(wr, &win);
	if (win.last_ack != old_ack) {
		wr->retries_left = wr->max_retries;
		wr->last_ack_seg = ib_mad_send_segment(wr, win.last_ack);
	}
	rtime = ib_get_rmpp_resptime((struct ib_rmpp_hdr *)ack);
	wr->rmpp_wait_ms = mad_rmpp_ack_wait_ms(wr, rtime);

	/* With a segment in flight, its completion takes the next step. */
	if (wr->state == IB_MAD_SEND_WAIT_RESP)
		mad_rmpp_send_resume(wr, &win, verdict);

	if (verdict == MAD_RMPP_ACK_DONE && wr->expect_resp)
		return MAD_RMPP_ANSWER_TURN;
	return MAD_RMPP_ANSWER_NONE;
}

/**
 * mad_rmpp_send_handle_ack() - process a received ACK
 * @priv: agent it was received on
 * @recv_wc: the ACK, owned by the caller
 *
 * An ACK for none of our sends is either stale (ignored) or the ACK with
 * segment number 0 by which the requester of a double-sided transfer
 * grants a window for our response.  Malformed ACKs are answered with an
 * ABORT whether they match a send or not.
 *
 * Context: Process context, no MAD lock held.
 */
void mad_rmpp_send_handle_ack(struct ib_mad_agent_private *priv,
			      const struct ib_mad_recv_wc *recv_wc)
{
	const struct ib_rmpp_mad *mad = (const void *)recv_wc->recv_buf.mad;
	enum mad_rmpp_ack_answer answer = MAD_RMPP_ANSWER_NONE;
	struct ib_mad_send_wr_private *wr;
	unsigned long flags;
	u8 status;

	status = mad_rmpp_check_ack(&mad->rmpp_hdr);

	spin_lock_irqsave(&priv->lock, flags);
	wr = ib_mad_find_rmpp_send_locked(priv, recv_wc);
	if (wr)
		answer = mad_rmpp_send_apply_ack(wr, &mad->rmpp_hdr, &status);
	else if (!status && !mad->rmpp_hdr.seg_num)
		mad_rmpp_recv_note_ds_ack(priv, recv_wc);
	else if (status)
		answer = MAD_RMPP_ANSWER_ABORT;
	spin_unlock_irqrestore(&priv->lock, flags);

	if (answer == MAD_RMPP_ANSWER_ABORT) {
		mad_rmpp_abort_peer(priv, recv_wc, status);
	} else if (answer == MAD_RMPP_ANSWER_TURN) {
		/*
		 * Grant the response one segment, as upstream Linux does; our
		 * receiver's first ACK opens the full window.  Granting more
		 * here would let the final ACK of a short response (window
		 * still 1) look older than this grant to a sender that
		 * ignores ACKs with a smaller window, and it would repeat the
		 * response until its retries ran out.
		 */
		const struct mad_rmpp_ctrl turn = {
			.type = IB_MGMT_RMPP_TYPE_ACK,
			.newwin = 1,
		};

		mad_rmpp_ctrl_reply(priv, recv_wc, &turn);
	}
}

/**
 * mad_rmpp_send_handle_abort() - the receiver stopped or aborted a send
 * @priv: agent it was received on
 * @recv_wc: the STOP or ABORT (or a MAD of a version or type we do not
 *	know, which ends a matching send just the same), owned by the caller
 * @status: RMPP status the send completes with
 * @reply: ABORT status to answer with, 0 for none
 *
 * The send completes with IB_WC_REM_ABORT_ERR and @status in vendor_err,
 * unless all of its data was acknowledged already.
 *
 * Context: Process context, no MAD lock held.
 */
void mad_rmpp_send_handle_abort(struct ib_mad_agent_private *priv,
				const struct ib_mad_recv_wc *recv_wc,
				u8 status, u8 reply)
{
	struct ib_mad_send_wr_private *wr;
	unsigned long flags;

	spin_lock_irqsave(&priv->lock, flags);
	wr = ib_mad_find_rmpp_send_locked(priv, recv_wc);
	if (wr && mad_rmpp_send_is_data(wr) &&
	    wr->last_ack != wr->send_buf.seg_count)
		ib_mad_send_finish_locked(wr, IB_WC_REM_ABORT_ERR, status);
	spin_unlock_irqrestore(&priv->lock, flags);

	if (reply)
		mad_rmpp_abort_peer(priv, recv_wc, reply);
}
