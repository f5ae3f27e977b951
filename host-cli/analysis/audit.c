/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <string.h>

#include "analysis/audit.h"

#include "analysis/facts-view.h"

#define CLI_LEVEL_COUNT (CLI_LEVEL_FAIL + 1)
/* Guest names listed per level in the summary table; JSON has them all. */
#define CLI_SUMMARY_MAX_NAMES 8

static const char *const level_names[CLI_LEVEL_COUNT] = { "PASS", "NOTE", "WARN", "FAIL" };
static const char *const level_colors[CLI_LEVEL_COUNT] = { "\033[32m", "\033[36m", "\033[33m",
	                                                   "\033[1;31m" };
#define CLI_COLOR_RESET "\033[0m"
#define CLI_COLOR_DIM "\033[2m"

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

static glong text_width(const char *escaped)
{
	/* escaped text is valid UTF-8: invalid bytes were turned into \xNN */
	return g_utf8_strlen(escaped, -1);
}

static void append_padded(GString *out, const char *text, glong width)
{
	g_string_append(out, text);
	for (glong i = text_width(text); i < width; i++)
		g_string_append_c(out, ' ');
}

void cli_audit_render_table(GString *out, const char *guest, GPtrArray *findings, gboolean color,
                            gboolean only_warn_fail)
{
	g_autofree char *guest_esc = cli_escape_text(guest);
	glong w_rule = 0;
	glong w_subject = 0;
	g_autoptr(GPtrArray) shown = g_ptr_array_new();

	if (findings == NULL)
		return;
	for (guint i = 0; i < findings->len; i++) {
		CliFinding *finding = g_ptr_array_index(findings, i);
		if (only_warn_fail && finding->level < CLI_LEVEL_WARN)
			continue;
		g_ptr_array_add(shown, finding);
	}

	/* escape once, measure, then print: widths are of what is printed */
	{
		g_autoptr(GPtrArray) rules = g_ptr_array_new_with_free_func(g_free);
		g_autoptr(GPtrArray) subjects = g_ptr_array_new_with_free_func(g_free);

		for (guint i = 0; i < shown->len; i++) {
			CliFinding *finding = g_ptr_array_index(shown, i);
			char *rule = cli_escape_text(finding->rule);
			char *subject = cli_escape_text(finding->subject);
			w_rule = MAX(w_rule, text_width(rule));
			w_subject = MAX(w_subject, text_width(subject));
			g_ptr_array_add(rules, rule);
			g_ptr_array_add(subjects, subject);
		}
		for (guint i = 0; i < shown->len; i++) {
			CliFinding *finding = g_ptr_array_index(shown, i);
			const char *level = cli_level_to_string(finding->level);

			g_string_append(out, guest_esc);
			g_string_append(out, "  ");
			if (color && (guint)finding->level < CLI_LEVEL_COUNT) {
				g_string_append(out, level_colors[finding->level]);
				g_string_append(out, level);
				g_string_append(out, CLI_COLOR_RESET);
			} else {
				g_string_append(out, level);
			}
			/* every level name is four characters wide */
			g_string_append(out, "  ");
			append_padded(out, g_ptr_array_index(rules, i), w_rule);
			g_string_append(out, "  ");
			append_padded(out, g_ptr_array_index(subjects, i), w_subject);
			g_string_append(out, "  ");
			cli_escape_append(out, finding->detail);
			g_string_append_c(out, '\n');
			if (finding->hint != NULL && finding->hint[0] != '\0') {
				g_string_append(out, "    ");
				if (color)
					g_string_append(out, CLI_COLOR_DIM);
				g_string_append(out, "hint: ");
				cli_escape_append(out, finding->hint);
				if (color)
					g_string_append(out, CLI_COLOR_RESET);
				g_string_append_c(out, '\n');
			}
		}
	}
}

/* CSV keeps CR/LF (quoted) but escapes every other control character. */
static void csv_append_guest_text(GString *out, const char *text)
{
	g_autoptr(GString) field = g_string_new(NULL);
	g_auto(GStrv) lines = g_strsplit(text != NULL ? text : "", "\n", -1);

	for (guint i = 0; lines[i] != NULL; i++) {
		g_auto(GStrv) parts = g_strsplit(lines[i], "\r", -1);
		if (i > 0)
			g_string_append_c(field, '\n');
		for (guint j = 0; parts[j] != NULL; j++) {
			if (j > 0)
				g_string_append_c(field, '\r');
			cli_escape_append(field, parts[j]);
		}
	}
	cli_csv_append_field(out, field->str);
}

void cli_csv_append_field(GString *out, const char *field)
{
	if (field == NULL)
		return;
	if (strpbrk(field, ",\"\r\n") == NULL) {
		g_string_append(out, field);
		return;
	}
	g_string_append_c(out, '"');
	for (const char *p = field; *p != '\0'; p++) {
		if (*p == '"')
			g_string_append_c(out, '"');
		g_string_append_c(out, *p);
	}
	g_string_append_c(out, '"');
}

void cli_audit_render_csv_header(GString *out)
{
	g_string_append(out, "guest,level,rule,subject,detail,hint\n");
}

void cli_audit_render_csv_rows(GString *out, const char *guest, GPtrArray *findings)
{
	for (guint i = 0; findings != NULL && i < findings->len; i++) {
		CliFinding *finding = g_ptr_array_index(findings, i);
		csv_append_guest_text(out, guest);
		g_string_append_c(out, ',');
		g_string_append(out, cli_level_to_string(finding->level));
		g_string_append_c(out, ',');
		csv_append_guest_text(out, finding->rule);
		g_string_append_c(out, ',');
		csv_append_guest_text(out, finding->subject);
		g_string_append_c(out, ',');
		csv_append_guest_text(out, finding->detail);
		g_string_append_c(out, ',');
		csv_append_guest_text(out, finding->hint);
		g_string_append_c(out, '\n');
	}
}

/* fleet summary */

typedef struct {
	char *rule;
	guint counts[CLI_LEVEL_COUNT];
	GPtrArray *guests[CLI_LEVEL_COUNT];
} CliSummaryRule;

struct _CliAuditSummary {
	guint n_guests;
	CliLevel worst;
	GPtrArray *rules;  /* CliSummaryRule, in the order first seen */
	GHashTable *by_id; /* rule id -> CliSummaryRule (borrowed) */
};

static void cli_summary_rule_free(gpointer data)
{
	CliSummaryRule *entry = data;
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
	return summary;
}

void cli_audit_summary_free(CliAuditSummary *summary)
{
	if (summary == NULL)
		return;
	g_hash_table_unref(summary->by_id);
	g_ptr_array_unref(summary->rules);
	g_free(summary);
}

static CliSummaryRule *cli_summary_lookup(CliAuditSummary *summary, const char *rule)
{
	CliSummaryRule *entry = g_hash_table_lookup(summary->by_id, rule);
	if (entry != NULL)
		return entry;
	entry = g_new0(CliSummaryRule, 1);
	entry->rule = g_strdup(rule);
	for (guint i = 0; i < CLI_LEVEL_COUNT; i++)
		entry->guests[i] = g_ptr_array_new_with_free_func(g_free);
	g_ptr_array_add(summary->rules, entry);
	g_hash_table_insert(summary->by_id, entry->rule, entry);
	return entry;
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
		CliSummaryRule *entry = cli_summary_lookup(summary, rule);
		entry->counts[level]++;
		g_ptr_array_add(entry->guests[level], g_strdup(guest != NULL ? guest : ""));
		if (level > summary->worst)
			summary->worst = level;
	}
}

/* Table order first, then rule ids the table does not know, as first seen. */
static GPtrArray *cli_summary_ordered(CliAuditSummary *summary)
{
	GPtrArray *ordered = g_ptr_array_new();
	g_autoptr(GHashTable) done = g_hash_table_new(g_direct_hash, g_direct_equal);
	guint n_rules = 0;
	const CliAuditRuleInfo *rules = cli_audit_rules(&n_rules);

	for (guint i = 0; i < n_rules; i++) {
		CliSummaryRule *entry = g_hash_table_lookup(summary->by_id, rules[i].id);
		if (entry == NULL)
			continue;
		g_ptr_array_add(ordered, entry);
		g_hash_table_add(done, entry);
	}
	for (guint i = 0; i < summary->rules->len; i++) {
		CliSummaryRule *entry = g_ptr_array_index(summary->rules, i);
		if (!g_hash_table_contains(done, entry))
			g_ptr_array_add(ordered, entry);
	}
	return ordered;
}

void cli_audit_summary_render_table(CliAuditSummary *summary, GString *out)
{
	g_autoptr(GPtrArray) ordered = NULL;
	glong w_rule = (glong)strlen("RULE");

	g_return_if_fail(summary != NULL);
	ordered = cli_summary_ordered(summary);
	for (guint i = 0; i < ordered->len; i++) {
		CliSummaryRule *entry = g_ptr_array_index(ordered, i);
		g_autofree char *rule = cli_escape_text(entry->rule);
		w_rule = MAX(w_rule, text_width(rule));
	}

	g_string_append_printf(out,
	                       "Audit summary: %u guest%s, worst level %s (columns count guests)\n",
	                       summary->n_guests, summary->n_guests == 1 ? "" : "s",
	                       cli_level_to_string(summary->worst));
	append_padded(out, "RULE", w_rule);
	g_string_append(out, "  PASS  NOTE  WARN  FAIL  NOT PASSING\n");
	for (guint i = 0; i < ordered->len; i++) {
		CliSummaryRule *entry = g_ptr_array_index(ordered, i);
		g_autofree char *rule = cli_escape_text(entry->rule);
		gboolean first = TRUE;

		append_padded(out, rule, w_rule);
		g_string_append_printf(out, "  %4u  %4u  %4u  %4u  ", entry->counts[CLI_LEVEL_PASS],
		                       entry->counts[CLI_LEVEL_NOTE], entry->counts[CLI_LEVEL_WARN],
		                       entry->counts[CLI_LEVEL_FAIL]);
		/* worst first: those are the guests to look at */
		for (gint level = CLI_LEVEL_FAIL; level > CLI_LEVEL_PASS; level--) {
			GPtrArray *guests = entry->guests[level];
			if (guests->len == 0)
				continue;
			if (!first)
				g_string_append(out, "; ");
			first = FALSE;
			g_string_append_printf(out, "%s: ", cli_level_to_string((CliLevel)level));
			for (guint j = 0; j < guests->len && j < CLI_SUMMARY_MAX_NAMES; j++) {
				if (j > 0)
					g_string_append(out, ", ");
				cli_escape_append(out, g_ptr_array_index(guests, j));
			}
			if (guests->len > CLI_SUMMARY_MAX_NAMES)
				g_string_append_printf(out, " (+%u more)",
				                       guests->len - CLI_SUMMARY_MAX_NAMES);
		}
		if (first)
			g_string_append(out, "-");
		g_string_append_c(out, '\n');
	}
}

JsonNode *cli_audit_summary_to_json(CliAuditSummary *summary)
{
	g_autoptr(JsonBuilder) builder = json_builder_new();
	g_autoptr(GPtrArray) ordered = NULL;

	g_return_val_if_fail(summary != NULL, NULL);
	ordered = cli_summary_ordered(summary);
	json_builder_begin_object(builder);
	json_builder_set_member_name(builder, "guests");
	json_builder_add_int_value(builder, summary->n_guests);
	json_builder_set_member_name(builder, "worst");
	json_builder_add_string_value(builder, cli_level_to_string(summary->worst));
	json_builder_set_member_name(builder, "rules");
	json_builder_begin_array(builder);
	for (guint i = 0; i < ordered->len; i++) {
		CliSummaryRule *entry = g_ptr_array_index(ordered, i);
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
