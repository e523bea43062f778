// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * RMPP control MADs: the ACKs, STOPs and ABORTs the MAD layer sends on its
 * own, and the address handles they travel on.
 *
 * A control MAD answers a received RMPP MAD.  It repeats the received
 * headers (class header included, as upstream Linux does), flips the
 * response bit of the method so that it is routed back to the agent that
 * sent the data, and carries its own RMPP fields.  It is an ordinary
 * one-MAD send of the agent whose completion is handled here instead of
 * reaching the client.
 */
#include <linux/slab.h>
#include <rdma/ib_verbs.h>

#include "mad_rmpp.h"

#include <trace/events/ib_mad.h>

/**
 * mad_rmpp_ah_create() - address handle back to the sender of a MAD
 * @priv: agent the MAD was received on
 * @recv_wc: the received MAD
 *
 * Context: Process context, may sleep.
 * Return: the handle with one reference, or an ERR_PTR().
 */
struct mad_rmpp_ah *mad_rmpp_ah_create(struct ib_mad_agent_private *priv,
				       const struct ib_mad_recv_wc *recv_wc)
{
	struct mad_rmpp_ah *ah;
	struct ib_ah *ib_ah;

	ah = kmalloc(sizeof(*ah), GFP_KERNEL);
	if (!ah)
		return ERR_PTR(-ENOMEM);

	ib_ah = ib_create_ah_from_wc(priv->agent.qp->pd, recv_wc->wc,
				     recv_wc->recv_buf.grh,
				     priv->agent.port_num);
	if (IS_ERR(ib_ah)) {
		kfree(ah);
		return ERR_CAST(ib_ah);
	}
	kref_init(&ah->ref);
	ah->ah = ib_ah;
	return ah;
}

static void mad_rmpp_ah_release(struct kref *ref)
{
	struct mad_rmpp_ah *ah = container_of(ref, struct mad_rmpp_ah, ref);

	rdma_destroy_ah(ah->ah, RDMA_DESTROY_AH_SLEEPABLE);
	kfree(ah);
}

/**
 * mad_rmpp_ah_put() - drop a reference to an address handle
 * @ah: the handle
 *
 * Context: Process context, may sleep (the last reference destroys it).
 */
void mad_rmpp_ah_put(struct mad_rmpp_ah *ah)
{
	might_sleep();
	kref_put(&ah->ref, mad_rmpp_ah_release);
}

/**
 * mad_rmpp_tmpl_init() - keep what a reply to a received MAD needs
 * @tmpl: template to fill in
 * @recv_wc: the received RMPP MAD, owned by the caller
 *
 * Context: Any context.
 * Return: 0, or -EINVAL when the class has no RMPP header or the MAD is
 * shorter than its headers.
 */
int mad_rmpp_tmpl_init(struct mad_rmpp_tmpl *tmpl,
		       const struct ib_mad_recv_wc *recv_wc)
{
	const struct ib_mad_hdr *hdr = &recv_wc->recv_buf.mad->mad_hdr;
	int hdr_len = ib_get_mad_data_offset(hdr->mgmt_class);

	if (hdr_len < IB_MGMT_RMPP_HDR || hdr_len > MAD_RMPP_MAX_HDR_LEN ||
	    recv_wc->mad_len < hdr_len)
		return -EINVAL;

	memcpy(tmpl->hdr, hdr, hdr_len);
	tmpl->hdr_len = hdr_len;
	tmpl->src_qp = recv_wc->wc->src_qp;
	tmpl->pkey_index = recv_wc->wc->pkey_index;
	return 0;
}

static void mad_rmpp_ctrl_done(struct ib_mad_send_wr_private *wr,
			       struct ib_mad_send_wc *wc)
{
	struct mad_rmpp_ah *ah = wr->send_buf.context[0];

	ib_free_send_mad(&wr->send_buf);
	mad_rmpp_ah_put(ah);
}

/**
 * mad_rmpp_ctrl_send() - send an ACK, STOP or ABORT
 * @priv: agent to send on
 * @ah: address handle to the peer; the send takes its own reference
 * @tmpl: headers of the MAD being answered
 * @ctrl: RMPP fields of the control MAD
 *
 * A lost control MAD is recovered by the protocol (the peer times out and
 * repeats itself), so failures are only reported, never retried here.
 *
 * Context: Process context, may sleep; no MAD lock held.
 * Return: 0, or a negative errno when the MAD could not be posted.
 */
int mad_rmpp_ctrl_send(struct ib_mad_agent_private *priv,
		       struct mad_rmpp_ah *ah, const struct mad_rmpp_tmpl *tmpl,
		       const struct mad_rmpp_ctrl *ctrl)
{
	struct ib_mad_send_buf *msg;
	struct ib_rmpp_mad *mad;
	int ret;

	msg = ib_create_send_mad(&priv->agent, tmpl->src_qp, tmpl->pkey_index,
				 0, tmpl->hdr_len, 0, GFP_KERNEL,
				 IB_MGMT_BASE_VERSION);
	if (IS_ERR(msg))
		return PTR_ERR(msg);

	mad = msg->mad;
	memcpy(mad, tmpl->hdr, tmpl->hdr_len);
	mad->mad_hdr.method ^= IB_MGMT_METHOD_RESP;
	mad->rmpp_hdr.rmpp_version = IB_MGMT_RMPP_VERSION;
	mad->rmpp_hdr.rmpp_type = ctrl->type;
	mad->rmpp_hdr.rmpp_rtime_flags = 0;
	ib_set_rmpp_resptime(&mad->rmpp_hdr, IB_MGMT_RMPP_NO_RESPTIME);
	ib_set_rmpp_flags(&mad->rmpp_hdr, IB_MGMT_RMPP_FLAG_ACTIVE);
	mad->rmpp_hdr.rmpp_status = ctrl->status;
	mad->rmpp_hdr.seg_num = cpu_to_be32(ctrl->seg_num);
	mad->rmpp_hdr.paylen_newwin = cpu_to_be32(ctrl->newwin);

	kref_get(&ah->ref);
	msg->ah = ah->ah;
	msg->context[0] = ah;
	msg->timeout_ms = 0;
	msg->retries = 0;
	ib_mad_send_wr(msg)->internal_done = mad_rmpp_ctrl_done;

	trace_ib_mad_rmpp_ctrl(priv, mad);
	ret = ib_post_send_mad(msg, NULL);
	if (ret) {
		ib_free_send_mad(msg);
		mad_rmpp_ah_put(ah);
		dev_dbg_ratelimited(&priv->agent.device->dev,
				    "RMPP: cannot send type %u status %u: %d\n",
				    ctrl->type, ctrl->status, ret);
	}
	return ret;
}

/**
 * mad_rmpp_ctrl_reply() - answer one received MAD with a control MAD
 * @priv: agent the MAD was received on
 * @recv_wc: the received MAD, still owned by the caller
 * @ctrl: RMPP fields of the answer
 *
 * Used outside of any reassembly (bad MADs, ACKs for our sends, the
 * turnaround of a double-sided transfer), so the address handle is made
 * for this one answer.
 *
 * Context: Process context, may sleep; no MAD lock held.
 */
void mad_rmpp_ctrl_reply(struct ib_mad_agent_private *priv,
			 const struct ib_mad_recv_wc *recv_wc,
			 const struct mad_rmpp_ctrl *ctrl)
{
	struct mad_rmpp_tmpl tmpl;
	struct mad_rmpp_ah *ah;

	if (mad_rmpp_tmpl_init(&tmpl, recv_wc))
		return;
	ah = mad_rmpp_ah_create(priv, recv_wc);
	if (IS_ERR(ah))
		return;
	mad_rmpp_ctrl_send(priv, ah, &tmpl, ctrl);
	mad_rmpp_ah_put(ah);
}

/**
 * mad_rmpp_abort_peer() - tell the sender of a MAD that RMPP failed
 * @priv: agent the MAD was received on
 * @recv_wc: the offending MAD, still owned by the caller
 * @status: RMPP ABORT status
 *
 * Context: Process context, may sleep; no MAD lock held.
 */
void mad_rmpp_abort_peer(struct ib_mad_agent_private *priv,
			 const struct ib_mad_recv_wc *recv_wc, u8 status)
{
	const struct mad_rmpp_ctrl ctrl = {
		.type = IB_MGMT_RMPP_TYPE_ABORT,
		.status = status,
	};

	mad_rmpp_ctrl_reply(priv, recv_wc, &ctrl);
}

/**
 * mad_rmpp_peer_wait_ms() - time to add for a peer's advertised response
 * @rtime: RRespTime field the peer sent
 *
 * A peer may ask for up to 4.096 us * 2^30 (over an hour); we never grant
 * more than the time a receiver of ours waits for a silent sender, since a
 * peer asking for more would be aborted by its own peers anyway.
 *
 * Context: Any context.
 * Return: milliseconds, 0 when the peer advertised no time.
 */
unsigned int mad_rmpp_peer_wait_ms(u8 rtime)
{
	return min(mad_rmpp_resptime_ms(rtime),
		   MAD_RMPP_PEER_TRIES * MAD_RMPP_ACK_WAIT_MAX_MS);
}
