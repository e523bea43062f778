// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * MAD receives: validation, directed-route handling, the driver's right
 * of first refusal (process_mad), dispatch to agents and the matching of
 * responses to the requests they answer.
 */

#include <linux/random.h>
#include <linux/slab.h>
#include <kunit/static_stub.h>
#include <kunit/visibility.h>
#include <rdma/ib_cache.h>

#include "core_priv.h"
#include "mad_priv.h"
#include "mad_smi.h"

#include <trace/events/ib_mad.h>

/**
 * ib_mad_recv_validate() - is a received MAD acceptable on this QP?
 * @hdr: the MAD header
 * @qp_num: 0 or 1, the QP it arrived on
 * @opa: the port accepts OPA MADs
 *
 * Checks the base version, that subnet management classes arrive on QP0
 * and every other class on QP1, and that CM MADs other than ClassPortInfo
 * use the Send method.
 *
 * Return: true if the MAD may be processed.
 */
VISIBLE_IF_KUNIT bool ib_mad_recv_validate(const struct ib_mad_hdr *hdr,
					   u32 qp_num, bool opa)
{
	bool smp = hdr->mgmt_class == IB_MGMT_CLASS_SUBN_LID_ROUTED ||
		   hdr->mgmt_class == IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE;

	if (hdr->base_version != IB_MGMT_BASE_VERSION &&
	    !(opa && hdr->base_version == OPA_MGMT_BASE_VERSION))
		return false;
	if (smp)
		return qp_num == 0;
	if (qp_num == 0)
		return false;
	if (hdr->mgmt_class == IB_MGMT_CLASS_CM &&
	    hdr->attr_id != IB_MGMT_CLASSPORTINFO_ATTR_ID &&
	    hdr->method != IB_MGMT_METHOD_SEND)
		return false;
	return true;
}
EXPORT_SYMBOL_IF_KUNIT(ib_mad_recv_validate);

/*
 * Fill in the client's view of a received buffer. Returns false when the
 * completion is too short to hold a MAD header.
 */
static bool ib_mad_recv_setup(struct ib_mad_recv_priv *priv,
			      const struct ib_wc *wc, bool opa)
{
	struct ib_mad_recv_wc *rwc = &priv->recv_wc;
	const struct ib_mad_hdr *hdr = (const struct ib_mad_hdr *)priv->mad;

	priv->wc = *wc;
	rwc->wc = &priv->wc;
	rwc->recv_buf.grh = &priv->grh;
	rwc->recv_buf.mad = (struct ib_mad *)priv->mad;
	INIT_LIST_HEAD(&rwc->rmpp_list);
	list_add(&rwc->recv_buf.list, &rwc->rmpp_list);

	if (wc->byte_len < sizeof(struct ib_grh) + IB_MGMT_MAD_HDR)
		return false;
	if (opa && hdr->base_version == OPA_MGMT_BASE_VERSION) {
		rwc->mad_len = min_t(size_t, wc->byte_len - sizeof(struct ib_grh),
				     priv->mad_size);
		rwc->mad_seg_size = sizeof(struct opa_mad);
	} else {
		rwc->mad_len = sizeof(struct ib_mad);
		rwc->mad_seg_size = sizeof(struct ib_mad);
	}
	return true;
}

/* What becomes of a directed-route SMP on receive. */
enum ib_mad_recv_dr_fate {
	IB_MAD_DR_DROP,		/* breaks the directed-route rules */
	IB_MAD_DR_UP,		/* continues up the stack */
	IB_MAD_DR_RELAYED,	/* a switch sent it on to its next hop */
};

/* Directed-route SMP on receive: apply the rules, relay it if it is due. */
static enum ib_mad_recv_dr_fate
ib_mad_recv_dr_smp(struct ib_mad_qp_info *qp_info,
		   struct ib_mad_recv_priv *priv, u32 port_num, bool opa)
{
	struct ib_mad_port_private *port = qp_info->port_priv;
	struct ib_device *dev = port->device;
	bool is_switch = rdma_cap_ib_switch(dev);
	struct ib_mad_dr_route route;
	bool opa_smp;

	opa_smp = ib_mad_smp_route(priv->mad, opa, &route);
	if (opa_smp)
		trace_ib_mad_handle_opa_smi((struct opa_smp *)priv->mad);
	else
		trace_ib_mad_handle_ib_smi((struct ib_smp *)priv->mad);
	trace_ib_mad_smi_recv(port, priv->recv_wc.recv_buf.mad, *route.hop_ptr,
			      route.hop_cnt);
	if (ib_mad_smi_dr_recv(&route, is_switch, port_num,
			       dev->phys_port_cnt) == IB_MAD_SMI_DISCARD)
		return IB_MAD_DR_DROP;

	switch (ib_mad_smi_dr_forward(&route)) {
	case IB_MAD_SMI_LOCAL:
		return IB_MAD_DR_UP;
	case IB_MAD_SMI_SEND:
		if (ib_mad_smi_dr_send(&route, is_switch, port_num) ==
		    IB_MAD_SMI_DISCARD)
			return IB_MAD_DR_DROP;
		return ib_mad_smi_for_local_agent(&route, dev) ?
		       IB_MAD_DR_UP : IB_MAD_DR_DROP;
	case IB_MAD_SMI_FORWARD:
		if (!is_switch)
			return IB_MAD_DR_UP;
		ib_mad_reply_send((const struct ib_mad_hdr *)priv->mad,
				  &priv->grh, &priv->wc, dev,
				  ib_mad_smi_fwd_port(&route),
				  qp_info->qp_num,
				  opa_smp ? priv->recv_wc.mad_len :
					    sizeof(struct ib_mad), opa_smp);
		return IB_MAD_DR_RELAYED;
	}
	return IB_MAD_DR_DROP;
}

/* Answer an unclaimed Get or Set with "unsupported method/attribute". */
static void ib_mad_recv_unsupported(struct ib_mad_qp_info *qp_info,
				    struct ib_mad_recv_priv *priv,
				    u32 port_num, bool opa)
{
	struct ib_mad_port_private *port = qp_info->port_priv;
	const struct ib_mad_hdr *in = (const struct ib_mad_hdr *)priv->mad;
	struct ib_mad_hdr *out;
	size_t len = priv->mad_size;
	bool opa_mad = opa && in->base_version == OPA_MGMT_BASE_VERSION;

	if (in->method != IB_MGMT_METHOD_GET && in->method != IB_MGMT_METHOD_SET)
		return;
	out = kmemdup(priv->mad, priv->mad_size, GFP_KERNEL);
	if (!out)
		return;
	out->method = IB_MGMT_METHOD_GET_RESP;
	out->status = cpu_to_be16(IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB);
	if (in->mgmt_class == IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE)
		out->status |= IB_SMP_DIRECTION;
	if (opa_mad) {
		if (in->mgmt_class == IB_MGMT_CLASS_SUBN_LID_ROUTED ||
		    in->mgmt_class == IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE)
			len = opa_get_smp_header_size((struct opa_smp *)out);
		else
			len = sizeof(struct ib_mad_hdr);
	}
	ib_mad_stat_inc(port, IB_MAD_STAT_UNSUPPORTED);
	ib_mad_reply_send(out, &priv->grh, &priv->wc, port->device, port_num,
			  qp_info->qp_num, len, opa);
	kfree(out);
}

/**
 * ib_mad_recv_out_alloc() - the buffer for the driver's answer to a MAD
 * @size: the MAD size of the port
 *
 * Context: process context.
 * Return: a zeroed buffer the caller kfree()s, or NULL.
 */
VISIBLE_IF_KUNIT void *ib_mad_recv_out_alloc(size_t size)
{
	KUNIT_STATIC_STUB_REDIRECT(ib_mad_recv_out_alloc, size);
	return kzalloc(size, GFP_KERNEL);
}
EXPORT_SYMBOL_IF_KUNIT(ib_mad_recv_out_alloc);

/*
 * Give the driver the first look at a MAD. Returns the process_mad()
 * result (IB_MAD_RESULT_SUCCESS alone means "continue as usual"), or
 * -ENOMEM when there was no buffer for the driver's answer: the MAD must
 * then be dropped, as the driver may have been the one to consume it.
 */
static int ib_mad_recv_driver(struct ib_mad_qp_info *qp_info,
			      struct ib_mad_recv_priv *priv, u32 port_num,
			      bool opa)
{
	struct ib_mad_port_private *port = qp_info->port_priv;
	struct ib_device *dev = port->device;
	size_t out_size = priv->mad_size;
	struct ib_wc wc = priv->wc;
	u16 out_pkey_index = 0;
	struct ib_mad *out;
	int ret;

	if (!dev->ops.process_mad)
		return IB_MAD_RESULT_SUCCESS;
	out = ib_mad_recv_out_alloc(priv->mad_size);
	if (!out)
		return -ENOMEM;
	ret = dev->ops.process_mad(dev, 0, port->port_num, &wc, &priv->grh,
				   (const struct ib_mad *)priv->mad, out,
				   &out_size, &out_pkey_index);
	if (opa)
		wc.pkey_index = out_pkey_index;
	if ((ret & IB_MAD_RESULT_SUCCESS) && !(ret & IB_MAD_RESULT_CONSUMED) &&
	    (ret & IB_MAD_RESULT_REPLY))
		ib_mad_reply_send(&out->mad_hdr, &priv->grh, &wc, dev,
				  port_num, qp_info->qp_num, out_size, opa);
	kfree(out);
	return ret;
}

/* A MAD for the layer's RMPP code (kernel RMPP agent, active RMPP). */
static bool ib_mad_recv_is_kernel_rmpp(struct ib_mad_agent_private *priv,
				       const struct ib_mad_recv_wc *recv_wc)
{
	struct ib_rmpp_mad *rmpp_mad = (struct ib_rmpp_mad *)recv_wc->recv_buf.mad;

	return ib_mad_kernel_rmpp_agent(&priv->agent) &&
	       ib_is_mad_class_rmpp(rmpp_mad->mad_hdr.mgmt_class) &&
	       (ib_get_rmpp_flags(&rmpp_mad->rmpp_hdr) & IB_MGMT_RMPP_FLAG_ACTIVE);
}

/*
 * A response that matched nothing: if it answers a flow-controlled
 * request that finished after a retry or a timeout, that request's
 * destination answers late, see ib_mad_send_late_answer_locked().
 */
static void ib_mad_note_late_answer(struct ib_mad_agent_private *priv,
				    const struct ib_mad_recv_wc *recv_wc)
{
	unsigned long flags;

	if (!priv->fc_max)
		return;
	spin_lock_irqsave(&priv->lock, flags);
	ib_mad_send_late_answer_locked(priv, recv_wc->recv_buf.mad->mad_hdr.tid);
	spin_unlock_irqrestore(&priv->lock, flags);
}

/* Duplicate SA requests ------------------------------------------------- */

/**
 * struct ib_mad_dup_req - an SA request delivered to its agent, unanswered
 * @node: in ib_mad_dup_table.hash
 * @age: in ib_mad_dup_table.by_age
 * @src: where it came from (ib_mad_fc_recv_key())
 * @tid: its TID
 * @delivered: jiffies when it was delivered
 */
struct ib_mad_dup_req {
	struct hlist_node node;
	struct list_head age;
	u64 src;
	__be64 tid;
	unsigned long delivered;
};

/**
 * struct ib_mad_dup_table - SA requests an agent has not answered yet
 * @lock: protects the other fields
 * @count: entries in @hash
 * @by_age: the entries, oldest delivery first
 * @hash: the entries, keyed by source and TID
 * @key: random key of @hash, so that a peer cannot choose TIDs that share
 *	a bucket
 */
struct ib_mad_dup_table {
	spinlock_t lock;	/* protects the other fields */
	siphash_key_t key;
	unsigned int count;
	struct list_head by_age;
	DECLARE_HASHTABLE(hash, IB_MAD_DUP_HASH_BITS);
};

/**
 * ib_mad_dup_alloc() - the duplicate table of an agent, if it serves the SA
 * @req: the agent's registration request, or NULL
 *
 * When every node of a fabric queries the SA at once, the SA cannot
 * answer each request within the requester's timeout, and the requesters
 * send the same requests again: under such a storm most of what reaches
 * the SA are copies of requests it has queued already, and answering
 * every copy delays every answer further. A copy of a request the agent
 * was given and has not answered carries nothing new, and the answer to
 * the first copy answers it too (the requester matches by TID). So an
 * agent that serves SA requests remembers those it was given (source and
 * TID) until it posts their response, and a copy that arrives meanwhile,
 * within IB_MAD_DUP_HOLD_MS of the first, is dropped as if lost on the
 * wire, which every MAD requester survives by retrying. A copy that
 * arrives after the answer was posted is delivered (the answer may have
 * been lost), as is one after the hold time (the agent may have dropped
 * the first). At most IB_MAD_DUP_MAX requests are remembered; beyond
 * that the oldest is forgotten, which only lets its copies through.
 *
 * Context: process context; may sleep.
 * Return: the table for an agent registered for SA requests, else NULL
 * (and NULL when it cannot be allocated: the agent then receives every
 * copy, as without it).
 */
struct ib_mad_dup_table *ib_mad_dup_alloc(const struct ib_mad_reg_req *req)
{
	struct ib_mad_dup_table *tab;

	if (!req || req->mgmt_class != IB_MGMT_CLASS_SUBN_ADM ||
	    bitmap_empty(req->method_mask, IB_MGMT_MAX_METHODS))
		return NULL;
	tab = kzalloc(sizeof(*tab), GFP_KERNEL);
	if (!tab)
		return NULL;
	spin_lock_init(&tab->lock);
	get_random_bytes(&tab->key, sizeof(tab->key));
	INIT_LIST_HEAD(&tab->by_age);
	hash_init(tab->hash);
	return tab;
}
EXPORT_SYMBOL_IF_KUNIT(ib_mad_dup_alloc);

/**
 * ib_mad_dup_free() - free a duplicate table and what it remembers
 * @tab: the table, or NULL
 *
 * Context: nothing else uses @tab any more.
 */
void ib_mad_dup_free(struct ib_mad_dup_table *tab)
{
	struct ib_mad_dup_req *req, *next;

	if (!tab)
		return;
	list_for_each_entry_safe(req, next, &tab->by_age, age)
		kfree(req);
	kfree(tab);
}
EXPORT_SYMBOL_IF_KUNIT(ib_mad_dup_free);

static u32 ib_mad_dup_hash(const struct ib_mad_dup_table *tab, u64 src,
			   __be64 tid)
{
	return (u32)siphash_2u64(src, (__force u64)tid, &tab->key);
}

static struct ib_mad_dup_req *
ib_mad_dup_find_locked(struct ib_mad_dup_table *tab, u64 src, __be64 tid)
{
	struct ib_mad_dup_req *req;

	hash_for_each_possible(tab->hash, req, node,
			       ib_mad_dup_hash(tab, src, tid))
		if (req->src == src && req->tid == tid)
			return req;
	return NULL;
}

static void ib_mad_dup_del_locked(struct ib_mad_dup_table *tab,
				  struct ib_mad_dup_req *req)
{
	hash_del(&req->node);
	list_del(&req->age);
	tab->count--;
	kfree(req);
}

/*
 * Whether SA request @recv_wc is a copy of one delivered to @priv and not
 * answered yet; if it is not, it is remembered as delivered now (unless
 * no memory is at hand at once: it then goes untracked). Entries past
 * their hold time leave on the way, oldest first. Under a storm most
 * requests are copies, so nothing is allocated for them.
 */
static bool ib_mad_dup_request(struct ib_mad_agent_private *priv,
			       const struct ib_mad_recv_wc *recv_wc)
{
	struct ib_rmpp_mad *rmpp_mad = (struct ib_rmpp_mad *)recv_wc->recv_buf.mad;
	unsigned long hold = msecs_to_jiffies(IB_MAD_DUP_HOLD_MS);
	struct ib_mad_dup_table *tab = priv->dup;
	__be64 tid = rmpp_mad->mad_hdr.tid;
	struct ib_mad_dup_req *req;
	unsigned long flags;
	bool dup = false;
	u64 src;

	/* The segments of a request that the agent reassembles share a TID. */
	if (!ib_mad_kernel_rmpp_agent(&priv->agent) &&
	    (ib_get_rmpp_flags(&rmpp_mad->rmpp_hdr) & IB_MGMT_RMPP_FLAG_ACTIVE))
		return false;
	src = ib_mad_fc_recv_key(recv_wc);

	spin_lock_irqsave(&tab->lock, flags);
	while ((req = list_first_entry_or_null(&tab->by_age,
					       struct ib_mad_dup_req, age)) &&
	       (time_after_eq(jiffies, req->delivered + hold) ||
		tab->count >= IB_MAD_DUP_MAX))
		ib_mad_dup_del_locked(tab, req);
	if (ib_mad_dup_find_locked(tab, src, tid)) {
		dup = true;
	} else {
		req = kmalloc(sizeof(*req), GFP_NOWAIT);
		if (req) {
			req->src = src;
			req->tid = tid;
			req->delivered = jiffies;
			hash_add(tab->hash, &req->node,
				 ib_mad_dup_hash(tab, src, tid));
			list_add_tail(&req->age, &tab->by_age);
			tab->count++;
		}
	}
	spin_unlock_irqrestore(&tab->lock, flags);
	return dup;
}

/**
 * ib_mad_dup_answered() - an SA agent posts the response to a request
 * @priv: the agent, which has a duplicate table
 * @wr: the response, accepted for posting
 *
 * Copies of the request that arrive from now on are delivered again.
 *
 * Context: any; does not sleep.
 */
void ib_mad_dup_answered(struct ib_mad_agent_private *priv,
			 const struct ib_mad_send_wr_private *wr)
{
	u64 dst = ib_mad_fc_key(wr->send_buf.mad, wr->send_buf.ah);
	struct ib_mad_dup_table *tab = priv->dup;
	struct ib_mad_dup_req *req;
	unsigned long flags;

	spin_lock_irqsave(&tab->lock, flags);
	req = ib_mad_dup_find_locked(tab, dst, wr->tid);
	if (req)
		ib_mad_dup_del_locked(tab, req);
	spin_unlock_irqrestore(&tab->lock, flags);
}

/* Deliver a response: with its request if one matches. */
static void ib_mad_deliver_response(struct ib_mad_agent_private *priv,
				    struct ib_mad_recv_wc *recv_wc)
{
	struct ib_mad_port_private *port = ib_mad_agent_port(priv);
	struct ib_rmpp_mad *rmpp_mad = (struct ib_rmpp_mad *)recv_wc->recv_buf.mad;
	struct ib_mad_send_wr_private *wr;
	unsigned long flags;

	spin_lock_irqsave(&priv->lock, flags);
	wr = ib_mad_find_send_locked(priv, recv_wc);
	if (wr)
		ib_mad_send_response_begin_locked(wr);
	spin_unlock_irqrestore(&priv->lock, flags);

	if (wr) {
		/* The response first, then its request's completion. */
		priv->agent.recv_handler(&priv->agent, &wr->send_buf, recv_wc);
		ib_mad_send_response_done(wr);
		return;
	}
	/* A client doing its own RMPP sees every segment. */
	if (!ib_mad_kernel_rmpp_agent(&priv->agent) &&
	    ib_is_mad_class_rmpp(rmpp_mad->mad_hdr.mgmt_class) &&
	    (ib_get_rmpp_flags(&rmpp_mad->rmpp_hdr) & IB_MGMT_RMPP_FLAG_ACTIVE)) {
		priv->agent.recv_handler(&priv->agent, NULL, recv_wc);
		return;
	}
	ib_mad_stat_inc(port, IB_MAD_STAT_UNMATCHED_RESP);
	ib_mad_note_late_answer(priv, recv_wc);
	ib_free_recv_mad(recv_wc);
}

/**
 * ib_mad_deliver() - hand a received MAD to its agent
 * @priv: the agent, referenced by the caller; the reference is dropped
 * @recv_wc: the MAD; ownership passes to the agent or it is freed
 *
 * Enforces the agent's security, lets RMPP reassemble, matches responses
 * to their requests and runs the receive handler.
 *
 * Context: process context, no MAD lock held.
 */
void ib_mad_deliver(struct ib_mad_agent_private *priv,
		    struct ib_mad_recv_wc *recv_wc)
{
	struct ib_mad_port_private *port = ib_mad_agent_port(priv);

	trace_ib_mad_recv_deliver(priv, recv_wc);
	if (ib_mad_enforce_security(priv, recv_wc->wc->pkey_index)) {
		ib_mad_stat_inc(port, IB_MAD_STAT_DROP_SECURITY);
		ib_free_recv_mad(recv_wc);
		goto out_put;
	}
	if (ib_mad_recv_is_kernel_rmpp(priv, recv_wc)) {
		recv_wc = ib_mad_rmpp_recv(priv, recv_wc);
		if (!recv_wc)
			goto out_put;
	}
	if (ib_response_mad(&recv_wc->recv_buf.mad->mad_hdr)) {
		ib_mad_deliver_response(priv, recv_wc);
	} else if (priv->dup &&
		   recv_wc->recv_buf.mad->mad_hdr.mgmt_class ==
		   IB_MGMT_CLASS_SUBN_ADM &&
		   ib_mad_dup_request(priv, recv_wc)) {
		ib_mad_stat_inc(port, IB_MAD_STAT_DUP_DROPPED);
		ib_free_recv_mad(recv_wc);
	} else {
		priv->agent.recv_handler(&priv->agent, NULL, recv_wc);
	}
out_put:
	ib_mad_agent_put(priv);
}
EXPORT_SYMBOL_IF_KUNIT(ib_mad_deliver);

/* Steps of a receive completion after the buffer is set up. */
static void ib_mad_recv_process(struct ib_mad_qp_info *qp_info,
				struct ib_mad_recv_priv *priv, bool opa)
{
	struct ib_mad_port_private *port = qp_info->port_priv;
	const struct ib_mad_hdr *hdr = (const struct ib_mad_hdr *)priv->mad;
	struct ib_mad_agent_private *agent;
	u32 port_num = port->port_num;
	int ret;

	if (rdma_cap_ib_switch(port->device))
		port_num = priv->wc.port_num;
	if (hdr->mgmt_class == IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE) {
		switch (ib_mad_recv_dr_smp(qp_info, priv, port_num, opa)) {
		case IB_MAD_DR_UP:
			break;
		case IB_MAD_DR_RELAYED:
			ib_mad_stat_inc(port, IB_MAD_STAT_SMI_RELAYED);
			goto out_free;
		case IB_MAD_DR_DROP:
			ib_mad_stat_inc(port, IB_MAD_STAT_DROP_SMI);
			goto out_free;
		}
	}
	ret = ib_mad_recv_driver(qp_info, priv, port_num, opa);
	if (ret < 0) {
		ib_mad_stat_inc(port, IB_MAD_STAT_DROP_NOMEM);
		goto out_free;
	}
	/*
	 * process_mad() can be a firmware command of milliseconds, long
	 * enough for the port to start closing: its QPs are then being
	 * destroyed, and nothing more goes up.
	 */
	if (unlikely(READ_ONCE(port->closing))) {
		ib_mad_stat_inc(port, IB_MAD_STAT_RECV_FLUSHED);
		goto out_free;
	}
	if ((ret & IB_MAD_RESULT_SUCCESS) &&
	    (ret & (IB_MAD_RESULT_CONSUMED | IB_MAD_RESULT_REPLY)))
		goto out_free;

	agent = ib_mad_find_agent(port, hdr);
	if (agent) {
		trace_ib_mad_recv_done_agent(agent);
		ib_mad_deliver(agent, &priv->recv_wc);
		return;
	}
	ib_mad_stat_inc(port, IB_MAD_STAT_DROP_NO_AGENT);
	if (ret & IB_MAD_RESULT_SUCCESS)
		ib_mad_recv_unsupported(qp_info, priv, port_num, opa);
out_free:
	ib_mad_recv_priv_free(priv);
}

/**
 * ib_mad_recv_done() - completion handler of a posted receive buffer
 * @cq: the port's CQ
 * @wc: the completion
 *
 * Context: CQ work (process context).
 */
void ib_mad_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ib_mad_recv_priv *priv =
		container_of(wc->wr_cqe, struct ib_mad_recv_priv, mad_list.cqe);
	struct ib_mad_qp_info *qp_info = priv->mad_list.mad_queue->qp_info;
	struct ib_mad_port_private *port = qp_info->port_priv;
	bool opa = rdma_cap_opa_mad(port->device, port->port_num);

	ib_mad_recv_take(priv);
	if (wc->status == IB_WC_WR_FLUSH_ERR ||
	    unlikely(READ_ONCE(port->closing))) {
		/*
		 * The QP is in the error state, or the port is closing (its
		 * QPs may be gone: only qp_info->qp_num may be read): a
		 * buffer posted now would come straight back flushed, and
		 * replacing each would spin this work for ever. The ring
		 * drains instead.
		 */
		ib_mad_stat_inc(port, IB_MAD_STAT_RECV_FLUSHED);
		ib_mad_recv_priv_free(priv);
		return;
	}
	if (wc->status != IB_WC_SUCCESS) {
		/* One buffer failed (a local length error): nothing to read. */
		ib_mad_recv_priv_free(priv);
		goto refill;
	}
	ib_mad_stat_inc(port, IB_MAD_STAT_RECV);
	if (!ib_mad_recv_setup(priv, wc, opa) ||
	    !ib_mad_recv_validate((const struct ib_mad_hdr *)priv->mad,
				  qp_info->qp_num, opa)) {
		ib_mad_stat_inc(port, IB_MAD_STAT_DROP_INVALID);
		ib_mad_recv_priv_free(priv);
		goto refill;
	}
	trace_ib_mad_recv_done_handler(qp_info, wc,
				       (const struct ib_mad_hdr *)priv->mad);
	trace_ib_mad_recv(port, qp_info->qp_num, wc,
			  (const struct ib_mad_hdr *)priv->mad);
	ib_mad_recv_process(qp_info, priv, opa);
refill:
	/* After the delivery: a new buffer is not on the MAD's path. */
	ib_mad_recv_refill(qp_info);
}
EXPORT_SYMBOL_IF_KUNIT(ib_mad_recv_done);

/* Address matching ------------------------------------------------------ */

/* With GRHs: compare the GIDs the request and the response carry. */
static bool ib_mad_recv_gid_matches(struct ib_mad_agent_private *priv,
				    const struct rdma_ah_attr *attr,
				    const struct ib_mad_recv_wc *recv_wc,
				    bool recv_is_response)
{
	const struct ib_global_route *grh = rdma_ah_read_grh(attr);
	union ib_gid rsgid, rdgid, our_gid;

	if (ib_mad_recv_gids(priv, recv_wc, &rsgid, &rdgid))
		return false;
	if (!recv_is_response)
		return !memcmp(grh->dgid.raw, rsgid.raw, sizeof(rsgid.raw));
	/* A response is addressed to the GID our request came from. */
	if (rdma_query_gid(priv->agent.device, priv->agent.port_num,
			   grh->sgid_index, &our_gid))
		return false;
	return !memcmp(our_gid.raw, rdgid.raw, sizeof(our_gid.raw));
}

/**
 * ib_mad_recv_matches_send() - does a MAD come from the peer of a send?
 * @priv: the agent
 * @wr: an outstanding send
 * @recv_wc: a received MAD with the send's TID and class
 *
 * One of the two must be a request and the other a response. A response
 * to our request must be addressed to us: to the GID the request was sent
 * from, or without GRH to our LID (path bits under the LMC). A request
 * (an RMPP ACK to a response we send) must come from where the send goes.
 *
 * Context: any.
 * Return: true if @recv_wc belongs to the exchange of @wr.
 */
bool ib_mad_recv_matches_send(struct ib_mad_agent_private *priv,
			      const struct ib_mad_send_wr_private *wr,
			      const struct ib_mad_recv_wc *recv_wc)
{
	bool send_resp = ib_response_mad(wr->send_buf.mad);
	bool recv_resp = ib_response_mad(&recv_wc->recv_buf.mad->mad_hdr);
	struct rdma_ah_attr attr;
	bool has_grh;
	u8 lmc;

	if (send_resp == recv_resp || !wr->send_buf.ah)
		return false;
	if (rdma_query_ah(wr->send_buf.ah, &attr))
		return false;
	has_grh = rdma_ah_get_ah_flags(&attr) & IB_AH_GRH;
	if (has_grh != !!(recv_wc->wc->wc_flags & IB_WC_GRH))
		return false;
	if (has_grh)
		return ib_mad_recv_gid_matches(priv, &attr, recv_wc, recv_resp);
	if (!recv_resp)
		return rdma_ah_get_dlid(&attr) == recv_wc->wc->slid;
	if (ib_get_cached_lmc(priv->agent.device, priv->agent.port_num, &lmc))
		return false;
	return !lmc || !((rdma_ah_get_path_bits(&attr) ^
			  recv_wc->wc->dlid_path_bits) & ((1 << lmc) - 1));
}
