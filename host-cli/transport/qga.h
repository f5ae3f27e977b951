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
 * prints the cancelled status); asked before guest-exec has answered with the
 * pid, it sends the signal once it has. Through virsh the signal goes in a
 * virsh of its own, beside the one polling. A no-op when nothing of the kind
 * runs.
 */
CliSession *cli_qga_open(const CliAddress *address, GMainContext *context, gsize max_reply_size,
                         CliSessionOpenFunc open_func, gpointer user_data);

G_END_DECLS
