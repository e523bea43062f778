/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ib_srpt - SCSI RDMA Protocol target: types shared by the srpt_*.c files.
 *
 * Object model, from the longest to the shortest lived:
 *
 *   srpt_device   one per RDMA device (ib_client data), kref counted because
 *                 configfs WWN directories may outlive the device.
 *   srpt_port     one per device port, embedded in srpt_device; owns the DM
 *                 MAD agent and the list of I_T nexuses.
 *   srpt_port_id  a configfs WWN directory naming a port (by GUID or GID).
 *   srpt_tpg      a configfs TPG below a WWN; carries the per-TPG settings.
 *   srpt_nexus    (initiator port id, target port id) pair of a port.
 *   srpt_rdma_ch  one RDMA channel (QP) of a nexus; owns one LIO session.
 *   srpt_send_ioctx / srpt_recv_ioctx  per-IU contexts of a channel.
 *
 * Lock order (outer first): srpt_dev_mutex, srpt_port_id.mutex,
 * srpt_port.mutex, srpt_device.mutex, srpt_rdma_ch.lock.
 */
#ifndef SRPT_PRIV_H
#define SRPT_PRIV_H

#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/scatterlist.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/workqueue.h>
#include <rdma/ib_cm.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>
#include <rdma/rw.h>
#include <scsi/srp.h>
#include <target/target_core_base.h>
#include <kunit/visibility.h>

#include "srpt_compat.h"

#include "srpt_dm.h"

struct configfs_attribute;

#define SRPT_DRV_NAME		"ib_srpt"
#define SRPT_ID_STRING		"Linux SRP target"
#define SRPT_SVC_NAME_PREFIX	"SRP.T10:"

/* Limits and defaults; the user visible ones match upstream ib_srpt. */
enum {
	SRPT_MIN_SQ_SIZE	= 16,
	SRPT_DEF_SQ_SIZE	= 4096,
	SRPT_MAX_RQ_SIZE	= 128,
	SRPT_MIN_SRQ_SIZE	= 4,
	SRPT_DEF_SRQ_SIZE	= 4095,
	SRPT_MAX_SRQ_SIZE	= 65535,
	SRPT_MAX_RDMA_SIZE	= 1U << 24,
	SRPT_DEF_RDMA_SIZE	= 65536,
	/*
	 * Largest data transfer of one SRP_CMD, whatever its descriptors:
	 * the top of the srp_max_rdma_size range.
	 */
	SRPT_MAX_DATA_LEN	= SRPT_MAX_RDMA_SIZE,
	SRPT_MAX_RSP_SIZE	= 1024,
	SRPT_MIN_RSP_SIZE	= sizeof(struct srp_rsp) + 4,
	SRPT_DEF_RSP_SIZE	= 256,
	SRPT_MIN_IT_IU_LEN	= 64,
	SRPT_MIN_REQ_SIZE	= 996,
	SRPT_MAX_ADD_CDB_LEN	= 16,
	SRPT_MAX_IMM_OFFSET	= 80,
	SRPT_MAX_IMM_DATA	= 8 * 1024,
	/* Room for a command with 128 direct descriptors in its table ... */
	SRPT_DEF_REQ_SIZE_DESC	= sizeof(struct srp_cmd) + SRPT_MAX_ADD_CDB_LEN +
				  sizeof(struct srp_indirect_buf) +
				  128 * sizeof(struct srp_direct_buf),
	/* ... or for 8 KiB of immediate data, whichever is larger. */
	SRPT_DEF_REQ_SIZE_IMM	= SRPT_MAX_IMM_OFFSET +
				  sizeof(struct srp_imm_buf) + SRPT_MAX_IMM_DATA,
	SRPT_DEF_REQ_SIZE	= SRPT_DEF_REQ_SIZE_IMM,
	/* Receive buffers are aligned so immediate data is 512-byte aligned. */
	SRPT_BUF_ALIGN		= 512,
	SRPT_RD_ATOMIC		= 4,
	/*
	 * I_T nexuses a port keeps at once; logins that would add one more
	 * are rejected. A nexus goes with its last channel.
	 */
	SRPT_MAX_NEXUS		= 1024,
	/*
	 * Channels of one nexus not being closed; a multi-channel login
	 * that would add one more is rejected with CHANNEL LIMIT REACHED
	 * (ib_srp opens min(4 per NUMA node, completion vectors) by default
	 * and goes on with the channels it got).
	 */
	SRPT_MAX_CH_PER_NEXUS	= 64,
	/*
	 * Channels of one nexus, those being closed included: a login that
	 * would add one more is rejected, single-channel or not, so that an
	 * initiator that logs in again and again while ignoring the DREQs of
	 * its old channels does not pile them up.
	 */
	SRPT_MAX_CH_HELD	= 2 * SRPT_MAX_CH_PER_NEXUS,
	/*
	 * I_T nexuses of one initiator (a port GUID, or an IP address) on a
	 * port: an initiator varying its initiator port id cannot take all
	 * SRPT_MAX_NEXUS and lock the others out.
	 */
	SRPT_MAX_NEXUS_PER_SRC	= 64,
	/*
	 * Bytes of data buffers the commands of one channel may hold at once
	 * (each up to SRPT_MAX_DATA_LEN); a command that would go past it is
	 * answered BUSY, to be retried.
	 */
	SRPT_CH_DATA_BUDGET	= 64 << 20,
	SRPT_CLOSE_WAIT_SECS	= 5,
	/* How long a release waits for an SRQ channel's Last WQE Reached. */
	SRPT_LAST_WQE_WAIT_SECS	= 10,
};

static_assert(SRPT_DEF_REQ_SIZE_IMM >= SRPT_DEF_REQ_SIZE_DESC);

/* srp_login_req.req_flags: MULTI-CHANNEL ACTION occupies the low two bits. */
#define SRPT_MCA_MASK		0x03

/* SRP task attributes in srp_cmd.task_attr (SRP table 21). */
enum {
	SRPT_TASK_SIMPLE	= 0,
	SRPT_TASK_HEAD_OF_QUEUE	= 1,
	SRPT_TASK_ORDERED	= 2,
	SRPT_TASK_ACA		= 4,
};

/* Task management response codes in SRP_RSP RESPONSE DATA (SRP table 24). */
enum {
	SRPT_TMF_COMPLETE	= 0x00,
	SRPT_TMF_NOT_SUPPORTED	= 0x04,
	SRPT_TMF_FAILED		= 0x05,
};

/* SRP_T_LOGOUT reasons (SRP table 17). */
enum {
	SRPT_T_LOGOUT_INVALID_IU	= 0x02,
	SRPT_T_LOGOUT_UNEXPECTED_RSP	= 0x03,
};

extern unsigned int srp_max_req_size;
extern int srpt_srq_size;
extern u64 srpt_service_guid;
extern struct ib_client srpt_client;
extern struct mutex srpt_dev_mutex;
extern struct workqueue_struct *srpt_wq;
extern const struct target_core_fabric_ops srpt_template;

/**
 * enum srpt_command_state - where a command is in its life
 * @SRPT_STATE_NEW: received, with LIO (a READ stays here while its backend
 *	works).
 * @SRPT_STATE_NEED_DATA: RDMA READ of write data posted.
 * @SRPT_STATE_DATA_IN: write data is in memory, LIO executes the command.
 * @SRPT_STATE_CMD_RSP_SENT: SRP_RSP for an SRP_CMD posted.
 * @SRPT_STATE_MGMT: task management function in progress.
 * @SRPT_STATE_MGMT_RSP_SENT: SRP_RSP for an SRP_TSK_MGMT posted.
 * @SRPT_STATE_DONE: finished, aborted or failed; never left again until
 *	the context is reused (a free context is DONE).
 */
enum srpt_command_state {
	SRPT_STATE_NEW		 = 0,
	SRPT_STATE_NEED_DATA	 = 1,
	SRPT_STATE_DATA_IN	 = 2,
	SRPT_STATE_CMD_RSP_SENT	 = 3,
	SRPT_STATE_MGMT		 = 4,
	SRPT_STATE_MGMT_RSP_SENT = 5,
	SRPT_STATE_DONE		 = 6,
};

/**
 * struct srpt_ioctx - a DMA mapped message buffer
 * @cqe: completion entry of the work request using this buffer.
 * @buf: kernel address of the buffer.
 * @dma: bus address of the buffer.
 * @offset: bytes skipped at the start of @buf so that immediate data is
 *	aligned; the information unit starts at @buf + @offset.
 * @index: position of this context in its ring.
 */
struct srpt_ioctx {
	struct ib_cqe	cqe;
	void		*buf;
	dma_addr_t	dma;
	u32		offset;
	u32		index;
};

/**
 * struct srpt_recv_ioctx - receive buffer context
 * @ioctx: the buffer.
 * @wait_list: entry in srpt_rdma_ch.cmd_wait_list while the IU waits.
 * @byte_len: number of bytes the last receive placed in the buffer.
 * @opcode: srpt_iu_opcode() of the IU, found once when it was received.
 */
struct srpt_recv_ioctx {
	struct srpt_ioctx	ioctx;
	struct list_head	wait_list;
	u32			byte_len;
	int			opcode;
};

/**
 * struct srpt_rw_ctx - one remote buffer of a command and its local pages
 * @raddr: the remote buffer's address.
 * @rkey: its R_Key.
 * @len: bytes of the remote buffer that @rw moves.
 * @sg: local pages for those bytes; every list but a command's last has a
 *	spare entry that links it to the next one (srpt_join_sgls()).
 * @nents: entries of @sg holding pages.
 * @mapped: entries of @sg that @rw maps, 0 when @rw is not set up.
 * @n_wrs: work requests @rw posts; 0 when it moves nothing (a read whose
 *	data ended in an earlier buffer).
 * @rw: rdma_rw context moving the data.
 */
struct srpt_rw_ctx {
	u64			raddr;
	u32			rkey;
	u32			len;
	struct scatterlist	*sg;
	unsigned int		nents;
	unsigned int		mapped;
	u32			n_wrs;
	struct rdma_rw_ctx	rw;
};

/**
 * struct srpt_send_ioctx - per-command context, also the response buffer
 * @ioctx: the response buffer; first, for the ring helpers.
 * @ch: channel owning this context.
 * @rdma_cqe: completion entry of the RDMA READ chain.
 * @imm_sg: scatterlist pointing at immediate data.
 * @s_rw_ctx: storage used when a command has a single remote buffer.
 * @recv_ioctx: receive buffer kept while its immediate data is in use;
 *	NULL whenever the context is free.
 *
 * The members from @state on belong to one command: srpt_get_send_ioctx()
 * zeroes them when a command claims the context.
 *
 * @state: see enum srpt_command_state; changed only from the contexts
 *	documented at srpt_set_cmd_state().
 * @rw_dir: DMA direction of the local buffers of @rw_ctxs.
 * @rw_ctxs: array of @n_rw_ctx remote buffer contexts.
 * @n_rw_ctx: entries in @rw_ctxs.
 * @n_rdma: work requests the data transfer needs.
 * @rw_len: bytes the work requests of @rw_ctxs move.
 * @charged: bytes its data buffers pin, charged to the channel's budget
 *	(srpt_data_cost()).
 * @queue_status_only: send status without the data of a read.
 * @local: the response was built by ib_srpt, LIO never saw the request.
 * @rsp_len: length of the response built in @ioctx while it waits in
 *	srpt_rdma_ch.rsp_backlog.
 * @rsp_data: the response waiting in srpt_rdma_ch.rsp_backlog is a read's,
 *	with the RDMA WRITEs of its data: srpt_rsp_work() builds and posts
 *	it, in process context.
 * @rsp_entry: entry in srpt_rdma_ch.rsp_backlog.
 * @sense_data: sense buffer handed to LIO.
 * @cmd: LIO command.
 */
struct srpt_send_ioctx {
	struct srpt_ioctx	ioctx;
	struct srpt_rdma_ch	*ch;
	struct ib_cqe		rdma_cqe;
	struct scatterlist	imm_sg;
	struct srpt_rw_ctx	s_rw_ctx;
	struct srpt_recv_ioctx	*recv_ioctx;
	/* From here on: per command, see srpt_get_send_ioctx(). */
	enum srpt_command_state	state;
	enum dma_data_direction	rw_dir;
	struct srpt_rw_ctx	*rw_ctxs;
	u32			n_rw_ctx;
	u32			n_rdma;
	u32			rw_len;
	u32			charged;
	bool			queue_status_only;
	bool			local;
	bool			rsp_data;
	u32			rsp_len;
	struct list_head	rsp_entry;
	u8			sense_data[TRANSPORT_SENSE_BUFFER];
	struct se_cmd		cmd;
};

/**
 * enum srpt_ch_state - channel state; it only ever moves forward
 * @CH_CONNECTING: login accepted, waiting for RTU / ESTABLISHED.
 * @CH_LIVE: QP in RTS, IUs are processed.
 * @CH_DISCONNECTING: DREQ sent or received.
 * @CH_DRAINING: QP in the error state, zero-length write posted.
 * @CH_DISCONNECTED: drained; release work scheduled.
 */
enum srpt_ch_state {
	CH_CONNECTING,
	CH_LIVE,
	CH_DISCONNECTING,
	CH_DRAINING,
	CH_DISCONNECTED,
};

/**
 * struct srpt_rdma_ch - one RDMA channel
 * @nexus: I_T nexus of the channel.
 * @sport: port the channel was accepted on.
 * @stpg: TPG whose session the channel carries; holds a channel count.
 * @qp: queue pair.
 * @cq: completion queue from the CQ pool, shared by send and receive.
 * @cq_size: CQEs taken from the pool.
 * @ib_cm_id: IB CM id when !@using_rdma_cm.
 * @rdma_cm_id: RDMA CM id when @using_rdma_cm.
 * @zw_live_cqe: completion of the zero-length write that starts wait list
 *	processing once the channel is live.
 * @zw_drain_cqe: completion of the zero-length write that marks the send
 *	queue drained.
 * @kref: references; the initial one is dropped by the release work.
 * @released: completed once the channel is fully released.
 * @rq_size: receive ring size, also the number of send contexts and credits.
 * @max_rsp_size: size of each response buffer.
 * @max_ti_iu_len: largest IU the initiator accepts from us.
 * @sq_wr_avail: send queue slots not in use.
 * @sq_wr_max: send queue slots in all, the value @sq_wr_avail starts at.
 * @req_lim: credits the initiator holds.
 * @req_lim_delta: credits to return with the next response.
 * @imm_data_offset: offset of immediate data in SRP_CMD, 0 if not supported.
 * @lock: protects @state.
 * @state: see enum srpt_ch_state.
 * @using_rdma_cm: which CM the channel uses.
 * @use_srq: receives come from the device SRQ, not @ioctx_recv_ring.
 * @processing_wait_list: set while the CQ context walks @cmd_wait_list.
 * @rsp_buf_cache: slab of response buffers.
 * @ioctx_ring: send contexts, indexed by LIO tag.
 * @req_buf_cache: slab of receive buffers when !@use_srq.
 * @ioctx_recv_ring: receive contexts when !@use_srq.
 * @list: entry in srpt_nexus.ch_list, protected by srpt_port.mutex.
 * @cmd_wait_list: IUs received before the channel went live or while no send
 *	context was free. Only touched from the channel's CQ context.
 * @rsp_lock: protects @rsp_backlog, @rsp_busy and @rsp_backlog_closed, and
 *	orders the posts of the responses taken off @rsp_backlog.
 * @rsp_backlog: responses that found the send queue full, or others
 *	waiting; posted, in order, as completions free slots
 *	(srpt_post_rsp_backlog(), and srpt_rsp_work() for reads).
 * @rsp_busy: srpt_rsp_work() has the head of @rsp_backlog off the list
 *	while it tries to post it: the backlog is not empty.
 * @rsp_work: posts the read responses of @rsp_backlog, in process context.
 * @rsp_backlog_closed: set by the release work once the send queue is
 *	drained: no completion will come to post a response any more, so
 *	one that finds no room is dropped.
 * @pkey: partition key of the connection.
 * @sess: LIO session.
 * @nacl: the ACL that admitted the login; only compared, never
 *	dereferenced (LIO closes the channel before it frees the ACL).
 * @id: channel number, unique while the module is loaded; the "CID" of
 *	the ACL's info attribute and of log messages.
 * @login_time: wall clock time the channel was linked into its nexus,
 *	written under srpt_port.mutex.
 * @sess_name: initiator address used in log messages.
 * @login_done: completed when the login that built the channel is done
 *	with it: its session is set up (or not) and the connection accepted
 *	(or not). The release work waits for it before it touches @sess.
 * @release_work: runs srpt_release_channel_work().
 * @fatal_work: closes the channel after a fatal QP event or a failed
 *	receive, see srpt_ch_fatal().
 * @close_work: closes the channel if the initiator has not answered its
 *	DREQ within %SRPT_CLOSE_WAIT_SECS, see srpt_ch_close_later().
 * @rd_resp: RDMA READs the initiator may have outstanding towards us: the
 *	REP's responder resources and the QP's max_dest_rd_atomic.
 * @rd_init: RDMA READs we may have outstanding towards the initiator: the
 *	REP's initiator depth and the QP's max_rd_atomic.
 * @data_bytes: bytes of data buffers its commands hold, at most
 *	%SRPT_CH_DATA_BUDGET (srpt_ch_charge_data()).
 * @cmds_by_fmt: SRP_CMDs accepted, by the format of their data descriptor
 *	(SRP_NO_DATA_DESC ... SRP_DATA_DESC_IMM); written only from the CQ
 *	context, read by the ACL's info attribute.
 */
struct srpt_rdma_ch {
	struct srpt_nexus	*nexus;
	struct srpt_port	*sport;
	struct srpt_tpg		*stpg;
	struct ib_qp		*qp;
	struct ib_cq		*cq;
	u32			cq_size;
	struct ib_cm_id		*ib_cm_id;
	struct rdma_cm_id	*rdma_cm_id;
	struct ib_cqe		zw_live_cqe;
	struct ib_cqe		zw_drain_cqe;
	struct kref		kref;
	struct completion	released;
	u32			rq_size;
	u32			max_rsp_size;
	u32			max_ti_iu_len;
	atomic_t		sq_wr_avail;
	u32			sq_wr_max;
	atomic_t		req_lim;
	atomic_t		req_lim_delta;
	u16			imm_data_offset;
	u8			rd_resp;
	u8			rd_init;
	spinlock_t		lock;	/* protects @state */
	enum srpt_ch_state	state;
	bool			using_rdma_cm;
	bool			use_srq;
	bool			processing_wait_list;
	struct kmem_cache	*rsp_buf_cache;
	struct srpt_send_ioctx	**ioctx_ring;
	struct kmem_cache	*req_buf_cache;
	struct srpt_recv_ioctx	**ioctx_recv_ring;
	struct list_head	list;
	struct list_head	cmd_wait_list;
	/* protects @rsp_backlog, @rsp_busy, @rsp_backlog_closed */
	spinlock_t		rsp_lock;
	struct list_head	rsp_backlog;
	bool			rsp_busy;
	bool			rsp_backlog_closed;
	struct delayed_work	rsp_work;
	u16			pkey;
	struct se_session	*sess;
	const struct se_node_acl *nacl;
	u32			id;
	time64_t		login_time;
	char			sess_name[64];
	struct completion	login_done;
	struct work_struct	release_work;
	struct work_struct	fatal_work;
	struct delayed_work	close_work;
	atomic_t		data_bytes;
	u64			cmds_by_fmt[SRP_DATA_DESC_IMM + 1];
};

/**
 * struct srpt_nexus - I_T nexus
 * @entry: entry in srpt_port.nexus_list.
 * @ch_list: channels of this nexus, protected by srpt_port.mutex.
 * @i_port_id: initiator port identifier from SRP_LOGIN_REQ.
 * @t_port_id: target port identifier from SRP_LOGIN_REQ.
 * @src: the initiator that made it: its port GUID (IB CM) or IP address
 *	(RDMA/CM), as srpt_login.src_name.
 * @id: session number shown by the ACL's info attribute; set under
 *	srpt_port.mutex when the first channel is linked, 0 before.
 */
struct srpt_nexus {
	struct list_head	entry;
	struct list_head	ch_list;
	u32			id;
	u8			i_port_id[16];
	u8			t_port_id[16];
	char			src[64];
};

/**
 * struct srpt_tpg_attrib - settings of one TPG, applied to new logins
 * @srp_max_rdma_size: advertised largest RDMA transfer.
 * @srp_max_rsp_size: size of each response buffer.
 * @srp_sq_size: send queue size requested for each channel.
 * @use_srq: receive through the device's shared receive queue (0 or 1).
 *
 * All fields are u32, so that one table describes them to configfs.
 */
struct srpt_tpg_attrib {
	u32	srp_max_rdma_size;
	u32	srp_max_rsp_size;
	u32	srp_sq_size;
	u32	use_srq;
};

/**
 * struct srpt_tpg - a target portal group
 * @entry: entry in srpt_port_id.tpg_list.
 * @sport_id: WWN the TPG lives under.
 * @tpg: LIO TPG.
 * @tag: TPG tag, from the "tpgt_<n>" directory name.
 * @attrib: settings, protected by srpt_port_id.mutex for writers; logins read
 *	them under the same mutex.
 * @enabled: accepts logins; written under srpt_port.mutex.
 * @nr_channels: channels carrying a session of this TPG.
 */
struct srpt_tpg {
	struct list_head	entry;
	struct srpt_port_id	*sport_id;
	struct se_portal_group	tpg;
	u16			tag;
	struct srpt_tpg_attrib	attrib;
	bool			enabled;
	atomic_t		nr_channels;
};

/**
 * struct srpt_port_id - a WWN directory naming a port
 * @mutex: protects @tpg_list and the attributes of its TPGs.
 * @tpg_list: TPGs below this WWN.
 * @wwn: LIO WWN.
 * @name: canonical name of the port in the form of this WWN.
 */
struct srpt_port_id {
	struct mutex		mutex;	/* protects @tpg_list, TPG attributes */
	struct list_head	tpg_list;
	struct se_wwn		wwn;
	char			name[64];
};

/**
 * struct srpt_port - one port of an RDMA device
 * @sdev: device the port belongs to.
 * @mad_agent: DM agent, NULL where DM is not available.
 * @port: one-based port number.
 * @sm_lid: cached subnet manager LID.
 * @lid: cached port LID.
 * @gid: cached GID at index 0.
 * @work: runs srpt_refresh_port() after port events.
 * @guid_name: port name in GUID form.
 * @guid_id: WWN using @guid_name, protected by srpt_dev_mutex.
 * @gid_name: port name in GID form.
 * @gid_id: WWN using @gid_name, protected by srpt_dev_mutex.
 * @dm_rdma_size: RDMA size advertised in IOControllerProfile, the value
 *	last written to a srp_max_rdma_size attribute of this port.
 * @refcount: logins in progress and channels not yet released.
 * @removing: the device is going away; no new logins. Set under @mutex.
 * @mutex: protects @nexus_list, @nr_nexus, the channel lists, TPG enable
 *	and accepting a connection against disconnecting it.
 * @nexus_list: I_T nexuses.
 * @nr_nexus: entries in @nexus_list, at most %SRPT_MAX_NEXUS.
 */
struct srpt_port {
	struct srpt_device	*sdev;
	struct ib_mad_agent	*mad_agent;
	u32			port;
	u32			sm_lid;
	u32			lid;
	union ib_gid		gid;
	struct work_struct	work;
	char			guid_name[64];
	struct srpt_port_id	*guid_id;
	char			gid_name[64];
	struct srpt_port_id	*gid_id;
	u32			dm_rdma_size;
	atomic_t		refcount;
	bool			removing;
	struct mutex		mutex;	/* protects nexuses, channels, enable */
	struct list_head	nexus_list;
	u32			nr_nexus;
};

/**
 * struct srpt_device - per RDMA device state
 * @refcnt: holders are the ib_client and each WWN directory.
 * @device: the RDMA device; only valid until srpt_remove_one().
 * @pd: protection domain.
 * @lkey: local DMA key of @pd.
 * @mutex: protects @srq, @srq_ring and @req_buf_cache.
 * @srq: shared receive queue, created when the first SRQ channel logs in.
 * @srq_size: SRQ size.
 * @req_buf_cache: slab of SRQ receive buffers.
 * @srq_ring: SRQ receive contexts.
 * @cm_id: IB CM listener; NULL on non-IB link layers.
 * @event_handler: asynchronous event handler.
 * @list: entry in srpt_dev_list, protected by srpt_dev_mutex.
 * @port: the ports.
 */
struct srpt_device {
	struct kref		refcnt;
	struct ib_device	*device;
	struct ib_pd		*pd;
	u32			lkey;
	struct mutex		mutex;	/* protects the SRQ fields */
	struct ib_srq		*srq;
	u32			srq_size;
	struct kmem_cache	*req_buf_cache;
	struct srpt_recv_ioctx	**srq_ring;
	struct ib_cm_id		*cm_id;
	struct ib_event_handler	event_handler;
	struct list_head	list;
	struct srpt_port	port[];
};

/**
 * struct srpt_desc_info - result of parsing the data descriptors of SRP_CMD
 * @dir: transfer direction.
 * @fmt: SRP_NO_DATA_DESC, SRP_DATA_DESC_DIRECT, _INDIRECT or _IMM.
 * @descs: first direct descriptor inside the IU (direct and indirect).
 * @n_desc: number of descriptors at @descs.
 * @data_len: total transfer length.
 * @imm_offset: offset of immediate data from the start of the IU.
 */
struct srpt_desc_info {
	enum dma_data_direction		dir;
	u8				fmt;
	const struct srp_direct_buf	*descs;
	u32				n_desc;
	u32				data_len;
	u32				imm_offset;
};

/**
 * struct srpt_port_name - a parsed WWN or ACL name
 * @kind: which form the name had.
 * @guid: port GUID for %SRPT_NAME_GUID.
 * @id: 128-bit identifier for %SRPT_NAME_ID.
 */
struct srpt_port_name {
	enum { SRPT_NAME_GUID, SRPT_NAME_ID, SRPT_NAME_IP } kind;
	u64	guid;
	u8	id[16];
};

/**
 * struct srpt_ch_info - a snapshot of one channel for an ACL's info file
 * @sid: session (nexus) number.
 * @cid: channel number.
 * @state: channel state.
 * @rdma_cm: logged in over the RDMA/CM rather than the IB CM.
 * @use_srq: receives through the device's shared receive queue.
 * @imm_data: immediate data accepted.
 * @pkey: partition key of the connection.
 * @queue_depth: credits granted at login (receive ring size).
 * @credits: credits the initiator holds now.
 * @outstanding: commands being executed or transferring data.
 * @cmds_by_fmt: copy of srpt_rdma_ch.cmds_by_fmt.
 * @login_time: wall clock time of the login, 0 while connecting.
 * @i_port_id: initiator port id.
 * @t_port_id: target port id presented at login.
 * @addr: the initiator's IP address (RDMA/CM) or port GUID (IB CM).
 */
struct srpt_ch_info {
	u32			sid;
	u32			cid;
	enum srpt_ch_state	state;
	bool			rdma_cm;
	bool			use_srq;
	bool			imm_data;
	u16			pkey;
	u32			queue_depth;
	u32			credits;
	u32			outstanding;
	u64			cmds_by_fmt[SRP_DATA_DESC_IMM + 1];
	time64_t		login_time;
	u8			i_port_id[16];
	u8			t_port_id[16];
	char			addr[64];
};

/* srpt_svc.c */
extern struct list_head srpt_dev_list;
struct kmem_cache *srpt_cache_get(unsigned int object_size);
void srpt_cache_put(struct kmem_cache *cache);
int srpt_get_srq(struct srpt_device *sdev);
void srpt_free_srq(struct srpt_device *sdev);
void srpt_sdev_put(struct srpt_device *sdev);
struct srpt_device *srpt_sdev_get(struct ib_device *device);
struct srpt_port *srpt_lookup_port(const char *name,
				   struct srpt_port_id ***slot);
void srpt_log_port_names(const char *wrong);
void srpt_format_guid(char *buf, size_t size, __be64 guid);
void srpt_format_id(char *buf, size_t size, const u8 id[16]);
int srpt_parse_guid(u64 *guid, const char *name);
int srpt_parse_i_port_id(u8 i_port_id[16], const char *name);
int srpt_parse_port_name(const char *name, struct srpt_port_name *out);

/* srpt_mad.c */
void srpt_set_ioc(u8 *c_list, u32 slot, u8 value);
void srpt_get_class_port_info(struct srpt_dm_mad *mad);
void srpt_get_iou(struct srpt_dm_mad *mad);
void srpt_get_ioc(struct srpt_port *sport, u32 slot, struct srpt_dm_mad *mad);
void srpt_get_svc_entries(u64 ioc_guid, u16 slot, u8 hi, u8 lo,
			  struct srpt_dm_mad *mad);
void srpt_mgmt_method_get(struct srpt_port *sp, const struct ib_mad *rq_mad,
			  struct srpt_dm_mad *rsp_mad);
int srpt_refresh_port(struct srpt_port *sport);
void srpt_unregister_mad_agent(struct srpt_device *sdev, u32 port_cnt);

/* srpt_ch.c */
struct srpt_recv_ioctx **srpt_recv_ring_alloc(struct srpt_device *sdev, u32 n,
					      struct kmem_cache *cache,
					      u32 offset);
void srpt_recv_ring_free(struct srpt_device *sdev, struct srpt_recv_ioctx **ring,
			 u32 n, struct kmem_cache *cache);
int srpt_send_ring_alloc(struct srpt_rdma_ch *ch);
void srpt_ch_free_rings(struct srpt_rdma_ch *ch);
int srpt_post_recv(struct srpt_device *sdev, struct srpt_rdma_ch *ch,
		   struct srpt_recv_ioctx *ioctx);
bool srpt_set_ch_state(struct srpt_rdma_ch *ch, enum srpt_ch_state new);
const char *srpt_ch_state_name(enum srpt_ch_state state);
int srpt_zerolength_write(struct srpt_rdma_ch *ch, struct ib_cqe *cqe);
int srpt_create_ch_ib(struct srpt_rdma_ch *ch, u32 sq_size);
void srpt_destroy_ch_ib(struct srpt_rdma_ch *ch);
int srpt_ch_qp_rtr(struct srpt_rdma_ch *ch, struct ib_qp *qp);
int srpt_ch_qp_rts(struct srpt_rdma_ch *ch, struct ib_qp *qp);
bool srpt_close_ch(struct srpt_rdma_ch *ch);
void srpt_ch_fatal(struct srpt_rdma_ch *ch);
void srpt_ch_send_failed(struct srpt_rdma_ch *ch, const struct ib_wc *wc,
			 const char *what);
bool srpt_disconnect_ch(struct srpt_rdma_ch *ch);
bool srpt_end_ch(struct srpt_rdma_ch *ch);
void srpt_disconnect_ch_sync(struct srpt_rdma_ch *ch);
void srpt_close_tpg_channels(struct srpt_port *sport, struct srpt_tpg *stpg);
struct srpt_nexus *srpt_get_nexus(struct srpt_port *sport,
				  const u8 i_port_id[16],
				  const u8 t_port_id[16], const char *src,
				  struct srpt_nexus *new);
void srpt_ch_close_later(struct srpt_rdma_ch *ch);
void srpt_unlink_ch(struct srpt_rdma_ch *ch);
void srpt_put_ch(struct srpt_rdma_ch *ch);
void srpt_init_ch(struct srpt_rdma_ch *ch, struct srpt_port *sport);
void srpt_free_ch(struct kref *kref);
int srpt_release_sport(struct srpt_port *sport);

/* srpt_cm.c */
int srpt_cm_handler(struct ib_cm_id *cm_id, const struct ib_cm_event *event);
int srpt_rdma_cm_port_set(u16 port);
u16 srpt_rdma_cm_port_get(void);
void srpt_rdma_cm_stop(void);
void srpt_cm_rtu_recv(struct srpt_rdma_ch *ch);
int srpt_cm_send_disconnect(struct srpt_rdma_ch *ch);

/* srpt_io.c and srpt_rsp.c */
void srpt_recv_done(struct ib_cq *cq, struct ib_wc *wc);
void srpt_send_done(struct ib_cq *cq, struct ib_wc *wc);
void srpt_release_ioctx(struct srpt_send_ioctx *ioctx);
void srpt_repost_recv(struct srpt_rdma_ch *ch, struct srpt_recv_ioctx *recv);
void srpt_send_local_tmf_rsp(struct srpt_rdma_ch *ch,
			     struct srpt_send_ioctx *ioctx, u8 code, u64 tag);
void srpt_zerolength_write_done(struct ib_cq *cq, struct ib_wc *wc);
void srpt_process_wait_list(struct srpt_rdma_ch *ch);
enum srpt_command_state srpt_set_cmd_state(struct srpt_send_ioctx *ioctx,
					   enum srpt_command_state new);
bool srpt_test_and_set_cmd_state(struct srpt_send_ioctx *ioctx,
				 enum srpt_command_state old,
				 enum srpt_command_state new);
int srpt_write_pending(struct se_cmd *se_cmd);
int srpt_send_response(struct se_cmd *cmd, bool may_wait);
int srpt_queue_response(struct se_cmd *cmd);
int srpt_queue_data_rsp(struct se_cmd *cmd);
void srpt_rsp_work(struct work_struct *work);
void srpt_drop_rsp(struct srpt_send_ioctx *ioctx, int err);
void srpt_post_rsp_backlog(struct srpt_rdma_ch *ch);
void srpt_close_rsp_backlog(struct srpt_rdma_ch *ch);
int srpt_queue_status(struct se_cmd *cmd);
void srpt_aborted_task(struct se_cmd *cmd);
void srpt_free_rw_ctxs(struct srpt_rdma_ch *ch, struct srpt_send_ioctx *ioctx);
int srpt_trim_rw_ctxs(struct srpt_send_ioctx *ioctx, u32 len);
struct ib_send_wr *srpt_rw_wrs(struct srpt_send_ioctx *ioctx,
			       struct ib_cqe *cqe, struct ib_send_wr *next);
int srpt_build_cmd_rsp(struct srpt_rdma_ch *ch, struct srpt_send_ioctx *ioctx,
		       u64 tag, int status);
int srpt_build_tskmgmt_rsp(struct srpt_rdma_ch *ch,
			   struct srpt_send_ioctx *ioctx, u8 rsp_code, u64 tag);

/* srpt_configfs.c */
extern struct configfs_attribute *srpt_tpg_attrib_attrs[];
extern struct configfs_attribute *srpt_da_attrs[];
extern struct configfs_attribute *srpt_wwn_attrs[];
extern struct configfs_attribute *srpt_acl_attrs[];
extern struct configfs_attribute *srpt_acl_auth_attrs[];
void srpt_tpg_attrib_init(struct srpt_tpg_attrib *attrib);
ssize_t srpt_format_acl_info(char *buf, size_t size, const char *acl_name,
			     const struct srpt_ch_info *ci, unsigned int n,
			     unsigned int more, time64_t now);
int srpt_parse_acl_name(const char *name, struct srpt_port_name *out);

#if IS_ENABLED(CONFIG_KUNIT)
/* File-local helpers made visible to srpt_kunit.c. */
u32 srpt_check_login_req(const struct srp_login_req *req, u32 max_req_size,
			 u64 service_guid, char *why, size_t why_size);
int srpt_parse_desc_tbl(const struct srp_cmd *cmd, u32 iu_len,
			u16 imm_data_offset, struct srpt_desc_info *info);
int srpt_iu_opcode(const void *iu, u32 len);
bool srpt_charge_credit(struct srpt_rdma_ch *ch, int opcode);
void srpt_qp_event(struct ib_event *event, void *ptr);
int srpt_send_cm_drep(struct srpt_rdma_ch *ch);
bool srpt_dir_fits_cdb(const u8 *cdb, enum dma_data_direction dir);
u8 srpt_rd_atomic_depth(u8 offered, int dev_max);
void srpt_port_enable_dm(struct srpt_port *sport);
bool srpt_ch_charge_data(struct srpt_rdma_ch *ch, u64 len);
u64 srpt_data_cost(const struct srpt_desc_info *info, u32 len);
u32 srpt_ch_cq_need(u32 cq_size, const struct ib_qp_cap *cap, u32 rq_size,
		    bool use_srq);
struct srpt_send_ioctx *srpt_get_send_ioctx(struct srpt_rdma_ch *ch);
#endif

/* srpt_lio.c */
static inline struct srpt_tpg *srpt_tpg_from_se(struct se_portal_group *tpg)
{
	return container_of(tpg, struct srpt_tpg, tpg);
}

static inline struct srpt_port *srpt_tpg_to_sport(struct se_portal_group *tpg)
{
	return tpg->se_tpg_wwn->priv;
}

#endif /* SRPT_PRIV_H */
