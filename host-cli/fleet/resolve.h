/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "fleet/target.h"

G_BEGIN_DECLS

/* The fleet a command line names: targets, @FILE and --inventory, selected by --tag and --name. */

/*
 * Parses every text in order; fails on the first bad one or on a duplicate
 * (same canonical form). Returns a GPtrArray of CliTarget (owns them).
 */
GPtrArray *cli_targets_parse(const char *const *texts, GError **error);
/*
 * The command line's targets: texts in order, each @FILE expanded in place to
 * its selected guests, then the guests of opts->inventories. Fails (as a
 * usage error) on a bad target or inventory, a duplicate, --tag/--name
 * without an inventory, or a selection that matches no inventory guest.
 */
GPtrArray *cli_targets_resolve(const char *const *texts, const CliTargetOptions *opts,
                               GError **error);
G_END_DECLS
