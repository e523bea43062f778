// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * MAD agent registration.
 *
 * Each port keeps, per class version, a table of management classes; each
 * class has a table of 128 methods naming the agent that receives requests
 * of that method. Vendor classes of range 2 (0x30-0x4F) carry an OUI, so
 * they get one more level: up to IB_MAD_MAX_OUI OUIs per class, each with
 * its own method table. Responses are not routed through these tables but
 * by the high 32 bits of the TID, the agent's hi_tid.
 */

#include <linux/slab.h>
#include <linux/xarray.h>
#include <kunit/static_stub.h>
#include <kunit/visibility.h>
#include <rdma/ib_cache.h>

#include "core_priv.h"
#include "mad_kabi.h"
#include "mad_priv.h"

#include <trace/events/ib_mad.h>

/* Agents by hi_tid, for routing responses. Its own lock; RCU readers. */
static DEFINE_XARRAY_ALLOC1(ib_mad_clients);
static u32 ib_mad_client_next;

/**
 * ib_mad_class_index() - index of a class in a class table
 * @mgmt_class: management class
 *
 * Directed-route SMPs (0x81) share the reserved slot 0 so that the table
 * stays IB_MAD_MAX_CLASS entries long.
 *
 * Return: the index, or -1 when the class has no slot.
 */
int ib_mad_class_index(u8 mgmt_class)
{
	if (mgmt_class == IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE)
		return 0;
	if (mgmt_class >= IB_MAD_MAX_CLASS)
		return -1;
	return mgmt_class;
}
EXPORT_SYMBOL_IF_KUNIT(ib_mad_class_index);

static bool ib_mad_oui_is_set(const u8 *oui)
{
	return oui[0] || oui[1] || oui[2];
}

/**
 * ib_mad_reg_validate() - check the arguments of ib_register_mad_agent()
 * @qp_type: IB_QPT_SMI or IB_QPT_GSI
 * @req: registration request, or NULL for a send-only agent
 * @rmpp_version: 0 or IB_MGMT_RMPP_VERSION
 * @has_send_handler: a send handler was given
 * @has_recv_handler: a receive handler was given
 * @flags: registration flags
 *
 * Return: 0 if the request is well formed, -EINVAL otherwise.
 */
VISIBLE_IF_KUNIT int ib_mad_reg_validate(enum ib_qp_type qp_type,
					 const struct ib_mad_reg_req *req,
					 u8 rmpp_version, bool has_send_handler,
					 bool has_recv_handler, u32 flags)
{
	bool smi_class, on_qp0;

	if (qp_type != IB_QPT_SMI && qp_type != IB_QPT_GSI)
		return -EINVAL;
	if (rmpp_version && rmpp_version != IB_MGMT_RMPP_VERSION)
		return -EINVAL;
	if (flags & ~IB_MAD_USER_RMPP)
		return -EINVAL;
	if (!req) {
		/* A send-only agent must hear about its sends. */
		if (!has_send_handler || (flags & IB_MAD_USER_RMPP))
			return -EINVAL;
		return 0;
	}
	if (req->mgmt_class_version >= IB_MAD_MAX_VERSION || !has_recv_handler)
		return -EINVAL;
	/* Class 0 is reserved; 0x81 is the only class above the table. */
	if (req->mgmt_class == 0 || ib_mad_class_index(req->mgmt_class) < 0)
		return -EINVAL;
	if (ib_mad_is_vendor_class_range2(req->mgmt_class) &&
	    !ib_mad_oui_is_set(req->oui))
		return -EINVAL;
	if (rmpp_version && !ib_is_mad_class_rmpp(req->mgmt_class))
		return -EINVAL;
	/* Subnet management classes live on QP0, everything else on QP1. */
	smi_class = req->mgmt_class == IB_MGMT_CLASS_SUBN_LID_ROUTED ||
		    req->mgmt_class == IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE;
	on_qp0 = qp_type == IB_QPT_SMI;
	if (smi_class != on_qp0)
		return -EINVAL;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(ib_mad_reg_validate);

/*
 * Tables a registration may need, allocated before reg_lock is taken so
 * that registration never allocates atomically. Whatever is not installed
 * is freed afterwards.
 */
struct ib_mad_reg_spare {
	struct ib_mad_mgmt_class_table *class;
	struct ib_mad_mgmt_vendor_class_table *vendor;
	struct ib_mad_mgmt_vendor_class *vclass;
	struct ib_mad_mgmt_method_table *method;
};

static void ib_mad_reg_spare_free(struct ib_mad_reg_spare *spare)
{
	kfree(spare->class);
	kfree(spare->vendor);
	kfree(spare->vclass);
	kfree(spare->method);
}

static int ib_mad_reg_spare_alloc(struct ib_mad_reg_spare *spare, bool vendor)
{
	memset(spare, 0, sizeof(*spare));
	spare->method = kzalloc(sizeof(*spare->method), GFP_KERNEL);
	if (vendor) {
		spare->vendor = kzalloc(sizeof(*spare->vendor), GFP_KERNEL);
		spare->vclass = kzalloc(sizeof(*spare->vclass), GFP_KERNEL);
	} else {
		spare->class = kzalloc(sizeof(*spare->class), GFP_KERNEL);
	}
	if (!spare->method || (vendor && (!spare->vendor || !spare->vclass)) ||
	    (!vendor && !spare->class)) {
		ib_mad_reg_spare_free(spare);
		return -ENOMEM;
	}
	return 0;
}

static int ib_mad_vendor_oui_slot(const struct ib_mad_mgmt_vendor_class *vc,
				  const u8 *oui)
{
	int i;

	for (i = 0; i < IB_MAD_MAX_OUI; i++)
		if (vc->method_table[i] && !memcmp(vc->oui[i], oui, 3))
			return i;
	return -1;
}

/*
 * Find the method table slot of a registration request; with @spare,
 * create the levels that are missing (this never fails except when all
 * OUI slots of a vendor class are taken).
 */
static struct ib_mad_mgmt_method_table **
ib_mad_reg_slot(struct ib_mad_port_private *port, const struct ib_mad_reg_req *req,
		const u8 *oui, struct ib_mad_reg_spare *spare)
{
	struct ib_mad_mgmt_version_table *ver;
	struct ib_mad_mgmt_vendor_class **vcp;
	struct ib_mad_mgmt_vendor_class *vc;
	int i;

	lockdep_assert_held(&port->reg_lock);
	ver = &port->version[req->mgmt_class_version];
	if (!ib_mad_is_vendor_class_range2(req->mgmt_class)) {
		/* A missing level takes the spare (which becomes NULL). */
		if (spare && !ver->class)
			swap(ver->class, spare->class);
		if (!ver->class)
			return NULL;
		return &ver->class->method_table[ib_mad_class_index(req->mgmt_class)];
	}

	if (spare && !ver->vendor)
		swap(ver->vendor, spare->vendor);
	if (!ver->vendor)
		return NULL;
	vcp = &ver->vendor->vendor_class[req->mgmt_class -
					 IB_MGMT_CLASS_VENDOR_RANGE2_START];
	if (spare && !*vcp)
		swap(*vcp, spare->vclass);
	vc = *vcp;
	if (!vc)
		return NULL;
	i = ib_mad_vendor_oui_slot(vc, oui);
	if (i >= 0 || !spare)
		return i >= 0 ? &vc->method_table[i] : NULL;
	for (i = 0; i < IB_MAD_MAX_OUI; i++) {
		if (!vc->method_table[i]) {
			memcpy(vc->oui[i], oui, 3);
			return &vc->method_table[i];
		}
	}
	return NULL;
}

static bool ib_mad_table_empty(void *const *slots, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (slots[i])
			return false;
	return true;
}

/* Free every level of a request's path that no longer holds anything. */
static void ib_mad_reg_prune(struct ib_mad_port_private *port,
			     const struct ib_mad_reg_req *req)
{
	struct ib_mad_mgmt_version_table *ver;
	struct ib_mad_mgmt_vendor_class **vcp;
	struct ib_mad_mgmt_vendor_class *vc;
	int i;

	lockdep_assert_held(&port->reg_lock);
	ver = &port->version[req->mgmt_class_version];
	if (!ib_mad_is_vendor_class_range2(req->mgmt_class)) {
		if (!ver->class)
			return;
		i = ib_mad_class_index(req->mgmt_class);
		if (ver->class->method_table[i] &&
		    ib_mad_table_empty((void **)ver->class->method_table[i]->agent,
				       IB_MGMT_MAX_METHODS)) {
			kfree(ver->class->method_table[i]);
			ver->class->method_table[i] = NULL;
		}
		if (ib_mad_table_empty((void **)ver->class->method_table,
				       IB_MAD_MAX_CLASS)) {
			kfree(ver->class);
			ver->class = NULL;
		}
		return;
	}

	if (!ver->vendor)
		return;
	vcp = &ver->vendor->vendor_class[req->mgmt_class -
					 IB_MGMT_CLASS_VENDOR_RANGE2_START];
	vc = *vcp;
	if (vc) {
		for (i = 0; i < IB_MAD_MAX_OUI; i++) {
			if (vc->method_table[i] &&
			    ib_mad_table_empty((void **)vc->method_table[i]->agent,
					       IB_MGMT_MAX_METHODS)) {
				kfree(vc->method_table[i]);
				vc->method_table[i] = NULL;
				memset(vc->oui[i], 0, 3);
			}
		}
		if (ib_mad_table_empty((void **)vc->method_table,
				       IB_MAD_MAX_OUI)) {
			kfree(vc);
			*vcp = NULL;
		}
	}
	if (ib_mad_table_empty((void **)ver->vendor->vendor_class,
			       IB_MAD_MAX_VENDOR_RANGE2)) {
		kfree(ver->vendor);
		ver->vendor = NULL;
	}
}

/**
 * ib_mad_reg_insert() - enter an agent's methods in the port's tables
 * @port: the port
 * @priv: the agent, with its reg_req set
 *
 * Context: takes port->reg_lock; may sleep (allocates with GFP_KERNEL).
 * Return: 0, -EINVAL if a method is already taken or no OUI slot is free,
 * -ENOMEM.
 */
VISIBLE_IF_KUNIT int ib_mad_reg_insert(struct ib_mad_port_private *port,
				       struct ib_mad_agent_private *priv)
{
	const struct ib_mad_reg_req *req = priv->reg_req;
	struct ib_mad_mgmt_method_table **slot;
	struct ib_mad_reg_spare spare;
	unsigned long flags;
	int ret = -EINVAL;
	int m;

	KUNIT_STATIC_STUB_REDIRECT(ib_mad_reg_insert, port, priv);
	if (ib_mad_reg_spare_alloc(&spare,
				   ib_mad_is_vendor_class_range2(req->mgmt_class)))
		return -ENOMEM;

	spin_lock_irqsave(&port->reg_lock, flags);
	slot = ib_mad_reg_slot(port, req, req->oui, &spare);
	if (!slot)
		goto out_prune;		/* all OUI slots of the class taken */
	if (!*slot)
		swap(*slot, spare.method);
	for_each_set_bit(m, req->method_mask, IB_MGMT_MAX_METHODS)
		if ((*slot)->agent[m])
			goto out_prune;	/* overlap with another agent */
	for_each_set_bit(m, req->method_mask, IB_MGMT_MAX_METHODS)
		(*slot)->agent[m] = priv;
	ret = 0;
out_prune:
	/* Undo tables created for nothing (the mask may even be empty). */
	ib_mad_reg_prune(port, req);
	spin_unlock_irqrestore(&port->reg_lock, flags);
	ib_mad_reg_spare_free(&spare);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(ib_mad_reg_insert);

/**
 * ib_mad_reg_remove() - take an agent out of the port's tables
 * @port: the port
 * @priv: the agent
 *
 * Context: takes port->reg_lock.
 */
VISIBLE_IF_KUNIT void ib_mad_reg_remove(struct ib_mad_port_private *port,
					struct ib_mad_agent_private *priv)
{
	const struct ib_mad_reg_req *req = priv->reg_req;
	struct ib_mad_mgmt_method_table **slot;
	unsigned long flags;
	int m;

	if (!req)
		return;
	spin_lock_irqsave(&port->reg_lock, flags);
	slot = ib_mad_reg_slot(port, req, req->oui, NULL);
	if (slot && *slot) {
		for (m = 0; m < IB_MGMT_MAX_METHODS; m++)
			if ((*slot)->agent[m] == priv)
				(*slot)->agent[m] = NULL;
	}
	ib_mad_reg_prune(port, req);
	spin_unlock_irqrestore(&port->reg_lock, flags);
}
EXPORT_SYMBOL_IF_KUNIT(ib_mad_reg_remove);

/**
 * ib_mad_reg_tables_free() - free whatever tables a port still has
 * @port: a port with no agents left
 */
void ib_mad_reg_tables_free(struct ib_mad_port_private *port)
{
	struct ib_mad_mgmt_version_table *ver;
	int v, i, j;

	for (v = 0; v < IB_MAD_MAX_VERSION; v++) {
		ver = &port->version[v];
		if (ver->class) {
			for (i = 0; i < IB_MAD_MAX_CLASS; i++)
				kfree(ver->class->method_table[i]);
			kfree(ver->class);
			ver->class = NULL;
		}
		if (!ver->vendor)
			continue;
		for (i = 0; i < IB_MAD_MAX_VENDOR_RANGE2; i++) {
			struct ib_mad_mgmt_vendor_class *vc =
				ver->vendor->vendor_class[i];

			if (!vc)
				continue;
			for (j = 0; j < IB_MAD_MAX_OUI; j++)
				kfree(vc->method_table[j]);
			kfree(vc);
		}
		kfree(ver->vendor);
		ver->vendor = NULL;
	}
}
EXPORT_SYMBOL_IF_KUNIT(ib_mad_reg_tables_free);

/* Look a request up in the tables; reg_lock held. */
static struct ib_mad_agent_private *
ib_mad_lookup_request(struct ib_mad_port_private *port,
		      const struct ib_mad_hdr *hdr)
{
	struct ib_mad_mgmt_method_table **slot;
	struct ib_mad_reg_req req = {
		.mgmt_class = hdr->mgmt_class,
		.mgmt_class_version = hdr->class_version,
	};
	const u8 *oui = req.oui;

	lockdep_assert_held(&port->reg_lock);
	if (hdr->class_version >= IB_MAD_MAX_VERSION ||
	    (ib_mad_class_index(hdr->mgmt_class) < 0 &&
	     !ib_mad_is_vendor_class_range2(hdr->mgmt_class)))
		return NULL;
	if (ib_mad_is_vendor_class_range2(hdr->mgmt_class))
		oui = ((const struct ib_vendor_mad *)hdr)->oui;
	slot = ib_mad_reg_slot(port, &req, oui, NULL);
	if (!slot || !*slot)
		return NULL;
	return (*slot)->agent[hdr->method & ~IB_MGMT_METHOD_RESP];
}

/**
 * ib_mad_find_agent() - find the agent that receives a MAD
 * @port: port the MAD arrived on
 * @hdr: its header
 *
 * Responses go to the agent whose hi_tid is in the TID's high 32 bits, if
 * that agent is on the same port; requests go to the agent registered for
 * their version, class, (OUI) and method.
 *
 * Context: any; takes reg_lock or the RCU read lock.
 * Return: the agent with a reference held (drop it with
 * ib_mad_agent_put()), or NULL.
 */
struct ib_mad_agent_private *
ib_mad_find_agent(struct ib_mad_port_private *port,
		  const struct ib_mad_hdr *hdr)
{
	struct ib_mad_agent_private *priv;
	unsigned long flags;

	if (ib_response_mad(hdr)) {
		rcu_read_lock();
		priv = xa_load(&ib_mad_clients, be64_to_cpu(hdr->tid) >> 32);
		if (priv && (ib_mad_agent_port(priv) != port ||
			     !refcount_inc_not_zero(&priv->refcount)))
			priv = NULL;
		rcu_read_unlock();
	} else {
		spin_lock_irqsave(&port->reg_lock, flags);
		priv = ib_mad_lookup_request(port, hdr);
		if (priv)
			ib_mad_agent_get(priv);
		spin_unlock_irqrestore(&port->reg_lock, flags);
	}
	if (priv && !priv->agent.recv_handler) {
		ib_mad_agent_put(priv);
		priv = NULL;
	}
	return priv;
}
EXPORT_SYMBOL_IF_KUNIT(ib_mad_find_agent);

/**
 * ib_mad_agent_get() - take a reference on an agent
 * @priv: an agent the caller already holds a reference on
 */
void ib_mad_agent_get(struct ib_mad_agent_private *priv)
{
	refcount_inc(&priv->refcount);
}
EXPORT_SYMBOL_IF_KUNIT(ib_mad_agent_get);

/**
 * ib_mad_agent_put() - drop a reference on an agent
 * @priv: the agent
 *
 * The last reference wakes ib_unregister_mad_agent().
 */
void ib_mad_agent_put(struct ib_mad_agent_private *priv)
{
	if (refcount_dec_and_test(&priv->refcount))
		complete(&priv->comp);
}
EXPORT_SYMBOL_IF_KUNIT(ib_mad_agent_put);

static int ib_mad_qp_index(enum ib_qp_type qp_type)
{
	return qp_type == IB_QPT_SMI ? 0 : 1;
}

/**
 * ib_mad_agent_alloc() - allocate and initialise an agent
 * @qp_info: QP the agent will use
 * @req: registration request to copy, or NULL
 *
 * Return: the agent with one reference, or NULL.
 */
VISIBLE_IF_KUNIT struct ib_mad_agent_private *
ib_mad_agent_alloc(struct ib_mad_qp_info *qp_info,
		   const struct ib_mad_reg_req *req)
{
	struct ib_mad_agent_private *priv;

	priv = kzalloc(sizeof(*priv), GFP_KERNEL);
	if (!priv)
		return NULL;
	if (req) {
		priv->reg_req = kmemdup(req, sizeof(*req), GFP_KERNEL);
		if (!priv->reg_req) {
			kfree(priv);
			return NULL;
		}
		priv->dup = ib_mad_dup_alloc(req);
	}
	priv->qp_info = qp_info;
	spin_lock_init(&priv->lock);
	hash_init(priv->send_hash);
	priv->wait_tree = RB_ROOT_CACHED;
	INIT_LIST_HEAD(&priv->done_list);
	hash_init(priv->fc_dests);
	/*
	 * A peer's receive ring is as deep as ours by default: one agent may
	 * keep at most a quarter of it busy with requests.
	 */
	priv->fc_max = qp_info->recv_queue.max_active / 4;
	ib_mad_rmpp_recv_init(priv);
	INIT_DELAYED_WORK(&priv->timed_work, ib_mad_agent_timed_work);
	refcount_set(&priv->refcount, 1);
	init_completion(&priv->comp);
	return priv;
}
EXPORT_SYMBOL_IF_KUNIT(ib_mad_agent_alloc);

/**
 * ib_mad_agent_publish() - make a new agent reachable by received MADs
 * @port: the agent's port
 * @priv: the agent, fully set up
 *
 * Gives the agent a hi_tid (the response route) and enters its methods in
 * the registration tables (the request route). The hi_tid is only
 * reserved until the tables accepted the agent: a response carrying it
 * finds nothing before, so an agent the tables refuse was never seen by a
 * receive and its caller may free it at once.
 *
 * Context: process context; may sleep.
 * Return: 0, -EINVAL if its methods are taken or no OUI slot is free,
 * -EBUSY if no hi_tid is free, -ENOMEM.
 */
VISIBLE_IF_KUNIT int ib_mad_agent_publish(struct ib_mad_port_private *port,
					  struct ib_mad_agent_private *priv)
{
	void *old;
	int ret;

	/* hi_tid stays below 2^24: mlx4 owns the top byte of the hi TID. */
	ret = xa_alloc_cyclic(&ib_mad_clients, &priv->agent.hi_tid, NULL,
			      XA_LIMIT(0, IB_MAD_HI_TID_MASK),
			      &ib_mad_client_next, GFP_KERNEL);
	if (ret < 0)
		return ret;
	if (priv->reg_req) {
		ret = ib_mad_reg_insert(port, priv);
		if (ret)
			goto err_erase_tid;
	}
	/* Filling a reserved slot allocates nothing: this cannot fail. */
	old = xa_store(&ib_mad_clients, priv->agent.hi_tid, priv, GFP_KERNEL);
	WARN_ON_ONCE(xa_is_err(old));
	return 0;

err_erase_tid:
	xa_erase(&ib_mad_clients, priv->agent.hi_tid);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(ib_mad_agent_publish);

/**
 * ib_mad_agent_unpublish() - stop received MADs from finding an agent
 * @port: the agent's port
 * @priv: an agent ib_mad_agent_publish() accepted
 *
 * A receive that found the agent before holds a reference; the caller
 * waits for those before freeing the agent, and frees it after an RCU
 * grace period for lookups by hi_tid that found nothing to reference.
 *
 * Context: process context.
 */
VISIBLE_IF_KUNIT void ib_mad_agent_unpublish(struct ib_mad_port_private *port,
					     struct ib_mad_agent_private *priv)
{
	ib_mad_reg_remove(port, priv);
	xa_erase(&ib_mad_clients, priv->agent.hi_tid);
}
EXPORT_SYMBOL_IF_KUNIT(ib_mad_agent_unpublish);

/**
 * ib_mad_port_agents_left() - name and forget the agents left on a port
 * @port: a port whose device is going away
 *
 * Each client unregisters its agents from its own remove callback, which
 * runs before the MAD layer's. An agent still here was leaked by its
 * client (for instance registered by a port event handled after that
 * client's removal); it points into @port, which is about to be freed.
 * It is logged and taken out of the hi_tid table, so that no response
 * reaches the freed port through it; its memory stays with the client,
 * which may still hold it.
 *
 * Context: process context.
 * Return: how many agents of @port were still registered.
 */
unsigned int ib_mad_port_agents_left(struct ib_mad_port_private *port)
{
	struct ib_mad_agent_private *priv;
	unsigned int n = 0;
	unsigned long idx;

	/*
	 * Under the xarray's lock: another device's agent may be unregistering
	 * now, and it is freed only after it left the array, which takes
	 * this lock; RCU alone would not keep it.
	 */
	xa_lock(&ib_mad_clients);
	xa_for_each(&ib_mad_clients, idx, priv) {
		/* By address: a forgotten agent's port is gone. */
		if (priv->qp_info != &port->qp_info[0] &&
		    priv->qp_info != &port->qp_info[1])
			continue;
		dev_err(&port->device->dev,
			"port %u: MAD agent %lu (class %#x, receive handler %ps) still registered\n",
			port->port_num, idx,
			priv->reg_req ? priv->reg_req->mgmt_class : 0,
			priv->agent.recv_handler);
		__xa_erase(&ib_mad_clients, idx);
		n++;
	}
	xa_unlock(&ib_mad_clients);
	return n;
}
EXPORT_SYMBOL_IF_KUNIT(ib_mad_port_agents_left);

/**
 * ib_register_mad_agent() - register a client of the MAD layer
 * @device: the device
 * @port_num: the port
 * @qp_type: IB_QPT_SMI (QP0) or IB_QPT_GSI (QP1)
 * @mad_reg_req: the version, class, OUI and methods whose requests the
 *	agent receives; NULL for an agent that only sends (and receives the
 *	responses to what it sends)
 * @rmpp_version: 0, or IB_MGMT_RMPP_VERSION to use RMPP
 * @send_handler: called once for every posted send buffer when it is done
 * @recv_handler: called for every MAD the agent receives
 * @context: stored in the agent for the handlers
 * @registration_flags: 0 or IB_MAD_USER_RMPP (the client does RMPP)
 *
 * Context: process context; may sleep.
 * Return: the agent, or an ERR_PTR: -EPROTONOSUPPORT if the port has no
 * such QP, -EINVAL for a malformed request or methods already registered
 * by another agent, -ENODEV for an unknown port, -ENOMEM.
 */
struct ib_mad_agent *ib_register_mad_agent(struct ib_device *device,
					   u32 port_num,
					   enum ib_qp_type qp_type,
					   struct ib_mad_reg_req *mad_reg_req,
					   u8 rmpp_version,
					   ib_mad_send_handler send_handler,
					   ib_mad_recv_handler recv_handler,
					   void *context,
					   u32 registration_flags)
{
	struct ib_mad_port_private *port;
	struct ib_mad_agent_private *priv;
	struct ib_mad_qp_info *qp_info;
	int ret;

	/* Before anything reads the port's data. */
	if (!rdma_is_port_valid(device, port_num))
		return ERR_PTR(-ENODEV);
	if ((qp_type == IB_QPT_SMI && !rdma_cap_ib_smi(device, port_num)) ||
	    (qp_type == IB_QPT_GSI && !rdma_cap_ib_cm(device, port_num)))
		return ERR_PTR(-EPROTONOSUPPORT);
	ret = ib_mad_reg_validate(qp_type, mad_reg_req, rmpp_version,
				  send_handler, recv_handler,
				  registration_flags);
	if (ret) {
		dev_dbg_ratelimited(&device->dev,
				    "MAD agent registration refused: qp type %d class %#x version %u rmpp %u\n",
				    qp_type, mad_reg_req ? mad_reg_req->mgmt_class : 0,
				    mad_reg_req ? mad_reg_req->mgmt_class_version : 0,
				    rmpp_version);
		return ERR_PTR(ret);
	}
	port = ib_mad_port_get(device, port_num);
	if (!port)
		return ERR_PTR(-ENODEV);
	qp_info = &port->qp_info[ib_mad_qp_index(qp_type)];
	if (!qp_info->qp)
		return ERR_PTR(-EPROTONOSUPPORT);

	priv = ib_mad_agent_alloc(qp_info, mad_reg_req);
	if (!priv)
		return ERR_PTR(-ENOMEM);
	priv->agent.device = device;
	priv->agent.qp = qp_info->qp;
	priv->agent.port_num = port_num;
	priv->agent.rmpp_version = rmpp_version;
	priv->agent.flags = registration_flags;
	priv->agent.send_handler = send_handler;
	priv->agent.recv_handler = recv_handler;
	priv->agent.context = context;

	ret = ib_mad_agent_security_setup(&priv->agent, qp_type);
	if (ret)
		goto err_free_agent;
	ret = ib_mad_agent_publish(port, priv);
	if (ret) {
		dev_dbg_ratelimited(&device->dev,
				    "MAD agent registration failed: class %#x version %u: %d\n",
				    mad_reg_req ? mad_reg_req->mgmt_class : 0,
				    mad_reg_req ? mad_reg_req->mgmt_class_version : 0,
				    ret);
		goto err_security_cleanup;
	}
	trace_ib_mad_agent_register(priv);
	trace_ib_mad_create_agent(priv);
	return &priv->agent;

err_security_cleanup:
	ib_mad_agent_security_cleanup(&priv->agent);
err_free_agent:
	ib_mad_dup_free(priv->dup);
	kfree(priv->reg_req);
	kfree(priv);
	return ERR_PTR(ret);
}
EXPORT_SYMBOL(ib_register_mad_agent);

/**
 * ib_mad_kernel_rmpp_agent() - does the MAD layer do RMPP for an agent?
 * @agent: the agent
 *
 * Here rather than in mad_wire.c for the kABI: this file sees the same
 * complete types as upstream's mad.c (see mad_kabi.h), mad_wire.c more.
 *
 * Return: 1 if the agent registered an RMPP version and did not ask to
 * handle RMPP itself (IB_MAD_USER_RMPP), else 0.
 */
int ib_mad_kernel_rmpp_agent(const struct ib_mad_agent *agent)
{
	return agent->rmpp_version && !(agent->flags & IB_MAD_USER_RMPP);
}
EXPORT_SYMBOL(ib_mad_kernel_rmpp_agent);

/**
 * ib_unregister_mad_agent() - stop an agent and free it
 * @mad_agent: the agent
 *
 * The agent first leaves the tables so that no new MAD reaches it; its
 * outstanding sends are then cancelled (their send handlers run with
 * IB_WC_WR_FLUSH_ERR), RMPP reassemblies are dropped, and the call waits
 * until every send buffer of the agent has been freed and every handler
 * has returned.
 *
 * Context: process context; sleeps. Must not be called from a handler of
 * the same agent.
 */
void ib_unregister_mad_agent(struct ib_mad_agent *mad_agent)
{
	struct ib_mad_agent_private *priv = ib_mad_agent_priv(mad_agent);
	struct ib_mad_port_private *port = ib_mad_agent_port(priv);
	unsigned long flags;

	trace_ib_mad_agent_unregister(priv);
	trace_ib_mad_unregister_agent(priv);
	ib_mad_agent_unpublish(port, priv);
	spin_lock_irqsave(&priv->lock, flags);
	priv->dying = true;
	spin_unlock_irqrestore(&priv->lock, flags);

	ib_mad_agent_flush_sends(priv);
	ib_mad_rmpp_cancel_recvs(priv);

	ib_mad_agent_put(priv);
	wait_for_completion(&priv->comp);
	/* Nothing can queue the work again: no send is left. */
	cancel_delayed_work_sync(&priv->timed_work);

	ib_mad_agent_security_cleanup(&priv->agent);
	ib_mad_dup_free(priv->dup);
	kfree(priv->reg_req);
	kfree_rcu(priv, rcu);
}
EXPORT_SYMBOL(ib_unregister_mad_agent);
