/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <glib/gstdio.h>
#include <math.h>

#include "guestbench-protocol.h"

#include "analysis/compare.h"
#include "analysis/stats.h"
#include "render/compare-view.h"

static char *data_path(const char *name)
{
	return g_build_filename(g_getenv("GB_TEST_DATA"), "results", name, NULL);
}

/* Loads data/results files (NULL-terminated) into a computed comparison. */
static CliComparison *load(CliCompareBy by, const char *first, ...) G_GNUC_NULL_TERMINATED;

static CliComparison *load(CliCompareBy by, const char *first, ...)
{
	g_autoptr(CliComparison) cmp = cli_comparison_new(by);
	g_autoptr(GError) error = NULL;
	va_list args;

	va_start(args, first);
	for (const char *name = first; name != NULL; name = va_arg(args, const char *)) {
		g_autofree char *path = data_path(name);
		g_autofree char *label = g_strndup(name, strlen(name) - strlen(".json"));
		gboolean ok = cli_comparison_add_file(cmp, path, label, &error);
		g_assert_no_error(error);
		g_assert_true(ok);
	}
	va_end(args);
	g_assert_true(cli_comparison_compute(cmp, &error));
	g_assert_no_error(error);
	return g_steal_pointer(&cmp);
}

static CliCompareRow *find_row(CliComparison *cmp, const char *metric, const char *labels_key)
{
	for (guint r = 0; r < cmp->rows->len; r++) {
		CliCompareRow *row = g_ptr_array_index(cmp->rows, r);
		if (g_strcmp0(row->metric, metric) == 0 &&
		    g_strcmp0(row->labels_key, labels_key) == 0)
			return row;
	}
	g_assert_not_reached();
	return NULL;
}

/* Field report 1: kvm64 vs host, openssl speed numbers. */
static void test_compare_field_report_aes(void)
{
	g_autoptr(CliComparison) cmp =
	    load(CLI_COMPARE_BY_DOCUMENT, "kvm64.json", "host.json", NULL);
	g_autoptr(GString) text = NULL;
	CliCompareRow *row;
	CliComparePair *pair;

	g_assert_cmpuint(cmp->columns->len, ==, 2);
	g_assert_cmpuint(cmp->rows->len, ==, 2);
	row = find_row(cmp, "aes-128-gcm", "block_size=16384");
	g_assert_cmpfloat_with_epsilon(row->ratios[1], 206542.0 / 106572.0, 1e-9);
	g_assert_cmpstr(row->labels_text, ==, "16 KiB");
	g_assert_cmpint(row->significance[1], ==, CLI_SIGNIFICANCE_UNKNOWN);
	row = find_row(cmp, "aes-128-gcm", "block_size=16");
	g_assert_cmpfloat_with_epsilon(row->ratios[1], 128876.0 / 77000.0, 1e-9);
	g_assert_cmpstr(row->labels_text, ==, "16 B");
	g_assert_cmpuint(cmp->mismatches->len, ==, 0);

	g_assert_cmpuint(cmp->pairs->len, ==, 1);
	pair = g_ptr_array_index(cmp->pairs, 0);
	g_assert_cmpuint(pair->n_rows, ==, 2);
	g_assert_cmpfloat_with_epsilon(pair->geomean,
	                               sqrt((206542.0 / 106572.0) * (128876.0 / 77000.0)), 1e-9);

	text = cli_comparison_render_text(cmp);
	g_test_message("%s", text->str);
	g_assert_nonnull(strstr(text->str, "host is 1.94x kvm64 at 16 KiB"));
	g_assert_nonnull(strstr(text->str, "host is 1.67x kvm64 at 16 B"));
	g_assert_nonnull(strstr(text->str, "206.54 MB/s"));
	g_assert_nonnull(strstr(text->str, "+93.8%"));
	g_assert_nonnull(
	    strstr(text->str, "geometric mean ratio 1.80x over 2 headline metrics (aes-128-gcm)"));
	/* single runs: nothing can be called noise */
	g_assert_null(strstr(text->str, "n.s."));
}

/* runs > 1: 16 B moved far beyond the noise, 16 KiB did not. */
static void test_compare_significance(void)
{
	g_autoptr(CliComparison) cmp =
	    load(CLI_COMPARE_BY_DOCUMENT, "runs-a.json", "runs-b.json", NULL);
	g_autoptr(GString) text = NULL;
	CliCompareRow *row;
	CliComparePair *pair;

	row = find_row(cmp, "aes-128-gcm", "block_size=16");
	g_assert_cmpint(row->significance[1], ==, CLI_SIGNIFICANCE_YES);
	g_assert_cmpuint(row->cells[0].n_runs, ==, 3);
	g_assert_cmpfloat_with_epsilon(row->cells[0].mean, 100e6, 1e-3);
	g_assert_cmpfloat_with_epsilon(row->cells[0].stddev, 1e6, 1e-3);
	row = find_row(cmp, "aes-128-gcm", "block_size=16384");
	g_assert_cmpint(row->significance[1], ==, CLI_SIGNIFICANCE_NO);
	pair = g_ptr_array_index(cmp->pairs, 0);
	g_assert_cmpuint(pair->n_not_significant, ==, 1);
	text = cli_comparison_render_text(cmp);
	g_assert_nonnull(strstr(text->str, "+1.2% n.s."));
	g_assert_nonnull(strstr(text->str, "±"));
}

/* Welch's t-test against known values (R: t.test(var.equal = FALSE)). */
static void test_compare_welch(void)
{
	/* x = 1,2,3,4,5 ; y = 2,4,6,8,10: t = -1.8974, df = 5.8824, p = 0.1075 */
	double p = cli_stats_welch_p(3, sqrt(2.5), 5, 6, sqrt(10), 5);
	g_assert_cmpfloat_with_epsilon(p, 0.1075, 5e-4);
	/* Student's t two-sided: t = 2.228, df = 10 -> 0.05 */
	g_assert_cmpfloat_with_epsilon(cli_stats_student_t_p(2.228139, 10), 0.05, 1e-5);
	g_assert_cmpfloat_with_epsilon(cli_stats_student_t_p(0, 10), 1.0, 1e-12);
	g_assert_cmpfloat(cli_stats_student_t_p(INFINITY, 3), ==, 0.0);
	g_assert_cmpfloat(cli_stats_student_t_p(NAN, 3), ==, 1.0);
	/* no spread on either side: equal is noise, any difference is not */
	g_assert_cmpfloat(cli_stats_welch_p(5, 0, 3, 5, 0, 3), ==, 1.0);
	g_assert_cmpfloat(cli_stats_welch_p(5, 0, 3, 6, 0, 3), ==, 0.0);
	/* one sample of 3 against a single value: far away, and inside */
	g_assert_cmpfloat(cli_stats_single_p(200, 100, 1, 3), <, 0.001);
	g_assert_cmpfloat(cli_stats_single_p(100.5, 100, 1, 3), >, 0.5);
	/* too few runs: never significant */
	g_assert_cmpfloat(cli_stats_welch_p(1, 1, 1, 100, 1, 1), ==, 1.0);
}

/* Disk: different size, a missing record size, an unavailable latency. */
static void test_compare_mismatch_and_missing(void)
{
	g_autoptr(CliComparison) cmp =
	    load(CLI_COMPARE_BY_DOCUMENT, "disk-virtio.json", "disk-ide.json", NULL);
	g_autoptr(GString) text = NULL;
	g_autoptr(JsonNode) json = NULL;
	g_autofree char *json_text = NULL;
	CliCompareRow *row;
	CliComparePair *pair;
	gboolean saw_size = FALSE, saw_rs = FALSE;

	for (guint m = 0; m < cmp->mismatches->len; m++) {
		CliCompareMismatch *mm = g_ptr_array_index(cmp->mismatches, m);
		if (g_strcmp0(mm->param, "size") == 0) {
			saw_size = TRUE;
			g_assert_cmpstr(mm->values[0], ==, "104857600");
			g_assert_cmpstr(mm->values[1], ==, "52428800");
		}
		if (g_strcmp0(mm->param, "record_sizes") == 0)
			saw_rs = TRUE;
		g_assert_cmpstr(mm->param, !=, "runs");
	}
	g_assert_true(saw_size);
	g_assert_true(saw_rs);

	/* 16 MiB exists only in the first: "—", no ratio */
	row = find_row(cmp, "disk-throughput", "record_size=16777216,test=write");
	g_assert_true(row->cells[0].present);
	g_assert_false(row->cells[1].present);
	g_assert_true(isnan(row->ratios[1]));
	g_assert_cmpstr(row->labels_text, ==, "write 16 MiB");
	/* the agent said why it has no number */
	row = find_row(cmp, "disk-latency", "quantile=0.99,record_size=4096,test=randread");
	g_assert_false(row->cells[1].present);
	g_assert_cmpstr(row->cells[1].unavailable, ==, "no histogram");
	g_assert_true(row->lower_is_better);
	g_assert_cmpstr(row->labels_text, ==, "randread p99 4 KiB");

	/* 6 throughput rows have both values (2 record sizes x 3 tests), latency none */
	pair = g_ptr_array_index(cmp->pairs, 0);
	g_assert_cmpuint(pair->n_rows, ==, 6);
	g_assert_cmpfloat_with_epsilon(pair->geomean, 0.15 / 0.8, 1e-9);

	text = cli_comparison_render_text(cmp);
	g_test_message("%s", text->str);
	g_assert_nonnull(strstr(text->str, "Parameters differ"));
	g_assert_nonnull(strstr(text->str, "disk size: disk-virtio=104857600 disk-ide=52428800"));
	g_assert_nonnull(strstr(text->str, "—"));

	json = cli_comparison_to_json(cmp);
	json_text = gb_json_to_string(json, NULL);
	g_assert_nonnull(strstr(json_text, "\"param_mismatches\":[{"));
	g_assert_nonnull(strstr(json_text, "\"command\":\"compare\""));
}

/* One document, its guests as columns; a failed guest is a column of "—". */
static void test_compare_by_guest(void)
{
	g_autoptr(CliComparison) cmp = load(CLI_COMPARE_BY_GUEST, "fleet-net.json", NULL);
	g_autoptr(GString) text = NULL;
	g_autoptr(GString) csv = NULL;
	CliCompareColumn *col;
	CliCompareRow *row;

	g_assert_cmpuint(cmp->columns->len, ==, 3);
	col = g_ptr_array_index(cmp->columns, 0);
	g_assert_cmpstr(col->label, ==, "hyperv-vm");
	col = g_ptr_array_index(cmp->columns, 2);
	g_assert_cmpstr(col->label, ==, "broken-vm");
	g_assert_nonnull(col->error);
	g_assert_null(col->test);
	/* streams repeats a parameter of the run: not part of the row key */
	row = find_row(cmp, "tcp-throughput", "direction=host-to-guest");
	g_assert_cmpfloat_with_epsilon(row->ratios[1], 177.0 / 371.0, 1e-9);
	g_assert_true(isnan(row->ratios[2]));
	g_assert_cmpstr(row->labels_text, ==, "host-to-guest");
	g_assert_true(row->headline);
	/* % busy explains the throughput: shown, lower is better, not in the summary */
	row = find_row(cmp, "guest-cpu-busy", "kind=softirq");
	g_assert_true(row->lower_is_better);
	g_assert_false(row->headline);
	{
		CliComparePair *pair = g_ptr_array_index(cmp->pairs, 0);
		g_assert_cmpuint(pair->n_rows, ==, 1);
		g_assert_cmpfloat_with_epsilon(pair->geomean, 177.0 / 371.0, 1e-9);
		pair = g_ptr_array_index(cmp->pairs, 1);
		g_assert_cmpuint(pair->n_rows, ==, 0);
		g_assert_true(isnan(pair->geomean));
	}
	text = cli_comparison_render_text(cmp);
	g_assert_nonnull(strstr(
	    text->str, "broken-vm vs hyperv-vm: no headline metric with a value on both sides"));
	g_assert_nonnull(strstr(text->str, "no result (timeout: timed out after 10 s)"));
	/* the one file is named once, not under every guest */
	g_assert_nonnull(
	    strstr(text->str, "fleet-net.json, by guest:\nhyperv-vm: guest hyperv-vm, net, 1 run\n"
	                      "vmware-vm: guest vmware-vm, net, 1 run\n"));

	csv = cli_comparison_render_csv(cmp);
	g_assert_true(g_str_has_prefix(csv->str, "test,metric,unit,labels,column,value,"));
	g_assert_nonnull(
	    strstr(csv->str, "net,tcp-throughput,B/s,direction=host-to-guest,vmware-vm,"));
	/* 2 rows x 3 columns + header */
	{
		g_auto(GStrv) lines = g_strsplit(csv->str, "\n", -1);
		g_assert_cmpuint(g_strv_length(lines), ==, 1 + 6 + 1);
	}
}

/* Adds data/results files without computing. */
static CliComparison *add_files(CliCompareBy by, const char *const *names)
{
	g_autoptr(CliComparison) cmp = cli_comparison_new(by);

	for (guint i = 0; names[i] != NULL; i++) {
		g_autoptr(GError) error = NULL;
		g_autofree char *path = data_path(names[i]);
		g_autofree char *base = g_path_get_basename(names[i]);
		g_autofree char *label = g_strndup(base, strlen(base) - strlen(".json"));
		g_assert_true(cli_comparison_add_file(cmp, path, label, &error));
		g_assert_no_error(error);
	}
	return g_steal_pointer(&cmp);
}

/* Different tests side by side: refused, naming both, rather than a table of "—". */
static void test_compare_different_tests(void)
{
	static const char *const pairs[][3] = {
		{ "kvm64.json", "disk-ide.json", NULL },
		{ "saved/2026-12-03T23-04-46Z-bench-aes.json",
		  "saved/2026-12-03T23-05-01Z-bench-disk.json", NULL },
	};

	for (guint i = 0; i < G_N_ELEMENTS(pairs); i++) {
		g_autoptr(CliComparison) cmp = add_files(CLI_COMPARE_BY_DOCUMENT, pairs[i]);
		g_autoptr(GError) error = NULL;

		g_assert_false(cli_comparison_compute(cmp, &error));
		g_assert_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT);
		g_test_message("%s", error->message);
		g_assert_nonnull(strstr(error->message, "cannot compare different benchmarks"));
		g_assert_nonnull(strstr(error->message, " ran aes"));
		g_assert_nonnull(strstr(error->message, " ran disk"));
	}
}

static CliComparison *load_saved(const char *a, const char *b)
{
	g_autofree char *pa = g_strdup_printf("saved/%s.json", a);
	g_autofree char *pb = g_strdup_printf("saved/%s.json", b);
	const char *const names[] = { pa, pb, NULL };
	g_autoptr(CliComparison) cmp = add_files(CLI_COMPARE_BY_DOCUMENT, names);
	g_autoptr(GError) error = NULL;

	/* as the command does: the columns named by the ids the user typed */
	for (guint c = 0; c < cmp->columns->len; c++) {
		CliCompareColumn *col = g_ptr_array_index(cmp->columns, c);
		col->given = g_strdup(col->label);
	}
	g_assert_true(cli_comparison_compute(cmp, &error));
	g_assert_no_error(error);
	return g_steal_pointer(&cmp);
}

static guint text_width(const char *text)
{
	g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
	guint widest = 0;

	for (guint i = 0; lines[i] != NULL; i++)
		widest = MAX(widest, g_utf8_strlen(lines[i], -1));
	return widest;
}

/*
 * Two real net runs that differ in streams: the throughput rows line up and are
 * the whole summary; CPU % and retransmits are shown but not counted.
 */
static void test_compare_net_headline(void)
{
	g_autoptr(CliComparison) cmp =
	    load_saved("2026-12-03T23-05-12Z-bench-net", "2026-12-03T23-05-14Z-bench-net");
	g_autoptr(GString) text = cli_comparison_render_text(cmp);
	g_autoptr(JsonNode) json = cli_comparison_to_json(cmp);
	g_autofree char *json_text = gb_json_to_string(json, NULL);
	CliComparePair *pair = g_ptr_array_index(cmp->pairs, 0);
	CliCompareRow *row = find_row(cmp, "tcp-throughput", "direction=host-to-guest");

	g_test_message("%s", text->str);
	g_assert_true(row->cells[0].present);
	g_assert_true(row->cells[1].present);
	g_assert_true(row->headline);
	g_assert_cmpuint(pair->n_rows, ==, 1);
	g_assert_cmpfloat_with_epsilon(pair->geomean, row->ratios[1], 1e-12);
	g_assert_cmpint(pair->best_row, ==, pair->worst_row);
	for (guint r = 0; r < cmp->rows->len; r++) {
		CliCompareRow *other = g_ptr_array_index(cmp->rows, r);
		g_assert_true(other->headline == (g_strcmp0(other->metric, "tcp-throughput") == 0));
	}
	g_assert_nonnull(strstr(text->str, "over 1 headline metric (tcp-throughput)"));
	g_assert_nonnull(strstr(text->str, "net streams: A=1 B=2"));
	/* the port is plumbing, not a difference in what was measured */
	g_assert_null(strstr(text->str, "net port"));
	g_assert_nonnull(strstr(json_text, "\"metric\":\"tcp-throughput\",\"unit\":\"B/s\","
	                                   "\"labels\":{\"direction\":\"host-to-guest\"},"
	                                   "\"lower_is_better\":false,\"headline\":true"));
	g_assert_false(cli_compare_is_headline("net", "tcp-retransmits", "segments"));
	g_assert_false(cli_compare_is_headline("net", "guest-cpu-busy", "%"));
	g_assert_true(cli_compare_is_headline("aes", "chacha20-poly1305", "B/s"));
	g_assert_true(cli_compare_is_headline("mem", "page-fault", "ns"));
	g_assert_false(cli_compare_is_headline("mem", "memory-latency", "ns"));
	g_assert_false(cli_compare_is_headline("disk", "disk-latency", "ns"));
	g_assert_false(cli_compare_is_headline("nosuch", "x", "B/s"));
}

/* hugetlb was unavailable in both mem runs: its rows are neither shown nor counted. */
static void test_compare_empty_rows(void)
{
	g_autoptr(CliComparison) cmp =
	    load_saved("2026-12-03T23-05-05Z-bench-mem", "2026-12-03T23-05-10Z-bench-mem");
	g_autoptr(GString) text = cli_comparison_render_text(cmp);
	g_autoptr(GString) csv = cli_comparison_render_csv(cmp);
	g_autoptr(JsonNode) json = cli_comparison_to_json(cmp);
	g_autofree char *json_text = gb_json_to_string(json, NULL);
	CliComparePair *pair = g_ptr_array_index(cmp->pairs, 0);

	g_test_message("%s", text->str);
	g_assert_cmpuint(cmp->n_empty_rows, ==, 5);
	for (guint r = 0; r < cmp->rows->len; r++) {
		CliCompareRow *row = g_ptr_array_index(cmp->rows, r);
		g_assert_true(row->cells[0].present || row->cells[1].present);
		g_assert_cmpstr(strstr(row->labels_key, "hugetlb"), ==, NULL);
	}
	/* page-fault and 3 bandwidths, for 4k and thp; not latency */
	g_assert_cmpuint(pair->n_rows, ==, 8);
	g_assert_null(strstr(text->str, "hugetlb"));
	g_assert_null(strstr(csv->str, "hugetlb"));
	g_assert_null(strstr(json_text, "hugetlb\"}"));
	g_assert_nonnull(strstr(text->str, "Not shown: 5 rows without a value in any column."));
	g_assert_nonnull(strstr(json_text, "\"empty_rows_left_out\":5"));
	g_assert_nonnull(
	    strstr(text->str, "over 8 headline metrics (page-fault, memory-bandwidth)"));
}

/* runs = 1 on a side: said plainly, before any ratio. */
static void test_compare_single_run_warning(void)
{
	g_autoptr(CliComparison) single =
	    load_saved("2026-12-03T23-04-46Z-bench-aes", "2026-12-03T23-04-48Z-bench-aes");
	g_autoptr(CliComparison) noisy =
	    load_saved("2026-12-03T23-04-53Z-bench-aes", "2026-12-03T23-04-58Z-bench-aes");
	g_autoptr(CliComparison) mixed =
	    load_saved("2026-12-03T23-04-53Z-bench-aes", "2026-12-03T23-04-46Z-bench-aes");
	g_autoptr(GString) text = cli_comparison_render_text(single);
	g_autoptr(GString) noisy_text = cli_comparison_render_text(noisy);
	g_autoptr(GString) mixed_text = cli_comparison_render_text(mixed);
	g_autoptr(JsonNode) json = cli_comparison_to_json(single);
	g_autofree char *json_text = gb_json_to_string(json, NULL);
	CliCompareColumn *col = g_ptr_array_index(single->columns, 0);

	g_test_message("%s", text->str);
	g_assert_cmpuint(col->n_runs, ==, 1);
	g_assert_nonnull(strstr(text->str, "warning: A and B are single runs (runs = 1): there is "
	                                   "no noise estimate, so the t-test cannot tell a"));
	g_assert_nonnull(strstr(json_text, "\"warnings\":[\"2026-12-03T23-04-46Z-bench-aes and "
	                                   "2026-12-03T23-04-48Z-bench-aes are single runs"));
	g_assert_nonnull(strstr(json_text, "\"runs\":1,"));
	g_assert_null(strstr(noisy_text->str, "warning"));
	g_assert_nonnull(strstr(noisy_text->str, "aes, 3 runs"));
	g_assert_nonnull(strstr(mixed_text->str, "warning: B is a single run (runs = 1): no noise "
	                                         "estimate of its own"));
	g_assert_null(strstr(mixed_text->str, "A is a single run"));
}

/* Real run ids as labels: the text fits 100 columns (223 before letters and the fold). */
static void test_compare_width(void)
{
	static const char *const pairs[][2] = {
		{ "2026-12-03T23-04-46Z-bench-aes", "2026-12-03T23-04-48Z-bench-aes" },
		{ "2026-12-03T23-04-53Z-bench-aes", "2026-12-03T23-04-58Z-bench-aes" },
		{ "2026-12-03T23-05-05Z-bench-mem", "2026-12-03T23-05-10Z-bench-mem" },
		{ "2026-12-03T23-05-12Z-bench-net", "2026-12-03T23-05-14Z-bench-net" },
	};

	for (guint i = 0; i < G_N_ELEMENTS(pairs); i++) {
		g_autoptr(CliComparison) cmp = load_saved(pairs[i][0], pairs[i][1]);
		g_autoptr(GString) text = cli_comparison_render_text(cmp);

		g_test_message("%s: %u columns", pairs[i][0], text_width(text->str));
		g_assert_cmpuint(text_width(text->str), <=, 100);
		/* long ids become letters, each explained once at the top */
		g_assert_true(g_str_has_prefix(text->str, "A: "));
		g_assert_nonnull(strstr(text->str, "B/A"));
	}
	/* short labels are kept as they are */
	{
		g_autoptr(CliComparison) cmp =
		    load(CLI_COMPARE_BY_DOCUMENT, "kvm64.json", "host.json", NULL);
		g_autoptr(GString) text = cli_comparison_render_text(cmp);
		g_assert_nonnull(strstr(text->str, "host/kvm64"));
	}
}

/* Guest text never reaches the terminal raw. */
static void test_compare_hostile_text(void)
{
	g_autoptr(CliComparison) cmp =
	    load(CLI_COMPARE_BY_DOCUMENT, "hostile.json", "kvm64.json", NULL);
	g_autoptr(GString) text = cli_comparison_render_text(cmp);

	g_assert_null(strchr(text->str, '\x1b'));
	g_assert_null(strchr(text->str, '\x07'));
	g_assert_null(strstr(text->str, "\u202e"));
}

static void assert_bad(const char *name, const char *expect)
{
	g_autoptr(CliComparison) cmp = cli_comparison_new(CLI_COMPARE_BY_DOCUMENT);
	g_autoptr(GError) error = NULL;
	g_autofree char *path = data_path(name);
	gboolean ok = cli_comparison_add_file(cmp, path, "x", &error);
	gboolean parsed = ok;

	if (ok) {
		/* some documents are only found bad when the rows are built */
		ok = cli_comparison_add_file(cmp, path, "y", &error) &&
		     cli_comparison_compute(cmp, &error);
	}
	g_assert_false(ok);
	g_assert_nonnull(error);
	g_test_message("%s: %s", name, error->message);
	/* the message names the file and what was wrong in it */
	g_assert_nonnull(strstr(error->message, name));
	g_assert_nonnull(strstr(error->message, expect));
	/* a refused document adds nothing */
	if (!parsed)
		g_assert_cmpuint(cmp->columns->len, ==, 0);
}

static void test_compare_bad_files(void)
{
	assert_bad("bad-not-json.json", "JSON parse error");
	assert_bad("bad-truncated.json", "JSON parse error");
	/* where it broke, in words: not json-glib's "<data>:L:C" */
	assert_bad("bad-truncated.json", "bad-truncated.json: JSON parse error, line ");
	assert_bad("bad-not-guestbench.json", "not a guestbench document");
	assert_bad("bad-no-guests.json", "'guests' is missing");
	assert_bad("bad-guests-empty.json", "'guests' is empty");
	assert_bad("bad-guests-type.json", "'guests'");
	assert_bad("bad-command.json", "not a saved 'guestbench bench' result");
	assert_bad("bad-root-array.json", "not a guestbench document");
	assert_bad("bad-value-type.json", "guests[0]: result: metrics[0]: Invalid parameter type "
	                                  "for 'value'");
	assert_bad("bad-no-unit.json", "metrics[0]: Parameter 'unit' is missing");
	assert_bad("bad-label-type.json", "metrics[0].labels: Invalid parameter type for "
	                                  "'block_size'");
	assert_bad("bad-runs-type.json", "runs[1]");
	assert_bad("bad-no-result.json", "guests[0]: Parameter 'result' is missing");
	assert_bad("bad-duplicate.json", "appears twice");
	assert_bad("does-not-exist.json", "cannot read");
}

static void test_compare_bad_data(void)
{
	static const char *const docs[] = {
		"",
		"null",
		"{\"guestbench\": 1, \"command\": \"bench\", \"guests\": []}",
		"{\"guestbench\": \"0\", \"command\": \"bench\", \"guests\": [1]}",
		"{\"guestbench\": \"0\", \"command\": \"bench\", \"guests\": [{\"name\": \"g\"}]}",
		"{\"guestbench\": \"0\", \"command\": \"bench\", \"guests\": [{\"name\": \"g\", "
		"\"status\": \"ok\", \"result\": {\"test\": \"aes\", \"params\": {}, \"metrics\": "
		"[null]}}]}",
		"{\"guestbench\": \"0\", \"command\": \"bench\", \"guests\": [{\"name\": \"g\", "
		"\"status\": \"ok\", \"result\": {\"test\": \"aes\", \"params\": [], \"metrics\": "
		"[]}}]}",
		"{\"guestbench\": \"0\", \"command\": \"bench\", \"guests\": [{\"name\": \"g\", "
		"\"status\": \"ok\", \"result\": {\"test\": \"aes\", \"params\": {}, \"metrics\": "
		"[{\"metric\": \"m\", \"unit\": \"B/s\", \"value\": 1, \"labels\": [] }]}}]}",
		"{\"guestbench\": \"0\", \"command\": \"bench\", \"guests\": [], \"guests\": []}",
		"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
	};

	for (guint i = 0; i < G_N_ELEMENTS(docs); i++) {
		g_autoptr(CliComparison) cmp = cli_comparison_new(CLI_COMPARE_BY_DOCUMENT);
		g_autoptr(GError) error = NULL;
		g_assert_false(cli_comparison_add_data(cmp, "mem.json", "m", docs[i],
		                                       strlen(docs[i]), &error));
		g_assert_nonnull(error);
		g_assert_true(g_str_has_prefix(error->message, "mem.json: "));
		g_assert_cmpuint(cmp->columns->len, ==, 0);
	}
}

/*
 * One guest's unreadable entry beside a good one: the document is read guest
 * by guest, the good guest compared, the bad one a column that says why.
 */
static void test_compare_bad_guest_kept(void)
{
	static const char *const bad[] = {
		"1",
		"{}",
		"{\"name\": 7, \"status\": \"ok\"}",
		"{\"name\": \"b\"}",
		"{\"name\": \"b\", \"status\": \"ok\"}",
		"{\"name\": \"b\", \"status\": \"ok\", \"result\": {\"test\": \"aes\", \"params\": "
		"{}, \"metrics\": [{\"metric\": \"m\", \"unit\": \"B/s\", \"value\": 1}, 5]}}",
		"{\"name\": \"b\", \"status\": \"ok\", \"result\": {\"test\": \"aes\", \"params\": "
		"[], \"metrics\": []}}",
		"{\"name\": \"b\", \"status\": \"ok\", \"result\": {\"test\": 1, \"params\": {}, "
		"\"metrics\": []}}",
		"{\"name\": \"b\", \"status\": \"ok\", \"result\": {\"test\": \"aes\", \"params\": "
		"{}, \"labels\": {\"concurrent\": -1}, \"metrics\": []}}",
		/* the same sample twice: which value would it be? */
		"{\"name\": \"b\", \"status\": \"ok\", \"result\": {\"test\": \"aes\", \"params\": "
		"{}, \"metrics\": [{\"metric\": \"m\", \"unit\": \"B/s\", \"value\": 1, "
		"\"labels\": "
		"{\"block_size\": \"16\"}}, {\"metric\": \"m\", \"unit\": \"B/s\", \"value\": 2, "
		"\"labels\": {\"block_size\": \"16\"}}]}}",
	};
	const char *good = "{\"name\": \"a\", \"status\": \"ok\", \"result\": {\"test\": \"aes\", "
	                   "\"params\": {}, \"metrics\": [{\"metric\": \"m\", \"unit\": \"B/s\", "
	                   "\"value\": 1, \"labels\": {\"block_size\": \"16\"}}]}}";

	for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
		g_autoptr(CliComparison) cmp = cli_comparison_new(CLI_COMPARE_BY_GUEST);
		g_autoptr(GError) error = NULL;
		g_autofree char *doc = g_strdup_printf(
		    "{\"guestbench\": \"0\", \"command\": \"bench\", \"guests\": [%s, %s]}", good,
		    bad[i]);
		CliCompareColumn *col;

		g_test_message("%s", bad[i]);
		g_assert_true(
		    cli_comparison_add_data(cmp, "run.json", "r", doc, strlen(doc), &error));
		g_assert_no_error(error);
		g_assert_cmpuint(cmp->columns->len, ==, 2);
		col = g_ptr_array_index(cmp->columns, 0);
		g_assert_cmpstr(col->test, ==, "aes");
		g_assert_null(col->error);
		col = g_ptr_array_index(cmp->columns, 1);
		g_assert_null(col->test);
		g_assert_nonnull(col->error);
		g_assert_true(
		    g_str_has_prefix(col->error, "unreadable entry: run.json: guests[1]"));
		g_assert_true(cli_comparison_compute(cmp, &error));
		g_assert_no_error(error);
		g_assert_cmpuint(cmp->rows->len, ==, 1);
	}
	/* a bad guest between two whose params differ: the mismatch's values have a
	 * hole where the bad guest's column is, and all of them are freed (ASan) */
	{
		g_autoptr(CliComparison) cmp = cli_comparison_new(CLI_COMPARE_BY_GUEST);
		g_autoptr(GError) error = NULL;
		g_autofree char *doc = g_strdup_printf(
		    "{\"guestbench\": \"0\", \"command\": \"bench\", \"guests\": [%s, %s, "
		    "{\"name\": "
		    "\"c\", \"status\": \"ok\", \"result\": {\"test\": \"aes\", \"params\": "
		    "{\"seconds\": 2}, \"metrics\": [{\"metric\": \"m\", \"unit\": \"B/s\", "
		    "\"value\": 2, \"labels\": {\"block_size\": \"16\"}}]}}]}",
		    good, bad[0]);
		CliCompareMismatch *mm;

		g_assert_true(
		    cli_comparison_add_data(cmp, "run.json", "r", doc, strlen(doc), &error));
		g_assert_true(cli_comparison_compute(cmp, &error));
		g_assert_no_error(error);
		g_assert_cmpuint(cmp->mismatches->len, ==, 1);
		mm = g_ptr_array_index(cmp->mismatches, 0);
		g_assert_cmpuint(mm->n_values, ==, 3);
		g_assert_cmpstr(mm->values[0], ==, "absent");
		g_assert_null(mm->values[1]);
		g_assert_cmpstr(mm->values[2], ==, "2");
	}
}

/* A value of null with runs [1, null]: no number, not an error. */
static void test_compare_incomplete_runs(void)
{
	const char *doc =
	    "{\"guestbench\": \"0\", \"command\": \"bench\", \"guests\": [{\"name\": \"a\", "
	    "\"status\": \"ok\", \"result\": {\"test\": \"mem\", \"params\": {}, \"metrics\": "
	    "[{\"metric\": \"page-fault\", \"unit\": \"ns\", \"value\": null, \"runs\": [1, null], "
	    "\"labels\": {\"pages\": \"hugetlb\"}, \"unavailable\": \"no huge pages\"}]}}, "
	    "{\"name\": \"b\", \"status\": \"ok\", \"result\": {\"test\": \"mem\", \"params\": {}, "
	    "\"metrics\": [{\"metric\": \"page-fault\", \"unit\": \"ns\", \"value\": 0, "
	    "\"labels\": {\"pages\": \"hugetlb\"}}]}}]}";
	g_autoptr(CliComparison) cmp = cli_comparison_new(CLI_COMPARE_BY_GUEST);
	g_autoptr(GError) error = NULL;
	CliCompareRow *row;

	g_assert_true(cli_comparison_add_data(cmp, "m.json", "m", doc, strlen(doc), &error));
	g_assert_no_error(error);
	g_assert_true(cli_comparison_compute(cmp, &error));
	row = g_ptr_array_index(cmp->rows, 0);
	g_assert_false(row->cells[0].present);
	g_assert_cmpstr(row->cells[0].unavailable, ==, "no huge pages");
	g_assert_true(row->cells[1].present);
	g_assert_true(isnan(row->ratios[1]));
}

static void test_compare_resolve(void)
{
	g_autofree char *dir = g_dir_make_tmp("gb-compare-XXXXXX", NULL);
	g_autofree char *file = g_build_filename(dir, "run-1.json", NULL);
	g_autofree char *path = NULL;
	g_autoptr(GError) error = NULL;

	g_assert_true(g_file_set_contents(file, "{}", -1, NULL));
	path = cli_compare_resolve("run-1", dir, &error);
	g_assert_no_error(error);
	g_assert_cmpstr(path, ==, file);
	g_clear_pointer(&path, g_free);
	/* a path stays a path */
	path = cli_compare_resolve("./x.json", dir, &error);
	g_assert_cmpstr(path, ==, "./x.json");
	g_clear_pointer(&path, g_free);
	path = cli_compare_resolve("nosuch", dir, &error);
	g_assert_null(path);
	g_assert_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT);
	g_assert_nonnull(strstr(error->message, "no saved result nosuch.json"));
	g_clear_error(&error);
	path = cli_compare_resolve("", dir, &error);
	g_assert_null(path);
	g_assert_nonnull(error);
	g_unlink(file);
	g_rmdir(dir);
}

static void test_compare_format(void)
{
	struct {
		double v;
		const char *unit;
		const char *expect;
	} cases[] = {
		{ 206542000.0, "B/s", "206.54 MB/s" }, { 950, "ns", "950 ns" },
		{ 182000, "ns", "182.00 µs" },         { 12.25, "%", "12.2 %" },
		{ 7, "segments", "7 segments" },       { NAN, "B/s", "—" },
		{ 1.5e15, "B/s", "1.50 PB/s" },        { 3, "IO/s", "3.00 IO/s" },
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree char *s = cli_compare_format_value(cases[i].v, cases[i].unit);
		g_assert_cmpstr(s, ==, cases[i].expect);
	}
	{
		g_autofree char *r = cli_compare_format_ratio(1.938);
		g_autofree char *c = cli_compare_format_change(0.5);
		g_autofree char *n = cli_compare_format_ratio(NAN);
		g_assert_cmpstr(r, ==, "1.94x");
		g_assert_cmpstr(c, ==, "-50.0%");
		g_assert_cmpstr(n, ==, "—");
	}
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/compare/field-report-aes", test_compare_field_report_aes);
	g_test_add_func("/compare/significance", test_compare_significance);
	g_test_add_func("/compare/welch", test_compare_welch);
	g_test_add_func("/compare/mismatch-and-missing", test_compare_mismatch_and_missing);
	g_test_add_func("/compare/by-guest", test_compare_by_guest);
	g_test_add_func("/compare/different-tests", test_compare_different_tests);
	g_test_add_func("/compare/net-headline", test_compare_net_headline);
	g_test_add_func("/compare/empty-rows", test_compare_empty_rows);
	g_test_add_func("/compare/single-run-warning", test_compare_single_run_warning);
	g_test_add_func("/compare/width", test_compare_width);
	g_test_add_func("/compare/hostile-text", test_compare_hostile_text);
	g_test_add_func("/compare/bad-files", test_compare_bad_files);
	g_test_add_func("/compare/bad-data", test_compare_bad_data);
	g_test_add_func("/compare/bad-guest-kept", test_compare_bad_guest_kept);
	g_test_add_func("/compare/incomplete-runs", test_compare_incomplete_runs);
	g_test_add_func("/compare/resolve", test_compare_resolve);
	g_test_add_func("/compare/format", test_compare_format);
	return g_test_run();
}
