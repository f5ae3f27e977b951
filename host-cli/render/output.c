/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "gb-error.h"

#include "fleet/app.h"
#include "render/output.h"

#define CLI_COLOR_RED "\033[31m"
#define CLI_COLOR_GREEN "\033[32m"
#define CLI_COLOR_YELLOW "\033[33m"
#define CLI_COLOR_BLUE "\033[34m"
#define CLI_COLOR_RESET "\033[0m"

struct _CliTable {
	GPtrArray *headers; /* char * */
	GPtrArray *rows;    /* GPtrArray of char *, escaped */
};

/* Characters that change how following text is shown although they print nothing. */
gboolean cli_unichar_is_format_control(gunichar c)
{
	return (c >= 0x200e && c <= 0x200f) || (c >= 0x2028 && c <= 0x202e) ||
	       (c >= 0x2066 && c <= 0x2069);
}

char *cli_escape_terminal(const char *text)
{
	GString *str;
	const char *p;

	if (text == NULL)
		return g_strdup("");
	str = g_string_sized_new(strlen(text));
	for (p = text; *p != '\0';) {
		gunichar c = g_utf8_get_char_validated(p, -1);

		if (c == (gunichar)-1 || c == (gunichar)-2) {
			g_string_append_printf(str, "\\x%02x", (guint)(guchar)*p);
			p++;
			continue;
		}
		if (c == '\n') {
			g_string_append(str, "\\n");
		} else if (c == '\r') {
			g_string_append(str, "\\r");
		} else if (c == '\t') {
			g_string_append(str, "\\t");
		} else if (c < 0x20 || c == 0x7f) {
			g_string_append_printf(str, "\\x%02x", c);
		} else if ((c >= 0x80 && c < 0xa0) || cli_unichar_is_format_control(c)) {
			g_string_append_printf(str, "\\u%04x", c);
		} else {
			g_string_append_len(str, p, g_utf8_next_char(p) - p);
		}
		p = g_utf8_next_char(p);
	}
	return g_string_free(str, FALSE);
}

gsize cli_text_width(const char *text)
{
	gsize width = 0;

	for (const char *p = text; *p != '\0'; p = g_utf8_next_char(p)) {
		gunichar c = g_utf8_get_char(p);
		if (g_unichar_iszerowidth(c))
			continue;
		width += g_unichar_iswide(c) ? 2 : 1;
	}
	return width;
}

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

GString *cli_output_render_json(CliApp *app)
{
	g_autoptr(JsonBuilder) builder = json_builder_new();
	g_autoptr(JsonGenerator) generator = json_generator_new();
	g_autoptr(JsonNode) root = NULL;
	g_autofree char *text = NULL;
	GString *out;

	json_builder_begin_object(builder);
	json_builder_set_member_name(builder, "guestbench");
	json_builder_add_string_value(builder, GB_VERSION);
	json_builder_set_member_name(builder, "command");
	json_builder_add_string_value(builder, app->command != NULL ? app->command->name : "");
	json_builder_set_member_name(builder, "guests");
	json_builder_begin_array(builder);
	for (guint i = 0; app->guests != NULL && i < app->guests->len; i++) {
		CliGuest *guest = g_ptr_array_index(app->guests, i);

		json_builder_begin_object(builder);
		json_builder_set_member_name(builder, "name");
		json_builder_add_string_value(builder, guest->target->name);
		json_builder_set_member_name(builder, "target");
		json_builder_add_string_value(builder, guest->target->text);
		json_builder_set_member_name(builder, "status");
		json_builder_add_string_value(builder, cli_guest_status_to_string(guest->status));
		if (guest->status != CLI_GUEST_OK) {
			json_builder_set_member_name(builder, "error");
			json_builder_add_string_value(builder, guest->error != NULL ? guest->error
			                                                            : "not run");
		}
		json_builder_set_member_name(builder, "result");
		if (guest->result != NULL)
			json_builder_add_value(builder, json_node_copy(guest->result));
		else
			json_builder_add_null_value(builder);
		json_builder_end_object(builder);
	}
	json_builder_end_array(builder);
	json_builder_end_object(builder);

	root = json_builder_get_root(builder);
	json_generator_set_root(generator, root);
	json_generator_set_pretty(generator, TRUE);
	json_generator_set_indent(generator, 2);
	text = json_generator_to_data(generator, NULL);
	out = g_string_new(text);
	g_string_append_c(out, '\n');
	return out;
}

static void cli_output_default_table(CliApp *app, CliTable *table)
{
	for (guint i = 0; i < app->guests->len; i++) {
		CliGuest *guest = g_ptr_array_index(app->guests, i);
		g_autofree char *detail = NULL;

		if (guest->status == CLI_GUEST_OK && app->command->describe != NULL)
			detail = app->command->describe(guest);
		else if (guest->status != CLI_GUEST_OK)
			detail = g_strdup(guest->error != NULL ? guest->error : "not run");
		if (app->opts.quiet && guest->status == CLI_GUEST_OK)
			continue;
		cli_table_add_row(table, guest->target->name,
		                  cli_guest_status_to_string(guest->status), detail);
	}
}

GString *cli_output_render_table(CliApp *app, gboolean color)
{
	GString *out = g_string_new(NULL);
	g_autoptr(CliTable) table = NULL;

	if (app->command != NULL && app->command->render_table != NULL && app->guests != NULL) {
		table = app->command->render_table(app);
	} else {
		table = cli_table_new("GUEST", "STATUS", "DETAIL", NULL);
		if (app->guests != NULL && app->command != NULL)
			cli_output_default_table(app, table);
	}
	/* with -q and nothing to report, print nothing at all, not a lonely header */
	if (cli_table_get_n_rows(table) > 0 || !app->opts.quiet)
		cli_table_render(table, color, out);
	return out;
}

gboolean cli_output_use_color(CliApp *app)
{
	if (app->opts.color == CLI_COLOR_ALWAYS)
		return TRUE;
	if (app->opts.color == CLI_COLOR_NEVER)
		return FALSE;
	return app->opts.output == NULL && app->stdout_is_tty;
}

gboolean cli_output_write(CliApp *app, GError **error)
{
	g_autoptr(GString) doc = NULL;

	switch (app->opts.format) {
	case CLI_FORMAT_JSON:
		doc = cli_output_render_json(app);
		break;
	case CLI_FORMAT_CSV:
		doc = app->command->render_csv(app);
		break;
	case CLI_FORMAT_PROM:
		doc = app->command->render_prom(app);
		break;
	case CLI_FORMAT_HTML:
		doc = app->command->render_html(app);
		break;
	case CLI_FORMAT_TABLE:
	default:
		if (app->command != NULL && app->command->render_text != NULL &&
		    app->guests != NULL)
			doc = app->command->render_text(app, cli_output_use_color(app));
		else
			doc = cli_output_render_table(app, cli_output_use_color(app));
		break;
	}

	return cli_output_write_doc(app, doc, error);
}

gboolean cli_output_write_doc(CliApp *app, GString *doc, GError **error)
{
	if (app->opts.output != NULL) {
		/* CONSISTENT: a temp file in the same directory, fsync, rename: never half a file
		 */
		if (!g_file_set_contents_full(app->opts.output, doc->str, doc->len,
		                              G_FILE_SET_CONTENTS_CONSISTENT, 0666, error)) {
			g_prefix_error(error, "cannot write %s: ", app->opts.output);
			return FALSE;
		}
		return TRUE;
	}
	if (fwrite(doc->str, 1, doc->len, stdout) != doc->len || fflush(stdout) != 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_IO, "cannot write to stdout: %s",
		            g_strerror(errno));
		return FALSE;
	}
	return TRUE;
}
