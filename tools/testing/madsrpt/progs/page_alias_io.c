// SPDX-License-Identifier: GPL-2.0
/*
 * page_alias_io - one O_DIRECT transfer whose scatterlist has exactly one
 * entry per page.
 *
 *   page_alias_io r|w DEVICE OFFSET PAGES
 *
 * The buffer is PAGES consecutive virtual pages that all map the same
 * page of a memfd.  Neighbouring pages of such a buffer are never
 * physically contiguous, so neither the block layer nor the initiator can
 * merge them: a read (r) or write (w) of PAGES pages at byte OFFSET of
 * DEVICE reaches the target as PAGES data descriptors when the initiator
 * does not register memory (ib_srp never_register=1).  A buffer from
 * malloc() cannot promise that: fresh pages are often handed out in
 * physical order, and a transfer of merged pages needs fewer descriptors.
 *
 * Exit status: 0 if the transfer moved every byte, 1 if it failed or was
 * short (the errno is printed), 2 on usage or setup errors.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long psz = sysconf(_SC_PAGESIZE);
	unsigned long pages, i;
	unsigned char *buf;
	long long off;
	ssize_t done;
	size_t len;
	int mfd, fd;
	char mode;

	if (argc != 5 || (strcmp(argv[1], "r") && strcmp(argv[1], "w"))) {
		fprintf(stderr, "usage: page_alias_io r|w DEVICE OFFSET PAGES\n");
		return 2;
	}
	mode = argv[1][0];
	off = strtoll(argv[3], NULL, 0);
	pages = strtoul(argv[4], NULL, 0);
	if (off < 0 || off % 512 || !pages || pages > 65536) {
		fprintf(stderr, "page_alias_io: bad OFFSET or PAGES\n");
		return 2;
	}
	len = pages * psz;

	mfd = memfd_create("page_alias_io", 0);
	if (mfd < 0 || ftruncate(mfd, psz)) {
		perror("page_alias_io: memfd");
		return 2;
	}
	/* Reserve the range, then put the one page at every slot of it. */
	buf = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED) {
		perror("page_alias_io: mmap");
		return 2;
	}
	for (i = 0; i < pages; i++) {
		if (mmap(buf + i * psz, psz, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED, mfd, 0) == MAP_FAILED) {
			perror("page_alias_io: mmap page");
			return 2;
		}
	}
	memset(buf, 0x5a, psz);

	fd = open(argv[2], (mode == 'r' ? O_RDONLY : O_WRONLY) | O_DIRECT);
	if (fd < 0) {
		perror(argv[2]);
		return 2;
	}
	if (mode == 'r')
		done = pread(fd, buf, len, off);
	else
		done = pwrite(fd, buf, len, off);
	if (done < 0) {
		printf("%s of %zu bytes failed: %s\n",
		       mode == 'r' ? "read" : "write", len, strerror(errno));
		return 1;
	}
	if ((size_t)done != len) {
		printf("%s of %zu bytes moved %zd\n",
		       mode == 'r' ? "read" : "write", len, done);
		return 1;
	}
	printf("%s of %zu bytes in %lu aliased pages done\n",
	       mode == 'r' ? "read" : "write", len, pages);
	close(fd);
	return 0;
}
