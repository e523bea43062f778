// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Directed-route SMP rules (IBA vol 1, 14.2.2.2 and 14.2.2.3).
 *
 * The comments name the compliance statements: C14-9 covers an SMP on its
 * outbound trip (direction bit clear), C14-13 one on its way back. Sending
 * advances hop_ptr; receiving records the ingress port in return_path and,
 * on the way back, steps hop_ptr when the SMP reaches its final node.
 */

#include "mad_smi.h"

/**
 * ib_mad_dr_route_ib() - describe the route of an IB directed-route SMP
 * @smp: the SMP
 * @route: filled in; points into @smp
 */
void ib_mad_dr_route_ib(struct ib_smp *smp, struct ib_mad_dr_route *route)
{
	route->hop_ptr = &smp->hop_ptr;
	route->hop_cnt = smp->hop_cnt;
	route->initial_path = smp->initial_path;
	route->return_path = smp->return_path;
	route->returning = ib_get_smp_direction(smp);
	route->dlid_permissive = smp->dr_dlid == IB_LID_PERMISSIVE;
	route->slid_permissive = smp->dr_slid == IB_LID_PERMISSIVE;
}

/**
 * ib_mad_dr_route_opa() - describe the route of an OPA directed-route SMP
 * @smp: the SMP
 * @route: filled in; points into @smp
 */
void ib_mad_dr_route_opa(struct opa_smp *smp, struct ib_mad_dr_route *route)
{
	route->hop_ptr = &smp->hop_ptr;
	route->hop_cnt = smp->hop_cnt;
	route->initial_path = smp->route.dr.initial_path;
	route->return_path = smp->route.dr.return_path;
	route->returning = opa_get_smp_direction(smp);
	route->dlid_permissive = smp->route.dr.dr_dlid == OPA_LID_PERMISSIVE;
	route->slid_permissive = smp->route.dr.dr_slid == OPA_LID_PERMISSIVE;
}

/**
 * ib_mad_smp_route() - describe the route of a directed-route SMP
 * @mad: the SMP
 * @opa: the port accepts OPA MADs
 * @route: filled in
 *
 * Return: true if @mad is an OPA SMP, false for an IB SMP.
 */
bool ib_mad_smp_route(void *mad, bool opa, struct ib_mad_dr_route *route)
{
	const struct ib_mad_hdr *hdr = mad;

	if (opa && hdr->base_version == OPA_MGMT_BASE_VERSION &&
	    hdr->class_version == OPA_SM_CLASS_VERSION) {
		ib_mad_dr_route_opa(mad, route);
		return true;
	}
	ib_mad_dr_route_ib(mad, route);
	return false;
}

static enum ib_mad_smi_verdict ib_mad_smi_verdict(bool ok)
{
	return ok ? IB_MAD_SMI_HANDLE : IB_MAD_SMI_DISCARD;
}

/* Outbound trip, the SMP leaves this node through @port_num. */
static enum ib_mad_smi_verdict
ib_mad_smi_send_outbound(struct ib_mad_dr_route *r, bool is_switch,
			 u32 port_num)
{
	u8 *ptr = r->hop_ptr;

	if (r->hop_cnt && *ptr == 0) {
		/* C14-9:1: the requester starts the walk at hop 1. */
		(*ptr)++;
		return ib_mad_smi_verdict(r->initial_path[*ptr] == port_num);
	}
	if (*ptr && *ptr < r->hop_cnt) {
		/* C14-9:2: a switch in the middle of the path passes it on. */
		if (!is_switch)
			return IB_MAD_SMI_DISCARD;
		(*ptr)++;
		return ib_mad_smi_verdict(r->initial_path[*ptr] == port_num);
	}
	if (*ptr == r->hop_cnt) {
		/* C14-9:3: last directed hop, LID routing takes over. */
		(*ptr)++;
		return ib_mad_smi_verdict(is_switch || r->dlid_permissive);
	}
	/* C14-9:4 and C14-9:5: only hop_cnt + 1 is a sane position. */
	return ib_mad_smi_verdict(*ptr == r->hop_cnt + 1);
}

/* Returning trip, the SMP leaves this node through @port_num. */
static enum ib_mad_smi_verdict
ib_mad_smi_send_returning(struct ib_mad_dr_route *r, bool is_switch,
			  u32 port_num)
{
	u8 *ptr = r->hop_ptr;

	if (r->hop_cnt && *ptr == r->hop_cnt + 1) {
		/* C14-13:1: the responder starts the way back. */
		(*ptr)--;
		return ib_mad_smi_verdict(r->return_path[*ptr] == port_num);
	}
	if (*ptr >= 2 && *ptr <= r->hop_cnt) {
		/* C14-13:2: a switch on the way back passes it on. */
		if (!is_switch)
			return IB_MAD_SMI_DISCARD;
		(*ptr)--;
		return ib_mad_smi_verdict(r->return_path[*ptr] == port_num);
	}
	if (*ptr == 1) {
		/* C14-13:3: last directed hop back to the requester. */
		(*ptr)--;
		return ib_mad_smi_verdict(is_switch || r->slid_permissive);
	}
	/* C14-13:4 (hop_ptr 0 belongs to the SM) and C14-13:5. */
	return ib_mad_smi_verdict(*ptr == 0);
}

/**
 * ib_mad_smi_dr_send() - apply the sending rules to a directed-route SMP
 * @route: the SMP's route; hop_ptr is advanced as the rules say
 * @is_switch: this node is a switch
 * @port_num: port the SMP leaves through
 *
 * Return: IB_MAD_SMI_HANDLE if the SMP may be sent, IB_MAD_SMI_DISCARD if
 * it breaks the rules (bad hop count or pointer, wrong egress port).
 */
enum ib_mad_smi_verdict ib_mad_smi_dr_send(struct ib_mad_dr_route *route,
					   bool is_switch, u32 port_num)
{
	/* C14-6: a path has at most 63 hops. */
	if (route->hop_cnt >= IB_SMP_MAX_PATH_HOPS)
		return IB_MAD_SMI_DISCARD;
	if (route->returning)
		return ib_mad_smi_send_returning(route, is_switch, port_num);
	return ib_mad_smi_send_outbound(route, is_switch, port_num);
}

static enum ib_mad_smi_verdict
ib_mad_smi_recv_outbound(struct ib_mad_dr_route *r, bool is_switch,
			 u32 port_num, int phys_port_cnt)
{
	u8 ptr = *r->hop_ptr;

	/* C14-9:1: the sender must have moved hop_ptr off zero. */
	if (r->hop_cnt && ptr == 0)
		return IB_MAD_SMI_DISCARD;
	if (ptr && ptr < r->hop_cnt) {
		/* C14-9:2: intermediate switch; record where it came in. */
		if (!is_switch)
			return IB_MAD_SMI_DISCARD;
		r->return_path[ptr] = port_num;
		return ib_mad_smi_verdict(r->initial_path[ptr + 1] <=
					  phys_port_cnt);
	}
	if (ptr == r->hop_cnt) {
		/* C14-9:3: end of the directed part of the path. */
		if (r->hop_cnt)
			r->return_path[ptr] = port_num;
		return ib_mad_smi_verdict(is_switch || r->dlid_permissive);
	}
	/* C14-9:4: arrived at the destination SMA; C14-9:5 otherwise. */
	return ib_mad_smi_verdict(ptr == r->hop_cnt + 1);
}

static enum ib_mad_smi_verdict
ib_mad_smi_recv_returning(struct ib_mad_dr_route *r, bool is_switch,
			  u32 port_num, int phys_port_cnt)
{
	u8 *ptr = r->hop_ptr;

	if (r->hop_cnt && *ptr == r->hop_cnt + 1) {
		/* C14-13:1: first hop back, it must come in on our port. */
		(*ptr)--;
		return ib_mad_smi_verdict(r->return_path[*ptr] == port_num);
	}
	if (*ptr >= 2 && *ptr <= r->hop_cnt) {
		/* C14-13:2: intermediate switch on the way back. */
		if (!is_switch)
			return IB_MAD_SMI_DISCARD;
		return ib_mad_smi_verdict(r->return_path[*ptr - 1] <=
					  phys_port_cnt);
	}
	if (*ptr == 1) {
		/* C14-13:3: a permissive DrSLID means: for our SM. */
		if (r->slid_permissive) {
			(*ptr)--;
			return IB_MAD_SMI_HANDLE;
		}
		return ib_mad_smi_verdict(is_switch);
	}
	/* C14-13:4: hop_ptr 0 is for the SM; C14-13:5 otherwise. */
	return ib_mad_smi_verdict(*ptr == 0);
}

/**
 * ib_mad_smi_dr_recv() - apply the receiving rules to a directed-route SMP
 * @route: the SMP's route; return_path and hop_ptr are updated
 * @is_switch: this node is a switch
 * @port_num: port the SMP came in on
 * @phys_port_cnt: number of physical ports of this node
 *
 * Return: IB_MAD_SMI_HANDLE if the SMP is to be processed further,
 * IB_MAD_SMI_DISCARD if it must be dropped.
 */
enum ib_mad_smi_verdict ib_mad_smi_dr_recv(struct ib_mad_dr_route *route,
					   bool is_switch, u32 port_num,
					   int phys_port_cnt)
{
	if (route->hop_cnt >= IB_SMP_MAX_PATH_HOPS)
		return IB_MAD_SMI_DISCARD;
	if (route->returning)
		return ib_mad_smi_recv_returning(route, is_switch, port_num,
						 phys_port_cnt);
	return ib_mad_smi_recv_outbound(route, is_switch, port_num,
					phys_port_cnt);
}

/**
 * ib_mad_smi_dr_forward() - decide where a received SMP goes next
 * @route: route of an SMP that passed ib_mad_smi_dr_recv()
 *
 * Return: IB_MAD_SMI_FORWARD when a switch must relay it out another port,
 * IB_MAD_SMI_SEND when it continues LID routed from this node, and
 * IB_MAD_SMI_LOCAL when it is for this node.
 */
enum ib_mad_smi_fwd ib_mad_smi_dr_forward(const struct ib_mad_dr_route *route)
{
	u8 ptr = *route->hop_ptr;

	if (!route->returning) {
		if (ptr && ptr < route->hop_cnt)
			return IB_MAD_SMI_FORWARD;		/* C14-9:2 */
		if (ptr == route->hop_cnt)			/* C14-9:3 */
			return route->dlid_permissive ? IB_MAD_SMI_SEND :
							IB_MAD_SMI_LOCAL;
		if (ptr == route->hop_cnt + 1)			/* C14-9:4 */
			return IB_MAD_SMI_SEND;
		return IB_MAD_SMI_LOCAL;
	}
	if (ptr >= 2 && ptr <= route->hop_cnt)
		return IB_MAD_SMI_FORWARD;			/* C14-13:2 */
	if (ptr == 1)						/* C14-13:3 */
		return route->slid_permissive ? IB_MAD_SMI_LOCAL :
						IB_MAD_SMI_SEND;
	return IB_MAD_SMI_LOCAL;
}

/**
 * ib_mad_smi_fwd_port() - egress port of an SMP a switch relays
 * @route: route with hop_ptr at the relaying hop
 *
 * Return: the next port of initial_path on the outbound trip, the previous
 * entry of return_path on the way back.
 */
int ib_mad_smi_fwd_port(const struct ib_mad_dr_route *route)
{
	u8 ptr = *route->hop_ptr;

	if (!route->returning)
		return ptr + 1 < IB_SMP_MAX_PATH_HOPS ?
		       route->initial_path[ptr + 1] : -1;
	return ptr ? route->return_path[ptr - 1] : -1;
}

/**
 * ib_mad_smi_for_local_agent() - is an outbound SMP for our own SMA?
 * @route: route of the SMP
 * @device: the device that would process it
 *
 * An SMP whose outbound path ends at this node (hop_ptr == hop_cnt + 1,
 * C14-9:4) goes to the driver's process_mad(), if the driver has one.
 *
 * Return: true if the SMP is to be handed to process_mad().
 */
bool ib_mad_smi_for_local_agent(const struct ib_mad_dr_route *route,
				struct ib_device *device)
{
	return device->ops.process_mad && !route->returning &&
	       *route->hop_ptr == route->hop_cnt + 1;
}

/**
 * ib_mad_smi_back_at_requester() - has a returning SMP reached its SM?
 * @route: route of the SMP
 * @device: the device that would process it
 *
 * Return: true for a returning SMP with hop_ptr 0 (C14-13:4) on a device
 * with process_mad().
 */
bool ib_mad_smi_back_at_requester(const struct ib_mad_dr_route *route,
				  struct ib_device *device)
{
	return device->ops.process_mad && route->returning &&
	       *route->hop_ptr == 0;
}
