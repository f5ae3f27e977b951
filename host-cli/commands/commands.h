/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "fleet/app.h"

G_BEGIN_DECLS

/* The command table, in the order "guestbench --help" lists it. */
const CliCommand *cli_commands_get(guint *n_commands);
const CliCommand *cli_command_find(const char *name);
/* "guestbench --help": usage, the commands and the common options. */
char *cli_app_get_main_help(CliApp *app);
/* "guestbench help CMD" and "guestbench CMD --help". */
char *cli_app_get_command_help(CliApp *app, const CliCommand *command);

G_END_DECLS
