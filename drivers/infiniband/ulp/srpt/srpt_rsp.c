// SPDX-License-Identifier: GPL-2.0-only
/*
 * ib_srpt: the response side of the I/O path - RDMA READ of write data,
 * SRP_RSP building and sending (with the RDMA WRITEs of read data chained
 * in front), send completions, and the LIO callbacks that drive them.
 *
 * Send queue slots are accounted in srpt_rdma_ch.sq_wr_avail: a command
 * reserves one slot for its SRP_RSP plus the work requests of its data
 * transfer before posting, and gets them back on completion.  A response
 * that finds too few slots, or other responses waiting, waits in
 * srpt_rdma_ch.rsp_backlog and is posted, in order, when completions give
 * slots back: status-only and TMF responses from the completion itself, a
 * read's (whose RDMA WRITEs are built in process context) from
 * srpt_rsp_work().  Nothing spins while the queue stays full.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/slab.h>
#include <scsi/scsi_proto.h>
#include <target/target_core_base.h>
#include <target/target_core_fabric.h>
#include <kunit/visibility.h>

#include "srpt_priv.h"

/*
 * A completion gives @n send queue slots back; responses waiting for room
 * get their turn. The barrier pairs with the fully ordered slot take of
 * srpt_post_in_slots() that srpt_defer_rsp() makes after it queued a
 * response: either that take sees these slots, or this sees the response.
 */
static bool srpt_rsp_backlogged(struct srpt_rdma_ch *ch);

static void srpt_return_slots(struct srpt_rdma_ch *ch, u32 n)
{
	atomic_add(n, &ch->sq_wr_avail);
	/* The slots before the look at the backlog, see above. */
	smp_mb__after_atomic();
	if (srpt_rsp_backlogged(ch))
		srpt_post_rsp_backlog(ch);
}

/**
 * srpt_abort_cmd - fail a write command whose data could not be fetched
 * @ioctx: the command, just moved to SRPT_STATE_DATA_IN.
 * @status: how the RDMA READ of its data completed.
 *
 * LIO answers the command with ABORTED COMMAND sense and releases it.
 *
 * Context: CQ context.
 */
static void srpt_abort_cmd(struct srpt_send_ioctx *ioctx,
			   enum ib_wc_status status)
{
	pr_debug("%s: fetching write data failed: %s\n", ioctx->ch->sess_name,
		 ib_wc_status_msg(status));
	transport_generic_request_failure(&ioctx->cmd,
					  TCM_CHECK_CONDITION_ABORT_CMD);
}

/**
 * srpt_rdma_read_done - the data of a write command arrived, or not
 * @cq: completion queue.
 * @wc: the completion of the last READ of the command's chain.
 *
 * The READs give their send queue slots back.  The command, which waits
 * for its data, goes on in LIO: executed, or failed with ABORTED COMMAND
 * sense when the transfer failed (a flush included); a failed transfer
 * also closes the channel, whose QP it left in the error state.
 *
 * Context: CQ context.
 */
static void srpt_rdma_read_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct srpt_send_ioctx *ioctx =
		container_of(wc->wr_cqe, struct srpt_send_ioctx, rdma_cqe);
	struct srpt_rdma_ch *ch = ioctx->ch;

	srpt_return_slots(ch, ioctx->n_rdma);
	ioctx->n_rdma = 0;
	if (!srpt_test_and_set_cmd_state(ioctx, SRPT_STATE_NEED_DATA,
					 SRPT_STATE_DATA_IN)) {
		WARN_ONCE(1, "%s: write data for a command in state %d\n",
			  ch->sess_name, ioctx->state);
		return;
	}
	if (likely(wc->status == IB_WC_SUCCESS)) {
		target_execute_cmd(&ioctx->cmd);
		return;
	}
	srpt_ch_send_failed(ch, wc, "fetching write data");
	srpt_abort_cmd(ioctx, wc->status);
}

static u32 srpt_take_credits(struct srpt_rdma_ch *ch)
{
	return 1 + atomic_xchg(&ch->req_lim_delta, 0);
}

/**
 * srpt_build_cmd_rsp - build the SRP_RSP of an SRP_CMD
 * @ch: the channel.
 * @ioctx: the command; the response is built in its buffer.
 * @tag: tag of the SRP_CMD.
 * @status: SCSI status.
 *
 * Reports residuals for under- and overflows in the direction of the
 * transfer, and sense data cut to what both the initiator (max_ti_iu_len)
 * and the response buffer accept. Each response returns the credit of its
 * request plus those of requests that ended without a response.
 *
 * Context: any context.
 * Return: the length of the response in bytes.
 */
int srpt_build_cmd_rsp(struct srpt_rdma_ch *ch, struct srpt_send_ioctx *ioctx,
		       u64 tag, int status)
{
	struct se_cmd *cmd = &ioctx->cmd;
	struct srp_rsp *rsp = ioctx->ioctx.buf;
	u32 resid = cmd->residual_count;
	u32 sense_len, room;

	memset(rsp, 0, sizeof(*rsp));
	rsp->opcode = SRP_RSP;
	rsp->req_lim_delta = cpu_to_be32(srpt_take_credits(ch));
	rsp->tag = tag;
	rsp->status = status;

	if (cmd->se_cmd_flags & (SCF_UNDERFLOW_BIT | SCF_OVERFLOW_BIT)) {
		bool under = cmd->se_cmd_flags & SCF_UNDERFLOW_BIT;

		if (cmd->data_direction == DMA_TO_DEVICE) {
			rsp->flags = under ? SRP_RSP_FLAG_DOUNDER :
					     SRP_RSP_FLAG_DOOVER;
			rsp->data_out_res_cnt = cpu_to_be32(resid);
		} else if (cmd->data_direction == DMA_FROM_DEVICE) {
			rsp->flags = under ? SRP_RSP_FLAG_DIUNDER :
					     SRP_RSP_FLAG_DIOVER;
			rsp->data_in_res_cnt = cpu_to_be32(resid);
		}
	}

	sense_len = min_t(u32, cmd->scsi_sense_length,
			  sizeof(ioctx->sense_data));
	room = min(ch->max_ti_iu_len, ch->max_rsp_size) - sizeof(*rsp);
	if (sense_len > room) {
		pr_debug("%s: sense data cut from %u to %u bytes\n",
			 ch->sess_name, sense_len, room);
		sense_len = room;
	}
	if (sense_len) {
		rsp->flags |= SRP_RSP_FLAG_SNSVALID;
		rsp->sense_data_len = cpu_to_be32(sense_len);
		memcpy(rsp->data, ioctx->sense_data, sense_len);
	}
	return sizeof(*rsp) + sense_len;
}
EXPORT_SYMBOL_IF_KUNIT(srpt_build_cmd_rsp);

/**
 * srpt_build_tskmgmt_rsp - build the SRP_RSP of an SRP_TSK_MGMT
 * @ch: the channel.
 * @ioctx: the request's context; the response is built in its buffer.
 * @rsp_code: RESPONSE CODE (SRP table 24).
 * @tag: tag of the SRP_TSK_MGMT.
 *
 * The four bytes of response data carry the code in their last byte.
 *
 * Context: any context.
 * Return: the length of the response in bytes.
 */
int srpt_build_tskmgmt_rsp(struct srpt_rdma_ch *ch,
			   struct srpt_send_ioctx *ioctx, u8 rsp_code, u64 tag)
{
	struct srp_rsp *rsp = ioctx->ioctx.buf;
	const u32 data_len = 4;

	memset(rsp, 0, sizeof(*rsp) + data_len);
	rsp->opcode = SRP_RSP;
	rsp->req_lim_delta = cpu_to_be32(srpt_take_credits(ch));
	rsp->tag = tag;
	rsp->flags = SRP_RSP_FLAG_RSPVALID;
	rsp->resp_data_len = cpu_to_be32(data_len);
	rsp->data[3] = rsp_code;
	return sizeof(*rsp) + data_len;
}
EXPORT_SYMBOL_IF_KUNIT(srpt_build_tskmgmt_rsp);

/**
 * srpt_post_in_slots - post work requests that take send queue slots
 * @ch: the channel.
 * @first: the first of the chained work requests.
 * @slots: how many there are.
 *
 * Every work request on a channel's send queue holds a slot of
 * &srpt_rdma_ch.sq_wr_avail from its post to its completion (which gives
 * it back); requests that do not all fit are not posted at all.
 *
 * Context: any context.
 * Return: 0, -EAGAIN when too few slots are free (retry after completions)
 * or the error of ib_post_send(); the slots are only kept on success.
 */
static int srpt_post_in_slots(struct srpt_rdma_ch *ch,
			      struct ib_send_wr *first, u32 slots)
{
	int ret = -EAGAIN;

	if (atomic_sub_return(slots, &ch->sq_wr_avail) >= 0) {
		ret = ib_post_send(ch->qp, first, NULL);
		if (!ret)
			return 0;
		pr_debug("%s: posting %u work requests failed (%d)\n",
			 ch->sess_name, slots, ret);
	} else {
		pr_debug("%s: send queue full\n", ch->sess_name);
	}
	atomic_add(slots, &ch->sq_wr_avail);
	return ret;
}

/*
 * Post the SRP_RSP in @ioctx's buffer, after the work requests starting at
 * @first (which end in @send). The credits the response returns count as
 * the initiator's from the moment it is posted. If it cannot be posted
 * those of other requests go back to be returned with a later response;
 * the credit of @ioctx's own request stays with it: its response is tried
 * again, or it ends without one and srpt_return_credit() gives it back.
 */
static int srpt_post_rsp(struct srpt_rdma_ch *ch, struct srpt_send_ioctx *ioctx,
			 struct ib_send_wr *first, struct ib_send_wr *send,
			 struct ib_sge *sge, int len)
{
	struct srpt_device *sdev = ch->sport->sdev;
	const struct srp_rsp *rsp = ioctx->ioctx.buf;
	u32 credits = be32_to_cpu(rsp->req_lim_delta);
	int ret;

	ib_dma_sync_single_for_device(sdev->device, ioctx->ioctx.dma, len,
				      DMA_TO_DEVICE);
	*sge = (struct ib_sge) {
		.addr = ioctx->ioctx.dma,
		.length = len,
		.lkey = sdev->lkey,
	};
	ioctx->ioctx.cqe.done = srpt_send_done;
	*send = (struct ib_send_wr) {
		.wr_cqe = &ioctx->ioctx.cqe,
		.sg_list = sge,
		.num_sge = 1,
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
	};
	atomic_add(credits, &ch->req_lim);
	ret = srpt_post_in_slots(ch, first, 1 + ioctx->n_rdma);
	if (ret) {
		atomic_sub(credits, &ch->req_lim);
		atomic_add(credits - 1, &ch->req_lim_delta);
	}
	return ret;
}

/*
 * A request that ends without a response returns its credit with the next
 * response instead.
 */
static void srpt_return_credit(struct srpt_send_ioctx *ioctx)
{
	atomic_inc(&ioctx->ch->req_lim_delta);
}

/* Give a context that never reached LIO back to the session's tag pool. */
static void srpt_put_local_ioctx(struct srpt_send_ioctx *ioctx)
{
	ioctx->state = SRPT_STATE_DONE;
	target_free_tag(ioctx->ch->sess, &ioctx->cmd);
}

/*
 * End a response that will not be sent: LIO's command is released, a
 * context LIO never saw goes back to the tag pool. Either way the request's
 * credit goes back with the next response.
 */
static void srpt_end_unsent_rsp(struct srpt_send_ioctx *ioctx, int err)
{
	if (!ioctx->local) {
		srpt_drop_rsp(ioctx, err);
		return;
	}
	srpt_return_credit(ioctx);
	srpt_put_local_ioctx(ioctx);
}

/*
 * Whether responses wait in the channel's backlog: one that may wait then
 * goes behind them instead of being posted, so that no response overtakes
 * an earlier one (the answer to an ABORT TASK must not reach the initiator
 * before the status of the command it names). LIO issues the two in order,
 * so the later one sees the earlier one queued.
 */
static bool srpt_rsp_backlogged(struct srpt_rdma_ch *ch)
{
	return unlikely(!list_empty_careful(&ch->rsp_backlog) ||
			READ_ONCE(ch->rsp_busy));
}

/*
 * Queue the response of @ioctx, which found the send queue full or others
 * waiting, on the channel's backlog: built in its buffer (@len bytes), the
 * command already in the state its response puts it in; or, @data, a
 * read's, to be built and sent by srpt_rsp_work(), the command as it was.
 * Returns false when the channel is being
 * released: the caller drops the response. Once this returns true the
 * response may have been posted, and completed, already.
 */
static bool srpt_defer_rsp(struct srpt_send_ioctx *ioctx, int len, bool data)
{
	struct srpt_rdma_ch *ch = ioctx->ch;
	unsigned long flags;
	bool queued;

	ioctx->rsp_len = len;
	ioctx->rsp_data = data;
	spin_lock_irqsave(&ch->rsp_lock, flags);
	queued = !ch->rsp_backlog_closed;
	if (queued)
		list_add_tail(&ioctx->rsp_entry, &ch->rsp_backlog);
	spin_unlock_irqrestore(&ch->rsp_lock, flags);
	/* Slots a completion gave back since our try found no one waiting. */
	if (queued)
		srpt_post_rsp_backlog(ch);
	return queued;
}

/**
 * srpt_post_rsp_backlog - post the responses waiting for send queue room
 * @ch: the channel.
 *
 * In the order they came, as long as there is room; each takes the credits
 * due at the moment it is posted. One that cannot be posted for another
 * reason than room is dropped. A read's response, and whatever waits
 * behind it, is left to srpt_rsp_work().
 *
 * Context: any context.
 */
void srpt_post_rsp_backlog(struct srpt_rdma_ch *ch)
{
	struct srpt_send_ioctx *ioctx, *next;
	LIST_HEAD(failed);
	struct ib_send_wr send;
	unsigned long flags;
	struct ib_sge sge;
	int ret, err = 0;

	spin_lock_irqsave(&ch->rsp_lock, flags);
	if (ch->rsp_busy && !ch->rsp_backlog_closed)
		queue_delayed_work(srpt_wq, &ch->rsp_work, 0);
	list_for_each_entry_safe(ioctx, next, &ch->rsp_backlog, rsp_entry) {
		struct srp_rsp *rsp = ioctx->ioctx.buf;

		if (ch->rsp_busy)
			break;		/* behind the head the work has */
		if (ioctx->rsp_data) {
			if (!ch->rsp_backlog_closed)
				queue_delayed_work(srpt_wq, &ch->rsp_work, 0);
			break;
		}

		/*
		 * It stays on the list while it is tried: a completion that
		 * returns slots meanwhile must see a backlog to retry (see
		 * srpt_return_slots()), or the response waits for an
		 * unrelated one. Its own completion, should it come at once,
		 * waits for this lock before it can reuse the context.
		 */
		rsp->req_lim_delta = cpu_to_be32(srpt_take_credits(ch));
		ret = srpt_post_rsp(ch, ioctx, &send, &send, &sge,
				    ioctx->rsp_len);
		if (ret == -EAGAIN)
			break;
		if (ret) {
			/* They fail on one QP: the log names the last error. */
			err = ret;
			list_move_tail(&ioctx->rsp_entry, &failed);
		} else {
			list_del(&ioctx->rsp_entry);
		}
	}
	spin_unlock_irqrestore(&ch->rsp_lock, flags);

	list_for_each_entry_safe(ioctx, next, &failed, rsp_entry)
		srpt_end_unsent_rsp(ioctx, err);
}
EXPORT_SYMBOL_IF_KUNIT(srpt_post_rsp_backlog);

/**
 * srpt_close_rsp_backlog - drop the responses still waiting for room
 * @ch: the channel, its send queue drained: no completion will come to
 *	post them.
 *
 * Responses that find the send queue full from now on are dropped at once.
 *
 * Context: process context (the release work), before it waits for the
 * session's commands, which these responses hold.
 */
void srpt_close_rsp_backlog(struct srpt_rdma_ch *ch)
{
	struct srpt_send_ioctx *ioctx, *next;
	LIST_HEAD(waiting);

	spin_lock_irq(&ch->rsp_lock);
	ch->rsp_backlog_closed = true;
	spin_unlock_irq(&ch->rsp_lock);
	/* A read's response it is trying goes back on the list, or out. */
	cancel_delayed_work_sync(&ch->rsp_work);
	spin_lock_irq(&ch->rsp_lock);
	list_splice_init(&ch->rsp_backlog, &waiting);
	spin_unlock_irq(&ch->rsp_lock);

	list_for_each_entry_safe(ioctx, next, &waiting, rsp_entry) {
		list_del(&ioctx->rsp_entry);
		if (ioctx->rsp_data)
			srpt_drop_rsp(ioctx, -ESHUTDOWN);
		else
			srpt_end_unsent_rsp(ioctx, -ESHUTDOWN);
	}
}
EXPORT_SYMBOL_IF_KUNIT(srpt_close_rsp_backlog);

/**
 * srpt_send_local_tmf_rsp - answer a TMF that LIO could not take
 * @ch: the channel.
 * @ioctx: context of the request; it is returned to the tag pool when the
 *	response has been sent or cannot be.
 * @code: RESPONSE CODE.
 * @tag: tag of the SRP_TSK_MGMT.
 *
 * A response that finds the send queue full, or other responses waiting,
 * waits for room behind them.
 *
 * Context: CQ context.
 */
void srpt_send_local_tmf_rsp(struct srpt_rdma_ch *ch,
			     struct srpt_send_ioctx *ioctx, u8 code, u64 tag)
{
	struct ib_send_wr send;
	struct ib_sge sge;
	int len, ret;

	ioctx->local = true;
	ioctx->state = SRPT_STATE_MGMT_RSP_SENT;
	len = srpt_build_tskmgmt_rsp(ch, ioctx, code, tag);
	ret = srpt_rsp_backlogged(ch) ? -EAGAIN :
	      srpt_post_rsp(ch, ioctx, &send, &send, &sge, len);
	if (!ret || (ret == -EAGAIN && srpt_defer_rsp(ioctx, len, false)))
		return;
	srpt_end_unsent_rsp(ioctx, ret);
}
EXPORT_SYMBOL_IF_KUNIT(srpt_send_local_tmf_rsp);

/*
 * The response of @ioctx is on the wire: end the command. Its context may
 * be claimed by a new command as soon as this returns.
 */
static void srpt_rsp_sent(struct srpt_send_ioctx *ioctx)
{
	enum srpt_command_state was = srpt_set_cmd_state(ioctx,
							 SRPT_STATE_DONE);

	WARN_ON_ONCE(was != SRPT_STATE_CMD_RSP_SENT &&
		     was != SRPT_STATE_MGMT_RSP_SENT);
	if (ioctx->local)
		srpt_put_local_ioctx(ioctx);
	else if (was != SRPT_STATE_DONE)
		transport_generic_free_cmd(&ioctx->cmd, 0);
}

/**
 * srpt_send_done - SRP_RSP send completion callback
 * @cq: completion queue.
 * @wc: the completion.
 *
 * The send queue slots of the response and its data transfer come back, a
 * failed send closes the channel (srpt_ch_send_failed()), the command ends
 * and IUs waiting for a free context get the one it leaves.
 *
 * Ending the command may drop the last command reference the release work
 * waits for (target_wait_for_sess_cmds()), after which the release work
 * frees the session, the rings and the channel. A channel reference held
 * across keeps the channel itself; the rest is only touched if no release
 * has started: one already running has moved the channel to DISCONNECTED,
 * and one not yet scheduled is scheduled from this CQ (srpt_drain_done()),
 * after this callback.
 *
 * Context: CQ context.
 */
void srpt_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct srpt_send_ioctx *ioctx =
		container_of(wc->wr_cqe, struct srpt_send_ioctx, ioctx.cqe);
	struct srpt_rdma_ch *ch = ioctx->ch;

	/*
	 * Before anything that can end a command: the backlog posted on the
	 * returned slots can drop a response, and with it the last command
	 * the release work waits for.
	 */
	kref_get(&ch->kref);
	srpt_return_slots(ch, 1 + ioctx->n_rdma);
	if (unlikely(wc->status != IB_WC_SUCCESS))
		srpt_ch_send_failed(ch, wc, "sending a response");
	srpt_rsp_sent(ioctx);
	if (READ_ONCE(ch->state) < CH_DISCONNECTED)
		srpt_process_wait_list(ch);
	srpt_put_ch(ch);
}
EXPORT_SYMBOL_IF_KUNIT(srpt_send_done);

/**
 * srpt_write_pending - fetch the data of a write command
 * @se_cmd: the command.
 *
 * Immediate data is here already and the command runs at once. Otherwise
 * the RDMA READs of all its remote buffers go out as one chain of which
 * only the last READ is signaled: srpt_rdma_read_done() then runs the
 * command.
 *
 * Context: LIO callback; may be the CQ context.
 * Return: 0, or -EAGAIN when the send queue is full so that LIO retries,
 * or the error of posting.
 */
int srpt_write_pending(struct se_cmd *se_cmd)
{
	struct srpt_send_ioctx *ioctx =
		container_of(se_cmd, struct srpt_send_ioctx, cmd);
	bool have_data = ioctx->recv_ioctx;
	enum srpt_command_state was;

	was = srpt_set_cmd_state(ioctx, have_data ? SRPT_STATE_DATA_IN :
						    SRPT_STATE_NEED_DATA);
	if (have_data) {
		target_execute_cmd(se_cmd);
		return 0;
	}
	WARN_ON_ONCE(was == SRPT_STATE_DONE);
	ioctx->rdma_cqe.done = srpt_rdma_read_done;
	return srpt_post_in_slots(ioctx->ch,
				  srpt_rw_wrs(ioctx, &ioctx->rdma_cqe, NULL),
				  ioctx->n_rdma);
}
EXPORT_SYMBOL_IF_KUNIT(srpt_write_pending);

static u8 srpt_tmr_rsp_code(enum tcm_tmrsp_table response)
{
	switch (response) {
	case TMR_FUNCTION_COMPLETE:
	case TMR_TASK_DOES_NOT_EXIST:	/* SAM: nothing left to abort */
		return SRPT_TMF_COMPLETE;
	case TMR_FUNCTION_REJECTED:
	case TMR_TASK_MGMT_FUNCTION_NOT_SUPPORTED:
		return SRPT_TMF_NOT_SUPPORTED;
	default:
		return SRPT_TMF_FAILED;
	}
}

/*
 * Build the SRP_RSP of a command in its buffer and return its length; the
 * RDMA WRITEs of a read's data go in front of *@first. Only the
 * cmd->data_length bytes the command produced are written, which may be
 * fewer than the contexts were set up for (srpt_trim_rw_ctxs()).
 */
static int srpt_prep_cmd_rsp(struct srpt_send_ioctx *ioctx,
			     struct ib_send_wr **first)
{
	struct se_cmd *cmd = &ioctx->cmd;
	int ret;

	if (cmd->data_direction == DMA_FROM_DEVICE && cmd->data_length &&
	    !ioctx->queue_status_only) {
		if (cmd->data_length < ioctx->rw_len) {
			ret = srpt_trim_rw_ctxs(ioctx, cmd->data_length);
			if (ret)
				return ret;
		}
		*first = srpt_rw_wrs(ioctx, NULL, *first);
	}
	return srpt_build_cmd_rsp(ioctx->ch, ioctx, cmd->tag,
				  cmd->scsi_status);
}

/* Build the SRP_RSP of a TMF that LIO carried out; return its length. */
static int srpt_build_tmr_rsp(struct srpt_send_ioctx *ioctx)
{
	struct se_cmd *cmd = &ioctx->cmd;

	return srpt_build_tskmgmt_rsp(ioctx->ch, ioctx,
				      srpt_tmr_rsp_code(cmd->se_tmr_req->response),
				      cmd->tag);
}

/*
 * The state the response of a command in state @s moves it to, or
 * SRPT_STATE_DONE if it has had its response already.
 */
static enum srpt_command_state srpt_rsp_state(enum srpt_command_state s)
{
	if (s == SRPT_STATE_MGMT)
		return SRPT_STATE_MGMT_RSP_SENT;
	if (s == SRPT_STATE_NEW || s == SRPT_STATE_NEED_DATA ||
	    s == SRPT_STATE_DATA_IN)
		return SRPT_STATE_CMD_RSP_SENT;
	return SRPT_STATE_DONE;
}

/**
 * srpt_send_response - send the response of a command or TMF
 * @cmd: the command.
 * @may_wait: a response that finds the send queue full may wait in the
 *	channel's backlog; for a status-only or TMF response, which LIO does
 *	not try again.
 *
 * For a successful read the RDMA WRITEs of its data are chained in front of
 * the SRP_RSP. When the send queue has no room (other commands' transfers
 * fill it), the response waits for room if @may_wait, as it does behind
 * other responses already waiting (none overtakes another); otherwise nothing is
 * posted and the command stays as it was, so that the caller can try
 * again: LIO does for -EAGAIN from queue_data_in. Other failures end the
 * command without a response; the initiator's timeout handling recovers it.
 *
 * Context: LIO callback. For a read whose data is shorter than its buffers
 * process context (LIO's completion work), as it may sleep; otherwise any
 * context, possibly the CQ context.
 * Return: 0 when the response was posted, queued or the command ended,
 * -EAGAIN or -ENOMEM when it should be tried again (never if @may_wait).
 */
int srpt_send_response(struct se_cmd *cmd, bool may_wait)
{
	struct srpt_send_ioctx *ioctx =
		container_of(cmd, struct srpt_send_ioctx, cmd);
	struct srpt_rdma_ch *ch = ioctx->ch;
	enum srpt_command_state was = ioctx->state;
	enum srpt_command_state next = srpt_rsp_state(was);
	struct ib_send_wr send, *first = &send;
	struct ib_sge sge;
	int len, ret;

	if (WARN_ONCE(next == SRPT_STATE_DONE, "%s: response in state %d\n",
		      ch->sess_name, was))
		return 0;
	ioctx->state = next;
	if (next == SRPT_STATE_CMD_RSP_SENT)
		len = srpt_prep_cmd_rsp(ioctx, &first);
	else
		len = srpt_build_tmr_rsp(ioctx);

	if (len < 0)
		ret = len;
	else if (may_wait && first == &send && srpt_rsp_backlogged(ch))
		ret = -EAGAIN;	/* behind the responses that wait */
	else
		ret = srpt_post_rsp(ch, ioctx, first, &send, &sge, len);
	if (!ret)
		return 0;
	/* Only a response without RDMA WRITEs was built to wait as it is. */
	if (ret == -EAGAIN && may_wait && first == &send &&
	    srpt_defer_rsp(ioctx, len, false))
		return 0;
	ioctx->state = was;
	/* LIO's queue-full work retries both. */
	if ((ret == -EAGAIN || ret == -ENOMEM) && !may_wait)
		return ret;
	srpt_drop_rsp(ioctx, ret);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(srpt_send_response);

/**
 * srpt_queue_response - send the response of a command, LIO retrying
 * @cmd: the command.
 *
 * srpt_send_response() without the backlog: the queue_data_in callback,
 * whose -EAGAIN and -ENOMEM LIO retries from its queue-full work.
 *
 * Context: as srpt_send_response().
 * Return: 0, or -EAGAIN or -ENOMEM when LIO should try again.
 */
int srpt_queue_response(struct se_cmd *cmd)
{
	return srpt_send_response(cmd, false);
}
EXPORT_SYMBOL_IF_KUNIT(srpt_queue_response);

/**
 * srpt_queue_data_rsp - send a read's data and response, or have it wait
 * @cmd: the command.
 *
 * The queue_data_in callback. A response that finds the send queue full,
 * or other responses waiting, goes on the channel's backlog, behind them,
 * and srpt_rsp_work() sends it when completions make room: LIO's own
 * queue-full handling, which -EAGAIN would start, calls again at once and
 * spins a kworker for as long as the initiator keeps the queue full (it
 * stops posting receives, with an RNR retry count of 7, for ever).
 *
 * Context: LIO callback (process context).
 * Return: 0, or -ENOMEM for LIO to try again.
 */
int srpt_queue_data_rsp(struct se_cmd *cmd)
{
	struct srpt_send_ioctx *ioctx =
		container_of(cmd, struct srpt_send_ioctx, cmd);
	int ret;

	ret = srpt_rsp_backlogged(ioctx->ch) ? -EAGAIN :
	      srpt_send_response(cmd, false);
	if (ret != -EAGAIN)
		return ret;
	if (!srpt_defer_rsp(ioctx, 0, true))
		srpt_drop_rsp(ioctx, -ESHUTDOWN);	/* being released */
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(srpt_queue_data_rsp);

/**
 * srpt_rsp_work - send the read response at the head of the backlog
 * @work: srpt_rdma_ch.rsp_work.
 *
 * The head is off the list while it is tried (building its RDMA WRITEs
 * may sleep), with srpt_rdma_ch.rsp_busy set so that the backlog does not
 * look empty: a completion returning slots meanwhile queues this work
 * again. A response that still does not fit goes back to the head and
 * waits for the next completion; on -ENOMEM it is tried again shortly.
 * Then the responses behind it follow (srpt_post_rsp_backlog()).
 *
 * Context: process context (srpt_wq, which has a rescuer: responses
 * must go out under memory pressure too).
 */
void srpt_rsp_work(struct work_struct *work)
{
	struct srpt_rdma_ch *ch = container_of(to_delayed_work(work),
					       struct srpt_rdma_ch, rsp_work);
	struct srpt_send_ioctx *ioctx;
	int ret;

	spin_lock_irq(&ch->rsp_lock);
	ioctx = list_first_entry_or_null(&ch->rsp_backlog,
					 struct srpt_send_ioctx, rsp_entry);
	if (ch->rsp_backlog_closed || !ioctx || !ioctx->rsp_data) {
		spin_unlock_irq(&ch->rsp_lock);
		if (ioctx)
			srpt_post_rsp_backlog(ch);
		return;
	}
	list_del(&ioctx->rsp_entry);
	ch->rsp_busy = true;
	spin_unlock_irq(&ch->rsp_lock);

	ret = srpt_send_response(&ioctx->cmd, false);

	spin_lock_irq(&ch->rsp_lock);
	ch->rsp_busy = false;
	if (ret)
		list_add(&ioctx->rsp_entry, &ch->rsp_backlog);
	spin_unlock_irq(&ch->rsp_lock);
	if (ret == -ENOMEM)
		queue_delayed_work(srpt_wq, &ch->rsp_work, HZ / 50);
	else if (!ret)
		srpt_post_rsp_backlog(ch);
}
EXPORT_SYMBOL_IF_KUNIT(srpt_rsp_work);

/**
 * srpt_drop_rsp - end a command whose response cannot be sent
 * @ioctx: the command, in the state it had before its response.
 * @err: why, for the log.
 *
 * The request's credit goes back with the next response.
 *
 * Context: LIO callback; must not sleep.
 */
void srpt_drop_rsp(struct srpt_send_ioctx *ioctx, int err)
{
	pr_warn_ratelimited("%s: tag %#llx: response dropped (%d)\n",
			    ioctx->ch->sess_name, ioctx->cmd.tag, err);
	srpt_return_credit(ioctx);
	srpt_set_cmd_state(ioctx, SRPT_STATE_DONE);
	target_put_sess_cmd(&ioctx->cmd);
}

/**
 * srpt_queue_status - send a status-only response
 * @cmd: the command.
 *
 * LIO ignores what queue_status returns on some of its paths
 * (target_send_busy(), aborts), so a response that finds the send queue
 * full waits in the channel's backlog for a completion to make room.
 *
 * Context: LIO callback; must not sleep.
 * Return: 0.
 */
int srpt_queue_status(struct se_cmd *cmd)
{
	struct srpt_send_ioctx *ioctx =
		container_of(cmd, struct srpt_send_ioctx, cmd);

	WARN_ON_ONCE(ioctx->sense_data != cmd->sense_buffer);
	ioctx->queue_status_only = true;
	return srpt_send_response(cmd, true);
}
EXPORT_SYMBOL_IF_KUNIT(srpt_queue_status);

/**
 * srpt_aborted_task - LIO aborted a command without a response
 * @cmd: the command.
 *
 * The command's credit is returned with the next response instead.
 *
 * Context: LIO callback.
 */
void srpt_aborted_task(struct se_cmd *cmd)
{
	srpt_return_credit(container_of(cmd, struct srpt_send_ioctx, cmd));
}

/**
 * srpt_release_ioctx - free what a finished command still holds
 * @ioctx: the command.
 *
 * Reposts a receive buffer kept for immediate data, frees the data pages
 * and rdma_rw contexts and gives the context back to the tag pool.
 *
 * Context: process context (LIO release_cmd).
 */
void srpt_release_ioctx(struct srpt_send_ioctx *ioctx)
{
	struct srpt_rdma_ch *ch = ioctx->ch;
	struct srpt_recv_ioctx *recv = ioctx->recv_ioctx;

	if (recv) {
		ioctx->recv_ioctx = NULL;
		srpt_repost_recv(ch, recv);
	}
	if (ioctx->n_rw_ctx)
		srpt_free_rw_ctxs(ch, ioctx);
	/* A free context reads as DONE (for the ACL's info file). */
	WRITE_ONCE(ioctx->state, SRPT_STATE_DONE);
	target_free_tag(ch->sess, &ioctx->cmd);
}
