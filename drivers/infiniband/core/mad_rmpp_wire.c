// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * RMPP wire arithmetic and window state machines.
 *
 * An RMPP message is one copy of the headers followed by class data.  On the
 * wire it travels as numbered segments (from 1), each a full MAD that repeats
 * the common, RMPP and class headers and carries the next slice of class
 * data.  The RMPP "payload" of a segment is everything after the RMPP header,
 * i.e. class header plus class data, and paylen_newwin counts in those units:
 * the first segment announces the payload of the whole message, the last one
 * the payload it carries itself (a full segment minus the pad).  An upstream
 * Linux receiver derives the message length from the last segment only, so
 * that value must be exact; we check both on receipt.
 */
#include <linux/kernel.h>
#include <linux/math64.h>
#include <linux/overflow.h>

#include "mad_rmpp_wire.h"

/**
 * mad_rmpp_layout_init() - compute the segment layout of an RMPP message
 * @lay: layout to fill in
 * @mad_size: size of one MAD on the wire
 * @hdr_len: common MAD, RMPP and class header bytes
 * @data_len: class data bytes the caller wants to transfer
 *
 * A message with no class data still occupies one segment, all of it pad,
 * as upstream Linux sends it.  The layout is refused when the numbers cannot
 * describe a real message: a header that leaves no room for data, a negative
 * data length, or a message whose payload length does not fit the 32-bit
 * paylen_newwin field or whose buffer size does not fit an int.
 *
 * Context: Any context.
 * Return: 0, or -EINVAL when the layout is impossible.
 */
int mad_rmpp_layout_init(struct mad_rmpp_layout *lay, size_t mad_size,
			 int hdr_len, int data_len)
{
	u32 seg_size, rem, total;
	u64 paylen;

	if (mad_size <= IB_MGMT_RMPP_HDR || mad_size > U16_MAX ||
	    hdr_len < IB_MGMT_RMPP_HDR || (size_t)hdr_len >= mad_size ||
	    data_len < 0)
		return -EINVAL;

	seg_size = mad_size - hdr_len;
	rem = data_len % seg_size;
	lay->mad_size = mad_size;
	lay->hdr_len = hdr_len;
	lay->seg_size = seg_size;
	lay->rmpp_size = mad_size - IB_MGMT_RMPP_HDR;
	lay->pad = (data_len && !rem) ? 0 : seg_size - rem;

	/* The caller's buffer holds the headers once plus whole segments. */
	if (check_add_overflow((u32)data_len, lay->pad, &total) ||
	    total > INT_MAX - hdr_len)
		return -EINVAL;
	lay->seg_count = total / seg_size;

	paylen = (u64)lay->seg_count * lay->rmpp_size - lay->pad;
	if (paylen > U32_MAX)
		return -EINVAL;
	return 0;
}

/**
 * mad_rmpp_layout_paylen() - paylen_newwin value of a DATA segment
 * @lay: layout of the message
 * @seg_num: segment number, from 1
 *
 * The first segment carries the payload length of the whole message, the
 * last one the payload length it carries itself; a single segment is both
 * and both rules give the same value.  Middle segments carry 0.
 *
 * Context: Any context.
 * Return: the value in host byte order.
 */
u32 mad_rmpp_layout_paylen(const struct mad_rmpp_layout *lay, u32 seg_num)
{
	if (seg_num == lay->seg_count)
		return lay->rmpp_size - lay->pad;
	if (seg_num == 1)
		return lay->seg_count * lay->rmpp_size - lay->pad;
	return 0;
}

/**
 * mad_rmpp_layout_flags() - RMPP flags of a DATA segment
 * @lay: layout of the message
 * @seg_num: segment number, from 1
 *
 * Context: Any context.
 * Return: Active, plus First on segment 1 and Last on the final segment.
 */
u8 mad_rmpp_layout_flags(const struct mad_rmpp_layout *lay, u32 seg_num)
{
	u8 flags = IB_MGMT_RMPP_FLAG_ACTIVE;

	if (seg_num == 1)
		flags |= IB_MGMT_RMPP_FLAG_FIRST;
	if (seg_num == lay->seg_count)
		flags |= IB_MGMT_RMPP_FLAG_LAST;
	return flags;
}

/**
 * mad_rmpp_format_data() - fill the RMPP header of an outgoing DATA segment
 * @hdr: RMPP header, already holding version, type and response time
 * @lay: layout of the message
 * @seg_num: segment number, from 1
 *
 * The response time bits are left as the caller set them.
 *
 * Context: Any context.
 */
void mad_rmpp_format_data(struct ib_rmpp_hdr *hdr,
			  const struct mad_rmpp_layout *lay, u32 seg_num)
{
	hdr->rmpp_type = IB_MGMT_RMPP_TYPE_DATA;
	hdr->rmpp_status = 0;
	ib_set_rmpp_flags(hdr, mad_rmpp_layout_flags(lay, seg_num));
	hdr->seg_num = cpu_to_be32(seg_num);
	hdr->paylen_newwin = cpu_to_be32(mad_rmpp_layout_paylen(lay, seg_num));
}

/**
 * mad_rmpp_check_hdr() - check the parts every active RMPP MAD shares
 * @hdr: RMPP header of a received MAD with the Active flag set
 *
 * Context: Any context.
 * Return: 0 when version and type are known, otherwise the ABORT status to
 * answer with (unsupported version, or illegal type).
 */
u8 mad_rmpp_check_hdr(const struct ib_rmpp_hdr *hdr)
{
	if (hdr->rmpp_version != IB_MGMT_RMPP_VERSION)
		return IB_MGMT_RMPP_STATUS_UNV;
	if (hdr->rmpp_type < IB_MGMT_RMPP_TYPE_DATA ||
	    hdr->rmpp_type > IB_MGMT_RMPP_TYPE_ABORT)
		return IB_MGMT_RMPP_STATUS_BADT;
	return 0;
}

/**
 * mad_rmpp_check_data() - check the header of a received DATA segment
 * @hdr: RMPP header of the segment
 *
 * A DATA segment has status 0, a segment number of at least 1, and the First
 * flag exactly when the number is 1.
 *
 * Context: Any context.
 * Return: 0 when the segment may be processed, otherwise the ABORT status.
 */
u8 mad_rmpp_check_data(const struct ib_rmpp_hdr *hdr)
{
	bool first = ib_get_rmpp_flags((struct ib_rmpp_hdr *)hdr) &
		     IB_MGMT_RMPP_FLAG_FIRST;
	u32 seg_num = be32_to_cpu(hdr->seg_num);
	bool numbered_first = seg_num == 1;

	if (hdr->rmpp_status)
		return IB_MGMT_RMPP_STATUS_BAD_STATUS;
	if (!seg_num || first != numbered_first)
		return IB_MGMT_RMPP_STATUS_BAD_SEG;
	return 0;
}

/**
 * mad_rmpp_peer_abort_status() - interpret a STOP or ABORT from the receiver
 * @hdr: RMPP header of the STOP or ABORT
 * @reply: set to the status of the ABORT we must send back, or 0
 *
 * A STOP must carry "resources exhausted" and an ABORT a status from the
 * abort range.  Anything else is itself a protocol error: the send still
 * ends, with "illegal status", and the peer is told so.
 *
 * Context: Any context.
 * Return: the RMPP status the send completes with (in vendor_err).
 */
u8 mad_rmpp_peer_abort_status(const struct ib_rmpp_hdr *hdr, u8 *reply)
{
	u8 status = hdr->rmpp_status;
	bool valid;

	if (hdr->rmpp_type == IB_MGMT_RMPP_TYPE_STOP)
		valid = status == IB_MGMT_RMPP_STATUS_RESX;
	else
		valid = status >= IB_MGMT_RMPP_STATUS_ABORT_MIN &&
			status <= IB_MGMT_RMPP_STATUS_ABORT_MAX;

	*reply = valid ? 0 : IB_MGMT_RMPP_STATUS_BAD_STATUS;
	return valid ? status : IB_MGMT_RMPP_STATUS_BAD_STATUS;
}

/**
 * mad_rmpp_recv_len() - length of a reassembled message
 * @mad_size: size of one MAD on the wire
 * @hdr_len: common MAD, RMPP and class header bytes of the class
 * @seg_count: number of segments received, the last one flagged Last
 * @first_paylen: paylen_newwin of segment 1 (0: not announced)
 * @last_paylen: paylen_newwin of the last segment
 * @status: set to the ABORT status when the lengths are inconsistent
 *
 * The last segment must carry at least the class header and at most a full
 * segment.  When the first segment announced a total, it must match what
 * arrived.  The result covers the headers once plus the class data, the
 * way ib_mad_recv_wc.mad_len is read by ib_umad and the kernel clients.
 *
 * Context: Any context.
 * Return: the length in bytes, or -EPROTO with @status set, or -EINVAL when
 * @mad_size and @hdr_len do not describe an RMPP class.
 */
int mad_rmpp_recv_len(size_t mad_size, u32 hdr_len, u32 seg_count,
		      u32 first_paylen, u32 last_paylen, u8 *status)
{
	u32 rmpp_size, seg_size, class_len;
	u64 total, len;

	if (mad_size <= IB_MGMT_RMPP_HDR || mad_size > U16_MAX ||
	    hdr_len < IB_MGMT_RMPP_HDR || hdr_len >= mad_size || !seg_count)
		return -EINVAL;

	rmpp_size = mad_size - IB_MGMT_RMPP_HDR;
	seg_size = mad_size - hdr_len;
	class_len = hdr_len - IB_MGMT_RMPP_HDR;
	*status = IB_MGMT_RMPP_STATUS_BAD_LEN;

	if (last_paylen < class_len || last_paylen > rmpp_size)
		return -EPROTO;

	total = (u64)(seg_count - 1) * rmpp_size + last_paylen;
	if (first_paylen && first_paylen != total)
		return -EPROTO;

	len = hdr_len + (u64)(seg_count - 1) * seg_size +
	      (last_paylen - class_len);
	if (len > INT_MAX)
		return -EPROTO;

	*status = 0;
	return len;
}

/**
 * mad_rmpp_seg_len_ok() - does a DATA segment hold the payload it carries?
 * @mad_len: bytes received from the common MAD header on
 * @mad_size: size of one segment of the transfer (256 IB, 2048 OPA)
 * @hdr: the segment's RMPP header
 *
 * Every segment but the last travels as a full MAD.  The last one may be
 * cut short after its payload: an OPA sender sends a message that fits in
 * one segment no longer than its data (see ib_create_send_mad()).  Its
 * paylen_newwin then counts the bytes after the RMPP header, which must
 * all have arrived.  The lengths a full segment announces are checked
 * when the message is complete (mad_rmpp_recv_len()).
 *
 * Context: Any context.
 * Return: true if the segment may join a reassembly.
 */
bool mad_rmpp_seg_len_ok(u32 mad_len, u32 mad_size,
			 const struct ib_rmpp_hdr *hdr)
{
	if (mad_len >= mad_size)
		return true;
	if (mad_len < IB_MGMT_RMPP_HDR ||
	    !(hdr->rmpp_rtime_flags & IB_MGMT_RMPP_FLAG_LAST))
		return false;
	return be32_to_cpu(hdr->paylen_newwin) <= mad_len - IB_MGMT_RMPP_HDR;
}

/**
 * mad_rmpp_expect_segs() - segment count announced by a first segment
 * @mad_size: size of one MAD on the wire
 * @first_paylen: paylen_newwin of segment 1
 *
 * Context: Any context.
 * Return: the number of segments the sender announced, or 0 when it
 * announced no length.
 */
u32 mad_rmpp_expect_segs(size_t mad_size, u32 first_paylen)
{
	if (mad_size <= IB_MGMT_RMPP_HDR)
		return 0;
	return DIV_ROUND_UP_ULL(first_paylen, mad_size - IB_MGMT_RMPP_HDR);
}

/**
 * mad_rmpp_resptime_ms() - decode an RMPP response time field
 * @rtime: the 5-bit RRespTime value, 4.096 us * 2^rtime
 *
 * Context: Any context.
 * Return: the time in milliseconds rounded up, or 0 when the peer gave
 * none (IB_MGMT_RMPP_NO_RESPTIME).
 */
unsigned int mad_rmpp_resptime_ms(u8 rtime)
{
	if (rtime >= IB_MGMT_RMPP_NO_RESPTIME)
		return 0;
	return DIV_ROUND_UP_ULL(4096ULL << rtime, NSEC_PER_MSEC);
}

/**
 * mad_rmpp_send_win_init() - start the sender window of a message
 * @win: window to initialise
 * @seg_count: segments in the message
 * @newwin: last segment we may send before the first ACK (1, or what the
 *	peer granted with the ACK that turned a double-sided transfer around)
 *
 * Context: Any context.
 */
void mad_rmpp_send_win_init(struct mad_rmpp_send_win *win, u32 seg_count,
			    u32 newwin)
{
	win->seg_count = seg_count;
	win->seg_num = 0;
	win->sent_max = 0;
	win->last_ack = 0;
	win->newwin = max(newwin, 1U);
}

/**
 * mad_rmpp_check_ack() - checks of an ACK that need no send to compare with
 * @ack: RMPP header of a received ACK
 *
 * Context: Any context.
 * Return: 0, "illegal status" for an ACK with a non-zero status, or "new
 * window too small" when the window ends before the acknowledged segment.
 */
u8 mad_rmpp_check_ack(const struct ib_rmpp_hdr *ack)
{
	if (ack->rmpp_status)
		return IB_MGMT_RMPP_STATUS_BAD_STATUS;
	if (be32_to_cpu(ack->paylen_newwin) < be32_to_cpu(ack->seg_num))
		return IB_MGMT_RMPP_STATUS_W2S;
	return 0;
}

/**
 * mad_rmpp_send_win_ack() - apply a received ACK to the sender window
 * @win: window of the send the ACK matched
 * @ack: RMPP header of the ACK
 * @status: set to the ABORT status on %MAD_RMPP_ACK_ABORT
 *
 * An ACK with a non-zero status, one whose new window ends before the
 * segment it acknowledges, and one that acknowledges a segment never sent
 * abort the transfer.  An ACK for an earlier segment is ignored, and so is
 * one for the same segment unless it widens the window.  An ACK for new
 * data counts even when its window is smaller than one granted before
 * (a double-sided turnaround may have promised more than the receiver's
 * own ACKs say); the window itself never shrinks.
 *
 * Context: Any context; the caller serialises access to @win.
 * Return: the verdict; on %MAD_RMPP_ACK_PROGRESS the caller compares
 * @win->last_ack with its old value to know whether to refill retries.
 */
enum mad_rmpp_ack_verdict
mad_rmpp_send_win_ack(struct mad_rmpp_send_win *win,
		      const struct ib_rmpp_hdr *ack, u8 *status)
{
	u32 seg_num = be32_to_cpu(ack->seg_num);
	u32 newwin = be32_to_cpu(ack->paylen_newwin);

	*status = mad_rmpp_check_ack(ack);
	if (!*status &&
	    (seg_num > win->seg_count || seg_num > win->sent_max))
		*status = IB_MGMT_RMPP_STATUS_S2B;
	if (*status)
		return MAD_RMPP_ACK_ABORT;

	if (seg_num < win->last_ack ||
	    (seg_num == win->last_ack && newwin <= win->newwin))
		return MAD_RMPP_ACK_STALE;

	win->last_ack = seg_num;
	win->newwin = max(win->newwin, newwin);
	/* Segments between the ACK and a rewind are sent again anyway. */
	if (win->seg_num < seg_num)
		win->seg_num = seg_num;
	if (win->last_ack == win->seg_count)
		return MAD_RMPP_ACK_DONE;
	return MAD_RMPP_ACK_PROGRESS;
}

/**
 * mad_rmpp_send_win_may_send() - may another segment go on the wire?
 * @win: sender window
 *
 * Context: Any context; the caller serialises access to @win.
 * Return: true while the next segment exists and lies inside the window.
 */
bool mad_rmpp_send_win_may_send(const struct mad_rmpp_send_win *win)
{
	return win->seg_num < win->seg_count && win->seg_num < win->newwin;
}

/**
 * mad_rmpp_send_win_next() - take the next segment to send
 * @win: sender window; mad_rmpp_send_win_may_send() must be true
 *
 * Context: Any context; the caller serialises access to @win.
 * Return: the number of the segment to send.
 */
u32 mad_rmpp_send_win_next(struct mad_rmpp_send_win *win)
{
	win->seg_num++;
	win->sent_max = max(win->sent_max, win->seg_num);
	return win->seg_num;
}

/**
 * mad_rmpp_send_win_rewind() - go back to the last acknowledged segment
 * @win: sender window
 *
 * After an ACK timeout every segment after the last acknowledged one is
 * sent again, starting with the first unacknowledged segment.
 *
 * Context: Any context; the caller serialises access to @win.
 */
void mad_rmpp_send_win_rewind(struct mad_rmpp_send_win *win)
{
	win->seg_num = win->last_ack;
}

/**
 * mad_rmpp_recv_win_init() - start the receiver window of a transfer
 * @win: window to initialise
 * @window: segments to grant with each ACK, at least 1
 * @expect: segment count announced by the first segment, 0 if none
 *
 * Until the first ACK the sender may only send segment 1.
 *
 * Context: Any context.
 */
void mad_rmpp_recv_win_init(struct mad_rmpp_recv_win *win, u32 window,
			    u32 expect)
{
	win->window = max(window, 1U);
	win->seg_num = 0;
	win->last_ack = 0;
	win->newwin = 1;
	win->last_seg = 0;
	win->expect = expect;
}

/**
 * mad_rmpp_recv_win_classify() - decide the fate of an arriving segment
 * @win: receiver window
 * @seg_num: number of the arriving DATA segment
 *
 * Once the message is complete every segment the sender may still repeat
 * is answered with the final ACK again.  Before that, segments beyond the
 * granted window, beyond the Last segment or beyond the announced count are
 * dropped; segments we already acknowledged are acknowledged again (our ACK
 * may have been lost); segments already held but not yet acknowledged are
 * dropped, since the ACK that covers them is still to come.
 *
 * Context: Any context; the caller serialises access to @win.
 * Return: the verdict.
 */
enum mad_rmpp_seg_verdict
mad_rmpp_recv_win_classify(const struct mad_rmpp_recv_win *win, u32 seg_num)
{
	if (!seg_num || seg_num > win->newwin)
		return MAD_RMPP_SEG_DROP;
	if (win->last_seg && win->seg_num == win->last_seg)
		return MAD_RMPP_SEG_REACK;
	if (seg_num <= win->last_ack)
		return MAD_RMPP_SEG_REACK;
	if (seg_num <= win->seg_num)
		return MAD_RMPP_SEG_DROP;
	if (win->last_seg && seg_num > win->last_seg)
		return MAD_RMPP_SEG_DROP;
	if (win->expect && seg_num > win->expect)
		return MAD_RMPP_SEG_DROP;
	return MAD_RMPP_SEG_KEEP;
}

/**
 * mad_rmpp_recv_win_advance() - record progress after keeping a segment
 * @win: receiver window
 * @seg_num: highest segment now held with no gap before it
 * @last: whether that segment carries the Last flag
 *
 * When the in-order part reaches the end of the window the next window is
 * granted at once, so that the ACK the caller sends carries it.
 *
 * Context: Any context; the caller serialises access to @win.
 * Return: what the caller must do next.
 */
enum mad_rmpp_recv_step
mad_rmpp_recv_win_advance(struct mad_rmpp_recv_win *win, u32 seg_num,
			  bool last)
{
	win->seg_num = seg_num;
	if (last) {
		win->last_seg = seg_num;
		return MAD_RMPP_RECV_DONE;
	}
	if (seg_num < win->newwin)
		return MAD_RMPP_RECV_WAIT;
	win->newwin = seg_num + win->window;
	if (win->newwin < seg_num)	/* the 32-bit segment space ends */
		win->newwin = U32_MAX;
	return MAD_RMPP_RECV_ACK;
}

/**
 * mad_rmpp_recv_win_ack() - values for the ACK to send now
 * @win: receiver window
 * @newwin: set to the last segment the sender may send
 *
 * Context: Any context; the caller serialises access to @win.
 * Return: the segment number to acknowledge.
 */
u32 mad_rmpp_recv_win_ack(struct mad_rmpp_recv_win *win, u32 *newwin)
{
	win->last_ack = win->seg_num;
	*newwin = win->newwin;
	return win->seg_num;
}

/**
 * mad_rmpp_seg_num() - segment number of a received RMPP segment
 * @buf: receive buffer holding an RMPP MAD
 *
 * Context: Any context.
 * Return: the segment number in host byte order.
 */
u32 mad_rmpp_seg_num(const struct ib_mad_recv_buf *buf)
{
	const struct ib_rmpp_mad *mad = (const struct ib_rmpp_mad *)buf->mad;

	return be32_to_cpu(mad->rmpp_hdr.seg_num);
}

/**
 * mad_rmpp_seg_insert() - put a segment into a reassembly list in order
 * @segs: list of &struct ib_mad_recv_buf, ascending by segment number
 * @buf: segment to insert
 *
 * The list is searched from its tail since segments mostly arrive in
 * order, which makes the common case O(1).
 *
 * Context: Any context; the caller serialises access to @segs.
 * Return: 0, or -EEXIST when a segment with the same number is held
 * already (@buf is then not linked).
 */
int mad_rmpp_seg_insert(struct list_head *segs, struct ib_mad_recv_buf *buf)
{
	u32 seg_num = mad_rmpp_seg_num(buf);
	struct ib_mad_recv_buf *cur;

	list_for_each_entry_reverse(cur, segs, list) {
		u32 cur_num = mad_rmpp_seg_num(cur);

		if (cur_num == seg_num)
			return -EEXIST;
		if (cur_num < seg_num) {
			list_add(&buf->list, &cur->list);
			return 0;
		}
	}
	list_add(&buf->list, segs);
	return 0;
}

/**
 * mad_rmpp_seg_walk() - follow the gap-free run of segments
 * @segs: reassembly list
 * @from: segment with number *@seg_num, the current end of the run
 * @seg_num: in: number of @from; out: number of the new end of the run
 * @last: set to whether the new end of the run carries the Last flag
 *
 * Context: Any context; the caller serialises access to @segs.
 * Return: the segment that now ends the gap-free run.
 */
struct ib_mad_recv_buf *mad_rmpp_seg_walk(struct list_head *segs,
					  struct ib_mad_recv_buf *from,
					  u32 *seg_num, bool *last)
{
	struct ib_mad_recv_buf *next;
	struct ib_rmpp_mad *mad;

	while (!list_is_last(&from->list, segs)) {
		next = list_next_entry(from, list);
		if (mad_rmpp_seg_num(next) != *seg_num + 1)
			break;
		from = next;
		(*seg_num)++;
	}
	mad = (struct ib_rmpp_mad *)from->mad;
	*last = ib_get_rmpp_flags(&mad->rmpp_hdr) & IB_MGMT_RMPP_FLAG_LAST;
	return from;
}
