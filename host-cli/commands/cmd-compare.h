/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "fleet/app.h"

G_BEGIN_DECLS

/* The compare and report commands (cmd-compare.c: cli_cmd_compare, cli_cmd_report). */
#define CLI_COMPARE_DESCRIPTION                                                            \
	"Puts saved 'guestbench bench' documents of one test side by side: one row per\n"  \
	"metric and label set, one column per document (or, with --by guest, per guest\n"  \
	"of one document), then each column's ratio to the first and the change in %.\n"   \
	"FILE is a path or the id of a saved run (see 'results'). With runs > 1 a\n"       \
	"difference within run-to-run noise (Welch's t-test, p >= 0.05) is marked n.s.;\n" \
	"a side with runs = 1 has no noise estimate and is warned about. The geometric\n"  \
	"mean summarises headline metrics only (throughput; mem: page faults and\n"        \
	"bandwidth). Rows with no value on any side are left out; a value missing on\n"    \
	"one side shows as —. Long file names become A, B, ... (or --label a,b).\n"      \
	"Exit status 2 when a file cannot be read or is not a bench document, or the\n"    \
	"runs are of different tests."
#define CLI_REPORT_DESCRIPTION                                                          \
	"Writes one self-contained HTML page (inline CSS and SVG, no script, nothing\n" \
	"fetched): per metric a bar chart and the compare table, then the facts of\n"   \
	"each guest that explain the differences. HTML is its only format; use\n"       \
	"-o FILE to write it to a file. Same inputs and --by as 'compare'."

extern const GOptionEntry cli_compare_entries[];

gboolean cli_compare_prepare(CliApp *app, GPtrArray *args, GError **error);
int cli_compare_run(CliApp *app, GError **error);
gboolean cli_report_prepare(CliApp *app, GPtrArray *args, GError **error);
int cli_report_run(CliApp *app, GError **error);

G_END_DECLS
