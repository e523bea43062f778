// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * MAD send buffers: allocation, RMPP segments and the data a work request
 * carries. What happens to a buffer once posted is in mad_send.c.
 */

#include <linux/slab.h>
#include <kunit/visibility.h>

#include "core_priv.h"
#include "mad_kabi.h"
#include "mad_priv.h"

/*
 * Padding that fills the last segment of data_len bytes of class data in
 * segments of seg_size bytes; an empty message still takes one segment.
 */
VISIBLE_IF_KUNIT int ib_mad_pad_size(int seg_size, int data_len)
{
	if (!data_len || !seg_size)
		return seg_size;
	return (seg_size - data_len % seg_size) % seg_size;
}
EXPORT_SYMBOL_IF_KUNIT(ib_mad_pad_size);

static void ib_mad_free_segments(struct ib_mad_send_wr_private *wr)
{
	struct ib_rmpp_segment *seg, *tmp;

	list_for_each_entry_safe(seg, tmp, &wr->rmpp_list, list) {
		list_del(&seg->list);
		kfree(seg);
	}
	wr->cur_seg = NULL;
	wr->last_ack_seg = NULL;
}

/**
 * ib_mad_alloc_segments() - give an RMPP send its data segments
 * @wr: a send ib_create_send_mad() just made, its headers still zero
 * @mad_size: bytes of one MAD on the wire
 * @gfp: allocation flags
 *
 * The class data and its pad fill a whole number of segments of
 * @mad_size - hdr_len bytes, numbered from 1 in list order. They are made
 * on a list of their own and handed to @wr only once all of them exist,
 * so a failure leaves @wr as it was. The RMPP header then announces the
 * first DATA segment of an active transfer in the agent's RMPP version.
 *
 * Return: 0 or -ENOMEM.
 */
static int ib_mad_alloc_segments(struct ib_mad_send_wr_private *wr,
				 size_t mad_size, gfp_t gfp)
{
	struct ib_mad_send_buf *buf = &wr->send_buf;
	int seg_size = mad_size - buf->hdr_len;
	int count = DIV_ROUND_UP(buf->data_len + wr->pad, seg_size);
	struct ib_rmpp_segment *seg, *tmp;
	LIST_HEAD(segs);
	int num;

	for (num = 1; num <= count; num++) {
		/* Zeroed: the pad of the last segment goes out as zeroes. */
		seg = kzalloc(struct_size(seg, data, seg_size), gfp);
		if (!seg)
			goto err_free;
		seg->num = num;
		list_add_tail(&seg->list, &segs);
	}

	list_splice_tail(&segs, &wr->rmpp_list);
	buf->seg_count = count;
	buf->seg_size = seg_size;
	buf->seg_rmpp_size = mad_size - IB_MGMT_RMPP_HDR;
	((struct ib_rmpp_mad *)buf->mad)->rmpp_hdr = (struct ib_rmpp_hdr) {
		.rmpp_version = wr->mad_agent_priv->agent.rmpp_version,
		.rmpp_type = IB_MGMT_RMPP_TYPE_DATA,
		.rmpp_rtime_flags = IB_MGMT_RMPP_FLAG_ACTIVE,
	};
	wr->cur_seg = list_first_entry(&wr->rmpp_list, struct ib_rmpp_segment,
				       list);
	wr->last_ack_seg = wr->cur_seg;
	return 0;

err_free:
	list_for_each_entry_safe(seg, tmp, &segs, list)
		kfree(seg);
	return -ENOMEM;
}

static void ib_mad_init_send_wr(struct ib_mad_send_wr_private *wr,
				struct ib_mad_agent *agent, u32 remote_qpn,
				u16 pkey_index, size_t payload_len)
{
	u32 lkey = agent->qp->pd->local_dma_lkey;

	INIT_LIST_HEAD(&wr->agent_list);
	RB_CLEAR_NODE(&wr->wait_node);
	INIT_HLIST_NODE(&wr->tid_node);
	INIT_LIST_HEAD(&wr->rmpp_list);
	wr->state = IB_MAD_SEND_IDLE;
	wr->sg_list[0].length = wr->send_buf.hdr_len;
	wr->sg_list[0].lkey = lkey;
	wr->sg_list[1].length = payload_len;
	wr->sg_list[1].lkey = lkey;
	wr->send_wr.wr.sg_list = wr->sg_list;
	wr->send_wr.wr.num_sge = IB_MAD_SEND_REQ_MAX_SG;
	wr->send_wr.wr.opcode = IB_WR_SEND;
	wr->send_wr.wr.send_flags = IB_SEND_SIGNALED;
	wr->send_wr.remote_qpn = remote_qpn;
	wr->send_wr.remote_qkey = IB_QP_SET_QKEY;
	wr->send_wr.pkey_index = pkey_index;
}

/**
 * ib_create_send_mad() - allocate a buffer for a MAD send
 * @mad_agent: agent that will send it
 * @remote_qpn: destination QP
 * @pkey_index: P_Key index to send with
 * @rmpp_active: the message is sent with RMPP (kernel RMPP agents only)
 * @hdr_len: bytes of headers (common, RMPP and class headers)
 * @data_len: bytes of class data
 * @gfp_mask: allocation flags
 * @base_version: IB_MGMT_BASE_VERSION, or OPA_MGMT_BASE_VERSION for a
 *	2 KiB OPA MAD on a port that supports them
 *
 * The buffer is zeroed. Without RMPP, send_buf->mad holds the whole MAD.
 * With RMPP, send_buf->mad holds only the @hdr_len bytes of headers and
 * the class data goes into segments reached with ib_get_rmpp_segment();
 * the last segment is padded with zeroes.
 *
 * Context: any, as @gfp_mask allows.
 * Return: the buffer, ERR_PTR(-EINVAL) for lengths that do not fit the
 * agent, ERR_PTR(-ENOMEM).
 */
struct ib_mad_send_buf *ib_create_send_mad(struct ib_mad_agent *mad_agent,
					   u32 remote_qpn, u16 pkey_index,
					   int rmpp_active, int hdr_len,
					   int data_len, gfp_t gfp_mask,
					   u8 base_version)
{
	struct ib_mad_agent_private *priv = ib_mad_agent_priv(mad_agent);
	struct ib_mad_send_wr_private *wr;
	size_t mad_size = sizeof(struct ib_mad);
	size_t payload_len, mad_area;
	bool opa_mad = false;
	int pad;

	if (base_version == OPA_MGMT_BASE_VERSION &&
	    rdma_cap_opa_mad(mad_agent->device, mad_agent->port_num)) {
		mad_size = sizeof(struct opa_mad);
		opa_mad = true;
	}
	/* Lengths come from clients, some of them from user space. */
	if (hdr_len < IB_MGMT_MAD_HDR || hdr_len > mad_size || data_len < 0 ||
	    data_len > INT_MAX - (int)mad_size)
		return ERR_PTR(-EINVAL);
	pad = ib_mad_pad_size(mad_size - hdr_len, data_len);
	if (rmpp_active) {
		if (!ib_mad_kernel_rmpp_agent(mad_agent) ||
		    hdr_len < IB_MGMT_RMPP_HDR || hdr_len == mad_size)
			return ERR_PTR(-EINVAL);
	} else if (hdr_len + data_len + pad > mad_size) {
		return ERR_PTR(-EINVAL);
	}

	mad_area = rmpp_active ? hdr_len : mad_size;
	wr = kzalloc(sizeof(*wr) + mad_area, gfp_mask);
	if (!wr)
		return ERR_PTR(-ENOMEM);
	wr->send_buf.mad = wr + 1;
	wr->send_buf.mad_agent = mad_agent;
	wr->send_buf.hdr_len = hdr_len;
	wr->send_buf.data_len = data_len;
	wr->mad_agent_priv = priv;
	wr->pad = pad;

	/* An OPA MAD goes out no longer than its data. */
	payload_len = mad_size - hdr_len;
	if (opa_mad && data_len < payload_len)
		payload_len = data_len;
	ib_mad_init_send_wr(wr, mad_agent, remote_qpn, pkey_index, payload_len);

	if (rmpp_active && ib_mad_alloc_segments(wr, mad_size, gfp_mask)) {
		kfree(wr);
		return ERR_PTR(-ENOMEM);
	}
	ib_mad_agent_get(priv);
	return &wr->send_buf;
}
EXPORT_SYMBOL(ib_create_send_mad);

/**
 * ib_free_send_mad() - free a send buffer
 * @send_buf: a buffer from ib_create_send_mad() that is not posted, or
 *	whose send handler has run
 *
 * Context: any.
 */
void ib_free_send_mad(struct ib_mad_send_buf *send_buf)
{
	struct ib_mad_send_wr_private *wr = ib_mad_send_wr(send_buf);
	struct ib_mad_agent_private *priv = wr->mad_agent_priv;

	/* Freeing a buffer the layer still uses would corrupt its lists. */
	if (WARN_ON_ONCE(wr->state != IB_MAD_SEND_IDLE &&
			 wr->state != IB_MAD_SEND_DONE))
		return;
	ib_mad_free_segments(wr);
	kfree(wr);
	ib_mad_agent_put(priv);
}
EXPORT_SYMBOL(ib_free_send_mad);

/**
 * ib_mad_send_segment() - find an RMPP segment by number
 * @wr: an RMPP send
 * @seg_num: segment number, 1 to send_buf.seg_count
 *
 * The walk starts from the segment found last (@wr->cur_seg), so a
 * sequential walk costs O(1) per step.
 *
 * Return: the segment, or NULL if @seg_num is out of range.
 */
struct ib_rmpp_segment *ib_mad_send_segment(struct ib_mad_send_wr_private *wr,
					    int seg_num)
{
	struct ib_rmpp_segment *seg = wr->cur_seg;

	if (!seg || seg_num < 1 || seg_num > wr->send_buf.seg_count)
		return NULL;
	while (seg->num < seg_num)
		seg = list_next_entry(seg, list);
	while (seg->num > seg_num)
		seg = list_prev_entry(seg, list);
	wr->cur_seg = seg;
	return seg;
}

/**
 * ib_get_rmpp_segment() - class data area of one RMPP segment
 * @send_buf: a buffer created with rmpp_active
 * @seg_num: segment number, counted from 1
 *
 * Return: the send_buf->seg_size bytes of class data of segment @seg_num,
 * or NULL if there is no such segment.
 */
void *ib_get_rmpp_segment(struct ib_mad_send_buf *send_buf, int seg_num)
{
	struct ib_rmpp_segment *seg;

	seg = ib_mad_send_segment(ib_mad_send_wr(send_buf), seg_num);
	return seg ? seg->data : NULL;
}
EXPORT_SYMBOL(ib_get_rmpp_segment);

/**
 * ib_mad_send_payload() - data the next work request of a send carries
 * @wr: the send
 *
 * Return: the data of segment @wr->seg_num for an RMPP buffer, else the
 * bytes after the headers in send_buf.mad.
 */
void *ib_mad_send_payload(struct ib_mad_send_wr_private *wr)
{
	struct ib_rmpp_segment *seg;

	if (!wr->send_buf.seg_count)
		return wr->send_buf.mad + wr->send_buf.hdr_len;
	seg = ib_mad_send_segment(wr, wr->seg_num);
	return seg ? seg->data : NULL;
}
