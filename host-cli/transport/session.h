/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>

#include "transport/address.h"

G_BEGIN_DECLS

/*
 * One QGA session with one guest, driven by non-blocking I/O on a
 * GMainContext. Opening connects, writes 0xFF + guest-sync-delimited with a
 * random id and discards everything (stale replies, parse errors, garbage)
 * until the reply carrying that id. Calls are then sent one at a time, each
 * with its own id, and replies matched by id. There is no timeout in here:
 * the owner closes the session when its deadline passes (see
 * cli_session_describe_wait() for the reason to report).
 */
typedef struct _CliSession CliSession;

/* error is NULL once the session is open. */
typedef void (*CliSessionOpenFunc)(CliSession *session, const GError *error, gpointer user_data);
/* Exactly one of ret (borrowed, the "return" value) and error is set. */
typedef void (*CliSessionReplyFunc)(CliSession *session, JsonNode *ret, const GError *error,
                                    gpointer user_data);

/*
 * Never NULL; errors (also immediate ones) arrive through func from the main
 * context. The session keeps a copy of address. CLI_ADDRESS_QGA and
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
/*
 * Called while a call is waited for in steps (a qemu-ga address polls
 * guest-exec-status): which call and for how long so far. keepalive says the
 * guest answered and works on a long call (a benchmark), so the owner may
 * re-arm its deadline. Direct sessions never call it.
 */
typedef void (*CliSessionWaitFunc)(CliSession *session, const char *execute, double elapsed,
                                   gboolean keepalive, gpointer user_data);
void cli_session_set_wait_func(CliSession *session, CliSessionWaitFunc func, gpointer user_data);
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
