/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What every collector uses, on every platform (common.h). */
#include "common.h"
#include "gb-isa.h"

gboolean agent_facts_is_token(const char *str)
{
	if (str == NULL || str[0] == '\0')
		return FALSE;
	for (const char *p = str; *p != '\0'; p++) {
		if (!g_ascii_isgraph(*p))
			return FALSE;
	}
	return TRUE;
}

void agent_facts_add_error(AgentFactsContext *ctx, const char *member, const char *reason)
{
	JsonObject *obj;

	if (ctx->errors == NULL)
		return;
	obj = json_object_new();
	json_object_set_string_member(obj, "member", member);
	json_object_set_string_member(obj, "reason", reason);
	json_array_add_object_element(ctx->errors, obj);
}

gboolean agent_facts_cpuid(AgentFactsContext *ctx, guint32 leaf, guint32 subleaf, guint32 regs[4])
{
	if (ctx->cpuid != NULL)
		return ctx->cpuid(leaf, subleaf, regs, ctx->cpuid_data);
	/* the raw instruction: callers check the maximum leaves themselves */
	return gb_isa_cpuid_live(leaf, subleaf, regs, NULL);
}

void agent_facts_builder_add_string(JsonBuilder *builder, const char *member, const char *value)
{
	json_builder_set_member_name(builder, member);
	if (value != NULL)
		json_builder_add_string_value(builder, value);
	else
		json_builder_add_null_value(builder);
}

void agent_facts_builder_add_int_or_null(JsonBuilder *builder, const char *member, gboolean ok,
                                         gint64 value)
{
	json_builder_set_member_name(builder, member);
	if (ok)
		json_builder_add_int_value(builder, value);
	else
		json_builder_add_null_value(builder);
}

void agent_facts_builder_add_strv(JsonBuilder *builder, const char *member, char **values)
{
	json_builder_set_member_name(builder, member);
	if (values == NULL) {
		json_builder_add_null_value(builder);
		return;
	}
	json_builder_begin_array(builder);
	for (guint i = 0; values[i] != NULL; i++)
		json_builder_add_string_value(builder, values[i]);
	json_builder_end_array(builder);
}

gboolean agent_facts_wait_window(guint window_ms, gint *cancel, GError **error)
{
	gint64 until = g_get_monotonic_time() + (gint64)window_ms * 1000;

	while (g_get_monotonic_time() < until) {
		if (cancel != NULL && g_atomic_int_get(cancel) != 0) {
			g_set_error_literal(error, GB_ERROR, GB_ERROR_FAILED, "cancelled");
			return FALSE;
		}
		g_usleep((gulong)MIN(10000, MAX(until - g_get_monotonic_time(), 1)));
	}
	return TRUE;
}
