// SPDX-License-Identifier: GPL-2.0
/*
 * umad_getresp - GET/GET_RESP exchanges through ib_umad over one port.
 *
 * A responder agent (vendor class 0x32 with an OUI, method GET) and
 * requester agents (registered for responses only) live on two umad file
 * descriptors, as two processes would. Checks, as TAP:
 *   - a GET is answered and the response carries the request's TID;
 *   - a GET to a class nobody serves is answered by the MAD layer with
 *     status "unsupported method/attribute";
 *   - a GET to a QP that does not exist times out after every retry;
 *   - a response to a retried GET (first copy ignored) completes it;
 *   - 50 outstanding GETs answered in reverse order each match once;
 *   - closing a descriptor with a GET outstanding cancels it promptly.
 *
 * Usage: umad_getresp -d DEV -p PORT -g GID_INDEX
 *        umad_getresp -d DEV -p PORT hold SECONDS   (keep an agent open)
 */

#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/umad.h>

#include "tap.h"
#include "umad_common.h"

#define CLASS_SERVED		0x32
#define CLASS_UNSERVED		0x33
#define STATUS_UNSUP_METHOD_ATTR	0x000c
#define ATTR_TEST		0xff20
#define NMANY			50

static const uint8_t test_oui[3] = { 0x00, 0x14, 0x05 };

static const char *dev_name;
static int port_num = 1;
static int gid_index;
static uint8_t port_gid[16];
struct msg {
	struct ib_user_mad umad;
	struct vendor_mad mad;
};

_Static_assert(sizeof(struct msg) == sizeof(struct ib_user_mad) + MAD_SIZE,
	       "a umad message is its header and the MAD");

static int open_port(void)
{
	int fd = umad_open_port(dev_name, port_num);

	if (fd < 0) {
		fprintf(stderr, "umad_open_port %s/%d: %d\n", dev_name,
			port_num, fd);
		exit(1);
	}
	return fd;
}

static int register_agent(int fd, uint8_t mgmt_class, int serve_get)
{
	long mask[4] = { 0 };
	int id;

	if (serve_get)
		method_mask_set(mask, METHOD_GET);
	id = umad_register_oui(fd, mgmt_class, 0, (uint8_t *)test_oui,
			       serve_get ? mask : NULL);
	if (id < 0) {
		fprintf(stderr, "umad_register_oui 0x%x: %d\n", mgmt_class, id);
		exit(1);
	}
	return id;
}

static int send_get(int fd, int agent, uint8_t mgmt_class, uint32_t tid,
		    uint32_t qpn, int timeout_ms, int retries)
{
	struct msg m;

	memset(&m, 0, sizeof(m));
	/* Our own port's QP @qpn, through the GID under test. */
	mad_address(&m.umad.addr, qpn, port_gid, gid_index);
	m.mad.hdr.base_version = MGMT_BASE_VERSION;
	m.mad.hdr.mgmt_class = mgmt_class;
	m.mad.hdr.class_version = 1;
	m.mad.hdr.method = METHOD_GET;
	m.mad.hdr.tid = htobe64(tid);
	m.mad.hdr.attr_id = htobe16(ATTR_TEST);
	memcpy(m.mad.oui, test_oui, 3);
	snprintf((char *)m.mad.data, sizeof(m.mad.data), "get %u", tid);
	return umad_send(fd, agent, &m, MAD_SIZE, timeout_ms, retries);
}

/* Receive one message; returns its length or -1 on timeout/error. */
static int recv_msg(int fd, struct msg *m, int timeout_ms)
{
	int len = MAD_SIZE;
	int ret;

	ret = umad_recv(fd, m, &len, timeout_ms);
	return ret < 0 ? -1 : len;
}

/* The responder answers a received GET with a GET_RESP. */
static int answer(int fd, int agent, const struct msg *req)
{
	struct msg m = *req;

	m.umad.addr.qkey = htobe32(GSI_QKEY);
	m.mad.hdr.method = METHOD_GET_RESP;
	snprintf((char *)m.mad.data, sizeof(m.mad.data), "resp %u",
		 (uint32_t)be64toh(req->mad.hdr.tid));
	return umad_send(fd, agent, &m, MAD_SIZE, 0, 0);
}

static int check_response(const struct msg *m, uint8_t mgmt_class,
			  uint32_t tid)
{
	return m->umad.status == 0 && m->mad.hdr.method == METHOD_GET_RESP &&
	       m->mad.hdr.mgmt_class == mgmt_class &&
	       (uint32_t)be64toh(m->mad.hdr.tid) == tid;
}

static void test_answered(int rfd, int ragent, int qfd, int qagent)
{
	struct msg m;
	int ok;

	ok = send_get(qfd, qagent, CLASS_SERVED, 0x1001, 1, 2000, 0) == 0 &&
	     recv_msg(rfd, &m, 3000) > 0 && m.mad.hdr.method == METHOD_GET &&
	     (uint32_t)be64toh(m.mad.hdr.tid) == 0x1001 &&
	     answer(rfd, ragent, &m) == 0 &&
	     recv_msg(qfd, &m, 3000) > 0 &&
	     check_response(&m, CLASS_SERVED, 0x1001) &&
	     !strcmp((char *)m.mad.data, "resp 4097");
	tap(ok, "GET answered, response matches the request's TID");
}

static void test_unsupported(int qfd, int qagent)
{
	struct msg m;
	int ok;

	ok = send_get(qfd, qagent, CLASS_UNSERVED, 0x2002, 1, 2000, 0) == 0 &&
	     recv_msg(qfd, &m, 3000) > 0 &&
	     check_response(&m, CLASS_UNSERVED, 0x2002) &&
	     be16toh(m.mad.hdr.status) == STATUS_UNSUP_METHOD_ATTR;
	tap(ok, "GET to an unserved class: unsupported method/attribute");
}

static void test_timeout(int qfd, int qagent)
{
	double t0 = now_ms(), dt;
	struct msg m;
	int ok;

	/* QP 0xabcde does not exist: nobody ever answers. */
	ok = send_get(qfd, qagent, CLASS_SERVED, 0x3003, 0xabcde, 200, 2) == 0 &&
	     recv_msg(qfd, &m, 5000) > 0;
	dt = now_ms() - t0;
	tap(ok && m.umad.status == ETIMEDOUT &&
	    (uint32_t)be64toh(m.mad.hdr.tid) == 0x3003,
	    "unanswered GET completes with ETIMEDOUT (status %u)",
	    ok ? m.umad.status : 0);
	tap(ok && dt >= 3 * 200 - 20 && dt < 4000,
	    "timeout came after 1 + 2 retries of 200 ms (%.0f ms)", dt);
}

static void test_retry_answered(int rfd, int ragent, int qfd, int qagent)
{
	double t0 = now_ms(), dt;
	struct msg m;
	int ok;

	ok = send_get(qfd, qagent, CLASS_SERVED, 0x4004, 1, 300, 3) == 0 &&
	     recv_msg(rfd, &m, 3000) > 0 &&		/* first copy: ignored */
	     recv_msg(rfd, &m, 3000) > 0 &&		/* the retry */
	     (uint32_t)be64toh(m.mad.hdr.tid) == 0x4004 &&
	     answer(rfd, ragent, &m) == 0 &&
	     recv_msg(qfd, &m, 3000) > 0 &&
	     check_response(&m, CLASS_SERVED, 0x4004);
	dt = now_ms() - t0;
	tap(ok && dt >= 280, "response to the retried GET completes it (%.0f ms)",
	    dt);
	/* No timeout report follows for it. */
	tap(recv_msg(qfd, &m, 1500) < 0, "no further completion for that GET");
}

static void test_many(int rfd, int ragent, int qfd, int qagent)
{
	static struct msg reqs[NMANY];
	int seen[NMANY] = { 0 };
	int i, got = 0, bad = 0;
	struct msg m;

	for (i = 0; i < NMANY; i++)
		if (send_get(qfd, qagent, CLASS_SERVED, 0x5000 + i, 1, 5000, 0))
			bad++;
	for (i = 0; i < NMANY && !bad; i++)
		if (recv_msg(rfd, &reqs[i], 3000) < 0)
			bad++;
	for (i = NMANY - 1; i >= 0 && !bad; i--)
		if (answer(rfd, ragent, &reqs[i]))
			bad++;
	while (!bad && got < NMANY && recv_msg(qfd, &m, 3000) > 0) {
		uint32_t tid = be64toh(m.mad.hdr.tid);

		if (m.umad.status || tid < 0x5000 || tid >= 0x5000 + NMANY ||
		    seen[tid - 0x5000]++)
			bad++;
		got++;
	}
	tap(!bad && got == NMANY,
	    "%d outstanding GETs answered in reverse order each match once (%d)",
	    NMANY, got);
}

static void test_cancel_on_close(void)
{
	int fd = open_port(), agent = register_agent(fd, CLASS_SERVED, 0);
	double t0;
	int ok;

	/* Nobody answers; a 60 s timeout is pending when we close. */
	ok = send_get(fd, agent, CLASS_SERVED, 0x6006, 0xabcde, 60000, 5) == 0;
	usleep(100000);
	t0 = now_ms();
	umad_close_port(fd);
	tap(ok && now_ms() - t0 < 3000,
	    "closing with a GET outstanding cancels it (%.0f ms)",
	    now_ms() - t0);
}

int main(int argc, char **argv)
{
	int rfd, qfd, ragent, qagent, uagent, c, ret;

	while ((c = getopt(argc, argv, "d:p:g:")) != -1) {
		switch (c) {
		case 'd':
			dev_name = optarg;
			break;
		case 'p':
			port_num = atoi(optarg);
			break;
		case 'g':
			gid_index = atoi(optarg);
			break;
		default:
			return 2;
		}
	}
	if (!dev_name || umad_init() < 0)
		return 2;
	if (optind + 1 < argc && !strcmp(argv[optind], "hold")) {
		rfd = open_port();
		register_agent(rfd, CLASS_SERVED, 1);
		printf("holding\n");
		fflush(stdout);
		sleep(atoi(argv[optind + 1]));
		return 0;
	}
	ret = read_port_gid(dev_name, port_num, gid_index, port_gid);
	if (ret) {
		fprintf(stderr, SYSFS_GID_PATH ": %s\n", dev_name, port_num,
			gid_index, strerror(-ret));
		return 1;
	}

	rfd = open_port();
	qfd = open_port();
	ragent = register_agent(rfd, CLASS_SERVED, 1);
	qagent = register_agent(qfd, CLASS_SERVED, 0);
	uagent = register_agent(qfd, CLASS_UNSERVED, 0);

	printf("TAP version 13\n1..9\n");
	test_answered(rfd, ragent, qfd, qagent);
	test_unsupported(qfd, uagent);
	test_timeout(qfd, qagent);
	test_retry_answered(rfd, ragent, qfd, qagent);
	test_many(rfd, ragent, qfd, qagent);
	test_cancel_on_close();
	tap(umad_unregister(qfd, uagent) == 0 &&
	    umad_unregister(qfd, qagent) == 0 &&
	    umad_unregister(rfd, ragent) == 0 &&
	    umad_unregister(rfd, ragent) != 0,
	    "agents unregistered, a second unregister refused");
	umad_close_port(qfd);
	umad_close_port(rfd);
	return tap_failed ? 1 : 0;
}
