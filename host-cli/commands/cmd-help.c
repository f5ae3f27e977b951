/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <stdio.h>

#include "guestbench-protocol.h"

#include "commands/commands.h"

static gboolean cli_help_prepare(CliApp *app, GPtrArray *args, GError **error)
{
	if (args->len > 1) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		                    "help takes at most one command name");
		return FALSE;
	}
	if (args->len == 1 && cli_command_find(g_ptr_array_index(args, 0)) == NULL) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT, "unknown command '%s'",
		            (const char *)g_ptr_array_index(args, 0));
		return FALSE;
	}
	return TRUE;
}

static int cli_help_run(CliApp *app, GError **error)
{
	g_autofree char *text = NULL;

	if (app->args->len == 0)
		text = cli_app_get_main_help(app);
	else
		text = cli_app_get_command_help(app,
		                                cli_command_find(g_ptr_array_index(app->args, 0)));
	fputs(text, stdout);
	return CLI_EXIT_OK;
}

static const CliCompletion cli_help_completions[] = {
	{ NULL, CLI_COMPLETE_COMMAND, NULL },
	{ NULL },
};

const CliCommand cli_cmd_help = {
	.name = "help",
	.parameter_string = "help [COMMAND]",
	.summary = "Show the commands, or one command's options",
	.prepare = cli_help_prepare,
	.formats = CLI_FORMAT_BIT(CLI_FORMAT_TABLE),
	.completions = cli_help_completions,
	.run = cli_help_run,
};
