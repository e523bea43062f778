// SPDX-License-Identifier: GPL-2.0
/*
 * ibdevsim: cables and the packet path.
 *
 * A packet leaves a port through ibdevsim_xmit().  ibdevsim_cable_xmit()
 * is the one place where a packet crosses a cable, and where the fault
 * knobs of fault.c drop, duplicate and delay it; the node at the other end then
 * either takes it (an HCA hands it to the QP it names) or, for a switch,
 * forwards it out of another port or answers it with its SMA.  The whole
 * walk runs under ibdevsim_fabric_lock, so that no port, QP or table
 * changes under a packet in flight.
 */

#include <linux/slab.h>

#include "ibdevsim.h"

/*
 * Protects every port's state, P_Key table, counters and cable, the QP0
 * and QP1 pointers of HCA ports, the UD QP tables of HCAs and the
 * forwarding state of switches.  Taken with interrupts off: the RDMA core
 * may query a port from any context.
 */
DEFINE_SPINLOCK(ibdevsim_fabric_lock);

/* Runs the send queues of all QPs. */
struct workqueue_struct *ibdevsim_wq;

/* LRH, BTH, DETH, ICRC and VCRC bytes around a UD payload. */
#define IBDEVSIM_UD_HDR_BYTES	36

/**
 * ibdevsim_pkt_alloc() - allocate a packet with room for a payload
 * @len: payload bytes
 * @gfp: allocation flags
 *
 * Return: the packet, zeroed but for @data, or NULL.
 */
struct ibdevsim_pkt *ibdevsim_pkt_alloc(u32 len, gfp_t gfp)
{
	struct ibdevsim_pkt *pkt;

	pkt = kzalloc(struct_size(pkt, data, len), gfp);
	if (!pkt)
		return NULL;
	pkt->len = len;
	INIT_LIST_HEAD(&pkt->list);
	return pkt;
}

/**
 * ibdevsim_port_init() - give a new port its power-on state
 * @port: the port
 * @node: its node
 * @num: its number
 *
 * A port starts unplugged: DOWN and Polling, no LID, the default GID
 * prefix and a P_Key table with the default full-member key only.  A
 * switch's port 0 is always physically up.
 */
void ibdevsim_port_init(struct ibdevsim_port *port, struct ibdevsim_node *node,
			u8 num)
{
	struct ibdevsim_port_state *st = &port->st;

	memset(port, 0, sizeof(*port));
	port->node = node;
	port->num = num;
	st->gid_prefix = IBDEVSIM_DEFAULT_GID_PREFIX;
	st->state = IB_PORT_DOWN;
	st->phys_state = IB_PORT_PHYS_STATE_POLLING;
	st->link_down_default = IB_PORT_PHYS_STATE_POLLING;
	st->width_enabled = IBDEVSIM_WIDTH_SUPPORTED;
	st->speed_enabled = IBDEVSIM_SPEED_SUPPORTED;
	st->neighbor_mtu = IBDEVSIM_MTU_CAP;
	st->op_vls = IBDEVSIM_VL_CAP;
	st->hoq_life = 0x1f;
	st->vl_stall = 7;
	if (node->type == IBDEVSIM_NODE_HCA)
		st->cap_mask = IB_PORT_SYS_IMAGE_GUID_SUP |
			       IB_PORT_CLIENT_REG_SUP;
	else if (!num)
		st->cap_mask = IB_PORT_SYS_IMAGE_GUID_SUP;
	if (node->type == IBDEVSIM_NODE_SWITCH && !num) {
		st->state = IB_PORT_INIT;
		st->phys_state = IB_PORT_PHYS_STATE_LINK_UP;
	}
	port->pkeys[0] = IB_DEFAULT_PKEY_FULL;
}

/**
 * ibdevsim_port_set_state_locked() - change a port's logical state
 * @port: the port
 * @state: the new IB_PORT_* state
 *
 * Context: ibdevsim_fabric_lock held.
 * Return: the IBDEVSIM_CHG_* bits for the events to raise.
 */
u32 ibdevsim_port_set_state_locked(struct ibdevsim_port *port, u8 state)
{
	u8 old = port->st.state;
	u32 chg = 0;

	if (old == state)
		return 0;
	port->st.state = state;
	chg |= IBDEVSIM_CHG_STATE;
	if (state == IB_PORT_ACTIVE)
		chg |= IBDEVSIM_CHG_ACTIVE;
	else if (old == IB_PORT_ACTIVE)
		chg |= IBDEVSIM_CHG_ERR;
	if (port->node->type == IBDEVSIM_NODE_SWITCH)
		port->node->sw->port_state_change = true;
	return chg;
}

/* Physical link up (training done: INIT) or down, for one end. */
static u32 ibdevsim_port_link_locked(struct ibdevsim_port *port, bool up)
{
	if (up) {
		port->st.phys_state = IB_PORT_PHYS_STATE_LINK_UP;
		return ibdevsim_port_set_state_locked(port, IB_PORT_INIT);
	}
	port->st.phys_state = port->st.link_down_default;
	if (port->st.state != IB_PORT_DOWN && port->cnt.link_downed < U8_MAX)
		port->cnt.link_downed++;
	return ibdevsim_port_set_state_locked(port, IB_PORT_DOWN);
}

/**
 * ibdevsim_port_events() - raise the IB events for changes on a port
 * @port: the port (events are raised for HCA ports only)
 * @chg: IBDEVSIM_CHG_* bits
 *
 * Context: process or atomic context, ibdevsim_fabric_lock not held; the
 * port's node must stay registered meanwhile.
 */
void ibdevsim_port_events(struct ibdevsim_port *port, u32 chg)
{
	static const struct {
		u32 bit;
		enum ib_event_type event;
	} map[] = {
		{ IBDEVSIM_CHG_ERR, IB_EVENT_PORT_ERR },
		{ IBDEVSIM_CHG_LID, IB_EVENT_LID_CHANGE },
		{ IBDEVSIM_CHG_GID, IB_EVENT_GID_CHANGE },
		{ IBDEVSIM_CHG_PKEY, IB_EVENT_PKEY_CHANGE },
		{ IBDEVSIM_CHG_SM, IB_EVENT_SM_CHANGE },
		{ IBDEVSIM_CHG_ACTIVE, IB_EVENT_PORT_ACTIVE },
		{ IBDEVSIM_CHG_REREG, IB_EVENT_CLIENT_REREGISTER },
	};
	struct ib_event ev = {};
	int i;

	if (!port || port->node->type != IBDEVSIM_NODE_HCA)
		return;
	ev.device = &port->node->hca->ibdev;
	ev.element.port_num = port->num;
	for (i = 0; i < ARRAY_SIZE(map); i++) {
		if (!(chg & map[i].bit))
			continue;
		ev.event = map[i].event;
		ib_dispatch_event(&ev);
	}
}

/**
 * ibdevsim_cable_plug() - join two ports with a cable
 * @a: one end
 * @b: the other end
 *
 * Both ports train and go to INIT; the SM takes them further.
 *
 * Context: ibdevsim_topo_mutex held.
 * Return: 0, -EBUSY if either port already has a cable, -EINVAL for a
 * switch's port 0 or a port cabled to itself.
 */
int ibdevsim_cable_plug(struct ibdevsim_port *a, struct ibdevsim_port *b)
{
	unsigned long flags;
	u32 chg_a, chg_b;

	if (a == b || !a->num || !b->num)
		return -EINVAL;
	spin_lock_irqsave(&ibdevsim_fabric_lock, flags);
	if (a->peer || b->peer) {
		spin_unlock_irqrestore(&ibdevsim_fabric_lock, flags);
		return -EBUSY;
	}
	a->peer = b;
	b->peer = a;
	a->pulled = false;
	b->pulled = false;
	chg_a = ibdevsim_port_link_locked(a, true);
	chg_b = ibdevsim_port_link_locked(b, true);
	spin_unlock_irqrestore(&ibdevsim_fabric_lock, flags);
	ibdevsim_port_events(a, chg_a);
	ibdevsim_port_events(b, chg_b);
	return 0;
}

/**
 * ibdevsim_cable_unplug() - pull the cable out of a port
 * @port: either end of the cable
 *
 * Both ends go DOWN (PORT_ERR for an end that was ACTIVE).
 *
 * Context: ibdevsim_topo_mutex held.
 * Return: 0, or -ENOENT when the port has no cable.
 */
int ibdevsim_cable_unplug(struct ibdevsim_port *port)
{
	struct ibdevsim_port *peer;
	unsigned long flags;
	u32 chg_a, chg_b;

	spin_lock_irqsave(&ibdevsim_fabric_lock, flags);
	peer = port->peer;
	if (!peer) {
		spin_unlock_irqrestore(&ibdevsim_fabric_lock, flags);
		return -ENOENT;
	}
	port->peer = NULL;
	peer->peer = NULL;
	port->pulled = false;
	peer->pulled = false;
	chg_a = ibdevsim_port_link_locked(port, false);
	chg_b = ibdevsim_port_link_locked(peer, false);
	spin_unlock_irqrestore(&ibdevsim_fabric_lock, flags);
	ibdevsim_port_events(port, chg_a);
	ibdevsim_port_events(peer, chg_b);
	return 0;
}

/**
 * ibdevsim_cable_set_link() - pull a cable out or plug it back in
 * @port: either end of the cable
 * @up: plug it back (both ends train to INIT) or pull it (both go DOWN,
 *	PORT_ERR for an end that was ACTIVE)
 *
 * The cable stays known to the topology while it is pulled.  Asking for
 * the state the cable is in changes nothing.
 *
 * Context: ibdevsim_topo_mutex held.
 * Return: 0, or -ENOENT when the port has no cable.
 */
int ibdevsim_cable_set_link(struct ibdevsim_port *port, bool up)
{
	struct ibdevsim_port *peer;
	u32 chg_a = 0, chg_b = 0;
	unsigned long flags;

	lockdep_assert_held(&ibdevsim_topo_mutex);
	spin_lock_irqsave(&ibdevsim_fabric_lock, flags);
	peer = port->peer;
	if (!peer) {
		spin_unlock_irqrestore(&ibdevsim_fabric_lock, flags);
		return -ENOENT;
	}
	if (port->pulled == !up) {
		spin_unlock_irqrestore(&ibdevsim_fabric_lock, flags);
		return 0;
	}
	port->pulled = !up;
	peer->pulled = !up;
	chg_a = ibdevsim_port_link_locked(port, up);
	chg_b = ibdevsim_port_link_locked(peer, up);
	spin_unlock_irqrestore(&ibdevsim_fabric_lock, flags);
	ibdevsim_port_events(port, chg_a);
	ibdevsim_port_events(peer, chg_b);
	return 0;
}

/* Whether @lid is one of the port's LIDs (its base LID and LMC). */
static bool ibdevsim_port_owns_lid(const struct ibdevsim_port *port, u16 lid)
{
	u16 mask = ~((1U << port->st.lmc) - 1);

	return port->st.lid && (lid & mask) == (port->st.lid & mask);
}

static void ibdevsim_count(struct ibdevsim_counters *cnt, bool xmit,
			   const struct ibdevsim_pkt *pkt)
{
	u32 words = (pkt->len + IBDEVSIM_UD_HDR_BYTES +
		     (pkt->has_grh ? sizeof(struct ib_grh) : 0)) / 4;

	if (xmit) {
		cnt->xmit_pkts++;
		cnt->xmit_data += words;
	} else {
		cnt->rcv_pkts++;
		cnt->rcv_data += words;
	}
}

/**
 * ibdevsim_cable_xmit() - a packet crosses the cable of a port
 * @out: the port it leaves by
 * @pkt: the packet
 *
 * Subnet management packets (VL15) cross any trained link; other packets
 * need both ends ACTIVE.  Then the port's fault knobs have their say.
 *
 * Context: ibdevsim_fabric_lock held.
 * Return: the port at the other end, or NULL when the packet was dropped
 * (and freed) or delayed (and queued).
 */
static struct ibdevsim_port *ibdevsim_cable_xmit(struct ibdevsim_port *out,
						 struct ibdevsim_pkt *pkt)
{
	struct ibdevsim_port *in = out->peer;

	if (!in || out->pulled ||
	    (!pkt->vl15 && (out->st.state != IB_PORT_ACTIVE ||
			    in->st.state != IB_PORT_ACTIVE))) {
		out->cnt.xmit_discards++;
		kfree(pkt);
		return NULL;
	}
	if (!ibdevsim_fault_apply_locked(out, pkt))
		return NULL;
	ibdevsim_count(&out->cnt, true, pkt);
	ibdevsim_count(&in->cnt, false, pkt);
	return in;
}

/* An RC request goes only to an RC QP, a datagram never does. */
static bool ibdevsim_qp_takes(const struct ibdevsim_qp *qp,
			      const struct ibdevsim_pkt *pkt)
{
	if (qp->ibqp.qp_type == IB_QPT_RC)
		return pkt->rc;
	return !pkt->rc;
}

/* An HCA port takes a packet: find the QP and hand it over. */
static void ibdevsim_hca_recv(struct ibdevsim_port *in, struct ibdevsim_pkt *pkt)
{
	struct ibdevsim_hca *hca = in->node->hca;
	struct ibdevsim_qp *qp;
	int pkey_index = 0;

	if (pkt->vl15) {
		qp = pkt->dest_qpn == 0 ? in->qp0 : NULL;
		if (pkt->dlid != be16_to_cpu(IB_LID_PERMISSIVE) &&
		    !ibdevsim_port_owns_lid(in, pkt->dlid))
			qp = NULL;
		if (!qp)
			in->cnt.vl15_dropped++;
	} else if (ibdevsim_lid_is_mcast(pkt->dlid)) {
		/* Multicast: a UD datagram to QP 0xffffff, or nothing. */
		qp = NULL;
		if (!pkt->rc && pkt->dest_qpn == IBDEVSIM_MCAST_QPN)
			ibdevsim_mcast_recv_locked(in, pkt);
		else
			in->cnt.rcv_errors++;
	} else if (!ibdevsim_port_owns_lid(in, pkt->dlid)) {
		qp = NULL;
		in->cnt.rcv_errors++;
	} else {
		if (pkt->dest_qpn == 1)
			qp = in->qp1;
		else if (pkt->dest_qpn)
			qp = xa_load(&hca->qps, pkt->dest_qpn);
		else
			qp = NULL;
		if (qp && (qp->port != in->num || !ibdevsim_qp_takes(qp, pkt)))
			qp = NULL;
		pkey_index = ibdevsim_pkey_find(in->pkeys,
						IBDEVSIM_PKEY_TBL_LEN,
						pkt->pkey);
		if (qp && pkey_index < 0) {
			in->st.pkey_violations++;
			qp = NULL;
		} else if (qp && !pkt->rc && pkt->qkey != qp->qkey) {
			in->st.qkey_violations++;
			qp = NULL;
		}
		if (!qp)
			in->cnt.rcv_errors++;
	}
	if (qp && pkt->rc)
		ibdevsim_rc_recv_locked(qp, pkt);
	else if (qp)
		ibdevsim_qp_deliver_locked(qp, pkt, pkey_index, in->num);
	kfree(pkt);
}

/* Route a packet at a switch by LID; NULL (packet freed) when dropped. */
static struct ibdevsim_port *ibdevsim_switch_lid_route(struct ibdevsim_port *in,
						       struct ibdevsim_pkt *pkt,
						       u16 dlid)
{
	struct ibdevsim_node *node = in->node;
	int out;

	out = ibdevsim_lft_lookup(node->sw->lft, IBDEVSIM_LFT_CAP,
				  node->sw->lft_top, dlid, node->nports,
				  in->num);
	if (out <= 0) {
		in->cnt.rcv_errors++;
		kfree(pkt);
		return NULL;
	}
	return &node->ports[out];
}

/**
 * struct ibdevsim_walk - the packets of one walk through the fabric
 * @queue: copies a switch made of a multicast packet, each to cross the
 *	   cable of its @via port
 * @copies: copies made so far, at most %IBDEVSIM_MCAST_MAX_COPIES (a bad
 *	    MFT may loop; the hop limit ends each copy, this ends the walk)
 */
struct ibdevsim_walk {
	struct list_head queue;
	u32 copies;
};

/*
 * Replicate a multicast packet at a switch by its MFT: a copy for every
 * member port but the first, which takes the packet itself (returned; NULL
 * and the packet freed when no port is a member).
 */
static struct ibdevsim_port *ibdevsim_switch_mcast(struct ibdevsim_port *in,
						   struct ibdevsim_pkt *pkt,
						   struct ibdevsim_walk *walk)
{
	struct ibdevsim_node *node = in->node;
	struct ibdevsim_port *first = NULL;
	struct ibdevsim_pkt *copy;
	u64 ports;
	int i;

	/* An RC request to a multicast LID is invalid. */
	ports = pkt->rc ? 0 :
		ibdevsim_mft_lookup(node->sw->mft, IBDEVSIM_MFT_CAP,
				    node->sw->mft_top, pkt->dlid, node->nports,
				    in->num);
	for (i = 1; i <= node->nports; i++) {
		if (!(ports & BIT_ULL(i)))
			continue;
		if (!first) {
			first = &node->ports[i];
			continue;
		}
		copy = NULL;
		if (walk->copies < IBDEVSIM_MCAST_MAX_COPIES)
			copy = kmemdup(pkt, struct_size(pkt, data, pkt->len),
				       GFP_ATOMIC);
		if (!copy) {
			node->ports[i].cnt.xmit_discards++;
			continue;
		}
		walk->copies++;
		copy->via = &node->ports[i];
		list_add_tail(&copy->list, &walk->queue);
	}
	if (!first)
		kfree(pkt);
	return first;
}

/* The switch's SMA or PMA takes a packet; returns where its answer goes. */
static struct ibdevsim_port *ibdevsim_switch_local(struct ibdevsim_port *in,
						   struct ibdevsim_pkt **pktp)
{
	struct ibdevsim_node *node = in->node;
	struct ibdevsim_pkt *reply;
	struct ib_smp *smp;
	u8 out;

	reply = ibdevsim_switch_sma_locked(in, *pktp);
	kfree(*pktp);
	*pktp = reply;
	if (!reply)
		return NULL;
	smp = (struct ib_smp *)reply->data;
	if (reply->vl15 && smp->mgmt_class == IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE) {
		if (ibdevsim_dr_switch_reply(smp, node->nports, &out) !=
		    IBDEVSIM_DR_FORWARD) {
			kfree(reply);
			*pktp = NULL;
			return NULL;
		}
		return &node->ports[out];
	}
	return ibdevsim_switch_lid_route(&node->ports[0], reply, reply->dlid);
}

/*
 * A switch takes a packet on port @in.  Returns the port to send it out
 * of (*pktp may then be a new packet, the SMA's answer), or NULL when it
 * was consumed or dropped.  Copies of a multicast packet for its other
 * member ports go on @walk's queue.
 */
static struct ibdevsim_port *ibdevsim_switch_recv(struct ibdevsim_port *in,
						  struct ibdevsim_pkt **pktp,
						  struct ibdevsim_walk *walk)
{
	struct ibdevsim_pkt *pkt = *pktp;
	struct ibdevsim_node *node = in->node;
	struct ib_smp *smp = (struct ib_smp *)pkt->data;
	u16 dlid = pkt->dlid;
	u8 out;

	if (++pkt->hops > IBDEVSIM_MAX_HOPS) {
		in->cnt.rcv_errors++;
		kfree(pkt);
		return NULL;
	}
	if (pkt->vl15 && pkt->len >= IBDEVSIM_SMP_LEN &&
	    smp->mgmt_class == IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE) {
		switch (ibdevsim_dr_switch_recv(smp, in->num, node->nports,
						&out, &dlid)) {
		case IBDEVSIM_DR_FORWARD:
			return &node->ports[out];
		case IBDEVSIM_DR_LOCAL:
			return ibdevsim_switch_local(in, pktp);
		case IBDEVSIM_DR_LID_ROUTE:
			return ibdevsim_switch_lid_route(in, pkt, dlid);
		default:
			in->cnt.vl15_dropped++;
			kfree(pkt);
			return NULL;
		}
	}
	if (!pkt->vl15 && ibdevsim_lid_is_mcast(dlid))
		return ibdevsim_switch_mcast(in, pkt, walk);
	if ((pkt->vl15 && dlid == be16_to_cpu(IB_LID_PERMISSIVE)) ||
	    ibdevsim_port_owns_lid(&node->ports[0], dlid))
		return ibdevsim_switch_local(in, pktp);
	return ibdevsim_switch_lid_route(in, pkt, dlid);
}

/**
 * ibdevsim_walk_locked() - a packet crosses the fabric from a port
 * @out: the port it leaves by (an HCA's, or any port for a packet coming
 *	 off the delay queue)
 * @pkt: the packet, which the fabric owns from now on
 *
 * The packet crosses @out's cable and is walked through the switches
 * until an HCA takes it or it is dropped or delayed.  A multicast packet
 * is copied at every switch for each member port of its MLID, and every
 * copy walked in turn.
 *
 * Context: ibdevsim_fabric_lock held.
 */
void ibdevsim_walk_locked(struct ibdevsim_port *out, struct ibdevsim_pkt *pkt)
{
	struct ibdevsim_walk walk = { .queue = LIST_HEAD_INIT(walk.queue) };
	struct ibdevsim_port *in;

	lockdep_assert_held(&ibdevsim_fabric_lock);
	for (;;) {
		while (out) {
			in = ibdevsim_cable_xmit(out, pkt);
			if (!in)
				break;
			if (in->node->type == IBDEVSIM_NODE_HCA) {
				ibdevsim_hca_recv(in, pkt);
				break;
			}
			out = ibdevsim_switch_recv(in, &pkt, &walk);
		}
		pkt = list_first_entry_or_null(&walk.queue, struct ibdevsim_pkt,
					       list);
		if (!pkt)
			break;
		list_del_init(&pkt->list);
		out = pkt->via;
	}
}

/**
 * ibdevsim_xmit() - send a packet out of an HCA port
 * @port: the port
 * @pkt: the packet, which the fabric owns from now on
 *
 * A packet for one of the port's own LIDs (a LID-routed SMP too) loops
 * back inside the HCA; a multicast datagram is delivered to the port's
 * own members of the group (the sender too, if attached: IBTA lets a CA
 * loop multicast back, and IPoIB drops its own packets) and goes out to
 * the fabric as well.
 * Otherwise it crosses the cable and is walked through the switches
 * until an HCA takes it or it is dropped.
 *
 * Context: any; takes ibdevsim_fabric_lock.
 */
void ibdevsim_xmit(struct ibdevsim_port *port, struct ibdevsim_pkt *pkt)
{
	unsigned long flags;

	spin_lock_irqsave(&ibdevsim_fabric_lock, flags);
	/* The port's own members of a group get their copies first. */
	if (!pkt->vl15 && !pkt->rc && ibdevsim_lid_is_mcast(pkt->dlid) &&
	    pkt->dest_qpn == IBDEVSIM_MCAST_QPN &&
	    port->st.state == IB_PORT_ACTIVE)
		ibdevsim_mcast_recv_locked(port, pkt);
	if (ibdevsim_port_owns_lid(port, pkt->dlid)) {
		if (pkt->vl15 || port->st.state == IB_PORT_ACTIVE) {
			ibdevsim_hca_recv(port, pkt);
		} else {
			port->cnt.xmit_discards++;
			kfree(pkt);
		}
		goto out;
	}
	ibdevsim_walk_locked(port, pkt);
out:
	spin_unlock_irqrestore(&ibdevsim_fabric_lock, flags);
}
