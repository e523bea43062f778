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
MODULE_LICENSE("Dual BSD/GPL");

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

/* Protects srpt_dev_list and the names and WWN pointers of its ports. */
DEFINE_MUTEX(srpt_dev_mutex);
static LIST_HEAD(srpt_dev_list);

/**
 * struct srpt_cache - a slab of message buffers shared by equal sizes
 * @list: entry in srpt_caches.
 * @size: object size.
 * @users: number of srpt_cache_get() calls not yet undone.
 * @cache: the slab.
 */
struct srpt_cache {
	struct list_head	list;
	unsigned int		size;
	unsigned int		users;
	struct kmem_cache	*cache;
};

/* Protects srpt_caches. */
static DEFINE_MUTEX(srpt_cache_mutex);
static LIST_HEAD(srpt_caches);

/**
 * srpt_cache_get - get a slab of 512-byte aligned buffers of one size
 * @object_size: buffer size.
 *
 * Channels with the same buffer size share one slab.
 *
 * Context: process context; may sleep.
 * Return: the slab or NULL; release it with srpt_cache_put().
 */
struct kmem_cache *srpt_cache_get(unsigned int object_size)
{
	struct srpt_cache *c;
	char name[32];

	guard(mutex)(&srpt_cache_mutex);
	list_for_each_entry(c, &srpt_caches, list) {
		if (c->size == object_size) {
			c->users++;
			return c->cache;
		}
	}
	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		return NULL;
	snprintf(name, sizeof(name), "srpt-%u", object_size);
	c->cache = kmem_cache_create(name, object_size, SRPT_BUF_ALIGN, 0, NULL);
	if (!c->cache) {
		kfree(c);
		return NULL;
	}
	c->size = object_size;
	c->users = 1;
	list_add(&c->list, &srpt_caches);
	return c->cache;
}

/**
 * srpt_cache_put - drop a reference obtained with srpt_cache_get()
 * @cache: the slab; NULL is ignored.
 *
 * Context: process context; may sleep.
 */
void srpt_cache_put(struct kmem_cache *cache)
{
	struct srpt_cache *c;

	if (!cache)
		return;
	guard(mutex)(&srpt_cache_mutex);
	list_for_each_entry(c, &srpt_caches, list) {
		if (c->cache != cache)
			continue;
		if (--c->users == 0) {
			list_del(&c->list);
			kmem_cache_destroy(c->cache);
			kfree(c);
		}
		return;
	}
	WARN_ON_ONCE(1);
}

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

/**
 * srpt_srq_event - SRQ event callback
 * @event: what happened.
 * @ctx: the srpt_device passed at SRQ creation.
 *
 * Only logged: SRQ limit events are not armed and a catastrophic SRQ error
 * is followed by QP errors that close the channels.
 *
 * Context: may be called in interrupt context.
 */
static void srpt_srq_event(struct ib_event *event, void *ctx)
{
	struct srpt_device *sdev = ctx;

	pr_info("%s: SRQ event %d\n", dev_name(&sdev->device->dev),
		event->event);
}

static void srpt_free_srq(struct srpt_device *sdev)
{
	if (!sdev->srq)
		return;
	ib_destroy_srq(sdev->srq);
	sdev->srq = NULL;
	srpt_free_ioctx_ring((struct srpt_ioctx **)sdev->srq_ring, sdev,
			     sdev->srq_size, sdev->req_buf_cache,
			     DMA_FROM_DEVICE);
	sdev->srq_ring = NULL;
	srpt_cache_put(sdev->req_buf_cache);
	sdev->req_buf_cache = NULL;
}

static int srpt_create_srq(struct srpt_device *sdev)
{
	struct ib_srq_init_attr attr = {
		.event_handler = srpt_srq_event,
		.srq_context = sdev,
		.attr.max_wr = sdev->srq_size,
		.attr.max_sge = 1,
		.srq_type = IB_SRQT_BASIC,
	};
	struct ib_srq *srq;
	u32 i;
	int ret;

	lockdep_assert_held(&sdev->mutex);

	srq = ib_create_srq(sdev->pd, &attr);
	if (IS_ERR(srq))
		return PTR_ERR(srq);

	ret = -ENOMEM;
	sdev->req_buf_cache = srpt_cache_get(srp_max_req_size);
	if (!sdev->req_buf_cache)
		goto err_destroy_srq;
	sdev->srq_ring = (struct srpt_recv_ioctx **)
		srpt_alloc_ioctx_ring(sdev, sdev->srq_size,
				      sizeof(struct srpt_recv_ioctx),
				      sdev->req_buf_cache, 0, DMA_FROM_DEVICE);
	if (!sdev->srq_ring)
		goto err_put_cache;

	sdev->srq = srq;
	for (i = 0; i < sdev->srq_size; i++) {
		INIT_LIST_HEAD(&sdev->srq_ring[i]->wait_list);
		ret = srpt_post_recv(sdev, NULL, sdev->srq_ring[i]);
		if (ret)
			goto err_free_srq;
	}
	return 0;

err_free_srq:
	srpt_free_srq(sdev);
	return ret;
err_put_cache:
	srpt_cache_put(sdev->req_buf_cache);
	sdev->req_buf_cache = NULL;
err_destroy_srq:
	ib_destroy_srq(srq);
	return ret;
}

/**
 * srpt_get_srq - make sure the device has its shared receive queue
 * @sdev: the device.
 *
 * Context: process context; may sleep.
 * Return: 0 or a negative errno if the SRQ cannot be created.
 */
int srpt_get_srq(struct srpt_device *sdev)
{
	guard(mutex)(&sdev->mutex);
	return sdev->srq ? 0 : srpt_create_srq(sdev);
}

static void srpt_free_sdev(struct kref *kref)
{
	kfree(container_of(kref, struct srpt_device, refcnt));
}

/**
 * srpt_sdev_put - drop a reference to a device
 * @sdev: the device.
 *
 * Context: any context.
 */
void srpt_sdev_put(struct srpt_device *sdev)
{
	kref_put(&sdev->refcnt, srpt_free_sdev);
}

static bool srpt_port_matches(struct srpt_port *sport,
			      const struct srpt_port_name *pn)
{
	if (pn->kind == SRPT_NAME_GUID)
		return be64_to_cpu(sport->gid.global.interface_id) == pn->guid;
	return !memcmp(sport->gid.raw, pn->id, sizeof(pn->id));
}

/**
 * srpt_lookup_port - find the port a WWN name refers to
 * @name: WWN directory name, see srpt_parse_port_name().
 * @slot: set to the port's guid_id or gid_id pointer, by the form of @name.
 *
 * Context: process context; takes srpt_dev_mutex.
 * Return: the port, with a reference on its device that the caller drops
 * with srpt_sdev_put(), or NULL if no port has that name.
 */
struct srpt_port *srpt_lookup_port(const char *name,
				   struct srpt_port_id ***slot)
{
	struct srpt_port_name pn;
	struct srpt_device *sdev;
	u32 i;

	if (srpt_parse_port_name(name, &pn))
		return NULL;

	guard(mutex)(&srpt_dev_mutex);
	list_for_each_entry(sdev, &srpt_dev_list, list) {
		for (i = 0; i < sdev->device->phys_port_cnt; i++) {
			struct srpt_port *sport = &sdev->port[i];

			if (!srpt_port_matches(sport, &pn))
				continue;
			kref_get(&sdev->refcnt);
			*slot = pn.kind == SRPT_NAME_GUID ? &sport->guid_id :
							    &sport->gid_id;
			return sport;
		}
	}
	return NULL;
}

/**
 * srpt_log_port_names - log the WWN names the RDMA ports have
 * @wrong: the name that matched no port, for the first line.
 *
 * Tells an administrator whose mkdir of a WWN failed what was expected.
 *
 * Context: process context; takes srpt_dev_mutex.
 */
void srpt_log_port_names(const char *wrong)
{
	struct srpt_device *sdev;
	u32 i;

	guard(mutex)(&srpt_dev_mutex);
	pr_err("no RDMA port named %s; the ports are named:%s\n", wrong,
	       list_empty(&srpt_dev_list) ? " (none: no RDMA device yet)" : "");
	list_for_each_entry(sdev, &srpt_dev_list, list) {
		for (i = 0; i < sdev->device->phys_port_cnt; i++)
			pr_err("  %s-%u: %s (targetcli: ib.%s) or %s\n",
			       dev_name(&sdev->device->dev), i + 1,
			       sdev->port[i].gid_name, sdev->port[i].gid_name + 2,
			       sdev->port[i].guid_name);
	}
}

/**
 * srpt_sdev_get - find the srpt_device of an RDMA device
 * @device: the RDMA device.
 *
 * Context: process context; takes srpt_dev_mutex.
 * Return: the device with a reference held, or NULL once it is being removed.
 */
struct srpt_device *srpt_sdev_get(struct ib_device *device)
{
	struct srpt_device *sdev;

	guard(mutex)(&srpt_dev_mutex);
	list_for_each_entry(sdev, &srpt_dev_list, list) {
		if (sdev->device == device) {
			kref_get(&sdev->refcnt);
			return sdev;
		}
	}
	return NULL;
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
 * Checks the module parameters, then registers the LIO fabric before the
 * ib_client so that devices appearing during registration can already be
 * named in configfs, and last starts the RDMA/CM listener if rdma_cm_port
 * asks for one.
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

	ret = target_register_template(&srpt_template);
	if (ret)
		return ret;
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
	return ret;
}

static void __exit srpt_cleanup_module(void)
{
	srpt_rdma_cm_stop();
	ib_unregister_client(&srpt_client);
	target_unregister_template(&srpt_template);
}

module_init(srpt_init_module);
module_exit(srpt_cleanup_module);
