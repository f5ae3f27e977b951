/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * Drops what the agent does not need once its port is open (see SECURITY.md):
 * sets no_new_privs, clears the ambient set, empties the capability bounding
 * set (when it holds CAP_SETPCAP to do so) and clears the effective, permitted
 * and inheritable sets. Nothing the agent does afterwards needs a capability:
 * it reads world-readable /proc and /sys files, writes under its scratch dir
 * (owned by its own uid) and listens on the benchmark port (>= 1024 unless
 * net.ipv4.ip_unprivileged_port_start says otherwise).
 *
 * Capabilities are per thread: call this from the main thread before any
 * worker thread starts; threads created later inherit the empty sets. Steps a
 * kernel does not know (EINVAL) are skipped; any other failure, or a
 * capability still present afterwards, fails with GB_ERROR_FAILED.
 */
gboolean agent_privilege_drop(GError **error);

/*
 * Effective, permitted and inheritable capability sets of the calling thread
 * (as 64-bit masks) and whether no_new_privs is set; FALSE with error when the
 * kernel does not answer.
 */
gboolean agent_privilege_get(guint64 *effective, guint64 *permitted, guint64 *inheritable,
                             gboolean *no_new_privs, GError **error);

G_END_DECLS
