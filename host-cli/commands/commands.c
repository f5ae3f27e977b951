/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include "commands/commands.h"

/* Every command, in the order "guestbench --help" lists them; each is defined in its file. */
static const CliCommand *const cli_commands[] = {
	&cli_cmd_ping,    &cli_cmd_info,     &cli_cmd_facts,  &cli_cmd_audit,      &cli_cmd_census,
	&cli_cmd_bench,   &cli_cmd_jobs,     &cli_cmd_cancel, &cli_cmd_compare,    &cli_cmd_report,
	&cli_cmd_results, &cli_cmd_discover, &cli_cmd_merge,  &cli_cmd_host_check, &cli_cmd_help,
};

const CliCommand *const *cli_commands_get(guint *n_commands)
{
	*n_commands = G_N_ELEMENTS(cli_commands);
	return cli_commands;
}

const CliCommand *cli_command_find(const char *name)
{
	for (guint i = 0; i < G_N_ELEMENTS(cli_commands); i++) {
		if (g_strcmp0(cli_commands[i]->name, name) == 0)
			return cli_commands[i];
	}
	return NULL;
}
