/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A fleet audit: two guests' gb-get-facts results (the input cut in two at
 * its first "\n--\n"; without one, the same facts twice), each read and
 * audited with requirements as `audit --require-level --require-flags` does,
 * then the fleet summary and its views. One hostile guest must not take the
 * other's findings, or the process, down with it.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/audit.h"
#include "render/audit-view.h"
#include "fuzz.h"
#include "guestbench-protocol.h"

static GPtrArray *fuzz_fleet_guest(const uint8_t *data, size_t size, const CliAuditRequire *require)
{
	g_autoptr(JsonNode) root = gb_json_parse((const char *)data, size, NULL);
	g_autoptr(CliFacts) model = NULL;
	GPtrArray *findings;

	model = cli_facts_new(
	    root != NULL && JSON_NODE_HOLDS_OBJECT(root) ? json_node_get_object(root) : NULL);
	findings = cli_audit_run_require(model, require);
	if (findings == NULL)
		abort();
	for (guint i = 0; i < findings->len; i++) {
		CliFinding *f = g_ptr_array_index(findings, i);
		if (f->rule == NULL || f->subject == NULL || f->detail == NULL ||
		    f->level > CLI_LEVEL_FAIL)
			abort();
	}
	return findings;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const sep = "\n--\n";
	char *flags[] = { (char *)"aes", (char *)"avx2", NULL };
	const CliAuditRequire require = { .isa_level = 2, .flags = flags, .arm_level = 80 };
	const uint8_t *cut;
	size_t first, second_off;
	g_autoptr(GPtrArray) a = NULL;
	g_autoptr(GPtrArray) b = NULL;
	g_autoptr(CliAuditSummary) summary = cli_audit_summary_new();
	g_autoptr(JsonNode) a_json = NULL;
	g_autoptr(JsonNode) summary_json = NULL;
	g_autoptr(GString) table = g_string_new(NULL);

	if (size > 512 * 1024)
		return 0;
	cut = size >= 4 ? memmem(data, size, sep, strlen(sep)) : NULL;
	first = cut != NULL ? (size_t)(cut - data) : size;
	second_off = cut != NULL ? first + strlen(sep) : 0;

	a = fuzz_fleet_guest(data, first, &require);
	b = fuzz_fleet_guest(data + second_off, size - second_off, NULL);
	cli_audit_summary_add(summary, "a", a);
	cli_audit_summary_add(summary, "b", b);
	cli_audit_summary_add_unreachable(summary, "c");
	cli_audit_render_table(table, "a", a, FALSE);
	cli_audit_render_table(table, "b", b, TRUE);
	cli_audit_summary_render_table(summary, table);
	if (!g_utf8_validate(table->str, (gssize)table->len, NULL))
		abort();
	a_json = cli_audit_findings_to_json(a);
	summary_json = cli_audit_summary_to_json(summary);
	if (a_json == NULL || summary_json == NULL)
		abort();
	return 0;
}
