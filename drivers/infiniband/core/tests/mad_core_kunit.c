// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * KUnit tests of the MAD core: header helpers, receive validation,
 * directed-route hop logic, registration tables, TID routing and the send
 * state machine.
 *
 * The send tests run on a fake port: a zeroed ib_device whose one port has
 * no capabilities (so security checks pass and DMA mapping is virtual), a
 * fake QP, and a static stub in place of ib_mad_qp_post_send() that only
 * records what would have been posted. The tests then play the CQ and the
 * network by calling ib_mad_send_wc_done(), ib_mad_deliver() and
 * ib_mad_recv_done().
 */

#include <kunit/test.h>
#include <kunit/static_stub.h>
#include <linux/delay.h>
#include <linux/ip.h>
#include <linux/kprobes.h>
#include <linux/kthread.h>
#include <linux/slab.h>
#include <net/checksum.h>
#include <net/ipv6.h>
#include <rdma/ib_cm.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_sa.h>

#include "../mad_priv.h"
#include "../mad_rmpp.h"
/*
 * The directed-route rules are pure code with no state in ib_core: the
 * test module builds its own copy of them rather than have ib_core export
 * them.
 */
#include "../mad_smi.c"

MODULE_INFO(import_ns, "EXPORTED_FOR_KUNIT_TESTING");	/* both series */

/* Header helpers --------------------------------------------------------- */

static void mad_test_header_helpers(struct kunit *test)
{
	struct ib_mad_hdr hdr = { .method = IB_MGMT_METHOD_GET };

	KUNIT_EXPECT_EQ(test, ib_response_mad(&hdr), 0);
	hdr.method = IB_MGMT_METHOD_GET_RESP;
	KUNIT_EXPECT_EQ(test, ib_response_mad(&hdr), 1);
	hdr.method = IB_MGMT_METHOD_TRAP_REPRESS;
	KUNIT_EXPECT_EQ(test, ib_response_mad(&hdr), 1);
	hdr.method = IB_MGMT_METHOD_SEND;
	hdr.mgmt_class = IB_MGMT_CLASS_BM;
	KUNIT_EXPECT_EQ(test, ib_response_mad(&hdr), 0);
	hdr.attr_mod = IB_BM_ATTR_MOD_RESP;
	KUNIT_EXPECT_EQ(test, ib_response_mad(&hdr), 1);

	KUNIT_EXPECT_EQ(test, ib_get_mad_data_offset(IB_MGMT_CLASS_SUBN_ADM),
			IB_MGMT_SA_HDR);
	KUNIT_EXPECT_EQ(test, ib_get_mad_data_offset(IB_MGMT_CLASS_DEVICE_MGMT),
			IB_MGMT_DEVICE_HDR);
	KUNIT_EXPECT_EQ(test, ib_get_mad_data_offset(IB_MGMT_CLASS_BIS),
			IB_MGMT_DEVICE_HDR);
	KUNIT_EXPECT_EQ(test, ib_get_mad_data_offset(0x30), IB_MGMT_VENDOR_HDR);
	KUNIT_EXPECT_EQ(test, ib_get_mad_data_offset(0x4f), IB_MGMT_VENDOR_HDR);
	KUNIT_EXPECT_EQ(test, ib_get_mad_data_offset(0x50), IB_MGMT_MAD_HDR);
	KUNIT_EXPECT_EQ(test, ib_get_mad_data_offset(IB_MGMT_CLASS_CM),
			IB_MGMT_MAD_HDR);

	KUNIT_EXPECT_TRUE(test, ib_is_mad_class_rmpp(IB_MGMT_CLASS_SUBN_ADM));
	KUNIT_EXPECT_TRUE(test, ib_is_mad_class_rmpp(IB_MGMT_CLASS_DEVICE_ADM));
	KUNIT_EXPECT_TRUE(test, ib_is_mad_class_rmpp(0x3a));
	KUNIT_EXPECT_FALSE(test, ib_is_mad_class_rmpp(IB_MGMT_CLASS_CM));
	KUNIT_EXPECT_FALSE(test, ib_is_mad_class_rmpp(0x2f));
	KUNIT_EXPECT_FALSE(test, ib_is_mad_class_rmpp(0x50));

	/* 200 data bytes in 200-byte segments: no pad; 0 bytes: one segment. */
	KUNIT_EXPECT_EQ(test, ib_mad_pad_size(200, 200), 0);
	KUNIT_EXPECT_EQ(test, ib_mad_pad_size(200, 201), 199);
	KUNIT_EXPECT_EQ(test, ib_mad_pad_size(200, 1), 199);
	KUNIT_EXPECT_EQ(test, ib_mad_pad_size(200, 0), 200);
	KUNIT_EXPECT_EQ(test, ib_mad_class_index(IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE), 0);
	KUNIT_EXPECT_EQ(test, ib_mad_class_index(0x4f), 0x4f);
	KUNIT_EXPECT_EQ(test, ib_mad_class_index(0x50), -1);
}

/* Receive validation ----------------------------------------------------- */

struct mad_test_validate_case {
	const char *name;
	u8 base_version;
	u8 mgmt_class;
	u8 method;
	u16 attr_id;
	u32 qp_num;
	bool opa;
	bool valid;
};

static const struct mad_test_validate_case mad_test_validate_cases[] = {
	{ "smp on qp0", 1, 0x01, 0x01, 0x15, 0, false, true },
	{ "dr smp on qp0", 1, 0x81, 0x01, 0x15, 0, false, true },
	{ "smp on qp1", 1, 0x01, 0x01, 0x15, 1, false, false },
	{ "gmp on qp1", 1, 0x03, 0x01, 0x35, 1, false, true },
	{ "gmp on qp0", 1, 0x03, 0x01, 0x35, 0, false, false },
	{ "bad base version", 2, 0x03, 0x01, 0x35, 1, false, false },
	{ "opa mad on ib port", 0x80, 0x03, 0x01, 0x35, 1, false, false },
	{ "opa mad on opa port", 0x80, 0x03, 0x01, 0x35, 1, true, true },
	{ "cm send", 1, 0x07, 0x03, 0x10, 1, false, true },
	{ "cm get", 1, 0x07, 0x01, 0x10, 1, false, false },
	{ "cm classportinfo get", 1, 0x07, 0x01, 0x01, 1, false, true },
};

KUNIT_ARRAY_PARAM_DESC(mad_test_validate, mad_test_validate_cases, name);

static void mad_test_recv_validate(struct kunit *test)
{
	const struct mad_test_validate_case *c = test->param_value;
	struct ib_mad_hdr hdr = {
		.base_version = c->base_version,
		.mgmt_class = c->mgmt_class,
		.class_version = 1,
		.method = c->method,
		.attr_id = cpu_to_be16(c->attr_id),
	};

	KUNIT_EXPECT_EQ(test, ib_mad_recv_validate(&hdr, c->qp_num, c->opa),
			c->valid);
}

/* Directed route --------------------------------------------------------- */

static void mad_test_smp(struct ib_smp *smp, u8 hop_cnt, u8 hop_ptr,
			 bool returning)
{
	int i;

	memset(smp, 0, sizeof(*smp));
	smp->mgmt_class = IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE;
	smp->hop_cnt = hop_cnt;
	smp->hop_ptr = hop_ptr;
	smp->dr_slid = IB_LID_PERMISSIVE;
	smp->dr_dlid = IB_LID_PERMISSIVE;
	if (returning)
		smp->status |= IB_SMP_DIRECTION;
	for (i = 1; i <= hop_cnt; i++) {
		smp->initial_path[i] = i + 1;	/* egress port of hop i */
		smp->return_path[i] = i + 10;
	}
}

static void mad_test_dr_outbound(struct kunit *test)
{
	struct ib_mad_dr_route r;
	struct ib_smp smp;

	/* Requester, 3 hops: hop_ptr 0 -> 1, must leave on initial_path[1]. */
	mad_test_smp(&smp, 3, 0, false);
	ib_mad_dr_route_ib(&smp, &r);
	KUNIT_EXPECT_EQ(test, ib_mad_smi_dr_send(&r, false, 2), IB_MAD_SMI_HANDLE);
	KUNIT_EXPECT_EQ(test, smp.hop_ptr, 1);
	mad_test_smp(&smp, 3, 0, false);
	ib_mad_dr_route_ib(&smp, &r);
	KUNIT_EXPECT_EQ(test, ib_mad_smi_dr_send(&r, false, 5), IB_MAD_SMI_DISCARD);

	/* Intermediate hop at a CA: dropped; at a switch: relayed. */
	mad_test_smp(&smp, 3, 1, false);
	ib_mad_dr_route_ib(&smp, &r);
	KUNIT_EXPECT_EQ(test, ib_mad_smi_dr_recv(&r, false, 7, 4), IB_MAD_SMI_DISCARD);
	KUNIT_EXPECT_EQ(test, ib_mad_smi_dr_recv(&r, true, 7, 4), IB_MAD_SMI_HANDLE);
	KUNIT_EXPECT_EQ(test, smp.return_path[1], 7);
	KUNIT_EXPECT_EQ(test, ib_mad_smi_dr_forward(&r), IB_MAD_SMI_FORWARD);
	KUNIT_EXPECT_EQ(test, ib_mad_smi_fwd_port(&r), 3);
	/* Next egress port beyond the switch's ports. */
	KUNIT_EXPECT_EQ(test, ib_mad_smi_dr_recv(&r, true, 7, 2), IB_MAD_SMI_DISCARD);

	/* Destination CA: hop_ptr == hop_cnt, then hop_cnt + 1 locally. */
	mad_test_smp(&smp, 3, 3, false);
	ib_mad_dr_route_ib(&smp, &r);
	KUNIT_EXPECT_EQ(test, ib_mad_smi_dr_recv(&r, false, 1, 1), IB_MAD_SMI_HANDLE);
	KUNIT_EXPECT_EQ(test, smp.return_path[3], 1);
	KUNIT_EXPECT_EQ(test, ib_mad_smi_dr_forward(&r), IB_MAD_SMI_SEND);
	KUNIT_EXPECT_EQ(test, ib_mad_smi_dr_send(&r, false, 1), IB_MAD_SMI_HANDLE);
	KUNIT_EXPECT_EQ(test, smp.hop_ptr, 4);

	/* A sender that did not advance hop_ptr is dropped (C14-9:1). */
	mad_test_smp(&smp, 3, 0, false);
	ib_mad_dr_route_ib(&smp, &r);
	KUNIT_EXPECT_EQ(test, ib_mad_smi_dr_recv(&r, true, 1, 4), IB_MAD_SMI_DISCARD);

	/* 64 hops is one too many (C14-6). */
	mad_test_smp(&smp, 3, 0, false);
	smp.hop_cnt = IB_SMP_MAX_PATH_HOPS;
	ib_mad_dr_route_ib(&smp, &r);
	KUNIT_EXPECT_EQ(test, ib_mad_smi_dr_send(&r, true, 2), IB_MAD_SMI_DISCARD);
	KUNIT_EXPECT_EQ(test, ib_mad_smi_dr_recv(&r, true, 2, 4), IB_MAD_SMI_DISCARD);

	/* Unreasonable hop pointer (C14-9:5). */
	mad_test_smp(&smp, 3, 9, false);
	ib_mad_dr_route_ib(&smp, &r);
	KUNIT_EXPECT_EQ(test, ib_mad_smi_dr_recv(&r, true, 2, 4), IB_MAD_SMI_DISCARD);
}

static void mad_test_dr_returning(struct kunit *test)
{
	struct ib_mad_dr_route r;
	struct ib_smp smp;

	/* Responder sends back: hop_ptr 4 -> 3 via return_path[3]. */
	mad_test_smp(&smp, 3, 4, true);
	ib_mad_dr_route_ib(&smp, &r);
	KUNIT_EXPECT_EQ(test, ib_mad_smi_dr_send(&r, false, 13), IB_MAD_SMI_HANDLE);
	KUNIT_EXPECT_EQ(test, smp.hop_ptr, 3);

	/* Switch on the way back. */
	mad_test_smp(&smp, 3, 3, true);
	ib_mad_dr_route_ib(&smp, &r);
	KUNIT_EXPECT_EQ(test, ib_mad_smi_dr_recv(&r, false, 1, 4), IB_MAD_SMI_DISCARD);
	KUNIT_EXPECT_EQ(test, ib_mad_smi_dr_recv(&r, true, 1, 40), IB_MAD_SMI_HANDLE);
	KUNIT_EXPECT_EQ(test, ib_mad_smi_dr_forward(&r), IB_MAD_SMI_FORWARD);
	KUNIT_EXPECT_EQ(test, ib_mad_smi_fwd_port(&r), 12);

	/* Back at the requester with a permissive DrSLID: for the SM. */
	mad_test_smp(&smp, 3, 1, true);
	ib_mad_dr_route_ib(&smp, &r);
	KUNIT_EXPECT_EQ(test, ib_mad_smi_dr_recv(&r, false, 1, 1), IB_MAD_SMI_HANDLE);
	KUNIT_EXPECT_EQ(test, smp.hop_ptr, 0);
	KUNIT_EXPECT_EQ(test, ib_mad_smi_dr_forward(&r), IB_MAD_SMI_LOCAL);

	/* Non-permissive DrSLID at the end: continues LID routed. */
	mad_test_smp(&smp, 3, 1, true);
	smp.dr_slid = cpu_to_be16(5);
	ib_mad_dr_route_ib(&smp, &r);
	KUNIT_EXPECT_EQ(test, ib_mad_smi_dr_recv(&r, false, 1, 1), IB_MAD_SMI_DISCARD);
	KUNIT_EXPECT_EQ(test, ib_mad_smi_dr_recv(&r, true, 1, 1), IB_MAD_SMI_HANDLE);
	KUNIT_EXPECT_EQ(test, ib_mad_smi_dr_forward(&r), IB_MAD_SMI_SEND);
}

static void mad_test_dr_opa(struct kunit *test)
{
	struct ib_mad_dr_route r;
	struct opa_smp *smp;

	smp = kunit_kzalloc(test, sizeof(*smp), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, smp);
	smp->hop_cnt = 2;
	smp->hop_ptr = 0;
	smp->route.dr.dr_slid = OPA_LID_PERMISSIVE;
	smp->route.dr.dr_dlid = OPA_LID_PERMISSIVE;
	smp->route.dr.initial_path[1] = 4;
	ib_mad_dr_route_opa(smp, &r);
	KUNIT_EXPECT_TRUE(test, r.slid_permissive);
	KUNIT_EXPECT_FALSE(test, r.returning);
	KUNIT_EXPECT_EQ(test, ib_mad_smi_dr_send(&r, false, 4), IB_MAD_SMI_HANDLE);
	KUNIT_EXPECT_EQ(test, smp->hop_ptr, 1);
}

/* Registration tables ---------------------------------------------------- */

static void mad_test_recv_handler(struct ib_mad_agent *agent,
				  struct ib_mad_send_buf *send_buf,
				  struct ib_mad_recv_wc *recv_wc);
static void mad_test_send_handler(struct ib_mad_agent *agent,
				  struct ib_mad_send_wc *wc);

static struct ib_mad_port_private *mad_test_port(struct kunit *test)
{
	struct ib_mad_port_private *port;
	int i;

	port = kunit_kzalloc(test, sizeof(*port), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, port);
	spin_lock_init(&port->reg_lock);
	port->port_num = 1;
	for (i = 0; i < IB_MAD_QPS_CORE; i++) {
		port->qp_info[i].port_priv = port;
		port->qp_info[i].qp_num = i;
		spin_lock_init(&port->qp_info[i].send_queue.lock);
		INIT_LIST_HEAD(&port->qp_info[i].send_queue.list);
		INIT_LIST_HEAD(&port->qp_info[i].overflow_list);
		INIT_LIST_HEAD(&port->qp_info[i].refused_list);
		INIT_WORK(&port->qp_info[i].refused_work,
			  ib_mad_send_refused_work);
	}
	return port;
}

static void mad_test_agent_free(void *data)
{
	struct ib_mad_agent_private *priv = data;

	kfree(priv->reg_req);
	kfree(priv);
}

static struct ib_mad_agent_private *
mad_test_reg_agent(struct kunit *test, struct ib_mad_port_private *port,
		   u8 mgmt_class, const u8 *oui, const int *methods)
{
	struct ib_mad_reg_req req = {
		.mgmt_class = mgmt_class,
		.mgmt_class_version = 1,
	};
	struct ib_mad_agent_private *priv;

	if (oui)
		memcpy(req.oui, oui, 3);
	for (; *methods >= 0; methods++)
		set_bit(*methods, req.method_mask);
	priv = ib_mad_agent_alloc(&port->qp_info[1], &req);
	KUNIT_ASSERT_NOT_NULL(test, priv);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test,
							mad_test_agent_free,
							priv), 0);
	priv->agent.recv_handler = mad_test_recv_handler;
	priv->agent.send_handler = mad_test_send_handler;
	return priv;
}

/* Which agent would receive a request; drops the lookup's reference. */
static struct ib_mad_agent_private *
mad_test_lookup(struct ib_mad_port_private *port, u8 mgmt_class,
		const u8 *oui, u8 method)
{
	struct ib_vendor_mad mad = {
		.mad_hdr = {
			.base_version = 1,
			.mgmt_class = mgmt_class,
			.class_version = 1,
			.method = method,
		},
	};
	struct ib_mad_agent_private *priv;

	if (oui)
		memcpy(mad.oui, oui, 3);
	priv = ib_mad_find_agent(port, &mad.mad_hdr);
	if (priv)
		ib_mad_agent_put(priv);
	return priv;
}

static void mad_test_reg_overlap(struct kunit *test)
{
	struct ib_mad_port_private *port = mad_test_port(test);
	struct ib_mad_agent_private *a, *b, *c;

	a = mad_test_reg_agent(test, port, IB_MGMT_CLASS_PERF_MGMT,
			       NULL, (const int[]){ 1, 2, -1 });
	b = mad_test_reg_agent(test, port, IB_MGMT_CLASS_PERF_MGMT,
			       NULL, (const int[]){ 2, -1 });
	c = mad_test_reg_agent(test, port, IB_MGMT_CLASS_PERF_MGMT,
			       NULL, (const int[]){ 3, -1 });

	KUNIT_ASSERT_EQ(test, ib_mad_reg_insert(port, a), 0);
	KUNIT_EXPECT_EQ(test, ib_mad_reg_insert(port, b), -EINVAL);
	KUNIT_EXPECT_EQ(test, ib_mad_reg_insert(port, c), 0);

	KUNIT_EXPECT_PTR_EQ(test, mad_test_lookup(port, 4, NULL, 1), a);
	KUNIT_EXPECT_PTR_EQ(test, mad_test_lookup(port, 4, NULL, 2), a);
	KUNIT_EXPECT_PTR_EQ(test, mad_test_lookup(port, 4, NULL, 3), c);
	KUNIT_EXPECT_NULL(test, mad_test_lookup(port, 4, NULL, 4));
	KUNIT_EXPECT_NULL(test, mad_test_lookup(port, 5, NULL, 1));

	/* The refused agent left nothing behind; its methods free up. */
	ib_mad_reg_remove(port, b);
	KUNIT_EXPECT_PTR_EQ(test, mad_test_lookup(port, 4, NULL, 2), a);
	ib_mad_reg_remove(port, a);
	KUNIT_EXPECT_NULL(test, mad_test_lookup(port, 4, NULL, 1));
	KUNIT_EXPECT_EQ(test, ib_mad_reg_insert(port, b), 0);
	KUNIT_EXPECT_PTR_EQ(test, mad_test_lookup(port, 4, NULL, 2), b);
	ib_mad_reg_remove(port, b);
	ib_mad_reg_remove(port, c);
	/* Every level is freed once empty. */
	KUNIT_EXPECT_NULL(test, port->version[1].class);
}

static void mad_test_reg_dr_alias(struct kunit *test)
{
	struct ib_mad_port_private *port = mad_test_port(test);
	struct ib_mad_agent_private *dr;

	dr = mad_test_reg_agent(test, port, IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE,
				NULL, (const int[]){ 1, -1 });
	dr->qp_info = &port->qp_info[0];
	KUNIT_ASSERT_EQ(test, ib_mad_reg_insert(port, dr), 0);
	KUNIT_EXPECT_PTR_EQ(test, mad_test_lookup(port, 0x81, NULL, 1), dr);
	KUNIT_EXPECT_NULL(test, mad_test_lookup(port, 0x01, NULL, 1));
	ib_mad_reg_remove(port, dr);
	ib_mad_reg_tables_free(port);
}

static void mad_test_reg_vendor_oui(struct kunit *test)
{
	static const u8 ouis[IB_MAD_MAX_OUI + 1][3] = {
		{ 0, 0, 1 }, { 0, 0, 2 }, { 0, 0, 3 }, { 0, 0, 4 }, { 0, 0, 5 },
		{ 0, 0, 6 }, { 0, 0, 7 }, { 0, 0, 8 }, { 0, 0, 9 },
	};
	struct ib_mad_port_private *port = mad_test_port(test);
	struct ib_mad_agent_private *agents[IB_MAD_MAX_OUI + 1];
	int i;

	for (i = 0; i <= IB_MAD_MAX_OUI; i++)
		agents[i] = mad_test_reg_agent(test, port, 0x31, ouis[i],
					       (const int[]){ 1, -1 });
	/* Same class and method, different OUIs: all fit but the ninth. */
	for (i = 0; i < IB_MAD_MAX_OUI; i++)
		KUNIT_EXPECT_EQ(test, ib_mad_reg_insert(port, agents[i]), 0);
	KUNIT_EXPECT_EQ(test, ib_mad_reg_insert(port, agents[IB_MAD_MAX_OUI]),
			-EINVAL);
	for (i = 0; i < IB_MAD_MAX_OUI; i++)
		KUNIT_EXPECT_PTR_EQ(test, mad_test_lookup(port, 0x31, ouis[i], 1),
				    agents[i]);
	KUNIT_EXPECT_NULL(test, mad_test_lookup(port, 0x31, ouis[8], 1));
	KUNIT_EXPECT_NULL(test, mad_test_lookup(port, 0x32, ouis[0], 1));

	/* Freeing an OUI slot lets the ninth in. */
	ib_mad_reg_remove(port, agents[3]);
	KUNIT_EXPECT_NULL(test, mad_test_lookup(port, 0x31, ouis[3], 1));
	KUNIT_EXPECT_EQ(test, ib_mad_reg_insert(port, agents[IB_MAD_MAX_OUI]), 0);
	KUNIT_EXPECT_PTR_EQ(test, mad_test_lookup(port, 0x31, ouis[8], 1),
			    agents[IB_MAD_MAX_OUI]);
	for (i = 0; i <= IB_MAD_MAX_OUI; i++)
		ib_mad_reg_remove(port, agents[i]);
	KUNIT_EXPECT_NULL(test, port->version[1].vendor);
}

/* What a receive racing with a registration saw of the agent. */
struct mad_test_publish_probe {
	struct ib_mad_port_private *port;
	int calls;
	struct ib_mad_agent_private *found;
};

/*
 * Replaces ib_mad_reg_insert(): a response to the new agent's hi_tid
 * arrives while the tables decide, and the tables then refuse the agent.
 */
static int mad_test_reg_insert_refuse(struct ib_mad_port_private *port,
				      struct ib_mad_agent_private *priv)
{
	struct mad_test_publish_probe *probe = kunit_get_current_test()->priv;
	struct ib_mad_hdr hdr = {
		.base_version = IB_MGMT_BASE_VERSION,
		.mgmt_class = IB_MGMT_CLASS_PERF_MGMT,
		.class_version = 1,
		.method = IB_MGMT_METHOD_GET_RESP,
		.tid = cpu_to_be64((u64)priv->agent.hi_tid << 32 | 1),
	};

	probe->calls++;
	probe->found = ib_mad_find_agent(port, &hdr);
	if (probe->found)
		ib_mad_agent_put(probe->found);
	return -EINVAL;
}

/*
 * A response finds the agent by hi_tid only once the tables took it; a
 * port going away names the agents still registered on it and forgets
 * them.
 */
static void mad_test_reg_publish_order(struct kunit *test)
{
	struct mad_test_publish_probe probe = {};
	struct ib_mad_port_private *port = mad_test_port(test);
	struct ib_mad_agent_private *priv, *found;
	struct ib_mad_hdr resp = {
		.base_version = IB_MGMT_BASE_VERSION,
		.mgmt_class = IB_MGMT_CLASS_PERF_MGMT,
		.class_version = 1,
		.method = IB_MGMT_METHOD_GET_RESP,
	};

	priv = mad_test_reg_agent(test, port, IB_MGMT_CLASS_PERF_MGMT, NULL,
				  (const int[]){ 1, -1 });
	probe.port = port;
	test->priv = &probe;
	kunit_activate_static_stub(test, ib_mad_reg_insert,
				   mad_test_reg_insert_refuse);
	KUNIT_EXPECT_EQ(test, ib_mad_agent_publish(port, priv), -EINVAL);
	kunit_deactivate_static_stub(test, ib_mad_reg_insert);
	KUNIT_EXPECT_EQ(test, probe.calls, 1);
	KUNIT_EXPECT_NULL(test, probe.found);
	/* Nobody took a reference the failed registration would free. */
	KUNIT_EXPECT_EQ(test, refcount_read(&priv->refcount), 1);

	KUNIT_ASSERT_EQ(test, ib_mad_agent_publish(port, priv), 0);
	resp.tid = cpu_to_be64((u64)priv->agent.hi_tid << 32 | 2);
	found = ib_mad_find_agent(port, &resp);
	KUNIT_EXPECT_PTR_EQ(test, found, priv);
	if (found)
		ib_mad_agent_put(found);
	KUNIT_EXPECT_PTR_EQ(test, mad_test_lookup(port, IB_MGMT_CLASS_PERF_MGMT,
						  NULL, 1), priv);
	/*
	 * Were the port to go now, the agent would be named (logged once)
	 * and forgotten by hi_tid.
	 */
	port->device = kunit_kzalloc(test, sizeof(*port->device), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, port->device);
	KUNIT_EXPECT_EQ(test, ib_mad_port_agents_left(port), 1);
	KUNIT_EXPECT_NULL(test, ib_mad_find_agent(port, &resp));
	KUNIT_EXPECT_EQ(test, ib_mad_port_agents_left(port), 0);
	ib_mad_agent_unpublish(port, priv);
	KUNIT_EXPECT_NULL(test, ib_mad_find_agent(port, &resp));
	KUNIT_EXPECT_NULL(test, mad_test_lookup(port, IB_MGMT_CLASS_PERF_MGMT,
						NULL, 1));
}

/*
 * The agents_left race: a walk of every device's agents, and another
 * device's agent unregistering while the walk has it in hand. Two
 * kretprobes (xa_find() and xa_find_after(), what xa_for_each() calls)
 * catch the walk the moment it got that agent, let the unregistering
 * thread go and wait up to half a second for it to free the agent.
 */
struct mad_test_walk_race {
	struct kretprobe probes[2];
	struct ib_mad_port_private *other;
	struct ib_mad_agent_private *victim;
	struct task_struct *walker;
	struct completion go;		/* the walk has the victim in hand */
	struct completion exited;	/* the unregistering thread is done */
	atomic_t held;			/* times the walk was held */
	bool freed;			/* the victim was freed */
	bool freed_while_held;		/* ... before the walk went on */
};

/* kretprobe handlers get no pointer of ours; one race at a time. */
static struct mad_test_walk_race *mad_test_walk;

static int mad_test_walk_ret(struct kretprobe_instance *ri,
			     struct pt_regs *regs)
{
	struct mad_test_walk_race *r = READ_ONCE(mad_test_walk);
	int ms;

	if (!r || current != r->walker ||
	    (void *)regs_return_value(regs) != r->victim ||
	    atomic_inc_return(&r->held) != 1)
		return 0;
	complete(&r->go);
	for (ms = 0; ms < 500 && !READ_ONCE(r->freed); ms++)
		mdelay(1);
	r->freed_while_held = READ_ONCE(r->freed);
	return 0;
}

static int mad_test_walk_unreg(void *data)
{
	struct mad_test_walk_race *r = data;

	wait_for_completion(&r->go);
	ib_mad_agent_unpublish(r->other, r->victim);
	mad_test_agent_free(r->victim);
	WRITE_ONCE(r->freed, true);
	complete(&r->exited);
	return 0;
}

/*
 * ib_mad_port_agents_left() looks at every device's agents to find those
 * of its port. One of another device's agents that unregisters meanwhile
 * must not be freed while the walk holds it (issue 34, item 7: the walk
 * once ran under RCU alone, and an agent is not freed by RCU).
 */
static void mad_test_agents_left_race(struct kunit *test)
{
	static const char * const fns[] = { "xa_find", "xa_find_after" };
	struct ib_mad_port_private *port = mad_test_port(test);
	struct ib_mad_reg_req req = {
		.mgmt_class = IB_MGMT_CLASS_PERF_MGMT,
		.mgmt_class_version = 1,
	};
	struct mad_test_walk_race *r;
	struct task_struct *t;
	int i, ret;

	if (!IS_ENABLED(CONFIG_KRETPROBES))
		kunit_skip(test, "needs CONFIG_KRETPROBES");
	/* The unregistering thread runs while the walk spins. */
	if (num_online_cpus() < 2)
		kunit_skip(test, "needs two CPUs");
	r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r);
	port->device = kunit_kzalloc(test, sizeof(*port->device), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, port->device);
	r->other = mad_test_port(test);
	r->walker = current;
	init_completion(&r->go);
	init_completion(&r->exited);
	r->victim = ib_mad_agent_alloc(&r->other->qp_info[1], &req);
	KUNIT_ASSERT_NOT_NULL(test, r->victim);
	ret = ib_mad_agent_publish(r->other, r->victim);
	if (ret) {
		mad_test_agent_free(r->victim);
		KUNIT_FAIL(test, "publishing the other port's agent: %d", ret);
		return;
	}
	t = kthread_run(mad_test_walk_unreg, r, "mad_test_unreg");
	if (IS_ERR(t)) {
		ib_mad_agent_unpublish(r->other, r->victim);
		mad_test_agent_free(r->victim);
		KUNIT_FAIL(test, "no thread: %ld", PTR_ERR(t));
		return;
	}
	WRITE_ONCE(mad_test_walk, r);
	for (i = 0; i < ARRAY_SIZE(fns); i++) {
		r->probes[i].kp.symbol_name = fns[i];
		r->probes[i].handler = mad_test_walk_ret;
		ret = register_kretprobe(&r->probes[i]);
		if (ret) {
			KUNIT_FAIL(test, "kretprobe on %s: %d", fns[i], ret);
			break;
		}
	}
	if (i == ARRAY_SIZE(fns))
		KUNIT_EXPECT_EQ(test, ib_mad_port_agents_left(port), 0);
	while (i--)
		unregister_kretprobe(&r->probes[i]);
	WRITE_ONCE(mad_test_walk, NULL);
	complete(&r->go);
	wait_for_completion(&r->exited);
	/* The point could fail only if the walk was held with the agent. */
	KUNIT_EXPECT_EQ(test, atomic_read(&r->held), 1);
	KUNIT_EXPECT_FALSE_MSG(test, r->freed_while_held,
			       "another device's agent was freed while the walk held it");
}

struct mad_test_reg_case {
	const char *name;
	enum ib_qp_type qp_type;
	bool has_req;
	u8 mgmt_class;
	u8 version;
	u8 oui0;
	u8 rmpp;
	bool send_h;
	bool recv_h;
	u32 flags;
	int ret;
};

static const struct mad_test_reg_case mad_test_reg_cases[] = {
	{ "send only", IB_QPT_GSI, false, 0, 0, 0, 0, true, false, 0, 0 },
	{ "send only without handler", IB_QPT_GSI, false, 0, 0, 0, 0, false,
	  true, 0, -EINVAL },
	{ "send only with user rmpp", IB_QPT_GSI, false, 0, 0, 0, 0, true,
	  true, IB_MAD_USER_RMPP, -EINVAL },
	{ "sa agent", IB_QPT_GSI, true, 0x03, 2, 0, 1, true, true, 0, 0 },
	{ "no recv handler", IB_QPT_GSI, true, 0x03, 2, 0, 0, true, false, 0,
	  -EINVAL },
	{ "class 0", IB_QPT_GSI, true, 0, 1, 0, 0, true, true, 0, -EINVAL },
	{ "class 0x50", IB_QPT_GSI, true, 0x50, 1, 0, 0, true, true, 0,
	  -EINVAL },
	{ "version too big", IB_QPT_GSI, true, 0x03, IB_MAD_MAX_VERSION, 0, 0,
	  true, true, 0, -EINVAL },
	{ "vendor without oui", IB_QPT_GSI, true, 0x30, 1, 0, 0, true, true, 0,
	  -EINVAL },
	{ "vendor with oui", IB_QPT_GSI, true, 0x30, 1, 1, 1, true, true, 0, 0 },
	{ "rmpp on cm", IB_QPT_GSI, true, 0x07, 2, 0, 1, true, true, 0,
	  -EINVAL },
	{ "bad rmpp version", IB_QPT_GSI, true, 0x03, 2, 0, 2, true, true, 0,
	  -EINVAL },
	{ "smp on gsi", IB_QPT_GSI, true, 0x01, 1, 0, 0, true, true, 0,
	  -EINVAL },
	{ "gmp on smi", IB_QPT_SMI, true, 0x04, 1, 0, 0, true, true, 0,
	  -EINVAL },
	{ "dr smp on smi", IB_QPT_SMI, true, 0x81, 1, 0, 0, true, true, 0, 0 },
	{ "ud qp", IB_QPT_UD, false, 0, 0, 0, 0, true, true, 0, -EINVAL },
	{ "unknown flag", IB_QPT_GSI, true, 0x03, 2, 0, 0, true, true, 0x100,
	  -EINVAL },
};

KUNIT_ARRAY_PARAM_DESC(mad_test_reg, mad_test_reg_cases, name);

static void mad_test_reg_validate(struct kunit *test)
{
	const struct mad_test_reg_case *c = test->param_value;
	struct ib_mad_reg_req req = {
		.mgmt_class = c->mgmt_class,
		.mgmt_class_version = c->version,
		.oui = { c->oui0, 0, 0 },
	};

	KUNIT_EXPECT_EQ(test,
			ib_mad_reg_validate(c->qp_type, c->has_req ? &req : NULL,
					    c->rmpp, c->send_h, c->recv_h,
					    c->flags),
			c->ret);
}

/* The fake port for sends ------------------------------------------------ */

#define MAD_TEST_MAX_POSTS	16

struct mad_test_env {
	struct ib_device *dev;
	struct ib_port_data port_data[2];
	struct ib_pd pd;
	struct ib_qp qp;
	struct ib_qp qp0;
	struct ib_mad_port_private *port;
	struct ib_mad_agent_private *priv;
	struct kunit *test;
	int post_ret;
	int posts;
	int posts_locked;
	void (*post_hook)(struct mad_test_env *env,
			  struct ib_mad_send_wr_private *wr);
	struct ib_mad_send_buf *hook_buf;
	int sends_done;
	struct task_struct *send_task;
	int recvs_done;
	int recv_posts;			/* receive work requests accepted */
	int recv_post_calls;		/* post_recv() calls */
	int recv_refuse_at;		/* refuse the Nth request of a call */
	u16 rmpp_slid;
	enum ib_wc_status last_status;
	int timeouts;			/* completions with RESP_TIMEOUT_ERR */
	struct ib_mad_send_buf *recv_send_buf;
	struct ib_mad_send_wr_private **posted;
	int max_posted;
	char order[8];
	int norder;
};

static struct mad_test_env *mad_test_env_of(struct ib_mad_agent *agent)
{
	return agent->context;
}

static void mad_test_note(struct mad_test_env *env, char what)
{
	if (env->norder < (int)sizeof(env->order) - 1)
		env->order[env->norder++] = what;
}

static void mad_test_send_handler(struct ib_mad_agent *agent,
				  struct ib_mad_send_wc *wc)
{
	struct mad_test_env *env = mad_test_env_of(agent);

	env->sends_done++;
	env->send_task = current;
	env->last_status = wc->status;
	if (wc->status == IB_WC_RESP_TIMEOUT_ERR)
		env->timeouts++;
	mad_test_note(env, 's');
}

static void mad_test_recv_handler(struct ib_mad_agent *agent,
				  struct ib_mad_send_buf *send_buf,
				  struct ib_mad_recv_wc *recv_wc)
{
	struct mad_test_env *env = mad_test_env_of(agent);

	env->recvs_done++;
	env->recv_send_buf = send_buf;
	mad_test_note(env, 'r');
	ib_free_recv_mad(recv_wc);
}

/*
 * Whether this thread holds the agent lock. Only lockdep can tell; the
 * tests that need to know skip without it.
 */
static bool mad_test_agent_locked(struct ib_mad_send_wr_private *wr)
{
#ifdef CONFIG_LOCKDEP
	return lockdep_is_held(&wr->mad_agent_priv->lock);
#else
	return false;
#endif
}

static void mad_test_need_lockdep(struct kunit *test)
{
	if (!IS_ENABLED(CONFIG_LOCKDEP))
		kunit_skip(test, "needs lockdep to see who holds the agent lock");
}

/*
 * Replaces ib_mad_qp_post_send(): the QP accepts, nothing happens. It
 * counts the posts made with the agent lock held, and runs @post_hook
 * once, as another CPU would act while the driver posts.
 */
static int mad_test_qp_post_send(struct ib_mad_send_wr_private *wr)
{
	struct mad_test_env *env = kunit_get_current_test()->priv;
	void (*hook)(struct mad_test_env *env,
		     struct ib_mad_send_wr_private *wr) = env->post_hook;

	if (mad_test_agent_locked(wr))
		env->posts_locked++;
	env->post_hook = NULL;
	if (hook)
		hook(env, wr);
	if (env->post_ret)
		return env->post_ret;
	if (env->posted && env->posts < env->max_posted)
		env->posted[env->posts] = wr;
	env->posts++;
	return 0;
}

/*
 * The agent's timer work, run by the test's workqueue with the test made
 * current: a retry posts from there, and the redirected
 * ib_mad_qp_post_send() only applies to threads that run a test.
 */
static void mad_test_timed_work(struct work_struct *work)
{
	struct ib_mad_agent_private *priv =
		container_of(work, struct ib_mad_agent_private, timed_work.work);
	struct mad_test_env *env = mad_test_env_of(&priv->agent);

	current->kunit_test = env->test;
	ib_mad_agent_timed_work(work);
	current->kunit_test = NULL;
}

static void mad_test_env_exit(void *data)
{
	struct mad_test_env *env = data;
	struct ib_mad_agent_private *priv = env->priv;

	ib_mad_agent_flush_sends(priv);
	ib_mad_agent_put(priv);
	/* A failed test may leave buffers behind: leak rather than hang. */
	if (!wait_for_completion_timeout(&priv->comp, 5 * HZ)) {
		pr_err("mad_kunit: agent still referenced, leaking it\n");
		return;
	}
	cancel_delayed_work_sync(&priv->timed_work);
	destroy_workqueue(env->port->wq);
	kfree(priv);
}

static struct mad_test_env *mad_test_env(struct kunit *test)
{
	struct mad_test_env *env;

	env = kunit_kzalloc(test, sizeof(*env), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, env);
	env->dev = kunit_kzalloc(test, sizeof(*env->dev), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, env->dev);
	env->dev->port_data = env->port_data;
	env->dev->phys_port_cnt = 1;
	env->qp.pd = &env->pd;
	env->qp.device = env->dev;
	env->qp.qp_num = 1;
	env->port = mad_test_port(test);
	env->port->device = env->dev;
	env->port->wq = alloc_ordered_workqueue("mad_kunit", 0);
	KUNIT_ASSERT_NOT_NULL(test, env->port->wq);
	env->priv = ib_mad_agent_alloc(&env->port->qp_info[1], NULL);
	KUNIT_ASSERT_NOT_NULL(test, env->priv);
	env->priv->agent.device = env->dev;
	env->priv->agent.qp = &env->qp;
	env->priv->agent.port_num = 1;
	env->priv->agent.context = env;
	env->priv->agent.send_handler = mad_test_send_handler;
	env->priv->agent.recv_handler = mad_test_recv_handler;
	env->priv->timed_work.work.func = mad_test_timed_work;
	env->test = test;
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, mad_test_env_exit,
							env), 0);
	test->priv = env;
	kunit_activate_static_stub(test, ib_mad_qp_post_send,
				   mad_test_qp_post_send);
	return env;
}

/* A DR SMP: responses match without an address check. */
static struct ib_mad_send_buf *mad_test_send(struct kunit *test,
					     struct mad_test_env *env,
					     u64 tid, int timeout_ms,
					     int retries)
{
	struct ib_mad_send_buf *buf;
	struct ib_smp *smp;

	buf = ib_create_send_mad(&env->priv->agent, 0, 0, 0, IB_MGMT_MAD_HDR,
				 IB_MGMT_MAD_DATA, GFP_KERNEL,
				 IB_MGMT_BASE_VERSION);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, buf);
	smp = buf->mad;
	smp->base_version = IB_MGMT_BASE_VERSION;
	smp->mgmt_class = IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE;
	smp->class_version = 1;
	smp->method = IB_MGMT_METHOD_GET;
	smp->tid = cpu_to_be64(tid);
	buf->timeout_ms = timeout_ms;
	buf->retries = retries;
	return buf;
}

static void mad_test_wire_done(struct ib_mad_send_buf *buf,
			       enum ib_wc_status status)
{
	struct ib_wc wc = { .status = status };

	ib_mad_send_wc_done(ib_mad_send_wr(buf), &wc);
}

/*
 * The network delivers a MAD of @mgmt_class (class version @version) and
 * @method with @tid from LID @slid to the agent.
 */
static void mad_test_deliver_mad(struct kunit *test, struct mad_test_env *env,
				 u64 tid, u8 mgmt_class, u8 version, u8 method,
				 u32 slid)
{
	struct ib_mad_recv_priv *recv;
	struct ib_mad_hdr *hdr;

	recv = ib_mad_recv_priv_alloc(sizeof(struct ib_mad), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, recv);
	hdr = (struct ib_mad_hdr *)recv->mad;
	hdr->base_version = IB_MGMT_BASE_VERSION;
	hdr->mgmt_class = mgmt_class;
	hdr->class_version = version;
	hdr->method = method;
	hdr->tid = cpu_to_be64(tid);
	recv->wc.slid = slid;
	recv->recv_wc.wc = &recv->wc;
	recv->recv_wc.recv_buf.mad = (struct ib_mad *)recv->mad;
	recv->recv_wc.recv_buf.grh = &recv->grh;
	recv->recv_wc.mad_len = sizeof(struct ib_mad);
	INIT_LIST_HEAD(&recv->recv_wc.rmpp_list);
	list_add(&recv->recv_wc.recv_buf.list, &recv->recv_wc.rmpp_list);
	ib_mad_agent_get(env->priv);
	ib_mad_deliver(env->priv, &recv->recv_wc);
}

/* The network answers @tid with a GetResp of @mgmt_class. */
static void mad_test_respond(struct kunit *test, struct mad_test_env *env,
			     u64 tid, u8 mgmt_class)
{
	mad_test_deliver_mad(test, env, tid, mgmt_class, 1,
			     IB_MGMT_METHOD_GET_RESP, 0);
}

static enum ib_mad_send_state mad_test_state(struct ib_mad_send_buf *buf)
{
	return ib_mad_send_wr(buf)->state;
}

/* Send state machine ----------------------------------------------------- */

static void mad_test_send_no_response(struct kunit *test)
{
	struct mad_test_env *env = mad_test_env(test);
	struct ib_mad_send_buf *buf = mad_test_send(test, env, 1, 0, 0);

	KUNIT_ASSERT_EQ(test, ib_post_send_mad(buf, NULL), 0);
	KUNIT_EXPECT_EQ(test, env->posts, 1);
	KUNIT_EXPECT_EQ(test, mad_test_state(buf), IB_MAD_SEND_ON_WIRE);
	KUNIT_EXPECT_EQ(test, env->sends_done, 0);
	/* Posting it again while outstanding is refused. */
	KUNIT_EXPECT_EQ(test, ib_post_send_mad(buf, NULL), -EBUSY);
	mad_test_wire_done(buf, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, env->sends_done, 1);
	KUNIT_EXPECT_EQ(test, env->last_status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, mad_test_state(buf), IB_MAD_SEND_DONE);
	ib_free_send_mad(buf);
}

static void mad_test_send_response(struct kunit *test)
{
	struct mad_test_env *env = mad_test_env(test);
	struct ib_mad_send_buf *buf = mad_test_send(test, env, 2, 5000, 0);

	KUNIT_ASSERT_EQ(test, ib_post_send_mad(buf, NULL), 0);
	mad_test_wire_done(buf, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, mad_test_state(buf), IB_MAD_SEND_WAIT_RESP);
	KUNIT_EXPECT_EQ(test, env->sends_done, 0);
	/* Another TID or another class does not match. */
	mad_test_respond(test, env, 3, IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE);
	mad_test_respond(test, env, 2, IB_MGMT_CLASS_SUBN_LID_ROUTED);
	KUNIT_EXPECT_EQ(test, env->recvs_done, 0);
	mad_test_respond(test, env, 2, IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE);
	KUNIT_EXPECT_EQ(test, env->recvs_done, 1);
	KUNIT_EXPECT_PTR_EQ(test, env->recv_send_buf, buf);
	KUNIT_EXPECT_EQ(test, env->sends_done, 1);
	KUNIT_EXPECT_EQ(test, env->last_status, IB_WC_SUCCESS);
	KUNIT_EXPECT_STREQ(test, env->order, "rs");
	/* A duplicate response finds nothing. */
	mad_test_respond(test, env, 2, IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE);
	KUNIT_EXPECT_EQ(test, env->recvs_done, 1);
	ib_free_send_mad(buf);
}

static void mad_test_send_early_response(struct kunit *test)
{
	struct mad_test_env *env = mad_test_env(test);
	struct ib_mad_send_buf *buf = mad_test_send(test, env, 4, 5000, 3);

	KUNIT_ASSERT_EQ(test, ib_post_send_mad(buf, NULL), 0);
	mad_test_respond(test, env, 4, IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE);
	KUNIT_EXPECT_EQ(test, env->recvs_done, 1);
	KUNIT_EXPECT_EQ(test, env->sends_done, 0);
	KUNIT_EXPECT_EQ(test, mad_test_state(buf), IB_MAD_SEND_RESPONDED);
	/* A cancel now is too late. */
	KUNIT_EXPECT_EQ(test, ib_modify_mad(buf, 0), -EINVAL);
	mad_test_wire_done(buf, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, env->sends_done, 1);
	KUNIT_EXPECT_EQ(test, env->last_status, IB_WC_SUCCESS);
	KUNIT_EXPECT_STREQ(test, env->order, "rs");
	ib_free_send_mad(buf);
}

static void mad_test_send_cancel_on_wire(struct kunit *test)
{
	struct mad_test_env *env = mad_test_env(test);
	struct ib_mad_send_buf *buf = mad_test_send(test, env, 5, 5000, 0);

	KUNIT_ASSERT_EQ(test, ib_post_send_mad(buf, NULL), 0);
	KUNIT_EXPECT_EQ(test, ib_modify_mad(buf, 0), 0);
	KUNIT_EXPECT_EQ(test, mad_test_state(buf), IB_MAD_SEND_CANCELLED);
	KUNIT_EXPECT_EQ(test, ib_modify_mad(buf, 0), -EINVAL);
	/* The response to a cancelled request is not delivered. */
	mad_test_respond(test, env, 5, IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE);
	KUNIT_EXPECT_EQ(test, env->recvs_done, 0);
	KUNIT_EXPECT_EQ(test, env->sends_done, 0);
	/* The work request completes fine, yet the send was cancelled. */
	mad_test_wire_done(buf, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, env->sends_done, 1);
	KUNIT_EXPECT_EQ(test, env->last_status, IB_WC_WR_FLUSH_ERR);
	flush_workqueue(env->port->wq);
	KUNIT_EXPECT_EQ(test, env->sends_done, 1);
	ib_free_send_mad(buf);
}

static void mad_test_send_cancel_waiting(struct kunit *test)
{
	struct mad_test_env *env = mad_test_env(test);
	struct ib_mad_send_buf *buf = mad_test_send(test, env, 6, 5000, 0);

	KUNIT_ASSERT_EQ(test, ib_post_send_mad(buf, NULL), 0);
	mad_test_wire_done(buf, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, ib_modify_mad(buf, 0), 0);
	flush_delayed_work(&env->priv->timed_work);
	KUNIT_EXPECT_EQ(test, env->sends_done, 1);
	KUNIT_EXPECT_EQ(test, env->last_status, IB_WC_WR_FLUSH_ERR);
	/*
	 * Never from the cancel call itself, but from the agent's work: which
	 * may already have run on another CPU when ib_modify_mad() returned,
	 * so the task is what tells, not the count.
	 */
	KUNIT_EXPECT_PTR_NE(test, env->send_task, current);
	ib_free_send_mad(buf);
}

static void mad_test_wait_timeout(struct mad_test_env *env)
{
	msleep(60);
	flush_delayed_work(&env->priv->timed_work);
}

/*
 * @buf, with a timeout of 20 ms and two retries, is posted and nothing
 * answers it: it is sent three times, a timeout apart, and completes once
 * with IB_WC_RESP_TIMEOUT_ERR.
 */
static void mad_test_expect_two_retries(struct kunit *test,
					struct mad_test_env *env,
					struct ib_mad_send_buf *buf)
{
	int i;

	KUNIT_ASSERT_EQ(test, ib_post_send_mad(buf, NULL), 0);
	KUNIT_EXPECT_EQ(test, buf->retries, 0);
	for (i = 1; i <= 2; i++) {
		mad_test_wire_done(buf, IB_WC_SUCCESS);
		KUNIT_EXPECT_EQ(test, mad_test_state(buf),
				IB_MAD_SEND_WAIT_RESP);
		mad_test_wait_timeout(env);
		KUNIT_EXPECT_EQ(test, env->posts, 1 + i);
		KUNIT_EXPECT_EQ(test, buf->retries, i);
		KUNIT_EXPECT_EQ(test, mad_test_state(buf), IB_MAD_SEND_ON_WIRE);
		KUNIT_EXPECT_EQ(test, env->sends_done, 0);
	}
	mad_test_wire_done(buf, IB_WC_SUCCESS);
	mad_test_wait_timeout(env);
	KUNIT_EXPECT_EQ(test, env->posts, 3);
	KUNIT_EXPECT_EQ(test, env->sends_done, 1);
	KUNIT_EXPECT_EQ(test, env->last_status, IB_WC_RESP_TIMEOUT_ERR);
	KUNIT_EXPECT_EQ(test, buf->retries, 2);
	mad_test_wait_timeout(env);
	KUNIT_EXPECT_EQ(test, env->sends_done, 1);
	ib_free_send_mad(buf);
}

static void mad_test_send_retries(struct kunit *test)
{
	struct mad_test_env *env = mad_test_env(test);

	mad_test_expect_two_retries(test, env,
				    mad_test_send(test, env, 7, 20, 2));
}

/*
 * 7.x's ib_cm sends a REP through an agent without a receive handler,
 * with a timeout and retries: the REP waits for an RTU that reaches the
 * CM's other agent, so nothing is ever matched to it. @timeout_ms and
 * @retries of a CM REP from such an agent.
 */
static struct ib_mad_send_buf *mad_test_send_rep(struct kunit *test,
						 struct mad_test_env *env,
						 u64 tid, int timeout_ms,
						 int retries)
{
	struct ib_mad_send_buf *buf;
	struct ib_mad_hdr *hdr;

	env->priv->agent.recv_handler = NULL;
	buf = mad_test_send(test, env, tid, timeout_ms, retries);
	hdr = buf->mad;
	hdr->mgmt_class = IB_MGMT_CLASS_CM;
	hdr->class_version = 2;	/* the CM class version of IBA 1.2 */
	hdr->method = IB_MGMT_METHOD_SEND;
	hdr->attr_id = CM_REP_ATTR_ID;
	return buf;
}

/*
 * No RTU: the REP is sent again after each timeout, 1 + @retries times
 * in all, then completes once with IB_WC_RESP_TIMEOUT_ERR. 6.12's MAD
 * layer refused the post (-EINVAL), failing every passive connection of
 * 7.x's ib_cm.
 */
static void mad_test_send_only_timeout(struct kunit *test)
{
	struct mad_test_env *env = mad_test_env(test);

	mad_test_expect_two_retries(test, env,
				    mad_test_send_rep(test, env, 40, 20, 2));
}

/*
 * REP, MRA, RTU: the MRA's service timeout lengthens the wait
 * (ib_modify_mad()), the RTU cancels the REP (ib_cancel_mad()), which
 * then completes exactly once with IB_WC_WR_FLUSH_ERR and is not resent.
 */
static void mad_test_send_only_mra_rtu(struct kunit *test)
{
	struct mad_test_env *env = mad_test_env(test);
	struct ib_mad_send_buf *buf = mad_test_send_rep(test, env, 41, 20, 2);

	KUNIT_ASSERT_EQ(test, ib_post_send_mad(buf, NULL), 0);
	mad_test_wire_done(buf, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, ib_modify_mad(buf, 10000), 0);
	mad_test_wait_timeout(env);
	KUNIT_EXPECT_EQ(test, env->posts, 1);
	KUNIT_EXPECT_EQ(test, env->sends_done, 0);
	ib_cancel_mad(buf);
	flush_delayed_work(&env->priv->timed_work);
	KUNIT_EXPECT_EQ(test, env->sends_done, 1);
	KUNIT_EXPECT_EQ(test, env->last_status, IB_WC_WR_FLUSH_ERR);
	KUNIT_EXPECT_EQ(test, ib_modify_mad(buf, 0), -EINVAL);
	mad_test_wait_timeout(env);
	KUNIT_EXPECT_EQ(test, env->posts, 1);
	KUNIT_EXPECT_EQ(test, env->sends_done, 1);
	ib_free_send_mad(buf);
}

static void mad_test_timed_work_off(struct work_struct *work)
{
}

/* Many sends time out together: each run of the work takes one batch. */
static void mad_test_send_mass_timeout(struct kunit *test)
{
	struct mad_test_env *env = mad_test_env(test);
	const int n = 3 * IB_MAD_TIMEOUT_BATCH + 5;
	struct ib_mad_send_buf **bufs;
	int i, runs;

	bufs = kunit_kcalloc(test, n, sizeof(*bufs), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, bufs);
	/* The test runs the work itself, one run at a time. */
	env->priv->timed_work.work.func = mad_test_timed_work_off;
	for (i = 0; i < n; i++) {
		bufs[i] = mad_test_send(test, env, 0x10000 + i, 10, 0);
		KUNIT_ASSERT_EQ(test, ib_post_send_mad(bufs[i], NULL), 0);
		mad_test_wire_done(bufs[i], IB_WC_SUCCESS);
	}
	msleep(30);
	cancel_delayed_work_sync(&env->priv->timed_work);

	ib_mad_agent_timed_work(&env->priv->timed_work.work);
	KUNIT_EXPECT_GT(test, env->sends_done, 0);
	KUNIT_EXPECT_LE(test, env->sends_done, IB_MAD_TIMEOUT_BATCH);
	for (runs = 1; env->sends_done < n && runs < 2 * n; runs++)
		ib_mad_agent_timed_work(&env->priv->timed_work.work);
	KUNIT_EXPECT_EQ(test, env->sends_done, n);
	KUNIT_EXPECT_GE(test, runs, DIV_ROUND_UP(n, IB_MAD_TIMEOUT_BATCH));
	KUNIT_EXPECT_EQ(test, env->last_status, IB_WC_RESP_TIMEOUT_ERR);
	cancel_delayed_work_sync(&env->priv->timed_work);
	env->priv->timed_work.work.func = mad_test_timed_work;
	for (i = 0; i < n; i++)
		ib_free_send_mad(bufs[i]);
}

/*
 * Sends wait in deadline order whatever order they were posted in: a short
 * timeout posted behind long ones, and a long one shortened with
 * ib_modify_mad(), expire first and alone.
 */
static void mad_test_send_deadline_order(struct kunit *test)
{
	struct mad_test_env *env = mad_test_env(test);
	struct ib_mad_send_buf *lng[3], *shrt;
	int i;

	for (i = 0; i < ARRAY_SIZE(lng); i++) {
		lng[i] = mad_test_send(test, env, 0x20 + i, 10000, 0);
		KUNIT_ASSERT_EQ(test, ib_post_send_mad(lng[i], NULL), 0);
		mad_test_wire_done(lng[i], IB_WC_SUCCESS);
	}
	shrt = mad_test_send(test, env, 0x30, 10, 0);
	KUNIT_ASSERT_EQ(test, ib_post_send_mad(shrt, NULL), 0);
	mad_test_wire_done(shrt, IB_WC_SUCCESS);
	mad_test_wait_timeout(env);
	KUNIT_EXPECT_EQ(test, env->sends_done, 1);
	KUNIT_EXPECT_EQ(test, mad_test_state(shrt), IB_MAD_SEND_DONE);
	KUNIT_EXPECT_EQ(test, env->last_status, IB_WC_RESP_TIMEOUT_ERR);

	/* The middle one of the long waits becomes the earliest. */
	KUNIT_ASSERT_EQ(test, ib_modify_mad(lng[1], 10), 0);
	mad_test_wait_timeout(env);
	KUNIT_EXPECT_EQ(test, env->sends_done, 2);
	KUNIT_EXPECT_EQ(test, mad_test_state(lng[1]), IB_MAD_SEND_DONE);
	KUNIT_EXPECT_EQ(test, mad_test_state(lng[0]), IB_MAD_SEND_WAIT_RESP);
	KUNIT_EXPECT_EQ(test, mad_test_state(lng[2]), IB_MAD_SEND_WAIT_RESP);

	for (i = 0; i < ARRAY_SIZE(lng); i += 2)
		KUNIT_EXPECT_EQ(test, ib_modify_mad(lng[i], 0), 0);
	flush_delayed_work(&env->priv->timed_work);
	KUNIT_EXPECT_EQ(test, env->sends_done, 4);
	KUNIT_EXPECT_EQ(test, env->last_status, IB_WC_WR_FLUSH_ERR);
	for (i = 0; i < ARRAY_SIZE(lng); i++)
		ib_free_send_mad(lng[i]);
	ib_free_send_mad(shrt);
}

static void mad_test_send_modify(struct kunit *test)
{
	struct mad_test_env *env = mad_test_env(test);
	struct ib_mad_send_buf *buf = mad_test_send(test, env, 8, 20, 0);

	KUNIT_ASSERT_EQ(test, ib_post_send_mad(buf, NULL), 0);
	mad_test_wire_done(buf, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, ib_modify_mad(buf, 10000), 0);
	mad_test_wait_timeout(env);
	KUNIT_EXPECT_EQ(test, env->sends_done, 0);
	KUNIT_EXPECT_EQ(test, mad_test_state(buf), IB_MAD_SEND_WAIT_RESP);
	mad_test_respond(test, env, 8, IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE);
	KUNIT_EXPECT_EQ(test, env->sends_done, 1);
	KUNIT_EXPECT_EQ(test, env->last_status, IB_WC_SUCCESS);
	ib_free_send_mad(buf);
}

static void mad_test_send_error(struct kunit *test)
{
	struct mad_test_env *env = mad_test_env(test);
	struct ib_mad_send_buf *buf = mad_test_send(test, env, 9, 5000, 3);

	KUNIT_ASSERT_EQ(test, ib_post_send_mad(buf, NULL), 0);
	mad_test_wire_done(buf, IB_WC_GENERAL_ERR);
	KUNIT_EXPECT_EQ(test, env->sends_done, 1);
	KUNIT_EXPECT_EQ(test, env->last_status, IB_WC_GENERAL_ERR);
	/* A buffer whose handler ran may be posted again. */
	buf->timeout_ms = 0;
	KUNIT_ASSERT_EQ(test, ib_post_send_mad(buf, NULL), 0);
	mad_test_wire_done(buf, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, env->sends_done, 2);
	KUNIT_EXPECT_EQ(test, env->last_status, IB_WC_SUCCESS);
	ib_free_send_mad(buf);
}

static void mad_test_send_failed_post(struct kunit *test)
{
	struct mad_test_env *env = mad_test_env(test);
	struct ib_mad_send_buf *a = mad_test_send(test, env, 10, 0, 0);
	struct ib_mad_send_buf *b = mad_test_send(test, env, 11, 0, 0);
	struct ib_mad_send_buf *bad = NULL;

	env->post_ret = -ENOMEM;
	KUNIT_EXPECT_EQ(test, ib_post_send_mad(a, &bad), -ENOMEM);
	KUNIT_EXPECT_PTR_EQ(test, bad, a);
	KUNIT_EXPECT_EQ(test, mad_test_state(a), IB_MAD_SEND_IDLE);

	/* In a chain, the first buffer not posted is named. */
	env->post_ret = 0;
	a->next = b;
	b->timeout_ms = 5;		/* fine */
	b->retries = -1;		/* refused */
	KUNIT_EXPECT_EQ(test, ib_post_send_mad(a, &bad), -EINVAL);
	KUNIT_EXPECT_PTR_EQ(test, bad, b);
	KUNIT_EXPECT_EQ(test, mad_test_state(b), IB_MAD_SEND_IDLE);
	mad_test_wire_done(a, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, env->sends_done, 1);
	ib_free_send_mad(a);
	ib_free_send_mad(b);
	KUNIT_EXPECT_EQ(test, env->sends_done, 1);
}

/* Unregistration began: a send would wait for its timeout, refuse it. */
static void mad_test_send_dying(struct kunit *test)
{
	struct mad_test_env *env = mad_test_env(test);
	struct ib_mad_send_buf *buf = mad_test_send(test, env, 14, 5000, 3);
	struct ib_mad_send_buf *bad = NULL;
	unsigned long flags;

	spin_lock_irqsave(&env->priv->lock, flags);
	env->priv->dying = true;
	spin_unlock_irqrestore(&env->priv->lock, flags);

	KUNIT_EXPECT_EQ(test, ib_post_send_mad(buf, &bad), -ESHUTDOWN);
	KUNIT_EXPECT_PTR_EQ(test, bad, buf);
	KUNIT_EXPECT_EQ(test, env->posts, 0);
	KUNIT_EXPECT_EQ(test, mad_test_state(buf), IB_MAD_SEND_IDLE);
	KUNIT_EXPECT_EQ(test,
			atomic64_read(&env->port->stats[IB_MAD_STAT_OUTSTANDING]),
			0);
	/* Nothing reached the wire or the timer: the buffer is the caller's. */
	ib_mad_agent_flush_sends(env->priv);
	flush_workqueue(env->port->wq);
	KUNIT_EXPECT_EQ(test, env->sends_done, 0);
	ib_free_send_mad(buf);
}

static void mad_test_send_flush(struct kunit *test)
{
	struct mad_test_env *env = mad_test_env(test);
	struct ib_mad_send_buf *a = mad_test_send(test, env, 12, 5000, 0);
	struct ib_mad_send_buf *b = mad_test_send(test, env, 13, 5000, 0);

	KUNIT_ASSERT_EQ(test, ib_post_send_mad(a, NULL), 0);
	KUNIT_ASSERT_EQ(test, ib_post_send_mad(b, NULL), 0);
	mad_test_wire_done(a, IB_WC_SUCCESS);
	/* Unregistration: a (waiting) completes now, b when its WR does. */
	ib_mad_agent_flush_sends(env->priv);
	KUNIT_EXPECT_EQ(test, env->sends_done, 1);
	KUNIT_EXPECT_EQ(test, env->last_status, IB_WC_WR_FLUSH_ERR);
	mad_test_wire_done(b, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, env->sends_done, 2);
	KUNIT_EXPECT_EQ(test, env->last_status, IB_WC_WR_FLUSH_ERR);
	ib_free_send_mad(a);
	ib_free_send_mad(b);
}

static void mad_test_tid_hash(struct kunit *test)
{
	struct mad_test_env *env = mad_test_env(test);
	struct ib_mad_send_buf *bufs[4];
	u64 tids[4] = { 0x100000001ULL, 0x100000041ULL, 0x200000001ULL,
			0x100000081ULL };
	int i;

	/* Outstanding TIDs, some differing only in hi_tid: each its own. */
	for (i = 0; i < 4; i++) {
		bufs[i] = mad_test_send(test, env, tids[i], 5000, 0);
		KUNIT_ASSERT_EQ(test, ib_post_send_mad(bufs[i], NULL), 0);
		mad_test_wire_done(bufs[i], IB_WC_SUCCESS);
	}
	for (i = 3; i >= 0; i--) {
		mad_test_respond(test, env, tids[i],
				 IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE);
		KUNIT_EXPECT_PTR_EQ(test, env->recv_send_buf, bufs[i]);
		KUNIT_EXPECT_EQ(test, mad_test_state(bufs[i]), IB_MAD_SEND_DONE);
	}
	KUNIT_EXPECT_EQ(test, env->sends_done, 4);
	for (i = 0; i < 4; i++)
		ib_free_send_mad(bufs[i]);
}

static void mad_test_rmpp_segments(struct kunit *test)
{
	struct mad_test_env *env = mad_test_env(test);
	struct ib_mad_send_buf *buf;
	u8 *seg;

	env->priv->agent.rmpp_version = IB_MGMT_RMPP_VERSION;
	/* 2 * 200 + 1 bytes of SA data: three segments, 199 bytes of pad. */
	buf = ib_create_send_mad(&env->priv->agent, 1, 0, 1, IB_MGMT_SA_HDR,
				 401, GFP_KERNEL, IB_MGMT_BASE_VERSION);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, buf);
	KUNIT_EXPECT_EQ(test, buf->seg_count, 3);
	KUNIT_EXPECT_EQ(test, buf->seg_size, 200);
	KUNIT_EXPECT_EQ(test, buf->seg_rmpp_size, 220);
	KUNIT_EXPECT_EQ(test, ib_mad_send_wr(buf)->pad, 199);
	seg = ib_get_rmpp_segment(buf, 3);
	KUNIT_ASSERT_NOT_NULL(test, seg);
	KUNIT_EXPECT_EQ(test, seg[199], 0);
	KUNIT_EXPECT_NOT_NULL(test, ib_get_rmpp_segment(buf, 1));
	KUNIT_EXPECT_NULL(test, ib_get_rmpp_segment(buf, 4));
	KUNIT_EXPECT_NULL(test, ib_get_rmpp_segment(buf, 0));
	KUNIT_EXPECT_TRUE(test, ib_get_rmpp_flags(&((struct ib_rmpp_mad *)buf->mad)->rmpp_hdr) &
			  IB_MGMT_RMPP_FLAG_ACTIVE);
	ib_free_send_mad(buf);

	/* Lengths a caller (or user space) gets wrong are refused. */
	KUNIT_EXPECT_TRUE(test, IS_ERR(ib_create_send_mad(&env->priv->agent, 1,
							  0, 0, IB_MGMT_SA_HDR,
							  -1, GFP_KERNEL, 1)));
	KUNIT_EXPECT_TRUE(test, IS_ERR(ib_create_send_mad(&env->priv->agent, 1,
							  0, 0, IB_MGMT_SA_HDR,
							  201, GFP_KERNEL, 1)));
	KUNIT_EXPECT_TRUE(test, IS_ERR(ib_create_send_mad(&env->priv->agent, 1,
							  0, 1, 256, 10,
							  GFP_KERNEL, 1)));
	env->priv->agent.rmpp_version = 0;
	KUNIT_EXPECT_TRUE(test, IS_ERR(ib_create_send_mad(&env->priv->agent, 1,
							  0, 1, IB_MGMT_SA_HDR,
							  401, GFP_KERNEL, 1)));
}

struct mad_test_closer {
	struct ib_mad_port_private *port;
	struct completion done;
};

static int mad_test_close_thread(void *data)
{
	struct mad_test_closer *c = data;

	ib_mad_reply_port_close(c->port);
	complete(&c->done);
	return 0;
}

/*
 * Port removal unregisters the reply agents while the CQ work may be
 * answering a MAD with one: a user that found the agent keeps it alive,
 * and nobody finds it once removal began.
 */
static void mad_test_reply_agent_close(struct kunit *test)
{
	struct mad_test_env *env = mad_test_env(test);
	struct ib_mad_agent_private *reply, *got;
	struct mad_test_closer *c;
	struct task_struct *task;
	bool held;

	c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, c);
	reply = ib_mad_agent_alloc(&env->port->qp_info[1], NULL);
	KUNIT_ASSERT_NOT_NULL(test, reply);
	reply->agent.device = env->dev;
	reply->agent.qp = &env->qp;
	reply->agent.port_num = 1;
	rcu_assign_pointer(env->port->reply_agents[1], &reply->agent);

	got = ib_mad_reply_agent_get(env->port, 1);
	KUNIT_EXPECT_PTR_EQ(test, got, reply);
	held = got && refcount_read(&reply->refcount) == 2;
	KUNIT_EXPECT_TRUE(test, held);

	c->port = env->port;
	init_completion(&c->done);
	task = kthread_run(mad_test_close_thread, c, "mad_kunit_close");
	KUNIT_ASSERT_FALSE(test, IS_ERR(task));
	msleep(100);
	KUNIT_EXPECT_NULL(test, ib_mad_reply_agent_get(env->port, 1));
	KUNIT_EXPECT_FALSE(test, completion_done(&c->done));
	if (held)
		ib_mad_agent_put(got);
	KUNIT_EXPECT_TRUE(test, wait_for_completion_timeout(&c->done, 5 * HZ));
}

/* RoCE v2 with IPv4: the GIDs come from the IPv4 header. */
static void mad_test_roce_ipv4_gids(struct kunit *test)
{
	struct mad_test_env *env = mad_test_env(test);
	struct ib_mad_recv_priv *recv;
	union ib_gid sgid, dgid;
	struct iphdr *ip;

	env->port_data[1].immutable.core_cap_flags =
		RDMA_CORE_CAP_PROT_ROCE_UDP_ENCAP;
	recv = ib_mad_recv_priv_alloc(sizeof(struct ib_mad), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, recv);
	/* The IPv4 header sits in the last 20 of the 40 bytes. */
	ip = (struct iphdr *)((u8 *)&recv->grh + 20);
	ip->version = 4;
	ip->ihl = 5;
	ip->saddr = htonl(0xc0a80002);
	ip->daddr = htonl(0xc0a80001);
	ip->check = ip_fast_csum((u8 *)ip, 5);
	recv->recv_wc.wc = &recv->wc;
	recv->recv_wc.recv_buf.grh = &recv->grh;

	/* No GRH flag: the 40 bytes are not a network header. */
	KUNIT_EXPECT_EQ(test, ib_mad_recv_gids(env->priv, &recv->recv_wc,
					       &sgid, &dgid), -EINVAL);

	/* Without the network header type, the header is recognised. */
	recv->wc.wc_flags = IB_WC_GRH;
	KUNIT_ASSERT_EQ(test, ib_mad_recv_gids(env->priv, &recv->recv_wc,
					       &sgid, &dgid), 0);
	KUNIT_EXPECT_TRUE(test, ipv6_addr_v4mapped((struct in6_addr *)&sgid));
	KUNIT_EXPECT_EQ(test,
			be32_to_cpu(((struct in6_addr *)&sgid)->s6_addr32[3]),
			0xc0a80002);
	KUNIT_EXPECT_EQ(test,
			be32_to_cpu(((struct in6_addr *)&dgid)->s6_addr32[3]),
			0xc0a80001);

	/* With it, as rxe reports. */
	memset(&sgid, 0, sizeof(sgid));
	recv->wc.wc_flags = IB_WC_GRH | IB_WC_WITH_NETWORK_HDR_TYPE;
	recv->wc.network_hdr_type = RDMA_NETWORK_IPV4;
	KUNIT_ASSERT_EQ(test, ib_mad_recv_gids(env->priv, &recv->recv_wc,
					       &sgid, &dgid), 0);
	KUNIT_EXPECT_EQ(test,
			be32_to_cpu(((struct in6_addr *)&sgid)->s6_addr32[3]),
			0xc0a80002);
	ib_mad_recv_priv_free(recv);
}

/* RMPP reassembly on the fake port ---------------------------------------- */

static int mad_test_ahs_created;

static int mad_test_create_ah(struct ib_ah *ah, struct rdma_ah_init_attr *attr,
			      struct ib_udata *udata)
{
	mad_test_ahs_created++;
	return 0;
}

static int mad_test_destroy_ah(struct ib_ah *ah, u32 flags)
{
	return 0;
}

/* The fake device makes address handles; the agent does kernel RMPP. */
static void mad_test_rmpp_env(struct kunit *test, struct mad_test_env *env,
			      int max_posted)
{
	env->posted = kunit_kcalloc(test, max_posted, sizeof(*env->posted),
				    GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, env->posted);
	env->max_posted = max_posted;
	env->dev->ops.create_ah = mad_test_create_ah;
	env->dev->ops.destroy_ah = mad_test_destroy_ah;
	env->dev->ops.size_ib_ah = sizeof(struct ib_ah);
	env->pd.device = env->dev;
	env->priv->agent.rmpp_version = IB_MGMT_RMPP_VERSION;
}

/* Segment @seg of an SA GetMulti request of @segs segments arrives. */
static void mad_test_rmpp_seg(struct kunit *test, struct mad_test_env *env,
			      u64 tid, u32 segs, u32 seg)
{
	struct ib_mad_recv_priv *recv;
	struct ib_rmpp_mad *mad;
	u8 flags = IB_MGMT_RMPP_FLAG_ACTIVE;

	recv = ib_mad_recv_priv_alloc(sizeof(struct ib_mad), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, recv);
	mad = (struct ib_rmpp_mad *)recv->mad;
	mad->mad_hdr.base_version = IB_MGMT_BASE_VERSION;
	mad->mad_hdr.mgmt_class = IB_MGMT_CLASS_SUBN_ADM;
	mad->mad_hdr.class_version = 2;
	mad->mad_hdr.method = 0x14;		/* SubnAdmGetMulti */
	mad->mad_hdr.tid = cpu_to_be64(tid);
	mad->rmpp_hdr.rmpp_version = IB_MGMT_RMPP_VERSION;
	mad->rmpp_hdr.rmpp_type = IB_MGMT_RMPP_TYPE_DATA;
	if (seg == 1)
		flags |= IB_MGMT_RMPP_FLAG_FIRST;
	if (seg == segs)
		flags |= IB_MGMT_RMPP_FLAG_LAST;
	ib_set_rmpp_flags(&mad->rmpp_hdr, flags);
	mad->rmpp_hdr.seg_num = cpu_to_be32(seg);
	/* Segment 1 carries the whole length, the Last one its own part. */
	if (seg == 1)
		mad->rmpp_hdr.paylen_newwin = cpu_to_be32(segs * 220);
	else if (seg == segs)
		mad->rmpp_hdr.paylen_newwin = cpu_to_be32(220);
	recv->wc.src_qp = 1;
	recv->wc.slid = env->rmpp_slid ?: 5;
	recv->recv_wc.wc = &recv->wc;
	recv->recv_wc.recv_buf.mad = (struct ib_mad *)recv->mad;
	recv->recv_wc.recv_buf.grh = &recv->grh;
	recv->recv_wc.mad_len = sizeof(struct ib_mad);
	recv->recv_wc.mad_seg_size = sizeof(struct ib_mad);
	INIT_LIST_HEAD(&recv->recv_wc.rmpp_list);
	list_add(&recv->recv_wc.recv_buf.list, &recv->recv_wc.rmpp_list);
	ib_mad_agent_get(env->priv);
	ib_mad_deliver(env->priv, &recv->recv_wc);
}

/* Segment 1 of an SA GetMulti request of @segs segments arrives. */
static void mad_test_rmpp_first(struct kunit *test, struct mad_test_env *env,
				u64 tid, u32 segs)
{
	mad_test_rmpp_seg(test, env, tid, segs, 1);
}

static const struct ib_rmpp_hdr *mad_test_posted_rmpp(struct mad_test_env *env,
						      int i)
{
	return &((struct ib_rmpp_mad *)env->posted[i]->send_buf.mad)->rmpp_hdr;
}

/* Complete the control MADs the receiver posted, as the CQ would. */
static void mad_test_rmpp_drain(struct mad_test_env *env, int from, int to)
{
	int i;

	for (i = from; i < to && i < env->max_posted; i++)
		mad_test_wire_done(&env->posted[i]->send_buf, IB_WC_SUCCESS);
}

/*
 * An agent collects a bounded number of transfers; the next one, with none
 * of them stalled, is told STOP.
 */
static void mad_test_rmpp_recv_cap(struct kunit *test)
{
	struct mad_test_env *env = mad_test_env(test);
	const int n = MAD_RMPP_MAX_RECVS + 1;
	const struct ib_rmpp_hdr *hdr;
	int i, acks = 0;

	mad_test_rmpp_env(test, env, n);
	for (i = 0; i < n; i++) {
		/* Sixteen sources, each with its share of the slots. */
		env->rmpp_slid = 0x400 + i / MAD_RMPP_SRC_MAX_RECVS;
		mad_test_rmpp_first(test, env, 0x700000000ULL + i, 2);
	}
	KUNIT_ASSERT_EQ(test, env->posts, n);
	for (i = 0; i < n - 1; i++)
		acks += mad_test_posted_rmpp(env, i)->rmpp_type ==
			IB_MGMT_RMPP_TYPE_ACK;
	KUNIT_EXPECT_EQ(test, acks, n - 1);
	hdr = mad_test_posted_rmpp(env, n - 1);
	KUNIT_EXPECT_EQ(test, hdr->rmpp_type, IB_MGMT_RMPP_TYPE_STOP);
	KUNIT_EXPECT_EQ(test, hdr->rmpp_status, IB_MGMT_RMPP_STATUS_RESX);
	KUNIT_EXPECT_EQ(test, env->priv->rmpp_recvs, MAD_RMPP_MAX_RECVS);

	/* The control MADs complete; unregistration drops the transfers. */
	mad_test_rmpp_drain(env, 0, n);
	ib_mad_rmpp_cancel_recvs(env->priv);
	KUNIT_EXPECT_EQ(test, env->priv->rmpp_recvs, 0);
	KUNIT_EXPECT_EQ(test, env->recvs_done, 0);
}

/* How many control MADs from @from on are of @type. */
static int mad_test_rmpp_count(struct mad_test_env *env, int from, u8 type)
{
	int i, n = 0;

	for (i = from; i < env->posts && i < env->max_posted; i++)
		n += mad_test_posted_rmpp(env, i)->rmpp_type == type;
	return n;
}

/* A counter or gauge of the port, as debugfs shows it. */
static u64 mad_test_stat(struct mad_test_env *env, enum ib_mad_stat stat)
{
	return atomic64_read(&env->port->stats[stat]);
}

/* Entries of the agent's reassembly hash, collecting or finished. */
static int mad_test_rmpp_entries(struct mad_test_env *env)
{
	struct hlist_node *node;
	unsigned long flags;
	int bkt, n = 0;

	spin_lock_irqsave(&env->priv->lock, flags);
	for (bkt = 0; bkt < HASH_SIZE(env->priv->rmpp_hash); bkt++)
		hlist_for_each(node, &env->priv->rmpp_hash[bkt])
			n++;
	spin_unlock_irqrestore(&env->priv->lock, flags);
	return n;
}

/*
 * One source cannot take every reassembly slot of an agent: after
 * MAD_RMPP_SRC_MAX_RECVS stalled first segments its next ones are told
 * STOP, and another source still gets its transfer started.
 */
static void mad_test_rmpp_recv_src_cap(struct kunit *test)
{
	struct mad_test_env *env = mad_test_env(test);
	const int n = 20;
	int i;

	mad_test_rmpp_env(test, env, n + 1);
	env->rmpp_slid = 7;
	for (i = 0; i < n; i++)
		mad_test_rmpp_first(test, env, 0x710000000ULL + i, 2);
	KUNIT_ASSERT_EQ(test, env->posts, n);
	KUNIT_EXPECT_EQ(test, mad_test_rmpp_count(env, 0, IB_MGMT_RMPP_TYPE_ACK),
			16);
	KUNIT_EXPECT_EQ(test,
			mad_test_rmpp_count(env, 0, IB_MGMT_RMPP_TYPE_STOP),
			n - 16);

	env->rmpp_slid = 8;
	mad_test_rmpp_first(test, env, 0x710000000ULL, 2);
	KUNIT_ASSERT_EQ(test, env->posts, n + 1);
	KUNIT_EXPECT_EQ(test, mad_test_posted_rmpp(env, n)->rmpp_type,
			IB_MGMT_RMPP_TYPE_ACK);
	/* The gauges of debugfs saw the cap and what the agent held. */
	KUNIT_EXPECT_EQ(test, mad_test_stat(env, IB_MAD_STAT_RMPP_SRC_RECVS_PEAK),
			16);
	KUNIT_EXPECT_EQ(test, mad_test_stat(env, IB_MAD_STAT_RMPP_RECVS_PEAK),
			17);
	KUNIT_EXPECT_EQ(test, mad_test_stat(env, IB_MAD_STAT_RMPP_SEGS), 17);
	mad_test_rmpp_drain(env, 0, env->posts);
	ib_mad_rmpp_cancel_recvs(env->priv);
	KUNIT_EXPECT_EQ(test, env->priv->rmpp_recvs, 0);
	KUNIT_EXPECT_EQ(test, mad_test_stat(env, IB_MAD_STAT_RMPP_SEGS), 0);
}

/*
 * Every slot of the agent taken by sixteen sources that went silent: a
 * first segment from a seventeenth evicts the most stalled transfer
 * (whose sender is told STOP) and starts.
 */
static void mad_test_rmpp_recv_evict_stalled(struct kunit *test)
{
	struct mad_test_env *env = mad_test_env(test);
	const int n = MAD_RMPP_MAX_RECVS;
	int i;

	mad_test_rmpp_env(test, env, n + 2);
	for (i = 0; i < n; i++) {
		env->rmpp_slid = 0x100 + i / 16;
		mad_test_rmpp_first(test, env, 0x720000000ULL + i, 2);
	}
	KUNIT_ASSERT_EQ(test, env->posts, n);
	KUNIT_EXPECT_EQ(test, mad_test_rmpp_count(env, 0, IB_MGMT_RMPP_TYPE_ACK),
			n);
	mad_test_rmpp_drain(env, 0, n);
	msleep(MAD_RMPP_ACK_WAIT_MAX_MS + 200);

	env->rmpp_slid = 0x200;
	mad_test_rmpp_first(test, env, 0x730000000ULL, 2);
	KUNIT_EXPECT_EQ(test,
			mad_test_rmpp_count(env, n, IB_MGMT_RMPP_TYPE_STOP), 1);
	KUNIT_EXPECT_EQ(test, mad_test_rmpp_count(env, n, IB_MGMT_RMPP_TYPE_ACK),
			1);
	KUNIT_EXPECT_EQ(test, env->priv->rmpp_recvs, n);
	mad_test_rmpp_drain(env, n, env->posts);
	ib_mad_rmpp_cancel_recvs(env->priv);
}

/*
 * Finished transfers are remembered for repeats of their last segment, a
 * bounded number of them: a flood of one-segment transfers does not grow
 * the agent's hash (walked with interrupts off) without bound.
 */
static void mad_test_rmpp_recv_done_bound(struct kunit *test)
{
	struct mad_test_env *env = mad_test_env(test);
	const int n = 2 * MAD_RMPP_MAX_RECVS + 50;
	int i;

	mad_test_rmpp_env(test, env, 1);
	for (i = 0; i < n; i++) {
		env->rmpp_slid = 0x300 + i % 64;
		mad_test_rmpp_first(test, env, 0x740000000ULL + i, 1);
		mad_test_rmpp_drain(env, 0, 1);
		env->posts = 0;
	}
	KUNIT_EXPECT_EQ(test, env->recvs_done, n);
	KUNIT_EXPECT_LE(test, mad_test_rmpp_entries(env), MAD_RMPP_MAX_RECVS);
	KUNIT_EXPECT_EQ(test, mad_test_stat(env, IB_MAD_STAT_RMPP_DONE_PEAK),
			MAD_RMPP_MAX_DONE);
	ib_mad_rmpp_cancel_recvs(env->priv);
}

/* The memory one receive buffer of the fake port pins. */
static size_t mad_test_seg_bytes(void)
{
	return mad_rmpp_seg_bytes(sizeof(struct ib_mad));
}

/*
 * A source whose transfers hold their share of the agent's memory is told
 * STOP for the segment that would go over it; what it held is given back,
 * and the agent's count of segments held returns to zero.
 */
static void mad_test_rmpp_recv_seg_budget(struct kunit *test)
{
	struct mad_test_env *env = mad_test_env(test);
	size_t saved = mad_rmpp_agent_max_bytes;
	int seg, stops;

	mad_test_rmpp_env(test, env, 16);
	/* A share of four buffers. */
	mad_rmpp_agent_max_bytes = 4 * MAD_RMPP_SRC_SHARE * mad_test_seg_bytes();
	env->rmpp_slid = 9;
	for (seg = 1; seg <= 6; seg++)
		mad_test_rmpp_seg(test, env, 0x750000000ULL, 10, seg);
	mad_rmpp_agent_max_bytes = saved;
	stops = mad_test_rmpp_count(env, 0, IB_MGMT_RMPP_TYPE_STOP);
	KUNIT_EXPECT_EQ(test, stops, 1);
	KUNIT_EXPECT_EQ(test, env->priv->rmpp_recvs, 0);
	KUNIT_EXPECT_EQ(test, env->priv->rmpp_segs, 0);
	KUNIT_EXPECT_EQ(test, env->priv->rmpp_bytes, 0);
	KUNIT_EXPECT_EQ(test, mad_test_stat(env, IB_MAD_STAT_RMPP_SRC_SEGS_PEAK),
			4);
	KUNIT_EXPECT_EQ(test, mad_test_stat(env, IB_MAD_STAT_RMPP_SEGS), 0);
	KUNIT_EXPECT_EQ(test, env->recvs_done, 0);
	mad_test_rmpp_drain(env, 0, env->posts);
	ib_mad_rmpp_cancel_recvs(env->priv);
}

/*
 * The agent's memory is full, each of eight sources holding its share (a
 * host with LMC or a GRH is two sources at most): a ninth source's first
 * segment is not refused, it takes the place of a transfer of a source
 * that holds the most, which is told STOP and gives its buffers back.
 * Before the budget was by memory with eviction, each source could pin
 * 349,525 buffers (171 MiB on IB) and nothing was ever stopped for a
 * newcomer's sake but stalled transfers at the transfer-count cap.
 */
static void mad_test_rmpp_recv_evict_largest(struct kunit *test)
{
	struct mad_test_env *env = mad_test_env(test);
	size_t saved = mad_rmpp_agent_max_bytes, cost = mad_test_seg_bytes();
	const struct ib_rmpp_mad *stop = NULL;
	int i, seg, held = 0;
	u64 tid;

	mad_test_rmpp_env(test, env, 64);
	/* A share of three buffers, eight shares in all. */
	mad_rmpp_agent_max_bytes = 3 * MAD_RMPP_SRC_SHARE * cost;
	for (i = 0; i < MAD_RMPP_SRC_SHARE; i++) {
		env->rmpp_slid = 0x10 + i;
		for (seg = 1; seg <= 3; seg++)
			mad_test_rmpp_seg(test, env, 0x7a0000000ULL + i, 10, seg);
	}
	KUNIT_ASSERT_EQ(test, mad_test_rmpp_count(env, 0, IB_MGMT_RMPP_TYPE_STOP),
			0);
	KUNIT_ASSERT_EQ(test, env->priv->rmpp_bytes, mad_rmpp_agent_max_bytes);
	held = env->posts;

	env->rmpp_slid = 0x40;
	mad_test_rmpp_first(test, env, 0x7b0000000ULL, 10);
	mad_rmpp_agent_max_bytes = saved;
	KUNIT_EXPECT_EQ(test, mad_test_rmpp_count(env, held,
						  IB_MGMT_RMPP_TYPE_STOP), 1);
	KUNIT_EXPECT_EQ(test, mad_test_rmpp_count(env, held,
						  IB_MGMT_RMPP_TYPE_ACK), 1);
	for (i = held; i < env->posts; i++)
		if (mad_test_posted_rmpp(env, i)->rmpp_type ==
		    IB_MGMT_RMPP_TYPE_STOP)
			stop = env->posted[i]->send_buf.mad;
	KUNIT_ASSERT_NOT_NULL(test, stop);
	tid = be64_to_cpu(stop->mad_hdr.tid);
	KUNIT_EXPECT_GE(test, tid, 0x7a0000000ULL);
	KUNIT_EXPECT_LT(test, tid, 0x7a0000000ULL + MAD_RMPP_SRC_SHARE);
	KUNIT_EXPECT_EQ(test, stop->rmpp_hdr.rmpp_status,
			IB_MGMT_RMPP_STATUS_RESX);
	KUNIT_EXPECT_EQ(test, env->priv->rmpp_recvs, MAD_RMPP_SRC_SHARE);
	KUNIT_EXPECT_EQ(test, env->priv->rmpp_bytes,
			(3 * (MAD_RMPP_SRC_SHARE - 1) + 1) * cost);
	KUNIT_EXPECT_EQ(test, mad_test_stat(env, IB_MAD_STAT_RMPP_EVICTED), 1);
	mad_test_rmpp_drain(env, 0, env->posts);
	ib_mad_rmpp_cancel_recvs(env->priv);
	KUNIT_EXPECT_EQ(test, env->priv->rmpp_bytes, 0);
}

/*
 * A sender that missed our final ACK repeats its last segment: each repeat
 * is ACKed again on the transfer's own address handle, not on one made
 * and destroyed per repeat.
 */
static void mad_test_rmpp_recv_repeat_ah(struct kunit *test)
{
	struct mad_test_env *env = mad_test_env(test);
	int i;

	mad_test_rmpp_env(test, env, 8);
	mad_test_ahs_created = 0;
	mad_test_rmpp_first(test, env, 0x760000000ULL, 1);
	KUNIT_EXPECT_EQ(test, env->recvs_done, 1);
	for (i = 0; i < 5; i++)
		mad_test_rmpp_first(test, env, 0x760000000ULL, 1);
	KUNIT_EXPECT_EQ(test, env->recvs_done, 1);
	KUNIT_EXPECT_EQ(test, mad_test_rmpp_count(env, 0, IB_MGMT_RMPP_TYPE_ACK),
			6);
	KUNIT_EXPECT_EQ(test, mad_test_ahs_created, 1);
	mad_test_rmpp_drain(env, 0, env->posts);
	ib_mad_rmpp_cancel_recvs(env->priv);
}

/*
 * A finished transfer is remembered a few ACK waits, not for minutes: a
 * request retried with the same TID after that is a new transfer.
 */
static void mad_test_rmpp_recv_linger(struct kunit *test)
{
	struct mad_test_env *env = mad_test_env(test);
	unsigned int linger_ms = MAD_RMPP_LINGER_TRIES *
				 (MAD_RMPP_ACK_WAIT_MAX_MS + 1);

	mad_test_rmpp_env(test, env, 4);
	mad_test_rmpp_first(test, env, 0x800000001ULL, 1);
	KUNIT_EXPECT_EQ(test, env->recvs_done, 1);
	/* A repeat at once is the sender missing our ACK: ACKed again. */
	mad_test_rmpp_first(test, env, 0x800000001ULL, 1);
	KUNIT_EXPECT_EQ(test, env->recvs_done, 1);
	KUNIT_ASSERT_EQ(test, env->posts, 2);
	mad_test_rmpp_drain(env, 0, 2);

	msleep(linger_ms + 500);
	flush_workqueue(env->port->wq);
	mad_test_rmpp_first(test, env, 0x800000001ULL, 1);
	KUNIT_EXPECT_EQ(test, env->recvs_done, 2);
	mad_test_rmpp_drain(env, 2, env->posts);
	ib_mad_rmpp_cancel_recvs(env->priv);
}

/* Sleep until jiffies reach @when (at once if they have). */
static void mad_test_sleep_until(unsigned long when)
{
	unsigned long now = jiffies;

	if (time_before(now, when))
		msleep(jiffies_to_msecs(when - now));
}

/*
 * A send posted by a worker rather than the test thread bypasses the
 * test's ib_mad_qp_post_send() stub and, the fake send queue having no
 * room, waits on the overflow list.  Take the first one off it, as the
 * QP would, so that the test can read it and complete it.
 */
static struct ib_mad_send_wr_private *
mad_test_take_overflow(struct mad_test_env *env)
{
	struct ib_mad_qp_info *qp1 = &env->port->qp_info[1];
	struct ib_mad_send_wr_private *wr;
	unsigned long flags;

	spin_lock_irqsave(&qp1->send_queue.lock, flags);
	wr = list_first_entry_or_null(&qp1->overflow_list,
				      struct ib_mad_send_wr_private,
				      mad_list.list);
	if (wr) {
		list_del_init(&wr->mad_list.list);
		qp1->send_queue.count--;
	}
	spin_unlock_irqrestore(&qp1->send_queue.lock, flags);
	return wr;
}

/*
 * A transfer ends at its total deadline however busy its sender keeps it:
 * a repeated first segment is ACKed again, yet the timer still fires at
 * the deadline and tells the sender ABORT, "total time too long".  The
 * deadline is shortened to 1 s, the repeat comes at 0.4 s and the check
 * at 1.4 s, margins a busy TCG machine keeps; the silence allowed is 40 s
 * or more.
 */
static void mad_test_rmpp_recv_total_time(struct kunit *test)
{
	struct mad_test_env *env = mad_test_env(test);
	unsigned int total_ms = mad_rmpp_total_max_ms;
	struct ib_mad_send_wr_private *wr;
	const struct ib_rmpp_hdr *hdr;

	mad_test_rmpp_env(test, env, 4);
	mad_rmpp_total_max_ms = 1000;
	mad_test_rmpp_first(test, env, 0x900000001ULL, 3);
	mad_rmpp_total_max_ms = total_ms;
	KUNIT_EXPECT_EQ(test, env->priv->rmpp_recvs, 1);
	msleep(400);
	mad_test_rmpp_first(test, env, 0x900000001ULL, 3);
	KUNIT_ASSERT_EQ(test, env->posts, 2);
	mad_test_rmpp_drain(env, 0, 2);
	KUNIT_EXPECT_EQ(test, env->priv->rmpp_recvs, 1);

	msleep(1000);
	flush_workqueue(env->port->wq);
	KUNIT_EXPECT_EQ(test, env->priv->rmpp_recvs, 0);
	wr = mad_test_take_overflow(env);
	KUNIT_ASSERT_NOT_NULL(test, wr);
	KUNIT_EXPECT_NULL(test, mad_test_take_overflow(env));
	hdr = &((struct ib_rmpp_mad *)wr->send_buf.mad)->rmpp_hdr;
	KUNIT_EXPECT_EQ(test, hdr->rmpp_type, IB_MGMT_RMPP_TYPE_ABORT);
	KUNIT_EXPECT_EQ(test, hdr->rmpp_status, IB_MGMT_RMPP_STATUS_T2L);
	mad_test_wire_done(&wr->send_buf, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, env->recvs_done, 0);
	ib_mad_rmpp_cancel_recvs(env->priv);
}

/*
 * Each segment that makes progress gives a transfer the whole allowed
 * silence again, though the timer is not reprogrammed per segment: the
 * one queued for segment 1 fires at 2 s, finds the time moved on by
 * segment 2 (at 1.2 s) and waits the rest; the transfer is alive at
 * 2.5 s and told ABORT, "total time too long", once 2 s pass after
 * segment 2 (checked at 3.9 s).  Margins of 0.7 s, as a busy TCG
 * machine needs.
 */
static void mad_test_rmpp_recv_silence(struct kunit *test)
{
	struct mad_test_env *env = mad_test_env(test);
	const u64 tid = 0xa00000001ULL;
	struct ib_mad_send_wr_private *wr;
	const struct ib_rmpp_hdr *hdr;
	unsigned long t0;

	mad_test_rmpp_env(test, env, 4);
	mad_rmpp_recv_wait_ms = 2000;
	t0 = jiffies;
	mad_test_rmpp_first(test, env, tid, 3);
	mad_rmpp_recv_wait_ms = 0;
	KUNIT_ASSERT_EQ(test, env->posts, 1);		/* the first ACK */
	msleep(1200);
	mad_test_rmpp_seg(test, env, tid, 3, 2);	/* ACKed, as 1 was */
	KUNIT_ASSERT_EQ(test, env->posts, 2);

	mad_test_sleep_until(t0 + msecs_to_jiffies(2500));
	KUNIT_EXPECT_EQ(test, env->priv->rmpp_recvs, 1);
	KUNIT_EXPECT_NULL(test, mad_test_take_overflow(env));

	mad_test_sleep_until(t0 + msecs_to_jiffies(3900));
	flush_workqueue(env->port->wq);
	KUNIT_EXPECT_EQ(test, env->priv->rmpp_recvs, 0);
	wr = mad_test_take_overflow(env);
	KUNIT_ASSERT_NOT_NULL(test, wr);
	hdr = &((struct ib_rmpp_mad *)wr->send_buf.mad)->rmpp_hdr;
	KUNIT_EXPECT_EQ(test, hdr->rmpp_type, IB_MGMT_RMPP_TYPE_ABORT);
	KUNIT_EXPECT_EQ(test, hdr->rmpp_status, IB_MGMT_RMPP_STATUS_T2L);
	mad_test_wire_done(&wr->send_buf, IB_WC_SUCCESS);
	mad_test_rmpp_drain(env, 0, env->posts);
	KUNIT_EXPECT_EQ(test, env->recvs_done, 0);
	ib_mad_rmpp_cancel_recvs(env->priv);
}

/* Directed-route SMPs through the receive entry point --------------------- */

#define MAD_TEST_MKEY	0x0123456789abcdefULL

/*
 * Hand @recv to ib_mad_recv_done() as the CQ would: a completion on QP0
 * of the fake port, whose receive ring is empty and has no room to refill.
 */
static void mad_test_recv_qp0(struct mad_test_env *env,
			      struct ib_mad_recv_priv *recv, u32 byte_len)
{
	struct ib_mad_qp_info *qp0 = &env->port->qp_info[0];
	struct ib_wc wc = {
		.wr_cqe = &recv->mad_list.cqe,
		.status = IB_WC_SUCCESS,
		.opcode = IB_WC_RECV,
		.byte_len = byte_len,
		.qp = &env->qp0,
		.port_num = 1,
	};

	env->qp0.pd = &env->pd;
	env->qp0.device = env->dev;
	env->qp0.qp_num = 0;
	qp0->qp = &env->qp0;
	spin_lock_init(&qp0->recv_queue.lock);
	INIT_LIST_HEAD(&qp0->recv_queue.list);
	qp0->recv_queue.qp_info = qp0;
	recv->mad_list.mad_queue = &qp0->recv_queue;
	recv->mad_list.cqe.done = ib_mad_recv_done;
	list_add_tail(&recv->mad_list.list, &qp0->recv_queue.list);
	qp0->recv_queue.count = 1;
	ib_mad_recv_done(NULL, &wc);
}

/*
 * An IB and an OPA directed-route SMP whose hop pointer is past the end of
 * their path arrive: the receive rules drop and count them. The headers
 * carry values that show in the ib_mad_handle_ib_smi and
 * ib_mad_handle_opa_smi trace events (tests/mad-trace.sh reads them).
 */
static void mad_test_recv_dr_smp_dropped(struct kunit *test)
{
	struct mad_test_env *env = mad_test_env(test);
	struct ib_mad_recv_priv *recv;
	struct opa_smp *osmp;
	struct ib_smp *smp;

	recv = ib_mad_recv_priv_alloc(sizeof(struct ib_mad), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, recv);
	smp = (struct ib_smp *)recv->mad;
	smp->base_version = IB_MGMT_BASE_VERSION;
	smp->mgmt_class = IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE;
	smp->class_version = 1;
	smp->method = IB_MGMT_METHOD_GET;
	smp->mkey = cpu_to_be64(MAD_TEST_MKEY);
	smp->dr_slid = IB_LID_PERMISSIVE;
	smp->dr_dlid = cpu_to_be16(0x42);
	smp->hop_cnt = 5;
	smp->hop_ptr = 9;
	smp->initial_path[1] = 3;
	mad_test_recv_qp0(env, recv, sizeof(struct ib_grh) + sizeof(*smp));
	KUNIT_EXPECT_EQ(test, atomic64_read(&env->port->stats[IB_MAD_STAT_RECV]), 1);
	KUNIT_EXPECT_EQ(test,
			atomic64_read(&env->port->stats[IB_MAD_STAT_DROP_SMI]), 1);
	KUNIT_EXPECT_EQ(test, env->port->qp_info[0].recv_queue.count, 0);

	env->port_data[1].immutable.core_cap_flags = RDMA_CORE_CAP_OPA_MAD;
	recv = ib_mad_recv_priv_alloc(sizeof(struct opa_mad), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, recv);
	osmp = (struct opa_smp *)recv->mad;
	osmp->base_version = OPA_MGMT_BASE_VERSION;
	osmp->mgmt_class = IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE;
	osmp->class_version = OPA_SM_CLASS_VERSION;
	osmp->method = IB_MGMT_METHOD_GET;
	osmp->mkey = cpu_to_be64(MAD_TEST_MKEY);
	osmp->route.dr.dr_slid = OPA_LID_PERMISSIVE;
	osmp->route.dr.dr_dlid = cpu_to_be32(0x42);
	osmp->hop_cnt = 5;
	osmp->hop_ptr = 9;
	osmp->route.dr.initial_path[1] = 3;
	mad_test_recv_qp0(env, recv, sizeof(struct ib_grh) + 256);
	KUNIT_EXPECT_EQ(test, atomic64_read(&env->port->stats[IB_MAD_STAT_RECV]), 2);
	KUNIT_EXPECT_EQ(test,
			atomic64_read(&env->port->stats[IB_MAD_STAT_DROP_SMI]), 2);
	KUNIT_EXPECT_EQ(test, env->recvs_done, 0);
}

/* A received IB SMP of @mgmt_class and @method, the rest zero. */
static struct ib_smp *mad_test_recv_smp(struct kunit *test,
					struct ib_mad_recv_priv **recv,
					u8 mgmt_class, u8 method)
{
	struct ib_smp *smp;

	*recv = ib_mad_recv_priv_alloc(sizeof(struct ib_mad), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, *recv);
	smp = (struct ib_smp *)(*recv)->mad;
	smp->base_version = IB_MGMT_BASE_VERSION;
	smp->mgmt_class = mgmt_class;
	smp->class_version = 1;
	smp->method = method;
	return smp;
}

/*
 * A switch relays an outbound directed-route SMP whose hop pointer is inside
 * its path: counted as relayed, not as dropped, and not delivered here.
 * One whose next port does not exist is dropped.
 */
static void mad_test_recv_dr_smp_relayed(struct kunit *test)
{
	struct mad_test_env *env = mad_test_env(test);
	struct ib_mad_recv_priv *recv;
	struct ib_smp *smp;
	int i;

	env->dev->is_switch = true;
	env->dev->phys_port_cnt = 4;
	for (i = 0; i < 2; i++) {
		smp = mad_test_recv_smp(test, &recv,
					IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE,
					IB_MGMT_METHOD_GET);
		smp->dr_slid = IB_LID_PERMISSIVE;
		smp->dr_dlid = IB_LID_PERMISSIVE;
		smp->hop_cnt = 3;
		smp->hop_ptr = 1;
		/* Out of port 2, then a port this switch does not have. */
		smp->initial_path[2] = i ? 7 : 2;
		mad_test_recv_qp0(env, recv,
				  sizeof(struct ib_grh) + sizeof(*smp));
	}
	KUNIT_EXPECT_EQ(test, atomic64_read(&env->port->stats[IB_MAD_STAT_RECV]), 2);
	KUNIT_EXPECT_EQ(test,
			atomic64_read(&env->port->stats[IB_MAD_STAT_SMI_RELAYED]), 1);
	KUNIT_EXPECT_EQ(test,
			atomic64_read(&env->port->stats[IB_MAD_STAT_DROP_SMI]), 1);
	KUNIT_EXPECT_EQ(test, env->recvs_done, 0);
}

/*
 * An OPA directed-route SMP leaves through the wire, not the local SMA
 * (the fake device has no process_mad()); its header shows in the
 * ib_mad_handle_out_opa_smi trace event.
 */
static void mad_test_send_opa_dr_smp(struct kunit *test)
{
	struct mad_test_env *env = mad_test_env(test);
	struct ib_mad_send_buf *buf;
	struct opa_smp *smp;

	env->port_data[1].immutable.core_cap_flags = RDMA_CORE_CAP_OPA_MAD;
	env->port_data[1].immutable.max_mad_size = OPA_MGMT_MAD_SIZE;
	buf = ib_create_send_mad(&env->priv->agent, 0, 0, 0,
				 IB_MGMT_MAD_HDR, OPA_MGMT_MAD_DATA,
				 GFP_KERNEL, OPA_MGMT_BASE_VERSION);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, buf);
	smp = buf->mad;
	smp->base_version = OPA_MGMT_BASE_VERSION;
	smp->mgmt_class = IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE;
	smp->class_version = OPA_SM_CLASS_VERSION;
	smp->method = IB_MGMT_METHOD_GET;
	smp->tid = cpu_to_be64(15);
	smp->mkey = cpu_to_be64(MAD_TEST_MKEY);
	smp->route.dr.dr_slid = cpu_to_be32(0x1234);
	smp->route.dr.dr_dlid = cpu_to_be32(0x5678);
	KUNIT_ASSERT_EQ(test, ib_post_send_mad(buf, NULL), 0);
	KUNIT_EXPECT_EQ(test, env->posts, 1);
	mad_test_wire_done(buf, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, env->sends_done, 1);
	KUNIT_EXPECT_EQ(test, env->last_status, IB_WC_SUCCESS);
	ib_free_send_mad(buf);
}

/* The real send queue on a fake QP ---------------------------------------- */

/* The fake QP's post_send(): every work request is accepted. */
static int mad_test_qp_accept(struct ib_qp *qp, const struct ib_send_wr *wr,
			      const struct ib_send_wr **bad_wr)
{
	struct mad_test_env *env = kunit_get_current_test()->priv;

	env->posts++;
	return 0;
}

/* The fake QP's modify_qp(): the QP leaves SQE as asked. */
static int mad_test_qp_modify(struct ib_qp *qp, struct ib_qp_attr *attr,
			      int attr_mask, struct ib_udata *udata)
{
	return 0;
}

/* A send work request of @buf completes with @status, as the CQ reports. */
static void mad_test_cqe(struct ib_mad_send_buf *buf, enum ib_wc_status status)
{
	struct ib_mad_send_wr_private *wr = ib_mad_send_wr(buf);
	struct ib_wc wc = {
		.wr_cqe = &wr->mad_list.cqe,
		.status = status,
		.opcode = IB_WC_SEND,
	};

	wr->mad_list.cqe.done(NULL, &wc);
}

/*
 * ib_mad_qp_post_send() itself, on a QP with room for @depth work requests:
 * the fake device accepts what is posted, the test plays the CQ.
 */
static struct mad_test_env *mad_test_env_qp(struct kunit *test, int depth)
{
	struct mad_test_env *env = mad_test_env(test);
	struct ib_mad_qp_info *qp1 = &env->port->qp_info[1];

	kunit_deactivate_static_stub(test, ib_mad_qp_post_send);
	env->dev->ops.post_send = mad_test_qp_accept;
	env->dev->ops.modify_qp = mad_test_qp_modify;
	env->qp.real_qp = &env->qp;
	qp1->qp = &env->qp;
	qp1->send_queue.qp_info = qp1;
	qp1->send_queue.max_active = depth;
	return env;
}

/*
 * A send beyond the QP's depth waits on the overflow list and is posted
 * when the one before it completes (ib_mad_send_done_resend).
 */
static void mad_test_qp_overflow(struct kunit *test)
{
	struct mad_test_env *env = mad_test_env_qp(test, 1);
	struct ib_mad_send_buf *a = mad_test_send(test, env, 20, 0, 0);
	struct ib_mad_send_buf *b = mad_test_send(test, env, 21, 0, 0);
	struct ib_mad_qp_info *qp1 = &env->port->qp_info[1];

	KUNIT_ASSERT_EQ(test, ib_post_send_mad(a, NULL), 0);
	KUNIT_ASSERT_EQ(test, ib_post_send_mad(b, NULL), 0);
	KUNIT_EXPECT_EQ(test, env->posts, 1);
	KUNIT_EXPECT_FALSE(test, list_empty(&qp1->overflow_list));
	mad_test_cqe(a, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, env->posts, 2);
	KUNIT_EXPECT_TRUE(test, list_empty(&qp1->overflow_list));
	KUNIT_EXPECT_EQ(test, env->sends_done, 1);
	mad_test_cqe(b, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, env->sends_done, 2);
	KUNIT_EXPECT_EQ(test, qp1->send_queue.count, 0);
	ib_free_send_mad(a);
	ib_free_send_mad(b);
}

/*
 * A send error: the QP is brought back to RTS and the request behind the
 * failed one, flushed meanwhile, is posted again (ib_mad_error_handler).
 */
static void mad_test_qp_send_error(struct kunit *test)
{
	struct mad_test_env *env = mad_test_env_qp(test, 2);
	struct ib_mad_send_buf *a = mad_test_send(test, env, 22, 0, 0);
	struct ib_mad_send_buf *b = mad_test_send(test, env, 23, 0, 0);

	KUNIT_ASSERT_EQ(test, ib_post_send_mad(a, NULL), 0);
	KUNIT_ASSERT_EQ(test, ib_post_send_mad(b, NULL), 0);
	KUNIT_EXPECT_EQ(test, env->posts, 2);
	mad_test_cqe(a, IB_WC_GENERAL_ERR);
	KUNIT_EXPECT_EQ(test, env->sends_done, 1);
	KUNIT_EXPECT_EQ(test, env->last_status, IB_WC_GENERAL_ERR);
	/* b was flushed by the error: posted again, not completed. */
	mad_test_cqe(b, IB_WC_WR_FLUSH_ERR);
	KUNIT_EXPECT_EQ(test, env->posts, 3);
	KUNIT_EXPECT_EQ(test, env->sends_done, 1);
	mad_test_cqe(b, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, env->sends_done, 2);
	KUNIT_EXPECT_EQ(test, env->last_status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test,
			atomic64_read(&env->port->stats[IB_MAD_STAT_SEND_ERR]), 1);
	ib_free_send_mad(a);
	ib_free_send_mad(b);
}

/* The fake QP's post_send() when env->post_ret is set: it refuses once. */
static int mad_test_qp_refuse_once(struct ib_qp *qp,
				   const struct ib_send_wr *wr,
				   const struct ib_send_wr **bad_wr)
{
	struct mad_test_env *env = kunit_get_current_test()->priv;
	int ret = env->post_ret;

	env->post_ret = 0;
	if (!ret)
		env->posts++;
	return ret;
}

/*
 * A send taken off the overflow list that the QP refuses completes with
 * IB_WC_LOC_QP_OP_ERR, after the send whose completion freed the slot,
 * and the slot goes on to the next send waiting.
 */
static void mad_test_qp_overflow_refused(struct kunit *test)
{
	struct mad_test_env *env = mad_test_env_qp(test, 1);
	struct ib_mad_send_buf *a = mad_test_send(test, env, 24, 0, 0);
	struct ib_mad_send_buf *b = mad_test_send(test, env, 25, 0, 0);
	struct ib_mad_send_buf *c = mad_test_send(test, env, 26, 0, 0);
	struct ib_mad_qp_info *qp1 = &env->port->qp_info[1];

	env->dev->ops.post_send = mad_test_qp_refuse_once;
	KUNIT_ASSERT_EQ(test, ib_post_send_mad(a, NULL), 0);
	KUNIT_ASSERT_EQ(test, ib_post_send_mad(b, NULL), 0);
	KUNIT_ASSERT_EQ(test, ib_post_send_mad(c, NULL), 0);
	KUNIT_EXPECT_EQ(test, env->posts, 1);
	KUNIT_EXPECT_EQ(test, qp1->send_queue.count, 3);

	env->post_ret = -ENOMEM;
	mad_test_cqe(a, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, env->sends_done, 2);
	KUNIT_EXPECT_EQ(test, env->last_status, IB_WC_LOC_QP_OP_ERR);
	KUNIT_EXPECT_EQ(test, mad_test_state(b), IB_MAD_SEND_DONE);
	KUNIT_EXPECT_EQ(test, env->posts, 2);
	KUNIT_EXPECT_TRUE(test, list_empty(&qp1->overflow_list));
	KUNIT_EXPECT_EQ(test, qp1->send_queue.count, 1);
	KUNIT_EXPECT_PTR_EQ(test, list_first_entry(&qp1->send_queue.list,
						   struct ib_mad_send_wr_private,
						   mad_list.list),
			    ib_mad_send_wr(c));

	mad_test_cqe(c, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, env->sends_done, 3);
	KUNIT_EXPECT_EQ(test, env->last_status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, qp1->send_queue.count, 0);
	ib_free_send_mad(a);
	ib_free_send_mad(b);
	ib_free_send_mad(c);
}

/*
 * The fake QP's post_send() that notes a post made with the send queue
 * lock held or interrupts off (in env->posts_locked).
 */
static int mad_test_qp_post_ctx(struct ib_qp *qp, const struct ib_send_wr *wr,
				const struct ib_send_wr **bad_wr)
{
	struct mad_test_env *env = kunit_get_current_test()->priv;
	spinlock_t *lock = &env->port->qp_info[1].send_queue.lock;

	if (irqs_disabled() || !spin_trylock(lock))
		env->posts_locked++;
	else
		spin_unlock(lock);
	env->posts++;
	return 0;
}

/*
 * A new send takes its slot under the send queue lock and is posted after
 * it: the driver's post holds up neither completions nor other senders,
 * and runs with interrupts on.
 */
static void mad_test_qp_post_unlocked(struct kunit *test)
{
	struct mad_test_env *env = mad_test_env_qp(test, 2);
	struct ib_mad_send_buf *a = mad_test_send(test, env, 33, 0, 0);

	env->dev->ops.post_send = mad_test_qp_post_ctx;
	KUNIT_ASSERT_EQ(test, ib_post_send_mad(a, NULL), 0);
	KUNIT_EXPECT_EQ(test, env->posts, 1);
	KUNIT_EXPECT_EQ(test, env->posts_locked, 0);
	KUNIT_EXPECT_EQ(test, env->port->qp_info[1].send_queue.count, 1);
	mad_test_cqe(a, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, env->sends_done, 1);
	KUNIT_EXPECT_EQ(test, env->port->qp_info[1].send_queue.count, 0);
	ib_free_send_mad(a);
}

/*
 * The fake QP's post_send() for a refused post: with env->hook_buf set it
 * first posts that buffer, as another CPU would while the driver posts,
 * then refuses the request it was given; otherwise it refuses once with
 * env->post_ret, or accepts.
 */
static int mad_test_qp_nested(struct ib_qp *qp, const struct ib_send_wr *wr,
			      const struct ib_send_wr **bad_wr)
{
	struct kunit *test = kunit_get_current_test();
	struct mad_test_env *env = test->priv;
	struct ib_mad_send_buf *other = env->hook_buf;
	int ret = env->post_ret;

	if (other) {
		env->hook_buf = NULL;
		KUNIT_EXPECT_EQ(test, ib_post_send_mad(other, NULL), 0);
		*bad_wr = wr;
		return -ENOMEM;
	}
	env->post_ret = 0;
	if (ret) {
		*bad_wr = wr;
		return ret;
	}
	env->posts++;
	return 0;
}

/*
 * A post the QP refuses gives its slot back: to the send that came to
 * wait meanwhile, which is posted; when the QP refuses that one too, it
 * completes with IB_WC_LOC_QP_OP_ERR from the QP's refused work (the
 * refused post's caller may hold an agent lock). The refused send goes
 * back to its caller, uncompleted.
 */
static void mad_test_qp_post_refused_slot(struct kunit *test)
{
	struct mad_test_env *env = mad_test_env_qp(test, 1);
	struct ib_mad_qp_info *qp1 = &env->port->qp_info[1];
	struct ib_mad_send_buf *buf[3];	/* refused, then the two waiting */
	int i;

	for (i = 0; i < ARRAY_SIZE(buf); i++)
		buf[i] = mad_test_send(test, env, 34 + i, 0, 0);
	env->dev->ops.post_send = mad_test_qp_nested;

	/* The second comes while the first is posted: it takes the slot. */
	env->hook_buf = buf[1];
	KUNIT_EXPECT_EQ(test, ib_post_send_mad(buf[0], NULL), -ENOMEM);
	KUNIT_EXPECT_EQ(test, env->posts, 1);
	KUNIT_EXPECT_TRUE(test, list_empty(&qp1->overflow_list));
	KUNIT_EXPECT_EQ(test, qp1->send_queue.count, 1);
	KUNIT_EXPECT_EQ(test, env->sends_done, 0);
	mad_test_cqe(buf[1], IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, env->sends_done, 1);
	KUNIT_EXPECT_EQ(test, qp1->send_queue.count, 0);

	/* The third comes the same way, and the QP refuses it as well. */
	env->hook_buf = buf[2];
	env->post_ret = -EIO;
	KUNIT_EXPECT_EQ(test, ib_post_send_mad(buf[0], NULL), -ENOMEM);
	flush_workqueue(env->port->wq);
	KUNIT_EXPECT_EQ(test, env->posts, 1);
	KUNIT_EXPECT_EQ(test, env->sends_done, 2);
	KUNIT_EXPECT_EQ(test, env->last_status, IB_WC_LOC_QP_OP_ERR);
	KUNIT_EXPECT_EQ(test, mad_test_state(buf[2]), IB_MAD_SEND_DONE);
	KUNIT_EXPECT_EQ(test, qp1->send_queue.count, 0);
	KUNIT_EXPECT_TRUE(test, list_empty(&qp1->overflow_list));
	KUNIT_EXPECT_TRUE(test, list_empty(&qp1->refused_list));
	for (i = 0; i < ARRAY_SIZE(buf); i++)
		ib_free_send_mad(buf[i]);
}

/* The fake QP's modify_qp(): the QP stays in SQE. */
static int mad_test_qp_modify_fail(struct ib_qp *qp, struct ib_qp_attr *attr,
				   int attr_mask, struct ib_udata *udata)
{
	return -EIO;
}

/*
 * Flushes that are final: one after a recovery that failed (the QP stayed
 * in SQE), and a second flush of a request already posted again. Both
 * complete the send with IB_WC_WR_FLUSH_ERR.
 */
static void mad_test_qp_flush_final(struct kunit *test)
{
	struct mad_test_env *env = mad_test_env_qp(test, 2);
	struct ib_mad_send_buf *a = mad_test_send(test, env, 27, 0, 0);
	struct ib_mad_send_buf *b = mad_test_send(test, env, 28, 0, 0);
	struct ib_mad_send_buf *c = mad_test_send(test, env, 29, 0, 0);

	KUNIT_ASSERT_EQ(test, ib_post_send_mad(a, NULL), 0);
	KUNIT_ASSERT_EQ(test, ib_post_send_mad(b, NULL), 0);
	/* A recovery that fails: b's flush is final. */
	env->dev->ops.modify_qp = mad_test_qp_modify_fail;
	mad_test_cqe(a, IB_WC_REM_ABORT_ERR);
	KUNIT_EXPECT_EQ(test, env->last_status, IB_WC_REM_ABORT_ERR);
	mad_test_cqe(b, IB_WC_WR_FLUSH_ERR);
	KUNIT_EXPECT_EQ(test, env->posts, 2);
	KUNIT_EXPECT_EQ(test, env->sends_done, 2);
	KUNIT_EXPECT_EQ(test, env->last_status, IB_WC_WR_FLUSH_ERR);

	/* A recovery that works: c goes out again once, not twice. */
	env->dev->ops.modify_qp = mad_test_qp_modify;
	KUNIT_ASSERT_EQ(test, ib_post_send_mad(c, NULL), 0);
	KUNIT_EXPECT_EQ(test, env->posts, 3);
	ib_mad_send_wr(c)->repost_on_flush = true;
	mad_test_cqe(c, IB_WC_WR_FLUSH_ERR);
	KUNIT_EXPECT_EQ(test, env->posts, 4);
	KUNIT_EXPECT_EQ(test, env->sends_done, 2);
	mad_test_cqe(c, IB_WC_WR_FLUSH_ERR);
	KUNIT_EXPECT_EQ(test, env->posts, 4);
	KUNIT_EXPECT_EQ(test, env->sends_done, 3);
	KUNIT_EXPECT_EQ(test, env->last_status, IB_WC_WR_FLUSH_ERR);
	KUNIT_EXPECT_EQ(test,
			atomic64_read(&env->port->stats[IB_MAD_STAT_SEND_ERR]), 3);
	KUNIT_EXPECT_EQ(test, env->port->qp_info[1].send_queue.count, 0);
	ib_free_send_mad(a);
	ib_free_send_mad(b);
	ib_free_send_mad(c);
}

/* Local SMPs ------------------------------------------------------------- */

/* The completions the fake SMA and the sender's receive handler saw. */
static struct ib_wc mad_test_sma_wc;
static struct ib_wc mad_test_answer_wc;

/* The fake device's process_mad(): an SMA that answers every SMP. */
static int mad_test_sma(struct ib_device *device, int process_mad_flags,
			u32 port_num, const struct ib_wc *in_wc,
			const struct ib_grh *in_grh,
			const struct ib_mad *in_mad, struct ib_mad *out_mad,
			size_t *out_mad_size, u16 *out_mad_pkey_index)
{
	mad_test_sma_wc = *in_wc;
	*out_mad = *in_mad;
	out_mad->mad_hdr.method = IB_MGMT_METHOD_GET_RESP;
	return IB_MAD_RESULT_SUCCESS | IB_MAD_RESULT_REPLY;
}

static void mad_test_answer_handler(struct ib_mad_agent *agent,
				    struct ib_mad_send_buf *send_buf,
				    struct ib_mad_recv_wc *recv_wc)
{
	mad_test_answer_wc = *recv_wc->wc;
	mad_test_recv_handler(agent, send_buf, recv_wc);
}

static void mad_test_expect_smp_wc(struct kunit *test, const struct ib_wc *wc,
				   struct ib_mad_send_buf *buf,
				   struct mad_test_env *env, u16 slid)
{
	KUNIT_EXPECT_PTR_EQ(test, wc->wr_cqe, &ib_mad_send_wr(buf)->mad_list.cqe);
	KUNIT_EXPECT_EQ(test, wc->status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc->opcode, IB_WC_RECV);
	KUNIT_EXPECT_EQ(test, wc->vendor_err, 0);
	KUNIT_EXPECT_EQ(test, wc->byte_len,
			sizeof(struct ib_grh) + sizeof(struct ib_mad));
	KUNIT_EXPECT_PTR_EQ(test, wc->qp, &env->qp);
	KUNIT_EXPECT_EQ(test, wc->src_qp, IB_QP0);
	KUNIT_EXPECT_EQ(test, wc->wc_flags, 0);
	KUNIT_EXPECT_EQ(test, wc->pkey_index, 3);
	KUNIT_EXPECT_EQ(test, wc->slid, slid);
	KUNIT_EXPECT_EQ(test, wc->sl, 0);
	KUNIT_EXPECT_EQ(test, wc->dlid_path_bits, 0);
	KUNIT_EXPECT_EQ(test, wc->port_num, 1);
	KUNIT_EXPECT_EQ(test, wc->network_hdr_type, 0);
}

/*
 * A directed-route SMP at the end of its outbound path is answered by the
 * local SMA: process_mad() sees it as received on QP0 from the DR SLID,
 * and the answer reaches the sender from the permissive LID.
 */
static void mad_test_local_smp_wc(struct kunit *test)
{
	struct mad_test_env *env = mad_test_env(test);
	struct ib_mad_send_buf *buf;
	struct ib_smp *smp;

	env->port_data[1].immutable.max_mad_size = IB_MGMT_MAD_SIZE;
	env->dev->ops.process_mad = mad_test_sma;
	env->priv->agent.recv_handler = mad_test_answer_handler;
	memset(&mad_test_sma_wc, 0xa5, sizeof(mad_test_sma_wc));
	memset(&mad_test_answer_wc, 0xa5, sizeof(mad_test_answer_wc));
	buf = ib_create_send_mad(&env->priv->agent, 0, 3, 0, IB_MGMT_MAD_HDR,
				 IB_MGMT_MAD_DATA, GFP_KERNEL,
				 IB_MGMT_BASE_VERSION);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, buf);
	smp = buf->mad;
	smp->base_version = IB_MGMT_BASE_VERSION;
	smp->mgmt_class = IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE;
	smp->class_version = 1;
	smp->method = IB_MGMT_METHOD_GET;
	smp->tid = cpu_to_be64(30);
	smp->dr_slid = cpu_to_be16(0x12);
	smp->dr_dlid = cpu_to_be16(0x34);
	smp->hop_cnt = 0;
	smp->hop_ptr = 1;
	KUNIT_ASSERT_EQ(test, ib_post_send_mad(buf, NULL), 0);
	flush_workqueue(env->port->wq);
	KUNIT_EXPECT_EQ(test, env->posts, 0);
	KUNIT_EXPECT_EQ(test, env->recvs_done, 1);
	KUNIT_EXPECT_PTR_EQ(test, env->recv_send_buf, buf);
	KUNIT_EXPECT_EQ(test, env->sends_done, 1);
	KUNIT_EXPECT_EQ(test, env->last_status, IB_WC_SUCCESS);
	mad_test_expect_smp_wc(test, &mad_test_sma_wc, buf, env, 0x12);
	mad_test_expect_smp_wc(test, &mad_test_answer_wc, buf, env,
			       be16_to_cpu(IB_LID_PERMISSIVE));
	ib_free_send_mad(buf);
}

/* The fake device's process_mad(): a driver whose firmware command fails. */
static int mad_test_sma_fails(struct ib_device *device, int process_mad_flags,
			      u32 port_num, const struct ib_wc *in_wc,
			      const struct ib_grh *in_grh,
			      const struct ib_mad *in_mad,
			      struct ib_mad *out_mad, size_t *out_mad_size,
			      u16 *out_mad_pkey_index)
{
	return IB_MAD_RESULT_FAILURE;
}

/*
 * The driver fails a directed-route SMP for the local SMA: a request (one
 * with a timeout) completes at once with IB_WC_RESP_TIMEOUT_ERR, the
 * failure ib_umad reports to user space, so that opensm's transaction
 * ends; a send that expects no answer with IB_WC_GENERAL_ERR. Before, both
 * got IB_WC_GENERAL_ERR, which ib_umad drops: opensm waited for ever.
 */
static void mad_test_local_smp_failed(struct kunit *test)
{
	struct mad_test_env *env = mad_test_env(test);
	static const int timeouts[] = { 5000, 0 };
	static const enum ib_wc_status want[] = {
		IB_WC_RESP_TIMEOUT_ERR, IB_WC_GENERAL_ERR,
	};
	struct ib_mad_send_buf *buf;
	struct ib_smp *smp;
	int i;

	env->port_data[1].immutable.max_mad_size = IB_MGMT_MAD_SIZE;
	env->dev->ops.process_mad = mad_test_sma_fails;
	for (i = 0; i < ARRAY_SIZE(timeouts); i++) {
		buf = mad_test_send(test, env, 50 + i, timeouts[i], 1);
		smp = buf->mad;
		smp->dr_slid = cpu_to_be16(0x12);
		smp->dr_dlid = cpu_to_be16(0x34);
		smp->hop_cnt = 0;
		smp->hop_ptr = 1;
		KUNIT_ASSERT_EQ(test, ib_post_send_mad(buf, NULL), 0);
		flush_workqueue(env->port->wq);
		KUNIT_EXPECT_EQ(test, env->posts, 0);
		KUNIT_EXPECT_EQ(test, env->sends_done, i + 1);
		KUNIT_EXPECT_EQ(test, env->last_status, want[i]);
		KUNIT_EXPECT_EQ(test, env->recvs_done, 0);
		ib_free_send_mad(buf);
	}
}

/*
 * An RMPP send's segments: one for an empty message, numbered from 1,
 * the header marked as the first DATA segment of an active transfer.
 */
static void mad_test_rmpp_segment_list(struct kunit *test)
{
	struct mad_test_env *env = mad_test_env(test);
	struct ib_mad_send_wr_private *wr;
	struct ib_rmpp_segment *seg;
	struct ib_mad_send_buf *buf;
	struct ib_rmpp_hdr *hdr;
	int num = 0;

	env->priv->agent.rmpp_version = IB_MGMT_RMPP_VERSION;
	buf = ib_create_send_mad(&env->priv->agent, 1, 0, 1, IB_MGMT_SA_HDR,
				 0, GFP_KERNEL, IB_MGMT_BASE_VERSION);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, buf);
	KUNIT_EXPECT_EQ(test, buf->seg_count, 1);
	KUNIT_EXPECT_EQ(test, ib_mad_send_wr(buf)->pad, 200);
	ib_free_send_mad(buf);

	/* 600 bytes: exactly three segments, no pad. */
	buf = ib_create_send_mad(&env->priv->agent, 1, 0, 1, IB_MGMT_SA_HDR,
				 600, GFP_KERNEL, IB_MGMT_BASE_VERSION);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, buf);
	wr = ib_mad_send_wr(buf);
	KUNIT_EXPECT_EQ(test, buf->seg_count, 3);
	KUNIT_EXPECT_EQ(test, wr->pad, 0);
	list_for_each_entry(seg, &wr->rmpp_list, list)
		KUNIT_EXPECT_EQ(test, seg->num, ++num);
	KUNIT_EXPECT_EQ(test, num, 3);
	seg = list_first_entry(&wr->rmpp_list, struct ib_rmpp_segment, list);
	KUNIT_EXPECT_PTR_EQ(test, wr->cur_seg, seg);
	KUNIT_EXPECT_PTR_EQ(test, wr->last_ack_seg, seg);
	hdr = &((struct ib_rmpp_mad *)buf->mad)->rmpp_hdr;
	KUNIT_EXPECT_EQ(test, hdr->rmpp_version, IB_MGMT_RMPP_VERSION);
	KUNIT_EXPECT_EQ(test, hdr->rmpp_type, IB_MGMT_RMPP_TYPE_DATA);
	KUNIT_EXPECT_EQ(test, hdr->rmpp_rtime_flags, IB_MGMT_RMPP_FLAG_ACTIVE);
	KUNIT_EXPECT_EQ(test, hdr->rmpp_status, 0);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(hdr->seg_num), 0);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(hdr->paylen_newwin), 0);
	ib_free_send_mad(buf);
}

/* Flow control ----------------------------------------------------------- */

struct mad_test_fc_case {
	const char *name;
	u8 mgmt_class;
	u8 method;
	__be16 attr_id;
	bool limited;
};

static const struct mad_test_fc_case mad_test_fc_cases[] = {
	{ "SA Get", IB_MGMT_CLASS_SUBN_ADM, IB_MGMT_METHOD_GET, 0, true },
	{ "SA GetTable", IB_MGMT_CLASS_SUBN_ADM, IB_SA_METHOD_GET_TABLE, 0,
	  true },
	{ "SA GetResp", IB_MGMT_CLASS_SUBN_ADM, IB_MGMT_METHOD_GET_RESP, 0,
	  false },
	{ "SMP Get", IB_MGMT_CLASS_SUBN_LID_ROUTED, IB_MGMT_METHOD_GET, 0,
	  true },
	{ "DR SMP Set", IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE, IB_MGMT_METHOD_SET,
	  0, true },
	{ "SMP TrapRepress", IB_MGMT_CLASS_SUBN_LID_ROUTED,
	  IB_MGMT_METHOD_TRAP_REPRESS, 0, false },
	{ "CM REQ", IB_MGMT_CLASS_CM, IB_MGMT_METHOD_SEND, CM_REQ_ATTR_ID,
	  true },
	{ "CM DREQ", IB_MGMT_CLASS_CM, IB_MGMT_METHOD_SEND, CM_DREQ_ATTR_ID,
	  true },
	{ "CM SIDR REQ", IB_MGMT_CLASS_CM, IB_MGMT_METHOD_SEND,
	  CM_SIDR_REQ_ATTR_ID, true },
	{ "CM LAP", IB_MGMT_CLASS_CM, IB_MGMT_METHOD_SEND, CM_LAP_ATTR_ID,
	  true },
	{ "CM REP", IB_MGMT_CLASS_CM, IB_MGMT_METHOD_SEND, CM_REP_ATTR_ID,
	  false },
	{ "CM MRA", IB_MGMT_CLASS_CM, IB_MGMT_METHOD_SEND, CM_MRA_ATTR_ID,
	  false },
	{ "CM DREP", IB_MGMT_CLASS_CM, IB_MGMT_METHOD_SEND, CM_DREP_ATTR_ID,
	  false },
	{ "DM Get", IB_MGMT_CLASS_DEVICE_MGMT, IB_MGMT_METHOD_GET, 0, false },
	{ "PerfMgt Get", IB_MGMT_CLASS_PERF_MGMT, IB_MGMT_METHOD_GET, 0,
	  false },
};

KUNIT_ARRAY_PARAM_DESC(mad_test_fc, mad_test_fc_cases, name);

/* Which MADs open an exchange that flow control limits. */
static void mad_test_fc_request(struct kunit *test)
{
	const struct mad_test_fc_case *c = test->param_value;
	struct ib_mad_hdr hdr = {
		.base_version = IB_MGMT_BASE_VERSION,
		.mgmt_class = c->mgmt_class,
		.class_version = 1,
		.method = c->method,
		.attr_id = c->attr_id,
	};

	KUNIT_EXPECT_EQ(test, ib_mad_fc_request(&hdr), c->limited);
}

/*
 * With two slots, the third and fourth requests wait on the backlog,
 * accepted and unsent; a response frees a slot for the oldest of them; a
 * send that needs no slot passes them; a cancel takes one off the backlog.
 */
static void mad_test_fc_backlog(struct kunit *test)
{
	struct mad_test_env *env = mad_test_env(test);
	struct ib_mad_send_buf *bufs[4], *plain;
	int i;

	env->priv->fc_max = 2;
	for (i = 0; i < ARRAY_SIZE(bufs); i++) {
		bufs[i] = mad_test_send(test, env, 0x40 + i, 5000, 0);
		KUNIT_ASSERT_EQ(test, ib_post_send_mad(bufs[i], NULL), 0);
	}
	KUNIT_EXPECT_EQ(test, env->posts, 2);
	KUNIT_EXPECT_EQ(test, mad_test_state(bufs[1]), IB_MAD_SEND_ON_WIRE);
	KUNIT_EXPECT_EQ(test, mad_test_state(bufs[2]), IB_MAD_SEND_QUEUED);
	KUNIT_EXPECT_EQ(test, mad_test_state(bufs[3]), IB_MAD_SEND_QUEUED);
	KUNIT_EXPECT_EQ(test, mad_test_stat(env, IB_MAD_STAT_FC_QUEUED), 2);
	KUNIT_EXPECT_EQ(test, mad_test_stat(env, IB_MAD_STAT_FC_BACKLOG), 2);

	/* No response expected: not flow-controlled, straight to the wire. */
	plain = mad_test_send(test, env, 0x50, 0, 0);
	KUNIT_ASSERT_EQ(test, ib_post_send_mad(plain, NULL), 0);
	KUNIT_EXPECT_EQ(test, env->posts, 3);
	mad_test_wire_done(plain, IB_WC_SUCCESS);

	/* A response to the first request: the oldest waiting one goes. */
	mad_test_wire_done(bufs[0], IB_WC_SUCCESS);
	mad_test_respond(test, env, 0x40, IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE);
	KUNIT_EXPECT_EQ(test, mad_test_state(bufs[0]), IB_MAD_SEND_DONE);
	KUNIT_EXPECT_EQ(test, env->posts, 4);
	KUNIT_EXPECT_EQ(test, mad_test_state(bufs[2]), IB_MAD_SEND_ON_WIRE);
	KUNIT_EXPECT_EQ(test, mad_test_state(bufs[3]), IB_MAD_SEND_QUEUED);
	KUNIT_EXPECT_EQ(test, mad_test_stat(env, IB_MAD_STAT_FC_BACKLOG), 1);

	/* A response cannot match a request that was never sent. */
	mad_test_respond(test, env, 0x43, IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE);
	KUNIT_EXPECT_EQ(test, mad_test_state(bufs[3]), IB_MAD_SEND_QUEUED);

	/* Cancelled on the backlog: completes from the work, never sent. */
	KUNIT_EXPECT_EQ(test, ib_modify_mad(bufs[3], 0), 0);
	flush_delayed_work(&env->priv->timed_work);
	KUNIT_EXPECT_EQ(test, mad_test_state(bufs[3]), IB_MAD_SEND_DONE);
	KUNIT_EXPECT_EQ(test, env->last_status, IB_WC_WR_FLUSH_ERR);
	KUNIT_EXPECT_EQ(test, env->posts, 4);
	KUNIT_EXPECT_EQ(test, mad_test_stat(env, IB_MAD_STAT_FC_BACKLOG), 0);
	KUNIT_EXPECT_EQ(test, env->priv->fc_active, 2);

	/* Cancelling the two on the wire frees both slots. */
	KUNIT_EXPECT_EQ(test, ib_modify_mad(bufs[1], 0), 0);
	KUNIT_EXPECT_EQ(test, ib_modify_mad(bufs[2], 0), 0);
	KUNIT_EXPECT_EQ(test, env->priv->fc_active, 0);
	mad_test_wire_done(bufs[1], IB_WC_SUCCESS);
	mad_test_wire_done(bufs[2], IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, env->sends_done, 5);
	for (i = 0; i < ARRAY_SIZE(bufs); i++)
		ib_free_send_mad(bufs[i]);
	ib_free_send_mad(plain);
}

/*
 * A request whose whole deadline (timeout_ms for each try) passes on the
 * backlog completes with a timeout, unsent, and counts as dropped; one
 * whose timeout ib_modify_mad() extends keeps waiting.
 */
static void mad_test_fc_backlog_deadline(struct kunit *test)
{
	struct mad_test_env *env = mad_test_env(test);
	struct ib_mad_send_buf *busy, *late, *kept;
	unsigned long flags;

	env->priv->fc_max = 1;
	busy = mad_test_send(test, env, 0x60, 10000, 0);
	late = mad_test_send(test, env, 0x61, 10, 1);
	kept = mad_test_send(test, env, 0x62, 10, 1);
	KUNIT_ASSERT_EQ(test, ib_post_send_mad(busy, NULL), 0);
	KUNIT_ASSERT_EQ(test, ib_post_send_mad(late, NULL), 0);
	KUNIT_ASSERT_EQ(test, ib_post_send_mad(kept, NULL), 0);
	KUNIT_EXPECT_EQ(test, ib_modify_mad(kept, 10000), 0);
	mad_test_wait_timeout(env);
	KUNIT_EXPECT_EQ(test, env->sends_done, 1);
	KUNIT_EXPECT_EQ(test, mad_test_state(late), IB_MAD_SEND_DONE);
	KUNIT_EXPECT_EQ(test, env->last_status, IB_WC_RESP_TIMEOUT_ERR);
	KUNIT_EXPECT_EQ(test, late->retries, 0);
	KUNIT_EXPECT_EQ(test, mad_test_state(kept), IB_MAD_SEND_QUEUED);
	KUNIT_EXPECT_EQ(test, env->posts, 1);
	KUNIT_EXPECT_EQ(test, mad_test_stat(env, IB_MAD_STAT_FC_DROPPED), 1);

	/* Unregistration cancels the backlog without sending it. */
	spin_lock_irqsave(&env->priv->lock, flags);
	env->priv->dying = true;
	spin_unlock_irqrestore(&env->priv->lock, flags);
	ib_mad_agent_flush_sends(env->priv);
	KUNIT_EXPECT_EQ(test, mad_test_state(kept), IB_MAD_SEND_DONE);
	KUNIT_EXPECT_EQ(test, env->posts, 1);
	mad_test_wire_done(busy, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, env->sends_done, 3);
	KUNIT_EXPECT_EQ(test, mad_test_stat(env, IB_MAD_STAT_FC_BACKLOG), 0);
	ib_free_send_mad(busy);
	ib_free_send_mad(late);
	ib_free_send_mad(kept);
}

/*
 * The wait after each try of a flow-controlled request doubles with the
 * retries used, up to 2^IB_MAD_FC_BACKOFF_MAX times, and never reaches
 * past the request's total deadline; other sends wait their timeout.
 */
static void mad_test_fc_backoff(struct kunit *test)
{
	struct mad_test_env *env = mad_test_env(test);
	struct ib_mad_send_buf *buf = mad_test_send(test, env, 0x70, 100, 0);
	struct ib_mad_send_wr_private *wr = ib_mad_send_wr(buf);
	unsigned int ms;
	struct ib_mad_fc_dest dest = {
		.backlog = LIST_HEAD_INIT(dest.backlog),
	};

	wr->fc = true;
	wr->fc_dest = &dest;
	wr->deadline = jiffies + msecs_to_jiffies(100000);
	env->priv->fc_max = 4;
	KUNIT_EXPECT_EQ(test, ib_mad_send_resp_wait_ms(wr), 100);
	KUNIT_EXPECT_EQ(test, mad_test_stat(env, IB_MAD_STAT_FC_BACKOFF), 0);

	/* A destination with slots to spare is not overloaded: no backoff. */
	buf->retries = 3;
	dest.active = 2;
	KUNIT_EXPECT_EQ(test, ib_mad_send_resp_wait_ms(wr), 100);
	KUNIT_EXPECT_EQ(test, mad_test_stat(env, IB_MAD_STAT_FC_BACKOFF), 0);

	/* Three quarters of the slots in use: overload, back off. */
	dest.active = 3;
	buf->retries = 1;
	KUNIT_EXPECT_EQ(test, ib_mad_send_resp_wait_ms(wr), 200);
	buf->retries = 3;
	KUNIT_EXPECT_EQ(test, ib_mad_send_resp_wait_ms(wr), 800);
	buf->retries = 20;
	KUNIT_EXPECT_EQ(test, ib_mad_send_resp_wait_ms(wr),
			100 << IB_MAD_FC_BACKOFF_MAX);
	KUNIT_EXPECT_EQ(test, mad_test_stat(env, IB_MAD_STAT_FC_BACKOFF), 3);

	/* Capped by what is left of the deadline, never below the timeout. */
	wr->deadline = jiffies + msecs_to_jiffies(300);
	buf->retries = 3;
	ms = ib_mad_send_resp_wait_ms(wr);
	KUNIT_EXPECT_LE(test, ms, 300);
	KUNIT_EXPECT_GT(test, ms, 200);
	/* Past the deadline: no wait at all, the try is over. */
	wr->deadline = jiffies - 1;
	KUNIT_EXPECT_EQ(test, ib_mad_send_resp_wait_ms(wr), 0);

	wr->fc = false;
	wr->deadline = jiffies + msecs_to_jiffies(100000);
	KUNIT_EXPECT_EQ(test, ib_mad_send_resp_wait_ms(wr), 100);
	buf->retries = 0;
	wr->fc_dest = NULL;
	ib_free_send_mad(buf);
}

/*
 * A flow-controlled request with @tid, to the same destination as every
 * request of mad_test_send() (the empty directed route), sent once and
 * timed out: its answer may still come, late.
 */
static void mad_test_send_timed_out(struct kunit *test,
				    struct mad_test_env *env, u64 tid)
{
	struct ib_mad_send_buf *buf = mad_test_send(test, env, tid, 20, 0);
	int done = env->sends_done;

	KUNIT_ASSERT_EQ(test, ib_post_send_mad(buf, NULL), 0);
	KUNIT_EXPECT_TRUE(test, ib_mad_send_wr(buf)->fc);
	mad_test_wire_done(buf, IB_WC_SUCCESS);
	/* 20 ms, doubled for each late level it may have reached. */
	msleep(20 << IB_MAD_FC_BACKOFF_MAX >> 2);
	mad_test_wait_timeout(env);
	KUNIT_EXPECT_EQ(test, env->sends_done, done + 1);
	KUNIT_EXPECT_EQ(test, env->last_status, IB_WC_RESP_TIMEOUT_ERR);
	ib_free_send_mad(buf);
}

/*
 * Responses that answer no request of ours that was late, forged with the
 * agent's TID high bits and the directed route of a real request, do not
 * make that route late: the destination of a late answer is the one our
 * request went to, and only a request that was retried or timed out can
 * have one, once. Before, seven forged GetResps raised the level of the
 * route they named (and the SM's retries on it stopped being sent in
 * time) for a minute.
 */
static void mad_test_fc_late_forged(struct kunit *test)
{
	struct mad_test_env *env = mad_test_env(test);
	struct ib_mad_send_buf *buf = mad_test_send(test, env, 0xa0, 100, 0);
	struct ib_mad_send_wr_private *wr = ib_mad_send_wr(buf);
	struct ib_mad_fc_dest dest = {
		.backlog = LIST_HEAD_INIT(dest.backlog),
	};
	int i;

	env->priv->fc_max = 4;
	wr->fc = true;
	wr->fc_dest = &dest;
	wr->fc_key = ib_mad_fc_key(buf->mad, NULL);
	wr->deadline = jiffies + msecs_to_jiffies(100000);
	for (i = 0; i < 7; i++) {
		mad_test_respond(test, env, 0xa1 + i,
				 IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE);
		msleep(IB_MAD_LATE_RAISE_MS + 10);
	}
	KUNIT_EXPECT_EQ(test, mad_test_stat(env, IB_MAD_STAT_UNMATCHED_RESP), 7);
	KUNIT_EXPECT_EQ(test, mad_test_stat(env, IB_MAD_STAT_FC_LATE), 0);
	KUNIT_EXPECT_EQ(test, ib_mad_send_resp_wait_ms(wr), 100);

	/* A request answered in time leaves nothing to answer late either. */
	mad_test_respond(test, env, 0xa0, IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE);
	KUNIT_EXPECT_EQ(test, mad_test_stat(env, IB_MAD_STAT_FC_LATE), 0);
	wr->fc = false;
	wr->fc_dest = NULL;
	ib_free_send_mad(buf);
}

/*
 * A destination whose answers come after their requests were retried
 * (responses that match nothing) makes every try to it wait twice as long
 * per late answer, at most one step per IB_MAD_LATE_RAISE_MS and never
 * past the deadline; an answer to a request sent once, in less than half
 * its wait, takes one step back.
 */
static void mad_test_fc_late(struct kunit *test)
{
	struct mad_test_env *env = mad_test_env(test);
	struct ib_mad_send_buf *buf = mad_test_send(test, env, 0x90, 100, 0);
	struct ib_mad_send_wr_private *wr = ib_mad_send_wr(buf);
	struct ib_mad_send_buf *req;
	struct ib_mad_fc_dest dest = {
		.backlog = LIST_HEAD_INIT(dest.backlog),
	};
	int done;
	long waits;

	env->priv->fc_max = 4;
	wr->fc = true;
	wr->fc_dest = &dest;
	wr->fc_key = ib_mad_fc_key(buf->mad, NULL);
	wr->deadline = jiffies + msecs_to_jiffies(100000);
	KUNIT_EXPECT_EQ(test, ib_mad_send_resp_wait_ms(wr), 100);

	/* A request to it times out; its answer comes after all. */
	mad_test_send_timed_out(test, env, 0x91);
	mad_test_respond(test, env, 0x91, IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE);
	KUNIT_EXPECT_EQ(test, mad_test_stat(env, IB_MAD_STAT_FC_LATE), 1);
	/* Another copy's answer counts as the same one. */
	mad_test_respond(test, env, 0x91, IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE);
	KUNIT_EXPECT_EQ(test, mad_test_stat(env, IB_MAD_STAT_FC_LATE), 1);
	/* The first try waits longer too, not only the retries. */
	KUNIT_EXPECT_EQ(test, ib_mad_send_resp_wait_ms(wr), 200);

	/* A later late answer: another request that timed out. */
	msleep(IB_MAD_LATE_RAISE_MS + 20);
	mad_test_send_timed_out(test, env, 0x93);
	mad_test_respond(test, env, 0x93, IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE);
	KUNIT_EXPECT_EQ(test, mad_test_stat(env, IB_MAD_STAT_UNMATCHED_RESP), 3);
	KUNIT_EXPECT_EQ(test, mad_test_stat(env, IB_MAD_STAT_FC_LATE), 2);
	KUNIT_EXPECT_EQ(test, ib_mad_send_resp_wait_ms(wr), 400);
	done = env->sends_done;

	/* Never past the deadline. */
	wr->deadline = jiffies + msecs_to_jiffies(300);
	KUNIT_EXPECT_LE(test, ib_mad_send_resp_wait_ms(wr), 300);
	KUNIT_EXPECT_GT(test, ib_mad_send_resp_wait_ms(wr), 200);
	wr->deadline = jiffies + msecs_to_jiffies(100000);

	/*
	 * A request to it, sent once and answered at once: its try waited
	 * 400 ms, and the answer in less than 200 takes the level down one.
	 */
	req = mad_test_send(test, env, 0x92, 100, 6);
	KUNIT_ASSERT_EQ(test, ib_post_send_mad(req, NULL), 0);
	KUNIT_EXPECT_TRUE(test, ib_mad_send_wr(req)->fc);
	mad_test_wire_done(req, IB_WC_SUCCESS);
	waits = (long)(ib_mad_send_wr(req)->timeout - jiffies);
	KUNIT_EXPECT_GT(test, waits, (long)msecs_to_jiffies(300));
	mad_test_respond(test, env, 0x92, IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE);
	KUNIT_EXPECT_EQ(test, env->sends_done, done + 1);
	KUNIT_EXPECT_EQ(test, env->last_status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, ib_mad_send_resp_wait_ms(wr), 200);

	/* Sends outside flow control wait their timeout whatever the level. */
	wr->fc = false;
	KUNIT_EXPECT_EQ(test, ib_mad_send_resp_wait_ms(wr), 100);
	wr->fc_dest = NULL;
	ib_free_send_mad(req);
	ib_free_send_mad(buf);
}

/* The network delivers an SA GET with @tid from LID @slid. */
static void mad_test_sa_get(struct kunit *test, struct mad_test_env *env,
			    u64 tid, u32 slid)
{
	mad_test_deliver_mad(test, env, tid, IB_MGMT_CLASS_SUBN_ADM, 2,
			     IB_MGMT_METHOD_GET, slid);
}

/* The test device's address handles all lead to LID 5. */
static int mad_test_query_ah(struct ib_ah *ah, struct rdma_ah_attr *attr)
{
	attr->type = RDMA_AH_ATTR_TYPE_IB;
	rdma_ah_set_dlid(attr, 5);
	return 0;
}

/*
 * An agent that serves SA requests drops a copy of a request it was given
 * and has not answered, for IB_MAD_DUP_HOLD_MS; copies from another
 * source or with another TID, and copies after the answer was posted or
 * after the hold time, are delivered.
 */
static void mad_test_sa_dup(struct kunit *test)
{
	struct mad_test_env *env = mad_test_env(test);
	struct ib_mad_reg_req req = { .mgmt_class = IB_MGMT_CLASS_SUBN_ADM };
	struct ib_ah ah = { .device = env->dev, .type = RDMA_AH_ATTR_TYPE_IB };
	struct ib_mad_send_buf *rsp;
	struct ib_mad_hdr *hdr;
	unsigned int i;

	/* Only an agent registered for SA requests gets the table. */
	KUNIT_EXPECT_NULL(test, ib_mad_dup_alloc(NULL));
	KUNIT_EXPECT_NULL(test, ib_mad_dup_alloc(&req));
	set_bit(IB_MGMT_METHOD_GET, req.method_mask);
	env->priv->dup = ib_mad_dup_alloc(&req);
	KUNIT_ASSERT_NOT_NULL(test, env->priv->dup);

	mad_test_sa_get(test, env, 1, 5);
	KUNIT_EXPECT_EQ(test, env->recvs_done, 1);
	mad_test_sa_get(test, env, 1, 5);
	KUNIT_EXPECT_EQ(test, env->recvs_done, 1);
	KUNIT_EXPECT_EQ(test, mad_test_stat(env, IB_MAD_STAT_DUP_DROPPED), 1);
	mad_test_sa_get(test, env, 1, 6);
	mad_test_sa_get(test, env, 2, 5);
	KUNIT_EXPECT_EQ(test, env->recvs_done, 3);

	/* The answer to TID 1 at LID 5 is posted: its next copy comes in. */
	env->dev->ops.query_ah = mad_test_query_ah;
	rsp = mad_test_send(test, env, 1, 0, 0);
	hdr = rsp->mad;
	hdr->mgmt_class = IB_MGMT_CLASS_SUBN_ADM;
	hdr->class_version = 2;
	hdr->method = IB_MGMT_METHOD_GET_RESP;
	rsp->ah = &ah;
	KUNIT_ASSERT_EQ(test, ib_post_send_mad(rsp, NULL), 0);
	mad_test_wire_done(rsp, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, env->sends_done, 1);
	mad_test_sa_get(test, env, 1, 5);
	KUNIT_EXPECT_EQ(test, env->recvs_done, 4);

	/* TID 2 is not answered: dropped, until the hold time is over. */
	mad_test_sa_get(test, env, 2, 5);
	KUNIT_EXPECT_EQ(test, env->recvs_done, 4);
	KUNIT_EXPECT_EQ(test, mad_test_stat(env, IB_MAD_STAT_DUP_DROPPED), 2);
	msleep(IB_MAD_DUP_HOLD_MS + 50);
	mad_test_sa_get(test, env, 2, 5);
	KUNIT_EXPECT_EQ(test, env->recvs_done, 5);

	/* Past IB_MAD_DUP_MAX unanswered, the oldest is forgotten. */
	for (i = 0; i <= IB_MAD_DUP_MAX; i++)
		mad_test_sa_get(test, env, 1000 + i, 7);
	KUNIT_EXPECT_EQ(test, env->recvs_done, 5 + IB_MAD_DUP_MAX + 1);
	mad_test_sa_get(test, env, 1000 + IB_MAD_DUP_MAX, 7);
	KUNIT_EXPECT_EQ(test, env->recvs_done, 5 + IB_MAD_DUP_MAX + 1);
	mad_test_sa_get(test, env, 1000, 7);
	KUNIT_EXPECT_EQ(test, env->recvs_done, 5 + IB_MAD_DUP_MAX + 2);

	ib_free_send_mad(rsp);
	ib_mad_dup_free(env->priv->dup);
	env->priv->dup = NULL;
}

/*
 * Post a flow-controlled request of 6 retries on an agent of @fc_max slots
 * and play the network until it completes: each transmission completes on
 * the wire, no response ever comes. It must time out, by its deadline
 * (give or take the work's own latency). Returns the buffer, for the
 * caller to check its tries and free.
 */
static struct ib_mad_send_buf *
mad_test_fc_unanswered(struct kunit *test, struct mad_test_env *env, u64 tid,
		       int timeout_ms, unsigned int fc_max)
{
	struct ib_mad_send_buf *buf = mad_test_send(test, env, tid,
						    timeout_ms, 6);
	unsigned long end;
	int tries = 1, i;

	env->priv->fc_max = fc_max;
	KUNIT_ASSERT_EQ(test, ib_post_send_mad(buf, NULL), 0);
	KUNIT_EXPECT_TRUE(test, ib_mad_send_wr(buf)->fc);
	end = ib_mad_send_wr(buf)->deadline;
	for (i = 0; i < 2000 && !env->sends_done; i++) {
		if (env->posts == tries) {
			mad_test_wire_done(buf, IB_WC_SUCCESS);
			tries++;
		}
		usleep_range(1000, 2000);
		flush_delayed_work(&env->priv->timed_work);
	}
	KUNIT_EXPECT_EQ(test, env->sends_done, 1);
	KUNIT_EXPECT_EQ(test, env->last_status, IB_WC_RESP_TIMEOUT_ERR);
	KUNIT_EXPECT_TRUE(test,
			  time_before(jiffies, end + msecs_to_jiffies(100)));
	return buf;
}

/*
 * On an overloaded agent (every slot taken) retries of a flow-controlled
 * request back off, so fewer of them fit in the deadline than the caller
 * allowed, and the last ends by the deadline.
 */
static void mad_test_fc_retries(struct kunit *test)
{
	struct mad_test_env *env = mad_test_env(test);
	struct ib_mad_send_buf *buf = mad_test_fc_unanswered(test, env, 0x71,
							     20, 1);

	KUNIT_EXPECT_LT(test, buf->retries, 6);
	KUNIT_EXPECT_GE(test, buf->retries, 1);
	KUNIT_EXPECT_GT(test, mad_test_stat(env, IB_MAD_STAT_FC_BACKOFF), 0);
	ib_free_send_mad(buf);
}

/* Post without the agent lock --------------------------------------------- */

/*
 * The first transmission of a plain send reaches the driver with the agent
 * lock dropped (a response matched on another CPU need not wait for it);
 * a retry, posted from the timed work, holds it.
 */
static void mad_test_send_post_unlocked(struct kunit *test)
{
	struct mad_test_env *env;
	struct ib_mad_send_buf *buf;

	mad_test_need_lockdep(test);
	env = mad_test_env(test);
	buf = mad_test_send(test, env, 0x60, 20, 1);

	KUNIT_ASSERT_EQ(test, ib_post_send_mad(buf, NULL), 0);
	KUNIT_EXPECT_EQ(test, env->posts, 1);
	KUNIT_EXPECT_EQ(test, env->posts_locked, 0);
	KUNIT_EXPECT_EQ(test, ib_mad_send_wr(buf)->wr_inflight, 1);
	KUNIT_EXPECT_EQ(test, mad_test_state(buf), IB_MAD_SEND_ON_WIRE);
	mad_test_wire_done(buf, IB_WC_SUCCESS);
	mad_test_wait_timeout(env);
	KUNIT_EXPECT_EQ(test, env->posts, 2);
	KUNIT_EXPECT_EQ(test, env->posts_locked, 1);
	mad_test_wire_done(buf, IB_WC_SUCCESS);
	mad_test_wait_timeout(env);
	KUNIT_EXPECT_EQ(test, env->sends_done, 1);
	KUNIT_EXPECT_EQ(test, env->last_status, IB_WC_RESP_TIMEOUT_ERR);
	ib_free_send_mad(buf);
}

/* Hooks: what another CPU does while the driver refuses the post. */
static void mad_test_hook_cancel(struct mad_test_env *env,
				 struct ib_mad_send_wr_private *wr)
{
	if (!mad_test_agent_locked(wr))
		KUNIT_EXPECT_EQ(env->test, ib_modify_mad(&wr->send_buf, 0), 0);
}

static void mad_test_hook_respond(struct mad_test_env *env,
				  struct ib_mad_send_wr_private *wr)
{
	if (!mad_test_agent_locked(wr))
		mad_test_respond(env->test, env, be64_to_cpu(wr->tid),
				 IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE);
}

static void mad_test_hook_post_other(struct mad_test_env *env,
				     struct ib_mad_send_wr_private *wr)
{
	if (!mad_test_agent_locked(wr))
		KUNIT_EXPECT_EQ(env->test,
				ib_post_send_mad(env->hook_buf, NULL), 0);
}

/*
 * The driver refuses a post nothing else touched: the send is taken back
 * (the caller gets the error and keeps the buffer, its flow-control slot
 * is free again) and can be posted again.
 */
static void mad_test_send_post_fail_untouched(struct kunit *test)
{
	struct mad_test_env *env = mad_test_env(test);
	struct ib_mad_send_buf *buf = mad_test_send(test, env, 0x61, 5000, 0);
	struct ib_mad_send_buf *bad = NULL;

	env->priv->fc_max = 1;
	env->post_ret = -ENOMEM;
	KUNIT_EXPECT_EQ(test, ib_post_send_mad(buf, &bad), -ENOMEM);
	KUNIT_EXPECT_PTR_EQ(test, bad, buf);
	KUNIT_EXPECT_EQ(test, mad_test_state(buf), IB_MAD_SEND_IDLE);
	KUNIT_EXPECT_EQ(test, ib_mad_send_wr(buf)->wr_inflight, 0);
	KUNIT_EXPECT_EQ(test, env->priv->fc_active, 0);
	KUNIT_EXPECT_EQ(test, mad_test_stat(env, IB_MAD_STAT_OUTSTANDING), 0);
	/* No longer in the TID hash: its response is unmatched. */
	mad_test_respond(test, env, 0x61, IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE);
	KUNIT_EXPECT_EQ(test, env->recvs_done, 0);

	env->post_ret = 0;
	KUNIT_ASSERT_EQ(test, ib_post_send_mad(buf, NULL), 0);
	KUNIT_EXPECT_EQ(test, env->priv->fc_active, 1);
	mad_test_wire_done(buf, IB_WC_SUCCESS);
	mad_test_respond(test, env, 0x61, IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE);
	KUNIT_EXPECT_EQ(test, env->sends_done, 1);
	KUNIT_EXPECT_EQ(test, env->last_status, IB_WC_SUCCESS);
	ib_free_send_mad(buf);
}

/*
 * The refused post held the only slot while another request was posted:
 * that one waited on the backlog and goes out when the slot comes back.
 */
static void mad_test_send_post_fail_backlog(struct kunit *test)
{
	struct mad_test_env *env;
	struct ib_mad_send_buf *a, *b;

	mad_test_need_lockdep(test);
	env = mad_test_env(test);
	a = mad_test_send(test, env, 0x62, 5000, 0);
	b = mad_test_send(test, env, 0x63, 5000, 0);

	env->priv->fc_max = 1;
	env->hook_buf = b;
	env->post_hook = mad_test_hook_post_other;
	env->post_ret = -ENOMEM;
	/* b's own post, from the backlog, is refused too: error status. */
	KUNIT_EXPECT_EQ(test, ib_post_send_mad(a, NULL), -ENOMEM);
	KUNIT_EXPECT_EQ(test, mad_test_state(a), IB_MAD_SEND_IDLE);
	flush_delayed_work(&env->priv->timed_work);
	KUNIT_EXPECT_EQ(test, env->sends_done, 1);
	KUNIT_EXPECT_EQ(test, env->last_status, IB_WC_GENERAL_ERR);
	KUNIT_EXPECT_EQ(test, mad_test_state(b), IB_MAD_SEND_DONE);
	KUNIT_EXPECT_EQ(test, env->posts_locked, 1);
	KUNIT_EXPECT_EQ(test, env->priv->fc_active, 0);

	/* Again, the QP now taking b from the backlog. */
	env->post_ret = 0;
	env->post_hook = mad_test_hook_post_other;
	KUNIT_ASSERT_EQ(test, ib_post_send_mad(a, NULL), 0);
	KUNIT_EXPECT_EQ(test, mad_test_state(b), IB_MAD_SEND_QUEUED);
	KUNIT_EXPECT_EQ(test, env->priv->fc_active, 1);
	KUNIT_EXPECT_EQ(test, ib_modify_mad(a, 0), 0);
	KUNIT_EXPECT_EQ(test, mad_test_state(b), IB_MAD_SEND_ON_WIRE);
	mad_test_wire_done(a, IB_WC_SUCCESS);
	mad_test_wire_done(b, IB_WC_SUCCESS);
	mad_test_respond(test, env, 0x63, IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE);
	KUNIT_EXPECT_EQ(test, env->sends_done, 3);
	KUNIT_EXPECT_EQ(test, env->last_status, IB_WC_SUCCESS);
	ib_free_send_mad(a);
	ib_free_send_mad(b);
}

/*
 * A cancel, or a response, found the send between the agent lock being
 * dropped and the driver refusing its post. The send was visible as
 * posted, so it is: ib_post_send_mad() returns 0 and the handler runs
 * once, from the timed work, with the cancel's or the response's status.
 */
static void mad_test_send_post_fail_raced(struct kunit *test)
{
	struct mad_test_env *env;
	struct ib_mad_send_buf *c, *r;

	mad_test_need_lockdep(test);
	env = mad_test_env(test);
	c = mad_test_send(test, env, 0x64, 5000, 0);
	r = mad_test_send(test, env, 0x65, 5000, 0);

	env->post_ret = -EIO;
	env->post_hook = mad_test_hook_cancel;
	KUNIT_EXPECT_EQ(test, ib_post_send_mad(c, NULL), 0);
	flush_delayed_work(&env->priv->timed_work);
	KUNIT_EXPECT_EQ(test, env->sends_done, 1);
	KUNIT_EXPECT_PTR_NE(test, env->send_task, current);
	KUNIT_EXPECT_EQ(test, env->last_status, IB_WC_WR_FLUSH_ERR);
	KUNIT_EXPECT_EQ(test, mad_test_state(c), IB_MAD_SEND_DONE);

	env->post_hook = mad_test_hook_respond;
	KUNIT_EXPECT_EQ(test, ib_post_send_mad(r, NULL), 0);
	KUNIT_EXPECT_EQ(test, env->recvs_done, 1);
	KUNIT_EXPECT_PTR_EQ(test, env->recv_send_buf, r);
	flush_delayed_work(&env->priv->timed_work);
	KUNIT_EXPECT_EQ(test, env->sends_done, 2);
	KUNIT_EXPECT_PTR_NE(test, env->send_task, current);
	KUNIT_EXPECT_EQ(test, env->last_status, IB_WC_SUCCESS);
	KUNIT_EXPECT_STREQ(test, env->order, "srs");
	KUNIT_EXPECT_EQ(test, mad_test_stat(env, IB_MAD_STAT_OUTSTANDING), 0);
	KUNIT_EXPECT_EQ(test, env->posts_locked, 0);
	flush_delayed_work(&env->priv->timed_work);
	KUNIT_EXPECT_EQ(test, env->sends_done, 2);
	ib_free_send_mad(c);
	ib_free_send_mad(r);
}

/* Defects of issue 34, each shown failing before its fix ----------------- */

/*
 * Without overload (slots to spare, no backlog) a flow-controlled request
 * gets every try its caller allowed: sa_query's ten tries of a tenth of
 * its timeout each are all sent, each waits one timeout, and the request
 * completes by its deadline.
 */
static void mad_test_fc_retries_idle(struct kunit *test)
{
	struct mad_test_env *env = mad_test_env(test);
	struct ib_mad_send_buf *buf = mad_test_fc_unanswered(test, env, 0x72,
							     40, 4);

	KUNIT_EXPECT_EQ(test, buf->retries, 6);
	KUNIT_EXPECT_EQ(test, env->posts, 7);
	KUNIT_EXPECT_EQ(test, mad_test_stat(env, IB_MAD_STAT_FC_BACKOFF), 0);
	ib_free_send_mad(buf);
}

/*
 * A request promoted from the backlog late waits for its response no
 * longer than its deadline allows. One whose first try no longer fits
 * when its slot frees is not sent at all and completes with a timeout:
 * a try needs a whole timeout left, or half the request's total time if
 * that is shorter. The time spent on the backlog is played by moving the
 * deadlines.
 */
static void mad_test_fc_deadline_clamp(struct kunit *test)
{
	struct mad_test_env *env = mad_test_env(test);
	struct ib_mad_send_buf *busy, *late, *later, *stale;
	struct ib_mad_send_wr_private *wr;

	env->priv->fc_max = 1;
	busy = mad_test_send(test, env, 0x80, 10000, 0);
	late = mad_test_send(test, env, 0x81, 1000, 0);
	later = mad_test_send(test, env, 0x82, 1000, 0);
	stale = mad_test_send(test, env, 0x83, 1000, 3);
	KUNIT_ASSERT_EQ(test, ib_post_send_mad(busy, NULL), 0);
	KUNIT_ASSERT_EQ(test, ib_post_send_mad(late, NULL), 0);
	KUNIT_ASSERT_EQ(test, ib_post_send_mad(later, NULL), 0);
	KUNIT_ASSERT_EQ(test, ib_post_send_mad(stale, NULL), 0);
	KUNIT_EXPECT_EQ(test, mad_test_state(late), IB_MAD_SEND_QUEUED);

	/*
	 * late: 0.2 s of its 1 s went by; later: 0.7 s of its 1 s; stale:
	 * 3.2 s of its 4 s, so less than its 1 s timeout is left.
	 */
	wr = ib_mad_send_wr(late);
	wr->deadline = jiffies + msecs_to_jiffies(800);
	ib_mad_send_wr(later)->deadline = jiffies + msecs_to_jiffies(300);
	ib_mad_send_wr(stale)->deadline = jiffies + msecs_to_jiffies(800);

	mad_test_wire_done(busy, IB_WC_SUCCESS);
	mad_test_respond(test, env, 0x80, IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE);
	KUNIT_EXPECT_EQ(test, env->posts, 2);
	KUNIT_EXPECT_EQ(test, mad_test_state(late), IB_MAD_SEND_ON_WIRE);
	mad_test_wire_done(late, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, mad_test_state(late), IB_MAD_SEND_WAIT_RESP);
	KUNIT_EXPECT_FALSE(test, time_after(wr->timeout, wr->deadline));

	/* Its answer frees the slot: later and stale have too little left. */
	mad_test_respond(test, env, 0x81, IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE);
	flush_delayed_work(&env->priv->timed_work);
	KUNIT_EXPECT_EQ(test, env->posts, 2);
	KUNIT_EXPECT_EQ(test, mad_test_state(later), IB_MAD_SEND_DONE);
	KUNIT_EXPECT_EQ(test, mad_test_state(stale), IB_MAD_SEND_DONE);
	/* Both timed out; late's success may be reported before or after. */
	KUNIT_EXPECT_EQ(test, env->timeouts, 2);
	KUNIT_EXPECT_EQ(test, mad_test_stat(env, IB_MAD_STAT_FC_DROPPED), 2);
	KUNIT_EXPECT_EQ(test, env->sends_done, 4);
	KUNIT_EXPECT_EQ(test, env->priv->fc_active, 0);
	ib_free_send_mad(busy);
	ib_free_send_mad(late);
	ib_free_send_mad(later);
	ib_free_send_mad(stale);
}

/*
 * The fake QP's post_recv(): the work requests of a chain are counted and
 * accepted, but for the recv_refuse_at-th of a call when it is set, which
 * is refused with those after it, as a full receive queue would.
 */
static int mad_test_qp_post_recv(struct ib_qp *qp, const struct ib_recv_wr *wr,
				 const struct ib_recv_wr **bad_wr)
{
	struct mad_test_env *env = kunit_get_current_test()->priv;
	int i;

	env->recv_post_calls++;
	for (i = 1; wr; wr = wr->next, i++) {
		if (i == env->recv_refuse_at) {
			*bad_wr = wr;
			return -ENOMEM;
		}
		env->recv_posts++;
	}
	return 0;
}

/* QP0 of the fake port with a receive ring of @depth buffers, posted. */
static void mad_test_recv_ring(struct mad_test_env *env, int depth)
{
	struct ib_mad_qp_info *qp0 = &env->port->qp_info[0];

	env->port_data[1].immutable.max_mad_size = IB_MGMT_MAD_SIZE;
	env->port->pd = &env->pd;
	env->dev->ops.post_recv = mad_test_qp_post_recv;
	env->qp0.pd = &env->pd;
	env->qp0.device = env->dev;
	env->qp0.qp_num = 0;
	qp0->qp = &env->qp0;
	spin_lock_init(&qp0->recv_queue.lock);
	INIT_LIST_HEAD(&qp0->recv_queue.list);
	qp0->recv_queue.qp_info = qp0;
	qp0->recv_queue.max_active = depth;
	ib_mad_recv_refill(qp0);
}

/* The oldest posted receive buffer of QP0 completes with @status. */
static void mad_test_recv_complete(struct mad_test_env *env,
				   enum ib_wc_status status)
{
	struct ib_mad_qp_info *qp0 = &env->port->qp_info[0];
	struct ib_mad_recv_priv *recv;
	struct ib_wc wc = {
		.status = status,
		.opcode = IB_WC_RECV,
		.qp = &env->qp0,
		.port_num = 1,
	};

	recv = list_first_entry(&qp0->recv_queue.list, struct ib_mad_recv_priv,
				mad_list.list);
	wc.wr_cqe = &recv->mad_list.cqe;
	ib_mad_recv_done(NULL, &wc);
}

/*
 * A QP in the error state flushes every receive buffer, and every buffer
 * posted to it is flushed at once: a flushed buffer is counted and not
 * replaced, so that the ring drains instead of spinning the CQ work for
 * ever. A receive that completes with any other error is replaced.
 */
static void mad_test_recv_flush_no_refill(struct kunit *test)
{
	struct mad_test_env *env = mad_test_env(test);
	struct ib_mad_qp_info *qp0 = &env->port->qp_info[0];
	int i;

	mad_test_recv_ring(env, 4);
	KUNIT_ASSERT_EQ(test, env->recv_posts, 4);
	KUNIT_ASSERT_EQ(test, qp0->recv_queue.count, 4);
	mad_test_recv_complete(env, IB_WC_LOC_LEN_ERR);
	KUNIT_EXPECT_EQ(test, env->recv_posts, 5);
	KUNIT_EXPECT_EQ(test, qp0->recv_queue.count, 4);

	/* The QP went to ERR: each buffer posted comes back flushed. */
	for (i = 0; i < 16 && qp0->recv_queue.count; i++)
		mad_test_recv_complete(env, IB_WC_WR_FLUSH_ERR);
	KUNIT_EXPECT_EQ(test, qp0->recv_queue.count, 0);
	KUNIT_EXPECT_EQ(test, env->recv_posts, 5);
	KUNIT_EXPECT_EQ(test, mad_test_stat(env, IB_MAD_STAT_RECV_FLUSHED), 4);
	KUNIT_EXPECT_EQ(test, mad_test_stat(env, IB_MAD_STAT_RECV), 0);
}

/*
 * Receive buffers are posted in batches: nothing until a batch is missing
 * from the ring (an eighth of a 64-buffer ring), then one call for all of
 * them. A refused request and those after it stay unposted and are freed
 * (KASAN and kmemleak watch that), the ring counts only what the QP took.
 */
static void mad_test_recv_batch_refill(struct kunit *test)
{
	struct mad_test_env *env = mad_test_env(test);
	struct ib_mad_qp_info *qp0 = &env->port->qp_info[0];
	int i;

	mad_test_recv_ring(env, 64);
	KUNIT_ASSERT_EQ(test, env->recv_post_calls, 1);
	KUNIT_ASSERT_EQ(test, env->recv_posts, 64);
	for (i = 0; i < 7; i++)
		mad_test_recv_complete(env, IB_WC_LOC_LEN_ERR);
	KUNIT_EXPECT_EQ(test, qp0->recv_queue.count, 57);
	KUNIT_EXPECT_EQ(test, env->recv_post_calls, 1);
	mad_test_recv_complete(env, IB_WC_LOC_LEN_ERR);
	KUNIT_EXPECT_EQ(test, qp0->recv_queue.count, 64);
	KUNIT_EXPECT_EQ(test, env->recv_post_calls, 2);
	KUNIT_EXPECT_EQ(test, env->recv_posts, 72);

	/* The third request of the next batch is refused. */
	env->recv_refuse_at = 3;
	for (i = 0; i < 8; i++)
		mad_test_recv_complete(env, IB_WC_LOC_LEN_ERR);
	KUNIT_EXPECT_EQ(test, env->recv_post_calls, 3);
	KUNIT_EXPECT_EQ(test, env->recv_posts, 74);
	KUNIT_EXPECT_EQ(test, qp0->recv_queue.count, 58);

	/* Refilled in full once a batch is missing again. */
	env->recv_refuse_at = 0;
	for (i = 0; i < 2; i++)
		mad_test_recv_complete(env, IB_WC_LOC_LEN_ERR);
	KUNIT_EXPECT_EQ(test, qp0->recv_queue.count, 64);
	KUNIT_EXPECT_EQ(test, env->recv_post_calls, 4);
	KUNIT_EXPECT_EQ(test, env->recv_posts, 82);
}

static int mad_test_process_mad_calls;

/* The fake driver's process_mad(): it consumes every MAD. */
static int mad_test_process_mad(struct ib_device *dev, int flags, u32 port,
				const struct ib_wc *wc, const struct ib_grh *grh,
				const struct ib_mad *in, struct ib_mad *out,
				size_t *out_size, u16 *out_pkey_index)
{
	mad_test_process_mad_calls++;
	return IB_MAD_RESULT_SUCCESS | IB_MAD_RESULT_CONSUMED;
}

/* ib_mad_recv_out_alloc() failing, as under memory pressure. */
static void *mad_test_out_alloc_fail(size_t size)
{
	return NULL;
}

/*
 * The driver sees every MAD first (mlx4 and mlx5 consume traps and answer
 * their own SMA's MADs there). When the buffer for its answer cannot be
 * had, the MAD is dropped and counted, not passed to the agents behind
 * the driver's back.
 */
static void mad_test_recv_driver_nomem(struct kunit *test)
{
	struct mad_test_env *env = mad_test_env(test);
	struct ib_mad_recv_priv *recv;
	struct ib_smp *smp;
	int i;

	env->dev->ops.process_mad = mad_test_process_mad;
	mad_test_process_mad_calls = 0;
	kunit_activate_static_stub(test, ib_mad_recv_out_alloc,
				   mad_test_out_alloc_fail);
	for (i = 0; i < 2; i++) {
		/* The second time with memory: the driver consumes it. */
		if (i == 1)
			kunit_deactivate_static_stub(test,
						     ib_mad_recv_out_alloc);
		smp = mad_test_recv_smp(test, &recv,
					IB_MGMT_CLASS_SUBN_LID_ROUTED,
					IB_MGMT_METHOD_TRAP);
		mad_test_recv_qp0(env, recv,
				  sizeof(struct ib_grh) + sizeof(*smp));
		KUNIT_EXPECT_EQ(test, mad_test_stat(env, IB_MAD_STAT_RECV),
				i + 1);
		KUNIT_EXPECT_EQ(test, mad_test_process_mad_calls, i);
		KUNIT_EXPECT_EQ(test,
				mad_test_stat(env, IB_MAD_STAT_DROP_NOMEM), 1);
		KUNIT_EXPECT_EQ(test,
				mad_test_stat(env, IB_MAD_STAT_DROP_NO_AGENT),
				0);
		KUNIT_EXPECT_EQ(test, env->recvs_done, 0);
	}
}

static struct ib_mad_port_private *mad_test_closing_port;

/*
 * The fake driver's process_mad() during which the port starts closing,
 * as ib_mad_port_close() does on another CPU while a firmware command
 * runs: the port is marked closing and its QPs are destroyed.
 */
static int mad_test_process_mad_close(struct ib_device *dev, int flags,
				      u32 port, const struct ib_wc *wc,
				      const struct ib_grh *grh,
				      const struct ib_mad *in, struct ib_mad *out,
				      size_t *out_size, u16 *out_pkey_index)
{
	struct ib_mad_port_private *p = mad_test_closing_port;

	mad_test_process_mad_calls++;
	WRITE_ONCE(p->closing, true);
	p->qp_info[0].qp = NULL;
	p->qp_info[1].qp = NULL;
	return IB_MAD_RESULT_SUCCESS;
}

/*
 * The port closes while the receive work is inside the driver's
 * process_mad(): the MAD goes no further (no agent lookup, no
 * "unsupported" answer through a QP that is gone) and the buffer is
 * counted as flushed. A completion that arrives once the port is closing
 * does not even reach the driver. Before the fix the work read
 * qp_info->qp->qp_num after process_mad() returned: a NULL dereference.
 */
static void mad_test_recv_port_closing(struct kunit *test)
{
	struct mad_test_env *env = mad_test_env(test);
	struct ib_mad_recv_priv *recv;
	struct ib_smp *smp;

	env->dev->ops.process_mad = mad_test_process_mad_close;
	mad_test_closing_port = env->port;
	mad_test_process_mad_calls = 0;
	smp = mad_test_recv_smp(test, &recv, IB_MGMT_CLASS_SUBN_LID_ROUTED,
				IB_MGMT_METHOD_GET);
	mad_test_recv_qp0(env, recv, sizeof(struct ib_grh) + sizeof(*smp));
	KUNIT_EXPECT_EQ(test, mad_test_process_mad_calls, 1);
	KUNIT_EXPECT_EQ(test, mad_test_stat(env, IB_MAD_STAT_RECV_FLUSHED), 1);
	KUNIT_EXPECT_EQ(test, mad_test_stat(env, IB_MAD_STAT_DROP_NO_AGENT), 0);
	KUNIT_EXPECT_EQ(test, mad_test_stat(env, IB_MAD_STAT_UNSUPPORTED), 0);

	/* The port is closing: the next completion stops at once. */
	smp = mad_test_recv_smp(test, &recv, IB_MGMT_CLASS_SUBN_LID_ROUTED,
				IB_MGMT_METHOD_GET);
	mad_test_recv_qp0(env, recv, sizeof(struct ib_grh) + sizeof(*smp));
	KUNIT_EXPECT_EQ(test, mad_test_process_mad_calls, 1);
	KUNIT_EXPECT_EQ(test, mad_test_stat(env, IB_MAD_STAT_RECV_FLUSHED), 2);
	KUNIT_EXPECT_EQ(test, env->recvs_done, 0);
}

/* A DR SMP request one hop out of port @port (a destination per port). */
static struct ib_mad_send_buf *mad_test_send_hop(struct kunit *test,
						 struct mad_test_env *env,
						 u64 tid, u8 port)
{
	struct ib_mad_send_buf *buf = mad_test_send(test, env, tid, 10000, 0);
	struct ib_smp *smp = buf->mad;

	smp->hop_cnt = 1;
	smp->initial_path[1] = port;
	return buf;
}

/*
 * Slots are per destination: requests to one responder that has all of
 * them (say 129 connections to a server that never accepts) do not hold
 * back a request to another.
 */
static void mad_test_fc_per_dest(struct kunit *test)
{
	struct mad_test_env *env = mad_test_env(test);
	struct ib_mad_send_buf *a[3], *b;
	int i;

	env->priv->fc_max = 2;
	for (i = 0; i < ARRAY_SIZE(a); i++) {
		a[i] = mad_test_send_hop(test, env, 0x90 + i, 1);
		KUNIT_ASSERT_EQ(test, ib_post_send_mad(a[i], NULL), 0);
	}
	KUNIT_EXPECT_EQ(test, env->posts, 2);
	KUNIT_EXPECT_EQ(test, mad_test_state(a[2]), IB_MAD_SEND_QUEUED);

	b = mad_test_send_hop(test, env, 0x98, 2);
	KUNIT_ASSERT_EQ(test, ib_post_send_mad(b, NULL), 0);
	KUNIT_EXPECT_EQ(test, mad_test_state(b), IB_MAD_SEND_ON_WIRE);
	KUNIT_EXPECT_EQ(test, env->posts, 3);

	/* An answer from the first destination frees a slot for its own. */
	mad_test_wire_done(a[0], IB_WC_SUCCESS);
	mad_test_respond(test, env, 0x90, IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE);
	KUNIT_EXPECT_EQ(test, mad_test_state(a[2]), IB_MAD_SEND_ON_WIRE);
	KUNIT_EXPECT_EQ(test, env->posts, 4);

	for (i = 1; i < ARRAY_SIZE(a); i++)
		KUNIT_EXPECT_EQ(test, ib_modify_mad(a[i], 0), 0);
	KUNIT_EXPECT_EQ(test, ib_modify_mad(b, 0), 0);
	for (i = 1; i < ARRAY_SIZE(a); i++)
		mad_test_wire_done(a[i], IB_WC_SUCCESS);
	mad_test_wire_done(b, IB_WC_SUCCESS);
	flush_delayed_work(&env->priv->timed_work);
	KUNIT_EXPECT_EQ(test, env->sends_done, 4);
	KUNIT_EXPECT_EQ(test, mad_test_stat(env, IB_MAD_STAT_FC_BACKLOG), 0);
	for (i = 0; i < ARRAY_SIZE(a); i++)
		ib_free_send_mad(a[i]);
	ib_free_send_mad(b);
}

/*
 * A request its responder acknowledged with an MRA (ib_modify_mad() with
 * a longer timeout) gives its slot to the next request: the responder
 * has it, it fills no place in the responder's receive queue. It still
 * waits for its answer.
 */
static void mad_test_fc_mra_frees_slot(struct kunit *test)
{
	struct mad_test_env *env = mad_test_env(test);
	struct ib_mad_send_buf *first, *next;

	env->priv->fc_max = 1;
	first = mad_test_send_hop(test, env, 0xa0, 1);
	next = mad_test_send_hop(test, env, 0xa1, 1);
	KUNIT_ASSERT_EQ(test, ib_post_send_mad(first, NULL), 0);
	KUNIT_ASSERT_EQ(test, ib_post_send_mad(next, NULL), 0);
	mad_test_wire_done(first, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, mad_test_state(next), IB_MAD_SEND_QUEUED);

	KUNIT_EXPECT_EQ(test, ib_modify_mad(first, 60000), 0);
	KUNIT_EXPECT_EQ(test, mad_test_state(next), IB_MAD_SEND_ON_WIRE);
	KUNIT_EXPECT_EQ(test, env->posts, 2);
	KUNIT_EXPECT_EQ(test, mad_test_state(first), IB_MAD_SEND_WAIT_RESP);

	mad_test_respond(test, env, 0xa0, IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE);
	KUNIT_EXPECT_EQ(test, mad_test_state(first), IB_MAD_SEND_DONE);
	KUNIT_EXPECT_EQ(test, ib_modify_mad(next, 0), 0);
	mad_test_wire_done(next, IB_WC_SUCCESS);
	flush_delayed_work(&env->priv->timed_work);
	KUNIT_EXPECT_EQ(test, env->sends_done, 2);
	KUNIT_EXPECT_EQ(test, env->priv->fc_active, 0);
	ib_free_send_mad(first);
	ib_free_send_mad(next);
}

/*
 * A port number the device does not have is refused with -ENODEV before
 * anything reads that port's data: the device here has one port, and the
 * zeroed data past it would otherwise say "no GSI" (-EPROTONOSUPPORT).
 */
static void mad_test_reg_bad_port(struct kunit *test)
{
	struct ib_device *dev;
	struct ib_mad_agent *agent;

	dev = kunit_kzalloc(test, sizeof(*dev), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, dev);
	dev->port_data = kunit_kcalloc(test, 4, sizeof(*dev->port_data),
				       GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, dev->port_data);
	dev->phys_port_cnt = 1;
	dev->port_data[1].immutable.core_cap_flags = RDMA_CORE_PORT_IBA_IB;
	agent = ib_register_mad_agent(dev, 2, IB_QPT_GSI, NULL, 0,
				      mad_test_send_handler, NULL, NULL, 0);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(agent), -ENODEV);
	agent = ib_register_mad_agent(dev, 0, IB_QPT_SMI, NULL, 0,
				      mad_test_send_handler, NULL, NULL, 0);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(agent), -ENODEV);
}

static struct kunit_case mad_core_test_cases[] = {
	KUNIT_CASE(mad_test_header_helpers),
	KUNIT_CASE_PARAM(mad_test_recv_validate, mad_test_validate_gen_params),
	KUNIT_CASE(mad_test_dr_outbound),
	KUNIT_CASE(mad_test_dr_returning),
	KUNIT_CASE(mad_test_dr_opa),
	KUNIT_CASE_PARAM(mad_test_reg_validate, mad_test_reg_gen_params),
	KUNIT_CASE(mad_test_reg_overlap),
	KUNIT_CASE(mad_test_reg_dr_alias),
	KUNIT_CASE(mad_test_reg_vendor_oui),
	KUNIT_CASE(mad_test_reg_publish_order),
	KUNIT_CASE(mad_test_agents_left_race),
	KUNIT_CASE(mad_test_send_no_response),
	KUNIT_CASE(mad_test_send_response),
	KUNIT_CASE(mad_test_send_early_response),
	KUNIT_CASE(mad_test_send_cancel_on_wire),
	KUNIT_CASE(mad_test_send_cancel_waiting),
	KUNIT_CASE(mad_test_send_retries),
	KUNIT_CASE(mad_test_send_only_timeout),
	KUNIT_CASE(mad_test_send_only_mra_rtu),
	KUNIT_CASE(mad_test_send_mass_timeout),
	KUNIT_CASE(mad_test_send_deadline_order),
	KUNIT_CASE(mad_test_send_modify),
	KUNIT_CASE(mad_test_send_error),
	KUNIT_CASE(mad_test_send_failed_post),
	KUNIT_CASE(mad_test_send_flush),
	KUNIT_CASE(mad_test_send_dying),
	KUNIT_CASE(mad_test_tid_hash),
	KUNIT_CASE(mad_test_rmpp_segments),
	KUNIT_CASE(mad_test_reply_agent_close),
	KUNIT_CASE(mad_test_rmpp_recv_cap),
	KUNIT_CASE_SLOW(mad_test_rmpp_recv_linger),
	KUNIT_CASE_SLOW(mad_test_rmpp_recv_total_time),
	KUNIT_CASE_SLOW(mad_test_rmpp_recv_silence),
	KUNIT_CASE(mad_test_roce_ipv4_gids),
	KUNIT_CASE(mad_test_recv_dr_smp_dropped),
	KUNIT_CASE(mad_test_recv_dr_smp_relayed),
	KUNIT_CASE(mad_test_send_opa_dr_smp),
	KUNIT_CASE(mad_test_qp_overflow),
	KUNIT_CASE(mad_test_qp_send_error),
	KUNIT_CASE(mad_test_qp_overflow_refused),
	KUNIT_CASE(mad_test_qp_post_unlocked),
	KUNIT_CASE(mad_test_qp_post_refused_slot),
	KUNIT_CASE(mad_test_qp_flush_final),
	KUNIT_CASE(mad_test_local_smp_wc),
	KUNIT_CASE(mad_test_local_smp_failed),
	KUNIT_CASE(mad_test_rmpp_segment_list),
	KUNIT_CASE_PARAM(mad_test_fc_request, mad_test_fc_gen_params),
	KUNIT_CASE(mad_test_fc_backlog),
	KUNIT_CASE(mad_test_fc_backlog_deadline),
	KUNIT_CASE(mad_test_fc_backoff),
	KUNIT_CASE(mad_test_fc_late),
	KUNIT_CASE(mad_test_fc_late_forged),
	KUNIT_CASE(mad_test_sa_dup),
	KUNIT_CASE(mad_test_fc_retries),
	KUNIT_CASE(mad_test_send_post_unlocked),
	KUNIT_CASE(mad_test_send_post_fail_untouched),
	KUNIT_CASE(mad_test_send_post_fail_backlog),
	KUNIT_CASE(mad_test_send_post_fail_raced),
	KUNIT_CASE(mad_test_fc_retries_idle),
	KUNIT_CASE(mad_test_fc_deadline_clamp),
	KUNIT_CASE(mad_test_recv_flush_no_refill),
	KUNIT_CASE(mad_test_recv_batch_refill),
	KUNIT_CASE(mad_test_recv_driver_nomem),
	KUNIT_CASE(mad_test_recv_port_closing),
	KUNIT_CASE(mad_test_reg_bad_port),
	KUNIT_CASE(mad_test_fc_per_dest),
	KUNIT_CASE(mad_test_fc_mra_frees_slot),
	KUNIT_CASE(mad_test_rmpp_recv_src_cap),
	KUNIT_CASE_SLOW(mad_test_rmpp_recv_evict_stalled),
	KUNIT_CASE(mad_test_rmpp_recv_done_bound),
	KUNIT_CASE(mad_test_rmpp_recv_seg_budget),
	KUNIT_CASE(mad_test_rmpp_recv_evict_largest),
	KUNIT_CASE(mad_test_rmpp_recv_repeat_ah),
	{}
};

static struct kunit_suite mad_core_test_suite = {
	.name = "ib_mad_core",
	.test_cases = mad_core_test_cases,
};

kunit_test_suite(mad_core_test_suite);

MODULE_DESCRIPTION("KUnit tests of the InfiniBand MAD core");
MODULE_LICENSE("Dual BSD/GPL");
