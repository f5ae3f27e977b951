/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include "commands/app.h"
#include "commands/commands.h"
#include "render/escape.h"
#include "render/output.h"
#include "render/table.h"
#include "transport/virt.h"

/*
 * Log lines (g_debug with --verbose or G_MESSAGES_DEBUG, g_message, g_warning)
 * quote what guests sent, raw: escape the message where it is printed, then
 * let GLib's default writer filter and print it as usual.
 */
static GLogWriterOutput cli_log_writer(GLogLevelFlags log_level, const GLogField *fields,
                                       gsize n_fields, gpointer user_data)
{
	g_autofree GLogField *copy = NULL;
	g_autofree char *message = NULL;
	const char *domain = NULL;

	for (gsize i = 0; i < n_fields; i++) {
		if (g_strcmp0(fields[i].key, "GLIB_DOMAIN") == 0)
			domain = fields[i].value;
	}
	if (g_log_writer_default_would_drop(log_level, domain))
		return G_LOG_WRITER_HANDLED;
	copy = g_memdup2(fields, sizeof(*fields) * n_fields);
	for (gsize i = 0; i < n_fields; i++) {
		g_autofree char *text = NULL;

		if (g_strcmp0(copy[i].key, "MESSAGE") != 0 || copy[i].value == NULL)
			continue;
		text = copy[i].length < 0 ? g_strdup(copy[i].value)
		                          : g_strndup(copy[i].value, copy[i].length);
		g_free(message);
		message = cli_escape_terminal(text);
		copy[i].value = message;
		copy[i].length = -1;
	}
	return g_log_writer_default(log_level, copy, n_fields, user_data);
}

int main(int argc, char **argv)
{
	g_autoptr(CliApp) app = NULL;
	int rc;
	g_autoptr(GError) error = NULL;

	setlocale(LC_ALL, "");
	g_log_set_writer_func(cli_log_writer, NULL, NULL);
	/* stdout carries results (tables, JSON, CSV); log lines never mix into them */
	g_log_writer_default_set_use_stderr(TRUE);
	/* a guest that hangs up mid-write is an error for that guest, not the end of us */
	signal(SIGPIPE, SIG_IGN);
	g_set_prgname("guestbench");

	app = cli_app_new();
	app->stdout_is_tty = isatty(STDOUT_FILENO);
	app->stderr_is_tty = isatty(STDERR_FILENO);
	if (!cli_app_parse(app, (const char *const *)argv, &error)) {
		cli_escape_printerr(NULL, error->message);
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
	/* a table line that wrapped would read as a row of its own */
	if (app->stdout_is_tty && cli_output_is_stdout(app->opts.output))
		cli_table_set_terminal_width(cli_output_terminal_columns(STDOUT_FILENO));
	rc = cli_app_run(app);
	/* the sessions first (they close libvirt channels), then libvirt's connections */
	g_clear_pointer(&app, cli_app_free);
	cli_virt_shutdown();
	return rc;
}
