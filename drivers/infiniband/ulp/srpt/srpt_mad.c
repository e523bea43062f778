// SPDX-License-Identifier: GPL-2.0-only
/*
 * ib_srpt: Device Management agent.
 *
 * Initiators find SRP targets by asking each port's DM agent for its
 * IOUnitInfo, the profile of the populated I/O controller slot and that
 * controller's ServiceEntries (IBA chapter 16.3, SRP annex B). ib_srpt
 * exposes one I/O controller, in slot 1, with one service: the SRP target
 * whose id is srpt_service_guid.
 *
 * The attribute builders only fill a reply datagram and are reachable from
 * KUnit; srpt_mad_recv_handler() does the MAD plumbing around them.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/string.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_mad.h>
#include <kunit/visibility.h>

#include "srpt_priv.h"

/* The single populated I/O controller slot and its service count. */
#define SRPT_IOC_SLOT		1
#define SRPT_NUM_SVC_ENTRIES	1

static void srpt_dm_set_status(struct srpt_dm_mad *mad, u16 status)
{
	mad->mad_hdr.status = cpu_to_be16(status);
}

/**
 * srpt_set_ioc - store a slot's state in an IOUnitInfo controller list
 * @c_list: controller list, one nibble per slot.
 * @slot: one-based slot number, 1 to SRPT_DM_MAX_SLOTS.
 * @value: slot state; only its low four bits are used (0 = empty,
 *	1 = IOC present).
 *
 * Odd slots live in the high nibble of their byte and even slots in the low
 * nibble, so slot 1 is the high nibble of byte 0. Out of range slots are
 * ignored with a warning.
 *
 * Context: any context.
 */
void srpt_set_ioc(u8 *c_list, u32 slot, u8 value)
{
	u8 *byte;

	if (WARN_ON_ONCE(slot < 1 || slot > SRPT_DM_MAX_SLOTS))
		return;
	byte = &c_list[(slot - 1) / 2];
	value &= 0xf;
	if (slot & 1)
		*byte = (*byte & 0x0f) | (value << 4);
	else
		*byte = (*byte & 0xf0) | value;
}
EXPORT_SYMBOL_IF_KUNIT(srpt_set_ioc);

/**
 * srpt_get_class_port_info - build the DM ClassPortInfo reply
 * @mad: reply datagram; its data area is overwritten.
 *
 * ib_srpt supports no optional DM features and no redirection, so apart from
 * the versions only the response time value (2^20 * 4.096 us) is set.
 *
 * Context: any context.
 */
void srpt_get_class_port_info(struct srpt_dm_mad *mad)
{
	struct ib_class_port_info *cpi = (void *)mad->data;

	memset(cpi, 0, sizeof(*cpi));
	cpi->base_version = IB_MGMT_BASE_VERSION;
	cpi->class_version = 1;
	ib_set_cpi_resp_time(cpi, 20);
	srpt_dm_set_status(mad, 0);
}
EXPORT_SYMBOL_IF_KUNIT(srpt_get_class_port_info);

/**
 * srpt_get_iou - build the DM IOUnitInfo reply
 * @mad: reply datagram; its data area is overwritten.
 *
 * Describes sixteen slots of which only %SRPT_IOC_SLOT holds a controller.
 *
 * Context: any context.
 */
void srpt_get_iou(struct srpt_dm_mad *mad)
{
	struct srpt_dm_iou_info *iou = (void *)mad->data;
	u32 slot;

	memset(iou, 0, sizeof(*iou));
	iou->change_id = cpu_to_be16(1);
	iou->max_controllers = SRPT_DM_MAX_SLOTS;
	for (slot = 1; slot <= SRPT_DM_MAX_SLOTS; slot++)
		srpt_set_ioc(iou->controller_list, slot,
			     slot == SRPT_IOC_SLOT ? 1 : 0);
	srpt_dm_set_status(mad, 0);
}
EXPORT_SYMBOL_IF_KUNIT(srpt_get_iou);

/**
 * srpt_dm_slot_status - check the slot of an IOC scoped DM query
 * @slot: slot number taken from the attribute modifier.
 *
 * Return: 0 for the populated slot, %SRPT_DM_STATUS_INVALID_FIELD for a slot
 * outside 1..16 and %SRPT_DM_STATUS_NO_IOC for an empty slot.
 */
static u16 srpt_dm_slot_status(u32 slot)
{
	if (slot < 1 || slot > SRPT_DM_MAX_SLOTS)
		return SRPT_DM_STATUS_INVALID_FIELD;
	if (slot != SRPT_IOC_SLOT)
		return SRPT_DM_STATUS_NO_IOC;
	return 0;
}

/**
 * srpt_get_ioc - build the DM IOControllerProfile reply
 * @sport: port the query arrived on.
 * @slot: slot number from the attribute modifier.
 * @mad: reply datagram.
 *
 * Fills the profile of the SRP I/O controller (SRP annex B.7), or only sets
 * the MAD status when @slot does not name it.
 *
 * Context: any context.
 */
void srpt_get_ioc(struct srpt_port *sport, u32 slot, struct srpt_dm_mad *mad)
{
	struct srpt_device *sdev = sport->sdev;
	const struct ib_device_attr *attrs = &sdev->device->attrs;
	u16 status = srpt_dm_slot_status(slot);
	u32 depth, rdma_size;

	srpt_dm_set_status(mad, status);
	if (status)
		return;

	/* The credits a login gets: the SRQ's size or a receive ring's. */
	depth = READ_ONCE(sdev->srq) ? sdev->srq_size :
		min_t(u32, SRPT_MAX_RQ_SIZE, attrs->max_qp_wr);
	rdma_size = min_t(u32, READ_ONCE(sport->dm_rdma_size),
			  SRPT_MAX_RDMA_SIZE);
	/* Whatever is not named here is reserved or unused: zero. */
	*(struct srpt_dm_ioc_profile *)mad->data = (struct srpt_dm_ioc_profile) {
		.guid			= cpu_to_be64(srpt_service_guid),
		.vendor_id		= cpu_to_be32(attrs->vendor_id),
		.device_id		= cpu_to_be32(attrs->vendor_part_id),
		.device_version		= cpu_to_be16(attrs->hw_ver),
		.subsys_vendor_id	= cpu_to_be32(attrs->vendor_id),
		.io_class		= cpu_to_be16(SRP_REV16A_IB_IO_CLASS),
		.io_subclass		= cpu_to_be16(SRPT_IO_SUBCLASS),
		.protocol		= cpu_to_be16(SRPT_IO_PROTOCOL),
		.protocol_version	= cpu_to_be16(SRPT_IO_PROTOCOL_VERSION),
		.send_queue_depth	= cpu_to_be16(min_t(u32, depth, U16_MAX)),
		.rdma_read_depth	= SRPT_RD_ATOMIC,
		.send_size		= cpu_to_be32(srp_max_req_size),
		.rdma_size		= cpu_to_be32(rdma_size),
		.op_cap_mask		= SRPT_OPCAP_SEND_TO_IOC |
					  SRPT_OPCAP_SEND_FROM_IOC |
					  SRPT_OPCAP_RDMA_READ_FROM_IOC |
					  SRPT_OPCAP_RDMA_WRITE_FROM_IOC,
		.num_svc_entries	= SRPT_NUM_SVC_ENTRIES,
		.id_string		= SRPT_ID_STRING,
	};
}
EXPORT_SYMBOL_IF_KUNIT(srpt_get_ioc);

/**
 * srpt_get_svc_entries - build the DM ServiceEntries reply
 * @ioc_guid: GUID of the controller, also the id of its SRP service.
 * @slot: slot number from the attribute modifier.
 * @hi: index of the last entry asked for.
 * @lo: index of the first entry asked for.
 * @mad: reply datagram.
 *
 * A bad slot is answered like in srpt_get_ioc(). A range that is reversed,
 * longer than four entries or reaching past the controller's single service
 * gets %SRPT_DM_STATUS_INVALID_FIELD.
 *
 * Context: any context.
 */
void srpt_get_svc_entries(u64 ioc_guid, u16 slot, u8 hi, u8 lo,
			  struct srpt_dm_mad *mad)
{
	struct srpt_dm_svc_entries *svc = (void *)mad->data;
	struct srpt_dm_svc_entry *e;
	u16 status = srpt_dm_slot_status(slot);

	if (!status && (lo > hi || hi >= SRPT_NUM_SVC_ENTRIES ||
			hi - lo >= SRPT_DM_SVC_PER_MAD))
		status = SRPT_DM_STATUS_INVALID_FIELD;
	srpt_dm_set_status(mad, status);
	if (status)
		return;

	memset(svc, 0, sizeof(*svc));
	/* Entry 0 is the only one; the range check above admits only it. */
	e = &svc->entry[0];
	e->id = cpu_to_be64(ioc_guid);
	snprintf(e->name, sizeof(e->name), "%s%016llx", SRPT_SVC_NAME_PREFIX,
		 ioc_guid);
}
EXPORT_SYMBOL_IF_KUNIT(srpt_get_svc_entries);

/**
 * srpt_mgmt_method_get - answer a DM Get() request
 * @sp: port the request arrived on.
 * @rq_mad: the request.
 * @rsp_mad: reply datagram, already a copy of the request header.
 *
 * Dispatches on the attribute id; unknown attributes get
 * %SRPT_DM_STATUS_UNSUP_METHOD_ATTR.
 *
 * Context: any context.
 */
void srpt_mgmt_method_get(struct srpt_port *sp, const struct ib_mad *rq_mad,
			  struct srpt_dm_mad *rsp_mad)
{
	u32 mod = be32_to_cpu(rq_mad->mad_hdr.attr_mod);

	switch (be16_to_cpu(rq_mad->mad_hdr.attr_id)) {
	case SRPT_DM_ATTR_CLASS_PORT_INFO:
		srpt_get_class_port_info(rsp_mad);
		break;
	case SRPT_DM_ATTR_IOU_INFO:
		srpt_get_iou(rsp_mad);
		break;
	case SRPT_DM_ATTR_IOC_PROFILE:
		srpt_get_ioc(sp, mod, rsp_mad);
		break;
	case SRPT_DM_ATTR_SVC_ENTRIES:
		/* Modifier: slot in bits 31:16, hi in 15:8, lo in 7:0. */
		srpt_get_svc_entries(srpt_service_guid, mod >> 16,
				     (mod >> 8) & 0xff, mod & 0xff, rsp_mad);
		break;
	default:
		srpt_dm_set_status(rsp_mad, SRPT_DM_STATUS_UNSUP_METHOD_ATTR);
		break;
	}
}
EXPORT_SYMBOL_IF_KUNIT(srpt_mgmt_method_get);

/**
 * srpt_mad_send_handler - MAD send completion callback
 * @mad_agent: return value of ib_register_mad_agent().
 * @mad_wc: work completion reporting that the MAD has been sent.
 *
 * Every reply is sent once and never retried, so its completion, whatever
 * its status (success, timeout, flush on unregistration), ends the life of
 * the reply: the address handle made for it and the send buffer are freed.
 *
 * Context: process context, called by the MAD layer.
 */
static void srpt_mad_send_handler(struct ib_mad_agent *mad_agent,
				  struct ib_mad_send_wc *mad_wc)
{
	struct ib_mad_send_buf *send_buf = mad_wc->send_buf;

	if (mad_wc->status != IB_WC_SUCCESS)
		pr_debug("DM reply on port %u completed with status %d\n",
			 mad_agent->port_num, mad_wc->status);
	if (send_buf->ah)
		rdma_destroy_ah(send_buf->ah, RDMA_DESTROY_AH_SLEEPABLE);
	ib_free_send_mad(send_buf);
}

/**
 * srpt_mad_recv_handler - MAD reception callback
 * @mad_agent: return value of ib_register_mad_agent().
 * @send_buf: unused; DM requests are never answers to our sends.
 * @mad_wc: work completion describing the received MAD.
 *
 * Builds a GetResp() for the request and sends it back on an address handle
 * made from the request. Get() is answered by srpt_mgmt_method_get(), Set()
 * with "unsupported method/attribute" since no DM attribute is writable, and
 * any other method with "unsupported method". The receive buffer is always
 * returned to the MAD layer.
 *
 * Context: process context, called by the MAD layer.
 */
static void srpt_mad_recv_handler(struct ib_mad_agent *mad_agent,
				  struct ib_mad_send_buf *send_buf,
				  struct ib_mad_recv_wc *mad_wc)
{
	struct srpt_port *sport = mad_agent->context;
	const struct ib_mad *req;
	struct ib_mad_send_buf *rsp;
	struct srpt_dm_mad *dm;
	struct ib_ah *ah;

	if (!mad_wc || !mad_wc->recv_buf.mad)
		return;
	req = mad_wc->recv_buf.mad;

	ah = ib_create_ah_from_wc(mad_agent->qp->pd, mad_wc->wc,
				  mad_wc->recv_buf.grh, mad_agent->port_num);
	if (IS_ERR(ah))
		goto free_recv;

	rsp = ib_create_send_mad(mad_agent, mad_wc->wc->src_qp,
				 mad_wc->wc->pkey_index, 0, IB_MGMT_DEVICE_HDR,
				 IB_MGMT_DEVICE_DATA, GFP_KERNEL,
				 IB_MGMT_BASE_VERSION);
	if (IS_ERR(rsp))
		goto destroy_ah;
	rsp->ah = ah;

	dm = rsp->mad;
	memset(dm, 0, sizeof(*dm));
	dm->mad_hdr = req->mad_hdr;
	dm->mad_hdr.method = IB_MGMT_METHOD_GET_RESP;
	dm->mad_hdr.status = 0;

	switch (req->mad_hdr.method) {
	case IB_MGMT_METHOD_GET:
		srpt_mgmt_method_get(sport, req, dm);
		break;
	case IB_MGMT_METHOD_SET:
		srpt_dm_set_status(dm, SRPT_DM_STATUS_UNSUP_METHOD_ATTR);
		break;
	default:
		srpt_dm_set_status(dm, SRPT_DM_STATUS_UNSUP_METHOD);
		break;
	}

	/* From here on srpt_mad_send_handler() owns @ah and @rsp. */
	if (!ib_post_send_mad(rsp, NULL))
		goto free_recv;

	ib_free_send_mad(rsp);
destroy_ah:
	rdma_destroy_ah(ah, RDMA_DESTROY_AH_SLEEPABLE);
free_recv:
	ib_free_recv_mad(mad_wc);
}

static int srpt_dm_cap(struct srpt_port *sport, bool set)
{
	struct ib_port_modify pm = {};

	if (set)
		pm.set_port_cap_mask = IB_PORT_DEVICE_MGMT_SUP;
	else
		pm.clr_port_cap_mask = IB_PORT_DEVICE_MGMT_SUP;
	return ib_modify_port(sport->sdev->device, sport->port, 0, &pm);
}

static int srpt_register_dm_agent(struct srpt_port *sport)
{
	struct ib_mad_reg_req reg = {
		.mgmt_class = IB_MGMT_CLASS_DEVICE_MGMT,
		.mgmt_class_version = IB_MGMT_BASE_VERSION,
	};
	struct ib_mad_agent *agent;

	set_bit(IB_MGMT_METHOD_GET, reg.method_mask);
	set_bit(IB_MGMT_METHOD_SET, reg.method_mask);
	agent = ib_register_mad_agent(sport->sdev->device, sport->port,
				      IB_QPT_GSI, &reg, 0,
				      srpt_mad_send_handler,
				      srpt_mad_recv_handler, sport, 0);
	if (IS_ERR(agent))
		return PTR_ERR(agent);
	sport->mad_agent = agent;
	return 0;
}

/**
 * srpt_port_enable_dm - advertise and answer Device Management on a port
 * @sport: the port.
 *
 * On a port with a MAD interface, sets the IsDeviceManagementSupported
 * capability and registers the DM agent if that has not been done yet.
 * The capability is set on every call, the agent's port included: what
 * made the port be refreshed (a port reset, a client reset, an SM change)
 * may have cleared it, and without it the SM's DM queries never find the
 * target. Failing to (SR-IOV virtual functions cannot) is logged, not an
 * error.
 *
 * Context: process context; may sleep.
 */
VISIBLE_IF_KUNIT void srpt_port_enable_dm(struct srpt_port *sport)
{
	struct ib_device *dev = sport->sdev->device;
	int ret;

	if (!rdma_cap_ib_mad(dev, sport->port))
		return;

	ret = srpt_dm_cap(sport, true);
	/* A port that cannot take it was reported when its agent came. */
	if (sport->mad_agent)
		return;
	if (ret)
		pr_warn("%s-%u: cannot advertise device management (%d)\n",
			dev_name(&dev->dev), sport->port, ret);
	ret = srpt_register_dm_agent(sport);
	if (ret) {
		pr_warn("%s-%u: DM agent registration failed (%d)\n",
			dev_name(&dev->dev), sport->port, ret);
		srpt_dm_cap(sport, false);
	}
}
EXPORT_SYMBOL_IF_KUNIT(srpt_port_enable_dm);

/**
 * srpt_refresh_port - (re)read a port's attributes and enable DM on it
 * @sport: the port.
 *
 * Caches LIDs and GID 0, derives the GUID and GID names configfs WWNs are
 * matched against and enables Device Management on the port
 * (srpt_port_enable_dm()). Failing to enable DM (SR-IOV virtual functions
 * cannot) is logged but not an error: logins still work.
 *
 * Context: process context; may sleep. Safe to call repeatedly.
 * Return: 0 or the error of querying the port.
 */
int srpt_refresh_port(struct srpt_port *sport)
{
	struct ib_device *dev = sport->sdev->device;
	struct ib_port_attr attr;
	union ib_gid gid;
	int ret;

	ret = ib_query_port(dev, sport->port, &attr);
	if (ret)
		return ret;
	ret = rdma_query_gid(dev, sport->port, 0, &gid);
	if (ret)
		return ret;

	mutex_lock(&srpt_dev_mutex);
	sport->sm_lid = attr.sm_lid;
	sport->lid = attr.lid;
	sport->gid = gid;
	srpt_format_guid(sport->guid_name, sizeof(sport->guid_name),
			 gid.global.interface_id);
	srpt_format_id(sport->gid_name, sizeof(sport->gid_name), gid.raw);
	mutex_unlock(&srpt_dev_mutex);

	srpt_port_enable_dm(sport);
	return 0;
}

/**
 * srpt_unregister_mad_agent - stop answering DM queries on a device
 * @sdev: the device.
 * @port_cnt: number of ports, starting at port 1, to handle.
 *
 * Clears the IsDeviceManagementSupported capability and unregisters the
 * agent of every port that has one; replies still in flight are completed
 * through srpt_mad_send_handler() by the MAD layer.
 *
 * Context: process context; may sleep. Safe to call repeatedly.
 */
void srpt_unregister_mad_agent(struct srpt_device *sdev, u32 port_cnt)
{
	struct srpt_port *sport;
	u32 i;

	for (i = 0; i < port_cnt; i++) {
		sport = &sdev->port[i];
		if (!sport->mad_agent)
			continue;
		srpt_dm_cap(sport, false);
		ib_unregister_mad_agent(sport->mad_agent);
		sport->mad_agent = NULL;
	}
}
