/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Trace points of the MAD layer, in two groups.
 *
 * The first group is ours: agent registration, the send lifecycle,
 * receives, the RMPP headers of kernel-RMPP traffic and directed-route
 * SMP handling. Wire values are converted to CPU order when recorded, so
 * these records hold plain integers.
 *
 * The second group keeps the thirteen events of upstream Linux 6.12 under
 * their names, with the same fields (name, type, order) and the same text
 * output, so that perf and bpftrace scripts written for upstream keep
 * working. Their wire fields hold the bytes of the MAD unconverted, in
 * network order, as upstream records them; the text output converts them.
 *
 * Only mad_*.c include this header, after mad_priv.h.
 */

#undef TRACE_SYSTEM
#define TRACE_SYSTEM ib_mad

#if !defined(_TRACE_IB_MAD_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_IB_MAD_H

#include <linux/tracepoint.h>
#include <rdma/ib_mad.h>

DECLARE_EVENT_CLASS(ib_mad_agent_class,
		    TP_PROTO(const struct ib_mad_agent_private *priv),
		    TP_ARGS(priv),
		    TP_STRUCT__entry(__field(u32, dev_index)
				     __field(u32, port_num)
				     __field(u32, qp_num)
				     __field(u32, hi_tid)
				     __field(u8, mgmt_class)
				     __field(u8, class_version)
				     __field(u8, rmpp_version)),
		    TP_fast_assign(__entry->dev_index = priv->agent.device->index;
				   __entry->port_num = priv->agent.port_num;
				   __entry->qp_num = priv->agent.qp->qp_num;
				   __entry->hi_tid = priv->agent.hi_tid;
				   __entry->mgmt_class =
					   priv->reg_req ? priv->reg_req->mgmt_class : 0;
				   __entry->class_version =
					   priv->reg_req ? priv->reg_req->mgmt_class_version : 0;
				   __entry->rmpp_version = priv->agent.rmpp_version;),
		    TP_printk("dev %u port %u QP%u hi_tid 0x%x class 0x%02x version %u rmpp %u",
			      __entry->dev_index, __entry->port_num,
			      __entry->qp_num, __entry->hi_tid,
			      __entry->mgmt_class, __entry->class_version,
			      __entry->rmpp_version));

DEFINE_EVENT(ib_mad_agent_class,
	     ib_mad_agent_register,
	     TP_PROTO(const struct ib_mad_agent_private *priv),
	     TP_ARGS(priv));

DEFINE_EVENT(ib_mad_agent_class,
	     ib_mad_agent_unregister,
	     TP_PROTO(const struct ib_mad_agent_private *priv),
	     TP_ARGS(priv));

DECLARE_EVENT_CLASS(ib_mad_send_class,
		    TP_PROTO(const struct ib_mad_send_wr_private *wr),
		    TP_ARGS(wr),
		    TP_STRUCT__entry(__field(u32, hi_tid)
				     __field(u64, tid)
				     __field(u32, state)
				     __field(u32, inflight)
				     __field(u32, timeout_ms)
				     __field(u32, retries)
				     __field(u32, seg_num)
				     __field(u8, mgmt_class)
				     __field(u8, method)
				     __field(u16, attr_id)),
		    TP_fast_assign(const struct ib_mad_hdr *hdr = wr->send_buf.mad;
				   __entry->hi_tid = wr->mad_agent_priv->agent.hi_tid;
				   __entry->tid = be64_to_cpu(hdr->tid);
				   __entry->state = wr->state;
				   __entry->inflight = wr->wr_inflight;
				   __entry->timeout_ms = wr->send_buf.timeout_ms;
				   __entry->retries = wr->send_buf.retries;
				   __entry->seg_num = wr->seg_num;
				   __entry->mgmt_class = hdr->mgmt_class;
				   __entry->method = hdr->method;
				   __entry->attr_id = be16_to_cpu(hdr->attr_id);),
		    TP_printk("hi_tid 0x%x tid 0x%llx class 0x%02x method 0x%02x attr 0x%04x state %u inflight %u timeout %ums retries %u seg %u",
			      __entry->hi_tid, __entry->tid,
			      __entry->mgmt_class, __entry->method,
			      __entry->attr_id, __entry->state,
			      __entry->inflight, __entry->timeout_ms,
			      __entry->retries, __entry->seg_num));

DEFINE_EVENT(ib_mad_send_class,
	     ib_mad_send_post,
	     TP_PROTO(const struct ib_mad_send_wr_private *wr),
	     TP_ARGS(wr));

DEFINE_EVENT(ib_mad_send_class,
	     ib_mad_send_queued,
	     TP_PROTO(const struct ib_mad_send_wr_private *wr),
	     TP_ARGS(wr));

DEFINE_EVENT(ib_mad_send_class,
	     ib_mad_send_retry,
	     TP_PROTO(const struct ib_mad_send_wr_private *wr),
	     TP_ARGS(wr));

DEFINE_EVENT(ib_mad_send_class,
	     ib_mad_smi_local,
	     TP_PROTO(const struct ib_mad_send_wr_private *wr),
	     TP_ARGS(wr));

TRACE_EVENT(ib_mad_send_modify,
	    TP_PROTO(const struct ib_mad_send_wr_private *wr, u32 timeout_ms),
	    TP_ARGS(wr, timeout_ms),
	    TP_STRUCT__entry(__field(u32, hi_tid)
			     __field(u64, tid)
			     __field(u32, state)
			     __field(u32, timeout_ms)),
	    TP_fast_assign(__entry->hi_tid = wr->mad_agent_priv->agent.hi_tid;
			   __entry->tid = be64_to_cpu(wr->tid);
			   __entry->state = wr->state;
			   __entry->timeout_ms = timeout_ms;),
	    TP_printk("hi_tid 0x%x tid 0x%llx state %u new timeout %ums%s",
		      __entry->hi_tid, __entry->tid, __entry->state,
		      __entry->timeout_ms,
		      __entry->timeout_ms ? "" : " (cancel)"));

TRACE_EVENT(ib_mad_send_complete,
	    TP_PROTO(const struct ib_mad_send_wr_private *wr, const struct ib_mad_send_wc *wc),
	    TP_ARGS(wr, wc),
	    TP_STRUCT__entry(__field(u32, hi_tid)
			     __field(u64, tid)
			     __field(u32, status)
			     __field(u32, vendor_err)
			     __field(u32, retries)
			     __field(bool, internal)),
	    TP_fast_assign(__entry->hi_tid = wr->mad_agent_priv->agent.hi_tid;
			   __entry->tid = be64_to_cpu(wr->tid);
			   __entry->status = wc->status;
			   __entry->vendor_err = wc->vendor_err;
			   __entry->retries = wr->send_buf.retries;
			   __entry->internal = !!wr->internal_done;),
	    TP_printk("hi_tid 0x%x tid 0x%llx status %u vendor_err 0x%x retries %u%s",
		      __entry->hi_tid, __entry->tid, __entry->status,
		      __entry->vendor_err, __entry->retries,
		      __entry->internal ? " internal" : ""));

TRACE_EVENT(ib_mad_recv,
	    TP_PROTO(const struct ib_mad_port_private *port, u32 qp_num,
		     const struct ib_wc *wc, const struct ib_mad_hdr *hdr),
	    TP_ARGS(port, qp_num, wc, hdr),
	    TP_STRUCT__entry(__field(u32, dev_index)
			     __field(u32, port_num)
			     __field(u32, qp_num)
			     __field(u32, src_qp)
			     __field(u32, slid)
			     __field(u32, byte_len)
			     __field(u16, pkey_index)
			     __field(u64, tid)
			     __field(u8, base_version)
			     __field(u8, mgmt_class)
			     __field(u8, class_version)
			     __field(u8, method)
			     __field(u16, attr_id)
			     __field(u16, status)),
	    TP_fast_assign(__entry->dev_index = port->device->index;
			   __entry->port_num = port->port_num;
			   __entry->qp_num = qp_num;
			   __entry->src_qp = wc->src_qp;
			   __entry->slid = wc->slid;
			   __entry->byte_len = wc->byte_len;
			   __entry->pkey_index = wc->pkey_index;
			   __entry->tid = be64_to_cpu(hdr->tid);
			   __entry->base_version = hdr->base_version;
			   __entry->mgmt_class = hdr->mgmt_class;
			   __entry->class_version = hdr->class_version;
			   __entry->method = hdr->method;
			   __entry->attr_id = be16_to_cpu(hdr->attr_id);
			   __entry->status = be16_to_cpu(hdr->status);),
	    TP_printk("dev %u port %u QP%u from QP 0x%x LID 0x%x len %u pkey_index %u tid 0x%llx base %u class 0x%02x version %u method 0x%02x attr 0x%04x status 0x%04x",
		      __entry->dev_index, __entry->port_num, __entry->qp_num,
		      __entry->src_qp, __entry->slid, __entry->byte_len,
		      __entry->pkey_index, __entry->tid, __entry->base_version,
		      __entry->mgmt_class, __entry->class_version,
		      __entry->method, __entry->attr_id, __entry->status));

TRACE_EVENT(ib_mad_recv_deliver,
	    TP_PROTO(const struct ib_mad_agent_private *priv, const struct ib_mad_recv_wc *recv_wc),
	    TP_ARGS(priv, recv_wc),
	    TP_STRUCT__entry(__field(u32, hi_tid)
			     __field(u64, tid)
			     __field(u8, method)
			     __field(u32, mad_len)),
	    TP_fast_assign(__entry->hi_tid = priv->agent.hi_tid;
			   __entry->tid = be64_to_cpu(recv_wc->recv_buf.mad->mad_hdr.tid);
			   __entry->method = recv_wc->recv_buf.mad->mad_hdr.method;
			   __entry->mad_len = recv_wc->mad_len;),
	    TP_printk("to hi_tid 0x%x: tid 0x%llx method 0x%02x len %u",
		      __entry->hi_tid, __entry->tid, __entry->method,
		      __entry->mad_len));

/*
 * The RMPP header of a MAD of a kernel-RMPP agent: one that arrived
 * (ib_mad_rmpp_recv) or an ACK, STOP or ABORT the layer sends on its own
 * (ib_mad_rmpp_ctrl).  DATA segments we send are seen by ib_mad_send_post.
 */
DECLARE_EVENT_CLASS(ib_mad_rmpp_class,
		    TP_PROTO(const struct ib_mad_agent_private *priv,
			     const struct ib_rmpp_mad *mad),
		    TP_ARGS(priv, mad),
		    TP_STRUCT__entry(__field(u32, hi_tid)
				     __field(u64, tid)
				     __field(u8, mgmt_class)
				     __field(u8, method)
				     __field(u8, type)
				     __field(u8, flags)
				     __field(u8, status)
				     __field(u32, seg_num)
				     __field(u32, paylen_newwin)),
		    TP_fast_assign(__entry->hi_tid = priv->agent.hi_tid;
				   __entry->tid = be64_to_cpu(mad->mad_hdr.tid);
				   __entry->mgmt_class = mad->mad_hdr.mgmt_class;
				   __entry->method = mad->mad_hdr.method;
				   __entry->type = mad->rmpp_hdr.rmpp_type;
				   __entry->flags = mad->rmpp_hdr.rmpp_rtime_flags &
					(IB_MGMT_RMPP_FLAG_ACTIVE |
					 IB_MGMT_RMPP_FLAG_FIRST |
					 IB_MGMT_RMPP_FLAG_LAST);
				   __entry->status = mad->rmpp_hdr.rmpp_status;
				   __entry->seg_num = be32_to_cpu(mad->rmpp_hdr.seg_num);
				   __entry->paylen_newwin =
					be32_to_cpu(mad->rmpp_hdr.paylen_newwin);),
		    TP_printk("hi_tid 0x%x tid 0x%llx class 0x%02x method 0x%02x %s flags 0x%x status %u seg %u paylen/newwin %u",
			      __entry->hi_tid, __entry->tid,
			      __entry->mgmt_class, __entry->method,
			      __print_symbolic(__entry->type,
					       { IB_MGMT_RMPP_TYPE_DATA, "DATA" },
					       { IB_MGMT_RMPP_TYPE_ACK, "ACK" },
					       { IB_MGMT_RMPP_TYPE_STOP, "STOP" },
					       { IB_MGMT_RMPP_TYPE_ABORT, "ABORT" }),
			      __entry->flags, __entry->status,
			      __entry->seg_num, __entry->paylen_newwin));

DEFINE_EVENT(ib_mad_rmpp_class,
	     ib_mad_rmpp_recv,
	     TP_PROTO(const struct ib_mad_agent_private *priv,
		      const struct ib_rmpp_mad *mad),
	     TP_ARGS(priv, mad));

DEFINE_EVENT(ib_mad_rmpp_class,
	     ib_mad_rmpp_ctrl,
	     TP_PROTO(const struct ib_mad_agent_private *priv,
		      const struct ib_rmpp_mad *mad),
	     TP_ARGS(priv, mad));

TRACE_EVENT(ib_mad_smi_recv,
	    TP_PROTO(const struct ib_mad_port_private *port,
		     const struct ib_mad *mad, u8 hop_ptr, u8 hop_cnt),
	    TP_ARGS(port, mad, hop_ptr, hop_cnt),
	    TP_STRUCT__entry(__field(u32, dev_index)
			     __field(u32, port_num)
			     __field(u64, tid)
			     __field(u8, base_version)
			     __field(u8, hop_ptr)
			     __field(u8, hop_cnt)),
	    TP_fast_assign(__entry->dev_index = port->device->index;
			   __entry->port_num = port->port_num;
			   __entry->tid = be64_to_cpu(mad->mad_hdr.tid);
			   __entry->base_version = mad->mad_hdr.base_version;
			   __entry->hop_ptr = hop_ptr;
			   __entry->hop_cnt = hop_cnt;),
	    TP_printk("dev %u port %u tid 0x%llx base %u hop %u of %u",
		      __entry->dev_index, __entry->port_num, __entry->tid,
		      __entry->base_version, __entry->hop_ptr, __entry->hop_cnt));

/*
 * Upstream-compatible events.
 *
 * Field layout and output text follow upstream 6.12 (see the comment at
 * the top); the one difference in the text is that the DLID of the send
 * events is printed as recorded, in CPU order, where upstream swaps it.
 */

#ifndef IB_MAD_TRACE_HELPERS
#define IB_MAD_TRACE_HELPERS

/* Copy a big-endian wire value into a field without converting it. */
#define IB_MAD_TRACE_RAW16(v)	((__force u16)(v))
#define IB_MAD_TRACE_RAW32(v)	((__force u32)(v))
#define IB_MAD_TRACE_RAW64(v)	((__force u64)(v))
/* Read back a field that holds a big-endian wire value. */
#define IB_MAD_TRACE_BE16(f)	be16_to_cpu((__force __be16)(u16)(f))
#define IB_MAD_TRACE_BE32(f)	be32_to_cpu((__force __be32)(f))
#define IB_MAD_TRACE_BE64(f)	be64_to_cpu((__force __be64)(f))

/* The DLID and SL an address handle sends to; 0 when it cannot be read. */
static inline void ib_mad_trace_ah(struct ib_ah *ah, u32 *dlid, u8 *sl)
{
	struct rdma_ah_attr attr = {};

	*dlid = 0;
	*sl = 0;
	if (ah && !rdma_query_ah(ah, &attr)) {
		*dlid = rdma_ah_get_dlid(&attr);
		*sl = rdma_ah_get_sl(&attr);
	}
}
#endif /* IB_MAD_TRACE_HELPERS */

/*
 * One work request of a send as it is handed to QP0/QP1: posted
 * (ib_mad_ib_send_mad), taken from the overflow list once the send queue
 * has room (ib_mad_send_done_resend), or posted again after the QP was
 * recovered from a send error (ib_mad_error_handler). @qp_info is the QP
 * the request goes to. The address fields come from the address handle.
 */
DECLARE_EVENT_CLASS(ib_mad_qp_send_class,
		    TP_PROTO(const struct ib_mad_send_wr_private *wr,
			     const struct ib_mad_qp_info *qp_info),
		    TP_ARGS(wr, qp_info),
		    TP_STRUCT__entry(__field(u8, base_version)
				     __field(u8, mgmt_class)
				     __field(u8, class_version)
				     __field(u8, port_num)
				     __field(u32, qp_num)
				     __field(u8, method)
				     __field(u8, sl)
				     __field(u16, attr_id)
				     __field(u32, attr_mod)
				     __field(u64, wrtid)
				     __field(u64, tid)
				     __field(u16, status)
				     __field(u16, class_specific)
				     __field(u32, length)
				     __field(u32, dlid)
				     __field(u32, rqpn)
				     __field(u32, rqkey)
				     __field(u32, dev_index)
				     __field(void *, agent_priv)
				     __field(unsigned long, timeout)
				     __field(int, retries_left)
				     __field(int, max_retries)
				     __field(int, retry)),
		    TP_fast_assign(const struct ib_mad_hdr *hdr = wr->send_buf.mad;

				   __entry->dev_index = wr->mad_agent_priv->agent.device->index;
				   __entry->port_num = wr->mad_agent_priv->agent.port_num;
				   __entry->qp_num = qp_info->qp_num;
				   __entry->agent_priv = wr->mad_agent_priv;
				   __entry->wrtid = IB_MAD_TRACE_RAW64(wr->tid);
				   __entry->retries_left = wr->retries_left;
				   __entry->max_retries = wr->max_retries;
				   __entry->retry = wr->repost_on_flush;
				   __entry->timeout =
					msecs_to_jiffies(wr->send_buf.timeout_ms);
				   __entry->length = wr->send_buf.hdr_len +
						     wr->send_buf.data_len;
				   __entry->base_version = hdr->base_version;
				   __entry->mgmt_class = hdr->mgmt_class;
				   __entry->class_version = hdr->class_version;
				   __entry->method = hdr->method;
				   __entry->status = IB_MAD_TRACE_RAW16(hdr->status);
				   __entry->class_specific =
					IB_MAD_TRACE_RAW16(hdr->class_specific);
				   __entry->tid = IB_MAD_TRACE_RAW64(hdr->tid);
				   __entry->attr_id = IB_MAD_TRACE_RAW16(hdr->attr_id);
				   __entry->attr_mod = IB_MAD_TRACE_RAW32(hdr->attr_mod);
				   __entry->rqpn = wr->send_wr.remote_qpn;
				   __entry->rqkey = wr->send_wr.remote_qkey;
				   ib_mad_trace_ah(wr->send_wr.ah, &__entry->dlid,
						   &__entry->sl);),
		    TP_printk("%u:%u QP%u agent %p: wrtid 0x%llx; %d/%d retries(%d); timeout %lu length %u : hdr : base_ver 0x%x class 0x%x class_ver 0x%x method 0x%x status 0x%x class_specific 0x%x tid 0x%llx attr_id 0x%x attr_mod 0x%x  => dlid 0x%08x sl %u rpqn 0x%x rqpkey 0x%x",
			      __entry->dev_index, __entry->port_num,
			      __entry->qp_num, __entry->agent_priv,
			      IB_MAD_TRACE_BE64(__entry->wrtid),
			      __entry->retries_left, __entry->max_retries,
			      __entry->retry, __entry->timeout,
			      __entry->length, __entry->base_version,
			      __entry->mgmt_class, __entry->class_version,
			      __entry->method,
			      IB_MAD_TRACE_BE16(__entry->status),
			      IB_MAD_TRACE_BE16(__entry->class_specific),
			      IB_MAD_TRACE_BE64(__entry->tid),
			      IB_MAD_TRACE_BE16(__entry->attr_id),
			      IB_MAD_TRACE_BE32(__entry->attr_mod),
			      __entry->dlid, __entry->sl, __entry->rqpn,
			      __entry->rqkey));

DEFINE_EVENT(ib_mad_qp_send_class,
	     ib_mad_error_handler,
	     TP_PROTO(const struct ib_mad_send_wr_private *wr,
		      const struct ib_mad_qp_info *qp_info),
	     TP_ARGS(wr, qp_info));

DEFINE_EVENT(ib_mad_qp_send_class,
	     ib_mad_ib_send_mad,
	     TP_PROTO(const struct ib_mad_send_wr_private *wr,
		      const struct ib_mad_qp_info *qp_info),
	     TP_ARGS(wr, qp_info));

DEFINE_EVENT(ib_mad_qp_send_class,
	     ib_mad_send_done_resend,
	     TP_PROTO(const struct ib_mad_send_wr_private *wr,
		      const struct ib_mad_qp_info *qp_info),
	     TP_ARGS(wr, qp_info));

/* The verbs completion of one send work request, before it is acted on. */
TRACE_EVENT(ib_mad_send_done_handler,
	    TP_PROTO(const struct ib_mad_send_wr_private *wr,
		     const struct ib_wc *wc),
	    TP_ARGS(wr, wc),
	    TP_STRUCT__entry(__field(u8, port_num)
			     __field(u8, base_version)
			     __field(u8, mgmt_class)
			     __field(u8, class_version)
			     __field(u32, qp_num)
			     __field(u64, wrtid)
			     __field(u16, status)
			     __field(u16, wc_status)
			     __field(u32, length)
			     __field(void *, agent_priv)
			     __field(unsigned long, timeout)
			     __field(u32, dev_index)
			     __field(int, retries_left)
			     __field(int, max_retries)
			     __field(int, retry)
			     __field(u8, method)),
	    TP_fast_assign(const struct ib_mad_hdr *hdr = wr->send_buf.mad;

			   __entry->dev_index = wr->mad_agent_priv->agent.device->index;
			   __entry->port_num = wr->mad_agent_priv->agent.port_num;
			   __entry->qp_num = wr->mad_agent_priv->qp_info->qp_num;
			   __entry->agent_priv = wr->mad_agent_priv;
			   __entry->wrtid = IB_MAD_TRACE_RAW64(wr->tid);
			   __entry->retries_left = wr->retries_left;
			   __entry->max_retries = wr->max_retries;
			   __entry->retry = wr->repost_on_flush;
			   __entry->timeout =
				msecs_to_jiffies(wr->send_buf.timeout_ms);
			   __entry->base_version = hdr->base_version;
			   __entry->mgmt_class = hdr->mgmt_class;
			   __entry->class_version = hdr->class_version;
			   __entry->method = hdr->method;
			   __entry->status = IB_MAD_TRACE_RAW16(hdr->status);
			   __entry->wc_status = wc->status;
			   __entry->length = wc->byte_len;),
	    TP_printk("%u:%u QP%u : SEND WC Status %u : agent %p: wrtid 0x%llx %d/%d retries(%d) timeout %lu length %u: hdr : base_ver 0x%x class 0x%x class_ver 0x%x method 0x%x status 0x%x",
		      __entry->dev_index, __entry->port_num,
		      __entry->qp_num, __entry->wc_status,
		      __entry->agent_priv, IB_MAD_TRACE_BE64(__entry->wrtid),
		      __entry->retries_left, __entry->max_retries,
		      __entry->retry, __entry->timeout, __entry->length,
		      __entry->base_version, __entry->mgmt_class,
		      __entry->class_version, __entry->method,
		      IB_MAD_TRACE_BE16(__entry->status)));

/*
 * A received MAD that passed validation, before directed-route handling,
 * the driver's process_mad() and dispatch. src_qp is 16 bits wide as
 * upstream has it; ib_mad_recv records the whole QP number.
 */
TRACE_EVENT(ib_mad_recv_done_handler,
	    TP_PROTO(const struct ib_mad_qp_info *qp_info,
		     const struct ib_wc *wc, const struct ib_mad_hdr *mad_hdr),
	    TP_ARGS(qp_info, wc, mad_hdr),
	    TP_STRUCT__entry(__field(u8, base_version)
			     __field(u8, mgmt_class)
			     __field(u8, class_version)
			     __field(u8, port_num)
			     __field(u32, qp_num)
			     __field(u16, status)
			     __field(u16, class_specific)
			     __field(u32, length)
			     __field(u64, tid)
			     __field(u8, method)
			     __field(u8, sl)
			     __field(u16, attr_id)
			     __field(u32, attr_mod)
			     __field(u16, src_qp)
			     __field(u16, wc_status)
			     __field(u32, slid)
			     __field(u32, dev_index)),
	    TP_fast_assign(__entry->dev_index = qp_info->port_priv->device->index;
			   __entry->port_num = qp_info->port_priv->port_num;
			   __entry->qp_num = qp_info->qp_num;
			   __entry->length = wc->byte_len;
			   __entry->base_version = mad_hdr->base_version;
			   __entry->mgmt_class = mad_hdr->mgmt_class;
			   __entry->class_version = mad_hdr->class_version;
			   __entry->method = mad_hdr->method;
			   __entry->status = IB_MAD_TRACE_RAW16(mad_hdr->status);
			   __entry->class_specific =
				IB_MAD_TRACE_RAW16(mad_hdr->class_specific);
			   __entry->tid = IB_MAD_TRACE_RAW64(mad_hdr->tid);
			   __entry->attr_id = IB_MAD_TRACE_RAW16(mad_hdr->attr_id);
			   __entry->attr_mod = IB_MAD_TRACE_RAW32(mad_hdr->attr_mod);
			   __entry->slid = wc->slid;
			   __entry->src_qp = wc->src_qp;
			   __entry->sl = wc->sl;
			   __entry->wc_status = wc->status;),
	    TP_printk("%u:%u QP%u : RECV WC Status %u : length %u : hdr : base_ver 0x%02x class 0x%02x class_ver 0x%02x method 0x%02x status 0x%04x class_specific 0x%04x tid 0x%016llx attr_id 0x%04x attr_mod 0x%08x slid 0x%08x src QP%u, sl %u",
		      __entry->dev_index, __entry->port_num,
		      __entry->qp_num, __entry->wc_status, __entry->length,
		      __entry->base_version, __entry->mgmt_class,
		      __entry->class_version, __entry->method,
		      IB_MAD_TRACE_BE16(__entry->status),
		      IB_MAD_TRACE_BE16(__entry->class_specific),
		      IB_MAD_TRACE_BE64(__entry->tid),
		      IB_MAD_TRACE_BE16(__entry->attr_id),
		      IB_MAD_TRACE_BE32(__entry->attr_mod),
		      __entry->slid, __entry->src_qp, __entry->sl));

/*
 * An agent: registered (ib_mad_create_agent), about to be unregistered
 * (ib_mad_unregister_agent), chosen for a received MAD
 * (ib_mad_recv_done_agent) or owning a completed send work request
 * (ib_mad_send_done_agent). Class and version are 0 for an agent
 * registered without a request.
 */
DECLARE_EVENT_CLASS(ib_mad_agent_event_class,
		    TP_PROTO(const struct ib_mad_agent_private *agent),
		    TP_ARGS(agent),
		    TP_STRUCT__entry(__field(u32, dev_index)
				     __field(u32, hi_tid)
				     __field(u8, port_num)
				     __field(u8, mgmt_class)
				     __field(u8, mgmt_class_version)),
		    TP_fast_assign(const struct ib_mad_reg_req *req = agent->reg_req;

				   __entry->dev_index = agent->agent.device->index;
				   __entry->port_num = agent->agent.port_num;
				   __entry->hi_tid = agent->agent.hi_tid;
				   __entry->mgmt_class = req ? req->mgmt_class : 0;
				   __entry->mgmt_class_version =
					req ? req->mgmt_class_version : 0;),
		    TP_printk("%u:%u mad agent : hi_tid 0x%08x class 0x%02x class_ver 0x%02x",
			      __entry->dev_index, __entry->port_num,
			      __entry->hi_tid, __entry->mgmt_class,
			      __entry->mgmt_class_version));

DEFINE_EVENT(ib_mad_agent_event_class,
	     ib_mad_recv_done_agent,
	     TP_PROTO(const struct ib_mad_agent_private *agent),
	     TP_ARGS(agent));

DEFINE_EVENT(ib_mad_agent_event_class,
	     ib_mad_send_done_agent,
	     TP_PROTO(const struct ib_mad_agent_private *agent),
	     TP_ARGS(agent));

DEFINE_EVENT(ib_mad_agent_event_class,
	     ib_mad_create_agent,
	     TP_PROTO(const struct ib_mad_agent_private *agent),
	     TP_ARGS(agent));

DEFINE_EVENT(ib_mad_agent_event_class,
	     ib_mad_unregister_agent,
	     TP_PROTO(const struct ib_mad_agent_private *agent),
	     TP_ARGS(agent));

/*
 * A directed-route OPA SMP before the route rules touch it: received
 * (ib_mad_handle_opa_smi) or about to be sent (ib_mad_handle_out_opa_smi).
 */
DECLARE_EVENT_CLASS(ib_mad_opa_smp_class,
		    TP_PROTO(const struct opa_smp *smp),
		    TP_ARGS(smp),
		    TP_STRUCT__entry(__field(u64, mkey)
				     __field(u32, dr_slid)
				     __field(u32, dr_dlid)
				     __field(u8, hop_ptr)
				     __field(u8, hop_cnt)
				     __array(u8, initial_path, OPA_SMP_MAX_PATH_HOPS)
				     __array(u8, return_path, OPA_SMP_MAX_PATH_HOPS)),
		    TP_fast_assign(__entry->mkey = IB_MAD_TRACE_RAW64(smp->mkey);
				   __entry->dr_slid =
					IB_MAD_TRACE_RAW32(smp->route.dr.dr_slid);
				   __entry->dr_dlid =
					IB_MAD_TRACE_RAW32(smp->route.dr.dr_dlid);
				   __entry->hop_ptr = smp->hop_ptr;
				   __entry->hop_cnt = smp->hop_cnt;
				   memcpy(__entry->initial_path,
					  smp->route.dr.initial_path,
					  sizeof(__entry->initial_path));
				   memcpy(__entry->return_path,
					  smp->route.dr.return_path,
					  sizeof(__entry->return_path));),
		    TP_printk("OPA SMP: hop_ptr %u hop_cnt %u mkey 0x%016llx dr_slid 0x%08x dr_dlid 0x%08x initial_path %*ph return_path %*ph ",
			      __entry->hop_ptr, __entry->hop_cnt,
			      IB_MAD_TRACE_BE64(__entry->mkey),
			      IB_MAD_TRACE_BE32(__entry->dr_slid),
			      IB_MAD_TRACE_BE32(__entry->dr_dlid),
			      OPA_SMP_MAX_PATH_HOPS, __entry->initial_path,
			      OPA_SMP_MAX_PATH_HOPS, __entry->return_path));

DEFINE_EVENT(ib_mad_opa_smp_class,
	     ib_mad_handle_opa_smi,
	     TP_PROTO(const struct opa_smp *smp),
	     TP_ARGS(smp));

DEFINE_EVENT(ib_mad_opa_smp_class,
	     ib_mad_handle_out_opa_smi,
	     TP_PROTO(const struct opa_smp *smp),
	     TP_ARGS(smp));

/*
 * The same for an IB SMP. The 16-bit DR LIDs sit in the low half of their
 * 32-bit fields, in network order. The text says "OPA SMP" as upstream's.
 */
DECLARE_EVENT_CLASS(ib_mad_ib_smp_class,
		    TP_PROTO(const struct ib_smp *smp),
		    TP_ARGS(smp),
		    TP_STRUCT__entry(__field(u64, mkey)
				     __field(u32, dr_slid)
				     __field(u32, dr_dlid)
				     __field(u8, hop_ptr)
				     __field(u8, hop_cnt)
				     __array(u8, initial_path, IB_SMP_MAX_PATH_HOPS)
				     __array(u8, return_path, IB_SMP_MAX_PATH_HOPS)),
		    TP_fast_assign(__entry->mkey = IB_MAD_TRACE_RAW64(smp->mkey);
				   __entry->dr_slid = IB_MAD_TRACE_RAW16(smp->dr_slid);
				   __entry->dr_dlid = IB_MAD_TRACE_RAW16(smp->dr_dlid);
				   __entry->hop_ptr = smp->hop_ptr;
				   __entry->hop_cnt = smp->hop_cnt;
				   memcpy(__entry->initial_path, smp->initial_path,
					  sizeof(__entry->initial_path));
				   memcpy(__entry->return_path, smp->return_path,
					  sizeof(__entry->return_path));),
		    TP_printk("OPA SMP: hop_ptr %u hop_cnt %u mkey 0x%016llx dr_slid 0x%04x dr_dlid 0x%04x initial_path %*ph return_path %*ph ",
			      __entry->hop_ptr, __entry->hop_cnt,
			      IB_MAD_TRACE_BE64(__entry->mkey),
			      IB_MAD_TRACE_BE16(__entry->dr_slid),
			      IB_MAD_TRACE_BE16(__entry->dr_dlid),
			      IB_SMP_MAX_PATH_HOPS, __entry->initial_path,
			      IB_SMP_MAX_PATH_HOPS, __entry->return_path));

DEFINE_EVENT(ib_mad_ib_smp_class,
	     ib_mad_handle_ib_smi,
	     TP_PROTO(const struct ib_smp *smp),
	     TP_ARGS(smp));

DEFINE_EVENT(ib_mad_ib_smp_class,
	     ib_mad_handle_out_ib_smi,
	     TP_PROTO(const struct ib_smp *smp),
	     TP_ARGS(smp));

#endif /* _TRACE_IB_MAD_H */

#include <trace/define_trace.h>
