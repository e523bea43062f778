// SPDX-License-Identifier: GPL-2.0
/*
 * scatter_io - write a block device from a discontiguous user buffer and
 * read it back into another one, comparing every byte.
 *
 *   scatter_io [-b] DEVICE OFFSET LENGTH
 *
 * The LENGTH bytes written at OFFSET (both multiples of 512) come from an
 * iovec of pieces of 512 B to 12 KiB (multiples of 512, many not whole
 * pages) that lie at 512-byte aligned offsets in a large mapping, out of
 * order and with holes between them, written with pwritev() in batches of
 * at most IOV_MAX entries.  They are read back with preadv() into a second
 * layout, different from the first, and compared with what was written.
 *
 * By default both directions use O_DIRECT, so the kernel builds the SCSI
 * commands' scatterlists from the user pages themselves.  With -b the
 * writes are buffered and followed by fsync(), the page cache is dropped
 * (BLKFLSBUF, or POSIX_FADV_DONTNEED for a regular file) and the reads are
 * buffered too.
 *
 * Exit status: 0 if the data read equals the data written, 1 on a
 * mismatch or an I/O error, 2 on usage errors.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

#define SLOT		(16 * 1024)	/* room for the largest piece */

struct layout {
	struct iovec *iov;
	size_t n;
	unsigned char *pool;
	size_t pool_len;
};

static uint64_t rng_state;

static uint64_t rng(void)
{
	/* xorshift64 */
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/*
 * Cut @len bytes into pieces whose sizes follow @sizes from @shift on and
 * place piece i in slot perm[i] of the pool at a 512-byte aligned offset.
 */
static int make_layout(struct layout *l, size_t len, unsigned int shift,
		       uint64_t seed)
{
	static const size_t sizes[] = {
		4096, 512, 1536, 8192, 3584, 12288, 2048, 4096, 1024, 7680,
	};
	const size_t nsizes = ARRAY_SIZE(sizes);
	size_t done = 0, i, *perm;

	/* At most one piece per 512 bytes. */
	l->iov = calloc(len / 512 + 1, sizeof(*l->iov));
	if (!l->iov)
		return -1;
	for (l->n = 0; done < len; l->n++) {
		size_t sz = sizes[(l->n + shift) % nsizes];

		if (sz > len - done)
			sz = len - done;
		l->iov[l->n].iov_len = sz;
		done += sz;
	}

	l->pool_len = l->n * SLOT;
	l->pool = mmap(NULL, l->pool_len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (l->pool == MAP_FAILED)
		return -1;

	perm = malloc(l->n * sizeof(*perm));
	if (!perm)
		return -1;
	for (i = 0; i < l->n; i++)
		perm[i] = i;
	rng_state = seed;
	for (i = l->n - 1; i > 0; i--) {
		size_t j = rng() % (i + 1), t = perm[i];

		perm[i] = perm[j];
		perm[j] = t;
	}
	for (i = 0; i < l->n; i++) {
		size_t room = (SLOT - l->iov[i].iov_len) / 512;
		size_t off = (rng() % (room + 1)) * 512;

		l->iov[i].iov_base = l->pool + perm[i] * SLOT + off;
	}
	free(perm);
	return 0;
}

/* pwritev() or preadv() the whole layout, IOV_MAX entries at a time. */
static int xfer(int fd, struct layout *l, off_t off, int write)
{
	size_t i = 0;

	while (i < l->n) {
		int cnt = l->n - i > IOV_MAX ? IOV_MAX : l->n - i;
		size_t want = 0;
		ssize_t r;
		int k;

		for (k = 0; k < cnt; k++)
			want += l->iov[i + k].iov_len;
		r = write ? pwritev(fd, l->iov + i, cnt, off) :
			    preadv(fd, l->iov + i, cnt, off);
		if (r < 0) {
			fprintf(stderr, "%s at %lld (%d iovecs): %s\n",
				write ? "pwritev" : "preadv", (long long)off,
				cnt, strerror(errno));
			return -1;
		}
		if ((size_t)r != want) {
			fprintf(stderr, "%s at %lld: %zd of %zu bytes\n",
				write ? "pwritev" : "preadv", (long long)off,
				r, want);
			return -1;
		}
		off += r;
		i += cnt;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct layout wl, rl;
	unsigned char *expect;
	int buffered = 0, fd, flags;
	size_t len, i, pos;
	off_t off;

	if (argc == 5 && !strcmp(argv[1], "-b")) {
		buffered = 1;
		argv++;
		argc--;
	}
	if (argc != 4) {
		fprintf(stderr, "usage: scatter_io [-b] DEVICE OFFSET LENGTH\n");
		return 2;
	}
	off = strtoll(argv[2], NULL, 0);
	len = strtoull(argv[3], NULL, 0);
	if (!len || len % 512 || off % 512) {
		fprintf(stderr, "OFFSET and LENGTH must be multiples of 512\n");
		return 2;
	}

	expect = malloc(len);
	if (!expect || make_layout(&wl, len, 0, 0x5eed1234abcdULL + len) ||
	    make_layout(&rl, len, 3, 0x0ddba11cafeULL + len)) {
		perror("scatter_io: setting up buffers");
		return 2;
	}
	rng_state = 0x9e3779b97f4a7c15ULL ^ (uint64_t)off ^ getpid();
	for (i = 0; i < len; i += 8) {
		uint64_t v = rng();

		memcpy(expect + i, &v, 8);
	}
	for (i = 0, pos = 0; i < wl.n; pos += wl.iov[i].iov_len, i++)
		memcpy(wl.iov[i].iov_base, expect + pos, wl.iov[i].iov_len);
	/* Poison the read buffers so short transfers cannot go unnoticed. */
	memset(rl.pool, 0xa5, rl.pool_len);

	flags = O_RDWR | (buffered ? 0 : O_DIRECT);
	fd = open(argv[1], flags);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	printf("%s %zu bytes at %lld: %zu write pieces, %zu read pieces\n",
	       buffered ? "buffered" : "O_DIRECT", len, (long long)off, wl.n,
	       rl.n);
	if (xfer(fd, &wl, off, 1))
		return 1;
	if (buffered) {
		int r = 0;

		if (fsync(fd)) {
			perror("fsync");
			return 1;
		}
		if (ioctl(fd, BLKFLSBUF, 0))
			r = errno != ENOTTY ? errno :
			    posix_fadvise(fd, off, len, POSIX_FADV_DONTNEED);
		if (r) {
			fprintf(stderr, "dropping the page cache: %s\n",
				strerror(r));
			return 1;
		}
	}
	if (xfer(fd, &rl, off, 0))
		return 1;
	close(fd);

	for (i = 0, pos = 0; i < rl.n; pos += rl.iov[i].iov_len, i++) {
		if (memcmp(rl.iov[i].iov_base, expect + pos,
			   rl.iov[i].iov_len)) {
			size_t k = 0;

			while (((unsigned char *)rl.iov[i].iov_base)[k] ==
			       expect[pos + k])
				k++;
			fprintf(stderr, "mismatch at byte %zu (piece %zu of %zu bytes)\n",
				pos + k, i, rl.iov[i].iov_len);
			return 1;
		}
	}
	printf("%zu bytes identical\n", len);
	return 0;
}
