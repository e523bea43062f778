// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit tests for ib_srpt: SRP_CMD descriptor parsing, the Device
 * Management attribute builders, WWN / ACL / initiator port id names,
 * SRP_LOGIN_REQ validation, SRP_RSP building, the text of an ACL's
 * info attribute, and channels on a fake HCA: receive errors, fatal QP
 * events and request credits.
 */

#include <kunit/static_stub.h>
#include <kunit/test.h>
#include <linux/kprobes.h>
#include <linux/unaligned.h>
#include <rdma/ib_mad.h>
#include <scsi/scsi_proto.h>
#include <scsi/srp.h>
#include <target/target_core_base.h>

#include "srpt_priv.h"

MODULE_INFO(import_ns, "EXPORTED_FOR_KUNIT_TESTING");	/* both series */

#define IU_SIZE		1024
#define CMD_LEN		((u32)sizeof(struct srp_cmd))
#define DB_LEN		((u32)sizeof(struct srp_direct_buf))
#define IDB_LEN		((u32)sizeof(struct srp_indirect_buf))
#define IMM_OFF		68

/* ------------------------------------------------------------------ */
/* SRP_CMD data descriptors                                            */
/* ------------------------------------------------------------------ */

struct desc_case {
	const char *name;
	/* Fills the IU and returns the number of bytes "received". */
	u32 (*build)(struct srp_cmd *cmd);
	u16 imm_off;
	int ret;
	enum dma_data_direction dir;
	u8 fmt;
	u32 len;
	u32 n_desc;
};

static void put_db(struct srp_direct_buf *db, u64 va, u32 key, u32 len)
{
	db->va = cpu_to_be64(va);
	db->key = cpu_to_be32(key);
	db->len = cpu_to_be32(len);
}

static u32 b_no_data(struct srp_cmd *c)
{
	return CMD_LEN;
}

static u32 b_direct_out(struct srp_cmd *c)
{
	c->buf_fmt = SRP_DATA_DESC_DIRECT << 4;
	c->data_out_desc_cnt = 1;
	put_db((void *)c->add_data, 0x1000, 7, 4096);
	return CMD_LEN + DB_LEN;
}

static u32 b_direct_in(struct srp_cmd *c)
{
	c->buf_fmt = SRP_DATA_DESC_DIRECT;
	c->data_in_desc_cnt = 1;
	put_db((void *)c->add_data, 0x1000, 7, 512);
	return CMD_LEN + DB_LEN;
}

static u32 b_direct_add_cdb(struct srp_cmd *c)
{
	/* 16 bytes of additional CDB; the two low bits are reserved. */
	c->add_cdb_len = 16 | 3;
	c->buf_fmt = SRP_DATA_DESC_DIRECT;
	put_db((void *)(c->add_data + 16), 0x2000, 9, 8192);
	return CMD_LEN + 16 + DB_LEN;
}

static u32 b_direct_short(struct srp_cmd *c)
{
	b_direct_out(c);
	return CMD_LEN + DB_LEN - 1;
}

static u32 b_direct_zero(struct srp_cmd *c)
{
	b_direct_out(c);
	put_db((void *)c->add_data, 0x1000, 7, 0);
	return CMD_LEN + DB_LEN;
}

static u32 b_short_iu(struct srp_cmd *c)
{
	return CMD_LEN - 1;
}

static u32 b_add_cdb_past_iu(struct srp_cmd *c)
{
	c->add_cdb_len = 252;
	return CMD_LEN + 16;
}

static u32 b_bidi(struct srp_cmd *c)
{
	c->buf_fmt = (SRP_DATA_DESC_DIRECT << 4) | SRP_DATA_DESC_DIRECT;
	put_db((void *)c->add_data, 0x1000, 7, 512);
	return CMD_LEN + 2 * DB_LEN;
}

static u32 b_bad_fmt(struct srp_cmd *c)
{
	c->buf_fmt = 4 << 4;
	return CMD_LEN + DB_LEN;
}

static u32 b_imm_in(struct srp_cmd *c)
{
	c->buf_fmt = SRP_DATA_DESC_IMM;
	return CMD_LEN + 4 + 512;
}

/* Indirect table of @n entries of @len bytes, @in_iu of them counted. */
static u32 put_indirect(struct srp_cmd *c, u32 n, u32 in_iu, u32 len,
			u32 total)
{
	struct srp_indirect_buf *idb = (void *)c->add_data;
	u32 i;

	c->buf_fmt = SRP_DATA_DESC_INDIRECT << 4;
	c->data_out_desc_cnt = in_iu;
	put_db(&idb->table_desc, 0x9000, 1, n * DB_LEN);
	idb->len = cpu_to_be32(total);
	for (i = 0; i < n; i++)
		put_db(&idb->desc_list[i], 0x10000 * (i + 1), 3, len);
	return CMD_LEN + IDB_LEN + n * DB_LEN;
}

static u32 b_indirect_ok(struct srp_cmd *c)
{
	return put_indirect(c, 3, 3, 4096, 3 * 4096);
}

static u32 b_indirect_in(struct srp_cmd *c)
{
	u32 len = put_indirect(c, 2, 2, 1024, 2048);

	c->buf_fmt = SRP_DATA_DESC_INDIRECT;
	c->data_out_desc_cnt = 0;
	c->data_in_desc_cnt = 2;
	return len;
}

static u32 b_indirect_external(struct srp_cmd *c)
{
	return put_indirect(c, 3, 2, 4096, 3 * 4096);
}

static u32 b_indirect_past_iu(struct srp_cmd *c)
{
	return put_indirect(c, 3, 3, 4096, 3 * 4096) - 1;
}

static u32 b_indirect_hdr_past_iu(struct srp_cmd *c)
{
	put_indirect(c, 1, 1, 4096, 4096);
	return CMD_LEN + IDB_LEN - 1;
}

static u32 b_indirect_odd_table(struct srp_cmd *c)
{
	struct srp_indirect_buf *idb = (void *)c->add_data;
	u32 len = put_indirect(c, 2, 2, 4096, 8192);

	idb->table_desc.len = cpu_to_be32(2 * DB_LEN - 1);
	return len;
}

static u32 b_indirect_empty(struct srp_cmd *c)
{
	struct srp_indirect_buf *idb = (void *)c->add_data;
	u32 len = put_indirect(c, 1, 1, 4096, 4096);

	idb->table_desc.len = 0;
	return len;
}

static u32 b_indirect_zero_entry(struct srp_cmd *c)
{
	struct srp_indirect_buf *idb = (void *)c->add_data;
	u32 len = put_indirect(c, 3, 3, 4096, 2 * 4096);

	idb->desc_list[1].len = 0;
	return len;
}

static u32 b_indirect_bad_total(struct srp_cmd *c)
{
	return put_indirect(c, 3, 3, 4096, 3 * 4096 + 1);
}

static u32 b_indirect_overflow(struct srp_cmd *c)
{
	/* 2 * 0xffffffff wraps to 0xfffffffe in 32 bits. */
	return put_indirect(c, 2, 2, 0xffffffff, 0xfffffffe);
}

static u32 put_imm(struct srp_cmd *c, u32 len)
{
	struct srp_imm_buf *imm = (void *)c->add_data;

	c->buf_fmt = SRP_DATA_DESC_IMM << 4;
	imm->len = cpu_to_be32(len);
	return IMM_OFF + len;
}

static u32 b_imm_ok(struct srp_cmd *c)
{
	return put_imm(c, 512);
}

static u32 b_imm_past_iu(struct srp_cmd *c)
{
	return put_imm(c, 512) - 1;
}

static u32 b_imm_zero(struct srp_cmd *c)
{
	return put_imm(c, 0) + 16;
}

static u32 b_imm_huge(struct srp_cmd *c)
{
	put_imm(c, 0xffffffff);
	return IU_SIZE;
}

static u32 b_imm_overlap(struct srp_cmd *c)
{
	/* The descriptor, after 20 bytes of additional CDB, ends past 68. */
	c->add_cdb_len = 20;
	c->buf_fmt = SRP_DATA_DESC_IMM << 4;
	put_unaligned_be32(16, c->add_data + 20);
	return IMM_OFF + 16;
}

static u32 b_direct_max(struct srp_cmd *c)
{
	b_direct_in(c);
	put_db((void *)c->add_data, 0x1000, 7, SRPT_MAX_DATA_LEN);
	return CMD_LEN + DB_LEN;
}

static u32 b_direct_over_max(struct srp_cmd *c)
{
	b_direct_in(c);
	put_db((void *)c->add_data, 0x1000, 7, SRPT_MAX_DATA_LEN + 1);
	return CMD_LEN + DB_LEN;
}

static u32 b_direct_4g(struct srp_cmd *c)
{
	b_direct_out(c);
	put_db((void *)c->add_data, 0x1000, 7, 0xffffffff);
	return CMD_LEN + DB_LEN;
}

static u32 b_indirect_max(struct srp_cmd *c)
{
	return put_indirect(c, 2, 2, SRPT_MAX_DATA_LEN / 2, SRPT_MAX_DATA_LEN);
}

static u32 b_indirect_over_max(struct srp_cmd *c)
{
	/* Each entry is allowed, their sum is not. */
	return put_indirect(c, 3, 3, SRPT_MAX_DATA_LEN / 2,
			    3 * (SRPT_MAX_DATA_LEN / 2));
}

/* A 32-byte variable-length CDB (ADDITIONAL CDB LENGTH 24 in byte 7). */
static u32 b_varlen_cdb(struct srp_cmd *c)
{
	c->cdb[0] = VARIABLE_LENGTH_CMD;
	c->cdb[7] = 24;
	c->add_cdb_len = 16;
	return CMD_LEN + 16;
}

static u32 b_varlen_cdb_past_add_cdb(struct srp_cmd *c)
{
	b_varlen_cdb(c);
	c->add_cdb_len = 12;
	return CMD_LEN + 12;
}

static u32 b_varlen_cdb_no_add_cdb(struct srp_cmd *c)
{
	/* The CDB's own length would make LIO read 260 bytes. */
	c->cdb[0] = VARIABLE_LENGTH_CMD;
	c->cdb[7] = 252;
	return CMD_LEN;
}

static const struct desc_case desc_cases[] = {
	{ "no data", b_no_data, 0, 0, DMA_NONE, SRP_NO_DATA_DESC, 0, 0 },
	{ "direct out", b_direct_out, 0, 0, DMA_TO_DEVICE,
	  SRP_DATA_DESC_DIRECT, 4096, 1 },
	{ "direct in", b_direct_in, 0, 0, DMA_FROM_DEVICE,
	  SRP_DATA_DESC_DIRECT, 512, 1 },
	{ "direct after additional CDB", b_direct_add_cdb, 0, 0,
	  DMA_FROM_DEVICE, SRP_DATA_DESC_DIRECT, 8192, 1 },
	{ "direct cut short", b_direct_short, 0, -EINVAL },
	{ "direct zero length", b_direct_zero, 0, -EINVAL },
	{ "IU shorter than SRP_CMD", b_short_iu, 0, -EINVAL },
	{ "additional CDB past IU", b_add_cdb_past_iu, 0, -EINVAL },
	{ "bidirectional", b_bidi, 0, -EINVAL },
	{ "reserved format", b_bad_fmt, 0, -EINVAL },
	{ "immediate data-in", b_imm_in, IMM_OFF, -EINVAL },
	{ "indirect out", b_indirect_ok, 0, 0, DMA_TO_DEVICE,
	  SRP_DATA_DESC_INDIRECT, 3 * 4096, 3 },
	{ "indirect in", b_indirect_in, 0, 0, DMA_FROM_DEVICE,
	  SRP_DATA_DESC_INDIRECT, 2048, 2 },
	{ "indirect table outside IU", b_indirect_external, 0, -EOPNOTSUPP },
	{ "indirect count past IU", b_indirect_past_iu, 0, -EINVAL },
	{ "indirect header past IU", b_indirect_hdr_past_iu, 0, -EINVAL },
	{ "indirect table length not a multiple", b_indirect_odd_table, 0,
	  -EINVAL },
	{ "indirect empty table", b_indirect_empty, 0, -EINVAL },
	{ "indirect zero-length entry", b_indirect_zero_entry, 0, -EINVAL },
	{ "indirect total mismatch", b_indirect_bad_total, 0, -EINVAL },
	{ "indirect total overflows 32 bits", b_indirect_overflow, 0,
	  -EINVAL },
	{ "immediate", b_imm_ok, IMM_OFF, 0, DMA_TO_DEVICE, SRP_DATA_DESC_IMM,
	  512, 0 },
	{ "immediate not negotiated", b_imm_ok, 0, -EINVAL },
	{ "immediate past IU", b_imm_past_iu, IMM_OFF, -EINVAL },
	{ "immediate zero length", b_imm_zero, IMM_OFF, -EINVAL },
	{ "immediate length overflows", b_imm_huge, IMM_OFF, -EINVAL },
	{ "immediate descriptor overlaps data", b_imm_overlap, IMM_OFF,
	  -EINVAL },
	{ "direct of the largest transfer", b_direct_max, 0, 0,
	  DMA_FROM_DEVICE, SRP_DATA_DESC_DIRECT, SRPT_MAX_DATA_LEN, 1 },
	{ "direct over the largest transfer", b_direct_over_max, 0, -EMSGSIZE },
	{ "direct of 4 GiB - 1", b_direct_4g, 0, -EMSGSIZE },
	{ "indirect of the largest transfer", b_indirect_max, 0, 0,
	  DMA_TO_DEVICE, SRP_DATA_DESC_INDIRECT, SRPT_MAX_DATA_LEN, 2 },
	{ "indirect over the largest transfer", b_indirect_over_max, 0,
	  -EMSGSIZE },
	{ "variable-length CDB in additional CDB", b_varlen_cdb, 0, 0,
	  DMA_NONE, SRP_NO_DATA_DESC, 0, 0 },
	{ "variable-length CDB past additional CDB", b_varlen_cdb_past_add_cdb,
	  0, -EINVAL },
	{ "variable-length CDB without additional CDB",
	  b_varlen_cdb_no_add_cdb, 0, -EINVAL },
};

KUNIT_ARRAY_PARAM_DESC(desc, desc_cases, name);

static void srpt_test_desc_tbl(struct kunit *test)
{
	const struct desc_case *c = test->param_value;
	struct srpt_desc_info info;
	struct srp_cmd *cmd;
	u32 iu_len;
	int ret;

	cmd = kunit_kzalloc(test, IU_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, cmd);
	cmd->opcode = SRP_CMD;
	iu_len = c->build(cmd);
	KUNIT_ASSERT_LE(test, iu_len, IU_SIZE);

	ret = srpt_parse_desc_tbl(cmd, iu_len, c->imm_off, &info);
	KUNIT_EXPECT_EQ(test, ret, c->ret);
	if (ret)
		return;
	KUNIT_EXPECT_EQ(test, info.dir, c->dir);
	KUNIT_EXPECT_EQ(test, info.fmt, c->fmt);
	KUNIT_EXPECT_EQ(test, info.data_len, c->len);
	KUNIT_EXPECT_EQ(test, info.n_desc, c->n_desc);
	if (c->n_desc) {
		/* The descriptors must point into the IU, right after it. */
		KUNIT_EXPECT_GE(test, (uintptr_t)info.descs,
				(uintptr_t)cmd->add_data);
		KUNIT_EXPECT_LE(test, (uintptr_t)(info.descs + info.n_desc),
				(uintptr_t)cmd + iu_len);
	}
	if (c->fmt == SRP_DATA_DESC_IMM)
		KUNIT_EXPECT_EQ(test, info.imm_offset, (u32)c->imm_off);
}

/* ------------------------------------------------------------------ */
/* Received IU lengths                                                 */
/* ------------------------------------------------------------------ */

struct iu_case {
	const char *name;
	u8 opcode;
	u32 len;
	int ret;
};

static const struct iu_case iu_cases[] = {
	{ "empty", SRP_CMD, 0, -EINVAL },
	{ "SRP_CMD one byte short", SRP_CMD, CMD_LEN - 1, -EINVAL },
	{ "SRP_CMD without descriptors", SRP_CMD, CMD_LEN, SRP_CMD },
	{ "SRP_TSK_MGMT with only its tag", SRP_TSK_MGMT, 16, -EINVAL },
	{ "SRP_TSK_MGMT", SRP_TSK_MGMT, sizeof(struct srp_tsk_mgmt),
	  SRP_TSK_MGMT },
	{ "SRP_I_LOGOUT one byte short", SRP_I_LOGOUT, 15, -EINVAL },
	{ "SRP_I_LOGOUT", SRP_I_LOGOUT, sizeof(struct srp_i_logout),
	  SRP_I_LOGOUT },
	{ "SRP_CRED_RSP one byte short", SRP_CRED_RSP, 15, -EINVAL },
	{ "SRP_AER_RSP", SRP_AER_RSP, sizeof(struct srp_aer_rsp), SRP_AER_RSP },
	{ "unknown opcode, one byte", 0x55, 1, 0x55 },
};

KUNIT_ARRAY_PARAM_DESC(iu, iu_cases, name);

/*
 * The buffer holds a complete SRP_CMD of an earlier receive; only the
 * first @len bytes are the new IU.
 */
static void srpt_test_iu_opcode(struct kunit *test)
{
	const struct iu_case *c = test->param_value;
	u8 *buf;

	buf = kunit_kzalloc(test, IU_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	buf[0] = SRP_CMD;
	if (c->len)
		buf[0] = c->opcode;
	KUNIT_EXPECT_EQ(test, srpt_iu_opcode(buf, c->len), c->ret);
}

/* ------------------------------------------------------------------ */
/* Device Management                                                   */
/* ------------------------------------------------------------------ */

static u16 dm_status(const struct srpt_dm_mad *mad)
{
	return be16_to_cpu(mad->mad_hdr.status);
}

static struct srpt_port *fake_port(struct kunit *test)
{
	struct srpt_device *sdev;
	struct ib_device *dev;

	dev = kunit_kzalloc(test, sizeof(*dev), GFP_KERNEL);
	sdev = kunit_kzalloc(test, struct_size(sdev, port, 1), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, dev);
	KUNIT_ASSERT_NOT_NULL(test, sdev);
	dev->attrs.vendor_id = 0x02c9;
	dev->attrs.vendor_part_id = 0x1017;
	dev->attrs.hw_ver = 3;
	dev->attrs.max_qp_wr = 64;
	sdev->device = dev;
	sdev->port[0].sdev = sdev;
	sdev->port[0].port = 1;
	sdev->port[0].dm_rdma_size = 1U << 20;
	return &sdev->port[0];
}

static void srpt_test_set_ioc(struct kunit *test)
{
	u8 list[8] = {};

	srpt_set_ioc(list, 1, 1);
	KUNIT_EXPECT_EQ(test, list[0], 0x10);
	srpt_set_ioc(list, 2, 0x23);	/* only the low nibble counts */
	KUNIT_EXPECT_EQ(test, list[0], 0x13);
	srpt_set_ioc(list, 1, 0);
	KUNIT_EXPECT_EQ(test, list[0], 0x03);
	srpt_set_ioc(list, 16, 0xf);
	KUNIT_EXPECT_EQ(test, list[7], 0x0f);
	srpt_set_ioc(list, 15, 0xa);
	KUNIT_EXPECT_EQ(test, list[7], 0xaf);
}

static void srpt_test_class_port_info(struct kunit *test)
{
	struct srpt_dm_mad *mad = kunit_kzalloc(test, sizeof(*mad), GFP_KERNEL);
	struct ib_class_port_info *cpi;

	KUNIT_ASSERT_NOT_NULL(test, mad);
	memset(mad->data, 0xff, sizeof(mad->data));
	srpt_get_class_port_info(mad);
	cpi = (void *)mad->data;
	KUNIT_EXPECT_EQ(test, dm_status(mad), 0);
	KUNIT_EXPECT_EQ(test, cpi->base_version, 1);
	KUNIT_EXPECT_EQ(test, cpi->class_version, 1);
	KUNIT_EXPECT_EQ(test, ib_get_cpi_resp_time(cpi), 20);
	KUNIT_EXPECT_EQ(test, be16_to_cpu(cpi->capability_mask), 0);
	KUNIT_EXPECT_EQ(test, be16_to_cpu(cpi->redirect_lid), 0);
}

static void srpt_test_iou(struct kunit *test)
{
	struct srpt_dm_mad *mad = kunit_kzalloc(test, sizeof(*mad), GFP_KERNEL);
	struct srpt_dm_iou_info *iou;
	int i;

	KUNIT_ASSERT_NOT_NULL(test, mad);
	memset(mad->data, 0xff, sizeof(mad->data));
	srpt_get_iou(mad);
	iou = (void *)mad->data;
	KUNIT_EXPECT_EQ(test, dm_status(mad), 0);
	KUNIT_EXPECT_EQ(test, be16_to_cpu(iou->change_id), 1);
	KUNIT_EXPECT_EQ(test, iou->max_controllers, 16);
	KUNIT_EXPECT_EQ(test, iou->controller_list[0], 0x10);
	for (i = 1; i < ARRAY_SIZE(iou->controller_list); i++)
		KUNIT_EXPECT_EQ(test, iou->controller_list[i], 0);
}

static void srpt_test_ioc_profile(struct kunit *test)
{
	struct srpt_dm_mad *mad = kunit_kzalloc(test, sizeof(*mad), GFP_KERNEL);
	struct srpt_port *sport = fake_port(test);
	u64 saved = srpt_service_guid;
	struct srpt_dm_ioc_profile *p;

	KUNIT_ASSERT_NOT_NULL(test, mad);
	srpt_get_ioc(sport, 0, mad);
	KUNIT_EXPECT_EQ(test, dm_status(mad), SRPT_DM_STATUS_INVALID_FIELD);
	srpt_get_ioc(sport, 17, mad);
	KUNIT_EXPECT_EQ(test, dm_status(mad), SRPT_DM_STATUS_INVALID_FIELD);
	srpt_get_ioc(sport, 2, mad);
	KUNIT_EXPECT_EQ(test, dm_status(mad), SRPT_DM_STATUS_NO_IOC);
	srpt_get_ioc(sport, 16, mad);
	KUNIT_EXPECT_EQ(test, dm_status(mad), SRPT_DM_STATUS_NO_IOC);

	srpt_service_guid = 0x0002c90300a1b2c3ULL;
	srpt_get_ioc(sport, 1, mad);
	srpt_service_guid = saved;
	p = (void *)mad->data;
	KUNIT_EXPECT_EQ(test, dm_status(mad), 0);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(p->guid), 0x0002c90300a1b2c3ULL);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(p->vendor_id), 0x02c9);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(p->device_id), 0x1017);
	KUNIT_EXPECT_EQ(test, be16_to_cpu(p->device_version), 3);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(p->subsys_vendor_id), 0x02c9);
	KUNIT_EXPECT_EQ(test, be16_to_cpu(p->io_class), SRP_REV16A_IB_IO_CLASS);
	KUNIT_EXPECT_EQ(test, be16_to_cpu(p->io_subclass), 0x609e);
	KUNIT_EXPECT_EQ(test, be16_to_cpu(p->protocol), 0x0108);
	KUNIT_EXPECT_EQ(test, be16_to_cpu(p->protocol_version), 1);
	KUNIT_EXPECT_EQ(test, be16_to_cpu(p->send_queue_depth), 64);
	KUNIT_EXPECT_EQ(test, p->rdma_read_depth, 4);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(p->send_size), srp_max_req_size);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(p->rdma_size), 1U << 20);
	KUNIT_EXPECT_EQ(test, p->op_cap_mask, 0x2b);
	KUNIT_EXPECT_EQ(test, p->num_svc_entries, 1);
	KUNIT_EXPECT_STREQ(test, (char *)p->id_string, "Linux SRP target");
}

struct svc_case {
	const char *name;
	u16 slot;
	u8 hi, lo;
	u16 status;
};

static const struct svc_case svc_cases[] = {
	{ "slot 1 entry 0", 1, 0, 0, 0 },
	{ "slot 0", 0, 0, 0, SRPT_DM_STATUS_INVALID_FIELD },
	{ "slot 17", 17, 0, 0, SRPT_DM_STATUS_INVALID_FIELD },
	{ "empty slot 3", 3, 0, 0, SRPT_DM_STATUS_NO_IOC },
	{ "reversed range", 1, 0, 1, SRPT_DM_STATUS_INVALID_FIELD },
	{ "entry 1 does not exist", 1, 1, 1, SRPT_DM_STATUS_INVALID_FIELD },
	{ "range 0..4", 1, 4, 0, SRPT_DM_STATUS_INVALID_FIELD },
	{ "range 0..255", 1, 255, 0, SRPT_DM_STATUS_INVALID_FIELD },
};

KUNIT_ARRAY_PARAM_DESC(svc, svc_cases, name);

static void srpt_test_svc_entries(struct kunit *test)
{
	const struct svc_case *c = test->param_value;
	struct srpt_dm_mad *mad = kunit_kzalloc(test, sizeof(*mad), GFP_KERNEL);
	struct srpt_dm_svc_entries *svc;

	KUNIT_ASSERT_NOT_NULL(test, mad);
	srpt_get_svc_entries(0x0002c90300a1b2c3ULL, c->slot, c->hi, c->lo, mad);
	KUNIT_EXPECT_EQ(test, dm_status(mad), c->status);
	if (c->status)
		return;
	svc = (void *)mad->data;
	KUNIT_EXPECT_EQ(test, be64_to_cpu(svc->entry[0].id),
			0x0002c90300a1b2c3ULL);
	KUNIT_EXPECT_STREQ(test, (char *)svc->entry[0].name,
			   "SRP.T10:0002c90300a1b2c3");
	KUNIT_EXPECT_EQ(test, be64_to_cpu(svc->entry[1].id), 0);
}

static void srpt_test_method_get(struct kunit *test)
{
	struct srpt_dm_mad *rsp = kunit_kzalloc(test, sizeof(*rsp), GFP_KERNEL);
	struct ib_mad *req = kunit_kzalloc(test, sizeof(*req), GFP_KERNEL);
	struct srpt_port *sport = fake_port(test);

	KUNIT_ASSERT_NOT_NULL(test, rsp);
	KUNIT_ASSERT_NOT_NULL(test, req);

	req->mad_hdr.attr_id = cpu_to_be16(SRPT_DM_ATTR_SVC_ENTRIES);
	req->mad_hdr.attr_mod = cpu_to_be32(1 << 16);
	srpt_mgmt_method_get(sport, req, rsp);
	KUNIT_EXPECT_EQ(test, dm_status(rsp), 0);

	req->mad_hdr.attr_mod = cpu_to_be32((1 << 16) | (1 << 8));
	srpt_mgmt_method_get(sport, req, rsp);
	KUNIT_EXPECT_EQ(test, dm_status(rsp), SRPT_DM_STATUS_INVALID_FIELD);

	req->mad_hdr.attr_mod = cpu_to_be32(2 << 16);
	srpt_mgmt_method_get(sport, req, rsp);
	KUNIT_EXPECT_EQ(test, dm_status(rsp), SRPT_DM_STATUS_NO_IOC);

	req->mad_hdr.attr_id = cpu_to_be16(SRPT_DM_ATTR_IOC_PROFILE);
	req->mad_hdr.attr_mod = cpu_to_be32(5);
	srpt_mgmt_method_get(sport, req, rsp);
	KUNIT_EXPECT_EQ(test, dm_status(rsp), SRPT_DM_STATUS_NO_IOC);

	req->mad_hdr.attr_id = cpu_to_be16(SRPT_DM_ATTR_IOU_INFO);
	srpt_mgmt_method_get(sport, req, rsp);
	KUNIT_EXPECT_EQ(test, dm_status(rsp), 0);

	req->mad_hdr.attr_id = cpu_to_be16(0x0099);
	srpt_mgmt_method_get(sport, req, rsp);
	KUNIT_EXPECT_EQ(test, dm_status(rsp),
			SRPT_DM_STATUS_UNSUP_METHOD_ATTR);
}

/* ------------------------------------------------------------------ */
/* Names                                                               */
/* ------------------------------------------------------------------ */

#define ID_0X		"0x0000000000000000505400fffe4a0b7b"
#define ID_UPPER	"0000000000000000505400FFFE4A0B7B"
#define ID_TOO_LONG	"0x000000000000000000505400fffe4a0b7b"

static const u8 test_id[16] = {
	0, 0, 0, 0, 0, 0, 0, 0, 0x50, 0x54, 0x00, 0xff, 0xfe, 0x4a, 0x0b, 0x7b,
};

static void srpt_test_i_port_id(struct kunit *test)
{
	u8 id[16], want[16] = {};

	KUNIT_EXPECT_EQ(test, srpt_parse_i_port_id(id, ID_0X), 0);
	KUNIT_EXPECT_MEMEQ(test, id, test_id, 16);
	KUNIT_EXPECT_EQ(test, srpt_parse_i_port_id(id, ID_UPPER), 0);
	KUNIT_EXPECT_MEMEQ(test, id, test_id, 16);
	KUNIT_EXPECT_EQ(test, srpt_parse_i_port_id(id, "0X505400fffe4a0b7b"),
			0);
	KUNIT_EXPECT_MEMEQ(test, id, test_id, 16);
	want[14] = 0x12;
	want[15] = 0x34;
	KUNIT_EXPECT_EQ(test, srpt_parse_i_port_id(id, "1234"), 0);
	KUNIT_EXPECT_MEMEQ(test, id, want, 16);

	KUNIT_EXPECT_EQ(test, srpt_parse_i_port_id(id, ""), -EINVAL);
	KUNIT_EXPECT_EQ(test, srpt_parse_i_port_id(id, "0x"), -EINVAL);
	KUNIT_EXPECT_EQ(test, srpt_parse_i_port_id(id, "123"), -EINVAL);
	KUNIT_EXPECT_EQ(test, srpt_parse_i_port_id(id, "zz"), -EINVAL);
	KUNIT_EXPECT_EQ(test, srpt_parse_i_port_id(id, ID_TOO_LONG), -EINVAL);
}

static void srpt_test_guid(struct kunit *test)
{
	char buf[40];
	u64 g;

	KUNIT_EXPECT_EQ(test, srpt_parse_guid(&g, "5054:00ff:fe4a:0b7b"), 0);
	KUNIT_EXPECT_EQ(test, g, 0x505400fffe4a0b7bULL);
	KUNIT_EXPECT_EQ(test, srpt_parse_guid(&g, "1:2:3:4"), 0);
	KUNIT_EXPECT_EQ(test, g, 0x0001000200030004ULL);
	KUNIT_EXPECT_EQ(test, srpt_parse_guid(&g, "5054:00ff:fe4a"), -EINVAL);
	KUNIT_EXPECT_EQ(test, srpt_parse_guid(&g, "5054:00ff:fe4a:0b7b:1"),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, srpt_parse_guid(&g, "12345:0:0:0"), -EINVAL);
	KUNIT_EXPECT_EQ(test, srpt_parse_guid(&g, "g:0:0:0"), -EINVAL);
	KUNIT_EXPECT_EQ(test, srpt_parse_guid(&g, "1::2:3"), -EINVAL);

	srpt_format_guid(buf, sizeof(buf), cpu_to_be64(0x505400fffe4a0b7bULL));
	KUNIT_EXPECT_STREQ(test, buf, "5054:00ff:fe4a:0b7b");
	srpt_format_id(buf, sizeof(buf), test_id);
	KUNIT_EXPECT_STREQ(test, buf, "0x0000000000000000505400fffe4a0b7b");
}

static void srpt_test_wwn_names(struct kunit *test)
{
	static const u8 gid[16] = { 0xfe, 0x80, 0, 0, 0, 0, 0, 0,
				    0x02, 0x50, 0x56, 0xff, 0xfe, 0, 0, 1 };
	struct srpt_port_name pn;
	char name[40];

	KUNIT_EXPECT_EQ(test, srpt_parse_port_name("fe80:0:0:1", &pn), 0);
	KUNIT_EXPECT_EQ(test, pn.kind, SRPT_NAME_GUID);
	KUNIT_EXPECT_EQ(test, pn.guid, 0xfe80000000000001ULL);

	/* The form targetcli-fb uses: "0x" and the 32 digits of GID 0. */
	srpt_format_id(name, sizeof(name), gid);
	KUNIT_EXPECT_STREQ(test, name, "0xfe80000000000000025056fffe000001");
	KUNIT_EXPECT_EQ(test, srpt_parse_port_name(name, &pn), 0);
	KUNIT_EXPECT_EQ(test, pn.kind, SRPT_NAME_ID);
	KUNIT_EXPECT_MEMEQ(test, pn.id, gid, 16);

	KUNIT_EXPECT_EQ(test, srpt_parse_port_name(name + 2, &pn), -EINVAL);
	KUNIT_EXPECT_EQ(test, srpt_parse_port_name("0x1234", &pn), -EINVAL);
	KUNIT_EXPECT_EQ(test, srpt_parse_port_name("mlx5_0", &pn), -EINVAL);
}

static void srpt_test_acl_names(struct kunit *test)
{
	struct srpt_port_name pn;

	KUNIT_EXPECT_EQ(test, srpt_parse_acl_name("5054:00ff:fe4a:0b7b", &pn),
			0);
	KUNIT_EXPECT_EQ(test, pn.kind, SRPT_NAME_GUID);
	KUNIT_EXPECT_EQ(test, srpt_parse_acl_name(ID_0X, &pn), 0);
	KUNIT_EXPECT_EQ(test, pn.kind, SRPT_NAME_ID);
	KUNIT_EXPECT_MEMEQ(test, pn.id, test_id, 16);
	KUNIT_EXPECT_EQ(test, srpt_parse_acl_name("192.168.122.76", &pn), 0);
	KUNIT_EXPECT_EQ(test, pn.kind, SRPT_NAME_IP);
	KUNIT_EXPECT_EQ(test, srpt_parse_acl_name("fe80::1", &pn), 0);
	KUNIT_EXPECT_EQ(test, pn.kind, SRPT_NAME_IP);
	KUNIT_EXPECT_EQ(test, srpt_parse_acl_name("iqn.2003-01.org", &pn),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, srpt_parse_acl_name("", &pn), -EINVAL);
}

/* ------------------------------------------------------------------ */
/* SRP_LOGIN_REQ                                                       */
/* ------------------------------------------------------------------ */

#define TEST_GUID	0x0002c90300a1b2c3ULL
#define TEST_MAX_REQ	8276

struct login_case {
	const char *name;
	void (*mutate)(struct srp_login_req *req);
	u32 reason;
	/* What the log line must say was presented and what was expected. */
	const char *presented;
	const char *expected;
};

static void l_none(struct srp_login_req *r)
{
}

static void l_multi(struct srp_login_req *r)
{
	r->req_flags = SRP_MULTICHAN_MULTI;
}

static void l_min(struct srp_login_req *r)
{
	r->req_it_iu_len = cpu_to_be32(64);
}

static void l_opcode(struct srp_login_req *r)
{
	r->opcode = SRP_CMD;
}

static void l_too_large(struct srp_login_req *r)
{
	r->req_it_iu_len = cpu_to_be32(TEST_MAX_REQ + 1);
}

static void l_too_small(struct srp_login_req *r)
{
	r->req_it_iu_len = cpu_to_be32(63);
}

static void l_no_fmt(struct srp_login_req *r)
{
	r->req_buf_fmt = 0;
}

static void l_odd_fmt(struct srp_login_req *r)
{
	r->req_buf_fmt = cpu_to_be16(1 << 3);
}

static void l_mca(struct srp_login_req *r)
{
	r->req_flags = 2;
}

static void l_tid_lo(struct srp_login_req *r)
{
	r->target_port_id[15] ^= 1;
}

static void l_tid_hi(struct srp_login_req *r)
{
	r->target_port_id[0] ^= 0x80;
}

static const struct login_case login_cases[] = {
	{ "valid single-channel", l_none, 0 },
	{ "valid multi-channel", l_multi, 0 },
	{ "smallest IU length", l_min, 0 },
	{ "wrong opcode", l_opcode, SRP_LOGIN_REJ_UNABLE_ESTABLISH_CHANNEL,
	  "opcode 0x02 presented", "0x00 (SRP_LOGIN_REQ) expected" },
	{ "IU length too large", l_too_large,
	  SRP_LOGIN_REJ_REQ_IT_IU_LENGTH_TOO_LARGE,
	  "length 8277 presented", "at most 8276 (srp_max_req_size)" },
	{ "IU length too small", l_too_small,
	  SRP_LOGIN_REJ_UNABLE_ESTABLISH_CHANNEL,
	  "length 63 presented", "at least 64 expected" },
	{ "no buffer format", l_no_fmt,
	  SRP_LOGIN_REJ_UNSUPPORTED_DESCRIPTOR_FMT,
	  "formats 0x0 presented", "direct 0x2 or indirect 0x4 expected" },
	{ "unknown buffer format", l_odd_fmt,
	  SRP_LOGIN_REJ_UNSUPPORTED_DESCRIPTOR_FMT,
	  "formats 0x8 presented", "direct 0x2 or indirect 0x4 expected" },
	{ "reserved multi-channel action", l_mca,
	  SRP_LOGIN_REJ_UNABLE_ESTABLISH_CHANNEL,
	  "action 2 presented", "0 or 1 expected" },
	{ "wrong target port id (id_ext)", l_tid_lo,
	  SRP_LOGIN_REJ_UNABLE_ASSOCIATE_CHANNEL,
	  "id 0x0002c90300a1b2c30002c90300a1b2c2 presented",
	  "0x0002c90300a1b2c30002c90300a1b2c3 expected" },
	{ "wrong target port id (ioc_guid)", l_tid_hi,
	  SRP_LOGIN_REJ_UNABLE_ASSOCIATE_CHANNEL,
	  "id 0x8002c90300a1b2c30002c90300a1b2c3 presented",
	  "0x0002c90300a1b2c30002c90300a1b2c3 expected" },
};

KUNIT_ARRAY_PARAM_DESC(login, login_cases, name);

static void srpt_test_login_req(struct kunit *test)
{
	const struct login_case *c = test->param_value;
	struct srp_login_req req = {
		.opcode = SRP_LOGIN_REQ,
		.req_it_iu_len = cpu_to_be32(8260),
		.req_buf_fmt = cpu_to_be16(SRP_BUF_FORMAT_DIRECT |
					   SRP_BUF_FORMAT_INDIRECT),
	};
	char why[160] = "untouched";

	put_unaligned_be64(TEST_GUID, req.target_port_id);
	put_unaligned_be64(TEST_GUID, req.target_port_id + 8);
	c->mutate(&req);
	KUNIT_EXPECT_EQ(test, srpt_check_login_req(&req, TEST_MAX_REQ,
						   TEST_GUID, why, sizeof(why)),
			c->reason);
	if (!c->reason) {
		KUNIT_EXPECT_STREQ(test, why, "untouched");
		return;
	}
	KUNIT_EXPECT_NOT_NULL_MSG(test, strstr(why, c->presented), "%s", why);
	KUNIT_EXPECT_NOT_NULL_MSG(test, strstr(why, c->expected), "%s", why);
}

/* ------------------------------------------------------------------ */
/* ACL info attribute                                                  */
/* ------------------------------------------------------------------ */

#define INFO_ACL	"0x0000000000000000fe80000000000001"
#define INFO_LOGIN	1700000000LL	/* 2023-11-14 22:13:20 UTC */

static void info_fill(struct srpt_ch_info *ci, u32 sid, u32 cid,
		      enum srpt_ch_state state)
{
	memset(ci, 0, sizeof(*ci));
	ci->sid = sid;
	ci->cid = cid;
	ci->state = state;
	ci->rdma_cm = true;
	ci->pkey = 0xffff;
	ci->queue_depth = 128;
	ci->credits = 120;
	ci->outstanding = 8;
	ci->cmds_by_fmt[SRP_NO_DATA_DESC] = 3;
	ci->cmds_by_fmt[SRP_DATA_DESC_DIRECT] = 4000000000ULL;
	ci->cmds_by_fmt[SRP_DATA_DESC_INDIRECT] = 5;
	ci->cmds_by_fmt[SRP_DATA_DESC_IMM] = 6;
	ci->login_time = state == CH_CONNECTING ? 0 : INFO_LOGIN;
	ci->i_port_id[15] = 0x01;
	put_unaligned_be64(TEST_GUID, ci->t_port_id);
	put_unaligned_be64(TEST_GUID, ci->t_port_id + 8);
	strscpy(ci->addr, "10.14.0.1", sizeof(ci->addr));
}

/*
 * What rtslib-fb's NodeACL._get_session() makes of the text: the fields of
 * the last session, the number of sessions and connections, and lines that
 * would confuse it (an "Address" line before any connection).
 */
struct info_parse {
	int sessions;
	int conns;
	int bad;
	u32 sid;
	u32 cid;
	char alias[40];
	char type[16];
	char state[16];
	char cstate[16];
	char address[40];
	char transport[16];
};

static void info_word(char *dst, size_t size, const char *src)
{
	size_t n;

	src = skip_spaces(src);
	n = strcspn(src, " \t\n");
	strscpy(dst, src, min(n + 1, size));
}

static void info_line(const char *l, struct info_parse *p)
{
	const char *c;

	if (str_has_prefix(l, "InitiatorName:")) {
		p->sessions++;
		p->conns = 0;
	} else if (str_has_prefix(l, "InitiatorAlias:")) {
		info_word(p->alias, sizeof(p->alias), l + 15);
	} else if (str_has_prefix(l, "LIO Session ID:")) {
		if (sscanf(l + 15, "%u", &p->sid) != 1)
			p->bad++;
		c = strstr(l, "SessionType:");
		if (c)
			info_word(p->type, sizeof(p->type), c + 12);
		else
			p->bad++;
	} else if (strstr(l, "TARG_SESS_STATE_")) {
		info_word(p->state, sizeof(p->state),
			  strstr(l, "_STATE_") + 7);
	} else if (strstr(l, "TARG_CONN_STATE_")) {
		c = strchr(l, ':');
		if (!c || sscanf(c + 1, "%u", &p->cid) != 1)
			p->bad++;
		info_word(p->cstate, sizeof(p->cstate),
			  strstr(l, "_STATE_") + 7);
		p->conns++;
	} else if (strstr(l, "Address")) {
		if (!p->conns)
			p->bad++;
		c = skip_spaces(l);
		c += strcspn(c, " ");
		info_word(p->address, sizeof(p->address), c);
		c = skip_spaces(c);
		c += strcspn(c, " ");
		info_word(p->transport, sizeof(p->transport), c);
	}
}

static void info_parse(const char *text, struct info_parse *p)
{
	const char *c, *end;
	char l[200];
	size_t n;

	memset(p, 0, sizeof(*p));
	for (c = text; *c; c = *end ? end + 1 : end) {
		end = strchrnul(c, '\n');
		n = min_t(size_t, end - c, sizeof(l) - 1);
		memcpy(l, c, n);
		l[n] = '\0';
		info_line(l, p);
	}
}

static void info_expect(struct kunit *test, const char *buf,
			const char *line)
{
	KUNIT_EXPECT_NOT_NULL_MSG(test, strstr(buf, line), "no \"%s\" in:\n%s",
				  line, buf);
}

static void srpt_test_info_none(struct kunit *test)
{
	char buf[256];
	ssize_t len;

	len = srpt_format_acl_info(buf, sizeof(buf), INFO_ACL, NULL, 0, 0, 0);
	KUNIT_EXPECT_EQ(test, len, (ssize_t)strlen(buf));
	KUNIT_EXPECT_STREQ(test, buf,
			   "No active SRP session for initiator " INFO_ACL "\n");
}

static void srpt_test_info_session(struct kunit *test)
{
	struct srpt_ch_info ci[2];
	struct info_parse p;
	char *buf;

	buf = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	info_fill(&ci[0], 7, 21, CH_LIVE);
	info_fill(&ci[1], 7, 22, CH_CONNECTING);
	ci[1].imm_data = true;
	srpt_format_acl_info(buf, PAGE_SIZE, INFO_ACL, ci, 2, 0,
			     INFO_LOGIN + 42);
	info_parse(buf, &p);
	KUNIT_EXPECT_EQ_MSG(test, p.sessions, 1, "%s", buf);
	KUNIT_EXPECT_EQ(test, p.bad, 0);
	KUNIT_EXPECT_STREQ(test, p.alias,
			   "0x00000000000000000000000000000001");
	KUNIT_EXPECT_EQ(test, p.sid, 7);
	KUNIT_EXPECT_STREQ(test, p.type, "Normal");
	KUNIT_EXPECT_STREQ(test, p.state, "LOGGED_IN");
	KUNIT_EXPECT_EQ(test, p.conns, 2);
	KUNIT_EXPECT_EQ(test, p.cid, 22);
	KUNIT_EXPECT_STREQ(test, p.cstate, "CONNECTING");
	KUNIT_EXPECT_STREQ(test, p.address, "10.14.0.1");
	KUNIT_EXPECT_STREQ(test, p.transport, "RDMA/CM");
	info_expect(test, buf, "InitiatorName: " INFO_ACL "\n");
	info_expect(test, buf,
		    "Target port id: 0x0002c90300a1b2c30002c90300a1b2c3\n");
	info_expect(test, buf, "Channels: 2\n");
	info_expect(test, buf,
		    "CID: 21  Connection State: TARG_CONN_STATE_LIVE\n");
	info_expect(test, buf,
		    "Login time: 2023-11-14 22:13:20 UTC (42 s ago)\n");
	info_expect(test, buf,
		    "Outstanding commands: 8  Credits held by the initiator: 120 of 128\n");
	info_expect(test, buf, "of 128  immediate data\n");
	info_expect(test, buf,
		    "   Commands by data descriptor: none 3  direct 4000000000  indirect 5  immediate 6\n");
	/* The connecting channel has no login time yet. */
	KUNIT_EXPECT_NULL(test, strstr(strstr(buf, "CID: 22"), "Login time:"));
}

static void srpt_test_info_states(struct kunit *test)
{
	static const struct {
		enum srpt_ch_state a, b;
		const char *state;
	} cases[] = {
		{ CH_CONNECTING, CH_DRAINING, "IN_LOGIN" },
		{ CH_DISCONNECTING, CH_DISCONNECTED, "LOGGING_OUT" },
		{ CH_DRAINING, CH_LIVE, "LOGGED_IN" },
	};
	struct srpt_ch_info ci[2];
	struct info_parse p;
	char *buf;
	int i;

	buf = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		info_fill(&ci[0], 1, 1, cases[i].a);
		info_fill(&ci[1], 1, 2, cases[i].b);
		srpt_format_acl_info(buf, PAGE_SIZE, INFO_ACL, ci, 2, 0,
				     INFO_LOGIN);
		info_parse(buf, &p);
		KUNIT_EXPECT_STREQ(test, p.state, cases[i].state);
	}
}

static void srpt_test_info_sessions(struct kunit *test)
{
	struct srpt_ch_info ci[3];
	struct info_parse p;
	char *buf;
	ssize_t len;

	buf = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	info_fill(&ci[0], 3, 5, CH_LIVE);
	info_fill(&ci[1], 3, 6, CH_LIVE);
	info_fill(&ci[2], 4, 9, CH_LIVE);
	ci[2].rdma_cm = false;
	strscpy(ci[2].addr, "fe80:0000:0000:0001", sizeof(ci[2].addr));
	srpt_format_acl_info(buf, PAGE_SIZE, INFO_ACL, ci, 3, 2, INFO_LOGIN);
	info_parse(buf, &p);
	KUNIT_EXPECT_EQ_MSG(test, p.sessions, 2, "%s", buf);
	KUNIT_EXPECT_EQ(test, p.bad, 0);
	KUNIT_EXPECT_EQ(test, p.sid, 4);
	KUNIT_EXPECT_EQ(test, p.conns, 1);
	KUNIT_EXPECT_STREQ(test, p.address, "fe80:0000:0000:0001");
	KUNIT_EXPECT_STREQ(test, p.transport, "IB_CM");
	KUNIT_EXPECT_NOT_NULL(test, strstr(buf, "(2 more channels not shown)\n"));

	/* A short buffer is filled, not overrun. */
	memset(buf, 'x', PAGE_SIZE);
	len = srpt_format_acl_info(buf, 100, INFO_ACL, ci, 3, 0, INFO_LOGIN);
	KUNIT_EXPECT_EQ(test, len, 99);
	KUNIT_EXPECT_EQ(test, buf[99], '\0');
	KUNIT_EXPECT_EQ(test, buf[100], 'x');
}

/* ------------------------------------------------------------------ */
/* SRP_RSP                                                             */
/* ------------------------------------------------------------------ */

struct rsp_env {
	struct srpt_rdma_ch *ch;
	struct srpt_send_ioctx *ioctx;
	struct srp_rsp *rsp;
};

static void rsp_env_init(struct kunit *test, struct rsp_env *e)
{
	e->ch = kunit_kzalloc(test, sizeof(*e->ch), GFP_KERNEL);
	e->ioctx = kunit_kzalloc(test, sizeof(*e->ioctx), GFP_KERNEL);
	e->rsp = kunit_kzalloc(test, SRPT_MAX_RSP_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, e->ch);
	KUNIT_ASSERT_NOT_NULL(test, e->ioctx);
	KUNIT_ASSERT_NOT_NULL(test, e->rsp);
	e->ch->max_ti_iu_len = SRPT_DEF_RSP_SIZE;
	e->ch->max_rsp_size = SRPT_DEF_RSP_SIZE;
	atomic_set(&e->ch->req_lim_delta, 2);
	e->ioctx->ch = e->ch;
	e->ioctx->ioctx.buf = e->rsp;
	memset(e->rsp, 0xaa, SRPT_MAX_RSP_SIZE);
}

static void srpt_test_rsp_good(struct kunit *test)
{
	struct rsp_env e;
	int len;

	rsp_env_init(test, &e);
	len = srpt_build_cmd_rsp(e.ch, e.ioctx, 0x1122334455667788ULL,
				 SAM_STAT_GOOD);
	KUNIT_EXPECT_EQ(test, len, (int)sizeof(struct srp_rsp));
	KUNIT_EXPECT_EQ(test, e.rsp->opcode, SRP_RSP);
	KUNIT_EXPECT_EQ(test, e.rsp->tag, 0x1122334455667788ULL);
	KUNIT_EXPECT_EQ(test, e.rsp->status, SAM_STAT_GOOD);
	KUNIT_EXPECT_EQ(test, e.rsp->flags, 0);
	/* Its own credit plus the two of aborted commands. */
	KUNIT_EXPECT_EQ(test, be32_to_cpu(e.rsp->req_lim_delta), 3);
	KUNIT_EXPECT_EQ(test, atomic_read(&e.ch->req_lim_delta), 0);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(e.rsp->sense_data_len), 0);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(e.rsp->data_in_res_cnt), 0);
}

static void srpt_test_rsp_residuals(struct kunit *test)
{
	struct se_cmd *cmd;
	struct rsp_env e;

	rsp_env_init(test, &e);
	cmd = &e.ioctx->cmd;
	cmd->se_cmd_flags = SCF_UNDERFLOW_BIT;
	cmd->data_direction = DMA_FROM_DEVICE;
	cmd->residual_count = 512;
	srpt_build_cmd_rsp(e.ch, e.ioctx, 1, SAM_STAT_GOOD);
	KUNIT_EXPECT_EQ(test, e.rsp->flags, SRP_RSP_FLAG_DIUNDER);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(e.rsp->data_in_res_cnt), 512);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(e.rsp->data_out_res_cnt), 0);

	cmd->se_cmd_flags = SCF_OVERFLOW_BIT;
	cmd->data_direction = DMA_TO_DEVICE;
	cmd->residual_count = 4096;
	srpt_build_cmd_rsp(e.ch, e.ioctx, 1, SAM_STAT_GOOD);
	KUNIT_EXPECT_EQ(test, e.rsp->flags, SRP_RSP_FLAG_DOOVER);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(e.rsp->data_out_res_cnt), 4096);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(e.rsp->data_in_res_cnt), 0);

	cmd->se_cmd_flags = SCF_UNDERFLOW_BIT;
	srpt_build_cmd_rsp(e.ch, e.ioctx, 1, SAM_STAT_GOOD);
	KUNIT_EXPECT_EQ(test, e.rsp->flags, SRP_RSP_FLAG_DOUNDER);

	cmd->se_cmd_flags = SCF_OVERFLOW_BIT;
	cmd->data_direction = DMA_FROM_DEVICE;
	srpt_build_cmd_rsp(e.ch, e.ioctx, 1, SAM_STAT_GOOD);
	KUNIT_EXPECT_EQ(test, e.rsp->flags, SRP_RSP_FLAG_DIOVER);
}

static void srpt_test_rsp_sense(struct kunit *test)
{
	struct se_cmd *cmd;
	struct rsp_env e;
	int i, len;

	rsp_env_init(test, &e);
	cmd = &e.ioctx->cmd;
	for (i = 0; i < sizeof(e.ioctx->sense_data); i++)
		e.ioctx->sense_data[i] = i;
	cmd->scsi_sense_length = 18;
	len = srpt_build_cmd_rsp(e.ch, e.ioctx, 7, SAM_STAT_CHECK_CONDITION);
	KUNIT_EXPECT_EQ(test, len, (int)sizeof(struct srp_rsp) + 18);
	KUNIT_EXPECT_EQ(test, e.rsp->status, SAM_STAT_CHECK_CONDITION);
	KUNIT_EXPECT_EQ(test, e.rsp->flags, SRP_RSP_FLAG_SNSVALID);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(e.rsp->sense_data_len), 18);
	KUNIT_EXPECT_MEMEQ(test, e.rsp->data, e.ioctx->sense_data, 18);

	/* The initiator accepts only 40-byte IUs: 4 bytes of sense fit. */
	e.ch->max_ti_iu_len = 40;
	len = srpt_build_cmd_rsp(e.ch, e.ioctx, 7, SAM_STAT_CHECK_CONDITION);
	KUNIT_EXPECT_EQ(test, len, 40);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(e.rsp->sense_data_len), 4);

	/* The response buffer is the tighter bound. */
	e.ch->max_ti_iu_len = 1024;
	e.ch->max_rsp_size = 48;
	len = srpt_build_cmd_rsp(e.ch, e.ioctx, 7, SAM_STAT_CHECK_CONDITION);
	KUNIT_EXPECT_EQ(test, len, 48);

	/* A sense length beyond the sense buffer is cut to the buffer. */
	e.ch->max_rsp_size = SRPT_MAX_RSP_SIZE;
	cmd->scsi_sense_length = 200;
	len = srpt_build_cmd_rsp(e.ch, e.ioctx, 7, SAM_STAT_CHECK_CONDITION);
	KUNIT_EXPECT_EQ(test, len, (int)(sizeof(struct srp_rsp) +
					 TRANSPORT_SENSE_BUFFER));
}

static void srpt_test_rsp_tmf(struct kunit *test)
{
	struct rsp_env e;
	int len;

	rsp_env_init(test, &e);
	len = srpt_build_tskmgmt_rsp(e.ch, e.ioctx, SRPT_TMF_NOT_SUPPORTED, 99);
	KUNIT_EXPECT_EQ(test, len, (int)sizeof(struct srp_rsp) + 4);
	KUNIT_EXPECT_EQ(test, e.rsp->opcode, SRP_RSP);
	KUNIT_EXPECT_EQ(test, e.rsp->tag, 99);
	KUNIT_EXPECT_EQ(test, e.rsp->flags, SRP_RSP_FLAG_RSPVALID);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(e.rsp->resp_data_len), 4);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(e.rsp->req_lim_delta), 3);
	KUNIT_EXPECT_EQ(test, e.rsp->data[0], 0);
	KUNIT_EXPECT_EQ(test, e.rsp->data[3], SRPT_TMF_NOT_SUPPORTED);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(e.rsp->sense_data_len), 0);
}

/* ------------------------------------------------------------------ */
/* Channels on a fake HCA: receive errors, QP events, credits          */
/* ------------------------------------------------------------------ */

/* A fake HCA that counts the work requests posted to it. */
struct fake_hca {
	struct ib_device dev;
	struct ib_qp qp;
	struct ib_srq srq;
	struct se_session sess;
	int sends;
	int recvs;
	int srq_recvs;
	int dreps;
	bool fail_send;
	/* a channel whose backlog each post looks at, as a completion would */
	struct srpt_rdma_ch *watch_ch;
	int saw_empty_backlog;
};

static struct fake_hca *to_fake(struct ib_device *dev)
{
	return container_of(dev, struct fake_hca, dev);
}

static int fake_post_send(struct ib_qp *qp, const struct ib_send_wr *wr,
			  const struct ib_send_wr **bad)
{
	struct fake_hca *h = to_fake(qp->device);

	if (h->fail_send) {
		*bad = wr;
		return -ENOMEM;
	}
	h->sends++;
	if (h->watch_ch && list_empty(&h->watch_ch->rsp_backlog))
		h->saw_empty_backlog++;
	return 0;
}

static int fake_post_recv(struct ib_qp *qp, const struct ib_recv_wr *wr,
			  const struct ib_recv_wr **bad)
{
	to_fake(qp->device)->recvs++;
	return 0;
}

static int fake_post_srq_recv(struct ib_srq *srq, const struct ib_recv_wr *wr,
			      const struct ib_recv_wr **bad)
{
	to_fake(srq->device)->srq_recvs++;
	return 0;
}

static void fake_sess_free(void *sbq)
{
	sbitmap_queue_free(sbq);
}

/* A LIVE channel on port 1 of a fake HCA, with a session of 4 tags. */
static struct srpt_rdma_ch *fake_ch(struct kunit *test, struct fake_hca **hp)
{
	struct fake_hca *h = kunit_kzalloc(test, sizeof(*h), GFP_KERNEL);
	struct srpt_device *sdev;
	struct srpt_rdma_ch *ch;

	sdev = kunit_kzalloc(test, struct_size(sdev, port, 1), GFP_KERNEL);
	ch = kunit_kzalloc(test, sizeof(*ch), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, h);
	KUNIT_ASSERT_NOT_NULL(test, sdev);
	KUNIT_ASSERT_NOT_NULL(test, ch);
	KUNIT_ASSERT_EQ(test, sbitmap_queue_init_node(&h->sess.sess_tag_pool,
						      4, -1, false, GFP_KERNEL,
						      NUMA_NO_NODE), 0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, fake_sess_free,
							&h->sess.sess_tag_pool),
			0);
	h->dev.ops.post_send = fake_post_send;
	h->dev.ops.post_recv = fake_post_recv;
	h->dev.ops.post_srq_recv = fake_post_srq_recv;
	h->qp.device = &h->dev;
	h->qp.qp_context = ch;
	h->srq.device = &h->dev;
	sdev->device = &h->dev;
	sdev->srq = &h->srq;
	sdev->port[0].sdev = sdev;
	sdev->port[0].port = 1;
	mutex_init(&sdev->port[0].mutex);
	srpt_init_ch(ch, &sdev->port[0]);
	ch->qp = &h->qp;
	ch->sess = &h->sess;
	ch->rq_size = 4;
	ch->max_ti_iu_len = SRPT_DEF_RSP_SIZE;
	ch->max_rsp_size = SRPT_DEF_RSP_SIZE;
	atomic_set(&ch->req_lim, ch->rq_size);
	atomic_set(&ch->sq_wr_avail, 8);
	strscpy(ch->sess_name, "kunit");
	srpt_set_ch_state(ch, CH_LIVE);
	*hp = h;
	return ch;
}

/* A send context of @ch with a response buffer, as the pool hands out. */
static struct srpt_send_ioctx *fake_rsp_ioctx(struct kunit *test,
					      struct srpt_rdma_ch *ch)
{
	struct srpt_send_ioctx *ioctx;

	ioctx = kunit_kzalloc(test, sizeof(*ioctx), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ioctx);
	ioctx->ioctx.buf = kunit_kzalloc(test, SRPT_MAX_RSP_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ioctx->ioctx.buf);
	ioctx->ch = ch;
	return ioctx;
}

/*
 * Whether srpt_ch_fatal() took a channel reference for its work. The
 * caller holds the port mutex, so the work cannot act yet; it is then made
 * harmless (the channel marked released) and waited for.
 */
static bool fatal_queued(struct kunit *test, struct srpt_rdma_ch *ch)
{
	bool queued = kref_read(&ch->kref) == 2;

	srpt_set_ch_state(ch, CH_DISCONNECTED);
	mutex_unlock(&ch->sport->mutex);
	flush_work(&ch->fatal_work);
	KUNIT_EXPECT_EQ(test, kref_read(&ch->kref), 1);
	return queued;
}

static void srpt_test_recv_error(struct kunit *test)
{
	struct srpt_recv_ioctx *recv;
	struct srpt_rdma_ch *ch;
	struct fake_hca *h;
	struct ib_wc wc = { .status = IB_WC_WR_FLUSH_ERR };

	ch = fake_ch(test, &h);
	recv = kunit_kzalloc(test, sizeof(*recv), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, recv);
	INIT_LIST_HEAD(&recv->wait_list);
	wc.wr_cqe = &recv->ioctx.cqe;
	wc.qp = &h->qp;

	/* A flushed SRQ buffer goes back to the SRQ, nothing else happens. */
	ch->use_srq = true;
	mutex_lock(&ch->sport->mutex);
	srpt_recv_done(NULL, &wc);
	KUNIT_EXPECT_EQ(test, h->srq_recvs, 1);
	KUNIT_EXPECT_EQ(test, kref_read(&ch->kref), 1);

	/* A real error also closes the channel. */
	wc.status = IB_WC_LOC_LEN_ERR;
	srpt_recv_done(NULL, &wc);
	KUNIT_EXPECT_EQ(test, h->srq_recvs, 2);
	KUNIT_EXPECT_TRUE(test, fatal_queued(test, ch));

	/* A channel's own buffer is not reposted once it is going away. */
	ch = fake_ch(test, &h);
	wc.qp = &h->qp;
	mutex_lock(&ch->sport->mutex);
	srpt_recv_done(NULL, &wc);
	KUNIT_EXPECT_EQ(test, h->recvs + h->srq_recvs, 0);
	KUNIT_EXPECT_TRUE(test, fatal_queued(test, ch));
}

struct qp_event_case {
	const char *name;
	enum ib_event_type event;
	enum srpt_ch_state state;
	bool closes;
};

static const struct qp_event_case qp_event_cases[] = {
	{ "fatal on a live channel", IB_EVENT_QP_FATAL, CH_LIVE, true },
	{ "request error", IB_EVENT_QP_REQ_ERR, CH_LIVE, true },
	{ "access error", IB_EVENT_QP_ACCESS_ERR, CH_LIVE, true },
	{ "fatal while disconnecting", IB_EVENT_QP_FATAL, CH_DISCONNECTING,
	  true },
	{ "fatal while draining", IB_EVENT_QP_FATAL, CH_DRAINING, false },
	{ "last WQE reached", IB_EVENT_QP_LAST_WQE_REACHED, CH_LIVE, false },
	{ "path migrated", IB_EVENT_PATH_MIG, CH_LIVE, false },
};

KUNIT_ARRAY_PARAM_DESC(qp_event, qp_event_cases, name);

static void srpt_test_qp_event(struct kunit *test)
{
	const struct qp_event_case *c = test->param_value;
	struct srpt_rdma_ch *ch;
	struct fake_hca *h;
	struct ib_event ev = { .event = c->event };

	ch = fake_ch(test, &h);
	ev.element.qp = &h->qp;
	srpt_set_ch_state(ch, c->state);
	mutex_lock(&ch->sport->mutex);
	srpt_qp_event(&ev, ch);
	KUNIT_EXPECT_EQ(test, fatal_queued(test, ch), c->closes);
}

static void srpt_test_credits(struct kunit *test)
{
	struct srpt_rdma_ch *ch;
	struct fake_hca *h;

	ch = fake_ch(test, &h);
	atomic_set(&ch->req_lim, 2);
	KUNIT_EXPECT_TRUE(test, srpt_charge_credit(ch, SRP_CMD));
	/* Logouts, answers to target requests and short IUs are free. */
	KUNIT_EXPECT_TRUE(test, srpt_charge_credit(ch, SRP_I_LOGOUT));
	KUNIT_EXPECT_TRUE(test, srpt_charge_credit(ch, SRP_CRED_RSP));
	KUNIT_EXPECT_TRUE(test, srpt_charge_credit(ch, -EINVAL));
	KUNIT_EXPECT_EQ(test, atomic_read(&ch->req_lim), 1);
	KUNIT_EXPECT_TRUE(test, srpt_charge_credit(ch, SRP_TSK_MGMT));
	KUNIT_EXPECT_EQ(test, atomic_read(&ch->req_lim), 0);
	/* One request more than the credits granted. */
	KUNIT_EXPECT_FALSE(test, srpt_charge_credit(ch, SRP_CMD));
}

/* Credits returned by a response count from the moment it is posted. */
static void srpt_test_credits_returned(struct kunit *test)
{
	struct srpt_send_ioctx *ioctx;
	struct srpt_rdma_ch *ch;
	struct srp_rsp *rsp;
	struct fake_hca *h;

	ch = fake_ch(test, &h);
	ioctx = fake_rsp_ioctx(test, ch);
	rsp = ioctx->ioctx.buf;
	atomic_set(&ch->req_lim, 0);
	atomic_set(&ch->req_lim_delta, 2);

	srpt_send_local_tmf_rsp(ch, ioctx, SRPT_TMF_COMPLETE, 5);
	KUNIT_EXPECT_EQ(test, h->sends, 1);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(rsp->req_lim_delta), 3);
	KUNIT_EXPECT_EQ(test, atomic_read(&ch->req_lim), 3);
	KUNIT_EXPECT_EQ(test, atomic_read(&ch->req_lim_delta), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&ch->sq_wr_avail), 7);

	/* Not posted: the credits wait for the next response. */
	h->fail_send = true;
	atomic_set(&ch->req_lim_delta, 1);
	srpt_send_local_tmf_rsp(ch, ioctx, SRPT_TMF_COMPLETE, 6);
	KUNIT_EXPECT_EQ(test, h->sends, 1);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(rsp->req_lim_delta), 2);
	KUNIT_EXPECT_EQ(test, atomic_read(&ch->req_lim), 3);
	KUNIT_EXPECT_EQ(test, atomic_read(&ch->req_lim_delta), 2);
	KUNIT_EXPECT_EQ(test, atomic_read(&ch->sq_wr_avail), 7);
	KUNIT_EXPECT_EQ(test, ioctx->state, SRPT_STATE_DONE);
}

/* The fake QP's modify_qp(): any state change succeeds. */
static int fake_modify_qp(struct ib_qp *qp, struct ib_qp_attr *attr,
			  int attr_mask, struct ib_udata *udata)
{
	return 0;
}

/* Replaces srpt_send_cm_drep(): counts the DREP on the channel's HCA. */
static int fake_send_cm_drep(struct srpt_rdma_ch *ch)
{
	to_fake(ch->qp->device)->dreps++;
	return 0;
}

struct dreq_case {
	const char *name;
	enum srpt_ch_state state;
};

static const struct dreq_case dreq_cases[] = {
	{ "on a live channel", CH_LIVE },
	/* Our DREQ is out (lost, say): the initiator's crossed it. */
	{ "crossing ours", CH_DISCONNECTING },
};

KUNIT_ARRAY_PARAM_DESC(dreq, dreq_cases, name);

/*
 * An initiator's DREQ over IB CM gets a DREP, also when it crossed ours:
 * the CM then waits for our DREP as for any DREQ received, and without
 * one the initiator retries its DREQ until it times out.  The channel
 * closes either way: QP to error, drain marker posted.
 */
static void srpt_test_dreq(struct kunit *test)
{
	const struct dreq_case *c = test->param_value;
	struct ib_cm_event ev = { .event = IB_CM_DREQ_RECEIVED };
	struct ib_cm_id *cm_id;
	struct srpt_rdma_ch *ch;
	struct fake_hca *h;

	ch = fake_ch(test, &h);
	cm_id = kunit_kzalloc(test, sizeof(*cm_id), GFP_KERNEL);
	h->dev.port_data = kunit_kcalloc(test, 2, sizeof(*h->dev.port_data),
					 GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, cm_id);
	KUNIT_ASSERT_NOT_NULL(test, h->dev.port_data);
	h->dev.ops.modify_qp = fake_modify_qp;
	h->qp.real_qp = &h->qp;
	cm_id->context = ch;
	ch->ib_cm_id = cm_id;
	srpt_set_ch_state(ch, c->state);
	kunit_activate_static_stub(test, srpt_send_cm_drep, fake_send_cm_drep);

	KUNIT_EXPECT_EQ(test, srpt_cm_handler(cm_id, &ev), 0);
	KUNIT_EXPECT_EQ(test, h->dreps, 1);
	KUNIT_EXPECT_EQ(test, ch->state, CH_DRAINING);
	KUNIT_EXPECT_EQ(test, h->sends, 1);
}

/* ------------------------------------------------------------------ */
/* Send-side errors, data directions, RDMA READ depths                 */
/* ------------------------------------------------------------------ */

struct send_err_case {
	const char *name;
	enum ib_wc_status status;
	enum srpt_ch_state state;
	bool closes;
};

static const struct send_err_case send_err_cases[] = {
	{ "success", IB_WC_SUCCESS, CH_LIVE, false },
	{ "bad R_Key", IB_WC_REM_ACCESS_ERR, CH_LIVE, true },
	{ "retries exceeded", IB_WC_RETRY_EXC_ERR, CH_LIVE, true },
	/* An unsignaled RDMA WRITE failed before: only its flush reaches us. */
	{ "flushed on a live channel", IB_WC_WR_FLUSH_ERR, CH_LIVE, true },
	{ "error while disconnecting", IB_WC_REM_ACCESS_ERR, CH_DISCONNECTING,
	  true },
	{ "flushed while disconnecting", IB_WC_WR_FLUSH_ERR, CH_DISCONNECTING,
	  false },
	{ "flushed while draining", IB_WC_WR_FLUSH_ERR, CH_DRAINING, false },
};

KUNIT_ARRAY_PARAM_DESC(send_err, send_err_cases, name);

/*
 * A response whose send failed leaves the QP in the error state: the
 * channel must be closed like after any fatal error, so that its session
 * goes away; flushes of a channel already closing change nothing.
 */
static void srpt_test_send_error(struct kunit *test)
{
	const struct send_err_case *c = test->param_value;
	struct srpt_send_ioctx *ioctx;
	struct srpt_rdma_ch *ch;
	struct fake_hca *h;
	struct ib_wc wc = { .status = c->status };

	ch = fake_ch(test, &h);
	ioctx = fake_rsp_ioctx(test, ch);
	srpt_send_local_tmf_rsp(ch, ioctx, SRPT_TMF_COMPLETE, 9);
	KUNIT_ASSERT_EQ(test, h->sends, 1);
	srpt_set_ch_state(ch, c->state);
	wc.wr_cqe = &ioctx->ioctx.cqe;
	wc.qp = &h->qp;

	mutex_lock(&ch->sport->mutex);
	srpt_send_done(NULL, &wc);
	KUNIT_EXPECT_EQ(test, ioctx->state, SRPT_STATE_DONE);
	KUNIT_EXPECT_EQ(test, atomic_read(&ch->sq_wr_avail), 8);
	KUNIT_EXPECT_EQ(test, fatal_queued(test, ch), c->closes);
}

/*
 * srpt_send_done() and the command's last reference.  The channel closed
 * and its release work waits for the session's commands; when the last
 * one goes, the release frees the channel unless someone else holds it.
 * A kprobe on sbitmap_queue_clear() (the end of a local context, as
 * srpt_send_done() ends it) plays that release: if its reference is the
 * only one left when the command goes, the channel is freed from then on.
 * A kprobe on srpt_process_wait_list() counts calls on a freed channel.
 * Before 948d0ee srpt_send_done() took no reference and walked the wait
 * list after the free.
 */
struct send_done_race {
	struct kprobe tag_free;
	struct kprobe wait_list;
	struct srpt_rdma_ch *ch;
	int tag_frees;
	bool freed;
	int touched_after;
};

static int send_done_tag_free(struct kprobe *p, struct pt_regs *regs)
{
	struct send_done_race *r = container_of(p, struct send_done_race,
						tag_free);

	if (regs_get_kernel_argument(regs, 0) !=
	    (unsigned long)&r->ch->sess->sess_tag_pool)
		return 0;
	r->tag_frees++;
	if (kref_read(&r->ch->kref) == 1)
		WRITE_ONCE(r->freed, true);
	return 0;
}

static int send_done_wait_list(struct kprobe *p, struct pt_regs *regs)
{
	struct send_done_race *r = container_of(p, struct send_done_race,
						wait_list);

	if (regs_get_kernel_argument(regs, 0) == (unsigned long)r->ch &&
	    READ_ONCE(r->freed))
		r->touched_after++;
	return 0;
}

static void srpt_test_send_done_last_ref(struct kunit *test)
{
	struct send_done_race *r;
	struct srpt_send_ioctx *ioctx;
	struct fake_hca *h;
	struct ib_wc wc = { .status = IB_WC_WR_FLUSH_ERR };

	if (!IS_ENABLED(CONFIG_KPROBES))
		kunit_skip(test, "needs CONFIG_KPROBES");
	r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r);
	r->ch = fake_ch(test, &h);
	ioctx = fake_rsp_ioctx(test, r->ch);
	srpt_send_local_tmf_rsp(r->ch, ioctx, SRPT_TMF_COMPLETE, 9);
	KUNIT_ASSERT_EQ(test, h->sends, 1);
	/* Closed and drained: the release work waits for this command. */
	srpt_set_ch_state(r->ch, CH_DISCONNECTED);

	r->tag_free.symbol_name = "sbitmap_queue_clear";
	r->tag_free.pre_handler = send_done_tag_free;
	r->wait_list.symbol_name = "srpt_process_wait_list";
	r->wait_list.pre_handler = send_done_wait_list;
	KUNIT_ASSERT_EQ(test, register_kprobe(&r->tag_free), 0);
	if (register_kprobe(&r->wait_list)) {
		unregister_kprobe(&r->tag_free);
		KUNIT_FAIL_AND_ABORT(test, "cannot probe srpt_process_wait_list");
	}
	wc.wr_cqe = &ioctx->ioctx.cqe;
	wc.qp = &h->qp;
	srpt_send_done(NULL, &wc);
	unregister_kprobe(&r->wait_list);
	unregister_kprobe(&r->tag_free);

	/* The probe saw the command go, so the case cannot pass by a miss. */
	KUNIT_EXPECT_EQ(test, r->tag_frees, 1);
	KUNIT_EXPECT_EQ(test, ioctx->state, SRPT_STATE_DONE);
	KUNIT_EXPECT_FALSE_MSG(test, r->freed,
			       "the release could free the channel under srpt_send_done()");
	KUNIT_EXPECT_EQ_MSG(test, r->touched_after, 0,
			    "srpt_send_done() walked the wait list of a freed channel");
	KUNIT_EXPECT_EQ(test, kref_read(&r->ch->kref), 1);
}

struct dir_case {
	const char *name;
	u8 cdb[16];
	enum dma_data_direction dir;
	bool fits;
};

static const struct dir_case dir_cases[] = {
	{ "READ(10) in", { READ_10 }, DMA_FROM_DEVICE, true },
	{ "READ(10) out", { READ_10 }, DMA_TO_DEVICE, false },
	{ "READ(16) out", { READ_16 }, DMA_TO_DEVICE, false },
	{ "WRITE(10) out", { WRITE_10 }, DMA_TO_DEVICE, true },
	{ "WRITE(10) in", { WRITE_10 }, DMA_FROM_DEVICE, false },
	{ "WRITE VERIFY in", { WRITE_VERIFY }, DMA_FROM_DEVICE, false },
	{ "COMPARE AND WRITE out", { COMPARE_AND_WRITE }, DMA_TO_DEVICE,
	  true },
	{ "COMPARE AND WRITE in", { COMPARE_AND_WRITE }, DMA_FROM_DEVICE,
	  false },
	{ "WRITE SAME(10) in", { WRITE_SAME }, DMA_FROM_DEVICE, false },
	{ "WRITE SAME(16) in", { WRITE_SAME_16 }, DMA_FROM_DEVICE, false },
	{ "WRITE SAME(32) in",
	  { VARIABLE_LENGTH_CMD, [7] = 0x18, [9] = WRITE_SAME_32 },
	  DMA_FROM_DEVICE, false },
	{ "WRITE SAME(16) without data", { WRITE_SAME_16 }, DMA_NONE, true },
	{ "UNMAP in", { UNMAP }, DMA_FROM_DEVICE, false },
	{ "VERIFY(16) in", { VERIFY_16 }, DMA_FROM_DEVICE, false },
	{ "MODE SELECT(10) in", { MODE_SELECT_10 }, DMA_FROM_DEVICE, false },
	{ "PERSISTENT RESERVE OUT in", { PERSISTENT_RESERVE_OUT },
	  DMA_FROM_DEVICE, false },
	{ "INQUIRY in", { INQUIRY }, DMA_FROM_DEVICE, true },
	{ "INQUIRY out", { INQUIRY }, DMA_TO_DEVICE, false },
	{ "READ CAPACITY(16) out", { SERVICE_ACTION_IN_16, 0x10 },
	  DMA_TO_DEVICE, false },
	{ "REPORT LUNS out", { REPORT_LUNS }, DMA_TO_DEVICE, false },
	{ "MODE SENSE(10) out", { MODE_SENSE_10 }, DMA_TO_DEVICE, false },
	{ "TEST UNIT READY", { TEST_UNIT_READY }, DMA_NONE, true },
	/* What LIO rejects on its own is left to LIO. */
	{ "unknown opcode out", { 0xc5 }, DMA_TO_DEVICE, true },
};

KUNIT_ARRAY_PARAM_DESC(dir, dir_cases, name);

/*
 * LIO moves data in the direction the fabric gives: any CDB whose
 * direction contradicts the descriptors' must be refused, not only
 * READ and WRITE.
 */
static void srpt_test_dir_fits_cdb(struct kunit *test)
{
	const struct dir_case *c = test->param_value;

	KUNIT_EXPECT_EQ(test, srpt_dir_fits_cdb(c->cdb, c->dir), c->fits);
}

/*
 * The REP's responder resources and initiator depth, and with them the
 * QP's RTR and RTS attributes, never exceed what the REQ offered, what
 * the HCA holds, or ib_srpt's own maximum.
 */
static void srpt_test_rd_atomic(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, srpt_rd_atomic_depth(8, 16), SRPT_RD_ATOMIC);
	KUNIT_EXPECT_EQ(test, srpt_rd_atomic_depth(1, 16), 1);
	KUNIT_EXPECT_EQ(test, srpt_rd_atomic_depth(0, 16), 0);
	KUNIT_EXPECT_EQ(test, srpt_rd_atomic_depth(8, 2), 2);
	KUNIT_EXPECT_EQ(test, srpt_rd_atomic_depth(3, 2), 2);
	KUNIT_EXPECT_EQ(test, srpt_rd_atomic_depth(255, 0), 0);
	KUNIT_EXPECT_EQ(test, srpt_rd_atomic_depth(SRPT_RD_ATOMIC, 128),
			SRPT_RD_ATOMIC);
}

/* The fake HCA's modify_port(): remembers the capability bits asked. */
static u32 fake_cap_set, fake_cap_clr;

static int fake_modify_port(struct ib_device *dev, u32 port, int mask,
			    struct ib_port_modify *pm)
{
	fake_cap_set |= pm->set_port_cap_mask;
	fake_cap_clr |= pm->clr_port_cap_mask;
	return 0;
}

/*
 * A port refresh (after a port event, an SM change, a client reset) sets
 * IsDeviceManagementSupported again even though the DM agent exists: the
 * event may have cleared the bit, and without it the SM's DM queries never
 * find the target. A port without MADs is left alone.
 */
static void srpt_test_dm_cap_refresh(struct kunit *test)
{
	struct ib_mad_agent *agent;
	struct srpt_rdma_ch *ch;
	struct srpt_port *sport;
	struct fake_hca *h;

	ch = fake_ch(test, &h);
	sport = ch->sport;
	agent = kunit_kzalloc(test, sizeof(*agent), GFP_KERNEL);
	h->dev.port_data = kunit_kcalloc(test, 2, sizeof(*h->dev.port_data),
					 GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, agent);
	KUNIT_ASSERT_NOT_NULL(test, h->dev.port_data);
	h->dev.phys_port_cnt = 1;
	h->dev.ops.modify_port = fake_modify_port;
	sport->mad_agent = agent;

	fake_cap_set = 0;
	fake_cap_clr = 0;
	srpt_port_enable_dm(sport);
	KUNIT_EXPECT_EQ(test, fake_cap_set | fake_cap_clr, 0);

	h->dev.port_data[1].immutable.core_cap_flags = RDMA_CORE_CAP_IB_MAD;
	srpt_port_enable_dm(sport);
	KUNIT_EXPECT_TRUE(test, fake_cap_set & IB_PORT_DEVICE_MGMT_SUP);
	KUNIT_EXPECT_FALSE(test, fake_cap_clr & IB_PORT_DEVICE_MGMT_SUP);
	KUNIT_EXPECT_PTR_EQ(test, sport->mad_agent, agent);
	sport->mad_agent = NULL;
}

/* A QP as created, the CQ entries reserved for it and what must come out. */
static const struct cq_case {
	const char *name;
	u32 cq_size, rq_size, send_wr, recv_wr, want;
	bool use_srq;
} cq_cases[] = {
	/* srp_sq_size 16 on rxe: 8 + 8 rdma_rw asked, 31 after rounding. */
	{ "rxe, sq 16", 145, 128, 31, 129, 160, false },
	/* The default 4096: 2048 + 2048 rounded up to 8191. */
	{ "rxe, sq 4096", 4225, 128, 8191, 129, 8320, false },
	/* iWARP: rdma_rw adds three work requests per context. */
	{ "MR factor 3", 4225, 128, 8192, 129, 8321, false },
	{ "exact fit", 4225, 128, 4096, 129, 4225, false },
	{ "SRQ", 145, 128, 31, 0, 160, true },
	{ "SRQ, exact fit", 145, 128, 16, 0, 145, true },
	{ "larger than needed", 9000, 128, 4096, 129, 9000, false },
};

KUNIT_ARRAY_PARAM_DESC(cq, cq_cases, name);

/* The CQ holds everything a full send and receive queue flush at once. */
static void srpt_test_cq_need(struct kunit *test)
{
	const struct cq_case *c = test->param_value;
	struct ib_qp_cap cap = {
		.max_send_wr = c->send_wr,
		.max_recv_wr = c->recv_wr,
	};

	KUNIT_EXPECT_EQ(test, srpt_ch_cq_need(c->cq_size, &cap, c->rq_size,
					      c->use_srq), c->want);
}

/* Frees what srpt_test_nexus left on the port. */
static void fake_nexus_free(void *data)
{
	struct srpt_port *sport = data;
	struct srpt_nexus *nexus, *next;

	list_for_each_entry_safe(nexus, next, &sport->nexus_list, entry) {
		list_del(&nexus->entry);
		kfree(nexus);
	}
}

/* The nexus of initiator port id @n from initiator @src. */
static struct srpt_nexus *get_src_nexus_n(struct kunit *test,
					  struct srpt_port *sport,
					  const char *src, u32 n)
{
	struct srpt_nexus *new = kzalloc(sizeof(*new), GFP_KERNEL);
	struct srpt_nexus *nexus;
	u8 i_id[16] = { 0x42 }, t_id[16] = { 0x17 };

	KUNIT_ASSERT_NOT_NULL(test, new);
	put_unaligned_be32(n, &i_id[12]);
	nexus = srpt_get_nexus(sport, i_id, t_id, src, new);
	if (nexus != new)
		kfree(new);
	return nexus;
}

/* The nexus of initiator port id @n, from one of many initiators. */
static struct srpt_nexus *get_nexus_n(struct kunit *test,
				      struct srpt_port *sport, u32 n)
{
	char src[16];

	/* Each initiator has a quarter of what it may have. */
	snprintf(src, sizeof(src), "src%u", n / (SRPT_MAX_NEXUS_PER_SRC / 4));
	return get_src_nexus_n(test, sport, src, n);
}

/*
 * A port keeps at most SRPT_MAX_NEXUS nexuses, finds a known pair beyond
 * that, and a nexus goes with its last channel.
 */
static void srpt_test_nexus(struct kunit *test)
{
	struct srpt_rdma_ch *ch, *ch2;
	struct srpt_port *sport;
	struct srpt_nexus *first;
	struct fake_hca *h;
	u32 i;

	ch = fake_ch(test, &h);
	ch2 = fake_ch(test, &h);
	sport = ch->sport;
	ch2->sport = sport;
	INIT_LIST_HEAD(&sport->nexus_list);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, fake_nexus_free,
							sport), 0);
	mutex_lock(&sport->mutex);
	first = get_nexus_n(test, sport, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(first));
	for (i = 1; i < SRPT_MAX_NEXUS; i++)
		KUNIT_ASSERT_FALSE(test, IS_ERR(get_nexus_n(test, sport, i)));
	KUNIT_EXPECT_EQ(test, sport->nr_nexus, SRPT_MAX_NEXUS);
	KUNIT_EXPECT_PTR_EQ(test, get_nexus_n(test, sport, 0), first);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(get_nexus_n(test, sport, i)),
			-EBUSY);

	/* Two channels in the first nexus: it goes with the second. */
	ch->nexus = first;
	ch2->nexus = first;
	list_add_tail(&ch->list, &first->ch_list);
	list_add_tail(&ch2->list, &first->ch_list);
	srpt_unlink_ch(ch);
	KUNIT_EXPECT_EQ(test, sport->nr_nexus, SRPT_MAX_NEXUS);
	srpt_unlink_ch(ch2);
	KUNIT_EXPECT_EQ(test, sport->nr_nexus, SRPT_MAX_NEXUS - 1);
	KUNIT_EXPECT_PTR_NE(test, list_first_entry(&sport->nexus_list,
						   struct srpt_nexus, entry),
			    first);
	/* Room again for a new pair. */
	KUNIT_EXPECT_FALSE(test, IS_ERR(get_nexus_n(test, sport, i)));
	mutex_unlock(&sport->mutex);
}

/*
 * One initiator varying its initiator port id gets at most
 * SRPT_MAX_NEXUS_PER_SRC nexuses on a port, and another initiator still
 * gets one: before, the first could take all SRPT_MAX_NEXUS and every
 * other login was refused.
 */
static void srpt_test_nexus_per_src(struct kunit *test)
{
	struct srpt_port *sport;
	struct srpt_rdma_ch *ch;
	struct fake_hca *h;
	u32 i;

	ch = fake_ch(test, &h);
	sport = ch->sport;
	INIT_LIST_HEAD(&sport->nexus_list);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, fake_nexus_free,
							sport), 0);
	mutex_lock(&sport->mutex);
	for (i = 0; i < SRPT_MAX_NEXUS_PER_SRC; i++)
		KUNIT_ASSERT_FALSE(test, IS_ERR(get_src_nexus_n(test, sport,
								"rogue", i)));
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(get_src_nexus_n(test, sport,
							      "rogue", i)),
			-EUSERS);
	/* A pair it has already is found, whatever its count. */
	KUNIT_EXPECT_FALSE(test, IS_ERR(get_src_nexus_n(test, sport, "rogue",
							0)));
	KUNIT_EXPECT_FALSE(test, IS_ERR(get_src_nexus_n(test, sport, "other",
							i + 1)));
	KUNIT_EXPECT_EQ(test, sport->nr_nexus, SRPT_MAX_NEXUS_PER_SRC + 1);
	mutex_unlock(&sport->mutex);
}

/* The data buffers of one channel's commands stay within its budget. */
static void srpt_test_data_budget(struct kunit *test)
{
	struct srpt_rdma_ch *ch;
	struct fake_hca *h;
	u32 i, n = SRPT_CH_DATA_BUDGET / SRPT_MAX_DATA_LEN;

	ch = fake_ch(test, &h);
	for (i = 0; i < n; i++)
		KUNIT_EXPECT_TRUE(test, srpt_ch_charge_data(ch,
							    SRPT_MAX_DATA_LEN));
	KUNIT_EXPECT_FALSE(test, srpt_ch_charge_data(ch, SRPT_MAX_DATA_LEN));
	KUNIT_EXPECT_FALSE(test, srpt_ch_charge_data(ch, 4096));
	KUNIT_EXPECT_EQ(test, atomic_read(&ch->data_bytes),
			SRPT_CH_DATA_BUDGET);
	atomic_sub(SRPT_MAX_DATA_LEN, &ch->data_bytes);
	KUNIT_EXPECT_TRUE(test, srpt_ch_charge_data(ch, 4096));
}

/*
 * A command is charged what its buffers pin, not the bytes it moves: each
 * remote buffer it reaches gets whole pages, and more than one an array of
 * contexts. 255 two-byte descriptors of a one-block READ cost 255 pages;
 * one 1 MiB buffer costs 1 MiB; descriptors past the command's length
 * cost nothing. Before, both were charged their data length (512 bytes):
 * about 131,000 such READs fitted in the budget where 64 MiB of pages
 * allow some 60.
 */
static void srpt_test_data_cost(struct kunit *test)
{
	struct srp_direct_buf *descs;
	struct srpt_desc_info info = { .dir = DMA_FROM_DEVICE, .n_desc = 255 };
	struct srpt_rdma_ch *ch;
	struct fake_hca *h;
	u64 cost;
	u32 i, fits = 0;

	descs = kunit_kcalloc(test, 255, sizeof(*descs), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, descs);
	for (i = 0; i < 255; i++)
		descs[i].len = cpu_to_be32(2);
	info.descs = descs;
	info.data_len = 510;
	cost = srpt_data_cost(&info, 510);
	KUNIT_EXPECT_EQ(test, cost,
			255 * (PAGE_SIZE + sizeof(struct srpt_rw_ctx)));
	/* The first three buffers reach 6 bytes. */
	KUNIT_EXPECT_EQ(test, srpt_data_cost(&info, 6),
			3 * (PAGE_SIZE + sizeof(struct srpt_rw_ctx)));

	descs[0].len = cpu_to_be32(SZ_1M);
	info.n_desc = 1;
	KUNIT_EXPECT_EQ(test, srpt_data_cost(&info, SZ_1M), SZ_1M);
	KUNIT_EXPECT_EQ(test, srpt_data_cost(&info, 1), PAGE_SIZE);

	ch = fake_ch(test, &h);
	while (srpt_ch_charge_data(ch, cost) && fits < 100000)
		fits++;
	KUNIT_EXPECT_EQ(test, fits, SRPT_CH_DATA_BUDGET / cost);
	KUNIT_EXPECT_LT(test, fits, 70);
}

/* ------------------------------------------------------------------ */
/* Command contexts and send queue slots                               */
/* ------------------------------------------------------------------ */

/* Command contexts come from the session's tags, reset for each command. */
static void srpt_test_get_send_ioctx(struct kunit *test)
{
	struct srpt_send_ioctx *got[4], *ioctx;
	struct srpt_rdma_ch *ch;
	struct fake_hca *h;
	int i, j;

	ch = fake_ch(test, &h);
	ch->ioctx_ring = kunit_kcalloc(test, ch->rq_size,
				       sizeof(*ch->ioctx_ring), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ch->ioctx_ring);
	for (i = 0; i < ch->rq_size; i++) {
		ioctx = kunit_kzalloc(test, sizeof(*ioctx), GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, ioctx);
		ioctx->ch = ch;
		/* What an earlier command left behind. */
		ioctx->state = SRPT_STATE_DONE;
		ioctx->n_rdma = 5;
		ioctx->n_rw_ctx = 2;
		ioctx->rw_len = 4096;
		ioctx->charged = 4096;
		ioctx->queue_status_only = true;
		ioctx->local = true;
		ioctx->rw_dir = DMA_TO_DEVICE;
		ioctx->cmd.tag = 77;
		ioctx->cmd.data_length = 512;
		ioctx->sense_data[0] = 0x70;
		ch->ioctx_ring[i] = ioctx;
	}

	for (i = 0; i < ch->rq_size; i++) {
		ioctx = srpt_get_send_ioctx(ch);
		KUNIT_ASSERT_NOT_NULL(test, ioctx);
		got[i] = ioctx;
		KUNIT_EXPECT_PTR_EQ(test, ch->ioctx_ring[ioctx->cmd.map_tag],
				    ioctx);
		for (j = 0; j < i; j++)
			KUNIT_EXPECT_PTR_NE(test, got[j], ioctx);
		KUNIT_EXPECT_EQ(test, ioctx->state, SRPT_STATE_NEW);
		KUNIT_EXPECT_EQ(test, ioctx->n_rdma, 0);
		KUNIT_EXPECT_EQ(test, ioctx->n_rw_ctx, 0);
		KUNIT_EXPECT_EQ(test, ioctx->rw_len, 0);
		KUNIT_EXPECT_EQ(test, ioctx->charged, 0);
		KUNIT_EXPECT_NULL(test, ioctx->rw_ctxs);
		KUNIT_EXPECT_FALSE(test, ioctx->queue_status_only);
		KUNIT_EXPECT_FALSE(test, ioctx->local);
		KUNIT_EXPECT_EQ(test, ioctx->rw_dir, DMA_NONE);
		KUNIT_EXPECT_EQ(test, ioctx->cmd.tag, 0);
		KUNIT_EXPECT_EQ(test, ioctx->cmd.data_length, 0);
		KUNIT_EXPECT_EQ(test, ioctx->sense_data[0], 0);
		KUNIT_EXPECT_PTR_EQ(test, ioctx->ch, ch);
	}
	/* Every credit is in use: the IU has to wait. */
	KUNIT_EXPECT_NULL(test, srpt_get_send_ioctx(ch));
	/* A context given back is the next one claimed. */
	target_free_tag(ch->sess, &got[2]->cmd);
	KUNIT_EXPECT_PTR_EQ(test, srpt_get_send_ioctx(ch), got[2]);
	for (i = 0; i < ch->rq_size; i++)
		target_free_tag(ch->sess, &got[i]->cmd);
}

/*
 * The RDMA READs of a write take their slots of the send queue or are not
 * posted at all: LIO retries on -EAGAIN.
 */
static void srpt_test_write_pending_slots(struct kunit *test)
{
	struct srpt_send_ioctx *ioctx;
	struct srpt_rdma_ch *ch;
	struct fake_hca *h;

	ch = fake_ch(test, &h);
	ioctx = kunit_kzalloc(test, sizeof(*ioctx), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ioctx);
	ioctx->ch = ch;
	ioctx->state = SRPT_STATE_NEW;
	ioctx->n_rdma = 3;

	atomic_set(&ch->sq_wr_avail, 2);
	KUNIT_EXPECT_EQ(test, srpt_write_pending(&ioctx->cmd), -EAGAIN);
	KUNIT_EXPECT_EQ(test, atomic_read(&ch->sq_wr_avail), 2);
	KUNIT_EXPECT_EQ(test, h->sends, 0);
	KUNIT_EXPECT_EQ(test, ioctx->state, SRPT_STATE_NEED_DATA);

	/* Posting fails: the slots come back as well. */
	atomic_set(&ch->sq_wr_avail, 8);
	h->fail_send = true;
	KUNIT_EXPECT_NE(test, srpt_write_pending(&ioctx->cmd), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&ch->sq_wr_avail), 8);

	h->fail_send = false;
	KUNIT_EXPECT_EQ(test, srpt_write_pending(&ioctx->cmd), 0);
	KUNIT_EXPECT_EQ(test, h->sends, 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&ch->sq_wr_avail), 5);
	KUNIT_EXPECT_EQ(test, ioctx->state, SRPT_STATE_NEED_DATA);
	KUNIT_EXPECT_NOT_NULL(test, ioctx->rdma_cqe.done);
}

/*
 * A read's response needs a slot for itself and one for each RDMA WRITE;
 * with too few free, nothing changes and LIO is told to retry.
 */
static void srpt_test_queue_response_slots(struct kunit *test)
{
	struct srpt_send_ioctx *ioctx;
	struct srpt_rdma_ch *ch;
	struct srp_rsp *rsp;
	struct fake_hca *h;

	ch = fake_ch(test, &h);
	ioctx = fake_rsp_ioctx(test, ch);
	rsp = ioctx->ioctx.buf;
	ioctx->state = SRPT_STATE_NEW;
	ioctx->n_rdma = 3;
	ioctx->cmd.data_direction = DMA_FROM_DEVICE;
	ioctx->cmd.tag = 11;
	atomic_set(&ch->req_lim, 0);
	atomic_set(&ch->req_lim_delta, 2);

	atomic_set(&ch->sq_wr_avail, 3);
	KUNIT_EXPECT_EQ(test, srpt_queue_response(&ioctx->cmd), -EAGAIN);
	KUNIT_EXPECT_EQ(test, ioctx->state, SRPT_STATE_NEW);
	KUNIT_EXPECT_EQ(test, atomic_read(&ch->sq_wr_avail), 3);
	KUNIT_EXPECT_EQ(test, atomic_read(&ch->req_lim), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&ch->req_lim_delta), 2);
	KUNIT_EXPECT_EQ(test, h->sends, 0);

	atomic_set(&ch->sq_wr_avail, 4);
	KUNIT_EXPECT_EQ(test, srpt_queue_response(&ioctx->cmd), 0);
	KUNIT_EXPECT_EQ(test, ioctx->state, SRPT_STATE_CMD_RSP_SENT);
	KUNIT_EXPECT_EQ(test, atomic_read(&ch->sq_wr_avail), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&ch->req_lim), 3);
	KUNIT_EXPECT_EQ(test, atomic_read(&ch->req_lim_delta), 0);
	KUNIT_EXPECT_EQ(test, h->sends, 1);
	KUNIT_EXPECT_EQ(test, rsp->opcode, SRP_RSP);
	KUNIT_EXPECT_EQ(test, rsp->tag, 11);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(rsp->req_lim_delta), 3);
}

/*
 * A status-only response and a TMF response that find the send queue full
 * are not dropped (LIO retries neither): they wait, and the completion that
 * frees a slot posts the first of them with the credits due then. The
 * release of the channel drops what still waits, its credit kept for the
 * next response.
 */
static void srpt_test_rsp_backlog(struct kunit *test)
{
	struct srpt_send_ioctx *busy, *st, *tmf;
	struct ib_wc wc = { .status = IB_WC_SUCCESS };
	struct srpt_rdma_ch *ch;
	struct srp_rsp *rsp;
	struct fake_hca *h;

	ch = fake_ch(test, &h);
	atomic_set(&ch->req_lim_delta, 0);
	atomic_set(&ch->sq_wr_avail, 1);
	busy = fake_rsp_ioctx(test, ch);
	srpt_send_local_tmf_rsp(ch, busy, SRPT_TMF_COMPLETE, 20);
	KUNIT_ASSERT_EQ(test, h->sends, 1);
	KUNIT_ASSERT_EQ(test, atomic_read(&ch->sq_wr_avail), 0);

	/* A write's status: LIO holds a reference besides the response's. */
	st = fake_rsp_ioctx(test, ch);
	rsp = st->ioctx.buf;
	st->state = SRPT_STATE_NEW;
	st->cmd.tag = 21;
	st->cmd.data_direction = DMA_TO_DEVICE;
	st->cmd.sense_buffer = st->sense_data;
	kref_init(&st->cmd.cmd_kref);
	kref_get(&st->cmd.cmd_kref);
	KUNIT_EXPECT_EQ(test, srpt_queue_status(&st->cmd), 0);
	KUNIT_EXPECT_EQ(test, h->sends, 1);
	KUNIT_EXPECT_EQ(test, kref_read(&st->cmd.cmd_kref), 2);
	KUNIT_EXPECT_EQ(test, st->state, SRPT_STATE_CMD_RSP_SENT);

	tmf = fake_rsp_ioctx(test, ch);
	srpt_send_local_tmf_rsp(ch, tmf, SRPT_TMF_FAILED, 22);
	KUNIT_EXPECT_EQ(test, h->sends, 1);
	KUNIT_EXPECT_EQ(test, tmf->state, SRPT_STATE_MGMT_RSP_SENT);
	KUNIT_EXPECT_EQ(test, atomic_read(&ch->sq_wr_avail), 0);

	/* The first response completes: its slot goes to the status. */
	wc.wr_cqe = &busy->ioctx.cqe;
	wc.qp = &h->qp;
	srpt_send_done(NULL, &wc);
	KUNIT_EXPECT_EQ(test, busy->state, SRPT_STATE_DONE);
	KUNIT_EXPECT_EQ(test, h->sends, 2);
	KUNIT_EXPECT_EQ(test, atomic_read(&ch->sq_wr_avail), 0);
	KUNIT_EXPECT_EQ(test, rsp->tag, 21);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(rsp->req_lim_delta), 1);
	KUNIT_EXPECT_EQ(test, tmf->state, SRPT_STATE_MGMT_RSP_SENT);

	/* Released with the TMF's response still waiting: dropped. */
	srpt_close_rsp_backlog(ch);
	KUNIT_EXPECT_EQ(test, tmf->state, SRPT_STATE_DONE);
	KUNIT_EXPECT_EQ(test, h->sends, 2);
	KUNIT_EXPECT_EQ(test, atomic_read(&ch->req_lim_delta), 1);
	/* From now on a response that finds no room is dropped at once. */
	tmf = fake_rsp_ioctx(test, ch);
	srpt_send_local_tmf_rsp(ch, tmf, SRPT_TMF_COMPLETE, 23);
	KUNIT_EXPECT_EQ(test, tmf->state, SRPT_STATE_DONE);
	KUNIT_EXPECT_EQ(test, atomic_read(&ch->req_lim_delta), 2);
}

/* A write's status-only response, with @tag, as srpt_test_rsp_backlog. */
static struct srpt_send_ioctx *fake_status_ioctx(struct kunit *test,
						 struct srpt_rdma_ch *ch,
						 u64 tag)
{
	struct srpt_send_ioctx *st = fake_rsp_ioctx(test, ch);

	st->state = SRPT_STATE_NEW;
	st->cmd.tag = tag;
	st->cmd.data_direction = DMA_TO_DEVICE;
	st->cmd.sense_buffer = st->sense_data;
	kref_init(&st->cmd.cmd_kref);
	kref_get(&st->cmd.cmd_kref);
	return st;
}

/*
 * A response does not overtake one that waits for room: with a status in
 * the backlog, a TMF response (the answer to an ABORT TASK naming that
 * command, say) goes behind it even when a slot is free, and the backlog
 * posts the status first. Before the fix the TMF response went straight
 * out and the status stayed behind.
 */
static void srpt_test_rsp_backlog_order(struct kunit *test)
{
	struct srpt_send_ioctx *st, *tmf;
	struct srpt_rdma_ch *ch;
	struct fake_hca *h;

	ch = fake_ch(test, &h);
	atomic_set(&ch->req_lim_delta, 0);
	atomic_set(&ch->sq_wr_avail, 0);
	st = fake_status_ioctx(test, ch, 31);
	KUNIT_EXPECT_EQ(test, srpt_queue_status(&st->cmd), 0);
	KUNIT_EXPECT_EQ(test, h->sends, 0);
	KUNIT_ASSERT_FALSE(test, list_empty(&ch->rsp_backlog));

	/* A slot came back whose completion has not looked yet. */
	atomic_set(&ch->sq_wr_avail, 1);
	tmf = fake_rsp_ioctx(test, ch);
	srpt_send_local_tmf_rsp(ch, tmf, SRPT_TMF_COMPLETE, 32);
	KUNIT_EXPECT_EQ(test, h->sends, 1);
	KUNIT_EXPECT_TRUE(test, list_is_singular(&ch->rsp_backlog));
	KUNIT_EXPECT_PTR_EQ(test, list_first_entry_or_null(&ch->rsp_backlog,
							   struct srpt_send_ioctx,
							   rsp_entry), tmf);
	KUNIT_EXPECT_EQ(test, atomic_read(&ch->sq_wr_avail), 0);
	srpt_close_rsp_backlog(ch);
	KUNIT_EXPECT_EQ(test, tmf->state, SRPT_STATE_DONE);
}

/*
 * While the backlog posts its head, the head is still on it: a completion
 * returning slots at that moment (srpt_return_slots() looks without the
 * lock) must see a backlog, or a response that then finds no room waits
 * for an unrelated completion. Before the fix the head was taken off for
 * the post and put back on -EAGAIN, and a completion in between saw an
 * empty backlog.
 */
static void srpt_test_rsp_backlog_visible(struct kunit *test)
{
	struct srpt_send_ioctx *a, *b;
	struct srpt_rdma_ch *ch;
	struct fake_hca *h;

	ch = fake_ch(test, &h);
	atomic_set(&ch->req_lim_delta, 0);
	atomic_set(&ch->sq_wr_avail, 0);
	a = fake_status_ioctx(test, ch, 41);
	b = fake_status_ioctx(test, ch, 42);
	KUNIT_EXPECT_EQ(test, srpt_queue_status(&a->cmd), 0);
	KUNIT_EXPECT_EQ(test, srpt_queue_status(&b->cmd), 0);
	KUNIT_ASSERT_EQ(test, h->sends, 0);

	h->watch_ch = ch;
	atomic_set(&ch->sq_wr_avail, 2);
	srpt_post_rsp_backlog(ch);
	KUNIT_EXPECT_EQ(test, h->sends, 2);
	KUNIT_EXPECT_EQ(test, h->saw_empty_backlog, 0);
	KUNIT_EXPECT_TRUE(test, list_empty(&ch->rsp_backlog));
	h->watch_ch = NULL;
}

/*
 * A read's response that finds the send queue full is not handed back to
 * LIO (whose queue-full work would call again at once, spinning a kworker
 * while the initiator keeps the queue full): it waits in the backlog, and
 * responses after it wait behind it, even one that would fit. When
 * completions make room, the work posts it, then what follows. Before,
 * srpt_queue_data_in() returned -EAGAIN.
 */
static void srpt_test_data_rsp_waits(struct kunit *test)
{
	struct srpt_send_ioctx *busy, *rd, *tmf;
	struct ib_wc wc = { .status = IB_WC_SUCCESS };
	struct srpt_rdma_ch *ch;
	struct fake_hca *h;

	ch = fake_ch(test, &h);
	atomic_set(&ch->req_lim_delta, 0);
	atomic_set(&ch->sq_wr_avail, 1);
	busy = fake_rsp_ioctx(test, ch);
	srpt_send_local_tmf_rsp(ch, busy, SRPT_TMF_COMPLETE, 60);
	KUNIT_ASSERT_EQ(test, h->sends, 1);

	rd = fake_status_ioctx(test, ch, 61);
	rd->cmd.data_direction = DMA_FROM_DEVICE;
	rd->n_rdma = 2;
	KUNIT_EXPECT_EQ(test, srpt_queue_data_rsp(&rd->cmd), 0);
	KUNIT_EXPECT_EQ(test, h->sends, 1);
	KUNIT_EXPECT_EQ(test, rd->state, SRPT_STATE_NEW);
	KUNIT_EXPECT_TRUE(test, list_is_singular(&ch->rsp_backlog));

	tmf = fake_rsp_ioctx(test, ch);
	srpt_send_local_tmf_rsp(ch, tmf, SRPT_TMF_COMPLETE, 62);

	/* One slot back: not enough for the read, and the TMF waits behind. */
	wc.wr_cqe = &busy->ioctx.cqe;
	wc.qp = &h->qp;
	srpt_send_done(NULL, &wc);
	flush_delayed_work(&ch->rsp_work);
	KUNIT_EXPECT_EQ(test, h->sends, 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&ch->sq_wr_avail), 1);
	KUNIT_EXPECT_PTR_EQ(test, list_first_entry_or_null(&ch->rsp_backlog,
							   struct srpt_send_ioctx,
							   rsp_entry), rd);

	/* Three more, as completions give them: the read, then the TMF. */
	atomic_add(3, &ch->sq_wr_avail);
	srpt_post_rsp_backlog(ch);
	flush_delayed_work(&ch->rsp_work);
	KUNIT_EXPECT_EQ(test, h->sends, 3);
	KUNIT_EXPECT_EQ(test, rd->state, SRPT_STATE_CMD_RSP_SENT);
	KUNIT_EXPECT_EQ(test, tmf->state, SRPT_STATE_MGMT_RSP_SENT);
	KUNIT_EXPECT_EQ(test, atomic_read(&ch->sq_wr_avail), 0);
	KUNIT_EXPECT_TRUE(test, list_empty(&ch->rsp_backlog));
	srpt_close_rsp_backlog(ch);
}

/*
 * A read's response waiting when the channel is released is dropped, its
 * command ended (its reference put) and its credit kept for the next
 * response.
 */
static void srpt_test_data_rsp_released(struct kunit *test)
{
	struct srpt_send_ioctx *rd;
	struct srpt_rdma_ch *ch;
	struct fake_hca *h;

	ch = fake_ch(test, &h);
	atomic_set(&ch->req_lim_delta, 0);
	atomic_set(&ch->sq_wr_avail, 0);
	rd = fake_status_ioctx(test, ch, 71);
	rd->cmd.data_direction = DMA_FROM_DEVICE;
	rd->n_rdma = 1;
	KUNIT_EXPECT_EQ(test, srpt_queue_data_rsp(&rd->cmd), 0);
	KUNIT_EXPECT_EQ(test, kref_read(&rd->cmd.cmd_kref), 2);
	srpt_close_rsp_backlog(ch);
	KUNIT_EXPECT_EQ(test, rd->state, SRPT_STATE_DONE);
	KUNIT_EXPECT_EQ(test, kref_read(&rd->cmd.cmd_kref), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&ch->req_lim_delta), 1);
	KUNIT_EXPECT_EQ(test, h->sends, 0);
}

static struct kunit_case srpt_test_cases[] = {
	KUNIT_CASE_PARAM(srpt_test_desc_tbl, desc_gen_params),
	KUNIT_CASE_PARAM(srpt_test_iu_opcode, iu_gen_params),
	KUNIT_CASE(srpt_test_set_ioc),
	KUNIT_CASE(srpt_test_class_port_info),
	KUNIT_CASE(srpt_test_iou),
	KUNIT_CASE(srpt_test_ioc_profile),
	KUNIT_CASE_PARAM(srpt_test_svc_entries, svc_gen_params),
	KUNIT_CASE(srpt_test_method_get),
	KUNIT_CASE(srpt_test_i_port_id),
	KUNIT_CASE(srpt_test_guid),
	KUNIT_CASE(srpt_test_wwn_names),
	KUNIT_CASE(srpt_test_acl_names),
	KUNIT_CASE_PARAM(srpt_test_login_req, login_gen_params),
	KUNIT_CASE(srpt_test_info_none),
	KUNIT_CASE(srpt_test_info_session),
	KUNIT_CASE(srpt_test_info_states),
	KUNIT_CASE(srpt_test_info_sessions),
	KUNIT_CASE(srpt_test_rsp_good),
	KUNIT_CASE(srpt_test_rsp_residuals),
	KUNIT_CASE(srpt_test_rsp_sense),
	KUNIT_CASE(srpt_test_rsp_tmf),
	KUNIT_CASE(srpt_test_recv_error),
	KUNIT_CASE_PARAM(srpt_test_qp_event, qp_event_gen_params),
	KUNIT_CASE(srpt_test_credits),
	KUNIT_CASE(srpt_test_credits_returned),
	KUNIT_CASE_PARAM(srpt_test_dreq, dreq_gen_params),
	KUNIT_CASE_PARAM(srpt_test_send_error, send_err_gen_params),
	KUNIT_CASE(srpt_test_send_done_last_ref),
	KUNIT_CASE_PARAM(srpt_test_dir_fits_cdb, dir_gen_params),
	KUNIT_CASE(srpt_test_rd_atomic),
	KUNIT_CASE(srpt_test_dm_cap_refresh),
	KUNIT_CASE_PARAM(srpt_test_cq_need, cq_gen_params),
	KUNIT_CASE(srpt_test_nexus),
	KUNIT_CASE(srpt_test_nexus_per_src),
	KUNIT_CASE(srpt_test_data_budget),
	KUNIT_CASE(srpt_test_data_cost),
	KUNIT_CASE(srpt_test_get_send_ioctx),
	KUNIT_CASE(srpt_test_write_pending_slots),
	KUNIT_CASE(srpt_test_queue_response_slots),
	KUNIT_CASE(srpt_test_rsp_backlog),
	KUNIT_CASE(srpt_test_rsp_backlog_order),
	KUNIT_CASE(srpt_test_rsp_backlog_visible),
	KUNIT_CASE(srpt_test_data_rsp_waits),
	KUNIT_CASE(srpt_test_data_rsp_released),
	{}
};

static struct kunit_suite srpt_test_suite = {
	.name = "ib_srpt",
	.test_cases = srpt_test_cases,
};

kunit_test_suite(srpt_test_suite);

MODULE_DESCRIPTION("KUnit tests for ib_srpt");
MODULE_LICENSE("GPL");
