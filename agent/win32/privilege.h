/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * The Windows side of agent_privilege_drop(): removes from this process's
 * token every privilege but SeChangeNotifyPrivilege (path traversal, which
 * every process has). The service runs as LocalSystem, which holds some
 * twenty (SeDebug, SeBackup, SeTcb, SeLoadDriver, ...); nothing the agent does
 * needs one: opening the port, a COM port or a pipe is an access check of its
 * account, not a privilege. Removed is for good: a removed privilege cannot
 * be enabled again, by this process or a benchmark process it starts, which
 * inherits the token. FALSE with GB_ERROR_FAILED when the token cannot be
 * changed or still holds another privilege afterwards; *removed (may be
 * NULL) says how many went.
 */
gboolean agent_win_privilege_drop(guint *removed, GError **error);

/* The names of the privileges this process's token holds, enabled or not. */
char **agent_win_privilege_list(GError **error);

G_END_DECLS
