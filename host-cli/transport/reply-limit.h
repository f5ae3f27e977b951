/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * How large a reply to one command may be, fitted to what the command really
 * answers: a guest that sends more gets an error naming the limit, and the
 * bytes over it are skipped as they arrive (never stored, never parsed), so
 * one guest costs memory and parse time in proportion to what was asked of it.
 */

/* Replies to guest-sync-delimited, guest-ping, gb-bench-start/-cancel, and messages nobody asked
 * for. */
#define CLI_REPLY_LIMIT_SMALL (4 * 1024)

/* The limit for a reply to execute, never above cap (the session's largest reply). */
gsize cli_reply_limit(const char *execute, gsize cap);

G_END_DECLS
