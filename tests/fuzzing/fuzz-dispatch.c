/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One framed message through the agent's real dispatcher: every command in
 * the table with fuzzed arguments. Three rewrites keep a run fast and local
 * without hiding a code path: gb-bench-start always runs in dry-run mode
 * (validates, starts nothing), gb-get-facts samples steal time once instead
 * of sleeping, and facts come from a fixture sysroot.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "agent-config.h"
#include "bench.h"
#include "dispatch.h"
#include "fuzz.h"
#include "guestbench-protocol.h"

static AgentContext *fuzz_dispatch_context(void)
{
	static AgentContext ctx;
	static AgentConfig *config;

	if (config != NULL)
		return &ctx;
	config = agent_config_new();
	g_free(config->sysroot);
	config->sysroot = g_strdup(FUZZ_FACTS_SYSROOT);
	/* dry runs never write; a path that cannot exist makes sure of it */
	g_free(config->scratch_dir);
	config->scratch_dir = g_strdup("/nonexistent/guestbench-fuzz");
	config->max_bench_seconds = 30;
	ctx.config = config;
	return &ctx;
}

/* TRUE when node is a JSON boolean. */
static gboolean fuzz_is_bool(JsonNode *node)
{
	return JSON_NODE_HOLDS_VALUE(node) && json_node_get_value_type(node) == G_TYPE_BOOLEAN;
}

/*
 * Rewrites the request when it would run a benchmark or sleep; returns NULL
 * when the message can go to the dispatcher as it is.
 */
static GString *fuzz_dispatch_rewrite(const char *msg, gsize len)
{
	g_autoptr(GbRequest) req = gb_request_parse(msg, len, NULL, NULL);
	JsonObject *args;

	if (req == NULL)
		return NULL;
	/* no arguments would mean the default 200 ms steal sample */
	if (req->arguments == NULL && g_strcmp0(req->execute, "gb-get-facts") == 0)
		req->arguments = json_object_new();
	if (req->arguments == NULL)
		return NULL;
	args = req->arguments;
	if (g_strcmp0(req->execute, "gb-bench-start") == 0) {
		JsonNode *params = json_object_get_member(args, "params");

		if (params == NULL) {
			JsonObject *p = json_object_new();
			json_object_set_boolean_member(p, "dry_run", TRUE);
			json_object_set_object_member(args, "params", p);
		} else if (JSON_NODE_HOLDS_OBJECT(params)) {
			JsonObject *p = json_node_get_object(params);
			JsonNode *dry = json_object_get_member(p, "dry_run");
			/* a dry_run of the wrong type is refused before anything starts */
			if (dry == NULL || fuzz_is_bool(dry))
				json_object_set_boolean_member(p, "dry_run", TRUE);
		} else {
			return NULL;
		}
	} else if (g_strcmp0(req->execute, "gb-get-facts") == 0) {
		JsonNode *window = json_object_get_member(args, "steal_window_ms");

		if (window == NULL || (JSON_NODE_HOLDS_VALUE(window) &&
		                       json_node_get_value_type(window) == G_TYPE_INT64 &&
		                       json_node_get_int(window) > 0))
			json_object_set_int_member(args, "steal_window_ms", 0);
	} else {
		return NULL;
	}
	return gb_request_build(req->execute, args, req->id);
}

/* The reply must be one line the CLI's decoder reads back. */
static void fuzz_check_reply(GString *reply)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(JsonNode) id = NULL;
	g_autoptr(JsonNode) ret = NULL;
	const char *line;
	gsize len;

	if (reply == NULL)
		abort();
	line = reply->str;
	len = reply->len;
	if ((guint8)line[0] == 0xff) {
		line++;
		len--;
	}
	if (len < 2 || line[len - 1] != '\n' || memchr(line, '\n', len - 1) != NULL)
		abort();
	if (!g_utf8_validate(line, (gssize)len, NULL))
		abort();
	ret = gb_reply_parse(line, len - 1, &id, &error);
	/* an error reply reads back as the peer's error, never as a malformed line */
	if (ret == NULL && (error == NULL || (error->code != GB_ERROR_REMOTE &&
	                                      error->code != GB_ERROR_COMMAND_NOT_FOUND)))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	AgentContext *ctx = fuzz_dispatch_context();
	g_autofree char *msg = NULL;
	g_autoptr(GString) rewritten = NULL;
	g_autoptr(GString) reply = NULL;

	/* the framer hands the dispatcher at most this much, NUL-terminated */
	if (size == 0 || size > 64 * 1024)
		return 0;
	msg = g_strndup((const char *)data, size);
	if (strlen(msg) != size)
		return 0;
	rewritten = fuzz_dispatch_rewrite(msg, size);
	if (rewritten != NULL) {
		/* gb_request_build ends the line with "\n": the framer would not pass it */
		if (rewritten->len > 0 && rewritten->str[rewritten->len - 1] == '\n')
			g_string_truncate(rewritten, rewritten->len - 1);
		reply = agent_dispatch_message(ctx, rewritten->str, rewritten->len);
	} else {
		reply = agent_dispatch_message(ctx, msg, size);
	}
	fuzz_check_reply(reply);
	return 0;
}
