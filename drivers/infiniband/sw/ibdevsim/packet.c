// SPDX-License-Identifier: GPL-2.0
/*
 * ibdevsim: InfiniBand packets as bytes.
 *
 * Inside one kernel a packet crosses the fabric as a struct ibdevsim_pkt.
 * A cable whose other end is in another kernel (remote.c) carries it as
 * the bytes a real link does: LRH, GRH when present, BTH, the extended
 * transport headers the opcode needs (DETH, RETH, AETH, ImmDt, IETH), the
 * payload and its pad, ICRC and VCRC (IBTA vol. 1, chapters 7 and 9).
 * This file turns one form into the other and checks what arrives the way
 * a port's link and transport layers do; it keeps no state.
 */

#include <linux/crc32.h>
#include <linux/slab.h>
#include <linux/unaligned.h>
#include <rdma/ib_pack.h>

#include <kunit/visibility.h>

#include "ibdevsim.h"

#define LRH_BYTES	8
#define GRH_BYTES	40
#define BTH_BYTES	12
#define DETH_BYTES	8
#define RETH_BYTES	16
#define AETH_BYTES	4
#define IMM_BYTES	4
#define IETH_BYTES	4
#define ICRC_BYTES	4
#define VCRC_BYTES	2

/* LRH.LNH: what follows the LRH. */
#define LNH_IBA_LOCAL	2
#define LNH_IBA_GLOBAL	3

/* GRH.NxtHdr of an IBA transport packet. */
#define GRH_NXT_IBA	0x1b

/* The extended transport headers an opcode carries. */
#define OP_OK		BIT(0)
#define OP_RETH		BIT(1)
#define OP_AETH		BIT(2)
#define OP_IMM		BIT(3)
#define OP_IETH		BIT(4)
#define OP_NOPAY	BIT(5)	/* never a payload */

/*
 * The RC opcodes ibdevsim's transport uses (IBTA table 38), indexed by
 * opcode; atomics and the reserved codes are not carried.
 */
static const u8 ibdevsim_rc_ops[] = {
	[IB_OPCODE_RC_SEND_FIRST]			= OP_OK,
	[IB_OPCODE_RC_SEND_MIDDLE]			= OP_OK,
	[IB_OPCODE_RC_SEND_LAST]			= OP_OK,
	[IB_OPCODE_RC_SEND_LAST_WITH_IMMEDIATE]		= OP_OK | OP_IMM,
	[IB_OPCODE_RC_SEND_ONLY]			= OP_OK,
	[IB_OPCODE_RC_SEND_ONLY_WITH_IMMEDIATE]		= OP_OK | OP_IMM,
	[IB_OPCODE_RC_RDMA_WRITE_FIRST]			= OP_OK | OP_RETH,
	[IB_OPCODE_RC_RDMA_WRITE_MIDDLE]		= OP_OK,
	[IB_OPCODE_RC_RDMA_WRITE_LAST]			= OP_OK,
	[IB_OPCODE_RC_RDMA_WRITE_LAST_WITH_IMMEDIATE]	= OP_OK | OP_IMM,
	[IB_OPCODE_RC_RDMA_WRITE_ONLY]			= OP_OK | OP_RETH,
	[IB_OPCODE_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE]	= OP_OK | OP_RETH |
							  OP_IMM,
	[IB_OPCODE_RC_RDMA_READ_REQUEST]		= OP_OK | OP_RETH |
							  OP_NOPAY,
	[IB_OPCODE_RC_RDMA_READ_RESPONSE_FIRST]		= OP_OK | OP_AETH,
	[IB_OPCODE_RC_RDMA_READ_RESPONSE_MIDDLE]	= OP_OK,
	[IB_OPCODE_RC_RDMA_READ_RESPONSE_LAST]		= OP_OK | OP_AETH,
	[IB_OPCODE_RC_RDMA_READ_RESPONSE_ONLY]		= OP_OK | OP_AETH,
	[IB_OPCODE_RC_ACKNOWLEDGE]			= OP_OK | OP_AETH |
							  OP_NOPAY,
	[IB_OPCODE_RC_SEND_LAST_WITH_INVALIDATE]	= OP_OK | OP_IETH,
	[IB_OPCODE_RC_SEND_ONLY_WITH_INVALIDATE]	= OP_OK | OP_IETH,
};

/* The header flags of a packet's opcode; 0 for one not carried. */
static u8 ibdevsim_op_flags(u8 opcode)
{
	if (opcode < ARRAY_SIZE(ibdevsim_rc_ops))
		return ibdevsim_rc_ops[opcode];
	if (opcode == IB_OPCODE_UD_SEND_ONLY)
		return OP_OK;
	if (opcode == IB_OPCODE_UD_SEND_ONLY_WITH_IMMEDIATE)
		return OP_OK | OP_IMM;
	return 0;
}

/* Bytes of the extended transport headers @flags name, for UD or RC. */
static u32 ibdevsim_eth_bytes(u8 flags, bool ud)
{
	return (ud ? DETH_BYTES : 0) +
	       (flags & OP_RETH ? RETH_BYTES : 0) +
	       (flags & OP_AETH ? AETH_BYTES : 0) +
	       (flags & OP_IMM ? IMM_BYTES : 0) +
	       (flags & OP_IETH ? IETH_BYTES : 0);
}

static u8 ibdevsim_pkt_opcode(const struct ibdevsim_pkt *pkt)
{
	if (pkt->rc)
		return pkt->rch.opcode;
	return pkt->has_imm ? IB_OPCODE_UD_SEND_ONLY_WITH_IMMEDIATE :
			      IB_OPCODE_UD_SEND_ONLY;
}

/*
 * CRC-16 of the VCRC: polynomial 0x100B, bits taken least significant
 * first as for the ICRC, so the reflected polynomial 0xD008; a nibble at
 * a time.
 */
static const u16 ibdevsim_vcrc_nibble[16] = {
	0x0000, 0x1a01, 0x3402, 0x2e03, 0x6804, 0x7205, 0x5c06, 0x4607,
	0xd008, 0xca09, 0xe40a, 0xfe0b, 0xb80c, 0xa20d, 0x8c0e, 0x960f,
};

/**
 * ibdevsim_vcrc() - the Variant CRC of a packet
 * @buf: the packet from its LRH through its ICRC
 * @len: its length in bytes
 *
 * IBTA 7.8.2: CRC-16 with polynomial 0x100B, seeded with all ones, over
 * every byte of the packet as it is on the link, complemented.
 *
 * Return: the VCRC, which goes on the wire least significant byte first.
 */
u16 ibdevsim_vcrc(const u8 *buf, u32 len)
{
	u16 crc = 0xffff;

	while (len--) {
		crc ^= *buf++;
		crc = (crc >> 4) ^ ibdevsim_vcrc_nibble[crc & 0xf];
		crc = (crc >> 4) ^ ibdevsim_vcrc_nibble[crc & 0xf];
	}
	return crc ^ 0xffff;
}
EXPORT_SYMBOL_IF_KUNIT(ibdevsim_vcrc);

/**
 * ibdevsim_icrc() - the Invariant CRC of a packet
 * @buf: the packet from its LRH through the last pad byte
 * @len: its length in bytes
 *
 * IBTA 7.8.1: the Ethernet CRC-32 over the fields no switch or router
 * may change.  The variant fields count as all ones: LRH.VL and
 * BTH.Resv8a of a local packet; of a global one the whole LRH (a router
 * rewrites it), GRH.TClass, GRH.FlowLabel and GRH.HopLmt, and
 * BTH.Resv8a.  @buf must hold at least the LRH, the GRH LRH.LNH announces
 * and the BTH.
 *
 * Return: the ICRC, which goes on the wire least significant byte first,
 * as an Ethernet FCS does.
 */
u32 ibdevsim_icrc(const u8 *buf, u32 len)
{
	u8 hdr[LRH_BYTES + GRH_BYTES + BTH_BYTES];
	bool grh = (buf[1] & 3) == LNH_IBA_GLOBAL;
	u32 hlen = LRH_BYTES + (grh ? GRH_BYTES : 0) + BTH_BYTES;
	u8 *bth = hdr + hlen - BTH_BYTES;
	u32 crc;

	memcpy(hdr, buf, hlen);
	if (grh) {
		memset(hdr, 0xff, LRH_BYTES);
		hdr[LRH_BYTES] |= 0x0f;			/* TClass, high nibble */
		memset(hdr + LRH_BYTES + 1, 0xff, 3);	/* TClass, FlowLabel */
		hdr[LRH_BYTES + 7] = 0xff;		/* HopLmt */
	} else {
		hdr[0] |= 0xf0;				/* VL */
	}
	bth[4] = 0xff;					/* Resv8a */
	crc = crc32_le(~0U, hdr, hlen);
	crc = crc32_le(crc, buf + hlen, len - hlen);
	return ~crc;
}
EXPORT_SYMBOL_IF_KUNIT(ibdevsim_icrc);

/* Headers, payload and pad of @pkt on the wire, up to the ICRC. */
static u32 ibdevsim_pkt_body_len(const struct ibdevsim_pkt *pkt, u32 *pad)
{
	u8 flags = ibdevsim_op_flags(ibdevsim_pkt_opcode(pkt));

	*pad = -pkt->len & 3;
	return LRH_BYTES + (pkt->has_grh ? GRH_BYTES : 0) + BTH_BYTES +
	       ibdevsim_eth_bytes(flags, !pkt->rc) + pkt->len + *pad;
}

/**
 * ibdevsim_pkt_wire_len() - the bytes a packet takes on a link
 * @pkt: the packet
 *
 * Return: from its LRH through its VCRC.
 */
u32 ibdevsim_pkt_wire_len(const struct ibdevsim_pkt *pkt)
{
	u32 pad;

	return ibdevsim_pkt_body_len(pkt, &pad) + ICRC_BYTES + VCRC_BYTES;
}
EXPORT_SYMBOL_IF_KUNIT(ibdevsim_pkt_wire_len);

/**
 * ibdevsim_pkt_encode() - write a packet as it crosses a link
 * @pkt: the packet (an opcode ibdevsim's transport sends)
 * @buf: room for ibdevsim_pkt_wire_len() bytes
 *
 * A subnet management packet goes on VL15, everything else on VL0 (the
 * ports have one data VL).  The GRH's PayLen is set to what follows the
 * GRH, ICRC included; its other fields are the sender's.  An RC packet's
 * AETH carries MSN 0: ibdevsim's requester matches ACKs by PSN alone.
 *
 * Return: the bytes written.
 */
u32 ibdevsim_pkt_encode(const struct ibdevsim_pkt *pkt, u8 *buf)
{
	u8 op = ibdevsim_pkt_opcode(pkt), flags = ibdevsim_op_flags(op);
	u32 pad, body = ibdevsim_pkt_body_len(pkt, &pad);
	u32 words = (body + ICRC_BYTES) / 4;
	u8 *p = buf;

	/* LRH */
	p[0] = (pkt->vl15 ? 15 : 0) << 4;
	p[1] = (pkt->sl & 0xf) << 4 |
	       (pkt->has_grh ? LNH_IBA_GLOBAL : LNH_IBA_LOCAL);
	put_unaligned_be16(pkt->dlid, p + 2);
	put_unaligned_be16(words & 0x7ff, p + 4);
	put_unaligned_be16(pkt->slid, p + 6);
	p += LRH_BYTES;
	if (pkt->has_grh) {
		struct ib_grh grh = pkt->grh;

		grh.paylen = cpu_to_be16(body + ICRC_BYTES - LRH_BYTES -
					 GRH_BYTES);
		memcpy(p, &grh, GRH_BYTES);
		p += GRH_BYTES;
	}
	/* BTH */
	p[0] = op;
	p[1] = (pkt->rc && pkt->rch.se ? 0x80 : 0) | pad << 4;
	put_unaligned_be16(pkt->pkey, p + 2);
	put_unaligned_be32(pkt->dest_qpn & 0xffffff, p + 4);	/* Resv8a 0 */
	put_unaligned_be32((pkt->rc && pkt->rch.ack_req ? BIT(31) : 0) |
			   (pkt->rc ? pkt->rch.psn & 0xffffff : 0), p + 8);
	p += BTH_BYTES;
	if (!pkt->rc) {
		put_unaligned_be32(pkt->qkey, p);
		put_unaligned_be32(pkt->src_qpn & 0xffffff, p + 4);
		p += DETH_BYTES;
	}
	if (flags & OP_RETH) {
		put_unaligned_be64(pkt->rch.va, p);
		put_unaligned_be32(pkt->rch.rkey, p + 8);
		put_unaligned_be32(pkt->rch.dma_len, p + 12);
		p += RETH_BYTES;
	}
	if (flags & OP_AETH) {
		put_unaligned_be32((u32)pkt->rch.syndrome << 24, p);
		p += AETH_BYTES;
	}
	if (flags & OP_IMM) {
		memcpy(p, &pkt->imm, IMM_BYTES);
		p += IMM_BYTES;
	}
	if (flags & OP_IETH) {
		put_unaligned_be32(pkt->rch.ieth, p);
		p += IETH_BYTES;
	}
	memcpy(p, pkt->data, pkt->len);
	p += pkt->len;
	memset(p, 0, pad);
	p += pad;
	put_unaligned_le32(ibdevsim_icrc(buf, body), p);
	p += ICRC_BYTES;
	put_unaligned_le16(ibdevsim_vcrc(buf, body + ICRC_BYTES), p);
	return body + ICRC_BYTES + VCRC_BYTES;
}
EXPORT_SYMBOL_IF_KUNIT(ibdevsim_pkt_encode);

/**
 * ibdevsim_pkt_decode() - check and take a packet that came off a link
 * @buf: the bytes, from the LRH through the VCRC
 * @len: how many
 * @gfp: allocation flags for the packet
 * @err: set to why the packet was refused (IBDEVSIM_RXERR_NONE when it
 *	 was not, or when only the allocation failed)
 *
 * The checks run in the order of a port's layers: the link layer's
 * (length against LRH.PktLen, VCRC, LVer, LNH: raw packets are not
 * carried), the network layer's (GRH.IPVer and NxtHdr), the transport
 * layer's (TVer, ICRC, an opcode ibdevsim carries, headers and pad that
 * fit, no payload beyond 4096 bytes), and the VL15 rule: QP0 packets
 * travel on VL15 and nothing else does.  P_Key, Q_Key and the QP are the
 * receiving port's to check, as for a packet off a local cable.  An RC
 * packet names no source QP: @src_qpn is %IBDEVSIM_QPN_UNKNOWN.
 *
 * Return: the packet (its @wire set), or NULL.
 */
struct ibdevsim_pkt *ibdevsim_pkt_decode(const u8 *buf, u32 len, gfp_t gfp,
					 enum ibdevsim_rx_err *err)
{
	u32 hlen, words, plen, pad;
	struct ibdevsim_pkt *pkt;
	const u8 *p, *bth;
	bool grh, ud, vl15;
	u8 op, flags;

	*err = IBDEVSIM_RXERR_SHORT;
	if (len < LRH_BYTES + BTH_BYTES + ICRC_BYTES + VCRC_BYTES)
		return NULL;
	words = get_unaligned_be16(buf + 4) & 0x7ff;
	*err = IBDEVSIM_RXERR_LEN;
	if (words * 4 + VCRC_BYTES != len)
		return NULL;
	*err = IBDEVSIM_RXERR_VCRC;
	if (ibdevsim_vcrc(buf, len - VCRC_BYTES) !=
	    get_unaligned_le16(buf + len - VCRC_BYTES))
		return NULL;
	*err = IBDEVSIM_RXERR_LVER;
	if (buf[0] & 0x0f)
		return NULL;
	*err = IBDEVSIM_RXERR_LNH;
	if ((buf[1] & 3) != LNH_IBA_LOCAL && (buf[1] & 3) != LNH_IBA_GLOBAL)
		return NULL;
	grh = (buf[1] & 3) == LNH_IBA_GLOBAL;
	vl15 = buf[0] >> 4 == 15;
	hlen = LRH_BYTES + (grh ? GRH_BYTES : 0) + BTH_BYTES;
	*err = IBDEVSIM_RXERR_SHORT;
	if (len < hlen + ICRC_BYTES + VCRC_BYTES)
		return NULL;
	*err = IBDEVSIM_RXERR_GRH;
	if (grh && (buf[LRH_BYTES] >> 4 != 6 ||
		    buf[LRH_BYTES + 6] != GRH_NXT_IBA))
		return NULL;
	bth = buf + hlen - BTH_BYTES;
	*err = IBDEVSIM_RXERR_TVER;
	if (bth[1] & 0x0f)
		return NULL;
	*err = IBDEVSIM_RXERR_ICRC;
	if (ibdevsim_icrc(buf, len - ICRC_BYTES - VCRC_BYTES) !=
	    get_unaligned_le32(buf + len - ICRC_BYTES - VCRC_BYTES))
		return NULL;
	op = bth[0];
	flags = ibdevsim_op_flags(op);
	*err = IBDEVSIM_RXERR_OPCODE;
	if (!flags)
		return NULL;
	ud = op >= IB_OPCODE_UD_SEND_ONLY;
	hlen += ibdevsim_eth_bytes(flags, ud);
	pad = (bth[1] >> 4) & 3;
	*err = IBDEVSIM_RXERR_PAD;
	if (len < hlen + pad + ICRC_BYTES + VCRC_BYTES)
		return NULL;
	plen = len - hlen - pad - ICRC_BYTES - VCRC_BYTES;
	if ((flags & OP_NOPAY) && (plen || pad))
		return NULL;
	*err = IBDEVSIM_RXERR_LEN;
	if (plen > IBDEVSIM_MTU)
		return NULL;
	*err = IBDEVSIM_RXERR_VL;
	if (vl15 != (ud && !(get_unaligned_be32(bth + 4) & 0xffffff)))
		return NULL;

	*err = IBDEVSIM_RXERR_NONE;
	pkt = ibdevsim_pkt_alloc(plen, gfp);
	if (!pkt)
		return NULL;
	pkt->wire = true;
	pkt->vl15 = vl15;
	pkt->sl = buf[1] >> 4;
	pkt->dlid = get_unaligned_be16(buf + 2);
	pkt->slid = get_unaligned_be16(buf + 6);
	if (grh) {
		pkt->has_grh = true;
		memcpy(&pkt->grh, buf + LRH_BYTES, GRH_BYTES);
	}
	pkt->pkey = get_unaligned_be16(bth + 2);
	pkt->dest_qpn = get_unaligned_be32(bth + 4) & 0xffffff;
	p = bth + BTH_BYTES;
	if (ud) {
		pkt->qkey = get_unaligned_be32(p);
		pkt->src_qpn = get_unaligned_be32(p + 4) & 0xffffff;
		p += DETH_BYTES;
	} else {
		pkt->rc = true;
		pkt->src_qpn = IBDEVSIM_QPN_UNKNOWN;
		pkt->rch.opcode = op;
		pkt->rch.se = bth[1] & 0x80;
		pkt->rch.ack_req = bth[8] & 0x80;
		pkt->rch.psn = get_unaligned_be32(bth + 8) & 0xffffff;
	}
	if (flags & OP_RETH) {
		pkt->rch.va = get_unaligned_be64(p);
		pkt->rch.rkey = get_unaligned_be32(p + 8);
		pkt->rch.dma_len = get_unaligned_be32(p + 12);
		p += RETH_BYTES;
	}
	if (flags & OP_AETH) {
		pkt->rch.syndrome = p[0];
		p += AETH_BYTES;
	}
	if (flags & OP_IMM) {
		pkt->has_imm = true;
		memcpy(&pkt->imm, p, IMM_BYTES);
		p += IMM_BYTES;
	}
	if (flags & OP_IETH) {
		pkt->rch.ieth = get_unaligned_be32(p);
		p += IETH_BYTES;
	}
	memcpy(pkt->data, p, plen);
	return pkt;
}
EXPORT_SYMBOL_IF_KUNIT(ibdevsim_pkt_decode);
