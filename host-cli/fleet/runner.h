/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "fleet/app.h"

G_BEGIN_DECLS

/*
 * Runs app->command on every target: one GMainContext (app->context), at
 * most opts.jobs sessions in flight, each guest bounded by its deadline,
 * SIGINT/SIGTERM cancel (see fleet/app.h). Returns when every guest is done;
 * results stay in app->guests in target order.
 */
void cli_runner_run(CliApp *app);

G_END_DECLS
