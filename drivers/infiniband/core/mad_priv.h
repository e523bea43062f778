/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Private interface of the MAD layer in ib_core.
 *
 * The MAD layer is split by concern:
 *
 *   mad_port.c   per-port QP0/QP1, CQ, receive ring, send queue and its
 *                overflow list, workqueue, ib_client glue, ib_mad_init()
 *   mad_wire.c   what is read off the wire format: response or request,
 *                RMPP classes, data offsets, the GIDs of a received MAD
 *   mad_reg.c    agent registration: version/class/method/OUI tables
 *   mad_buf.c    send buffers: allocation, RMPP segments, what a WR carries
 *   mad_send.c   TIDs, the send state machine, timeouts, retries,
 *                modify/cancel, the per-agent TID hash
 *   mad_local.c  directed-route SMPs answered by the local SMA, unsent
 *   mad_recv.c   receive validation, dispatch, response matching
 *   mad_smi.c    directed-route SMP rules (IB and OPA), the route of an SMP
 *   mad_agent.c  the layer's own QP0/QP1 agents that send the replies a
 *                driver's process_mad() builds for local SMPs and GMPs
 *   mad_rmpp_*.c RMPP for kernel RMPP agents: wire arithmetic, control
 *                MADs, segmented sends, reassembly (map in mad_rmpp.h)
 *
 * This header is the contract between those files and, in particular, the
 * seam between the core and RMPP (see "Core <-> RMPP seam" below).
 *
 * Lock order, outermost first:
 *
 *   ib_mad_port_private.reg_lock     (registration tables; never held while
 *                                     taking any other MAD lock)
 *   ib_mad_agent_private.lock        (one agent's sends and RMPP state)
 *   ib_mad_queue.lock                (a QP's send or receive queue)
 *
 * All three are taken with interrupts disabled (spin_lock_irqsave) because
 * ib_post_send_mad(), ib_modify_mad() and ib_cancel_mad() may be called from
 * atomic context, even with interrupts off. Handlers of clients are never
 * called with any of them held.
 */

#ifndef __IB_MAD_PRIV_H__
#define __IB_MAD_PRIV_H__

#include <linux/completion.h>
#include <linux/hashtable.h>
#include <linux/list.h>
#include <linux/rbtree.h>
#include <linux/refcount.h>
#include <linux/siphash.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_smi.h>
#include <rdma/opa_smi.h>

/* Queue depths of the special QPs. */
#define IB_MAD_QP_SEND_SIZE		128
#define IB_MAD_QP_RECV_SIZE		512
#define IB_MAD_QP_MIN_SIZE		64
#define IB_MAD_QP_MAX_SIZE		8192
#define IB_MAD_SEND_REQ_MAX_SG		2
#define IB_MAD_RECV_REQ_MAX_SG		1

/* QP0 and QP1: index into ib_mad_port_private.qp_info[]. */
#define IB_MAD_QPS_CORE			2

/* Registration table dimensions. */
#define IB_MAD_MAX_CLASS		80	/* classes below 0x50 + DR SMP */
#define IB_MAD_MAX_VERSION		0x83	/* up to OPA class versions */
#define IB_MAD_MAX_OUI			8	/* OUIs per vendor class */
#define IB_MAD_MAX_VENDOR_RANGE2	(IB_MGMT_CLASS_VENDOR_RANGE2_END - \
					 IB_MGMT_CLASS_VENDOR_RANGE2_START + 1)

/* hi_tid is 24 bits wide: mlx4 uses the top byte of the 32-bit hi TID. */
#define IB_MAD_HI_TID_MASK		0x00ffffffU

/*
 * Sends an agent's timed work expires or completes in one run; it queues
 * itself again for the rest, so that the workqueue and the agent lock are
 * never held for long however many sends time out together.
 */
#define IB_MAD_TIMEOUT_BATCH		128

/*
 * A flow-controlled retry waits at most 2^IB_MAD_FC_BACKOFF_MAX times the
 * request's timeout (and never past its total deadline).
 */
#define IB_MAD_FC_BACKOFF_MAX		6
/* Buckets of an agent's table of flow-controlled destinations. */
#define IB_MAD_FC_DEST_HASH_BITS	5
/*
 * Slots (2^bits) of an agent's table of destinations that answer late
 * (struct ib_mad_late_dest); a late answer raises its destination's level
 * at most once per IB_MAD_LATE_RAISE_MS, and a level not raised for
 * IB_MAD_LATE_TTL_MS is forgotten.
 */
#define IB_MAD_LATE_BITS		4
/*
 * The SA requests an agent was given and has not answered (struct
 * ib_mad_dup_table of mad_recv.c): buckets (2^bits) of their hash, how
 * many are remembered at most, and how long a copy of one of them is
 * dropped after the first was delivered.
 */
#define IB_MAD_DUP_HASH_BITS		10
#define IB_MAD_DUP_MAX			8192
#define IB_MAD_DUP_HOLD_MS		4000
#define IB_MAD_LATE_RAISE_MS		100
#define IB_MAD_LATE_TTL_MS		60000
/*
 * Slots (2^bits) of an agent's table of the flow-controlled requests that
 * finished after a retry or a timeout (struct ib_mad_late_req): only an
 * answer to one of them, within IB_MAD_LATE_ANSWER_MS, is a late answer.
 */
#define IB_MAD_LATE_REQ_BITS		6
#define IB_MAD_LATE_ANSWER_MS		10000

/* log2 of the number of buckets in an agent's TID hash. */
#define IB_MAD_SEND_HASH_BITS		6

/* log2 of the number of buckets in an agent's RMPP reassembly hash. */
#define IB_MAD_RMPP_HASH_BITS		6
/* Buckets of an agent's table of RMPP sources. */
#define IB_MAD_RMPP_SRC_HASH_BITS	4

struct ib_mad_qp_info;
struct ib_mad_port_private;

/**
 * struct ib_mad_list_head - an entry on a QP's send or receive queue
 * @list: link on ib_mad_queue.list or on the overflow list
 * @cqe: completion entry, its done callback identifies send vs receive
 * @mad_queue: queue the entry is on (for the completion side)
 */
struct ib_mad_list_head {
	struct list_head list;
	struct ib_cqe cqe;
	struct ib_mad_queue *mad_queue;
};

/**
 * struct ib_mad_recv_priv - one posted receive buffer
 * @mad_list: queue linkage and completion entry
 * @recv_wc: the work completion handed to clients; recv_wc.rmpp_list heads
 *	the list of segments (recv_wc.recv_buf.list) once RMPP reassembles
 * @wc: copy of the verbs completion, recv_wc.wc points here
 * @post: the work request and its scatter entry that post the buffer,
 *	chained to the others of its batch (see ib_mad_fill_recv_ring()).
 *	Used only until ib_post_recv() returns, so it shares its memory
 *	with @wc, which is written only once the buffer has completed
 * @post.wr: the receive work request
 * @post.sge: its one scatter entry, @grh and @mad
 * @mapping: DMA address of @grh (GRH and MAD are mapped as one area)
 * @mad_size: size of @mad (IB 256 bytes or OPA 2 KiB)
 * @grh: the 40 bytes in front of the MAD: GRH, or on RoCE v2 an IPv4
 *	header in the last 20 bytes or an IPv6 header
 * @mad: the received MAD
 *
 * Allocated and freed only through ib_mad_recv_priv_alloc() and
 * ib_free_recv_mad(); a buffer reaches a client as &priv->recv_wc.
 */
struct ib_mad_recv_priv {
	struct ib_mad_list_head mad_list;
	struct ib_mad_recv_wc recv_wc;
	union {
		struct ib_wc wc;
		struct {
			struct ib_recv_wr wr;
			struct ib_sge sge;
		} post;
	};
	u64 mapping;
	size_t mad_size;
	struct ib_grh grh;
	u8 mad[] __aligned(8);
};

/**
 * struct ib_rmpp_segment - one segment of an RMPP send buffer
 * @list: link on ib_mad_send_wr_private.rmpp_list, in segment order
 * @num: segment number, counted from 1
 * @data: @seg_size bytes of class data (send_buf.seg_size)
 */
struct ib_rmpp_segment {
	struct list_head list;
	u32 num;
	u8 data[];
};

/**
 * struct ib_mad_fc_dest - flow control of one agent toward one destination
 * @node: in ib_mad_agent_private.fc_dests
 * @key: the destination: its LID, its GID, or for a directed-route SMP its
 *	path (see ib_mad_fc_key())
 * @active: requests to it holding a slot
 * @backlog: requests to it waiting for a slot (state QUEUED), oldest first
 * @settling: its slots are being handed to @backlog (see
 *	ib_mad_fc_settle_locked())
 *
 * Exists while @active or @backlog is not empty; under the agent lock.
 */
struct ib_mad_fc_dest {
	struct hlist_node node;
	u64 key;
	unsigned int active;
	struct list_head backlog;
	bool settling;
};

/**
 * struct ib_mad_late_dest - a destination whose answers came late
 * @key: its flow-control key (ib_mad_fc_key()); the slot is unused while
 *	@level is 0
 * @level: each try of a flow-controlled request to it waits 2^@level times
 *	the request's timeout (never past the request's total deadline)
 * @raised: jiffies when @level was last raised
 *
 * See ib_mad_send_late_answer_locked(); under the agent lock.
 */
struct ib_mad_late_dest {
	u64 key;
	unsigned long raised;
	unsigned int level;
};

/**
 * struct ib_mad_late_req - a request whose answer may still come, late
 * @tid: its TID
 * @key: its destination (ib_mad_fc_key()), as we sent it
 * @done: jiffies when it finished
 * @used: the slot holds a request
 *
 * A flow-controlled request that finished after a retry or a timeout;
 * direct-mapped by TID, under the agent lock. See
 * ib_mad_send_late_answer_locked().
 */
struct ib_mad_late_req {
	__be64 tid;
	u64 key;
	unsigned long done;
	bool used;
};

/**
 * struct ib_mad_agent_private - the MAD layer's view of a client agent
 * @agent: what the client sees; security.c uses it via container_of()
 * @reg_req: copy of the registration request, NULL for send-only agents
 * @qp_info: QP0 or QP1 of the port the agent is on
 * @lock: protects every send of the agent (state, @send_hash, @wait_tree,
 *	@done_list, @fc_dests, @fc_active, @late) and the RMPP receive state
 *	(@rmpp_hash and the other @rmpp_ fields). Nests inside
 *	ib_mad_port_private.reg_lock and outside ib_mad_queue.lock.
 * @send_hash: outstanding sends (state ON_WIRE, WAIT_RESP) keyed by TID
 * @wait_tree: sends in WAIT_RESP, ordered by @timeout deadline (equal
 *	deadlines in the order they began to wait), the earliest cached:
 *	a send starts or stops waiting in O(log n) whatever the timeouts of
 *	the others
 * @done_list: sends whose send handler must run from @timed_work
 * @fc_dests: the destinations of the agent's flow-controlled requests
 *	that hold a slot or wait for one (struct ib_mad_fc_dest), keyed by
 *	ib_mad_fc_dest.key
 * @fc_active: flow-controlled sends holding a slot, all destinations
 *	together: posted, not yet answered, cancelled or timed out
 * @fc_max: slots for flow-controlled requests (see ib_mad_fc_request())
 *	toward each destination; 0 turns flow control off for the agent
 * @late: destinations whose answers came after their requests had been
 *	retried or given up, direct-mapped by key (a new one takes the slot)
 * @late_reqs: requests that finished after a retry or a timeout, whose
 *	answers are the late ones, direct-mapped by TID
 * @dup: the SA requests delivered and not answered yet, for an agent
 *	that serves SA requests (see ib_mad_dup_alloc()), else NULL; has its
 *	own lock
 * @timed_work: runs timeouts and deferred completions; on the port's wq
 * @rmpp_hash: RMPP reassemblies, collecting or recently finished, keyed by
 *	TID; owned by mad_rmpp_recv.c
 * @rmpp_recvs: reassemblies in @rmpp_hash still collecting segments
 * @rmpp_srcs: per-source accounting of the collecting reassemblies
 *	(struct mad_rmpp_src of mad_rmpp_recv.c), keyed by source
 * @rmpp_active: collecting reassemblies, least recent progress first
 * @rmpp_done: finished reassemblies still remembered, oldest first
 * @rmpp_done_count: entries of @rmpp_done
 * @rmpp_segs: segments the collecting reassemblies hold
 * @rmpp_bytes: memory those segments pin (bound mad_rmpp_agent_max_bytes)
 * @rmpp_hash_key: random key of the hashes of @rmpp_hash and of sources,
 *	so that a peer cannot choose TIDs that share a bucket
 * @dying: set under @lock when unregistration starts; no send may be
 *	posted (ib_post_send_mad() fails with -ESHUTDOWN) and RMPP must not
 *	start new reassemblies (or arm timers) for a dying agent
 * @refcount: one for registration, one per send buffer, one per
 *	in-progress receive delivery; unregister waits for zero on @comp
 * @comp: completed when @refcount drops to zero
 * @rcu: frees the agent after readers of the tables are done
 */
struct ib_mad_agent_private {
	struct ib_mad_agent agent;
	struct ib_mad_reg_req *reg_req;
	struct ib_mad_qp_info *qp_info;

	/* protects the agent's sends and RMPP state, see above */
	spinlock_t lock;
	DECLARE_HASHTABLE(send_hash, IB_MAD_SEND_HASH_BITS);
	struct rb_root_cached wait_tree;
	struct list_head done_list;
	DECLARE_HASHTABLE(fc_dests, IB_MAD_FC_DEST_HASH_BITS);
	unsigned int fc_active;
	unsigned int fc_max;
	struct ib_mad_late_dest late[1 << IB_MAD_LATE_BITS];
	struct ib_mad_dup_table *dup;
	struct delayed_work timed_work;
	DECLARE_HASHTABLE(rmpp_hash, IB_MAD_RMPP_HASH_BITS);
	unsigned int rmpp_recvs;
	DECLARE_HASHTABLE(rmpp_srcs, IB_MAD_RMPP_SRC_HASH_BITS);
	struct list_head rmpp_active;
	struct list_head rmpp_done;
	unsigned int rmpp_done_count;
	unsigned int rmpp_segs;
	size_t rmpp_bytes;
	siphash_key_t rmpp_hash_key;
	bool dying;

	refcount_t refcount;
	struct completion comp;
	struct rcu_head rcu;
	/* Last: kfree_rcu() wants @rcu within the first 4 KiB. */
	struct ib_mad_late_req late_reqs[1 << IB_MAD_LATE_REQ_BITS];
};

/**
 * enum ib_mad_send_state - lifecycle of one posted send buffer
 * @IB_MAD_SEND_IDLE: created by ib_create_send_mad(), not posted
 * @IB_MAD_SEND_QUEUED: accepted, flow-controlled, waiting on the agent's
 *	backlog for a slot; nothing on the wire yet
 * @IB_MAD_SEND_ON_WIRE: accepted; at least one work request is on the
 *	QP or its overflow list (@wr_inflight > 0), or, for the first
 *	transmission of a plain send, about to be: ib_post_send_mad() counts
 *	it in flight under the lock and posts it after dropping the lock
 * @IB_MAD_SEND_WAIT_RESP: wire idle, timer armed: waiting for the
 *	response (or, for RMPP, for an ACK)
 * @IB_MAD_SEND_RESPONDED: a response was matched; the receive handler is
 *	being run or a work request is still in flight (the early response
 *	case); completes with IB_WC_SUCCESS once both are over
 * @IB_MAD_SEND_CANCELLED: finished with an error status (cancel, RMPP
 *	abort) while work requests were in flight; completes when they drain
 * @IB_MAD_SEND_DONE: final; the send handler runs exactly once, then the
 *	buffer belongs to the client again (or is freed)
 *
 * Transitions, all under ib_mad_agent_private.lock:
 *
 *   IDLE -> ON_WIRE                        ib_post_send_mad() succeeded
 *                                          (never once the agent is dying)
 *   IDLE -> QUEUED                         the same, for a flow-controlled
 *                                          request while all slots are used
 *   QUEUED -> ON_WIRE                      a slot was freed (oldest first)
 *   QUEUED -> DONE                         total deadline passed in the
 *                                          backlog, cancel, failed post
 *   ON_WIRE -> WAIT_RESP                   wire idle, response expected
 *   ON_WIRE -> DONE                        wire idle, no response expected,
 *                                          or send error
 *   ON_WIRE -> RESPONDED                   response before send completion
 *   ON_WIRE -> CANCELLED                   cancel or RMPP abort
 *   WAIT_RESP -> ON_WIRE                   retry / next RMPP window
 *   WAIT_RESP -> RESPONDED                 response matched
 *   WAIT_RESP -> DONE                      timeout, cancel, RMPP finish
 *   ON_WIRE -> IDLE                        the QP refused the first post
 *                                          (the buffer is the caller's)
 *   RESPONDED, CANCELLED -> DONE           last work request completed
 *                                          (and receive handler returned),
 *                                          or the QP refused the first post
 *
 * Only QUEUED, ON_WIRE and WAIT_RESP sends are in the agent's TID hash
 * (responses never match a QUEUED one).
 */
enum ib_mad_send_state {
	IB_MAD_SEND_IDLE,
	IB_MAD_SEND_QUEUED,
	IB_MAD_SEND_ON_WIRE,
	IB_MAD_SEND_WAIT_RESP,
	IB_MAD_SEND_RESPONDED,
	IB_MAD_SEND_CANCELLED,
	IB_MAD_SEND_DONE,
};

struct ib_mad_send_wr_private;

/**
 * typedef ib_mad_internal_done_t - completion of a send the layer made itself
 * @wr: the send
 * @wc: its final completion
 *
 * Sends created by the MAD layer (RMPP ACK/STOP/ABORT, replies) set
 * ib_mad_send_wr_private.internal_done; the core calls it instead of the
 * agent's send handler, in process context without MAD locks held. It must
 * free the buffer (ib_free_send_mad()) and anything attached to it.
 */
typedef void (*ib_mad_internal_done_t)(struct ib_mad_send_wr_private *wr,
				       struct ib_mad_send_wc *wc);

/**
 * struct ib_mad_send_wr_private - a send buffer and its lifecycle
 * @mad_list: linkage on the QP send queue or overflow list
 * @agent_list: linkage on the agent's @done_list, or while QUEUED on the
 *	backlog of its destination (@fc_dest)
 * @wait_node: linkage in the agent's @wait_tree; cleared when not in it
 * @tid_node: linkage in the agent's @send_hash
 * @mad_agent_priv: owning agent (holds a reference while the buffer lives)
 * @send_buf: what the client sees
 * @header_mapping: DMA address of the header SGE of the WR in flight
 * @payload_mapping: DMA address of the payload SGE of the WR in flight
 * @send_wr: the UD work request
 * @sg_list: header and payload SGEs
 * @tid: TID copied from the MAD at post time (hash key)
 * @state: see enum ib_mad_send_state
 * @wr_inflight: work requests posted and not yet completed. RMPP keeps at
 *	most one data WR in flight because all segments share @send_buf.mad
 *	as their header.
 * @timeout: jiffies deadline while in the wait tree (WAIT_RESP: the
 *	response timeout; QUEUED: @deadline)
 * @wait_start: jiffies when its last wait for a response began
 * @deadline: jiffies by which the send completes at the latest: post time
 *	plus send_buf.timeout_ms for the first try and each retry. Bounds
 *	the backlog wait and the backoff of flow-controlled retries.
 * @max_retries: retries allowed (send_buf.retries counts those used)
 * @retries_left: retries still allowed
 * @status: final status once known (IB_WC_SUCCESS until then)
 * @vendor_err: vendor_err reported with @status (RMPP status on abort)
 * @rmpp_active: a kernel RMPP send (set at post time)
 * @expect_resp: a response is expected: send_buf.timeout_ms was non-zero
 *	when posted (ib_modify_mad() changes the wait, never this)
 * @fc: a flow-controlled request: it needs one of the agent's slots
 *	toward its destination to go on the wire
 * @fc_slot: holds one of those slots (counted in @fc_dest's active)
 * @fc_key: its destination (ib_mad_fc_key()), set at post time
 * @fc_dest: its destination's flow control while it holds a slot or waits
 *	for one, else NULL
 * @internal_done: see ib_mad_internal_done_t; NULL for client sends
 * @resp_pending: RESPONDED: the response's receive handler has not
 *	returned yet
 * @repost_on_flush: the QP was recovered from a send error while this WR
 *	was queued; its flush completion re-posts it (send queue lock)
 *
 * RMPP sender state, owned by mad_rmpp_send.c, under the agent lock:
 * @rmpp_list: segments, in order (created by ib_create_send_mad())
 * @cur_seg: cache of the segment last looked up by number (see
 *	ib_mad_send_segment()); a WR carries the data of segment @seg_num
 * @last_ack_seg: segment last acknowledged by the receiver
 * @last_ack: number of the last segment acknowledged (0: none)
 * @seg_num: number of the segment most recently posted
 * @newwin: last segment the receiver's window allows
 * @pad: bytes of padding in the last segment
 * @rmpp_state: opaque protocol state of mad_rmpp_send.c
 * @rmpp_wait_ms: timeout used while waiting for an ACK
 */
struct ib_mad_send_wr_private {
	struct ib_mad_list_head mad_list;
	struct list_head agent_list;
	struct rb_node wait_node;
	struct hlist_node tid_node;
	struct ib_mad_agent_private *mad_agent_priv;
	struct ib_mad_send_buf send_buf;
	u64 header_mapping;
	u64 payload_mapping;
	struct ib_ud_wr send_wr;
	struct ib_sge sg_list[IB_MAD_SEND_REQ_MAX_SG];
	__be64 tid;
	enum ib_mad_send_state state;
	unsigned int wr_inflight;
	unsigned long timeout;
	unsigned long wait_start;
	unsigned long deadline;
	int max_retries;
	int retries_left;
	enum ib_wc_status status;
	u32 vendor_err;
	bool rmpp_active;
	bool expect_resp;
	bool fc;
	bool fc_slot;
	u64 fc_key;
	struct ib_mad_fc_dest *fc_dest;
	ib_mad_internal_done_t internal_done;
	bool resp_pending;
	bool repost_on_flush;

	struct list_head rmpp_list;
	struct ib_rmpp_segment *cur_seg;
	struct ib_rmpp_segment *last_ack_seg;
	int last_ack;
	int seg_num;
	int newwin;
	int pad;
	int rmpp_state;
	unsigned int rmpp_wait_ms;
};

/**
 * struct ib_mad_mgmt_method_table - agents by method, for one class
 * @agent: agent receiving requests of each method, or NULL
 */
struct ib_mad_mgmt_method_table {
	struct ib_mad_agent_private *agent[IB_MGMT_MAX_METHODS];
};

/**
 * struct ib_mad_mgmt_class_table - method tables by (converted) class
 * @method_table: indexed by ib_mad_class_index()
 */
struct ib_mad_mgmt_class_table {
	struct ib_mad_mgmt_method_table *method_table[IB_MAD_MAX_CLASS];
};

/**
 * struct ib_mad_mgmt_vendor_class - OUIs of one vendor range 2 class
 * @oui: registered OUIs; a slot is free when its method table is NULL
 * @method_table: method table of each OUI slot
 */
struct ib_mad_mgmt_vendor_class {
	u8 oui[IB_MAD_MAX_OUI][3];
	struct ib_mad_mgmt_method_table *method_table[IB_MAD_MAX_OUI];
};

/**
 * struct ib_mad_mgmt_vendor_class_table - vendor range 2 classes
 * @vendor_class: indexed by class - IB_MGMT_CLASS_VENDOR_RANGE2_START
 */
struct ib_mad_mgmt_vendor_class_table {
	struct ib_mad_mgmt_vendor_class *vendor_class[IB_MAD_MAX_VENDOR_RANGE2];
};

/**
 * struct ib_mad_mgmt_version_table - tables of one class version
 * @class: non-vendor classes (and vendor range 1)
 * @vendor: vendor range 2 classes
 */
struct ib_mad_mgmt_version_table {
	struct ib_mad_mgmt_class_table *class;
	struct ib_mad_mgmt_vendor_class_table *vendor;
};

/**
 * struct ib_mad_queue - a QP's send or receive queue
 * @lock: protects @list, @count and, for the send queue, the overflow list
 *	of the owning ib_mad_qp_info. Innermost MAD lock.
 * @list: entries posted to the QP, oldest first
 * @count: number of entries on @list
 * @max_active: capacity of the QP queue
 * @qp_info: owner
 */
struct ib_mad_queue {
	/* protects the queue (and the overflow list), innermost MAD lock */
	spinlock_t lock;
	struct list_head list;
	int count;
	int max_active;
	struct ib_mad_qp_info *qp_info;
};

/**
 * struct ib_mad_qp_info - QP0 or QP1 of a port
 * @port_priv: owning port
 * @qp: the special QP, NULL if the port has no such QP; set to NULL at
 *	port close while the CQ work may still run, which must therefore
 *	read @qp_num instead
 * @qp_num: 0 or 1, the number of the special QP; never changes
 * @send_queue: sends on the QP
 * @recv_queue: receives on the QP
 * @overflow_list: sends waiting for room on @send_queue (under its lock)
 * @refused_list: sends taken off @overflow_list that the QP refused, for
 *	@refused_work to complete (under @send_queue's lock)
 * @refused_work: completes them where no MAD lock is held, see
 *	ib_mad_qp_post_send()
 */
struct ib_mad_qp_info {
	struct ib_mad_port_private *port_priv;
	struct ib_qp *qp;
	u32 qp_num;
	struct ib_mad_queue send_queue;
	struct ib_mad_queue recv_queue;
	struct list_head overflow_list;
	struct list_head refused_list;
	struct work_struct refused_work;
};

/**
 * enum ib_mad_stat - per-port counters, readable in debugfs
 * @IB_MAD_STAT_SENT: MADs handed to the QP (each RMPP segment counts)
 * @IB_MAD_STAT_SEND_ERR: send completions with an error
 * @IB_MAD_STAT_RECV: MADs received
 * @IB_MAD_STAT_DROP_INVALID: dropped: malformed header or wrong QP
 * @IB_MAD_STAT_DROP_NO_AGENT: dropped: no agent for it (not answered)
 * @IB_MAD_STAT_DROP_SECURITY: dropped: refused by the security checks
 * @IB_MAD_STAT_DROP_SMI: dropped by the directed-route rules
 * @IB_MAD_STAT_DROP_NOMEM: dropped: out of memory
 * @IB_MAD_STAT_UNMATCHED_RESP: responses with no outstanding request
 * @IB_MAD_STAT_TIMEOUT: sends completed with IB_WC_RESP_TIMEOUT_ERR
 * @IB_MAD_STAT_RETRY: retries sent
 * @IB_MAD_STAT_CANCEL: sends cancelled
 * @IB_MAD_STAT_UNSUPPORTED: requests answered "unsupported method/attr"
 * @IB_MAD_STAT_OUTSTANDING: sends posted and not yet completed (gauge)
 * @IB_MAD_STAT_FC_QUEUED: flow-controlled requests that had to wait for a
 *	slot on their agent's backlog
 * @IB_MAD_STAT_FC_BACKLOG: requests on a backlog now (gauge)
 * @IB_MAD_STAT_FC_BACKOFF: tries that waited longer than the request's
 *	timeout (exponential backoff)
 * @IB_MAD_STAT_FC_LATE: responses to SA or SMP requests already retried
 *	or given up that raised their source's late level (see
 *	ib_mad_send_late_answer_locked())
 * @IB_MAD_STAT_DUP_DROPPED: copies of an SA request dropped because the
 *	first copy was delivered and is not answered yet (see
 *	ib_mad_dup_alloc())
 * @IB_MAD_STAT_FC_DROPPED: requests whose deadline passed on a backlog:
 *	completed with IB_WC_RESP_TIMEOUT_ERR, never sent
 * @IB_MAD_STAT_RECV_FLUSHED: receive buffers flushed (QP in the error
 *	state, or the port closing); they are not replaced
 * @IB_MAD_STAT_SMI_RELAYED: directed-route SMPs a switch sent on to their
 *	next hop
 * @IB_MAD_STAT_RMPP_SEGS: segments that RMPP reassemblies of the port's
 *	agents hold now (gauge)
 * @IB_MAD_STAT_RMPP_SEGS_PEAK: most segments one agent's reassemblies
 *	held at once (high-water mark; bound by mad_rmpp_agent_max_bytes)
 * @IB_MAD_STAT_RMPP_SRC_SEGS_PEAK: most segments one source's
 *	reassemblies held at one agent (bound by its share of
 *	mad_rmpp_agent_max_bytes)
 * @IB_MAD_STAT_RMPP_RECVS_PEAK: most reassemblies one agent collected at
 *	once (bound MAD_RMPP_MAX_RECVS)
 * @IB_MAD_STAT_RMPP_SRC_RECVS_PEAK: most reassemblies one source had
 *	collecting at one agent (bound MAD_RMPP_SRC_MAX_RECVS)
 * @IB_MAD_STAT_RMPP_DONE_PEAK: most finished reassemblies one agent
 *	remembered (bound MAD_RMPP_MAX_DONE)
 * @IB_MAD_STAT_RMPP_EVICTED: reassemblies stopped to give their memory to
 *	a source holding less, the agent's budget being full
 * @IB_MAD_STAT_COUNT: number of counters
 */
enum ib_mad_stat {
	IB_MAD_STAT_SENT,
	IB_MAD_STAT_SEND_ERR,
	IB_MAD_STAT_RECV,
	IB_MAD_STAT_DROP_INVALID,
	IB_MAD_STAT_DROP_NO_AGENT,
	IB_MAD_STAT_DROP_SECURITY,
	IB_MAD_STAT_DROP_SMI,
	IB_MAD_STAT_DROP_NOMEM,
	IB_MAD_STAT_UNMATCHED_RESP,
	IB_MAD_STAT_TIMEOUT,
	IB_MAD_STAT_RETRY,
	IB_MAD_STAT_CANCEL,
	IB_MAD_STAT_UNSUPPORTED,
	IB_MAD_STAT_OUTSTANDING,
	IB_MAD_STAT_FC_QUEUED,
	IB_MAD_STAT_FC_BACKLOG,
	IB_MAD_STAT_FC_BACKOFF,
	IB_MAD_STAT_FC_LATE,
	IB_MAD_STAT_DUP_DROPPED,
	IB_MAD_STAT_FC_DROPPED,
	IB_MAD_STAT_RECV_FLUSHED,
	IB_MAD_STAT_SMI_RELAYED,
	IB_MAD_STAT_RMPP_SEGS,
	IB_MAD_STAT_RMPP_SEGS_PEAK,
	IB_MAD_STAT_RMPP_SRC_SEGS_PEAK,
	IB_MAD_STAT_RMPP_RECVS_PEAK,
	IB_MAD_STAT_RMPP_SRC_RECVS_PEAK,
	IB_MAD_STAT_RMPP_DONE_PEAK,
	IB_MAD_STAT_RMPP_EVICTED,
	IB_MAD_STAT_COUNT
};

/**
 * struct ib_mad_port_private - MAD state of one port
 * @port_list: link on the global port list (ib_mad_port_list_lock)
 * @device: the device
 * @port_num: the port
 * @cq: shared CQ of QP0 and QP1, polled from a workqueue
 * @pd: PD of the special QPs
 * @reg_lock: protects @version (the registration tables) and the
 *	agent pointers in them. Outermost MAD lock.
 * @version: registration tables by class version
 * @wq: ordered workqueue for agent timers and deferred completions
 * @qp_info: QP0 and QP1
 * @stats: counters, see enum ib_mad_stat
 * @debugfs: the port's debugfs directory, or NULL
 * @reply_agents: send-only agents of mad_agent.c on QP0 and QP1; RCU,
 *	taken with a reference by ib_mad_reply_agent_get() since the CQ work
 *	uses them while port removal unregisters them
 * @closing: set under both queue locks of each QP when the port goes
 *	away; nothing is posted to its QPs afterwards
 */
struct ib_mad_port_private {
	struct list_head port_list;
	struct ib_device *device;
	u32 port_num;
	struct ib_cq *cq;
	struct ib_pd *pd;

	/* protects @version, outermost MAD lock */
	spinlock_t reg_lock;
	struct ib_mad_mgmt_version_table version[IB_MAD_MAX_VERSION];
	struct workqueue_struct *wq;
	struct ib_mad_qp_info qp_info[IB_MAD_QPS_CORE];
	atomic64_t stats[IB_MAD_STAT_COUNT];
	struct dentry *debugfs;
	struct ib_mad_agent __rcu *reply_agents[IB_MAD_QPS_CORE];
	bool closing;
};

/* Counters */
static inline void ib_mad_stat_inc(struct ib_mad_port_private *port,
				   enum ib_mad_stat stat)
{
	atomic64_inc(&port->stats[stat]);
}

static inline void ib_mad_stat_dec(struct ib_mad_port_private *port,
				   enum ib_mad_stat stat)
{
	atomic64_dec(&port->stats[stat]);
}

/* Raise a high-water mark to @value if it is below it. */
static inline void ib_mad_stat_peak(struct ib_mad_port_private *port,
				    enum ib_mad_stat stat, s64 value)
{
	s64 old = atomic64_read(&port->stats[stat]);

	while (old < value &&
	       !atomic64_try_cmpxchg(&port->stats[stat], &old, value))
		;
}

static inline struct ib_mad_agent_private *
ib_mad_agent_priv(const struct ib_mad_agent *agent)
{
	return container_of(agent, struct ib_mad_agent_private, agent);
}

static inline struct ib_mad_send_wr_private *
ib_mad_send_wr(const struct ib_mad_send_buf *send_buf)
{
	return container_of(send_buf, struct ib_mad_send_wr_private, send_buf);
}

static inline struct ib_mad_port_private *
ib_mad_agent_port(const struct ib_mad_agent_private *priv)
{
	return priv->qp_info->port_priv;
}

/* ---- mad_port.c ---- */

struct ib_mad_port_private *ib_mad_port_get(struct ib_device *device,
					    u32 port_num);
int ib_mad_qp_post_send(struct ib_mad_send_wr_private *wr);
struct ib_mad_recv_priv *ib_mad_recv_priv_alloc(size_t mad_size, gfp_t gfp);
void ib_mad_recv_priv_free(struct ib_mad_recv_priv *priv);
void ib_mad_send_refused_work(struct work_struct *work);
void ib_mad_port_debugfs_add(struct ib_mad_port_private *port);
void ib_mad_port_debugfs_remove(struct ib_mad_port_private *port);

/* ---- mad_reg.c ---- */

void ib_mad_agent_get(struct ib_mad_agent_private *priv);
void ib_mad_agent_put(struct ib_mad_agent_private *priv);
void ib_mad_rmpp_recv_init(struct ib_mad_agent_private *priv);
struct ib_mad_agent_private *
ib_mad_find_agent(struct ib_mad_port_private *port,
		  const struct ib_mad_hdr *hdr);
void ib_mad_reg_tables_free(struct ib_mad_port_private *port);
unsigned int ib_mad_port_agents_left(struct ib_mad_port_private *port);
int ib_mad_class_index(u8 mgmt_class);

/* ---- mad_wire.c ---- */

bool ib_mad_is_vendor_class_range2(u8 mgmt_class);
bool ib_mad_fc_request(const struct ib_mad_hdr *hdr);
u64 ib_mad_fc_key(const void *mad, struct ib_ah *ah);
u64 ib_mad_fc_recv_key(const struct ib_mad_recv_wc *recv_wc);

struct ib_mad_dup_table *ib_mad_dup_alloc(const struct ib_mad_reg_req *req);
void ib_mad_dup_free(struct ib_mad_dup_table *tab);
void ib_mad_dup_answered(struct ib_mad_agent_private *priv,
			 const struct ib_mad_send_wr_private *wr);
int ib_mad_recv_gids(const struct ib_mad_agent_private *priv,
		     const struct ib_mad_recv_wc *recv_wc,
		     union ib_gid *sgid, union ib_gid *dgid);

/* ---- mad_send.c (core services, also used by the RMPP files) ---- */

/*
 * Core <-> RMPP seam
 * ==================
 *
 * Everything below that takes a struct ib_mad_send_wr_private and is named
 * *_locked must be called with wr->mad_agent_priv->lock held; none of them
 * sleeps or runs a client handler. Send handlers always run later, from the
 * CQ poll context or the agent's timed_work, with no lock held.
 *
 * Send side (sender RMPP state lives in struct ib_mad_send_wr_private):
 *
 *  - ib_post_send_mad() marks a send rmpp_active when the agent does kernel
 *    RMPP, the buffer was created with rmpp_active (seg_count > 0) and the
 *    RMPP header has the ACTIVE flag. The send is then in the TID hash and
 *    in state ON_WIRE with wr_inflight == 0, and ib_mad_rmpp_send_start()
 *    opens its window and selects segment 1 before the core posts it.
 *  - Selecting a segment means setting seg_num and filling the RMPP header
 *    in send_buf.mad; ib_mad_send_post_locked() then maps the header and
 *    the data of segment seg_num. The core posts what ib_mad_rmpp_send_start()
 *    and ib_mad_rmpp_send_retry() selected; RMPP posts the later segments
 *    of a window itself, from send completions and ACKs. If either hook
 *    fails, the core fails the post or ends the send; nothing was posted.
 *  - Each completed work request of an rmpp_active send still ON_WIRE
 *    whose completion succeeded goes to ib_mad_rmpp_send_wc() after
 *    wr_inflight was decremented. It returns IB_MAD_RMPP_SEND_HANDLED if it
 *    took the next step itself (posted another segment, armed a wait with
 *    ib_mad_send_wait_locked(), or ended the send with
 *    ib_mad_send_finish_locked()), or IB_MAD_RMPP_SEND_DATA_DONE when the
 *    whole message is sent and acknowledged: the core then treats the send
 *    like a plain MAD whose send completed (wait for the response if one is
 *    expected, else complete with success).
 *  - A WAIT_RESP timeout of an rmpp_active send with retries left calls
 *    ib_mad_rmpp_send_retry(), which selects the first unacknowledged
 *    segment again and returns 0 for the core to post it, or returns an
 *    error to complete the send with IB_WC_RESP_TIMEOUT_ERR. When all data
 *    was acknowledged (the wait was for the response) it returns
 *    -ETIMEDOUT.
 *  - ACK processing (from ib_mad_rmpp_recv()) finds the send with
 *    ib_mad_find_rmpp_send_locked() and, once the whole message is
 *    acknowledged and the wire is idle, calls ib_mad_send_acked_locked();
 *    STOP/ABORT call ib_mad_send_finish_locked(wr, IB_WC_REM_ABORT_ERR,
 *    rmpp_status).
 *
 * Receive side:
 *
 *  - For a kernel RMPP agent, every received MAD of an RMPP class whose
 *    RMPP header has the ACTIVE flag goes to ib_mad_rmpp_recv() (process
 *    context, no locks, the agent referenced). It returns NULL when it
 *    consumed the MAD (and freed it or kept it for reassembly), or the
 *    ib_mad_recv_wc to deliver: the complete message, its segments linked
 *    in order on recv_wc->rmpp_list. The core then matches responses to
 *    requests and runs the receive handler.
 *  - ib_unregister_mad_agent() takes the agent out of the tables, sets
 *    priv->dying under priv->lock, cancels the agent's sends, then calls
 *    ib_mad_rmpp_cancel_recvs() and finally waits for all references. A
 *    delivery already running may still reach ib_mad_rmpp_recv(): RMPP
 *    tests priv->dying under priv->lock before adding a reassembly.
 *    ib_mad_rmpp_cancel_recvs() must stop RMPP's delayed work for the agent
 *    and free its reassemblies; each reassembly holds an agent reference,
 *    dropped when it is freed, so the wait for references covers them.
 *
 * Locking of the hooks: ib_mad_rmpp_send_start(), ib_mad_rmpp_send_wc()
 * and ib_mad_rmpp_send_retry() are called with priv->lock held;
 * ib_mad_rmpp_recv() and ib_mad_rmpp_cancel_recvs() without any MAD lock,
 * in process context.
 *
 * RMPP's own MADs (ACK, STOP, ABORT) are created with ib_create_send_mad()
 * on the agent and posted with ib_post_send_mad(); RMPP sets
 * wr->internal_done before posting so that their completion never reaches
 * the client.
 */

/**
 * enum ib_mad_rmpp_send_verdict - answer of ib_mad_rmpp_send_wc()
 * @IB_MAD_RMPP_SEND_HANDLED: RMPP took the next step itself
 * @IB_MAD_RMPP_SEND_DATA_DONE: all data acknowledged; finish like a plain
 *	send whose work request completed
 */
enum ib_mad_rmpp_send_verdict {
	IB_MAD_RMPP_SEND_HANDLED,
	IB_MAD_RMPP_SEND_DATA_DONE,
};

int ib_mad_send_post_locked(struct ib_mad_send_wr_private *wr);
void ib_mad_send_wait_locked(struct ib_mad_send_wr_private *wr,
			     unsigned int timeout_ms);
void ib_mad_send_acked_locked(struct ib_mad_send_wr_private *wr);
void ib_mad_send_finish_locked(struct ib_mad_send_wr_private *wr,
			       enum ib_wc_status status, u32 vendor_err);
struct ib_mad_send_wr_private *
ib_mad_find_send_locked(struct ib_mad_agent_private *priv,
			const struct ib_mad_recv_wc *recv_wc);
struct ib_mad_send_wr_private *
ib_mad_find_rmpp_send_locked(struct ib_mad_agent_private *priv,
			     const struct ib_mad_recv_wc *recv_wc);
struct ib_rmpp_segment *ib_mad_send_segment(struct ib_mad_send_wr_private *wr,
					    int seg_num);
void *ib_mad_send_payload(struct ib_mad_send_wr_private *wr);

/* Core-internal send services. */
void ib_mad_send_wc_done(struct ib_mad_send_wr_private *wr,
			 const struct ib_wc *wc);
void ib_mad_send_response_begin_locked(struct ib_mad_send_wr_private *wr);
void ib_mad_send_late_answer_locked(struct ib_mad_agent_private *priv,
				    __be64 tid);
void ib_mad_send_response_done(struct ib_mad_send_wr_private *wr);
void ib_mad_agent_timed_work(struct work_struct *work);
void ib_mad_agent_flush_sends(struct ib_mad_agent_private *priv);
void ib_mad_send_local_complete(struct ib_mad_send_wr_private *wr,
				enum ib_wc_status status);

/* ---- mad_local.c ---- */

int ib_mad_local_smp(struct ib_mad_agent_private *priv,
		     struct ib_mad_send_wr_private *wr);

/* ---- mad_recv.c ---- */

void ib_mad_recv_take(struct ib_mad_recv_priv *priv);
void ib_mad_recv_refill(struct ib_mad_qp_info *qp_info);

void ib_mad_recv_done(struct ib_cq *cq, struct ib_wc *wc);
bool ib_mad_recv_matches_send(struct ib_mad_agent_private *priv,
			      const struct ib_mad_send_wr_private *wr,
			      const struct ib_mad_recv_wc *recv_wc);
void ib_mad_deliver(struct ib_mad_agent_private *priv,
		    struct ib_mad_recv_wc *recv_wc);

/* ---- mad_rmpp_*.c (implemented by RMPP) ---- */

int ib_mad_rmpp_send_start(struct ib_mad_send_wr_private *wr);
enum ib_mad_rmpp_send_verdict
ib_mad_rmpp_send_wc(struct ib_mad_send_wr_private *wr,
		    const struct ib_mad_send_wc *wc);
int ib_mad_rmpp_send_retry(struct ib_mad_send_wr_private *wr);
struct ib_mad_recv_wc *ib_mad_rmpp_recv(struct ib_mad_agent_private *priv,
					struct ib_mad_recv_wc *recv_wc);
void ib_mad_rmpp_cancel_recvs(struct ib_mad_agent_private *priv);

/* ---- mad_agent.c ---- */

int ib_mad_reply_port_open(struct ib_mad_port_private *port);
void ib_mad_reply_port_close(struct ib_mad_port_private *port);
void ib_mad_reply_send(const struct ib_mad_hdr *mad_hdr,
		       const struct ib_grh *grh, const struct ib_wc *wc,
		       struct ib_device *device, u32 port_num, int qpn,
		       size_t resp_mad_len, bool opa);

/* ---- internals that the KUnit tests reach (static otherwise) ---- */

#if IS_ENABLED(CONFIG_KUNIT)
int ib_mad_reg_validate(enum ib_qp_type qp_type,
			const struct ib_mad_reg_req *req, u8 rmpp_version,
			bool has_send_handler, bool has_recv_handler,
			u32 flags);
int ib_mad_reg_insert(struct ib_mad_port_private *port,
		      struct ib_mad_agent_private *priv);
int ib_mad_agent_publish(struct ib_mad_port_private *port,
			 struct ib_mad_agent_private *priv);
void ib_mad_agent_unpublish(struct ib_mad_port_private *port,
			    struct ib_mad_agent_private *priv);
void ib_mad_reg_remove(struct ib_mad_port_private *port,
		       struct ib_mad_agent_private *priv);
int ib_mad_pad_size(int seg_size, int data_len);
bool ib_mad_recv_validate(const struct ib_mad_hdr *hdr, u32 qp_num, bool opa);
struct ib_mad_agent_private *
ib_mad_agent_alloc(struct ib_mad_qp_info *qp_info,
		   const struct ib_mad_reg_req *req);
struct ib_mad_agent_private *
ib_mad_reply_agent_get(struct ib_mad_port_private *port, int qpn);
unsigned int ib_mad_send_resp_wait_ms(struct ib_mad_send_wr_private *wr);
void *ib_mad_recv_out_alloc(size_t size);
extern unsigned int mad_rmpp_total_max_ms;
extern unsigned int mad_rmpp_recv_wait_ms;
extern size_t mad_rmpp_agent_max_bytes;
#endif

#endif	/* __IB_MAD_PRIV_H__ */
