/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ibdevsim: the kernel interfaces that differ between the series we build
 * for (6.12 and 7.2), chosen by the probes of madsrpt-probe.sh run against
 * the target kernel (drivers/infiniband/compat/). Without a probe result
 * (a build that did not run the probes) the 6.12 forms are used.
 */
#ifndef IBDEVSIM_COMPAT_H
#define IBDEVSIM_COMPAT_H

#include <linux/timer.h>
#include <net/udp_tunnel.h>
#include <rdma/ib_umem.h>

/* sparse knows no __has_include(): it checks the 6.12 forms. */
#ifndef __CHECKER__
#if __has_include("generated/madsrpt_probes.h")
#include "generated/madsrpt_probes.h"
#endif
#endif

/* 6.16: from_timer() became timer_container_of(). */
#ifndef HAVE_TIMER_CONTAINER_OF
#define timer_container_of(var, timer, field)	from_timer(var, timer, field)
#endif

/* 7.x: ib_umem_get() became ib_umem_get_va(), with the same arguments. */
#ifndef HAVE_IB_UMEM_GET_VA
#define ib_umem_get_va(dev, addr, size, access) \
	ib_umem_get(dev, addr, size, access)
#endif

/*
 * 7.x: reg_user_mr() takes a DMA handle (struct ib_dmah) before its
 * udata. ibdevsim has no alloc_dmah, so it never gets one (rxe refuses a
 * handle the same way). IBDEVSIM_DMAH_ARG goes in the parameter list,
 * IBDEVSIM_DMAH the expression to test.
 */
#ifdef HAVE_REG_USER_MR_DMAH
#define IBDEVSIM_DMAH_ARG	struct ib_dmah *dmah,
#define IBDEVSIM_DMAH		dmah
#else
#define IBDEVSIM_DMAH_ARG
#define IBDEVSIM_DMAH		NULL
#endif

/* 7.x: the UDP tunnel socket helpers take the struct sock. */
#ifdef HAVE_UDP_TUNNEL_SOCK_SK
#define ibdevsim_tunnel_sk(sock)	((sock)->sk)
#else
#define ibdevsim_tunnel_sk(sock)	(sock)
#endif

#endif /* IBDEVSIM_COMPAT_H */
