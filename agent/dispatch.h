/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <glib.h>

#include "agent.h"

G_BEGIN_DECLS

/*
 * Decodes one framed message, runs the command and returns the reply line
 * (owned; 0xFF-prefixed for guest-sync-delimited). Every failure becomes an
 * error reply carrying the request's id when it had one. Returns NULL only for
 * a command registered without success response that succeeded.
 */
GString *agent_dispatch_message(AgentContext *ctx, const char *msg, gsize len);

/* The GenericError reply to a framing error (too large, too deep, parse). */
GString *agent_dispatch_framing_error(const GError *error);

G_END_DECLS
