/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "fleet/app.h"

G_BEGIN_DECLS

/* The bench and results commands (cmd-bench.c); their rows are in commands.c. */
#define CLI_BENCH_DESCRIPTION                                                           \
	"Runs one benchmark in every guest at once as an agent job: gb-bench-start,\n"  \
	"then gb-bench-status every 250 ms (live progress on a terminal); --timeout\n"  \
	"bounds each step, not the whole job. Ctrl-C cancels the jobs in the guests.\n" \
	"Sizes take k, M, G (binary: 4k = 4096). Each run is saved as its JSON\n"       \
	"document under $XDG_DATA_HOME/guestbench/results/ (see 'results').\n"          \
	"net: either --guest-listen [ADDR:]PORT --connect ADDR:PORT (the agent\n"       \
	"listens, the CLI connects to ADDR:PORT, e.g. a QEMU hostfwd port) or\n"        \
	"--host-listen ADDR:PORT [--guest-connect ADDR:PORT] (the CLI listens, the\n"   \
	"agent connects). With several guests, guest N (0-based, in target order)\n"    \
	"uses each given PORT + N."
#define CLI_RESULTS_DESCRIPTION                                                   \
	"Lists the runs saved under $XDG_DATA_HOME/guestbench/results/, oldest\n" \
	"first: the id (the file name without .json), date, command and guests."

extern const GOptionEntry cli_bench_entries[];

gboolean cli_bench_prepare(CliApp *app, GPtrArray *args, GError **error);
void cli_bench_start(CliGuest *guest, CliSession *session);
void cli_bench_cancel(CliGuest *guest, CliSession *session);
GString *cli_bench_render_text(CliApp *app, gboolean color);
GString *cli_bench_render_csv(CliApp *app);
GString *cli_bench_render_prom(CliApp *app);
void cli_bench_finished(CliApp *app);

gboolean cli_results_prepare(CliApp *app, GPtrArray *args, GError **error);
int cli_results_run(CliApp *app, GError **error);

/* ---- helpers, public for the unit tests ---------------------------------------------- */

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
/* A Prometheus label value, quoted, with backslash, double quote and newline escaped. */
void cli_bench_prom_append_value(GString *out, const char *value);
/* A valid Prometheus label name: anything outside [a-zA-Z0-9_] becomes '_'. */
char *cli_bench_prom_label_name(const char *name);

G_END_DECLS
