/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ibdevsim: a simulated InfiniBand fabric.  Private declarations shared by
 * the files of the module.
 *
 * A fabric is a set of nodes (HCAs and switches) created at run time
 * through /sys/bus/ibdevsim/.  Every node has ports; a cable joins two
 * ports of two nodes.  An HCA registers an ib_device whose ports have an
 * InfiniBand link layer; a switch lives only inside the module.  Packets
 * (struct ibdevsim_pkt) leave a port through its cable and are handled by
 * the node at the other end: an HCA hands them to the QP they name, a
 * switch forwards them (directed route or linear forwarding table) or
 * gives them to its own SMA.
 */

#ifndef IBDEVSIM_H
#define IBDEVSIM_H

#include <linux/completion.h>
#include <linux/device.h>
#include <linux/list.h>
#include <linux/rcupdate.h>
#include <linux/spinlock.h>
#include <linux/timer.h>
#include <linux/types.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_smi.h>
#include <rdma/ib_verbs.h>

#include "ibdevsim_compat.h"

/*
 * Ports of a switch: NumPorts is a byte and port 255 is reserved, so a
 * switch has at most 254 (a Quantum-2 has 64, a Quantum-3 144).  An HCA
 * has far fewer; each of its ports costs an ib_device port with QP0, QP1
 * and their MAD rings.
 */
#define IBDEVSIM_MAX_PORTS		254
#define IBDEVSIM_MAX_HCA_PORTS		36
#define IBDEVSIM_PKEY_TBL_LEN		32
#define IBDEVSIM_GID_TBL_LEN		1
#define IBDEVSIM_MTU			4096
#define IBDEVSIM_MAX_HOPS		64
#define IBDEVSIM_LFT_CAP		49152
/* MulticastFDBCap: MLIDs for every group of a 1,024-host IPoIB subnet. */
#define IBDEVSIM_MFT_CAP		4096
#define IBDEVSIM_DMA_LKEY		0x1000
#define IBDEVSIM_MAX_SGE		8
#define IBDEVSIM_MAX_WR			16384
/* Pages one fast-registration MR maps at most (ib_srp asks for 512). */
#define IBDEVSIM_FR_MAX_PAGES		512
#define IBDEVSIM_VENDOR_ID		0x0ff1c0
#define IBDEVSIM_HCA_DEVICE_ID		0x1dc0
#define IBDEVSIM_SW_DEVICE_ID		0x1dc1
#define IBDEVSIM_DEFAULT_GID_PREFIX	0xfe80000000000000ULL
#define IBDEVSIM_MCAST_LID_BASE		0xc000
#define IBDEVSIM_MCAST_QPN		0xffffff
#define IBDEVSIM_MAX_MCAST_GRP		128
#define IBDEVSIM_MAX_MCAST_QP_ATTACH	16
#define IBDEVSIM_MAX_MCAST_ATTACH	512
/* Copies one multicast walk may make: a broadcast to 1,024 hosts and more. */
#define IBDEVSIM_MCAST_MAX_COPIES	16384
#define IBDEVSIM_SMP_LEN		sizeof(struct ib_smp)

/* PortInfo values that never change in the simulator. */
#define IBDEVSIM_WIDTH_SUPPORTED	3	/* 1x, 4x */
#define IBDEVSIM_WIDTH_ACTIVE		2	/* 4x */
#define IBDEVSIM_SPEED_SUPPORTED	7	/* 2.5, 5, 10 Gb/s per lane */
#define IBDEVSIM_SPEED_ACTIVE		4	/* 10 Gb/s per lane (QDR) */
#define IBDEVSIM_MTU_CAP		5	/* 4096 */
#define IBDEVSIM_VL_CAP			1	/* VL0 only */
#define IBDEVSIM_RESP_TIME		16

enum ibdevsim_node_type {
	IBDEVSIM_NODE_HCA,
	IBDEVSIM_NODE_SWITCH,
};

/**
 * struct ibdevsim_port_state - what PortInfo shows of a port and the SM sets
 *
 * @mkey: M_Key (stored, not enforced)
 * @gid_prefix: GID prefix (subnet prefix of GID 0)
 * @cap_mask: CapabilityMask (IB_PORT_* bits, ib_modify_port() changes it)
 * @lid: base LID, 0 until the SM gives one
 * @sm_lid: MasterSMLID
 * @mkey_lease: M_KeyLeasePeriod
 * @mkey_violations: M_KeyViolations
 * @pkey_violations: P_KeyViolations (packets whose P_Key did not match)
 * @qkey_violations: Q_KeyViolations (packets whose Q_Key did not match)
 * @state: PortState (logical)
 * @phys_state: PortPhysicalState
 * @link_down_default: LinkDownDefaultState
 * @lmc: LID mask count
 * @mkey_protect: M_KeyProtectBits
 * @sm_sl: MasterSMSL
 * @neighbor_mtu: NeighborMTU
 * @width_enabled: LinkWidthEnabled
 * @speed_enabled: LinkSpeedEnabled
 * @vl_high_limit: VLHighLimit
 * @op_vls: OperationalVLs
 * @enforcement: PartitionEnforcementInbound/Outbound,
 *		 FilterRawInbound/Outbound: low 4 bits
 * @hoq_life: HOQLife
 * @vl_stall: VLStallCount
 * @subnet_timeout: SubnetTimeOut
 * @mcast_trap_suppress: MulticastPKeyTrapSuppressionEnabled
 *
 * Logical and physical states use the PortInfo encodings (which are the
 * values of enum ib_port_state and enum ib_port_phys_state).
 */
struct ibdevsim_port_state {
	u64 mkey;
	u64 gid_prefix;
	u32 cap_mask;
	u16 lid;
	u16 sm_lid;
	u16 mkey_lease;
	u16 mkey_violations;
	u16 pkey_violations;
	u16 qkey_violations;
	u8 state;
	u8 phys_state;
	u8 link_down_default;
	u8 lmc;
	u8 mkey_protect;
	u8 sm_sl;
	u8 neighbor_mtu;
	u8 width_enabled;
	u8 speed_enabled;
	u8 vl_high_limit;
	u8 op_vls;
	u8 enforcement;
	u8 hoq_life;
	u8 vl_stall;
	u8 subnet_timeout;
	u8 mcast_trap_suppress;
};

/**
 * struct ibdevsim_port_caps - the fixed part of a port's PortInfo
 * @local_port: the port an SMP came in on (PortInfo.LocalPortNum)
 * @is_switch_port: an external port of a switch (no LID of its own)
 * @guid_cap: GUIDCap
 */
struct ibdevsim_port_caps {
	u8 local_port;
	bool is_switch_port;
	u8 guid_cap;
};

/**
 * enum ibdevsim_port_change - what a PortInfo Set changed, for IB events
 * @IBDEVSIM_CHG_LID: LID or LMC (IB_EVENT_LID_CHANGE)
 * @IBDEVSIM_CHG_SM: SM LID or SL (IB_EVENT_SM_CHANGE)
 * @IBDEVSIM_CHG_ACTIVE: the port became ACTIVE (IB_EVENT_PORT_ACTIVE)
 * @IBDEVSIM_CHG_ERR: the port left ACTIVE (IB_EVENT_PORT_ERR)
 * @IBDEVSIM_CHG_REREG: ClientReregister set (IB_EVENT_CLIENT_REREGISTER)
 * @IBDEVSIM_CHG_GID: GID prefix (IB_EVENT_GID_CHANGE)
 * @IBDEVSIM_CHG_PKEY: P_Key table (IB_EVENT_PKEY_CHANGE)
 * @IBDEVSIM_CHG_STATE: any change of the logical state (no event)
 */
enum ibdevsim_port_change {
	IBDEVSIM_CHG_LID	= BIT(0),
	IBDEVSIM_CHG_SM		= BIT(1),
	IBDEVSIM_CHG_ACTIVE	= BIT(2),
	IBDEVSIM_CHG_ERR	= BIT(3),
	IBDEVSIM_CHG_REREG	= BIT(4),
	IBDEVSIM_CHG_GID	= BIT(5),
	IBDEVSIM_CHG_PKEY	= BIT(6),
	IBDEVSIM_CHG_STATE	= BIT(7),
};

/** struct ibdevsim_counters - a port's PMA PortCounters (saturating) */
struct ibdevsim_counters {
	u64 xmit_data;		/* in 32-bit words, as PortXmitData counts */
	u64 rcv_data;
	u64 xmit_pkts;
	u64 rcv_pkts;
	u32 xmit_discards;
	u32 rcv_errors;
	u32 vl15_dropped;
	u32 link_downed;
};

/*
 * The packets fault knobs apply to (struct ibdevsim_faults.classes) and
 * what ibdevsim_fault_decide() tells the cable to do with one.
 */
#define IBDEVSIM_FAULT_CLASS_QP0	BIT(0)	/* SMPs (VL15) */
#define IBDEVSIM_FAULT_CLASS_QP1	BIT(1)	/* GMPs to QP1 */
#define IBDEVSIM_FAULT_CLASS_UD		BIT(2)	/* other UD datagrams */
#define IBDEVSIM_FAULT_CLASS_RC		BIT(3)	/* RC requests, ACKs, responses */
#define IBDEVSIM_FAULT_CLASS_ALL	GENMASK(3, 0)

#define IBDEVSIM_FAULT_DROP		BIT(0)
#define IBDEVSIM_FAULT_DUPLICATE	BIT(1)
#define IBDEVSIM_FAULT_DELAY		BIT(2)

/* Probabilities are in per mille. */
#define IBDEVSIM_FAULT_SCALE		1000
#define IBDEVSIM_FAULT_MAX_DELAY_MS	10000

/**
 * struct ibdevsim_faults - the fault knobs of one direction of a cable
 * @drop: per mille of the packets leaving the port that are lost
 * @duplicate: per mille of them that arrive twice
 * @delay: per mille of them held back for @delay_ms
 * @delay_ms: how long a delayed packet is held back
 * @classes: IBDEVSIM_FAULT_CLASS_* bits: the packets the knobs apply to
 * @dropped: packets the knobs dropped
 * @duplicated: copies the knobs sent
 * @delayed: packets (and copies) the knobs held back
 *
 * The knobs are written from debugfs at any time and read with
 * READ_ONCE(); the counters change under the port's node lock.
 */
struct ibdevsim_faults {
	u32 drop;
	u32 duplicate;
	u32 delay;
	u32 delay_ms;
	u32 classes;
	u64 dropped;
	u64 duplicated;
	u64 delayed;
};

struct ibdevsim_node;
struct ibdevsim_qp;
struct ibdevsim_remote;

/*
 * What the RC transport counts per port, shown as the port's hw_counters
 * (rdma statistic); names as rxe and mlx5 use them.
 */
enum ibdevsim_rc_stat {
	IBDEVSIM_RC_RETRANSMITS,	/* request packets sent again */
	IBDEVSIM_RC_ACK_TIMEOUTS,	/* local ACK timer expiries */
	IBDEVSIM_RC_RCVD_SEQ_NAKS,	/* PSN sequence NAKs received */
	IBDEVSIM_RC_IMPLIED_NAKS,	/* READ responses found missing */
	IBDEVSIM_RC_RCVD_RNR_NAKS,	/* RNR NAKs received */
	IBDEVSIM_RC_SENT_RNR_NAKS,	/* RNR NAKs sent */
	IBDEVSIM_RC_OUT_OF_SEQ,		/* requests ahead of the expected PSN */
	IBDEVSIM_RC_DUPLICATES,		/* requests behind it */
	IBDEVSIM_RC_RETRY_EXC,		/* requests failed: retries spent */
	IBDEVSIM_RC_RNR_RETRY_EXC,	/* requests failed: RNR retries spent */
	IBDEVSIM_RC_NSTATS,
};

/* Copies of a trap an HCA port sends before it gives up on the SM. */
#define IBDEVSIM_TRAP_COPIES	16

/**
 * struct ibdevsim_trap - the trap an HCA port's SMA repeats until repressed
 * @smp: the Trap SMP; its TID is what the SM's TrapRepress names
 * @pending: made and not yet repressed (nor given up)
 * @sent: copies sent so far
 * @work: sends the next copy (on ibdevsim_wq)
 *
 * One trap at a time: while one is pending, a new Bad P_Key violation is
 * counted without a trap of its own, and a LocalChanges trap replaces
 * it.  @smp, @pending and @sent are protected by the node lock.
 */
struct ibdevsim_trap {
	struct ib_smp smp;
	bool pending;
	u8 sent;
	struct delayed_work work;
};

/**
 * struct ibdevsim_port - one port of a node
 * @node: the node the port belongs to
 * @num: port number (0 is a switch's management port)
 * @peer: the port at the other end of the cable, or NULL
 * @remote: the cable to another kernel plugged into the port, or NULL
 *	    (never both @peer and @remote)
 * @pulled: the cable is pulled out (debugfs "link"): both ends are down but
 *	    the cable is remembered, to be plugged back
 * @faults: fault knobs for the packets leaving the port through its cable
 * @st: the SM-visible state
 * @pkeys: the P_Key table
 * @sl2vl: SLtoVLMappingTable (one table per port, whatever the input port)
 * @vlarb: VLArbitrationTable, four blocks of 32 entries
 * @cnt: the PMA counters
 * @qp0: the SMI QP of an HCA port, or NULL
 * @qp1: the GSI QP of an HCA port, or NULL
 * @sq_errors: send queues of the port's UD, GSI and SMI QPs that a failed
 *	       send stopped in SQE (debugfs, read only)
 * @pkey_refused: packets refused for their P_Key since the port was made
 *		  (debugfs, read only): PortInfo's P_KeyViolations is 16
 *		  bits and the SM writes it back with every PortInfo Set
 * @qkey_refused: the same for Q_Keys
 * @rc_stats: the RC transport's counters (enum ibdevsim_rc_stat)
 * @trap: an HCA port's trap to the SM, repeated until repressed
 * @rx_lock: protects @rxq and @rx_dead
 * @rxq: packets that reached an HCA port, waiting for @rx_work
 * @rx_dead: the HCA is gone: packets reaching the port are dropped
 * @rx_work: hands the packets of @rxq to the port's QPs, as the receive
 *	     side of an HCA port does, in its own context
 *
 * @peer, @remote and @pulled change under ibdevsim_topo_mutex and the node
 * lock of their port (each end's in turn), so either lock is enough to
 * read them.
 * Everything else but the receive queue is protected by the node lock.
 */
struct ibdevsim_port {
	struct ibdevsim_node *node;
	u8 num;
	struct ibdevsim_port *peer;
	struct ibdevsim_remote *remote;
	bool pulled;
	struct ibdevsim_faults faults;
	struct ibdevsim_port_state st;
	u16 pkeys[IBDEVSIM_PKEY_TBL_LEN];
	u8 sl2vl[8];
	u8 vlarb[4][64];
	struct ibdevsim_counters cnt;
	struct ibdevsim_qp *qp0;
	struct ibdevsim_qp *qp1;
	u64 sq_errors;
	u64 pkey_refused;
	u64 qkey_refused;
	atomic64_t rc_stats[IBDEVSIM_RC_NSTATS];
	struct ibdevsim_trap trap;
	spinlock_t rx_lock; /* rxq, rx_dead */
	struct list_head rxq;
	bool rx_dead;
	struct work_struct rx_work;
};

/**
 * ibdevsim_port_mtu() - the largest payload a port's link carries
 * @port: the port
 *
 * Its NeighborMTU as the SM set it (4096 until it does).  Read without
 * the node lock: a packet racing a change of MTU sees either value.
 *
 * Return: bytes.
 */
static inline u32 ibdevsim_port_mtu(const struct ibdevsim_port *port)
{
	int mtu = ib_mtu_enum_to_int(READ_ONCE(port->st.neighbor_mtu));

	return mtu > 0 ? mtu : IBDEVSIM_MTU;
}

/**
 * struct ibdevsim_switch - the forwarding state of a switch node
 * @lft: the linear forwarding table, %IBDEVSIM_LFT_CAP entries (255: none)
 * @lft_top: LinearFDBTop
 * @mft_top: MulticastFDBTop
 * @mft: the multicast forwarding table: %IBDEVSIM_MFT_CAP rows (MLID
 *	 0xc000 first) of ibdevsim_mft_positions() PortMasks each, the
 *	 PortMask of position p holding ports 16p to 16p + 15
 * @default_port: DefaultPort of SwitchInfo
 * @default_mcast_primary: DefaultMulticastPrimaryPort
 * @default_mcast_not_primary: DefaultMulticastNotPrimaryPort
 * @lifetime: LifeTimeValue
 * @port_state_change: PortStateChange, set when a port's state changes
 *		       and cleared by the SM
 *
 * Protected by the switch node's lock.
 */
struct ibdevsim_switch {
	u8 *lft;
	u16 lft_top;
	u16 mft_top;
	u16 *mft;
	u8 default_port;
	u8 default_mcast_primary;
	u8 default_mcast_not_primary;
	u8 lifetime;
	bool port_state_change;
};

struct ibdevsim_hca;

/**
 * struct ibdevsim_node - an HCA or a switch of the fabric
 * @dev: the node's device on the ibdevsim bus (owns this structure)
 * @list: entry in the list of nodes (ibdevsim_topo_mutex)
 * @id: the number user space chose for it
 * @type: HCA or switch
 * @guid: node GUID
 * @port_guid: an HCA's port 1 GUID; port N has @port_guid + N - 1
 * @nports: number of external ports
 * @desc: NodeDescription; an HCA's ib_device keeps a copy that is
 *	  changed with it, under @lock
 * @hca: the HCA's ib_device side, NULL for a switch
 * @sw: forwarding state of a switch, NULL for an HCA
 * @debugfs: the node's directory of fault knobs, or NULL
 * @gone: the node is being deleted: no event is raised for its ports
 * @lock: protects the state of the node's ports (struct ibdevsim_port
 *	  says which), the forwarding state of a switch, and an HCA's QP0
 *	  and QP1 pointers and multicast attachments.  Taken with interrupts
 *	  off, since the RDMA core may query a port from any context.  A
 *	  packet crossing the fabric holds one node lock at a time, that of
 *	  the node it is at; nothing takes two.
 * @ports: ports 0..@nports (port 0 is used by switches only)
 *
 * Packets in flight refer to nodes under RCU: a node is freed only after
 * its cables are pulled and a grace period has passed.
 */
struct ibdevsim_node {
	struct device dev;
	struct list_head list;
	u32 id;
	enum ibdevsim_node_type type;
	u64 guid;
	u64 port_guid;
	u8 nports;
	char desc[IB_DEVICE_NODE_DESC_MAX];
	struct ibdevsim_hca *hca;
	struct ibdevsim_switch *sw;
	struct dentry *debugfs;
	bool gone;
	spinlock_t lock; /* see above */
	struct ibdevsim_port ports[];
};

/**
 * ibdevsim_port_guid() - the GUID of a node's port
 * @node: the node
 * @num: the port number
 *
 * Return: a switch's ports share its port 0 GUID, the node GUID; an HCA's
 * port @num has @node->port_guid + @num - 1.
 */
static inline u64 ibdevsim_port_guid(const struct ibdevsim_node *node, u32 num)
{
	if (node->type == IBDEVSIM_NODE_SWITCH)
		return node->guid;
	return node->port_guid + num - 1;
}

/**
 * struct ibdevsim_mcast_att - a QP attached to a multicast group
 * @list: entry in the HCA's @mcast list (changed under the node lock,
 *	  walked under RCU by the receive side)
 * @rcu: frees the attachment after a grace period
 * @mgid: the group's MGID
 * @mlid: the group's MLID
 * @qp: the attached UD QP
 * @refs: how many times @qp attached to the group and did not detach
 *	  (the core counts every successful attach in the QP's usecnt)
 */
struct ibdevsim_mcast_att {
	struct list_head list;
	struct rcu_head rcu;
	union ib_gid mgid;
	u16 mlid;
	struct ibdevsim_qp *qp;
	u32 refs;
};

/**
 * struct ibdevsim_hca - a simulated host channel adapter
 * @ibdev: the RDMA core's device
 * @node: the fabric node
 * @qps: UD and RC QPs by QP number: changed under the xarray's own lock
 *	 (taken with interrupts off), looked up under RCU by the receive
 *	 side; a destroyed QP is freed only after the ports' receive work
 *	 has been flushed
 * @qpn_next: the next QP number to try (under the lock of @qps)
 * @mrs: user memory regions by key index (key >> 8): changed by
 *	 registration and deregistration under the xarray's own lock (taken
 *	 with interrupts off), looked up under RCU on the data path
 *	 (deregistration waits for a grace period before it unpins the
 *	 pages)
 * @mr_next: the next key index to try
 * @mr_gen: the low byte of the next key, so that a reused index makes a
 *	    different key (under the lock of @mrs)
 * @mcast: the multicast attachments of the HCA's QPs (struct
 *	   ibdevsim_mcast_att), changed under the node lock
 * @mcast_ngrps: the distinct MGIDs in @mcast (under the node lock)
 * @storm: raises port events while the device is being unregistered (the
 *	   removal_events knob)
 * @storm_stop: tells @storm to end
 */
struct ibdevsim_hca {
	struct ib_device ibdev;
	struct ibdevsim_node *node;
	struct xarray qps;
	u32 qpn_next;
	struct xarray mrs;
	u32 mr_next;
	u8 mr_gen;
	struct list_head mcast;
	u32 mcast_ngrps;
	struct work_struct storm;
	bool storm_stop;
};

static inline struct ibdevsim_hca *to_hca(struct ib_device *ibdev)
{
	return container_of(ibdev, struct ibdevsim_hca, ibdev);
}

/**
 * struct ibdevsim_rc_hdr - the transport headers of an RC packet
 * @opcode: BTH opcode, one of IB_OPCODE_RC_* (rdma/ib_pack.h)
 * @ack_req: BTH AckReq: the responder acknowledges this packet
 * @psn: BTH packet sequence number (24 bits)
 * @va: RETH virtual address (first or only RDMA WRITE, RDMA READ request)
 * @rkey: RETH R_Key
 * @dma_len: RETH DMA length
 * @syndrome: AETH syndrome (ACK, NAK, RNR NAK; READ responses)
 * @ieth: IETH: the R_Key a SEND with invalidate names
 * @se: BTH SE: the receive completion is solicited
 */
struct ibdevsim_rc_hdr {
	u8 opcode;
	bool ack_req;
	bool se;
	u32 psn;
	u64 va;
	u32 rkey;
	u32 dma_len;
	u8 syndrome;
	u32 ieth;
};

/**
 * struct ibdevsim_pkt - a packet on the simulated wire
 * @list: entry in the queue of delayed packets
 * @via: for a delayed packet, the port whose cable it is to cross
 * @due: for a delayed packet, when (in jiffies) it crosses
 * @faulted: the fault knobs already had their say at the next cable
 * @wire: it reached its HCA port over a cable (not looped back inside
 *	  the HCA): the port's receive counters count it
 * @rc: an RC packet: @rch holds its transport headers
 * @rch: BTH, RETH and AETH of an RC packet
 * @slid: source LID
 * @dlid: destination LID (0xffff: permissive)
 * @sl: service level
 * @vl15: a subnet management packet (QP0, VL15)
 * @has_grh: @grh is present
 * @has_imm: @imm is present
 * @hops: switches crossed so far, to end forwarding loops
 * @src_qpn: source QP
 * @dest_qpn: destination QP
 * @qkey: Q_Key (not checked for QP0)
 * @pkey: P_Key
 * @imm: immediate data
 * @grh: the global route header when @has_grh
 * @len: bytes in @data
 * @data: the payload (a MAD for QP0/QP1)
 */
struct ibdevsim_pkt {
	struct list_head list;
	struct ibdevsim_port *via;
	unsigned long due;
	bool faulted;
	bool wire;
	bool rc;
	struct ibdevsim_rc_hdr rch;
	u16 slid;
	u16 dlid;
	u8 sl;
	bool vl15;
	bool has_grh;
	bool has_imm;
	u8 hops;
	u32 src_qpn;
	u32 dest_qpn;
	u32 qkey;
	u16 pkey;
	__be32 imm;
	struct ib_grh grh;
	u32 len;
	u8 data[] __counted_by(len);
};

/* An RC packet off a remote cable: BTH names no source QP. */
#define IBDEVSIM_QPN_UNKNOWN		U32_MAX

/* Verbs objects. */

struct ibdevsim_pd {
	struct ib_pd ibpd;
};

/**
 * struct ibdevsim_mr - a memory region
 * @ibmr: the core's MR; its lkey and rkey are equal
 * @pd: the PD it was registered in
 * @umem: the pinned user memory, or NULL for the DMA MR (kernel virtual
 *	  addresses, key IBDEVSIM_DMA_LKEY, kernel PDs only)
 * @pages: the pages of @umem, in order
 * @npages: entries in @pages
 * @page_off: offset of @iova's byte in @pages[0]
 * @iova: the address the region starts at in work requests
 * @length: its length in bytes
 * @access: IB_ACCESS_* rights it was registered with
 * @fr_pages: a fast-registration MR's page list: kernel addresses of
 *	      pages of ibmr.page_size bytes (NULL for other MRs)
 * @fr_max: entries @fr_pages has room for
 * @fr_npages: entries ib_map_mr_sg() filled
 * @fr_key: the key the last IB_WR_REG_MR gave it
 * @fr_valid: registered and not invalidated since; @iova, @length and
 *	      @access are those of that registration
 */
struct ibdevsim_mr {
	struct ib_mr ibmr;
	struct ib_pd *pd;
	struct ib_umem *umem;
	struct page **pages;
	u32 npages;
	u32 page_off;
	u64 iova;
	u64 length;
	int access;
	u64 *fr_pages;
	u32 fr_max;
	u32 fr_npages;
	u32 fr_key;
	bool fr_valid;
};

/**
 * struct ibdevsim_seg - a checked piece of memory a work request names
 * @mr: the user MR covering it, or NULL for kernel virtual addresses
 * @addr: the address (in @mr's IOVA space when @mr is set)
 * @len: its length in bytes
 *
 * Filled by ibdevsim_mem_resolve(); valid while the RCU read lock taken
 * before resolving it is held.
 */
struct ibdevsim_seg {
	const struct ibdevsim_mr *mr;
	u64 addr;
	u32 len;
};

/**
 * struct ibdevsim_ucontext - a user process's context on an HCA
 * @ibuc: the core's context
 *
 * Holds nothing of its own: every user object ibdevsim has lives in the
 * kernel, and user space reaches it through ib_uverbs' commands.
 */
struct ibdevsim_ucontext {
	struct ib_ucontext ibuc;
};

struct ibdevsim_ah {
	struct ib_ah ibah;
	struct rdma_ah_attr attr;
};

/**
 * struct ibdevsim_cqe - a completion in a CQ's ring
 * @wc: what ib_poll_cq() hands out
 * @sq: the QP whose send queue polling this completion frees slots of, or
 *	NULL (a receive completion)
 * @sq_slots: how many: the WQE's own and those of the unsignaled WQEs that
 *	      ran before it, as hardware frees them when the CQE is polled
 */
struct ibdevsim_cqe {
	struct ib_wc wc;
	struct ibdevsim_qp *sq;
	u32 sq_slots;
};

/**
 * struct ibdevsim_cq - a completion queue
 * @ibcq: the core's CQ
 * @lock: protects @ring, @head, @count, @notify and @overflow; taken
 *	  before a QP's sq_lock, never inside it
 * @ring: the completions
 * @size: entries in @ring
 * @head: index of the oldest completion
 * @count: completions in the ring
 * @notify: armed with IB_CQ_NEXT_COMP or IB_CQ_SOLICITED, or 0
 * @overflow: a completion was lost because the ring was full (the
 *	      IB_EVENT_CQ_ERR has been raised)
 * @event_work: calls the completion handler for a CQ armed while it held
 *		completions (hardware raises the event at once then)
 * @err_work: raises IB_EVENT_CQ_ERR once the ring has overflowed
 */
struct ibdevsim_cq {
	struct ib_cq ibcq;
	struct work_struct event_work;
	struct work_struct err_work;
	spinlock_t lock; /* the ring and notify state, see above */
	struct ibdevsim_cqe *ring;
	u32 size;
	u32 head;
	u32 count;
	u8 notify;
	bool overflow;
};

/**
 * struct ibdevsim_rwqe - a posted receive
 * @wr_id: the caller's id
 * @num_sge: entries used in @sge
 * @sge: where the data goes
 */
struct ibdevsim_rwqe {
	u64 wr_id;
	u32 num_sge;
	struct ib_sge sge[];
};

/**
 * struct ibdevsim_srq - a shared receive queue (kernel users, RC QPs)
 * @ibsrq: the core's SRQ
 * @lock: protects @rq, @head, @count, @limit and @armed
 * @rq: ring of posted receives, @stride bytes each
 * @stride: size of a struct ibdevsim_rwqe with @max_sge SGEs
 * @max: ring size
 * @head: oldest posted receive
 * @count: posted receives
 * @max_sge: most SGEs in a receive
 * @limit: the SRQ limit ib_modify_srq() set
 * @armed: IB_EVENT_SRQ_LIMIT_REACHED is raised when @count drops below
 *	   @limit, once per arming
 * @event_work: calls the SRQ's event handler
 */
struct ibdevsim_srq {
	struct ib_srq ibsrq;
	spinlock_t lock; /* see above */
	void *rq;
	size_t stride;
	u32 max;
	u32 head;
	u32 count;
	u32 max_sge;
	u32 limit;
	bool armed;
	struct work_struct event_work;
};

static inline struct ibdevsim_srq *to_srq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct ibdevsim_srq, ibsrq);
}

/**
 * struct ibdevsim_swqe - a posted send waiting for the send worker
 * @list: entry in the QP's @sendq
 * @wr_id: the caller's id
 * @signaled: a completion is wanted
 * @status: IB_WC_SUCCESS, or the error found when it was posted
 * @opcode: the completion's opcode
 * @byte_len: bytes sent
 * @pkt: the packet to send (UD, GSI, SMI; NULL when @status is an error)
 * @wr_opcode: the work request's opcode (RC)
 * @solicited: IB_SEND_SOLICITED (RC)
 * @remote_addr: RDMA WRITE and READ target address (RC)
 * @rkey: its R_Key (RC)
 * @ex: immediate data or the R_Key to invalidate (RC)
 * @num_sge: entries in @sgl (RC; UD data is in @pkt)
 * @reg_mr: IB_WR_REG_MR: the MR to register (RC)
 * @reg_access: IB_WR_REG_MR: the rights it gets (RC; the key is @rkey)
 * @psn: RC: its first PSN, given when it first goes on the wire
 * @npsn: RC: the PSNs it takes: its request packets, or for a READ its
 *	  response packets
 * @rd_got: RC READ: response packets taken so far, in order
 * @fence: IB_SEND_FENCE: waits for the READs before it (RC)
 * @sgl: the local buffers (RC), read when a packet is built and written
 *	 when a READ response lands
 */
struct ibdevsim_swqe {
	struct list_head list;
	u64 wr_id;
	bool signaled;
	enum ib_wc_status status;
	enum ib_wc_opcode opcode;
	u32 byte_len;
	struct ibdevsim_pkt *pkt;
	enum ib_wr_opcode wr_opcode;
	bool solicited;
	u64 remote_addr;
	u32 rkey;
	union {
		__be32 imm_data;
		u32 invalidate_rkey;
	} ex;
	struct ib_mr *reg_mr;
	int reg_access;
	u32 psn;
	u32 npsn;
	u32 rd_got;
	bool fence;
	u32 num_sge;
	struct ib_sge sgl[];
};

/**
 * struct ibdevsim_qp - a queue pair (SMI, GSI, UD or RC)
 * @ibqp: the core's QP
 * @hca: the device
 * @port: the port the QP is bound to
 * @state: QP state (under @sq_lock to change; the receive side reads it
 *	   with READ_ONCE())
 * @qkey: Q_Key
 * @pkey_index: P_Key index of a UD QP
 * @sq_sig_all: every send completes
 * @dest_qpn: RC: the remote QP
 * @dlid: RC: the remote port's LID
 * @sl: RC: service level
 * @path_bits: RC: source path bits
 * @access: RC: IB_ACCESS_REMOTE_* rights granted to the remote QP
 * @rnr_retry: RC: how often a request finding no receive is tried again
 *	       (7: for ever)
 * @retry_cnt: RC: how often a request is sent again after a local ACK
 *	       timeout or a sequence NAK
 * @timeout: RC: local ACK timeout, 4.096 us << @timeout (0: none)
 * @min_rnr_timer: RC: the wait an RNR NAK of this responder asks for
 *		   (IBTA table 45 code)
 * @max_rd_atomic: RC: READs in flight at most as requester
 * @max_dest_rd_atomic: RC: READs taken at once as responder (0: none)
 * @mtu: RC: path MTU in bytes, the most payload one packet carries
 * @sq_lock: protects @sendq, @sq_used, @sq_unsignaled, @state and the
 *	     RC requester's state, @rc_inflight to @rc_reaping
 * @sendq: posted sends not yet on the wire
 * @sq_used: send queue slots taken: a WQE's slot is free again only when
 *	     its completion, or that of a later signaled WQE, is polled
 * @sq_unsignaled: WQEs that ran without a completion since the last one
 *		   that had it; the next completion carries their slots
 * @sq_max: send queue depth
 * @max_send_sge: most SGEs in a send
 * @send_work: moves @sendq to the wire; for RC also sends again what
 *	       the timer or a NAK asks for
 * @rc_inflight: RC: requests on the wire, oldest first, until acknowledged
 * @rc_done: RC: requests finished (ACKed, failed or flushed), in order,
 *	     waiting to be completed by whoever reaps
 * @rc_next_psn: RC: the PSN the next new request starts at
 * @rc_tx_psn: RC: the next PSN to transmit (behind @rc_next_psn when
 *	       sending again)
 * @rc_una: RC: the oldest PSN not yet acknowledged
 * @rc_rd_out: RC: READs in @rc_inflight
 * @rc_rd_gap: RC: READ responses were found missing from @rc_rd_gap_psn
 *	       and the READ asked again; until progress, not again
 * @rc_rd_gap_psn: RC: see @rc_rd_gap
 * @rc_retry_left: RC: tries left after a timeout or sequence NAK
 * @rc_rnr_left: RC: tries left after an RNR NAK
 * @rc_rnr_wait: RC: waiting out an RNR NAK's timer: nothing is sent
 * @rc_expired: RC: the timer fired; the send work acts on it
 * @rc_reaping: RC: a context is completing @rc_done (keeps them in order)
 * @rc_timer: RC: the local ACK timer, and the RNR timer while @rc_rnr_wait
 * @rq_lock: protects @rq, @rq_head and @rq_count
 * @rq: ring of posted receives, @rq_stride bytes each
 * @rq_stride: size of a struct ibdevsim_rwqe with @max_recv_sge SGEs
 * @rq_max: receive queue depth
 * @rq_head: oldest posted receive
 * @rq_count: posted receives
 * @max_recv_sge: most SGEs in a receive
 * @srq: the SRQ an RC QP receives from instead of @rq, or NULL
 * @rc_rwqe: RC responder: the receive a SEND under way lands in, taken
 *	     from @rq or @srq at its first packet (valid while @rc_in_send)
 * @events: IBDEVSIM_QP_EV_* bits of the asynchronous events waiting for
 *	    @event_work (atomic bit operations)
 * @event_work: calls the QP's event handler for @events
 * @comm_est: COMM_EST was raised (under @rq_lock)
 * @rc_epsn: RC responder: the PSN it expects next (under @rq_lock, as
 *	     the rest of the responder's state)
 * @rc_nak_sent: RC responder: a sequence NAK was sent for @rc_epsn
 * @rc_in_send: RC responder: a multi-packet SEND (or a WRITE with
 *		immediate) is under way into the receive at @rq_head
 * @rc_rcv_off: RC responder: bytes of that SEND received so far
 * @rc_in_write: RC responder: a multi-packet RDMA WRITE is under way
 * @rc_wr_va: RC responder: where its next packet's data goes
 * @rc_wr_rkey: RC responder: the R_Key its RETH gave
 * @rc_wr_left: RC responder: bytes its RETH announced and still to come
 * @rc_wr_len: RC responder: bytes its RETH announced
 */
struct ibdevsim_qp {
	struct ib_qp ibqp;
	struct ibdevsim_hca *hca;
	u8 port;
	enum ib_qp_state state;
	u32 qkey;
	u16 pkey_index;
	bool sq_sig_all;
	u32 dest_qpn;
	u16 dlid;
	u8 sl;
	u8 path_bits;
	int access;
	u8 rnr_retry;
	u8 retry_cnt;
	u8 timeout;
	u8 min_rnr_timer;
	u8 max_rd_atomic;
	u8 max_dest_rd_atomic;
	u32 mtu;

	spinlock_t sq_lock; /* see above */
	struct list_head sendq;
	u32 sq_used;
	u32 sq_unsignaled;
	u32 sq_max;
	u32 max_send_sge;
	struct work_struct send_work;
	struct list_head rc_inflight;
	struct list_head rc_done;
	u32 rc_next_psn;
	u32 rc_tx_psn;
	u32 rc_una;
	u32 rc_rd_out;
	bool rc_rd_gap;
	u32 rc_rd_gap_psn;
	u8 rc_retry_left;
	u8 rc_rnr_left;
	bool rc_rnr_wait;
	bool rc_expired;
	bool rc_reaping;
	struct timer_list rc_timer;

	spinlock_t rq_lock; /* rq, rq_head, rq_count, the RC responder */
	void *rq;
	size_t rq_stride;
	u32 rq_max;
	u32 rq_head;
	u32 rq_count;
	u32 max_recv_sge;
	struct ibdevsim_srq *srq;
	struct ibdevsim_rwqe *rc_rwqe;

	unsigned long events;
	struct work_struct event_work;
	bool comm_est;
	u32 rc_epsn;
	bool rc_nak_sent;
	bool rc_in_send;
	u32 rc_rcv_off;
	bool rc_in_write;
	u64 rc_wr_va;
	u32 rc_wr_rkey;
	u32 rc_wr_left;
	u32 rc_wr_len;
};

/* The QP's asynchronous events, as bits of struct ibdevsim_qp.events. */
enum {
	IBDEVSIM_QP_EV_COMM_EST,	/* a request reached it in RTR */
	IBDEVSIM_QP_EV_FATAL,		/* injected through debugfs */
	IBDEVSIM_QP_EV_LAST_WQE,	/* an SRQ's QP went to error */
	IBDEVSIM_QP_EV_CQ_OVERRUN,	/* a completion was lost: to error */
	IBDEVSIM_QP_EV_REQ_ERR,		/* its responder took an invalid request */
	IBDEVSIM_QP_EV_ACCESS_ERR,	/* its responder refused an R_Key */
	IBDEVSIM_QP_EV_RESP_FATAL,	/* its responder failed otherwise */
	IBDEVSIM_QP_EV_NUM,
};

static inline struct ibdevsim_qp *to_qp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct ibdevsim_qp, ibqp);
}

static inline struct ibdevsim_cq *to_cq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct ibdevsim_cq, ibcq);
}

/* main.c: the topology */
extern struct mutex ibdevsim_topo_mutex;

/* fabric.c: cables and the packet path */
extern struct workqueue_struct *ibdevsim_wq;
extern struct workqueue_struct *ibdevsim_rx_wq;

void ibdevsim_port_init(struct ibdevsim_port *port, struct ibdevsim_node *node,
			u8 num);
int ibdevsim_cable_plug(struct ibdevsim_port *a, struct ibdevsim_port *b);
int ibdevsim_cable_unplug(struct ibdevsim_port *port);
int ibdevsim_cable_set_link(struct ibdevsim_port *port, bool up);
void ibdevsim_xmit(struct ibdevsim_port *port, struct ibdevsim_pkt *pkt);
void ibdevsim_walk(struct ibdevsim_port *out, struct ibdevsim_pkt *pkt);
void ibdevsim_arrive(struct ibdevsim_port *in, struct ibdevsim_pkt *pkt);
void ibdevsim_port_train(struct ibdevsim_port *port, bool up);
void ibdevsim_port_set_remote(struct ibdevsim_port *port,
			      struct ibdevsim_remote *r);
struct ibdevsim_pkt *ibdevsim_pkt_alloc(u32 len, gfp_t gfp);
void ibdevsim_pkt_free(struct ibdevsim_pkt *pkt);
void ibdevsim_hca_rx_flush(struct ibdevsim_node *node);
void ibdevsim_hca_rx_stop(struct ibdevsim_node *node);
void ibdevsim_port_events(struct ibdevsim_port *port, u32 changes);
u32 ibdevsim_port_set_state_locked(struct ibdevsim_port *port, u8 state);

/* packet.c: packets as bytes on a link (KUnit tested) */

/**
 * enum ibdevsim_rx_err - why a packet off a link was refused
 * @IBDEVSIM_RXERR_NONE: it was not
 * @IBDEVSIM_RXERR_SHORT: shorter than the headers it must have
 * @IBDEVSIM_RXERR_LEN: its length is not LRH.PktLen's, or its payload
 *			is longer than 4096 bytes
 * @IBDEVSIM_RXERR_VCRC: bad VCRC
 * @IBDEVSIM_RXERR_LVER: LRH.LVer is not 0
 * @IBDEVSIM_RXERR_LNH: a raw packet, or a reserved LNH
 * @IBDEVSIM_RXERR_GRH: GRH.IPVer is not 6 or GRH.NxtHdr not IBA (0x1B)
 * @IBDEVSIM_RXERR_TVER: BTH.TVer is not 0
 * @IBDEVSIM_RXERR_ICRC: bad ICRC
 * @IBDEVSIM_RXERR_OPCODE: an opcode ibdevsim does not carry
 * @IBDEVSIM_RXERR_PAD: headers and pad longer than the packet, or a
 *			payload where the opcode has none
 * @IBDEVSIM_RXERR_VL: a QP0 packet not on VL15, or a VL15 packet for
 *		       another QP
 * @IBDEVSIM_RXERR_NUM: the number of reasons
 */
enum ibdevsim_rx_err {
	IBDEVSIM_RXERR_NONE,
	IBDEVSIM_RXERR_SHORT,
	IBDEVSIM_RXERR_LEN,
	IBDEVSIM_RXERR_VCRC,
	IBDEVSIM_RXERR_LVER,
	IBDEVSIM_RXERR_LNH,
	IBDEVSIM_RXERR_GRH,
	IBDEVSIM_RXERR_TVER,
	IBDEVSIM_RXERR_ICRC,
	IBDEVSIM_RXERR_OPCODE,
	IBDEVSIM_RXERR_PAD,
	IBDEVSIM_RXERR_VL,
	IBDEVSIM_RXERR_NUM,
};

u16 ibdevsim_vcrc(const u8 *buf, u32 len);
u32 ibdevsim_icrc(const u8 *buf, u32 len);
u32 ibdevsim_pkt_wire_len(const struct ibdevsim_pkt *pkt);
u32 ibdevsim_pkt_encode(const struct ibdevsim_pkt *pkt, u8 *buf);
struct ibdevsim_pkt *ibdevsim_pkt_decode(const u8 *buf, u32 len, gfp_t gfp,
					 enum ibdevsim_rx_err *err);

/* remote.c: cables to a port in another kernel, over UDP */
int ibdevsim_remote_plug(struct ibdevsim_port *port, u16 lport, __be32 addr,
			 u16 rport);
int ibdevsim_remote_unplug(struct ibdevsim_port *port);
void ibdevsim_remote_set_link(struct ibdevsim_port *port, bool up);
u32 ibdevsim_remote_mtu(struct ibdevsim_remote *r);
bool ibdevsim_remote_full_locked(struct ibdevsim_remote *r);
void ibdevsim_remote_queue_locked(struct ibdevsim_remote *r,
				  struct ibdevsim_pkt *pkt);
void ibdevsim_remote_describe(struct ibdevsim_remote *r, u32 id, u32 num,
			      char *line, size_t size);

/* fault.c: fault knobs in debugfs and the queue of delayed packets */
extern struct dentry *ibdevsim_debugfs;
int ibdevsim_fault_init(void);
void ibdevsim_fault_exit(void);
void ibdevsim_fault_node_add(struct ibdevsim_node *node);
void ibdevsim_fault_node_del(struct ibdevsim_node *node);
bool ibdevsim_fault_apply_locked(struct ibdevsim_port *out,
				 struct ibdevsim_pkt *pkt);
u32 ibdevsim_fault_class(const struct ibdevsim_pkt *pkt);
u32 ibdevsim_fault_decide(const struct ibdevsim_faults *f, u32 cls,
			  const u32 draw[3]);
int ibdevsim_link_parse(const char *buf, bool *up);

/* mem.c: memory regions and copies between the memory work requests name */
struct ib_mr *ibdevsim_reg_user_mr(struct ib_pd *pd, u64 start, u64 length,
				   u64 virt, int access, IBDEVSIM_DMAH_ARG
				   struct ib_udata *udata);
int ibdevsim_dereg_user_mr(struct ibdevsim_mr *mr);
bool ibdevsim_mem_resolve(struct ibdevsim_hca *hca, const struct ib_pd *pd,
			  u32 key, u64 addr, u32 len, int access,
			  struct ibdevsim_seg *seg);
bool ibdevsim_sges_resolve(struct ibdevsim_qp *qp, const struct ib_sge *sge,
			   u32 n, int access, struct ibdevsim_seg *segs);
void ibdevsim_segs_skip(struct ibdevsim_seg *segs, u32 n, u32 off);
struct ib_mr *ibdevsim_alloc_mr(struct ib_pd *pd, enum ib_mr_type type,
				u32 max_num_sg);
int ibdevsim_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg,
		       int sg_nents, unsigned int *sg_offset);
void ibdevsim_dereg_fr_mr(struct ibdevsim_mr *mr);
enum ib_wc_status ibdevsim_fr_reg(struct ibdevsim_qp *qp, struct ib_mr *ibmr,
				  u32 key, int access);
bool ibdevsim_fr_inv(struct ibdevsim_qp *qp, u32 key);
u32 ibdevsim_seg_copy(const struct ibdevsim_seg *dst, u32 ndst,
		      const struct ibdevsim_seg *src, u32 nsrc, u32 len);

static inline struct ibdevsim_seg ibdevsim_kseg(const void *buf, u32 len)
{
	return (struct ibdevsim_seg){ .addr = (uintptr_t)buf, .len = len };
}

/* sma.c: the subnet management and performance management agents */
int ibdevsim_process_mad(struct ib_device *ibdev, int flags, u32 port_num,
			 const struct ib_wc *in_wc, const struct ib_grh *in_grh,
			 const struct ib_mad *in, struct ib_mad *out,
			 size_t *out_size, u16 *out_pkey_index);
void ibdevsim_sma_trap144(struct ibdevsim_port *port);
void ibdevsim_sma_trap128(struct ibdevsim_node *node);
void ibdevsim_sma_bad_pkey_locked(struct ibdevsim_port *port,
				  const struct ibdevsim_pkt *pkt);
void ibdevsim_sma_trap_repressed_locked(struct ibdevsim_port *port,
					const struct ib_smp *smp);
void ibdevsim_trap_work(struct work_struct *work);
struct ibdevsim_pkt *ibdevsim_switch_sma_locked(struct ibdevsim_port *in,
						const struct ibdevsim_pkt *pkt);

/* verbs.c: the ib_device side of an HCA */
extern bool ibdevsim_removal_events;
extern atomic_t ibdevsim_removal_events_sent;

int ibdevsim_hca_register(struct ibdevsim_node *node);
void ibdevsim_hca_unregister(struct ibdevsim_node *node);
void ibdevsim_hca_free(struct ibdevsim_node *node);
void ibdevsim_mcast_recv(struct ibdevsim_port *in,
			 const struct ibdevsim_pkt *pkt);
void ibdevsim_qp_deliver(struct ibdevsim_qp *qp,
			 const struct ibdevsim_pkt *pkt,
			 u16 pkey_index, u8 port);
void ibdevsim_cq_post(struct ibdevsim_cq *cq, const struct ib_wc *wc,
		      bool solicited);
void ibdevsim_cq_clean(struct ibdevsim_cq *cq, const struct ibdevsim_qp *qp);
#if IS_ENABLED(CONFIG_KUNIT)
struct ibdevsim_qp *ibdevsim_hca_find_qp(struct ibdevsim_port *in,
					 const struct ibdevsim_pkt *pkt,
					 int *pkey_index);
bool ibdevsim_cq_add(struct ibdevsim_cq *cq, const struct ib_wc *wc,
		     bool solicited, struct ibdevsim_qp *sq, u32 sq_slots);
int ibdevsim_poll_cq(struct ib_cq *ibcq, int n, struct ib_wc *wc);
#endif
struct ibdevsim_rwqe *ibdevsim_rq_slot(struct ibdevsim_qp *qp, u32 i);
void ibdevsim_rq_drain(struct ibdevsim_qp *qp, bool flush);
void ibdevsim_sq_retire(struct ibdevsim_qp *qp,
			const struct ibdevsim_swqe *swqe,
			enum ib_wc_status status);

/* rc.c: reliable connected QPs */
int ibdevsim_rc_post_check(const struct ibdevsim_qp *qp,
			   const struct ib_send_wr *wr, u32 *len);
void ibdevsim_rc_fill_swqe(struct ibdevsim_swqe *swqe,
			   const struct ib_send_wr *wr);
void ibdevsim_rc_qp_init(struct ibdevsim_qp *qp);
void ibdevsim_rc_send_work(struct ibdevsim_qp *qp);
void ibdevsim_rc_stop(struct ibdevsim_qp *qp);
void ibdevsim_rc_recv(struct ibdevsim_qp *qp, const struct ibdevsim_pkt *pkt);
#if IS_ENABLED(CONFIG_KUNIT)
struct ibdevsim_swqe *ibdevsim_rc_next_locked(struct ibdevsim_qp *qp,
					      u32 *psn, bool *again);
u32 ibdevsim_rc_build_locked(struct ibdevsim_qp *qp, struct ibdevsim_swqe *s,
			     u32 psn, struct ibdevsim_pkt *pkt,
			     enum ib_wc_status *status);
bool ibdevsim_rc_req_recv_locked(struct ibdevsim_qp *qp,
				 const struct ibdevsim_pkt *pkt, bool *failed);
bool ibdevsim_rc_expire_locked(struct ibdevsim_qp *qp);
#endif
extern const struct rdma_stat_desc ibdevsim_rc_stat_descs[IBDEVSIM_RC_NSTATS];
void ibdevsim_qp_error(struct ibdevsim_qp *qp);
void ibdevsim_qp_event(struct ibdevsim_qp *qp, int ev);
void ibdevsim_qp_event_work(struct work_struct *work);
int ibdevsim_qp_inject_fatal(struct ibdevsim_hca *hca, u32 qpn);

/* srq.c: shared receive queues */
int ibdevsim_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
			struct ib_udata *udata);
int ibdevsim_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
			enum ib_srq_attr_mask mask, struct ib_udata *udata);
int ibdevsim_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int ibdevsim_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);
int ibdevsim_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			   const struct ib_recv_wr **bad);
bool ibdevsim_srq_take(struct ibdevsim_srq *srq, struct ibdevsim_rwqe *out);

/* wire.c: pure logic on the wire formats (KUnit tested) */

/**
 * enum ibdevsim_dr_action - what a switch does with a directed-route SMP
 * @IBDEVSIM_DR_DISCARD: drop it
 * @IBDEVSIM_DR_FORWARD: send it out of the port given
 * @IBDEVSIM_DR_LOCAL: give it to the switch's own SMA
 * @IBDEVSIM_DR_LID_ROUTE: forward it by LID (to DrDLID or DrSLID)
 */
enum ibdevsim_dr_action {
	IBDEVSIM_DR_DISCARD,
	IBDEVSIM_DR_FORWARD,
	IBDEVSIM_DR_LOCAL,
	IBDEVSIM_DR_LID_ROUTE,
};

enum ibdevsim_dr_action ibdevsim_dr_switch_recv(struct ib_smp *smp,
						u8 in_port, u8 nports,
						bool by_lid, u8 *out_port,
						u16 *lid);
enum ibdevsim_dr_action ibdevsim_dr_switch_reply(struct ib_smp *smp,
						 u8 nports, u8 *out_port);
int ibdevsim_lft_lookup(const u8 *lft, u32 cap, u16 top, u16 dlid,
			u8 nports, u8 in_port);
void ibdevsim_portinfo_encode(const struct ibdevsim_port_state *st,
			      const struct ibdevsim_port_caps *caps,
			      struct ib_port_info *pi);
int ibdevsim_portinfo_apply(struct ibdevsim_port_state *st,
			    const struct ib_port_info *pi,
			    bool is_switch_port, u32 *changes);
void ibdevsim_nodeinfo_encode(struct ib_node_info *ni, u8 node_type,
			      u8 nports, u64 guid, u64 port_guid,
			      u16 partition_cap, u16 device_id, u8 local_port);
bool ibdevsim_pkey_match(u16 mine, u16 pkey);

/* RC transport rules: PSNs are 24 bits and compared modulo 2^24. */
#define IBDEVSIM_PSN_MASK	0xffffff

static inline u32 ibdevsim_psn_add(u32 psn, u32 n)
{
	return (psn + n) & IBDEVSIM_PSN_MASK;
}

/* Negative when @a is before @b, 0 when equal, positive after. */
static inline int ibdevsim_psn_cmp(u32 a, u32 b)
{
	return (s32)((a - b) << 8);
}

u32 ibdevsim_rc_npkts(u32 len, u32 mtu);
u8 ibdevsim_rc_opcode(enum ib_wr_opcode op, u32 idx, u32 npkts);
u64 ibdevsim_rc_ack_timeout_ns(u8 timeout);
u32 ibdevsim_rnr_timer_us(u8 code);
u16 ibdevsim_ud_slid(bool vl15, u16 dlid, u16 lid, u8 path_bits);
int ibdevsim_pkey_find(const u16 *pkeys, u32 len, u16 pkey);

/**
 * ibdevsim_lid_is_mcast() - whether a LID is a multicast LID
 * @lid: the LID
 *
 * Return: true for 0xc000 to 0xfffe (0xffff is the permissive LID).
 */
static inline bool ibdevsim_lid_is_mcast(u16 lid)
{
	return lid >= IBDEVSIM_MCAST_LID_BASE && lid != 0xffff;
}

/*
 * PortMasks in a row of a switch's MFT: enough 16-port positions for
 * ports 0 to @nports.
 */
static inline u32 ibdevsim_mft_positions(u8 nports)
{
	return nports / 16 + 1;
}

bool ibdevsim_mft_lookup(const u16 *mft, u32 cap, u16 top, u16 mlid,
			 u8 nports, u8 in_port, unsigned long *ports);
int ibdevsim_mcast_attach_check(const struct list_head *atts, u32 ngrps,
				const union ib_gid *mgid, u16 mlid,
				const struct ibdevsim_qp *qp, bool ud,
				struct ibdevsim_mcast_att **dup,
				bool *new_grp);
struct ibdevsim_mcast_att *
ibdevsim_mcast_find(const struct list_head *atts, const union ib_gid *mgid,
		    u16 mlid, const struct ibdevsim_qp *qp);
bool ibdevsim_mcast_grp_used(const struct list_head *atts,
			     const union ib_gid *mgid);
bool ibdevsim_mcast_match(const struct ibdevsim_mcast_att *att, u16 dlid,
			  const union ib_gid *dgid);

#endif /* IBDEVSIM_H */
