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

/*
 * A reply owns its address handle: both go once it completed, or at once
 * if it never went out.
 */
static void ib_mad_reply_release(struct ib_mad_send_buf *reply)
{
	if (reply->ah)
		rdma_destroy_ah(reply->ah, RDMA_DESTROY_AH_SLEEPABLE);
	ib_free_send_mad(reply);
}

static void ib_mad_reply_sent(struct ib_mad_agent *agent,
			      struct ib_mad_send_wc *wc)
{
	ib_mad_reply_release(wc->send_buf);
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

/*
 * Bytes of @mad_hdr to send: an OPA port answers an IB MAD with an IB-sized
 * one. 0 if the driver's length does not fit the agent's port.
 */
static size_t ib_mad_reply_len(struct ib_mad_agent *agent,
			       const struct ib_mad_hdr *mad_hdr, size_t len,
			       bool opa)
{
	if (opa && mad_hdr->base_version != OPA_MGMT_BASE_VERSION)
		len = IB_MGMT_MAD_SIZE;
	if (len < IB_MGMT_MAD_HDR ||
	    len > rdma_max_mad_size(agent->device, agent->port_num))
		return 0;
	return len;
}

/**
 * ib_mad_reply_build() - a send buffer holding a reply, addressed
 * @agent: the reply agent
 * @mad_hdr: the reply, @len bytes
 * @len: from ib_mad_reply_len()
 * @grh: network header of the received MAD
 * @wc: completion of the received MAD
 * @port_num: port the MAD was received on; a switch's reply leaves by it
 *
 * Context: process context.
 * Return: the buffer, with its address handle, ready to post; or an
 * ERR_PTR().
 */
static struct ib_mad_send_buf *
ib_mad_reply_build(struct ib_mad_agent *agent, const struct ib_mad_hdr *mad_hdr,
		   size_t len, const struct ib_grh *grh, const struct ib_wc *wc,
		   u32 port_num)
{
	struct ib_mad_send_buf *reply;
	struct ib_ah *ah;

	reply = ib_create_send_mad(agent, wc->src_qp, wc->pkey_index, 0,
				   IB_MGMT_MAD_HDR, len - IB_MGMT_MAD_HDR,
				   GFP_KERNEL, mad_hdr->base_version);
	if (IS_ERR(reply))
		return reply;
	memcpy(reply->mad, mad_hdr, len);
	if (rdma_cap_ib_switch(agent->device))
		ib_mad_send_wr(reply)->send_wr.port_num = port_num;

	ah = ib_create_ah_from_wc(agent->qp->pd, wc, grh, port_num);
	if (IS_ERR(ah)) {
		ib_free_send_mad(reply);
		return ERR_CAST(ah);
	}
	reply->ah = ah;
	return reply;
}

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
 * The reply goes out through the reply agent of @qpn on the port (port 0
 * of a switch), which frees it with its address handle once sent. Errors
 * are logged and the reply is dropped, as a lost packet would be; a reply
 * refused because the port is being removed (-ESHUTDOWN) is dropped
 * silently.
 *
 * Context: process context.
 */
void ib_mad_reply_send(const struct ib_mad_hdr *mad_hdr,
		       const struct ib_grh *grh, const struct ib_wc *wc,
		       struct ib_device *device, u32 port_num, int qpn,
		       size_t resp_mad_len, bool opa)
{
	struct ib_mad_agent_private *priv = NULL;
	struct ib_mad_port_private *port;
	struct ib_mad_send_buf *reply;
	size_t len;
	int ret;

	port = ib_mad_port_get(device, rdma_cap_ib_switch(device) ? 0 : port_num);
	if (port && qpn >= 0 && qpn < IB_MAD_QPS_CORE)
		priv = ib_mad_reply_agent_get(port, qpn);
	if (!priv)
		return;

	len = ib_mad_reply_len(&priv->agent, mad_hdr, resp_mad_len, opa);
	if (len) {
		reply = ib_mad_reply_build(&priv->agent, mad_hdr, len, grh, wc,
					   port_num);
		ret = PTR_ERR_OR_ZERO(reply);
		if (!ret) {
			ret = ib_post_send_mad(reply, NULL);
			if (ret)
				ib_mad_reply_release(reply);
		}
		if (ret && ret != -ESHUTDOWN)
			dev_err_ratelimited(&device->dev,
					    "MAD reply not sent: %d\n", ret);
	}
	ib_mad_agent_put(priv);
}
