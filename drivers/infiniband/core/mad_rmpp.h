/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Private interface between the RMPP files of the MAD layer.
 *
 *   mad_rmpp.c       received RMPP MADs: DATA to reassembly, ACK, STOP and
 *                    ABORT to the sends
 *   mad_rmpp_wire.c  arithmetic and state machines, no I/O (KUnit-tested)
 *   mad_rmpp_ctrl.c  address handles and the ACK/STOP/ABORT MADs we send
 *   mad_rmpp_send.c  segmented sends: windows, ACKs, retries, aborts
 *   mad_rmpp_recv.c  reassembly of DATA segments
 *
 * Calls go one way: mad_rmpp.c calls the send and receive sides, the send
 * side calls the receive side (for the window a requester granted), and
 * both use ctrl and wire.
 *
 * The entry points the core calls are declared in mad_priv.h.  All RMPP
 * state of an agent (its sends' windows and its reassemblies) is protected
 * by ib_mad_agent_private.lock; RMPP takes no lock of its own.
 */
#ifndef _MAD_RMPP_H
#define _MAD_RMPP_H

#include <linux/kref.h>
#include <linux/slab.h>

#include "mad_priv.h"
#include "mad_rmpp_wire.h"

/*
 * Upper bound of the wait for an ACK, in ms.  A caller's timeout_ms is the
 * time it allows for a response, which may include long processing by the
 * peer; an ACK needs only a round trip, so the wait is the smaller of the
 * two, extended by the response time the receiver advertises.  Upstream
 * Linux senders use the same bound, so peers are tuned to it.
 */
#define MAD_RMPP_ACK_WAIT_MAX_MS	2000

/*
 * How many full ACK waits a receiver grants a silent sender before it gives
 * up with "total time too long".  With the ACK wait this gives 40 s of
 * silence between two steps of progress.
 */
#define MAD_RMPP_PEER_TRIES		20

/*
 * Longest a reassembly may take from its first segment, however steadily
 * the sender makes progress: a peer that sends a segment now and then
 * cannot hold an address handle and receive buffers for ever.  Far above
 * what a megabyte takes on a slow link, and what a sender retrying each
 * window MAD_RMPP_PEER_TRIES times could need for any sane message.
 */
#define MAD_RMPP_TOTAL_MAX_MS		(5 * 60 * 1000)

/*
 * How many ACK waits a finished transfer is remembered, to answer a
 * sender that missed our last ACK and repeats its last window.  A request
 * retried with the same TID after that starts a new transfer.
 */
#define MAD_RMPP_LINGER_TRIES		5

/*
 * Reassemblies an agent collects at once; a first segment beyond that
 * evicts the transfer that went longest without progress if that one has
 * been silent for MAD_RMPP_STALL_MS, else it is answered with STOP,
 * "resources exhausted".  Each holds an address handle and the segments
 * received so far.
 */
#define MAD_RMPP_MAX_RECVS		256

/* Reassemblies one source (a LID, or a GID with a GRH) may have at once. */
#define MAD_RMPP_SRC_MAX_RECVS		16

/* Silence after which a transfer may be evicted for another's sake. */
#define MAD_RMPP_STALL_MS		MAD_RMPP_ACK_WAIT_MAX_MS

/* Finished transfers an agent remembers for repeats; the oldest go first. */
#define MAD_RMPP_MAX_DONE		256

/*
 * Largest message we reassemble.  Each segment pins a receive buffer, so a
 * peer announcing an endless transfer is told to STOP (resources exhausted)
 * instead of being allowed to exhaust memory.
 */
#define MAD_RMPP_MAX_MSG_BYTES		(64U << 20)

/*
 * Memory the collecting reassemblies of one agent may pin, counted in
 * receive buffers: each segment pins a whole buffer (mad_rmpp_seg_bytes(),
 * 512 bytes on IB, 4 KiB on OPA), whatever part of it the segment fills.
 * One source (a LID, or a GID with a GRH) may hold 1/MAD_RMPP_SRC_SHARE
 * of it: a host that is two sources (with and without a GRH, or with
 * LMC >= 1) holds a quarter, so it takes many hosts to fill an agent,
 * and then a segment that fits its own source's share makes room by
 * stopping a transfer of the source holding most (see
 * mad_rmpp_recv_make_room_locked()).
 */
#define MAD_RMPP_AGENT_MAX_BYTES	(128U << 20)
#define MAD_RMPP_SRC_SHARE		8

/* The memory a segment received in a buffer for @mad_size bytes pins. */
static inline size_t mad_rmpp_seg_bytes(size_t mad_size)
{
	return kmalloc_size_roundup(struct_size_t(struct ib_mad_recv_priv,
						  mad, mad_size));
}

/* Largest class data offset of an RMPP class (DevMgt, BIS). */
#define MAD_RMPP_MAX_HDR_LEN		IB_MGMT_DEVICE_HDR

/**
 * struct mad_rmpp_ah - a reference-counted address handle
 * @ref: one reference per user, including each MAD posted with it
 * @ah: the address handle, destroyed with the last reference
 *
 * An ACK may still be on the send queue when the transfer that sent it
 * ends, so the handle lives until the last such ACK completed.
 */
struct mad_rmpp_ah {
	struct kref ref;
	struct ib_ah *ah;
};

/**
 * struct mad_rmpp_tmpl - what a reply to a received RMPP MAD is made from
 * @hdr: the received common MAD, RMPP and class headers
 * @hdr_len: valid bytes in @hdr, the class data offset
 * @src_qp: QP the MAD came from
 * @pkey_index: P_Key index it came in on
 *
 * Copied out of the receive buffer while we own it, so that replies can
 * be built after the buffer was handed on or freed.
 */
struct mad_rmpp_tmpl {
	u8 hdr[MAD_RMPP_MAX_HDR_LEN];
	int hdr_len;
	u32 src_qp;
	u16 pkey_index;
};

/**
 * struct mad_rmpp_ctrl - the RMPP fields of an ACK, STOP or ABORT
 * @type: IB_MGMT_RMPP_TYPE_ACK, _STOP or _ABORT
 * @status: RMPP status
 * @seg_num: segment number field
 * @newwin: paylen_newwin field
 */
struct mad_rmpp_ctrl {
	u8 type;
	u8 status;
	u32 seg_num;
	u32 newwin;
};

/* mad_rmpp_ctrl.c */
struct mad_rmpp_ah *mad_rmpp_ah_create(struct ib_mad_agent_private *priv,
				       const struct ib_mad_recv_wc *recv_wc);
void mad_rmpp_ah_put(struct mad_rmpp_ah *ah);
int mad_rmpp_tmpl_init(struct mad_rmpp_tmpl *tmpl,
		       const struct ib_mad_recv_wc *recv_wc);
int mad_rmpp_ctrl_send(struct ib_mad_agent_private *priv,
		       struct mad_rmpp_ah *ah, const struct mad_rmpp_tmpl *tmpl,
		       const struct mad_rmpp_ctrl *ctrl);
void mad_rmpp_ctrl_reply(struct ib_mad_agent_private *priv,
			 const struct ib_mad_recv_wc *recv_wc,
			 const struct mad_rmpp_ctrl *ctrl);
void mad_rmpp_abort_peer(struct ib_mad_agent_private *priv,
			 const struct ib_mad_recv_wc *recv_wc, u8 status);
unsigned int mad_rmpp_peer_wait_ms(u8 rtime);

/* mad_rmpp_send.c */
void mad_rmpp_send_handle_ack(struct ib_mad_agent_private *priv,
			      const struct ib_mad_recv_wc *recv_wc);
void mad_rmpp_send_handle_abort(struct ib_mad_agent_private *priv,
				const struct ib_mad_recv_wc *recv_wc,
				u8 status, u8 reply);

/* mad_rmpp_recv.c */
struct ib_mad_recv_wc *mad_rmpp_recv_data(struct ib_mad_agent_private *priv,
					  struct ib_mad_recv_wc *recv_wc);
void mad_rmpp_recv_note_ds_ack(struct ib_mad_agent_private *priv,
			       const struct ib_mad_recv_wc *recv_wc);
u32 mad_rmpp_recv_peer_window(struct ib_mad_agent_private *priv,
			      struct ib_mad_send_wr_private *wr);

#endif /* _MAD_RMPP_H */
