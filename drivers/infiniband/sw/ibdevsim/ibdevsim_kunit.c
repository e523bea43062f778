// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of ibdevsim's wire rules (wire.c): directed-route hop
 * processing at a switch, the LFT lookup, PortInfo and NodeInfo layouts
 * and the validation of a PortInfo Set, the MFT lookup and the rules of
 * multicast attachments; of its fault knobs (fault.c):
 * which packets they cover, what they decide for given random draws and
 * what the "link" knob accepts; and of its memory regions (mem.c): which
 * keys, PDs, rights and bounds are accepted, and copies across pages;
 * and of its completion queues (verbs.c): send queue slots freed when
 * completions are polled, and a QP's completions cleaned out in order;
 * and of the packet path (fabric.c): an RC request dropped anywhere in
 * the fabric ends its requester's wait, counted where it was dropped,
 * and a port finds the QP a packet names with its P_Key and Q_Key checks;
 * and of packets as bytes (packet.c): layout, CRCs, and what a port
 * refuses and why.
 */

#include <kunit/test.h>
#include <kunit/visibility.h>
#include <linux/module.h>

#include <linux/unaligned.h>
#include <rdma/ib_pack.h>

#include "ibdevsim.h"

MODULE_INFO(import_ns, "EXPORTED_FOR_KUNIT_TESTING");	/* both series */

/* A DR SMP of @cnt hops, its pointer at @ptr, with DrSLID and DrDLID. */
static void dr_smp(struct ib_smp *smp, u8 cnt, u8 ptr, __be16 slid,
		   __be16 dlid)
{
	memset(smp, 0, sizeof(*smp));
	smp->mgmt_class = IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE;
	smp->hop_cnt = cnt;
	smp->hop_ptr = ptr;
	smp->dr_slid = slid;
	smp->dr_dlid = dlid;
}

/* An SM on an HCA sent a 2-hop SMP: HCA port 1, then switch port 3. */
static void dr_outbound_forwarded(struct kunit *test)
{
	struct ib_smp smp = {};
	u16 lid = 0;
	u8 out = 0;

	/* Pointer at 1: the HCA moved it past itself. */
	dr_smp(&smp, 2, 1, IB_LID_PERMISSIVE, IB_LID_PERMISSIVE);
	smp.initial_path[1] = 1;
	smp.initial_path[2] = 3;
	KUNIT_EXPECT_EQ(test, ibdevsim_dr_switch_recv(&smp, 5, 8, false, &out,
						      &lid),
			IBDEVSIM_DR_FORWARD);
	KUNIT_EXPECT_EQ(test, out, 3);
	KUNIT_EXPECT_EQ(test, smp.hop_ptr, 2);
	KUNIT_EXPECT_EQ(test, smp.return_path[1], 5);
}

/* A 1-hop SMP ends at the switch, whose answer goes back where it came. */
static void dr_ends_at_switch(struct kunit *test)
{
	struct ib_smp smp = {};
	u16 lid = 0;
	u8 out = 0;

	dr_smp(&smp, 1, 1, IB_LID_PERMISSIVE, IB_LID_PERMISSIVE);
	smp.initial_path[1] = 2;
	KUNIT_EXPECT_EQ(test, ibdevsim_dr_switch_recv(&smp, 4, 8, false, &out,
						      &lid),
			IBDEVSIM_DR_LOCAL);
	KUNIT_EXPECT_EQ(test, smp.hop_ptr, 2);
	KUNIT_EXPECT_EQ(test, smp.return_path[1], 4);
	smp.status |= IB_SMP_DIRECTION;
	KUNIT_EXPECT_EQ(test, ibdevsim_dr_switch_reply(&smp, 8, &out),
			IBDEVSIM_DR_FORWARD);
	KUNIT_EXPECT_EQ(test, out, 4);
	KUNIT_EXPECT_EQ(test, smp.hop_ptr, 1);
}

/* A returning SMP in the middle of its path goes back; bad ones drop. */
static void dr_returning_and_bad(struct kunit *test)
{
	struct ib_smp smp = {};
	u16 lid = 0;
	u8 out = 0;

	dr_smp(&smp, 2, 2, IB_LID_PERMISSIVE, 0);
	smp.status = IB_SMP_DIRECTION;
	smp.return_path[1] = 6;
	KUNIT_EXPECT_EQ(test, ibdevsim_dr_switch_recv(&smp, 3, 8, false, &out,
						      &lid),
			IBDEVSIM_DR_FORWARD);
	KUNIT_EXPECT_EQ(test, out, 6);
	KUNIT_EXPECT_EQ(test, smp.hop_ptr, 1);

	/* Outbound with the pointer still at 0: the sender broke C14-9. */
	memset(&smp, 0, sizeof(smp));
	smp.hop_cnt = 2;
	KUNIT_EXPECT_EQ(test, ibdevsim_dr_switch_recv(&smp, 1, 8, false, &out,
						      &lid),
			IBDEVSIM_DR_DISCARD);
	/* A next hop the switch lacks. */
	smp.hop_ptr = 1;
	smp.initial_path[2] = 9;
	KUNIT_EXPECT_EQ(test, ibdevsim_dr_switch_recv(&smp, 1, 8, false, &out,
						      &lid),
			IBDEVSIM_DR_DISCARD);
	/* A hop count beyond the path arrays. */
	smp.hop_cnt = 64;
	KUNIT_EXPECT_EQ(test, ibdevsim_dr_switch_recv(&smp, 1, 8, false, &out,
						      &lid),
			IBDEVSIM_DR_DISCARD);
}

/*
 * The LID-routed parts of a DR SMP (IBA 14.2.2): a requester's SMP
 * LID-routed to the switch starts its directed part there; at the end of
 * the directed part it goes on by LID to DrDLID; the answer comes back
 * LID-routed from there and starts back along the return path.
 */
static void dr_lid_parts(struct kunit *test)
{
	struct ib_smp smp = {};
	u16 lid = 0;
	u8 out = 0;

	dr_smp(&smp, 1, 0, cpu_to_be16(5), IB_LID_PERMISSIVE);
	smp.initial_path[1] = 3;
	KUNIT_EXPECT_EQ(test, ibdevsim_dr_switch_recv(&smp, 2, 8, true, &out,
						      &lid),
			IBDEVSIM_DR_FORWARD);
	KUNIT_EXPECT_EQ(test, out, 3);
	KUNIT_EXPECT_EQ(test, smp.hop_ptr, 1);
	/* Not without a DrSLID to answer, nor when not addressed to us. */
	smp.hop_ptr = 0;
	smp.dr_slid = IB_LID_PERMISSIVE;
	KUNIT_EXPECT_EQ(test, ibdevsim_dr_switch_recv(&smp, 2, 8, true, &out,
						      &lid),
			IBDEVSIM_DR_DISCARD);
	smp.hop_ptr = 0;
	smp.dr_slid = cpu_to_be16(5);
	KUNIT_EXPECT_EQ(test, ibdevsim_dr_switch_recv(&smp, 2, 8, false, &out,
						      &lid),
			IBDEVSIM_DR_DISCARD);

	/* The end of the directed part, DrDLID set: on by LID. */
	dr_smp(&smp, 2, 2, IB_LID_PERMISSIVE, cpu_to_be16(9));
	smp.initial_path[2] = 6;
	KUNIT_EXPECT_EQ(test, ibdevsim_dr_switch_recv(&smp, 6, 8, false, &out,
						      &lid),
			IBDEVSIM_DR_LID_ROUTE);
	KUNIT_EXPECT_EQ(test, lid, 9);
	KUNIT_EXPECT_EQ(test, smp.hop_ptr, 3);
	KUNIT_EXPECT_EQ(test, smp.return_path[2], 6);

	/* Its answer, LID-routed back here: back along the return path. */
	smp.status = IB_SMP_DIRECTION;
	KUNIT_EXPECT_EQ(test, ibdevsim_dr_switch_recv(&smp, 1, 8, true, &out,
						      &lid),
			IBDEVSIM_DR_FORWARD);
	KUNIT_EXPECT_EQ(test, out, 6);
	KUNIT_EXPECT_EQ(test, smp.hop_ptr, 2);
	/* The same pointer on a directed hop breaks C14-13. */
	smp.hop_ptr = 3;
	KUNIT_EXPECT_EQ(test, ibdevsim_dr_switch_recv(&smp, 1, 8, false, &out,
						      &lid),
			IBDEVSIM_DR_DISCARD);
}

/* An SMP to the permissive LID leaves with the permissive SLID. */
static void ud_slid(struct kunit *test)
{
	/* No LID yet: a DR SMP must still be answerable. */
	KUNIT_EXPECT_EQ(test, ibdevsim_ud_slid(true, 0xffff, 0, 0), 0xffff);
	KUNIT_EXPECT_EQ(test, ibdevsim_ud_slid(true, 0xffff, 5, 1), 0xffff);
	/* LID-routed SMPs and every GMP carry the port's LID. */
	KUNIT_EXPECT_EQ(test, ibdevsim_ud_slid(true, 7, 4, 0), 4);
	KUNIT_EXPECT_EQ(test, ibdevsim_ud_slid(false, 0xffff, 4, 0), 4);
	KUNIT_EXPECT_EQ(test, ibdevsim_ud_slid(false, 9, 8, 3), 11);
}

static void lft_lookup(struct kunit *test)
{
	u8 lft[128];

	memset(lft, 0xff, sizeof(lft));
	lft[1] = 2;
	lft[2] = 0;
	lft[3] = 5;
	lft[4] = 9;
	KUNIT_EXPECT_EQ(test, ibdevsim_lft_lookup(lft, 128, 10, 1, 8, 1), 2);
	KUNIT_EXPECT_EQ(test, ibdevsim_lft_lookup(lft, 128, 10, 2, 8, 1), 0);
	/* Back out of the port it came in on. */
	KUNIT_EXPECT_EQ(test, ibdevsim_lft_lookup(lft, 128, 10, 3, 8, 5), -1);
	/* A port the switch lacks, no entry, above LinearFDBTop, LID 0. */
	KUNIT_EXPECT_EQ(test, ibdevsim_lft_lookup(lft, 128, 10, 4, 8, 1), -1);
	KUNIT_EXPECT_EQ(test, ibdevsim_lft_lookup(lft, 128, 10, 5, 8, 1), -1);
	KUNIT_EXPECT_EQ(test, ibdevsim_lft_lookup(lft, 128, 2, 3, 8, 1), -1);
	KUNIT_EXPECT_EQ(test, ibdevsim_lft_lookup(lft, 128, 10, 0, 8, 1), -1);
	KUNIT_EXPECT_EQ(test, ibdevsim_lft_lookup(lft, 128, 0xffff, 200, 8, 1),
			-1);
}

static void portinfo_roundtrip(struct kunit *test)
{
	struct ibdevsim_port_state st = {
		.gid_prefix = IBDEVSIM_DEFAULT_GID_PREFIX,
		.state = IB_PORT_INIT,
		.phys_state = IB_PORT_PHYS_STATE_LINK_UP,
		.neighbor_mtu = 4,
		.op_vls = 1,
		.cap_mask = 0x02000800,
	};
	struct ibdevsim_port_caps caps = { .local_port = 2, .guid_cap = 1 };
	struct ib_port_info pi;
	u32 chg;

	ibdevsim_portinfo_encode(&st, &caps, &pi);
	KUNIT_EXPECT_EQ(test, pi.linkspeed_portstate & 0xf, IB_PORT_INIT);
	KUNIT_EXPECT_EQ(test, pi.portphysstate_linkdown >> 4,
			IB_PORT_PHYS_STATE_LINK_UP);
	KUNIT_EXPECT_EQ(test, pi.local_port_num, 2);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(pi.cap_mask), 0x02000800);

	/* The SM gives a LID and arms the port. */
	pi.lid = cpu_to_be16(7);
	pi.sm_lid = cpu_to_be16(1);
	pi.linkspeed_portstate = IB_PORT_ARMED;
	KUNIT_EXPECT_EQ(test, ibdevsim_portinfo_apply(&st, &pi, false, &chg),
			0);
	KUNIT_EXPECT_EQ(test, st.lid, 7);
	KUNIT_EXPECT_EQ(test, st.state, IB_PORT_ARMED);
	KUNIT_EXPECT_TRUE(test, chg & IBDEVSIM_CHG_LID);
	KUNIT_EXPECT_TRUE(test, chg & IBDEVSIM_CHG_SM);
	KUNIT_EXPECT_FALSE(test, chg & IBDEVSIM_CHG_ACTIVE);

	pi.linkspeed_portstate = IB_PORT_ACTIVE;
	KUNIT_EXPECT_EQ(test, ibdevsim_portinfo_apply(&st, &pi, false, &chg),
			0);
	KUNIT_EXPECT_EQ(test, chg, IBDEVSIM_CHG_STATE | IBDEVSIM_CHG_ACTIVE);

	/* INIT cannot be set; a multicast LID is refused; nothing changes. */
	pi.linkspeed_portstate = IB_PORT_INIT;
	KUNIT_EXPECT_EQ(test, ibdevsim_portinfo_apply(&st, &pi, false, &chg),
			-EINVAL);
	pi.linkspeed_portstate = 0;
	pi.lid = cpu_to_be16(0xc001);
	KUNIT_EXPECT_EQ(test, ibdevsim_portinfo_apply(&st, &pi, false, &chg),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, st.lid, 7);
	KUNIT_EXPECT_EQ(test, st.state, IB_PORT_ACTIVE);
}

static void nodeinfo_and_pkeys(struct kunit *test)
{
	u16 pkeys[4] = { 0xffff, 0x8001, 0x0002, 0 };
	struct ib_node_info ni;

	ibdevsim_nodeinfo_encode(&ni, 2, 8, 0x1122334455667788ULL,
				 0x1122334455667788ULL, 32, 0x1dc1, 3);
	KUNIT_EXPECT_EQ(test, ni.node_type, 2);
	KUNIT_EXPECT_EQ(test, ni.num_ports, 8);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(ni.node_guid),
			0x1122334455667788ULL);
	KUNIT_EXPECT_EQ(test, ni.local_port_num, 3);
	KUNIT_EXPECT_EQ(test, sizeof(ni), 40);

	KUNIT_EXPECT_EQ(test, ibdevsim_pkey_find(pkeys, 4, 0xffff), 0);
	KUNIT_EXPECT_EQ(test, ibdevsim_pkey_find(pkeys, 4, 0x7fff), 0);
	KUNIT_EXPECT_EQ(test, ibdevsim_pkey_find(pkeys, 4, 0x0001), 1);
	/* Two limited members do not talk. */
	KUNIT_EXPECT_EQ(test, ibdevsim_pkey_find(pkeys, 4, 0x0002), -1);
	KUNIT_EXPECT_EQ(test, ibdevsim_pkey_find(pkeys, 4, 0x8000), -1);

	/* A UD or RC QP's own entry: full or limited, one must be full. */
	KUNIT_EXPECT_TRUE(test, ibdevsim_pkey_match(0x8001, 0x8001));
	KUNIT_EXPECT_TRUE(test, ibdevsim_pkey_match(0x8001, 0x0001));
	KUNIT_EXPECT_TRUE(test, ibdevsim_pkey_match(0x0001, 0x8001));
	KUNIT_EXPECT_FALSE(test, ibdevsim_pkey_match(0x0001, 0x0001));
	/* Another partition, or the invalid key, never. */
	KUNIT_EXPECT_FALSE(test, ibdevsim_pkey_match(0x8001, 0x8002));
	KUNIT_EXPECT_FALSE(test, ibdevsim_pkey_match(0xffff, 0x8001));
	KUNIT_EXPECT_FALSE(test, ibdevsim_pkey_match(0x8000, 0x8000));
	KUNIT_EXPECT_FALSE(test, ibdevsim_pkey_match(0, 0));
}

/**
 * struct ibdevsim_fault_case - one fault decision
 * @desc: what the case shows
 * @drop: the drop knob (per mille)
 * @dup: the duplicate knob
 * @delay: the delay knob
 * @delay_ms: the delay knob's duration
 * @classes: the classes knob
 * @cls: the packet's class
 * @draw: the three random draws
 * @act: the decision expected
 */
struct ibdevsim_fault_case {
	const char *desc;
	u32 drop, dup, delay, delay_ms, classes, cls;
	u32 draw[3];
	u32 act;
};

static const struct ibdevsim_fault_case ibdevsim_fault_cases[] = {
	{ "knobs at zero", 0, 0, 0, 0, 7, IBDEVSIM_FAULT_CLASS_QP1,
	  { 0, 0, 0 }, 0 },
	{ "10% drop, draw 99 drops", 100, 0, 0, 0, 7,
	  IBDEVSIM_FAULT_CLASS_QP1, { 99, 0, 0 }, IBDEVSIM_FAULT_DROP },
	{ "10% drop, draw 100 passes", 100, 0, 0, 0, 7,
	  IBDEVSIM_FAULT_CLASS_QP1, { 100, 0, 0 }, 0 },
	{ "class not covered", 1000, 1000, 1000, 5, IBDEVSIM_FAULT_CLASS_QP1,
	  IBDEVSIM_FAULT_CLASS_QP0, { 0, 0, 0 }, 0 },
	{ "dropped is neither duplicated nor delayed", 1000, 1000, 1000, 5,
	  7, IBDEVSIM_FAULT_CLASS_UD, { 0, 0, 0 }, IBDEVSIM_FAULT_DROP },
	{ "duplicated and delayed", 0, 500, 500, 5, 7,
	  IBDEVSIM_FAULT_CLASS_QP0, { 0, 499, 0 },
	  IBDEVSIM_FAULT_DUPLICATE | IBDEVSIM_FAULT_DELAY },
	{ "duplicated only", 0, 500, 500, 5, 7, IBDEVSIM_FAULT_CLASS_QP0,
	  { 0, 0, 500 }, IBDEVSIM_FAULT_DUPLICATE },
	{ "a delay of 0 ms delays nothing", 0, 0, 1000, 0, 7,
	  IBDEVSIM_FAULT_CLASS_UD, { 0, 0, 0 }, 0 },
	{ "above the scale means always", 5000, 0, 0, 0, 7,
	  IBDEVSIM_FAULT_CLASS_QP1, { 999, 0, 0 }, IBDEVSIM_FAULT_DROP },
};

static void ibdevsim_fault_case_desc(const struct ibdevsim_fault_case *c,
				     char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(ibdevsim_fault, ibdevsim_fault_cases,
		  ibdevsim_fault_case_desc);

static void fault_decide(struct kunit *test)
{
	const struct ibdevsim_fault_case *c = test->param_value;
	struct ibdevsim_faults f = {
		.drop = c->drop,
		.duplicate = c->dup,
		.delay = c->delay,
		.delay_ms = c->delay_ms,
		.classes = c->classes,
	};

	KUNIT_EXPECT_EQ(test, ibdevsim_fault_decide(&f, c->cls, c->draw),
			c->act);
}

/* Over every possible draw, a knob at N per mille hits exactly N times. */
static void fault_rate_exact(struct kunit *test)
{
	struct ibdevsim_faults f = { .drop = 100, .classes = 7 };
	u32 draw[3] = {}, hits = 0;

	for (draw[0] = 0; draw[0] < IBDEVSIM_FAULT_SCALE; draw[0]++)
		hits += ibdevsim_fault_decide(&f, IBDEVSIM_FAULT_CLASS_QP1,
					      draw) == IBDEVSIM_FAULT_DROP;
	KUNIT_EXPECT_EQ(test, hits, 100);
}

static void fault_class(struct kunit *test)
{
	struct ibdevsim_pkt pkt = {};

	pkt.vl15 = true;
	KUNIT_EXPECT_EQ(test, ibdevsim_fault_class(&pkt),
			IBDEVSIM_FAULT_CLASS_QP0);
	pkt.vl15 = false;
	pkt.dest_qpn = 1;
	KUNIT_EXPECT_EQ(test, ibdevsim_fault_class(&pkt),
			IBDEVSIM_FAULT_CLASS_QP1);
	pkt.dest_qpn = 0x12;
	KUNIT_EXPECT_EQ(test, ibdevsim_fault_class(&pkt),
			IBDEVSIM_FAULT_CLASS_UD);
	pkt.rc = true;
	KUNIT_EXPECT_EQ(test, ibdevsim_fault_class(&pkt),
			IBDEVSIM_FAULT_CLASS_RC);
}

static void link_parse(struct kunit *test)
{
	bool up = false;

	KUNIT_EXPECT_EQ(test, ibdevsim_link_parse("up\n", &up), 0);
	KUNIT_EXPECT_TRUE(test, up);
	KUNIT_EXPECT_EQ(test, ibdevsim_link_parse("0", &up), 0);
	KUNIT_EXPECT_FALSE(test, up);
	KUNIT_EXPECT_EQ(test, ibdevsim_link_parse("1", &up), 0);
	KUNIT_EXPECT_TRUE(test, up);
	KUNIT_EXPECT_EQ(test, ibdevsim_link_parse("down", &up), 0);
	KUNIT_EXPECT_FALSE(test, up);
	KUNIT_EXPECT_EQ(test, ibdevsim_link_parse("sideways", &up), -EINVAL);
	KUNIT_EXPECT_EQ(test, ibdevsim_link_parse("", &up), -EINVAL);
	KUNIT_EXPECT_EQ(test, ibdevsim_link_parse("2", &up), -EINVAL);
}

/* An MFT of 4 MLIDs (from 0xc000) for an @nports-port switch. */
static u16 *mft_new(struct kunit *test, u8 nports)
{
	u16 *mft = kunit_kcalloc(test, 4 * ibdevsim_mft_positions(nports),
				 sizeof(*mft), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, mft);
	return mft;
}

/* Set @port's bit in @mlid's row, as the SM's PortMask of its position. */
static void mft_add(u16 *mft, u8 nports, u16 mlid, u32 port)
{
	u32 npos = ibdevsim_mft_positions(nports);

	mft[(mlid - IBDEVSIM_MCAST_LID_BASE) * npos + port / 16] |=
		BIT(port % 16);
}

/* Where a lookup sends the packet, as "1 3 8"; "-" when it is dropped. */
static const char *mft_out(struct kunit *test, const u16 *mft, u32 cap,
			   u16 top, u16 mlid, u8 nports, u8 in_port)
{
	DECLARE_BITMAP(ports, IBDEVSIM_MAX_PORTS + 1);
	const size_t size = 4 * (IBDEVSIM_MAX_PORTS + 1);
	char *s = kunit_kzalloc(test, size, GFP_KERNEL);
	unsigned int i, len = 0;
	bool any;

	KUNIT_ASSERT_NOT_NULL(test, s);
	any = ibdevsim_mft_lookup(mft, cap, top, mlid, nports, in_port, ports);
	for_each_set_bit(i, ports, IBDEVSIM_MAX_PORTS + 1)
		len += scnprintf(s + len, size - len, "%s%u", len ? " " : "",
				 i);
	if (any != !!len)
		return "return value disagrees with the ports";
	return len ? s : "-";
}

/*
 * Multicast forwarding by the PortMasks of each position, on switches of
 * 8, 20, 36, 64 and 254 ports: every position's ports are found, none
 * beyond the switch's last port, never port 0 or the way in.
 */
static void mft_lookup(struct kunit *test)
{
	u16 *m8 = mft_new(test, 8), *m20 = mft_new(test, 20);
	u16 *m36 = mft_new(test, 36), *m64 = mft_new(test, 64);
	u16 *m254 = mft_new(test, 254);

	KUNIT_EXPECT_EQ(test, ibdevsim_mft_positions(8), 1);
	KUNIT_EXPECT_EQ(test, ibdevsim_mft_positions(15), 1);
	KUNIT_EXPECT_EQ(test, ibdevsim_mft_positions(16), 2);
	KUNIT_EXPECT_EQ(test, ibdevsim_mft_positions(36), 3);
	KUNIT_EXPECT_EQ(test, ibdevsim_mft_positions(64), 5);
	KUNIT_EXPECT_EQ(test, ibdevsim_mft_positions(254), 16);

	mft_add(m8, 8, 0xc000, 1);
	mft_add(m8, 8, 0xc000, 3);
	mft_add(m8, 8, 0xc000, 8);
	KUNIT_EXPECT_STREQ(test, mft_out(test, m8, 4, 0, 0xc000, 8, 2),
			   "1 3 8");
	/* Never back out of the port it came in on. */
	KUNIT_EXPECT_STREQ(test, mft_out(test, m8, 4, 0, 0xc000, 8, 3),
			   "1 8");
	/* Port 0 and a bit beyond the switch's 8 ports go nowhere. */
	mft_add(m8, 8, 0xc002, 0);
	mft_add(m8, 8, 0xc002, 9);
	KUNIT_EXPECT_STREQ(test, mft_out(test, m8, 4, 0, 0xc002, 8, 1), "-");

	/* 20 ports: position 1 holds 16 to 31, of which 21 is not there. */
	mft_add(m20, 20, 0xc001, 17);
	mft_add(m20, 20, 0xc001, 21);
	KUNIT_EXPECT_STREQ(test, mft_out(test, m20, 4, 0, 0xc001, 20, 1),
			   "17");

	/* 36 ports: position 2; MulticastFDBTop and the capacity. */
	mft_add(m36, 36, 0xc001, 17);
	mft_add(m36, 36, 0xc001, 36);
	KUNIT_EXPECT_STREQ(test, mft_out(test, m36, 4, 0, 0xc001, 36, 1),
			   "17 36");
	KUNIT_EXPECT_STREQ(test, mft_out(test, m36, 4, 0xc000, 0xc001, 36, 1),
			   "-");
	KUNIT_EXPECT_STREQ(test, mft_out(test, m36, 4, 0xc001, 0xc001, 36, 1),
			   "17 36");
	KUNIT_EXPECT_STREQ(test, mft_out(test, m36, 1, 0, 0xc001, 36, 1), "-");
	/* Unicast and permissive LIDs are not in the table. */
	KUNIT_EXPECT_STREQ(test, mft_out(test, m36, 4, 0, 0x0001, 36, 2), "-");
	KUNIT_EXPECT_STREQ(test, mft_out(test, m36, 4, 0, 0xffff, 36, 2), "-");

	/* 64 ports (a Quantum-2): port 64 is bit 0 of position 4. */
	mft_add(m64, 64, 0xc003, 1);
	mft_add(m64, 64, 0xc003, 48);
	mft_add(m64, 64, 0xc003, 63);
	mft_add(m64, 64, 0xc003, 64);
	KUNIT_EXPECT_STREQ(test, mft_out(test, m64, 4, 0, 0xc003, 64, 1),
			   "48 63 64");

	/* 254 ports, all 16 positions; bit 255 (reserved) goes nowhere. */
	mft_add(m254, 254, 0xc003, 2);
	mft_add(m254, 254, 0xc003, 128);
	mft_add(m254, 254, 0xc003, 254);
	mft_add(m254, 254, 0xc003, 255);
	KUNIT_EXPECT_STREQ(test, mft_out(test, m254, 4, 0, 0xc003, 254, 128),
			   "2 254");
	KUNIT_EXPECT_STREQ(test, mft_out(test, m254, 4, 0, 0xc003, 254, 254),
			   "2 128");
}

/* Fake QPs: the rules only compare their addresses. */
static struct ibdevsim_qp *fake_qp(int i)
{
	static u8 qps[IBDEVSIM_MAX_MCAST_QP_ATTACH + 2];

	return (struct ibdevsim_qp *)&qps[i];
}

static void mcast_gid(union ib_gid *gid, u32 n)
{
	memset(gid, 0, sizeof(*gid));
	gid->raw[0] = 0xff;
	gid->raw[1] = 0x12;
	gid->raw[2] = 0x40;
	gid->raw[3] = 0x1b;
	gid->raw[15] = n;
	gid->raw[14] = n >> 8;
}

/**
 * struct mcast_ctx - an HCA's attachments as the rules see them
 * @list: the attachments
 * @ngrps: the HCA's group count
 * @dup: what the last check found
 * @new_grp: what the last check said of the group
 */
struct mcast_ctx {
	struct list_head list;
	u32 ngrps;
	struct ibdevsim_mcast_att *dup;
	bool new_grp;
};

static int mcast_check(struct mcast_ctx *c, const union ib_gid *gid,
		       u16 mlid, int qp, bool ud)
{
	return ibdevsim_mcast_attach_check(&c->list, c->ngrps, gid, mlid,
					   fake_qp(qp), ud, &c->dup,
					   &c->new_grp);
}

static void mcast_attach_rules(struct kunit *test)
{
	struct mcast_ctx c = { .list = LIST_HEAD_INIT(c.list) };
	struct ibdevsim_mcast_att *atts;
	union ib_gid gid, other;
	int i;

	atts = kunit_kcalloc(test, IBDEVSIM_MAX_MCAST_QP_ATTACH, sizeof(*atts),
			     GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, atts);
	mcast_gid(&gid, 1);
	mcast_gid(&other, 2);
	KUNIT_EXPECT_EQ(test, mcast_check(&c, &gid, 0xc000, 0, true), 0);
	KUNIT_EXPECT_TRUE(test, c.new_grp);
	KUNIT_EXPECT_NULL(test, c.dup);
	/* Not UD, not a multicast GID, not a multicast LID. */
	KUNIT_EXPECT_EQ(test, mcast_check(&c, &gid, 0xc000, 0, false), -EINVAL);
	gid.raw[0] = 0xfe;
	KUNIT_EXPECT_EQ(test, mcast_check(&c, &gid, 0xc000, 0, true), -EINVAL);
	gid.raw[0] = 0xff;
	KUNIT_EXPECT_EQ(test, mcast_check(&c, &gid, 5, 0, true), -EINVAL);
	KUNIT_EXPECT_EQ(test, mcast_check(&c, &gid, 0xffff, 0, true), -EINVAL);

	/* Fill the group up to its limit of QPs. */
	c.ngrps = 1;
	for (i = 0; i < IBDEVSIM_MAX_MCAST_QP_ATTACH; i++) {
		KUNIT_ASSERT_EQ(test, mcast_check(&c, &gid, 0xc000, i, true),
				0);
		KUNIT_EXPECT_EQ(test, c.new_grp, i == 0);
		atts[i].mgid = gid;
		atts[i].mlid = 0xc000;
		atts[i].qp = fake_qp(i);
		atts[i].refs = 1;
		list_add_tail(&atts[i].list, &c.list);
	}
	/* A duplicate is found, not refused; one QP too many is. */
	KUNIT_EXPECT_EQ(test, mcast_check(&c, &gid, 0xc000, 3, true), 0);
	KUNIT_EXPECT_PTR_EQ(test, c.dup, &atts[3]);
	KUNIT_EXPECT_EQ(test, mcast_check(&c, &gid, 0xc000, i, true), -ENOMEM);
	/* Another group is fine, unless the HCA has all it can hold. */
	KUNIT_EXPECT_EQ(test, mcast_check(&c, &other, 0xc001, i, true), 0);
	KUNIT_EXPECT_TRUE(test, c.new_grp);
	c.ngrps = IBDEVSIM_MAX_MCAST_GRP;
	KUNIT_EXPECT_EQ(test, mcast_check(&c, &other, 0xc001, i, true),
			-ENOMEM);
	/* A new member of a known group needs no new group. */
	list_del(&atts[0].list);
	KUNIT_EXPECT_EQ(test, mcast_check(&c, &gid, 0xc000, 0, true), 0);
	KUNIT_EXPECT_FALSE(test, c.new_grp);

	/* Detach finds attachments by MGID, MLID and QP. */
	KUNIT_EXPECT_PTR_EQ(test, ibdevsim_mcast_find(&c.list, &gid, 0xc000,
						      fake_qp(5)), &atts[5]);
	KUNIT_EXPECT_NULL(test, ibdevsim_mcast_find(&c.list, &gid, 0xc001,
						    fake_qp(5)));
	KUNIT_EXPECT_NULL(test, ibdevsim_mcast_find(&c.list, &other, 0xc000,
						    fake_qp(5)));
	KUNIT_EXPECT_NULL(test, ibdevsim_mcast_find(&c.list, &gid, 0xc000,
						    fake_qp(0)));
	KUNIT_EXPECT_TRUE(test, ibdevsim_mcast_grp_used(&c.list, &gid));
	KUNIT_EXPECT_FALSE(test, ibdevsim_mcast_grp_used(&c.list, &other));
}

static void mcast_match(struct kunit *test)
{
	struct ibdevsim_mcast_att att = { .mlid = 0xc003 };
	union ib_gid other;

	mcast_gid(&att.mgid, 7);
	mcast_gid(&other, 8);
	KUNIT_EXPECT_TRUE(test, ibdevsim_mcast_match(&att, 0xc003, &att.mgid));
	/* Without a GRH the MLID alone selects the group. */
	KUNIT_EXPECT_TRUE(test, ibdevsim_mcast_match(&att, 0xc003, NULL));
	KUNIT_EXPECT_FALSE(test, ibdevsim_mcast_match(&att, 0xc003, &other));
	KUNIT_EXPECT_FALSE(test, ibdevsim_mcast_match(&att, 0xc004,
						      &att.mgid));
}

/*
 * Memory regions (mem.c): a user MR of three pages at IOVA 0x10000 whose
 * first byte sits 100 bytes into its first page, in an HCA's table under
 * key index 0x123.
 */
struct mr_fixture {
	struct ibdevsim_hca *hca;
	struct ib_pd kpd, upd, upd2;
	struct ibdevsim_mr mr;
	struct page *pages[3];
	u32 key;
	struct ibdevsim_seg seg;
};

static void mr_fixture_exit(void *data)
{
	struct mr_fixture *f = data;
	int i;

	xa_destroy(&f->hca->mrs);
	for (i = 0; i < ARRAY_SIZE(f->pages); i++)
		if (f->pages[i])
			__free_page(f->pages[i]);
	kfree(f->hca);
}

static struct mr_fixture *mr_fixture_init(struct kunit *test, int access)
{
	struct mr_fixture *f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);
	int i;

	KUNIT_ASSERT_NOT_NULL(test, f);
	f->hca = kzalloc(sizeof(*f->hca), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, f->hca);
	xa_init_flags(&f->hca->mrs, XA_FLAGS_ALLOC);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, mr_fixture_exit,
							f), 0);
	for (i = 0; i < ARRAY_SIZE(f->pages); i++) {
		f->pages[i] = alloc_page(GFP_KERNEL | __GFP_ZERO);
		KUNIT_ASSERT_NOT_NULL(test, f->pages[i]);
	}
	/* Any non-NULL uobject makes a PD a user's. */
	f->upd.uobject = (struct ib_uobject *)&f->kpd;
	f->upd2.uobject = (struct ib_uobject *)&f->kpd;
	f->mr.pd = &f->upd;
	f->mr.pages = f->pages;
	f->mr.npages = ARRAY_SIZE(f->pages);
	f->mr.page_off = 100;
	f->mr.iova = 0x10000;
	f->mr.length = 3 * PAGE_SIZE - 100;
	f->mr.access = access;
	f->key = 0x123 << 8 | 0x45;
	f->mr.ibmr.lkey = f->key;
	f->mr.ibmr.rkey = f->key;
	KUNIT_ASSERT_EQ(test, xa_insert(&f->hca->mrs, 0x123, &f->mr,
					GFP_KERNEL), 0);
	return f;
}

/* ibdevsim_mem_resolve() in @f's HCA, the segment left in @f->seg. */
static bool res(struct mr_fixture *f, struct ib_pd *pd, u32 key, u64 addr,
		u32 len, int access)
{
	return ibdevsim_mem_resolve(f->hca, pd, key, addr, len, access,
				    &f->seg);
}

/* Which keys, PDs, rights and bounds ibdevsim_mem_resolve() accepts. */
static void mem_resolve_rules(struct kunit *test)
{
	struct mr_fixture *f = mr_fixture_init(test, IB_ACCESS_LOCAL_WRITE |
					       IB_ACCESS_REMOTE_READ);
	u64 iova = f->mr.iova, end = f->mr.iova + f->mr.length;
	struct ib_pd *u = &f->upd;
	u32 key = f->key;

	rcu_read_lock();
	/* The DMA key: kernel PDs only, any address. */
	KUNIT_EXPECT_TRUE(test, res(f, &f->kpd, IBDEVSIM_DMA_LKEY,
				    0xffff888000001000ULL, 64,
				    IB_ACCESS_REMOTE_WRITE));
	KUNIT_EXPECT_NULL(test, f->seg.mr);
	KUNIT_EXPECT_FALSE(test, res(f, u, IBDEVSIM_DMA_LKEY, iova, 64, 0));
	/* Nothing to touch: always valid, whatever the key. */
	KUNIT_EXPECT_TRUE(test, res(f, u, 0xdead, 0, 0, 0));
	/* The whole MR, with rights it has; its last byte. */
	KUNIT_EXPECT_TRUE(test, res(f, u, key, iova, f->mr.length,
				    IB_ACCESS_LOCAL_WRITE |
				    IB_ACCESS_REMOTE_READ));
	KUNIT_EXPECT_PTR_EQ(test, f->seg.mr, &f->mr);
	KUNIT_EXPECT_EQ(test, f->seg.addr, iova);
	KUNIT_EXPECT_TRUE(test, res(f, u, key, end - 1, 1, 0));
	/* A right it lacks, another PD, a stale generation, no such index. */
	KUNIT_EXPECT_FALSE(test, res(f, u, key, iova, 8,
				     IB_ACCESS_REMOTE_WRITE));
	KUNIT_EXPECT_FALSE(test, res(f, &f->upd2, key, iova, 8, 0));
	KUNIT_EXPECT_FALSE(test, res(f, u, key ^ 1, iova, 8, 0));
	KUNIT_EXPECT_FALSE(test, res(f, u, key + 0x100, iova, 8, 0));
	/* Out of bounds: before, past the end, longer, wrapping around. */
	KUNIT_EXPECT_FALSE(test, res(f, u, key, iova - 1, 8, 0));
	KUNIT_EXPECT_FALSE(test, res(f, u, key, end - 7, 8, 0));
	KUNIT_EXPECT_FALSE(test, res(f, u, key, iova, f->mr.length + 1, 0));
	KUNIT_EXPECT_FALSE(test, res(f, u, key, U64_MAX - 3, 8, 0));
	rcu_read_unlock();
}

/*
 * A fast-registration MR: no key resolves before IB_WR_REG_MR; the
 * registration takes the key of the request (same index, any low byte)
 * and its rights; the iova maps into the page list across a page end;
 * an invalidation by the wrong key fails, by the right one ends it.
 */
static void mem_fast_reg(struct kunit *test)
{
	struct mr_fixture *f = mr_fixture_init(test, 0);
	u32 key = 0x124 << 8 | 0x10, nkey = 0x124 << 8 | 0x11;
	struct ibdevsim_seg dst, src;
	struct ibdevsim_mr *mr;
	struct ibdevsim_qp *qp;
	u64 pages[2];
	u8 *buf;
	int i;

	mr = kunit_kzalloc(test, sizeof(*mr), GFP_KERNEL);
	qp = kunit_kzalloc(test, sizeof(*qp), GFP_KERNEL);
	buf = kunit_kmalloc(test, 200, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, mr);
	KUNIT_ASSERT_NOT_NULL(test, qp);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	for (i = 0; i < 2; i++)
		pages[i] = (uintptr_t)page_address(f->pages[i]);
	qp->hca = f->hca;
	qp->ibqp.device = &f->hca->ibdev;
	qp->ibqp.pd = &f->kpd;
	mr->ibmr.device = &f->hca->ibdev;
	mr->pd = &f->kpd;
	mr->fr_pages = pages;
	mr->fr_max = 2;
	mr->fr_npages = 2;
	mr->fr_key = key;
	/* What ib_map_mr_sg() sets: 8000 bytes from byte 100 of page 0. */
	mr->ibmr.page_size = PAGE_SIZE;
	mr->ibmr.iova = 0x7000000 + 100;
	mr->ibmr.length = 2 * PAGE_SIZE - 100;
	KUNIT_ASSERT_EQ(test, xa_insert(&f->hca->mrs, 0x124, mr, GFP_KERNEL),
			0);

	rcu_read_lock();
	KUNIT_EXPECT_FALSE(test, res(f, &f->kpd, key, mr->ibmr.iova, 8, 0));
	/* Another index, rights it cannot have: refused, still invalid. */
	KUNIT_EXPECT_EQ(test, ibdevsim_fr_reg(qp, &mr->ibmr, 0x125 << 8, 0),
			IB_WC_MW_BIND_ERR);
	KUNIT_EXPECT_EQ(test, ibdevsim_fr_reg(qp, &mr->ibmr, nkey,
					      IB_ACCESS_MW_BIND),
			IB_WC_MW_BIND_ERR);
	KUNIT_EXPECT_FALSE(test, res(f, &f->kpd, key, mr->ibmr.iova, 8, 0));
	KUNIT_EXPECT_EQ(test, ibdevsim_fr_reg(qp, &mr->ibmr, nkey,
					      IB_ACCESS_LOCAL_WRITE |
					      IB_ACCESS_REMOTE_READ),
			IB_WC_SUCCESS);
	KUNIT_EXPECT_FALSE(test, res(f, &f->kpd, key, mr->ibmr.iova, 8, 0));
	KUNIT_EXPECT_FALSE(test, res(f, &f->kpd, nkey, mr->ibmr.iova, 8,
				     IB_ACCESS_REMOTE_WRITE));
	KUNIT_EXPECT_FALSE(test, res(f, &f->kpd, nkey, mr->ibmr.iova - 1, 8,
				     0));
	KUNIT_EXPECT_FALSE(test, res(f, &f->kpd, nkey, mr->ibmr.iova,
				     mr->ibmr.length + 1, 0));
	KUNIT_EXPECT_FALSE(test, res(f, &f->upd, nkey, mr->ibmr.iova, 8, 0));

	/* 200 bytes across the end of page 0: 100 there, 100 in page 1. */
	for (i = 0; i < 200; i++)
		buf[i] = i + 1;
	KUNIT_ASSERT_TRUE(test, res(f, &f->kpd, nkey,
				    mr->ibmr.iova + PAGE_SIZE - 200, 200,
				    IB_ACCESS_LOCAL_WRITE |
				    IB_ACCESS_REMOTE_READ));
	dst = f->seg;
	src = ibdevsim_kseg(buf, 200);
	KUNIT_EXPECT_EQ(test, ibdevsim_seg_copy(&dst, 1, &src, 1, 200), 200);
	KUNIT_EXPECT_EQ(test, ((u8 *)pages[0])[PAGE_SIZE - 100], 1);
	KUNIT_EXPECT_EQ(test, ((u8 *)pages[0])[PAGE_SIZE - 1], 100);
	KUNIT_EXPECT_EQ(test, ((u8 *)pages[1])[0], 101);
	KUNIT_EXPECT_EQ(test, ((u8 *)pages[1])[99], 200);
	KUNIT_EXPECT_EQ(test, ((u8 *)pages[1])[100], 0);

	KUNIT_EXPECT_FALSE(test, ibdevsim_fr_inv(qp, key));
	KUNIT_EXPECT_TRUE(test, ibdevsim_fr_inv(qp, nkey));
	KUNIT_EXPECT_FALSE(test, res(f, &f->kpd, nkey, mr->ibmr.iova, 8, 0));
	KUNIT_EXPECT_FALSE(test, ibdevsim_fr_inv(qp, nkey));
	rcu_read_unlock();
	xa_erase(&f->hca->mrs, 0x124);
}

/* Bytes go to the right pages, at the MR's offset, and stop in time. */
static void mem_seg_copy(struct kunit *test)
{
	struct mr_fixture *f = mr_fixture_init(test, IB_ACCESS_LOCAL_WRITE);
	struct ibdevsim_seg dst[2], src[2];
	u8 *buf, *back, *p1, *p2;
	u32 i;

	buf = kunit_kmalloc(test, 6000, GFP_KERNEL);
	back = kunit_kzalloc(test, 6000, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	KUNIT_ASSERT_NOT_NULL(test, back);
	/* Never 0, the value of bytes no copy touched. */
	for (i = 0; i < 6000; i++)
		buf[i] = i % 251 + 1;

	rcu_read_lock();
	/* 5000 bytes from two kernel pieces into MR bytes 10..5009. */
	src[0] = ibdevsim_kseg(buf, 1000);
	src[1] = ibdevsim_kseg(buf + 1000, 5000);
	KUNIT_ASSERT_TRUE(test, res(f, &f->upd, f->key, f->mr.iova + 10, 5000,
				    IB_ACCESS_LOCAL_WRITE));
	dst[0] = f->seg;
	KUNIT_EXPECT_EQ(test, ibdevsim_seg_copy(dst, 1, src, 2, 5000), 5000);
	rcu_read_unlock();
	/* MR byte b is page (b + 100) / PAGE_SIZE, offset (b + 100) % ... */
	p1 = page_address(f->pages[0]);
	p2 = page_address(f->pages[1]);
	KUNIT_EXPECT_EQ(test, p1[109], 0);
	KUNIT_EXPECT_EQ(test, p1[110], buf[0]);
	KUNIT_EXPECT_EQ(test, p1[PAGE_SIZE - 1], buf[PAGE_SIZE - 111]);
	KUNIT_EXPECT_EQ(test, p2[0], buf[PAGE_SIZE - 110]);
	KUNIT_EXPECT_EQ(test, p2[5110 - PAGE_SIZE - 1], buf[4999]);
	KUNIT_EXPECT_EQ(test, p2[5110 - PAGE_SIZE], 0);

	/* Back out through two MR pieces, the first 2 bytes skipped. */
	rcu_read_lock();
	KUNIT_ASSERT_TRUE(test, res(f, &f->upd, f->key, f->mr.iova + 10, 3000,
				    0));
	src[0] = f->seg;
	KUNIT_ASSERT_TRUE(test, res(f, &f->upd, f->key, f->mr.iova + 3010,
				    2000, 0));
	src[1] = f->seg;
	ibdevsim_segs_skip(src, 2, 2);
	KUNIT_EXPECT_EQ(test, src[0].len, 2998);
	dst[0] = ibdevsim_kseg(back, 6000);
	KUNIT_EXPECT_EQ(test, ibdevsim_seg_copy(dst, 1, src, 2, 6000), 4998);
	KUNIT_EXPECT_MEMEQ(test, back, buf + 2, 4998);
	/* A shorter destination list ends the copy. */
	dst[0] = ibdevsim_kseg(back, 10);
	dst[1] = ibdevsim_kseg(back + 100, 5);
	KUNIT_EXPECT_EQ(test, ibdevsim_seg_copy(dst, 2, src, 2, 6000), 15);
	rcu_read_unlock();
	KUNIT_EXPECT_EQ(test, back[9], buf[11]);
	KUNIT_EXPECT_EQ(test, back[100], buf[12]);
	KUNIT_EXPECT_EQ(test, back[104], buf[16]);
	KUNIT_EXPECT_EQ(test, back[105], buf[107]);
}

/*
 * A CQ of 4 holding two QPs' completions, wrapping round the ring: a send
 * completion frees the slots it carries when polled, not before; cleaning
 * one QP out keeps the other's completions in order.
 */
/* Zeroed memory freed with the test, or the test stops here. */
static void *test_zalloc(struct kunit *test, size_t size)
{
	void *p = kunit_kzalloc(test, size, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, p);
	return p;
}

static void cq_slots_and_clean(struct kunit *test)
{
	struct ibdevsim_qp *qa, *qb;
	struct ibdevsim_cq *cq;
	struct ib_wc wc = {}, out[4];
	/* Odd entries are b's, even ones a's. */
	static const struct {
		bool send;
		u32 slots;
	} add[] = {
		{ true, 3 },	/* a: a send and 2 unsignaled ones */
		{ false, 0 },	/* b: a receive */
		{ true, 2 },	/* a */
		{ true, 1 },	/* b */
	};
	int i;

	/* Far too big for the stack. */
	qa = test_zalloc(test, sizeof(*qa));
	qb = test_zalloc(test, sizeof(*qb));
	cq = test_zalloc(test, sizeof(*cq));
	cq->size = 4;
	cq->ring = kunit_kcalloc(test, cq->size, sizeof(*cq->ring), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, cq->ring);
	qa->sq_used = 6;
	qb->sq_used = 1;
	spin_lock_init(&cq->lock);
	spin_lock_init(&qa->sq_lock);
	spin_lock_init(&qb->sq_lock);
	for (i = 0; i < ARRAY_SIZE(add); i++) {
		struct ibdevsim_qp *qp = i % 2 ? qb : qa;

		wc.wr_id = i + 1;
		wc.qp = &qp->ibqp;
		KUNIT_ASSERT_TRUE(test, ibdevsim_cq_add(cq, &wc, false,
							add[i].send ? qp : NULL,
							add[i].slots));
	}
	KUNIT_EXPECT_EQ(test, qa->sq_used, 6);

	KUNIT_ASSERT_EQ(test, ibdevsim_poll_cq(&cq->ibcq, 1, out), 1);
	KUNIT_EXPECT_EQ(test, out[0].wr_id, 1);
	KUNIT_EXPECT_EQ(test, qa->sq_used, 3);

	/* The fifth goes round to the ring's first entry. */
	wc.wr_id = 5;
	wc.qp = &qa->ibqp;
	KUNIT_ASSERT_TRUE(test, ibdevsim_cq_add(cq, &wc, false, qa, 1));

	ibdevsim_cq_clean(cq, qb);
	KUNIT_ASSERT_EQ(test, ibdevsim_poll_cq(&cq->ibcq, 4, out), 2);
	KUNIT_EXPECT_EQ(test, out[0].wr_id, 3);
	KUNIT_EXPECT_EQ(test, out[1].wr_id, 5);
	KUNIT_EXPECT_EQ(test, qa->sq_used, 0);
	/* b's slot went with its cleaned completion: reset zeroes it. */
	KUNIT_EXPECT_EQ(test, qb->sq_used, 1);
	KUNIT_EXPECT_EQ(test, ibdevsim_poll_cq(&cq->ibcq, 4, out), 0);
}

/* A switch node with @nports ports, no cable, an empty LFT. */
static struct ibdevsim_node *fake_switch(struct kunit *test, u8 nports)
{
	struct ibdevsim_node *node;
	int i;

	node = test_zalloc(test, struct_size(node, ports, nports + 1));
	node->type = IBDEVSIM_NODE_SWITCH;
	node->nports = nports;
	spin_lock_init(&node->lock);
	node->sw = test_zalloc(test, sizeof(*node->sw));
	node->sw->lft = test_zalloc(test, IBDEVSIM_LFT_CAP);
	memset(node->sw->lft, 0xff, IBDEVSIM_LFT_CAP);
	node->sw->mft = test_zalloc(test, IBDEVSIM_MFT_CAP *
					  ibdevsim_mft_positions(nports) *
					  sizeof(*node->sw->mft));
	for (i = 0; i <= nports; i++)
		ibdevsim_port_init(&node->ports[i], node, i);
	return node;
}

/* An RC request packet (a SEND_ONLY) of @len payload bytes for @dlid. */
static struct ibdevsim_pkt *rc_pkt_len(struct kunit *test, u16 dlid, u32 len)
{
	struct ibdevsim_pkt *pkt = ibdevsim_pkt_alloc(len, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, pkt);
	pkt->rc = true;
	pkt->rch.opcode = IB_OPCODE_RC_SEND_ONLY;
	pkt->dlid = dlid;
	return pkt;
}

/* The same, with no payload. */
static struct ibdevsim_pkt *rc_pkt(struct kunit *test, u16 dlid)
{
	return rc_pkt_len(test, dlid, 0);
}

static void walk_one(struct ibdevsim_port *out, struct ibdevsim_pkt *pkt)
{
	rcu_read_lock();
	ibdevsim_walk(out, pkt);
	rcu_read_unlock();
}

/* Two switches cabled port 1 to port 1, both ends ACTIVE. */
static void cable_active(struct ibdevsim_port *a, struct ibdevsim_port *b)
{
	a->peer = b;
	b->peer = a;
	a->st.state = IB_PORT_ACTIVE;
	b->st.state = IB_PORT_ACTIVE;
}

/*
 * Wherever the fabric drops an RC packet, the drop is counted where it
 * happened: an uncabled port, a pulled cable, a far end not ACTIVE, a
 * switch without a route.  (The requester's timer finds out.)
 */
static void rc_drop_counted(struct kunit *test)
{
	struct ibdevsim_node *a = fake_switch(test, 2);
	struct ibdevsim_node *b = fake_switch(test, 2);

	ibdevsim_pkt_free(NULL);

	/* No cable. */
	walk_one(&a->ports[1], rc_pkt(test, 5));
	KUNIT_EXPECT_EQ(test, a->ports[1].cnt.xmit_discards, 1);

	/* The far end not ACTIVE, then the cable pulled. */
	cable_active(&a->ports[1], &b->ports[1]);
	b->ports[1].st.state = IB_PORT_ARMED;
	walk_one(&a->ports[1], rc_pkt(test, 5));
	KUNIT_EXPECT_EQ(test, a->ports[1].cnt.xmit_discards, 2);
	b->ports[1].st.state = IB_PORT_ACTIVE;
	a->ports[1].pulled = true;
	walk_one(&a->ports[1], rc_pkt(test, 5));
	KUNIT_EXPECT_EQ(test, a->ports[1].cnt.xmit_discards, 3);
	KUNIT_EXPECT_EQ(test, a->ports[1].cnt.xmit_pkts, 0);

	/* Across the cable, no route at b: counted at b's input port. */
	a->ports[1].pulled = false;
	walk_one(&a->ports[1], rc_pkt(test, 5));
	KUNIT_EXPECT_EQ(test, a->ports[1].cnt.xmit_pkts, 1);
	KUNIT_EXPECT_EQ(test, b->ports[1].cnt.rcv_pkts, 1);
	KUNIT_EXPECT_EQ(test, b->ports[1].cnt.rcv_errors, 1);

	/* Routed by b out of its port 2, which has no cable. */
	b->sw->lft[5] = 2;
	b->sw->lft_top = 5;
	walk_one(&a->ports[1], rc_pkt(test, 5));
	KUNIT_EXPECT_EQ(test, b->ports[1].cnt.rcv_pkts, 2);
	KUNIT_EXPECT_EQ(test, b->ports[2].cnt.xmit_discards, 1);
}

/* A multicast copy at a switch is not made of an RC request. */
static void rc_not_replicated(struct kunit *test)
{
	struct ibdevsim_node *a = fake_switch(test, 1);
	struct ibdevsim_node *b = fake_switch(test, 3);

	cable_active(&a->ports[1], &b->ports[1]);
	b->sw->mft_top = IBDEVSIM_MCAST_LID_BASE;
	b->sw->mft[0] = BIT(2) | BIT(3);
	walk_one(&a->ports[1], rc_pkt(test, IBDEVSIM_MCAST_LID_BASE));
	KUNIT_EXPECT_EQ(test, b->ports[2].cnt.xmit_discards, 0);
	KUNIT_EXPECT_EQ(test, b->ports[3].cnt.xmit_discards, 0);
}

/*
 * An HCA port with P_Keys 0xffff and 0x8001 finds the QP a packet names:
 * a UD QP on P_Key index 1 takes only its own partition's packets (IBTA
 * 10.9.3), QP1 any P_Key of the table; refusals are counted.
 */
static void find_qp_pkeys(struct kunit *test)
{
	struct ibdevsim_pkt pkt = { .dlid = 7 };
	struct ib_mad_notice_attr *ntc;
	struct ibdevsim_qp *ud, *gsi, *qp;
	struct ibdevsim_node *node;
	struct ibdevsim_hca *hca;
	struct ibdevsim_port *in;
	int idx = -2;

	node = test_zalloc(test, struct_size(node, ports, 2));
	hca = test_zalloc(test, sizeof(*hca));
	ud = test_zalloc(test, sizeof(*ud));
	gsi = test_zalloc(test, sizeof(*gsi));
	node->type = IBDEVSIM_NODE_HCA;
	node->nports = 1;
	node->hca = hca;
	spin_lock_init(&node->lock);
	hca->node = node;
	xa_init_flags(&hca->qps, XA_FLAGS_ALLOC);
	ibdevsim_port_init(&node->ports[1], node, 1);
	in = &node->ports[1];
	in->st.lid = 7;
	in->pkeys[1] = 0x8001;
	ud->ibqp.qp_type = IB_QPT_UD;
	ud->port = 1;
	ud->pkey_index = 1;
	ud->qkey = 0x11111111;
	gsi->ibqp.qp_type = IB_QPT_GSI;
	gsi->port = 1;
	gsi->qkey = IB_QP1_QKEY;
	in->qp1 = gsi;
	KUNIT_ASSERT_EQ(test, xa_err(xa_store(&hca->qps, 5, ud, GFP_KERNEL)),
			0);

	/*
	 * The port is in the default partition; the QP is not.  The port's
	 * SMA makes a Trap 257 of the refusal.
	 */
	in->st.sm_lid = 1;
	pkt.slid = 9;
	pkt.sl = 2;
	pkt.src_qpn = 0x33;
	pkt.dest_qpn = 5;
	pkt.qkey = ud->qkey;
	pkt.pkey = 0xffff;
	KUNIT_EXPECT_NULL(test, ibdevsim_hca_find_qp(in, &pkt, &idx));
	KUNIT_EXPECT_EQ(test, in->st.pkey_violations, 1);
	KUNIT_EXPECT_EQ(test, in->cnt.rcv_errors, 1);
	ntc = (struct ib_mad_notice_attr *)in->trap.smp.data;
	KUNIT_EXPECT_EQ(test, in->trap.smp.method, IB_MGMT_METHOD_TRAP);
	KUNIT_EXPECT_EQ(test, ntc->generic_type, IB_NOTICE_TYPE_SECURITY);
	KUNIT_EXPECT_EQ(test, be16_to_cpu(ntc->trap_num), 257);
	KUNIT_EXPECT_EQ(test, be16_to_cpu(ntc->details.ntc_257_258.lid1), 9);
	KUNIT_EXPECT_EQ(test, be16_to_cpu(ntc->details.ntc_257_258.lid2), 7);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(ntc->details.ntc_257_258.key),
			0xffff);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(ntc->details.ntc_257_258.sl_qp1),
			2U << 28 | 0x33);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(ntc->details.ntc_257_258.qp2), 5);
	/* Its own partition, from a limited member: taken, at index 1. */
	pkt.pkey = 0x0001;
	qp = ibdevsim_hca_find_qp(in, &pkt, &idx);
	KUNIT_EXPECT_PTR_EQ(test, qp, ud);
	KUNIT_EXPECT_EQ(test, idx, 1);
	/* The right partition and the wrong Q_Key. */
	pkt.pkey = 0x8001;
	pkt.qkey = 1;
	KUNIT_EXPECT_NULL(test, ibdevsim_hca_find_qp(in, &pkt, &idx));
	KUNIT_EXPECT_EQ(test, in->st.qkey_violations, 1);

	/* QP1: any P_Key of the table, at its index; no other. */
	pkt.dest_qpn = 1;
	pkt.qkey = IB_QP1_QKEY;
	qp = ibdevsim_hca_find_qp(in, &pkt, &idx);
	KUNIT_EXPECT_PTR_EQ(test, qp, gsi);
	KUNIT_EXPECT_EQ(test, idx, 1);
	pkt.pkey = 0xffff;
	qp = ibdevsim_hca_find_qp(in, &pkt, &idx);
	KUNIT_EXPECT_PTR_EQ(test, qp, gsi);
	KUNIT_EXPECT_EQ(test, idx, 0);
	pkt.pkey = 0x8002;
	KUNIT_EXPECT_NULL(test, ibdevsim_hca_find_qp(in, &pkt, &idx));
	KUNIT_EXPECT_EQ(test, in->st.pkey_violations, 2);
	KUNIT_EXPECT_EQ(test, in->cnt.rcv_errors, 3);
	/* The port is DOWN: the trap work gives up without sending. */
	cancel_delayed_work_sync(&in->trap.work);
	xa_destroy(&hca->qps);
}

/*
 * A link carries packets up to the smaller NeighborMTU of its ends: with
 * one end at 1024, a 2048-byte packet is discarded at the sending port
 * and a 1024-byte one crosses.
 */
static void link_mtu(struct kunit *test)
{
	struct ibdevsim_node *a = fake_switch(test, 1);
	struct ibdevsim_node *b = fake_switch(test, 1);

	cable_active(&a->ports[1], &b->ports[1]);
	b->ports[1].st.neighbor_mtu = IB_MTU_1024;
	KUNIT_EXPECT_EQ(test, ibdevsim_port_mtu(&a->ports[1]), 4096);
	KUNIT_EXPECT_EQ(test, ibdevsim_port_mtu(&b->ports[1]), 1024);
	walk_one(&a->ports[1], rc_pkt_len(test, 5, 2048));
	KUNIT_EXPECT_EQ(test, a->ports[1].cnt.xmit_discards, 1);
	KUNIT_EXPECT_EQ(test, b->ports[1].cnt.rcv_pkts, 0);
	walk_one(&a->ports[1], rc_pkt_len(test, 5, 1024));
	KUNIT_EXPECT_EQ(test, a->ports[1].cnt.xmit_discards, 1);
	KUNIT_EXPECT_EQ(test, b->ports[1].cnt.rcv_pkts, 1);
}

/*
 * PSNs compare modulo 2^24, across the wrap; a message of n bytes takes
 * ceil(n / MTU) packets, an empty one a packet; each packet's opcode says
 * where it stands in its message, and only the last carries immediate
 * data or an R_Key to invalidate.
 */
static void rc_psn_and_packets(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, ibdevsim_psn_add(0xffffff, 1), 0);
	KUNIT_EXPECT_EQ(test, ibdevsim_psn_add(0xfffffe, 5), 3);
	KUNIT_EXPECT_EQ(test, ibdevsim_psn_add(5, -1), 4);
	KUNIT_EXPECT_EQ(test, ibdevsim_psn_add(0, -1), 0xffffff);
	KUNIT_EXPECT_LT(test, ibdevsim_psn_cmp(0xfffff0, 0x10), 0);
	KUNIT_EXPECT_GT(test, ibdevsim_psn_cmp(0x10, 0xfffff0), 0);
	KUNIT_EXPECT_EQ(test, ibdevsim_psn_cmp(0x123456, 0x123456), 0);
	KUNIT_EXPECT_LT(test, ibdevsim_psn_cmp(1, 2), 0);
	/* Half the PSN space ahead is "ahead", beyond it "behind". */
	KUNIT_EXPECT_GT(test, ibdevsim_psn_cmp(0x7fffff, 0), 0);
	KUNIT_EXPECT_LT(test, ibdevsim_psn_cmp(0x800001, 0), 0);

	KUNIT_EXPECT_EQ(test, ibdevsim_rc_npkts(0, 4096), 1);
	KUNIT_EXPECT_EQ(test, ibdevsim_rc_npkts(1, 4096), 1);
	KUNIT_EXPECT_EQ(test, ibdevsim_rc_npkts(4096, 4096), 1);
	KUNIT_EXPECT_EQ(test, ibdevsim_rc_npkts(4097, 4096), 2);
	KUNIT_EXPECT_EQ(test, ibdevsim_rc_npkts(1 << 20, 256), 4096);

	KUNIT_EXPECT_EQ(test, ibdevsim_rc_opcode(IB_WR_SEND, 0, 1),
			IB_OPCODE_RC_SEND_ONLY);
	KUNIT_EXPECT_EQ(test, ibdevsim_rc_opcode(IB_WR_SEND_WITH_IMM, 0, 3),
			IB_OPCODE_RC_SEND_FIRST);
	KUNIT_EXPECT_EQ(test, ibdevsim_rc_opcode(IB_WR_SEND_WITH_IMM, 1, 3),
			IB_OPCODE_RC_SEND_MIDDLE);
	KUNIT_EXPECT_EQ(test, ibdevsim_rc_opcode(IB_WR_SEND_WITH_IMM, 2, 3),
			IB_OPCODE_RC_SEND_LAST_WITH_IMMEDIATE);
	KUNIT_EXPECT_EQ(test, ibdevsim_rc_opcode(IB_WR_SEND_WITH_INV, 0, 1),
			IB_OPCODE_RC_SEND_ONLY_WITH_INVALIDATE);
	KUNIT_EXPECT_EQ(test, ibdevsim_rc_opcode(IB_WR_SEND_WITH_INV, 1, 2),
			IB_OPCODE_RC_SEND_LAST_WITH_INVALIDATE);
	KUNIT_EXPECT_EQ(test, ibdevsim_rc_opcode(IB_WR_RDMA_WRITE, 0, 2),
			IB_OPCODE_RC_RDMA_WRITE_FIRST);
	KUNIT_EXPECT_EQ(test, ibdevsim_rc_opcode(IB_WR_RDMA_WRITE, 1, 2),
			IB_OPCODE_RC_RDMA_WRITE_LAST);
	KUNIT_EXPECT_EQ(test, ibdevsim_rc_opcode(IB_WR_RDMA_WRITE, 0, 1),
			IB_OPCODE_RC_RDMA_WRITE_ONLY);
	KUNIT_EXPECT_EQ(test,
			ibdevsim_rc_opcode(IB_WR_RDMA_WRITE_WITH_IMM, 1, 3),
			IB_OPCODE_RC_RDMA_WRITE_MIDDLE);
	KUNIT_EXPECT_EQ(test,
			ibdevsim_rc_opcode(IB_WR_RDMA_WRITE_WITH_IMM, 0, 1),
			IB_OPCODE_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE);
	KUNIT_EXPECT_EQ(test,
			ibdevsim_rc_opcode(IB_WR_RDMA_WRITE_WITH_IMM, 2, 3),
			IB_OPCODE_RC_RDMA_WRITE_LAST_WITH_IMMEDIATE);
}

/*
 * The local ACK timeout is 4.096 us << timeout, none for 0; the RNR NAK
 * timer codes follow IBTA's table, 0 the longest.
 */
static void rc_timers(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, ibdevsim_rc_ack_timeout_ns(0), 0);
	KUNIT_EXPECT_EQ(test, ibdevsim_rc_ack_timeout_ns(1), 8192);
	/* 14: about 67 ms; 19 (a default path's): about 2.1 s. */
	KUNIT_EXPECT_EQ(test, ibdevsim_rc_ack_timeout_ns(14), 67108864);
	KUNIT_EXPECT_EQ(test, ibdevsim_rc_ack_timeout_ns(19), 2147483648ULL);
	KUNIT_EXPECT_EQ(test, ibdevsim_rc_ack_timeout_ns(31),
			4096ULL << 31);
	KUNIT_EXPECT_EQ(test, ibdevsim_rnr_timer_us(0), 655360);
	KUNIT_EXPECT_EQ(test, ibdevsim_rnr_timer_us(1), 10);
	KUNIT_EXPECT_EQ(test, ibdevsim_rnr_timer_us(12), 640);
	KUNIT_EXPECT_EQ(test, ibdevsim_rnr_timer_us(31), 491520);
	KUNIT_EXPECT_EQ(test, ibdevsim_rnr_timer_us(0x20 | 14), 1280);
}

/* A connected RC requester on port 1 of a one-port HCA, in RTS. */
struct rc_fixture {
	struct ibdevsim_node *node;
	struct ibdevsim_hca *hca;
	struct ibdevsim_qp *qp;
	struct ib_pd pd;
	u8 *buf;
};

static void rc_noop_work(struct work_struct *work)
{
}

static void rc_fixture_exit(void *data)
{
	struct rc_fixture *f = data;
	struct ibdevsim_swqe *s, *tmp;

	timer_delete_sync(&f->qp->rc_timer);
	cancel_work_sync(&f->qp->send_work);
	list_splice_init(&f->qp->rc_inflight, &f->qp->rc_done);
	list_splice_init(&f->qp->sendq, &f->qp->rc_done);
	list_for_each_entry_safe(s, tmp, &f->qp->rc_done, list)
		kfree(s);
}

static struct rc_fixture *rc_fixture_init(struct kunit *test, u32 psn)
{
	struct rc_fixture *f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);
	struct ibdevsim_qp *qp;

	KUNIT_ASSERT_NOT_NULL(test, f);
	f->node = test_zalloc(test, struct_size(f->node, ports, 2));
	f->hca = test_zalloc(test, sizeof(*f->hca));
	f->qp = test_zalloc(test, sizeof(*f->qp));
	f->buf = test_zalloc(test, 3 * 1024);
	f->node->type = IBDEVSIM_NODE_HCA;
	f->node->nports = 1;
	f->node->hca = f->hca;
	spin_lock_init(&f->node->lock);
	ibdevsim_port_init(&f->node->ports[1], f->node, 1);
	f->hca->node = f->node;
	qp = f->qp;
	qp->hca = f->hca;
	qp->port = 1;
	qp->ibqp.qp_type = IB_QPT_RC;
	qp->ibqp.pd = &f->pd;
	qp->ibqp.device = &f->hca->ibdev;
	spin_lock_init(&qp->sq_lock);
	spin_lock_init(&qp->rq_lock);
	INIT_LIST_HEAD(&qp->sendq);
	INIT_WORK(&qp->send_work, rc_noop_work);
	ibdevsim_rc_qp_init(qp);
	qp->mtu = 1024;
	qp->state = IB_QPS_RTS;
	/* The longest timers: nothing fires while the test runs. */
	qp->timeout = 31;
	qp->max_rd_atomic = 4;
	qp->retry_cnt = 2;
	qp->rc_retry_left = 2;
	qp->rnr_retry = 1;
	qp->rc_rnr_left = 1;
	qp->rc_next_psn = psn;
	qp->rc_tx_psn = psn;
	qp->rc_una = psn;
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, rc_fixture_exit,
							f), 0);
	return f;
}

/* Post a signaled RC request of @len bytes of @f->buf from @off. */
static void rc_post(struct kunit *test, struct rc_fixture *f,
		    enum ib_wr_opcode op, u32 off, u32 len)
{
	struct ib_sge sge = {
		.addr = (uintptr_t)f->buf + off,
		.length = len,
		.lkey = IBDEVSIM_DMA_LKEY,
	};
	struct ib_rdma_wr wr = {
		.wr = { .opcode = op, .sg_list = &sge, .num_sge = 1 },
		.remote_addr = 0x40000,
		.rkey = 0x77,
	};
	struct ibdevsim_swqe *s = kzalloc(struct_size(s, sgl, 1), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, s);
	ibdevsim_rc_fill_swqe(s, &wr.wr);
	s->byte_len = len;
	s->signaled = true;
	list_add_tail(&s->list, &f->qp->sendq);
}

/* What the send work would put on the wire next, or false. */
static bool rc_tx(struct kunit *test, struct rc_fixture *f,
		  struct ibdevsim_pkt *pkt)
{
	enum ib_wc_status st = IB_WC_SUCCESS;
	struct ibdevsim_qp *qp = f->qp;
	struct ibdevsim_swqe *s;
	bool again;
	u32 psn;

	memset(pkt, 0, sizeof(*pkt));
	pkt->len = 1024;
	spin_lock_irq(&qp->sq_lock);
	s = ibdevsim_rc_next_locked(qp, &psn, &again);
	if (s)
		qp->rc_tx_psn = ibdevsim_rc_build_locked(qp, s, psn, pkt, &st);
	spin_unlock_irq(&qp->sq_lock);
	KUNIT_EXPECT_EQ(test, st, IB_WC_SUCCESS);
	return s;
}

/* Hand the requester an ACK, NAK or READ response. */
static bool rc_rx(struct rc_fixture *f, u8 opcode, u8 syndrome, u32 psn,
		  const u8 *data, u32 len, bool *failed)
{
	struct ibdevsim_pkt *pkt = ibdevsim_pkt_alloc(len, GFP_KERNEL);
	bool kick;

	if (!pkt)
		return false;
	pkt->rc = true;
	pkt->rch.opcode = opcode;
	pkt->rch.syndrome = syndrome;
	pkt->rch.psn = psn;
	if (len)
		memcpy(pkt->data, data, len);
	spin_lock_irq(&f->qp->sq_lock);
	kick = ibdevsim_rc_req_recv_locked(f->qp, pkt, failed);
	spin_unlock_irq(&f->qp->sq_lock);
	kfree(pkt);
	return kick;
}

static u64 rc_stat(struct rc_fixture *f, enum ibdevsim_rc_stat st)
{
	return atomic64_read(&f->node->ports[1].rc_stats[st]);
}

static enum ib_wc_status rc_done_status(struct rc_fixture *f, int i)
{
	struct ibdevsim_swqe *s;

	list_for_each_entry(s, &f->qp->rc_done, list)
		if (!i--)
			return s->status;
	return -1;
}

/*
 * The requester across the PSN wrap, path MTU 1024: a 2,500-byte SEND
 * goes as FIRST, MIDDLE, LAST (AckReq on the last), a 2,048-byte READ as
 * one request that takes two PSNs, an empty SEND as ONLY.  A partial ACK
 * completes nothing; a READ response after a gap asks the READ again,
 * once; the responses in order complete the SEND and the READ, in order,
 * with the data in place; a sequence NAK sends again from its PSN; two
 * RNR NAKs with rnr_retry 1 fail the last SEND and flush nothing else.
 */
static void rc_requester(struct kunit *test)
{
	struct rc_fixture *f = rc_fixture_init(test, 0xfffffe);
	struct ibdevsim_pkt *pkt = test_zalloc(test, struct_size(pkt, data,
								 1024));
	static const struct {
		u32 psn;
		u8 opcode;
		u32 len;
		bool ack_req;
	} want[] = {
		{ 0xfffffe, IB_OPCODE_RC_SEND_FIRST, 1024, false },
		{ 0xffffff, IB_OPCODE_RC_SEND_MIDDLE, 1024, false },
		{ 0, IB_OPCODE_RC_SEND_LAST, 452, true },
		{ 1, IB_OPCODE_RC_RDMA_READ_REQUEST, 0, false },
		{ 3, IB_OPCODE_RC_SEND_ONLY, 0, true },
	};
	u8 *a = test_zalloc(test, 1024), *b = test_zalloc(test, 1024);
	struct ibdevsim_qp *qp = f->qp;
	bool failed = false;
	int i;

	for (i = 0; i < 2500; i++)
		f->buf[i] = i % 253;
	memset(a, 0xa5, 1024);
	memset(b, 0x5a, 1024);
	rc_post(test, f, IB_WR_SEND, 0, 2500);
	rc_post(test, f, IB_WR_RDMA_READ, 1024, 2048);
	rc_post(test, f, IB_WR_SEND, 0, 0);
	for (i = 0; i < ARRAY_SIZE(want); i++) {
		KUNIT_ASSERT_TRUE(test, rc_tx(test, f, pkt));
		KUNIT_EXPECT_EQ(test, pkt->rch.psn, want[i].psn);
		KUNIT_EXPECT_EQ(test, pkt->rch.opcode, want[i].opcode);
		KUNIT_EXPECT_EQ(test, pkt->len, want[i].len);
		KUNIT_EXPECT_EQ(test, pkt->rch.ack_req, want[i].ack_req);
	}
	KUNIT_EXPECT_EQ(test, pkt->len, 0);
	KUNIT_EXPECT_FALSE(test, rc_tx(test, f, pkt));
	KUNIT_EXPECT_EQ(test, qp->rc_next_psn, 4);

	/* ACK of the first two packets: the SEND is not done yet. */
	rc_rx(f, IB_OPCODE_RC_ACKNOWLEDGE, 0x1f, 0xffffff, NULL, 0, &failed);
	KUNIT_EXPECT_EQ(test, qp->rc_una, 0);
	KUNIT_EXPECT_TRUE(test, list_empty(&qp->rc_done));

	/* The READ's second response first: ask again from PSN 1, once. */
	KUNIT_EXPECT_TRUE(test, rc_rx(f, IB_OPCODE_RC_RDMA_READ_RESPONSE_LAST,
				      0x1f, 2, b, 1024, &failed));
	KUNIT_EXPECT_EQ(test, qp->rc_tx_psn, 1);
	KUNIT_EXPECT_FALSE(test, rc_rx(f, IB_OPCODE_RC_RDMA_READ_RESPONSE_LAST,
				       0x1f, 2, b, 1024, &failed));
	KUNIT_EXPECT_EQ(test, rc_stat(f, IBDEVSIM_RC_IMPLIED_NAKS), 1);
	/* Sent again: the READ from its first response, then the SEND. */
	KUNIT_ASSERT_TRUE(test, rc_tx(test, f, pkt));
	KUNIT_EXPECT_EQ(test, pkt->rch.opcode, IB_OPCODE_RC_RDMA_READ_REQUEST);
	KUNIT_EXPECT_EQ(test, pkt->rch.psn, 1);
	KUNIT_EXPECT_EQ(test, pkt->rch.dma_len, 2048);
	KUNIT_ASSERT_TRUE(test, rc_tx(test, f, pkt));
	KUNIT_EXPECT_EQ(test, pkt->rch.psn, 3);
	KUNIT_EXPECT_EQ(test, rc_stat(f, IBDEVSIM_RC_IMPLIED_NAKS), 1);

	/* The responses in order: the SEND, then the READ, complete. */
	rc_rx(f, IB_OPCODE_RC_RDMA_READ_RESPONSE_FIRST, 0x1f, 1, a, 1024,
	      &failed);
	KUNIT_EXPECT_EQ(test, rc_done_status(f, 0), IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, rc_done_status(f, 1), -1);
	rc_rx(f, IB_OPCODE_RC_RDMA_READ_RESPONSE_LAST, 0x1f, 2, b, 1024,
	      &failed);
	KUNIT_EXPECT_EQ(test, rc_done_status(f, 1), IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, memcmp(f->buf + 1024, a, 1024), 0);
	KUNIT_EXPECT_EQ(test, memcmp(f->buf + 2048, b, 1024), 0);
	KUNIT_EXPECT_EQ(test, qp->rc_una, 3);
	KUNIT_EXPECT_EQ(test, qp->rc_rd_out, 0);

	/* A sequence NAK at 3: sent again from 3, a retry used. */
	KUNIT_EXPECT_TRUE(test, rc_rx(f, IB_OPCODE_RC_ACKNOWLEDGE, 0x60, 3,
				      NULL, 0, &failed));
	KUNIT_EXPECT_EQ(test, qp->rc_tx_psn, 3);
	KUNIT_EXPECT_EQ(test, qp->rc_retry_left, 1);
	KUNIT_EXPECT_EQ(test, rc_stat(f, IBDEVSIM_RC_RCVD_SEQ_NAKS), 1);

	/* RNR NAK: wait, nothing sent meanwhile; the second one fails it. */
	rc_rx(f, IB_OPCODE_RC_ACKNOWLEDGE, 0x20, 3, NULL, 0, &failed);
	KUNIT_EXPECT_TRUE(test, qp->rc_rnr_wait);
	KUNIT_EXPECT_FALSE(test, rc_tx(test, f, pkt));
	KUNIT_EXPECT_FALSE(test, failed);
	rc_rx(f, IB_OPCODE_RC_ACKNOWLEDGE, 0x20, 3, NULL, 0, &failed);
	KUNIT_EXPECT_TRUE(test, failed);
	KUNIT_EXPECT_EQ(test, qp->state, IB_QPS_ERR);
	KUNIT_EXPECT_EQ(test, rc_done_status(f, 2), IB_WC_RNR_RETRY_EXC_ERR);
	KUNIT_EXPECT_EQ(test, rc_done_status(f, 3), -1);
	KUNIT_EXPECT_EQ(test, rc_stat(f, IBDEVSIM_RC_RCVD_RNR_NAKS), 2);
	KUNIT_EXPECT_EQ(test, rc_stat(f, IBDEVSIM_RC_RNR_RETRY_EXC), 1);
}

/*
 * Local ACK timeouts send again from the oldest unacknowledged PSN,
 * retry_cnt times; the next fails the request with IB_WC_RETRY_EXC_ERR
 * and flushes the one behind it.  Stale and future ACKs change nothing.
 */
static void rc_timeouts(struct kunit *test)
{
	struct rc_fixture *f = rc_fixture_init(test, 100);
	struct ibdevsim_pkt *pkt = test_zalloc(test, struct_size(pkt, data,
								 1024));
	struct ibdevsim_qp *qp = f->qp;
	bool failed = false;
	int i;

	rc_post(test, f, IB_WR_RDMA_WRITE, 0, 1500);
	rc_post(test, f, IB_WR_SEND, 0, 10);
	for (i = 0; i < 3; i++)
		KUNIT_ASSERT_TRUE(test, rc_tx(test, f, pkt));
	KUNIT_EXPECT_FALSE(test, rc_tx(test, f, pkt));
	/* An ACK for a PSN not sent, and one behind the window. */
	rc_rx(f, IB_OPCODE_RC_ACKNOWLEDGE, 0x1f, 103, NULL, 0, &failed);
	rc_rx(f, IB_OPCODE_RC_ACKNOWLEDGE, 0x1f, 99, NULL, 0, &failed);
	KUNIT_EXPECT_EQ(test, qp->rc_una, 100);
	for (i = 0; i < 2; i++) {
		spin_lock_irq(&qp->sq_lock);
		KUNIT_EXPECT_TRUE(test, ibdevsim_rc_expire_locked(qp));
		spin_unlock_irq(&qp->sq_lock);
		KUNIT_EXPECT_EQ(test, qp->rc_tx_psn, 100);
		/* The WRITE again, with its RETH. */
		KUNIT_ASSERT_TRUE(test, rc_tx(test, f, pkt));
		KUNIT_EXPECT_EQ(test, pkt->rch.opcode,
				IB_OPCODE_RC_RDMA_WRITE_FIRST);
		KUNIT_EXPECT_EQ(test, pkt->rch.dma_len, 1500);
		KUNIT_EXPECT_EQ(test, pkt->rch.rkey, 0x77);
	}
	spin_lock_irq(&qp->sq_lock);
	KUNIT_EXPECT_FALSE(test, ibdevsim_rc_expire_locked(qp));
	spin_unlock_irq(&qp->sq_lock);
	KUNIT_EXPECT_EQ(test, qp->state, IB_QPS_ERR);
	KUNIT_EXPECT_EQ(test, rc_done_status(f, 0), IB_WC_RETRY_EXC_ERR);
	KUNIT_EXPECT_EQ(test, rc_done_status(f, 1), IB_WC_WR_FLUSH_ERR);
	KUNIT_EXPECT_EQ(test, rc_stat(f, IBDEVSIM_RC_ACK_TIMEOUTS), 3);
	KUNIT_EXPECT_EQ(test, rc_stat(f, IBDEVSIM_RC_RETRY_EXC), 1);
}

/* Recompute a packet's ICRC and VCRC after a test changed it. */
static void pkt_fix_crcs(u8 *buf, u32 len)
{
	put_unaligned_le32(ibdevsim_icrc(buf, len - 6), buf + len - 6);
	put_unaligned_le16(ibdevsim_vcrc(buf, len - 2), buf + len - 2);
}

/* Decode @buf, which must be refused for @want. */
static void pkt_refused(struct kunit *test, u8 *buf, u32 len,
			enum ibdevsim_rx_err want)
{
	enum ibdevsim_rx_err err;
	struct ibdevsim_pkt *pkt;

	pkt = ibdevsim_pkt_decode(buf, len, GFP_KERNEL, &err);
	KUNIT_EXPECT_NULL(test, pkt);
	KUNIT_EXPECT_EQ(test, err, want);
	ibdevsim_pkt_free(pkt);
}

/* A LID-routed NodeInfo Get SMP from LID 1 to LID 2. */
static struct ibdevsim_pkt *pkt_smp(struct kunit *test)
{
	struct ibdevsim_pkt *pkt = ibdevsim_pkt_alloc(IBDEVSIM_SMP_LEN,
						      GFP_KERNEL);
	struct ib_smp *smp;

	KUNIT_ASSERT_NOT_NULL(test, pkt);
	smp = (struct ib_smp *)pkt->data;
	smp->base_version = 1;
	smp->mgmt_class = IB_MGMT_CLASS_SUBN_LID_ROUTED;
	smp->class_version = 1;
	smp->method = IB_MGMT_METHOD_GET;
	smp->tid = cpu_to_be64(0x1234);
	smp->attr_id = IB_SMP_ATTR_NODE_INFO;
	pkt->vl15 = true;
	pkt->slid = 1;
	pkt->dlid = 2;
	pkt->pkey = IB_DEFAULT_PKEY_FULL;
	pkt->qkey = 0;
	return pkt;
}

/* CRC check values: the VCRC's CRC-16 and the ICRC's CRC-32 seeds. */
static void pkt_crc_vectors(struct kunit *test)
{
	/* CRC-16/0x100B reflected, seed and final XOR 0xffff. */
	KUNIT_EXPECT_EQ(test, ibdevsim_vcrc("123456789", 9), 0x0a3d);
	KUNIT_EXPECT_EQ(test, ibdevsim_vcrc("", 0), 0);
}

/* An SMP as bytes: the layout IBTA gives, and back again. */
static void pkt_smp_roundtrip(struct kunit *test)
{
	struct ibdevsim_pkt *pkt = pkt_smp(test), *back;
	enum ibdevsim_rx_err err;
	u32 len = ibdevsim_pkt_wire_len(pkt);
	u8 *buf = kunit_kzalloc(test, len, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, buf);
	/* LRH 8, BTH 12, DETH 8, MAD 256, ICRC 4, VCRC 2. */
	KUNIT_ASSERT_EQ(test, len, 290);
	KUNIT_ASSERT_EQ(test, ibdevsim_pkt_encode(pkt, buf), 290);
	KUNIT_EXPECT_EQ(test, buf[0], 0xf0);		/* VL15, LVer 0 */
	KUNIT_EXPECT_EQ(test, buf[1], 0x02);		/* SL 0, LNH local */
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(buf + 2), 2);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(buf + 4), 72);	/* words */
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(buf + 6), 1);
	KUNIT_EXPECT_EQ(test, buf[8], IB_OPCODE_UD_SEND_ONLY);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(buf + 10), 0xffff);
	KUNIT_EXPECT_EQ(test, buf[28 + 1], IB_MGMT_CLASS_SUBN_LID_ROUTED);
	back = ibdevsim_pkt_decode(buf, len, GFP_KERNEL, &err);
	KUNIT_ASSERT_NOT_NULL(test, back);
	KUNIT_EXPECT_EQ(test, err, IBDEVSIM_RXERR_NONE);
	KUNIT_EXPECT_TRUE(test, back->vl15 && back->wire && !back->rc);
	KUNIT_EXPECT_EQ(test, back->slid, 1);
	KUNIT_EXPECT_EQ(test, back->dlid, 2);
	KUNIT_EXPECT_EQ(test, back->dest_qpn, 0);
	KUNIT_EXPECT_EQ(test, back->len, IBDEVSIM_SMP_LEN);
	KUNIT_EXPECT_EQ(test, memcmp(back->data, pkt->data, pkt->len), 0);
	ibdevsim_pkt_free(back);
	ibdevsim_pkt_free(pkt);
}

/* Every single bit flipped anywhere in an SMP gets it refused. */
static void pkt_bit_flips(struct kunit *test)
{
	struct ibdevsim_pkt *pkt = pkt_smp(test), *back;
	u32 len = ibdevsim_pkt_wire_len(pkt), bit;
	u8 *buf = kunit_kzalloc(test, len, GFP_KERNEL);
	enum ibdevsim_rx_err err;
	u32 taken = 0;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	ibdevsim_pkt_encode(pkt, buf);
	for (bit = 0; bit < len * 8; bit++) {
		buf[bit / 8] ^= BIT(bit % 8);
		back = ibdevsim_pkt_decode(buf, len, GFP_KERNEL, &err);
		if (back)
			taken++;
		ibdevsim_pkt_free(back);
		buf[bit / 8] ^= BIT(bit % 8);
	}
	KUNIT_EXPECT_EQ(test, taken, 0);
	ibdevsim_pkt_free(pkt);
}

/*
 * The ICRC leaves out what switches and routers may change: VL and
 * Resv8a; for a global packet the whole LRH, TClass, FlowLabel, HopLmt.
 */
static void pkt_icrc_variant_fields(struct kunit *test)
{
	struct ibdevsim_pkt *pkt = ibdevsim_pkt_alloc(20, GFP_KERNEL), *back;
	enum ibdevsim_rx_err err;
	u32 len, icrc;
	u8 *buf;

	KUNIT_ASSERT_NOT_NULL(test, pkt);
	pkt->dlid = 5;
	pkt->slid = 6;
	pkt->dest_qpn = 0x123;
	pkt->src_qpn = 0x456;
	pkt->qkey = 0x11111111;
	pkt->pkey = 0x8001;
	len = ibdevsim_pkt_wire_len(pkt);
	buf = kunit_kzalloc(test, len + 40, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);

	/* Local: VL and Resv8a are left out, the DLID is not. */
	ibdevsim_pkt_encode(pkt, buf);
	icrc = get_unaligned_le32(buf + len - 6);
	buf[0] |= 0x30;
	buf[8 + 4] = 0x5a;
	KUNIT_EXPECT_EQ(test, ibdevsim_icrc(buf, len - 6), icrc);
	buf[3] ^= 1;
	KUNIT_EXPECT_NE(test, ibdevsim_icrc(buf, len - 6), icrc);
	put_unaligned_le16(ibdevsim_vcrc(buf, len - 2), buf + len - 2);
	pkt_refused(test, buf, len, IBDEVSIM_RXERR_ICRC);

	/* Global: PayLen set, the LRH and the GRH's variant fields out. */
	pkt->has_grh = true;
	pkt->grh.version_tclass_flow = cpu_to_be32(6 << 28 | 0x12 << 20 | 7);
	pkt->grh.next_hdr = 0x1b;
	pkt->grh.hop_limit = 64;
	pkt->grh.dgid.raw[15] = 9;
	len = ibdevsim_pkt_wire_len(pkt);
	KUNIT_ASSERT_EQ(test, ibdevsim_pkt_encode(pkt, buf), len);
	KUNIT_EXPECT_EQ(test, buf[1] & 3, 3);
	/* BTH 12, DETH 8, payload 20, ICRC 4. */
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(buf + 8 + 4), 44);
	icrc = get_unaligned_le32(buf + len - 6);
	buf[2] ^= 0xff;			/* DLID */
	buf[8 + 1] ^= 0xff;		/* TClass, FlowLabel */
	buf[8 + 7] = 1;			/* HopLmt */
	KUNIT_EXPECT_EQ(test, ibdevsim_icrc(buf, len - 6), icrc);
	put_unaligned_le16(ibdevsim_vcrc(buf, len - 2), buf + len - 2);
	back = ibdevsim_pkt_decode(buf, len, GFP_KERNEL, &err);
	KUNIT_ASSERT_NOT_NULL(test, back);
	KUNIT_EXPECT_TRUE(test, back->has_grh);
	KUNIT_EXPECT_EQ(test, back->grh.dgid.raw[15], 9);
	KUNIT_EXPECT_EQ(test, back->src_qpn, 0x456);
	KUNIT_EXPECT_EQ(test, back->qkey, 0x11111111);
	KUNIT_EXPECT_EQ(test, back->pkey, 0x8001);
	ibdevsim_pkt_free(back);
	buf[8 + 24] ^= 1;		/* SGID */
	pkt_fix_crcs(buf, len);
	back = ibdevsim_pkt_decode(buf, len, GFP_KERNEL, &err);
	KUNIT_EXPECT_NOT_NULL(test, back);
	ibdevsim_pkt_free(back);
	put_unaligned_le16(ibdevsim_vcrc(buf, len - 2) ^ 1, buf + len - 2);
	pkt_refused(test, buf, len, IBDEVSIM_RXERR_VCRC);
	ibdevsim_pkt_free(pkt);
}

/* Every RC opcode ibdevsim sends keeps its headers across the wire. */
static void pkt_rc_roundtrip(struct kunit *test)
{
	static const u8 ops[] = {
		IB_OPCODE_RC_SEND_FIRST, IB_OPCODE_RC_SEND_LAST_WITH_IMMEDIATE,
		IB_OPCODE_RC_RDMA_WRITE_FIRST,
		IB_OPCODE_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE,
		IB_OPCODE_RC_RDMA_READ_REQUEST,
		IB_OPCODE_RC_RDMA_READ_RESPONSE_ONLY,
		IB_OPCODE_RC_RDMA_READ_RESPONSE_MIDDLE,
		IB_OPCODE_RC_ACKNOWLEDGE,
		IB_OPCODE_RC_SEND_ONLY_WITH_INVALIDATE,
	};
	u8 *buf = kunit_kzalloc(test, 256, GFP_KERNEL);
	int i;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	for (i = 0; i < ARRAY_SIZE(ops); i++) {
		bool nopay = ops[i] == IB_OPCODE_RC_RDMA_READ_REQUEST ||
			     ops[i] == IB_OPCODE_RC_ACKNOWLEDGE;
		struct ibdevsim_pkt *pkt, *back;
		enum ibdevsim_rx_err err;
		u32 len;

		/* 13 bytes of payload: 3 bytes of pad. */
		pkt = ibdevsim_pkt_alloc(nopay ? 0 : 13, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, pkt);
		memset(pkt->data, 0xa5, pkt->len);
		pkt->rc = true;
		pkt->rch.opcode = ops[i];
		pkt->rch.psn = 0xabcdef;
		pkt->rch.ack_req = true;
		pkt->rch.se = true;
		pkt->rch.va = 0x1122334455667788ULL;
		pkt->rch.rkey = 0x99aabbcc;
		pkt->rch.dma_len = 8192;
		pkt->rch.syndrome = 0x60;
		pkt->rch.ieth = 0x4321;
		pkt->has_imm = ops[i] == IB_OPCODE_RC_SEND_LAST_WITH_IMMEDIATE ||
			ops[i] == IB_OPCODE_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE;
		pkt->imm = cpu_to_be32(0xfeed);
		pkt->dest_qpn = 0x1234;
		pkt->src_qpn = 0x55;
		pkt->sl = 3;
		len = ibdevsim_pkt_encode(pkt, buf);
		KUNIT_EXPECT_EQ(test, len, ibdevsim_pkt_wire_len(pkt));
		KUNIT_EXPECT_EQ(test, len % 4, 2);
		back = ibdevsim_pkt_decode(buf, len, GFP_KERNEL, &err);
		KUNIT_ASSERT_NOT_NULL_MSG(test, back, "opcode %u err %d",
					  ops[i], err);
		KUNIT_EXPECT_TRUE(test, back->rc && !back->vl15);
		KUNIT_EXPECT_EQ(test, back->src_qpn, IBDEVSIM_QPN_UNKNOWN);
		KUNIT_EXPECT_EQ(test, back->rch.opcode, ops[i]);
		KUNIT_EXPECT_EQ(test, back->rch.psn, 0xabcdef);
		KUNIT_EXPECT_TRUE(test, back->rch.ack_req && back->rch.se);
		KUNIT_EXPECT_EQ(test, back->dest_qpn, 0x1234);
		KUNIT_EXPECT_EQ(test, back->sl, 3);
		KUNIT_EXPECT_EQ(test, back->len, pkt->len);
		KUNIT_EXPECT_EQ(test, memcmp(back->data, pkt->data, pkt->len),
				0);
		KUNIT_EXPECT_EQ(test, back->has_imm, pkt->has_imm);
		if (back->has_imm)
			KUNIT_EXPECT_EQ(test, be32_to_cpu(back->imm), 0xfeed);
		if (ops[i] == IB_OPCODE_RC_RDMA_WRITE_FIRST ||
		    ops[i] == IB_OPCODE_RC_RDMA_READ_REQUEST) {
			KUNIT_EXPECT_EQ(test, back->rch.va, pkt->rch.va);
			KUNIT_EXPECT_EQ(test, back->rch.rkey, pkt->rch.rkey);
			KUNIT_EXPECT_EQ(test, back->rch.dma_len, 8192);
		}
		if (ops[i] == IB_OPCODE_RC_ACKNOWLEDGE ||
		    ops[i] == IB_OPCODE_RC_RDMA_READ_RESPONSE_ONLY)
			KUNIT_EXPECT_EQ(test, back->rch.syndrome, 0x60);
		if (ops[i] == IB_OPCODE_RC_SEND_ONLY_WITH_INVALIDATE)
			KUNIT_EXPECT_EQ(test, back->rch.ieth, 0x4321);
		ibdevsim_pkt_free(back);
		ibdevsim_pkt_free(pkt);
	}
}

/* What a port refuses, and for which reason. */
static void pkt_refusals(struct kunit *test)
{
	struct ibdevsim_pkt *pkt = pkt_smp(test);
	u32 len = ibdevsim_pkt_wire_len(pkt);
	u8 *buf = kunit_kzalloc(test, len + 8, GFP_KERNEL);
	u8 *good = kunit_kzalloc(test, len + 8, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, buf);
	KUNIT_ASSERT_NOT_NULL(test, good);
	ibdevsim_pkt_encode(pkt, good);

	pkt_refused(test, good, 20, IBDEVSIM_RXERR_SHORT);
	pkt_refused(test, good, len - 4, IBDEVSIM_RXERR_LEN);
	memcpy(buf, good, len);
	buf[len] = 0;
	pkt_refused(test, buf, len + 4, IBDEVSIM_RXERR_LEN);

	memcpy(buf, good, len);
	buf[0] |= 1;				/* LVer 1 */
	pkt_fix_crcs(buf, len);
	pkt_refused(test, buf, len, IBDEVSIM_RXERR_LVER);

	memcpy(buf, good, len);
	buf[1] &= ~3;				/* raw IPv6 */
	pkt_fix_crcs(buf, len);
	pkt_refused(test, buf, len, IBDEVSIM_RXERR_LNH);

	memcpy(buf, good, len);
	buf[9] |= 1;				/* TVer 1 */
	pkt_fix_crcs(buf, len);
	pkt_refused(test, buf, len, IBDEVSIM_RXERR_TVER);

	memcpy(buf, good, len);
	buf[8] = IB_OPCODE_RC_COMPARE_SWAP;
	pkt_fix_crcs(buf, len);
	pkt_refused(test, buf, len, IBDEVSIM_RXERR_OPCODE);

	memcpy(buf, good, len);
	buf[8] = IB_OPCODE_RC_ACKNOWLEDGE;	/* with a payload */
	pkt_fix_crcs(buf, len);
	pkt_refused(test, buf, len, IBDEVSIM_RXERR_PAD);

	memcpy(buf, good, len);
	buf[0] &= 0x0f;				/* QP0 on VL0 */
	pkt_fix_crcs(buf, len);
	pkt_refused(test, buf, len, IBDEVSIM_RXERR_VL);

	memcpy(buf, good, len);
	buf[8 + 7] = 1;				/* VL15 to QP1 */
	pkt_fix_crcs(buf, len);
	pkt_refused(test, buf, len, IBDEVSIM_RXERR_VL);

	/* The VCRC is checked first; the ICRC after the link layer. */
	memcpy(buf, good, len);
	buf[100] ^= 0x80;
	pkt_refused(test, buf, len, IBDEVSIM_RXERR_VCRC);
	put_unaligned_le16(ibdevsim_vcrc(buf, len - 2), buf + len - 2);
	pkt_refused(test, buf, len, IBDEVSIM_RXERR_ICRC);
	ibdevsim_pkt_free(pkt);
}

static struct kunit_case ibdevsim_wire_cases[] = {
	KUNIT_CASE(dr_outbound_forwarded),
	KUNIT_CASE(dr_ends_at_switch),
	KUNIT_CASE(dr_returning_and_bad),
	KUNIT_CASE(dr_lid_parts),
	KUNIT_CASE(ud_slid),
	KUNIT_CASE(lft_lookup),
	KUNIT_CASE(portinfo_roundtrip),
	KUNIT_CASE(nodeinfo_and_pkeys),
	KUNIT_CASE_PARAM(fault_decide, ibdevsim_fault_gen_params),
	KUNIT_CASE(fault_rate_exact),
	KUNIT_CASE(fault_class),
	KUNIT_CASE(link_parse),
	KUNIT_CASE(mft_lookup),
	KUNIT_CASE(mcast_attach_rules),
	KUNIT_CASE(mcast_match),
	KUNIT_CASE(mem_resolve_rules),
	KUNIT_CASE(mem_seg_copy),
	KUNIT_CASE(mem_fast_reg),
	KUNIT_CASE(cq_slots_and_clean),
	KUNIT_CASE(rc_drop_counted),
	KUNIT_CASE(rc_psn_and_packets),
	KUNIT_CASE(rc_timers),
	KUNIT_CASE(rc_requester),
	KUNIT_CASE(rc_timeouts),
	KUNIT_CASE(rc_not_replicated),
	KUNIT_CASE(find_qp_pkeys),
	KUNIT_CASE(link_mtu),
	KUNIT_CASE(pkt_crc_vectors),
	KUNIT_CASE(pkt_smp_roundtrip),
	KUNIT_CASE(pkt_bit_flips),
	KUNIT_CASE(pkt_icrc_variant_fields),
	KUNIT_CASE(pkt_rc_roundtrip),
	KUNIT_CASE(pkt_refusals),
	{}
};

static struct kunit_suite ibdevsim_wire_suite = {
	.name = "ibdevsim_wire",
	.test_cases = ibdevsim_wire_cases,
};

kunit_test_suite(ibdevsim_wire_suite);

MODULE_DESCRIPTION("KUnit tests of ibdevsim's wire rules");
MODULE_LICENSE("GPL");
