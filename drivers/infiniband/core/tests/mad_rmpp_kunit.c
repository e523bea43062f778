// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * KUnit tests for the RMPP wire arithmetic and window state machines.
 *
 * The expected segment counts, pads and payload lengths in the tables were
 * worked out by hand from the InfiniBand RMPP rules (220-byte RMPP payload
 * per 256-byte MAD, class header repeated in every segment); the round trip
 * tests then check that what the sender arithmetic produces is read back to
 * the same length both by our receiver and by the formula an upstream Linux
 * receiver applies to the last segment.
 */
#include <kunit/test.h>
#include <linux/module.h>

/*
 * The wire arithmetic is pure code with no state in ib_core: the test
 * module builds its own copy of it, so ib_core exports nothing for tests.
 */
#include "../mad_rmpp_wire.c"

struct mad_rmpp_kunit_layout_case {
	const char *name;
	size_t mad_size;
	int hdr_len;
	int data_len;
	u32 seg_count;
	u32 pad;
	u32 first_paylen;
	u32 last_paylen;
};

#define MAD_RMPP_KUNIT_IB 256
#define MAD_RMPP_KUNIT_OPA 2048

static const struct mad_rmpp_kunit_layout_case mad_rmpp_kunit_layouts[] = {
	/* No data: one segment, all pad; paylen is the class header alone. */
	{ "vendor-0", 256, IB_MGMT_VENDOR_HDR, 0, 1, 216, 4, 4 },
	{ "sa-0", 256, IB_MGMT_SA_HDR, 0, 1, 200, 20, 20 },
	{ "devmgt-0", 256, IB_MGMT_DEVICE_HDR, 0, 1, 192, 28, 28 },
	{ "vendor-1", 256, IB_MGMT_VENDOR_HDR, 1, 1, 215, 5, 5 },
	{ "sa-1", 256, IB_MGMT_SA_HDR, 1, 1, 199, 21, 21 },
	{ "devmgt-1", 256, IB_MGMT_DEVICE_HDR, 1, 1, 191, 29, 29 },
	/* Exactly one full segment. */
	{ "vendor-full", 256, IB_MGMT_VENDOR_HDR, 216, 1, 0, 220, 220 },
	{ "sa-full", 256, IB_MGMT_SA_HDR, 200, 1, 0, 220, 220 },
	{ "devmgt-full", 256, IB_MGMT_DEVICE_HDR, 192, 1, 0, 220, 220 },
	/* One full segment plus one byte. */
	{ "vendor-full+1", 256, IB_MGMT_VENDOR_HDR, 217, 2, 215, 225, 5 },
	{ "sa-full+1", 256, IB_MGMT_SA_HDR, 201, 2, 199, 241, 21 },
	{ "devmgt-full+1", 256, IB_MGMT_DEVICE_HDR, 193, 2, 191, 249, 29 },
	/* The payload sizes of the VM test. */
	{ "devmgt-200", 256, IB_MGMT_DEVICE_HDR, 200, 2, 184, 256, 36 },
	{ "vendor-220", 256, IB_MGMT_VENDOR_HDR, 220, 2, 212, 228, 8 },
	{ "vendor-4k", 256, IB_MGMT_VENDOR_HDR, 4096, 19, 8, 4172, 212 },
	{ "sa-4k", 256, IB_MGMT_SA_HDR, 4096, 21, 104, 4516, 116 },
	{ "devmgt-64k", 256, IB_MGMT_DEVICE_HDR, 65536, 342, 128, 75112, 92 },
	{ "vendor-1m", 256, IB_MGMT_VENDOR_HDR, 1 << 20, 4855, 104, 1067996,
	  116 },
	/* OPA-sized MADs. */
	{ "opa-vendor-1", 2048, IB_MGMT_VENDOR_HDR, 1, 1, 2007, 5, 5 },
	{ "opa-vendor-full+1", 2048, IB_MGMT_VENDOR_HDR, 2009, 2, 2007, 2017,
	  5 },
	/* The largest messages whose buffer size still fits an int. */
	{ "vendor-max", 256, IB_MGMT_VENDOR_HDR, 2147483448, 9942053, 0,
	  2187251660U, 220 },
	{ "sa-max", 256, IB_MGMT_SA_HDR, 2147483400, 10737417, 0,
	  2362231740U, 220 },
	{ "devmgt-max", 256, IB_MGMT_DEVICE_HDR, 2147483520, 11184810, 0,
	  2460658200U, 220 },
};

KUNIT_ARRAY_PARAM_DESC(mad_rmpp_kunit_layout, mad_rmpp_kunit_layouts, name);

static void mad_rmpp_kunit_layout_table(struct kunit *test)
{
	const struct mad_rmpp_kunit_layout_case *c = test->param_value;
	struct mad_rmpp_layout lay;
	u32 last;

	KUNIT_ASSERT_EQ(test, mad_rmpp_layout_init(&lay, c->mad_size,
						   c->hdr_len, c->data_len), 0);
	KUNIT_EXPECT_EQ(test, lay.seg_size, c->mad_size - c->hdr_len);
	KUNIT_EXPECT_EQ(test, lay.rmpp_size, c->mad_size - IB_MGMT_RMPP_HDR);
	KUNIT_EXPECT_EQ(test, lay.seg_count, c->seg_count);
	KUNIT_EXPECT_EQ(test, lay.pad, c->pad);
	/* The caller's buffer holds exactly whole segments. */
	KUNIT_EXPECT_EQ(test, (u64)c->data_len + lay.pad,
			(u64)lay.seg_count * lay.seg_size);

	last = lay.seg_count;
	if (last > 1) {
		KUNIT_EXPECT_EQ(test, mad_rmpp_layout_paylen(&lay, 1),
				c->first_paylen);
		KUNIT_EXPECT_EQ(test, mad_rmpp_layout_paylen(&lay, last),
				c->last_paylen);
	} else {
		KUNIT_EXPECT_EQ(test, mad_rmpp_layout_paylen(&lay, 1),
				c->last_paylen);
		KUNIT_EXPECT_EQ(test, c->first_paylen, c->last_paylen);
	}
	if (last > 2)
		KUNIT_EXPECT_EQ(test, mad_rmpp_layout_paylen(&lay, 2), 0);
}

static void mad_rmpp_kunit_reassembled_len(struct kunit *test)
{
	const struct mad_rmpp_kunit_layout_case *c = test->param_value;
	struct mad_rmpp_layout lay;
	u32 first, last;
	s64 upstream;
	u8 status;
	int len;

	KUNIT_ASSERT_EQ(test, mad_rmpp_layout_init(&lay, c->mad_size,
						   c->hdr_len, c->data_len), 0);
	first = mad_rmpp_layout_paylen(&lay, 1);
	last = mad_rmpp_layout_paylen(&lay, lay.seg_count);

	len = mad_rmpp_recv_len(c->mad_size, c->hdr_len, lay.seg_count,
				first, last, &status);
	KUNIT_EXPECT_EQ(test, len, c->hdr_len + c->data_len);
	KUNIT_EXPECT_EQ(test, status, 0);
	/* A sender that announces no total is read the same way. */
	len = mad_rmpp_recv_len(c->mad_size, c->hdr_len, lay.seg_count,
				0, last, &status);
	KUNIT_EXPECT_EQ(test, len, c->hdr_len + c->data_len);

	/*
	 * An upstream receiver takes the pad as a full RMPP payload minus the
	 * last paylen and removes it from whole segments of class data.
	 */
	upstream = c->hdr_len + (s64)lay.seg_count * lay.seg_size -
		   (lay.rmpp_size - last);
	KUNIT_EXPECT_EQ(test, upstream, (s64)c->hdr_len + c->data_len);

	KUNIT_EXPECT_EQ(test, mad_rmpp_expect_segs(c->mad_size, first),
			lay.seg_count);
}

static void mad_rmpp_kunit_layout_invalid(struct kunit *test)
{
	struct mad_rmpp_layout lay;

	KUNIT_EXPECT_EQ(test, mad_rmpp_layout_init(&lay, 256, 40, -1), -EINVAL);
	KUNIT_EXPECT_EQ(test, mad_rmpp_layout_init(&lay, 256, 40, INT_MIN),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, mad_rmpp_layout_init(&lay, 256, 35, 10), -EINVAL);
	KUNIT_EXPECT_EQ(test, mad_rmpp_layout_init(&lay, 256, 256, 10),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, mad_rmpp_layout_init(&lay, 256, -5, 10), -EINVAL);
	KUNIT_EXPECT_EQ(test, mad_rmpp_layout_init(&lay, 36, 36, 10), -EINVAL);
	/* One byte more than the maximum needs a segment that does not fit. */
	KUNIT_EXPECT_EQ(test, mad_rmpp_layout_init(&lay, 256, 40, 2147483449),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, mad_rmpp_layout_init(&lay, 256, 56, INT_MAX),
			-EINVAL);
	/* One data byte per segment: the total paylen overflows 32 bits. */
	KUNIT_EXPECT_EQ(test, mad_rmpp_layout_init(&lay, 256, 255, 20000000),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, mad_rmpp_layout_init(&lay, 256, 255, 19000000),
			0);
}

static void mad_rmpp_kunit_flags(struct kunit *test)
{
	const u8 a = IB_MGMT_RMPP_FLAG_ACTIVE;
	const u8 f = IB_MGMT_RMPP_FLAG_FIRST;
	const u8 l = IB_MGMT_RMPP_FLAG_LAST;
	struct mad_rmpp_layout one, three;
	struct ib_rmpp_hdr hdr = {};

	KUNIT_ASSERT_EQ(test, mad_rmpp_layout_init(&one, 256, 56, 10), 0);
	KUNIT_ASSERT_EQ(test, mad_rmpp_layout_init(&three, 256, 56, 401), 0);
	KUNIT_ASSERT_EQ(test, three.seg_count, 3);

	KUNIT_EXPECT_EQ(test, mad_rmpp_layout_flags(&one, 1), a | f | l);
	KUNIT_EXPECT_EQ(test, mad_rmpp_layout_flags(&three, 1), a | f);
	KUNIT_EXPECT_EQ(test, mad_rmpp_layout_flags(&three, 2), a);
	KUNIT_EXPECT_EQ(test, mad_rmpp_layout_flags(&three, 3), a | l);

	/* Formatting keeps the response time and writes network order. */
	hdr.rmpp_version = IB_MGMT_RMPP_VERSION;
	hdr.rmpp_status = 7;
	ib_set_rmpp_resptime(&hdr, 18);
	mad_rmpp_format_data(&hdr, &three, 1);
	KUNIT_EXPECT_EQ(test, ib_get_rmpp_resptime(&hdr), 18);
	KUNIT_EXPECT_EQ(test, ib_get_rmpp_flags(&hdr), a | f);
	KUNIT_EXPECT_EQ(test, hdr.rmpp_type, IB_MGMT_RMPP_TYPE_DATA);
	KUNIT_EXPECT_EQ(test, hdr.rmpp_status, 0);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(hdr.seg_num), 1);
	/* 3 * 220 - 199 pad */
	KUNIT_EXPECT_EQ(test, be32_to_cpu(hdr.paylen_newwin), 461);
	KUNIT_EXPECT_EQ(test, ((u8 *)&hdr.paylen_newwin)[3], 461 & 0xff);

	mad_rmpp_format_data(&hdr, &three, 2);
	KUNIT_EXPECT_EQ(test, ib_get_rmpp_flags(&hdr), a);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(hdr.paylen_newwin), 0);

	mad_rmpp_format_data(&hdr, &three, 3);
	KUNIT_EXPECT_EQ(test, ib_get_rmpp_flags(&hdr), a | l);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(hdr.seg_num), 3);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(hdr.paylen_newwin), 21);
	KUNIT_EXPECT_EQ(test, ib_get_rmpp_resptime(&hdr), 18);
}

static void mad_rmpp_kunit_recv_len_bad(struct kunit *test)
{
	u8 status = 0;

	/* Last paylen shorter than the SA header. */
	KUNIT_EXPECT_EQ(test, mad_rmpp_recv_len(256, 56, 2, 0, 19, &status),
			-EPROTO);
	KUNIT_EXPECT_EQ(test, status, IB_MGMT_RMPP_STATUS_BAD_LEN);
	/* Last paylen longer than a segment. */
	status = 0;
	KUNIT_EXPECT_EQ(test, mad_rmpp_recv_len(256, 56, 2, 0, 221, &status),
			-EPROTO);
	KUNIT_EXPECT_EQ(test, status, IB_MGMT_RMPP_STATUS_BAD_LEN);
	/* Announced total disagrees with the segments that came. */
	status = 0;
	KUNIT_EXPECT_EQ(test, mad_rmpp_recv_len(256, 56, 2, 461, 21, &status),
			-EPROTO);
	KUNIT_EXPECT_EQ(test, status, IB_MGMT_RMPP_STATUS_BAD_LEN);
	KUNIT_EXPECT_EQ(test, mad_rmpp_recv_len(256, 56, 3, 461, 21, &status),
			56 + 401);
	KUNIT_EXPECT_EQ(test, status, 0);
	/* Boundaries are accepted. */
	KUNIT_EXPECT_EQ(test, mad_rmpp_recv_len(256, 56, 2, 0, 20, &status),
			56 + 200);
	KUNIT_EXPECT_EQ(test, mad_rmpp_recv_len(256, 56, 2, 0, 220, &status),
			56 + 400);
	/* Lengths that cannot be an RMPP class are a caller bug. */
	KUNIT_EXPECT_EQ(test, mad_rmpp_recv_len(256, 24, 1, 0, 20, &status),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, mad_rmpp_recv_len(256, 56, 0, 0, 20, &status),
			-EINVAL);
	/* A message too long for an int length. */
	KUNIT_EXPECT_EQ(test, mad_rmpp_recv_len(256, 40, 10000000, 0, 220,
						&status), -EPROTO);
	KUNIT_EXPECT_EQ(test, status, IB_MGMT_RMPP_STATUS_BAD_LEN);
}

static struct ib_rmpp_hdr mad_rmpp_kunit_hdr(u8 type, u8 flags, u8 status,
					     u32 seg_num, u32 paylen)
{
	struct ib_rmpp_hdr hdr = {
		.rmpp_version = IB_MGMT_RMPP_VERSION,
		.rmpp_type = type,
		.rmpp_status = status,
		.seg_num = cpu_to_be32(seg_num),
		.paylen_newwin = cpu_to_be32(paylen),
	};

	ib_set_rmpp_flags(&hdr, flags | IB_MGMT_RMPP_FLAG_ACTIVE);
	return hdr;
}

static void mad_rmpp_kunit_abort_hdr(struct kunit *test)
{
	struct ib_rmpp_hdr hdr;
	u8 t;

	for (t = IB_MGMT_RMPP_TYPE_DATA; t <= IB_MGMT_RMPP_TYPE_ABORT; t++) {
		hdr = mad_rmpp_kunit_hdr(t, 0, 0, 1, 0);
		KUNIT_EXPECT_EQ(test, mad_rmpp_check_hdr(&hdr), 0);
	}
	hdr = mad_rmpp_kunit_hdr(0, 0, 0, 1, 0);
	KUNIT_EXPECT_EQ(test, mad_rmpp_check_hdr(&hdr),
			IB_MGMT_RMPP_STATUS_BADT);
	hdr = mad_rmpp_kunit_hdr(5, 0, 0, 1, 0);
	KUNIT_EXPECT_EQ(test, mad_rmpp_check_hdr(&hdr),
			IB_MGMT_RMPP_STATUS_BADT);
	hdr = mad_rmpp_kunit_hdr(IB_MGMT_RMPP_TYPE_DATA, 0, 0, 1, 0);
	hdr.rmpp_version = 2;
	KUNIT_EXPECT_EQ(test, mad_rmpp_check_hdr(&hdr),
			IB_MGMT_RMPP_STATUS_UNV);
	hdr.rmpp_version = 0;
	KUNIT_EXPECT_EQ(test, mad_rmpp_check_hdr(&hdr),
			IB_MGMT_RMPP_STATUS_UNV);
}

static void mad_rmpp_kunit_abort_data(struct kunit *test)
{
	const u8 f = IB_MGMT_RMPP_FLAG_FIRST, l = IB_MGMT_RMPP_FLAG_LAST;
	struct ib_rmpp_hdr hdr;

	hdr = mad_rmpp_kunit_hdr(IB_MGMT_RMPP_TYPE_DATA, f | l, 0, 1, 20);
	KUNIT_EXPECT_EQ(test, mad_rmpp_check_data(&hdr), 0);
	hdr = mad_rmpp_kunit_hdr(IB_MGMT_RMPP_TYPE_DATA, 0, 0, 2, 0);
	KUNIT_EXPECT_EQ(test, mad_rmpp_check_data(&hdr), 0);
	hdr = mad_rmpp_kunit_hdr(IB_MGMT_RMPP_TYPE_DATA, f, 3, 1, 20);
	KUNIT_EXPECT_EQ(test, mad_rmpp_check_data(&hdr),
			IB_MGMT_RMPP_STATUS_BAD_STATUS);
	hdr = mad_rmpp_kunit_hdr(IB_MGMT_RMPP_TYPE_DATA, 0, 0, 1, 20);
	KUNIT_EXPECT_EQ(test, mad_rmpp_check_data(&hdr),
			IB_MGMT_RMPP_STATUS_BAD_SEG);
	hdr = mad_rmpp_kunit_hdr(IB_MGMT_RMPP_TYPE_DATA, f, 0, 2, 0);
	KUNIT_EXPECT_EQ(test, mad_rmpp_check_data(&hdr),
			IB_MGMT_RMPP_STATUS_BAD_SEG);
	hdr = mad_rmpp_kunit_hdr(IB_MGMT_RMPP_TYPE_DATA, 0, 0, 0, 0);
	KUNIT_EXPECT_EQ(test, mad_rmpp_check_data(&hdr),
			IB_MGMT_RMPP_STATUS_BAD_SEG);
	hdr = mad_rmpp_kunit_hdr(IB_MGMT_RMPP_TYPE_DATA, f, 0, 0, 0);
	KUNIT_EXPECT_EQ(test, mad_rmpp_check_data(&hdr),
			IB_MGMT_RMPP_STATUS_BAD_SEG);
}

struct mad_rmpp_kunit_seg_len_case {
	const char *name;
	u32 mad_len;
	u32 mad_size;
	u8 flags;
	u32 seg_num;
	u32 paylen;
	bool ok;
};

/*
 * SA segments (56-byte headers, 20 of them after the RMPP header).  An OPA
 * sender trims a message that fits one segment to its data: 100 bytes of
 * data go out as 156 bytes, announcing 120.  What a full segment announces
 * is checked once the message is complete (mad_rmpp_recv_len()).
 */
#define MAD_RMPP_KUNIT_FL	(IB_MGMT_RMPP_FLAG_FIRST | IB_MGMT_RMPP_FLAG_LAST)
#define MAD_RMPP_KUNIT_F	IB_MGMT_RMPP_FLAG_FIRST
#define MAD_RMPP_KUNIT_L	IB_MGMT_RMPP_FLAG_LAST

static const struct mad_rmpp_kunit_seg_len_case mad_rmpp_kunit_seg_lens[] = {
	{ "ib single full", 256, 256, MAD_RMPP_KUNIT_FL, 1, 120, true },
	{ "ib single announcing too much", 256, 256, MAD_RMPP_KUNIT_FL, 1,
	  221, true },
	{ "opa single trimmed", 156, 2048, MAD_RMPP_KUNIT_FL, 1, 120, true },
	{ "opa single full", 2048, 2048, MAD_RMPP_KUNIT_FL, 1, 120, true },
	{ "opa single shorter than announced", 155, 2048, MAD_RMPP_KUNIT_FL,
	  1, 120, false },
	{ "opa single announcing too much", 2048, 2048, MAD_RMPP_KUNIT_FL, 1,
	  2013, true },
	{ "opa first of many short", 156, 2048, MAD_RMPP_KUNIT_F, 1, 4024,
	  false },
	{ "opa middle short", 2047, 2048, 0, 2, 0, false },
	{ "opa last trimmed", 156, 2048, MAD_RMPP_KUNIT_L, 3, 120, true },
	{ "opa last shorter than announced", 100, 2048, MAD_RMPP_KUNIT_L, 3,
	  120, false },
	{ "not even an rmpp header", 30, 2048, MAD_RMPP_KUNIT_FL, 1, 0,
	  false },
};

KUNIT_ARRAY_PARAM_DESC(mad_rmpp_kunit_seg_len, mad_rmpp_kunit_seg_lens, name);

static void mad_rmpp_kunit_seg_len(struct kunit *test)
{
	const struct mad_rmpp_kunit_seg_len_case *c = test->param_value;
	struct ib_rmpp_hdr hdr;

	hdr = mad_rmpp_kunit_hdr(IB_MGMT_RMPP_TYPE_DATA, c->flags, 0,
				 c->seg_num, c->paylen);
	KUNIT_EXPECT_EQ(test, mad_rmpp_seg_len_ok(c->mad_len, c->mad_size, &hdr),
			c->ok);
}

static void mad_rmpp_kunit_abort_peer(struct kunit *test)
{
	struct ib_rmpp_hdr hdr;
	u8 reply, s;

	hdr = mad_rmpp_kunit_hdr(IB_MGMT_RMPP_TYPE_STOP, 0,
				 IB_MGMT_RMPP_STATUS_RESX, 0, 0);
	KUNIT_EXPECT_EQ(test, mad_rmpp_peer_abort_status(&hdr, &reply),
			IB_MGMT_RMPP_STATUS_RESX);
	KUNIT_EXPECT_EQ(test, reply, 0);

	hdr = mad_rmpp_kunit_hdr(IB_MGMT_RMPP_TYPE_STOP, 0, 0, 0, 0);
	KUNIT_EXPECT_EQ(test, mad_rmpp_peer_abort_status(&hdr, &reply),
			IB_MGMT_RMPP_STATUS_BAD_STATUS);
	KUNIT_EXPECT_EQ(test, reply, IB_MGMT_RMPP_STATUS_BAD_STATUS);
	hdr = mad_rmpp_kunit_hdr(IB_MGMT_RMPP_TYPE_STOP, 0,
				 IB_MGMT_RMPP_STATUS_T2L, 0, 0);
	KUNIT_EXPECT_EQ(test, mad_rmpp_peer_abort_status(&hdr, &reply),
			IB_MGMT_RMPP_STATUS_BAD_STATUS);
	KUNIT_EXPECT_EQ(test, reply, IB_MGMT_RMPP_STATUS_BAD_STATUS);

	for (s = IB_MGMT_RMPP_STATUS_ABORT_MIN;
	     s <= IB_MGMT_RMPP_STATUS_ABORT_MAX; s++) {
		hdr = mad_rmpp_kunit_hdr(IB_MGMT_RMPP_TYPE_ABORT, 0, s, 0, 0);
		KUNIT_EXPECT_EQ(test, mad_rmpp_peer_abort_status(&hdr, &reply),
				s);
		KUNIT_EXPECT_EQ(test, reply, 0);
	}
	hdr = mad_rmpp_kunit_hdr(IB_MGMT_RMPP_TYPE_ABORT, 0,
				 IB_MGMT_RMPP_STATUS_ABORT_MIN - 1, 0, 0);
	KUNIT_EXPECT_EQ(test, mad_rmpp_peer_abort_status(&hdr, &reply),
			IB_MGMT_RMPP_STATUS_BAD_STATUS);
	KUNIT_EXPECT_EQ(test, reply, IB_MGMT_RMPP_STATUS_BAD_STATUS);
	hdr = mad_rmpp_kunit_hdr(IB_MGMT_RMPP_TYPE_ABORT, 0,
				 IB_MGMT_RMPP_STATUS_ABORT_MAX + 1, 0, 0);
	KUNIT_EXPECT_EQ(test, mad_rmpp_peer_abort_status(&hdr, &reply),
			IB_MGMT_RMPP_STATUS_BAD_STATUS);
	hdr = mad_rmpp_kunit_hdr(IB_MGMT_RMPP_TYPE_ABORT, 0,
				 IB_MGMT_RMPP_STATUS_RESX, 0, 0);
	KUNIT_EXPECT_EQ(test, mad_rmpp_peer_abort_status(&hdr, &reply),
			IB_MGMT_RMPP_STATUS_BAD_STATUS);
}

static enum mad_rmpp_ack_verdict
mad_rmpp_kunit_ack(struct mad_rmpp_send_win *win, u8 status, u32 seg_num,
		   u32 newwin, u8 *abort)
{
	struct ib_rmpp_hdr ack = mad_rmpp_kunit_hdr(IB_MGMT_RMPP_TYPE_ACK, 0,
						    status, seg_num, newwin);

	return mad_rmpp_send_win_ack(win, &ack, abort);
}

static void mad_rmpp_kunit_send_window(struct kunit *test)
{
	struct mad_rmpp_send_win win;
	u8 abort;

	mad_rmpp_send_win_init(&win, 5, 1);
	KUNIT_ASSERT_TRUE(test, mad_rmpp_send_win_may_send(&win));
	KUNIT_EXPECT_EQ(test, mad_rmpp_send_win_next(&win), 1);
	/* Only segment 1 may go before the first ACK. */
	KUNIT_EXPECT_FALSE(test, mad_rmpp_send_win_may_send(&win));

	KUNIT_EXPECT_EQ(test, mad_rmpp_kunit_ack(&win, 0, 1, 3, &abort),
			MAD_RMPP_ACK_PROGRESS);
	KUNIT_EXPECT_EQ(test, win.last_ack, 1);
	KUNIT_EXPECT_EQ(test, win.newwin, 3);
	KUNIT_EXPECT_EQ(test, mad_rmpp_send_win_next(&win), 2);
	KUNIT_EXPECT_EQ(test, mad_rmpp_send_win_next(&win), 3);
	KUNIT_EXPECT_FALSE(test, mad_rmpp_send_win_may_send(&win));

	/* Repeats and older ACKs change nothing. */
	KUNIT_EXPECT_EQ(test, mad_rmpp_kunit_ack(&win, 0, 1, 3, &abort),
			MAD_RMPP_ACK_STALE);
	KUNIT_EXPECT_EQ(test, mad_rmpp_kunit_ack(&win, 0, 0, 3, &abort),
			MAD_RMPP_ACK_STALE);
	KUNIT_EXPECT_EQ(test, mad_rmpp_kunit_ack(&win, 0, 1, 2, &abort),
			MAD_RMPP_ACK_STALE);
	KUNIT_EXPECT_EQ(test, win.last_ack, 1);
	KUNIT_EXPECT_EQ(test, win.newwin, 3);

	/* Timeout: everything after the last ACK goes again. */
	mad_rmpp_send_win_rewind(&win);
	KUNIT_EXPECT_TRUE(test, mad_rmpp_send_win_may_send(&win));
	KUNIT_EXPECT_EQ(test, mad_rmpp_send_win_next(&win), 2);
	KUNIT_EXPECT_EQ(test, win.sent_max, 3);

	/* An ACK for a segment sent before the rewind moves us past it. */
	KUNIT_EXPECT_EQ(test, mad_rmpp_kunit_ack(&win, 0, 3, 5, &abort),
			MAD_RMPP_ACK_PROGRESS);
	KUNIT_EXPECT_EQ(test, win.seg_num, 3);
	KUNIT_EXPECT_EQ(test, mad_rmpp_send_win_next(&win), 4);
	KUNIT_EXPECT_EQ(test, mad_rmpp_send_win_next(&win), 5);
	KUNIT_EXPECT_FALSE(test, mad_rmpp_send_win_may_send(&win));

	/* A window past the end does not let us invent segments. */
	KUNIT_EXPECT_EQ(test, mad_rmpp_kunit_ack(&win, 0, 4, 100, &abort),
			MAD_RMPP_ACK_PROGRESS);
	KUNIT_EXPECT_FALSE(test, mad_rmpp_send_win_may_send(&win));
	KUNIT_EXPECT_EQ(test, mad_rmpp_kunit_ack(&win, 0, 5, 100, &abort),
			MAD_RMPP_ACK_DONE);
	KUNIT_EXPECT_EQ(test, win.last_ack, 5);

	/* A window granted by a double-sided turnaround is used at once. */
	mad_rmpp_send_win_init(&win, 5, 4);
	KUNIT_EXPECT_EQ(test, mad_rmpp_send_win_next(&win), 1);
	KUNIT_EXPECT_EQ(test, mad_rmpp_send_win_next(&win), 2);
	KUNIT_EXPECT_EQ(test, mad_rmpp_send_win_next(&win), 3);
	KUNIT_EXPECT_EQ(test, mad_rmpp_send_win_next(&win), 4);
	KUNIT_EXPECT_FALSE(test, mad_rmpp_send_win_may_send(&win));
	/*
	 * The receiver's own ACKs may say less than that grant: an ACK for
	 * new data still counts, and the window stays as granted.
	 */
	KUNIT_EXPECT_EQ(test, mad_rmpp_kunit_ack(&win, 0, 2, 2, &abort),
			MAD_RMPP_ACK_PROGRESS);
	KUNIT_EXPECT_EQ(test, win.last_ack, 2);
	KUNIT_EXPECT_EQ(test, win.newwin, 4);
	KUNIT_EXPECT_EQ(test, mad_rmpp_kunit_ack(&win, 0, 2, 3, &abort),
			MAD_RMPP_ACK_STALE);
	KUNIT_EXPECT_EQ(test, mad_rmpp_kunit_ack(&win, 0, 2, 5, &abort),
			MAD_RMPP_ACK_PROGRESS);
	KUNIT_EXPECT_EQ(test, win.newwin, 5);
	KUNIT_EXPECT_EQ(test, mad_rmpp_send_win_next(&win), 5);
	KUNIT_EXPECT_EQ(test, mad_rmpp_kunit_ack(&win, 0, 5, 5, &abort),
			MAD_RMPP_ACK_DONE);
	/* The final ACK of a one-segment message after a larger grant. */
	mad_rmpp_send_win_init(&win, 1, 64);
	KUNIT_EXPECT_EQ(test, mad_rmpp_send_win_next(&win), 1);
	KUNIT_EXPECT_EQ(test, mad_rmpp_kunit_ack(&win, 0, 1, 1, &abort),
			MAD_RMPP_ACK_DONE);
	mad_rmpp_send_win_init(&win, 5, 0);
	KUNIT_EXPECT_EQ(test, win.newwin, 1);
}

static void mad_rmpp_kunit_send_window_abort(struct kunit *test)
{
	struct mad_rmpp_send_win win;
	u8 abort;

	mad_rmpp_send_win_init(&win, 5, 1);
	mad_rmpp_send_win_next(&win);

	KUNIT_EXPECT_EQ(test, mad_rmpp_kunit_ack(&win, 1, 1, 3, &abort),
			MAD_RMPP_ACK_ABORT);
	KUNIT_EXPECT_EQ(test, abort, IB_MGMT_RMPP_STATUS_BAD_STATUS);
	/* Window ends before the acknowledged segment. */
	KUNIT_EXPECT_EQ(test, mad_rmpp_kunit_ack(&win, 0, 1, 0, &abort),
			MAD_RMPP_ACK_ABORT);
	KUNIT_EXPECT_EQ(test, abort, IB_MGMT_RMPP_STATUS_W2S);
	/* Acknowledges a segment never sent. */
	KUNIT_EXPECT_EQ(test, mad_rmpp_kunit_ack(&win, 0, 2, 3, &abort),
			MAD_RMPP_ACK_ABORT);
	KUNIT_EXPECT_EQ(test, abort, IB_MGMT_RMPP_STATUS_S2B);
	/* Acknowledges a segment past the end of the message. */
	KUNIT_EXPECT_EQ(test, mad_rmpp_kunit_ack(&win, 0, 6, 9, &abort),
			MAD_RMPP_ACK_ABORT);
	KUNIT_EXPECT_EQ(test, abort, IB_MGMT_RMPP_STATUS_S2B);
	/* None of that changed the window. */
	KUNIT_EXPECT_EQ(test, win.last_ack, 0);
	KUNIT_EXPECT_EQ(test, win.newwin, 1);
	KUNIT_EXPECT_EQ(test, mad_rmpp_kunit_ack(&win, 0, 1, 1, &abort),
			MAD_RMPP_ACK_PROGRESS);
	KUNIT_EXPECT_EQ(test, abort, 0);
}

static void mad_rmpp_kunit_recv_window(struct kunit *test)
{
	struct mad_rmpp_recv_win win;
	u32 newwin;

	mad_rmpp_recv_win_init(&win, 4, 0);
	KUNIT_EXPECT_EQ(test, mad_rmpp_recv_win_classify(&win, 2),
			MAD_RMPP_SEG_DROP);
	KUNIT_EXPECT_EQ(test, mad_rmpp_recv_win_classify(&win, 1),
			MAD_RMPP_SEG_KEEP);
	/* Segment 1 fills the initial window: grant the next one. */
	KUNIT_EXPECT_EQ(test, mad_rmpp_recv_win_advance(&win, 1, false),
			MAD_RMPP_RECV_ACK);
	KUNIT_EXPECT_EQ(test, mad_rmpp_recv_win_ack(&win, &newwin), 1);
	KUNIT_EXPECT_EQ(test, newwin, 5);

	KUNIT_EXPECT_EQ(test, mad_rmpp_recv_win_classify(&win, 1),
			MAD_RMPP_SEG_REACK);
	KUNIT_EXPECT_EQ(test, mad_rmpp_recv_win_classify(&win, 5),
			MAD_RMPP_SEG_KEEP);
	KUNIT_EXPECT_EQ(test, mad_rmpp_recv_win_classify(&win, 6),
			MAD_RMPP_SEG_DROP);
	KUNIT_EXPECT_EQ(test, mad_rmpp_recv_win_classify(&win, 0),
			MAD_RMPP_SEG_DROP);

	KUNIT_EXPECT_EQ(test, mad_rmpp_recv_win_advance(&win, 3, false),
			MAD_RMPP_RECV_WAIT);
	/* Held but not yet acknowledged: silently dropped. */
	KUNIT_EXPECT_EQ(test, mad_rmpp_recv_win_classify(&win, 3),
			MAD_RMPP_SEG_DROP);
	KUNIT_EXPECT_EQ(test, mad_rmpp_recv_win_classify(&win, 4),
			MAD_RMPP_SEG_KEEP);
	KUNIT_EXPECT_EQ(test, mad_rmpp_recv_win_advance(&win, 5, false),
			MAD_RMPP_RECV_ACK);
	KUNIT_EXPECT_EQ(test, mad_rmpp_recv_win_ack(&win, &newwin), 5);
	KUNIT_EXPECT_EQ(test, newwin, 9);
	KUNIT_EXPECT_EQ(test, mad_rmpp_recv_win_classify(&win, 4),
			MAD_RMPP_SEG_REACK);

	KUNIT_EXPECT_EQ(test, mad_rmpp_recv_win_advance(&win, 7, true),
			MAD_RMPP_RECV_DONE);
	KUNIT_EXPECT_EQ(test, mad_rmpp_recv_win_ack(&win, &newwin), 7);
	KUNIT_EXPECT_EQ(test, newwin, 9);
	/* Complete: any repeat inside the window gets the final ACK. */
	KUNIT_EXPECT_EQ(test, mad_rmpp_recv_win_classify(&win, 7),
			MAD_RMPP_SEG_REACK);
	KUNIT_EXPECT_EQ(test, mad_rmpp_recv_win_classify(&win, 6),
			MAD_RMPP_SEG_REACK);
	KUNIT_EXPECT_EQ(test, mad_rmpp_recv_win_classify(&win, 10),
			MAD_RMPP_SEG_DROP);
}

static void mad_rmpp_kunit_recv_window_limits(struct kunit *test)
{
	struct mad_rmpp_recv_win win;
	u32 newwin;

	/* The announced count bounds what we keep. */
	mad_rmpp_recv_win_init(&win, 8, 3);
	mad_rmpp_recv_win_advance(&win, 1, false);
	mad_rmpp_recv_win_ack(&win, &newwin);
	KUNIT_EXPECT_EQ(test, newwin, 9);
	KUNIT_EXPECT_EQ(test, mad_rmpp_recv_win_classify(&win, 3),
			MAD_RMPP_SEG_KEEP);
	KUNIT_EXPECT_EQ(test, mad_rmpp_recv_win_classify(&win, 4),
			MAD_RMPP_SEG_DROP);

	/* A window of 0 still lets the transfer move. */
	mad_rmpp_recv_win_init(&win, 0, 0);
	KUNIT_EXPECT_EQ(test, win.window, 1);
	KUNIT_EXPECT_EQ(test, mad_rmpp_recv_win_advance(&win, 1, false),
			MAD_RMPP_RECV_ACK);
	mad_rmpp_recv_win_ack(&win, &newwin);
	KUNIT_EXPECT_EQ(test, newwin, 2);

	/* The window never wraps past the last segment number. */
	mad_rmpp_recv_win_init(&win, 16, 0);
	win.newwin = U32_MAX - 3;
	KUNIT_EXPECT_EQ(test, mad_rmpp_recv_win_advance(&win, U32_MAX - 3,
							false),
			MAD_RMPP_RECV_ACK);
	KUNIT_EXPECT_EQ(test, win.newwin, U32_MAX);
}

static struct ib_mad_recv_buf *mad_rmpp_kunit_seg(struct kunit *test,
						  u32 seg_num, bool last)
{
	struct ib_mad_recv_buf *buf;
	struct ib_rmpp_mad *mad;
	u8 flags = 0;

	buf = kunit_kzalloc(test, sizeof(*buf), GFP_KERNEL);
	mad = kunit_kzalloc(test, sizeof(*mad), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	KUNIT_ASSERT_NOT_NULL(test, mad);
	if (seg_num == 1)
		flags |= IB_MGMT_RMPP_FLAG_FIRST;
	if (last)
		flags |= IB_MGMT_RMPP_FLAG_LAST;
	mad->rmpp_hdr = mad_rmpp_kunit_hdr(IB_MGMT_RMPP_TYPE_DATA, flags, 0,
					   seg_num, 0);
	buf->mad = (struct ib_mad *)mad;
	INIT_LIST_HEAD(&buf->list);
	return buf;
}

static void mad_rmpp_kunit_expect_order(struct kunit *test,
					struct list_head *segs,
					const u32 *order, int count)
{
	struct ib_mad_recv_buf *buf;
	int i = 0;

	list_for_each_entry(buf, segs, list) {
		KUNIT_ASSERT_LT(test, i, count);
		KUNIT_EXPECT_EQ(test, mad_rmpp_seg_num(buf), order[i]);
		i++;
	}
	KUNIT_EXPECT_EQ(test, i, count);
}

static void mad_rmpp_kunit_insert(struct kunit *test)
{
	static const u32 order[] = { 1, 2, 3, 4, 5 };
	struct ib_mad_recv_buf *seg[6], *end, *dup;
	LIST_HEAD(segs);
	bool last;
	u32 num;
	int i;

	for (i = 1; i <= 5; i++)
		seg[i] = mad_rmpp_kunit_seg(test, i, i == 5);

	list_add(&seg[1]->list, &segs);
	/* Out of order, inside the window: 4, then 3. */
	KUNIT_EXPECT_EQ(test, mad_rmpp_seg_insert(&segs, seg[4]), 0);
	num = 1;
	end = mad_rmpp_seg_walk(&segs, seg[1], &num, &last);
	KUNIT_EXPECT_PTR_EQ(test, end, seg[1]);
	KUNIT_EXPECT_EQ(test, num, 1);
	KUNIT_EXPECT_FALSE(test, last);

	KUNIT_EXPECT_EQ(test, mad_rmpp_seg_insert(&segs, seg[3]), 0);
	KUNIT_EXPECT_EQ(test, mad_rmpp_seg_insert(&segs, seg[5]), 0);
	/* A duplicate of a held segment is refused and left unlinked. */
	dup = mad_rmpp_kunit_seg(test, 4, false);
	KUNIT_EXPECT_EQ(test, mad_rmpp_seg_insert(&segs, dup), -EEXIST);
	KUNIT_EXPECT_TRUE(test, list_empty(&dup->list));
	dup = mad_rmpp_kunit_seg(test, 1, false);
	KUNIT_EXPECT_EQ(test, mad_rmpp_seg_insert(&segs, dup), -EEXIST);

	/* The gap at 2 still stops the run. */
	end = mad_rmpp_seg_walk(&segs, seg[1], &num, &last);
	KUNIT_EXPECT_PTR_EQ(test, end, seg[1]);

	/* Filling it joins everything up to the Last segment. */
	KUNIT_EXPECT_EQ(test, mad_rmpp_seg_insert(&segs, seg[2]), 0);
	mad_rmpp_kunit_expect_order(test, &segs, order, ARRAY_SIZE(order));
	end = mad_rmpp_seg_walk(&segs, seg[1], &num, &last);
	KUNIT_EXPECT_PTR_EQ(test, end, seg[5]);
	KUNIT_EXPECT_EQ(test, num, 5);
	KUNIT_EXPECT_TRUE(test, last);
}

static void mad_rmpp_kunit_insert_in_order(struct kunit *test)
{
	static const u32 order[] = { 1, 2, 3, 7 };
	struct ib_mad_recv_buf *first, *end, *seg;
	LIST_HEAD(segs);
	bool last;
	u32 num = 1;

	first = mad_rmpp_kunit_seg(test, 1, false);
	list_add(&first->list, &segs);
	seg = mad_rmpp_kunit_seg(test, 2, false);
	KUNIT_EXPECT_EQ(test, mad_rmpp_seg_insert(&segs, seg), 0);
	seg = mad_rmpp_kunit_seg(test, 7, true);
	KUNIT_EXPECT_EQ(test, mad_rmpp_seg_insert(&segs, seg), 0);
	seg = mad_rmpp_kunit_seg(test, 3, false);
	KUNIT_EXPECT_EQ(test, mad_rmpp_seg_insert(&segs, seg), 0);
	mad_rmpp_kunit_expect_order(test, &segs, order, ARRAY_SIZE(order));
	end = mad_rmpp_seg_walk(&segs, first, &num, &last);
	KUNIT_EXPECT_EQ(test, num, 3);
	KUNIT_EXPECT_EQ(test, mad_rmpp_seg_num(end), 3);
	KUNIT_EXPECT_FALSE(test, last);
}

static void mad_rmpp_kunit_resptime(struct kunit *test)
{
	/* 4.096 us rounds up to a whole millisecond. */
	KUNIT_EXPECT_EQ(test, mad_rmpp_resptime_ms(0), 1);
	/* 4.096 us * 2^8 = 1.048576 ms */
	KUNIT_EXPECT_EQ(test, mad_rmpp_resptime_ms(8), 2);
	/* 4.096 us * 2^18 = 1073.741824 ms */
	KUNIT_EXPECT_EQ(test, mad_rmpp_resptime_ms(18), 1074);
	/* 4.096 us * 2^30 = 4398046.511104 ms */
	KUNIT_EXPECT_EQ(test, mad_rmpp_resptime_ms(30), 4398047);
	KUNIT_EXPECT_EQ(test, mad_rmpp_resptime_ms(IB_MGMT_RMPP_NO_RESPTIME),
			0);
}

static struct kunit_case mad_rmpp_kunit_cases[] = {
	KUNIT_CASE_PARAM(mad_rmpp_kunit_layout_table,
			 mad_rmpp_kunit_layout_gen_params),
	KUNIT_CASE_PARAM(mad_rmpp_kunit_reassembled_len,
			 mad_rmpp_kunit_layout_gen_params),
	KUNIT_CASE(mad_rmpp_kunit_layout_invalid),
	KUNIT_CASE(mad_rmpp_kunit_flags),
	KUNIT_CASE(mad_rmpp_kunit_recv_len_bad),
	KUNIT_CASE(mad_rmpp_kunit_abort_hdr),
	KUNIT_CASE(mad_rmpp_kunit_abort_data),
	KUNIT_CASE(mad_rmpp_kunit_abort_peer),
	KUNIT_CASE_PARAM(mad_rmpp_kunit_seg_len,
			 mad_rmpp_kunit_seg_len_gen_params),
	KUNIT_CASE(mad_rmpp_kunit_send_window),
	KUNIT_CASE(mad_rmpp_kunit_send_window_abort),
	KUNIT_CASE(mad_rmpp_kunit_recv_window),
	KUNIT_CASE(mad_rmpp_kunit_recv_window_limits),
	KUNIT_CASE(mad_rmpp_kunit_insert),
	KUNIT_CASE(mad_rmpp_kunit_insert_in_order),
	KUNIT_CASE(mad_rmpp_kunit_resptime),
	{}
};

static struct kunit_suite mad_rmpp_kunit_suite = {
	.name = "ib_mad_rmpp",
	.test_cases = mad_rmpp_kunit_cases,
};

kunit_test_suite(mad_rmpp_kunit_suite);

MODULE_DESCRIPTION("KUnit tests for the InfiniBand MAD RMPP arithmetic");
MODULE_LICENSE("Dual BSD/GPL");
MODULE_INFO(import_ns, "EXPORTED_FOR_KUNIT_TESTING");	/* both series */
