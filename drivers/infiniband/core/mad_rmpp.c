// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The RMPP entry point for received MADs: DATA segments go to reassembly
 * (mad_rmpp_recv.c), ACK, STOP and ABORT to the sends they steer
 * (mad_rmpp_send.c). Dispatching here, above both, keeps the receive side
 * from calling into the send side; the send side only asks reassembly for
 * the window a requester granted its response.
 */

#include <rdma/ib_verbs.h>

#include "mad_rmpp.h"

#include <trace/events/ib_mad.h>

/**
 * ib_mad_rmpp_recv() - process a received RMPP MAD of a kernel RMPP agent
 * @priv: the receiving agent, referenced by the caller
 * @recv_wc: a MAD of an RMPP class with the Active flag; ownership passes
 *	to this function
 *
 * DATA segments go into reassembly; ACK, STOP and ABORT drive our sends.
 * A MAD of an RMPP version or type we do not know ends any send it matches
 * and is answered with an ABORT.
 *
 * Context: Process context, may sleep; no MAD lock held.
 * Return: a complete message (its first segment's work completion, all
 * segments on its rmpp_list in order) for the core to deliver, or NULL
 * when the MAD was consumed.
 */
struct ib_mad_recv_wc *ib_mad_rmpp_recv(struct ib_mad_agent_private *priv,
					struct ib_mad_recv_wc *recv_wc)
{
	struct ib_rmpp_hdr *hdr =
		&((struct ib_rmpp_mad *)recv_wc->recv_buf.mad)->rmpp_hdr;
	u8 status, reply;

	if (!(ib_get_rmpp_flags(hdr) & IB_MGMT_RMPP_FLAG_ACTIVE))
		return recv_wc;
	if (recv_wc->mad_len < IB_MGMT_RMPP_HDR)
		goto free;
	trace_ib_mad_rmpp_recv(priv, (struct ib_rmpp_mad *)recv_wc->recv_buf.mad);

	status = mad_rmpp_check_hdr(hdr);
	if (status) {
		mad_rmpp_send_handle_abort(priv, recv_wc, status, status);
		goto free;
	}

	switch (hdr->rmpp_type) {
	case IB_MGMT_RMPP_TYPE_DATA:
		return mad_rmpp_recv_data(priv, recv_wc);
	case IB_MGMT_RMPP_TYPE_ACK:
		mad_rmpp_send_handle_ack(priv, recv_wc);
		break;
	default:	/* STOP or ABORT */
		status = mad_rmpp_peer_abort_status(hdr, &reply);
		mad_rmpp_send_handle_abort(priv, recv_wc, status, reply);
		break;
	}
free:
	ib_free_recv_mad(recv_wc);
	return NULL;
}
