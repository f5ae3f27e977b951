/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <math.h>

#include "guestbench-protocol.h"

#include "analysis/units.h"
#include "render/compare-view.h"
#include "render/report.h"

typedef struct {
	guint bars;
	guint depth;
	guint max_depth;
	gboolean in_body;
	GString *text; /* all character data, to look for what must not be there */
	GPtrArray *elements;
} Parse;

static void start_cb(GMarkupParseContext *ctx, const char *name, const char **attr_names,
                     const char **attr_values, gpointer user_data, GError **error)
{
	Parse *p = user_data;

	p->depth++;
	p->max_depth = MAX(p->max_depth, p->depth);
	g_ptr_array_add(p->elements, g_strdup(name));
	for (guint i = 0; attr_names[i] != NULL; i++) {
		/* no event handler and no resource from anywhere */
		g_assert_false(g_str_has_prefix(attr_names[i], "on"));
		g_assert_cmpstr(attr_names[i], !=, "src");
		g_assert_cmpstr(attr_names[i], !=, "href");
		if (g_strcmp0(name, "rect") == 0 && g_strcmp0(attr_names[i], "class") == 0 &&
		    g_strcmp0(attr_values[i], "bar") == 0)
			p->bars++;
	}
}

static void end_cb(GMarkupParseContext *ctx, const char *name, gpointer user_data, GError **error)
{
	Parse *p = user_data;
	p->depth--;
}

static void text_cb(GMarkupParseContext *ctx, const char *text, gsize len, gpointer user_data,
                    GError **error)
{
	Parse *p = user_data;
	g_string_append_len(p->text, text, len);
}

static const GMarkupParser parser = { start_cb, end_cb, text_cb, NULL, NULL };

static char *data_path(const char *name)
{
	return g_build_filename(g_getenv("GB_TEST_DATA"), "results", name, NULL);
}

static CliComparison *load2(CliCompareBy by, const char *a, const char *b)
{
	g_autoptr(CliComparison) cmp = cli_comparison_new(by);
	g_autoptr(GError) error = NULL;
	const char *names[] = { a, b };

	for (guint i = 0; i < G_N_ELEMENTS(names); i++) {
		g_autofree char *path = NULL;
		if (names[i] == NULL)
			continue;
		path = data_path(names[i]);
		g_assert_true(cli_comparison_add_file(cmp, path, names[i], &error));
		g_assert_no_error(error);
	}
	g_assert_true(cli_comparison_compute(cmp, &error));
	g_assert_no_error(error);
	return g_steal_pointer(&cmp);
}

static guint count_values(CliComparison *cmp)
{
	guint n = 0;
	for (guint r = 0; r < cmp->rows->len; r++) {
		CliCompareRow *row = g_ptr_array_index(cmp->rows, r);
		for (guint c = 0; c < cmp->columns->len; c++)
			n += row->cells[c].present ? 1 : 0;
	}
	return n;
}

/* Well-formed XML (so XHTML too), one bar per value; returns the text content. */
static char *check_html(CliComparison *cmp, GString *html)
{
	Parse p = { 0 };
	g_autoptr(GMarkupParseContext) ctx = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(GString) text = g_string_new(NULL);
	g_autoptr(GPtrArray) elements = g_ptr_array_new_with_free_func(g_free);

	p.text = text;
	p.elements = elements;
	g_assert_true(g_str_has_prefix(html->str, "<!DOCTYPE html>\n"));
	ctx = g_markup_parse_context_new(&parser, 0, &p, NULL);
	/* GMarkup takes the doctype as passthrough: skip it */
	g_assert_true(
	    g_markup_parse_context_parse(ctx, html->str + strlen("<!DOCTYPE html>\n"), -1, &error));
	g_assert_no_error(error);
	g_assert_true(g_markup_parse_context_end_parse(ctx, &error));
	g_assert_no_error(error);
	g_assert_cmpuint(p.depth, ==, 0);
	g_assert_cmpuint(p.bars, ==, count_values(cmp));
	g_assert_cmpuint(p.bars, >, 0);
	for (guint i = 0; i < elements->len; i++) {
		const char *el = g_ptr_array_index(elements, i);
		g_assert_cmpstr(el, !=, "script");
		g_assert_cmpstr(el, !=, "img");
		g_assert_cmpstr(el, !=, "link");
		g_assert_cmpstr(el, !=, "iframe");
	}
	/* self-contained: nothing fetched, no JavaScript */
	{
		/* the only URL is the XHTML namespace name (never fetched) */
		g_autofree char *rest = g_strdup(html->str);
		for (char *q; (q = strstr(rest, "http://www.w3.org/")) != NULL;)
			memcpy(q, "xxxx", 4);
		g_assert_null(strstr(rest, "http://"));
	}
	g_assert_null(strstr(html->str, "https://"));
	g_assert_null(strstr(html->str, "@import"));
	g_assert_null(strstr(html->str, "url("));
	g_assert_nonnull(strstr(html->str, "@media print"));
	return g_string_free(g_steal_pointer(&text), FALSE);
}

static void test_report_field_report(void)
{
	g_autoptr(CliComparison) cmp = load2(CLI_COMPARE_BY_DOCUMENT, "kvm64.json", "host.json");
	g_autoptr(GString) html = cli_report_render_html(cmp);
	g_autofree char *text = check_html(cmp, html);

	g_assert_cmpuint(count_values(cmp), ==, 4);
	/* the facts that explain it, next to each guest */
	g_assert_nonnull(strstr(text, "Common KVM processor"));
	g_assert_nonnull(strstr(text, "aes no, pclmulqdq no"));
	g_assert_nonnull(strstr(text, "aes yes, pclmulqdq yes"));
	g_assert_nonnull(strstr(text, "host.json is 1.94x kvm64.json at 16 KiB"));
	g_assert_nonnull(strstr(text, "206.54 MB/s"));
	/* one run each: no noise estimate, said before the ratios are trusted */
	g_assert_nonnull(strstr(html->str, "<strong>warning</strong>: kvm64.json and host.json are "
	                                   "single runs (runs = 1)"));
	g_assert_nonnull(strstr(text, "over 2 headline metrics"));
	/* linear axis here: 77 to 207 MB/s is no decade */
	g_assert_null(strstr(text, "log scale"));
}

static void test_report_disk(void)
{
	g_autoptr(CliComparison) cmp =
	    load2(CLI_COMPARE_BY_DOCUMENT, "disk-virtio.json", "disk-ide.json");
	g_autoptr(GString) html = cli_report_render_html(cmp);
	g_autofree char *text = check_html(cmp, html);

	/* 3.6 MB/s to 720 MB/s spans decades */
	g_assert_nonnull(strstr(text, "B/s (log scale)"));
	g_assert_nonnull(strstr(text, "Parameters differ"));
	g_assert_nonnull(strstr(text, "virtio-blk (virtio_blk), scheduler none, write back"));
	g_assert_nonnull(strstr(text, "ata (ata_piix), scheduler mq-deadline, write through"));
	/* missing values are drawn as a dash, not as a bar */
	g_assert_nonnull(strstr(html->str, "class=\"missing\""));
	g_assert_nonnull(strstr(html->str, "title=\"no histogram\""));
}

static void test_report_by_guest(void)
{
	g_autoptr(CliComparison) cmp = load2(CLI_COMPARE_BY_GUEST, "fleet-net.json", NULL);
	g_autoptr(GString) html = cli_report_render_html(cmp);
	g_autofree char *text = check_html(cmp, html);

	g_assert_nonnull(strstr(text, "broken-vm has no result: timeout: timed out after 10 s"));
	g_assert_nonnull(strstr(text, "eth0: hv_netvsc, 1/1 queues, MTU 1500"));
	g_assert_nonnull(strstr(text, "eth0: vmxnet3, 1/1 queues, MTU 1500"));
	g_assert_nonnull(strstr(text, "%, lower is better"));
}

static void test_report_runs(void)
{
	g_autoptr(CliComparison) cmp = load2(CLI_COMPARE_BY_DOCUMENT, "runs-a.json", "runs-b.json");
	g_autoptr(GString) html = cli_report_render_html(cmp);
	g_autofree char *text = check_html(cmp, html);

	g_assert_nonnull(strstr(text, "(n.s.)"));
	g_assert_nonnull(strstr(html->str, "class=\"errbar\""));
	g_assert_nonnull(strstr(text, "over 3 runs"));
	g_assert_null(strstr(html->str, "<strong>warning</strong>"));
}

/* Everything from a document is text in the page, never markup. */
static void test_report_hostile(void)
{
	g_autoptr(CliComparison) cmp = load2(CLI_COMPARE_BY_DOCUMENT, "hostile.json", "kvm64.json");
	g_autoptr(GString) html = cli_report_render_html(cmp);
	g_autofree char *text = check_html(cmp, html);

	g_assert_nonnull(strstr(text, "<script>alert(1)</script>&"));
	g_assert_nonnull(strstr(text, "</td><img src=x onerror=alert(1)>"));
	g_assert_nonnull(strstr(text, "<i>m</i>"));
	g_assert_nonnull(strstr(html->str, "&lt;script&gt;"));
	g_assert_null(strstr(html->str, "<script"));
	g_assert_null(strstr(html->str, "<img"));
}

/* One chart alone, values from 1 to 1e9: log axis with a tick per decade. */
static void test_report_chart_log(void)
{
	const char *doc =
	    "{\"guestbench\": \"0\", \"command\": \"bench\", \"guests\": [{\"name\": \"a\", "
	    "\"status\": \"ok\", \"result\": {\"test\": \"t\", \"params\": {}, \"metrics\": "
	    "[{\"metric\": \"m\", \"unit\": \"B/s\", \"value\": 1, \"labels\": {\"k\": \"1\"}},"
	    "{\"metric\": \"m\", \"unit\": \"B/s\", \"value\": 1e9, \"labels\": {\"k\": \"2\"}}]}},"
	    "{\"name\": \"b\", \"status\": \"ok\", \"result\": {\"test\": \"t\", \"params\": {}, "
	    "\"metrics\": [{\"metric\": \"m\", \"unit\": \"B/s\", \"value\": 0, \"labels\": "
	    "{\"k\": \"1\"}}]}}]}";
	g_autoptr(CliComparison) cmp = cli_comparison_new(CLI_COMPARE_BY_GUEST);
	g_autoptr(GError) error = NULL;
	g_autoptr(GString) svg = g_string_new(NULL);
	guint ticks = 0;

	g_assert_true(cli_comparison_add_data(cmp, "x.json", "x", doc, strlen(doc), &error));
	g_assert_true(cli_comparison_compute(cmp, &error));
	g_assert_no_error(error);
	cli_report_append_chart(svg, cmp, 0, cmp->rows->len);
	/* a zero among the values: no log axis (log 0 has no place), but still drawn */
	g_assert_null(strstr(svg->str, "log scale"));
	g_assert_cmpuint(count_values(cmp), ==, 3);
	for (const char *p = svg->str; (p = strstr(p, "class=\"bar\"")) != NULL; p++)
		ticks++;
	g_assert_cmpuint(ticks, ==, 3);
	g_assert_null(strstr(svg->str, "nan"));
	g_assert_null(strstr(svg->str, "inf"));
}

/* A document of one guest "g" with test "t", params, and metric "m" per label k. */
static char *chart_doc(const char *params, const double *values, guint n, double stddev)
{
	GString *doc = g_string_new(NULL);

	g_string_append_printf(doc,
	                       "{\"guestbench\": \"0\", \"command\": \"bench\", \"guests\": "
	                       "[{\"name\": \"g\", \"status\": \"ok\", \"result\": {\"test\": "
	                       "\"t\", \"params\": %s, \"metrics\": [",
	                       params);
	for (guint i = 0; i < n; i++) {
		char v[G_ASCII_DTOSTR_BUF_SIZE], sd[G_ASCII_DTOSTR_BUF_SIZE];

		g_ascii_dtostr(v, sizeof(v), values[i]);
		g_ascii_dtostr(sd, sizeof(sd), stddev);
		g_string_append_printf(doc,
		                       "%s{\"metric\": \"m\", \"unit\": \"B/s\", \"value\": %s, "
		                       "\"labels\": {\"k\": \"%u\"}",
		                       i > 0 ? "," : "", v, i);
		if (stddev > 0)
			g_string_append_printf(
			    doc, ", \"mean\": %s, \"stddev\": %s, \"runs\": [%s, %s, %s]", v, sd, v,
			    v, v);
		g_string_append_c(doc, '}');
	}
	g_string_append(doc, "]}}]}");
	return g_string_free(doc, FALSE);
}

static CliComparison *chart_cmp(const char *label_a, const char *doc_a, const char *label_b,
                                const char *doc_b)
{
	g_autoptr(CliComparison) cmp = cli_comparison_new(CLI_COMPARE_BY_DOCUMENT);
	g_autoptr(GError) error = NULL;

	g_assert_true(
	    cli_comparison_add_data(cmp, "a.json", label_a, doc_a, strlen(doc_a), &error));
	g_assert_true(
	    cli_comparison_add_data(cmp, "b.json", label_b, doc_b, strlen(doc_b), &error));
	g_assert_true(cli_comparison_compute(cmp, &error));
	g_assert_no_error(error);
	return g_steal_pointer(&cmp);
}

/* Parameters read as typed: 0.3, not 0.29999999999999999, in the page and its warning. */
static void test_report_params(void)
{
	const double v[] = { 5, 6 };
	g_autofree char *a = chart_doc("{\"seconds\": 0.3, \"sizes\": [16, 64], \"cipher\": "
	                               "\"aes-128-gcm\", \"ratio\": 0.1}",
	                               v, 2, 0);
	g_autofree char *b = chart_doc("{\"seconds\": 0.2, \"sizes\": [16, 64], \"cipher\": "
	                               "\"aes-128-gcm\", \"ratio\": 1e-7}",
	                               v, 2, 0);
	g_autoptr(CliComparison) cmp = chart_cmp("a", a, "b", b);
	g_autoptr(GString) html = cli_report_render_html(cmp);
	g_autofree char *text = check_html(cmp, html);
	const struct {
		const char *json;
		const char *text;
	} cases[] = {
		{ "0.3", "0.3" },
		{ "0.1", "0.1" },
		{ "1e-7", "1e-07" },
		{ "2.5", "2.5" },
		{ "16", "16" },
		{ "3.0", "3" },
		{ "[0.3, 1]", "[0.3,1]" },
		{ "\"x\"", "\"x\"" },
		{ "true", "true" },
		{ "0.30000000000000004", "0.30000000000000004" },
		{ "1e300", "1e+300" },
	};

	g_test_message("%s", text);
	g_assert_nonnull(strstr(text, "seconds=0.3sizes=[16,64]"));
	g_assert_nonnull(strstr(text, "t seconds: a=0.3 b=0.2"));
	g_assert_nonnull(strstr(text, "t ratio: a=0.1 b=1e-07"));
	g_assert_nonnull(strstr(text, "sizes=[16,64]"));
	g_assert_null(strstr(text, "0.2999"));
	g_assert_null(strstr(text, "0.2000"));
	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(GError) error = NULL;
		g_autoptr(JsonNode) node =
		    gb_json_parse(cases[i].json, strlen(cases[i].json), &error);
		g_autofree char *got = NULL;

		g_assert_no_error(error);
		got = cli_format_json_value(node);
		g_assert_cmpstr(got, ==, cases[i].text);
	}
}

/* The x and y of every legend item, and its text. */
static GPtrArray *legend_items(const char *svg, GArray *xs, GArray *ys)
{
	GPtrArray *texts = g_ptr_array_new_with_free_func(g_free);

	for (const char *p = svg; (p = strstr(p, "<text class=\"legend\" x=\"")) != NULL;) {
		double x, y;
		const char *start, *stop;

		p += strlen("<text class=\"legend\" x=\"");
		x = g_ascii_strtod(p, NULL);
		p = strstr(p, "y=\"") + 3;
		y = g_ascii_strtod(p, NULL);
		start = strchr(p, '>') + 1;
		stop = strstr(start, "</text>");
		g_array_append_val(xs, x);
		g_array_append_val(ys, y);
		g_ptr_array_add(texts, g_strndup(start, stop - start));
	}
	return texts;
}

static double svg_width(const char *svg)
{
	const char *p = strstr(svg, "width=\"");
	g_assert_nonnull(p);
	return g_ascii_strtod(p + strlen("width=\""), NULL);
}

/* Legends show whole labels, wrapped onto lines inside the chart; overlong ones keep both ends. */
static void test_report_legend(void)
{
	const double v[] = { 5, 6 };
	const char *la = "2026-12-03T23-11-19Z-bench-aes";
	const char *lb = "2026-12-03T23-11-19Z-bench-aes-2";
	g_autofree char *doc = chart_doc("{}", v, 2, 0);
	g_autoptr(CliComparison) cmp = chart_cmp(la, doc, lb, doc);
	g_autoptr(GString) svg = g_string_new(NULL);
	g_autoptr(GArray) xs = g_array_new(FALSE, FALSE, sizeof(double));
	g_autoptr(GArray) ys = g_array_new(FALSE, FALSE, sizeof(double));
	g_autoptr(GPtrArray) texts = NULL;
	g_autoptr(GString) long_a = g_string_new("head-");
	g_autoptr(GString) long_svg = g_string_new(NULL);
	g_autoptr(CliComparison) long_cmp = NULL;
	g_autoptr(GPtrArray) long_texts = NULL;
	double width;

	cli_report_append_chart(svg, cmp, 0, cmp->rows->len);
	texts = legend_items(svg->str, xs, ys);
	width = svg_width(svg->str);
	g_assert_cmpuint(texts->len, ==, 2);
	g_assert_cmpstr(g_ptr_array_index(texts, 0), ==, la);
	g_assert_cmpstr(g_ptr_array_index(texts, 1), ==, lb);
	for (guint i = 0; i < texts->len; i++) {
		/* 7 px a character is wider than DejaVu Sans at 12 px */
		double right =
		    g_array_index(xs, double, i) + 7.0 * strlen(g_ptr_array_index(texts, i));
		g_assert_cmpfloat(right, <=, width);
	}
	/* side by side without overlapping, or the second on a line of its own */
	if (g_array_index(ys, double, 1) == g_array_index(ys, double, 0))
		g_assert_cmpfloat(g_array_index(xs, double, 1), >=,
		                  g_array_index(xs, double, 0) + 7.0 * strlen(la));
	else
		g_assert_cmpfloat(g_array_index(ys, double, 1), >, g_array_index(ys, double, 0));

	/* two that do not fit on one line: the second wraps below the first */
	{
		g_autofree char *wa = g_strnfill(45, 'a');
		g_autofree char *wb = g_strnfill(45, 'b');
		g_autoptr(CliComparison) wide = chart_cmp(wa, doc, wb, doc);
		g_autoptr(GString) wide_svg = g_string_new(NULL);
		g_autoptr(GPtrArray) wide_texts = NULL;

		cli_report_append_chart(wide_svg, wide, 0, wide->rows->len);
		g_array_set_size(xs, 0);
		g_array_set_size(ys, 0);
		wide_texts = legend_items(wide_svg->str, xs, ys);
		g_assert_cmpstr(g_ptr_array_index(wide_texts, 0), ==, wa);
		g_assert_cmpstr(g_ptr_array_index(wide_texts, 1), ==, wb);
		g_assert_cmpfloat(g_array_index(ys, double, 1), >, g_array_index(ys, double, 0));
		g_assert_cmpfloat(g_array_index(xs, double, 1), ==, g_array_index(xs, double, 0));
		for (guint i = 0; i < 2; i++)
			g_assert_cmpfloat(g_array_index(xs, double, i) + 7.0 * 45, <=,
			                  svg_width(wide_svg->str));
	}

	/* a label longer than a line: cut in the middle, the whole in the item's title */
	for (guint i = 0; i < 30; i++)
		g_string_append(long_a, "0123456789");
	g_string_append(long_a, "-tail");
	long_cmp = chart_cmp(long_a->str, doc, "b", doc);
	cli_report_append_chart(long_svg, long_cmp, 0, long_cmp->rows->len);
	g_array_set_size(xs, 0);
	g_array_set_size(ys, 0);
	long_texts = legend_items(long_svg->str, xs, ys);
	g_assert_true(g_str_has_prefix(g_ptr_array_index(long_texts, 0), "head-"));
	g_assert_true(g_str_has_suffix(g_ptr_array_index(long_texts, 0), "-tail"));
	g_assert_nonnull(strstr(g_ptr_array_index(long_texts, 0), "…"));
	g_assert_cmpfloat(g_array_index(xs, double, 0) +
	                      7.0 * g_utf8_strlen(g_ptr_array_index(long_texts, 0), -1),
	                  <=, svg_width(long_svg->str));
	g_assert_nonnull(strstr(long_svg->str, long_a->str));
	g_assert_cmpstr(g_ptr_array_index(long_texts, 1), ==, "b");
}

/* Within two decades: a linear axis from 0, said in the chart; beyond: log, said too. */
static void test_report_axis(void)
{
	const double near[] = { 10, 900 };
	const double far[] = { 10, 1000 };
	g_autofree char *near_doc = chart_doc("{}", near, 2, 0);
	/* a whisker reaching past 1000 does not make the axis log */
	g_autofree char *near_sd = chart_doc("{}", near, 2, 400);
	g_autofree char *far_doc = chart_doc("{}", far, 2, 0);
	g_autoptr(CliComparison) lin = chart_cmp("a", near_doc, "b", near_sd);
	g_autoptr(CliComparison) lg = chart_cmp("a", far_doc, "b", far_doc);
	g_autoptr(GString) lin_svg = g_string_new(NULL);
	g_autoptr(GString) log_svg = g_string_new(NULL);

	cli_report_append_chart(lin_svg, lin, 0, lin->rows->len);
	cli_report_append_chart(log_svg, lg, 0, lg->rows->len);
	g_test_message("%s\n%s", lin_svg->str, log_svg->str);
	g_assert_nonnull(strstr(lin_svg->str, "<text class=\"axisnote\""));
	g_assert_nonnull(strstr(lin_svg->str, ">linear axis from 0</text>"));
	g_assert_nonnull(strstr(lin_svg->str, "text-anchor=\"end\">0.00 B/s</text>"));
	g_assert_null(strstr(lin_svg->str, "log"));
	g_assert_nonnull(strstr(log_svg->str, ">log axis: the values span 100x, over two "
	                                      "decades</text>"));
	g_assert_nonnull(strstr(log_svg->str, "B/s (log scale)"));
	g_assert_null(strstr(log_svg->str, "linear axis"));
}

/*
 * Values near the double's limits (a guest's saved result): the mean and the
 * deviation overflow. The chart ends with a bounded axis, a log one over 300
 * decades and a linear one from -1e308 to 1e308; compare's JSON stays JSON.
 */
static void test_report_axis_limits(void)
{
	static const char *const docs[][2] = {
		/* all positive: a log axis from 10 to the overflowed whisker */
		{ "{\"metric\": \"m\", \"unit\": \"B/s\", \"value\": 10, \"labels\": {}}",
		  "{\"metric\": \"m\", \"unit\": \"B/s\", \"value\": 1e308, \"labels\": {}, "
		  "\"runs\": [1e308, -1e308, 1e308]}" },
		/* both signs: a linear axis whose span overflows */
		{ "{\"metric\": \"m\", \"unit\": \"B/s\", \"value\": -1.7e308, \"labels\": {}}",
		  "{\"metric\": \"m\", \"unit\": \"B/s\", \"value\": 1.7e308, \"labels\": {}, "
		  "\"runs\": [1.7e308, 1.7e308]}" },
	};

	for (guint d = 0; d < G_N_ELEMENTS(docs); d++) {
		g_autofree char *a = g_strdup_printf(
		    "{\"guestbench\": \"0\", \"command\": \"bench\", \"guests\": [{\"name\": "
		    "\"g\", "
		    "\"status\": \"ok\", \"result\": {\"test\": \"t\", \"params\": {}, "
		    "\"metrics\": [%s]}}]}",
		    docs[d][0]);
		g_autofree char *b = g_strdup_printf(
		    "{\"guestbench\": \"0\", \"command\": \"bench\", \"guests\": [{\"name\": "
		    "\"g\", "
		    "\"status\": \"ok\", \"result\": {\"test\": \"t\", \"params\": {}, "
		    "\"metrics\": [%s]}}]}",
		    docs[d][1]);
		g_autoptr(CliComparison) cmp = chart_cmp("a", a, "b", b);
		g_autoptr(GString) svg = g_string_new(NULL);
		g_autoptr(GString) html = cli_report_render_html(cmp);
		g_autofree char *text = check_html(cmp, html);
		g_autoptr(JsonNode) json = cli_comparison_to_json(cmp);
		g_autofree char *json_text = gb_json_to_string(json, NULL);
		g_autoptr(JsonNode) back = NULL;
		g_autoptr(GError) error = NULL;
		guint ticks = 0;

		cli_report_append_chart(svg, cmp, 0, cmp->rows->len);
		g_test_message("%s\n%s", svg->str, json_text);
		for (const char *p = svg->str; (p = strstr(p, "class=\"tick\"")) != NULL; p++)
			ticks++;
		g_assert_cmpuint(ticks, >=, 2);
		g_assert_cmpuint(ticks, <=, 21);
		g_assert_null(strstr(svg->str, "nan"));
		g_assert_null(strstr(svg->str, "=\"inf"));
		g_assert_null(strstr(svg->str, "=\"-inf"));
		back = gb_json_parse(json_text, strlen(json_text), &error);
		g_assert_no_error(error);
		g_assert_nonnull(back);
	}
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/report/field-report", test_report_field_report);
	g_test_add_func("/report/disk", test_report_disk);
	g_test_add_func("/report/by-guest", test_report_by_guest);
	g_test_add_func("/report/runs", test_report_runs);
	g_test_add_func("/report/hostile", test_report_hostile);
	g_test_add_func("/report/chart-log", test_report_chart_log);
	g_test_add_func("/report/params", test_report_params);
	g_test_add_func("/report/legend", test_report_legend);
	g_test_add_func("/report/axis", test_report_axis);
	g_test_add_func("/report/axis-limits", test_report_axis_limits);
	return g_test_run();
}
