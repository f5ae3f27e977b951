/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <math.h>
#include <string.h>

#include "guestbench-protocol.h"

#include "render/compare-view.h"
#include "render/csv.h"
#include "render/escape.h"
#include "render/table.h"

/* The text view fits this many columns when it has two columns of values. */
#define CLI_COMPARE_TEXT_WIDTH 100
/* Column labels longer than this are shown as letters (A, B, ...) in the text tables. */
#define CLI_COMPARE_SHORT_LABEL 16

/*
 * How a number of this unit is written: divided by *div, "%.*f" with *decimals, then
 * *suffix. FALSE for units without a scale ("%.4g UNIT").
 */
static gboolean cli_compare_scale(double value, const char *unit, double *div, int *decimals,
                                  const char **suffix)
{
	static const char *const byte_units[][6] = {
		{ "B/s", "kB/s", "MB/s", "GB/s", "TB/s", "PB/s" },
		{ "IO/s", "kIO/s", "MIO/s", "GIO/s", "TIO/s", "PIO/s" },
		{ "B", "kB", "MB", "GB", "TB", "PB" },
	};
	static const char *const time_units[] = { "ns", "µs", "ms", "s" };
	double v = fabs(value);
	guint i = 0;

	*div = 1;
	if (g_strcmp0(unit, "ns") == 0) {
		while (v >= 1000 && i + 1 < G_N_ELEMENTS(time_units)) {
			v /= 1000;
			*div *= 1000;
			i++;
		}
		*decimals = i == 0 && value == floor(value) ? 0 : 2;
		*suffix = time_units[i];
		return TRUE;
	}
	for (guint u = 0; u < G_N_ELEMENTS(byte_units); u++) {
		if (g_strcmp0(unit, byte_units[u][0]) != 0)
			continue;
		while (v >= 1000 && i + 1 < G_N_ELEMENTS(byte_units[u])) {
			v /= 1000;
			*div *= 1000;
			i++;
		}
		*decimals = 2;
		*suffix = byte_units[u][i];
		return TRUE;
	}
	if (g_strcmp0(unit, "%") == 0) {
		*decimals = 1;
		*suffix = "%";
		return TRUE;
	}
	return FALSE;
}

char *cli_compare_format_value(double value, const char *unit)
{
	double div = 1;
	int decimals = 0;
	const char *suffix = NULL;

	if (isnan(value))
		return g_strdup("—");
	if (cli_compare_scale(value, unit, &div, &decimals, &suffix))
		return g_strdup_printf("%.*f %s", decimals, value / div, suffix);
	return g_strdup_printf("%.4g %s", value, unit != NULL ? unit : "");
}

/* "2.54 ± 0.12 GB/s": the spread in the value's own scale, the unit once. */
static char *cli_compare_format_value_sd(double value, double stddev, const char *unit)
{
	double div = 1;
	int decimals = 0;
	const char *suffix = NULL;

	if (cli_compare_scale(value, unit, &div, &decimals, &suffix))
		return g_strdup_printf("%.*f ± %.*f %s", MAX(decimals, 1), value / div,
		                       MAX(decimals, 1), stddev / div, suffix);
	return g_strdup_printf("%.4g ± %.4g %s", value, stddev, unit != NULL ? unit : "");
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

static char *cli_compare_sentence(CliComparison *cmp, guint row_idx, guint column,
                                  const char *const *labels)
{
	CliCompareRow *row = g_ptr_array_index(cmp->rows, row_idx);
	g_autofree char *ratio = cli_compare_format_ratio(row->ratios[column]);
	g_autofree char *where = NULL;

	if (row->labels_text[0] != '\0')
		where = g_strdup_printf(" at %s", row->labels_text);
	return g_strdup_printf("%s is %s %s%s (%s%s)", labels[column], ratio, labels[0],
	                       where != NULL ? where : "", row->metric,
	                       row->lower_is_better ? ", lower is better" : "");
}

/* The columns' own labels, as a vector (owned by the columns). */
static const char **cli_compare_labels(CliComparison *cmp)
{
	const char **labels = g_new0(const char *, cmp->columns->len + 1);

	for (guint c = 0; c < cmp->columns->len; c++)
		labels[c] = ((CliCompareColumn *)g_ptr_array_index(cmp->columns, c))->label;
	return labels;
}

char *cli_compare_row_sentence(CliComparison *cmp, guint row_idx, guint column)
{
	g_autofree const char **labels = cli_compare_labels(cmp);

	return cli_compare_sentence(cmp, row_idx, column, labels);
}

/*
 * Sides that ran with different numbers of benchmarks at once on their hypervisor
 * (labels.concurrent) measured different neighbours as much as different guests.
 */
static void cli_comparison_warn_concurrent(CliComparison *cmp, const char *const *labels,
                                           GPtrArray *warnings)
{
	g_autoptr(GString) sides = g_string_new(NULL);
	gint64 first = 0;
	gboolean differ = FALSE;

	for (guint c = 0; c < cmp->columns->len; c++) {
		CliCompareColumn *col = g_ptr_array_index(cmp->columns, c);

		if (col->n_runs == 0 || col->concurrent == 0)
			continue;
		if (first == 0)
			first = col->concurrent;
		differ |= col->concurrent != first;
		g_string_append_printf(sides, "%s%s %" G_GINT64_FORMAT, sides->len > 0 ? ", " : "",
		                       labels[c], col->concurrent);
	}
	if (differ)
		g_ptr_array_add(
		    warnings, g_strdup_printf(
		                  "the sides ran with different numbers of benchmarks at once on "
		                  "their hypervisor (labels.concurrent: %s): a difference may be "
		                  "the neighbours' load, not the guests'; compare runs of the same "
		                  "schedule ('guestbench bench' runs one per hypervisor at a time "
		                  "unless --per-host says otherwise)",
		                  sides->str));
}

GPtrArray *cli_comparison_warnings(CliComparison *cmp, const char *const *labels)
{
	GPtrArray *warnings = g_ptr_array_new_with_free_func(g_free);
	g_autofree const char **own = labels == NULL ? cli_compare_labels(cmp) : NULL;
	g_autoptr(GString) single = g_string_new(NULL);
	g_autoptr(GPtrArray) names = g_ptr_array_new();
	guint n_single = 0, n_valued = 0;

	if (labels == NULL)
		labels = own;
	for (guint c = 0; c < cmp->columns->len; c++) {
		CliCompareColumn *col = g_ptr_array_index(cmp->columns, c);
		if (col->n_runs == 0)
			continue;
		n_valued++;
		if (col->n_runs != 1)
			continue;
		g_ptr_array_add(names, (gpointer)labels[c]);
		n_single++;
	}
	/* "A", "A and B", "A, B and C" */
	for (guint i = 0; i < names->len; i++)
		g_string_append_printf(single, "%s%s",
		                       i == 0                ? ""
		                       : i + 1 == names->len ? " and "
		                                             : ", ",
		                       (const char *)g_ptr_array_index(names, i));
	if (n_single > 0 && n_single == n_valued)
		g_ptr_array_add(
		    warnings,
		    g_strdup_printf("%s %s (runs = 1): there is no noise estimate, so the t-test "
		                    "cannot tell a difference from run-to-run noise; repeat with "
		                    "'guestbench bench --runs 3' or more",
		                    single->str,
		                    n_single == 1 ? "is a single run" : "are single runs"));
	else if (n_single > 0)
		g_ptr_array_add(
		    warnings,
		    g_strdup_printf("%s %s (runs = 1): no noise estimate of %s own; differences "
		                    "are judged against the other side's run-to-run spread only",
		                    single->str,
		                    n_single == 1 ? "is a single run" : "are single runs",
		                    n_single == 1 ? "its" : "their"));
	cli_comparison_warn_concurrent(cmp, labels, warnings);
	return warnings;
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

/* The widths of the columns of a table of escaped cells. */
static gsize *cli_compare_table_widths(GPtrArray *rows, guint *n_cols)
{
	gsize *widths;

	*n_cols = 0;
	for (guint r = 0; r < rows->len; r++)
		*n_cols = MAX(*n_cols, ((GPtrArray *)g_ptr_array_index(rows, r))->len);
	widths = g_new0(gsize, *n_cols);
	for (guint r = 0; r < rows->len; r++) {
		GPtrArray *cells = g_ptr_array_index(rows, r);
		for (guint c = 0; c < cells->len; c++)
			widths[c] = MAX(widths[c], cli_text_width(g_ptr_array_index(cells, c)));
	}
	return widths;
}

/* The width of the widest line of the table: columns two spaces apart. */
static gsize cli_compare_table_width(GPtrArray *rows)
{
	guint n_cols = 0;
	g_autofree gsize *widths = cli_compare_table_widths(rows, &n_cols);
	gsize total = 0;

	for (guint c = 0; c < n_cols; c++)
		total += widths[c] + (c + 1 < n_cols ? 2 : 0);
	return total;
}

/* An aligned table with any number of columns, of escaped cells (cli_compare_add_cell()). */
static void cli_compare_append_table(GString *out, GPtrArray *rows)
{
	g_autofree gsize *widths = NULL;
	guint n_cols = 0;

	widths = cli_compare_table_widths(rows, &n_cols);
	for (guint r = 0; r < rows->len; r++) {
		GPtrArray *cells = g_ptr_array_index(rows, r);
		gsize start = out->len;

		for (guint c = 0; c < cells->len; c++) {
			const char *cell = g_ptr_array_index(cells, c);
			g_string_append(out, cell);
			if (c + 1 < cells->len) {
				for (gsize w = cli_text_width(cell); w < widths[c] + 2; w++)
					g_string_append_c(out, ' ');
			}
		}
		cli_table_end_line(out, start);
	}
}

static GPtrArray *cli_compare_cells_new(void)
{
	return g_ptr_array_new_with_free_func(g_free);
}

/* Guest text into a cell: escaped once, here, and capped as a table's cells. */
static void cli_compare_add_cell(GPtrArray *cells, char *text)
{
	g_ptr_array_add(cells, cli_table_escape_cell(text, CLI_TABLE_CELL_MAX));
	g_free(text);
}

/* The value cell: "128.88 MB/s", with runs "128.88 ± 1.20 MB/s". */
static char *cli_compare_cell_text(const CliCompareCell *cell, const char *unit)
{
	if (!cell->present)
		return g_strdup("—");
	if (cell->n_runs < 2)
		return cli_compare_format_value(cell->value, unit);
	return cli_compare_format_value_sd(cell->value, cell->stddev, unit);
}

static void cli_compare_append_line(GString *out, const char *text);

static void cli_compare_render_group(CliComparison *cmp, GString *out, guint first, guint end,
                                     const char *const *labels)
{
	CliCompareRow *head = g_ptr_array_index(cmp->rows, first);
	guint n = cmp->columns->len;
	g_autoptr(GPtrArray) rows =
	    g_ptr_array_new_with_free_func((GDestroyNotify)g_ptr_array_unref);
	GPtrArray *header = cli_compare_cells_new();
	g_autofree char *title = NULL;

	title = g_strdup_printf("%s (%s, %s%s%s)", head->metric, head->test, head->unit,
	                        head->lower_is_better ? ", lower is better" : "",
	                        head->headline ? "" : "; not in the summary");
	cli_compare_append_line(out, title);
	g_ptr_array_add(rows, header);
	g_ptr_array_add(header, g_strdup("LABELS"));
	for (guint c = 0; c < n; c++)
		cli_compare_add_cell(header, g_strdup(labels[c]));
	for (guint c = 1; c < n; c++) {
		cli_compare_add_cell(header, g_strdup_printf("%s/%s", labels[c], labels[0]));
		g_ptr_array_add(header, g_strdup("CHANGE"));
	}
	for (guint r = first; r < end; r++) {
		CliCompareRow *row = g_ptr_array_index(cmp->rows, r);
		GPtrArray *cells = cli_compare_cells_new();

		g_ptr_array_add(rows, cells);
		cli_compare_add_cell(
		    cells, g_strdup(row->labels_text[0] != '\0' ? row->labels_text : "-"));
		for (guint c = 0; c < n; c++)
			cli_compare_add_cell(cells,
			                     cli_compare_cell_text(&row->cells[c], row->unit));
		for (guint c = 1; c < n; c++) {
			g_autofree char *change = cli_compare_format_change(row->ratios[c]);
			g_ptr_array_add(cells, cli_compare_format_ratio(row->ratios[c]));
			if (row->significance[c] == CLI_SIGNIFICANCE_NO)
				g_ptr_array_add(cells, g_strdup_printf("%s n.s.", change));
			else
				g_ptr_array_add(cells, g_steal_pointer(&change));
		}
	}
	/* the sentence ("host is 1.94x kvm64 at 16 KiB") only where it fits */
	if (n == 2) {
		g_ptr_array_add(header, g_strdup("SUMMARY"));
		for (guint r = first; r < end; r++) {
			CliCompareRow *row = g_ptr_array_index(cmp->rows, r);
			GPtrArray *cells = g_ptr_array_index(rows, r - first + 1);
			g_autofree char *ratio = cli_compare_format_ratio(row->ratios[1]);

			if (isnan(row->ratios[1]))
				g_ptr_array_add(cells, g_strdup(""));
			else if (row->labels_text[0] != '\0')
				cli_compare_add_cell(
				    cells, g_strdup_printf("%s is %s %s at %s", labels[1], ratio,
				                           labels[0], row->labels_text));
			else
				cli_compare_add_cell(
				    cells,
				    g_strdup_printf("%s is %s %s", labels[1], ratio, labels[0]));
		}
		if (cli_compare_table_width(rows) > CLI_COMPARE_TEXT_WIDTH) {
			for (guint r = 0; r < rows->len; r++) {
				GPtrArray *cells = g_ptr_array_index(rows, r);
				g_ptr_array_set_size(cells, cells->len - 1);
			}
		}
	}
	cli_compare_append_table(out, rows);
}

/* Our text around guest text: escaped whole, then folded at spaces to fit the width. */
static void cli_compare_append_wrapped(GString *out, const char *text, const char *indent)
{
	g_autofree char *escaped = cli_escape_terminal(text);
	gsize lead = strspn(escaped, " ");
	g_auto(GStrv) words = g_strsplit(escaped + lead, " ", -1);
	g_autoptr(GString) line = g_string_new_len(escaped, lead);

	for (guint i = 0; words[i] != NULL; i++) {
		/* a word of guest text is capped as a table's cell: folding cannot split it */
		g_autofree char *word = cli_text_truncate(words[i], CLI_TABLE_CELL_MAX);

		if (line->len > lead &&
		    cli_text_width(line->str) + 1 + cli_text_width(word) > CLI_COMPARE_TEXT_WIDTH) {
			gsize start = out->len;

			g_string_append(out, line->str);
			cli_table_end_line(out, start);
			g_string_assign(line, indent);
			lead = line->len;
		} else if (line->len > lead) {
			g_string_append_c(line, ' ');
		}
		g_string_append(line, word);
	}
	{
		gsize start = out->len;

		g_string_append(out, line->str);
		cli_table_end_line(out, start);
	}
}

/* One line of ours around guest text: escaped, capped as a table's last cell, cut to the terminal.
 */
static void cli_compare_append_line(GString *out, const char *text)
{
	g_autofree char *cell = cli_table_escape_cell(text, CLI_TABLE_LAST_CELL_MAX);
	gsize start = out->len;

	g_string_append(out, cell);
	cli_table_end_line(out, start);
}

/*
 * The names the text tables use: the labels when all are short, else letters
 * (A, B, ... Z, then C27, C28, ...), each explained at the top.
 */
static GStrv cli_compare_display_labels(CliComparison *cmp)
{
	guint n = cmp->columns->len;
	GStrv labels = g_new0(char *, n + 1);
	gboolean short_enough = TRUE;

	for (guint c = 0; c < n; c++) {
		CliCompareColumn *col = g_ptr_array_index(cmp->columns, c);
		g_autofree char *escaped = cli_escape_terminal(col->label);
		if (cli_text_width(escaped) > CLI_COMPARE_SHORT_LABEL)
			short_enough = FALSE;
	}
	for (guint c = 0; c < n; c++) {
		CliCompareColumn *col = g_ptr_array_index(cmp->columns, c);
		if (short_enough)
			labels[c] = g_strdup(col->label);
		else if (c < 26)
			labels[c] = g_strdup_printf("%c", 'A' + c);
		else
			labels[c] = g_strdup_printf("C%u", c + 1);
	}
	return labels;
}

static const char *cli_compare_column_file(CliCompareColumn *col)
{
	return col->given != NULL ? col->given : col->source;
}

/* Whether the label says where the column came from: "kvm64" for kvm64.json or id kvm64. */
static gboolean cli_compare_label_names_file(CliCompareColumn *col)
{
	const char *file = cli_compare_column_file(col);
	g_autofree char *base = g_path_get_basename(file);

	if (g_str_has_suffix(base, ".json"))
		base[strlen(base) - strlen(".json")] = '\0';
	return g_strcmp0(file, col->label) == 0 || g_strcmp0(base, col->label) == 0;
}

/*
 * "A: 2026-12-02T11-40-05Z-bench-aes, guest vm1, aes, 3 runs", then the file
 * it came from where the label does not say it (and one_file did not).
 */
static void cli_compare_append_legend(GString *out, CliComparison *cmp, guint c,
                                      const char *display, gboolean one_file)
{
	CliCompareColumn *col = g_ptr_array_index(cmp->columns, c);
	const char *file = cli_compare_column_file(col);
	g_autoptr(GString) line = g_string_new(NULL);

	g_string_append_printf(line, "%s: ", display);
	if (g_strcmp0(display, col->label) != 0)
		g_string_append_printf(line, "%s, ", col->label);
	g_string_append_printf(line, "guest %s, ", col->guest);
	if (col->error != NULL)
		g_string_append_printf(line, "no result (%s)", col->error);
	else if (col->n_runs == 0)
		g_string_append_printf(line, "%s, no values", col->test);
	else
		g_string_append_printf(line, "%s, %u run%s", col->test, col->n_runs,
		                       col->n_runs == 1 ? "" : "s");
	cli_compare_append_line(out, line->str);
	if (!one_file && !cli_compare_label_names_file(col)) {
		g_autofree char *from = g_strdup_printf("   %s", file);
		cli_compare_append_line(out, from);
	}
}

/* "over 6 headline metrics (aes-128-gcm)": the metric names the summary used. */
static char *cli_compare_pair_metrics(CliComparison *cmp, guint column)
{
	g_autoptr(GPtrArray) names = g_ptr_array_new();
	g_autoptr(GString) text = g_string_new(NULL);

	for (guint r = 0; r < cmp->rows->len; r++) {
		CliCompareRow *row = g_ptr_array_index(cmp->rows, r);
		double ratio = row->ratios[column];
		gboolean seen = FALSE;

		if (!row->headline || isnan(ratio) || isinf(ratio) || !(ratio > 0))
			continue;
		for (guint i = 0; i < names->len; i++)
			seen = seen || g_strcmp0(g_ptr_array_index(names, i), row->metric) == 0;
		if (!seen)
			g_ptr_array_add(names, row->metric);
	}
	for (guint i = 0; i < names->len; i++)
		g_string_append_printf(text, "%s%s", i > 0 ? ", " : "",
		                       (const char *)g_ptr_array_index(names, i));
	return g_string_free(g_steal_pointer(&text), FALSE);
}

GString *cli_comparison_render_text(CliComparison *cmp)
{
	GString *out = g_string_new(NULL);
	g_auto(GStrv) labels = cli_compare_display_labels(cmp);
	g_autoptr(GPtrArray) warnings = NULL;
	CliCompareColumn *base = g_ptr_array_index(cmp->columns, 0);
	guint n = cmp->columns->len;
	gboolean any_ns = FALSE;
	gboolean one_file = cmp->by == CLI_COMPARE_BY_GUEST;

	/* where each column came from, and the ones that have nothing to show */
	for (guint c = 1; c < n; c++) {
		CliCompareColumn *col = g_ptr_array_index(cmp->columns, c);
		one_file = one_file && g_strcmp0(cli_compare_column_file(col),
		                                 cli_compare_column_file(base)) == 0;
	}
	if (one_file) {
		g_autofree char *line =
		    g_strdup_printf("%s, by guest:", cli_compare_column_file(base));
		cli_compare_append_line(out, line);
	}
	for (guint c = 0; c < n; c++)
		cli_compare_append_legend(out, cmp, c, labels[c], one_file);
	warnings = cli_comparison_warnings(cmp, (const char *const *)labels);
	for (guint w = 0; w < warnings->len; w++) {
		g_autofree char *line =
		    g_strdup_printf("warning: %s", (char *)g_ptr_array_index(warnings, w));
		cli_compare_append_wrapped(out, line, "  ");
	}
	if (cmp->mismatches->len > 0) {
		g_string_append(out, "\nParameters differ (not a like-for-like comparison):\n");
		for (guint m = 0; m < cmp->mismatches->len; m++) {
			CliCompareMismatch *mm = g_ptr_array_index(cmp->mismatches, m);
			g_autoptr(GString) line = g_string_new(NULL);
			g_string_append_printf(line, "  %s %s:", mm->test, mm->param);
			for (guint c = 0; c < n; c++) {
				if (mm->values[c] != NULL)
					g_string_append_printf(line, " %s=%s", labels[c],
					                       mm->values[c]);
			}
			cli_compare_append_wrapped(out, line->str, "    ");
		}
	}
	for (guint r = 0; r < cmp->rows->len;) {
		guint end = cli_compare_group_end(cmp, r);
		g_string_append_c(out, '\n');
		cli_compare_render_group(cmp, out, r, end, (const char *const *)labels);
		r = end;
	}
	g_string_append_c(out, '\n');
	for (guint p = 0; p < cmp->pairs->len; p++) {
		CliComparePair *pair = g_ptr_array_index(cmp->pairs, p);
		const char *label = labels[pair->column];
		g_autoptr(GString) line = g_string_new(NULL);

		if (pair->n_not_significant > 0)
			any_ns = TRUE;
		if (pair->n_rows == 0) {
			g_string_append_printf(line,
			                       "%s vs %s: no headline metric with a value on "
			                       "both sides",
			                       label, labels[0]);
			cli_compare_append_wrapped(out, line->str, "  ");
			continue;
		}
		{
			g_autofree char *gm = cli_compare_format_ratio(pair->geomean);
			g_autofree char *metrics = cli_compare_pair_metrics(cmp, pair->column);
			g_string_append_printf(line,
			                       "%s vs %s: geometric mean ratio %s over %u headline "
			                       "metric%s (%s)",
			                       label, labels[0], gm, pair->n_rows,
			                       pair->n_rows == 1 ? "" : "s", metrics);
		}
		if (pair->n_not_significant > 0)
			g_string_append_printf(line, ", %u within noise", pair->n_not_significant);
		cli_compare_append_wrapped(out, line->str, "  ");
		if (pair->best_row >= 0 && pair->worst_row != pair->best_row) {
			g_autofree char *best = cli_compare_sentence(
			    cmp, pair->best_row, pair->column, (const char *const *)labels);
			g_autofree char *worst = cli_compare_sentence(
			    cmp, pair->worst_row, pair->column, (const char *const *)labels);
			g_autofree char *best_line = g_strdup_printf("  best:  %s", best);
			g_autofree char *worst_line = g_strdup_printf("  worst: %s", worst);
			cli_compare_append_wrapped(out, best_line, "    ");
			cli_compare_append_wrapped(out, worst_line, "    ");
		}
	}
	if (cmp->n_empty_rows > 0)
		g_string_append_printf(out, "Not shown: %u row%s without a value in any column.\n",
		                       cmp->n_empty_rows, cmp->n_empty_rows == 1 ? "" : "s");
	g_string_append(out, "Ratios are column / first column. The summary uses each benchmark's "
	                     "headline metrics\nonly, inverting rows where lower is better.\n");
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
		json_builder_set_member_name(b, "runs");
		json_builder_add_int_value(b, col->n_runs);
		/* labels.concurrent of its run, null when the document does not say */
		json_builder_set_member_name(b, "concurrent");
		if (col->concurrent > 0)
			json_builder_add_int_value(b, col->concurrent);
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
		json_builder_set_member_name(b, "headline");
		json_builder_add_boolean_value(b, row->headline);
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
			cli_compare_add_double_or_null(b, cell->value);
			json_builder_set_member_name(b, "runs");
			json_builder_add_int_value(b, cell->n_runs);
			json_builder_set_member_name(b, "stddev");
			/* values near the double's limits overflow the mean or the deviation:
			 * JSON has no inf, so such a number is null */
			if (cell->n_runs > 1)
				cli_compare_add_double_or_null(b, cell->stddev);
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

	json_builder_set_member_name(b, "empty_rows_left_out");
	json_builder_add_int_value(b, cmp->n_empty_rows);

	json_builder_set_member_name(b, "warnings");
	json_builder_begin_array(b);
	{
		g_autoptr(GPtrArray) warnings = cli_comparison_warnings(cmp, NULL);
		for (guint w = 0; w < warnings->len; w++)
			json_builder_add_string_value(b, g_ptr_array_index(warnings, w));
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
