/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <glib.h>

#include "agent.h"

G_BEGIN_DECLS

/*
 * Byte transport for the agent: virtio-serial, unix-listen, vsock-listen or
 * stdio. It owns the framer and a bounded output queue; every framed message
 * (or framing error) goes to the handler, whose reply is queued.
 */
typedef struct _AgentTransport AgentTransport;

/* Output queued beyond this stops input until the peer reads (backpressure). */
#define AGENT_TRANSPORT_OUTPUT_LIMIT (1024 * 1024)

/*
 * msg/len is one framed message, or msg == NULL and error is a framing error.
 * Returns the reply line(s) to send (owned) or NULL for none.
 */
typedef GString *(*AgentTransportHandler)(const char *msg, gsize len, const GError *error,
                                          gpointer user_data);
/* The transport finished for good (stdio EOF: error NULL; a fatal I/O error: set). */
typedef void (*AgentTransportClosedFunc)(const GError *error, gpointer user_data);

/* Opens/binds what config->method and config->path name and starts the watches. */
AgentTransport *agent_transport_new(const AgentConfig *config, AgentTransportHandler handler,
                                    AgentTransportClosedFunc closed, gpointer user_data,
                                    GError **error);
/*
 * The same on an endpoint another process opened (the port or the listening
 * socket, as fd): a session process of the agent (session.c).
 */
AgentTransport *agent_transport_adopt(const AgentConfig *config, int fd,
                                      AgentTransportHandler handler,
                                      AgentTransportClosedFunc closed, gpointer user_data,
                                      GError **error);
/*
 * Nothing half-read, nothing unsent, and (unix-listen, vsock-listen) no
 * client connected: the process may end without losing anything.
 */
gboolean agent_transport_is_idle(AgentTransport *transport);
/* unix-listen, vsock-listen: whether a client is connected now. */
gboolean agent_transport_has_client(AgentTransport *transport);
/* func(user_data) whenever a client of a listening transport goes away. */
void agent_transport_on_client_gone(AgentTransport *transport, void (*func)(gpointer user_data));
/*
 * Reads and accepts nothing more: a request or a client that comes from now
 * on waits in the kernel for the next session. For a session that ends once
 * it found itself idle: without it, a client that connects in the same main
 * loop iteration would be accepted, then closed unanswered as the session ends.
 */
void agent_transport_hold(AgentTransport *transport);
/* Closes everything; a unix socket we created is unlinked. */
void agent_transport_free(AgentTransport *transport);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(AgentTransport, agent_transport_free)

G_END_DECLS
