/* SPDX-License-Identifier: GPL-2.0 */
/*
 * umad_common.h - what the libibumad programs share: the GSI constants and
 * methods, and helpers to address a MAD through a GRH, to read a port's
 * GID from sysfs and to fill an agent's method mask.  Header-only, like
 * tap.h: each program is one .c file that is compiled on its own.
 */
#ifndef MADSRPT_UMAD_COMMON_H
#define MADSRPT_UMAD_COMMON_H

#include <endian.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <linux/types.h>
#include <infiniband/umad.h>
#include <infiniband/umad_types.h>

#define MAD_SIZE		256		/* a MAD; RMPP messages are longer */
#define GSI_QKEY		0x80010000u	/* the Q_Key of QP1 */
#define MGMT_BASE_VERSION	1

#define METHOD_GET		0x01
#define METHOD_SET		0x02
#define METHOD_GET_RESP		0x81

#define RMPP_VERSION		1
#define RMPP_TYPE_DATA		1
#define RMPP_FLAG_ACTIVE	0x01
#define RMPP_FLAG_FIRST		0x02
#define RMPP_FLAG_LAST		0x04

/*
 * The common MAD header and the RMPP header that follows it in the classes
 * that may use RMPP come from rdma-core: struct umad_hdr, and struct
 * umad_rmpp_hdr at (h + 1) for a struct umad_hdr *h.
 */
_Static_assert(sizeof(struct umad_hdr) == 24, "the MAD header is 24 bytes");
_Static_assert(sizeof(struct umad_rmpp_hdr) == 12,
	       "the RMPP header is 12 bytes");

/* A MAD of a vendor class of range 2: its headers, the OUI, the data. */
struct vendor_mad {
	struct umad_hdr hdr;
	struct umad_rmpp_hdr rmpp;
	uint8_t reserved;
	uint8_t oui[3];
	uint8_t data[216];
} __attribute__((packed));

_Static_assert(sizeof(struct vendor_mad) == MAD_SIZE, "a MAD is 256 bytes");

/*
 * Address a MAD to QP @qpn of the port with GID @dgid, with QP1's Q_Key:
 * RoCE has no LIDs, a GRH from our GID @sgid_index addresses the port.
 */
static inline void mad_address(ib_mad_addr_t *a, uint32_t qpn,
			       const uint8_t *dgid, int sgid_index)
{
	memset(a, 0, sizeof(*a));
	a->qpn = htobe32(qpn);
	a->qkey = htobe32(GSI_QKEY);
	a->grh_present = 1;
	a->gid_index = sgid_index;
	a->hop_limit = 64;
	memcpy(a->gid, dgid, 16);
}

/* Where sysfs shows GID @index of port @port of device @dev. */
#define SYSFS_GID_PATH	"/sys/class/infiniband/%s/ports/%d/gids/%d"

/*
 * Read GID @index of port @port of @dev from sysfs into @gid (16 bytes,
 * network order).  Returns 0, or a negative errno: -EINVAL when the file
 * holds no GID.
 */
static inline int read_port_gid(const char *dev, int port, int index,
				uint8_t *gid)
{
	char path[256], text[64];
	unsigned int w[8];
	FILE *f;
	int i;

	snprintf(path, sizeof(path), SYSFS_GID_PATH, dev, port, index);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	if (!fgets(text, sizeof(text), f) ||
	    sscanf(text, "%x:%x:%x:%x:%x:%x:%x:%x", &w[0], &w[1], &w[2], &w[3],
		   &w[4], &w[5], &w[6], &w[7]) != 8) {
		fclose(f);
		return -EINVAL;
	}
	fclose(f);
	for (i = 0; i < 8; i++) {
		gid[2 * i] = w[i] >> 8;
		gid[2 * i + 1] = w[i] & 0xff;
	}
	return 0;
}

/*
 * Read the LID of port @port of @dev from sysfs into @lid (host order).
 * Returns 0, or a negative errno: -EINVAL when the port has no LID.
 */
static inline int read_port_lid(const char *dev, int port, uint16_t *lid)
{
	char path[256];
	unsigned int v;
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/%d/lid",
		 dev, port);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	n = fscanf(f, "%x", &v);
	fclose(f);
	if (n != 1 || !v || v >= 0xc000)
		return -EINVAL;
	*lid = v;
	return 0;
}

/* Set the bit of @method in @mask, for umad_register(_oui)(). */
static inline void method_mask_set(long *mask, uint8_t method)
{
	const unsigned int bits = 8 * sizeof(long);

	mask[method / bits] |= 1L << (method % bits);
}

#endif
