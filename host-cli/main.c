/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include "commands/commands.h"

int main(int argc, char **argv)
{
	g_autoptr(CliApp) app = NULL;
	g_autoptr(GError) error = NULL;

	setlocale(LC_ALL, "");
	/* a guest that hangs up mid-write is an error for that guest, not the end of us */
	signal(SIGPIPE, SIG_IGN);
	g_set_prgname("guestbench");

	app = cli_app_new();
	app->stdout_is_tty = isatty(STDOUT_FILENO);
	app->stderr_is_tty = isatty(STDERR_FILENO);
	if (!cli_app_parse(app, (const char *const *)argv, &error)) {
		g_printerr("guestbench: %s\n", error->message);
		if (app->command != NULL)
			g_printerr("Try 'guestbench %s --help' for more information.\n",
			           app->command->name);
		else
			g_printerr("Try 'guestbench --help' for more information.\n");
		return CLI_EXIT_USAGE;
	}
	switch (app->action) {
	case CLI_ACTION_HELP:
		fputs(app->help_text, stdout);
		return CLI_EXIT_OK;
	case CLI_ACTION_VERSION:
		g_print("guestbench %s\n", GB_VERSION);
		return CLI_EXIT_OK;
	case CLI_ACTION_RUN:
	default:
		break;
	}
	if (app->opts.verbose)
		g_log_set_debug_enabled(TRUE);
	return cli_app_run(app);
}
