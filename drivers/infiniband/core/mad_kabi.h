/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * kABI of the MAD API: include this header in every file of ours that
 * exports a function whose prototype reaches struct ib_device (agents,
 * send buffers), and in no other.
 *
 * With CONFIG_MODVERSIONS, genksyms folds into each exported symbol's CRC
 * every type reachable from its prototype, expanded where the exporting
 * file sees it defined and "UNKNOWN" where it is only declared.  From
 * struct ib_mad_agent the walk reaches struct ib_device, struct device,
 * struct module and then the tracing and perf structs (trace_event_call,
 * trace_eval_map, ftrace_ops, perf_event, perf_event_context).  Upstream
 * exports the MAD API from mad.c, which creates the MAD trace points and
 * so sees those complete through <linux/trace_events.h>; a distribution's
 * Module.symvers holds the CRCs computed there.  With this header our
 * exporting files see exactly the same definitions, so our ib_core's CRCs
 * are the distribution kernel's and its ib_cm, ib_umad, mlx5_ib... load
 * against us.
 *
 * Not in mad_priv.h: upstream's own ib_core files include that through
 * core_priv.h, and their CRCs must not change either.  Extra complete types
 * change CRCs as surely as missing ones, so an exporting file must not
 * include a header that defines a type upstream's mad.c sees only declared
 * (mad_wire.c's <rdma/ib_cm.h> completes struct rdma_cm_id and
 * struct in_device: that is why ib_mad_kernel_rmpp_agent() lives in
 * mad_reg.c).  dkms/ib-mad-srpt-kabi checks every CRC against the
 * kernel's Module.symvers, and make compat-distro runs it.
 */

#ifndef __IB_MAD_KABI_H__
#define __IB_MAD_KABI_H__

#include <linux/trace_events.h>

#endif	/* __IB_MAD_KABI_H__ */
