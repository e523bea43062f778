// SPDX-License-Identifier: GPL-2.0
/*
 * ibdevsim: module entry points and the topology interface.
 *
 * The fabric is built at run time through attributes of the "ibdevsim"
 * bus (see Documentation/infiniband/ibdevsim.rst):
 *
 *   /sys/bus/ibdevsim/new_hca      "ID NPORTS [GUID [PORT1_GUID]]"
 *   /sys/bus/ibdevsim/new_switch   "ID NPORTS [GUID]"
 *   /sys/bus/ibdevsim/del_node     "ID"
 *   /sys/bus/ibdevsim/new_cable    "ID1 PORT1 ID2 PORT2"
 *   /sys/bus/ibdevsim/new_remote_cable "ID PORT LPORT ADDR:PORT"
 *   /sys/bus/ibdevsim/del_cable    "ID PORT"
 *   /sys/bus/ibdevsim/topology     (read) the nodes and cables
 *   /sys/bus/ibdevsim/devices/node<ID>/node_desc  NodeDescription
 *
 * and pulled and plugged back, with fault knobs, in debugfs (fault.c).
 *
 * Each node is a device on the bus (node<ID>); an HCA's ib_device is its
 * child.
 */

#include <linux/debugfs.h>
#include <linux/inet.h>
#include <linux/module.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/utsname.h>
#include <linux/xarray.h>

#include "ibdevsim.h"

/*
 * Serialises changes of the topology; protects ibdevsim_nodes (in the
 * order the nodes were made) and ibdevsim_node_ids (the same nodes by
 * number, so that a fabric of thousands of nodes is built in linear time).
 */
DEFINE_MUTEX(ibdevsim_topo_mutex);
static LIST_HEAD(ibdevsim_nodes);
static DEFINE_XARRAY(ibdevsim_node_ids);

static const struct bus_type ibdevsim_bus;

/* The node numbered @id, or NULL; ibdevsim_topo_mutex held. */
static struct ibdevsim_node *ibdevsim_node_find(u32 id)
{
	lockdep_assert_held(&ibdevsim_topo_mutex);
	return xa_load(&ibdevsim_node_ids, id);
}

/* node_desc: the node's NodeDescription, as its SMA answers it. */
static ssize_t node_desc_show(struct device *dev,
			      struct device_attribute *attr, char *buf)
{
	struct ibdevsim_node *node = container_of(dev, struct ibdevsim_node,
						  dev);
	char desc[IB_DEVICE_NODE_DESC_MAX];
	unsigned long flags;

	spin_lock_irqsave(&node->lock, flags);
	memcpy(desc, node->desc, sizeof(desc));
	spin_unlock_irqrestore(&node->lock, flags);
	return sysfs_emit(buf, "%.*s\n", (int)sizeof(desc), desc);
}

/*
 * Set the NodeDescription (of an HCA, its ib_device's too, as
 * ib_modify_device() would).  One trailing newline is dropped; a
 * description longer than the 64 bytes of the attribute is refused.
 */
static ssize_t node_desc_store(struct device *dev,
			       struct device_attribute *attr,
			       const char *buf, size_t count)
{
	struct ibdevsim_node *node = container_of(dev, struct ibdevsim_node,
						  dev);
	char desc[IB_DEVICE_NODE_DESC_MAX] = {};
	size_t len = count;
	unsigned long flags;
	int ret = 0;

	if (len && buf[len - 1] == '\n')
		len--;
	if (len > sizeof(desc))
		return -EINVAL;
	memcpy(desc, buf, len);
	mutex_lock(&ibdevsim_topo_mutex);
	/* A node being deleted has left the table; its ib_device goes. */
	if (ibdevsim_node_find(node->id) != node) {
		ret = -ENODEV;
		goto out;
	}
	spin_lock_irqsave(&node->lock, flags);
	memcpy(node->desc, desc, sizeof(desc));
	if (node->hca)
		memcpy(node->hca->ibdev.node_desc, desc, sizeof(desc));
	spin_unlock_irqrestore(&node->lock, flags);
out:
	mutex_unlock(&ibdevsim_topo_mutex);
	return ret ? ret : count;
}
static DEVICE_ATTR_RW(node_desc);

static struct attribute *ibdevsim_node_attrs[] = {
	&dev_attr_node_desc.attr,
	NULL,
};
ATTRIBUTE_GROUPS(ibdevsim_node);

static void ibdevsim_node_release(struct device *dev)
{
	struct ibdevsim_node *node = container_of(dev, struct ibdevsim_node,
						  dev);

	if (node->sw) {
		kvfree(node->sw->lft);
		kvfree(node->sw->mft);
	}
	kfree(node->sw);
	kvfree(node);
}

/*
 * Create a node; ibdevsim_topo_mutex held.  A zero @guid picks one from
 * @id; an HCA's zero @port_guid makes its port N's GUID @guid + N.
 */
static int ibdevsim_node_new(enum ibdevsim_node_type type, u32 id, u32 nports,
			     u64 guid, u64 port_guid)
{
	struct ibdevsim_node *node;
	int ret, i;

	if (!nports || nports > (type == IBDEVSIM_NODE_SWITCH ?
				 IBDEVSIM_MAX_PORTS : IBDEVSIM_MAX_HCA_PORTS))
		return -EINVAL;
	if (ibdevsim_node_find(id))
		return -EEXIST;
	/* A 254-port switch's ports take more than a few pages. */
	node = kvzalloc(struct_size(node, ports, nports + 1), GFP_KERNEL);
	if (!node)
		return -ENOMEM;
	node->id = id;
	node->type = type;
	node->nports = nports;
	node->guid = guid ? guid : 0x0002c90000000000ULL | (u64)id << 8;
	node->port_guid = port_guid ? port_guid : node->guid + 1;
	spin_lock_init(&node->lock);
	for (i = 0; i <= nports; i++)
		ibdevsim_port_init(&node->ports[i], node, i);
	if (type == IBDEVSIM_NODE_SWITCH) {
		node->sw = kzalloc(sizeof(*node->sw), GFP_KERNEL);
		if (node->sw) {
			node->sw->lft = kvmalloc(IBDEVSIM_LFT_CAP, GFP_KERNEL);
			node->sw->mft =
				kvcalloc(array_size(IBDEVSIM_MFT_CAP,
						    ibdevsim_mft_positions(nports)),
					 sizeof(*node->sw->mft), GFP_KERNEL);
		}
		if (!node->sw || !node->sw->lft || !node->sw->mft) {
			if (node->sw) {
				kvfree(node->sw->lft);
				kvfree(node->sw->mft);
			}
			kfree(node->sw);
			kvfree(node);
			return -ENOMEM;
		}
		memset(node->sw->lft, 0xff, IBDEVSIM_LFT_CAP);
		snprintf(node->desc, sizeof(node->desc),
			 "ibdevsim switch %u", id);
	} else {
		/* A long host name is cut short, as the field is. */
		scnprintf(node->desc, sizeof(node->desc), "%s ibdevsim HCA %u",
			  init_utsname()->nodename, id);
	}

	device_initialize(&node->dev);
	node->dev.bus = &ibdevsim_bus;
	node->dev.release = ibdevsim_node_release;
	node->dev.groups = ibdevsim_node_groups;
	/* Only ibdevsim_topo_mutex's holder sees the node before it is done. */
	ret = xa_insert(&ibdevsim_node_ids, id, node, GFP_KERNEL);
	if (ret) {
		put_device(&node->dev);
		return ret;
	}
	ret = dev_set_name(&node->dev, "node%u", id);
	if (ret)
		goto err_put;
	ret = device_add(&node->dev);
	if (ret)
		goto err_put;
	if (type == IBDEVSIM_NODE_HCA) {
		ret = ibdevsim_hca_register(node);
		if (ret)
			goto err_del;
	}
	list_add_tail(&node->list, &ibdevsim_nodes);
	ibdevsim_fault_node_add(node);
	return 0;

err_del:
	device_del(&node->dev);
err_put:
	xa_erase(&ibdevsim_node_ids, id);
	put_device(&node->dev);
	return ret;
}

/*
 * Unregister, unplug and free a node; ibdevsim_topo_mutex held.  An HCA's
 * cables stay in while its ib_device is unregistered, as a real HCA's do
 * while its driver is removed: MADs and CM REQs keep arriving at its
 * QPs until each is destroyed.  Its receive side then stops; once the
 * cables are out and its delayed packets purged, a grace period ends the
 * walks that may still be at the node.
 */
static void ibdevsim_node_del(struct ibdevsim_node *node)
{
	int i;

	list_del(&node->list);
	xa_erase(&ibdevsim_node_ids, node->id);
	if (node->hca) {
		ibdevsim_hca_unregister(node);
		ibdevsim_hca_rx_stop(node);
	}
	/* No event for its own ports: their device is gone. */
	WRITE_ONCE(node->gone, true);
	for (i = 1; i <= node->nports; i++)
		ibdevsim_cable_unplug(&node->ports[i]);
	ibdevsim_fault_node_del(node);
	synchronize_rcu();
	if (node->hca)
		ibdevsim_hca_free(node);
	device_del(&node->dev);
	put_device(&node->dev);
}

static ssize_t ibdevsim_new_node_store(const char *buf, size_t count,
				       enum ibdevsim_node_type type)
{
	u64 guid = 0, port_guid = 0;
	u32 id, nports;
	int n, ret;

	n = sscanf(buf, "%u %u %llx %llx", &id, &nports, &guid, &port_guid);
	if (n < 2 || (n == 4 && type == IBDEVSIM_NODE_SWITCH))
		return -EINVAL;
	mutex_lock(&ibdevsim_topo_mutex);
	ret = ibdevsim_node_new(type, id, nports, guid, port_guid);
	mutex_unlock(&ibdevsim_topo_mutex);
	return ret ? ret : count;
}

static ssize_t new_hca_store(const struct bus_type *bus, const char *buf,
			     size_t count)
{
	return ibdevsim_new_node_store(buf, count, IBDEVSIM_NODE_HCA);
}
static BUS_ATTR_WO(new_hca);

static ssize_t new_switch_store(const struct bus_type *bus, const char *buf,
				size_t count)
{
	return ibdevsim_new_node_store(buf, count, IBDEVSIM_NODE_SWITCH);
}
static BUS_ATTR_WO(new_switch);

static ssize_t del_node_store(const struct bus_type *bus, const char *buf,
			      size_t count)
{
	struct ibdevsim_node *node;
	u32 id;
	int ret = 0;

	if (kstrtou32(strim((char *)buf), 0, &id))
		return -EINVAL;
	mutex_lock(&ibdevsim_topo_mutex);
	node = ibdevsim_node_find(id);
	if (node)
		ibdevsim_node_del(node);
	else
		ret = -ENOENT;
	mutex_unlock(&ibdevsim_topo_mutex);
	return ret ? ret : count;
}
static BUS_ATTR_WO(del_node);

/* The port @num of node @id, or NULL; ibdevsim_topo_mutex held. */
static struct ibdevsim_port *ibdevsim_port_find(u32 id, u32 num)
{
	struct ibdevsim_node *node = ibdevsim_node_find(id);

	if (!node || !num || num > node->nports)
		return NULL;
	return &node->ports[num];
}

static ssize_t new_cable_store(const struct bus_type *bus, const char *buf,
			       size_t count)
{
	struct ibdevsim_port *a, *b;
	u32 id1, p1, id2, p2;
	int ret;

	if (sscanf(buf, "%u %u %u %u", &id1, &p1, &id2, &p2) != 4)
		return -EINVAL;
	mutex_lock(&ibdevsim_topo_mutex);
	a = ibdevsim_port_find(id1, p1);
	b = ibdevsim_port_find(id2, p2);
	ret = a && b ? ibdevsim_cable_plug(a, b) : -ENOENT;
	mutex_unlock(&ibdevsim_topo_mutex);
	return ret ? ret : count;
}
static BUS_ATTR_WO(new_cable);

/*
 * "ID PORT LOCAL_UDP_PORT ADDR:UDP_PORT": a cable from a port of this
 * fabric to one in another kernel, reached over UDP/IPv4 (remote.c).
 */
static ssize_t new_remote_cable_store(const struct bus_type *bus,
				      const char *buf, size_t count)
{
	char addr[24], *colon;
	struct ibdevsim_port *port;
	u32 id, num, lport, rport;
	const char *end;
	__be32 ip;
	int ret;

	if (sscanf(buf, "%u %u %u %23s", &id, &num, &lport, addr) != 4)
		return -EINVAL;
	colon = strchr(addr, ':');
	if (!colon || kstrtou32(colon + 1, 10, &rport) || !rport ||
	    rport > U16_MAX || !lport || lport > U16_MAX ||
	    !in4_pton(addr, colon - addr, (u8 *)&ip, -1, &end) || end != colon)
		return -EINVAL;
	mutex_lock(&ibdevsim_topo_mutex);
	port = ibdevsim_port_find(id, num);
	ret = port ? ibdevsim_remote_plug(port, lport, ip, rport) : -ENOENT;
	mutex_unlock(&ibdevsim_topo_mutex);
	return ret ? ret : count;
}
static BUS_ATTR_WO(new_remote_cable);

static ssize_t del_cable_store(const struct bus_type *bus, const char *buf,
			       size_t count)
{
	struct ibdevsim_port *port;
	u32 id, num;
	int ret;

	if (sscanf(buf, "%u %u", &id, &num) != 2)
		return -EINVAL;
	mutex_lock(&ibdevsim_topo_mutex);
	port = ibdevsim_port_find(id, num);
	ret = port ? ibdevsim_cable_unplug(port) : -ENOENT;
	mutex_unlock(&ibdevsim_topo_mutex);
	return ret ? ret : count;
}
static BUS_ATTR_WO(del_cable);

/*
 * Hand the topology to @emit one line at a time, the nodes and then the
 * cables (each once, from its lower end), until @emit says stop.
 * ibdevsim_topo_mutex held: cables change only under it.
 */
static void ibdevsim_topology_walk(bool (*emit)(void *ctx, const char *line),
				   void *ctx)
{
	struct ibdevsim_node *node;
	char line[96];
	int i;

	lockdep_assert_held(&ibdevsim_topo_mutex);
	list_for_each_entry(node, &ibdevsim_nodes, list) {
		snprintf(line, sizeof(line), "node %u %s %u 0x%016llx%s%s\n",
			 node->id, node->hca ? "hca" : "switch", node->nports,
			 node->guid, node->hca ? " " : "",
			 node->hca ? dev_name(&node->hca->ibdev.dev) : "");
		if (!emit(ctx, line))
			return;
	}
	list_for_each_entry(node, &ibdevsim_nodes, list) {
		for (i = 1; i <= node->nports; i++) {
			struct ibdevsim_port *peer = node->ports[i].peer;

			if (node->ports[i].remote) {
				ibdevsim_remote_describe(node->ports[i].remote,
							 node->id, i, line,
							 sizeof(line));
				if (!emit(ctx, line))
					return;
				continue;
			}
			if (!peer || peer->node->id < node->id ||
			    (peer->node == node && peer->num < i))
				continue;
			snprintf(line, sizeof(line), "cable %u %u %u %u%s\n",
				 node->id, i, peer->node->id, peer->num,
				 peer->pulled ? " pulled" : "");
			if (!emit(ctx, line))
				return;
		}
	}
}

#define IBDEVSIM_TOPO_CUT \
	"# cut: the whole topology is in /sys/kernel/debug/ibdevsim/topology\n"

/* The sysfs page being filled, and whether the topology did not fit. */
struct ibdevsim_topo_page {
	char *buf;
	size_t len;
	bool cut;
};

static bool ibdevsim_topo_page_emit(void *ctx, const char *line)
{
	struct ibdevsim_topo_page *page = ctx;
	size_t n = strlen(line);

	if (page->len + n + sizeof(IBDEVSIM_TOPO_CUT) > PAGE_SIZE) {
		page->cut = true;
		return false;
	}
	memcpy(page->buf + page->len, line, n);
	page->len += n;
	return true;
}

/*
 * The topology in a sysfs page.  A fabric too large for one page ends
 * with a comment line that says so and where the whole of it is.
 */
static ssize_t topology_show(const struct bus_type *bus, char *buf)
{
	struct ibdevsim_topo_page page = { .buf = buf };

	mutex_lock(&ibdevsim_topo_mutex);
	ibdevsim_topology_walk(ibdevsim_topo_page_emit, &page);
	mutex_unlock(&ibdevsim_topo_mutex);
	if (page.cut)
		page.len += sysfs_emit_at(buf, page.len, IBDEVSIM_TOPO_CUT);
	return page.len;
}
static BUS_ATTR_RO(topology);

static bool ibdevsim_topo_seq_emit(void *ctx, const char *line)
{
	seq_puts(ctx, line);
	return true;
}

/* debugfs "topology": the same lines as the sysfs file, without a cut. */
static int ibdevsim_topology_seq_show(struct seq_file *m, void *v)
{
	mutex_lock(&ibdevsim_topo_mutex);
	ibdevsim_topology_walk(ibdevsim_topo_seq_emit, m);
	mutex_unlock(&ibdevsim_topo_mutex);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(ibdevsim_topology_seq);

static struct attribute *ibdevsim_bus_attrs[] = {
	&bus_attr_new_hca.attr,
	&bus_attr_new_switch.attr,
	&bus_attr_del_node.attr,
	&bus_attr_new_cable.attr,
	&bus_attr_new_remote_cable.attr,
	&bus_attr_del_cable.attr,
	&bus_attr_topology.attr,
	NULL,
};
ATTRIBUTE_GROUPS(ibdevsim_bus);

static const struct bus_type ibdevsim_bus = {
	.name = "ibdevsim",
	.bus_groups = ibdevsim_bus_groups,
};

static int __init ibdevsim_init(void)
{
	int ret;

	/*
	 * Both may be flushed from work that storage ULPs run on their own
	 * WQ_MEM_RECLAIM workqueues (ib_srpt destroys a channel's QP there,
	 * which flushes the ports' receive work and the QP's send work): a
	 * device's completion path must not wait for memory reclaim.
	 */
	ibdevsim_wq = alloc_workqueue("ibdevsim", WQ_UNBOUND | WQ_MEM_RECLAIM,
				      0);
	if (!ibdevsim_wq)
		return -ENOMEM;
	/* The ports' receive sides, as an HCA's interrupts: on any CPU. */
	ibdevsim_rx_wq = alloc_workqueue("ibdevsim_rx",
					 WQ_UNBOUND | WQ_HIGHPRI |
					 WQ_MEM_RECLAIM, 0);
	if (!ibdevsim_rx_wq) {
		ret = -ENOMEM;
		goto err_destroy_wq;
	}
	ret = ibdevsim_fault_init();
	if (ret)
		goto err_destroy_rx_wq;
	ret = bus_register(&ibdevsim_bus);
	if (ret)
		goto err_fault_exit;
	debugfs_create_file("topology", 0400, ibdevsim_debugfs, NULL,
			    &ibdevsim_topology_seq_fops);
	return 0;

err_fault_exit:
	ibdevsim_fault_exit();
err_destroy_rx_wq:
	destroy_workqueue(ibdevsim_rx_wq);
err_destroy_wq:
	destroy_workqueue(ibdevsim_wq);
	return ret;
}

static void __exit ibdevsim_exit(void)
{
	struct ibdevsim_node *node, *tmp;

	mutex_lock(&ibdevsim_topo_mutex);
	list_for_each_entry_safe_reverse(node, tmp, &ibdevsim_nodes, list)
		ibdevsim_node_del(node);
	mutex_unlock(&ibdevsim_topo_mutex);
	bus_unregister(&ibdevsim_bus);
	ibdevsim_fault_exit();
	destroy_workqueue(ibdevsim_rx_wq);
	destroy_workqueue(ibdevsim_wq);
}

module_init(ibdevsim_init);
module_exit(ibdevsim_exit);

MODULE_DESCRIPTION("Simulated InfiniBand fabric (HCAs, switches, cables)");
MODULE_LICENSE("GPL");
