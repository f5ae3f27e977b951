/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "analysis/compare.h"

G_BEGIN_DECLS

/*
 * One self-contained HTML page (also well-formed XML, so GMarkup can check
 * it): per metric a grouped bar chart in inline SVG, the compare table, then
 * the facts that explain the differences, one column per run. No script, no
 * external resource; everything from the documents is escaped. Every value
 * present in the comparison is exactly one <rect class="bar">.
 */
GString *cli_report_render_html(CliComparison *cmp);

/* The chart of rows [first, end) of cmp (one metric); public for tests. */
void cli_report_append_chart(GString *out, CliComparison *cmp, guint first, guint end);

G_END_DECLS
