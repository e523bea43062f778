// SPDX-License-Identifier: GPL-2.0
/*
 * dm_query - ask an I/O unit for its Device Management profile over umad,
 * the way srp_daemon discovers SRP targets: ClassPortInfo, IOUnitInfo, the
 * IOControllerProfile of every populated slot and its ServiceEntries.
 *
 *   dm_query [-d DEV] [-p PORT] [-x SGID_INDEX] [-t MS] [-r N] -g DGID profile
 *   dm_query ... -g DGID raw METHOD ATTR MODIFIER
 *   dm_query ... -g DGID check IOC_GUID VENDOR_ID DEVICE_ID DEVICE_VERSION
 *   dm_query ... -l DLID profile | raw ...
 *   dm_query ... -w MS ...
 *   dm_query ... -k PKEY_INDEX ...
 *
 * DGID is the target port's GID (any inet_pton AF_INET6 form).  On RoCE
 * every MAD carries a GRH; QP1 with the well-known Q_Key is the target.
 * On InfiniBand -l DLID sends LID-routed MADs without a GRH instead
 * ("check" expects a GRH and needs -g).
 * "raw" sends one DevMgt MAD and prints the status and the data words, for
 * tests of error paths.  "check" asks an ib_srpt port every DM question
 * (valid and invalid slots and ranges, Set(), unknown attributes) and
 * compares each answer's header and every field with what ib_srpt must
 * send, printing TAP; the arguments are the values that depend on the
 * target's HCA.  Exit status: 0 on answers (all checks passed for "check"),
 * 1 on a timeout, a non-zero MAD status in "profile" or a failed check,
 * 2 on usage or setup errors.
 * "profile" ends with "answers matching no request: N", the answers
 * umad delivered while another TID was awaited; -w MS then also waits MS
 * milliseconds for answers that come after the last one and counts them
 * too (a request sent once must be answered to user space once, even
 * when the fabric duplicated it or its answer).
 * -k sends with that P_Key index (default 0); an index beyond the port's
 * table makes the HCA fail the send, for tests of send error recovery.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <infiniband/umad.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tap.h"
#include "umad_common.h"

#define DM_CLASS		0x06
#define DM_VERSION		1
#define DM_ATTR_CPI		0x0001
#define DM_ATTR_IOU_INFO	0x0010
#define DM_ATTR_IOC_PROFILE	0x0011
#define DM_ATTR_SVC_ENTRIES	0x0012
#define DM_DATA_OFFSET		64	/* common header + RMPP + DM reserved */

struct dm_ctx {
	int fd;
	int agent;
	int timeout_ms;
	int retries;
	uint8_t dgid[16];		/* the target port's GID */
	uint8_t sgid_index;		/* our GID's index */
	uint16_t dlid;			/* non-zero: LID routed, no GRH */
	uint64_t next_tid;
	unsigned int strays;		/* answers to no outstanding request */
	int drain_ms;			/* -w: wait this long for late strays */
	int pkey_index;			/* -k: P_Key index to send with */
};

struct dm_answer {
	unsigned int status;
	uint32_t sent_tid;		/* low half; ib_umad sets the high one */
	struct umad_hdr hdr;		/* as received, big endian */
	struct ib_mad_addr from;	/* source of the answer */
	uint8_t data[MAD_SIZE - DM_DATA_OFFSET];
};

/* One DevMgt MAD out, its response back: 0, or -ETIMEDOUT / -errno. */
static int dm_transact(struct dm_ctx *ctx, uint8_t method, uint16_t attr,
		       uint32_t mod, struct dm_answer *ans)
{
	size_t size = umad_size() + MAD_SIZE;
	void *umad = calloc(1, size);
	struct umad_hdr *hdr;
	int len = MAD_SIZE, ret;
	uint64_t tid = ctx->next_tid++;

	if (!umad)
		return -ENOMEM;
	hdr = umad_get_mad(umad);
	hdr->base_version = MGMT_BASE_VERSION;
	hdr->mgmt_class = DM_CLASS;
	hdr->class_version = DM_VERSION;
	hdr->method = method;
	hdr->tid = htobe64(tid);
	hdr->attr_id = htobe16(attr);
	hdr->attr_mod = htobe32(mod);
	mad_address(umad_get_mad_addr(umad), 1, ctx->dgid, ctx->sgid_index);
	if (ctx->dlid) {
		umad_get_mad_addr(umad)->grh_present = 0;
		umad_get_mad_addr(umad)->lid = htobe16(ctx->dlid);
	}

	umad_set_pkey(umad, ctx->pkey_index);
	ret = umad_send(ctx->fd, ctx->agent, umad, MAD_SIZE, ctx->timeout_ms,
			ctx->retries);
	if (ret < 0) {
		/* umad_send() says EIO; errno has the kernel's reason. */
		ret = errno ? -errno : ret;
		goto out;
	}
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
		if ((uint32_t)be64toh(hdr->tid) == (uint32_t)tid)
			break;
		/* A late answer to an earlier retry: keep waiting. */
		ctx->strays++;
	}
	ans->status = be16toh(hdr->status);
	ans->sent_tid = tid;
	ans->hdr = *hdr;
	ans->from = *umad_get_mad_addr(umad);
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
	int ret = dm_transact(ctx, METHOD_GET, attr, mod, ans);

	if (ret) {
		printf("%s: no answer (%s)\n", what, strerror(-ret));
		return 1;
	}
	if (ans->hdr.method != METHOD_GET_RESP) {
		printf("%s: answer with method 0x%02x\n", what, ans->hdr.method);
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

/* dm_drain() - count the answers that arrive within -w's milliseconds. */
static void dm_drain(struct dm_ctx *ctx)
{
	size_t size = umad_size() + MAD_SIZE;
	void *umad = calloc(1, size);
	int len;

	if (!umad)
		return;
	for (;;) {
		len = MAD_SIZE;
		if (umad_recv(ctx->fd, umad, &len, ctx->drain_ms) < 0)
			break;
		ctx->strays++;
	}
	free(umad);
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

/*
 * What ib_srpt answers (srpt_dm.h, srpt_mad.c), as far as it does not
 * depend on the target's HCA: those values come from the command line.
 */
#define DM_ATTR_NOTICE		0x0002
#define DM_ATTR_DIAG_TIMEOUT	0x0020
#define DM_ATTR_VENDOR		0xff00
#define DM_STATUS_UNSUP_ATTR	0x000c	/* unsupported method/attribute */
#define DM_STATUS_INVALID_FIELD	0x001c
#define DM_STATUS_NO_IOC	0x0100
#define SRPT_SLOTS		16
#define SRPT_RESP_TIME		20	/* 2^20 * 4.096 us */
#define SRPT_IO_CLASS		0x0100	/* SRP_REV16A_IB_IO_CLASS */
#define SRPT_IO_SUBCLASS	0x609e
#define SRPT_PROTOCOL		0x0108
#define SRPT_PROTOCOL_VERSION	0x0001
/* No SRQ before a login asks for one: min(SRPT_MAX_RQ_SIZE, max_qp_wr). */
#define SRPT_SQ_DEPTH		128
#define SRPT_RDMA_READ_DEPTH	4	/* SRPT_RD_ATOMIC */
/* Default srp_max_req_size: 80 + 4 + 8 KiB of immediate data. */
#define SRPT_SEND_SIZE		8276
#define SRPT_RDMA_SIZE		65536	/* default srp_max_rdma_size */
/* Send to and from the IOC, RDMA read and write from the IOC. */
#define SRPT_OP_CAP		0x2b
#define SRPT_ID_STRING		"Linux SRP target"
#define SRPT_SVC_PREFIX		"SRP.T10:"

struct dm_check {
	struct dm_ctx *ctx;
	int bad;		/* mismatches in the current test point */
	char diag[2048];	/* their TAP comments */
	size_t len;
	uint8_t dgid[16];
	int sgid_index;
	uint64_t ioc_guid;
	uint32_t vendor_id;
	uint32_t device_id;
	uint16_t device_version;
};

/* Note a mismatch of the current test point. */
static void ck_note(struct dm_check *c, const char *fmt, ...)
{
	va_list ap;
	int n;

	c->bad++;
	if (c->len >= sizeof(c->diag) - 1)
		return;
	va_start(ap, fmt);
	n = vsnprintf(c->diag + c->len, sizeof(c->diag) - c->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		c->len += n;
	if (c->len > sizeof(c->diag) - 1)
		c->len = sizeof(c->diag) - 1;
}

static void ck_eq(struct dm_check *c, const char *field, uint64_t got,
		  uint64_t want)
{
	if (got != want)
		ck_note(c, "#   %s: got 0x%llx, want 0x%llx\n", field,
			(unsigned long long)got, (unsigned long long)want);
}

static void ck_zero(struct dm_check *c, const char *field, const uint8_t *p,
		    size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if (p[i]) {
			ck_note(c, "#   %s: byte %zu is 0x%02x, want 0\n",
				field, i, p[i]);
			return;
		}
	}
}

/* A fixed-size text field: @want, then NUL bytes to the end. */
static void ck_text(struct dm_check *c, const char *field, const uint8_t *p,
		    size_t len, const char *want)
{
	size_t n = strlen(want);

	if (memcmp(p, want, n)) {
		ck_note(c, "#   %s: got \"%.*s\", want \"%s\"\n", field,
			(int)len, (const char *)p, want);
		return;
	}
	ck_zero(c, field, p + n, len - n);
}

/* End the current test point: ok unless something was noted. */
static void ck_point(struct dm_check *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vtap(!c->bad, fmt, ap);
	va_end(ap);
	printf("%s", c->diag);
	fflush(stdout);
	c->bad = 0;
	c->len = 0;
	c->diag[0] = '\0';
}

/*
 * One request and a test point for its answer: a GetResp() from the
 * target's QP1 and GID to our GID, with the request's TID, class,
 * attribute and modifier, and MAD status @status.  Returns 0 when it is
 * so, and the attribute's data may be checked.
 */
static int ck_query(struct dm_check *c, uint8_t method, uint16_t attr,
		    uint32_t mod, unsigned int status, const char *what,
		    struct dm_answer *a)
{
	const struct umad_hdr *h = &a->hdr;
	char gid[INET6_ADDRSTRLEN];
	int ret;

	ret = dm_transact(c->ctx, method, attr, mod, a);
	if (ret) {
		ck_note(c, "#   no answer: %s\n", strerror(-ret));
	} else {
		ck_eq(c, "method", h->method, METHOD_GET_RESP);
		/* ib_umad owns the high half of the TID. */
		ck_eq(c, "TID, low 32 bits", (uint32_t)be64toh(h->tid),
		      a->sent_tid);
		ck_eq(c, "base version", h->base_version, MGMT_BASE_VERSION);
		ck_eq(c, "management class", h->mgmt_class, DM_CLASS);
		ck_eq(c, "class version", h->class_version, DM_VERSION);
		ck_eq(c, "class specific", be16toh(h->class_specific), 0);
		ck_eq(c, "attribute id", be16toh(h->attr_id), attr);
		ck_eq(c, "attribute modifier", be32toh(h->attr_mod), mod);
		ck_eq(c, "source QP", be32toh(a->from.qpn), 1);
		ck_eq(c, "GRH present", a->from.grh_present, 1);
		ck_eq(c, "our GID index", a->from.gid_index, c->sgid_index);
		if (memcmp(a->from.gid, c->dgid, sizeof(c->dgid))) {
			inet_ntop(AF_INET6, a->from.gid, gid, sizeof(gid));
			ck_note(c, "#   source GID: got %s\n", gid);
		}
		ck_eq(c, "MAD status", a->status, status);
	}
	ret = c->bad ? -1 : 0;
	ck_point(c, "%s(%s): GetResp, status 0x%04x",
		 method == METHOD_SET ? "Set" : "Get", what, status);
	return ret;
}

static void ck_class_port_info(struct dm_check *c)
{
	struct dm_answer a;
	const uint8_t *p = a.data;

	if (ck_query(c, METHOD_GET, DM_ATTR_CPI, 0, 0, "ClassPortInfo", &a))
		return;
	ck_eq(c, "base version", p[0], 1);
	ck_eq(c, "class version", p[1], DM_VERSION);
	ck_eq(c, "capability mask", get16(p + 2), 0);
	ck_eq(c, "CapabilityMask2", get32(p + 4) >> 5, 0);
	ck_eq(c, "RespTimeValue", get32(p + 4) & 0x1f, SRPT_RESP_TIME);
	ck_point(c, "ClassPortInfo: versions 1/1, no capabilities, RespTimeValue %d",
		 SRPT_RESP_TIME);
	ck_zero(c, "redirect and trap fields", p + 8, 64);
	ck_zero(c, "data after ClassPortInfo", p + 72, sizeof(a.data) - 72);
	ck_point(c, "ClassPortInfo: no redirection, no trap destination");
}

static void ck_iou_info(struct dm_check *c, const char *when)
{
	struct dm_answer a;
	const uint8_t *p = a.data;
	unsigned int slot, state;
	char field[32];

	if (ck_query(c, METHOD_GET, DM_ATTR_IOU_INFO, 0, 0, "IOUnitInfo", &a))
		return;
	ck_eq(c, "change id", get16(p), 1);
	ck_eq(c, "max controllers", p[2], SRPT_SLOTS);
	/* DiagDeviceID (bit 7) and OptionROM (bit 6): ib_srpt has neither. */
	ck_eq(c, "diag device id, option ROM", p[3], 0);
	ck_point(c, "IOUnitInfo%s: change id 1, %d slots, no option ROM",
		 when, SRPT_SLOTS);
	/* One nibble a slot, slot 1 in the high nibble of the first byte. */
	for (slot = 1; slot <= SRPT_SLOTS; slot++) {
		state = p[4 + (slot - 1) / 2];
		state = slot & 1 ? state >> 4 : state & 0xf;
		snprintf(field, sizeof(field), "slot %u", slot);
		ck_eq(c, field, state, slot == 1);
	}
	ck_zero(c, "controller list after slot 16", p + 12, 120);
	ck_zero(c, "data after IOUnitInfo", p + 132, sizeof(a.data) - 132);
	ck_point(c, "IOUnitInfo%s: an IOC in slot 1, slots 2 to %d empty",
		 when, SRPT_SLOTS);
}

static void ck_ioc_field(struct dm_check *c, const char *field, uint64_t got,
			 uint64_t want)
{
	ck_eq(c, field, got, want);
	ck_point(c, "IOControllerProfile: %s 0x%llx", field,
		 (unsigned long long)want);
}

static void ck_ioc_profile(struct dm_check *c)
{
	struct dm_answer a;
	const uint8_t *p = a.data;

	if (ck_query(c, METHOD_GET, DM_ATTR_IOC_PROFILE, 1, 0,
		     "IOControllerProfile, slot 1", &a))
		return;
	ck_ioc_field(c, "IOC GUID", get64(p), c->ioc_guid);
	/* ib_srpt puts the 24-bit ids in the low bits of their word. */
	ck_ioc_field(c, "vendor id", get32(p + 8), c->vendor_id);
	ck_ioc_field(c, "device id", get32(p + 12), c->device_id);
	ck_ioc_field(c, "device version", get16(p + 16), c->device_version);
	ck_ioc_field(c, "subsystem vendor id", get32(p + 20), c->vendor_id);
	ck_ioc_field(c, "subsystem device id", get32(p + 24), 0);
	ck_ioc_field(c, "I/O class", get16(p + 28), SRPT_IO_CLASS);
	ck_ioc_field(c, "I/O subclass", get16(p + 30), SRPT_IO_SUBCLASS);
	ck_ioc_field(c, "protocol", get16(p + 32), SRPT_PROTOCOL);
	ck_ioc_field(c, "protocol version", get16(p + 34),
		     SRPT_PROTOCOL_VERSION);
	ck_ioc_field(c, "service conn, initiators supported", get32(p + 36),
		     0);
	ck_ioc_field(c, "send queue depth", get16(p + 40), SRPT_SQ_DEPTH);
	ck_ioc_field(c, "RDMA read depth", p[43], SRPT_RDMA_READ_DEPTH);
	ck_ioc_field(c, "send size", get32(p + 44), SRPT_SEND_SIZE);
	ck_ioc_field(c, "RDMA size", get32(p + 48), SRPT_RDMA_SIZE);
	ck_ioc_field(c, "operation capabilities", p[52], SRPT_OP_CAP);
	ck_ioc_field(c, "service capabilities", p[53], 0);
	ck_ioc_field(c, "service entries", p[54], 1);
	ck_text(c, "id string", p + 64, 64, SRPT_ID_STRING);
	ck_point(c, "IOControllerProfile: id string \"%s\"", SRPT_ID_STRING);
	ck_zero(c, "reserved bytes 18-19", p + 18, 2);
	ck_zero(c, "reserved byte 42", p + 42, 1);
	ck_zero(c, "reserved bytes 55-63", p + 55, 9);
	ck_zero(c, "data after IOControllerProfile", p + 128,
		sizeof(a.data) - 128);
	ck_point(c, "IOControllerProfile: reserved fields zero");
}

static void ck_svc_entries(struct dm_check *c)
{
	struct dm_answer a;
	const uint8_t *p = a.data;
	char name[48];

	if (ck_query(c, METHOD_GET, DM_ATTR_SVC_ENTRIES, 1 << 16,
		     0, "ServiceEntries, slot 1, entries 0-0", &a))
		return;
	snprintf(name, sizeof(name), SRPT_SVC_PREFIX "%016llx",
		 (unsigned long long)c->ioc_guid);
	ck_text(c, "service name", p, 40, name);
	ck_eq(c, "service id", get64(p + 40), c->ioc_guid);
	ck_point(c, "ServiceEntries: entry 0 is \"%s\", id %016llx", name,
		 (unsigned long long)c->ioc_guid);
	ck_zero(c, "entries 1 to 3", p + 48, sizeof(a.data) - 48);
	ck_point(c, "ServiceEntries: nothing after entry 0");
}

/* GetResp() with only a status: no data to check. */
static void ck_status(struct dm_check *c, uint8_t method, uint16_t attr,
		      uint32_t mod, unsigned int status, const char *what)
{
	struct dm_answer a;

	ck_query(c, method, attr, mod, status, what, &a);
}

/* ServiceEntries modifier: slot in bits 31:16, hi in 15:8, lo in 7:0. */
static uint32_t svc_mod(uint32_t slot, uint32_t hi, uint32_t lo)
{
	return slot << 16 | hi << 8 | lo;
}

static int dm_check(struct dm_ctx *ctx, const uint8_t *dgid, char **argv)
{
	struct dm_check c = {
		.ctx = ctx,
		.sgid_index = ctx->sgid_index,
		.ioc_guid = strtoull(argv[0], NULL, 16),
		.vendor_id = strtoul(argv[1], NULL, 0),
		.device_id = strtoul(argv[2], NULL, 0),
		.device_version = strtoul(argv[3], NULL, 0),
	};
	const uint16_t ioc = DM_ATTR_IOC_PROFILE, svc = DM_ATTR_SVC_ENTRIES;

	memcpy(c.dgid, dgid, sizeof(c.dgid));
	ck_class_port_info(&c);
	ck_iou_info(&c, "");
	ck_ioc_profile(&c);
	ck_svc_entries(&c);

	ck_status(&c, METHOD_GET, ioc, 0, DM_STATUS_INVALID_FIELD,
		  "IOControllerProfile, slot 0");
	ck_status(&c, METHOD_GET, ioc, 17, DM_STATUS_INVALID_FIELD,
		  "IOControllerProfile, slot 17");
	ck_status(&c, METHOD_GET, ioc, 0xffffffff, DM_STATUS_INVALID_FIELD,
		  "IOControllerProfile, slot 0xffffffff");
	ck_status(&c, METHOD_GET, ioc, 2, DM_STATUS_NO_IOC,
		  "IOControllerProfile, empty slot 2");
	ck_status(&c, METHOD_GET, ioc, 16, DM_STATUS_NO_IOC,
		  "IOControllerProfile, empty slot 16");

	ck_status(&c, METHOD_GET, svc, svc_mod(1, 0, 1),
		  DM_STATUS_INVALID_FIELD,
		  "ServiceEntries, slot 1, reversed range 1-0");
	ck_status(&c, METHOD_GET, svc, svc_mod(1, 1, 1),
		  DM_STATUS_INVALID_FIELD,
		  "ServiceEntries, slot 1, entries 1-1 beyond the count");
	ck_status(&c, METHOD_GET, svc, svc_mod(1, 1, 0),
		  DM_STATUS_INVALID_FIELD,
		  "ServiceEntries, slot 1, entries 0-1 beyond the count");
	ck_status(&c, METHOD_GET, svc, svc_mod(1, 255, 0),
		  DM_STATUS_INVALID_FIELD,
		  "ServiceEntries, slot 1, entries 0-255");
	ck_status(&c, METHOD_GET, svc, svc_mod(0, 0, 0),
		  DM_STATUS_INVALID_FIELD,
		  "ServiceEntries, slot 0");
	ck_status(&c, METHOD_GET, svc, svc_mod(17, 0, 0),
		  DM_STATUS_INVALID_FIELD,
		  "ServiceEntries, slot 17");
	ck_status(&c, METHOD_GET, svc, svc_mod(2, 0, 0), DM_STATUS_NO_IOC,
		  "ServiceEntries, empty slot 2");

	/* No DM attribute of ib_srpt is writable. */
	ck_status(&c, METHOD_SET, DM_ATTR_CPI, 0, DM_STATUS_UNSUP_ATTR,
		  "ClassPortInfo");
	ck_status(&c, METHOD_SET, DM_ATTR_IOU_INFO, 0, DM_STATUS_UNSUP_ATTR,
		  "IOUnitInfo");
	ck_status(&c, METHOD_SET, ioc, 1, DM_STATUS_UNSUP_ATTR,
		  "IOControllerProfile, slot 1");
	ck_status(&c, METHOD_SET, svc, svc_mod(1, 0, 0), DM_STATUS_UNSUP_ATTR,
		  "ServiceEntries, slot 1, entries 0-0");
	ck_iou_info(&c, " after the Set()s");

	ck_status(&c, METHOD_GET, DM_ATTR_NOTICE, 0, DM_STATUS_UNSUP_ATTR,
		  "Notice, not implemented");
	ck_status(&c, METHOD_GET, DM_ATTR_DIAG_TIMEOUT, 1, DM_STATUS_UNSUP_ATTR,
		  "DiagnosticTimeout, not implemented");
	ck_status(&c, METHOD_GET, DM_ATTR_VENDOR, 0, DM_STATUS_UNSUP_ATTR,
		  "vendor attribute 0xff00");

	if (ctx->strays)
		ck_note(&c, "#   %u answers matched no outstanding request\n",
			ctx->strays);
	ck_point(&c, "every answer carried the TID of the request in flight");
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

static void dm_usage(void)
{
	fprintf(stderr,
		"usage: dm_query [-d DEV] [-p PORT] [-x SGID_INDEX] [-t MS] [-r N] [-w MS]\n"
		"                [-k PKEY_INDEX]\n"
		"                {-g DGID | -l DLID}\n"
		"                profile | raw METHOD ATTR MODIFIER |\n"
		"                check IOC_GUID VENDOR_ID DEVICE_ID DEVICE_VERSION\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct dm_ctx ctx = { .timeout_ms = 1000, .retries = 3 };
	const char *dev = NULL, *dgid = NULL;
	int port = 1, sgid_index = 0, opt, ret;
	long mask[16 / sizeof(long)] = {};

	while ((opt = getopt(argc, argv, "d:p:x:t:r:g:l:w:k:")) != -1) {
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
		case 'l':
			ctx.dlid = strtoul(optarg, NULL, 0);
			break;
		case 'w':
			ctx.drain_ms = atoi(optarg);
			break;
		case 'k':
			ctx.pkey_index = atoi(optarg);
			break;
		default:
			dm_usage();
		}
	}
	argc -= optind;
	argv += optind;
	if ((!dgid && !ctx.dlid) || argc < 1)
		dm_usage();
	if (dgid && inet_pton(AF_INET6, dgid, ctx.dgid) != 1) {
		fprintf(stderr, "dm_query: bad GID %s\n", dgid);
		return 2;
	}
	ctx.sgid_index = sgid_index;
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
	if (!strcmp(argv[0], "profile")) {
		ret = dm_profile(&ctx);
		if (ctx.drain_ms > 0)
			dm_drain(&ctx);
		printf("answers matching no request: %u\n", ctx.strays);
	} else if (!strcmp(argv[0], "raw") && argc == 4) {
		ret = dm_raw(&ctx, argv + 1);
	} else if (!strcmp(argv[0], "check") && argc == 5) {
		ret = dm_check(&ctx, ctx.dgid, argv + 1);
	} else {
		dm_usage();
	}
	umad_unregister(ctx.fd, ctx.agent);
	umad_close_port(ctx.fd);
	return ret;
}
