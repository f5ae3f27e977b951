/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <stdarg.h>

#include "render/escape.h"
#include "render/table.h"

#define CLI_COLOR_RED "\033[31m"
#define CLI_COLOR_GREEN "\033[32m"
#define CLI_COLOR_YELLOW "\033[33m"
#define CLI_COLOR_BLUE "\033[34m"
#define CLI_COLOR_RESET "\033[0m"

struct _CliTable {
	GPtrArray *headers; /* char * */
	GPtrArray *rows;    /* GPtrArray of char *, escaped */
};

static CliTable *cli_table_new_empty(void)
{
	CliTable *table = g_new0(CliTable, 1);
	table->headers = g_ptr_array_new_with_free_func(g_free);
	table->rows = g_ptr_array_new_with_free_func((GDestroyNotify)g_ptr_array_unref);
	return table;
}

CliTable *cli_table_new(const char *first_header, ...)
{
	CliTable *table = cli_table_new_empty();
	va_list args;

	va_start(args, first_header);
	for (const char *h = first_header; h != NULL; h = va_arg(args, const char *))
		g_ptr_array_add(table->headers, cli_escape_terminal(h));
	va_end(args);
	return table;
}

void cli_table_free(CliTable *table)
{
	if (table == NULL)
		return;
	g_ptr_array_unref(table->headers);
	g_ptr_array_unref(table->rows);
	g_free(table);
}

void cli_table_add_rowv(CliTable *table, const char *const *cells)
{
	GPtrArray *row = g_ptr_array_new_with_free_func(g_free);

	for (guint i = 0; i < table->headers->len; i++)
		g_ptr_array_add(row, cli_escape_terminal(cells[i]));
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

static const char *cli_table_status_color(const char *value)
{
	if (g_strcmp0(value, "ok") == 0 || g_strcmp0(value, "PASS") == 0)
		return CLI_COLOR_GREEN;
	if (g_strcmp0(value, "error") == 0 || g_strcmp0(value, "FAIL") == 0)
		return CLI_COLOR_RED;
	if (g_strcmp0(value, "timeout") == 0 || g_strcmp0(value, "WARN") == 0)
		return CLI_COLOR_YELLOW;
	if (g_strcmp0(value, "NOTE") == 0)
		return CLI_COLOR_BLUE;
	return NULL;
}

static void cli_table_render_row(const CliTable *table, GPtrArray *cells, const gsize *widths,
                                 gint status_col, gboolean color, GString *out)
{
	guint last = cells->len - 1;
	GString *line = g_string_new(NULL);

	for (guint i = 0; i < cells->len; i++) {
		const char *cell = g_ptr_array_index(cells, i);
		const char *col = NULL;

		if (color && (gint)i == status_col)
			col = cli_table_status_color(cell);
		if (col != NULL)
			g_string_append(line, col);
		g_string_append(line, cell);
		if (col != NULL)
			g_string_append(line, CLI_COLOR_RESET);
		if (i < last) {
			for (gsize w = cli_text_width(cell); w < widths[i] + 2; w++)
				g_string_append_c(line, ' ');
		}
	}
	/* empty trailing cells would leave padding behind */
	while (line->len > 0 && line->str[line->len - 1] == ' ')
		g_string_truncate(line, line->len - 1);
	g_string_append_c(line, '\n');
	g_string_append(out, line->str);
	g_string_free(line, TRUE);
}

void cli_table_render(const CliTable *table, gboolean color, GString *out)
{
	g_autofree gsize *widths = g_new0(gsize, table->headers->len);
	gint status_col = -1;

	for (guint i = 0; i < table->headers->len; i++) {
		const char *header = g_ptr_array_index(table->headers, i);
		widths[i] = cli_text_width(header);
		if (g_strcmp0(header, "STATUS") == 0)
			status_col = i;
	}
	for (guint r = 0; r < table->rows->len; r++) {
		GPtrArray *row = g_ptr_array_index(table->rows, r);
		for (guint i = 0; i < row->len; i++)
			widths[i] = MAX(widths[i], cli_text_width(g_ptr_array_index(row, i)));
	}
	cli_table_render_row(table, table->headers, widths, -1, FALSE, out);
	for (guint r = 0; r < table->rows->len; r++)
		cli_table_render_row(table, g_ptr_array_index(table->rows, r), widths, status_col,
		                     color, out);
}
