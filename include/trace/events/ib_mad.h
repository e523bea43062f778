/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Trace points of the MAD layer: agent registration, the send lifecycle,
 * receives, the RMPP headers of kernel-RMPP traffic and directed-route
 * SMP handling.
 *
 * Only mad_*.c include this header, after mad_priv.h. Wire values are
 * converted to CPU order when recorded, so the records hold plain
 * integers.
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

#endif /* _TRACE_IB_MAD_H */

#include <trace/define_trace.h>
