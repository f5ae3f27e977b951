/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include "bench.h"
#include "commands.h"
#include "facts.h"

/*
 * Sorted by name: guest-info lists them in this order. The Windows agent
 * offers the benchmark commands too; its gb-bench-start knows the benchmarks
 * built for Windows (aes) and names them when asked for another.
 */
static const AgentCommand agent_commands[] = {
	{ "gb-bench-cancel", agent_cmd_bench_cancel, TRUE },
	{ "gb-bench-list", agent_cmd_bench_list, TRUE },
	{ "gb-bench-start", agent_cmd_bench_start, TRUE },
	{ "gb-bench-status", agent_cmd_bench_status, TRUE },
	{ "gb-get-facts", agent_cmd_get_facts, TRUE },
	{ "guest-info", agent_cmd_info, TRUE },
	{ "guest-ping", agent_cmd_ping, TRUE },
	{ "guest-sync", agent_cmd_sync, TRUE },
	{ "guest-sync-delimited", agent_cmd_sync, TRUE },
	{ NULL, NULL, FALSE },
};

const AgentCommand *agent_commands_get(void)
{
	return agent_commands;
}

const AgentCommand *agent_commands_lookup(const char *name)
{
	for (guint i = 0; agent_commands[i].name != NULL; i++) {
		if (g_strcmp0(agent_commands[i].name, name) == 0)
			return &agent_commands[i];
	}
	return NULL;
}

static gboolean agent_command_matches(char **patterns, const char *name)
{
	for (guint i = 0; patterns != NULL && patterns[i] != NULL; i++) {
		if (g_pattern_match_simple(patterns[i], name))
			return TRUE;
	}
	return FALSE;
}

gboolean agent_command_is_enabled(const AgentConfig *config, const char *name)
{
	if (config->allow_rpcs != NULL && !agent_command_matches(config->allow_rpcs, name))
		return FALSE;
	return !agent_command_matches(config->block_rpcs, name);
}

gboolean agent_command_reply_delimited(const AgentCommand *cmd)
{
	return g_strcmp0(cmd->name, "guest-sync-delimited") == 0;
}

JsonNode *agent_cmd_sync(AgentContext *ctx, JsonObject *args, GError **error)
{
	const char *const allowed[] = { "id", NULL };
	JsonNode *node;
	gint64 id = 0;

	if (args != NULL && !gb_json_check_members(args, allowed, error))
		return NULL;
	if (!gb_json_get_int(args, "id", GB_JSON_REQUIRED, G_MININT64, G_MAXINT64, &id, error))
		return NULL;
	node = json_node_new(JSON_NODE_VALUE);
	json_node_set_int(node, id);
	return node;
}

JsonNode *agent_cmd_ping(AgentContext *ctx, JsonObject *args, GError **error)
{
	const char *const allowed[] = { NULL };
	JsonNode *node;

	if (args != NULL && !gb_json_check_members(args, allowed, error))
		return NULL;
	node = json_node_alloc();
	/* take: init_object would add a second reference and leak the object */
	json_node_take_object(json_node_init(node, JSON_NODE_OBJECT), json_object_new());
	return node;
}

JsonNode *agent_cmd_info(AgentContext *ctx, JsonObject *args, GError **error)
{
	const char *const allowed[] = { NULL };
	g_autoptr(JsonBuilder) builder = json_builder_new();

	if (args != NULL && !gb_json_check_members(args, allowed, error))
		return NULL;
	json_builder_begin_object(builder);
	json_builder_set_member_name(builder, "version");
	json_builder_add_string_value(builder, GB_VERSION);
	json_builder_set_member_name(builder, "supported_commands");
	json_builder_begin_array(builder);
	for (guint i = 0; agent_commands[i].name != NULL; i++) {
		json_builder_begin_object(builder);
		json_builder_set_member_name(builder, "name");
		json_builder_add_string_value(builder, agent_commands[i].name);
		json_builder_set_member_name(builder, "enabled");
		json_builder_add_boolean_value(
		    builder, agent_command_is_enabled(ctx->config, agent_commands[i].name));
		json_builder_set_member_name(builder, "success-response");
		json_builder_add_boolean_value(builder, agent_commands[i].success_response);
		json_builder_end_object(builder);
	}
	json_builder_end_array(builder);
	json_builder_end_object(builder);
	return json_builder_get_root(builder);
}
