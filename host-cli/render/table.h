/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/*
 * A table of rows, drawn as aligned text, as CSV or as JSON from the same
 * rows. Cells are kept as given and escaped by each format: the text one
 * escapes terminal controls (render/escape.h), CSV controls except CR/LF,
 * JSON through the generator. In the text, a column whose header is
 * "STATUS" is coloured by value (ok/PASS green, error/FAIL red,
 * timeout/WARN yellow, NOTE blue) when rendered with colour.
 */
typedef struct _CliTable CliTable;

CliTable *cli_table_new(const char *first_header, ...) G_GNUC_NULL_TERMINATED;
void cli_table_free(CliTable *table);
/* Exactly as many cells as headers; NULL cells print as "". */
void cli_table_add_row(CliTable *table, const char *first_cell, ...);
void cli_table_add_rowv(CliTable *table, const char *const *cells);
guint cli_table_get_n_rows(const CliTable *table);
/*
 * Aligned text, escaped; a cell longer than 60 columns (the last one: 240) is
 * cut with "…", the full value staying in CSV and JSON.
 */
void cli_table_render(const CliTable *table, gboolean color, GString *out);
/*
 * Cuts every line of the text tables rendered from now on to columns (0: not
 * cut), so that on a terminal no line wraps into what would read as a row of
 * its own; set once, when the tables go to a terminal.
 */
void cli_table_set_terminal_width(gsize columns);

/*
 * For text views that draw their own lines (facts, audit, compare), the same
 * rules as the table's: a cell of guest text is at most CLI_TABLE_CELL_MAX
 * columns (a line's last one, CLI_TABLE_LAST_CELL_MAX), and every line is cut
 * to the terminal's width.
 */
#define CLI_TABLE_CELL_MAX 60
#define CLI_TABLE_LAST_CELL_MAX 240
/* text escaped for the terminal and cut to max columns with "…". */
char *cli_table_escape_cell(const char *text, gsize max);
/*
 * Ends the line that begins at byte start of out: on a terminal, cuts it to
 * the terminal's width with "…" (the CLI's colour sequences take no columns; a
 * cut line ends with a colour reset if it had any), then appends the newline.
 */
void cli_table_end_line(GString *out, gsize start);

/* What a column holds, for JSON: text (the default), a whole number, a number. */
typedef enum {
	CLI_COLUMN_TEXT,
	CLI_COLUMN_INTEGER,
	CLI_COLUMN_NUMBER,
} CliColumnKind;

void cli_table_set_column_kind(CliTable *table, guint column, CliColumnKind kind);
/* The header as a CSV column name and JSON member: "FAULT ns/4k" -> "fault_ns_4k". */
char *cli_table_header_key(const char *header);
/* A header line of the keys, then one line per row (RFC 4180 quoting). */
void cli_table_render_csv(const CliTable *table, GString *out);
/*
 * An array with one object per row, members named by the keys; cells of a
 * numeric column are numbers, or null when they hold none.
 */
JsonNode *cli_table_to_json(const CliTable *table);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(CliTable, cli_table_free)

G_END_DECLS
