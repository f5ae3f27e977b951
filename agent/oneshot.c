/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <string.h>

#include "bench.h"
#include "dispatch.h"
#include "gb-error.h"
#include "gb-framer.h"
#include "gb-json.h"
#include "gb-message.h"
#include "oneshot.h"

typedef struct {
	AgentContext *ctx;
	GString *reply;
	guint count;
} AgentOneshot;

static gboolean agent_oneshot_cb(const char *msg, gsize len, const GError *error,
                                 gpointer user_data)
{
	AgentOneshot *oneshot = user_data;

	oneshot->count++;
	if (oneshot->count > 1)
		return FALSE;
	oneshot->reply = msg == NULL ? agent_dispatch_framing_error(error)
	                             : agent_dispatch_message(oneshot->ctx, msg, len);
	return TRUE;
}

GString *agent_oneshot_reply(AgentContext *ctx, const char *request, GError **error)
{
	const AgentConfig *config = ctx->config;
	g_autoptr(GbFramer) framer = gb_framer_new(config->max_message_size, config->max_depth);
	AgentOneshot oneshot = { .ctx = ctx };
	g_autoptr(GString) reply = NULL;

	gb_framer_push(framer, (const guint8 *)request, strlen(request), agent_oneshot_cb,
	               &oneshot);
	/* ends a top-level scalar */
	gb_framer_push(framer, (const guint8 *)"\n", 1, agent_oneshot_cb, &oneshot);
	reply = oneshot.reply;
	if (oneshot.count > 1) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		                    "--oneshot takes exactly one request");
		return NULL;
	}
	if (oneshot.count == 0 && gb_framer_is_partial(framer)) {
		g_autoptr(GError) parse = g_error_new_literal(
		    GB_ERROR, GB_ERROR_PARSE, "JSON parse error, unexpected end of input");
		return agent_dispatch_framing_error(parse);
	}
	if (oneshot.count == 0) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		                    "--oneshot needs a request, e.g. "
		                    "'{\"execute\": \"guest-ping\"}'");
		return NULL;
	}
	return g_steal_pointer(&reply);
}

gboolean agent_oneshot_is_bench_start(const char *request)
{
	g_autoptr(GbRequest) req = gb_request_parse(request, strlen(request), NULL, NULL);

	return req != NULL && g_strcmp0(req->execute, "gb-bench-start") == 0;
}

GString *agent_oneshot_wait_job(AgentContext *ctx, GString *reply_owned,
                                gboolean (*wait)(gpointer user_data), gpointer user_data)
{
	g_autoptr(GString) reply = reply_owned;
	g_autoptr(JsonNode) id = NULL;
	g_autoptr(JsonNode) ret = gb_reply_parse(reply->str, reply->len, &id, NULL);
	g_autoptr(JsonObject) args = json_object_new();
	JsonObject *obj = NULL;
	gint64 job = 0;

	/* an error or a dry run: no job runs */
	if (ret == NULL || !gb_json_node_get_object(ret, "reply", &obj, NULL) ||
	    !gb_json_get_int(obj, "job", GB_JSON_REQUIRED, 1, G_MAXINT64, &job, NULL))
		return g_steal_pointer(&reply);
	json_object_set_int_member(args, "job", job);
	for (;;) {
		g_autoptr(GError) error = NULL;
		g_autoptr(JsonNode) status = agent_cmd_bench_status(ctx, args, &error);
		const char *state = NULL;

		if (status == NULL || !gb_json_node_get_object(status, "status", &obj, &error) ||
		    !gb_json_get_string(obj, "state", GB_JSON_REQUIRED, &state, &error))
			return gb_reply_error(error, id);
		if (g_strcmp0(state, "running") != 0)
			return gb_reply_return(status, id);
		if (wait(user_data)) {
			g_autoptr(JsonNode) cancelled = agent_cmd_bench_cancel(ctx, args, NULL);
			g_debug("cancel asked, cancelling job %" G_GINT64_FORMAT, job);
		}
	}
}
