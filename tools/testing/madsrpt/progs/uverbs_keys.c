// SPDX-License-Identifier: GPL-2.0
/*
 * uverbs_keys - user verbs on ibdevsim: data moves, and keys are checked.
 *
 *   uverbs_keys [DEV_A DEV_B]     (default ibdevsim0 ibdevsim1, port 1)
 *
 * One process opens both HCAs through libibverbs (rdma-core's ipathverbs
 * provider drives ibdevsim), connects an RC QP on DEV_A to one on DEV_B
 * across the fabric (LIDs from the SM) and runs each case on a fresh pair,
 * since an error moves the QPs to the error state:
 *
 *   good: RDMA WRITE from two SGEs, RDMA READ into two SGEs, both crossing
 *         page boundaries, and a SEND from three SGEs into a receive of
 *         two: the bytes arrive, byte_len is right;
 *   bad:  an RDMA WRITE to an MR without remote write, a READ past the
 *         end of an MR, an R_Key of another PD's MR, the simulator's
 *         kernel DMA key (0x1000) as R_Key, a deregistered MR's R_Key:
 *         remote access error, the target memory untouched;
 *         a SEND with the DMA key as L_Key, a READ into an MR without
 *         local write: local protection error;
 *         a receive into an MR without local write: the receiver gets a
 *         local protection error and the sender a remote operation error;
 *   slots: a send queue of 8 WQEs, all run, is full until a completion is
 *         polled, as on hardware: 7 unsignaled WRITEs and a signaled one
 *         leave no room for a ninth until that completion is polled, and
 *         8 unsignaled ones leave none for good.
 *
 * Prints TAP; exit status 0 when every point passed, 1 if not, 2 when the
 * devices cannot be set up.
 */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "tap.h"

#define BUF_LEN		8192
#define DMA_KEY		0x1000	/* ibdevsim's kernel-only DMA L_Key/R_Key */
#define PORT		1
#define CQ_LEN		64
#define WAIT_MS		5000

/* One HCA: its context, two PDs, a CQ and the port's LID. */
struct hca {
	const char *name;
	struct ibv_context *ctx;
	struct ibv_pd *pd, *pd2;
	struct ibv_cq *cq;
	uint16_t lid;
};

/* A registered buffer. */
struct buf {
	unsigned char *p;
	struct ibv_mr *mr;
};

static struct hca ha, hb;
static struct ibv_qp *qa, *qb;
/* The RNR retry count new_pair() gives the QPs (7: for ever). */
static int rnr_retry = 7;
static int dest_rd_atomic = 1;

static int open_hca(struct hca *h, const char *name)
{
	struct ibv_device **list;
	struct ibv_port_attr pa;
	int i, n;

	h->name = name;
	list = ibv_get_device_list(&n);
	if (!list)
		return -1;
	for (i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			h->ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!h->ctx) {
		fprintf(stderr, "%s: cannot open it\n", name);
		return -1;
	}
	h->pd = ibv_alloc_pd(h->ctx);
	h->pd2 = ibv_alloc_pd(h->ctx);
	h->cq = ibv_create_cq(h->ctx, CQ_LEN, NULL, NULL, 0);
	if (!h->pd || !h->pd2 || !h->cq || ibv_query_port(h->ctx, PORT, &pa)) {
		fprintf(stderr, "%s: PD, CQ or port query failed\n", name);
		return -1;
	}
	h->lid = pa.lid;
	printf("# %s: port %d LID %u, state %d, link layer %d\n", name, PORT,
	       pa.lid, pa.state, pa.link_layer);
	return pa.state == IBV_PORT_ACTIVE && pa.lid ? 0 : -1;
}

static int reg(struct hca *h, struct ibv_pd *pd, struct buf *b, int access)
{
	b->p = aligned_alloc(4096, BUF_LEN);
	if (!b->p)
		return -1;
	memset(b->p, 0, BUF_LEN);
	b->mr = ibv_reg_mr(pd, b->p, BUF_LEN, access);
	if (!b->mr) {
		fprintf(stderr, "%s: ibv_reg_mr: %s\n", h->name, strerror(errno));
		return -1;
	}
	return 0;
}

static struct ibv_qp *make_qp(struct hca *h)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = h->cq,
		.recv_cq = h->cq,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 4, .max_recv_sge = 4 },
		.qp_type = IBV_QPT_RC,
	};

	return ibv_create_qp(h->pd, &ia);
}

/* Take @qp through INIT, RTR and RTS, connected to @peer at @dlid. */
static int connect_qp(struct ibv_qp *qp, struct ibv_qp *peer, uint16_t dlid)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = PORT,
		.qp_access_flags = IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_WRITE,
	};

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = peer->qp_num;
	a.max_dest_rd_atomic = dest_rd_atomic;
	a.min_rnr_timer = 1;
	a.ah_attr.dlid = dlid;
	a.ah_attr.port_num = PORT;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = rnr_retry;
	a.max_rd_atomic = 1;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

static void drop_pair(void)
{
	struct ibv_wc wc;

	if (qa)
		ibv_destroy_qp(qa);
	if (qb)
		ibv_destroy_qp(qb);
	qa = NULL;
	qb = NULL;
	/* Flushes left behind by an error belong to the old pair. */
	while (ibv_poll_cq(ha.cq, 1, &wc) > 0 || ibv_poll_cq(hb.cq, 1, &wc) > 0)
		;
}

static int new_pair(void)
{
	drop_pair();
	qa = make_qp(&ha);
	qb = make_qp(&hb);
	if (!qa || !qb || connect_qp(qa, qb, hb.lid) ||
	    connect_qp(qb, qa, ha.lid)) {
		fprintf(stderr, "cannot connect a QP pair: %s\n",
			strerror(errno));
		return -1;
	}
	return 0;
}

/* Wait for one completion on @cq; its status, or -1 after WAIT_MS. */
static int wait_wc(struct ibv_cq *cq, struct ibv_wc *wc)
{
	double end = now_ms() + WAIT_MS;
	int n;

	while (now_ms() < end) {
		n = ibv_poll_cq(cq, 1, wc);
		if (n < 0)
			return -1;
		if (n)
			return wc->status;
		usleep(1000);
	}
	return -1;
}

/* Post one RDMA or SEND work request on qa; the status it completes with. */
static int post_a(enum ibv_wr_opcode op, struct ibv_sge *sge, int nsge,
		  uint64_t raddr, uint32_t rkey, struct ibv_wc *wc)
{
	struct ibv_send_wr wr = {
		.wr_id = 7,
		.sg_list = sge,
		.num_sge = nsge,
		.opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	if (ibv_post_send(qa, &wr, &bad)) {
		fprintf(stderr, "ibv_post_send: %s\n", strerror(errno));
		return -1;
	}
	return wait_wc(ha.cq, wc);
}

static int post_recv_b(struct ibv_sge *sge, int nsge)
{
	struct ibv_recv_wr wr = { .wr_id = 9, .sg_list = sge, .num_sge = nsge };
	struct ibv_recv_wr *bad;

	return ibv_post_recv(qb, &wr, &bad);
}

static void fill(unsigned char *p, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (unsigned char)(seed + i * 7 + (i >> 8));
}

static int all_zero(const unsigned char *p, size_t len)
{
	while (len--)
		if (*p++)
			return 0;
	return 1;
}

static uint64_t va(const struct buf *b, size_t off)
{
	return (uintptr_t)b->p + off;
}

/* An RDMA that must fail with @want at the requester, memory untouched. */
/*
 * Wait up to 2 s for asynchronous event @type on @qp of @h; other events
 * are read and dropped on the way.
 */
static bool wait_qp_event(struct hca *h, struct ibv_qp *qp,
			  enum ibv_event_type type)
{
	struct pollfd pfd = { .fd = h->ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;
	bool seen = false;

	while (!seen && poll(&pfd, 1, 2000) > 0 &&
	       !ibv_get_async_event(h->ctx, &ev)) {
		seen = ev.event_type == type && ev.element.qp == qp;
		ibv_ack_async_event(&ev);
	}
	return seen;
}

/*
 * A request the responder refuses: the requester's completion has status
 * @want, the responder's memory (@watch) is untouched, and the responder
 * tells its owner with asynchronous event @ev on its QP, as hardware
 * does (IBA 11.6.3.1: an access violation or an invalid request puts the
 * responder's QP in error).
 */
static void bad_rdma(const char *what, enum ibv_wr_opcode op,
		     struct buf *local, uint64_t raddr, uint32_t rkey,
		     struct buf *watch, int want, enum ibv_event_type ev)
{
	struct ibv_sge sge = { va(local, 0), 4096, local->mr->lkey };
	struct ibv_wc wc;
	bool told;
	int st;

	if (new_pair()) {
		tap(0, "%s: no QP pair", what);
		return;
	}
	fill(local->p, BUF_LEN, 3);
	st = post_a(op, &sge, 1, raddr, rkey, &wc);
	told = wait_qp_event(&hb, qb, ev);
	tap(st == want && (!watch || all_zero(watch->p, BUF_LEN)) && told,
	    "%s: %s (want %s)%s, responder's %s %s", what,
	    st < 0 ? "no completion" : ibv_wc_status_str(st),
	    ibv_wc_status_str(want),
	    watch && !all_zero(watch->p, BUF_LEN) ? ", memory changed" : "",
	    ibv_event_type_str(ev), told ? "raised" : "missing");
}

/*
 * Post @n RDMA WRITEs of 64 bytes on qa, only the last signaled if
 * @signal_last; how many the QP took.
 */
static int post_writes(int n, bool signal_last, struct buf *l, struct buf *r)
{
	struct ibv_sge sge = { va(l, 0), 64, l->mr->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE,
	}, *bad;
	int i;

	wr.wr.rdma.remote_addr = va(r, 0);
	wr.wr.rdma.rkey = r->mr->rkey;
	for (i = 0; i < n; i++) {
		wr.wr_id = 100 + i;
		wr.send_flags = signal_last && i == n - 1 ?
				IBV_SEND_SIGNALED : 0;
		if (ibv_post_send(qa, &wr, &bad))
			break;
	}
	return i;
}

/*
 * The send queue's slots come back when completions are polled: a WR
 * beyond the queue's 8 is refused while the WRs before it, all run, wait
 * for a poll (200 ms is ample for them to run).
 */
static void sq_slots(struct buf *l, struct buf *r)
{
	int first = -1, extra = -1, after = -1, st = -1, unsig = -1, stuck = -1;
	struct ibv_wc wc;

	if (!new_pair()) {
		first = post_writes(8, true, l, r);
		usleep(200 * 1000);
		extra = post_writes(1, true, l, r);
		st = wait_wc(ha.cq, &wc);
		after = post_writes(8, true, l, r);
		if (after == 8 && wait_wc(ha.cq, &wc) == IBV_WC_SUCCESS) {
			unsig = post_writes(8, false, l, r);
			usleep(200 * 1000);
			stuck = post_writes(1, true, l, r);
		}
	}
	tap(first == 8 && extra == 0 && st == IBV_WC_SUCCESS &&
	    wc.wr_id == 107 && after == 8 && unsig == 8 && stuck == 0,
	    "send queue of 8: 8 posted %d, a 9th before the poll %d, completion %s, 8 after it %d; 8 unsignaled %d, then %d more",
	    first, extra, st < 0 ? "none" : ibv_wc_status_str(st), after,
	    unsig, stuck);
}

/* A port 1 hw_counter of device @dev, or -1. */
static long long hw_counter(const char *dev, const char *name)
{
	char path[256];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path),
		 "/sys/class/infiniband/%s/ports/%d/hw_counters/%s", dev, PORT,
		 name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/*
 * A SEND that finds no receive posted gets RNR NAKs: with rnr_retry 7
 * it is sent again after each min_rnr_timer until the receiver posts one,
 * and lands once; with rnr_retry 1 it fails after the second NAK.
 */
static void rnr(struct buf *l, struct buf *r)
{
	struct ibv_sge sge = { va(l, 0), 300, l->mr->lkey };
	struct ibv_sge rsge = { va(r, 0), 512, r->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 11, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	long long n0 = hw_counter(hb.name, "send_rnr_err"), n1;
	struct ibv_wc wc;
	int st = -1, stb = -1, n;

	fill(l->p, 300, 9);
	memset(r->p, 0, BUF_LEN);
	if (!new_pair() && !ibv_post_send(qa, &wr, &bad)) {
		usleep(50000);
		/* Not completed while no receive is posted. */
		n = ibv_poll_cq(ha.cq, 1, &wc);
		if (!n && !post_recv_b(&rsge, 1)) {
			st = wait_wc(ha.cq, &wc);
			stb = wait_wc(hb.cq, &wc);
		}
	}
	usleep(50000);
	n1 = hw_counter(hb.name, "send_rnr_err");
	tap(st == IBV_WC_SUCCESS && stb == IBV_WC_SUCCESS &&
	    wc.byte_len == 300 && !memcmp(r->p, l->p, 300) && n1 > n0,
	    "SEND before a receive is posted: RNR NAKs (%lld), delivered once posted: sender %s, receiver %s",
	    n1 - n0, st < 0 ? "no completion" : ibv_wc_status_str(st),
	    stb < 0 ? "no completion" : ibv_wc_status_str(stb));

	rnr_retry = 1;
	n0 = hw_counter(hb.name, "send_rnr_err");
	st = -1;
	if (!new_pair() && !ibv_post_send(qa, &wr, &bad))
		st = wait_wc(ha.cq, &wc);
	/* The core caches hw_counters for 10 ms. */
	usleep(50000);
	n1 = hw_counter(hb.name, "send_rnr_err");
	rnr_retry = 7;
	tap(st == IBV_WC_RNR_RETRY_EXC_ERR && n1 - n0 == 2,
	    "rnr_retry 1 and no receive: %s after %lld RNR NAKs",
	    st < 0 ? "no completion" : ibv_wc_status_str(st), n1 - n0);
}

/*
 * A CQ that overflows: the completion is lost, the CQ raises
 * IBV_EVENT_CQ_ERR, and the QP whose completion it was goes to the error
 * state, as on hardware.  B's QP receives into a CQ of one more entry
 * than it is given; A sends it that many SENDs plus one.
 */
static void cq_overrun(struct buf *l, struct buf *r)
{
	struct ibv_qp_init_attr ia = {
		.cap = { .max_send_wr = 1, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_sge sge = { va(l, 0), 64, l->mr->lkey };
	struct ibv_sge rsge = { va(r, 0), 64, r->mr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 21, .sg_list = &rsge, .num_sge = 1 };
	struct ibv_recv_wr *rbad;
	struct ibv_qp_init_attr qi;
	struct ibv_async_event ev;
	struct ibv_qp_attr attr;
	int i, n = 0, sent = 0, err = 0, cq_err = 0;
	struct pollfd pfd;
	struct ibv_cq *small;
	struct ibv_wc wc;

	drop_pair();
	small = ibv_create_cq(hb.ctx, 1, NULL, NULL, 0);
	if (small && small->cqe < 16) {
		n = small->cqe + 1;
		ia.send_cq = small;
		ia.recv_cq = small;
		qa = make_qp(&ha);
		qb = ibv_create_qp(hb.pd, &ia);
	}
	if (!qa || !qb || connect_qp(qa, qb, hb.lid) ||
	    connect_qp(qb, qa, ha.lid))
		n = 0;
	for (i = 0; i < n; i++)
		if (ibv_post_recv(qb, &rwr, &rbad))
			n = 0;
	for (i = 0; i < n; i++)
		sent += post_a(IBV_WR_SEND, &sge, 1, 0, 0, &wc) ==
			IBV_WC_SUCCESS;
	for (i = 0; n && i < 100 && !err; i++) {
		err = !ibv_query_qp(qb, &attr, IBV_QP_STATE, &qi) &&
		      attr.qp_state == IBV_QPS_ERR;
		usleep(10000);
	}
	pfd.fd = hb.ctx->async_fd;
	pfd.events = POLLIN;
	while (n && !cq_err && poll(&pfd, 1, 2000) > 0 &&
	       !ibv_get_async_event(hb.ctx, &ev)) {
		cq_err = ev.event_type == IBV_EVENT_CQ_ERR &&
			 ev.element.cq == small;
		ibv_ack_async_event(&ev);
	}
	tap(n && sent == n && err && cq_err,
	    "%d SENDs into a CQ of %d: all acknowledged, the receiver's QP %s, IBV_EVENT_CQ_ERR %s",
	    n, n - 1, err ? "in error" : "not in error",
	    cq_err ? "raised" : "missing");
	drop_pair();
	if (small)
		ibv_destroy_cq(small);
}

int main(int argc, char **argv)
{
	struct buf la, la_ro, rb, rb_ro, rb_pd2, rb_gone, rb_nolw;
	struct ibv_sge sge[3], rsge[2];
	unsigned char expect[BUF_LEN];
	uint32_t gone_rkey;
	struct ibv_wc wc;
	int st, stb;

	if (open_hca(&ha, argc > 2 ? argv[1] : "ibdevsim0") ||
	    open_hca(&hb, argc > 2 ? argv[2] : "ibdevsim1"))
		return 2;
	if (reg(&ha, ha.pd, &la, IBV_ACCESS_LOCAL_WRITE) ||
	    reg(&ha, ha.pd, &la_ro, 0) ||
	    reg(&hb, hb.pd, &rb, IBV_ACCESS_LOCAL_WRITE |
		IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE) ||
	    reg(&hb, hb.pd, &rb_ro, IBV_ACCESS_REMOTE_READ) ||
	    reg(&hb, hb.pd2, &rb_pd2, IBV_ACCESS_LOCAL_WRITE |
		IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE) ||
	    reg(&hb, hb.pd, &rb_gone, IBV_ACCESS_LOCAL_WRITE |
		IBV_ACCESS_REMOTE_WRITE) ||
	    reg(&hb, hb.pd, &rb_nolw, 0))
		return 2;
	printf("# keys: A lkey 0x%x, B rkeys 0x%x 0x%x 0x%x 0x%x\n",
	       la.mr->lkey, rb.mr->rkey, rb_ro.mr->rkey, rb_pd2.mr->rkey,
	       rb_gone.mr->rkey);
	printf("1..15\n");

	/* RDMA WRITE gathered from two SGEs, landing across a page. */
	fill(la.p, BUF_LEN, 1);
	sge[0] = (struct ibv_sge){ va(&la, 100), 3000, la.mr->lkey };
	sge[1] = (struct ibv_sge){ va(&la, 5000), 2000, la.mr->lkey };
	memcpy(expect, la.p + 100, 3000);
	memcpy(expect + 3000, la.p + 5000, 2000);
	st = -1;
	if (!new_pair())
		st = post_a(IBV_WR_RDMA_WRITE, sge, 2, va(&rb, 2000),
			    rb.mr->rkey, &wc);
	tap(st == IBV_WC_SUCCESS && !memcmp(rb.p + 2000, expect, 5000) &&
	    all_zero(rb.p, 2000) && all_zero(rb.p + 7000, BUF_LEN - 7000),
	    "RDMA WRITE of 5000 bytes from two SGEs across a page: %s",
	    st < 0 ? "no completion" : ibv_wc_status_str(st));

	/* RDMA READ scattered into two SGEs. */
	fill(rb.p, BUF_LEN, 2);
	memset(la.p, 0, BUF_LEN);
	sge[0] = (struct ibv_sge){ va(&la, 4000), 1000, la.mr->lkey };
	sge[1] = (struct ibv_sge){ va(&la, 10), 3000, la.mr->lkey };
	st = post_a(IBV_WR_RDMA_READ, sge, 2, va(&rb, 3500), rb.mr->rkey, &wc);
	tap(st == IBV_WC_SUCCESS && !memcmp(la.p + 4000, rb.p + 3500, 1000) &&
	    !memcmp(la.p + 10, rb.p + 4500, 3000) && all_zero(la.p, 10) &&
	    all_zero(la.p + 3010, 990) && all_zero(la.p + 5000, BUF_LEN - 5000),
	    "RDMA READ of 4000 bytes into two SGEs across a page: %s",
	    st < 0 ? "no completion" : ibv_wc_status_str(st));

	/* SEND from three SGEs into a receive of two. */
	fill(la.p, BUF_LEN, 4);
	memset(rb.p, 0, BUF_LEN);
	sge[0] = (struct ibv_sge){ va(&la, 0), 100, la.mr->lkey };
	sge[1] = (struct ibv_sge){ va(&la, 4090), 20, la.mr->lkey };
	sge[2] = (struct ibv_sge){ va(&la, 6000), 900, la.mr->lkey };
	rsge[0] = (struct ibv_sge){ va(&rb, 4000), 500, rb.mr->lkey };
	rsge[1] = (struct ibv_sge){ va(&rb, 0), 4000, rb.mr->lkey };
	memcpy(expect, la.p, 100);
	memcpy(expect + 100, la.p + 4090, 20);
	memcpy(expect + 120, la.p + 6000, 900);
	stb = -1;
	st = post_recv_b(rsge, 2) ? -1 :
	     post_a(IBV_WR_SEND, sge, 3, 0, 0, &wc);
	if (st == IBV_WC_SUCCESS)
		stb = wait_wc(hb.cq, &wc);
	tap(st == IBV_WC_SUCCESS && stb == IBV_WC_SUCCESS &&
	    wc.byte_len == 1020 && wc.opcode == IBV_WC_RECV &&
	    !memcmp(rb.p + 4000, expect, 500) &&
	    !memcmp(rb.p, expect + 500, 520) && all_zero(rb.p + 520, 3480),
	    "SEND of 1020 bytes from three SGEs into two: sender %s, receiver %s, byte_len %u",
	    st < 0 ? "no completion" : ibv_wc_status_str(st),
	    stb < 0 ? "no completion" : ibv_wc_status_str(stb),
	    stb == IBV_WC_SUCCESS ? wc.byte_len : 0);

	bad_rdma("RDMA WRITE to an MR without remote write", IBV_WR_RDMA_WRITE,
		 &la, va(&rb_ro, 0), rb_ro.mr->rkey, &rb_ro,
		 IBV_WC_REM_ACCESS_ERR, IBV_EVENT_QP_ACCESS_ERR);
	memset(rb.p, 0, BUF_LEN);
	bad_rdma("RDMA READ running 100 bytes past the end of an MR",
		 IBV_WR_RDMA_READ, &la, va(&rb, BUF_LEN - 3996), rb.mr->rkey,
		 NULL, IBV_WC_REM_ACCESS_ERR, IBV_EVENT_QP_ACCESS_ERR);
	bad_rdma("RDMA WRITE with the R_Key of another PD's MR",
		 IBV_WR_RDMA_WRITE, &la, va(&rb_pd2, 0), rb_pd2.mr->rkey,
		 &rb_pd2, IBV_WC_REM_ACCESS_ERR, IBV_EVENT_QP_ACCESS_ERR);
	bad_rdma("RDMA WRITE with the kernel's DMA key as R_Key",
		 IBV_WR_RDMA_WRITE, &la, va(&rb, 0), DMA_KEY, &rb,
		 IBV_WC_REM_ACCESS_ERR, IBV_EVENT_QP_ACCESS_ERR);
	gone_rkey = rb_gone.mr->rkey;
	if (ibv_dereg_mr(rb_gone.mr))
		fprintf(stderr, "ibv_dereg_mr failed\n");
	bad_rdma("RDMA WRITE with a deregistered MR's R_Key", IBV_WR_RDMA_WRITE,
		 &la, va(&rb_gone, 0), gone_rkey, &rb_gone,
		 IBV_WC_REM_ACCESS_ERR, IBV_EVENT_QP_ACCESS_ERR);
	/* A READ to a responder that takes none (max_dest_rd_atomic 0). */
	dest_rd_atomic = 0;
	bad_rdma("RDMA READ to a responder with max_dest_rd_atomic 0",
		 IBV_WR_RDMA_READ, &la, va(&rb, 0), rb.mr->rkey, NULL,
		 IBV_WC_REM_INV_REQ_ERR, IBV_EVENT_QP_REQ_ERR);
	dest_rd_atomic = 1;

	/* Local keys: the DMA key is not a user's, a READ needs local write. */
	sge[0] = (struct ibv_sge){ va(&la, 0), 64, DMA_KEY };
	st = new_pair() ? -1 : post_recv_b(rsge, 2) ? -1 :
	     post_a(IBV_WR_SEND, sge, 1, 0, 0, &wc);
	stb = -1;
	memset(la_ro.p, 0, BUF_LEN);
	sge[1] = (struct ibv_sge){ va(&la_ro, 0), 64, la_ro.mr->lkey };
	if (!new_pair())
		stb = post_a(IBV_WR_RDMA_READ, &sge[1], 1, va(&rb, 0),
			     rb.mr->rkey, &wc);
	tap(st == IBV_WC_LOC_PROT_ERR && stb == IBV_WC_LOC_PROT_ERR &&
	    all_zero(la_ro.p, BUF_LEN),
	    "SEND with the DMA key as L_Key: %s; READ into an MR without local write: %s",
	    st < 0 ? "no completion" : ibv_wc_status_str(st),
	    stb < 0 ? "no completion" : ibv_wc_status_str(stb));

	/* A receive into memory the receiver may not write. */
	rsge[0] = (struct ibv_sge){ va(&rb_nolw, 0), 512, rb_nolw.mr->lkey };
	sge[0] = (struct ibv_sge){ va(&la, 0), 256, la.mr->lkey };
	stb = -1;
	st = new_pair() ? -1 : post_recv_b(rsge, 1) ? -1 :
	     post_a(IBV_WR_SEND, sge, 1, 0, 0, &wc);
	if (st >= 0)
		stb = wait_wc(hb.cq, &wc);
	tap(st == IBV_WC_REM_OP_ERR && stb == IBV_WC_LOC_PROT_ERR &&
	    all_zero(rb_nolw.p, BUF_LEN),
	    "SEND into a receive without local write: sender %s, receiver %s",
	    st < 0 ? "no completion" : ibv_wc_status_str(st),
	    stb < 0 ? "no completion" : ibv_wc_status_str(stb));

	sq_slots(&la, &rb);
	rnr(&la, &rb);
	cq_overrun(&la, &rb);

	drop_pair();
	return tap_failed || tap_n != 15 ? 1 : 0;
}
