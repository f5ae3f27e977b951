/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* The bench options' values: sizes, lists, counts and seconds, checked before any guest. */

/* Most entries a --sizes, --record or --tests list may have. */
#define CLI_BENCH_MAX_LIST 64

/*
 * A size in bytes: digits with an optional k, M or G (also K, m, g; binary
 * multiples: 4k = 4096, 1M = 1048576). Zero, junk, signs, spaces and values
 * over max are refused, naming what was given.
 */
gboolean cli_bench_parse_size(const char *text, guint64 max, guint64 *out, GError **error);
/* A comma-separated list of sizes (at most 64); a new GArray of guint64. */
gboolean cli_bench_parse_size_list(const char *text, guint64 max, GArray **out, GError **error);
/* A comma-separated list of words from allowed, each at most once. */
gboolean cli_bench_parse_word_list(const char *text, const char *const *allowed, GStrv *out,
                                   GError **error);
/* A whole number in min..max, for --runs, --threads, --streams, --omit. */
gboolean cli_bench_parse_uint(const char *option, const char *text, guint64 min, guint64 max,
                              guint64 *out, GError **error);
/* Seconds from min to max, for --seconds; max INFINITY: any finite number from min. */
gboolean cli_bench_parse_seconds(const char *text, double min, double max, double *out,
                                 GError **error);
/* JSON arrays of the parsed values, for the benchmark's params. */
JsonArray *cli_bench_sizes_to_json(GArray *sizes);
JsonArray *cli_bench_strv_to_json(GStrv strv);

/*
 * The longest a job may run, from what it asks for (test and the params sent to the
 * agent, defaults left out), so that a guest that keeps saying "running" cannot hold
 * the run forever. The rule: bound = 2 x work + CLI_BENCH_BOUND_MARGIN seconds, where
 * work is, per run (times runs):
 *   aes   block sizes x seconds (defaults 6 x 3 s);
 *   disk  record sizes x (tests, plus the untimed fill when write is not one) x size,
 *         at CLI_BENCH_BOUND_DISK_RATE (disk has no seconds; 1 MiB/s is far below any
 *         real disk, so the bound is generous: 30 min of work for the defaults);
 *   mem   page kinds x (GB_BENCH_MEM_SECONDS_PER_KIND + size at
 *         CLI_BENCH_BOUND_MEM_RATE, for the first touch and the chain of a big buffer);
 *   net   the agent's accept timeout (30 s) + omit + seconds.
 * rounded up to whole seconds. *work (may be NULL) gets the work in seconds.
 */
#define CLI_BENCH_BOUND_MARGIN 30.0
#define CLI_BENCH_BOUND_DISK_RATE (1024.0 * 1024.0)
#define CLI_BENCH_BOUND_MEM_RATE (64.0 * 1024.0 * 1024.0)
double cli_bench_job_bound(const char *test, JsonObject *params, double *work);

/*
 * The largest result a job can send, from what it asks for as above: the size
 * limit of its gb-bench-status replies, so that a guest costs memory in
 * proportion to its job. The rule: the facts it attaches (at most a
 * gb-get-facts reply) + CLI_BENCH_RESULT_OVERHEAD (parameters, version, known
 * answers, ...) + CLI_BENCH_RESULT_ENTRY_SIZE per entry, (runs + 1) times (the
 * runs and their aggregation), where the entries of a run are:
 *   aes   its block sizes (one sample each, about 100 bytes);
 *   disk  record sizes x 6 tests x 4 (about 300 bytes a record size and test);
 *   mem   page kinds x 16 (about 1.6 KiB a run for the three kinds);
 *   net   2 directions x (omit + seconds) intervals (about 45 bytes each) + 16;
 * never above cap (the session's).
 */
#define CLI_BENCH_RESULT_OVERHEAD (64 * 1024)
#define CLI_BENCH_RESULT_ENTRY_SIZE 512
gsize cli_bench_result_limit(const char *test, JsonObject *params, gsize cap);

G_END_DECLS
