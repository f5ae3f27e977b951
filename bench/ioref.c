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
 * It is not the reference of the issue (fio is); it tells what the device
 * gives a program that adds nothing of its own per request, so that a gap
 * between bench disk and fio can be put on one side or the other. Under
 * emulation (TCG) whatever a tool does around each request weighs far more
 * than on hardware.
 *
 * Usage: ioref DIR SIZE_BYTES REC_BYTES TEST[,TEST...]
 *   TEST: write, read, randread, randwrite -> one JSON line on stdout,
 *   {"randread": BYTES_PER_SECOND, ...}.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
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

int main(int argc, char **argv)
{
	static const char *const names[] = { "write", "read", "randread", "randwrite" };
	unsigned long long size, rec;
	size_t n, *order;
	unsigned char *buf;
	uint64_t x = 0x9e3779b97f4a7c15ull;
	const char *sep = "";
	int fd, want[4] = { 0 };
	char *list, *tok, *save = NULL;

	if (argc != 5) {
		fprintf(stderr, "usage: ioref DIR SIZE_BYTES REC_BYTES TEST[,TEST...]\n");
		return 2;
	}
	size = strtoull(argv[2], NULL, 0);
	rec = strtoull(argv[3], NULL, 0);
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
	printf("}\n");
	close(fd);
	return 0;
}
