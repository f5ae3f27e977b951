// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A control for `bench disk`: the smallest program that does the same I/O,
 * written apart from the agent. One O_TMPFILE opened with O_DIRECT in DIR,
 * filled with sequential writes of REC bytes and fsync'd (untimed unless
 * "write" is asked for), then each TEST as one timed pass of pread/pwrite of
 * REC bytes from one page-aligned buffer of random data; the random tests
 * visit every record once in a shuffled order, and the write tests fsync
 * inside the timed region (iozone -e). Nothing else runs per request: no
 * clock reads, no statistics.
 *
 * It is not the reference (fio is); it tells what the device
 * gives a program that adds nothing of its own per request, so that a gap
 * between bench disk and fio can be put on one side or the other. Under
 * emulation (TCG) whatever a tool does around each request weighs far more
 * than on hardware.
 *
 * A direct request reaches the device as one segment per physically
 * contiguous run of its buffer, and under virtio a 1 MiB request in a few
 * runs or in 256 moves the figure by half. Which pages a buffer gets depends
 * on what the process (and the system) allocated just before: pages taken
 * while the allocator's per-CPU lists still hold recently freed ones are
 * scattered, those from a fresh batch are not. DRAIN_BYTES (optional) faults
 * in that much other memory right before the buffer and unmaps it after, as
 * fio's own start-up does before it allocates its buffers; the output gives
 * the buffer's runs either way, so that a gap can be told apart from the
 * I/O path.
 *
 * Usage: ioref DIR SIZE_BYTES REC_BYTES TEST[,TEST...] [DRAIN_BYTES]
 *   TEST: write, read, randread, randwrite -> one JSON line on stdout,
 *   {"randread": BYTES_PER_SECOND, ..., "buffer_runs": N}, N being the
 *   buffer's physically contiguous runs per /proc/self/pagemap, or null
 *   where the kernel hides frame numbers (without CAP_SYS_ADMIN).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* xorshift64: the payload and the shuffle, from a fixed seed */
static uint64_t next(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static int pass(int fd, int is_write, unsigned char *buf, size_t rec, const size_t *order, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		off_t off = (off_t)((order != NULL ? order[i] : i) * rec);
		ssize_t got = is_write ? pwrite(fd, buf, rec, off) : pread(fd, buf, rec, off);

		if (got != (ssize_t)rec) {
			fprintf(stderr, "ioref: %s of %zu bytes at %lld: %s\n",
			        is_write ? "pwrite" : "pread", rec, (long long)off,
			        got < 0 ? strerror(errno) : "short transfer");
			return -1;
		}
	}
	if (is_write && fsync(fd) != 0) {
		fprintf(stderr, "ioref: fsync: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

/* Physically contiguous runs of [buf, buf + len), or -1 when unknown. */
static long buffer_runs(const unsigned char *buf, size_t len)
{
	long runs = 0;
	uint64_t prev = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY);

	if (fd < 0)
		return -1;
	for (size_t off = 0; off < len; off += 4096) {
		uint64_t e = 0, pfn;

		if (pread(fd, &e, sizeof(e), (off_t)(((uintptr_t)buf + off) / 4096 * sizeof(e))) !=
		    (ssize_t)sizeof(e)) {
			runs = -1;
			break;
		}
		pfn = e & ((UINT64_C(1) << 55) - 1);
		if (!(e >> 63) || pfn == 0) {
			runs = -1;
			break;
		}
		if (off == 0 || pfn != prev + 1)
			runs++;
		prev = pfn;
	}
	close(fd);
	return runs;
}

/* A whole decimal number into *v; 0 after a message naming what is wrong. */
static int parse_bytes(const char *what, const char *text, unsigned long long *v)
{
	char *end = NULL;

	errno = 0;
	*v = strtoull(text, &end, 10);
	/* strtoull would also take leading blanks and a sign, "-1" wrapping around */
	if (text[0] < '0' || text[0] > '9' || errno != 0 || *end != '\0') {
		fprintf(stderr, "ioref: %s must be a number of bytes, not \"%s\"\n", what, text);
		return 0;
	}
	return 1;
}

int main(int argc, char **argv)
{
	static const char *const names[] = { "write", "read", "randread", "randwrite" };
	unsigned long long size, rec, drain = 0;
	unsigned char *slack = MAP_FAILED;
	long runs;
	size_t n, *order;
	unsigned char *buf;
	uint64_t x = 0x9e3779b97f4a7c15ull;
	const char *sep = "";
	int fd, want[4] = { 0 };
	char *list, *tok, *save = NULL;

	if (argc != 5 && argc != 6) {
		fprintf(stderr,
		        "usage: ioref DIR SIZE_BYTES REC_BYTES TEST[,TEST...] [DRAIN_BYTES]\n");
		return 2;
	}
	if (!parse_bytes("SIZE_BYTES", argv[2], &size) ||
	    !parse_bytes("REC_BYTES", argv[3], &rec) ||
	    (argc == 6 && !parse_bytes("DRAIN_BYTES", argv[5], &drain)))
		return 2;
	if (rec < 4096 || rec % 4096 != 0 || size < rec || size % rec != 0) {
		fprintf(stderr,
		        "ioref: REC must be a multiple of 4096 and SIZE a multiple of REC\n");
		return 2;
	}
	list = strdup(argv[4]);
	for (tok = strtok_r(list, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		size_t t = 0;

		while (t < 4 && strcmp(tok, names[t]) != 0)
			t++;
		if (t == 4) {
			fprintf(stderr, "ioref: unknown test %s\n", tok);
			return 2;
		}
		want[t] = 1;
	}
	free(list);

	fd = open(argv[1], O_TMPFILE | O_RDWR | O_DIRECT, 0600);
	if (fd < 0) {
		fprintf(stderr, "ioref: O_TMPFILE|O_DIRECT in %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	if (drain > 0) {
		slack =
		    mmap(NULL, drain, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (slack == MAP_FAILED) {
			fprintf(stderr, "ioref: mmap of %llu bytes: %s\n", drain, strerror(errno));
			return 1;
		}
		/* 4 KiB pages: it is the per-CPU lists of single pages it must use up */
		(void)madvise(slack, drain, MADV_NOHUGEPAGE);
		for (size_t i = 0; i < drain; i += 4096)
			slack[i] = 1;
	}
	if (posix_memalign((void **)&buf, 4096, rec) != 0)
		return 1;
	n = size / rec;
	order = malloc(n * sizeof(*order));
	if (order == NULL)
		return 1;
	for (size_t i = 0; i < n; i++)
		order[i] = i;
	/* incompressible data, as bench disk and fio write */
	for (size_t i = 0; i < rec; i += sizeof(x)) {
		uint64_t v = next(&x);

		memcpy(buf + i, &v, sizeof(v));
	}
	runs = buffer_runs(buf, rec);
	if (slack != MAP_FAILED)
		munmap(slack, drain);
	/* Fisher-Yates: every record once */
	for (size_t i = n; i > 1; i--) {
		size_t j = (size_t)(next(&x) % i), tmp;

		tmp = order[i - 1];
		order[i - 1] = order[j];
		order[j] = tmp;
	}

	printf("{");
	for (size_t t = 0; t < 4; t++) {
		int is_write = t == 0 || t == 3;
		double t0;

		if (!want[t] && t != 0)
			continue;
		t0 = now_s();
		if (pass(fd, is_write, buf, rec, t >= 2 ? order : NULL, n) != 0)
			return 1;
		if (want[t]) {
			printf("%s\"%s\": %.0f", sep, names[t], (double)size / (now_s() - t0));
			sep = ", ";
		}
	}
	if (runs >= 0)
		printf("%s\"buffer_runs\": %ld}\n", sep, runs);
	else
		printf("%s\"buffer_runs\": null}\n", sep);
	close(fd);
	return 0;
}
