/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * RMPP wire arithmetic: segment layout, header checks and the sender and
 * receiver window state machines.
 *
 * Nothing here touches a device, a queue pair or a lock.  The functions work
 * on plain numbers and on RMPP headers, so that the protocol rules can be
 * tested on their own (see mad_rmpp_kunit.c) and the transport code in
 * mad_rmpp_send.c and mad_rmpp_recv.c only has to move buffers around.
 */
#ifndef _MAD_RMPP_WIRE_H
#define _MAD_RMPP_WIRE_H

#include <linux/list.h>
#include <linux/types.h>
#include <rdma/ib_mad.h>

/**
 * struct mad_rmpp_layout - how one RMPP message is cut into segments
 * @mad_size: bytes of one MAD on the wire (256 for IB, 2048 for OPA)
 * @hdr_len: bytes of common MAD, RMPP and class headers at the start of
 *	every segment
 * @seg_size: class data bytes carried by one segment
 * @rmpp_size: RMPP payload bytes of one segment, i.e. class header plus
 *	class data; this is the unit that paylen_newwin counts in
 * @seg_count: number of segments, at least one
 * @pad: bytes at the end of the last segment that carry no data
 */
struct mad_rmpp_layout {
	u32 mad_size;
	u32 hdr_len;
	u32 seg_size;
	u32 rmpp_size;
	u32 seg_count;
	u32 pad;
};

int mad_rmpp_layout_init(struct mad_rmpp_layout *lay, size_t mad_size,
			 int hdr_len, int data_len);
u32 mad_rmpp_layout_paylen(const struct mad_rmpp_layout *lay, u32 seg_num);
u8 mad_rmpp_layout_flags(const struct mad_rmpp_layout *lay, u32 seg_num);
void mad_rmpp_format_data(struct ib_rmpp_hdr *hdr,
			  const struct mad_rmpp_layout *lay, u32 seg_num);

u8 mad_rmpp_check_hdr(const struct ib_rmpp_hdr *hdr);
u8 mad_rmpp_check_data(const struct ib_rmpp_hdr *hdr);
u8 mad_rmpp_check_ack(const struct ib_rmpp_hdr *ack);
u8 mad_rmpp_peer_abort_status(const struct ib_rmpp_hdr *hdr, u8 *reply);
int mad_rmpp_recv_len(size_t mad_size, u32 hdr_len, u32 seg_count,
		      u32 first_paylen, u32 last_paylen, u8 *status);
bool mad_rmpp_seg_len_ok(u32 mad_len, u32 mad_size,
			 const struct ib_rmpp_hdr *hdr);
u32 mad_rmpp_expect_segs(size_t mad_size, u32 first_paylen);
unsigned int mad_rmpp_resptime_ms(u8 rtime);

/**
 * struct mad_rmpp_send_win - sender side of the RMPP window
 * @seg_count: segments in the message
 * @seg_num: last segment handed to the wire; rewound on retransmission
 * @sent_max: highest segment ever handed to the wire
 * @last_ack: highest segment the receiver has acknowledged
 * @newwin: last segment the receiver allows us to send
 */
struct mad_rmpp_send_win {
	u32 seg_count;
	u32 seg_num;
	u32 sent_max;
	u32 last_ack;
	u32 newwin;
};

/**
 * enum mad_rmpp_ack_verdict - what an ACK does to a send
 * @MAD_RMPP_ACK_ABORT: the ACK breaks the protocol; abort with the status
 *	returned alongside
 * @MAD_RMPP_ACK_STALE: an old or repeated ACK; nothing changes
 * @MAD_RMPP_ACK_PROGRESS: the window or the acknowledged segment moved
 * @MAD_RMPP_ACK_DONE: every segment is acknowledged
 */
enum mad_rmpp_ack_verdict {
	MAD_RMPP_ACK_ABORT,
	MAD_RMPP_ACK_STALE,
	MAD_RMPP_ACK_PROGRESS,
	MAD_RMPP_ACK_DONE,
};

void mad_rmpp_send_win_init(struct mad_rmpp_send_win *win, u32 seg_count,
			    u32 newwin);
enum mad_rmpp_ack_verdict
mad_rmpp_send_win_ack(struct mad_rmpp_send_win *win,
		      const struct ib_rmpp_hdr *ack, u8 *status);
bool mad_rmpp_send_win_may_send(const struct mad_rmpp_send_win *win);
u32 mad_rmpp_send_win_next(struct mad_rmpp_send_win *win);
void mad_rmpp_send_win_rewind(struct mad_rmpp_send_win *win);

/**
 * struct mad_rmpp_recv_win - receiver side of the RMPP window
 * @window: segments granted with each window update
 * @seg_num: highest segment received with no gap before it
 * @last_ack: segment number carried by the last ACK we sent
 * @newwin: last segment the sender may send
 * @last_seg: number of the segment flagged Last, 0 while not seen
 * @expect: segment count announced by the first segment's payload length,
 *	0 when the sender did not announce one
 */
struct mad_rmpp_recv_win {
	u32 window;
	u32 seg_num;
	u32 last_ack;
	u32 newwin;
	u32 last_seg;
	u32 expect;
};

/**
 * enum mad_rmpp_seg_verdict - what to do with an arriving DATA segment
 * @MAD_RMPP_SEG_DROP: outside the window or already held; discard silently
 * @MAD_RMPP_SEG_REACK: already acknowledged; discard and repeat the ACK
 * @MAD_RMPP_SEG_KEEP: new and inside the window; insert it
 */
enum mad_rmpp_seg_verdict {
	MAD_RMPP_SEG_DROP,
	MAD_RMPP_SEG_REACK,
	MAD_RMPP_SEG_KEEP,
};

/**
 * enum mad_rmpp_recv_step - what the receiver does after keeping a segment
 * @MAD_RMPP_RECV_WAIT: more segments are due inside the current window
 * @MAD_RMPP_RECV_ACK: the window is full; an ACK grants the next one
 * @MAD_RMPP_RECV_DONE: the message is complete; ACK it and deliver it
 */
enum mad_rmpp_recv_step {
	MAD_RMPP_RECV_WAIT,
	MAD_RMPP_RECV_ACK,
	MAD_RMPP_RECV_DONE,
};

void mad_rmpp_recv_win_init(struct mad_rmpp_recv_win *win, u32 window,
			    u32 expect);
enum mad_rmpp_seg_verdict
mad_rmpp_recv_win_classify(const struct mad_rmpp_recv_win *win, u32 seg_num);
enum mad_rmpp_recv_step
mad_rmpp_recv_win_advance(struct mad_rmpp_recv_win *win, u32 seg_num,
			  bool last);
u32 mad_rmpp_recv_win_ack(struct mad_rmpp_recv_win *win, u32 *newwin);

u32 mad_rmpp_seg_num(const struct ib_mad_recv_buf *buf);
int mad_rmpp_seg_insert(struct list_head *segs, struct ib_mad_recv_buf *buf);
struct ib_mad_recv_buf *mad_rmpp_seg_walk(struct list_head *segs,
					  struct ib_mad_recv_buf *from,
					  u32 *seg_num, bool *last);

#endif /* _MAD_RMPP_WIRE_H */
