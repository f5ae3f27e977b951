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
/* Closes everything; a unix socket we created is unlinked. */
void agent_transport_free(AgentTransport *transport);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(AgentTransport, agent_transport_free)

/* Blocks SIGIO in the calling thread; call first in main() so all threads inherit it. */
void agent_transport_block_sigio(void);

/* "CID:PORT"; CID may be -1 or "any". */
gboolean agent_transport_parse_vsock(const char *addr, guint32 *cid, guint32 *port, GError **error);

/*
 * Finds the device of the virtio-serial port called name: devdir/name if it
 * exists (udev's link, devdir normally /dev/virtio-ports), else the entry of
 * sysdir (normally /sys/class/virtio-ports) whose "name" file holds name,
 * as /dev/ENTRY. Returns a new path or NULL with an error naming the port.
 */
char *agent_transport_find_virtio_port(const char *name, const char *devdir, const char *sysdir,
                                       GError **error);

G_END_DECLS
