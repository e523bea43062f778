// SPDX-License-Identifier: GPL-2.0
/*
 * mad_bench_kmod - the MAD layer's own cost per exchange, without ib_umad.
 *
 * Loaded with a device name, it registers two GSI agents on port 1 of that
 * device: a responder for GET of vendor class 0x32 (with an OUI), which
 * answers each request at once, and a requester that keeps @window GETs
 * outstanding to it, reposting each buffer from its send handler when the
 * response has matched it.  With @peer, the responder sits on port 1 of
 * that other device instead and the requests go to it by LID (on
 * ibdevsim: through the fabric's switches).  Both agents use the public MAD API only, so
 * the same module builds against our tree and pristine 6.12.
 *
 * With @background > 0 the requester first posts that many GETs to a QP
 * that does not exist, with a timeout longer than the run: they stay
 * outstanding all along, and every response of the measured exchanges is
 * matched among them.  That is the cost a client with many requests in
 * flight (an SA client under load, ib_umad with many users) pays per
 * response.
 *
 * Counting starts one second after the first exchange completed (by then
 * the background GETs have left the send queue) and lasts @seconds; then
 * the module logs one line:
 *
 *   mad_bench_kmod window=W background=B seconds=S answered=N timeouts=T
 *   errors=E rate=R ns_per_exchange=X
 *
 * and loads (so a script can read the line and unload it) only if every
 * exchange was answered.
 *
 * With @overload > 0 it plays an overloaded responder instead, as an SA
 * under a query storm: the requests are SA GETs with @timeout_ms and
 * @retries, the requester keeps @window of them outstanding (a new TID for
 * each, whatever became of the last), and the responder queues what it
 * receives and answers only @overload of them per second, oldest first.
 * The line then reads
 *
 *   mad_bench_kmod overload=R window=W timeout_ms=T retries=N seconds=S
 *   answered=A timeouts=X retries_sent=Y queued_max=Q goodput=G copies=C
 *
 * (copies: requests the responder received while an earlier copy of the
 * same request, same TID, was still in its queue)
 * and the module loads whenever the run finished, since timeouts are what
 * is being measured.
 *
 * With @expire > 0 it tests mass timeouts instead of measuring: it posts
 * @expire GETs to a QP that does not exist, with a timeout of ten
 * minutes, waits until they have all left the send queue (a GET to the
 * responder posted after them has been answered), then shortens every
 * timeout to 1 ms with ib_modify_mad(), so that all of them expire
 * together, while @window GETs keep going to the responder.  Their send
 * handler does not free them; the module does once every one came back:
 *
 *   mad_bench_kmod expire=N timed_out=T other=O answered_meanwhile=A
 *   errors=E modify_ms=M expire_ms=X
 *
 * (modify_ms: the ib_modify_mad() loop; expire_ms: from its start to the
 * last handler call).  It loads only if all N came back timed out and the
 * responder's GETs were answered all along.
 */

#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_sa.h>
#include <rdma/ib_verbs.h>

#define BENCH_CLASS		0x32
#define BENCH_ATTR		cpu_to_be16(0xff31)
#define BENCH_TIMEOUT_MS	2000
#define BENCH_WARMUP_MS		1000
#define BENCH_NO_QPN		0xabcde
#define BENCH_SA_ATTR		cpu_to_be16(0x0011)	/* NodeRecord */
#define BENCH_TICK_MS		10
#define BENCH_QUEUE_MAX		65536

static char *bench_dev = "rxe-veth0";
module_param_named(dev, bench_dev, charp, 0444);
MODULE_PARM_DESC(dev, "RDMA device to run on (port 1)");

static char *bench_peer = "";
module_param_named(peer, bench_peer, charp, 0444);
MODULE_PARM_DESC(peer, "InfiniBand device whose port 1 answers (default: dev itself)");

static unsigned int window = 16;
module_param(window, uint, 0444);
MODULE_PARM_DESC(window, "GETs kept outstanding to the responder");

static unsigned int background;
module_param(background, uint, 0444);
MODULE_PARM_DESC(background, "GETs left outstanding to nobody during the run");

static unsigned int seconds = 10;
module_param(seconds, uint, 0444);
MODULE_PARM_DESC(seconds, "measured time, after one second of warm-up");

static unsigned int overload;
module_param(overload, uint, 0444);
MODULE_PARM_DESC(overload, "answer at most this many requests per second (0: all at once)");

static unsigned int timeout_ms = BENCH_TIMEOUT_MS;
module_param(timeout_ms, uint, 0444);
MODULE_PARM_DESC(timeout_ms, "response timeout of each request");

static unsigned int retries;
module_param(retries, uint, 0444);
MODULE_PARM_DESC(retries, "retries of each request");

static unsigned int expire;
module_param(expire, uint, 0444);
MODULE_PARM_DESC(expire, "GETs to nobody made to time out together (0: measure instead)");

static const u8 bench_oui[3] = { 0x00, 0x14, 0x05 };

/**
 * struct mad_bench_req - a request the overloaded responder has not answered
 * @node: link on mad_bench.queue
 * @recv_wc: the request
 */
struct mad_bench_req {
	struct list_head node;
	struct ib_mad_recv_wc *recv_wc;
};

/**
 * struct mad_bench - one run
 * @dev: the device, referenced
 * @peer_dev: the responder's device, referenced (@dev itself without @peer)
 * @req: requester agent
 * @resp: responder agent
 * @ah: the requester's address of the responder's QP1 (without @peer: of
 *	our own port's QP1, shared by both agents)
 * @resp_ah: the responder's address of the requester's QP1 (@ah without
 *	@peer)
 * @next_tid: low 32 bits of the next TID
 * @start: when counting starts (after the warm-up); 0 until then
 * @end: when counting ends; 0 until then
 * @stop: set once the run is over: the send handler stops reposting
 * @answered: exchanges answered between @start and @end
 * @timeouts: exchanges that failed between @start and @end
 * @errors: responses or reposts that could not be sent
 * @retries_sent: retries of the exchanges that ended between @start and @end
 * @live: buffers not yet returned by their last send handler call
 * @all_back: completed when @live drops to 0
 * @first_back: completed when the first exchange to the responder did
 * @lock: protects @queue, @queued, @queued_max and @copies (overload mode)
 * @queue: requests the responder received and has not answered yet
 * @queued: number of them
 * @queued_max: most ever queued
 * @copies: requests received with the TID of one still in @queue
 * @budget: answers due at the next tick, in 1/1000 of an answer
 * @tick: answers @overload requests per second from @queue
 * @expiring: the GETs of expire mode, freed by the module, not the handler
 * @expire_left: of those, posted ones whose handler has not run yet
 * @expire_done: completed when @expire_left drops to 0
 * @timed_out: expire mode's GETs that came back with a response timeout
 * @expire_other: and those that came back with any other status
 */
struct mad_bench {
	struct ib_device *dev;
	struct ib_device *peer_dev;
	struct ib_mad_agent *req;
	struct ib_mad_agent *resp;
	struct ib_ah *ah;
	struct ib_ah *resp_ah;
	atomic_t next_tid;
	ktime_t start;
	ktime_t end;
	bool stop;
	atomic_long_t answered;
	atomic_long_t timeouts;
	atomic_long_t errors;
	atomic_long_t retries_sent;
	atomic_t live;
	struct completion all_back;
	struct completion first_back;

	/* protects the responder's queue in overload mode */
	spinlock_t lock;
	struct list_head queue;
	unsigned int queued;
	unsigned int queued_max;
	unsigned long copies;
	unsigned int budget;
	struct delayed_work tick;

	struct ib_mad_send_buf **expiring;
	atomic_t expire_left;
	struct completion expire_done;
	atomic_long_t timed_out;
	atomic_long_t expire_other;
};

static void mad_bench_put_buf(struct mad_bench *b, struct ib_mad_send_buf *buf)
{
	ib_free_send_mad(buf);
	if (atomic_dec_and_test(&b->live))
		complete(&b->all_back);
}

/* Give @buf the next TID of the requester and post it. */
static int mad_bench_post_get(struct mad_bench *b, struct ib_mad_send_buf *buf)
{
	struct ib_mad_hdr *hdr = buf->mad;

	hdr->tid = cpu_to_be64(((u64)b->req->hi_tid << 32) |
			       (u32)atomic_inc_return(&b->next_tid));
	if (!buf->context[0])
		buf->retries = retries;
	return ib_post_send_mad(buf, NULL);
}

static struct ib_mad_send_buf *mad_bench_new_get(struct mad_bench *b, u32 qpn,
						 int timeout_ms)
{
	struct ib_mad_send_buf *buf;
	struct ib_vendor_mad *mad;

	buf = ib_create_send_mad(b->req, qpn, 0, 0, IB_MGMT_VENDOR_HDR,
				 IB_MGMT_MAD_SIZE - IB_MGMT_VENDOR_HDR,
				 GFP_KERNEL, IB_MGMT_BASE_VERSION);
	if (IS_ERR(buf))
		return buf;
	mad = buf->mad;
	mad->mad_hdr.base_version = IB_MGMT_BASE_VERSION;
	mad->mad_hdr.method = IB_MGMT_METHOD_GET;
	if (overload) {
		mad->mad_hdr.mgmt_class = IB_MGMT_CLASS_SUBN_ADM;
		mad->mad_hdr.class_version = IB_SA_CLASS_VERSION;
		mad->mad_hdr.attr_id = BENCH_SA_ATTR;
	} else {
		mad->mad_hdr.mgmt_class = BENCH_CLASS;
		mad->mad_hdr.class_version = 1;
		mad->mad_hdr.attr_id = BENCH_ATTR;
		memcpy(mad->oui, bench_oui, sizeof(bench_oui));
	}
	buf->ah = b->ah;
	/* context[0] marks a background GET, which is never reposted. */
	buf->context[0] = qpn == BENCH_NO_QPN ? b : NULL;
	buf->timeout_ms = timeout_ms;
	buf->retries = 0;
	return buf;
}

/* A GET of the requester completed: count it, then post it again. */
static void mad_bench_req_send(struct ib_mad_agent *agent,
			       struct ib_mad_send_wc *wc)
{
	struct mad_bench *b = agent->context;
	ktime_t now = ktime_get();

	if (expire && wc->send_buf->context[0]) {
		if (wc->status == IB_WC_RESP_TIMEOUT_ERR)
			atomic_long_inc(&b->timed_out);
		else
			atomic_long_inc(&b->expire_other);
		if (atomic_dec_and_test(&b->expire_left))
			complete(&b->expire_done);
		return;
	}
	if (!wc->send_buf->context[0])
		complete(&b->first_back);
	if (ktime_after(now, READ_ONCE(b->start)) &&
	    ktime_before(now, READ_ONCE(b->end))) {
		if (wc->status == IB_WC_SUCCESS)
			atomic_long_inc(&b->answered);
		else
			atomic_long_inc(&b->timeouts);
		atomic_long_add(wc->send_buf->retries, &b->retries_sent);
	}
	if (READ_ONCE(b->stop) || wc->send_buf->context[0]) {
		mad_bench_put_buf(b, wc->send_buf);
		return;
	}
	if (mad_bench_post_get(b, wc->send_buf)) {
		atomic_long_inc(&b->errors);
		mad_bench_put_buf(b, wc->send_buf);
	}
}

static void mad_bench_req_recv(struct ib_mad_agent *agent,
			       struct ib_mad_send_buf *send_buf,
			       struct ib_mad_recv_wc *recv_wc)
{
	ib_free_recv_mad(recv_wc);
}

/* Answer a GET with a GET_RESP carrying its bytes, and free it. */
static void mad_bench_answer(struct mad_bench *b,
			     struct ib_mad_recv_wc *recv_wc)
{
	struct ib_mad_agent *agent = b->resp;
	struct ib_mad_send_buf *rsp;

	rsp = ib_create_send_mad(agent, recv_wc->wc->src_qp,
				 recv_wc->wc->pkey_index, 0, IB_MGMT_VENDOR_HDR,
				 IB_MGMT_MAD_SIZE - IB_MGMT_VENDOR_HDR,
				 GFP_KERNEL, IB_MGMT_BASE_VERSION);
	if (IS_ERR(rsp)) {
		atomic_long_inc(&b->errors);
		goto out;
	}
	memcpy(rsp->mad, recv_wc->recv_buf.mad, IB_MGMT_MAD_SIZE);
	((struct ib_mad_hdr *)rsp->mad)->method = IB_MGMT_METHOD_GET_RESP;
	rsp->ah = b->resp_ah;
	if (ib_post_send_mad(rsp, NULL)) {
		atomic_long_inc(&b->errors);
		ib_free_send_mad(rsp);
	}
out:
	ib_free_recv_mad(recv_wc);
}

/*
 * The responder's GETs: answered at once, or in overload mode queued for
 * mad_bench_tick() (and dropped when the queue is full or the run over).
 */
static void mad_bench_resp_recv(struct ib_mad_agent *agent,
				struct ib_mad_send_buf *send_buf,
				struct ib_mad_recv_wc *recv_wc)
{
	struct mad_bench *b = agent->context;
	struct mad_bench_req *req, *old;
	bool queued = false;

	if (recv_wc->recv_buf.mad->mad_hdr.method != IB_MGMT_METHOD_GET) {
		ib_free_recv_mad(recv_wc);
		return;
	}
	if (!overload) {
		mad_bench_answer(b, recv_wc);
		return;
	}
	req = kmalloc(sizeof(*req), GFP_KERNEL);
	if (!req) {
		ib_free_recv_mad(recv_wc);
		return;
	}
	req->recv_wc = recv_wc;
	spin_lock_bh(&b->lock);
	list_for_each_entry(old, &b->queue, node) {
		if (old->recv_wc->recv_buf.mad->mad_hdr.tid ==
		    recv_wc->recv_buf.mad->mad_hdr.tid) {
			b->copies++;
			break;
		}
	}
	if (!b->stop && b->queued < BENCH_QUEUE_MAX) {
		list_add_tail(&req->node, &b->queue);
		b->queued++;
		b->queued_max = max(b->queued_max, b->queued);
		queued = true;
	}
	spin_unlock_bh(&b->lock);
	if (!queued) {
		kfree(req);
		ib_free_recv_mad(recv_wc);
	}
}

/* Take the oldest queued request, or NULL. */
static struct ib_mad_recv_wc *mad_bench_dequeue(struct mad_bench *b)
{
	struct ib_mad_recv_wc *recv_wc = NULL;
	struct mad_bench_req *req;

	spin_lock_bh(&b->lock);
	req = list_first_entry_or_null(&b->queue, struct mad_bench_req, node);
	if (req) {
		list_del(&req->node);
		b->queued--;
	}
	spin_unlock_bh(&b->lock);
	if (req) {
		recv_wc = req->recv_wc;
		kfree(req);
	}
	return recv_wc;
}

/* Every BENCH_TICK_MS: answer what @overload per second allows. */
static void mad_bench_tick(struct work_struct *work)
{
	struct mad_bench *b = container_of(work, struct mad_bench, tick.work);
	struct ib_mad_recv_wc *recv_wc;

	b->budget += overload * BENCH_TICK_MS;
	while (b->budget >= MSEC_PER_SEC) {
		recv_wc = mad_bench_dequeue(b);
		if (!recv_wc) {
			b->budget = 0;	/* idle time is not saved up */
			break;
		}
		b->budget -= MSEC_PER_SEC;
		mad_bench_answer(b, recv_wc);
	}
	if (!READ_ONCE(b->stop))
		schedule_delayed_work(&b->tick, msecs_to_jiffies(BENCH_TICK_MS));
}

static void mad_bench_resp_send(struct ib_mad_agent *agent,
				struct ib_mad_send_wc *wc)
{
	ib_free_send_mad(wc->send_buf);
}

/* An address handle on @agent's port 1 for port 1 of @to, by its LID. */
static struct ib_ah *mad_bench_lid_ah(struct ib_mad_agent *agent,
				      struct ib_device *to)
{
	struct rdma_ah_attr attr = {};
	struct ib_port_attr pattr;
	int ret;

	ret = ib_query_port(to, 1, &pattr);
	if (ret)
		return ERR_PTR(ret);
	if (!pattr.lid || pattr.state != IB_PORT_ACTIVE)
		return ERR_PTR(-ENETUNREACH);
	attr.type = rdma_ah_find_type(agent->device, 1);
	rdma_ah_set_port_num(&attr, 1);
	rdma_ah_set_dlid(&attr, pattr.lid);
	return rdma_create_ah(agent->qp->pd, &attr, RDMA_CREATE_AH_SLEEPABLE);
}

/*
 * An address handle for our own port: on RoCE by GID 0, with our own MAC
 * as destination (a kernel AH's MAC is the caller's to fill in); on IB by
 * LID.
 */
static struct ib_ah *mad_bench_self_ah(struct mad_bench *b)
{
	const struct ib_gid_attr *sgid;
	struct rdma_ah_attr attr = {};
	struct ib_port_attr pattr;
	union ib_gid gid;
	int ret;

	attr.type = rdma_ah_find_type(b->dev, 1);
	rdma_ah_set_port_num(&attr, 1);
	if (rdma_protocol_roce(b->dev, 1)) {
		sgid = rdma_get_gid_attr(b->dev, 1, 0);
		if (IS_ERR(sgid))
			return ERR_CAST(sgid);
		gid = sgid->gid;
		rdma_ah_set_grh(&attr, &gid, 0, 0, 64, 0);
		ret = rdma_read_gid_l2_fields(sgid, NULL, attr.roce.dmac);
		rdma_put_gid_attr(sgid);
		if (ret)
			return ERR_PTR(ret);
	} else {
		ret = ib_query_port(b->dev, 1, &pattr);
		if (ret)
			return ERR_PTR(ret);
		rdma_ah_set_dlid(&attr, pattr.lid);
	}
	return rdma_create_ah(b->req->qp->pd, &attr, RDMA_CREATE_AH_SLEEPABLE);
}

static int mad_bench_agents(struct mad_bench *b)
{
	struct ib_mad_reg_req reg = {
		.mgmt_class = overload ? IB_MGMT_CLASS_SUBN_ADM : BENCH_CLASS,
		.mgmt_class_version = overload ? IB_SA_CLASS_VERSION : 1,
	};

	if (!overload)
		memcpy(reg.oui, bench_oui, sizeof(bench_oui));
	set_bit(IB_MGMT_METHOD_GET, reg.method_mask);
	b->resp = ib_register_mad_agent(b->peer_dev, 1, IB_QPT_GSI, &reg, 0,
					mad_bench_resp_send,
					mad_bench_resp_recv, b, 0);
	if (IS_ERR(b->resp))
		return PTR_ERR(b->resp);
	b->req = ib_register_mad_agent(b->dev, 1, IB_QPT_GSI, NULL, 0,
				       mad_bench_req_send, mad_bench_req_recv,
				       b, 0);
	if (IS_ERR(b->req)) {
		ib_unregister_mad_agent(b->resp);
		return PTR_ERR(b->req);
	}
	return 0;
}

/* Post @n GETs to @qpn with @timeout_ms; each counts in @live once posted. */
static int mad_bench_post_many(struct mad_bench *b, unsigned int n, u32 qpn,
			       int timeout_ms)
{
	struct ib_mad_send_buf *buf;
	unsigned int i;
	int ret;

	for (i = 0; i < n; i++) {
		buf = mad_bench_new_get(b, qpn, timeout_ms);
		if (IS_ERR(buf))
			return PTR_ERR(buf);
		atomic_inc(&b->live);
		ret = mad_bench_post_get(b, buf);
		if (ret) {
			mad_bench_put_buf(b, buf);
			return ret;
		}
		cond_resched();
	}
	return 0;
}

static void mad_bench_report(struct mad_bench *b)
{
	long answered = atomic_long_read(&b->answered);
	u64 ns = (u64)seconds * NSEC_PER_SEC;

	if (overload) {
		pr_info("mad_bench_kmod overload=%u window=%u timeout_ms=%u retries=%u seconds=%u answered=%ld timeouts=%ld retries_sent=%ld queued_max=%u goodput=%ld copies=%lu\n",
			overload, window, timeout_ms, retries, seconds,
			answered, atomic_long_read(&b->timeouts),
			atomic_long_read(&b->retries_sent), b->queued_max,
			answered / seconds, b->copies);
		return;
	}

	pr_info("mad_bench_kmod window=%u background=%u seconds=%u answered=%ld timeouts=%ld errors=%ld rate=%llu ns_per_exchange=%llu\n",
		window, background, seconds, answered,
		atomic_long_read(&b->timeouts), atomic_long_read(&b->errors),
		answered ? div64_u64((u64)answered * NSEC_PER_SEC, ns) : 0,
		answered ? div64_u64(ns, answered) : 0);
}

/* The run is over: free what the responder never answered. */
static void mad_bench_drop_queue(struct mad_bench *b)
{
	struct ib_mad_recv_wc *recv_wc;

	while ((recv_wc = mad_bench_dequeue(b)))
		ib_free_recv_mad(recv_wc);
}

/* Cancel expire mode's GETs that are still out; the others refuse it. */
static void mad_bench_cancel_expiring(struct mad_bench *b)
{
	unsigned int i;

	for (i = 0; i < expire && b->expiring[i]; i++)
		ib_cancel_mad(b->expiring[i]);
}

/*
 * Post expire mode's GETs to nobody, then the window to the responder,
 * and wait until the responder answers: every GET to nobody went out.
 */
static int mad_bench_expire_post(struct mad_bench *b)
{
	unsigned int i;
	int ret;

	for (i = 0; i < expire; i++) {
		b->expiring[i] = mad_bench_new_get(b, BENCH_NO_QPN,
						   10 * 60 * MSEC_PER_SEC);
		if (IS_ERR(b->expiring[i])) {
			ret = PTR_ERR(b->expiring[i]);
			b->expiring[i] = NULL;
			return ret;
		}
		atomic_inc(&b->expire_left);
		ret = mad_bench_post_get(b, b->expiring[i]);
		if (ret) {
			atomic_dec(&b->expire_left);
			return ret;
		}
		cond_resched();
	}
	/* Posted after them, answered only once they all went out. */
	ret = mad_bench_post_many(b, window, 1, timeout_ms);
	if (ret)
		return ret;
	if (!wait_for_completion_timeout(&b->first_back, 300 * HZ))
		return -ETIMEDOUT;
	return 0;
}

/*
 * Expire mode: @expire GETs to nobody, all shortened to 1 ms together
 * when they wait for their responses, while the window keeps the
 * responder busy.  Returns 0 once every one came back timed out; in
 * every case, every handler of those GETs has run when it returns.
 */
static int mad_bench_expire(struct mad_bench *b)
{
	ktime_t t0 = 0, t1 = 0, t2;
	unsigned int i;
	int ret;

	b->expiring = kvcalloc(expire, sizeof(*b->expiring), GFP_KERNEL);
	if (!b->expiring)
		return -ENOMEM;
	atomic_set(&b->expire_left, 1);	/* the run's own */
	ret = mad_bench_expire_post(b);
	if (!ret) {
		msleep(BENCH_WARMUP_MS);
		t0 = ktime_get();
		WRITE_ONCE(b->end, KTIME_MAX);
		WRITE_ONCE(b->start, t0);
		/* One that already came back (it should not) refuses it. */
		for (i = 0; i < expire; i++)
			if (ib_modify_mad(b->expiring[i], 1))
				atomic_long_inc(&b->errors);
		t1 = ktime_get();
	} else {
		mad_bench_cancel_expiring(b);
	}
	if (atomic_dec_and_test(&b->expire_left))
		complete(&b->expire_done);
	if (!wait_for_completion_timeout(&b->expire_done, 600 * HZ)) {
		mad_bench_cancel_expiring(b);
		wait_for_completion(&b->expire_done);
		ret = ret ?: -ETIMEDOUT;
	}
	if (ret)
		return ret;
	t2 = ktime_get();
	WRITE_ONCE(b->end, t2);
	pr_info("mad_bench_kmod expire=%u timed_out=%ld other=%ld answered_meanwhile=%ld errors=%ld modify_ms=%lld expire_ms=%lld\n",
		expire, atomic_long_read(&b->timed_out),
		atomic_long_read(&b->expire_other),
		atomic_long_read(&b->answered), atomic_long_read(&b->errors),
		ktime_ms_delta(t1, t0), ktime_ms_delta(t2, t0));
	if (atomic_long_read(&b->timed_out) != expire ||
	    !atomic_long_read(&b->answered) ||
	    atomic_long_read(&b->timeouts) || atomic_long_read(&b->errors))
		return -EIO;
	return 0;
}

/*
 * Free expire mode's GETs.  Their handlers have all run, and the agent
 * waits at unregistration for every buffer of its own, so this comes
 * before that.
 */
static void mad_bench_free_expiring(struct mad_bench *b)
{
	unsigned int i;

	if (!b->expiring)
		return;
	for (i = 0; i < expire && b->expiring[i]; i++) {
		ib_free_send_mad(b->expiring[i]);
		cond_resched();
	}
	kvfree(b->expiring);
	b->expiring = NULL;
}

static int mad_bench_run(struct mad_bench *b)
{
	int bg_timeout = (BENCH_WARMUP_MS + seconds * MSEC_PER_SEC) * 2 +
			 5 * 60 * MSEC_PER_SEC;
	ktime_t start;
	int ret;

	ret = mad_bench_post_many(b, background, BENCH_NO_QPN, bg_timeout);
	if (ret)
		return ret;
	if (overload)
		schedule_delayed_work(&b->tick, msecs_to_jiffies(BENCH_TICK_MS));
	ret = mad_bench_post_many(b, window, 1, timeout_ms);
	if (ret)
		return ret;
	if (!wait_for_completion_timeout(&b->first_back, 120 * HZ))
		return -ETIMEDOUT;
	start = ktime_add_ms(ktime_get(), BENCH_WARMUP_MS);
	WRITE_ONCE(b->start, start);
	WRITE_ONCE(b->end, ktime_add_ms(start, seconds * MSEC_PER_SEC));
	msleep(BENCH_WARMUP_MS + seconds * MSEC_PER_SEC);
	return 0;
}

static int __init mad_bench_init(void)
{
	struct mad_bench *b;
	int ret;

	if (!window || !seconds || !timeout_ms || (expire && overload))
		return -EINVAL;
	b = kzalloc(sizeof(*b), GFP_KERNEL);
	if (!b)
		return -ENOMEM;
	init_completion(&b->all_back);
	init_completion(&b->first_back);
	init_completion(&b->expire_done);
	spin_lock_init(&b->lock);
	INIT_LIST_HEAD(&b->queue);
	INIT_DELAYED_WORK(&b->tick, mad_bench_tick);
	atomic_set(&b->live, 1);	/* the run's own, dropped at the end */
	b->dev = ib_device_get_by_name(bench_dev, RDMA_DRIVER_UNKNOWN);
	if (!b->dev) {
		ret = -ENODEV;
		goto free;
	}
	b->peer_dev = b->dev;
	if (*bench_peer) {
		b->peer_dev = ib_device_get_by_name(bench_peer,
						    RDMA_DRIVER_UNKNOWN);
		if (!b->peer_dev) {
			ret = -ENODEV;
			goto put_dev;
		}
		if (b->peer_dev == b->dev || !rdma_protocol_ib(b->dev, 1) ||
		    !rdma_protocol_ib(b->peer_dev, 1)) {
			ret = -EINVAL;
			goto put_peer;
		}
	}
	ret = mad_bench_agents(b);
	if (ret)
		goto put_peer;
	if (b->peer_dev == b->dev) {
		b->ah = mad_bench_self_ah(b);
		b->resp_ah = b->ah;
	} else {
		b->ah = mad_bench_lid_ah(b->req, b->peer_dev);
		if (!IS_ERR(b->ah)) {
			b->resp_ah = mad_bench_lid_ah(b->resp, b->dev);
			if (IS_ERR(b->resp_ah)) {
				rdma_destroy_ah(b->ah, RDMA_DESTROY_AH_SLEEPABLE);
				b->ah = b->resp_ah;
			}
		}
	}
	if (IS_ERR(b->ah)) {
		ret = PTR_ERR(b->ah);
		goto unregister;
	}

	ret = expire ? mad_bench_expire(b) : mad_bench_run(b);
	spin_lock_bh(&b->lock);
	WRITE_ONCE(b->stop, true);
	spin_unlock_bh(&b->lock);
	cancel_delayed_work_sync(&b->tick);
	mad_bench_free_expiring(b);
	/* Unregistering cancels the background GETs and waits for handlers. */
	ib_unregister_mad_agent(b->req);
	if (atomic_dec_and_test(&b->live))
		complete(&b->all_back);
	wait_for_completion(&b->all_back);
	mad_bench_drop_queue(b);
	ib_unregister_mad_agent(b->resp);
	if (b->resp_ah != b->ah)
		rdma_destroy_ah(b->resp_ah, RDMA_DESTROY_AH_SLEEPABLE);
	rdma_destroy_ah(b->ah, RDMA_DESTROY_AH_SLEEPABLE);
	if (b->peer_dev != b->dev)
		ib_device_put(b->peer_dev);
	ib_device_put(b->dev);
	if (!expire)
		mad_bench_report(b);
	if (!ret && !overload && !expire &&
	    (!atomic_long_read(&b->answered) ||
	     atomic_long_read(&b->timeouts) || atomic_long_read(&b->errors)))
		ret = -EIO;
	kfree(b);
	return ret;

unregister:
	ib_unregister_mad_agent(b->req);
	ib_unregister_mad_agent(b->resp);
put_peer:
	if (b->peer_dev != b->dev)
		ib_device_put(b->peer_dev);
put_dev:
	ib_device_put(b->dev);
free:
	kfree(b);
	return ret;
}

static void __exit mad_bench_exit(void)
{
}

module_init(mad_bench_init);
module_exit(mad_bench_exit);

MODULE_DESCRIPTION("MAD layer benchmark: GET/GET_RESP between two agents");
MODULE_LICENSE("GPL");
