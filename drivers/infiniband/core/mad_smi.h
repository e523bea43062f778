/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Directed-route SMP rules (IBA vol 1, 14.2.2), for IB and OPA SMPs.
 *
 * A directed-route SMP carries its path with it: hop_cnt hops, an
 * initial_path of egress ports for the outbound trip, a return_path that
 * each hop fills in, and hop_ptr, the position on that path. The IB and OPA
 * formats place those fields differently; struct ib_mad_dr_route gives both
 * a single shape so that the rules are written once.
 */

#ifndef __IB_MAD_SMI_H__
#define __IB_MAD_SMI_H__

#include <rdma/ib_smi.h>
#include <rdma/opa_smi.h>

/**
 * enum ib_mad_smi_verdict - what to do with a directed-route SMP
 * @IB_MAD_SMI_DISCARD: drop it
 * @IB_MAD_SMI_HANDLE: keep processing it
 */
enum ib_mad_smi_verdict {
	IB_MAD_SMI_DISCARD,
	IB_MAD_SMI_HANDLE,
};

/**
 * enum ib_mad_smi_fwd - where a received directed-route SMP goes next
 * @IB_MAD_SMI_LOCAL: to the local SMA/SM (up the stack)
 * @IB_MAD_SMI_SEND: out again on the port it came in, LID routed
 * @IB_MAD_SMI_FORWARD: out another port (switches only)
 */
enum ib_mad_smi_fwd {
	IB_MAD_SMI_LOCAL,
	IB_MAD_SMI_SEND,
	IB_MAD_SMI_FORWARD,
};

/**
 * struct ib_mad_dr_route - directed-route fields of an IB or OPA SMP
 * @hop_ptr: points into the SMP, updated by the rules
 * @hop_cnt: number of directed-route hops
 * @initial_path: egress ports of the outbound trip (index 1..hop_cnt)
 * @return_path: ingress ports recorded on the way (index 1..hop_cnt)
 * @returning: the direction bit: the SMP travels back to its requester
 * @dlid_permissive: DrDLID is the permissive LID
 * @slid_permissive: DrSLID is the permissive LID
 */
struct ib_mad_dr_route {
	u8 *hop_ptr;
	u8 hop_cnt;
	u8 *initial_path;
	u8 *return_path;
	bool returning;
	bool dlid_permissive;
	bool slid_permissive;
};

void ib_mad_dr_route_ib(struct ib_smp *smp, struct ib_mad_dr_route *route);
void ib_mad_dr_route_opa(struct opa_smp *smp, struct ib_mad_dr_route *route);
bool ib_mad_smp_route(void *mad, bool opa, struct ib_mad_dr_route *route);

enum ib_mad_smi_verdict ib_mad_smi_dr_send(struct ib_mad_dr_route *route,
					   bool is_switch, u32 port_num);
enum ib_mad_smi_verdict ib_mad_smi_dr_recv(struct ib_mad_dr_route *route,
					   bool is_switch, u32 port_num,
					   int phys_port_cnt);
enum ib_mad_smi_fwd ib_mad_smi_dr_forward(const struct ib_mad_dr_route *route);
int ib_mad_smi_fwd_port(const struct ib_mad_dr_route *route);
bool ib_mad_smi_for_local_agent(const struct ib_mad_dr_route *route,
				struct ib_device *device);
bool ib_mad_smi_back_at_requester(const struct ib_mad_dr_route *route,
				  struct ib_device *device);

#endif /* __IB_MAD_SMI_H__ */
