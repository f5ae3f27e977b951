/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include "fleet/app.h"
#include "render/prom.h"
#include "transport/qga-exec.h"

CliResults *cli_app_get_results(CliApp *app)
{
	CliResults *results = cli_results_new(app->command != NULL ? app->command->name : "");

	for (guint i = 0; app->guests != NULL && i < app->guests->len; i++) {
		const CliGuest *guest = g_ptr_array_index(app->guests, i);

		cli_results_add(results,
		                cli_result_new(guest->target->name, guest->target->text,
		                               guest->status, guest->error, guest->result));
	}
	return results;
}

guint cli_command_get_formats(const CliCommand *command)
{
	guint formats = CLI_FORMAT_BIT(CLI_FORMAT_TABLE) | CLI_FORMAT_BIT(CLI_FORMAT_JSON);

	if (command->formats != 0)
		return command->formats;
	if (command->render_csv != NULL)
		formats |= CLI_FORMAT_BIT(CLI_FORMAT_CSV);
	if (command->render_prom != NULL)
		formats |= CLI_FORMAT_BIT(CLI_FORMAT_PROM);
	if (command->render_html != NULL)
		formats |= CLI_FORMAT_BIT(CLI_FORMAT_HTML);
	return formats;
}

guint cli_command_get_common_options(const CliCommand *command)
{
	if (command->common_options != 0)
		return command->common_options;
	return command->start != NULL ? CLI_OPTIONS_TARGETS | CLI_OPTIONS_HOSTS : CLI_OPTIONS_NONE;
}

GString *cli_command_render(const CliCommand *command, const CliResults *results, CliFormat format,
                            gboolean color)
{
	g_autoptr(CliTable) table = NULL;
	GString *out;

	switch (format) {
	case CLI_FORMAT_PROM:
		out = command->render_prom(results);
		cli_prom_drop_duplicates(out);
		return out;
	case CLI_FORMAT_JSON:
		return cli_results_render_json(results);
	case CLI_FORMAT_CSV:
		return command->render_csv(results);
	case CLI_FORMAT_HTML:
		return command->render_html(results);
	case CLI_FORMAT_TABLE:
	default:
		break;
	}
	if (command->render_text != NULL)
		return command->render_text(results, color);
	if (command->render_table != NULL)
		table = command->render_table(results);
	else
		table = cli_results_default_table(results, command->describe);
	out = g_string_new(NULL);
	/* nothing to report (--failed-only, all ok): nothing at all, not a lonely header */
	if (cli_table_get_n_rows(table) > 0)
		cli_table_render(table, color, out);
	return out;
}

gboolean cli_app_use_color(CliApp *app)
{
	return cli_output_use_color(app->opts.color, app->opts.output, app->stdout_is_tty);
}

gboolean cli_app_write_doc(CliApp *app, const GString *doc, GError **error)
{
	return cli_output_write_doc(app->opts.output, doc, error);
}

gboolean cli_app_write_output(CliApp *app, GError **error)
{
	g_autoptr(CliResults) results = cli_app_get_results(app);
	g_autoptr(GString) doc = NULL;

	if (app->opts.failed_only) {
		CliResults *failed = cli_results_filter_failed(results);

		cli_results_free(results);
		results = failed;
	}
	doc = cli_command_render(app->command, results, app->opts.format, cli_app_use_color(app));
	return cli_app_write_doc(app, doc, error);
}

gboolean cli_option_qga_agent_cb(const char *option_name, const char *value, gpointer data,
                                 GError **error)
{
	CliApp *app = data;

	if (!cli_qga_check_agent_path(value, error))
		return FALSE;
	g_free(app->opts.qga_agent);
	app->opts.qga_agent = g_strdup(value);
	return TRUE;
}
