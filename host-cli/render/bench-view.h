/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <json-glib/json-glib.h>

#include "render/results.h"

G_BEGIN_DECLS

/*
 * The bench command's documents as tables (openssl speed's for aes, one
 * table per test for disk, mem, net), CSV and Prometheus. test is the
 * benchmark the results are of ("aes", "disk", "mem", "net").
 */
GString *cli_bench_view_render_text(const CliResults *results, const char *test, gboolean color);
GString *cli_bench_view_render_csv(const CliResults *results);
GString *cli_bench_view_render_prom(const CliResults *results);
/*
 * The text marks a guest NOT IDLE when its CPUs were busier than this (in % of all
 * ticks, steal included) over the second before its run (the result's "idle").
 */
#define CLI_BENCH_IDLE_MAX_BUSY 20.0

/* "4k", "1M", "16M", "512" (bytes): the shortest exact binary spelling. */
char *cli_bench_format_size(guint64 bytes);

/*
 * openssl speed's table: the header line ("type        " then "%7d bytes"
 * per size) and one row ("%-13s" then " %11.2fk", value / 1000, for values
 * over 10000 B/s; " %11.2f " otherwise). values in bytes per second; NAN
 * prints as "n/a" in the same width.
 */
void cli_bench_openssl_header(GString *out, const guint64 *sizes, guint n);
void cli_bench_openssl_row(GString *out, const char *type, const double *values, guint n);

/* Labels as "k=v;k=v" in member order; '\\', ';' and '=' in keys and values are escaped. */
char *cli_bench_labels_to_string(JsonObject *labels);
/* A Prometheus label value, quoted: made valid UTF-8, backslash, double quote, newline escaped. */
void cli_bench_prom_append_value(GString *out, const char *value);
/*
 * Whether a sample label of the agent's benchmarks is written as a Prometheus
 * label of that name; every other label goes into one "other_labels" value.
 */
gboolean cli_bench_prom_is_label(const char *name);

G_END_DECLS
