/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "fleet/app.h"

G_BEGIN_DECLS

/* The discover command (cmd-discover.c, which defines cli_cmd_discover). */
#define CLI_DISCOVER_DESCRIPTION                                                     \
	"Asks libvirt for every domain of each --connect URI (else libvirt's\n"      \
	"default connection) with its state, and prints an inventory with one\n"     \
	"[guest NAME] group per domain that has a <channel> with <target\n"          \
	"type='virtio' name='org.guestbench.agent.0'/> (or only qemu-ga's, tagged\n" \
	"qga): target=libvirt:NAME, connect=URI and qmp=libvirt:NAME, which stay\n"  \
	"true across restarts. Shut-off domains are marked so; domains with\n"       \
	"neither channel are listed as comments, with the XML to add.\n"             \
	"--libvirt-dir DIR (or $GUESTBENCH_LIBVIRT_DIR) reads libvirt's state\n"     \
	"files there instead (root on the hypervisor). Exit status 3 when a\n"       \
	"connection fails or a domain cannot be read."

gboolean cli_discover_prepare(CliApp *app, GPtrArray *args, GError **error);
GString *cli_discover_render_text(const CliResults *results, gboolean color);
int cli_discover_run(CliApp *app, GError **error);
/* The inventory text discover writes for the domains in app->guests. */
GString *cli_discover_render_inventory(const CliResults *results);

G_END_DECLS
