/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <glib.h>

#include "fleet/target.h"

G_BEGIN_DECLS

/*
 * An inventory: a GLib key file with one [guest NAME] group per guest.
 *
 *	[guest web1]
 *	target=unix:/run/guestbench/web1.sock   (required; unix:, vsock:, libvirt:, a path)
 *	tags=web;production                     (optional list)
 *	qmp=/run/qemu/web1.qmp                  (optional: host-side QMP socket)
 *	agent_path=/usr/local/bin/guestbench-agent (optional: the agent in the guest)
 *	connect=qemu+ssh://hv1/system           (optional, with target=libvirt:DOMAIN)
 *
 *	[hypervisor hv2]                        (every running guest of connect=,
 *	connect=qemu+ssh://hv2/system            each with host hv2 and these tags)
 *	tags=pool-b
 *
 * Relative socket paths (target=, qmp=) are relative to the inventory's
 * directory, so an inventory can travel with its sockets. Every mistake fails
 * the whole file with "FILE:LINE: reason", before any guest is contacted.
 */

/* Larger inventories than this are refused (a million guests fit easily). */
#define CLI_INVENTORY_MAX_SIZE (64 * 1024 * 1024)

/* Guests of the inventory at path (CliTarget, name = NAME, origin = "FILE:LINE"), file order. */
GPtrArray *cli_inventory_load(const char *path, const CliTargetOptions *opts, GError **error);
/* The same from text already in memory; path names it in messages and anchors relative paths. */
GPtrArray *cli_inventory_parse(const char *path, const char *data, gsize len,
                               const CliTargetOptions *opts, GError **error);
/* Whether a guest is selected by opts->tags and opts->names (see CliTargetOptions). */
gboolean cli_inventory_guest_selected(const CliTarget *target, const CliTargetOptions *opts);
/* "--tag a --tag b --name 'x*'": the selection, for messages. */
char *cli_inventory_describe_selection(const CliTargetOptions *opts);

G_END_DECLS
