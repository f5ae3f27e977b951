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

/*
 * A session's own limits (execute -> limit), set by its command for a reply it
 * can size better than the table (a job's result, from what the job asked
 * for): *limits is created on first use, and freed with g_hash_table_unref().
 */
void cli_reply_limit_set(GHashTable **limits, const char *execute, gsize limit);
/* The session's own limit for execute if it set one, else the table's; never above cap. */
gsize cli_reply_limit_lookup(GHashTable *limits, const char *execute, gsize cap);

G_END_DECLS
