/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "transport/address.h"
#include "transport/session-iface.h"

G_BEGIN_DECLS

/*
 * The direct session backend: one connection to an agent (or to qemu-ga,
 * for the qga backend), driven by non-blocking I/O on a GMainContext.
 * Opening connects, writes 0xFF + guest-sync-delimited with a random id and
 * discards everything (stale replies, parse errors, garbage) until the reply
 * carrying that id. Calls are then sent one at a time, each with its own id,
 * and replies matched by id. Each reply may be as large as its command's
 * limit (reply-limit.h, at most max_reply_size); the sync's and what comes
 * unasked, a few KiB, so stale replies are skipped unparsed. Callbacks get the channel as their
 * session.
 */
CliSession *cli_channel_open(const CliAddress *address, GMainContext *context, gsize max_reply_size,
                             CliSessionOpenFunc func, gpointer user_data);
void cli_channel_call(CliSession *channel, const char *execute, JsonObject *arguments,
                      CliSessionReplyFunc func, gpointer user_data);
gboolean cli_channel_is_open(const CliSession *channel);
char *cli_channel_describe_wait(const CliSession *channel);
void cli_channel_read_pending(CliSession *channel);
void cli_channel_set_reply_limit(CliSession *channel, const char *execute, gsize limit);
void cli_channel_close(CliSession *channel);

extern const CliSessionBackend cli_channel_backend;

G_END_DECLS
