// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit tests for the inline helpers of <rdma/ib_mad.h> and the small
 * classification functions ib_core exports with them.
 *
 * The expected values are worked out from the wire layouts in the
 * InfiniBand Architecture Specification (RMPP header byte 2, ClassPortInfo
 * CapabilityMask2/RespTimeValue word, method bit 7), not from the code under
 * test, so the suite holds for any correct implementation of the header.
 */

#include <kunit/test.h>
#include <rdma/ib_mad.h>

/* RMPP header: RRespTime in bits 7..3 of byte 2, RMPPFlags in bits 2..0. */
static void mad_hdr_rmpp_rtime_flags_roundtrip(struct kunit *test)
{
	struct ib_rmpp_hdr hdr = {};
	unsigned int rtime, flags;

	for (rtime = 0; rtime < 32; rtime++) {
		for (flags = 0; flags < 8; flags++) {
			hdr.rmpp_rtime_flags = 0;
			ib_set_rmpp_resptime(&hdr, rtime);
			ib_set_rmpp_flags(&hdr, flags);
			KUNIT_EXPECT_EQ(test, hdr.rmpp_rtime_flags,
					(u8)(rtime << 3 | flags));
			KUNIT_EXPECT_EQ(test, ib_get_rmpp_resptime(&hdr), rtime);
			KUNIT_EXPECT_EQ(test, ib_get_rmpp_flags(&hdr), flags);

			/* The other order must give the same byte. */
			hdr.rmpp_rtime_flags = 0xff;
			ib_set_rmpp_flags(&hdr, flags);
			ib_set_rmpp_resptime(&hdr, rtime);
			KUNIT_EXPECT_EQ(test, hdr.rmpp_rtime_flags,
					(u8)(rtime << 3 | flags));
		}
	}
}

static void mad_hdr_rmpp_flags_keep_rtime(struct kunit *test)
{
	struct ib_rmpp_hdr hdr = { .rmpp_rtime_flags = 0x1f << 3 };

	/* Only the low three bits are flags; wider values are cut. */
	ib_set_rmpp_flags(&hdr, IB_MGMT_RMPP_FLAG_ACTIVE |
				IB_MGMT_RMPP_FLAG_FIRST |
				IB_MGMT_RMPP_FLAG_LAST | 0xf8);
	KUNIT_EXPECT_EQ(test, hdr.rmpp_rtime_flags, 0xff);
	KUNIT_EXPECT_EQ(test, ib_get_rmpp_resptime(&hdr), 0x1f);
	ib_set_rmpp_flags(&hdr, 0);
	KUNIT_EXPECT_EQ(test, hdr.rmpp_rtime_flags, 0xf8);
	/* IBA 13.6.2.1: Active is bit 0, First bit 1, Last bit 2. */
	KUNIT_EXPECT_EQ(test, IB_MGMT_RMPP_FLAG_ACTIVE, 1);
	KUNIT_EXPECT_EQ(test, IB_MGMT_RMPP_FLAG_FIRST, 2);
	KUNIT_EXPECT_EQ(test, IB_MGMT_RMPP_FLAG_LAST, 4);
}

/* ClassPortInfo: CapabilityMask2 is the top 27 bits, RespTimeValue 5. */
static void mad_hdr_cpi_resp_time_capmask2(struct kunit *test)
{
	static const u8 wire[4] = { 0x00, 0x00, 0x00, 0x32 };
	struct ib_class_port_info cpi = {};
	u32 capmask2;
	u8 rtime;

	ib_set_cpi_capmask2(&cpi, 1);
	ib_set_cpi_resp_time(&cpi, 0x12);
	KUNIT_EXPECT_MEMEQ(test, &cpi.cap_mask2_resp_time, wire, sizeof(wire));

	for (rtime = 0; rtime < 32; rtime++) {
		for (capmask2 = 0; capmask2 < BIT(27); capmask2 = capmask2 * 3 + 1) {
			cpi.cap_mask2_resp_time = 0;
			ib_set_cpi_capmask2(&cpi, capmask2);
			ib_set_cpi_resp_time(&cpi, rtime);
			KUNIT_EXPECT_EQ(test, ib_get_cpi_resp_time(&cpi), rtime);
			KUNIT_EXPECT_EQ(test, ib_get_cpi_capmask2(&cpi), capmask2);
			KUNIT_EXPECT_EQ(test, be32_to_cpu(cpi.cap_mask2_resp_time),
					capmask2 << 5 | rtime);
		}
	}

	/* Each setter leaves the other field alone and masks its own. */
	cpi.cap_mask2_resp_time = cpu_to_be32(0xffffffe0);
	ib_set_cpi_resp_time(&cpi, 0xff);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(cpi.cap_mask2_resp_time), 0xffffffff);
	ib_set_cpi_resp_time(&cpi, 3);
	KUNIT_EXPECT_EQ(test, ib_get_cpi_capmask2(&cpi), 0x7ffffff);
	ib_set_cpi_capmask2(&cpi, 0);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(cpi.cap_mask2_resp_time), 3);
}

static void mad_hdr_opa_cpi_capmask2(struct kunit *test)
{
	struct opa_class_port_info cpi = {};

	cpi.cap_mask2_resp_time = cpu_to_be32(0x5a5a5a40 | 0x13);
	KUNIT_EXPECT_EQ(test, opa_get_cpi_capmask2(&cpi), 0x5a5a5a40u >> 5);
	cpi.cap_mask2_resp_time = cpu_to_be32(0x1f);
	KUNIT_EXPECT_EQ(test, opa_get_cpi_capmask2(&cpi), 0);
}

struct mad_hdr_resp_case {
	const char *name;
	u8 mgmt_class;
	u8 method;
	u32 attr_mod;
	bool response;
};

static const struct mad_hdr_resp_case mad_hdr_resp_cases[] = {
	{ "get", IB_MGMT_CLASS_SUBN_ADM, IB_MGMT_METHOD_GET, 0, false },
	{ "set", IB_MGMT_CLASS_PERF_MGMT, IB_MGMT_METHOD_SET, 0, false },
	{ "send", IB_MGMT_CLASS_DEVICE_MGMT, IB_MGMT_METHOD_SEND, 0, false },
	{ "trap", IB_MGMT_CLASS_SUBN_LID_ROUTED, IB_MGMT_METHOD_TRAP, 0, false },
	{ "report", IB_MGMT_CLASS_SUBN_ADM, IB_MGMT_METHOD_REPORT, 0, false },
	{ "get_resp", IB_MGMT_CLASS_DEVICE_MGMT, IB_MGMT_METHOD_GET_RESP, 0, true },
	{ "report_resp", IB_MGMT_CLASS_SUBN_ADM, IB_MGMT_METHOD_REPORT_RESP, 0, true },
	{ "gettable_resp", IB_MGMT_CLASS_SUBN_ADM, 0x92, 0, true },
	{ "trap_repress", IB_MGMT_CLASS_SUBN_LID_ROUTED, IB_MGMT_METHOD_TRAP_REPRESS, 0, true },
	{ "bm_request", IB_MGMT_CLASS_BM, IB_MGMT_METHOD_SEND, 0, false },
	{ "bm_response", IB_MGMT_CLASS_BM, IB_MGMT_METHOD_SEND, 1, true },
	{ "attr_mod_not_bm", IB_MGMT_CLASS_PERF_MGMT, IB_MGMT_METHOD_GET, 1, false },
};

KUNIT_ARRAY_PARAM_DESC(mad_hdr_resp, mad_hdr_resp_cases, name);

static void mad_hdr_response_method(struct kunit *test)
{
	const struct mad_hdr_resp_case *c = test->param_value;
	struct ib_mad_hdr hdr = {
		.base_version = IB_MGMT_BASE_VERSION,
		.mgmt_class = c->mgmt_class,
		.class_version = 1,
		.method = c->method,
		.attr_mod = cpu_to_be32(c->attr_mod),
	};

	KUNIT_EXPECT_EQ(test, !!ib_response_mad(&hdr), c->response);
}

/* Which classes are RMPP-capable and where their class data starts. */
static void mad_hdr_class_rmpp_and_offset(struct kunit *test)
{
	unsigned int cls;

	for (cls = 0; cls < 256; cls++) {
		bool rmpp;
		int offset;

		switch (cls) {
		case IB_MGMT_CLASS_SUBN_ADM:
			rmpp = true;
			offset = 56;
			break;
		case IB_MGMT_CLASS_DEVICE_MGMT:
		case IB_MGMT_CLASS_DEVICE_ADM:
		case IB_MGMT_CLASS_BIS:
			rmpp = true;
			offset = 64;
			break;
		case IB_MGMT_CLASS_VENDOR_RANGE2_START ... IB_MGMT_CLASS_VENDOR_RANGE2_END:
			rmpp = true;
			offset = 40;
			break;
		default:
			rmpp = false;
			offset = 24;
		}
		KUNIT_EXPECT_EQ_MSG(test, !!ib_is_mad_class_rmpp(cls), rmpp,
				    "class 0x%02x", cls);
		KUNIT_EXPECT_EQ_MSG(test, ib_get_mad_data_offset(cls), offset,
				    "class 0x%02x", cls);
	}
	KUNIT_EXPECT_EQ(test, IB_MGMT_SA_HDR, 56);
	KUNIT_EXPECT_EQ(test, IB_MGMT_DEVICE_HDR, 64);
	KUNIT_EXPECT_EQ(test, IB_MGMT_VENDOR_HDR, 40);
	KUNIT_EXPECT_EQ(test, IB_MGMT_MAD_HDR, 24);
}

/* Wire sizes and offsets callers build MADs with. */
static void mad_hdr_wire_layout(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, sizeof(struct ib_mad_hdr), 24);
	KUNIT_EXPECT_EQ(test, sizeof(struct ib_rmpp_hdr), 12);
	KUNIT_EXPECT_EQ(test, sizeof(struct ib_mad), 256);
	KUNIT_EXPECT_EQ(test, sizeof(struct opa_mad), 2048);
	KUNIT_EXPECT_EQ(test, sizeof(struct ib_rmpp_mad), 256);
	KUNIT_EXPECT_EQ(test, sizeof(struct opa_rmpp_mad), 2048);
	KUNIT_EXPECT_EQ(test, sizeof(struct ib_vendor_mad), 256);
	KUNIT_EXPECT_EQ(test, sizeof(struct ib_class_port_info), 72);
	/* Notice up to DataDetails; the IssuerGID is not part of it. */
	KUNIT_EXPECT_EQ(test, sizeof(struct ib_mad_notice_attr), 64);
	KUNIT_EXPECT_EQ(test, offsetof(struct ib_rmpp_mad, data), 36);
	KUNIT_EXPECT_EQ(test, offsetof(struct ib_vendor_mad, oui), 37);
	KUNIT_EXPECT_EQ(test, offsetof(struct ib_vendor_mad, data), 40);
	KUNIT_EXPECT_EQ(test, offsetof(struct ib_class_port_info,
				       cap_mask2_resp_time), 4);
	KUNIT_EXPECT_EQ(test, offsetof(struct ib_mad_hdr, tid), 8);
	KUNIT_EXPECT_EQ(test, offsetof(struct ib_mad_hdr, attr_mod), 20);
	KUNIT_EXPECT_EQ(test, IB_MGMT_MAD_DATA, 232);
	KUNIT_EXPECT_EQ(test, IB_MGMT_RMPP_DATA, 220);
}

static struct kunit_case mad_hdr_cases[] = {
	KUNIT_CASE(mad_hdr_rmpp_rtime_flags_roundtrip),
	KUNIT_CASE(mad_hdr_rmpp_flags_keep_rtime),
	KUNIT_CASE(mad_hdr_cpi_resp_time_capmask2),
	KUNIT_CASE(mad_hdr_opa_cpi_capmask2),
	KUNIT_CASE_PARAM(mad_hdr_response_method, mad_hdr_resp_gen_params),
	KUNIT_CASE(mad_hdr_class_rmpp_and_offset),
	KUNIT_CASE(mad_hdr_wire_layout),
	{}
};

static struct kunit_suite mad_hdr_suite = {
	.name = "ib_mad_header",
	.test_cases = mad_hdr_cases,
};

kunit_test_suite(mad_hdr_suite);

MODULE_DESCRIPTION("KUnit tests for the <rdma/ib_mad.h> helpers");
MODULE_LICENSE("GPL");
