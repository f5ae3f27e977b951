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

G_END_DECLS
