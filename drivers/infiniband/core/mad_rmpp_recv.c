// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * RMPP receiver: reassembles DATA segments (handed over by mad_rmpp.c)
 * into one message.
 *
 * A reassembly (struct mad_rmpp_recv) is keyed by TID, source QP, source
 * LID or GID, class, class version and method.  Its first segment's
 * ib_mad_recv_wc becomes the message: later segments are linked on its
 * rmpp_list in segment order, and the whole list is handed to the core
 * when the segment flagged Last joins the gap-free run.  The reassembly
 * then stays in the agent's hash for a few ACK waits, so that a sender
 * that missed our final ACK and repeats its last segment is answered
 * again, and so that the window granted for the response of a
 * double-sided transfer can be found.
 *
 * Bounds: a transfer may be silent for MAD_RMPP_PEER_TRIES ACK waits
 * between two steps of progress and take MAD_RMPP_TOTAL_MAX_MS in all.  An
 * agent collects at most MAD_RMPP_MAX_RECVS transfers at once, of which
 * one source (a LID, or a GID with a GRH) has MAD_RMPP_SRC_MAX_RECVS at
 * most; when they are all taken, a transfer silent for MAD_RMPP_STALL_MS
 * makes room for a new one.  The memory the segments pin is bounded per
 * agent (mad_rmpp_agent_max_bytes) and per source (a
 * 1/MAD_RMPP_SRC_SHARE share of it); an agent at its bound makes room for
 * a segment within its source's share by stopping the largest transfer of
 * the source that holds most.  An agent remembers MAD_RMPP_MAX_DONE
 * finished transfers at most.  So no source can lock others out, and the
 * memory of an agent is bounded whatever the sources do.  Reassemblies
 * are found in the agent's hash by a keyed hash of TID and source, which a
 * peer cannot aim at one bucket.
 *
 * Lifetime: a reassembly is referenced by the agent's hash while it is in
 * it, by its delayed work while that is queued, and by whoever is working
 * on it.  It holds a reference to the agent, so the agent outlives its
 * delayed work.  Whoever takes it out of the hash (its timer, a protocol
 * error, or unregistration) marks it GONE under the agent lock and drops
 * the hash's reference.
 */
#include <linux/random.h>
#include <linux/slab.h>
#include <kunit/visibility.h>
#include <rdma/ib_verbs.h>

#include "mad_rmpp.h"

#include <trace/events/ib_mad.h>

/*
 * MAD_RMPP_TOTAL_MAX_MS, as a variable only so that KUnit can shorten it:
 * five minutes cannot be waited for in a test.
 */
VISIBLE_IF_KUNIT unsigned int mad_rmpp_total_max_ms = MAD_RMPP_TOTAL_MAX_MS;
EXPORT_SYMBOL_IF_KUNIT(mad_rmpp_total_max_ms);

/*
 * The silence a collecting transfer is allowed, when not 0; 0 (always,
 * outside KUnit) derives it from the sender's response time.
 */
VISIBLE_IF_KUNIT unsigned int mad_rmpp_recv_wait_ms;
EXPORT_SYMBOL_IF_KUNIT(mad_rmpp_recv_wait_ms);

/*
 * MAD_RMPP_AGENT_MAX_BYTES, as a variable only so that KUnit can shrink
 * it: a test cannot send an agent's worth of segments.
 */
VISIBLE_IF_KUNIT size_t mad_rmpp_agent_max_bytes = MAD_RMPP_AGENT_MAX_BYTES;
EXPORT_SYMBOL_IF_KUNIT(mad_rmpp_agent_max_bytes);

enum mad_rmpp_recv_state {
	MAD_RMPP_RECV_ACTIVE,		/* collecting segments */
	MAD_RMPP_RECV_COMPLETE,		/* delivered, remembered for repeats */
	MAD_RMPP_RECV_GONE,		/* out of the hash, waiting to be freed */
};

/**
 * struct mad_rmpp_key - what identifies one transfer
 * @tid: transaction ID
 * @sgid: source GID, zero when the MAD came without a GRH
 * @src_qp: source QP
 * @slid: source LID
 * @mgmt_class: management class
 * @class_version: class version
 * @method: method
 */
struct mad_rmpp_key {
	__be64 tid;
	union ib_gid sgid;
	u32 src_qp;
	u32 slid;
	u8 mgmt_class;
	u8 class_version;
	u8 method;
};

/**
 * struct mad_rmpp_src - what one source's collecting transfers hold
 * @node: link in ib_mad_agent_private.rmpp_srcs
 * @id: the source (mad_rmpp_src_id())
 * @recvs: its collecting reassemblies
 * @segs: segments they hold
 * @bytes: memory those segments pin (mad_rmpp_seg_bytes() each)
 *
 * Exists while @recvs is not 0; under the agent lock.
 */
struct mad_rmpp_src {
	struct hlist_node node;
	u64 id;
	unsigned int recvs;
	unsigned int segs;
	size_t bytes;
};

/**
 * struct mad_rmpp_recv - one reassembly
 * @node: link in ib_mad_agent_private.rmpp_hash (agent lock)
 * @lru: link in the agent's rmpp_active while ACTIVE, rmpp_done while
 *	COMPLETE (agent lock)
 * @src: its source's accounting while ACTIVE, else NULL (agent lock)
 * @bucket: its key in the agent's hash (mad_rmpp_bucket())
 * @nsegs: segments it holds while ACTIVE (agent lock)
 * @seg_bytes: memory each of its segments pins (mad_rmpp_seg_bytes())
 * @progress_at: jiffies of its last segment kept (agent lock)
 * @priv: the agent, referenced
 * @ref: see "Lifetime" above
 * @work: stall timer while ACTIVE, forget timer while COMPLETE; it may
 *	fire before @expires, and then waits again for the rest
 * @state: enum mad_rmpp_recv_state (agent lock)
 * @win: receive window (agent lock)
 * @rmpp_wc: first segment, heading the segment list; NULL once delivered
 *	or discarded (agent lock)
 * @run_end: last segment of the gap-free run from segment 1 (agent lock)
 * @repwin: window the requester granted for our response (agent lock)
 * @key: identity of the transfer
 * @tmpl: headers and address for our ACKs
 * @ah: address handle back to the sender, for ACKs and for repeats of
 *	the last segment while the transfer is remembered
 * @mad_size: size of one segment on the wire
 * @hdr_len: class data offset
 * @first_paylen: payload length announced by segment 1
 * @max_segs: most segments we accept
 * @wait_ms: silence tolerated between two steps of progress
 * @linger_ms: how long a finished transfer is remembered
 * @deadline: jiffies by which the whole transfer must be done
 * @expires: jiffies at which the timer's time is really up (agent lock)
 * @timer_at: jiffies for which @work was last queued (agent lock)
 */
struct mad_rmpp_recv {
	struct hlist_node node;
	struct list_head lru;
	struct mad_rmpp_src *src;
	u64 bucket;
	unsigned int nsegs;
	size_t seg_bytes;
	unsigned long progress_at;
	struct ib_mad_agent_private *priv;
	refcount_t ref;
	struct delayed_work work;
	enum mad_rmpp_recv_state state;
	struct mad_rmpp_recv_win win;
	struct ib_mad_recv_wc *rmpp_wc;
	struct ib_mad_recv_buf *run_end;
	u32 repwin;

	struct mad_rmpp_key key;
	struct mad_rmpp_tmpl tmpl;
	struct mad_rmpp_ah *ah;
	u32 mad_size;
	u32 hdr_len;
	u32 first_paylen;
	u32 max_segs;
	unsigned int wait_ms;
	unsigned int linger_ms;
	unsigned long deadline;
	unsigned long expires;
	unsigned long timer_at;
};

/**
 * struct mad_rmpp_step - what to do once the agent lock is dropped
 * @ctrl: control MAD to send to the sender; type 0 for none
 * @ah: reference to the address handle to send @ctrl on; NULL to answer
 *	the segment being processed with a one-off reply
 * @forget: a finished reassembly forgotten to make room, or NULL
 * @forget_puts: references to drop on @forget
 * @deliver: complete message for the core
 * @discard: segments to free
 * @trim: segments beyond the Last one, to free
 * @puts: references to drop on the reassembly
 */
struct mad_rmpp_step {
	struct mad_rmpp_ctrl ctrl;
	struct mad_rmpp_ah *ah;
	struct mad_rmpp_recv *forget;
	int forget_puts;
	struct ib_mad_recv_wc *deliver;
	struct ib_mad_recv_wc *discard;
	struct ib_mad_recv_wc *trim;
	int puts;
};

static struct ib_rmpp_hdr *mad_rmpp_hdr_of(const struct ib_mad_recv_buf *buf)
{
	return &((struct ib_rmpp_mad *)buf->mad)->rmpp_hdr;
}

/* Size of one segment of the transfer a received MAD belongs to. */
static u32 mad_rmpp_seg_mad_size(const struct ib_mad_recv_wc *recv_wc)
{
	if (recv_wc->recv_buf.mad->mad_hdr.base_version == OPA_MGMT_BASE_VERSION &&
	    recv_wc->mad_seg_size >= OPA_MGMT_MAD_SIZE)
		return OPA_MGMT_MAD_SIZE;
	return IB_MGMT_MAD_SIZE;
}

/**
 * mad_rmpp_recv_window() - segments granted with each receive window
 * @priv: the receiving agent
 *
 * An eighth of the receive ring, so that a window in flight never takes
 * more than a fraction of the buffers that all MADs of the port share.
 *
 * Context: Any context.
 * Return: the window, at least 1.
 */
static u32 mad_rmpp_recv_window(const struct ib_mad_agent_private *priv)
{
	return max(priv->qp_info->recv_queue.max_active / 8, 1);
}

static void mad_rmpp_key_init(const struct ib_mad_agent_private *priv,
			      const struct ib_mad_recv_wc *recv_wc,
			      struct mad_rmpp_key *key)
{
	const struct ib_mad_hdr *hdr = &recv_wc->recv_buf.mad->mad_hdr;
	union ib_gid dgid;

	key->tid = hdr->tid;
	key->src_qp = recv_wc->wc->src_qp;
	key->slid = recv_wc->wc->slid;
	key->mgmt_class = hdr->mgmt_class;
	key->class_version = hdr->class_version;
	key->method = hdr->method;
	/* Without a GRH the source is the LID and QP alone. */
	if (ib_mad_recv_gids(priv, recv_wc, &key->sgid, &dgid))
		memset(&key->sgid, 0, sizeof(key->sgid));
}

static bool mad_rmpp_key_equal(const struct mad_rmpp_key *a,
			       const struct mad_rmpp_key *b)
{
	return a->tid == b->tid && a->src_qp == b->src_qp &&
	       a->slid == b->slid && a->mgmt_class == b->mgmt_class &&
	       a->class_version == b->class_version &&
	       a->method == b->method &&
	       !memcmp(&a->sgid, &b->sgid, sizeof(a->sgid));
}

/**
 * ib_mad_rmpp_recv_init() - set up the RMPP receive state of a new agent
 * @priv: the agent, not yet published
 *
 * Context: process context.
 */
void ib_mad_rmpp_recv_init(struct ib_mad_agent_private *priv)
{
	hash_init(priv->rmpp_hash);
	hash_init(priv->rmpp_srcs);
	INIT_LIST_HEAD(&priv->rmpp_active);
	INIT_LIST_HEAD(&priv->rmpp_done);
	get_random_bytes(&priv->rmpp_hash_key, sizeof(priv->rmpp_hash_key));
}

/* The source of a transfer: its GID when it came with a GRH, else its LID. */
static u64 mad_rmpp_src_id(const struct ib_mad_agent_private *priv,
			   const union ib_gid *sgid, u32 slid)
{
	static const union ib_gid zero;

	if (!memcmp(sgid, &zero, sizeof(zero)))
		return slid;
	return siphash(sgid->raw, sizeof(sgid->raw), &priv->rmpp_hash_key) |
	       BIT_ULL(63);
}

/* Where a transfer lives in the agent's hash. */
static u64 mad_rmpp_bucket(const struct ib_mad_agent_private *priv,
			   const struct mad_rmpp_key *key)
{
	return siphash_2u64((__force u64)key->tid,
			    mad_rmpp_src_id(priv, &key->sgid, key->slid),
			    &priv->rmpp_hash_key);
}

static struct mad_rmpp_recv *
mad_rmpp_recv_find_locked(struct ib_mad_agent_private *priv,
			  const struct mad_rmpp_key *key)
{
	struct mad_rmpp_recv *r;

	lockdep_assert_held(&priv->lock);

	hash_for_each_possible(priv->rmpp_hash, r, node,
			       mad_rmpp_bucket(priv, key))
		if (mad_rmpp_key_equal(&r->key, key))
			return r;
	return NULL;
}

/*
 * The accounting of source @id, created from *@spare if it has none; NULL
 * when it has none and there is no spare.
 */
static struct mad_rmpp_src *
mad_rmpp_src_get_locked(struct ib_mad_agent_private *priv, u64 id,
			struct mad_rmpp_src **spare)
{
	struct mad_rmpp_src *src;

	hash_for_each_possible(priv->rmpp_srcs, src, node, id)
		if (src->id == id)
			return src;
	src = *spare;
	if (!src)
		return NULL;
	*spare = NULL;
	src->id = id;
	src->recvs = 0;
	src->segs = 0;
	src->bytes = 0;
	hash_add(priv->rmpp_srcs, &src->node, id);
	return src;
}

static void mad_rmpp_src_put_locked(struct mad_rmpp_src *src)
{
	if (src->recvs)
		return;
	hash_del(&src->node);
	kfree(src);
}

/* Whether @src may hold one more segment of @bytes within its share. */
static bool mad_rmpp_src_room(const struct mad_rmpp_src *src, size_t bytes)
{
	return src->bytes + bytes <=
	       mad_rmpp_agent_max_bytes / MAD_RMPP_SRC_SHARE;
}

/* Whether the agent may hold one more segment of @bytes. */
static bool mad_rmpp_agent_room(const struct ib_mad_agent_private *priv,
				size_t bytes)
{
	return priv->rmpp_bytes + bytes <= mad_rmpp_agent_max_bytes;
}

/* A collecting reassembly kept one more segment. */
static void mad_rmpp_recv_count_seg_locked(struct mad_rmpp_recv *r)
{
	struct ib_mad_port_private *port = ib_mad_agent_port(r->priv);

	r->nsegs++;
	r->src->segs++;
	r->src->bytes += r->seg_bytes;
	r->priv->rmpp_segs++;
	r->priv->rmpp_bytes += r->seg_bytes;
	r->progress_at = jiffies;
	list_move_tail(&r->lru, &r->priv->rmpp_active);
	ib_mad_stat_inc(port, IB_MAD_STAT_RMPP_SEGS);
	ib_mad_stat_peak(port, IB_MAD_STAT_RMPP_SEGS_PEAK, r->priv->rmpp_segs);
	ib_mad_stat_peak(port, IB_MAD_STAT_RMPP_SRC_SEGS_PEAK, r->src->segs);
}

static void mad_rmpp_free_segs(struct ib_mad_recv_wc *recv_wc)
{
	if (recv_wc)
		ib_free_recv_mad(recv_wc);
}

static void mad_rmpp_recv_put(struct mad_rmpp_recv *r)
{
	struct ib_mad_agent_private *priv = r->priv;

	if (!refcount_dec_and_test(&r->ref))
		return;
	mad_rmpp_free_segs(r->rmpp_wc);
	if (r->ah)
		mad_rmpp_ah_put(r->ah);
	kfree(r);
	ib_mad_agent_put(priv);
}

static void mad_rmpp_recv_put_many(struct mad_rmpp_recv *r, int puts)
{
	while (puts-- > 0)
		mad_rmpp_recv_put(r);
}

/* Queue the timer for @at; a newly queued work holds a reference. */
static void mad_rmpp_recv_queue_locked(struct mad_rmpp_recv *r,
				       unsigned long at)
{
	unsigned long now = jiffies;

	lockdep_assert_held(&r->priv->lock);

	r->timer_at = at;
	if (!mod_delayed_work(ib_mad_agent_port(r->priv)->wq, &r->work,
			      time_after(at, now) ? at - now : 0))
		refcount_inc(&r->ref);
}

/**
 * mad_rmpp_recv_arm_locked() - restart a reassembly's timer
 * @r: the reassembly
 *
 * A collecting transfer gets the allowed silence, but not past its
 * deadline; a finished one its linger time.  This runs for every segment
 * that makes progress, so it only moves @r->expires when the queued timer
 * fires no later than that: the timer then finds its time not yet up and
 * waits for the rest (mad_rmpp_recv_timer()), which costs one wake-up per
 * silence allowed instead of a timer reprogrammed per segment.
 *
 * Context: Agent lock held.
 */
static void mad_rmpp_recv_arm_locked(struct mad_rmpp_recv *r)
{
	unsigned long now = jiffies, at;

	lockdep_assert_held(&r->priv->lock);

	if (r->state == MAD_RMPP_RECV_ACTIVE) {
		at = now + msecs_to_jiffies(r->wait_ms);
		if (time_after(at, r->deadline))
			at = time_after(r->deadline, now) ? r->deadline : now;
	} else {
		at = now + msecs_to_jiffies(r->linger_ms);
	}
	r->expires = at;
	if (delayed_work_pending(&r->work) &&
	    time_before_eq(r->timer_at, at))
		return;
	mad_rmpp_recv_queue_locked(r, at);
}

/*
 * A reassembly changes state: a collecting one gives back what it held,
 * a finished one goes on (or leaves) the list of those remembered.
 * Agent lock held.
 */
static void mad_rmpp_recv_set_state_locked(struct mad_rmpp_recv *r,
					   enum mad_rmpp_recv_state state)
{
	struct ib_mad_agent_private *priv = r->priv;

	lockdep_assert_held(&priv->lock);

	if (r->state == MAD_RMPP_RECV_ACTIVE && state != MAD_RMPP_RECV_ACTIVE) {
		priv->rmpp_recvs--;
		list_del_init(&r->lru);
		priv->rmpp_segs -= r->nsegs;
		priv->rmpp_bytes -= r->nsegs * r->seg_bytes;
		atomic64_sub(r->nsegs,
			     &ib_mad_agent_port(priv)->stats[IB_MAD_STAT_RMPP_SEGS]);
		r->src->segs -= r->nsegs;
		r->src->bytes -= r->nsegs * r->seg_bytes;
		r->src->recvs--;
		mad_rmpp_src_put_locked(r->src);
		r->src = NULL;
		r->nsegs = 0;
	} else if (r->state == MAD_RMPP_RECV_COMPLETE) {
		list_del_init(&r->lru);
		priv->rmpp_done_count--;
	}
	if (state == MAD_RMPP_RECV_COMPLETE) {
		list_add_tail(&r->lru, &priv->rmpp_done);
		priv->rmpp_done_count++;
	}
	r->state = state;
}

/* Plan a control MAD; it goes out on the transfer's handle if it has one. */
static void mad_rmpp_recv_ctrl_locked(struct mad_rmpp_recv *r,
				      struct mad_rmpp_step *step, u8 type,
				      u8 status)
{
	lockdep_assert_held(&r->priv->lock);

	step->ctrl.type = type;
	step->ctrl.status = status;
	if (r->ah && !step->ah) {
		kref_get(&r->ah->ref);
		step->ah = r->ah;
	}
}

/**
 * mad_rmpp_recv_kill_locked() - end a reassembly before it completed
 * @r: the reassembly, ACTIVE or COMPLETE
 * @step: collects what is left to do after the lock is dropped
 * @type: control MAD to tell the sender with (STOP or ABORT), 0 for none
 * @status: its RMPP status
 *
 * Context: Agent lock held.
 */
static void mad_rmpp_recv_kill_locked(struct mad_rmpp_recv *r,
				      struct mad_rmpp_step *step,
				      u8 type, u8 status)
{
	lockdep_assert_held(&r->priv->lock);

	mad_rmpp_recv_set_state_locked(r, MAD_RMPP_RECV_GONE);
	hash_del(&r->node);
	step->discard = r->rmpp_wc;
	r->rmpp_wc = NULL;
	step->puts++;				/* the hash's reference */
	if (cancel_delayed_work(&r->work))
		step->puts++;			/* the queued work's */
	if (type)
		mad_rmpp_recv_ctrl_locked(r, step, type, status);
}

/*
 * Forget the finished transfer remembered longest, to make room: a repeat
 * of its last segment is no longer recognised. Its references go in
 * @step, dropped once the lock is (the last one destroys its handle).
 */
static void mad_rmpp_recv_forget_oldest_locked(struct ib_mad_agent_private *priv,
					       struct mad_rmpp_step *step)
{
	struct mad_rmpp_recv *old;

	lockdep_assert_held(&priv->lock);

	old = list_first_entry(&priv->rmpp_done, struct mad_rmpp_recv, lru);
	mad_rmpp_recv_set_state_locked(old, MAD_RMPP_RECV_GONE);
	hash_del(&old->node);
	step->forget = old;
	step->forget_puts = 1;			/* the hash's */
	if (cancel_delayed_work(&old->work))
		step->forget_puts++;		/* the queued work's */
}

/*
 * Make room for a new transfer: the collecting one that went longest
 * without progress goes, if it has been silent for MAD_RMPP_STALL_MS; its
 * sender is told STOP, "resources exhausted". What is left to do for it
 * once the lock is dropped goes in @estep.
 */
static struct mad_rmpp_recv *
mad_rmpp_recv_evict_locked(struct ib_mad_agent_private *priv,
			   struct mad_rmpp_step *estep)
{
	struct mad_rmpp_recv *old;

	lockdep_assert_held(&priv->lock);

	old = list_first_entry_or_null(&priv->rmpp_active,
				       struct mad_rmpp_recv, lru);
	if (!old || time_before(jiffies, old->progress_at +
				msecs_to_jiffies(MAD_RMPP_STALL_MS)))
		return NULL;
	mad_rmpp_recv_kill_locked(old, estep, IB_MGMT_RMPP_TYPE_STOP,
				  IB_MGMT_RMPP_STATUS_RESX);
	return old;
}

/**
 * mad_rmpp_recv_make_room_locked() - free an agent's memory for a segment
 * @priv: the agent, holding its whole budget
 * @src: the source of the segment, within its share
 * @estep: collects what is left to do for the transfer stopped
 *
 * The largest transfer of the source that holds most, if that source
 * holds more than @src, is stopped (its sender told STOP, "resources
 * exhausted") and gives its segments back: a newcomer is not refused for
 * what others hoard, and the sources that hold least keep what they have.
 * Every transfer holds at least one segment, so one is enough.
 *
 * Context: Agent lock held.
 * Return: the transfer stopped, whose @estep the caller finishes, or NULL
 * when @src holds as much as any other source.
 */
static struct mad_rmpp_recv *
mad_rmpp_recv_make_room_locked(struct ib_mad_agent_private *priv,
			       const struct mad_rmpp_src *src,
			       struct mad_rmpp_step *estep)
{
	struct mad_rmpp_recv *r, *victim = NULL;
	struct mad_rmpp_src *s, *big = NULL;
	int bkt;

	lockdep_assert_held(&priv->lock);

	hash_for_each(priv->rmpp_srcs, bkt, s, node)
		if (s != src && (!big || s->bytes > big->bytes))
			big = s;
	if (!big || big->bytes <= src->bytes)
		return NULL;
	list_for_each_entry(r, &priv->rmpp_active, lru)
		if (r->src == big && (!victim || r->nsegs > victim->nsegs))
			victim = r;
	if (WARN_ON_ONCE(!victim))
		return NULL;
	ib_mad_stat_inc(ib_mad_agent_port(priv), IB_MAD_STAT_RMPP_EVICTED);
	mad_rmpp_recv_kill_locked(victim, estep, IB_MGMT_RMPP_TYPE_STOP,
				  IB_MGMT_RMPP_STATUS_RESX);
	return victim;
}

static void mad_rmpp_recv_ack_locked(struct mad_rmpp_recv *r,
				     struct mad_rmpp_step *step)
{
	mad_rmpp_recv_ctrl_locked(r, step, IB_MGMT_RMPP_TYPE_ACK, 0);
	step->ctrl.seg_num = mad_rmpp_recv_win_ack(&r->win, &step->ctrl.newwin);
}

/*
 * Cut off any segment beyond the Last one (only a broken sender makes
 * them): they move onto the rmpp_list of the first of them, which the
 * caller frees once the lock is dropped.
 */
static void mad_rmpp_recv_trim_locked(struct mad_rmpp_recv *r,
				      struct mad_rmpp_step *step)
{
	struct list_head *segs = &r->rmpp_wc->rmpp_list;
	struct ib_mad_recv_wc *extra;
	LIST_HEAD(run);

	if (list_is_last(&r->run_end->list, segs))
		return;

	extra = container_of(list_next_entry(r->run_end, list),
			     struct ib_mad_recv_wc, recv_buf);
	list_cut_position(&run, segs, &r->run_end->list);
	INIT_LIST_HEAD(&extra->rmpp_list);
	list_splice_init(segs, &extra->rmpp_list);
	list_splice(&run, segs);
	step->trim = extra;
}

/**
 * mad_rmpp_recv_complete_locked() - the Last segment joined the run
 * @r: the reassembly
 * @step: collects the message to deliver and the final ACK
 *
 * Checks the lengths the sender announced against what arrived; a
 * mismatch aborts the transfer with "inconsistent Last and PayLen".
 *
 * Context: Agent lock held.
 */
static void mad_rmpp_recv_complete_locked(struct mad_rmpp_recv *r,
					  struct mad_rmpp_step *step)
{
	u32 last_paylen;
	u8 status = 0;
	int len;

	lockdep_assert_held(&r->priv->lock);

	last_paylen = be32_to_cpu(mad_rmpp_hdr_of(r->run_end)->paylen_newwin);
	len = mad_rmpp_recv_len(r->mad_size, r->hdr_len, r->win.seg_num,
				r->first_paylen, last_paylen, &status);
	if (len < 0) {
		mad_rmpp_recv_kill_locked(r, step, IB_MGMT_RMPP_TYPE_ABORT,
					  status ? status :
					  IB_MGMT_RMPP_STATUS_UNSPEC);
		return;
	}

	mad_rmpp_recv_trim_locked(r, step);
	r->rmpp_wc->mad_len = len;
	step->deliver = r->rmpp_wc;
	r->rmpp_wc = NULL;
	mad_rmpp_recv_set_state_locked(r, MAD_RMPP_RECV_COMPLETE);
	if (r->priv->rmpp_done_count > MAD_RMPP_MAX_DONE)
		mad_rmpp_recv_forget_oldest_locked(r->priv, step);
	ib_mad_stat_peak(ib_mad_agent_port(r->priv), IB_MAD_STAT_RMPP_DONE_PEAK,
			 r->priv->rmpp_done_count);
	/*
	 * The transfer keeps its address handle while it is remembered: a
	 * repeat of its last segment is answered on it, not on a handle made
	 * and destroyed for each repeat.
	 */
	mad_rmpp_recv_ack_locked(r, step);
	mad_rmpp_recv_arm_locked(r);
}

/**
 * mad_rmpp_recv_progress_locked() - account for a segment just kept
 * @r: the reassembly
 * @step: collects ACKs and the message to deliver
 *
 * Context: Agent lock held.
 */
static void mad_rmpp_recv_progress_locked(struct mad_rmpp_recv *r,
					  struct mad_rmpp_step *step)
{
	u32 seg_num = r->win.seg_num;
	bool last;

	lockdep_assert_held(&r->priv->lock);

	r->run_end = mad_rmpp_seg_walk(&r->rmpp_wc->rmpp_list, r->run_end,
				       &seg_num, &last);
	if (seg_num == r->win.seg_num)
		return;			/* a gap is still open */

	switch (mad_rmpp_recv_win_advance(&r->win, seg_num, last)) {
	case MAD_RMPP_RECV_DONE:
		mad_rmpp_recv_complete_locked(r, step);
		return;
	case MAD_RMPP_RECV_ACK:
		mad_rmpp_recv_ack_locked(r, step);
		break;
	case MAD_RMPP_RECV_WAIT:
		break;
	}
	mad_rmpp_recv_arm_locked(r);
}

/**
 * mad_rmpp_recv_seg_locked() - take one more segment into a reassembly
 * @r: the reassembly
 * @recv_wc: the segment, owned by the caller
 * @step: collects what is left to do after the lock is dropped
 * @evicted: set to a transfer stopped to make room for the segment, or
 *	NULL
 * @estep: collects what is left to do for *@evicted
 *
 * A segment beyond its source's share stops the transfer; one within it
 * that the agent has no room for makes room (mad_rmpp_recv_make_room_locked())
 * or, if its source holds as much as any, stops the transfer too.
 *
 * Context: Agent lock held.
 * Return: true when @recv_wc was linked into the message, false when the
 * caller must free it.
 */
static bool mad_rmpp_recv_seg_locked(struct mad_rmpp_recv *r,
				     struct ib_mad_recv_wc *recv_wc,
				     struct mad_rmpp_step *step,
				     struct mad_rmpp_recv **evicted,
				     struct mad_rmpp_step *estep)
{
	struct ib_mad_recv_buf *buf = &recv_wc->recv_buf;
	u32 seg_num = mad_rmpp_seg_num(buf);

	lockdep_assert_held(&r->priv->lock);

	if (r->state == MAD_RMPP_RECV_GONE)
		return false;
	if (r->state == MAD_RMPP_RECV_ACTIVE && seg_num > r->max_segs) {
		mad_rmpp_recv_kill_locked(r, step, IB_MGMT_RMPP_TYPE_STOP,
					  IB_MGMT_RMPP_STATUS_RESX);
		return false;
	}

	switch (mad_rmpp_recv_win_classify(&r->win, seg_num)) {
	case MAD_RMPP_SEG_REACK:
		mad_rmpp_recv_ack_locked(r, step);
		return false;
	case MAD_RMPP_SEG_DROP:
		return false;
	case MAD_RMPP_SEG_KEEP:
		break;
	}
	if (WARN_ON_ONCE(r->state != MAD_RMPP_RECV_ACTIVE))
		return false;
	if (mad_rmpp_src_room(r->src, r->seg_bytes) &&
	    !mad_rmpp_agent_room(r->priv, r->seg_bytes))
		*evicted = mad_rmpp_recv_make_room_locked(r->priv, r->src,
							  estep);
	if (!mad_rmpp_src_room(r->src, r->seg_bytes) ||
	    !mad_rmpp_agent_room(r->priv, r->seg_bytes)) {
		mad_rmpp_recv_kill_locked(r, step, IB_MGMT_RMPP_TYPE_STOP,
					  IB_MGMT_RMPP_STATUS_RESX);
		return false;
	}

	list_del_init(&buf->list);
	if (mad_rmpp_seg_insert(&r->rmpp_wc->rmpp_list, buf)) {
		list_add(&buf->list, &recv_wc->rmpp_list);
		return false;
	}
	mad_rmpp_recv_count_seg_locked(r);
	mad_rmpp_recv_progress_locked(r, step);
	return true;
}

/*
 * Send what the locked part decided, free what it discarded and drop its
 * references.  @seg is the segment being processed when the caller still
 * owns it: a transfer that gave up its address handle answers on a handle
 * made for that segment.  Returns the message to deliver, if any.
 */
static struct ib_mad_recv_wc *
mad_rmpp_recv_finish(struct mad_rmpp_recv *r, struct mad_rmpp_step *step,
		     const struct ib_mad_recv_wc *seg)
{
	struct ib_mad_recv_wc *deliver = step->deliver;

	if (step->ctrl.type && step->ah)
		mad_rmpp_ctrl_send(r->priv, step->ah, &r->tmpl, &step->ctrl);
	else if (step->ctrl.type && seg)
		mad_rmpp_ctrl_reply(r->priv, seg, &step->ctrl);
	if (step->ah)
		mad_rmpp_ah_put(step->ah);
	if (step->forget)
		mad_rmpp_recv_put_many(step->forget, step->forget_puts);
	mad_rmpp_free_segs(step->discard);
	mad_rmpp_free_segs(step->trim);
	mad_rmpp_recv_put_many(r, step->puts);
	return deliver;
}

/*
 * The unlocked part of taking a segment: mad_rmpp_recv_finish(), then the
 * segment is freed unless the reassembly @kept it.
 */
static struct ib_mad_recv_wc *
mad_rmpp_recv_seg_finish(struct mad_rmpp_recv *r,
			 struct ib_mad_recv_wc *recv_wc,
			 struct mad_rmpp_step *step, bool kept)
{
	struct ib_mad_recv_wc *done;

	if (kept)
		return mad_rmpp_recv_finish(r, step, NULL);
	done = mad_rmpp_recv_finish(r, step, recv_wc);
	ib_free_recv_mad(recv_wc);
	return done;
}

/* Continue a known reassembly; consumes @r's caller reference. */
static struct ib_mad_recv_wc *mad_rmpp_recv_more(struct mad_rmpp_recv *r,
						 struct ib_mad_recv_wc *recv_wc)
{
	struct mad_rmpp_step step = { .puts = 1 }, estep = {};
	struct ib_mad_agent_private *priv = r->priv;
	struct mad_rmpp_recv *evicted = NULL;
	unsigned long flags;
	bool kept;

	spin_lock_irqsave(&priv->lock, flags);
	kept = mad_rmpp_recv_seg_locked(r, recv_wc, &step, &evicted, &estep);
	spin_unlock_irqrestore(&priv->lock, flags);

	if (evicted)
		mad_rmpp_recv_finish(evicted, &estep, NULL);
	return mad_rmpp_recv_seg_finish(r, recv_wc, &step, kept);
}

static void mad_rmpp_recv_timer(struct work_struct *work);

/**
 * mad_rmpp_recv_create() - set up a reassembly for a first segment
 * @priv: the receiving agent
 * @recv_wc: segment 1, owned by the caller
 * @key: its key
 *
 * Context: Process context, may sleep.
 * Return: the reassembly with one reference and not yet in the hash, or
 * NULL when memory or an address handle could not be had.
 */
static struct mad_rmpp_recv *
mad_rmpp_recv_create(struct ib_mad_agent_private *priv,
		     const struct ib_mad_recv_wc *recv_wc,
		     const struct mad_rmpp_key *key)
{
	const struct ib_rmpp_mad *mad = (const void *)recv_wc->recv_buf.mad;
	struct mad_rmpp_recv *r;
	u32 expect;
	u8 rtime;

	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r)
		return NULL;
	if (mad_rmpp_tmpl_init(&r->tmpl, recv_wc))
		goto err_free;
	r->ah = mad_rmpp_ah_create(priv, recv_wc);
	if (IS_ERR(r->ah))
		goto err_free;

	r->key = *key;
	r->bucket = mad_rmpp_bucket(priv, key);
	INIT_LIST_HEAD(&r->lru);
	r->mad_size = mad_rmpp_seg_mad_size(recv_wc);
	r->seg_bytes = mad_rmpp_seg_bytes(container_of(recv_wc,
						       struct ib_mad_recv_priv,
						       recv_wc)->mad_size);
	r->hdr_len = r->tmpl.hdr_len;
	r->first_paylen = be32_to_cpu(mad->rmpp_hdr.paylen_newwin);
	r->max_segs = MAD_RMPP_MAX_MSG_BYTES / (r->mad_size - r->hdr_len);
	rtime = ib_get_rmpp_resptime((struct ib_rmpp_hdr *)&mad->rmpp_hdr);
	r->wait_ms = mad_rmpp_recv_wait_ms ?:
		     MAD_RMPP_PEER_TRIES *
		     (MAD_RMPP_ACK_WAIT_MAX_MS + mad_rmpp_peer_wait_ms(rtime));
	r->linger_ms = MAD_RMPP_LINGER_TRIES *
		       (MAD_RMPP_ACK_WAIT_MAX_MS + mad_rmpp_peer_wait_ms(rtime));
	r->deadline = jiffies + msecs_to_jiffies(mad_rmpp_total_max_ms);
	expect = mad_rmpp_expect_segs(r->mad_size, r->first_paylen);
	mad_rmpp_recv_win_init(&r->win, mad_rmpp_recv_window(priv), expect);
	r->repwin = 1;
	r->state = MAD_RMPP_RECV_ACTIVE;
	INIT_HLIST_NODE(&r->node);
	INIT_DELAYED_WORK(&r->work, mad_rmpp_recv_timer);
	refcount_set(&r->ref, 1);
	ib_mad_agent_get(priv);
	r->priv = priv;
	return r;

err_free:
	kfree(r);
	return NULL;
}

/**
 * mad_rmpp_recv_start_locked() - put a new reassembly to work
 * @r: the reassembly, not yet in the hash
 * @recv_wc: its first segment, which becomes the message
 * @step: collects the first ACK, or the whole message if it is one segment
 * @spare: accounting for a source not seen yet; taken if used
 * @estep: collects what is left to do for a transfer evicted to make room
 *
 * A source that has MAD_RMPP_SRC_MAX_RECVS transfers, or its share of the
 * agent's memory, already is answered with STOP, "resources exhausted",
 * and so is any source when the agent collects MAD_RMPP_MAX_RECVS
 * transfers and none of them is stalled, or holds its whole memory budget
 * and no source holds more than this one; nothing is kept then.
 *
 * Context: Agent lock held.
 * Return: the transfer evicted, whose @estep the caller finishes, or NULL.
 */
static struct mad_rmpp_recv *
mad_rmpp_recv_start_locked(struct mad_rmpp_recv *r,
			   struct ib_mad_recv_wc *recv_wc,
			   struct mad_rmpp_step *step,
			   struct mad_rmpp_src **spare,
			   struct mad_rmpp_step *estep)
{
	struct ib_mad_agent_private *priv = r->priv;
	struct mad_rmpp_recv *evicted = NULL;
	struct mad_rmpp_src *src = NULL;
	u32 seg_num = 1;
	bool last, fits;

	lockdep_assert_held(&priv->lock);

	r->rmpp_wc = recv_wc;
	r->run_end = &recv_wc->recv_buf;
	if (!priv->dying)
		src = mad_rmpp_src_get_locked(priv,
					      mad_rmpp_src_id(priv, &r->key.sgid,
							      r->key.slid),
					      spare);
	/* Counted at once: an eviction must not free the source's entry. */
	if (src)
		src->recvs++;
	fits = src && src->recvs <= MAD_RMPP_SRC_MAX_RECVS &&
	       mad_rmpp_src_room(src, r->seg_bytes);
	if (fits && priv->rmpp_recvs >= MAD_RMPP_MAX_RECVS)
		evicted = mad_rmpp_recv_evict_locked(priv, estep);
	else if (fits && !mad_rmpp_agent_room(priv, r->seg_bytes))
		evicted = mad_rmpp_recv_make_room_locked(priv, src, estep);
	if (!fits || priv->rmpp_recvs >= MAD_RMPP_MAX_RECVS ||
	    !mad_rmpp_agent_room(priv, r->seg_bytes)) {
		/* Unregistration has swept the hash already, or no room. */
		if (!priv->dying)
			mad_rmpp_recv_ctrl_locked(r, step,
						  IB_MGMT_RMPP_TYPE_STOP,
						  IB_MGMT_RMPP_STATUS_RESX);
		if (src) {
			src->recvs--;
			mad_rmpp_src_put_locked(src);
		}
		r->state = MAD_RMPP_RECV_GONE;
		step->discard = recv_wc;
		r->rmpp_wc = NULL;
		return evicted;
	}
	hash_add(priv->rmpp_hash, &r->node, r->bucket);
	priv->rmpp_recvs++;
	ib_mad_stat_peak(ib_mad_agent_port(priv), IB_MAD_STAT_RMPP_RECVS_PEAK,
			 priv->rmpp_recvs);
	ib_mad_stat_peak(ib_mad_agent_port(priv),
			 IB_MAD_STAT_RMPP_SRC_RECVS_PEAK, src->recvs);
	r->src = src;
	list_add_tail(&r->lru, &priv->rmpp_active);
	mad_rmpp_recv_count_seg_locked(r);
	refcount_inc(&r->ref);		/* the hash's; the caller keeps its */

	if (r->win.expect > r->max_segs) {
		mad_rmpp_recv_kill_locked(r, step, IB_MGMT_RMPP_TYPE_STOP,
					  IB_MGMT_RMPP_STATUS_RESX);
		return evicted;
	}
	r->run_end = mad_rmpp_seg_walk(&recv_wc->rmpp_list, r->run_end,
				       &seg_num, &last);
	if (mad_rmpp_recv_win_advance(&r->win, seg_num, last) ==
	    MAD_RMPP_RECV_DONE) {
		mad_rmpp_recv_complete_locked(r, step);
		return evicted;
	}
	mad_rmpp_recv_ack_locked(r, step);
	mad_rmpp_recv_arm_locked(r);
	return evicted;
}

/*
 * Segment 1: start a reassembly, or continue the one it repeats.  A known
 * reassembly, finished or not, takes the segment even when the request it
 * answers is done: the sender repeats its last window when our final ACK
 * was lost, and only the ACK it gets again ends that send.  A new
 * reassembly of a response is started only for a request that waits for
 * it; segments nobody waits for are not worth keeping.
 */
static struct ib_mad_recv_wc *mad_rmpp_recv_first(struct ib_mad_agent_private *priv,
						  struct ib_mad_recv_wc *recv_wc,
						  const struct mad_rmpp_key *key)
{
	struct mad_rmpp_step step = { .puts = 1 }, estep = {};
	struct mad_rmpp_recv *r, *old, *evicted;
	struct mad_rmpp_src *spare;
	bool unsolicited = false;
	unsigned long flags;

	spin_lock_irqsave(&priv->lock, flags);
	old = mad_rmpp_recv_find_locked(priv, key);
	if (old)
		refcount_inc(&old->ref);
	else if (ib_response_mad(&recv_wc->recv_buf.mad->mad_hdr))
		unsolicited = !ib_mad_find_send_locked(priv, recv_wc);
	spin_unlock_irqrestore(&priv->lock, flags);
	if (old)
		return mad_rmpp_recv_more(old, recv_wc);
	if (unsolicited) {
		ib_mad_stat_inc(ib_mad_agent_port(priv),
				IB_MAD_STAT_UNMATCHED_RESP);
		ib_free_recv_mad(recv_wc);
		return NULL;
	}

	r = mad_rmpp_recv_create(priv, recv_wc, key);
	/* In case its source has no accounting yet. */
	spare = kzalloc(sizeof(*spare), GFP_KERNEL);
	if (!r) {
		kfree(spare);
		ib_free_recv_mad(recv_wc);
		return NULL;
	}

	spin_lock_irqsave(&priv->lock, flags);
	old = mad_rmpp_recv_find_locked(priv, key);
	if (old) {
		/* Another copy of segment 1 got here first. */
		refcount_inc(&old->ref);
		spin_unlock_irqrestore(&priv->lock, flags);
		kfree(spare);
		mad_rmpp_recv_put(r);
		return mad_rmpp_recv_more(old, recv_wc);
	}
	evicted = mad_rmpp_recv_start_locked(r, recv_wc, &step, &spare,
					     &estep);
	spin_unlock_irqrestore(&priv->lock, flags);

	kfree(spare);
	if (evicted)
		mad_rmpp_recv_finish(evicted, &estep, NULL);
	return mad_rmpp_recv_finish(r, &step, NULL);
}

static struct ib_mad_recv_wc *mad_rmpp_recv_later(struct ib_mad_agent_private *priv,
						  struct ib_mad_recv_wc *recv_wc,
						  const struct mad_rmpp_key *key)
{
	struct mad_rmpp_step step = { .puts = 1 }, estep = {};
	struct mad_rmpp_recv *r, *evicted = NULL;
	unsigned long flags;
	bool kept;

	/* Look up and take the segment in one go: this is the hot path. */
	spin_lock_irqsave(&priv->lock, flags);
	r = mad_rmpp_recv_find_locked(priv, key);
	if (!r) {
		spin_unlock_irqrestore(&priv->lock, flags);
		/* Segment 1 never came or the transfer was given up. */
		ib_free_recv_mad(recv_wc);
		return NULL;
	}
	refcount_inc(&r->ref);		/* for the unlocked part; step.puts */
	kept = mad_rmpp_recv_seg_locked(r, recv_wc, &step, &evicted, &estep);
	spin_unlock_irqrestore(&priv->lock, flags);

	if (evicted)
		mad_rmpp_recv_finish(evicted, &estep, NULL);
	return mad_rmpp_recv_seg_finish(r, recv_wc, &step, kept);
}

/**
 * mad_rmpp_recv_data() - process a received DATA segment
 * @priv: the receiving agent
 * @recv_wc: the segment; ownership passes to this function
 *
 * Context: Process context, no MAD lock held.
 * Return: the complete message, or NULL.
 */
struct ib_mad_recv_wc *
mad_rmpp_recv_data(struct ib_mad_agent_private *priv,
		   struct ib_mad_recv_wc *recv_wc)
{
	struct ib_rmpp_hdr *hdr = mad_rmpp_hdr_of(&recv_wc->recv_buf);
	struct mad_rmpp_key key;
	u8 status;

	status = mad_rmpp_check_data(hdr);
	if (status) {
		mad_rmpp_abort_peer(priv, recv_wc, status);
		goto drop;
	}
	if (!mad_rmpp_seg_len_ok(recv_wc->mad_len,
				 mad_rmpp_seg_mad_size(recv_wc), hdr))
		goto drop;

	mad_rmpp_key_init(priv, recv_wc, &key);
	if (be32_to_cpu(hdr->seg_num) == 1)
		return mad_rmpp_recv_first(priv, recv_wc, &key);
	return mad_rmpp_recv_later(priv, recv_wc, &key);

drop:
	ib_free_recv_mad(recv_wc);
	return NULL;
}

/**
 * mad_rmpp_recv_timer() - a reassembly's time ran out
 * @work: mad_rmpp_recv.work
 *
 * An ACTIVE transfer stalled or ran out of total time: tell the sender
 * "total time too long" and drop what arrived.  A COMPLETE one need not be
 * remembered any longer.  A timer that fires before @expires (progress
 * moved it, see mad_rmpp_recv_arm_locked()) queues itself for the rest.
 *
 * Context: Process context (the port's workqueue).
 */
static void mad_rmpp_recv_timer(struct work_struct *work)
{
	struct mad_rmpp_recv *r = container_of(to_delayed_work(work),
					       struct mad_rmpp_recv, work);
	struct ib_mad_agent_private *priv = r->priv;
	struct mad_rmpp_step step = { .puts = 1 };	/* the work's own */
	unsigned long flags;

	spin_lock_irqsave(&priv->lock, flags);
	if (r->state != MAD_RMPP_RECV_GONE &&
	    time_before(jiffies, r->expires)) {
		/* Progress moved the time on; queue for the rest unless done. */
		if (!delayed_work_pending(&r->work))
			mad_rmpp_recv_queue_locked(r, r->expires);
	} else if (r->state == MAD_RMPP_RECV_ACTIVE) {
		mad_rmpp_recv_kill_locked(r, &step, IB_MGMT_RMPP_TYPE_ABORT,
					  IB_MGMT_RMPP_STATUS_T2L);
	} else if (r->state == MAD_RMPP_RECV_COMPLETE) {
		mad_rmpp_recv_kill_locked(r, &step, 0, 0);
	}
	spin_unlock_irqrestore(&priv->lock, flags);

	mad_rmpp_recv_finish(r, &step, NULL);
}

/**
 * ib_mad_rmpp_cancel_recvs() - forget every reassembly of an agent
 * @priv: the agent, already out of the dispatch tables
 *
 * Context: Process context, may sleep; no MAD lock held.
 */
void ib_mad_rmpp_cancel_recvs(struct ib_mad_agent_private *priv)
{
	struct mad_rmpp_recv *r;
	struct hlist_node *tmp;
	unsigned long flags;
	HLIST_HEAD(gone);
	int bkt;

	spin_lock_irqsave(&priv->lock, flags);
	hash_for_each_safe(priv->rmpp_hash, bkt, tmp, r, node) {
		mad_rmpp_recv_set_state_locked(r, MAD_RMPP_RECV_GONE);
		hash_del(&r->node);
		hlist_add_head(&r->node, &gone);
	}
	spin_unlock_irqrestore(&priv->lock, flags);

	hlist_for_each_entry_safe(r, tmp, &gone, node) {
		hlist_del_init(&r->node);
		if (cancel_delayed_work_sync(&r->work))
			mad_rmpp_recv_put(r);
		mad_rmpp_recv_put(r);
	}
}
EXPORT_SYMBOL_IF_KUNIT(ib_mad_rmpp_cancel_recvs);

/**
 * mad_rmpp_recv_note_ds_ack() - the requester grants a window for our response
 * @priv: the agent
 * @recv_wc: an ACK with segment number 0 that matched none of our sends
 *
 * In a double-sided transfer the requester, once its request is fully
 * acknowledged, sends an ACK for segment 0 whose window applies to the
 * response.  It carries the request's TID, source and method (the response
 * bit flipped back), so it finds the finished reassembly of the request.
 *
 * Context: Agent lock held.
 */
void mad_rmpp_recv_note_ds_ack(struct ib_mad_agent_private *priv,
			       const struct ib_mad_recv_wc *recv_wc)
{
	const struct ib_rmpp_mad *mad = (const void *)recv_wc->recv_buf.mad;
	struct mad_rmpp_key key;
	struct mad_rmpp_recv *r;

	lockdep_assert_held(&priv->lock);

	mad_rmpp_key_init(priv, recv_wc, &key);
	r = mad_rmpp_recv_find_locked(priv, &key);
	if (r && r->state == MAD_RMPP_RECV_COMPLETE)
		r->repwin = max(be32_to_cpu(mad->rmpp_hdr.paylen_newwin), 1U);
}

static bool mad_rmpp_recv_from_dest(const struct mad_rmpp_recv *r,
				    const struct rdma_ah_attr *attr)
{
	const union ib_gid zero = {};

	if (r->key.slid != rdma_ah_get_dlid(attr))
		return false;
	if (!(rdma_ah_get_ah_flags(attr) & IB_AH_GRH))
		return !memcmp(&r->key.sgid, &zero, sizeof(zero));
	return !memcmp(&r->key.sgid, &rdma_ah_read_grh(attr)->dgid,
		       sizeof(r->key.sgid));
}

/**
 * mad_rmpp_recv_peer_window() - first window for an RMPP response
 * @priv: the agent
 * @wr: the response about to be sent
 *
 * For a response, finds the finished reassembly of the request it answers
 * (same TID, class and version, a request method, coming from the
 * response's destination) and returns the window its requester granted.
 *
 * Context: Agent lock held.
 * Return: the window, 1 for a request or when nothing was granted.
 */
u32 mad_rmpp_recv_peer_window(struct ib_mad_agent_private *priv,
			      struct ib_mad_send_wr_private *wr)
{
	const struct ib_mad_hdr *hdr = wr->send_buf.mad;
	struct mad_rmpp_key key = {};
	struct rdma_ah_attr attr;
	struct mad_rmpp_recv *r;
	u32 newwin = 1;

	lockdep_assert_held(&priv->lock);

	if (!ib_response_mad(hdr) || !wr->send_buf.ah ||
	    rdma_query_ah(wr->send_buf.ah, &attr))
		return newwin;
	/* The request came from where the response goes. */
	if (rdma_ah_get_ah_flags(&attr) & IB_AH_GRH)
		key.sgid = rdma_ah_read_grh(&attr)->dgid;
	key.slid = rdma_ah_get_dlid(&attr);
	key.tid = hdr->tid;
	hash_for_each_possible(priv->rmpp_hash, r, node,
			       mad_rmpp_bucket(priv, &key)) {
		if (r->state != MAD_RMPP_RECV_COMPLETE ||
		    r->key.tid != hdr->tid ||
		    r->key.mgmt_class != hdr->mgmt_class ||
		    r->key.class_version != hdr->class_version ||
		    (r->key.method & IB_MGMT_METHOD_RESP) ||
		    !mad_rmpp_recv_from_dest(r, &attr))
			continue;
		newwin = r->repwin;
		break;
	}
	return newwin;
}
