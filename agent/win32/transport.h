/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <glib.h>

#include "agent.h"

G_BEGIN_DECLS

/*
 * The Windows agent's byte transport: the virtio-serial port as the vioserial
 * driver names it (\\.\Global\org.guestbench.agent.0), a COM port
 * (isa-serial) or a named pipe it creates (pipe-listen). One I/O thread owns
 * the handle and does overlapped reads and writes on it; framed requests are
 * answered on the main context. When the handle fails (the host went away,
 * the port was hot-unplugged, a pipe client left) the thread closes it and
 * opens it again, once a second, until it is back: nothing half-read or
 * unsent from the old connection is kept.
 */
typedef struct _AgentWinTransport AgentWinTransport;

typedef GString *(*AgentWinHandler)(const char *msg, gsize len, const GError *error,
                                    gpointer user_data);

/* Starts the I/O thread; FALSE with error only for a path that cannot be a port. */
AgentWinTransport *agent_win_transport_new(const AgentConfig *config, AgentWinHandler handler,
                                           gpointer user_data, GError **error);
/* Stops the thread (a pending read or write is cancelled) and closes the handle. */
void agent_win_transport_free(AgentWinTransport *t);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(AgentWinTransport, agent_win_transport_free)

G_END_DECLS
