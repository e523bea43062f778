// SPDX-License-Identifier: GPL-2.0-only
/*
 * ib_srpt: connection management - the IB CM and RDMA/CM callbacks, the
 * RDMA/CM listener, and SRP login.
 *
 * A login is checked completely before anything is allocated: request
 * format, target port id, whether the port is going away, and which enabled
 * TPG has an ACL for the initiator. Each failure is rejected with the SRP
 * reason that describes it. Only then is the channel built (rings, QP,
 * session); until it is linked into its nexus every failure unwinds
 * directly and the CM destroys the CM id. After that the channel is closed
 * through the normal drain path, which also owns the CM id.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/inet.h>
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/unaligned.h>
#include <linux/wait_bit.h>
#include <rdma/ib_cache.h>
#include <target/target_core_base.h>
#include <target/target_core_fabric.h>
#include <kunit/static_stub.h>
#include <kunit/visibility.h>

#include "srpt_priv.h"

/* Protects srpt_rdma_cm_port and srpt_rdma_cm_listen_id. */
static DEFINE_MUTEX(srpt_rdma_cm_mutex);
static u16 srpt_rdma_cm_port;
static struct rdma_cm_id *srpt_rdma_cm_listen_id;

/* Numbers for sessions (nexuses) and channels, as the ACL info shows them. */
static atomic_t srpt_next_sid = ATOMIC_INIT(0);
static atomic_t srpt_next_cid = ATOMIC_INIT(0);

/**
 * struct srpt_login - what a login request brings and what it was matched to
 * @sdev: device the request arrived on.
 * @sport: port the request arrived on.
 * @ib_cm_id: IB CM id, or NULL.
 * @rdma_cm_id: RDMA/CM id, or NULL.
 * @req: the SRP_LOGIN_REQ.
 * @pkey: partition of the connection.
 * @resp_res: RDMA READs the REQ lets the initiator have outstanding
 *	towards us (the CM's responder_resources, seen from our side).
 * @init_depth: RDMA READs the REQ lets us have outstanding towards the
 *	initiator (the CM's initiator_depth, seen from our side).
 * @src_name: initiator port GUID (IB CM) or IP address (RDMA/CM).
 * @id_name: initiator port id as "0x" and 32 hex digits.
 * @port_name: the RDMA device and port, "<device>-<port>", for the log.
 * @stpg: TPG chosen for the session, holding a channel count.
 * @acl_name: the name of the ACL that admitted the initiator.
 * @attrib: snapshot of the TPG settings.
 * @ch: the channel, once it is linked into its nexus and owns the CM id.
 * @why: for the log, why the login fails: what was presented, what was
 *	expected; see srpt_login_fail().
 */
struct srpt_login {
	struct srpt_device		*sdev;
	struct srpt_port		*sport;
	struct ib_cm_id			*ib_cm_id;
	struct rdma_cm_id		*rdma_cm_id;
	const struct srp_login_req	*req;
	u16				pkey;
	u8				resp_res;
	u8				init_depth;
	char				src_name[64];
	char				id_name[40];
	char				port_name[IB_DEVICE_NAME_MAX + 12];
	struct srpt_tpg			*stpg;
	const char			*acl_name;
	struct srpt_tpg_attrib		attrib;
	struct srpt_rdma_ch		*ch;
	char				why[192];
};

/**
 * srpt_check_login_req - validate the fields of an SRP_LOGIN_REQ
 * @req: the request.
 * @max_req_size: largest IU the target can receive.
 * @service_guid: the target's id; both halves of the target port id must
 *	equal it.
 * @why: where to write, for the log, what the request presented and what
 *	was expected; left untouched when the request is acceptable.
 * @why_size: size of @why.
 *
 * Context: any context.
 * Return: 0 if the request is acceptable, else the SRP_LOGIN_REJ reason
 * (enum srp_login_rej_reason) that says why not.
 */
VISIBLE_IF_KUNIT u32 srpt_check_login_req(const struct srp_login_req *req,
					  u32 max_req_size, u64 service_guid,
					  char *why, size_t why_size)
{
	u32 it_iu_len = be32_to_cpu(req->req_it_iu_len);
	u16 buf_fmt = be16_to_cpu(req->req_buf_fmt);
	u8 mca = req->req_flags & SRPT_MCA_MASK;

	if (req->opcode != SRP_LOGIN_REQ) {
		snprintf(why, why_size,
			 "opcode 0x%02x presented, 0x%02x (SRP_LOGIN_REQ) expected",
			 req->opcode, SRP_LOGIN_REQ);
		return SRP_LOGIN_REJ_UNABLE_ESTABLISH_CHANNEL;
	}
	if (it_iu_len > max_req_size) {
		snprintf(why, why_size,
			 "IU length %u presented, at most %u (srp_max_req_size) expected",
			 it_iu_len, max_req_size);
		return SRP_LOGIN_REJ_REQ_IT_IU_LENGTH_TOO_LARGE;
	}
	/* There is no "too small" reason; 64 bytes hold any request IU. */
	if (it_iu_len < SRPT_MIN_IT_IU_LEN) {
		snprintf(why, why_size,
			 "IU length %u presented, at least %u expected",
			 it_iu_len, SRPT_MIN_IT_IU_LEN);
		return SRP_LOGIN_REJ_UNABLE_ESTABLISH_CHANNEL;
	}
	if (!(buf_fmt & (SRP_BUF_FORMAT_DIRECT | SRP_BUF_FORMAT_INDIRECT))) {
		snprintf(why, why_size,
			 "buffer formats 0x%x presented, direct 0x%x or indirect 0x%x expected",
			 buf_fmt, SRP_BUF_FORMAT_DIRECT,
			 SRP_BUF_FORMAT_INDIRECT);
		return SRP_LOGIN_REJ_UNSUPPORTED_DESCRIPTOR_FMT;
	}
	/* MULTI-CHANNEL ACTION values 2 and 3 are reserved. */
	if (mca > SRP_MULTICHAN_MULTI) {
		snprintf(why, why_size,
			 "multi-channel action %u presented, %u or %u expected",
			 mca, SRP_MULTICHAN_SINGLE, SRP_MULTICHAN_MULTI);
		return SRP_LOGIN_REJ_UNABLE_ESTABLISH_CHANNEL;
	}
	if (get_unaligned_be64(req->target_port_id) != service_guid ||
	    get_unaligned_be64(req->target_port_id + 8) != service_guid) {
		snprintf(why, why_size,
			 "target port id 0x%016llx%016llx presented, 0x%016llx%016llx expected",
			 get_unaligned_be64(req->target_port_id),
			 get_unaligned_be64(req->target_port_id + 8),
			 service_guid, service_guid);
		return SRP_LOGIN_REJ_UNABLE_ASSOCIATE_CHANNEL;
	}
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(srpt_check_login_req);

static const char *srpt_rej_reason_str(u32 reason)
{
	switch (reason) {
	case SRP_LOGIN_REJ_UNABLE_ESTABLISH_CHANNEL:
		return "unable to establish channel";
	case SRP_LOGIN_REJ_INSUFFICIENT_RESOURCES:
		return "insufficient resources";
	case SRP_LOGIN_REJ_REQ_IT_IU_LENGTH_TOO_LARGE:
		return "IU length too large";
	case SRP_LOGIN_REJ_UNABLE_ASSOCIATE_CHANNEL:
		return "wrong target port id";
	case SRP_LOGIN_REJ_UNSUPPORTED_DESCRIPTOR_FMT:
		return "unsupported descriptor format";
	case SRP_LOGIN_REJ_CHANNEL_LIMIT_REACHED:
		return "channel limit reached";
	default:
		return "no reason specified";
	}
}

/**
 * srpt_login_fail - note why a login fails
 * @lg: the login.
 * @reason: SRP_LOGIN_REJ reason for the initiator.
 * @fmt: printf format of the cause: what was presented, what was expected.
 *
 * Context: any context.
 * Return: @reason, for the caller to return.
 */
static __printf(3, 4) u32 srpt_login_fail(struct srpt_login *lg, u32 reason,
					  const char *fmt, ...)
{
	va_list args;

	va_start(args, fmt);
	vsnprintf(lg->why, sizeof(lg->why), fmt, args);
	va_end(args);
	return reason;
}

/**
 * srpt_send_login_rej - reject a login and say why in the log
 * @lg: the login, with @lg->why filled in by srpt_login_fail().
 * @reason: SRP_LOGIN_REJ reason sent to the initiator.
 *
 * Any host that reaches the CM can send logins, so the message is rate
 * limited: a flood of bad logins cannot fill the log.
 *
 * Context: process context (CM callback).
 */
static void srpt_send_login_rej(struct srpt_login *lg, u32 reason)
{
	struct srp_login_rej rej = {
		.opcode = SRP_LOGIN_REJ,
		.reason = cpu_to_be32(reason),
		.tag = lg->req ? lg->req->tag : 0,
		.buf_fmt = cpu_to_be16(SRP_BUF_FORMAT_DIRECT |
				       SRP_BUF_FORMAT_INDIRECT),
	};

	pr_warn_ratelimited("login of %s from %s on %s rejected (%s): %s\n",
			    lg->id_name[0] ? lg->id_name : "?", lg->src_name,
			    lg->port_name, srpt_rej_reason_str(reason),
			    lg->why);
	if (lg->rdma_cm_id)
		rdma_reject(lg->rdma_cm_id, &rej, sizeof(rej),
			    IB_CM_REJ_CONSUMER_DEFINED);
	else
		ib_send_cm_rej(lg->ib_cm_id, IB_CM_REJ_CONSUMER_DEFINED, NULL,
			       0, &rej, sizeof(rej));
}

/* Try the candidate ACL names of @lg against one TPG. */
static const char *srpt_tpg_acl_match(struct srpt_tpg *stpg,
				      struct srpt_login *lg)
{
	/* "0x" + id as targetcli names ACLs, the bare id, GUID or address. */
	if (target_tpg_has_node_acl(&stpg->tpg, lg->id_name))
		return lg->id_name;
	if (target_tpg_has_node_acl(&stpg->tpg, lg->id_name + 2))
		return lg->id_name + 2;
	if (lg->src_name[0] && target_tpg_has_node_acl(&stpg->tpg, lg->src_name))
		return lg->src_name;
	return NULL;
}

static int srpt_login_scan_port_id(struct srpt_port_id *pid,
				   struct srpt_login *lg, bool *any_enabled)
{
	struct srpt_tpg *stpg;

	if (!pid)
		return -ENOENT;
	guard(mutex)(&pid->mutex);
	list_for_each_entry(stpg, &pid->tpg_list, entry) {
		if (!READ_ONCE(stpg->enabled))
			continue;
		*any_enabled = true;
		lg->acl_name = srpt_tpg_acl_match(stpg, lg);
		if (!lg->acl_name)
			continue;
		atomic_inc(&stpg->nr_channels);
		lg->stpg = stpg;
		lg->attrib = stpg->attrib;
		return 0;
	}
	return -ENOENT;
}

/**
 * srpt_login_find_tpg - choose the TPG and ACL for a login
 * @lg: the login.
 *
 * Context: process context; takes srpt_dev_mutex and srpt_port_id.mutex.
 * Return: 0 with @lg->stpg holding a channel count, else the reject reason.
 */
static u32 srpt_login_find_tpg(struct srpt_login *lg)
{
	struct srpt_port *sport = lg->sport;
	bool any_enabled = false;
	char gid_name[64], guid_name[64];

	mutex_lock(&srpt_dev_mutex);
	if (srpt_login_scan_port_id(sport->gid_id, lg, &any_enabled))
		srpt_login_scan_port_id(sport->guid_id, lg, &any_enabled);
	strscpy(gid_name, sport->gid_name, sizeof(gid_name));
	strscpy(guid_name, sport->guid_name, sizeof(guid_name));
	mutex_unlock(&srpt_dev_mutex);

	if (lg->stpg)
		return 0;
	if (!any_enabled)
		return srpt_login_fail(lg, SRP_LOGIN_REJ_UNABLE_ESTABLISH_CHANNEL,
				       "no enabled TPG under srpt/%s or srpt/%s",
				       gid_name, guid_name);
	return srpt_login_fail(lg, SRP_LOGIN_REJ_UNABLE_ESTABLISH_CHANNEL,
			       "no ACL for this initiator: none named %s, %s or %s in an enabled TPG (targetcli: acls create ib.%s)",
			       lg->id_name, lg->id_name + 2, lg->src_name,
			       lg->id_name + 2);
}

static void srpt_login_put_tpg(struct srpt_tpg *stpg)
{
	if (atomic_dec_and_test(&stpg->nr_channels))
		wake_up_var(&stpg->nr_channels);
}

static void srpt_login_put_sport(struct srpt_port *sport)
{
	if (atomic_dec_and_test(&sport->refcount))
		wake_up_var(&sport->refcount);
}

/* Allocate the send ring, and the receive ring unless the SRQ is used. */
static int srpt_ch_alloc_rings(struct srpt_rdma_ch *ch,
			       const struct srp_login_req *req,
			       struct srp_login_rsp *rsp)
{
	struct srpt_device *sdev = ch->sport->sdev;
	u16 imm_off = be16_to_cpu(req->imm_data_offset);
	u32 it_iu_len = be32_to_cpu(req->req_it_iu_len);
	u32 align = 0;

	ch->rsp_buf_cache = srpt_cache_get(ch->max_rsp_size);
	if (!ch->rsp_buf_cache)
		return -ENOMEM;
	if (srpt_send_ring_alloc(ch))
		return -ENOMEM;
	if (ch->use_srq)
		return 0;

	/*
	 * Immediate data needs its own, suitably aligned receive buffers.
	 * It is granted only where an SRP_CMD and the descriptor that gives
	 * the data's length fit before it, or no command could use it.
	 */
	if ((req->req_flags & SRP_IMMED_REQUESTED) &&
	    imm_off >= sizeof(struct srp_cmd) + sizeof(struct srp_imm_buf) &&
	    imm_off < it_iu_len) {
		ch->imm_data_offset = imm_off;
		rsp->rsp_flags |= SRP_LOGIN_RSP_IMMED_SUPP;
		align = round_up(imm_off, SRPT_BUF_ALIGN) - imm_off;
	}
	ch->req_buf_cache = srpt_cache_get(align + srp_max_req_size);
	if (!ch->req_buf_cache)
		return -ENOMEM;
	ch->ioctx_recv_ring = srpt_recv_ring_alloc(sdev, ch->rq_size,
						   ch->req_buf_cache, align);
	return ch->ioctx_recv_ring ? 0 : -ENOMEM;
}

static void srpt_ch_free_login(struct srpt_rdma_ch *ch)
{
	srpt_ch_free_rings(ch);
	if (ch->rdma_cm_id)
		ch->rdma_cm_id->context = NULL;
	else
		ch->ib_cm_id->context = ch->sport->sdev;
	kfree(ch);
}

/**
 * srpt_rd_atomic_depth - RDMA READ depth of one direction of a channel
 * @offered: what the initiator's REQ allows in that direction, as the CM
 *	reports it from our side (responder resources or initiator depth).
 * @dev_max: the device's limit in that direction (max_qp_rd_atom or
 *	max_qp_init_rd_atom).
 *
 * The REP may not promise more than the REQ offered (IBA 12.7.29, 12.7.30)
 * nor more than the HCA holds; ib_srpt never needs more than
 * %SRPT_RD_ATOMIC.
 *
 * Context: any context.
 * Return: the depth for the REP and for the QP's RTR or RTS attributes.
 */
VISIBLE_IF_KUNIT u8 srpt_rd_atomic_depth(u8 offered, int dev_max)
{
	return clamp(dev_max, 0, (int)min_t(u8, offered, SRPT_RD_ATOMIC));
}
EXPORT_SYMBOL_IF_KUNIT(srpt_rd_atomic_depth);

/*
 * Build the channel of a validated login, up to its queue pair; the session
 * comes once the channel is linked (srpt_ch_start_session()). Returns 0
 * with the channel in *@chp, or the reject reason.
 */
static u32 srpt_ch_build(struct srpt_login *lg, struct srp_login_rsp *rsp,
			 struct srpt_rdma_ch **chp)
{
	const struct ib_device_attr *attrs = &lg->sdev->device->attrs;
	u32 reason = SRP_LOGIN_REJ_INSUFFICIENT_RESOURCES;
	struct srpt_rdma_ch *ch;
	int ret;

	ch = kzalloc(sizeof(*ch), GFP_KERNEL);
	if (!ch)
		return srpt_login_fail(lg, reason, "out of memory");
	srpt_init_ch(ch, lg->sport);
	ch->stpg = lg->stpg;
	ch->pkey = lg->pkey;
	ch->rq_size = min_t(u32, SRPT_MAX_RQ_SIZE, attrs->max_qp_wr);
	ch->max_rsp_size = lg->attrib.srp_max_rsp_size;
	ch->max_ti_iu_len = ch->max_rsp_size;
	ch->rd_resp = srpt_rd_atomic_depth(lg->resp_res, attrs->max_qp_rd_atom);
	ch->rd_init = srpt_rd_atomic_depth(lg->init_depth,
					   attrs->max_qp_init_rd_atom);
	strscpy(ch->sess_name, lg->src_name, sizeof(ch->sess_name));
	ch->id = atomic_inc_return(&srpt_next_cid);
	ch->use_srq = lg->attrib.use_srq && !srpt_get_srq(lg->sdev);
	if (lg->rdma_cm_id) {
		ch->using_rdma_cm = true;
		ch->rdma_cm_id = lg->rdma_cm_id;
		lg->rdma_cm_id->context = ch;
	} else {
		ch->ib_cm_id = lg->ib_cm_id;
		lg->ib_cm_id->context = ch;
	}

	ret = srpt_ch_alloc_rings(ch, lg->req, rsp);
	if (ret) {
		srpt_login_fail(lg, reason, "out of memory for the rings");
		goto err_free_ch;
	}
	ret = srpt_create_ch_ib(ch, lg->attrib.srp_sq_size);
	if (ret) {
		srpt_login_fail(lg, reason, "creating the queue pair failed (%d)",
				ret);
		goto err_free_ch;
	}
	*chp = ch;
	return 0;

err_free_ch:
	srpt_ch_free_login(ch);
	return reason;
}

/* Undo srpt_ch_build() of a channel that was never linked. */
static void srpt_ch_unbuild(struct srpt_rdma_ch *ch)
{
	srpt_destroy_ch_ib(ch);
	srpt_ch_free_login(ch);
}

/*
 * Give a linked channel its LIO session. Only now does the session become
 * visible through the ACL, whose removal closes the channel (LIO's
 * close_session): a linked channel is only ever freed by its release work,
 * never under a close running from the ACL. Returns 0 or the reject
 * reason.
 */
static u32 srpt_ch_start_session(struct srpt_rdma_ch *ch,
				 struct srpt_login *lg)
{
	struct se_session *sess;
	int ret;

	sess = target_setup_session(&lg->stpg->tpg, ch->rq_size, 1,
				    TARGET_PROT_NORMAL, lg->acl_name, ch, NULL);
	if (IS_ERR(sess)) {
		ret = PTR_ERR(sess);
		return srpt_login_fail(lg, ret == -ENOMEM ?
				       SRP_LOGIN_REJ_INSUFFICIENT_RESOURCES :
				       SRP_LOGIN_REJ_UNABLE_ESTABLISH_CHANNEL,
				       "LIO refused the session (%d)", ret);
	}
	ch->nacl = sess->se_node_acl;
	ch->sess = sess;
	return 0;
}

/*
 * Whether @nexus takes no more channels: %SRPT_MAX_CH_PER_NEXUS not being
 * closed for a multi-channel login, %SRPT_MAX_CH_HELD in all (those being
 * closed too) for any login.
 */
static bool srpt_nexus_full(struct srpt_port *sport, struct srpt_nexus *nexus,
			    bool single)
{
	unsigned int open = 0, held = 0;
	struct srpt_rdma_ch *ch;

	lockdep_assert_held(&sport->mutex);
	list_for_each_entry(ch, &nexus->ch_list, list) {
		held++;
		open += READ_ONCE(ch->state) < CH_DISCONNECTING;
	}
	return held >= SRPT_MAX_CH_HELD ||
	       (!single && open >= SRPT_MAX_CH_PER_NEXUS);
}

/*
 * Link @ch into the nexus of its initiator and target port ids, made if
 * need be, applying the MULTI-CHANNEL ACTION. Returns 0, -ESHUTDOWN if the
 * TPG was disabled or the port started going away since the TPG was
 * chosen, -ENOMEM, -EBUSY when the port has all the nexuses it keeps,
 * -EUSERS when the initiator has all it may have there, or -EMLINK when
 * the nexus takes no more channels (srpt_nexus_full(); a single-channel
 * login closes the others, each within %SRPT_CLOSE_WAIT_SECS).
 */
static int srpt_ch_link(struct srpt_rdma_ch *ch, struct srpt_login *lg,
			struct srp_login_rsp *rsp)
{
	struct srpt_port *sport = lg->sport;
	struct srpt_nexus *new, *nexus;
	struct srpt_rdma_ch *other;
	bool single;
	int ret = 0;

	/* Allocated first so that the lookup and insertion are atomic. */
	new = kzalloc(sizeof(*new), GFP_KERNEL);
	if (!new)
		return -ENOMEM;
	mutex_lock(&sport->mutex);
	if (sport->removing || !lg->stpg->enabled) {
		ret = -ESHUTDOWN;
		goto unlock;
	}
	nexus = srpt_get_nexus(sport, lg->req->initiator_port_id,
			       lg->req->target_port_id, lg->src_name, new);
	if (IS_ERR(nexus)) {
		ret = PTR_ERR(nexus);
		goto unlock;
	}
	if (nexus == new)
		new = NULL;
	single = (lg->req->req_flags & SRPT_MCA_MASK) == SRP_MULTICHAN_SINGLE;
	if (srpt_nexus_full(sport, nexus, single)) {
		ret = -EMLINK;
		goto unlock;
	}
	ch->nexus = nexus;
	if (single) {
		list_for_each_entry(other, &nexus->ch_list, list) {
			if (!srpt_disconnect_ch(other))
				continue;
			srpt_ch_close_later(other);
			pr_info_ratelimited("%s: channel %u closed by a single-channel login\n",
					    other->sess_name, other->id);
			rsp->rsp_flags |= SRP_LOGIN_RSP_MULTICHAN_TERMINATED;
		}
	} else {
		rsp->rsp_flags |= SRP_LOGIN_RSP_MULTICHAN_MAINTAINED;
	}
	if (!nexus->id)
		nexus->id = atomic_inc_return(&srpt_next_sid);
	ch->login_time = ktime_get_real_seconds();
	list_add_tail(&ch->list, &nexus->ch_list);
unlock:
	mutex_unlock(&sport->mutex);
	kfree(new);
	return ret;
}

/* The reject reason of a failed srpt_ch_link(). */
static u32 srpt_ch_link_fail(struct srpt_login *lg, int err)
{
	switch (err) {
	case -ESHUTDOWN:
		return srpt_login_fail(lg, SRP_LOGIN_REJ_UNABLE_ESTABLISH_CHANNEL,
				       "the TPG was disabled or the device removed during the login");
	case -EBUSY:
		return srpt_login_fail(lg, SRP_LOGIN_REJ_INSUFFICIENT_RESOURCES,
				       "the port has %d I_T nexuses, the most it keeps",
				       SRPT_MAX_NEXUS);
	case -EUSERS:
		return srpt_login_fail(lg, SRP_LOGIN_REJ_INSUFFICIENT_RESOURCES,
				       "the initiator has %d I_T nexuses on the port, the most one may have",
				       SRPT_MAX_NEXUS_PER_SRC);
	case -EMLINK:
		return srpt_login_fail(lg, SRP_LOGIN_REJ_CHANNEL_LIMIT_REACHED,
				       "the I_T nexus has %d channels open or %d in all, the most it takes",
				       SRPT_MAX_CH_PER_NEXUS, SRPT_MAX_CH_HELD);
	default:
		return srpt_login_fail(lg, SRP_LOGIN_REJ_INSUFFICIENT_RESOURCES,
				       "out of memory for the I_T nexus");
	}
}

static int srpt_ib_cm_accept(struct srpt_rdma_ch *ch, struct srp_login_rsp *rsp)
{
	struct ib_cm_rep_param rp = {
		.qp_num = ch->qp->qp_num,
		.private_data = rsp,
		.private_data_len = sizeof(*rsp),
		.responder_resources = ch->rd_resp,
		.initiator_depth = ch->rd_init,
		.flow_control = 1,
		.rnr_retry_count = 7,
		.srq = ch->use_srq,
	};

	return ib_send_cm_rep(ch->ib_cm_id, &rp);
}

/* Send the REP carrying SRP_LOGIN_RSP, unless the channel is being closed. */
static int srpt_ch_accept(struct srpt_rdma_ch *ch, struct srpt_login *lg,
			  struct srp_login_rsp *rsp)
{
	struct srpt_port *sport = ch->sport;

	rsp->opcode = SRP_LOGIN_RSP;
	rsp->tag = lg->req->tag;
	rsp->max_it_iu_len = cpu_to_be32(srp_max_req_size);
	rsp->max_ti_iu_len = cpu_to_be32(ch->max_ti_iu_len);
	rsp->buf_fmt = cpu_to_be16(SRP_BUF_FORMAT_DIRECT |
				   SRP_BUF_FORMAT_INDIRECT);
	rsp->req_lim_delta = cpu_to_be32(ch->rq_size);
	atomic_set(&ch->req_lim, ch->rq_size);
	atomic_set(&ch->req_lim_delta, 0);

	/* Holding the port mutex keeps srpt_disconnect_ch() away meanwhile. */
	guard(mutex)(&sport->mutex);
	if (sport->removing || !lg->stpg->enabled || ch->state != CH_CONNECTING)
		return -ESHUTDOWN;
	if (ch->using_rdma_cm) {
		struct rdma_conn_param cp = {
			.private_data = rsp,
			.private_data_len = sizeof(*rsp),
			.responder_resources = ch->rd_resp,
			.initiator_depth = ch->rd_init,
			.flow_control = 1,
			.rnr_retry_count = 7,
		};

		return rdma_accept(ch->rdma_cm_id, &cp);
	}
	return srpt_ib_cm_accept(ch, rsp);
}

/*
 * Last step of a login, once the channel is linked: RTR and accept.
 * Returns 0 or the reject reason.
 */
static u32 srpt_login_finish(struct srpt_rdma_ch *ch, struct srpt_login *lg,
			     struct srp_login_rsp *rsp)
{
	int ret = 0;

	if (!ch->using_rdma_cm)
		ret = srpt_ch_qp_rtr(ch, ch->qp);
	if (!ret)
		ret = srpt_ch_accept(ch, lg, rsp);
	if (ret == -ESHUTDOWN)
		return srpt_login_fail(lg, SRP_LOGIN_REJ_UNABLE_ESTABLISH_CHANNEL,
				       "the TPG was disabled or the device removed during the login");
	if (ret)
		return srpt_login_fail(lg, SRP_LOGIN_REJ_INSUFFICIENT_RESOURCES,
				       "accepting the connection failed (%d)",
				       ret);
	pr_info("%s: logged in as %s, %u credits%s%s; channel %u of session %u on %s, request IU %u bytes\n",
		ch->sess_name, lg->acl_name, ch->rq_size,
		ch->imm_data_offset ? ", immediate data" : "",
		ch->use_srq ? ", SRQ" : "", ch->id, ch->nexus->id,
		lg->port_name, be32_to_cpu(lg->req->req_it_iu_len));
	return 0;
}

/*
 * Check the request itself and take a port count unless the device is
 * going away. Returns 0 or the reject reason.
 */
static u32 srpt_login_gate(struct srpt_login *lg)
{
	struct srpt_port *sport = lg->sport;
	bool removing;
	u32 reason;

	reason = srpt_check_login_req(lg->req, srp_max_req_size,
				      srpt_service_guid, lg->why,
				      sizeof(lg->why));
	if (reason)
		return reason;

	mutex_lock(&sport->mutex);
	removing = sport->removing;
	if (!removing)
		atomic_inc(&sport->refcount);
	mutex_unlock(&sport->mutex);
	if (removing)
		return srpt_login_fail(lg, SRP_LOGIN_REJ_UNABLE_ESTABLISH_CHANNEL,
				       "device is being removed");
	return 0;
}

/*
 * The steps of a login whose request arrived: gate, TPG and ACL, channel,
 * nexus, link, session, accept. Returns 0 or the reject reason, with what
 * was taken given back - except once the channel is linked (@lg->ch set):
 * it then owns the CM id and the counts, and the caller closes it.
 */
static u32 srpt_login(struct srpt_login *lg)
{
	struct srpt_port *sport = lg->sport;
	struct srp_login_rsp *rsp;
	struct srpt_rdma_ch *ch;
	u32 reason;
	int ret;

	reason = srpt_login_gate(lg);
	if (reason)
		return reason;
	reason = srpt_login_find_tpg(lg);
	if (reason)
		goto put_sport;

	rsp = kzalloc(sizeof(*rsp), GFP_KERNEL);
	if (!rsp) {
		reason = srpt_login_fail(lg, SRP_LOGIN_REJ_INSUFFICIENT_RESOURCES,
					 "out of memory");
		goto put_tpg;
	}
	reason = srpt_ch_build(lg, rsp, &ch);
	if (reason)
		goto free_rsp;
	ret = srpt_ch_link(ch, lg, rsp);
	if (ret) {
		reason = srpt_ch_link_fail(lg, ret);
		goto unbuild;
	}
	/* Linked: from here on the channel is closed, never freed, on failure. */
	lg->ch = ch;
	reason = srpt_ch_start_session(ch, lg);
	if (!reason)
		reason = srpt_login_finish(ch, lg, rsp);
	kfree(rsp);
	return reason;

unbuild:
	srpt_ch_unbuild(ch);
free_rsp:
	kfree(rsp);
put_tpg:
	srpt_login_put_tpg(lg->stpg);
put_sport:
	srpt_login_put_sport(sport);
	return reason;
}

/**
 * srpt_cm_req_recv - process an SRP_LOGIN_REQ from either CM
 * @lg: the login; the CM id and names are filled in, and unless @reason is
 *	set also @lg->req and the port.
 * @reason: 0, or the reason the CM-specific part already found to reject
 *	the login (@lg->why says why).
 *
 * Validates the request, chooses the TPG and ACL, builds the channel with
 * the TPG's settings, links it into its nexus and accepts the connection.
 * This is the one place where a login is rejected, with the SRP reason
 * that applies.
 *
 * Context: process context (CM callback); may sleep.
 * Return: 0 if a channel now owns the CM id, or a negative errno: the
 * login was rejected and the caller's CM destroys the CM id.
 */
static int srpt_cm_req_recv(struct srpt_login *lg, u32 reason)
{
	if (!reason) {
		srpt_format_id(lg->id_name, sizeof(lg->id_name),
			       lg->req->initiator_port_id);
		pr_debug("login from %s (%s) on %s, it_iu_len %u\n",
			 lg->id_name, lg->src_name, lg->port_name,
			 be32_to_cpu(lg->req->req_it_iu_len));
		reason = srpt_login(lg);
	}
	if (reason)
		srpt_send_login_rej(lg, reason);
	if (!lg->ch)
		return reason ? -ECONNREFUSED : 0;
	/* The channel owns the CM id: a failed accept only closes it. */
	if (reason)
		srpt_close_ch(lg->ch);
	/* Lets the release work go; @lg->ch may be freed from here on. */
	complete_all(&lg->ch->login_done);
	return 0;
}

static int srpt_ib_cm_req_recv(struct ib_cm_id *cm_id,
			       const struct ib_cm_req_event_param *param,
			       const void *private_data)
{
	struct srpt_device *sdev = cm_id->context;
	struct srpt_login lg = {
		.sdev = sdev,
		.ib_cm_id = cm_id,
		.req = private_data,
		.pkey = be16_to_cpu(param->primary_path->pkey),
		.resp_res = param->responder_resources,
		.init_depth = param->initiator_depth,
	};
	u32 reason = 0;

	/* On the passive side the path's DGID is the initiator's GID. */
	srpt_format_guid(lg.src_name, sizeof(lg.src_name),
			 param->primary_path->dgid.global.interface_id);
	snprintf(lg.port_name, sizeof(lg.port_name), "%s-%u",
		 dev_name(&sdev->device->dev), param->port);
	if (param->port < 1 || param->port > sdev->device->phys_port_cnt)
		reason = srpt_login_fail(&lg, SRP_LOGIN_REJ_UNABLE_ESTABLISH_CHANNEL,
					 "no port %u on this device",
					 param->port);
	else
		lg.sport = &sdev->port[param->port - 1];
	return srpt_cm_req_recv(&lg, reason);
}

/*
 * RDMA/CM carries the login request in the private data of its REQ, in a
 * layout of its own (struct srp_login_req_rdma); the login code reads the
 * IB CM one.  Fields keep their wire byte order.
 */
static void srpt_login_req_from_rdma(struct srp_login_req *req,
				     const struct srp_login_req_rdma *rr)
{
	*req = (struct srp_login_req) {
		.opcode		= rr->opcode,
		.tag		= rr->tag,
		.req_it_iu_len	= rr->req_it_iu_len,
		.req_buf_fmt	= rr->req_buf_fmt,
		.req_flags	= rr->req_flags,
		.imm_data_offset = rr->imm_data_offset,
	};
	memcpy(req->initiator_port_id, rr->initiator_port_id,
	       sizeof(req->initiator_port_id));
	memcpy(req->target_port_id, rr->target_port_id,
	       sizeof(req->target_port_id));
}

static int srpt_rdma_cm_req_recv(struct rdma_cm_id *cm_id,
				 const struct rdma_cm_event *event)
{
	const struct srp_login_req_rdma *rr = event->param.conn.private_data;
	struct sa_path_rec *path = cm_id->route.path_rec;
	struct srp_login_req req = {};
	struct srpt_login lg = {
		.rdma_cm_id = cm_id,
		.req = &req,
		.pkey = path ? be16_to_cpu(path->pkey) : 0xffff,
		.resp_res = event->param.conn.responder_resources,
		.init_depth = event->param.conn.initiator_depth,
	};
	u32 reason = 0;
	int ret;

	snprintf(lg.src_name, sizeof(lg.src_name), "%pIS",
		 &cm_id->route.addr.dst_addr);
	snprintf(lg.port_name, sizeof(lg.port_name), "%s-%u",
		 dev_name(&cm_id->device->dev), cm_id->port_num);
	if (!rr || event->param.conn.private_data_len < sizeof(*rr)) {
		lg.req = NULL;
		reason = srpt_login_fail(&lg, SRP_LOGIN_REJ_UNABLE_ESTABLISH_CHANNEL,
					 "a login request of %u bytes presented, %zu expected",
					 rr ? event->param.conn.private_data_len : 0,
					 sizeof(*rr));
		return srpt_cm_req_recv(&lg, reason);
	}
	srpt_login_req_from_rdma(&req, rr);

	lg.sdev = srpt_sdev_get(cm_id->device);
	if (!lg.sdev || cm_id->port_num < 1 ||
	    cm_id->port_num > cm_id->device->phys_port_cnt)
		reason = srpt_login_fail(&lg, SRP_LOGIN_REJ_UNABLE_ESTABLISH_CHANNEL,
					 "ib_srpt has no such device or port");
	else
		lg.sport = &lg.sdev->port[cm_id->port_num - 1];
	ret = srpt_cm_req_recv(&lg, reason);
	if (lg.sdev)
		srpt_sdev_put(lg.sdev);
	return ret;
}

static void srpt_cm_rej_recv(struct srpt_rdma_ch *ch, int reason)
{
	pr_info_ratelimited("%s: channel %u: the initiator rejected the connection (reason %d)\n",
			    ch->sess_name, ch->id, reason);
	srpt_close_ch(ch);
}

/**
 * srpt_cm_rtu_recv - the connection is established
 * @ch: the channel.
 *
 * Moves an IB CM channel's QP to RTS, the channel to LIVE, and posts a
 * zero-length write whose completion processes the IUs that arrived before
 * the channel was live.
 *
 * Context: process context (CM callback).
 */
void srpt_cm_rtu_recv(struct srpt_rdma_ch *ch)
{
	int ret = 0;

	if (!ch->using_rdma_cm)
		ret = srpt_ch_qp_rts(ch, ch->qp);
	if (ret) {
		pr_err("%s: moving QP to RTS failed (%d)\n", ch->sess_name,
		       ret);
		srpt_close_ch(ch);
		return;
	}
	/* A channel closed meanwhile stays closed. */
	if (!srpt_set_ch_state(ch, CH_LIVE))
		return;
	ret = srpt_zerolength_write(ch, &ch->zw_live_cqe);
	if (ret) {
		pr_err("%s: posting zero-length write failed (%d)\n",
		       ch->sess_name, ret);
		srpt_close_ch(ch);
	}
}

/*
 * The DREP of @ch's IB CM id.  KUnit replaces it: the channels of its
 * tests have no CM id the CM knows.
 */
VISIBLE_IF_KUNIT int srpt_send_cm_drep(struct srpt_rdma_ch *ch)
{
	KUNIT_STATIC_STUB_REDIRECT(srpt_send_cm_drep, ch);
	return ib_send_cm_drep(ch->ib_cm_id, NULL, 0);
}
EXPORT_SYMBOL_IF_KUNIT(srpt_send_cm_drep);

/**
 * srpt_cm_send_disconnect - tell the initiator that a channel ends
 * @ch: the channel, just moved to DISCONNECTING.
 *
 * Over the RDMA/CM rdma_disconnect() sends whichever of DREQ and DREP is
 * due. The IB CM refuses a DREQ once the initiator's has come in; that one
 * is then answered with the DREP it waits for.
 *
 * Context: process context.
 * Return: 0 if a DREQ or DREP went out, otherwise the CM's error.
 */
int srpt_cm_send_disconnect(struct srpt_rdma_ch *ch)
{
	int ret;

	if (ch->using_rdma_cm)
		return rdma_disconnect(ch->rdma_cm_id);
	ret = ib_send_cm_dreq(ch->ib_cm_id, NULL, 0);
	return ret ? srpt_send_cm_drep(ch) : 0;
}

/**
 * srpt_ib_cm_dreq_recv - the initiator asked to disconnect (IB CM)
 * @ch: the channel.
 *
 * The DREQ is answered with a DREP also when it crossed a DREQ of ours:
 * the CM then reports the initiator's DREQ and waits for our DREP, and
 * the initiator waits for it too, until its DREQ times out.
 *
 * Context: process context (CM callback).
 */
static void srpt_ib_cm_dreq_recv(struct srpt_rdma_ch *ch)
{
	int ret;

	srpt_set_ch_state(ch, CH_DISCONNECTING);
	ret = srpt_send_cm_drep(ch);
	if (ret)
		pr_debug("%s: sending DREP failed (%d)\n", ch->sess_name, ret);
	srpt_close_ch(ch);
}

/**
 * srpt_cm_handler - IB CM callback
 * @cm_id: the CM id; its context is the srpt_device for a REQ and the
 *	channel for everything else.
 * @event: the event.
 *
 * A peer that goes away, rejects our REP or fails to answer ends up in
 * srpt_close_ch(); a DREQ is answered before closing.
 *
 * Context: process context; may sleep.
 * Return: non-zero only for a rejected REQ, so that the CM destroys the
 * CM id; the id of an accepted channel is destroyed by its release work.
 */
int srpt_cm_handler(struct ib_cm_id *cm_id, const struct ib_cm_event *event)
{
	struct srpt_rdma_ch *ch = cm_id->context;

	switch (event->event) {
	case IB_CM_REQ_RECEIVED:
		return srpt_ib_cm_req_recv(cm_id, &event->param.req_rcvd,
					   event->private_data);
	case IB_CM_REJ_RECEIVED:
		srpt_cm_rej_recv(ch, event->param.rej_rcvd.reason);
		break;
	case IB_CM_RTU_RECEIVED:
	case IB_CM_USER_ESTABLISHED:
		srpt_cm_rtu_recv(ch);
		break;
	case IB_CM_DREQ_RECEIVED:
		srpt_ib_cm_dreq_recv(ch);
		break;
	case IB_CM_DREP_RECEIVED:
	case IB_CM_DREQ_ERROR:
	case IB_CM_TIMEWAIT_EXIT:
	case IB_CM_REP_ERROR:
		srpt_close_ch(ch);
		break;
	case IB_CM_MRA_RECEIVED:
		break;
	default:
		pr_warn_ratelimited("%s: unexpected IB CM event %d\n",
				    ch->sess_name, event->event);
		break;
	}
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(srpt_cm_handler);

/**
 * srpt_rdma_cm_handler - RDMA/CM callback of the listener and the channels
 * @cm_id: the RDMA/CM id; its context is NULL for the listener and the
 *	channel for a connection.
 * @event: the event.
 *
 * As srpt_cm_handler(): a connect request becomes a login, and a peer that
 * goes away ends up in srpt_close_ch() once its DREQ has been answered.
 *
 * Context: process context; may sleep.
 * Return: non-zero only for a rejected connect request, so that RDMA/CM
 * destroys the id.
 */
static int srpt_rdma_cm_handler(struct rdma_cm_id *cm_id,
				struct rdma_cm_event *event)
{
	struct srpt_rdma_ch *ch = cm_id->context;

	if (event->event == RDMA_CM_EVENT_CONNECT_REQUEST)
		return srpt_rdma_cm_req_recv(cm_id, event);
	if (!ch)	/* the listener */
		return 0;

	switch (event->event) {
	case RDMA_CM_EVENT_REJECTED:
		srpt_cm_rej_recv(ch, event->status);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		srpt_cm_rtu_recv(ch);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		/*
		 * The initiator's DREQ, or the DREP or timeout of ours. If a
		 * DREQ of ours was out, the initiator's crossed it and waits
		 * for a DREP: rdma_disconnect() sends it (and fails harmlessly
		 * when the disconnect is already complete).
		 */
		if (!srpt_disconnect_ch(ch))
			rdma_disconnect(ch->rdma_cm_id);
		srpt_close_ch(ch);
		break;
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		srpt_close_ch(ch);
		break;
	case RDMA_CM_EVENT_ADDR_CHANGE:
		break;
	default:
		pr_warn_ratelimited("%s: unexpected RDMA/CM event %d\n",
				    ch->sess_name, event->event);
		break;
	}
	return 0;
}

static struct rdma_cm_id *srpt_rdma_cm_listen(struct sockaddr *addr)
{
	struct rdma_cm_id *id;
	int ret;

	id = rdma_create_id(&init_net, srpt_rdma_cm_handler, NULL, RDMA_PS_TCP,
			    IB_QPT_RC);
	if (IS_ERR(id))
		return id;
	ret = rdma_bind_addr(id, addr);
	if (!ret)
		ret = rdma_listen(id, 128);
	if (ret) {
		rdma_destroy_id(id);
		return ERR_PTR(ret);
	}
	return id;
}

/**
 * srpt_rdma_cm_port_set - move the RDMA/CM listener to another port
 * @port: TCP port space port to listen on; 0 stops listening.
 *
 * Listens on the IPv6 wildcard address (which also accepts IPv4 unless
 * IPv6 sockets are IPv6-only) and falls back to the IPv4 wildcard.
 *
 * Context: process context; may sleep.
 * Return: 0 or the error of creating the new listener, in which case the
 * old one keeps running.
 */
int srpt_rdma_cm_port_set(u16 port)
{
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6,
				   .sin6_port = htons(port) };
	struct sockaddr_in a4 = { .sin_family = AF_INET,
				  .sin_port = htons(port) };
	struct rdma_cm_id *new_id = NULL, *old_id;

	guard(mutex)(&srpt_rdma_cm_mutex);
	if (port == srpt_rdma_cm_port)
		return 0;
	if (port) {
		new_id = srpt_rdma_cm_listen((struct sockaddr *)&a6);
		if (IS_ERR(new_id))
			new_id = srpt_rdma_cm_listen((struct sockaddr *)&a4);
		if (IS_ERR(new_id)) {
			pr_err("RDMA/CM listen on port %u failed (%ld)\n",
			       port, PTR_ERR(new_id));
			return PTR_ERR(new_id);
		}
	}
	old_id = srpt_rdma_cm_listen_id;
	srpt_rdma_cm_listen_id = new_id;
	srpt_rdma_cm_port = port;
	if (old_id)
		rdma_destroy_id(old_id);
	return 0;
}

/**
 * srpt_rdma_cm_port_get - the port the RDMA/CM listener uses
 *
 * Context: process context.
 * Return: the port, 0 when not listening.
 */
u16 srpt_rdma_cm_port_get(void)
{
	guard(mutex)(&srpt_rdma_cm_mutex);
	return srpt_rdma_cm_port;
}

/**
 * srpt_rdma_cm_stop - stop the RDMA/CM listener
 *
 * Context: process context; may sleep.
 */
void srpt_rdma_cm_stop(void)
{
	srpt_rdma_cm_port_set(0);
}
