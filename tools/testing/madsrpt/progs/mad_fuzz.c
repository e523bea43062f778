// SPDX-License-Identifier: GPL-2.0
/*
 * mad_fuzz - malformed and mutated MADs at another node's QP1 over umad,
 * with valid Device Management probes in between that must keep being
 * answered.
 *
 *   mad_fuzz [-d DEV] [-p PORT] [-x SGID_INDEX] [-S SEED] [-n COUNT]
 *            [-e EVERY] [-T SECS] -g DGID fuzz
 *   mad_fuzz [-d DEV] [-p PORT] sink
 *
 * "fuzz" sends COUNT MADs built from a seeded PRNG (the seed is printed:
 * -S with it repeats a run MAD for MAD) at the peer: DevMgt at ib_srpt's
 * DM agent, SubnAdm, CM, subnet management classes with directed-route
 * hop fields, vendor classes of both ranges with and without RMPP (at
 * the agents "sink" registers there), classes nobody registered and
 * responses aimed at the peer's agents; with mutated versions, methods,
 * status, attribute ids and modifiers, RMPP headers (version, type,
 * flags, status, segment numbers, paylen/newwin, multi-segment bursts)
 * and lengths (short, which umad pads to a full MAD, and over-long, which
 * the sending side must refuse); a few go through the kernel's RMPP
 * sender as real multi-segment transfers.  With -r, about one in twelve
 * is built by hand as a RoCE v2 datagram instead (see fz_raw()): cut
 * short on the wire, longer than a MAD, or with a bad ICRC, Q_Key or
 * P_Key.  After every EVERY of them it
 * asks ib_srpt for IOUnitInfo and checks the answer, which also bounds
 * what is in flight.  It predicts from each MAD it put on the wire what
 * the receiving MAD layer must do with it (drop it as invalid, find no
 * agent, answer "unsupported") and prints the totals on one line,
 * "FUZZ key=value ...", for the test to compare with the peer's counters.
 *
 * "sink" registers, for the fuzzer, a kernel-RMPP agent on vendor class
 * 0x30 (OUI 0x00d1ce) and a plain one on vendor class 0x09 (Get and Set
 * each), counts what reaches them until SIGTERM and prints
 * "SINK plain=N rmpp=N long=N".
 *
 * Output is TAP.  Exit status: 0 when every point passed, 1 otherwise, 2 on
 * usage or setup errors.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <infiniband/umad.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "tap.h"
#include "umad_common.h"

#define BUF_SIZE		(16 * 1024)	/* largest kernel-RMPP send */

#define CLASS_SUBN_LID		0x01
#define CLASS_SA		0x03
#define CLASS_PERF		0x04
#define CLASS_BM		0x05
#define CLASS_DM		0x06
#define CLASS_CM		0x07
#define CLASS_SNMP		0x08
#define CLASS_VENDOR1		0x09	/* vendor range 1: 0x09-0x0f */
#define CLASS_DEV_ADM		0x10
#define CLASS_BIS		0x12
#define CLASS_VENDOR2		0x30	/* vendor range 2: 0x30-0x4f */
#define CLASS_SUBN_DR		0x81

/* The methods besides Get, Set and GetResp. */
#define METHOD_SEND		0x03
#define METHOD_TRAP		0x05
#define METHOD_REPORT		0x06
#define METHOD_TRAP_REPRESS	0x07
#define METHOD_RESP		0x80	/* the response bit */

#define DM_ATTR_IOU_INFO	0x0010
#define SINK_OUI		0x00d1ce
#define HI_TID_LIMIT		(1u << 24)	/* agent ids stay below */
#define AIMED_HI_TIDS		48		/* agent ids aimed at */

/* splitmix64: small, seedable, the same everywhere. */
static uint64_t fz_state;

static uint64_t fz_rand(void)
{
	uint64_t z = (fz_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [0, n). */
static uint32_t fz_below(uint32_t n)
{
	return n ? (uint32_t)(fz_rand() % n) : 0;
}

/* True with probability pct percent. */
static bool fz_pct(unsigned int pct)
{
	return fz_below(100) < pct;
}

static uint32_t fz_pick(const uint32_t *v, size_t n)
{
	return v[fz_below(n)];
}

#define FZ_PICK(...) ({							\
	const uint32_t fz_v_[] = { __VA_ARGS__ };			\
	fz_pick(fz_v_, ARRAY_SIZE(fz_v_));				\
})

/* What the receiving MAD layer must do with a MAD, by the IBA rules. */
enum fz_fate {
	FZ_INVALID,		/* dropped as malformed: dropped_invalid */
	FZ_NO_AGENT,		/* no agent: dropped_no_agent */
	FZ_UNSUPPORTED,		/* no agent, a Get/Set: also answered */
	FZ_SRPT,		/* ib_srpt's DM agent (Get/Set) */
	FZ_SINK,		/* one of the sink's agents, not RMPP */
	FZ_SINK_RMPP,		/* the sink's kernel-RMPP agent, RMPP active */
	FZ_CM,			/* ib_cm */
	FZ_AIMED,		/* a response aimed at some agent: any fate */
	FZ_NFATES
};

static const char *const fz_fate_names[FZ_NFATES] = {
	"invalid", "no_agent", "unsupported", "srpt", "sink", "sink_rmpp",
	"cm", "aimed",
};

struct fz_ctx {
	int fd;
	int agent;		/* send-only, rmpp_version 0: verbatim MADs */
	int krmpp_agent;	/* send-only, kernel RMPP, vendor 0x30 */
	int probe_agent;	/* DevMgt, for the probes */
	uint8_t dgid[16];	/* the peer's GID */
	uint8_t sgid_index;	/* our GID's index */
	uint32_t tid;		/* low half of the next TID */
	/* results */
	unsigned long fate[FZ_NFATES];
	unsigned long sent, refused, krmpp, krmpp_done, short_len, long_len;
	unsigned long rmpp_hdr, dr, bursts;
	unsigned long probes, probe_ok, probe_bad, probe_lost;
	/* RoCE v2 packets built by hand (-r): see fz_raw() */
	int raw_fd;
	struct sockaddr_in raw_src, raw_dst;
	unsigned long raw, raw_mad, raw_rxe_drop;
	unsigned long refused_by_errno[8];
};

static bool fz_is_rmpp_class(uint8_t c)
{
	return c == CLASS_SA || c == CLASS_DM || c == CLASS_DEV_ADM ||
	       c == CLASS_BIS || (c >= 0x30 && c <= 0x4f);
}

/* ib_response_mad(): what the receiver treats as a response. */
static bool fz_is_response(const struct umad_hdr *h)
{
	return (h->method & METHOD_RESP) || h->method == METHOD_TRAP_REPRESS ||
	       (h->mgmt_class == CLASS_BM && (be32toh(h->attr_mod) & 1));
}

static bool fz_get_or_set(const struct umad_hdr *h)
{
	return h->method == METHOD_GET || h->method == METHOD_SET;
}

/*
 * The fate of a MAD at the receiver, from the IBA rules for QP1 and the
 * agents there: ib_srpt (DevMgt version 1, Get and Set), ib_cm (CM
 * version 2, Send) and the sink's (vendor 0x09 version 1 and vendor 0x30
 * version 1 with SINK_OUI, Get and Set).  Responses go by the high half
 * of their TID: unaimed ones carry one no agent can have.
 */
static enum fz_fate fz_fate(const uint8_t *mad)
{
	const struct umad_hdr *h = (const void *)mad;
	const struct umad_rmpp_hdr *r = (const void *)(h + 1);
	uint32_t oui;
	bool gs = fz_get_or_set(h);

	if (h->base_version != MGMT_BASE_VERSION ||
	    h->mgmt_class == CLASS_SUBN_LID || h->mgmt_class == CLASS_SUBN_DR)
		return FZ_INVALID;
	if (h->mgmt_class == CLASS_CM && be16toh(h->attr_id) != 0x0001 &&
	    h->method != METHOD_SEND)
		return FZ_INVALID;
	if (fz_is_response(h))
		return be64toh(h->tid) >> 32 >= HI_TID_LIMIT ? FZ_NO_AGENT :
								FZ_AIMED;
	if (h->class_version == 1 && gs) {
		if (h->mgmt_class == CLASS_DM)
			return FZ_SRPT;
		if (h->mgmt_class == CLASS_VENDOR1)
			return FZ_SINK;
		oui = mad[37] << 16 | mad[38] << 8 | mad[39];
		if (h->mgmt_class == CLASS_VENDOR2 && oui == SINK_OUI)
			return r->rmpp_rtime_flags & RMPP_FLAG_ACTIVE ?
			       FZ_SINK_RMPP : FZ_SINK;
	}
	if (h->mgmt_class == CLASS_CM && h->class_version == 2 &&
	    h->method == METHOD_SEND)
		return FZ_CM;
	return gs ? FZ_UNSUPPORTED : FZ_NO_AGENT;
}

/* Mutations ------------------------------------------------------------ */

static uint8_t fz_method(uint8_t usual)
{
	if (fz_pct(70))
		return usual;
	return FZ_PICK(METHOD_GET, METHOD_SET, METHOD_SEND, METHOD_TRAP,
		       METHOD_REPORT, METHOD_TRAP_REPRESS, METHOD_GET_RESP,
		       0x82, 0x86, 0x00, 0x04, 0x10, 0x14, 0x15, 0x7f, 0xff,
		       fz_below(256));
}

static void fz_fill(uint8_t *p, size_t len)
{
	size_t i;

	switch (fz_below(4)) {
	case 0:
		memset(p, 0, len);
		break;
	case 1:
		memset(p, 0xff, len);
		break;
	default:
		for (i = 0; i < len; i++)
			p[i] = fz_rand();
	}
}

/* An RMPP header: mostly plausible, every field sometimes wild. */
static void fz_rmpp(struct umad_rmpp_hdr *r, bool active)
{
	r->rmpp_version = fz_pct(85) ? 1 : FZ_PICK(0, 2, 0xff, fz_below(256));
	r->rmpp_type = fz_pct(70) ? 1 : FZ_PICK(0, 2, 3, 4, 5, fz_below(256));
	r->rmpp_rtime_flags = fz_below(32) << 3;
	if (active)
		r->rmpp_rtime_flags |= RMPP_FLAG_ACTIVE;
	r->rmpp_rtime_flags |= FZ_PICK(0, RMPP_FLAG_FIRST, RMPP_FLAG_LAST,
				       RMPP_FLAG_FIRST | RMPP_FLAG_LAST,
				       fz_below(8) & 6);
	r->rmpp_status = fz_pct(80) ? 0 : FZ_PICK(1, 2, 118, 119, 120, 121,
						  122, 123, 124, 125, 126,
						  127, 255, fz_below(256));
	r->seg_num = htobe32(fz_pct(60) ? FZ_PICK(0, 1, 2, 3) :
			     FZ_PICK(0x7fffffff, 0xffffffff, 1000, 1u << 20,
				     (uint32_t)fz_rand()));
	r->paylen_newwin = htobe32(fz_pct(50) ? fz_below(4096) :
				   FZ_PICK(0, 1, 200, 220, 0x7fffffff,
					   0xffffffff, (uint32_t)fz_rand()));
}

/* DevMgt attributes and ib_srpt's slot/range encodings. */
static void fz_dm(struct umad_hdr *h)
{
	uint32_t slot = FZ_PICK(0, 1, 1, 1, 2, 15, 16, 17, 255, 0xffff,
				fz_below(1u << 16));
	uint32_t hi = FZ_PICK(0, 1, 3, 255, fz_below(256));
	uint32_t lo = FZ_PICK(0, 1, 3, 255, fz_below(256));

	h->attr_id = htobe16(FZ_PICK(0x0001, 0x0002, 0x0010, 0x0011, 0x0012,
				     0x0011, 0x0012, 0x0020, 0x0021, 0x0022,
				     0x0023, 0x0024, 0xff00, 0xffff,
				     fz_below(1u << 16)));
	switch (fz_below(4)) {
	case 0:
		h->attr_mod = htobe32(slot);
		break;
	case 1:
	case 2:
		h->attr_mod = htobe32(slot << 16 | hi << 8 | lo);
		break;
	default:
		h->attr_mod = htobe32((uint32_t)fz_rand());
	}
}

enum fz_kind {
	FK_DM, FK_SA, FK_CM, FK_SMP, FK_VENDOR1, FK_VENDOR2, FK_OTHER,
	FK_RESP, FK_RESP_AIMED, FK_NKINDS
};

/* Weights of the kinds, in percent. */
static const unsigned int fz_weights[FK_NKINDS] = {
	[FK_DM] = 32, [FK_SA] = 7, [FK_CM] = 4, [FK_SMP] = 6,
	[FK_VENDOR1] = 8, [FK_VENDOR2] = 20, [FK_OTHER] = 8,
	[FK_RESP] = 8, [FK_RESP_AIMED] = 7,
};

static enum fz_kind fz_kind(void)
{
	unsigned int r = fz_below(100), k;

	for (k = 0; k < FK_NKINDS - 1; k++) {
		if (r < fz_weights[k])
			return k;
		r -= fz_weights[k];
	}
	return k;
}

/*
 * Build one mutated MAD into @mad (BUF_SIZE bytes) and return the length
 * to hand to umad.
 */
static int fz_build(struct fz_ctx *ctx, uint8_t *mad)
{
	struct umad_hdr *h = (struct umad_hdr *)mad;
	struct umad_rmpp_hdr *r = (struct umad_rmpp_hdr *)(h + 1);
	enum fz_kind kind = fz_kind();
	uint8_t cls, cv = 1, method = METHOD_GET;
	int len = MAD_SIZE;

	fz_fill(mad, MAD_SIZE);
	memset(mad, 0, sizeof(*h) + sizeof(*r));
	switch (kind) {
	case FK_DM:
		cls = CLASS_DM;
		method = FZ_PICK(METHOD_GET, METHOD_GET, METHOD_SET);
		fz_dm(h);
		break;
	case FK_SA:
		cls = CLASS_SA;
		cv = 2;
		h->attr_id = htobe16(FZ_PICK(0x0001, 0x0011, 0x0035, 0x0038,
					     0xf000, fz_below(1u << 16)));
		method = FZ_PICK(METHOD_GET, METHOD_SET, 0x12, 0x13, 0x14,
				 0x15);
		break;
	case FK_CM:
		cls = CLASS_CM;
		cv = 2;
		method = METHOD_SEND;
		h->attr_id = htobe16(FZ_PICK(0x0001, 0x0010, 0x0011, 0x0012,
					     0x0013, 0x0014, 0x0015, 0x0016,
					     0x0017, 0x0018, 0x0019, 0x0020,
					     fz_below(1u << 16)));
		break;
	case FK_SMP:
		cls = FZ_PICK(CLASS_SUBN_LID, CLASS_SUBN_DR);
		h->attr_id = htobe16(FZ_PICK(0x0011, 0x0015, 0x0020, 0xff00));
		/* hop pointer and count, with and without the D bit */
		mad[4] = fz_pct(50) ? 0x80 : 0;
		mad[6] = FZ_PICK(0, 1, 63, 64, 255, fz_below(256));
		mad[7] = FZ_PICK(0, 1, 2, 63, 64, 255, fz_below(256));
		ctx->dr++;
		break;
	case FK_VENDOR1:
		cls = FZ_PICK(CLASS_VENDOR1, CLASS_VENDOR1, 0x0a, 0x0f);
		method = FZ_PICK(METHOD_GET, METHOD_SET, METHOD_SEND);
		h->attr_id = htobe16(fz_below(1u << 16));
		h->attr_mod = htobe32((uint32_t)fz_rand());
		break;
	case FK_VENDOR2:
		cls = FZ_PICK(CLASS_VENDOR2, CLASS_VENDOR2, CLASS_VENDOR2,
			      0x31, 0x4f);
		method = FZ_PICK(METHOD_GET, METHOD_SET, METHOD_SET);
		h->attr_id = htobe16(fz_below(1u << 16));
		break;
	case FK_OTHER:
		cls = FZ_PICK(0x00, CLASS_PERF, CLASS_BM, CLASS_SNMP,
			      CLASS_DEV_ADM, 0x11, CLASS_BIS, 0x13, 0x2f,
			      0x50, 0x80, 0x82, 0xfe, 0xff, fz_below(256));
		method = fz_below(256);
		h->attr_id = htobe16(fz_below(1u << 16));
		h->attr_mod = htobe32((uint32_t)fz_rand());
		break;
	case FK_RESP:
	case FK_RESP_AIMED:
	default:
		cls = FZ_PICK(CLASS_DM, CLASS_DM, CLASS_SA, CLASS_CM,
			      CLASS_VENDOR1, CLASS_VENDOR2, CLASS_VENDOR2,
			      CLASS_BM, fz_below(256));
		cv = cls == CLASS_SA || cls == CLASS_CM ? 2 : 1;
		method = FZ_PICK(METHOD_GET_RESP, METHOD_GET_RESP, 0x82, 0x86,
				 0x92, 0x93, 0x94, 0x95, METHOD_TRAP_REPRESS,
				 0xff);
		h->attr_id = htobe16(FZ_PICK(0x0001, DM_ATTR_IOU_INFO,
					     fz_below(1u << 16)));
		h->attr_mod = htobe32(cls == CLASS_BM ? 1 : fz_rand());
		break;
	}
	h->base_version = fz_pct(92) ? 1 : FZ_PICK(0, 2, 0x80, 0x81, 0xff,
						   fz_below(256));
	h->mgmt_class = cls;
	h->class_version = fz_pct(90) ? cv : FZ_PICK(0, 1, 2, 3, 0x80, 0xff,
						     fz_below(256));
	h->method = kind == FK_RESP || kind == FK_RESP_AIMED ? method :
		    fz_method(method);
	if (fz_pct(10))
		h->status = htobe16(FZ_PICK(0x0001, 0x0004, 0x000c, 0x001c,
					    0x0100, 0x8000, 0xffff,
					    fz_below(1u << 16)));
	if (fz_pct(5))
		h->class_specific = htobe16(fz_below(1u << 16));
	if (fz_pct(5))
		h->resv = htobe16(fz_below(1u << 16));
	/* Requests get our agent's hi TID from ib_umad; responses keep it. */
	h->tid = htobe64((uint64_t)(kind == FK_RESP_AIMED ?
				    fz_below(AIMED_HI_TIDS) :
				    HI_TID_LIMIT + fz_below(0xff000000u))
			 << 32 | ctx->tid++);
	if (fz_is_rmpp_class(cls) && fz_pct(60)) {
		fz_rmpp(r, fz_pct(70));
		ctx->rmpp_hdr++;
	}
	/* Vendor range 2: the OUI, mostly the sink's. */
	if (cls >= 0x30 && cls <= 0x4f) {
		uint32_t oui = fz_pct(80) ? SINK_OUI : fz_below(1u << 24);

		mad[36] = fz_pct(95) ? 0 : fz_below(256);
		mad[37] = oui >> 16;
		mad[38] = oui >> 8;
		mad[39] = oui;
	}
	/* Short lengths (padded by the sender), over-long ones (refused). */
	if (fz_pct(8)) {
		len = FZ_PICK(0, 1, 23, 24, 35, 36, 40, 56, 64, 100, 255,
			      fz_below(MAD_SIZE));
		ctx->short_len++;
	} else if (fz_pct(3)) {
		len = FZ_PICK(257, 320, 512, 2048, MAD_SIZE + 1 +
			      fz_below(BUF_SIZE - MAD_SIZE - 1));
		ctx->long_len++;
	}
	return len;
}

/* RoCE v2 by hand ------------------------------------------------------ */

/*
 * umad always puts a whole MAD on the wire, so a MAD cut short or too
 * long for the receive buffer has to be built by hand: a UDP datagram to
 * port 4791 holding BTH, DETH, the MAD bytes, pad and the ICRC, which
 * the target's rxe takes as a UD SEND to QP1 like any other.
 */
#define ROCE_PORT		4791
#define RAW_SPORT		49999
#define BTH_UD_SEND_ONLY	0x64
#define RAW_HDRS		20	/* BTH 12 + DETH 8 */
#define RAW_MAX			(RAW_HDRS + 1024 + 3 + 4)

/* CRC-32 (reflected 0xedb88320) without pre- or post-inversion. */
static uint32_t fz_crc32(uint32_t crc, const uint8_t *p, size_t n)
{
	int k;

	while (n--) {
		crc ^= *p++;
		for (k = 0; k < 8; k++)
			crc = crc >> 1 ^ (0xedb88320u & -(crc & 1));
	}
	return crc;
}

/*
 * The ICRC of a RoCE v2 packet over IPv4: the IPv4 and UDP headers as the
 * sender's kernel builds them (DF set and so IP id 0, on an unconnected
 * socket), with TTL, TOS and the checksums masked to ones, then BTH with
 * its reserved byte masked, DETH, payload and pad.  The seed stands for
 * a masked LRH.
 */
static uint32_t fz_icrc(const struct fz_ctx *ctx, const uint8_t *pkt,
			size_t len)
{
	uint8_t ps[28 + RAW_HDRS];
	uint16_t tot = 28 + len + 4, ulen = 8 + len + 4;

	memset(ps, 0, sizeof(ps));
	ps[0] = 0x45;
	ps[1] = 0xff;				/* TOS */
	ps[2] = tot >> 8;
	ps[3] = tot;
	ps[6] = 0x40;				/* DF, IP id 0 */
	ps[8] = 0xff;				/* TTL */
	ps[9] = IPPROTO_UDP;
	ps[10] = 0xff;				/* IP checksum */
	ps[11] = 0xff;
	memcpy(ps + 12, &ctx->raw_src.sin_addr, 4);
	memcpy(ps + 16, &ctx->raw_dst.sin_addr, 4);
	memcpy(ps + 20, &ctx->raw_src.sin_port, 2);
	memcpy(ps + 22, &ctx->raw_dst.sin_port, 2);
	ps[24] = ulen >> 8;
	ps[25] = ulen;
	ps[26] = 0xff;				/* UDP checksum */
	ps[27] = 0xff;
	memcpy(ps + 28, pkt, RAW_HDRS);
	ps[28 + 4] = 0xff;			/* BTH resv8a */
	return ~fz_crc32(fz_crc32(0xdebb20e3u, ps, sizeof(ps)),
			 pkt + RAW_HDRS, len - RAW_HDRS);
}

static int fz_raw_open(struct fz_ctx *ctx, const char *src, const char *dst)
{
	int pmtu = IP_PMTUDISC_DO;

	ctx->raw_src.sin_family = AF_INET;
	ctx->raw_src.sin_port = htons(RAW_SPORT);
	ctx->raw_dst.sin_family = AF_INET;
	ctx->raw_dst.sin_port = htons(ROCE_PORT);
	if (inet_pton(AF_INET, src, &ctx->raw_src.sin_addr) != 1 ||
	    inet_pton(AF_INET, dst, &ctx->raw_dst.sin_addr) != 1)
		return -1;
	ctx->raw_fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (ctx->raw_fd < 0)
		return -1;
	if (setsockopt(ctx->raw_fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu,
		       sizeof(pmtu)) ||
	    bind(ctx->raw_fd, (struct sockaddr *)&ctx->raw_src,
		 sizeof(ctx->raw_src)))
		return -1;
	return 0;
}

/* Raw InfiniBand packets on an ibdevsim remote cable ("wire") ---------- */

/*
 * ibdevsim's remote cable carries one frame per UDP datagram: a 4-byte
 * header (kind 1: an InfiniBand packet; version 1) and the packet from
 * LRH to VCRC (Documentation/infiniband/ibdevsim.rst).  Each frame this
 * mode writes is refused by the receiving port for exactly one reason,
 * or reaches QP1 and is refused there (P_Key, Q_Key) or by the MAD layer
 * (shorter than a MAD header), so that the receiver's counters can be
 * compared with what was sent, reason by reason.
 */
enum wf_kind {
	WF_SHORT, WF_CUT, WF_LONG, WF_VCRC, WF_ICRC, WF_LVER, WF_LNH, WF_GRH,
	WF_TVER, WF_OPCODE, WF_PAD, WF_VL, WF_PKEY, WF_QKEY, WF_MAD_SHORT,
	WF_NKINDS,
};

/* The receiver's counter each kind must add one to. */
static const char *const wf_counter[WF_NKINDS] = {
	[WF_SHORT] = "rx_short",	[WF_CUT] = "rx_bad_length",
	[WF_LONG] = "rx_bad_length",	[WF_VCRC] = "rx_bad_vcrc",
	[WF_ICRC] = "rx_bad_icrc",	[WF_LVER] = "rx_bad_lver",
	[WF_LNH] = "rx_bad_lnh",	[WF_GRH] = "rx_bad_grh",
	[WF_TVER] = "rx_bad_tver",	[WF_OPCODE] = "rx_bad_opcode",
	[WF_PAD] = "rx_bad_pad",	[WF_VL] = "rx_bad_vl",
	[WF_PKEY] = "pkey_refused",	[WF_QKEY] = "qkey_refused",
	[WF_MAD_SHORT] = "mad_dropped_invalid",
};

#define WF_HDR		4
#define WF_MAX		(WF_HDR + 8 + 40 + 12 + 8 + 256 + 4 + 2 + 8)

static uint16_t wf_vcrc(const uint8_t *p, size_t n)
{
	uint16_t crc = 0xffff;
	int k;

	while (n--) {
		crc ^= *p++;
		for (k = 0; k < 8; k++)
			crc = crc >> 1 ^ (0xd008 & -(crc & 1));
	}
	return crc ^ 0xffff;
}

/* ICRC of an IBA packet of @n bytes before its ICRC (IBTA 7.8.1). */
static uint32_t wf_icrc(const uint8_t *p, size_t n)
{
	uint8_t h[8 + 40 + 12];
	bool grh = (p[1] & 3) == 3;
	size_t hl = grh ? 60 : 20;

	memcpy(h, p, hl);
	if (grh) {
		memset(h, 0xff, 8);
		h[8] |= 0x0f;
		memset(h + 9, 0xff, 3);
		h[15] = 0xff;
	} else {
		h[0] |= 0xf0;
	}
	h[hl - 12 + 4] = 0xff;
	return ~fz_crc32(fz_crc32(0xffffffffu, h, hl), p + hl, n - hl);
}

static void wf_put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static void wf_put32(uint8_t *p, uint32_t v)
{
	wf_put16(p, v >> 16);
	wf_put16(p + 2, v);
}

/* Give the packet of @n bytes (VCRC included) its ICRC and VCRC. */
static void wf_crcs(uint8_t *p, size_t n)
{
	uint32_t icrc = wf_icrc(p, n - 6);
	uint16_t vcrc;

	p[n - 6] = icrc;
	p[n - 5] = icrc >> 8;
	p[n - 4] = icrc >> 16;
	p[n - 3] = icrc >> 24;
	vcrc = wf_vcrc(p, n - 2);
	p[n - 2] = vcrc;
	p[n - 1] = vcrc >> 8;
}

/*
 * A UD SEND to QP1 of @dlid from @slid: LRH, [GRH,] BTH, DETH and @plen
 * bytes of a MAD, P_Key @pkey and Q_Key @qkey, CRCs right.  Returns its
 * length.
 */
static size_t wf_gmp(uint8_t *p, uint16_t dlid, uint16_t slid, size_t plen,
		     uint16_t pkey, uint32_t qkey, bool grh)
{
	size_t pad = -plen & 3, hl = 8 + (grh ? 40 : 0);
	size_t n = hl + 12 + 8 + plen + pad + 4 + 2;

	memset(p, 0, n);
	p[1] = grh ? 3 : 2;
	wf_put16(p + 2, dlid);
	wf_put16(p + 4, (n - 2) / 4);
	wf_put16(p + 6, slid);
	if (grh) {
		p[8] = 0x60;
		wf_put16(p + 8 + 4, n - 2 - hl);
		p[8 + 6] = 0x1b;
		p[8 + 7] = 1;
	}
	p[hl] = BTH_UD_SEND_ONLY;
	p[hl + 1] = pad << 4;
	wf_put16(p + hl + 2, pkey);
	wf_put32(p + hl + 4, 1);			/* DestQP 1 */
	wf_put32(p + hl + 12, qkey);
	wf_put32(p + hl + 16, 0x42);			/* SrcQP */
	fz_fill(p + hl + 20, plen);
	if (plen >= 4) {
		p[hl + 20] = 1;				/* base version */
		p[hl + 21] = 0x0a;			/* class, unused */
		p[hl + 22] = 1;
		p[hl + 23] = 0x01;			/* Get */
	}
	wf_crcs(p, n);
	return n;
}

/* One fuzzed frame of @kind into @f; returns its length. */
static size_t wf_build(uint8_t *f, enum wf_kind kind, uint16_t dlid,
		       uint16_t slid)
{
	static const uint8_t bad_ops[] = { 0x12, 0x13, 0x14, 0x15, 0x18,
					   0x20, 0x24, 0x2a, 0x40, 0x4c,
					   0x60, 0x66, 0x81, 0xa0, 0xff };
	uint8_t *p = f + WF_HDR;
	uint16_t vcrc;
	size_t n, i;

	f[0] = 1;
	f[1] = 1;
	f[2] = 0;
	f[3] = 0;
	n = wf_gmp(p, dlid, slid, 256, 0xffff, 0x80010000, kind == WF_GRH);
	switch (kind) {
	case WF_SHORT:
		n = 1 + fz_below(25);
		break;
	case WF_CUT:
		n = 26 + fz_below(n - 26);
		break;
	case WF_LONG:
		fz_fill(p + n, 4);
		n += 4;
		break;
	case WF_VCRC:
		/* One bit anywhere but the PktLen bytes (detected: a length). */
		do {
			i = fz_below(n);
		} while (i == 4 || i == 5);
		p[i] ^= 1 << fz_below(8);
		break;
	case WF_ICRC:
		/* A bit of the MAD, the VCRC made right again. */
		p[28 + fz_below(n - 6 - 28)] ^= 1 << fz_below(8);
		vcrc = wf_vcrc(p, n - 2);
		p[n - 2] = vcrc;
		p[n - 1] = vcrc >> 8;
		break;
	case WF_LVER:
		p[0] |= 1 + fz_below(15);
		wf_crcs(p, n);
		break;
	case WF_LNH:
		p[1] = (p[1] & ~3) | fz_below(2);
		wf_crcs(p, n);
		break;
	case WF_GRH:
		if (fz_pct(50))
			p[8] = (p[8] & 0x0f) | 0x40;	/* IPVer 4 */
		else
			p[8 + 6] = 0x11;		/* NxtHdr UDP */
		wf_crcs(p, n);
		break;
	case WF_TVER:
		p[9] |= 1 + fz_below(15);
		wf_crcs(p, n);
		break;
	case WF_OPCODE:
		p[8] = bad_ops[fz_below(sizeof(bad_ops))];
		wf_crcs(p, n);
		break;
	case WF_PAD:
		p[8] = 0x11;				/* RC ACK with a payload */
		wf_crcs(p, n);
		break;
	case WF_VL:
		if (fz_pct(50))
			p[0] |= 0xf0;			/* VL15 to QP1 */
		else
			wf_put32(p + 8 + 4, 0);		/* QP0 on VL0 */
		wf_crcs(p, n);
		break;
	case WF_PKEY:
		n = wf_gmp(p, dlid, slid, 256, 0x1234, 0x80010000, false);
		break;
	case WF_QKEY:
		n = wf_gmp(p, dlid, slid, 256, 0xffff, 0x12345678, false);
		break;
	case WF_MAD_SHORT:
		n = wf_gmp(p, dlid, slid, 4 * fz_below(6), 0xffff, 0x80010000,
			   false);
		break;
	default:
		break;
	}
	return WF_HDR + n;
}

/*
 * Write @count fuzzed frames to the remote cable at @to (ADDR:PORT), in
 * bursts of 25 every 10 ms so that the receiving VM's NIC ring is not
 * what drops them; print "WIRE sent=N counter=N ..." with what the
 * receiver must have counted.  The seed chooses the kinds and contents.
 */
static int wf_run(const char *to, uint64_t seed, unsigned long count,
		  uint16_t dlid, uint16_t slid)
{
	unsigned long want[WF_NKINDS] = {}, sent = 0, i;
	struct sockaddr_in dst = { .sin_family = AF_INET };
	char addr[64], *colon;
	uint8_t f[WF_MAX];
	int fd, k, j;

	snprintf(addr, sizeof(addr), "%s", to);
	colon = strchr(addr, ':');
	if (!colon) {
		fprintf(stderr, "mad_fuzz: wire ADDR:PORT\n");
		return 2;
	}
	*colon = '\0';
	dst.sin_port = htons(atoi(colon + 1));
	if (inet_pton(AF_INET, addr, &dst.sin_addr) != 1) {
		fprintf(stderr, "mad_fuzz: bad address %s\n", addr);
		return 2;
	}
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0) {
		perror("mad_fuzz: socket");
		return 2;
	}
	fz_state = seed;
	printf("1..1\n# seed %llu, %lu frames to %s, LID %u from LID %u\n",
	       (unsigned long long)seed, count, to, dlid, slid);
	for (i = 0; i < count; i++) {
		enum wf_kind kind = fz_below(WF_NKINDS);
		size_t n = wf_build(f, kind, dlid, slid);

		if (sendto(fd, f, n, 0, (struct sockaddr *)&dst,
			   sizeof(dst)) != (ssize_t)n) {
			perror("mad_fuzz: sendto");
			break;
		}
		want[kind]++;
		sent++;
		if (i % 25 == 24)
			usleep(10000);
	}
	close(fd);
	tap(sent == count, "%lu of %lu frames written onto the cable", sent,
	    count);
	printf("WIRE sent=%lu", sent);
	/* Kinds sharing a counter are summed. */
	for (k = 0; k < WF_NKINDS; k++) {
		unsigned long sum = 0;
		bool first = true;

		for (j = 0; j < WF_NKINDS; j++) {
			if (strcmp(wf_counter[j], wf_counter[k]))
				continue;
			first = j >= k;
			if (!first)
				break;
			sum += want[j];
		}
		if (first)
			printf(" %s=%lu", wf_counter[k], sum);
	}
	printf("\n");
	return sent == count ? 0 : 1;
}

/* Sending -------------------------------------------------------------- */

static int fz_send(struct fz_ctx *ctx, void *umad, int agent, int len,
		   int timeout_ms)
{
	mad_address(umad_get_mad_addr(umad), 1, ctx->dgid, ctx->sgid_index);
	if (umad_send(ctx->fd, agent, umad, len, timeout_ms, 0) < 0) {
		int e = errno;

		ctx->refused++;
		ctx->refused_by_errno[e == EINVAL ? 1 : e == EMSGSIZE ? 2 :
				      e == ENOMEM ? 3 : e == EPERM ? 4 :
				      e == EBUSY ? 5 : e ? 6 : 0]++;
		return -1;
	}
	return 0;
}

/* One fuzzed MAD, or a burst of RMPP segments of one transfer. */
static void fz_one(struct fz_ctx *ctx, void *umad)
{
	uint8_t *mad = umad_get_mad(umad);
	struct umad_rmpp_hdr *r = (struct umad_rmpp_hdr *)(mad + sizeof(struct umad_hdr));
	int len = fz_build(ctx, mad);

	/*
	 * ib_umad copies @len bytes and the rest of the MAD goes out as
	 * zeroes: the fate must be judged on that (a short MAD may lose
	 * its OUI, say).
	 */
	if (len >= 0 && len < MAD_SIZE)
		memset(mad + len, 0, MAD_SIZE - len);
	if (fz_send(ctx, umad, ctx->agent, len, 0))
		return;
	ctx->sent++;
	/* umad gave a request our agent's hi TID: the fate does not care. */
	ctx->fate[fz_fate(mad)]++;

	/*
	 * Now and then follow an RMPP DATA segment up with more of its
	 * transfer: later, repeated, skipped and out-of-order segment
	 * numbers and a last flag somewhere, so reassembly state is made
	 * and must be cleaned up.
	 */
	if ((r->rmpp_rtime_flags & RMPP_FLAG_ACTIVE) &&
	    r->rmpp_type == RMPP_TYPE_DATA && fz_pct(30)) {
		unsigned int n = 1 + fz_below(12), i;
		uint32_t seg = be32toh(r->seg_num);

		ctx->bursts++;
		for (i = 0; i < n; i++) {
			seg = fz_pct(75) ? seg + 1 : FZ_PICK(seg, seg - 1,
							     seg + 5, 1);
			r->seg_num = htobe32(seg);
			r->rmpp_rtime_flags &= ~(RMPP_FLAG_FIRST |
						 RMPP_FLAG_LAST);
			if (seg == 1)
				r->rmpp_rtime_flags |= RMPP_FLAG_FIRST;
			if (i == n - 1 && fz_pct(70))
				r->rmpp_rtime_flags |= RMPP_FLAG_LAST;
			if (fz_pct(20))
				r->paylen_newwin = htobe32(fz_below(8192));
			fz_fill(mad + 64, MAD_SIZE - 64);
			if (fz_send(ctx, umad, ctx->agent, MAD_SIZE, 0))
				continue;
			ctx->sent++;
			ctx->fate[fz_fate(mad)]++;
		}
	}
}

/*
 * One MAD by hand: mostly cut short (0 to 255 bytes: the MAD layer must
 * drop what cannot hold a MAD header and take the rest as a MAD with
 * zeroes after the cut), sometimes whole, sometimes longer than a MAD
 * (rxe drops what does not fit the receive buffer), and now and then with
 * a bad ICRC, Q_Key or P_Key, which rxe drops.
 */
static void fz_raw(struct fz_ctx *ctx, uint8_t *mad)
{
	uint8_t pkt[RAW_MAX];
	uint32_t icrc, psn = fz_below(1u << 24);
	size_t len, pad, n;
	unsigned long short_len = ctx->short_len, long_len = ctx->long_len;
	bool bad = false;
	int how;

	/* The length is chosen here: fz_build()'s is for umad. */
	fz_build(ctx, mad);
	ctx->short_len = short_len;
	ctx->long_len = long_len;
	len = FZ_PICK(0, 1, 4, 16, 23, 24, 25, 36, 40, 56, 63, 64, 65, 100,
		      200, 252, 255, MAD_SIZE, MAD_SIZE, MAD_SIZE + 4, 1024,
		      fz_below(MAD_SIZE), fz_below(1024));
	if (len > MAD_SIZE)
		fz_fill(mad + MAD_SIZE, len - MAD_SIZE);
	else
		memset(mad + len, 0, MAD_SIZE - len);
	pad = (4 - len % 4) % 4;
	memset(pkt, 0, sizeof(pkt));
	pkt[0] = BTH_UD_SEND_ONLY;
	pkt[1] = pad << 4;
	pkt[2] = 0xff;				/* P_Key 0xffff */
	pkt[3] = 0xff;
	pkt[7] = 1;				/* QP1 */
	pkt[9] = psn >> 16;
	pkt[10] = psn >> 8;
	pkt[11] = psn;
	pkt[12] = GSI_QKEY >> 24;
	pkt[13] = GSI_QKEY >> 16 & 0xff;
	pkt[19] = 1;				/* from our QP1 */
	memcpy(pkt + RAW_HDRS, mad, len);
	n = RAW_HDRS + len + pad;
	icrc = fz_icrc(ctx, pkt, n);
	how = fz_below(100);
	if (how < 3) {
		icrc ^= 1u << fz_below(32);
		bad = true;
	} else if (how < 5) {
		pkt[14] ^= 1;			/* Q_Key */
		icrc = fz_icrc(ctx, pkt, n);
		bad = true;
	} else if (how < 6) {
		pkt[2] = 0x12;			/* P_Key 0x1234 */
		pkt[3] = 0x34;
		icrc = fz_icrc(ctx, pkt, n);
		bad = true;
	}
	/* rxe reads the ICRC in memory order, as it computed it. */
	memcpy(pkt + n, &icrc, 4);
	if (sendto(ctx->raw_fd, pkt, n + 4, 0,
		   (struct sockaddr *)&ctx->raw_dst, sizeof(ctx->raw_dst)) < 0) {
		ctx->refused++;
		return;
	}
	ctx->raw++;
	if (bad || len > MAD_SIZE) {
		ctx->raw_rxe_drop++;
		return;
	}
	ctx->raw_mad++;
	ctx->fate[len < 24 ? FZ_INVALID : fz_fate(mad)]++;
}

/*
 * A real multi-segment transfer through the kernel's RMPP sender: a Set
 * of vendor class 0x30 to the sink, of random size and content.  It
 * times out waiting for an answer the sink never gives; the status comes
 * back on the fd and fz_drain() counts it.
 */
static void fz_krmpp(struct fz_ctx *ctx, void *umad)
{
	uint8_t *mad = umad_get_mad(umad);
	struct umad_hdr *h = (struct umad_hdr *)mad;
	struct umad_rmpp_hdr *r = (struct umad_rmpp_hdr *)(h + 1);
	int len = 57 + fz_below(BUF_SIZE - 57);

	fz_fill(mad, len);
	memset(mad, 0, 40);
	h->base_version = MGMT_BASE_VERSION;
	h->mgmt_class = CLASS_VENDOR2;
	h->class_version = 1;
	h->method = METHOD_SET;
	h->tid = htobe64(ctx->tid++);
	h->attr_id = htobe16(0xff10);
	r->rmpp_version = RMPP_VERSION;
	r->rmpp_type = RMPP_TYPE_DATA;
	r->rmpp_rtime_flags = RMPP_FLAG_ACTIVE;
	mad[37] = SINK_OUI >> 16;
	mad[38] = SINK_OUI >> 8;
	mad[39] = SINK_OUI & 0xff;
	if (fz_send(ctx, umad, ctx->krmpp_agent, len, 500))
		return;
	ctx->krmpp++;
}

/* Take what came back on the fd (kernel-RMPP send statuses) without waiting. */
static void fz_drain(struct fz_ctx *ctx, void *umad, int timeout_ms)
{
	int len, agent;

	for (;;) {
		len = BUF_SIZE;
		agent = umad_recv(ctx->fd, umad, &len, timeout_ms);
		if (agent < 0)
			return;
		if (agent == ctx->krmpp_agent)
			ctx->krmpp_done++;
	}
}

/*
 * The valid probe: Get(IOUnitInfo) from ib_srpt, which must come back as
 * a GetResp with our TID, status 0, 16 slots and an IOC in slot 1.
 * Returns true when it did.
 */
static bool fz_probe(struct fz_ctx *ctx, void *umad, int timeout_ms)
{
	uint8_t *mad = umad_get_mad(umad);
	struct umad_hdr *h = (struct umad_hdr *)mad;
	uint32_t tid = ctx->tid++;
	double end;
	int len, agent;

	memset(mad, 0, MAD_SIZE);
	h->base_version = MGMT_BASE_VERSION;
	h->mgmt_class = CLASS_DM;
	h->class_version = 1;
	h->method = METHOD_GET;
	h->tid = htobe64(tid);
	h->attr_id = htobe16(DM_ATTR_IOU_INFO);
	ctx->probes++;
	if (fz_send(ctx, umad, ctx->probe_agent, MAD_SIZE, timeout_ms)) {
		ctx->probe_lost++;
		return false;
	}
	end = now_ms() + timeout_ms + 2000;
	while (now_ms() < end) {
		len = BUF_SIZE;
		agent = umad_recv(ctx->fd, umad, &len, 500);
		if (agent < 0)
			continue;
		if (agent == ctx->krmpp_agent) {
			ctx->krmpp_done++;
			continue;
		}
		if (agent != ctx->probe_agent ||
		    (uint32_t)be64toh(h->tid) != tid)
			continue;
		if (umad_status(umad)) {
			ctx->probe_lost++;
			return false;
		}
		if (h->method == METHOD_GET_RESP && !h->status &&
		    h->mgmt_class == CLASS_DM &&
		    be16toh(h->attr_id) == DM_ATTR_IOU_INFO &&
		    mad[64 + 2] == 16 && mad[64 + 4] >> 4 == 1) {
			ctx->probe_ok++;
			return true;
		}
		ctx->probe_bad++;
		fprintf(stderr, "probe %u: method 0x%02x status 0x%04x slots %u\n",
			tid, h->method, be16toh(h->status), mad[66]);
		return false;
	}
	ctx->probe_lost++;
	return false;
}

static int fz_run(struct fz_ctx *ctx, uint64_t seed, unsigned long count,
		  unsigned int every, unsigned int secs)
{
	void *umad = calloc(1, umad_size() + BUF_SIZE);
	double t0 = now_ms(), t;
	unsigned long n = 0, since = 0;
	bool timed_out = false;
	unsigned int i;

	if (!umad)
		return 2;
	printf("# seed %llu: mad_fuzz -S %llu -n %lu -e %u\n",
	       (unsigned long long)seed, (unsigned long long)seed, count,
	       every);
	fflush(stdout);
	fz_state = seed;
	ctx->tid = (uint32_t)seed;
	tap(fz_probe(ctx, umad, 2000), "a valid probe is answered before fuzzing");
	while (ctx->sent + ctx->raw < count) {
		if (fz_pct(1) && fz_pct(50))
			fz_krmpp(ctx, umad);
		else if (ctx->raw_fd >= 0 && fz_pct(8))
			fz_raw(ctx, umad_get_mad(umad));
		else
			fz_one(ctx, umad);
		/*
		 * A probe is answered after everything sent before it was
		 * taken off the peer's receive queue: waiting for it keeps
		 * what is in flight (EVERY, a burst more) well under the
		 * 512 receives the MAD layer posts, so that nothing is lost
		 * for want of a buffer and the counters add up.
		 */
		if (ctx->sent + ctx->raw - since >= every) {
			since = ctx->sent + ctx->raw;
			fz_drain(ctx, umad, 0);
			fz_probe(ctx, umad, 2000);
		}
		if (++n % 20000 == 0) {
			t = (now_ms() - t0) / 1e3;
			printf("# %lu MADs in %.0f s, probes %lu/%lu\n",
			       ctx->sent, t, ctx->probe_ok, ctx->probes);
			fflush(stdout);
		}
		if (secs && now_ms() - t0 > secs * 1e3) {
			timed_out = true;
			break;
		}
	}
	/* The last probe is answered after everything before it. */
	tap(fz_probe(ctx, umad, 2000), "a valid probe is answered after fuzzing");
	/* Let the kernel-RMPP sends finish (500 ms timeout, ACK waits). */
	for (i = 0; i < 20 && ctx->krmpp_done < ctx->krmpp; i++)
		fz_drain(ctx, umad, 500);
	t = (now_ms() - t0) / 1e3;
	printf("# %lu MADs on the wire in %.1f s (%.0f/s), ",
	       ctx->sent, t, ctx->sent / t);
	printf("%lu refused by the sender, %lu kernel-RMPP transfers (%lu completed)\n",
	       ctx->refused, ctx->krmpp, ctx->krmpp_done);
	printf("# refused: EINVAL %lu EMSGSIZE %lu ENOMEM %lu EPERM %lu EBUSY %lu other %lu\n",
	       ctx->refused_by_errno[1], ctx->refused_by_errno[2],
	       ctx->refused_by_errno[3], ctx->refused_by_errno[4],
	       ctx->refused_by_errno[5], ctx->refused_by_errno[6]);
	printf("# RMPP headers %lu, bursts %lu, SMPs %lu, short %lu, over-long %lu\n",
	       ctx->rmpp_hdr, ctx->bursts, ctx->dr, ctx->short_len,
	       ctx->long_len);
	printf("# by hand: %lu packets, %lu of them MADs for the MAD layer, %lu for rxe to drop\n",
	       ctx->raw, ctx->raw_mad, ctx->raw_rxe_drop);
	/* One line, key=value, for the host; written in three pieces. */
	printf("FUZZ seed=%llu sent=%lu refused=%lu krmpp=%lu",
	       (unsigned long long)seed, ctx->sent, ctx->refused, ctx->krmpp);
	printf(" raw=%lu raw_mad=%lu raw_rxe_drop=%lu", ctx->raw, ctx->raw_mad,
	       ctx->raw_rxe_drop);
	printf(" probes=%lu probe_ok=%lu probe_bad=%lu probe_lost=%lu",
	       ctx->probes, ctx->probe_ok, ctx->probe_bad, ctx->probe_lost);
	for (i = 0; i < FZ_NFATES; i++)
		printf(" %s=%lu", fz_fate_names[i], ctx->fate[i]);
	printf(" secs=%.0f\n", t);
	tap(!timed_out && ctx->sent + ctx->raw >= count,
	    "%lu fuzzed MADs on the wire, %lu of them by hand (wanted %lu) in %.0f s",
	    ctx->sent + ctx->raw, ctx->raw, count, t);
	tap(ctx->probe_ok == ctx->probes,
	    "all %lu valid probes answered correctly (%lu wrong, %lu lost)",
	    ctx->probes, ctx->probe_bad, ctx->probe_lost);
	/* Over-long MADs without kernel RMPP cannot be sent. */
	tap(ctx->refused >= ctx->long_len && ctx->refused < count / 5,
	    "the sender refused %lu MADs, at least the %lu over-long ones",
	    ctx->refused, ctx->long_len);
	free(umad);
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

/* Sink ----------------------------------------------------------------- */

static volatile sig_atomic_t fz_stop;

static void fz_on_term(int sig)
{
	(void)sig;
	fz_stop = 1;
}

static int fz_sink(int fd)
{
	long mask[16 / sizeof(long)] = {};
	unsigned long plain = 0, rmpp = 0, lng = 0;
	uint8_t oui[3] = { SINK_OUI >> 16, SINK_OUI >> 8, SINK_OUI & 0xff };
	void *umad = calloc(1, umad_size() + 1024 * 1024);
	int a_rmpp, a_plain, agent, len;

	if (!umad)
		return 2;
	method_mask_set(mask, METHOD_GET);
	method_mask_set(mask, METHOD_SET);
	a_rmpp = umad_register_oui(fd, CLASS_VENDOR2, 1, oui, mask);
	a_plain = umad_register(fd, CLASS_VENDOR1, 1, 0, mask);
	if (a_rmpp < 0 || a_plain < 0) {
		fprintf(stderr, "mad_fuzz: cannot register the sink's agents\n");
		return 2;
	}
	signal(SIGTERM, fz_on_term);
	signal(SIGINT, fz_on_term);
	printf("# sink: agents %d (vendor 0x30, RMPP) and %d (vendor 0x09)\n",
	       a_rmpp, a_plain);
	fflush(stdout);
	while (!fz_stop) {
		len = 1024 * 1024;
		agent = umad_recv(fd, umad, &len, 200);
		if (agent < 0)
			continue;
		if (agent == a_rmpp)
			rmpp++;
		else
			plain++;
		if (len > MAD_SIZE)
			lng++;
	}
	printf("SINK plain=%lu rmpp=%lu long=%lu\n", plain, rmpp, lng);
	umad_unregister(fd, a_rmpp);
	umad_unregister(fd, a_plain);
	free(umad);
	return 0;
}

static void fz_usage(void)
{
	fprintf(stderr,
		"usage: mad_fuzz [-d DEV] [-p PORT] [-x SGID_INDEX] [-S SEED] [-n COUNT]\n"
		"                [-e EVERY] [-T SECS] [-r OUR_IPV4,PEER_IPV4] -g DGID fuzz\n"
		"       mad_fuzz [-d DEV] [-p PORT] sink\n"
		"       mad_fuzz [-S SEED] [-n COUNT] -l DLID -L SLID wire ADDR:PORT\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct fz_ctx ctx = {};
	const char *dev = NULL, *dgid = NULL, *raw = NULL;
	unsigned long count = 10000;
	unsigned int every = 200, secs = 0;
	uint64_t seed = (uint64_t)time(NULL);
	long mask[16 / sizeof(long)] = {};
	uint8_t oui[3] = { SINK_OUI >> 16, SINK_OUI >> 8, SINK_OUI & 0xff };
	int port = 1, opt, ret;
	uint16_t dlid = 0, slid = 0;

	while ((opt = getopt(argc, argv, "d:p:x:S:n:e:T:g:r:l:L:")) != -1) {
		switch (opt) {
		case 'd':
			dev = optarg;
			break;
		case 'p':
			port = atoi(optarg);
			break;
		case 'x':
			ctx.sgid_index = atoi(optarg);
			break;
		case 'S':
			seed = strtoull(optarg, NULL, 0);
			break;
		case 'n':
			count = strtoul(optarg, NULL, 0);
			break;
		case 'e':
			every = atoi(optarg);
			break;
		case 'T':
			secs = atoi(optarg);
			break;
		case 'g':
			dgid = optarg;
			break;
		case 'r':
			raw = optarg;
			break;
		case 'l':
			dlid = strtoul(optarg, NULL, 0);
			break;
		case 'L':
			slid = strtoul(optarg, NULL, 0);
			break;
		default:
			fz_usage();
		}
	}
	if (optind + 2 == argc && !strcmp(argv[optind], "wire") && dlid)
		return wf_run(argv[optind + 1], seed, count, dlid, slid);
	if (optind + 1 != argc || !every)
		fz_usage();
	if (umad_init() < 0) {
		fprintf(stderr, "mad_fuzz: umad_init failed\n");
		return 2;
	}
	ctx.fd = umad_open_port(dev, port);
	if (ctx.fd < 0) {
		fprintf(stderr, "mad_fuzz: cannot open %s port %d\n",
			dev ? dev : "(first)", port);
		return 2;
	}
	if (!strcmp(argv[optind], "sink"))
		return fz_sink(ctx.fd);
	if (strcmp(argv[optind], "fuzz") || !dgid)
		fz_usage();
	if (inet_pton(AF_INET6, dgid, ctx.dgid) != 1) {
		fprintf(stderr, "mad_fuzz: bad GID %s\n", dgid);
		return 2;
	}
	ctx.raw_fd = -1;
	if (raw) {
		char src[64], *comma;

		/* -r OUR_IPV4,PEER_IPV4 */
		snprintf(src, sizeof(src), "%s", raw);
		comma = strchr(src, ',');
		if (!comma || !strchr(raw, ',')) {
			fprintf(stderr, "mad_fuzz: -r OUR_IPV4,PEER_IPV4\n");
			return 2;
		}
		*comma = '\0';
		if (fz_raw_open(&ctx, src, strchr(raw, ',') + 1)) {
			perror("mad_fuzz: RoCE v2 socket");
			return 2;
		}
	}
	/* Send-only agents: class 0 registers none. */
	ctx.agent = umad_register(ctx.fd, 0, 0, 0, mask);
	ctx.krmpp_agent = umad_register_oui(ctx.fd, CLASS_VENDOR2, 1, oui,
					    mask);
	ctx.probe_agent = umad_register(ctx.fd, CLASS_DM, 1, 0, mask);
	if (ctx.agent < 0 || ctx.krmpp_agent < 0 || ctx.probe_agent < 0) {
		fprintf(stderr, "mad_fuzz: cannot register agents (%d %d %d)\n",
			ctx.agent, ctx.krmpp_agent, ctx.probe_agent);
		return 2;
	}
	ret = fz_run(&ctx, seed, count, every, secs);
	umad_unregister(ctx.fd, ctx.agent);
	umad_unregister(ctx.fd, ctx.krmpp_agent);
	umad_unregister(ctx.fd, ctx.probe_agent);
	umad_close_port(ctx.fd);
	if (ctx.raw_fd >= 0)
		close(ctx.raw_fd);
	return ret;
}
