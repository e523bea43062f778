// SPDX-License-Identifier: GPL-2.0
/*
 * ibdevsim: the rules of the wire formats, with no state of their own.
 *
 * Directed-route hop processing at a switch (IBTA vol. 1, 14.2.2), the
 * linear and multicast forwarding table lookups, the rules of multicast
 * attachments and the PortInfo and NodeInfo attribute
 * layouts.  Nothing here takes a lock or touches the fabric, so that the
 * KUnit suite can drive it with hand-made SMPs.
 */

#include <linux/bitmap.h>
#include <linux/module.h>
#include <kunit/visibility.h>
#include <rdma/ib_pack.h>

#include "ibdevsim.h"

static bool ibdevsim_path_port_ok(u8 port, u8 nports)
{
	return port >= 1 && port <= nports;
}

/**
 * ibdevsim_dr_switch_recv() - a switch receives a directed-route SMP
 * @smp: the SMP; its hop pointer and return path are updated
 * @in_port: the port it came in on
 * @nports: the switch's number of external ports
 * @by_lid: it reached the switch LID-routed, addressed to one of its LIDs
 *	    (the end of a LID-routed part), rather than to the permissive LID
 * @out_port: where to send it, for %IBDEVSIM_DR_FORWARD
 * @lid: the LID to route it to, for %IBDEVSIM_DR_LID_ROUTE
 *
 * An outbound SMP (direction bit clear) arriving in the middle of its
 * initial path has its return path noted and moves on along the initial
 * path; at the end of the path it is for this switch's SMA, unless a
 * LID-routed part follows (DrDLID not permissive).  A returning SMP moves
 * back along the return path; a switch holds no SM, so a returning SMP
 * whose path ends here is discarded unless a LID-routed part follows
 * (DrSLID not permissive).
 *
 * The LID-routed parts (IBA 14.2.2): an outbound SMP LID-routed to the
 * switch from its requester (DrSLID) with the pointer at 0 starts its
 * directed part here, as its requester would (C14-9:1); and a returning
 * SMP LID-routed back here from the node at the end of its outbound
 * LID-routed part (DrDLID), pointer at hop count + 1, starts back along
 * the return path here (C14-13:1).
 *
 * Return: what to do with the SMP.
 */
enum ibdevsim_dr_action ibdevsim_dr_switch_recv(struct ib_smp *smp,
						u8 in_port, u8 nports,
						bool by_lid, u8 *out_port,
						u16 *lid)
{
	u8 ptr = smp->hop_ptr;
	u8 cnt = smp->hop_cnt;

	if (cnt >= IB_SMP_MAX_PATH_HOPS)
		return IBDEVSIM_DR_DISCARD;

	if (!ib_get_smp_direction(smp)) {
		/*
		 * The directed part starts here, after a LID-routed part
		 * from a requester that the answer can go back to.
		 */
		if (cnt && !ptr && by_lid &&
		    smp->dr_slid != IB_LID_PERMISSIVE) {
			smp->hop_ptr = 1;
			if (!ibdevsim_path_port_ok(smp->initial_path[1], nports))
				return IBDEVSIM_DR_DISCARD;
			*out_port = smp->initial_path[1];
			return IBDEVSIM_DR_FORWARD;
		}
		/* Otherwise the hop before us must have moved the pointer on. */
		if (cnt && !ptr)
			return IBDEVSIM_DR_DISCARD;
		if (ptr < cnt) {
			smp->return_path[ptr] = in_port;
			smp->hop_ptr = ++ptr;
			if (!ibdevsim_path_port_ok(smp->initial_path[ptr], nports))
				return IBDEVSIM_DR_DISCARD;
			*out_port = smp->initial_path[ptr];
			return IBDEVSIM_DR_FORWARD;
		}
		if (ptr == cnt) {
			if (cnt)
				smp->return_path[ptr] = in_port;
			smp->hop_ptr = ptr + 1;
			if (smp->dr_dlid == IB_LID_PERMISSIVE)
				return IBDEVSIM_DR_LOCAL;
			*lid = be16_to_cpu(smp->dr_dlid);
			return IBDEVSIM_DR_LID_ROUTE;
		}
		/* Pointer one past the count: the path ended at us. */
		return ptr == cnt + 1 ? IBDEVSIM_DR_LOCAL : IBDEVSIM_DR_DISCARD;
	}

	/*
	 * Returning: the sender must have moved the pointer back, unless
	 * the answer came LID-routed from the end of the outbound path.
	 */
	if (cnt && ptr == cnt + 1) {
		if (!by_lid)
			return IBDEVSIM_DR_DISCARD;
		smp->hop_ptr = cnt;
		if (!ibdevsim_path_port_ok(smp->return_path[cnt], nports))
			return IBDEVSIM_DR_DISCARD;
		*out_port = smp->return_path[cnt];
		return IBDEVSIM_DR_FORWARD;
	}
	if (ptr >= 2 && ptr <= cnt) {
		smp->hop_ptr = --ptr;
		if (!ibdevsim_path_port_ok(smp->return_path[ptr], nports))
			return IBDEVSIM_DR_DISCARD;
		*out_port = smp->return_path[ptr];
		return IBDEVSIM_DR_FORWARD;
	}
	if (ptr == 1) {
		smp->hop_ptr = 0;
		if (smp->dr_slid == IB_LID_PERMISSIVE)
			return IBDEVSIM_DR_DISCARD;
		*lid = be16_to_cpu(smp->dr_slid);
		return IBDEVSIM_DR_LID_ROUTE;
	}
	return IBDEVSIM_DR_DISCARD;
}
EXPORT_SYMBOL_IF_KUNIT(ibdevsim_dr_switch_recv);

/**
 * ibdevsim_dr_switch_reply() - a switch's SMA sends its answer back
 * @smp: the answer (direction bit set), hop pointer as the request left it
 * @nports: the switch's number of external ports
 * @out_port: where to send it
 *
 * Return: %IBDEVSIM_DR_FORWARD with @out_port set, or
 * %IBDEVSIM_DR_DISCARD when the return path is unusable.
 */
enum ibdevsim_dr_action ibdevsim_dr_switch_reply(struct ib_smp *smp,
						 u8 nports, u8 *out_port)
{
	u8 cnt = smp->hop_cnt;

	if (!ib_get_smp_direction(smp) || !cnt ||
	    cnt >= IB_SMP_MAX_PATH_HOPS || smp->hop_ptr != cnt + 1)
		return IBDEVSIM_DR_DISCARD;
	smp->hop_ptr = cnt;
	if (!ibdevsim_path_port_ok(smp->return_path[cnt], nports))
		return IBDEVSIM_DR_DISCARD;
	*out_port = smp->return_path[cnt];
	return IBDEVSIM_DR_FORWARD;
}
EXPORT_SYMBOL_IF_KUNIT(ibdevsim_dr_switch_reply);

/**
 * ibdevsim_lft_lookup() - where a switch sends a LID-routed packet
 * @lft: the linear forwarding table (one port number per LID)
 * @cap: entries in @lft (LinearFDBCap)
 * @top: LinearFDBTop, the highest LID the table is valid for
 * @dlid: the packet's destination LID
 * @nports: the switch's number of external ports
 * @in_port: the port the packet came in on
 *
 * Return: the output port, 0 for the switch's own port 0, or -1 when the
 * packet is dropped: unicast LID above @top or the capacity, no entry
 * (255 or a port the switch lacks), or an entry that sends it back where
 * it came from.
 */
int ibdevsim_lft_lookup(const u8 *lft, u32 cap, u16 top, u16 dlid,
			u8 nports, u8 in_port)
{
	u8 port;

	if (!dlid || dlid >= IBDEVSIM_MCAST_LID_BASE || dlid >= cap ||
	    dlid > top)
		return -1;
	port = lft[dlid];
	if (port > nports)
		return -1;
	if (port && port == in_port)
		return -1;
	return port;
}
EXPORT_SYMBOL_IF_KUNIT(ibdevsim_lft_lookup);

/**
 * ibdevsim_portinfo_encode() - fill a PortInfo attribute
 * @st: the port's state
 * @caps: the fixed capabilities and the port the SMP came in on
 * @pi: the 64-byte attribute to fill
 */
void ibdevsim_portinfo_encode(const struct ibdevsim_port_state *st,
			      const struct ibdevsim_port_caps *caps,
			      struct ib_port_info *pi)
{
	memset(pi, 0, sizeof(*pi));
	pi->mkey = cpu_to_be64(st->mkey);
	pi->gid_prefix = cpu_to_be64(st->gid_prefix);
	pi->lid = cpu_to_be16(st->lid);
	pi->sm_lid = cpu_to_be16(st->sm_lid);
	pi->cap_mask = cpu_to_be32(st->cap_mask);
	pi->mkey_lease_period = cpu_to_be16(st->mkey_lease);
	pi->local_port_num = caps->local_port;
	pi->link_width_enabled = st->width_enabled;
	pi->link_width_supported = IBDEVSIM_WIDTH_SUPPORTED;
	pi->link_width_active = IBDEVSIM_WIDTH_ACTIVE;
	pi->linkspeed_portstate = IBDEVSIM_SPEED_SUPPORTED << 4 | st->state;
	pi->portphysstate_linkdown = st->phys_state << 4 |
				     st->link_down_default;
	pi->mkeyprot_resv_lmc = st->mkey_protect << 6 | st->lmc;
	pi->linkspeedactive_enabled = IBDEVSIM_SPEED_ACTIVE << 4 |
				      st->speed_enabled;
	pi->neighbormtu_mastersmsl = st->neighbor_mtu << 4 | st->sm_sl;
	pi->vlcap_inittype = IBDEVSIM_VL_CAP << 4;
	pi->vl_high_limit = st->vl_high_limit;
	pi->vl_arb_high_cap = 8;
	pi->vl_arb_low_cap = 8;
	pi->inittypereply_mtucap = IBDEVSIM_MTU_CAP;
	pi->vlstallcnt_hoqlife = st->vl_stall << 5 | st->hoq_life;
	pi->operationalvl_pei_peo_fpi_fpo = st->op_vls << 4 | st->enforcement;
	pi->mkey_violations = cpu_to_be16(st->mkey_violations);
	pi->pkey_violations = cpu_to_be16(st->pkey_violations);
	pi->qkey_violations = cpu_to_be16(st->qkey_violations);
	pi->guid_cap = caps->guid_cap;
	pi->clientrereg_resv_subnetto = st->mcast_trap_suppress << 5 |
					st->subnet_timeout;
	pi->resv_resptimevalue = IBDEVSIM_RESP_TIME;
}
EXPORT_SYMBOL_IF_KUNIT(ibdevsim_portinfo_encode);

/* The logical state a Set of PortInfo.PortState leads to, or 0 if invalid. */
static u8 ibdevsim_next_state(u8 cur, u8 phys, u8 req)
{
	switch (req) {
	case 0:
		return cur;
	case IB_PORT_DOWN:
		/* The link goes down and trains again if it can. */
		return phys == IB_PORT_PHYS_STATE_LINK_UP ? IB_PORT_INIT :
							    IB_PORT_DOWN;
	case IB_PORT_ARMED:
		return cur == IB_PORT_INIT || cur == IB_PORT_ARMED ?
		       IB_PORT_ARMED : 0;
	case IB_PORT_ACTIVE:
		return cur == IB_PORT_ARMED || cur == IB_PORT_ACTIVE ?
		       IB_PORT_ACTIVE : 0;
	default:
		return 0;
	}
}

/**
 * ibdevsim_portinfo_apply() - apply a SubnSet(PortInfo) to a port
 * @st: the port's state, changed only when the whole attribute is valid
 * @pi: the attribute the SM sent
 * @is_switch_port: an external switch port (LID, M_Key and SM fields are
 *	port 0's, and ignored here)
 * @changes: set to the IBDEVSIM_CHG_* bits of what changed
 *
 * Return: 0, or -EINVAL when a field is invalid (a state transition the
 * port cannot make, a multicast LID, an MTU, width, speed or VL count
 * beyond the port's capabilities; zero in those fields means no change);
 * the caller answers with status
 * "invalid attribute value".
 */
int ibdevsim_portinfo_apply(struct ibdevsim_port_state *st,
			    const struct ib_port_info *pi,
			    bool is_switch_port, u32 *changes)
{
	struct ibdevsim_port_state n = *st;
	u8 width = pi->link_width_enabled;
	u8 speed = pi->linkspeedactive_enabled & 0xf;
	u8 lddef = pi->portphysstate_linkdown & 0xf;
	u8 mtu = pi->neighbormtu_mastersmsl >> 4;
	u8 opvls = pi->operationalvl_pei_peo_fpi_fpo >> 4;
	u32 chg = 0;

	*changes = 0;
	if (!is_switch_port) {
		n.mkey = be64_to_cpu(pi->mkey);
		n.gid_prefix = be64_to_cpu(pi->gid_prefix);
		n.lid = be16_to_cpu(pi->lid);
		n.sm_lid = be16_to_cpu(pi->sm_lid);
		n.mkey_lease = be16_to_cpu(pi->mkey_lease_period);
		n.lmc = pi->mkeyprot_resv_lmc & 7;
		n.mkey_protect = pi->mkeyprot_resv_lmc >> 6;
		n.sm_sl = pi->neighbormtu_mastersmsl & 0xf;
		n.subnet_timeout = pi->clientrereg_resv_subnetto & 0x1f;
		n.mcast_trap_suppress = (pi->clientrereg_resv_subnetto >> 5) &
					3;
		if (n.lid >= IBDEVSIM_MCAST_LID_BASE ||
		    n.sm_lid >= IBDEVSIM_MCAST_LID_BASE)
			return -EINVAL;
	}

	n.state = ibdevsim_next_state(st->state, st->phys_state,
				      pi->linkspeed_portstate & 0xf);
	if (!n.state)
		return -EINVAL;
	/*
	 * PortPhysicalState is not acted on (links follow their cables):
	 * any value is taken, as tools send back what a Get returned.
	 */
	if (lddef > IB_PORT_PHYS_STATE_POLLING)
		return -EINVAL;
	if (lddef)
		n.link_down_default = lddef;
	if (width == 0xff)
		n.width_enabled = IBDEVSIM_WIDTH_SUPPORTED;
	else if (width & ~IBDEVSIM_WIDTH_SUPPORTED)
		return -EINVAL;
	else if (width)
		n.width_enabled = width;
	if (speed == 0xf)
		n.speed_enabled = IBDEVSIM_SPEED_SUPPORTED;
	else if (speed & ~IBDEVSIM_SPEED_SUPPORTED)
		return -EINVAL;
	else if (speed)
		n.speed_enabled = speed;
	if (mtu > IBDEVSIM_MTU_CAP)
		return -EINVAL;
	if (mtu)
		n.neighbor_mtu = mtu;
	if (opvls > IBDEVSIM_VL_CAP)
		return -EINVAL;
	if (opvls)
		n.op_vls = opvls;
	n.vl_high_limit = pi->vl_high_limit;
	n.enforcement = pi->operationalvl_pei_peo_fpi_fpo & 0xf;
	n.hoq_life = pi->vlstallcnt_hoqlife & 0x1f;
	n.vl_stall = pi->vlstallcnt_hoqlife >> 5;
	n.mkey_violations = be16_to_cpu(pi->mkey_violations);
	n.pkey_violations = be16_to_cpu(pi->pkey_violations);
	n.qkey_violations = be16_to_cpu(pi->qkey_violations);

	if (n.lid != st->lid || n.lmc != st->lmc)
		chg |= IBDEVSIM_CHG_LID;
	if (n.sm_lid != st->sm_lid || n.sm_sl != st->sm_sl)
		chg |= IBDEVSIM_CHG_SM;
	if (n.gid_prefix != st->gid_prefix)
		chg |= IBDEVSIM_CHG_GID;
	if (n.state != st->state) {
		chg |= IBDEVSIM_CHG_STATE;
		if (n.state == IB_PORT_ACTIVE)
			chg |= IBDEVSIM_CHG_ACTIVE;
		else if (st->state == IB_PORT_ACTIVE)
			chg |= IBDEVSIM_CHG_ERR;
	}
	if (!is_switch_port && (pi->clientrereg_resv_subnetto & 0x80))
		chg |= IBDEVSIM_CHG_REREG;

	*st = n;
	*changes = chg;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(ibdevsim_portinfo_apply);

/**
 * ibdevsim_nodeinfo_encode() - fill a NodeInfo attribute
 * @ni: the attribute
 * @node_type: 1 (channel adapter) or 2 (switch)
 * @nports: number of external ports
 * @guid: node GUID, also the system image GUID
 * @port_guid: GUID of the port the SMP came in on
 * @partition_cap: P_Key table entries
 * @device_id: DeviceID
 * @local_port: the port the SMP came in on
 */
void ibdevsim_nodeinfo_encode(struct ib_node_info *ni, u8 node_type,
			      u8 nports, u64 guid, u64 port_guid,
			      u16 partition_cap, u16 device_id, u8 local_port)
{
	memset(ni, 0, sizeof(*ni));
	ni->base_version = IB_MGMT_BASE_VERSION;
	ni->class_version = 1;
	ni->node_type = node_type;
	ni->num_ports = nports;
	ni->sys_guid = cpu_to_be64(guid);
	ni->node_guid = cpu_to_be64(guid);
	ni->port_guid = cpu_to_be64(port_guid);
	ni->partition_cap = cpu_to_be16(partition_cap);
	ni->device_id = cpu_to_be16(device_id);
	ni->revision = cpu_to_be32(1);
	ni->local_port_num = local_port;
	ni->vendor_id[0] = (IBDEVSIM_VENDOR_ID >> 16) & 0xff;
	ni->vendor_id[1] = (IBDEVSIM_VENDOR_ID >> 8) & 0xff;
	ni->vendor_id[2] = IBDEVSIM_VENDOR_ID & 0xff;
}
EXPORT_SYMBOL_IF_KUNIT(ibdevsim_nodeinfo_encode);

/**
 * ibdevsim_ud_slid() - the source LID an HCA port puts on a datagram
 * @vl15: the datagram is an SMP (QP0)
 * @dlid: its destination LID
 * @lid: the port's base LID (0 before the SM gives it one)
 * @path_bits: the address handle's source path bits
 *
 * An SMP to the permissive LID leaves with the permissive LID as its
 * source, whatever the port's LID, as a ConnectX HCA sends it: that is
 * what the directed route part of an SMP carries (IBTA 14.2.2), and it
 * is where the responder sends its answer.  A port without a LID could
 * otherwise not be answered, and a subnet manager's first sweep would
 * see none of the HCAs behind a switch.
 *
 * Return: the SLID.
 */
u16 ibdevsim_ud_slid(bool vl15, u16 dlid, u16 lid, u8 path_bits)
{
	if (vl15 && dlid == be16_to_cpu(IB_LID_PERMISSIVE))
		return dlid;
	return lid | path_bits;
}
EXPORT_SYMBOL_IF_KUNIT(ibdevsim_ud_slid);

/**
 * ibdevsim_pkey_match() - whether a packet's P_Key matches a port's
 * @mine: the P_Key in the receiving port's table
 * @pkey: the packet's P_Key
 *
 * IBTA 10.9.3: the low 15 bits are equal and not zero, and at least one
 * of the two is a full member (two limited members may not talk).
 *
 * Return: true when they match.
 */
bool ibdevsim_pkey_match(u16 mine, u16 pkey)
{
	return (pkey & 0x7fff) && (mine & 0x7fff) == (pkey & 0x7fff) &&
	       ((mine | pkey) & 0x8000);
}
EXPORT_SYMBOL_IF_KUNIT(ibdevsim_pkey_match);

/**
 * ibdevsim_pkey_find() - the P_Key table index a packet's P_Key matches
 * @pkeys: the table
 * @len: its entries
 * @pkey: the packet's P_Key
 *
 * What QP1 accepts: any entry that ibdevsim_pkey_match() matches.
 *
 * Return: the first such index, or -1 when none matches.
 */
int ibdevsim_pkey_find(const u16 *pkeys, u32 len, u16 pkey)
{
	u32 i;

	for (i = 0; i < len; i++)
		if (ibdevsim_pkey_match(pkeys[i], pkey))
			return i;
	return -1;
}
EXPORT_SYMBOL_IF_KUNIT(ibdevsim_pkey_find);

/**
 * ibdevsim_mft_lookup() - where a switch sends a multicast packet
 * @mft: the multicast forwarding table, one row of
 *	 ibdevsim_mft_positions(@nports) PortMasks per MLID (MLID 0xc000
 *	 first), position p holding ports 16p to 16p + 15
 * @cap: rows in @mft (MulticastFDBCap)
 * @top: MulticastFDBTop, the highest MLID the table is valid for; 0 (the
 *	 SM never set it) means the whole table is valid
 * @mlid: the packet's destination LID
 * @nports: the switch's number of external ports
 * @in_port: the port the packet came in on
 * @ports: set to the output ports (bit n for port n); a bitmap of
 *	   %IBDEVSIM_MAX_PORTS + 1 bits
 *
 * A packet never goes back out of the port it came in on, nor to port 0
 * (the switch's management port holds no QP that could be a member), nor
 * to a port the switch does not have.
 *
 * Return: true when @ports has a port; false when the packet is dropped:
 * not a multicast LID, beyond the capacity or @top, or no member port.
 */
bool ibdevsim_mft_lookup(const u16 *mft, u32 cap, u16 top, u16 mlid,
			 u8 nports, u8 in_port, unsigned long *ports)
{
	u32 npos = ibdevsim_mft_positions(nports);
	u32 row = mlid - IBDEVSIM_MCAST_LID_BASE;
	const u16 *masks;
	u32 pos;

	bitmap_zero(ports, IBDEVSIM_MAX_PORTS + 1);
	if (!ibdevsim_lid_is_mcast(mlid) || row >= cap || (top && mlid > top))
		return false;
	masks = mft + row * npos;
	for (pos = 0; pos < npos; pos++) {
		unsigned long bits = masks[pos];
		unsigned int b;

		for_each_set_bit(b, &bits, 16)
			if (16 * pos + b <= nports)
				__set_bit(16 * pos + b, ports);
	}
	__clear_bit(0, ports);
	__clear_bit(in_port, ports);
	return !bitmap_empty(ports, nports + 1);
}
EXPORT_SYMBOL_IF_KUNIT(ibdevsim_mft_lookup);

static bool ibdevsim_gid_eq(const union ib_gid *a, const union ib_gid *b)
{
	return !memcmp(a->raw, b->raw, sizeof(a->raw));
}

/**
 * ibdevsim_mcast_find() - a QP's attachment to a multicast group
 * @atts: the HCA's attachments (struct ibdevsim_mcast_att)
 * @mgid: the group's MGID
 * @mlid: the group's MLID
 * @qp: the QP
 *
 * Return: the attachment, or NULL.
 */
struct ibdevsim_mcast_att *
ibdevsim_mcast_find(const struct list_head *atts, const union ib_gid *mgid,
		    u16 mlid, const struct ibdevsim_qp *qp)
{
	struct ibdevsim_mcast_att *att;

	list_for_each_entry(att, atts, list)
		if (att->qp == qp && att->mlid == mlid &&
		    ibdevsim_gid_eq(&att->mgid, mgid))
			return att;
	return NULL;
}
EXPORT_SYMBOL_IF_KUNIT(ibdevsim_mcast_find);

/**
 * ibdevsim_mcast_grp_used() - whether any QP is attached to an MGID
 * @atts: the HCA's attachments
 * @mgid: the MGID
 *
 * Return: true when an attachment names @mgid.
 */
bool ibdevsim_mcast_grp_used(const struct list_head *atts,
			     const union ib_gid *mgid)
{
	struct ibdevsim_mcast_att *att;

	list_for_each_entry(att, atts, list)
		if (ibdevsim_gid_eq(&att->mgid, mgid))
			return true;
	return false;
}
EXPORT_SYMBOL_IF_KUNIT(ibdevsim_mcast_grp_used);

/**
 * ibdevsim_mcast_attach_check() - the rules of an attach to a group
 * @atts: the HCA's attachments
 * @ngrps: the distinct MGIDs in @atts
 * @mgid: the group's MGID
 * @mlid: the group's MLID
 * @qp: the QP to attach
 * @ud: @qp is a UD QP (only those can be members)
 * @dup: set to the attachment when @qp is already attached, else NULL
 * @new_grp: set when @mgid is not in @atts yet
 *
 * An attach the QP already made is taken again (the caller counts it,
 * as the core counts every attach in the QP's usecnt).  Limits as the
 * device reports them: %IBDEVSIM_MAX_MCAST_GRP groups,
 * %IBDEVSIM_MAX_MCAST_QP_ATTACH QPs per group and
 * %IBDEVSIM_MAX_MCAST_ATTACH attachments in all.
 *
 * Return: 0 when the attach may go on, -EINVAL for a GID that is not
 * multicast, a LID that is not multicast or a QP that is not UD, -ENOMEM
 * when a limit is reached.
 */
int ibdevsim_mcast_attach_check(const struct list_head *atts, u32 ngrps,
				const union ib_gid *mgid, u16 mlid,
				const struct ibdevsim_qp *qp, bool ud,
				struct ibdevsim_mcast_att **dup,
				bool *new_grp)
{
	struct ibdevsim_mcast_att *att;
	u32 total = 0, members = 0;

	*dup = NULL;
	*new_grp = false;
	if (!ud || mgid->raw[0] != 0xff || !ibdevsim_lid_is_mcast(mlid))
		return -EINVAL;
	list_for_each_entry(att, atts, list) {
		total++;
		if (!ibdevsim_gid_eq(&att->mgid, mgid))
			continue;
		if (att->qp == qp && att->mlid == mlid) {
			*dup = att;
			return 0;
		}
		members++;
	}
	*new_grp = !members;
	if (total >= IBDEVSIM_MAX_MCAST_ATTACH ||
	    members >= IBDEVSIM_MAX_MCAST_QP_ATTACH ||
	    (*new_grp && ngrps >= IBDEVSIM_MAX_MCAST_GRP))
		return -ENOMEM;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(ibdevsim_mcast_attach_check);

/**
 * ibdevsim_mcast_match() - whether a multicast packet is for an attachment
 * @att: the attachment
 * @dlid: the packet's destination LID
 * @dgid: the DGID of its GRH, or NULL when it has none (then the MLID
 *	  alone selects the group)
 *
 * Return: true when the QP of @att takes a copy.
 */
bool ibdevsim_mcast_match(const struct ibdevsim_mcast_att *att, u16 dlid,
			  const union ib_gid *dgid)
{
	if (att->mlid != dlid)
		return false;
	return !dgid || ibdevsim_gid_eq(&att->mgid, dgid);
}
EXPORT_SYMBOL_IF_KUNIT(ibdevsim_mcast_match);

/**
 * ibdevsim_rc_npkts() - packets an RC message of @len bytes takes
 * @len: payload bytes
 * @mtu: path MTU in bytes
 *
 * An empty message still takes one packet (IBTA 9.7.1).
 *
 * Return: the number of packets, at least 1.
 */
u32 ibdevsim_rc_npkts(u32 len, u32 mtu)
{
	return len ? DIV_ROUND_UP(len, mtu) : 1;
}
EXPORT_SYMBOL_IF_KUNIT(ibdevsim_rc_npkts);

/**
 * ibdevsim_rc_opcode() - the BTH opcode of one request packet
 * @op: the work request's opcode (a SEND or an RDMA WRITE kind)
 * @idx: the packet's place in the message, from 0
 * @npkts: the message's packets
 *
 * The immediate data or the R_Key to invalidate travels in the last
 * packet only; the RETH of a WRITE in the first.
 *
 * Return: an IB_OPCODE_RC_* value.
 */
u8 ibdevsim_rc_opcode(enum ib_wr_opcode op, u32 idx, u32 npkts)
{
	bool only = npkts == 1, last = idx + 1 == npkts;
	bool write = op == IB_WR_RDMA_WRITE || op == IB_WR_RDMA_WRITE_WITH_IMM;

	if (!only && !idx)
		return write ? IB_OPCODE_RC_RDMA_WRITE_FIRST :
			       IB_OPCODE_RC_SEND_FIRST;
	if (!last)
		return write ? IB_OPCODE_RC_RDMA_WRITE_MIDDLE :
			       IB_OPCODE_RC_SEND_MIDDLE;
	switch (op) {
	case IB_WR_RDMA_WRITE:
		return only ? IB_OPCODE_RC_RDMA_WRITE_ONLY :
			      IB_OPCODE_RC_RDMA_WRITE_LAST;
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return only ? IB_OPCODE_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE :
			      IB_OPCODE_RC_RDMA_WRITE_LAST_WITH_IMMEDIATE;
	case IB_WR_SEND_WITH_IMM:
		return only ? IB_OPCODE_RC_SEND_ONLY_WITH_IMMEDIATE :
			      IB_OPCODE_RC_SEND_LAST_WITH_IMMEDIATE;
	case IB_WR_SEND_WITH_INV:
		return only ? IB_OPCODE_RC_SEND_ONLY_WITH_INVALIDATE :
			      IB_OPCODE_RC_SEND_LAST_WITH_INVALIDATE;
	default:
		return only ? IB_OPCODE_RC_SEND_ONLY : IB_OPCODE_RC_SEND_LAST;
	}
}
EXPORT_SYMBOL_IF_KUNIT(ibdevsim_rc_opcode);

/**
 * ibdevsim_rc_ack_timeout_ns() - the local ACK timeout a QP attribute sets
 * @timeout: the 5-bit attribute
 *
 * Return: 4.096 us << @timeout in nanoseconds, or 0 for 0: no timer
 * (IBTA 9.7.6.1.3).
 */
u64 ibdevsim_rc_ack_timeout_ns(u8 timeout)
{
	if (!timeout)
		return 0;
	return 4096ULL << min_t(u8, timeout, 31);
}
EXPORT_SYMBOL_IF_KUNIT(ibdevsim_rc_ack_timeout_ns);

/**
 * ibdevsim_rnr_timer_us() - the wait an RNR NAK's timer code asks for
 * @code: the 5-bit code (IBTA table 45)
 *
 * Return: microseconds; code 0 is the longest, 655.36 ms.
 */
u32 ibdevsim_rnr_timer_us(u8 code)
{
	static const u32 us[32] = {
		655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480,
		640, 960, 1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360,
		20480, 30720, 40960, 61440, 81920, 122880, 163840, 245760,
		327680, 491520,
	};

	return us[code & 31];
}
EXPORT_SYMBOL_IF_KUNIT(ibdevsim_rnr_timer_us);
