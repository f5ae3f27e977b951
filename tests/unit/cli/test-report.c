/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <math.h>

#include "guestbench-protocol.h"

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

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/report/field-report", test_report_field_report);
	g_test_add_func("/report/disk", test_report_disk);
	g_test_add_func("/report/by-guest", test_report_by_guest);
	g_test_add_func("/report/runs", test_report_runs);
	g_test_add_func("/report/hostile", test_report_hostile);
	g_test_add_func("/report/chart-log", test_report_chart_log);
	return g_test_run();
}
