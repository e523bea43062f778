// SPDX-License-Identifier: GPL-2.0
/*
 * ibdevsim: cables whose other end is in another kernel.
 *
 * A remote cable joins a port of this fabric to a port of an ibdevsim
 * fabric elsewhere (another VM, another host) over UDP/IPv4.  Each UDP
 * datagram is one frame: a 4-byte framing header and then either an
 * InfiniBand packet as a link carries it (LRH through VCRC, packet.c) or
 * a link frame, which stands for the training and idle symbols of a real
 * link: each end sends one every %IBDEVSIM_REMOTE_BEAT, saying whether
 * its end is plugged, its port's state and NeighborMTU, its node GUID and
 * port number.  A link trains (the port goes to INIT) when this end is
 * plugged and has heard the other end say it is plugged; it goes down
 * when either end is pulled or nothing has come for
 * %IBDEVSIM_REMOTE_TIMEOUT.  What crosses is checked as a port does
 * (packet.c); every frame refused is counted by reason in the port's
 * debugfs "remote" file and, for a bad packet, in PortRcvErrors.
 */

#include <linux/debugfs.h>
#include <linux/inet.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/udp.h>
#include <linux/unaligned.h>
#include <net/sock.h>
#include <net/udp_tunnel.h>

#include "ibdevsim.h"

#define IBDEVSIM_REMOTE_BEAT	(HZ / 5)
#define IBDEVSIM_REMOTE_TIMEOUT	(5 * HZ)
/* Packets waiting for the transmit work before more are discarded. */
#define IBDEVSIM_REMOTE_TXQ_MAX	4096

#define FRAME_HDR_BYTES		4
#define FRAME_KIND_PACKET	1
#define FRAME_KIND_LINK		2
#define FRAME_VERSION		1
#define LINK_FRAME_BYTES	(FRAME_HDR_BYTES + 16)
/* LRH, GRH, BTH, RETH, ImmDt, 4096 bytes of payload, pad, ICRC, VCRC. */
#define PACKET_FRAME_MAX	(FRAME_HDR_BYTES + 8 + 40 + 12 + 16 + 4 + \
				 IBDEVSIM_MTU + 3 + 4 + 2)

/* What a remote cable counts, beyond the port's PMA counters. */
enum {
	REM_TX_PACKETS = IBDEVSIM_RXERR_NUM,
	REM_TX_LINK,
	REM_TX_ERRORS,
	REM_RX_PACKETS,
	REM_RX_LINK,
	REM_RX_FOREIGN,
	REM_RX_BAD_FRAME,
	REM_RX_LINK_DOWN,
	REM_RX_NOT_ACTIVE,
	REM_RX_NOMEM,
	REM_NSTATS,
};

static const char * const ibdevsim_remote_stat_names[REM_NSTATS] = {
	[IBDEVSIM_RXERR_NONE]	= NULL,
	[IBDEVSIM_RXERR_SHORT]	= "rx_short",
	[IBDEVSIM_RXERR_LEN]	= "rx_bad_length",
	[IBDEVSIM_RXERR_VCRC]	= "rx_bad_vcrc",
	[IBDEVSIM_RXERR_LVER]	= "rx_bad_lver",
	[IBDEVSIM_RXERR_LNH]	= "rx_bad_lnh",
	[IBDEVSIM_RXERR_GRH]	= "rx_bad_grh",
	[IBDEVSIM_RXERR_TVER]	= "rx_bad_tver",
	[IBDEVSIM_RXERR_ICRC]	= "rx_bad_icrc",
	[IBDEVSIM_RXERR_OPCODE]	= "rx_bad_opcode",
	[IBDEVSIM_RXERR_PAD]	= "rx_bad_pad",
	[IBDEVSIM_RXERR_VL]	= "rx_bad_vl",
	[REM_TX_PACKETS]	= "tx_packets",
	[REM_TX_LINK]		= "tx_link_frames",
	[REM_TX_ERRORS]		= "tx_errors",
	[REM_RX_PACKETS]	= "rx_packets",
	[REM_RX_LINK]		= "rx_link_frames",
	[REM_RX_FOREIGN]	= "rx_foreign",
	[REM_RX_BAD_FRAME]	= "rx_bad_frame",
	[REM_RX_LINK_DOWN]	= "rx_link_down",
	[REM_RX_NOT_ACTIVE]	= "rx_not_active",
	[REM_RX_NOMEM]		= "rx_nomem",
};

/**
 * struct ibdevsim_remote - the far end of a remote cable, as this end sees it
 * @port: the port the cable is plugged into
 * @sock: the UDP socket (bound to @lport on every local address)
 * @peer: where the other end listens
 * @lport: the local UDP port
 * @lock: protects @txq, @txq_len, @stopping and the @peer_* fields
 * @txq: packets waiting for @tx_work, oldest first
 * @txq_len: entries in @txq (changed under @lock, read without it by
 *	     ibdevsim_remote_full_locked())
 * @stopping: the cable is being removed: @link_work does not re-arm
 * @heard: a link frame from the other end has arrived
 * @last_rx: when (jiffies) the last frame of the other end arrived
 * @peer_plugged: the other end said its end is plugged
 * @peer_state: the PortState the other end reported
 * @peer_mtu: the NeighborMTU the other end reported (enum ib_mtu)
 * @peer_port: the other end's port number
 * @peer_guid: the other end's node GUID
 * @tx_work: encodes and sends @txq
 * @link_work: sends this end's link frame and trains the link up or down
 * @txbuf: the frame @tx_work builds (only it touches it)
 * @stats: counters, see ibdevsim_remote_stat_names
 * @debugfs: the port's "remote" file
 */
struct ibdevsim_remote {
	struct ibdevsim_port *port;
	struct socket *sock;
	struct sockaddr_in peer;
	u16 lport;
	spinlock_t lock; /* see above */
	struct list_head txq;
	u32 txq_len;
	bool stopping;
	bool heard;
	unsigned long last_rx;
	bool peer_plugged;
	u8 peer_state;
	u8 peer_mtu;
	u8 peer_port;
	u64 peer_guid;
	struct work_struct tx_work;
	struct delayed_work link_work;
	u8 *txbuf;
	atomic64_t stats[REM_NSTATS];
	struct dentry *debugfs;
};

static void ibdevsim_remote_count(struct ibdevsim_remote *r, int stat)
{
	atomic64_inc(&r->stats[stat]);
}

/**
 * ibdevsim_remote_mtu() - the NeighborMTU the far end of a cable reported
 * @r: the cable
 *
 * Context: any.
 * Return: bytes; 4096 until the far end has said.
 */
u32 ibdevsim_remote_mtu(struct ibdevsim_remote *r)
{
	int mtu = ib_mtu_enum_to_int(READ_ONCE(r->peer_mtu));

	return mtu > 0 ? mtu : IBDEVSIM_MTU;
}

/**
 * ibdevsim_remote_full_locked() - may a remote cable take no more packets?
 * @r: the cable
 *
 * When %IBDEVSIM_REMOTE_TXQ_MAX packets wait for the transmit work, the
 * port discards the next, as a port with no credits left does.  Only a
 * sender holding the port's node lock adds to the queue, so the answer
 * holds until that lock is dropped.
 *
 * Context: the node lock of @r's port held.
 * Return: true when the queue is full.
 */
bool ibdevsim_remote_full_locked(struct ibdevsim_remote *r)
{
	return READ_ONCE(r->txq_len) >= IBDEVSIM_REMOTE_TXQ_MAX;
}

/**
 * ibdevsim_remote_queue_locked() - hand a packet to a remote cable
 * @r: the cable, not full (ibdevsim_remote_full_locked())
 * @pkt: the packet, which the cable owns from now on
 *
 * The packet is sent by the cable's transmit work.
 *
 * Context: the node lock of @r's port held.
 */
void ibdevsim_remote_queue_locked(struct ibdevsim_remote *r,
				  struct ibdevsim_pkt *pkt)
{
	spin_lock(&r->lock);
	list_add_tail(&pkt->list, &r->txq);
	WRITE_ONCE(r->txq_len, r->txq_len + 1);
	spin_unlock(&r->lock);
	queue_work(ibdevsim_wq, &r->tx_work);
}

static int ibdevsim_remote_send(struct ibdevsim_remote *r, void *buf, u32 len)
{
	struct kvec vec = { .iov_base = buf, .iov_len = len };
	struct msghdr msg = {
		.msg_name = &r->peer,
		.msg_namelen = sizeof(r->peer),
		.msg_flags = MSG_DONTWAIT,
	};
	int ret;

	ret = kernel_sendmsg(r->sock, &msg, &vec, 1, len);
	if (ret < 0)
		ibdevsim_remote_count(r, REM_TX_ERRORS);
	return ret;
}

static void ibdevsim_remote_frame_hdr(u8 *buf, u8 kind)
{
	buf[0] = kind;
	buf[1] = FRAME_VERSION;
	buf[2] = 0;
	buf[3] = 0;
}

/* Encode and send what is queued, a packet at a time. */
static void ibdevsim_remote_tx_work(struct work_struct *work)
{
	struct ibdevsim_remote *r = container_of(work, struct ibdevsim_remote,
						 tx_work);
	struct ibdevsim_pkt *pkt;
	u32 len;

	for (;;) {
		spin_lock_irq(&r->lock);
		pkt = list_first_entry_or_null(&r->txq, struct ibdevsim_pkt,
					       list);
		if (pkt) {
			list_del_init(&pkt->list);
			WRITE_ONCE(r->txq_len, r->txq_len - 1);
		}
		spin_unlock_irq(&r->lock);
		if (!pkt)
			return;
		ibdevsim_remote_frame_hdr(r->txbuf, FRAME_KIND_PACKET);
		len = ibdevsim_pkt_encode(pkt, r->txbuf + FRAME_HDR_BYTES);
		ibdevsim_pkt_free(pkt);
		if (ibdevsim_remote_send(r, r->txbuf,
					 FRAME_HDR_BYTES + len) >= 0)
			ibdevsim_remote_count(r, REM_TX_PACKETS);
		cond_resched();
	}
}

/* Send this end's link frame: plugged or not, state, MTU, GUID, port. */
static void ibdevsim_remote_send_link(struct ibdevsim_remote *r, bool plugged)
{
	struct ibdevsim_port *port = r->port;
	u8 buf[LINK_FRAME_BYTES] = {};

	ibdevsim_remote_frame_hdr(buf, FRAME_KIND_LINK);
	buf[4] = plugged;
	buf[5] = READ_ONCE(port->st.state);
	buf[6] = READ_ONCE(port->st.neighbor_mtu);
	put_unaligned_be64(port->node->guid, buf + 8);
	buf[16] = port->num;
	if (ibdevsim_remote_send(r, buf, sizeof(buf)) >= 0)
		ibdevsim_remote_count(r, REM_TX_LINK);
}

/* Whether the link should be trained now. */
static bool ibdevsim_remote_link_ok(struct ibdevsim_remote *r, bool pulled)
{
	bool ok;

	spin_lock_irq(&r->lock);
	ok = !pulled && r->heard && r->peer_plugged &&
	     time_before(jiffies, r->last_rx + IBDEVSIM_REMOTE_TIMEOUT);
	spin_unlock_irq(&r->lock);
	return ok;
}

/*
 * Every beat: tell the other end how this end is, and train the link up
 * or down as both ends now are.
 */
static void ibdevsim_remote_link_work(struct work_struct *work)
{
	struct ibdevsim_remote *r = container_of(to_delayed_work(work),
						 struct ibdevsim_remote,
						 link_work);
	struct ibdevsim_port *port = r->port;
	bool pulled = READ_ONCE(port->pulled), stopping;

	ibdevsim_remote_send_link(r, !pulled);
	ibdevsim_port_train(port, ibdevsim_remote_link_ok(r, pulled));
	spin_lock_irq(&r->lock);
	stopping = r->stopping;
	spin_unlock_irq(&r->lock);
	if (!stopping)
		queue_delayed_work(ibdevsim_wq, &r->link_work,
				   IBDEVSIM_REMOTE_BEAT);
}

/* A link frame came: note how the other end is; retrain at once if due. */
static void ibdevsim_remote_link_rcv(struct ibdevsim_remote *r, const u8 *buf)
{
	bool was_ok, ok, up;
	unsigned long flags;

	up = READ_ONCE(r->port->st.phys_state) == IB_PORT_PHYS_STATE_LINK_UP;
	spin_lock_irqsave(&r->lock, flags);
	was_ok = r->heard && r->peer_plugged;
	r->heard = true;
	r->last_rx = jiffies;
	r->peer_plugged = buf[4];
	r->peer_state = buf[5];
	WRITE_ONCE(r->peer_mtu, buf[6]);
	r->peer_guid = get_unaligned_be64(buf + 8);
	r->peer_port = buf[16];
	ok = r->peer_plugged;
	if (!r->stopping && (ok != was_ok || ok != up))
		mod_delayed_work(ibdevsim_wq, &r->link_work, 0);
	spin_unlock_irqrestore(&r->lock, flags);
}

/* An InfiniBand packet came: check it and let it arrive at the port. */
static void ibdevsim_remote_pkt_rcv(struct ibdevsim_remote *r, const u8 *buf,
				    u32 len)
{
	struct ibdevsim_port *port = r->port;
	enum ibdevsim_rx_err err;
	struct ibdevsim_pkt *pkt;
	unsigned long flags;
	bool drop = false;

	pkt = ibdevsim_pkt_decode(buf, len, GFP_ATOMIC, &err);
	if (!pkt) {
		if (err == IBDEVSIM_RXERR_NONE) {
			ibdevsim_remote_count(r, REM_RX_NOMEM);
			return;
		}
		ibdevsim_remote_count(r, err);
		spin_lock_irqsave(&port->node->lock, flags);
		port->cnt.rcv_errors++;
		spin_unlock_irqrestore(&port->node->lock, flags);
		return;
	}
	spin_lock_irqsave(&port->node->lock, flags);
	if (port->st.phys_state != IB_PORT_PHYS_STATE_LINK_UP) {
		ibdevsim_remote_count(r, REM_RX_LINK_DOWN);
		drop = true;
	} else if (!pkt->vl15 && port->st.state != IB_PORT_ACTIVE) {
		/* Only SMPs cross a link that is not ACTIVE. */
		ibdevsim_remote_count(r, REM_RX_NOT_ACTIVE);
		port->cnt.rcv_errors++;
		drop = true;
	}
	spin_unlock_irqrestore(&port->node->lock, flags);
	if (drop) {
		ibdevsim_pkt_free(pkt);
		return;
	}
	ibdevsim_remote_count(r, REM_RX_PACKETS);
	ibdevsim_arrive(port, pkt);
}

/*
 * The UDP socket's receive hook (softirq, RCU read lock held): every
 * datagram is consumed.  Only the configured peer's address may send;
 * any source port of it is taken, so that a tool on that host can write
 * frames of its own onto the cable.
 */
static int ibdevsim_remote_rcv(struct sock *sk, struct sk_buff *skb)
{
	struct ibdevsim_remote *r = rcu_dereference_sk_user_data(sk);
	unsigned long flags;
	const u8 *buf;
	u32 len;

	if (!r)
		goto out;
	if (skb_linearize(skb)) {
		ibdevsim_remote_count(r, REM_RX_NOMEM);
		goto out;
	}
	if (ip_hdr(skb)->saddr != r->peer.sin_addr.s_addr) {
		ibdevsim_remote_count(r, REM_RX_FOREIGN);
		goto out;
	}
	buf = (const u8 *)(udp_hdr(skb) + 1);
	len = ntohs(udp_hdr(skb)->len) - sizeof(struct udphdr);
	if (len < FRAME_HDR_BYTES || buf[1] != FRAME_VERSION || buf[2] ||
	    buf[3] || (buf[0] == FRAME_KIND_LINK && len != LINK_FRAME_BYTES) ||
	    (buf[0] != FRAME_KIND_LINK && buf[0] != FRAME_KIND_PACKET)) {
		ibdevsim_remote_count(r, REM_RX_BAD_FRAME);
		goto out;
	}
	if (buf[0] == FRAME_KIND_LINK) {
		ibdevsim_remote_count(r, REM_RX_LINK);
		ibdevsim_remote_link_rcv(r, buf);
	} else {
		spin_lock_irqsave(&r->lock, flags);
		r->last_rx = jiffies;
		spin_unlock_irqrestore(&r->lock, flags);
		ibdevsim_remote_pkt_rcv(r, buf + FRAME_HDR_BYTES,
					len - FRAME_HDR_BYTES);
	}
out:
	kfree_skb(skb);
	return 0;
}

static int ibdevsim_remote_show(struct seq_file *m, void *v)
{
	struct ibdevsim_remote *r = m->private;
	int i;

	spin_lock_irq(&r->lock);
	seq_printf(m, "local_port %u\npeer %pI4:%u\npeer_heard %u\n",
		   r->lport, &r->peer.sin_addr, ntohs(r->peer.sin_port),
		   r->heard);
	seq_printf(m, "peer_plugged %u\npeer_state %u\npeer_mtu %u\n",
		   r->peer_plugged, r->peer_state, r->peer_mtu);
	seq_printf(m, "peer_guid 0x%016llx\npeer_port %u\ntxq %u\n",
		   r->peer_guid, r->peer_port, r->txq_len);
	spin_unlock_irq(&r->lock);
	for (i = 0; i < REM_NSTATS; i++)
		if (ibdevsim_remote_stat_names[i])
			seq_printf(m, "%s %lld\n", ibdevsim_remote_stat_names[i],
				   atomic64_read(&r->stats[i]));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(ibdevsim_remote);

/**
 * ibdevsim_remote_plug() - plug a port into a cable to another kernel
 * @port: the port (not a switch's port 0, not cabled)
 * @lport: the UDP port to listen on (on every local IPv4 address)
 * @addr: the other end's IPv4 address
 * @rport: the UDP port the other end listens on
 *
 * The port stays Polling until the other end is heard; then both train
 * to INIT and the SM takes them further.
 *
 * Context: ibdevsim_topo_mutex held; process.
 * Return: 0, -EINVAL for port 0 or a zero UDP port, -EBUSY if the port
 * has a cable, -ENOMEM, or the error creating the socket (-EADDRINUSE).
 */
int ibdevsim_remote_plug(struct ibdevsim_port *port, u16 lport, __be32 addr,
			 u16 rport)
{
	struct udp_tunnel_sock_cfg tcfg = { .encap_type = 1,
					    .encap_rcv = ibdevsim_remote_rcv };
	struct udp_port_cfg ucfg = {
		.family = AF_INET,
		.local_ip.s_addr = htonl(INADDR_ANY),
		.local_udp_port = htons(lport),
	};
	struct ibdevsim_remote *r;
	struct dentry *dir;
	char name[16];
	int ret;

	lockdep_assert_held(&ibdevsim_topo_mutex);
	if (!port->num || !lport || !rport)
		return -EINVAL;
	if (port->peer || port->remote)
		return -EBUSY;
	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r)
		return -ENOMEM;
	r->txbuf = kmalloc(PACKET_FRAME_MAX, GFP_KERNEL);
	if (!r->txbuf) {
		ret = -ENOMEM;
		goto err_free;
	}
	r->port = port;
	r->lport = lport;
	r->peer.sin_family = AF_INET;
	r->peer.sin_addr.s_addr = addr;
	r->peer.sin_port = htons(rport);
	spin_lock_init(&r->lock);
	INIT_LIST_HEAD(&r->txq);
	INIT_WORK(&r->tx_work, ibdevsim_remote_tx_work);
	INIT_DELAYED_WORK(&r->link_work, ibdevsim_remote_link_work);
	ret = udp_sock_create(&init_net, &ucfg, &r->sock);
	if (ret)
		goto err_free;
	tcfg.sk_user_data = r;
	setup_udp_tunnel_sock(&init_net, ibdevsim_tunnel_sk(r->sock), &tcfg);
	ibdevsim_port_set_remote(port, r);
	snprintf(name, sizeof(name), "port%u", port->num);
	dir = port->node->debugfs ? debugfs_lookup(name, port->node->debugfs) :
				    NULL;
	if (dir) {
		r->debugfs = debugfs_create_file("remote", 0400, dir, r,
						 &ibdevsim_remote_fops);
		dput(dir);
	}
	queue_delayed_work(ibdevsim_wq, &r->link_work, 0);
	return 0;

err_free:
	kfree(r->txbuf);
	kfree(r);
	return ret;
}

/**
 * ibdevsim_remote_unplug() - take a remote cable out of its port
 * @port: the port
 *
 * The port goes DOWN; the other end is told at once (a link frame saying
 * this end is pulled) and goes down too.  Packets still queued are
 * dropped.
 *
 * Context: ibdevsim_topo_mutex held; process.
 * Return: 0, or -ENOENT when the port has no remote cable.
 */
int ibdevsim_remote_unplug(struct ibdevsim_port *port)
{
	struct ibdevsim_remote *r = port->remote;
	struct ibdevsim_pkt *pkt, *tmp;

	lockdep_assert_held(&ibdevsim_topo_mutex);
	if (!r)
		return -ENOENT;
	/* Once stopping, nothing arms the link work again: end it. */
	spin_lock_irq(&r->lock);
	r->stopping = true;
	spin_unlock_irq(&r->lock);
	cancel_delayed_work_sync(&r->link_work);
	/*
	 * The port goes down and no longer names the cable: nothing more is
	 * queued, and packets still arriving are dropped at the port.
	 */
	ibdevsim_port_set_remote(port, NULL);
	/* Nothing received reaches @r after the grace period. */
	rcu_assign_sk_user_data(r->sock->sk, NULL);
	synchronize_rcu();
	cancel_work_sync(&r->tx_work);
	ibdevsim_remote_send_link(r, false);
	debugfs_remove(r->debugfs);
	udp_tunnel_sock_release(ibdevsim_tunnel_sk(r->sock));
	list_for_each_entry_safe(pkt, tmp, &r->txq, list) {
		list_del(&pkt->list);
		ibdevsim_pkt_free(pkt);
	}
	kfree(r->txbuf);
	kfree(r);
	return 0;
}

/**
 * ibdevsim_remote_set_link() - pull this end of a remote cable, or plug it
 * @port: the port
 * @up: plug it back in (false: pull it)
 *
 * The other end learns it from the next link frame, sent at once.
 *
 * Context: ibdevsim_topo_mutex held.
 */
void ibdevsim_remote_set_link(struct ibdevsim_port *port, bool up)
{
	unsigned long flags;

	spin_lock_irqsave(&port->node->lock, flags);
	port->pulled = !up;
	spin_unlock_irqrestore(&port->node->lock, flags);
	mod_delayed_work(ibdevsim_wq, &port->remote->link_work, 0);
}

/**
 * ibdevsim_remote_describe() - one line of the topology for a remote cable
 * @r: the cable
 * @id: its port's node number
 * @num: its port's number
 * @line: where to write
 * @size: room in @line
 */
void ibdevsim_remote_describe(struct ibdevsim_remote *r, u32 id, u32 num,
			      char *line, size_t size)
{
	const char *state;

	if (READ_ONCE(r->port->pulled))
		state = "pulled";
	else if (READ_ONCE(r->port->st.phys_state) ==
		 IB_PORT_PHYS_STATE_LINK_UP)
		state = "up";
	else
		state = "polling";
	snprintf(line, size, "remote %u %u %u %pI4:%u %s\n", id, num,
		 r->lport, &r->peer.sin_addr, ntohs(r->peer.sin_port), state);
}
