/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "analysis/compare.h"

G_BEGIN_DECLS

/* "128.88 MB/s", "1.23 µs", "12.5 %": SI prefixes, the unit always shown. */
char *cli_compare_format_value(double value, const char *unit);
/* "1.94x" */
char *cli_compare_format_ratio(double ratio);
/* "+93.8%" from a ratio */
char *cli_compare_format_change(double ratio);
/* "host is 1.94x kvm64 at 16 KiB" */
char *cli_compare_row_sentence(CliComparison *cmp, guint row, guint column);

/*
 * What the reader must know before trusting the ratios (a side with runs = 1
 * has no noise estimate), one sentence each, naming columns by labels (NULL:
 * the columns' own labels).
 */
GPtrArray *cli_comparison_warnings(CliComparison *cmp, const char *const *labels);

/* Renderers: text (aligned tables), the JSON document, CSV (one line per row and column). */
GString *cli_comparison_render_text(CliComparison *cmp);
JsonNode *cli_comparison_to_json(CliComparison *cmp);
GString *cli_comparison_render_csv(CliComparison *cmp);

G_END_DECLS
