/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Device Management class wire formats used by ib_srpt.
 *
 * The layouts follow chapter 16.3 (Device Management) of the InfiniBand
 * Architecture Specification and annex B.7 of the SRP standard (T10 r16a).
 * Every multi-byte field is big-endian on the wire; the sizes are pinned
 * with static_assert() so that a stray member can never change the format.
 */
#ifndef SRPT_DM_H
#define SRPT_DM_H

#include <linux/build_bug.h>
#include <linux/types.h>
#include <rdma/ib_mad.h>

/* MAD status values used in DM replies (IBA tables 115 and 278). */
enum srpt_dm_status {
	SRPT_DM_STATUS_UNSUP_METHOD		= 0x0008,
	SRPT_DM_STATUS_UNSUP_METHOD_ATTR	= 0x000c,
	SRPT_DM_STATUS_INVALID_FIELD		= 0x001c,
	SRPT_DM_STATUS_NO_IOC			= 0x0100,
};

/* DM attribute identifiers (IBA table 279). */
enum srpt_dm_attr {
	SRPT_DM_ATTR_CLASS_PORT_INFO	= 0x0001,
	SRPT_DM_ATTR_IOU_INFO		= 0x0010,
	SRPT_DM_ATTR_IOC_PROFILE	= 0x0011,
	SRPT_DM_ATTR_SVC_ENTRIES	= 0x0012,
};

/* IOControllerProfile constants for an SRP target (SRP annex B.7). */
enum {
	SRPT_DM_MAX_SLOTS		= 16,
	SRPT_DM_SVC_PER_MAD		= 4,
	SRPT_IO_SUBCLASS		= 0x609e,
	SRPT_IO_PROTOCOL		= 0x0108,
	SRPT_IO_PROTOCOL_VERSION	= 0x0001,
	SRPT_OPCAP_SEND_TO_IOC		= 0x01,
	SRPT_OPCAP_SEND_FROM_IOC	= 0x02,
	SRPT_OPCAP_RDMA_READ_FROM_IOC	= 0x08,
	SRPT_OPCAP_RDMA_WRITE_FROM_IOC	= 0x20,
};

/**
 * struct srpt_dm_mad - a Device Management datagram as sent and received
 * @mad_hdr: common MAD header.
 * @rmpp_hdr: RMPP header; DM replies of ib_srpt never use RMPP.
 * @dm_reserved: the 28 reserved bytes of the DM class header.
 * @data: attribute payload.
 *
 * The header is IB_MGMT_DEVICE_HDR bytes so that the whole datagram is one
 * 256-byte MAD, the size ib_create_send_mad() is asked for.
 */
struct srpt_dm_mad {
	struct ib_mad_hdr	mad_hdr;
	struct ib_rmpp_hdr	rmpp_hdr;
	u8			dm_reserved[28];
	u8			data[IB_MGMT_DEVICE_DATA];
};

static_assert(offsetof(struct srpt_dm_mad, data) == IB_MGMT_DEVICE_HDR);
static_assert(sizeof(struct srpt_dm_mad) == 256);

/**
 * struct srpt_dm_iou_info - IOUnitInfo attribute (IBA 16.3.3.3)
 * @change_id: bumped whenever the controller list changes.
 * @max_controllers: number of slots described by @controller_list.
 * @op_rom: option ROM and diagnostic bits.
 * @controller_list: one nibble per slot, slot 1 in the high nibble of byte 0.
 */
struct srpt_dm_iou_info {
	__be16	change_id;
	u8	max_controllers;
	u8	op_rom;
	u8	controller_list[128];
};

static_assert(sizeof(struct srpt_dm_iou_info) == 132);

/**
 * struct srpt_dm_ioc_profile - IOControllerProfile attribute (IBA 16.3.3.4)
 * @guid: I/O controller GUID.
 * @vendor_id: 24-bit IEEE vendor id in the low bits.
 * @device_id: vendor specific device id.
 * @device_version: hardware revision.
 * @reserved1: reserved.
 * @subsys_vendor_id: subsystem vendor id.
 * @subsys_device_id: subsystem device id.
 * @io_class: I/O class (SRP_REV16A_IB_IO_CLASS).
 * @io_subclass: I/O subclass.
 * @protocol: protocol (SRP).
 * @protocol_version: protocol version.
 * @service_conn: reserved in this revision.
 * @initiators_supported: reserved in this revision.
 * @send_queue_depth: maximum number of outstanding sends to the IOC.
 * @reserved2: reserved.
 * @rdma_read_depth: maximum RDMA reads in flight per channel.
 * @send_size: largest request message the IOC accepts.
 * @rdma_size: largest single RDMA transfer.
 * @op_cap_mask: supported operation types.
 * @svc_cap_mask: service capabilities.
 * @num_svc_entries: number of ServiceEntries of this IOC.
 * @reserved3: reserved.
 * @id_string: UTF-8 text identifying the controller.
 */
struct srpt_dm_ioc_profile {
	__be64	guid;
	__be32	vendor_id;
	__be32	device_id;
	__be16	device_version;
	__be16	reserved1;
	__be32	subsys_vendor_id;
	__be32	subsys_device_id;
	__be16	io_class;
	__be16	io_subclass;
	__be16	protocol;
	__be16	protocol_version;
	__be16	service_conn;
	__be16	initiators_supported;
	__be16	send_queue_depth;
	u8	reserved2;
	u8	rdma_read_depth;
	__be32	send_size;
	__be32	rdma_size;
	u8	op_cap_mask;
	u8	svc_cap_mask;
	u8	num_svc_entries;
	u8	reserved3[9];
	u8	id_string[64];
} __packed;

static_assert(sizeof(struct srpt_dm_ioc_profile) == 128);

/**
 * struct srpt_dm_svc_entry - one ServiceEntry (IBA 16.3.3.5)
 * @name: service name, "SRP.T10:" followed by the id in hex for SRP.
 * @id: service identifier.
 */
struct srpt_dm_svc_entry {
	u8	name[40];
	__be64	id;
} __packed;

static_assert(sizeof(struct srpt_dm_svc_entry) == 48);

/**
 * struct srpt_dm_svc_entries - ServiceEntries attribute
 * @entry: up to four entries per datagram.
 */
struct srpt_dm_svc_entries {
	struct srpt_dm_svc_entry entry[SRPT_DM_SVC_PER_MAD];
};

static_assert(sizeof(struct srpt_dm_svc_entries) == IB_MGMT_DEVICE_DATA);

#endif /* SRPT_DM_H */
