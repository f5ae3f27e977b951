/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "util.h"

#define CLOCK_DIR "/sys/devices/system/clocksource/clocksource0"

JsonNode *agent_facts_collect_clocksource(AgentFactsContext *ctx)
{
	g_autoptr(JsonBuilder) builder = json_builder_new();
	g_autoptr(GError) error_cur = NULL;
	g_autoptr(GError) error_avail = NULL;
	g_autofree char *current =
	    agent_facts_read_line(ctx->sysroot, CLOCK_DIR "/current_clocksource", &error_cur);
	g_autofree char *available =
	    agent_facts_read_text(ctx->sysroot, CLOCK_DIR "/available_clocksource", &error_avail);
	g_auto(GStrv) names = NULL;

	if (current != NULL && !agent_facts_is_token(current)) {
		g_set_error_literal(&error_cur, GB_ERROR, GB_ERROR_PARSE,
		                    CLOCK_DIR "/current_clocksource: not a clocksource name");
		g_clear_pointer(&current, g_free);
	}
	if (available != NULL) {
		g_auto(GStrv) tokens = g_strsplit_set(available, " \t\n", -1);
		g_autoptr(GStrvBuilder) list = g_strv_builder_new();
		gboolean ok = TRUE;

		for (guint i = 0; tokens[i] != NULL; i++) {
			if (tokens[i][0] == '\0')
				continue;
			if (!agent_facts_is_token(tokens[i]))
				ok = FALSE;
			g_strv_builder_add(list, tokens[i]);
		}
		names = g_strv_builder_end(list);
		if (!ok || names[0] == NULL) {
			g_set_error_literal(&error_avail, GB_ERROR, GB_ERROR_PARSE,
			                    CLOCK_DIR "/available_clocksource: not a list of "
			                              "clocksource names");
			g_clear_pointer(&names, g_strfreev);
		}
	}

	json_builder_begin_object(builder);
	agent_facts_builder_add_string(builder, "current", current);
	if (current == NULL)
		agent_facts_add_error(ctx, "clocksource.current", error_cur->message);
	json_builder_set_member_name(builder, "available");
	if (names != NULL) {
		json_builder_begin_array(builder);
		for (guint i = 0; names[i] != NULL; i++)
			json_builder_add_string_value(builder, names[i]);
		json_builder_end_array(builder);
	} else {
		json_builder_add_null_value(builder);
		agent_facts_add_error(ctx, "clocksource.available", error_avail->message);
	}
	json_builder_end_object(builder);
	return json_builder_get_root(builder);
}
