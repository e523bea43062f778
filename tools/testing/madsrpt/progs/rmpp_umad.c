// SPDX-License-Identifier: GPL-2.0
/*
 * rmpp_umad - RMPP transfers through ib_umad with kernel RMPP agents.
 *
 * A requester agent sends an RMPP request (method Set) of N bytes of class
 * data; a responder agent, registered for Get and Set on the class with
 * rmpp_version 1, checks every byte and answers with an RMPP GetResp of N
 * bytes of its own, which the requester checks in turn.  Both directions
 * of a double-sided transfer go through the kernel's segmentation and
 * reassembly.  Classes: a vendor class of range 2 (0x30, with an OUI) and
 * Device Management (0x06).
 *
 * Modes:
 *   rmpp_umad [-d dev] [-p port] [-g gid_index] [-s size] [-M max] loop
 *	both agents in this process, talking to our own port
 *   rmpp_umad [-d dev] [-p port] [-c count] [-w secs] [-s size] [-M max] serve
 *	responder only, for a requester on another node; it exits after
 *	answering @count requests, by default as many as one client run
 *	with the same -s and -M sends (see below)
 *   rmpp_umad [-d dev] [-p port] [-g gid_index] [-l lid] [-s size] [-M max]
 *	client DGID
 *	requester only, towards the responder at DGID (with a GRH; on
 *	InfiniBand -l gives the responder's LID for the LRH); after
 *	its transfers it sends one closing 1-byte request, so the
 *	responder's last RMPP answer is complete before the responder exits
 *   rmpp_umad [-d dev] [-p port] [-g gid_index] -s size bench SECS
 *	throughput, not a test: as loop, on the vendor class only, the
 *	exchange of -s bytes each way repeated until SECS have passed;
 *	prints the RMPP payload moved per second (both directions)
 *
 * -s limits the transfers to one of the sizes (for a closer look at one),
 * -M to the sizes up to max.
 * Output is TAP: one test point per class, size and direction.
 */
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <infiniband/umad.h>

#include "tap.h"
#include "umad_common.h"

#define ATTR_TEST		0xff10	/* vendor-specific attribute */
#define ATTR_CLOSE		0xff11	/* the client's closing request */
#define MAX_PAYLOAD		(1024u * 1024u)	/* 1 MiB */

/* The classes under test and their class data offsets. */
struct test_class {
	const char *name;
	uint8_t mgmt_class;
	uint8_t class_version;
	int hdr_len;		/* common + RMPP + class header */
	uint8_t oui[3];		/* vendor range 2 only */
};

static const struct test_class classes[] = {
	{ "vendor 0x30", 0x30, 1, 40, { 0x00, 0x14, 0x05 } },
	{ "devmgt", 0x06, 1, 64, { 0, 0, 0 } },
};

static const uint32_t sizes[] = { 1, 200, 220, 4096, 65536, MAX_PAYLOAD };

/* -s: only transfers of this many bytes; -M: none larger (0: no limit) */
static uint32_t only_size, max_size;

static int size_wanted(uint32_t size)
{
	return (!only_size || size == only_size) &&
	       (!max_size || size <= max_size);
}

/* How many of sizes[] a run transfers, per class. */
static size_t sizes_wanted(void)
{
	size_t i, n = 0;

	for (i = 0; i < ARRAY_SIZE(sizes); i++)
		n += size_wanted(sizes[i]);
	return n;
}

struct port {
	int fd;
	int gid_index;
	uint8_t gid[16];
};

/*
 * The last pattern made for each direction, so that the repeated
 * exchanges of bench mode copy their data rather than compute it again.
 */
static struct {
	uint32_t len;
	uint8_t mgmt_class;
	uint8_t *data;
} made[2];

/* Deterministic data for one (class, size, direction). */
static void pattern(uint8_t *buf, uint32_t len, uint8_t mgmt_class,
		    int response)
{
	uint32_t x = 0x9e3779b9u ^ (len * 2654435761u) ^
		     ((uint32_t)mgmt_class << 24) ^ (response ? 0x5a5a5a5au : 0);
	uint32_t i;
	uint8_t *copy;

	response = !!response;
	if (made[response].data && made[response].len == len &&
	    made[response].mgmt_class == mgmt_class) {
		memcpy(buf, made[response].data, len);
		return;
	}
	for (i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		buf[i] = x >> 11;
	}
	copy = realloc(made[response].data, len ? len : 1);
	if (!copy)
		return;		/* the next call computes it again */
	memcpy(copy, buf, len);
	made[response].data = copy;
	made[response].len = len;
	made[response].mgmt_class = mgmt_class;
}

/* Index of the first differing byte, or -1. */
static long first_diff(const uint8_t *a, const uint8_t *b, uint32_t len)
{
	uint32_t i;

	if (!memcmp(a, b, len))
		return -1;
	for (i = 0; i < len; i++)
		if (a[i] != b[i])
			return i;
	return -1;
}

static int parse_gid(const char *text, uint8_t *gid)
{
	char hex[33];
	int i, j = 0;

	/* Accept 32 hex digits with or without colons. */
	for (i = 0; text[i] && j < 32; i++)
		if (text[i] != ':')
			hex[j++] = text[i];
	hex[j] = 0;
	if (j != 32)
		return -EINVAL;
	for (i = 0; i < 16; i++) {
		unsigned int b;

		if (sscanf(hex + 2 * i, "%2x", &b) != 1)
			return -EINVAL;
		gid[i] = b;
	}
	return 0;
}

static int reg_agent(int fd, const struct test_class *c, int methods)
{
	long mask[16 / sizeof(long)];

	memset(mask, 0, sizeof(mask));
	if (methods) {
		method_mask_set(mask, METHOD_GET);
		method_mask_set(mask, METHOD_SET);
	}
	if (!methods)
		/* Send-only: responses come back to it by TID. */
		return umad_register(fd, 0, 0, RMPP_VERSION, mask);
	if (c->mgmt_class >= 0x30 && c->mgmt_class <= 0x4f)
		return umad_register_oui(fd, c->mgmt_class, RMPP_VERSION,
					 (uint8_t *)c->oui, mask);
	return umad_register(fd, c->mgmt_class, c->class_version, RMPP_VERSION,
			     mask);
}

/* Build an RMPP MAD of @len data bytes after @c's headers. */
static size_t build_mad(void *umad, const struct test_class *c, uint8_t method,
			uint64_t tid, uint16_t attr, uint32_t len, int response)
{
	uint8_t *mad = umad_get_mad(umad);
	struct umad_hdr *h = (struct umad_hdr *)mad;
	struct umad_rmpp_hdr *r = (struct umad_rmpp_hdr *)(h + 1);

	memset(mad, 0, c->hdr_len);
	h->base_version = MGMT_BASE_VERSION;
	h->mgmt_class = c->mgmt_class;
	h->class_version = c->class_version;
	h->method = method;
	h->tid = htobe64(tid);
	h->attr_id = htons(attr);
	h->attr_mod = htonl(len);
	r->rmpp_version = RMPP_VERSION;
	r->rmpp_type = RMPP_TYPE_DATA;
	r->rmpp_rtime_flags = RMPP_FLAG_ACTIVE;
	if (c->hdr_len == 40)		/* vendor range 2: reserved + OUI */
		memcpy(mad + 37, c->oui, 3);
	pattern(mad + c->hdr_len, len, c->mgmt_class, response);
	return c->hdr_len + len;
}

/*
 * Receive one MAD on @fd into @umad (room for MAX_PAYLOAD of data).
 * Returns the MAD length, or a negative errno.
 */
static int recv_mad(int fd, void *umad, int timeout_ms)
{
	int len = 64 + MAX_PAYLOAD;
	int ret;

	ret = umad_recv(fd, umad, &len, timeout_ms);
	if (ret < 0)
		return ret;
	if (umad_status(umad))
		return -umad_status(umad);
	return len;
}

/* Check a received RMPP message against what the peer must have sent. */
static int check_mad(void *umad, int len, const struct test_class *c,
		     uint32_t *size, int response, char *why, size_t whylen)
{
	const uint8_t *mad = umad_get_mad(umad);
	const struct umad_hdr *h = (const struct umad_hdr *)mad;
	static uint8_t expect[MAX_PAYLOAD];
	long diff;

	if (len < c->hdr_len) {
		snprintf(why, whylen, "message of %d bytes", len);
		return -1;
	}
	if (h->status) {
		snprintf(why, whylen, "MAD status 0x%04x", ntohs(h->status));
		return -1;
	}
	*size = ntohl(h->attr_mod);
	if (h->mgmt_class != c->mgmt_class || *size > MAX_PAYLOAD ||
	    len != c->hdr_len + (int)*size) {
		snprintf(why, whylen, "class 0x%x, %d bytes for %u of data",
			 h->mgmt_class, len, *size);
		return -1;
	}
	pattern(expect, *size, c->mgmt_class, response);
	diff = first_diff(mad + c->hdr_len, expect, *size);
	if (diff >= 0) {
		snprintf(why, whylen, "data differ at byte %ld of %u", diff,
			 *size);
		return -1;
	}
	return 0;
}

/*
 * Check the request of @len bytes in @umad and send its RMPP answer from
 * @reply.  Returns 0, -EPROTO with the reason in @why, or -errno when the
 * answer could not be sent.
 */
static int answer(int fd, int agent, const struct test_class *c,
		  void *umad, int len, void *reply, uint32_t *size, char *why,
		  size_t whylen)
{
	const struct umad_hdr *h = (const struct umad_hdr *)umad_get_mad(umad);
	size_t rlen;

	if (check_mad(umad, len, c, size, 0, why, whylen))
		return -EPROTO;
	rlen = build_mad(reply, c, METHOD_GET_RESP, be64toh(h->tid),
			 ntohs(h->attr_id), *size, 1);
	memcpy(umad_get_mad_addr(reply), umad_get_mad_addr(umad),
	       sizeof(ib_mad_addr_t));
	umad_get_mad_addr(reply)->qkey = htonl(GSI_QKEY);
	if (umad_send(fd, agent, reply, rlen, 0, 5) < 0) {
		snprintf(why, whylen, "sending the reply of %u bytes: %s",
			 *size, strerror(errno));
		return errno ? -errno : -EIO;
	}
	return 0;
}

/* Answer one request on @fd; returns 1 when answered, 0 on idle, <0 error. */
static int serve_one(int fd, int agent, const struct test_class *c,
		     void *umad, void *reply, int timeout_ms)
{
	char why[128] = "";
	uint32_t size = 0;
	int len, ret;

	len = recv_mad(fd, umad, timeout_ms);
	if (len == -ETIMEDOUT || len == -EWOULDBLOCK)
		return 0;
	if (len < 0) {
		tap(0, "%s: receiving a request: %s", c->name, strerror(-len));
		return len;
	}

	ret = answer(fd, agent, c, umad, len, reply, &size, why, sizeof(why));
	if (ret != -EPROTO)
		tap(ret == 0, "%s: request of %u bytes received intact%s%s",
		    c->name, size, ret ? ", but " : "", why);
	else
		tap(0, "%s: request of %u bytes: %s", c->name, size, why);
	return ret ? ret : 1;
}

static void *alloc_umad(void)
{
	void *p = calloc(1, umad_size() + 64 + MAX_PAYLOAD);

	if (!p) {
		perror("calloc");
		exit(2);
	}
	return p;
}

/* The LID requests are sent to (-l; 0 on RoCE, where there is none). */
static uint16_t req_dlid;

/* Attribute of the requests sent: ATTR_CLOSE for the closing exchange. */
static uint16_t req_attr = ATTR_TEST;
/* Timeout and retries of each request; the closing one retries quickly. */
static int req_timeout_ms = 240000, req_retries = 5;
/* How long a responder goes on answering repeated closing requests. */
#define CLOSE_LINGER_MS		5000

/*
 * One request/response exchange from the requester's side; in loop mode
 * the responder runs in between on its own descriptor.
 */
static void exchange(struct port *req, int req_agent, struct port *rsp,
		     int rsp_agent, const struct test_class *c, uint32_t size,
		     const uint8_t *dgid, void *buf, void *buf2)
{
	static uint32_t tid_lo = 0x1000;
	double t0 = now_ms();
	char why[128] = "";
	struct pollfd pfd[2];
	int len, ret, served = 0;
	uint32_t got = 0, tid;
	size_t mlen;

	mlen = build_mad(buf, c, METHOD_SET, ++tid_lo, req_attr, size, 0);
	mad_address(umad_get_mad_addr(buf), 1, dgid, req->gid_index);
	umad_get_mad_addr(buf)->lid = htobe16(req_dlid);
	/*
	 * The request's timeout also bounds the whole RMPP response; it is
	 * generous because two TCG guests share two host cores (1 MiB of
	 * DevMgt, 5462 segments, takes seconds there, minutes under load).
	 * Five retries, as the responder's answers have: on a lossy wire
	 * the timeout that repeats a lost window can itself go unanswered.
	 */
	if (umad_send(req->fd, req_agent, buf, mlen, req_timeout_ms,
		      req_retries) < 0) {
		tap(0, "%s: send %u bytes: %s", c->name, size, strerror(errno));
		return;
	}

	for (;;) {
		pfd[0].fd = req->fd;
		pfd[0].events = POLLIN;
		pfd[1].fd = rsp ? rsp->fd : -1;
		pfd[1].events = POLLIN;
		ret = poll(pfd, 2, 250000);
		if (ret <= 0) {
			tap(0, "%s: %u bytes: no response in %.0f ms", c->name,
			    size, now_ms() - t0);
			return;
		}
		if (rsp && (pfd[1].revents & POLLIN)) {
			ret = serve_one(rsp->fd, rsp_agent, c, buf2,
					(char *)buf2 + umad_size() + 64 +
					MAX_PAYLOAD, 0);
			served += ret > 0;
			if (ret < 0)
				return;
		}
		if (!(pfd[0].revents & POLLIN))
			continue;
		len = recv_mad(req->fd, buf, 0);
		tid = be64toh(((const struct umad_hdr *)
			       umad_get_mad(buf))->tid) & 0xffffffff;
		/* A MAD or a send's timeout; other errors have no TID. */
		if ((len >= 0 || len == -ETIMEDOUT) && tid != tid_lo) {
			/* A late answer or timeout of an earlier request. */
			printf("# ignored: %s for TID 0x%x, not 0x%x\n",
			       len < 0 ? strerror(-len) : "a response", tid,
			       tid_lo);
			continue;
		}
		if (len < 0) {
			tap(0, "%s: %u bytes: request failed after %.0f ms: %s",
			    c->name, size, now_ms() - t0, strerror(-len));
			return;
		}
		break;
	}
	ret = check_mad(buf, len, c, &got, 1, why, sizeof(why));
	if (!ret && got != size) {
		snprintf(why, sizeof(why), "%u bytes instead of %u", got, size);
		ret = -1;
	}
	tap(ret == 0, "%s: response of %u bytes received intact in %.0f ms%s%s",
	    c->name, size, now_ms() - t0, ret ? ": " : "", why);
	if (rsp && !served)
		tap(0, "%s: %u bytes: response came before the request was seen",
		    c->name, size);
}

static int open_port(const char *dev, int portnum, int gid_index,
		     struct port *p)
{
	p->fd = umad_open_port(dev, portnum);
	if (p->fd < 0) {
		fprintf(stderr, "umad_open_port %s:%d: %s\n", dev ? dev : "any",
			portnum, strerror(-p->fd));
		return -1;
	}
	p->gid_index = gid_index;
	if (dev && read_port_gid(dev, portnum, gid_index, p->gid)) {
		fprintf(stderr, "cannot read GID %d of %s:%d\n", gid_index,
			dev, portnum);
		return -1;
	}
	return 0;
}

static void usage(void)
{
	fprintf(stderr,
		"Usage: rmpp_umad [-d dev] [-p port] [-g gid_index] [-s size] [-M max] loop\n"
		"       rmpp_umad [-d dev] [-p port] [-c count] [-w secs] [-s size] [-M max]\n"
		"                 serve\n"
		"       rmpp_umad [-d dev] [-p port] [-g gid_index] [-l lid] [-s size]\n"
		"                 [-M max] client DGID\n"
		"       rmpp_umad [-d dev] [-p port] [-g gid_index] -s size bench SECS\n");
	exit(2);
}

static int run_loop_or_client(const char *dev, int portnum, int gid_index,
			      const char *dgid_text)
{
	size_t nc = ARRAY_SIZE(classes);
	size_t ns = sizes_wanted();
	struct port req, rsp;
	int req_agent, rsp_agent[2] = { -1, -1 };
	uint8_t dgid[16];
	void *buf, *buf2;
	size_t i, j;

	if (open_port(dev, portnum, gid_index, &req))
		return 2;
	if (dgid_text) {
		if (parse_gid(dgid_text, dgid)) {
			fprintf(stderr, "bad GID %s\n", dgid_text);
			return 2;
		}
	} else {
		memcpy(dgid, req.gid, 16);
		if (open_port(dev, portnum, gid_index, &rsp))
			return 2;
	}

	buf = alloc_umad();
	buf2 = calloc(1, 2 * (umad_size() + 64 + MAX_PAYLOAD));
	if (!buf2)
		return 2;

	printf("TAP version 13\n1..%zu\n",
	       nc * ns * (dgid_text ? 1 : 2) + nc * (dgid_text ? 1 : 2) +
	       (dgid_text ? 1 : 0));
	req_agent = reg_agent(req.fd, &classes[0], 0);
	for (i = 0; i < nc; i++) {
		tap(req_agent >= 0, "%s: requester agent registered",
		    classes[i].name);
		if (!dgid_text) {
			rsp_agent[i] = reg_agent(rsp.fd, &classes[i], 1);
			tap(rsp_agent[i] >= 0,
			    "%s: responder agent registered (rmpp_version 1)",
			    classes[i].name);
		}
	}
	for (i = 0; i < nc; i++)
		for (j = 0; j < ARRAY_SIZE(sizes); j++)
			if (size_wanted(sizes[j]))
				exchange(&req, req_agent, dgid_text ? NULL : &rsp,
					 rsp_agent[i], &classes[i], sizes[j],
					 dgid, buf, buf2);

	/*
	 * A remote responder stops after its last answer, and closing its
	 * umad file cancels an RMPP response still being segmented.  One
	 * more single-segment exchange, sent only once every response above
	 * has arrived whole, is the request it stops after.  Its answer can
	 * be lost on a lossy wire too: it is repeated every second, and the
	 * responder answers repeats for CLOSE_LINGER_MS after the first.
	 */
	if (dgid_text) {
		printf("# closing exchange: the responder stops after it\n");
		req_attr = ATTR_CLOSE;
		req_timeout_ms = 1000;
		req_retries = 15;
		exchange(&req, req_agent, NULL, -1, &classes[0], 1, dgid, buf,
			 buf2);
	}

	printf("# %d of %d failed\n", tap_failed, tap_n);
	return tap_failed ? 1 : 0;
}

/*
 * Throughput of kernel RMPP through ib_umad: both agents of loop mode on
 * the vendor class, one exchange of @size bytes each way at a time, for
 * at least @secs.  The time is taken over whole exchanges, so the rate
 * does not depend on how much of the last one fell inside @secs.  Every
 * message is still checked byte for byte; a failed exchange fails the
 * run.
 */
static int run_bench(const char *dev, int portnum, int gid_index,
		     uint32_t size, int secs)
{
	const struct test_class *c = &classes[0];
	int req_agent, rsp_agent, n = 0;
	struct port req, rsp;
	double t0, ms;
	void *buf, *buf2;

	if (open_port(dev, portnum, gid_index, &req) ||
	    open_port(dev, portnum, gid_index, &rsp))
		return 2;
	buf = alloc_umad();
	buf2 = calloc(1, 2 * (umad_size() + 64 + MAX_PAYLOAD));
	if (!buf2)
		return 2;
	req_agent = reg_agent(req.fd, c, 0);
	rsp_agent = reg_agent(rsp.fd, c, 1);
	if (req_agent < 0 || rsp_agent < 0) {
		fprintf(stderr, "%s: cannot register the agents\n", c->name);
		return 2;
	}

	t0 = now_ms();
	do {
		exchange(&req, req_agent, &rsp, rsp_agent, c, size, req.gid,
			 buf, buf2);
		if (tap_failed)
			break;
		n++;
		ms = now_ms() - t0;
	} while (ms < secs * 1e3);
	if (tap_failed) {
		printf("# rmpp-bench: exchange %d failed\n", n + 1);
		return 1;
	}
	printf("# rmpp-bench class=0x%x size=%u exchanges=%d ms=%.0f rate=%.3f\n",
	       c->mgmt_class, size, n, ms, 2.0 * size * n / (ms * 1e3));
	return 0;
}

/*
 * After the closing request: its answer may have been lost, so answer the
 * client's repeats of it until none came for CLOSE_LINGER_MS.  Anything
 * else is a late repeat of a request already answered and is ignored.
 */
static int linger_on_close(int fd, int agent, void *buf, void *reply)
{
	const struct umad_hdr *h;
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int ret, repeats = 0;
	uint32_t size = 0;
	char why[128];

	while (poll(&pfd, 1, CLOSE_LINGER_MS) > 0) {
		ret = recv_mad(fd, buf, 0);
		if (ret < 0)
			continue;	/* the timeout of a send of ours */
		h = (const struct umad_hdr *)umad_get_mad(buf);
		if (h->mgmt_class != classes[0].mgmt_class ||
		    ntohs(h->attr_id) != ATTR_CLOSE)
			continue;
		if (answer(fd, agent, &classes[0], buf, ret, reply, &size, why,
			   sizeof(why))) {
			fprintf(stderr, "repeated closing request: %s\n", why);
			return 1;
		}
		repeats++;
	}
	if (repeats)
		printf("# answered %d repeat(s) of the closing request\n",
		       repeats);
	return 0;
}

/* Responder for another node: serve until @count requests or idle @secs. */
static int run_serve(const char *dev, int portnum, int count, int secs)
{
	size_t nc = ARRAY_SIZE(classes);
	struct pollfd pfd;
	struct port rsp;
	int agent[2], served = 0;
	void *buf, *reply;
	size_t i;

	if (open_port(dev, portnum, 0, &rsp))
		return 2;
	for (i = 0; i < nc; i++) {
		agent[i] = reg_agent(rsp.fd, &classes[i], 1);
		if (agent[i] < 0) {
			fprintf(stderr, "%s: cannot register\n",
				classes[i].name);
			return 2;
		}
	}
	buf = alloc_umad();
	reply = alloc_umad();
	if (count < 0)	/* one client run with the same -s and -M */
		count = nc * sizes_wanted() + 1;
	printf("# serving %d requests\n", count);
	fflush(stdout);
	while (served < count) {
		const struct umad_hdr *h;
		char why[128] = "";
		uint32_t size = 0;
		int ret;

		pfd.fd = rsp.fd;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, secs * 1000) <= 0) {
			fprintf(stderr, "idle for %d s after %d requests\n",
				secs, served);
			return 1;
		}
		/* Peek at the class to pick the agent that answers. */
		ret = recv_mad(rsp.fd, buf, 0);
		if (ret < 0) {
			fprintf(stderr, "receive after %d requests: %s\n",
				served, strerror(-ret));
			return 1;
		}
		h = (const struct umad_hdr *)umad_get_mad(buf);
		for (i = 0; i < nc; i++)
			if (classes[i].mgmt_class == h->mgmt_class)
				break;
		if (i == nc)
			continue;
		if (answer(rsp.fd, agent[i], &classes[i], buf, ret, reply,
			   &size, why, sizeof(why))) {
			fprintf(stderr, "%s: request %d: %s\n", classes[i].name,
				served + 1, why);
			return 1;
		}
		served++;
		/* A client that lost a request still ends the run with this. */
		if (ntohs(h->attr_id) == ATTR_CLOSE && served < count) {
			fprintf(stderr,
				"closing request came after %d of %d requests\n",
				served, count);
			return 1;
		}
	}
	printf("# served %d requests intact\n", served);
	fflush(stdout);
	return linger_on_close(rsp.fd, agent[0], buf, reply);
}

int main(int argc, char **argv)
{
	const char *dev = NULL;
	int portnum = 1, gid_index = 0, count = -1, secs = 120, opt;

	while ((opt = getopt(argc, argv, "d:p:g:c:w:s:M:l:")) != -1) {
		switch (opt) {
		case 'd':
			dev = optarg;
			break;
		case 'p':
			portnum = atoi(optarg);
			break;
		case 'g':
			gid_index = atoi(optarg);
			break;
		case 'c':
			count = atoi(optarg);
			break;
		case 'w':
			secs = atoi(optarg);
			break;
		case 's':
			only_size = strtoul(optarg, NULL, 0);
			break;
		case 'M':
			max_size = strtoul(optarg, NULL, 0);
			break;
		case 'l':
			req_dlid = strtoul(optarg, NULL, 0);
			break;
		default:
			usage();
		}
	}
	if (optind >= argc || !dev)
		usage();
	if (umad_init() < 0) {
		fprintf(stderr, "umad_init failed\n");
		return 2;
	}
	if (!strcmp(argv[optind], "loop"))
		return run_loop_or_client(dev, portnum, gid_index, NULL);
	if (!strcmp(argv[optind], "client") && optind + 1 < argc)
		return run_loop_or_client(dev, portnum, gid_index,
					  argv[optind + 1]);
	if (!strcmp(argv[optind], "bench") && optind + 1 < argc && only_size &&
	    only_size <= MAX_PAYLOAD)
		return run_bench(dev, portnum, gid_index, only_size,
				 atoi(argv[optind + 1]));
	if (!strcmp(argv[optind], "serve"))
		return run_serve(dev, portnum, count, secs);
	usage();
	return 2;
}
