/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>

#include "transport/address.h"
#include "transport/session-iface.h"

G_BEGIN_DECLS

/*
 * The qga: transport: a guest where only qemu-ga runs. The CLI opens a plain
 * session to qemu-ga (0xFF + guest-sync-delimited), checks with guest-info
 * that guest-exec and guest-exec-status are enabled, and then turns every
 * call into one `guestbench-agent --oneshot REQUEST` run through guest-exec
 * with captured output, polled with guest-exec-status (10 ms doubling to
 * 500 ms) until it exits. The agent's printed reply is framed and decoded
 * exactly as if it had come over the agent's own port.
 *
 * A one-shot agent cannot keep a job between processes: gb-bench-start then
 * runs the job to completion and answers with the final gb-bench-status
 * reply; the following gb-bench-status (and gb-bench-cancel) calls for that
 * job are answered here from that reply, so commands keep their usual
 * start/poll flow.
 *
 * CliQga sits behind a CliSession (session.c dispatches to it for
 * CLI_ADDRESS_QGA and CLI_ADDRESS_QGA_DOMAIN): the callbacks get that outer
 * session as their session.
 */
/* guest-exec-status polls: the first after 10 ms, then doubling up to 500 ms. */
#define CLI_QGA_POLL_FIRST_MS 10
#define CLI_QGA_POLL_MAX_MS 500

/*
 * The qemu-ga session backend: every call runs the agent once through
 * qemu-ga's guest-exec (over a channel to qemu-ga's socket, or through virsh
 * qemu-agent-command for CLI_ADDRESS_QGA_DOMAIN) and polls guest-exec-status.
 * Never NULL; open_func gets the session, from the main context.
 *
 * Its interrupt (cli_session_interrupt()) is Ctrl-C while a one-shot
 * gb-bench-start runs: the job id is not known until it is over, so no
 * gb-bench-cancel can name it. It sends SIGTERM to the one-shot agent instead
 * (guest-exec of /bin/sh -c 'kill -TERM PID'; the agent cancels its job and
 * prints the cancelled status). Not through virsh (one virsh call at a
 * time); a no-op when nothing of the kind runs.
 */
CliSession *cli_qga_open(const CliAddress *address, GMainContext *context, gsize max_reply_size,
                         CliSessionOpenFunc open_func, gpointer user_data);

/* ---- the pieces, public for tests ---- */

/* The agent binary in the guest: the address's agent_path, else GB_AGENT_DEFAULT_BINARY. */
const char *cli_qga_get_agent_path(const CliAddress *address);
/* --qga-agent PATH: an absolute path, else GB_ERROR_INVALID_ARGUMENT. */
gboolean cli_qga_check_agent_path(const char *path, GError **error);
/*
 * Checks a guest-info reply: guest-exec and guest-exec-status must be listed
 * and enabled; the error names the qemu-ga option that disables them.
 */
gboolean cli_qga_check_info(JsonNode *info, GError **error);
/* The guest-exec arguments that run `AGENT --oneshot {"execute": ..., "arguments": ...}`. */
JsonObject *cli_qga_build_exec_args(const char *agent_path, const char *execute,
                                    JsonObject *arguments);
/* A guest-exec error made precise (a missing agent binary says so and how to fix it). */
GError *cli_qga_exec_error(const GError *error, const char *agent_path);

/* A decoded guest-exec-status reply. */
typedef struct {
	gboolean exited;
	gboolean has_exitcode;
	gint64 exitcode;
	gint64 signal; /* 0 when the process was not killed by a signal */
	GBytes *out;   /* decoded out-data, NULL when absent */
	GBytes *err;   /* decoded err-data, NULL when absent */
	gboolean out_truncated;
	gboolean err_truncated;
} CliQgaExecStatus;

void cli_qga_exec_status_free(CliQgaExecStatus *status);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(CliQgaExecStatus, cli_qga_exec_status_free)

/* Validates a guest-exec-status reply (typed accessors, strict base64). */
CliQgaExecStatus *cli_qga_parse_exec_status(JsonNode *ret, GError **error);
/*
 * The reply of an exited agent: the "return" value (owned), or NULL with the
 * agent's error reply (as gb_reply_parse() gives it), or a precise error for
 * a non-zero exit, a signal, truncated or missing output, or output that is
 * not exactly one reply within max_reply_size.
 */
JsonNode *cli_qga_decode_reply(const CliQgaExecStatus *status, const char *execute,
                               const char *agent_path, gsize max_reply_size, GError **error);

G_END_DECLS
