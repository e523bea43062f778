// SPDX-License-Identifier: GPL-2.0-only
/*
 * ib_srpt: services the other files share - the list of devices and
 * references to them, finding a port by its WWN name, the names and ids
 * of ports and initiators, message buffer slabs, and each device's shared
 * receive queue. Nothing here calls back into the rest of the module
 * except to post the SRQ's buffers.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ctype.h>
#include <linux/hex.h>
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/unaligned.h>
#include <kunit/visibility.h>

#include "srpt_priv.h"

/* Protects srpt_dev_list and the names and WWN pointers of its ports. */
DEFINE_MUTEX(srpt_dev_mutex);
LIST_HEAD(srpt_dev_list);

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
 * srpt_format_guid - format a GUID the way WWN and session names use it
 * @buf: output buffer.
 * @size: size of @buf, at least 20 bytes for the whole name.
 * @guid: GUID in network byte order.
 *
 * Context: any context.
 */
void srpt_format_guid(char *buf, size_t size, __be64 guid)
{
	u64 g = be64_to_cpu(guid);

	snprintf(buf, size, "%04x:%04x:%04x:%04x", (u16)(g >> 48),
		 (u16)(g >> 32), (u16)(g >> 16), (u16)g);
}
EXPORT_SYMBOL_IF_KUNIT(srpt_format_guid);

/**
 * srpt_format_id - format a 128-bit GID or port id as "0x" + 32 hex digits
 * @buf: output buffer.
 * @size: size of @buf, at least 35 bytes for the whole name.
 * @id: the identifier, most significant byte first.
 *
 * Context: any context.
 */
void srpt_format_id(char *buf, size_t size, const u8 id[16])
{
	snprintf(buf, size, "0x%016llx%016llx", get_unaligned_be64(id),
		 get_unaligned_be64(id + 8));
}
EXPORT_SYMBOL_IF_KUNIT(srpt_format_id);

/**
 * srpt_parse_guid - parse a GUID written as four colon separated groups
 * @guid: where to store the GUID in host byte order.
 * @name: text such as "fe80:0000:0000:0001"; each group has one to four hex
 *	digits and nothing may follow the last group.
 *
 * Context: any context.
 * Return: 0 or -EINVAL.
 */
int srpt_parse_guid(u64 *guid, const char *name)
{
	u64 g = 0;
	u16 word;
	int group, n;

	for (group = 0; group < 4; group++) {
		if (group && *name++ != ':')
			return -EINVAL;
		word = 0;
		for (n = 0; n < 4 && isxdigit(*name); n++)
			word = (word << 4) | hex_to_bin(*name++);
		if (n == 0 || isxdigit(*name))
			return -EINVAL;
		g = (g << 16) | word;
	}
	if (*name)
		return -EINVAL;
	*guid = g;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(srpt_parse_guid);

/**
 * srpt_parse_i_port_id - parse an initiator port id
 * @i_port_id: 16-byte output, most significant byte first.
 * @name: an even number (2 to 32) of hex digits, optionally preceded by
 *	"0x" or "0X". Shorter ids are zero-extended on the left, so
 *	"0x1234" and "0x0000...001234" are the same id.
 *
 * Context: any context.
 * Return: 0 or -EINVAL.
 */
int srpt_parse_i_port_id(u8 i_port_id[16], const char *name)
{
	size_t len;

	if (name[0] == '0' && (name[1] == 'x' || name[1] == 'X'))
		name += 2;
	len = strlen(name);
	if (len == 0 || len > 32 || len % 2)
		return -EINVAL;
	memset(i_port_id, 0, 16);
	return hex2bin(i_port_id + 16 - len / 2, name, len / 2);
}
EXPORT_SYMBOL_IF_KUNIT(srpt_parse_i_port_id);

/**
 * srpt_parse_port_name - parse the name of a WWN directory
 * @name: "xxxx:xxxx:xxxx:xxxx" (port GUID) or "0x" followed by exactly 32
 *	hex digits (port GID).
 * @out: the parsed name.
 *
 * Context: any context.
 * Return: 0 or -EINVAL.
 */
int srpt_parse_port_name(const char *name, struct srpt_port_name *out)
{
	memset(out, 0, sizeof(*out));
	if (!srpt_parse_guid(&out->guid, name)) {
		out->kind = SRPT_NAME_GUID;
		return 0;
	}
	if (strncasecmp(name, "0x", 2) || strlen(name) != 34)
		return -EINVAL;
	out->kind = SRPT_NAME_ID;
	return srpt_parse_i_port_id(out->id, name);
}
EXPORT_SYMBOL_IF_KUNIT(srpt_parse_port_name);

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

/**
 * srpt_free_srq - destroy a device's SRQ and free its buffers
 * @sdev: the device; nothing happens if it has no SRQ.
 *
 * Context: process context; caller holds @sdev->mutex or is the only user.
 */
void srpt_free_srq(struct srpt_device *sdev)
{
	if (!sdev->srq)
		return;
	ib_destroy_srq(sdev->srq);
	sdev->srq = NULL;
	srpt_recv_ring_free(sdev, sdev->srq_ring, sdev->srq_size,
			    sdev->req_buf_cache);
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
	sdev->srq_ring = srpt_recv_ring_alloc(sdev, sdev->srq_size,
					      sdev->req_buf_cache, 0);
	if (!sdev->srq_ring)
		goto err_put_cache;

	sdev->srq = srq;
	for (i = 0; i < sdev->srq_size; i++) {
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
