// SPDX-License-Identifier: GPL-2.0-only
/*
 * ib_srpt: module parameters, module init/exit and the ib_client that sets
 * up and tears down each RDMA device.
 *
 * Device setup order (srpt_add_one()) and its exact reverse
 * (srpt_remove_one()):
 *   protection domain -> IB CM listener -> per-port state and DM agents ->
 *   async event handler -> visible in srpt_dev_list.
 * The shared receive queue is created lazily by the first channel that asks
 * for it and destroyed last, once every channel of the device is gone.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <rdma/ib_cache.h>
#include <target/target_core_base.h>
#include <target/target_core_fabric.h>
#include <kunit/visibility.h>

#include "srpt_priv.h"

MODULE_AUTHOR("ib-mad-srpt project");
MODULE_DESCRIPTION("SCSI RDMA Protocol target driver");
MODULE_LICENSE("GPL");

unsigned int srp_max_req_size = SRPT_DEF_REQ_SIZE;
EXPORT_SYMBOL_IF_KUNIT(srp_max_req_size);
module_param(srp_max_req_size, uint, 0444);
MODULE_PARM_DESC(srp_max_req_size,
		 "Maximum size of SRP request messages in bytes.");

int srpt_srq_size = SRPT_DEF_SRQ_SIZE;
module_param(srpt_srq_size, int, 0444);
MODULE_PARM_DESC(srpt_srq_size, "Shared receive queue (SRQ) size.");

u64 srpt_service_guid;
EXPORT_SYMBOL_IF_KUNIT(srpt_service_guid);

/*
 * Runs the channels' fatal and release works. Ours, not a system workqueue,
 * so that srpt_remove_one() and module exit can wait for the last release
 * work to return: it wakes srpt_release_sport() before it is done with the
 * channel and with this module's code.
 */
struct workqueue_struct *srpt_wq;

static int srpt_guid_param_set(const char *val, const struct kernel_param *kp)
{
	return kstrtou64(val, 16, kp->arg);
}

static int srpt_guid_param_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "0x%016llx\n", *(u64 *)kp->arg);
}

static const struct kernel_param_ops srpt_guid_param_ops = {
	.set = srpt_guid_param_set,
	.get = srpt_guid_param_get,
};
module_param_cb(srpt_service_guid, &srpt_guid_param_ops, &srpt_service_guid,
		0444);
MODULE_PARM_DESC(srpt_service_guid,
		 "Using this value for ioc_guid, id_ext, and cm_listen_id instead of using the node_guid of the first HCA.");

/*
 * The RDMA/CM listener port at module load. targetcli's saveconfig.json has
 * no place for discovery_auth/rdma_cm_port, so "options ib_srpt
 * rdma_cm_port=N" in /etc/modprobe.d is what survives a reboot. Reading the
 * parameter shows the port listened on now, whichever way it was set.
 */
static u16 srpt_rdma_cm_port_param;

static int srpt_cm_port_param_set(const char *val,
				  const struct kernel_param *kp)
{
	int ret = kstrtou16(val, 0, kp->arg);

	if (ret)
		pr_err("rdma_cm_port=%s: must be a port number in [0..65535] (0: off)\n",
		       val);
	return ret;
}

static int srpt_cm_port_param_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%u\n", srpt_rdma_cm_port_get());
}

static const struct kernel_param_ops srpt_cm_port_param_ops = {
	.set = srpt_cm_port_param_set,
	.get = srpt_cm_port_param_get,
};
module_param_cb(rdma_cm_port, &srpt_cm_port_param_ops,
		&srpt_rdma_cm_port_param, 0444);
MODULE_PARM_DESC(rdma_cm_port,
		 "RDMA/CM port to listen on from module load (0, the default: none); the same as writing discovery_auth/rdma_cm_port in configfs, which can change it later.");

/**
 * srpt_event_handler - asynchronous IB event callback
 * @handler: the handler registered in srpt_add_one().
 * @event: what happened.
 *
 * A port going down forgets its LIDs; every event that may change a port's
 * LID, P_Key table, SM or GIDs schedules srpt_refresh_port() for it.
 *
 * Context: may be called in interrupt context.
 */
static void srpt_event_handler(struct ib_event_handler *handler,
			       struct ib_event *event)
{
	struct srpt_device *sdev =
		container_of(handler, struct srpt_device, event_handler);
	u32 port = event->element.port_num;
	struct srpt_port *sport;

	switch (event->event) {
	case IB_EVENT_PORT_ERR:
	case IB_EVENT_PORT_ACTIVE:
	case IB_EVENT_LID_CHANGE:
	case IB_EVENT_PKEY_CHANGE:
	case IB_EVENT_SM_CHANGE:
	case IB_EVENT_CLIENT_REREGISTER:
	case IB_EVENT_GID_CHANGE:
		break;
	default:
		pr_debug("%s: ignoring async event %d\n",
			 dev_name(&sdev->device->dev), event->event);
		return;
	}
	if (port < 1 || port > sdev->device->phys_port_cnt) {
		pr_warn("%s: event %d for invalid port %u\n",
			dev_name(&sdev->device->dev), event->event, port);
		return;
	}
	sport = &sdev->port[port - 1];
	if (event->event == IB_EVENT_PORT_ERR) {
		WRITE_ONCE(sport->lid, 0);
		WRITE_ONCE(sport->sm_lid, 0);
		return;
	}
	schedule_work(&sport->work);
}

static void srpt_refresh_port_work(struct work_struct *work)
{
	struct srpt_port *sport = container_of(work, struct srpt_port, work);
	int ret;

	ret = srpt_refresh_port(sport);
	if (ret)
		pr_warn("%s-%u: port refresh failed (%d)\n",
			dev_name(&sport->sdev->device->dev), sport->port, ret);
}

static void srpt_init_port(struct srpt_device *sdev, u32 port)
{
	struct srpt_port *sport = &sdev->port[port - 1];

	sport->sdev = sdev;
	sport->port = port;
	sport->dm_rdma_size = SRPT_DEF_RDMA_SIZE;
	mutex_init(&sport->mutex);
	INIT_LIST_HEAD(&sport->nexus_list);
	INIT_WORK(&sport->work, srpt_refresh_port_work);
}

static int srpt_listen_ib_cm(struct srpt_device *sdev)
{
	struct ib_cm_id *cm_id;
	int ret;

	if (rdma_port_get_link_layer(sdev->device, 1) !=
	    IB_LINK_LAYER_INFINIBAND)
		return 0;
	cm_id = ib_create_cm_id(sdev->device, srpt_cm_handler, sdev);
	if (IS_ERR(cm_id))
		return PTR_ERR(cm_id);
	ret = ib_cm_listen(cm_id, cpu_to_be64(srpt_service_guid));
	if (ret) {
		ib_destroy_cm_id(cm_id);
		return ret;
	}
	sdev->cm_id = cm_id;
	return 0;
}

/**
 * srpt_add_one - ib_client callback for a new RDMA device
 * @device: the device.
 *
 * Context: process context; may sleep.
 * Return: 0 or a negative errno; on error nothing is left behind.
 */
static int srpt_add_one(struct ib_device *device)
{
	struct srpt_device *sdev;
	u32 i;
	int ret;

	sdev = kzalloc(struct_size(sdev, port, device->phys_port_cnt),
		       GFP_KERNEL);
	if (!sdev)
		return -ENOMEM;
	kref_init(&sdev->refcnt);
	sdev->device = device;
	mutex_init(&sdev->mutex);
	sdev->srq_size = min_t(u32, srpt_srq_size, device->attrs.max_srq_wr);
	for (i = 1; i <= device->phys_port_cnt; i++)
		srpt_init_port(sdev, i);

	sdev->pd = ib_alloc_pd(device, 0);
	if (IS_ERR(sdev->pd)) {
		ret = PTR_ERR(sdev->pd);
		goto err_put_sdev;
	}
	sdev->lkey = sdev->pd->local_dma_lkey;

	/* The first device names the target unless the user chose a GUID. */
	if (!srpt_service_guid)
		srpt_service_guid = be64_to_cpu(device->node_guid);

	ret = srpt_listen_ib_cm(sdev);
	if (ret)
		goto err_dealloc_pd;

	for (i = 0; i < device->phys_port_cnt; i++) {
		ret = srpt_refresh_port(&sdev->port[i]);
		if (ret)
			goto err_unregister_mad;
	}

	INIT_IB_EVENT_HANDLER(&sdev->event_handler, device, srpt_event_handler);
	ib_register_event_handler(&sdev->event_handler);

	mutex_lock(&srpt_dev_mutex);
	list_add_tail(&sdev->list, &srpt_dev_list);
	mutex_unlock(&srpt_dev_mutex);

	ib_set_client_data(device, &srpt_client, sdev);
	pr_debug("added %s, service GUID 0x%016llx\n", dev_name(&device->dev),
		 srpt_service_guid);
	return 0;

err_unregister_mad:
	srpt_unregister_mad_agent(sdev, i);
	if (sdev->cm_id)
		ib_destroy_cm_id(sdev->cm_id);
err_dealloc_pd:
	ib_dealloc_pd(sdev->pd);
err_put_sdev:
	srpt_sdev_put(sdev);
	pr_warn("adding %s failed (%d)\n", dev_name(&device->dev), ret);
	return ret;
}

/**
 * srpt_remove_one - ib_client callback for a disappearing RDMA device
 * @device: the device.
 * @client_data: the srpt_device set by srpt_add_one().
 *
 * Stops port refreshes, then DM, stops IB CM logins, hides the device from
 * configfs lookups and RDMA/CM logins, then closes every channel and waits
 * for it to be released before freeing the SRQ and the protection domain.
 * The srpt_device itself lives on while WWN directories refer to it.
 *
 * Context: process context; may sleep.
 */
static void srpt_remove_one(struct ib_device *device, void *client_data)
{
	struct srpt_device *sdev = client_data;
	u32 i;

	/*
	 * The refresh work registers a port's MAD agent if it has none: no
	 * event may schedule it and none may run once the agents are gone.
	 */
	ib_unregister_event_handler(&sdev->event_handler);
	for (i = 0; i < device->phys_port_cnt; i++)
		cancel_work_sync(&sdev->port[i].work);
	srpt_unregister_mad_agent(sdev, device->phys_port_cnt);

	if (sdev->cm_id)
		ib_destroy_cm_id(sdev->cm_id);

	mutex_lock(&srpt_dev_mutex);
	list_del(&sdev->list);
	mutex_unlock(&srpt_dev_mutex);

	for (i = 0; i < device->phys_port_cnt; i++)
		srpt_release_sport(&sdev->port[i]);
	/* The release works that woke srpt_release_sport() have returned. */
	flush_workqueue(srpt_wq);

	mutex_lock(&sdev->mutex);
	srpt_free_srq(sdev);
	mutex_unlock(&sdev->mutex);
	ib_dealloc_pd(sdev->pd);
	srpt_sdev_put(sdev);
}

struct ib_client srpt_client = {
	.name = SRPT_DRV_NAME,
	.add = srpt_add_one,
	.remove = srpt_remove_one,
};

/**
 * srpt_init_module - ib_srpt module initialization
 *
 * Checks the module parameters, creates the channels' workqueue, then
 * registers the LIO fabric before the ib_client so that devices appearing
 * during registration can already be named in configfs, and last starts
 * the RDMA/CM listener if rdma_cm_port asks for one.
 *
 * Context: process context (module load).
 * Return: 0 or a negative errno.
 */
static int __init srpt_init_module(void)
{
	int ret;

	if (srp_max_req_size < SRPT_MIN_REQ_SIZE) {
		pr_err("srp_max_req_size %u is below the minimum %d\n",
		       srp_max_req_size, SRPT_MIN_REQ_SIZE);
		return -EINVAL;
	}
	if (srpt_srq_size < SRPT_MIN_SRQ_SIZE ||
	    srpt_srq_size > SRPT_MAX_SRQ_SIZE) {
		pr_err("srpt_srq_size %d is outside [%d..%d]\n", srpt_srq_size,
		       SRPT_MIN_SRQ_SIZE, SRPT_MAX_SRQ_SIZE);
		return -EINVAL;
	}

	srpt_wq = alloc_workqueue("ib_srpt", WQ_MEM_RECLAIM | WQ_PERCPU, 0);
	if (!srpt_wq)
		return -ENOMEM;
	ret = target_register_template(&srpt_template);
	if (ret)
		goto err_destroy_wq;
	ret = ib_register_client(&srpt_client);
	if (ret) {
		pr_err("ib_register_client() failed (%d)\n", ret);
		goto err_unregister_template;
	}
	/*
	 * The listener covers RDMA devices added later too. Failing to
	 * listen does not fail the load: configfs can still be restored and
	 * the port set there.
	 */
	if (srpt_rdma_cm_port_param) {
		ret = srpt_rdma_cm_port_set(srpt_rdma_cm_port_param);
		if (ret)
			pr_err("rdma_cm_port=%u: listening failed (%d); no RDMA/CM logins until discovery_auth/rdma_cm_port is written\n",
			       srpt_rdma_cm_port_param, ret);
	}
	return 0;

err_unregister_template:
	target_unregister_template(&srpt_template);
err_destroy_wq:
	destroy_workqueue(srpt_wq);
	return ret;
}

static void __exit srpt_cleanup_module(void)
{
	srpt_rdma_cm_stop();
	ib_unregister_client(&srpt_client);
	target_unregister_template(&srpt_template);
	/* Waits for any channel work still returning into this module. */
	destroy_workqueue(srpt_wq);
}

module_init(srpt_init_module);
module_exit(srpt_cleanup_module);
