/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <string.h>

#include "render/audit-view.h"
#include "render/csv.h"
#include "render/escape.h"
#include "render/table.h"

/* Guest names listed per level in the summary table; JSON has them all. */
#define CLI_SUMMARY_MAX_NAMES 8

static const char *const level_colors[CLI_LEVEL_COUNT] = { "\033[32m", "\033[36m", "\033[33m",
	                                                   "\033[1;31m" };
#define CLI_COLOR_RESET "\033[0m"
#define CLI_COLOR_DIM "\033[2m"

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

void cli_audit_render_table(GString *out, const char *guest, GPtrArray *findings, gboolean color)
{
	g_autofree char *guest_esc = cli_table_escape_cell(guest, CLI_TABLE_CELL_MAX);
	glong w_rule = 0;
	glong w_subject = 0;

	if (findings == NULL)
		return;

	/* escape once, measure, then print: widths are of what is printed */
	{
		g_autoptr(GPtrArray) rules = g_ptr_array_new_with_free_func(g_free);
		g_autoptr(GPtrArray) subjects = g_ptr_array_new_with_free_func(g_free);

		for (guint i = 0; i < findings->len; i++) {
			CliFinding *finding = g_ptr_array_index(findings, i);
			/* guest text (a subject names a disk, a NIC): capped as a table's cells */
			char *rule = cli_table_escape_cell(finding->rule, CLI_TABLE_CELL_MAX);
			char *subject = cli_table_escape_cell(finding->subject, CLI_TABLE_CELL_MAX);
			w_rule = MAX(w_rule, text_width(rule));
			w_subject = MAX(w_subject, text_width(subject));
			g_ptr_array_add(rules, rule);
			g_ptr_array_add(subjects, subject);
		}
		for (guint i = 0; i < findings->len; i++) {
			CliFinding *finding = g_ptr_array_index(findings, i);
			const char *level = cli_level_to_string(finding->level);
			g_autofree char *detail =
			    cli_table_escape_cell(finding->detail, CLI_TABLE_LAST_CELL_MAX);
			gsize start = out->len;

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
			g_string_append(out, detail);
			cli_table_end_line(out, start);
			if (finding->hint != NULL && finding->hint[0] != '\0') {
				g_autofree char *hint =
				    cli_table_escape_cell(finding->hint, CLI_TABLE_LAST_CELL_MAX);

				start = out->len;
				g_string_append(out, "    ");
				if (color)
					g_string_append(out, CLI_COLOR_DIM);
				g_string_append(out, "hint: ");
				g_string_append(out, hint);
				if (color)
					g_string_append(out, CLI_COLOR_RESET);
				cli_table_end_line(out, start);
			}
		}
	}
}

void cli_audit_render_csv_header(GString *out)
{
	g_string_append(out, "guest,level,rule,subject,detail,hint\n");
}

void cli_audit_render_csv_rows(GString *out, const char *guest, GPtrArray *findings)
{
	for (guint i = 0; findings != NULL && i < findings->len; i++) {
		CliFinding *finding = g_ptr_array_index(findings, i);
		cli_csv_append_text(out, guest);
		g_string_append_c(out, ',');
		g_string_append(out, cli_level_to_string(finding->level));
		g_string_append_c(out, ',');
		cli_csv_append_text(out, finding->rule);
		g_string_append_c(out, ',');
		cli_csv_append_text(out, finding->subject);
		g_string_append_c(out, ',');
		cli_csv_append_text(out, finding->detail);
		g_string_append_c(out, ',');
		cli_csv_append_text(out, finding->hint);
		g_string_append_c(out, '\n');
	}
}

void cli_audit_summary_render_table(CliAuditSummary *summary, GString *out)
{
	g_autoptr(GPtrArray) ordered = NULL;
	glong w_rule = (glong)strlen("RULE");

	g_return_if_fail(summary != NULL);
	ordered = cli_audit_summary_ordered(summary);
	for (guint i = 0; i < ordered->len; i++) {
		CliAuditSummaryRule *entry = g_ptr_array_index(ordered, i);
		g_autofree char *rule = cli_escape_terminal(entry->rule);
		w_rule = MAX(w_rule, text_width(rule));
	}

	if (summary->unreachable->len == 0) {
		g_string_append_printf(
		    out, "Audit summary: %u guest%s, worst level %s (columns count guests)\n",
		    summary->n_guests, summary->n_guests == 1 ? "" : "s",
		    cli_level_to_string(summary->worst));
	} else {
		guint total = summary->n_guests + summary->unreachable->len;

		/* the fleet is every guest asked, not only those that answered */
		g_string_append_printf(out, "Audit summary: %u guest%s, %u not audited (", total,
		                       total == 1 ? "" : "s", summary->unreachable->len);
		for (guint j = 0; j < summary->unreachable->len && j < CLI_SUMMARY_MAX_NAMES; j++) {
			if (j > 0)
				g_string_append(out, ", ");
			cli_escape_append(out, g_ptr_array_index(summary->unreachable, j));
		}
		if (summary->unreachable->len > CLI_SUMMARY_MAX_NAMES)
			g_string_append_printf(out, ", +%u more",
			                       summary->unreachable->len - CLI_SUMMARY_MAX_NAMES);
		g_string_append_printf(
		    out, "), worst level %s of the %u audited (columns count guests)\n",
		    cli_level_to_string(summary->worst), summary->n_guests);
	}
	append_padded(out, "RULE", w_rule);
	g_string_append(out, "  PASS  NOTE  WARN  FAIL  NOT PASSING\n");
	for (guint i = 0; i < ordered->len; i++) {
		CliAuditSummaryRule *entry = g_ptr_array_index(ordered, i);
		g_autofree char *rule = cli_escape_terminal(entry->rule);
		gboolean first = TRUE;
		gsize start = out->len;

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
				g_autofree char *name = cli_table_escape_cell(
				    g_ptr_array_index(guests, j), CLI_TABLE_CELL_MAX);

				if (j > 0)
					g_string_append(out, ", ");
				g_string_append(out, name);
			}
			if (guests->len > CLI_SUMMARY_MAX_NAMES)
				g_string_append_printf(out, " (+%u more)",
				                       guests->len - CLI_SUMMARY_MAX_NAMES);
		}
		if (first)
			g_string_append(out, "-");
		cli_table_end_line(out, start);
	}
}
