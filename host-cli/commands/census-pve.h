/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "fleet/app.h"

G_BEGIN_DECLS

/*
 * census --connect pve:///cluster (pve+ssh://NODE/, pve:///): each node's
 * highest PVE CPU type from its CPU flags, the highest every node can run
 * (live migration), and the VMs below it or on cpu: host across different
 * CPUs. The nodes are audited by this program (over ssh as --hosts does).
 */
int cli_census_pve_run(CliApp *app, const char *uri, GError **error);

G_END_DECLS
