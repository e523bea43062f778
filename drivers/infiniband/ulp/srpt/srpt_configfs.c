// SPDX-License-Identifier: GPL-2.0-only
/*
 * ib_srpt: names and attributes of the configfs tree.
 *
 * /sys/kernel/config/target/srpt/
 *   discovery_auth/rdma_cm_port        RDMA/CM listener port, 0 = off
 *   <wwn>/version                      empty, kept for tools
 *   <wwn>/tpgt_<n>/attrib/srp_max_rdma_size, srp_max_rsp_size,
 *                         srp_sq_size, use_srq
 *   <wwn>/tpgt_<n>/acls/<initiator>/info   the initiator's sessions, in
 *                                         the form rtslib-fb parses
 *   <wwn>/tpgt_<n>/acls/<initiator>/auth/authenticate_target   always 0
 *
 * A <wwn> names a port either by its GUID, "xxxx:xxxx:xxxx:xxxx", or by GID
 * 0, "0x" and 32 hex digits (the form targetcli-fb uses; srpt_svc.c parses
 * both). An <initiator> is a GUID, an initiator port id of up to 32 hex
 * digits with or without "0x", or an IP address.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/configfs.h>
#include <linux/ctype.h>
#include <linux/inet.h>
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/unaligned.h>
#include <net/net_namespace.h>
#include <target/target_core_base.h>
#include <target/target_core_fabric.h>
#include <kunit/visibility.h>

#include "srpt_priv.h"

/**
 * srpt_parse_acl_name - parse the name of an ACL directory
 * @name: a GUID, an initiator port id (see srpt_parse_i_port_id()) or an
 *	IPv4/IPv6 address.
 * @out: the parsed name; for an IP address only @out->kind is set.
 *
 * Context: process context.
 * Return: 0 or -EINVAL.
 */
int srpt_parse_acl_name(const char *name, struct srpt_port_name *out)
{
	struct sockaddr_storage sa;

	memset(out, 0, sizeof(*out));
	if (!srpt_parse_guid(&out->guid, name)) {
		out->kind = SRPT_NAME_GUID;
		return 0;
	}
	if (!srpt_parse_i_port_id(out->id, name)) {
		out->kind = SRPT_NAME_ID;
		return 0;
	}
	if (!inet_pton_with_scope(&init_net, AF_UNSPEC, name, NULL, &sa)) {
		out->kind = SRPT_NAME_IP;
		return 0;
	}
	return -EINVAL;
}
EXPORT_SYMBOL_IF_KUNIT(srpt_parse_acl_name);

/* --- TPG attributes: each TPG has its own copy, used by new logins. --- */

static struct srpt_tpg *srpt_attr_tpg(struct config_item *item)
{
	return srpt_tpg_from_se(attrib_to_tpg(item));
}

/**
 * struct srpt_attr_desc - one TPG attribute
 * @name: its configfs name.
 * @off: offset of its field in struct srpt_tpg_attrib.
 * @def: value of a new TPG.
 * @min: smallest value a store accepts.
 * @max: largest value a store accepts.
 */
struct srpt_attr_desc {
	const char	*name;
	size_t		off;
	u32		def;
	u32		min;
	u32		max;
};

#define SRPT_ATTR_DESC(_field, _def, _min, _max) {			\
	.name = #_field,						\
	.off = offsetof(struct srpt_tpg_attrib, _field),		\
	.def = _def,							\
	.min = _min,							\
	.max = _max,							\
}

enum {
	SRPT_ATTR_MAX_RDMA_SIZE,
	SRPT_ATTR_MAX_RSP_SIZE,
	SRPT_ATTR_SQ_SIZE,
	SRPT_ATTR_USE_SRQ,
};

static const struct srpt_attr_desc srpt_attr_descs[] = {
	[SRPT_ATTR_MAX_RDMA_SIZE] = SRPT_ATTR_DESC(srp_max_rdma_size,
						   SRPT_DEF_RDMA_SIZE,
						   SRPT_DEF_RDMA_SIZE,
						   SRPT_MAX_RDMA_SIZE),
	[SRPT_ATTR_MAX_RSP_SIZE] = SRPT_ATTR_DESC(srp_max_rsp_size,
						  SRPT_DEF_RSP_SIZE,
						  SRPT_MIN_RSP_SIZE,
						  SRPT_MAX_RSP_SIZE),
	[SRPT_ATTR_SQ_SIZE] = SRPT_ATTR_DESC(srp_sq_size, SRPT_DEF_SQ_SIZE,
					     SRPT_MIN_SRQ_SIZE,
					     SRPT_MAX_SRQ_SIZE),
	[SRPT_ATTR_USE_SRQ] = SRPT_ATTR_DESC(use_srq, 0, 0, 1),
};

static u32 *srpt_attrib_field(struct srpt_tpg_attrib *attrib,
			      const struct srpt_attr_desc *d)
{
	return (u32 *)((u8 *)attrib + d->off);
}

static u32 *srpt_attr_field(struct srpt_tpg *stpg,
			    const struct srpt_attr_desc *d)
{
	return srpt_attrib_field(&stpg->attrib, d);
}

/**
 * srpt_tpg_attrib_init - give a new TPG's attributes their defaults
 * @attrib: the attributes.
 *
 * Context: any context.
 */
void srpt_tpg_attrib_init(struct srpt_tpg_attrib *attrib)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(srpt_attr_descs); i++)
		*srpt_attrib_field(attrib, &srpt_attr_descs[i]) =
			srpt_attr_descs[i].def;
}

static ssize_t srpt_attr_show(struct config_item *item, char *page,
			      const struct srpt_attr_desc *d)
{
	struct srpt_tpg *stpg = srpt_attr_tpg(item);
	u32 val;

	mutex_lock(&stpg->sport_id->mutex);
	val = *srpt_attr_field(stpg, d);
	mutex_unlock(&stpg->sport_id->mutex);
	return sysfs_emit(page, "%u\n", val);
}

/*
 * Store a TPG attribute after checking its range. srp_max_rdma_size is
 * also what the port's DM agent advertises, so it is copied there.
 */
static ssize_t srpt_attr_store(struct config_item *item, const char *page,
			       size_t count, const struct srpt_attr_desc *d)
{
	struct srpt_tpg *stpg = srpt_attr_tpg(item);
	u32 val;
	int ret;

	ret = kstrtou32(page, 0, &val);
	if (ret || val < d->min || val > d->max) {
		pr_warn("%s/tpgt_%u: %s must be a number in [%u..%u], not \"%.*s\"\n",
			stpg->sport_id->name, stpg->tag, d->name, d->min,
			d->max, (int)strcspn(page, "\n"), page);
		return ret ? ret : -EINVAL;
	}

	mutex_lock(&stpg->sport_id->mutex);
	*srpt_attr_field(stpg, d) = val;
	mutex_unlock(&stpg->sport_id->mutex);

	if (d == &srpt_attr_descs[SRPT_ATTR_MAX_RDMA_SIZE])
		WRITE_ONCE(srpt_tpg_to_sport(&stpg->tpg)->dm_rdma_size, val);
	return count;
}

/* configfs passes no attribute to show/store: one thin pair per entry. */
#define SRPT_TPG_ATTR(_name, _idx)					\
static const struct srpt_attr_desc *const srpt_attr_##_name =		\
	&srpt_attr_descs[_idx];						\
static ssize_t srpt_tpg_attrib_##_name##_show(struct config_item *item,\
					      char *page)		\
{									\
	return srpt_attr_show(item, page, srpt_attr_##_name);		\
}									\
static ssize_t srpt_tpg_attrib_##_name##_store(struct config_item *item,\
					       const char *page,	\
					       size_t count)		\
{									\
	return srpt_attr_store(item, page, count, srpt_attr_##_name);	\
}									\
CONFIGFS_ATTR(srpt_tpg_attrib_, _name)

SRPT_TPG_ATTR(srp_max_rdma_size, SRPT_ATTR_MAX_RDMA_SIZE);
SRPT_TPG_ATTR(srp_max_rsp_size, SRPT_ATTR_MAX_RSP_SIZE);
SRPT_TPG_ATTR(srp_sq_size, SRPT_ATTR_SQ_SIZE);
SRPT_TPG_ATTR(use_srq, SRPT_ATTR_USE_SRQ);

struct configfs_attribute *srpt_tpg_attrib_attrs[] = {
	&srpt_tpg_attrib_attr_srp_max_rdma_size,
	&srpt_tpg_attrib_attr_srp_max_rsp_size,
	&srpt_tpg_attrib_attr_srp_sq_size,
	&srpt_tpg_attrib_attr_use_srq,
	NULL,
};

/* --- discovery_auth/rdma_cm_port --- */

static ssize_t srpt_rdma_cm_port_show(struct config_item *item, char *page)
{
	return sysfs_emit(page, "%u\n", srpt_rdma_cm_port_get());
}

static ssize_t srpt_rdma_cm_port_store(struct config_item *item,
				       const char *page,
				       size_t count)
{
	u16 port;
	int ret;

	ret = kstrtou16(page, 0, &port);
	if (ret) {
		pr_warn("rdma_cm_port must be a port number in [0..65535] (0: off), not \"%.*s\"\n",
			(int)strcspn(page, "\n"), page);
		return ret;
	}
	ret = srpt_rdma_cm_port_set(port);
	return ret ? ret : count;
}

CONFIGFS_ATTR(srpt_, rdma_cm_port);

struct configfs_attribute *srpt_da_attrs[] = {
	&srpt_attr_rdma_cm_port,
	NULL,
};

/* --- <wwn>/version --- */

static ssize_t srpt_wwn_version_show(struct config_item *item, char *buf)
{
	return sysfs_emit(buf, "\n");
}

CONFIGFS_ATTR_RO(srpt_wwn_, version);

struct configfs_attribute *srpt_wwn_attrs[] = {
	&srpt_wwn_attr_version,
	NULL,
};

/* --- <wwn>/tpgt_<n>/acls/<initiator>/info --- */

/*
 * rtslib-fb (and so "targetcli sessions") reads an ACL's info file the way
 * LIO's iSCSI fabric writes it, line by line:
 *   "No active..." first           no session;
 *   "InitiatorName:"               a session starts;
 *   "InitiatorAlias: <word>"       the alias targetcli lists;
 *   "LIO Session ID: <n> ... SessionType: <word>";
 *   "..._STATE_<word>"             the session state, then per connection
 *   "CID: <n> ... TARG_CONN_STATE_<word>" and
 *   "   Address <address> <transport>".
 * An SRP session (I_T nexus) is one or more channels; each channel is
 * shown as one connection. No other line may contain "Address" or
 * "_STATE_".
 */

static const char * const srpt_info_ch_state[] = {
	[CH_CONNECTING]		= "CONNECTING",
	[CH_LIVE]		= "LIVE",
	[CH_DISCONNECTING]	= "DISCONNECTING",
	[CH_DRAINING]		= "DRAINING",
	[CH_DISCONNECTED]	= "DISCONNECTED",
};

/* A session is logged in while one of its channels is, else the earliest. */
static const char *srpt_info_sess_state(const struct srpt_ch_info *ci,
					unsigned int n)
{
	enum srpt_ch_state best = CH_DISCONNECTED;
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (ci[i].state == CH_LIVE)
			return "LOGGED_IN";
		best = min(best, ci[i].state);
	}
	return best == CH_CONNECTING ? "IN_LOGIN" : "LOGGING_OUT";
}

static size_t srpt_info_channel(char *buf, size_t size,
				const struct srpt_ch_info *ci, time64_t now)
{
	size_t len;

	len = scnprintf(buf, size,
			"CID: %u  Connection State: TARG_CONN_STATE_%s\n"
			"   Address %s %s  P_Key: %#06x\n",
			ci->cid, srpt_info_ch_state[ci->state], ci->addr,
			ci->rdma_cm ? "RDMA/CM" : "IB_CM", ci->pkey);
	if (ci->login_time)
		len += scnprintf(buf + len, size - len,
				 "   Login time: %ptTs UTC (%lld s ago)\n",
				 &ci->login_time,
				 max_t(time64_t, now - ci->login_time, 0));
	len += scnprintf(buf + len, size - len,
			 "   Outstanding commands: %u  Credits held by the initiator: %u of %u%s%s\n",
			 ci->outstanding, ci->credits, ci->queue_depth,
			 ci->imm_data ? "  immediate data" : "",
			 ci->use_srq ? "  SRQ" : "");
	len += scnprintf(buf + len, size - len,
			 "   Commands by data descriptor: none %llu  direct %llu  indirect %llu  immediate %llu\n",
			 ci->cmds_by_fmt[SRP_NO_DATA_DESC],
			 ci->cmds_by_fmt[SRP_DATA_DESC_DIRECT],
			 ci->cmds_by_fmt[SRP_DATA_DESC_INDIRECT],
			 ci->cmds_by_fmt[SRP_DATA_DESC_IMM]);
	return len;
}

/**
 * srpt_format_acl_info - write the text of an ACL's info attribute
 * @buf: output buffer.
 * @size: size of @buf.
 * @acl_name: the ACL's name.
 * @ci: snapshots of the ACL's channels, those of one session adjacent.
 * @n: number of entries in @ci.
 * @more: channels that did not fit in @ci, only counted.
 * @now: current wall clock time, for the age of each login.
 *
 * Context: any context.
 * Return: the number of characters written, without the final NUL.
 */
ssize_t srpt_format_acl_info(char *buf, size_t size, const char *acl_name,
			     const struct srpt_ch_info *ci, unsigned int n,
			     unsigned int more, time64_t now)
{
	unsigned int i, j;
	size_t len = 0;

	if (!n)
		return scnprintf(buf, size,
				 "No active SRP session for initiator %s\n",
				 acl_name);
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && ci[j].sid == ci[i].sid; j++)
			;
		len += scnprintf(buf + len, size - len,
				 "InitiatorName: %s\n"
				 "InitiatorAlias: 0x%016llx%016llx\n"
				 "LIO Session ID: %u   SessionType: Normal\n"
				 "Session State: TARG_SESS_STATE_%s\n"
				 "Target port id: 0x%016llx%016llx\n"
				 "Channels: %u\n",
				 acl_name, get_unaligned_be64(ci[i].i_port_id),
				 get_unaligned_be64(ci[i].i_port_id + 8),
				 ci[i].sid, srpt_info_sess_state(ci + i, j - i),
				 get_unaligned_be64(ci[i].t_port_id),
				 get_unaligned_be64(ci[i].t_port_id + 8), j - i);
		for (; i < j; i++)
			len += srpt_info_channel(buf + len, size - len, ci + i,
						 now);
	}
	if (more)
		len += scnprintf(buf + len, size - len,
				 "(%u more channels not shown)\n", more);
	return len;
}
EXPORT_SYMBOL_IF_KUNIT(srpt_format_acl_info);

/* At most this many channels are shown; their text fills about a page. */
#define SRPT_INFO_MAX_CH	12U

static void srpt_info_snapshot(struct srpt_ch_info *ci,
			       const struct srpt_nexus *nexus,
			       struct srpt_rdma_ch *ch)
{
	enum srpt_command_state st;
	unsigned long flags;
	u32 i;

	ci->sid = nexus->id;
	ci->cid = ch->id;
	spin_lock_irqsave(&ch->lock, flags);
	ci->state = ch->state;
	spin_unlock_irqrestore(&ch->lock, flags);
	ci->rdma_cm = ch->using_rdma_cm;
	ci->use_srq = ch->use_srq;
	ci->imm_data = ch->imm_data_offset;
	ci->pkey = ch->pkey;
	ci->queue_depth = ch->rq_size;
	ci->login_time = ch->login_time;
	ci->credits = clamp_t(int, atomic_read(&ch->req_lim), 0, ch->rq_size);
	for (i = 0; i < ARRAY_SIZE(ci->cmds_by_fmt); i++)
		ci->cmds_by_fmt[i] = READ_ONCE(ch->cmds_by_fmt[i]);
	/*
	 * Commands from their receipt until LIO releases them, in the
	 * backend too (state NEW); a free context reads as DONE.
	 */
	for (i = 0; i < ch->rq_size; i++) {
		st = READ_ONCE(ch->ioctx_ring[i]->state);
		ci->outstanding += st != SRPT_STATE_DONE;
	}
	memcpy(ci->i_port_id, nexus->i_port_id, sizeof(ci->i_port_id));
	memcpy(ci->t_port_id, nexus->t_port_id, sizeof(ci->t_port_id));
	strscpy(ci->addr, ch->sess_name, sizeof(ci->addr));
}

/*
 * Snapshot the channels admitted through @nacl, one nexus after the other.
 * Returns how many there are; only the first @max are stored. A channel's
 * send ring lives until the channel leaves its nexus, which needs the port
 * mutex held here.
 */
static unsigned int srpt_acl_channels(const struct se_node_acl *nacl,
				      struct srpt_ch_info *ci, unsigned int max)
{
	struct srpt_port *sport = srpt_tpg_to_sport(nacl->se_tpg);
	struct srpt_nexus *nexus;
	struct srpt_rdma_ch *ch;
	unsigned int n = 0;

	guard(mutex)(&sport->mutex);
	list_for_each_entry(nexus, &sport->nexus_list, entry) {
		list_for_each_entry(ch, &nexus->ch_list, list) {
			if (ch->nacl != nacl)
				continue;
			if (n < max)
				srpt_info_snapshot(&ci[n], nexus, ch);
			n++;
		}
	}
	return n;
}

static ssize_t srpt_acl_info_show(struct config_item *item, char *page)
{
	struct se_node_acl *nacl = container_of(to_config_group(item),
						struct se_node_acl, acl_group);
	struct srpt_ch_info *ci;
	unsigned int n;
	ssize_t len;

	ci = kcalloc(SRPT_INFO_MAX_CH, sizeof(*ci), GFP_KERNEL);
	if (!ci)
		return -ENOMEM;
	n = srpt_acl_channels(nacl, ci, SRPT_INFO_MAX_CH);
	len = srpt_format_acl_info(page, PAGE_SIZE, nacl->initiatorname, ci,
				   min(n, SRPT_INFO_MAX_CH),
				   n - min(n, SRPT_INFO_MAX_CH),
				   ktime_get_real_seconds());
	kfree(ci);
	return len;
}

CONFIGFS_ATTR_RO(srpt_acl_, info);

struct configfs_attribute *srpt_acl_attrs[] = {
	&srpt_acl_attr_info,
	NULL,
};

/*
 * acls/<initiator>/auth/authenticate_target: SRP logins carry no
 * credentials, so no initiator is ever authenticated. The file is here
 * because "targetcli sessions detail" reads it for every session.
 */
static ssize_t srpt_acl_auth_authenticate_target_show(struct config_item *item,
						      char *page)
{
	return sysfs_emit(page, "0\n");
}

CONFIGFS_ATTR_RO(srpt_acl_auth_, authenticate_target);

struct configfs_attribute *srpt_acl_auth_attrs[] = {
	&srpt_acl_auth_attr_authenticate_target,
	NULL,
};
