// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The MAD layer's own agents: one send-only agent on QP0 and one on QP1 of
 * every port, used to send what the layer answers by itself: replies the
 * driver's process_mad() builds, "unsupported method/attribute" answers,
 * and directed-route SMPs a switch relays.
 */

#include <linux/slab.h>
#include <kunit/visibility.h>
#include <rdma/ib_verbs.h>

#include "core_priv.h"
#include "mad_priv.h"

static void ib_mad_reply_sent(struct ib_mad_agent *agent,
			      struct ib_mad_send_wc *wc)
{
	rdma_destroy_ah(wc->send_buf->ah, RDMA_DESTROY_AH_SLEEPABLE);
	ib_free_send_mad(wc->send_buf);
}

/**
 * ib_mad_reply_port_open() - register the reply agents of a port
 * @port: the port, opened and published by the MAD layer
 *
 * Context: process context.
 * Return: 0 or a negative errno.
 */
int ib_mad_reply_port_open(struct ib_mad_port_private *port)
{
	static const enum ib_qp_type types[IB_MAD_QPS_CORE] = {
		IB_QPT_SMI, IB_QPT_GSI
	};
	struct ib_mad_agent *agent;
	int i;

	for (i = 0; i < IB_MAD_QPS_CORE; i++) {
		if (!port->qp_info[i].qp)
			continue;
		agent = ib_register_mad_agent(port->device, port->port_num,
					      types[i], NULL, 0,
					      ib_mad_reply_sent, NULL, NULL, 0);
		if (IS_ERR(agent)) {
			ib_mad_reply_port_close(port);
			return PTR_ERR(agent);
		}
		rcu_assign_pointer(port->reply_agents[i], agent);
	}
	return 0;
}

/**
 * ib_mad_reply_port_close() - unregister the reply agents of a port
 * @port: the port
 *
 * A reply the CQ work is still building holds a reference to its agent
 * (ib_mad_reply_agent_get()): the unregistration waits for it, and its
 * post fails once the unregistration began.
 *
 * Context: process context; waits for replies still being sent.
 */
void ib_mad_reply_port_close(struct ib_mad_port_private *port)
{
	struct ib_mad_agent *agent;
	int i;

	for (i = IB_MAD_QPS_CORE - 1; i >= 0; i--) {
		/* Unpublish first: nobody finds it while it is torn down. */
		agent = rcu_replace_pointer(port->reply_agents[i], NULL, true);
		if (agent)
			ib_unregister_mad_agent(agent);
	}
}
EXPORT_SYMBOL_IF_KUNIT(ib_mad_reply_port_close);

/**
 * ib_mad_reply_agent_get() - reference the reply agent of a QP of a port
 * @port: the port
 * @qpn: 0 or 1
 *
 * The CQ work answers MADs with the reply agents while port removal may be
 * unregistering them. The agent is freed only after an RCU grace period
 * and once its last reference is gone, so a reference taken under the RCU
 * read lock keeps it alive until ib_mad_agent_put(); an agent whose
 * unregistration already dropped the last reference is not taken.
 *
 * Context: any.
 * Return: the agent with a reference held, or NULL when the port has none
 * (any more).
 */
VISIBLE_IF_KUNIT struct ib_mad_agent_private *
ib_mad_reply_agent_get(struct ib_mad_port_private *port, int qpn)
{
	struct ib_mad_agent_private *priv = NULL;
	struct ib_mad_agent *agent;

	rcu_read_lock();
	agent = rcu_dereference(port->reply_agents[qpn]);
	if (agent && refcount_inc_not_zero(&ib_mad_agent_priv(agent)->refcount))
		priv = ib_mad_agent_priv(agent);
	rcu_read_unlock();
	return priv;
}
EXPORT_SYMBOL_IF_KUNIT(ib_mad_reply_agent_get);

/**
 * ib_mad_reply_send() - send a MAD back to where a received one came from
 * @mad_hdr: the MAD to send (copied)
 * @grh: network header of the received MAD, for the address
 * @wc: completion of the received MAD
 * @device: the device
 * @port_num: port to send from
 * @qpn: 0 or 1, the QP to send on
 * @resp_mad_len: bytes of @mad_hdr to send
 * @opa: the port accepts OPA MADs
 *
 * Errors are logged and the reply is dropped, as a lost packet would be.
 *
 * Context: process context.
 */
void ib_mad_reply_send(const struct ib_mad_hdr *mad_hdr,
		       const struct ib_grh *grh, const struct ib_wc *wc,
		       struct ib_device *device, u32 port_num, int qpn,
		       size_t resp_mad_len, bool opa)
{
	struct ib_mad_port_private *port;
	struct ib_mad_agent_private *priv;
	struct ib_mad_send_buf *send_buf;
	struct ib_mad_agent *agent;
	struct ib_ah *ah;
	int ret;

	/* A switch has its management port 0 and nothing else. */
	port = ib_mad_port_get(device, rdma_cap_ib_switch(device) ? 0 : port_num);
	if (!port || qpn < 0 || qpn >= IB_MAD_QPS_CORE)
		return;
	priv = ib_mad_reply_agent_get(port, qpn);
	if (!priv)
		return;
	agent = &priv->agent;
	if (opa && mad_hdr->base_version != OPA_MGMT_BASE_VERSION)
		resp_mad_len = IB_MGMT_MAD_SIZE;
	if (resp_mad_len < IB_MGMT_MAD_HDR ||
	    resp_mad_len > rdma_max_mad_size(device, port->port_num))
		goto out_put;

	ah = ib_create_ah_from_wc(agent->qp->pd, wc, grh, port_num);
	if (IS_ERR(ah)) {
		dev_err_ratelimited(&device->dev,
				    "MAD reply: no address handle: %ld\n",
				    PTR_ERR(ah));
		goto out_put;
	}
	send_buf = ib_create_send_mad(agent, wc->src_qp, wc->pkey_index, 0,
				      IB_MGMT_MAD_HDR,
				      resp_mad_len - IB_MGMT_MAD_HDR,
				      GFP_KERNEL, mad_hdr->base_version);
	if (IS_ERR(send_buf)) {
		ret = PTR_ERR(send_buf);
		goto err_destroy_ah;
	}
	memcpy(send_buf->mad, mad_hdr, resp_mad_len);
	send_buf->ah = ah;
	if (rdma_cap_ib_switch(device))
		ib_mad_send_wr(send_buf)->send_wr.port_num = port_num;
	ret = ib_post_send_mad(send_buf, NULL);
	if (ret)
		goto err_free_buf;
	ib_mad_agent_put(priv);
	return;

err_free_buf:
	ib_free_send_mad(send_buf);
err_destroy_ah:
	/* -ESHUTDOWN: the port is being removed, the reply is moot. */
	if (ret != -ESHUTDOWN)
		dev_err_ratelimited(&device->dev, "MAD reply not sent: %d\n",
				    ret);
	rdma_destroy_ah(ah, RDMA_DESTROY_AH_SLEEPABLE);
out_put:
	ib_mad_agent_put(priv);
}
