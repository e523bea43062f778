// SPDX-License-Identifier: GPL-2.0
/*
 * ibdevsim: the subnet management agent (SMA) and performance management
 * agent (PMA) of every node.
 *
 * An HCA's agents answer through the device's process_mad(), which the
 * MAD layer calls for each MAD received on QP0 and QP1 and for the SMPs
 * its own port sends to itself.  A switch's agents answer the packets the
 * fabric hands to its port 0.  Both read and change their node's state
 * under the node's lock; no agent touches another node.
 */

#include <linux/slab.h>
#include <linux/unaligned.h>
#include <rdma/ib_pma.h>

#include "ibdevsim.h"

enum ibdevsim_sma_verdict {
	IBDEVSIM_SMA_REPLY,	/* answer in the output MAD */
	IBDEVSIM_SMA_PASS,	/* not for the agent: to the QP's consumers */
	IBDEVSIM_SMA_CONSUMED,	/* taken, no answer */
};

#define IBDEVSIM_SWINFO_LEN	20

static bool ibdevsim_is_switch(const struct ibdevsim_node *node)
{
	return node->type == IBDEVSIM_NODE_SWITCH;
}

/*
 * The port an attribute modifier names: an HCA takes 0 as the port the
 * SMP came in on; a switch numbers its ports from 0.
 */
static struct ibdevsim_port *ibdevsim_sma_port(struct ibdevsim_node *node,
					       u8 in_port, u32 num)
{
	if (!ibdevsim_is_switch(node) && !num)
		num = in_port;
	if (num > node->nports || (!ibdevsim_is_switch(node) && !num))
		return NULL;
	return &node->ports[num];
}

static u16 ibdevsim_sma_portinfo(struct ibdevsim_node *node, u8 in_port,
				 struct ib_smp *smp, bool set,
				 struct ibdevsim_port **chg_port, u32 *chg)
{
	struct ibdevsim_port *port;
	struct ibdevsim_port_caps caps = {};
	bool ext;

	port = ibdevsim_sma_port(node, in_port, be32_to_cpu(smp->attr_mod));
	if (!port)
		return IB_MGMT_MAD_STATUS_INVALID_ATTRIB_VALUE;
	ext = ibdevsim_is_switch(node) && port->num;
	if (set) {
		if (ibdevsim_portinfo_apply(&port->st,
					    (struct ib_port_info *)smp->data,
					    ext, chg))
			return IB_MGMT_MAD_STATUS_INVALID_ATTRIB_VALUE;
		*chg_port = port;
	}
	caps.local_port = in_port;
	caps.is_switch_port = ext;
	caps.guid_cap = ext ? 0 : IBDEVSIM_GID_TBL_LEN;
	ibdevsim_portinfo_encode(&port->st, &caps,
				 (struct ib_port_info *)smp->data);
	return 0;
}

static u16 ibdevsim_sma_pkeys(struct ibdevsim_node *node, u8 in_port,
			      struct ib_smp *smp, bool set,
			      struct ibdevsim_port **chg_port, u32 *chg)
{
	u32 mod = be32_to_cpu(smp->attr_mod);
	u32 block = mod & 0xffff;
	struct ibdevsim_port *port;
	__be16 *wire = (__be16 *)smp->data;
	bool changed = false;
	int i;

	port = ibdevsim_sma_port(node, in_port,
				 ibdevsim_is_switch(node) ? mod >> 16 : 0);
	if (!port || block >= IBDEVSIM_PKEY_TBL_LEN / 32)
		return IB_MGMT_MAD_STATUS_INVALID_ATTRIB_VALUE;
	for (i = 0; i < 32; i++) {
		u16 *entry = &port->pkeys[block * 32 + i];

		if (set && *entry != be16_to_cpu(wire[i])) {
			*entry = be16_to_cpu(wire[i]);
			changed = true;
		}
		wire[i] = cpu_to_be16(*entry);
	}
	if (changed) {
		*chg_port = port;
		*chg |= IBDEVSIM_CHG_PKEY;
	}
	return 0;
}

static u16 ibdevsim_sma_guids(struct ibdevsim_node *node, u8 in_port,
			      struct ib_smp *smp)
{
	struct ibdevsim_port *port;
	__be64 *wire = (__be64 *)smp->data;

	port = ibdevsim_sma_port(node, in_port, 0);
	if (!port || be32_to_cpu(smp->attr_mod) != 0)
		return IB_MGMT_MAD_STATUS_INVALID_ATTRIB_VALUE;
	/* GUIDCap is 1: index 0, the port GUID, is all there is. */
	memset(smp->data, 0, IB_SMP_DATA_SIZE);
	wire[0] = cpu_to_be64(ibdevsim_port_guid(node, port->num));
	return 0;
}

static u16 ibdevsim_sma_sl2vl(struct ibdevsim_node *node, u8 in_port,
			      struct ib_smp *smp, bool set)
{
	u32 mod = be32_to_cpu(smp->attr_mod);
	struct ibdevsim_port *port;

	port = ibdevsim_sma_port(node, in_port,
				 ibdevsim_is_switch(node) ? mod & 0xff : 0);
	if (!port)
		return IB_MGMT_MAD_STATUS_INVALID_ATTRIB_VALUE;
	if (set)
		memcpy(port->sl2vl, smp->data, sizeof(port->sl2vl));
	memset(smp->data, 0, IB_SMP_DATA_SIZE);
	memcpy(smp->data, port->sl2vl, sizeof(port->sl2vl));
	return 0;
}

static u16 ibdevsim_sma_vlarb(struct ibdevsim_node *node, u8 in_port,
			      struct ib_smp *smp, bool set)
{
	u32 mod = be32_to_cpu(smp->attr_mod);
	u32 block = mod >> 16;
	struct ibdevsim_port *port;

	port = ibdevsim_sma_port(node, in_port,
				 ibdevsim_is_switch(node) ? mod & 0xffff : 0);
	if (!port || block < 1 || block > ARRAY_SIZE(port->vlarb))
		return IB_MGMT_MAD_STATUS_INVALID_ATTRIB_VALUE;
	if (set)
		memcpy(port->vlarb[block - 1], smp->data, IB_SMP_DATA_SIZE);
	memcpy(smp->data, port->vlarb[block - 1], IB_SMP_DATA_SIZE);
	return 0;
}

/* SwitchInfo: the layout of IBTA vol. 1, 14.2.5.4, byte by byte. */
static u16 ibdevsim_sma_swinfo(struct ibdevsim_node *node, struct ib_smp *smp,
			       bool set)
{
	struct ibdevsim_switch *sw = node->sw;
	u8 *d = smp->data;

	if (set) {
		u16 top = get_unaligned_be16(d + 6);
		u16 mtop = get_unaligned_be16(d + 18);

		if (top >= IBDEVSIM_LFT_CAP ||
		    (mtop && (mtop < IBDEVSIM_MCAST_LID_BASE ||
			      mtop >= IBDEVSIM_MCAST_LID_BASE +
				      IBDEVSIM_MFT_CAP)))
			return IB_MGMT_MAD_STATUS_INVALID_ATTRIB_VALUE;
		sw->lft_top = top;
		sw->mft_top = mtop;
		sw->default_port = d[8];
		sw->default_mcast_primary = d[9];
		sw->default_mcast_not_primary = d[10];
		sw->lifetime = d[11] >> 3;
		/* PortStateChange is cleared by writing one. */
		if (d[11] & 0x04)
			sw->port_state_change = false;
	}
	memset(d, 0, IB_SMP_DATA_SIZE);
	put_unaligned_be16(IBDEVSIM_LFT_CAP, d + 0);
	put_unaligned_be16(IBDEVSIM_MFT_CAP, d + 4);
	put_unaligned_be16(sw->lft_top, d + 6);
	d[8] = sw->default_port;
	d[9] = sw->default_mcast_primary;
	d[10] = sw->default_mcast_not_primary;
	d[11] = sw->lifetime << 3 | (sw->port_state_change ? 0x04 : 0);
	put_unaligned_be16(1, d + 12);		/* LIDsPerPort */
	put_unaligned_be16(0, d + 14);		/* PartitionEnforcementCap */
	put_unaligned_be16(sw->mft_top, d + 18);
	return 0;
}

static u16 ibdevsim_sma_lft(struct ibdevsim_node *node, struct ib_smp *smp,
			    bool set)
{
	u32 block = be32_to_cpu(smp->attr_mod);
	u8 *entries;

	if (block >= IBDEVSIM_LFT_CAP / IB_SMP_DATA_SIZE)
		return IB_MGMT_MAD_STATUS_INVALID_ATTRIB_VALUE;
	entries = node->sw->lft + block * IB_SMP_DATA_SIZE;
	if (set)
		memcpy(entries, smp->data, IB_SMP_DATA_SIZE);
	memcpy(smp->data, entries, IB_SMP_DATA_SIZE);
	return 0;
}

static u16 ibdevsim_sma_mft(struct ibdevsim_node *node, struct ib_smp *smp,
			    bool set)
{
	u32 mod = be32_to_cpu(smp->attr_mod);
	u32 position = mod >> 28, block = mod & 0x1ff;
	u32 npos = ibdevsim_mft_positions(node->nports);
	__be16 *wire = (__be16 *)smp->data;
	int i;

	/* Positions beyond the switch's last port are not there. */
	if (position >= npos || block >= IBDEVSIM_MFT_CAP / 32)
		return IB_MGMT_MAD_STATUS_INVALID_ATTRIB_VALUE;
	for (i = 0; i < 32; i++) {
		u16 *mask = &node->sw->mft[(block * 32 + i) * npos + position];

		if (set)
			*mask = be16_to_cpu(wire[i]);
		wire[i] = cpu_to_be16(*mask);
	}
	return 0;
}

/*
 * Answer an SMP.  @out starts as a copy of @in; on IBDEVSIM_SMA_REPLY it
 * holds the GetResp.  *@chg_port and *@chg say what a Set changed.
 */
static enum ibdevsim_sma_verdict
ibdevsim_sma_locked(struct ibdevsim_node *node, u8 in_port,
		    const struct ib_smp *in, struct ib_smp *out,
		    struct ibdevsim_port **chg_port, u32 *chg)
{
	bool sw = ibdevsim_is_switch(node);
	bool set = in->method == IB_MGMT_METHOD_SET;
	u16 status = 0;

	memcpy(out, in, sizeof(*out));
	*chg = 0;
	*chg_port = NULL;
	if (in->base_version != IB_MGMT_BASE_VERSION)
		return IBDEVSIM_SMA_PASS;
	switch (in->method) {
	case IB_MGMT_METHOD_GET:
	case IB_MGMT_METHOD_SET:
		break;
	case IB_MGMT_METHOD_TRAP_REPRESS:
		if (!sw && in_port >= 1 && in_port <= node->nports)
			ibdevsim_sma_trap_repressed_locked(&node->ports[in_port],
							   in);
		return IBDEVSIM_SMA_CONSUMED;
	case IB_MGMT_METHOD_TRAP:
	case IB_MGMT_METHOD_REPORT:
		return IBDEVSIM_SMA_PASS;
	default:
		if (in->method & IB_MGMT_METHOD_RESP)
			return IBDEVSIM_SMA_PASS;
		status = IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD;
		goto reply;
	}
	if (in->class_version != 1) {
		status = IB_MGMT_MAD_STATUS_BAD_VERSION;
		goto reply;
	}

	switch (in->attr_id) {
	case IB_SMP_ATTR_NODE_INFO:
		if (set)
			goto unsupported;
		ibdevsim_nodeinfo_encode((struct ib_node_info *)out->data,
					 sw ? RDMA_NODE_IB_SWITCH :
					      RDMA_NODE_IB_CA,
					 node->nports, node->guid,
					 ibdevsim_port_guid(node, in_port),
					 IBDEVSIM_PKEY_TBL_LEN,
					 sw ? IBDEVSIM_SW_DEVICE_ID :
					      IBDEVSIM_HCA_DEVICE_ID,
					 in_port);
		break;
	case IB_SMP_ATTR_NODE_DESC:
		if (set)
			goto unsupported;
		memset(out->data, 0, IB_SMP_DATA_SIZE);
		memcpy(out->data, node->desc,
		       min_t(size_t, sizeof(node->desc), IB_SMP_DATA_SIZE));
		break;
	case IB_SMP_ATTR_PORT_INFO:
		status = ibdevsim_sma_portinfo(node, in_port, out, set,
					       chg_port, chg);
		break;
	case IB_SMP_ATTR_PKEY_TABLE:
		status = ibdevsim_sma_pkeys(node, in_port, out, set, chg_port,
					    chg);
		break;
	case IB_SMP_ATTR_GUID_INFO:
		if (sw)
			goto unsupported;
		status = ibdevsim_sma_guids(node, in_port, out);
		break;
	case IB_SMP_ATTR_SL_TO_VL_TABLE:
		status = ibdevsim_sma_sl2vl(node, in_port, out, set);
		break;
	case IB_SMP_ATTR_VL_ARB_TABLE:
		status = ibdevsim_sma_vlarb(node, in_port, out, set);
		break;
	case IB_SMP_ATTR_SM_INFO:
		/* The SM (if one runs on this port) answers, not the SMA. */
		if (!sw)
			return IBDEVSIM_SMA_PASS;
		goto unsupported;
	case IB_SMP_ATTR_SWITCH_INFO:
		if (!sw)
			goto unsupported;
		status = ibdevsim_sma_swinfo(node, out, set);
		break;
	case IB_SMP_ATTR_LINEAR_FORWARD_TABLE:
		if (!sw)
			goto unsupported;
		status = ibdevsim_sma_lft(node, out, set);
		break;
	case IB_SMP_ATTR_MCAST_FORWARD_TABLE:
		if (!sw)
			goto unsupported;
		status = ibdevsim_sma_mft(node, out, set);
		break;
	default:
		goto unsupported;
	}
	goto reply;

unsupported:
	status = IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB;
reply:
	out->method = IB_MGMT_METHOD_GET_RESP;
	out->status = cpu_to_be16(status);
	if (in->mgmt_class == IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE)
		out->status |= IB_SMP_DIRECTION;
	return IBDEVSIM_SMA_REPLY;
}

static u32 ibdevsim_sat32(u64 v)
{
	return v > U32_MAX ? U32_MAX : v;
}

static u16 ibdevsim_sat16(u32 v)
{
	return v > U16_MAX ? U16_MAX : v;
}

static u16 ibdevsim_pma_counters(struct ibdevsim_node *node, u8 in_port,
				 struct ib_pma_mad *mad, bool set)
{
	struct ib_pma_portcounters *pc = (void *)mad->data;
	struct ibdevsim_counters *c;
	struct ibdevsim_port *port;
	u16 sel = be16_to_cpu(pc->counter_select);

	port = ibdevsim_sma_port(node, in_port, pc->port_select);
	if (!port)
		return IB_MGMT_MAD_STATUS_INVALID_ATTRIB_VALUE;
	c = &port->cnt;
	if (set) {
		if (sel & be16_to_cpu(IB_PMA_SEL_LINK_DOWNED))
			c->link_downed = 0;
		if (sel & be16_to_cpu(IB_PMA_SEL_PORT_RCV_ERRORS))
			c->rcv_errors = 0;
		if (sel & be16_to_cpu(IB_PMA_SEL_PORT_XMIT_DISCARDS))
			c->xmit_discards = 0;
		if (sel & be16_to_cpu(IB_PMA_SEL_PORT_VL15_DROPPED))
			c->vl15_dropped = 0;
		if (sel & be16_to_cpu(IB_PMA_SEL_PORT_XMIT_DATA))
			c->xmit_data = 0;
		if (sel & be16_to_cpu(IB_PMA_SEL_PORT_RCV_DATA))
			c->rcv_data = 0;
		if (sel & be16_to_cpu(IB_PMA_SEL_PORT_XMIT_PACKETS))
			c->xmit_pkts = 0;
		if (sel & be16_to_cpu(IB_PMA_SEL_PORT_RCV_PACKETS))
			c->rcv_pkts = 0;
	}
	memset(mad->data, 0, sizeof(mad->data));
	pc->port_select = port->num;
	pc->counter_select = cpu_to_be16(sel);
	pc->link_downed_counter = c->link_downed;
	pc->port_rcv_errors = cpu_to_be16(ibdevsim_sat16(c->rcv_errors));
	pc->port_xmit_discards = cpu_to_be16(ibdevsim_sat16(c->xmit_discards));
	pc->vl15_dropped = cpu_to_be16(ibdevsim_sat16(c->vl15_dropped));
	pc->port_xmit_data = cpu_to_be32(ibdevsim_sat32(c->xmit_data));
	pc->port_rcv_data = cpu_to_be32(ibdevsim_sat32(c->rcv_data));
	pc->port_xmit_packets = cpu_to_be32(ibdevsim_sat32(c->xmit_pkts));
	pc->port_rcv_packets = cpu_to_be32(ibdevsim_sat32(c->rcv_pkts));
	return 0;
}

/* Answer a PerfMgt MAD; @out starts as a copy of @in. */
static enum ibdevsim_sma_verdict
ibdevsim_pma_locked(struct ibdevsim_node *node, u8 in_port,
		    const struct ib_pma_mad *in, struct ib_pma_mad *out)
{
	struct ib_class_port_info *cpi = (void *)out->data;
	bool set = in->mad_hdr.method == IB_MGMT_METHOD_SET;
	u16 status = 0;

	memcpy(out, in, sizeof(*out));
	if (in->mad_hdr.method != IB_MGMT_METHOD_GET && !set) {
		if (in->mad_hdr.method & IB_MGMT_METHOD_RESP)
			return IBDEVSIM_SMA_PASS;
		status = IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD;
		goto reply;
	}
	if (in->mad_hdr.class_version != 1) {
		status = IB_MGMT_MAD_STATUS_BAD_VERSION;
		goto reply;
	}
	switch (in->mad_hdr.attr_id) {
	case IB_PMA_CLASS_PORT_INFO:
		if (set) {
			status = IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB;
			break;
		}
		memset(out->data, 0, sizeof(out->data));
		cpi->base_version = IB_MGMT_BASE_VERSION;
		cpi->class_version = 1;
		cpi->cap_mask2_resp_time = cpu_to_be32(IBDEVSIM_RESP_TIME);
		break;
	case IB_PMA_PORT_COUNTERS:
		status = ibdevsim_pma_counters(node, in_port, out, set);
		break;
	default:
		status = IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB;
		break;
	}
reply:
	out->mad_hdr.method = IB_MGMT_METHOD_GET_RESP;
	out->mad_hdr.status = cpu_to_be16(status);
	return IBDEVSIM_SMA_REPLY;
}

/**
 * ibdevsim_process_mad() - the HCA's SMA and PMA
 * @ibdev: the device
 * @flags: IB_MAD_IGNORE_* flags (M_Key is not checked)
 * @port_num: the port the MAD came in on
 * @in_wc: its receive completion
 * @in_grh: its GRH, if any
 * @in: the MAD
 * @out: where the answer goes
 * @out_size: size of @out; set to the answer's size
 * @out_pkey_index: unused (OPA only)
 *
 * SMPs for the SMA (Get and Set of NodeInfo, NodeDescription, PortInfo,
 * P_KeyTable, GUIDInfo, SLtoVLMappingTable and VLArbitrationTable) and
 * PerfMgt Get and Set of ClassPortInfo and PortCounters are answered
 * here; SMInfo, responses and traps go on to the agents on QP0 and QP1.
 * A Set that changes the port raises the matching IB events.
 *
 * Return: IB_MAD_RESULT_SUCCESS | IB_MAD_RESULT_REPLY with an answer in
 * @out, IB_MAD_RESULT_SUCCESS for MADs the agents should see,
 * IB_MAD_RESULT_SUCCESS | IB_MAD_RESULT_CONSUMED for MADs taken without
 * an answer, IB_MAD_RESULT_FAILURE for a bad port.
 */
int ibdevsim_process_mad(struct ib_device *ibdev, int flags, u32 port_num,
			 const struct ib_wc *in_wc, const struct ib_grh *in_grh,
			 const struct ib_mad *in, struct ib_mad *out,
			 size_t *out_size, u16 *out_pkey_index)
{
	struct ibdevsim_node *node = to_hca(ibdev)->node;
	enum ibdevsim_sma_verdict verdict;
	struct ibdevsim_port *chg_port = NULL;
	unsigned long irqflags;
	u32 chg = 0;

	if (port_num < 1 || port_num > node->nports ||
	    *out_size < sizeof(struct ib_mad))
		return IB_MAD_RESULT_FAILURE;
	if (in->mad_hdr.base_version != IB_MGMT_BASE_VERSION)
		return IB_MAD_RESULT_SUCCESS;

	spin_lock_irqsave(&node->lock, irqflags);
	switch (in->mad_hdr.mgmt_class) {
	case IB_MGMT_CLASS_SUBN_LID_ROUTED:
	case IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE:
		verdict = ibdevsim_sma_locked(node, port_num,
					      (const struct ib_smp *)in,
					      (struct ib_smp *)out,
					      &chg_port, &chg);
		break;
	case IB_MGMT_CLASS_PERF_MGMT:
		verdict = ibdevsim_pma_locked(node, port_num,
					      (const struct ib_pma_mad *)in,
					      (struct ib_pma_mad *)out);
		break;
	default:
		verdict = IBDEVSIM_SMA_PASS;
		break;
	}
	spin_unlock_irqrestore(&node->lock, irqflags);
	ibdevsim_port_events(chg_port, chg);

	switch (verdict) {
	case IBDEVSIM_SMA_REPLY:
		*out_size = sizeof(struct ib_mad);
		return IB_MAD_RESULT_SUCCESS | IB_MAD_RESULT_REPLY;
	case IBDEVSIM_SMA_CONSUMED:
		return IB_MAD_RESULT_SUCCESS | IB_MAD_RESULT_CONSUMED;
	default:
		return IB_MAD_RESULT_SUCCESS;
	}
}

/* Transaction IDs of the traps the SMAs of all HCAs send. */
static atomic_t ibdevsim_trap_tid = ATOMIC_INIT(0);

/* Fill in what every generic notice (Trap) SMP carries. */
static void ibdevsim_trap_init(struct ib_smp *smp, u8 type, __be16 producer,
			       u16 trap_num)
{
	struct ib_mad_notice_attr *ntc = (void *)smp->data;

	memset(smp, 0, sizeof(*smp));
	smp->base_version = IB_MGMT_BASE_VERSION;
	smp->mgmt_class = IB_MGMT_CLASS_SUBN_LID_ROUTED;
	smp->class_version = 1;
	smp->method = IB_MGMT_METHOD_TRAP;
	smp->tid = cpu_to_be64(0x1dc0000000000000ULL |
			       (u32)atomic_inc_return(&ibdevsim_trap_tid));
	smp->attr_id = IB_SMP_ATTR_NOTICE;
	ntc->generic_type = type;
	ntc->prod_type_lsb = producer;
	ntc->trap_num = cpu_to_be16(trap_num);
}

/*
 * How long an HCA port's SMA waits for the TrapRepress before it sends
 * its trap again: 4.096 us << SubnetTimeOut (opensm's 18: 1.07 s), at
 * least 10 ms and at most 8.6 s (SubnetTimeOut 21).
 */
static unsigned long ibdevsim_trap_interval(u8 subnet_timeout)
{
	u64 us = 4ULL << min_t(u8, subnet_timeout, 21);

	return max(usecs_to_jiffies(us), msecs_to_jiffies(10));
}

/*
 * Make @smp the port's pending trap and send its first copy now (the
 * work does).  Node lock of @port held.
 */
static void ibdevsim_trap_arm_locked(struct ibdevsim_port *port)
{
	port->trap.pending = true;
	port->trap.sent = 0;
	mod_delayed_work(ibdevsim_wq, &port->trap.work, 0);
}

/**
 * ibdevsim_trap_work() - send an HCA port's pending trap, or its next copy
 * @work: &ibdevsim_trap.work of the port
 *
 * The trap goes LID-routed on VL15 to the SM the port knows now (MasterSMLID
 * and MasterSMSL of its PortInfo), with the port's LID and M_Key, and the
 * next copy is due after ibdevsim_trap_interval().  Copies stop when the
 * SM represses the trap, when the port leaves ACTIVE or loses its SM, and
 * after %IBDEVSIM_TRAP_COPIES copies (an SM that never answers is not
 * flooded).  A copy carries the TID of the first: the SM knows it for a
 * repeat.
 *
 * Context: process (ibdevsim_wq); takes the port's node lock.
 */
void ibdevsim_trap_work(struct work_struct *work)
{
	struct ibdevsim_port *port = container_of(to_delayed_work(work),
						  struct ibdevsim_port,
						  trap.work);
	struct ib_mad_notice_attr *ntc;
	unsigned long flags, delay = 0;
	struct ibdevsim_pkt *pkt;
	struct ib_smp *smp;
	bool send;

	pkt = ibdevsim_pkt_alloc(sizeof(*smp), GFP_KERNEL);
	if (!pkt) {
		/* The trap stays pending: try again in a second. */
		queue_delayed_work(ibdevsim_wq, &port->trap.work, HZ);
		return;
	}
	smp = (struct ib_smp *)pkt->data;
	ntc = (struct ib_mad_notice_attr *)smp->data;
	spin_lock_irqsave(&port->node->lock, flags);
	send = port->trap.pending && port->st.state == IB_PORT_ACTIVE &&
	       port->st.lid && port->st.sm_lid &&
	       port->trap.sent < IBDEVSIM_TRAP_COPIES;
	if (send) {
		memcpy(smp, &port->trap.smp, sizeof(*smp));
		smp->mkey = cpu_to_be64(port->st.mkey);
		ntc->issuer_lid = cpu_to_be16(port->st.lid);
		pkt->slid = port->st.lid;
		pkt->dlid = port->st.sm_lid;
		pkt->sl = port->st.sm_sl;
		pkt->vl15 = true;
		pkt->pkey = IB_DEFAULT_PKEY_FULL;
		port->trap.sent++;
		delay = ibdevsim_trap_interval(port->st.subnet_timeout);
	} else {
		port->trap.pending = false;
	}
	spin_unlock_irqrestore(&port->node->lock, flags);
	if (!send) {
		kfree(pkt);
		return;
	}
	ibdevsim_xmit(port, pkt);
	queue_delayed_work(ibdevsim_wq, &port->trap.work, delay);
}

/**
 * ibdevsim_sma_trap_repressed_locked() - the SM represses a trap
 * @port: the HCA port the TrapRepress came in on
 * @smp: the TrapRepress
 *
 * A TrapRepress with the TID of the port's pending trap ends its copies;
 * any other is ignored.
 *
 * Context: the port's node lock held.
 */
void ibdevsim_sma_trap_repressed_locked(struct ibdevsim_port *port,
					const struct ib_smp *smp)
{
	if (!port->trap.pending || smp->tid != port->trap.smp.tid)
		return;
	port->trap.pending = false;
	cancel_delayed_work(&port->trap.work);
}

/**
 * ibdevsim_sma_bad_pkey_locked() - raise Trap 257 (Bad P_Key)
 * @port: the HCA port that refused @pkt for its P_Key
 * @pkt: the packet (its P_KeyViolations count is the caller's)
 *
 * The port's SMA tells the SM which packet it refused: source and
 * destination LID, the P_Key, SL and QPs, and the GIDs when it carried a
 * GRH, in a security trap repeated until the SM represses it.  While a
 * trap of the port is pending, further violations are only counted, as
 * they are on a port whose SM is unknown.
 *
 * Context: the port's node lock held.
 */
void ibdevsim_sma_bad_pkey_locked(struct ibdevsim_port *port,
				  const struct ibdevsim_pkt *pkt)
{
	struct ib_mad_notice_attr *ntc = (void *)port->trap.smp.data;

	if (port->trap.pending || !port->st.sm_lid)
		return;
	ibdevsim_trap_init(&port->trap.smp, IB_NOTICE_TYPE_SECURITY,
			   IB_NOTICE_PROD_CA, 257);
	ntc->details.ntc_257_258.lid1 = cpu_to_be16(pkt->slid);
	ntc->details.ntc_257_258.lid2 = cpu_to_be16(pkt->dlid);
	ntc->details.ntc_257_258.key = cpu_to_be32(pkt->pkey);
	/* An RC packet off a remote cable names no source QP: 0. */
	ntc->details.ntc_257_258.sl_qp1 =
		cpu_to_be32((u32)pkt->sl << 28 |
			    (pkt->src_qpn == IBDEVSIM_QPN_UNKNOWN ? 0 :
			     pkt->src_qpn & 0xffffff));
	ntc->details.ntc_257_258.qp2 = cpu_to_be32(pkt->dest_qpn);
	if (pkt->has_grh) {
		/* Bit 7 of the details' first byte: the GIDs are valid. */
		ntc->details.ntc_257_258.reserved = cpu_to_be16(0x8000);
		ntc->details.ntc_257_258.gid1 = pkt->grh.sgid;
		ntc->details.ntc_257_258.gid2 = pkt->grh.dgid;
	}
	ibdevsim_trap_arm_locked(port);
}

/**
 * ibdevsim_sma_trap144() - tell the SM that a port's capabilities changed
 * @port: an HCA port whose CapabilityMask has just changed
 *
 * The port's SMA sends Trap 144 (LocalChangesTrap) with the new mask to
 * the SM, as an HCA does when a ULP sets a capability bit (ib_srpt setting
 * IsDeviceManagementSupported, say): the SM then sweeps and the SA lists
 * the capability, and subscribers to the trap hear of it.  It replaces a
 * trap still pending and is repeated until the SM represses it.  Only an
 * ACTIVE port with an SM LID sends one; an SM that has not yet brought
 * the port up reads PortInfo when it does.
 *
 * Context: process context; takes the port's node lock.
 */
void ibdevsim_sma_trap144(struct ibdevsim_port *port)
{
	struct ib_mad_notice_attr *ntc = (void *)port->trap.smp.data;
	unsigned long flags;

	spin_lock_irqsave(&port->node->lock, flags);
	if (port->st.state == IB_PORT_ACTIVE && port->st.lid &&
	    port->st.sm_lid) {
		ibdevsim_trap_init(&port->trap.smp, IB_NOTICE_TYPE_INFO,
				   IB_NOTICE_PROD_CA, 144);
		ntc->details.ntc_144.lid = cpu_to_be16(port->st.lid);
		ntc->details.ntc_144.new_cap_mask =
			cpu_to_be32(port->st.cap_mask);
		ibdevsim_trap_arm_locked(port);
	}
	spin_unlock_irqrestore(&port->node->lock, flags);
}

/*
 * A generic notice (Trap) SMP in a packet, for a switch's trap; the
 * caller fills in the issuer and the details.
 */
static struct ibdevsim_pkt *ibdevsim_trap_alloc(u8 type, __be16 producer,
						u16 trap_num)
{
	struct ibdevsim_pkt *pkt;

	pkt = ibdevsim_pkt_alloc(sizeof(struct ib_smp), GFP_KERNEL);
	if (!pkt)
		return NULL;
	ibdevsim_trap_init((struct ib_smp *)pkt->data, type, producer,
			   trap_num);
	pkt->vl15 = true;
	pkt->pkey = IB_DEFAULT_PKEY_FULL;
	return pkt;
}

/**
 * ibdevsim_sma_trap128() - tell the SM that a switch port's link changed
 * @node: a switch one of whose ports just trained or went down
 *
 * The switch's SMA sends Trap 128 (link state of a port changed) with its
 * LID to the SM from its management port, LID-routed on VL15 through its
 * own forwarding table, as a switch does when a cable is plugged or
 * pulled: the SM then sweeps at once rather than at its next sweep.  Only
 * a switch the SM has given a LID and its own LID (MasterSMLID) sends
 * one; the SM's TrapRepress is consumed and the trap is not repeated.
 *
 * Context: process context, no node lock held; takes @node's lock.
 */
void ibdevsim_sma_trap128(struct ibdevsim_node *node)
{
	struct ibdevsim_port *port0 = &node->ports[0];
	struct ib_mad_notice_attr *ntc;
	struct ibdevsim_pkt *pkt;
	struct ib_smp *smp;
	unsigned long flags;
	int out = 0;

	if (node->type != IBDEVSIM_NODE_SWITCH || READ_ONCE(node->gone))
		return;
	pkt = ibdevsim_trap_alloc(IB_NOTICE_TYPE_URGENT,
				  IB_NOTICE_PROD_SWITCH, 128);
	if (!pkt)
		return;
	smp = (struct ib_smp *)pkt->data;
	ntc = (struct ib_mad_notice_attr *)smp->data;
	spin_lock_irqsave(&node->lock, flags);
	if (port0->st.lid && port0->st.sm_lid)
		out = ibdevsim_lft_lookup(node->sw->lft, IBDEVSIM_LFT_CAP,
					  node->sw->lft_top, port0->st.sm_lid,
					  node->nports, 0);
	if (out > 0) {
		smp->mkey = cpu_to_be64(port0->st.mkey);
		ntc->issuer_lid = cpu_to_be16(port0->st.lid);
		/* DataDetails of trap 128: the switch's LID, first. */
		put_unaligned_be16(port0->st.lid,
				   ntc->details.raw_data.details);
		pkt->slid = port0->st.lid;
		pkt->dlid = port0->st.sm_lid;
		pkt->sl = port0->st.sm_sl;
	}
	spin_unlock_irqrestore(&node->lock, flags);
	if (out <= 0) {
		kfree(pkt);
		return;
	}
	rcu_read_lock();
	ibdevsim_walk(&node->ports[out], pkt);
	rcu_read_unlock();
}

/**
 * ibdevsim_switch_sma_locked() - a switch's SMA or PMA answers a packet
 * @in: the port the packet came in on
 * @pkt: the packet (an SMP, or a PerfMgt MAD to QP1)
 *
 * Context: the switch's node lock held.
 * Return: the answer, addressed back to the sender (the caller routes it),
 * or NULL when there is none.
 */
struct ibdevsim_pkt *ibdevsim_switch_sma_locked(struct ibdevsim_port *in,
						const struct ibdevsim_pkt *pkt)
{
	const struct ib_mad_hdr *hdr = (const void *)pkt->data;
	struct ibdevsim_node *node = in->node;
	enum ibdevsim_sma_verdict verdict;
	struct ibdevsim_port *chg_port;
	struct ibdevsim_pkt *reply;
	u32 chg;

	if (pkt->len < sizeof(struct ib_mad) ||
	    hdr->base_version != IB_MGMT_BASE_VERSION)
		return NULL;
	reply = ibdevsim_pkt_alloc(sizeof(struct ib_mad), GFP_ATOMIC);
	if (!reply)
		return NULL;
	if (pkt->vl15 && pkt->dest_qpn == 0 &&
	    (hdr->mgmt_class == IB_MGMT_CLASS_SUBN_LID_ROUTED ||
	     hdr->mgmt_class == IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE))
		verdict = ibdevsim_sma_locked(node, in->num,
					      (const void *)pkt->data,
					      (void *)reply->data,
					      &chg_port, &chg);
	else if (!pkt->vl15 && pkt->dest_qpn == 1 &&
		 hdr->mgmt_class == IB_MGMT_CLASS_PERF_MGMT)
		verdict = ibdevsim_pma_locked(node, in->num,
					      (const void *)pkt->data,
					      (void *)reply->data);
	else
		verdict = IBDEVSIM_SMA_CONSUMED;
	if (verdict != IBDEVSIM_SMA_REPLY) {
		kfree(reply);
		return NULL;
	}
	reply->vl15 = pkt->vl15;
	reply->sl = pkt->sl;
	reply->slid = node->ports[0].st.lid;
	/*
	 * A DR SMP's answer goes back along its return path, unless the
	 * SMP came LID-routed (the end of a LID-routed part): then back to
	 * whoever sent it that way.
	 */
	reply->dlid = hdr->mgmt_class == IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE &&
		      pkt->dlid == be16_to_cpu(IB_LID_PERMISSIVE) ?
		      be16_to_cpu(IB_LID_PERMISSIVE) : pkt->slid;
	reply->src_qpn = pkt->dest_qpn;
	reply->dest_qpn = pkt->src_qpn;
	reply->qkey = IB_QP1_QKEY;
	reply->pkey = pkt->pkey;
	return reply;
}
