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
#include <linux/stddef.h>
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

/* Pins a member of a wire structure to its offset in the specification. */
#define SRPT_DM_AT(type, member, offset) \
	static_assert(offsetof(struct type, member) == (offset))

/**
 * struct srpt_dm_iou_info - IOUnitInfo attribute (IBA 16.3.3.3)
 * @change_id: bumped whenever the controller list changes.
 * @max_controllers: number of slots described by @controller_list.
 * @op_rom: option ROM and diagnostic bits.
 * @controller_list: one nibble per slot, slot 1 in the high nibble of byte 0
 *	(srpt_set_ioc()).
 */
struct srpt_dm_iou_info {
	__be16	change_id;
	u8	max_controllers, op_rom;
	u8	controller_list[128];
};

SRPT_DM_AT(srpt_dm_iou_info, controller_list, 4);
static_assert(sizeof(struct srpt_dm_iou_info) == 132);

/**
 * struct srpt_dm_ioc_profile - IOControllerProfile attribute (IBA 16.3.3.4)
 * @guid: I/O controller GUID.
 * @vendor_id: IEEE vendor id (OUI), in the low 24 bits.
 * @device_id: vendor specific device id.
 * @device_version: hardware revision.
 * @rsvd18: reserved.
 * @subsys_vendor_id: subsystem vendor id, in the low 24 bits.
 * @subsys_device_id: subsystem device id.
 * @io_class: I/O class (SRP_REV16A_IB_IO_CLASS).
 * @io_subclass: I/O subclass (%SRPT_IO_SUBCLASS).
 * @protocol: protocol (%SRPT_IO_PROTOCOL).
 * @protocol_version: protocol version.
 * @rsvd36: reserved in this revision (once service connections and
 *	initiators supported).
 * @send_queue_depth: maximum number of outstanding sends to the IOC.
 * @rsvd42: reserved.
 * @rdma_read_depth: maximum RDMA reads in flight per channel.
 * @send_size: largest request message the IOC accepts.
 * @rdma_size: largest single RDMA transfer.
 * @op_cap_mask: supported operation types (%SRPT_OPCAP_*).
 * @svc_cap_mask: service capabilities.
 * @num_svc_entries: number of ServiceEntries of this IOC.
 * @rsvd55: reserved.
 * @id_string: NUL-padded text identifying the controller.
 *
 * Grouped as in the specification: identity, what the controller speaks,
 * its limits and capabilities, its name. Members are aligned, so __packed
 * only keeps the compiler from padding the end.
 */
struct srpt_dm_ioc_profile {
	__be64	guid;
	__be32	vendor_id, device_id;
	__be16	device_version;
	u8	rsvd18[2];
	__be32	subsys_vendor_id, subsys_device_id;

	__be16	io_class, io_subclass, protocol, protocol_version;
	u8	rsvd36[4];

	__be16	send_queue_depth;
	u8	rsvd42, rdma_read_depth;
	__be32	send_size, rdma_size;
	u8	op_cap_mask, svc_cap_mask, num_svc_entries;
	u8	rsvd55[9];

	char	id_string[64];
} __packed;

SRPT_DM_AT(srpt_dm_ioc_profile, vendor_id, 8);
SRPT_DM_AT(srpt_dm_ioc_profile, device_version, 16);
SRPT_DM_AT(srpt_dm_ioc_profile, subsys_vendor_id, 20);
SRPT_DM_AT(srpt_dm_ioc_profile, io_class, 28);
SRPT_DM_AT(srpt_dm_ioc_profile, protocol_version, 34);
SRPT_DM_AT(srpt_dm_ioc_profile, send_queue_depth, 40);
SRPT_DM_AT(srpt_dm_ioc_profile, rdma_read_depth, 43);
SRPT_DM_AT(srpt_dm_ioc_profile, send_size, 44);
SRPT_DM_AT(srpt_dm_ioc_profile, rdma_size, 48);
SRPT_DM_AT(srpt_dm_ioc_profile, op_cap_mask, 52);
SRPT_DM_AT(srpt_dm_ioc_profile, num_svc_entries, 54);
SRPT_DM_AT(srpt_dm_ioc_profile, id_string, 64);
static_assert(sizeof(struct srpt_dm_ioc_profile) == 128);

/**
 * struct srpt_dm_svc_entry - one ServiceEntry (IBA 16.3.3.5)
 * @name: service name, "SRP.T10:" followed by the id in hex for SRP.
 * @id: service identifier.
 */
struct srpt_dm_svc_entry {
	char	name[40];
	__be64	id;
} __packed;

SRPT_DM_AT(srpt_dm_svc_entry, id, 40);
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
