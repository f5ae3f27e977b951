/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "fleet/app.h"

G_BEGIN_DECLS

/* The discover command (cmd-discover.c, which defines cli_cmd_discover). */
#define CLI_DISCOVER_DESCRIPTION                                                    \
	"Reads each running domain's live XML (/run/libvirt/qemu/NAME.xml, or\n"    \
	"'virsh dumpxml' where that directory cannot be read; --libvirt-dir or\n"   \
	"$GUESTBENCH_LIBVIRT_DIR name another directory) and prints an inventory\n" \
	"with one [guest NAME] group per domain whose <channel> has <target\n"      \
	"type='virtio' name='org.guestbench.agent.0'/>. Domains without one are\n"  \
	"listed as comments, with the XML to add. Exit status 3 when a domain's\n"  \
	"XML cannot be read or parsed."

gboolean cli_discover_prepare(CliApp *app, GPtrArray *args, GError **error);
GString *cli_discover_render_text(const CliResults *results, gboolean color);
int cli_discover_run(CliApp *app, GError **error);
/* The inventory text discover writes for the domains in app->guests. */
GString *cli_discover_render_inventory(const CliResults *results);

G_END_DECLS
