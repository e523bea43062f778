// SPDX-License-Identifier: GPL-2.0
/*
 * srp_rogue - an SRP initiator that breaks the protocol on purpose, to see
 * that ib_srpt answers every malformed login and IU the way SRP and SAM
 * say and stays healthy for everybody else.
 *
 *   srp_rogue list              (the cases that need no staging)
 *   srp_rogue [-b SRC] [-n ROUNDS] [-s SEED] CASE ADDR PORT INITIATOR_ID TARGET_GUID
 *
 * It logs in over RDMA/CM (librdmacm, libibverbs) to the ib_srpt listener
 * at ADDR:PORT with the 32 hex digit INITIATOR_ID, which needs an ACL, and
 * TARGET_GUID (16 hex digits) in both halves of the target port id, from
 * the local address SRC (default: ADDR itself, for a loopback).  CASE
 * is one of the names "list" prints; each case runs ROUNDS times (1 by
 * default) and checks what the target answered:
 *
 *   login-*     malformed SRP_LOGIN_REQs: a REJ carrying an SRP_LOGIN_REJ
 *               with the reason the request deserves and the request's tag
 *               (login-ch-limit: one channel more than a nexus takes);
 *   iu-*        IUs the target cannot parse (unknown opcodes, empty, shorter
 *               than their type): the target closes the channel;
 *   cmd-*       SRP_CMDs whose descriptors, lengths or LUN are wrong: an
 *               SRP_RSP with CHECK CONDITION and the sense that says why,
 *               and the channel keeps working (also for descriptors whose
 *               direction contradicts a READ or WRITE CDB);
 *   read-short  reads into buffers larger than the data: the residual is
 *               reported and every byte past the data is left untouched,
 *               also where the data turns out shorter only once the
 *               command has run (REPORT LUNS);
 *   read-burst  RG_BURST_N reads of 1 MiB at once; run with a target send
 *               queue of 16 (srp_sq_size), which holds the work requests
 *               of 3 of them: every read must be answered with its data
 *               within 30 s;
 *   bad-rkey    a READ and a WRITE whose descriptor has an R_Key we never
 *               registered: the target's RDMA fails, and it must close
 *               the channel within 8 s;
 *   credits     twice as many reads, then writes, as the target granted
 *               credits, at once: each gets an answer, or the target
 *               closes the channel;
 *   tmf         task management functions that do not exist or find
 *               nothing to do;
 *   dreq-flood  a disconnect (DREQ) while a full window of reads is in
 *               flight;
 *   login-acl-gone  a good login, during which the caller removes the
 *               ACL and disables the TPG: a REJ, UNABLE TO ESTABLISH
 *               CHANNEL (no new login after it: the caller checks that
 *               once it restored the target);
 *   hold        a good login, then nothing until the target closes the
 *               channel, within 120 s (the caller tears the target down);
 *   dreq-cross  one READ that the caller holds in the target's backend;
 *               at the first line on stdin a DREQ, which must be answered
 *               with a DREP within 8 s (the caller arranges for it to
 *               cross a DREQ of the target's that was lost); the second
 *               line (or EOF) ends the case;
 *   fuzz        SRP_CMDs with random header and descriptor bytes and
 *               random lengths (ROUNDS * 100 of them): each gets an
 *               answer or the channel closes.
 *
 * After each case a fresh login must still work and TEST UNIT READY must
 * come back GOOD.  The program only touches blocks from RG_LBA on, so that
 * another initiator can verify its data below it meanwhile.  What the
 * target answered goes to stdout as "# " lines, for the TAP of the caller.
 * Exit status: 0 if every check held, 1 if not, 2 on usage or setup errors.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "tap.h"

/* SRP opcodes, formats and reasons (SRP-2; include/scsi/srp.h). */
enum {
	SRP_LOGIN_REQ = 0x00, SRP_TSK_MGMT = 0x01, SRP_CMD = 0x02,
	SRP_I_LOGOUT = 0x03, SRP_CRED_RSP = 0x41, SRP_LOGIN_RSP = 0xc0,
	SRP_RSP = 0xc1, SRP_LOGIN_REJ = 0xc2,
	SRP_BUF_DIRECT = 1 << 1, SRP_BUF_INDIRECT = 1 << 2,
	SRP_DESC_NONE = 0, SRP_DESC_DIRECT = 1, SRP_DESC_INDIRECT = 2,
	SRP_DESC_IMM = 3,
	SRP_MULTICHAN_MULTI = 1, SRP_IMMED_REQUESTED = 0x80,
	SRP_LOGIN_RSP_IMMED_SUPP = 0x80,
	SRP_RSP_RSPVALID = 1 << 0, SRP_RSP_SNSVALID = 1 << 1,
	SRP_RSP_DIOVER = 1 << 4, SRP_RSP_DIUNDER = 1 << 5,
	REJ_UNABLE_ESTABLISH = 0x00010000,
	REJ_IU_TOO_LARGE = 0x00010002,
	REJ_UNABLE_ASSOCIATE = 0x00010003,
	REJ_UNSUPPORTED_FMT = 0x00010004,
	REJ_CHANNEL_LIMIT = 0x00010006,
	IB_CM_REJ_CONSUMER = 28,
};

/* The RDMA/CM form of SRP_LOGIN_REQ (56 bytes of REQ private data). */
struct rg_login_req {
	uint64_t tag;
	uint16_t buf_fmt;		/* big endian */
	uint8_t flags;
	uint8_t opcode;
	uint32_t it_iu_len;		/* big endian */
	uint8_t initiator_port_id[16];
	uint8_t target_port_id[16];
	uint16_t imm_data_offset;	/* big endian */
	uint8_t reserved[6];
};

_Static_assert(sizeof(struct rg_login_req) == 56, "SRP login over RDMA/CM");

/* Byte offsets in SRP_CMD, SRP_TSK_MGMT and SRP_RSP. */
enum {
	CMD_BUF_FMT = 5, CMD_OUT_CNT = 6, CMD_IN_CNT = 7, CMD_TAG = 8,
	CMD_LUN = 20, CMD_ADD_CDB_LEN = 31, CMD_CDB = 32, CMD_LEN = 48,
	TMF_FUNC = 30, TMF_TASK_TAG = 32, TMF_LEN = 48,
	RSP_LIM = 4, RSP_TAG = 8, RSP_FLAGS = 18, RSP_STATUS = 19,
	RSP_DI_RES = 24, RSP_SENSE_LEN = 28, RSP_RESP_LEN = 32, RSP_DATA = 36,
	DESC_LEN = 16, IDB_HDR = 20,
};

/* SCSI status and sense. */
enum {
	ST_GOOD = 0x00, ST_CHECK = 0x02, ST_BUSY = 0x08, ST_TSF = 0x28,
	KEY_ILLEGAL = 0x05,
};

#define RG_NSEND	512		/* send slots */
#define RG_NRECV	512		/* receive buffers */
#define RG_SLOT		1024		/* bytes per send slot and receive */
#define RG_BIG		16384		/* the slot for IUs with immediate data */
#define RG_DATA		(8 << 20)	/* data buffers the target reaches */
#define RG_BURST_N	8		/* reads of read-burst, at once */
#define RG_BURST_LEN	(1024 * 1024)	/* bytes each */
#define RG_TAGS		4096		/* responses remembered, by tag */
#define RG_IU_LEN	8192		/* request IU length asked at login */
#define RG_IMM_OFF	64		/* offset of immediate data asked */
#define RG_LBA		196608		/* first block of ours (96 MiB) */
#define RG_MAX_CH	64		/* open channels a nexus takes */
#define PATTERN		0xa5

#define RG_RECV_WR	(1ULL << 62)

/* What the target answered to one tag. */
struct rg_rsp {
	bool got;
	uint8_t opcode, flags, status, key, asc, ascq, rsp_code;
	uint32_t di_res, lim;
};

/* One connection and its counters. */
struct rg {
	struct rdma_event_channel *ec;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_comp_channel *cc;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	bool connected, closed, qp_err;
	bool dreq_sent;			/* we asked to disconnect */
	int disc_status;		/* of the DISCONNECTED event */
	int credits;			/* what we believe we may send */
	uint32_t max_it_iu_len;
	uint8_t rsp_flags;		/* of SRP_LOGIN_RSP */
	unsigned int send_next, send_busy;
	uint64_t next_tag;
	struct rg_rsp rsp[RG_TAGS];
	unsigned int other_ius;		/* unexpected IUs from the target */
	unsigned int n_rsp;		/* SRP_RSPs on this connection */
	int rej_status;			/* of a REJECTED event */
	uint8_t rej[148];		/* its private data */
};

/* Where the target is, who we are, and the memory it may reach. */
static struct sockaddr_storage rg_dst, rg_src;
static uint8_t rg_init_id[16], rg_tgt_id[16];
static uint8_t *rg_mem;			/* send slots, big slot, receives, data */
static size_t rg_mem_len;
static unsigned int rg_rounds = 1;

/* What this run sent and got, for the summary line. */
static unsigned long n_logins, n_ius, n_rsps, n_rejs, n_closed;

static uint8_t *slot_buf(unsigned int i)
{
	return rg_mem + (size_t)i * RG_SLOT;
}

static uint8_t *big_buf(void)
{
	return rg_mem + (size_t)RG_NSEND * RG_SLOT;
}

static uint8_t *recv_buf(unsigned int i)
{
	return big_buf() + RG_BIG + (size_t)i * RG_SLOT;
}

static uint8_t *data_buf(void)
{
	return big_buf() + RG_BIG + (size_t)RG_NRECV * RG_SLOT;
}

static uint32_t get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3];
}

static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

static void put_be64(uint8_t *p, uint64_t v)
{
	put_be32(p, v >> 32);
	put_be32(p + 4, v);
}

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Print one "# FAIL" line and return 1, for "bad |= fail(...)". */
static int fail(const char *fmt, ...)
{
	va_list ap;

	printf("# FAIL: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	return 1;
}

static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void note(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* ---- connection ------------------------------------------------------- */

static int rg_post_recv(struct rg *r, unsigned int i)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)recv_buf(i),
		.length = RG_SLOT,
		.lkey = r->mr->lkey,
	};
	struct ibv_recv_wr wr = {
		.wr_id = RG_RECV_WR | i,
		.sg_list = &sge,
		.num_sge = 1,
	}, *bad;

	return ibv_post_recv(r->id->qp, &wr, &bad);
}

/* An IU from the target: remember what it says under its tag. */
static void rg_got_iu(struct rg *r, const uint8_t *iu, uint32_t len)
{
	struct rg_rsp *p;
	uint64_t tag;
	uint32_t rlen, slen;
	const uint8_t *s;

	if (len < RSP_DATA || iu[0] != SRP_RSP) {
		r->other_ius++;
		note("target sent IU %#x of %u bytes", len ? iu[0] : 0, len);
		return;
	}
	memcpy(&tag, iu + RSP_TAG, 8);
	p = &r->rsp[tag % RG_TAGS];
	memset(p, 0, sizeof(*p));
	p->got = true;
	p->opcode = iu[0];
	p->flags = iu[RSP_FLAGS];
	p->status = iu[RSP_STATUS];
	p->di_res = get_be32(iu + RSP_DI_RES);
	p->lim = get_be32(iu + RSP_LIM);
	r->credits += p->lim;
	r->n_rsp++;
	n_rsps++;
	rlen = get_be32(iu + RSP_RESP_LEN);
	slen = get_be32(iu + RSP_SENSE_LEN);
	if ((p->flags & SRP_RSP_RSPVALID) && rlen >= 4 &&
	    RSP_DATA + 4 <= len)
		p->rsp_code = iu[RSP_DATA + 3];
	if (!(p->flags & SRP_RSP_RSPVALID))
		rlen = 0;
	s = iu + RSP_DATA + rlen;
	if (!(p->flags & SRP_RSP_SNSVALID) || slen < 4 ||
	    RSP_DATA + rlen + 14 > len)
		return;
	if ((s[0] & 0x7f) == 0x72 || (s[0] & 0x7f) == 0x73) {
		p->key = s[1] & 0xf;
		p->asc = s[2];
		p->ascq = s[3];
	} else {
		p->key = s[2] & 0xf;
		p->asc = s[12];
		p->ascq = s[13];
	}
}

static void rg_cm_event(struct rg *r, struct rdma_cm_event *ev)
{
	if (ev->event == RDMA_CM_EVENT_DISCONNECTED) {
		if (!r->closed && !r->dreq_sent)
			n_closed++;
		r->closed = true;
		r->disc_status = ev->status;
		/* Answer the target's DREQ. */
		rdma_disconnect(r->id);
	}
}

/* Handle what has arrived; wait up to @ms for something if nothing had. */
static void rg_pump(struct rg *r, int ms)
{
	struct pollfd pfd[2] = {
		{ .fd = r->cc->fd, .events = POLLIN },
		{ .fd = r->ec->fd, .events = POLLIN },
	};
	struct rdma_cm_event *ev;
	struct ibv_wc wc[32];
	struct ibv_cq *cq;
	bool armed = false;
	void *ctx;
	int i, n, work = 0;

	for (;;) {
		n = ibv_poll_cq(r->cq, 32, wc);
		for (i = 0; i < n; i++) {
			unsigned int idx = wc[i].wr_id & 0xffff;

			work++;
			if (!(wc[i].wr_id & RG_RECV_WR)) {
				r->send_busy--;
				if (wc[i].status != IBV_WC_SUCCESS)
					r->qp_err = true;
				continue;
			}
			if (wc[i].status != IBV_WC_SUCCESS) {
				r->qp_err = true;
				continue;
			}
			rg_got_iu(r, recv_buf(idx), wc[i].byte_len);
			rg_post_recv(r, idx);
		}
		while (!rdma_get_cm_event(r->ec, &ev)) {
			work++;
			rg_cm_event(r, ev);
			rdma_ack_cm_event(ev);
		}
		if (work || ms <= 0)
			return;
		if (!armed) {
			/* Poll once more: a completion may precede the arming. */
			ibv_req_notify_cq(r->cq, 0);
			armed = true;
			continue;
		}
		if (poll(pfd, 2, ms) <= 0)
			return;
		if (pfd[0].revents && !ibv_get_cq_event(r->cc, &cq, &ctx))
			ibv_ack_cq_events(cq, 1);
		ms = 0;
	}
}

/* Wait up to @ms for the next CM event on @r's channel. */
static struct rdma_cm_event *rg_cm_wait(struct rg *r, int ms)
{
	struct pollfd pfd = { .fd = r->ec->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	double end = now_ms() + ms;

	for (;;) {
		if (!rdma_get_cm_event(r->ec, &ev))
			return ev;
		if (now_ms() >= end)
			return NULL;
		poll(&pfd, 1, end - now_ms());
	}
}

static int rg_cm_step(struct rg *r, enum rdma_cm_event_type want)
{
	struct rdma_cm_event *ev = rg_cm_wait(r, 10000);
	int ok;

	if (!ev) {
		note("no %s within 10 s", rdma_event_str(want));
		return -1;
	}
	ok = ev->event == want;
	if (!ok)
		note("%s instead of %s (status %d)", rdma_event_str(ev->event),
		     rdma_event_str(want), ev->status);
	rdma_ack_cm_event(ev);
	return ok ? 0 : -1;
}

/* Queue pair, completion queue and memory of a resolved CM id. */
static int rg_setup_qp(struct rg *r)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 1,
		.cap = { .max_send_wr = RG_NSEND, .max_recv_wr = RG_NRECV,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	unsigned int i;

	r->pd = ibv_alloc_pd(r->id->verbs);
	r->cc = r->pd ? ibv_create_comp_channel(r->id->verbs) : NULL;
	if (!r->cc || set_nonblock(r->cc->fd))
		return -1;
	r->cq = ibv_create_cq(r->id->verbs, RG_NSEND + RG_NRECV, NULL, r->cc,
			      0);
	if (!r->cq)
		return -1;
	qa.send_cq = r->cq;
	qa.recv_cq = r->cq;
	if (rdma_create_qp(r->id, r->pd, &qa))
		return -1;
	r->mr = ibv_reg_mr(r->pd, rg_mem, rg_mem_len,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
			   IBV_ACCESS_REMOTE_WRITE);
	if (!r->mr)
		return -1;
	for (i = 0; i < RG_NRECV; i++)
		if (rg_post_recv(r, i))
			return -1;
	return 0;
}

/* Release everything of @r; disconnects first when still connected. */
static void rg_close(struct rg *r)
{
	double end;

	if (r->connected && !r->closed && r->id) {
		r->dreq_sent = true;
		rdma_disconnect(r->id);
		end = now_ms() + 5000;
		while (!r->closed && now_ms() < end)
			rg_pump(r, 100);
	}
	if (r->id && r->id->qp)
		rdma_destroy_qp(r->id);
	if (r->mr)
		ibv_dereg_mr(r->mr);
	if (r->cq)
		ibv_destroy_cq(r->cq);
	if (r->cc)
		ibv_destroy_comp_channel(r->cc);
	if (r->pd)
		ibv_dealloc_pd(r->pd);
	if (r->id)
		rdma_destroy_id(r->id);
	if (r->ec)
		rdma_destroy_event_channel(r->ec);
	memset(r, 0, offsetof(struct rg, rsp));
}

/*
 * Connect with @len bytes of @req as the login.  Return: 1 when the
 * target accepted (with @r ready for IUs), 0 when it rejected (the REJ's
 * status and private data in @r), -1 on anything else.
 */
static int rg_open(struct rg *r, const void *req, uint8_t len)
{
	struct rdma_conn_param cp = {
		.private_data = req,
		.private_data_len = len,
		.responder_resources = 4,
		.initiator_depth = 4,
		.flow_control = 1,
		.retry_count = 7,
		.rnr_retry_count = 7,
	};
	struct rdma_cm_event *ev;
	const uint8_t *p;
	int ret = -1;

	memset(r, 0, sizeof(*r));
	r->ec = rdma_create_event_channel();
	if (!r->ec || set_nonblock(r->ec->fd) ||
	    rdma_create_id(r->ec, &r->id, r, RDMA_PS_TCP))
		goto err;
	if (rdma_resolve_addr(r->id, (struct sockaddr *)&rg_src,
			      (struct sockaddr *)&rg_dst, 5000) ||
	    rg_cm_step(r, RDMA_CM_EVENT_ADDR_RESOLVED) ||
	    rdma_resolve_route(r->id, 5000) ||
	    rg_cm_step(r, RDMA_CM_EVENT_ROUTE_RESOLVED))
		goto err;
	if (rg_setup_qp(r)) {
		note("QP setup failed: %s", strerror(errno));
		goto err;
	}
	n_logins++;
	if (rdma_connect(r->id, &cp))
		goto err;
	ev = rg_cm_wait(r, 15000);
	if (!ev) {
		note("no answer to the login within 15 s");
		goto err;
	}
	p = ev->param.conn.private_data;
	if (ev->event == RDMA_CM_EVENT_ESTABLISHED && p &&
	    ev->param.conn.private_data_len >= 27) {
		r->connected = true;
		r->credits = get_be32(p + 4);
		r->max_it_iu_len = get_be32(p + 16);
		r->rsp_flags = p[26];
		if (p[0] != SRP_LOGIN_RSP || memcmp(p + 8, req, 8))
			note("login response opcode %#x, tag %s", p[0],
			     memcmp(p + 8, req, 8) ? "wrong" : "ours");
		else
			ret = 1;
	} else if (ev->event == RDMA_CM_EVENT_REJECTED) {
		r->rej_status = ev->status;
		if (p)
			memcpy(r->rej, p, ev->param.conn.private_data_len <
			       sizeof(r->rej) ? ev->param.conn.private_data_len :
			       sizeof(r->rej));
		n_rejs++;
		ret = 0;
	} else {
		note("login answered with %s (status %d)",
		     rdma_event_str(ev->event), ev->status);
	}
	rdma_ack_cm_event(ev);
	if (ret < 0)
		goto err;
	if (!ret)
		rg_close(r);
	return ret;
err:
	rg_close(r);
	return -1;
}

static void rg_req(struct rg_login_req *q, uint64_t tag, bool imm)
{
	memset(q, 0, sizeof(*q));
	q->tag = tag;
	q->buf_fmt = htons(SRP_BUF_DIRECT | SRP_BUF_INDIRECT);
	q->flags = SRP_MULTICHAN_MULTI | (imm ? SRP_IMMED_REQUESTED : 0);
	q->opcode = SRP_LOGIN_REQ;
	q->it_iu_len = htonl(RG_IU_LEN);
	memcpy(q->initiator_port_id, rg_init_id, 16);
	memcpy(q->target_port_id, rg_tgt_id, 16);
	q->imm_data_offset = htons(imm ? RG_IMM_OFF : 0);
}

/* A good login; 0 when the channel is up. */
static int rg_login(struct rg *r, bool imm)
{
	struct rg_login_req q;

	rg_req(&q, 0x10600d, imm);
	if (rg_open(r, &q, sizeof(q)) == 1)
		return 0;
	return fail("a valid login was not accepted");
}

/* ---- sending IUs -------------------------------------------------------- */

/* Post @len bytes of @iu as one SEND; ignores credits (we are rogue). */
static int rg_send(struct rg *r, const void *iu, uint32_t len)
{
	struct ibv_sge sge = { .length = len, .lkey = r->mr->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge,
		.num_sge = len ? 1 : 0,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	uint8_t *buf;
	double end = now_ms() + 20000;

	while (r->send_busy >= RG_NSEND && now_ms() < end && !r->qp_err)
		rg_pump(r, 100);
	if (r->send_busy >= RG_NSEND)
		return -1;
	if (len > RG_SLOT) {
		/* Only one large IU at a time. */
		while (r->send_busy && now_ms() < end && !r->qp_err)
			rg_pump(r, 100);
		buf = big_buf();
	} else {
		buf = slot_buf(r->send_next++ % RG_NSEND);
	}
	memcpy(buf, iu, len);
	sge.addr = (uintptr_t)buf;
	if (ibv_post_send(r->id->qp, &wr, &bad))
		return -1;
	r->send_busy++;
	r->credits--;
	n_ius++;
	return 0;
}

/* An SRP_CMD header with a fresh tag, CDB @cdb of @cdb_len bytes, LUN 0. */
static uint64_t rg_cmd(struct rg *r, uint8_t *iu, const uint8_t *cdb,
		       int cdb_len)
{
	uint64_t tag = r->next_tag++;

	memset(iu, 0, CMD_LEN);
	iu[0] = SRP_CMD;
	memcpy(iu + CMD_TAG, &tag, 8);
	memcpy(iu + CMD_CDB, cdb, cdb_len);
	memset(&r->rsp[tag % RG_TAGS], 0, sizeof(r->rsp[0]));
	return tag;
}

/* A direct descriptor at @d for @len bytes at @buf of our memory. */
static void rg_desc(struct rg *r, uint8_t *d, const uint8_t *buf, uint32_t len)
{
	put_be64(d, (uintptr_t)buf);
	put_be32(d + 8, r->mr->rkey);
	put_be32(d + 12, len);
}

/*
 * An indirect table in @iu after the SRP_CMD header: @n entries of @each
 * bytes side by side in our data buffer, and @total as the table's total.
 * Return: the length of the IU up to the end of the table.
 */
static uint32_t rg_indirect(struct rg *r, uint8_t *iu, unsigned int n,
			    uint32_t each, uint32_t total)
{
	uint8_t *d = iu + CMD_LEN;
	unsigned int i;

	/* The table lies in the IU: the target never reads it from here. */
	rg_desc(r, d, iu, n * DESC_LEN);
	put_be32(d + DESC_LEN, total);
	for (i = 0; i < n; i++)
		rg_desc(r, d + IDB_HDR + i * DESC_LEN, data_buf() + i * each,
			each);
	return CMD_LEN + IDB_HDR + n * DESC_LEN;
}

/* Wait up to @ms for the response to @tag or for the channel to close. */
static const struct rg_rsp *rg_wait(struct rg *r, uint64_t tag, int ms)
{
	struct rg_rsp *p = &r->rsp[tag % RG_TAGS];
	double end = now_ms() + ms;

	while (!p->got && !r->closed && now_ms() < end)
		rg_pump(r, 100);
	return p->got ? p : NULL;
}

static const uint8_t cdb_tur[6] = { 0x00 };
static const uint8_t cdb_inq36[6] = { 0x12, 0, 0, 0, 36, 0 };

static void cdb_rw10(uint8_t *cdb, uint8_t op, uint32_t lba, uint16_t n)
{
	memset(cdb, 0, 10);
	cdb[0] = op;
	put_be32(cdb + 2, lba);
	cdb[7] = n >> 8;
	cdb[8] = n;
}

static const char *st_name(uint8_t st)
{
	switch (st) {
	case ST_GOOD: return "GOOD";
	case ST_CHECK: return "CHECK CONDITION";
	case ST_BUSY: return "BUSY";
	case ST_TSF: return "TASK SET FULL";
	default: return "other status";
	}
}

/*
 * Send @iu and expect an SRP_RSP with @status (and, for CHECK CONDITION,
 * sense key @key and @asc/@ascq; -1 for any) with the channel open.
 */
static int rg_expect(struct rg *r, const char *what, uint8_t *iu,
		     uint32_t len, uint8_t status, int key, int asc, int ascq)
{
	uint64_t tag;
	const struct rg_rsp *p;

	memcpy(&tag, iu + CMD_TAG, 8);
	if (rg_send(r, iu, len))
		return fail("%s: posting the IU failed", what);
	p = rg_wait(r, tag, 20000);
	if (!p)
		return fail("%s: %s", what, r->closed ?
			    "the target closed the channel instead of answering" :
			    "no response within 20 s");
	note("%s: %s, sense %x/%02x/%02x", what, st_name(p->status), p->key,
	     p->asc, p->ascq);
	if (p->status != status)
		return fail("%s: status %#x, expected %#x", what, p->status,
			    status);
	if (status == ST_CHECK &&
	    ((key >= 0 && p->key != key) || (asc >= 0 && p->asc != asc) ||
	     (ascq >= 0 && p->ascq != ascq)))
		return fail("%s: sense %x/%02x/%02x, expected %x/%02x/%02x",
			    what, p->key, p->asc, p->ascq, key, asc, ascq);
	return 0;
}

/* The channel still works: TEST UNIT READY is GOOD. */
static int rg_tur(struct rg *r, const char *what)
{
	uint8_t iu[CMD_LEN];

	rg_cmd(r, iu, cdb_tur, 6);
	return rg_expect(r, what, iu, CMD_LEN, ST_GOOD, -1, -1, -1);
}

/* After a case: a new login works and TEST UNIT READY is GOOD. */
static int rg_healthy(void)
{
	struct rg r;
	int bad;

	if (rg_login(&r, false))
		return 1;
	bad = rg_tur(&r, "health: TEST UNIT READY on a new login");
	rg_close(&r);
	return bad;
}

/* ---- login cases -------------------------------------------------------- */

/* Present @len bytes of @q and expect an SRP_LOGIN_REJ with @reason. */
static int rg_expect_rej(const char *what, struct rg_login_req *q,
			 uint8_t len, uint32_t reason)
{
	struct rg r;
	int ret, bad = 0;

	ret = rg_open(&r, q, len);
	if (ret == 1) {
		rg_close(&r);
		return fail("%s: login accepted", what);
	}
	if (ret < 0)
		return fail("%s: no REJ", what);
	note("%s: REJ status %d, opcode %#x, reason %#x", what, r.rej_status,
	     r.rej[0], get_be32(r.rej + 4));
	if (r.rej_status != IB_CM_REJ_CONSUMER)
		bad |= fail("%s: REJ reason %d, not consumer defined", what,
			    r.rej_status);
	if (r.rej[0] != SRP_LOGIN_REJ)
		bad |= fail("%s: REJ private data opcode %#x", what, r.rej[0]);
	if (get_be32(r.rej + 4) != reason)
		bad |= fail("%s: reason %#x, expected %#x", what,
			    get_be32(r.rej + 4), reason);
	/* The tag of the request, as far as the request carried one. */
	if (len >= 8 && memcmp(r.rej + 8, &q->tag, 8))
		bad |= fail("%s: REJ tag is not the request's", what);
	if (reason == REJ_UNSUPPORTED_FMT &&
	    !(r.rej[25] & (SRP_BUF_DIRECT | SRP_BUF_INDIRECT)))
		bad |= fail("%s: REJ names no supported buffer format", what);
	return bad;
}

static int case_login_ok(void)
{
	struct rg r;
	int bad;

	if (rg_login(&r, false))
		return 1;
	note("login accepted: %d credits, max_it_iu_len %u, flags %#x",
	     r.credits, r.max_it_iu_len, r.rsp_flags);
	bad = r.credits < 1 ? fail("no credits granted") : 0;
	bad |= rg_tur(&r, "TEST UNIT READY");
	rg_close(&r);
	return bad;
}

static int case_login_short(void)
{
	struct rg_login_req q;
	int bad = 0;

	/* RDMA/CM pads short private data with zeroes to 56 bytes. */
	rg_req(&q, 0x5401, false);
	bad |= rg_expect_rej("no private data", &q, 0, REJ_UNABLE_ESTABLISH);
	bad |= rg_expect_rej("8 bytes (tag only, IU length 0)", &q, 8,
			     REJ_UNABLE_ESTABLISH);
	bad |= rg_expect_rej("16 bytes (no port ids)", &q, 16,
			     REJ_UNABLE_ASSOCIATE);
	bad |= rg_expect_rej("40 bytes (half a target port id)", &q, 40,
			     REJ_UNABLE_ASSOCIATE);
	return bad;
}

static int case_login_opcode(void)
{
	static const uint8_t ops[] = { SRP_CMD, SRP_LOGIN_RSP, 0xff };
	struct rg_login_req q;
	char what[48];
	int bad = 0;
	size_t i;

	for (i = 0; i < sizeof(ops); i++) {
		rg_req(&q, 0x0900 + i, false);
		q.opcode = ops[i];
		snprintf(what, sizeof(what), "login opcode %#x", ops[i]);
		bad |= rg_expect_rej(what, &q, sizeof(q), REJ_UNABLE_ESTABLISH);
	}
	return bad;
}

static int case_login_iu_len(void)
{
	struct rg_login_req q;
	struct rg r;
	uint32_t max;
	int bad = 0;

	if (rg_login(&r, false))
		return 1;
	max = r.max_it_iu_len;
	rg_close(&r);
	note("target accepts request IUs of up to %u bytes", max);
	rg_req(&q, 0x1001, false);
	q.it_iu_len = htonl(max + 1);
	bad |= rg_expect_rej("IU length max + 1", &q, sizeof(q),
			     REJ_IU_TOO_LARGE);
	q.it_iu_len = htonl(0xffffffff);
	bad |= rg_expect_rej("IU length 4 GiB - 1", &q, sizeof(q),
			     REJ_IU_TOO_LARGE);
	q.it_iu_len = htonl(63);
	bad |= rg_expect_rej("IU length 63", &q, sizeof(q),
			     REJ_UNABLE_ESTABLISH);
	q.it_iu_len = 0;
	bad |= rg_expect_rej("IU length 0", &q, sizeof(q),
			     REJ_UNABLE_ESTABLISH);
	return bad;
}

static int case_login_port_id(void)
{
	struct rg_login_req q;
	int bad = 0;

	rg_req(&q, 0x1101, false);
	q.target_port_id[15] ^= 1;
	bad |= rg_expect_rej("second half of the target port id wrong", &q,
			     sizeof(q), REJ_UNABLE_ASSOCIATE);
	rg_req(&q, 0x1102, false);
	q.target_port_id[0] ^= 0x80;
	bad |= rg_expect_rej("first half of the target port id wrong", &q,
			     sizeof(q), REJ_UNABLE_ASSOCIATE);
	rg_req(&q, 0x1103, false);
	q.initiator_port_id[0] ^= 0x40;
	bad |= rg_expect_rej("initiator port id without an ACL", &q,
			     sizeof(q), REJ_UNABLE_ESTABLISH);
	return bad;
}

/*
 * One initiator port opens channels to one target port, all with the
 * multi-channel action MULTI: the first RG_MAX_CH are accepted, the next
 * is rejected with CHANNEL LIMIT REACHED, and with one of them closed a
 * login is accepted again.  Upstream takes any number.
 */
static int case_login_ch_limit(void)
{
	struct rg *rs = calloc(RG_MAX_CH, sizeof(*rs));
	struct rg_login_req q;
	int i, n, bad = 0;
	double t0 = now_ms();

	if (!rs)
		return fail("out of memory");
	for (n = 0; n < RG_MAX_CH; n++) {
		rg_req(&q, 0x6400 + n, false);
		if (rg_open(&rs[n], &q, sizeof(q)) != 1) {
			bad = fail("login %d of %d on one nexus not accepted",
				   n + 1, RG_MAX_CH);
			break;
		}
	}
	if (!bad) {
		note("%d channels open on one nexus in %.1f s", n,
		     (now_ms() - t0) / 1000);
		rg_req(&q, 0x64ff, false);
		bad |= rg_expect_rej("one channel more than the nexus takes",
				     &q, sizeof(q), REJ_CHANNEL_LIMIT);
		rg_close(&rs[0]);
		rg_req(&q, 0x6500, false);
		if (rg_open(&rs[0], &q, sizeof(q)) != 1)
			bad |= fail("no login after one of %d channels closed",
				    RG_MAX_CH);
	}
	for (i = 0; i < n; i++)
		rg_close(&rs[i]);
	free(rs);
	return bad;
}

static int case_login_buf_fmt(void)
{
	static const uint16_t fmts[] = { 0, 0x0001, 0xfff9 };
	struct rg_login_req q;
	char what[48];
	int bad = 0;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(fmts); i++) {
		rg_req(&q, 0x1200 + i, false);
		q.buf_fmt = htons(fmts[i]);
		snprintf(what, sizeof(what), "buffer formats %#x", fmts[i]);
		bad |= rg_expect_rej(what, &q, sizeof(q), REJ_UNSUPPORTED_FMT);
	}
	return bad;
}

static int case_login_flags(void)
{
	struct rg_login_req q;
	struct rg r;
	int bad = 0;

	rg_req(&q, 0x1301, false);
	q.flags = 2;
	bad |= rg_expect_rej("multi-channel action 2 (reserved)", &q,
			     sizeof(q), REJ_UNABLE_ESTABLISH);
	q.flags = 3;
	bad |= rg_expect_rej("multi-channel action 3 (reserved)", &q,
			     sizeof(q), REJ_UNABLE_ESTABLISH);

	/* Immediate data at offsets that cannot hold it: not granted. */
	rg_req(&q, 0x1302, true);
	q.imm_data_offset = htons(0xffff);
	if (rg_open(&r, &q, sizeof(q)) != 1)
		return bad | fail("login with immediate data at 65535 not accepted");
	if (r.rsp_flags & SRP_LOGIN_RSP_IMMED_SUPP)
		bad |= fail("immediate data at offset 65535 granted");
	bad |= rg_tur(&r, "immediate data at 65535 refused, channel works");
	rg_close(&r);
	q.imm_data_offset = htons(CMD_LEN - 8);
	if (rg_open(&r, &q, sizeof(q)) != 1)
		return bad | fail("login with immediate data at 40 not accepted");
	if (r.rsp_flags & SRP_LOGIN_RSP_IMMED_SUPP)
		bad |= fail("immediate data inside SRP_CMD (offset 40) granted");
	rg_close(&r);
	/*
	 * At offset 48 the data would start where the descriptor giving its
	 * length must be: no SRP_CMD could use it, so it must not be granted.
	 */
	q.imm_data_offset = htons(CMD_LEN);
	if (rg_open(&r, &q, sizeof(q)) != 1)
		return bad | fail("login with immediate data at 48 not accepted");
	if (r.rsp_flags & SRP_LOGIN_RSP_IMMED_SUPP)
		bad |= fail("immediate data at offset 48, over its own descriptor, granted");
	rg_close(&r);
	return bad;
}

/* ---- IUs that close the channel ------------------------------------------ */

/* Send @len bytes of @iu on a new channel; the target must close it. */
static int rg_expect_close(const char *what, const uint8_t *iu, uint32_t len)
{
	struct rg r;
	double end;
	int bad = 0;

	if (rg_login(&r, false))
		return 1;
	if (rg_send(&r, iu, len)) {
		rg_close(&r);
		return fail("%s: posting the IU failed", what);
	}
	end = now_ms() + 15000;
	while (!r.closed && now_ms() < end)
		rg_pump(&r, 100);
	note("%s: channel %s, %u responses", what,
	     r.closed ? "closed by the target" : "still open", r.n_rsp);
	if (!r.closed)
		bad = fail("%s: the target did not close the channel", what);
	rg_close(&r);
	return bad;
}

static int case_iu_opcode(void)
{
	static const uint8_t ops[] = { 0x7f, SRP_LOGIN_REQ, SRP_RSP, 0xff };
	uint8_t iu[64] = { 0 };
	char what[48];
	int bad = 0;
	size_t i;

	for (i = 0; i < sizeof(ops); i++) {
		iu[0] = ops[i];
		snprintf(what, sizeof(what), "IU with opcode %#x", ops[i]);
		bad |= rg_expect_close(what, iu, sizeof(iu));
	}
	return bad;
}

static int case_iu_short(void)
{
	uint8_t iu[CMD_LEN] = { SRP_CMD };
	int bad = 0;

	bad |= rg_expect_close("empty IU", iu, 0);
	bad |= rg_expect_close("SRP_CMD of 1 byte", iu, 1);
	bad |= rg_expect_close("SRP_CMD of 47 bytes", iu, CMD_LEN - 1);
	iu[0] = SRP_TSK_MGMT;
	bad |= rg_expect_close("SRP_TSK_MGMT of 40 bytes", iu, TMF_LEN - 8);
	iu[0] = SRP_I_LOGOUT;
	bad |= rg_expect_close("SRP_I_LOGOUT of 8 bytes", iu, 8);
	return bad;
}

/* ---- SRP_CMDs with bad descriptors ----------------------------------------- */

/* Send @iu; expect CHECK CONDITION, INVALID FIELD IN COMMAND IU. */
static int rg_expect_invalid(struct rg *r, const char *what, uint8_t *iu,
			     uint32_t len)
{
	return rg_expect(r, what, iu, len, ST_CHECK, KEY_ILLEGAL, 0x0e, 0x03);
}

static int case_cmd_desc(void)
{
	uint8_t iu[512], cdb[10];
	struct rg r;
	uint32_t len;
	int bad = 0;

	if (rg_login(&r, false))
		return 1;
	cdb_rw10(cdb, 0x28, RG_LBA, 1);

	/* A data-in descriptor announced, the IU ends before it. */
	rg_cmd(&r, iu, cdb, 10);
	iu[CMD_BUF_FMT] = SRP_DESC_DIRECT;
	iu[CMD_IN_CNT] = 1;
	bad |= rg_expect_invalid(&r, "direct descriptor past the IU", iu, CMD_LEN);
	rg_cmd(&r, iu, cdb, 10);
	iu[CMD_BUF_FMT] = SRP_DESC_DIRECT;
	rg_desc(&r, iu + CMD_LEN, data_buf(), 512);
	bad |= rg_expect_invalid(&r, "direct descriptor cut by the IU", iu,
			 CMD_LEN + DESC_LEN - 1);

	/* ADDITIONAL CDB LENGTH reaching past the IU. */
	rg_cmd(&r, iu, cdb, 10);
	iu[CMD_BUF_FMT] = SRP_DESC_DIRECT;
	iu[CMD_ADD_CDB_LEN] = 0xfc;
	rg_desc(&r, iu + CMD_LEN, data_buf(), 512);
	bad |= rg_expect_invalid(&r, "additional CDB of 252 bytes past the IU", iu,
			 CMD_LEN + DESC_LEN);

	/* Indirect: header past the IU, table past the IU, count too high. */
	rg_cmd(&r, iu, cdb, 10);
	iu[CMD_BUF_FMT] = SRP_DESC_INDIRECT;
	iu[CMD_IN_CNT] = 1;
	bad |= rg_expect_invalid(&r, "indirect header past the IU", iu, CMD_LEN + 8);
	rg_cmd(&r, iu, cdb, 10);
	iu[CMD_BUF_FMT] = SRP_DESC_INDIRECT;
	iu[CMD_IN_CNT] = 200;
	rg_indirect(&r, iu, 4, 512, 200 * 512);
	rg_desc(&r, iu + CMD_LEN, iu, 200 * DESC_LEN);
	bad |= rg_expect_invalid(&r, "indirect table of 200 entries, 4 in the IU", iu,
			 CMD_LEN + IDB_HDR + 4 * DESC_LEN);
	rg_cmd(&r, iu, cdb, 10);
	iu[CMD_BUF_FMT] = SRP_DESC_INDIRECT;
	iu[CMD_IN_CNT] = 1;
	len = rg_indirect(&r, iu, 8, 512, 8 * 512);
	bad |= rg_expect_invalid(&r, "indirect table of 8 entries, count says 1 (external table)",
			 iu, len);
	rg_cmd(&r, iu, cdb, 10);
	iu[CMD_BUF_FMT] = SRP_DESC_INDIRECT;
	iu[CMD_IN_CNT] = 8;
	len = rg_indirect(&r, iu, 8, 512, 8 * 512 + 1);
	bad |= rg_expect_invalid(&r, "indirect table whose total is not its sum", iu,
			 len);
	rg_cmd(&r, iu, cdb, 10);
	iu[CMD_BUF_FMT] = SRP_DESC_INDIRECT;
	iu[CMD_IN_CNT] = 1;
	len = rg_indirect(&r, iu, 1, 512, 512);
	rg_desc(&r, iu + CMD_LEN, iu, 0);
	bad |= rg_expect_invalid(&r, "indirect table of length 0", iu, len);

	/* Formats that do not exist or do not fit the command. */
	rg_cmd(&r, iu, cdb, 10);
	iu[CMD_BUF_FMT] = 0x05;
	rg_desc(&r, iu + CMD_LEN, data_buf(), 512);
	bad |= rg_expect_invalid(&r, "data-in format 5", iu, CMD_LEN + DESC_LEN);
	rg_cmd(&r, iu, cdb, 10);
	iu[CMD_BUF_FMT] = SRP_DESC_DIRECT << 4 | SRP_DESC_DIRECT;
	rg_desc(&r, iu + CMD_LEN, data_buf(), 512);
	rg_desc(&r, iu + CMD_LEN + DESC_LEN, data_buf(), 512);
	bad |= rg_expect_invalid(&r, "bidirectional descriptors", iu,
			 CMD_LEN + 2 * DESC_LEN);
	rg_cmd(&r, iu, cdb, 10);
	iu[CMD_BUF_FMT] = SRP_DESC_DIRECT;
	rg_desc(&r, iu + CMD_LEN, data_buf(), 0);
	bad |= rg_expect_invalid(&r, "direct descriptor of 0 bytes", iu,
			 CMD_LEN + DESC_LEN);
	rg_cmd(&r, iu, cdb, 10);
	iu[CMD_BUF_FMT] = SRP_DESC_IMM;
	put_be32(iu + CMD_LEN, 512);
	bad |= rg_expect_invalid(&r, "immediate data as data-in", iu, CMD_LEN + 4);
	rg_cmd(&r, iu, cdb_tur, 6);
	iu[CMD_LUN + 1] = 7;
	bad |= rg_expect(&r, "LUN 7 (not mapped)", iu, CMD_LEN, ST_CHECK,
			 KEY_ILLEGAL, 0x25, 0x00);
	bad |= rg_tur(&r, "TEST UNIT READY after the bad commands");
	rg_close(&r);
	return bad;
}

static int case_cmd_huge(void)
{
	static const uint32_t lens[] = { 0xffffffff, 0x80000000,
					 (16 << 20) + 1 };
	uint8_t iu[256], cdb[10];
	char what[64];
	struct rg r;
	int bad = 0;
	size_t i;

	if (rg_login(&r, false))
		return 1;
	cdb_rw10(cdb, 0x28, RG_LBA, 1);
	for (i = 0; i < ARRAY_SIZE(lens); i++) {
		rg_cmd(&r, iu, cdb, 10);
		iu[CMD_BUF_FMT] = SRP_DESC_DIRECT;
		rg_desc(&r, iu + CMD_LEN, data_buf(), lens[i]);
		snprintf(what, sizeof(what), "direct descriptor of %u bytes",
			 lens[i]);
		bad |= rg_expect_invalid(&r, what, iu, CMD_LEN + DESC_LEN);
	}
	/* Two entries of 2 GiB: 4 GiB, which a 32-bit total cannot say. */
	rg_cmd(&r, iu, cdb, 10);
	iu[CMD_BUF_FMT] = SRP_DESC_INDIRECT;
	iu[CMD_IN_CNT] = 2;
	bad |= rg_expect_invalid(&r, "indirect table of 2 x 2 GiB, total 0", iu,
			 rg_indirect(&r, iu, 2, 0x80000000, 0));
	bad |= rg_tur(&r, "TEST UNIT READY after the huge descriptors");
	rg_close(&r);
	return bad;
}

static int case_cmd_imm(void)
{
	uint8_t *iu = malloc(RG_IU_LEN), cdb[10], *d;
	struct rg r;
	int bad = 0;

	if (!iu)
		return 1;
	/* Immediate data on a channel that did not ask for it. */
	if (rg_login(&r, false)) {
		free(iu);
		return 1;
	}
	cdb_rw10(cdb, 0x2a, RG_LBA, 1);
	rg_cmd(&r, iu, cdb, 10);
	iu[CMD_BUF_FMT] = SRP_DESC_IMM << 4;
	put_be32(iu + CMD_LEN, 512);
	bad |= rg_expect_invalid(&r, "immediate data not negotiated", iu,
			 RG_IMM_OFF + 512);
	rg_close(&r);

	if (rg_login(&r, true)) {
		free(iu);
		return 1;
	}
	if (!(r.rsp_flags & SRP_LOGIN_RSP_IMMED_SUPP)) {
		note("immediate data not granted (SRQ?): skipping its cases");
		rg_close(&r);
		free(iu);
		return bad;
	}
	d = iu + RG_IMM_OFF;
	memset(d, 0x3c, 512);
	rg_cmd(&r, iu, cdb, 10);
	iu[CMD_BUF_FMT] = SRP_DESC_IMM << 4;
	put_be32(iu + CMD_LEN, 512);
	bad |= rg_expect(&r, "immediate data of 512 bytes (valid)", iu,
			 RG_IMM_OFF + 512, ST_GOOD, -1, -1, -1);
	rg_cmd(&r, iu, cdb, 10);
	iu[CMD_BUF_FMT] = SRP_DESC_IMM << 4;
	put_be32(iu + CMD_LEN, 512);
	bad |= rg_expect_invalid(&r, "immediate data of 512 bytes, IU ends 1 byte short",
			 iu, RG_IMM_OFF + 511);
	rg_cmd(&r, iu, cdb, 10);
	iu[CMD_BUF_FMT] = SRP_DESC_IMM << 4;
	put_be32(iu + CMD_LEN, 0xffffffc0);
	bad |= rg_expect_invalid(&r, "immediate data of 4 GiB - 64", iu,
			 RG_IMM_OFF + 512);
	rg_cmd(&r, iu, cdb, 10);
	iu[CMD_BUF_FMT] = SRP_DESC_IMM << 4;
	put_be32(iu + CMD_LEN, 0);
	bad |= rg_expect_invalid(&r, "immediate data of 0 bytes", iu, RG_IMM_OFF + 512);
	rg_cmd(&r, iu, cdb, 10);
	iu[CMD_BUF_FMT] = SRP_DESC_IMM << 4;
	iu[CMD_ADD_CDB_LEN] = 16;
	put_be32(iu + CMD_LEN + 16, 512);
	bad |= rg_expect_invalid(&r, "immediate data descriptor over the data", iu,
			 RG_IMM_OFF + 512);
	bad |= rg_tur(&r, "TEST UNIT READY after the immediate data");
	rg_close(&r);
	free(iu);
	return bad;
}

/* ---- short reads -------------------------------------------------------- */

static int check_fill(const char *what, const uint8_t *buf, size_t from,
		      size_t to, uint8_t val)
{
	size_t i;

	for (i = from; i < to; i++)
		if (buf[i] != val)
			return fail("%s: byte %zu is %#x, not %#x", what, i,
				    buf[i], val);
	return 0;
}

static int rg_expect_resid(const char *what, const struct rg *r,
			   uint64_t tag, uint32_t resid, uint8_t flag)
{
	const struct rg_rsp *p = &r->rsp[tag % RG_TAGS];

	note("%s: flags %#x, data-in residual %u", what, p->flags, p->di_res);
	if (!(p->flags & flag) || p->di_res != resid)
		return fail("%s: flags %#x residual %u, expected flag %#x residual %u",
			    what, p->flags, p->di_res, flag, resid);
	return 0;
}

static int case_read_short(void)
{
	uint8_t iu[256], cdb[10], *buf = data_buf();
	uint64_t tag;
	struct rg r;
	int bad = 0;

	if (rg_login(&r, false))
		return 1;
	/* Our block: 0x3c, written through a direct data-out descriptor. */
	memset(buf, 0x3c, 512);
	cdb_rw10(cdb, 0x2a, RG_LBA, 1);
	rg_cmd(&r, iu, cdb, 10);
	iu[CMD_BUF_FMT] = SRP_DESC_DIRECT << 4;
	iu[CMD_OUT_CNT] = 1;
	rg_desc(&r, iu + CMD_LEN, buf, 512);
	bad |= rg_expect(&r, "WRITE(10) of our block", iu, CMD_LEN + DESC_LEN,
			 ST_GOOD, -1, -1, -1);

	/* INQUIRY of 36 bytes into 4 KiB. */
	memset(buf, PATTERN, 4096);
	tag = rg_cmd(&r, iu, cdb_inq36, 6);
	iu[CMD_BUF_FMT] = SRP_DESC_DIRECT;
	iu[CMD_IN_CNT] = 1;
	rg_desc(&r, iu + CMD_LEN, buf, 4096);
	bad |= rg_expect(&r, "INQUIRY of 36 bytes into 4096", iu,
			 CMD_LEN + DESC_LEN, ST_GOOD, -1, -1, -1);
	bad |= rg_expect_resid("INQUIRY", &r, tag, 4060, SRP_RSP_DIUNDER);
	if (buf[0] == PATTERN && buf[1] == PATTERN)
		bad |= fail("INQUIRY: no data arrived");
	bad |= check_fill("INQUIRY", buf, 36, 4096, PATTERN);

	/*
	 * REPORT LUNS allocating 4 KiB: LIO learns the length of the list
	 * (8 bytes per LUN and the header) only when it runs the command.
	 */
	memset(buf, PATTERN, 4096);
	{
		uint8_t rl[12] = { 0xa0 };

		put_be32(rl + 6, 4096);
		tag = rg_cmd(&r, iu, rl, 12);
	}
	iu[CMD_BUF_FMT] = SRP_DESC_DIRECT;
	iu[CMD_IN_CNT] = 1;
	rg_desc(&r, iu + CMD_LEN, buf, 4096);
	bad |= rg_expect(&r, "REPORT LUNS allocating 4096", iu,
			 CMD_LEN + DESC_LEN, ST_GOOD, -1, -1, -1);
	{
		const struct rg_rsp *p = &r.rsp[tag % RG_TAGS];
		uint32_t got = 4096 - p->di_res;

		note("REPORT LUNS: flags %#x, data-in residual %u, list of %u bytes",
		     p->flags, p->di_res, got);
		if (!(p->flags & SRP_RSP_DIUNDER) || got < 16 || got % 8)
			bad |= fail("REPORT LUNS: flags %#x residual %u: not a list of LUNs",
				    p->flags, p->di_res);
		else
			bad |= check_fill("REPORT LUNS, past the list", buf,
					  got, 4096, PATTERN);
	}

	/* READ of one block into 4 KiB, direct. */
	memset(buf, PATTERN, 4096);
	cdb_rw10(cdb, 0x28, RG_LBA, 1);
	tag = rg_cmd(&r, iu, cdb, 10);
	iu[CMD_BUF_FMT] = SRP_DESC_DIRECT;
	iu[CMD_IN_CNT] = 1;
	rg_desc(&r, iu + CMD_LEN, buf, 4096);
	bad |= rg_expect(&r, "READ(10) of 512 into 4096", iu,
			 CMD_LEN + DESC_LEN, ST_GOOD, -1, -1, -1);
	bad |= rg_expect_resid("READ direct", &r, tag, 3584, SRP_RSP_DIUNDER);
	bad |= check_fill("READ direct, data", buf, 0, 512, 0x3c);
	bad |= check_fill("READ direct, past the data", buf, 512, 4096,
			  PATTERN);

	/* The same through an indirect table of 2 x 2 KiB at two places. */
	memset(buf, PATTERN, 8192);
	tag = rg_cmd(&r, iu, cdb, 10);
	iu[CMD_BUF_FMT] = SRP_DESC_INDIRECT;
	iu[CMD_IN_CNT] = 2;
	rg_desc(&r, iu + CMD_LEN, iu, 2 * DESC_LEN);
	put_be32(iu + CMD_LEN + 16, 4096);
	rg_desc(&r, iu + CMD_LEN + IDB_HDR, buf + 4096 + 100, 2048);
	rg_desc(&r, iu + CMD_LEN + IDB_HDR + DESC_LEN, buf, 2048);
	bad |= rg_expect(&r, "READ(10) of 512 into 2 x 2048, indirect", iu,
			 CMD_LEN + IDB_HDR + 2 * DESC_LEN, ST_GOOD, -1, -1,
			 -1);
	bad |= rg_expect_resid("READ indirect", &r, tag, 3584,
			       SRP_RSP_DIUNDER);
	bad |= check_fill("READ indirect, data", buf, 4196, 4196 + 512, 0x3c);
	bad |= check_fill("READ indirect, before the data", buf, 0, 4196,
			  PATTERN);
	bad |= check_fill("READ indirect, past the data", buf, 4196 + 512,
			  8192, PATTERN);

	/* READ of 8 blocks into 512 bytes: nothing may land past them. */
	memset(buf, PATTERN, 8192);
	cdb_rw10(cdb, 0x28, RG_LBA, 8);
	tag = rg_cmd(&r, iu, cdb, 10);
	iu[CMD_BUF_FMT] = SRP_DESC_DIRECT;
	iu[CMD_IN_CNT] = 1;
	rg_desc(&r, iu + CMD_LEN, buf, 512);
	if (rg_send(&r, iu, CMD_LEN + DESC_LEN) || !rg_wait(&r, tag, 20000)) {
		bad |= fail("READ of 4096 into 512: no response");
	} else {
		const struct rg_rsp *p = &r.rsp[tag % RG_TAGS];

		note("READ of 4096 into 512: %s, sense %x/%02x/%02x, flags %#x, residual %u",
		     st_name(p->status), p->key, p->asc, p->ascq, p->flags,
		     p->di_res);
		/* Either refused, or 512 bytes and an overflow residual. */
		if (!(p->status == ST_CHECK && p->key == KEY_ILLEGAL) &&
		    !(p->status == ST_GOOD && (p->flags & SRP_RSP_DIOVER) &&
		      p->di_res == 3584))
			bad |= fail("READ of 4096 into 512: neither refused nor an overflow");
	}
	bad |= check_fill("READ overflow, past the buffer", buf, 512, 8192,
			  PATTERN);
	bad |= rg_tur(&r, "TEST UNIT READY after the short reads");
	rg_close(&r);
	return bad;
}

/* What block @i of read-burst's area holds: its number, then a ramp. */
static void burst_fill(uint8_t *buf)
{
	size_t i;

	for (i = 0; i < RG_BURST_LEN; i++)
		buf[i] = i % 512 < 4 ? (uint8_t)(i / 512 >> (8 * (i % 512))) :
				       (uint8_t)(i * 7 + i / 512);
}

/*
 * RG_BURST_N reads of 1 MiB at once.  The caller set the target's send
 * queue to 16 entries: the RDMA WRITEs of a few reads fill it, and the
 * target must hold the rest back until it has room, not drop them.
 */
static int case_read_burst(void)
{
	const uint32_t lba = RG_LBA + 4096, blocks = RG_BURST_LEN / 512;
	uint8_t iu[CMD_LEN + DESC_LEN], cdb[10], *want;
	unsigned int i, got = 0, good = 0, ok = 0;
	uint64_t tags[RG_BURST_N];
	struct rg r;
	double t0, end;
	int bad = 0;

	want = malloc(RG_BURST_LEN);
	if (!want)
		return fail("no memory");
	burst_fill(want);
	if (rg_login(&r, false)) {
		free(want);
		return 1;
	}
	memcpy(data_buf(), want, RG_BURST_LEN);
	cdb_rw10(cdb, 0x2a, lba, blocks);
	rg_cmd(&r, iu, cdb, 10);
	iu[CMD_BUF_FMT] = SRP_DESC_DIRECT << 4;
	iu[CMD_OUT_CNT] = 1;
	rg_desc(&r, iu + CMD_LEN, data_buf(), RG_BURST_LEN);
	bad |= rg_expect(&r, "WRITE(10) of 1 MiB", iu, sizeof(iu), ST_GOOD,
			 -1, -1, -1);

	memset(data_buf(), 0, (size_t)RG_BURST_N * RG_BURST_LEN);
	cdb_rw10(cdb, 0x28, lba, blocks);
	t0 = now_ms();
	for (i = 0; i < RG_BURST_N; i++) {
		tags[i] = rg_cmd(&r, iu, cdb, 10);
		iu[CMD_BUF_FMT] = SRP_DESC_DIRECT;
		iu[CMD_IN_CNT] = 1;
		rg_desc(&r, iu + CMD_LEN, data_buf() + (size_t)i * RG_BURST_LEN,
			RG_BURST_LEN);
		if (rg_send(&r, iu, sizeof(iu))) {
			bad |= fail("posting read %u failed", i);
			break;
		}
	}
	end = t0 + 30000;
	for (;;) {
		for (got = 0, i = 0; i < RG_BURST_N; i++)
			got += r.rsp[tags[i] % RG_TAGS].got;
		if (got == RG_BURST_N || r.closed || now_ms() > end)
			break;
		rg_pump(&r, 100);
	}
	for (i = 0; i < RG_BURST_N; i++) {
		const struct rg_rsp *p = &r.rsp[tags[i] % RG_TAGS];

		if (!p->got || p->status != ST_GOOD)
			continue;
		good++;
		ok += !memcmp(data_buf() + (size_t)i * RG_BURST_LEN, want,
			      RG_BURST_LEN);
	}
	note("%u reads of 1 MiB at once: %u answered in %.1f s, %u GOOD, %u with the right data%s",
	     RG_BURST_N, got, (now_ms() - t0) / 1000, good, ok,
	     r.closed ? ", the target closed the channel" : "");
	if (got != RG_BURST_N)
		bad |= fail("%u of %u reads unanswered after 30 s",
			    RG_BURST_N - got, RG_BURST_N);
	if (ok != RG_BURST_N)
		bad |= fail("%u of %u reads did not return GOOD with the data",
			    RG_BURST_N - ok, RG_BURST_N);
	if (!r.closed)
		bad |= rg_tur(&r, "TEST UNIT READY after the burst");
	rg_close(&r);
	free(want);
	return bad;
}

/*
 * Descriptors whose direction contradicts the CDB: a READ(10) carrying
 * data-out, a WRITE(10) carrying data-in.  Both are malformed SRP_CMDs
 * (CHECK CONDITION), and neither may touch the medium or our buffer: our
 * block must read back as it was.
 */
static int case_cmd_direction(void)
{
	uint8_t iu[CMD_LEN + DESC_LEN], cdb[10], *buf = data_buf();
	const uint32_t lba = RG_LBA + 8;
	struct rg r;
	int bad = 0;

	if (rg_login(&r, false))
		return 1;
	memset(buf, 0x3c, 512);
	cdb_rw10(cdb, 0x2a, lba, 1);
	rg_cmd(&r, iu, cdb, 10);
	iu[CMD_BUF_FMT] = SRP_DESC_DIRECT << 4;
	iu[CMD_OUT_CNT] = 1;
	rg_desc(&r, iu + CMD_LEN, buf, 512);
	bad |= rg_expect(&r, "WRITE(10) of our block", iu, sizeof(iu),
			 ST_GOOD, -1, -1, -1);

	/* READ(10) with 512 bytes of 0x77 offered as data-out. */
	memset(buf, 0x77, 512);
	cdb_rw10(cdb, 0x28, lba, 1);
	rg_cmd(&r, iu, cdb, 10);
	iu[CMD_BUF_FMT] = SRP_DESC_DIRECT << 4;
	iu[CMD_OUT_CNT] = 1;
	rg_desc(&r, iu + CMD_LEN, buf, 512);
	bad |= rg_expect_invalid(&r, "READ(10) with a data-out descriptor", iu,
			 sizeof(iu));

	/* WRITE(10) with a data-in descriptor. */
	memset(buf, PATTERN, 512);
	cdb_rw10(cdb, 0x2a, lba, 1);
	rg_cmd(&r, iu, cdb, 10);
	iu[CMD_BUF_FMT] = SRP_DESC_DIRECT;
	iu[CMD_IN_CNT] = 1;
	rg_desc(&r, iu + CMD_LEN, buf, 512);
	bad |= rg_expect_invalid(&r, "WRITE(10) with a data-in descriptor", iu,
			 sizeof(iu));
	bad |= check_fill("WRITE(10) with data-in, our buffer", buf, 0, 512,
			  PATTERN);

	memset(buf, PATTERN, 512);
	cdb_rw10(cdb, 0x28, lba, 1);
	rg_cmd(&r, iu, cdb, 10);
	iu[CMD_BUF_FMT] = SRP_DESC_DIRECT;
	iu[CMD_IN_CNT] = 1;
	rg_desc(&r, iu + CMD_LEN, buf, 512);
	bad |= rg_expect(&r, "READ(10) of our block", iu, sizeof(iu), ST_GOOD,
			 -1, -1, -1);
	bad |= check_fill("our block after the contradicting commands", buf,
			  0, 512, 0x3c);
	rg_close(&r);
	return bad;
}

/*
 * One command whose data descriptor names an R_Key we never registered:
 * the target's RDMA WRITE (a READ) or RDMA READ (a WRITE) fails with a
 * remote access error and its QP goes to the error state.  The channel
 * cannot carry anything any more, so the target must close it (a DREQ,
 * seen here as DISCONNECTED) within @RG_BAD_RKEY_MS, releasing the
 * session; whether an SRP_RSP still arrives does not matter.
 */
#define RG_BAD_RKEY_MS	8000

static int rg_bad_rkey(uint8_t op, const char *what)
{
	uint8_t iu[CMD_LEN + DESC_LEN], cdb[10];
	struct rg r;
	double t0, end;
	int bad = 0;

	if (rg_login(&r, false))
		return 1;
	cdb_rw10(cdb, op, RG_LBA + 16, 8);
	rg_cmd(&r, iu, cdb, 10);
	if (op == 0x28) {
		iu[CMD_BUF_FMT] = SRP_DESC_DIRECT;
		iu[CMD_IN_CNT] = 1;
	} else {
		iu[CMD_BUF_FMT] = SRP_DESC_DIRECT << 4;
		iu[CMD_OUT_CNT] = 1;
	}
	rg_desc(&r, iu + CMD_LEN, data_buf(), 8 * 512);
	/* Another PD's key or none at all: the target's access must fail. */
	put_be32(iu + CMD_LEN + 8, r.mr->rkey ^ 0x5a5a5a00);
	if (rg_send(&r, iu, sizeof(iu))) {
		rg_close(&r);
		return fail("%s: posting the IU failed", what);
	}
	t0 = now_ms();
	end = t0 + RG_BAD_RKEY_MS;
	while (!r.closed && now_ms() < end)
		rg_pump(&r, 100);
	note("%s: channel %s after %.1f s, %u responses", what,
	     r.closed ? "closed by the target" : "still open",
	     (now_ms() - t0) / 1000, r.n_rsp);
	if (!r.closed)
		bad = fail("%s: the target did not close the channel within %d s",
			   what, RG_BAD_RKEY_MS / 1000);
	rg_close(&r);
	return bad;
}

static int case_bad_rkey(void)
{
	int bad = 0;

	bad |= rg_bad_rkey(0x28, "READ(10) into a buffer with a bad R_Key");
	bad |= rg_bad_rkey(0x2a, "WRITE(10) from a buffer with a bad R_Key");
	return bad;
}

/* ---- credits, task management, disconnects -------------------------------- */

/*
 * Twice the credits in commands of 64 KiB, sent at once, reads (@op 0x28)
 * or writes (0x2a).  A read completes while the target handles its IU,
 * so its credit is back before the next IU is taken; a write waits for
 * its RDMA READ, so the target sees requests beyond the credits it
 * granted.  Either each gets an answer, or the target closes the channel.
 */
static int rg_flood(uint8_t op)
{
	const char *what = op == 0x28 ? "reads" : "writes";
	unsigned int i, n, got = 0, st[256] = { 0 };
	uint8_t iu[CMD_LEN + DESC_LEN], cdb[10];
	uint64_t first;
	struct rg r;
	double end;
	int bad = 0;

	if (rg_login(&r, false))
		return 1;
	n = 2 * r.credits;
	if (n > RG_NSEND - 8)
		n = RG_NSEND - 8;
	first = r.next_tag;
	cdb_rw10(cdb, op, RG_LBA + 256, 128);
	memset(data_buf(), 0x5a, 65536);
	for (i = 0; i < n; i++) {
		rg_cmd(&r, iu, cdb, 10);
		iu[CMD_BUF_FMT] = op == 0x28 ? SRP_DESC_DIRECT :
					       SRP_DESC_DIRECT << 4;
		iu[op == 0x28 ? CMD_IN_CNT : CMD_OUT_CNT] = 1;
		rg_desc(&r, iu + CMD_LEN, data_buf(), 65536);
		if (rg_send(&r, iu, sizeof(iu))) {
			bad |= fail("posting IU %u failed", i);
			break;
		}
	}
	n = i;
	end = now_ms() + 60000;
	for (;;) {
		for (got = 0, i = 0; i < n; i++)
			got += r.rsp[(first + i) % RG_TAGS].got;
		if (got == n || r.closed || now_ms() > end)
			break;
		rg_pump(&r, 200);
	}
	for (i = 0; i < n; i++)
		if (r.rsp[(first + i) % RG_TAGS].got)
			st[r.rsp[(first + i) % RG_TAGS].status]++;
	note("%u %s of 64 KiB, %u credits: %u answered (GOOD %u, BUSY %u, TSF %u, other %u)%s",
	     n, what, n / 2, got, st[ST_GOOD], st[ST_BUSY], st[ST_TSF],
	     got - st[ST_GOOD] - st[ST_BUSY] - st[ST_TSF],
	     r.closed ? ", then the target closed the channel" : "");
	if (got != n && !r.closed)
		bad |= fail("%u of %u %s unanswered and the channel still open",
			    n - got, n, what);
	if (!r.closed)
		bad |= rg_tur(&r, "TEST UNIT READY after the flood");
	rg_close(&r);
	return bad;
}

static int case_credits(void)
{
	return rg_flood(0x28) | rg_flood(0x2a);
}

static int rg_expect_tmf(struct rg *r, const char *what, uint8_t func,
			 uint64_t task_tag, uint8_t code)
{
	uint8_t iu[TMF_LEN] = { SRP_TSK_MGMT };
	uint64_t tag = r->next_tag++;
	const struct rg_rsp *p;

	memcpy(iu + CMD_TAG, &tag, 8);
	iu[TMF_FUNC] = func;
	memcpy(iu + TMF_TASK_TAG, &task_tag, 8);
	r->rsp[tag % RG_TAGS].got = false;
	if (rg_send(r, iu, TMF_LEN))
		return fail("%s: posting failed", what);
	p = rg_wait(r, tag, 20000);
	if (!p)
		return fail("%s: no response", what);
	note("%s: flags %#x, response code %#x", what, p->flags, p->rsp_code);
	if (!(p->flags & SRP_RSP_RSPVALID) || p->rsp_code != code)
		return fail("%s: response code %#x, expected %#x", what,
			    p->rsp_code, code);
	return 0;
}

static int case_tmf(void)
{
	struct rg r;
	int bad = 0;

	if (rg_login(&r, false))
		return 1;
	bad |= rg_expect_tmf(&r, "task management function 0x77", 0x77, 0, 4);
	bad |= rg_expect_tmf(&r, "ABORT TASK of a tag never sent",
			     0x01, 0xdeadbeef, 0);
	bad |= rg_tur(&r, "TEST UNIT READY after the TMFs");
	rg_close(&r);
	return bad;
}

static int case_dreq_flood(void)
{
	uint8_t iu[256], cdb[10];
	unsigned int i, n;
	struct rg r;
	double end;
	int bad = 0;

	if (rg_login(&r, false))
		return 1;
	n = r.credits;
	cdb_rw10(cdb, 0x28, RG_LBA, 128);
	for (i = 0; i < n; i++) {
		rg_cmd(&r, iu, cdb, 10);
		iu[CMD_BUF_FMT] = SRP_DESC_DIRECT;
		iu[CMD_IN_CNT] = 1;
		rg_desc(&r, iu + CMD_LEN, data_buf(), 65536);
		if (rg_send(&r, iu, CMD_LEN + DESC_LEN))
			break;
	}
	/* DREQ while the reads are in flight. */
	r.dreq_sent = true;
	rdma_disconnect(r.id);
	end = now_ms() + 15000;
	while (!r.closed && now_ms() < end)
		rg_pump(&r, 100);
	note("%u reads of 64 KiB, then DREQ: %u answered before the close, %s",
	     i, r.n_rsp, r.closed ? "disconnected" : "no DREP within 15 s");
	if (!r.closed)
		bad |= fail("no disconnect within 15 s of our DREQ");
	rg_close(&r);
	return bad;
}

/* Block until a line (or EOF) arrives on stdin: the caller's cue. */
static bool rg_cue(void)
{
	char line[64];

	return fgets(line, sizeof(line), stdin);
}

/*
 * A well-formed login during which the caller removes the initiator's ACL
 * and disables the TPG (it holds the target inside the login, after the
 * session is made, with kmod/delay_kmod.ko): the target must reject it
 * with UNABLE TO ESTABLISH CHANNEL, never accept it.
 */
static int case_login_acl_gone(void)
{
	struct rg_login_req q;

	rg_req(&q, 0x5a01, false);
	return rg_expect_rej("login while its ACL goes away", &q, sizeof(q),
			     REJ_UNABLE_ESTABLISH);
}

/*
 * A good login that then does nothing: the caller tears the target down
 * and unloads ib_srpt meanwhile.  The target must close the channel (a
 * DREQ, or the connection's end) within RG_HOLD_SECS.
 */
#define RG_HOLD_SECS 120
static int case_hold(void)
{
	struct rg r;
	bool closed;
	double t0;

	if (rg_login(&r, false))
		return 1;
	note("hold: logged in; waiting for the target to close the channel");
	t0 = now_ms();
	while (!r.closed && now_ms() < t0 + RG_HOLD_SECS * 1000)
		rg_pump(&r, 100);
	closed = r.closed;
	if (closed)
		note("hold: closed by the target after %.1f s",
		     (now_ms() - t0) / 1000);
	rg_close(&r);
	return closed ? 0 :
	       fail("the target kept the channel open for %d s", RG_HOLD_SECS);
}

static int case_dreq_cross(void)
{
	uint8_t iu[256], cdb[10];
	const struct rg_rsp *p;
	struct rg r;
	double t0;
	uint64_t tag;
	int bad = 0;

	if (rg_login(&r, false))
		return 1;
	cdb_rw10(cdb, 0x28, RG_LBA, 8);
	tag = rg_cmd(&r, iu, cdb, 10);
	iu[CMD_BUF_FMT] = SRP_DESC_DIRECT;
	iu[CMD_IN_CNT] = 1;
	rg_desc(&r, iu + CMD_LEN, data_buf(), 4096);
	if (rg_send(&r, iu, CMD_LEN + DESC_LEN)) {
		rg_close(&r);
		return fail("posting the READ failed");
	}
	p = rg_wait(&r, tag, 1000);
	if (p || r.closed) {
		rg_close(&r);
		return fail("the READ was %s: the backend does not hold it",
			    p ? "answered" : "ended by a disconnect");
	}
	note("dreq-cross: READ of 4 KiB in flight, no answer after 1 s; waiting for the cue");
	if (!rg_cue()) {
		rg_close(&r);
		return fail("no cue on stdin");
	}
	t0 = now_ms();
	r.dreq_sent = true;
	rdma_disconnect(r.id);
	while (!r.closed && now_ms() < t0 + 8000)
		rg_pump(&r, 50);
	if (!r.closed) {
		note("dreq-cross: DREQ sent, no DREP within 8 s");
		bad |= fail("our DREQ went unanswered for 8 s");
	} else {
		note("dreq-cross: DREQ sent, disconnected after %.0f ms, status %d (%s)",
		     now_ms() - t0, r.disc_status,
		     r.disc_status ? "our DREQ timed out" : "DREP received");
		if (r.disc_status)
			bad |= fail("no DREP: the disconnect ended with status %d",
				    r.disc_status);
	}
	rg_cue();
	rg_close(&r);
	return bad;
}

/* ---- fuzz ---------------------------------------------------------------- */

/*
 * A valid READ(10), INQUIRY or TEST UNIT READY with a direct or indirect
 * descriptor, with up to four bytes of its header (never the opcode or
 * the CDB, which could name writes to someone else's blocks) or of its
 * descriptor lengths changed at random, and a random length.
 */
static uint32_t rg_fuzz_iu(struct rg *r, uint8_t *iu)
{
	static const uint8_t hdr[] = { 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 21,
				       28, 29, 30, 31 };
	/* Direct length or table length, total, lengths of the entries. */
	static const int dlen[] = { CMD_LEN + 12, CMD_LEN + 16,
				    CMD_LEN + IDB_HDR + 12,
				    CMD_LEN + IDB_HDR + DESC_LEN + 12 };
	uint8_t cdb[10];
	uint32_t len;
	int i, k;

	cdb_rw10(cdb, 0x28, RG_LBA + random() % 64, 1 + random() % 8);
	if (random() % 4 == 0)
		rg_cmd(r, iu, cdb_inq36, 6);
	else
		rg_cmd(r, iu, cdb, 10);
	if (random() % 2) {
		iu[CMD_BUF_FMT] = SRP_DESC_DIRECT;
		iu[CMD_IN_CNT] = 1;
		rg_desc(r, iu + CMD_LEN, data_buf(), 4096);
		len = CMD_LEN + DESC_LEN;
	} else {
		iu[CMD_BUF_FMT] = SRP_DESC_INDIRECT;
		iu[CMD_IN_CNT] = 2;
		rg_desc(r, iu + CMD_LEN, iu, 2 * DESC_LEN);
		put_be32(iu + CMD_LEN + 16, 8192);
		rg_desc(r, iu + CMD_LEN + IDB_HDR, data_buf(), 4096);
		rg_desc(r, iu + CMD_LEN + IDB_HDR + DESC_LEN,
			data_buf() + 8192, 4096);
		len = CMD_LEN + IDB_HDR + 2 * DESC_LEN;
	}
	for (i = random() % 5; i > 0; i--) {
		switch (random() % 3) {
		case 0:
			iu[hdr[random() % sizeof(hdr)]] = random();
			break;
		case 1:	/* a length field of the descriptors */
			k = dlen[random() % 4];
			put_be32(iu + k, random() % 3 ? random() % 16384 :
				 (uint32_t)random() << 1);
			break;
		default:
			len = random() % 128;
			break;
		}
	}
	return len;
}

static int case_fuzz(void)
{
	unsigned int i, n = 100, answered = 0, closes = 0, st[256] = { 0 };
	uint8_t iu[256];
	struct rg r;
	int bad = 0;

	if (rg_login(&r, false))
		return 1;
	for (i = 0; i < n; i++) {
		uint32_t len = rg_fuzz_iu(&r, iu);
		const struct rg_rsp *p;
		uint64_t tag;

		memcpy(&tag, iu + CMD_TAG, 8);
		if (rg_send(&r, iu, len)) {
			bad |= fail("fuzz IU %u: posting failed", i);
			break;
		}
		p = rg_wait(&r, tag, 20000);
		if (p) {
			answered++;
			st[p->status]++;
			continue;
		}
		if (!r.closed) {
			bad |= fail("fuzz IU %u (%u bytes, fmt %#x): no answer, channel open",
				    i, len, iu[CMD_BUF_FMT]);
			break;
		}
		closes++;
		rg_close(&r);
		if (rg_login(&r, false))
			return 1;
	}
	note("fuzz: %u SRP_CMDs, %u answered (GOOD %u, CHECK CONDITION %u, BUSY %u), %u closes",
	     i, answered, st[ST_GOOD], st[ST_CHECK], st[ST_BUSY], closes);
	rg_close(&r);
	return bad;
}

/* ---- main ----------------------------------------------------------------- */

struct rg_case {
	const char *name;
	int (*fn)(void);
};

/* Staged cases need the caller to set the target up and cue them. */
static const struct rg_case rg_staged[] = {
	{ "dreq-cross", case_dreq_cross },
};

/*
 * Staged cases after which the target refuses logins until the caller
 * restores it: no check that a new login works.
 */
static const struct rg_case rg_staged_down[] = {
	{ "login-acl-gone", case_login_acl_gone },
	{ "hold", case_hold },
};

static const struct rg_case rg_cases[] = {
	{ "login-ok", case_login_ok },
	{ "login-short", case_login_short },
	{ "login-opcode", case_login_opcode },
	{ "login-iu-len", case_login_iu_len },
	{ "login-port-id", case_login_port_id },
	{ "login-buf-fmt", case_login_buf_fmt },
	{ "login-flags", case_login_flags },
	{ "login-ch-limit", case_login_ch_limit },
	{ "iu-opcode", case_iu_opcode },
	{ "iu-short", case_iu_short },
	{ "cmd-desc", case_cmd_desc },
	{ "cmd-huge", case_cmd_huge },
	{ "cmd-imm", case_cmd_imm },
	{ "cmd-direction", case_cmd_direction },
	{ "read-short", case_read_short },
	{ "read-burst", case_read_burst },
	{ "bad-rkey", case_bad_rkey },
	{ "credits", case_credits },
	{ "tmf", case_tmf },
	{ "dreq-flood", case_dreq_flood },
	{ "fuzz", case_fuzz },
};

static const struct rg_case *rg_find(const struct rg_case *t, size_t n,
				     const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(t[i].name, name))
			return &t[i];
	return NULL;
}

static int parse_hex(const char *s, uint8_t *out, size_t n)
{
	size_t i;

	if (!strncmp(s, "0x", 2))
		s += 2;
	if (strlen(s) != 2 * n)
		return -1;
	for (i = 0; i < n; i++)
		if (sscanf(s + 2 * i, "%2hhx", &out[i]) != 1)
			return -1;
	return 0;
}

static int parse_addr(const char *host, const char *port,
		      struct sockaddr_storage *ss)
{
	struct addrinfo *ai, hints = { .ai_flags = AI_NUMERICHOST };

	if (getaddrinfo(host, port, &hints, &ai))
		return -1;
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	freeaddrinfo(ai);
	return 0;
}

int main(int argc, char **argv)
{
	const struct rg_case *c;
	const char *src = NULL;
	unsigned int seed = 1, round;
	int opt, bad = 0;
	bool down = false;
	double t0;
	size_t i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 2 && !strcmp(argv[1], "list")) {
		for (i = 0; i < ARRAY_SIZE(rg_cases); i++)
			printf("%s\n", rg_cases[i].name);
		return 0;
	}
	while ((opt = getopt(argc, argv, "b:n:s:")) != -1) {
		if (opt == 'b')
			src = optarg;
		else if (opt == 'n')
			rg_rounds = strtoul(optarg, NULL, 0);
		else if (opt == 's')
			seed = strtoul(optarg, NULL, 0);
		else
			return 2;
	}
	if (argc - optind != 5 || !rg_rounds ||
	    parse_addr(argv[optind + 1], argv[optind + 2], &rg_dst) ||
	    parse_addr(src ? src : argv[optind + 1], "0", &rg_src) ||
	    parse_hex(argv[optind + 3], rg_init_id, 16) ||
	    parse_hex(argv[optind + 4], rg_tgt_id, 8)) {
		fprintf(stderr, "usage: %s list\n", argv[0]);
		fprintf(stderr, "       %s [-b SRC] [-n ROUNDS] [-s SEED]\n", argv[0]);
		fprintf(stderr, "              CASE ADDR PORT INIT_ID TGT_GUID\n");
		return 2;
	}
	memcpy(rg_tgt_id + 8, rg_tgt_id, 8);
	c = rg_find(rg_cases, ARRAY_SIZE(rg_cases), argv[optind]);
	if (!c)
		c = rg_find(rg_staged, ARRAY_SIZE(rg_staged), argv[optind]);
	if (!c) {
		c = rg_find(rg_staged_down, ARRAY_SIZE(rg_staged_down),
			    argv[optind]);
		down = !!c;
	}
	if (!c) {
		fprintf(stderr, "no case %s (see: %s list)\n", argv[optind],
			argv[0]);
		return 2;
	}
	srandom(seed);
	rg_mem_len = (size_t)RG_NSEND * RG_SLOT + RG_BIG +
		     (size_t)RG_NRECV * RG_SLOT + RG_DATA;
	if (posix_memalign((void **)&rg_mem, 4096, rg_mem_len))
		return 2;
	memset(rg_mem, 0, rg_mem_len);

	t0 = now_ms();
	for (round = 0; round < rg_rounds; round++) {
		bad |= c->fn();
		if (!down)
			bad |= rg_healthy();
		if (bad)
			break;
	}
	note("%s: %u round(s), %lu logins (%lu rejected), %lu IUs, %lu answers, %lu closes, %.1f s",
	     c->name, round + !!bad, n_logins, n_rejs, n_ius,
	     n_rsps, n_closed, (now_ms() - t0) / 1000);
	free(rg_mem);
	return bad ? 1 : 0;
}
