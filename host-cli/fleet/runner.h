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
/*
 * After cli_runner_run(): runs every target again as a new pass (fresh guests, with
 * app->schedule as it is now) and hands back the previous pass's guests.
 */
GPtrArray *cli_runner_run_again(CliApp *app);
/*
 * After the run: the most guests of guest's hypervisor (itself included) that ran at
 * once while it ran, from when the runner started and finished each; 0 for a guest
 * that never started.
 */
guint cli_runner_get_concurrent(CliApp *app, const CliGuest *guest);

G_END_DECLS
