// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * mad_rmpp_selftest - RMPP transfers between two kernel MAD agents.
 *
 * Loaded with the name of an RDMA device (soft-RoCE in the test VM), the
 * module registers, for a vendor class of range 2 (0x31, with an OUI) and
 * for Device Management, a responder agent for Get and Set and a send-only
 * requester agent, both with rmpp_version 1.  For each payload size the
 * requester sends an RMPP Set to its own port; the responder checks every
 * byte of the reassembled request and answers with an RMPP GetResp of the
 * same size, which the requester checks in turn.  This is the path kernel
 * clients take, without ib_umad in between.
 *
 * Results go to the kernel log as TAP lines prefixed "mad_rmpp_selftest: ";
 * loading fails with -EIO when a transfer failed.
 */
#include <linux/completion.h>
#include <linux/etherdevice.h>
#include <linux/module.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_verbs.h>

#define MRS_MAX_PAYLOAD		SZ_1M
#define MRS_ATTR_TEST		0xff10
#define MRS_WAIT_MS		120000

static char *mrs_dev = "rxe-veth0";
module_param_named(dev, mrs_dev, charp, 0444);
MODULE_PARM_DESC(dev, "RDMA device to test on");
static uint mrs_port = 1;
module_param_named(port, mrs_port, uint, 0444);
MODULE_PARM_DESC(port, "port number");
static uint mrs_gid_index;
module_param_named(gid_index, mrs_gid_index, uint, 0444);
MODULE_PARM_DESC(gid_index, "GID index to address ourselves with");

/**
 * struct mrs_class - a class under test
 * @name: for the log
 * @mgmt_class: management class
 * @hdr_len: class data offset
 * @oui: OUI of a vendor range 2 class
 */
struct mrs_class {
	const char *name;
	u8 mgmt_class;
	int hdr_len;
	u8 oui[3];
};

static const struct mrs_class mrs_classes[] = {
	{ "vendor 0x31", 0x31, IB_MGMT_VENDOR_HDR, { 0x00, 0x14, 0x05 } },
	{ "devmgt", IB_MGMT_CLASS_DEVICE_MGMT, IB_MGMT_DEVICE_HDR, {} },
};

static const u32 mrs_sizes[] = { 1, 200, 220, 4096, 65536, MRS_MAX_PAYLOAD };

/**
 * struct mrs_ctx - state of one class under test
 * @cls: the class
 * @req: requester agent (send-only)
 * @rsp: responder agent
 * @ah: address handle of our own port
 * @expect: scratch buffer for expected data
 * @size: payload size of the exchange in progress
 * @req_ok: the responder saw the request intact
 * @resp_ok: the requester saw the response intact
 * @send_status: completion status of the request
 * @sent: completed when the request's send handler ran
 * @why: first failure seen in a handler
 */
struct mrs_ctx {
	const struct mrs_class *cls;
	struct ib_mad_agent *req;
	struct ib_mad_agent *rsp;
	struct ib_ah *ah;
	u8 *expect;
	u32 size;
	bool req_ok;
	bool resp_ok;
	enum ib_wc_status send_status;
	struct completion sent;
	char why[96];
};

static int mrs_tap_n;
static int mrs_tap_failed;

static void mrs_tap(bool ok, const char *what, const char *why)
{
	mrs_tap_n++;
	if (!ok)
		mrs_tap_failed++;
	pr_info("mad_rmpp_selftest: %s %d - %s%s%s\n", ok ? "ok" : "not ok",
		mrs_tap_n, what, why && *why ? ": " : "", why ? why : "");
}

/* Deterministic data for one (class, size, direction). */
static void mrs_pattern(u8 *buf, u32 len, u8 mgmt_class, bool response)
{
	u32 x = 0x9e3779b9U ^ (len * 2654435761U) ^ ((u32)mgmt_class << 24) ^
		(response ? 0x5a5a5a5aU : 0);
	u32 i;

	for (i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		buf[i] = x >> 11;
	}
}

/* Compare a reassembled message with the data its sender must have sent. */
static int mrs_check(struct mrs_ctx *ctx, struct ib_mad_recv_wc *wc,
		     bool response)
{
	const struct mrs_class *c = ctx->cls;
	u32 seg_size = IB_MGMT_MAD_SIZE - c->hdr_len, off = 0, n;
	struct ib_mad_recv_buf *buf;

	if (wc->mad_len != c->hdr_len + ctx->size) {
		snprintf(ctx->why, sizeof(ctx->why), "mad_len %d, want %u",
			 wc->mad_len, c->hdr_len + ctx->size);
		return -EPROTO;
	}
	mrs_pattern(ctx->expect, ctx->size, c->mgmt_class, response);
	list_for_each_entry(buf, &wc->rmpp_list, list) {
		n = min(ctx->size - off, seg_size);
		if (!n)
			break;
		if (memcmp((u8 *)buf->mad + c->hdr_len, ctx->expect + off, n)) {
			snprintf(ctx->why, sizeof(ctx->why),
				 "data differ in bytes %u..%u", off, off + n);
			return -EPROTO;
		}
		off += n;
	}
	if (off != ctx->size) {
		snprintf(ctx->why, sizeof(ctx->why), "%u of %u bytes arrived",
			 off, ctx->size);
		return -EPROTO;
	}
	return 0;
}

/* An RMPP message of ctx->size bytes, headers copied from @hdr. */
static struct ib_mad_send_buf *mrs_build(struct mrs_ctx *ctx,
					 struct ib_mad_agent *agent,
					 u32 qpn, u16 pkey_index,
					 const struct ib_mad_hdr *hdr,
					 u8 method, bool response)
{
	const struct mrs_class *c = ctx->cls;
	struct ib_mad_send_buf *msg;
	struct ib_vendor_mad *vmad;
	struct ib_rmpp_mad *mad;
	u32 off, n;
	int seg;

	msg = ib_create_send_mad(agent, qpn, pkey_index, 1, c->hdr_len,
				 ctx->size, GFP_KERNEL, IB_MGMT_BASE_VERSION);
	if (IS_ERR(msg))
		return msg;
	mad = msg->mad;
	mad->mad_hdr = *hdr;
	mad->mad_hdr.method = method;
	mad->rmpp_hdr.rmpp_version = IB_MGMT_RMPP_VERSION;
	mad->rmpp_hdr.rmpp_type = IB_MGMT_RMPP_TYPE_DATA;
	ib_set_rmpp_flags(&mad->rmpp_hdr, IB_MGMT_RMPP_FLAG_ACTIVE);
	if (c->hdr_len == IB_MGMT_VENDOR_HDR) {
		vmad = msg->mad;
		memcpy(vmad->oui, c->oui, sizeof(vmad->oui));
	}

	mrs_pattern(ctx->expect, ctx->size, c->mgmt_class, response);
	for (seg = 1, off = 0; off < ctx->size; seg++, off += n) {
		n = min_t(u32, ctx->size - off, msg->seg_size);
		memcpy(ib_get_rmpp_segment(msg, seg), ctx->expect + off, n);
	}
	return msg;
}

static void mrs_rsp_send_handler(struct ib_mad_agent *agent,
				 struct ib_mad_send_wc *wc)
{
	rdma_destroy_ah(wc->send_buf->context[0], RDMA_DESTROY_AH_SLEEPABLE);
	ib_free_send_mad(wc->send_buf);
}

static void mrs_rsp_recv_handler(struct ib_mad_agent *agent,
				 struct ib_mad_send_buf *send_buf,
				 struct ib_mad_recv_wc *wc)
{
	struct mrs_ctx *ctx = agent->context;
	struct ib_mad_send_buf *msg;
	struct ib_ah *ah;

	ctx->req_ok = !mrs_check(ctx, wc, false);
	if (!ctx->req_ok)
		goto out_free;

	ah = ib_create_ah_from_wc(agent->qp->pd, wc->wc, wc->recv_buf.grh,
				  agent->port_num);
	if (IS_ERR(ah))
		goto out_free;
	msg = mrs_build(ctx, agent, wc->wc->src_qp, wc->wc->pkey_index,
			&wc->recv_buf.mad->mad_hdr, IB_MGMT_METHOD_GET_RESP, true);
	if (IS_ERR(msg))
		goto err_destroy_ah;
	msg->ah = ah;
	msg->context[0] = ah;
	msg->timeout_ms = 0;
	msg->retries = 5;
	if (ib_post_send_mad(msg, NULL))
		goto err_free_msg;
	goto out_free;

err_free_msg:
	ib_free_send_mad(msg);
err_destroy_ah:
	rdma_destroy_ah(ah, RDMA_DESTROY_AH_SLEEPABLE);
out_free:
	ib_free_recv_mad(wc);
}

static void mrs_req_send_handler(struct ib_mad_agent *agent,
				 struct ib_mad_send_wc *wc)
{
	struct mrs_ctx *ctx = agent->context;

	ctx->send_status = wc->status;
	ib_free_send_mad(wc->send_buf);
	complete(&ctx->sent);
}

static void mrs_req_recv_handler(struct ib_mad_agent *agent,
				 struct ib_mad_send_buf *send_buf,
				 struct ib_mad_recv_wc *wc)
{
	struct mrs_ctx *ctx = agent->context;

	ctx->resp_ok = send_buf && !mrs_check(ctx, wc, true);
	ib_free_recv_mad(wc);
}

/* An address handle for our own port, so that we talk to ourselves. */
static struct ib_ah *mrs_self_ah(struct ib_mad_agent *agent)
{
	struct ib_device *dev = agent->device;
	const struct ib_gid_attr *gid_attr;
	struct rdma_ah_attr attr = {};
	struct ib_port_attr port_attr;
	union ib_gid dgid;
	struct ib_ah *ah;
	int ret;

	gid_attr = rdma_get_gid_attr(dev, mrs_port, mrs_gid_index);
	if (IS_ERR(gid_attr))
		return ERR_CAST(gid_attr);
	attr.type = rdma_ah_find_type(dev, mrs_port);
	rdma_ah_set_port_num(&attr, mrs_port);
	dgid = gid_attr->gid;
	rdma_ah_set_grh(&attr, &dgid, 0, mrs_gid_index, 64, 0);
	if (attr.type == RDMA_AH_ATTR_TYPE_ROCE) {
		ret = rdma_read_gid_l2_fields(gid_attr, NULL, attr.roce.dmac);
	} else {
		ret = ib_query_port(dev, mrs_port, &port_attr);
		rdma_ah_set_dlid(&attr, port_attr.lid);
	}
	rdma_put_gid_attr(gid_attr);
	if (ret)
		return ERR_PTR(ret);
	ah = rdma_create_ah(agent->qp->pd, &attr, RDMA_CREATE_AH_SLEEPABLE);
	return ah;
}

static int mrs_register(struct mrs_ctx *ctx, struct ib_device *dev)
{
	struct ib_mad_reg_req reg = {
		.mgmt_class = ctx->cls->mgmt_class,
		.mgmt_class_version = 1,
	};

	memcpy(reg.oui, ctx->cls->oui, sizeof(reg.oui));
	set_bit(IB_MGMT_METHOD_GET, reg.method_mask);
	set_bit(IB_MGMT_METHOD_SET, reg.method_mask);
	ctx->rsp = ib_register_mad_agent(dev, mrs_port, IB_QPT_GSI, &reg,
					 IB_MGMT_RMPP_VERSION,
					 mrs_rsp_send_handler,
					 mrs_rsp_recv_handler, ctx, 0);
	if (IS_ERR(ctx->rsp))
		return PTR_ERR(ctx->rsp);
	ctx->req = ib_register_mad_agent(dev, mrs_port, IB_QPT_GSI, NULL,
					 IB_MGMT_RMPP_VERSION,
					 mrs_req_send_handler,
					 mrs_req_recv_handler, ctx, 0);
	if (IS_ERR(ctx->req)) {
		ib_unregister_mad_agent(ctx->rsp);
		return PTR_ERR(ctx->req);
	}
	return 0;
}

/* One request/response exchange of @size bytes each way. */
static void mrs_exchange(struct mrs_ctx *ctx, u32 size, u32 tid_lo)
{
	struct ib_mad_hdr hdr = {
		.base_version = IB_MGMT_BASE_VERSION,
		.mgmt_class = ctx->cls->mgmt_class,
		.class_version = 1,
		.attr_id = cpu_to_be16(MRS_ATTR_TEST),
		.attr_mod = cpu_to_be32(size),
		.tid = cpu_to_be64(((u64)ctx->req->hi_tid << 32) | tid_lo),
	};
	struct ib_mad_send_buf *msg;
	char what[64];
	int ret;

	snprintf(what, sizeof(what), "%s: %u bytes", ctx->cls->name, size);
	ctx->size = size;
	ctx->req_ok = false;
	ctx->resp_ok = false;
	ctx->why[0] = 0;
	reinit_completion(&ctx->sent);

	msg = mrs_build(ctx, ctx->req, 1, 0, &hdr, IB_MGMT_METHOD_SET, false);
	if (IS_ERR(msg)) {
		mrs_tap(false, what, "ib_create_send_mad failed");
		return;
	}
	msg->ah = ctx->ah;
	msg->timeout_ms = 60000;
	msg->retries = 1;
	ret = ib_post_send_mad(msg, NULL);
	if (ret) {
		ib_free_send_mad(msg);
		mrs_tap(false, what, "ib_post_send_mad failed");
		return;
	}
	if (!wait_for_completion_timeout(&ctx->sent,
					 msecs_to_jiffies(MRS_WAIT_MS))) {
		/* The send handler must still run; unregistering waits. */
		mrs_tap(false, what, "no send completion");
		return;
	}
	snprintf(what, sizeof(what), "%s: request of %u bytes intact",
		 ctx->cls->name, size);
	mrs_tap(ctx->req_ok, what, ctx->why);
	snprintf(what, sizeof(what), "%s: response of %u bytes intact",
		 ctx->cls->name, size);
	mrs_tap(ctx->resp_ok && ctx->send_status == IB_WC_SUCCESS, what,
		ctx->send_status == IB_WC_SUCCESS ? ctx->why :
		ib_wc_status_msg(ctx->send_status));
}

static void mrs_run_class(struct ib_device *dev, const struct mrs_class *cls,
			  u8 *scratch)
{
	struct mrs_ctx *ctx;
	size_t i;

	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL);
	if (!ctx) {
		mrs_tap(false, cls->name, "out of memory");
		return;
	}
	ctx->cls = cls;
	ctx->expect = scratch;
	init_completion(&ctx->sent);
	if (mrs_register(ctx, dev)) {
		mrs_tap(false, cls->name, "agent registration failed");
		goto out_free;
	}
	ctx->ah = mrs_self_ah(ctx->req);
	if (IS_ERR(ctx->ah)) {
		mrs_tap(false, cls->name, "no address handle to ourselves");
		goto out_unregister;
	}
	for (i = 0; i < ARRAY_SIZE(mrs_sizes); i++)
		mrs_exchange(ctx, mrs_sizes[i], 0x100 + i);
	rdma_destroy_ah(ctx->ah, RDMA_DESTROY_AH_SLEEPABLE);
out_unregister:
	ib_unregister_mad_agent(ctx->req);
	ib_unregister_mad_agent(ctx->rsp);
out_free:
	kfree(ctx);
}

/*
 * The device named mrs_dev, found as an ib_client sees the devices:
 * ib_device_get_by_name() is not exported any more in 7.x.
 */
static struct ib_device *mrs_found;

static int mrs_client_add(struct ib_device *dev)
{
	if (!mrs_found && !strcmp(dev_name(&dev->dev), mrs_dev) &&
	    ib_device_try_get(dev))
		mrs_found = dev;
	return 0;
}

static void mrs_client_remove(struct ib_device *dev, void *client_data)
{
}

static struct ib_client mrs_client = {
	.name = "mad_rmpp_selftest",
	.add = mrs_client_add,
	.remove = mrs_client_remove,
};

static struct ib_device *mrs_get_device(void)
{
	/* Registering calls add() for every device there is now. */
	if (ib_register_client(&mrs_client))
		return NULL;
	ib_unregister_client(&mrs_client);
	return mrs_found;
}

static int __init mrs_init(void)
{
	struct ib_device *dev;
	u8 *scratch;
	size_t i;

	dev = mrs_get_device();
	if (!dev) {
		pr_err("mad_rmpp_selftest: no RDMA device %s\n", mrs_dev);
		return -ENODEV;
	}
	scratch = vmalloc(MRS_MAX_PAYLOAD);
	if (!scratch) {
		ib_device_put(dev);
		return -ENOMEM;
	}
	pr_info("mad_rmpp_selftest: TAP version 13\n");
	pr_info("mad_rmpp_selftest: 1..%zu\n",
		ARRAY_SIZE(mrs_classes) * ARRAY_SIZE(mrs_sizes) * 2);
	for (i = 0; i < ARRAY_SIZE(mrs_classes); i++)
		mrs_run_class(dev, &mrs_classes[i], scratch);
	vfree(scratch);
	ib_device_put(dev);
	pr_info("mad_rmpp_selftest: %d of %d failed\n", mrs_tap_failed,
		mrs_tap_n);
	return mrs_tap_failed ? -EIO : 0;
}

static void __exit mrs_exit(void)
{
}

module_init(mrs_init);
module_exit(mrs_exit);

MODULE_DESCRIPTION("RMPP transfers between two kernel MAD agents");
MODULE_LICENSE("Dual BSD/GPL");
