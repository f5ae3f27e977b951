/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <glib.h>

#include "agent.h"

G_BEGIN_DECLS

/*
 * The command table: the single source of what the agent offers. The
 * returned array is sorted by name and ends with a {NULL} row.
 */
const AgentCommand *agent_commands_get(void);
/* NULL when no command has that name. */
const AgentCommand *agent_commands_lookup(const char *name);

/*
 * Whether name may run under the config's allow/block lists (entries may be
 * globs). As in qemu-ga: an allow list disables everything it does not name,
 * guest-sync* included; the block list wins over the allow list.
 */
gboolean agent_command_is_enabled(const AgentConfig *config, const char *name);
/* guest-sync-delimited: its reply is prefixed with 0xFF. */
gboolean agent_command_reply_delimited(const AgentCommand *cmd);

/* Built-in handlers (the gb-* ones live in facts/ and bench/). */
JsonNode *agent_cmd_sync(AgentContext *ctx, JsonObject *args, GError **error);
JsonNode *agent_cmd_ping(AgentContext *ctx, JsonObject *args, GError **error);
JsonNode *agent_cmd_info(AgentContext *ctx, JsonObject *args, GError **error);

G_END_DECLS
