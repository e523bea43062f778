// SPDX-License-Identifier: GPL-2.0
/*
 * srp_resid - what a target writes into a read buffer larger than the
 * data the command returns.
 *
 *   srp_resid inquiry|read|stale DEVICE
 *
 * Each mode sends one SG_IO command with a 4 KiB data-in buffer filled
 * with a pattern, so that the initiator describes all 4 KiB to the target,
 * and checks the residual count and every byte of the buffer:
 *
 *   inquiry  INQUIRY with an allocation length of 36: 36 bytes come back,
 *            the residual is 4060 and the 4060 bytes after the response
 *            still hold the pattern;
 *   read     READ(10) of one 512-byte block (written first with O_DIRECT):
 *            the block comes back, the residual is 3584 and the rest of the
 *            buffer still holds the pattern;
 *   stale    eight times an O_DIRECT read of 64 KiB holding a second
 *            pattern, which leaves freed pages with known contents on the
 *            target,
 *            then an INQUIRY with an allocation length of 4096: every byte
 *            after the INQUIRY data the target reports is either zero or
 *            still the buffer's pattern, never the second pattern or other
 *            left overs of the target's memory.  Whether the target reuses
 *            those pages is up to its page allocator, so this can only
 *            catch a leak, not prove there is none.
 *
 * The device must use 512-byte logical blocks; "read" and "stale" write
 * blocks 0 to 135.  Exit status: 0 if the checks hold, 1 if not, 2 on usage
 * errors.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <scsi/sg.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define BUF_LEN		4096
#define BIG_LEN		(64 * 1024)
#define BLOCK		512
#define PATTERN		0xa5	/* fills the buffer before each command */
#define DISK_PATTERN	0x5a	/* what "stale" leaves in target memory */

struct result {
	int status;		/* SCSI status */
	int host_status;
	int driver_status;
	int resid;
};

/* Send a 6- or 10-byte data-in CDB with a BUF_LEN buffer. */
static int sg_read(int fd, const unsigned char *cdb, unsigned char cdb_len,
		   unsigned char *buf, struct result *r)
{
	unsigned char sense[32];
	struct sg_io_hdr h;

	memset(&h, 0, sizeof(h));
	h.interface_id = 'S';
	h.dxfer_direction = SG_DXFER_FROM_DEV;
	h.cmd_len = cdb_len;
	h.cmdp = (unsigned char *)cdb;
	h.dxfer_len = BUF_LEN;
	h.dxferp = buf;
	h.mx_sb_len = sizeof(sense);
	h.sbp = sense;
	h.timeout = 30000;
	if (ioctl(fd, SG_IO, &h) < 0) {
		perror("SG_IO");
		return -1;
	}
	r->status = h.status;
	r->host_status = h.host_status;
	r->driver_status = h.driver_status;
	r->resid = h.resid;
	if (h.status || h.host_status || h.driver_status) {
		printf("# status %#x host %#x driver %#x sense %02x/%02x/%02x\n",
		       h.status, h.host_status, h.driver_status,
		       h.sb_len_wr > 2 ? sense[2] & 0xf : 0,
		       h.sb_len_wr > 12 ? sense[12] : 0,
		       h.sb_len_wr > 13 ? sense[13] : 0);
		return -1;
	}
	return 0;
}

/* Report the first byte of buf[from..to) not equal to @val; 0 if none. */
static int check_fill(const unsigned char *buf, size_t from, size_t to,
		      unsigned char val)
{
	size_t i, bad = 0;

	for (i = from; i < to; i++)
		bad += buf[i] != val;
	for (i = from; i < to; i++) {
		if (buf[i] != val) {
			printf("# %zu of bytes %zu..%zu changed, first %zu: %#x not %#x\n",
			       bad, from, to - 1, i, buf[i], val);
			return 1;
		}
	}
	return 0;
}

static int check_resid(const struct result *r, int want)
{
	if (r->resid == want)
		return 0;
	printf("# residual %d, expected %d\n", r->resid, want);
	return 1;
}

static void read10_cdb(unsigned char *cdb, uint32_t lba, uint16_t blocks)
{
	memset(cdb, 0, 10);
	cdb[0] = 0x28;
	cdb[2] = lba >> 24;
	cdb[3] = lba >> 16;
	cdb[4] = lba >> 8;
	cdb[5] = lba;
	cdb[7] = blocks >> 8;
	cdb[8] = blocks;
}

/* Write @len bytes of @val at byte offset @off with O_DIRECT. */
static int write_blocks(const char *dev, unsigned char *buf, size_t len,
			off_t off, unsigned char val)
{
	int fd = open(dev, O_WRONLY | O_DIRECT);
	int ret = 0;

	if (fd < 0) {
		perror(dev);
		return -1;
	}
	memset(buf, val, len);
	if (pwrite(fd, buf, len, off) != (ssize_t)len) {
		perror("pwrite");
		ret = -1;
	}
	close(fd);
	return ret;
}

static int mode_inquiry(int fd, unsigned char *buf)
{
	static const unsigned char cdb[6] = { 0x12, 0, 0, 0, 36, 0 };
	struct result r;

	memset(buf, PATTERN, BUF_LEN);
	if (sg_read(fd, cdb, sizeof(cdb), buf, &r))
		return 1;
	return check_resid(&r, BUF_LEN - 36) |
	       check_fill(buf, 36, BUF_LEN, PATTERN);
}

static int mode_read(int fd, const char *dev, unsigned char *buf)
{
	unsigned char cdb[10];
	struct result r;
	int ret;

	if (write_blocks(dev, buf, BUF_LEN, 0, DISK_PATTERN))
		return 1;
	memset(buf, PATTERN, BUF_LEN);
	read10_cdb(cdb, 0, 1);
	if (sg_read(fd, cdb, sizeof(cdb), buf, &r))
		return 1;
	ret = check_resid(&r, BUF_LEN - BLOCK);
	ret |= check_fill(buf, 0, BLOCK, DISK_PATTERN);
	return ret | check_fill(buf, BLOCK, BUF_LEN, PATTERN);
}

/*
 * One read of BIG_LEN bytes of DISK_PATTERN through @dfd (O_DIRECT, so the
 * block layer cuts it to what the initiator accepts), then one INQUIRY.
 */
static int stale_round(int fd, int dfd, unsigned char *big,
		       unsigned char *buf)
{
	static const unsigned char inq[6] = { 0x12, 0, 0, BUF_LEN >> 8, 0, 0 };
	struct result r;
	size_t i, len;

	if (pread(dfd, big, BIG_LEN, 8 * BLOCK) != BIG_LEN) {
		perror("pread");
		return 1;
	}
	memset(buf, PATTERN, BUF_LEN);
	if (sg_read(fd, inq, sizeof(inq), buf, &r))
		return 1;
	/* Standard INQUIRY data: ADDITIONAL LENGTH in byte 4. */
	len = buf[4] + 5;
	if (check_resid(&r, BUF_LEN - len))
		return 1;
	for (i = len; i < BUF_LEN; i++) {
		if (buf[i] && buf[i] != PATTERN) {
			printf("# byte %zu after %zu bytes of INQUIRY data is %#x\n",
			       i, len, buf[i]);
			return 1;
		}
	}
	return 0;
}

static int mode_stale(int fd, const char *dev, unsigned char *buf)
{
	unsigned char *big;
	int dfd, i, ret = 0;

	if (posix_memalign((void **)&big, BUF_LEN, BIG_LEN))
		return 1;
	dfd = open(dev, O_RDONLY | O_DIRECT);
	if (dfd < 0) {
		perror(dev);
		free(big);
		return 1;
	}
	if (write_blocks(dev, big, BIG_LEN, 8 * BLOCK, DISK_PATTERN))
		ret = 1;
	for (i = 0; i < 8 && !ret; i++)
		ret = stale_round(fd, dfd, big, buf);
	close(dfd);
	free(big);
	return ret;
}

int main(int argc, char **argv)
{
	unsigned char *buf;
	int fd, ret;

	if (argc != 3) {
		fprintf(stderr, "usage: %s inquiry|read|stale DEVICE\n",
			argv[0]);
		return 2;
	}
	/* Page aligned, so the block layer maps it instead of copying. */
	if (posix_memalign((void **)&buf, BUF_LEN, BUF_LEN))
		return 2;
	fd = open(argv[2], O_RDONLY);
	if (fd < 0) {
		perror(argv[2]);
		return 2;
	}
	if (!strcmp(argv[1], "inquiry"))
		ret = mode_inquiry(fd, buf);
	else if (!strcmp(argv[1], "read"))
		ret = mode_read(fd, argv[2], buf);
	else if (!strcmp(argv[1], "stale"))
		ret = mode_stale(fd, argv[2], buf);
	else
		ret = 2;
	close(fd);
	free(buf);
	return ret;
}
