/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * libvirt through its client library (libvirt0, libvirt-qemu), when
 * guestbench is built with it (meson -Dlibvirt=enabled); otherwise every
 * function here fails with GB_ERROR_NOT_SUPPORTED saying so.
 *
 * Connections: one per URI per process, opened at first use (a NULL URI is
 * libvirt's default, as virsh's: $LIBVIRT_DEFAULT_URI, else the
 * configuration, else qemu:///system for root and qemu:///session for the
 * others), kept open and shared by every guest of that URI. Opening is
 * bounded by the timeout given to cli_virt_set_timeout(); a URI that failed
 * fails at once for the rest of the run. A connection that libvirtd closed
 * (a restart) is opened again at its next use.
 *
 * The calls that take a GMainContext run in worker threads and report back
 * in that context, never inside the call itself, and never after
 * cli_virt_op_cancel(). A guest's channel (virDomainOpenChannel) is bridged
 * to one end of a socket pair by libvirt's event loop thread: the caller gets
 * a connected stream socket and reads and writes it as it would the channel's
 * unix socket; closing it closes the libvirt stream.
 */

#define CLI_VIRT_CHANNEL "org.guestbench.agent.0"
#define CLI_VIRT_QGA_CHANNEL "org.qemu.guest_agent.0"
/* Default bound of a connection's opening when nobody set one. */
#define CLI_VIRT_DEFAULT_TIMEOUT_S 30.0
/* Largest reply taken from virDomainQemuMonitorCommand / virDomainQemuAgentCommand. */
#define CLI_VIRT_MAX_REPLY (16 * 1024 * 1024)

typedef struct _CliVirtConn CliVirtConn;
typedef struct _CliVirtOp CliVirtOp;

typedef struct {
	char *name;
	char *state;     /* "running", "paused", "shut off", ... as virsh domstate says */
	gboolean active; /* the domain runs (a QEMU process exists): running or paused */
	char *xml;       /* the live XML of an active domain, the inactive one otherwise */
} CliVirtDomain;

/* Whether this guestbench was built with libvirt. */
gboolean cli_virt_is_built(void);
/* Bounds the opening of each connection from now on (the run's --timeout). */
void cli_virt_set_timeout(double seconds);
/*
 * The shared connection to uri (NULL: the default). The error names the URI
 * and, for the usual causes (permission, a session URI for system domains,
 * a URI that does not answer), what to do.
 */
CliVirtConn *cli_virt_connect(const char *uri, GError **error);
/* The URI libvirt says it connected to ("qemu:///system"). */
const char *cli_virt_conn_get_uri(const CliVirtConn *conn);
/* The URI as asked for (NULL for the default). */
const char *cli_virt_conn_get_requested_uri(const CliVirtConn *conn);
/* The hypervisor's host name for a remote URI ("hv1"), NULL for a local one. */
const char *cli_virt_conn_get_remote_host(const CliVirtConn *conn);

void cli_virt_domain_free(CliVirtDomain *domain);
/* Every domain of the connection, active or not, sorted by name. */
GPtrArray *cli_virt_list_domains(CliVirtConn *conn, GError **error);
/* One domain by name; the error says whether it does not exist or could not be read. */
CliVirtDomain *cli_virt_get_domain(CliVirtConn *conn, const char *name, GError **error);
/*
 * The host CPUs each vCPU (vcpu_maps, n_vcpus rows) and the emulator threads
 * (emulator_map) may run on, as lists ("0-3,8"); n_host_cpus is the host's
 * CPU count. Remote domains too.
 */
gboolean cli_virt_get_pinning(CliVirtConn *conn, const char *domain, guint *n_host_cpus,
                              GPtrArray **vcpu_maps, char **emulator_map, GError **error);

/* The fd is connected (the caller owns it), or error says why it is not. */
typedef void (*CliVirtChannelFunc)(int fd, const GError *error, gpointer user_data);
/* reply is the whole JSON reply text, or error says why there is none. */
typedef void (*CliVirtReplyFunc)(const char *reply, const GError *error, gpointer user_data);

/* Opens channel (its target name) of domain; refuses one in use by another client. */
CliVirtOp *cli_virt_open_channel(const char *uri, const char *domain, const char *channel,
                                 GMainContext *context, CliVirtChannelFunc func,
                                 gpointer user_data);
/* virDomainQemuAgentCommand: one request to the domain's qemu-ga, through libvirt. */
CliVirtOp *cli_virt_agent_command(const char *uri, const char *domain, const char *request,
                                  int timeout_seconds, GMainContext *context, CliVirtReplyFunc func,
                                  gpointer user_data);
/* virDomainQemuMonitorCommand: one QMP request (without "id": libvirt adds its own). */
CliVirtOp *cli_virt_monitor_command(const char *uri, const char *domain, const char *request,
                                    GMainContext *context, CliVirtReplyFunc func,
                                    gpointer user_data);
/* No callback of op fires afterwards; a channel opened meanwhile is closed. NULL is ignored. */
void cli_virt_op_cancel(CliVirtOp *op);

/* Closes every connection and stops the event thread (at exit). */
void cli_virt_shutdown(void);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(CliVirtDomain, cli_virt_domain_free)

G_END_DECLS
