/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A guest's gb-get-facts result is whatever the guest chose to send: the
 * facts model, the audit rules and the facts/audit views run on fuzzed facts
 * JSON. What the CLI prints from it must stay valid UTF-8 and free of
 * terminal escapes.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/audit.h"
#include "render/facts-view.h"
#include "render/audit-view.h"
#include "fuzz.h"
#include "guestbench-protocol.h"

/* Output for a terminal: no ESC, no C1 CSI, no other C0 control but LF. */
static void fuzz_audit_check_text(const GString *out)
{
	const char *p = out->str;

	if (!g_utf8_validate(out->str, (gssize)out->len, NULL))
		abort();
	for (; *p != '\0'; p = g_utf8_next_char(p)) {
		gunichar c = g_utf8_get_char(p);
		if ((c < 0x20 && c != '\n') || c == 0x7f || (c >= 0x80 && c < 0xa0))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	g_autoptr(JsonNode) root = NULL;
	g_autoptr(GPtrArray) findings = NULL;
	g_autoptr(JsonNode) json = NULL;
	g_autoptr(GString) table = g_string_new(NULL);
	g_autoptr(GString) csv = g_string_new(NULL);
	g_autoptr(GString) view = g_string_new(NULL);
	g_autoptr(CliAuditSummary) summary = cli_audit_summary_new();
	g_autoptr(JsonNode) summary_json = NULL;
	JsonObject *facts = NULL;
	g_autoptr(CliFacts) model = NULL;

	if (size > 256 * 1024)
		return 0;
	/* the CLI parses replies with the same limits as the agent */
	root = gb_json_parse((const char *)data, size, NULL);
	if (root != NULL && JSON_NODE_HOLDS_OBJECT(root))
		facts = json_node_get_object(root);

	/* read once, as the audit command does, for the rules and the views */
	model = cli_facts_new(facts);
	for (guint i = 0; i < model->problems->len; i++) {
		CliFactsProblem *problem = g_ptr_array_index(model->problems, i);
		if (problem->path == NULL || problem->why == NULL)
			abort();
	}
	findings = cli_audit_run_facts(model);
	if (findings == NULL)
		abort();
	for (guint i = 0; i < findings->len; i++) {
		CliFinding *f = g_ptr_array_index(findings, i);
		if (f->rule == NULL || f->subject == NULL || f->detail == NULL)
			abort();
		if (f->level > CLI_LEVEL_FAIL)
			abort();
	}
	cli_audit_worst(findings);
	json = cli_audit_findings_to_json(findings);
	if (json == NULL)
		abort();
	cli_audit_render_table(table, "guest\x1b[31m", findings, FALSE);
	fuzz_audit_check_text(table);
	cli_audit_render_csv_header(csv);
	cli_audit_render_csv_rows(csv, "guest", findings);
	if (!g_utf8_validate(csv->str, (gssize)csv->len, NULL))
		abort();
	cli_audit_summary_add(summary, "guest", findings);
	cli_audit_summary_add(summary, "other", findings);
	summary_json = cli_audit_summary_to_json(summary);
	if (summary_json == NULL)
		abort();
	if (facts != NULL) {
		cli_facts_view_table(view, "guest", model, CLI_FACTS_SECTION_ALL, FALSE);
		fuzz_audit_check_text(view);
		g_string_truncate(view, 0);
		cli_facts_render_csv_header(view);
		cli_facts_view_csv_rows(view, "guest", model, CLI_FACTS_SECTION_ALL);
		if (!g_utf8_validate(view->str, (gssize)view->len, NULL))
			abort();
	}
	return 0;
}
