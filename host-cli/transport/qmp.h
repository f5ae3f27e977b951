/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/*
 * A QMP client (the QEMU monitor of one guest) on a GMainContext.
 *
 * path is "unix:PATH" or a bare PATH (a QMP socket: the client waits for the
 * greeting, sends qmp_capabilities, then the calls), or "libvirt:DOMAIN"
 * (libvirt holds the monitor: each call is one virDomainQemuMonitorCommand
 * of the connection uri, without an "id", which libvirt refuses; only when
 * built with libvirt, virt.h). Calls go out one at a time, each
 * with its own id; events between replies are counted and ignored. Every wait
 * (greeting, each reply) is bounded by timeout_seconds; a timeout, garbage,
 * an oversized message or a closed socket ends the connection and every
 * pending call hears of it. An {"error": ...} reply fails only that call
 * (GB_ERROR_REMOTE, or GB_ERROR_COMMAND_NOT_FOUND for CommandNotFound).
 * Callbacks never run inside cli_qmp_open()/cli_qmp_call(), and none runs
 * after cli_qmp_close().
 */
typedef struct _CliQmp CliQmp;

/* error is NULL once capabilities are negotiated. */
typedef void (*CliQmpOpenFunc)(CliQmp *qmp, const GError *error, gpointer user_data);
/* Exactly one of ret (borrowed, the "return" value) and error is set. */
typedef void (*CliQmpReplyFunc)(CliQmp *qmp, JsonNode *ret, const GError *error,
                                gpointer user_data);

/* Largest QMP message accepted (a full CPU model expansion is about 10 KiB). */
#define CLI_QMP_MAX_MESSAGE (4 * 1024 * 1024)

/* Never NULL; a bad path fails through func from the main context. */
CliQmp *cli_qmp_open(const char *path, GMainContext *context, double timeout_seconds,
                     CliQmpOpenFunc func, gpointer user_data);
/* The same; uri is the libvirt connection of a "libvirt:DOMAIN" path (NULL: the default). */
CliQmp *cli_qmp_open_full(const char *path, const char *uri, GMainContext *context,
                          double timeout_seconds, CliQmpOpenFunc func, gpointer user_data);
/* Queues a call; arguments (may be NULL) is not consumed. */
void cli_qmp_call(CliQmp *qmp, const char *execute, JsonObject *arguments, CliQmpReplyFunc func,
                  gpointer user_data);
/* QEMU's pid from the socket's peer credentials (SO_PEERCRED); 0 when unknown (libvirt). */
gint64 cli_qmp_get_pid(const CliQmp *qmp);
/* The libvirt domain for "libvirt:DOMAIN", else NULL. */
const char *cli_qmp_get_domain(const CliQmp *qmp);
/* Events received and ignored so far. */
guint cli_qmp_get_n_events(const CliQmp *qmp);
/* The QEMU version from the greeting ("7.2.22"), NULL before it or over libvirt. */
const char *cli_qmp_get_version(const CliQmp *qmp);
/* Closes the connection and frees the client; safe from inside a callback. */
void cli_qmp_close(CliQmp *qmp);

G_END_DECLS
