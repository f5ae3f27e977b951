/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The facts and audit commands. Both ask each guest for gb-get-facts; audit
 * then runs the rules here in the CLI, so an old agent is audited by new rules.
 */
#include "config.h"

#include "guestbench-protocol.h"

#include "commands/cmd-facts.h"
#include "commands/commands.h"
#include "render/facts-view.h"
#include "analysis/host-rules.h"
#include "analysis/rules-pve.h"
#include "fleet/hostview.h"
#include "render/prom.h"
#include "render/escape.h"
#include "render/csv.h"
#include "render/audit-view.h"

static char *cli_facts_opt_sections = NULL;
static int cli_facts_opt_steal_ms = -1;
/* what --sections asked for: the views show these only */
static CliFactsSections cli_facts_sections = CLI_FACTS_SECTION_ALL;
static gboolean cli_audit_opt_list_rules = FALSE;
static gboolean cli_audit_opt_no_summary = FALSE;
static char *cli_audit_opt_require_level = NULL;
static char *cli_audit_opt_require_flags = NULL;
/* What --require-level/--require-flags ask of every guest (prepare parses them). */
static CliAuditRequire cli_audit_require = { 0 };

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
	if (!cli_facts_sections_parse(cli_facts_opt_sections, &cli_facts_sections, error)) {
		g_prefix_error(error, "--sections: ");
		return FALSE;
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

static void cli_render_guest_error(GString *out, const CliResult *guest, gboolean color)
{
	g_autofree char *name = cli_escape_terminal(guest->name);
	g_autofree char *msg = cli_escape_terminal(guest->error != NULL ? guest->error : "not run");

	g_string_append_printf(out, "%s%s%s  %s: %s\n", color ? "\033[1;31m" : "", name,
	                       color ? "\033[0m" : "", cli_guest_status_to_string(guest->status),
	                       msg);
}

GString *cli_facts_render_text(const CliResults *results, gboolean color)
{
	GString *out = g_string_new(NULL);

	for (guint i = 0; i < results->guests->len; i++) {
		const CliResult *guest = g_ptr_array_index(results->guests, i);
		JsonObject *facts = NULL;
		g_autoptr(CliFacts) model = NULL;

		if (guest->status != CLI_GUEST_OK) {
			cli_render_guest_error(out, guest, color);
			continue;
		}
		if (!gb_json_node_get_object(guest->result, "facts", &facts, NULL))
			continue;
		model = cli_facts_new(facts);
		cli_facts_view_table(out, guest->name, model, cli_facts_sections, color);
		if (i + 1 < results->guests->len)
			g_string_append_c(out, '\n');
	}
	return out;
}

GString *cli_facts_render_csv(const CliResults *results)
{
	GString *out = g_string_new(NULL);

	cli_facts_render_csv_header(out);
	for (guint i = 0; i < results->guests->len; i++) {
		const CliResult *guest = g_ptr_array_index(results->guests, i);
		JsonObject *facts = NULL;
		g_autoptr(CliFacts) model = NULL;

		if (guest->status != CLI_GUEST_OK ||
		    !gb_json_node_get_object(guest->result, "facts", &facts, NULL)) {
			/* an unreachable guest is a row too, so a spreadsheet shows the gap */
			cli_csv_append_field(out, guest->name);
			g_string_append(out, ",status,,");
			cli_csv_append_field(out, cli_guest_status_to_string(guest->status));
			g_string_append_c(out, ',');
			cli_csv_append_text(out, guest->error);
			g_string_append_c(out, '\n');
			continue;
		}
		model = cli_facts_new(facts);
		cli_facts_view_csv_rows(out, guest->name, model, cli_facts_sections);
	}
	return out;
}

/* ---- Prometheus ------------------------------------------------------------------------- */

static gboolean cli_prom_flag(const CliFactsCpu *cpu, const char *flag)
{
	return cli_fact_ok(&cpu->flags.fact) &&
	       g_strv_contains((const char *const *)cpu->flags.value, flag);
}

/* One info sample per guest, per disk and per NIC: the facts a fleet query groups by. */
static void cli_facts_prom_guest(GString *info, GString *disks, GString *nics, const char *guest,
                                 JsonObject *facts_obj)
{
	g_autoptr(CliFacts) facts = cli_facts_new(facts_obj);
	const CliFactsCpu *cpu = &facts->cpu;

	cli_prom_sample(info, "guestbench_fact_info", 1, "guest", guest, "cpu_model",
	                cli_fact_string_or(&cpu->model_name, NULL), "hypervisor",
	                cli_fact_string_or(&cpu->hypervisor.vendor, NULL), "aes",
	                cli_prom_flag(cpu, "aes") ? "1" : "0", "pclmulqdq",
	                cli_prom_flag(cpu, "pclmulqdq") ? "1" : "0", "clocksource",
	                cli_fact_string_or(&facts->clocksource.current, NULL), "kernel",
	                cli_fact_string_or(&facts->os.kernel_release, NULL), "os",
	                cli_fact_string_or(&facts->os.pretty_name, NULL), NULL);
	for (guint i = 0; cli_fact_ok(&facts->block.fact) && i < facts->block.items->len; i++) {
		const CliFactsDisk *d = g_ptr_array_index(facts->block.items, i);

		if (!cli_fact_ok(&d->node.fact))
			continue;
		cli_prom_sample(disks, "guestbench_fact_block_info", 1, "guest", guest, "disk",
		                cli_fact_string_or(&d->name, NULL), "bus",
		                cli_fact_string_or(&d->bus, NULL), "driver",
		                cli_fact_string_or(&d->driver, NULL), "scheduler",
		                cli_fact_string_or(&d->scheduler, NULL), "write_cache",
		                cli_fact_string_or(&d->write_cache, NULL), NULL);
	}
	for (guint i = 0; cli_fact_ok(&facts->net.fact) && i < facts->net.items->len; i++) {
		const CliFactsNic *n = g_ptr_array_index(facts->net.items, i);

		if (!cli_fact_ok(&n->node.fact))
			continue;
		cli_prom_sample(nics, "guestbench_fact_net_info", 1, "guest", guest, "nic",
		                cli_fact_string_or(&n->name, NULL), "driver",
		                cli_fact_string_or(&n->driver, NULL), NULL);
	}
}

GString *cli_facts_render_prom(const CliResults *results)
{
	GString *out = g_string_new(NULL);
	g_autoptr(GString) info = g_string_new(NULL);
	g_autoptr(GString) disks = g_string_new(NULL);
	g_autoptr(GString) nics = g_string_new(NULL);

	cli_prom_append_up(out, results);
	for (guint i = 0; i < results->guests->len; i++) {
		const CliResult *guest = g_ptr_array_index(results->guests, i);
		JsonObject *facts = NULL;

		if (guest->status == CLI_GUEST_OK &&
		    gb_json_node_get_object(guest->result, "facts", &facts, NULL))
			cli_facts_prom_guest(info, disks, nics, guest->name, facts);
	}
	cli_prom_family(out, "guestbench_fact_info", "gauge",
	                "What a guest sees: CPU model, hypervisor, AES-NI, clocksource, OS (1)");
	g_string_append_len(out, info->str, info->len);
	cli_prom_family(out, "guestbench_fact_block_info", "gauge",
	                "Each disk of a guest: bus, driver, scheduler, write cache (1)");
	g_string_append_len(out, disks->str, disks->len);
	cli_prom_family(out, "guestbench_fact_net_info", "gauge",
	                "Each NIC of a guest and its driver (1)");
	g_string_append_len(out, nics->str, nics->len);
	return out;
}

/* ---- audit ------------------------------------------------------------------------------ */

/* Runs the rules (and, with a host view, the HOST-* rules) and finishes the guest. */
static void cli_audit_finish(CliGuest *guest, JsonObject *facts, JsonObject *view)
{
	/* read once for both the guest's rules and the HOST-* rules */
	g_autoptr(CliFacts) model = cli_facts_new(facts);
	/*
	 * the command line asks it of every guest (--require-level replaces the
	 * inventory's require_level= whole); else the inventory's keys of this one
	 */
	CliAuditRequire require = {
		.isa_level = cli_audit_opt_require_level != NULL ? cli_audit_require.isa_level
		                                                 : guest->target->require_level,
		.arm_level = cli_audit_opt_require_level != NULL ? cli_audit_require.arm_level
		                                                 : guest->target->require_arm_level,
		.flags = cli_audit_require.flags != NULL ? cli_audit_require.flags
		                                         : guest->target->require_flags,
	};
	g_autoptr(GPtrArray) findings = cli_audit_run_require(model, &require);
	g_autoptr(JsonBuilder) builder = NULL;
	CliLevel worst;

	if (view != NULL) {
		g_autoptr(GPtrArray) host = cli_host_rules_run_facts(model, view);

		cli_host_rules_merge(findings, host);
		/* a Proxmox VE VM: its config joined in, and the fixes in PVE's words */
		cli_pve_rules_apply(findings, model, view);
	}
	worst = cli_audit_worst(findings);
	if (worst == CLI_LEVEL_FAIL)
		guest->app->fail_finding = TRUE;

	builder = json_builder_new();
	json_builder_begin_object(builder);
	json_builder_set_member_name(builder, "worst");
	json_builder_add_string_value(builder, cli_level_to_string(worst));
	json_builder_set_member_name(builder, "findings");
	json_builder_add_value(builder, cli_audit_findings_to_json(findings));
	if (view != NULL) {
		json_builder_set_member_name(builder, "host");
		json_builder_add_value(builder, json_node_init_object(json_node_alloc(), view));
	}
	json_builder_end_object(builder);
	cli_guest_finish(guest, json_builder_get_root(builder), NULL);
}

static void cli_audit_host_cb(JsonNode *view, const GError *error, gpointer user_data)
{
	CliGuest *guest = user_data;
	JsonNode *facts = cli_guest_get_data(guest);
	JsonObject *view_obj = NULL;

	/* the host view was asked for: without it the audit is not the one asked for */
	if (error != NULL) {
		g_autoptr(GError) local_error = g_error_copy(error);

		g_prefix_error(&local_error, "host view: ");
		if (g_error_matches(error, GB_ERROR, GB_ERROR_BUSY))
			cli_guest_finish_busy(guest, local_error);
		else
			cli_guest_finish(guest, NULL, local_error);
		return;
	}
	if (view != NULL && !gb_json_node_get_object(view, "host view", &view_obj, NULL))
		view_obj = NULL;
	cli_audit_finish(guest, json_node_get_object(facts), view_obj);
}

static void cli_audit_reply_cb(CliSession *session, JsonNode *ret, const GError *error,
                               gpointer user_data)
{
	CliGuest *guest = user_data;
	g_autoptr(GError) local_error = NULL;
	g_autoptr(JsonNode) facts = NULL;
	const char *qmp = NULL;

	if (error != NULL) {
		cli_guest_finish(guest, NULL, error);
		return;
	}
	facts = cli_facts_take(ret, &local_error);
	if (facts == NULL) {
		cli_guest_finish(guest, NULL, local_error);
		return;
	}
	qmp = cli_hostview_get_qmp_path(guest->app, guest);
	if (qmp != NULL) {
		/* what only the host can see: about 8 QMP calls, each bounded by --timeout */
		cli_guest_set_deadline(guest, guest->app->opts.timeout * 8);
		cli_guest_set_data(guest, g_steal_pointer(&facts), (GDestroyNotify)json_node_unref);
		cli_hostview_collect_async(guest->app, guest, qmp, cli_audit_host_cb, guest);
		return;
	}
	cli_audit_finish(guest, json_node_get_object(facts), NULL);
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

GString *cli_audit_render_text(const CliResults *results, gboolean color)
{
	GString *out = g_string_new(NULL);
	g_autoptr(CliAuditSummary) summary = cli_audit_summary_new();
	guint n_ok = 0;

	for (guint i = 0; i < results->guests->len; i++) {
		const CliResult *guest = g_ptr_array_index(results->guests, i);
		g_autoptr(GPtrArray) findings = NULL;

		if (guest->status != CLI_GUEST_OK) {
			cli_render_guest_error(out, guest, color);
			cli_audit_summary_add_unreachable(summary, guest->name);
			continue;
		}
		findings = cli_audit_findings_from_result(guest->result);
		cli_audit_render_table(out, guest->name, findings, color);
		cli_audit_summary_add(summary, guest->name, findings);
		n_ok++;
	}
	/* a fleet of two or more with at least one audited guest */
	if (results->guests->len > 1 && n_ok > 0 && !cli_audit_opt_no_summary) {
		g_string_append_c(out, '\n');
		cli_audit_summary_render_table(summary, out);
	}
	return out;
}

GString *cli_audit_render_csv(const CliResults *results)
{
	GString *out = g_string_new(NULL);

	cli_audit_render_csv_header(out);
	for (guint i = 0; i < results->guests->len; i++) {
		const CliResult *guest = g_ptr_array_index(results->guests, i);
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
			cli_audit_render_csv_rows(out, guest->name, row);
			continue;
		}
		findings = cli_audit_findings_from_result(guest->result);
		cli_audit_render_csv_rows(out, guest->name, findings);
	}
	return out;
}

GString *cli_audit_render_prom(const CliResults *results)
{
	GString *out = g_string_new(NULL);
	g_autoptr(GString) worst = g_string_new(NULL);

	cli_prom_append_up(out, results);
	cli_prom_family(out, "guestbench_audit_finding", "gauge",
	                "One audit finding of a guest (1), by rule, level and subject");
	for (guint i = 0; i < results->guests->len; i++) {
		const CliResult *guest = g_ptr_array_index(results->guests, i);
		g_autoptr(GPtrArray) findings = NULL;

		if (guest->status != CLI_GUEST_OK)
			continue;
		findings = cli_audit_findings_from_result(guest->result);
		for (guint j = 0; j < findings->len; j++) {
			CliFinding *f = g_ptr_array_index(findings, j);

			cli_prom_sample(out, "guestbench_audit_finding", 1, "guest", guest->name,
			                "rule", f->rule, "level", cli_level_to_string(f->level),
			                "subject", f->subject, NULL);
		}
		cli_prom_sample(worst, "guestbench_audit_worst_level", cli_audit_worst(findings),
		                "guest", guest->name, NULL);
	}
	cli_prom_family(out, "guestbench_audit_worst_level", "gauge",
	                "A guest's worst finding: 0 PASS, 1 NOTE, 2 WARN, 3 FAIL");
	g_string_append_len(out, worst->str, worst->len);
	return out;
}

/* --list-rules needs no guest: the rule table is printed like help, and nothing runs. */
gboolean cli_audit_prepare(CliApp *app, GPtrArray *args, GError **error)
{
	guint n = 0;
	const CliAuditRuleInfo *rules = NULL;
	GString *text = NULL;

	cli_audit_require.isa_level = 0;
	cli_audit_require.arm_level = 0;
	if (cli_audit_opt_require_level != NULL &&
	    !cli_require_level_parse(cli_audit_opt_require_level, &cli_audit_require.isa_level,
	                             &cli_audit_require.arm_level, error)) {
		g_prefix_error(error, "--require-level: ");
		return FALSE;
	}
	if (cli_audit_opt_require_flags != NULL) {
		g_strfreev(cli_audit_require.flags);
		cli_audit_require.flags = cli_cpu_flags_parse(cli_audit_opt_require_flags, error);
		if (cli_audit_require.flags == NULL) {
			g_prefix_error(error, "--require-flags: ");
			return FALSE;
		}
	}
	if (!cli_audit_opt_list_rules)
		return TRUE;
	rules = cli_audit_rules(&n);
	text = g_string_new(NULL);
	for (guint i = 0; i < n; i++)
		g_string_append_printf(text, "%-22s %-4s  %s\n", rules[i].id,
		                       cli_level_to_string(rules[i].level), rules[i].summary);
	rules = cli_pve_rules(&n);
	for (guint i = 0; i < n; i++)
		g_string_append_printf(text, "%-22s %-4s  %s (Proxmox VE VMs)\n", rules[i].id,
		                       cli_level_to_string(rules[i].level), rules[i].summary);
	g_free(app->help_text);
	app->help_text = g_string_free(text, FALSE);
	app->action = CLI_ACTION_HELP;
	return TRUE;
}

static const CliCompletion cli_facts_completions[] = {
	{ "sections", CLI_COMPLETE_LIST, cli_facts_section_names },
	{ NULL },
};

const GOptionEntry cli_facts_entries[] = {
	{ "sections", 0, 0, G_OPTION_ARG_STRING, &cli_facts_opt_sections,
	  "Only these fact sections (comma list of cpu, memory, clocksource, steal, block, net, "
	  "os)",
	  "LIST" },
	{ "steal-window", 0, 0, G_OPTION_ARG_INT, &cli_facts_opt_steal_ms,
	  "Wait MS ms and measure steal time over them (0..5000; 0: since boot). Default: "
	  "no wait, since the agent's previous sample (at start-up or an earlier request)",
	  "MS" },
	{ NULL }
};

const GOptionEntry cli_audit_entries[] = {
	{ "list-rules", 0, 0, G_OPTION_ARG_NONE, &cli_audit_opt_list_rules,
	  "List the audit rules with their level and exit", NULL },
	{ "no-summary", 0, 0, G_OPTION_ARG_NONE, &cli_audit_opt_no_summary,
	  "Do not print the fleet summary after the findings", NULL },
	{ "require-level", 0, 0, G_OPTION_ARG_STRING, &cli_audit_opt_require_level,
	  "FAIL (CPU-ISA-LEVEL) each guest below this ISA level: x86-64-v1..x86-64-v4 for x86 "
	  "guests, armv8-a..armv9.3-a for aarch64 guests (comma list, one of each); overrides "
	  "the inventory's require_level=",
	  "LEVEL[,LEVEL]" },
	{ "require-flags", 0, 0, G_OPTION_ARG_STRING, &cli_audit_opt_require_flags,
	  "FAIL (CPU-REQUIRED-FLAGS) each guest lacking one of these /proc/cpuinfo flags "
	  "(comma list); overrides the inventory's require_flags=",
	  "LIST" },
	{ NULL }
};

static const CliCompletion cli_audit_completions[] = {
	{ "require-level", CLI_COMPLETE_LIST, cli_require_level_words },
	{ NULL },
};

const CliCommand cli_cmd_facts = {
	.name = "facts",
	.parameter_string = "facts TARGET...",
	.summary = "What each guest sees: CPU, memory, NUMA, clock, disks, NICs, OS",
	.description = CLI_FACTS_DESCRIPTION,
	.entries = cli_facts_entries,
	.completions = cli_facts_completions,
	.prepare = cli_facts_prepare,
	.start = cli_facts_start,
	.render_text = cli_facts_render_text,
	.render_csv = cli_facts_render_csv,
	.render_prom = cli_facts_render_prom,
};

const CliCommand cli_cmd_audit = {
	.name = "audit",
	.parameter_string = "audit TARGET...",
	.summary = "PASS/NOTE/WARN/FAIL findings with the fix for each; exit 1 on any FAIL",
	.description = CLI_AUDIT_DESCRIPTION,
	.entries = cli_audit_entries,
	.completions = cli_audit_completions,
	.common_options =
	    CLI_OPTIONS_TARGETS | CLI_OPTIONS_HOSTS | CLI_OPTIONS_QMP | CLI_OPTIONS_SYSROOT,
	.prepare = cli_audit_prepare,
	.start = cli_audit_start,
	.render_text = cli_audit_render_text,
	.render_csv = cli_audit_render_csv,
	.render_prom = cli_audit_render_prom,
};
