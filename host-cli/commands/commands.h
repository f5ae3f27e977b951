/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "fleet/app.h"

G_BEGIN_DECLS

/* The commands, one file each (commands/cmd-*.c). */
extern const CliCommand cli_cmd_ping;
extern const CliCommand cli_cmd_info;
extern const CliCommand cli_cmd_facts;
extern const CliCommand cli_cmd_audit;
extern const CliCommand cli_cmd_census;
extern const CliCommand cli_cmd_bench;
extern const CliCommand cli_cmd_jobs;
extern const CliCommand cli_cmd_cancel;
extern const CliCommand cli_cmd_compare;
extern const CliCommand cli_cmd_report;
extern const CliCommand cli_cmd_results;
extern const CliCommand cli_cmd_discover;
extern const CliCommand cli_cmd_merge;
extern const CliCommand cli_cmd_host_check;
extern const CliCommand cli_cmd_help;

/* The command table, in the order "guestbench --help" lists it. */
const CliCommand *const *cli_commands_get(guint *n_commands);
const CliCommand *cli_command_find(const char *name);
/* "guestbench --help": usage, the commands and the common options. */
char *cli_app_get_main_help(CliApp *app);
/* "guestbench help CMD" and "guestbench CMD --help". */
char *cli_app_get_command_help(CliApp *app, const CliCommand *command);
/*
 * The options command takes, a NULL-terminated GArray of GOptionEntry: its
 * own, then the common ones it takes; command NULL: every common option.
 */
GArray *cli_app_get_option_entries(const CliCommand *command);
/* What completion offers for the common options' values, {NULL}-terminated. */
const CliCompletion *cli_app_get_common_completions(void);

/*
 * "guestbench __complete spec": the commands, their options and operands,
 * one per line, for the bash completion (packaging/completion/guestbench);
 * "guestbench __complete runs": the saved run ids; "guestbench __complete
 * domains [URI]": the libvirt domains of URI (default: libvirt's). Not in
 * --help.
 */
#define CLI_COMPLETE_ARG "__complete"
char *cli_complete_dump(const char *const *args, GError **error);

G_END_DECLS
