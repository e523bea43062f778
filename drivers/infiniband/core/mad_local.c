// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Directed-route SMPs that never leave the node.
 *
 * An SM or a diagnostic tool addresses the local SMA with a directed-route
 * SMP of hop count 0 (or a returning SMP reaches its requester). Such an
 * SMP is not sent: the driver's process_mad() answers it, and the answer
 * is delivered as if it had been received, before the send completes.
 * All of this runs from the port's workqueue, never from the post call.
 */

#include <linux/slab.h>

#include "core_priv.h"
#include "mad_priv.h"
#include "mad_smi.h"

#include <trace/events/ib_mad.h>

/**
 * struct ib_mad_local - one SMP answered locally
 * @work: runs ib_mad_local_work() on the port's workqueue
 * @wr: the send; state RESPONDED until the work completes it
 * @port_num: port the SMP is processed on (switches: its egress port)
 * @slid: DR SLID to report as the source LID of the answer
 */
struct ib_mad_local {
	struct work_struct work;
	struct ib_mad_send_wr_private *wr;
	u32 port_num;
	u16 slid;
};

/**
 * ib_mad_local_wc() - the completion of a local SMP, as if received on QP0
 * @local: the SMP
 * @qp: QP0 of the port
 * @slid: source LID to report
 *
 * The SMP came from QP0 itself, without a GRH, in a buffer of an IB MAD
 * and its GRH; what is not named here (SL, path bits, flags) is zero.
 *
 * Return: the completion, by value.
 */
static struct ib_wc ib_mad_local_wc(const struct ib_mad_local *local,
				    struct ib_qp *qp, u16 slid)
{
	return (struct ib_wc) {
		.wr_cqe = &local->wr->mad_list.cqe,
		.opcode = IB_WC_RECV,
		.status = IB_WC_SUCCESS,
		.byte_len = sizeof(struct ib_grh) + sizeof(struct ib_mad),
		.qp = qp,
		.src_qp = IB_QP0,
		.slid = slid,
		.pkey_index = local->wr->send_wr.pkey_index,
		.port_num = local->port_num,
	};
}

/* Give @recv to @agent as a received MAD answering @wr; eats @recv. */
static void ib_mad_local_deliver(struct ib_mad_agent_private *agent,
				 struct ib_mad_local *local,
				 struct ib_mad_recv_priv *recv, size_t len,
				 bool opa)
{
	struct ib_mad_recv_wc *rwc = &recv->recv_wc;
	const struct ib_mad_hdr *hdr = (const struct ib_mad_hdr *)recv->mad;

	recv->wc = ib_mad_local_wc(local, agent->agent.qp,
				   be16_to_cpu(IB_LID_PERMISSIVE));
	rwc->wc = &recv->wc;
	rwc->recv_buf.grh = NULL;
	rwc->recv_buf.mad = (struct ib_mad *)recv->mad;
	INIT_LIST_HEAD(&rwc->rmpp_list);
	list_add(&rwc->recv_buf.list, &rwc->rmpp_list);
	if (opa && hdr->base_version == OPA_MGMT_BASE_VERSION) {
		rwc->mad_len = len;
		rwc->mad_seg_size = sizeof(struct opa_mad);
	} else {
		rwc->mad_len = sizeof(struct ib_mad);
		rwc->mad_seg_size = sizeof(struct ib_mad);
	}
	agent->agent.recv_handler(&agent->agent, &local->wr->send_buf, rwc);
}

/*
 * The status of an SMP the driver failed, or for whose answer no buffer
 * could be had. Upstream's ib_post_send_mad() runs process_mad() itself
 * and returns the error; ours never sleeps, so the SMP is on the
 * workqueue by then. A request (one with a timeout) learns of it as of an
 * SMA that never answers, but at once: IB_WC_RESP_TIMEOUT_ERR is the one
 * failure ib_umad passes on, so that opensm's transaction ends instead of
 * waiting for ever. A send that expects nothing gets IB_WC_GENERAL_ERR.
 */
static enum ib_wc_status
ib_mad_local_failed(const struct ib_mad_send_wr_private *wr)
{
	return wr->expect_resp ? IB_WC_RESP_TIMEOUT_ERR : IB_WC_GENERAL_ERR;
}

/*
 * Run process_mad() on the SMP and deliver what comes of it. Returns the
 * status the send completes with.
 */
static enum ib_wc_status ib_mad_local_process(struct ib_mad_local *local)
{
	struct ib_mad_send_wr_private *wr = local->wr;
	struct ib_mad_agent_private *priv = wr->mad_agent_priv;
	struct ib_mad_port_private *port = ib_mad_agent_port(priv);
	struct ib_device *dev = priv->agent.device;
	bool opa = rdma_cap_opa_mad(dev, port->port_num);
	size_t mad_size = rdma_max_mad_size(dev, port->port_num);
	const struct ib_mad_hdr *smp = wr->send_buf.mad;
	struct ib_mad_agent_private *target = NULL;
	struct ib_mad_recv_priv *recv;
	u16 out_pkey_index = 0;
	struct ib_wc wc;
	int ret;

	recv = ib_mad_recv_priv_alloc(mad_size, GFP_KERNEL);
	if (!recv)
		return ib_mad_local_failed(wr);
	wc = ib_mad_local_wc(local, priv->agent.qp, local->slid);
	if (opa && smp->base_version == OPA_MGMT_BASE_VERSION)
		wc.byte_len = wr->send_buf.hdr_len + wr->send_buf.data_len +
			      sizeof(struct ib_grh);
	/* A directed-route SMP has no GRH. */
	ret = dev->ops.process_mad(dev, 0, local->port_num, &wc, NULL,
				   (const struct ib_mad *)smp,
				   (struct ib_mad *)recv->mad, &mad_size,
				   &out_pkey_index);
	if (opa)
		wr->send_wr.pkey_index = out_pkey_index;

	switch (ret) {
	case IB_MAD_RESULT_SUCCESS | IB_MAD_RESULT_REPLY:
		/* The SMA answered: the answer goes back to the sender. */
		if (ib_response_mad((const struct ib_mad_hdr *)recv->mad) &&
		    priv->agent.recv_handler) {
			ib_mad_agent_get(priv);
			target = priv;
		}
		break;
	case IB_MAD_RESULT_SUCCESS:
		/* Not for the SMA: it is received here like any MAD. */
		memcpy(recv->mad, smp, min_t(size_t, recv->mad_size,
					     wr->send_buf.hdr_len +
					     wr->send_buf.data_len));
		target = ib_mad_find_agent(port, (const struct ib_mad_hdr *)recv->mad);
		break;
	case IB_MAD_RESULT_SUCCESS | IB_MAD_RESULT_CONSUMED:
		break;
	default:
		ib_mad_recv_priv_free(recv);
		return ib_mad_local_failed(wr);
	}
	if (!target) {
		ib_mad_recv_priv_free(recv);
		return IB_WC_SUCCESS;
	}
	ib_mad_local_deliver(target, local, recv, mad_size, opa);
	ib_mad_agent_put(target);
	return IB_WC_SUCCESS;
}

static void ib_mad_local_work(struct work_struct *work)
{
	struct ib_mad_local *local = container_of(work, struct ib_mad_local,
						  work);
	struct ib_mad_send_wr_private *wr = local->wr;

	ib_mad_send_local_complete(wr, ib_mad_local_process(local));
	kfree(local);
}

/*
 * Apply the sending rules at the start of the path. Returns the DR SLID to
 * report for a local answer, or a negative errno for a malformed route.
 */
static int ib_mad_local_route(struct ib_mad_agent_private *priv, void *smp,
			      u32 port_num, bool *local)
{
	struct ib_device *dev = priv->agent.device;
	bool opa = rdma_cap_opa_mad(dev, priv->agent.port_num);
	struct ib_mad_dr_route route;
	bool endpoint_permissive;
	u32 drslid;

	if (ib_mad_smp_route(smp, opa, &route)) {
		trace_ib_mad_handle_out_opa_smi(smp);
		drslid = be32_to_cpu(((struct opa_smp *)smp)->route.dr.dr_slid);
	} else {
		trace_ib_mad_handle_out_ib_smi(smp);
		drslid = be16_to_cpu(((struct ib_smp *)smp)->dr_slid);
	}

	/*
	 * The directed part starts here when the LID-routed part before it
	 * (outbound) or after it (returning) is empty (IBA 14.2.2).
	 */
	endpoint_permissive = route.returning ? route.dlid_permissive :
						route.slid_permissive;
	if (endpoint_permissive &&
	    ib_mad_smi_dr_send(&route, rdma_cap_ib_switch(dev), port_num) ==
	    IB_MAD_SMI_DISCARD)
		return -EINVAL;
	if (drslid != be32_to_cpu(OPA_LID_PERMISSIVE) && drslid > 0xffff)
		return -EINVAL;
	*local = ib_mad_smi_for_local_agent(&route, dev) ||
		 ib_mad_smi_back_at_requester(&route, dev);
	return drslid & 0xffff;
}

/**
 * ib_mad_local_smp() - check an outgoing directed-route SMP
 * @priv: the sending agent
 * @wr: the send, armed for posting
 *
 * Applies the directed-route sending rules. An SMP for the local SMA (or
 * back at its requester) is taken over: the port's workqueue has the
 * driver answer it, delivers the answer and completes the send.
 *
 * Context: any; does not sleep.
 * Return: 0 if the SMP goes to the wire, 1 if it was taken over, or
 * -EINVAL for a route that breaks the rules, -ESHUTDOWN when the agent is
 * being unregistered, -ENOMEM.
 */
int ib_mad_local_smp(struct ib_mad_agent_private *priv,
		     struct ib_mad_send_wr_private *wr)
{
	struct ib_device *dev = priv->agent.device;
	struct ib_mad_local *local;
	unsigned long flags;
	bool is_local = false;
	u32 port_num;
	int slid;

	port_num = rdma_cap_ib_switch(dev) ? wr->send_wr.port_num :
					     priv->agent.port_num;
	slid = ib_mad_local_route(priv, wr->send_buf.mad, port_num, &is_local);
	if (slid < 0) {
		dev_dbg_ratelimited(&dev->dev,
				    "MAD: directed route SMP with a bad route\n");
		return slid;
	}
	if (!is_local)
		return 0;

	local = kzalloc(sizeof(*local), GFP_ATOMIC);
	if (!local)
		return -ENOMEM;
	INIT_WORK(&local->work, ib_mad_local_work);
	local->wr = wr;
	local->port_num = port_num;
	local->slid = slid;

	spin_lock_irqsave(&priv->lock, flags);
	if (priv->dying) {
		spin_unlock_irqrestore(&priv->lock, flags);
		kfree(local);
		return -ESHUTDOWN;
	}
	ib_mad_send_response_begin_locked(wr);
	spin_unlock_irqrestore(&priv->lock, flags);
	trace_ib_mad_smi_local(wr);
	queue_work(ib_mad_agent_port(priv)->wq, &local->work);
	return 1;
}
