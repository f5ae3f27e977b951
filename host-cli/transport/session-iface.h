/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/*
 * The session interface: what every way of reaching a guest's agent offers
 * (session.h is the API its users call). A backend's struct begins with a
 * CliSession whose backend points at its table of operations:
 *
 * - channel.c: a direct connection to the agent (unix socket, vsock);
 * - qga.c: the agent run through qemu-ga's guest-exec, over a channel to
 *   qemu-ga's socket or through virsh qemu-agent-command.
 *
 * Backends call each other through their own headers, never through
 * session.c, which only picks the backend for an address and dispatches.
 */
typedef struct _CliSession CliSession;

/* error is NULL once the session is open. */
typedef void (*CliSessionOpenFunc)(CliSession *session, const GError *error, gpointer user_data);
/* Exactly one of ret (borrowed, the "return" value) and error is set. */
typedef void (*CliSessionReplyFunc)(CliSession *session, JsonNode *ret, const GError *error,
                                    gpointer user_data);
/*
 * Called while a call is waited for in steps (a qemu-ga address polls
 * guest-exec-status): which call and for how long so far. keepalive says the
 * guest answered and works on a long call (a benchmark), so the owner may
 * re-arm its deadline. Direct sessions never call it.
 */
typedef void (*CliSessionWaitFunc)(CliSession *session, const char *execute, double elapsed,
                                   gboolean keepalive, gpointer user_data);

/* A backend's operations; interrupt, set_wait_func and read_pending may be NULL (nothing to do). */
typedef struct {
	void (*call)(CliSession *session, const char *execute, JsonObject *arguments,
	             CliSessionReplyFunc func, gpointer user_data);
	gboolean (*is_open)(const CliSession *session);
	char *(*describe_wait)(const CliSession *session);
	void (*interrupt)(CliSession *session);
	void (*set_wait_func)(CliSession *session, CliSessionWaitFunc func, gpointer user_data);
	/* handles what has arrived and is not read yet, now (callbacks may run) */
	void (*read_pending)(CliSession *session);
	/* the limit of replies to execute from now on (reply-limit.h) */
	void (*set_reply_limit)(CliSession *session, const char *execute, gsize limit);
	/* closes and releases: no callback fires afterwards; safe from inside one */
	void (*close)(CliSession *session);
} CliSessionBackend;

struct _CliSession {
	const CliSessionBackend *backend;
};

G_END_DECLS
