// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * What the MAD layer reads off the wire format: whether a MAD is a
 * response, which classes may use RMPP and where their data starts, and
 * the GIDs of a MAD that came with a GRH. Pure functions of a header or a
 * completion; no state, no locks.
 */

#include <linux/jhash.h>
#include <kunit/visibility.h>
#include <rdma/ib_cm.h>
#include <rdma/ib_smi.h>
#include <rdma/ib_verbs.h>
#include <rdma/opa_smi.h>

#include "mad_priv.h"

/**
 * ib_response_mad() - is a MAD a response?
 * @hdr: the MAD header
 *
 * A MAD is a response when its method has the response bit, when it is a
 * TrapRepress, or when it is a BM MAD with the response bit in its
 * attribute modifier.
 *
 * Return: 1 for a response, 0 for a request.
 */
int ib_response_mad(const struct ib_mad_hdr *hdr)
{
	if (hdr->method & IB_MGMT_METHOD_RESP)
		return 1;
	if (hdr->method == IB_MGMT_METHOD_TRAP_REPRESS)
		return 1;
	return hdr->mgmt_class == IB_MGMT_CLASS_BM &&
	       (hdr->attr_mod & IB_BM_ATTR_MOD_RESP);
}
EXPORT_SYMBOL(ib_response_mad);

/**
 * ib_mad_fc_request() - does a MAD open an exchange that flow control limits?
 * @hdr: header of a MAD about to be sent with a response timeout
 *
 * Flow control bounds how many requests an agent keeps outstanding at
 * responders that serve a whole subnet: the SA, the CM of a peer and the
 * SMAs an SM sweeps. Only MADs that start an exchange count. Answers never
 * do, whatever timeout they carry (a CM REP waits for an RTU): holding an
 * answer back behind our own requests could leave two nodes that connect
 * to each other at once each waiting for the other's answer.
 *
 * Return: true for SA and SMP requests and for the CM messages that
 * begin an exchange (REQ, DREQ, SIDR REQ, LAP).
 */
bool ib_mad_fc_request(const struct ib_mad_hdr *hdr)
{
	if (ib_response_mad(hdr))
		return false;
	switch (hdr->mgmt_class) {
	case IB_MGMT_CLASS_SUBN_ADM:
	case IB_MGMT_CLASS_SUBN_LID_ROUTED:
	case IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE:
		return true;
	case IB_MGMT_CLASS_CM:
		return hdr->attr_id == CM_REQ_ATTR_ID ||
		       hdr->attr_id == CM_DREQ_ATTR_ID ||
		       hdr->attr_id == CM_SIDR_REQ_ATTR_ID ||
		       hdr->attr_id == CM_LAP_ATTR_ID;
	default:
		return false;
	}
}
EXPORT_SYMBOL_IF_KUNIT(ib_mad_fc_request);

/* Kinds of destination in the top two bits of a flow-control key. */
#define IB_MAD_FC_KEY_AH	(0ULL << 62)
#define IB_MAD_FC_KEY_LID	BIT_ULL(62)
#define IB_MAD_FC_KEY_GID	(2ULL << 62)
#define IB_MAD_FC_KEY_DR	(3ULL << 62)

/* The key of a destination addressed by @gid. */
static u64 ib_mad_fc_gid_key(const union ib_gid *gid)
{
	const u32 *w = (const u32 *)gid->raw;

	return IB_MAD_FC_KEY_GID |
	       ((u64)jhash2(w, 4, 1) << 32 | jhash2(w, 4, 2)) >> 2;
}

/* The key of a directed-route SMP's path: hop count and hops. */
static u64 ib_mad_fc_dr_key(const void *mad)
{
	const struct ib_mad_hdr *hdr = mad;
	const u8 *path;
	u32 hops;

	if (hdr->base_version == OPA_MGMT_BASE_VERSION) {
		hops = ((const struct opa_smp *)mad)->hop_cnt;
		path = ((const struct opa_smp *)mad)->route.dr.initial_path;
	} else {
		hops = ((const struct ib_smp *)mad)->hop_cnt;
		path = ((const struct ib_smp *)mad)->initial_path;
	}
	hops = min_t(u32, hops, IB_SMP_MAX_PATH_HOPS - 1);
	return IB_MAD_FC_KEY_DR | (u64)hops << 32 | jhash(path + 1, hops, 0);
}

/**
 * ib_mad_fc_key() - the destination of a request, for flow control
 * @mad: the MAD about to be sent
 * @ah: the address handle it is sent with
 *
 * Flow control limits the requests outstanding at one responder, whose
 * receive queue they fill; requests to others must not wait for them.
 * The key names the responder: a directed-route SMP's path (hop count and
 * hops), a GID when the address has a GRH, else a LID. Keys of different
 * destinations may collide: they then share one set of slots, which only
 * makes the limit stricter. An address handle the driver cannot describe
 * is its own destination.
 *
 * Context: any; does not sleep.
 * Return: the key.
 */
u64 ib_mad_fc_key(const void *mad, struct ib_ah *ah)
{
	const struct ib_mad_hdr *hdr = mad;
	struct rdma_ah_attr attr;

	if (hdr->mgmt_class == IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE)
		return ib_mad_fc_dr_key(mad);
	if (!ah || rdma_query_ah(ah, &attr))
		return IB_MAD_FC_KEY_AH | ((uintptr_t)ah & ~IB_MAD_FC_KEY_DR);
	if (rdma_ah_get_ah_flags(&attr) & IB_AH_GRH)
		return ib_mad_fc_gid_key(&rdma_ah_read_grh(&attr)->dgid);
	return IB_MAD_FC_KEY_LID | rdma_ah_get_dlid(&attr);
}
EXPORT_SYMBOL_IF_KUNIT(ib_mad_fc_key);

/**
 * ib_mad_fc_recv_key() - the source of a response, as a flow-control key
 * @recv_wc: a response received
 *
 * The key ib_mad_fc_key() gives the request it answers: a directed-route
 * SMP's response carries the request's path; a response with a GRH comes
 * from the GID the request was sent to, one without from its LID.
 *
 * Context: any; does not sleep.
 * Return: the key.
 */
u64 ib_mad_fc_recv_key(const struct ib_mad_recv_wc *recv_wc)
{
	const struct ib_mad_hdr *hdr = &recv_wc->recv_buf.mad->mad_hdr;

	if (hdr->mgmt_class == IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE)
		return ib_mad_fc_dr_key(hdr);
	if ((recv_wc->wc->wc_flags & IB_WC_GRH) && recv_wc->recv_buf.grh)
		return ib_mad_fc_gid_key(&recv_wc->recv_buf.grh->sgid);
	return IB_MAD_FC_KEY_LID | recv_wc->wc->slid;
}
EXPORT_SYMBOL_IF_KUNIT(ib_mad_fc_recv_key);

/**
 * ib_mad_is_vendor_class_range2() - is a class in vendor range 2?
 * @mgmt_class: management class
 *
 * Return: true for classes 0x30 to 0x4F, which are qualified by an OUI.
 */
bool ib_mad_is_vendor_class_range2(u8 mgmt_class)
{
	return mgmt_class >= IB_MGMT_CLASS_VENDOR_RANGE2_START &&
	       mgmt_class <= IB_MGMT_CLASS_VENDOR_RANGE2_END;
}

/**
 * ib_is_mad_class_rmpp() - may a class use RMPP?
 * @mgmt_class: management class
 *
 * Return: 1 for SA, DevMgt, DevAdm, BIS and vendor range 2, else 0.
 */
int ib_is_mad_class_rmpp(u8 mgmt_class)
{
	switch (mgmt_class) {
	case IB_MGMT_CLASS_SUBN_ADM:
	case IB_MGMT_CLASS_DEVICE_MGMT:
	case IB_MGMT_CLASS_DEVICE_ADM:
	case IB_MGMT_CLASS_BIS:
		return 1;
	default:
		return ib_mad_is_vendor_class_range2(mgmt_class);
	}
}
EXPORT_SYMBOL(ib_is_mad_class_rmpp);

/**
 * ib_get_mad_data_offset() - size of the headers in front of class data
 * @mgmt_class: management class
 *
 * Return: the offset of the class data in a MAD of @mgmt_class: the common
 * header plus RMPP and class headers where the class has them.
 */
int ib_get_mad_data_offset(u8 mgmt_class)
{
	switch (mgmt_class) {
	case IB_MGMT_CLASS_SUBN_ADM:
		return IB_MGMT_SA_HDR;
	case IB_MGMT_CLASS_DEVICE_MGMT:
	case IB_MGMT_CLASS_DEVICE_ADM:
	case IB_MGMT_CLASS_BIS:
		return IB_MGMT_DEVICE_HDR;
	default:
		if (ib_mad_is_vendor_class_range2(mgmt_class))
			return IB_MGMT_VENDOR_HDR;
		return IB_MGMT_MAD_HDR;
	}
}
EXPORT_SYMBOL(ib_get_mad_data_offset);

/**
 * ib_mad_recv_gids() - the source and destination GIDs of a received MAD
 * @priv: the agent that received it
 * @recv_wc: the received MAD
 * @sgid: its source GID
 * @dgid: its destination GID
 *
 * Only a MAD that came with a GRH (IB_WC_GRH) has GIDs. On RoCE v2 the 40
 * bytes in front of the MAD hold an IPv6 header, or an IPv4 header in
 * their last 20 bytes, whose addresses become IPv4-mapped GIDs; the
 * completion says which when the device reports the header type, else
 * the IP version field does.
 *
 * Context: any.
 * Return: 0, or -EINVAL for a MAD without GRH or an unreadable header.
 */
int ib_mad_recv_gids(const struct ib_mad_agent_private *priv,
		     const struct ib_mad_recv_wc *recv_wc,
		     union ib_gid *sgid, union ib_gid *dgid)
{
	const union rdma_network_hdr *hdr =
		(const union rdma_network_hdr *)recv_wc->recv_buf.grh;
	const struct ib_wc *wc = recv_wc->wc;
	enum rdma_network_type net = RDMA_NETWORK_IB;

	if (!(wc->wc_flags & IB_WC_GRH) || !hdr)
		return -EINVAL;
	if (rdma_protocol_roce(priv->agent.device, priv->agent.port_num)) {
		if (wc->wc_flags & IB_WC_WITH_NETWORK_HDR_TYPE)
			net = wc->network_hdr_type;
		else if (ib_get_rdma_header_version(hdr) == 4)
			net = RDMA_NETWORK_IPV4;
	}
	return ib_get_gids_from_rdma_hdr(hdr, net, sgid, dgid);
}
EXPORT_SYMBOL_IF_KUNIT(ib_mad_recv_gids);
