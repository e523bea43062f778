// SPDX-License-Identifier: GPL-2.0
/*
 * dm_query - ask an I/O unit for its Device Management profile over umad,
 * the way srp_daemon discovers SRP targets: ClassPortInfo, IOUnitInfo, the
 * IOControllerProfile of every populated slot and its ServiceEntries.
 *
 *   dm_query [-d DEV] [-p PORT] [-x SGID_INDEX] [-t MS] [-r N] -g DGID profile
 *   dm_query ... -g DGID raw METHOD ATTR MODIFIER
 *
 * DGID is the target port's GID (any inet_pton AF_INET6 form).  On RoCE
 * every MAD carries a GRH; QP1 with the well-known Q_Key is the target.
 * "raw" sends one DevMgt MAD and prints the status and the data words, for
 * tests of error paths.  Exit status: 0 on answers, 1 on a timeout or a
 * non-zero MAD status in "profile", 2 on usage or setup errors.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <infiniband/umad.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef __packed
#define __packed		__attribute__((packed))
#endif

#define DM_CLASS		0x06
#define DM_VERSION		1
#define DM_GET			0x01
#define DM_SET			0x02
#define DM_GET_RESP		0x81
#define DM_ATTR_CPI		0x0001
#define DM_ATTR_IOU_INFO	0x0010
#define DM_ATTR_IOC_PROFILE	0x0011
#define DM_ATTR_SVC_ENTRIES	0x0012
#define DM_DATA_OFFSET		64	/* common header + RMPP + DM reserved */
#define MAD_SIZE		256
#define GSI_QKEY		0x80010000

struct dm_mad_hdr {
	uint8_t base_version;
	uint8_t mgmt_class;
	uint8_t class_version;
	uint8_t method;
	uint16_t status;		/* big endian */
	uint16_t class_specific;
	uint64_t tid;			/* big endian */
	uint16_t attr_id;		/* big endian */
	uint16_t reserved;
	uint32_t attr_mod;		/* big endian */
} __packed;

struct dm_ctx {
	int fd;
	int agent;
	int timeout_ms;
	int retries;
	struct ib_mad_addr addr;
	uint64_t next_tid;
};

struct dm_answer {
	unsigned int status;
	uint8_t data[MAD_SIZE - DM_DATA_OFFSET];
};

/* One DevMgt MAD out, its response back: 0, or -ETIMEDOUT / -errno. */
static int dm_transact(struct dm_ctx *ctx, uint8_t method, uint16_t attr,
		       uint32_t mod, struct dm_answer *ans)
{
	size_t size = umad_size() + MAD_SIZE;
	void *umad = calloc(1, size);
	struct dm_mad_hdr *hdr;
	int len = MAD_SIZE, ret;
	uint64_t tid = ctx->next_tid++;

	if (!umad)
		return -ENOMEM;
	hdr = umad_get_mad(umad);
	hdr->base_version = 1;
	hdr->mgmt_class = DM_CLASS;
	hdr->class_version = DM_VERSION;
	hdr->method = method;
	hdr->tid = htobe64(tid);
	hdr->attr_id = htobe16(attr);
	hdr->attr_mod = htobe32(mod);
	umad_set_addr(umad, 0xffff, 1, 0, GSI_QKEY);
	umad_set_grh(umad, &ctx->addr);

	ret = umad_send(ctx->fd, ctx->agent, umad, MAD_SIZE, ctx->timeout_ms,
			ctx->retries);
	if (ret < 0)
		goto out;
	for (;;) {
		len = MAD_SIZE;
		/* umad reports a timeout itself; this bound is a backstop. */
		ret = umad_recv(ctx->fd, umad, &len,
				ctx->timeout_ms * (ctx->retries + 1) + 2000);
		if (ret < 0)
			goto out;
		if (umad_status(umad)) {
			ret = -umad_status(umad);	/* ETIMEDOUT */
			goto out;
		}
		hdr = umad_get_mad(umad);
		/* ib_umad puts its agent's hi_tid in the upper 32 bits. */
		if ((uint32_t)be64toh(hdr->tid) == (uint32_t)tid &&
		    hdr->method == DM_GET_RESP)
			break;
		/* A late answer to an earlier retry: keep waiting. */
	}
	ans->status = be16toh(hdr->status);
	memcpy(ans->data, (uint8_t *)hdr + DM_DATA_OFFSET, sizeof(ans->data));
	ret = 0;
out:
	free(umad);
	return ret;
}

static uint16_t get16(const uint8_t *p)
{
	return p[0] << 8 | p[1];
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)get16(p) << 16 | get16(p + 2);
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) << 32 | get32(p + 4);
}

static int dm_get(struct dm_ctx *ctx, const char *what, uint16_t attr,
		  uint32_t mod, struct dm_answer *ans)
{
	int ret = dm_transact(ctx, DM_GET, attr, mod, ans);

	if (ret) {
		printf("%s: no answer (%s)\n", what, strerror(-ret));
		return 1;
	}
	if (ans->status) {
		printf("%s: MAD status 0x%04x\n", what, ans->status);
		return 1;
	}
	return 0;
}

static void dm_print_ioc(const uint8_t *p)
{
	printf("    ioc_guid=%016llx vendor_id=%06x device_id=%08x\n",
	       (unsigned long long)get64(p), get32(p + 8) >> 8, get32(p + 12));
	printf("    io_class=%04x io_subclass=%04x protocol=%04x protocol_version=%04x\n",
	       get16(p + 28), get16(p + 30), get16(p + 32), get16(p + 34));
	printf("    send_queue_depth=%u rdma_read_depth=%u send_size=%u rdma_size=%u\n",
	       get16(p + 40), p[43], get32(p + 44), get32(p + 48));
	printf("    op_cap_mask=%02x svc_cap_mask=%02x service_entries=%u id_string=\"%.64s\"\n",
	       p[52], p[53], p[54], (const char *)p + 64);
}

static int dm_profile(struct dm_ctx *ctx)
{
	struct dm_answer ans, svc;
	unsigned int slot, nslots, n;
	int found = 0;

	if (dm_get(ctx, "ClassPortInfo", DM_ATTR_CPI, 0, &ans))
		return 1;
	printf("ClassPortInfo: base_version=%u class_version=%u",
	       ans.data[0], ans.data[1]);
	printf(" capability_mask=%04x resp_time=%u\n",
	       get16(ans.data + 2), get32(ans.data + 4) & 0x1f);

	if (dm_get(ctx, "IOUnitInfo", DM_ATTR_IOU_INFO, 0, &ans))
		return 1;
	nslots = ans.data[2];
	printf("IOUnitInfo: change_id=%u max_controllers=%u\n",
	       get16(ans.data), nslots);

	for (slot = 1; slot <= nslots && slot <= 255; slot++) {
		uint8_t nibble = ans.data[4 + (slot - 1) / 2];
		char what[64];

		nibble = (slot & 1) ? nibble >> 4 : nibble & 0xf;
		if (nibble != 1)
			continue;
		found++;
		snprintf(what, sizeof(what), "IOControllerProfile slot %u", slot);
		if (dm_get(ctx, what, DM_ATTR_IOC_PROFILE, slot, &svc))
			return 1;
		printf("IOControllerProfile slot %u:\n", slot);
		dm_print_ioc(svc.data);
		n = svc.data[54];
		if (!n)
			continue;
		/* Entries lo..hi of this slot, up to four per MAD. */
		snprintf(what, sizeof(what), "ServiceEntries slot %u", slot);
		for (unsigned int lo = 0; lo < n; lo += 4) {
			unsigned int hi = lo + 3 < n ? lo + 3 : n - 1;
			struct dm_answer se;

			if (dm_get(ctx, what, DM_ATTR_SVC_ENTRIES,
				   slot << 16 | hi << 8 | lo, &se))
				return 1;
			for (unsigned int i = 0; i <= hi - lo; i++) {
				const uint8_t *e = se.data + i * 48;

				printf("    service %u: name=\"%.40s\" id=%016llx\n",
				       lo + i, (const char *)e,
				       (unsigned long long)get64(e + 40));
			}
		}
	}
	printf("I/O controllers found: %d\n", found);
	return found ? 0 : 1;
}

static int dm_raw(struct dm_ctx *ctx, char **argv)
{
	struct dm_answer ans;
	int ret, i;

	ret = dm_transact(ctx, strtoul(argv[0], NULL, 0),
			  strtoul(argv[1], NULL, 0), strtoul(argv[2], NULL, 0),
			  &ans);
	if (ret) {
		printf("timeout\n");
		return 1;
	}
	printf("status=0x%04x\ndata=", ans.status);
	for (i = 0; i < 64; i++)
		printf("%02x", ans.data[i]);
	printf("\n");
	return 0;
}

static void dm_usage(void)
{
	fprintf(stderr,
		"usage: dm_query [-d DEV] [-p PORT] [-x SGID_INDEX] [-t MS] [-r N] -g DGID\n"
		"                profile | raw METHOD ATTR MODIFIER\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct dm_ctx ctx = { .timeout_ms = 1000, .retries = 3 };
	const char *dev = NULL, *dgid = NULL;
	int port = 1, sgid_index = 0, opt, ret;
	long mask[16 / sizeof(long)] = {};

	while ((opt = getopt(argc, argv, "d:p:x:t:r:g:")) != -1) {
		switch (opt) {
		case 'd':
			dev = optarg;
			break;
		case 'p':
			port = atoi(optarg);
			break;
		case 'x':
			sgid_index = atoi(optarg);
			break;
		case 't':
			ctx.timeout_ms = atoi(optarg);
			break;
		case 'r':
			ctx.retries = atoi(optarg);
			break;
		case 'g':
			dgid = optarg;
			break;
		default:
			dm_usage();
		}
	}
	argc -= optind;
	argv += optind;
	if (!dgid || argc < 1)
		dm_usage();
	if (inet_pton(AF_INET6, dgid, ctx.addr.gid) != 1) {
		fprintf(stderr, "dm_query: bad GID %s\n", dgid);
		return 2;
	}
	ctx.addr.grh_present = 1;
	ctx.addr.gid_index = sgid_index;
	ctx.addr.hop_limit = 64;
	ctx.next_tid = (uint32_t)time(NULL) << 8;

	if (umad_init() < 0) {
		fprintf(stderr, "dm_query: umad_init failed\n");
		return 2;
	}
	ctx.fd = umad_open_port(dev, port);
	if (ctx.fd < 0) {
		fprintf(stderr, "dm_query: cannot open %s port %d: %s\n",
			dev ? dev : "(first)", port, strerror(-ctx.fd));
		return 2;
	}
	/* A send-only agent: responses come back by TID. */
	ctx.agent = umad_register(ctx.fd, DM_CLASS, DM_VERSION, 0, mask);
	if (ctx.agent < 0) {
		fprintf(stderr, "dm_query: cannot register a DevMgt agent\n");
		return 2;
	}
	if (!strcmp(argv[0], "profile"))
		ret = dm_profile(&ctx);
	else if (!strcmp(argv[0], "raw") && argc == 4)
		ret = dm_raw(&ctx, argv + 1);
	else
		dm_usage();
	umad_unregister(ctx.fd, ctx.agent);
	umad_close_port(ctx.fd);
	return ret;
}
