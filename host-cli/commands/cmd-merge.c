/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include "guestbench-protocol.h"

#include "commands/cmd-merge.h"
#include "commands/commands.h"
#include "fleet/merge.h"

/* ---- the command ------------------------------------------------------------------------ */

gboolean cli_merge_prepare(CliApp *app, GPtrArray *args, GError **error)
{
	if (args->len == 0) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		                    "merge needs at least one FILE");
		return FALSE;
	}
	return TRUE;
}

static CliMerge *cli_merge_load(CliApp *app, GError **error)
{
	g_autoptr(CliMerge) merge = cli_merge_new(cli_command_find);

	for (guint i = 0; i < app->args->len; i++) {
		if (!cli_merge_add_file(merge, g_ptr_array_index(app->args, i), error))
			return NULL;
	}
	return g_steal_pointer(&merge);
}

int cli_merge_run(CliApp *app, GError **error)
{
	g_autoptr(CliMerge) merge = cli_merge_load(app, error);
	g_autoptr(GString) doc = NULL;

	if (merge == NULL)
		return CLI_EXIT_USAGE;
	if (app->opts.failed_only)
		cli_merge_keep_failed(merge);
	doc = cli_merge_render(merge, app->opts.format, cli_app_use_color(app), error);
	if (doc == NULL || !cli_app_write_doc(app, doc, error))
		return CLI_EXIT_USAGE;
	return CLI_EXIT_OK;
}

static const CliCompletion cli_merge_completions[] = {
	{ NULL, CLI_COMPLETE_FILE, NULL },
	{ NULL },
};

const CliCommand cli_cmd_merge = {
	.name = "merge",
	.parameter_string = "merge FILE...",
	.summary = "Merge saved JSON documents of several hypervisors, each guest with its host",
	.description = CLI_MERGE_DESCRIPTION,
	.prepare = cli_merge_prepare,
	.formats = CLI_FORMAT_BIT(CLI_FORMAT_TABLE) | CLI_FORMAT_BIT(CLI_FORMAT_JSON) |
	           CLI_FORMAT_BIT(CLI_FORMAT_CSV) | CLI_FORMAT_BIT(CLI_FORMAT_PROM),
	.completions = cli_merge_completions,
	.run = cli_merge_run,
};
