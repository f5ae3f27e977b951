/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <sys/types.h>

#include <glib.h>

#include "agent.h"

G_BEGIN_DECLS

/*
 * Where the agent listens: the virtio-serial port (opened), a listening unix
 * or vsock socket, or stdin/stdout. Opened by the resident process
 * (guestbench-agent) and handed to each session process, which adopts it.
 * Needs GLib only: the resident process links nothing more.
 */
typedef enum {
	AGENT_ENDPOINT_VIRTIO_SERIAL,
	AGENT_ENDPOINT_UNIX_LISTEN,
	AGENT_ENDPOINT_VSOCK_LISTEN,
	AGENT_ENDPOINT_STDIO,
} AgentEndpointKind;

typedef struct {
	AgentEndpointKind kind;
	char *path; /* the port, the socket path or CID:PORT; "stdio" */
	int fd;     /* the port or the listening socket; -1 for stdio */
	/* a unix socket this process created: unlinked on free if it is still ours */
	gboolean unlink_socket;
	dev_t socket_dev;
	ino_t socket_ino;
} AgentEndpoint;

/*
 * Opens what config->method and config->path name: the port (a tty standing
 * in for it is set raw), or binds and listens. Stale unix sockets of a dead
 * agent are removed; a live one or a non-socket is an error.
 */
AgentEndpoint *agent_endpoint_open(const AgentConfig *config, GError **error);
/* An endpoint opened by another process (fd inherited); never unlinks anything. */
AgentEndpoint *agent_endpoint_adopt(const AgentConfig *config, int fd, GError **error);
void agent_endpoint_free(AgentEndpoint *ep);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(AgentEndpoint, agent_endpoint_free)

/* virtio-serial: SIGIO to this process when the host opens or closes its end, or data comes. */
gboolean agent_endpoint_own_sigio(AgentEndpoint *ep, GError **error);
/* virtio-serial: whether a host has the port open now (poll() shows no HUP). */
gboolean agent_endpoint_host_connected(AgentEndpoint *ep);

/* Blocks SIGIO in the calling thread; call first in main() so all threads inherit it. */
void agent_endpoint_block_sigio(void);

/* "CID:PORT"; CID may be -1 or "any". */
gboolean agent_endpoint_parse_vsock(const char *addr, guint32 *cid, guint32 *port, GError **error);

/*
 * Finds the device of the virtio-serial port called name: devdir/name if it
 * exists (udev's link, devdir normally /dev/virtio-ports), else the entry of
 * sysdir (normally /sys/class/virtio-ports) whose "name" file holds name,
 * as /dev/ENTRY. Returns a new path or NULL with an error naming the port.
 */
char *agent_endpoint_find_virtio_port(const char *name, const char *devdir, const char *sysdir,
                                      GError **error);

G_END_DECLS
