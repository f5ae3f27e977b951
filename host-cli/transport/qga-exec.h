/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>

#include "transport/address.h"

G_BEGIN_DECLS

/*
 * The qemu-ga backend's pieces, without I/O (public for tests): which agent
 * binary runs in the guest, the guest-exec request, guest-exec-status
 * parsed and its output decoded into the agent's reply.
 */

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

/*
 * A one-shot gb-bench-start answers only when its job is over, with the job's
 * final status. *job: its job, 0 for a reply without one (a dry run). A final
 * status that says "running" is an error: no process runs that job any more,
 * and polling it would never end.
 */
gboolean cli_qga_check_final_status(JsonNode *reply, gint64 *job, GError **error);

G_END_DECLS
