// SPDX-License-Identifier: GPL-2.0
/*
 * ibdevsim: cables and the packet path.
 *
 * A packet leaves a port through ibdevsim_xmit().  ibdevsim_cable_xmit()
 * is the one place where a packet crosses a cable, and where the fault
 * knobs of fault.c drop, duplicate and delay it; the node at the other end
 * then either takes it or, for a switch, forwards it out of another port
 * or answers it with its SMA.
 *
 * There is no fabric-wide lock.  The sender walks its packet through the
 * switches, holding at each node that node's lock only; an HCA port that
 * takes a packet queues it, and the port's own receive work hands it to
 * the QP it names and completes the receive, as the receive side of a
 * real port does, concurrently with every other port.  Nodes are freed
 * only after an RCU grace period, so a walk runs under rcu_read_lock().
 */

#include <linux/slab.h>

#include <kunit/visibility.h>

#include "ibdevsim.h"

/* Runs the send queues of all QPs, and the QPs' and CQs' events. */
struct workqueue_struct *ibdevsim_wq;

/* Runs the receive side of every HCA port. */
struct workqueue_struct *ibdevsim_rx_wq;

static void ibdevsim_rx_work(struct work_struct *work);

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
EXPORT_SYMBOL_IF_KUNIT(ibdevsim_pkt_alloc);

/**
 * ibdevsim_pkt_free() - free a packet the fabric is done with
 * @pkt: the packet, or NULL
 *
 * A packet dropped on the way is simply gone, as on a wire: an RC
 * requester finds out by its timer.
 *
 * Context: any.
 */
void ibdevsim_pkt_free(struct ibdevsim_pkt *pkt)
{
	kfree(pkt);
}
EXPORT_SYMBOL_IF_KUNIT(ibdevsim_pkt_free);

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
	spin_lock_init(&port->rx_lock);
	INIT_LIST_HEAD(&port->rxq);
	INIT_WORK(&port->rx_work, ibdevsim_rx_work);
	INIT_DELAYED_WORK(&port->trap.work, ibdevsim_trap_work);
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
EXPORT_SYMBOL_IF_KUNIT(ibdevsim_port_init);

/**
 * ibdevsim_port_set_state_locked() - change a port's logical state
 * @port: the port
 * @state: the new IB_PORT_* state
 *
 * Context: the port's node lock held.
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
 * Context: process or atomic context, no node lock held; the port's node
 * must stay registered meanwhile.
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

	if (!port || port->node->type != IBDEVSIM_NODE_HCA ||
	    READ_ONCE(port->node->gone))
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
 * ibdevsim_port_train() - train a port's link up or down, for one end only
 * @port: the port, at the end of a remote cable
 * @up: the link is to be up (INIT) or down
 *
 * Nothing changes when the link already is as asked.  Raises the events
 * of an HCA port and a switch's Trap 128, as a cable plugged or pulled
 * does.
 *
 * Context: process or atomic, no node lock held.
 */
void ibdevsim_port_train(struct ibdevsim_port *port, bool up)
{
	unsigned long flags;
	bool is_up;
	u32 chg = 0;

	spin_lock_irqsave(&port->node->lock, flags);
	is_up = port->st.phys_state == IB_PORT_PHYS_STATE_LINK_UP;
	if (up != is_up)
		chg = ibdevsim_port_link_locked(port, up);
	spin_unlock_irqrestore(&port->node->lock, flags);
	ibdevsim_port_events(port, chg);
	if (chg & IBDEVSIM_CHG_STATE)
		ibdevsim_sma_trap128(port->node);
}

/**
 * ibdevsim_port_set_remote() - plug a remote cable into a port, or take it out
 * @port: the port
 * @r: the cable, or NULL to take it out (the port goes down)
 *
 * Context: ibdevsim_topo_mutex held; no node lock.
 */
void ibdevsim_port_set_remote(struct ibdevsim_port *port,
			      struct ibdevsim_remote *r)
{
	unsigned long flags;
	u32 chg = 0;

	lockdep_assert_held(&ibdevsim_topo_mutex);
	spin_lock_irqsave(&port->node->lock, flags);
	port->remote = r;
	port->pulled = false;
	if (!r)
		chg = ibdevsim_port_link_locked(port, false);
	spin_unlock_irqrestore(&port->node->lock, flags);
	ibdevsim_port_events(port, chg);
	if (chg & IBDEVSIM_CHG_STATE)
		ibdevsim_sma_trap128(port->node);
}

/*
 * Connect one end of a cable to @peer (NULL: disconnect it) and train its
 * link up or down; returns the IBDEVSIM_CHG_* bits for the events.  Each
 * end is changed under its own node lock: for a moment one end may know
 * of the cable and the other not, as when a real cable is half plugged.
 */
static u32 ibdevsim_cable_end(struct ibdevsim_port *port,
			      struct ibdevsim_port *peer, bool pulled, bool up)
{
	unsigned long flags;
	u32 chg;

	spin_lock_irqsave(&port->node->lock, flags);
	port->peer = peer;
	port->pulled = pulled;
	chg = ibdevsim_port_link_locked(port, up);
	spin_unlock_irqrestore(&port->node->lock, flags);
	return chg;
}

/*
 * Both ends of a cable changed: the events of HCA ends, and Trap 128 from
 * a switch whose port's link came up or went down.
 */
static void ibdevsim_cable_changed(struct ibdevsim_port *a, u32 chg_a,
				   struct ibdevsim_port *b, u32 chg_b)
{
	ibdevsim_port_events(a, chg_a);
	ibdevsim_port_events(b, chg_b);
	if (chg_a & IBDEVSIM_CHG_STATE)
		ibdevsim_sma_trap128(a->node);
	if ((chg_b & IBDEVSIM_CHG_STATE) && b->node != a->node)
		ibdevsim_sma_trap128(b->node);
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
	u32 chg_a, chg_b;

	lockdep_assert_held(&ibdevsim_topo_mutex);
	if (a == b || !a->num || !b->num)
		return -EINVAL;
	if (a->peer || b->peer || a->remote || b->remote)
		return -EBUSY;
	chg_a = ibdevsim_cable_end(a, b, false, true);
	chg_b = ibdevsim_cable_end(b, a, false, true);
	ibdevsim_cable_changed(a, chg_a, b, chg_b);
	return 0;
}

/**
 * ibdevsim_cable_unplug() - pull the cable out of a port
 * @port: either end of the cable
 *
 * Both ends go DOWN (PORT_ERR for an end that was ACTIVE).  A packet that
 * was crossing the cable may still arrive; a caller that frees a node
 * waits for an RCU grace period first.  A remote cable's far end goes
 * down when it hears this end is gone.
 *
 * Context: ibdevsim_topo_mutex held; process.
 * Return: 0, or -ENOENT when the port has no cable.
 */
int ibdevsim_cable_unplug(struct ibdevsim_port *port)
{
	struct ibdevsim_port *peer = port->peer;
	u32 chg_a, chg_b;

	lockdep_assert_held(&ibdevsim_topo_mutex);
	if (port->remote)
		return ibdevsim_remote_unplug(port);
	if (!peer)
		return -ENOENT;
	chg_a = ibdevsim_cable_end(port, NULL, false, false);
	chg_b = ibdevsim_cable_end(peer, NULL, false, false);
	ibdevsim_cable_changed(port, chg_a, peer, chg_b);
	return 0;
}

/**
 * ibdevsim_cable_set_link() - pull a cable out or plug it back in
 * @port: either end of the cable
 * @up: plug it back (both ends train to INIT) or pull it (both go DOWN,
 *	PORT_ERR for an end that was ACTIVE)
 *
 * The cable stays known to the topology while it is pulled.  Asking for
 * the state the cable is in changes nothing.  Pulling this end of a
 * remote cable takes the far end's link down as well, as a real cable
 * pulled out of one port does.
 *
 * Context: ibdevsim_topo_mutex held.
 * Return: 0, or -ENOENT when the port has no cable.
 */
int ibdevsim_cable_set_link(struct ibdevsim_port *port, bool up)
{
	struct ibdevsim_port *peer = port->peer;
	u32 chg_a, chg_b;

	lockdep_assert_held(&ibdevsim_topo_mutex);
	if (port->remote && port->pulled != !up)
		ibdevsim_remote_set_link(port, up);
	if (port->remote)
		return 0;
	if (!peer)
		return -ENOENT;
	if (port->pulled == !up)
		return 0;
	chg_a = ibdevsim_cable_end(port, peer, !up, up);
	chg_b = ibdevsim_cable_end(peer, port, !up, up);
	ibdevsim_cable_changed(port, chg_a, peer, chg_b);
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
 * need both ends ACTIVE (at a remote cable, this end: the far end checks
 * its own).  Then the port's fault knobs have their say.  The far end's
 * state is read without its node's lock, as it was a moment ago: the
 * packet is on the wire.  A packet for a remote cable is queued for it.
 *
 * Context: RCU read lock held; takes @out's node lock.
 * Return: the port at the other end, or NULL when the packet was dropped
 * (and freed), delayed (and queued) or handed to a remote cable.
 */
static struct ibdevsim_port *ibdevsim_cable_xmit(struct ibdevsim_port *out,
						 struct ibdevsim_pkt *pkt)
{
	struct ibdevsim_remote *remote;
	struct ibdevsim_port *in;
	unsigned long flags;
	u32 mtu;

	spin_lock_irqsave(&out->node->lock, flags);
	in = out->peer;
	remote = out->remote;
	if ((!in && !remote) || out->pulled ||
	    (remote && out->st.phys_state != IB_PORT_PHYS_STATE_LINK_UP) ||
	    (!pkt->vl15 && (out->st.state != IB_PORT_ACTIVE ||
			    (in && READ_ONCE(in->st.state) != IB_PORT_ACTIVE))))
		goto discard;
	/*
	 * A link carries packets up to the smaller NeighborMTU of its two
	 * ends; a longer one is discarded, as a switch port does.
	 */
	mtu = in ? ibdevsim_port_mtu(in) : ibdevsim_remote_mtu(remote);
	if (!pkt->vl15 && pkt->len > min(ibdevsim_port_mtu(out), mtu))
		goto discard;
	/* Checked before the knobs, so that what is counted as sent is. */
	if (remote && ibdevsim_remote_full_locked(remote))
		goto discard;
	if (!ibdevsim_fault_apply_locked(out, pkt)) {
		in = NULL;
	} else {
		ibdevsim_count(&out->cnt, true, pkt);
		if (remote)
			ibdevsim_remote_queue_locked(remote, pkt);
	}
	spin_unlock_irqrestore(&out->node->lock, flags);
	return in;

discard:
	out->cnt.xmit_discards++;
	spin_unlock_irqrestore(&out->node->lock, flags);
	ibdevsim_pkt_free(pkt);
	return NULL;
}

/* An RC request goes only to an RC QP, a datagram never does. */
static bool ibdevsim_qp_takes(const struct ibdevsim_qp *qp,
			      const struct ibdevsim_pkt *pkt)
{
	if (qp->ibqp.qp_type == IB_QPT_RC)
		return pkt->rc;
	return !pkt->rc;
}

/*
 * Find the QP a unicast or VL15 packet names at an HCA port, with the
 * P_Key and Q_Key checks, and count what it is refused for.  QP1 takes
 * any P_Key of the port's table; a UD or RC QP only that of its own
 * P_Key index, as IBTA 10.9.3 says.  The QP stays valid until the port's
 * receive work returns (ibdevsim_destroy_qp() flushes it).  Node lock of
 * @in held.
 */
VISIBLE_IF_KUNIT struct ibdevsim_qp *
ibdevsim_hca_find_qp(struct ibdevsim_port *in, const struct ibdevsim_pkt *pkt,
		     int *pkey_index)
{
	struct ibdevsim_qp *qp;

	if (pkt->vl15) {
		qp = pkt->dest_qpn == 0 ? in->qp0 : NULL;
		if (pkt->dlid != be16_to_cpu(IB_LID_PERMISSIVE) &&
		    !ibdevsim_port_owns_lid(in, pkt->dlid))
			qp = NULL;
		if (!qp)
			in->cnt.vl15_dropped++;
		return qp;
	}
	if (!ibdevsim_port_owns_lid(in, pkt->dlid)) {
		in->cnt.rcv_errors++;
		return NULL;
	}
	if (pkt->dest_qpn == 1)
		qp = in->qp1;
	else if (pkt->dest_qpn)
		qp = xa_load(&in->node->hca->qps, pkt->dest_qpn);
	else
		qp = NULL;
	if (qp && (qp->port != in->num || !ibdevsim_qp_takes(qp, pkt)))
		qp = NULL;
	if (qp && pkt->dest_qpn != 1)
		*pkey_index = ibdevsim_pkey_match(in->pkeys[qp->pkey_index %
							    IBDEVSIM_PKEY_TBL_LEN],
						  pkt->pkey) ?
			      qp->pkey_index : -1;
	else
		*pkey_index = ibdevsim_pkey_find(in->pkeys,
						 IBDEVSIM_PKEY_TBL_LEN,
						 pkt->pkey);
	if (qp && *pkey_index < 0) {
		in->st.pkey_violations++;
		in->pkey_refused++;
		ibdevsim_sma_bad_pkey_locked(in, pkt);
		qp = NULL;
	} else if (qp && !pkt->rc && pkt->qkey != qp->qkey) {
		in->st.qkey_violations++;
		in->qkey_refused++;
		qp = NULL;
	}
	if (!qp)
		in->cnt.rcv_errors++;
	return qp;
}
EXPORT_SYMBOL_IF_KUNIT(ibdevsim_hca_find_qp);

/*
 * The receive side of an HCA port takes a packet: find the QP and hand it
 * over, outside the node lock.  Runs in the port's receive work.
 */
static void ibdevsim_hca_recv(struct ibdevsim_port *in, struct ibdevsim_pkt *pkt)
{
	struct ibdevsim_qp *qp = NULL;
	unsigned long flags;
	int pkey_index = 0;
	bool mcast;

	mcast = !pkt->vl15 && ibdevsim_lid_is_mcast(pkt->dlid);
	spin_lock_irqsave(&in->node->lock, flags);
	if (pkt->wire)
		ibdevsim_count(&in->cnt, false, pkt);
	/* Multicast: a UD datagram to QP 0xffffff, or nothing. */
	if (mcast && (pkt->rc || pkt->dest_qpn != IBDEVSIM_MCAST_QPN)) {
		in->cnt.rcv_errors++;
		mcast = false;
	} else if (!mcast) {
		qp = ibdevsim_hca_find_qp(in, pkt, &pkey_index);
	}
	spin_unlock_irqrestore(&in->node->lock, flags);

	if (mcast)
		ibdevsim_mcast_recv(in, pkt);
	else if (qp && pkt->rc)
		ibdevsim_rc_recv(qp, pkt);
	else if (qp)
		ibdevsim_qp_deliver(qp, pkt, pkey_index, in->num);
	ibdevsim_pkt_free(pkt);
}

/* Queue a packet for the receive side of an HCA port. */
static void ibdevsim_rx_queue(struct ibdevsim_port *in,
			      struct ibdevsim_pkt *pkt)
{
	unsigned long flags;

	spin_lock_irqsave(&in->rx_lock, flags);
	if (in->rx_dead) {
		spin_unlock_irqrestore(&in->rx_lock, flags);
		ibdevsim_pkt_free(pkt);
		return;
	}
	list_add_tail(&pkt->list, &in->rxq);
	spin_unlock_irqrestore(&in->rx_lock, flags);
	queue_work(ibdevsim_rx_wq, &in->rx_work);
}

/*
 * The receive side of an HCA port: packets are handed over one by one
 * with bottom halves off, as from the interrupt of a real HCA, so a
 * completion handler runs the way a hardware driver calls it and the
 * softirqs it raises (NAPI) run when it returns.
 */
static void ibdevsim_rx_work(struct work_struct *work)
{
	struct ibdevsim_port *in = container_of(work, struct ibdevsim_port,
						rx_work);
	struct ibdevsim_pkt *pkt, *tmp;
	LIST_HEAD(batch);

	spin_lock_irq(&in->rx_lock);
	list_splice_init(&in->rxq, &batch);
	spin_unlock_irq(&in->rx_lock);
	list_for_each_entry_safe(pkt, tmp, &batch, list) {
		list_del_init(&pkt->list);
		local_bh_disable();
		rcu_read_lock();
		ibdevsim_hca_recv(in, pkt);
		rcu_read_unlock();
		local_bh_enable();
		cond_resched();
	}
}

/**
 * ibdevsim_hca_rx_flush() - wait for the receive side of an HCA's ports
 * @node: the HCA
 *
 * Whatever a port's receive work was handing over when this was called
 * has been handed over on return: a QP no longer reachable from the port
 * is not touched by it any more.
 *
 * Context: process; no lock held.
 */
void ibdevsim_hca_rx_flush(struct ibdevsim_node *node)
{
	int i;

	for (i = 1; i <= node->nports; i++)
		flush_work(&node->ports[i].rx_work);
}

/**
 * ibdevsim_hca_rx_stop() - stop the receive side of a departing HCA
 * @node: the HCA, its ib_device unregistered (no QP left)
 *
 * Packets still queued, and any that arrive later, are dropped.
 *
 * Context: process; no lock held.
 */
void ibdevsim_hca_rx_stop(struct ibdevsim_node *node)
{
	struct ibdevsim_pkt *pkt, *tmp;
	LIST_HEAD(list);
	int i;

	for (i = 1; i <= node->nports; i++) {
		struct ibdevsim_port *port = &node->ports[i];

		spin_lock_irq(&port->rx_lock);
		port->rx_dead = true;
		list_splice_init(&port->rxq, &list);
		spin_unlock_irq(&port->rx_lock);
		cancel_work_sync(&port->rx_work);
		cancel_delayed_work_sync(&port->trap.work);
	}
	list_for_each_entry_safe(pkt, tmp, &list, list) {
		list_del(&pkt->list);
		ibdevsim_pkt_free(pkt);
	}
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
		ibdevsim_pkt_free(pkt);
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
	DECLARE_BITMAP(ports, IBDEVSIM_MAX_PORTS + 1);
	struct ibdevsim_pkt *copy;
	unsigned int i;

	/* An RC request to a multicast LID is invalid. */
	if (pkt->rc)
		bitmap_zero(ports, IBDEVSIM_MAX_PORTS + 1);
	else
		ibdevsim_mft_lookup(node->sw->mft, IBDEVSIM_MFT_CAP,
				    node->sw->mft_top, pkt->dlid, node->nports,
				    in->num, ports);
	/* Beyond the table: the switch cannot forward it, and counts that. */
	if (pkt->dlid - IBDEVSIM_MCAST_LID_BASE >= IBDEVSIM_MFT_CAP)
		in->cnt.rcv_errors++;
	for_each_set_bit(i, ports, node->nports + 1) {
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
		ibdevsim_pkt_free(pkt);
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
	ibdevsim_pkt_free(*pktp);
	*pktp = reply;
	if (!reply)
		return NULL;
	smp = (struct ib_smp *)reply->data;
	if (reply->vl15 && smp->mgmt_class == IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE &&
	    reply->dlid != be16_to_cpu(IB_LID_PERMISSIVE)) {
		/*
		 * The SMP came LID-routed, and its answer goes back by LID:
		 * to the switch that ended the directed part, or, when it
		 * had no directed hops, straight to its requester (DrSLID),
		 * the directed part over (C14-13:3).
		 */
		if (!smp->hop_cnt) {
			smp->hop_ptr = 0;
			reply->dlid = be16_to_cpu(smp->dr_slid);
		}
		return ibdevsim_switch_lid_route(&node->ports[0], reply,
						 reply->dlid);
	}
	if (reply->vl15 && smp->mgmt_class == IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE) {
		if (ibdevsim_dr_switch_reply(smp, node->nports, &out) !=
		    IBDEVSIM_DR_FORWARD) {
			ibdevsim_pkt_free(reply);
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
 * member ports go on @walk's queue.  Node lock of @in held.
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

	ibdevsim_count(&in->cnt, false, pkt);
	if (++pkt->hops > IBDEVSIM_MAX_HOPS) {
		in->cnt.rcv_errors++;
		ibdevsim_pkt_free(pkt);
		return NULL;
	}
	if (pkt->vl15 && pkt->len >= IBDEVSIM_SMP_LEN &&
	    smp->mgmt_class == IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE) {
		bool by_lid = dlid != be16_to_cpu(IB_LID_PERMISSIVE);

		/* In a LID-routed part: switches on the way route by LID. */
		if (by_lid && !ibdevsim_port_owns_lid(&node->ports[0], dlid))
			return ibdevsim_switch_lid_route(in, pkt, dlid);
		switch (ibdevsim_dr_switch_recv(smp, in->num, node->nports,
						by_lid, &out, &dlid)) {
		case IBDEVSIM_DR_FORWARD:
			/*
			 * The directed part crosses with the permissive LIDs
			 * in the LRH, so that an answer is sent directed.
			 */
			pkt->dlid = be16_to_cpu(IB_LID_PERMISSIVE);
			pkt->slid = be16_to_cpu(IB_LID_PERMISSIVE);
			return &node->ports[out];
		case IBDEVSIM_DR_LOCAL:
			return ibdevsim_switch_local(in, pktp);
		case IBDEVSIM_DR_LID_ROUTE:
			/*
			 * A LID-routed part begins: the LRH names DrDLID (or
			 * DrSLID) and this switch, which the far end answers.
			 */
			pkt->dlid = dlid;
			pkt->slid = node->ports[0].st.lid;
			return ibdevsim_switch_lid_route(in, pkt, dlid);
		default:
			in->cnt.vl15_dropped++;
			ibdevsim_pkt_free(pkt);
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

/*
 * Walk a packet through the fabric: across @out's cable, or, when @in is
 * given, from its arrival at @in.  See ibdevsim_walk().
 */
static void ibdevsim_walk_from(struct ibdevsim_port *out,
			       struct ibdevsim_port *in,
			       struct ibdevsim_pkt *pkt)
{
	struct ibdevsim_walk walk = { .queue = LIST_HEAD_INIT(walk.queue) };
	unsigned long flags;

	RCU_LOCKDEP_WARN(!rcu_read_lock_held(), "ibdevsim walk outside RCU");
	for (;;) {
		while (in || out) {
			if (!in)
				in = ibdevsim_cable_xmit(out, pkt);
			if (!in)
				break;
			if (in->node->type == IBDEVSIM_NODE_HCA) {
				pkt->wire = true;
				ibdevsim_rx_queue(in, pkt);
				break;
			}
			spin_lock_irqsave(&in->node->lock, flags);
			out = ibdevsim_switch_recv(in, &pkt, &walk);
			spin_unlock_irqrestore(&in->node->lock, flags);
			in = NULL;
		}
		pkt = list_first_entry_or_null(&walk.queue, struct ibdevsim_pkt,
					       list);
		if (!pkt)
			break;
		list_del_init(&pkt->list);
		out = pkt->via;
		in = NULL;
	}
}

/**
 * ibdevsim_walk() - a packet crosses the fabric from a port
 * @out: the port it leaves by (an HCA's, or any port for a packet coming
 *	 off the delay queue)
 * @pkt: the packet, which the fabric owns from now on
 *
 * The packet crosses @out's cable and is walked through the switches, each
 * under its own node lock, until it reaches an HCA port, whose receive
 * side takes it in its own context, or it is dropped or delayed, or
 * leaves by a remote cable.  A multicast packet is copied at every switch
 * for each member port of its MLID, and every copy walked in turn.
 *
 * Context: RCU read lock held, no node lock; any context.
 */
void ibdevsim_walk(struct ibdevsim_port *out, struct ibdevsim_pkt *pkt)
{
	ibdevsim_walk_from(out, NULL, pkt);
}
EXPORT_SYMBOL_IF_KUNIT(ibdevsim_walk);

/**
 * ibdevsim_arrive() - a packet came in on a port over a remote cable
 * @in: the port
 * @pkt: the packet, which the fabric owns from now on
 *
 * An HCA port's receive side takes it; a switch forwards it (or its SMA
 * answers), and the walk goes on from there as for any packet.
 *
 * Context: RCU read lock held, no node lock; any context.
 */
void ibdevsim_arrive(struct ibdevsim_port *in, struct ibdevsim_pkt *pkt)
{
	ibdevsim_walk_from(NULL, in, pkt);
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
 * Context: any; takes node locks one at a time.
 */
void ibdevsim_xmit(struct ibdevsim_port *port, struct ibdevsim_pkt *pkt)
{
	struct ibdevsim_pkt *copy = NULL;
	bool own, active, discard = false;
	unsigned long flags;

	spin_lock_irqsave(&port->node->lock, flags);
	active = port->st.state == IB_PORT_ACTIVE;
	own = ibdevsim_port_owns_lid(port, pkt->dlid);
	if (own && !pkt->vl15 && !active) {
		port->cnt.xmit_discards++;
		discard = true;
	}
	spin_unlock_irqrestore(&port->node->lock, flags);
	if (discard) {
		ibdevsim_pkt_free(pkt);
		return;
	}
	/* The port's own members of a group get their copies first. */
	if (!pkt->vl15 && !pkt->rc && ibdevsim_lid_is_mcast(pkt->dlid) &&
	    pkt->dest_qpn == IBDEVSIM_MCAST_QPN && active) {
		copy = kmemdup(pkt, struct_size(pkt, data, pkt->len),
			       GFP_ATOMIC);
		if (copy) {
			INIT_LIST_HEAD(&copy->list);
			ibdevsim_rx_queue(port, copy);
		}
	}
	if (own) {
		ibdevsim_rx_queue(port, pkt);
		return;
	}
	rcu_read_lock();
	ibdevsim_walk(port, pkt);
	rcu_read_unlock();
}
