/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <math.h>
#include <stdarg.h>

#include "render/csv.h"
#include "render/escape.h"
#include "render/table.h"

#define CLI_COLOR_RED "\033[31m"
#define CLI_COLOR_GREEN "\033[32m"
#define CLI_COLOR_YELLOW "\033[33m"
#define CLI_COLOR_BLUE "\033[34m"
#define CLI_COLOR_RESET "\033[0m"

/*
 * Cells are kept as given: the text rendering escapes them, CSV escapes
 * controls (and invalid UTF-8) but keeps CR/LF, JSON makes them valid UTF-8
 * and the generator escapes the rest. So every format is drawn from the
 * same rows.
 */
struct _CliTable {
	GPtrArray *headers; /* char * */
	GArray *kinds;      /* CliColumnKind per column */
	GPtrArray *rows;    /* GPtrArray of char * */
};

static CliTable *cli_table_new_empty(void)
{
	CliTable *table = g_new0(CliTable, 1);
	table->headers = g_ptr_array_new_with_free_func(g_free);
	table->kinds = g_array_new(FALSE, TRUE, sizeof(CliColumnKind));
	table->rows = g_ptr_array_new_with_free_func((GDestroyNotify)g_ptr_array_unref);
	return table;
}

CliTable *cli_table_new(const char *first_header, ...)
{
	CliTable *table = cli_table_new_empty();
	va_list args;

	va_start(args, first_header);
	for (const char *h = first_header; h != NULL; h = va_arg(args, const char *))
		g_ptr_array_add(table->headers, g_strdup(h));
	va_end(args);
	g_array_set_size(table->kinds, table->headers->len);
	return table;
}

void cli_table_free(CliTable *table)
{
	if (table == NULL)
		return;
	g_ptr_array_unref(table->headers);
	g_array_unref(table->kinds);
	g_ptr_array_unref(table->rows);
	g_free(table);
}

void cli_table_add_rowv(CliTable *table, const char *const *cells)
{
	GPtrArray *row = g_ptr_array_new_with_free_func(g_free);

	for (guint i = 0; i < table->headers->len; i++)
		g_ptr_array_add(row, g_strdup(cells[i] != NULL ? cells[i] : ""));
	g_ptr_array_add(table->rows, row);
}

void cli_table_add_row(CliTable *table, const char *first_cell, ...)
{
	g_autofree const char **cells = g_new0(const char *, table->headers->len + 1);
	va_list args;

	va_start(args, first_cell);
	for (guint i = 0; i < table->headers->len; i++)
		cells[i] = i == 0 ? first_cell : va_arg(args, const char *);
	va_end(args);
	cli_table_add_rowv(table, cells);
}

guint cli_table_get_n_rows(const CliTable *table)
{
	return table->rows->len;
}

void cli_table_set_column_kind(CliTable *table, guint column, CliColumnKind kind)
{
	g_return_if_fail(column < table->kinds->len);
	g_array_index(table->kinds, CliColumnKind, column) = kind;
}

char *cli_table_header_key(const char *header)
{
	GString *key = g_string_new(NULL);

	/* "FAULT ns/4k" -> "fault_ns_4k": lower case, runs of anything else one '_' */
	for (const char *p = header; *p != '\0'; p++) {
		if (g_ascii_isalnum(*p))
			g_string_append_c(key, g_ascii_tolower(*p));
		else if (key->len > 0 && key->str[key->len - 1] != '_')
			g_string_append_c(key, '_');
	}
	while (key->len > 0 && key->str[key->len - 1] == '_')
		g_string_truncate(key, key->len - 1);
	return g_string_free(key, FALSE);
}

/*
 * The text table is for reading: a cell is at most CLI_TABLE_CELL_MAX columns
 * (the last one, which is not padded, CLI_TABLE_LAST_CELL_MAX), cut with an
 * ellipsis, so one long guest string cannot pad every row of the table to its
 * width. On a terminal every line is also cut to the terminal's width, so a
 * line never wraps into what would look like a row of its own. CSV and JSON
 * keep every value whole.
 */
static gsize cli_table_line_width = 0;

void cli_table_set_terminal_width(gsize columns)
{
	cli_table_line_width = columns;
}

char *cli_table_escape_cell(const char *text, gsize max)
{
	g_autofree char *escaped = cli_escape_terminal(text != NULL ? text : "");

	if (cli_text_width(escaped) <= max)
		return g_steal_pointer(&escaped);
	return cli_text_truncate(escaped, max);
}

/* Bytes of a colour sequence ("\033[...m") at p, 0 when there is none. */
static gsize cli_table_color_len(const char *p)
{
	gsize n = 2;

	if (p[0] != '\033' || p[1] != '[')
		return 0;
	while (p[n] != '\0' && (g_ascii_isdigit(p[n]) || p[n] == ';'))
		n++;
	return p[n] == 'm' ? n + 1 : 0;
}

void cli_table_end_line(GString *out, gsize start)
{
	gsize limit = cli_table_line_width;
	gsize used = 0;
	gsize cut = 0;
	gboolean colored = FALSE;

	if (limit == 0) {
		g_string_append_c(out, '\n');
		return;
	}
	for (const char *p = out->str + start; *p != '\0';) {
		gsize seq = cli_table_color_len(p);
		gunichar c;
		gsize w;

		if (seq > 0) {
			colored = TRUE;
			p += seq;
			continue;
		}
		c = g_utf8_get_char(p);
		w = g_unichar_iszerowidth(c) ? 0 : g_unichar_iswide(c) ? 2 : 1;
		/* one column stays free for the ellipsis */
		if (used + w <= limit - 1)
			cut = (gsize)(g_utf8_next_char(p) - out->str);
		used += w;
		if (used > limit) {
			g_string_truncate(out, cut);
			g_string_append(out, "\u2026");
			if (colored)
				g_string_append(out, CLI_COLOR_RESET);
			break;
		}
		p = g_utf8_next_char(p);
	}
	g_string_append_c(out, '\n');
}

static const char *cli_table_status_color(const char *value)
{
	if (g_strcmp0(value, "ok") == 0 || g_strcmp0(value, "PASS") == 0)
		return CLI_COLOR_GREEN;
	if (g_strcmp0(value, "error") == 0 || g_strcmp0(value, "FAIL") == 0)
		return CLI_COLOR_RED;
	if (g_strcmp0(value, "timeout") == 0 || g_strcmp0(value, "busy") == 0 ||
	    g_strcmp0(value, "WARN") == 0)
		return CLI_COLOR_YELLOW;
	if (g_strcmp0(value, "NOTE") == 0)
		return CLI_COLOR_BLUE;
	return NULL;
}

static void cli_table_render_row(const CliTable *table, GPtrArray *cells, const gsize *widths,
                                 gint status_col, gboolean color, GString *out)
{
	guint last = cells->len - 1;
	gsize limit = cli_table_line_width;
	gsize used = 0;
	GString *line = g_string_new(NULL);

	for (guint i = 0; i < cells->len; i++) {
		const char *cell = g_ptr_array_index(cells, i);
		g_autofree char *cut = NULL;
		const char *col = NULL;
		gsize target;

		/* on a terminal, the cell that reaches its edge is the last one, cut */
		if (limit > 0 && used + cli_text_width(cell) > limit) {
			cut = cli_text_truncate(cell, used < limit ? limit - used : 0);
			cell = cut;
		}
		if (color && (gint)i == status_col)
			col = cli_table_status_color(cell);
		if (col != NULL)
			g_string_append(line, col);
		g_string_append(line, cell);
		if (col != NULL)
			g_string_append(line, CLI_COLOR_RESET);
		used += cli_text_width(cell);
		if (cut != NULL || i == last)
			break;
		/* padding stops one column short of the edge: room for the next cell's "…" */
		target = used + (widths[i] + 2 - MIN(widths[i], cli_text_width(cell)));
		if (limit > 0)
			target = MIN(target, MAX(used, limit - 1));
		for (; used < target; used++)
			g_string_append_c(line, ' ');
	}
	/* empty trailing cells would leave padding behind */
	while (line->len > 0 && line->str[line->len - 1] == ' ')
		g_string_truncate(line, line->len - 1);
	g_string_append_c(line, '\n');
	g_string_append(out, line->str);
	g_string_free(line, TRUE);
}

static GPtrArray *cli_table_escape_row(GPtrArray *cells)
{
	GPtrArray *row = g_ptr_array_new_with_free_func(g_free);

	for (guint i = 0; i < cells->len; i++) {
		gsize max = i + 1 < cells->len ? CLI_TABLE_CELL_MAX : CLI_TABLE_LAST_CELL_MAX;

		g_ptr_array_add(row, cli_table_escape_cell(g_ptr_array_index(cells, i), max));
	}
	return row;
}

void cli_table_render(const CliTable *table, gboolean color, GString *out)
{
	g_autofree gsize *widths = g_new0(gsize, table->headers->len);
	g_autoptr(GPtrArray) headers = cli_table_escape_row(table->headers);
	g_autoptr(GPtrArray) rows =
	    g_ptr_array_new_with_free_func((GDestroyNotify)g_ptr_array_unref);
	gint status_col = -1;

	for (guint i = 0; i < headers->len; i++) {
		const char *header = g_ptr_array_index(headers, i);
		widths[i] = cli_text_width(header);
		if (g_strcmp0(header, "STATUS") == 0)
			status_col = i;
	}
	for (guint r = 0; r < table->rows->len; r++) {
		GPtrArray *row = cli_table_escape_row(g_ptr_array_index(table->rows, r));
		for (guint i = 0; i < row->len; i++)
			widths[i] = MAX(widths[i], cli_text_width(g_ptr_array_index(row, i)));
		g_ptr_array_add(rows, row);
	}
	cli_table_render_row(table, headers, widths, -1, FALSE, out);
	for (guint r = 0; r < rows->len; r++)
		cli_table_render_row(table, g_ptr_array_index(rows, r), widths, status_col, color,
		                     out);
}

/* Whether a cell is a finite number as our renderers print one (a formula is not). */
static gboolean cli_table_is_number(const char *cell)
{
	char *end = NULL;
	double number;

	if (cell == NULL || cell[0] == '\0' || g_ascii_isspace(cell[0]))
		return FALSE;
	number = g_ascii_strtod(cell, &end);
	return end != NULL && *end == '\0' && isfinite(number);
}

void cli_table_render_csv(const CliTable *table, GString *out)
{
	for (guint i = 0; i < table->headers->len; i++) {
		g_autofree char *key = cli_table_header_key(g_ptr_array_index(table->headers, i));
		if (i > 0)
			g_string_append_c(out, ',');
		cli_csv_append_field(out, key);
	}
	g_string_append_c(out, '\n');
	for (guint r = 0; r < table->rows->len; r++) {
		GPtrArray *row = g_ptr_array_index(table->rows, r);
		for (guint i = 0; i < row->len; i++) {
			const char *cell = g_ptr_array_index(row, i);

			if (i > 0)
				g_string_append_c(out, ',');
			/* our own numbers stay numbers ("-3.5"); any other cell is text */
			if (i < table->kinds->len &&
			    g_array_index(table->kinds, CliColumnKind, i) != CLI_COLUMN_TEXT &&
			    cli_table_is_number(cell))
				cli_csv_append_field(out, cell);
			else
				cli_csv_append_text(out, cell);
		}
		g_string_append_c(out, '\n');
	}
}

/* A cell of a numeric column as a JSON number; null when it holds none (e.g. "-"). */
static void cli_table_add_json_cell(JsonBuilder *builder, CliColumnKind kind, const char *cell)
{
	gint64 integer = 0;
	char *end = NULL;
	double number;
	g_autofree char *valid = NULL;

	switch (kind) {
	case CLI_COLUMN_INTEGER:
		if (g_ascii_string_to_signed(cell, 10, G_MININT64, G_MAXINT64, &integer, NULL))
			json_builder_add_int_value(builder, integer);
		else
			json_builder_add_null_value(builder);
		return;
	case CLI_COLUMN_NUMBER:
		if (cli_table_is_number(cell)) {
			number = g_ascii_strtod(cell, &end);
			json_builder_add_double_value(builder, number);
		} else {
			json_builder_add_null_value(builder);
		}
		return;
	case CLI_COLUMN_TEXT:
	default:
		valid = g_utf8_make_valid(cell, -1);
		json_builder_add_string_value(builder, valid);
		return;
	}
}

JsonNode *cli_table_to_json(const CliTable *table)
{
	g_autoptr(JsonBuilder) builder = json_builder_new();
	g_autoptr(GPtrArray) keys = g_ptr_array_new_with_free_func(g_free);

	for (guint i = 0; i < table->headers->len; i++)
		g_ptr_array_add(keys, cli_table_header_key(g_ptr_array_index(table->headers, i)));
	json_builder_begin_array(builder);
	for (guint r = 0; r < table->rows->len; r++) {
		GPtrArray *row = g_ptr_array_index(table->rows, r);

		json_builder_begin_object(builder);
		for (guint i = 0; i < row->len; i++) {
			json_builder_set_member_name(builder, g_ptr_array_index(keys, i));
			cli_table_add_json_cell(builder,
			                        g_array_index(table->kinds, CliColumnKind, i),
			                        g_ptr_array_index(row, i));
		}
		json_builder_end_object(builder);
	}
	json_builder_end_array(builder);
	return json_builder_get_root(builder);
}
