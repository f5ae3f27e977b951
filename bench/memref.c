// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The reference for `bench mem`: a direct measurement written apart from the
 * agent. Page faults are counted by the kernel (getrusage ru_minflt) around a
 * first-touch loop, so the figure is time per fault the kernel says happened,
 * and also time per 4 KiB; bandwidth is a 64-bit load loop, libc memset in
 * 1 MiB pieces and libc memcpy, whole passes for at least 250 ms.
 *
 * Writes are memsets of 1 MiB, not one memset of the whole buffer: on this
 * AMD CPU a single rep stosb of 64 MiB or more skips the read-for-ownership
 * that ordinary stores pay and runs 1.4-2x faster (8-9 GB/s for memsets of up
 * to 32 MiB or a store loop, 12-17 GB/s for one memset of 64-256 MiB,
 * measured here). What programs write, and what bench mem measures, are
 * ordinary stores; a scalar store loop (gcc -O2) reads 10-20 % below memset.
 *
 * Usage: memref SIZE_BYTES 4k|thp   -> one JSON line on stdout.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>

#define WRITE_PIECE ((size_t)1 << 20)

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static long minflt(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

int main(int argc, char **argv)
{
	size_t size;
	int huge;
	unsigned char *buf;
	double t0, t1, elapsed, bw_read, bw_write, bw_copy;
	long f0, f1;
	volatile uint64_t sink = 0;
	size_t passes;

	if (argc != 3 || (strcmp(argv[2], "4k") != 0 && strcmp(argv[2], "thp") != 0)) {
		fprintf(stderr, "usage: memref SIZE_BYTES 4k|thp\n");
		return 2;
	}
	size = strtoull(argv[1], NULL, 0);
	if (size < (1 << 20) || size % 4096 != 0) {
		fprintf(stderr, "memref: SIZE must be >= 1 MiB and a multiple of 4096\n");
		return 2;
	}
	huge = strcmp(argv[2], "thp") == 0;
	buf = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED) {
		perror("memref: mmap");
		return 1;
	}
	if (madvise(buf, size, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE) != 0) {
		perror("memref: madvise");
		return 1;
	}

	/* first touch: one write per 4 KiB, the kernel counts the faults */
	f0 = minflt();
	t0 = now_ns();
	for (size_t off = 0; off < size; off += 4096)
		buf[off] = 1;
	t1 = now_ns();
	f1 = minflt();
	elapsed = t1 - t0;

	/* read: 64-bit loads over the whole buffer */
	passes = 0;
	t0 = now_ns();
	do {
		const uint64_t *p = (const uint64_t *)buf;
		uint64_t s = 0;
		for (size_t i = 0; i < size / 8; i++)
			s += p[i];
		sink += s;
		passes++;
		t1 = now_ns();
	} while (t1 - t0 < 250e6);
	bw_read = (double)size * (double)passes / ((t1 - t0) / 1e9);

	passes = 0;
	t0 = now_ns();
	do {
		for (size_t off = 0; off < size; off += WRITE_PIECE)
			memset(buf + off, (int)passes,
			       size - off < WRITE_PIECE ? size - off : WRITE_PIECE);
		passes++;
		t1 = now_ns();
	} while (t1 - t0 < 250e6);
	bw_write = (double)size * (double)passes / ((t1 - t0) / 1e9);

	/* copy: one half onto the other, bytes copied per second */
	passes = 0;
	t0 = now_ns();
	do {
		memcpy(buf + size / 2, buf, size / 2);
		passes++;
		t1 = now_ns();
	} while (t1 - t0 < 250e6);
	bw_copy = (double)(size / 2) * (double)passes / ((t1 - t0) / 1e9);

	printf("{\"faults\": %ld, \"fault_ns\": %.1f, \"per_4k_ns\": %.2f, \"read\": %.0f, "
	       "\"write\": %.0f, \"copy\": %.0f, \"sink\": %llu}\n",
	       f1 - f0, f1 > f0 ? elapsed / (double)(f1 - f0) : 0.0,
	       elapsed / (double)(size / 4096), bw_read, bw_write, bw_copy,
	       (unsigned long long)(sink & 1));
	munmap(buf, size);
	return 0;
}
