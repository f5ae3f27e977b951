/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>

#include "transport/address.h"
#include "transport/session-iface.h"

G_BEGIN_DECLS

/*
 * One session with one guest's agent, whichever way it is reached (the
 * backends are in session-iface.h). Calls are sent one at a time in the order
 * issued. There is no timeout in here: the owner closes the session when its
 * deadline passes (see cli_session_describe_wait() for the reason to report).
 *
 * Never NULL; errors (also immediate ones) arrive through func from the main
 * context. The session keeps a copy of address. CLI_ADDRESS_UNIX and
 * CLI_ADDRESS_VSOCK get a channel (channel.h), CLI_ADDRESS_QGA and
 * CLI_ADDRESS_QGA_DOMAIN run the agent through qemu-ga (qga.h).
 */
CliSession *cli_session_open(const CliAddress *address, GMainContext *context, gsize max_reply_size,
                             CliSessionOpenFunc func, gpointer user_data);
/*
 * Queues a call; func gets the reply, or the error that ended the session.
 * arguments (may be NULL) is not consumed. After cli_session_close() no
 * callback fires.
 */
void cli_session_call(CliSession *session, const char *execute, JsonObject *arguments,
                      CliSessionReplyFunc func, gpointer user_data);
gboolean cli_session_is_open(const CliSession *session);
void cli_session_set_wait_func(CliSession *session, CliSessionWaitFunc func, gpointer user_data);
/*
 * Reads and handles what the guest has sent and the main loop has not read
 * yet; reply callbacks may run (and close the session). The owner calls it
 * before declaring a timeout: a reply that came in time while the loop was
 * busy elsewhere is not lost. A no-op for sessions without a socket.
 */
void cli_session_read_pending(CliSession *session);
/*
 * The size limit of replies to execute from now on, instead of the table's
 * (transport/reply-limit.c), never above the session's cap: for a reply the
 * command can size from what it asked, a benchmark job's result.
 */
void cli_session_set_reply_limit(CliSession *session, const char *execute, gsize limit);
/* What the session is waiting for, and what it threw away: the reason for a timeout. */
char *cli_session_describe_wait(const CliSession *session);
/*
 * Ctrl-C for a call that cannot be cancelled by a request of its own: a
 * one-shot benchmark through qemu-ga (see cli_qga_interrupt()). A no-op for
 * every other session.
 */
void cli_session_interrupt(CliSession *session);
/* Closes the connection, drops pending calls; safe from inside a callback. */
void cli_session_close(CliSession *session);

G_END_DECLS
