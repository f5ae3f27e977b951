/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <string.h>

#include "analysis/audit.h"

static const char *const level_names[CLI_LEVEL_COUNT] = { "PASS", "NOTE", "WARN", "FAIL" };

CliFinding *cli_finding_new(const char *rule, CliLevel level, const char *subject,
                            const char *detail, const char *hint)
{
	CliFinding *finding = g_new0(CliFinding, 1);
	finding->rule = g_strdup(rule != NULL ? rule : "");
	finding->level = level;
	finding->subject = g_strdup(subject != NULL ? subject : "");
	finding->detail = g_strdup(detail != NULL ? detail : "");
	finding->hint = g_strdup(hint);
	return finding;
}

void cli_finding_free(CliFinding *finding)
{
	if (finding == NULL)
		return;
	g_free(finding->rule);
	g_free(finding->subject);
	g_free(finding->detail);
	g_free(finding->hint);
	g_free(finding);
}

const char *cli_level_to_string(CliLevel level)
{
	if ((guint)level >= CLI_LEVEL_COUNT)
		return "UNKNOWN";
	return level_names[level];
}

gboolean cli_level_from_string(const char *str, CliLevel *out)
{
	if (str == NULL)
		return FALSE;
	for (guint i = 0; i < CLI_LEVEL_COUNT; i++) {
		if (g_ascii_strcasecmp(str, level_names[i]) == 0) {
			if (out != NULL)
				*out = (CliLevel)i;
			return TRUE;
		}
	}
	return FALSE;
}

CliLevel cli_audit_worst(GPtrArray *findings)
{
	CliLevel worst = CLI_LEVEL_PASS;
	if (findings == NULL)
		return worst;
	for (guint i = 0; i < findings->len; i++) {
		CliFinding *finding = g_ptr_array_index(findings, i);
		if (finding->level > worst)
			worst = finding->level;
	}
	return worst;
}

JsonNode *cli_audit_findings_to_json(GPtrArray *findings)
{
	g_autoptr(JsonBuilder) builder = json_builder_new();

	json_builder_begin_array(builder);
	for (guint i = 0; findings != NULL && i < findings->len; i++) {
		CliFinding *finding = g_ptr_array_index(findings, i);
		json_builder_begin_object(builder);
		json_builder_set_member_name(builder, "rule");
		json_builder_add_string_value(builder, finding->rule);
		json_builder_set_member_name(builder, "level");
		json_builder_add_string_value(builder, cli_level_to_string(finding->level));
		json_builder_set_member_name(builder, "subject");
		json_builder_add_string_value(builder, finding->subject);
		json_builder_set_member_name(builder, "detail");
		json_builder_add_string_value(builder, finding->detail);
		json_builder_set_member_name(builder, "hint");
		if (finding->hint != NULL)
			json_builder_add_string_value(builder, finding->hint);
		else
			json_builder_add_null_value(builder);
		json_builder_end_object(builder);
	}
	json_builder_end_array(builder);
	return json_builder_get_root(builder);
}

/* fleet summary */

static void cli_summary_rule_free(gpointer data)
{
	CliAuditSummaryRule *entry = data;
	g_free(entry->rule);
	for (guint i = 0; i < CLI_LEVEL_COUNT; i++)
		g_ptr_array_unref(entry->guests[i]);
	g_free(entry);
}

CliAuditSummary *cli_audit_summary_new(void)
{
	CliAuditSummary *summary = g_new0(CliAuditSummary, 1);
	summary->rules = g_ptr_array_new_with_free_func(cli_summary_rule_free);
	summary->by_id = g_hash_table_new(g_str_hash, g_str_equal);
	summary->unreachable = g_ptr_array_new_with_free_func(g_free);
	return summary;
}

void cli_audit_summary_free(CliAuditSummary *summary)
{
	if (summary == NULL)
		return;
	g_hash_table_unref(summary->by_id);
	g_ptr_array_unref(summary->unreachable);
	g_ptr_array_unref(summary->rules);
	g_free(summary);
}

static CliAuditSummaryRule *cli_summary_lookup(CliAuditSummary *summary, const char *rule)
{
	CliAuditSummaryRule *entry = g_hash_table_lookup(summary->by_id, rule);
	if (entry != NULL)
		return entry;
	entry = g_new0(CliAuditSummaryRule, 1);
	entry->rule = g_strdup(rule);
	for (guint i = 0; i < CLI_LEVEL_COUNT; i++)
		entry->guests[i] = g_ptr_array_new_with_free_func(g_free);
	g_ptr_array_add(summary->rules, entry);
	g_hash_table_insert(summary->by_id, entry->rule, entry);
	return entry;
}

void cli_audit_summary_add_unreachable(CliAuditSummary *summary, const char *guest)
{
	g_return_if_fail(summary != NULL);
	g_ptr_array_add(summary->unreachable, g_strdup(guest != NULL ? guest : ""));
}

void cli_audit_summary_add(CliAuditSummary *summary, const char *guest, GPtrArray *findings)
{
	/* rule id -> worst level for this guest, in the order first seen */
	g_autoptr(GHashTable) worst = g_hash_table_new(g_str_hash, g_str_equal);
	g_autoptr(GPtrArray) order = g_ptr_array_new();

	g_return_if_fail(summary != NULL);
	summary->n_guests++;
	for (guint i = 0; findings != NULL && i < findings->len; i++) {
		CliFinding *finding = g_ptr_array_index(findings, i);
		gpointer old;
		if ((guint)finding->level >= CLI_LEVEL_COUNT)
			continue;
		if (g_hash_table_lookup_extended(worst, finding->rule, NULL, &old)) {
			if ((CliLevel)GPOINTER_TO_UINT(old) >= finding->level)
				continue;
		} else {
			g_ptr_array_add(order, finding->rule);
		}
		g_hash_table_insert(worst, finding->rule, GUINT_TO_POINTER(finding->level));
	}
	for (guint i = 0; i < order->len; i++) {
		const char *rule = g_ptr_array_index(order, i);
		CliLevel level = GPOINTER_TO_UINT(g_hash_table_lookup(worst, rule));
		CliAuditSummaryRule *entry = cli_summary_lookup(summary, rule);
		entry->counts[level]++;
		g_ptr_array_add(entry->guests[level], g_strdup(guest != NULL ? guest : ""));
		if (level > summary->worst)
			summary->worst = level;
	}
}

/* Table order first, then rule ids the table does not know, as first seen. */
GPtrArray *cli_audit_summary_ordered(CliAuditSummary *summary)
{
	GPtrArray *ordered = g_ptr_array_new();
	g_autoptr(GHashTable) done = g_hash_table_new(g_direct_hash, g_direct_equal);
	guint n_rules = 0;
	const CliAuditRuleInfo *rules = cli_audit_rules(&n_rules);

	for (guint i = 0; i < n_rules; i++) {
		CliAuditSummaryRule *entry = g_hash_table_lookup(summary->by_id, rules[i].id);
		if (entry == NULL)
			continue;
		g_ptr_array_add(ordered, entry);
		g_hash_table_add(done, entry);
	}
	for (guint i = 0; i < summary->rules->len; i++) {
		CliAuditSummaryRule *entry = g_ptr_array_index(summary->rules, i);
		if (!g_hash_table_contains(done, entry))
			g_ptr_array_add(ordered, entry);
	}
	return ordered;
}

JsonNode *cli_audit_summary_to_json(CliAuditSummary *summary)
{
	g_autoptr(JsonBuilder) builder = json_builder_new();
	g_autoptr(GPtrArray) ordered = NULL;

	g_return_val_if_fail(summary != NULL, NULL);
	ordered = cli_audit_summary_ordered(summary);
	json_builder_begin_object(builder);
	json_builder_set_member_name(builder, "guests");
	json_builder_add_int_value(builder, summary->n_guests);
	json_builder_set_member_name(builder, "worst");
	json_builder_add_string_value(builder, cli_level_to_string(summary->worst));
	json_builder_set_member_name(builder, "rules");
	json_builder_begin_array(builder);
	for (guint i = 0; i < ordered->len; i++) {
		CliAuditSummaryRule *entry = g_ptr_array_index(ordered, i);
		json_builder_begin_object(builder);
		json_builder_set_member_name(builder, "rule");
		json_builder_add_string_value(builder, entry->rule);
		json_builder_set_member_name(builder, "counts");
		json_builder_begin_object(builder);
		for (guint level = 0; level < CLI_LEVEL_COUNT; level++) {
			json_builder_set_member_name(builder, level_names[level]);
			json_builder_add_int_value(builder, entry->counts[level]);
		}
		json_builder_end_object(builder);
		json_builder_set_member_name(builder, "guests");
		json_builder_begin_object(builder);
		for (guint level = 0; level < CLI_LEVEL_COUNT; level++) {
			GPtrArray *guests = entry->guests[level];
			json_builder_set_member_name(builder, level_names[level]);
			json_builder_begin_array(builder);
			for (guint j = 0; j < guests->len; j++)
				json_builder_add_string_value(builder,
				                              g_ptr_array_index(guests, j));
			json_builder_end_array(builder);
		}
		json_builder_end_object(builder);
		json_builder_end_object(builder);
	}
	json_builder_end_array(builder);
	json_builder_end_object(builder);
	return json_builder_get_root(builder);
}
