/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <math.h>

#include "guestbench-protocol.h"

#include "render/compare-view.h"
#include "render/csv.h"
#include "render/escape.h"
char *cli_compare_format_value(double value, const char *unit)
{
	static const char *const prefixes[] = { "", "k", "M", "G", "T", "P" };
	static const char *const time_units[] = { "ns", "µs", "ms", "s" };
	double v = value;
	guint i = 0;

	if (isnan(value))
		return g_strdup("—");
	if (g_strcmp0(unit, "ns") == 0) {
		while (fabs(v) >= 1000 && i + 1 < G_N_ELEMENTS(time_units)) {
			v /= 1000;
			i++;
		}
		return g_strdup_printf("%.*f %s", i == 0 && v == floor(v) ? 0 : 2, v,
		                       time_units[i]);
	}
	if (g_strcmp0(unit, "B/s") == 0 || g_strcmp0(unit, "IO/s") == 0 ||
	    g_strcmp0(unit, "B") == 0) {
		while (fabs(v) >= 1000 && i + 1 < G_N_ELEMENTS(prefixes)) {
			v /= 1000;
			i++;
		}
		return g_strdup_printf("%.2f %s%s", v, prefixes[i], unit);
	}
	if (g_strcmp0(unit, "%") == 0)
		return g_strdup_printf("%.1f %%", v);
	return g_strdup_printf("%.4g %s", v, unit != NULL ? unit : "");
}

char *cli_compare_format_ratio(double ratio)
{
	if (isnan(ratio) || isinf(ratio))
		return g_strdup("—");
	return g_strdup_printf("%.2fx", ratio);
}

char *cli_compare_format_change(double ratio)
{
	if (isnan(ratio) || isinf(ratio))
		return g_strdup("—");
	return g_strdup_printf("%+.1f%%", (ratio - 1.0) * 100.0);
}

char *cli_compare_row_sentence(CliComparison *cmp, guint row_idx, guint column)
{
	CliCompareRow *row = g_ptr_array_index(cmp->rows, row_idx);
	CliCompareColumn *base = g_ptr_array_index(cmp->columns, 0);
	CliCompareColumn *col = g_ptr_array_index(cmp->columns, column);
	g_autofree char *ratio = cli_compare_format_ratio(row->ratios[column]);
	g_autofree char *where = NULL;

	if (row->labels_text[0] != '\0')
		where = g_strdup_printf(" at %s", row->labels_text);
	return g_strdup_printf("%s is %s %s%s (%s%s)", col->label, ratio, base->label,
	                       where != NULL ? where : "", row->metric,
	                       row->lower_is_better ? ", lower is better" : "");
}

static const char *cli_compare_significance_to_string(CliSignificance sig)
{
	switch (sig) {
	case CLI_SIGNIFICANCE_YES:
		return "yes";
	case CLI_SIGNIFICANCE_NO:
		return "no";
	case CLI_SIGNIFICANCE_UNKNOWN:
	default:
		return "unknown";
	}
}

/* ---- text ---------------------------------------------------------------------------- */

/* An aligned table with any number of columns; cells are escaped here. */
static void cli_compare_append_table(GString *out, GPtrArray *rows)
{
	g_autofree gsize *widths = NULL;
	guint n_cols = 0;

	for (guint r = 0; r < rows->len; r++)
		n_cols = MAX(n_cols, ((GPtrArray *)g_ptr_array_index(rows, r))->len);
	widths = g_new0(gsize, n_cols);
	for (guint r = 0; r < rows->len; r++) {
		GPtrArray *cells = g_ptr_array_index(rows, r);
		for (guint c = 0; c < cells->len; c++) {
			char *escaped = cli_escape_terminal(g_ptr_array_index(cells, c));
			g_free(cells->pdata[c]);
			cells->pdata[c] = escaped;
			widths[c] = MAX(widths[c], cli_text_width(escaped));
		}
	}
	for (guint r = 0; r < rows->len; r++) {
		GPtrArray *cells = g_ptr_array_index(rows, r);
		g_autoptr(GString) line = g_string_new(NULL);
		for (guint c = 0; c < cells->len; c++) {
			const char *cell = g_ptr_array_index(cells, c);
			g_string_append(line, cell);
			if (c + 1 < cells->len) {
				for (gsize w = cli_text_width(cell); w < widths[c] + 2; w++)
					g_string_append_c(line, ' ');
			}
		}
		g_string_append_printf(out, "%s\n", line->str);
	}
}

static GPtrArray *cli_compare_cells_new(void)
{
	return g_ptr_array_new_with_free_func(g_free);
}

/* The value cell: "128.88 MB/s", with runs "128.88 MB/s ± 1.20 MB/s". */
static char *cli_compare_cell_text(const CliCompareCell *cell, const char *unit)
{
	g_autofree char *v = NULL;
	g_autofree char *sd = NULL;

	if (!cell->present)
		return g_strdup("—");
	v = cli_compare_format_value(cell->value, unit);
	if (cell->n_runs < 2)
		return g_steal_pointer(&v);
	sd = cli_compare_format_value(cell->stddev, unit);
	return g_strdup_printf("%s ± %s", v, sd);
}

static void cli_compare_render_group(CliComparison *cmp, GString *out, guint first, guint end)
{
	CliCompareRow *head = g_ptr_array_index(cmp->rows, first);
	CliCompareColumn *base = g_ptr_array_index(cmp->columns, 0);
	guint n = cmp->columns->len;
	g_autoptr(GPtrArray) rows =
	    g_ptr_array_new_with_free_func((GDestroyNotify)g_ptr_array_unref);
	GPtrArray *header = cli_compare_cells_new();
	g_autofree char *title = NULL;

	title = g_strdup_printf("%s (%s, %s%s)", head->metric, head->test, head->unit,
	                        head->lower_is_better ? ", lower is better" : "");
	{
		g_autofree char *escaped = cli_escape_terminal(title);
		g_string_append_printf(out, "%s\n", escaped);
	}
	g_ptr_array_add(rows, header);
	g_ptr_array_add(header, g_strdup("LABELS"));
	for (guint c = 0; c < n; c++) {
		CliCompareColumn *col = g_ptr_array_index(cmp->columns, c);
		g_ptr_array_add(header, g_strdup(col->label));
	}
	for (guint c = 1; c < n; c++) {
		CliCompareColumn *col = g_ptr_array_index(cmp->columns, c);
		g_ptr_array_add(header, g_strdup_printf("%s/%s", col->label, base->label));
		g_ptr_array_add(header, g_strdup("CHANGE"));
	}
	if (n == 2)
		g_ptr_array_add(header, g_strdup("SUMMARY"));
	for (guint r = first; r < end; r++) {
		CliCompareRow *row = g_ptr_array_index(cmp->rows, r);
		GPtrArray *cells = cli_compare_cells_new();

		g_ptr_array_add(rows, cells);
		g_ptr_array_add(cells,
		                g_strdup(row->labels_text[0] != '\0' ? row->labels_text : "-"));
		for (guint c = 0; c < n; c++)
			g_ptr_array_add(cells, cli_compare_cell_text(&row->cells[c], row->unit));
		for (guint c = 1; c < n; c++) {
			g_autofree char *change = cli_compare_format_change(row->ratios[c]);
			g_ptr_array_add(cells, cli_compare_format_ratio(row->ratios[c]));
			if (row->significance[c] == CLI_SIGNIFICANCE_NO)
				g_ptr_array_add(cells, g_strdup_printf("%s n.s.", change));
			else
				g_ptr_array_add(cells, g_steal_pointer(&change));
		}
		/* the field-report sentence: "host is 1.94x kvm64 at 16 KiB" */
		if (n == 2) {
			g_autofree char *ratio = cli_compare_format_ratio(row->ratios[1]);
			CliCompareColumn *col = g_ptr_array_index(cmp->columns, 1);
			if (isnan(row->ratios[1]))
				g_ptr_array_add(cells, g_strdup(""));
			else if (row->labels_text[0] != '\0')
				g_ptr_array_add(
				    cells, g_strdup_printf("%s is %s %s at %s", col->label, ratio,
				                           base->label, row->labels_text));
			else
				g_ptr_array_add(cells, g_strdup_printf("%s is %s %s", col->label,
				                                       ratio, base->label));
		}
	}
	cli_compare_append_table(out, rows);
}

/* One line of ours around guest text: the whole text is escaped, the newline added after. */
static void cli_compare_append_line(GString *out, const char *text)
{
	g_autofree char *escaped = cli_escape_terminal(text);
	g_string_append(out, escaped);
	g_string_append_c(out, '\n');
}

GString *cli_comparison_render_text(CliComparison *cmp)
{
	GString *out = g_string_new(NULL);
	CliCompareColumn *base = g_ptr_array_index(cmp->columns, 0);
	guint n = cmp->columns->len;
	gboolean any_ns = FALSE;

	/* where each column came from, and the ones that have nothing to show */
	for (guint c = 0; c < n; c++) {
		CliCompareColumn *col = g_ptr_array_index(cmp->columns, c);
		g_autofree char *line = NULL;

		if (col->error != NULL)
			line = g_strdup_printf("%s: %s, guest %s: no result (%s)", col->label,
			                       col->source, col->guest, col->error);
		else
			line = g_strdup_printf("%s: %s, guest %s, %s", col->label, col->source,
			                       col->guest, col->test);
		cli_compare_append_line(out, line);
	}
	for (guint c = 1; c < n; c++) {
		CliCompareColumn *col = g_ptr_array_index(cmp->columns, c);
		if (col->test != NULL && base->test != NULL &&
		    g_strcmp0(col->test, base->test) != 0) {
			g_autofree char *line = g_strdup_printf(
			    "note: %s ran %s but %s ran %s: their metrics do not match", col->label,
			    col->test, base->label, base->test);
			cli_compare_append_line(out, line);
		}
	}
	if (cmp->mismatches->len > 0) {
		g_string_append(out, "\nParameters differ (not a like-for-like comparison):\n");
		for (guint m = 0; m < cmp->mismatches->len; m++) {
			CliCompareMismatch *mm = g_ptr_array_index(cmp->mismatches, m);
			g_autoptr(GString) line = g_string_new(NULL);
			g_string_append_printf(line, "  %s %s:", mm->test, mm->param);
			for (guint c = 0; c < n; c++) {
				CliCompareColumn *col = g_ptr_array_index(cmp->columns, c);
				if (mm->values[c] != NULL)
					g_string_append_printf(line, " %s=%s", col->label,
					                       mm->values[c]);
			}
			cli_compare_append_line(out, line->str);
		}
	}
	for (guint r = 0; r < cmp->rows->len;) {
		guint end = cli_compare_group_end(cmp, r);
		g_string_append_c(out, '\n');
		cli_compare_render_group(cmp, out, r, end);
		r = end;
	}
	g_string_append_c(out, '\n');
	for (guint p = 0; p < cmp->pairs->len; p++) {
		CliComparePair *pair = g_ptr_array_index(cmp->pairs, p);
		CliCompareColumn *col = g_ptr_array_index(cmp->columns, pair->column);
		g_autoptr(GString) line = g_string_new(NULL);

		if (pair->n_not_significant > 0)
			any_ns = TRUE;
		if (pair->n_rows == 0) {
			g_string_append_printf(line, "%s vs %s: no metric to compare", col->label,
			                       base->label);
			cli_compare_append_line(out, line->str);
			continue;
		}
		{
			g_autofree char *gm = cli_compare_format_ratio(pair->geomean);
			g_string_append_printf(
			    line, "%s vs %s: geometric mean ratio %s over %u metric%s", col->label,
			    base->label, gm, pair->n_rows, pair->n_rows == 1 ? "" : "s");
		}
		if (pair->n_not_significant > 0)
			g_string_append_printf(line, ", %u within noise", pair->n_not_significant);
		cli_compare_append_line(out, line->str);
		if (pair->best_row >= 0 && pair->worst_row != pair->best_row) {
			g_autofree char *best =
			    cli_compare_row_sentence(cmp, pair->best_row, pair->column);
			g_autofree char *worst =
			    cli_compare_row_sentence(cmp, pair->worst_row, pair->column);
			g_autofree char *best_line = g_strdup_printf("  best:  %s", best);
			g_autofree char *worst_line = g_strdup_printf("  worst: %s", worst);
			cli_compare_append_line(out, best_line);
			cli_compare_append_line(out, worst_line);
		}
	}
	g_string_append(out,
	                "Ratios are column / first column; the geometric mean inverts rows where "
	                "lower is better.\n");
	if (any_ns)
		g_string_append(out,
		                "n.s.: not significant, within run-to-run noise (Welch's t-test, "
		                "p >= 0.05).\n");
	return out;
}

/* ---- JSON ---------------------------------------------------------------------------- */

static void cli_compare_add_double_or_null(JsonBuilder *builder, double v)
{
	if (isnan(v) || isinf(v))
		json_builder_add_null_value(builder);
	else
		json_builder_add_double_value(builder, v);
}

JsonNode *cli_comparison_to_json(CliComparison *cmp)
{
	g_autoptr(JsonBuilder) b = json_builder_new();
	guint n = cmp->columns->len;

	json_builder_begin_object(b);
	json_builder_set_member_name(b, "guestbench");
	json_builder_add_string_value(b, GB_VERSION);
	json_builder_set_member_name(b, "command");
	json_builder_add_string_value(b, "compare");
	json_builder_set_member_name(b, "by");
	json_builder_add_string_value(b, cmp->by == CLI_COMPARE_BY_GUEST ? "guest" : "document");
	json_builder_set_member_name(b, "alpha");
	json_builder_add_double_value(b, CLI_COMPARE_ALPHA);

	json_builder_set_member_name(b, "columns");
	json_builder_begin_array(b);
	for (guint c = 0; c < n; c++) {
		CliCompareColumn *col = g_ptr_array_index(cmp->columns, c);
		json_builder_begin_object(b);
		json_builder_set_member_name(b, "label");
		json_builder_add_string_value(b, col->label);
		json_builder_set_member_name(b, "source");
		json_builder_add_string_value(b, col->source);
		json_builder_set_member_name(b, "guest");
		json_builder_add_string_value(b, col->guest);
		json_builder_set_member_name(b, "test");
		if (col->test != NULL)
			json_builder_add_string_value(b, col->test);
		else
			json_builder_add_null_value(b);
		json_builder_set_member_name(b, "error");
		if (col->error != NULL)
			json_builder_add_string_value(b, col->error);
		else
			json_builder_add_null_value(b);
		json_builder_set_member_name(b, "params");
		if (col->params != NULL) {
			JsonNode *node = json_node_init_object(json_node_alloc(), col->params);
			json_builder_add_value(b, node);
		} else {
			json_builder_add_null_value(b);
		}
		json_builder_end_object(b);
	}
	json_builder_end_array(b);

	json_builder_set_member_name(b, "param_mismatches");
	json_builder_begin_array(b);
	for (guint m = 0; m < cmp->mismatches->len; m++) {
		CliCompareMismatch *mm = g_ptr_array_index(cmp->mismatches, m);
		json_builder_begin_object(b);
		json_builder_set_member_name(b, "test");
		json_builder_add_string_value(b, mm->test);
		json_builder_set_member_name(b, "param");
		json_builder_add_string_value(b, mm->param);
		json_builder_set_member_name(b, "values");
		json_builder_begin_array(b);
		for (guint c = 0; c < n; c++) {
			if (mm->values[c] != NULL)
				json_builder_add_string_value(b, mm->values[c]);
			else
				json_builder_add_null_value(b);
		}
		json_builder_end_array(b);
		json_builder_end_object(b);
	}
	json_builder_end_array(b);

	json_builder_set_member_name(b, "rows");
	json_builder_begin_array(b);
	for (guint r = 0; r < cmp->rows->len; r++) {
		CliCompareRow *row = g_ptr_array_index(cmp->rows, r);
		json_builder_begin_object(b);
		json_builder_set_member_name(b, "test");
		json_builder_add_string_value(b, row->test);
		json_builder_set_member_name(b, "metric");
		json_builder_add_string_value(b, row->metric);
		json_builder_set_member_name(b, "unit");
		json_builder_add_string_value(b, row->unit);
		json_builder_set_member_name(b, "labels");
		json_builder_begin_object(b);
		for (guint l = 0; row->label_names[l] != NULL; l++) {
			json_builder_set_member_name(b, row->label_names[l]);
			json_builder_add_string_value(b, row->label_values[l]);
		}
		json_builder_end_object(b);
		json_builder_set_member_name(b, "lower_is_better");
		json_builder_add_boolean_value(b, row->lower_is_better);
		json_builder_set_member_name(b, "values");
		json_builder_begin_array(b);
		for (guint c = 0; c < n; c++) {
			const CliCompareCell *cell = &row->cells[c];
			if (!cell->present) {
				json_builder_add_null_value(b);
				continue;
			}
			json_builder_begin_object(b);
			json_builder_set_member_name(b, "value");
			json_builder_add_double_value(b, cell->value);
			json_builder_set_member_name(b, "runs");
			json_builder_add_int_value(b, cell->n_runs);
			json_builder_set_member_name(b, "stddev");
			if (cell->n_runs > 1)
				json_builder_add_double_value(b, cell->stddev);
			else
				json_builder_add_null_value(b);
			json_builder_end_object(b);
		}
		json_builder_end_array(b);
		json_builder_set_member_name(b, "ratios");
		json_builder_begin_array(b);
		for (guint c = 0; c < n; c++)
			cli_compare_add_double_or_null(b, row->ratios[c]);
		json_builder_end_array(b);
		json_builder_set_member_name(b, "change_percent");
		json_builder_begin_array(b);
		for (guint c = 0; c < n; c++)
			cli_compare_add_double_or_null(b, (row->ratios[c] - 1.0) * 100.0);
		json_builder_end_array(b);
		json_builder_set_member_name(b, "significant");
		json_builder_begin_array(b);
		for (guint c = 0; c < n; c++) {
			if (row->significance[c] == CLI_SIGNIFICANCE_UNKNOWN)
				json_builder_add_null_value(b);
			else
				json_builder_add_boolean_value(b, row->significance[c] ==
				                                      CLI_SIGNIFICANCE_YES);
		}
		json_builder_end_array(b);
		json_builder_end_object(b);
	}
	json_builder_end_array(b);

	json_builder_set_member_name(b, "pairs");
	json_builder_begin_array(b);
	for (guint p = 0; p < cmp->pairs->len; p++) {
		CliComparePair *pair = g_ptr_array_index(cmp->pairs, p);
		CliCompareColumn *col = g_ptr_array_index(cmp->columns, pair->column);
		CliCompareColumn *base = g_ptr_array_index(cmp->columns, 0);
		json_builder_begin_object(b);
		json_builder_set_member_name(b, "column");
		json_builder_add_string_value(b, col->label);
		json_builder_set_member_name(b, "baseline");
		json_builder_add_string_value(b, base->label);
		json_builder_set_member_name(b, "geomean_ratio");
		cli_compare_add_double_or_null(b, pair->geomean);
		json_builder_set_member_name(b, "metrics");
		json_builder_add_int_value(b, pair->n_rows);
		json_builder_set_member_name(b, "not_significant");
		json_builder_add_int_value(b, pair->n_not_significant);
		json_builder_end_object(b);
	}
	json_builder_end_array(b);
	json_builder_end_object(b);
	return json_builder_get_root(b);
}

/* ---- CSV ----------------------------------------------------------------------------- */

static void cli_compare_csv_double(GString *out, double v)
{
	char buf[G_ASCII_DTOSTR_BUF_SIZE];

	g_string_append_c(out, ',');
	if (!isnan(v) && !isinf(v))
		g_string_append(out, g_ascii_dtostr(buf, sizeof(buf), v));
}

GString *cli_comparison_render_csv(CliComparison *cmp)
{
	GString *out = g_string_new("test,metric,unit,labels,column,value,stddev,runs,ratio,"
	                            "change_percent,significant\n");

	for (guint r = 0; r < cmp->rows->len; r++) {
		CliCompareRow *row = g_ptr_array_index(cmp->rows, r);
		for (guint c = 0; c < cmp->columns->len; c++) {
			CliCompareColumn *col = g_ptr_array_index(cmp->columns, c);
			const CliCompareCell *cell = &row->cells[c];

			cli_csv_append_text(out, row->test);
			g_string_append_c(out, ',');
			cli_csv_append_text(out, row->metric);
			g_string_append_c(out, ',');
			cli_csv_append_text(out, row->unit);
			g_string_append_c(out, ',');
			cli_csv_append_text(out, row->labels_key);
			g_string_append_c(out, ',');
			cli_csv_append_field(out, col->label);
			cli_compare_csv_double(out, cell->present ? cell->value : NAN);
			cli_compare_csv_double(out, cell->present && cell->n_runs > 1 ? cell->stddev
			                                                              : NAN);
			if (cell->present)
				g_string_append_printf(out, ",%u", cell->n_runs);
			else
				g_string_append_c(out, ',');
			cli_compare_csv_double(out, c > 0 ? row->ratios[c] : NAN);
			cli_compare_csv_double(out, c > 0 ? (row->ratios[c] - 1.0) * 100.0 : NAN);
			g_string_append_c(out, ',');
			if (c > 0 && row->significance[c] != CLI_SIGNIFICANCE_UNKNOWN)
				g_string_append(
				    out, cli_compare_significance_to_string(row->significance[c]));
			g_string_append_c(out, '\n');
		}
	}
	return out;
}
