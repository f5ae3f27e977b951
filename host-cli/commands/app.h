/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "fleet/app.h"

G_BEGIN_DECLS

/* The application's life (app.c): options in, the command run, the exit status out. */
CliApp *cli_app_new(void);
void cli_app_free(CliApp *app);
/*
 * Parses argv (argv[0] is the program name; not modified). On success sets
 * app->action and, for CLI_ACTION_RUN, the command, options and targets. On a
 * usage error returns FALSE with the message; the caller exits CLI_EXIT_USAGE.
 */
gboolean cli_app_parse(CliApp *app, const char *const *argv, GError **error);
/*
 * app->targets from the operands, --inventory and --connect (without
 * operands and inventories: every running guest of each URI), checked
 * against --qmp and --qga-agent; what cli_app_parse() does for commands run
 * by the runner, for commands with a run() of their own.
 */
gboolean cli_app_resolve_targets(CliApp *app, GError **error);
/* Runs the parsed command, writes the output document, returns the exit status. */
int cli_app_run(CliApp *app);
/* The exit status for the finished guests (0, 1, 3, or 128 + signal). */
int cli_app_get_exit_status(CliApp *app);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(CliApp, cli_app_free)

G_END_DECLS
