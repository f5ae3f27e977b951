/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include "guestbench-protocol.h"

#include "analysis/runs.h"
#include "commands/cmd-results.h"
#include "commands/commands.h"
#include "render/output.h"

gboolean cli_results_prepare(CliApp *app, GPtrArray *args, GError **error)
{
	if (args->len > 0) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		                    "results takes no targets");
		return FALSE;
	}
	return TRUE;
}

static GString *cli_runs_render_json(const char *dir, GPtrArray *entries)
{
	g_autoptr(JsonBuilder) b = json_builder_new();
	g_autoptr(JsonNode) root = NULL;

	json_builder_begin_object(b);
	json_builder_set_member_name(b, "guestbench");
	json_builder_add_string_value(b, GB_VERSION);
	json_builder_set_member_name(b, "command");
	json_builder_add_string_value(b, "results");
	json_builder_set_member_name(b, "directory");
	json_builder_add_string_value(b, dir);
	json_builder_set_member_name(b, "results");
	json_builder_begin_array(b);
	for (guint i = 0; i < entries->len; i++) {
		CliRunEntry *e = g_ptr_array_index(entries, i);

		json_builder_begin_object(b);
		json_builder_set_member_name(b, "id");
		json_builder_add_string_value(b, e->id);
		json_builder_set_member_name(b, "path");
		json_builder_add_string_value(b, e->path);
		json_builder_set_member_name(b, "date");
		if (e->date != NULL)
			json_builder_add_string_value(b, e->date);
		else
			json_builder_add_null_value(b);
		json_builder_set_member_name(b, "command");
		if (e->command != NULL)
			json_builder_add_string_value(b, e->command);
		else
			json_builder_add_null_value(b);
		json_builder_set_member_name(b, "guests");
		json_builder_begin_array(b);
		for (guint j = 0; e->guests != NULL && e->guests[j] != NULL; j++)
			json_builder_add_string_value(b, e->guests[j]);
		json_builder_end_array(b);
		if (e->error != NULL) {
			json_builder_set_member_name(b, "error");
			json_builder_add_string_value(b, e->error);
		}
		json_builder_end_object(b);
	}
	json_builder_end_array(b);
	json_builder_end_object(b);
	root = json_builder_get_root(b);
	return cli_output_json_document(root);
}

/* One row per saved run; the text and the CSV are drawn from it. */
static CliTable *cli_runs_table(GPtrArray *entries)
{
	CliTable *table = cli_table_new("ID", "DATE", "COMMAND", "GUESTS", NULL);

	for (guint i = 0; i < entries->len; i++) {
		CliRunEntry *e = g_ptr_array_index(entries, i);
		g_autoptr(GString) guests = g_string_new(NULL);
		guint n = e->guests != NULL ? g_strv_length(e->guests) : 0;

		if (e->error != NULL) {
			g_string_append_printf(guests, "unreadable: %s", e->error);
		} else {
			g_string_append_printf(guests, "%u", n);
			for (guint j = 0; j < n && j < 3; j++)
				g_string_append_printf(guests, "%s%s", j == 0 ? ": " : ", ",
				                       e->guests[j]);
			if (n > 3)
				g_string_append(guests, ", ...");
		}
		cli_table_add_row(table, e->id, e->date != NULL ? e->date : "?",
		                  e->command != NULL ? e->command : "?", guests->str);
	}
	return table;
}

int cli_results_run(CliApp *app, GError **error)
{
	g_autofree char *dir = cli_runs_default_dir();
	g_autoptr(GPtrArray) entries = cli_runs_list(dir, error);
	g_autoptr(GString) doc = NULL;
	g_autoptr(CliTable) table = NULL;

	if (entries == NULL)
		return CLI_EXIT_GUEST;
	if (app->opts.format == CLI_FORMAT_JSON) {
		doc = cli_runs_render_json(dir, entries);
	} else {
		table = cli_runs_table(entries);
		doc = g_string_new(NULL);
		if (app->opts.format == CLI_FORMAT_CSV)
			cli_table_render_csv(table, doc);
		else
			cli_table_render(table, cli_app_use_color(app), doc);
	}
	if (entries->len == 0 && app->opts.format != CLI_FORMAT_JSON && !app->opts.quiet)
		g_printerr("no saved runs in %s\n", dir);
	return cli_app_write_doc(app, doc, error) ? CLI_EXIT_OK : CLI_EXIT_USAGE;
}

const CliCommand cli_cmd_results = {
	.name = "results",
	.parameter_string = "results",
	.summary = "List the saved benchmark runs: id, date, command, guests",
	.description = CLI_RESULTS_DESCRIPTION,
	.prepare = cli_results_prepare,
	.formats = CLI_FORMAT_BIT(CLI_FORMAT_TABLE) | CLI_FORMAT_BIT(CLI_FORMAT_JSON) |
	           CLI_FORMAT_BIT(CLI_FORMAT_CSV),
	.run = cli_results_run,
};
