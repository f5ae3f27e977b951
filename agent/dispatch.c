/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include "commands.h"
#include "dispatch.h"

GString *agent_dispatch_framing_error(const GError *error)
{
	g_debug("framing error: %s", error->message);
	return gb_reply_error(error, NULL);
}

GString *agent_dispatch_message(AgentContext *ctx, const char *msg, gsize len)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(JsonNode) id = NULL;
	g_autoptr(GbRequest) req = NULL;
	g_autoptr(JsonNode) result = NULL;
	const AgentCommand *cmd;

	req = gb_request_parse(msg, len, &id, &error);
	if (req == NULL) {
		g_debug("bad request: %s", error->message);
		return gb_reply_error(error, id);
	}
	cmd = agent_commands_lookup(req->execute);
	if (cmd == NULL) {
		g_set_error(&error, GB_ERROR, GB_ERROR_COMMAND_NOT_FOUND,
		            "The command %s has not been found", req->execute);
		return gb_reply_error(error, req->id);
	}
	if (!agent_command_is_enabled(ctx->config, cmd->name)) {
		g_set_error(&error, GB_ERROR, GB_ERROR_COMMAND_DISABLED,
		            "Command %s has been disabled", cmd->name);
		return gb_reply_error(error, req->id);
	}
	g_debug("running %s", cmd->name);
	result = cmd->func(ctx, req->arguments, &error);
	if (result == NULL) {
		/* a handler that fails without saying why is a bug; still answer */
		if (error == NULL)
			g_set_error(&error, GB_ERROR, GB_ERROR_FAILED, "%s failed", cmd->name);
		g_debug("%s failed: %s", cmd->name, error->message);
		return gb_reply_error(error, req->id);
	}
	if (!cmd->success_response)
		return NULL;
	if (agent_command_reply_delimited(cmd))
		return gb_reply_return_delimited(result, req->id);
	return gb_reply_return(result, req->id);
}
