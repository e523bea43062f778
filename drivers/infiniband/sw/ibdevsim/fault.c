// SPDX-License-Identifier: GPL-2.0
/*
 * ibdevsim: fault knobs, netdevsim style.
 *
 * Every external port of every node has a debugfs directory,
 * /sys/kernel/debug/ibdevsim/node<ID>/port<N>/, whose knobs act on the
 * packets that leave the port through its cable (one direction of the
 * cable; set both ends for both):
 *
 *   drop, duplicate, delay   per mille of the packets lost, sent twice or
 *                            held back by delay_ms
 *   delay_ms                 how long a delayed packet is held back
 *   classes                  which packets: 1 SMPs (QP0), 2 GMPs to QP1,
 *                            4 other UD datagrams, 8 RC packets (default
 *                            0xf, all)
 *   dropped, duplicated,     what the knobs did (read only)
 *   delayed
 *   sq_errors                send queues of the port's UD, GSI and SMI
 *                            QPs stopped in SQE by a failed send, as on
 *                            hardware (read only; not a knob's doing)
 *   link                     "down" pulls the cable out (both ends go
 *                            DOWN), "up" plugs it back (both train to
 *                            INIT, the SM does the rest); reads back
 *                            "up", "down" or "none" (no cable)
 *
 * An HCA node also has a write-only "qp_fatal": writing the number of one
 * of its UD or RC QPs moves that QP to the error state and raises
 * IB_EVENT_QP_FATAL, as a hardware QP that fails does.
 *
 * The decision is ibdevsim_fault_decide(), a pure function of the knobs
 * and three random draws, so that KUnit can drive it.  Delayed packets and
 * duplicates wait on one queue ordered by when they are due; a delayed
 * work puts them back on the wire at the cable they were about to cross.
 */

#include <linux/debugfs.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <kunit/visibility.h>

#include "ibdevsim.h"

/* /sys/kernel/debug/ibdevsim: the module's knobs and a directory per node. */
struct dentry *ibdevsim_debugfs;

/* Protects ibdevsim_delayq; taken inside a node lock. */
static DEFINE_SPINLOCK(ibdevsim_delay_lock);

/* Delayed packets by due time. */
static LIST_HEAD(ibdevsim_delayq);
static void ibdevsim_delay_work_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(ibdevsim_delay_work, ibdevsim_delay_work_fn);

/**
 * ibdevsim_fault_class() - which knob class a packet belongs to
 * @pkt: the packet
 *
 * Return: one IBDEVSIM_FAULT_CLASS_* bit.
 */
u32 ibdevsim_fault_class(const struct ibdevsim_pkt *pkt)
{
	if (pkt->rc)
		return IBDEVSIM_FAULT_CLASS_RC;
	if (pkt->vl15)
		return IBDEVSIM_FAULT_CLASS_QP0;
	if (pkt->dest_qpn == 1)
		return IBDEVSIM_FAULT_CLASS_QP1;
	return IBDEVSIM_FAULT_CLASS_UD;
}
EXPORT_SYMBOL_IF_KUNIT(ibdevsim_fault_class);

/**
 * ibdevsim_fault_decide() - what the knobs do to one packet
 * @f: the knobs
 * @cls: the packet's IBDEVSIM_FAULT_CLASS_* bit
 * @draw: three random numbers below %IBDEVSIM_FAULT_SCALE, one for each of
 *	  drop, duplicate and delay
 *
 * A packet whose class the knobs do not cover goes through untouched.  A
 * dropped packet is neither duplicated nor delayed; a packet may be both
 * duplicated and delayed (the copy is then delayed too).  A delay of 0 ms
 * delays nothing.
 *
 * Return: IBDEVSIM_FAULT_* bits, 0 to let the packet through.
 */
u32 ibdevsim_fault_decide(const struct ibdevsim_faults *f, u32 cls,
			  const u32 draw[3])
{
	u32 act = 0;

	if (!(READ_ONCE(f->classes) & cls))
		return 0;
	if (draw[0] < READ_ONCE(f->drop))
		return IBDEVSIM_FAULT_DROP;
	if (draw[1] < READ_ONCE(f->duplicate))
		act |= IBDEVSIM_FAULT_DUPLICATE;
	if (draw[2] < READ_ONCE(f->delay) && READ_ONCE(f->delay_ms))
		act |= IBDEVSIM_FAULT_DELAY;
	return act;
}
EXPORT_SYMBOL_IF_KUNIT(ibdevsim_fault_decide);

/**
 * ibdevsim_link_parse() - parse what is written to a port's "link" knob
 * @buf: the text: "up" or "1", "down" or "0", optionally with a newline
 * @up: set to the state asked for
 *
 * Return: 0, or -EINVAL for anything else.
 */
int ibdevsim_link_parse(const char *buf, bool *up)
{
	if (sysfs_streq(buf, "up") || sysfs_streq(buf, "1")) {
		*up = true;
		return 0;
	}
	if (sysfs_streq(buf, "down") || sysfs_streq(buf, "0")) {
		*up = false;
		return 0;
	}
	return -EINVAL;
}
EXPORT_SYMBOL_IF_KUNIT(ibdevsim_link_parse);

/* Queue a packet to cross @out's cable at @due; @out's node lock held. */
static void ibdevsim_delay_locked(struct ibdevsim_port *out,
				  struct ibdevsim_pkt *pkt, unsigned long due)
{
	struct ibdevsim_pkt *pos;

	lockdep_assert_held(&out->node->lock);
	spin_lock(&ibdevsim_delay_lock);
	pkt->via = out;
	pkt->due = due;
	pkt->faulted = true;
	/* Most packets are due last: look from the tail. */
	list_for_each_entry_reverse(pos, &ibdevsim_delayq, list)
		if (time_before_eq(pos->due, due))
			break;
	list_add(&pkt->list, &pos->list);
	if (list_first_entry(&ibdevsim_delayq, struct ibdevsim_pkt, list) == pkt)
		mod_delayed_work(ibdevsim_wq, &ibdevsim_delay_work,
				 due - jiffies);
	spin_unlock(&ibdevsim_delay_lock);
}

/**
 * ibdevsim_fault_apply_locked() - let a port's knobs act on a packet
 * @out: the port the packet leaves by
 * @pkt: the packet, about to cross @out's cable
 *
 * A packet that the knobs already saw at this cable (it comes off the
 * delay queue) goes through; its next cable judges it afresh.
 *
 * Context: @out's node lock held (it protects the counters).
 * Return: true when the packet goes on now; false when the knobs took it
 * (freed when dropped, queued when delayed).
 */
bool ibdevsim_fault_apply_locked(struct ibdevsim_port *out,
				 struct ibdevsim_pkt *pkt)
{
	struct ibdevsim_faults *f = &out->faults;
	unsigned long due;
	u32 draw[3], act;
	int i;

	lockdep_assert_held(&out->node->lock);
	if (pkt->faulted) {
		pkt->faulted = false;
		return true;
	}
	if (!READ_ONCE(f->drop) && !READ_ONCE(f->duplicate) &&
	    !READ_ONCE(f->delay))
		return true;
	for (i = 0; i < ARRAY_SIZE(draw); i++)
		draw[i] = get_random_u32_below(IBDEVSIM_FAULT_SCALE);
	act = ibdevsim_fault_decide(f, ibdevsim_fault_class(pkt), draw);
	if (act & IBDEVSIM_FAULT_DROP) {
		f->dropped++;
		ibdevsim_pkt_free(pkt);
		return false;
	}
	due = jiffies;
	if (act & IBDEVSIM_FAULT_DELAY)
		due += msecs_to_jiffies(min_t(u32, READ_ONCE(f->delay_ms),
					      IBDEVSIM_FAULT_MAX_DELAY_MS));
	if (act & IBDEVSIM_FAULT_DUPLICATE) {
		struct ibdevsim_pkt *copy;

		copy = kmemdup(pkt, struct_size(pkt, data, pkt->len),
			       GFP_ATOMIC);
		if (copy) {
			INIT_LIST_HEAD(&copy->list);
			f->duplicated++;
			if (act & IBDEVSIM_FAULT_DELAY)
				f->delayed++;
			ibdevsim_delay_locked(out, copy, due);
		}
	}
	if (!(act & IBDEVSIM_FAULT_DELAY))
		return true;
	f->delayed++;
	ibdevsim_delay_locked(out, pkt, due);
	return false;
}

/*
 * Put the packets that are due back on the wire.  The RCU read section
 * starts before they leave the queue, so that a node being deleted, which
 * purges the queue and then waits for a grace period, outlives the walks.
 */
static void ibdevsim_delay_work_fn(struct work_struct *work)
{
	struct ibdevsim_pkt *pkt, *tmp;
	unsigned long flags;
	LIST_HEAD(due);

	rcu_read_lock();
	spin_lock_irqsave(&ibdevsim_delay_lock, flags);
	while ((pkt = list_first_entry_or_null(&ibdevsim_delayq,
					       struct ibdevsim_pkt, list))) {
		if (time_after(pkt->due, jiffies)) {
			mod_delayed_work(ibdevsim_wq, &ibdevsim_delay_work,
					 pkt->due - jiffies);
			break;
		}
		list_move_tail(&pkt->list, &due);
	}
	spin_unlock_irqrestore(&ibdevsim_delay_lock, flags);
	list_for_each_entry_safe(pkt, tmp, &due, list) {
		list_del_init(&pkt->list);
		ibdevsim_walk(pkt->via, pkt);
	}
	rcu_read_unlock();
}

static int ibdevsim_link_show(struct seq_file *m, void *v)
{
	struct ibdevsim_port *port = m->private;
	unsigned long flags;
	const char *s;

	spin_lock_irqsave(&port->node->lock, flags);
	s = !port->peer && !port->remote ? "none" :
	    port->pulled ? "down" : "up";
	spin_unlock_irqrestore(&port->node->lock, flags);
	seq_printf(m, "%s\n", s);
	return 0;
}

static int ibdevsim_link_open(struct inode *inode, struct file *file)
{
	return single_open(file, ibdevsim_link_show, inode->i_private);
}

static ssize_t ibdevsim_link_write(struct file *file, const char __user *ubuf,
				   size_t count, loff_t *ppos)
{
	struct ibdevsim_port *port = file_inode(file)->i_private;
	char buf[8] = {};
	bool up;
	int ret;

	if (count >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	ret = ibdevsim_link_parse(buf, &up);
	if (ret)
		return ret;
	/*
	 * Deleting a node removes this file while holding the topology
	 * mutex, and waits for writers: do not wait for the mutex here.
	 */
	if (!mutex_trylock(&ibdevsim_topo_mutex))
		return restart_syscall();
	ret = ibdevsim_cable_set_link(port, up);
	mutex_unlock(&ibdevsim_topo_mutex);
	return ret ? ret : count;
}

static const struct file_operations ibdevsim_link_fops = {
	.owner = THIS_MODULE,
	.open = ibdevsim_link_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
	.write = ibdevsim_link_write,
};

static ssize_t ibdevsim_qp_fatal_write(struct file *file,
				       const char __user *ubuf, size_t count,
				       loff_t *ppos)
{
	struct ibdevsim_node *node = file_inode(file)->i_private;
	u32 qpn;
	int ret;

	ret = kstrtou32_from_user(ubuf, count, 0, &qpn);
	if (ret)
		return ret;
	/* As for "link": the node's removal waits for writers. */
	if (!mutex_trylock(&ibdevsim_topo_mutex))
		return restart_syscall();
	ret = node->hca ? ibdevsim_qp_inject_fatal(node->hca, qpn) : -ENODEV;
	mutex_unlock(&ibdevsim_topo_mutex);
	return ret ? ret : count;
}

static const struct file_operations ibdevsim_qp_fatal_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = ibdevsim_qp_fatal_write,
};

/**
 * ibdevsim_fault_node_add() - give a new node its knobs in debugfs
 * @node: the node
 *
 * Failing to create debugfs entries is not an error: the node works
 * without knobs.
 *
 * Context: ibdevsim_topo_mutex held.
 */
void ibdevsim_fault_node_add(struct ibdevsim_node *node)
{
	char name[16];
	int i;

	snprintf(name, sizeof(name), "node%u", node->id);
	node->debugfs = debugfs_create_dir(name, ibdevsim_debugfs);
	if (node->hca)
		debugfs_create_file("qp_fatal", 0200, node->debugfs, node,
				    &ibdevsim_qp_fatal_fops);
	for (i = 1; i <= node->nports; i++) {
		struct ibdevsim_port *port = &node->ports[i];
		struct ibdevsim_faults *f = &port->faults;
		struct dentry *d;

		f->classes = IBDEVSIM_FAULT_CLASS_ALL;
		snprintf(name, sizeof(name), "port%d", i);
		d = debugfs_create_dir(name, node->debugfs);
		debugfs_create_u32("drop", 0600, d, &f->drop);
		debugfs_create_u32("duplicate", 0600, d, &f->duplicate);
		debugfs_create_u32("delay", 0600, d, &f->delay);
		debugfs_create_u32("delay_ms", 0600, d, &f->delay_ms);
		debugfs_create_x32("classes", 0600, d, &f->classes);
		debugfs_create_u64("dropped", 0400, d, &f->dropped);
		debugfs_create_u64("duplicated", 0400, d, &f->duplicated);
		debugfs_create_u64("delayed", 0400, d, &f->delayed);
		debugfs_create_file("link", 0600, d, port, &ibdevsim_link_fops);
		debugfs_create_u64("sq_errors", 0400, d, &port->sq_errors);
		debugfs_create_u64("pkey_refused", 0400, d,
				   &port->pkey_refused);
		debugfs_create_u64("qkey_refused", 0400, d,
				   &port->qkey_refused);
	}
}

/**
 * ibdevsim_fault_node_del() - remove a node's knobs and its delayed packets
 * @node: the node, its cables already pulled
 *
 * Context: ibdevsim_topo_mutex held; may sleep (waits for knob writers).
 */
void ibdevsim_fault_node_del(struct ibdevsim_node *node)
{
	struct ibdevsim_pkt *pkt, *tmp;
	unsigned long flags;

	debugfs_remove(node->debugfs);
	node->debugfs = NULL;
	spin_lock_irqsave(&ibdevsim_delay_lock, flags);
	list_for_each_entry_safe(pkt, tmp, &ibdevsim_delayq, list) {
		if (pkt->via->node != node)
			continue;
		list_del(&pkt->list);
		ibdevsim_pkt_free(pkt);
	}
	spin_unlock_irqrestore(&ibdevsim_delay_lock, flags);
}

/**
 * ibdevsim_fault_init() - create the debugfs root and the module-wide knob
 *
 * The root holds removal_events (raise port events while an HCA is being
 * unregistered) and removal_events_sent, how many it raised.
 *
 * Context: module load.
 * Return: 0.
 */
int ibdevsim_fault_init(void)
{
	ibdevsim_debugfs = debugfs_create_dir("ibdevsim", NULL);
	debugfs_create_bool("removal_events", 0600, ibdevsim_debugfs,
			    &ibdevsim_removal_events);
	debugfs_create_atomic_t("removal_events_sent", 0400, ibdevsim_debugfs,
				&ibdevsim_removal_events_sent);
	return 0;
}

/**
 * ibdevsim_fault_exit() - stop the delay queue and remove the debugfs root
 *
 * Context: module unload, every node deleted (the queue is empty).
 */
void ibdevsim_fault_exit(void)
{
	cancel_delayed_work_sync(&ibdevsim_delay_work);
	WARN_ON_ONCE(!list_empty(&ibdevsim_delayq));
	debugfs_remove(ibdevsim_debugfs);
}
