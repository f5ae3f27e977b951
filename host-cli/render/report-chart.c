/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <math.h>

#include "guestbench-protocol.h"

#include "render/compare-view.h"
#include "render/report-html.h"
#include "render/report.h"

#define CLI_REPORT_PLOT_HEIGHT 260.0
#define CLI_REPORT_MARGIN_LEFT 92.0
#define CLI_REPORT_MARGIN_TOP 36.0
#define CLI_REPORT_MARGIN_RIGHT 16.0
/* values spanning this factor (two decades) or more get a log axis, others a linear one from 0 */
#define CLI_REPORT_LOG_SPAN 100.0
/*
 * Legend text is 12px; what a character takes at most in common sans fonts
 * (DejaVu Sans digits 7.6 px, capitals and m, w up to 10.5), 12 for a wide one.
 */
#define CLI_REPORT_LEGEND_CHAR 7.7
#define CLI_REPORT_LEGEND_BROAD 10.5
#define CLI_REPORT_LEGEND_WIDE 12.0
#define CLI_REPORT_LEGEND_LINE 18.0
#define CLI_REPORT_LEGEND_SWATCH 16.0
#define CLI_REPORT_LEGEND_GAP 18.0

typedef struct {
	gboolean log;
	double lo; /* linear: value; log: log10(value) */
	double hi;
	double vmin, vmax; /* the values drawn */
	double top;        /* y of the plot's top edge: below the legend and the axis note */
} CliReportScale;

static double cli_report_nice_step(double range, guint ticks)
{
	double raw = range / ticks;
	double mag = pow(10, floor(log10(raw)));
	double f = raw / mag;

	if (f <= 1)
		return mag;
	if (f <= 2)
		return 2 * mag;
	if (f <= 5)
		return 5 * mag;
	return 10 * mag;
}

static CliReportScale cli_report_scale(CliComparison *cmp, guint first, guint end)
{
	CliReportScale scale = { .log = FALSE, .lo = 0, .hi = 1, .top = CLI_REPORT_MARGIN_TOP };
	double vmin = INFINITY, vmax = -INFINITY, wmax = -INFINITY;
	gboolean all_positive = TRUE;
	gboolean any = FALSE;

	for (guint r = first; r < end; r++) {
		CliCompareRow *row = g_ptr_array_index(cmp->rows, r);
		for (guint c = 0; c < cmp->columns->len; c++) {
			const CliCompareCell *cell = &row->cells[c];
			double whisker;
			/* a mean or a deviation that overflowed does not choose the axis
			 * (a saved run may hold values near the double's limits) */
			if (!cell->present || !isfinite(cell->value))
				continue;
			any = TRUE;
			vmin = MIN(vmin, cell->value);
			vmax = MAX(vmax, cell->value);
			/* whiskers get room on a linear axis; they do not choose the axis */
			whisker = cell->value + (cell->n_runs > 1 ? cell->stddev : 0);
			wmax = MAX(wmax, isfinite(whisker) ? whisker : cell->value);
			if (!(cell->value > 0))
				all_positive = FALSE;
		}
	}
	if (!any)
		return scale;
	scale.vmin = vmin;
	scale.vmax = vmax;
	if (all_positive && vmax / vmin >= CLI_REPORT_LOG_SPAN) {
		scale.log = TRUE;
		scale.lo = floor(log10(vmin));
		scale.hi = ceil(log10(wmax));
		if (scale.hi <= scale.lo)
			scale.hi = scale.lo + 1;
		return scale;
	}
	{
		double lo = MIN(0, vmin), hi = MAX(0, wmax);
		double step;
		if (hi == lo)
			hi = lo + 1;
		/* halves: hi - lo overflows when the values span the double's range */
		step = 2 * cli_report_nice_step(hi / 2 - lo / 2, 5);
		if (!isfinite(step))
			step = G_MAXDOUBLE;
		scale.lo = floor(lo / step) * step;
		scale.hi = ceil(hi / step) * step;
		scale.lo = isfinite(scale.lo) ? scale.lo : -G_MAXDOUBLE;
		scale.hi = isfinite(scale.hi) ? scale.hi : G_MAXDOUBLE;
	}
	return scale;
}

/* Pixels above the baseline of the plot's bottom edge for value v. */
static double cli_report_y(const CliReportScale *scale, double v)
{
	double t;

	if (scale->log)
		t = v > 0 ? (log10(v) - scale->lo) / (scale->hi - scale->lo) : 0;
	else
		t = (v / 2 - scale->lo / 2) / (scale->hi / 2 - scale->lo / 2);
	if (isnan(t))
		t = 0;
	t = CLAMP(t, 0, 1);
	return scale->top + CLI_REPORT_PLOT_HEIGHT * (1 - t);
}

/*
 * label cut in the middle to at most max_chars characters, keeping its head
 * and its tail (where run ids and names differ: "...-bench-aes-2"); the full
 * label stays in the item's tooltip.
 */
static char *cli_report_abbreviate(const char *label, glong max_chars)
{
	glong len = g_utf8_strlen(label, -1);
	glong head, tail;
	g_autofree char *first = NULL;

	if (len <= max_chars)
		return g_strdup(label);
	max_chars = MAX(max_chars, 3);
	tail = (max_chars - 1) / 2;
	head = max_chars - 1 - tail;
	first = g_utf8_substring(label, 0, head);
	return g_strconcat(first, "…", g_utf8_offset_to_pointer(label, len - tail), NULL);
}

static double cli_report_text_width(const char *text)
{
	double w = 0;

	for (const char *p = text; *p != '\0'; p = g_utf8_next_char(p)) {
		gunichar c = g_utf8_get_char(p);

		if (g_unichar_iswide(c))
			w += CLI_REPORT_LEGEND_WIDE;
		else if (g_unichar_isupper(c) || c == 'm' || c == 'w')
			w += CLI_REPORT_LEGEND_BROAD;
		else
			w += CLI_REPORT_LEGEND_CHAR;
	}
	return w;
}

static double cli_report_legend_width(const char *text)
{
	return CLI_REPORT_LEGEND_SWATCH + cli_report_text_width(text);
}

/*
 * The legend, one item per column, wrapped onto as many lines as the chart's
 * width needs; returns the y below its last line. A label wider than a whole
 * line is abbreviated in the middle.
 */
static double cli_report_append_legend(GString *out, CliComparison *cmp, double width)
{
	double left = 8, right = width - CLI_REPORT_MARGIN_RIGHT;
	double x = left, y = 8;
	glong max_chars =
	    (glong)((right - left - CLI_REPORT_LEGEND_SWATCH) / CLI_REPORT_LEGEND_CHAR);

	for (guint c = 0; c < cmp->columns->len; c++) {
		CliCompareColumn *col = g_ptr_array_index(cmp->columns, c);
		glong fit = max_chars;
		g_autofree char *text = cli_report_abbreviate(col->label, fit);
		double w = cli_report_legend_width(text);

		/* wide characters take more room: cut further until the label fits a line */
		while (w > right - left && fit > 3) {
			g_free(text);
			text = cli_report_abbreviate(col->label, --fit);
			w = cli_report_legend_width(text);
		}

		if (x > left && x + w > right) {
			x = left;
			y += CLI_REPORT_LEGEND_LINE;
		}
		g_string_append(out, "<g class=\"legenditem\"><title>");
		cli_report_escape(out, col->label);
		g_string_append_printf(out,
		                       "</title><rect x=\"%.1f\" y=\"%.1f\" width=\"12\" "
		                       "height=\"12\" fill=\"%s\"/><text class=\"legend\" "
		                       "x=\"%.1f\" y=\"%.1f\">",
		                       x, y, cli_report_color(c), x + CLI_REPORT_LEGEND_SWATCH,
		                       y + 10);
		cli_report_escape(out, text);
		g_string_append(out, "</text></g>");
		x += w + CLI_REPORT_LEGEND_GAP;
	}
	return y + CLI_REPORT_LEGEND_LINE;
}

void cli_report_append_chart(GString *out, CliComparison *cmp, guint first, guint end)
{
	CliCompareRow *head = g_ptr_array_index(cmp->rows, first);
	guint n_groups = end - first;
	guint n_series = cmp->columns->len;
	double bar_w = n_groups * n_series <= 12 ? 30 : n_groups * n_series <= 24 ? 22 : 12;
	double group_gap = 24;
	double group_w = n_series * bar_w + group_gap;
	double plot_w = MAX(420, n_groups * group_w);
	gboolean rotate = FALSE;
	double bottom;
	double width = CLI_REPORT_MARGIN_LEFT + plot_w + CLI_REPORT_MARGIN_RIGHT;
	double height;
	double base_y;
	double x0 = CLI_REPORT_MARGIN_LEFT + (plot_w - n_groups * group_w) / 2;
	CliReportScale scale;
	double zero_y;
	double legend_end;
	g_autoptr(GString) legend = g_string_new(NULL);

	/* slanted group labels when one would not fit under its bars (about 6.5 px a char) */
	for (guint g = 0; g < n_groups; g++) {
		CliCompareRow *row = g_ptr_array_index(cmp->rows, first + g);
		if (6.5 * g_utf8_strlen(row->labels_text, -1) > plot_w / n_groups)
			rotate = TRUE;
	}
	scale = cli_report_scale(cmp, first, end);
	legend_end = cli_report_append_legend(legend, cmp, width);
	/* the axis note on the line below the legend, then the plot */
	scale.top = legend_end + CLI_REPORT_LEGEND_LINE + 8;
	base_y = scale.top + CLI_REPORT_PLOT_HEIGHT;
	zero_y = cli_report_y(&scale, scale.log ? pow(10, scale.lo) : MAX(0, scale.lo));
	bottom = rotate ? 100 : 44;
	height = base_y + bottom;

	g_string_append_printf(out,
	                       "<figure><svg xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" "
	                       "width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\">",
	                       width, height, width, height);
	g_string_append(out, "<title>");
	cli_report_escape_printf(out, "%s (%s) by %s", head->metric, head->unit,
	                         cmp->by == CLI_COMPARE_BY_GUEST ? "guest" : "run");
	g_string_append(out, "</title>");

	g_string_append_len(out, legend->str, legend->len);
	/* which axis, said in words: a log axis makes large differences look small */
	g_string_append_printf(out, "<text class=\"axisnote\" x=\"%.1f\" y=\"%.1f\">",
	                       CLI_REPORT_MARGIN_LEFT, legend_end + 10);
	if (scale.log) {
		g_string_append_printf(out, "log axis: the values span %.0fx, over two decades",
		                       scale.vmax / scale.vmin);
	} else {
		g_string_append(out, scale.lo < 0 ? "linear axis" : "linear axis from 0");
	}
	g_string_append(out, "</text>");

	/* grid and ticks */
	if (scale.log) {
		/* at most about ten lines, however many decades the values span */
		guint decades = (guint)MIN(scale.hi - scale.lo, 10000.0);
		guint stride = MAX(1u, (decades + 9) / 10);
		for (guint i = 0; i <= decades; i += stride) {
			double e = scale.lo + i;
			double y = cli_report_y(&scale, pow(10, e));
			g_autofree char *label = cli_compare_format_value(pow(10, e), head->unit);
			g_string_append_printf(out,
			                       "<line class=\"grid\" x1=\"%.1f\" x2=\"%.1f\" "
			                       "y1=\"%.1f\" y2=\"%.1f\"/>",
			                       CLI_REPORT_MARGIN_LEFT,
			                       CLI_REPORT_MARGIN_LEFT + plot_w, y, y);
			g_string_append_printf(out,
			                       "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" "
			                       "text-anchor=\"end\">",
			                       CLI_REPORT_MARGIN_LEFT - 6, y + 4);
			cli_report_escape(out, label);
			g_string_append(out, "</text>");
		}
	} else {
		double step = 2 * cli_report_nice_step(scale.hi / 2 - scale.lo / 2, 5);
		if (!isfinite(step) || !(step > 0))
			step = G_MAXDOUBLE;
		/* counted, not summed: a step lost in the values' rounding ends the loop */
		for (guint i = 0; i <= 20; i++) {
			double v = scale.lo + i * step;
			double y = cli_report_y(&scale, v);
			g_autofree char *label = NULL;
			if (!(v <= scale.hi + step * 1e-6))
				break;
			label = cli_compare_format_value(v, head->unit);
			g_string_append_printf(out,
			                       "<line class=\"grid\" x1=\"%.1f\" x2=\"%.1f\" "
			                       "y1=\"%.1f\" y2=\"%.1f\"/>",
			                       CLI_REPORT_MARGIN_LEFT,
			                       CLI_REPORT_MARGIN_LEFT + plot_w, y, y);
			g_string_append_printf(out,
			                       "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" "
			                       "text-anchor=\"end\">",
			                       CLI_REPORT_MARGIN_LEFT - 6, y + 4);
			cli_report_escape(out, label);
			g_string_append(out, "</text>");
		}
	}
	g_string_append_printf(out,
	                       "<line class=\"axis\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" "
	                       "y2=\"%.1f\"/>",
	                       CLI_REPORT_MARGIN_LEFT, CLI_REPORT_MARGIN_LEFT, scale.top, base_y);
	/* y axis title, rotated */
	g_string_append_printf(out,
	                       "<text class=\"atitle\" transform=\"translate(14 %.1f) "
	                       "rotate(-90)\" text-anchor=\"middle\">",
	                       scale.top + CLI_REPORT_PLOT_HEIGHT / 2);
	cli_report_escape_printf(out, "%s%s%s", head->unit, scale.log ? " (log scale)" : "",
	                         head->lower_is_better ? ", lower is better" : "");
	g_string_append(out, "</text>");

	for (guint g = 0; g < n_groups; g++) {
		CliCompareRow *row = g_ptr_array_index(cmp->rows, first + g);
		double gx = x0 + g * group_w + group_gap / 2;
		double cx = gx + n_series * bar_w / 2;

		for (guint c = 0; c < n_series; c++) {
			const CliCompareCell *cell = &row->cells[c];
			CliCompareColumn *col = g_ptr_array_index(cmp->columns, c);
			double x = gx + c * bar_w;
			double y, top, bottom_y;
			g_autofree char *value = NULL;

			if (!cell->present) {
				g_string_append_printf(
				    out,
				    "<text class=\"missing\" x=\"%.1f\" y=\"%.1f\" "
				    "text-anchor=\"middle\">—</text>",
				    x + bar_w / 2, base_y - 4);
				continue;
			}
			y = cli_report_y(&scale, cell->value);
			top = MIN(y, zero_y);
			bottom_y = MAX(y, zero_y);
			value = cli_compare_format_value(cell->value, row->unit);
			g_string_append_printf(out,
			                       "<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" "
			                       "width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>",
			                       x + 1, top, bar_w - 2, MAX(bottom_y - top, 0.5),
			                       cli_report_color(c));
			cli_report_escape_printf(out, "%s, %s: %s", col->label, row->labels_text,
			                         value);
			if (cell->n_runs > 1) {
				g_autofree char *sd =
				    cli_compare_format_value(cell->stddev, row->unit);
				cli_report_escape_printf(out, " ± %s over %u runs", sd,
				                         cell->n_runs);
			}
			g_string_append(out, "</title></rect>");
			/* ± 1 stddev whisker where there were runs */
			if (cell->n_runs > 1 && cell->stddev > 0) {
				double y1 = cli_report_y(&scale, cell->value - cell->stddev);
				double y2 = cli_report_y(&scale, cell->value + cell->stddev);
				g_string_append_printf(
				    out,
				    "<line class=\"errbar\" x1=\"%.1f\" x2=\"%.1f\" "
				    "y1=\"%.1f\" y2=\"%.1f\"/>",
				    x + bar_w / 2, x + bar_w / 2, y1, y2);
			}
		}
		if (rotate) {
			g_string_append_printf(out,
			                       "<text class=\"glabel\" text-anchor=\"end\" "
			                       "transform=\"translate(%.1f %.1f) rotate(-40)\">",
			                       cx, base_y + 14);
		} else {
			g_string_append_printf(out,
			                       "<text class=\"glabel\" x=\"%.1f\" y=\"%.1f\" "
			                       "text-anchor=\"middle\">",
			                       cx, base_y + 16);
		}
		cli_report_escape(out,
		                  row->labels_text[0] != '\0' ? row->labels_text : row->metric);
		g_string_append(out, "</text>");
	}
	g_string_append_printf(out,
	                       "<line class=\"axis\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" "
	                       "y2=\"%.1f\"/>",
	                       CLI_REPORT_MARGIN_LEFT, CLI_REPORT_MARGIN_LEFT + plot_w, zero_y,
	                       zero_y);
	g_string_append(out, "</svg></figure>\n");
}
