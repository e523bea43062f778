// SPDX-License-Identifier: GPL-2.0
/*
 * mad_bench - GET/GET_RESP rate through ib_umad with a fixed number of
 * requests outstanding.
 *
 * A responder process (vendor class 0x32 with an OUI, method GET) answers
 * every GET it receives; the requester keeps WINDOW GETs outstanding on its
 * own descriptor, sending a new one as each response or timeout comes
 * back.  Both sit on one port and reach each other's QP1 through the
 * port's own GID, so with rxe the MADs go through the whole MAD layer on
 * both sides, twice per exchange.  After a warm-up of one second the
 * requester counts for SECONDS and prints one line:
 *
 *   mad_bench window=W seconds=S answered=N timeouts=T rate=R
 *
 * rate is answered exchanges per second.  The exit status is non-zero if
 * nothing was answered or a call failed.
 *
 * With -D PEER (InfiniBand only), the responder sits on port PORT of
 * device PEER instead, and the requester addresses it by the LID of that
 * port, without a GRH: on ibdevsim the MADs then cross the fabric's
 * switches.
 *
 * Usage: mad_bench -d DEV [-D PEER] -p PORT -g GID_INDEX -w WINDOW -s SECONDS
 */

#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/umad.h>

#include "umad_common.h"

#define BENCH_CLASS		0x32
#define ATTR_BENCH		0xff30
#define WARMUP_MS		1000.0
#define REQ_TIMEOUT_MS		2000
#define REQ_RETRIES		2

static const uint8_t bench_oui[3] = { 0x00, 0x14, 0x05 };

struct msg {
	struct ib_user_mad umad;
	struct vendor_mad mad;
};

static const char *dev_name;
static const char *peer_name;
static uint16_t peer_lid;
static int port_num = 1;
static int gid_index;
static uint8_t port_gid[16];

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int open_agent(const char *dev, int serve_get, int *agent)
{
	long mask[4] = { 0 };
	int fd;

	fd = umad_open_port(dev, port_num);
	if (fd < 0) {
		fprintf(stderr, "umad_open_port %s/%d: %d\n", dev,
			port_num, fd);
		return -1;
	}
	if (serve_get)
		method_mask_set(mask, METHOD_GET);
	*agent = umad_register_oui(fd, BENCH_CLASS, 0, (uint8_t *)bench_oui,
				   serve_get ? mask : NULL);
	if (*agent < 0) {
		fprintf(stderr, "umad_register_oui: %d\n", *agent);
		umad_close_port(fd);
		return -1;
	}
	return fd;
}

/* Answer every GET until killed. */
static void serve(int fd, int agent)
{
	struct msg m;
	int len;

	for (;;) {
		len = MAD_SIZE;
		if (umad_recv(fd, &m, &len, -1) < 0)
			continue;
		if (m.mad.hdr.method != METHOD_GET)
			continue;
		m.umad.addr.qkey = htobe32(GSI_QKEY);
		m.mad.hdr.method = METHOD_GET_RESP;
		if (umad_send(fd, agent, &m, MAD_SIZE, 0, 0) < 0)
			fprintf(stderr, "responder: umad_send failed\n");
	}
}

static int send_get(int fd, int agent, uint64_t tid)
{
	struct msg m;

	memset(&m, 0, sizeof(m));
	mad_address(&m.umad.addr, 1, port_gid, gid_index);
	if (peer_name) {
		m.umad.addr.grh_present = 0;
		m.umad.addr.lid = htobe16(peer_lid);
	}
	m.mad.hdr.base_version = MGMT_BASE_VERSION;
	m.mad.hdr.mgmt_class = BENCH_CLASS;
	m.mad.hdr.class_version = 1;
	m.mad.hdr.method = METHOD_GET;
	m.mad.hdr.tid = htobe64(tid);
	m.mad.hdr.attr_id = htobe16(ATTR_BENCH);
	memcpy(m.mad.oui, bench_oui, 3);
	return umad_send(fd, agent, &m, MAD_SIZE, REQ_TIMEOUT_MS, REQ_RETRIES);
}

/*
 * Keep @window GETs outstanding for the warm-up and @seconds more; count
 * the answers and timeouts that come back in the measured part.
 */
static int request(int fd, int agent, int window, int seconds)
{
	double t0, start, end, t;
	long answered = 0, timeouts = 0;
	uint64_t tid = 1;
	struct msg m;
	int i, len;

	t0 = now_ms();
	start = t0 + WARMUP_MS;
	end = start + seconds * 1e3;
	for (i = 0; i < window; i++)
		if (send_get(fd, agent, tid++) < 0) {
			fprintf(stderr, "umad_send failed at %d\n", i);
			return 1;
		}
	for (;;) {
		len = MAD_SIZE;
		if (umad_recv(fd, &m, &len, REQ_TIMEOUT_MS * (REQ_RETRIES + 2)) < 0) {
			fprintf(stderr, "no completion for %d ms\n",
				REQ_TIMEOUT_MS * (REQ_RETRIES + 2));
			return 1;
		}
		t = now_ms();
		if (t >= end)
			break;
		if (t >= start) {
			if (m.umad.status == 0 &&
			    m.mad.hdr.method == METHOD_GET_RESP)
				answered++;
			else
				timeouts++;
		}
		if (send_get(fd, agent, tid++) < 0) {
			fprintf(stderr, "umad_send failed\n");
			return 1;
		}
	}
	printf("mad_bench window=%d seconds=%d answered=%ld timeouts=%ld rate=%.0f\n",
	       window, seconds, answered, timeouts,
	       answered / ((end - start) / 1e3));
	return answered ? 0 : 1;
}

int main(int argc, char **argv)
{
	int window = 1, seconds = 10;
	int rfd, ragent, qfd, qagent;
	pid_t child;
	int opt, ret;

	while ((opt = getopt(argc, argv, "d:D:p:g:w:s:")) != -1) {
		switch (opt) {
		case 'd':
			dev_name = optarg;
			break;
		case 'D':
			peer_name = optarg;
			break;
		case 'p':
			port_num = atoi(optarg);
			break;
		case 'g':
			gid_index = atoi(optarg);
			break;
		case 'w':
			window = atoi(optarg);
			break;
		case 's':
			seconds = atoi(optarg);
			break;
		default:
			fprintf(stderr,
				"usage: %s -d DEV [-D PEER] -p PORT -g GID_INDEX -w WINDOW -s SECONDS\n",
				argv[0]);
			return 2;
		}
	}
	if (!dev_name || window < 1 || seconds < 1) {
		fprintf(stderr, "%s: -d is required; -w and -s are positive\n",
			argv[0]);
		return 2;
	}
	if (umad_init() < 0 ||
	    read_port_gid(dev_name, port_num, gid_index, port_gid) < 0) {
		fprintf(stderr, "cannot read GID %d of %s/%d\n", gid_index,
			dev_name, port_num);
		return 1;
	}
	if (peer_name && read_port_lid(peer_name, port_num, &peer_lid) < 0) {
		fprintf(stderr, "%s/%d has no LID\n", peer_name, port_num);
		return 1;
	}
	rfd = open_agent(peer_name ? peer_name : dev_name, 1, &ragent);
	if (rfd < 0)
		return 1;
	child = fork();
	if (child < 0) {
		perror("fork");
		return 1;
	}
	if (!child) {
		serve(rfd, ragent);
		_exit(0);
	}
	qfd = open_agent(dev_name, 0, &qagent);
	ret = qfd < 0 ? 1 : request(qfd, qagent, window, seconds);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	if (qfd >= 0)
		umad_close_port(qfd);
	umad_close_port(rfd);
	return ret;
}
