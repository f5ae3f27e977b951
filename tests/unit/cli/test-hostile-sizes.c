/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Sizes a hostile guest chooses: many block sizes, record sizes, rows, disks
 * and errors, one very long string. The renderers and the audit must stay
 * linear in them (these sizes took minutes with quadratic loops; the test's
 * timeout is what fails then) and the text table must stay small.
 */
#include "config.h"

#include <string.h>

#include "guestbench-protocol.h"

#include "analysis/audit.h"
#include "render/bench-view.h"
#include "render/escape.h"
#include "render/results.h"
#include "render/table.h"

static JsonNode *parse(const GString *text)
{
	g_autoptr(GError) error = NULL;
	JsonNode *node = gb_json_parse(text->str, text->len, &error);

	g_assert_no_error(error);
	g_assert_nonnull(node);
	return node;
}

/* A guest's bench result: {"test": "x", "metrics": [SAMPLES]}; samples_json may end in ','. */
static JsonNode *bench_result(GString *samples_json)
{
	g_autoptr(GString) doc = g_string_new("{\"test\": \"x\", \"metrics\": [");

	if (samples_json->len > 0 && samples_json->str[samples_json->len - 1] == ',')
		g_string_truncate(samples_json, samples_json->len - 1);
	g_string_append(doc, samples_json->str);
	g_string_append(doc, "]}");
	return parse(doc);
}

static guint count_lines(const char *text)
{
	guint n = 0;

	for (const char *p = text; *p != '\0'; p++)
		n += *p == '\n';
	return n;
}

/* 150,000 block sizes in two guests (the even ones, then every third in reverse). */
static void test_aes_many_sizes(void)
{
	const guint n = 150000;
	g_autoptr(CliResults) results = cli_results_new("bench");
	g_autoptr(GString) a = g_string_new(NULL);
	g_autoptr(GString) b = g_string_new(NULL);
	g_autoptr(GString) out = NULL;
	g_autofree char *first = NULL;
	g_auto(GStrv) lines = NULL;

	for (guint i = 0; i < n; i++)
		g_string_append_printf(a,
		                       "{\"metric\": \"aes-128-gcm\", \"value\": %u, \"unit\": "
		                       "\"B/s\", \"labels\": {\"block_size\": \"%u\"}},",
		                       1000 + i, 16 + 2 * i);
	for (guint i = n; i > 0; i--)
		g_string_append_printf(b,
		                       "{\"metric\": \"aes-128-gcm\", \"value\": 7, \"unit\": "
		                       "\"B/s\", \"labels\": {\"block_size\": \"%u\"}},",
		                       16 + 3 * (i - 1));
	cli_results_add(results,
	                cli_result_new("vm1", "/vm1", CLI_GUEST_OK, NULL, bench_result(a)));
	cli_results_add(results,
	                cli_result_new("vm2", "/vm2", CLI_GUEST_OK, NULL, bench_result(b)));

	out = cli_bench_view_render_text(results, "aes", FALSE);
	lines = g_strsplit(out->str, "\n", -1);
	g_assert_cmpuint(g_strv_length(lines), ==, 5); /* note, header, two rows, "" */
	/* sizes sorted and distinct: 16, 18, 19, 20, 22, 24, 25, ... */
	g_assert_true(g_str_has_prefix(lines[1],
	                               "GUEST  type             16 bytes     18 bytes     "
	                               "19 bytes     20 bytes     22 bytes"));
	/* the union: n even ones, n every-third ones, n/3 of them (multiples of 6) shared */
	g_assert_cmpuint(strlen(lines[1]), ==,
	                 strlen("GUEST  type        ") + 13 * (2 * n - n / 3));
	/* vm1 has 16 and 18 but not 19; vm2 has 16 and 19 but not 18 */
	first = g_strndup(lines[2], 7 + 13 + 3 * 13);
	g_assert_cmpstr(first, ==, "vm1    aes-128-gcm       1000.00      1001.00          n/a ");
	g_assert_true(g_str_has_prefix(lines[3], "vm2    aes-128-gcm          7.00          n/a "
	                                         "        7.00 "));
}

/* 20,000 record sizes of the disk benchmark, 6 tests each. */
static void test_disk_many_records(void)
{
	static const char *const tests[] = { "write",  "rewrite",  "read",
		                             "reread", "randread", "randwrite" };
	const guint n = 20000;
	g_autoptr(CliResults) results = cli_results_new("bench");
	g_autoptr(GString) samples = g_string_new(NULL);
	g_autoptr(GString) out = NULL;

	for (guint i = 0; i < n; i++) {
		for (guint t = 0; t < G_N_ELEMENTS(tests); t++)
			g_string_append_printf(samples,
			                       "{\"metric\": \"disk-throughput\", \"value\": %u, "
			                       "\"unit\": \"B/s\", \"labels\": {\"test\": \"%s\", "
			                       "\"record_size\": \"%u\"}},",
			                       (t + 1) * 1000000, tests[t], 512 * (n - i));
	}
	cli_results_add(results,
	                cli_result_new("vm1", "/vm1", CLI_GUEST_OK, NULL, bench_result(samples)));
	out = cli_bench_view_render_text(results, "disk", FALSE);
	/* a title, a header and one row per record size */
	g_assert_cmpuint(count_lines(out->str), ==, 2 + n);
	g_assert_nonnull(
	    strstr(out->str, "\nvm1    512       1.00   2.00     3.00  4.00    5.00      6.00\n"));
}

/* 20,000 rows of the net benchmark, each showing the guest's CPU figures. */
static void test_net_many_rows(void)
{
	const guint n = 20000;
	g_autoptr(CliResults) results = cli_results_new("bench");
	g_autoptr(GString) samples = g_string_new(NULL);
	g_autoptr(GString) out = NULL;

	for (guint i = 0; i < n; i++)
		g_string_append_printf(
		    samples,
		    "{\"metric\": \"tcp-throughput\", \"value\": 1000000, \"unit\": "
		    "\"B/s\", \"labels\": {\"direction\": \"send\", "
		    "\"streams\": \"%u\"}},",
		    i);
	g_string_append(samples, "{\"metric\": \"guest-cpu-busy\", \"value\": 12.5, \"unit\": "
	                         "\"%\", \"labels\": {\"kind\": \"total\"}},");
	cli_results_add(results,
	                cli_result_new("vm1", "/vm1", CLI_GUEST_OK, NULL, bench_result(samples)));
	out = cli_bench_view_render_text(results, "net", FALSE);
	g_assert_cmpuint(count_lines(out->str), ==, 2 + n + 1); /* and the shared-figures note */
	g_assert_nonnull(strstr(out->str, "\nvm1    send       19999    8.0     1.0   12.5"));
}

/*
 * 50,000 disks each missing its bus, and 50,000 agent errors that cover none
 * of them: every missing member is looked up among the errors.
 */
static void test_audit_many_disks_and_errors(void)
{
	const guint n = 50000;
	g_autoptr(GString) doc = g_string_new("{\"agent_version\": \"0.1.0\", \"block\": [");
	g_autoptr(JsonNode) node = NULL;
	g_autoptr(GPtrArray) findings = NULL;
	guint unknown = 0;
	guint reported = 0;

	for (guint i = 0; i < n; i++)
		g_string_append_printf(doc, "%s{\"name\": \"d%u\", \"driver\": \"virtio_blk\"}",
		                       i > 0 ? "," : "", i);
	g_string_append(doc, "], \"errors\": [");
	for (guint i = 0; i < n; i++)
		g_string_append_printf(doc, "%s{\"member\": \"block.x%u.bus\", \"reason\": \"no\"}",
		                       i > 0 ? "," : "", i);
	/* and one that covers the first disk's member, by its alias */
	g_string_append(doc, ",{\"member\": \"block.d0\", \"reason\": \"gone\"}]}");
	node = parse(doc);
	findings = cli_audit_run(json_node_get_object(node));
	for (guint i = 0; i < findings->len; i++) {
		CliFinding *f = g_ptr_array_index(findings, i);

		if (g_strcmp0(f->rule, "FACTS-ERRORS") != 0)
			continue;
		if (g_str_has_prefix(f->detail, "unknown: block["))
			unknown += g_str_has_suffix(f->subject, "].bus");
		else if (g_str_has_prefix(f->detail, "the agent could not read"))
			reported++;
	}
	g_assert_cmpuint(reported, ==, n + 1);
	/* every disk's missing bus but the first, which the agent reported */
	g_assert_cmpuint(unknown, ==, n - 1);
}

/* info's table for 51 guests, one of which has a 1 MiB version string. */
static void test_table_long_cell(void)
{
	g_autoptr(CliTable) table = cli_table_new("GUEST", "STATUS", "VERSION", "DETAIL", NULL);
	g_autofree char *huge = g_strnfill(1 << 20, 'v');
	g_autoptr(GString) text = g_string_new(NULL);
	g_autoptr(GString) csv = g_string_new(NULL);
	g_autoptr(JsonNode) json = NULL;
	g_auto(GStrv) lines = NULL;
	g_autofree char *expected =
	    g_strdup_printf("%-7s%-8s%-62s%s", "vm0", "ok", "0.1.0", "ready");

	for (guint i = 0; i < 51; i++) {
		g_autofree char *name = g_strdup_printf("vm%u", i);
		cli_table_add_row(table, name, "ok", i == 7 ? huge : "0.1.0", "ready");
	}
	cli_table_render(table, FALSE, text);
	g_assert_cmpuint(text->len, <, 100 * 1024);
	lines = g_strsplit(text->str, "\n", -1);
	/* the long cell is cut to 60 columns, ending in an ellipsis; the others are not padded to
	 * it */
	g_assert_true(g_str_has_prefix(lines[8], "vm7    ok      vvvv"));
	g_assert_nonnull(strstr(lines[8], "v\u2026  ready"));
	g_assert_cmpuint(cli_text_width(lines[8]), ==, 7 + 8 + 60 + 2 + 5);
	g_assert_cmpstr(lines[1], ==, expected);
	/* machine formats keep it whole */
	cli_table_render_csv(table, csv);
	g_assert_nonnull(strstr(csv->str, huge));
	json = cli_table_to_json(table);
	g_assert_cmpstr(json_object_get_string_member(
	                    json_array_get_object_element(json_node_get_array(json), 7), "version"),
	                ==, huge);
}

/* The last column is not padded but is bounded, and on a terminal no line wraps. */
static void test_table_line_width(void)
{
	g_autoptr(CliTable) table = cli_table_new("GUEST", "STATUS", "DETAIL", NULL);
	g_autofree char *model = g_strnfill(81, 'M');
	g_autofree char *long_detail = g_strnfill(5000, 'd');
	g_autoptr(GString) plain = g_string_new(NULL);
	g_autoptr(GString) tty = g_string_new(NULL);
	g_auto(GStrv) lines = NULL;
	g_autoptr(GRegex) sgr = g_regex_new("\033\\[[0-9]*m", 0, 0, NULL);

	cli_table_add_row(table, "vm1", "ok", model, NULL);
	cli_table_add_row(table, "vm2", "error", long_detail, NULL);
	cli_table_add_row(table, "vm3", "ok", "short", NULL);
	cli_table_render(table, FALSE, plain);
	lines = g_strsplit(plain->str, "\n", -1);
	g_assert_cmpuint(g_strv_length(lines), ==, 5);
	g_assert_cmpuint(cli_text_width(lines[1]), ==, 7 + 8 + 81); /* not cut: under 240 */
	g_assert_cmpuint(cli_text_width(lines[2]), ==, 7 + 8 + 240);
	g_clear_pointer(&lines, g_strfreev);

	/* an 80-column terminal: the 81-column model would wrap into a fake row */
	cli_table_set_terminal_width(80);
	cli_table_render(table, TRUE, tty);
	cli_table_set_terminal_width(0);
	lines = g_strsplit(tty->str, "\n", -1);
	g_assert_cmpuint(g_strv_length(lines), ==, 5);
	for (guint i = 0; lines[i] != NULL; i++) {
		g_autofree char *bare = g_regex_replace(sgr, lines[i], -1, 0, "", 0, NULL);
		g_assert_cmpuint(cli_text_width(bare), <=, 80);
	}
	g_assert_true(g_str_has_suffix(lines[1], "M\u2026"));
	g_assert_true(g_str_has_suffix(lines[3], "short"));
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/hostile-sizes/bench/aes-block-sizes", test_aes_many_sizes);
	g_test_add_func("/hostile-sizes/bench/disk-record-sizes", test_disk_many_records);
	g_test_add_func("/hostile-sizes/bench/net-rows", test_net_many_rows);
	g_test_add_func("/hostile-sizes/audit/disks-and-errors", test_audit_many_disks_and_errors);
	g_test_add_func("/hostile-sizes/table/long-cell", test_table_long_cell);
	g_test_add_func("/hostile-sizes/table/line-width", test_table_line_width);
	return g_test_run();
}
