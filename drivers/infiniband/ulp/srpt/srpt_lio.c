// SPDX-License-Identifier: GPL-2.0-only
/*
 * ib_srpt: the LIO fabric - target_core_fabric_ops, and creating and
 * dropping the WWN and TPG objects behind the configfs directories.
 *
 * Lifetimes: a WWN holds a reference on its srpt_device, so it stays valid
 * after the RDMA device is gone. A TPG is only freed after every channel
 * carrying one of its sessions has been released.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/wait_bit.h>
#include <target/target_core_base.h>
#include <target/target_core_fabric.h>

#include "srpt_priv.h"

static int srpt_check_true(struct se_portal_group *se_tpg)
{
	return 1;
}

static char *srpt_get_fabric_wwn(struct se_portal_group *tpg)
{
	return srpt_tpg_from_se(tpg)->sport_id->name;
}

static u16 srpt_get_tag(struct se_portal_group *tpg)
{
	return srpt_tpg_from_se(tpg)->tag;
}

static void srpt_release_cmd(struct se_cmd *se_cmd)
{
	struct srpt_send_ioctx *ioctx =
		container_of(se_cmd, struct srpt_send_ioctx, cmd);

	WARN_ON_ONCE(ioctx->state != SRPT_STATE_DONE &&
		     !(se_cmd->transport_state & CMD_T_ABORTED));
	srpt_release_ioctx(ioctx);
}

static int srpt_check_stop_free(struct se_cmd *se_cmd)
{
	return target_put_sess_cmd(se_cmd);
}

/**
 * srpt_close_session - LIO asks to end a session
 * @se_sess: the session.
 *
 * Called when the session's ACL is removed. Disconnects the channel that
 * carries the session and waits until it is released.
 *
 * Context: process context; may sleep.
 */
static void srpt_close_session(struct se_session *se_sess)
{
	srpt_disconnect_ch_sync(se_sess->fabric_sess_ptr);
}

/* Only used in LIO's debug messages. */
static int srpt_get_tcm_cmd_state(struct se_cmd *se_cmd)
{
	return container_of(se_cmd, struct srpt_send_ioctx, cmd)->state;
}

static int srpt_init_nodeacl(struct se_node_acl *se_nacl, const char *name)
{
	struct srpt_port_name pn;

	if (srpt_parse_acl_name(name, &pn)) {
		pr_err("invalid initiator name %s: use a GUID, a port id or an IP address\n",
		       name);
		return -EINVAL;
	}
	/* Logins look port ids up by their 32-digit forms only. */
	if (pn.kind == SRPT_NAME_ID &&
	    strlen(name) != 32 && strlen(name) != 34)
		pr_warn("ACL %s matches no login: write the initiator port id with all 32 hex digits\n",
			name);
	return 0;
}

/*
 * A read's response that finds the send queue full waits in the channel's
 * backlog: handed back with -EAGAIN, LIO's queue-full work would call here
 * again at once, for as long as the initiator leaves the queue full.
 */
static int srpt_queue_data_in(struct se_cmd *cmd)
{
	return srpt_queue_data_rsp(cmd);
}

/* LIO has no retry for TMF responses: one that does not fit waits. */
static void srpt_queue_tm_rsp(struct se_cmd *cmd)
{
	srpt_send_response(cmd, true);
}

static int srpt_enable_tpg(struct se_portal_group *se_tpg, bool enable)
{
	struct srpt_tpg *stpg = srpt_tpg_from_se(se_tpg);
	struct srpt_port *sport = srpt_tpg_to_sport(se_tpg);

	guard(mutex)(&sport->mutex);
	if (enable && sport->removing)
		return -ENODEV;
	WRITE_ONCE(stpg->enabled, enable);
	if (!enable)
		srpt_close_tpg_channels(sport, stpg);
	return 0;
}

/**
 * srpt_make_tpg - configfs mkdir of a TPG below a WWN
 * @wwn: the WWN.
 * @name: directory name; "tpgt_<n>" sets the TPG tag to n, other names
 *	get tag 1.
 *
 * The new TPG starts disabled with default attributes.
 *
 * Context: process context (configfs).
 * Return: the LIO TPG or an ERR_PTR().
 */
static struct se_portal_group *srpt_make_tpg(struct se_wwn *wwn,
					     const char *name)
{
	struct srpt_port_id *pid = container_of(wwn, struct srpt_port_id, wwn);
	struct srpt_tpg *stpg = kzalloc(sizeof(*stpg), GFP_KERNEL);
	int ret;

	if (!stpg)
		return ERR_PTR(-ENOMEM);
	stpg->sport_id = pid;
	srpt_tpg_attrib_init(&stpg->attrib);
	if (!str_has_prefix(name, "tpgt_") ||
	    kstrtou16(name + 5, 10, &stpg->tag))
		stpg->tag = 1;

	/* Logins look for the TPG on the list once LIO knows it. */
	ret = core_tpg_register(wwn, &stpg->tpg, SCSI_PROTOCOL_SRP);
	if (!ret) {
		scoped_guard(mutex, &pid->mutex)
			list_add_tail(&stpg->entry, &pid->tpg_list);
		return &stpg->tpg;
	}
	kfree(stpg);
	return ERR_PTR(ret);
}

/**
 * srpt_drop_tpg - configfs rmdir of a TPG
 * @tpg: the TPG.
 *
 * Unlinks the TPG so no login picks it, closes its channels and waits for
 * them to be released before LIO and this driver free it.
 *
 * Context: process context (configfs); may sleep.
 */
static void srpt_drop_tpg(struct se_portal_group *tpg)
{
	struct srpt_tpg *stpg = srpt_tpg_from_se(tpg);
	struct srpt_port *sport = srpt_tpg_to_sport(tpg);

	mutex_lock(&stpg->sport_id->mutex);
	list_del(&stpg->entry);
	mutex_unlock(&stpg->sport_id->mutex);

	srpt_enable_tpg(tpg, false);
	while (!wait_var_event_timeout(&stpg->nr_channels,
				       !atomic_read(&stpg->nr_channels),
				       SRPT_CLOSE_WAIT_SECS * HZ)) {
		pr_info("%s: waiting for %d channels\n",
			stpg->sport_id->name, atomic_read(&stpg->nr_channels));
		mutex_lock(&sport->mutex);
		srpt_close_tpg_channels(sport, stpg);
		mutex_unlock(&sport->mutex);
	}
	core_tpg_deregister(tpg);
	kfree(stpg);
}

/**
 * srpt_make_tport - configfs mkdir of a WWN
 * @tf: unused.
 * @group: unused.
 * @name: the port's GUID ("xxxx:xxxx:xxxx:xxxx") or GID ("0x" and 32 hex
 *	digits).
 *
 * Context: process context (configfs).
 * Return: the LIO WWN, ERR_PTR(-EINVAL) if no port has that name or
 * ERR_PTR(-EEXIST) if the port already has a WWN of that form.
 */
static struct se_wwn *srpt_make_tport(struct target_fabric_configfs *tf,
				      struct config_group *group,
				      const char *name)
{
	struct srpt_port_id **slot, *pid;
	struct srpt_port *sport;

	sport = srpt_lookup_port(name, &slot);
	if (!sport) {
		srpt_log_port_names(name);
		return ERR_PTR(-EINVAL);
	}
	pid = kzalloc(sizeof(*pid), GFP_KERNEL);
	if (!pid) {
		srpt_sdev_put(sport->sdev);
		return ERR_PTR(-ENOMEM);
	}
	mutex_init(&pid->mutex);
	INIT_LIST_HEAD(&pid->tpg_list);
	pid->wwn.priv = sport;

	mutex_lock(&srpt_dev_mutex);
	if (*slot) {
		mutex_unlock(&srpt_dev_mutex);
		kfree(pid);
		srpt_sdev_put(sport->sdev);
		return ERR_PTR(-EEXIST);
	}
	strscpy(pid->name, slot == &sport->guid_id ? sport->guid_name :
		sport->gid_name, sizeof(pid->name));
	*slot = pid;
	mutex_unlock(&srpt_dev_mutex);
	return &pid->wwn;
}

/**
 * srpt_drop_tport - configfs rmdir of a WWN
 * @wwn: the WWN; its TPGs are already gone.
 *
 * Context: process context (configfs).
 */
static void srpt_drop_tport(struct se_wwn *wwn)
{
	struct srpt_port_id *pid = container_of(wwn, struct srpt_port_id, wwn);
	struct srpt_port *sport = wwn->priv;

	mutex_lock(&srpt_dev_mutex);
	if (sport->guid_id == pid)
		sport->guid_id = NULL;
	else if (sport->gid_id == pid)
		sport->gid_id = NULL;
	else
		WARN_ON_ONCE(1);
	mutex_unlock(&srpt_dev_mutex);

	srpt_sdev_put(sport->sdev);
	kfree(pid);
}

const struct target_core_fabric_ops srpt_template = {
	.module				= THIS_MODULE,
	.fabric_name			= "srpt",
	.tpg_get_wwn			= srpt_get_fabric_wwn,
	.tpg_get_tag			= srpt_get_tag,
	.tpg_check_demo_mode_cache	= srpt_check_true,
	.tpg_check_demo_mode_write_protect = srpt_check_true,
	.release_cmd			= srpt_release_cmd,
	.check_stop_free		= srpt_check_stop_free,
	.close_session			= srpt_close_session,
	.write_pending			= srpt_write_pending,
	.get_cmd_state			= srpt_get_tcm_cmd_state,
	.queue_data_in			= srpt_queue_data_in,
	.queue_status			= srpt_queue_status,
	.queue_tm_rsp			= srpt_queue_tm_rsp,
	.aborted_task			= srpt_aborted_task,
	.fabric_make_wwn		= srpt_make_tport,
	.fabric_drop_wwn		= srpt_drop_tport,
	.fabric_make_tpg		= srpt_make_tpg,
	.fabric_enable_tpg		= srpt_enable_tpg,
	.fabric_drop_tpg		= srpt_drop_tpg,
	.fabric_init_nodeacl		= srpt_init_nodeacl,
	.tfc_discovery_attrs		= srpt_da_attrs,
	.tfc_wwn_attrs			= srpt_wwn_attrs,
	.tfc_tpg_attrib_attrs		= srpt_tpg_attrib_attrs,
	.tfc_tpg_nacl_base_attrs	= srpt_acl_attrs,
	.tfc_tpg_nacl_auth_attrs	= srpt_acl_auth_attrs,
	SRPT_COMPL_OPS
	.default_submit_type		= TARGET_DIRECT_SUBMIT,
	.direct_submit_supp		= 1,
};
