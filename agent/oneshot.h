/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "agent.h"

G_BEGIN_DECLS

/* How often a one-shot gb-bench-start looks at its job (and for a cancel). */
#define AGENT_ONESHOT_JOB_POLL_MS 20

/*
 * --oneshot, on Linux and Windows alike: request is one QGA message from the
 * command line. Returns the reply to print (a framing error is a reply, as
 * on the port), or NULL with error (GB_ERROR_INVALID_ARGUMENT) when request
 * holds no message or more than one: a usage error.
 */
GString *agent_oneshot_reply(AgentContext *ctx, const char *request, GError **error);

/* Whether request is a gb-bench-start (its job is waited for: agent_oneshot_wait_job()). */
gboolean agent_oneshot_is_bench_start(const char *request);

/*
 * qemu-ga's guest-exec runs one process per request, so a job that a one-shot
 * agent started could never be polled: gb-bench-start waits for its job and
 * answers with the final gb-bench-status reply instead (PROTOCOL.md, "Through
 * qemu-ga"). Between two looks at the job, wait(user_data) waits up to
 * AGENT_ONESHOT_JOB_POLL_MS and returns TRUE when the job is to be cancelled
 * (SIGTERM/SIGINT on Linux, Ctrl-C/Ctrl-Break on Windows); the job then
 * reports "cancelled". Takes reply; returns the reply to print.
 */
GString *agent_oneshot_wait_job(AgentContext *ctx, GString *reply,
                                gboolean (*wait)(gpointer user_data), gpointer user_data);

G_END_DECLS
