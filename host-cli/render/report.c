/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <math.h>

#include "guestbench-protocol.h"

#include "analysis/facts.h"
#include "analysis/units.h"

#include "render/report-html.h"
#include "render/report.h"
#include "render/compare-view.h"

static const char cli_report_css[] =
    "body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif;"
    "margin:2em auto;max-width:1100px;padding:0 1em;color:#222;background:#fff;line-height:1.4}"
    "h1{font-size:1.6em;margin-bottom:.2em}"
    "h2{font-size:1.2em;margin:1.6em 0 .4em;border-bottom:1px solid #ddd;padding-bottom:.2em}"
    "h2 .unit{font-weight:normal;color:#666;font-size:.85em}"
    ".meta{color:#666;margin-top:0}"
    "table{border-collapse:collapse;margin:.6em 0;font-size:.9em}"
    "th,td{border:1px solid #ddd;padding:.25em .6em;text-align:left;vertical-align:top}"
    "th{background:#f4f6f8}"
    "td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}"
    "td.missing{color:#999;text-align:center}"
    "td.ns{color:#888}"
    "td.up{color:#11602a}td.down{color:#a01818}"
    "td.diff{background:#fff4d6}"
    ".warn{background:#fff4d6;border-left:4px solid #e0a800;padding:.5em 1em;margin:1em 0}"
    ".err{background:#fde8e8;border-left:4px solid #c62828;padding:.5em 1em;margin:1em 0}"
    "ul.summary li{margin:.2em 0}"
    "figure{margin:.5em 0;overflow-x:auto}"
    "svg{max-width:100%;height:auto;font-family:inherit}"
    "svg .axis{stroke:#444;stroke-width:1}"
    "svg .grid{stroke:#e4e4e4;stroke-width:1}"
    "svg .tick{font-size:11px;fill:#444}"
    "svg .glabel{font-size:11px;fill:#222}"
    "svg .atitle{font-size:12px;fill:#222}"
    "svg .legend{font-size:12px;fill:#222}"
    "svg .axisnote{font-size:11px;fill:#555;font-style:italic}"
    "svg .missing{font-size:12px;fill:#999}"
    "svg .errbar{stroke:#222;stroke-width:1}"
    ".swatch{display:inline-block;width:.8em;height:.8em;margin-right:.3em;"
    "vertical-align:baseline}"
    ".legendnote{color:#666;font-size:.85em}"
    "@media print{body{margin:0;max-width:none;font-size:10pt}"
    "section.metric,figure,table{page-break-inside:avoid;break-inside:avoid}"
    "td.diff,th,.warn,.err{-webkit-print-color-adjust:exact;print-color-adjust:exact}"
    "h2{page-break-after:avoid;break-after:avoid}}";

/* ---- tables -------------------------------------------------------------------------- */

static void cli_report_append_table(GString *out, CliComparison *cmp, guint first, guint end)
{
	guint n = cmp->columns->len;
	CliCompareColumn *base = g_ptr_array_index(cmp->columns, 0);

	g_string_append(out, "<table class=\"cmp\"><thead><tr><th>labels</th>");
	for (guint c = 0; c < n; c++) {
		CliCompareColumn *col = g_ptr_array_index(cmp->columns, c);
		g_string_append_printf(out,
		                       "<th><span class=\"swatch\" style=\"background:%s\">"
		                       "</span>",
		                       cli_report_color(c));
		cli_report_escape(out, col->label);
		g_string_append(out, "</th>");
	}
	for (guint c = 1; c < n; c++) {
		CliCompareColumn *col = g_ptr_array_index(cmp->columns, c);
		g_string_append(out, "<th>");
		cli_report_escape_printf(out, "%s / %s", col->label, base->label);
		g_string_append(out, "</th><th>change</th>");
	}
	g_string_append(out, "</tr></thead><tbody>");
	for (guint r = first; r < end; r++) {
		CliCompareRow *row = g_ptr_array_index(cmp->rows, r);

		g_string_append(out, "<tr><td>");
		cli_report_escape(out, row->labels_text[0] != '\0' ? row->labels_text : "-");
		g_string_append(out, "</td>");
		for (guint c = 0; c < n; c++) {
			const CliCompareCell *cell = &row->cells[c];
			g_autofree char *v = NULL;
			if (!cell->present) {
				g_string_append(out, "<td class=\"missing\" title=\"");
				cli_report_escape(out, cell->unavailable != NULL ? cell->unavailable
				                                                 : "not measured");
				g_string_append(out, "\">—</td>");
				continue;
			}
			v = cli_compare_format_value(cell->value, row->unit);
			g_string_append(out, "<td class=\"num\">");
			cli_report_escape(out, v);
			if (cell->n_runs > 1) {
				g_autofree char *sd =
				    cli_compare_format_value(cell->stddev, row->unit);
				cli_report_escape_printf(out, " ± %s", sd);
			}
			g_string_append(out, "</td>");
		}
		for (guint c = 1; c < n; c++) {
			g_autofree char *ratio = cli_compare_format_ratio(row->ratios[c]);
			g_autofree char *change = cli_compare_format_change(row->ratios[c]);
			const char *cls = "num";
			double perf = row->lower_is_better ? 1 / row->ratios[c] : row->ratios[c];

			if (isnan(row->ratios[c]))
				cls = "missing";
			else if (row->significance[c] == CLI_SIGNIFICANCE_NO)
				cls = "num ns";
			else if (perf > 1.0)
				cls = "num up";
			else if (perf < 1.0)
				cls = "num down";
			g_string_append_printf(out, "<td class=\"%s\">", cls);
			cli_report_escape(out, ratio);
			g_string_append_printf(out, "</td><td class=\"%s\">", cls);
			cli_report_escape(out, change);
			if (row->significance[c] == CLI_SIGNIFICANCE_NO)
				g_string_append(out, " (n.s.)");
			g_string_append(out, "</td>");
		}
		g_string_append(out, "</tr>");
	}
	g_string_append(out, "</tbody></table>\n");
}

/* ---- facts --------------------------------------------------------------------------- */

/* Each row of the facts table, from the facts model; NULL when the facts do not say. */
typedef char *(*CliReportFactFunc)(const CliFacts *facts, JsonObject *params);

static char *cli_report_fact_string(const CliFactString *value)
{
	return g_strdup(cli_fact_string_or(value, NULL));
}

static char *cli_report_fact_cpu_model(const CliFacts *facts, JsonObject *params)
{
	return cli_report_fact_string(&facts->cpu.model_name);
}

static char *cli_report_fact_hypervisor(const CliFacts *facts, JsonObject *params)
{
	const CliFactsHypervisor *hv = &facts->cpu.hypervisor;

	if (!cli_fact_ok(&hv->present.fact))
		return NULL;
	if (!hv->present.value)
		return g_strdup("none");
	return g_strdup(cli_fact_string_or(&hv->vendor, "present"));
}

/* An integer within min..max, as the row wants it. */
static gboolean cli_report_int(const CliFactInt *value, gint64 min, gint64 max, gint64 *out)
{
	if (!cli_fact_ok(&value->fact) || value->value < min || value->value > max)
		return FALSE;
	*out = value->value;
	return TRUE;
}

static char *cli_report_fact_count(const CliFacts *facts, JsonObject *params)
{
	gint64 count = 0;

	if (!cli_report_int(&facts->cpu.count, 0, G_MAXINT32, &count))
		return NULL;
	return g_strdup_printf("%" G_GINT64_FORMAT, count);
}

/* "aes yes, pclmulqdq yes, avx2 no, vaes no": the flags that decide crypto speed (aarch64: aes,
 * pmull, sha2, sha512, sve2). */
static char *cli_report_fact_flags(const CliFacts *facts, JsonObject *params)
{
	static const char *const x86[] = { "aes", "pclmulqdq", "avx2", "vaes", "sha_ni", NULL };
	static const char *const arm[] = { "aes", "pmull", "sha2", "sha512", "sve2", NULL };
	const char *const *wanted = cli_facts_cpu_is_arm64(&facts->cpu) ? arm : x86;
	const CliFactStrv *flags = &facts->cpu.flags;
	g_autoptr(GString) str = g_string_new(NULL);

	if (!cli_fact_ok(&flags->fact))
		return NULL;
	for (guint i = 0; wanted[i] != NULL; i++) {
		g_string_append_printf(
		    str, "%s%s %s", i > 0 ? ", " : "", wanted[i],
		    g_strv_contains((const char *const *)flags->value, wanted[i]) ? "yes" : "no");
	}
	return g_string_free(g_steal_pointer(&str), FALSE);
}

static char *cli_report_fact_memory(const CliFacts *facts, JsonObject *params)
{
	const CliFactsMemory *mem = &facts->memory;
	gint64 total = -1, huge_total = -1;
	g_autoptr(GString) str = g_string_new(NULL);

	if (!cli_fact_ok(&mem->node.fact))
		return NULL;
	if (cli_report_int(&mem->total_bytes, 0, G_MAXINT64, &total)) {
		g_autofree char *bytes = cli_format_bytes(total);
		g_string_append(str, bytes);
	}
	if (cli_report_int(&mem->hugepages.total, 0, G_MAXINT64, &huge_total))
		g_string_append_printf(str, "%shugepages %" G_GINT64_FORMAT,
		                       str->len > 0 ? ", " : "", huge_total);
	if (cli_fact_ok(&mem->thp.fact))
		g_string_append_printf(str, "%sTHP %s", str->len > 0 ? ", " : "", mem->thp.value);
	if (str->len == 0)
		return NULL;
	return g_string_free(g_steal_pointer(&str), FALSE);
}

/* One line per object element of a list section, from a per-element formatter. */
static char *cli_report_fact_list(const CliFactsList *list, char *(*item)(gconstpointer element))
{
	g_autoptr(GString) str = g_string_new(NULL);

	if (!cli_fact_ok(&list->fact))
		return NULL;
	for (guint i = 0; i < list->items->len; i++) {
		const CliFactsNode *node = g_ptr_array_index(list->items, i);
		g_autofree char *text = NULL;

		if (!cli_fact_ok(&node->fact))
			continue;
		text = item(node);
		if (text == NULL)
			continue;
		g_string_append_printf(str, "%s%s", str->len > 0 ? "\n" : "", text);
	}
	if (str->len == 0)
		return NULL;
	return g_string_free(g_steal_pointer(&str), FALSE);
}

static char *cli_report_block_item(gconstpointer element)
{
	const CliFactsDisk *disk = element;

	/* cdroms and loops say nothing about disk speed */
	if (cli_fact_ok(&disk->cdrom.fact) && disk->cdrom.value)
		return NULL;
	return g_strdup_printf("%s: %s (%s), scheduler %s, %s",
	                       cli_fact_string_or(&disk->name, "?"),
	                       cli_fact_string_or(&disk->bus, "unknown bus"),
	                       cli_fact_string_or(&disk->driver, "unknown driver"),
	                       cli_fact_string_or(&disk->scheduler, "unknown"),
	                       cli_fact_string_or(&disk->write_cache, "cache unknown"));
}

static char *cli_report_net_item(gconstpointer element)
{
	const CliFactsNic *nic = element;
	gint64 rx = 0, tx = 0, mtu = 0;

	/* interfaces without a driver (lo, ifb, bridges) carry no guest traffic of note */
	if (!cli_fact_ok(&nic->driver.fact))
		return NULL;
	cli_report_int(&nic->rx_queues, 0, G_MAXINT32, &rx);
	cli_report_int(&nic->tx_queues, 0, G_MAXINT32, &tx);
	cli_report_int(&nic->mtu, 0, G_MAXINT32, &mtu);
	return g_strdup_printf("%s: %s, %" G_GINT64_FORMAT "/%" G_GINT64_FORMAT
	                       " queues, MTU %" G_GINT64_FORMAT,
	                       cli_fact_string_or(&nic->name, "?"), nic->driver.value, rx, tx, mtu);
}

static char *cli_report_fact_disks(const CliFacts *facts, JsonObject *params)
{
	return cli_report_fact_list(&facts->block, cli_report_block_item);
}

static char *cli_report_fact_nics(const CliFacts *facts, JsonObject *params)
{
	return cli_report_fact_list(&facts->net, cli_report_net_item);
}

static char *cli_report_fact_kernel(const CliFacts *facts, JsonObject *params)
{
	const char *pretty = cli_fact_string_or(&facts->os.pretty_name, NULL);
	const char *kernel = cli_fact_string_or(&facts->os.kernel_release, NULL);

	if (pretty == NULL && kernel == NULL)
		return NULL;
	return g_strdup_printf("%s%s%s", pretty != NULL ? pretty : "",
	                       pretty != NULL && kernel != NULL ? ", Linux " : "",
	                       kernel != NULL ? kernel : "");
}

static char *cli_report_fact_params(const CliFacts *facts, JsonObject *params)
{
	g_autoptr(GString) str = g_string_new(NULL);
	g_autoptr(GList) members = NULL;

	if (params == NULL)
		return NULL;
	members = json_object_get_members(params);
	for (GList *l = members; l != NULL; l = l->next) {
		g_autofree char *value =
		    cli_format_json_value(json_object_get_member(params, l->data));
		g_string_append_printf(str, "%s%s=%s", str->len > 0 ? "\n" : "",
		                       (const char *)l->data, value);
	}
	return g_string_free(g_steal_pointer(&str), FALSE);
}

static const struct {
	const char *name;
	CliReportFactFunc func;
} cli_report_facts[] = {
	{ "parameters", cli_report_fact_params },
	{ "CPU model", cli_report_fact_cpu_model },
	{ "hypervisor", cli_report_fact_hypervisor },
	{ "vCPUs", cli_report_fact_count },
	{ "CPU flags", cli_report_fact_flags },
	{ "memory", cli_report_fact_memory },
	{ "disks", cli_report_fact_disks },
	{ "NICs", cli_report_fact_nics },
	{ "OS", cli_report_fact_kernel },
};

/* Multi-line values keep their lines: escaped, then joined with <br/>. */
static void cli_report_append_lines(GString *out, const char *text)
{
	g_auto(GStrv) lines = g_strsplit(text, "\n", -1);

	for (guint i = 0; lines[i] != NULL; i++) {
		if (i > 0)
			g_string_append(out, "<br/>");
		cli_report_escape(out, lines[i]);
	}
}

static void cli_report_append_facts(GString *out, CliComparison *cmp)
{
	guint n = cmp->columns->len;
	g_autoptr(GPtrArray) models =
	    g_ptr_array_new_with_free_func((GDestroyNotify)cli_facts_free);

	g_string_append(out, "<section class=\"facts\"><h2>What each guest saw</h2>"
	                     "<p class=\"legendnote\">From the facts saved with each result; "
	                     "cells that differ from the first column are highlighted.</p>"
	                     "<table><thead><tr><th></th>");
	for (guint c = 0; c < n; c++) {
		CliCompareColumn *col = g_ptr_array_index(cmp->columns, c);
		g_string_append(out, "<th>");
		cli_report_escape(out, col->label);
		g_string_append(out, "</th>");
	}
	g_string_append(out, "</tr></thead><tbody>");
	/* each column's facts are read once, for every row */
	for (guint c = 0; c < n; c++) {
		CliCompareColumn *col = g_ptr_array_index(cmp->columns, c);
		g_ptr_array_add(models, cli_facts_new(col->facts));
	}
	for (guint f = 0; f < G_N_ELEMENTS(cli_report_facts); f++) {
		g_autoptr(GPtrArray) values = g_ptr_array_new_with_free_func(g_free);
		gboolean any = FALSE;

		for (guint c = 0; c < n; c++) {
			CliCompareColumn *col = g_ptr_array_index(cmp->columns, c);
			char *v =
			    cli_report_facts[f].func(g_ptr_array_index(models, c), col->params);
			any = any || v != NULL;
			g_ptr_array_add(values, v);
		}
		if (!any)
			continue;
		g_string_append(out, "<tr><th>");
		cli_report_escape(out, cli_report_facts[f].name);
		g_string_append(out, "</th>");
		for (guint c = 0; c < n; c++) {
			const char *v = g_ptr_array_index(values, c);
			const char *v0 = g_ptr_array_index(values, 0);
			gboolean diff = c > 0 && g_strcmp0(v, v0) != 0;
			g_string_append_printf(out, "<td%s>", diff ? " class=\"diff\"" : "");
			cli_report_append_lines(out, v != NULL ? v : "unknown");
			g_string_append(out, "</td>");
		}
		g_string_append(out, "</tr>");
	}
	g_string_append(out, "</tbody></table></section>\n");
}

/* ---- the page ------------------------------------------------------------------------ */

static void cli_report_append_sources(GString *out, CliComparison *cmp)
{
	g_string_append(out, "<table class=\"sources\"><thead><tr><th>column</th><th>file</th>"
	                     "<th>guest</th><th>test</th><th>when</th><th>agent</th></tr>"
	                     "</thead><tbody>");
	for (guint c = 0; c < cmp->columns->len; c++) {
		CliCompareColumn *col = g_ptr_array_index(cmp->columns, c);
		g_string_append_printf(out,
		                       "<tr><td><span class=\"swatch\" style=\"background:%s\">"
		                       "</span>",
		                       cli_report_color(c));
		cli_report_escape(out, col->label);
		g_string_append(out, "</td><td>");
		cli_report_escape(out, col->source);
		g_string_append(out, "</td><td>");
		cli_report_escape(out, col->guest);
		g_string_append(out, "</td><td>");
		if (col->error != NULL) {
			g_string_append(out, "no result: ");
			cli_report_escape(out, col->error);
		} else {
			cli_report_escape(out, col->test);
		}
		g_string_append(out, "</td><td>");
		cli_report_escape(out, col->timestamp != NULL ? col->timestamp : "unknown");
		g_string_append(out, "</td><td>");
		cli_report_escape(out, col->agent_version != NULL ? col->agent_version : "unknown");
		g_string_append(out, "</td></tr>");
	}
	g_string_append(out, "</tbody></table>\n");
}

static void cli_report_append_summary(GString *out, CliComparison *cmp)
{
	CliCompareColumn *base = g_ptr_array_index(cmp->columns, 0);
	g_autoptr(GPtrArray) warnings = cli_comparison_warnings(cmp, NULL);

	g_string_append(out, "<ul class=\"summary\">");
	for (guint w = 0; w < warnings->len; w++) {
		g_string_append(out, "<li><strong>warning</strong>: ");
		cli_report_escape(out, g_ptr_array_index(warnings, w));
		g_string_append(out, "</li>");
	}
	for (guint p = 0; p < cmp->pairs->len; p++) {
		CliComparePair *pair = g_ptr_array_index(cmp->pairs, p);
		CliCompareColumn *col = g_ptr_array_index(cmp->columns, pair->column);
		g_autofree char *gm = cli_compare_format_ratio(pair->geomean);

		g_string_append(out, "<li><strong>");
		cli_report_escape_printf(out, "%s vs %s", col->label, base->label);
		g_string_append(out, "</strong>: ");
		if (pair->n_rows == 0) {
			g_string_append(out, "no headline metric with a value on both sides</li>");
			continue;
		}
		cli_report_escape_printf(out, "geometric mean ratio %s over %u headline metric%s",
		                         gm, pair->n_rows, pair->n_rows == 1 ? "" : "s");
		if (pair->n_not_significant > 0)
			cli_report_escape_printf(out, ", %u within run-to-run noise",
			                         pair->n_not_significant);
		if (pair->best_row >= 0 && pair->worst_row != pair->best_row) {
			g_autofree char *best =
			    cli_compare_row_sentence(cmp, pair->best_row, pair->column);
			g_autofree char *worst =
			    cli_compare_row_sentence(cmp, pair->worst_row, pair->column);
			g_string_append(out, "<br/>best: ");
			cli_report_escape(out, best);
			g_string_append(out, "<br/>worst: ");
			cli_report_escape(out, worst);
		} else if (pair->best_row >= 0) {
			g_autofree char *best =
			    cli_compare_row_sentence(cmp, pair->best_row, pair->column);
			g_string_append(out, "<br/>");
			cli_report_escape(out, best);
		}
		g_string_append(out, "</li>");
	}
	g_string_append(out, "</ul>\n");
}

GString *cli_report_render_html(CliComparison *cmp)
{
	GString *out = g_string_new(NULL);
	guint n = cmp->columns->len;

	g_string_append(out, "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" "
	                     "lang=\"en\"><head><meta charset=\"utf-8\"/>"
	                     "<meta name=\"viewport\" content=\"width=device-width\"/>"
	                     "<title>guestbench report</title><style>");
	g_string_append(out, cli_report_css);
	g_string_append(out, "</style></head><body>\n<h1>guestbench report</h1>\n"
	                     "<p class=\"meta\">");
	cli_report_escape_printf(out,
	                         "guestbench %s; %u column%s, each compared with the first (%s). "
	                         "Ratios are column / first column.",
	                         GB_VERSION, n, n == 1 ? "" : "s",
	                         ((CliCompareColumn *)g_ptr_array_index(cmp->columns, 0))->label);
	g_string_append(out, "</p>\n");
	cli_report_append_sources(out, cmp);

	if (cmp->mismatches->len > 0) {
		g_string_append(out, "<div class=\"warn\"><strong>Parameters differ</strong>: "
		                     "these columns did not measure the same thing.<ul>");
		for (guint m = 0; m < cmp->mismatches->len; m++) {
			CliCompareMismatch *mm = g_ptr_array_index(cmp->mismatches, m);
			g_autoptr(GString) line = g_string_new(NULL);
			g_string_append_printf(line, "%s %s:", mm->test, mm->param);
			for (guint c = 0; c < n; c++) {
				CliCompareColumn *col = g_ptr_array_index(cmp->columns, c);
				if (mm->values[c] != NULL)
					g_string_append_printf(line, " %s=%s", col->label,
					                       mm->values[c]);
			}
			g_string_append(out, "<li>");
			cli_report_escape(out, line->str);
			g_string_append(out, "</li>");
		}
		g_string_append(out, "</ul></div>\n");
	}
	for (guint c = 0; c < n; c++) {
		CliCompareColumn *col = g_ptr_array_index(cmp->columns, c);
		if (col->error == NULL)
			continue;
		g_string_append(out, "<div class=\"err\">");
		cli_report_escape_printf(out, "%s has no result: %s", col->label, col->error);
		g_string_append(out, "</div>\n");
	}

	g_string_append(out, "<h2>Summary</h2>\n");
	cli_report_append_summary(out, cmp);

	for (guint r = 0; r < cmp->rows->len;) {
		CliCompareRow *head = g_ptr_array_index(cmp->rows, r);
		guint end = r + 1;

		while (end < cmp->rows->len) {
			CliCompareRow *row = g_ptr_array_index(cmp->rows, end);
			if (g_strcmp0(row->test, head->test) != 0 ||
			    g_strcmp0(row->metric, head->metric) != 0 ||
			    g_strcmp0(row->unit, head->unit) != 0)
				break;
			end++;
		}
		g_string_append(out, "<section class=\"metric\"><h2>");
		cli_report_escape(out, head->metric);
		g_string_append(out, " <span class=\"unit\">");
		cli_report_escape_printf(out, "(%s, %s%s)", head->test, head->unit,
		                         head->lower_is_better ? ", lower is better" : "");
		g_string_append(out, "</span></h2>\n");
		cli_report_append_chart(out, cmp, r, end);
		cli_report_append_table(out, cmp, r, end);
		g_string_append(out, "</section>\n");
		r = end;
	}
	g_string_append(out, "<p class=\"legendnote\">n.s.: not significant, the difference is "
	                     "within run-to-run noise (Welch's t-test, p &gt;= 0.05; needs runs "
	                     "&gt; 1). Whiskers: ± 1 standard deviation over the runs. — : no "
	                     "value.</p>\n");
	cli_report_append_facts(out, cmp);
	g_string_append(out, "</body></html>\n");
	return out;
}
