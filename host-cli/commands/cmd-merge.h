/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "fleet/app.h"

G_BEGIN_DECLS

/* The merge command (cmd-merge.c, which defines cli_cmd_merge). */
#define CLI_MERGE_DESCRIPTION                                                             \
	"Merges saved 'guestbench --format json' documents of one command (e.g. audit\n"  \
	"or facts), typically one per hypervisor, into one document. Each guest gains\n"  \
	"a \"host\" member: the guest's own \"host\" (a merged document merged again),\n" \
	"else the document's top-level \"host\", else the file name without .json.\n"     \
	"table, csv and prom are the command's own formats with a host column or\n"       \
	"label. Exit status 2 when a file cannot be read, is not a guestbench\n"          \
	"document, mixes commands or names the same guest of a host twice."

gboolean cli_merge_prepare(CliApp *app, GPtrArray *args, GError **error);
int cli_merge_run(CliApp *app, GError **error);

G_END_DECLS
