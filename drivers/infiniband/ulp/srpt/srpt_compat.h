/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ib_srpt: the kernel interfaces that differ between the series we build
 * for (6.12 and 7.2), chosen by the probes of madsrpt-probe.sh run against
 * the target kernel (drivers/infiniband/compat/). Without a probe result
 * (a build that did not run the probes) the 6.12 forms are used.
 */
#ifndef SRPT_COMPAT_H
#define SRPT_COMPAT_H

#include <linux/workqueue.h>
#include <target/target_core_base.h>
#include <target/target_core_fabric.h>

/* sparse knows no __has_include(): it checks the 6.12 forms. */
#ifndef __CHECKER__
#if __has_include("generated/madsrpt_probes.h")
#include "generated/madsrpt_probes.h"
#endif
#endif

/*
 * 7.x warns about a workqueue allocated with neither WQ_PERCPU nor
 * WQ_UNBOUND (a panic under panic_on_warn); WQ_PERCPU reached 6.12 with
 * 6.12.y's stable updates, and means what no flag meant before.
 */
#ifndef HAVE_WQ_PERCPU
#define WQ_PERCPU 0
#endif

/*
 * 7.x: LIO asks each fabric in which context to complete its commands.
 * ib_srpt has them queued to LIO's completion work, as it always was:
 * its queue_data_in and queue_status must not run in a backend's
 * completion context. Goes in srpt_template's initializer.
 */
#ifdef HAVE_TARGET_COMPL_TYPE
#define SRPT_COMPL_OPS	.default_compl_type = TARGET_QUEUE_COMPL,
#else
#define SRPT_COMPL_OPS
#endif

#endif /* SRPT_COMPAT_H */
