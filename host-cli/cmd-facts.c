/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The facts and audit commands. Both ask each guest for gb-get-facts; audit
 * then runs the rules here in the CLI, so an old agent is audited by new rules.
 */
#include "config.h"

#include "guestbench-protocol.h"

#include "audit.h"
#include "cmd-facts.h"
#include "facts-view.h"

static char *cli_facts_opt_sections = NULL;
static int cli_facts_opt_steal_ms = -1;
static gboolean cli_audit_opt_list_rules = FALSE;
static gboolean cli_audit_opt_no_summary = FALSE;

/* Builds the gb-get-facts arguments from the command's options; NULL = agent defaults. */
static JsonObject *cli_facts_build_args(void)
{
	JsonObject *args = NULL;

	if (cli_facts_opt_sections == NULL && cli_facts_opt_steal_ms < 0)
		return NULL;
	args = json_object_new();
	if (cli_facts_opt_sections != NULL) {
		g_auto(GStrv) names = g_strsplit(cli_facts_opt_sections, ",", -1);
		JsonArray *arr = json_array_new();

		for (guint i = 0; names[i] != NULL; i++)
			json_array_add_string_element(arr, g_strstrip(names[i]));
		json_object_set_array_member(args, "sections", arr);
	}
	if (cli_facts_opt_steal_ms >= 0)
		json_object_set_int_member(args, "steal_window_ms", cli_facts_opt_steal_ms);
	return args;
}

gboolean cli_facts_prepare(CliApp *app, GPtrArray *args, GError **error)
{
	if (cli_facts_opt_sections != NULL) {
		g_auto(GStrv) names = g_strsplit(cli_facts_opt_sections, ",", -1);

		for (guint i = 0; names[i] != NULL; i++) {
			if (*g_strstrip(names[i]) == '\0') {
				g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
				            "--sections: empty section name in '%s'",
				            cli_facts_opt_sections);
				return FALSE;
			}
		}
	}
	if (cli_facts_opt_steal_ms > 5000) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "--steal-window %d is out of range (allowed 0..5000 ms)",
		            cli_facts_opt_steal_ms);
		return FALSE;
	}
	return TRUE;
}

/* The facts the guest sent, checked to be an object before anything reads it. */
static JsonNode *cli_facts_take(JsonNode *ret, GError **error)
{
	JsonObject *obj = NULL;

	if (!gb_json_node_get_object(ret, "return", &obj, error)) {
		g_prefix_error(error, "invalid gb-get-facts reply: ");
		return NULL;
	}
	return json_node_copy(ret);
}

static void cli_facts_reply_cb(CliSession *session, JsonNode *ret, const GError *error,
                               gpointer user_data)
{
	CliGuest *guest = user_data;
	g_autoptr(GError) local_error = NULL;
	JsonNode *facts = NULL;

	if (error != NULL) {
		cli_guest_finish(guest, NULL, error);
		return;
	}
	facts = cli_facts_take(ret, &local_error);
	cli_guest_finish(guest, facts, local_error);
}

void cli_facts_start(CliGuest *guest, CliSession *session)
{
	g_autoptr(JsonObject) args = cli_facts_build_args();

	cli_session_call(session, "gb-get-facts", args, cli_facts_reply_cb, guest);
}

static void cli_render_guest_error(GString *out, CliGuest *guest, gboolean color)
{
	g_autofree char *name = cli_escape_text(guest->target->name);
	g_autofree char *msg = cli_escape_text(guest->error != NULL ? guest->error : "not run");

	g_string_append_printf(out, "%s%s%s  %s: %s\n", color ? "\033[1;31m" : "", name,
	                       color ? "\033[0m" : "", cli_guest_status_to_string(guest->status),
	                       msg);
}

GString *cli_facts_render_text(CliApp *app, gboolean color)
{
	GString *out = g_string_new(NULL);

	for (guint i = 0; i < app->guests->len; i++) {
		CliGuest *guest = g_ptr_array_index(app->guests, i);
		JsonObject *facts = NULL;

		if (guest->status != CLI_GUEST_OK) {
			cli_render_guest_error(out, guest, color);
			continue;
		}
		if (app->opts.quiet)
			continue;
		if (!gb_json_node_get_object(guest->result, "facts", &facts, NULL))
			continue;
		cli_facts_render_table(out, guest->target->name, facts, color);
		if (i + 1 < app->guests->len)
			g_string_append_c(out, '\n');
	}
	return out;
}

GString *cli_facts_render_csv(CliApp *app)
{
	GString *out = g_string_new(NULL);

	cli_facts_render_csv_header(out);
	for (guint i = 0; i < app->guests->len; i++) {
		CliGuest *guest = g_ptr_array_index(app->guests, i);
		JsonObject *facts = NULL;

		if (guest->status != CLI_GUEST_OK ||
		    !gb_json_node_get_object(guest->result, "facts", &facts, NULL)) {
			/* an unreachable guest is a row too, so a spreadsheet shows the gap */
			cli_csv_append_field(out, guest->target->name);
			g_string_append(out, ",status,,");
			cli_csv_append_field(out, cli_guest_status_to_string(guest->status));
			g_string_append_c(out, ',');
			cli_csv_append_field(out, guest->error != NULL ? guest->error : "");
			g_string_append_c(out, '\n');
			continue;
		}
		cli_facts_render_csv_rows(out, guest->target->name, facts);
	}
	return out;
}

/* ---- audit ------------------------------------------------------------------------------ */

static void cli_audit_reply_cb(CliSession *session, JsonNode *ret, const GError *error,
                               gpointer user_data)
{
	CliGuest *guest = user_data;
	g_autoptr(GError) local_error = NULL;
	g_autoptr(JsonNode) facts = NULL;
	g_autoptr(GPtrArray) findings = NULL;
	g_autoptr(JsonBuilder) builder = NULL;
	CliLevel worst;

	if (error != NULL) {
		cli_guest_finish(guest, NULL, error);
		return;
	}
	facts = cli_facts_take(ret, &local_error);
	if (facts == NULL) {
		cli_guest_finish(guest, NULL, local_error);
		return;
	}
	findings = cli_audit_run(json_node_get_object(facts));
	worst = cli_audit_worst(findings);
	if (worst == CLI_LEVEL_FAIL)
		guest->app->fail_finding = TRUE;

	builder = json_builder_new();
	json_builder_begin_object(builder);
	json_builder_set_member_name(builder, "worst");
	json_builder_add_string_value(builder, cli_level_to_string(worst));
	json_builder_set_member_name(builder, "findings");
	json_builder_add_value(builder, cli_audit_findings_to_json(findings));
	json_builder_end_object(builder);
	cli_guest_finish(guest, json_builder_get_root(builder), NULL);
}

void cli_audit_start(CliGuest *guest, CliSession *session)
{
	cli_session_call(session, "gb-get-facts", NULL, cli_audit_reply_cb, guest);
}

/* Reads back the findings this command stored in a guest's result. */
static GPtrArray *cli_audit_findings_from_result(JsonNode *result)
{
	GPtrArray *findings = g_ptr_array_new_with_free_func((GDestroyNotify)cli_finding_free);
	JsonObject *obj = NULL;
	JsonArray *arr = NULL;

	if (!gb_json_node_get_object(result, "result", &obj, NULL) ||
	    !gb_json_get_array(obj, "findings", GB_JSON_REQUIRED, &arr, NULL))
		return findings;
	for (guint i = 0; i < json_array_get_length(arr); i++) {
		JsonObject *f = NULL;
		const char *rule = NULL, *level = NULL, *subject = NULL, *detail = NULL;
		const char *hint = NULL;
		CliLevel lvl;

		if (!gb_json_node_get_object(json_array_get_element(arr, i), "finding", &f, NULL) ||
		    !gb_json_get_string(f, "rule", GB_JSON_REQUIRED, &rule, NULL) ||
		    !gb_json_get_string(f, "level", GB_JSON_REQUIRED, &level, NULL) ||
		    !gb_json_get_string(f, "subject", GB_JSON_REQUIRED, &subject, NULL) ||
		    !gb_json_get_string(f, "detail", GB_JSON_REQUIRED, &detail, NULL) ||
		    !gb_json_get_string(f, "hint", GB_JSON_OPTIONAL, &hint, NULL) ||
		    !cli_level_from_string(level, &lvl))
			continue;
		g_ptr_array_add(findings, cli_finding_new(rule, lvl, subject, detail, hint));
	}
	return findings;
}

GString *cli_audit_render_text(CliApp *app, gboolean color)
{
	GString *out = g_string_new(NULL);
	g_autoptr(CliAuditSummary) summary = cli_audit_summary_new();
	guint n_ok = 0;

	for (guint i = 0; i < app->guests->len; i++) {
		CliGuest *guest = g_ptr_array_index(app->guests, i);
		g_autoptr(GPtrArray) findings = NULL;

		if (guest->status != CLI_GUEST_OK) {
			cli_render_guest_error(out, guest, color);
			continue;
		}
		findings = cli_audit_findings_from_result(guest->result);
		cli_audit_render_table(out, guest->target->name, findings, color, app->opts.quiet);
		cli_audit_summary_add(summary, guest->target->name, findings);
		n_ok++;
	}
	if (n_ok > 1 && !cli_audit_opt_no_summary) {
		g_string_append_c(out, '\n');
		cli_audit_summary_render_table(summary, out);
	}
	return out;
}

GString *cli_audit_render_csv(CliApp *app)
{
	GString *out = g_string_new(NULL);

	cli_audit_render_csv_header(out);
	for (guint i = 0; i < app->guests->len; i++) {
		CliGuest *guest = g_ptr_array_index(app->guests, i);
		g_autoptr(GPtrArray) findings = NULL;

		if (guest->status != CLI_GUEST_OK) {
			/* the unreachable guest as a finding-shaped row: nothing silently missing
			 */
			g_autoptr(GPtrArray) row =
			    g_ptr_array_new_with_free_func((GDestroyNotify)cli_finding_free);

			g_ptr_array_add(
			    row, cli_finding_new("GUEST-UNREACHABLE", CLI_LEVEL_FAIL,
			                         cli_guest_status_to_string(guest->status),
			                         guest->error != NULL ? guest->error : "", NULL));
			cli_audit_render_csv_rows(out, guest->target->name, row);
			continue;
		}
		findings = cli_audit_findings_from_result(guest->result);
		cli_audit_render_csv_rows(out, guest->target->name, findings);
	}
	return out;
}

/* --list-rules needs no guest: the rule table is printed like help, and nothing runs. */
gboolean cli_audit_prepare(CliApp *app, GPtrArray *args, GError **error)
{
	guint n = 0;
	const CliAuditRuleInfo *rules = NULL;
	GString *text = NULL;

	if (!cli_audit_opt_list_rules)
		return TRUE;
	rules = cli_audit_rules(&n);
	text = g_string_new(NULL);
	for (guint i = 0; i < n; i++)
		g_string_append_printf(text, "%-22s %-4s  %s\n", rules[i].id,
		                       cli_level_to_string(rules[i].level), rules[i].summary);
	g_free(app->help_text);
	app->help_text = g_string_free(text, FALSE);
	app->action = CLI_ACTION_HELP;
	return TRUE;
}

const GOptionEntry cli_facts_entries[] = {
	{ "sections", 0, 0, G_OPTION_ARG_STRING, &cli_facts_opt_sections,
	  "Only these fact sections (comma list of cpu, memory, clocksource, steal, block, net, "
	  "os)",
	  "LIST" },
	{ "steal-window", 0, 0, G_OPTION_ARG_INT, &cli_facts_opt_steal_ms,
	  "Sample steal time over MS milliseconds (0..5000; default 200)", "MS" },
	{ NULL }
};

const GOptionEntry cli_audit_entries[] = {
	{ "list-rules", 0, 0, G_OPTION_ARG_NONE, &cli_audit_opt_list_rules,
	  "List the audit rules with their level and exit", NULL },
	{ "no-summary", 0, 0, G_OPTION_ARG_NONE, &cli_audit_opt_no_summary,
	  "Do not print the fleet summary after the findings", NULL },
	{ NULL }
};
