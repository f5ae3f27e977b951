/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>

G_BEGIN_DECLS

typedef struct _CliApp CliApp;

/*
 * Makes text safe to print on a terminal: C0/C1 control characters, DEL,
 * bidirectional overrides and invalid UTF-8 become visible escapes (\n, \x1b,
 * \u202e), so a hostile guest cannot move the cursor or recolour the screen.
 */
char *cli_escape_terminal(const char *text);
/*
 * Bidirectional marks, embeddings, overrides and isolates (U+200E/F,
 * U+2028..U+202E, U+2066..U+2069): they print nothing but reorder the text
 * after them, so a guest could make "FAIL" read as "PASS". Both escapers
 * (this file's and the audit's cli_escape_text) escape them.
 */
gboolean cli_unichar_is_format_control(gunichar c);
/* Columns a string takes on a terminal (wide characters count two). */
gsize cli_text_width(const char *text);

/*
 * An aligned text table. Cells are escaped when added. A column whose header
 * is "STATUS" is coloured by value (ok/PASS green, error/FAIL red,
 * timeout/WARN yellow, NOTE blue) when rendered with colour.
 */
typedef struct _CliTable CliTable;

CliTable *cli_table_new(const char *first_header, ...) G_GNUC_NULL_TERMINATED;
void cli_table_free(CliTable *table);
/* Exactly as many cells as headers; NULL cells print as "". */
void cli_table_add_row(CliTable *table, const char *first_cell, ...);
void cli_table_add_rowv(CliTable *table, const char *const *cells);
guint cli_table_get_n_rows(const CliTable *table);
void cli_table_render(const CliTable *table, gboolean color, GString *out);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(CliTable, cli_table_free)

/* The --format json document (DESIGN.md "Contracts"), pretty-printed, trailing newline. */
GString *cli_output_render_json(CliApp *app);
/* The table: the command's render_table() or GUEST/STATUS/DETAIL. */
GString *cli_output_render_table(CliApp *app, gboolean color);
/* Whether table output gets colour, from --color, -o and whether stdout is a TTY. */
gboolean cli_output_use_color(CliApp *app);
/* Renders in the chosen format and writes to stdout or, atomically, to -o FILE. */
gboolean cli_output_write(CliApp *app, GError **error);
/* Writes doc to -o FILE (atomically: temp file + rename) or stdout. */
gboolean cli_output_write_doc(CliApp *app, GString *doc, GError **error);

G_END_DECLS
