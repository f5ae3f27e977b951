/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "fleet/app.h"

G_BEGIN_DECLS

/* The results command: the saved runs (commands/cmd-results.c). */
#define CLI_RESULTS_DESCRIPTION                                                    \
	"Lists the runs saved under $XDG_DATA_HOME/guestbench/results/, oldest\n"  \
	"first: the id (the file name without .json), date, command and guests.\n" \
	"--format csv has the same columns, --format json every member."

gboolean cli_results_prepare(CliApp *app, GPtrArray *args, GError **error);
int cli_results_run(CliApp *app, GError **error);

G_END_DECLS
