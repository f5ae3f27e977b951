/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "analysis/audit.h"

G_BEGIN_DECLS

/*
 * Aligned text, one line per finding ("guest  LEVEL  RULE  subject  detail"),
 * the hint on an indented line below it. Guest-provided text is escaped.
 * ANSI colours only when color is TRUE.
 */
void cli_audit_render_table(GString *out, const char *guest, GPtrArray *findings, gboolean color);
/* CSV (RFC 4180 quoting, "\n" line ends): the header line, then one row per finding. */
void cli_audit_render_csv_header(GString *out);
void cli_audit_render_csv_rows(GString *out, const char *guest, GPtrArray *findings);
/* Rules in table order, then any other rule ids in the order first seen. */
void cli_audit_summary_render_table(CliAuditSummary *summary, GString *out);

G_END_DECLS
