/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * The limits of the benchmarks' parameters, one definition for both ends: the
 * host CLI checks a command line with them before it contacts any guest, and
 * the agent checks what arrives on the wire with them. What only the guest
 * knows (its max-bench-seconds and max-bench-file-size, free memory, free
 * scratch space, CPUs) the agent checks on its own.
 *
 * The checks fail with GB_ERROR_INVALID_ARGUMENT and a message that names the
 * value and the limit but not where it came from: the agent prefixes
 * "Parameter 'NAME': ", the CLI "--OPTION: ".
 */

#define GB_BENCH_MAX_RUNS 100
/* Every job first measures the guest's CPU load this long (the result's "idle"). */
#define GB_BENCH_IDLE_WINDOW_MS 1000
/* The largest max-bench-seconds an agent can be configured with (7 days). */
#define GB_BENCH_MAX_SECONDS (7 * 24 * 3600)

#define GB_BENCH_AES_MIN_SECONDS 0.1
#define GB_BENCH_AES_DEFAULT_SECONDS 3.0 /* openssl speed's SECONDS */
#define GB_BENCH_AES_MAX_SIZE (1024 * 1024)
#define GB_BENCH_AES_MAX_SIZES 16
/* 16, 64, 256, 1k, 8k, 16k: openssl speed's block sizes. */
extern const gint64 gb_bench_aes_default_sizes[6];
/* The agent also caps threads at the guest's CPU count. */
#define GB_BENCH_AES_MAX_THREADS 4096

#define GB_BENCH_DISK_DEFAULT_SIZE (G_GINT64_CONSTANT(100) * 1024 * 1024)
#define GB_BENCH_DISK_MIN_SIZE 4096
#define GB_BENCH_DISK_MIN_RECORD 512 /* record sizes are multiples of it */
#define GB_BENCH_DISK_MAX_RECORD (G_GINT64_CONSTANT(64) * 1024 * 1024)
#define GB_BENCH_DISK_MAX_RECORDS 16
/* 4k, 4M, 16M: small random I/O, large sequential I/O, and iozone's largest default record. */
extern const gint64 gb_bench_disk_default_records[3];

#define GB_BENCH_MEM_DEFAULT_SIZE (G_GINT64_CONSTANT(256) * 1024 * 1024)
#define GB_BENCH_MEM_MIN_SIZE (G_GINT64_CONSTANT(1) * 1024 * 1024)
#define GB_BENCH_MEM_PAGE 4096 /* sizes are multiples of it */
/* A generous guess of one page kind's duration at the default size (checked against
 * max-bench-seconds by the agent, and part of the CLI's bound of a job). */
#define GB_BENCH_MEM_SECONDS_PER_KIND 2

#define GB_BENCH_NET_MAX_STREAMS 64
#define GB_BENCH_NET_DEFAULT_SECONDS 10
#define GB_BENCH_NET_MIN_SECONDS 1
#define GB_BENCH_NET_DEFAULT_OMIT 1
#define GB_BENCH_NET_MAX_OMIT 60
/* Seconds to get every stream connected and started, per run. */
#define GB_BENCH_NET_DEFAULT_ACCEPT_TIMEOUT 30

/* "4k", "16M", "1G" for exact binary multiples, else the bytes ("1000"). */
char *gb_bench_format_size(guint64 bytes);

/* aes: 1..16 block sizes, each 1 byte..1M. */
gboolean gb_bench_check_aes_sizes(const gint64 *sizes, guint n_sizes, GError **error);
/* aes: seconds per block size, 0.1..GB_BENCH_MAX_SECONDS. */
gboolean gb_bench_check_aes_seconds(double seconds, GError **error);
/* disk: the file size, at least 4k. */
gboolean gb_bench_check_disk_size(gint64 size, GError **error);
/*
 * disk: 1..16 record sizes, each a multiple of 512 from 512 to 64M, none
 * twice, none larger than the file size (size_given: whether the user chose
 * it, for the message).
 */
gboolean gb_bench_check_disk_records(const gint64 *records, guint n_records, gint64 size,
                                     gboolean size_given, GError **error);
/* mem: the buffer size, at least 1M and a multiple of 4096. */
gboolean gb_bench_check_mem_size(gint64 size, GError **error);

G_END_DECLS
