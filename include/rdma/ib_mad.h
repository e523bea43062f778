/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * InfiniBand management datagrams (MADs): wire layouts and the kernel API
 * of the MAD layer in ib_core.
 *
 * The file has three parts:
 *
 *  1. Numbers from the InfiniBand Architecture Specification (IBA) and the
 *     Omni-Path (OPA) extensions: base and class versions, management
 *     classes, methods, status codes, RMPP constants and header sizes.
 *  2. Wire structures.  Every multi-byte field is big endian and typed as
 *     such (__be16/__be32/__be64) so that sparse catches a missing
 *     conversion.  The size of every structure and the offsets that other
 *     code computes by hand are pinned with static_assert() right after the
 *     structure, so a layout change cannot go unnoticed.
 *  3. The agent API: a client registers an agent on one port and one
 *     special QP (QP0 for subnet management, QP1 for general services),
 *     allocates send buffers, posts them and gets exactly one completion
 *     callback per posted buffer; unsolicited MADs matching its
 *     registration and responses to its requests reach its receive
 *     callback.
 */

#ifndef IB_MAD_H
#define IB_MAD_H

#include <linux/build_bug.h>
#include <linux/list.h>
#include <linux/stddef.h>

#include <rdma/ib_verbs.h>
#include <uapi/rdma/ib_user_mad.h>

/* ---------------------------------------------------------------------
 * Part 1: protocol numbers
 * ---------------------------------------------------------------------
 */

/* BaseVersion of the common MAD header: 256-byte IB MADs, 2 KiB OPA MADs. */
#define IB_MGMT_BASE_VERSION			1
#define OPA_MGMT_BASE_VERSION			0x80

/* ClassVersion used by OPA subnet management (classes 0x01 and 0x81). */
#define OPA_SM_CLASS_VERSION			0x80

/* MgmtClass values. */
#define IB_MGMT_CLASS_SUBN_LID_ROUTED		0x01
#define IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE	0x81
#define IB_MGMT_CLASS_SUBN_ADM			0x03
#define IB_MGMT_CLASS_PERF_MGMT			0x04
#define IB_MGMT_CLASS_BM			0x05
#define IB_MGMT_CLASS_DEVICE_MGMT		0x06
#define IB_MGMT_CLASS_CM			0x07
#define IB_MGMT_CLASS_SNMP			0x08
#define IB_MGMT_CLASS_DEVICE_ADM		0x10
#define IB_MGMT_CLASS_BOOT_MGMT			0x11
#define IB_MGMT_CLASS_BIS			0x12
#define IB_MGMT_CLASS_CONG_MGMT			0x21
/*
 * Vendor classes 0x30-0x4f carry an IEEE OUI in their header
 * (struct ib_vendor_mad) and may use RMPP; an agent registering for one
 * of them must name the OUI it serves.
 */
#define IB_MGMT_CLASS_VENDOR_RANGE2_START	0x30
#define IB_MGMT_CLASS_VENDOR_RANGE2_END		0x4F

/* OUI of the OpenIB Alliance, used by OpenIB vendor-class MADs. */
#define IB_OPENIB_OUI				(0x001405)

/*
 * Method values.  A response method is its request method with
 * IB_MGMT_METHOD_RESP (bit 7) set.
 */
#define IB_MGMT_METHOD_GET			0x01
#define IB_MGMT_METHOD_SET			0x02
#define IB_MGMT_METHOD_GET_RESP			0x81
#define IB_MGMT_METHOD_SEND			0x03
#define IB_MGMT_METHOD_TRAP			0x05
#define IB_MGMT_METHOD_REPORT			0x06
#define IB_MGMT_METHOD_REPORT_RESP		0x86
#define IB_MGMT_METHOD_TRAP_REPRESS		0x07
#define IB_MGMT_METHOD_GET_TABLE		0x12

#define IB_MGMT_METHOD_RESP			0x80
/*
 * Baseboard management marks a response in bit 0 of the attribute
 * modifier instead of in the method (already in network byte order).
 */
#define IB_BM_ATTR_MOD_RESP			cpu_to_be32(1)

/* Number of method values a registration can select (bit 7 clear). */
#define IB_MGMT_MAX_METHODS			128

/* Values of the (host order) Status field of the common MAD header. */
#define IB_MGMT_MAD_STATUS_SUCCESS			0x0000
#define IB_MGMT_MAD_STATUS_BUSY				0x0001
#define IB_MGMT_MAD_STATUS_REDIRECT_REQD		0x0002
#define IB_MGMT_MAD_STATUS_BAD_VERSION			0x0004
#define IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD		0x0008
#define IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB	0x000c
#define IB_MGMT_MAD_STATUS_INVALID_ATTRIB_VALUE		0x001c

/* The only RMPP protocol version defined by the IBA. */
#define IB_MGMT_RMPP_VERSION			1

/* RMPPType: what an RMPP packet carries. */
#define IB_MGMT_RMPP_TYPE_DATA			1
#define IB_MGMT_RMPP_TYPE_ACK			2
#define IB_MGMT_RMPP_TYPE_STOP			3
#define IB_MGMT_RMPP_TYPE_ABORT			4

/* RMPPFlags, the low three bits of ib_rmpp_hdr.rmpp_rtime_flags. */
#define IB_MGMT_RMPP_FLAG_ACTIVE		0x1
#define IB_MGMT_RMPP_FLAG_FIRST			0x2
#define IB_MGMT_RMPP_FLAG_LAST			0x4

/* RRespTime value meaning "no response time given" (all five bits set). */
#define IB_MGMT_RMPP_NO_RESPTIME		0x1F

/*
 * RMPPStatus.  Values from IB_MGMT_RMPP_STATUS_ABORT_MIN up to
 * IB_MGMT_RMPP_STATUS_ABORT_MAX are only valid in ABORT packets.
 */
#define IB_MGMT_RMPP_STATUS_SUCCESS		0
#define IB_MGMT_RMPP_STATUS_RESX		1	/* resources exhausted */
#define IB_MGMT_RMPP_STATUS_ABORT_MIN		118
#define IB_MGMT_RMPP_STATUS_T2L			118	/* total time too long */
#define IB_MGMT_RMPP_STATUS_BAD_LEN		119	/* inconsistent PayloadLength */
#define IB_MGMT_RMPP_STATUS_BAD_SEG		120	/* inconsistent SegmentNumber */
#define IB_MGMT_RMPP_STATUS_BADT		121	/* illegal RMPPType */
#define IB_MGMT_RMPP_STATUS_W2S			122	/* NewWindowLast too small */
#define IB_MGMT_RMPP_STATUS_S2B			123	/* SegmentNumber too big */
#define IB_MGMT_RMPP_STATUS_BAD_STATUS		124	/* illegal RMPPStatus */
#define IB_MGMT_RMPP_STATUS_UNV			125	/* unsupported RMPPVersion */
#define IB_MGMT_RMPP_STATUS_TMR			126	/* too many retries */
#define IB_MGMT_RMPP_STATUS_UNSPEC		127	/* unspecified error */
#define IB_MGMT_RMPP_STATUS_ABORT_MAX		127

/*
 * Special QPs.  IB_QP1 is a __be32 because it is compared with and stored
 * into wire fields; IB_QP1_QKEY is the well-known Q_Key of QP1 and
 * IB_QP_SET_QKEY, used as a send Q_Key, tells the provider to take the
 * Q_Key from the QP's own attributes instead.
 */
#define IB_QP0		0
#define IB_QP1		cpu_to_be32(1)
#define IB_QP1_QKEY	0x80010000
#define IB_QP_SET_QKEY	0x80000000

/* Default P_Key, as limited (bit 15 clear) and full member. */
#define IB_DEFAULT_PKEY_PARTIAL 0x7FFF
#define IB_DEFAULT_PKEY_FULL	0xFFFF

/*
 * Notice/trap types for ib_mad_notice_attr.generic_type: the IsGeneric
 * bit (0x80) plus the 7-bit type.
 */
#define IB_NOTICE_TYPE_FATAL	0x80
#define IB_NOTICE_TYPE_URGENT	0x81
#define IB_NOTICE_TYPE_SECURITY	0x82
#define IB_NOTICE_TYPE_SM	0x83
#define IB_NOTICE_TYPE_INFO	0x84

/*
 * Producer types of generic notices (the low 16 bits of the 24-bit
 * ProducerType, kept in ib_mad_notice_attr.prod_type_lsb).
 */
#define IB_NOTICE_PROD_CA		cpu_to_be16(1)
#define IB_NOTICE_PROD_SWITCH		cpu_to_be16(2)
#define IB_NOTICE_PROD_ROUTER		cpu_to_be16(3)
#define IB_NOTICE_PROD_CLASS_MGR	cpu_to_be16(4)

/*
 * Byte counts of MAD headers and of the data that follows them.  Each
 * *_HDR value is the offset of the class data for that kind of MAD
 * (common header, plus RMPP header, plus class header) and each *_DATA
 * value is what is left of a 256-byte IB MAD (or a 2048-byte OPA MAD for
 * the OPA_* values).  The layouts below are checked against these.
 */
enum {
	IB_MGMT_MAD_HDR = 24,
	IB_MGMT_MAD_DATA = 232,
	IB_MGMT_RMPP_HDR = 36,
	IB_MGMT_RMPP_DATA = 220,
	IB_MGMT_VENDOR_HDR = 40,
	IB_MGMT_VENDOR_DATA = 216,
	IB_MGMT_SA_HDR = 56,
	IB_MGMT_SA_DATA = 200,
	IB_MGMT_DEVICE_HDR = 64,
	IB_MGMT_DEVICE_DATA = 192,
	IB_MGMT_MAD_SIZE = IB_MGMT_MAD_HDR + IB_MGMT_MAD_DATA,
	OPA_MGMT_MAD_DATA = 2024,
	OPA_MGMT_RMPP_DATA = 2012,
	OPA_MGMT_MAD_SIZE = IB_MGMT_MAD_HDR + OPA_MGMT_MAD_DATA,
};

/* ---------------------------------------------------------------------
 * Part 2: wire structures
 * ---------------------------------------------------------------------
 */

/**
 * struct ib_mad_hdr - common header at the start of every MAD
 * @base_version: layout of the MAD: %IB_MGMT_BASE_VERSION or
 *	%OPA_MGMT_BASE_VERSION.
 * @mgmt_class: management class (IB_MGMT_CLASS_*).
 * @class_version: version of the class-specific part.
 * @method: operation (IB_MGMT_METHOD_*); responses have bit 7 set.
 * @status: IB_MGMT_MAD_STATUS_* plus class-specific bits, in responses.
 * @class_specific: class-defined; directed-route SMPs keep their hop
 *	pointer and hop count here.
 * @tid: transaction ID.  The requester chooses it and the responder
 *	copies it into the response.  For requests sent through the MAD
 *	layer the upper 32 bits must be the sending agent's
 *	&ib_mad_agent.hi_tid so that the response finds its way back.
 * @attr_id: attribute the method operates on.
 * @resv: reserved, zero.
 * @attr_mod: attribute-specific modifier.
 */
struct ib_mad_hdr {
	u8	base_version;
	u8	mgmt_class;
	u8	class_version;
	u8	method;
	__be16	status;
	__be16	class_specific;
	__be64	tid;
	__be16	attr_id;
	__be16	resv;
	__be32	attr_mod;
};

static_assert(sizeof(struct ib_mad_hdr) == IB_MGMT_MAD_HDR);
static_assert(offsetof(struct ib_mad_hdr, status) == 4);
static_assert(offsetof(struct ib_mad_hdr, tid) == 8);
static_assert(offsetof(struct ib_mad_hdr, attr_id) == 16);
static_assert(offsetof(struct ib_mad_hdr, attr_mod) == 20);

/**
 * struct ib_rmpp_hdr - RMPP header, right after the common MAD header
 * @rmpp_version: RMPP protocol version, 0 when RMPP is not in use.
 * @rmpp_type: IB_MGMT_RMPP_TYPE_*.
 * @rmpp_rtime_flags: RRespTime in bits 7-3 and RMPPFlags in bits 2-0; use
 *	ib_get_rmpp_resptime(), ib_get_rmpp_flags() and their setters.
 * @rmpp_status: IB_MGMT_RMPP_STATUS_*.
 * @seg_num: DATA: number of this segment, counting from 1.  ACK: last
 *	segment received in order.
 * @paylen_newwin: DATA: in the first segment the total payload length,
 *	in the last segment the bytes it carries (class header included).
 *	ACK: the last segment the receiver is ready to accept.
 */
struct ib_rmpp_hdr {
	u8	rmpp_version;
	u8	rmpp_type;
	u8	rmpp_rtime_flags;
	u8	rmpp_status;
	__be32	seg_num;
	__be32	paylen_newwin;
};

static_assert(sizeof(struct ib_rmpp_hdr) == 12);
static_assert(offsetof(struct ib_rmpp_hdr, seg_num) == 4);
static_assert(offsetof(struct ib_rmpp_hdr, paylen_newwin) == 8);

/*
 * SA component mask: bit n says that component n of the attribute in an
 * SA query is significant.  It is kept in wire (big endian) order, hence
 * its own __bitwise type.
 */
typedef u64 __bitwise ib_sa_comp_mask;

/**
 * IB_SA_COMP_MASK - component-mask bit for component @n, in wire order
 * @n: component index, 0 to 63.
 */
#define IB_SA_COMP_MASK(n) ((__force ib_sa_comp_mask) cpu_to_be64(1ull << (n)))

/**
 * struct ib_sa_hdr - subnet administration class header
 * @sm_key: SM_Key proving the requester is trusted (0 for normal clients).
 * @attr_offset: size of one attribute record, in units of 8 bytes.
 * @reserved: reserved, zero.
 * @comp_mask: which components of the attribute are significant.
 *
 * On the wire this header starts at byte 36 of the MAD, so its 64-bit
 * fields are only 4-byte aligned.  The structure (and struct ib_sa_mad)
 * is packed so that 64-bit architectures do not insert padding.
 */
struct ib_sa_hdr {
	__be64			sm_key;
	__be16			attr_offset;
	__be16			reserved;
	ib_sa_comp_mask		comp_mask;
} __packed;

static_assert(sizeof(struct ib_sa_hdr) == IB_MGMT_SA_HDR - IB_MGMT_RMPP_HDR);
static_assert(offsetof(struct ib_sa_hdr, comp_mask) == 12);

/**
 * struct ib_mad - a 256-byte InfiniBand MAD
 * @mad_hdr: common MAD header.
 * @data: everything after the common header.
 */
struct ib_mad {
	struct ib_mad_hdr	mad_hdr;
	u8			data[IB_MGMT_MAD_DATA];
};

static_assert(sizeof(struct ib_mad) == IB_MGMT_MAD_SIZE);
static_assert(sizeof(struct ib_mad) == 256);
static_assert(offsetof(struct ib_mad, data) == IB_MGMT_MAD_HDR);

/**
 * struct opa_mad - a 2048-byte Omni-Path MAD
 * @mad_hdr: common MAD header (base version %OPA_MGMT_BASE_VERSION).
 * @data: everything after the common header.
 *
 * OPA MADs may be sent shorter than this; the structure gives the largest
 * size.
 */
struct opa_mad {
	struct ib_mad_hdr	mad_hdr;
	u8			data[OPA_MGMT_MAD_DATA];
};

static_assert(sizeof(struct opa_mad) == OPA_MGMT_MAD_SIZE);
static_assert(sizeof(struct opa_mad) == 2048);
static_assert(offsetof(struct opa_mad, data) == IB_MGMT_MAD_HDR);

/**
 * struct ib_rmpp_mad - an IB MAD of a class that uses RMPP
 * @mad_hdr: common MAD header.
 * @rmpp_hdr: RMPP header.
 * @data: class header and class data of this segment.
 */
struct ib_rmpp_mad {
	struct ib_mad_hdr	mad_hdr;
	struct ib_rmpp_hdr	rmpp_hdr;
	u8			data[IB_MGMT_RMPP_DATA];
};

static_assert(sizeof(struct ib_rmpp_mad) == IB_MGMT_MAD_SIZE);
static_assert(offsetof(struct ib_rmpp_mad, rmpp_hdr) == IB_MGMT_MAD_HDR);
static_assert(offsetof(struct ib_rmpp_mad, data) == IB_MGMT_RMPP_HDR);

/**
 * struct opa_rmpp_mad - an OPA MAD of a class that uses RMPP
 * @mad_hdr: common MAD header.
 * @rmpp_hdr: RMPP header.
 * @data: class header and class data of this segment.
 */
struct opa_rmpp_mad {
	struct ib_mad_hdr	mad_hdr;
	struct ib_rmpp_hdr	rmpp_hdr;
	u8			data[OPA_MGMT_RMPP_DATA];
};

static_assert(sizeof(struct opa_rmpp_mad) == OPA_MGMT_MAD_SIZE);
static_assert(offsetof(struct opa_rmpp_mad, rmpp_hdr) == IB_MGMT_MAD_HDR);
static_assert(offsetof(struct opa_rmpp_mad, data) == IB_MGMT_RMPP_HDR);

/**
 * struct ib_sa_mad - a subnet administration MAD
 * @mad_hdr: common MAD header.
 * @rmpp_hdr: RMPP header (SA responses may span several segments).
 * @sa_hdr: SA class header.
 * @data: attribute records.
 *
 * Packed for the same reason as struct ib_sa_hdr.
 */
struct ib_sa_mad {
	struct ib_mad_hdr	mad_hdr;
	struct ib_rmpp_hdr	rmpp_hdr;
	struct ib_sa_hdr	sa_hdr;
	u8			data[IB_MGMT_SA_DATA];
} __packed;

static_assert(sizeof(struct ib_sa_mad) == IB_MGMT_MAD_SIZE);
static_assert(offsetof(struct ib_sa_mad, rmpp_hdr) == IB_MGMT_MAD_HDR);
static_assert(offsetof(struct ib_sa_mad, sa_hdr) == IB_MGMT_RMPP_HDR);
static_assert(offsetof(struct ib_sa_mad, sa_hdr.comp_mask) == 48);
static_assert(offsetof(struct ib_sa_mad, data) == IB_MGMT_SA_HDR);

/**
 * struct ib_vendor_mad - a MAD of vendor class range 2 (0x30-0x4f)
 * @mad_hdr: common MAD header.
 * @rmpp_hdr: RMPP header.
 * @reserved: reserved, zero.
 * @oui: IEEE OUI of the vendor that defines the class, most significant
 *	byte first.
 * @data: vendor-defined data.
 */
struct ib_vendor_mad {
	struct ib_mad_hdr	mad_hdr;
	struct ib_rmpp_hdr	rmpp_hdr;
	u8			reserved;
	u8			oui[3];
	u8			data[IB_MGMT_VENDOR_DATA];
};

static_assert(sizeof(struct ib_vendor_mad) == IB_MGMT_MAD_SIZE);
static_assert(offsetof(struct ib_vendor_mad, rmpp_hdr) == IB_MGMT_MAD_HDR);
static_assert(offsetof(struct ib_vendor_mad, oui) == IB_MGMT_RMPP_HDR + 1);
static_assert(offsetof(struct ib_vendor_mad, data) == IB_MGMT_VENDOR_HDR);

/* AttributeID of ClassPortInfo, which every GSI class implements. */
#define IB_MGMT_CLASSPORTINFO_ATTR_ID	cpu_to_be16(0x0001)

/*
 * cap_mask2_resp_time packs CapabilityMask2 (upper 27 bits) and
 * RespTimeValue (lower 5 bits) into one 32-bit field.
 */
#define IB_CLASS_PORT_INFO_RESP_TIME_MASK	0x1F
#define IB_CLASS_PORT_INFO_RESP_TIME_FIELD_SIZE 5

/**
 * struct ib_class_port_info - the ClassPortInfo attribute (IB layout)
 * @base_version: highest base version the class manager supports.
 * @class_version: highest class version the class manager supports.
 * @capability_mask: class-independent and class-specific capabilities.
 * @cap_mask2_resp_time: CapabilityMask2 and RespTimeValue; use
 *	ib_get_cpi_capmask2(), ib_get_cpi_resp_time() and their setters.
 * @redirect_gid: GID requests should be redirected to.
 * @redirect_tcslfl: TClass (bits 31-24), SL (23-20) and flow label
 *	(19-0) of the redirect path.
 * @redirect_lid: LID to redirect to, 0 when not redirecting.
 * @redirect_pkey: P_Key to use after a redirect.
 * @redirect_qp: QP to redirect to, in the low 24 bits.
 * @redirect_qkey: Q_Key of the redirect QP.
 * @trap_gid: GID traps should be sent to.
 * @trap_tcslfl: TClass, SL and flow label for traps, packed as
 *	@redirect_tcslfl.
 * @trap_lid: LID traps should be sent to.
 * @trap_pkey: P_Key to send traps with.
 * @trap_hlqp: hop limit (bits 31-24) and QP (23-0) for traps.
 * @trap_qkey: Q_Key to send traps with.
 */
struct ib_class_port_info {
	u8			base_version;
	u8			class_version;
	__be16			capability_mask;
	__be32			cap_mask2_resp_time;
	u8			redirect_gid[16];
	__be32			redirect_tcslfl;
	__be16			redirect_lid;
	__be16			redirect_pkey;
	__be32			redirect_qp;
	__be32			redirect_qkey;
	u8			trap_gid[16];
	__be32			trap_tcslfl;
	__be16			trap_lid;
	__be16			trap_pkey;
	__be32			trap_hlqp;
	__be32			trap_qkey;
};

static_assert(sizeof(struct ib_class_port_info) == 72);
static_assert(offsetof(struct ib_class_port_info, cap_mask2_resp_time) == 4);
static_assert(offsetof(struct ib_class_port_info, redirect_gid) == 8);
static_assert(offsetof(struct ib_class_port_info, redirect_qkey) == 36);
static_assert(offsetof(struct ib_class_port_info, trap_gid) == 40);
static_assert(offsetof(struct ib_class_port_info, trap_qkey) == 68);

/**
 * enum ib_port_capability_mask_bits - PortInfo:CapabilityMask bits
 * @IB_PORT_SM: a subnet manager runs on this port.
 * @IB_PORT_NOTICE_SUP: the Notice attribute is supported.
 * @IB_PORT_TRAP_SUP: traps are supported.
 * @IB_PORT_OPT_IPD_SUP: optional inter-packet delay values are supported.
 * @IB_PORT_AUTO_MIGR_SUP: automatic path migration is supported.
 * @IB_PORT_SL_MAP_SUP: SL-to-VL mapping tables are supported.
 * @IB_PORT_MKEY_NVRAM: the M_Key is kept in non-volatile memory.
 * @IB_PORT_PKEY_NVRAM: the P_Key table is kept in non-volatile memory.
 * @IB_PORT_LED_INFO_SUP: LEDInfo is supported.
 * @IB_PORT_SM_DISABLED: an SM is present but disabled.
 * @IB_PORT_SYS_IMAGE_GUID_SUP: SystemImageGUID is supported.
 * @IB_PORT_PKEY_SW_EXT_PORT_TRAP_SUP: P_Key switch external port traps are
 *	supported.
 * @IB_PORT_EXTENDED_SPEEDS_SUP: extended link speeds are supported.
 * @IB_PORT_CAP_MASK2_SUP: PortInfo:CapabilityMask2 is valid.
 * @IB_PORT_CM_SUP: a communication manager is present.
 * @IB_PORT_SNMP_TUNNEL_SUP: SNMP tunnelling is supported.
 * @IB_PORT_REINIT_SUP: re-initialisation is supported.
 * @IB_PORT_DEVICE_MGMT_SUP: device management is supported.
 * @IB_PORT_VENDOR_CLASS_SUP: vendor classes are supported.
 * @IB_PORT_DR_NOTICE_SUP: directed-route notices are supported.
 * @IB_PORT_CAP_MASK_NOTICE_SUP: capability-mask change notices are
 *	supported.
 * @IB_PORT_BOOT_MGMT_SUP: boot management is supported.
 * @IB_PORT_LINK_LATENCY_SUP: link round-trip latency is measured.
 * @IB_PORT_CLIENT_REG_SUP: client reregistration is supported.
 * @IB_PORT_OTHER_LOCAL_CHANGES_SUP: "other local changes" notices are
 *	supported.
 * @IB_PORT_LINK_SPEED_WIDTH_TABLE_SUP: the link speed/width pairs table is
 *	supported.
 * @IB_PORT_VENDOR_SPECIFIC_MADS_TABLE_SUP: the vendor-specific MADs table
 *	is supported.
 * @IB_PORT_MCAST_PKEY_TRAP_SUPPRESSION_SUP: multicast P_Key trap
 *	suppression is supported.
 * @IB_PORT_MCAST_FDB_TOP_SUP: MulticastFDBTop is supported.
 * @IB_PORT_HIERARCHY_INFO_SUP: HierarchyInfo is supported.
 */
enum ib_port_capability_mask_bits {
	IB_PORT_SM = 1 << 1,
	IB_PORT_NOTICE_SUP = 1 << 2,
	IB_PORT_TRAP_SUP = 1 << 3,
	IB_PORT_OPT_IPD_SUP = 1 << 4,
	IB_PORT_AUTO_MIGR_SUP = 1 << 5,
	IB_PORT_SL_MAP_SUP = 1 << 6,
	IB_PORT_MKEY_NVRAM = 1 << 7,
	IB_PORT_PKEY_NVRAM = 1 << 8,
	IB_PORT_LED_INFO_SUP = 1 << 9,
	IB_PORT_SM_DISABLED = 1 << 10,
	IB_PORT_SYS_IMAGE_GUID_SUP = 1 << 11,
	IB_PORT_PKEY_SW_EXT_PORT_TRAP_SUP = 1 << 12,
	IB_PORT_EXTENDED_SPEEDS_SUP = 1 << 14,
	IB_PORT_CAP_MASK2_SUP = 1 << 15,
	IB_PORT_CM_SUP = 1 << 16,
	IB_PORT_SNMP_TUNNEL_SUP = 1 << 17,
	IB_PORT_REINIT_SUP = 1 << 18,
	IB_PORT_DEVICE_MGMT_SUP = 1 << 19,
	IB_PORT_VENDOR_CLASS_SUP = 1 << 20,
	IB_PORT_DR_NOTICE_SUP = 1 << 21,
	IB_PORT_CAP_MASK_NOTICE_SUP = 1 << 22,
	IB_PORT_BOOT_MGMT_SUP = 1 << 23,
	IB_PORT_LINK_LATENCY_SUP = 1 << 24,
	IB_PORT_CLIENT_REG_SUP = 1 << 25,
	IB_PORT_OTHER_LOCAL_CHANGES_SUP = 1 << 26,
	IB_PORT_LINK_SPEED_WIDTH_TABLE_SUP = 1 << 27,
	IB_PORT_VENDOR_SPECIFIC_MADS_TABLE_SUP = 1 << 28,
	IB_PORT_MCAST_PKEY_TRAP_SUPPRESSION_SUP = 1 << 29,
	IB_PORT_MCAST_FDB_TOP_SUP = 1 << 30,
	IB_PORT_HIERARCHY_INFO_SUP = 1ULL << 31,
};

/**
 * enum ib_port_capability_mask2_bits - PortInfo:CapabilityMask2 bits
 * @IB_PORT_SET_NODE_DESC_SUP: NodeDescription can be set.
 * @IB_PORT_EX_PORT_INFO_EX_SUP: PortInfoExtended is supported.
 * @IB_PORT_VIRT_SUP: virtualization is supported.
 * @IB_PORT_SWITCH_PORT_STATE_TABLE_SUP: the switch port state table is
 *	supported.
 * @IB_PORT_LINK_WIDTH_2X_SUP: 2x link width is supported.
 * @IB_PORT_LINK_SPEED_HDR_SUP: HDR link speed is supported.
 * @IB_PORT_LINK_SPEED_NDR_SUP: NDR link speed is supported.
 * @IB_PORT_EXTENDED_SPEEDS2_SUP: the second set of extended link speeds
 *	is supported.
 * @IB_PORT_LINK_SPEED_XDR_SUP: XDR link speed is supported.
 */
enum ib_port_capability_mask2_bits {
	IB_PORT_SET_NODE_DESC_SUP		= 1 << 0,
	IB_PORT_EX_PORT_INFO_EX_SUP		= 1 << 1,
	IB_PORT_VIRT_SUP			= 1 << 2,
	IB_PORT_SWITCH_PORT_STATE_TABLE_SUP	= 1 << 3,
	IB_PORT_LINK_WIDTH_2X_SUP		= 1 << 4,
	IB_PORT_LINK_SPEED_HDR_SUP		= 1 << 5,
	IB_PORT_LINK_SPEED_NDR_SUP		= 1 << 10,
	IB_PORT_EXTENDED_SPEEDS2_SUP		= 1 << 11,
	IB_PORT_LINK_SPEED_XDR_SUP		= 1 << 12,
};

/* OPA ClassPortInfo capability: the class manager supports PathRecord. */
#define OPA_CLASS_PORT_INFO_PR_SUPPORT BIT(26)

/**
 * struct opa_class_port_info - the ClassPortInfo attribute (OPA layout)
 * @base_version: highest base version the class manager supports.
 * @class_version: highest class version the class manager supports.
 * @cap_mask: capability mask.
 * @cap_mask2_resp_time: CapabilityMask2 (upper 27 bits) and RespTimeValue
 *	(lower 5 bits); see opa_get_cpi_capmask2().
 * @redirect_gid: GID to redirect requests to.
 * @redirect_tc_fl: traffic class and flow label of the redirect path.
 * @redirect_lid: 32-bit LID to redirect to.
 * @redirect_sl_qp: SL (upper bits) and QP (lower 24 bits) to redirect to.
 * @redirect_qkey: Q_Key of the redirect QP.
 * @trap_gid: GID traps should be sent to.
 * @trap_tc_fl: traffic class and flow label for traps.
 * @trap_lid: 32-bit LID traps should be sent to.
 * @trap_hl_qp: hop limit (upper 8 bits) and QP (lower 24 bits) for traps.
 * @trap_qkey: Q_Key to send traps with.
 * @trap_pkey: P_Key to send traps with.
 * @redirect_pkey: P_Key to use after a redirect.
 * @trap_sl_rsvd: SL for traps in the upper 5 bits.
 * @reserved: reserved, zero.
 */
struct opa_class_port_info {
	u8 base_version;
	u8 class_version;
	__be16 cap_mask;
	__be32 cap_mask2_resp_time;

	u8 redirect_gid[16];
	__be32 redirect_tc_fl;
	__be32 redirect_lid;
	__be32 redirect_sl_qp;
	__be32 redirect_qkey;

	u8 trap_gid[16];
	__be32 trap_tc_fl;
	__be32 trap_lid;
	__be32 trap_hl_qp;
	__be32 trap_qkey;

	__be16 trap_pkey;
	__be16 redirect_pkey;

	u8 trap_sl_rsvd;
	u8 reserved[3];
} __packed;

static_assert(sizeof(struct opa_class_port_info) == 80);
static_assert(offsetof(struct opa_class_port_info, cap_mask2_resp_time) == 4);
static_assert(offsetof(struct opa_class_port_info, redirect_gid) == 8);
static_assert(offsetof(struct opa_class_port_info, trap_gid) == 40);
static_assert(offsetof(struct opa_class_port_info, trap_pkey) == 72);
static_assert(offsetof(struct opa_class_port_info, trap_sl_rsvd) == 76);

/**
 * ib_get_cpi_resp_time() - read RespTimeValue from an IB ClassPortInfo
 * @cpi: ClassPortInfo attribute, in wire format.
 *
 * RespTimeValue sits in the five low bits of @cpi->cap_mask2_resp_time.
 * It encodes the class manager's response time as 4.096 us * 2^value.
 *
 * Context: Any context.
 * Return: RespTimeValue, 0 to 31.
 */
static inline u8 ib_get_cpi_resp_time(struct ib_class_port_info *cpi)
{
	u32 word = be32_to_cpu(cpi->cap_mask2_resp_time);

	return (u8)(word & IB_CLASS_PORT_INFO_RESP_TIME_MASK);
}

/**
 * ib_set_cpi_resp_time() - store RespTimeValue in an IB ClassPortInfo
 * @cpi: ClassPortInfo attribute, in wire format.
 * @rtime: new RespTimeValue; only its five low bits are used.
 *
 * CapabilityMask2, which shares the 32-bit field, is left unchanged.
 *
 * Context: Any context.
 */
static inline void ib_set_cpi_resp_time(struct ib_class_port_info *cpi,
					u8 rtime)
{
	u32 word = be32_to_cpu(cpi->cap_mask2_resp_time);

	word &= ~(u32)IB_CLASS_PORT_INFO_RESP_TIME_MASK;
	word |= rtime & IB_CLASS_PORT_INFO_RESP_TIME_MASK;
	cpi->cap_mask2_resp_time = cpu_to_be32(word);
}

/**
 * ib_get_cpi_capmask2() - read CapabilityMask2 from an IB ClassPortInfo
 * @cpi: ClassPortInfo attribute, in wire format.
 *
 * CapabilityMask2 occupies the 27 high bits of
 * @cpi->cap_mask2_resp_time; the value is returned shifted down to bit 0.
 *
 * Context: Any context.
 * Return: CapabilityMask2, in host byte order.
 */
static inline u32 ib_get_cpi_capmask2(struct ib_class_port_info *cpi)
{
	u32 word = be32_to_cpu(cpi->cap_mask2_resp_time);

	return word >> IB_CLASS_PORT_INFO_RESP_TIME_FIELD_SIZE;
}

/**
 * ib_set_cpi_capmask2() - store CapabilityMask2 in an IB ClassPortInfo
 * @cpi: ClassPortInfo attribute, in wire format.
 * @capmask2: new CapabilityMask2 in host order; bits above bit 26 do not
 *	fit the field and are dropped.
 *
 * RespTimeValue, which shares the 32-bit field, is left unchanged.
 *
 * Context: Any context.
 */
static inline void ib_set_cpi_capmask2(struct ib_class_port_info *cpi,
				       u32 capmask2)
{
	u32 word = be32_to_cpu(cpi->cap_mask2_resp_time);

	word &= IB_CLASS_PORT_INFO_RESP_TIME_MASK;
	word |= capmask2 << IB_CLASS_PORT_INFO_RESP_TIME_FIELD_SIZE;
	cpi->cap_mask2_resp_time = cpu_to_be32(word);
}

/**
 * opa_get_cpi_capmask2() - read CapabilityMask2 from an OPA ClassPortInfo
 * @cpi: OPA ClassPortInfo attribute, in wire format.
 *
 * Same packing as the IB attribute: CapabilityMask2 is the 27 high bits of
 * @cpi->cap_mask2_resp_time.
 *
 * Context: Any context.
 * Return: CapabilityMask2, in host byte order.
 */
static inline u32 opa_get_cpi_capmask2(struct opa_class_port_info *cpi)
{
	u32 word = be32_to_cpu(cpi->cap_mask2_resp_time);

	return word >> IB_CLASS_PORT_INFO_RESP_TIME_FIELD_SIZE;
}

/**
 * struct ib_mad_notice_attr - the Notice attribute (traps and notices)
 * @generic_type: IsGeneric flag (bit 7) and notice type (IB_NOTICE_TYPE_*).
 * @prod_type_msb: bits 23-16 of ProducerType (generic notices) or of the
 *	VendorID (vendor notices).
 * @prod_type_lsb: bits 15-0 of the same field (IB_NOTICE_PROD_*).
 * @trap_num: trap number (generic) or device ID (vendor).
 * @issuer_lid: LID of the port that issued the notice.
 * @toggle_count: NoticeToggle (bit 15) and NoticeCount (bits 14-0).
 * @details: the 54 bytes of DataDetails, laid out per trap number.
 * @details.raw_data: DataDetails as plain bytes.
 * @details.raw_data.details: the bytes.
 * @details.ntc_129_131: traps 129-131, link integrity, buffer overrun and
 *	flow control watchdog errors on a port.
 * @details.ntc_129_131.reserved: reserved, zero.
 * @details.ntc_129_131.lid: LID of the node where the error happened.
 * @details.ntc_129_131.port_num: port where the error happened.
 * @details.ntc_144: trap 144, a port's capability mask or other local
 *	state changed.
 * @details.ntc_144.reserved: reserved, zero.
 * @details.ntc_144.lid: LID of the port that changed.
 * @details.ntc_144.reserved2: reserved, zero.
 * @details.ntc_144.local_changes: bit 0 set when other local changes
 *	occurred.
 * @details.ntc_144.new_cap_mask: the new capability mask.
 * @details.ntc_144.reserved3: reserved, zero.
 * @details.ntc_144.change_flags: which attributes changed (3 low bits).
 * @details.ntc_145: trap 145, a system image GUID changed.
 * @details.ntc_145.reserved: reserved, zero.
 * @details.ntc_145.lid: LID of the port whose system GUID changed.
 * @details.ntc_145.reserved2: reserved, zero.
 * @details.ntc_145.new_sys_guid: the new system image GUID.
 * @details.ntc_256: trap 256, an SMP carried a bad M_Key.
 * @details.ntc_256.reserved: reserved, zero.
 * @details.ntc_256.lid: LID of the port that saw the bad M_Key.
 * @details.ntc_256.dr_slid: DrSLID of the offending SMP.
 * @details.ntc_256.method: method of the offending SMP.
 * @details.ntc_256.reserved2: reserved, zero.
 * @details.ntc_256.attr_id: attribute ID of the offending SMP.
 * @details.ntc_256.attr_mod: attribute modifier of the offending SMP.
 * @details.ntc_256.mkey: M_Key the offending SMP carried.
 * @details.ntc_256.reserved3: reserved, zero.
 * @details.ntc_256.dr_trunc_hop: DR notice flag and hop pointer.
 * @details.ntc_256.dr_rtn_path: return path of a directed-route SMP.
 * @details.ntc_257_258: traps 257 and 258, bad P_Key or Q_Key.
 * @details.ntc_257_258.reserved: reserved, zero.
 * @details.ntc_257_258.lid1: LID of the requester.
 * @details.ntc_257_258.lid2: LID of the responder.
 * @details.ntc_257_258.key: the rejected P_Key or Q_Key.
 * @details.ntc_257_258.sl_qp1: SL (bits 31-28) and requester QP (23-0).
 * @details.ntc_257_258.qp2: responder QP (bits 23-0).
 * @details.ntc_257_258.gid1: GID of the requester.
 * @details.ntc_257_258.gid2: GID of the responder.
 *
 * This structure stops after DataDetails; the IssuerGID that follows it
 * in a full Notice attribute is not part of it.
 */
struct ib_mad_notice_attr {
	u8 generic_type;
	u8 prod_type_msb;
	__be16 prod_type_lsb;
	__be16 trap_num;
	__be16 issuer_lid;
	__be16 toggle_count;

	union {
		struct {
			u8	details[54];
		} raw_data;

		struct {
			__be16	reserved;
			__be16	lid;
			u8	port_num;
		} __packed ntc_129_131;

		struct {
			__be16	reserved;
			__be16	lid;
			u8	reserved2;
			u8	local_changes;
			__be32	new_cap_mask;
			u8	reserved3;
			u8	change_flags;
		} __packed ntc_144;

		struct {
			__be16	reserved;
			__be16	lid;
			__be16	reserved2;
			__be64	new_sys_guid;
		} __packed ntc_145;

		struct {
			__be16	reserved;
			__be16	lid;
			__be16	dr_slid;
			u8	method;
			u8	reserved2;
			__be16	attr_id;
			__be32	attr_mod;
			__be64	mkey;
			u8	reserved3;
			u8	dr_trunc_hop;
			u8	dr_rtn_path[30];
		} __packed ntc_256;

		struct {
			__be16		reserved;
			__be16		lid1;
			__be16		lid2;
			__be32		key;
			__be32		sl_qp1;
			__be32		qp2;
			union ib_gid	gid1;
			union ib_gid	gid2;
		} __packed ntc_257_258;

	} details;
};

static_assert(sizeof(struct ib_mad_notice_attr) == 64);
static_assert(offsetof(struct ib_mad_notice_attr, details) == 10);
static_assert(sizeof_field(struct ib_mad_notice_attr, details) == 54);
static_assert(offsetof(struct ib_mad_notice_attr,
		       details.ntc_144.new_cap_mask) == 16);
static_assert(offsetof(struct ib_mad_notice_attr,
		       details.ntc_145.new_sys_guid) == 16);
static_assert(offsetof(struct ib_mad_notice_attr,
		       details.ntc_256.mkey) == 24);
static_assert(offsetof(struct ib_mad_notice_attr,
		       details.ntc_256.dr_rtn_path) == 34);
static_assert(offsetof(struct ib_mad_notice_attr,
		       details.ntc_257_258.gid1) == 28);
static_assert(offsetof(struct ib_mad_notice_attr,
		       details.ntc_257_258.gid2) == 44);

/**
 * ib_get_rmpp_resptime() - read RRespTime from an RMPP header
 * @rmpp_hdr: RMPP header, in wire format.
 *
 * RRespTime is the five high bits of @rmpp_hdr->rmpp_rtime_flags; it
 * encodes the sender's expected response time like RespTimeValue, and
 * %IB_MGMT_RMPP_NO_RESPTIME means none was given.
 *
 * Context: Any context.
 * Return: RRespTime, 0 to 31.
 */
static inline u8 ib_get_rmpp_resptime(struct ib_rmpp_hdr *rmpp_hdr)
{
	return rmpp_hdr->rmpp_rtime_flags >> 3;
}

/**
 * ib_get_rmpp_flags() - read RMPPFlags from an RMPP header
 * @rmpp_hdr: RMPP header, in wire format.
 *
 * Context: Any context.
 * Return: the three flag bits, a combination of %IB_MGMT_RMPP_FLAG_ACTIVE,
 * %IB_MGMT_RMPP_FLAG_FIRST and %IB_MGMT_RMPP_FLAG_LAST.
 */
static inline u8 ib_get_rmpp_flags(struct ib_rmpp_hdr *rmpp_hdr)
{
	return rmpp_hdr->rmpp_rtime_flags & 0x7;
}

/**
 * ib_set_rmpp_resptime() - store RRespTime in an RMPP header
 * @rmpp_hdr: RMPP header, in wire format.
 * @rtime: new RRespTime; only its five low bits fit the field.
 *
 * The RMPPFlags bits sharing the byte are kept.
 *
 * Context: Any context.
 */
static inline void ib_set_rmpp_resptime(struct ib_rmpp_hdr *rmpp_hdr, u8 rtime)
{
	u8 flags = ib_get_rmpp_flags(rmpp_hdr);

	rmpp_hdr->rmpp_rtime_flags = flags | (u8)(rtime << 3);
}

/**
 * ib_set_rmpp_flags() - store RMPPFlags in an RMPP header
 * @rmpp_hdr: RMPP header, in wire format.
 * @flags: new flags (IB_MGMT_RMPP_FLAG_*); only the three low bits are
 *	used.
 *
 * The RRespTime bits sharing the byte are kept.
 *
 * Context: Any context.
 */
static inline void ib_set_rmpp_flags(struct ib_rmpp_hdr *rmpp_hdr, u8 flags)
{
	u8 rtime_bits = rmpp_hdr->rmpp_rtime_flags & 0xF8;

	rmpp_hdr->rmpp_rtime_flags = rtime_bits | (flags & 0x7);
}

/* ---------------------------------------------------------------------
 * Part 3: the MAD agent API
 * ---------------------------------------------------------------------
 */

struct ib_mad_agent;
struct ib_mad_send_wc;
struct ib_mad_recv_wc;

/**
 * struct ib_mad_send_buf - a MAD to send, with its send parameters
 * @next: next buffer of a chain handed to one ib_post_send_mad() call,
 *	NULL at the end.
 * @mad: the MAD.  Without RMPP this is the whole message (@hdr_len bytes
 *	of headers followed by the data).  With RMPP it holds only the
 *	@hdr_len bytes of headers (common, RMPP and class header); the class
 *	data lives in @seg_count segments reached with ib_get_rmpp_segment().
 * @mad_agent: agent that allocated the buffer and will complete it.
 * @ah: address handle of the destination.  The caller sets it before
 *	posting and keeps it alive until the send handler has run.
 * @context: two pointers for the caller; the MAD layer never reads them.
 * @hdr_len: bytes of headers at the start of @mad.
 * @data_len: bytes of class data requested at allocation, without the
 *	padding added to fill the last MAD or segment.
 * @seg_count: number of RMPP data segments, 0 for a non-RMPP send.
 * @seg_size: class-data bytes in each RMPP segment (MAD size minus
 *	@hdr_len).
 * @seg_rmpp_size: bytes after the RMPP header in each segment, that is
 *	class header plus class data (MAD size minus %IB_MGMT_RMPP_HDR).
 * @timeout_ms: how long to wait for a response once the send has
 *	completed on the wire.  0 means no response is expected and the
 *	buffer completes as soon as it is sent.  On an agent without a
 *	receive handler nothing is ever matched to the send: it is resent
 *	@retries times, a @timeout_ms apart, and then completes with
 *	%IB_WC_RESP_TIMEOUT_ERR, unless ib_modify_mad() or ib_cancel_mad()
 *	changes that first (the IB CM sends its REP this way and cancels it
 *	when the RTU arrives).
 * @retries: on posting, how often the MAD may be resent when no response
 *	arrives in time (per window for RMPP).  When the send handler runs,
 *	the number of resends that were actually made.
 *
 * Buffers come from ib_create_send_mad() and go back with
 * ib_free_send_mad().  The caller fills in the MAD itself, except for
 * the RMPP header of an RMPP send, which the MAD layer maintains.  Bytes
 * allocated beyond @data_len are padding and are sent as zeros.
 */
struct ib_mad_send_buf {
	struct ib_mad_send_buf	*next;
	void			*mad;
	struct ib_mad_agent	*mad_agent;
	struct ib_ah		*ah;
	void			*context[2];
	int			hdr_len;
	int			data_len;
	int			seg_count;
	int			seg_size;
	int			seg_rmpp_size;
	int			timeout_ms;
	int			retries;
};

/**
 * ib_response_mad() - tell whether a MAD is a response
 * @hdr: common header of the MAD, in wire format.
 *
 * A MAD counts as a response when its method has %IB_MGMT_METHOD_RESP
 * set, when it is a TrapRepress (which answers a Trap), or when it is a
 * baseboard management MAD whose attribute modifier has
 * %IB_BM_ATTR_MOD_RESP set.  The MAD layer uses this to route received
 * MADs: responses go to the agent that sent the request, everything else
 * to the agent registered for the class and method.
 *
 * Context: Any context.
 * Return: non-zero for a response, 0 otherwise.
 */
int ib_response_mad(const struct ib_mad_hdr *hdr);

/**
 * typedef ib_mad_send_handler - completion callback for a posted send
 * @mad_agent: agent the buffer was posted on.
 * @mad_send_wc: which buffer completed and how.
 *
 * Runs exactly once for every buffer that ib_post_send_mad() accepted, and
 * never for one it refused.  The status in @mad_send_wc is
 * %IB_WC_SUCCESS when the MAD was sent and, if a response was expected,
 * the response arrived; %IB_WC_RESP_TIMEOUT_ERR when all retries ran out
 * without a response; %IB_WC_WR_FLUSH_ERR when the send was cancelled or
 * the agent is going away; or the provider's error status when the send
 * itself failed (an RMPP transfer aborted by the peer also ends here with
 * an error status).  Completions arrive in no particular order, and the
 * receive handler for a matched response runs before this one.
 *
 * From the call on, the buffer belongs to the caller again: the handler
 * may free it with ib_free_send_mad() or post it again.
 *
 * Context: Process context, with no MAD layer lock held.  May sleep.
 */
typedef void (*ib_mad_send_handler)(struct ib_mad_agent *mad_agent,
				    struct ib_mad_send_wc *mad_send_wc);

/**
 * typedef ib_mad_recv_handler - callback for a received MAD
 * @mad_agent: agent the MAD is delivered to.
 * @send_buf: the send buffer of the request this MAD answers, when it is
 *	a response matched to one of the agent's outstanding requests;
 *	NULL otherwise.
 * @mad_recv_wc: the received MAD and its completion information.
 *
 * Unsolicited MADs arrive here when they match the agent's registration.
 * A response arrives here when its TID carries the agent's
 * &ib_mad_agent.hi_tid and it matches an outstanding request by TID,
 * class and source address; other responses are dropped, except that an
 * %IB_MAD_USER_RMPP agent also gets unmatched RMPP segments, with a NULL
 * @send_buf.  A matched response is delivered before the send handler of
 * its request runs, so @send_buf is still valid during the call.
 *
 * The handler owns @mad_recv_wc and all its buffers and must release
 * them, now or later, with ib_free_recv_mad().
 *
 * Context: Process context, with no MAD layer lock held.  May sleep.
 */
typedef void (*ib_mad_recv_handler)(struct ib_mad_agent *mad_agent,
				    struct ib_mad_send_buf *send_buf,
				    struct ib_mad_recv_wc *mad_recv_wc);

/*
 * Registration flag: the agent runs RMPP itself (as ib_umad does for
 * user space), so the MAD layer passes RMPP segments through one by one
 * instead of segmenting and reassembling them.  Same value as the uapi
 * flag of ib_user_mad.h.
 */
enum {
	IB_MAD_USER_RMPP = IB_USER_MAD_USER_RMPP,
};

/**
 * struct ib_mad_agent - a client's registration with the MAD layer
 * @device: device the agent is registered on.
 * @qp: special QP (QP0 or QP1) the agent sends and receives on.
 * @recv_handler: callback for received MADs, may be NULL for an agent
 *	that only sends: its sends may still wait (see
 *	&ib_mad_send_buf.timeout_ms), but no MAD is ever delivered to it.
 * @send_handler: callback for completed sends.
 * @context: the caller's pointer from registration.
 * @hi_tid: 24-bit number unique to this agent.  The upper 32 bits of the
 *	TID of every request the agent sends must be this value, which
 *	is how responses are routed back to it.  Values stay below 2^24
 *	because mlx4 reuses the top TID byte for its own routing.
 * @flags: registration flags (%IB_MAD_USER_RMPP).
 * @security: LSM security blob of the agent.
 * @mad_agent_sec_list: entry in the security code's list of QP0 agents,
 *	whose SMP permission is re-evaluated when policy changes.
 * @port_num: port the agent is registered on.
 * @rmpp_version: RMPP version the agent uses, 0 for none.
 * @smp_allowed: cached LSM decision whether this QP0 agent may send and
 *	receive SMPs; read and written with READ_ONCE()/WRITE_ONCE().
 *
 * The MAD layer fills this in; clients only read it.
 */
struct ib_mad_agent {
	struct ib_device	*device;
	struct ib_qp		*qp;
	ib_mad_recv_handler	recv_handler;
	ib_mad_send_handler	send_handler;
	void			*context;
	u32			hi_tid;
	u32			flags;
	void			*security;
	struct list_head	mad_agent_sec_list;
	u8			port_num;
	u8			rmpp_version;
	bool			smp_allowed;
};

/**
 * struct ib_mad_send_wc - completion of a posted send
 * @send_buf: the buffer that completed.
 * @status: %IB_WC_SUCCESS or the reason it failed (see
 *	&typedef ib_mad_send_handler).
 * @vendor_err: provider-specific error detail for a failed send, else 0.
 */
struct ib_mad_send_wc {
	struct ib_mad_send_buf	*send_buf;
	enum ib_wc_status	status;
	u32			vendor_err;
};

/**
 * struct ib_mad_recv_buf - one received MAD (or one RMPP segment)
 * @list: entry in &ib_mad_recv_wc.rmpp_list.
 * @grh: the global route header that came with the MAD.  Only meaningful
 *	when the work completion has %IB_WC_GRH set.
 * @mad: the MAD, for IB-sized MADs.
 * @opa_mad: the same pointer, for OPA MADs.
 */
struct ib_mad_recv_buf {
	struct list_head	list;
	struct ib_grh		*grh;
	union {
		struct ib_mad	*mad;
		struct opa_mad	*opa_mad;
	};
};

/**
 * struct ib_mad_recv_wc - a received MAD as handed to a receive handler
 * @wc: completion of the receive: source LID and QP, P_Key index, flags.
 * @recv_buf: the first (or only) buffer of the MAD.
 * @rmpp_list: all buffers of the MAD in segment order, @recv_buf first.
 *	A MAD that was not reassembled has only @recv_buf on it.
 * @mad_len: length of the whole MAD with the headers counted once.
 * @mad_seg_size: size of each buffer on @rmpp_list: 256 bytes for IB
 *	MADs, 2048 for OPA MADs.
 */
struct ib_mad_recv_wc {
	struct ib_wc		*wc;
	struct ib_mad_recv_buf	recv_buf;
	struct list_head	rmpp_list;
	int			mad_len;
	size_t			mad_seg_size;
};

/**
 * struct ib_mad_reg_req - which unsolicited MADs an agent wants
 * @mgmt_class: management class to receive.  Must not be 0; classes
 *	%IB_MGMT_CLASS_SUBN_LID_ROUTED and
 *	%IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE only on QP0, all others only on
 *	QP1.
 * @mgmt_class_version: class version to receive.
 * @oui: IEEE OUI, required (non-zero) for vendor range 2 classes and
 *	ignored for all other classes.
 * @method_mask: one bit per method value to receive.
 *
 * A class, version, method (and OUI) combination can belong to only one
 * agent per port and QP; a registration overlapping an existing one is
 * refused.
 */
struct ib_mad_reg_req {
	u8	mgmt_class;
	u8	mgmt_class_version;
	u8	oui[3];
	DECLARE_BITMAP(method_mask, IB_MGMT_MAX_METHODS);
};

/**
 * ib_register_mad_agent() - register a client to send and receive MADs
 * @device: device to register on.
 * @port_num: port of @device to register on.
 * @qp_type: %IB_QPT_SMI for QP0 (subnet management) or %IB_QPT_GSI for
 *	QP1 (general services).
 * @mad_reg_req: unsolicited MADs the agent wants, copied by the call.
 *	NULL for an agent that only sends, and receives no more than the
 *	responses to its own requests.
 * @rmpp_version: %IB_MGMT_RMPP_VERSION if the agent sends or receives
 *	RMPP MADs, 0 if it does not.  Only classes that define RMPP (see
 *	ib_is_mad_class_rmpp()) may use it.
 * @send_handler: callback for completed sends; required without
 *	@mad_reg_req.
 * @recv_handler: callback for received MADs; required with @mad_reg_req
 *	and for posting sends that wait for a response.
 * @context: pointer stored in &ib_mad_agent.context.
 * @registration_flags: 0 or %IB_MAD_USER_RMPP; the latter requires
 *	@mad_reg_req.
 *
 * On success the agent has its own &ib_mad_agent.hi_tid, and MADs matching
 * @mad_reg_req start arriving at @recv_handler at once, possibly before
 * this function returns to the caller.
 *
 * Context: Process context.  May sleep.
 * Return: the new agent, or an ERR_PTR(): -EINVAL for an invalid request
 * (bad QP type, RMPP version, class, class version, missing OUI or
 * handler, class not allowed on the QP, or methods already taken by
 * another agent), -EPROTONOSUPPORT when the port has no such QP (for
 * example no QP0 on RoCE), -ENODEV for an unknown port, -ENOMEM, or the
 * error of the security check.  Never NULL.
 */
struct ib_mad_agent *ib_register_mad_agent(struct ib_device *device,
					   u32 port_num,
					   enum ib_qp_type qp_type,
					   struct ib_mad_reg_req *mad_reg_req,
					   u8 rmpp_version,
					   ib_mad_send_handler send_handler,
					   ib_mad_recv_handler recv_handler,
					   void *context,
					   u32 registration_flags);

/**
 * ib_unregister_mad_agent() - end a client's registration
 * @mad_agent: agent returned by ib_register_mad_agent().
 *
 * Stops delivery of new MADs to the agent and cancels its outstanding
 * sends, whose send handler then runs with %IB_WC_WR_FLUSH_ERR.  The call
 * then sleeps until every handler of the agent has returned and every
 * send buffer ever created for the agent has been released with
 * ib_free_send_mad(), so the caller must not hold on to such buffers (nor
 * call this from one of the agent's own handlers).  Received MADs already
 * handed to the client stay valid until it frees them.
 *
 * When the call returns no handler of the agent runs any more and
 * @mad_agent is freed.
 *
 * Context: Process context.  Sleeps.
 */
void ib_unregister_mad_agent(struct ib_mad_agent *mad_agent);

/**
 * ib_post_send_mad() - post MADs to the agent's QP
 * @send_buf: first buffer of a chain linked through
 *	&ib_mad_send_buf.next; each buffer comes from ib_create_send_mad()
 *	and has &ib_mad_send_buf.ah, .timeout_ms and .retries set.
 * @bad_send_buf: set to the first buffer that was not posted when the
 *	call fails.  May be NULL when @send_buf is a single MAD.
 *
 * The buffers are posted in chain order.  At the first one that cannot be
 * posted the call stops: the buffers before it were posted, that buffer
 * and all after it were not, and they still belong to the caller.  The
 * completions of posted buffers may arrive in any order, not necessarily
 * the order of posting.
 *
 * Every posted buffer completes exactly once through the agent's send
 * handler (see &typedef ib_mad_send_handler); a buffer that was not
 * posted never does.  This call itself never runs a handler.  A request
 * with a non-zero &ib_mad_send_buf.timeout_ms waits for a response from
 * the time the send completes, and its TID must carry the agent's
 * hi_tid in the upper 32 bits.  Directed-route SMPs addressed to the
 * local port are answered locally without going on the wire, and still
 * complete through the handler.
 *
 * A MAD that needs RMPP is laid out as one copy of the common MAD header,
 * the RMPP header and the class header, followed by all the class-defined
 * data; with a buffer from ib_create_send_mad() the headers are at
 * &ib_mad_send_buf.mad and the data in the segments returned by
 * ib_get_rmpp_segment().  When the class data does not fill the last
 * segment, the buffer must include room for the padding (which
 * ib_create_send_mad() allocates).  For an agent doing kernel RMPP the
 * caller does not set paylen_newwin: the MAD layer writes the RMPP header
 * of every segment it sends, paylen_newwin included (the whole payload in
 * the first segment, the segment's own payload in the last, 0 between).
 *
 * Context: Any context, including atomic context and with spinlocks held.
 * Never sleeps.
 * Return: 0 when every buffer was posted.  Otherwise a negative errno
 * from the first buffer that failed: -EINVAL (the agent has no send
 * handler, a negative timeout or retry count, a class without RMPP on an
 * agent registered for RMPP, or an invalid directed-route SMP),
 * -EACCES (refused by the security policy), -EBUSY (the buffer is posted
 * already), -ESHUTDOWN (ib_unregister_mad_agent() has begun for the
 * agent), -ENODEV (the port is going away), -ENOMEM, or the provider's
 * error.
 */
int ib_post_send_mad(struct ib_mad_send_buf *send_buf,
		     struct ib_mad_send_buf **bad_send_buf);

/**
 * ib_free_recv_mad() - release a received MAD
 * @mad_recv_wc: MAD given to the client's receive handler.
 *
 * Frees every buffer of the MAD, all RMPP segments included.  Each MAD
 * delivered to a receive handler must be released this way exactly once;
 * afterwards neither @mad_recv_wc nor any MAD data it pointed to may be
 * used.
 *
 * Context: Any context.  Does not sleep.
 */
void ib_free_recv_mad(struct ib_mad_recv_wc *mad_recv_wc);

/**
 * ib_modify_mad() - change the timeout of an outstanding send, or cancel it
 * @send_buf: a posted buffer whose send handler has not run yet.
 * @timeout_ms: new time to wait for the response, in milliseconds; 0
 *	cancels the send.
 *
 * If the MAD is still being sent, the new timeout counts from the end of
 * the send; if it is already waiting for its response, the wait restarts
 * now with the new value.  A cancelled send completes through the send
 * handler with %IB_WC_WR_FLUSH_ERR.  Either way the handler runs later,
 * never from inside this call.
 *
 * Context: Any context, including atomic context and with spinlocks held.
 * Never sleeps.
 * Return: 0 on success; -EINVAL if @send_buf is NULL, not outstanding
 * (never posted or already completing) or already cancelled.
 */
int ib_modify_mad(struct ib_mad_send_buf *send_buf, u32 timeout_ms);

/**
 * ib_cancel_mad() - cancel an outstanding send
 * @send_buf: a posted buffer.
 *
 * Shorthand for ib_modify_mad() with a zero timeout.  Unless the buffer
 * is already completing, its send handler runs with %IB_WC_WR_FLUSH_ERR;
 * a buffer that has already completed is left alone, so racing a
 * completion is harmless.
 *
 * Context: Any context, including atomic context and with spinlocks held.
 * Never sleeps.
 */
static inline void ib_cancel_mad(struct ib_mad_send_buf *send_buf)
{
	ib_modify_mad(send_buf, 0);
}

/**
 * ib_create_send_mad() - allocate a send buffer for an agent
 * @mad_agent: agent that will post the MAD.
 * @remote_qpn: destination QP number.
 * @pkey_index: index of the P_Key to send with (used for QP1
 *	destinations).
 * @rmpp_active: non-zero to send the message with RMPP, which the agent
 *	must have registered for (and not with %IB_MAD_USER_RMPP).
 * @hdr_len: bytes of headers: common MAD header, RMPP header and class
 *	header.
 * @data_len: bytes of class data.  The buffer is rounded up with padding
 *	so the data fills whole MADs or segments.
 * @gfp_mask: allocation flags.
 * @base_version: base version of the MAD.  %OPA_MGMT_BASE_VERSION on an
 *	OPA port selects 2048-byte MADs, anything else 256-byte MADs.
 *
 * Without RMPP, &ib_mad_send_buf.mad points to one zeroed MAD that must
 * hold @hdr_len + @data_len.  With RMPP it points to @hdr_len zeroed
 * bytes of headers whose RMPP header is already set up (version, DATA
 * type, active flag), and the data goes into &ib_mad_send_buf.seg_count
 * segments of &ib_mad_send_buf.seg_size bytes each, found with
 * ib_get_rmpp_segment(); only the padding at the end of the last segment
 * is zeroed.  The caller fills in everything else, sets the address
 * handle, timeout and retries, and posts with ib_post_send_mad().
 *
 * Each buffer holds a reference on @mad_agent until ib_free_send_mad(),
 * which ib_unregister_mad_agent() waits for.
 *
 * Context: Any context that @gfp_mask allows.
 * Return: the new buffer, or ERR_PTR(-EINVAL) if the message does not fit
 * one MAD without RMPP or @rmpp_active is set for an agent that does not
 * run RMPP in the kernel, or ERR_PTR(-ENOMEM).
 */
struct ib_mad_send_buf *ib_create_send_mad(struct ib_mad_agent *mad_agent,
					   u32 remote_qpn, u16 pkey_index,
					   int rmpp_active,
					   int hdr_len, int data_len,
					   gfp_t gfp_mask,
					   u8 base_version);

/**
 * ib_is_mad_class_rmpp() - tell whether a management class uses RMPP
 * @mgmt_class: management class.
 *
 * The classes that may carry RMPP are subnet administration, device
 * management, device administration, BIS and vendor range 2.
 *
 * Context: Any context.
 * Return: 1 if @mgmt_class may use RMPP, 0 otherwise.
 */
int ib_is_mad_class_rmpp(u8 mgmt_class);

/**
 * ib_get_mad_data_offset() - where the class data starts in a MAD
 * @mgmt_class: management class.
 *
 * Context: Any context.
 * Return: the byte offset of the class-defined data: %IB_MGMT_SA_HDR for
 * subnet administration, %IB_MGMT_DEVICE_HDR for device management,
 * device administration and BIS, %IB_MGMT_VENDOR_HDR for vendor range 2,
 * and %IB_MGMT_MAD_HDR for every other class.
 */
int ib_get_mad_data_offset(u8 mgmt_class);

/**
 * ib_get_rmpp_segment() - find the data area of one RMPP segment
 * @send_buf: RMPP send buffer from ib_create_send_mad().
 * @seg_num: segment number, 1 to &ib_mad_send_buf.seg_count.
 *
 * The returned area holds &ib_mad_send_buf.seg_size bytes of class data;
 * the headers are not repeated in it.  The lookup is not safe against
 * concurrent use of the same buffer, so the caller must serialise it
 * (normally by only calling it while the buffer is not posted).
 *
 * Context: Any context.
 * Return: pointer to the data of segment @seg_num.
 */
void *ib_get_rmpp_segment(struct ib_mad_send_buf *send_buf, int seg_num);

/**
 * ib_free_send_mad() - release a send buffer
 * @send_buf: buffer from ib_create_send_mad() that is not posted (never
 *	posted, refused by ib_post_send_mad(), or already completed).
 *
 * Frees the buffer with all its RMPP segments and drops its reference on
 * the agent.  The address handle is the caller's and is not touched.
 *
 * Context: Any context.  Does not sleep.
 */
void ib_free_send_mad(struct ib_mad_send_buf *send_buf);

/**
 * ib_mad_kernel_rmpp_agent() - tell whether the MAD layer runs RMPP for
 *	an agent
 * @agent: a registered agent.
 *
 * Context: Any context.
 * Return: non-zero when @agent registered an RMPP version without
 * %IB_MAD_USER_RMPP, so the MAD layer segments its sends and reassembles
 * its receives; 0 when the agent does not use RMPP or does it itself.
 */
int ib_mad_kernel_rmpp_agent(const struct ib_mad_agent *agent);

#endif /* IB_MAD_H */
